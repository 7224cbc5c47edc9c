/* policy_task.c - the learned policy on one graph and one cluster: the
 * grouping, features, simulator and reference (the best baseline), the
 * network built for its sizes, a forward pass from the master copy, and
 * the actions (a group's placement and aggregation) as strategies. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "planner/hg_planner.h"
#include "planner/policy-impl.h"

#define CP_SCALE 4    /* capacity-proportional replicas, as the baselines */

static void set_input(struct hg__pol_net *n, int t, const float *x)
{
    const struct hg_tensor_info *ti = hg_graph_tensor(n->g, t);
    memcpy(hg_exec_data(n->ex, t), x, (size_t)hg_shape_numel(&ti->shape) * sizeof(float));
}

double hg__pol_reward(const struct hg_sim_result *r, double ref)
{
    double x = r->iter_s / ref;
    if (r->oom)
        x += 10 * (1 + fmin(r->overflow, 10));
    return -sqrt(x);
}

/* The reference's actions of baseline strategy b into ref[G][2]
 * (placement, aggregation or -1 where model parallel). */
static void baseline_actions(const struct hg_strategy *b, enum hg_baseline k, int D, int *ref)
{
    int even = k == HG_BASE_EV_PS || k == HG_BASE_EV_AR;
    for (int j = 0; j < b->ngroups; j++) {
        const struct hg_gcfg *cf = &b->cfg[j];
        int mp = cf->mode == HG_MODE_MP;
        ref[2 * j] = mp ? cf->device : even ? D : D + 1;
        ref[2 * j + 1] = mp ? -1 : cf->agg == HG_AGG_AR;
    }
}

/* The fastest of the baselines on t's grouping, each from the order of
 * `from` (nops ints) and scheduled by sched: its actions into act[G][2],
 * its order into order[nops], its simulation into *rb. */
static void best_baseline(struct hg_policy_task *t,
                          void (*sched)(struct hg_sim *, const struct hg_pgraph *,
                                        struct hg_strategy *, struct hg_sim_result *,
                                        enum hg_sched_policy *),
                          const int *from, int *act, int *order, struct hg_sim_result *rb)
{
    const struct hg_pgraph *pg = t->pg;
    double best = INFINITY;
    for (int k = 0; k < HG_BASE_COUNT; k++) {
        struct hg_strategy *b = hg_strategy_copy(t->st);
        struct hg_sim_result r;
        memcpy(b->order, from, (size_t)pg->nops * sizeof(int));
        hg_baseline_apply(b, pg, (enum hg_baseline)k);
        sched(t->sim, pg, b, &r, NULL);
        if (hg_search_cost(&r) < best) {
            best = hg_search_cost(&r);
            *rb = r;
            memcpy(order, b->order, (size_t)pg->nops * sizeof(int));
            baseline_actions(b, (enum hg_baseline)k, pg->ndev, act);
        }
        hg_strategy_free(b);
    }
}

