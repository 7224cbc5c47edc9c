/* test_lower.c - the lowering of strategies (planner/lower.c), checked row
 * by row against what the strategy says, on hand-made cases and on random
 * valid strategies (seeded) over HeteroG's models and the mnist, bert and
 * translation tasks' training graphs: every op's replicas cover the batch
 * exactly once, on the devices the strategy gives and nowhere else; every
 * device that reads an op's output gets each row it needs exactly once
 * (made there or brought by one transfer from a device that made it);
 * every parameter has exactly one aggregation; lowering a changed group
 * again equals lowering the whole strategy; a strategy loads and lowers on
 * a cluster that cannot be priced. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "planner/hg_planner.h"
#include "tasks/hg_task.h"
#include "tests/hg_test.h"
#include "tests/task_graphs.h"

static uint64_t rnd(uint64_t *x)
{
    return hg_rand(x);
}

/* ------------------------------------------------------------ the checks */

/* Replica j of R over B rows starts here (what the header promises,
 * computed here on its own). */
static int64_t first_row(int64_t B, int64_t R, int64_t j)
{
    return j * B / R;
}

/* The replicas op v should have on device d under st. */
static int want_rep(const struct hg_strategy *st, int v, int d)
{
    const struct hg_gcfg *g = &st->cfg[st->group[v]];
    return g->mode == HG_MODE_MP ? d == g->device : g->rep[d];
}

static int reads_rows(const struct hg_pop *w, int v)
{
    for (int i = 0; i < w->nin; i++)
        if (w->in[i].op == v && w->in[i].batch)
            return 1;
    return 0;
}

static const struct hg_lplace *place_on(const struct hg_lop *o, int d)
{
    for (int i = 0; i < o->nplace; i++)
        if (o->place[i].dev == d)
            return &o->place[i];
    return NULL;
}

/* Checks lw against st; returns the failures found (at most a few are
 * reported per call). */
