/* test_tensor.c - the tensor-parallel layer of the lowering (planner/
 * tensor.c) on random strategies mixing model-, data- and tensor-parallel
 * groups (seeded) over HeteroG's models and the mnist, bert and translation
 * tasks' training graphs: every split op's shards tile its axis with the
 * sizes the weights give (recomputed here on their own), devices of weight
 * 0 hold nothing, every read of a tensor in a TP group gets the layout it
 * asks for from the one it is made in through the inserted collectives,
 * every partial sum read anywhere is reduced exactly once, lowering twice
 * gives the same; a hand-made Megatron MLP (column then row); the strategy
 * file's round trip and its errors; hgtrain's executable kinds exclude TP. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "planner/hg_planner.h"
#include "tasks/hg_task.h"
#include "tests/hg_test.h"
#include "tests/task_graphs.h"

/* Shard sizes by largest remainder, computed apart from hg_tp_split:
 * ranks by (remainder desc, index asc) with a plain selection. */
static void want_sizes(int64_t len, const int *w, int n, int64_t *size)
{
    int64_t W = 0, left = len;
    int used[HG_PLAN_MAXDEV] = {0};
    for (int i = 0; i < n; i++)
        W += w[i];
    for (int i = 0; i < n; i++) {
        size[i] = len * w[i] / W;
        left -= size[i];
    }
    for (; left > 0; left--) {
        int b = -1;
        for (int i = 0; i < n; i++)
            if (!used[i] && w[i] > 0 &&
                (b < 0 || (len * w[i]) % W > (len * w[b]) % W))
                b = i;
        used[b] = 1;
        size[b]++;
    }
}

static int lay_eq(struct hg_tplayout a, struct hg_tplayout b)
{
    return a.kind == b.kind && (a.kind != HG_TPL_SPLIT || a.axis == b.axis);
}

static int bad;
#define CHECK(cond, ...)                                                                  \
    do {                                                                                  \
        if (!(cond) && bad++ < 5)                                                         \
            EXPECT(cond, __VA_ARGS__);                                                    \
    } while (0)

/* Is layout want of tensor t on set s reachable from `made` through the
 * collectives (one step, or a gather/reduction then a slice)? */
static int reachable(const struct hg_tp *tp, int t, int s, struct hg_tplayout made,
                     struct hg_tplayout want)
{
    if (lay_eq(made, want))
        return 1;
    for (int i = 0; i < tp->ncoll; i++) {
        const struct hg_tpcoll *c = &tp->coll[i];
        if (c->tensor != t || c->set != s || !lay_eq(c->to, want))
            continue;
        if (lay_eq(c->from, made))
            return 1;
        for (int j = 0; j < tp->ncoll; j++)
            if (tp->coll[j].tensor == t && tp->coll[j].set == s &&
                lay_eq(tp->coll[j].from, made) && lay_eq(tp->coll[j].to, c->from))
                return 1;
    }
    return 0;
}

/* The layout tensor in[k] of op v is made in, as seen on set s. */
static struct hg_tplayout made_in(const struct hg_lowered *lw, int t, int s)
{
    const struct hg_tp *tp = lw->tp;
    for (int u = 0; u < lw->nops; u++)
        if (lw->pg->ops[u].out == t)
            return tp->op[u].set == s ? tp->op[u].out
                                      : (struct hg_tplayout){HG_TPL_LEAD, -1};
    return tp->tset[t] == s ? tp->tlay[t] : (struct hg_tplayout){HG_TPL_FULL, -1};
}

