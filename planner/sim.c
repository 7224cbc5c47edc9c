/* sim.c - FlexFlow's task graph and its simulation (docs/planner.md,
 * "Simulator"), of a strategy's lowered form (lower.c: which device runs
 * which rows of each op, the transfers, the aggregations, the order, what
 * is recomputed where) priced by the planner graph's prices (price.c).
 *
 * Tasks.  For op v at position p of the order, its *segment*:
 *  - a compute task on every device holding v: hgtrain runs rows [b, e)
 *    of B as one call per piece of them (the lowering's cuts: one for a
 *    data-parallel or model-parallel strategy, whatever the replica
 *    count), so k pieces cost k*a + b_op*(e - b)/B with the roofline's
 *    a + b_op*share, or the sum of the profile's times at each piece's
 *    rows; a once for an op without a batch axis;
 *  - a gradient aggregation task when v writes a parameter's gradient that
 *    the lowering aggregates: AllReduce (the lowering's ring or
 *    hierarchical, hg_cost_allreduce_*, with the latency shared as
 *    hgtrain's 25 MiB buckets share it: a gradient of s bytes pays
 *    min(1, s / 25 MiB) of it) or PS (hg_cost_ps), occupying every
 *    channel its traffic crosses;
 *  - the lowering's transfers of v's output, one task each (an update op:
 *    of its parameter, to the devices that read it and hold no updated
 *    copy: they end the iteration, as the next one's readers wait).
 * Transfer bytes are out_bytes, memory bytes out_mem (the memory graph's:
 * hg_pgraph_memory_from), times a difference of two batch fractions
 * row / B, as doubles: the arithmetic of the replica-share intervals this
 * replaced, so that batches the replicas divide price bitwise as before.
 * Resources are the devices, the channels of hg_cluster_path (links are
 * devices) and each device's transfer engine (a transfer occupies both
 * ends': hgtrain's ranks send and receive one transfer at a time).  Every resource runs its tasks in the order of their segments
 * (the strategy's execution order), one at a time: transfers that share a
 * channel are serialized FIFO, each at the full bandwidth of its path, which
 * gives the same total time as equal sharing.
 *
 * Simulation: one pass over the segments in order; a task starts at
 * max(its inputs' arrival, every resource it uses free).  Since every task
 * depends only on tasks of earlier (or its own) segments, the state before
 * segment p is just the resources' free times, snapshot per segment.
 * Delta simulation: a change to group g lowers again what g touches
 * (hg_lower_group: g's ops and their producers, whose transfers and memory
 * depend on where g runs, and the ops whose pieces a cut that came or went
 * divides), rebuilds those segments, restores the snapshot
 * before the earliest of them and re-runs the pass from there: the same
 * code on the same inputs, so bitwise the same result as a full simulation.
 *
 * Memory (bytes, per device, at the memory graph's shapes: the longest
 * sample's where the caller gave one): params + gradients + optimizer state of
 * every param an op on the device reads or updates, the device's rows of
 * the inputs, and activations by reference count in execution order: an
 * output shard (the larger of the rows made there and the rows needed
 * there) is allocated at its producer's segment and freed after the last
 * consumer on that device.  Peak over the order; OOM above `memory`.
 *
 * Recomputation (gradient checkpointing; a group's `recompute`; which ops
 * and where: lower.c).  A dropped output is freed after its last forward
 * reader; at its host, before the host's own tasks, the group's droppable
 * ops run again in order (same compute tasks, same transfers to devices
 * with backward readers) and their outputs live from the host to the last
 * backward reader.  Backward ops read the recomputed arrival.  A changed
 * group rebuilds the recompute segments of the hosts of every rebuilt op,
 * so delta simulation stays identical to full.
 * Simplification: the forward still sends a dropped output to a device whose
 * only readers are backward ops (and frees it at once); a runtime would wait
 * for the recomputation.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "planner/hg_planner.h"
#include "planner/planner-impl.h"

enum { T_COMP, T_AGG, T_XFER, T_RCOMP, T_RXFER, T_XCPU };

/* hgtrain's default --bucket-cap-mb (controller/dp.c) */
#define SIM_BUCKET_BYTES (25.0 * 1024 * 1024)

struct task {
    int kind, dev, src, dst, nres, res0; /* res: s->res pool of the segment */
    int op;                              /* T_RCOMP, T_RXFER: the recomputed op */
    double dur, start, finish;
    double bytes;
};

struct memc {
    int dev, allocpos, lastpos;
    int64_t bytes;
};

struct seg {
    struct task *t;
    int nt, ct;
    int *res;
    int nr, cr;
    struct memc *mem;
    int nm, cm;
    /* devices with a backward reader of the output: a bit per device */
    uint64_t bneed[(HG_PLAN_MAXDEV + 63) / 64];
};

static void bneed_set(struct seg *sg, int d) { sg->bneed[d >> 6] |= (uint64_t)1 << (d & 63); }
static int bneed_has(const struct seg *sg, int d) { return (int)(sg->bneed[d >> 6] >> (d & 63) & 1); }

