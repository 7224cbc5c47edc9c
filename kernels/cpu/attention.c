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
    const int32_t *ids;       /* [B] the rows' sample ids or NULL (b itself) */
};

static struct attn attn_make(const struct hg_kargs *a, int nf)
{
    const struct hg_shape *q = &a->in[0].shape, *k = &a->in[1].shape;
    struct attn t = {.B = q->dim[0], .H = q->dim[1], .Tq = q->dim[2], .Tk = k->dim[2],
                     .Dh = q->dim[3], .scale = a->attr->attn.scale,
                     .fill = a->attr->attn.fill, .p = a->attr->attn.p,
                     .causal = a->attr->attn.causal};
    const int nids = a->attr->attn.ids != 0;
    HG_CHECK(q->ndim == 4 && k->ndim == 4 && a->n_in >= 3 + nf + nids);
    for (int i = 0; i < 3 + nf; i++)
        HG_CHECK(a->in[i].dtype == HG_F32);
    if (a->n_in == 4 + nf + nids) {
        HG_CHECK(a->in[3 + nf].dtype == HG_I32);
        t.keep = a->in[3 + nf].data;
    }
    if (nids) {
        const struct hg_tview *iv = &a->in[a->n_in - 1];
        HG_CHECK(iv->dtype == HG_I32 && hg_shape_numel(&iv->shape) == t.B);
        t.ids = iv->data;
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

/* exp(x) for x <= 0 (scores minus their row's maximum): Cephes' expf
 * polynomial in arithmetic a compiler vectorises (glibc's expf stays scalar
 * and was 3/4 of the row work), within 2 ulp of expf; 0 below -87.3 (the
 * masked scores' -1e30), where expf gives 0 or a subnormal.  No
 * contraction and no reassociation: every SIMD variant gives its bits. */
static inline float attn_exp(float x)
{
    const float lo = -87.3365447505531f, hi = 88.3762626647949f;
    float xc = x < lo ? lo : x > hi ? hi : x;
    const float t = xc * 1.44269504088896341f;
    const float n = (t + 12582912.0f) - 12582912.0f; /* round to nearest */
    xc = xc - n * 0.693359375f;
    xc = xc - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * xc + 1.3981999507e-3f;
    p = p * xc + 8.3334519073e-3f;
    p = p * xc + 4.1665795894e-2f;
    p = p * xc + 1.6666665459e-1f;
    p = p * xc + 5.0000001201e-1f;
    p = p * (xc * xc) + xc + 1.0f;
    const union { uint32_t u; float f; } two_n = {.u = (uint32_t)((int32_t)n + 127) << 23};
    return x < lo ? 0.0f : p * two_n.f;
}

/* pr[n] = exp(pr - max(pr)); returns the max.  The max takes 16 lanes (any
 * order gives the same max). */
HG_SIMD_DEF(static float, attn_row_exp, (float *restrict pr, int64_t n), {
    float m[16];
    for (int l = 0; l < 16; l++)
        m[l] = -INFINITY;
    int64_t j = 0;
    for (; j + 16 <= n; j += 16)
        for (int l = 0; l < 16; l++)
            m[l] = pr[j + l] > m[l] ? pr[j + l] : m[l];
    float mx = -INFINITY;
    for (; j < n; j++)
        mx = pr[j] > mx ? pr[j] : mx;
    for (int l = 0; l < 16; l++)
        mx = m[l] > mx ? m[l] : mx;
    for (j = 0; j < n; j++)
        pr[j] = attn_exp(pr[j] - mx);
    return mx;
})

/* The dropout key of row r of pair bh: DROPOUT's over [B,H,Tq,Tk]
 * (hg_ew_drop_row_key: the sample's id, the head, the query) */
static uint64_t attn_row_key(const struct attn *t, int64_t bh, int64_t r)
{
    const int64_t rows[3] = {t->B, t->H, t->Tq}; /* the row axes of [B,H,Tq,Tk] */
    return hg_ew_drop_row_key(t->key, t->ids, rows, 3, bh * t->Tq + r);
}

/* y[n] = DROPOUT(y * s), the row's key key (p 0: y * s) */
HG_SIMD_DEF(static void, attn_scale_drop,
            (float *restrict y, int64_t n, float s, uint64_t key, float p, float ps), {
    if (p > 0.0f)
        for (int64_t j = 0; j < n; j++)
            y[j] = hg_ew_dropout(y[j] * s, key, (uint64_t)j, p, ps);
    else if (s != 1.0f)
        for (int64_t j = 0; j < n; j++)
            y[j] *= s;
})

/* P[Tq,Tk] = softmax(mask(scale q k^T)) of pair bh (MATMUL, MASKED_FILL,
 * SOFTMAX; the row sums in 16 lanes and double), then DROPOUT if drop.
 * q [Tq,Dh], k [Tk,Dh]. */
static void attn_probs(const struct attn *t, int64_t bh, const float *q, const float *k,
                       int drop, float *P)
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
        HG_SIMD_PICK(attn_row_exp)(pr, Tk);
        const float inv = 1.0f / (float)hg_cpu_sum_run(pr, Tk);
        HG_SIMD_PICK(attn_scale_drop)(pr, Tk, inv, drop ? attn_row_key(t, bh, r) : 0,
                                      drop ? t->p : 0.0f, t->ps);
    }
}

