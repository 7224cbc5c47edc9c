/* test_ops.c - one table of op test cases, each run in several modes
 * (the ggml test-backend-ops habit):
 *
 *   value    the CPU kernel against a naive reference written here (plain
 *            loops, double accumulation), plus bitwise re-run determinism and,
 *            where flagged, 1, 2, 3 and 4 threads bitwise equal;
 *   grad     the graph's autodiff against central finite differences of
 *            loss = sum(op(...) * R) (or the op's own [1] output);
 *   error    runtime errors (bad ids/targets) return -1 with a message;
 *   shape    shape rules reject mismatches with -1 and name the op, and
 *            give the expected shape where they accept (comm ops included);
 *   embshard a vocabulary shard's embedding forward and backward against
 *            the whole table's;
 *   dropstat dropout mask statistics and reproducibility.
 *
 * Usage: test_ops [filter] [--nofork]   filter: substring of the op name.
 * Every case runs in a child process so a crashing kernel is reported as a
 * failure and the rest still run.  Exit status 1 if anything failed.
 *
 * Build without the graph (kernels only): -DHG_TEST_NO_GRAPH.
 */
#define _DEFAULT_SOURCE
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernels/hg_kernels.h"
#ifndef HG_TEST_NO_GRAPH
#include "graph/hg_graph.h"
#endif

/* ------------------------------------------------------------------------ */
/* The case table                                                            */

#define NARG_(_1, _2, _3, _4, _5, _6, N, ...) N
#define NARG(...) NARG_(__VA_ARGS__, 6, 5, 4, 3, 2, 1, 0)
/* S(4,5) is the shape [4,5]. */
#define S(...) {.ndim = NARG(__VA_ARGS__), .dim = {__VA_ARGS__}}

enum {
    M_VALUE = 1 << 0,    /* kernel vs reference, + bitwise re-run */
    M_GRAD = 1 << 1,     /* autodiff vs finite differences */
    M_THREADS = 1 << 2,  /* 1, 3, 4 vs 2 threads bitwise (with M_VALUE) */
    M_ERROR = 1 << 3,    /* kernel must return -1, message has .expect */
    M_SHAPE_ERR = 1 << 4,/* shape rule must return -1, message has .expect */
    M_DROPSTAT = 1 << 5, /* dropout statistics */
    M_DROPROWS = 1 << 6, /* masks keyed by sample id: rows [a,b) as in the whole batch */
    M_SHAPE_OK = 1 << 7, /* shape rule must return 0 and .want */
    M_EMBSHARD = 1 << 8, /* EMBEDDING: shards of the table (attr emb) against the whole */
};
#define VG (M_VALUE | M_GRAD)
#define VT (M_VALUE | M_THREADS)

enum gen {
    G_UNIF,     /* uniform [-1,1] */
    G_AWAY,     /* |x| in [0.1,1]: no relu kink within finite-difference eps */
    G_DISTINCT, /* a permutation of a 0.05-spaced grid: no near-ties */
    G_TIES,     /* values in {-1,-0.5,0,0.5,1}: many exact ties */
    G_WIDE,     /* uniform [-3,3] */
    G_POS,      /* uniform [0,1] (Adam's v) */
    G_ONES,     /* all 1 */
    G_TINY,     /* uniform [-0.005,0.005]: variance near layernorm's eps */
    G_BIG,      /* uniform [80,100]: exp overflows f32 without max-subtraction */
};

struct op_case {
    enum hg_op op;
    unsigned modes;
    const char *note;                      /* printed after the shapes */
    int n_in;
    struct hg_shape in[HG_MAX_INPUTS];
    enum hg_dtype dt[HG_MAX_INPUTS];       /* default HG_F32 (0) */
    int imax[HG_MAX_INPUTS];               /* i32 inputs: values in [0,imax) */
    enum gen gen[HG_MAX_INPUTS];           /* f32 inputs */
    union hg_attr attr;
    uint64_t step;                         /* 0: 1 */
    int nsteps;                            /* updates: steps step.. (0: 1), same grad */
    float lr, grad_scale;                  /* grad_scale 0: 1 */
    int ignore_every;                      /* targets: every k-th = ignore_index */
    struct { int in; int64_t at, val; } bad; /* M_ERROR: poke in[in][at] = val */
    const char *expect;                    /* M_ERROR/M_SHAPE_ERR message part */
    struct hg_shape want;                  /* M_SHAPE_OK: the output's shape */
};

#define MM(ta, tb, al) {.mm = {.trans_a = ta, .trans_b = tb, .alpha = al}}
#define CONV(k1, k2, s1, s2, p1, p2) \
    {.conv = {.kh = k1, .kw = k2, .stride_h = s1, .stride_w = s2, .pad_h = p1, .pad_w = p2}}
#define POOL(k_, s_, p_) {.pool = {.kh = k_, .kw = k_, .stride = s_, .pad = p_}}
#define RED(ax, al) {.reduce = {.axis = ax, .alpha = al}}
#define CE(ig, sm) {.ce = {.ignore_index = ig, .smoothing = sm}}
#define I32_1 {[1] = HG_I32}
#define I32_3 {[3] = HG_I32}
#define I32_4 {[4] = HG_I32}
/* ATTENTION(_BWD): scale, causal, dropout p, seed, which */
#define ATT(sc, ca, p_, sd, wh) \
    {.attn = {.scale = sc, .fill = -1e30f, .p = p_, .causal = ca, .which = wh, .seed = sd}}
/* self-attention (Tq == Tk): the backward is one which-2 node */
#define ATT_SELF(sc, ca, p_, sd) \
    {.attn = {.scale = sc, .fill = -1e30f, .p = p_, .causal = ca, .self = 1, .seed = sd}}

