/* shapes.c - shape, cost and workspace rules for every op.
 *
 * Shape rules validate ranks, dtypes and sizes and fill the output's shape and
 * dtype; a mismatch is a runtime error naming the op and the shapes.  Costs
 * count 4 bytes per element read or written (cost rules see no dtypes).
 */
#include <string.h>

#include "kernels/ops-impl.h"

#define SB(i) hg_shape_str(&in[i], sb[i], sizeof sb[i])
#define SHAPE_BUFS char sb[HG_MAX_INPUTS][96]

static double numel(const struct hg_shape *s) { return (double)hg_shape_numel(s); }

static double in_bytes(const struct hg_shape *in, int n_in)
{
    double b = 0;
    for (int i = 0; i < n_in; i++)
        b += 4.0 * numel(&in[i]);
    return b;
}

static int check_f32(const char *op, const enum hg_dtype *dt, int i, char *err,
                     size_t errlen)
{
    if (dt[i] != HG_F32)
        return hg_kerr(err, errlen, "%s: input %d is %s, expected f32", op, i,
                       hg_dtype_name(dt[i]));
    return 0;
}

static int check_ndim(const char *op, const struct hg_shape *in, int i, int lo,
                      int hi, char *err, size_t errlen)
{
    char b[96];
    if (in[i].ndim < lo || in[i].ndim > hi)
        return hg_kerr(err, errlen, "%s: input %d %s has rank %d, expected %d..%d",
                       op, i, hg_shape_str(&in[i], b, sizeof b), in[i].ndim, lo,
                       hi);
    return 0;
}

/* Normalises a possibly negative axis; -1 if out of range. */
static int norm_axis(int axis, int ndim)
{
    if (axis < 0)
        axis += ndim;
    return axis >= 0 && axis < ndim ? axis : -1;
}

/* ---- linear algebra ---------------------------------------------------- */

HG_SHAPE_FN(matmul)
{
    SHAPE_BUFS;
    const struct hg_shape *a = &in[0], *b = &in[1];
    int ta = attr->mm.trans_a, tb = attr->mm.trans_b;
    HG_CHECK(n_in == 2);
    if (check_f32("matmul", in_dt, 0, err, errlen) ||
        check_f32("matmul", in_dt, 1, err, errlen) ||
        check_ndim("matmul", in, 0, 2, HG_MAX_DIMS, err, errlen) ||
        check_ndim("matmul", in, 1, 2, HG_MAX_DIMS, err, errlen))
        return -1;
    int64_t m = a->dim[a->ndim - (ta ? 1 : 2)], ka = a->dim[a->ndim - (ta ? 2 : 1)];
    int64_t kb = b->dim[b->ndim - (tb ? 1 : 2)], n = b->dim[b->ndim - (tb ? 2 : 1)];
    if (ka != kb)
        return hg_kerr(err, errlen,
                       "matmul: a %s%s and b %s%s: inner dims %lld != %lld",
                       SB(0), ta ? "^T" : "", SB(1), tb ? "^T" : "",
                       (long long)ka, (long long)kb);
    if (b->ndim != 2) {
        int same = a->ndim == b->ndim;
        for (int i = 0; same && i < a->ndim - 2; i++)
            same = a->dim[i] == b->dim[i];
        if (!same)
            return hg_kerr(err, errlen,
                           "matmul: a %s and b %s: batch dims differ (b must be "
                           "2-D or have a's leading dims)", SB(0), SB(1));
    }
    *out = *a;
    out->dim[out->ndim - 2] = m;
    out->dim[out->ndim - 1] = n;
    *out_dt = HG_F32;
    return 0;
}

HG_SHAPE_FN(matmul_reduce)
{
    SHAPE_BUFS;
    (void)attr;
    HG_CHECK(n_in == 2);
    if (check_f32("matmul_reduce", in_dt, 0, err, errlen) ||
        check_f32("matmul_reduce", in_dt, 1, err, errlen) ||
        check_ndim("matmul_reduce", in, 0, 1, HG_MAX_DIMS, err, errlen) ||
        check_ndim("matmul_reduce", in, 1, 1, HG_MAX_DIMS, err, errlen))
        return -1;
    int same = in[0].ndim == in[1].ndim;
    for (int i = 0; same && i < in[0].ndim - 1; i++)
        same = in[0].dim[i] == in[1].dim[i];
    if (!same)
        return hg_kerr(err, errlen,
                       "matmul_reduce: x %s and d %s: leading dims differ",
                       SB(0), SB(1));
    out->ndim = 2;
    out->dim[0] = in[0].dim[in[0].ndim - 1];
    out->dim[1] = in[1].dim[in[1].ndim - 1];
    *out_dt = HG_F32;
    return 0;
}

HG_COST_FN(matmul)
{
    const struct hg_shape *a = &in[0];
    int64_t k = a->dim[a->ndim - (attr->mm.trans_a ? 2 : 1)];
    (void)n_in;
    cost->flops = 2.0 * numel(out) * (double)k;
    cost->bytes = in_bytes(in, 2) + 4.0 * numel(out);
}

HG_COST_FN(matmul_reduce)
{
    int64_t k = in[0].dim[in[0].ndim - 1];
    (void)attr;
    cost->flops = 2.0 * numel(&in[1]) * (double)k;
    cost->bytes = in_bytes(in, n_in) + 4.0 * numel(out);
}

