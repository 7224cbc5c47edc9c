/* scratch_k1.c - checks matmul, conv, pool, embedding and optimizer kernels
 * against naive loops on random shapes.  Exit status: number of failures. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/ops-impl.h"

static int fails;
static uint64_t rs = 12345;
static float frand(void) { return hg_rand_uniform(7, 0, rs++) * 2.0f - 1.0f; }
static int irand(int lo, int hi) { return lo + (int)(hg_rand_uniform(9, 1, rs++) * (float)(hi - lo + 1)); }
static float *rnd(int64_t n) { float *p = malloc((size_t)(n ? n : 1) * 4); for (int64_t i = 0; i < n; i++) p[i] = frand(); return p; }

static void cmp(const char *what, const float *got, const double *ref, int64_t n, double tol)
{
    double worst = 0; int64_t wi = 0;
    for (int64_t i = 0; i < n; i++) {
        double e = fabs(got[i] - ref[i]) / (1.0 + fabs(ref[i]));
        if (!(e <= worst)) { worst = e; wi = i; }
    }
    if (!(worst <= tol)) { fails++; printf("FAIL %s: err %.3g at %lld (%g vs %g)\n", what, worst, (long long)wi, got[wi], ref[wi]); }
}

static struct hg_shape S(int nd, ...) ;
#include <stdarg.h>
static struct hg_shape S(int nd, ...) { struct hg_shape s = {.ndim = nd}; va_list ap; va_start(ap, nd); for (int i = 0; i < nd; i++) s.dim[i] = va_arg(ap, int64_t); va_end(ap); return s; }
#define I(x) ((int64_t)(x))

static char errbuf[256];
static struct hg_kctx ctx = {.nthreads = 2, .err = errbuf, .errlen = sizeof errbuf};

static int run(hg_shape_fn shape, hg_kernel_fn fn, hg_ws_fn wsf, struct hg_tview *in, int n_in,
               const union hg_attr *attr, struct hg_tview *out, size_t ws_override)
{
    struct hg_shape sh[HG_MAX_INPUTS]; enum hg_dtype dt[HG_MAX_INPUTS];
    for (int i = 0; i < n_in; i++) { sh[i] = in[i].shape; dt[i] = in[i].dtype; }
    if (shape(sh, dt, n_in, attr, &out->shape, &out->dtype, errbuf, sizeof errbuf)) return -1;
    out->data = malloc((size_t)(hg_shape_numel(&out->shape) + 1) * 4);
    size_t ws = wsf ? wsf(sh, n_in, &out->shape, attr, 2) : 0;
    if (ws_override) ws = ws_override;
    ctx.ws = ws ? malloc(ws) : NULL; ctx.ws_bytes = ws;
    struct hg_kargs ka = {.in = in, .n_in = n_in, .out = out, .attr = attr, .ctx = &ctx};
    int rc = fn(&ka);
    free(ctx.ws); ctx.ws = NULL;
    return rc;
}

static void test_matmul(void)
{
    for (int t = 0; t < 40; t++) {
        int ta = t & 1, tb = (t >> 1) & 1, shared = (t >> 2) & 1;
        int64_t b1 = irand(1, 3), b2 = irand(1, 5), m = irand(1, 37), n = irand(1, 41), k = irand(1, 29);
        if (t % 10 == 9) { b1 = 4; b2 = 3; }
        struct hg_tview in[2] = {{.dtype = HG_F32}, {.dtype = HG_F32}}, out = {0};
        in[0].shape = ta ? S(4, b1, b2, k, m) : S(4, b1, b2, m, k);
        in[1].shape = shared ? (tb ? S(2, n, k) : S(2, k, n)) : (tb ? S(4, b1, b2, n, k) : S(4, b1, b2, k, n));
        in[0].data = rnd(hg_shape_numel(&in[0].shape)); in[1].data = rnd(hg_shape_numel(&in[1].shape));
        union hg_attr at = {.mm = {ta, tb, t % 3 == 0 ? 0.5f : 0.0f}};
        if (run(hg_shape_matmul, hg_cpu_matmul, NULL, in, 2, &at, &out, 0)) { fails++; printf("matmul: %s\n", errbuf); continue; }
        int64_t bt = b1 * b2; double *ref = calloc((size_t)(bt * m * n), 8);
        const float *A = in[0].data, *B = in[1].data; float al = at.mm.alpha == 0 ? 1 : at.mm.alpha;
        for (int64_t q = 0; q < bt; q++) for (int64_t i = 0; i < m; i++) for (int64_t j = 0; j < n; j++) {
            double s = 0; const float *Ab = A + q * m * k, *Bb = B + (shared ? 0 : q * k * n);
            for (int64_t l = 0; l < k; l++) s += (double)(ta ? Ab[l * m + i] : Ab[i * k + l]) * (tb ? Bb[j * k + l] : Bb[l * n + j]);
            ref[(q * m + i) * n + j] = al * s;
        }
        cmp("matmul", out.data, ref, bt * m * n, 1e-5);
        free(ref); free(in[0].data); free(in[1].data); free(out.data);
    }
    /* matmul_reduce */
    for (int t = 0; t < 5; t++) {
        int64_t r1 = irand(1, 4), r2 = irand(1, 17), k = irand(1, 33), n = irand(1, 19);
        struct hg_tview in[2] = {{.dtype = HG_F32, .shape = S(3, r1, r2, k)}, {.dtype = HG_F32, .shape = S(3, r1, r2, n)}}, out = {0};
        in[0].data = rnd(r1 * r2 * k); in[1].data = rnd(r1 * r2 * n);
        union hg_attr at = {0};
        if (run(hg_shape_matmul_reduce, hg_cpu_matmul_reduce, NULL, in, 2, &at, &out, 0)) { fails++; printf("%s\n", errbuf); continue; }
        double *ref = calloc((size_t)(k * n), 8); const float *X = in[0].data, *D = in[1].data;
        for (int64_t r = 0; r < r1 * r2; r++) for (int64_t i = 0; i < k; i++) for (int64_t j = 0; j < n; j++) ref[i * n + j] += (double)X[r * k + i] * D[r * n + j];
        cmp("matmul_reduce", out.data, ref, k * n, 1e-5);
        free(ref); free(in[0].data); free(in[1].data); free(out.data);
    }
    /* error message */
    struct hg_shape sh[2] = {S(2, I(2), I(3)), S(2, I(4), I(5))}; enum hg_dtype dt[2] = {HG_F32, HG_F32};
    struct hg_shape o; enum hg_dtype od; union hg_attr at = {0};
    if (hg_shape_matmul(sh, dt, 2, &at, &o, &od, errbuf, sizeof errbuf) != -1) fails++;
    printf("  msg: %s\n", errbuf);
}