static const struct op_case cases[] = {
    /* ---- matmul ---- */
    {.op = HG_OP_MATMUL, .modes = VG, .n_in = 2, .in = {S(3, 5), S(5, 7)}},
    {.op = HG_OP_MATMUL, .modes = M_VALUE, .n_in = 2, .in = {S(1, 1), S(1, 1)}},
    {.op = HG_OP_MATMUL, .modes = M_VALUE, .n_in = 2, .in = {S(17, 33), S(33, 9)}},
    {.op = HG_OP_MATMUL, .modes = M_VALUE, .n_in = 2, .in = {S(64, 200), S(200, 96)}},
    {.op = HG_OP_MATMUL, .modes = VG, .note = "trans_a", .n_in = 2,
     .in = {S(5, 3), S(5, 7)}, .attr = MM(1, 0, 0)},
    {.op = HG_OP_MATMUL, .modes = VG, .note = "trans_b", .n_in = 2,
     .in = {S(3, 5), S(7, 5)}, .attr = MM(0, 1, 0)},
    {.op = HG_OP_MATMUL, .modes = VG, .note = "trans_a trans_b alpha 0.5", .n_in = 2,
     .in = {S(5, 3), S(7, 5)}, .attr = MM(1, 1, 0.5f)},
    {.op = HG_OP_MATMUL, .modes = VG, .note = "batched", .n_in = 2,
     .in = {S(2, 3, 5), S(2, 5, 4)}},
    {.op = HG_OP_MATMUL, .modes = VG, .note = "batched trans_a", .n_in = 2,
     .in = {S(2, 5, 3), S(2, 5, 4)}, .attr = MM(1, 0, 0)},
    {.op = HG_OP_MATMUL, .modes = M_VALUE, .note = "batched 4-D", .n_in = 2,
     .in = {S(2, 3, 4, 5), S(2, 3, 5, 6)}},
    {.op = HG_OP_MATMUL, .modes = VG, .note = "batched 4-D trans_b (q k^T)", .n_in = 2,
     .in = {S(2, 2, 3, 5), S(2, 2, 6, 5)}, .attr = MM(0, 1, 0.25f)},
    {.op = HG_OP_MATMUL, .modes = M_VALUE, .note = "batched 4-D trans_a trans_b", .n_in = 2,
     .in = {S(2, 3, 5, 4), S(2, 3, 6, 5)}, .attr = MM(1, 1, 0)},
    {.op = HG_OP_MATMUL, .modes = VG, .note = "shared 2-D b", .n_in = 2,
     .in = {S(2, 3, 5), S(5, 4)}},
    {.op = HG_OP_MATMUL, .modes = VG, .note = "shared 2-D b, trans_a", .n_in = 2,
     .in = {S(2, 5, 3), S(5, 4)}, .attr = MM(1, 0, 0)},
    {.op = HG_OP_MATMUL, .modes = VG, .note = "shared 2-D b, trans_b", .n_in = 2,
     .in = {S(2, 3, 5), S(4, 5)}, .attr = MM(0, 1, 0)},
    {.op = HG_OP_MATMUL, .modes = M_VALUE, .note = "shared 2-D b, 4-D a", .n_in = 2,
     .in = {S(2, 2, 3, 5), S(5, 7)}},
    {.op = HG_OP_MATMUL, .modes = M_SHAPE_ERR, .note = "K mismatch", .n_in = 2,
     .in = {S(3, 5), S(4, 7)}, .expect = "matmul"},
    {.op = HG_OP_MATMUL, .modes = M_SHAPE_ERR, .note = "batch mismatch", .n_in = 2,
     .in = {S(2, 3, 5), S(3, 5, 4)}, .expect = "matmul"},
    /* hg_sgemm's thread partitions (kernels/blas.c): rows in 48-row units,
     * odd row counts, column pieces (few rows, many columns), K beyond
     * OpenBLAS's K block, every transpose; bert's and conv's shapes */
    {.op = HG_OP_MATMUL, .modes = VT, .note = "rows", .n_in = 2,
     .in = {S(640, 128), S(128, 128)}},
    {.op = HG_OP_MATMUL, .modes = VT, .note = "rows, trans_b", .n_in = 2,
     .in = {S(333, 77), S(555, 77)}, .attr = MM(0, 1, 0)},
    {.op = HG_OP_MATMUL, .modes = VT, .note = "K 700, trans_a trans_b", .n_in = 2,
     .in = {S(700, 200), S(130, 700)}, .attr = MM(1, 1, 0)},
    {.op = HG_OP_MATMUL, .modes = VT, .note = "K 1000 (weight gradient), trans_a", .n_in = 2,
     .in = {S(1000, 128), S(1000, 512)}, .attr = MM(1, 0, 0)},
    {.op = HG_OP_MATMUL, .modes = VT, .note = "column pieces", .n_in = 2,
     .in = {S(64, 288), S(288, 4100)}},
    {.op = HG_OP_MATMUL, .modes = VT, .note = "column pieces, trans_b", .n_in = 2,
     .in = {S(20, 300), S(1500, 300)}, .attr = MM(0, 1, 0)},
    {.op = HG_OP_MATMUL, .modes = VT, .note = "150 rows: a 6-row last cut at 4 threads",
     .n_in = 2, .in = {S(150, 32), S(150, 32)}, .attr = MM(0, 1, 0)},
    {.op = HG_OP_MATMUL, .modes = VT, .note = "150 x 150 x 150", .n_in = 2,
     .in = {S(150, 150), S(150, 150)}},
    {.op = HG_OP_MATMUL, .modes = VT, .note = "batched 4-D trans_b (q k^T)", .n_in = 2,
     .in = {S(4, 4, 64, 32), S(4, 4, 64, 32)}, .attr = MM(0, 1, 0.25f)},
    {.op = HG_OP_MATMUL_REDUCE, .modes = VT, .n_in = 2, .in = {S(6, 5), S(6, 4)}},
    {.op = HG_OP_MATMUL_REDUCE, .modes = VT, .note = "K 1200", .n_in = 2,
     .in = {S(1200, 96), S(1200, 130)}},
    {.op = HG_OP_MATMUL_REDUCE, .modes = M_VALUE, .n_in = 2, .in = {S(2, 3, 5), S(2, 3, 7)}},
    {.op = HG_OP_MATMUL_REDUCE, .modes = M_VALUE, .n_in = 2, .in = {S(300, 33), S(300, 17)}},

    /* ---- convolution, pooling ---- */
    {.op = HG_OP_CONV2D, .modes = VG, .n_in = 2, .in = {S(2, 3, 7, 7), S(4, 3, 3, 3)},
     .attr = CONV(3, 3, 1, 1, 0, 0)},
    {.op = HG_OP_CONV2D, .modes = VG, .note = "stride 2 pad 1", .n_in = 2,
     .in = {S(2, 3, 9, 8), S(5, 3, 3, 3)}, .attr = CONV(3, 3, 2, 2, 1, 1)},
    {.op = HG_OP_CONV2D, .modes = VG, .note = "3x2 stride (2,1) pad (1,0)", .n_in = 2,
     .in = {S(1, 2, 6, 7), S(3, 2, 3, 2)}, .attr = CONV(3, 2, 2, 1, 1, 0)},
    {.op = HG_OP_CONV2D, .modes = M_VALUE, .note = "1x1", .n_in = 2,
     .in = {S(2, 4, 5, 5), S(3, 4, 1, 1)}, .attr = CONV(1, 1, 1, 1, 0, 0)},
    {.op = HG_OP_CONV2D, .modes = VT, .note = "mnist conv2", .n_in = 2,
     .in = {S(3, 8, 26, 26), S(16, 8, 3, 3)}, .attr = CONV(3, 3, 1, 1, 0, 0)},
    {.op = HG_OP_CONV2D, .modes = VT, .note = "several workspace chunks", .n_in = 2,
     .in = {S(5, 16, 64, 64), S(8, 16, 3, 3)}, .attr = CONV(3, 3, 1, 1, 1, 1)},
    {.op = HG_OP_CONV2D_BWD_DATA, .modes = VT, .note = "several workspace chunks",
     .n_in = 3, .in = {S(5, 8, 64, 64), S(8, 16, 3, 3), S(5, 16, 64, 64)},
     .attr = CONV(3, 3, 1, 1, 1, 1)},
    {.op = HG_OP_CONV2D_BWD_FILTER, .modes = VT, .note = "several workspace chunks",
     .n_in = 2, .in = {S(5, 16, 64, 64), S(5, 8, 64, 64)}, .attr = CONV(3, 3, 1, 1, 1, 1)},
    {.op = HG_OP_CONV2D_BWD_DATA, .modes = M_VALUE, .n_in = 3,
     .in = {S(2, 4, 5, 5), S(4, 3, 3, 3), S(2, 3, 7, 7)}, .attr = CONV(3, 3, 1, 1, 0, 0)},
    {.op = HG_OP_CONV2D_BWD_DATA, .modes = M_VALUE, .note = "stride 2 pad 1", .n_in = 3,
     .in = {S(2, 5, 5, 4), S(5, 3, 3, 3), S(2, 3, 9, 8)}, .attr = CONV(3, 3, 2, 2, 1, 1)},
    {.op = HG_OP_CONV2D_BWD_DATA, .modes = M_VALUE, .note = "3x2 stride (2,1) pad (1,0)",
     .n_in = 3, .in = {S(1, 3, 3, 6), S(3, 2, 3, 2), S(1, 2, 6, 7)},
     .attr = CONV(3, 2, 2, 1, 1, 0)},
    {.op = HG_OP_CONV2D_BWD_FILTER, .modes = M_VALUE, .n_in = 2,
     .in = {S(2, 3, 7, 7), S(2, 4, 5, 5)}, .attr = CONV(3, 3, 1, 1, 0, 0)},
    {.op = HG_OP_CONV2D_BWD_FILTER, .modes = M_VALUE, .note = "stride 2 pad 1", .n_in = 2,
     .in = {S(2, 3, 9, 8), S(2, 5, 5, 4)}, .attr = CONV(3, 3, 2, 2, 1, 1)},
    {.op = HG_OP_CONV2D_BWD_FILTER, .modes = M_VALUE, .note = "3x2 stride (2,1) pad (1,0)",
     .n_in = 2, .in = {S(1, 2, 6, 7), S(1, 3, 3, 6)}, .attr = CONV(3, 2, 2, 1, 1, 0)},
    {.op = HG_OP_MAXPOOL2D, .modes = VG, .n_in = 1, .in = {S(2, 3, 8, 8)},
     .gen = {G_DISTINCT}, .attr = POOL(2, 2, 0)},
    {.op = HG_OP_MAXPOOL2D, .modes = VG, .note = "k3 s2 pad 1", .n_in = 1,
     .in = {S(1, 2, 7, 7)}, .gen = {G_DISTINCT}, .attr = POOL(3, 2, 1)},
    {.op = HG_OP_MAXPOOL2D, .modes = VG, .note = "k2 s1 pad 1 overlapping", .n_in = 1,
     .in = {S(2, 1, 5, 6)}, .gen = {G_DISTINCT}, .attr = POOL(2, 1, 1)},
    {.op = HG_OP_MAXPOOL2D, .modes = M_VALUE, .note = "odd 7x5 k3 s2 pad 1, all negative",
     .n_in = 1, .in = {S(1, 2, 7, 5)}, .gen = {G_DISTINCT}, .attr = POOL(3, 2, 1)},
    {.op = HG_OP_MAXPOOL2D_BWD, .modes = M_VALUE, .note = "k3 s2 pad 1 ties", .n_in = 2,
     .in = {S(2, 3, 7, 7), S(2, 3, 4, 4)}, .gen = {G_TIES}, .attr = POOL(3, 2, 1)},
    {.op = HG_OP_MAXPOOL2D_BWD, .modes = M_VALUE, .note = "k2 s2 ties", .n_in = 2,
     .in = {S(2, 2, 6, 6), S(2, 2, 3, 3)}, .gen = {G_TIES}, .attr = POOL(2, 2, 0)},

    /* ---- broadcasting arithmetic ---- */
    {.op = HG_OP_ADD, .modes = VG, .n_in = 2, .in = {S(4, 5), S(5)}},
    {.op = HG_OP_ADD, .modes = VG, .n_in = 2, .in = {S(2, 3, 4, 5), S(3, 1, 1)}},
    {.op = HG_OP_ADD, .modes = VG, .n_in = 2, .in = {S(1, 5), S(4, 1)}},
    {.op = HG_OP_ADD, .modes = VG, .n_in = 2, .in = {S(5), S(4, 5)}},
    {.op = HG_OP_ADD, .modes = M_VALUE, .n_in = 2, .in = {S(7, 3), S(7, 3)}},
    {.op = HG_OP_ADD, .modes = M_VALUE, .n_in = 2, .in = {S(1), S(3, 4)}},
    {.op = HG_OP_ADD, .modes = M_VALUE, .n_in = 2, .in = {S(2, 1, 4, 1), S(3, 1, 6)}},
    {.op = HG_OP_ADD, .modes = VT, .n_in = 2, .in = {S(256, 300), S(300)}},
    {.op = HG_OP_ADD, .modes = VT, .n_in = 2, .in = {S(64, 1, 600), S(64, 1)}},
    {.op = HG_OP_ADD, .modes = M_SHAPE_ERR, .n_in = 2, .in = {S(4, 5), S(4, 3)},
     .expect = "[4,5] and b [4,3]"},
    {.op = HG_OP_SUB, .modes = VG, .n_in = 2, .in = {S(4, 5), S(5)}},
    {.op = HG_OP_SUB, .modes = VG, .n_in = 2, .in = {S(2, 3, 4, 5), S(3, 1, 1)}},
    {.op = HG_OP_SUB, .modes = VG, .n_in = 2, .in = {S(1, 5), S(4, 1)}},
    {.op = HG_OP_MUL, .modes = VG, .n_in = 2, .in = {S(4, 5), S(5)}},
    {.op = HG_OP_MUL, .modes = VG, .n_in = 2, .in = {S(2, 3, 4, 5), S(3, 1, 1)}},
    {.op = HG_OP_MUL, .modes = VG, .n_in = 2, .in = {S(1, 5), S(4, 1)}},
    {.op = HG_OP_MUL, .modes = M_VALUE, .n_in = 2, .in = {S(3, 1), S(3, 7)}},
    {.op = HG_OP_MUL, .modes = M_SHAPE_ERR, .n_in = 2, .in = {S(2, 3), S(3, 2)},
     .expect = "[2,3] and b [3,2]"},
    {.op = HG_OP_SCALE, .modes = VG, .n_in = 1, .in = {S(3, 7)},
     .attr = {.scale = {.alpha = -1.5f}}},
    {.op = HG_OP_SUM_TO, .modes = VT, .n_in = 2, .in = {S(4, 5), S(5)}},
    {.op = HG_OP_SUM_TO, .modes = VT, .n_in = 2, .in = {S(2, 3, 4, 5), S(3, 1, 1)}},
    {.op = HG_OP_SUM_TO, .modes = VT, .n_in = 2, .in = {S(4, 5), S(4, 1)}},
    {.op = HG_OP_SUM_TO, .modes = VT, .n_in = 2, .in = {S(4, 5), S(1)}},
    {.op = HG_OP_SUM_TO, .modes = VT, .n_in = 2, .in = {S(4, 5), S(4, 5)}},
    {.op = HG_OP_SUM_TO, .modes = VT, .n_in = 2, .in = {S(512, 300), S(300)}},
    {.op = HG_OP_SUM_TO, .modes = VT, .n_in = 2, .in = {S(64, 4, 300), S(64, 1, 1)}},

    /* ---- activations ---- */
    {.op = HG_OP_RELU, .modes = VG, .n_in = 1, .in = {S(5, 7)}, .gen = {G_AWAY}},
    {.op = HG_OP_RELU, .modes = M_VALUE, .n_in = 1, .in = {S(1001)}},
    {.op = HG_OP_RELU_BWD, .modes = M_VALUE, .n_in = 2, .in = {S(5, 7), S(5, 7)},
     .gen = {G_AWAY}},
    {.op = HG_OP_GELU, .modes = VG, .n_in = 1, .in = {S(4, 9)}, .gen = {G_WIDE}},
    {.op = HG_OP_GELU, .modes = M_VALUE, .n_in = 1, .in = {S(1001)}, .gen = {G_WIDE}},
    {.op = HG_OP_GELU, .modes = VT, .n_in = 1, .in = {S(300, 200)}, .gen = {G_WIDE}},
    {.op = HG_OP_GELU_BWD, .modes = M_VALUE, .n_in = 2, .in = {S(4, 9), S(4, 9)},
     .gen = {G_WIDE}},
    {.op = HG_OP_GELU_BWD, .modes = VT, .n_in = 2, .in = {S(300, 200), S(300, 200)},
     .gen = {G_WIDE}},
    {.op = HG_OP_TANH, .modes = VG, .n_in = 1, .in = {S(3, 11)}, .gen = {G_WIDE}},
    {.op = HG_OP_TANH_BWD, .modes = M_VALUE, .n_in = 2, .in = {S(3, 11), S(3, 11)}},
    {.op = HG_OP_SOFTMAX, .modes = VG, .n_in = 1, .in = {S(3, 7)}, .gen = {G_WIDE}},
    {.op = HG_OP_SOFTMAX, .modes = VG, .n_in = 1, .in = {S(2, 3, 5)}, .gen = {G_WIDE}},
    {.op = HG_OP_SOFTMAX, .modes = M_VALUE, .note = "rows of 1", .n_in = 1, .in = {S(4, 1)}},
    {.op = HG_OP_SOFTMAX, .modes = M_VALUE, .note = "logits 80..100", .n_in = 1, .in = {S(3, 9)},
     .gen = {G_BIG}},
    {.op = HG_OP_SOFTMAX, .modes = VT, .n_in = 1, .in = {S(64, 1000)}, .gen = {G_WIDE}},
    {.op = HG_OP_SOFTMAX_BWD, .modes = M_VALUE, .n_in = 2, .in = {S(3, 7), S(3, 7)},
     .gen = {G_POS}},
    {.op = HG_OP_LOG_SOFTMAX, .modes = VG, .n_in = 1, .in = {S(3, 7)}, .gen = {G_WIDE}},
    {.op = HG_OP_LOG_SOFTMAX, .modes = VG, .n_in = 1, .in = {S(2, 2, 6)}, .gen = {G_WIDE}},
    {.op = HG_OP_LOG_SOFTMAX, .modes = M_VALUE, .note = "logits 80..100", .n_in = 1,
     .in = {S(3, 9)}, .gen = {G_BIG}},
    {.op = HG_OP_LOG_SOFTMAX, .modes = VT, .n_in = 1, .in = {S(64, 1000)}, .gen = {G_WIDE}},
    {.op = HG_OP_LOG_SOFTMAX_BWD, .modes = M_VALUE, .n_in = 2, .in = {S(3, 7), S(3, 7)}},

    /* ---- normalisation, dropout ---- */
    {.op = HG_OP_LAYERNORM, .modes = VG, .n_in = 3, .in = {S(4, 8), S(8), S(8)},
     .attr = {.ln = {.eps = 1e-5f}}},
    {.op = HG_OP_LAYERNORM, .modes = VG, .n_in = 3, .in = {S(2, 3, 17), S(17), S(17)},
     .attr = {.ln = {.eps = 1e-5f}}},
    {.op = HG_OP_LAYERNORM, .modes = M_VALUE, .note = "variance ~ eps", .n_in = 3,
     .in = {S(4, 8), S(8), S(8)}, .gen = {G_TINY}, .attr = {.ln = {.eps = 1e-5f}}},
    {.op = HG_OP_LAYERNORM_BWD_X, .modes = M_VALUE, .note = "variance ~ eps", .n_in = 3,
     .in = {S(4, 8), S(8), S(4, 8)}, .gen = {G_TINY}, .attr = {.ln = {.eps = 1e-5f}}},
    {.op = HG_OP_LAYERNORM_BWD_G, .modes = M_VALUE, .note = "variance ~ eps", .n_in = 2,
     .in = {S(4, 8), S(4, 8)}, .gen = {G_TINY}, .attr = {.ln = {.eps = 1e-5f}}},
    {.op = HG_OP_LAYERNORM, .modes = VT, .n_in = 3, .in = {S(512, 128), S(128), S(128)},
     .attr = {.ln = {.eps = 1e-5f}}},
    {.op = HG_OP_LAYERNORM_BWD_X, .modes = VT, .n_in = 3, .in = {S(5, 9), S(9), S(5, 9)},
     .attr = {.ln = {.eps = 1e-5f}}},
    {.op = HG_OP_LAYERNORM_BWD_X, .modes = M_VALUE, .n_in = 3,
     .in = {S(2, 3, 32), S(32), S(2, 3, 32)}, .attr = {.ln = {.eps = 1e-5f}}},
    {.op = HG_OP_LAYERNORM_BWD_X, .modes = VT, .n_in = 3,
     .in = {S(512, 128), S(128), S(512, 128)}, .attr = {.ln = {.eps = 1e-5f}}},
    {.op = HG_OP_LAYERNORM_BWD_G, .modes = VT, .n_in = 2, .in = {S(6, 16), S(6, 16)},
     .attr = {.ln = {.eps = 1e-5f}}},
    {.op = HG_OP_LAYERNORM_BWD_G, .modes = VT, .n_in = 2, .in = {S(512, 128), S(512, 128)},
     .attr = {.ln = {.eps = 1e-5f}}},
    {.op = HG_OP_DROPOUT, .modes = VG, .note = "p 0.25", .n_in = 1, .in = {S(4, 6)},
     .attr = {.dropout = {.p = 0.25f, .seed = 7}}, .step = 3},
    {.op = HG_OP_DROPOUT, .modes = VT, .note = "p 0.5", .n_in = 1, .in = {S(1000, 33)},
     .attr = {.dropout = {.p = 0.5f, .seed = 11}}, .step = 1},
    {.op = HG_OP_DROPOUT, .modes = M_VALUE, .note = "p 0 identity", .n_in = 1,
     .in = {S(3, 5)}, .attr = {.dropout = {.p = 0.0f, .seed = 7}}},
    {.op = HG_OP_DROPOUT, .modes = M_DROPROWS, .note = "p 0.3 rows", .n_in = 1,
     .in = {S(5, 7, 9)}, .attr = {.dropout = {.p = 0.3f, .seed = 21}}, .step = 4},
    {.op = HG_OP_DROPOUT, .modes = M_DROPROWS, .note = "p 0.5 rows, 4-D", .n_in = 1,
     .in = {S(4, 3, 5, 6)}, .attr = {.dropout = {.p = 0.5f, .seed = 22}}, .step = 2},
    {.op = HG_OP_DROPOUT, .modes = M_DROPROWS, .note = "p 0.2 rows, 2-D", .n_in = 1,
     .in = {S(6, 40)}, .attr = {.dropout = {.p = 0.2f, .seed = 23}}, .step = 9},
    {.op = HG_OP_DROPOUT, .modes = M_DROPSTAT, .note = "p 0.3 statistics", .n_in = 1,
     .in = {S(100000)}, .gen = {G_ONES}, .attr = {.dropout = {.p = 0.3f, .seed = 1234}}},

    /* ---- embeddings ---- */
    {.op = HG_OP_EMBEDDING, .modes = VG, .n_in = 2, .in = {S(10, 4), S(3, 5)},
     .dt = I32_1, .imax = {[1] = 10}},
    {.op = HG_OP_EMBEDDING, .modes = M_VALUE, .n_in = 2, .in = {S(7, 3), S(9)},
     .dt = I32_1, .imax = {[1] = 7}},
    {.op = HG_OP_EMBEDDING, .modes = VT, .n_in = 2, .in = {S(64, 32), S(8, 512)},
     .dt = I32_1, .imax = {[1] = 64}},
    {.op = HG_OP_EMBEDDING, .modes = M_ERROR, .note = "id >= V", .n_in = 2,
     .in = {S(10, 4), S(3, 5)}, .dt = I32_1, .imax = {[1] = 10},
     .bad = {1, 7, 1234}, .expect = "1234"},
    {.op = HG_OP_EMBEDDING, .modes = M_ERROR, .note = "id < 0", .n_in = 2,
     .in = {S(10, 4), S(3, 5)}, .dt = I32_1, .imax = {[1] = 10},
     .bad = {1, 3, -3}, .expect = "-3"},
    {.op = HG_OP_EMBEDDING_BWD, .modes = VT, .n_in = 3, .in = {S(4, 6), S(4, 6, 5), S(11, 5)},
     .dt = {HG_I32}, .imax = {11}},
    {.op = HG_OP_EMBEDDING_BWD, .modes = VT, .n_in = 3, .in = {S(4096), S(4096, 32), S(64, 32)},
     .dt = {HG_I32}, .imax = {64}},
    {.op = HG_OP_EMBEDDING_BWD, .modes = M_ERROR, .note = "id >= V", .n_in = 3,
     .in = {S(4, 6), S(4, 6, 5), S(11, 5)}, .dt = {HG_I32}, .imax = {11},
     .bad = {0, 5, 4321}, .expect = "4321"},
    /* a vocabulary shard (tensor parallelism): rows [row0, row0 + V) of
     * a vocabulary of `vocab`; ids checked against the whole vocabulary */
    {.op = HG_OP_EMBEDDING, .modes = M_EMBSHARD, .note = "vocab shards", .n_in = 2,
     .in = {S(13, 4), S(3, 7)}, .dt = I32_1, .imax = {[1] = 13}},
    {.op = HG_OP_EMBEDDING, .modes = M_EMBSHARD, .note = "vocab shards, D 70", .n_in = 2,
     .in = {S(40, 70), S(2, 3, 50)}, .dt = I32_1, .imax = {[1] = 40}},
    {.op = HG_OP_EMBEDDING, .modes = M_ERROR, .note = "shard, id = vocab", .n_in = 2,
     .in = {S(4, 3), S(3, 5)}, .dt = I32_1, .imax = {[1] = 10},
     .attr = {.emb = {.row0 = 3, .vocab = 10}}, .bad = {1, 7, 10},
     .expect = "id 10 at position 7 outside [0,10)"},
    {.op = HG_OP_EMBEDDING, .modes = M_ERROR, .note = "last shard, id = vocab", .n_in = 2,
     .in = {S(4, 3), S(3, 5)}, .dt = I32_1, .imax = {[1] = 10},
     .attr = {.emb = {.row0 = 6, .vocab = 10}}, .bad = {1, 2, 10},
     .expect = "id 10 at position 2 outside [0,10)"},
    {.op = HG_OP_EMBEDDING, .modes = M_ERROR, .note = "shard, id < 0", .n_in = 2,
     .in = {S(4, 3), S(3, 5)}, .dt = I32_1, .imax = {[1] = 10},
     .attr = {.emb = {.row0 = 0, .vocab = 10}}, .bad = {1, 0, -1}, .expect = "id -1"},
    {.op = HG_OP_EMBEDDING_BWD, .modes = M_ERROR, .note = "shard, id = vocab", .n_in = 3,
     .in = {S(4, 6), S(4, 6, 5), S(4, 5)}, .dt = {HG_I32}, .imax = {11},
     .attr = {.emb = {.row0 = 7, .vocab = 11}}, .bad = {0, 5, 11},
     .expect = "id 11 at position 5 outside [0,11)"},

    /* ---- layout ---- */
    {.op = HG_OP_RESHAPE, .modes = VG, .note = "(0,-1)", .n_in = 1, .in = {S(2, 3, 4)},
     .attr = {.reshape = {.ndim = 2, .dim = {0, -1}}}},
    {.op = HG_OP_RESHAPE, .modes = M_VALUE, .note = "(2,-1,4)", .n_in = 1, .in = {S(6, 4)},
     .attr = {.reshape = {.ndim = 3, .dim = {2, -1, 4}}}},
    {.op = HG_OP_RESHAPE, .modes = M_VALUE, .note = "(3,8)", .n_in = 1, .in = {S(2, 3, 4)},
     .attr = {.reshape = {.ndim = 2, .dim = {3, 8}}}},
    {.op = HG_OP_RESHAPE_LIKE, .modes = M_VALUE, .n_in = 2, .in = {S(2, 3, 4), S(6, 4)}},
    {.op = HG_OP_PERMUTE, .modes = VG, .note = "(0,2,1,3)", .n_in = 1, .in = {S(2, 3, 4, 5)},
     .attr = {.permute = {.ndim = 4, .perm = {0, 2, 1, 3}}}},
    {.op = HG_OP_PERMUTE, .modes = VG, .note = "(3,1,0,2)", .n_in = 1, .in = {S(2, 3, 4, 5)},
     .attr = {.permute = {.ndim = 4, .perm = {3, 1, 0, 2}}}},
    {.op = HG_OP_PERMUTE, .modes = M_VALUE, .note = "(2,0,1)", .n_in = 1, .in = {S(3, 5, 7)},
     .attr = {.permute = {.ndim = 3, .perm = {2, 0, 1}}}},
    {.op = HG_OP_PERMUTE, .modes = M_VALUE, .note = "(1,0)", .n_in = 1, .in = {S(33, 17)},
     .attr = {.permute = {.ndim = 2, .perm = {1, 0}}}},
    {.op = HG_OP_PERMUTE, .modes = VT, .note = "(0,2,1,3)", .n_in = 1, .in = {S(8, 64, 4, 32)},
     .attr = {.permute = {.ndim = 4, .perm = {0, 2, 1, 3}}}},
    {.op = HG_OP_CONCAT, .modes = VG, .note = "axis 1", .n_in = 3,
     .in = {S(2, 3, 4), S(2, 1, 4), S(2, 5, 4)}, .attr = {.concat = {.axis = 1}}},
    {.op = HG_OP_CONCAT, .modes = M_VALUE, .note = "axis 0", .n_in = 2,
     .in = {S(2, 3), S(4, 3)}, .attr = {.concat = {.axis = 0}}},
    {.op = HG_OP_CONCAT, .modes = VT, .note = "axis 1", .n_in = 3,
     .in = {S(64, 100, 4), S(64, 1, 4), S(64, 50, 4)}, .attr = {.concat = {.axis = 1}}},
    {.op = HG_OP_CONCAT, .modes = VG, .note = "axis 2", .n_in = 3,
     .in = {S(2, 3, 1), S(2, 3, 2), S(2, 3, 3)}, .attr = {.concat = {.axis = 2}}},
    {.op = HG_OP_CONCAT, .modes = M_SHAPE_ERR, .note = "axis 1 mismatch", .n_in = 2,
     .in = {S(2, 3, 4), S(3, 3, 4)}, .attr = {.concat = {.axis = 1}}, .expect = "concat"},
    {.op = HG_OP_SLICE, .modes = VG, .note = "axis 1 [2:5]", .n_in = 1, .in = {S(4, 6, 5)},
     .attr = {.slice = {.axis = 1, .start = 2, .len = 3}}},
    {.op = HG_OP_SLICE, .modes = VG, .note = "axis 0 [1:3]", .n_in = 1, .in = {S(4, 3)},
     .attr = {.slice = {.axis = 0, .start = 1, .len = 2}}},
    {.op = HG_OP_SLICE, .modes = M_VALUE, .note = "axis 2 [4:5]", .n_in = 1, .in = {S(2, 3, 5)},
     .attr = {.slice = {.axis = 2, .start = 4, .len = 1}}},
    {.op = HG_OP_SLICE, .modes = VT, .note = "axis 1 [100:300]", .n_in = 1, .in = {S(64, 400, 3)},
     .attr = {.slice = {.axis = 1, .start = 100, .len = 200}}},
    {.op = HG_OP_SLICE_BWD, .modes = M_VALUE, .note = "axis 1 [2:5]", .n_in = 2,
     .in = {S(4, 3, 5), S(4, 6, 5)}, .attr = {.slice = {.axis = 1, .start = 2, .len = 3}}},
    {.op = HG_OP_SLICE_BWD, .modes = M_VALUE, .note = "axis 0 [0:1]", .n_in = 2,
     .in = {S(1, 3), S(4, 3)}, .attr = {.slice = {.axis = 0, .start = 0, .len = 1}}},
    /* an empty shard of tensor parallelism: len 0, also at the end */
    {.op = HG_OP_SLICE, .modes = M_SHAPE_OK | M_VALUE, .note = "axis 1 [6:6] empty",
     .n_in = 1, .in = {S(4, 6)}, .attr = {.slice = {.axis = 1, .start = 6, .len = 0}},
     .want = S(4, 0)},
    {.op = HG_OP_SLICE, .modes = M_SHAPE_OK | M_VALUE, .note = "axis 0 [2:2] empty",
     .n_in = 1, .in = {S(4, 6)}, .attr = {.slice = {.axis = 0, .start = 2, .len = 0}},
     .want = S(0, 6)},
    {.op = HG_OP_SLICE, .modes = M_SHAPE_ERR, .note = "axis 1 [7:7]", .n_in = 1,
     .in = {S(4, 6)}, .attr = {.slice = {.axis = 1, .start = 7, .len = 0}},
     .expect = "slice: x [4,6] axis 1 [7, 7) out of range"},
    {.op = HG_OP_SLICE, .modes = M_SHAPE_ERR, .note = "axis 1 [5:7]", .n_in = 1,
     .in = {S(4, 6)}, .attr = {.slice = {.axis = 1, .start = 5, .len = 2}},
     .expect = "axis 1 [5, 7) out of range"},
    {.op = HG_OP_SLICE, .modes = M_SHAPE_ERR, .note = "len -1", .n_in = 1,
     .in = {S(4, 6)}, .attr = {.slice = {.axis = 1, .start = 2, .len = -1}},
     .expect = "out of range"},
    /* RESHARD (a comm op: shape rule only): dim[axis] becomes len, axis -1
     * keeps the shape (an all-reduce), len 0 an empty shard */
    {.op = HG_OP_RESHARD, .modes = M_SHAPE_OK, .note = "gather axis 1", .n_in = 1,
     .in = {S(4, 3, 5)}, .attr = {.reshard = {.group = 0, .tag = 2, .kind = 1, .axis = 1,
     .len = 7}}, .want = S(4, 7, 5)},
    {.op = HG_OP_RESHARD, .modes = M_SHAPE_OK, .note = "axis -1 whole", .n_in = 1,
     .in = {S(4, 6)}, .attr = {.reshard = {.group = 1, .axis = -1, .len = 99}},
     .want = S(4, 6)},
    {.op = HG_OP_RESHARD, .modes = M_SHAPE_OK, .note = "scatter to an empty shard", .n_in = 1,
     .in = {S(5, 6)}, .attr = {.reshard = {.group = 0, .axis = 0, .len = 0}},
     .want = S(0, 6)},
    {.op = HG_OP_RESHARD, .modes = M_SHAPE_ERR, .note = "group -1", .n_in = 1,
     .in = {S(4, 6)}, .attr = {.reshard = {.group = -1, .axis = 0, .len = 2}},
     .expect = "reshard: group -1, axis 0, len 2 for an input of 2 dims"},
    {.op = HG_OP_RESHARD, .modes = M_SHAPE_ERR, .note = "axis 2 of 2", .n_in = 1,
     .in = {S(4, 6)}, .attr = {.reshard = {.group = 0, .axis = 2, .len = 2}},
     .expect = "reshard: group 0, axis 2"},
    {.op = HG_OP_RESHARD, .modes = M_SHAPE_ERR, .note = "axis -2", .n_in = 1,
     .in = {S(4, 6)}, .attr = {.reshard = {.group = 0, .axis = -2, .len = 2}},
     .expect = "reshard: group 0, axis -2"},
    {.op = HG_OP_RESHARD, .modes = M_SHAPE_ERR, .note = "len -1", .n_in = 1,
     .in = {S(4, 6)}, .attr = {.reshard = {.group = 0, .axis = 1, .len = -1}},
     .expect = "len -1"},
    {.op = HG_OP_RESHARD, .modes = M_SHAPE_ERR, .note = "i32", .n_in = 1, .in = {S(4, 6)},
     .dt = {HG_I32}, .attr = {.reshard = {.group = 0, .axis = -1}},
     .expect = "reshard: input 0 is i32, expected f32"},
    {.op = HG_OP_MASKED_FILL, .modes = VG, .note = "causal fill -1e4", .n_in = 1,
     .in = {S(2, 5, 5)}, .attr = {.mask = {.causal = 1, .fill = -1e4f}}},
    {.op = HG_OP_MASKED_FILL, .modes = VG, .note = "causal + keep fill -1e4", .n_in = 2,
     .in = {S(2, 3, 4, 6), S(2, 6)}, .dt = I32_1, .imax = {[1] = 2},
     .attr = {.mask = {.causal = 1, .fill = -1e4f}}},
    {.op = HG_OP_MASKED_FILL, .modes = VG, .note = "keep fill -1e4", .n_in = 2,
     .in = {S(2, 2, 3, 5), S(2, 5)}, .dt = I32_1, .imax = {[1] = 2},
     .attr = {.mask = {.causal = 0, .fill = -1e4f}}},
    {.op = HG_OP_MASKED_FILL, .modes = M_VALUE, .note = "keep fill -inf", .n_in = 2,
     .in = {S(3, 4, 6), S(3, 6)}, .dt = I32_1, .imax = {[1] = 2},
     .attr = {.mask = {.causal = 0, .fill = -INFINITY}}},
    {.op = HG_OP_MASKED_FILL, .modes = M_VALUE, .note = "causal fill 0 (backward)", .n_in = 1,
     .in = {S(2, 2, 4, 4)}, .attr = {.mask = {.causal = 1, .fill = 0}}},
    {.op = HG_OP_MASKED_FILL, .modes = VT, .note = "causal + keep fill -1e4", .n_in = 2,
     .in = {S(8, 4, 33, 40), S(8, 40)}, .dt = I32_1, .imax = {[1] = 2},
     .attr = {.mask = {.causal = 1, .fill = -1e4f}}},

    /* ---- fused attention (q, k, v [, keep]); also attention_vs_unfused() ---- */
    {.op = HG_OP_ATTENTION, .modes = VG, .n_in = 3,
     .in = {S(2, 2, 3, 4), S(2, 2, 5, 4), S(2, 2, 5, 4)}, .attr = ATT(0.5f, 0, 0, 0, 0)},
    {.op = HG_OP_ATTENTION, .modes = VG, .note = "keep", .n_in = 4,
     .in = {S(2, 2, 3, 4), S(2, 2, 5, 4), S(2, 2, 5, 4), S(2, 5)}, .dt = I32_3,
     .imax = {[3] = 2}, .attr = ATT(0.5f, 0, 0, 0, 0)},
    {.op = HG_OP_ATTENTION, .modes = VG, .note = "causal + keep", .n_in = 4,
     .in = {S(2, 2, 4, 3), S(2, 2, 4, 3), S(2, 2, 4, 3), S(2, 4)}, .dt = I32_3,
     .imax = {[3] = 2}, .attr = ATT(0.5f, 1, 0, 0, 0)},
    {.op = HG_OP_ATTENTION, .modes = VG, .note = "causal + keep, dropout 0.3", .n_in = 4,
     .in = {S(2, 2, 4, 3), S(2, 2, 4, 3), S(2, 2, 4, 3), S(2, 4)}, .dt = I32_3,
     .imax = {[3] = 2}, .attr = ATT(0.5f, 1, 0.3f, 77, 0), .step = 3},
    {.op = HG_OP_ATTENTION, .modes = VG, .note = "self, causal + keep, dropout 0.3", .n_in = 4,
     .in = {S(2, 2, 4, 3), S(2, 2, 4, 3), S(2, 2, 4, 3), S(2, 4)}, .dt = I32_3,
     .imax = {[3] = 2}, .attr = ATT_SELF(0.5f, 1, 0.3f, 77), .step = 3},
    {.op = HG_OP_ATTENTION, .modes = VG, .note = "every key masked", .n_in = 4,
     .in = {S(1, 2, 3, 4), S(1, 2, 5, 4), S(1, 2, 5, 4), S(1, 5)}, .dt = I32_3,
     .imax = {[3] = 1}, .attr = ATT(0.5f, 0, 0, 0, 0)},
    {.op = HG_OP_ATTENTION, .modes = VT | M_DROPROWS, .note = "keep, dropout 0.1, 16 pairs", .n_in = 4,
     .in = {S(4, 4, 33, 16), S(4, 4, 40, 16), S(4, 4, 40, 16), S(4, 40)}, .dt = I32_3,
     .imax = {[3] = 2}, .attr = ATT(0.25f, 0, 0.1f, 5, 0)},
    {.op = HG_OP_ATTENTION, .modes = VT, .note = "causal, 1 pair (BLAS threads)", .n_in = 3,
     .in = {S(1, 1, 150, 32), S(1, 1, 150, 32), S(1, 1, 150, 32)},
     .attr = ATT(0.125f, 1, 0, 0, 0)},
    {.op = HG_OP_ATTENTION, .modes = M_SHAPE_ERR, .note = "Dh mismatch", .n_in = 3,
     .in = {S(2, 2, 3, 4), S(2, 2, 5, 3), S(2, 2, 5, 3)}, .expect = "attention"},
    {.op = HG_OP_ATTENTION, .modes = M_SHAPE_ERR, .note = "keep [B,Tq]", .n_in = 4,
     .in = {S(2, 2, 3, 4), S(2, 2, 5, 4), S(2, 2, 5, 4), S(2, 3)}, .dt = I32_3,
     .expect = "keep"},
    {.op = HG_OP_ATTENTION_BWD, .modes = M_VALUE, .note = "dq", .n_in = 4,
     .in = {S(2, 2, 3, 4), S(2, 2, 5, 4), S(2, 2, 5, 4), S(2, 2, 3, 4)},
     .attr = ATT(0.5f, 0, 0, 0, 0)},
    {.op = HG_OP_ATTENTION_BWD, .modes = M_VALUE, .note = "dk dv", .n_in = 4,
     .in = {S(2, 2, 3, 4), S(2, 2, 5, 4), S(2, 2, 5, 4), S(2, 2, 3, 4)},
     .attr = ATT(0.5f, 0, 0, 0, 1)},
    {.op = HG_OP_ATTENTION_BWD, .modes = M_VALUE, .note = "dq causal + keep, dropout 0.3",
     .n_in = 5, .in = {S(2, 2, 4, 3), S(2, 2, 4, 3), S(2, 2, 4, 3), S(2, 2, 4, 3), S(2, 4)},
     .dt = I32_4, .imax = {[4] = 2}, .attr = ATT(0.5f, 1, 0.3f, 77, 0), .step = 3},
    {.op = HG_OP_ATTENTION_BWD, .modes = M_VALUE, .note = "dk dv causal + keep, dropout 0.3",
     .n_in = 5, .in = {S(2, 2, 4, 3), S(2, 2, 4, 3), S(2, 2, 4, 3), S(2, 2, 4, 3), S(2, 4)},
     .dt = I32_4, .imax = {[4] = 2}, .attr = ATT(0.5f, 1, 0.3f, 77, 1), .step = 3},
    {.op = HG_OP_ATTENTION_BWD, .modes = M_VALUE, .note = "dq dk dv causal + keep, dropout 0.3",
     .n_in = 5, .in = {S(2, 2, 4, 3), S(2, 2, 4, 3), S(2, 2, 4, 3), S(2, 2, 4, 3), S(2, 4)},
     .dt = I32_4, .imax = {[4] = 2}, .attr = ATT(0.5f, 1, 0.3f, 77, 2), .step = 3},
    {.op = HG_OP_ATTENTION_BWD, .modes = VT, .note = "dq dk dv keep, dropout 0.1", .n_in = 5,
     .in = {S(4, 4, 40, 16), S(4, 4, 40, 16), S(4, 4, 40, 16), S(4, 4, 40, 16), S(4, 40)},
     .dt = I32_4, .imax = {[4] = 2}, .attr = ATT(0.25f, 0, 0.1f, 5, 2)},
    {.op = HG_OP_ATTENTION_BWD, .modes = M_SHAPE_ERR, .note = "which 2, Tq != Tk", .n_in = 4,
     .in = {S(2, 2, 3, 4), S(2, 2, 5, 4), S(2, 2, 5, 4), S(2, 2, 3, 4)},
     .attr = ATT(0.5f, 0, 0, 0, 2), .expect = "Tq == Tk"},
    {.op = HG_OP_ATTENTION_BWD, .modes = M_VALUE, .note = "dk dv, every key masked", .n_in = 5,
     .in = {S(1, 2, 3, 4), S(1, 2, 5, 4), S(1, 2, 5, 4), S(1, 2, 3, 4), S(1, 5)},
     .dt = I32_4, .imax = {[4] = 1}, .attr = ATT(0.5f, 0, 0, 0, 1)},
    {.op = HG_OP_ATTENTION_BWD, .modes = VT, .note = "dq keep, dropout 0.1", .n_in = 5,
     .in = {S(4, 4, 33, 16), S(4, 4, 40, 16), S(4, 4, 40, 16), S(4, 4, 33, 16), S(4, 40)},
     .dt = I32_4, .imax = {[4] = 2}, .attr = ATT(0.25f, 0, 0.1f, 5, 0)},
    {.op = HG_OP_ATTENTION_BWD, .modes = VT, .note = "dk dv keep, dropout 0.1", .n_in = 5,
     .in = {S(4, 4, 33, 16), S(4, 4, 40, 16), S(4, 4, 40, 16), S(4, 4, 33, 16), S(4, 40)},
     .dt = I32_4, .imax = {[4] = 2}, .attr = ATT(0.25f, 0, 0.1f, 5, 1)},
    {.op = HG_OP_ATTENTION_BWD, .modes = VT, .note = "dk dv causal, 1 pair", .n_in = 4,
     .in = {S(1, 1, 150, 32), S(1, 1, 150, 32), S(1, 1, 150, 32), S(1, 1, 150, 32)},
     .attr = ATT(0.125f, 1, 0, 0, 1)},
    {.op = HG_OP_ATTENTION_BWD, .modes = M_SHAPE_ERR, .note = "which 3", .n_in = 4,
     .in = {S(2, 2, 3, 4), S(2, 2, 5, 4), S(2, 2, 5, 4), S(2, 2, 3, 4)},
     .attr = ATT(0.5f, 0, 0, 0, 3), .expect = "which"},

    /* ---- reductions ---- */
    {.op = HG_OP_SUM, .modes = VG, .note = "axis 0", .n_in = 1, .in = {S(3, 4, 5)}, .attr = RED(0, 0)},
    {.op = HG_OP_SUM, .modes = VG, .note = "axis 1", .n_in = 1, .in = {S(3, 4, 5)}, .attr = RED(1, 0)},
    {.op = HG_OP_SUM, .modes = VG, .note = "axis 2", .n_in = 1, .in = {S(3, 4, 5)}, .attr = RED(2, 0)},
    {.op = HG_OP_SUM, .modes = VG, .note = "all", .n_in = 1, .in = {S(3, 4, 5)},
     .attr = RED(HG_AXIS_ALL, 0)},
    {.op = HG_OP_SUM, .modes = VT, .note = "all", .n_in = 1, .in = {S(512, 300)},
     .attr = RED(HG_AXIS_ALL, 0)},
    {.op = HG_OP_SUM, .modes = VT, .note = "axis 0", .n_in = 1, .in = {S(512, 300)},
     .attr = RED(0, 0)},
    {.op = HG_OP_SUM, .modes = VT, .note = "axis 1", .n_in = 1, .in = {S(512, 300)},
     .attr = RED(1, 0)},
    {.op = HG_OP_MEAN, .modes = VG, .note = "axis 1", .n_in = 1, .in = {S(3, 4, 5)}, .attr = RED(1, 0)},
    {.op = HG_OP_MEAN, .modes = VG, .note = "axis 3", .n_in = 1, .in = {S(2, 3, 4, 5)},
     .attr = RED(3, 0)},
    {.op = HG_OP_MEAN, .modes = VG, .note = "all", .n_in = 1, .in = {S(3, 7)},
     .attr = RED(HG_AXIS_ALL, 0)},
    {.op = HG_OP_MEAN, .modes = VT, .note = "all", .n_in = 1, .in = {S(512, 300)},
     .attr = RED(HG_AXIS_ALL, 0)},
    {.op = HG_OP_EXPAND_LIKE, .modes = M_VALUE, .note = "alpha 0.25", .n_in = 2,
     .in = {S(3, 1, 5), S(3, 4, 5)}, .attr = RED(1, 0.25f)},
    {.op = HG_OP_EXPAND_LIKE, .modes = M_VALUE, .note = "all alpha 1", .n_in = 2,
     .in = {S(1), S(4, 5)}, .attr = RED(HG_AXIS_ALL, 1.0f)},
    {.op = HG_OP_EXPAND_LIKE, .modes = VT, .note = "alpha 0.5", .n_in = 2,
     .in = {S(512, 1), S(512, 300)}, .attr = RED(1, 0.5f)},

    /* ---- losses ---- */
    {.op = HG_OP_CROSS_ENTROPY, .modes = VG, .note = "ignore -100 smoothing 0.1", .n_in = 2,
     .in = {S(6, 5), S(6)}, .dt = I32_1, .imax = {[1] = 5}, .gen = {G_WIDE},
     .attr = CE(-100, 0.1f), .ignore_every = 3},
    {.op = HG_OP_CROSS_ENTROPY, .modes = VG, .note = "plain", .n_in = 2,
     .in = {S(2, 3, 7), S(2, 3)}, .dt = I32_1, .imax = {[1] = 7}, .gen = {G_WIDE},
     .attr = CE(-100, 0)},
    {.op = HG_OP_CROSS_ENTROPY, .modes = M_VALUE, .note = "ignore 2 (a class)", .n_in = 2,
     .in = {S(9, 4), S(9)}, .dt = I32_1, .imax = {[1] = 4}, .gen = {G_WIDE},
     .attr = CE(2, 0.1f)},
    {.op = HG_OP_CROSS_ENTROPY, .modes = VT, .note = "ignore -100 smoothing 0.1", .n_in = 2,
     .in = {S(2048, 50), S(2048)}, .dt = I32_1, .imax = {[1] = 50}, .gen = {G_WIDE},
     .attr = CE(-100, 0.1f), .ignore_every = 7},
    {.op = HG_OP_CROSS_ENTROPY, .modes = M_ERROR, .note = "target >= C", .n_in = 2,
     .in = {S(6, 5), S(6)}, .dt = I32_1, .imax = {[1] = 5}, .attr = CE(-100, 0),
     .bad = {1, 4, 977}, .expect = "977"},
    {.op = HG_OP_CROSS_ENTROPY, .modes = M_ERROR, .note = "target < 0, not ignore_index",
     .n_in = 2, .in = {S(6, 5), S(6)}, .dt = I32_1, .imax = {[1] = 5}, .attr = CE(-100, 0),
     .bad = {1, 0, -7}, .expect = "-7"},
    {.op = HG_OP_CROSS_ENTROPY, .modes = M_VALUE, .note = "logits 80..100 smoothing 0.1",
     .n_in = 2, .in = {S(4, 6), S(4)}, .dt = I32_1, .imax = {[1] = 6}, .gen = {G_BIG},
     .attr = CE(-100, 0.1f)},
    {.op = HG_OP_CROSS_ENTROPY_BWD, .modes = M_ERROR, .note = "target >= C", .n_in = 3,
     .in = {S(6, 5), S(6), S(1)}, .dt = I32_1, .imax = {[1] = 5}, .attr = CE(-100, 0),
     .bad = {1, 4, 977}, .expect = "977"},
    {.op = HG_OP_CROSS_ENTROPY_BWD, .modes = VT, .note = "ignore -100 smoothing 0.1", .n_in = 3,
     .in = {S(6, 5), S(6), S(1)}, .dt = I32_1, .imax = {[1] = 5}, .gen = {G_WIDE},
     .attr = CE(-100, 0.1f), .ignore_every = 3},
    {.op = HG_OP_CROSS_ENTROPY_BWD, .modes = M_VALUE, .note = "plain", .n_in = 3,
     .in = {S(2, 3, 7), S(2, 3), S(1)}, .dt = I32_1, .imax = {[1] = 7}, .gen = {G_WIDE},
     .attr = CE(-100, 0)},
    {.op = HG_OP_NLL, .modes = VG, .note = "ignore -100 smoothing 0.1", .n_in = 2,
     .in = {S(6, 5), S(6)}, .dt = I32_1, .imax = {[1] = 5},
     .attr = CE(-100, 0.1f), .ignore_every = 3},
    {.op = HG_OP_NLL, .modes = VT, .note = "plain", .n_in = 2,
     .in = {S(300, 10), S(300)}, .dt = I32_1, .imax = {[1] = 10}, .attr = CE(-100, 0)},
    {.op = HG_OP_NLL, .modes = M_ERROR, .note = "target >= C", .n_in = 2,
     .in = {S(6, 5), S(6)}, .dt = I32_1, .imax = {[1] = 5}, .attr = CE(-100, 0),
     .bad = {1, 2, 977}, .expect = "977"},
    {.op = HG_OP_NLL_BWD, .modes = M_VALUE, .note = "ignore -100 smoothing 0.1", .n_in = 3,
     .in = {S(6, 5), S(6), S(1)}, .dt = I32_1, .imax = {[1] = 5},
     .attr = CE(-100, 0.1f), .ignore_every = 3},
    {.op = HG_OP_NLL_BWD, .modes = M_ERROR, .note = "target >= C", .n_in = 3,
     .in = {S(6, 5), S(6), S(1)}, .dt = I32_1, .imax = {[1] = 5}, .attr = CE(-100, 0),
     .bad = {1, 4, 977}, .expect = "977"},

    /* ---- optimizer updates (in place) ---- */
    {.op = HG_OP_SGD_STEP, .modes = M_VALUE, .note = "momentum 0.9 wd 0.01", .n_in = 3,
     .in = {S(5, 7), S(5, 7), S(5, 7)}, .step = 3, .lr = 0.1f, .grad_scale = 0.5f,
     .attr = {.sgd = {.momentum = 0.9f, .weight_decay = 0.01f}}},
    {.op = HG_OP_SGD_STEP, .modes = M_VALUE, .note = "nesterov", .n_in = 3,
     .in = {S(33), S(33), S(33)}, .step = 2, .lr = 0.05f,
     .attr = {.sgd = {.momentum = 0.9f, .nesterov = 1}}},
    {.op = HG_OP_SGD_STEP, .modes = M_VALUE, .note = "plain", .n_in = 3,
     .in = {S(4, 4), S(4, 4), S(4, 4)}, .step = 1, .lr = 0.1f},
    {.op = HG_OP_ADAMW_STEP, .modes = M_VALUE, .note = "step 3 wd 0.01", .n_in = 4,
     .in = {S(5, 7), S(5, 7), S(5, 7), S(5, 7)}, .gen = {[3] = G_POS}, .step = 3,
     .lr = 1e-3f, .grad_scale = 0.25f,
     .attr = {.adam = {.beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.01f}}},
    {.op = HG_OP_ADAMW_STEP, .modes = M_VALUE, .note = "step 1", .n_in = 4,
     .in = {S(100), S(100), S(100), S(100)}, .gen = {[2] = G_ONES, [3] = G_POS}, .step = 1,
     .lr = 1e-2f,
     .attr = {.adam = {.beta1 = 0.8f, .beta2 = 0.99f, .eps = 1e-6f}}},
    {.op = HG_OP_ADAMW_STEP, .modes = VT, .note = "adamw 4 steps from 2", .n_in = 4,
     .in = {S(3000), S(3000), S(3000), S(3000)}, .gen = {[3] = G_POS}, .step = 2,
     .nsteps = 4, .lr = 1e-2f, .grad_scale = 0.5f,
     .attr = {.adam = {0.9f, 0.999f, 1e-8f, 0.1f}}},
    {.op = HG_OP_ADAMW_STEP, .modes = M_VALUE, .note = "adam l2 step 3 wd 0.01", .n_in = 4,
     .in = {S(5, 7), S(5, 7), S(5, 7), S(5, 7)}, .gen = {[3] = G_POS}, .step = 3,
     .lr = 1e-3f, .grad_scale = 0.25f,
     .attr = {.adam = {.beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.01f,
                       .l2 = 1}}},
    {.op = HG_OP_ADAMW_STEP, .modes = VT, .note = "adam l2 5 steps wd 0.1", .n_in = 4,
     .in = {S(3000), S(3000), S(3000), S(3000)}, .gen = {[3] = G_POS}, .step = 1, .nsteps = 5, .lr = 1e-2f,
     .grad_scale = 0.5f,
     .attr = {.adam = {.beta1 = 0.8f, .beta2 = 0.99f, .eps = 1e-6f, .weight_decay = 0.1f,
                       .l2 = 1}}},
    {.op = HG_OP_ADAMW_STEP, .modes = M_VALUE, .note = "adam l2 wd 0 step 1", .n_in = 4,
     .in = {S(100), S(100), S(100), S(100)}, .gen = {[2] = G_ONES, [3] = G_POS}, .step = 1,
     .lr = 1e-2f, .attr = {.adam = {0.8f, 0.99f, 1e-6f, 0.f, 1}}},
    {.op = HG_OP_ADADELTA_STEP, .modes = M_VALUE, .note = "step 1 zero state", .n_in = 4,
     .in = {S(5, 7), S(5, 7), S(5, 7), S(5, 7)}, .gen = {[2] = G_ONES, [3] = G_ONES},
     .step = 1, .lr = 1.0f, .attr = {.adadelta = {.rho = 0.9f, .eps = 1e-6f}}},
    {.op = HG_OP_ADADELTA_STEP, .modes = M_VALUE, .note = "rho 0.95 wd 0.01", .n_in = 4,
     .in = {S(4, 9), S(4, 9), S(4, 9), S(4, 9)}, .gen = {[2] = G_POS, [3] = G_POS},
     .step = 4, .lr = 0.5f, .grad_scale = 0.25f,
     .attr = {.adadelta = {.rho = 0.95f, .eps = 1e-6f, .weight_decay = 0.01f}}},
    {.op = HG_OP_ADADELTA_STEP, .modes = VT, .note = "6 steps wd 1e-4", .n_in = 4,
     .in = {S(3000), S(3000), S(3000), S(3000)}, .gen = {[2] = G_POS, [3] = G_POS},
     .step = 1, .nsteps = 6, .lr = 1.0f, .grad_scale = 0.5f,
     .attr = {.adadelta = {.rho = 0.9f, .eps = 1e-6f, .weight_decay = 1e-4f}}},
    {.op = HG_OP_ADADELTA_STEP, .modes = M_SHAPE_ERR, .note = "state shape", .n_in = 4,
     .in = {S(4, 5), S(4, 5), S(4, 5), S(5, 4)}, .expect = "input 3 [5,4] differs"},
};
#define N_CASES ((int)(sizeof cases / sizeof cases[0]))

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */

