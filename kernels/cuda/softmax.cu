/* softmax.cu - softmax, log-softmax and the cross-entropy / NLL losses over
 * the last axis (the formulas of cpu/softmax.c, term for term).
 *
 * A row belongs to a warp (rows up to HG_ROW_WARP_MAX) or to a block; its
 * max and sums are reduced with a fixed tree (rowwise.h), sums in double.
 * The losses are two passes: per-row losses into the workspace, then one
 * block adds them in a fixed order, in double.  That block also finds the
 * first target outside [0,C) (other than ignore_index) and records it with
 * hg_cu_fail, the row the CPU would report; the backward passes launch the
 * same check on its own.  No atomics on floats anywhere.
 */
#include <math.h>

#include "kernels/cuda/rowwise.h"

/* Shared scratch of one reduction per warp (used when TPR is the block) */
#define ROW_SHARED                                                             \
    __shared__ float shf[HG_ROW_BLOCK / 32];                                   \
    __shared__ double shd[HG_ROW_BLOCK / 32]

/* log(sum(exp(x))) of row x[C] held by the group, max-subtracted
 * (row_lse in cpu/softmax.c); -inf for a row of -inf. */
template <int TPR>
__device__ static float row_lse(const float *x, long long C, int lane, float *shf,
                                double *shd)
{
    float mx = -INFINITY;
    for (long long j = lane; j < C; j += TPR)
        mx = fmaxf(mx, x[j]);
    mx = hg_row_reduce<TPR>(mx, shf, hg_op_max());
    if (mx == -INFINITY) /* the same for the whole group */
        return -INFINITY;
    double s = 0;
    for (long long j = lane; j < C; j += TPR)
        s += expf(x[j] - mx);
    s = hg_row_reduce<TPR>(s, shd, hg_op_sum());
    return mx + (float)log(s);
}

/* y = exp(x - max) / sum, or log_softmax: y = x - lse */
template <int TPR>
__global__ static void softmax_k(const float *x, float *y, long long rows,
                                 long long C, int log_sm)
{
    ROW_SHARED;
    const int lane = threadIdx.x % TPR;
    HG_ROW_LOOP(TPR, r, rows) {
        const float *xr = x + r * C; /* [C] */
        float *yr = y + r * C;       /* [C] */
        if (log_sm) {
            const float lse = row_lse<TPR>(xr, C, lane, shf, shd);
            for (long long j = lane; j < C; j += TPR)
                yr[j] = xr[j] - lse;
            continue;
        }
        float mx = -INFINITY;
        for (long long j = lane; j < C; j += TPR)
            mx = fmaxf(mx, xr[j]);
        mx = hg_row_reduce<TPR>(mx, shf, hg_op_max());
        double s = 0;
        for (long long j = lane; j < C; j += TPR) {
            const float e = expf(xr[j] - mx);
            yr[j] = e; /* read back below by this same thread */
            s += e;
        }
        s = hg_row_reduce<TPR>(s, shd, hg_op_sum());
        const float inv = 1.0f / (float)s;
        for (long long j = lane; j < C; j += TPR)
            yr[j] *= inv;
    }
}

/* softmax: dx = y * (dy - sum(dy * y)); log_softmax: dx = dy - exp(y) * sum(dy) */
template <int TPR>
__global__ static void softmax_bwd_k(const float *y, const float *dy, float *dx,
                                     long long rows, long long C, int log_sm)
{
    ROW_SHARED;
    (void)shf;
    const int lane = threadIdx.x % TPR;
    HG_ROW_LOOP(TPR, r, rows) {
        const float *yr = y + r * C, *gr = dy + r * C; /* [C] */
        float *dr = dx + r * C;                        /* [C] */
        double s = 0;
        for (long long j = lane; j < C; j += TPR)
            s += log_sm ? gr[j] : yr[j] * gr[j];
        const float sf = (float)hg_row_reduce<TPR>(s, shd, hg_op_sum());
        if (log_sm)
            for (long long j = lane; j < C; j += TPR)
                dr[j] = gr[j] - expf(yr[j]) * sf;
        else
            for (long long j = lane; j < C; j += TPR)
                dr[j] = yr[j] * (gr[j] - sf);
    }
}

static int softmax_run(const struct hg_kargs *a, int log_sm)
{
    int64_t rows, C;
    HG_CHECK(a->n_in == 1 && a->in[0].dtype == HG_F32 && a->out->dtype == HG_F32);
    hg_rows_cols(&a->in[0].shape, &rows, &C);
    HG_CHECK(hg_shape_numel(&a->out->shape) == rows * C);
    if (rows == 0)
        return 0;
    HG_ROW_LAUNCH(a, C, rows, softmax_k, (const float *)a->in[0].data,
               (float *)a->out->data, rows, C, log_sm);
    return 0;
}