/* ---- convolution and pooling ------------------------------------------- */

static int64_t out_size(int64_t h, int k, int s, int p)
{
    if (s <= 0 || h + 2 * p < k)
        return 0;
    return (h + 2 * (int64_t)p - k) / s + 1;
}

static int conv_attr_ok(const union hg_attr *attr, const char *op, char *err,
                        size_t errlen)
{
    int kh = attr->conv.kh, kw = attr->conv.kw, sh = attr->conv.stride_h,
        sw = attr->conv.stride_w, ph = attr->conv.pad_h, pw = attr->conv.pad_w;
    if (kh <= 0 || kw <= 0 || sh <= 0 || sw <= 0 || ph < 0 || pw < 0)
        return hg_kerr(err, errlen,
                       "%s: bad attributes kernel %dx%d stride %dx%d pad %dx%d",
                       op, kh, kw, sh, sw, ph, pw);
    return 0;
}

/* x[N,C,H,W], w[O,C,KH,KW] -> y[N,O,OH,OW] into *y; -1 with a message. */
static int conv_geom(const char *op, const struct hg_shape *x,
                     const struct hg_shape *w, const union hg_attr *attr,
                     struct hg_shape *y, char *err, size_t errlen)
{
    char bx[96], bw[96];
    if (conv_attr_ok(attr, op, err, errlen))
        return -1;
    if (x->ndim != 4 || w->ndim != 4)
        return hg_kerr(err, errlen, "%s: x %s and w %s must be 4-D", op,
                       hg_shape_str(x, bx, sizeof bx),
                       hg_shape_str(w, bw, sizeof bw));
    if (x->dim[1] != w->dim[1] || w->dim[2] != attr->conv.kh ||
        w->dim[3] != attr->conv.kw)
        return hg_kerr(err, errlen,
                       "%s: x %s and w %s: channels or kernel %dx%d do not match",
                       op, hg_shape_str(x, bx, sizeof bx),
                       hg_shape_str(w, bw, sizeof bw), attr->conv.kh,
                       attr->conv.kw);
    int64_t oh = out_size(x->dim[2], attr->conv.kh, attr->conv.stride_h,
                          attr->conv.pad_h);
    int64_t ow = out_size(x->dim[3], attr->conv.kw, attr->conv.stride_w,
                          attr->conv.pad_w);
    if (oh <= 0 || ow <= 0)
        return hg_kerr(err, errlen, "%s: x %s too small for kernel %dx%d pad %dx%d",
                       op, hg_shape_str(x, bx, sizeof bx), attr->conv.kh,
                       attr->conv.kw, attr->conv.pad_h, attr->conv.pad_w);
    y->ndim = 4;
    y->dim[0] = x->dim[0];
    y->dim[1] = w->dim[0];
    y->dim[2] = oh;
    y->dim[3] = ow;
    return 0;
}

HG_SHAPE_FN(conv2d)
{
    HG_CHECK(n_in == 2);
    if (check_f32("conv2d", in_dt, 0, err, errlen) ||
        check_f32("conv2d", in_dt, 1, err, errlen) ||
        conv_geom("conv2d", &in[0], &in[1], attr, out, err, errlen))
        return -1;
    *out_dt = HG_F32;
    return 0;
}

/* (dy[N,O,OH,OW], w[O,C,KH,KW], x_ref[N,C,H,W]) -> dx like x_ref */
HG_SHAPE_FN(conv2d_bwd_data)
{
    SHAPE_BUFS;
    struct hg_shape y;
    HG_CHECK(n_in == 3);
    for (int i = 0; i < 3; i++)
        if (check_f32("conv2d_bwd_data", in_dt, i, err, errlen))
            return -1;
    if (conv_geom("conv2d_bwd_data", &in[2], &in[1], attr, &y, err, errlen))
        return -1;
    if (!hg_shape_equal(&y, &in[0]))
        return hg_kerr(err, errlen,
                       "conv2d_bwd_data: dy %s does not match w %s and x %s",
                       SB(0), SB(1), SB(2));
    *out = in[2];
    *out_dt = HG_F32;
    return 0;
}

/* (x[N,C,H,W], dy[N,O,OH,OW]) -> dw[O,C,KH,KW] */
HG_SHAPE_FN(conv2d_bwd_filter)
{
    SHAPE_BUFS;
    struct hg_shape w, y;
    HG_CHECK(n_in == 2);
    if (check_f32("conv2d_bwd_filter", in_dt, 0, err, errlen) ||
        check_f32("conv2d_bwd_filter", in_dt, 1, err, errlen) ||
        check_ndim("conv2d_bwd_filter", in, 0, 4, 4, err, errlen) ||
        check_ndim("conv2d_bwd_filter", in, 1, 4, 4, err, errlen) ||
        conv_attr_ok(attr, "conv2d_bwd_filter", err, errlen))
        return -1;
    w.ndim = 4;
    w.dim[0] = in[1].dim[1];
    w.dim[1] = in[0].dim[1];
    w.dim[2] = attr->conv.kh;
    w.dim[3] = attr->conv.kw;
    if (conv_geom("conv2d_bwd_filter", &in[0], &w, attr, &y, err, errlen))
        return -1;
    if (!hg_shape_equal(&y, &in[1]))
        return hg_kerr(err, errlen,
                       "conv2d_bwd_filter: dy %s does not match x %s and kernel "
                       "%dx%d", SB(1), SB(0), attr->conv.kh, attr->conv.kw);
    *out = w;
    *out_dt = HG_F32;
    return 0;
}

