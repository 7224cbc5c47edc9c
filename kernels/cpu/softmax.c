/* softmax.c - softmax, log-softmax and the cross-entropy / NLL losses over
 * the last axis (CPU reference kernels, f32; targets i32).
 *
 * Losses are sums over rows.  The sum is deterministic whatever the thread
 * count: rows are cut into NCHUNK fixed chunks, each summed in order, and
 * the chunk sums are combined in order.
 */
#include <math.h>
#include <string.h>

#include "kernels/cpu/cpu-impl.h"

#define PAR_MIN 32768 /* below this many elements, stay on one thread */
#define NCHUNK HG_NCHUNK

/* log(sum(exp(x))) of one row, max-subtracted. */
static float row_lse(const float *restrict x, int64_t C)
{
    float mx = -INFINITY;
    for (int64_t j = 0; j < C; j++)
        mx = x[j] > mx ? x[j] : mx;
    if (mx == -INFINITY)
        return -INFINITY;
    double s = 0;
    for (int64_t j = 0; j < C; j++)
        s += expf(x[j] - mx);
    return mx + (float)log(s);
}

HG_CPU_FN(softmax)
{
    const float *x = a->in[0].data; /* [rows,C] */
    float *y = a->out->data;        /* [rows,C] */
    int64_t rows, C;

    hg_rows_cols(&a->in[0].shape, &rows, &C);
#pragma omp parallel for if (rows * C >= PAR_MIN) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const float *restrict xr = x + r * C;
        float *restrict yr = y + r * C;
        float mx = -INFINITY;
        for (int64_t j = 0; j < C; j++)
            mx = xr[j] > mx ? xr[j] : mx;
        float s = 0;
        for (int64_t j = 0; j < C; j++) {
            yr[j] = expf(xr[j] - mx);
            s += yr[j];
        }
        const float inv = 1.0f / s;
#pragma omp simd
        for (int64_t j = 0; j < C; j++)
            yr[j] *= inv;
    }
    return 0;
}

/* (y, dy) -> dx = y * (dy - sum(dy * y)) */
HG_CPU_FN(softmax_bwd)
{
    const float *y = a->in[0].data;  /* [rows,C] */
    const float *dy = a->in[1].data; /* [rows,C] */
    float *dx = a->out->data;        /* [rows,C] */
    int64_t rows, C;

    hg_rows_cols(&a->in[0].shape, &rows, &C);
#pragma omp parallel for if (rows * C >= PAR_MIN) schedule(static)
    for (int64_t r = 0; r < rows; r++)
        hg_cpu_softmax_bwd_row(y + r * C, dy + r * C, dx + r * C, C);
    return 0;
}

HG_CPU_FN(log_softmax)
{
    const float *x = a->in[0].data; /* [rows,C] */
    float *y = a->out->data;        /* [rows,C] */
    int64_t rows, C;

    hg_rows_cols(&a->in[0].shape, &rows, &C);
#pragma omp parallel for if (rows * C >= PAR_MIN) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const float *restrict xr = x + r * C;
        float *restrict yr = y + r * C;
        const float lse = row_lse(xr, C);
#pragma omp simd
        for (int64_t j = 0; j < C; j++)
            yr[j] = xr[j] - lse;
    }
    return 0;
}

/* (y, dy) -> dx = dy - exp(y) * sum(dy) */
HG_CPU_FN(log_softmax_bwd)
{
    const float *y = a->in[0].data;  /* [rows,C] */
    const float *dy = a->in[1].data; /* [rows,C] */
    float *dx = a->out->data;        /* [rows,C] */
    int64_t rows, C;

    hg_rows_cols(&a->in[0].shape, &rows, &C);
#pragma omp parallel for if (rows * C >= PAR_MIN) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const float *restrict yr = y + r * C, *restrict gr = dy + r * C;
        float *restrict dr = dx + r * C;
        float s = 0;
#pragma omp simd reduction(+ : s)
        for (int64_t j = 0; j < C; j++)
            s += gr[j];
        for (int64_t j = 0; j < C; j++)
            dr[j] = gr[j] - expf(yr[j]) * s;
    }
    return 0;
}

/* ---- losses ---------------------------------------------------------------- */

enum loss_kind { LOSS_CE, LOSS_NLL };

static int bad_target(const struct hg_kargs *a, const char *op, const int32_t *t,
                      const int64_t *bad, int64_t C)
{
    int64_t row = -1;
    for (int c = 0; c < NCHUNK; c++) {
        if (bad[c] >= 0) {
            row = bad[c];
            break;
        }
    }
    if (row < 0)
        return 0;
    return hg_kerr(a->ctx->err, a->ctx->errlen,
                   "%s: target %d at row %ld outside [0,%ld)", op, (int)t[row],
                   (long)row, (long)C);
}

