/* search.c - the baselines (EV-PS, EV-AR, CP-PS, CP-AR: data parallelism
 * with even or capacity-proportional replicas and PS or AllReduce; pure
 * model parallelism placed greedily by memory; tensor parallelism over a
 * node, TP-E and TP-S) and the MCMC search
 * (Metropolis-Hastings on delta simulation, FlexFlow's proposal: a new
 * configuration for one group).  Proposals go through a function pointer,
 * the seam for a learned (GNN) policy. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "planner/hg_planner.h"

static const char *const base_names[HG_BASE_COUNT] = {"EV-PS", "EV-AR", "CP-PS", "CP-AR",
                                                      "MP"};

const char *hg_baseline_name(enum hg_baseline b)
{
    return (unsigned)b < HG_BASE_COUNT ? base_names[b] : "?";
}

/* Capacity-proportional replicas: round(4 * capacity), at least 1. */
#define CP_SCALE 4

void hg_baseline_apply(struct hg_strategy *s, const struct hg_pgraph *pg, enum hg_baseline b)
{
    const struct hg_cluster *c = pg->c;
    if (b == HG_BASE_MP) {
        int64_t *need = calloc((size_t)s->ngroups, sizeof(int64_t));
        int *first = malloc((size_t)s->ngroups * sizeof(int));
        HG_CHECK(need && first);
        for (int k = 0; k < s->ngroups; k++)
            first[k] = -1;
        for (int v = 0; v < s->nops; v++) {
            const struct hg_pop *o = &pg->ops[v];
            int k = s->group[v];
            if (first[k] < 0)
                first[k] = v;
            for (int i = 0; i < o->nparams; i++)
                need[k] += pg->pstatic[o->params[i]];
            if (!o->out_grad)
                need[k] += o->out_mem;
        }
        double used[HG_PLAN_MAXDEV] = {0};
        /* groups in the order of their first op; each on the device whose
         * memory would be least full after it */
        int *ord = malloc((size_t)s->ngroups * sizeof(int));
        HG_CHECK(ord != NULL);
        for (int k = 0; k < s->ngroups; k++)
            ord[k] = k;
        for (int i = 1; i < s->ngroups; i++)
            for (int j = i; j > 0 && first[ord[j]] < first[ord[j - 1]]; j--) {
                int x = ord[j];
                ord[j] = ord[j - 1];
                ord[j - 1] = x;
            }
        for (int i = 0; i < s->ngroups; i++) {
            int k = ord[i], best = 0;
            double bf = INFINITY;
            for (int d = 0; d < c->ndev; d++) {
                double f = (used[d] + (double)need[k]) / (double)c->devices[d].memory;
                if (f < bf) {
                    bf = f;
                    best = d;
                }
            }
            used[best] += (double)need[k];
            hg_gcfg_mp(&s->cfg[k], best);
        }
        free(ord);
        free(need);
        free(first);
        return;
    }
    struct hg_gcfg g;
    enum hg_agg agg = b == HG_BASE_EV_PS || b == HG_BASE_CP_PS ? HG_AGG_PS : HG_AGG_AR;
    if (b == HG_BASE_EV_PS || b == HG_BASE_EV_AR)
        hg_gcfg_even(&g, c, agg);
    else
        hg_gcfg_prop(&g, c, CP_SCALE, agg);
    for (int k = 0; k < s->ngroups; k++)
        s->cfg[k] = g;
}

double hg_search_cost(const struct hg_sim_result *r)
{
    return r->oom ? 1e3 * (1 + r->overflow) + r->iter_s : r->iter_s;
}

