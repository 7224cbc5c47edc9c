/* blas.c - BLAS selection, thread counts and hg_sgemm.
 *
 * With HG_BLAS_DLOPEN=1 the BLAS is not linked: it is dlopen()ed on first use
 * (path: $HG_BLAS_LIB, else the configure-time HG_BLAS_LIB_PATH).  This lets
 * us set OPENBLAS_CORETYPE before OpenBLAS's ELF constructor reads it:
 * OpenBLAS 0.3.21 takes Zen 4/5 CPUs for Haswell (AVX2 kernels, about half
 * the GEMM speed); on a CPU with AVX-512 F/BW/VL/DQ we ask for SkylakeX
 * (see blas_load for the override rules).
 * With HG_BLAS_DLOPEN=0 cblas_sgemm is called directly (linked at build).
 *
 * HG_ISA=avx2|baseline lowers the instruction set below the CPU's, for our
 * SIMD variants (hg_cpu_isa) and for OpenBLAS's core (Zen or Haswell for
 * avx2, Prescott for baseline), so that one machine runs, and CI tests,
 * the code paths of the smaller CPUs the project also runs on.
 *
 * hg_sgemm's result does not depend on the thread count: OpenBLAS is kept
 * single-threaded and the threads are ours, over pieces of C whose bounds
 * follow from the shape alone or fall where OpenBLAS's result is the same
 * with or without the cut (see gemm_rows).
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
    char brief[160]; /* library, version and core */
#if HG_BLAS_DLOPEN
    void *handle;
    sgemm_fn sgemm;
#endif
    set_threads_fn set_threads; /* NULL: not OpenBLAS */
    get_str_fn corename, config;
    int nthreads;
} blas = {.once = PTHREAD_ONCE_INIT};

/* The CPU's x86-64 level (4, 3 or 1) and the one our kernels use. */
static struct {
    pthread_once_t once;
    int cpu, use;
    char err[160];
} isa = {.once = PTHREAD_ONCE_INIT};

static const char *const isa_names[5] = {
    [1] = "baseline", [3] = "avx2", [4] = "avx512"};

static void isa_once(void)
{
    isa.cpu = 1;
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
        __builtin_cpu_supports("bmi2"))
        isa.cpu = 3;
    if (isa.cpu == 3 && __builtin_cpu_supports("avx512f") &&
        __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512cd"))
        isa.cpu = 4;
#endif
    isa.use = isa.cpu;
    const char *cap = getenv("HG_ISA");
    if (!cap || !*cap)
        return;
    int want = 0;
    for (int l = 1; l <= 4; l++)
        if (isa_names[l] && !strcmp(cap, isa_names[l]))
            want = l;
    if (!want)
        snprintf(isa.err, sizeof isa.err,
                 "HG_ISA=%.40s: expected avx512, avx2 or baseline", cap);
    else if (want > isa.cpu)
        snprintf(isa.err, sizeof isa.err,
                 "HG_ISA=%s: this CPU has only %s", cap, isa_names[isa.cpu]);
    else
        isa.use = want;
}

int hg_cpu_isa(void)
{
    /* HG_SIMD_PICK asks per row: after the first call, one relaxed load */
    static int cached; /* 0: not yet */
    int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (v)
        return v;
    pthread_once(&isa.once, isa_once);
    __atomic_store_n(&cached, isa.use, __ATOMIC_RELAXED);
    return isa.use;
}

const char *hg_kernels_isa_name(void)
{
    return isa_names[hg_cpu_isa()];
}

#if HG_BLAS_DLOPEN
/* OpenBLAS's core for an HG_ISA below the CPU's: what OpenBLAS picks on a
 * CPU of that level (an AVX2 AMD CPU is a Zen to it, an Intel one a
 * Haswell); NULL where the cap changes nothing. */
static const char *capped_core(void)
{
    pthread_once(&isa.once, isa_once);
    if (isa.use >= isa.cpu)
        return NULL;
    if (isa.use == 1)
        return "Prescott";
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_is("amd"))
        return "Zen";
#endif
    return "Haswell";
}

