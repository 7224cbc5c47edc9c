/* pipeline.c - the pipeline parallel mode in the planner: the strategy
 * file's `pipeline` block (micro-batches and a schedule) and its lowering.
 *
 * A pipeline cuts the global batch into M micro-batches (micro-batch m
 * holds rows [floor(m*B/M), floor((m+1)*B/M)): they differ by one row at
 * most, M need not divide B).  Its stages are the devices of its groups
 * (every group model parallel: one device each), in the order the
 * forward reaches them; each device runs, per micro-batch, a forward
 * micro-step (its forward ops on those rows) and a backward one (its
 * backward ops), in the order the schedule gives:
 *
 *   gpipe  every forward micro-step, then every backward one (micro-batch
 *          order both times): M micro-batches' activations in flight;
 *   1f1b   stage s of P runs min(P - 1 - s, M) forwards first, then one
 *          forward and one backward in turn, then the remaining backwards
 *          (PipeDream-flush): at most P - s in flight.
 *
 * The lowering plays the schedule with unit times (forward 1, backward 2)
 * against the dependencies between micro-steps that the graph's edges
 * across devices make (a micro-step waits for the micro-steps of the same
 * micro-batch on other devices whose outputs it reads), which refuses a
 * placement whose stages are not consecutive (the forward goes back to a
 * device it left) or any order that would wait forever, naming the stage
 * and what it waits for.  Every (op, micro-batch) then gets an order key,
 * its micro-step's start x (ops + 1) + the op's place in the strategy's
 * order: one total order that each device's part follows, which the
 * executor (controller/hybrid.c, through trainer/strategy.c) and the
 * simulator take.  The micro-batches' bounds are cuts of the lowering
 * (hg_lowered.cutn), so the executor computes each op once per
 * micro-batch, and each transfer of the lowering moves per micro-batch the
 * rows of it that the micro-batch holds.  Its price: hg__pipe_time.  The
 * baselines and the search over pipelines: pipe_plan.c. */
#define _POSIX_C_SOURCE 200809L
#include <libconfig.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/hg_planner.h"
#include "planner/planner-impl.h"

static const char *const sched_names[] = {
    [HG_SCHED_GPIPE] = "gpipe",
    [HG_SCHED_1F1B] = "1f1b",
};

const char *hg_pipe_sched_name(enum hg_psched s)
{
    return (unsigned)s <= HG_SCHED_1F1B ? sched_names[s] : "?";
}

/* ------------------------------------------------------------ the file */

int hg__pipe_parse(struct hg_cfgctx *p, const config_setting_t *root, struct hg_strategy *s)
{
    static const char *const keys[] = {"micro_batches", "schedule", NULL};
    const config_setting_t *pb, *mb, *sc;
    if (hg__cfg_member(p, root, "pipeline", NULL, HG_CFG_T(CONFIG_TYPE_GROUP),
                       "a group { micro_batches = M; schedule = \"1f1b\"; }", &pb) < 0)
        return -1;
    if (!pb)
        return 0;
    if (hg__cfg_check_keys(p, pb, "pipeline", keys) != 0 ||
        hg__cfg_member(p, pb, "micro_batches", "pipeline",
                       HG_CFG_T(CONFIG_TYPE_INT) | HG_CFG_T(CONFIG_TYPE_INT64),
                       "an integer", &mb) < 0 ||
        hg__cfg_member(p, pb, "schedule", "pipeline", HG_CFG_T(CONFIG_TYPE_STRING),
                       "a string \"gpipe\" or \"1f1b\"", &sc) < 0)
        return -1;
    if (!mb)
        return hg__cfg_err(p, pb, "pipeline: micro_batches is missing");
    long long m = config_setting_get_int64(mb);
    if (m < 1 || m > HG_PLAN_MAXREP)
        return hg__cfg_err(p, mb, "pipeline: micro_batches = %lld, expected 1 to %d", m,
                           HG_PLAN_MAXREP);
    s->nmicro = (int)m;
    s->sched = HG_SCHED_1F1B;
    if (sc) {
        const char *v = config_setting_get_string(sc);
        if (strcmp(v, "gpipe") == 0)
            s->sched = HG_SCHED_GPIPE;
        else if (strcmp(v, "1f1b") != 0)
            return hg__cfg_err(p, sc, "pipeline: schedule \"%s\": expected \"gpipe\" or "
                               "\"1f1b\"", v);
    }
    return 0;
}

