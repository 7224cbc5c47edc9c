/* conv.cu - CONV2D (+ both backward passes) and MAXPOOL2D (+ backward).
 *
 * Convolutions go through cuDNN when the build has it: NCHW fp32,
 * cross-correlation, groups 1, FMA math (no TF32, so results stay within
 * fp32 rounding of the CPU's).  The algorithm is the first of cuDNN's
 * heuristic ranking that is deterministic, runs without tensor-op math and
 * needs at most min(workspace given, WS_CAP) bytes.  The workspace rules
 * (hg_ws_cuda_conv2d...) make the same choice with a temporary handle and
 * no limit but WS_CAP, so a kernel given that workspace runs the algorithm
 * the rule sized.  Asking the heuristics costs about a millisecond of host
 * time, so choices are remembered per (device, direction, shapes, limit).
 * Without cuDNN, simple direct kernels (one thread per
 * output element, no workspace) keep the build and the results working.
 *
 * Pooling is ours: padding acts as -inf, NaN wins, ties go to the first
 * maximum in row-major window order (torch's max_pool2d).  The backward
 * gathers: each input element sums dy over the windows that chose it, in
 * row-major window order, as the CPU scatters them; no atomics.
 */
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "kernels/cuda/cuda-impl.h"
#include "kernels/shape-plan.h"

enum dir { FWD, BWD_DATA, BWD_FILTER };

#ifdef HG_HAVE_CUDNN

#define WS_CAP ((size_t)256 << 20) /* the most workspace an algorithm may take */

struct plan {
    cudnnTensorDescriptor_t x, y; /* x[N,C,H,W], y[N,O,OH,OW] */
    cudnnFilterDescriptor_t w;    /* w[O,C,KH,KW] */
    cudnnConvolutionDescriptor_t cv;
    int algo; /* cudnnConvolution{Fwd,BwdData,BwdFilter}Algo_t of the dir */
    size_t ws;
};

#define DNN(call)                                                              \
    do {                                                                       \
        if ((s = (call)) != CUDNN_STATUS_SUCCESS) {                            \
            *what = #call;                                                     \
            return s;                                                          \
        }                                                                      \
    } while (0)

static int fits_int(long long v) { return v >= 0 && v <= 0x7fffffffLL; }

/* The descriptors of g; plan_free frees whatever was created. */
static cudnnStatus_t plan_descs(struct plan *p, const struct hg_conv_geom *g,
                                const char **what)
{
    cudnnStatus_t s;
    HG_CHECK(fits_int(g->n) && fits_int(g->c) && fits_int(g->h) && fits_int(g->w));
    HG_CHECK(fits_int(g->o) && fits_int(g->kh) && fits_int(g->kw));
    HG_CHECK(fits_int(g->oh) && fits_int(g->ow));
    DNN(cudnnCreateTensorDescriptor(&p->x));
    DNN(cudnnCreateTensorDescriptor(&p->y));
    DNN(cudnnCreateFilterDescriptor(&p->w));
    DNN(cudnnCreateConvolutionDescriptor(&p->cv));
    DNN(cudnnSetTensor4dDescriptor(p->x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
                                   (int)g->n, (int)g->c, (int)g->h, (int)g->w));
    DNN(cudnnSetTensor4dDescriptor(p->y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
                                   (int)g->n, (int)g->o, (int)g->oh, (int)g->ow));
    DNN(cudnnSetFilter4dDescriptor(p->w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW,
                                   (int)g->o, (int)g->c, (int)g->kh, (int)g->kw));
    DNN(cudnnSetConvolution2dDescriptor(p->cv, (int)g->ph, (int)g->pw, (int)g->sh,
                                        (int)g->sw, 1, 1, CUDNN_CROSS_CORRELATION,
                                        CUDNN_DATA_FLOAT));
    DNN(cudnnSetConvolutionMathType(p->cv, CUDNN_FMA_MATH)); /* no TF32 */
    return CUDNN_STATUS_SUCCESS;
}

static void plan_free(struct plan *p)
{
    if (p->cv)
        cudnnDestroyConvolutionDescriptor(p->cv);
    if (p->w)
        cudnnDestroyFilterDescriptor(p->w);
    if (p->y)
        cudnnDestroyTensorDescriptor(p->y);
    if (p->x)
        cudnnDestroyTensorDescriptor(p->x);
}

