/* reduce.cu - SUM and MEAN over one axis or all, EXPAND_LIKE (their
 * backward), and the CPU-order sum of runs SUM_TO shares (CUDA kernels,
 * f32; semantics in kernels/ops-impl.h, reference kernels/cpu/reduce.c).
 *
 * Deterministic and the CPU's bits: every output is summed in the order and
 * precision of kernels/cpu/reduce.c and util.c, by one thread or one fixed
 * set of threads; see reduce-impl.h for why.  No atomics.
 */
#include <math.h>
#include <string.h>

#include "kernels/cuda/reduce-impl.h"
#include "kernels/shape-plan.h"

#define RUN_THREADS 1024 /* sum_runs_kernel's largest block */

/* ---- sum of runs (hg_cpu_sum_all, SUM_TO's inner-reduced case) ---------- */

/* Start (relative to the output's base) and length of run r. */
__device__ static inline void run_at(const struct hg_cu_runs *p, long long r,
                                     long long *off, long long *len)
{
    if (p->chunks) {
        const long long lo = p->n * r / HG_NCHUNK;
        *off = lo;
        *len = p->n * (r + 1) / HG_NCHUNK - lo;
        return;
    }
    long long o = 0;
    for (int k = p->nr - 1; k >= 0; k--) {
        o += (r % p->rd[k]) * p->rs[k];
        r /= p->rd[k];
    }
    *off = o;
    *len = p->len;
}

/* One block per output (grid-stride over outputs).  Runs go in batches of
 * per = blockDim.x / 16: thread (j, l) adds lane l of run j in float, as
 * hg_cpu_sum_run's lane[l]; thread (j, 0) combines the 16 lanes and the
 * tail in double; thread 0 adds the runs' sums in run order. */
__global__ static void sum_runs_kernel(const float *x, float *y, long long ny,
                                       struct hg_cu_runs p, int mean)
{
    __shared__ float lane[RUN_THREADS];                /* [per, 16] */
    __shared__ double part[RUN_THREADS / HG_CU_LANES]; /* [per] */
    const int per = blockDim.x / HG_CU_LANES;
    const int j = threadIdx.x / HG_CU_LANES, l = threadIdx.x % HG_CU_LANES;
    const long long nrun = p.chunks ? HG_NCHUNK : p.nrun;

    for (long long m = blockIdx.x; m < ny; m += gridDim.x) {
        long long base = 0, mm = m;
        for (int k = p.nk - 1; k >= 0 && !p.chunks; k--) {
            base += (mm % p.kd[k]) * p.ks[k];
            mm /= p.kd[k];
        }
        double s = 0; /* thread 0's */
        for (long long r0 = 0; r0 < nrun; r0 += per) {
            const long long r = r0 + j;
            long long off = 0, len = 0;
            if (r < nrun)
                run_at(&p, r, &off, &len);
            const float *xr = x + base + off;
            const long long full = len - len % HG_CU_LANES; /* whole groups of 16 */
            float acc = 0.0f;
            for (long long i = l; i < full; i += HG_CU_LANES)
                acc += xr[i];
            lane[threadIdx.x] = acc;
            __syncthreads();
            if (l == 0 && r < nrun) {
                double t = 0;
                for (int k = 0; k < HG_CU_LANES; k++)
                    t += lane[j * HG_CU_LANES + k];
                for (long long i = full; i < len; i++)
                    t += xr[i];
                part[j] = t;
            }
            __syncthreads();
            if (threadIdx.x == 0)
                for (int k = 0; k < per && r0 + k < nrun; k++)
                    s += part[k];
            __syncthreads(); /* lane and part are rewritten next batch */
        }
        if (threadIdx.x == 0)
            y[m] = (float)(mean ? (p.n ? s / (double)p.n : (double)NAN) : s);
    }
}

