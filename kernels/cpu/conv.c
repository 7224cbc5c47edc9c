/* conv.c - CONV2D (+ backward) and MAXPOOL2D (+ backward) on the CPU.
 *
 * Convolutions go through im2col over a chunk of nb images at once so that
 * each chunk is one large GEMM.  Workspace (see hg_ws_conv2d in shapes.c):
 *   cols [C*KH*KW, nb*OH*OW]  patches, column j = image*OH*OW + oh*OW + ow
 *   tmp  [O, nb*OH*OW]        GEMM result (fwd) or dy transposed (bwd)
 * nb is whatever ctx->ws_bytes holds, at most N, at least 1.
 */
#include <math.h>
#include <string.h>

#include "kernels/ops-impl.h"

struct geom {
    int64_t n, c, h, w;   /* x */
    int64_t o, kh, kw;    /* w */
    int64_t oh, ow;       /* y */
    int64_t sh, sw, ph, pw;
    int64_t p, ckk;       /* OH*OW, C*KH*KW */
};

static struct geom make_geom(const struct hg_shape *x, const struct hg_shape *y,
                             const union hg_attr *attr)
{
    struct geom g;
    HG_CHECK(x->ndim == 4 && y->ndim == 4 && x->dim[0] == y->dim[0]);
    g.n = x->dim[0]; g.c = x->dim[1]; g.h = x->dim[2]; g.w = x->dim[3];
    g.o = y->dim[1]; g.oh = y->dim[2]; g.ow = y->dim[3];
    g.kh = attr->conv.kh; g.kw = attr->conv.kw;
    g.sh = attr->conv.stride_h; g.sw = attr->conv.stride_w;
    g.ph = attr->conv.pad_h; g.pw = attr->conv.pad_w;
    g.p = g.oh * g.ow;
    g.ckk = g.c * g.kh * g.kw;
    HG_CHECK(g.sh > 0 && g.sw > 0);
    HG_CHECK(g.oh == (g.h + 2 * g.ph - g.kh) / g.sh + 1);
    HG_CHECK(g.ow == (g.w + 2 * g.pw - g.kw) / g.sw + 1);
    return g;
}

/* Images per chunk that fit in the workspace. */
static int64_t chunk_images(const struct geom *g, const struct hg_kctx *ctx)
{
    size_t per = (size_t)(g->ckk + g->o) * (size_t)g->p * sizeof(float);
    int64_t nb = per ? (int64_t)(ctx->ws_bytes / per) : g->n;
    HG_CHECK(ctx->ws != NULL || per == 0);
    HG_CHECK(nb >= 1);
    return nb < g->n ? nb : g->n;
}