static uint64_t rng_state = 88172645463325252ull;
static uint64_t xorshift64(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static double urand(void) { return (double)(xorshift64() >> 11) / 9007199254740992.0; }

static int64_t numel(const struct hg_shape *s)
{
    int64_t n = 1;
    for (int i = 0; i < s->ndim; i++)
        n *= s->dim[i];
    return n;
}

static int shape_eq(const struct hg_shape *a, const struct hg_shape *b)
{
    if (a->ndim != b->ndim)
        return 0;
    for (int i = 0; i < a->ndim; i++)
        if (a->dim[i] != b->dim[i])
            return 0;
    return 1;
}

static char *shape_str(const struct hg_shape *s, char *buf, size_t len)
{
    size_t o = 0;
    o += (size_t)snprintf(buf + o, len - o, "[");
    for (int i = 0; i < s->ndim && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s%lld", i ? "," : "",
                              (long long)s->dim[i]);
    if (o < len)
        snprintf(buf + o, len - o, "]");
    return buf;
}

static size_t dt_size(enum hg_dtype dt) { return dt == HG_F32 || dt == HG_I32 ? 4 : 8; }

static double fget(const struct hg_tview *t, int64_t i) { return ((const float *)t->data)[i]; }
static int64_t iget(const struct hg_tview *t, int64_t i)
{
    return t->dtype == HG_I64 ? ((const int64_t *)t->data)[i] : ((const int32_t *)t->data)[i];
}

/* Offset into `small` (broadcast to `big`, aligned right) of big's flat i. */
static int64_t bcast_off(const struct hg_shape *small, const struct hg_shape *big, int64_t i)
{
    int64_t off = 0, stride = 1;
    int d = small->ndim - 1;
    for (int a = big->ndim - 1; a >= 0; a--, d--) {
        int64_t idx = i % big->dim[a];
        i /= big->dim[a];
        if (d < 0)
            continue;
        if (small->dim[d] != 1)
            off += idx * stride;
        stride *= small->dim[d];
    }
    return off;
}

/* ------------------------------------------------------------------------ */
/* Naive references: plain loops, double accumulation, independent of the
 * kernels.  Each sets the output shape, returns a malloc'ed double array and
 * the accumulation length (for the tolerance) in *kred.                     */

typedef double *(*ref_fn)(const struct op_case *c, const struct hg_tview *in,
                          struct hg_shape *os, double *kred);

static double *alloc_out(struct hg_shape *os)
{
    double *o = calloc((size_t)(numel(os) ? numel(os) : 1), sizeof(double));
    if (!o)
        abort();
    return o;
}

static double *ref_matmul(const struct op_case *c, const struct hg_tview *in,
                          struct hg_shape *os, double *kred)
{
    const struct hg_shape *A = &in[0].shape, *B = &in[1].shape;
    int ta = c->attr.mm.trans_a, tb = c->attr.mm.trans_b, na = A->ndim, nb = B->ndim;
    double alpha = c->attr.mm.alpha == 0 ? 1.0 : c->attr.mm.alpha;
    int64_t M = ta ? A->dim[na - 1] : A->dim[na - 2];
    int64_t K = ta ? A->dim[na - 2] : A->dim[na - 1];
    int64_t N = tb ? B->dim[nb - 2] : B->dim[nb - 1];
    int64_t batch = numel(A) / (M * K);
    int shared = nb == 2;
    *os = *A;
    os->dim[na - 2] = M;
    os->dim[na - 1] = N;
    double *o = alloc_out(os);
    for (int64_t bt = 0; bt < batch; bt++) {
        int64_t bb = shared ? 0 : bt;
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double s = 0;
                for (int64_t k = 0; k < K; k++) {
                    double av = fget(&in[0], bt * M * K + (ta ? k * M + i : i * K + k));
                    double bv = fget(&in[1], bb * K * N + (tb ? j * K + k : k * N + j));
                    s += av * bv;
                }
                o[(bt * M + i) * N + j] = alpha * s;
            }
    }
    *kred = (double)K;
    return o;
}