int hg_cu_sum_runs(const struct hg_kargs *a, const float *x, float *y,
                   long long ny, const struct hg_cu_runs *runs, int mean)
{
    const long long nrun = runs->chunks ? HG_NCHUNK : runs->nrun;
    const long long cap = RUN_THREADS / HG_CU_LANES;
    const long long per = nrun < 1 ? 1 : nrun < cap ? nrun : cap;
    const long long blocks = ny < 65535 ? ny : 65535;

    HG_CHECK(!mean || runs->chunks);
    if (ny == 0)
        return 0;
    sum_runs_kernel<<<(unsigned)blocks, (unsigned)(per * HG_CU_LANES), 0,
                      hg_cu(a)->stream>>>(x, y, ny, *runs, mean);
    HG_CU_LAUNCHED(a);
    return 0;
}

/* ---- column sums (sum_axis with inner > 1, SUM_TO with the inner kept) ---- */

#define COL_SHORT 64 /* columns this short: each output's thread reads them */
#define TCOLS 16     /* tiled: columns per block (64-byte row segments) */
#define TROWS 256    /* tiled: rows per shared-memory tile */
#define TLOAD 256    /* tiled: threads that load; one more warp adds */

/* sum_k idx_k(i) * s[k], i read over d[0..n) (last fastest) */
__device__ static inline long long group_off(long long i, int n, const long long *d,
                                             const long long *s)
{
    long long o = 0;
    for (int k = n - 1; k > 0; k--) {
        o += (i % d[k]) * s[k];
        i /= d[k];
    }
    return n > 0 ? o + i * s[0] : 0; /* i < d[0] */
}

/* Short columns: one thread per output reads its column itself; neighbours
 * read neighbouring columns. */
__global__ static void cols_short_kernel(const float *x, float *y,
                                         struct hg_cu_cols c)
{
    HG_CU_FOR(m, c.P * c.K) {
        const float *xc = x + group_off(m / c.K, c.nk, c.kd, c.ks) + m % c.K;
        float s = 0.0f;
        for (long long r = 0; r < c.nrun; r++)
            s += xc[group_off(r, c.nr, c.rd, c.rs)];
        if (c.scale != 1.0f)
            s *= c.scale;
        y[m] = s;
    }
}

/* Long columns: a block per TCOLS columns of an output row.  Warps 1..8
 * load tiles of TROWS rows into shared memory, double-buffered, while warp
 * 0 (one lane per column) adds the previous tile's rows in order. */
__global__ static void cols_tiled_kernel(const float *x, float *y,
                                         struct hg_cu_cols c)
{
    __shared__ float buf[2][TROWS * TCOLS]; /* [2][TROWS, TCOLS] */
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int lt = (int)threadIdx.x - 32; /* loader index, warps 1.. */
    const int lcol = lt % TCOLS, lrow = lt / TCOLS; /* rows lrow + k * (TLOAD / TCOLS) */
    const long long ngrp = (c.K + TCOLS - 1) / TCOLS;
    const long long ntile = (c.nrun + TROWS - 1) / TROWS;

    for (long long g = blockIdx.x; g < c.P * ngrp; g += gridDim.x) {
        const long long p = g / ngrp, c0 = (g % ngrp) * TCOLS;
        const int ncols = (int)(c.K - c0 < TCOLS ? c.K - c0 : TCOLS);
        const float *xb = x + group_off(p, c.nk, c.kd, c.ks) + c0;
        float s = 0.0f; /* warp 0's */
        for (long long t = -1; t < ntile; t++) {
            if (warp > 0 && t + 1 < ntile) { /* tile t+1 into buf[(t+1)&1] */
                float v[TROWS * TCOLS / TLOAD];
                const long long r0 = (t + 1) * TROWS + lrow;
#pragma unroll
                for (int k = 0; k < TROWS * TCOLS / TLOAD; k++) {
                    const long long r = r0 + k * (TLOAD / TCOLS);
                    v[k] = r < c.nrun && lcol < ncols
                               ? xb[group_off(r, c.nr, c.rd, c.rs) + lcol]
                               : 0.0f;
                }
                float *b = buf[(t + 1) & 1];
#pragma unroll
                for (int k = 0; k < TROWS * TCOLS / TLOAD; k++)
                    b[(lrow + k * (TLOAD / TCOLS)) * TCOLS + lcol] = v[k];
            } else if (warp == 0 && t >= 0 && lane < ncols) { /* add tile t */
                const float *b = buf[t & 1];
                const long long left = c.nrun - t * TROWS;
                const int rows = (int)(left < TROWS ? left : TROWS);
#pragma unroll 16
                for (int r = 0; r < rows; r++)
                    s += b[r * TCOLS + lane];
            }
            __syncthreads(); /* tile t+1 loaded, tile t's buffer free */
        }
        if (warp == 0 && lane < ncols) {
            if (c.scale != 1.0f)
                s *= c.scale;
            y[p * c.K + c0 + lane] = s;
        }
    }
}

