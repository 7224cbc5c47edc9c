/* optim.c - SGD_STEP, ADAMW_STEP (AdamW, or Adam with adam.l2) and
 * ADADELTA_STEP (torch.optim semantics), in place. */
#include <math.h>

#include "kernels/ew-math.h"
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
    for (int64_t i = 0; i < n; i++)
        hg_ew_sgd(&p[i], grad[i], &buf[i], lr, gs, mom, wd, nesterov);
    return 0;
}

/* (param, grad, m, v), all f32 of one shape; t = ctx->step (1-based).
 * adam.l2 == 0: AdamW, param *= 1 - lr*wd first; adam.l2: Adam, wd*param
 * joins the gradient (torch.optim.Adam) and there is no decoupled decay.
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
    const int l2 = a->attr->adam.l2 != 0;
    const float decay = l2 ? 1.0f : 1.0f - lr * wd;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++)
        hg_ew_adamw(&p[i], grad[i], &m[i], &v[i], gs, b1, b2, eps, wd, l2,
                    step_size, bc2_sqrt, decay);
    return 0;
}

/* (param, grad, square_avg, acc_delta), all f32 of one shape; torch's
 * order: std = sqrt(sq + eps), delta = sqrt(acc + eps) / std * g. */
HG_CPU_FN(adadelta_step)
{
    HG_CHECK(a->n_in == 4);
    for (int i = 0; i < 4; i++)
        HG_CHECK(a->in[i].dtype == HG_F32 &&
                 hg_shape_equal(&a->in[i].shape, &a->in[0].shape));
    int64_t n = hg_shape_numel(&a->in[0].shape);
    float *p = a->in[0].data, *sq = a->in[2].data, *acc = a->in[3].data;
    const float *grad = a->in[1].data;
    const float lr = a->ctx->lr, gs = a->ctx->grad_scale;
    const float rho = a->attr->adadelta.rho, eps = a->attr->adadelta.eps;
    const float wd = a->attr->adadelta.weight_decay;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++)
        hg_ew_adadelta(&p[i], grad[i], &sq[i], &acc[i], lr, gs, rho, eps, wd);
    return 0;
}