/* All three conv ops: 2 * N*OH*OW * O * C*KH*KW flops. */
static double conv_flops(const struct hg_shape *w, const struct hg_shape *y)
{
    return 2.0 * (double)y->dim[0] * (double)y->dim[2] * (double)y->dim[3] *
           numel(w);
}

HG_COST_FN(conv2d)
{
    (void)attr;
    cost->flops = conv_flops(&in[1], out);
    cost->bytes = in_bytes(in, n_in) + 4.0 * numel(out);
}

HG_COST_FN(conv2d_bwd_data)
{
    (void)attr;
    cost->flops = conv_flops(&in[1], &in[0]);
    (void)n_in; /* x_ref is only read for its shape */
    cost->bytes = in_bytes(in, 2) + 4.0 * numel(out);
}

HG_COST_FN(conv2d_bwd_filter)
{
    (void)attr;
    cost->flops = conv_flops(out, &in[1]);
    cost->bytes = in_bytes(in, n_in) + 4.0 * numel(out);
}

/* Workspace: the kernels process the batch in chunks of nb images with
 * nb = min(N, max(1, HG_CONV_WS_CAP / per_image)); per image they need
 * cols [C*KH*KW, OH*OW] and a [O, OH*OW] GEMM result / transposed dy.
 * The kernels derive nb from ctx->ws_bytes, so any size >= one image works. */
/* One im2col slot [CKK, P] per thread (kernels/cpu/conv.c); the filter
 * gradient also keeps [NG, O, CKK] partials, NG = min(N, 16), halved
 * while above 32 MiB (the same rule as conv_groups in conv.c). */
static size_t conv_ws(int64_t o, int64_t ckk, int64_t p, int nthreads)
{
    (void)o;
    return (size_t)(nthreads > 0 ? nthreads : 1) * (size_t)ckk * (size_t)p *
           sizeof(float);
}

HG_WS_FN(conv2d) /* (x, w) -> y */
{
    (void)n_in; (void)attr;
    return conv_ws(in[1].dim[0], in[1].dim[1] * in[1].dim[2] * in[1].dim[3],
                   out->dim[2] * out->dim[3], nthreads);
}

HG_WS_FN(conv2d_bwd_data) /* (dy, w, x_ref) -> dx */
{
    (void)n_in; (void)attr; (void)out;
    return conv_ws(in[1].dim[0], in[1].dim[1] * in[1].dim[2] * in[1].dim[3],
                   in[0].dim[2] * in[0].dim[3], nthreads);
}

HG_WS_FN(conv2d_bwd_filter) /* (x, dy) -> dw */
{
    (void)n_in; (void)attr;
    int64_t n = in[0].dim[0], o = out->dim[0];
    int64_t ckk = out->dim[1] * out->dim[2] * out->dim[3];
    int64_t ng = n < 16 ? n : 16;
    while (ng > 1 && (size_t)(ng * o * ckk) * sizeof(float) > ((size_t)32 << 20))
        ng /= 2;
    if (ng < 1)
        ng = 1;
    return (size_t)(ng * o * ckk) * sizeof(float) +
           conv_ws(o, ckk, in[1].dim[2] * in[1].dim[3], nthreads);
}

HG_SHAPE_FN(maxpool2d)
{
    SHAPE_BUFS;
    int kh = attr->pool.kh, kw = attr->pool.kw, st = attr->pool.stride,
        pad = attr->pool.pad;
    HG_CHECK(n_in == 1);
    if (check_f32("maxpool2d", in_dt, 0, err, errlen) ||
        check_ndim("maxpool2d", in, 0, 4, 4, err, errlen))
        return -1;
    /* torch: stride > 0 (we do not default it to the kernel), pad <= k/2 */
    if (kh <= 0 || kw <= 0 || st <= 0 || pad < 0 || 2 * pad > kh || 2 * pad > kw)
        return hg_kerr(err, errlen,
                       "maxpool2d: bad attributes kernel %dx%d stride %d pad %d",
                       kh, kw, st, pad);
    int64_t oh = out_size(in[0].dim[2], kh, st, pad);
    int64_t ow = out_size(in[0].dim[3], kw, st, pad);
    if (oh <= 0 || ow <= 0)
        return hg_kerr(err, errlen, "maxpool2d: x %s too small for kernel %dx%d",
                       SB(0), kh, kw);
    *out = in[0];
    out->dim[2] = oh;
    out->dim[3] = ow;
    *out_dt = HG_F32;
    return 0;
}

HG_COST_FN(pool) /* maxpool2d (x) -> y, maxpool2d_bwd (x, dy) -> dx */
{
    double pooled = n_in >= 2 ? numel(&in[1]) : numel(out);
    cost->flops = pooled * attr->pool.kh * attr->pool.kw;
    cost->bytes = in_bytes(in, n_in) + 4.0 * numel(out);
}

/* ---- generic rules ------------------------------------------------------ */

/* like_first/second/third: the shape of input 0/1/2.  The dtype is input
 * 0's (the data being moved: reshape_like, sum_to, slice_bwd, expand_like),
 * except like_third (embedding_bwd (ids, dy, w_ref)) which takes w_ref's. */