struct hg_sim {
    const struct hg_pgraph *pg;
    const struct hg_pprice *pr;
    const struct hg_cluster *c;
    struct hg_lowered *lw;  /* the simulated strategy, lowered */
    int nops, ndev, nres, nchan;
    struct seg *seg;        /* by op id */
    double *arr;            /* [nops*ndev] arrival of an op's output on a device */
    double *snap;           /* [(nops+1)*nres] resource free times before segment p */
    double *avail;          /* [nres] */
    int64_t *alloc_at, *free_after; /* [nops*ndev] bytes by (position, device) */
    int *stamp;             /* [ntensors*ndev] memory: counted when == stampv */
    int stampv;
    int *mark;              /* [nops] delta: rebuilt when == markv */
    int markv;
    int *changed;           /* [nops] delta: the ops hg_lower_group lowered again */
    /* recomputation: by (host) op */
    struct seg *rseg;       /* [nops] recompute tasks run at this (host) op */
    double *rarr;           /* [nops*ndev] arrival of a recomputed output */
};

static void *grow(void *v, int n, int *cap, size_t elt)
{
    if (n < *cap)
        return v;
    *cap = *cap ? 2 * *cap : 8;
    while (*cap <= n)
        *cap *= 2;
    v = realloc(v, (size_t)*cap * elt);
    HG_CHECK(v != NULL);
    return v;
}

struct hg_sim *hg_sim_new(const struct hg_pgraph *pg, const struct hg_pprice *pr)
{
    HG_CHECK(pr->nops == pg->nops && pr->ndev == pg->ndev);
    struct hg_sim *s = calloc(1, sizeof(*s));
    HG_CHECK(s != NULL);
    s->pg = pg;
    s->pr = pr;
    s->c = pg->c;
    s->lw = hg_lower_new(pg);
    s->nops = pg->nops;
    s->ndev = pg->ndev;
    s->nchan = hg_cluster_n_channels(pg->c);
    s->nres = s->ndev + s->nchan + s->ndev; /* devices, channels, engines */
    size_t N = (size_t)s->nops;
    s->seg = calloc(N + 1, sizeof(struct seg));
    s->arr = malloc((N * (size_t)s->ndev + 1) * sizeof(double));
    s->snap = malloc((N + 1) * (size_t)s->nres * sizeof(double));
    s->avail = malloc((size_t)s->nres * sizeof(double));
    s->alloc_at = malloc((N * (size_t)s->ndev + 1) * sizeof(int64_t));
    s->free_after = malloc((N * (size_t)s->ndev + 1) * sizeof(int64_t));
    s->stamp = calloc((size_t)pg->ntensors * (size_t)s->ndev + 1, sizeof(int));
    s->mark = calloc(N + 1, sizeof(int));
    s->changed = malloc((N + 1) * sizeof(int));
    s->rseg = calloc(N + 1, sizeof(struct seg));
    s->rarr = calloc(N * (size_t)s->ndev + 1, sizeof(double));
    HG_CHECK(s->seg && s->arr && s->snap && s->avail && s->alloc_at && s->free_after &&
             s->stamp && s->mark && s->changed && s->rseg && s->rarr);
    return s;
}

void hg_sim_free(struct hg_sim *s)
{
    if (!s)
        return;
    for (int v = 0; v < s->nops; v++) {
        free(s->seg[v].t);
        free(s->seg[v].res);
        free(s->seg[v].mem);
        free(s->rseg[v].t);
        free(s->rseg[v].res);
    }
    free(s->seg);
    free(s->rseg);
    free(s->rarr);
    free(s->arr);
    free(s->snap);
    free(s->avail);
    free(s->alloc_at);
    free(s->free_after);
    free(s->stamp);
    free(s->mark);
    free(s->changed);
    hg_lower_free(s->lw);
    free(s);
}

const struct hg_lowered *hg_sim_lowered(const struct hg_sim *s)
{
    return s->lw;
}

static struct task *add_task(struct seg *sg, int kind)
{
    sg->t = grow(sg->t, sg->nt, &sg->ct, sizeof(struct task));
    struct task *t = &sg->t[sg->nt++];
    memset(t, 0, sizeof(*t));
    t->kind = kind;
    t->res0 = sg->nr;
    return t;
}

static void add_res(struct seg *sg, struct task *t, int r)
{
    for (int i = 0; i < t->nres; i++)
        if (sg->res[t->res0 + i] == r)
            return;
    sg->res = grow(sg->res, sg->nr, &sg->cr, sizeof(int));
    sg->res[sg->nr++] = r;
    t->nres++;
}

static void add_mem(struct seg *sg, int dev, int64_t bytes, int allocpos, int lastpos)
{
    if (bytes <= 0)
        return;
    sg->mem = grow(sg->mem, sg->nm, &sg->cm, sizeof(struct memc));
    sg->mem[sg->nm++] = (struct memc){dev, allocpos, lastpos, bytes};
}

/* Is v's output recomputed under the simulated strategy? */
static int dropped(const struct hg_sim *s, int v)
{
    return s->lw->ops[v].rhost >= 0;
}

