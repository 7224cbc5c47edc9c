/* blocks.cu - operations on whole flat blocks (the grad block): sum of
 * squares for the gradient norm and y += x for micro-batch sums, so a GPU
 * plan's gradients never leave the device for them. */
#include "kernels/cuda/cuda-impl.h"


#define SUMSQ_BLOCKS 256 /* fixed: the summation order never depends on n */

/* part[SUMSQ_BLOCKS]: block b sums x[i]^2 over i = b*T + t + k*B*T in double
 * by a fixed tree, so the result is the same in every run. */
__global__ static void sumsq_kernel(const float *x, long long n, double *part)
{
    __shared__ double s[HG_CU_THREADS];
    double acc = 0;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        acc += (double)x[i] * (double)x[i];
    s[threadIdx.x] = acc;
    __syncthreads();
    for (int w = HG_CU_THREADS / 2; w > 0; w >>= 1) {
        if ((int)threadIdx.x < w)
            s[threadIdx.x] += s[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        part[blockIdx.x] = s[0];
}

__global__ static void add_kernel(float *y, const float *x, long long n)
{
    HG_CU_FOR(i, n)
    y[i] += x[i];
}

extern "C" int hg_cuda_sumsq(struct hg_cuda_ctx *c, const float *x, size_t n,
                             double *out, char *err, size_t errlen)
{
    double *part = NULL, h[SUMSQ_BLOCKS];
    cudaError_t e;
    *out = 0;
    if (n == 0)
        return 0;
    if ((e = cudaMallocAsync((void **)&part, sizeof h, c->stream)) != cudaSuccess)
        return hg_kerr(err, errlen, "sumsq: cudaMallocAsync: %s", cudaGetErrorString(e));
    sumsq_kernel<<<SUMSQ_BLOCKS, HG_CU_THREADS, 0, c->stream>>>(x, (long long)n, part);
    if ((e = cudaGetLastError()) != cudaSuccess ||
        (e = cudaMemcpyAsync(h, part, sizeof h, cudaMemcpyDeviceToHost, c->stream)) !=
            cudaSuccess ||
        (e = cudaFreeAsync(part, c->stream)) != cudaSuccess ||
        (e = cudaStreamSynchronize(c->stream)) != cudaSuccess)
        return hg_kerr(err, errlen, "sumsq: %s", cudaGetErrorString(e));
    double s = 0;
    for (int b = 0; b < SUMSQ_BLOCKS; b++)
        s += h[b];
    *out = s;
    return 0;
}

extern "C" int hg_cuda_accumulate(struct hg_cuda_ctx *c, float *y, const float *x, size_t n,
                           char *err, size_t errlen)
{
    if (n == 0)
        return 0;
    long long want = ((long long)n + HG_CU_THREADS - 1) / HG_CU_THREADS;
    unsigned blocks = (unsigned)(want < c->sm_count * 16 ? want : c->sm_count * 16);
    add_kernel<<<blocks, HG_CU_THREADS, 0, c->stream>>>(y, x, (long long)n);
    cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? 0 : hg_kerr(err, errlen, "add: %s", cudaGetErrorString(e));
}