uint64_t hg_rand(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double urand(uint64_t *x)
{
    return (double)(hg_rand(x) >> 11) * 0x1.0p-53;
}

void hg_propose_random(void *ctx, const struct hg_pgraph *pg, const struct hg_strategy *st,
                       uint64_t *rng, int *group, struct hg_gcfg *cfg)
{
    (void)ctx;
    const struct hg_cluster *c = pg->c;
    int nd = st->ndev;
    int k = (int)(hg_rand(rng) % (uint64_t)st->ngroups);
    *group = k;
    *cfg = st->cfg[k];
    enum hg_agg agg = hg_rand(rng) & 1 ? HG_AGG_PS : HG_AGG_AR;
    /* one proposal in 7 toggles recomputation; the others keep it */
    uint64_t move = hg_rand(rng) % 7;
    if (move == 6) {
        cfg->recompute = !cfg->recompute;
        return;
    }
    switch (move) {
    case 0:
        hg_gcfg_mp(cfg, (int)(hg_rand(rng) % (uint64_t)nd));
        break;
    case 1:
        hg_gcfg_even(cfg, c, agg);
        break;
    case 2:
        hg_gcfg_prop(cfg, c, CP_SCALE, agg);
        break;
    case 3:
        if (cfg->mode == HG_MODE_DP) {
            cfg->agg = cfg->agg == HG_AGG_AR ? HG_AGG_PS : HG_AGG_AR;
            cfg->ps = hg_gcfg_choose_ps(c, cfg->rep);
        } else {
            hg_gcfg_prop(cfg, c, CP_SCALE, agg);
        }
        break;
    case 4:
        if (cfg->mode == HG_MODE_DP) {
            int d = (int)(hg_rand(rng) % (uint64_t)nd), tot = 0;
            int up = (int)(hg_rand(rng) & 1);
            for (int e = 0; e < nd; e++)
                tot += cfg->rep[e];
            if (up && cfg->rep[d] < 16)
                cfg->rep[d]++;
            else if (!up && cfg->rep[d] > 0 && tot > 1)
                cfg->rep[d]--;
            if (cfg->agg == HG_AGG_PS)
                cfg->ps = hg_gcfg_choose_ps(c, cfg->rep);
        } else {
            hg_gcfg_even(cfg, c, agg);
        }
        break;
    default: { /* DP over a random subset of the devices */
        struct hg_gcfg p;
        hg_gcfg_prop(&p, c, CP_SCALE, agg);
        int prop = (int)(hg_rand(rng) & 1), any = 0;
        memset(cfg, 0, sizeof(*cfg));
        cfg->mode = HG_MODE_DP;
        cfg->agg = agg;
        for (int d = 0; d < nd; d++)
            if (hg_rand(rng) & 1) {
                cfg->rep[d] = prop ? p.rep[d] : 1;
                any = 1;
            }
        if (!any)
            cfg->rep[hg_rand(rng) % (uint64_t)nd] = 1;
        cfg->ps = hg_gcfg_choose_ps(c, cfg->rep);
        break;
    }
    }
    cfg->recompute = st->cfg[k].recompute;
}

struct hg_strategy *hg_tp_baseline(const struct hg_pgraph *pg, enum hg_tp_shards how,
                                   char *err, size_t errlen)
{
    const struct hg_cluster *c = pg->c;
    double cap[HG_PLAN_MAXDEV], top = 0;
    if (c->nnodes > 1) {
        hg_kerr(err, errlen, "cluster %s has %d nodes: across nodes the tensor-parallel "
                "group is replicated, which is not planned yet (give a one-node cluster)",
                c->name, c->nnodes);
        return NULL;
    }
    if (hg_cluster_rank_capacities(c, cap, err, errlen) != 0)
        return NULL;
    for (int d = 0; d < c->ndev; d++)
        top = cap[d] > top ? cap[d] : top;
    struct hg_strategy *st = hg_strategy_new(pg->nops, pg->ndev, 1);
    struct hg_gcfg *g = &st->cfg[0];
    memset(g, 0, sizeof *g);
    g->mode = HG_MODE_TP;
    g->agg = HG_AGG_AR;
    for (int d = 0; d < c->ndev; d++) {
        long w = how == HG_TP_SPEED && top > 0 ? lround(8 * cap[d] / top) : 1;
        g->rep[d] = w < 1 ? 1 : (int)w;
    }
    g->device = g->ps = 0; /* the lead: the first device of weight > 0 */
    /* one the lowering refuses is no baseline (the simulator would stop) */
    return hg_lower_keep(pg, st, err, errlen);
}

int hg_strategy_executable(const struct hg_strategy *st, unsigned kinds)
{
    const struct hg_gcfg *c0 = &st->cfg[0];
    /* tensor parallelism runs (controller/tp.c) as every group over every
     * device with a shard each and nothing else: trainer/strategy.c
     * refuses a TP group beside others or over some of the devices, the
     * lowering one that recomputes or sits in a pipeline */
    int ntp = 0;
    for (int k = 0; k < st->ngroups; k++)
        ntp += st->cfg[k].mode == HG_MODE_TP;
    if (ntp > 0) {
        if (!(kinds & HG_EXEC_TP) || ntp < st->ngroups || st->nmicro > 0)
            return 0;
        for (int k = 0; k < st->ngroups; k++) {
            if (st->cfg[k].recompute)
                return 0;
            for (int d = 0; d < st->ndev; d++)
                if (st->cfg[k].rep[d] < 1)
                    return 0;
        }
        return 1;
    }
    for (int k = 0; (kinds & HG_EXEC_NOPS) && k < st->ngroups; k++)
        if (st->cfg[k].mode == HG_MODE_DP && st->cfg[k].agg == HG_AGG_PS)
            return 0;
    if (kinds & HG_EXEC_SPLIT)
        return 1;
    if (st->nmicro > 0) /* a pipeline runs as a split strategy */
        return 0;
    if (!(kinds & (c0->mode == HG_MODE_DP ? HG_EXEC_DP : HG_EXEC_MP)))
        return 0;
    for (int k = 0; k < st->ngroups; k++) {
        const struct hg_gcfg *c = &st->cfg[k];
        if (c->mode != c0->mode)
            return 0;
        if (c->mode != HG_MODE_DP)
            continue;
        for (int d = 0; d < st->ndev; d++)
            if (c->rep[d] < 1 || c->rep[d] != c0->rep[d])
                return 0;
    }
    return 1;
}

/* An executable-only search's move that would leave the executable
 * strategies, applied to every group: a data-parallel cfg's replicas to
 * every group (each keeping its own aggregation when it was data parallel
 * already, its PS re-chosen for the new replicas); a model-parallel cfg
 * on top of the MP baseline's placement of the other groups. */
static void lift(struct hg_strategy *st, const struct hg_pgraph *pg, int g,
                 const struct hg_gcfg *nc)
{
    if (nc->mode == HG_MODE_MP) {
        struct hg_gcfg *was = malloc((size_t)st->ngroups * sizeof *was); /* [ngroups] */
        HG_CHECK(was != NULL);
        memcpy(was, st->cfg, (size_t)st->ngroups * sizeof *was);
        hg_baseline_apply(st, pg, HG_BASE_MP);
        for (int k = 0; k < st->ngroups; k++)
            st->cfg[k].recompute = was[k].recompute;
        free(was);
    } else {
        for (int k = 0; k < st->ngroups; k++) {
            struct hg_gcfg c = *nc;
            if (k != g && st->cfg[k].mode == HG_MODE_DP) {
                c.agg = st->cfg[k].agg;
                c.ps = c.agg == HG_AGG_PS ? hg_gcfg_choose_ps(pg->c, c.rep) : nc->ps;
            }
            c.recompute = st->cfg[k].recompute;
            st->cfg[k] = c;
        }
    }
    st->cfg[g] = *nc;
}

void hg_search_mcmc(struct hg_sim *sim, const struct hg_pgraph *pg, struct hg_strategy *st,
                    const struct hg_search_opts *o, struct hg_search_stats *stats)
{
    double t0 = hg_now();
    memset(stats, 0, sizeof(*stats));
    hg_propose_fn propose = o->propose ? o->propose : hg_propose_random;
    uint64_t rng = o->seed * 0x2545f4914f6cdd1dULL + 1;
    struct hg_sim_result r;
    hg_sim_full(sim, st, &r);
    double t_full = hg_now() - t0, t_step = 0; /* the slowest proposal so far */
    double reserve = (1 + (o->after_full > 0 ? o->after_full : 0)) * t_full;
    double cur = hg_search_cost(&r), best = cur;
    stats->seed_cost = cur;
    double beta = o->beta > 0 ? o->beta : 1000.0 / (cur > 0 ? cur : 1);
    struct hg_gcfg *bestcfg = malloc((size_t)st->ngroups * sizeof(struct hg_gcfg));
    HG_CHECK(bestcfg != NULL);
    memcpy(bestcfg, st->cfg, (size_t)st->ngroups * sizeof(struct hg_gcfg));
    struct hg_gcfg *undo = NULL; /* [ngroups] before a whole-strategy move */
    if (o->executable) {
        undo = malloc((size_t)st->ngroups * sizeof(struct hg_gcfg));
        HG_CHECK(undo != NULL);
    }
    long since = 0;
    for (;;) {
        if (o->max_iters > 0 && stats->iters >= o->max_iters) {
            stats->stop = HG_SEARCH_STOP_ITERS;
            break;
        }
        if (o->stagnation > 0 && since >= o->stagnation) {
            stats->stop = HG_SEARCH_STOP_STAGNATION;
            break;
        }
        double t1 = hg_now();
        if (o->budget_s > 0 && t1 - t0 + t_step + reserve >= o->budget_s) {
            stats->stop = HG_SEARCH_STOP_BUDGET;
            break;
        }
        stats->iters++;
        since++;
        int g;
        struct hg_gcfg nc, old;
        propose(o->propose_ctx, pg, st, &rng, &g, &nc);
        HG_CHECK(g >= 0 && g < st->ngroups);
        old = st->cfg[g];
        int whole = 0;
        if (o->executable) {
            st->cfg[g] = nc;
            if (!hg_strategy_executable(st, o->executable)) {
                st->cfg[g] = old;
                memcpy(undo, st->cfg, (size_t)st->ngroups * sizeof(struct hg_gcfg));
                lift(st, pg, g, &nc);
                /* a device left without a replica, or MP not asked for */
                if (!hg_strategy_executable(st, o->executable)) {
                    memcpy(st->cfg, undo, (size_t)st->ngroups * sizeof(struct hg_gcfg));
                    stats->skipped++;
                    continue;
                }
                whole = 1;
            }
        }
        st->cfg[g] = nc;
        if (whole)
            hg_sim_full(sim, st, &r);
        else
            hg_sim_delta(sim, st, g, &r);
        double c = hg_search_cost(&r);
        if (c <= cur || urand(&rng) < exp(-beta * (c - cur))) {
            cur = c;
            stats->accepted++;
            if (c < best) {
                best = c;
                memcpy(bestcfg, st->cfg, (size_t)st->ngroups * sizeof(struct hg_gcfg));
                stats->improved++;
                since = 0;
            }
        } else if (whole) {
            memcpy(st->cfg, undo, (size_t)st->ngroups * sizeof(struct hg_gcfg));
            hg_sim_full(sim, st, &r);
        } else {
            st->cfg[g] = old;
            hg_sim_delta(sim, st, g, &r);
        }
        t_step = hg_now() - t1 > t_step ? hg_now() - t1 : t_step;
    }
    memcpy(st->cfg, bestcfg, (size_t)st->ngroups * sizeof(struct hg_gcfg));
    free(bestcfg);
    free(undo);
    hg_sim_full(sim, st, &r);
    stats->best_cost = hg_search_cost(&r);
    stats->seconds = hg_now() - t0;
}
