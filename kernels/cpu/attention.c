/* attention.c - ATTENTION and ATTENTION_BWD on the CPU: the chain MATMUL,
 * MASKED_FILL, SOFTMAX, DROPOUT, MATMUL per (batch, head) pair, with the
 * [Tq,Tk] scores in a per-thread workspace slot instead of the graph.
 *
 * Threads take whole (b,h) pairs; inside a pair every GEMM is one
 * single-threaded BLAS call (hg_sgemm_serial) and the row loops are the
 * ones of cpu/softmax.c, so a pair's result does not depend on the thread
 * count (docs/reproducibility.md).  Fewer pairs than threads leave threads
 * idle: hg_sgemm's own row cuts did change bits here (150 rows, 2 against
 * 4 threads).
 */
#include <omp.h>
#include <string.h>

#include "kernels/cpu/cpu-impl.h"
#include "kernels/ew-math.h"

struct attn {
    int64_t B, H, Tq, Tk, Dh;
    float scale, fill, p, ps; /* ps = 1/(1-p) */
    int causal;
    uint64_t key;             /* dropout key: hg_rand_key(seed, step) */
    const int32_t *keep;      /* [B,Tk] or NULL */
};

static struct attn attn_make(const struct hg_kargs *a, int nf)
{
    const struct hg_shape *q = &a->in[0].shape, *k = &a->in[1].shape;
    struct attn t = {.B = q->dim[0], .H = q->dim[1], .Tq = q->dim[2], .Tk = k->dim[2],
                     .Dh = q->dim[3], .scale = a->attr->attn.scale,
                     .fill = a->attr->attn.fill, .p = a->attr->attn.p,
                     .causal = a->attr->attn.causal};
    HG_CHECK(q->ndim == 4 && k->ndim == 4 && a->n_in >= 3 + nf);
    for (int i = 0; i < 3 + nf; i++)
        HG_CHECK(a->in[i].dtype == HG_F32);
    if (a->n_in == 4 + nf) {
        HG_CHECK(a->in[3 + nf].dtype == HG_I32);
        t.keep = a->in[3 + nf].data;
    }
    t.ps = t.p < 1.0f ? 1.0f / (1.0f - t.p) : 0.0f;
    t.key = hg_rand_key(a->attr->attn.seed, a->ctx->step);
    return t;
}

/* Threads over pairs: at most the slots of the workspace and the pairs. */
static int attn_threads(const struct hg_kctx *ctx, size_t slot, int64_t pairs)
{
    HG_CHECK(ctx->ws_bytes >= slot);
    int64_t nt = ctx->nthreads > 0 ? ctx->nthreads : 1;
    int64_t slots = (int64_t)(ctx->ws_bytes / slot);
    if (nt > slots)
        nt = slots;
    if (nt > pairs)
        nt = pairs;
    return nt < 1 ? 1 : (int)nt;
}

/* P[Tq,Tk] = softmax(mask(scale q k^T)) of pair bh, as MATMUL, MASKED_FILL
 * and SOFTMAX compute it. q [Tq,Dh], k [Tk,Dh]. */
static void attn_probs(const struct attn *t, int64_t bh, const float *q, const float *k,
                       float *P)
{
    const int64_t Tq = t->Tq, Tk = t->Tk;
    const int32_t *keep = t->keep ? t->keep + (bh / t->H) * Tk : NULL; /* [Tk] */
    hg_sgemm_serial(0, 1, Tq, Tk, t->Dh, t->scale, q, t->Dh, k, t->Dh, 0.0f, P, Tk);
    for (int64_t r = 0; r < Tq; r++) {
        float *restrict pr = P + r * Tk; /* [Tk] */
        const int64_t kend = t->causal ? (r + 1 < Tk ? r + 1 : Tk) : Tk;
        if (keep)
            for (int64_t j = 0; j < kend; j++)
                if (keep[j] == 0)
                    pr[j] = t->fill;
        for (int64_t j = kend; j < Tk; j++)
            pr[j] = t->fill;
        float mx = -INFINITY;
        for (int64_t j = 0; j < Tk; j++)
            mx = pr[j] > mx ? pr[j] : mx;
        float s = 0;
        for (int64_t j = 0; j < Tk; j++) {
            pr[j] = expf(pr[j] - mx);
            s += pr[j];
        }
        const float inv = 1.0f / s;
#pragma omp simd
        for (int64_t j = 0; j < Tk; j++)
            pr[j] *= inv;
    }
}

/* y[Tq*Tk] = DROPOUT(x) of pair bh (x == y allowed) */
static void attn_dropout(const struct attn *t, int64_t bh, const float *x, float *y)
{
    const int64_t n = t->Tq * t->Tk;
    const uint64_t base = (uint64_t)(bh * n);
    for (int64_t i = 0; i < n; i++)
        y[i] = hg_ew_dropout(x[i], t->key, base + (uint64_t)i, t->p, t->ps);
}

/* (q, k, v [, keep]) -> o = DROPOUT(P) v */
HG_CPU_FN(attention)
{
    const struct attn t = attn_make(a, 0);
    const float *q = a->in[0].data; /* [B,H,Tq,Dh] */
    const float *k = a->in[1].data; /* [B,H,Tk,Dh] */
    const float *v = a->in[2].data; /* [B,H,Tk,Dh] */
    float *o = a->out->data;        /* [B,H,Tq,Dh] */
    const int64_t pairs = t.B * t.H, nq = t.Tq * t.Dh, nk = t.Tk * t.Dh;
    if (pairs * nq == 0)
        return 0;
    if (t.Tk == 0) {
        memset(o, 0, (size_t)(pairs * nq) * sizeof(float));
        return 0;
    }
    const size_t slot = (size_t)(t.Tq * t.Tk) * sizeof(float);
    float *ws = a->ctx->ws; /* [threads][Tq,Tk] */
    const int nt = attn_threads(a->ctx, slot, pairs);
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
    for (int64_t bh = 0; bh < pairs; bh++) {
        float *P = ws + (int64_t)omp_get_thread_num() * t.Tq * t.Tk; /* [Tq,Tk] */
        attn_probs(&t, bh, q + bh * nq, k + bh * nk, P);
        if (t.p > 0.0f)
            attn_dropout(&t, bh, P, P);
        hg_sgemm_serial(0, 0, t.Tq, t.Dh, t.Tk, 1.0f, P, t.Tk, v + bh * nk, t.Dh, 0.0f,
                 o + bh * nq, t.Dh);
    }
    return 0;
}

