/* util.c - helpers shared by the CPU kernels (see cpu-impl.h). */
#include "kernels/cpu/cpu-impl.h"

double hg_cpu_sum_run(const float *restrict x, int64_t n)
{
    float lane[16] = {0};
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int l = 0; l < 16; l++)
            lane[l] += x[i + l];
    double s = 0;
    for (int l = 0; l < 16; l++)
        s += lane[l];
    for (; i < n; i++)
        s += x[i];
    return s;
}

double hg_cpu_sum_all(const float *restrict x, int64_t n)
{
    double part[HG_NCHUNK];
#pragma omp parallel for if (n >= 32768) schedule(static)
    for (int c = 0; c < HG_NCHUNK; c++) {
        int64_t lo = n * c / HG_NCHUNK, hi = n * (c + 1) / HG_NCHUNK;
        part[c] = hg_cpu_sum_run(x + lo, hi - lo);
    }
    double s = 0;
    for (int c = 0; c < HG_NCHUNK; c++)
        s += part[c];
    return s;
}

int64_t hg_cpu_col_block(int64_t K, int64_t P, int nthreads)
{
    const int64_t nth = nthreads > 0 ? nthreads : 1;
    if (P >= nth)
        return K;
    const int64_t pieces = (nth + P - 1) / P;
    int64_t b = ((K + pieces - 1) / pieces + 15) / 16 * 16;
    return b < 256 ? (K < 256 ? K : 256) : b;
}
