/* layout.c - copies that move data around: reshape, permute, concat, slice,
 * slice backward, masked fill (CPU reference kernels).  All but MASKED_FILL
 * work on any dtype, by element size.
 */
#include <string.h>

#include "kernels/ops-impl.h"
#include "kernels/shape-plan.h"

#define PAR_MIN 32768 /* below this many elements, stay on one thread */
#define ROWBLK 64     /* PERMUTE: rows per work item */

/* RESHAPE, RESHAPE_LIKE: same bytes, new shape. */
HG_CPU_FN(copy)
{
    const struct hg_tview *x = &a->in[0];
    const size_t bytes =
        (size_t)hg_shape_numel(&x->shape) * hg_dtype_size(x->dtype);

    HG_CHECK(hg_shape_numel(&a->out->shape) == hg_shape_numel(&x->shape));
    if (a->out->data != x->data && bytes)
        memcpy(a->out->data, x->data, bytes);
    return 0;
}

/* ---- PERMUTE ---------------------------------------------------------------- */

/* dst[n] = src[i*s] for an element of esz bytes */
static void gather_row(char *restrict dst, const char *restrict src, int64_t s,
                       int64_t n, size_t esz)
{
    switch (esz) {
    case 4: {
        uint32_t *restrict d = (uint32_t *)dst;
        const uint32_t *restrict q = (const uint32_t *)src;
        for (int64_t i = 0; i < n; i++)
            d[i] = q[i * s];
        break;
    }
    case 8: {
        uint64_t *restrict d = (uint64_t *)dst;
        const uint64_t *restrict q = (const uint64_t *)src;
        for (int64_t i = 0; i < n; i++)
            d[i] = q[i * s];
        break;
    }
    case 2: {
        uint16_t *restrict d = (uint16_t *)dst;
        const uint16_t *restrict q = (const uint16_t *)src;
        for (int64_t i = 0; i < n; i++)
            d[i] = q[i * s];
        break;
    }
    default:
        for (int64_t i = 0; i < n; i++)
            memcpy(dst + i * esz, src + i * s * (int64_t)esz, esz);
    }
}

/* out.dim[i] = in.dim[perm[i]].  The output axes are merged where they are
 * also consecutive in the input; then every output row (last merged axis) is
 * either a memcpy (last input axis kept) or a strided gather. */
