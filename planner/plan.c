/* plan.c - planning as hgplan --search and hgtrain --plan run it: the
 * planner graph priced (memory at the longest sample), the baselines
 * simulated and list-scheduled, the MCMC search from the best of them
 * (restricted to what hgtrain executes when asked), the pipeline and
 * tensor-parallel rows, and the table
 * both programs print: one row per candidate, why the search stopped, and
 * which candidate was chosen and why (docs/planner.md, "The plan table"). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/hg_planner.h"

int hg_plan_price(struct hg_pgraph **pg, struct hg_pprice **pr, const struct hg_graph *g,
                  const struct hg_graph *gm, const struct hg_cluster *c, const char *model,
                  int64_t batch, char *err, size_t errlen)
{
    *pr = NULL;
    if (hg_pgraph_build(pg, g, c, model, batch, err, errlen) != 0)
        return -1;
    /* memory at the longest sample: what hgtrain --strategy checks before
     * it runs a strategy (a mean length would admit strategies it refuses) */
    if ((gm && gm != g && hg_pgraph_memory_from(*pg, gm, err, errlen) != 0) ||
        hg_pprice_build(pr, *pg, g, err, errlen) != 0) {
        hg_pgraph_free(*pg);
        *pg = NULL;
        return -1;
    }
    return 0;
}

void hg_plan_print_head(FILE *o, const struct hg_cluster *c, int groups)
{
    if (groups > 0)
        fprintf(o, "plan: %d device%s, %d op groups, simulated per iteration:\n", c->ndev,
                c->ndev == 1 ? "" : "s", groups);
    fprintf(o, "  %-10s %11s  %-24s %s\n", "candidate", "time", "peak memory", "feasible");
}

void hg_plan_print_row(FILE *o, const char *name, const struct hg_sim_result *r,
                       const struct hg_cluster *c, const char *why_not, const char *note,
                       int chosen, int verbose)
{
    /* the device nearest its memory (or furthest over it) */
    int hi = 0;
    for (int d = 1; d < c->ndev; d++)
        if ((double)r->peak[d] / (double)c->devices[d].memory >
            (double)r->peak[hi] / (double)c->devices[hi].memory)
            hi = d;
    char mem[96], feas[352];
    snprintf(mem, sizeof mem, "%.2f GB on %s", (double)r->peak[hi] / 1e9,
             c->devices[hi].name);
    if (r->oom)
        snprintf(feas, sizeof feas, "no: OOM on %d device%s", r->oom, r->oom == 1 ? "" : "s");
    else if (why_not)
        snprintf(feas, sizeof feas, "%s", why_not);
    else
        snprintf(feas, sizeof feas, "yes");
    fprintf(o, "  %-10s %9.4f s  %-24s %s%s%s%s\n", name, r->iter_s, mem, feas,
            note ? " " : "", note ? note : "", chosen ? "  <- chosen" : "");
    if (!verbose)
        return;
    fprintf(o, "    peak GB:");
    if (c->ndev > 32) { /* a line per device would be thousands of columns */
        int lo = 0;
        hi = 0;
        for (int d = 1; d < c->ndev; d++) {
            hi = r->peak[d] > r->peak[hi] ? d : hi;
            lo = r->peak[d] < r->peak[lo] ? d : lo;
        }
        fprintf(o, " %d devices, lowest %s=%.2f, highest %s=%.2f, %d over their memory\n",
                c->ndev, c->devices[lo].name, (double)r->peak[lo] / 1e9, c->devices[hi].name,
                (double)r->peak[hi] / 1e9, r->oom);
        return;
    }
    for (int d = 0; d < c->ndev; d++)
        fprintf(o, " %s=%.2f%s", c->devices[d].name, (double)r->peak[d] / 1e9,
                r->peak[d] > c->devices[d].memory ? "(OOM)" : "");
    fprintf(o, "\n");
}