/* y[Tq,Tk] = DROPOUT(y) of pair bh */
static void attn_dropout(const struct attn *t, int64_t bh, float *y)
{
    for (int64_t r = 0; r < t->Tq; r++)
        HG_SIMD_PICK(attn_scale_drop)(y + r * t->Tk, t->Tk, 1.0f, attn_row_key(t, bh, r),
                                      t->p, t->ps);
}

/* (q, k, v [, keep] [, ids]) -> o = DROPOUT(P) v */
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
        attn_probs(&t, bh, q + bh * nq, k + bh * nk, 1, P);
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
        float *gr = dP + r * Tk; /* [Tk] */
        hg_cpu_softmax_bwd_row(P + r * Tk, gr, gr, Tk);
        const int64_t kend = t->causal ? (r + 1 < Tk ? r + 1 : Tk) : Tk;
        if (keep)
            for (int64_t j = 0; j < kend; j++)
                if (keep[j] == 0)
                    gr[j] = 0.0f;
        for (int64_t j = kend; j < Tk; j++)
            gr[j] = 0.0f;
    }
}

/* (q, k, v, do [, keep] [, ids]) -> which 0: dq [B,H,Tq,Dh]; 1: dk, dv [2,B,H,Tk,Dh];
 * 2: dq, dk, dv [3,B,H,T,Dh] */
HG_CPU_FN(attention_bwd)
{
    const struct attn t = attn_make(a, 1);
    const int which = a->attr->attn.which;
    const float *q = a->in[0].data;  /* [B,H,Tq,Dh] */
    const float *k = a->in[1].data;  /* [B,H,Tk,Dh] */
    const float *v = a->in[2].data;  /* [B,H,Tk,Dh] */
    const float *dO = a->in[3].data; /* [B,H,Tq,Dh] */
    float *out = a->out->data;       /* dq [B,H,Tq,Dh], dk, dv [2,B,H,Tk,Dh] or all */
    const int64_t pairs = t.B * t.H, nq = t.Tq * t.Dh, nk = t.Tk * t.Dh;
    /* output floats per pair, and where pair 0's dq, dk, dv start (-1: not
     * made); pair bh's are bh * nq or bh * nk further */
    const int64_t no = which == 0 ? nq : which == 1 ? 2 * nk : nq + 2 * nk;
    const int64_t at_q = which == 1 ? -1 : 0;
    const int64_t at_k = which == 0 ? -1 : which == 1 ? 0 : pairs * nq;
    const int64_t at_v = at_k < 0 ? -1 : at_k + pairs * nk;
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
        attn_probs(&t, bh, qb, kb, 0, P);
        if (at_v >= 0) { /* dv = DROPOUT(P)^T do */
            const float *Pd = P;
            if (t.p > 0.0f) {
                memcpy(W, P, (size_t)(t.Tq * t.Tk) * sizeof(float));
                attn_dropout(&t, bh, W);
                Pd = W;
            }
            hg_sgemm_serial(1, 0, t.Tk, t.Dh, t.Tq, 1.0f, Pd, t.Tk, dob, t.Dh, 0.0f,
                            out + at_v + bh * nk, t.Dh);
        }
        /* dP = DROPOUT(do v^T), then dS */
        hg_sgemm_serial(0, 1, t.Tq, t.Tk, t.Dh, 1.0f, dob, t.Dh, vb, t.Dh, 0.0f, W, t.Tk);
        if (t.p > 0.0f)
            attn_dropout(&t, bh, W);
        attn_dscores(&t, bh, P, W);
        if (at_q >= 0) /* dq = scale dS k */
            hg_sgemm_serial(0, 0, t.Tq, t.Dh, t.Tk, t.scale, W, t.Tk, kb, t.Dh, 0.0f,
                            out + at_q + bh * nq, t.Dh);
        if (at_k >= 0) /* dk = scale dS^T q */
            hg_sgemm_serial(1, 0, t.Tk, t.Dh, t.Tq, t.scale, W, t.Tk, qb, t.Dh, 0.0f,
                            out + at_k + bh * nk, t.Dh);
    }
    return 0;
}
