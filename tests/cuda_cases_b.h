/* cuda_cases_b.h - CUDA vs CPU cases: matmul, conv, pool, softmax,
 * layernorm, embedding, losses, fused attention (format: tests/cuda_cases.h).
 *
 * Tolerances: 1e-5 for GEMM-like sums (matmul, conv), a few 1e-6 for the
 * row-wise ops (the CPU sums some rows in float: its own error grows with
 * the row length), 0 where both sides do the same float operations in the
 * same order (pooling, embeddings, NLL's gradient).
 */
#ifndef HG_CUDA_CASES_B_H
#define HG_CUDA_CASES_B_H

#include <stdio.h>

#include "tests/cuda_cases.h"

/* Leading dims of a row-wise tensor: 0..3 of them, at most maxrows rows in
 * all; appended to s (which then gets the last dim with cu_last). */
static void cu_lead(struct cu_rng *r, struct hg_shape *s, int64_t maxrows)
{
    memset(s, 0, sizeof *s);
    int nd = (int)cu_int(r, 0, 3);
    int64_t rows = 1;
    for (int i = 0; i < nd; i++) {
        int64_t lim = maxrows / rows;
        int64_t d = cu_int(r, 1, lim < 1 ? 1 : (lim > 12 && i < nd - 1 ? 12 : lim));
        s->dim[s->ndim++] = d;
        rows *= d;
    }
}

static void cu_last(struct hg_shape *s, int64_t d)
{
    s->dim[s->ndim++] = d;
}

/* Row length of a row-wise case: short rows, warp rows (<= 1024) and
 * block rows up to maxc, a third each. */
static int64_t cu_row_len(struct cu_rng *r, int64_t maxc)
{
    switch (cu_int(r, 0, 2)) {
    case 0: return cu_int(r, 1, 5);
    case 1: return cu_int(r, 6, 1024);
    default: return cu_int(r, 1025, maxc);
    }
}

/* ---- matmul ---------------------------------------------------------------- */

/* alpha: 0 (meaning 1) a third of the time, else a multiple of 1/4 */
static float cu_alpha(struct cu_rng *r)
{
    return cu_int(r, 0, 2) == 0 ? 0.0f : (float)cu_int(r, -8, 8) / 4.0f;
}

/* a [batch.., M, K] (trans_a: [batch.., K, M]); b [K, N] when shared, else
 * [batch.., K, N] (trans_b: N and K swapped). */
static void cu_mm(struct cu_rng *r, struct cu_case *c, int nbatch, int shared,
                  int tra, int trb)
{
    int64_t m = cu_int(r, 1, 70), k = cu_int(r, 1, 90), n = cu_int(r, 1, 80);
    if (cu_int(r, 0, 3) == 0) /* now and then a larger one */
        m = cu_int(r, 100, 300), k = cu_int(r, 100, 400), n = cu_int(r, 100, 300);
    struct hg_shape a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    for (int i = 0; i < nbatch; i++)
        a.dim[a.ndim++] = cu_int(r, 1, 4);
    a.dim[a.ndim++] = tra ? k : m;
    a.dim[a.ndim++] = tra ? m : k;
    if (!shared)
        for (int i = 0; i < nbatch; i++)
            b.dim[b.ndim++] = a.dim[i];
    b.dim[b.ndim++] = trb ? n : k;
    b.dim[b.ndim++] = trb ? k : n;
    c->op = HG_OP_MATMUL;
    c->n_in = 2;
    c->in[0] = a;
    c->in[1] = b;
    c->attr.mm.trans_a = tra;
    c->attr.mm.trans_b = trb;
    c->attr.mm.alpha = cu_alpha(r);
    c->tol = 1e-5;
    snprintf(c->note, sizeof c->note, "(%s%s%s, alpha %g)",
             nbatch ? (shared ? "batched a, 2-D b" : "batched") : "2-D",
             tra ? ", a^T" : "", trb ? ", b^T" : "", (double)c->attr.mm.alpha);
}

static void gen_matmul(struct cu_rng *r, struct cu_case *c)
{
    cu_mm(r, c, 0, 1, (int)cu_int(r, 0, 1), (int)cu_int(r, 0, 1));
}

