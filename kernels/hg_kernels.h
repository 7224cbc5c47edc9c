/* hg_kernels.h - the kernels room: shapes, the op table.
 *
 * One enum of ops; every table is indexed by it.  Each op has exactly one
 * output (or none for update ops), a shape rule, a cost rule and a CPU
 * forward kernel.  Backward passes are ops of their own (CONV2D_BWD_DATA,
 * ...); which ones to append is the graph's business (graph/autodiff.c).
 * Nothing here knows about graphs, ranks or devices other than its own.
 * Dtypes, the check macros, errors and the RNG are the base room's
 * (base/hg_base.h, included here so that kernel users get them too).
 */
#ifndef HG_KERNELS_H
#define HG_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "base/hg_base.h" /* HG_CHECK, hg_kerr, HG_HD, dtypes, the RNG */

#ifdef __cplusplus
extern "C" {
#endif

#define HG_MAX_DIMS 6
#define HG_MAX_INPUTS 8

struct hg_shape {
    int ndim;
    int64_t dim[HG_MAX_DIMS];
};
int64_t hg_shape_numel(const struct hg_shape *s);
int hg_shape_equal(const struct hg_shape *a, const struct hg_shape *b);
/* Writes "[2,3,4]" into buf; returns buf. */
char *hg_shape_str(const struct hg_shape *s, char *buf, size_t len);

/* A tensor as a kernel sees it: contiguous, row-major. */
struct hg_tview {
    void *data;
    enum hg_dtype dtype;
    struct hg_shape shape;
};

#define HG_AXIS_ALL 127 /* reductions over every axis */

/* Per-op attributes: one member per op family, zero-initialise the rest. */
union hg_attr {
    struct { int trans_a, trans_b; float alpha; } mm;
    struct { int kh, kw, stride_h, stride_w, pad_h, pad_w; } conv;
    struct { int kh, kw, stride, pad; } pool;
    struct { float alpha; } scale;
    struct { int axis; float alpha; } reduce; /* SUM/MEAN/EXPAND_LIKE */
    struct { int ndim; int64_t dim[HG_MAX_DIMS]; } reshape; /* 0 = keep, -1 = infer */
    struct { int ndim; int perm[HG_MAX_DIMS]; } permute;
    struct { int axis; } concat;
    struct { int axis; int64_t start, len; } slice;
    struct { float p; uint64_t seed; } dropout;
    struct { int causal; float fill; } mask;
    /* ATTENTION(_BWD): scores scale, masked scores' fill, dropout p and
     * seed on the probabilities (DROPOUT's mask over [B,H,Tq,Tk]), causal
     * (k > q masked); which: the backward's output (0 dq, 1 dk and dv, 2
     * dq, dk and dv: Tq == Tk); self: Tq == Tk whatever the batch (q and k
     * from one sequence), so the backward can be one which-2 node; ids:
     * the last input is the rows' sample ids [B] (I32), which key the
     * dropout masks as DROPOUT's second input does */
    struct { float scale, fill, p; int causal, which, self, ids; uint64_t seed; } attn;
    struct { float eps; } ln;
    struct { int ignore_index; float smoothing; } ce;
    /* EMBEDDING(_BWD) of a vocabulary shard (tensor parallelism): the
     * table holds rows [row0, row0 + V) of a vocabulary of `vocab` ids;
     * ids are checked against [0, vocab), those outside the shard look up
     * zeros and get no gradient.  vocab 0: the whole table (row0 0). */
    struct { int64_t row0, vocab; } emb;
    /* RESHARD: a tensor-parallel collective over comm group `group`
     * (controller/tp.c's callbacks): `kind` says which, the output is the
     * input with dim[axis] = len (axis -1: the input's shape); tag tells
     * the group's collectives apart */
    struct { int group, tag, kind, axis; int64_t len; } reshard;
    struct { float momentum, weight_decay; int nesterov; } sgd;
    /* l2 last, so {b1, b2, eps, wd} still means AdamW: 0 = AdamW (decoupled
     * decay), 1 = Adam (wd * param added to the gradient, torch.optim.Adam) */
    struct { float beta1, beta2, eps, weight_decay; int l2; } adam;
    struct { float rho, eps, weight_decay; } adadelta;
    /* communication ops (HG_OPF_COMM): group 0 is the job, others an id in
     * the table of whoever runs the plan; peer is a rank of the group (the
     * other end of SEND/RECV, the server of PS_*); tag tells one pair's
     * messages apart.  ALLREDUCE/PS_*: count floats from the first input to
     * the last of one flat block (0 with one input: that tensor).  RECV:
     * the output's dtype, dims (HG_SYM allowed; int32 so that the union
     * keeps its size, the plug-in ABI) and batch axis; SEND: dtype is its
     * input's. */
    struct {
        int group, peer, tag, dtype, ndim, batch_axis;
        int32_t dim[HG_MAX_DIMS];
        int64_t count;
    } comm;
};

enum hg_op {
    /* linear algebra */
    HG_OP_MATMUL,          /* (a[..,M,K], b[..,K,N] or b[K,N]) -> [..,M,N]; mm */
    HG_OP_MATMUL_REDUCE,   /* (x[..,K], d[..,N]) -> [K,N] = sum over rows x^T d */
    HG_OP_CONV2D,          /* (x[N,C,H,W], w[O,C,KH,KW]) -> [N,O,OH,OW]; conv */
    HG_OP_CONV2D_BWD_DATA, /* (dy[N,O,OH,OW], w, x_ref) -> dx[N,C,H,W] */
    HG_OP_CONV2D_BWD_FILTER, /* (x, dy) -> dw[O,C,KH,KW] */
    HG_OP_MAXPOOL2D,       /* (x[N,C,H,W]) -> [N,C,OH,OW]; pool */
    HG_OP_MAXPOOL2D_BWD,   /* (x, dy) -> dx */
    /* broadcasting arithmetic (numpy rules, aligned right) */
    HG_OP_ADD,             /* (a, b) -> broadcast(a, b) */
    HG_OP_SUB,
    HG_OP_MUL,
    HG_OP_SCALE,           /* (x) -> alpha * x; scale */
    HG_OP_SUM_TO,          /* (x, ref) -> x summed down to ref's shape */
    /* activations */
    HG_OP_RELU,
    HG_OP_RELU_BWD,        /* (x, dy) -> dx */
    HG_OP_GELU,            /* exact (erf) GELU, as torch's default */
    HG_OP_GELU_BWD,        /* (x, dy) -> dx */
    HG_OP_TANH,
    HG_OP_TANH_BWD,        /* (y, dy) -> dx */
    HG_OP_SOFTMAX,         /* over the last axis */
    HG_OP_SOFTMAX_BWD,     /* (y, dy) -> dx */
    HG_OP_LOG_SOFTMAX,     /* over the last axis */
    HG_OP_LOG_SOFTMAX_BWD, /* (y, dy) -> dx */
    /* normalisation, regularisation */
    HG_OP_LAYERNORM,       /* (x[..,D], gamma[D], beta[D]) -> [..,D]; ln */
    HG_OP_LAYERNORM_BWD_X, /* (x, gamma, dy) -> dx; ln */
    HG_OP_LAYERNORM_BWD_G, /* (x, dy) -> dgamma[D]; ln */
    HG_OP_DROPOUT,         /* (x [B,..] [, ids [B] i32]) -> mask * x / (1-p); dropout.
                            * The mask of each element is keyed by (seed, step,
                            * its row's sample id (ids; else its index on axis
                            * 0), its coordinates): hg_ew_drop_row_key */
    /* embeddings */
    HG_OP_EMBEDDING,       /* (w[V,D], ids[..] i32) -> [..,D] */
    HG_OP_EMBEDDING_BWD,   /* (ids, dy[..,D], w_ref) -> dw[V,D] */
    /* layout */
    HG_OP_RESHAPE,         /* (x) -> reshape; reshape */
    HG_OP_RESHAPE_LIKE,    /* (x, ref) -> x with ref's shape */
    HG_OP_PERMUTE,         /* (x) -> permuted copy; permute */
    HG_OP_CONCAT,          /* (x0..xn) -> along axis; concat */
    HG_OP_SLICE,           /* (x) -> x[start:start+len] along axis; slice */
    HG_OP_SLICE_BWD,       /* (dy, x_ref) -> zeros of x's shape with dy placed; slice */
    HG_OP_MASKED_FILL,     /* (s[B,(H,)Tq,Tk] [, keep[B,Tk] i32]) -> s or fill; mask */
    /* fused attention: the chain matmul, masked_fill, softmax, dropout,
     * matmul without its [B,H,Tq,Tk] tensors */
    HG_OP_ATTENTION,       /* (q[B,H,Tq,Dh], k[B,H,Tk,Dh], v[B,H,Tk,Dh] [, keep[B,Tk] i32])
                            * -> [B,H,Tq,Dh]; attn */
    HG_OP_ATTENTION_BWD,   /* (q, k, v, do[B,H,Tq,Dh] [, keep]) -> which 0: dq
                            * [B,H,Tq,Dh], 1: dk and dv [2,B,H,Tk,Dh], 2: dq,
                            * dk and dv [3,B,H,T,Dh]; attn */
    /* reductions */
    HG_OP_SUM,             /* (x) -> sum over axis (kept as size 1) or all -> [1]; reduce */
    HG_OP_MEAN,            /* same, divided by the count */
    HG_OP_EXPAND_LIKE,     /* (dy, x_ref) -> alpha * dy broadcast to x; reduce */
    /* losses: sums over the non-ignored rows, shape [1] */
    HG_OP_CROSS_ENTROPY,     /* (logits[..,C], target[..] i32) -> [1]; ce */
    HG_OP_CROSS_ENTROPY_BWD, /* (logits, target, dloss[1]) -> dlogits; ce */
    HG_OP_NLL,               /* (logp[..,C], target[..] i32) -> [1]; ce */
    HG_OP_NLL_BWD,           /* (logp_ref, target, dloss[1]) -> dlogp; ce */
    /* optimizer updates: no output, update their first inputs in place */
    HG_OP_SGD_STEP,        /* (param, grad, momentum_buf); sgd */
    HG_OP_ADAMW_STEP,      /* (param, grad, m, v); adam (AdamW, or Adam if l2) */
    HG_OP_ADADELTA_STEP,   /* (param, grad, square_avg, acc_delta); adadelta */
    /* communication: no numeric kernel (HG_OPF_COMM); the executor hands
     * them to the callbacks its owner installs (graph/hg_graph.h); comm */
    HG_OP_ALLREDUCE,       /* (first[, last]) in place: sum over the group */
    HG_OP_SEND,            /* (x): x to peer; no output */
    HG_OP_RECV,            /* () -> [comm.dim] of comm.dtype from peer */
    HG_OP_PS_PUSH,         /* (first[, last]): to the PS, summed into its master */
    HG_OP_PS_PULL,         /* (first[, last]) in place: the PS's master copy */
    HG_OP_RESHARD,         /* (x) -> x in another layout over a group; reshard */
    HG_OP_COUNT
};

/* Mixed precision (--bf16, --fp16): the precision of GEMM operands. */
enum hg_lowp { HG_LOWP_NONE, HG_LOWP_BF16, HG_LOWP_FP16 };

/* What a kernel needs besides its tensors: set by the executor per step. */
struct hg_kctx {
    int nthreads;
    void *dev;          /* CUDA kernels: struct hg_cuda_ctx * (stream, handles,
                         * error word); NULL on the CPU */
    int pos;            /* the node's position in the run (error reports) */
    int lowp;           /* enum hg_lowp: CUDA GEMMs read bf16/fp16 copies of
                         * their operands (tensor cores), accumulate and
                         * write fp32; the CPU computes fp32 regardless */
    uint64_t step;      /* optimizer step, 1-based; also dropout's stream */
    float lr;
    float grad_scale;   /* grads are sums; updates multiply by this (1/sample_size) */
    void *ws;           /* workspace: ws_bytes of the op's workspace rule */
    size_t ws_bytes;
    char *err;          /* kernels write a runtime error here and return -1 */
    size_t errlen;
};

struct hg_kargs {
    const struct hg_tview *in; /* [n_in] */
    int n_in;
    struct hg_tview *out;      /* NULL for update ops */
    const union hg_attr *attr;
    struct hg_kctx *ctx;
};

/* Returns 0 or -1 with a message in err naming the rule and the shapes;
 * rules shared by several ops (broadcast, like_first) name the rule, and
 * callers (graph, planner) prefix the op's name. */
typedef int (*hg_shape_fn)(const struct hg_shape *in, const enum hg_dtype *in_dt,
                           int n_in, const union hg_attr *attr,
                           struct hg_shape *out, enum hg_dtype *out_dt,
                           char *err, size_t errlen);

struct hg_cost {
    double flops;
    double bytes; /* read + written */
};
typedef void (*hg_cost_fn)(const struct hg_shape *in, int n_in,
                           const struct hg_shape *out,
                           const union hg_attr *attr, struct hg_cost *cost);
typedef size_t (*hg_ws_fn)(const struct hg_shape *in, int n_in,
                           const struct hg_shape *out, const union hg_attr *attr,
                           int nthreads);
typedef int (*hg_kernel_fn)(const struct hg_kargs *a);

enum {
    HG_OPF_NO_OUTPUT = 1 << 0, /* update ops */
    HG_OPF_VARIADIC = 1 << 1,  /* n_in is a maximum */
    HG_OPF_COMM = 1 << 2,      /* communication: no kernel, no gradient rule;
                                  cost.bytes is what it moves */
};

struct hg_op_info {
    const char *name;
    int n_in;          /* exact, or the maximum with HG_OPF_VARIADIC */
    unsigned flags;
    hg_shape_fn shape;
    hg_cost_fn cost;
    hg_ws_fn workspace; /* NULL: none */
    hg_kernel_fn cpu;
    hg_kernel_fn cuda;  /* NULL: built without CUDA.  Tensors are device
                         * pointers; ctx->ws is device memory of at least
                         * max(workspace, cuda_workspace) bytes */
    hg_ws_fn cuda_workspace; /* NULL: none beyond workspace */
};

extern const struct hg_op_info hg_op_table[HG_OP_COUNT];

/* Library set-up: BLAS choice and thread counts. Idempotent. */
int hg_kernels_init(char *err, size_t errlen);
void hg_kernels_set_threads(int nthreads);
int hg_kernels_get_threads(void);
/* The BLAS in use, all its build says ("OpenBLAS 0.3.21 NO_LAPACKE
 * DYNAMIC_ARCH ... SkylakeX MAX_THREADS=64 (dlopen PATH)"), and in brief:
 * library, version and core ("OpenBLAS 0.3.21 (core SkylakeX)", ", was
 * Haswell" where hgtrain overrode OPENBLAS_CORETYPE). */
const char *hg_kernels_blas_name(void);
const char *hg_kernels_blas_brief(void);
/* The instruction set our own CPU kernels use: "avx512", "avx2" or
 * "baseline" (the CPU's widest, or lower where HG_ISA caps it; an HG_ISA
 * the CPU lacks is refused by hg_kernels_init). */
const char *hg_kernels_isa_name(void);

/* Row-major single-precision GEMM through the chosen BLAS:
 * C[M,N] = alpha * op(A) op(B) + beta * C.  The result does not depend on
 * the thread count (kernels/blas.c says how). */
void hg_sgemm(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
              float alpha, const float *a, int64_t lda, const float *b,
              int64_t ldb, float beta, float *c, int64_t ldc);
/* The same as one single-threaded BLAS call, whatever the thread count:
 * for kernels that thread over independent GEMMs themselves (the fused
 * attention's (b,h) pairs), so their bits never depend on it. */
void hg_sgemm_serial(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                     float alpha, const float *a, int64_t lda, const float *b,
                     int64_t ldb, float beta, float *c, int64_t ldc);

#ifdef __cplusplus
}
#endif

#endif
