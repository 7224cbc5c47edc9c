/* test_cuda_ops.c - every op's CUDA kernel against its CPU kernel on random
 * shapes and inputs (the case generators in tests/cuda_cases_[ab].h).
 * Outputs are poisoned with NaN before the CUDA run, so an element the
 * kernel never writes fails.  Tolerances are per case: 0 (bitwise) for
 * layout ops and the shared elementwise arithmetic, fp32 rounding for
 * reductions and GEMMs.  Also checks that a bad embedding id / loss target
 * is reported by hg_cuda_sync with the node's position.
 * SKIP (77) when built without CUDA or when no GPU is usable. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/hg_test.h"
#include "tests/cuda_cases.h"

#ifdef HG_HAVE_CUDA
#include "kernels/cuda/hg_cuda.h"
#include "tests/cuda_cases_a.h"
#include "tests/cuda_cases_b.h"

#define REPEATS 4 /* random shapes per generator */

static struct hg_cuda_ctx *cu;
static int n_cases, n_ops_seen[HG_OP_COUNT];

static size_t tv_bytes(const struct hg_shape *s, enum hg_dtype dt)
{
    return (size_t)hg_shape_numel(s) * hg_dtype_size(dt);
}

static void fill(struct cu_rng *r, void *p, const struct hg_shape *s, enum hg_dtype dt,
                 int64_t lo, int64_t hi, float scale)
{
    int64_t n = hg_shape_numel(s);
    if (dt == HG_I32) {
        int32_t *q = p;
        for (int64_t i = 0; i < n; i++)
            q[i] = (int32_t)cu_int(r, lo, hi);
    } else {
        float *q = p;
        if (scale == 0)
            scale = 1;
        for (int64_t i = 0; i < n; i++)
            q[i] = scale * (float)((double)(cu_next(r) >> 11) / 9007199254740992.0 * 2 - 1);
    }
}

/* max |got - ref| / max(max |ref|, tiny); NaN -> inf */
static double rel_err(const float *got, const float *ref, int64_t n, int64_t *worst)
{
    double d = 0, m = 0;
    *worst = -1;
    for (int64_t i = 0; i < n; i++) {
        double e = fabs((double)got[i] - ref[i]);
        if (isnan(got[i]) != isnan(ref[i]) || isnan(e))
            e = INFINITY;
        if (e > d) {
            d = e;
            *worst = i;
        }
        if (fabs(ref[i]) > m)
            m = fabs(ref[i]);
    }
    return d / (m > 1e-30 ? m : 1e-30);
}

static void compare(const struct cu_case *c, int which, const void *got,
                    const void *ref, const struct hg_shape *s, enum hg_dtype dt)
{
    char sh[64];
    hg_shape_str(s, sh, sizeof sh);
    int64_t n = hg_shape_numel(s);
    if (dt != HG_F32) {
        EXPECT(memcmp(got, ref, tv_bytes(s, dt)) == 0, "%s %s: tensor %d %s differs",
               hg_op_table[c->op].name, c->note, which, sh);
        return;
    }
    int64_t w;
    double e = rel_err(got, ref, n, &w);
    if (c->tol == 0)
        EXPECT(memcmp(got, ref, tv_bytes(s, dt)) == 0,
               "%s %s: tensor %d %s not bitwise equal (rel err %.3g at %lld: %.9g vs %.9g)",
               hg_op_table[c->op].name, c->note, which, sh, e, (long long)w,
               w >= 0 ? (double)((const float *)got)[w] : 0.0,
               w >= 0 ? (double)((const float *)ref)[w] : 0.0);
    else
        EXPECT(e <= c->tol, "%s %s: tensor %d %s rel err %.3g > %.3g (at %lld: %.9g vs %.9g)",
               hg_op_table[c->op].name, c->note, which, sh, e, c->tol, (long long)w,
               w >= 0 ? (double)((const float *)got)[w] : 0.0,
               w >= 0 ? (double)((const float *)ref)[w] : 0.0);
}

