/* device.cu - CUDA backend probe (device count, a self-test that checks a
 * hand-written kernel and cuBLAS against CPU values), the per-device
 * context, memory and copies (hg_cuda.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "kernels/cuda/cuda-impl.h"

#define CUDA_TRY(call)                                                         \
    do {                                                                       \
        cudaError_t e_ = (call);                                               \
        if (e_ != cudaSuccess) {                                               \
            rc = hg_kerr(err, errlen, "%s:%d: %s: %s", __FILE__, __LINE__, #call, \
                      cudaGetErrorString(e_));                                 \
            goto out;                                                          \
        }                                                                      \
    } while (0)

#define CUBLAS_TRY(call)                                                       \
    do {                                                                       \
        cublasStatus_t s_ = (call);                                            \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                     \
            rc = hg_kerr(err, errlen, "%s:%d: %s: cuBLAS status %d", __FILE__,    \
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
            hg_kerr(err, errlen, "no CUDA device");
        return n;
    }
    (void)cudaGetLastError(); /* not sticky: clear it */
    switch (e) {
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorStubLibrary:
    case cudaErrorInitializationError:
        hg_kerr(err, errlen, "no usable CUDA device: %s (error %d)",
             cudaGetErrorString(e), (int)e);
        return 0;
    default:
        return hg_kerr(err, errlen, "cudaGetDeviceCount: %s (error %d)",
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
        rc = hg_kerr(err, errlen, "hg_cuda_selftest: out of host memory");
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
            rc = hg_kerr(err, errlen, "scale kernel: y[%d] = %g, expected %g", i,
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
                rc = hg_kerr(err, errlen, "cublasSgemm: C[%d,%d] = %.8g, expected %.8g",
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

/* ---- context, memory, copies ------------------------------------------- */

#define CUDA_OR(call, ret)                                                     \
    do {                                                                       \
        cudaError_t e_ = (call);                                               \
        if (e_ != cudaSuccess) {                                               \
            hg_kerr(err, errlen, "%s: %s", #call, cudaGetErrorString(e_));        \
            return ret;                                                        \
        }                                                                      \
    } while (0)

extern "C" int hg_cuda_set_device(int device, char *err, size_t errlen)
{
    CUDA_OR(cudaSetDevice(device), -1);
    return 0;
}

extern "C" int hg_cuda_device_name(int device, char *buf, size_t len)
{
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, device) != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(buf, len, "CUDA device %d (unreadable)", device);
        return -1;
    }
    snprintf(buf, len, "%s, sm_%d%d, %d SMs, %.1f GiB", p.name, p.major, p.minor,
             p.multiProcessorCount, (double)p.totalGlobalMem / (1 << 30));
    return 0;
}

extern "C" struct hg_cuda_ctx *hg_cuda_ctx_new(int device, char *err, size_t errlen)
{
    int n = hg_cuda_device_count(err, errlen);
    if (n <= 0)
        return NULL;
    if (device < 0 || device >= n) {
        hg_kerr(err, errlen, "cuda:%d: no such device (%d present)", device, n);
        return NULL;
    }
    struct hg_cuda_ctx *c = (struct hg_cuda_ctx *)calloc(1, sizeof(*c));
    if (!c) {
        hg_kerr(err, errlen, "out of host memory");
        return NULL;
    }
    c->device = device;
    c->err_pos = -1;
    cudaError_t e;
    if ((e = cudaSetDevice(device)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&c->sm_count, cudaDevAttrMultiProcessorCount,
                                    device)) != cudaSuccess ||
        (e = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking)) != cudaSuccess ||
        (e = cudaMalloc((void **)&c->derr, sizeof(struct hg_cuda_err))) != cudaSuccess ||
        (e = cudaMemset(c->derr, 0, sizeof(struct hg_cuda_err))) != cudaSuccess) {
        hg_kerr(err, errlen, "cuda:%d: set-up: %s", device, cudaGetErrorString(e));
        hg_cuda_ctx_free(c);
        return NULL;
    }
    cublasStatus_t bs;
    if ((bs = cublasCreate(&c->blas)) != CUBLAS_STATUS_SUCCESS ||
        (bs = cublasSetStream(c->blas, c->stream)) != CUBLAS_STATUS_SUCCESS ||
        /* fp32 GEMMs in fp32 (TF32 only with CUBLAS_TF32_TENSOR_OP_MATH,
         * which we never set); the default mode, not the pedantic one,
         * which may pick slower kernels */
        (bs = cublasSetMathMode(c->blas, CUBLAS_DEFAULT_MATH)) != CUBLAS_STATUS_SUCCESS) {
        hg_kerr(err, errlen, "cuda:%d: cuBLAS: %s", device, cublasGetStatusString(bs));
        hg_cuda_ctx_free(c);
        return NULL;
    }
#ifdef HG_HAVE_CUDNN
    cudnnStatus_t ds;
    if ((ds = cudnnCreate(&c->dnn)) != CUDNN_STATUS_SUCCESS ||
        (ds = cudnnSetStream(c->dnn, c->stream)) != CUDNN_STATUS_SUCCESS) {
        hg_kerr(err, errlen, "cuda:%d: cuDNN: %s", device, cudnnGetErrorString(ds));
        hg_cuda_ctx_free(c);
        return NULL;
    }
#endif
    return c;
}

extern "C" void hg_cuda_ctx_free(struct hg_cuda_ctx *c)
{
    if (!c)
        return;
    if (c->stream)
        cudaStreamSynchronize(c->stream);
#ifdef HG_HAVE_CUDNN
    if (c->dnn)
        cudnnDestroy(c->dnn);
#endif
    if (c->blas)
        cublasDestroy(c->blas);
    cudaFree(c->derr);
    if (c->stream)
        cudaStreamDestroy(c->stream);
    free(c);
}

extern "C" void *hg_cuda_ctx_stream(struct hg_cuda_ctx *c) { return c->stream; }

extern "C" int hg_cuda_sync(struct hg_cuda_ctx *c, char *err, size_t errlen)
{
    struct hg_cuda_err h;
    CUDA_OR(cudaStreamSynchronize(c->stream), -1);
    CUDA_OR(cudaMemcpy(&h, c->derr, sizeof h, cudaMemcpyDeviceToHost), -1);
    c->err_pos = -1;
    if (!h.flag)
        return 0;
    CUDA_OR(cudaMemset(c->derr, 0, sizeof h), -1);
    c->err_pos = h.pos;
    const char *op = h.op >= 0 && h.op < HG_OP_COUNT ? hg_op_table[h.op].name : "?";
    if (h.kind == HG_CUERR_ID)
        return hg_kerr(err, errlen, "%s: id %lld at position %lld outside [0,%lld)", op,
                    h.value, h.index, h.bound);
    if (h.kind == HG_CUERR_TARGET)
        return hg_kerr(err, errlen, "%s: target %lld at row %lld outside [0,%lld)", op,
                    h.value, h.index, h.bound);
    return hg_kerr(err, errlen, "%s: device error %d", op, h.kind);
}

extern "C" int hg_cuda_error_pos(const struct hg_cuda_ctx *c)
{
    return c->err_pos;
}

extern "C" unsigned long long hg_cuda_launches(const struct hg_cuda_ctx *c)
{
    return c->launches;
}

extern "C" void *hg_cuda_malloc(struct hg_cuda_ctx *c, size_t bytes, char *err,
                                size_t errlen)
{
    void *p = NULL;
    CUDA_OR(cudaSetDevice(c->device), NULL);
    cudaError_t e = cudaMalloc(&p, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        size_t fr = 0, tot = 0;
        (void)cudaGetLastError();
        cudaMemGetInfo(&fr, &tot);
        hg_kerr(err, errlen, "cuda:%d: cannot allocate %zu bytes (%zu of %zu free): %s",
             c->device, bytes, fr, tot, cudaGetErrorString(e));
        return NULL;
    }
    return p;
}

extern "C" void hg_cuda_free(void *p) { cudaFree(p); }

extern "C" void *hg_cuda_host_alloc(size_t bytes, char *err, size_t errlen)
{
    void *p = NULL;
    CUDA_OR(cudaMallocHost(&p, bytes ? bytes : 1), NULL);
    return p;
}

extern "C" void hg_cuda_host_free(void *p) { cudaFreeHost(p); }

static int copy(struct hg_cuda_ctx *c, void *dst, const void *src, size_t n,
                cudaMemcpyKind kind, char *err, size_t errlen)
{
    if (n == 0)
        return 0;
    CUDA_OR(cudaMemcpyAsync(dst, src, n, kind, c->stream), -1);
    return 0;
}

extern "C" int hg_cuda_h2d(struct hg_cuda_ctx *c, void *dst, const void *src,
                           size_t n, char *err, size_t errlen)
{
    return copy(c, dst, src, n, cudaMemcpyHostToDevice, err, errlen);
}

extern "C" int hg_cuda_d2h(struct hg_cuda_ctx *c, void *dst, const void *src,
                           size_t n, char *err, size_t errlen)
{
    return copy(c, dst, src, n, cudaMemcpyDeviceToHost, err, errlen);
}

extern "C" int hg_cuda_d2d(struct hg_cuda_ctx *c, void *dst, const void *src,
                           size_t n, char *err, size_t errlen)
{
    return copy(c, dst, src, n, cudaMemcpyDeviceToDevice, err, errlen);
}

extern "C" int hg_cuda_memset(struct hg_cuda_ctx *c, void *dst, int value, size_t n,
                              char *err, size_t errlen)
{
    if (n == 0)
        return 0;
    CUDA_OR(cudaMemsetAsync(dst, value, n, c->stream), -1);
    return 0;
}