static double *ref_matmul_reduce(const struct op_case *c, const struct hg_tview *in,
                                 struct hg_shape *os, double *kred)
{
    (void)c;
    int64_t K = in[0].shape.dim[in[0].shape.ndim - 1];
    int64_t N = in[1].shape.dim[in[1].shape.ndim - 1];
    int64_t rows = numel(&in[0].shape) / K;
    *os = (struct hg_shape)S(K, N);
    double *o = alloc_out(os);
    for (int64_t k = 0; k < K; k++)
        for (int64_t n = 0; n < N; n++) {
            double s = 0;
            for (int64_t r = 0; r < rows; r++)
                s += fget(&in[0], r * K + k) * fget(&in[1], r * N + n);
            o[k * N + n] = s;
        }
    *kred = (double)rows;
    return o;
}

struct convdims {
    int64_t N, C, H, W, O, KH, KW, OH, OW, sh, sw, ph, pw;
};
static struct convdims conv_dims(const union hg_attr *at, const struct hg_shape *x, int64_t O)
{
    struct convdims d = {.N = x->dim[0], .C = x->dim[1], .H = x->dim[2], .W = x->dim[3],
                         .O = O, .KH = at->conv.kh, .KW = at->conv.kw,
                         .sh = at->conv.stride_h, .sw = at->conv.stride_w,
                         .ph = at->conv.pad_h, .pw = at->conv.pad_w};
    d.OH = (d.H + 2 * d.ph - d.KH) / d.sh + 1;
    d.OW = (d.W + 2 * d.pw - d.KW) / d.sw + 1;
    return d;
}
#define X4(a, b, c_, d_, B_, C_, D_) ((((a) * (B_) + (b)) * (C_) + (c_)) * (D_) + (d_))

/* mode 0: forward (x, w); 1: bwd data (dy, w, x_ref); 2: bwd filter (x, dy) */
static double *conv_ref(const struct op_case *c, const struct hg_tview *in,
                        struct hg_shape *os, double *kred, int mode)
{
    const struct hg_tview *x = mode == 1 ? &in[2] : &in[0];
    int64_t O = mode == 2 ? in[1].shape.dim[1] : in[1].shape.dim[0];
    struct convdims d = conv_dims(&c->attr, &x->shape, O);
    if (mode == 0)
        *os = (struct hg_shape)S(d.N, d.O, d.OH, d.OW);
    else if (mode == 1)
        *os = x->shape;
    else
        *os = (struct hg_shape)S(d.O, d.C, d.KH, d.KW);
    double *o = alloc_out(os);
    for (int64_t n = 0; n < d.N; n++)
        for (int64_t oc = 0; oc < d.O; oc++)
            for (int64_t oh = 0; oh < d.OH; oh++)
                for (int64_t ow = 0; ow < d.OW; ow++) {
                    int64_t yi = X4(n, oc, oh, ow, d.O, d.OH, d.OW);
                    double acc = 0;
                    for (int64_t ci = 0; ci < d.C; ci++)
                        for (int64_t i = 0; i < d.KH; i++)
                            for (int64_t j = 0; j < d.KW; j++) {
                                int64_t h = oh * d.sh - d.ph + i, w = ow * d.sw - d.pw + j;
                                if (h < 0 || h >= d.H || w < 0 || w >= d.W)
                                    continue;
                                int64_t xi = X4(n, ci, h, w, d.C, d.H, d.W);
                                int64_t wi = X4(oc, ci, i, j, d.C, d.KH, d.KW);
                                if (mode == 0)
                                    acc += fget(&in[0], xi) * fget(&in[1], wi);
                                else if (mode == 1)
                                    o[xi] += fget(&in[0], yi) * fget(&in[1], wi);
                                else
                                    o[wi] += fget(&in[0], xi) * fget(&in[1], yi);
                            }
                    if (mode == 0)
                        o[yi] = acc;
                }
    *kred = mode == 0 ? (double)(d.C * d.KH * d.KW)
          : mode == 1 ? (double)(d.O * d.KH * d.KW) : (double)(d.N * d.OH * d.OW);
    return o;
}
static double *ref_conv2d(const struct op_case *c, const struct hg_tview *in,
                          struct hg_shape *os, double *kred)
{
    return conv_ref(c, in, os, kred, 0);
}
static double *ref_conv2d_bwd_data(const struct op_case *c, const struct hg_tview *in,
                                   struct hg_shape *os, double *kred)
{
    return conv_ref(c, in, os, kred, 1);
}
static double *ref_conv2d_bwd_filter(const struct op_case *c, const struct hg_tview *in,
                                     struct hg_shape *os, double *kred)
{
    return conv_ref(c, in, os, kred, 2);
}

/* bwd: scatter in[1] (dy) to the first maximum of each window */
static double *pool_ref(const struct op_case *c, const struct hg_tview *in,
                        struct hg_shape *os, int bwd)
{
    const struct hg_shape *xs = &in[0].shape;
    int64_t N = xs->dim[0], C = xs->dim[1], H = xs->dim[2], W = xs->dim[3];
    int64_t k = c->attr.pool.kh, st = c->attr.pool.stride, p = c->attr.pool.pad;
    int64_t OH = (H + 2 * p - k) / st + 1, OW = (W + 2 * p - k) / st + 1;
    *os = bwd ? *xs : (struct hg_shape)S(N, C, OH, OW);
    double *o = alloc_out(os);
    for (int64_t nc = 0; nc < N * C; nc++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                double best = -INFINITY;
                int64_t arg = -1;
                for (int64_t i = 0; i < k; i++)
                    for (int64_t j = 0; j < k; j++) {
                        int64_t h = oh * st - p + i, w = ow * st - p + j;
                        if (h < 0 || h >= H || w < 0 || w >= W)
                            continue;
                        double v = fget(&in[0], (nc * H + h) * W + w);
                        if (arg < 0 || v > best) {
                            best = v;
                            arg = (nc * H + h) * W + w;
                        }
                    }
                int64_t yi = (nc * OH + oh) * OW + ow;
                if (bwd)
                    o[arg] += fget(&in[1], yi);
                else
                    o[yi] = best;
            }
    return o;
}
static double *ref_maxpool2d(const struct op_case *c, const struct hg_tview *in,
                             struct hg_shape *os, double *kred)
{
    *kred = 1;
    return pool_ref(c, in, os, 0);
}
static double *ref_maxpool2d_bwd(const struct op_case *c, const struct hg_tview *in,
                                 struct hg_shape *os, double *kred)
{
    *kred = 9;
    return pool_ref(c, in, os, 1);
}