static int check(const struct hg_lowered *lw, const struct hg_strategy *st, const char *what)
{
    const struct hg_pgraph *pg = lw->pg;
    int64_t B = lw->batch;
    int nd = lw->ndev, bad = 0;
    int *cnt = calloc((size_t)B + 1, sizeof(int)); /* [B] times each row is there */
    int *seen = calloc((size_t)pg->ntensors + 1, sizeof(int)); /* [ntensors] params met */
    REQUIRE(cnt && seen, "calloc");
#define CHECK(cond, ...)                                                                  \
    do {                                                                                  \
        if (!(cond) && bad++ < 3)                                                         \
            EXPECT(cond, __VA_ARGS__);                                                    \
    } while (0)
    for (int p = 0; p < lw->nops; p++)
        CHECK(lw->order[p] == st->order[p] && lw->pos[st->order[p]] == p,
              "%s: order at %d", what, p);
    for (int v = 0; v < lw->nops; v++) {
        const struct hg_lop *o = &lw->ops[v];
        /* replicas: the strategy's devices in order, consecutive numbers,
         * every row once */
        int R = 0, k = 0;
        for (int d = 0; d < nd; d++)
            R += want_rep(st, v, d);
        CHECK(o->group == st->group[v] && o->nrep == R, "%s: op %d: group %d, %d replicas, "
              "want %d, %d", what, v, o->group, o->nrep, st->group[v], R);
        memset(cnt, 0, (size_t)B * sizeof(int));
        int j = 0;
        for (int d = 0; d < nd; d++) {
            int r = want_rep(st, v, d);
            if (r <= 0) {
                CHECK(!place_on(o, d), "%s: op %d on %s without a replica", what, v,
                      pg->c->devices[d].name);
                continue;
            }
            const struct hg_lplace *p = k < o->nplace ? &o->place[k] : NULL;
            k++;
            CHECK(p && p->dev == d && p->nrep == r && p->rep0 == j,
                  "%s: op %d: place %d is not %d replicas on %s", what, v, k - 1, r,
                  pg->c->devices[d].name);
            if (!p || p->dev != d)
                continue;
            CHECK(p->begin == first_row(B, R, j) && p->end == first_row(B, R, j + r),
                  "%s: op %d on %s: rows %lld-%lld, want %lld-%lld", what, v,
                  pg->c->devices[d].name, (long long)p->begin, (long long)p->end,
                  (long long)first_row(B, R, j), (long long)first_row(B, R, j + r));
            /* each replica floor(B/R) or ceil(B/R) rows; the device within
             * one row of its share */
            for (int i = 0; i < r && i < 4; i++) {
                int64_t n = first_row(B, R, j + i + 1) - first_row(B, R, j + i);
                CHECK(n == B / R || n == (B + R - 1) / R, "%s: op %d: replica %d has %lld "
                      "rows of %lld over %d", what, v, j + i, (long long)n, (long long)B, R);
            }
            double share = (double)B * r / R, rows = (double)(p->end - p->begin);
            CHECK(rows > share - 1 && rows < share + 1, "%s: op %d on %s: %g rows for a "
                  "share of %g", what, v, pg->c->devices[d].name, rows, share);
            for (int64_t x = p->begin; x < p->end; x++)
                cnt[x]++;
            j += r;
        }
        CHECK(k == o->nplace, "%s: op %d: %d places, want %d", what, v, o->nplace, k);
        for (int64_t x = 0; x < B; x++)
            CHECK(cnt[x] == 1, "%s: op %d: row %lld computed %d times", what, v, (long long)x,
                  cnt[x]);
        /* recomputation: only where the group asks, before a backward reader */
        if (o->rhost >= 0) {
            /* the group's host: a backward op, after v and not after v's
             * own backward readers */
            int early = 1;
            for (int i = 0; i < pg->ops[v].ncons; i++) {
                int w = pg->ops[v].cons[i];
                early &= pg->ops[w].phase == HG_PH_FORWARD || lw->pos[o->rhost] <= lw->pos[w];
            }
            CHECK(st->cfg[st->group[v]].recompute && early && o->rhost == lw->host[o->group] &&
                  pg->ops[o->rhost].phase != HG_PH_FORWARD && lw->pos[v] < lw->pos[o->rhost],
                  "%s: op %d recomputed before op %d", what, v, o->rhost);
        } else if (!st->cfg[st->group[v]].recompute) {
            CHECK(o->rhost < 0, "%s: op %d recomputed in a group without recompute", what, v);
        }
    }
    /* outputs: the devices that read them, each row once */
    for (int v = 0; v < lw->nops; v++) {
        const struct hg_pop *po = &pg->ops[v];
        const struct hg_lop *o = &lw->ops[v];
        if (po->out < 0) {
            /* an update op: its parameter, whole, to every device reading
             * it that holds no updated copy (its places; a server's: the
             * server and the gradient op's places) */
            char hold[HG_PLAN_MAXDEV] = {0}, rd[HG_PLAN_MAXDEV] = {0};
            for (int q = 0; q < o->nplace; q++)
                hold[o->place[q].dev] = 1;
            const struct hg_lagg *ag = po->pidx >= 0 ? &lw->agg[po->pidx] : NULL;
            if (ag && ag->kind == HG_LAGG_PS) {
                hold[ag->ps] = 1;
                for (int q = 0; q < lw->ops[ag->op].nplace; q++)
                    hold[lw->ops[ag->op].place[q].dev] = 1;
            }
            for (int i = 0; i < po->npreaders && po->pidx >= 0 && o->nplace; i++) {
                const struct hg_lop *w = &lw->ops[po->preaders[i]];
                for (int q = 0; q < w->nplace; q++)
                    rd[w->place[q].dev] = !hold[w->place[q].dev];
            }
            int ne = 0;
            for (int e = 0; e < nd; e++) {
                if (!rd[e])
                    continue;
                const struct hg_lneed *n = ne < o->nneed ? &o->need[ne] : NULL;
                ne++;
                CHECK(n && n->dev == e && n->nxfer == 1 && o->xfer[n->xfer0].dst == e &&
                          hold[o->xfer[n->xfer0].src] && o->xfer[n->xfer0].begin == 0 &&
                          o->xfer[n->xfer0].end == B,
                      "%s: update op %d: its parameter not sent whole to %s, which reads it",
                      what, v, pg->c->devices[e].name);
            }
            CHECK(ne == o->nneed && o->nxfer == ne, "%s: update op %d: %d needs, %d "
                  "transfers, want %d", what, v, o->nneed, o->nxfer, ne);
            continue;
        }
        /* a sum over its rows that is no gradient: partials by rows */
        int red = 0;
        for (int i = 0; i < po->nin && !po->out_batch && !po->out_grad; i++)
            red |= po->in[i].batch;
        int byrows = po->out_batch || red;
        char reader[HG_PLAN_MAXDEV] = {0};
        for (int i = 0; i < po->ncons; i++) {
            const struct hg_lop *w = &lw->ops[po->cons[i]];
            for (int q = 0; q < w->nplace; q++)
                reader[w->place[q].dev] = 1;
        }
        int ni = 0, nx = 0;
        for (int e = 0; e < nd; e++) {
            if (!reader[e])
                continue;
            const struct hg_lneed *n = ni < o->nneed ? &o->need[ni] : NULL;
            ni++;
            CHECK(n && n->dev == e, "%s: op %d: no need on %s, which reads it", what, v,
                  pg->c->devices[e].name);
            if (!n || n->dev != e)
                continue;
            CHECK(n->xfer0 == nx, "%s: op %d: transfers of %s start at %d, want %d", what, v,
                  pg->c->devices[e].name, n->xfer0, nx);
            nx += n->nxfer;
            memset(cnt, 0, (size_t)B * sizeof(int));
            const struct hg_lplace *mine = place_on(o, e);
            int64_t lb = 0, le = 0;
            if (mine) {
                lb = byrows ? (mine->begin > n->begin ? mine->begin : n->begin) : 0;
                le = byrows ? (mine->end < n->end ? mine->end : n->end) : B;
                if (le <= lb)
                    lb = le = 0;
            }
            CHECK(n->lbegin == lb && n->lend == le, "%s: op %d on %s: local %lld-%lld, want "
                  "%lld-%lld", what, v, pg->c->devices[e].name, (long long)n->lbegin,
                  (long long)n->lend, (long long)lb, (long long)le);
            for (int64_t x = lb; x < le; x++)
                cnt[x]++;
            for (int i = 0; i < n->nxfer && n->xfer0 + i < o->nxfer; i++) {
                const struct hg_lxfer *x = &o->xfer[n->xfer0 + i];
                const struct hg_lplace *src = place_on(o, x->src);
                CHECK(x->dst == e && x->src != e && src, "%s: op %d: a transfer %d -> %d to "
                      "%s", what, v, x->src, x->dst, pg->c->devices[e].name);
                if (!src)
                    continue;
                int64_t sb = byrows ? src->begin : 0, se = byrows ? src->end : B;
                CHECK(x->begin >= sb && x->end <= se && x->begin < x->end,
                      "%s: op %d: %s sends rows %lld-%lld it does not hold", what, v,
                      pg->c->devices[x->src].name, (long long)x->begin, (long long)x->end);
                CHECK(x->split == (x->begin > sb || x->end < se), "%s: op %d: split flag",
                      what, v);
                if (!byrows)
                    CHECK(x->src == o->place[0].dev, "%s: op %d: a whole tensor from %s, not "
                          "the first device", what, v, pg->c->devices[x->src].name);
                for (int64_t r = x->begin; r < x->end && r < B; r++)
                    cnt[r]++;
            }
            CHECK(n->concat == (le > lb) + n->nxfer, "%s: op %d: concat %d", what, v,
                  n->concat);
            for (int64_t x = 0; x < B; x++) {
                int in = x >= n->begin && x < n->end;
                CHECK(cnt[x] == in, "%s: op %d: row %lld is on %s %d times (needed: %d)", what,
                      v, (long long)x, pg->c->devices[e].name, cnt[x], in);
            }
            /* every consumer replica's rows are among them */
            for (int i = 0; i < po->ncons; i++) {
                int w = po->cons[i];
                const struct hg_lplace *q = place_on(&lw->ops[w], e);
                if (!q)
                    continue;
                int rows = red || (po->out_batch && reads_rows(&pg->ops[w], v));
                int64_t a = rows ? q->begin : 0, b = rows ? q->end : B;
                CHECK(a >= b || (a >= n->begin && b <= n->end), "%s: op %d reads rows "
                      "%lld-%lld of op %d on %s, which has %lld-%lld", what, w, (long long)a,
                      (long long)b, v, pg->c->devices[e].name, (long long)n->begin,
                      (long long)n->end);
            }
        }
        CHECK(ni == o->nneed && nx == o->nxfer, "%s: op %d: %d needs and %d transfers, want "
              "%d and %d", what, v, o->nneed, o->nxfer, ni, nx);
    }
    /* aggregations: one per parameter, over the gradient op's devices */
    for (int i = 0; i < pg->nparams; i++) {
        const struct hg_lagg *a = &lw->agg[i];
        CHECK(a->param == pg->param[i] && !seen[a->param], "%s: param %d: tensor %d twice",
              what, i, a->param);
        seen[a->param] = 1;
        CHECK(a->grad == pg->param_grad[i] && a->op == pg->grad_op[i] &&
              (a->op < 0 || lw->ops[a->op].agg == i), "%s: param %d: gradient op %d", what, i,
              a->op);
        int n = a->op >= 0 ? lw->ops[a->op].nplace : 0;
        const struct hg_gcfg *g = a->op >= 0 ? &st->cfg[st->group[a->op]] : NULL;
        if (n < 2)
            CHECK(a->kind == HG_LAGG_NONE, "%s: param %d: %s over %d device", what, i,
                  hg_lagg_kind_name(a->kind), n);
        else if (g->agg == HG_AGG_PS)
            CHECK(a->kind == HG_LAGG_PS && a->ps == g->ps, "%s: param %d: %s, want ps", what,
                  i, hg_lagg_kind_name(a->kind));
        else
            CHECK(a->kind == HG_LAGG_RING || a->kind == HG_LAGG_HIER, "%s: param %d: %s, want "
                  "allreduce", what, i, hg_lagg_kind_name(a->kind));
    }
    for (int v = 0; v < lw->nops; v++)
        if (pg->ops[v].out_grad)
            CHECK(lw->ops[v].agg >= 0 && lw->agg[lw->ops[v].agg].op == v,
                  "%s: op %d writes a gradient without an aggregation", what, v);
#undef CHECK
    free(cnt);
    free(seen);
    return bad;
}

