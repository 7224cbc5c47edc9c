/* device.cu - CUDA backend probe: device count and a self-test that checks
 * a hand-written kernel and cuBLAS against CPU values. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "kernels/cuda/hg_cuda.h"

static int cerr(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

#define CUDA_TRY(call)                                                         \
    do {                                                                       \
        cudaError_t e_ = (call);                                               \
        if (e_ != cudaSuccess) {                                               \
            rc = cerr(err, errlen, "%s:%d: %s: %s", __FILE__, __LINE__, #call, \
                      cudaGetErrorString(e_));                                 \
            goto out;                                                          \
        }                                                                      \
    } while (0)

#define CUBLAS_TRY(call)                                                       \
    do {                                                                       \
        cublasStatus_t s_ = (call);                                            \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                     \
            rc = cerr(err, errlen, "%s:%d: %s: cuBLAS status %d", __FILE__,    \
                      __LINE__, #call, (int)s_);                               \
            goto out;                                                          \
        }                                                                      \
    } while (0)

extern "C" int hg_cuda_device_count(char *err, size_t errlen)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e == cudaSuccess) {
        if (n == 0)
            cerr(err, errlen, "no CUDA device");
        return n;
    }
    (void)cudaGetLastError(); /* not sticky: clear it */
    switch (e) {
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorStubLibrary:
    case cudaErrorInitializationError:
        cerr(err, errlen, "no usable CUDA device: %s (error %d)",
             cudaGetErrorString(e), (int)e);
        return 0;
    default:
        return cerr(err, errlen, "cudaGetDeviceCount: %s (error %d)",
                    cudaGetErrorString(e), (int)e);
    }
}

/* y[i] = alpha * x[i] */
__global__ static void scale_kernel(const float *x, float *y, float alpha, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = alpha * x[i];
}

extern "C" int hg_cuda_selftest(char *err, size_t errlen)
{
    enum { N = 4099, M = 37, K = 41, P = 29 }; /* GEMM: [M,K] x [K,P] */
    const float alpha = 0.75f;
    int rc = -1;
    float *hx = NULL, *hy = NULL, *ha = NULL, *hb = NULL, *hc = NULL;
    float *dx = NULL, *dy = NULL, *da = NULL, *db = NULL, *dc = NULL;
    cublasHandle_t handle = NULL;

    hx = (float *)malloc(N * sizeof(float));
    hy = (float *)malloc(N * sizeof(float));
    ha = (float *)malloc(M * K * sizeof(float));
    hb = (float *)malloc(K * P * sizeof(float));
    hc = (float *)malloc(M * P * sizeof(float));
    if (!hx || !hy || !ha || !hb || !hc) {
        rc = cerr(err, errlen, "hg_cuda_selftest: out of host memory");
        goto out;
    }
    for (int i = 0; i < N; i++)
        hx[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
    for (int i = 0; i < M * K; i++)
        ha[i] = (float)((i * 13) % 29) / 14.0f - 1.0f;
    for (int i = 0; i < K * P; i++)
        hb[i] = (float)((i * 7) % 23) / 11.0f - 1.0f;

    CUDA_TRY(cudaSetDevice(0));
    CUDA_TRY(cudaMalloc((void **)&dx, N * sizeof(float)));
    CUDA_TRY(cudaMalloc((void **)&dy, N * sizeof(float)));
    CUDA_TRY(cudaMalloc((void **)&da, M * K * sizeof(float)));
    CUDA_TRY(cudaMalloc((void **)&db, K * P * sizeof(float)));
    CUDA_TRY(cudaMalloc((void **)&dc, M * P * sizeof(float)));

    /* 1. a kernel of our own */
    CUDA_TRY(cudaMemcpy(dx, hx, N * sizeof(float), cudaMemcpyHostToDevice));
    scale_kernel<<<(N + 255) / 256, 256>>>(dx, dy, alpha, N);
    CUDA_TRY(cudaGetLastError());
    CUDA_TRY(cudaMemcpy(hy, dy, N * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) {
        if (hy[i] != alpha * hx[i]) {
            rc = cerr(err, errlen, "scale kernel: y[%d] = %g, expected %g", i,
                      (double)hy[i], (double)(alpha * hx[i]));
            goto out;
        }
    }

    /* 2. cuBLAS: row-major C[M,P] = A[M,K] B[K,P] is column-major
     * C^T[P,M] = B^T[P,K] A^T[K,M]. */
    CUDA_TRY(cudaMemcpy(da, ha, M * K * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMemcpy(db, hb, K * P * sizeof(float), cudaMemcpyHostToDevice));
    CUBLAS_TRY(cublasCreate(&handle));
    CUBLAS_TRY(cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH)); /* no TF32 */
    {
        const float one = 1.0f, zero = 0.0f;
        CUBLAS_TRY(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, P, M, K, &one,
                               db, P, da, K, &zero, dc, P));
    }
    CUDA_TRY(cudaMemcpy(hc, dc, M * P * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < P; j++) {
            double ref = 0.0, mag = 0.0;
            for (int k = 0; k < K; k++) {
                ref += (double)ha[i * K + k] * hb[k * P + j];
                mag += fabs((double)ha[i * K + k] * hb[k * P + j]);
            }
            double got = hc[i * P + j];
            if (fabs(got - ref) > 1e-5 * mag + 1e-6) {
                rc = cerr(err, errlen, "cublasSgemm: C[%d,%d] = %.8g, expected %.8g",
                          i, j, got, ref);
                goto out;
            }
        }
    }
    rc = 0;
out:
    if (handle)
        cublasDestroy(handle);
    cudaFree(dx);
    cudaFree(dy);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    free(hx);
    free(hy);
    free(ha);
    free(hb);
    free(hc);
    return rc;
}