void hg_plan_print_recompute(FILE *o, const struct hg_strategy *st)
{
    int n = 0;
    for (int k = 0; k < st->ngroups; k++)
        n += st->cfg[k].recompute != 0;
    if (n)
        fprintf(o, "  recomputation in %d of %d groups\n", n, st->ngroups);
}

/* Why baseline b is no candidate under po, its "feasible" column
 * (NULL: it is one): the
 * data-parallel baselines, MP only when any mix executes, no parameter
 * server over NCCL. */
static const char *not_candidate(const struct hg_plan_opts *po, int b)
{
    if ((po->executable & HG_EXEC_NOPS) && (b == HG_BASE_EV_PS || b == HG_BASE_CP_PS))
        return "no: NCCL has no parameter server";
    if (po->executable && b == HG_BASE_MP && !(po->executable & HG_EXEC_SPLIT))
        return "yes, chosen only with --plan-split";
    return NULL;
}

/* Why the pipeline rows are no candidates under po (NULL: they are). */
static const char *pipe_not_candidate(const struct hg_plan_opts *po)
{
    if (po->executable && !(po->executable & HG_EXEC_SPLIT))
        return "yes, chosen only with --plan-split";
    return NULL;
}

/* Why the tensor-parallel rows are no candidates under po (NULL: they
 * are, unless the executor's tp_runs refuses one). */
static const char *tp_not_candidate(const struct hg_plan_opts *po)
{
    if (po->executable && !(po->executable & HG_EXEC_TP))
        return "no: hgtrain runs it on CPU workers over shm or tcp only";
    return NULL;
}

/* Every group on one device d of the ndev (base's grouping), for each
 * d, list-scheduled: the fastest into *as and *ar; returns its device. */
static int best_alone(struct hg_sim *sim, const struct hg_pgraph *pg,
                      const struct hg_strategy *base, struct hg_strategy **as,
                      struct hg_sim_result *ar)
{
    int alone = -1;
    for (int d = 0; d < pg->c->ndev; d++) {
        struct hg_strategy *t = hg_strategy_copy(base);
        struct hg_sim_result tr;
        for (int k = 0; k < t->ngroups; k++)
            hg_gcfg_mp(&t->cfg[k], d);
        hg_sched_best(sim, pg, t, &tr, NULL);
        if (alone < 0 || hg_search_cost(&tr) < hg_search_cost(ar)) {
            hg_strategy_free(*as);
            *as = t;
            *ar = tr;
            alone = d;
        } else {
            hg_strategy_free(t);
        }
    }
    return alone;
}

/* 1 when the plan has pipeline rows (a cluster of 2 to 64 devices, a
 * batch of one sample a device at least, not the previous space). */
static int has_pipelines(const struct hg_pgraph *pg, const struct hg_plan_opts *po)
{
    return !po->no_pipelines && pg->ndev >= 2 && pg->ndev <= 64 && pg->batch >= pg->ndev;
}

/* The whole search's budget: MCMC's three quarters of it when a pipeline
 * is searched too, which has the rest (hgplan --budget is the total). */
static double whole_budget(const struct hg_plan_opts *po)
{
    return po->budget_s > 0 ? po->budget_s : 30;
}

/* What the search did, for the table's "search:" lines. */
struct search_report {
    struct hg_search_stats ss;
    enum hg_sched_policy pol;
    double seconds, budget_s;
    int no_time;          /* the budget left no time for a proposal */
};

/* MCMC from seed (its simulation sr) in best (a copy of seed),
 * list-scheduled into *br; never worse than the seed. */
