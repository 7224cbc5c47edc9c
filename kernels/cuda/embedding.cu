/* embedding.cu - EMBEDDING and EMBEDDING_BWD.
 *
 * A vocabulary shard (attr emb) looks up the ids in its rows and zeros
 * for the others, and sums the gradient of its rows only.
 * Bad ids (outside [0,V)) are found by one block that reports the lowest
 * position, the one the CPU names (hg_cu_fail, HG_CUERR_ID); the forward
 * writes zeros for their rows, the backward skips them.
 *
 * The backward needs no atomics and no workspace: a block owns a range of
 * vocabulary rows and a slab of columns, zeroes them, then every warp scans
 * all ids in order (a ballot per 32 ids) and adds the matching dy rows to
 * its columns.  Each dw element is summed by one thread, from 0, in
 * position order: the CPU's order, so the results are bitwise equal.
 * Runs of the same id (padding) accumulate in registers.
 */
#include <limits.h>

#include "kernels/cuda/rowwise.h"

#define EB_WARPS 4   /* warps per block of the backward */
#define EB_PER_LANE 4 /* columns per lane: lane, lane + 32, ... (coalesced) */
#define EB_COLS (32 * EB_PER_LANE) /* columns per warp */
#define EB_BATCH 16  /* matching rows loaded before they are added */
#define EB_IDS 8     /* ids per lane fetched at once */

/* One block: the lowest position of an id outside [0,V) goes to the error
 * word. */
__global__ static void check_ids_k(const int32_t *ids, long long n, long long v,
                                   struct hg_cuda_err *derr, int pos, int op)
{
    __shared__ long long shl[HG_ROW_BLOCK / 32];
    const long long bad = hg_first_bad(ids, n, v, LLONG_MIN, shl);
    if (bad < n && threadIdx.x == 0)
        hg_cu_fail(derr, pos, op, HG_CUERR_ID, ids[bad], bad, v);
}

static int check_ids(const struct hg_kargs *a, const int32_t *ids, long long n,
                     long long v, enum hg_op op)
{
    struct hg_cuda_ctx *cu = hg_cu(a);
    if (n == 0)
        return 0;
    check_ids_k<<<1, HG_ROW_BLOCK, 0, cu->stream>>>(ids, n, v, cu->derr, a->ctx->pos,
                                                    (int)op);
    HG_CU_LAUNCHED(a);
    return 0;
}

/* out[i, :] = w[ids[i], :], zeros for a bad id */
__global__ static void embedding_k(const float *w, const int32_t *ids, float *out,
                                   long long n, long long v, long long d, long long row0)
{
    HG_CU_FOR(k, n * d) {
        const long long i = k / d, id = ids[i] - row0;
        out[k] = id >= 0 && id < v ? w[id * d + k % d] : 0.0f;
    }
}

/* dw[V,D]: block (x, y) owns vocabulary rows [x*vr, x*vr + vr) and the
 * columns of its warps, EB_COLS each from y * EB_WARPS * EB_COLS. */
__global__ static void embedding_bwd_k(const int32_t *ids, const float *dy, float *dw,
                                       long long n, long long v, long long d,
                                       long long vr, int row0)
{
    const int lane = threadIdx.x & 31;
    const long long c0 =
        ((long long)blockIdx.y * EB_WARPS + (threadIdx.x >> 5)) * EB_COLS + lane;
    const long long v0 = (long long)blockIdx.x * vr;
    const long long v1 = v0 + vr < v ? v0 + vr : v;
    if (c0 - lane >= d) /* the whole warp: no columns */
        return;
    for (long long r = v0; r < v1; r++)
#pragma unroll
        for (int q = 0; q < EB_PER_LANE; q++)
            if (c0 + 32 * q < d)
                dw[r * d + c0 + 32 * q] = 0.0f;

    __shared__ int sid[EB_WARPS][32 * EB_IDS]; /* this warp's next ids */
    int *wid = sid[threadIdx.x >> 5];
    long long cur = -1;           /* the row acc holds, -1 for none */
    float acc[EB_PER_LANE] = {0}; /* dw[cur, c0 + 32 q] so far */
    for (long long base = 0; base < n; base += 32 * EB_IDS) {
        /* EB_IDS loads per lane in flight, not one id round trip per 32 */
#pragma unroll
        for (int u = 0; u < EB_IDS; u++) {
            const long long i = base + 32 * u + lane;
            wid[32 * u + lane] = i < n ? ids[i] - row0 : -1; /* shard rows */
        }
        __syncwarp();
        for (int u = 0; u < EB_IDS; u++) {
            const int id = wid[32 * u + lane];
            const long long b0 = base + 32 * u; /* position of lane 0's id */
            unsigned m = __ballot_sync(HG_FULL_MASK, id >= v0 && id < v1);
            while (m) { /* warp-uniform */
                int b[EB_BATCH];
                float val[EB_BATCH][EB_PER_LANE];
#pragma unroll
                for (int k = 0; k < EB_BATCH; k++) { /* the next matches, in order */
                    b[k] = m ? __ffs(m) - 1 : -1;
                    m &= m - 1;
                }
#pragma unroll
                for (int k = 0; k < EB_BATCH; k++) {
                    const float *src = dy + (b0 + (b[k] < 0 ? 0 : b[k])) * d;
#pragma unroll
                    for (int q = 0; q < EB_PER_LANE; q++)
                        val[k][q] =
                            b[k] >= 0 && c0 + 32 * q < d ? src[c0 + 32 * q] : 0.0f;
                }
#pragma unroll
                for (int k = 0; k < EB_BATCH; k++) {
                    if (b[k] < 0)
                        break;
                    const long long row = wid[32 * u + b[k]];
                    if (row != cur) { /* store the old row, load the new one */
#pragma unroll
                        for (int q = 0; q < EB_PER_LANE; q++) {
                            if (c0 + 32 * q >= d)
                                continue;
                            if (cur >= 0)
                                dw[cur * d + c0 + 32 * q] = acc[q];
                            acc[q] = dw[row * d + c0 + 32 * q];
                        }
                        cur = row;
                    }
#pragma unroll
                    for (int q = 0; q < EB_PER_LANE; q++)
                        acc[q] += val[k][q];
                }
            }
        }
        __syncwarp(); /* wid is refilled next */
    }
    if (cur >= 0)
#pragma unroll
        for (int q = 0; q < EB_PER_LANE; q++)
            if (c0 + 32 * q < d)
                dw[cur * d + c0 + 32 * q] = acc[q];
}