/* Row x's fraction of the batch (the head comment says why a double). */
static double frac(const struct hg_sim *s, int64_t x)
{
    return (double)x / (double)s->lw->batch;
}

/* Adds the channels of the path from a to b to t's resources. */
static void add_path(struct hg_sim *s, struct seg *sg, struct task *t, int a, int b,
                     struct hg_path *p)
{
    hg_cluster_path(s->c, a, b, p);
    for (int k = 0; k < p->nchan; k++)
        add_res(sg, t, s->ndev + p->chan[k]);
}

/* A transfer between nodes costs a CPU device compute time while it runs
 * (the bound profile's tcp cpu per byte: on a machine whose cores the
 * ranks keep busy, the kernel's network stack and the progress thread take
 * their share): a task on each such end, from the transfer's start, that
 * delays the device's later tasks (none when it waits anyway). */
static void add_net_cpu(struct hg_sim *s, struct seg *sg, const struct task *x)
{
    const struct hg_cluster *c = s->c;
    if (!(c->net_cpu > 0) || c->devices[x->src].node == c->devices[x->dst].node)
        return;
    struct task xc = *x; /* add_task may move sg->t */
    for (int e = 0; e < 2; e++) {
        int d = e ? xc.dst : xc.src;
        if (c->devices[d].kind != HG_DEV_CPU)
            continue;
        struct task *t = add_task(sg, T_XCPU);
        t->dev = d;
        t->src = xc.src;
        t->dst = xc.dst;
        t->bytes = xc.bytes;
        t->dur = c->net_cpu * xc.bytes;
        add_res(sg, t, d);
    }
}

/* A point-to-point transfer also occupies both ends' transfer engines:
 * hgtrain's ranks run their sends and receives one at a time, in one
 * order, on one progress thread each (docs/planner.md, "Simulator"). */
static void add_engines(struct hg_sim *s, struct seg *sg, struct task *t)
{
    add_res(sg, t, s->ndev + s->nchan + t->src);
    add_res(sg, t, s->ndev + s->nchan + t->dst);
}

/* The compute time of place p of op v as hgtrain runs it: one call per
 * piece of its rows (the lowering's cuts: a data-parallel or model-parallel
 * op's place is one piece, a split strategy's may be several), each priced
 * at its rows by the profile, or all together by the roofline (a launch
 * each, b for their share of the batch). */
static double comp_time(const struct hg_sim *s, int v, const struct hg_lplace *p)
{
    const struct hg_lowered *lw = s->lw;
    size_t i = hg_pprice_at(s->pr, v, p->dev);
    int64_t B = lw->batch, rows = p->end - p->begin;
    if (!s->pg->ops[v].batch)
        return s->pr->a[i];
    const struct hg_prof_op *pe = s->pr->pe[i];
    double t = 0;
    int pieces = 0;
    for (int64_t x = p->begin, y = x + 1; y <= p->end; y++)
        if (y == p->end || lw->cutn[y] > 0) {
            if (pe)
                t += hg_prof_time(pe, (double)(y - x));
            pieces++;
            x = y;
        }
    if (!pe)
        return pieces * s->pr->a[i] + s->pr->b[i] * ((double)rows / (double)B);
    return t / hg_cost_prof_share(s->c, p->dev);
}

/* A tensor-parallel op (tensor.c): a compute task per device of its set,
 * the launch plus its share of the rest of the op's time there, then the
 * collectives that run at it as aggregation tasks (each after every
 * compute task of the op: those run before a reader's compute are priced
 * after it, a simplification), ring-priced over the set's devices. */
static void build_tp(struct hg_sim *s, int v, struct seg *sg)
{
    const struct hg_tp *tp = s->lw->tp;
    const struct hg_tpop *o = &tp->op[v];
    const struct hg_tpset *set = &tp->set[o->set];
    for (int i = 0; i < o->nshard; i++) {
        int d = o->shard[i].dev;
        struct hg_lplace whole = {d, 0, 1, 0, s->lw->batch};
        double full = comp_time(s, v, &whole);
        double launch = s->c->devices[d].kind == HG_DEV_GPU ? HG_LAUNCH_OVERHEAD_GPU
                                                            : HG_LAUNCH_OVERHEAD_CPU;
        double share = hg_tp_share(tp, v, d);
        struct task *t = add_task(sg, T_COMP);
        t->dev = d;
        t->dur = full > launch ? launch + (full - launch) * share : full;
        add_res(sg, t, d);
    }
    for (int i = 0; i < tp->ncoll; i++) {
        const struct hg_tpcoll *k = &tp->coll[i];
        if (k->at != v || k->kind == HG_TPC_SLICE || set->n < 2)
            continue;
        double elt = (double)s->pg->ops[v].out_bytes, parts[HG_PLAN_MAXDEV];
        if (k->tensor != s->pg->ops[v].out || k->numel <= 0)
            elt = 4; /* an input's or a param's: f32 */
        else
            elt /= (double)k->numel;
        for (int j = 0; j < set->n; j++)
            parts[j] = (double)k->count[j] * elt;
        struct task *t = add_task(sg, T_AGG);
        struct hg_path p;
        t->dev = set->dev[0];
        t->bytes = (double)k->numel * elt;
        if (k->kind == HG_TPC_ALLREDUCE)
            t->dur = hg_cost_allreduce_ring(s->c, set->dev, set->n, t->bytes);
        else if (k->kind == HG_TPC_BCAST) { /* from the lead, one device at a time */
            hg_cluster_path(s->c, set->dev[0], set->dev[1], &p);
            t->dur = hg_cost_transfer(&p, t->bytes) * (set->n - 1);
        } else
            t->dur = hg_cost_allgatherv_ring(s->c, set->dev, set->n, parts);
        for (int j = 0; j < set->n; j++)
            add_path(s, sg, t, set->dev[j], set->dev[(j + 1) % set->n], &p);
    }
}

