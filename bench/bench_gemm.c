/* bench_gemm.c - GFLOP/s of our MATMUL op (through hg_op_table, the path the
 * executor takes) against cblas_sgemm called directly on the same OpenBLAS
 * instance, same shapes, same threads (OpenBLAS's own threading for the
 * direct call; ours keeps OpenBLAS single-threaded and cuts C itself so
 * that the result does not depend on the thread count).  Prints one line
 * per shape:
 *   gemm <name> M K N ours_gflops <a> direct_gflops <b> ratio <a/b> maxdiff <d>
 * and at the end
 *   peak_gflops <p>   (the largest GFLOP/s seen, either path)
 * Each figure is the median over --reps repetitions; a repetition runs the
 * GEMM enough times to last about --min-ms; ours and direct alternate so
 * that load from other processes hits both alike.
 * The direct path dlopen()s the same library (HG_BLAS_LIB, else
 * HG_BLAS_LIB_PATH) after hg_kernels_init(), so the dynamic loader hands
 * back the instance already loaded, with the core type our library chose.
 * To see what the misdetected default core gives:
 *   HG_BLAS_CORETYPE=Haswell bench_gemm */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/hg_kernels.h"

#if HG_BLAS_DLOPEN
#include <dlfcn.h>
#ifndef HG_BLAS_LIB_PATH
#define HG_BLAS_LIB_PATH "libopenblas.so.0"
#endif
#else
#include <cblas.h>
#endif

typedef void (*sgemm_fn)(int order, int ta, int tb, int m, int n, int k,
                         float alpha, const float *a, int lda, const float *b,
                         int ldb, float beta, float *c, int ldc);

#if !HG_BLAS_DLOPEN
static void linked_sgemm(int order, int ta, int tb, int m, int n, int k,
                         float alpha, const float *a, int lda, const float *b,
                         int ldb, float beta, float *c, int ldc)
{
    cblas_sgemm((enum CBLAS_ORDER)order, (enum CBLAS_TRANSPOSE)ta,
                (enum CBLAS_TRANSPOSE)tb, m, n, k, alpha, a, lda, b, ldb,
                beta, c, ldc);
}
#endif

struct shape {
    const char *name;
    int64_t m, k, n;
};

static const struct shape shapes[] = {
    {"square256", 256, 256, 256},
    {"square512", 512, 512, 512},
    {"square1024", 1024, 1024, 1024},
    {"square2048", 2048, 2048, 2048},
    {"tf_proj", 2048, 512, 512},   /* q/k/v/out projections, B*T = 2048 */
    {"tf_fc1", 2048, 512, 2048},   /* fc1 */
    {"tf_fc2", 2048, 2048, 512},   /* fc2 */
    {"mnist_conv2", 64, 288, 36864}, /* O x C*3*3 x N*24*24 (batch 64) */
};

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y ? 1 : 0;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static float *alloc_rand(int64_t n, uint64_t seed)
{
    float *p = malloc((size_t)n * sizeof(float));
    if (!p) {
        fprintf(stderr, "bench_gemm: out of memory\n");
        exit(1);
    }
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int64_t i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        p[i] = (float)((s >> 40) * (1.0 / 16777216.0)) * 2.f - 1.f;
    }
    return p;
}

struct job {
    const struct shape *s;
    const float *a, *b;
    float *c;
    sgemm_fn direct;
    const struct hg_kargs *args;
};

/* openblas_set_num_threads of the loaded instance, or NULL */
static void (*blas_threads)(int);
static int threads_direct;

static void call(const struct job *j, int ours)
{
    if (blas_threads) /* a few ns: OpenBLAS only stores the number */
        blas_threads(ours ? 1 : threads_direct);
    if (ours) {
        if (hg_op_table[HG_OP_MATMUL].cpu(j->args) != 0) {
            fprintf(stderr, "bench_gemm: matmul: %s\n", j->args->ctx->err);
            exit(1);
        }
    } else {
        j->direct(101, 111, 111, (int)j->s->m, (int)j->s->n, (int)j->s->k,
                  1.0f, j->a, (int)j->s->k, j->b, (int)j->s->n, 0.0f, j->c,
                  (int)j->s->n);
    }
}

/* Seconds per call over a block of calls. */
static double time_block(const struct job *j, int ours, int calls)
{
    double t0 = hg_now();
    for (int i = 0; i < calls; i++)
        call(j, ours);
    return (hg_now() - t0) / calls;
}

