/* sim.c - FlexFlow's task graph and its simulation (docs/planner.md,
 * "Simulator").
 *
 * Tasks.  For op v at position p of the strategy's order, its *segment*:
 *  - a compute task on every device holding v (MP: its device; DP: every
 *    device with replicas, time r*a + b*r/R for r of R replicas, or a once
 *    for an op without a batch axis);
 *  - a gradient aggregation task when v produces a parameter's gradient in
 *    a DP group over 2+ devices: AllReduce (the cheaper of ring and
 *    hierarchical, hg_cost_allreduce_*) or PS (hg_cost_ps), occupying every
 *    channel its traffic crosses;
 *  - transfers of v's output to the devices of its consumers: a tensor with
 *    a batch axis is split by batch intervals (device d of a DP group holds
 *    [sum_{d'<d} r_d', sum_{d'<=d} r_d') / R): each consumer device receives
 *    the overlap with every producer device's interval (split/concat);
 *    a tensor without one is copied whole from the first producer device.
 * Resources are the devices and the channels of hg_cluster_path (links are
 * devices).  Every resource runs its tasks in the order of their segments
 * (the strategy's execution order), one at a time: transfers that share a
 * channel are serialized FIFO, each at the full bandwidth of its path, which
 * gives the same total time as equal sharing.
 *
 * Simulation: one pass over the segments in order; a task starts at
 * max(its inputs' arrival, every resource it uses free).  Since every task
 * depends only on tasks of earlier (or its own) segments, the state before
 * segment p is just the resources' free times, snapshot per segment.
 * Delta simulation: a change to group g rebuilds the segments of g's ops
 * and of their producers (whose transfers and memory depend on where g
 * runs), restores the snapshot before the earliest of them and re-runs the
 * pass from there: the same code on the same inputs, so bitwise the same
 * result as a full simulation.
 *
 * Memory (bytes, per device): params + gradients + optimizer state of
 * every param an op on the device reads or updates, the device's share of
 * the inputs, and activations by reference count in execution order: an
 * output shard is allocated at its producer's segment and freed after the
 * last consumer on that device.  Peak over the order; OOM above `memory`.
 *
 * Recomputation (gradient checkpointing; a group's `recompute`).  An op is
 * *droppable* when it is a forward op whose output is an activation with a
 * batch axis that some backward op reads and every forward op reading it is
 * in the same group (so the group's inputs from other groups stay: they are
 * its checkpoints).  The group's *host* is the earliest of those backward
 * readers in the order (droppable ops must come before it, else they are
 * not droppable).  With recompute on, a droppable output is freed after its
 * last forward reader; at the host, before the host's own tasks, the
 * group's droppable ops run again in order (same compute tasks, same
 * transfers to devices with backward readers) and their outputs live from
 * the host to the last backward reader.  Backward ops read the recomputed
 * arrival.  A changed group rebuilds the recompute segments of the hosts of
 * every rebuilt op, so delta simulation stays identical to full.
 * Simplification: the forward still sends a dropped output to a device whose
 * only readers are backward ops (and frees it at once); a runtime would wait
 * for the recomputation.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "planner/hg_planner.h"

enum { T_COMP, T_AGG, T_XFER, T_RCOMP, T_RXFER };

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
    const struct hg_cluster *c;
    int nops, ndev, nres, nchan;
    struct seg *seg;        /* by op id */
    int *pos;               /* position of each op */
    int *order;
    double *arr;            /* [nops*ndev] arrival of an op's output on a device */
    double *snap;           /* [(nops+1)*nres] resource free times before segment p */
    double *avail;
    struct hg_strategy *st; /* the simulated strategy (a copy) */
    int *gstart, *gops;     /* members of each group (CSR) */
    int ngroups;
    int64_t *alloc_at, *free_after;
    int *stamp;
    int stampv;
    int *mark;              /* [nops] delta: rebuilt when == markv */
    int markv;
    long ntasks;
    /* recomputation: by op (set_strategy: depend on grouping and order only) */
    struct seg *rseg;       /* [nops] recompute tasks run at this (host) op */
    double *rarr;           /* [nops*ndev] arrival of a recomputed output */
    int *droppable;         /* [nops] */
    int *host;              /* [ngroups] host op or -1 */
    int *hstart, *hgroups;  /* groups hosted by each op (CSR over op ids) */
    int *dstart, *dops;     /* droppable ops of each group in order (CSR) */
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