/* A ranked algorithm we accept: it runs, gives the same bits every run and
 * computes in fp32 (tensor-op math would round the inputs to TF32). */
static int usable(cudnnStatus_t st, cudnnDeterminism_t det, cudnnMathType_t mt)
{
    return st == CUDNN_STATUS_SUCCESS && det == CUDNN_DETERMINISTIC &&
           (mt == CUDNN_FMA_MATH || mt == CUDNN_DEFAULT_MATH);
}

/* The first usable algorithm of cuDNN's ranking whose workspace is at most
 * limit; after the ranking, one that takes every shape (implicit GEMM
 * forward, ALGO_1 backward: deterministic, little or no workspace). */
static cudnnStatus_t plan_algo(cudnnHandle_t h, struct plan *p, enum dir d,
                               size_t limit, const char **what)
{
    cudnnStatus_t s;
    int n = 0;
    size_t b = 0;
    if (d == FWD) {
        cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        DNN(cudnnGetConvolutionForwardAlgorithm_v7(
            h, p->x, p->w, p->cv, p->y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &n, perf));
        for (int i = 0; i <= n; i++) {
            cudnnConvolutionFwdAlgo_t al = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
            if (i < n) {
                if (!usable(perf[i].status, perf[i].determinism, perf[i].mathType))
                    continue;
                al = perf[i].algo;
            }
            if (cudnnGetConvolutionForwardWorkspaceSize(h, p->x, p->w, p->cv, p->y,
                                                        al, &b) == CUDNN_STATUS_SUCCESS &&
                b <= limit) {
                p->algo = (int)al;
                p->ws = b;
                return CUDNN_STATUS_SUCCESS;
            }
        }
    } else if (d == BWD_DATA) {
        cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
        DNN(cudnnGetConvolutionBackwardDataAlgorithm_v7(
            h, p->w, p->y, p->cv, p->x, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &n, perf));
        for (int i = 0; i <= n; i++) {
            cudnnConvolutionBwdDataAlgo_t al = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
            if (i < n) {
                if (!usable(perf[i].status, perf[i].determinism, perf[i].mathType))
                    continue;
                al = perf[i].algo;
            }
            if (cudnnGetConvolutionBackwardDataWorkspaceSize(h, p->w, p->y, p->cv, p->x,
                                                             al, &b) == CUDNN_STATUS_SUCCESS &&
                b <= limit) {
                p->algo = (int)al;
                p->ws = b;
                return CUDNN_STATUS_SUCCESS;
            }
        }
    } else {
        cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
        DNN(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
            h, p->x, p->y, p->cv, p->w, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &n,
            perf));
        for (int i = 0; i <= n; i++) {
            /* not ALGO_0 / ALGO_3: they sum with atomics */
            cudnnConvolutionBwdFilterAlgo_t al = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1;
            if (i < n) {
                if (!usable(perf[i].status, perf[i].determinism, perf[i].mathType))
                    continue;
                al = perf[i].algo;
            }
            if (cudnnGetConvolutionBackwardFilterWorkspaceSize(h, p->x, p->y, p->cv,
                                                               p->w, al, &b) ==
                    CUDNN_STATUS_SUCCESS &&
                b <= limit) {
                p->algo = (int)al;
                p->ws = b;
                return CUDNN_STATUS_SUCCESS;
            }
        }
    }
    *what = "no deterministic fp32 algorithm fits the workspace";
    return CUDNN_STATUS_NOT_SUPPORTED;
}

/* Remembered algorithm choices: the heuristics are deterministic for a
 * device and shapes, so a choice never goes stale. */
#define NCACHE 64
struct choice {
    int used, device, dir;
    struct hg_conv_geom g;
    size_t limit;
    int algo;
    size_t ws;
};
static struct choice cache[NCACHE];
static int cache_next; /* the entry replaced next */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static int same_geom(const struct hg_conv_geom *a, const struct hg_conv_geom *b)
{
    return a->n == b->n && a->c == b->c && a->h == b->h && a->w == b->w &&
           a->o == b->o && a->kh == b->kh && a->kw == b->kw && a->oh == b->oh &&
           a->ow == b->ow && a->sh == b->sh && a->sw == b->sw && a->ph == b->ph &&
           a->pw == b->pw;
}