static void build_seg(struct hg_sim *s, int v)
{
    const struct hg_pop *o = &s->pg->ops[v];
    const struct hg_lop *lo = &s->lw->ops[v];
    const struct hg_cluster *c = s->c;
    const int *pos = s->lw->pos;
    struct seg *sg = &s->seg[v];
    int nd = s->ndev;
    sg->nt = sg->nr = sg->nm = 0;
    int devs[HG_PLAN_MAXDEV], n = lo->nplace; /* [n] the op's devices, in rank order */
    if (s->lw->tp && s->lw->tp->op[v].set >= 0) {
        build_tp(s, v, sg);
        n = 0; /* the rows layer's place is the lead's: priced by shards */
    }
    for (int k = 0; k < n; k++) {
        const struct hg_lplace *p = &lo->place[k];
        devs[k] = p->dev;
        struct task *t = add_task(sg, T_COMP);
        t->dev = p->dev;
        t->dur = comp_time(s, v, p);
        add_res(sg, t, p->dev);
    }
    const struct hg_lagg *ag = lo->agg >= 0 ? &s->lw->agg[lo->agg] : NULL;
    if (ag && ag->kind != HG_LAGG_NONE) {
        struct task *t = add_task(sg, T_AGG);
        struct hg_path p;
        t->bytes = (double)o->out_bytes;
        if (ag->kind != HG_LAGG_PS) {
            double (*ar)(const struct hg_cluster *, const int *, int, double) =
                ag->kind == HG_LAGG_HIER ? hg_cost_allreduce_hier : hg_cost_allreduce_ring;
            /* hgtrain all-reduces gradients in buckets of up to 25 MiB (its
             * --bucket-cap-mb): a bucket pays the latency once, so each
             * gradient pays its share of it (an 87-parameter model in one
             * bucket had paid 87 latencies: 36 ms of a 43 ms step) */
            double lat = ar(c, devs, n, 1), share = t->bytes / SIM_BUCKET_BYTES;
            t->dur = ar(c, devs, n, t->bytes) - (share < 1 ? (1 - share) * lat : 0);
            for (int i = 0; i < n; i++)
                add_path(s, sg, t, devs[i], devs[(i + 1) % n], &p);
        } else {
            t->dur = hg_cost_ps(c, devs, n, ag->ps, t->bytes);
            for (int i = 0; i < n; i++) {
                if (devs[i] == ag->ps)
                    continue;
                add_path(s, sg, t, devs[i], ag->ps, &p);
                add_path(s, sg, t, ag->ps, devs[i], &p);
            }
        }
        t->dev = devs[0];
        /* CPU workers compute a collective themselves (the shm backend
         * sums in the ranks): it occupies them as well as the channels */
        int cpus = 1;
        for (int i = 0; i < n; i++)
            cpus &= c->devices[devs[i]].kind == HG_DEV_CPU;
        for (int i = 0; cpus && i < n; i++)
            add_res(sg, t, devs[i]);
    }
    if (o->out < 0) {
        /* an update op: its parameter to the devices reading it that hold
         * no updated copy, after the update (the next step's ops wait) */
        for (int k = 0; k < lo->nxfer && o->nin > 0; k++) {
            const struct hg_lxfer *x = &lo->xfer[k];
            struct task *t = add_task(sg, T_XFER);
            struct hg_path p;
            t->src = x->src;
            t->dst = x->dst;
            t->bytes = (double)o->in[0].bytes;
            add_path(s, sg, t, x->src, x->dst, &p);
            add_engines(s, sg, t);
            t->dur = hg_cost_transfer(&p, t->bytes);
            add_net_cpu(s, sg, t);
        }
        return;
    }
    /* the consumers' last positions on each device, for the memory */
    int last[HG_PLAN_MAXDEV], lastf[HG_PLAN_MAXDEV]; /* [ndev] positions of the last
                                                      * reader, the last forward reader */
    int drop = dropped(s, v);
    memset(sg->bneed, 0, sizeof sg->bneed);
    for (int d = 0; d < nd; d++)
        last[d] = lastf[d] = pos[v];
    for (int k = 0; k < o->ncons; k++) {
        int w = o->cons[k];
        const struct hg_lop *lw = &s->lw->ops[w];
        for (int i = 0; i < lw->nplace; i++) {
            int e = lw->place[i].dev;
            if (pos[w] > last[e])
                last[e] = pos[w];
            if (s->pg->ops[w].phase == HG_PH_FORWARD) {
                if (pos[w] > lastf[e])
                    lastf[e] = pos[w];
            } else {
                bneed_set(sg, e);
            }
        }
    }
    double B = (double)o->out_bytes, Bm = (double)o->out_mem; /* transfers, memory */
    int pi = 0, ni = 0;
    for (int e = 0; e < nd; e++) {
        while (pi < lo->nplace && lo->place[pi].dev < e)
            pi++;
        while (ni < lo->nneed && lo->need[ni].dev < e)
            ni++;
        const struct hg_lplace *mine = pi < lo->nplace && lo->place[pi].dev == e
                                           ? &lo->place[pi] : NULL;
        const struct hg_lneed *nn = ni < lo->nneed && lo->need[ni].dev == e ? &lo->need[ni]
                                                                            : NULL;
        double prod = !mine          ? 0
                      : o->out_batch ? Bm * (frac(s, mine->end) - frac(s, mine->begin))
                                     : Bm;
        double nb = 0;
        if (nn) {
            nb = o->out_batch ? Bm * (frac(s, nn->end) - frac(s, nn->begin)) : Bm;
            for (int k = 0; k < nn->nxfer; k++) {
                const struct hg_lxfer *x = &lo->xfer[nn->xfer0 + k];
                struct task *t = add_task(sg, T_XFER);
                struct hg_path p;
                t->src = x->src;
                t->dst = x->dst;
                t->bytes = o->out_batch ? B * (frac(s, x->end) - frac(s, x->begin)) : B;
                add_path(s, sg, t, x->src, x->dst, &p);
                add_engines(s, sg, t);
                t->dur = hg_cost_transfer(&p, t->bytes);
                add_net_cpu(s, sg, t);
            }
        }
        if (!o->out_grad) {
            int64_t m = (int64_t)llround(prod > nb ? prod : nb);
            if (!drop) {
                add_mem(sg, e, m, pos[v], last[e]);
            } else {
                /* forward life, then the recomputed copy from the host on */
                add_mem(sg, e, m, pos[v], lastf[e]);
                if (bneed_has(sg, e)) {
                    int hp = pos[lo->rhost];
                    add_mem(sg, e, m, hp, last[e] > hp ? last[e] : hp);
                }
            }
        }
    }
}