/* batched a, shared 2-D b, a not transposed: the batch folds into M */
static void gen_matmul_fold(struct cu_rng *r, struct cu_case *c)
{
    cu_mm(r, c, (int)cu_int(r, 1, 2), 1, 0, (int)cu_int(r, 0, 1));
}

/* batched a^T, shared 2-D b: strided batches with b's stride 0 */
static void gen_matmul_shared_ta(struct cu_rng *r, struct cu_case *c)
{
    cu_mm(r, c, (int)cu_int(r, 1, 2), 1, 1, (int)cu_int(r, 0, 1));
}

static void gen_matmul_batched(struct cu_rng *r, struct cu_case *c)
{
    cu_mm(r, c, (int)cu_int(r, 1, 2), 0, (int)cu_int(r, 0, 1), (int)cu_int(r, 0, 1));
}

static void gen_matmul_reduce(struct cu_rng *r, struct cu_case *c)
{
    int64_t k = cu_int(r, 1, 90), n = cu_int(r, 1, 80);
    c->op = HG_OP_MATMUL_REDUCE;
    c->n_in = 2;
    cu_lead(r, &c->in[0], 3000);
    c->in[1] = c->in[0];
    cu_last(&c->in[0], k);
    cu_last(&c->in[1], n);
    c->tol = 1e-5;
}

/* ---- convolution ----------------------------------------------------------- */

/* x[N,C,H,W], w[O,C,KH,KW], y[N,O,OH,OW]: kernels 1/3/5, strides 1/2,
 * pads 0..2 (each for H and W, mostly the same) */
static void cu_conv(struct cu_rng *r, struct cu_case *c, struct hg_shape *x,
                    struct hg_shape *w, struct hg_shape *y)
{
    static const int ks[] = {1, 3, 5};
    int kh = ks[cu_int(r, 0, 2)], sh = (int)cu_int(r, 1, 2), ph = (int)cu_int(r, 0, 2);
    int kw = kh, sw = sh, pw = ph;
    if (cu_int(r, 0, 3) == 0) {
        kw = ks[cu_int(r, 0, 2)];
        sw = (int)cu_int(r, 1, 2);
        pw = (int)cu_int(r, 0, 2);
    }
    int big = cu_int(r, 0, 2) == 0;
    int64_t n = cu_int(r, 1, big ? 8 : 3), ch = cu_int(r, 1, big ? 32 : 6);
    int64_t o = cu_int(r, 1, big ? 48 : 7);
    int64_t h = cu_int(r, kh - 2 * ph > 1 ? kh - 2 * ph : 1, big ? 32 : 14);
    int64_t wd = cu_int(r, kw - 2 * pw > 1 ? kw - 2 * pw : 1, big ? 32 : 14);
    *x = CU_SHAPE(n, ch, h, wd);
    *w = CU_SHAPE(o, ch, kh, kw);
    *y = CU_SHAPE(n, o, (h + 2 * ph - kh) / sh + 1, (wd + 2 * pw - kw) / sw + 1);
    c->attr.conv.kh = kh;
    c->attr.conv.kw = kw;
    c->attr.conv.stride_h = sh;
    c->attr.conv.stride_w = sw;
    c->attr.conv.pad_h = ph;
    c->attr.conv.pad_w = pw;
    c->tol = 1e-5;
    snprintf(c->note, sizeof c->note, "(k %dx%d, stride %dx%d, pad %dx%d)", kh, kw,
             sh, sw, ph, pw);
}

static void gen_conv2d(struct cu_rng *r, struct cu_case *c)
{
    struct hg_shape x, w, y;
    cu_conv(r, c, &x, &w, &y);
    c->op = HG_OP_CONV2D;
    c->n_in = 2;
    c->in[0] = x;
    c->in[1] = w;
}

static void gen_conv2d_bwd_data(struct cu_rng *r, struct cu_case *c)
{
    struct hg_shape x, w, y;
    cu_conv(r, c, &x, &w, &y);
    c->op = HG_OP_CONV2D_BWD_DATA;
    c->n_in = 3;
    c->in[0] = y;
    c->in[1] = w;
    c->in[2] = x;
}

