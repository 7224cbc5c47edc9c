/* conv.c - CONV2D (+ backward) and MAXPOOL2D (+ backward) on the CPU.
 * Convolutions are im2col + GEMM per image (see conv_threads).
 */
#include <math.h>
#include <string.h>

#include <omp.h>

#include "kernels/ops-impl.h"
#include "kernels/shape-plan.h"

/* Valid ow range [*lo, *hi) for kernel column kw: 0 <= ow*sw - pw + kw < W. */
static void ow_range(const struct hg_conv_geom *g, int64_t kw, int64_t *lo, int64_t *hi)
{
    int64_t a = g->pw - kw; /* need ow*sw >= a */
    int64_t b = g->w + g->pw - kw; /* need ow*sw < b */
    *lo = a <= 0 ? 0 : (a + g->sw - 1) / g->sw;
    *hi = b <= 0 ? 0 : (b - 1) / g->sw + 1;
    if (*hi > g->ow)
        *hi = g->ow;
    if (*lo > *hi)
        *lo = *hi;
}

/* x[cur,C,H,W] -> cols[CKK, cur*P] */
static void im2col(const struct hg_conv_geom *g, const float *x, int64_t cur,
                   float *cols)
{
    int64_t ld = cur * g->p;
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t r = 0; r < g->ckk; r++) {
        for (int64_t nl = 0; nl < cur; nl++) {
            int64_t c = r / (g->kh * g->kw), kh = (r / g->kw) % g->kh,
                    kw = r % g->kw, lo, hi;
            const float *src = x + (nl * g->c + c) * g->h * g->w;
            float *dst = cols + r * ld + nl * g->p;
            ow_range(g, kw, &lo, &hi);
            for (int64_t oh = 0; oh < g->oh; oh++) {
                int64_t ih = oh * g->sh - g->ph + kh;
                float *d = dst + oh * g->ow;
                if (ih < 0 || ih >= g->h) {
                    memset(d, 0, (size_t)g->ow * sizeof(float));
                    continue;
                }
                const float *s = src + ih * g->w; /* row ih of x */
                int64_t off = kw - g->pw;         /* iw = ow*sw + off */
                for (int64_t ow = 0; ow < lo; ow++)
                    d[ow] = 0.0f;
                if (g->sw == 1) {
                    for (int64_t ow = lo; ow < hi; ow++)
                        d[ow] = s[ow + off];
                } else {
                    for (int64_t ow = lo; ow < hi; ow++)
                        d[ow] = s[ow * g->sw + off];
                }
                for (int64_t ow = hi; ow < g->ow; ow++)
                    d[ow] = 0.0f;
            }
        }
    }
}

/* cols[CKK, cur*P] -> dx[cur,C,H,W] (overwritten): each (image, channel)
 * plane is summed by one thread in a fixed order. */
static void col2im(const struct hg_conv_geom *g, const float *cols, int64_t cur,
                   float *dx)
{
    int64_t ld = cur * g->p;
#pragma omp parallel for schedule(static)
    for (int64_t pl = 0; pl < cur * g->c; pl++) {
        int64_t nl = pl / g->c, c = pl % g->c;
        float *dst = dx + pl * g->h * g->w;
        memset(dst, 0, (size_t)(g->h * g->w) * sizeof(float));
        for (int64_t kh = 0; kh < g->kh; kh++) {
            for (int64_t kw = 0; kw < g->kw; kw++) {
                int64_t r = (c * g->kh + kh) * g->kw + kw, lo, hi;
                const float *src = cols + r * ld + nl * g->p;
                ow_range(g, kw, &lo, &hi);
                for (int64_t oh = 0; oh < g->oh; oh++) {
                    int64_t ih = oh * g->sh - g->ph + kh;
                    if (ih < 0 || ih >= g->h)
                        continue;
                    float *d = dst + ih * g->w; /* row ih of dx */
                    const float *s = src + oh * g->ow;
                    int64_t off = kw - g->pw;
                    for (int64_t ow = lo; ow < hi; ow++)
                        d[ow * g->sw + off] += s[ow];
                }
            }
        }
    }
}

/* How the work is cut (workspace layout, see hg_ws_conv2d in shapes.c):
 * images run in parallel, one per thread at a time, each with its own
 * im2col slot cols[CKK, P] that stays in L2, and a single-threaded GEMM
 * writes straight into the image's output (no transposes). The filter
 * gradient sums fixed groups of images into partials [NG, O, CKK] that are
 * added in group order, so the result does not depend on the thread count.
 * With fewer images than threads, images run one after the other and the
 * BLAS threads each GEMM instead. */