/* a and b lowered the same (field by field: padding is not data) */
static int same(const struct hg_lowered *a, const struct hg_lowered *b)
{
    for (int v = 0; v < a->nops; v++) {
        const struct hg_lop *x = &a->ops[v], *y = &b->ops[v];
        if (x->group != y->group || x->nrep != y->nrep || x->nplace != y->nplace ||
            x->nneed != y->nneed || x->nxfer != y->nxfer || x->agg != y->agg ||
            x->rhost != y->rhost)
            return 0;
        for (int i = 0; i < x->nplace; i++) {
            const struct hg_lplace *p = &x->place[i], *q = &y->place[i];
            if (p->dev != q->dev || p->rep0 != q->rep0 || p->nrep != q->nrep ||
                p->begin != q->begin || p->end != q->end)
                return 0;
        }
        for (int i = 0; i < x->nneed; i++) {
            const struct hg_lneed *p = &x->need[i], *q = &y->need[i];
            if (p->dev != q->dev || p->begin != q->begin || p->end != q->end ||
                p->lbegin != q->lbegin || p->lend != q->lend || p->xfer0 != q->xfer0 ||
                p->nxfer != q->nxfer || p->concat != q->concat)
                return 0;
        }
        for (int i = 0; i < x->nxfer; i++) {
            const struct hg_lxfer *p = &x->xfer[i], *q = &y->xfer[i];
            if (p->src != q->src || p->dst != q->dst || p->begin != q->begin ||
                p->end != q->end || p->split != q->split)
                return 0;
        }
    }
    for (int i = 0; i < a->pg->nparams; i++) {
        const struct hg_lagg *p = &a->agg[i], *q = &b->agg[i];
        if (p->param != q->param || p->grad != q->grad || p->op != q->op ||
            p->kind != q->kind || p->ps != q->ps)
            return 0;
    }
    for (int k = 0; k < a->ngroups; k++)
        if (a->recompute[k] != b->recompute[k] || a->host[k] != b->host[k])
            return 0;
    return 1;
}

