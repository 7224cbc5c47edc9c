/* lower.c - a strategy lowered op by op (hg_planner.h, "lowering";
 * docs/planner.md, "Lowering"): each op's replicas with their devices and
 * integer rows, where its output is needed and the transfers that bring it
 * there, each parameter's gradient aggregation, the order and what is
 * recomputed where.  No prices: the simulator prices this structure, an
 * executor compiles it.  The AllReduce algorithm is the one exception that
 * asks the cost model (the cheaper on this cluster), from the cluster
 * alone. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "planner/hg_planner.h"
#include "planner/planner-impl.h"

static void *grow(void *v, int n, int *cap, size_t elt)
{
    if (n < *cap)
        return v;
    *cap = *cap ? 2 * *cap : 4;
    while (*cap <= n)
        *cap *= 2;
    v = realloc(v, (size_t)*cap * elt);
    HG_CHECK(v != NULL);
    return v;
}

/* floor(j * B / R) for 0 <= j <= R, B <= INT64_MAX / R (checked by the
 * callers once per op: this runs twice per place) */
static int64_t bound(int64_t B, int R, int j)
{
    return j == R ? B : (int64_t)j * B / R;
}

int64_t hg_lower_bound(int64_t batch, int R, int j)
{
    HG_CHECK(R > 0 && j >= 0 && j <= R && batch >= 0 && batch <= INT64_MAX / R);
    return bound(batch, R, j);
}

static const char *const agg_names[] = {"none", "ring", "hierarchical", "ps"};

const char *hg_lagg_kind_name(enum hg_lagg_kind k)
{
    return (unsigned)k <= HG_LAGG_PS ? agg_names[k] : "?";
}

struct hg_lowered *hg_lower_new(const struct hg_pgraph *pg)
{
    struct hg_lowered *lw = calloc(1, sizeof(*lw));
    HG_CHECK(lw != NULL);
    size_t N = (size_t)pg->nops;
    lw->pg = pg;
    lw->nops = pg->nops;
    lw->ndev = pg->ndev;
    lw->batch = pg->batch;
    lw->ops = calloc(N + 1, sizeof(struct hg_lop));
    lw->agg = calloc((size_t)pg->nparams + 1, sizeof(struct hg_lagg));
    lw->order = malloc((N + 1) * sizeof(int));
    lw->pos = malloc((N + 1) * sizeof(int));
    lw->droppable = calloc(N + 1, sizeof(int));
    lw->stamp = calloc(N + 1, sizeof(int));
    lw->cutn = calloc((size_t)pg->batch + 1, sizeof(int));
    lw->cutstamp = calloc((size_t)pg->batch + 1, sizeof(int));
    lw->cutwas = calloc((size_t)pg->batch + 1, 1);
    HG_CHECK(lw->ops && lw->agg && lw->order && lw->pos && lw->droppable && lw->stamp &&
             lw->cutn && lw->cutstamp && lw->cutwas);
    for (int v = 0; v < lw->nops; v++)
        lw->ops[v].agg = lw->ops[v].rhost = -1;
    for (int i = 0; i < pg->nparams; i++) {
        struct hg_lagg *a = &lw->agg[i];
        a->param = pg->param[i];
        a->grad = pg->param_grad[i];
        a->op = pg->grad_op[i];
        a->ps = -1;
        if (a->op >= 0)
            lw->ops[a->op].agg = i;
    }
    return lw;
}

