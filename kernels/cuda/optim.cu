/* optim.cu - SGD_STEP, ADAMW_STEP (AdamW, or Adam with adam.l2) and
 * ADADELTA_STEP (torch.optim semantics), in place (CUDA kernels; semantics
 * in kernels/ops-impl.h, reference kernels/cpu/optim.c).
 *
 * One thread per element runs ew-math.h's update on registers.  The
 * per-step scalars are computed on the host exactly as the CPU computes
 * them, and the per-element arithmetic is +,-,*,/ and sqrtf, correctly
 * rounded on both sides (no --use_fast_math, --fmad=false): the updated
 * tensors are the CPU's bits.
 */
#include <math.h>

#include "kernels/cuda/cuda-impl.h"

/* every input f32 and of param's shape */
static long long check_update(const struct hg_kargs *a, int n_in)
{
    HG_CHECK(a->n_in == n_in);
    for (int i = 0; i < n_in; i++)
        HG_CHECK(a->in[i].dtype == HG_F32 &&
                 hg_shape_equal(&a->in[i].shape, &a->in[0].shape));
    return hg_shape_numel(&a->in[0].shape);
}

/* ---- SGD ------------------------------------------------------------------ */

__global__ static void sgd_kernel(float *p, const float *grad, float *buf,
                                  long long n, float lr, float gs, float mom,
                                  float wd, int nesterov)
{
    HG_CU_FOR(i, n) {
        float pi = p[i], bi = buf[i];
        hg_ew_sgd(&pi, grad[i], &bi, lr, gs, mom, wd, nesterov);
        p[i] = pi;
        if (mom != 0.0f) /* the buffer is only used (and changed) with momentum */
            buf[i] = bi;
    }
}

/* (param, grad, momentum_buf), all f32 of one shape */
extern "C" HG_CUDA_FN(sgd_step)
{
    const long long n = check_update(a, 3);
    float *p = (float *)a->in[0].data;              /* [n] */
    const float *grad = (const float *)a->in[1].data; /* [n] */
    float *buf = (float *)a->in[2].data;            /* [n] */

    if (n == 0)
        return 0;
    sgd_kernel<<<hg_cu_blocks(a, n), HG_CU_THREADS, 0, hg_cu(a)->stream>>>(
        p, grad, buf, n, a->ctx->lr, a->ctx->grad_scale, a->attr->sgd.momentum,
        a->attr->sgd.weight_decay, a->attr->sgd.nesterov);
    HG_CU_LAUNCHED(a);
    return 0;
}

/* ---- AdamW / Adam ------------------------------------------------------------ */

__global__ static void adamw_kernel(float *p, const float *grad, float *m,
                                    float *v, long long n, float gs, float b1,
                                    float b2, float eps, float wd, int l2,
                                    float step_size, float bc2_sqrt, float decay)
{
    HG_CU_FOR(i, n) {
        float pi = p[i], mi = m[i], vi = v[i];
        hg_ew_adamw(&pi, grad[i], &mi, &vi, gs, b1, b2, eps, wd, l2, step_size,
                    bc2_sqrt, decay);
        p[i] = pi;
        m[i] = mi;
        v[i] = vi;
    }
}

/* (param, grad, m, v), all f32 of one shape; t = ctx->step (1-based) */
extern "C" HG_CUDA_FN(adamw_step)
{
    const long long n = check_update(a, 4);
    float *p = (float *)a->in[0].data;                /* [n] */
    const float *grad = (const float *)a->in[1].data; /* [n] */
    float *m = (float *)a->in[2].data;                /* [n] */
    float *v = (float *)a->in[3].data;                /* [n] */
    const float lr = a->ctx->lr;
    const float b1 = a->attr->adam.beta1, b2 = a->attr->adam.beta2;
    const float wd = a->attr->adam.weight_decay;

    HG_CHECK(a->ctx->step >= 1);
    /* the host's double arithmetic, as kernels/cpu/optim.c */
    const double t = (double)a->ctx->step;
    const float step_size = (float)((double)lr / (1.0 - pow((double)b1, t)));
    const float bc2_sqrt = (float)sqrt(1.0 - pow((double)b2, t));
    const int l2 = a->attr->adam.l2 != 0;
    const float decay = l2 ? 1.0f : 1.0f - lr * wd;
    if (n == 0)
        return 0;
    adamw_kernel<<<hg_cu_blocks(a, n), HG_CU_THREADS, 0, hg_cu(a)->stream>>>(
        p, grad, m, v, n, a->ctx->grad_scale, b1, b2, a->attr->adam.eps, wd, l2,
        step_size, bc2_sqrt, decay);
    HG_CU_LAUNCHED(a);
    return 0;
}

/* ---- Adadelta ------------------------------------------------------------------ */

__global__ static void adadelta_kernel(float *p, const float *grad, float *sq,
                                       float *acc, long long n, float lr,
                                       float gs, float rho, float eps, float wd)
{
    HG_CU_FOR(i, n) {
        float pi = p[i], si = sq[i], ai = acc[i];
        hg_ew_adadelta(&pi, grad[i], &si, &ai, lr, gs, rho, eps, wd);
        p[i] = pi;
        sq[i] = si;
        acc[i] = ai;
    }
}

/* (param, grad, square_avg, acc_delta), all f32 of one shape */
extern "C" HG_CUDA_FN(adadelta_step)
{
    const long long n = check_update(a, 4);
    float *p = (float *)a->in[0].data;                /* [n] */
    const float *grad = (const float *)a->in[1].data; /* [n] */
    float *sq = (float *)a->in[2].data;               /* [n] */
    float *acc = (float *)a->in[3].data;              /* [n] */

    if (n == 0)
        return 0;
    adadelta_kernel<<<hg_cu_blocks(a, n), HG_CU_THREADS, 0, hg_cu(a)->stream>>>(
        p, grad, sq, acc, n, a->ctx->lr, a->ctx->grad_scale,
        a->attr->adadelta.rho, a->attr->adadelta.eps,
        a->attr->adadelta.weight_decay);
    HG_CU_LAUNCHED(a);
    return 0;
}
