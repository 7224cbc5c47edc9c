/* cuda-impl.h - private to kernels/cuda/: the context, launch and error
 * helpers every CUDA kernel file uses.  CUDA C++; nothing here is visible
 * to C callers (they see hg_cuda.h).
 *
 * Conventions (mirroring kernels/cpu/ and the semantics in ops-impl.h):
 * - every launch goes on the context's stream (hg_cu(a)->stream) and is
 *   followed by HG_CU_LAUNCHED(a), which turns a launch error into the
 *   kernel's -1 with a message; it, HG_CU_TRY and HG_CU_BLAS/DNN count
 *   the launches (hg_cuda_launches);
 * - library calls (cuBLAS, cuDNN) are wrapped in HG_CU_BLAS / HG_CU_DNN;
 * - elementwise arithmetic comes from kernels/ew-math.h, never retyped;
 * - a runtime error found on the device (bad id, bad target) is recorded
 *   with hg_cu_fail() and reported by hg_cuda_sync() on the host;
 * - kernels are deterministic: no atomics on floats where the order would
 *   change the bits from run to run (reductions have a fixed tree).
 */
#ifndef HG_CUDA_IMPL_H
#define HG_CUDA_IMPL_H

#include <cublas_v2.h>
#include <cuda_runtime.h>
#ifdef HG_HAVE_CUDNN
#include <cudnn.h>
#endif

#include "kernels/cuda/hg_cuda.h"
#include "kernels/ew-math.h"
#include "kernels/ops-impl.h"

/* Kinds of device-side runtime errors (hg_cuda_err.kind). */
enum { HG_CUERR_NONE, HG_CUERR_ID, HG_CUERR_TARGET };

/* The error word: the first kernel to fail claims it (flag 0 -> 1). */
struct hg_cuda_err {
    int flag;
    int pos;             /* ctx->pos of the failing node */
    int op;              /* enum hg_op */
    int kind;            /* HG_CUERR_* */
    long long value;     /* the offending id / target */
    long long index;     /* its position (id) or row (target) */
    long long bound;     /* V or C: valid values are [0, bound) */
};

struct hg_cuda_ctx {
    int device;
    int sm_count;
    cudaStream_t stream;
    cublasHandle_t blas;
#ifdef HG_HAVE_CUDNN
    cudnnHandle_t dnn;
#endif
    struct hg_cuda_err *derr; /* device: [1] */
    int err_pos;              /* host: position of the last reported error */
    unsigned long long launches; /* kernels, library calls, copies and sets
                                    queued by the op kernels (the macros below) */
};

static inline struct hg_cuda_ctx *hg_cu(const struct hg_kargs *a)
{
    HG_CHECK(a->ctx && a->ctx->dev);
    return (struct hg_cuda_ctx *)a->ctx->dev;
}

/* Records a runtime error on the device; the first one wins. */
__device__ static inline void hg_cu_fail(struct hg_cuda_err *e, int pos, int op,
                                         int kind, long long value,
                                         long long index, long long bound)
{
    if (atomicCAS(&e->flag, 0, 1) == 0) {
        e->pos = pos;
        e->op = op;
        e->kind = kind;
        e->value = value;
        e->index = index;
        e->bound = bound;
    }
}

#define HG_CU_THREADS 256

/* Blocks for a grid-stride loop over n elements: enough to fill the GPU,
 * never more than the work. */
static inline unsigned hg_cu_blocks(const struct hg_kargs *a, long long n)
{
    long long want = (n + HG_CU_THREADS - 1) / HG_CU_THREADS;
    long long cap = (long long)hg_cu(a)->sm_count * 16;
    if (want > cap)
        want = cap;
    return want < 1 ? 1u : (unsigned)want;
}

#define HG_CU_LAUNCHED(a)                                                      \
    do {                                                                       \
        hg_cu(a)->launches++;                                                  \
        cudaError_t e_ = cudaGetLastError();                                   \
        if (e_ != cudaSuccess)                                                 \
            return hg_kerr((a)->ctx->err, (a)->ctx->errlen, "%s: launch: %s",  \
                           __func__, cudaGetErrorString(e_));                  \
    } while (0)

#define HG_CU_TRY(a, call)                                                     \
    do {                                                                       \
        hg_cu(a)->launches++;                                                  \
        cudaError_t e_ = (call);                                               \
        if (e_ != cudaSuccess)                                                 \
            return hg_kerr((a)->ctx->err, (a)->ctx->errlen, "%s: %s: %s",      \
                           __func__, #call, cudaGetErrorString(e_));           \
    } while (0)

#define HG_CU_BLAS(a, call)                                                    \
    do {                                                                       \
        hg_cu(a)->launches++;                                                  \
        cublasStatus_t s_ = (call);                                            \
        if (s_ != CUBLAS_STATUS_SUCCESS)                                       \
            return hg_kerr((a)->ctx->err, (a)->ctx->errlen,                    \
                           "%s: %s: cuBLAS %s", __func__, #call,               \
                           cublasGetStatusString(s_));                          \
    } while (0)

#ifdef HG_HAVE_CUDNN
#define HG_CU_DNN(a, call)                                                     \
    do {                                                                       \
        hg_cu(a)->launches++;                                                  \
        cudnnStatus_t s_ = (call);                                             \
        if (s_ != CUDNN_STATUS_SUCCESS)                                        \
            return hg_kerr((a)->ctx->err, (a)->ctx->errlen,                    \
                           "%s: %s: cuDNN %s", __func__, #call,                \
                           cudnnGetErrorString(s_));                            \
    } while (0)
#endif

/* Grid-stride loop over [0, n). */
#define HG_CU_FOR(i, n)                                                        \
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;       \
         i < (long long)(n); i += (long long)gridDim.x * blockDim.x)

/* Offset of contiguous element i of [dim[0..ND)] in a view with element
 * strides st (i < the product of dim): the ND is a template argument so
 * the loop unrolls. */
template <int ND>
__device__ static inline long long hg_cu_offset(long long i, const int64_t *dim,
                                                const int64_t *st)
{
    long long o = 0;
#pragma unroll
    for (int k = ND - 1; k > 0; k--) {
        o += (i % dim[k]) * st[k];
        i /= dim[k];
    }
    return o + i * st[0]; /* i < dim[0] */
}

#endif