static void check_op(const struct hg_lowered *lw, const struct hg_strategy *st, int v,
                     const char *what)
{
    const struct hg_tp *tp = lw->tp;
    const struct hg_pgraph *pg = lw->pg;
    const struct hg_tpop *o = &tp->op[v];
    const struct hg_gcfg *g = &st->cfg[st->group[v]];
    if (g->mode != HG_MODE_TP) {
        CHECK(o->set < 0, "%s: op %d not TP has set %d", what, v, o->set);
        return;
    }
    const struct hg_tpset *s = &tp->set[o->set];
    CHECK(s->group == st->group[v], "%s: op %d set of group %d", what, v, s->group);
    /* the rows layer: the whole batch on the lead */
    CHECK(lw->ops[v].nplace == 1 && lw->ops[v].place[0].dev == g->device &&
          lw->ops[v].place[0].begin == 0 && lw->ops[v].place[0].end == lw->batch,
          "%s: op %d rows layer", what, v);
    int n = 0, w[HG_PLAN_MAXDEV];
    for (int d = 0; d < lw->ndev; d++)
        if (g->rep[d] > 0)
            w[n++] = g->rep[d];
    CHECK(o->nshard == n, "%s: op %d: %d shards, %d devices of weight > 0", what, v,
          o->nshard, n);
    int64_t size[HG_PLAN_MAXDEV], at = 0;
    if (o->mode != HG_TPM_REPL)
        want_sizes(o->len, w, n, size);
    for (int i = 0, d = -1; i < o->nshard && i < n; i++) {
        const struct hg_tshard *sh = &o->shard[i];
        CHECK(sh->dev > d && g->rep[sh->dev] > 0, "%s: op %d shard %d on device %d (weight "
              "%d)", what, v, i, sh->dev, g->rep[sh->dev]);
        d = sh->dev;
        if (o->mode == HG_TPM_REPL)
            continue;
        CHECK(sh->begin == at && sh->end - sh->begin == size[i], "%s: op %d shard %d: "
              "%lld-%lld, want %lld + %lld", what, v, i, (long long)sh->begin,
              (long long)sh->end, (long long)at, (long long)size[i]);
        at = sh->end;
    }
    CHECK(o->mode == HG_TPM_REPL || at == o->len, "%s: op %d: shards end at %lld of %lld",
          what, v, (long long)at, (long long)o->len);
    for (int d = 0; d < lw->ndev; d++)
        CHECK(g->rep[d] > 0 || hg_tp_share(tp, v, d) == 0, "%s: op %d on a device of "
              "weight 0", what, v);
    /* every read gets its layout, never a partial sum */
    for (int k = 0; k < pg->ops[v].nin; k++) {
        struct hg_tplayout want = o->in[k];
        int t = pg->ops[v].in[k].tensor;
        if (want.kind == HG_TPL_ANY)
            continue;
        CHECK(want.kind == HG_TPL_FULL || want.kind == HG_TPL_SPLIT, "%s: op %d reads %d "
              "as %s", what, v, k, hg_tpl_kind_name(want.kind));
        CHECK(want.kind != HG_TPL_SPLIT || want.axis < pg->shape[t].ndim, "%s: op %d input "
              "%d axis %d", what, v, k, want.axis);
        CHECK(reachable(tp, t, o->set, made_in(lw, t, o->set), want), "%s: op %d input %d "
              "(tensor %d) read as %s(%d): no collective makes it", what, v, k, t,
              hg_tpl_kind_name(want.kind), want.axis);
    }
    /* read outside the set: whole on the lead */
    int outside = 0, pos = pg->ops[v].out;
    for (int k = 0; k < pg->ops[v].ncons; k++)
        outside |= tp->op[pg->ops[v].cons[k]].set != o->set;
    if (outside && pos >= 0)
        CHECK(reachable(tp, pos, o->set, o->out, (struct hg_tplayout){HG_TPL_FULL, -1}),
              "%s: op %d read outside its set, not made whole", what, v);
}

/* Every partial sum that is read is reduced exactly once; counts add up. */
static void check_colls(const struct hg_lowered *lw, const char *what)
{
    const struct hg_tp *tp = lw->tp;
    const struct hg_pgraph *pg = lw->pg;
    for (int v = 0; v < lw->nops; v++) {
        const struct hg_tpop *o = &tp->op[v];
        if (o->set < 0 || o->out.kind != HG_TPL_PARTIAL)
            continue;
        int reads = pg->ops[v].ncons > 0, red = 0;
        for (int i = 0; i < tp->ncoll; i++)
            red += tp->coll[i].tensor == pg->ops[v].out &&
                   tp->coll[i].from.kind == HG_TPL_PARTIAL;
        CHECK(red == reads, "%s: op %d's partial sum reduced %d times (%d readers)", what, v,
              red, pg->ops[v].ncons);
    }
    for (int i = 0; i < tp->ncoll; i++) {
        const struct hg_tpcoll *c = &tp->coll[i];
        int64_t sum = 0;
        for (int j = 0; j < tp->set[c->set].n; j++)
            sum += c->count[j];
        int whole = c->kind == HG_TPC_ALLREDUCE || c->kind == HG_TPC_BCAST;
        CHECK(whole ? sum == c->numel * tp->set[c->set].n : sum == c->numel,
              "%s: collective %d (%s of tensor %d): counts sum to %lld of %lld", what, i,
              hg_tpc_kind_name(c->kind), c->tensor, (long long)sum, (long long)c->numel);
        CHECK(!lay_eq(c->from, c->to), "%s: collective %d changes nothing", what, i);
    }
}