/* dS [Tq,Tk] from P and dP (in place over dP): SOFTMAX_BWD, then
 * MASKED_FILL's backward (masked elements 0) */
static void attn_dscores(const struct attn *t, int64_t bh, const float *P, float *dP)
{
    const int64_t Tq = t->Tq, Tk = t->Tk;
    const int32_t *keep = t->keep ? t->keep + (bh / t->H) * Tk : NULL; /* [Tk] */
    for (int64_t r = 0; r < Tq; r++) {
        const float *restrict pr = P + r * Tk; /* [Tk] */
        float *restrict gr = dP + r * Tk;      /* [Tk] */
        float s = 0;
#pragma omp simd reduction(+ : s)
        for (int64_t j = 0; j < Tk; j++)
            s += pr[j] * gr[j];
#pragma omp simd
        for (int64_t j = 0; j < Tk; j++)
            gr[j] = pr[j] * (gr[j] - s);
        const int64_t kend = t->causal ? (r + 1 < Tk ? r + 1 : Tk) : Tk;
        if (keep)
            for (int64_t j = 0; j < kend; j++)
                if (keep[j] == 0)
                    gr[j] = 0.0f;
        for (int64_t j = kend; j < Tk; j++)
            gr[j] = 0.0f;
    }
}

/* (q, k, v, do [, keep]) -> which 0: dq [B,H,Tq,Dh]; 1: dk, dv [B,H,2,Tk,Dh];
 * 2: dq, dk, dv [B,H,3,T,Dh] */
HG_CPU_FN(attention_bwd)
{
    const struct attn t = attn_make(a, 1);
    const int which = a->attr->attn.which;
    const float *q = a->in[0].data;  /* [B,H,Tq,Dh] */
    const float *k = a->in[1].data;  /* [B,H,Tk,Dh] */
    const float *v = a->in[2].data;  /* [B,H,Tk,Dh] */
    const float *dO = a->in[3].data; /* [B,H,Tq,Dh] */
    float *out = a->out->data;       /* dq [B,H,Tq,Dh], dk, dv [B,H,2,Tk,Dh] or all */
    const int64_t pairs = t.B * t.H, nq = t.Tq * t.Dh, nk = t.Tk * t.Dh;
    /* per pair: output floats, and where dq, dk, dv start (-1: not made) */
    const int64_t no = which == 0 ? nq : which == 1 ? 2 * nk : nq + 2 * nk;
    const int64_t at_q = which == 1 ? -1 : 0, at_k = which == 0 ? -1 : which == 1 ? 0 : nq;
    const int64_t at_v = at_k < 0 ? -1 : at_k + nk;
    HG_CHECK(which >= 0 && which <= 2 && (which < 2 || t.Tq == t.Tk));
    if (pairs * no == 0)
        return 0;
    if (t.Tq * t.Tk == 0) {
        memset(out, 0, (size_t)(pairs * no) * sizeof(float));
        return 0;
    }
    const size_t slot = 2 * (size_t)(t.Tq * t.Tk) * sizeof(float);
    float *ws = a->ctx->ws; /* [threads][2][Tq,Tk] */
    const int nt = attn_threads(a->ctx, slot, pairs);
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
    for (int64_t bh = 0; bh < pairs; bh++) {
        float *P = ws + (int64_t)omp_get_thread_num() * 2 * t.Tq * t.Tk; /* [Tq,Tk] */
        float *W = P + t.Tq * t.Tk;                                       /* [Tq,Tk] */
        const float *qb = q + bh * nq, *kb = k + bh * nk, *vb = v + bh * nk;
        const float *dob = dO + bh * nq;
        float *ob = out + bh * no;
        attn_probs(&t, bh, qb, kb, P);
        if (at_v >= 0) { /* dv = DROPOUT(P)^T do */
            const float *Pd = P;
            if (t.p > 0.0f) {
                attn_dropout(&t, bh, P, W);
                Pd = W;
            }
            hg_sgemm_serial(1, 0, t.Tk, t.Dh, t.Tq, 1.0f, Pd, t.Tk, dob, t.Dh, 0.0f, ob + at_v, t.Dh);
        }
        /* dP = DROPOUT(do v^T), then dS */
        hg_sgemm_serial(0, 1, t.Tq, t.Tk, t.Dh, 1.0f, dob, t.Dh, vb, t.Dh, 0.0f, W, t.Tk);
        if (t.p > 0.0f)
            attn_dropout(&t, bh, W, W);
        attn_dscores(&t, bh, P, W);
        if (at_q >= 0) /* dq = scale dS k */
            hg_sgemm_serial(0, 0, t.Tq, t.Dh, t.Tk, t.scale, W, t.Tk, kb, t.Dh, 0.0f, ob + at_q, t.Dh);
        if (at_k >= 0) /* dk = scale dS^T q */
            hg_sgemm_serial(1, 0, t.Tk, t.Dh, t.Tq, t.scale, W, t.Tk, qb, t.Dh, 0.0f, ob + at_k, t.Dh);
    }
    return 0;
}
