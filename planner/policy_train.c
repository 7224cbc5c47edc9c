/* policy_train.c - training the learned policy: REINFORCE steps over the
 * tasks with the executor and AdamW (exploration and self-imitation in a
 * finetune), evaluations of the greedy placement keeping the best policy,
 * and the perturbed clusters a pretraining generalises over. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/hg_planner.h"
#include "planner/policy-impl.h"

/* An action of n drawn from p, or uniformly with probability eps: a
 * policy whose probabilities have settled (every sample its greedy
 * choice: a finetune then sees one reward and learns nothing) still
 * tries other actions; the update pushes towards those that paid. */
static int explore(const float *p, int n, double eps, uint64_t *rng)
{
    if (hg__pol_urand(rng) < eps)
        return (int)(hg__pol_urand(rng) * n) % n;
    return hg__pol_sample(p, n, rng);
}

/* A finetune's start: the last placement, rewarded as its samples are
 * (the training's order), becomes the imitation target where it beats it
 * (bert_large48 on heterog-8gpu: no sample of a 45-s finetune came near
 * the zero-shot placement).  Here rather than in hg_policy_place, which
 * no finetune follows but in hgplan --finetune. */
static void weigh_placed(struct hg_policy_task *t)
{
    struct hg_sim_result r;
    hg__pol_set_actions(t, t->placed_act, &r);
    double rw = hg__pol_reward(&r, t->ref);
    if (rw > t->imit_reward) {
        t->imit_reward = rw;
        memcpy(t->imit_act, t->placed_act, (size_t)t->feat.ngroups * 2 * sizeof(int));
    }
    t->placed_new = 0;
}

/* HG_TEST_POLICY_POISON=N (tests/policy.sh): the Nth update of a
 * training leaves head.dp.weight[0] NaN, as a diverged update would;
 * 0: none. */
static long test_poison(void)
{
    const char *e = getenv("HG_TEST_POLICY_POISON");
    return e ? strtol(e, NULL, 10) : 0;
}

/* One REINFORCE step on t: returns the mean reward of its samples.  The
 * updated weights and AdamW state reach p only where hg__pol_check
 * passes them; else -1 naming the tensor and the update, p as it was
 * (poison: plant a NaN first). */