static double *binary_ref(const struct hg_tview *in, struct hg_shape *os, int kind)
{
    const struct hg_shape *a = &in[0].shape, *b = &in[1].shape;
    os->ndim = a->ndim > b->ndim ? a->ndim : b->ndim;
    for (int i = 0; i < os->ndim; i++) {
        int ia = a->ndim - os->ndim + i, ib = b->ndim - os->ndim + i;
        int64_t da = ia >= 0 ? a->dim[ia] : 1, db = ib >= 0 ? b->dim[ib] : 1;
        os->dim[i] = da == 1 ? db : da;
    }
    double *o = alloc_out(os);
    for (int64_t i = 0; i < numel(os); i++) {
        double x = fget(&in[0], bcast_off(a, os, i)), y = fget(&in[1], bcast_off(b, os, i));
        o[i] = kind == 0 ? x + y : kind == 1 ? x - y : x * y;
    }
    return o;
}
static double *ref_add(const struct op_case *c, const struct hg_tview *in,
                       struct hg_shape *os, double *kred)
{
    (void)c;
    *kred = 1;
    return binary_ref(in, os, 0);
}
static double *ref_sub(const struct op_case *c, const struct hg_tview *in,
                       struct hg_shape *os, double *kred)
{
    (void)c;
    *kred = 1;
    return binary_ref(in, os, 1);
}
static double *ref_mul(const struct op_case *c, const struct hg_tview *in,
                       struct hg_shape *os, double *kred)
{
    (void)c;
    *kred = 1;
    return binary_ref(in, os, 2);
}

static double *ref_sum_to(const struct op_case *c, const struct hg_tview *in,
                          struct hg_shape *os, double *kred)
{
    (void)c;
    *os = in[1].shape;
    double *o = alloc_out(os);
    for (int64_t i = 0; i < numel(&in[0].shape); i++)
        o[bcast_off(os, &in[0].shape, i)] += fget(&in[0], i);
    *kred = (double)numel(&in[0].shape) / (double)numel(os);
    return o;
}

/* Elementwise unary (and the _bwd binary ones): f(x, dy) */
static double gelu_d(double x)
{
    return 0.5 * (1 + erf(x / sqrt(2.0))) + x * exp(-0.5 * x * x) / sqrt(2 * M_PI);
}
/* Dropout's draw for element i of a tensor of shape s, from its
 * definition (docs/reproducibility.md, "Dropout"): rows are every axis but
 * the last (a 1-D tensor: every element); the row's key chains
 * hg_rand_key from key over its sample id (ids[b], or b), then its other
 * coordinates; the element draws hg_rand_u(row key, its last coordinate). */
static float ref_drop_u(const struct hg_shape *s, int64_t i, uint64_t key, const int32_t *ids)
{
    const int na = s->ndim >= 2 ? s->ndim - 1 : 1;
    const int64_t L = s->ndim >= 2 ? s->dim[s->ndim - 1] : 1;
    int64_t c[HG_MAX_DIMS], r = i / L;
    for (int a = na - 1; a >= 0; a--) {
        c[a] = r % s->dim[a];
        r /= s->dim[a];
    }
    uint64_t k = hg_rand_key(key, (uint64_t)(ids ? (int64_t)ids[c[0]] : c[0]));
    for (int a = 1; a < na; a++)
        k = hg_rand_key(k, (uint64_t)c[a]);
    return hg_rand_u(k, (uint64_t)(i % L));
}

static double *unary_ref(const struct op_case *c, const struct hg_tview *in,
                         struct hg_shape *os, double *kred)
{
    *os = in[0].shape;
    *kred = 1;
    double *o = alloc_out(os);
    for (int64_t i = 0; i < numel(os); i++) {
        double x = fget(&in[0], i), dy = c->n_in > 1 ? fget(&in[1], i) : 0;
        switch (c->op) {
        case HG_OP_SCALE: o[i] = (double)c->attr.scale.alpha * x; break;
        case HG_OP_RELU: o[i] = x > 0 ? x : 0; break;
        case HG_OP_RELU_BWD: o[i] = x > 0 ? dy : 0; break;
        case HG_OP_GELU: o[i] = 0.5 * x * (1 + erf(x / sqrt(2.0))); break;
        case HG_OP_GELU_BWD: o[i] = dy * gelu_d(x); break;
        case HG_OP_TANH: o[i] = tanh(x); break;
        case HG_OP_TANH_BWD: o[i] = dy * (1 - x * x); break;
        case HG_OP_DROPOUT: {
            double p = c->attr.dropout.p;
            uint64_t step = c->step ? c->step : 1;
            int keep = p == 0 || ref_drop_u(os, i, hg_rand_key(c->attr.dropout.seed, step),
                                            NULL) >= p;
            o[i] = keep ? x / (1 - p) : 0;
            break;
        }
        case HG_OP_RESHAPE: case HG_OP_RESHAPE_LIKE: o[i] = x; break;
        default: abort();
        }
    }
    return o;
}

/* Row-wise over the last axis: softmax, log_softmax and their backwards. */
static double *rowwise_ref(const struct op_case *c, const struct hg_tview *in,
                           struct hg_shape *os, double *kred)
{
    *os = in[0].shape;
    int64_t D = os->dim[os->ndim - 1], rows = numel(os) / D;
    double *o = alloc_out(os);
    for (int64_t r = 0; r < rows; r++) {
        const int64_t b = r * D;
        double mx = -INFINITY, se = 0, dot = 0, sdy = 0;
        for (int64_t j = 0; j < D; j++)
            mx = fmax(mx, fget(&in[0], b + j));
        for (int64_t j = 0; j < D; j++)
            se += exp(fget(&in[0], b + j) - mx);
        if (c->n_in > 1)
            for (int64_t j = 0; j < D; j++) {
                dot += fget(&in[1], b + j) * fget(&in[0], b + j);
                sdy += fget(&in[1], b + j);
            }
        for (int64_t j = 0; j < D; j++) {
            double x = fget(&in[0], b + j), dy = c->n_in > 1 ? fget(&in[1], b + j) : 0;
            switch (c->op) {
            case HG_OP_SOFTMAX: o[b + j] = exp(x - mx) / se; break;
            case HG_OP_LOG_SOFTMAX: o[b + j] = x - mx - log(se); break;
            case HG_OP_SOFTMAX_BWD: o[b + j] = x * (dy - dot); break;    /* x is y */
            case HG_OP_LOG_SOFTMAX_BWD: o[b + j] = dy - exp(x) * sdy; break; /* x is logp */
            default: abort();
            }
        }
    }
    *kred = (double)D;
    return o;
}

/* Layer norm: forward (x,g,b), bwd_x (x,g,dy), bwd_g (x,dy). */
static double *ln_ref(const struct op_case *c, const struct hg_tview *in,
                      struct hg_shape *os, double *kred)
{
    const struct hg_shape *xs = &in[0].shape;
    int64_t D = xs->dim[xs->ndim - 1], rows = numel(xs) / D;
    double eps = c->attr.ln.eps;
    const struct hg_tview *dyv = c->op == HG_OP_LAYERNORM_BWD_G ? &in[1] : &in[2];
    if (c->op == HG_OP_LAYERNORM_BWD_G)
        *os = (struct hg_shape)S(D);
    else
        *os = *xs;
    double *o = alloc_out(os);
    double *xh = malloc((size_t)D * sizeof(double));
    for (int64_t r = 0; r < rows; r++) {
        int64_t b = r * D;
        double mu = 0, var = 0;
        for (int64_t j = 0; j < D; j++)
            mu += fget(&in[0], b + j);
        mu /= (double)D;
        for (int64_t j = 0; j < D; j++)
            var += (fget(&in[0], b + j) - mu) * (fget(&in[0], b + j) - mu);
        var /= (double)D;
        double rstd = 1 / sqrt(var + eps);
        for (int64_t j = 0; j < D; j++)
            xh[j] = (fget(&in[0], b + j) - mu) * rstd;
        if (c->op == HG_OP_LAYERNORM) {
            for (int64_t j = 0; j < D; j++)
                o[b + j] = xh[j] * fget(&in[1], j) + fget(&in[2], j);
        } else if (c->op == HG_OP_LAYERNORM_BWD_G) {
            for (int64_t j = 0; j < D; j++)
                o[j] += fget(dyv, b + j) * xh[j];
        } else {
            double m1 = 0, m2 = 0;
            for (int64_t j = 0; j < D; j++) {
                double g = fget(dyv, b + j) * fget(&in[1], j);
                m1 += g;
                m2 += g * xh[j];
            }
            m1 /= (double)D;
            m2 /= (double)D;
            for (int64_t j = 0; j < D; j++)
                o[b + j] = rstd * (fget(dyv, b + j) * fget(&in[1], j) - m1 - xh[j] * m2);
        }
    }
    free(xh);
    *kred = c->op == HG_OP_LAYERNORM_BWD_G ? (double)rows : (double)D;
    return o;
}

static double *ref_embedding(const struct op_case *c, const struct hg_tview *in,
                             struct hg_shape *os, double *kred)
{
    (void)c;
    int64_t D = in[0].shape.dim[1], n = numel(&in[1].shape);
    *os = in[1].shape;
    os->dim[os->ndim++] = D;
    double *o = alloc_out(os);
    for (int64_t i = 0; i < n; i++)
        for (int64_t d = 0; d < D; d++)
            o[i * D + d] = fget(&in[0], iget(&in[1], i) * D + d);
    *kred = 1;
    return o;
}
static double *ref_embedding_bwd(const struct op_case *c, const struct hg_tview *in,
                                 struct hg_shape *os, double *kred)
{
    (void)c;
    *os = in[2].shape;
    int64_t D = os->dim[1], n = numel(&in[0].shape);
    double *o = alloc_out(os);
    for (int64_t i = 0; i < n; i++)
        for (int64_t d = 0; d < D; d++)
            o[iget(&in[0], i) * D + d] += fget(&in[1], i * D + d);
    *kred = (double)n / (double)os->dim[0] + 1;
    return o;
}

static double *ref_reshape(const struct op_case *c, const struct hg_tview *in,
                           struct hg_shape *os, double *kred)
{
    if (c->op == HG_OP_RESHAPE_LIKE) {
        *os = in[1].shape;
    } else {
        int64_t known = 1;
        int infer = -1;
        os->ndim = c->attr.reshape.ndim;
        for (int i = 0; i < os->ndim; i++) {
            int64_t d = c->attr.reshape.dim[i];
            os->dim[i] = d == 0 ? in[0].shape.dim[i] : d;
            if (d == -1)
                infer = i;
            else
                known *= os->dim[i];
        }
        if (infer >= 0)
            os->dim[infer] = numel(&in[0].shape) / known;
    }
    struct hg_shape tmp;
    double *o = unary_ref(c, in, &tmp, kred);
    return o;
}

static double *ref_permute(const struct op_case *c, const struct hg_tview *in,
                           struct hg_shape *os, double *kred)
{
    const struct hg_shape *xs = &in[0].shape;
    const int *perm = c->attr.permute.perm;
    int nd = xs->ndim;
    int64_t xstride[HG_MAX_DIMS];
    xstride[nd - 1] = 1;
    for (int i = nd - 2; i >= 0; i--)
        xstride[i] = xstride[i + 1] * xs->dim[i + 1];
    os->ndim = nd;
    for (int i = 0; i < nd; i++)
        os->dim[i] = xs->dim[perm[i]];
    double *o = alloc_out(os);
    for (int64_t f = 0; f < numel(os); f++) {
        int64_t rem = f, off = 0;
        for (int i = nd - 1; i >= 0; i--) {
            off += (rem % os->dim[i]) * xstride[perm[i]];
            rem /= os->dim[i];
        }
        o[f] = fget(&in[0], off);
    }
    *kred = 1;
    return o;
}

static double *ref_concat(const struct op_case *c, const struct hg_tview *in,
                          struct hg_shape *os, double *kred)
{
    int ax = c->attr.concat.axis;
    *os = in[0].shape;
    os->dim[ax] = 0;
    for (int k = 0; k < c->n_in; k++)
        os->dim[ax] += in[k].shape.dim[ax];
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < ax; i++)
        outer *= os->dim[i];
    for (int i = ax + 1; i < os->ndim; i++)
        inner *= os->dim[i];
    double *o = alloc_out(os);
    for (int64_t ou = 0; ou < outer; ou++) {
        int64_t pos = 0;
        for (int k = 0; k < c->n_in; k++) {
            int64_t a = in[k].shape.dim[ax];
            for (int64_t j = 0; j < a; j++)
                for (int64_t q = 0; q < inner; q++)
                    o[(ou * os->dim[ax] + pos + j) * inner + q] =
                        fget(&in[k], (ou * a + j) * inner + q);
            pos += a;
        }
    }
    *kred = 1;
    return o;
}

/* slice (x) and slice_bwd (dy, x_ref) */
static double *ref_slice(const struct op_case *c, const struct hg_tview *in,
                         struct hg_shape *os, double *kred)
{
    int ax = c->attr.slice.axis, bwd = c->op == HG_OP_SLICE_BWD;
    int64_t st = c->attr.slice.start, len = c->attr.slice.len;
    const struct hg_shape *big = bwd ? &in[1].shape : &in[0].shape;
    int64_t outer = 1, inner = 1, A = big->dim[ax];
    for (int i = 0; i < ax; i++)
        outer *= big->dim[i];
    for (int i = ax + 1; i < big->ndim; i++)
        inner *= big->dim[i];
    *os = *big;
    if (!bwd)
        os->dim[ax] = len;
    double *o = alloc_out(os);
    for (int64_t ou = 0; ou < outer; ou++)
        for (int64_t j = 0; j < len; j++)
            for (int64_t q = 0; q < inner; q++) {
                int64_t bi = (ou * A + st + j) * inner + q, si = (ou * len + j) * inner + q;
                if (bwd)
                    o[bi] = fget(&in[0], si);
                else
                    o[si] = fget(&in[0], bi);
            }
    *kred = 1;
    return o;
}

/* ATTENTION and ATTENTION_BWD in double, straight from the definition
 * (dropout: ref_drop_u over [B,H,Tq,Tk]) */
static double *ref_attention(const struct op_case *c, const struct hg_tview *in,
                             struct hg_shape *os, double *kred)
{
    const int bwd = c->op == HG_OP_ATTENTION_BWD, which = bwd ? c->attr.attn.which : 0;
    const struct hg_shape *qs = &in[0].shape;
    const int64_t B = qs->dim[0], H = qs->dim[1], Tq = qs->dim[2], Tk = in[1].shape.dim[2],
                  Dh = qs->dim[3];
    const int nids = c->attr.attn.ids != 0;
    const struct hg_tview *keep = c->n_in == 4 + bwd + nids ? &in[3 + bwd] : NULL;
    const int32_t *ids = nids ? in[c->n_in - 1].data : NULL; /* [B] */
    const double scale = c->attr.attn.scale, p = c->attr.attn.p;
    const uint64_t key = hg_rand_key(c->attr.attn.seed, c->step ? c->step : 1);
    if (which == 0)
        *os = *qs;
    else
        *os = (struct hg_shape)S(1 + which, B, H, Tk, Dh);
    /* the stack [1 + which,B,H,T,Dh]: where dq, dk, dv start (-1: none) */
    const int64_t at_q = which == 1 ? -1 : 0;
    const int64_t at_k = which == 0 ? -1 : which == 1 ? 0 : B * H * Tq * Dh;
    const int64_t at_v = at_k < 0 ? -1 : at_k + B * H * Tk * Dh;
    double *o = alloc_out(os);
    double *P = malloc((size_t)(Tq * Tk + 1) * sizeof(double));  /* [Tq,Tk] */
    double *M = malloc((size_t)(Tq * Tk + 1) * sizeof(double));  /* dropout factors */
    double *dS = malloc((size_t)(Tq * Tk + 1) * sizeof(double)); /* [Tq,Tk] */
    char *msk = malloc((size_t)(Tq * Tk + 1));
    for (int64_t bh = 0; bh < B * H; bh++) {
        const int64_t b = bh / H, oq = bh * Tq * Dh, ok = bh * Tk * Dh;
        for (int64_t i = 0; i < Tq; i++) {
            double mx = -INFINITY, se = 0;
            for (int64_t j = 0; j < Tk; j++) {
                double sc = 0;
                for (int64_t d = 0; d < Dh; d++)
                    sc += fget(&in[0], oq + i * Dh + d) * fget(&in[1], ok + j * Dh + d);
                msk[i * Tk + j] = (c->attr.attn.causal && j > i) ||
                                  (keep && iget(keep, b * Tk + j) == 0);
                P[i * Tk + j] = msk[i * Tk + j] ? (double)c->attr.attn.fill : scale * sc;
                mx = fmax(mx, P[i * Tk + j]);
                const struct hg_shape ps = S(B, H, Tq, Tk);
                const float u = p <= 0 ? 1.0f : ref_drop_u(&ps, (bh * Tq + i) * Tk + j, key, ids);
                M[i * Tk + j] = p <= 0 ? 1 : u >= (float)p ? 1 / (1 - p) : 0;
            }
            for (int64_t j = 0; j < Tk; j++)
                se += exp(P[i * Tk + j] - mx);
            for (int64_t j = 0; j < Tk; j++)
                P[i * Tk + j] = exp(P[i * Tk + j] - mx) / se;
        }
        if (!bwd) {
            for (int64_t i = 0; i < Tq; i++)
                for (int64_t d = 0; d < Dh; d++) {
                    double a = 0;
                    for (int64_t j = 0; j < Tk; j++)
                        a += P[i * Tk + j] * M[i * Tk + j] * fget(&in[2], ok + j * Dh + d);
                    o[oq + i * Dh + d] = a;
                }
            continue;
        }
        for (int64_t i = 0; i < Tq; i++) {
            double D = 0;
            for (int64_t j = 0; j < Tk; j++) {
                double dp = 0;
                for (int64_t d = 0; d < Dh; d++)
                    dp += fget(&in[3], oq + i * Dh + d) * fget(&in[2], ok + j * Dh + d);
                dS[i * Tk + j] = dp * M[i * Tk + j];
                D += P[i * Tk + j] * dS[i * Tk + j];
            }
            for (int64_t j = 0; j < Tk; j++)
                dS[i * Tk + j] = msk[i * Tk + j] ? 0 : P[i * Tk + j] * (dS[i * Tk + j] - D);
        }
        for (int64_t d = 0; d < Dh; d++) {
            for (int64_t i = 0; at_q >= 0 && i < Tq; i++) {
                double a = 0;
                for (int64_t j = 0; j < Tk; j++)
                    a += dS[i * Tk + j] * fget(&in[1], ok + j * Dh + d);
                o[at_q + oq + i * Dh + d] = scale * a;
            }
            for (int64_t j = 0; at_k >= 0 && j < Tk; j++) {
                double ak = 0, av = 0;
                for (int64_t i = 0; i < Tq; i++) {
                    ak += dS[i * Tk + j] * fget(&in[0], oq + i * Dh + d);
                    av += P[i * Tk + j] * M[i * Tk + j] * fget(&in[3], oq + i * Dh + d);
                }
                o[at_k + ok + j * Dh + d] = scale * ak;
                o[at_v + ok + j * Dh + d] = av;
            }
        }
    }
    free(P);
    free(M);
    free(dS);
    free(msk);
    *kred = (double)(Tk * Dh);
    return o;
}