HG_CPU_FN(permute)
{
    const struct hg_tview *x = &a->in[0];
    const char *src = x->data; /* in's shape */
    char *dst = a->out->data;  /* out.dim[i] = in.dim[perm[i]] */
    const size_t esz = hg_dtype_size(x->dtype);
    const int nd = x->shape.ndim;
    const int *perm = a->attr->permute.perm;
    const int64_t n = hg_shape_numel(&x->shape);
    int64_t ist[HG_MAX_DIMS], dim[HG_MAX_DIMS], st[HG_MAX_DIMS];
    int m = 0;

    HG_CHECK(a->attr->permute.ndim == nd);
    if (n == 0)
        return 0;
    int64_t acc = 1;
    for (int i = nd - 1; i >= 0; i--) {
        ist[i] = acc;
        acc *= x->shape.dim[i];
    }
    for (int i = 0; i < nd; i++) {
        HG_CHECK(perm[i] >= 0 && perm[i] < nd);
        int64_t d = x->shape.dim[perm[i]], s = ist[perm[i]];
        if (d == 1)
            continue;
        if (m > 0 && st[m - 1] == s * d) {
            dim[m - 1] *= d;
            st[m - 1] = s;
            continue;
        }
        dim[m] = d;
        st[m] = s;
        m++;
    }
    if (m == 0) {
        dim[0] = 1;
        st[0] = 1;
        m = 1;
    }
    const int64_t inner = dim[m - 1], is = st[m - 1];
    const int64_t rows = n / inner;
    const size_t rowbytes = (size_t)inner * esz;

    if (m == 1) { /* nothing moves */
        if (dst != src)
            memcpy(dst, src, (size_t)n * esz);
        return 0;
    }
    if (m == 4 && is == 1 && st[1] == inner && st[2] == dim[1] * inner) {
        /* Attention's swap of the middle axes: [B,T,H,Dh] <-> [B,H,T,Dh]
         * (out [B,A1,A2,Dh] reads in [B,A2,A1,Dh]). */
        const int64_t A1 = dim[1], A2 = dim[2];
#pragma omp parallel for collapse(2) if (n >= PAR_MIN) schedule(static)
        for (int64_t b = 0; b < dim[0]; b++)
            for (int64_t i1 = 0; i1 < A1; i1++) {
                char *o = dst + ((b * A1 + i1) * A2) * rowbytes;
                const char *s = src + ((b * A2) * A1 + i1) * rowbytes;
                for (int64_t i2 = 0; i2 < A2; i2++)
                    memcpy(o + i2 * rowbytes, s + i2 * A1 * rowbytes, rowbytes);
            }
        return 0;
    }

    /* General: blocks of ROWBLK output rows; the input offset of the first
     * row by division, then an odometer. */
    const int64_t nblk = (rows + ROWBLK - 1) / ROWBLK;
#pragma omp parallel for if (n >= PAR_MIN) schedule(static)
    for (int64_t blk = 0; blk < nblk; blk++) {
        int64_t r0 = blk * ROWBLK, r1 = r0 + ROWBLK < rows ? r0 + ROWBLK : rows;
        int64_t idx[HG_MAX_DIMS], off = 0, rr = r0;
        for (int k = m - 2; k >= 0; k--) {
            idx[k] = rr % dim[k];
            rr /= dim[k];
            off += idx[k] * st[k];
        }
        for (int64_t r = r0; r < r1; r++) {
            char *o = dst + r * rowbytes;
            if (is == 1)
                memcpy(o, src + off * (int64_t)esz, rowbytes);
            else
                gather_row(o, src + off * (int64_t)esz, is, inner, esz);
            for (int k = m - 2; k >= 0; k--) {
                off += st[k];
                if (++idx[k] < dim[k])
                    break;
                off -= idx[k] * st[k];
                idx[k] = 0;
            }
        }
    }
    return 0;
}

/* ---- CONCAT, SLICE ------------------------------------------------------------ */

/* (x0..xn) -> out, every input equal except on axis */
HG_CPU_FN(concat)
{
    char *dst = a->out->data; /* out: sum of the inputs' axis dims */
    const struct hg_shape *os = &a->out->shape;
    const size_t esz = hg_dtype_size(a->out->dtype);
    const int axis = hg_norm_axis(a->attr->concat.axis, os->ndim);
    const int64_t n = hg_shape_numel(os);
    int64_t outer, inner;

    hg_outer_inner(os, axis, &outer, &inner);
    const size_t obytes = (size_t)os->dim[axis] * (size_t)inner * esz;
    if (n == 0)
        return 0;
#pragma omp parallel for if (n >= PAR_MIN) schedule(static)
    for (int64_t o = 0; o < outer; o++) {
        size_t at = 0;
        for (int k = 0; k < a->n_in; k++) {
            const struct hg_tview *v = &a->in[k];
            const size_t b = (size_t)v->shape.dim[axis] * (size_t)inner * esz;
            memcpy(dst + (size_t)o * obytes + at, (const char *)v->data + o * b, b);
            at += b;
        }
    }
    return 0;
}

