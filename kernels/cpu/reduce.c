/* reduce.c - SUM and MEAN over one axis or all, and EXPAND_LIKE, their
 * backward (CPU reference kernels, f32).  Deterministic: every output sums
 * its inputs in a fixed order whatever the thread count.
 */
#include <math.h>
#include <string.h>

#include "kernels/cpu/cpu-impl.h"
#include "kernels/shape-plan.h"

#define PAR_MIN 32768 /* below this many elements, stay on one thread */

/* x[outer, A, inner] -> y[outer, 1, inner] = scale * sum over A */
static void sum_axis(const float *x, float *y, int64_t outer, int64_t A,
                     int64_t inner, float scale, int nthreads)
{
    const int64_t n = outer * A * inner;
    (void)n; /* only read by the OpenMP if() clauses */

    if (inner == 1) {
#pragma omp parallel for if (n >= PAR_MIN) schedule(static)
        for (int64_t o = 0; o < outer; o++) {
            const float *restrict xr = x + o * A;
            double s = 0;
            for (int64_t i = 0; i < A; i++)
                s += xr[i];
            y[o] = (float)(s * scale);
        }
        return;
    }
    const int64_t cb = hg_cpu_col_block(inner, outer, nthreads);
    const int64_t nblk = (inner + cb - 1) / cb;
#pragma omp parallel for if (n >= PAR_MIN) schedule(static)
    for (int64_t t = 0; t < outer * nblk; t++) {
        const int64_t o = t / nblk, c0 = (t % nblk) * cb;
        const int64_t len = inner - c0 < cb ? inner - c0 : cb;
        float *restrict yr = y + o * inner + c0;
#pragma omp simd
        for (int64_t j = 0; j < len; j++)
            yr[j] = 0.0f;
        for (int64_t i = 0; i < A; i++) {
            const float *restrict xr = x + (o * A + i) * inner + c0;
#pragma omp simd
            for (int64_t j = 0; j < len; j++)
                yr[j] += xr[j];
        }
        if (scale != 1.0f)
            for (int64_t j = 0; j < len; j++)
                yr[j] *= scale;
    }
}

static int reduce(const struct hg_kargs *a, int mean)
{
    const struct hg_tview *xv = &a->in[0];
    const float *x = xv->data; /* [..] */
    float *y = a->out->data;   /* axis kept with size 1, or [1] */
    const struct hg_shape *s = &xv->shape;
    const int64_t n = hg_shape_numel(s);
    int axis = a->attr->reduce.axis;

    HG_CHECK(xv->dtype == HG_F32);
    if (axis == HG_AXIS_ALL) {
        double t = hg_cpu_sum_all(x, n);
        y[0] = (float)(mean ? (n ? t / (double)n : NAN) : t);
        return 0;
    }
    axis = hg_norm_axis(axis, s->ndim);
    int64_t outer, inner, A = s->dim[axis];
    hg_outer_inner(s, axis, &outer, &inner);
    HG_CHECK(hg_shape_numel(&a->out->shape) == outer * inner);
    if (outer * inner == 0)
        return 0;
    sum_axis(x, y, outer, A, inner, mean ? 1.0f / (float)A : 1.0f,
             a->ctx->nthreads);
    return 0;
}

HG_CPU_FN(sum) { return reduce(a, 0); }
HG_CPU_FN(mean) { return reduce(a, 1); }

/* (dy, x_ref) -> out[x's shape] = alpha * dy broadcast (alpha 0 means 1;
 * alpha < 0 means 1/count, count = numel(x_ref)/numel(dy): MEAN's backward).
 * dy has SUM's output shape (x's with some axes of size 1) or [1].  Axes are
 * aligned right and merged; the last merged axis is the inner loop, either
 * contiguous in dy or a broadcast scalar. */
HG_CPU_FN(expand_like)
{
    const struct hg_tview *dv = &a->in[0];
    const float *dy = dv->data;           /* SUM's output shape, or [1] */
    float *y = a->out->data;              /* x_ref's shape */
    const struct hg_shape *os = &a->out->shape;
    const int64_t n = hg_shape_numel(os);
    const float alpha = hg_mean_alpha(a->attr->reduce.alpha, &dv->shape, &a->in[1].shape);
    int64_t dim[HG_MAX_DIMS], st[HG_MAX_DIMS];

    HG_CHECK(dv->dtype == HG_F32);
    if (n == 0)
        return 0;
    if (hg_shape_numel(&dv->shape) == 1) {
        const float v = alpha * dy[0];
#pragma omp parallel for if (n >= PAR_MIN) schedule(static)
        for (int64_t i = 0; i < n; i++)
            y[i] = v;
        return 0;
    }
    const int m = hg_expand_plan(&dv->shape, os, dim, st); /* dy's strides, merged */
    HG_CHECK(m > 0);
    const int64_t inner = dim[m - 1], is = st[m - 1];
#pragma omp parallel for if (n >= PAR_MIN) schedule(static)
    for (int64_t r = 0; r < n / inner; r++) {
        int64_t o = 0, rr = r;
        for (int k = m - 2; k >= 0; k--) {
            o += (rr % dim[k]) * st[k];
            rr /= dim[k];
        }
        const float *restrict src = dy + o;
        float *restrict yr = y + r * inner;
        if (is == 0) {
            const float v = alpha * src[0];
            for (int64_t i = 0; i < inner; i++)
                yr[i] = v;
        } else {
#pragma omp simd
            for (int64_t i = 0; i < inner; i++)
                yr[i] = alpha * src[i];
        }
    }
    return 0;
}