static void test_conv(void)
{
    for (int t = 0; t < 24; t++) {
        int64_t N = t % 4 == 2 ? 3 : irand(1, 4), C = irand(1, 5), H = irand(3, 13), W = irand(3, 12), O = irand(1, 6);
        int kh = irand(1, 3), kw = irand(1, 4), sh = irand(1, 2), sw = irand(1, 3), ph = irand(0, 2), pw = irand(0, 2);
        if (t == 0) { kh = kw = 3; sh = sw = 1; ph = pw = 0; }
        if (H + 2 * ph < kh || W + 2 * pw < kw) continue;
        union hg_attr at = {.conv = {kh, kw, sh, sw, ph, pw}};
        struct hg_tview in[3] = {{.dtype = HG_F32, .shape = S(4, N, C, H, W)}, {.dtype = HG_F32, .shape = S(4, O, C, I(kh), I(kw))}}, y = {0};
        in[0].data = rnd(N * C * H * W); in[1].data = rnd(O * C * kh * kw);
        size_t small = (t & 1) ? 0 : 1; /* even t: workspace for one image only */
        struct hg_shape ysh; { struct hg_shape s2[2] = {in[0].shape, in[1].shape}; enum hg_dtype d2[2] = {HG_F32, HG_F32}; enum hg_dtype od;
            if (hg_shape_conv2d(s2, d2, 2, &at, &ysh, &od, errbuf, sizeof errbuf)) { fails++; printf("%s\n", errbuf); continue; } }
        int64_t OH = ysh.dim[2], OW = ysh.dim[3];
        size_t ws1 = small ? (size_t)((C * kh * kw + O) * OH * OW * 4) * (t % 4 == 2 ? 2 : 1) : 0;
        if (run(hg_shape_conv2d, hg_cpu_conv2d, hg_ws_conv2d, in, 2, &at, &y, ws1)) { fails++; printf("%s\n", errbuf); continue; }
        const float *X = in[0].data, *Wt = in[1].data;
        double *ref = calloc((size_t)(N * O * OH * OW), 8);
        for (int64_t n = 0; n < N; n++) for (int64_t o = 0; o < O; o++) for (int64_t i = 0; i < OH; i++) for (int64_t j = 0; j < OW; j++) {
            double s = 0;
            for (int64_t c = 0; c < C; c++) for (int a = 0; a < kh; a++) for (int b = 0; b < kw; b++) {
                int64_t ih = i * sh - ph + a, iw = j * sw - pw + b;
                if (ih >= 0 && ih < H && iw >= 0 && iw < W) s += (double)X[((n * C + c) * H + ih) * W + iw] * Wt[((o * C + c) * kh + a) * kw + b];
            }
            ref[((n * O + o) * OH + i) * OW + j] = s;
        }
        cmp("conv2d", y.data, ref, N * O * OH * OW, 1e-5);
        /* backward */
        float *dy = rnd(N * O * OH * OW);
        struct hg_tview bi[3] = {{.dtype = HG_F32, .shape = ysh, .data = dy}, in[1], in[0]}, dx = {0}, dw = {0};
        size_t wsb = small ? ws1 : 0;
        if (run(hg_shape_conv2d_bwd_data, hg_cpu_conv2d_bwd_data, hg_ws_conv2d_bwd_data, bi, 3, &at, &dx, wsb)) { fails++; printf("%s\n", errbuf); continue; }
        struct hg_tview fi[2] = {in[0], bi[0]};
        if (run(hg_shape_conv2d_bwd_filter, hg_cpu_conv2d_bwd_filter, hg_ws_conv2d_bwd_filter, fi, 2, &at, &dw, wsb)) { fails++; printf("%s\n", errbuf); continue; }
        double *rdx = calloc((size_t)(N * C * H * W), 8), *rdw = calloc((size_t)(O * C * kh * kw), 8);
        for (int64_t n = 0; n < N; n++) for (int64_t o = 0; o < O; o++) for (int64_t i = 0; i < OH; i++) for (int64_t j = 0; j < OW; j++)
            for (int64_t c = 0; c < C; c++) for (int a = 0; a < kh; a++) for (int b = 0; b < kw; b++) {
                int64_t ih = i * sh - ph + a, iw = j * sw - pw + b;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                double g = dy[((n * O + o) * OH + i) * OW + j];
                rdx[((n * C + c) * H + ih) * W + iw] += g * Wt[((o * C + c) * kh + a) * kw + b];
                rdw[((o * C + c) * kh + a) * kw + b] += g * X[((n * C + c) * H + ih) * W + iw];
            }
        cmp("conv2d_bwd_data", dx.data, rdx, N * C * H * W, 1e-5);
        cmp("conv2d_bwd_filter", dw.data, rdw, O * C * kh * kw, 1e-5);
        free(rdx); free(rdw); free(dy); free(dx.data); free(dw.data);
        free(ref); free(in[0].data); free(in[1].data); free(y.data);
    }
}

