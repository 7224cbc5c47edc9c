/* norm.cu - layer normalisation over the last axis: biased variance, eps
 * inside the sqrt (the formulas of cpu/norm.c, term for term).
 *
 * A row belongs to a warp or a block (rowwise.h); its sums are reduced in
 * double with a fixed tree.  LAYERNORM_BWD_G sums over rows without
 * atomics: row statistics and per-chunk column partials go to the
 * workspace (hg_ws_cuda_layernorm_bwd_g), then the chunks are added in a
 * fixed order (hg_cu_sum_parts).
 */
#include <math.h>

#include "kernels/cuda/reduce-impl.h"
#include "kernels/cuda/rowwise.h"

/* LAYERNORM_BWD_G: rows are cut into at most GCHUNKS fixed chunks (fixed by
 * the shape alone, so the bits do not depend on the GPU) */
#define GCHUNKS 256
#define GCOLS 128 /* columns per block of the partial sums */

/* mean and 1/sqrt(var + eps) of row x[D] held by the group */
template <int TPR>
__device__ static void row_stats(const float *x, long long D, float eps, int lane,
                                 double *shd, float *mean, float *rstd)
{
    double s = 0;
    for (long long j = lane; j < D; j += TPR)
        s += x[j];
    s = hg_row_reduce<TPR>(s, shd, hg_op_sum());
    const float m = (float)(s / (double)D);
    double v = 0;
    for (long long j = lane; j < D; j += TPR) {
        const float d = x[j] - m;
        v += (double)d * d;
    }
    v = hg_row_reduce<TPR>(v, shd, hg_op_sum());
    *mean = m;
    *rstd = 1.0f / sqrtf((float)(v / (double)D) + eps);
}

/* y = (x - mean) * rstd * gamma + beta */
template <int TPR>
__global__ static void layernorm_k(const float *x, const float *gamma,
                                   const float *beta, float *y, long long rows,
                                   long long D, float eps)
{
    __shared__ double shd[HG_ROW_BLOCK / 32];
    const int lane = threadIdx.x % TPR;
    HG_ROW_LOOP(TPR, r, rows) {
        const float *xr = x + r * D; /* [D] */
        float *yr = y + r * D;       /* [D] */
        float m, rs;
        row_stats<TPR>(xr, D, eps, lane, shd, &m, &rs);
        for (long long j = lane; j < D; j += TPR)
            yr[j] = (xr[j] - m) * rs * gamma[j] + beta[j];
    }
}

/* dx = rstd * (g*dy - mean(g*dy) - xhat * mean(g*dy*xhat)) */
template <int TPR>
__global__ static void layernorm_bwd_x_k(const float *x, const float *gamma,
                                         const float *dy, float *dx, long long rows,
                                         long long D, float eps)
{
    __shared__ double shd[HG_ROW_BLOCK / 32];
    const int lane = threadIdx.x % TPR;
    HG_ROW_LOOP(TPR, r, rows) {
        const float *xr = x + r * D, *gr = dy + r * D; /* [D] */
        float *dr = dx + r * D;                        /* [D] */
        float m, rs;
        row_stats<TPR>(xr, D, eps, lane, shd, &m, &rs);
        double s1 = 0, s2 = 0; /* sum(g*dy), sum(g*dy*xhat) */
        for (long long j = lane; j < D; j += TPR) {
            const float gd = gamma[j] * gr[j];
            s1 += gd;
            s2 += gd * (xr[j] - m) * rs;
        }
        s1 = hg_row_reduce<TPR>(s1, shd, hg_op_sum());
        s2 = hg_row_reduce<TPR>(s2, shd, hg_op_sum());
        const float m1 = (float)(s1 / (double)D), m2 = (float)(s2 / (double)D);
        for (long long j = lane; j < D; j += TPR)
            dr[j] = rs * (gamma[j] * gr[j] - m1 - (xr[j] - m) * rs * m2);
    }
}

/* LAYERNORM_BWD_G pass 1: mean[rows], rstd[rows] */
template <int TPR>
__global__ static void ln_stats_k(const float *x, float *mean, float *rstd,
                                  long long rows, long long D, float eps)
{
    __shared__ double shd[HG_ROW_BLOCK / 32];
    const int lane = threadIdx.x % TPR;
    HG_ROW_LOOP(TPR, r, rows) {
        float m, rs;
        row_stats<TPR>(x + r * D, D, eps, lane, shd, &m, &rs);
        if (lane == 0) {
            mean[r] = m;
            rstd[r] = rs;
        }
    }
}

/* pass 2: part[chunk][j] = sum over the chunk's rows, in order, of
 * dy * (x - mean) * rstd; grid (column blocks, chunks) */
__global__ static void ln_part_k(const float *x, const float *dy, const float *mean,
                                 const float *rstd, double *part, long long rows,
                                 long long D, int chunks)
{
    const long long j = (long long)blockIdx.x * GCOLS + threadIdx.x;
    const long long ch = blockIdx.y;
    if (j >= D)
        return;
    const long long r0 = rows * ch / chunks, r1 = rows * (ch + 1) / chunks;
    double s = 0;
    for (long long r = r0; r < r1; r++)
        s += dy[r * D + j] * (x[r * D + j] - mean[r]) * rstd[r];
    part[ch * D + j] = s;
}