int main(int argc, char **argv)
{
    int threads = 0, reps = 7;
    double min_ms = 100;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--min-ms") && i + 1 < argc)
            min_ms = atof(argv[++i]);
        else if (!strcmp(argv[i], "--shape") && i + 1 < argc)
            only = argv[++i];
        else {
            fprintf(stderr, "usage: bench_gemm [--threads N] [--reps N] "
                            "[--min-ms T] [--shape NAME]\n");
            return 2;
        }
    }
    if (reps < 1)
        reps = 1;
    char err[512];
    if (hg_kernels_init(err, sizeof(err)) != 0) {
        fprintf(stderr, "bench_gemm: %s\n", err);
        return 1;
    }
    if (threads > 0)
        hg_kernels_set_threads(threads);
    threads = hg_kernels_get_threads();

    sgemm_fn direct;
#if HG_BLAS_DLOPEN
    const char *path = getenv("HG_BLAS_LIB");
    if (!path || !*path)
        path = HG_BLAS_LIB_PATH;
    /* RTLD_NOLOAD: only the instance hg_kernels_init() loaded will do. */
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (!h) {
        fprintf(stderr, "bench_gemm: %s is not the loaded BLAS: %s\n", path,
                dlerror());
        return 1;
    }
    *(void **)&blas_threads = dlsym(h, "openblas_set_num_threads");
    threads_direct = threads;
    *(void **)&direct = dlsym(h, "cblas_sgemm");
    if (!direct) {
        fprintf(stderr, "bench_gemm: %s has no cblas_sgemm\n", path);
        return 1;
    }
#else
    direct = linked_sgemm;
#endif
    printf("blas %s threads %d\n", hg_kernels_blas_name(), threads);

    double peak = 0;
    int n_shapes = (int)(sizeof(shapes) / sizeof(shapes[0]));
    for (int si = 0; si < n_shapes; si++) {
        const struct shape *s = &shapes[si];
        if (only && strcmp(only, s->name))
            continue;
        float *A = alloc_rand(s->m * s->k, 1), *B = alloc_rand(s->k * s->n, 2);
        float *C1 = alloc_rand(s->m * s->n, 3), *C2 = alloc_rand(s->m * s->n, 4);
        struct hg_tview in[2] = {
            {A, HG_F32, {2, {s->m, s->k}}},
            {B, HG_F32, {2, {s->k, s->n}}},
        };
        struct hg_tview out = {C1, HG_F32, {2, {s->m, s->n}}};
        union hg_attr attr = {.mm = {.trans_a = 0, .trans_b = 0, .alpha = 1.f}};
        struct hg_kctx ctx = {.nthreads = threads, .step = 1, .err = err,
                              .errlen = sizeof(err)};
        struct hg_kargs args = {in, 2, &out, &attr, &ctx};
        struct job jo = {s, A, B, C1, direct, &args};
        struct job jd = {s, A, B, C2, direct, &args};

        /* Warm up both; size the blocks from the direct call's speed. */
        call(&jo, 1);
        call(&jd, 0);
        double t1 = time_block(&jd, 0, 1);
        int calls = (int)(min_ms * 1e-3 / (t1 > 1e-9 ? t1 : 1e-9));
        if (calls < 1)
            calls = 1;
        double maxdiff = 0;
        for (int64_t i = 0; i < s->m * s->n; i++) {
            double d = C1[i] - C2[i];
            d = d < 0 ? -d : d;
            if (d > maxdiff)
                maxdiff = d;
        }

        double flop = 2.0 * (double)s->m * (double)s->n * (double)s->k;
        double *go = malloc((size_t)reps * sizeof(double));
        double *gd = malloc((size_t)reps * sizeof(double));
        if (!go || !gd)
            return 1;
        for (int r = 0; r < reps; r++) {
            /* alternate which path goes first */
            if (r % 2) {
                gd[r] = flop / time_block(&jd, 0, calls) * 1e-9;
                go[r] = flop / time_block(&jo, 1, calls) * 1e-9;
            } else {
                go[r] = flop / time_block(&jo, 1, calls) * 1e-9;
                gd[r] = flop / time_block(&jd, 0, calls) * 1e-9;
            }
            if (go[r] > peak)
                peak = go[r];
            if (gd[r] > peak)
                peak = gd[r];
        }
        double mo = median(go, reps), md = median(gd, reps);
        printf("gemm %-12s %5lld %5lld %5lld ours_gflops %7.1f direct_gflops "
               "%7.1f ratio %.3f maxdiff %.2g calls %d\n",
               s->name, (long long)s->m, (long long)s->k, (long long)s->n, mo,
               md, mo / md, maxdiff, calls);
        fflush(stdout);
        free(go);
        free(gd);
        free(A);
        free(B);
        free(C1);
        free(C2);
    }
    printf("peak_gflops %.1f threads %d\n", peak, threads);
    return 0;
}