HG_SHAPE_FN(like_first)
{
    (void)attr; (void)err; (void)errlen;
    HG_CHECK(n_in >= 1);
    *out = in[0];
    *out_dt = in_dt[0];
    return 0;
}

HG_SHAPE_FN(like_second)
{
    (void)attr; (void)err; (void)errlen;
    HG_CHECK(n_in >= 2);
    *out = in[1];
    *out_dt = in_dt[0];
    return 0;
}

HG_SHAPE_FN(like_third)
{
    (void)attr; (void)err; (void)errlen;
    HG_CHECK(n_in >= 3);
    *out = in[2];
    *out_dt = in_dt[2];
    return 0;
}

HG_SHAPE_FN(broadcast)
{
    SHAPE_BUFS;
    const struct hg_shape *a = &in[0], *b = &in[1];
    (void)attr;
    HG_CHECK(n_in == 2);
    if (in_dt[0] != in_dt[1])
        return hg_kerr(err, errlen, "broadcast: a is %s, b is %s",
                       hg_dtype_name(in_dt[0]), hg_dtype_name(in_dt[1]));
    int nd = a->ndim > b->ndim ? a->ndim : b->ndim;
    out->ndim = nd;
    for (int i = 0; i < nd; i++) {
        int ia = a->ndim - nd + i, ib = b->ndim - nd + i;
        int64_t da = ia >= 0 ? a->dim[ia] : 1, db = ib >= 0 ? b->dim[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return hg_kerr(err, errlen,
                           "broadcast: a %s and b %s: dim %d is %lld vs %lld",
                           SB(0), SB(1), i, (long long)da, (long long)db);
        out->dim[i] = da == 1 ? db : da;
    }
    *out_dt = in_dt[0];
    return 0;
}

HG_COST_FN(elementwise)
{
    /* The rule does not see which op it is: one flop per output element. */
    (void)attr;
    cost->flops = numel(out);
    cost->bytes = in_bytes(in, n_in) + 4.0 * numel(out);
}

HG_COST_FN(copy)
{
    (void)attr;
    cost->flops = 0;
    cost->bytes = in_bytes(in, n_in) + 4.0 * numel(out);
}

HG_COST_FN(rowwise) /* softmax family: max, exp, sum, scale */
{
    (void)attr;
    cost->flops = 5.0 * numel(out);
    cost->bytes = in_bytes(in, n_in) + 4.0 * numel(out);
}

/* ---- normalisation, embeddings ----------------------------------------- */

HG_SHAPE_FN(layernorm_g) /* (x[..,D], dy[..,D]) -> [D] */
{
    SHAPE_BUFS;
    (void)attr;
    HG_CHECK(n_in == 2);
    if (check_f32("layernorm_bwd_g", in_dt, 0, err, errlen) ||
        check_f32("layernorm_bwd_g", in_dt, 1, err, errlen) ||
        check_ndim("layernorm_bwd_g", in, 0, 1, HG_MAX_DIMS, err, errlen))
        return -1;
    if (!hg_shape_equal(&in[0], &in[1]))
        return hg_kerr(err, errlen, "layernorm_bwd_g: x %s and dy %s differ",
                       SB(0), SB(1));
    out->ndim = 1;
    out->dim[0] = in[0].dim[in[0].ndim - 1];
    *out_dt = HG_F32;
    return 0;
}

HG_COST_FN(layernorm)
{
    (void)attr;
    cost->flops = 8.0 * numel(&in[0]);
    cost->bytes = in_bytes(in, n_in) + 4.0 * numel(out);
}

HG_SHAPE_FN(embedding) /* (w[V,D], ids[..] i32) -> [..,D] */
{
    SHAPE_BUFS;
    HG_CHECK(n_in == 2);
    if (attr->emb.vocab > 0 &&
        (attr->emb.row0 < 0 || attr->emb.row0 + in[0].dim[0] > attr->emb.vocab))
        return hg_kerr(err, errlen, "embedding: a shard of rows [%lld, %lld) of a vocabulary "
                       "of %lld", (long long)attr->emb.row0,
                       (long long)(attr->emb.row0 + in[0].dim[0]), (long long)attr->emb.vocab);
    if (check_f32("embedding", in_dt, 0, err, errlen) ||
        check_ndim("embedding", in, 0, 2, 2, err, errlen) ||
        check_ndim("embedding", in, 1, 0, HG_MAX_DIMS - 1, err, errlen))
        return -1;
    if (in_dt[1] != HG_I32)
        return hg_kerr(err, errlen, "embedding: ids %s are %s, expected i32",
                       SB(1), hg_dtype_name(in_dt[1]));
    *out = in[1];
    out->dim[out->ndim++] = in[0].dim[1];
    *out_dt = HG_F32;
    return 0;
}

HG_COST_FN(embedding)
{
    (void)attr;
    if (n_in >= 3) { /* bwd (ids, dy, w_ref) -> dw: zero + accumulate */
        cost->flops = numel(&in[1]);
        cost->bytes = 4.0 * (numel(&in[0]) + 2.0 * numel(&in[1]) + numel(out));
    } else { /* (w, ids) -> rows: read the rows, write them */
        cost->flops = 0;
        cost->bytes = 4.0 * (numel(&in[1]) + 2.0 * numel(out));
    }
}

/* ---- layout ------------------------------------------------------------- */

HG_SHAPE_FN(reshape)
{
    SHAPE_BUFS;
    int infer = -1;
    int64_t known = 1;
    HG_CHECK(n_in == 1);
    if (attr->reshape.ndim < 1 || attr->reshape.ndim > HG_MAX_DIMS)
        return hg_kerr(err, errlen, "reshape: target rank %d", attr->reshape.ndim);
    out->ndim = attr->reshape.ndim;
    for (int i = 0; i < attr->reshape.ndim; i++) {
        int64_t d = attr->reshape.dim[i];
        if (d == 0) {
            if (i >= in[0].ndim)
                return hg_kerr(err, errlen,
                               "reshape: x %s has no dim %d to copy", SB(0), i);
            d = in[0].dim[i];
        } else if (d == -1) {
            if (infer >= 0)
                return hg_kerr(err, errlen, "reshape: more than one -1");
            infer = i;
            continue;
        } else if (d < 0) {
            return hg_kerr(err, errlen, "reshape: bad dim %lld", (long long)d);
        }
        out->dim[i] = d;
        known *= d;
    }
    int64_t n = hg_shape_numel(&in[0]);
    if (infer >= 0) {
        if (known == 0 || n % known)
            return hg_kerr(err, errlen, "reshape: cannot infer dim %d of x %s",
                           infer, SB(0));
        out->dim[infer] = n / known;
        known *= out->dim[infer];
    }
    if (known != n)
        return hg_kerr(err, errlen, "reshape: x %s to %s: %lld != %lld elements",
                       SB(0), hg_shape_str(out, sb[1], sizeof sb[1]),
                       (long long)n, (long long)known);
    *out_dt = in_dt[0];
    return 0;
}

HG_SHAPE_FN(permute)
{
    SHAPE_BUFS;
    int seen[HG_MAX_DIMS] = {0};
    HG_CHECK(n_in == 1);
    if (attr->permute.ndim != in[0].ndim)
        return hg_kerr(err, errlen, "permute: x %s with a %d-axis permutation",
                       SB(0), attr->permute.ndim);
    out->ndim = in[0].ndim;
    for (int i = 0; i < in[0].ndim; i++) {
        int p = attr->permute.perm[i];
        if (p < 0 || p >= in[0].ndim || seen[p]++)
            return hg_kerr(err, errlen, "permute: x %s: bad permutation entry "
                           "%d at %d", SB(0), p, i);
        out->dim[i] = in[0].dim[p];
    }
    *out_dt = in_dt[0];
    return 0;
}

HG_SHAPE_FN(concat)
{
    SHAPE_BUFS;
    if (n_in < 1 || n_in > HG_MAX_INPUTS)
        return hg_kerr(err, errlen, "concat: %d inputs", n_in);
    int ax = norm_axis(attr->concat.axis, in[0].ndim);
    if (ax < 0)
        return hg_kerr(err, errlen, "concat: axis %d out of range for %s",
                       attr->concat.axis, SB(0));
    *out = in[0];
    for (int i = 1; i < n_in; i++) {
        int ok = in[i].ndim == in[0].ndim && in_dt[i] == in_dt[0];
        for (int d = 0; ok && d < in[0].ndim; d++)
            ok = d == ax || in[i].dim[d] == in[0].dim[d];
        if (!ok)
            return hg_kerr(err, errlen,
                           "concat: input %d %s (%s) does not match input 0 %s "
                           "(%s) off axis %d", i, SB(i), hg_dtype_name(in_dt[i]),
                           SB(0), hg_dtype_name(in_dt[0]), ax);
        out->dim[ax] += in[i].dim[ax];
    }
    *out_dt = in_dt[0];
    return 0;
}

HG_SHAPE_FN(slice)
{
    SHAPE_BUFS;
    HG_CHECK(n_in == 1);
    int ax = norm_axis(attr->slice.axis, in[0].ndim);
    if (ax < 0)
        return hg_kerr(err, errlen, "slice: axis %d out of range for %s",
                       attr->slice.axis, SB(0));
    int64_t s = attr->slice.start, l = attr->slice.len;
    if (s < 0 || l < 0 || s + l > in[0].dim[ax]) /* an empty shard: l 0 */
        return hg_kerr(err, errlen, "slice: x %s axis %d [%lld, %lld) out of range",
                       SB(0), ax, (long long)s, (long long)(s + l));
    *out = in[0];
    out->dim[ax] = l;
    *out_dt = in_dt[0];
    return 0;
}

HG_SHAPE_FN(masked_fill) /* (s[B,(H,)Tq,Tk] f32 [, keep[B,Tk] i32]) */
{
    SHAPE_BUFS;
    (void)attr;
    if (n_in < 1 || n_in > 2)
        return hg_kerr(err, errlen, "masked_fill: %d inputs, expected 1 or 2",
                       n_in);
    if (check_f32("masked_fill", in_dt, 0, err, errlen) ||
        check_ndim("masked_fill", in, 0, 3, 4, err, errlen))
        return -1;
    if (n_in == 2) {
        const struct hg_shape *s = &in[0], *k = &in[1];
        if (in_dt[1] != HG_I32 || k->ndim != 2 || k->dim[0] != s->dim[0] ||
            k->dim[1] != s->dim[s->ndim - 1])
            return hg_kerr(err, errlen,
                           "masked_fill: keep %s (%s) must be i32 [B,Tk] for s %s",
                           SB(1), hg_dtype_name(in_dt[1]), SB(0));
    }
    *out = in[0];
    *out_dt = HG_F32;
    return 0;
}

/* ---- fused attention ------------------------------------------------------ */

/* (q[B,H,Tq,Dh], k[B,H,Tk,Dh], v[B,H,Tk,Dh] [, then nf more f32 like q]
 * [, keep[B,Tk] i32] [, ids[B] i32 when attr ids]): checks all of them */
static int attn_check(const char *op, const struct hg_shape *in,
                      const enum hg_dtype *in_dt, int n_in, int nf,
                      const union hg_attr *attr, char *err, size_t errlen)
{
    SHAPE_BUFS;
    if (attr->attn.ids) {
        if (n_in < 4 + nf)
            return hg_kerr(err, errlen, "%s: %d inputs, expected the sample ids last", op,
                           n_in);
        n_in--;
        const struct hg_shape *s = &in[n_in];
        if (in_dt[n_in] != HG_I32 || s->ndim != 1 || s->dim[0] != in[0].dim[0])
            return hg_kerr(err, errlen, "%s: sample ids %s (%s) must be i32 [B] for q %s",
                           op, SB(n_in), hg_dtype_name(in_dt[n_in]), SB(0));
    }
    if (n_in < 3 + nf || n_in > 4 + nf)
        return hg_kerr(err, errlen, "%s: %d inputs, expected %d or %d", op, n_in,
                       3 + nf, 4 + nf);
    for (int i = 0; i < 3 + nf; i++)
        if (check_f32(op, in_dt, i, err, errlen) || check_ndim(op, in, i, 4, 4, err, errlen))
            return -1;
    const struct hg_shape *q = &in[0], *k = &in[1], *v = &in[2];
    if (k->dim[0] != q->dim[0] || k->dim[1] != q->dim[1] || k->dim[3] != q->dim[3] ||
        !hg_shape_equal(k, v))
        return hg_kerr(err, errlen, "%s: q %s, k %s, v %s: expected [B,H,Tq,Dh], "
                       "[B,H,Tk,Dh], [B,H,Tk,Dh]", op, SB(0), SB(1), SB(2));
    for (int i = 3; i < 3 + nf; i++)
        if (!hg_shape_equal(&in[i], q))
            return hg_kerr(err, errlen, "%s: input %d %s must be q's shape %s", op, i,
                           SB(i), SB(0));
    if (n_in == 4 + nf) {
        const struct hg_shape *m = &in[3 + nf];
        if (in_dt[3 + nf] != HG_I32 || m->ndim != 2 || m->dim[0] != q->dim[0] ||
            m->dim[1] != k->dim[2])
            return hg_kerr(err, errlen, "%s: keep %s (%s) must be i32 [B,Tk] for k %s",
                           op, SB(3 + nf), hg_dtype_name(in_dt[3 + nf]), SB(1));
    }
    return 0;
}

HG_SHAPE_FN(attention) /* (q, k, v [, keep] [, ids]) -> [B,H,Tq,Dh] */
{
    if (attn_check("attention", in, in_dt, n_in, 0, attr, err, errlen))
        return -1;
    *out = in[0];
    *out_dt = HG_F32;
    return 0;
}

HG_SHAPE_FN(attention_bwd) /* (q, k, v, do [, keep] [, ids]) -> dq, or dk and dv */
{
    if (attn_check("attention_bwd", in, in_dt, n_in, 1, attr, err, errlen))
        return -1;
    if (attr->attn.which == 0) {
        *out = in[0]; /* dq [B,H,Tq,Dh] */
    } else if (attr->attn.which == 1 || attr->attn.which == 2) {
        /* dk, dv: [2,B,H,Tk,Dh]; dq, dk, dv: [3,B,H,T,Dh]: the stack's
         * axis outermost, so each gradient is one contiguous slice (a
         * view of the stack, no copy) */
        const struct hg_shape *k = &in[1];
        if (attr->attn.which == 2 && in[0].dim[2] != k->dim[2]) {
            SHAPE_BUFS;
            return hg_kerr(err, errlen, "attention_bwd: which 2 needs Tq == Tk: q %s, k %s",
                           SB(0), SB(1));
        }
        *out = (struct hg_shape){.ndim = 5, .dim = {1 + attr->attn.which, k->dim[0],
                                                    k->dim[1], k->dim[2], k->dim[3]}};
    } else {
        return hg_kerr(err, errlen, "attention_bwd: which %d, expected 0 (dq), 1 (dk, dv) "
                       "or 2 (all three)", attr->attn.which);
    }
    *out_dt = HG_F32;
    return 0;
}

/* B*H, Tq, Tk, Dh of q [B,H,Tq,Dh] and k [B,H,Tk,Dh] */
static void attn_dims(const struct hg_shape *in, double *bh, double *tq, double *tk,
                      double *dh)
{
    *bh = (double)in[0].dim[0] * (double)in[0].dim[1];
    *tq = (double)in[0].dim[2];
    *tk = (double)in[1].dim[2];
    *dh = (double)in[0].dim[3];
}

/* Two GEMMs (q k^T, P v) and the row work (mask, softmax, dropout) on
 * [Tq,Tk]; the bytes are the inputs and the output only. */
HG_COST_FN(attention)
{
    double bh, tq, tk, dh;
    (void)attr;
    attn_dims(in, &bh, &tq, &tk, &dh);
    cost->flops = bh * (4.0 * tq * tk * dh + 8.0 * tq * tk);
    cost->bytes = in_bytes(in, n_in) + 4.0 * numel(out);
}

/* dq: q k^T, do v^T, dS k (3 GEMMs); dk, dv: those two and P'^T do, dS^T q
 * (4 GEMMs); all three: 5; the row work twice (P, dP) */
HG_COST_FN(attention_bwd)
{
    double bh, tq, tk, dh;
    attn_dims(in, &bh, &tq, &tk, &dh);
    const double gemms = 3.0 + attr->attn.which;
    cost->flops = bh * (gemms * 2.0 * tq * tk * dh + 16.0 * tq * tk);
    cost->bytes = in_bytes(in, n_in) + 4.0 * numel(out);
}

/* One [Tq,Tk] buffer per thread forward, two backward (kernels/cpu/attention.c) */
static size_t attn_ws(const struct hg_shape *in, int bufs, int nthreads)
{
    return (size_t)(nthreads > 0 ? nthreads : 1) * (size_t)bufs * (size_t)in[0].dim[2] *
           (size_t)in[1].dim[2] * sizeof(float);
}

HG_WS_FN(attention)
{
    (void)n_in; (void)out; (void)attr;
    return attn_ws(in, 1, nthreads);
}

HG_WS_FN(attention_bwd)
{
    (void)n_in; (void)out; (void)attr;
    return attn_ws(in, 2, nthreads);
}

/* ---- reductions ---------------------------------------------------------- */

HG_SHAPE_FN(reduce) /* SUM, MEAN (x) */
{
    SHAPE_BUFS;
    HG_CHECK(n_in == 1);
    if (check_f32("reduce", in_dt, 0, err, errlen))
        return -1;
    if (attr->reduce.axis == HG_AXIS_ALL) {
        out->ndim = 1;
        out->dim[0] = 1;
    } else {
        int ax = norm_axis(attr->reduce.axis, in[0].ndim);
        if (ax < 0)
            return hg_kerr(err, errlen, "reduce: axis %d out of range for %s",
                           attr->reduce.axis, SB(0));
        *out = in[0];
        out->dim[ax] = 1;
    }
    *out_dt = HG_F32;
    return 0;
}

HG_COST_FN(reduce)
{
    (void)attr;
    cost->flops = numel(&in[0]);
    cost->bytes = in_bytes(in, n_in > 1 ? 1 : n_in) + 4.0 * numel(out);
}

/* ---- losses -------------------------------------------------------------- */

static int loss_check(const char *op, const struct hg_shape *in,
                      const enum hg_dtype *in_dt, char *err, size_t errlen)
{
    char b0[96], b1[96];
    const struct hg_shape *x = &in[0], *t = &in[1];
    int ok;
    if (check_f32(op, in_dt, 0, err, errlen) ||
        check_ndim(op, in, 0, 1, HG_MAX_DIMS, err, errlen))
        return -1;
    ok = in_dt[1] == HG_I32 && t->ndim == x->ndim - 1;
    for (int i = 0; ok && i < t->ndim; i++)
        ok = t->dim[i] == x->dim[i];
    if (!ok)
        return hg_kerr(err, errlen, "%s: target %s (%s) must be i32 %s minus "
                       "the class axis", op, hg_shape_str(t, b1, sizeof b1),
                       hg_dtype_name(in_dt[1]), hg_shape_str(x, b0, sizeof b0));
    return 0;
}

HG_SHAPE_FN(loss) /* (logits[..,C], target[..] i32) -> [1] */
{
    (void)attr;
    HG_CHECK(n_in == 2);
    if (loss_check("loss", in, in_dt, err, errlen))
        return -1;
    out->ndim = 1;
    out->dim[0] = 1;
    *out_dt = HG_F32;
    return 0;
}

HG_SHAPE_FN(loss_bwd) /* (logits, target, dloss[1]) -> like logits */
{
    SHAPE_BUFS;
    (void)attr;
    HG_CHECK(n_in == 3);
    if (loss_check("loss_bwd", in, in_dt, err, errlen) ||
        check_f32("loss_bwd", in_dt, 2, err, errlen))
        return -1;
    if (hg_shape_numel(&in[2]) != 1)
        return hg_kerr(err, errlen, "loss_bwd: dloss %s must have 1 element",
                       SB(2));
    *out = in[0];
    *out_dt = HG_F32;
    return 0;
}

HG_COST_FN(loss)
{
    (void)attr;
    cost->flops = 5.0 * numel(&in[0]);
    cost->bytes = in_bytes(in, n_in) + 4.0 * numel(out);
}

/* ---- optimizer updates ----------------------------------------------------- */

HG_SHAPE_FN(update) /* (param, grad, state...) all f32, same shape; no output */
{
    SHAPE_BUFS;
    (void)attr;
    for (int i = 0; i < n_in; i++) {
        if (check_f32("update", in_dt, i, err, errlen))
            return -1;
        if (!hg_shape_equal(&in[i], &in[0]))
            return hg_kerr(err, errlen, "update: input %d %s differs from "
                           "param %s", i, SB(i), SB(0));
    }
    memset(out, 0, sizeof *out);
    *out_dt = HG_F32;
    return 0;
}

HG_COST_FN(sgd) /* read p, g, buf; write p, buf */
{
    double n = numel(&in[0]);
    (void)n_in; (void)out; (void)attr;
    cost->flops = 6.0 * n;
    cost->bytes = 4.0 * 5.0 * n;
}

HG_COST_FN(adamw) /* read p, g, m, v; write p, m, v */
{
    double n = numel(&in[0]);
    (void)n_in; (void)out;
    cost->flops = (attr->adam.l2 ? 17.0 : 16.0) * n;
    cost->bytes = 4.0 * 7.0 * n;
}

HG_COST_FN(adadelta) /* read p, g, sq, acc; write p, sq, acc */
{
    double n = numel(&in[0]);
    (void)n_in; (void)out;
    cost->flops = (attr->adadelta.weight_decay != 0.0f ? 18.0 : 16.0) * n;
    cost->bytes = 4.0 * 7.0 * n;
}

/* ---- communication: what moves, checked here; where it lives is the
 * executor's (the span of a flat block) ------------------------------------ */

static int check_comm(const char *op, const union hg_attr *attr, char *err, size_t errlen)
{
    if (attr->comm.group < 0 || attr->comm.peer < -1)
        return hg_kerr(err, errlen, "%s: group %d, peer %d (group >= 0, peer >= -1)", op,
                       attr->comm.group, attr->comm.peer);
    return 0;
}

HG_SHAPE_FN(comm_span) /* (first[, last]) f32, count floats; no output */
{
    HG_CHECK(n_in >= 1 && n_in <= 2);
    for (int i = 0; i < n_in; i++)
        if (check_f32("comm span", in_dt, i, err, errlen))
            return -1;
    int64_t c = attr->comm.count;
    if (attr->comm.dtype != HG_F32)
        return hg_kerr(err, errlen, "comm span: comm.dtype %d, spans are f32",
                       attr->comm.dtype);
    if (n_in == 1 && c != 0)
        return hg_kerr(err, errlen, "comm span: count %lld with one input (0: the "
                       "tensor itself)", (long long)c);
    for (int i = 0; n_in == 2 && i < n_in; i++)
        if (c < hg_shape_numel(&in[i]))
            return hg_kerr(err, errlen, "comm span: count %lld is less than input %d's "
                           "%lld floats", (long long)c, i, (long long)hg_shape_numel(&in[i]));
    memset(out, 0, sizeof *out);
    *out_dt = HG_F32;
    return check_comm("comm span", attr, err, errlen);
}

HG_SHAPE_FN(send) /* (x) of comm.dtype; no output */
{
    HG_CHECK(n_in == 1);
    (void)in;
    if (in_dt[0] != (enum hg_dtype)attr->comm.dtype)
        return hg_kerr(err, errlen, "send: input is %s, comm.dtype says %s",
                       hg_dtype_name(in_dt[0]), hg_dtype_name((enum hg_dtype)attr->comm.dtype));
    memset(out, 0, sizeof *out);
    *out_dt = in_dt[0];
    return check_comm("send", attr, err, errlen);
}

HG_SHAPE_FN(recv) /* () -> [comm.dim] of comm.dtype */
{
    (void)in, (void)in_dt, (void)n_in;
    int nd = attr->comm.ndim;
    if (nd < 1 || nd > HG_MAX_DIMS)
        return hg_kerr(err, errlen, "recv: ndim %d outside [1, %d]", nd, HG_MAX_DIMS);
    if (attr->comm.dtype < 0 || attr->comm.dtype >= HG_DTYPE_COUNT)
        return hg_kerr(err, errlen, "recv: dtype %d is not a dtype", attr->comm.dtype);
    memset(out, 0, sizeof *out);
    out->ndim = nd;
    for (int i = 0; i < nd; i++) {
        if (attr->comm.dim[i] < 1)
            return hg_kerr(err, errlen, "recv: dim %d is %d (symbols are resolved by "
                           "the graph)", i, (int)attr->comm.dim[i]);
        out->dim[i] = attr->comm.dim[i];
    }
    *out_dt = (enum hg_dtype)attr->comm.dtype;
    return check_comm("recv", attr, err, errlen);
}

HG_SHAPE_FN(reshard) /* (x) f32 -> x with dim[axis] = len */
{
    HG_CHECK(n_in == 1);
    if (check_f32("reshard", in_dt, 0, err, errlen))
        return -1;
    int ax = attr->reshard.axis;
    if (attr->reshard.group < 0 || ax < -1 || ax >= in[0].ndim ||
        (ax >= 0 && attr->reshard.len < 0))
        return hg_kerr(err, errlen, "reshard: group %d, axis %d, len %lld for an input of "
                       "%d dims", attr->reshard.group, ax, (long long)attr->reshard.len,
                       in[0].ndim);
    *out = in[0];
    if (ax >= 0)
        out->dim[ax] = attr->reshard.len;
    *out_dt = HG_F32;
    return 0;
}

/* bytes this rank sends or receives once (an algorithm's factor, 2(W-1)/W
 * for a ring AllReduce, is the planner's); no flops */
HG_COST_FN(comm)
{
    double n = n_in == 2 ? (double)attr->comm.count
               : n_in == 1 ? numel(&in[0]) : numel(out);
    cost->flops = 0;
    cost->bytes = n * (double)hg_dtype_size((enum hg_dtype)attr->comm.dtype);
}