/* The recompute segment of host op w: for every group it hosts with
 * recompute on, its droppable ops in order, each with a copy of its compute
 * tasks and of its transfers to devices with a backward reader. */
static void build_rseg(struct hg_sim *s, int w)
{
    struct seg *rs = &s->rseg[w];
    rs->nt = rs->nr = 0;
    const struct hg_lowered *lw = s->lw;
    for (int i = lw->hstart[w]; i < lw->hstart[w + 1]; i++) {
        int k = lw->hgroups[i];
        if (!lw->recompute[k])
            continue;
        for (int j = lw->dstart[k]; j < lw->dstart[k + 1]; j++) {
            int u = lw->dops[j];
            const struct seg *sg = &s->seg[u];
            for (int q = 0; q < sg->nt; q++) {
                const struct task *f = &sg->t[q];
                if (f->kind == T_AGG || f->kind == T_XCPU ||
                    (f->kind == T_XFER && !bneed_has(sg, f->dst)))
                    continue;
                struct task *t = add_task(rs, f->kind == T_COMP ? T_RCOMP : T_RXFER);
                int r0 = t->res0;
                *t = *f;
                t->kind = f->kind == T_COMP ? T_RCOMP : T_RXFER;
                t->op = u;
                t->res0 = r0;
                t->nres = 0;
                for (int x = 0; x < f->nres; x++)
                    add_res(rs, t, sg->res[f->res0 + x]);
            }
        }
    }
}

/* Runs the tasks of one segment: start = max(ready, every resource free). */
static void run_task(struct hg_sim *s, const struct seg *sg, struct task *t, double ready)
{
    double st = ready;
    for (int k = 0; k < t->nres; k++) {
        double a = s->avail[sg->res[t->res0 + k]];
        st = a > st ? a : st;
    }
    t->start = st;
    t->finish = st + t->dur;
    for (int k = 0; k < t->nres; k++)
        s->avail[sg->res[t->res0 + k]] = t->finish;
}

/* When op u's inputs are there on device d (recomputed ones for `back`). */
static double inputs_ready(const struct hg_sim *s, int u, int d, int back)
{
    const struct hg_pop *o = &s->pg->ops[u];
    int nd = s->ndev;
    double ready = 0;
    for (int k = 0; k < o->nin; k++) {
        int x = o->in[k].op;
        if (x < 0)
            continue;
        const double *a = back && dropped(s, x) ? s->rarr : s->arr;
        if (a[(size_t)x * nd + d] > ready)
            ready = a[(size_t)x * nd + d];
    }
    return ready;
}