int hg_cu_sum_cols(const struct hg_kargs *a, const float *x, float *y,
                   const struct hg_cu_cols *c)
{
    const long long n = c->P * c->K;
    cudaStream_t st = hg_cu(a)->stream;

    HG_CHECK(c->nk >= 0 && c->nr >= 0 && c->nr <= HG_MAX_DIMS);
    if (n == 0)
        return 0;
    if (c->nrun <= COL_SHORT) {
        cols_short_kernel<<<hg_cu_blocks(a, n), HG_CU_THREADS, 0, st>>>(x, y, *c);
    } else {
        const long long g = c->P * ((c->K + TCOLS - 1) / TCOLS);
        cols_tiled_kernel<<<(unsigned)(g < 65535 ? g : 65535), 32 + TLOAD, 0, st>>>(
            x, y, *c);
    }
    HG_CU_LAUNCHED(a);
    return 0;
}

/* ---- column sums in chunks (SUM_TO's bias gradients) ---------------------- */

#define CC_ROWS 64   /* rows per chunk at least */
#define CC_MAX 128   /* chunks at most */
#define CC_LANES 8   /* row lanes per block (blockDim.y) */

int hg_cu_col_chunks(long long nrun)
{
    const long long c = (nrun + CC_ROWS - 1) / CC_ROWS;
    return c < 1 ? 1 : c > CC_MAX ? CC_MAX : (int)c;
}

size_t hg_cu_col_ws(long long pk, long long nrun)
{
    return (size_t)hg_cu_col_chunks(nrun) * (size_t)pk * sizeof(double);
}

/* part[ch, p*K + c] = sum of chunk ch's rows of column c of output row p.
 * Block (32, CC_LANES): x is the column within a 32-column tile (a warp
 * reads 128 contiguous bytes), y the row lane; grid (P * tiles, chunks).
 * ONE: a single reduced group (rows at a fixed stride, no division). */
template <bool ONE>
__global__ static void cols_part_kernel(const float *x, double *part,
                                        struct hg_cu_cols c, int chunks)
{
    __shared__ double sh[CC_LANES][32];
    const long long tiles = (c.K + 31) / 32;
    const long long p = blockIdx.x / tiles, col = (blockIdx.x % tiles) * 32 + threadIdx.x;
    const long long ch = blockIdx.y;
    const long long lo = c.nrun * ch / chunks, hi = c.nrun * (ch + 1) / chunks;
    float s = 0.0f;
    if (col < c.K) {
        const float *xc = x + group_off(p, c.nk, c.kd, c.ks) + col;
#pragma unroll 4
        for (long long r = lo + threadIdx.y; r < hi; r += CC_LANES)
            s += xc[ONE ? r * c.rs[0] : group_off(r, c.nr, c.rd, c.rs)];
    }
    sh[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0 && col < c.K) {
        double t = 0;
#pragma unroll
        for (int l = 0; l < CC_LANES; l++)
            t += sh[l][threadIdx.x];
        part[ch * c.P * c.K + p * c.K + col] = t;
    }
}

/* y[m] = (float)(sum over chunks of part[ch * pk + m]) * scale: a warp per
 * output, lane l adding chunks l, l+32, ... in order, then a fixed shuffle
 * tree (the chunks are many and short: one thread per output would wait on
 * one load after another). */
__global__ static void parts_sum_kernel(const double *part, float *y, long long pk,
                                        int chunks, float scale)
{
    const int lane = threadIdx.x % 32;
    const long long nw = (long long)gridDim.x * blockDim.x / 32;
    for (long long m = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32; m < pk;
         m += nw) {
        double t = 0;
        for (int ch = lane; ch < chunks; ch += 32)
            t += part[ch * pk + m];
#pragma unroll
        for (int o = 16; o > 0; o /= 2)
            t += __shfl_down_sync(0xffffffffu, t, o);
        if (lane == 0) {
            float s = (float)t;
            if (scale != 1.0f)
                s *= scale;
            y[m] = s;
        }
    }
}