void hg_lower_free(struct hg_lowered *lw)
{
    if (!lw)
        return;
    for (int v = 0; v < lw->nops; v++) {
        free(lw->ops[v].place);
        free(lw->ops[v].need);
        free(lw->ops[v].xfer);
    }
    free(lw->ops);
    free(lw->agg);
    free(lw->order);
    free(lw->pos);
    free(lw->recompute);
    free(lw->droppable);
    free(lw->host);
    free(lw->hstart);
    free(lw->hgroups);
    free(lw->dstart);
    free(lw->dops);
    free(lw->gstart);
    free(lw->gops);
    free(lw->stamp);
    hg__pipe_free(lw);
    hg__tp_free(lw);
    free(lw->cutn);
    free(lw->cutstamp);
    free(lw->cutwas);
    free(lw->cutchg);
    free(lw);
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

/* Droppable ops, their groups' hosts and the CSR lists.  An op is
 * droppable when it is a forward op whose output is an activation with a
 * batch axis that some backward op reads and every forward op reading it
 * is in its group (the group's inputs from other groups stay: they are its
 * checkpoints); the host is the earliest of those backward readers in the
 * order, and a droppable op must come before it.  They depend on the
 * grouping and the order, not on the configurations. */
static void recompute_plan(struct hg_lowered *lw, const struct hg_strategy *st)
{
    const struct hg_pgraph *pg = lw->pg;
    int N = lw->nops, G = st->ngroups;
    for (int v = 0; v < N; v++) {
        const struct hg_pop *o = &pg->ops[v];
        int ok = o->phase == HG_PH_FORWARD && o->out >= 0 && !o->out_grad && o->out_batch;
        int back = 0;
        for (int k = 0; k < o->ncons && ok; k++) {
            const struct hg_pop *w = &pg->ops[o->cons[k]];
            if (w->phase != HG_PH_FORWARD)
                back = 1;
            else if (st->group[o->cons[k]] != st->group[v])
                ok = 0;
        }
        lw->droppable[v] = ok && back;
    }
    for (int changed = 1; changed;) {
        for (int k = 0; k < G; k++)
            lw->host[k] = -1;
        for (int v = 0; v < N; v++) {
            if (!lw->droppable[v])
                continue;
            const struct hg_pop *o = &pg->ops[v];
            int *h = &lw->host[st->group[v]];
            for (int k = 0; k < o->ncons; k++) {
                int w = o->cons[k];
                if (pg->ops[w].phase != HG_PH_FORWARD && (*h < 0 || lw->pos[w] < lw->pos[*h]))
                    *h = w;
            }
        }
        changed = 0;
        for (int v = 0; v < N; v++)
            if (lw->droppable[v] && lw->pos[v] >= lw->pos[lw->host[st->group[v]]]) {
                lw->droppable[v] = 0;
                changed = 1;
            }
    }
    csr(N, lw->host, NULL, G, &lw->hstart, &lw->hgroups);
    int *dkey = malloc(((size_t)N + 1) * sizeof(int)); /* [nops] group if droppable */
    HG_CHECK(dkey != NULL);
    for (int v = 0; v < N; v++)
        dkey[v] = lw->droppable[v] ? st->group[v] : -1;
    csr(G, dkey, st->order, N, &lw->dstart, &lw->dops);
    free(dkey);
}

/* Op v's place bounds into the pieces' cuts (dir +1) or out (-1); in a
 * delta (stampv > 0) each row's presence before is kept the first time it
 * is touched, so hg_lower_group can tell which cuts came or went. */
static void count_cuts(struct hg_lowered *lw, int v, int dir, int stampv)
{
    const struct hg_lop *o = &lw->ops[v];
    if (lw->pg->ops[v].phase == HG_PH_UPDATE)
        return;
    for (int k = 0; k < o->nplace; k++)
        for (int e = 0; e < 2; e++) {
            int64_t x = e ? o->place[k].end : o->place[k].begin;
            if (stampv && lw->cutstamp[x] != stampv) {
                lw->cutstamp[x] = stampv;
                lw->cutwas[x] = lw->cutn[x] > 0;
                lw->cutchg = grow(lw->cutchg, lw->ncutchg, &lw->ccutchg, sizeof(*lw->cutchg));
                lw->cutchg[lw->ncutchg++] = x;
            }
            lw->cutn[x] += dir;
            HG_CHECK(lw->cutn[x] >= 0);
        }
}

/* Op v's replicas: devices in rank order, consecutive replica numbers. */
static void lower_place(struct hg_lowered *lw, const struct hg_strategy *st, int v)
{
    struct hg_lop *o = &lw->ops[v];
    const struct hg_gcfg *g = &st->cfg[st->group[v]];
    /* a tensor-parallel group is model parallel on its lead here: its
     * shards are tensor.c's */
    int mp = g->mode != HG_MODE_DP, R = 0;
    for (int d = 0; d < lw->ndev; d++)
        R += mp ? d == g->device : g->rep[d];
    HG_CHECK(R > 0 && lw->batch <= INT64_MAX / R);
    o->group = st->group[v];
    o->nrep = R;
    o->nplace = 0;
    for (int d = 0, j = 0; d < lw->ndev; d++) {
        int r = mp ? d == g->device : g->rep[d];
        if (r <= 0)
            continue;
        o->place = grow(o->place, o->nplace, &o->cplace, sizeof(*o->place));
        struct hg_lplace *p = &o->place[o->nplace++];
        p->dev = d;
        p->rep0 = j;
        p->nrep = r;
        p->begin = bound(lw->batch, R, j);
        j += r;
        p->end = bound(lw->batch, R, j);
    }
    o->rhost = lw->droppable[v] && g->recompute ? lw->host[o->group] : -1;
}

/* Does op w read op v's output by rows (its batch axis)? */
static int reads_rows(const struct hg_pop *w, int v)
{
    for (int i = 0; i < w->nin; i++)
        if (w->in[i].op == v && w->in[i].batch)
            return 1;
    return 0;
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Update op v's parameter where ops read it: the devices holding its new
 * value are the update's places (a server's parameter: the server and the
 * devices its pull reaches, the gradient op's); every other device with a
 * reader gets it whole from the first holder, after the update (hgtrain
 * sends it before the next step's ops). */
static void lower_param(struct hg_lowered *lw, int v)
{
    const struct hg_pop *po = &lw->pg->ops[v];
    struct hg_lop *o = &lw->ops[v];
    if (po->pidx < 0 || po->npreaders == 0 || o->nplace == 0)
        return;
    char hold[HG_PLAN_MAXDEV], need[HG_PLAN_MAXDEV]; /* [ndev] */
    memset(hold, 0, (size_t)lw->ndev);
    memset(need, 0, (size_t)lw->ndev);
    for (int i = 0; i < o->nplace; i++)
        hold[o->place[i].dev] = 1;
    const struct hg_lagg *a = &lw->agg[po->pidx];
    int src = o->place[0].dev;
    if (a->kind == HG_LAGG_PS) {
        hold[a->ps] = 1;
        src = a->ps;
        for (int i = 0; i < lw->ops[a->op].nplace; i++)
            hold[lw->ops[a->op].place[i].dev] = 1;
    }
    for (int k = 0; k < po->npreaders; k++) {
        const struct hg_lop *w = &lw->ops[po->preaders[k]];
        for (int i = 0; i < w->nplace; i++)
            need[w->place[i].dev] = !hold[w->place[i].dev];
    }
    for (int e = 0; e < lw->ndev; e++) {
        if (!need[e])
            continue;
        o->need = grow(o->need, o->nneed, &o->cneed, sizeof(*o->need));
        struct hg_lneed *n = &o->need[o->nneed++];
        *n = (struct hg_lneed){.dev = e, .begin = 0, .end = lw->batch, .xfer0 = o->nxfer,
                               .nxfer = 1, .concat = 1};
        o->xfer = grow(o->xfer, o->nxfer, &o->cxfer, sizeof(*o->xfer));
        o->xfer[o->nxfer++] = (struct hg_lxfer){src, e, 0, lw->batch, 0};
    }
}

/* Op v's needs and transfers, from its places and its consumers'. */
static void lower_out(struct hg_lowered *lw, int v)
{
    const struct hg_pop *po = &lw->pg->ops[v];
    struct hg_lop *o = &lw->ops[v];
    int nd = lw->ndev;
    int64_t B = lw->batch;
    o->nneed = o->nxfer = 0;
    if (po->out < 0) {
        lower_param(lw, v);
        return;
    }
    /* A sum over its rows (a bias gradient's SUM_TO, the loss) that is no
     * parameter's gradient: each place holds the partial of its rows, and
     * a consumer's rows need the partials of the places holding them, each
     * a whole tensor (the executor's pieces do that; a gradient's partials
     * are the aggregation's) */
    int red = 0;
    for (int i = 0; i < po->nin && !po->out_batch && !po->out_grad; i++)
        red |= po->in[i].batch;
    char need[HG_PLAN_MAXDEV];       /* [ndev] a consumer replica is there */
    int64_t lo[HG_PLAN_MAXDEV], hi[HG_PLAN_MAXDEV]; /* [ndev] the hull of their rows */
    memset(need, 0, (size_t)nd);
    for (int e = 0; e < nd; e++) {
        lo[e] = B;
        hi[e] = 0;
    }
    for (int k = 0; k < po->ncons; k++) {
        int w = po->cons[k];
        int rows = red || (po->out_batch && reads_rows(&lw->pg->ops[w], v));
        const struct hg_lop *ow = &lw->ops[w];
        for (int i = 0; i < ow->nplace; i++) {
            const struct hg_lplace *q = &ow->place[i];
            int64_t a = rows ? q->begin : 0, b = rows ? q->end : B;
            need[q->dev] = 1;
            if (b > a) { /* a replica without rows reads nothing */
                lo[q->dev] = min64(lo[q->dev], a);
                hi[q->dev] = max64(hi[q->dev], b);
            }
        }
    }
    int pi = 0; /* the producer's place on e, if any: places ascend by device */
    for (int e = 0; e < nd; e++) {
        while (pi < o->nplace && o->place[pi].dev < e)
            pi++;
        if (!need[e])
            continue;
        const struct hg_lplace *mine = pi < o->nplace && o->place[pi].dev == e ? &o->place[pi]
                                                                                : NULL;
        o->need = grow(o->need, o->nneed, &o->cneed, sizeof(*o->need));
        struct hg_lneed *n = &o->need[o->nneed++];
        memset(n, 0, sizeof(*n));
        n->dev = e;
        n->begin = lo[e] < hi[e] ? lo[e] : 0;
        n->end = lo[e] < hi[e] ? hi[e] : 0;
        n->xfer0 = o->nxfer;
        if (!po->out_batch && !red) { /* whole: made here, or from the first device */
            n->begin = 0;
            n->end = B;
            if (mine) {
                n->lend = B;
            } else {
                o->xfer = grow(o->xfer, o->nxfer, &o->cxfer, sizeof(*o->xfer));
                o->xfer[o->nxfer++] = (struct hg_lxfer){o->place[0].dev, e, 0, B, 0};
            }
        } else {
            if (mine) {
                n->lbegin = max64(mine->begin, n->begin);
                n->lend = min64(mine->end, n->end);
                if (n->lend <= n->lbegin)
                    n->lbegin = n->lend = 0;
            }
            /* places ascend by rows as by device: the overlapping ones are
             * consecutive, from the first that ends after the need begins
             * (a scan of every place for every need is quadratic in the
             * devices: 1024 GPUs) */
            int lo_i = 0, hi_i = o->nplace;
            while (lo_i < hi_i) {
                int mid = lo_i + (hi_i - lo_i) / 2;
                if (o->place[mid].end > n->begin)
                    hi_i = mid;
                else
                    lo_i = mid + 1;
            }
            for (int i = lo_i; i < o->nplace && o->place[i].begin < n->end; i++) {
                const struct hg_lplace *p = &o->place[i];
                int64_t a = max64(p->begin, n->begin), b = min64(p->end, n->end);
                if (p->dev == e || b <= a)
                    continue;
                o->xfer = grow(o->xfer, o->nxfer, &o->cxfer, sizeof(*o->xfer));
                o->xfer[o->nxfer++] =
                    (struct hg_lxfer){p->dev, e, a, b, a > p->begin || b < p->end};
            }
        }
        n->nxfer = o->nxfer - n->xfer0;
        n->concat = (n->lend > n->lbegin) + n->nxfer;
    }
}

/* Parameter i's aggregation, from the places of the op writing its gradient. */
static void lower_agg(struct hg_lowered *lw, const struct hg_strategy *st, int i)
{
    struct hg_lagg *a = &lw->agg[i];
    a->kind = HG_LAGG_NONE;
    a->ps = -1;
    if (a->op < 0 || lw->ops[a->op].nplace < 2)
        return;
    const struct hg_lop *o = &lw->ops[a->op];
    const struct hg_gcfg *g = &st->cfg[o->group];
    HG_CHECK(g->mode == HG_MODE_DP);
    if (g->agg == HG_AGG_PS) {
        a->kind = HG_LAGG_PS;
        a->ps = g->ps;
        return;
    }
    int devs[HG_PLAN_MAXDEV]; /* [nplace] the ring, in rank order */
    for (int k = 0; k < o->nplace; k++)
        devs[k] = o->place[k].dev;
    a->kind = hg_cost_allreduce_hier_cheaper(lw->pg->c, devs, o->nplace,
                                             (double)lw->pg->ops[a->op].out_bytes)
                  ? HG_LAGG_HIER : HG_LAGG_RING;
}

int hg_lower_full(struct hg_lowered *lw, const struct hg_strategy *st, char *err,
                  size_t errlen)
{
    if (hg_strategy_check(st, lw->pg, err, errlen) != 0)
        return -1;
    int N = lw->nops, G = st->ngroups;
    if (G != lw->ngroups) {
        free(lw->recompute);
        free(lw->host);
        lw->recompute = malloc(((size_t)G + 1) * sizeof(int));
        lw->host = malloc(((size_t)G + 1) * sizeof(int));
        HG_CHECK(lw->recompute && lw->host);
        lw->ngroups = G;
    }
    memcpy(lw->order, st->order, (size_t)N * sizeof(int));
    for (int p = 0; p < N; p++)
        lw->pos[st->order[p]] = p;
    for (int k = 0; k < G; k++)
        lw->recompute[k] = st->cfg[k].recompute;
    csr(G, st->group, NULL, N, &lw->gstart, &lw->gops);
    recompute_plan(lw, st);
    memset(lw->cutn, 0, ((size_t)lw->batch + 1) * sizeof(int));
    lw->ncutchg = 0;
    for (int v = 0; v < N; v++) {
        lower_place(lw, st, v);
        count_cuts(lw, v, 1, 0);
    }
    for (int i = 0; i < lw->pg->nparams; i++) /* before the outputs: a server's pull */
        lower_agg(lw, st, i);
    for (int v = 0; v < N; v++)
        lower_out(lw, v);
    if (hg__tp_lower(lw, st, err, errlen) != 0)
        return -1;
    return hg__pipe_lower(lw, st, err, errlen);
}

int hg_lower_group(struct hg_lowered *lw, const struct hg_strategy *st, int g, int *changed)
{
    HG_CHECK(g >= 0 && g < lw->ngroups && st->ngroups == lw->ngroups && st->nops == lw->nops);
    lw->recompute[g] = st->cfg[g].recompute;
    if (++lw->stampv == INT32_MAX) {
        memset(lw->stamp, 0, (size_t)lw->nops * sizeof(int));
        memset(lw->cutstamp, 0, ((size_t)lw->batch + 1) * sizeof(int));
        lw->stampv = 1;
    }
    int n = 0;
    lw->ncutchg = 0;
    for (int i = lw->gstart[g]; i < lw->gstart[g + 1]; i++) {
        int v = lw->gops[i];
        HG_CHECK(st->group[v] == g);
        count_cuts(lw, v, -1, lw->stampv);
        lower_place(lw, st, v);
        count_cuts(lw, v, 1, lw->stampv);
    }
    /* keep only the rows whose cut came or went */
    int nc = 0;
    for (int i = 0; i < lw->ncutchg; i++) {
        int64_t x = lw->cutchg[i];
        if ((lw->cutn[x] > 0) != lw->cutwas[x])
            lw->cutchg[nc++] = x;
    }
    lw->ncutchg = nc;
    for (int i = lw->gstart[g]; i < lw->gstart[g + 1]; i++)
        if (lw->ops[lw->gops[i]].agg >= 0)
            lower_agg(lw, st, lw->ops[lw->gops[i]].agg);
    /* the outputs of g's ops and of their producers (whose consumers moved) */
    for (int i = lw->gstart[g]; i < lw->gstart[g + 1]; i++) {
        int v = lw->gops[i];
        const struct hg_pop *o = &lw->pg->ops[v];
        for (int k = -1; k < o->nin; k++) {
            int u = k < 0 ? v : o->in[k].op;
            if (u >= 0 && lw->stamp[u] != lw->stampv) {
                lw->stamp[u] = lw->stampv;
                changed[n++] = u;
                lower_out(lw, u);
            }
        }
        /* where the parameters it reads are updated: their transfers (and
         * a server's pull to a gradient op's places) */
        int nu = o->nparams + (lw->ops[v].agg >= 0);
        for (int k = 0; k < nu; k++) {
            int i = k < o->nparams ? lw->pg->param_idx[o->params[k]] : lw->ops[v].agg;
            int u = i >= 0 ? lw->pg->upd_op[i] : -1;
            if (u >= 0 && lw->stamp[u] != lw->stampv) {
                lw->stamp[u] = lw->stampv;
                changed[n++] = u;
                lower_out(lw, u);
            }
        }
    }
    /* the tensor-parallel layer again, whole (the simulator simulates a
     * change that involves it in full); a refusal would have come from
     * the full lowering of a strategy of the same grouping and flags */
    char err[256];
    if (hg__tp_lower(lw, st, err, sizeof err) != 0)
        hg_check_failed(__FILE__, __LINE__, err);
    return n;
}

static void print_rows(FILE *f, int64_t a, int64_t b)
{
    fprintf(f, "%lld-%lld", (long long)a, (long long)b);
}

int hg_lower_print(const struct hg_lowered *lw, FILE *f)
{
    const struct hg_pgraph *pg = lw->pg;
    const struct hg_cluster *c = pg->c;
    fprintf(f, "lowered %s, batch %lld rows, on %s: %d ops, %d devices, %d groups\n",
            pg->model, (long long)lw->batch, c->name, lw->nops, lw->ndev, lw->ngroups);
    for (int v = 0; v < lw->nops; v++) {
        const struct hg_lop *o = &lw->ops[v];
        fprintf(f, "op %d %s (group %d): %d replica%s:", v, hg_op_table[pg->ops[v].kind].name,
                o->group, o->nrep, o->nrep == 1 ? "" : "s");
        for (int i = 0; i < o->nplace; i++) {
            const struct hg_lplace *p = &o->place[i];
            fprintf(f, " %s x%d rows ", c->devices[p->dev].name, p->nrep);
            print_rows(f, p->begin, p->end);
        }
        if (o->rhost >= 0)
            fprintf(f, "; recomputed before op %d", o->rhost);
        fprintf(f, "\n");
        for (int i = 0; i < o->nneed; i++) {
            const struct hg_lneed *n = &o->need[i];
            fprintf(f, "  to %s rows ", c->devices[n->dev].name);
            print_rows(f, n->begin, n->end);
            if (n->lend > n->lbegin) {
                fprintf(f, ": local ");
                print_rows(f, n->lbegin, n->lend);
            }
            for (int k = 0; k < n->nxfer; k++) {
                const struct hg_lxfer *x = &o->xfer[n->xfer0 + k];
                fprintf(f, "%s from %s ", n->lend > n->lbegin || k ? "," : ":",
                        c->devices[x->src].name);
                print_rows(f, x->begin, x->end);
                fprintf(f, "%s", x->split ? " (split)" : "");
            }
            fprintf(f, "%s\n", n->concat > 1 ? " (concat)" : "");
        }
    }
    for (int i = 0; i < pg->nparams; i++) {
        const struct hg_lagg *a = &lw->agg[i];
        fprintf(f, "param %d (tensor %d): ", i, a->param);
        if (a->op < 0) {
            fprintf(f, "no gradient op\n");
            continue;
        }
        const struct hg_lop *o = &lw->ops[a->op];
        fprintf(f, "gradient by op %d on %d device%s, %s", a->op, o->nplace,
                o->nplace == 1 ? "" : "s", hg_lagg_kind_name(a->kind));
        if (a->kind == HG_LAGG_PS)
            fprintf(f, " on %s", c->devices[a->ps].name);
        fprintf(f, "\n");
    }
    fprintf(f, "order:");
    for (int p = 0; p < lw->nops; p++)
        fprintf(f, "%s%d", p % 20 ? " " : "\n   ", lw->order[p]);
    fprintf(f, "\n");
    return ferror(f) ? -1 : 0;
}

struct hg_strategy *hg_lower_keep(const struct hg_pgraph *pg, struct hg_strategy *st, char *err,
                                  size_t errlen)
{
    struct hg_lowered *lw = hg_lower_new(pg);
    if (hg_lower_full(lw, st, err, errlen) != 0) {
        hg_strategy_free(st);
        st = NULL;
    }
    hg_lower_free(lw);
    return st;
}