static void test_pool(void)
{
    for (int t = 0; t < 20; t++) {
        int64_t N = irand(1, 3), C = irand(1, 4), H = irand(2, 11), W = irand(2, 11);
        int k = irand(1, 3), s = irand(1, 3), p = irand(0, k / 2);
        if (H + 2 * p < k || W + 2 * p < k) continue;
        union hg_attr at = {.pool = {k, k, s, p}};
        struct hg_tview in[2] = {{.dtype = HG_F32, .shape = S(4, N, C, H, W)}}, y = {0}, dx = {0};
        float *X = rnd(N * C * H * W); in[0].data = X;
        if (t % 3 == 0) for (int64_t i = 0; i < N * C * H * W; i++) X[i] = (float)(irand(0, 2)); /* ties */
        if (run(hg_shape_maxpool2d, hg_cpu_maxpool2d, NULL, in, 1, &at, &y, 0)) { fails++; printf("%s\n", errbuf); continue; }
        int64_t OH = y.shape.dim[2], OW = y.shape.dim[3];
        float *dy = rnd(N * C * OH * OW);
        double *ref = calloc((size_t)(N * C * OH * OW), 8), *rdx = calloc((size_t)(N * C * H * W), 8);
        for (int64_t pl = 0; pl < N * C; pl++) for (int64_t i = 0; i < OH; i++) for (int64_t j = 0; j < OW; j++) {
            double m = -INFINITY; int64_t bi = -1;
            for (int a = 0; a < k; a++) for (int b = 0; b < k; b++) {
                int64_t ih = i * s - p + a, iw = j * s - p + b;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                if (bi < 0 || X[pl * H * W + ih * W + iw] > m) { m = X[pl * H * W + ih * W + iw]; bi = ih * W + iw; }
            }
            ref[(pl * OH + i) * OW + j] = m;
            rdx[pl * H * W + bi] += dy[(pl * OH + i) * OW + j];
        }
        cmp("maxpool2d", y.data, ref, N * C * OH * OW, 0);
        in[1] = (struct hg_tview){.dtype = HG_F32, .shape = y.shape, .data = dy};
        if (run(hg_shape_like_first, hg_cpu_maxpool2d_bwd, NULL, in, 2, &at, &dx, 0)) { fails++; continue; }
        cmp("maxpool2d_bwd", dx.data, rdx, N * C * H * W, 1e-6);
        free(X); free(dy); free(ref); free(rdx); free(y.data); free(dx.data);
    }
}