/* A vocabulary shard (attr emb): ids are checked against the whole
 * vocabulary and shifted by the shard's first row; *v the vocabulary. */
static long long shard_row0(const union hg_attr *at, long long *v)
{
    if (at->emb.vocab <= 0)
        return 0;
    HG_CHECK(at->emb.row0 >= 0 && at->emb.row0 + *v <= at->emb.vocab &&
             at->emb.vocab <= INT_MAX);
    *v = at->emb.vocab;
    return at->emb.row0;
}

/* (w[V,D], ids[...] i32) -> out[...,D]; a shard's rows past it are zeros */
extern "C" HG_CUDA_FN(embedding)
{
    const struct hg_tview *tw = &a->in[0], *tid = &a->in[1];
    HG_CHECK(a->n_in == 2 && tw->dtype == HG_F32 && tid->dtype == HG_I32);
    HG_CHECK(tw->shape.ndim == 2);
    long long v = tw->shape.dim[0];
    const long long d = tw->shape.dim[1];
    const long long n = hg_shape_numel(&tid->shape);
    const int32_t *ids = (const int32_t *)tid->data; /* [n] */
    HG_CHECK(hg_shape_numel(&a->out->shape) == n * d);
    const long long rows = v, row0 = shard_row0(a->attr, &v);
    if (check_ids(a, ids, n, v, HG_OP_EMBEDDING))
        return -1;
    if (n * d == 0)
        return 0;
    embedding_k<<<hg_cu_blocks(a, n * d), HG_CU_THREADS, 0, hg_cu(a)->stream>>>(
        (const float *)tw->data, ids, (float *)a->out->data, n, rows, d, row0);
    HG_CU_LAUNCHED(a);
    return 0;
}

/* (ids[...] i32, dy[...,D], w_ref[V,D]) -> dw[V,D] = sum of dy rows by id */
extern "C" HG_CUDA_FN(embedding_bwd)
{
    const struct hg_tview *tid = &a->in[0], *tdy = &a->in[1];
    HG_CHECK(a->n_in == 3 && tid->dtype == HG_I32 && tdy->dtype == HG_F32);
    HG_CHECK(a->out->shape.ndim == 2);
    long long v = a->out->shape.dim[0];
    const long long d = a->out->shape.dim[1];
    const long long n = hg_shape_numel(&tid->shape);
    const int32_t *ids = (const int32_t *)tid->data; /* [n] */
    HG_CHECK(hg_shape_numel(&tdy->shape) == n * d);
    const long long rows = v, row0 = shard_row0(a->attr, &v);
    if (check_ids(a, ids, n, v, HG_OP_EMBEDDING_BWD))
        return -1;
    v = rows;
    if (v * d == 0)
        return 0;
    /* about 4 blocks per SM over (vocabulary ranges) x (column slabs) */
    const long long slabs = (d + EB_WARPS * EB_COLS - 1) / (EB_WARPS * EB_COLS);
    long long ranges = (long long)hg_cu(a)->sm_count * 4 / slabs;
    if (ranges < 1)
        ranges = 1;
    if (ranges > v)
        ranges = v;
    const long long vr = (v + ranges - 1) / ranges;
    ranges = (v + vr - 1) / vr;
    HG_CHECK(slabs <= 65535 && ranges <= 0x7fffffffLL);
    const dim3 grid((unsigned)ranges, (unsigned)slabs);
    embedding_bwd_k<<<grid, 32 * EB_WARPS, 0, hg_cu(a)->stream>>>(
        ids, (const float *)tdy->data, (float *)a->out->data, n, v, d, vr, (int)row0);
    HG_CU_LAUNCHED(a);
    return 0;
}
