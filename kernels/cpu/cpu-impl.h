/* cpu-impl.h - private to kernels/cpu/: helpers several kernel families
 * share (deterministic reductions, column blocking; the shape views are
 * kernels/shape-plan.h's, shared with the CUDA kernels). */
#ifndef HG_CPU_IMPL_H
#define HG_CPU_IMPL_H

#include "kernels/ops-impl.h"
#include "kernels/shape-plan.h"

#define HG_NCHUNK 64 /* full reductions: fixed chunks, combined in order */

/* Sum of a contiguous run: 16 float lanes (vectorisable, fixed order, so
 * deterministic for a given n), combined in double. */
double hg_cpu_sum_run(const float *x, int64_t n);

/* Sum of x[n] in HG_NCHUNK fixed chunks added in order: the same bits for
 * any thread count. */
double hg_cpu_sum_all(const float *x, int64_t n);

/* Columns per work item when P output rows of K columns are accumulated
 * from whole input rows: whole rows if there are enough rows to go round,
 * else one contiguous block per thread.  Narrow strided blocks defeat the
 * hardware prefetcher (8x slower measured), so blocks stay wide. */
int64_t hg_cpu_col_block(int64_t K, int64_t P, int nthreads);

#ifndef __cplusplus /* the CUDA files include this header too, without OpenMP */
/* One row of softmax's backward: dx = y * (dy - sum(y * dy)); dx may be
 * dy (SOFTMAX_BWD and the fused attention's backward share it). */
static inline void hg_cpu_softmax_bwd_row(const float *y, const float *dy,
                                          float *dx, int64_t C)
{
    float s = 0;
#pragma omp simd reduction(+ : s)
    for (int64_t j = 0; j < C; j++)
        s += y[j] * dy[j];
#pragma omp simd
    for (int64_t j = 0; j < C; j++)
        dx[j] = y[j] * (dy[j] - s);
}
#endif

#endif
