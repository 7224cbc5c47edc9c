/* run-balance.c - hgtrain's epoch plan and its rebalancing: an epoch as
 * segments of per-rank budgets (a resumed one goes on with its
 * checkpoint's), each rank's batch cost, and --rebalance-interval's
 * decisions, which move the capacities towards the ranks' measured speeds
 * and start a new segment.  Uses the log (run-log.c) and no other file of
 * the run. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hg_base.h"
#include "trainer/run-impl.h"

/* --rebalance-interval: a speed this close to its capacity (relative)
 * changes nothing */
#define REBALANCE_BAND 0.05

/* The plan of epoch r->epoch from first_step on. A fresh epoch is one
 * segment with this run's budgets; a resumed one continues the
 * checkpoint's segments, and starts a new one at first_step when this run
 * has another world or other budgets (docs/distributed.md, "Resuming on
 * another cluster"). No segments from the checkpoint (a file from before
 * segments): one segment with this run's budgets, as always. */
int hg__run_plan_epoch(struct hg__run *r, int64_t first_step, int resumed,
                       struct hg_epoch **ep, char *err, size_t errlen)
{
    if (first_step == 0) {
        free(r->segs);
        r->segs = NULL;
        r->nsegs = 0;
    }
    enum { MAXSEG = 4096 };
    struct hg_epoch_seg *sg = malloc(MAXSEG * sizeof(*sg)); /* [MAXSEG] */
    if (!sg)
        return hg_kerr(err, errlen, "out of memory");
    int ns = r->nsegs ? hg_epoch_segs_decode(r->segs, r->nsegs, sg, MAXSEG, err, errlen) : 0;
    /* --rebalance-interval resumed on the same world: the last segment's
     * budgets (a decision of the run that saved it) go on, and the
     * capacities start from them */
    int keep = resumed && r->rebalance && ns > 0 && sg[ns - 1].world == r->world;
    if (keep) {
        r->rb_guess = 0; /* a decision of the run that saved it */
        const struct hg_epoch_seg *g = &sg[ns - 1];
        const int64_t *b = g->sent[0] != INT64_MAX ? g->sent : g->tok;
        int64_t mx = 1;
        for (int i = 0; i < r->world; i++)
            mx = b[i] > mx ? b[i] : mx;
        for (int i = 0; i < r->world; i++)
            r->cap[i] = b[i] > 0 ? (double)b[i] / (double)mx : 1.0 / (double)mx;
    }
    if (ns >= 0 && !keep &&
        hg_epoch_segs_append(&r->segs, &r->nsegs, r->nsegs ? first_step : 0, &r->bo,
                             err, errlen) < 0)
        ns = -1;
    if (ns >= 0 && !keep)
        ns = hg_epoch_segs_decode(r->segs, r->nsegs, sg, MAXSEG, err, errlen);
    int rc = ns < 0 ? -1
                    : hg_epoch_plan_segments(ep, r->train.cost, r->train.n, sg, ns,
                                             r->bo.seed, r->bo.shuffle,
                                             (uint64_t)r->epoch, err, errlen);
    if (rc == 0 && ns > 1 && first_step == sg[ns - 1].start && r->rank == 0) {
        char line[256];
        snprintf(line, sizeof(line), "| epoch %lld: segment %d from step %lld on %d "
                 "ranks: %lld steps in the epoch\n", (long long)r->epoch, ns - 1,
                 (long long)first_step, sg[ns - 1].world, (long long)hg_epoch_steps(*ep));
        hg__run_log(r, line, NULL);
    }
    free(sg);
    return rc;
}

/* Rank i's batch at step: its cost, samples x their largest cost (the
 * padding-aware cost the budgets bound). */
double hg__run_batch_cost(const struct hg__run *r, const struct hg_epoch *ep, int i,
                          int64_t step)
{
    int64_t c;
    const int64_t *idx = hg_epoch_batch(ep, i, step, &c);
    int32_t mx = 0;
    for (int64_t k = 0; k < c; k++)
        mx = r->train.cost[idx[k]] > mx ? r->train.cost[idx[k]] : mx;
    return (double)c * (double)mx;
}

/* --rebalance-interval: each rank's speed over the last interval (batch
 * cost per compute second, the same numbers on every rank: the costs from
 * the plan, the times from the statistics allreduce), relative to the
 * fastest, moves the capacities halfway there (an exponential moving
 * average, so one noisy interval does not swing them; the first decision
 * after a guess goes all the way); new budgets start a segment at step.
 * 1: a new segment; 0: the same budgets; -1: error. */
