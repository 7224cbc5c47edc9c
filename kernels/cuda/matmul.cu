/* matmul.cu - MATMUL and MATMUL_REDUCE through cuBLAS (the context's handle:
 * fp32 in cuBLAS's default math mode, never TF32, on the context's stream).
 *
 * Mixed precision (ctx->lowp, --bf16/--fp16): both operands are first
 * rounded to bf16/fp16 copies in the workspace (hg_ws_cuda_matmul*), then
 * cublasGemm(StridedBatched)Ex multiplies them on the tensor cores with
 * fp32 accumulation and fp32 output; every tensor of the graph stays fp32.
 *
 * cuBLAS is column-major: a row-major [R,C] buffer is the column-major
 * [C,R] matrix, its transpose.  So row-major Y = op(A) op(B) is computed
 * as column-major Y^T = op(B)^T op(A)^T: the operands swap, each keeps its
 * own transpose flag and its row-major leading dimension.
 */
#include <limits.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/cuda/cuda-impl.h"

/* bytes of one low-precision copy of n floats, rounded up for alignment */
static size_t lowp_bytes(int64_t n) { return ((size_t)n * 2 + 255) & ~(size_t)255; }

extern "C" HG_WS_FN(cuda_matmul)
{
    (void)n_in, (void)out, (void)attr, (void)nthreads;
    return lowp_bytes(hg_shape_numel(&in[0])) + lowp_bytes(hg_shape_numel(&in[1]));
}

extern "C" HG_WS_FN(cuda_matmul_reduce)
{
    (void)n_in, (void)out, (void)attr, (void)nthreads;
    return lowp_bytes(hg_shape_numel(&in[0])) + lowp_bytes(hg_shape_numel(&in[1]));
}

template <typename T> __device__ static T to_lowp(float x);
template <> __device__ __nv_bfloat16 to_lowp<__nv_bfloat16>(float x)
{
    return __float2bfloat16_rn(x);
}
template <> __device__ __half to_lowp<__half>(float x) { return __float2half_rn(x); }

/* 4 low-precision values as one 8-byte store */
template <typename T> struct __align__(8) lowp4 { T v[4]; };

/* y[i] = x[i] rounded, for two arrays in one launch: units of 4 elements
 * (one 16-byte load, one 8-byte store where x is 16-byte aligned; the
 * workspace copies always are), unit u < ua in the first array. */
template <typename T>
__global__ static void round2_kernel(const float *x0, T *y0, long long n0, const float *x1,
                                     T *y1, long long n1, long long ua, long long units)
{
    HG_CU_FOR(u, units) {
        const bool first = u < ua;
        const float *x = first ? x0 : x1;
        T *y = first ? y0 : y1;
        const long long n = first ? n0 : n1, i = (first ? u : u - ua) * 4;
        if (i + 4 <= n && (uintptr_t)(x + i) % 16 == 0) {
            const float4 v = *(const float4 *)(x + i);
            lowp4<T> o = {{to_lowp<T>(v.x), to_lowp<T>(v.y), to_lowp<T>(v.z), to_lowp<T>(v.w)}};
            *(lowp4<T> *)(y + i) = o;
        } else {
            for (long long j = i; j < i + 4 && j < n; j++)
                y[j] = to_lowp<T>(x[j]);
        }
    }
}

/* Low-precision copies of A[na] and B[nb] in the workspace: *la, *lb. */
static int lowp_operands(const struct hg_kargs *a, const float *A, int64_t na,
                         const float *B, int64_t nb, void **la, void **lb)
{
    struct hg_cuda_ctx *cu = hg_cu(a);
    HG_CHECK(a->ctx->ws_bytes >= lowp_bytes(na) + lowp_bytes(nb));
    *la = a->ctx->ws;
    *lb = (char *)a->ctx->ws + lowp_bytes(na);
    const long long ua = (na + 3) / 4, units = ua + (nb + 3) / 4;
    if (a->ctx->lowp == HG_LOWP_BF16)
        round2_kernel<<<hg_cu_blocks(a, units), HG_CU_THREADS, 0, cu->stream>>>(
            A, (__nv_bfloat16 *)*la, (long long)na, B, (__nv_bfloat16 *)*lb, (long long)nb,
            ua, units);
    else
        round2_kernel<<<hg_cu_blocks(a, units), HG_CU_THREADS, 0, cu->stream>>>(
            A, (__half *)*la, (long long)na, B, (__half *)*lb, (long long)nb, ua, units);
    HG_CU_LAUNCHED(a);
    return 0;
}

