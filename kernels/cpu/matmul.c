/* matmul.c - MATMUL and MATMUL_REDUCE on the CPU through hg_sgemm. */
#include <omp.h>

#include "kernels/ops-impl.h"

static int kernel_threads(const struct hg_kctx *ctx)
{
    return ctx && ctx->nthreads > 0 ? ctx->nthreads : omp_get_max_threads();
}

/* A[...,M,K] (trans_a: [...,K,M]), B[...,K,N] or B[K,N] (trans_b: [...,N,K])
 * -> Y[...,M,N] = alpha op(A) op(B). */
HG_CPU_FN(matmul)
{
    const struct hg_tview *ta = &a->in[0], *tb = &a->in[1];
    struct hg_tview *ty = a->out;
    int tra = a->attr->mm.trans_a, trb = a->attr->mm.trans_b;
    float alpha = a->attr->mm.alpha == 0.0f ? 1.0f : a->attr->mm.alpha;
    HG_CHECK(a->n_in == 2 && ta->dtype == HG_F32 && tb->dtype == HG_F32);
    HG_CHECK(ty->dtype == HG_F32 && ta->shape.ndim >= 2 && tb->shape.ndim >= 2);
    const struct hg_shape *sa = &ta->shape, *sb = &tb->shape;
    int64_t m = ty->shape.dim[ty->shape.ndim - 2];
    int64_t n = ty->shape.dim[ty->shape.ndim - 1];
    int64_t k = sa->dim[sa->ndim - (tra ? 2 : 1)];
    int64_t batch = m * n != 0 ? hg_shape_numel(&ty->shape) / (m * n) : 0;
    int64_t lda = tra ? m : k, ldb = trb ? k : n;
    int64_t sa_step = m * k, sy_step = m * n;
    int64_t sb_step = sb->ndim == 2 ? 0 : k * n; /* 2-D B is shared */
    const float *A = ta->data, *B = tb->data;
    float *Y = ty->data;
    HG_CHECK(sb->dim[sb->ndim - (trb ? 1 : 2)] == k);

    if (m * n == 0)
        return 0;
    if (sb_step == 0 && !tra) { /* fold the batch into M: one GEMM */
        hg_sgemm(0, trb, batch * m, n, k, alpha, A, lda, B, ldb, 0.0f, Y, n);
        return 0;
    }
    if (batch < kernel_threads(a->ctx)) { /* few big GEMMs: BLAS threads */
        for (int64_t i = 0; i < batch; i++)
            hg_sgemm(tra, trb, m, n, k, alpha, A + i * sa_step, lda,
                     B + i * sb_step, ldb, 0.0f, Y + i * sy_step, n);
        return 0;
    }
    /* many GEMMs (attention heads): one per thread; OpenBLAS-OpenMP runs
     * single-threaded inside a parallel region */
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t i = 0; i < batch; i++)
        hg_sgemm(tra, trb, m, n, k, alpha, A + i * sa_step, lda,
                 B + i * sb_step, ldb, 0.0f, Y + i * sy_step, n);
    return 0;
}

/* X[rows,K], D[rows,N] (any leading dims) -> Y[K,N] = X^T D */
HG_CPU_FN(matmul_reduce)
{
    const struct hg_tview *tx = &a->in[0], *td = &a->in[1];
    struct hg_tview *ty = a->out;
    HG_CHECK(a->n_in == 2 && tx->dtype == HG_F32 && td->dtype == HG_F32);
    HG_CHECK(ty->dtype == HG_F32 && ty->shape.ndim == 2);
    int64_t k = ty->shape.dim[0], n = ty->shape.dim[1];
    int64_t rows = k ? hg_shape_numel(&tx->shape) / k : 0;
    HG_CHECK(hg_shape_numel(&td->shape) == rows * n);
    hg_sgemm(1, 0, k, n, rows, 1.0f, tx->data, k, td->data, n, 0.0f, ty->data,
             n);
    return 0;
}
