/* ew-math.h - private to kernels/: the arithmetic of the elementwise ops,
 * written once and compiled by both backends (HG_HD: __host__ __device__
 * under nvcc).  The CPU kernels (kernels/cpu/) and the CUDA kernels
 * (kernels/cuda/) call these, so the CPU tests exercise the very formulas
 * the GPU runs.  Transcendentals (erff, expf, tanhf, sqrtf) come from each
 * side's math library: CUDA's are within 2 ulp of glibc's, so activations
 * agree to rounding, and +,-,*,/ agree exactly when nvcc does not contract
 * (kernels/cuda is built with --fmad=false).
 */
#ifndef HG_EW_MATH_H
#define HG_EW_MATH_H

#include <math.h>
#include <stdint.h>

#include "kernels/hg_kernels.h"

#define HG_INV_SQRT2 0.70710678118654752440f
#define HG_INV_SQRT2PI 0.39894228040143267794f

HG_HD static inline float hg_ew_relu(float x) { return x > 0.0f ? x : 0.0f; }
HG_HD static inline float hg_ew_relu_bwd(float x, float dy)
{
    return x > 0.0f ? dy : 0.0f;
}
/* exact (erf) GELU, as torch's default */
HG_HD static inline float hg_ew_gelu(float x)
{
    return 0.5f * x * (1.0f + erff(x * HG_INV_SQRT2));
}
HG_HD static inline float hg_ew_gelu_bwd(float x, float dy)
{
    return dy * (0.5f * (1.0f + erff(x * HG_INV_SQRT2)) +
                 x * HG_INV_SQRT2PI * expf(-0.5f * x * x));
}
HG_HD static inline float hg_ew_tanh(float x) { return tanhf(x); }
/* from the output y = tanh(x) */
HG_HD static inline float hg_ew_tanh_bwd(float y, float dy)
{
    return dy * (1.0f - y * y);
}

/* Dropout of element i of a row whose key is key, s = 1/(1-p). */
HG_HD static inline float hg_ew_dropout(float x, uint64_t key, uint64_t i,
                                        float p, float s)
{
    return hg_rand_u(key, i) >= p ? x * s : 0.0f;
}

/* Dropout keyed by what an element is, not where it runs
 * (docs/reproducibility.md, "Dropout"): a tensor [B, d1, .., dk] is rows
 * (every axis but the last; a [B] tensor: one element a row).  The key of
 * the row at (b, c1, .., c(k-1)) chains hg_rand_key from key =
 * hg_rand_key(seed, step) over the sample id of row b, then c1, ..
 * c(k-1); element j of the row draws hg_rand_u(row key, j).  So a mask does
 * not depend on the batch's other rows, its padding, its split across
 * ranks or micro-batches.  One link of the chain: */
HG_HD static inline uint64_t hg_ew_drop_link(uint64_t key, uint64_t c)
{
    return hg_rand_key(key, c);
}

/* The key of row r (row-major over the row axes dim[0..na-1]) of a tensor:
 * ids [dim[0]] the sample ids (NULL: b itself). */
HG_HD static inline uint64_t hg_ew_drop_row_key(uint64_t key, const int32_t *ids,
                                                const int64_t *dim, int na, int64_t r)
{
    int64_t c[HG_MAX_DIMS];
    for (int a = na - 1; a >= 0; a--) {
        c[a] = r % dim[a];
        r /= dim[a];
    }
    uint64_t k = hg_ew_drop_link(key, (uint64_t)(ids ? (int64_t)ids[c[0]] : c[0]));
    for (int a = 1; a < na; a++)
        k = hg_ew_drop_link(k, (uint64_t)c[a]);
    return k;
}

/* A tensor's row axes (na) and row length (L) as above. */
HG_HD static inline int hg_ew_drop_rows(const struct hg_shape *s, int64_t *L)
{
    if (s->ndim < 2) {
        *L = 1;
        return 1;
    }
    *L = s->dim[s->ndim - 1];
    return s->ndim - 1;
}

/* torch.optim.SGD for one element: g = grad*gs + wd*p; momentum buffer;
 * nesterov; p -= lr * step direction. */
HG_HD static inline void hg_ew_sgd(float *p, float grad, float *buf, float lr,
                                   float gs, float mom, float wd, int nesterov)
{
    float g = grad * gs + wd * *p;
    if (mom != 0.0f) {
        float b = mom * *buf + g;
        *buf = b;
        g = nesterov ? g + mom * b : b;
    }
    *p -= lr * g;
}

/* torch.optim.AdamW / Adam (l2) for one element, in torch's order:
 * step_size = lr / (1 - b1^t), bc2_sqrt = sqrt(1 - b2^t) (both computed
 * once per step in double), decay = 1 - lr*wd for AdamW, 1 for Adam. */
HG_HD static inline void hg_ew_adamw(float *p, float grad, float *m, float *v,
                                     float gs, float b1, float b2, float eps,
                                     float wd, int l2, float step_size,
                                     float bc2_sqrt, float decay)
{
    float g = grad * gs;
    if (l2)
        g += wd * *p;
    float mi = b1 * *m + (1.0f - b1) * g;
    float vi = b2 * *v + (1.0f - b2) * g * g;
    *m = mi;
    *v = vi;
    *p = *p * decay - step_size * (mi / (sqrtf(vi) / bc2_sqrt + eps));
}

/* torch.optim.Adadelta for one element: std = sqrt(sq + eps),
 * delta = sqrt(acc + eps) / std * g. */
HG_HD static inline void hg_ew_adadelta(float *p, float grad, float *sq,
                                        float *acc, float lr, float gs,
                                        float rho, float eps, float wd)
{
    float g = grad * gs;
    if (wd != 0.0f)
        g += wd * *p;
    float si = rho * *sq + (1.0f - rho) * (g * g);
    float d = sqrtf(*acc + eps) / sqrtf(si + eps) * g;
    *sq = si;
    *acc = rho * *acc + (1.0f - rho) * (d * d);
    *p -= lr * d;
}

#endif
