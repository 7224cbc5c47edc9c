/* attention.cu - ATTENTION and ATTENTION_BWD (semantics in
 * kernels/ops-impl.h, reference kernels/cpu/attention.c).
 *
 * A plain implementation, not a tiled flash kernel: a block per query row
 * computes that row's scores, mask, softmax and dropout (the
 * hg_rand_uniform formula of DROPOUT, ew-math.h) into the workspace
 * [B,H,Tq,Tk]; a second grid-stride kernel then forms each output element
 * as a sum over the row (or, for dk and dv, over the column) in a fixed
 * order.  The backward's first pass also writes dS [B,H,Tq,Tk].  Row sums
 * use the fixed tree of rowwise.h; no atomics.  The scores are summed in
 * another order than the CPU's GEMM, so results agree to fp32 rounding.
 */
#include <string.h>

#include "kernels/cuda/rowwise.h"

struct attn_d {
    long long B, H, Tq, Tk, Dh;
    float scale, fill, p, ps; /* ps = 1/(1-p) */
    int causal;
    uint64_t key;             /* dropout key: hg_rand_key(seed, step) */
    const int32_t *keep;      /* [B,Tk] or NULL (device) */
    const int32_t *ids;       /* [B] the rows' sample ids or NULL (device; b itself) */
};

static struct attn_d attn_make(const struct hg_kargs *a, int nf)
{
    const struct hg_shape *q = &a->in[0].shape, *k = &a->in[1].shape;
    struct attn_d t;
    memset(&t, 0, sizeof t);
    const int nids = a->attr->attn.ids != 0;
    HG_CHECK(q->ndim == 4 && k->ndim == 4 && a->n_in >= 3 + nf + nids);
    t.B = q->dim[0], t.H = q->dim[1], t.Tq = q->dim[2], t.Tk = k->dim[2], t.Dh = q->dim[3];
    t.scale = a->attr->attn.scale;
    t.fill = a->attr->attn.fill;
    t.p = a->attr->attn.p;
    t.ps = t.p < 1.0f ? 1.0f / (1.0f - t.p) : 0.0f;
    t.causal = a->attr->attn.causal;
    t.key = hg_rand_key(a->attr->attn.seed, a->ctx->step);
    if (a->n_in == 4 + nf + nids) {
        HG_CHECK(a->in[3 + nf].dtype == HG_I32);
        t.keep = (const int32_t *)a->in[3 + nf].data;
    }
    if (nids) {
        HG_CHECK(a->in[a->n_in - 1].dtype == HG_I32);
        t.ids = (const int32_t *)a->in[a->n_in - 1].data;
    }
    return t;
}

extern "C" HG_WS_FN(cuda_attention)
{
    (void)n_in, (void)out, (void)attr, (void)nthreads;
    return (size_t)(in[0].dim[0] * in[0].dim[1] * in[0].dim[2] * in[1].dim[2]) * sizeof(float);
}

extern "C" HG_WS_FN(cuda_attention_bwd)
{
    (void)n_in, (void)out, (void)attr, (void)nthreads;
    return 2 * (size_t)(in[0].dim[0] * in[0].dim[1] * in[0].dim[2] * in[1].dim[2]) *
           sizeof(float);
}

/* The dropout key of row r of [B,H,Tq,Tk]: DROPOUT's (hg_ew_drop_row_key:
 * the sample's id, the head, the query), as kernels/cpu/attention.c */
__device__ static inline uint64_t attn_row_key(const struct attn_d &t, long long r)
{
    const int64_t rows[3] = {t.B, t.H, t.Tq}; /* the row axes of [B,H,Tq,Tk] */
    return hg_ew_drop_row_key(t.key, t.ids, rows, 3, (int64_t)r);
}

__device__ static inline bool attn_masked(const struct attn_d &t, long long bh, long long qi,
                                          long long j)
{
    return (t.causal && j > qi) || (t.keep && t.keep[(bh / t.H) * t.Tk + j] == 0);
}

/* Row r = (bh, qi) of P = softmax(mask(scale q k^T)) into pr[Tk], by the
 * whole block; every thread reads back only the entries it wrote. */
__device__ static void attn_row_probs(const struct attn_d &t, long long r, const float *q,
                                      const float *k, float *pr, float *shf, double *shd)
{
    const long long bh = r / t.Tq, qi = r % t.Tq;
    const float *qr = q + r * t.Dh;        /* [Dh] */
    const float *kb = k + bh * t.Tk * t.Dh; /* [Tk,Dh] */
    float mx = -INFINITY;
    for (long long j = threadIdx.x; j < t.Tk; j += HG_ROW_BLOCK) {
        float s = 0.0f;
        for (long long d = 0; d < t.Dh; d++)
            s += qr[d] * kb[j * t.Dh + d];
        s = attn_masked(t, bh, qi, j) ? t.fill : s * t.scale;
        pr[j] = s;
        mx = fmaxf(mx, s);
    }
    mx = hg_row_reduce<HG_ROW_BLOCK>(mx, shf, hg_op_max());
    double sum = 0;
    for (long long j = threadIdx.x; j < t.Tk; j += HG_ROW_BLOCK) {
        const float e = expf(pr[j] - mx);
        pr[j] = e;
        sum += e;
    }
    sum = hg_row_reduce<HG_ROW_BLOCK>(sum, shd, hg_op_sum());
    const float inv = 1.0f / (float)sum;
    for (long long j = threadIdx.x; j < t.Tk; j += HG_ROW_BLOCK)
        pr[j] *= inv;
}