static void search(struct hg_sim *sim, const struct hg_pgraph *pg,
                   const struct hg_plan_opts *po, const struct hg_strategy *seed,
                   const struct hg_sim_result *sr, struct hg_strategy **best,
                   struct hg_sim_result *br, struct search_report *rep)
{
    double st0 = hg_now();
    struct hg_search_opts so = {.budget_s = whole_budget(po) * (has_pipelines(pg, po) ? 0.75 : 1),
                                .max_iters = po->max_iters,
                                .stagnation = HG_PLAN_STAGNATION,
                                .seed = po->seed,
                                .after_full = 5, /* sched_best, the check */
                                .beta = (po->beta > 0 ? po->beta : 1000) /
                                        hg_search_cost(br),
                                .executable = po->executable};
    hg_search_mcmc(sim, pg, *best, &so, &rep->ss);
    hg_sched_best(sim, pg, *best, br, &rep->pol);
    /* never worse than the seed */
    if (hg_search_cost(br) > hg_search_cost(sr)) {
        hg_strategy_free(*best);
        *best = hg_strategy_copy(seed);
        hg_sim_full(sim, *best, br);
    }
    rep->seconds = hg_now() - st0;
    rep->budget_s = so.budget_s;
    rep->no_time = rep->ss.iters == 0 && so.budget_s > 0;
}

static void print_search(FILE *o, const struct hg_plan_opts *po, const char *seed_name,
                         const struct search_report *rep)
{
    const struct hg_search_stats *ss = &rep->ss;
    fprintf(o, "search: mcmc from %s, seed %lld", seed_name, (long long)po->seed);
    if (po->executable)
        fprintf(o, ", %s strategies%s",
                po->executable & HG_EXEC_SPLIT ? "executable"
                : po->executable & HG_EXEC_MP  ? "data-parallel-shaped or model-parallel"
                                               : "data-parallel-shaped",
                po->executable & HG_EXEC_NOPS ? " with AllReduce only" : "");
    fprintf(o, "\n  stopped after %ld proposals in %.2f s: ", ss->iters, rep->seconds);
    if (rep->no_time)
        fprintf(o, "the %g s budget leaves no time for a proposal after the seed's and the "
                "result's simulations; not reproducible\n", rep->budget_s);
    else if (ss->stop == HG_SEARCH_STOP_ITERS)
        fprintf(o, "the cap of %ld proposals; reproducible\n", po->max_iters);
    else if (ss->stop == HG_SEARCH_STOP_STAGNATION)
        fprintf(o, "%d proposals without a better one, %.2f s of the %g s budget left; "
                "reproducible\n", HG_PLAN_STAGNATION,
                rep->budget_s > rep->seconds ? rep->budget_s - rep->seconds : 0, rep->budget_s);
    else
        fprintf(o, "the %g s budget; not reproducible\n", rep->budget_s);
    if (po->verbose) {
        fprintf(o, "  %ld accepted, %ld improvements; order: %s", ss->accepted, ss->improved,
                rep->pol == HG_SCHED_RANK   ? "list scheduling (rank)"
                : rep->pol == HG_SCHED_FIFO ? "FIFO"
                                            : "the search's own");
        if (po->executable)
            fprintf(o, "; %ld proposals had no executable form", ss->skipped);
        fprintf(o, "\n");
    }
}

/* The percentage by which r is faster than rb. */
static double gain(const struct hg_sim_result *r, const struct hg_sim_result *rb)
{
    return (rb->iter_s - r->iter_s) / rb->iter_s * 100;
}

enum { ROW_ALONE = HG_BASE_COUNT, ROW_RECOMPUTE, ROW_MCMC, ROW_PIPE_U, ROW_PIPE_S, ROW_PIPE,
       ROW_TP_E, ROW_TP_S, ROWS };

/* The pipeline rows (planner/pipeline.c; clusters of 2 to 64 devices, one
 * stage each in rank order): PIPE-U (equal forward op counts per stage)
 * and PIPE-S (forward time in proportion to speed), 4 micro-batches per
 * stage, 1f1b; searching, the hill climb from the better of them
 * ("pipeline": at most --iters proposals, 2000 by default, in the rest of
 * the budget, a quarter at least).  xs[row] get the strategies. */
