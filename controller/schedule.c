/* schedule.c - learning-rate schedules with fairseq's semantics. */
#include <math.h>
#include <string.h>

#include "controller/hg_controller.h"

static const char *const names[HG_LR_KIND_COUNT] = {
    [HG_LR_FIXED] = "fixed",
    [HG_LR_INVERSE_SQRT] = "inverse_sqrt",
    [HG_LR_POLYNOMIAL] = "polynomial_decay",
    [HG_LR_COSINE] = "cosine",
};

int hg_lr_kind_parse(const char *name, enum hg_lr_kind *kind)
{
    for (int k = 0; k < HG_LR_KIND_COUNT; k++)
        if (strcmp(name, names[k]) == 0) {
            *kind = (enum hg_lr_kind)k;
            return 0;
        }
    return -1;
}

const char *hg_lr_kind_name(enum hg_lr_kind kind)
{
    HG_CHECK(kind >= 0 && kind < HG_LR_KIND_COUNT);
    return names[kind];
}

int hg_lr_check(const struct hg_lr_sched *s, char *err, size_t errlen)
{
    if (!(s->lr > 0))
        return hg_kerr(err, errlen, "--lr must be > 0 (got %g)", s->lr);
    if (s->warmup_updates < 0)
        return hg_kerr(err, errlen, "--warmup-updates must be >= 0");
    if (s->warmup_init_lr < 0 || s->min_lr < 0 || s->end_lr < 0)
        return hg_kerr(err, errlen, "learning rates must be >= 0");
    if ((s->kind == HG_LR_POLYNOMIAL || s->kind == HG_LR_COSINE) &&
        s->total_updates <= s->warmup_updates)
        return hg_kerr(err, errlen,
                       "--lr-scheduler %s needs --total-num-update (%lld) > "
                       "--warmup-updates (%lld)",
                       names[s->kind], (long long)s->total_updates,
                       (long long)s->warmup_updates);
    if (s->kind == HG_LR_POLYNOMIAL && !(s->power > 0))
        return hg_kerr(err, errlen, "--power must be > 0");
    if (s->kind == HG_LR_INVERSE_SQRT && s->warmup_init_lr > s->lr)
        return hg_kerr(err, errlen, "--warmup-init-lr must be <= --lr");
    return 0;
}

double hg_lr_at(const struct hg_lr_sched *s, int64_t u)
{
    const double w = (double)s->warmup_updates;
    switch (s->kind) {
    case HG_LR_FIXED:
        /* fairseq: warmup factor (u + 1) / warmup while u < warmup */
        if (s->warmup_updates > 0 && u < s->warmup_updates)
            return s->lr * (double)(u + 1) / w;
        return s->lr;
    case HG_LR_INVERSE_SQRT:
        if (u < s->warmup_updates)
            return s->warmup_init_lr + (double)u * (s->lr - s->warmup_init_lr) / w;
        /* decay_factor = lr * sqrt(warmup); u >= 1 here unless warmup == 0 */
        return s->lr * sqrt(w > 0 ? w : 1.0) / sqrt((double)(u > 0 ? u : 1));
    case HG_LR_POLYNOMIAL:
        if (s->warmup_updates > 0 && u <= s->warmup_updates)
            return s->lr * (double)u / w;
        if (u >= s->total_updates)
            return s->end_lr;
        {
            double left = 1.0 - ((double)u - w) / ((double)s->total_updates - w);
            return (s->lr - s->end_lr) * pow(left, s->power) + s->end_lr;
        }
    case HG_LR_COSINE:
        if (u < s->warmup_updates)
            return s->warmup_init_lr + (double)u * (s->lr - s->warmup_init_lr) / w;
        if (u >= s->total_updates)
            return s->min_lr;
        {
            double t = ((double)u - w) / ((double)s->total_updates - w);
            return s->min_lr + 0.5 * (s->lr - s->min_lr) * (1.0 + cos(3.14159265358979323846 * t));
        }
    default:
        HG_CHECK(!"bad lr schedule");
    }
}