static void run_rseg(struct hg_sim *s, struct seg *rs)
{
    int nd = s->ndev, cur = -1;
    for (int i = 0; i < rs->nt; i++) {
        struct task *t = &rs->t[i];
        double *ra = s->rarr + (size_t)t->op * nd;
        if (t->op != cur) {
            cur = t->op;
            for (int e = 0; e < nd; e++)
                ra[e] = 0;
        }
        if (t->kind == T_RCOMP) {
            run_task(s, rs, t, inputs_ready(s, t->op, t->dev, 1));
            ra[t->dev] = t->finish;
        } else {
            run_task(s, rs, t, ra[t->src]);
            if (t->finish > ra[t->dst])
                ra[t->dst] = t->finish;
        }
    }
}

/* The timing pass over segments at positions [p0, nops). */
static double run_from(struct hg_sim *s, int p0)
{
    int nd = s->ndev, nr = s->nres;
    memcpy(s->avail, s->snap + (size_t)p0 * nr, (size_t)nr * sizeof(double));
    for (int p = p0; p < s->nops; p++) {
        if (p > p0)
            memcpy(s->snap + (size_t)p * nr, s->avail, (size_t)nr * sizeof(double));
        int v = s->lw->order[p];
        const struct hg_pop *o = &s->pg->ops[v];
        struct seg *sg = &s->seg[v];
        if (s->rseg[v].nt)
            run_rseg(s, &s->rseg[v]);
        int back = o->phase != HG_PH_FORWARD;
        double *arr = s->arr + (size_t)v * nd;
        double src[HG_PLAN_MAXDEV];
        for (int e = 0; e < nd; e++)
            arr[e] = 0;
        double cmax = 0, xstart = 0;
        for (int i = 0; i < sg->nt; i++) {
            struct task *t = &sg->t[i];
            double ready;
            if (t->kind == T_COMP)
                ready = inputs_ready(s, v, t->dev, back);
            else if (t->kind == T_AGG)
                ready = cmax;
            else if (t->kind == T_XCPU)
                ready = xstart; /* its transfer's start */
            else
                ready = src[t->src];
            run_task(s, sg, t, ready);
            if (t->kind == T_XCPU)
                continue;
            if (t->kind == T_XFER)
                xstart = t->start;
            if (t->kind == T_COMP) {
                arr[t->dev] = t->finish;
                cmax = t->finish > cmax ? t->finish : cmax;
            } else if (t->kind == T_AGG) {
                for (int j = 0; j < sg->nt; j++)
                    if (sg->t[j].kind == T_COMP)
                        arr[sg->t[j].dev] = t->finish;
            } else if (t->finish > arr[t->dst]) {
                arr[t->dst] = t->finish;
            }
            if (i + 1 < sg->nt && sg->t[i + 1].kind == T_XFER && t->kind != T_XFER)
                memcpy(src, arr, (size_t)nd * sizeof(double));
        }
    }
    double end = 0;
    for (int r = 0; r < nr; r++)
        end = s->avail[r] > end ? s->avail[r] : end;
    return end;
}

/* A tensor-parallel op's parameters on each device of its set: a split
 * one's shard of its static bytes (its optimizer state is stored alike),
 * a whole one in full; once per device. */
static void tp_params(struct hg_sim *s, int v, int64_t *stat)
{
    const struct hg_tp *tp = s->lw->tp;
    const struct hg_tpop *o = &tp->op[v];
    const struct hg_tpset *set = &tp->set[o->set];
    const struct hg_pop *po = &s->pg->ops[v];
    int nd = s->ndev;
    int64_t size[HG_PLAN_MAXDEV];
    for (int k = 0; k < po->nparams; k++) {
        int t = po->params[k];
        struct hg_tplayout l = tp->tset[t] == o->set ? tp->tlay[t] : (struct hg_tplayout){0, -1};
        int64_t len = l.kind == HG_TPL_SPLIT ? s->pg->shape[t].dim[l.axis] : 0;
        if (len > 0)
            hg_tp_split(len, set->w, set->n, size);
        for (int i = 0; i < set->n; i++) {
            int d = set->dev[i], *sp = &s->stamp[(size_t)t * nd + d];
            if (*sp == s->stampv)
                continue;
            *sp = s->stampv;
            stat[d] += len > 0 ? s->pg->pstatic[t] / len * size[i] : s->pg->pstatic[t];
        }
    }
}