int hg_policy_task_new(struct hg_policy_task **tp, struct hg_policy *p,
                       const struct hg_pgraph *pg, const struct hg_graph *g,
                       const struct hg_pprice *pr, int groups, char *err, size_t errlen)
{
    struct hg_policy_task *t = calloc(1, sizeof(*t));
    HG_CHECK(t != NULL);
    *tp = NULL;
    t->pg = pg;
    t->st = hg_strategy_new(pg->nops, pg->ndev, 1);
    hg_strategy_group(t->st, pg, pr, groups > 0 ? groups : 64);
    t->sim = hg_sim_new(pg, pr);
    t->best = hg_strategy_copy(t->st);
    t->best_cost = INFINITY;
    /* the reference: the best baseline on this grouping, list-scheduled
     * (hg_sched_list); its order is the order samples are simulated in
     * (the id order hides or exaggerates transfers the schedule does not),
     * its actions a feature (ref [ngroups][2]: placement, aggregation).
     * Not hg_sched_best's: trained against that, the policy learns nothing
     * that beats it (a 40000-update pretraining kept update 0), and the
     * committed policy was trained against this one */
    int G = t->st->ngroups, D = pg->ndev;
    size_t sz = (size_t)G * 2 * sizeof(int), osz = (size_t)pg->nops * sizeof(int);
    int *ref = t->ref_act = malloc(sz);
    t->imit_act = malloc(sz);
    t->place_act = malloc(sz);
    t->placed_act = malloc(sz);
    t->place_order = malloc(osz);
    t->prob_p = calloc((size_t)G * HG_POLICY_ACTIONS(D), sizeof(float));
    t->prob_a = calloc((size_t)G * 2, sizeof(float));
    HG_CHECK(ref && t->imit_act && t->place_act && t->placed_act && t->place_order &&
             t->prob_p && t->prob_a);
    for (int k = 0; k < 2 * G; k++)
        ref[k] = -1;
    /* each baseline from the order of the fastest so far (t->st's) */
    struct hg_sim_result rb = {0};
    best_baseline(t, hg_sched_list, t->st->order, ref, t->st->order, &rb);
    memcpy(t->best->order, t->st->order, osz);
    t->ref = rb.iter_s > 0 ? rb.iter_s : 1;
    t->imit_reward = hg__pol_reward(&rb, t->ref);
    memcpy(t->imit_act, ref, sz);
    /* the placement's reference: hgplan's best baseline, each baseline in
     * op-id order (as hg_strategy_group leaves it) kept in the order
     * hg_sched_best keeps (graph order beats both list schedules on most
     * of HeteroG's CNN baselines) */
    int *ids = malloc(osz); /* [nops] */
    HG_CHECK(ids != NULL);
    for (int i = 0; i < pg->nops; i++)
        ids[i] = i;
    best_baseline(t, hg_sched_best, ids, t->place_act, t->place_order, &rb);
    free(ids);
    hg_policy_features(&t->feat, pg, g, pr, t->st, ref);
    if (hg__pol_net_new(&t->net, &p->cfg, G, D, err, errlen) != 0) {
        hg_policy_task_free(t);
        return -1;
    }
    size_t np, ns;
    hg_exec_param_block(t->net.ex, &np);
    hg_exec_state_block(t->net.ex, &ns);
    HG_CHECK(np == p->nparams && ns == p->nstate); /* the same network, other sizes */
    struct hg__pol_net *n = &t->net;
    set_input(n, n->in_group, t->feat.group);
    set_input(n, n->in_dev, t->feat.dev);
    set_input(n, n->in_time, t->feat.time);
    set_input(n, n->in_mem, t->feat.mem);
    set_input(n, n->in_edge, t->feat.edge);
    set_input(n, n->in_mask, t->feat.mask);
    set_input(n, n->in_ref_p, t->feat.ref_place);
    set_input(n, n->in_ref_a, t->feat.ref_agg);
    for (int a = 0; a < 2; a++) {
        enum hg_agg agg = a ? HG_AGG_AR : HG_AGG_PS;
        hg_gcfg_even(&t->dp[0][a], pg->c, agg);
        hg_gcfg_prop(&t->dp[1][a], pg->c, CP_SCALE, agg);
    }
    t->node_dp = calloc((size_t)pg->c->nnodes * 2, sizeof(struct hg_gcfg));
    HG_CHECK(t->node_dp != NULL);
    for (int nn = 0; nn < pg->c->nnodes; nn++)
        for (int a = 0; a < 2; a++) {
            struct hg_gcfg *cf = &t->node_dp[nn * 2 + a];
            cf->mode = HG_MODE_DP;
            cf->agg = a ? HG_AGG_AR : HG_AGG_PS;
            for (int d = 0; d < D; d++)
                cf->rep[d] = pg->c->devices[d].node == nn;
            cf->ps = hg_gcfg_choose_ps(pg->c, cf->rep);
        }
    *tp = t;
    return 0;
}