static int train_step(struct hg_policy *p, struct hg_policy_task *t, int S, int expl,
                      int poison, uint64_t *rng, double *mean, char *err, size_t errlen)
{
    int G = t->feat.ngroups, D = t->feat.ndev, A = HG_POLICY_ACTIONS(D);
    size_t np = (size_t)G * A, na = (size_t)G * 2;
    float *pl = malloc(np * sizeof(float));                 /* [G, 2D+2] */
    float *ag = malloc(na * sizeof(float));                 /* [G, 2] */
    int *act = malloc((size_t)S * G * 2 * sizeof(int));     /* [S][G][2] */
    double *rw = malloc((size_t)S * sizeof(double));        /* [S] */
    HG_CHECK(pl && ag && act && rw);
    /* exploring: one group per sample on average.  The samples are then
     * not the policy's own, and an advantage against a lagging baseline
     * would drift every group towards uniform (pretraining with it fell
     * from -1.06 to -6.95): against the step's other samples the drift
     * cancels */
    double eps = expl ? 1.0 / G : 0;
    int rc = hg_policy_forward(p, t, pl, ag, err, errlen);
    *mean = 0;
    for (int s = 0; rc == 0 && s < S; s++) {
        for (int k = 0; k < G; k++) {
            int *x = &act[((size_t)s * G + k) * 2];
            x[0] = explore(pl + (size_t)k * A, A, eps, rng);
            x[1] = explore(ag + (size_t)k * 2, 2, eps, rng);
            hg__pol_apply_action(t, k, x[0], x[1]);
        }
        struct hg_sim_result r;
        hg_sim_full(t->sim, t->st, &r);
        rw[s] = hg__pol_reward(&r, t->ref);
        if (expl && rw[s] > t->imit_reward) {
            t->imit_reward = rw[s];
            memcpy(t->imit_act, &act[(size_t)s * G * 2], (size_t)G * 2 * sizeof(int));
        }
        if (hg_search_cost(&r) < t->best_cost) {
            t->best_cost = hg_search_cost(&r);
            memcpy(t->best->cfg, t->st->cfg, (size_t)G * sizeof(struct hg_gcfg));
        }
        *mean += rw[s] / S;
    }
    if (rc == 0) {
        if (!t->have_baseline) {
            t->baseline = *mean;
            t->have_baseline = 1;
        }
        /* adv inputs: -(1/S) sum_s advantage_s one-hot_s; the aggregation
         * only where the sample chose data parallelism */
        float *ap = hg_exec_data(t->net.ex, t->net.in_adv_p);
        float *aa = hg_exec_data(t->net.ex, t->net.in_adv_a);
        memset(ap, 0, np * sizeof(float));
        memset(aa, 0, na * sizeof(float));
        for (int s = 0; s < S; s++) {
            double b = expl && S > 1 ? (*mean * S - rw[s]) / (S - 1) : t->baseline;
            float adv = (float)((rw[s] - b) / S);
            for (int k = 0; k < G; k++) {
                const int *x = &act[((size_t)s * G + k) * 2];
                ap[(size_t)k * A + x[0]] -= adv;
                if (x[0] >= D)
                    aa[(size_t)k * 2 + x[1]] -= adv;
            }
        }
        /* a finetune imitates the best strategy it knows (the reference,
         * then its best sample or placement) by as much as that beats the
         * step's mean (self-imitation, the advantage clipped at 0):
         * exploring alone, 8000 updates on inception_v3 left the mean
         * reward where it began (-1.72, samples 3x the reference) */
        float im = expl ? (float)(fmax(0, t->imit_reward - *mean) / S) : 0;
        for (int k = 0; im > 0 && k < G; k++) {
            const int *x = &t->imit_act[(size_t)k * 2];
            ap[(size_t)k * A + x[0]] -= im;
            if (x[0] >= D)
                aa[(size_t)k * 2 + x[1]] -= im;
        }
        t->baseline = 0.9 * t->baseline + 0.1 * *mean;
        struct hg_step st = {.step = (uint64_t)p->steps + 1, .lr = p->cfg.lr,
                             .grad_scale = 1, .nthreads = 1};
        rc = hg_exec_run(t->net.ex, &st, 0, t->net.n, err, errlen);
    }
    if (rc == 0) {
        size_t n;
        if (poison) {
            int w = hg_graph_find(t->net.g, "head.dp.weight");
            HG_CHECK(w >= 0);
            ((float *)hg_exec_data(t->net.ex, w))[0] = NAN;
        }
        /* a diverged update (a NaN or inf gradient, a learning rate too
         * large) stops the training here, before the master copy, which
         * every file is written from */
        const float *pb = hg_exec_param_block(t->net.ex, &n);
        const float *sb = p->nstate ? hg_exec_state_block(t->net.ex, &n) : NULL;
        char why[320];
        if (hg__pol_check(p, pb, sb, why, sizeof(why)) != 0) {
            rc = hg_kerr(err, errlen, "policy update %ld: %s (training stopped; the policy "
                         "stays that of update %ld)", p->steps + 1, why, p->steps);
        } else {
            p->steps++;
            memcpy(p->params, pb, p->nparams * sizeof(float));
            if (p->nstate)
                memcpy(p->state, sb, p->nstate * sizeof(float));
        }
    }
    free(pl);
    free(ag);
    free(act);
    free(rw);
    return rc;
}

/* One point of the reward curve (hg_policy_train_opts.json). */
static void json_line(FILE *f, long step, double reward, double wall)
{
    fprintf(f, "{\"policy_update\": %ld, \"reward\": %.6f, \"wall\": %.3f}\n", step, reward,
            wall);
    fflush(f);
}

/* The scores of p's greedy placements on the tasks (hg_policy_train_opts
 * eval_every), geometric means over the tasks: score, of min(greedy,
 * reference) / reference; tie, of greedy / reference (out of memory: 10);
 * *better: the tasks where the greedy placement is faster. */
