/* pipe_plan.c - pipelines planned: the baselines (one stage per device,
 * cut by op counts, by speed or at random) and a hill climb over the stage
 * boundaries, the micro-batches and the schedule, priced by the simulator
 * (planner/pipeline.c lowers and prices each; docs/planner.md,
 * "Pipelines"). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/hg_planner.h"

/* Each backward and update op's stage from the forward's (stage[nops],
 * forward ops set): a backward op its origin's, else its producers'
 * latest; an update its gradient's. */
static void follow_forward(const struct hg_pgraph *pg, int P, int *stage)
{
    for (int v = 0; v < pg->nops; v++) {
        const struct hg_pop *o = &pg->ops[v];
        if (o->phase != HG_PH_BACKWARD)
            continue;
        int s = o->origin >= 0 && o->origin < v ? stage[o->origin] : -1;
        for (int k = 0; k < o->nin && s < 0; k++) {
            int u = o->in[k].op;
            if (u >= 0 && pg->ops[u].phase != HG_PH_UPDATE && stage[u] > s)
                s = stage[u];
        }
        stage[v] = s >= 0 ? s : P - 1;
    }
    for (int v = 0; v < pg->nops; v++) {
        const struct hg_pop *o = &pg->ops[v];
        if (o->phase != HG_PH_UPDATE)
            continue;
        int i = o->pidx, gop = i >= 0 ? pg->grad_op[i] : -1, s = -1;
        if (gop >= 0)
            s = stage[gop];
        for (int k = 0; k < o->nin && s < 0; k++)
            if (o->in[k].op >= 0 && pg->ops[o->in[k].op].phase != HG_PH_UPDATE)
                s = stage[o->in[k].op];
        stage[v] = s >= 0 ? s : 0;
    }
}

/* The ops whose stage a pipeline baseline or the search chooses: the
 * forward ops the batch reaches (the others follow their consumers). */
static int cut_here(const struct hg_pop *o) { return o->phase == HG_PH_FORWARD && o->batch; }

/* The strategy of the forward ops' stages (stage[nops], others -1): one
 * group per stage on device s, the rest following the forward. */
static struct hg_strategy *from_stages(const struct hg_pgraph *pg, int P, int *stage, int M,
                                       enum hg_psched sched)
{
    /* a forward op left that reads a staged one (a scalar of the loss
     * sums) goes with its latest producer (ids: producers come first) */
    for (int v = 0; v < pg->nops; v++) {
        const struct hg_pop *o = &pg->ops[v];
        if (o->phase != HG_PH_FORWARD || stage[v] >= 0)
            continue;
        for (int k = 0; k < o->nin; k++) {
            int u = o->in[k].op;
            if (u >= 0 && pg->ops[u].phase == HG_PH_FORWARD && stage[u] > stage[v])
                stage[v] = stage[u];
        }
    }
    /* one the batch does not reach (a parameter's transpose) goes with its
     * earliest consumer (ids: consumers come later) */
    for (int v = pg->nops - 1; v >= 0; v--) {
        const struct hg_pop *o = &pg->ops[v];
        if (o->phase != HG_PH_FORWARD || stage[v] >= 0)
            continue;
        for (int k = 0; k < o->ncons; k++) {
            int w = o->cons[k];
            if (pg->ops[w].phase == HG_PH_FORWARD && stage[w] >= 0 &&
                (stage[v] < 0 || stage[w] < stage[v]))
                stage[v] = stage[w];
        }
        if (stage[v] < 0)
            stage[v] = 0;
    }
    follow_forward(pg, P, stage);
    struct hg_strategy *st = hg_strategy_new(pg->nops, pg->ndev, P);
    for (int v = 0; v < pg->nops; v++)
        st->group[v] = stage[v];
    for (int k = 0; k < P; k++)
        hg_gcfg_mp(&st->cfg[k], k);
    st->nmicro = M;
    st->sched = sched;
    return st;
}

