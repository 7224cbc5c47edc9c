/* cuda_cases_a.h - CUDA vs CPU cases: elementwise, layout, reductions,
 * optimizers (format: tests/cuda_cases.h).
 *
 * Tolerances: 0 (bitwise) wherever both sides do the same correctly
 * rounded arithmetic: +,-,*,/, sqrtf, the shared ew-math.h formulas
 * without transcendentals, copies, dropout's counter RNG, the optimizers
 * (host-side scalars computed the same way), and the reductions (the CUDA
 * kernels repeat the CPU's summation order and precision, see
 * kernels/cuda/reduce-impl.h).  TOL_TRANS for erff/expf/tanhf, which
 * CUDA's libdevice and glibc round differently (within 2 ulp).
 * Sizes stay under ~1e5 elements so the whole run is quick.
 */
#ifndef HG_CUDA_CASES_A_H
#define HG_CUDA_CASES_A_H

#include "tests/cuda_cases.h"

#define TOL_TRANS 1e-6 /* a few ulp of the largest output */
#define TOL_RED 0.0    /* reductions: the CPU's order, so its bits */
#define TOL_CHUNK 1e-5 /* chunked sums against the CPU's one float chain (its rounding) */

/* one of n values */
#define CU_PICK(r, ...)                                                        \
    ((const int64_t[]){__VA_ARGS__}[cu_int(r, 0,                               \
        (int64_t)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)) - 1)])

static void cu_note(struct cu_case *c, const char *s)
{
    strncpy(c->note, s, sizeof c->note - 1);
}

/* ---- ADD / SUB / MUL ------------------------------------------------------ */

static enum hg_op cu_bin_op(struct cu_rng *r)
{
    return (enum hg_op)CU_PICK(r, HG_OP_ADD, HG_OP_SUB, HG_OP_MUL);
}

/* a and b in random order (broadcasting is symmetric, the kernels' plans
 * are not) */
static void cu_bin(struct cu_rng *r, struct cu_case *c, enum hg_op op,
                   struct hg_shape x, struct hg_shape y, const char *note)
{
    int swap = (int)cu_int(r, 0, 1);
    c->op = op;
    c->n_in = 2;
    c->in[0] = swap ? y : x;
    c->in[1] = swap ? x : y;
    c->tol = 0;
    cu_note(c, note);
}

static void gen_bin_same(struct cu_rng *r, struct cu_case *c)
{
    int nd = (int)cu_int(r, 1, 4);
    int64_t d[4];
    for (int i = 0; i < nd; i++)
        d[i] = cu_int(r, 1, nd == 1 ? 60000 : nd == 4 ? 16 : 40);
    struct hg_shape s = cu_shape(nd, d);
    cu_bin(r, c, cu_bin_op(r), s, s, "a, b same shape");
}

static void gen_bin_bias(struct cu_rng *r, struct cu_case *c)
{
    int64_t n = cu_int(r, 1, 8), t = cu_int(r, 1, 40), d = cu_int(r, 1, 300);
    cu_bin(r, c, cu_bin_op(r), CU_SHAPE(n, t, d), CU_SHAPE(d), "[N,T,D] + [D]");
}

static void gen_bin_conv(struct cu_rng *r, struct cu_case *c)
{
    int64_t n = cu_int(r, 1, 6), o = cu_int(r, 1, 24), h = cu_int(r, 1, 20),
            w = cu_int(r, 1, 20);
    cu_bin(r, c, cu_bin_op(r), CU_SHAPE(n, o, h, w), CU_SHAPE(o, 1, 1),
           "[N,O,H,W] + [O,1,1]");
}

static void gen_bin_scalar(struct cu_rng *r, struct cu_case *c)
{
    int64_t a = cu_int(r, 1, 300), b = cu_int(r, 1, 300);
    cu_bin(r, c, cu_bin_op(r), CU_SHAPE(a, b), CU_SHAPE(1), "[A,B] + scalar [1]");
}