static int evaluate(struct hg_policy *p, struct hg_policy_task *const *tasks, int ntasks,
                    double *score, double *tie, int *better, char *err, size_t errlen)
{
    double lsum = 0, ltie = 0;
    *better = 0;
    for (int i = 0; i < ntasks; i++) {
        struct hg_sim_result r;
        struct hg_strategy *s = hg_policy_decode(p, tasks[i], &r, err, errlen);
        if (!s)
            return -1;
        hg_strategy_free(s);
        double ref = tasks[i]->ref, x = !r.oom && r.iter_s < ref ? r.iter_s / ref : 1;
        *better += x < 1;
        lsum += log(x);
        ltie += log(r.oom ? 10 : fmin(r.iter_s / ref, 10));
    }
    *score = exp(lsum / ntasks);
    *tie = exp(ltie / ntasks);
    return 0;
}

/* The policy kept by eval_every: its weights, AdamW state and updates. */
struct snapshot {
    float *params, *state; /* [nparams], [nstate] */
    long steps;
    double score, tie;
};

static int eval_point(struct hg_policy *p, struct hg_policy_task *const *tasks, int ntasks,
                      const struct hg_policy_train_opts *o, struct snapshot *best,
                      struct hg_policy_train_stats *st, double t0, char *err, size_t errlen)
{
    double score, tie;
    int better;
    if (evaluate(p, tasks, ntasks, &score, &tie, &better, err, errlen) != 0)
        return -1;
    st->last_score = score;
    /* of equal scores, the greedy placement nearer the reference where it
     * loses (the placement's moves start from the faster of the two);
     * then the earliest */
    if (score < best->score * (1 - 1e-6) ||
        (score <= best->score * (1 + 1e-6) && tie < best->tie * (1 - 1e-6))) {
        best->score = score;
        best->tie = tie;
        best->steps = p->steps;
        memcpy(best->params, p->params, p->nparams * sizeof(float));
        memcpy(best->state, p->state, p->nstate * sizeof(float));
        st->best_better = better;
    }
    if (o->log) {
        fprintf(o->log, "  policy eval at update %ld: greedy placement x%.4f of the best "
                "baseline (geometric mean of the faster of the two; of greedy alone x%.4f), "
                "faster on %d of %d tasks; best x%.4f at update %ld\n", p->steps, score, tie,
                better, ntasks, best->score, best->steps);
        fflush(o->log);
    }
    if (o->json) {
        fprintf(o->json, "{\"policy_eval\": %ld, \"score\": %.6f, \"greedy\": %.6f, "
                "\"faster\": %d, \"wall\": %.3f}\n", p->steps, score, tie, better,
                hg_now() - t0);
        fflush(o->json);
    }
    return 0;
}