static int cache_get(int device, enum dir d, const struct hg_conv_geom *g, size_t limit,
                     struct plan *p)
{
    int hit = 0;
    pthread_mutex_lock(&cache_lock);
    for (int i = 0; i < NCACHE && !hit; i++) {
        const struct choice *c = &cache[i];
        if (c->used && c->device == device && c->dir == (int)d && c->limit == limit &&
            same_geom(&c->g, g)) {
            p->algo = c->algo;
            p->ws = c->ws;
            hit = 1;
        }
    }
    pthread_mutex_unlock(&cache_lock);
    return hit;
}

static void cache_put(int device, enum dir d, const struct hg_conv_geom *g, size_t limit,
                      const struct plan *p)
{
    pthread_mutex_lock(&cache_lock);
    struct choice *c = &cache[cache_next];
    cache_next = (cache_next + 1) % NCACHE;
    c->used = 1;
    c->device = device;
    c->dir = (int)d;
    c->g = *g;
    c->limit = limit;
    c->algo = p->algo;
    c->ws = p->ws;
    pthread_mutex_unlock(&cache_lock);
}

/* plan_algo through the cache */
static cudnnStatus_t plan_choose(cudnnHandle_t h, int device, struct plan *p,
                                 enum dir d, const struct hg_conv_geom *g, size_t limit,
                                 const char **what)
{
    if (cache_get(device, d, g, limit, p))
        return CUDNN_STATUS_SUCCESS;
    cudnnStatus_t s = plan_algo(h, p, d, limit, what);
    if (s == CUDNN_STATUS_SUCCESS)
        cache_put(device, d, g, limit, p);
    return s;
}

/* Workspace of the algorithm a kernel given unlimited workspace would pick
 * (0 when cuDNN cannot be asked: the kernel then needs an algorithm
 * without workspace, or reports why not). */
static size_t ws_rule(enum dir d, const struct hg_conv_geom *g)
{
    cudnnHandle_t h = NULL;
    struct plan p;
    const char *what = NULL;
    size_t ws = 0;
    int device = 0;
    memset(&p, 0, sizeof p);
    if (cudaGetDevice(&device) != cudaSuccess) {
        (void)cudaGetLastError(); /* not sticky: clear it */
        return 0;
    }
    if (cache_get(device, d, g, WS_CAP, &p))
        return p.ws;
    if (cudnnCreate(&h) == CUDNN_STATUS_SUCCESS &&
        plan_descs(&p, g, &what) == CUDNN_STATUS_SUCCESS &&
        plan_choose(h, device, &p, d, g, WS_CAP, &what) == CUDNN_STATUS_SUCCESS)
        ws = p.ws;
    plan_free(&p);
    if (h)
        cudnnDestroy(h);
    return ws;
}

/* One convolution pass on the context's handle and stream.  FWD: (x, w) ->
 * y; BWD_DATA: (dy, w) -> dx; BWD_FILTER: (x, dy) -> dw. */