static int conv_threads(const struct hg_conv_geom *g, const struct hg_kctx *ctx,
                        size_t reserved)
{
    size_t slot = (size_t)g->ckk * (size_t)g->p * sizeof(float);
    HG_CHECK(ctx->ws_bytes >= reserved + slot);
    int64_t slots = (int64_t)((ctx->ws_bytes - reserved) / slot);
    int64_t nt = ctx->nthreads > 0 ? ctx->nthreads : 1;
    if (nt > slots)
        nt = slots;
    if (nt > g->n)
        nt = 1; /* few images: let the BLAS use the threads */
    return (int)nt;
}

/* A 1x1 convolution without stride or padding reads x as its own im2col. */
static int conv_is_pointwise(const struct hg_conv_geom *g)
{
    return g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 &&
           g->ph == 0 && g->pw == 0;
}

/* (x[N,C,H,W], w[O,C,KH,KW]) -> y[N,O,OH,OW] */
HG_CPU_FN(conv2d)
{
    const struct hg_tview *tx = &a->in[0], *tw = &a->in[1];
    HG_CHECK(a->n_in == 2 && tx->dtype == HG_F32 && tw->dtype == HG_F32);
    const struct hg_conv_geom g = hg_conv_geom_make(&tx->shape, &a->out->shape, a->attr);
    HG_CHECK(tw->shape.dim[0] == g.o && tw->shape.dim[1] == g.c);
    const float *x = tx->data, *w = tw->data;
    float *y = a->out->data;
    float *ws = a->ctx->ws; /* [threads][CKK, P] */
    const int nt = conv_threads(&g, a->ctx, 0), pw = conv_is_pointwise(&g);
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
    for (int64_t n = 0; n < g.n; n++) {
        const float *xn = x + n * g.c * g.h * g.w; /* [C,H,W] */
        float *cols = ws + (int64_t)omp_get_thread_num() * g.ckk * g.p;
        if (pw)
            cols = (float *)xn;
        else
            im2col(&g, xn, 1, cols);
        hg_sgemm(0, 0, g.o, g.p, g.ckk, 1.0f, w, g.ckk, cols, g.p, 0.0f,
                 y + n * g.o * g.p, g.p);
    }
    return 0;
}

/* Images per group of the filter gradient: fixed by the shapes only. */
static int64_t conv_groups(const struct hg_conv_geom *g)
{
    int64_t ng = g->n < 16 ? g->n : 16;
    size_t part = (size_t)g->o * (size_t)g->ckk * sizeof(float);
    while (ng > 1 && (size_t)ng * part > ((size_t)32 << 20))
        ng /= 2;
    return ng < 1 ? 1 : ng;
}

/* (x[N,C,H,W], dy[N,O,OH,OW]) -> dw[O,C,KH,KW] = sum_n dy_n cols_n^T */
HG_CPU_FN(conv2d_bwd_filter)
{
    const struct hg_tview *tx = &a->in[0], *tdy = &a->in[1];
    HG_CHECK(a->n_in == 2 && tx->dtype == HG_F32 && tdy->dtype == HG_F32);
    const struct hg_conv_geom g = hg_conv_geom_make(&tx->shape, &tdy->shape, a->attr);
    HG_CHECK(hg_shape_numel(&a->out->shape) == g.o * g.ckk);
    const float *x = tx->data, *dy = tdy->data;
    float *dw = a->out->data; /* [O, CKK] */
    if (g.n == 0) {
        memset(dw, 0, (size_t)(g.o * g.ckk) * sizeof(float));
        return 0;
    }
    const int64_t ng = conv_groups(&g), od = g.o * g.ckk;
    float *part = a->ctx->ws; /* [NG, O, CKK] */
    float *slots = part + ng * od; /* [threads][CKK, P] */
    int nt = conv_threads(&g, a->ctx, (size_t)(ng * od) * sizeof(float));
    if (nt > ng)
        nt = (int)ng;
    const int pw = conv_is_pointwise(&g);
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
    for (int64_t gi = 0; gi < ng; gi++) {
        float *cols = slots + (int64_t)omp_get_thread_num() * g.ckk * g.p;
        for (int64_t n = g.n * gi / ng; n < g.n * (gi + 1) / ng; n++) {
            const float *xn = x + n * g.c * g.h * g.w;
            if (pw)
                cols = (float *)xn;
            else
                im2col(&g, xn, 1, cols);
            hg_sgemm(0, 1, g.o, g.ckk, g.p, 1.0f, dy + n * g.o * g.p, g.p,
                     cols, g.p, n == g.n * gi / ng ? 0.0f : 1.0f,
                     part + gi * od, g.ckk);
        }
    }
#pragma omp parallel for if (od * ng >= 32768) schedule(static)
    for (int64_t i = 0; i < od; i++) {
        float s = part[i];
        for (int64_t gi = 1; gi < ng; gi++)
            s += part[gi * od + i];
        dw[i] = s;
    }
    return 0;
}