int hg_policy_train(struct hg_policy *p, struct hg_policy_task *const *tasks, int ntasks,
                    const struct hg_policy_train_opts *o, struct hg_policy_train_stats *st,
                    char *err, size_t errlen)
{
    HG_CHECK(ntasks > 0 && (o->steps > 0 || o->seconds > 0));
    memset(st, 0, sizeof(*st));
    double t0 = hg_now();
    int S = o->samples > 0 ? o->samples : 8;
    long every = o->log_every > 0 ? o->log_every : 50;
    /* the sampling stream: the seed and the updates so far (a finetune
     * continues rather than repeats the pretraining's draws) */
    uint64_t rng = hg_mix64(p->cfg.seed ^ hg_mix64((uint64_t)p->steps + 1));
    long cap = o->steps > 0 ? o->steps : -1;
    double *hist = NULL; /* [cap] each step's mean reward (seconds only: grown) */
    size_t hcap = 0;
    double win = 0;
    struct snapshot best = {.score = INFINITY, .tie = INFINITY};
    for (int i = 0; o->explore && i < ntasks; i++)
        if (tasks[i]->placed_new)
            weigh_placed(tasks[i]);
    if (o->eval_every > 0) {
        best.params = malloc(p->nparams * sizeof(float));
        best.state = malloc((p->nstate ? p->nstate : 1) * sizeof(float));
        HG_CHECK(best.params && best.state);
        if (eval_point(p, tasks, ntasks, o, &best, st, t0, err, errlen) != 0)
            goto fail;
    }
    long poison = test_poison();
    for (long s = 0; cap < 0 || s < cap; s++) {
        if (o->seconds > 0 && hg_now() - t0 >= o->seconds)
            break;
        double m;
        if (train_step(p, tasks[s % ntasks], S, o->explore, s + 1 == poison, &rng, &m, err,
                       errlen) != 0)
            goto fail;
        if (o->eval_every > 0 && (s + 1) % o->eval_every == 0 &&
            eval_point(p, tasks, ntasks, o, &best, st, t0, err, errlen) != 0)
            goto fail;
        if ((size_t)s >= hcap) {
            hcap = hcap ? 2 * hcap : 256;
            hist = realloc(hist, hcap * sizeof(double));
            HG_CHECK(hist != NULL);
        }
        hist[s] = m;
        if (o->rewards)
            o->rewards[s] = m;
        st->steps = s + 1;
        win += m;
        if ((s + 1) % every == 0) {
            if (o->log) {
                fprintf(o->log, "  policy step %ld: mean reward %.4f over the last %ld steps "
                        "(%.1f s)\n", s + 1, win / every, every, hg_now() - t0);
                fflush(o->log);
            }
            if (o->json)
                json_line(o->json, s + 1, win / every, hg_now() - t0);
            win = 0;
        }
    }
    if (o->json && st->steps % every != 0) /* the last, shorter window */
        json_line(o->json, st->steps, win / (double)(st->steps % every), hg_now() - t0);
    if (o->eval_every > 0) {
        if (st->steps % o->eval_every != 0 &&
            eval_point(p, tasks, ntasks, o, &best, st, t0, err, errlen) != 0)
            goto fail;
        memcpy(p->params, best.params, p->nparams * sizeof(float));
        memcpy(p->state, best.state, p->nstate * sizeof(float));
        p->steps = best.steps;
        st->best_update = best.steps;
        st->best_score = best.score;
    }
    long n = st->steps, tenth = n / 10 > 0 ? n / 10 : 1;
    for (long s = 0; s < n && s < tenth; s++) {
        st->first_reward += hist[s] / (double)(tenth < n ? tenth : n);
        st->last_reward += hist[n - 1 - s] / (double)(tenth < n ? tenth : n);
    }
    free(hist);
    free(best.params);
    free(best.state);
    st->seconds = hg_now() - t0;
    return 0;
fail:
    free(hist);
    free(best.params);
    free(best.state);
    return -1;
}

/* ---------------------------------------------------------------- clusters */

static double logu(uint64_t *rng, double lo, double hi)
{
    return exp(log(lo) + (log(hi) - log(lo)) * hg__pol_urand(rng));
}

struct hg_cluster *hg_policy_perturb(const struct hg_cluster *c, uint64_t seed)
{
    struct hg_cluster *x = malloc(sizeof(*x));
    HG_CHECK(x != NULL);
    *x = *c;
    int64_t npairs = 0;
    for (int n = 0; n < c->nnodes; n++)
        npairs += (int64_t)c->nodes[n].ndev * (c->nodes[n].ndev - 1) / 2;
    x->nodes = malloc((size_t)c->nnodes * sizeof(*x->nodes));
    x->devices = malloc((size_t)c->ndev * sizeof(*x->devices));
    x->links = malloc((size_t)(c->nlinks ? c->nlinks : 1) * sizeof(*x->links));
    x->pair_link = malloc((size_t)(npairs ? npairs : 1) * sizeof(int));
    HG_CHECK(x->nodes && x->devices && x->links && x->pair_link);
    memcpy(x->nodes, c->nodes, (size_t)c->nnodes * sizeof(*x->nodes));
    memcpy(x->devices, c->devices, (size_t)c->ndev * sizeof(*x->devices));
    memcpy(x->links, c->links, (size_t)c->nlinks * sizeof(*x->links));
    memcpy(x->pair_link, c->pair_link, (size_t)npairs * sizeof(int));
    uint64_t rng = hg_mix64(seed + 0x5eed);
    snprintf(x->name, sizeof(x->name), "%.40s~%llu", c->name, (unsigned long long)seed);
    for (int d = 0; d < x->ndev; d++) {
        struct hg_pdevice *v = &x->devices[d];
        double s = logu(&rng, 0.5, 2);
        v->peak_flops *= s;
        v->mem_bw *= s;
        v->speed *= s;
        v->memory = (int64_t)((double)v->memory * logu(&rng, 0.5, 1.5));
    }
    for (int l = 0; l < x->nlinks; l++)
        x->links[l].bw *= logu(&rng, 0.5, 2);
    for (int n = 0; n < x->nnodes; n++)
        x->nodes[n].nic_bw *= logu(&rng, 0.5, 2);
    return x;
}