static void test_embedding(void)
{
    int64_t V = 37, D = 150, B = 5, T = 23;
    float *W = rnd(V * D); int32_t *ids = malloc(B * T * 4);
    for (int64_t i = 0; i < B * T; i++) ids[i] = irand(0, (int)V - 1);
    ids[3] = ids[7] = 5;
    struct hg_tview in[3] = {{.dtype = HG_F32, .shape = S(2, V, D), .data = W}, {.dtype = HG_I32, .shape = S(2, B, T), .data = ids}}, y = {0}, dw = {0};
    union hg_attr at = {0};
    if (run(hg_shape_embedding, hg_cpu_embedding, NULL, in, 2, &at, &y, 0)) { fails++; printf("%s\n", errbuf); return; }
    double *ref = calloc((size_t)(B * T * D), 8), *rdw = calloc((size_t)(V * D), 8);
    float *dy = rnd(B * T * D);
    for (int64_t i = 0; i < B * T; i++) for (int64_t d = 0; d < D; d++) { ref[i * D + d] = W[ids[i] * D + d]; rdw[ids[i] * D + d] += dy[i * D + d]; }
    cmp("embedding", y.data, ref, B * T * D, 0);
    struct hg_tview bi[3] = {in[1], {.dtype = HG_F32, .shape = S(3, B, T, D), .data = dy}, in[0]};
    if (run(hg_shape_like_third, hg_cpu_embedding_bwd, NULL, bi, 3, &at, &dw, 0) || dw.dtype != HG_F32) { fails++; printf("%s\n", errbuf); return; }
    cmp("embedding_bwd", dw.data, rdw, V * D, 1e-6);
    ids[40] = (int32_t)V;
    free(y.data); y.data = NULL;
    if (run(hg_shape_embedding, hg_cpu_embedding, NULL, in, 2, &at, &y, 0) != -1) fails++;
    printf("  msg: %s\n", errbuf);
    free(W); free(ids); free(ref); free(rdw); free(dy); free(y.data); free(dw.data);
}