/* P' = DROPOUT(P) of every row into P [B,H,Tq,Tk] */
__global__ static void attn_fwd_rows(struct attn_d t, const float *q, const float *k,
                                     float *P)
{
    __shared__ float shf[HG_ROW_BLOCK / 32];
    __shared__ double shd[HG_ROW_BLOCK / 32];
    HG_ROW_LOOP(HG_ROW_BLOCK, r, t.B * t.H * t.Tq) {
        float *pr = P + r * t.Tk; /* [Tk] */
        attn_row_probs(t, r, q, k, pr, shf, shd);
        const uint64_t rk = t.p > 0.0f ? attn_row_key(t, r) : 0;
        if (t.p > 0.0f)
            for (long long j = threadIdx.x; j < t.Tk; j += HG_ROW_BLOCK)
                pr[j] = hg_ew_dropout(pr[j], rk, (uint64_t)j, t.p, t.ps);
    }
}

/* out[bh][r,d] = alpha * sum_j W[bh,r,j] x[bh,j,d]: W [B,H,Tq,Tk], x
 * [B,H,Tk,Dh], out pair bh's [Tq,Dh] at out + bh * stride (o = P' v,
 * dq = scale dS k) */
__global__ static void attn_rows_times(struct attn_d t, const float *W, const float *x,
                                       float alpha, float *out, long long stride)
{
    HG_CU_FOR(i, t.B * t.H * t.Tq * t.Dh) {
        const long long d = i % t.Dh, r = i / t.Dh, bh = r / t.Tq;
        const float *wr = W + r * t.Tk;              /* [Tk] */
        const float *xb = x + bh * t.Tk * t.Dh + d;  /* column d of [Tk,Dh] */
        float s = 0.0f;
        for (long long j = 0; j < t.Tk; j++)
            s += wr[j] * xb[j * t.Dh];
        out[bh * stride + (r % t.Tq) * t.Dh + d] = alpha * s;
    }
}

extern "C" HG_CUDA_FN(attention)
{
    const struct attn_d t = attn_make(a, 0);
    const float *q = (const float *)a->in[0].data; /* [B,H,Tq,Dh] */
    const float *k = (const float *)a->in[1].data; /* [B,H,Tk,Dh] */
    const float *v = (const float *)a->in[2].data; /* [B,H,Tk,Dh] */
    float *o = (float *)a->out->data;              /* [B,H,Tq,Dh] */
    float *P = (float *)a->ctx->ws;                /* [B,H,Tq,Tk] */
    const long long rows = t.B * t.H * t.Tq, no = rows * t.Dh;
    if (no == 0)
        return 0;
    if (t.Tk == 0) {
        HG_CU_TRY(a, cudaMemsetAsync(o, 0, (size_t)no * sizeof(float), hg_cu(a)->stream));
        return 0;
    }
    HG_CHECK(a->ctx->ws_bytes >= (size_t)(rows * t.Tk) * sizeof(float));
    attn_fwd_rows<<<hg_row_blocks(a, rows, HG_ROW_BLOCK), HG_ROW_BLOCK, 0,
                    hg_cu(a)->stream>>>(t, q, k, P);
    HG_CU_LAUNCHED(a);
    attn_rows_times<<<hg_cu_blocks(a, no), HG_CU_THREADS, 0, hg_cu(a)->stream>>>(
        t, P, v, 1.0f, o, t.Tq * t.Dh);
    HG_CU_LAUNCHED(a);
    return 0;
}

/* Per row: P' (DROPOUT(P)) into P and dS into G, both [B,H,Tq,Tk]:
 * dP = DROPOUT(do v^T), dS = P (dP - sum(P dP)), masked elements 0 */
