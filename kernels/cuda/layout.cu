/* layout.cu - copies that move data around: reshape, permute, concat, slice,
 * slice backward, masked fill (CUDA kernels; semantics in
 * kernels/ops-impl.h, reference kernels/cpu/layout.c).  All but MASKED_FILL
 * work on any dtype, by element size; all are exact copies, bitwise equal
 * to the CPU's.
 *
 * CONCAT, SLICE and SLICE_BWD move whole runs of bytes per outer index:
 * they are strided 2-D copies and fills (cudaMemcpy2DAsync,
 * cudaMemset2DAsync) on the stream, with no kernel of our own.
 */
#include <string.h>

#include "kernels/cuda/cuda-impl.h"
#include "kernels/shape-plan.h"

/* RESHAPE, RESHAPE_LIKE: same bytes, new shape; nothing to do in place. */
extern "C" HG_CUDA_FN(copy)
{
    const struct hg_tview *x = &a->in[0];
    const size_t bytes =
        (size_t)hg_shape_numel(&x->shape) * hg_dtype_size(x->dtype);

    HG_CHECK(hg_shape_numel(&a->out->shape) == hg_shape_numel(&x->shape));
    if (a->out->data != x->data && bytes)
        HG_CU_TRY(a, cudaMemcpyAsync(a->out->data, x->data, bytes,
                                     cudaMemcpyDeviceToDevice, hg_cu(a)->stream));
    return 0;
}

/* ---- PERMUTE ---------------------------------------------------------------- */

/* The output's axes merged where they are also consecutive in the input
 * (as the CPU's plan); st: input element strides. */
struct pplan {
    int nd;
    int64_t dim[HG_MAX_DIMS], st[HG_MAX_DIMS];
};

/* dst[i] = src[input offset of output element i]: writes coalesced, reads
 * coalesced too when the last input axis stays last.  I: the index type
 * (32-bit division is several times cheaper than 64-bit where it fits). */
template <typename T, typename I, int ND>
__global__ static void permute_kernel(const T *src, T *dst, I n, struct pplan p)
{
    for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (I)gridDim.x * blockDim.x) {
        I o = 0, r = i;
#pragma unroll
        for (int k = ND - 1; k > 0; k--) {
            const I d = (I)p.dim[k];
            o += (r % d) * (I)p.st[k];
            r /= d;
        }
        dst[i] = src[o + r * (I)p.st[0]]; /* r < dim[0] */
    }
}

template <typename T, typename I>
static void permute_launch(const void *src, void *dst, long long n,
                           const struct pplan *p, unsigned nb, cudaStream_t st)
{
    const T *s = (const T *)src;
    T *d = (T *)dst;
    const I m = (I)n;
    static_assert(HG_MAX_DIMS == 6, "one case per rank below");
    switch (p->nd) { /* 1 is a plain copy, done by the caller */
    case 2: permute_kernel<T, I, 2><<<nb, HG_CU_THREADS, 0, st>>>(s, d, m, *p); break;
    case 3: permute_kernel<T, I, 3><<<nb, HG_CU_THREADS, 0, st>>>(s, d, m, *p); break;
    case 4: permute_kernel<T, I, 4><<<nb, HG_CU_THREADS, 0, st>>>(s, d, m, *p); break;
    case 5: permute_kernel<T, I, 5><<<nb, HG_CU_THREADS, 0, st>>>(s, d, m, *p); break;
    default: permute_kernel<T, I, 6><<<nb, HG_CU_THREADS, 0, st>>>(s, d, m, *p); break;
    }
}

template <typename T>
static void permute_by_index(const void *src, void *dst, long long n,
                             const struct pplan *p, unsigned nb, cudaStream_t st)
{
    if (n < 0x7fffffffLL) /* every index and input offset is below n */
        permute_launch<T, unsigned>(src, dst, n, p, nb, st);
    else
        permute_launch<T, long long>(src, dst, n, p, nb, st);
}