/* One (strided-batched) GEMM in cuBLAS's column-major terms, fp32 through
 * cublasSgemm*, or on low-precision copies of X (first operand, nx floats)
 * and W (second, nw floats) with fp32 accumulation: Y = alpha op(X) op(W). */
static int gemm(const struct hg_kargs *a, cublasOperation_t ox, cublasOperation_t ow,
                int m, int n, int k, float alpha, const float *X, int ldx, long long sx,
                int64_t nx, const float *W, int ldw, long long sw, int64_t nw, float *Y,
                int ldy, long long sy, int batch)
{
    struct hg_cuda_ctx *cu = hg_cu(a);
    const float zero = 0.0f;
    if (a->ctx->lowp == HG_LOWP_NONE) {
        if (batch == 1)
            HG_CU_BLAS(a, cublasSgemm(cu->blas, ox, ow, m, n, k, &alpha, X, ldx, W, ldw,
                                      &zero, Y, ldy));
        else
            HG_CU_BLAS(a, cublasSgemmStridedBatched(cu->blas, ox, ow, m, n, k, &alpha, X,
                                                    ldx, sx, W, ldw, sw, &zero, Y, ldy,
                                                    sy, batch));
        return 0;
    }
    void *lx, *lw;
    if (lowp_operands(a, X, nx, W, nw, &lx, &lw) != 0)
        return -1;
    const cudaDataType_t t = a->ctx->lowp == HG_LOWP_BF16 ? CUDA_R_16BF : CUDA_R_16F;
    cublasStatus_t s =
        batch == 1 ? cublasGemmEx(cu->blas, ox, ow, m, n, k, &alpha, lx, t, ldx, lw, t, ldw,
                                  &zero, Y, CUDA_R_32F, ldy, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT)
                   : cublasGemmStridedBatchedEx(cu->blas, ox, ow, m, n, k, &alpha, lx, t,
                                                ldx, sx, lw, t, ldw, sw, &zero, Y,
                                                CUDA_R_32F, ldy, sy, batch,
                                                CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    HG_CU_BLAS(a, s);
    return 0;
}

/* cuBLAS's (32-bit) dimensions, leading dimensions and batch counts */
static int fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

static cublasOperation_t op_of(int trans)
{
    return trans ? CUBLAS_OP_T : CUBLAS_OP_N;
}

/* A[...,M,K] (trans_a: [...,K,M]), B[...,K,N] or B[K,N] (trans_b: [...,N,K])
 * -> Y[...,M,N] = alpha op(A) op(B), alpha 0 meaning 1. */
extern "C" HG_CUDA_FN(matmul)
{
    const struct hg_tview *ta = &a->in[0], *tb = &a->in[1];
    struct hg_tview *ty = a->out;
    const int tra = a->attr->mm.trans_a, trb = a->attr->mm.trans_b;
    const float alpha = a->attr->mm.alpha == 0.0f ? 1.0f : a->attr->mm.alpha;
    HG_CHECK(a->n_in == 2 && ta->dtype == HG_F32 && tb->dtype == HG_F32);
    HG_CHECK(ty->dtype == HG_F32 && ta->shape.ndim >= 2 && tb->shape.ndim >= 2);
    const struct hg_shape *sa = &ta->shape, *sb = &tb->shape;
    const int64_t m = ty->shape.dim[ty->shape.ndim - 2];
    const int64_t n = ty->shape.dim[ty->shape.ndim - 1];
    const int64_t k = sa->dim[sa->ndim - (tra ? 2 : 1)];
    const int64_t batch = m * n != 0 ? hg_shape_numel(&ty->shape) / (m * n) : 0;
    const int64_t lda = tra ? m : k, ldb = trb ? k : n;
    const int64_t sa_step = m * k, sy_step = m * n;
    const int64_t sb_step = sb->ndim == 2 ? 0 : k * n; /* 2-D B is shared */
    const float *A = (const float *)ta->data, *B = (const float *)tb->data;
    float *Y = (float *)ty->data; /* [batch, M, N] */
    struct hg_cuda_ctx *cu = hg_cu(a);
    HG_CHECK(sb->dim[sb->ndim - (trb ? 1 : 2)] == k);

    if (batch == 0)
        return 0;
    if (k == 0) { /* an empty sum: zeros (cuBLAS would leave Y alone) */
        HG_CU_TRY(a, cudaMemsetAsync(Y, 0, (size_t)(batch * sy_step) * sizeof(float),
                                     cu->stream));
        return 0;
    }
    HG_CHECK(fits_int(n) && fits_int(k) && fits_int(lda) && fits_int(ldb));
    if (sb_step == 0 && !tra) { /* fold the batch into M: one GEMM */
        HG_CHECK(fits_int(batch * m));
        return gemm(a, op_of(trb), CUBLAS_OP_N, (int)n, (int)(batch * m), (int)k, alpha,
                    B, (int)ldb, 0, hg_shape_numel(sb), A, (int)lda, 0, hg_shape_numel(sa),
                    Y, (int)n, 0, 1);
    }
    HG_CHECK(fits_int(m) && fits_int(batch));
    if (batch == 1) {
        return gemm(a, op_of(trb), op_of(tra), (int)n, (int)m, (int)k, alpha, B, (int)ldb,
                    0, hg_shape_numel(sb), A, (int)lda, 0, hg_shape_numel(sa), Y, (int)n, 0,
                    1);
    }
    /* a 2-D B under a transposed batched A: stride 0 repeats it */
    return gemm(a, op_of(trb), op_of(tra), (int)n, (int)m, (int)k, alpha, B, (int)ldb,
                (long long)sb_step, hg_shape_numel(sb), A, (int)lda, (long long)sa_step,
                hg_shape_numel(sa), Y, (int)n, (long long)sy_step, (int)batch);
}

/* X[rows,K], D[rows,N] (any leading dims) -> Y[K,N] = X^T D: one GEMM over
 * all rows, column-major Y^T[N,K] = D^T X. */
extern "C" HG_CUDA_FN(matmul_reduce)
{
    const struct hg_tview *tx = &a->in[0], *td = &a->in[1];
    struct hg_tview *ty = a->out;
    const float one = 1.0f;
    HG_CHECK(a->n_in == 2 && tx->dtype == HG_F32 && td->dtype == HG_F32);
    HG_CHECK(ty->dtype == HG_F32 && ty->shape.ndim == 2);
    const int64_t k = ty->shape.dim[0], n = ty->shape.dim[1];
    const int64_t rows = k ? hg_shape_numel(&tx->shape) / k : 0;
    const float *X = (const float *)tx->data; /* [rows, K] */
    const float *D = (const float *)td->data; /* [rows, N] */
    float *Y = (float *)ty->data;             /* [K, N] */
    struct hg_cuda_ctx *cu = hg_cu(a);
    HG_CHECK(hg_shape_numel(&td->shape) == rows * n);

    if (k * n == 0)
        return 0;
    if (rows == 0) { /* an empty sum: zeros */
        HG_CU_TRY(a, cudaMemsetAsync(Y, 0, (size_t)(k * n) * sizeof(float), cu->stream));
        return 0;
    }
    HG_CHECK(fits_int(k) && fits_int(n) && fits_int(rows));
    return gemm(a, CUBLAS_OP_N, CUBLAS_OP_T, (int)n, (int)k, (int)rows, one, D, (int)n, 0,
                rows * n, X, (int)k, 0, rows * k, Y, (int)n, 0, 1);
}