static void run_case(struct cu_rng *r, struct cu_case *c)
{
    const struct hg_op_info *oi = &hg_op_table[c->op];
    char err[512] = "";
    struct hg_shape out_s;
    enum hg_dtype out_dt = HG_F32;
    REQUIRE(oi->cuda != NULL, "%s: no CUDA kernel in the table", oi->name);
    int rc = oi->shape(c->in, c->dt, c->n_in, &c->attr, &out_s, &out_dt, err, sizeof err);
    REQUIRE(rc == 0, "%s %s: shape rule: %s", oi->name, c->note, err);
    int has_out = !(oi->flags & HG_OPF_NO_OUTPUT);
    n_cases++;
    n_ops_seen[c->op]++;

    void *h_in[HG_MAX_INPUTS], *h_cpu[HG_MAX_INPUTS], *d_in[HG_MAX_INPUTS];
    for (int k = 0; k < c->n_in; k++) {
        size_t b = tv_bytes(&c->in[k], c->dt[k]);
        h_in[k] = malloc(b ? b : 1);
        h_cpu[k] = malloc(b ? b : 1);
        REQUIRE(h_in[k] && h_cpu[k], "out of memory");
        fill(r, h_in[k], &c->in[k], c->dt[k], c->ilo[k], c->ihi[k], c->fscale[k]);
        memcpy(h_cpu[k], h_in[k], b);
        d_in[k] = hg_cuda_malloc(cu, b, err, sizeof err);
        REQUIRE(d_in[k], "%s", err);
        REQUIRE(hg_cuda_h2d(cu, d_in[k], h_in[k], b, err, sizeof err) == 0, "%s", err);
    }
    size_t ob = has_out ? tv_bytes(&out_s, out_dt) : 0;
    void *h_out = malloc(ob ? ob : 1), *h_got = malloc(ob ? ob : 1);
    void *d_out = hg_cuda_malloc(cu, ob, err, sizeof err);
    REQUIRE(h_out && h_got && d_out, "%s", err);
    REQUIRE(hg_cuda_memset(cu, d_out, 0xff, ob, err, sizeof err) == 0, "%s", err); /* NaN */

    size_t ws = 0, cws = 0;
    if (oi->workspace)
        ws = oi->workspace(c->in, c->n_in, &out_s, &c->attr, 1);
    if (oi->cuda_workspace)
        cws = oi->cuda_workspace(c->in, c->n_in, &out_s, &c->attr, 1);
    void *h_ws = malloc(ws ? ws : 1);
    size_t dws = ws > cws ? ws : cws;
    void *d_ws = hg_cuda_malloc(cu, dws, err, sizeof err);
    REQUIRE(h_ws && d_ws, "%s", err);

    struct hg_tview tin[HG_MAX_INPUTS], tout;
    char kerr[512] = "";
    struct hg_kctx ctx = {.nthreads = 1, .dev = NULL, .pos = 7,
                          .step = c->step ? c->step : 1,
                          .lr = c->lr, .grad_scale = c->grad_scale ? c->grad_scale : 1.0f,
                          .ws = h_ws, .ws_bytes = ws, .err = kerr, .errlen = sizeof kerr};
    struct hg_kargs a = {.in = tin, .n_in = c->n_in, .out = has_out ? &tout : NULL,
                         .attr = &c->attr, .ctx = &ctx};
    /* CPU */
    for (int k = 0; k < c->n_in; k++)
        tin[k] = (struct hg_tview){.data = h_cpu[k], .dtype = c->dt[k], .shape = c->in[k]};
    tout = (struct hg_tview){.data = h_out, .dtype = out_dt, .shape = out_s};
    int cpu_rc = oi->cpu(&a);
    char cpu_err[512];
    snprintf(cpu_err, sizeof cpu_err, "%s", kerr); /* kerr is reused below */
    /* CUDA */
    for (int k = 0; k < c->n_in; k++)
        tin[k].data = d_in[k];
    tout.data = d_out;
    ctx.dev = cu;
    ctx.ws = d_ws;
    ctx.ws_bytes = dws;
    kerr[0] = 0;
    int cu_rc = oi->cuda(&a);
    EXPECT(cu_rc == 0, "%s %s: CUDA kernel: %s", oi->name, c->note, kerr);
    int sync_rc = hg_cuda_sync(cu, err, sizeof err);
    EXPECT((cpu_rc == 0) == (sync_rc == 0), "%s %s: CPU rc %d, CUDA sync: %s",
           oi->name, c->note, cpu_rc, sync_rc ? err : "ok");
    if (cpu_rc == 0 && cu_rc == 0 && sync_rc == 0) {
        if (has_out) {
            REQUIRE(hg_cuda_d2h(cu, h_got, d_out, ob, err, sizeof err) == 0, "%s", err);
            REQUIRE(hg_cuda_sync(cu, err, sizeof err) == 0, "%s", err);
            compare(c, -1, h_got, h_out, &out_s, out_dt);
        } else { /* update ops: every input they change */
            for (int k = 0; k < c->n_in; k++) {
                size_t b = tv_bytes(&c->in[k], c->dt[k]);
                REQUIRE(hg_cuda_d2h(cu, h_in[k], d_in[k], b, err, sizeof err) == 0, "%s", err);
                REQUIRE(hg_cuda_sync(cu, err, sizeof err) == 0, "%s", err);
                compare(c, k, h_in[k], h_cpu[k], &c->in[k], c->dt[k]);
            }
        }
    } else if (cpu_rc != 0 && sync_rc != 0) {
        EXPECT(hg_cuda_error_pos(cu) == 7, "%s: error position %d, expected 7", oi->name,
               hg_cuda_error_pos(cu));
        /* the same message up to the op prefix */
        const char *k1 = strchr(cpu_err, ':'), *k2 = strchr(err, ':');
        EXPECT(k1 && k2 && strcmp(k1, k2) == 0, "%s: messages differ: CPU \"%s\", CUDA \"%s\"",
               oi->name, cpu_err, err);
    }
    for (int k = 0; k < c->n_in; k++) {
        free(h_in[k]);
        free(h_cpu[k]);
        hg_cuda_free(d_in[k]);
    }
    free(h_out);
    free(h_got);
    free(h_ws);
    hg_cuda_free(d_out);
    hg_cuda_free(d_ws);
}