static int conv_run(const struct hg_kargs *a, enum dir d, const struct hg_conv_geom *g,
                    const void *in0, const void *in1, void *out)
{
    struct hg_cuda_ctx *cu = hg_cu(a);
    const float one = 1.0f, zero = 0.0f;
    const size_t limit = a->ctx->ws_bytes < WS_CAP ? a->ctx->ws_bytes : WS_CAP;
    struct plan p;
    const char *what = NULL;
    memset(&p, 0, sizeof p);
    cudnnStatus_t s = plan_descs(&p, g, &what);
    if (s == CUDNN_STATUS_SUCCESS)
        s = plan_choose(cu->dnn, cu->device, &p, d, g, limit, &what);
    if (s == CUDNN_STATUS_SUCCESS) {
        void *ws = p.ws ? a->ctx->ws : NULL;
        if (d == FWD) {
            what = "cudnnConvolutionForward";
            s = cudnnConvolutionForward(cu->dnn, &one, p.x, in0, p.w, in1, p.cv,
                                        (cudnnConvolutionFwdAlgo_t)p.algo, ws, p.ws,
                                        &zero, p.y, out);
        } else if (d == BWD_DATA) {
            what = "cudnnConvolutionBackwardData";
            s = cudnnConvolutionBackwardData(cu->dnn, &one, p.w, in1, p.y, in0, p.cv,
                                             (cudnnConvolutionBwdDataAlgo_t)p.algo,
                                             ws, p.ws, &zero, p.x, out);
        } else {
            what = "cudnnConvolutionBackwardFilter";
            s = cudnnConvolutionBackwardFilter(cu->dnn, &one, p.x, in0, p.y, in1, p.cv,
                                               (cudnnConvolutionBwdFilterAlgo_t)p.algo,
                                               ws, p.ws, &zero, p.w, out);
        }
    }
    plan_free(&p);
    if (s != CUDNN_STATUS_SUCCESS)
        return hg_kerr(a->ctx->err, a->ctx->errlen, "%s: %s: cuDNN %s (workspace %zu bytes)",
                       d == FWD ? "conv2d" : d == BWD_DATA ? "conv2d_bwd_data"
                                                           : "conv2d_bwd_filter",
                       what, cudnnGetErrorString(s), a->ctx->ws_bytes);
    return 0;
}

#else /* no cuDNN: direct kernels */

/* y[N,O,OH,OW]: one thread per output, a sum over C, KH, KW */
__global__ static void conv_fwd_k(const float *x, const float *w, float *y,
                                  struct hg_conv_geom g)
{
    HG_CU_FOR(i, g.n * g.o * g.oh * g.ow) {
        long long ow = i % g.ow, oh = i / g.ow % g.oh, o = i / (g.ow * g.oh) % g.o,
                  n = i / (g.ow * g.oh * g.o);
        float s = 0.0f;
        for (long long c = 0; c < g.c; c++) {
            const float *xp = x + (n * g.c + c) * g.h * g.w;   /* [H,W] */
            const float *wp = w + (o * g.c + c) * g.kh * g.kw; /* [KH,KW] */
            for (long long kh = 0; kh < g.kh; kh++) {
                long long ih = oh * g.sh - g.ph + kh;
                if (ih < 0 || ih >= g.h)
                    continue;
                for (long long kw = 0; kw < g.kw; kw++) {
                    long long iw = ow * g.sw - g.pw + kw;
                    if (iw >= 0 && iw < g.w)
                        s += xp[ih * g.w + iw] * wp[kh * g.kw + kw];
                }
            }
        }
        y[i] = s;
    }
}

/* dx[N,C,H,W]: one thread per input, a sum over the (o, kh, kw) whose
 * window position lands on it */
__global__ static void conv_bwd_data_k(const float *dy, const float *w, float *dx,
                                       struct hg_conv_geom g)
{
    HG_CU_FOR(i, g.n * g.c * g.h * g.w) {
        long long iw = i % g.w, ih = i / g.w % g.h, c = i / (g.w * g.h) % g.c,
                  n = i / (g.w * g.h * g.c);
        float s = 0.0f;
        for (long long kh = 0; kh < g.kh; kh++) {
            long long th = ih + g.ph - kh; /* oh * sh */
            if (th < 0 || th % g.sh || th / g.sh >= g.oh)
                continue;
            for (long long kw = 0; kw < g.kw; kw++) {
                long long tw = iw + g.pw - kw; /* ow * sw */
                if (tw < 0 || tw % g.sw || tw / g.sw >= g.ow)
                    continue;
                long long p = th / g.sh * g.ow + tw / g.sw;
                for (long long o = 0; o < g.o; o++)
                    s += dy[(n * g.o + o) * g.oh * g.ow + p] *
                         w[((o * g.c + c) * g.kh + kh) * g.kw + kw];
            }
        }
        dx[i] = s;
    }
}