/* (x) -> x[start:start+len] along axis */
HG_CPU_FN(slice)
{
    const struct hg_tview *x = &a->in[0];
    const char *src = x->data; /* in's shape */
    char *dst = a->out->data;  /* in's shape with len on axis */
    const size_t esz = hg_dtype_size(x->dtype);
    const int axis = hg_norm_axis(a->attr->slice.axis, x->shape.ndim);
    const int64_t n = hg_shape_numel(&a->out->shape);
    const struct hg_slice_geom g = hg_slice_geom(&x->shape, axis, a->attr->slice.start,
                                                 a->out->shape.dim[axis], esz);
    if (n == 0 || (g.outer == 1 && dst == src + g.sb)) /* empty, or a view */
        return 0;
#pragma omp parallel for if (n >= PAR_MIN) schedule(static)
    for (int64_t o = 0; o < g.outer; o++)
        memcpy(dst + (size_t)o * g.pb, src + (size_t)o * g.fb + g.sb, g.pb);
    return 0;
}

/* (dy, x_ref) -> zeros of x's shape with dy placed at [start, start+len) */
HG_CPU_FN(slice_bwd)
{
    const struct hg_tview *dy = &a->in[0];
    const char *src = dy->data; /* x's shape with len on axis */
    char *dst = a->out->data;   /* x's shape */
    const struct hg_shape *os = &a->out->shape;
    const size_t esz = hg_dtype_size(a->out->dtype);
    const int axis = hg_norm_axis(a->attr->slice.axis, os->ndim);
    const int64_t n = hg_shape_numel(os);

    HG_CHECK(dy->shape.ndim == os->ndim);
    const struct hg_slice_geom g = hg_slice_geom(os, axis, a->attr->slice.start,
                                                 dy->shape.dim[axis], esz);
    if (n == 0)
        return 0;
#pragma omp parallel for if (n >= PAR_MIN) schedule(static)
    for (int64_t o = 0; o < g.outer; o++) {
        char *row = dst + (size_t)o * g.fb;
        memset(row, 0, g.sb);
        memcpy(row + g.sb, src + (size_t)o * g.pb, g.pb);
        memset(row + g.sb + g.pb, 0, g.fb - g.sb - g.pb);
    }
    return 0;
}

/* ---- MASKED_FILL -------------------------------------------------------------- */

/* (s[B,Tq,Tk] or s[B,H,Tq,Tk] f32 [, keep[B,Tk] i32]) -> out, s's shape:
 * masked (fill) where (causal && k > q) || keep[b,k] == 0, else s. */
HG_CPU_FN(masked_fill)
{
    const struct hg_tview *sv = &a->in[0];
    const float *s = sv->data;                                    /* [B,(H,)Tq,Tk] */
    const int32_t *keep = a->n_in >= 2 ? a->in[1].data : NULL; /* [B,Tk] */
    float *y = a->out->data;                                      /* s's shape */
    const int nd = sv->shape.ndim;
    const int causal = a->attr->mask.causal;
    const float fill = a->attr->mask.fill;

    HG_CHECK(sv->dtype == HG_F32 && (nd == 3 || nd == 4));
    const int64_t B = sv->shape.dim[0], H = nd == 4 ? sv->shape.dim[1] : 1;
    const int64_t Tq = sv->shape.dim[nd - 2], Tk = sv->shape.dim[nd - 1];
    const int64_t rows = B * H * Tq;
    if (keep) {
        HG_CHECK(a->in[1].dtype == HG_I32);
        HG_CHECK(hg_shape_numel(&a->in[1].shape) == B * Tk);
    }
#pragma omp parallel for if (rows * Tk >= PAR_MIN) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const int64_t q = r % Tq, b = r / (H * Tq);
        const float *restrict sr = s + r * Tk;
        float *restrict yr = y + r * Tk;
        /* causal: k > q masked, so only k < kend can survive */
        const int64_t kend = causal ? (q + 1 < Tk ? q + 1 : Tk) : Tk;
        if (keep) {
            const int32_t *restrict kr = keep + b * Tk;
            for (int64_t k = 0; k < kend; k++)
                yr[k] = kr[k] != 0 ? sr[k] : fill;
        } else {
            if (yr != sr) /* in place: nothing to copy */
                memcpy(yr, sr, (size_t)kend * sizeof(float));
        }
        for (int64_t k = kend; k < Tk; k++)
            yr[k] = fill;
    }
    return 0;
}