static void gen_bin_both(struct cu_rng *r, struct cu_case *c)
{
    int64_t a = cu_int(r, 1, 40), b = cu_int(r, 2, 40), d = cu_int(r, 1, 60);
    if (cu_int(r, 0, 1))
        cu_bin(r, c, cu_bin_op(r), CU_SHAPE(a, 1, d), CU_SHAPE(b, 1),
               "[A,1,D] + [B,1]: both broadcast");
    else
        cu_bin(r, c, cu_bin_op(r), CU_SHAPE(a, 1, d), CU_SHAPE(1, b, 1),
               "[A,1,D] + [1,B,1]: both broadcast");
}

/* any broadcast: out o of rank 1-6; y drops some leading axes and has
 * size 1 on a random subset of the rest; x has o's rank, o's dim wherever
 * y has 1 (or no axis), else o's dim or 1 (broadcast on both sides) */
static void gen_bin_rand(struct cu_rng *r, struct cu_case *c, enum hg_op op)
{
    int nd = (int)cu_int(r, 1, HG_MAX_DIMS), ny = (int)cu_int(r, 1, nd);
    int64_t o[HG_MAX_DIMS], x[HG_MAX_DIMS], y[HG_MAX_DIMS], n = 1;
    for (int i = 0; i < nd; i++) {
        o[i] = cu_int(r, 1, n > 10000 ? 1 : 9);
        n *= o[i];
    }
    for (int i = 0; i < nd; i++) {
        int j = i - (nd - ny); /* y's axis */
        if (j >= 0)
            y[j] = cu_int(r, 0, 2) ? o[i] : 1;
        x[i] = j < 0 || y[j] == 1 || cu_int(r, 0, 1) ? o[i] : 1;
    }
    cu_bin(r, c, op, cu_shape(nd, x), cu_shape(ny, y), "random broadcast");
}

static void gen_add_rand(struct cu_rng *r, struct cu_case *c) { gen_bin_rand(r, c, HG_OP_ADD); }
static void gen_sub_rand(struct cu_rng *r, struct cu_case *c) { gen_bin_rand(r, c, HG_OP_SUB); }
static void gen_mul_rand(struct cu_rng *r, struct cu_case *c) { gen_bin_rand(r, c, HG_OP_MUL); }

static void gen_scale(struct cu_rng *r, struct cu_case *c)
{
    c->op = HG_OP_SCALE;
    c->n_in = 1;
    c->in[0] = CU_SHAPE(cu_int(r, 1, 30), cu_int(r, 1, 3000));
    c->attr.scale.alpha = (float)cu_int(r, -1000, 1000) / 37.0f;
    c->tol = 0;
}

/* ---- SUM_TO ------------------------------------------------------------ */

static void cu_sum_to(struct cu_case *c, struct hg_shape x, struct hg_shape ref,
                      const char *note)
{
    c->op = HG_OP_SUM_TO;
    c->n_in = 2;
    c->in[0] = x;
    c->in[1] = ref;
    c->tol = TOL_RED;
    /* long kept columns (a workspace for their partial sums) are summed in
     * fixed chunks, not in the CPU's order */
    const hg_ws_fn cws = hg_op_table[HG_OP_SUM_TO].cuda_workspace;
    if (cws && cws(c->in, 2, &ref, &c->attr, 1) > 0)
        c->tol = TOL_CHUNK;
    cu_note(c, note);
}

/* bias gradient: long float column sums (the inner axis kept) */
static void gen_sum_to_bias(struct cu_rng *r, struct cu_case *c)
{
    int64_t n = cu_int(r, 1, 40), t = cu_int(r, 1, 100), d = cu_int(r, 1, 24);
    if (cu_int(r, 0, 1))
        cu_sum_to(c, CU_SHAPE(n, t, d), CU_SHAPE(d), "[N,T,D] -> [D]");
    else
        cu_sum_to(c, CU_SHAPE(n, t, d), CU_SHAPE(1, t, d), "[N,T,D] -> [1,T,D]");
}

/* transformer bias gradients: thousands of rows, hundreds of columns (the
 * chunked column sums), and a run of rows with a second stride */
