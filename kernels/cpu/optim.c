/* optim.c - SGD_STEP and ADAMW_STEP (torch.optim semantics), in place. */
#include <math.h>

#include "kernels/ops-impl.h"

/* (param, grad, momentum_buf), all f32 of one shape; see ops-impl.h. */
HG_CPU_FN(sgd_step)
{
    HG_CHECK(a->n_in == 3);
    for (int i = 0; i < 3; i++)
        HG_CHECK(a->in[i].dtype == HG_F32 &&
                 hg_shape_equal(&a->in[i].shape, &a->in[0].shape));
    int64_t n = hg_shape_numel(&a->in[0].shape);
    float *p = a->in[0].data, *buf = a->in[2].data;
    const float *grad = a->in[1].data;
    const float lr = a->ctx->lr, gs = a->ctx->grad_scale;
    const float mom = a->attr->sgd.momentum, wd = a->attr->sgd.weight_decay;
    const int nesterov = a->attr->sgd.nesterov;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        float g = grad[i] * gs + wd * p[i];
        if (mom != 0.0f) {
            float b = mom * buf[i] + g;
            buf[i] = b;
            g = nesterov ? g + mom * b : b;
        }
        p[i] -= lr * g;
    }
    return 0;
}

/* (param, grad, m, v), all f32 of one shape; t = ctx->step (1-based).
 * Computed in torch's order: step_size = lr / (1 - b1^t),
 * denom = sqrt(v) / sqrt(1 - b2^t) + eps, p -= step_size * m / denom. */
HG_CPU_FN(adamw_step)
{
    HG_CHECK(a->n_in == 4);
    for (int i = 0; i < 4; i++)
        HG_CHECK(a->in[i].dtype == HG_F32 &&
                 hg_shape_equal(&a->in[i].shape, &a->in[0].shape));
    HG_CHECK(a->ctx->step >= 1);
    int64_t n = hg_shape_numel(&a->in[0].shape);
    float *p = a->in[0].data, *m = a->in[2].data, *v = a->in[3].data;
    const float *grad = a->in[1].data;
    const float lr = a->ctx->lr, gs = a->ctx->grad_scale;
    const float b1 = a->attr->adam.beta1, b2 = a->attr->adam.beta2;
    const float eps = a->attr->adam.eps, wd = a->attr->adam.weight_decay;
    const double t = (double)a->ctx->step;
    const float step_size = (float)((double)lr / (1.0 - pow((double)b1, t)));
    const float bc2_sqrt = (float)sqrt(1.0 - pow((double)b2, t));
    const float decay = 1.0f - lr * wd;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        float g = grad[i] * gs;
        float mi = b1 * m[i] + (1.0f - b1) * g;
        float vi = b2 * v[i] + (1.0f - b2) * g * g;
        m[i] = mi;
        v[i] = vi;
        p[i] = p[i] * decay - step_size * (mi / (sqrtf(vi) / bc2_sqrt + eps));
    }
    return 0;
}