static void check_tp(const struct hg_lowered *lw, const struct hg_strategy *st,
                     const char *what)
{
    REQUIRE(lw->tp != NULL, "%s: no TP layer", what);
    for (int v = 0; v < lw->nops; v++)
        check_op(lw, st, v, what);
    check_colls(lw, what);
}

/* Groups of consecutive ops, each MP, even DP or TP with weights 0..3. */
static struct hg_strategy *random_tp(const struct hg_pgraph *pg, uint64_t *rng)
{
    int G = 1 + (int)(hg_rand(rng) % 5), nd = pg->ndev;
    struct hg_strategy *st = hg_strategy_new(pg->nops, nd, G);
    for (int v = 0; v < pg->nops; v++)
        st->group[v] = (int)((int64_t)v * G / pg->nops);
    for (int k = 0; k < G; k++) {
        struct hg_gcfg *g = &st->cfg[k];
        int m = k == 0 ? 2 : (int)(hg_rand(rng) % 3);
        if (m == 0) {
            hg_gcfg_mp(g, (int)(hg_rand(rng) % (uint64_t)nd));
        } else if (m == 1) {
            hg_gcfg_even(g, pg->c, HG_AGG_AR);
        } else {
            memset(g, 0, sizeof(*g));
            g->mode = HG_MODE_TP;
            g->device = -1;
            for (int d = 0; d < nd; d++)
                g->rep[d] = (int)(hg_rand(rng) % 4);
            g->rep[hg_rand(rng) % (uint64_t)nd] = 1 + (int)(hg_rand(rng) % 3);
            for (int d = nd - 1; d >= 0; d--)
                if (g->rep[d] > 0)
                    g->device = d;
        }
    }
    return st;
}

static void random_cases(const struct hg_pgraph *pg, const char *name, uint64_t seed, int n)
{
    uint64_t rng = seed;
    for (int i = 0; i < n; i++) {
        struct hg_strategy *st = random_tp(pg, &rng);
        char what[128], err[512] = "";
        snprintf(what, sizeof(what), "%s on %s, case %d", name, pg->c->name, i);
        struct hg_lowered *a = hg_lower_new(pg), *b = hg_lower_new(pg);
        REQUIRE(hg_lower_full(a, st, err, sizeof(err)) == 0, "%s: %s", what, err);
        check_tp(a, st, what);
        /* the same again: deterministic */
        REQUIRE(hg_lower_full(b, st, err, sizeof(err)) == 0, "%s: %s", what, err);
        CHECK(a->tp->ncoll == b->tp->ncoll, "%s: collectives differ", what);
        for (int v = 0; v < pg->nops; v++)
            CHECK(a->tp->op[v].mode == b->tp->op[v].mode && a->tp->op[v].len == b->tp->op[v].len,
                  "%s: op %d differs", what, v);
        CHECK(!hg_strategy_executable(st, HG_EXEC_DP | HG_EXEC_MP | HG_EXEC_SPLIT),
              "%s: a TP strategy is executable", what);
        hg_lower_free(a);
        hg_lower_free(b);
        hg_strategy_free(st);
    }
}

static void test_split(void)
{
    int w[4] = {2, 1, 0, 1};
    int64_t s[4], t[4];
    for (int64_t len = 0; len < 40; len++) {
        hg_tp_split(len, w, 4, s);
        want_sizes(len, w, 4, t);
        EXPECT(s[0] == t[0] && s[1] == t[1] && s[2] == 0 && s[3] == t[3] &&
               s[0] + s[1] + s[3] == len, "split %lld", (long long)len);
    }
    hg_tp_split(32, w, 2, s); /* 64/3 = 21 r 1, 32/3 = 10 r 2: the rest to device 1 */
    EXPECT(s[0] == 21 && s[1] == 11, "32 over 2:1: %lld %lld", (long long)s[0],
           (long long)s[1]);
}

static const char two_cpu[] =
    "nodes = ({ name = \"n\"; devices = ({ kind = \"cpu\"; count = 3; memory = \"1GiB\";"
    " peak_flops = \"1TFLOP/s\"; });"
    " intra = { kind = \"shm\"; bandwidth = \"10GB/s\"; latency = \"1us\"; }; });";