struct hg_strategy *hg_pipe_baseline(const struct hg_pgraph *pg, const struct hg_pprice *pr,
                                     enum hg_pipe_cut cut, uint64_t seed, int M,
                                     enum hg_psched sched, char *err,
                                     size_t errlen)
{
    uint64_t rng = (seed + 2) * 0x9e3779b97f4a7c15ull;
    int P = pg->ndev, N = pg->nops, nf = 0;
    double cap[HG_PLAN_MAXDEV], tot = 0, cum = 0, want = 0;
    if (cut == HG_PIPE_SPEED && hg_cluster_rank_capacities(pg->c, cap, err, errlen) != 0)
        return NULL;
    if (cut != HG_PIPE_SPEED)
        for (int d = 0; d < P; d++)
            cap[d] = 1;
    for (int d = 0; d < P; d++)
        tot += cap[d];
    int *stage = malloc(((size_t)N + 1) * sizeof *stage); /* [nops] */
    double *w = malloc(((size_t)N + 1) * sizeof *w);      /* [nops] forward op's weight */
    HG_CHECK(stage && w);
    double all = 0;
    for (int v = 0; v < N; v++) {
        stage[v] = -1;
        w[v] = 0;
        if (!cut_here(&pg->ops[v]))
            continue;
        nf++;
        /* equal op counts, each op's time (device 0: a share of it), or
         * random weights (a test aid: random valid boundaries) */
        if (cut == HG_PIPE_RANDOM)
            w[v] = 1 + (double)(hg_rand(&rng) % 1000);
        else
            w[v] = cut == HG_PIPE_SPEED && pr ? pr->a[hg_pprice_at(pr, v, 0)] + pr->b[hg_pprice_at(pr, v, 0)]
                               : 1;
        all += w[v];
    }
    if (nf < P) {
        free(stage);
        free(w);
        hg_kerr(err, errlen, "a pipeline of %d stages: the graph has %d forward ops on the "
                "batch", P, nf);
        return NULL;
    }
    /* stage s takes the forward ops while the work so far is within its
     * devices' share; every stage gets one op at least */
    int s = 0, left = nf;
    want = all * cap[0] / tot;
    for (int v = 0; v < N; v++) {
        if (!cut_here(&pg->ops[v]))
            continue;
        if (s + 1 < P && cum > 0 && (cum + w[v] / 2 > want || left <= P - 1 - s)) {
            s++;
            want += all * cap[s] / tot;
        }
        stage[v] = s;
        cum += w[v];
        left--;
    }
    struct hg_strategy *st = from_stages(pg, P, stage, M, sched);
    free(stage);
    free(w);
    /* one the lowering refuses (a stage's backward waiting on a later
     * one's forward ...) is no baseline */
    return hg_lower_keep(pg, st, err, errlen);
}

/* The search's state: the forward ops fwd[nf] in id order, stage s
 * holding fwd[cut[s] .. cut[s + 1]) on the devices dev[dcut[s] ..
 * dcut[s + 1]) (one: model parallel; more: a data-parallel stage, rep[d]
 * replicas on device d); dev is a permutation of the cluster's devices. */
struct pstate {
    int P, nf, M;
    enum hg_psched sched;
    int dev[HG_PLAN_MAXDEV], rep[HG_PLAN_MAXDEV], dcut[HG_PLAN_MAXDEV + 1];
    int *fwd, *cut, *stage; /* [nf], [ndev + 1], [nops] scratch */
};

/* The most replicas the search puts on one device of a stage. */
enum { MAX_REP = 8 };
/* The most micro-batches the search tries per stage: 4 P keeps the 1f1b
 * bubble (P - 1) / (M + P - 1) under a fifth, and beyond it the executor's
 * cost per micro-step, which the prices lack, grows (measured, bert on
 * two CPU workers, batch 32: simulated within 4% at M <= 8, the real step
 * 18% slower at M = 16 and 47% at M = 32; bench/RESULTS.md). */
enum { MAX_MICRO_PER_STAGE = 4 };

static struct hg_strategy *state_strategy(const struct hg_pgraph *pg, struct pstate *x)
{
    for (int v = 0; v < pg->nops; v++)
        x->stage[v] = -1;
    for (int s = 0; s < x->P; s++)
        for (int i = x->cut[s]; i < x->cut[s + 1]; i++)
            x->stage[x->fwd[i]] = s;
    struct hg_strategy *st = from_stages(pg, x->P, x->stage, x->M, x->sched);
    for (int s = 0; s < x->P; s++) {
        struct hg_gcfg *g = &st->cfg[s];
        if (x->dcut[s + 1] - x->dcut[s] == 1) {
            hg_gcfg_mp(g, x->dev[x->dcut[s]]);
            continue;
        }
        memset(g, 0, sizeof *g);
        g->mode = HG_MODE_DP;
        g->agg = HG_AGG_AR;
        for (int i = x->dcut[s]; i < x->dcut[s + 1]; i++)
            g->rep[x->dev[i]] = x->rep[x->dev[i]];
        g->ps = hg_gcfg_choose_ps(pg->c, g->rep);
    }
    return st;
}