static void blas_load(void)
{
    const char *path = getenv("HG_BLAS_LIB");
    const char *base;
    if (!path || !*path)
        path = HG_BLAS_LIB_PATH;
    base = strrchr(path, '/');
    base = base ? base + 1 : path;
    /* Must happen before dlopen: OpenBLAS reads it in its constructor.
     * HG_BLAS_CORETYPE forces a core. Otherwise, on an AVX-512 CPU, a core
     * without AVX-512 (unset, or set to Haswell by a site profile that copied
     * OpenBLAS's own misdetection) is replaced by SkylakeX: the fast choice
     * is the default, and the name says what was overridden. */
    const char *force = getenv("HG_BLAS_CORETYPE");
    const char *was = getenv("OPENBLAS_CORETYPE");
    char overrode[64] = "";
    if (!force || !*force)
        force = capped_core();
    if (strcasestr(base, "openblas")) {
        if (force && *force) {
            setenv("OPENBLAS_CORETYPE", force, 1);
        } else if (hg_cpu_isa() == 4 &&
                   (!was || !(strcasestr(was, "skylakex") ||
                              strcasestr(was, "cooperlake") ||
                              strcasestr(was, "sapphirerapids")))) {
            if (was)
                snprintf(overrode, sizeof overrode, ", was %.40s", was);
            setenv("OPENBLAS_CORETYPE", "SkylakeX", 1);
        }
    }
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
        /* "OpenBLAS 0.3.21 NO_LAPACKE ... Zen MAX_THREADS=64": the first two
         * words, then the core */
        int lib = (int)strcspn(cfg, " ");
        lib += cfg[lib] ? 1 + (int)strcspn(cfg + lib + 1, " ") : 0;
        snprintf(blas.brief, sizeof blas.brief, "%.*s (core %s%s)", lib, cfg,
                 core ? core : "?", overrode);
        if (core && !strcasestr(cfg, core))
            snprintf(blas.name, sizeof blas.name, "%s, core %s%s (dlopen %s)",
                     cfg, core, overrode, path);
        else
            snprintf(blas.name, sizeof blas.name, "%s%s (dlopen %s)", cfg,
                     overrode, path);
    } else {
        snprintf(blas.name, sizeof blas.name, "CBLAS (dlopen %s)", path);
        snprintf(blas.brief, sizeof blas.brief, "CBLAS (%s)", base);
    }
    blas.ok = 1;
}
#else
static void blas_load(void)
{
    snprintf(blas.name, sizeof blas.name, "CBLAS (linked)");
    snprintf(blas.brief, sizeof blas.brief, "CBLAS (linked)");
    blas.ok = 1;
}
#endif

static void blas_once(void)
{
    blas_load();
    if (blas.nthreads < 1)
        blas.nthreads = omp_get_max_threads();
    /* single-threaded for good: hg_sgemm's threads are its own */
    if (blas.ok && blas.set_threads)
        blas.set_threads(1);
}

int hg_kernels_init(char *err, size_t errlen)
{
    pthread_once(&isa.once, isa_once);
    if (isa.err[0])
        return hg_kerr(err, errlen, "%s", isa.err);
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

const char *hg_kernels_blas_brief(void)
{
    pthread_once(&blas.once, blas_once);
    return blas.ok ? blas.brief : blas.err;
}

/* One single-threaded BLAS call: C[m,n] = alpha op(A) op(B) + beta C. */
static void gemm1(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                  float alpha, const float *a, int64_t lda, const float *b,
                  int64_t ldb, float beta, float *c, int64_t ldc)
{
    if (m == 0 || n == 0)
        return;
    /* OpenBLAS's OpenMP build takes omp_get_max_threads() threads at every
     * call outside a parallel region, whatever openblas_set_num_threads
     * said: one here, so that a call's bits never follow the thread count
     * (hg_sgemm_serial from a lone (b,h) pair differed at 2 threads on
     * Haswell's kernels) */
    const int outer = !omp_in_parallel() ? omp_get_max_threads() : 1;
    if (outer > 1)
        omp_set_num_threads(1);
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
    if (outer > 1)
        omp_set_num_threads(outer);
}

/* Why the pieces are what they are.  OpenBLAS's threaded GEMM cuts C by
 * the thread count, and its micro-kernels round differently at the edges
 * of a cut (Haswell/Zen: any column cut, and row cuts not on a multiple of
 * 24), and on SkylakeX weight-gradient GEMMs (K in the hundreds) differed
 * too: so C changed with the thread count (1.6e-4 in bert's parameters
 * after 12 Adam updates).  Here every BLAS call is
 * single-threaded, and
 *  - rows: each thread takes a run of whole GEMM_ROW_ALIGN-row units; a
 *    cut on such a multiple leaves every element's arithmetic as it was on
 *    the cores we run (SkylakeX: any cut; Haswell, Zen: multiples of 24),
 *    which tests/test_ops checks bitwise for 1-4 threads on whatever BLAS
 *    and core is loaded;
 *  - few rows and many columns (conv2d's O x pixels, a vocabulary
 *    projection): column pieces whose width follows from n alone, the same
 *    pieces with any thread count, one thread included. */
#define GEMM_ROW_ALIGN 48          /* a multiple of 16 and 24 */
#define GEMM_COL_PIECE 256         /* columns per piece, at least */
#define GEMM_SERIAL_MNK 262144.0   /* below this m*n*k: one call (OpenBLAS's own threshold) */

/* What hg_sgemm and hg_sgemm_serial check first: the BLAS loaded, the
 * sizes in range; 1 when nothing is left to multiply (m or n zero, or C =
 * beta * C for k zero: some BLASes reject k == 0). */
static int gemm_trivial(const char *who, int64_t m, int64_t n, int64_t k, float beta,
                        float *c, int64_t lda, int64_t ldb, int64_t ldc)
{
    pthread_once(&blas.once, blas_once);
    if (!blas.ok) {
        fprintf(stderr, "%s: %s\n", who, blas.err);
        abort();
    }
    HG_CHECK(m >= 0 && n >= 0 && k >= 0);
    HG_CHECK(m <= INT_MAX && n <= INT_MAX && k <= INT_MAX);
    HG_CHECK(lda <= INT_MAX && ldb <= INT_MAX && ldc <= INT_MAX);
    if (m == 0 || n == 0)
        return 1;
    if (k == 0) {
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++)
                c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
        return 1;
    }
    return 0;
}