/* ------------------------------------------------------------ strategies */

static void random_cfg(struct hg_gcfg *g, int nd, uint64_t *rng)
{
    memset(g, 0, sizeof(*g));
    if (rnd(rng) % 6 == 0) {
        hg_gcfg_mp(g, (int)(rnd(rng) % (uint64_t)nd));
    } else {
        g->mode = HG_MODE_DP;
        g->agg = rnd(rng) & 1 ? HG_AGG_PS : HG_AGG_AR;
        int tot = 0;
        for (int d = 0; d < nd; d++) {
            uint64_t r = rnd(rng) % 16;
            /* zero replicas often, many (more than the batch's rows) now and then */
            g->rep[d] = r < 5 ? 0 : r == 15 ? 1 + (int)(rnd(rng) % HG_PLAN_MAXREP) : (int)(r % 5);
            tot += g->rep[d];
        }
        if (tot == 0)
            g->rep[rnd(rng) % (uint64_t)nd] = 1 + (int)(rnd(rng) % 3);
        g->ps = (int)(rnd(rng) % (uint64_t)nd);
    }
    g->recompute = rnd(rng) % 3 == 0;
}

/* Random groups (blocks of consecutive ops or scattered), configurations
 * and a random topological order. */
static struct hg_strategy *random_strategy(const struct hg_pgraph *pg, uint64_t *rng)
{
    int N = pg->nops, nd = pg->ndev;
    int G = 1 + (int)(rnd(rng) % 12);
    struct hg_strategy *s = hg_strategy_new(N, nd, G);
    int blocks = rnd(rng) & 1;
    for (int v = 0; v < N; v++)
        s->group[v] = blocks ? (int)((int64_t)v * G / N) : (int)(rnd(rng) % (uint64_t)G);
    for (int k = 0; k < G; k++)
        random_cfg(&s->cfg[k], nd, rng);
    hg_strategy_random_order(s, pg, rnd(rng));
    return s;
}