struct hg_sim *hg_sim_new(const struct hg_pgraph *pg)
{
    struct hg_sim *s = calloc(1, sizeof(*s));
    HG_CHECK(s != NULL);
    s->pg = pg;
    s->c = pg->c;
    s->nops = pg->nops;
    s->ndev = pg->ndev;
    s->nchan = hg_cluster_n_channels(pg->c);
    s->nres = s->ndev + s->nchan;
    size_t N = (size_t)s->nops;
    s->seg = calloc(N + 1, sizeof(struct seg));
    s->pos = malloc((N + 1) * sizeof(int));
    s->order = malloc((N + 1) * sizeof(int));
    s->arr = malloc((N * (size_t)s->ndev + 1) * sizeof(double));
    s->snap = malloc((N + 1) * (size_t)s->nres * sizeof(double));
    s->avail = malloc((size_t)s->nres * sizeof(double));
    s->alloc_at = malloc((N * (size_t)s->ndev + 1) * sizeof(int64_t));
    s->free_after = malloc((N * (size_t)s->ndev + 1) * sizeof(int64_t));
    s->stamp = calloc((size_t)pg->ntensors * (size_t)s->ndev + 1, sizeof(int));
    s->mark = calloc(N + 1, sizeof(int));
    s->rseg = calloc(N + 1, sizeof(struct seg));
    s->rarr = calloc(N * (size_t)s->ndev + 1, sizeof(double));
    s->droppable = calloc(N + 1, sizeof(int));
    HG_CHECK(s->seg && s->pos && s->order && s->arr && s->snap && s->avail && s->alloc_at &&
             s->free_after && s->stamp && s->mark && s->rseg && s->rarr && s->droppable);
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
    free(s->droppable);
    free(s->host);
    free(s->hstart);
    free(s->hgroups);
    free(s->dstart);
    free(s->dops);
    free(s->pos);
    free(s->order);
    free(s->arr);
    free(s->snap);
    free(s->avail);
    free(s->alloc_at);
    free(s->free_after);
    free(s->stamp);
    free(s->mark);
    free(s->gstart);
    free(s->gops);
    hg_strategy_free(s->st);
    free(s);
}

/* Replicas of op v's group per device and their total. */
static int reps(const struct hg_strategy *st, int v, int *rep)
{
    const struct hg_gcfg *g = &st->cfg[st->group[v]];
    int R = 0;
    for (int d = 0; d < st->ndev; d++) {
        rep[d] = g->mode == HG_MODE_MP ? (d == g->device) : g->rep[d];
        R += rep[d];
    }
    return R;
}

/* Batch intervals [lo, hi) of each device from replica counts. */
static void intervals(const int *rep, int R, int ndev, double *lo, double *hi)
{
    int cum = 0;
    for (int d = 0; d < ndev; d++) {
        lo[d] = (double)cum / R;
        cum += rep[d];
        hi[d] = (double)cum / R;
    }
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
    return s->droppable[v] && s->st->cfg[s->st->group[v]].recompute;
}

static int allreduce_hier_cheaper(const struct hg_cluster *c, const int *devs, int n,
                                  double bytes, double *t)
{
    double r = hg_cost_allreduce_ring(c, devs, n, bytes);
    double h = hg_cost_allreduce_hier(c, devs, n, bytes);
    *t = h < r ? h : r;
    return h < r;
}

const char *hg_sim_allreduce_kind(const struct hg_pgraph *pg, const struct hg_gcfg *g)
{
    int devs[HG_PLAN_MAXDEV], n = 0;
    for (int d = 0; d < pg->ndev; d++)
        if (g->rep[d] > 0)
            devs[n++] = d;
    double t;
    return n > 1 && allreduce_hier_cheaper(pg->c, devs, n, 1e8, &t) ? "hierarchical" : "ring";
}