static void memory(struct hg_sim *s, struct hg_sim_result *r)
{
    int nd = s->ndev, N = s->nops;
    const struct hg_pgraph *pg = s->pg;
    memset(s->alloc_at, 0, (size_t)N * nd * sizeof(int64_t));
    memset(s->free_after, 0, (size_t)N * nd * sizeof(int64_t));
    int64_t stat[HG_PLAN_MAXDEV] = {0};
    if (++s->stampv == 0x7fffffff) {
        memset(s->stamp, 0, (size_t)pg->ntensors * nd * sizeof(int));
        s->stampv = 1;
    }
    long nt = 0;
    for (int v = 0; v < N; v++) {
        const struct seg *sg = &s->seg[v];
        nt += sg->nt + s->rseg[v].nt;
        for (int i = 0; i < sg->nm; i++) {
            const struct memc *m = &sg->mem[i];
            s->alloc_at[(size_t)m->allocpos * nd + m->dev] += m->bytes;
            s->free_after[(size_t)m->lastpos * nd + m->dev] += m->bytes;
        }
        const struct hg_pop *o = &pg->ops[v];
        const struct hg_lop *lo = &s->lw->ops[v];
        if (s->lw->tp && s->lw->tp->op[v].set >= 0) {
            tp_params(s, v, stat);
            continue;
        }
        for (int i = 0; i < lo->nplace; i++) {
            int d = lo->place[i].dev;
            int64_t rows = lo->place[i].end - lo->place[i].begin;
            for (int k = 0; k < o->nparams; k++) {
                int *sp = &s->stamp[(size_t)o->params[k] * nd + d];
                if (*sp != s->stampv) {
                    *sp = s->stampv;
                    stat[d] += pg->pstatic[o->params[k]];
                }
            }
            for (int k = 0; k < o->nin; k++) {
                if (o->in[k].op >= 0 || !o->in[k].batch)
                    continue;
                int *sp = &s->stamp[(size_t)o->in[k].tensor * nd + d];
                if (*sp != s->stampv) {
                    *sp = s->stampv;
                    stat[d] += (int64_t)llround((double)o->in[k].mem * (double)rows /
                                                (double)s->lw->batch);
                }
            }
        }
    }
    r->ntasks = nt;
    r->oom = 0;
    r->overflow = 0;
    for (int d = 0; d < nd; d++) {
        int64_t cur = 0, peak = 0;
        for (int p = 0; p < N; p++) {
            cur += s->alloc_at[(size_t)p * nd + d];
            peak = cur > peak ? cur : peak;
            cur -= s->free_after[(size_t)p * nd + d];
        }
        /* a pipeline holds the activations of its micro-batches in
         * flight, not the whole batch's */
        if (s->lw->nmicro > 0)
            peak = peak * hg__pipe_inflight(s->lw, d) / s->lw->nmicro;
        r->peak[d] = stat[d] + peak;
        int64_t mem = s->c->devices[d].memory;
        if (r->peak[d] > mem) {
            r->oom++;
            r->overflow += (double)(r->peak[d] - mem) / (double)mem;
        }
    }
    for (int d = nd; d < HG_PLAN_MAXDEV; d++)
        r->peak[d] = 0;
}

void hg_sim_full(struct hg_sim *s, const struct hg_strategy *st, struct hg_sim_result *r)
{
    char err[512];
    HG_CHECK(st->nops == s->nops && st->ndev == s->ndev);
    if (hg_lower_full(s->lw, st, err, sizeof(err)) != 0)
        hg_check_failed(__FILE__, __LINE__, err); /* the caller's strategy is invalid */
    for (int v = 0; v < s->nops; v++)
        build_seg(s, v);
    for (int v = 0; v < s->nops; v++)
        build_rseg(s, v);
    for (int i = 0; i < s->nres; i++)
        s->snap[i] = 0;
    r->iter_s = run_from(s, 0);
    if (s->lw->nmicro > 0)
        r->iter_s = hg__pipe_time(s->lw, s->pr);
    memory(s, r);
}

static int next_mark(struct hg_sim *s)
{
    if (++s->markv == 0x7fffffff) {
        memset(s->mark, 0, ((size_t)s->nops + 1) * sizeof(int));
        s->markv = 1;
    }
    return s->markv;
}

void hg_sim_delta(struct hg_sim *s, const struct hg_strategy *st, int g,
                  struct hg_sim_result *r)
{
    /* tensor parallelism rebuilds its layer whole: so does the simulation */
    int tp = s->lw->tp != NULL;
    for (int k = 0; k < st->ngroups; k++)
        tp |= st->cfg[k].mode == HG_MODE_TP;
    if (tp) {
        hg_sim_full(s, st, r);
        return;
    }
    const struct hg_lowered *lw = s->lw;
    HG_CHECK(lw->ngroups > 0 && g >= 0 && g < lw->ngroups && st->ngroups == lw->ngroups);
    if (st->nmicro > 0 || lw->nmicro > 0) { /* a pipeline's schedule: played whole */
        hg_sim_full(s, st, r);
        return;
    }
    int n = hg_lower_group(s->lw, st, g, s->changed);
    int p0 = s->nops;
    int seen = next_mark(s);
    for (int i = 0; i < n; i++) {
        int v = s->changed[i];
        s->mark[v] = seen;
        build_seg(s, v);
        p0 = lw->pos[v] < p0 ? lw->pos[v] : p0;
    }
    /* ops elsewhere whose places a cut that came or went now divides
     * differently: their compute tasks change */
    for (int v = 0; v < s->nops && lw->ncutchg > 0; v++) {
        const struct hg_lop *o = &lw->ops[v];
        int hit = 0;
        for (int k = 0; k < o->nplace && !hit && s->pg->ops[v].batch && s->mark[v] != seen; k++)
            for (int j = 0; j < lw->ncutchg && !hit; j++)
                hit = o->place[k].begin < lw->cutchg[j] && lw->cutchg[j] < o->place[k].end;
        if (hit) {
            s->mark[v] = seen;
            s->changed[n++] = v; /* distinct from the lowering's: <= nops */
            build_seg(s, v);
            p0 = lw->pos[v] < p0 ? lw->pos[v] : p0;
        }
    }
    /* the recompute segments that copy tasks of a rebuilt op */
    int stampv = next_mark(s);
    for (int i = 0; i < n; i++) {
        int h = lw->host[lw->ops[s->changed[i]].group];
        if (h >= 0 && s->mark[h] != stampv) {
            s->mark[h] = stampv;
            build_rseg(s, h);
            p0 = lw->pos[h] < p0 ? lw->pos[h] : p0;
        }
    }
    if (p0 >= s->nops)
        p0 = 0;
    r->iter_s = run_from(s, p0);
    memory(s, r);
}