/* dw[O,C,KH,KW]: one thread per weight, a sum over N, OH, OW */
__global__ static void conv_bwd_filter_k(const float *x, const float *dy, float *dw,
                                         struct hg_conv_geom g)
{
    HG_CU_FOR(i, g.o * g.c * g.kh * g.kw) {
        long long kw = i % g.kw, kh = i / g.kw % g.kh, c = i / (g.kw * g.kh) % g.c,
                  o = i / (g.kw * g.kh * g.c);
        float s = 0.0f;
        for (long long n = 0; n < g.n; n++) {
            const float *xp = x + (n * g.c + c) * g.h * g.w;       /* [H,W] */
            const float *dp = dy + (n * g.o + o) * g.oh * g.ow;    /* [OH,OW] */
            for (long long oh = 0; oh < g.oh; oh++) {
                long long ih = oh * g.sh - g.ph + kh;
                if (ih < 0 || ih >= g.h)
                    continue;
                for (long long ow = 0; ow < g.ow; ow++) {
                    long long iw = ow * g.sw - g.pw + kw;
                    if (iw >= 0 && iw < g.w)
                        s += dp[oh * g.ow + ow] * xp[ih * g.w + iw];
                }
            }
        }
        dw[i] = s;
    }
}

static int conv_run(const struct hg_kargs *a, enum dir d, const struct hg_conv_geom *g,
                    const void *in0, const void *in1, void *out)
{
    cudaStream_t st = hg_cu(a)->stream;
    if (d == FWD)
        conv_fwd_k<<<hg_cu_blocks(a, g->n * g->o * g->oh * g->ow), HG_CU_THREADS, 0,
                     st>>>((const float *)in0, (const float *)in1, (float *)out, *g);
    else if (d == BWD_DATA)
        conv_bwd_data_k<<<hg_cu_blocks(a, g->n * g->c * g->h * g->w), HG_CU_THREADS,
                          0, st>>>((const float *)in0, (const float *)in1,
                                   (float *)out, *g);
    else
        conv_bwd_filter_k<<<hg_cu_blocks(a, g->o * g->c * g->kh * g->kw),
                            HG_CU_THREADS, 0, st>>>((const float *)in0,
                                                    (const float *)in1,
                                                    (float *)out, *g);
    HG_CU_LAUNCHED(a);
    return 0;
}

static size_t ws_rule(enum dir d, const struct hg_conv_geom *g)
{
    (void)d, (void)g;
    return 0;
}

#endif /* HG_HAVE_CUDNN */

/* (x[N,C,H,W], w[O,C,KH,KW]) -> y[N,O,OH,OW] */
extern "C" HG_CUDA_FN(conv2d)
{
    const struct hg_tview *tx = &a->in[0], *tw = &a->in[1];
    HG_CHECK(a->n_in == 2 && tx->dtype == HG_F32 && tw->dtype == HG_F32);
    const struct hg_conv_geom g = hg_conv_geom_make(&tx->shape, &a->out->shape, a->attr);
    HG_CHECK(tw->shape.dim[0] == g.o && tw->shape.dim[1] == g.c);
    if (hg_shape_numel(&a->out->shape) == 0)
        return 0;
    if (g.c == 0) { /* an empty sum */
        HG_CU_TRY(a, cudaMemsetAsync(a->out->data, 0,
                                     (size_t)hg_shape_numel(&a->out->shape) * sizeof(float),
                                     hg_cu(a)->stream));
        return 0;
    }
    return conv_run(a, FWD, &g, tx->data, tw->data, a->out->data);
}

/* (dy[N,O,OH,OW], w[O,C,KH,KW], x_ref[N,C,H,W]) -> dx[N,C,H,W] */
extern "C" HG_CUDA_FN(conv2d_bwd_data)
{
    const struct hg_tview *tdy = &a->in[0], *tw = &a->in[1];
    HG_CHECK(a->n_in == 3 && tdy->dtype == HG_F32 && tw->dtype == HG_F32);
    const struct hg_conv_geom g = hg_conv_geom_make(&a->out->shape, &tdy->shape, a->attr);
    HG_CHECK(tw->shape.dim[0] == g.o && tw->shape.dim[1] == g.c);
    if (hg_shape_numel(&a->out->shape) == 0)
        return 0;
    if (g.o == 0) { /* an empty sum */
        HG_CU_TRY(a, cudaMemsetAsync(a->out->data, 0,
                                     (size_t)hg_shape_numel(&a->out->shape) * sizeof(float),
                                     hg_cu(a)->stream));
        return 0;
    }
    return conv_run(a, BWD_DATA, &g, tdy->data, tw->data, a->out->data);
}