/* nstrat random strategies lowered and checked; on the first, ndelta
 * random one-group changes lowered again and compared with a whole
 * lowering. */
static void random_cases(const struct hg_pgraph *pg, const char *name, uint64_t seed,
                         int nstrat, int ndelta)
{
    char err[512], what[128];
    uint64_t rng = seed;
    struct hg_lowered *lw = hg_lower_new(pg), *ref = hg_lower_new(pg);
    int *changed = malloc(((size_t)pg->nops + 1) * sizeof(int));
    REQUIRE(changed != NULL, "malloc");
    int bad = 0;
    for (int i = 0; i < nstrat; i++) {
        struct hg_strategy *s = random_strategy(pg, &rng);
        snprintf(what, sizeof(what), "%s (seed %llu, strategy %d)", name,
                 (unsigned long long)seed, i);
        REQUIRE(hg_lower_full(lw, s, err, sizeof(err)) == 0, "%s: %s", what, err);
        bad += check(lw, s, what);
        for (int t = 0; i == 0 && t < ndelta; t++) {
            int k = (int)(rnd(&rng) % (uint64_t)s->ngroups);
            random_cfg(&s->cfg[k], pg->ndev, &rng);
            int n = hg_lower_group(lw, s, k, changed);
            REQUIRE(hg_lower_full(ref, s, err, sizeof(err)) == 0, "%s", err);
            EXPECT(n > 0 && same(lw, ref), "%s: change %d (group %d): lowering the group "
                   "again differs from lowering it all", what, t, k);
            if (t % 8 == 0)
                bad += check(lw, s, what);
        }
        hg_strategy_free(s);
    }
    printf("%s: %d ops, %d params, %d random strategies on %d devices: %s\n", name, pg->nops,
           pg->nparams, nstrat, pg->ndev, bad ? "FAILED" : "ok");
    free(changed);
    hg_lower_free(lw);
    hg_lower_free(ref);
}