void hg_sgemm_serial(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                     float alpha, const float *a, int64_t lda, const float *b,
                     int64_t ldb, float beta, float *c, int64_t ldc)
{
    if (!gemm_trivial("hg_sgemm_serial", m, n, k, beta, c, lda, ldb, ldc))
        gemm1(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void hg_sgemm(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
              float alpha, const float *a, int64_t lda, const float *b,
              int64_t ldb, float beta, float *c, int64_t ldc)
{
    if (gemm_trivial("hg_sgemm", m, n, k, beta, c, lda, ldb, ldc))
        return;
    if ((double)m * (double)n * (double)k < GEMM_SERIAL_MNK) {
        gemm1(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        return;
    }
    /* inside a parallel region (per-head attention GEMMs): one thread */
    const int nth = omp_in_parallel() ? 1 : blas.nthreads;
    if (m >= 2 * GEMM_ROW_ALIGN || n < 2 * GEMM_COL_PIECE) {
        /* whole units, the rows past the last one joining it: a call of
         * a few rows alone takes another path in OpenBLAS (a 6-row cut
         * of 150 rows gave other bits at 4 threads than at 2) */
        const int64_t units = m / GEMM_ROW_ALIGN > 0 ? m / GEMM_ROW_ALIGN : 1;
        const int parts = units < nth ? (int)units : nth;
#pragma omp parallel for if (parts > 1) num_threads(parts) schedule(static)
        for (int p = 0; p < parts; p++) {
            int64_t r0 = units * p / parts * GEMM_ROW_ALIGN;
            int64_t r1 = p == parts - 1 ? m : units * (p + 1) / parts * GEMM_ROW_ALIGN;
            /* A's rows r0.. start at row r0 of A, or column r0 of A^T */
            gemm1(trans_a, trans_b, r1 - r0, n, k, alpha,
                  a + (trans_a ? r0 : r0 * lda), lda, b, ldb, beta,
                  c + r0 * ldc, ldc);
        }
        return;
    }
    /* pieces of at least GEMM_COL_PIECE columns, at most 32 of them */
    int64_t w = (n + 31) / 32;
    w = w < GEMM_COL_PIECE ? GEMM_COL_PIECE : (w + 63) / 64 * 64;
    const int64_t pieces = (n + w - 1) / w;
#pragma omp parallel for if (nth > 1 && pieces > 1) num_threads(nth) schedule(static)
    for (int64_t p = 0; p < pieces; p++) {
        const int64_t c0 = p * w, cw = n - c0 < w ? n - c0 : w;
        /* B's columns c0.. start at column c0 of B, or row c0 of B^T */
        gemm1(trans_a, trans_b, m, cw, k, alpha, a, lda,
              b + (trans_b ? c0 * ldb : c0), ldb, beta, c + c0, ldc);
    }
}