static void test_optim(void)
{
    int64_t n = 1001;
    for (int variant = 0; variant < 4; variant++) {
        float *p = rnd(n), *g = rnd(n), *b = calloc((size_t)n, 4), *m = calloc((size_t)n, 4);
        double *rp = malloc((size_t)n * 8), *rb = calloc((size_t)n, 8), *rm = calloc((size_t)n, 8), *rv = calloc((size_t)n, 8);
        for (int64_t i = 0; i < n; i++) rp[i] = p[i];
        union hg_attr at;
        struct hg_tview out = {0};
        for (int step = 1; step <= 3; step++) {
            ctx.step = (uint64_t)step; ctx.lr = 0.01f; ctx.grad_scale = 0.5f;
            if (variant < 3) {
                at = (union hg_attr){.sgd = {variant ? 0.9f : 0.0f, 0.01f, variant == 2}};
                struct hg_tview in[3] = {{.dtype = HG_F32, .shape = S(1, n), .data = p}, {.dtype = HG_F32, .shape = S(1, n), .data = g}, {.dtype = HG_F32, .shape = S(1, n), .data = b}};
                if (run(hg_shape_update, hg_cpu_sgd_step, NULL, in, 3, &at, &out, 0)) fails++;
                for (int64_t i = 0; i < n; i++) {
                    double gg = g[i] * 0.5 + 0.01 * rp[i];
                    if (at.sgd.momentum != 0) { rb[i] = 0.9 * rb[i] + gg; gg = variant == 2 ? gg + 0.9 * rb[i] : rb[i]; }
                    rp[i] -= 0.01 * gg;
                }
            } else {
                at = (union hg_attr){.adam = {0.9f, 0.999f, 1e-8f, 0.1f}};
                struct hg_tview in[4] = {{.dtype = HG_F32, .shape = S(1, n), .data = p}, {.dtype = HG_F32, .shape = S(1, n), .data = g}, {.dtype = HG_F32, .shape = S(1, n), .data = b}, {.dtype = HG_F32, .shape = S(1, n), .data = m}};
                if (run(hg_shape_update, hg_cpu_adamw_step, NULL, in, 4, &at, &out, 0)) fails++;
                for (int64_t i = 0; i < n; i++) {
                    double gg = g[i] * 0.5; rp[i] *= 1 - 0.01 * 0.1;
                    rm[i] = 0.9 * rm[i] + 0.1 * gg; rv[i] = 0.999 * rv[i] + 0.001 * gg * gg;
                    rp[i] -= 0.01 * (rm[i] / (1 - pow(0.9, step))) / (sqrt(rv[i] / (1 - pow(0.999, step))) + 1e-8);
                }
            }
            free(out.data); out.data = NULL;
        }
        cmp(variant < 3 ? "sgd" : "adamw", p, rp, n, 1e-5);
        free(p); free(g); free(b); free(m); free(rp); free(rb); free(rm); free(rv);
    }
}

int main(void)
{
    if (hg_kernels_init(errbuf, sizeof errbuf)) { printf("%s\n", errbuf); return 1; }
    printf("%s\n", hg_kernels_blas_name());
    test_matmul(); test_conv(); test_pool(); test_embedding(); test_optim();
    printf("rand: %.8f %.8f %.8f\n", hg_rand_uniform(1, 1, 0), hg_rand_uniform(1, 1, 1), hg_rand_uniform(1, 2, 0));
    printf("%s (%d failures)\n", fails ? "FAILED" : "all ok", fails);
    return fails;
}