static void gen_sum_to_bias_long(struct cu_rng *r, struct cu_case *c)
{
    int64_t n = cu_int(r, 1, 60), t = cu_int(r, 100, 120), d = cu_int(r, 1, 300);
    switch (cu_int(r, 0, 2)) {
    case 0: cu_sum_to(c, CU_SHAPE(n * t, d), CU_SHAPE(d), "[R,D] -> [D] long"); break;
    case 1: cu_sum_to(c, CU_SHAPE(n, t, d), CU_SHAPE(d), "[N,T,D] -> [D] long"); break;
    default: cu_sum_to(c, CU_SHAPE(t, 3, n, d), CU_SHAPE(3, 1, d), "[T,3,N,D] -> [3,1,D] long");
    }
}

/* conv bias gradient: the inner axes reduced (16-lane runs) */
static void gen_sum_to_conv(struct cu_rng *r, struct cu_case *c)
{
    int64_t n = cu_int(r, 1, 8), o = cu_int(r, 1, 16), h = cu_int(r, 1, 30),
            w = cu_int(r, 1, 30);
    if (cu_int(r, 0, 1))
        cu_sum_to(c, CU_SHAPE(n, o, h, w), CU_SHAPE(o, 1, 1), "[N,O,H,W] -> [O,1,1]");
    else
        cu_sum_to(c, CU_SHAPE(n, o, h, w), CU_SHAPE(n, 1, 1, 1), "[N,O,H,W] -> [N,1,1,1]");
}

/* everything reduced: hg_cpu_sum_all's 64 chunks of 16 lanes */
static void gen_sum_to_all(struct cu_rng *r, struct cu_case *c)
{
    int64_t a = cu_int(r, 1, 300), b = cu_int(r, 1, 300);
    cu_sum_to(c, CU_SHAPE(a, b), CU_SHAPE(1), "[A,B] -> [1]");
}

/* two reduced groups between kept ones: columns read with two strides,
 * long enough for the tiled column kernel */
static void gen_sum_to_strided(struct cu_rng *r, struct cu_case *c)
{
    int64_t a = cu_int(r, 2, 30), k1 = cu_int(r, 1, 5), b = cu_int(r, 2, 30),
            k2 = cu_int(r, 1, 40);
    cu_sum_to(c, CU_SHAPE(a, k1, b, k2), CU_SHAPE(k1, 1, k2), "[A,K,B,L] -> [K,1,L]");
}

/* random: each axis of x kept or reduced in ref, ref maybe of lower rank */
static void gen_sum_to_rand(struct cu_rng *r, struct cu_case *c)
{
    int nd = (int)cu_int(r, 1, 5);
    int64_t x[HG_MAX_DIMS], ref[HG_MAX_DIMS], n = 1;
    for (int i = 0; i < nd; i++) {
        x[i] = cu_int(r, 1, n > 5000 ? 2 : 12);
        n *= x[i];
    }
    int nr = (int)cu_int(r, 1, nd);
    for (int i = 0; i < nr; i++)
        ref[i] = cu_int(r, 0, 1) ? x[nd - nr + i] : 1;
    cu_sum_to(c, cu_shape(nd, x), cu_shape(nr, ref), "random ref");
}

/* ---- activations --------------------------------------------------------- */

static void cu_act(struct cu_rng *r, struct cu_case *c, enum hg_op op, int n_in,
                   double tol)
{
    struct hg_shape s = CU_SHAPE(cu_int(r, 1, 9), cu_int(r, 1, 40), cu_int(r, 1, 200));
    c->op = op;
    c->n_in = n_in;
    for (int k = 0; k < n_in; k++)
        c->in[k] = s;
    c->fscale[0] = 4; /* the tails of gelu, tanh */
    c->tol = tol;
}

static void gen_relu(struct cu_rng *r, struct cu_case *c) { cu_act(r, c, HG_OP_RELU, 1, 0); }
static void gen_relu_bwd(struct cu_rng *r, struct cu_case *c) { cu_act(r, c, HG_OP_RELU_BWD, 2, 0); }
static void gen_gelu(struct cu_rng *r, struct cu_case *c) { cu_act(r, c, HG_OP_GELU, 1, TOL_TRANS); }
static void gen_gelu_bwd(struct cu_rng *r, struct cu_case *c) { cu_act(r, c, HG_OP_GELU_BWD, 2, TOL_TRANS); }
static void gen_tanh(struct cu_rng *r, struct cu_case *c) { cu_act(r, c, HG_OP_TANH, 1, TOL_TRANS); }

