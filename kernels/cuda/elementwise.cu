/* elementwise.cu - broadcasting arithmetic, SUM_TO, activations and dropout
 * (CUDA kernels, f32; semantics in kernels/ops-impl.h, reference
 * kernels/cpu/elementwise.c).
 *
 * Broadcasting uses the CPU's plan (kernels/shape-plan.h: hg_bplan).  The
 * number of merged axes is a template argument, so the common cases cost
 * no more index arithmetic than they need: same shape and a scalar operand
 * are one axis (no division), bias [D] + [N,T,D] is two, [O,1,1] +
 * [N,O,H,W] three.
 *
 * Every result is the CPU's bits: +,-,* and the shared ew-math.h formulas
 * (kernels/cuda is built with --fmad=false), SUM_TO in the CPU's order and
 * precision (reduce-impl.h) except long kept columns (bias gradients), which
 * are summed in fixed chunks (deterministic, not the CPU's bits); the activations' erff/expf/tanhf are CUDA's,
 * within 2 ulp of glibc's.
 */
#include <string.h>

#include "kernels/cuda/reduce-impl.h"
#include "kernels/shape-plan.h"

enum bop { BOP_ADD, BOP_SUB, BOP_MUL };

template <enum bop OP>
__device__ static inline float bop_apply(float x, float y)
{
    switch (OP) {
    case BOP_ADD: return x + y;
    case BOP_SUB: return x - y;
    default: return x * y;
    }
}

/* o[i] = a[offset_a(i)] op b[offset_b(i)] over ND merged axes.  o may be a
 * or b (each element is read before it is written, by its own thread). */
template <int ND, enum bop OP>
__global__ static void binary_kernel(const float *pa, const float *pb, float *po,
                                     long long n, struct hg_bplan p)
{
    HG_CU_FOR(i, n) {
        long long oa = 0, ob = 0, r = i;
#pragma unroll
        for (int k = ND - 1; k > 0; k--) {
            const long long ik = r % p.dim[k];
            r /= p.dim[k];
            oa += ik * p.sa[k];
            ob += ik * p.sb[k];
        }
        oa += r * p.sa[0]; /* r < dim[0] */
        ob += r * p.sb[0];
        po[i] = bop_apply<OP>(pa[oa], pb[ob]);
    }
}

/* The same over float4 units, 32-bit indices: when both operands run
 * along the innermost axis (same shapes, a bias over rows), its length is a
 * multiple of 4 and every pointer 16-byte aligned.  The plan is in units
 * (binary's caller divides). */
template <int ND, enum bop OP>
__global__ static void binary4_kernel(const float4 *pa, const float4 *pb, float4 *po,
                                      unsigned n, struct hg_bplan p)
{
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += gridDim.x * blockDim.x) {
        unsigned oa = 0, ob = 0, r = i;
#pragma unroll
        for (int k = ND - 1; k > 0; k--) {
            const unsigned d = (unsigned)p.dim[k], ik = r % d;
            r /= d;
            oa += ik * (unsigned)p.sa[k];
            ob += ik * (unsigned)p.sb[k];
        }
        oa += r * (unsigned)p.sa[0];
        ob += r * (unsigned)p.sb[0];
        const float4 x = pa[oa], y = pb[ob];
        po[i] = make_float4(bop_apply<OP>(x.x, y.x), bop_apply<OP>(x.y, y.y),
                            bop_apply<OP>(x.z, y.z), bop_apply<OP>(x.w, y.w));
    }
}

/* binary4_kernel's conditions; p becomes the plan in float4 units */
static int binary4_plan(struct hg_bplan *p, const void *pa, const void *pb, void *po,
                        long long n)
{
    const int l = p->nd - 1;
    if (p->sa[l] != 1 || p->sb[l] != 1 || p->dim[l] % 4 != 0 || n / 4 >= 0x7fffffffLL ||
        ((uintptr_t)pa | (uintptr_t)pb | (uintptr_t)po) % 16 != 0)
        return 0;
    p->dim[l] /= 4;
    for (int k = 0; k < l; k++) { /* multiples of the innermost run */
        if (p->sa[k] % 4 != 0 || p->sb[k] % 4 != 0)
            return 0;
        p->sa[k] /= 4;
        p->sb[k] /= 4;
    }
    return 1;
}