int hg_cu_sum_parts(const struct hg_kargs *a, const double *part, float *y, long long pk,
                    int chunks, float scale)
{
    if (pk == 0)
        return 0;
    long long blocks = (pk * 32 + HG_CU_THREADS - 1) / HG_CU_THREADS;
    const long long cap = (long long)hg_cu(a)->sm_count * 16;
    parts_sum_kernel<<<(unsigned)(blocks < cap ? blocks : cap), HG_CU_THREADS, 0,
                       hg_cu(a)->stream>>>(part, y, pk, chunks, scale);
    HG_CU_LAUNCHED(a);
    return 0;
}

int hg_cu_sum_cols_chunked(const struct hg_kargs *a, const float *x, float *y,
                           const struct hg_cu_cols *c, double *part)
{
    const long long pk = c->P * c->K;
    const int chunks = hg_cu_col_chunks(c->nrun);
    const long long tiles = (c->K + 31) / 32;
    cudaStream_t st = hg_cu(a)->stream;

    HG_CHECK(c->nk >= 0 && c->nr >= 1 && c->nr <= HG_MAX_DIMS);
    if (pk == 0)
        return 0;
    HG_CHECK(c->P * tiles <= 0x7fffffffLL);
    const dim3 grid((unsigned)(c->P * tiles), (unsigned)chunks), block(32, CC_LANES);
    if (c->nr == 1)
        cols_part_kernel<true><<<grid, block, 0, st>>>(x, part, *c, chunks);
    else
        cols_part_kernel<false><<<grid, block, 0, st>>>(x, part, *c, chunks);
    HG_CU_LAUNCHED(a);
    return hg_cu_sum_parts(a, part, y, pk, chunks, c->scale);
}

/* ---- SUM, MEAN ---------------------------------------------------------- */

/* x[outer, A] -> y[outer]: (float)(double sum in order * scale), the CPU's
 * inner == 1 case.  A warp per row: the lanes load 32 neighbours at a time,
 * and every lane adds all 32 in order (shuffled to it), so the warp reads
 * coalesced and keeps the CPU's order. */
__global__ static void sum_rows_kernel(const float *x, float *y, long long outer,
                                       long long A, float scale)
{
    const int lane = threadIdx.x % 32;
    const long long nw = (long long)gridDim.x * blockDim.x / 32;
    for (long long o = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
         o < outer; o += nw) {
        const float *xr = x + o * A;
        double s = 0;
        for (long long i = 0; i < A; i += 32) {
            const float v = i + lane < A ? xr[i + lane] : 0.0f;
            const int m = (int)(A - i < 32 ? A - i : 32);
            for (int j = 0; j < m; j++)
                s += __shfl_sync(0xffffffffu, v, j);
        }
        if (lane == 0)
            y[o] = (float)(s * scale);
    }
}

static int reduce(const struct hg_kargs *a, int mean)
{
    const struct hg_tview *xv = &a->in[0];
    const float *x = (const float *)xv->data; /* [..] */
    float *y = (float *)a->out->data;         /* axis kept with size 1, or [1] */
    const struct hg_shape *s = &xv->shape;
    const int64_t n = hg_shape_numel(s);
    int axis = a->attr->reduce.axis;

    HG_CHECK(xv->dtype == HG_F32);
    if (axis == HG_AXIS_ALL) {
        struct hg_cu_runs runs;
        memset(&runs, 0, sizeof runs);
        runs.chunks = 1;
        runs.n = n;
        return hg_cu_sum_runs(a, x, y, 1, &runs, mean);
    }
    axis = hg_norm_axis(axis, s->ndim);
    int64_t outer, inner, A = s->dim[axis];
    hg_outer_inner(s, axis, &outer, &inner);
    HG_CHECK(hg_shape_numel(&a->out->shape) == outer * inner);
    if (outer * inner == 0)
        return 0;
    const float scale = mean ? 1.0f / (float)A : 1.0f; /* as the CPU's */
    if (inner > 1) { /* x[outer, A, inner]: column sums */
        struct hg_cu_cols c;
        memset(&c, 0, sizeof c);
        c.P = outer;
        c.K = inner;
        c.nrun = A;
        c.nk = 1;
        c.kd[0] = outer;
        c.ks[0] = A * inner;
        c.nr = 1;
        c.rd[0] = A;
        c.rs[0] = inner;
        c.scale = scale;
        return hg_cu_sum_cols(a, x, y, &c);
    }
    sum_rows_kernel<<<hg_cu_blocks(a, outer * 32), HG_CU_THREADS, 0,
                      hg_cu(a)->stream>>>(x, y, outer, A, scale);
    HG_CU_LAUNCHED(a);
    return 0;
}

