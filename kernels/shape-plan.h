/* shape-plan.h - private to kernels/: the host-side shape arithmetic both
 * backends plan their loops with (C and CUDA C++), so a kernel on either
 * side walks the same merged axes in the same order.
 *
 * - hg_norm_axis, hg_outer_inner, hg_rows_cols: an axis (negative from the
 *   end), the [outer, dim[axis], inner] view around it, [rows, last dim];
 * - hg_bplan: a broadcast binary op (ADD/SUB/MUL) after merging axes;
 * - hg_expand_plan: EXPAND_LIKE's merged axes;
 * - hg_rplan: SUM_TO's alternating kept/reduced axis groups;
 * - hg_slice_geom: SLICE's and SLICE_BWD's rows of bytes;
 * - hg_mean_alpha: EXPAND_LIKE's scale (its bits must agree on both);
 * - hg_conv_geom: CONV2D's sizes and attributes, checked.
 */
#ifndef HG_SHAPE_PLAN_H
#define HG_SHAPE_PLAN_H

#include <stdint.h>

#include "kernels/hg_kernels.h"

static inline int hg_norm_axis(int axis, int ndim)
{
    if (axis < 0)
        axis += ndim;
    HG_CHECK(axis >= 0 && axis < ndim);
    return axis;
}

/* [.., C] viewed as [rows, C] */
static inline void hg_rows_cols(const struct hg_shape *s, int64_t *rows, int64_t *cols)
{
    HG_CHECK(s->ndim >= 1);
    *cols = s->dim[s->ndim - 1];
    *rows = *cols ? hg_shape_numel(s) / *cols : 0;
}

/* [outer, dim[axis], inner] view of s */
static inline void hg_outer_inner(const struct hg_shape *s, int axis, int64_t *outer,
                                  int64_t *inner)
{
    *outer = 1;
    *inner = 1;
    for (int i = 0; i < axis; i++)
        *outer *= s->dim[i];
    for (int i = axis + 1; i < s->ndim; i++)
        *inner *= s->dim[i];
}

/* A slice [start, start+len) on `axis` of the full shape s, as `outer` rows:
 * a full row has `fb` bytes, the slice's `pb`, starting `sb` into it. */
struct hg_slice_geom {
    int64_t outer;
    size_t fb, pb, sb;
};
static inline struct hg_slice_geom hg_slice_geom(const struct hg_shape *s, int axis,
                                                 int64_t start, int64_t len, size_t esz)
{
    struct hg_slice_geom g;
    int64_t inner;
    HG_CHECK(start >= 0 && start + len <= s->dim[axis]);
    hg_outer_inner(s, axis, &g.outer, &inner);
    g.fb = (size_t)s->dim[axis] * (size_t)inner * esz;
    g.pb = (size_t)len * (size_t)inner * esz;
    g.sb = (size_t)start * (size_t)inner * esz;
    return g;
}

/* EXPAND_LIKE's scale: attr alpha (0: 1; < 0: 1/count with count =
 * numel(x_ref) / numel(dy), MEAN's backward), computed in double then
 * rounded once. */
static inline float hg_mean_alpha(float attr_alpha, const struct hg_shape *dy,
                                  const struct hg_shape *x_ref)
{
    float alpha = attr_alpha != 0.0f ? attr_alpha : 1.0f;
    if (alpha < 0.0f)
        alpha = (float)((double)hg_shape_numel(dy) / (double)hg_shape_numel(x_ref));
    return alpha;
}

/* ---- broadcasting -------------------------------------------------------
 * Both operands aligned right against the output, axes of size 1 dropped,
 * neighbouring axes merged where they are contiguous for the output and both
 * operands; stride 0 = broadcast.  Bias [D] + [N,T,D] becomes [N*T (sa D,
 * sb 0), D (1, 1)]; [O,1,1] + [N,O,H,W] becomes [N (sb 0), O (sb 1), H*W
 * (sb 0)]. */
struct hg_bplan {
    int nd;
    int64_t dim[HG_MAX_DIMS];                 /* out is contiguous [dim...] */
    int64_t sa[HG_MAX_DIMS], sb[HG_MAX_DIMS]; /* element strides, 0 = broadcast */
};

/* Strides of s aligned right against o (ndim(s) <= ndim(o)); 0 where s has
 * size 1 or lacks the axis. */