static void gen_tanh_bwd(struct cu_rng *r, struct cu_case *c)
{
    cu_act(r, c, HG_OP_TANH_BWD, 2, 0); /* y * y, no transcendental */
    c->fscale[0] = 1;                   /* y = tanh(x) is in [-1, 1] */
}

/* ---- DROPOUT --------------------------------------------------------------- */

/* [B,N], [B,T,D] or [B,C,H,W]; half with sample ids [B] (the masks keyed
 * by them: the GPU's keys must be the CPU's) */
static void cu_dropout(struct cu_rng *r, struct cu_case *c, float p, const char *note)
{
    c->op = HG_OP_DROPOUT;
    c->n_in = 1;
    switch (cu_int(r, 0, 2)) {
    case 0: c->in[0] = CU_SHAPE(cu_int(r, 1, 50), cu_int(r, 1, 2000)); break;
    case 1: c->in[0] = CU_SHAPE(cu_int(r, 1, 20), cu_int(r, 1, 30), cu_int(r, 1, 70)); break;
    default:
        c->in[0] = CU_SHAPE(cu_int(r, 1, 8), cu_int(r, 1, 9), cu_int(r, 1, 13), cu_int(r, 1, 13));
    }
    if (cu_int(r, 0, 1)) {
        c->in[1] = CU_SHAPE(c->in[0].dim[0]);
        c->dt[1] = HG_I32;
        c->ilo[1] = 0;
        c->ihi[1] = 1000000;
        c->n_in = 2;
    }
    c->attr.dropout.p = p;
    c->attr.dropout.seed = cu_next(r);
    c->step = (uint64_t)cu_int(r, 2, 100000); /* not the first step's stream */
    c->tol = 0;
    cu_note(c, note);
}

static void gen_dropout_0(struct cu_rng *r, struct cu_case *c) { cu_dropout(r, c, 0.0f, "p 0"); }
static void gen_dropout_01(struct cu_rng *r, struct cu_case *c) { cu_dropout(r, c, 0.1f, "p 0.1"); }
static void gen_dropout_05(struct cu_rng *r, struct cu_case *c) { cu_dropout(r, c, 0.5f, "p 0.5"); }
static void gen_dropout_1(struct cu_rng *r, struct cu_case *c) { cu_dropout(r, c, 1.0f, "p 1"); }

/* ---- layout -------------------------------------------------------------- */

/* layout ops move bytes of any dtype: f32 or i32 */
static void cu_layout_dtype(struct cu_rng *r, struct cu_case *c)
{
    if (cu_int(r, 0, 3) == 0) {
        for (int k = 0; k < c->n_in; k++) {
            c->dt[k] = HG_I32;
            c->ilo[k] = -1000000;
            c->ihi[k] = 1000000;
        }
    }
}

static void gen_reshape(struct cu_rng *r, struct cu_case *c)
{
    int64_t a = cu_int(r, 1, 30), b = cu_int(r, 1, 30), d = cu_int(r, 1, 60);
    c->op = HG_OP_RESHAPE;
    c->n_in = 1;
    c->in[0] = CU_SHAPE(a, b, d);
    c->attr.reshape.ndim = 2;
    c->attr.reshape.dim[0] = -1; /* a*b */
    c->attr.reshape.dim[1] = d;
    cu_layout_dtype(r, c);
    c->tol = 0;
}

static void gen_reshape_like(struct cu_rng *r, struct cu_case *c)
{
    int64_t a = cu_int(r, 1, 30), b = cu_int(r, 1, 30), d = cu_int(r, 1, 60);
    c->op = HG_OP_RESHAPE_LIKE;
    c->n_in = 2;
    c->in[0] = CU_SHAPE(a * b, d);
    c->in[1] = CU_SHAPE(a, b * d);
    c->tol = 0;
}