/* (dy[N,O,OH,OW], w[O,C,KH,KW], x_ref[N,C,H,W]) -> dx[N,C,H,W] */
HG_CPU_FN(conv2d_bwd_data)
{
    const struct hg_tview *tdy = &a->in[0], *tw = &a->in[1];
    HG_CHECK(a->n_in == 3 && tdy->dtype == HG_F32 && tw->dtype == HG_F32);
    const struct hg_conv_geom g = hg_conv_geom_make(&a->out->shape, &tdy->shape, a->attr);
    HG_CHECK(tw->shape.dim[0] == g.o && tw->shape.dim[1] == g.c);
    const float *w = tw->data, *dy = tdy->data;
    float *dx = a->out->data;
    float *ws = a->ctx->ws; /* [threads][CKK, P] */
    const int nt = conv_threads(&g, a->ctx, 0), pw = conv_is_pointwise(&g);
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
    for (int64_t n = 0; n < g.n; n++) {
        float *dxn = dx + n * g.c * g.h * g.w; /* [C,H,W] */
        float *cols = pw ? dxn : ws + (int64_t)omp_get_thread_num() * g.ckk * g.p;
        hg_sgemm(1, 0, g.ckk, g.p, g.o, 1.0f, w, g.ckk, dy + n * g.o * g.p,
                 g.p, 0.0f, cols, g.p);
        if (!pw)
            col2im(&g, cols, 1, dxn);
    }
    return 0;
}

/* Index in the plane of the first maximum of output (oh, ow), as torch:
 * padding is -inf, NaN wins, ties keep the first in row-major order. */
static int64_t pool_argmax(const float *plane, int64_t h, int64_t w, int64_t oh,
                           int64_t ow, const union hg_attr *attr)
{
    int64_t h0 = oh * attr->pool.stride - attr->pool.pad;
    int64_t w0 = ow * attr->pool.stride - attr->pool.pad;
    int64_t h1 = h0 + attr->pool.kh, w1 = w0 + attr->pool.kw;
    if (h0 < 0) h0 = 0;
    if (w0 < 0) w0 = 0;
    if (h1 > h) h1 = h;
    if (w1 > w) w1 = w;
    int64_t best = h0 * w + w0;
    float mx = -INFINITY;
    for (int64_t ih = h0; ih < h1; ih++)
        for (int64_t iw = w0; iw < w1; iw++) {
            float v = plane[ih * w + iw];
            if (v > mx || isnan(v)) {
                mx = v;
                best = ih * w + iw;
            }
        }
    return best;
}


/* Non-overlapping square windows without padding (k x k, stride k): the
 * common case (max_pool2d(2)) gets loops without bounds checks. */
static int pool_tiled(const union hg_attr *at)
{
    return at->pool.kh == at->pool.kw && at->pool.stride == at->pool.kh &&
           at->pool.pad == 0;
}

/* Row-major first maximum of the k x k window at column j*k of rows r..r+k,
 * NaN winning, as pool_argmax; returns the offset from r. */
static inline int64_t tile_argmax(const float *r, int64_t w, int64_t k,
                                  int64_t j)
{
    int64_t best = j * k;
    float mx = -INFINITY;
    for (int64_t u = 0; u < k; u++)
        for (int64_t v = 0; v < k; v++) {
            float val = r[u * w + j * k + v];
            if (val > mx || isnan(val)) {
                mx = val;
                best = u * w + j * k + v;
            }
        }
    return best;
}

/* r: first of the k input rows [k, w]; y: one output row [ow] */
static void tile_row_max(const float *r, int64_t w, int64_t k, int64_t ow,
                         float *restrict y)
{
    if (k == 2) {
        const float *r1 = r + w;
        for (int64_t j = 0; j < ow; j++) {
            float a0 = r[2 * j], a1 = r[2 * j + 1], b0 = r1[2 * j], b1 = r1[2 * j + 1];
            if (isnan(a0) || isnan(a1) || isnan(b0) || isnan(b1)) {
                y[j] = r[tile_argmax(r, w, 2, j)];
                continue;
            }
            float m = a0 > a1 ? a0 : a1, n = b0 > b1 ? b0 : b1;
            y[j] = m > n ? m : n;
        }
        return;
    }
    for (int64_t j = 0; j < ow; j++)
        y[j] = r[tile_argmax(r, w, k, j)];
}

/* Any NaN among n floats (then the slow path keeps torch's NaN rule). */
HG_SIMD_DEF(static int, row_has_nan, (const float *x, int64_t n), {
    int nan = 0;
    for (int64_t i = 0; i < n; i++)
        nan |= x[i] != x[i];
    return nan;
})

/* 2x2 windows of rows r0, r1 without NaN: dy goes to the first position
 * holding the maximum, zeros elsewhere; selects, no branches. */