static double *ref_masked_fill(const struct op_case *c, const struct hg_tview *in,
                               struct hg_shape *os, double *kred)
{
    *os = in[0].shape;
    int nd = os->ndim;
    int64_t B = os->dim[0], H = nd == 4 ? os->dim[1] : 1, Tq = os->dim[nd - 2],
            Tk = os->dim[nd - 1];
    double *o = alloc_out(os);
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t q = 0; q < Tq; q++)
                for (int64_t k = 0; k < Tk; k++) {
                    int64_t i = ((b * H + h) * Tq + q) * Tk + k;
                    int masked = (c->attr.mask.causal && k > q) ||
                                 (c->n_in > 1 && iget(&in[1], b * Tk + k) == 0);
                    o[i] = masked ? (double)c->attr.mask.fill : fget(&in[0], i);
                }
    *kred = 1;
    return o;
}

static double *ref_reduce(const struct op_case *c, const struct hg_tview *in,
                          struct hg_shape *os, double *kred)
{
    const struct hg_shape *xs = &in[0].shape;
    int ax = c->attr.reduce.axis;
    if (ax == HG_AXIS_ALL) {
        *os = (struct hg_shape)S(1);
    } else {
        *os = *xs;
        os->dim[ax] = 1;
    }
    double *o = alloc_out(os);
    for (int64_t i = 0; i < numel(xs); i++)
        o[bcast_off(os, xs, i)] += fget(&in[0], i);
    double cnt = (double)numel(xs) / (double)numel(os);
    if (c->op == HG_OP_MEAN)
        for (int64_t i = 0; i < numel(os); i++)
            o[i] /= cnt;
    *kred = cnt;
    return o;
}

static double *ref_expand_like(const struct op_case *c, const struct hg_tview *in,
                               struct hg_shape *os, double *kred)
{
    *os = in[1].shape;
    double *o = alloc_out(os);
    for (int64_t i = 0; i < numel(os); i++)
        o[i] = (double)c->attr.reduce.alpha * fget(&in[0], bcast_off(&in[0].shape, os, i));
    *kred = 1;
    return o;
}

/* cross_entropy (logits,t), nll (logp,t), and the _bwd (.., t, dloss) */
static double *ref_loss(const struct op_case *c, const struct hg_tview *in,
                        struct hg_shape *os, double *kred)
{
    const struct hg_shape *xs = &in[0].shape;
    int64_t C = xs->dim[xs->ndim - 1], rows = numel(xs) / C;
    int ce = c->op == HG_OP_CROSS_ENTROPY || c->op == HG_OP_CROSS_ENTROPY_BWD;
    int bwd = c->op == HG_OP_CROSS_ENTROPY_BWD || c->op == HG_OP_NLL_BWD;
    double s = c->attr.ce.smoothing, dl = bwd ? fget(&in[2], 0) : 0;
    if (bwd)
        *os = *xs;
    else
        *os = (struct hg_shape)S(1);
    double *o = alloc_out(os);
    double *lp = malloc((size_t)C * sizeof(double));
    for (int64_t r = 0; r < rows; r++) {
        int64_t t = iget(&in[1], r);
        if (t == c->attr.ce.ignore_index)
            continue;
        double mx = -INFINITY, se = 0;
        for (int64_t j = 0; j < C; j++)
            mx = fmax(mx, fget(&in[0], r * C + j));
        for (int64_t j = 0; j < C; j++)
            se += exp(fget(&in[0], r * C + j) - mx);
        for (int64_t j = 0; j < C; j++)
            lp[j] = ce ? fget(&in[0], r * C + j) - mx - log(se) : fget(&in[0], r * C + j);
        if (!bwd) {
            double sum = 0;
            for (int64_t j = 0; j < C; j++)
                sum += -lp[j];
            o[0] += (1 - s) * -lp[t] + s / (double)C * sum;
        } else {
            for (int64_t j = 0; j < C; j++) {
                double target = (j == t ? 1 - s : 0) + s / (double)C;
                o[r * C + j] = dl * ((ce ? exp(lp[j]) : 0) - target);
            }
        }
    }
    free(lp);
    *kred = bwd ? 1 : (double)(rows * C);
    return o;
}

/* Updates: the "output" is every input after the step, concatenated. */
static double *ref_update(const struct op_case *c, const struct hg_tview *in,
                          struct hg_shape *os, double *kred)
{
    int64_t n = numel(&in[0].shape);
    *os = (struct hg_shape)S(n * c->n_in);
    double *o = alloc_out(os);
    double *p = o, *gr = o + n, *b1 = o + 2 * n, *b2 = o + 3 * n;
    for (int k = 0; k < c->n_in; k++)
        for (int64_t i = 0; i < n; i++)
            o[k * n + i] = fget(&in[k], i);
    double lr = c->lr, gs = c->grad_scale == 0 ? 1 : c->grad_scale;
    for (int k = 0; k < (c->nsteps ? c->nsteps : 1); k++) {
    double t = (double)(c->step ? c->step : 1) + k;
    for (int64_t i = 0; i < n; i++) {
        double g = gr[i] * gs;
        if (c->op == HG_OP_ADADELTA_STEP) {
            double rho = c->attr.adadelta.rho, eps = c->attr.adadelta.eps;
            g += (double)c->attr.adadelta.weight_decay * p[i];
            b1[i] = rho * b1[i] + (1 - rho) * g * g;
            double d = sqrt(b2[i] + eps) / sqrt(b1[i] + eps) * g;
            b2[i] = rho * b2[i] + (1 - rho) * d * d;
            p[i] -= lr * d;
        } else if (c->op == HG_OP_SGD_STEP) {
            double mom = c->attr.sgd.momentum;
            g += (double)c->attr.sgd.weight_decay * p[i];
            double d = g;
            if (mom != 0) {
                b1[i] = mom * b1[i] + g;
                d = c->attr.sgd.nesterov ? g + mom * b1[i] : b1[i];
            }
            p[i] -= lr * d;
        } else {
            double be1 = c->attr.adam.beta1, be2 = c->attr.adam.beta2;
            double wd = c->attr.adam.weight_decay;
            if (c->attr.adam.l2)
                g += wd * p[i]; /* Adam: L2 in the gradient */
            else
                p[i] *= 1 - lr * wd; /* AdamW: decoupled */
            b1[i] = be1 * b1[i] + (1 - be1) * g;
            b2[i] = be2 * b2[i] + (1 - be2) * g * g;
            double mh = b1[i] / (1 - pow(be1, t)), vh = b2[i] / (1 - pow(be2, t));
            p[i] -= lr * mh / (sqrt(vh) + (double)c->attr.adam.eps);
        }
    }
    }
    *kred = 1;
    return o;
}

static const ref_fn refs[HG_OP_COUNT] = {
    [HG_OP_MATMUL] = ref_matmul,
    [HG_OP_MATMUL_REDUCE] = ref_matmul_reduce,
    [HG_OP_CONV2D] = ref_conv2d,
    [HG_OP_CONV2D_BWD_DATA] = ref_conv2d_bwd_data,
    [HG_OP_CONV2D_BWD_FILTER] = ref_conv2d_bwd_filter,
    [HG_OP_MAXPOOL2D] = ref_maxpool2d,
    [HG_OP_MAXPOOL2D_BWD] = ref_maxpool2d_bwd,
    [HG_OP_ADD] = ref_add,
    [HG_OP_SUB] = ref_sub,
    [HG_OP_MUL] = ref_mul,
    [HG_OP_SCALE] = unary_ref,
    [HG_OP_SUM_TO] = ref_sum_to,
    [HG_OP_RELU] = unary_ref,
    [HG_OP_RELU_BWD] = unary_ref,
    [HG_OP_GELU] = unary_ref,
    [HG_OP_GELU_BWD] = unary_ref,
    [HG_OP_TANH] = unary_ref,
    [HG_OP_TANH_BWD] = unary_ref,
    [HG_OP_SOFTMAX] = rowwise_ref,
    [HG_OP_SOFTMAX_BWD] = rowwise_ref,
    [HG_OP_LOG_SOFTMAX] = rowwise_ref,
    [HG_OP_LOG_SOFTMAX_BWD] = rowwise_ref,
    [HG_OP_LAYERNORM] = ln_ref,
    [HG_OP_LAYERNORM_BWD_X] = ln_ref,
    [HG_OP_LAYERNORM_BWD_G] = ln_ref,
    [HG_OP_DROPOUT] = unary_ref,
    [HG_OP_EMBEDDING] = ref_embedding,
    [HG_OP_EMBEDDING_BWD] = ref_embedding_bwd,
    [HG_OP_RESHAPE] = ref_reshape,
    [HG_OP_RESHAPE_LIKE] = ref_reshape,
    [HG_OP_PERMUTE] = ref_permute,
    [HG_OP_CONCAT] = ref_concat,
    [HG_OP_SLICE] = ref_slice,
    [HG_OP_SLICE_BWD] = ref_slice,
    [HG_OP_MASKED_FILL] = ref_masked_fill,
    [HG_OP_ATTENTION] = ref_attention,
    [HG_OP_ATTENTION_BWD] = ref_attention,
    [HG_OP_SUM] = ref_reduce,
    [HG_OP_MEAN] = ref_reduce,
    [HG_OP_EXPAND_LIKE] = ref_expand_like,
    [HG_OP_CROSS_ENTROPY] = ref_loss,
    [HG_OP_CROSS_ENTROPY_BWD] = ref_loss,
    [HG_OP_NLL] = ref_loss,
    [HG_OP_NLL_BWD] = ref_loss,
    [HG_OP_SGD_STEP] = ref_update,
    [HG_OP_ADAMW_STEP] = ref_update,
    [HG_OP_ADADELTA_STEP] = ref_update,
};
/* the comm ops (HG_OPF_COMM) have no kernel and no reference: their shape
 * and cost rules are tested in test_graph.c with the executor's callbacks */
_Static_assert(HG_OP_COUNT == 53, "a new op needs a reference and test cases here");

#ifndef HG_TEST_NO_GRAPH
/* Forward ops whose gradient the graph must produce (GRAD coverage). */
static const enum hg_op grad_ops[] = {
    HG_OP_MATMUL, HG_OP_CONV2D, HG_OP_MAXPOOL2D, HG_OP_ADD, HG_OP_SUB, HG_OP_MUL,
    HG_OP_SCALE, HG_OP_RELU, HG_OP_GELU, HG_OP_TANH, HG_OP_SOFTMAX, HG_OP_LOG_SOFTMAX,
    HG_OP_LAYERNORM, HG_OP_DROPOUT, HG_OP_EMBEDDING, HG_OP_RESHAPE, HG_OP_PERMUTE,
    HG_OP_CONCAT, HG_OP_SLICE, HG_OP_MASKED_FILL, HG_OP_ATTENTION, HG_OP_SUM, HG_OP_MEAN,
    HG_OP_CROSS_ENTROPY, HG_OP_NLL,
};
#endif

/* ------------------------------------------------------------------------ */
/* Reporting                                                                 */

struct tally {
    int ok, fail;
};
static struct tally *tally; /* shared with the per-case children */
static int case_fails;

static const char *op_name(enum hg_op op)
{
    return hg_op_table[op].name ? hg_op_table[op].name : "?";
}

static char *case_label(const struct op_case *c, char *buf, size_t len)
{
    size_t o = 0;
    char sb[96];
    for (int i = 0; i < c->n_in && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? "x" : "",
                              shape_str(&c->in[i], sb, sizeof sb));
    if (c->note && o < len)
        snprintf(buf + o, len - o, " %s", c->note);
    return buf;
}

static void report(int ok, const struct op_case *c, const char *mode, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void report(int ok, const struct op_case *c, const char *mode, const char *fmt, ...)
{
    char lb[256];
    printf("%s %s %s %s", ok ? "ok  " : "FAIL", op_name(c->op), mode,
           case_label(c, lb, sizeof lb));
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        printf(": ");
        vprintf(fmt, ap);
        va_end(ap);
    }
    printf("\n");
    fflush(stdout);
    if (ok) {
        __atomic_fetch_add(&tally->ok, 1, __ATOMIC_SEQ_CST);
    } else {
        __atomic_fetch_add(&tally->fail, 1, __ATOMIC_SEQ_CST);
        case_fails++;
    }
}

/* ------------------------------------------------------------------------ */
/* Inputs                                                                    */

static void make_inputs(const struct op_case *c, int ci, struct hg_tview *in)
{
    rng_state = 0x9E3779B97F4A7C15ull ^ (uint64_t)(ci + 1) * 0xD1B54A32D192ED03ull;
    for (int k = 0; k < 4; k++)
        xorshift64();
    for (int i = 0; i < c->n_in; i++) {
        struct hg_shape s = c->in[i];
        int64_t n = numel(&s);
        in[i].dtype = c->dt[i];
        in[i].shape = s;
        in[i].data = calloc((size_t)(n ? n : 1), dt_size(c->dt[i]));
        if (c->dt[i] == HG_I32) {
            int32_t *p = in[i].data;
            for (int64_t j = 0; j < n; j++) {
                p[j] = (int32_t)(xorshift64() % (uint64_t)(c->imax[i] ? c->imax[i] : 2));
                if (c->ignore_every && j % c->ignore_every == 1)
                    p[j] = c->attr.ce.ignore_index;
            }
            continue;
        }
        float *p = in[i].data;
        switch (c->gen[i]) {
        case G_UNIF:
            for (int64_t j = 0; j < n; j++)
                p[j] = (float)(2 * urand() - 1);
            break;
        case G_WIDE:
            for (int64_t j = 0; j < n; j++)
                p[j] = (float)(6 * urand() - 3);
            break;
        case G_TINY:
            for (int64_t j = 0; j < n; j++)
                p[j] = (float)(0.01 * urand() - 0.005);
            break;
        case G_BIG:
            for (int64_t j = 0; j < n; j++)
                p[j] = (float)(80 + 20 * urand());
            break;
        case G_POS:
            for (int64_t j = 0; j < n; j++)
                p[j] = (float)urand();
            break;
        case G_ONES:
            for (int64_t j = 0; j < n; j++)
                p[j] = 1;
            break;
        case G_AWAY:
            for (int64_t j = 0; j < n; j++)
                p[j] = (float)((0.1 + 0.9 * urand()) * (xorshift64() & 1 ? 1 : -1));
            break;
        case G_TIES:
            for (int64_t j = 0; j < n; j++)
                p[j] = (float)((double)(xorshift64() % 5) * 0.5 - 1.0);
            break;
        case G_DISTINCT: {
            for (int64_t j = 0; j < n; j++)
                p[j] = (float)((double)j * 0.05 - (double)n * 0.025);
            for (int64_t j = n - 1; j > 0; j--) {
                int64_t r = (int64_t)(xorshift64() % (uint64_t)(j + 1));
                float t = p[j];
                p[j] = p[r];
                p[r] = t;
            }
            if (c->note && strstr(c->note, "all negative"))
                for (int64_t j = 0; j < n; j++)
                    p[j] -= (float)n;
            break;
        }
        }
    }
}

static void free_inputs(const struct op_case *c, struct hg_tview *in)
{
    for (int i = 0; i < c->n_in; i++)
        free(in[i].data);
}

static size_t view_bytes(const struct hg_tview *v)
{
    return (size_t)numel(&v->shape) * dt_size(v->dtype);
}

/* ------------------------------------------------------------------------ */
/* Running one kernel                                                        */

/* Runs c's CPU kernel on in -> out (out->data allocated by the caller and
 * filled with `garbage`); the workspace is filled with garbage too. */
static int run_kernel(const struct op_case *c, const struct hg_tview *in,
                      struct hg_tview *out, int nthreads, unsigned char garbage,
                      char *err, size_t errlen)
{
    const struct hg_op_info *oi = &hg_op_table[c->op];
    struct hg_shape ins[HG_MAX_INPUTS];
    for (int i = 0; i < c->n_in; i++)
        ins[i] = in[i].shape;
    size_t ws = 0;
    if (oi->workspace)
        ws = oi->workspace(ins, c->n_in, out ? &out->shape : NULL, &c->attr, nthreads);
    void *wsp = ws ? malloc(ws) : NULL;
    if (wsp)
        memset(wsp, garbage, ws);
    err[0] = 0;
    struct hg_kctx ctx = {
        .nthreads = nthreads,
        .step = c->step ? c->step : 1,
        .lr = c->lr,
        .grad_scale = c->grad_scale == 0 ? 1.0f : c->grad_scale,
        .ws = wsp,
        .ws_bytes = ws,
        .err = err,
        .errlen = errlen,
    };
    struct hg_kargs a = {.in = in, .n_in = c->n_in, .out = out, .attr = &c->attr, .ctx = &ctx};
    hg_kernels_set_threads(nthreads);
    int rc = oi->cpu(&a);
    /* multi-step updates: the same grad again at steps step+1, ... */
    for (int k = 1; rc == 0 && k < c->nsteps; k++) {
        ctx.step++;
        rc = oi->cpu(&a);
    }
    free(wsp);
    return rc;
}

static int run_shape(const struct op_case *c, const struct hg_tview *in,
                     struct hg_shape *os, enum hg_dtype *odt, char *err, size_t errlen)
{
    struct hg_shape ins[HG_MAX_INPUTS];
    enum hg_dtype dts[HG_MAX_INPUTS];
    for (int i = 0; i < c->n_in; i++) {
        ins[i] = in ? in[i].shape : c->in[i];
        dts[i] = c->dt[i];
    }
    memset(os, 0, sizeof *os);
    *odt = HG_F32;
    err[0] = 0;
    return hg_op_table[c->op].shape(ins, dts, c->n_in, &c->attr, os, odt, err, errlen);
}

/* One run: copies the inputs (updates modify them), returns the result as
 * bytes (out, or the inputs after an update) in *res, its size in *nres. */