/* x[B,16] . W1[16,32] -> relu -> . W2[32,8] -> cross entropy: Megatron's MLP. */
static struct hg_graph *mlp(int64_t B)
{
    struct hg_graph *g = hg_graph_new();
    int64_t xd[2] = {B, 16}, w1d[2] = {16, 32}, w2d[2] = {32, 8};
    int x = hg_graph_input(g, "x", HG_F32, 2, xd, 0);
    int y = hg_graph_input(g, "y", HG_I32, 1, &B, 0);
    int w1 = hg_graph_param(g, "w1", 2, w1d, HG_INIT_UNIFORM, 0.1f);
    int w2 = hg_graph_param(g, "w2", 2, w2d, HG_INIT_UNIFORM, 0.1f);
    int h = hg_relu(g, hg_matmul(g, x, w1, 0, 0));
    int loss = hg_cross_entropy(g, hg_matmul(g, h, w2, 0, 0), y, -100, 0.f);
    hg_graph_backward(g, loss);
    union hg_attr a = {0};
    a.sgd.momentum = 0.9f;
    hg_graph_optimizer(g, HG_OPTIM_SGD, &a);
    return g;
}

static const char *file_head(const struct hg_pgraph *pg, char *b, size_t n)
{
    snprintf(b, n, "version = 1; graph = { n_ops = %d; }; groups = ( { id = 0; ops = "
             "(\"0-%d\"); ", pg->nops, pg->nops - 1);
    return b;
}