/* (x[N,C,H,W], dy[N,O,OH,OW]) -> dw[O,C,KH,KW] */
extern "C" HG_CUDA_FN(conv2d_bwd_filter)
{
    const struct hg_tview *tx = &a->in[0], *tdy = &a->in[1];
    HG_CHECK(a->n_in == 2 && tx->dtype == HG_F32 && tdy->dtype == HG_F32);
    const struct hg_conv_geom g = hg_conv_geom_make(&tx->shape, &tdy->shape, a->attr);
    HG_CHECK(hg_shape_numel(&a->out->shape) == g.o * g.c * g.kh * g.kw);
    if (hg_shape_numel(&a->out->shape) == 0)
        return 0;
    if (g.n == 0) { /* an empty sum */
        HG_CU_TRY(a, cudaMemsetAsync(a->out->data, 0,
                                     (size_t)hg_shape_numel(&a->out->shape) * sizeof(float),
                                     hg_cu(a)->stream));
        return 0;
    }
    return conv_run(a, BWD_FILTER, &g, tx->data, tdy->data, a->out->data);
}

/* Workspace rules: (x, w) -> y; (dy, w, x_ref) -> dx; (x, dy) -> dw */
extern "C" HG_WS_FN(cuda_conv2d)
{
    (void)n_in, (void)nthreads;
    const struct hg_conv_geom g = hg_conv_geom_make(&in[0], out, attr);
    return hg_shape_numel(out) && g.c ? ws_rule(FWD, &g) : 0;
}

extern "C" HG_WS_FN(cuda_conv2d_bwd_data)
{
    (void)n_in, (void)nthreads;
    const struct hg_conv_geom g = hg_conv_geom_make(out, &in[0], attr);
    return hg_shape_numel(out) && g.o ? ws_rule(BWD_DATA, &g) : 0;
}

extern "C" HG_WS_FN(cuda_conv2d_bwd_filter)
{
    (void)n_in, (void)nthreads;
    const struct hg_conv_geom g = hg_conv_geom_make(&in[0], &in[1], attr);
    return hg_shape_numel(out) && g.n ? ws_rule(BWD_FILTER, &g) : 0;
}

/* ---- max pooling ----------------------------------------------------------- */

struct pool {
    long long h, w, oh, ow; /* plane [H,W] -> [OH,OW] */
    int kh, kw, st, pad;
};

/* Index in the plane of the first maximum of output (oh, ow): padding is
 * -inf, NaN wins, ties keep the first in row-major order (pool_argmax in
 * cpu/conv.c, the same comparisons). */
__device__ static long long pool_argmax(const float *plane, const struct pool *p,
                                        long long oh, long long ow)
{
    long long h0 = oh * p->st - p->pad, w0 = ow * p->st - p->pad;
    long long h1 = h0 + p->kh, w1 = w0 + p->kw;
    if (h0 < 0) h0 = 0;
    if (w0 < 0) w0 = 0;
    if (h1 > p->h) h1 = p->h;
    if (w1 > p->w) w1 = p->w;
    long long best = h0 * p->w + w0;
    float mx = -INFINITY;
    for (long long ih = h0; ih < h1; ih++)
        for (long long iw = w0; iw < w1; iw++) {
            float v = plane[ih * p->w + iw];
            if (v > mx || isnan(v)) {
                mx = v;
                best = ih * p->w + iw;
            }
        }
    return best;
}

/* x[planes,H,W] -> y[planes,OH,OW], one thread per output */
__global__ static void maxpool_k(const float *x, float *y, long long planes,
                                 struct pool p)
{
    HG_CU_FOR(i, planes * p.oh * p.ow) {
        long long pl = i / (p.oh * p.ow), r = i % (p.oh * p.ow);
        const float *xp = x + pl * p.h * p.w;
        y[i] = xp[pool_argmax(xp, &p, r / p.ow, r % p.ow)];
    }
}