/* (logits or logp [rows,C], target [rows] i32) -> loss [1], the sum over the
 * rows whose target is not ignore_index of
 * (1-s) * (-logp[t]) + s/C * sum_j(-logp[j]). */
static int loss_fwd(const struct hg_kargs *a, enum loss_kind kind)
{
    const float *x = a->in[0].data;   /* [rows,C] logits (CE) or logp (NLL) */
    const int32_t *t = a->in[1].data; /* [rows] */
    float *loss = a->out->data;       /* [1] */
    const int ign = a->attr->ce.ignore_index;
    const float sm = a->attr->ce.smoothing;
    double part[NCHUNK];
    int64_t bad[NCHUNK];
    int64_t rows, C;

    hg_rows_cols(&a->in[0].shape, &rows, &C);
    HG_CHECK(a->in[1].dtype == HG_I32);
    HG_CHECK(hg_shape_numel(&a->in[1].shape) == rows);
#pragma omp parallel for if (rows * C >= PAR_MIN) schedule(static)
    for (int c = 0; c < NCHUNK; c++) {
        int64_t lo = rows * c / NCHUNK, hi = rows * (c + 1) / NCHUNK;
        double s = 0;
        bad[c] = -1;
        for (int64_t r = lo; r < hi; r++) {
            const float *restrict xr = x + r * C;
            const int32_t tr = t[r];
            if (tr == ign)
                continue;
            if (tr < 0 || tr >= C) {
                bad[c] = r;
                break;
            }
            /* -logp[j] = lse - x[j]  (lse = 0 for NLL's log-probabilities) */
            const float lse = kind == LOSS_CE ? row_lse(xr, C) : 0.0f;
            double l = (1.0f - sm) * (lse - xr[tr]);
            if (sm != 0.0f) {
                double sx = 0;
                for (int64_t j = 0; j < C; j++)
                    sx += lse - xr[j];
                l += sm / C * sx;
            }
            s += l;
        }
        part[c] = s;
    }
    if (bad_target(a, kind == LOSS_CE ? "cross_entropy" : "nll", t, bad, C))
        return -1;
    double s = 0;
    for (int c = 0; c < NCHUNK; c++)
        s += part[c];
    loss[0] = (float)s;
    return 0;
}

/* (logits or logp_ref [rows,C], target [rows], dloss [1]) -> dx [rows,C]:
 * CE:  dloss * (softmax_j - (1-s)[j==t] - s/C)
 * NLL: -dloss * ((1-s)[j==t] + s/C); ignored rows get 0. */
static int loss_bwd(const struct hg_kargs *a, enum loss_kind kind)
{
    const float *x = a->in[0].data;   /* [rows,C] */
    const int32_t *t = a->in[1].data; /* [rows] */
    const float dl = ((const float *)a->in[2].data)[0];
    float *dx = a->out->data;         /* [rows,C] */
    const int ign = a->attr->ce.ignore_index;
    const float sm = a->attr->ce.smoothing;
    int64_t bad[NCHUNK];
    int64_t rows, C;

    hg_rows_cols(&a->in[0].shape, &rows, &C);
    HG_CHECK(a->in[1].dtype == HG_I32);
    HG_CHECK(hg_shape_numel(&a->in[1].shape) == rows);
    const float off = sm / (float)C; /* smoothing mass per class */
#pragma omp parallel for if (rows * C >= PAR_MIN) schedule(static)
    for (int c = 0; c < NCHUNK; c++) {
        int64_t lo = rows * c / NCHUNK, hi = rows * (c + 1) / NCHUNK;
        bad[c] = -1;
        for (int64_t r = lo; r < hi; r++) {
            const float *restrict xr = x + r * C;
            float *restrict dr = dx + r * C;
            const int32_t tr = t[r];
            if (tr == ign) {
                memset(dr, 0, (size_t)C * sizeof(float));
                continue;
            }
            if (tr < 0 || tr >= C) {
                if (bad[c] < 0)
                    bad[c] = r;
                memset(dr, 0, (size_t)C * sizeof(float));
                continue;
            }
            if (kind == LOSS_CE) {
                const float lse = row_lse(xr, C);
                for (int64_t j = 0; j < C; j++)
                    dr[j] = dl * (expf(xr[j] - lse) - off);
            } else {
                for (int64_t j = 0; j < C; j++)
                    dr[j] = -dl * off;
            }
            dr[tr] -= dl * (1.0f - sm);
        }
    }
    if (bad_target(a, kind == LOSS_CE ? "cross_entropy_bwd" : "nll_bwd", t,
                   bad, C))
        return -1;
    return 0;
}

HG_CPU_FN(cross_entropy) { return loss_fwd(a, LOSS_CE); }
HG_CPU_FN(cross_entropy_bwd) { return loss_bwd(a, LOSS_CE); }
HG_CPU_FN(nll) { return loss_fwd(a, LOSS_NLL); }
HG_CPU_FN(nll_bwd) { return loss_bwd(a, LOSS_NLL); }
