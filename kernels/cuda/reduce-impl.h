/* reduce-impl.h - private to kernels/cuda/: the CPU's summation order on
 * the device, shared by SUM/MEAN (reduce.cu) and SUM_TO (elementwise.cu).
 *
 * The CPU does not sum everything in double: hg_cpu_sum_run (util.c) adds
 * 16 float lanes and combines them in double, and the column sums of
 * sum_axis and SUM_TO accumulate in float.  Summing in double here would
 * differ from the CPU by the CPU's own float rounding, which grows with the
 * reduction length (past 1e-6 relative for a few thousand terms).  So the
 * CUDA reductions do the CPU's additions, in the CPU's order and
 * precision, and give its bits whatever the length.
 *
 * A "sum of runs" is what hg_cpu_sum_all and SUM_TO's inner-reduced case
 * both compute: output m is the double sum, in run order, of nrun runs of
 * contiguous floats, each summed as hg_cpu_sum_run does.
 */
#ifndef HG_CUDA_REDUCE_IMPL_H
#define HG_CUDA_REDUCE_IMPL_H

#include "kernels/cpu/cpu-impl.h" /* HG_NCHUNK */
#include "kernels/cuda/cuda-impl.h"

#define HG_CU_LANES 16 /* hg_cpu_sum_run's float lanes */

struct hg_cu_runs {
    /* chunks != 0: the single output is hg_cpu_sum_all(x, n): HG_NCHUNK
     * runs [n*c/HG_NCHUNK, n*(c+1)/HG_NCHUNK).  The rest is unused. */
    int chunks;
    long long n;
    /* chunks == 0: output m starts at base(m) = sum_k idx_k(m) * ks[k],
     * m read over kd[0..nk) (last fastest); its run r starts at
     * base(m) + sum_k idx_k(r) * rs[k], r read over rd[0..nr) (last fastest,
     * the CPU's odometer order), and has len floats. */
    int nk, nr;
    long long kd[HG_MAX_DIMS], ks[HG_MAX_DIMS];
    long long rd[HG_MAX_DIMS], rs[HG_MAX_DIMS];
    long long nrun, len;
};

/* y[m], m in [0, ny): (float) of the double sum of output m's runs, or with
 * mean (chunks only) (float)(n ? sum / n : NAN), as kernels/cpu/reduce.c.
 * Launched on a's stream; 0, or -1 with a launch error in a->ctx->err.
 * Defined in reduce.cu. */
int hg_cu_sum_runs(const struct hg_kargs *a, const float *x, float *y,
                   long long ny, const struct hg_cu_runs *runs, int mean);

#endif