/* ------------------------------------------------------------ cases */

static const char two_cpu[] =
    "nodes = ({ name = \"n\"; devices = ({ kind = \"cpu\"; count = 2; memory = \"1GiB\";"
    " peak_flops = \"1TFLOP/s\"; });"
    " intra = { kind = \"shm\"; bandwidth = \"10GB/s\"; latency = \"1us\"; }; });";

static struct hg_graph *linear_train(int64_t B)
{
    struct hg_graph *g = hg_graph_new();
    int64_t xd[2] = {B, 16};
    int x = hg_graph_input(g, "x", HG_F32, 2, xd, 0);
    int y = hg_graph_input(g, "y", HG_I32, 1, &B, 0);
    int64_t wd[2] = {16, 4};
    int w = hg_graph_param(g, "w", 2, wd, HG_INIT_UNIFORM, 0.1f);
    int64_t ud[2] = {3, 3};
    hg_graph_param(g, "unused", 2, ud, HG_INIT_UNIFORM, 0.1f);
    int loss = hg_cross_entropy(g, hg_relu(g, hg_matmul(g, x, w, 0, 0)), y, -100, 0.f);
    hg_graph_backward(g, loss);
    union hg_attr h = {0};
    h.sgd.momentum = 0.9f;
    hg_graph_optimizer(g, HG_OPTIM_SGD, &h);
    return g;
}

static void test_bounds(void)
{
    int64_t want[] = {0, 3, 6, 10};
    for (int j = 0; j <= 3; j++)
        EXPECT(hg_lower_bound(10, 3, j) == want[j], "10 rows over 3: bound %d = %lld", j,
               (long long)hg_lower_bound(10, 3, j));
    /* more replicas than rows: some get none, the rows still add up */
    int64_t sum = 0, empty = 0;
    for (int j = 0; j < 8; j++) {
        int64_t n = hg_lower_bound(5, 8, j + 1) - hg_lower_bound(5, 8, j);
        EXPECT(n == 0 || n == 1, "5 rows over 8: replica %d has %lld", j, (long long)n);
        sum += n;
        empty += n == 0;
    }
    EXPECT(sum == 5 && empty == 3, "5 rows over 8: %lld rows, %lld empty", (long long)sum,
           (long long)empty);
    EXPECT(hg_lower_bound(1000, HG_PLAN_MAXREP * 4, HG_PLAN_MAXREP * 4) == 1000, "the end");
}

/* A matmul DP with 2 + 1 replicas on two CPUs, its relu MP on device 1:
 * device 1 joins its own rows and device 0's (concat); the relu MP on
 * device 0 and the loss DP even: device 1 gets a split of device 0's rows. */