static void gen_permute(struct cu_rng *r, struct cu_case *c)
{
    int nd = (int)cu_int(r, 3, 5);
    int64_t d[HG_MAX_DIMS];
    for (int i = 0; i < nd; i++)
        d[i] = cu_int(r, 1, nd == 3 ? 40 : nd == 4 ? 14 : 8);
    c->op = HG_OP_PERMUTE;
    c->n_in = 1;
    c->in[0] = cu_shape(nd, d);
    c->attr.permute.ndim = nd;
    for (int i = 0; i < nd; i++)
        c->attr.permute.perm[i] = i;
    for (int i = nd - 1; i > 0; i--) { /* Fisher-Yates */
        int j = (int)cu_int(r, 0, i), t = c->attr.permute.perm[i];
        c->attr.permute.perm[i] = c->attr.permute.perm[j];
        c->attr.permute.perm[j] = t;
    }
    cu_layout_dtype(r, c);
    c->tol = 0;
    cu_note(c, "random permutation");
}

/* attention's [B,T,H,Dh] -> [B,H,T,Dh] */
static void gen_permute_heads(struct cu_rng *r, struct cu_case *c)
{
    c->op = HG_OP_PERMUTE;
    c->n_in = 1;
    c->in[0] = CU_SHAPE(cu_int(r, 1, 4), cu_int(r, 1, 50), cu_int(r, 1, 8), cu_int(r, 1, 64));
    c->attr.permute.ndim = 4;
    c->attr.permute.perm[0] = 0;
    c->attr.permute.perm[1] = 2;
    c->attr.permute.perm[2] = 1;
    c->attr.permute.perm[3] = 3;
    c->tol = 0;
    cu_note(c, "[B,T,H,Dh] -> [B,H,T,Dh]");
}

static void gen_concat(struct cu_rng *r, struct cu_case *c)
{
    int nd = (int)cu_int(r, 1, 4), axis = (int)cu_int(r, 0, nd - 1);
    int64_t d[HG_MAX_DIMS];
    for (int i = 0; i < nd; i++)
        d[i] = cu_int(r, 1, nd <= 2 ? 60 : 12);
    c->op = HG_OP_CONCAT;
    c->n_in = (int)cu_int(r, 2, 4);
    for (int k = 0; k < c->n_in; k++) {
        d[axis] = cu_int(r, 1, 12);
        c->in[k] = cu_shape(nd, d);
    }
    c->attr.concat.axis = cu_int(r, 0, 1) ? axis : axis - nd; /* negative too */
    cu_layout_dtype(r, c);
    c->tol = 0;
}

static void cu_slice_attr(struct cu_rng *r, struct cu_case *c, const struct hg_shape *x)
{
    int axis = (int)cu_int(r, 0, x->ndim - 1);
    int64_t len = cu_int(r, 1, x->dim[axis]);
    c->attr.slice.axis = axis;
    c->attr.slice.start = cu_int(r, 0, x->dim[axis] - len);
    c->attr.slice.len = len;
}

static struct hg_shape cu_slice_x(struct cu_rng *r)
{
    int nd = (int)cu_int(r, 1, 4);
    int64_t d[HG_MAX_DIMS];
    for (int i = 0; i < nd; i++)
        d[i] = cu_int(r, 1, nd <= 2 ? 100 : 16);
    return cu_shape(nd, d);
}

static void gen_slice(struct cu_rng *r, struct cu_case *c)
{
    c->op = HG_OP_SLICE;
    c->n_in = 1;
    c->in[0] = cu_slice_x(r);
    cu_slice_attr(r, c, &c->in[0]);
    cu_layout_dtype(r, c);
    c->tol = 0;
}

/* (dy, x_ref): dy is x's shape with len on the axis */
static void gen_slice_bwd(struct cu_rng *r, struct cu_case *c)
{
    struct hg_shape x = cu_slice_x(r);
    c->op = HG_OP_SLICE_BWD;
    c->n_in = 2;
    cu_slice_attr(r, c, &x);
    c->in[0] = x;
    c->in[0].dim[c->attr.slice.axis] = c->attr.slice.len;
    c->in[1] = x;
    c->tol = 0;
}