static int softmax_bwd_run(const struct hg_kargs *a, int log_sm)
{
    int64_t rows, C;
    HG_CHECK(a->n_in == 2 && a->in[0].dtype == HG_F32 && a->in[1].dtype == HG_F32);
    hg_rows_cols(&a->in[0].shape, &rows, &C);
    HG_CHECK(hg_shape_numel(&a->in[1].shape) == rows * C);
    HG_CHECK(hg_shape_numel(&a->out->shape) == rows * C);
    if (rows == 0)
        return 0;
    HG_ROW_LAUNCH(a, C, rows, softmax_bwd_k, (const float *)a->in[0].data,
               (const float *)a->in[1].data, (float *)a->out->data, rows, C, log_sm);
    return 0;
}

extern "C" HG_CUDA_FN(softmax) { return softmax_run(a, 0); }
extern "C" HG_CUDA_FN(log_softmax) { return softmax_run(a, 1); }
extern "C" HG_CUDA_FN(softmax_bwd) { return softmax_bwd_run(a, 0); }
extern "C" HG_CUDA_FN(log_softmax_bwd) { return softmax_bwd_run(a, 1); }

/* ---- losses ---------------------------------------------------------------- */

__device__ static inline int bad_target(int32_t t, int ign, long long C)
{
    return t != ign && (t < 0 || t >= C);
}

/* Per-row loss val[r] (0 for ignored and bad rows):
 * (1-s) * (-logp[t]) + s/C * sum_j(-logp[j]),  -logp[j] = lse - x[j]
 * (lse = 0 for NLL's log-probabilities), as loss_fwd in cpu/softmax.c. */
template <int TPR>
__global__ static void loss_rows_k(const float *x, const int32_t *t, double *val,
                                   long long rows, long long C, int ign, float sm,
                                   int ce)
{
    ROW_SHARED;
    const int lane = threadIdx.x % TPR;
    HG_ROW_LOOP(TPR, r, rows) {
        const float *xr = x + r * C; /* [C] */
        const int32_t tr = t[r];
        if (tr == ign || bad_target(tr, ign, C)) {
            if (lane == 0)
                val[r] = 0;
            continue;
        }
        const float lse = ce ? row_lse<TPR>(xr, C, lane, shf, shd) : 0.0f;
        double l = (1.0f - sm) * (lse - xr[tr]);
        if (sm != 0.0f) {
            double sx = 0;
            for (long long j = lane; j < C; j += TPR)
                sx += lse - xr[j];
            sx = hg_row_reduce<TPR>(sx, shd, hg_op_sum());
            l += sm / C * sx;
        }
        if (lane == 0)
            val[r] = l;
    }
}

/* One block: records the first bad target, then (loss != NULL) loss[0] =
 * the sum of val[rows] in a fixed order. */
__global__ static void loss_finish_k(const double *val, const int32_t *t,
                                     long long rows, long long C, int ign,
                                     struct hg_cuda_err *derr, int pos, int op,
                                     float *loss)
{
    __shared__ long long shl[HG_ROW_BLOCK / 32];
    __shared__ double shd[HG_ROW_BLOCK / 32];
    const long long bad = hg_first_bad(t, rows, C, ign, shl);
    if (bad < rows && threadIdx.x == 0)
        hg_cu_fail(derr, pos, op, HG_CUERR_TARGET, t[bad], bad, C);
    if (!loss)
        return;
    double s = 0;
    for (long long i = threadIdx.x; i < rows; i += HG_ROW_BLOCK)
        s += val[i];
    s = hg_row_reduce<HG_ROW_BLOCK>(s, shd, hg_op_sum());
    if (threadIdx.x == 0)
        loss[0] = (float)s;
}

/* CE:  dx = dloss * (softmax_j - (1-s)[j==t] - s/C)
 * NLL: dx = -dloss * ((1-s)[j==t] + s/C); ignored (and bad) rows get 0.
 * The same float operations as loss_bwd in cpu/softmax.c. */
template <int TPR>
__global__ static void loss_bwd_k(const float *x, const int32_t *t,
                                  const float *dloss, float *dx, long long rows,
                                  long long C, int ign, float sm, int ce)
{
    ROW_SHARED;
    const int lane = threadIdx.x % TPR;
    const float dl = dloss[0];
    const float off = sm / (float)C; /* smoothing mass per class */
    HG_ROW_LOOP(TPR, r, rows) {
        const float *xr = x + r * C; /* [C] */
        float *dr = dx + r * C;      /* [C] */
        const int32_t tr = t[r];
        if (tr == ign || bad_target(tr, ign, C)) {
            for (long long j = lane; j < C; j += TPR)
                dr[j] = 0.0f;
            continue;
        }
        if (ce) {
            const float lse = row_lse<TPR>(xr, C, lane, shf, shd);
            for (long long j = lane; j < C; j += TPR) {
                float v = dl * (expf(xr[j] - lse) - off);
                if (j == tr)
                    v -= dl * (1.0f - sm);
                dr[j] = v;
            }
        } else {
            for (long long j = lane; j < C; j += TPR) {
                float v = -dl * off;
                if (j == tr)
                    v -= dl * (1.0f - sm);
                dr[j] = v;
            }
        }
    }
}