static void test_hand(void)
{
    struct hg_cluster *c = parse(two_cpu);
    struct hg_graph *g = linear_train(10);
    struct hg_pgraph *pg = pgraph(g, c, 10);
    int mm = -1, relu = -1;
    for (int v = 0; v < pg->nops; v++) {
        if (pg->ops[v].kind == HG_OP_MATMUL && pg->ops[v].phase == HG_PH_FORWARD)
            mm = v;
        if (pg->ops[v].kind == HG_OP_RELU && pg->ops[v].phase == HG_PH_FORWARD)
            relu = v;
    }
    REQUIRE(mm >= 0 && relu >= 0, "matmul %d relu %d", mm, relu);
    struct hg_strategy *s = hg_strategy_new(pg->nops, pg->ndev, 3);
    for (int v = 0; v < pg->nops; v++)
        s->group[v] = v == mm ? 1 : v == relu ? 2 : 0;
    hg_gcfg_even(&s->cfg[0], c, HG_AGG_AR);
    hg_gcfg_even(&s->cfg[1], c, HG_AGG_PS);
    s->cfg[1].rep[0] = 2;
    hg_gcfg_mp(&s->cfg[2], 1);
    struct hg_lowered *lw = hg_lower_new(pg);
    char err[512];
    REQUIRE(hg_lower_full(lw, s, err, sizeof(err)) == 0, "%s", err);
    check(lw, s, "hand 1");
    const struct hg_lop *o = &lw->ops[mm];
    EXPECT(o->nrep == 3 && o->nplace == 2 && o->place[0].begin == 0 && o->place[0].end == 6 &&
           o->place[1].begin == 6 && o->place[1].end == 10, "matmul rows");
    /* (device 0 reads it too: the backward, even over both) */
    const struct hg_lneed *n = o->nneed == 2 ? &o->need[1] : NULL;
    const struct hg_lxfer *x = n && n->nxfer == 1 ? &o->xfer[n->xfer0] : NULL;
    EXPECT(n && x && n->dev == 1 && n->begin == 0 && n->end == 10 && n->lbegin == 6 &&
           n->lend == 10 && n->concat == 2 && x->src == 0 && x->begin == 0 && x->end == 6 &&
           !x->split, "matmul -> relu on device 1: local 6-10 and 0-6 from device 0, concat");
    hg_gcfg_mp(&s->cfg[2], 0);
    hg_gcfg_even(&s->cfg[0], c, HG_AGG_AR);
    REQUIRE(hg_lower_full(lw, s, err, sizeof(err)) == 0, "%s", err);
    check(lw, s, "hand 2");
    o = &lw->ops[relu];
    int found = 0;
    for (int i = 0; i < o->nneed; i++)
        if (o->need[i].dev == 1) {
            const struct hg_lxfer *x = &o->xfer[o->need[i].xfer0];
            found = o->need[i].nxfer == 1 && x->src == 0 && x->begin == 5 && x->end == 10 &&
                    x->split && o->need[i].concat == 1;
        }
    EXPECT(found, "relu on device 0 -> loss on both: rows 5-10 split off to device 1");
    /* the weight's gradient: AllReduce over both; the unused param: nothing */
    int aggs = 0, none = 0;
    for (int i = 0; i < pg->nparams; i++) {
        aggs += lw->agg[i].kind == HG_LAGG_RING || lw->agg[i].kind == HG_LAGG_HIER;
        none += lw->agg[i].op < 0 && lw->agg[i].kind == HG_LAGG_NONE;
    }
    EXPECT(pg->nparams == 2 && aggs + none == 2, "aggregations: %d allreduce, %d none of %d",
           aggs, none, pg->nparams);
    FILE *f = fopen("/dev/null", "w");
    EXPECT(f && hg_lower_print(lw, f) == 0, "print");
    if (f)
        fclose(f);
    hg_lower_free(lw);
    hg_strategy_free(s);
    hg_pgraph_free(pg);
    hg_graph_free(g);
    hg_cluster_free(c);
}

/* Devices priced by a profile that is not bound and without peak_flops:
 * no price, yet the strategy file loads and lowers. */