template <enum bop OP>
static int binary(const struct hg_kargs *a)
{
    const struct hg_tview *va = &a->in[0], *vb = &a->in[1];
    const float *pa = (const float *)va->data; /* broadcastable to out */
    const float *pb = (const float *)vb->data; /* broadcastable to out */
    float *po = (float *)a->out->data;         /* out: broadcast shape */
    const long long n = hg_shape_numel(&a->out->shape);
    struct hg_bplan p;

    HG_CHECK(va->dtype == HG_F32 && vb->dtype == HG_F32);
    if (n == 0)
        return 0;
    hg_bplan_make(&p, &va->shape, &vb->shape, &a->out->shape);
    cudaStream_t st = hg_cu(a)->stream;
    static_assert(HG_MAX_DIMS == 6, "one case per rank below");
    struct hg_bplan p4 = p;
    if (p.nd <= 3 && binary4_plan(&p4, pa, pb, po, n)) {
        const float4 *a4 = (const float4 *)pa, *b4 = (const float4 *)pb;
        float4 *o4 = (float4 *)po;
        const unsigned n4 = (unsigned)(n / 4), nb4 = hg_cu_blocks(a, n / 4);
        switch (p4.nd) {
        case 1: binary4_kernel<1, OP><<<nb4, HG_CU_THREADS, 0, st>>>(a4, b4, o4, n4, p4); break;
        case 2: binary4_kernel<2, OP><<<nb4, HG_CU_THREADS, 0, st>>>(a4, b4, o4, n4, p4); break;
        default: binary4_kernel<3, OP><<<nb4, HG_CU_THREADS, 0, st>>>(a4, b4, o4, n4, p4); break;
        }
        HG_CU_LAUNCHED(a);
        return 0;
    }
    const unsigned nb = hg_cu_blocks(a, n);
    switch (p.nd) {
    case 1: binary_kernel<1, OP><<<nb, HG_CU_THREADS, 0, st>>>(pa, pb, po, n, p); break;
    case 2: binary_kernel<2, OP><<<nb, HG_CU_THREADS, 0, st>>>(pa, pb, po, n, p); break;
    case 3: binary_kernel<3, OP><<<nb, HG_CU_THREADS, 0, st>>>(pa, pb, po, n, p); break;
    case 4: binary_kernel<4, OP><<<nb, HG_CU_THREADS, 0, st>>>(pa, pb, po, n, p); break;
    case 5: binary_kernel<5, OP><<<nb, HG_CU_THREADS, 0, st>>>(pa, pb, po, n, p); break;
    default: binary_kernel<6, OP><<<nb, HG_CU_THREADS, 0, st>>>(pa, pb, po, n, p); break;
    }
    HG_CU_LAUNCHED(a);
    return 0;
}

extern "C" HG_CUDA_FN(add) { return binary<BOP_ADD>(a); }
extern "C" HG_CUDA_FN(sub) { return binary<BOP_SUB>(a); }
extern "C" HG_CUDA_FN(mul) { return binary<BOP_MUL>(a); }

__global__ static void scale_kernel(const float *x, float *y, long long n,
                                    float alpha)
{
    HG_CU_FOR(i, n)
        y[i] = alpha * x[i];
}

extern "C" HG_CUDA_FN(scale)
{
    const float *x = (const float *)a->in[0].data; /* [n] */
    float *y = (float *)a->out->data;              /* [n] */
    const long long n = hg_shape_numel(&a->out->shape);

    HG_CHECK(a->in[0].dtype == HG_F32);
    HG_CHECK(hg_shape_numel(&a->in[0].shape) == n);
    if (n == 0)
        return 0;
    scale_kernel<<<hg_cu_blocks(a, n), HG_CU_THREADS, 0, hg_cu(a)->stream>>>(
        x, y, n, a->attr->scale.alpha);
    HG_CU_LAUNCHED(a);
    return 0;
}

/* ---- SUM_TO ------------------------------------------------------------ */

/* Columns this long (a bias gradient over a batch of rows) are summed in
 * chunks (reduce-impl.h): the CPU's single float chain per column keeps too
 * few threads busy. */
#define SUM_TO_CHUNKED 256