void hg_sim_op_times(const struct hg_sim *s, int op, double *comp, double *comm)
{
    const struct seg *sg = &s->seg[op];
    double a = 0, b = 0, x = 0;
    for (int i = 0; i < sg->nt; i++) {
        const struct task *t = &sg->t[i];
        if (t->kind == T_COMP)
            a = t->dur > a ? t->dur : a;
        else if (t->kind == T_AGG)
            b = t->dur;
        else if (t->kind != T_XCPU)
            x = t->dur > x ? t->dur : x;
    }
    *comp = a + b;
    *comm = x;
}

static void chan_name(const struct hg_cluster *c, int ch, char *b, size_t n)
{
    int L = c->nlinks;
    if (ch < 2 * L) {
        const struct hg_plink *l = &c->links[ch / 2];
        int a = ch % 2 ? l->b : l->a, z = ch % 2 ? l->a : l->b;
        snprintf(b, n, "link %s->%s", c->devices[a].name, c->devices[z].name);
    } else if (ch < 2 * L + 2 * c->nnodes) {
        int k = ch - 2 * L;
        snprintf(b, n, "nic %s %s", c->nodes[k / 2].name, k % 2 ? "down" : "up");
    } else {
        snprintf(b, n, "switch");
    }
}

int hg_sim_trace(const struct hg_sim *s, FILE *f)
{
    const struct hg_cluster *c = s->c;
    fprintf(f, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n");
    int first = 1;
    char nm[320];
    for (int r = 0; r < s->nres; r++) {
        if (r < s->ndev)
            snprintf(nm, sizeof(nm), "%s", c->devices[r].name);
        else if (r >= s->ndev + s->nchan)
            snprintf(nm, sizeof(nm), "transfers of %s", c->devices[r - s->ndev - s->nchan].name);
        else
            chan_name(c, r - s->ndev, nm, sizeof(nm));
        fprintf(f, "%s{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": 0, "
                "\"args\": {\"name\": \"%s\"}}", first ? "" : ",\n", r, nm);
        first = 0;
    }
    for (int q = 0; q < 2 * s->nops; q++) {
        int v = s->lw->order[q / 2];
        /* a host's recompute segment, then its own */
        const struct seg *sg = q % 2 ? &s->seg[v] : &s->rseg[v];
        for (int i = 0; i < sg->nt; i++) {
            const struct task *t = &sg->t[i];
            int u = t->kind == T_RCOMP || t->kind == T_RXFER ? t->op : v;
            const char *kn = hg_op_table[s->pg->ops[u].kind].name;
            if (t->kind == T_COMP)
                snprintf(nm, sizeof(nm), "%s #%d", kn, v);
            else if (t->kind == T_RCOMP)
                snprintf(nm, sizeof(nm), "recompute %s #%d", kn, u);
            else if (t->kind == T_RXFER)
                snprintf(nm, sizeof(nm), "xfer recomputed #%d %s->%s (%.3g MB)", u,
                         c->devices[t->src].name, c->devices[t->dst].name, t->bytes / 1e6);
            else if (t->kind == T_AGG)
                snprintf(nm, sizeof(nm), "aggregate #%d (%.3g MB)", v, t->bytes / 1e6);
            else if (t->kind == T_XCPU)
                snprintf(nm, sizeof(nm), "network cpu #%d %s->%s (%.3g MB)", v,
                         c->devices[t->src].name, c->devices[t->dst].name, t->bytes / 1e6);
            else
                snprintf(nm, sizeof(nm), "xfer #%d %s->%s (%.3g MB)", v,
                         c->devices[t->src].name, c->devices[t->dst].name, t->bytes / 1e6);
            for (int k = 0; k < t->nres; k++)
                fprintf(f, ",\n{\"name\": \"%s\", \"ph\": \"X\", \"pid\": %d, \"tid\": 0, "
                        "\"ts\": %.3f, \"dur\": %.3f}", nm, sg->res[t->res0 + k],
                        t->start * 1e6, t->dur * 1e6);
        }
    }
    fprintf(f, "\n]}\n");
    return ferror(f) ? -1 : 0;
}