static void gen_conv2d_bwd_filter(struct cu_rng *r, struct cu_case *c)
{
    struct hg_shape x, w, y;
    cu_conv(r, c, &x, &w, &y);
    c->op = HG_OP_CONV2D_BWD_FILTER;
    c->n_in = 2;
    c->in[0] = x;
    c->in[1] = y;
}

/* x[N,C,H,W] and y[N,C,OH,OW] of max pooling: kernels 2/3, strides 1/2,
 * pads 0/1 (2*pad <= kernel); a quarter are the tiled 2x2 stride 2 */
static void cu_pool(struct cu_rng *r, struct cu_case *c, struct hg_shape *x,
                    struct hg_shape *y)
{
    int kh = (int)cu_int(r, 2, 3), kw = cu_int(r, 0, 3) == 0 ? (int)cu_int(r, 2, 3) : kh;
    int st = (int)cu_int(r, 1, 2), pad = (int)cu_int(r, 0, 1);
    if (cu_int(r, 0, 3) == 0)
        kh = kw = st = 2, pad = 0;
    int64_t n = cu_int(r, 1, 3), ch = cu_int(r, 1, 5);
    int64_t h = cu_int(r, kh, 30), w = cu_int(r, kw, 30);
    *x = CU_SHAPE(n, ch, h, w);
    *y = CU_SHAPE(n, ch, (h + 2 * pad - kh) / st + 1, (w + 2 * pad - kw) / st + 1);
    c->attr.pool.kh = kh;
    c->attr.pool.kw = kw;
    c->attr.pool.stride = st;
    c->attr.pool.pad = pad;
    c->tol = 0; /* the same comparisons; the gradient sums in the CPU's order */
    snprintf(c->note, sizeof c->note, "(k %dx%d, stride %d, pad %d)", kh, kw, st, pad);
}

static void gen_maxpool2d(struct cu_rng *r, struct cu_case *c)
{
    struct hg_shape x, y;
    cu_pool(r, c, &x, &y);
    c->op = HG_OP_MAXPOOL2D;
    c->n_in = 1;
    c->in[0] = x;
}

static void gen_maxpool2d_bwd(struct cu_rng *r, struct cu_case *c)
{
    struct hg_shape x, y;
    cu_pool(r, c, &x, &y);
    c->op = HG_OP_MAXPOOL2D_BWD;
    c->n_in = 2;
    c->in[0] = x;
    c->in[1] = y;
}

/* ---- softmax family -------------------------------------------------------- */

/* x[.., C] (and dy like it for the backward passes), C up to 5000 */
static void cu_rows(struct cu_rng *r, struct cu_case *c, enum hg_op op, int n_in)
{
    int64_t cl = cu_row_len(r, 5000);
    c->op = op;
    c->n_in = n_in;
    cu_lead(r, &c->in[0], cl > 1024 ? 40 : 300);
    cu_last(&c->in[0], cl);
    for (int i = 1; i < n_in; i++)
        c->in[i] = c->in[0];
    c->fscale[0] = 4; /* a spread of probabilities, not all near 1/C */
    /* the CPU sums softmax rows in float: its error grows with the row */
    c->tol = cl > 1024 ? 4e-6 : 1e-6;
    snprintf(c->note, sizeof c->note, "(rows of %lld)", (long long)cl);
}

static void gen_softmax(struct cu_rng *r, struct cu_case *c)
{
    cu_rows(r, c, HG_OP_SOFTMAX, 1);
}

static void gen_softmax_bwd(struct cu_rng *r, struct cu_case *c)
{
    cu_rows(r, c, HG_OP_SOFTMAX_BWD, 2);
}

static void gen_log_softmax(struct cu_rng *r, struct cu_case *c)
{
    cu_rows(r, c, HG_OP_LOG_SOFTMAX, 1);
}

static void gen_log_softmax_bwd(struct cu_rng *r, struct cu_case *c)
{
    cu_rows(r, c, HG_OP_LOG_SOFTMAX_BWD, 2);
}

/* ---- losses ---------------------------------------------------------------- */