/* pass 3: dg = the chunks' partials added (hg_cu_sum_parts, reduce.cu) */

/* (x[rows,D], gamma[D], beta[D]) -> y[rows,D] */
extern "C" HG_CUDA_FN(layernorm)
{
    int64_t rows, D;
    HG_CHECK(a->n_in == 3 && a->in[0].dtype == HG_F32 && a->in[1].dtype == HG_F32 &&
             a->in[2].dtype == HG_F32);
    hg_rows_cols(&a->in[0].shape, &rows, &D);
    HG_CHECK(hg_shape_numel(&a->in[1].shape) == D);
    HG_CHECK(hg_shape_numel(&a->in[2].shape) == D);
    HG_CHECK(hg_shape_numel(&a->out->shape) == rows * D);
    if (rows == 0)
        return 0;
    HG_ROW_LAUNCH(a, D, rows, layernorm_k, (const float *)a->in[0].data,
               (const float *)a->in[1].data, (const float *)a->in[2].data,
               (float *)a->out->data, rows, D, a->attr->ln.eps);
    return 0;
}

/* (x[rows,D], gamma[D], dy[rows,D]) -> dx[rows,D] */
extern "C" HG_CUDA_FN(layernorm_bwd_x)
{
    int64_t rows, D;
    HG_CHECK(a->n_in == 3 && a->in[0].dtype == HG_F32 && a->in[1].dtype == HG_F32 &&
             a->in[2].dtype == HG_F32);
    hg_rows_cols(&a->in[0].shape, &rows, &D);
    HG_CHECK(hg_shape_numel(&a->in[1].shape) == D);
    HG_CHECK(hg_shape_numel(&a->in[2].shape) == rows * D);
    HG_CHECK(hg_shape_numel(&a->out->shape) == rows * D);
    if (rows == 0)
        return 0;
    HG_ROW_LAUNCH(a, D, rows, layernorm_bwd_x_k, (const float *)a->in[0].data,
               (const float *)a->in[1].data, (const float *)a->in[2].data,
               (float *)a->out->data, rows, D, a->attr->ln.eps);
    return 0;
}

/* Chunks of rows for LAYERNORM_BWD_G, and the workspace they need:
 * part [chunks, D] doubles, then mean [rows] and rstd [rows] floats. */
static int ln_chunks(int64_t rows)
{
    return rows < GCHUNKS ? (int)(rows > 0 ? rows : 1) : GCHUNKS;
}

static size_t ln_ws(int64_t rows, int64_t D)
{
    return (size_t)ln_chunks(rows) * (size_t)D * sizeof(double) +
           2 * (size_t)rows * sizeof(float);
}

/* (x[rows,D], dy[rows,D]) -> dgamma[D] = sum over rows of dy * xhat */
extern "C" HG_CUDA_FN(layernorm_bwd_g)
{
    int64_t rows, D;
    HG_CHECK(a->n_in == 2 && a->in[0].dtype == HG_F32 && a->in[1].dtype == HG_F32);
    hg_rows_cols(&a->in[0].shape, &rows, &D);
    HG_CHECK(hg_shape_numel(&a->in[1].shape) == rows * D);
    HG_CHECK(hg_shape_numel(&a->out->shape) == D);
    if (D == 0)
        return 0;
    struct hg_cuda_ctx *cu = hg_cu(a);
    float *dg = (float *)a->out->data; /* [D] */
    if (rows == 0) { /* an empty sum */
        HG_CU_TRY(a, cudaMemsetAsync(dg, 0, (size_t)D * sizeof(float), cu->stream));
        return 0;
    }
    const int chunks = ln_chunks(rows);
    HG_CHECK(a->ctx->ws_bytes >= ln_ws(rows, D));
    double *part = (double *)a->ctx->ws; /* [chunks, D] */
    float *mean = (float *)(part + (size_t)chunks * (size_t)D); /* [rows] */
    float *rstd = mean + rows;                                  /* [rows] */
    const float *x = (const float *)a->in[0].data, *dy = (const float *)a->in[1].data;
    HG_ROW_LAUNCH(a, D, rows, ln_stats_k, x, mean, rstd, rows, D, a->attr->ln.eps);
    const dim3 grid((unsigned)((D + GCOLS - 1) / GCOLS), (unsigned)chunks);
    HG_CHECK((D + GCOLS - 1) / GCOLS <= 0x7fffffffLL);
    ln_part_k<<<grid, GCOLS, 0, cu->stream>>>(x, dy, mean, rstd, part, rows, D, chunks);
    HG_CU_LAUNCHED(a);
    return hg_cu_sum_parts(a, part, dg, D, chunks, 1.0f);
}

extern "C" HG_WS_FN(cuda_layernorm_bwd_g) /* (x, dy) -> dg */
{
    int64_t rows, D;
    (void)n_in, (void)out, (void)attr, (void)nthreads;
    hg_rows_cols(&in[0], &rows, &D);
    return ln_ws(rows, D);
}