void hg__pipe_write(FILE *f, const struct hg_strategy *s)
{
    if (s->nmicro > 0)
        fprintf(f, "# micro-batches of the batch through the groups' devices as stages\n"
                "pipeline = { micro_batches = %d; schedule = \"%s\"; };\n", s->nmicro,
                hg_pipe_sched_name(s->sched));
}

/* ------------------------------------------------------------ lowering */

/* A micro-step: device d's forward (b = 0) or backward (b = 1) of
 * micro-batch m, index (d * M + m) * 2 + b. */
static int step_id(int M, int d, int m, int b) { return (d * M + m) * 2 + b; }

/* Each stage's micro-steps in the schedule's order into seq[P][2M] (step
 * ids; stage s on device dev[s]). */
static void schedule(enum hg_psched sc, int P, int M, const int *dev, int *seq)
{
    for (int s = 0; s < P; s++) {
        int *q = &seq[(size_t)s * 2 * (size_t)M], n = 0, f = 0, b = 0, d = dev[s];
        int warm = sc == HG_SCHED_GPIPE ? M : P - 1 - s < M ? P - 1 - s : M;
        for (; f < warm; f++)
            q[n++] = step_id(M, d, f, 0);
        while (f < M) {
            q[n++] = step_id(M, d, f++, 0);
            q[n++] = step_id(M, d, b++, 1);
        }
        while (b < M)
            q[n++] = step_id(M, d, b++, 1);
    }
}

/* The devices holding forward ops (the stages) into dev[*P], in the order
 * the forward goes through them: a topological order of the devices by
 * the forward's edges between them, ties by their first op the batch
 * reaches (id order); devices in a cycle last (play() names the wait);
 * stage[d] each device's, -1: none. */
static int stages(const struct hg_lowered *lw, int *dev, int *stage)
{
    const struct hg_pgraph *pg = lw->pg;
    int nd = lw->ndev, P = 0;
    int *first = malloc(((size_t)nd + 1) * sizeof *first); /* [nd] first batch op, or
                                                              forward op + nops */
    int *indeg = calloc((size_t)nd + 1, sizeof *indeg);      /* [nd] */
    unsigned char *edge = calloc((size_t)nd * (size_t)nd + 1, 1); /* [nd][nd] e -> d */
    HG_CHECK(first && indeg && edge);
    for (int d = 0; d < nd; d++)
        first[d] = -1, stage[d] = -1;
    for (int v = lw->nops - 1; v >= 0; v--) {
        const struct hg_pop *o = &pg->ops[v];
        int d = lw->ops[v].place[0].dev;
        if (o->phase != HG_PH_FORWARD)
            continue;
        int f = o->batch ? v : v + lw->nops;
        if (first[d] < 0 || f < first[d] || (first[d] >= lw->nops && o->batch))
            first[d] = f;
        for (int k = 0; k < o->nin; k++) {
            int u = o->in[k].op;
            int e = u >= 0 && pg->ops[u].phase == HG_PH_FORWARD ? lw->ops[u].place[0].dev : d;
            if (e != d && !edge[(size_t)e * (size_t)nd + (size_t)d]) {
                edge[(size_t)e * (size_t)nd + (size_t)d] = 1;
                indeg[d]++;
            }
        }
    }
    for (int placed = 1; placed;) {
        placed = 0;
        int pick = -1; /* the ready device whose first op is earliest */
        for (int d = 0; d < nd; d++)
            if (first[d] >= 0 && stage[d] < 0 && indeg[d] == 0 &&
                (pick < 0 || first[d] < first[pick]))
                pick = d;
        if (pick < 0)
            break;
        stage[pick] = P;
        dev[P++] = pick;
        placed = 1;
        for (int d = 0; d < nd; d++)
            if (edge[(size_t)pick * (size_t)nd + (size_t)d])
                indeg[d]--;
    }
    for (int d = 0; d < nd; d++) /* a cycle: last, for play() to name */
        if (first[d] >= 0 && stage[d] < 0) {
            stage[d] = P;
            dev[P++] = d;
        }
    free(first);
    free(indeg);
    free(edge);
    return P;
}