static void build_seg(struct hg_sim *s, const struct hg_strategy *st, int v)
{
    const struct hg_pop *o = &s->pg->ops[v];
    const struct hg_cluster *c = s->c;
    struct seg *sg = &s->seg[v];
    int nd = s->ndev;
    sg->nt = sg->nr = sg->nm = 0;
    int rep[HG_PLAN_MAXDEV], devs[HG_PLAN_MAXDEV], n = 0;
    double lo[HG_PLAN_MAXDEV], hi[HG_PLAN_MAXDEV];
    int R = reps(st, v, rep);
    intervals(rep, R, nd, lo, hi);
    for (int d = 0; d < nd; d++) {
        if (rep[d] <= 0)
            continue;
        devs[n++] = d;
        struct task *t = add_task(sg, T_COMP);
        t->dev = d;
        if (!o->batch) {
            t->dur = o->a[d];
        } else if (o->pe[d]) { /* the measured time at a replica's batch */
            t->dur = rep[d] * hg_prof_time(o->pe[d], (double)s->pg->batch / R) /
                     hg_pdevice_share(&c->devices[d]);
        } else {
            t->dur = rep[d] * o->a[d] + o->b[d] * ((double)rep[d] / R);
        }
        add_res(sg, t, d);
    }
    const struct hg_gcfg *g = &st->cfg[st->group[v]];
    if (o->out_grad && g->mode == HG_MODE_DP && n > 1) {
        struct task *t = add_task(sg, T_AGG);
        t->bytes = (double)o->out_bytes;
        if (g->agg == HG_AGG_AR) {
            allreduce_hier_cheaper(c, devs, n, t->bytes, &t->dur);
            for (int i = 0; i < n; i++) {
                struct hg_path p;
                hg_cluster_path(c, devs[i], devs[(i + 1) % n], &p);
                for (int k = 0; k < p.nchan; k++)
                    add_res(sg, t, nd + p.chan[k]);
            }
        } else {
            t->dur = hg_cost_ps(c, devs, n, g->ps, t->bytes);
            for (int i = 0; i < n; i++) {
                if (devs[i] == g->ps)
                    continue;
                struct hg_path p;
                hg_cluster_path(c, devs[i], g->ps, &p);
                for (int k = 0; k < p.nchan; k++)
                    add_res(sg, t, nd + p.chan[k]);
                hg_cluster_path(c, g->ps, devs[i], &p);
                for (int k = 0; k < p.nchan; k++)
                    add_res(sg, t, nd + p.chan[k]);
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
    if (o->out < 0)
        return;
    /* what the consumers need on each device: the hull of their intervals */
    double jlo[HG_PLAN_MAXDEV], jhi[HG_PLAN_MAXDEV];
    int need[HG_PLAN_MAXDEV], last[HG_PLAN_MAXDEV], lastf[HG_PLAN_MAXDEV];
    int drop = dropped(s, v);
    memset(sg->bneed, 0, sizeof sg->bneed);
    for (int d = 0; d < nd; d++) {
        need[d] = 0;
        jlo[d] = 1;
        jhi[d] = 0;
        last[d] = lastf[d] = s->pos[v];
    }
    for (int k = 0; k < o->ncons; k++) {
        int w = o->cons[k], wrep[HG_PLAN_MAXDEV];
        double wlo[HG_PLAN_MAXDEV], whi[HG_PLAN_MAXDEV];
        int WR = reps(st, w, wrep);
        intervals(wrep, WR, nd, wlo, whi);
        for (int e = 0; e < nd; e++) {
            if (wrep[e] <= 0)
                continue;
            need[e] = 1;
            int bw = 0; /* does w read the output with its batch axis? */
            const struct hg_pop *ow = &s->pg->ops[w];
            for (int i = 0; i < ow->nin; i++)
                if (ow->in[i].op == v && ow->in[i].batch)
                    bw = 1;
            double a = bw ? wlo[e] : 0, b = bw ? whi[e] : 1;
            jlo[e] = a < jlo[e] ? a : jlo[e];
            jhi[e] = b > jhi[e] ? b : jhi[e];
            if (s->pos[w] > last[e])
                last[e] = s->pos[w];
            if (ow->phase == HG_PH_FORWARD) {
                if (s->pos[w] > lastf[e])
                    lastf[e] = s->pos[w];
            } else {
                bneed_set(sg, e);
            }
        }
    }
    double B = (double)o->out_bytes;
    for (int e = 0; e < nd; e++) {
        double prod = rep[e] > 0 ? (o->out_batch ? B * (hi[e] - lo[e]) : B) : 0;
        double nb = 0;
        if (need[e]) {
            if (o->out_batch) {
                nb = B * (jhi[e] - jlo[e]);
                for (int k = 0; k < n; k++) {
                    int d = devs[k];
                    double a = lo[d] > jlo[e] ? lo[d] : jlo[e];
                    double b = hi[d] < jhi[e] ? hi[d] : jhi[e];
                    if (d == e || !(b > a))
                        continue;
                    struct task *t = add_task(sg, T_XFER);
                    t->src = d;
                    t->dst = e;
                    t->bytes = B * (b - a);
                    struct hg_path p;
                    hg_cluster_path(c, d, e, &p);
                    t->dur = hg_cost_transfer(&p, t->bytes);
                    for (int i = 0; i < p.nchan; i++)
                        add_res(sg, t, nd + p.chan[i]);
                }
            } else {
                nb = B;
                if (rep[e] <= 0) {
                    struct task *t = add_task(sg, T_XFER);
                    t->src = devs[0];
                    t->dst = e;
                    t->bytes = B;
                    struct hg_path p;
                    hg_cluster_path(c, devs[0], e, &p);
                    t->dur = hg_cost_transfer(&p, t->bytes);
                    for (int i = 0; i < p.nchan; i++)
                        add_res(sg, t, nd + p.chan[i]);
                }
            }
        }
        if (!o->out_grad) {
            int64_t m = (int64_t)llround(prod > nb ? prod : nb);
            if (!drop) {
                add_mem(sg, e, m, s->pos[v], last[e]);
            } else {
                /* forward life, then the recomputed copy from the host on */
                add_mem(sg, e, m, s->pos[v], lastf[e]);
                if (bneed_has(sg, e)) {
                    int hp = s->pos[s->host[s->st->group[v]]];
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
    for (int i = s->hstart[w]; i < s->hstart[w + 1]; i++) {
        int k = s->hgroups[i];
        if (!s->st->cfg[k].recompute)
            continue;
        for (int j = s->dstart[k]; j < s->dstart[k + 1]; j++) {
            int u = s->dops[j];
            const struct seg *sg = &s->seg[u];
            for (int q = 0; q < sg->nt; q++) {
                const struct task *f = &sg->t[q];
                if (f->kind == T_AGG || (f->kind == T_XFER && !bneed_has(sg, f->dst)))
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
        int v = s->order[p];
        const struct hg_pop *o = &s->pg->ops[v];
        struct seg *sg = &s->seg[v];
        if (s->rseg[v].nt)
            run_rseg(s, &s->rseg[v]);
        int back = o->phase != HG_PH_FORWARD;
        double *arr = s->arr + (size_t)v * nd;
        double src[HG_PLAN_MAXDEV];
        for (int e = 0; e < nd; e++)
            arr[e] = 0;
        double cmax = 0;
        for (int i = 0; i < sg->nt; i++) {
            struct task *t = &sg->t[i];
            double ready;
            if (t->kind == T_COMP)
                ready = inputs_ready(s, v, t->dev, back);
            else if (t->kind == T_AGG)
                ready = cmax;
            else
                ready = src[t->src];
            run_task(s, sg, t, ready);
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

static void memory(struct hg_sim *s, const struct hg_strategy *st, struct hg_sim_result *r)
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
        int rep[HG_PLAN_MAXDEV];
        int R = reps(st, v, rep);
        for (int d = 0; d < nd; d++) {
            if (rep[d] <= 0)
                continue;
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
                    stat[d] += (int64_t)llround((double)o->in[k].bytes * rep[d] / R);
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

/* Lists by key (CSR): the items x of items[0..n) (NULL: 0..n-1), in that
 * order, with key[x] >= 0 go in (*list)[(*start)[key[x]] ..
 * (*start)[key[x] + 1]); keys are 0..nkeys-1. */
static void csr(int nkeys, const int *key, const int *items, int n, int **start, int **list)
{
    free(*start);
    free(*list);
    *start = calloc((size_t)nkeys + 2, sizeof(int));
    *list = malloc(((size_t)n + 1) * sizeof(int));
    int *fill = malloc(((size_t)nkeys + 1) * sizeof(int)); /* [nkeys] next free slot */
    HG_CHECK(*start && *list && fill);
    for (int i = 0; i < n; i++) {
        int x = items ? items[i] : i;
        if (key[x] >= 0)
            (*start)[key[x] + 1]++;
    }
    for (int k = 0; k < nkeys; k++)
        (*start)[k + 1] += (*start)[k];
    memcpy(fill, *start, (size_t)nkeys * sizeof(int));
    for (int i = 0; i < n; i++) {
        int x = items ? items[i] : i;
        if (key[x] >= 0)
            (*list)[fill[key[x]]++] = x;
    }
    free(fill);
}

/* Droppable ops, hosts and their CSR lists (see the head comment): they
 * depend on the grouping and the order, not on the configurations. */
static void recompute_plan(struct hg_sim *s, const struct hg_strategy *st)
{
    const struct hg_pgraph *pg = s->pg;
    int N = s->nops, G = st->ngroups;
    for (int v = 0; v < N; v++) {
        const struct hg_pop *o = &pg->ops[v];
        int ok = o->phase == HG_PH_FORWARD && o->out >= 0 && !o->out_grad && o->out_batch, back = 0;
        for (int k = 0; k < o->ncons && ok; k++) {
            const struct hg_pop *w = &pg->ops[o->cons[k]];
            if (w->phase != HG_PH_FORWARD)
                back = 1;
            else if (st->group[o->cons[k]] != st->group[v])
                ok = 0;
        }
        s->droppable[v] = ok && back;
    }
    free(s->host);
    s->host = malloc(((size_t)G + 1) * sizeof(int));
    HG_CHECK(s->host != NULL);
    for (int changed = 1; changed;) {
        for (int k = 0; k < G; k++)
            s->host[k] = -1;
        for (int v = 0; v < N; v++) {
            if (!s->droppable[v])
                continue;
            const struct hg_pop *o = &pg->ops[v];
            int *h = &s->host[st->group[v]];
            for (int k = 0; k < o->ncons; k++) {
                int w = o->cons[k];
                if (pg->ops[w].phase != HG_PH_FORWARD && (*h < 0 || s->pos[w] < s->pos[*h]))
                    *h = w;
            }
        }
        /* a droppable op must run before its group's host */
        changed = 0;
        for (int v = 0; v < N; v++)
            if (s->droppable[v] && s->pos[v] >= s->pos[s->host[st->group[v]]]) {
                s->droppable[v] = 0;
                changed = 1;
            }
    }
    csr(N, s->host, NULL, G, &s->hstart, &s->hgroups);
    int *dkey = malloc(((size_t)N + 1) * sizeof(int)); /* [nops] group if droppable */
    HG_CHECK(dkey != NULL);
    for (int v = 0; v < N; v++)
        dkey[v] = s->droppable[v] ? st->group[v] : -1;
    csr(G, dkey, st->order, N, &s->dstart, &s->dops);
    free(dkey);
}

static void set_strategy(struct hg_sim *s, const struct hg_strategy *st)
{
    HG_CHECK(st->nops == s->nops && st->ndev == s->ndev);
    hg_strategy_free(s->st);
    s->st = hg_strategy_copy(st);
    memcpy(s->order, st->order, (size_t)s->nops * sizeof(int));
    for (int p = 0; p < s->nops; p++)
        s->pos[st->order[p]] = p;
    s->ngroups = st->ngroups;
    csr(st->ngroups, st->group, NULL, s->nops, &s->gstart, &s->gops);
    recompute_plan(s, st);
}

void hg_sim_full(struct hg_sim *s, const struct hg_strategy *st, struct hg_sim_result *r)
{
    set_strategy(s, st);
    for (int v = 0; v < s->nops; v++)
        build_seg(s, st, v);
    for (int v = 0; v < s->nops; v++)
        build_rseg(s, v);
    for (int i = 0; i < s->nres; i++)
        s->snap[i] = 0;
    r->iter_s = run_from(s, 0);
    memory(s, st, r);
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
    HG_CHECK(s->st && g >= 0 && g < s->ngroups && st->ngroups == s->ngroups);
    s->st->cfg[g] = st->cfg[g];
    int p0 = s->nops;
    int stampv = next_mark(s);
    for (int i = s->gstart[g]; i < s->gstart[g + 1]; i++) {
        int v = s->gops[i];
        if (s->mark[v] != stampv) {
            s->mark[v] = stampv;
            build_seg(s, st, v);
            p0 = s->pos[v] < p0 ? s->pos[v] : p0;
        }
        const struct hg_pop *o = &s->pg->ops[v];
        for (int k = 0; k < o->nin; k++) {
            int u = o->in[k].op;
            if (u >= 0 && s->mark[u] != stampv) {
                s->mark[u] = stampv;
                build_seg(s, st, u);
                p0 = s->pos[u] < p0 ? s->pos[u] : p0;
            }
        }
    }
    /* the recompute segments that copy tasks of a rebuilt op */
    stampv = next_mark(s);
    for (int i = s->gstart[g]; i < s->gstart[g + 1]; i++) {
        int v = s->gops[i];
        const struct hg_pop *o = &s->pg->ops[v];
        for (int k = -1; k < o->nin; k++) {
            int u = k < 0 ? v : o->in[k].op;
            int h = u >= 0 ? s->host[st->group[u]] : -1;
            if (h >= 0 && s->mark[h] != stampv) {
                s->mark[h] = stampv;
                build_rseg(s, h);
                p0 = s->pos[h] < p0 ? s->pos[h] : p0;
            }
        }
    }
    if (p0 >= s->nops)
        p0 = 0;
    r->iter_s = run_from(s, p0);
    memory(s, st, r);
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
        else
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
        else
            chan_name(c, r - s->ndev, nm, sizeof(nm));
        fprintf(f, "%s{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": 0, "
                "\"args\": {\"name\": \"%s\"}}", first ? "" : ",\n", r, nm);
        first = 0;
    }
    for (int q = 0; q < 2 * s->nops; q++) {
        int v = s->order[q / 2];
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