static int run_once(const struct op_case *c, const struct hg_tview *in0,
                    const struct hg_shape *os, int nthreads, unsigned char garbage,
                    void **res, size_t *nres, char *err, size_t errlen)
{
    int upd = (hg_op_table[c->op].flags & HG_OPF_NO_OUTPUT) != 0;
    struct hg_tview in[HG_MAX_INPUTS], out = {.dtype = HG_F32, .shape = *os};
    size_t tot = 0;
    for (int i = 0; i < c->n_in; i++) {
        in[i] = in0[i];
        size_t b = view_bytes(&in0[i]);
        in[i].data = malloc(b ? b : 1);
        memcpy(in[i].data, in0[i].data, b);
        tot += b;
    }
    size_t ob = (size_t)numel(os) * 4;
    out.data = malloc(ob ? ob : 1);
    memset(out.data, garbage, ob);
    int rc = run_kernel(c, in, upd ? NULL : &out, nthreads, garbage, err, errlen);
    if (upd) {
        unsigned char *p = malloc(tot);
        size_t o = 0;
        for (int i = 0; i < c->n_in; i++) {
            memcpy(p + o, in[i].data, view_bytes(&in[i]));
            o += view_bytes(&in[i]);
        }
        free(out.data);
        *res = p;
        *nres = tot;
    } else {
        *res = out.data;
        *nres = ob;
    }
    for (int i = 0; i < c->n_in; i++)
        free(in[i].data);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Modes                                                                     */

static void mode_value(const struct op_case *c, const struct hg_tview *in)
{
    char err[512], sb1[96], sb2[96];
    struct hg_shape os, rs;
    enum hg_dtype odt;
    int upd = (hg_op_table[c->op].flags & HG_OPF_NO_OUTPUT) != 0;
    if (run_shape(c, in, &os, &odt, err, sizeof err) != 0) {
        report(0, c, "value", "shape rule failed: %s", err);
        return;
    }
    double kred = 1;
    double *ref = refs[c->op](c, in, &rs, &kred);
    if (!upd && !shape_eq(&os, &rs)) {
        report(0, c, "value", "shape rule gives %s, want %s",
               shape_str(&os, sb1, sizeof sb1), shape_str(&rs, sb2, sizeof sb2));
        free(ref);
        return;
    }
    if (!upd && odt != HG_F32) {
        report(0, c, "value", "shape rule gives dtype %d, want f32", (int)odt);
        free(ref);
        return;
    }
    void *r1 = NULL, *r2 = NULL, *r3 = NULL;
    size_t n1 = 0, n2 = 0, n3 = 0;
    if (run_once(c, in, &os, 2, 0xff, &r1, &n1, err, sizeof err) != 0) {
        report(0, c, "value", "kernel returned -1: %s", err);
        free(ref);
        free(r1);
        return;
    }
    /* compare with the reference */
    const float *got = r1;
    int64_t n = (int64_t)(n1 / 4), worst = -1;
    double rtol = 1e-4, atol = 1e-5 * sqrt(kred > 1 ? kred : 1), maxerr = 0, worst_ex = 0;
    for (int64_t i = 0; i < n; i++) {
        double g = got[i], r = ref[i];
        double e;
        if (isinf(r) && g == r)
            e = 0;
        else if (!isfinite(g))
            e = INFINITY;
        else
            e = fabs(g - r);
        double excess = e / (atol + rtol * fabs(r));
        if (isnan(excess)) /* a NaN reference passes only against a NaN */
            excess = isnan(g) && isnan(r) ? 0 : INFINITY;
        if (worst < 0 || excess > worst_ex) {
            worst_ex = excess;
            worst = i;
        }
        if (e > maxerr)
            maxerr = e;
    }
    if (worst_ex > 1)
        report(0, c, "value", "max err %.3g (%.1fx tolerance) at %lld: got %.8g want %.8g",
               maxerr, worst_ex, (long long)worst, (double)got[worst], ref[worst]);
    else
        report(1, c, "value", "max err %.3g", maxerr);
    free(ref);

    /* determinism: a second run (different garbage in out and workspace) */
    int rc = run_once(c, in, &os, 2, 0x55, &r2, &n2, err, sizeof err);
    if (rc != 0 || n2 != n1 || memcmp(r1, r2, n1) != 0) {
        int64_t at = -1;
        for (int64_t i = 0; rc == 0 && i < n; i++)
            if (memcmp((float *)r1 + i, (float *)r2 + i, 4)) {
                at = i;
                break;
            }
        report(0, c, "rerun", "second run differs (rc %d) at %lld: %.9g vs %.9g", rc,
               (long long)at, at >= 0 ? (double)((float *)r1)[at] : 0.0,
               at >= 0 ? (double)((float *)r2)[at] : 0.0);
    } else {
        report(1, c, "rerun", "bitwise identical");
    }
    /* 1, 3 and 4 threads against the 2 above; 3 and 4 also where the CPU
     * has fewer cores (the partition is what must not change) */
    static const int other_threads[] = {1, 3, 4};
    for (int ti = 0; (c->modes & M_THREADS) && ti < 3; ti++) {
        const int nt = other_threads[ti];
        free(r3);
        r3 = NULL;
        rc = run_once(c, in, &os, nt, 0x00, &r3, &n3, err, sizeof err);
        if (rc != 0 || n3 != n1 || memcmp(r1, r3, n1) != 0) {
            int64_t at = -1;
            for (int64_t i = 0; rc == 0 && i < n; i++)
                if (memcmp((float *)r1 + i, (float *)r3 + i, 4)) {
                    at = i;
                    break;
                }
            report(0, c, "threads", "%d vs 2 threads differ (rc %d) at %lld: %.9g vs %.9g",
                   nt, rc, (long long)at, at >= 0 ? (double)((float *)r3)[at] : 0.0,
                   at >= 0 ? (double)((float *)r1)[at] : 0.0);
            break;
        }
        if (ti == 2)
            report(1, c, "threads", "1, 2, 3 and 4 threads bitwise identical");
    }
    free(r1);
    free(r2);
    free(r3);
}

static void mode_error(const struct op_case *c, struct hg_tview *in)
{
    char err[512];
    struct hg_shape os;
    enum hg_dtype odt;
    if (in[c->bad.in].dtype == HG_I32)
        ((int32_t *)in[c->bad.in].data)[c->bad.at] = (int32_t)c->bad.val;
    else
        ((float *)in[c->bad.in].data)[c->bad.at] = (float)c->bad.val;
    if (run_shape(c, in, &os, &odt, err, sizeof err) != 0) {
        report(0, c, "error", "shape rule failed: %s", err);
        return;
    }
    void *r = NULL;
    size_t nr;
    err[0] = 0;
    int rc = run_once(c, in, &os, 2, 0, &r, &nr, err, sizeof err);
    free(r);
    if (rc != -1)
        report(0, c, "error", "kernel returned %d, want -1 (err \"%s\")", rc, err);
    else if (!strstr(err, c->expect))
        report(0, c, "error", "message \"%s\" lacks \"%s\"", err, c->expect);
    else
        report(1, c, "error", "\"%s\"", err);
}

static void mode_shape_err(const struct op_case *c)
{
    char err[512];
    struct hg_shape os;
    enum hg_dtype odt;
    int rc = run_shape(c, NULL, &os, &odt, err, sizeof err);
    if (rc != -1)
        report(0, c, "shape", "shape rule returned %d, want -1", rc);
    else if (!strstr(err, c->expect))
        report(0, c, "shape", "message \"%s\" lacks \"%s\"", err, c->expect);
    else
        report(1, c, "shape", "\"%s\"", err);
}

static void mode_shape_ok(const struct op_case *c)
{
    char err[512], sb1[96], sb2[96];
    struct hg_shape os;
    enum hg_dtype odt;
    int rc = run_shape(c, NULL, &os, &odt, err, sizeof err);
    if (rc != 0)
        report(0, c, "shape", "shape rule returned %d: %s", rc, err);
    else if (!shape_eq(&os, &c->want))
        report(0, c, "shape", "gives %s, want %s", shape_str(&os, sb1, sizeof sb1),
               shape_str(&c->want, sb2, sizeof sb2));
    else
        report(1, c, "shape", "%s", shape_str(&os, sb1, sizeof sb1));
}

/* Runs c as op with inputs in[n] and attribute at: the result in *res
 * (malloc'ed, *nres bytes), or -1 with err. */
static int run_as(const struct op_case *c, enum hg_op op, const struct hg_tview *in, int n,
                  const union hg_attr *at, void **res, size_t *nres, char *err, size_t errlen)
{
    struct op_case k = *c;
    struct hg_shape os;
    enum hg_dtype odt;
    k.op = op;
    k.n_in = n;
    k.attr = *at;
    for (int i = 0; i < n; i++) {
        k.in[i] = in[i].shape;
        k.dt[i] = in[i].dtype;
    }
    *res = NULL;
    if (run_shape(&k, in, &os, &odt, err, errlen) != 0)
        return -1;
    return run_once(&k, in, &os, 2, 0xff, res, nres, err, errlen);
}

/* A vocabulary shard (tensor parallelism, attr emb): the table's rows
 * [r0, r1) of V.  Its forward equals the whole table's rows where the id
 * is in the shard and is 0 elsewhere; its backward equals the whole
 * gradient's rows [r0, r1), bitwise (the same sums in the same order).
 * Shards: one row, the first half, an empty one, the rest. */
static void mode_embshard(const struct op_case *c, const struct hg_tview *in)
{
    const int64_t V = in[0].shape.dim[0], D = in[0].shape.dim[1], n = numel(&in[1].shape);
    const int64_t cut[] = {0, 1, V / 2, V / 2, V};
    const int32_t *ids = in[1].data;
    char err[512];
    union hg_attr whole = {0};
    struct hg_tview bin[3] = {in[1], {.dtype = HG_F32, .shape = in[1].shape}, in[0]};
    bin[1].shape.dim[bin[1].shape.ndim++] = D;
    float *dy = malloc((size_t)(n * D + 1) * sizeof(float)); /* [n, D] */
    for (int64_t i = 0; i < n * D; i++)
        dy[i] = (float)(2 * urand() - 1);
    bin[1].data = dy;
    void *yw = NULL, *gw = NULL, *ys = NULL, *gs = NULL; /* [n, D], [V, D], [n, D], [rows, D] */
    size_t nyw, ngw, nys, ngs;
    int ok = run_as(c, HG_OP_EMBEDDING, in, 2, &whole, &yw, &nyw, err, sizeof err) == 0 &&
             run_as(c, HG_OP_EMBEDDING_BWD, bin, 3, &whole, &gw, &ngw, err, sizeof err) == 0;
    if (!ok)
        report(0, c, "embshard", "the whole table: %s", err);
    for (int s = 0; ok && s + 1 < (int)(sizeof cut / sizeof cut[0]); s++) {
        const int64_t r0 = cut[s], r1 = cut[s + 1];
        union hg_attr at = {.emb = {.row0 = r0, .vocab = V}};
        struct hg_tview w = in[0]; /* rows [r0, r1) of the table: [r1 - r0, D] */
        w.shape.dim[0] = r1 - r0;
        w.data = (float *)in[0].data + r0 * D;
        struct hg_tview sin[2] = {w, in[1]}, sbin[3] = {bin[0], bin[1], w};
        free(ys);
        free(gs);
        if (run_as(c, HG_OP_EMBEDDING, sin, 2, &at, &ys, &nys, err, sizeof err) != 0 ||
            run_as(c, HG_OP_EMBEDDING_BWD, sbin, 3, &at, &gs, &ngs, err, sizeof err) != 0) {
            report(0, c, "embshard", "rows [%lld, %lld): %s", (long long)r0, (long long)r1,
                   err);
            ok = 0;
            break;
        }
        int64_t bad = -1;
        for (int64_t i = 0; i < n && bad < 0 && nys == nyw; i++) {
            int in_shard = ids[i] >= r0 && ids[i] < r1;
            for (int64_t d = 0; d < D && bad < 0; d++) {
                float y = ((float *)ys)[i * D + d];
                if (memcmp(&y, in_shard ? (float *)yw + i * D + d : &(float){0}, 4))
                    bad = i;
            }
        }
        int fw = nys == nyw && bad < 0, bw = ngs == (size_t)((r1 - r0) * D) * 4 &&
                                               !memcmp(gs, (float *)gw + r0 * D, ngs);
        report(fw && bw, c, "embshard", "rows [%lld, %lld) of %lld: forward %s (first bad "
               "position %lld), backward %s", (long long)r0, (long long)r1, (long long)V,
               fw ? "equal" : "differs", (long long)bad, bw ? "equal" : "differs");
    }
    free(ys);
    free(gs);
    free(yw);
    free(gw);
    free(dy);
}

/* Dropout on ones: same (seed, step) -> same mask; another step or seed ->
 * another mask; keep rate within 3 sigma of 1-p; kept values 1/(1-p). */
/* Rows [a,b) of a batch, i.e. another rank's or micro-batch's share of
 * it, padded to another length, must draw the masks they draw in the whole
 * batch (docs/reproducibility.md, "Dropout"): the op (DROPOUT, or
 * ATTENTION with p > 0) runs on the whole batch with sample ids, then on
 * rows 1..B-2 with theirs, then (DROPOUT, 3-D and up) on those rows padded
 * by 3 positions on axis 1.  Every output row agrees bitwise. */
static void mode_droprows(const struct op_case *c, const struct hg_tview *in)
{
    char err[512];
    struct op_case cc = *c;
    const int attn = c->op == HG_OP_ATTENTION;
    const struct hg_shape *s0 = &in[0].shape;
    const int64_t B = s0->dim[0], a = 1, n = B - 2;
    int32_t ids[64]; /* [B] */
    HG_CHECK(B >= 3 && B <= 64);
    for (int64_t b = 0; b < B; b++)
        ids[b] = (int32_t)(1000 + 37 * b);
    cc.n_in = c->n_in + 1;
    if (attn)
        cc.attr.attn.ids = 1;
    struct hg_tview w[HG_MAX_INPUTS], r[HG_MAX_INPUTS];
    for (int i = 0; i < c->n_in; i++) {
        w[i] = in[i];
        r[i] = in[i];
        r[i].shape.dim[0] = n; /* rows [a, a+n) of every batch input */
        r[i].data = (char *)in[i].data + (size_t)(a * (numel(&in[i].shape) / B)) *
                    hg_dtype_size(in[i].dtype);
    }
    w[c->n_in] = (struct hg_tview){.data = ids, .dtype = HG_I32, .shape = S(B)};
    r[c->n_in] = (struct hg_tview){.data = ids + a, .dtype = HG_I32, .shape = S(n)};
    struct hg_shape os = *s0, ors = os; /* both ops: the output is x's or q's shape */
    ors.dim[0] = n;
    const int64_t row = numel(&os) / B; /* floats per batch row */
    float *yw = malloc((size_t)numel(&os) * 4), *yr = malloc((size_t)numel(&ors) * 4);
    struct hg_tview ow = {.data = yw, .dtype = HG_F32, .shape = os};
    struct hg_tview orr = {.data = yr, .dtype = HG_F32, .shape = ors};
    if (run_kernel(&cc, w, &ow, 2, 0x5a, err, sizeof err) != 0 ||
        run_kernel(&cc, r, &orr, 3, 0xa5, err, sizeof err) != 0) {
        report(0, c, "droprows", "kernel returned -1: %s", err);
        goto out;
    }
    if (memcmp(yr, yw + a * row, (size_t)(n * row) * 4) != 0) {
        report(0, c, "droprows", "rows [%lld,%lld) alone draw other masks than in the batch",
               (long long)a, (long long)(a + n));
        goto out;
    }
    if (!attn && s0->ndim >= 3) {
        /* the same rows padded on axis 1 (another rank's longest sequence) */
        struct hg_shape ps = ors;
        ps.dim[1] += 3;
        const int64_t inner = numel(s0) / (s0->dim[0] * s0->dim[1]); /* per position */
        float *xp = calloc((size_t)numel(&ps), 4), *yp = malloc((size_t)numel(&ps) * 4);
        for (int64_t b = 0; b < n; b++)
            memcpy(xp + b * ps.dim[1] * inner, (const float *)r[0].data + b * row,
                   (size_t)row * 4);
        struct hg_tview pin[2] = {{.data = xp, .dtype = HG_F32, .shape = ps}, r[1]};
        struct hg_tview op = {.data = yp, .dtype = HG_F32, .shape = ps};
        int bad = run_kernel(&cc, pin, &op, 2, 0x33, err, sizeof err) != 0;
        for (int64_t b = 0; b < n && !bad; b++)
            bad = memcmp(yp + b * ps.dim[1] * inner, yw + (a + b) * row, (size_t)row * 4) != 0;
        free(xp);
        free(yp);
        if (bad) {
            report(0, c, "droprows", "rows padded to %lld positions draw other masks",
                   (long long)ps.dim[1]);
            goto out;
        }
    }
    report(1, c, "droprows", "rows [%lld,%lld) alone%s: the batch's masks", (long long)a,
           (long long)(a + n), !attn && s0->ndim >= 3 ? " and padded" : "");
out:
    free(yw);
    free(yr);
}

static void mode_dropstat(const struct op_case *c, const struct hg_tview *in)
{
    char err[512];
    struct op_case cc = *c;
    int64_t n = numel(&in[0].shape);
    double p = c->attr.dropout.p;
    void *m[4] = {0};
    size_t nm;
    const uint64_t steps[4] = {5, 5, 6, 5};
    for (int k = 0; k < 4; k++) {
        cc.step = steps[k];
        cc.attr.dropout.seed = c->attr.dropout.seed + (k == 3);
        if (run_once(&cc, in, &in[0].shape, 2, (unsigned char)(k * 0x33), &m[k], &nm,
                     err, sizeof err) != 0) {
            report(0, c, "dropstat", "kernel returned -1: %s", err);
            goto out;
        }
    }
    int64_t kept = 0, bad = 0, diff_step = 0, diff_seed = 0;
    const float *a = m[0], *b = m[2], *s = m[3];
    for (int64_t i = 0; i < n; i++) {
        if (a[i] != 0) {
            kept++;
            if (fabs(a[i] - 1 / (1 - p)) > 1e-6)
                bad++;
        }
        diff_step += (a[i] != 0) != (b[i] != 0);
        diff_seed += (a[i] != 0) != (s[i] != 0);
    }
    double rate = (double)kept / (double)n, sigma = sqrt(p * (1 - p) / (double)n);
    double want_diff = 2 * p * (1 - p) * (double)n;
    if (memcmp(m[0], m[1], (size_t)n * 4) != 0)
        report(0, c, "dropstat", "same seed and step give different masks");
    else if (fabs(rate - (1 - p)) > 3 * sigma)
        report(0, c, "dropstat", "keep rate %.5f, want %.5f +- %.5f", rate, 1 - p, 3 * sigma);
    else if (bad)
        report(0, c, "dropstat", "%lld kept values differ from 1/(1-p)", (long long)bad);
    else if (fabs((double)diff_step - want_diff) > 0.1 * want_diff)
        report(0, c, "dropstat", "step 5 vs 6 masks differ at %lld places, want ~%.0f",
               (long long)diff_step, want_diff);
    else if (fabs((double)diff_seed - want_diff) > 0.1 * want_diff)
        report(0, c, "dropstat", "seed s vs s+1 masks differ at %lld places, want ~%.0f",
               (long long)diff_seed, want_diff);
    else
        report(1, c, "dropstat", "keep rate %.5f (want %.2f +- %.5f), step/seed change %lld/%lld",
               rate, 1 - p, 3 * sigma, (long long)diff_step, (long long)diff_seed);
out:
    for (int k = 0; k < 4; k++)
        free(m[k]);
}

#ifndef HG_TEST_NO_GRAPH
/* loss = sum(out * R) in double (or out[0] when R < 0) */
static double graph_loss(struct hg_exec *ex, int out, int R, int64_t n)
{
    const float *o = hg_exec_data(ex, out);
    if (R < 0)
        return o[0];
    const float *r = hg_exec_data(ex, R);
    double s = 0;
    for (int64_t i = 0; i < n; i++)
        s += (double)o[i] * r[i];
    return s;
}

static void mode_grad(const struct op_case *c, int ci, const struct hg_tview *in)
{
    char err[512];
    struct hg_graph *g = hg_graph_new();
    int t[HG_MAX_INPUTS];
    for (int i = 0; i < c->n_in; i++) {
        char name[16];
        snprintf(name, sizeof name, "in%d", i);
        if (in[i].dtype != HG_F32)
            t[i] = hg_graph_input(g, name, in[i].dtype, in[i].shape.ndim, in[i].shape.dim, -1);
        else
            t[i] = hg_graph_param(g, name, in[i].shape.ndim, in[i].shape.dim, HG_INIT_ZERO, 0);
    }
    int out = hg_graph_op(g, c->op, t, c->n_in, &c->attr);
    struct hg_shape os = hg_graph_tensor(g, out)->shape;
    int64_t no = numel(&os);
    int R = -1, loss = out;
    if (no != 1) {
        R = hg_graph_input(g, "R", HG_F32, os.ndim, os.dim, -1);
        loss = hg_sum(g, hg_mul(g, out, R), HG_AXIS_ALL);
    }
    struct hg_exec *ex = NULL;
    int *order = NULL;
    float *grads[HG_MAX_INPUTS] = {0};
    if (hg_graph_backward(g, loss) != 0) {
        report(0, c, "grad", "hg_graph_backward failed");
        goto out;
    }
    order = malloc((size_t)hg_graph_n_nodes(g) * sizeof(int));
    int n = hg_graph_order(g, HG_PH_FORWARD | HG_PH_BACKWARD, order);
    int prod = hg_graph_tensor(g, out)->producer, nf = -1;
    for (int k = 0; k < n; k++)
        if (order[k] == prod)
            nf = k + 1;
    if (nf < 0) {
        report(0, c, "grad", "op node not in the order");
        goto out;
    }
    ex = hg_exec_new(g, order, n, err, sizeof err);
    if (!ex) {
        report(0, c, "grad", "hg_exec_new: %s", err);
        goto out;
    }
    struct hg_step st = {.step = c->step ? c->step : 1, .lr = 0, .grad_scale = 1,
                         .nthreads = 2};
    if (hg_exec_prepare(ex, &st, err, sizeof err) != 0) {
        report(0, c, "grad", "hg_exec_prepare: %s", err);
        goto out;
    }
    for (int i = 0; i < c->n_in; i++)
        memcpy(hg_exec_data(ex, t[i]), in[i].data, view_bytes(&in[i]));
    rng_state ^= 0xABCDEF12345ull * (uint64_t)(ci + 7);
    if (R >= 0) {
        float *r = hg_exec_data(ex, R);
        for (int64_t i = 0; i < no; i++)
            r[i] = (float)(2 * urand() - 1);
    }
    if (hg_exec_run(ex, &st, 0, n, err, sizeof err) != 0) {
        report(0, c, "grad", "hg_exec_run: %s", err);
        goto out;
    }
    for (int i = 0; i < c->n_in; i++) {
        if (in[i].dtype != HG_F32)
            continue;
        int gt = hg_graph_grad(g, t[i]);
        if (gt < 0) {
            report(0, c, "grad", "no gradient for input %d", i);
            goto out;
        }
        size_t b = view_bytes(&in[i]);
        grads[i] = malloc(b);
        memcpy(grads[i], hg_exec_data(ex, gt), b);
    }
    /* central differences, re-running the forward up to the op */
    const double eps = 1e-2, rtol = 2e-2, atol = 2e-3;
    double worst_ex = 0, worst_g = 0, worst_fd = 0;
    int worst_in = -1;
    int64_t worst_at = -1, npts = 0;
    for (int i = 0; i < c->n_in; i++) {
        if (in[i].dtype != HG_F32)
            continue;
        float *p = hg_exec_data(ex, t[i]);
        int64_t ne = numel(&in[i].shape);
        int64_t m = ne <= 80 ? ne : 80;
        for (int64_t k = 0; k < m; k++) {
            int64_t j = ne <= 80 ? k : (int64_t)(xorshift64() % (uint64_t)ne);
            float x0 = p[j], xp = (float)(x0 + eps), xm = (float)(x0 - eps);
            p[j] = xp;
            int rc = hg_exec_run(ex, &st, 0, nf, err, sizeof err);
            double lp = graph_loss(ex, out, R, no);
            p[j] = xm;
            rc |= hg_exec_run(ex, &st, 0, nf, err, sizeof err);
            double lm = graph_loss(ex, out, R, no);
            p[j] = x0;
            if (rc != 0) {
                report(0, c, "grad", "forward re-run: %s", err);
                goto out;
            }
            double fd = (lp - lm) / ((double)xp - (double)xm), gv = grads[i][j];
            double ex_ = fabs(gv - fd) / (atol + rtol * fabs(fd));
            if (!isfinite(gv))
                ex_ = INFINITY;
            if (worst_in < 0 || ex_ > worst_ex) {
                worst_ex = ex_;
                worst_in = i;
                worst_at = j;
                worst_g = gv;
                worst_fd = fd;
            }
            npts++;
        }
    }
    if (worst_ex > 1)
        report(0, c, "grad", "input %d at %lld: autodiff %.6g, finite diff %.6g (%.1fx tol)",
               worst_in, (long long)worst_at, worst_g, worst_fd, worst_ex);
    else
        report(1, c, "grad", "%lld points, worst %.2fx tolerance", (long long)npts, worst_ex);
out:
    for (int i = 0; i < c->n_in; i++)
        free(grads[i]);
    if (ex)
        hg_exec_free(ex);
    free(order);
    hg_graph_free(g);
}
#endif

/* ---- fused attention against the unfused chain, through hg_layer_mha ---- */

struct mha_run {
    float *y, *grads; /* [B,Tq,D], the grad block */
    size_t ny, ng;
    int n_attn, n_softmax;
};

struct mha_cfg {
    int64_t B, Tq, Tk, D;
    int heads, causal, keep, cross, all_masked;
    float p;
    const char *note;
};

/* Builds mha (fused or not), loss = sum(y * R), runs forward and backward
 * at step 3 with nthreads; inputs, params and R from fixed streams. */
static int mha_run(const struct mha_cfg *m, int fused, int nthreads, struct mha_run *r,
                   char *err, size_t errlen)
{
    struct hg_graph *g = hg_graph_new();
    hg_graph_set_fused_attention(g, fused);
    int64_t dq[3] = {m->B, m->Tq, m->D}, dk[3] = {m->B, m->Tk, m->D}, dm[2] = {m->B, m->Tk};
    int xq = hg_graph_input(g, "xq", HG_F32, 3, dq, 0);
    int xkv = m->cross ? hg_graph_input(g, "xkv", HG_F32, 3, dk, 0) : xq;
    int keep = m->keep ? hg_graph_input(g, "keep", HG_I32, 2, dm, 0) : -1;
    int y = hg_layer_mha(g, "attn", xq, xkv, keep, m->D, m->heads, m->causal, m->p, 1234);
    int R = hg_graph_input(g, "R", HG_F32, 3, dq, 0);
    int loss = hg_sum(g, hg_mul(g, y, R), HG_AXIS_ALL);
    hg_graph_keep(g, y);
    hg_graph_backward(g, loss);
    memset(r, 0, sizeof *r);
    for (int n = 0; n < hg_graph_n_nodes(g); n++) {
        r->n_attn += hg_graph_node(g, n)->op == HG_OP_ATTENTION;
        r->n_softmax += hg_graph_node(g, n)->op == HG_OP_SOFTMAX;
    }
    int *order = malloc((size_t)hg_graph_n_nodes(g) * sizeof(int));
    int n = hg_graph_order(g, HG_PH_FORWARD | HG_PH_BACKWARD, order);
    struct hg_exec *ex = hg_exec_new(g, order, n, err, errlen);
    struct hg_step st = {.step = 3, .grad_scale = 1, .nthreads = nthreads};
    int rc = -1;
    if (!ex || hg_exec_prepare(ex, &st, err, errlen) != 0)
        goto out;
    size_t np;
    float *pb = hg_exec_param_block(ex, &np);
    rng_state = 0x1234567ull;
    for (size_t i = 0; i < np; i++)
        pb[i] = (float)(urand() - 0.5);
    const int ins[3] = {xq, m->cross ? xkv : -1, R};
    for (int k = 0; k < 3; k++) {
        if (ins[k] < 0)
            continue;
        float *x = hg_exec_data(ex, ins[k]);
        for (int64_t i = 0; i < numel(&hg_graph_tensor(g, ins[k])->shape); i++)
            x[i] = (float)(2 * urand() - 1);
    }
    if (keep >= 0) {
        int32_t *kp = hg_exec_data(ex, keep);
        for (int64_t b = 0; b < m->B; b++)
            for (int64_t j = 0; j < m->Tk; j++) /* the last keys of a row padded */
                kp[b * m->Tk + j] = m->all_masked && b == 1 ? 0 : j < m->Tk - b % 3;
    }
    if (hg_exec_run(ex, &st, 0, n, err, errlen) != 0)
        goto out;
    r->ny = (size_t)numel(&hg_graph_tensor(g, y)->shape);
    r->y = malloc(r->ny * sizeof(float));
    memcpy(r->y, hg_exec_data(ex, y), r->ny * sizeof(float));
    const float *gb = hg_exec_grad_block(ex, &r->ng);
    r->grads = malloc(r->ng * sizeof(float));
    memcpy(r->grads, gb, r->ng * sizeof(float));
    rc = 0;
out:
    if (ex)
        hg_exec_free(ex);
    free(order);
    hg_graph_free(g);
    return rc;
}

/* max |a - b| / max |b| */
static double rel_diff(const float *a, const float *b, size_t n)
{
    double d = 0, m = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)a[i] - b[i]);
        d = isfinite(a[i]) ? (e > d ? e : d) : INFINITY;
        m = fabs(b[i]) > m ? fabs(b[i]) : m;
    }
    return d / (m > 0 ? m : 1);
}