/* dep[x * ndev + d] (x a micro-step of micro-batch 0, d the producer's
 * device): the kind of micro-step on d that x waits for, +1 (0: none).
 * From the edges between ops of different devices; -1 with err for one
 * the schedule cannot run (a backward op's input from a later forward, an
 * update's output read in the step). */
static int deps(const struct hg_lowered *lw, const int *stage, unsigned char *dep, char *err,
                size_t errlen)
{
    const struct hg_pgraph *pg = lw->pg;
    for (int v = 0; v < lw->nops; v++) {
        const struct hg_pop *o = &pg->ops[v];
        int d = lw->ops[v].place[0].dev;
        if (o->phase == HG_PH_UPDATE)
            continue;
        if (stage[d] < 0)
            return hg_kerr(err, errlen, "pipeline: op %d (backward) is on %s, which holds no "
                           "forward op: every device of a pipeline is a stage with both",
                           v, pg->c->devices[d].name);
        for (int k = 0; k < o->nin; k++) {
            int u = o->in[k].op;
            if (u < 0 || pg->ops[u].phase == HG_PH_UPDATE)
                continue;
            int e = lw->ops[u].place[0].dev, bu = pg->ops[u].phase != HG_PH_FORWARD;
            int bv = o->phase != HG_PH_FORWARD;
            if (e == d)
                continue;
            if (bu && !bv)
                return hg_kerr(err, errlen, "pipeline: forward op %d on %s reads backward "
                               "op %d on %s", v, pg->c->devices[d].name, u,
                               pg->c->devices[e].name);
            unsigned char *x = &dep[(size_t)(bv * lw->ndev + d) * (size_t)lw->ndev + (size_t)e];
            *x = (unsigned char)(*x > bu + 1 ? *x : bu + 1);
        }
    }
    return 0;
}

/* Plays the stages' sequences seq[P][2M] with unit times against the
 * dependencies; start[step] gets each micro-step's start.  -1 with err
 * naming a stage that would wait forever. */
