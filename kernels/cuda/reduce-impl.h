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
 * Two shapes of work, both defined in reduce.cu:
 * - a "sum of runs" (hg_cpu_sum_all, SUM_TO with the inner axes reduced):
 *   output m is the double sum, in run order, of nrun runs of contiguous
 *   floats, each summed as hg_cpu_sum_run does;
 * - "column sums" (SUM/MEAN over an axis with inner > 1, SUM_TO with the
 *   inner axes kept): output [P, K], column c of row p is the float sum,
 *   in row order, of x[base(p) + off(r) + c] over nrun rows r.
 * A float sum in order is a chain of dependent adds per output; long
 * chains go through shared-memory tiles so the loads of many rows are in
 * flight while one warp adds.
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

/* Column sums: y[p*K + c] = (float sum over r in order) * scale (the
 * multiply only when scale != 1, as the CPU's sum_axis). */
struct hg_cu_cols {
    long long P, K, nrun;
    /* base(p) = sum_k idx_k(p) * ks[k], p read over kd[0..nk) (last
     * fastest); off(r) likewise over rd, rs.  At most HG_MAX_DIMS/2
     * reduced groups can alternate with kept ones. */
    int nk, nr;
    long long kd[HG_MAX_DIMS], ks[HG_MAX_DIMS];
    long long rd[HG_MAX_DIMS], rs[HG_MAX_DIMS];
    float scale;
};

int hg_cu_sum_cols(const struct hg_kargs *a, const float *x, float *y,
                   const struct hg_cu_cols *cols);

/* Column sums in a fixed chunked order instead of the CPU's (SUM_TO's bias
 * gradients, where one float chain per column leaves most of the GPU idle):
 * the rows are cut into hg_cu_col_chunks(nrun) chunks, fixed by the shape
 * alone; each chunk's rows are summed in float by 8 row lanes, the lanes
 * added in order in double, then the chunks by hg_cu_sum_parts.  Deterministic, closer to the
 * exact sum than the CPU's chain, but not its bits.  part: the workspace,
 * hg_cu_col_ws(P * K, nrun) bytes. */
int hg_cu_col_chunks(long long nrun);
size_t hg_cu_col_ws(long long pk, long long nrun);
int hg_cu_sum_cols_chunked(const struct hg_kargs *a, const float *x, float *y,
                           const struct hg_cu_cols *cols, double *part);

/* y[m] = (float)(sum over ch < chunks of part[ch * pk + m]) * scale, m <
 * pk: partial sums of a chunked reduction added in a fixed order (warp
 * lanes take every 32nd chunk in order, then a fixed shuffle tree). */
int hg_cu_sum_parts(const struct hg_kargs *a, const double *part, float *y, long long pk,
                    int chunks, float scale);

/* y[m], m in [0, ny): (float) of the double sum of output m's runs, or with
 * mean (chunks only) (float)(n ? sum / n : NAN), as kernels/cpu/reduce.c.
 * Launched on a's stream; 0, or -1 with a launch error in a->ctx->err.
 * Defined in reduce.cu. */
int hg_cu_sum_runs(const struct hg_kargs *a, const float *x, float *y,
                   long long ny, const struct hg_cu_runs *runs, int mean);

#endif