void hg_policy_task_free(struct hg_policy_task *t)
{
    if (!t)
        return;
    hg__pol_net_free(&t->net);
    hg_sim_free(t->sim);
    hg_strategy_free(t->best);
    hg_policy_feat_free(&t->feat);
    hg_strategy_free(t->st);
    free(t->ref_act);
    free(t->imit_act);
    free(t->placed_act);
    free(t->place_act);
    free(t->place_order);
    free(t->prob_p);
    free(t->prob_a);
    free(t->node_dp);
    free(t);
}

const struct hg_policy_feat *hg_policy_task_feat(const struct hg_policy_task *t)
{
    return &t->feat;
}

double hg_policy_task_ref(const struct hg_policy_task *t)
{
    return t->ref;
}

const struct hg_strategy *hg_policy_task_best(const struct hg_policy_task *t, double *cost)
{
    if (cost)
        *cost = t->best_cost;
    return t->best_cost < INFINITY ? t->best : NULL;
}

/* The master copy into t's executor (params and AdamW state). */
static void load_master(const struct hg_policy *p, struct hg_policy_task *t)
{
    size_t n;
    memcpy(hg_exec_param_block(t->net.ex, &n), p->params, p->nparams * sizeof(float));
    if (p->nstate)
        memcpy(hg_exec_state_block(t->net.ex, &n), p->state, p->nstate * sizeof(float));
}

int hg_policy_forward(struct hg_policy *p, struct hg_policy_task *t, float *place, float *agg,
                      char *err, size_t errlen)
{
    load_master(p, t);
    struct hg_step s = {.step = (uint64_t)p->steps + 1, .lr = p->cfg.lr, .grad_scale = 1,
                        .nthreads = 1};
    if (hg_exec_run(t->net.ex, &s, 0, t->net.nfwd, err, errlen) != 0)
        return -1;
    int G = t->feat.ngroups, D = t->feat.ndev;
    if (place)
        memcpy(place, hg_exec_data(t->net.ex, t->net.place),
               (size_t)G * HG_POLICY_ACTIONS(D) * sizeof(float));
    if (agg)
        memcpy(agg, hg_exec_data(t->net.ex, t->net.agg), (size_t)G * 2 * sizeof(float));
    return 0;
}

/* Group k's cfg for placement action a (< D: MP on a; D: even DP; D + 1:
 * proportional DP; D + 2 + j: even DP over device j's node) and
 * aggregation b (0: PS, 1: AllReduce). */
const struct hg_gcfg *hg__pol_action_cfg(const struct hg_policy_task *t, int a, int b,
                                        struct hg_gcfg *mp)
{
    int D = t->feat.ndev;
    if (a < D) {
        hg_gcfg_mp(mp, a);
        return mp;
    }
    if (a < D + 2)
        return &t->dp[a - D][b];
    return &t->node_dp[t->pg->c->devices[a - D - 2].node * 2 + b];
}

void hg__pol_apply_action(struct hg_policy_task *t, int k, int a, int b)
{
    struct hg_gcfg mp;
    t->st->cfg[k] = *hg__pol_action_cfg(t, a, b, &mp);
}

double hg__pol_urand(uint64_t *rng)
{
    return (double)(hg_rand(rng) >> 11) * 0x1.0p-53;
}

int hg__pol_sample(const float *p, int n, uint64_t *rng)
{
    double u = hg__pol_urand(rng), c = 0;
    for (int i = 0; i < n; i++) {
        c += p[i];
        if (u < c)
            return i;
    }
    return n - 1;
}

/* t->st set to the actions act[G][2], fully simulated (what the delta
 * simulator's next move is a delta of) into r where not NULL. */
void hg__pol_set_actions(struct hg_policy_task *t, const int *act, struct hg_sim_result *r)
{
    struct hg_sim_result x;
    for (int k = 0; k < t->feat.ngroups; k++)
        hg__pol_apply_action(t, k, act[2 * k], act[2 * k + 1]);
    hg_sim_full(t->sim, t->st, r ? r : &x);
}