/* x's stages s and s + 1 made one data-parallel stage. */
static void merge_stages(struct pstate *x, int s)
{
    for (int k = s + 1; k < x->P; k++) {
        x->cut[k] = x->cut[k + 1];
        x->dcut[k] = x->dcut[k + 1];
    }
    x->P--;
}

/* x's stage s of two devices or more cut in two (its devices and its
 * forward ops at their middles); 0 when it has too few of either. */
static int split_stage(struct pstate *x, int s)
{
    int nd = x->dcut[s + 1] - x->dcut[s], no = x->cut[s + 1] - x->cut[s];
    if (nd < 2 || no < 2)
        return 0;
    for (int k = x->P + 1; k > s + 1; k--) {
        x->cut[k] = x->cut[k - 1];
        x->dcut[k] = x->dcut[k - 1];
    }
    x->cut[s + 1] = x->cut[s] + no / 2;
    x->dcut[s + 1] = x->dcut[s] + nd / 2;
    x->P++;
    return 1;
}

/* A stage boundary moved by a few forward ops; 0 when it cannot. */
static int move_cut(struct pstate *x, uint64_t *rng)
{
    if (x->P < 2)
        return 0;
    int s = 1 + (int)(hg_rand(rng) % (uint64_t)(x->P - 1));
    int span = x->nf / (4 * x->P) > 1 ? x->nf / (4 * x->P) : 1;
    int d = 1 + (int)(hg_rand(rng) % (uint64_t)span);
    int c = x->cut[s] + (hg_rand(rng) & 1 ? d : -d);
    if (c <= x->cut[s - 1] || c >= x->cut[s + 1])
        return 0;
    x->cut[s] = c;
    return 1;
}

/* One random move of x (nd devices, batch B): a stage boundary by a few
 * ops (45%), M doubled or halved within [1, min(B, MAX_MICRO_PER_STAGE
 * P)] (15%), the other schedule (5%), two devices' places swapped (10%),
 * two neighbour stages made one data-parallel stage or one cut in two
 * (15%), a replica count of a data-parallel stage's device by one (10%);
 * 0 when the move changed nothing. */
static int propose(struct pstate *x, int nd, int64_t B, uint64_t *rng)
{
    uint64_t r = hg_rand(rng) % 20;
    if (r < 9)
        return move_cut(x, rng);
    if (r < 12) {
        int64_t hi = MAX_MICRO_PER_STAGE * (int64_t)x->P;
        hi = hi < B ? hi : B;
        int m = hg_rand(rng) & 1 ? 2 * x->M : x->M / 2;
        if (m < 1 || m > hi || m == x->M)
            return 0;
        x->M = m;
        return 1;
    }
    if (r < 13) {
        x->sched = x->sched == HG_SCHED_1F1B ? HG_SCHED_GPIPE : HG_SCHED_1F1B;
        return 1;
    }
    if (r < 15) {
        int i = (int)(hg_rand(rng) % (uint64_t)nd), j = (int)(hg_rand(rng) % (uint64_t)nd);
        int t = x->dev[i];
        if (i == j)
            return 0;
        x->dev[i] = x->dev[j];
        x->dev[j] = t;
        return 1;
    }
    int s = (int)(hg_rand(rng) % (uint64_t)x->P);
    if (r < 18) {
        if (hg_rand(rng) & 1)
            return split_stage(x, s);
        if (s + 1 >= x->P || x->P < 3) /* one stage is data parallelism */
            return 0;
        merge_stages(x, s);
        return 1;
    }
    int n = x->dcut[s + 1] - x->dcut[s];
    if (n < 2)
        return 0;
    int d = x->dev[x->dcut[s] + (int)(hg_rand(rng) % (uint64_t)n)];
    int c = x->rep[d] + (hg_rand(rng) & 1 ? 1 : -1);
    if (c < 1 || c > MAX_REP)
        return 0;
    x->rep[d] = c;
    return 1;
}