static int play(const struct hg_lowered *lw, const struct hg_strategy *st, int P,
                const int *dev, const int *stage, const int *seq, const unsigned char *dep,
                int64_t *start, char *err, size_t errlen)
{
    int M = st->nmicro, nd = lw->ndev;
    int *at = calloc((size_t)P + 1, sizeof *at);          /* [P] next of each stage */
    int64_t *free_at = calloc((size_t)P + 1, sizeof *free_at); /* [P] */
    int64_t *end = malloc(((size_t)nd * 2 * (size_t)M + 1) * sizeof *end); /* [steps] */
    int rc = 0;
    HG_CHECK(at && free_at && end);
    for (size_t i = 0; i < (size_t)nd * 2 * (size_t)M; i++)
        end[i] = -1;
    for (int moved = 1; moved;) {
        moved = 0;
        for (int s = 0; s < P; s++) {
            if (at[s] == 2 * M)
                continue;
            int x = seq[(size_t)s * 2 * (size_t)M + (size_t)at[s]];
            int b = x & 1, m = (x >> 1) % M, d = dev[s];
            int64_t t = free_at[s];
            int ready = 1;
            for (int e = 0; e < nd && ready; e++) {
                int k = dep[(size_t)(b * nd + d) * (size_t)nd + (size_t)e];
                if (k == 0)
                    continue;
                int64_t y = end[step_id(M, e, m, k - 1)];
                ready = y >= 0;
                t = y > t ? y : t;
            }
            if (!ready)
                continue;
            start[x] = t;
            end[x] = free_at[s] = t + 1 + b;
            at[s]++;
            moved = 1;
        }
    }
    for (int s = 0; s < P && rc == 0; s++)
        if (at[s] < 2 * M) {
            int x = seq[(size_t)s * 2 * (size_t)M + (size_t)at[s]];
            int b = x & 1, m = (x >> 1) % M, d = dev[s], e = 0, k = 0;
            for (; e < nd; e++)
                if ((k = dep[(size_t)(b * nd + d) * (size_t)nd + (size_t)e]) != 0 &&
                    end[step_id(M, e, m, k - 1)] < 0)
                    break;
            rc = hg_kerr(err, errlen, "pipeline: stage %d (%s) would wait forever: its %s of "
                         "micro-batch %d waits for the %s of micro-batch %d on %s (stage %d), "
                         "which waits in turn; %s", s, lw->pg->c->devices[d].name,
                         b ? "backward" : "forward", m, k == 2 ? "backward" : "forward", m,
                         e < nd ? lw->pg->c->devices[e].name : "?", e < nd ? stage[e] : -1,
                         b ? "the schedule cannot run this placement"
                           : "a stage must hold consecutive ops: the forward goes from "
                             "stage to stage and never back");
        }
    free(at);
    free(free_at);
    free(end);
    return rc;
}

void hg__pipe_free(struct hg_lowered *lw)
{
    free(lw->mb);
    free(lw->mkey);
    free(lw->stage);
    lw->mb = NULL;
    lw->mkey = NULL;
    lw->stage = NULL;
    lw->nmicro = lw->nstages = 0;
}

int hg__pipe_lower(struct hg_lowered *lw, const struct hg_strategy *st, char *err,
                   size_t errlen)
{
    hg__pipe_free(lw);
    if (st->nmicro <= 0)
        return 0;
    int M = st->nmicro, nd = lw->ndev, N = lw->nops;
    for (int k = 0; k < st->ngroups; k++)
        if (st->cfg[k].mode != HG_MODE_MP)
            return hg_kerr(err, errlen, "pipeline: group %d is data parallel; a pipeline's "
                           "stages are one device each so far (every group mode = \"mp\")", k);
    if (M > lw->batch)
        return hg_kerr(err, errlen, "pipeline: %d micro-batches, but the batch has %lld "
                       "samples", M, (long long)lw->batch);
    int *dev = malloc(((size_t)nd + 1) * sizeof *dev);   /* [P] stage s's device */
    int *stage = malloc(((size_t)nd + 1) * sizeof *stage); /* [ndev] */
    int *seq = malloc(((size_t)nd * 2 * (size_t)M + 1) * sizeof *seq); /* [P][2M] */
    unsigned char *dep = calloc((size_t)2 * (size_t)nd * (size_t)nd + 1, 1); /* [2][nd][nd] */
    int64_t *start = malloc(((size_t)nd * 2 * (size_t)M + 1) * sizeof *start); /* [steps] */
    HG_CHECK(dev && stage && seq && dep && start);
    int P = stages(lw, dev, stage), rc = deps(lw, stage, dep, err, errlen);
    if (rc == 0) {
        schedule(st->sched, P, M, dev, seq);
        rc = play(lw, st, P, dev, stage, seq, dep, start, err, errlen);
    }
    if (rc == 0) {
        lw->nmicro = M;
        lw->nstages = P;
        lw->sched = st->sched;
        lw->mb = malloc(((size_t)M + 1) * sizeof *lw->mb);
        lw->mkey = malloc((size_t)N * (size_t)M * sizeof *lw->mkey);
        lw->stage = stage;
        stage = NULL;
        HG_CHECK(lw->mb && lw->mkey);
        for (int m = 0; m <= M; m++)
            lw->mb[m] = m == M ? lw->batch : (int64_t)m * lw->batch / M;
        /* the micro-batches' bounds cut every op's rows */
        for (int m = 1; m < M; m++)
            lw->cutn[lw->mb[m]]++;
        for (int v = 0; v < N; v++) {
            const struct hg_pop *o = &lw->pg->ops[v];
            int d = lw->ops[v].place[0].dev, b = o->phase != HG_PH_FORWARD;
            for (int m = 0; m < M; m++)
                lw->mkey[(size_t)v * (size_t)M + (size_t)m] =
                    o->phase == HG_PH_UPDATE
                        ? INT64_MAX / 2
                        : start[step_id(M, d, m, b)] * ((int64_t)N + 1) + lw->pos[v];
        }
    }
    free(dev);
    free(stage);
    free(seq);
    free(dep);
    free(start);
    return rc;
}