/* s[B,Tq,Tk] or s[B,H,Tq,Tk], causal or not, keep[B,Tk] or none */
static void cu_masked(struct cu_rng *r, struct cu_case *c, int four, int keep)
{
    int64_t b = cu_int(r, 1, 4), h = cu_int(r, 1, 6), tq = cu_int(r, 1, 40),
            tk = cu_int(r, 1, 40);
    c->op = HG_OP_MASKED_FILL;
    c->in[0] = four ? CU_SHAPE(b, h, tq, tk) : CU_SHAPE(b, tq, tk);
    c->n_in = 1;
    if (keep) {
        c->n_in = 2;
        c->in[1] = CU_SHAPE(b, tk);
        c->dt[1] = HG_I32;
        c->ilo[1] = 0;
        c->ihi[1] = 2; /* 0 masks; 1 and 2 keep */
    }
    c->attr.mask.causal = (int)cu_int(r, 0, 1);
    c->attr.mask.fill = cu_int(r, 0, 1) ? -1e30f : 0.0f;
    c->tol = 0;
}

static void gen_masked_3(struct cu_rng *r, struct cu_case *c) { cu_masked(r, c, 0, 0); }
static void gen_masked_3_keep(struct cu_rng *r, struct cu_case *c) { cu_masked(r, c, 0, 1); }
static void gen_masked_4(struct cu_rng *r, struct cu_case *c) { cu_masked(r, c, 1, 0); }
static void gen_masked_4_keep(struct cu_rng *r, struct cu_case *c) { cu_masked(r, c, 1, 1); }

/* ---- SUM, MEAN, EXPAND_LIKE ----------------------------------------------- */

static struct hg_shape cu_red_x(struct cu_rng *r)
{
    int nd = (int)cu_int(r, 1, 4);
    int64_t d[HG_MAX_DIMS];
    for (int i = 0; i < nd; i++)
        d[i] = cu_int(r, 1, nd == 1 ? 90000 : nd == 2 ? 300 : nd == 3 ? 40 : 16);
    return cu_shape(nd, d);
}

/* over a random axis (either sign), over ALL, and over the last axis
 * (the inner == 1 case, summed in double) */
static void cu_reduce(struct cu_rng *r, struct cu_case *c, enum hg_op op, int which)
{
    c->op = op;
    c->n_in = 1;
    c->in[0] = cu_red_x(r);
    if (which == 0) {
        int nd = c->in[0].ndim, ax = (int)cu_int(r, 0, nd - 1);
        c->attr.reduce.axis = cu_int(r, 0, 1) ? ax : ax - nd;
    } else if (which == 1) {
        c->attr.reduce.axis = HG_AXIS_ALL;
    } else {
        c->attr.reduce.axis = -1;
    }
    c->tol = TOL_RED;
}

static void gen_sum_axis(struct cu_rng *r, struct cu_case *c) { cu_reduce(r, c, HG_OP_SUM, 0); }
static void gen_sum_all(struct cu_rng *r, struct cu_case *c) { cu_reduce(r, c, HG_OP_SUM, 1); }
static void gen_sum_last(struct cu_rng *r, struct cu_case *c) { cu_reduce(r, c, HG_OP_SUM, 2); }
static void gen_mean_axis(struct cu_rng *r, struct cu_case *c) { cu_reduce(r, c, HG_OP_MEAN, 0); }
static void gen_mean_all(struct cu_rng *r, struct cu_case *c) { cu_reduce(r, c, HG_OP_MEAN, 1); }
static void gen_mean_last(struct cu_rng *r, struct cu_case *c) { cu_reduce(r, c, HG_OP_MEAN, 2); }

/* (dy, x_ref): dy is SUM's output for a random axis, or [1] */
static void cu_expand(struct cu_rng *r, struct cu_case *c, float alpha)
{
    struct hg_shape x = cu_red_x(r);
    c->op = HG_OP_EXPAND_LIKE;
    c->n_in = 2;
    if (cu_int(r, 0, 3) == 0) {
        c->in[0] = CU_SHAPE(1);
    } else {
        c->in[0] = x;
        c->in[0].dim[cu_int(r, 0, x.ndim - 1)] = 1;
    }
    c->in[1] = x;
    c->attr.reduce.alpha = alpha;
    c->tol = 0;
}

static void gen_expand_mean(struct cu_rng *r, struct cu_case *c) { cu_expand(r, c, -1.0f); }
static void gen_expand_alpha(struct cu_rng *r, struct cu_case *c) { cu_expand(r, c, 0.37f); }
static void gen_expand_one(struct cu_rng *r, struct cu_case *c) { cu_expand(r, c, 0.0f); }