__global__ static void attn_bwd_rows(struct attn_d t, const float *q, const float *k,
                                     const float *v, const float *dO, float *P, float *G)
{
    __shared__ float shf[HG_ROW_BLOCK / 32];
    __shared__ double shd[HG_ROW_BLOCK / 32];
    HG_ROW_LOOP(HG_ROW_BLOCK, r, t.B * t.H * t.Tq) {
        const long long bh = r / t.Tq, qi = r % t.Tq;
        float *pr = P + r * t.Tk, *gr = G + r * t.Tk; /* [Tk] each */
        const float *dor = dO + r * t.Dh;             /* [Dh] */
        const float *vb = v + bh * t.Tk * t.Dh;       /* [Tk,Dh] */
        attn_row_probs(t, r, q, k, pr, shf, shd);
        const uint64_t rk = t.p > 0.0f ? attn_row_key(t, r) : 0;
        double dsum = 0;
        for (long long j = threadIdx.x; j < t.Tk; j += HG_ROW_BLOCK) {
            float dp = 0.0f;
            for (long long d = 0; d < t.Dh; d++)
                dp += dor[d] * vb[j * t.Dh + d];
            if (t.p > 0.0f)
                dp = hg_ew_dropout(dp, rk, (uint64_t)j, t.p, t.ps);
            gr[j] = dp;
            dsum += (double)(pr[j] * dp);
        }
        const float D = (float)hg_row_reduce<HG_ROW_BLOCK>(dsum, shd, hg_op_sum());
        for (long long j = threadIdx.x; j < t.Tk; j += HG_ROW_BLOCK) {
            gr[j] = attn_masked(t, bh, qi, j) ? 0.0f : pr[j] * (gr[j] - D);
            if (t.p > 0.0f)
                pr[j] = hg_ew_dropout(pr[j], rk, (uint64_t)j, t.p, t.ps);
        }
    }
}

/* dk[bh,j,d] = scale sum_q dS[bh,q,j] q[bh,q,d], dv[bh,j,d] = sum_q
 * P'[bh,q,j] do[bh,q,d]; dk [B,H,Tk,Dh] at out, dv [B,H,Tk,Dh] at out +
 * B*H*Tk*Dh (the stack [2 or 3,B,H,Tk,Dh]) */
__global__ static void attn_cols_times(struct attn_d t, const float *P, const float *G,
                                       const float *q, const float *dO, float *out)
{
    HG_CU_FOR(i, t.B * t.H * t.Tk * t.Dh) {
        const long long d = i % t.Dh, c = i / t.Dh, bh = c / t.Tk, j = c % t.Tk;
        const float *pc = P + bh * t.Tq * t.Tk + j, *gc = G + bh * t.Tq * t.Tk + j;
        const float *qc = q + bh * t.Tq * t.Dh + d, *dc = dO + bh * t.Tq * t.Dh + d;
        float sk = 0.0f, sv = 0.0f;
        for (long long r = 0; r < t.Tq; r++) {
            sk += gc[r * t.Tk] * qc[r * t.Dh];
            sv += pc[r * t.Tk] * dc[r * t.Dh];
        }
        out[i] = t.scale * sk;                  /* dk */
        out[t.B * t.H * t.Tk * t.Dh + i] = sv;  /* dv */
    }
}

extern "C" HG_CUDA_FN(attention_bwd)
{
    const struct attn_d t = attn_make(a, 1);
    const int which = a->attr->attn.which;
    const float *q = (const float *)a->in[0].data;  /* [B,H,Tq,Dh] */
    const float *k = (const float *)a->in[1].data;  /* [B,H,Tk,Dh] */
    const float *v = (const float *)a->in[2].data;  /* [B,H,Tk,Dh] */
    const float *dO = (const float *)a->in[3].data; /* [B,H,Tq,Dh] */
    /* dq [B,H,Tq,Dh], dk and dv [2,B,H,Tk,Dh], or all three [3,B,H,T,Dh] */
    float *out = (float *)a->out->data;
    const long long rows = t.B * t.H * t.Tq, nq = t.Tq * t.Dh, nk = t.Tk * t.Dh;
    const long long no = hg_shape_numel(&a->out->shape);
    HG_CHECK(which >= 0 && which <= 2 && (which < 2 || t.Tq == t.Tk));
    if (no == 0)
        return 0;
    if (rows * t.Tk == 0) {
        HG_CU_TRY(a, cudaMemsetAsync(out, 0, (size_t)no * sizeof(float), hg_cu(a)->stream));
        return 0;
    }
    HG_CHECK(a->ctx->ws_bytes >= 2 * (size_t)(rows * t.Tk) * sizeof(float));
    float *P = (float *)a->ctx->ws; /* [B,H,Tq,Tk] P' */
    float *G = P + rows * t.Tk;     /* [B,H,Tq,Tk] dS */
    attn_bwd_rows<<<hg_row_blocks(a, rows, HG_ROW_BLOCK), HG_ROW_BLOCK, 0,
                    hg_cu(a)->stream>>>(t, q, k, v, dO, P, G);
    HG_CU_LAUNCHED(a);
    if (which != 1) { /* dq first in the stack */
        attn_rows_times<<<hg_cu_blocks(a, rows * t.Dh), HG_CU_THREADS, 0,
                          hg_cu(a)->stream>>>(t, G, k, t.scale, out, nq);
        HG_CU_LAUNCHED(a);
    }
    if (which != 0) { /* dk, dv last in the stack */
        attn_cols_times<<<hg_cu_blocks(a, t.B * t.H * nk), HG_CU_THREADS, 0,
                          hg_cu(a)->stream>>>(t, P, G, q, dO,
                                              out + (which == 2 ? t.B * t.H * nq : 0));
        HG_CU_LAUNCHED(a);
    }
    return 0;
}