static void test_mlp_and_file(void)
{
    struct hg_cluster *c = parse(two_cpu);
    struct hg_graph *g = mlp(6);
    struct hg_pgraph *pg = pgraph(g, c, 6);
    char head[256], text[1024], err[512] = "";
    file_head(pg, head, sizeof head);
    snprintf(text, sizeof text, "%s mode = \"tp\"; shards = ((\"n:0\", 2), (\"n:1\", 0), "
             "(\"n:2\", 1)); } );", head);
    struct hg_strategy *st = NULL;
    REQUIRE(hg_strategy_parse(&st, text, "t.cfg", pg, err, sizeof err) == 0, "%s", err);
    EXPECT(st->cfg[0].mode == HG_MODE_TP && st->cfg[0].device == 0 && st->cfg[0].rep[0] == 2 &&
           st->cfg[0].rep[1] == 0 && st->cfg[0].rep[2] == 1, "parsed shards");
    struct hg_lowered *lw = hg_lower_new(pg);
    REQUIRE(hg_lower_full(lw, st, err, sizeof err) == 0, "%s", err);
    check_tp(lw, st, "mlp");
    /* the first matmul by columns (32 as 21 + 11), the second by rows,
     * its partial sum all-reduced before the loss reads it whole */
    int mm[2], n = 0;
    for (int v = 0; v < pg->nops && n < 2; v++)
        if (pg->ops[v].kind == HG_OP_MATMUL)
            mm[n++] = v;
    REQUIRE(n == 2, "two matmuls");
    const struct hg_tpop *a = &lw->tp->op[mm[0]], *b = &lw->tp->op[mm[1]];
    EXPECT(a->mode == HG_TPM_COL && a->len == 32 && a->shard[0].end == 21 &&
           a->shard[1].dev == 2 && a->shard[1].end == 32, "first matmul: %s",
           hg_tp_mode_name(a->mode));
    EXPECT(b->mode == HG_TPM_ROW && b->out.kind == HG_TPL_PARTIAL, "second matmul: %s",
           hg_tp_mode_name(b->mode));
    int ar = 0, ag = 0;
    for (int i = 0; i < lw->tp->ncoll; i++) {
        ar += lw->tp->coll[i].kind == HG_TPC_ALLREDUCE &&
              lw->tp->coll[i].tensor == pg->ops[mm[1]].out;
        ag += lw->tp->coll[i].kind == HG_TPC_ALLGATHER &&
              lw->tp->coll[i].tensor == pg->ops[mm[0]].out;
    }
    EXPECT(ar == 1 && ag == 0, "MLP forward: %d allreduce, %d allgather of the hidden", ar, ag);
    /* the round trip */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    REQUIRE(f && hg_strategy_save(st, pg, "", NULL, NULL, f) == 0, "save");
    fclose(f);
    EXPECT(strstr(buf, "mode = \"tp\"; shards = ((\"n:0\", 2), (\"n:2\", 1));") != NULL,
           "written: %s", buf);
    struct hg_strategy *s2 = NULL;
    REQUIRE(hg_strategy_parse(&s2, buf, "t2.cfg", pg, err, sizeof err) == 0, "%s", err);
    EXPECT(memcmp(&s2->cfg[0], &st->cfg[0], sizeof(st->cfg[0])) == 0, "round trip");
    free(buf);
    hg_strategy_free(s2);
    hg_strategy_free(st);
    hg_lower_free(lw);
    /* errors name the key and the group */
    static const char *const bad_files[][2] = {
        {"mode = \"tp\"; shards = ((\"n:0\", \"x\"));", "group 0: shards: expected"},
        {"mode = \"tp\"; shards = ((\"n:0\", 0), (\"n:1\", 0));", "group 0: shards: every "
                                                                   "weight is 0"},
        {"mode = \"tp\"; shards = ((\"gpu9\", 1));", "group 0: device 'gpu9' is not"},
        {"mode = \"tp\"; shards = ((\"n:0\", -1));", "group 0: shards: weight -1 on n:0"},
        {"mode = \"tp\"; shards = ((\"n:0\", 1), (\"n:0\", 1));", "n:0 is given twice"},
        {"mode = \"tp\"; shards = ((\"n:0\", 1)); replicas = ((\"n:0\", 1));",
         "group 0: mode \"tp\" takes 'shards' only, not 'replicas'"},
        {"mode = \"tp\";", "group 0: mode \"tp\" needs 'shards'"},
        {"mode = \"tp\"; shards = 3;", "group 0: shards is an integer"},
        {"mode = \"mp\"; device = \"n:0\"; shards = ((\"n:0\", 1));",
         "group 0: 'shards' belongs to mode \"tp\""},
    };
    for (size_t i = 0; i < sizeof bad_files / sizeof bad_files[0]; i++) {
        snprintf(text, sizeof text, "%s %s } );", head, bad_files[i][0]);
        st = NULL;
        err[0] = 0;
        EXPECT(hg_strategy_parse(&st, text, "t.cfg", pg, err, sizeof err) != 0 &&
               strstr(err, bad_files[i][1]) != NULL, "%s: got '%s', want '%s'",
               bad_files[i][0], err, bad_files[i][1]);
        hg_strategy_free(st);
    }
    /* refused for now: TP in a pipeline, TP with recomputation */
    snprintf(text, sizeof text, "%s mode = \"tp\"; shards = ((\"n:0\", 1), (\"n:1\", 1)); "
             "recompute = true; } );", head);
    REQUIRE(hg_strategy_parse(&st, text, "t.cfg", pg, err, sizeof err) == 0, "%s", err);
    lw = hg_lower_new(pg);
    EXPECT(hg_lower_full(lw, st, err, sizeof err) != 0 && strstr(err, "group 0 is tensor "
           "parallel and recomputes"), "recompute: %s", err);
    st->cfg[0].recompute = 0;
    st->nmicro = 2;
    EXPECT(hg_lower_full(lw, st, err, sizeof err) != 0 && strstr(err, "group 0 is tensor "
           "parallel inside a pipeline"), "pipeline: %s", err);
    hg_lower_free(lw);
    hg_strategy_free(st);
    random_cases(pg, "mlp", 7, 40);
    hg_pgraph_free(pg);
    hg_graph_free(g);
    hg_cluster_free(c);
}

static const char two_gpu[] =
    "nodes = ({ name = \"n\"; devices = ({ kind = \"gpu\"; count = 2; memory = \"16GiB\";"
    " peak_flops = \"10TFLOP/s\"; memory_bandwidth = \"500GB/s\"; });"
    " intra = { kind = \"nvlink\"; bandwidth = \"20GB/s\"; latency = \"5us\"; }; });";

/* A large matmul summed whole, forward only: on 2 equal devices its
 * tensor-parallel time is the launch plus half the rest, the all-gather of
 * the two halves, then the sum on each; each device holds half of W. */
