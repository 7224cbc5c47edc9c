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
    /* a forward op the batch does not reach (a parameter's transpose)
     * goes with its earliest consumer (ids: consumers come later) */
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
    struct hg_strategy *st = hg_strategy_new(pg->nops, P, P);
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
    struct hg_lowered *lw = hg_lower_new(pg);
    if (hg_lower_full(lw, st, err, errlen) != 0) {
        hg_strategy_free(st);
        st = NULL;
    }
    hg_lower_free(lw);
    return st;
}

/* The search's state: the forward ops fwd[nf] in id order, stage s holding
 * fwd[cut[s] .. cut[s + 1]). */
struct pstate {
    int P, nf, M;
    enum hg_psched sched;
    int *fwd, *cut, *stage; /* [nf], [P + 1], [nops] scratch */
};

static struct hg_strategy *state_strategy(const struct hg_pgraph *pg, struct pstate *x)
{
    for (int v = 0; v < pg->nops; v++)
        x->stage[v] = -1;
    for (int s = 0; s < x->P; s++)
        for (int i = x->cut[s]; i < x->cut[s + 1]; i++)
            x->stage[x->fwd[i]] = s;
    return from_stages(pg, x->P, x->stage, x->M, x->sched);
}

/* One random move of x: a stage boundary by a few ops (70%), M doubled or
 * halved within [1, min(B, 16 P)] (20%), the other schedule (10%); 0 when
 * the move changed nothing. */
static int propose(struct pstate *x, int64_t B, uint64_t *rng)
{
    uint64_t r = hg_rand(rng) % 10;
    if (r < 7 && x->P > 1) {
        int s = 1 + (int)(hg_rand(rng) % (uint64_t)(x->P - 1));
        int span = x->nf / (4 * x->P) > 1 ? x->nf / (4 * x->P) : 1;
        int d = 1 + (int)(hg_rand(rng) % (uint64_t)span);
        int c = x->cut[s] + (hg_rand(rng) & 1 ? d : -d);
        if (c <= x->cut[s - 1] || c >= x->cut[s + 1])
            return 0;
        x->cut[s] = c;
        return 1;
    }
    if (r < 9) {
        int64_t hi = 16 * (int64_t)x->P < B ? 16 * (int64_t)x->P : B;
        int m = hg_rand(rng) & 1 ? 2 * x->M : x->M / 2;
        if (m < 1 || m > hi || m == x->M)
            return 0;
        x->M = m;
        return 1;
    }
    x->sched = x->sched == HG_SCHED_1F1B ? HG_SCHED_GPIPE : HG_SCHED_1F1B;
    return 1;
}

struct hg_strategy *hg_pipe_search(struct hg_sim *sim, const struct hg_pgraph *pg,
                                   const struct hg_strategy *start, long iters, double budget_s,
                                   uint64_t seed, struct hg_sim_result *r)
{
    struct pstate x = {.P = start->ngroups, .M = start->nmicro, .sched = start->sched};
    x.fwd = malloc(((size_t)pg->nops + 1) * sizeof *x.fwd);
    x.cut = calloc((size_t)x.P + 2, sizeof *x.cut);
    x.stage = malloc(((size_t)pg->nops + 1) * sizeof *x.stage);
    HG_CHECK(x.fwd && x.cut && x.stage);
    /* start's stages: its groups are the stages in rank order */
    for (int v = 0; v < pg->nops; v++)
        if (cut_here(&pg->ops[v])) {
            int s = start->group[v];
            x.fwd[x.nf++] = v;
            for (int k = s + 1; k <= x.P; k++)
                x.cut[k] = x.nf;
        }
    struct hg_lowered *lw = hg_lower_new(pg); /* the moves' check, without a crash */
    struct hg_strategy *best = hg_strategy_copy(start), *t;
    hg_sim_full(sim, best, r);
    uint64_t rng = seed * 0x9e3779b97f4a7c15ull + 1;
    double t0 = hg_now();
    char err[256];
    for (long i = 0; i < iters && (budget_s <= 0 || hg_now() - t0 < budget_s); i++) {
        struct pstate y = x;
        int cut[HG_PLAN_MAXDEV + 1];
        memcpy(cut, x.cut, ((size_t)x.P + 1) * sizeof *cut);
        if (!propose(&x, pg->batch, &rng))
            continue;
        t = state_strategy(pg, &x);
        struct hg_sim_result tr;
        int ok = hg_lower_full(lw, t, err, sizeof err) == 0;
        if (ok)
            hg_sim_full(sim, t, &tr);
        if (ok && hg_search_cost(&tr) < hg_search_cost(r)) {
            hg_strategy_free(best);
            best = t;
            *r = tr;
        } else { /* back to x before the move */
            hg_strategy_free(t);
            memcpy(x.cut, cut, ((size_t)x.P + 1) * sizeof *cut);
            x.M = y.M;
            x.sched = y.sched;
        }
    }
    hg_sim_full(sim, best, r); /* the simulator ends on the result */
    hg_lower_free(lw);
    free(x.fwd);
    free(x.cut);
    free(x.stage);
    return best;
}