/* x from start: its groups are the stages in the order of their first
 * forward op; a group's devices those it runs on.  -1 when start is no
 * such pipeline (a device in two groups or in none, a group without a
 * forward op). */
static int from_start(const struct hg_pgraph *pg, const struct hg_strategy *start,
                      struct pstate *x)
{
    int first[HG_PLAN_MAXDEV], rank[HG_PLAN_MAXDEV], used[HG_PLAN_MAXDEV] = {0}, n = 0;
    int G = start->ngroups;
    if (G < 1 || G > pg->ndev)
        return -1;
    for (int k = 0; k < G; k++)
        first[k] = -1;
    for (int v = 0; v < pg->nops; v++)
        if (cut_here(&pg->ops[v]) && first[start->group[v]] < 0)
            first[start->group[v]] = v;
    for (int k = 0; k < G; k++) { /* rank[s]: the group of stage s */
        if (first[k] < 0)
            return -1;
        int s = 0;
        for (int j = 0; j < G; j++)
            s += first[j] < first[k];
        rank[s] = k;
    }
    x->P = G;
    for (int s = 0; s < G; s++) {
        const struct hg_gcfg *g = &start->cfg[rank[s]];
        x->dcut[s] = n;
        for (int d = 0; d < pg->ndev; d++) {
            int r = g->mode == HG_MODE_MP ? d == g->device : g->rep[d];
            if (r <= 0)
                continue;
            if (used[d]++)
                return -1;
            x->dev[n++] = d;
            x->rep[d] = r < MAX_REP ? r : MAX_REP;
        }
    }
    x->dcut[G] = n;
    if (n != pg->ndev) /* every device in a stage: the moves keep them so */
        return -1;
    for (int v = 0; v < pg->nops; v++)
        if (cut_here(&pg->ops[v])) {
            int s = 0;
            while (rank[s] != start->group[v])
                s++;
            x->fwd[x->nf++] = v;
            for (int k = s + 1; k <= G; k++)
                x->cut[k] = x->nf;
        }
    return 0;
}

struct hg_strategy *hg_pipe_search(struct hg_sim *sim, const struct hg_pgraph *pg,
                                   const struct hg_strategy *start, long iters, double budget_s,
                                   uint64_t seed, struct hg_sim_result *r)
{
    struct pstate x = {.M = start->nmicro, .sched = start->sched};
    x.fwd = malloc(((size_t)pg->nops + 1) * sizeof *x.fwd);
    x.cut = calloc((size_t)pg->ndev + 2, sizeof *x.cut);
    x.stage = malloc(((size_t)pg->nops + 1) * sizeof *x.stage);
    HG_CHECK(x.fwd && x.cut && x.stage);
    int ok_start = from_start(pg, start, &x) == 0;
    struct hg_lowered *lw = hg_lower_new(pg); /* the moves' check, without a crash */
    struct hg_strategy *best = hg_strategy_copy(start), *t;
    hg_sim_full(sim, best, r);
    uint64_t rng = seed * 0x9e3779b97f4a7c15ull + 1;
    double t0 = hg_now();
    char err[256];
    for (long i = 0; ok_start && i < iters && (budget_s <= 0 || hg_now() - t0 < budget_s);
         i++) {
        struct pstate y = x; /* x before the move (its arrays by value) */
        int cut[HG_PLAN_MAXDEV + 1];
        memcpy(cut, x.cut, ((size_t)x.P + 1) * sizeof *cut);
        if (!propose(&x, pg->ndev, pg->batch, &rng))
            continue;
        t = state_strategy(pg, &x);
        struct hg_sim_result tr;
        int ok = hg_lower_full(lw, t, err, sizeof err) == 0;

        if (ok)
            hg_sim_full(sim, t, &tr);
        if (ok && hg_search_cost(&tr) <= hg_search_cost(r)) { /* a plateau: walk on */
            hg_strategy_free(best);
            best = t;
            *r = tr;
        } else { /* back to x before the move */
            hg_strategy_free(t);
            memcpy(y.cut, cut, ((size_t)y.P + 1) * sizeof *cut);
            x = y;
        }
    }
    hg_sim_full(sim, best, r); /* the simulator ends on the result */
    hg_lower_free(lw);
    free(x.fwd);
    free(x.cut);
    free(x.stage);
    return best;
}