HG_SIMD_DEF(static void, pool2_bwd_row,
            (const float *restrict r0, const float *restrict r1,
             const float *restrict dy, float *restrict d0, float *restrict d1,
             int64_t ow), {
    for (int64_t j = 0; j < ow; j++) {
        float v0 = r0[2 * j], v1 = r0[2 * j + 1], v2 = r1[2 * j], v3 = r1[2 * j + 1];
        float m01 = v0 >= v1 ? v0 : v1, m23 = v2 >= v3 ? v2 : v3;
        float m = m01 >= m23 ? m01 : m23, g = dy[j];
        int e0 = v0 == m, e1 = !e0 & (v1 == m), e2 = !(e0 | e1) & (v2 == m);
        int e3 = !(e0 | e1 | e2);
        d0[2 * j] = e0 ? g : 0.0f;
        d0[2 * j + 1] = e1 ? g : 0.0f;
        d1[2 * j] = e2 ? g : 0.0f;
        d1[2 * j + 1] = e3 ? g : 0.0f;
    }
})

/* dy row [ow] -> the argmax positions of the k rows starting at dr */
static void tile_row_scatter(const float *r, int64_t w, int64_t k, int64_t ow,
                             const float *dy, float *dr)
{
    if (k == 2 && !HG_SIMD_PICK(row_has_nan)(r, 2 * w)) {
        HG_SIMD_PICK(pool2_bwd_row)(r, r + w, dy, dr, dr + w, ow);
        return;
    }
    for (int64_t j = 0; j < ow; j++)
        dr[tile_argmax(r, w, k, j)] = dy[j];
}

/* x[N,C,H,W] -> y[N,C,OH,OW] */
HG_CPU_FN(maxpool2d)
{
    const struct hg_tview *tx = &a->in[0];
    struct hg_tview *ty = a->out;
    HG_CHECK(a->n_in == 1 && tx->dtype == HG_F32 && tx->shape.ndim == 4);
    int64_t planes = tx->shape.dim[0] * tx->shape.dim[1];
    int64_t h = tx->shape.dim[2], w = tx->shape.dim[3];
    int64_t oh = ty->shape.dim[2], ow = ty->shape.dim[3];
    const float *x = tx->data;
    float *y = ty->data;
    if (pool_tiled(a->attr)) {
        const int64_t k = a->attr->pool.kh;
#pragma omp parallel for schedule(static)
        for (int64_t pl = 0; pl < planes; pl++) {
            const float *xp = x + pl * h * w;
            float *yp = y + pl * oh * ow;
            for (int64_t i = 0; i < oh; i++)
                tile_row_max(xp + i * k * w, w, k, ow, yp + i * ow);
        }
        return 0;
    }
#pragma omp parallel for schedule(static)
    for (int64_t pl = 0; pl < planes; pl++) {
        const float *xp = x + pl * h * w;
        float *yp = y + pl * oh * ow;
        for (int64_t i = 0; i < oh; i++)
            for (int64_t j = 0; j < ow; j++)
                yp[i * ow + j] = xp[pool_argmax(xp, h, w, i, j, a->attr)];
    }
    return 0;
}

/* (x[N,C,H,W], dy[N,C,OH,OW]) -> dx[N,C,H,W] */
HG_CPU_FN(maxpool2d_bwd)
{
    const int tiled = pool_tiled(a->attr);
    const int64_t k = a->attr->pool.kh;
    const struct hg_tview *tx = &a->in[0], *tdy = &a->in[1];
    HG_CHECK(a->n_in == 2 && tx->dtype == HG_F32 && tdy->dtype == HG_F32);
    HG_CHECK(tx->shape.ndim == 4 && tdy->shape.ndim == 4);
    int64_t planes = tx->shape.dim[0] * tx->shape.dim[1];
    int64_t h = tx->shape.dim[2], w = tx->shape.dim[3];
    int64_t oh = tdy->shape.dim[2], ow = tdy->shape.dim[3];
    const float *x = tx->data, *dy = tdy->data;
    float *dx = a->out->data;
#pragma omp parallel for schedule(static)
    for (int64_t pl = 0; pl < planes; pl++) {
        const float *xp = x + pl * h * w, *dyp = dy + pl * oh * ow;
        float *dxp = dx + pl * h * w;
        if (!tiled || oh * k != h || ow * k != w) /* else every x is written */
            memset(dxp, 0, (size_t)(h * w) * sizeof(float));
        if (tiled) { /* windows do not overlap: place, do not accumulate */
            for (int64_t i = 0; i < oh; i++)
                tile_row_scatter(xp + i * k * w, w, k, ow, dyp + i * ow,
                                 dxp + i * k * w);
            continue;
        }
        for (int64_t i = 0; i < oh; i++)
            for (int64_t j = 0; j < ow; j++)
                dxp[pool_argmax(xp, h, w, i, j, a->attr)] += dyp[i * ow + j];
    }
    return 0;
}