/* Valid ow range [*lo, *hi) for kernel column kw: 0 <= ow*sw - pw + kw < W. */
static void ow_range(const struct geom *g, int64_t kw, int64_t *lo, int64_t *hi)
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
static void im2col(const struct geom *g, const float *x, int64_t cur,
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
static void col2im(const struct geom *g, const float *cols, int64_t cur,
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

/* src[cur,O,P] -> dst[O, cur*P] or back (to_images). */
static void shuffle(const struct geom *g, int64_t cur, float *img, float *mat,
                    int to_images)
{
    int64_t ld = cur * g->p;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < cur * g->o; i++) {
        int64_t nl = i / g->o, o = i % g->o;
        float *pi = img + i * g->p, *pm = mat + o * ld + nl * g->p;
        if (to_images)
            memcpy(pi, pm, (size_t)g->p * sizeof(float));
        else
            memcpy(pm, pi, (size_t)g->p * sizeof(float));
    }
}

/* (x[N,C,H,W], w[O,C,KH,KW]) -> y[N,O,OH,OW] */
HG_CPU_FN(conv2d)
{
    const struct hg_tview *tx = &a->in[0], *tw = &a->in[1];
    HG_CHECK(a->n_in == 2 && tx->dtype == HG_F32 && tw->dtype == HG_F32);
    struct geom g = make_geom(&tx->shape, &a->out->shape, a->attr);
    HG_CHECK(tw->shape.dim[0] == g.o && tw->shape.dim[1] == g.c);
    int64_t nb = chunk_images(&g, a->ctx);
    const float *x = tx->data, *w = tw->data;
    float *y = a->out->data;
    float *cols = a->ctx->ws;              /* [CKK, nb*P] */
    float *tmp = cols + g.ckk * nb * g.p;  /* [O, nb*P] */

    for (int64_t n0 = 0; n0 < g.n; n0 += nb) {
        int64_t cur = g.n - n0 < nb ? g.n - n0 : nb, ld = cur * g.p;
        float *yn = y + n0 * g.o * g.p;
        im2col(&g, x + n0 * g.c * g.h * g.w, cur, cols);
        hg_sgemm(0, 0, g.o, ld, g.ckk, 1.0f, w, g.ckk, cols, ld, 0.0f,
                 cur == 1 ? yn : tmp, ld);
        if (cur > 1)
            shuffle(&g, cur, yn, tmp, 1);
    }
    return 0;
}

/* (x[N,C,H,W], dy[N,O,OH,OW]) -> dw[O,C,KH,KW] = sum_n dy_n cols_n^T */
HG_CPU_FN(conv2d_bwd_filter)
{
    const struct hg_tview *tx = &a->in[0], *tdy = &a->in[1];
    HG_CHECK(a->n_in == 2 && tx->dtype == HG_F32 && tdy->dtype == HG_F32);
    struct geom g = make_geom(&tx->shape, &tdy->shape, a->attr);
    HG_CHECK(hg_shape_numel(&a->out->shape) == g.o * g.ckk);
    int64_t nb = chunk_images(&g, a->ctx);
    const float *x = tx->data;
    float *dy = tdy->data; /* only read */
    float *dw = a->out->data;
    float *cols = a->ctx->ws;              /* [CKK, nb*P] */
    float *dyt = cols + g.ckk * nb * g.p;  /* [O, nb*P] */

    if (g.n == 0)
        memset(dw, 0, (size_t)(g.o * g.ckk) * sizeof(float));
    for (int64_t n0 = 0; n0 < g.n; n0 += nb) {
        int64_t cur = g.n - n0 < nb ? g.n - n0 : nb, ld = cur * g.p;
        float *dyn = dy + n0 * g.o * g.p;
        im2col(&g, x + n0 * g.c * g.h * g.w, cur, cols);
        if (cur > 1)
            shuffle(&g, cur, dyn, dyt, 0);
        hg_sgemm(0, 1, g.o, g.ckk, ld, 1.0f, cur == 1 ? dyn : dyt, ld, cols,
                 ld, n0 == 0 ? 0.0f : 1.0f, dw, g.ckk);
    }
    return 0;
}

/* (dy[N,O,OH,OW], w[O,C,KH,KW], x_ref[N,C,H,W]) -> dx[N,C,H,W] */
HG_CPU_FN(conv2d_bwd_data)
{
    const struct hg_tview *tdy = &a->in[0], *tw = &a->in[1];
    HG_CHECK(a->n_in == 3 && tdy->dtype == HG_F32 && tw->dtype == HG_F32);
    struct geom g = make_geom(&a->out->shape, &tdy->shape, a->attr);
    HG_CHECK(tw->shape.dim[0] == g.o && tw->shape.dim[1] == g.c);
    int64_t nb = chunk_images(&g, a->ctx);
    const float *w = tw->data;
    float *dy = tdy->data; /* only read */
    float *dx = a->out->data;
    float *cols = a->ctx->ws;              /* [CKK, nb*P] */
    float *dyt = cols + g.ckk * nb * g.p;  /* [O, nb*P] */

    for (int64_t n0 = 0; n0 < g.n; n0 += nb) {
        int64_t cur = g.n - n0 < nb ? g.n - n0 : nb, ld = cur * g.p;
        float *dyn = dy + n0 * g.o * g.p;
        if (cur > 1)
            shuffle(&g, cur, dyn, dyt, 0);
        hg_sgemm(1, 0, g.ckk, ld, g.o, 1.0f, w, g.ckk, cur == 1 ? dyn : dyt,
                 ld, 0.0f, cols, ld);
        col2im(&g, cols, cur, dx + n0 * g.c * g.h * g.w);
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

/* dy row [ow] -> the argmax positions of the k rows starting at dr */
static void tile_row_scatter(const float *r, int64_t w, int64_t k, int64_t ow,
                             const float *dy, float *dr)
{
    if (k == 2) { /* first maximum in row-major order; the last NaN wins */
        const float *r1 = r + w;
        float *d1 = dr + w;
        for (int64_t j = 0; j < ow; j++) {
            float v[4] = {r[2 * j], r[2 * j + 1], r1[2 * j], r1[2 * j + 1]};
            int b = 0;
            for (int q = 1; q < 4; q++)
                if (v[q] > v[b] || isnan(v[q])) /* as pool_argmax */
                    b = q;
            float g = dy[j];
            dr[2 * j] = b == 0 ? g : 0.0f;
            dr[2 * j + 1] = b == 1 ? g : 0.0f;
            d1[2 * j] = b == 2 ? g : 0.0f;
            d1[2 * j + 1] = b == 3 ? g : 0.0f;
        }
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