static void test_sim(void)
{
    struct hg_cluster *c = parse(two_gpu);
    struct hg_graph *g = hg_graph_new();
    int64_t B = 2048, xd[2] = {B, 2048}, wd[2] = {2048, 4096};
    int x = hg_graph_input(g, "x", HG_F32, 2, xd, 0);
    int w = hg_graph_param(g, "w", 2, wd, HG_INIT_UNIFORM, 0.1f);
    hg_sum(g, hg_matmul(g, x, w, 0, 0), -1);
    struct hg_pgraph *pg = pgraph(g, c, B);
    char err[512] = "";
    struct hg_pprice *pr = NULL;
    REQUIRE(hg_pprice_build(&pr, pg, g, err, sizeof err) == 0, "%s", err);
    REQUIRE(pg->nops == 2 && pg->ops[0].kind == HG_OP_MATMUL, "graph");
    struct hg_strategy *st = hg_strategy_new(pg->nops, 2, 1);
    struct hg_sim *sim = hg_sim_new(pg, pr);
    struct hg_sim_result mp, tp;
    hg_sim_full(sim, st, &mp);
    st->cfg[0].mode = HG_MODE_TP;
    st->cfg[0].rep[0] = st->cfg[0].rep[1] = 1;
    hg_sim_full(sim, st, &tp);
    size_t i1 = hg_pprice_at(pr, 1, 0);
    double mm = pr->a[0] + pr->b[0], sum = pr->a[i1] + pr->b[i1];
    double half = (double)B * 4096 * 4 / 2, parts[2] = {half, half};
    int devs[2] = {0, 1};
    double ag = hg_cost_allgatherv_ring(c, devs, 2, parts);
    double want = HG_LAUNCH_OVERHEAD_GPU + (mm - HG_LAUNCH_OVERHEAD_GPU) / 2 + ag + sum;
    EXPECT(ag > 0 && tp.iter_s > 0.999 * want && tp.iter_s < 1.001 * want,
           "TP of 2: %g s, want %g (matmul %g, all-gather %g, sum %g; MP %g)", tp.iter_s,
           want, mm, ag, sum, mp.iter_s);
    EXPECT(tp.iter_s < mp.iter_s, "TP %g not faster than MP %g", tp.iter_s, mp.iter_s);
    int64_t wb = pg->pstatic[w];
    EXPECT(tp.peak[1] > 0 && tp.peak[1] < mp.peak[0] && mp.peak[1] == 0 &&
           tp.peak[1] >= wb / 2, "memory: TP %lld %lld, MP %lld %lld, w %lld",
           (long long)tp.peak[0], (long long)tp.peak[1], (long long)mp.peak[0],
           (long long)mp.peak[1], (long long)wb);
    hg_sim_free(sim);
    hg_strategy_free(st);
    hg_pprice_free(pr);
    hg_pgraph_free(pg);
    hg_graph_free(g);
    hg_cluster_free(c);
}

static void test_models(void)
{
    struct hg_cluster *c8 = example("heterog-8gpu.cfg");
    for (int i = 0; i < hg_n_model_specs; i++) {
        const struct hg_model_spec *m = &hg_model_specs[i];
        int64_t batch = 8;
        struct hg_model_opts mo = {.batch = batch, .seq = m->default_seq ? 16 : 0,
                                   .train = 1, .optim = HG_OPTIM_SGD};
        struct hg_graph *g = hg_graph_new();
        char err[512];
        REQUIRE(hg_model_build(g, m->name, &mo, err, sizeof(err)) >= 0, "%s", err);
        struct hg_pgraph *pg = pgraph(g, c8, batch);
        random_cases(pg, m->name, 500 + (uint64_t)i, 3);
        hg_pgraph_free(pg);
        hg_graph_free(g);
    }
    hg_cluster_free(c8);
}

static void test_tasks(void)
{
    char dir[] = "/tmp/hg_test_tensor.XXXXXX";
    task_dicts(dir);
    struct hg_cluster *c8 = example("heterog-8gpu.cfg");
    const char *names[] = {"mnist", "bert", "translation"};
    for (int i = 0; i < 3; i++) {
        int64_t batch = 11 + 4 * i;
        struct hg_graph *g = task_graph(names[i], dir, batch, 12);
        struct hg_pgraph *pg = pgraph(g, c8, batch);
        random_cases(pg, names[i], 600 + (uint64_t)i, 20);
        hg_pgraph_free(pg);
        hg_graph_free(g);
    }
    hg_cluster_free(c8);
    task_dicts_remove(dir);
}

int main(void)
{
    const char *s = getenv("HG_SRCDIR");
    if (s)
        snprintf(srcdir, sizeof(srcdir), "%s", s);
    test_split();
    test_mlp_and_file();
    test_sim();
    test_models();
    test_tasks();
    printf("%s: %d failure%s\n", __FILE__, failures, failures == 1 ? "" : "s");
    return failures ? 1 : 0;
}