static void pipelines(struct hg_sim *sim, const struct hg_pgraph *pg, const struct hg_pprice *pr,
                      const struct hg_plan_opts *po, double t0, struct hg_sim_result *res,
                      int *shown, struct hg_strategy **xs)
{
    struct hg_strategy **ps = xs + ROW_PIPE_U;
    char err[256];
    int P = pg->ndev, M = 4 * P < pg->batch ? 4 * P : (int)pg->batch;
    if (!has_pipelines(pg, po))
        return;
    for (int k = 0; k < 2; k++) { /* one that cannot run gets no row */
        ps[k] = hg_pipe_baseline(pg, pr, k ? HG_PIPE_SPEED : HG_PIPE_UNIFORM, 0, M,
                                 HG_SCHED_1F1B, err, sizeof err);
        if (!ps[k])
            continue;
        hg_sim_full(sim, ps[k], &res[ROW_PIPE_U + k]);
        shown[ROW_PIPE_U + k] = 1;
    }
    if (!po->mcmc || (!ps[0] && !ps[1]))
        return;
    int k = ps[1] && (!ps[0] || hg_search_cost(&res[ROW_PIPE_S]) <
                                    hg_search_cost(&res[ROW_PIPE_U]));
    double left = whole_budget(po) - (hg_now() - t0);
    ps[2] = hg_pipe_search(sim, pg, ps[k], po->max_iters > 0 ? po->max_iters : 2000,
                           left > whole_budget(po) / 4 ? left : whole_budget(po) / 4, po->seed,
                           &res[ROW_PIPE]);
    shown[ROW_PIPE] = 1;
}

/* 1 when the plan has tensor-parallel rows (two devices at least, not
 * --no-tensor). */
static int has_tensor(const struct hg_pgraph *pg, const struct hg_plan_opts *po)
{
    return !po->no_tensor && pg->ndev >= 2;
}

/* The tensor-parallel rows (hg_tp_baseline: every op in one TP group over
 * the node, even shards or by speed) into xs[ROW_TP_E], xs[ROW_TP_S];
 * whyn[row] what the executor cannot run yet (under po->tp_runs).  None
 * planned (more nodes): why in *none. */
static void tensors(struct hg_sim *sim, const struct hg_pgraph *pg,
                    const struct hg_plan_opts *po, struct hg_sim_result *res, int *shown,
                    struct hg_strategy **xs, char (*whyn)[320], char *none, size_t nn)
{
    char err[256];
    if (!has_tensor(pg, po))
        return;
    for (int k = 0; k < 2; k++) {
        int row = ROW_TP_E + k;
        xs[row] = hg_tp_baseline(pg, k ? HG_TP_SPEED : HG_TP_EVEN, err, sizeof err);
        if (!xs[row]) { /* both fail alike (the cluster's nodes, its prices) */
            snprintf(none, nn, "%s", err);
            continue;
        }
        hg_sim_full(sim, xs[row], &res[row]);
        shown[row] = 1;
        const char *no = tp_not_candidate(po);
        if (no)
            snprintf(whyn[row], sizeof whyn[0], "%s", no);
        else if ((po->executable & HG_EXEC_TP) && po->tp_runs &&
                 po->tp_runs(po->tp_ctx, hg_sim_lowered(sim), err, sizeof err) != 0)
            snprintf(whyn[row], sizeof whyn[0], "no: hgtrain: %s", err);
    }
}

/* The fastest feasible candidate of the pipeline and tensor-parallel rows
 * (xs[row], no whyn[row]) replaces the choice when the choice is out of
 * memory or it beats the choice by the margin; returns the row chosen
 * (why and *best updated). */