/* ------------------------------------------------------------ pricing */

int hg__pipe_inflight(const struct hg_lowered *lw, int d)
{
    int s = d >= 0 && d < lw->ndev ? lw->stage[d] : -1;
    if (lw->nmicro <= 0 || s < 0 || lw->sched == HG_SCHED_GPIPE)
        return lw->nmicro;
    return lw->nstages - s < lw->nmicro ? lw->nstages - s : lw->nmicro;
}

/* Op v's time on device d for rows [a, b): the simulator's prices (a
 * profiled op at those rows, else the roofline's launch + share); an op
 * without a batch axis once, in micro-batch 0. */
static double op_time(const struct hg_lowered *lw, const struct hg_pprice *pr, int v, int d,
                      int64_t a, int64_t b)
{
    size_t i = hg_pprice_at(pr, v, d);
    if (!lw->pg->ops[v].batch)
        return a == 0 ? pr->a[i] : 0;
    if (pr->pe[i])
        return hg_prof_time(pr->pe[i], (double)(b - a)) / hg_cost_prof_share(lw->pg->c, d);
    return pr->a[i] + pr->b[i] * (double)(b - a) / (double)lw->batch;
}

/* One transfer of a micro-step's output: from micro-step src (step id)
 * into micro-step dst, this many bytes over this path. */
struct pxfer {
    int src, dst;
    double bytes;
    struct hg_path path;
};

/* Each micro-step's compute time into dur[steps], the update ops' per
 * device into upd[ndev]; the transfers into *xf (count returned). */
static int pipe_costs(const struct hg_lowered *lw, const struct hg_pprice *pr, double *dur,
                      double *upd, struct pxfer **xf)
{
    const struct hg_pgraph *pg = lw->pg;
    int M = lw->nmicro, n = 0, cap = 0;
    *xf = NULL;
    for (int v = 0; v < lw->nops; v++) {
        const struct hg_pop *o = &pg->ops[v];
        int d = lw->ops[v].place[0].dev, b = o->phase != HG_PH_FORWARD;
        if (o->phase == HG_PH_UPDATE) {
            upd[d] += pr->a[hg_pprice_at(pr, v, d)];
            continue;
        }
        for (int m = 0; m < M; m++)
            dur[step_id(M, d, m, b)] += op_time(lw, pr, v, d, lw->mb[m], lw->mb[m + 1]);
        /* its transfers: to the micro-step of the first reader there */
        for (int k = 0; k < lw->ops[v].nxfer; k++) {
            const struct hg_lxfer *x = &lw->ops[v].xfer[k];
            int rb = 1;
            for (int c = 0; c < o->ncons; c++) {
                int w = o->cons[c];
                if (lw->ops[w].place[0].dev == x->dst && pg->ops[w].phase == HG_PH_FORWARD)
                    rb = 0;
            }
            for (int m = 0; m < M; m++) {
                int64_t a = x->begin > lw->mb[m] ? x->begin : lw->mb[m];
                int64_t e = x->end < lw->mb[m + 1] ? x->end : lw->mb[m + 1];
                int whole = !o->out_batch; /* a partial sum or a tensor without rows */
                if ((!whole && e <= a) || (!o->batch && m > 0)) /* made once */
                    continue;
                if (n == cap) {
                    cap = cap ? 2 * cap : 64;
                    *xf = realloc(*xf, (size_t)cap * sizeof **xf);
                    HG_CHECK(*xf != NULL);
                }
                struct pxfer *p = &(*xf)[n++];
                p->src = step_id(M, x->src, m, b);
                p->dst = step_id(M, x->dst, m, rb);
                p->bytes = (double)o->out_bytes *
                           (whole ? 1.0 : (double)(e - a) / (double)lw->batch);
                hg_cluster_path(pg->c, x->src, x->dst, &p->path);
            }
        }
    }
    return n;
}