/* out.dim[i] = in.dim[perm[i]] */
extern "C" HG_CUDA_FN(permute)
{
    const struct hg_tview *x = &a->in[0];
    const void *src = x->data; /* in's shape */
    void *dst = a->out->data;  /* out.dim[i] = in.dim[perm[i]] */
    const size_t esz = hg_dtype_size(x->dtype);
    const int nd = x->shape.ndim;
    const int *perm = a->attr->permute.perm;
    const long long n = hg_shape_numel(&x->shape);
    long long ist[HG_MAX_DIMS];
    struct pplan p;
    cudaStream_t st = hg_cu(a)->stream;

    HG_CHECK(a->attr->permute.ndim == nd);
    HG_CHECK(hg_shape_numel(&a->out->shape) == n);
    if (n == 0)
        return 0;
    long long acc = 1;
    for (int i = nd - 1; i >= 0; i--) {
        ist[i] = acc;
        acc *= x->shape.dim[i];
    }
    p.nd = 0;
    for (int i = 0; i < nd; i++) {
        HG_CHECK(perm[i] >= 0 && perm[i] < nd);
        const long long d = x->shape.dim[perm[i]], s = ist[perm[i]];
        if (d == 1)
            continue;
        if (p.nd > 0 && p.st[p.nd - 1] == s * d) {
            p.dim[p.nd - 1] *= d;
            p.st[p.nd - 1] = s;
            continue;
        }
        p.dim[p.nd] = d;
        p.st[p.nd] = s;
        p.nd++;
    }
    if (p.nd <= 1) { /* nothing moves */
        if (dst != src)
            HG_CU_TRY(a, cudaMemcpyAsync(dst, src, (size_t)n * esz,
                                         cudaMemcpyDeviceToDevice, st));
        return 0;
    }
    /* When the input's last axis stays last, move runs of it in units of up
     * to 16 bytes: the other axes' strides are multiples of the run, so
     * they stay whole in the wider unit. */
    size_t unit = esz;
    if (p.st[p.nd - 1] == 1) {
        const size_t run = (size_t)p.dim[p.nd - 1] * esz;
        for (size_t w = 16; w > esz; w /= 2)
            if (run % w == 0 && (uintptr_t)src % w == 0 && (uintptr_t)dst % w == 0) {
                unit = w;
                break;
            }
        const long long f = (long long)(unit / esz);
        if (f > 1) {
            p.dim[p.nd - 1] /= f;
            for (int k = 0; k < p.nd - 1; k++) {
                HG_CHECK(p.st[k] % f == 0);
                p.st[k] /= f;
            }
        }
    }
    const long long nu = (long long)((size_t)n * esz / unit); /* units moved */
    const unsigned nb = hg_cu_blocks(a, nu);
    switch (unit) {
    case 1: permute_by_index<uint8_t>(src, dst, nu, &p, nb, st); break;
    case 2: permute_by_index<uint16_t>(src, dst, nu, &p, nb, st); break;
    case 4: permute_by_index<uint32_t>(src, dst, nu, &p, nb, st); break;
    case 8: permute_by_index<uint2>(src, dst, nu, &p, nb, st); break;
    case 16: permute_by_index<uint4>(src, dst, nu, &p, nb, st); break;
    default: HG_CHECK(unit == 1 || unit == 2 || unit == 4 || unit == 8 || unit == 16);
    }
    HG_CU_LAUNCHED(a);
    return 0;
}

/* ---- CONCAT, SLICE ------------------------------------------------------------ */

/* height rows of width bytes, row o from src + o*spitch to dst + o*dpitch;
 * one row is a plain copy (no pitch limit then). */
static cudaError_t rows_copy(void *dst, size_t dpitch, const void *src,
                             size_t spitch, size_t width, long long height,
                             cudaStream_t st)
{
    if (width == 0 || height == 0)
        return cudaSuccess;
    if (height == 1)
        return cudaMemcpyAsync(dst, src, width, cudaMemcpyDeviceToDevice, st);
    return cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, (size_t)height,
                             cudaMemcpyDeviceToDevice, st);
}

/* height rows of width zero bytes at dst + o*pitch */
static cudaError_t rows_zero(void *dst, size_t pitch, size_t width,
                             long long height, cudaStream_t st)
{
    if (width == 0 || height == 0)
        return cudaSuccess;
    if (height == 1)
        return cudaMemsetAsync(dst, 0, width, st);
    return cudaMemset2DAsync(dst, pitch, 0, width, (size_t)height, st);
}

/* (x0..xn) -> out, every input equal except on axis: input k's rows of
 * dim_k[axis]*inner elements go to column at_k of out's rows. */
extern "C" HG_CUDA_FN(concat)
{
    char *dst = (char *)a->out->data; /* out: sum of the inputs' axis dims */
    const struct hg_shape *os = &a->out->shape;
    const size_t esz = hg_dtype_size(a->out->dtype);
    const int axis = hg_norm_axis(a->attr->concat.axis, os->ndim);
    const long long n = hg_shape_numel(os);
    int64_t outer, inner;
    long long total = 0;
    cudaStream_t st = hg_cu(a)->stream;

    for (int k = 0; k < a->n_in; k++) {
        const struct hg_tview *v = &a->in[k];
        HG_CHECK(v->dtype == a->out->dtype && v->shape.ndim == os->ndim);
        for (int d = 0; d < os->ndim; d++)
            HG_CHECK(d == axis || v->shape.dim[d] == os->dim[d]);
        total += v->shape.dim[axis];
    }
    HG_CHECK(total == os->dim[axis]);
    hg_outer_inner(os, axis, &outer, &inner);
    const size_t obytes = (size_t)os->dim[axis] * (size_t)inner * esz;
    if (n == 0)
        return 0;
    size_t at = 0;
    for (int k = 0; k < a->n_in; k++) {
        const struct hg_tview *v = &a->in[k];
        const size_t b = (size_t)v->shape.dim[axis] * (size_t)inner * esz;
        HG_CU_TRY(a, rows_copy(dst + at, obytes, v->data, b, b, outer, st));
        at += b;
    }
    return 0;
}