extern "C" HG_CUDA_FN(sum_to)
{
    const float *x = (const float *)a->in[0].data; /* [..] */
    float *y = (float *)a->out->data;              /* ref's shape */
    const long long nx = hg_shape_numel(&a->in[0].shape);
    const long long ny = hg_shape_numel(&a->out->shape);
    struct hg_rplan p;

    HG_CHECK(a->in[0].dtype == HG_F32);
    if (ny == 0)
        return 0;
    if (nx == ny) {
        if (y != x)
            HG_CU_TRY(a, cudaMemcpyAsync(y, x, (size_t)nx * sizeof(float),
                                         cudaMemcpyDeviceToDevice,
                                         hg_cu(a)->stream));
        return 0;
    }
    hg_rplan_make(&p, &a->in[0].shape, &a->out->shape);

    /* kept groups (k*) and reduced groups (r*), in order */
    int nk = 0, nr = 0;
    long long kd[HG_MAX_DIMS], ks[HG_MAX_DIMS], rd[HG_MAX_DIMS], rs[HG_MAX_DIMS];
    long long kept = 1;
    for (int g = 0; g < p.ng; g++) {
        if (p.red[g]) {
            rd[nr] = p.dim[g];
            rs[nr++] = p.st[g];
        } else {
            kd[nk] = p.dim[g];
            ks[nk++] = p.st[g];
            kept *= p.dim[g];
        }
    }
    HG_CHECK(kept == ny); /* ref's non-1 dims are x's kept ones */

    struct hg_cu_runs runs;
    memset(&runs, 0, sizeof runs);
    if (nk == 0) { /* everything reduced: hg_cpu_sum_all */
        runs.chunks = 1;
        runs.n = nx;
        return hg_cu_sum_runs(a, x, y, 1, &runs, 0);
    }
    if (p.red[p.ng - 1]) {
        /* Inner group reduced ([R,K,R] e.g. [N,O,H,W] -> [O,1,1]): each
         * output sums contiguous runs of I over the other reduced groups,
         * each run as hg_cpu_sum_run. */
        runs.nk = nk;
        runs.nr = nr - 1;
        runs.nrun = 1;
        for (int k = 0; k < nk; k++) {
            runs.kd[k] = kd[k];
            runs.ks[k] = ks[k];
        }
        for (int k = 0; k < nr - 1; k++) {
            runs.rd[k] = rd[k];
            runs.rs[k] = rs[k];
            runs.nrun *= rd[k];
        }
        runs.len = rd[nr - 1];
        return hg_cu_sum_runs(a, x, y, ny, &runs, 0);
    }

    /* Inner group kept ([R,K], bias [D] from [..,D]): output rows of K
     * columns, each column a float sum over the reduced groups' odometer */
    struct hg_cu_cols c;
    memset(&c, 0, sizeof c);
    c.K = kd[nk - 1];
    c.P = ny / c.K;
    c.nrun = 1;
    c.nk = nk - 1;
    for (int k = 0; k < nk - 1; k++) {
        c.kd[k] = kd[k];
        c.ks[k] = ks[k];
    }
    c.nr = nr;
    for (int k = 0; k < nr; k++) {
        c.rd[k] = rd[k];
        c.rs[k] = rs[k];
        c.nrun *= rd[k];
    }
    c.scale = 1.0f;
    if (c.nrun >= SUM_TO_CHUNKED && a->ctx->ws_bytes >= hg_cu_col_ws(ny, c.nrun))
        return hg_cu_sum_cols_chunked(a, x, y, &c, (double *)a->ctx->ws);
    return hg_cu_sum_cols(a, x, y, &c);
}

/* (x, ref) -> ref's shape: the chunked column sums' partials when the inner
 * group is kept and the columns are long */
extern "C" HG_WS_FN(cuda_sum_to)
{
    (void)n_in, (void)attr, (void)nthreads;
    const long long nx = hg_shape_numel(&in[0]), ny = hg_shape_numel(out);
    struct hg_rplan p;
    if (ny == 0 || nx == ny)
        return 0;
    hg_rplan_make(&p, &in[0], out);
    if (p.ng == 0 || p.red[p.ng - 1])
        return 0;
    return nx / ny >= SUM_TO_CHUNKED ? hg_cu_col_ws(ny, nx / ny) : 0;
}

/* ---- activations --------------------------------------------------------- */

/* y = f(x); y may be x */
#define UNARY_KERNEL(name, EXPR)                                               \
    __global__ static void name##_kernel(const float *xp, float *yp,          \
                                         long long n)                         \
    {                                                                          \
        HG_CU_FOR(i, n) {                                                      \
            const float x = xp[i];                                             \
            yp[i] = (EXPR);                                                    \
        }                                                                      \
    }                                                                          \
    extern "C" HG_CUDA_FN(name)                                                \
    {                                                                          \
        const float *xp = (const float *)a->in[0].data; /* [n] */              \
        float *yp = (float *)a->out->data;              /* [n] */              \
        const long long n = hg_shape_numel(&a->out->shape);                    \
        HG_CHECK(a->in[0].dtype == HG_F32);                                    \
        HG_CHECK(hg_shape_numel(&a->in[0].shape) == n);                        \
        if (n == 0)                                                            \
            return 0;                                                          \
        name##_kernel<<<hg_cu_blocks(a, n), HG_CU_THREADS, 0,                  \
                        hg_cu(a)->stream>>>(xp, yp, n);                        \
        HG_CU_LAUNCHED(a);                                                     \
        return 0;                                                              \
    }

