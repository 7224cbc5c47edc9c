/* plan.c - planning as hgplan --search and hgtrain --plan run it: the
 * baselines simulated and list-scheduled, the MCMC search from the best of
 * them (restricted to what hgtrain executes when asked), and the table
 * both programs print. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/hg_planner.h"

void hg_plan_print_result(FILE *o, const char *name, const struct hg_sim_result *r,
                          const struct hg_cluster *c, double ref)
{
    fprintf(o, "  %-8s %9.4f s", name, r->iter_s);
    if (ref > 0 && !r->oom)
        fprintf(o, "  speedup of the found strategy %+6.1f%%", (r->iter_s - ref) / ref * 100);
    fprintf(o, "%s\n    peak GB:", r->oom ? "  OOM" : "");
    if (c->ndev > 32) { /* a line per device would be thousands of columns */
        int hi = 0, lo = 0;
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
        fprintf(o, "    recomputation in %d of %d groups\n", n, st->ngroups);
}

/* Executable: the data-parallel baselines, and MP when any mix executes;
 * no recomputation. */
static int candidate(const struct hg_plan_opts *po, int b)
{
    if ((po->executable & HG_EXEC_NOPS) && (b == HG_BASE_EV_PS || b == HG_BASE_CP_PS))
        return 0;
    return !po->executable || b != HG_BASE_MP || (po->executable & HG_EXEC_SPLIT);
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

/* MCMC from seed (its simulation sr, named seed_name and seed_how) in
 * best (a copy of seed), list-scheduled into *br; never worse than the
 * seed.  Its statistics printed to o. */
static void search(FILE *o, struct hg_sim *sim, const struct hg_pgraph *pg,
                   const struct hg_plan_opts *po, const struct hg_strategy *seed,
                   const struct hg_sim_result *sr, const char *seed_name, const char *seed_how,
                   struct hg_strategy **best, struct hg_sim_result *br)
{
    double st0 = hg_now();
    struct hg_search_opts so = {.budget_s = po->budget_s > 0 ? po->budget_s : 30,
                                .max_iters = po->max_iters,
                                .stagnation = 20000,
                                .seed = po->seed,
                                .after_full = 5, /* sched_best, the check */
                                .beta = (po->beta > 0 ? po->beta : 1000) /
                                        hg_search_cost(br),
                                .executable = po->executable};
    struct hg_search_stats ss;
    hg_search_mcmc(sim, pg, *best, &so, &ss);
    enum hg_sched_policy pol;
    hg_sched_best(sim, pg, *best, br, &pol);
    /* never worse than the seed */
    if (hg_search_cost(br) > hg_search_cost(sr)) {
        hg_strategy_free(*best);
        *best = hg_strategy_copy(seed);
        hg_sim_full(sim, *best, br);
    }
    if (ss.iters == 0 && so.budget_s > 0)
        fprintf(o, "note: --budget %g s leaves no time for a proposal after the seed's "
                "and the result's simulations on this cluster (%.2f s so far)\n",
                so.budget_s, hg_now() - st0);
    static const char *const stops[] = {
        [HG_SEARCH_STOP_ITERS] = "the proposal cap",
        [HG_SEARCH_STOP_STAGNATION] = "20000 proposals without a better one",
        [HG_SEARCH_STOP_BUDGET] = "the time budget: not reproducible"};
    fprintf(o, "mcmc from %s%s: %ld proposals (%ld accepted, %ld improvements) in "
            "%.2f s, seed %lld; order: %s\n", seed_name, seed_how, ss.iters, ss.accepted,
            ss.improved, hg_now() - st0, (long long)po->seed,
            pol == HG_SCHED_RANK  ? "list scheduling (rank)"
            : pol == HG_SCHED_FIFO ? "FIFO"
                                   : "the search's own");
    if (po->executable)
        fprintf(o, "  stopped at %s\n", stops[ss.stop]);
    if (po->executable)
        fprintf(o, "  executable strategies only (%s%s): %ld proposals had no "
                "executable form\n", po->executable & HG_EXEC_SPLIT ? "any mix"
                : po->executable & HG_EXEC_MP ? "data-parallel shaped or model parallel"
                : "data-parallel shaped",
                po->executable & HG_EXEC_NOPS ? ", AllReduce only" : "", ss.skipped);
}

struct hg_strategy *hg_plan_run(FILE *o, struct hg_sim *sim, const struct hg_pgraph *pg,
                                const struct hg_pprice *pr, const struct hg_plan_opts *po,
                                struct hg_sim_result *br)
{
    const struct hg_cluster *c = pg->c;
    int ng = po->groups > 0 ? po->groups : 64;
    struct hg_sim_result res[HG_BASE_COUNT];
    struct hg_strategy *bs[HG_BASE_COUNT];
    fprintf(o, "baselines (%d op groups, list-scheduled):\n", ng);
    int bi = -1;
    for (int b = 0; b < HG_BASE_COUNT; b++) {
        bs[b] = hg_strategy_new(pg->nops, pg->ndev, 1);
        hg_strategy_group(bs[b], pg, pr, ng);
        hg_baseline_apply(bs[b], pg, (enum hg_baseline)b);
        hg_sched_best(sim, pg, bs[b], &res[b], NULL);
        if (candidate(po, b) && (bi < 0 || hg_search_cost(&res[b]) < hg_search_cost(&res[bi])))
            bi = b;
    }
    struct hg_strategy *seed = hg_strategy_copy(bs[bi]);
    struct hg_sim_result sr = res[bi];
    const char *seed_how = "";
    char seed_name[96];
    snprintf(seed_name, sizeof seed_name, "%s", hg_baseline_name((enum hg_baseline)bi));
    /* every group on one device (small clusters; model parallelism must
     * be allowed): no communication at all, the answer when the links cost
     * more than another device saves, which a search from a data-parallel
     * seed never reaches one group at a time */
    struct hg_sim_result ar = {0};
    struct hg_strategy *as = NULL;
    int alone = po->mcmc && c->ndev <= 8 && (!po->executable || (po->executable & HG_EXEC_MP))
                    ? best_alone(sim, pg, bs[0], &as, &ar)
                    : -1;
    if (alone >= 0 && hg_search_cost(&ar) < hg_search_cost(&sr)) {
        hg_strategy_free(seed);
        seed = hg_strategy_copy(as);
        sr = ar;
        snprintf(seed_name, sizeof seed_name, "alone (every group on %s)",
                 c->devices[alone].name);
    }
    if (res[bi].oom) {
        /* every baseline is out of memory: seed with the best of them
         * recomputing every group's activations */
        for (int b = 0; b < HG_BASE_COUNT; b++) {
            struct hg_strategy *t = hg_strategy_copy(bs[b]);
            struct hg_sim_result tr;
            for (int k = 0; k < t->ngroups; k++)
                t->cfg[k].recompute = 1;
            hg_sched_best(sim, pg, t, &tr, NULL);
            if (hg_search_cost(&tr) < hg_search_cost(&sr)) {
                hg_strategy_free(seed);
                seed = t;
                sr = tr;
                bi = b;
                seed_how = " with recomputation";
                snprintf(seed_name, sizeof seed_name, "%s", hg_baseline_name((enum hg_baseline)b));
            } else {
                hg_strategy_free(t);
            }
        }
        fprintf(o, "every baseline is out of memory; %s with recomputation in every group: "
                "%.4f s%s\n", hg_baseline_name((enum hg_baseline)bi), sr.iter_s,
                sr.oom ? " (still OOM)" : "");
    }
    struct hg_strategy *best = hg_strategy_copy(seed);
    *br = sr;
    if (po->mcmc)
        search(o, sim, pg, po, seed, &sr, seed_name, seed_how, &best, br);
    /* a gain within the margin is no gain: the best baseline (unless it is
     * out of memory: then the search's answer stands) */
    int kept_base = 0;
    const struct hg_sim_result *rb = &res[bi];
    if (po->mcmc && po->margin > 0 && !rb->oom && !br->oom &&
        br->iter_s > rb->iter_s * (1 - po->margin) && br->iter_s < rb->iter_s) {
        fprintf(o, "  the search's %.4f s is %.1f%% under %s's %.4f s, within the margin "
                "(%.0f%%): %s kept\n", br->iter_s, (rb->iter_s - br->iter_s) / rb->iter_s * 100,
                hg_baseline_name((enum hg_baseline)bi), rb->iter_s, po->margin * 100,
                hg_baseline_name((enum hg_baseline)bi));
        hg_strategy_free(best);
        best = hg_strategy_copy(bs[bi]);
        *br = *rb;
        kept_base = 1;
    }
    /* the search toggles recomputation on groups that drop nothing (no
     * cost, no effect): their flags go, so the file says what runs */
    struct hg_sim_result tr;
    hg_sim_full(sim, best, &tr);
    const struct hg_lowered *lw = hg_sim_lowered(sim);
    for (int k = 0; k < best->ngroups; k++)
        if (best->cfg[k].recompute && lw->dstart[k + 1] == lw->dstart[k])
            best->cfg[k].recompute = 0;
    hg_sim_full(sim, best, &tr);
    fprintf(o, "simulated per-iteration time:\n");
    for (int b = 0; b < HG_BASE_COUNT; b++)
        hg_plan_print_result(o, hg_baseline_name((enum hg_baseline)b), &res[b], c,
                             br->oom ? 0 : br->iter_s);
    if (alone >= 0) {
        hg_plan_print_result(o, "alone", &ar, c, br->oom ? 0 : br->iter_s);
        fprintf(o, "    (every group on %s)\n", c->devices[alone].name);
    }
    hg_plan_print_result(o, po->mcmc && !kept_base ? "hgplan" : "best", br, c, 0);
    hg_plan_print_recompute(o, best);
    if (!po->mcmc && po->executable)
        fprintf(o, "best: %s\n", hg_baseline_name((enum hg_baseline)bi));
    for (int b = 0; po->keep && b < HG_BASE_COUNT; b++)
        if (strcmp(po->keep, hg_baseline_name((enum hg_baseline)b)) == 0) {
            hg_strategy_free(best);
            best = hg_strategy_copy(bs[b]);
            *br = res[b];
            fprintf(o, "kept: %s (--baseline)\n", po->keep);
        }
    for (int b = 0; b < HG_BASE_COUNT; b++)
        hg_strategy_free(bs[b]);
    hg_strategy_free(seed);
    hg_strategy_free(as);
    return best;
}