static inline void hg_aligned_strides(const struct hg_shape *s, const struct hg_shape *o,
                                      int64_t *st)
{
    const int off = o->ndim - s->ndim;
    int64_t acc = 1;
    HG_CHECK(off >= 0);
    for (int i = o->ndim - 1; i >= 0; i--) {
        const int j = i - off;
        if (j < 0 || s->dim[j] == 1) {
            st[i] = 0;
        } else {
            HG_CHECK(s->dim[j] == o->dim[i]);
            st[i] = acc;
        }
        if (j >= 0)
            acc *= s->dim[j];
    }
}

static inline void hg_bplan_make(struct hg_bplan *p, const struct hg_shape *a,
                                 const struct hg_shape *b, const struct hg_shape *o)
{
    int64_t sa[HG_MAX_DIMS], sb[HG_MAX_DIMS];

    hg_aligned_strides(a, o, sa);
    hg_aligned_strides(b, o, sb);
    p->nd = 0;
    for (int i = 0; i < o->ndim; i++) {
        const int64_t d = o->dim[i];
        if (d == 1)
            continue;
        if (p->nd > 0) {
            const int k = p->nd - 1;
            if (p->sa[k] == sa[i] * d && p->sb[k] == sb[i] * d) {
                p->dim[k] *= d;
                p->sa[k] = sa[i];
                p->sb[k] = sb[i];
                continue;
            }
        }
        p->dim[p->nd] = d;
        p->sa[p->nd] = sa[i];
        p->sb[p->nd] = sb[i];
        p->nd++;
    }
    if (p->nd == 0) { /* every dim 1: a single element */
        p->nd = 1;
        p->dim[0] = 1;
        p->sa[0] = p->sb[0] = 0;
    }
}

/* EXPAND_LIKE: out's axes merged where src's strides (aligned right, 0
 * where src broadcasts) allow, into dim/st; returns how many (>= 1 unless
 * o has no axes of size > 1). */
static inline int hg_expand_plan(const struct hg_shape *src, const struct hg_shape *o,
                                 int64_t *dim, int64_t *st)
{
    int64_t ds[HG_MAX_DIMS];
    int m = 0;
    hg_aligned_strides(src, o, ds);
    for (int i = 0; i < o->ndim; i++) {
        const int64_t d = o->dim[i];
        if (d == 1)
            continue;
        if (m > 0 && st[m - 1] == ds[i] * d) {
            dim[m - 1] *= d;
            st[m - 1] = ds[i];
            continue;
        }
        dim[m] = d;
        st[m] = ds[i];
        m++;
    }
    return m;
}

/* ---- SUM_TO --------------------------------------------------------------
 * x's axes merged into alternating groups, each kept (present in ref) or
 * reduced (ref has size 1 there); x strides in elements. */
struct hg_rplan {
    int ng;
    int64_t dim[HG_MAX_DIMS], st[HG_MAX_DIMS];
    int red[HG_MAX_DIMS];
};

static inline void hg_rplan_make(struct hg_rplan *p, const struct hg_shape *x,
                                 const struct hg_shape *ref)
{
    const int off = x->ndim - ref->ndim;
    int64_t dim[HG_MAX_DIMS];
    int red[HG_MAX_DIMS], n = 0;

    HG_CHECK(off >= 0);
    for (int i = 0; i < x->ndim; i++) {
        const int64_t d = x->dim[i], rd = i - off >= 0 ? ref->dim[i - off] : 1;
        if (d == 1)
            continue;
        HG_CHECK(rd == d || rd == 1);
        const int r = rd == 1;
        if (n > 0 && red[n - 1] == r) {
            dim[n - 1] *= d;
        } else {
            dim[n] = d;
            red[n] = r;
            n++;
        }
    }
    p->ng = n;
    int64_t acc = 1;
    for (int g = n - 1; g >= 0; g--) {
        p->dim[g] = dim[g];
        p->red[g] = red[g];
        p->st[g] = acc;
        acc *= dim[g];
    }
}

/* ---- CONV2D -------------------------------------------------------------- */
struct hg_conv_geom {
    int64_t n, c, h, w;   /* x */
    int64_t o, kh, kw;    /* w */
    int64_t oh, ow;       /* y */
    int64_t sh, sw, ph, pw;
    int64_t p, ckk;       /* OH*OW, C*KH*KW */
};

/* x[N,C,H,W], y[N,O,OH,OW] and the attributes */
static inline struct hg_conv_geom hg_conv_geom_make(const struct hg_shape *x,
                                                    const struct hg_shape *y,
                                                    const union hg_attr *attr)
{
    struct hg_conv_geom g;
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

#endif /* HG_SHAPE_PLAN_H */