extern "C" HG_CUDA_FN(sum) { return reduce(a, 0); }
extern "C" HG_CUDA_FN(mean) { return reduce(a, 1); }

/* ---- EXPAND_LIKE -------------------------------------------------------- */

/* out's axes merged where dy's strides allow (hg_expand_plan, as the
 * CPU's); st 0 = dy broadcasts along that axis */
struct eplan {
    int nd;
    int64_t dim[HG_MAX_DIMS], st[HG_MAX_DIMS];
};

/* y[i] = alpha * dy[offset of i] over the ND merged axes */
template <int ND>
__global__ static void expand_kernel(const float *dy, float *y, long long n,
                                     float alpha, struct eplan p)
{
    HG_CU_FOR(i, n)
        y[i] = alpha * dy[hg_cu_offset<ND>(i, p.dim, p.st)];
}

/* (dy, x_ref) -> out[x's shape] = alpha * dy broadcast (alpha 0 means 1;
 * alpha < 0 means 1/count, count = numel(x_ref)/numel(dy): MEAN's
 * backward).  dy has SUM's output shape (x's with some axes of size 1) or
 * [1]. */
extern "C" HG_CUDA_FN(expand_like)
{
    const struct hg_tview *dv = &a->in[0];
    const float *dy = (const float *)dv->data; /* SUM's output shape, or [1] */
    float *y = (float *)a->out->data;          /* x_ref's shape */
    const struct hg_shape *os = &a->out->shape;
    const int64_t n = hg_shape_numel(os);
    /* the CPU's host arithmetic, so alpha has its bits */
    const float alpha = hg_mean_alpha(a->attr->reduce.alpha, &dv->shape, &a->in[1].shape);
    struct eplan p;

    HG_CHECK(dv->dtype == HG_F32);
    if (n == 0)
        return 0;
    if (hg_shape_numel(&dv->shape) == 1) { /* one axis, all broadcast */
        p.nd = 1;
        p.dim[0] = n;
        p.st[0] = 0;
    } else {
        p.nd = hg_expand_plan(&dv->shape, os, p.dim, p.st);
        HG_CHECK(p.nd > 0);
    }
    const unsigned nb = hg_cu_blocks(a, n);
    cudaStream_t st = hg_cu(a)->stream;
    static_assert(HG_MAX_DIMS == 6, "one case per rank below");
    switch (p.nd) {
    case 1: expand_kernel<1><<<nb, HG_CU_THREADS, 0, st>>>(dy, y, n, alpha, p); break;
    case 2: expand_kernel<2><<<nb, HG_CU_THREADS, 0, st>>>(dy, y, n, alpha, p); break;
    case 3: expand_kernel<3><<<nb, HG_CU_THREADS, 0, st>>>(dy, y, n, alpha, p); break;
    case 4: expand_kernel<4><<<nb, HG_CU_THREADS, 0, st>>>(dy, y, n, alpha, p); break;
    case 5: expand_kernel<5><<<nb, HG_CU_THREADS, 0, st>>>(dy, y, n, alpha, p); break;
    default: expand_kernel<6><<<nb, HG_CU_THREADS, 0, st>>>(dy, y, n, alpha, p); break;
    }
    HG_CU_LAUNCHED(a);
    return 0;
}