/* (u, dy) -> dx, same shapes; dx may be u or dy */
#define BINARY_KERNEL(name, EXPR)                                              \
    __global__ static void name##_kernel(const float *up, const float *dyp,   \
                                         float *dxp, long long n)             \
    {                                                                          \
        HG_CU_FOR(i, n) {                                                      \
            const float u = up[i], dy = dyp[i];                                \
            dxp[i] = (EXPR);                                                   \
        }                                                                      \
    }                                                                          \
    extern "C" HG_CUDA_FN(name)                                                \
    {                                                                          \
        const float *up = (const float *)a->in[0].data;  /* [n] */             \
        const float *dyp = (const float *)a->in[1].data; /* [n] */             \
        float *dxp = (float *)a->out->data;              /* [n] */             \
        const long long n = hg_shape_numel(&a->out->shape);                    \
        HG_CHECK(a->in[0].dtype == HG_F32 && a->in[1].dtype == HG_F32);        \
        HG_CHECK(hg_shape_numel(&a->in[0].shape) == n);                        \
        HG_CHECK(hg_shape_numel(&a->in[1].shape) == n);                        \
        if (n == 0)                                                            \
            return 0;                                                          \
        name##_kernel<<<hg_cu_blocks(a, n), HG_CU_THREADS, 0,                  \
                        hg_cu(a)->stream>>>(up, dyp, dxp, n);                  \
        HG_CU_LAUNCHED(a);                                                     \
        return 0;                                                              \
    }

UNARY_KERNEL(relu, hg_ew_relu(x))
BINARY_KERNEL(relu_bwd, hg_ew_relu_bwd(u, dy))
UNARY_KERNEL(gelu, hg_ew_gelu(x))
BINARY_KERNEL(gelu_bwd, hg_ew_gelu_bwd(u, dy))
UNARY_KERNEL(tanh, hg_ew_tanh(x))
BINARY_KERNEL(tanh_bwd, hg_ew_tanh_bwd(u, dy))

/* ---- DROPOUT --------------------------------------------------------------- */

/* y[i] = mask(i) * x[i] * s; the mask is keyed by element i's row's
 * sample id and coordinates (hg_ew_drop_row_key), so it is the CPU's mask
 * (and the backward's, same seed and step) */
__global__ static void dropout_kernel(const float *x, float *y, long long n,
                                      struct hg_shape sh, const int32_t *ids,
                                      uint64_t key, float p, float s)
{
    int64_t L;
    const int na = hg_ew_drop_rows(&sh, &L);
    HG_CU_FOR(i, n) {
        const uint64_t rk = hg_ew_drop_row_key(key, ids, sh.dim, na, (int64_t)i / L);
        y[i] = hg_ew_dropout(x[i], rk, (uint64_t)((int64_t)i % L), p, s);
    }
}

extern "C" HG_CUDA_FN(dropout)
{
    const float *x = (const float *)a->in[0].data; /* [B,..] */
    float *y = (float *)a->out->data;              /* [B,..] */
    const int32_t *ids = a->n_in > 1 ? (const int32_t *)a->in[1].data : NULL; /* [B] */
    const long long n = hg_shape_numel(&a->out->shape);
    const float p = a->attr->dropout.p;
    const uint64_t seed = a->attr->dropout.seed, stream = a->ctx->step;
    cudaStream_t st = hg_cu(a)->stream;

    HG_CHECK(a->in[0].dtype == HG_F32);
    HG_CHECK(hg_shape_numel(&a->in[0].shape) == n && a->out->shape.ndim >= 1);
    HG_CHECK(!ids || (a->in[1].dtype == HG_I32 &&
                      hg_shape_numel(&a->in[1].shape) == a->out->shape.dim[0]));
    if (n == 0)
        return 0;
    if (p <= 0.0f) {
        if (y != x)
            HG_CU_TRY(a, cudaMemcpyAsync(y, x, (size_t)n * sizeof(float),
                                         cudaMemcpyDeviceToDevice, st));
        return 0;
    }
    if (p >= 1.0f) {
        HG_CU_TRY(a, cudaMemsetAsync(y, 0, (size_t)n * sizeof(float), st));
        return 0;
    }
    const float s = 1.0f / (1.0f - p); /* on the host, as the CPU's */
    const uint64_t key = hg_rand_key(seed, stream);
    dropout_kernel<<<hg_cu_blocks(a, n), HG_CU_THREADS, 0, st>>>(x, y, n, a->out->shape, ids,
                                                                  key, p, s);
    HG_CU_LAUNCHED(a);
    return 0;
}