/* dx[planes,H,W], one thread per input: the windows covering (ih, iw) are
 * oh*st - pad <= ih < oh*st - pad + kh, likewise ow; the sum runs in
 * row-major window order from 0, the order of the CPU's scatter. */
__global__ static void maxpool_bwd_k(const float *x, const float *dy, float *dx,
                                     long long planes, struct pool p)
{
    HG_CU_FOR(i, planes * p.h * p.w) {
        long long pl = i / (p.h * p.w), r = i % (p.h * p.w);
        long long ih = r / p.w, iw = r % p.w;
        const float *xp = x + pl * p.h * p.w, *dyp = dy + pl * p.oh * p.ow;
        long long th = ih + p.pad - p.kh + 1, tw = iw + p.pad - p.kw + 1;
        long long oh0 = th <= 0 ? 0 : (th + p.st - 1) / p.st;
        long long ow0 = tw <= 0 ? 0 : (tw + p.st - 1) / p.st;
        long long oh1 = (ih + p.pad) / p.st, ow1 = (iw + p.pad) / p.st; /* last */
        if (oh1 >= p.oh) oh1 = p.oh - 1;
        if (ow1 >= p.ow) ow1 = p.ow - 1;
        float s = 0.0f;
        for (long long oh = oh0; oh <= oh1; oh++)
            for (long long ow = ow0; ow <= ow1; ow++)
                if (pool_argmax(xp, &p, oh, ow) == r)
                    s += dyp[oh * p.ow + ow];
        dx[i] = s;
    }
}

static struct pool make_pool(const struct hg_shape *x, const struct hg_shape *y,
                             const union hg_attr *attr)
{
    struct pool p;
    HG_CHECK(x->ndim == 4 && y->ndim == 4);
    HG_CHECK(x->dim[0] == y->dim[0] && x->dim[1] == y->dim[1]);
    p.h = x->dim[2]; p.w = x->dim[3]; p.oh = y->dim[2]; p.ow = y->dim[3];
    p.kh = attr->pool.kh; p.kw = attr->pool.kw;
    p.st = attr->pool.stride; p.pad = attr->pool.pad;
    HG_CHECK(p.st > 0 && p.pad >= 0);
    return p;
}

/* x[N,C,H,W] -> y[N,C,OH,OW] */
extern "C" HG_CUDA_FN(maxpool2d)
{
    const struct hg_tview *tx = &a->in[0];
    struct hg_tview *ty = a->out;
    HG_CHECK(a->n_in == 1 && tx->dtype == HG_F32 && tx->shape.ndim == 4);
    const struct pool p = make_pool(&tx->shape, &ty->shape, a->attr);
    const long long planes = tx->shape.dim[0] * tx->shape.dim[1];
    const long long n = planes * p.oh * p.ow;
    if (n == 0)
        return 0;
    maxpool_k<<<hg_cu_blocks(a, n), HG_CU_THREADS, 0, hg_cu(a)->stream>>>(
        (const float *)tx->data, (float *)ty->data, planes, p);
    HG_CU_LAUNCHED(a);
    return 0;
}

/* (x[N,C,H,W], dy[N,C,OH,OW]) -> dx[N,C,H,W] */
extern "C" HG_CUDA_FN(maxpool2d_bwd)
{
    const struct hg_tview *tx = &a->in[0], *tdy = &a->in[1];
    HG_CHECK(a->n_in == 2 && tx->dtype == HG_F32 && tdy->dtype == HG_F32);
    HG_CHECK(tx->shape.ndim == 4 && tdy->shape.ndim == 4);
    const struct pool p = make_pool(&tx->shape, &tdy->shape, a->attr);
    const long long planes = tx->shape.dim[0] * tx->shape.dim[1];
    const long long n = planes * p.h * p.w;
    if (n == 0)
        return 0;
    maxpool_bwd_k<<<hg_cu_blocks(a, n), HG_CU_THREADS, 0, hg_cu(a)->stream>>>(
        (const float *)tx->data, (const float *)tdy->data, (float *)a->out->data,
        planes, p);
    HG_CU_LAUNCHED(a);
    return 0;
}
