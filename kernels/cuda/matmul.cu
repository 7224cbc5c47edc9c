/* matmul.cu - MATMUL and MATMUL_REDUCE through cuBLAS (the context's handle:
 * pedantic fp32, no TF32, on the context's stream).
 *
 * cuBLAS is column-major: a row-major [R,C] buffer is the column-major
 * [C,R] matrix, its transpose.  So row-major Y = op(A) op(B) is computed
 * as column-major Y^T = op(B)^T op(A)^T: the operands swap, each keeps its
 * own transpose flag and its row-major leading dimension.
 */
#include <limits.h>

#include "kernels/cuda/cuda-impl.h"

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
    const float zero = 0.0f;
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
        HG_CU_BLAS(a, cublasSgemm(cu->blas, op_of(trb), CUBLAS_OP_N, (int)n,
                                  (int)(batch * m), (int)k, &alpha, B, (int)ldb,
                                  A, (int)lda, &zero, Y, (int)n));
        return 0;
    }
    HG_CHECK(fits_int(m) && fits_int(batch));
    if (batch == 1) {
        HG_CU_BLAS(a, cublasSgemm(cu->blas, op_of(trb), op_of(tra), (int)n, (int)m,
                                  (int)k, &alpha, B, (int)ldb, A, (int)lda, &zero,
                                  Y, (int)n));
        return 0;
    }
    /* a 2-D B under a transposed batched A: stride 0 repeats it */
    HG_CU_BLAS(a, cublasSgemmStridedBatched(
                      cu->blas, op_of(trb), op_of(tra), (int)n, (int)m, (int)k,
                      &alpha, B, (int)ldb, (long long)sb_step, A, (int)lda,
                      (long long)sa_step, &zero, Y, (int)n, (long long)sy_step,
                      (int)batch));
    return 0;
}

/* X[rows,K], D[rows,N] (any leading dims) -> Y[K,N] = X^T D: one GEMM over
 * all rows, column-major Y^T[N,K] = D^T X. */
extern "C" HG_CUDA_FN(matmul_reduce)
{
    const struct hg_tview *tx = &a->in[0], *td = &a->in[1];
    struct hg_tview *ty = a->out;
    const float one = 1.0f, zero = 0.0f;
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
    HG_CU_BLAS(a, cublasSgemm(cu->blas, CUBLAS_OP_N, CUBLAS_OP_T, (int)n, (int)k,
                              (int)rows, &one, D, (int)n, X, (int)k, &zero, Y,
                              (int)n));
    return 0;
}
