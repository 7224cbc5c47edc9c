/* blas.c - BLAS selection, thread counts and hg_sgemm.
 *
 * With HG_BLAS_DLOPEN=1 the BLAS is not linked: it is dlopen()ed on first use
 * (path: $HG_BLAS_LIB, else the configure-time HG_BLAS_LIB_PATH).  This lets
 * us set OPENBLAS_CORETYPE before OpenBLAS's ELF constructor reads it:
 * OpenBLAS 0.3.21 takes Zen 4/5 CPUs for Haswell (AVX2 kernels, about half
 * the GEMM speed); on a CPU with AVX-512 F/BW/VL/DQ we ask for SkylakeX.
 * With HG_BLAS_DLOPEN=0 cblas_sgemm is called directly (linked at build).
 */
#define _GNU_SOURCE /* setenv, strcasestr */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "kernels/ops-impl.h"

#ifndef HG_BLAS_DLOPEN
#define HG_BLAS_DLOPEN 0
#endif

enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112 };

#if HG_BLAS_DLOPEN
#include <dlfcn.h>
#ifndef HG_BLAS_LIB_PATH
#define HG_BLAS_LIB_PATH "libopenblas.so.0"
#endif
/* cblas_sgemm with the CBLAS enums passed as int (same ABI) and 32-bit
 * blasint, as Debian's OpenBLAS and netlib CBLAS build it. */
typedef void (*sgemm_fn)(int order, int ta, int tb, int m, int n, int k,
                         float alpha, const float *a, int lda, const float *b,
                         int ldb, float beta, float *c, int ldc);
#else
#include <cblas.h>
#endif
typedef void (*set_threads_fn)(int n);
typedef char *(*get_str_fn)(void);

static struct {
    pthread_once_t once;
    int ok;
    char err[512];
    char name[512];
#if HG_BLAS_DLOPEN
    void *handle;
    sgemm_fn sgemm;
#endif
    set_threads_fn set_threads; /* NULL: not OpenBLAS */
    get_str_fn corename, config;
    int nthreads;
} blas = {.once = PTHREAD_ONCE_INIT};

#if HG_BLAS_DLOPEN
static int has_avx512(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") &&
           __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512dq");
#else
    return 0;
#endif
}

static void blas_load(void)
{
    const char *path = getenv("HG_BLAS_LIB");
    const char *base;
    if (!path || !*path)
        path = HG_BLAS_LIB_PATH;
    base = strrchr(path, '/');
    base = base ? base + 1 : path;
    /* Must happen before dlopen: OpenBLAS reads it in its constructor. */
    if (strcasestr(base, "openblas") && !getenv("OPENBLAS_CORETYPE") &&
        has_avx512())
        setenv("OPENBLAS_CORETYPE", "SkylakeX", 0);
    blas.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!blas.handle) {
        const char *why = dlerror();
        snprintf(blas.err, sizeof blas.err, "blas: cannot dlopen %s: %s",
                 path, why ? why : "unknown error");
        return;
    }
    *(void **)&blas.sgemm = dlsym(blas.handle, "cblas_sgemm");
    if (!blas.sgemm) {
        snprintf(blas.err, sizeof blas.err, "blas: %s has no cblas_sgemm",
                 path);
        dlclose(blas.handle);
        blas.handle = NULL;
        return;
    }
    *(void **)&blas.set_threads = dlsym(blas.handle, "openblas_set_num_threads");
    *(void **)&blas.corename = dlsym(blas.handle, "openblas_get_corename");
    *(void **)&blas.config = dlsym(blas.handle, "openblas_get_config");
    if (blas.config) {
        const char *cfg = blas.config();
        const char *core = blas.corename ? blas.corename() : NULL;
        if (core && !strcasestr(cfg, core))
            snprintf(blas.name, sizeof blas.name, "%s %s (dlopen %s)", cfg,
                     core, path);
        else
            snprintf(blas.name, sizeof blas.name, "%s (dlopen %s)", cfg, path);
    } else {
        snprintf(blas.name, sizeof blas.name, "CBLAS (dlopen %s)", path);
    }
    blas.ok = 1;
}
#else
static void blas_load(void)
{
    snprintf(blas.name, sizeof blas.name, "CBLAS (linked)");
    blas.ok = 1;
}
#endif

static void blas_once(void)
{
    blas_load();
    if (blas.nthreads < 1)
        blas.nthreads = omp_get_max_threads();
    if (blas.ok && blas.set_threads)
        blas.set_threads(blas.nthreads);
}

int hg_kernels_init(char *err, size_t errlen)
{
    pthread_once(&blas.once, blas_once);
    if (!blas.ok)
        return hg_kerr(err, errlen, "%s", blas.err);
    return 0;
}

void hg_kernels_set_threads(int nthreads)
{
    if (nthreads < 1)
        nthreads = 1;
    pthread_once(&blas.once, blas_once);
    blas.nthreads = nthreads;
    omp_set_num_threads(nthreads);
    if (blas.ok && blas.set_threads)
        blas.set_threads(nthreads);
}

int hg_kernels_get_threads(void)
{
    pthread_once(&blas.once, blas_once);
    return blas.nthreads;
}

const char *hg_kernels_blas_name(void)
{
    pthread_once(&blas.once, blas_once);
    return blas.ok ? blas.name : blas.err;
}

void hg_sgemm(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
              float alpha, const float *a, int64_t lda, const float *b,
              int64_t ldb, float beta, float *c, int64_t ldc)
{
    pthread_once(&blas.once, blas_once);
    if (!blas.ok) {
        fprintf(stderr, "hg_sgemm: %s\n", blas.err);
        abort();
    }
    HG_CHECK(m >= 0 && n >= 0 && k >= 0);
    HG_CHECK(m <= INT_MAX && n <= INT_MAX && k <= INT_MAX);
    HG_CHECK(lda <= INT_MAX && ldb <= INT_MAX && ldc <= INT_MAX);
    if (m == 0 || n == 0)
        return;
    if (k == 0) { /* C = beta * C; some BLASes reject k == 0 */
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++)
                c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
        return;
    }
#if HG_BLAS_DLOPEN
    blas.sgemm(ROW_MAJOR, trans_a ? TRANS : NO_TRANS, trans_b ? TRANS : NO_TRANS,
               (int)m, (int)n, (int)k, alpha, a, (int)lda, b, (int)ldb, beta, c,
               (int)ldc);
#else
    (void)ROW_MAJOR; (void)NO_TRANS; (void)TRANS;
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k,
                alpha, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
#endif
}