/* (x[.., C], target[..] i32 [, dloss[1]]): C small or up to ~7000;
 * ignore_index -1 (drawn among the targets), 0 (a class) or -100 (absent);
 * smoothing 0 or 0.1 */
static void cu_loss(struct cu_rng *r, struct cu_case *c, enum hg_op op, int bwd)
{
    int64_t cl = cu_int(r, 0, 1) ? cu_int(r, 2, 20) : cu_int(r, 21, 7000);
    c->op = op;
    c->n_in = bwd ? 3 : 2;
    cu_lead(r, &c->in[0], cl > 1024 ? 24 : 300);
    c->in[1] = c->in[0];
    cu_last(&c->in[0], cl);
    c->dt[1] = HG_I32;
    switch (cu_int(r, 0, 2)) {
    case 0: c->attr.ce.ignore_index = -1; break;
    case 1: c->attr.ce.ignore_index = 0; break;
    default: c->attr.ce.ignore_index = -100; break;
    }
    c->ilo[1] = c->attr.ce.ignore_index == -1 ? -1 : 0;
    c->ihi[1] = cl - 1;
    c->attr.ce.smoothing = cu_int(r, 0, 1) ? 0.1f : 0.0f;
    if (bwd) {
        c->in[2] = CU_SHAPE(1);
        c->fscale[2] = 3;
    }
    c->fscale[0] = 4;
    c->tol = 1e-6;
    snprintf(c->note, sizeof c->note, "(C %lld, ignore %d, smoothing %g)",
             (long long)cl, c->attr.ce.ignore_index, (double)c->attr.ce.smoothing);
}

static void gen_cross_entropy(struct cu_rng *r, struct cu_case *c)
{
    cu_loss(r, c, HG_OP_CROSS_ENTROPY, 0);
}

static void gen_cross_entropy_bwd(struct cu_rng *r, struct cu_case *c)
{
    cu_loss(r, c, HG_OP_CROSS_ENTROPY_BWD, 1);
}

static void gen_nll(struct cu_rng *r, struct cu_case *c)
{
    cu_loss(r, c, HG_OP_NLL, 0);
}

static void gen_nll_bwd(struct cu_rng *r, struct cu_case *c)
{
    cu_loss(r, c, HG_OP_NLL_BWD, 1);
    c->tol = 0; /* the same float operations on both sides */
}

/* A target == C among 64 rows of C <= 5 classes (all but certainly): both
 * sides must fail, naming the same (first) row. */
static void gen_loss_bad_target(struct cu_rng *r, struct cu_case *c)
{
    static const enum hg_op ops[] = {HG_OP_CROSS_ENTROPY, HG_OP_CROSS_ENTROPY_BWD,
                                     HG_OP_NLL, HG_OP_NLL_BWD};
    enum hg_op op = ops[cu_int(r, 0, 3)];
    int bwd = op == HG_OP_CROSS_ENTROPY_BWD || op == HG_OP_NLL_BWD;
    int64_t cl = cu_int(r, 2, 5);
    c->op = op;
    c->n_in = bwd ? 3 : 2;
    c->in[0] = CU_SHAPE(64, cl);
    c->in[1] = CU_SHAPE(64);
    c->dt[1] = HG_I32;
    c->ilo[1] = -1;
    c->ihi[1] = cl;
    c->attr.ce.ignore_index = -1;
    if (bwd)
        c->in[2] = CU_SHAPE(1);
    c->tol = 1e-6;
    snprintf(c->note, sizeof c->note, "(bad target)");
}

/* ---- layernorm ------------------------------------------------------------- */

static void cu_ln(struct cu_rng *r, struct cu_case *c, enum hg_op op)
{
    int64_t d = cu_row_len(r, 2048);
    struct hg_shape x;
    cu_lead(r, &x, op == HG_OP_LAYERNORM_BWD_G ? 700 : (d > 1024 ? 40 : 300));
    cu_last(&x, d);
    c->op = op;
    c->in[0] = x;
    c->fscale[0] = 3;
    switch (op) {
    case HG_OP_LAYERNORM: /* (x, gamma, beta) */
    case HG_OP_LAYERNORM_BWD_X: /* (x, gamma, dy) */
        c->n_in = 3;
        c->in[1] = CU_SHAPE(d);
        c->in[2] = op == HG_OP_LAYERNORM ? CU_SHAPE(d) : x;
        break;
    default: /* (x, dy) */
        c->n_in = 2;
        c->in[1] = x;
        break;
    }
    c->attr.ln.eps = cu_int(r, 0, 1) ? 1e-5f : 1e-12f;
    c->tol = 2e-6;
    snprintf(c->note, sizeof c->note, "(D %lld, eps %g)", (long long)d,
             (double)c->attr.ln.eps);
}