/* ---- optimizers ------------------------------------------------------------- */

static void cu_update(struct cu_rng *r, struct cu_case *c, enum hg_op op, int n_in)
{
    struct hg_shape s = CU_SHAPE(cu_int(r, 1, 200), cu_int(r, 1, 400));
    c->op = op;
    c->n_in = n_in;
    for (int k = 0; k < n_in; k++)
        c->in[k] = s;
    c->lr = 0.01f * (float)cu_int(r, 1, 30);
    c->grad_scale = 1.0f / (float)cu_int(r, 1, 64);
    c->tol = 0;
}

static void gen_sgd(struct cu_rng *r, struct cu_case *c)
{
    cu_update(r, c, HG_OP_SGD_STEP, 3);
    c->attr.sgd.momentum = (float)CU_PICK(r, 0, 1, 1) * 0.9f;
    c->attr.sgd.weight_decay = (float)CU_PICK(r, 0, 1) * 1e-2f;
    c->attr.sgd.nesterov = c->attr.sgd.momentum != 0.0f && cu_int(r, 0, 1);
}

/* v (the second moment) must stay >= 0 or sqrtf gives NaN, and the case
 * format draws signed values: v nearly 0, as after a first step. */
static void cu_adam(struct cu_rng *r, struct cu_case *c, uint64_t step, int l2)
{
    cu_update(r, c, HG_OP_ADAMW_STEP, 4);
    c->attr.adam.beta1 = 0.9f;
    c->attr.adam.beta2 = (float)CU_PICK(r, 999, 980) / 1000.0f;
    c->attr.adam.eps = 1e-8f;
    c->attr.adam.weight_decay = (float)CU_PICK(r, 0, 1) * 0.05f;
    c->attr.adam.l2 = l2;
    c->fscale[3] = 1e-30f;
    c->step = step;
}

static void gen_adamw_1(struct cu_rng *r, struct cu_case *c) { cu_adam(r, c, 1, 0); }
static void gen_adamw_7(struct cu_rng *r, struct cu_case *c) { cu_adam(r, c, 7, 0); }
static void gen_adam_l2(struct cu_rng *r, struct cu_case *c) { cu_adam(r, c, 7, 1); }

/* square_avg and acc_delta in [-eps/2, eps/2], so sq + eps and acc + eps
 * stay > 0 under sqrtf */
static void gen_adadelta(struct cu_rng *r, struct cu_case *c)
{
    cu_update(r, c, HG_OP_ADADELTA_STEP, 4);
    c->attr.adadelta.rho = 0.9f;
    c->attr.adadelta.eps = 1e-6f;
    c->attr.adadelta.weight_decay = (float)CU_PICK(r, 0, 1) * 1e-2f;
    c->fscale[2] = c->fscale[3] = 0.5e-6f;
}

static const cu_gen_fn cu_gens_a[] = {
    gen_bin_same, gen_bin_bias, gen_bin_conv, gen_bin_scalar, gen_bin_both,
    gen_add_rand, gen_sub_rand, gen_mul_rand, gen_scale,
    gen_sum_to_bias, gen_sum_to_bias_long, gen_sum_to_conv, gen_sum_to_all, gen_sum_to_strided,
    gen_sum_to_rand,
    gen_relu, gen_relu_bwd, gen_gelu, gen_gelu_bwd, gen_tanh, gen_tanh_bwd,
    gen_dropout_0, gen_dropout_01, gen_dropout_05, gen_dropout_1,
    gen_reshape, gen_reshape_like, gen_permute, gen_permute_heads, gen_concat,
    gen_slice, gen_slice_bwd,
    gen_masked_3, gen_masked_3_keep, gen_masked_4, gen_masked_4_keep,
    gen_sum_axis, gen_sum_all, gen_sum_last, gen_mean_axis, gen_mean_all,
    gen_mean_last, gen_expand_mean, gen_expand_alpha, gen_expand_one,
    gen_sgd, gen_adamw_1, gen_adamw_7, gen_adam_l2, gen_adadelta,
};

#endif
