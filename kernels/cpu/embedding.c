/* embedding.c - EMBEDDING and EMBEDDING_BWD on the CPU. */
#include <string.h>

#include <omp.h>

#include "kernels/ops-impl.h"

/* First id outside [0,V) -> runtime error naming it; 0 if all are valid. */
static int check_ids(const int32_t *ids, int64_t n, int64_t v,
                     struct hg_kctx *ctx)
{
    for (int64_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= v)
            return hg_kerr(ctx->err, ctx->errlen,
                           "embedding: id %d at position %lld outside [0,%lld)",
                           (int)ids[i], (long long)i, (long long)v);
    return 0;
}

/* A vocabulary shard (attr emb): ids are checked against the whole
 * vocabulary and shifted by the shard's first row; *v the vocabulary. */
static int64_t shard_row0(const union hg_attr *at, int64_t *v)
{
    if (at->emb.vocab <= 0)
        return 0;
    HG_CHECK(at->emb.row0 >= 0 && at->emb.row0 + *v <= at->emb.vocab);
    *v = at->emb.vocab;
    return at->emb.row0;
}

/* (w[V,D], ids[...] i32) -> out[...,D]; a shard's rows past it are zeros */
HG_CPU_FN(embedding)
{
    const struct hg_tview *tw = &a->in[0], *tid = &a->in[1];
    HG_CHECK(a->n_in == 2 && tw->dtype == HG_F32 && tid->dtype == HG_I32);
    HG_CHECK(tw->shape.ndim == 2);
    int64_t v = tw->shape.dim[0], d = tw->shape.dim[1];
    int64_t n = hg_shape_numel(&tid->shape);
    const float *w = tw->data;
    const int32_t *ids = tid->data;
    float *out = a->out->data;
    HG_CHECK(hg_shape_numel(&a->out->shape) == n * d);
    int64_t rows = v, row0 = shard_row0(a->attr, &v);
    if (check_ids(ids, n, v, a->ctx))
        return -1;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        int64_t r = (int64_t)ids[i] - row0;
        if (r >= 0 && r < rows)
            memcpy(out + i * d, w + r * d, (size_t)d * sizeof(float));
        else
            memset(out + i * d, 0, (size_t)d * sizeof(float));
    }
    return 0;
}

/* (ids[...] i32, dy[...,D], w_ref[V,D]) -> dw[V,D] = sum of dy rows by id
 * (a shard's: of the ids in its rows).
 * Threads own disjoint column blocks and add positions in order, so the
 * result is race-free and the same for any thread count. */
HG_CPU_FN(embedding_bwd)
{
    const struct hg_tview *tid = &a->in[0], *tdy = &a->in[1];
    HG_CHECK(a->n_in == 3 && tid->dtype == HG_I32 && tdy->dtype == HG_F32);
    HG_CHECK(a->out->shape.ndim == 2);
    int64_t v = a->out->shape.dim[0], d = a->out->shape.dim[1];
    int64_t n = hg_shape_numel(&tid->shape);
    const int32_t *ids = tid->data;
    const float *dy = tdy->data;
    float *dw = a->out->data;
    HG_CHECK(hg_shape_numel(&tdy->shape) == n * d);
    int64_t rows = v, row0 = shard_row0(a->attr, &v);
    if (check_ids(ids, n, v, a->ctx))
        return -1;
    v = rows;
    const int64_t blk = 64; /* columns per block: whole cache lines */
    int64_t nblk = (d + blk - 1) / blk;
#pragma omp parallel
    {
#pragma omp for schedule(static)
        for (int64_t r = 0; r < v; r++)
            memset(dw + r * d, 0, (size_t)d * sizeof(float));
#pragma omp for schedule(static)
        for (int64_t b = 0; b < nblk; b++) {
            int64_t c0 = b * blk, c1 = c0 + blk < d ? c0 + blk : d;
            for (int64_t i = 0; i < n; i++) {
                int64_t r = (int64_t)ids[i] - row0;
                if (r < 0 || r >= rows)
                    continue; /* another shard's row */
                float *dst = dw + r * d;
                const float *src = dy + i * d;
                for (int64_t c = c0; c < c1; c++)
                    dst[c] += src[c];
            }
        }
    }
    return 0;
}