/* (logits or logp [rows,C], target [rows] i32) -> loss [1];
 * workspace: val [rows] doubles */
static int loss_fwd(const struct hg_kargs *a, int ce, enum hg_op op)
{
    const float *x = (const float *)a->in[0].data;   /* [rows,C] */
    const int32_t *t = (const int32_t *)a->in[1].data; /* [rows] */
    double *val = (double *)a->ctx->ws;               /* [rows] */
    int64_t rows, C;
    HG_CHECK(a->n_in == 2 && a->in[0].dtype == HG_F32 && a->in[1].dtype == HG_I32);
    hg_rows_cols(&a->in[0].shape, &rows, &C);
    HG_CHECK(hg_shape_numel(&a->in[1].shape) == rows);
    HG_CHECK(a->out->dtype == HG_F32 && hg_shape_numel(&a->out->shape) == 1);
    HG_CHECK(a->ctx->ws_bytes >= (size_t)rows * sizeof(double));
    if (rows > 0)
        HG_ROW_LAUNCH(a, C, rows, loss_rows_k, x, t, val, rows, C,
                   a->attr->ce.ignore_index, a->attr->ce.smoothing, ce);
    struct hg_cuda_ctx *cu = hg_cu(a);
    loss_finish_k<<<1, HG_ROW_BLOCK, 0, cu->stream>>>(
        val, t, rows, C, a->attr->ce.ignore_index, cu->derr, a->ctx->pos, (int)op,
        (float *)a->out->data);
    HG_CU_LAUNCHED(a);
    return 0;
}

/* (logits or logp_ref [rows,C], target [rows], dloss [1]) -> dx [rows,C] */
static int loss_bwd(const struct hg_kargs *a, int ce, enum hg_op op)
{
    const float *x = (const float *)a->in[0].data;     /* [rows,C] */
    const int32_t *t = (const int32_t *)a->in[1].data; /* [rows] */
    const float *dloss = (const float *)a->in[2].data; /* [1] */
    int64_t rows, C;
    HG_CHECK(a->n_in == 3 && a->in[0].dtype == HG_F32 && a->in[1].dtype == HG_I32);
    HG_CHECK(a->in[2].dtype == HG_F32 && hg_shape_numel(&a->in[2].shape) == 1);
    hg_rows_cols(&a->in[0].shape, &rows, &C);
    HG_CHECK(hg_shape_numel(&a->in[1].shape) == rows);
    HG_CHECK(hg_shape_numel(&a->out->shape) == rows * C);
    if (rows == 0)
        return 0;
    HG_ROW_LAUNCH(a, C, rows, loss_bwd_k, x, t, dloss, (float *)a->out->data, rows, C,
               a->attr->ce.ignore_index, a->attr->ce.smoothing, ce);
    struct hg_cuda_ctx *cu = hg_cu(a);
    loss_finish_k<<<1, HG_ROW_BLOCK, 0, cu->stream>>>(
        NULL, t, rows, C, a->attr->ce.ignore_index, cu->derr, a->ctx->pos, (int)op,
        NULL);
    HG_CU_LAUNCHED(a);
    return 0;
}

extern "C" HG_CUDA_FN(cross_entropy) { return loss_fwd(a, 1, HG_OP_CROSS_ENTROPY); }
extern "C" HG_CUDA_FN(cross_entropy_bwd)
{
    return loss_bwd(a, 1, HG_OP_CROSS_ENTROPY_BWD);
}
extern "C" HG_CUDA_FN(nll) { return loss_fwd(a, 0, HG_OP_NLL); }
extern "C" HG_CUDA_FN(nll_bwd) { return loss_bwd(a, 0, HG_OP_NLL_BWD); }

/* The forward losses keep one double per row: (x[..,C], target) -> [1] */
static size_t loss_ws(const struct hg_shape *x)
{
    int64_t rows, C;
    hg_rows_cols(x, &rows, &C);
    return (size_t)rows * sizeof(double);
}

extern "C" HG_WS_FN(cuda_cross_entropy)
{
    (void)n_in, (void)out, (void)attr, (void)nthreads;
    return loss_ws(&in[0]);
}

extern "C" HG_WS_FN(cuda_nll)
{
    (void)n_in, (void)out, (void)attr, (void)nthreads;
    return loss_ws(&in[0]);
}
