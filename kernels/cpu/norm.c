/* norm.c - layer normalisation over the last axis (CPU reference kernels,
 * f32): biased variance, eps inside the sqrt.  The backward kernels
 * recompute mean and rstd from x instead of saving them.
 */
#include <math.h>

#include "kernels/cpu/cpu-impl.h"

#define PAR_MIN 32768 /* below this many elements, stay on one thread */
#define RBLK 1024     /* LAYERNORM_BWD_G: rows whose statistics sit on the stack (8 KiB) */

/* mean and 1/sqrt(var + eps) of one row x[D] */
static void row_stats(const float *restrict x, int64_t D, float eps,
                      float *mean, float *rstd)
{
    float s = 0;
#pragma omp simd reduction(+ : s)
    for (int64_t j = 0; j < D; j++)
        s += x[j];
    const float m = s / (float)D;
    float v = 0;
#pragma omp simd reduction(+ : v)
    for (int64_t j = 0; j < D; j++) {
        float d = x[j] - m;
        v += d * d;
    }
    *mean = m;
    *rstd = 1.0f / sqrtf(v / (float)D + eps);
}

/* (x[rows,D], gamma[D], beta[D]) -> y[rows,D] */
HG_CPU_FN(layernorm)
{
    const float *x = a->in[0].data;     /* [rows,D] */
    const float *gamma = a->in[1].data; /* [D] */
    const float *beta = a->in[2].data;  /* [D] */
    float *y = a->out->data;            /* [rows,D] */
    const float eps = a->attr->ln.eps;
    int64_t rows, D;

    hg_rows_cols(&a->in[0].shape, &rows, &D);
    HG_CHECK(hg_shape_numel(&a->in[1].shape) == D);
    HG_CHECK(hg_shape_numel(&a->in[2].shape) == D);
#pragma omp parallel for if (rows * D >= PAR_MIN) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const float *restrict xr = x + r * D;
        const float *restrict g = gamma, *restrict b = beta;
        float *restrict yr = y + r * D;
        float m, rs;
        row_stats(xr, D, eps, &m, &rs);
#pragma omp simd
        for (int64_t j = 0; j < D; j++)
            yr[j] = (xr[j] - m) * rs * g[j] + b[j];
    }
    return 0;
}

/* (x[rows,D], gamma[D], dy[rows,D]) -> dx[rows,D]
 * dx = rstd * (g*dy - mean(g*dy) - xhat * mean(g*dy*xhat)) */
HG_CPU_FN(layernorm_bwd_x)
{
    const float *x = a->in[0].data;     /* [rows,D] */
    const float *gamma = a->in[1].data; /* [D] */
    const float *dy = a->in[2].data;    /* [rows,D] */
    float *dx = a->out->data;           /* [rows,D] */
    const float eps = a->attr->ln.eps;
    int64_t rows, D;

    hg_rows_cols(&a->in[0].shape, &rows, &D);
    HG_CHECK(hg_shape_numel(&a->in[1].shape) == D);
    HG_CHECK(hg_shape_numel(&a->in[2].shape) == rows * D);
#pragma omp parallel for if (rows * D >= PAR_MIN) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const float *restrict xr = x + r * D, *restrict gr = dy + r * D;
        const float *restrict g = gamma;
        float *restrict dr = dx + r * D;
        float m, rs;
        row_stats(xr, D, eps, &m, &rs);
        float s1 = 0, s2 = 0; /* sum(g*dy), sum(g*dy*xhat) */
#pragma omp simd reduction(+ : s1, s2)
        for (int64_t j = 0; j < D; j++) {
            float gd = g[j] * gr[j];
            s1 += gd;
            s2 += gd * (xr[j] - m) * rs;
        }
        s1 /= (float)D;
        s2 /= (float)D;
#pragma omp simd
        for (int64_t j = 0; j < D; j++)
            dr[j] = rs * (g[j] * gr[j] - s1 - (xr[j] - m) * rs * s2);
    }
    return 0;
}

/* (x[rows,D], dy[rows,D]) -> dgamma[D] = sum over rows of dy * xhat.
 * Rows go in blocks of RBLK: the block's statistics are computed in parallel
 * over rows, then its contribution is added in parallel over columns, each
 * column summing rows in order, so the result is independent of the thread
 * count and nothing is allocated. */
HG_CPU_FN(layernorm_bwd_g)
{
    const float *x = a->in[0].data;  /* [rows,D] */
    const float *dy = a->in[1].data; /* [rows,D] */
    float *dg = a->out->data;        /* [D] */
    const float eps = a->attr->ln.eps;
    float mean[RBLK], rstd[RBLK];    /* statistics of the current row block */
    int64_t rows, D;

    hg_rows_cols(&a->in[0].shape, &rows, &D);
    HG_CHECK(hg_shape_numel(&a->in[1].shape) == rows * D);
    HG_CHECK(hg_shape_numel(&a->out->shape) == D);
    /* one wide column block per thread: narrow strided blocks defeat the
     * prefetcher */
    const int64_t nth = a->ctx->nthreads > 0 ? a->ctx->nthreads : 1;
    int64_t cblk = ((D + nth - 1) / nth + 15) / 16 * 16;
    if (cblk < 256)
        cblk = 256;
    const int64_t ncb = (D + cblk - 1) / cblk;

#pragma omp parallel if (rows * D >= PAR_MIN)
    {
#pragma omp for schedule(static)
        for (int64_t j = 0; j < D; j++)
            dg[j] = 0.0f;
        for (int64_t r0 = 0; r0 < rows; r0 += RBLK) {
            const int64_t nr = rows - r0 < RBLK ? rows - r0 : RBLK;
#pragma omp for schedule(static)
            for (int64_t i = 0; i < nr; i++)
                row_stats(x + (r0 + i) * D, D, eps, &mean[i], &rstd[i]);
#pragma omp for schedule(static)
            for (int64_t cb = 0; cb < ncb; cb++) {
                const int64_t c0 = cb * cblk;
                const int64_t nc = D - c0 < cblk ? D - c0 : cblk;
                float *restrict out = dg + c0;
                for (int64_t i = 0; i < nr; i++) {
                    const float *restrict xr = x + (r0 + i) * D + c0;
                    const float *restrict gr = dy + (r0 + i) * D + c0;
                    const float m = mean[i], rs = rstd[i];
#pragma omp simd
                    for (int64_t j = 0; j < nc; j++)
                        out[j] += gr[j] * (xr[j] - m) * rs;
                }
            }
        }
    }
    return 0;
}