double hg__pipe_time(const struct hg_lowered *lw, const struct hg_pprice *pr)
{
    int M = lw->nmicro, nd = lw->ndev, P = lw->nstages;
    size_t ns = (size_t)nd * 2 * (size_t)M;
    double *dur = calloc(ns + 1, sizeof *dur);      /* [steps] compute */
    double *ready = calloc(ns + 1, sizeof *ready);  /* [steps] inputs arrived */
    double *end = malloc((ns + 1) * sizeof *end);   /* [steps] -1: not run */
    int *left = calloc(ns + 1, sizeof *left);       /* [steps] transfers still to come */
    double *upd = calloc((size_t)nd + 1, sizeof *upd);
    double *chan = calloc((size_t)nd * (size_t)nd + 1, sizeof *chan); /* [nd][nd] free */
    double *free_at = calloc((size_t)P + 1, sizeof *free_at);
    int *dev = malloc(((size_t)P + 1) * sizeof *dev), *at = calloc((size_t)P + 1, sizeof *at);
    int *seq = malloc((ns + 1) * sizeof *seq);
    HG_CHECK(dur && ready && end && left && upd && chan && free_at && dev && at && seq);
    struct pxfer *xf;
    int nx = pipe_costs(lw, pr, dur, upd, &xf);
    for (int d = 0; d < nd; d++)
        if (lw->stage[d] >= 0)
            dev[lw->stage[d]] = d;
    schedule(lw->sched, P, M, dev, seq);
    for (size_t i = 0; i < ns; i++)
        end[i] = -1;
    for (int k = 0; k < nx; k++)
        left[xf[k].dst]++;
    /* each stage's next micro-step runs once its transfers arrived (sends
     * leave as the producer ends, one at a time per device pair) */
    for (int moved = 1; moved;) {
        moved = 0;
        for (int s = 0; s < P; s++) {
            if (at[s] == 2 * M)
                continue;
            int x = seq[(size_t)s * 2 * (size_t)M + (size_t)at[s]];
            if (left[x] > 0)
                continue;
            double t = free_at[s] > ready[x] ? free_at[s] : ready[x];
            end[x] = free_at[s] = t + dur[x];
            at[s]++;
            moved = 1;
            for (int k = 0; k < nx; k++) {
                if (xf[k].src != x)
                    continue;
                int a = (x >> 1) / M, b = (xf[k].dst >> 1) / M;
                double *c = &chan[(size_t)a * (size_t)nd + (size_t)b];
                double t0 = *c > end[x] ? *c : end[x];
                *c = t0 + hg_cost_transfer(&xf[k].path, xf[k].bytes);
                if (*c > ready[xf[k].dst])
                    ready[xf[k].dst] = *c;
                left[xf[k].dst]--;
            }
        }
    }
    double T = 0;
    for (int s = 0; s < P; s++) {
        HG_CHECK(at[s] == 2 * M); /* the lowering played the same schedule */
        double t = free_at[s] + upd[dev[s]];
        T = t > T ? t : T;
    }
    free(dur);
    free(ready);
    free(end);
    free(left);
    free(upd);
    free(chan);
    free(free_at);
    free(dev);
    free(at);
    free(seq);
    free(xf);
    return T;
}