static void run_gens(struct cu_rng *r, const cu_gen_fn *gens, int n)
{
    for (int g = 0; g < n; g++)
        for (int rep = 0; rep < REPEATS; rep++) {
            struct cu_case c;
            memset(&c, 0, sizeof c);
            gens[g](r, &c);
            run_case(r, &c);
        }
}
#endif

int main(void)
{
#ifndef HG_HAVE_CUDA
    (void)failures; /* only the CUDA cases count */
    printf("SKIP: built without CUDA (configure --with-cuda)\n");
    return 77;
#else
    char err[512] = "";
    int n = hg_cuda_device_count(err, sizeof err);
    REQUIRE(n >= 0, "%s", err);
    if (n == 0) {
        printf("SKIP: %s\n", err[0] ? err : "no CUDA device");
        return 77;
    }
    char name[128];
    hg_cuda_device_name(0, name, sizeof name);
    printf("device 0: %s\n", name);
    cu = hg_cuda_ctx_new(0, err, sizeof err);
    REQUIRE(cu, "%s", err);
    struct cu_rng r = {.s = 20261122};
    run_gens(&r, cu_gens_a, (int)(sizeof cu_gens_a / sizeof cu_gens_a[0]));
    run_gens(&r, cu_gens_b, (int)(sizeof cu_gens_b / sizeof cu_gens_b[0]));
    /* every op of the table has at least one case */
    for (int op = 0; op < HG_OP_COUNT; op++) /* comm ops have no kernel */
        EXPECT(n_ops_seen[op] > 0 || (hg_op_table[op].flags & HG_OPF_COMM),
               "op %s has no CUDA test case", hg_op_table[op].name);
    hg_cuda_ctx_free(cu);
    printf("%d cases, %d failures\n", n_cases, failures);
    if (failures == 0)
        printf("PASS\n");
    return failures ? 1 : 0;
#endif
}
