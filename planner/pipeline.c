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

/* Each stage device's micro-steps in the schedule's order into
 * seq[ndev][2M] (step ids; stage[d] -1: none). */
static void schedule(enum hg_psched sc, int P, int M, int nd, const int *stage, int *seq)
{
    for (int d = 0; d < nd; d++) {
        if (stage[d] < 0)
            continue;
        int *q = &seq[(size_t)d * 2 * (size_t)M], n = 0, f = 0, b = 0, s = stage[d];
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

/* Does any reader of op v's output on device d run in the forward? */
static int read_forward(const struct hg_lowered *lw, int v, int d)
{
    const struct hg_pop *o = &lw->pg->ops[v];
    for (int c = 0; c < o->ncons; c++) {
        const struct hg_lop *w = &lw->ops[o->cons[c]];
        for (int k = 0; k < w->nplace; k++)
            if (w->place[k].dev == d && lw->pg->ops[o->cons[c]].phase == HG_PH_FORWARD)
                return 1;
    }
    return 0;
}

/* dep[(b * ndev + d) * ndev + e]: the kind of micro-step on device e
 * (+1; 0: none) that d's forward (b 0) or backward (b 1) of a micro-batch
 * waits for: the lowering's transfers (e sends d rows of an output its
 * readers there need).  -1 with err for a forward waiting on a backward,
 * or a device with backward ops and no forward one. */
static int deps(const struct hg_lowered *lw, unsigned char *dep, char *err, size_t errlen)
{
    const struct hg_pgraph *pg = lw->pg;
    int nd = lw->ndev;
    unsigned char *fwd = calloc((size_t)nd + 1, 1); /* [nd] holds a forward op */
    HG_CHECK(fwd != NULL);
    for (int v = 0; v < lw->nops; v++)
        for (int k = 0; k < lw->ops[v].nplace && pg->ops[v].phase == HG_PH_FORWARD; k++)
            fwd[lw->ops[v].place[k].dev] = 1;
    int rc = 0;
    for (int v = 0; v < lw->nops && rc == 0; v++) {
        const struct hg_pop *o = &pg->ops[v];
        const struct hg_lop *lo = &lw->ops[v];
        if (o->phase == HG_PH_UPDATE)
            continue;
        for (int k = 0; k < lo->nplace && rc == 0; k++)
            if (!fwd[lo->place[k].dev])
                rc = hg_kerr(err, errlen, "pipeline: op %d (backward) is on %s, which holds "
                             "no forward op: every device of a pipeline is a stage with both",
                             v, pg->c->devices[lo->place[k].dev].name);
        int bu = o->phase != HG_PH_FORWARD;
        for (int k = 0; k < lo->nxfer && rc == 0; k++) {
            const struct hg_lxfer *x = &lo->xfer[k];
            int bv = !read_forward(lw, v, x->dst);
            if (bu && !bv)
                rc = hg_kerr(err, errlen, "pipeline: a forward op on %s reads backward op %d "
                             "on %s", pg->c->devices[x->dst].name, v,
                             pg->c->devices[x->src].name);
            unsigned char *y = &dep[(size_t)(bv * nd + x->dst) * (size_t)nd + (size_t)x->src];
            *y = (unsigned char)(*y > bu + 1 ? *y : bu + 1);
        }
    }
    free(fwd);
    return rc;
}

/* Each device's stage into stage[nd] (-1: no forward op there): the
 * longest chain of forward waits before it (dep's forward part), so a
 * data-parallel stage's devices share theirs; returns the stages P, or
 * -1 with err naming a device the forward comes back to. */
static int stages(const struct hg_lowered *lw, const unsigned char *dep, int *stage, char *err,
                  size_t errlen)
{
    const struct hg_pgraph *pg = lw->pg;
    int nd = lw->ndev, P = 0;
    for (int d = 0; d < nd; d++)
        stage[d] = -1;
    for (int v = 0; v < lw->nops; v++)
        for (int k = 0; k < lw->ops[v].nplace && pg->ops[v].phase == HG_PH_FORWARD; k++)
            stage[lw->ops[v].place[k].dev] = 0;
    /* relax nd times: a longer chain means a cycle */
    for (int it = 0, moved = 1; moved; it++) {
        moved = 0;
        for (int d = 0; d < nd; d++)
            for (int e = 0; e < nd && stage[d] >= 0; e++)
                if (dep[(size_t)d * (size_t)nd + (size_t)e] == 1 && stage[e] >= 0 &&
                    stage[d] < stage[e] + 1) {
                    if (it >= nd)
                        return hg_kerr(err, errlen, "pipeline: the forward goes from %s to "
                                       "%s and back: a stage must hold consecutive ops, the "
                                       "forward going from stage to stage and never back",
                                       pg->c->devices[e].name, pg->c->devices[d].name);
                    stage[d] = stage[e] + 1;
                    moved = 1;
                }
    }
    for (int d = 0; d < nd; d++)
        P = stage[d] + 1 > P ? stage[d] + 1 : P;
    return P;
}

/* Plays the stage devices' sequences seq[nd][2M] with unit times against
 * the dependencies; start[step] gets each micro-step's start.  -1 with
 * err naming a device that would wait forever. */
static int play(const struct hg_lowered *lw, int M, const int *stage, const int *seq,
                const unsigned char *dep, int64_t *start, char *err, size_t errlen)
{
    int nd = lw->ndev;
    int *at = calloc((size_t)nd + 1, sizeof *at);              /* [nd] next of each */
    int64_t *free_at = calloc((size_t)nd + 1, sizeof *free_at); /* [nd] */
    int64_t *end = malloc(((size_t)nd * 2 * (size_t)M + 1) * sizeof *end); /* [steps] */
    int rc = 0;
    HG_CHECK(at && free_at && end);
    for (size_t i = 0; i < (size_t)nd * 2 * (size_t)M; i++)
        end[i] = -1;
    for (int moved = 1; moved;) {
        moved = 0;
        for (int d = 0; d < nd; d++) {
            if (stage[d] < 0 || at[d] == 2 * M)
                continue;
            int x = seq[(size_t)d * 2 * (size_t)M + (size_t)at[d]];
            int b = x & 1, m = (x >> 1) % M;
            int64_t t = free_at[d];
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
            end[x] = free_at[d] = t + 1 + b;
            at[d]++;
            moved = 1;
        }
    }
    for (int d = 0; d < nd && rc == 0; d++)
        if (stage[d] >= 0 && at[d] < 2 * M) {
            int x = seq[(size_t)d * 2 * (size_t)M + (size_t)at[d]];
            int b = x & 1, m = (x >> 1) % M, e = 0, k = 0;
            for (; e < nd; e++)
                if ((k = dep[(size_t)(b * nd + d) * (size_t)nd + (size_t)e]) != 0 &&
                    end[step_id(M, e, m, k - 1)] < 0)
                    break;
            rc = hg_kerr(err, errlen, "pipeline: stage %d (%s) would wait forever: its %s of "
                         "micro-batch %d waits for the %s of micro-batch %d on %s (stage %d), "
                         "which waits in turn; the schedule cannot run this placement",
                         stage[d], lw->pg->c->devices[d].name, b ? "backward" : "forward", m,
                         k == 2 ? "backward" : "forward", m,
                         e < nd ? lw->pg->c->devices[e].name : "?", e < nd ? stage[e] : -1);
        }
    free(at);
    free(free_at);
    free(end);
    return rc;
}

void hg__pipe_free(struct hg_lowered *lw)
{
    free(lw->seg);
    free(lw->mstart);
    free(lw->stage);
    lw->seg = NULL;
    lw->mstart = NULL;
    lw->stage = NULL;
    lw->nmicro = lw->nstages = lw->nseg = 0;
}

/* Micro-batch m's rows of segment i: [lo, hi). */
static void chunk(const struct hg_lowered *lw, int i, int m, int64_t *lo, int64_t *hi)
{
    int64_t x = lw->seg[i], L = lw->seg[i + 1] - x, M = lw->nmicro;
    *lo = x + m * L / M;
    *hi = m + 1 == M ? x + L : x + (m + 1) * L / M;
}

int hg_pipe_micro(const struct hg_lowered *lw, int64_t row)
{
    int lo = 0, hi = lw->nseg - 1; /* the segment holding row */
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (lw->seg[mid] <= row)
            lo = mid;
        else
            hi = mid - 1;
    }
    int64_t a, b;
    for (int m = 0; m < lw->nmicro; m++) {
        chunk(lw, lo, m, &a, &b);
        if (a <= row && row < b)
            return m;
    }
    return lw->nmicro - 1;
}

int64_t hg_pipe_rows(const struct hg_lowered *lw, int m, int64_t a, int64_t b)
{
    int64_t n = 0, lo, hi;
    for (int i = 0; i < lw->nseg; i++) {
        if (lw->seg[i + 1] <= a || lw->seg[i] >= b)
            continue;
        chunk(lw, i, m, &lo, &hi);
        lo = lo > a ? lo : a;
        hi = hi < b ? hi : b;
        n += hi > lo ? hi - lo : 0;
    }
    return n;
}

int64_t hg_pipe_key(const struct hg_lowered *lw, int v, int d, int m)
{
    const struct hg_pop *o = &lw->pg->ops[v];
    if (o->phase == HG_PH_UPDATE || d < 0 || d >= lw->ndev || lw->stage[d] < 0)
        return INT64_MAX / 2;
    int b = o->phase != HG_PH_FORWARD;
    return lw->mstart[step_id(lw->nmicro, d, m, b)] * ((int64_t)lw->nops + 1) + lw->pos[v];
}

/* The segments (the rows between the places' bounds: lw->cutn before the
 * micro-batches') and the micro-batches' bounds in each, as cuts. */
static void micro_cuts(struct hg_lowered *lw)
{
    int64_t B = lw->batch;
    lw->seg = malloc(((size_t)B + 2) * sizeof *lw->seg);
    HG_CHECK(lw->seg != NULL);
    lw->nseg = 0;
    lw->seg[0] = 0;
    for (int64_t x = 1; x <= B; x++)
        if (x == B || lw->cutn[x] > 0)
            lw->seg[++lw->nseg] = x;
    for (int i = 0; i < lw->nseg; i++)
        for (int m = 1; m < lw->nmicro; m++) {
            int64_t lo, hi;
            chunk(lw, i, m, &lo, &hi);
            if (lo > lw->seg[i] && lo < lw->seg[i + 1])
                lw->cutn[lo]++;
        }
}

int hg__pipe_lower(struct hg_lowered *lw, const struct hg_strategy *st, char *err,
                   size_t errlen)
{
    hg__pipe_free(lw);
    if (st->nmicro <= 0)
        return 0;
    int M = st->nmicro, nd = lw->ndev;
    if (M > lw->batch)
        return hg_kerr(err, errlen, "pipeline: %d micro-batches, but the batch has %lld "
                       "samples", M, (long long)lw->batch);
    int *stage = malloc(((size_t)nd + 1) * sizeof *stage); /* [ndev] */
    int *seq = malloc(((size_t)nd * 2 * (size_t)M + 1) * sizeof *seq); /* [nd][2M] */
    unsigned char *dep = calloc((size_t)2 * (size_t)nd * (size_t)nd + 1, 1); /* [2][nd][nd] */
    int64_t *start = malloc(((size_t)nd * 2 * (size_t)M + 1) * sizeof *start); /* [steps] */
    HG_CHECK(stage && seq && dep && start);
    int rc = deps(lw, dep, err, errlen), P = rc == 0 ? stages(lw, dep, stage, err, errlen) : -1;
    if (P < 0)
        rc = -1;
    if (rc == 0) {
        schedule(st->sched, P, M, nd, stage, seq);
        rc = play(lw, M, stage, seq, dep, start, err, errlen);
    }
    if (rc == 0) {
        lw->nmicro = M;
        lw->nstages = P;
        lw->sched = st->sched;
        lw->stage = stage;
        lw->mstart = start;
        stage = NULL;
        start = NULL;
        micro_cuts(lw);
    }
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

/* Op v's time on device d for its rows of micro-batch m (n of them): the
 * simulator's prices (a profiled op at those rows, else the roofline's
 * launch + share); an op without a batch axis once, in micro-batch 0. */
static double op_time(const struct hg_lowered *lw, const struct hg_pprice *pr, int v, int d,
                      int m, int64_t n)
{
    size_t i = hg_pprice_at(pr, v, d);
    if (!lw->pg->ops[v].batch)
        return m == 0 ? pr->a[i] : 0;
    if (n <= 0)
        return 0;
    if (pr->pe[i])
        return hg_prof_time(pr->pe[i], (double)n) / hg_cost_prof_share(lw->pg->c, d);
    return pr->a[i] + pr->b[i] * (double)n / (double)lw->batch;
}

/* One transfer of a micro-step's output: from micro-step src (step id)
 * into micro-step dst, this many bytes over this path. */
struct pxfer {
    int src, dst;
    double bytes;
    struct hg_path path;
};

static struct pxfer *add_xfer(struct pxfer **xf, int *n, int *cap)
{
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        *xf = realloc(*xf, (size_t)*cap * sizeof **xf);
        HG_CHECK(*xf != NULL);
    }
    return &(*xf)[(*n)++];
}

/* Each micro-step's compute time into dur[steps]; the update ops' and
 * the gradient AllReduces' per device into upd[ndev] (after its last
 * micro-step); the transfers into *xf (count returned). */
static int pipe_costs(const struct hg_lowered *lw, const struct hg_pprice *pr, double *dur,
                      double *upd, struct pxfer **xf)
{
    const struct hg_pgraph *pg = lw->pg;
    int M = lw->nmicro, n = 0, cap = 0;
    *xf = NULL;
    for (int v = 0; v < lw->nops; v++) {
        const struct hg_pop *o = &pg->ops[v];
        const struct hg_lop *lo = &lw->ops[v];
        int b = o->phase != HG_PH_FORWARD;
        for (int k = 0; k < lo->nplace; k++) {
            const struct hg_lplace *q = &lo->place[k];
            if (o->phase == HG_PH_UPDATE) {
                upd[q->dev] += pr->a[hg_pprice_at(pr, v, q->dev)];
                continue;
            }
            for (int m = 0; m < M; m++)
                dur[step_id(M, q->dev, m, b)] +=
                    op_time(lw, pr, v, q->dev, m, hg_pipe_rows(lw, m, q->begin, q->end));
        }
        if (o->phase == HG_PH_UPDATE)
            continue;
        /* a data-parallel stage's gradient: all-reduced after the last
         * micro-batch, on each member */
        if (lo->agg >= 0 && (lw->agg[lo->agg].kind == HG_LAGG_RING ||
                             lw->agg[lo->agg].kind == HG_LAGG_HIER)) {
            int devs[HG_PLAN_MAXDEV];
            for (int k = 0; k < lo->nplace; k++)
                devs[k] = lo->place[k].dev;
            double t = hg_cost_allreduce_ring(pg->c, devs, lo->nplace, (double)o->out_bytes);
            for (int k = 0; k < lo->nplace; k++)
                upd[devs[k]] += t;
        }
        /* its transfers: to the micro-step of the first reader there */
        for (int k = 0; k < lo->nxfer; k++) {
            const struct hg_lxfer *x = &lo->xfer[k];
            int rb = !read_forward(lw, v, x->dst);
            for (int m = 0; m < M; m++) {
                int whole = !o->out_batch; /* a partial sum or a tensor without rows */
                int64_t r = whole ? 0 : hg_pipe_rows(lw, m, x->begin, x->end);
                if ((!whole && r <= 0) || (!o->batch && m > 0)) /* made once */
                    continue;
                struct pxfer *p = add_xfer(xf, &n, &cap);
                p->src = step_id(M, x->src, m, b);
                p->dst = step_id(M, x->dst, m, rb);
                p->bytes = (double)o->out_bytes * (whole ? 1.0 : (double)r / (double)lw->batch);
                hg_cluster_path(pg->c, x->src, x->dst, &p->path);
            }
        }
    }
    return n;
}

double hg__pipe_time(const struct hg_lowered *lw, const struct hg_pprice *pr)
{
    int M = lw->nmicro, nd = lw->ndev;
    size_t ns = (size_t)nd * 2 * (size_t)M;
    double *dur = calloc(ns + 1, sizeof *dur);      /* [steps] compute */
    double *ready = calloc(ns + 1, sizeof *ready);  /* [steps] inputs arrived */
    double *end = malloc((ns + 1) * sizeof *end);   /* [steps] -1: not run */
    int *left = calloc(ns + 1, sizeof *left);       /* [steps] transfers still to come */
    double *upd = calloc((size_t)nd + 1, sizeof *upd);
    double *chan = calloc((size_t)nd * (size_t)nd + 1, sizeof *chan); /* [nd][nd] free */
    double *free_at = calloc((size_t)nd + 1, sizeof *free_at);       /* [nd] */
    int *at = calloc((size_t)nd + 1, sizeof *at);                    /* [nd] */
    int *seq = malloc((ns + 1) * sizeof *seq);                       /* [nd][2M] */
    HG_CHECK(dur && ready && end && left && upd && chan && free_at && at && seq);
    struct pxfer *xf;
    int nx = pipe_costs(lw, pr, dur, upd, &xf);
    schedule(lw->sched, lw->nstages, M, nd, lw->stage, seq);
    for (size_t i = 0; i < ns; i++)
        end[i] = -1;
    /* the transfers by source micro-step, in their order (a stable
     * counting sort): by[from[x] .. from[x + 1]) */
    int *from = calloc(ns + 2, sizeof *from);        /* [steps + 1] */
    int *fill = calloc(ns + 1, sizeof *fill);        /* [steps] */
    int *by = malloc(((size_t)nx + 1) * sizeof *by); /* [nx] */
    HG_CHECK(from && fill && by);
    for (int k = 0; k < nx; k++) {
        left[xf[k].dst]++;
        from[xf[k].src + 1]++;
    }
    for (size_t i = 0; i < ns; i++)
        from[i + 1] += from[i];
    for (int k = 0; k < nx; k++)
        by[from[xf[k].src] + fill[xf[k].src]++] = k;
    /* each device's next micro-step runs once its transfers arrived (sends
     * leave as the producer ends, one at a time per device pair) */
    for (int moved = 1; moved;) {
        moved = 0;
        for (int d = 0; d < nd; d++) {
            if (lw->stage[d] < 0 || at[d] == 2 * M)
                continue;
            int x = seq[(size_t)d * 2 * (size_t)M + (size_t)at[d]];
            if (left[x] > 0)
                continue;
            double t = free_at[d] > ready[x] ? free_at[d] : ready[x];
            end[x] = free_at[d] = t + dur[x];
            at[d]++;
            moved = 1;
            for (int j = from[x]; j < from[x + 1]; j++) {
                int k = by[j], b = (xf[k].dst >> 1) / M;
                double *c = &chan[(size_t)d * (size_t)nd + (size_t)b];
                double t0 = *c > end[x] ? *c : end[x];
                *c = t0 + hg_cost_transfer(&xf[k].path, xf[k].bytes);
                if (*c > ready[xf[k].dst])
                    ready[xf[k].dst] = *c;
                left[xf[k].dst]--;
            }
        }
    }
    double T = 0;
    for (int d = 0; d < nd; d++) {
        if (lw->stage[d] < 0)
            continue;
        HG_CHECK(at[d] == 2 * M); /* the lowering played the same schedule */
        double t = free_at[d] + upd[d];
        T = t > T ? t : T;
    }
    free(dur);
    free(ready);
    free(end);
    free(left);
    free(upd);
    free(chan);
    free(free_at);
    free(at);
    free(seq);
    free(xf);
    free(from);
    free(fill);
    free(by);
    return T;
}