/* (x) -> x[start:start+len] along axis */
extern "C" HG_CUDA_FN(slice)
{
    const struct hg_tview *x = &a->in[0];
    const char *src = (const char *)x->data; /* in's shape */
    char *dst = (char *)a->out->data;        /* in's shape with len on axis */
    const size_t esz = hg_dtype_size(x->dtype);
    const int axis = hg_norm_axis(a->attr->slice.axis, x->shape.ndim);
    const long long n = hg_shape_numel(&a->out->shape);
    const struct hg_slice_geom g = hg_slice_geom(&x->shape, axis, a->attr->slice.start,
                                                 a->out->shape.dim[axis], esz);
    if (n == 0 || (g.outer == 1 && dst == src + g.sb)) /* empty, or a view */
        return 0;
    HG_CU_TRY(a, rows_copy(dst, g.pb, src + g.sb, g.fb, g.pb, g.outer, hg_cu(a)->stream));
    return 0;
}

/* (dy, x_ref) -> zeros of x's shape with dy placed at [start, start+len) */
extern "C" HG_CUDA_FN(slice_bwd)
{
    const struct hg_tview *dy = &a->in[0];
    const char *src = (const char *)dy->data; /* x's shape with len on axis */
    char *dst = (char *)a->out->data;         /* x's shape */
    const struct hg_shape *os = &a->out->shape;
    const size_t esz = hg_dtype_size(a->out->dtype);
    const int axis = hg_norm_axis(a->attr->slice.axis, os->ndim);
    const long long n = hg_shape_numel(os);
    cudaStream_t st = hg_cu(a)->stream;

    HG_CHECK(dy->shape.ndim == os->ndim);
    const struct hg_slice_geom g = hg_slice_geom(os, axis, a->attr->slice.start,
                                                 dy->shape.dim[axis], esz);
    if (n == 0)
        return 0;
    /* each output row: zeros [0, sb), dy's row [sb, sb+pb), zeros after */
    HG_CU_TRY(a, rows_zero(dst, g.fb, g.sb, g.outer, st));
    HG_CU_TRY(a, rows_copy(dst + g.sb, g.fb, src, g.pb, g.pb, g.outer, st));
    HG_CU_TRY(a, rows_zero(dst + g.sb + g.pb, g.fb, g.fb - g.sb - g.pb, g.outer, st));
    return 0;
}

/* ---- MASKED_FILL -------------------------------------------------------------- */

/* y = fill where (causal && k > q) || keep[b,k] == 0, else s; y may be s */
__global__ static void masked_fill_kernel(const float *s, const int32_t *keep,
                                          float *y, long long n, long long H,
                                          long long Tq, long long Tk, int causal,
                                          float fill)
{
    HG_CU_FOR(i, n) {
        const long long r = i / Tk, k = i % Tk; /* r: row of [B*H*Tq] */
        const long long q = r % Tq, b = r / (H * Tq);
        const bool masked = (causal && k > q) || (keep && keep[b * Tk + k] == 0);
        y[i] = masked ? fill : s[i];
    }
}

/* (s[B,Tq,Tk] or s[B,H,Tq,Tk] f32 [, keep[B,Tk] i32]) -> out, s's shape */
extern "C" HG_CUDA_FN(masked_fill)
{
    const struct hg_tview *sv = &a->in[0];
    const float *s = (const float *)sv->data; /* [B,(H,)Tq,Tk] */
    const int32_t *keep =
        a->n_in >= 2 ? (const int32_t *)a->in[1].data : NULL; /* [B,Tk] */
    float *y = (float *)a->out->data;                       /* s's shape */
    const int nd = sv->shape.ndim;

    HG_CHECK(sv->dtype == HG_F32 && (nd == 3 || nd == 4));
    const long long B = sv->shape.dim[0], H = nd == 4 ? sv->shape.dim[1] : 1;
    const long long Tq = sv->shape.dim[nd - 2], Tk = sv->shape.dim[nd - 1];
    const long long n = B * H * Tq * Tk;
    if (keep) {
        HG_CHECK(a->in[1].dtype == HG_I32);
        HG_CHECK(hg_shape_numel(&a->in[1].shape) == B * Tk);
    }
    if (n == 0)
        return 0;
    masked_fill_kernel<<<hg_cu_blocks(a, n), HG_CU_THREADS, 0, hg_cu(a)->stream>>>(
        s, keep, y, n, H, Tq, Tk, a->attr->mask.causal, a->attr->mask.fill);
    HG_CU_LAUNCHED(a);
    return 0;
}