static void test_no_prices(void)
{
    struct hg_cluster *c = parse(
        "nodes = ({ name = \"n\"; devices = ({ kind = \"cpu\"; count = 3; memory = \"1GiB\";"
        " profile = \"cpu-t1\"; });"
        " intra = { kind = \"shm\"; bandwidth = \"10GB/s\"; latency = \"1us\"; }; });");
    struct hg_graph *g = linear_train(16);
    struct hg_pgraph *pg = pgraph(g, c, 16);
    struct hg_pprice *pr = NULL;
    char err[512] = "", text[512];
    EXPECT(hg_pprice_build(&pr, pg, g, err, sizeof(err)) != 0 && strstr(err, "n:0") &&
           strstr(err, "peak_flops"), "priced a cluster without prices: '%s'", err);
    snprintf(text, sizeof(text), "version = 1; graph = { n_ops = %d; };\n"
             "groups = ( { ops = (\"0-%d\"); mode = \"dp\"; replicas = ((\"n:0\", 2), "
             "(\"n:2\", 1)); aggregate = \"ps\"; ps = \"n:1\"; } );\n", pg->nops, pg->nops - 1);
    struct hg_strategy *s = NULL;
    REQUIRE(hg_strategy_parse(&s, text, "plan.cfg", pg, err, sizeof(err)) == 0, "%s", err);
    struct hg_lowered *lw = hg_lower_new(pg);
    REQUIRE(hg_lower_full(lw, s, err, sizeof(err)) == 0, "%s", err);
    EXPECT(check(lw, s, "no prices") == 0, "no prices");
    int ps = 0;
    for (int i = 0; i < pg->nparams; i++)
        ps += lw->agg[i].kind == HG_LAGG_PS && lw->agg[i].ps == 1;
    EXPECT(ps == 1, "the weight's gradient goes to the PS on n:1 (%d)", ps);
    for (int v = 0; v < pg->nops; v++)
        EXPECT(!place_on(&lw->ops[v], 1), "op %d on n:1, which has no replica", v);
    /* an invalid strategy is refused by name */
    s->cfg[0].rep[0] = s->cfg[0].rep[2] = 0;
    EXPECT(hg_lower_full(lw, s, err, sizeof(err)) != 0 && strstr(err, "group 0"), "'%s'",
           err);
    hg_lower_free(lw);
    hg_strategy_free(s);
    hg_pgraph_free(pg);
    hg_graph_free(g);
    hg_cluster_free(c);
}

static void test_models(void)
{
    struct hg_cluster *c8 = example("heterog-8gpu.cfg"), *c12 = example("heterog-12gpu.cfg");
    for (int i = 0; i < hg_n_model_specs; i++) {
        const struct hg_model_spec *m = &hg_model_specs[i];
        /* rows that few replica counts divide; short sequences keep it quick */
        int64_t batch = 13 + 6 * i;
        struct hg_model_opts mo = {.batch = batch, .seq = m->default_seq ? 16 : 0,
                                   .train = 1, .optim = HG_OPTIM_SGD};
        struct hg_graph *g = hg_graph_new();
        char err[512];
        REQUIRE(hg_model_build(g, m->name, &mo, err, sizeof(err)) >= 0, "%s", err);
        struct hg_pgraph *pg = pgraph(g, i % 2 ? c12 : c8, batch);
        random_cases(pg, m->name, 100 + (uint64_t)i, 6, i < 3 ? 60 : 15);
        hg_pgraph_free(pg);
        hg_graph_free(g);
    }
    hg_cluster_free(c8);
    hg_cluster_free(c12);
}

static void test_tasks(void)
{
    char dir[] = "/tmp/hg_test_lower.XXXXXX";
    task_dicts(dir);
    struct hg_cluster *c8 = example("heterog-8gpu.cfg"), *cl = example("local.cfg");
    const char *names[] = {"mnist", "bert", "translation"};
    for (int i = 0; i < 3; i++) {
        int64_t batch = 11 + 4 * i;
        struct hg_graph *g = task_graph(names[i], dir, batch, 12);
        struct hg_pgraph *pg = pgraph(g, c8, batch);
        random_cases(pg, names[i], 200 + (uint64_t)i, 20, 100);
        hg_pgraph_free(pg);
        pg = pgraph(g, cl, batch);
        random_cases(pg, names[i], 300 + (uint64_t)i, 10, 40);
        hg_pgraph_free(pg);
        hg_graph_free(g);
    }
    hg_cluster_free(c8);
    hg_cluster_free(cl);
    task_dicts_remove(dir);
}

int main(void)
{
    const char *s = getenv("HG_SRCDIR");
    if (s)
        snprintf(srcdir, sizeof(srcdir), "%s", s);
    test_bounds();
    test_hand();
    test_no_prices();
    test_models();
    test_tasks();
    printf("%s: %d failure%s\n", __FILE__, failures, failures == 1 ? "" : "s");
    return failures ? 1 : 0;
}