static void gen_layernorm(struct cu_rng *r, struct cu_case *c)
{
    cu_ln(r, c, HG_OP_LAYERNORM);
}

static void gen_layernorm_bwd_x(struct cu_rng *r, struct cu_case *c)
{
    cu_ln(r, c, HG_OP_LAYERNORM_BWD_X);
}

static void gen_layernorm_bwd_g(struct cu_rng *r, struct cu_case *c)
{
    cu_ln(r, c, HG_OP_LAYERNORM_BWD_G);
}

/* ---- embeddings ------------------------------------------------------------ */

/* ids[..] drawn from [0, V-1], or from a few ids (long runs of repeats) */
static void cu_ids(struct cu_rng *r, struct cu_case *c, int k, int64_t v,
                   int64_t maxn)
{
    cu_lead(r, &c->in[k], maxn);
    c->dt[k] = HG_I32;
    c->ilo[k] = 0;
    c->ihi[k] = cu_int(r, 0, 1) ? v - 1 : (v - 1 < 3 ? v - 1 : 3);
}

static void gen_embedding(struct cu_rng *r, struct cu_case *c)
{
    int64_t v = cu_int(r, 1, 5000), d = cu_int(r, 1, 300);
    c->op = HG_OP_EMBEDDING;
    c->n_in = 2;
    c->in[0] = CU_SHAPE(v, d);
    cu_ids(r, c, 1, v, 3000);
    c->tol = 0; /* a copy */
}

static void gen_embedding_bwd(struct cu_rng *r, struct cu_case *c)
{
    /* vocabularies up to ~40k; rows wider than a block's 512 columns */
    int64_t v = cu_int(r, 0, 1) ? cu_int(r, 1, 300) : cu_int(r, 301, 40000);
    int64_t d = cu_int(r, 0, 2) ? cu_int(r, 1, 200) : cu_int(r, 201, 700);
    if (v * d > 8000000)
        d = 8000000 / v;
    c->op = HG_OP_EMBEDDING_BWD;
    c->n_in = 3;
    cu_ids(r, c, 0, v, 8192);
    c->in[1] = c->in[0];
    cu_last(&c->in[1], d);
    c->in[2] = CU_SHAPE(v, d);
    c->tol = 0; /* each element summed from 0 in position order, as the CPU */
    snprintf(c->note, sizeof c->note, "(V %lld, D %lld)", (long long)v, (long long)d);
}

/* An id == V (or -1) among 200: both sides must fail at the same position. */
static void gen_embedding_bad_id(struct cu_rng *r, struct cu_case *c)
{
    int64_t v = cu_int(r, 2, 6), d = cu_int(r, 1, 40);
    if (cu_int(r, 0, 1)) {
        c->op = HG_OP_EMBEDDING;
        c->n_in = 2;
        c->in[0] = CU_SHAPE(v, d);
        c->in[1] = CU_SHAPE(200);
        c->dt[1] = HG_I32;
        c->ilo[1] = -1;
        c->ihi[1] = v;
    } else {
        c->op = HG_OP_EMBEDDING_BWD;
        c->n_in = 3;
        c->in[0] = CU_SHAPE(200);
        c->dt[0] = HG_I32;
        c->ilo[0] = -1;
        c->ihi[0] = v;
        c->in[1] = CU_SHAPE(200, d);
        c->in[2] = CU_SHAPE(v, d);
    }
    c->tol = 0;
    snprintf(c->note, sizeof c->note, "(bad id)");
}

/* ATTENTION (bwd 0) or ATTENTION_BWD (bwd 1: dq or dk/dv); keep [B,Tk]
 * (masked 0: random; 1: every key masked), causal, dropout drawn */