int hg__run_rebalance(struct hg__run *r, int64_t step, char *err, size_t errlen)
{
    double vmax = 0;
    for (int i = 0; i < r->world; i++) {
        double v = r->rb_time[i] > 0 ? r->rb_cost[i] / r->rb_time[i] : 0;
        vmax = v > vmax ? v : vmax;
    }
    /* every speed within REBALANCE_BAND of its capacity: nothing to gain,
     * and ranks of equal speed keep equal budgets through timing noise */
    int near = 1;
    for (int i = 0; i < r->world && vmax > 0; i++)
        if (r->rb_time[i] > 0 && r->rb_cost[i] > 0 &&
            fabs(r->rb_cost[i] / r->rb_time[i] / vmax - r->cap[i]) > REBALANCE_BAND * r->cap[i])
            near = 0;
    if (near) {
        memset(r->rb_cost, 0, (size_t)r->world * sizeof(double));
        memset(r->rb_time, 0, (size_t)r->world * sizeof(double));
        r->rb_guess = 0;
        return 0;
    }
    double w = r->rb_guess ? 1.0 : 0.5;
    r->rb_guess = 0;
    /* a rank without data or time this interval keeps its capacity */
    for (int i = 0; i < r->world && vmax > 0; i++)
        if (r->rb_time[i] > 0 && r->rb_cost[i] > 0)
            r->cap[i] = (1 - w) * r->cap[i] + w * (r->rb_cost[i] / r->rb_time[i] / vmax);
    double cmax = 0;
    for (int i = 0; i < r->world; i++)
        cmax = r->cap[i] > cmax ? r->cap[i] : cmax;
    for (int i = 0; i < r->world; i++) /* the fastest is 1 */
        r->cap[i] = r->cap[i] / cmax;
    memset(r->rb_cost, 0, (size_t)r->world * sizeof(double));
    memset(r->rb_time, 0, (size_t)r->world * sizeof(double));
    int nr = hg_epoch_segs_append(&r->segs, &r->nsegs, step, &r->bo, err, errlen);
    if (nr == 1 && r->rank == 0) {
        size_t jn = 256 + 48 * (size_t)r->world;
        char *js = malloc(jn); /* [jn] */
        if (!js)
            return hg_kerr(err, errlen, "out of memory");
        int k = snprintf(js, jn, "{\"rebalance\": %llu, \"epoch\": %lld, \"step\": %lld, "
                         "\"capacity\": [", (unsigned long long)r->num_updates,
                         (long long)r->epoch, (long long)step);
        for (int i = 0; i < r->world; i++)
            k += snprintf(js + k, jn - (size_t)k, "%s%.4f", i ? ", " : "", r->cap[i]);
        /* the budgets the capacities give (the new segment's) */
        struct hg_epoch_seg *sg = malloc((size_t)r->nsegs * sizeof(*sg)); /* [nsegs] */
        int ns = sg ? hg_epoch_segs_decode(r->segs, r->nsegs, sg, (int)r->nsegs, err, errlen)
                    : -1;
        if (ns > 0) {
            const struct hg_epoch_seg *g = &sg[ns - 1];
            int sent = g->sent[0] != INT64_MAX;
            k += snprintf(js + k, jn - (size_t)k, "], \"%s\": [", sent ? "sentences" : "tokens");
            for (int i = 0; i < r->world; i++)
                k += snprintf(js + k, jn - (size_t)k, "%s%lld", i ? ", " : "",
                              (long long)(sent ? g->sent[i] : g->tok[i]));
        }
        free(sg);
        if (ns <= 0) {
            free(js);
            return ns < 0 ? -1 : hg_kerr(err, errlen, "rebalance: no segment");
        }
        snprintf(js + k, jn - (size_t)k, "]}\n");
        char line[128];
        snprintf(line, sizeof(line), "| update %llu: rebalanced the capacities\n",
                 (unsigned long long)r->num_updates);
        hg__run_log(r, line, js);
        free(js);
    }
    return nr;
}

/* HG_TRACE_SAMPLES (a test aid): the sample indices this rank consumes,
 * one line per step, "epoch E step S rank R: i i ...". */
void hg__run_trace_batch(struct hg__run *r, const struct hg_epoch *ep, int64_t step)
{
    int64_t c;
    const int64_t *idx = hg_epoch_batch(ep, r->rank, step, &c);
    fprintf(r->trace, "epoch %lld step %lld rank %d:", (long long)r->epoch,
            (long long)step, r->rank);
    for (int64_t i = 0; i < c; i++)
        fprintf(r->trace, " %lld", (long long)idx[i]);
    fputc('\n', r->trace);
    fflush(r->trace);
}