static void attention_vs_unfused(void)
{
    static const struct mha_cfg cfgs[] = {
        {.B = 2, .Tq = 5, .Tk = 5, .D = 8, .heads = 2, .note = "self"},
        {.B = 3, .Tq = 6, .Tk = 6, .D = 12, .heads = 3, .causal = 1, .keep = 1, .p = 0.2f,
         .note = "self causal + keep, dropout 0.2"},
        {.B = 3, .Tq = 3, .Tk = 7, .D = 8, .heads = 2, .keep = 1, .cross = 1, .p = 0.2f,
         .note = "cross Tq 3 Tk 7 keep, dropout 0.2"},
        {.B = 2, .Tq = 7, .Tk = 4, .D = 16, .heads = 4, .cross = 1, .p = 0.3f,
         .note = "cross Tq 7 Tk 4, dropout 0.3"},
        {.B = 3, .Tq = 4, .Tk = 5, .D = 8, .heads = 2, .keep = 1, .cross = 1, .all_masked = 1,
         .p = 0.1f, .note = "cross, a sentence with every key masked"},
        {.B = 4, .Tq = 33, .Tk = 33, .D = 64, .heads = 4, .causal = 1, .keep = 1, .p = 0.1f,
         .note = "self causal + keep T 33, dropout 0.1"},
    };
    for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
        const struct mha_cfg *m = &cfgs[i];
        struct op_case c = {.op = HG_OP_ATTENTION, .note = m->note};
        struct mha_run u, f, t;
        char err[512];
        if (mha_run(m, 0, 2, &u, err, sizeof err) != 0 ||
            mha_run(m, 1, 2, &f, err, sizeof err) != 0) {
            report(0, &c, "vs-unfused", "%s", err);
            continue;
        }
        double ey = rel_diff(f.y, u.y, u.ny), eg = rel_diff(f.grads, u.grads, u.ng);
        int ok = f.n_attn == 1 && f.n_softmax == 0 && u.n_attn == 0 && u.n_softmax == 1 &&
                 f.ng == u.ng && ey <= 2e-6 && eg <= 2e-5;
        report(ok, &c, "vs-unfused", "%d/%d attention, %d/%d softmax nodes; output rel "
               "err %.3g, gradients %.3g", f.n_attn, u.n_attn, f.n_softmax, u.n_softmax,
               ey, eg);
        /* the whole fused graph: 1 and 3 threads bitwise the 2 above */
        for (int nt = 1; nt <= 3; nt += 2) {
            if (mha_run(m, 1, nt, &t, err, sizeof err) != 0) {
                report(0, &c, "vs-unfused", "%s", err);
                break;
            }
            int same = t.ny == f.ny && t.ng == f.ng &&
                       !memcmp(t.y, f.y, f.ny * sizeof(float)) &&
                       !memcmp(t.grads, f.grads, f.ng * sizeof(float));
            report(same, &c, "threads", "mha forward + backward, %d vs 2 threads %s", nt,
                   same ? "bitwise identical" : "differ");
            free(t.y);
            free(t.grads);
        }
        free(u.y);
        free(u.grads);
        free(f.y);
        free(f.grads);
    }
}

static void run_case(int ci)
{
    const struct op_case *c = &cases[ci];
    struct hg_tview in[HG_MAX_INPUTS];
    if (c->modes & M_VALUE) {
        make_inputs(c, ci, in);
        mode_value(c, in);
        free_inputs(c, in);
    }
    if (c->modes & M_ERROR) {
        make_inputs(c, ci, in);
        mode_error(c, in);
        free_inputs(c, in);
    }
    if (c->modes & M_SHAPE_ERR)
        mode_shape_err(c);
    if (c->modes & M_SHAPE_OK)
        mode_shape_ok(c);
    if (c->modes & M_EMBSHARD) {
        make_inputs(c, ci, in);
        mode_embshard(c, in);
        free_inputs(c, in);
    }
    if (c->modes & M_DROPSTAT) {
        make_inputs(c, ci, in);
        mode_dropstat(c, in);
        free_inputs(c, in);
    }
    if (c->modes & M_DROPROWS) {
        make_inputs(c, ci, in);
        mode_droprows(c, in);
        free_inputs(c, in);
    }
    if (c->modes & M_GRAD) {
#ifndef HG_TEST_NO_GRAPH
        make_inputs(c, ci, in);
        mode_grad(c, ci, in);
        free_inputs(c, in);
#endif
    }
}

/* Every op has a value case, every differentiable op a grad case. */
static void check_coverage(void)
{
    for (int op = 0; op < HG_OP_COUNT; op++) {
        if (hg_op_table[op].flags & HG_OPF_COMM) {
            /* no kernel: the executor hands them to its comm callbacks */
            const struct hg_op_info *oi = &hg_op_table[op];
            if (oi->cpu || oi->cuda || !oi->shape || !oi->cost) {
                printf("FAIL coverage: comm op %s has a kernel or lacks a rule\n",
                       op_name((enum hg_op)op));
                tally->fail++;
            }
            continue;
        }
        int have = 0;
        for (int i = 0; i < N_CASES; i++)
            have |= cases[i].op == (enum hg_op)op && (cases[i].modes & M_VALUE);
        if (!have || !refs[op]) {
            printf("FAIL coverage: op %s has no value case\n", op_name((enum hg_op)op));
            tally->fail++;
        }
    }
#ifndef HG_TEST_NO_GRAPH
    for (size_t k = 0; k < sizeof grad_ops / sizeof grad_ops[0]; k++) {
        int have = 0;
        for (int i = 0; i < N_CASES; i++)
            have |= cases[i].op == grad_ops[k] && (cases[i].modes & M_GRAD);
        if (!have) {
            printf("FAIL coverage: op %s has no grad case\n", op_name(grad_ops[k]));
            tally->fail++;
        }
    }
#endif
}

int main(int argc, char **argv)
{
    const char *filter = NULL;
    int nofork = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--nofork"))
            nofork = 1;
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: %s [op-name-substring] [--nofork]\n", argv[0]);
            return 0;
        } else
            filter = argv[i];
    }
    char err[256];
    if (hg_kernels_init(err, sizeof err) != 0) {
        fprintf(stderr, "hg_kernels_init: %s\n", err);
        return 1;
    }
    printf("BLAS: %s; ISA %s\n", hg_kernels_blas_name() ? hg_kernels_blas_name() : "?",
           hg_kernels_isa_name());
    tally = mmap(NULL, sizeof *tally, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (tally == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    memset(tally, 0, sizeof *tally);
    if (!filter)
        check_coverage();
    int ncases = 0;
    for (int ci = 0; ci < N_CASES; ci++) {
        const struct op_case *c = &cases[ci];
        if (filter && !strstr(op_name(c->op), filter))
            continue;
        ncases++;
        fflush(stdout);
        if (nofork) {
            run_case(ci);
            continue;
        }
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            return 1;
        }
        if (pid == 0) {
            alarm(120);
            run_case(ci);
            fflush(stdout);
            _exit(0);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        if (WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0)) {
            char lb[256];
            printf("FAIL %s %s: crashed (%s %d)\n", op_name(c->op), case_label(c, lb, sizeof lb),
                   WIFSIGNALED(status) ? "signal" : "exit", WIFSIGNALED(status)
                   ? WTERMSIG(status) : WEXITSTATUS(status));
            tally->fail++;
        }
    }
#ifndef HG_TEST_NO_GRAPH
    if (!filter || strstr("attention", filter)) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            alarm(120);
            attention_vs_unfused();
            fflush(stdout);
            _exit(0);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            printf("FAIL attention vs-unfused: crashed\n");
            tally->fail++;
        }
    }
#endif
    printf("\n%d cases, %d checks passed, %d failed\n", ncases, tally->ok, tally->fail);
    return tally->fail ? 1 : 0;
}