static void cu_attention(struct cu_rng *r, struct cu_case *c, int bwd, int masked)
{
    int64_t b = cu_int(r, 1, 3), h = cu_int(r, 1, 4), tq = cu_int(r, 1, 40),
            tk = cu_int(r, 1, 40), dh = cu_int(r, 1, 64);
    c->op = bwd ? HG_OP_ATTENTION_BWD : HG_OP_ATTENTION;
    c->in[0] = CU_SHAPE(b, h, tq, dh);
    c->in[1] = CU_SHAPE(b, h, tk, dh);
    c->in[2] = c->in[1];
    c->n_in = 3;
    if (bwd)
        c->in[c->n_in++] = c->in[0]; /* do */
    int kp = -1; /* keep's input */
    if (masked || cu_int(r, 0, 1)) {
        kp = c->n_in;
        c->in[c->n_in] = CU_SHAPE(b, tk);
        c->dt[c->n_in] = HG_I32;
        c->ilo[c->n_in] = 0;
        c->ihi[c->n_in] = masked ? 0 : 2; /* 0 masks */
        c->n_in++;
    }
    c->attr.attn.scale = 1.0f / sqrtf((float)dh);
    c->attr.attn.fill = -1e30f;
    c->attr.attn.causal = (int)cu_int(r, 0, 1);
    static const float ps[3] = {0.0f, 0.1f, 0.5f};
    c->attr.attn.p = ps[cu_int(r, 0, 2)];
    c->attr.attn.seed = cu_next(r);
    if (c->attr.attn.p > 0.0f && cu_int(r, 0, 1)) { /* the masks keyed by sample ids */
        c->in[c->n_in] = CU_SHAPE(b);
        c->dt[c->n_in] = HG_I32;
        c->ilo[c->n_in] = 0;
        c->ihi[c->n_in] = 1000000;
        c->n_in++;
        c->attr.attn.ids = 1;
    }
    c->attr.attn.which = bwd ? (int)cu_int(r, 0, 2) : 0;
    if (c->attr.attn.which == 2) { /* self-attention: Tq == Tk */
        c->in[1].dim[2] = c->in[2].dim[2] = tq;
        if (kp >= 0)
            c->in[kp].dim[1] = tq;
    }
    c->step = (uint64_t)cu_int(r, 1, 9);
    c->tol = bwd ? 1e-4 : 1e-5; /* sums in another order than the CPU's GEMMs */
    snprintf(c->note, sizeof c->note, "(%s%s p %.1f%s%s)", kp >= 0 ? "keep " : "",
             c->attr.attn.causal ? "causal" : "", (double)c->attr.attn.p,
             bwd ? (c->attr.attn.which == 2 ? " dq dk dv" : c->attr.attn.which ? " dk dv" : " dq")
                 : "", c->attr.attn.ids ? " ids" : "");
}

static void gen_attention(struct cu_rng *r, struct cu_case *c) { cu_attention(r, c, 0, 0); }
static void gen_attention_bwd(struct cu_rng *r, struct cu_case *c) { cu_attention(r, c, 1, 0); }
static void gen_attention_all_masked(struct cu_rng *r, struct cu_case *c)
{
    cu_attention(r, c, (int)cu_int(r, 0, 1), 1);
}

static const cu_gen_fn cu_gens_b[] = {
    gen_matmul,          gen_matmul_fold,       gen_matmul_shared_ta,
    gen_matmul_batched,  gen_matmul_reduce,     gen_conv2d,
    gen_conv2d_bwd_data, gen_conv2d_bwd_filter, gen_maxpool2d,
    gen_maxpool2d_bwd,   gen_softmax,           gen_softmax_bwd,
    gen_log_softmax,     gen_log_softmax_bwd,   gen_cross_entropy,
    gen_cross_entropy_bwd, gen_nll,             gen_nll_bwd,
    gen_loss_bad_target, gen_layernorm,         gen_layernorm_bwd_x,
    gen_layernorm_bwd_g, gen_embedding,         gen_embedding_bwd,
    gen_embedding_bad_id, gen_attention,         gen_attention_bwd,
    gen_attention_all_masked,
};

#endif