static int choose_other(const struct hg_plan_opts *po, const struct hg_sim_result *res,
                        const int *shown, struct hg_strategy *const *xs,
                        char (*whyn)[320], int chosen, const char *name,
                        struct hg_strategy **best, char *why, size_t n)
{
    int p = -1;
    /* rows_only: the caller searches on from the choice, in the baselines'
     * grouping (hgplan --search gnn) */
    if (po->keep || po->rows_only)
        return chosen;
    for (int i = ROW_PIPE_U; i < ROWS; i++)
        if (shown[i] && xs[i] && !whyn[i][0] && !res[i].oom &&
            (p < 0 || res[i].iter_s < res[p].iter_s))
            p = i;
    if (p < 0)
        return chosen;
    const struct hg_sim_result *rc = &res[chosen], *rp = &res[p];
    if (rc->oom)
        snprintf(why, n, "%s is out of memory and it fits", name);
    else if (rp->iter_s < rc->iter_s * (1 - po->margin))
        snprintf(why, n, "it is %.1f%% faster than %s%s", gain(rp, rc), name,
                 po->margin > 0 ? ", above the margin" : "");
    else
        return chosen;
    hg_strategy_free(*best);
    *best = hg_strategy_copy(xs[p]);
    return p;
}

struct hg_strategy *hg_plan_run(FILE *o, struct hg_sim *sim, const struct hg_pgraph *pg,
                                const struct hg_pprice *pr, const struct hg_plan_opts *po,
                                struct hg_sim_result *br)
{
    double t0 = hg_now(); /* the budget counts from here */
    const struct hg_cluster *c = pg->c;
    int ng = po->groups > 0 ? po->groups : 64;
    /* every candidate's simulation: the baselines, alone, the best baseline
     * recomputing, the search's result */
    struct hg_sim_result res[ROWS];
    int shown[ROWS] = {0};
    char whyn[ROWS][320]; /* why a row is no candidate ("" : it is) */
    memset(whyn, 0, sizeof whyn);
    struct hg_strategy *bs[HG_BASE_COUNT];
    int bi = -1;
    for (int b = 0; b < HG_BASE_COUNT; b++) {
        bs[b] = hg_strategy_new(pg->nops, pg->ndev, 1);
        hg_strategy_group(bs[b], pg, pr, ng);
        hg_baseline_apply(bs[b], pg, (enum hg_baseline)b);
        hg_sched_best(sim, pg, bs[b], &res[b], NULL);
        shown[b] = 1;
        if (not_candidate(po, b))
            snprintf(whyn[b], sizeof whyn[0], "%s", not_candidate(po, b));
        else if (bi < 0 || hg_search_cost(&res[b]) < hg_search_cost(&res[bi]))
            bi = b;
    }
    const char *base_name = hg_baseline_name((enum hg_baseline)bi);
    const struct hg_sim_result *rb = &res[bi];
    struct hg_strategy *seed = hg_strategy_copy(bs[bi]);
    struct hg_sim_result sr = *rb;
    int seed_row = bi;
    /* every group on one device (small clusters; model parallelism must
     * be allowed): no communication at all, the answer when the links cost
     * more than another device saves, which a search from a data-parallel
     * seed never reaches one group at a time */
    struct hg_strategy *as = NULL;
    int alone = po->mcmc && c->ndev <= 8 && (!po->executable || (po->executable & HG_EXEC_MP))
                    ? best_alone(sim, pg, bs[0], &as, &res[ROW_ALONE])
                    : -1;
    char notes[ROWS][96];
    memset(notes, 0, sizeof notes);
    if (alone >= 0) {
        shown[ROW_ALONE] = 1;
        snprintf(notes[ROW_ALONE], sizeof notes[0], "(every group on %s)",
                 c->devices[alone].name);
        if (hg_search_cost(&res[ROW_ALONE]) < hg_search_cost(&sr)) {
            hg_strategy_free(seed);
            seed = hg_strategy_copy(as);
            sr = res[ROW_ALONE];
            seed_row = ROW_ALONE;
        }
    }
    /* every baseline is out of memory: seed with the best of them
     * recomputing every group's activations */
    for (int b = 0; rb->oom && b < HG_BASE_COUNT; b++) {
        struct hg_strategy *t = hg_strategy_copy(bs[b]);
        struct hg_sim_result tr;
        for (int k = 0; k < t->ngroups; k++)
            t->cfg[k].recompute = 1;
        hg_sched_best(sim, pg, t, &tr, NULL);
        if (hg_search_cost(&tr) < hg_search_cost(&sr)) {
            hg_strategy_free(seed);
            seed = t;
            sr = res[ROW_RECOMPUTE] = tr;
            seed_row = ROW_RECOMPUTE;
            shown[ROW_RECOMPUTE] = 1;
            snprintf(notes[ROW_RECOMPUTE], sizeof notes[0], "(%s, recomputing every group)",
                     hg_baseline_name((enum hg_baseline)b));
        } else {
            hg_strategy_free(t);
        }
    }
    char seed_name[128];
    snprintf(seed_name, sizeof seed_name, "%s%s%s",
             seed_row == ROW_ALONE ? "alone" : seed_row == ROW_RECOMPUTE ? "recompute"
                                                                          : base_name,
             notes[seed_row][0] ? " " : "", notes[seed_row]);
    struct hg_strategy *best = hg_strategy_copy(seed);
    *br = sr;
    struct search_report rep;
    memset(&rep, 0, sizeof rep);
    if (po->mcmc) {
        search(sim, pg, po, seed, &sr, &best, br, &rep);
        res[ROW_MCMC] = *br;
        shown[ROW_MCMC] = 1;
    }
    /* the choice, its row and why.  A gain within the margin is no gain:
     * the best baseline (unless it is out of memory: then the search's
     * answer stands) */
    int chosen = seed_row;
    char why[320] = "";
    int keep = -1;
    for (int b = 0; po->keep && b < HG_BASE_COUNT; b++)
        if (strcmp(po->keep, hg_baseline_name((enum hg_baseline)b)) == 0)
            keep = b;
    const struct hg_sim_result *mr = &res[ROW_MCMC];
    if (keep >= 0) {
        chosen = keep;
        snprintf(why, sizeof why, "--baseline %s", po->keep);
    } else if (po->mcmc && !rb->oom && mr->iter_s >= rb->iter_s * (1 - po->margin)) {
        chosen = bi;
        if (po->margin > 0 && mr->iter_s < rb->iter_s)
            snprintf(why, sizeof why, "no candidate beat it by the %g%% margin (mcmc: %.1f%% "
                     "faster)", po->margin * 100, gain(mr, rb));
        else
            snprintf(why, sizeof why, "no candidate beat it");
    } else if (po->mcmc) {
        chosen = ROW_MCMC;
        if (rb->oom)
            snprintf(why, sizeof why, "every baseline is out of memory and it %s",
                     mr->oom ? "overflows least" : "fits");
        else if (po->margin > 0)
            snprintf(why, sizeof why, "it is %.1f%% faster than the best baseline (%s), "
                     "above the %g%% margin", gain(mr, rb), base_name, po->margin * 100);
        else
            snprintf(why, sizeof why, "it is %.1f%% faster than the best baseline (%s)",
                     gain(mr, rb), base_name);
    } else if (chosen == ROW_RECOMPUTE) {
        snprintf(why, sizeof why, "every baseline is out of memory and recomputing %s",
                 res[chosen].oom ? "overflows least" : "fits");
    } else {
        snprintf(why, sizeof why, "%s", rb->oom ? "every baseline is out of memory and it "
                                                  "overflows least"
                                                : "it is the fastest feasible baseline");
    }
    if (chosen != ROW_MCMC && chosen != seed_row) {
        hg_strategy_free(best);
        best = hg_strategy_copy(chosen < HG_BASE_COUNT ? bs[chosen] : seed);
        *br = res[chosen];
    } else if (chosen == seed_row && po->mcmc) {
        hg_strategy_free(best);
        best = hg_strategy_copy(seed);
        *br = res[chosen];
    }
    struct hg_strategy *xs[ROWS] = {NULL}; /* the pipeline and TP rows' strategies */
    char no_tp[256] = "";
    pipelines(sim, pg, pr, po, t0, res, shown, xs);
    for (int i = ROW_PIPE_U; i <= ROW_PIPE; i++)
        if (shown[i] && pipe_not_candidate(po))
            snprintf(whyn[i], sizeof whyn[0], "%s", pipe_not_candidate(po));
    tensors(sim, pg, po, res, shown, xs, whyn, no_tp, sizeof no_tp);
    static const char *const row_names[] = {[ROW_ALONE] = "alone",
                                            [ROW_RECOMPUTE] = "recompute",
                                            [ROW_MCMC] = "mcmc",
                                            [ROW_PIPE_U] = "PIPE-U",
                                            [ROW_PIPE_S] = "PIPE-S",
                                            [ROW_PIPE] = "pipeline",
                                            [ROW_TP_E] = "TP-E",
                                            [ROW_TP_S] = "TP-S"};
    int kept = -1; /* --baseline naming a pipeline or tensor-parallel row */
    for (int i = ROW_PIPE_U; po->keep && i < ROWS; i++)
        if (row_names[i] && strcmp(po->keep, row_names[i]) == 0 && shown[i] && xs[i])
            kept = i;
    if (kept >= 0) {
        chosen = kept;
        snprintf(why, sizeof why, "--baseline %s", po->keep);
        hg_strategy_free(best);
        best = hg_strategy_copy(xs[kept]);
    } else {
        chosen = choose_other(po, res, shown, xs, whyn, chosen,
                              chosen < HG_BASE_COUNT ? hg_baseline_name((enum hg_baseline)chosen)
                                                     : row_names[chosen],
                              &best, why, sizeof why);
    }
    if (chosen >= ROW_PIPE_U)
        *br = res[chosen];
    /* the search toggles recomputation on groups that drop nothing (no
     * cost, no effect): their flags go, so the file says what runs */
    struct hg_sim_result tr;
    hg_sim_full(sim, best, &tr);
    const struct hg_lowered *lw = hg_sim_lowered(sim);
    for (int k = 0; k < best->ngroups; k++)
        if (best->cfg[k].recompute && lw->dstart[k + 1] == lw->dstart[k])
            best->cfg[k].recompute = 0;
    hg_sim_full(sim, best, &tr);
    hg_plan_print_head(o, c, ng);
    for (int i = 0; i < ROWS; i++)
        if (shown[i])
            hg_plan_print_row(o, i < HG_BASE_COUNT ? hg_baseline_name((enum hg_baseline)i)
                                                   : row_names[i],
                              &res[i], c, whyn[i][0] ? whyn[i] : NULL,
                              notes[i][0] ? notes[i] : NULL, !po->rows_only && i == chosen,
                              po->verbose);
    if (no_tp[0]) /* Megatron's rows, said absent and why */
        fprintf(o, "  TP-E, TP-S: not planned: %s\n", no_tp);
    if (po->rows_only)
        goto out;
    if (po->mcmc)
        print_search(o, po, seed_name, &rep);
    hg_plan_print_recompute(o, best);
    fprintf(o, "chosen: %s, because %s\n",
            chosen < HG_BASE_COUNT ? hg_baseline_name((enum hg_baseline)chosen)
                                   : row_names[chosen], why);
out:
    for (int b = 0; b < HG_BASE_COUNT; b++)
        hg_strategy_free(bs[b]);
    hg_strategy_free(seed);
    hg_strategy_free(as);
    for (int i = 0; i < ROWS; i++)
        hg_strategy_free(xs[i]);
    return best;
}
