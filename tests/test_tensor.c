/* test_tensor.c - the tensor-parallel layer of the lowering (planner/
 * tensor.c) on random strategies mixing model-, data- and tensor-parallel
 * groups (seeded) over HeteroG's models and the mnist, bert and translation
 * tasks' training graphs: every split op's shards tile its axis with the
 * sizes the weights give (recomputed here on their own), devices of weight
 * 0 hold nothing, every read of a tensor in a TP group gets the layout it
 * asks for from the one it is made in through the inserted collectives,
 * every partial sum read anywhere is reduced exactly once, lowering twice
 * gives the same; a hand-made Megatron MLP (column then row); the strategy
 * file's round trip and its errors; hgtrain's executable kinds exclude TP.
 * Then properties over all-TP strategies (test_properties): random
 * groupings and weights 0..8 on 2, 3 and 4 devices, each lowering checked
 * against what its layouts mean (one summary line). */
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
        /* hgtrain runs TP as every group over every device, nothing else */
        int every = 1;
        for (int k = 0; k < st->ngroups; k++)
            for (int d = 0; d < st->ndev; d++)
                every &= st->cfg[k].mode == HG_MODE_TP && st->cfg[k].rep[d] >= 1;
        CHECK(!hg_strategy_executable(st, HG_EXEC_DP | HG_EXEC_MP | HG_EXEC_SPLIT) &&
                  hg_strategy_executable(st, HG_EXEC_DP | HG_EXEC_MP | HG_EXEC_SPLIT |
                                                 HG_EXEC_TP) == every,
              "%s: executable %d, every group TP over every device %d", what,
              hg_strategy_executable(st, HG_EXEC_DP | HG_EXEC_SPLIT | HG_EXEC_TP), every);
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

static const char two_nodes[] =
    "network = { switch_bandwidth = \"10Gbps\"; latency = \"50us\"; };"
    "nodes = ({ name = \"a\"; nic_bandwidth = \"10Gbps\"; devices = ({ kind = \"cpu\"; "
    "count = 1; memory = \"1GiB\"; peak_flops = \"1TFLOP/s\"; }); },"
    " { name = \"b\"; nic_bandwidth = \"10Gbps\"; devices = ({ kind = \"cpu\"; count = 1; "
    "memory = \"1GiB\"; peak_flops = \"1TFLOP/s\"; }); });";

/* hg_tp_baseline (the plan table's TP-E and TP-S) and
 * hg_strategy_executable on tensor parallelism: exactly what hgtrain runs
 * (every group TP over every device, a shard each, no recomputation, no
 * pipeline) and only when HG_EXEC_TP is asked for. */
static void test_executable(void)
{
    struct hg_cluster *c = parse(two_cpu);
    struct hg_graph *g = mlp(6);
    struct hg_pgraph *pg = pgraph(g, c, 6);
    char err[512] = "";
    const unsigned all = HG_EXEC_DP | HG_EXEC_MP | HG_EXEC_SPLIT;
    struct hg_strategy *st = hg_tp_baseline(pg, HG_TP_EVEN, err, sizeof err);
    REQUIRE(st != NULL, "TP-E: %s", err);
    EXPECT(st->ngroups == 1 && st->cfg[0].mode == HG_MODE_TP && st->cfg[0].rep[0] == 1 &&
           st->cfg[0].rep[1] == 1 && st->cfg[0].rep[2] == 1, "TP-E's shards");
    EXPECT(hg_strategy_executable(st, HG_EXEC_TP) &&
           hg_strategy_executable(st, all | HG_EXEC_TP) &&
           hg_strategy_executable(st, HG_EXEC_DP | HG_EXEC_NOPS | HG_EXEC_TP) &&
           !hg_strategy_executable(st, all) && !hg_strategy_executable(st, HG_EXEC_DP),
           "TP-E: executable with HG_EXEC_TP only");
    st->cfg[0].rep[1] = 0; /* a device without a shard */
    EXPECT(!hg_strategy_executable(st, all | HG_EXEC_TP), "a weight-0 device");
    st->cfg[0].rep[1] = 3;
    EXPECT(hg_strategy_executable(st, HG_EXEC_TP), "uneven weights");
    st->nmicro = 2; /* in a pipeline */
    EXPECT(!hg_strategy_executable(st, all | HG_EXEC_TP), "TP in a pipeline");
    st->nmicro = 0;
    st->cfg[0].recompute = 1;
    EXPECT(!hg_strategy_executable(st, all | HG_EXEC_TP), "TP recomputing");
    hg_strategy_free(st);
    /* two groups: both TP with their own weights, or TP beside DP or MP */
    st = hg_strategy_new(pg->nops, pg->ndev, 2);
    for (int v = 0; v < pg->nops; v++)
        st->group[v] = v >= pg->nops / 2;
    for (int k = 0; k < 2; k++) {
        memset(&st->cfg[k], 0, sizeof st->cfg[k]);
        st->cfg[k].mode = HG_MODE_TP;
        for (int d = 0; d < pg->ndev; d++)
            st->cfg[k].rep[d] = 1 + k + d;
    }
    EXPECT(hg_strategy_executable(st, HG_EXEC_TP), "two TP groups of different weights");
    hg_gcfg_even(&st->cfg[1], c, HG_AGG_AR);
    EXPECT(!hg_strategy_executable(st, all | HG_EXEC_TP), "TP beside DP");
    hg_gcfg_mp(&st->cfg[1], 1);
    EXPECT(!hg_strategy_executable(st, all | HG_EXEC_TP), "TP beside MP");
    hg_strategy_free(st);
    /* TP-S: eighths of the fastest device's speed (equal here: 8 each) */
    st = hg_tp_baseline(pg, HG_TP_SPEED, err, sizeof err);
    REQUIRE(st != NULL, "TP-S: %s", err);
    EXPECT(st->cfg[0].rep[0] == 8 && st->cfg[0].rep[2] == 8, "TP-S's shards: %d %d",
           st->cfg[0].rep[0], st->cfg[0].rep[2]);
    hg_strategy_free(st);
    hg_pgraph_free(pg);
    hg_cluster_free(c);
    /* across nodes: none, and why */
    c = parse(two_nodes);
    pg = pgraph(g, c, 6);
    err[0] = 0;
    EXPECT(hg_tp_baseline(pg, HG_TP_EVEN, err, sizeof err) == NULL &&
           strstr(err, "has 2 nodes: across nodes the tensor-parallel group is replicated, "
                  "which is not planned yet"), "two nodes: '%s'", err);
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

/* ------------------------------------------------------------ properties
 * Every group tensor parallel: random groupings (one group, consecutive
 * runs, ops scattered over groups) and weights 0..8 per device on 2, 3
 * and 4 devices.  Each lowering is checked against what the layouts mean,
 * not against how tensor.c chooses them: shards tile, outputs are made
 * once, partial sums reduced once, every read served by one collective
 * from a source that holds what it sends, nothing varying split, counts
 * that add up. */

/* Every failure counted, the first 10 printed (CHECK above stops counting
 * after 5, so that a failure earlier in the file would hide these). */
static long pbad;
#define PCHECK(cond, ...)                                                                 \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            if (pbad++ < 10)                                                              \
                EXPECT(cond, __VA_ARGS__);                                                \
            else                                                                          \
                failures++;                                                               \
        }                                                                                 \
    } while (0)

static struct {
    long strategies, graphs, ops, reads, colls, empty, zero_w, varying;
    long kind[HG_TPC_BCAST + 1];
} tally;

/* What the checks need of a planner graph, built once per graph. */
struct pgidx {
    const struct hg_pgraph *pg;
    int *prod;            /* [ntensors] the producing op, -1 */
    int *rstart;          /* [ntensors + 1] reads of t: rd[rstart[t] .. rstart[t + 1]) */
    int *rd;              /* [reads] op * HG_MAX_INPUTS + input, ops ascending */
};

static void pgidx_build(struct pgidx *x, const struct hg_pgraph *pg)
{
    size_t T = (size_t)pg->ntensors;
    x->pg = pg;
    x->prod = malloc((T + 1) * sizeof(int));
    x->rstart = calloc(T + 2, sizeof(int));
    REQUIRE(x->prod && x->rstart, "malloc");
    for (size_t t = 0; t < T; t++)
        x->prod[t] = -1;
    for (int v = 0; v < pg->nops; v++) {
        if (pg->ops[v].out >= 0)
            x->prod[pg->ops[v].out] = v;
        for (int k = 0; k < pg->ops[v].nin; k++)
            x->rstart[pg->ops[v].in[k].tensor + 2]++;
    }
    for (size_t t = 2; t <= T + 1; t++) /* counts at t + 2, so the fill below ends at t + 1 */
        x->rstart[t] += x->rstart[t - 1];
    x->rd = malloc(((size_t)x->rstart[T + 1] + 1) * sizeof(int));
    REQUIRE(x->rd != NULL, "malloc");
    for (int v = 0; v < pg->nops; v++)
        for (int k = 0; k < pg->ops[v].nin; k++)
            x->rd[x->rstart[pg->ops[v].in[k].tensor + 1]++] = v * HG_MAX_INPUTS + k;
}

static void pgidx_free(struct pgidx *x)
{
    free(x->prod);
    free(x->rstart);
    free(x->rd);
}

/* One lowering under check. */
struct pctx {
    const struct pgidx *x;
    const struct hg_lowered *lw;
    const struct hg_strategy *st;
    const char *what;
    int *cstart;          /* [ntensors + 1] collectives of t: cstart[t] .. cstart[t + 1] */
    unsigned char *used;  /* [ncoll] serves a read or feeds a later slice */
};

static const struct hg_tplayout L_FULL = {HG_TPL_FULL, -1};

/* Tensor t's layout as made, seen from set s: by its producer there, else
 * on the lead (from another group), else as stored (a param or state the
 * set holds), else whole (data). */
static struct hg_tplayout made(const struct pctx *p, int t, int s)
{
    const struct hg_tp *tp = p->lw->tp;
    int u = p->x->prod[t];
    if (u >= 0)
        return tp->op[u].set == s ? tp->op[u].out : (struct hg_tplayout){HG_TPL_LEAD, -1};
    return tp->tset[t] == s ? tp->tlay[t] : L_FULL;
}

/* (5) and a sane axis: a split of tensor t on an axis it has, constant. */
static void split_ok(const struct pctx *p, int t, struct hg_tplayout l, const char *who, int id)
{
    const struct hg_pgraph *pg = p->x->pg;
    if (l.kind != HG_TPL_SPLIT)
        return;
    PCHECK(l.axis >= 0 && l.axis < pg->shape[t].ndim, "%s: %s %d splits tensor %d on axis %d "
          "of %d", p->what, who, id, t, l.axis, pg->shape[t].ndim);
    PCHECK(!(pg->tvary[t] >> l.axis & 1), "%s: %s %d splits tensor %d on axis %d, which "
          "varies with the batch or a length", p->what, who, id, t, l.axis);
}

/* (1) Op v's shards tile [0, len) in its set's devices (weight > 0,
 * ascending) with hg_tp_split's sizes; REPL: every device whole. */
static void prop_shards(const struct pctx *p, int v)
{
    const struct hg_tp *tp = p->lw->tp;
    const struct hg_tpop *o = &tp->op[v];
    const struct hg_gcfg *g = &p->st->cfg[p->st->group[v]];
    int nd = p->lw->ndev, n = 0, w[HG_PLAN_MAXDEV];
    int64_t size[HG_PLAN_MAXDEV], at = 0;
    REQUIRE(o->set >= 0 && o->set < tp->nset, "%s: op %d of a TP group has set %d", p->what,
            v, o->set);
    const struct hg_tpset *s = &tp->set[o->set];
    PCHECK(s->group == p->st->group[v], "%s: op %d in the set of group %d", p->what, v,
          s->group);
    for (int d = 0; d < nd; d++)
        if (g->rep[d] > 0) {
            PCHECK(n < s->n && s->dev[n] == d && s->w[n] == g->rep[d], "%s: op %d: set device "
                  "%d is not device %d of weight %d", p->what, v, n, d, g->rep[d]);
            w[n++] = g->rep[d];
        }
    REQUIRE(s->n == n && o->nshard == n, "%s: op %d: %d shards, %d in the set, %d devices "
            "of weight > 0", p->what, v, o->nshard, s->n, n);
    for (int i = 0; i < n; i++)
        PCHECK(o->shard[i].dev == s->dev[i], "%s: op %d shard %d on device %d, want %d",
              p->what, v, i, o->shard[i].dev, s->dev[i]);
    if (o->mode == HG_TPM_REPL) {
        PCHECK(o->len == 0, "%s: op %d replicated with len %lld", p->what, v, (long long)o->len);
        for (int d = 0; d < nd; d++)
            PCHECK(hg_tp_share(tp, v, d) == (g->rep[d] > 0), "%s: op %d replicated: device %d "
                  "(weight %d) computes %g of it", p->what, v, d, g->rep[d],
                  hg_tp_share(tp, v, d));
        return;
    }
    want_sizes(o->len, w, n, size);
    double share = 0;
    for (int i = 0; i < n; i++) {
        const struct hg_tshard *sh = &o->shard[i];
        PCHECK(sh->begin == at && sh->end >= sh->begin && sh->end - sh->begin == size[i],
              "%s: op %d shard %d: [%lld, %lld), want [%lld, +%lld)", p->what, v, i,
              (long long)sh->begin, (long long)sh->end, (long long)at, (long long)size[i]);
        tally.empty += sh->end == sh->begin;
        at = sh->end;
        share += hg_tp_share(tp, v, sh->dev);
    }
    PCHECK(at == o->len, "%s: op %d: shards end at %lld of %lld", p->what, v, (long long)at,
          (long long)o->len);
    PCHECK(o->len == 0 || (share > 1 - 1e-9 && share < 1 + 1e-9), "%s: op %d: shares sum to "
          "%g", p->what, v, share);
    for (int d = 0; d < nd; d++)
        PCHECK(g->rep[d] > 0 || hg_tp_share(tp, v, d) == 0, "%s: op %d computed on device %d "
              "of weight 0", p->what, v, d);
}

/* (2) What op v makes and reads: a split output's axis is the op's (so
 * the shards partition it), a partial sum comes from split inputs whose
 * axis is the op's, every split read is of the op's axis' length (it
 * lines up with the shards), replicated ops read and make whole tensors. */
static void prop_layouts(const struct pctx *p, int v)
{
    const struct hg_pgraph *pg = p->x->pg;
    const struct hg_tp *tp = p->lw->tp;
    const struct hg_tpop *o = &tp->op[v];
    const struct hg_pop *po = &pg->ops[v];
    enum hg_tpl_kind ok = o->out.kind;
    if (o->mode == HG_TPM_REPL)
        PCHECK(po->out >= 0 ? ok == HG_TPL_FULL : ok == HG_TPL_ANY, "%s: op %d replicated "
              "makes %s", p->what, v, hg_tpl_kind_name(ok));
    else
        PCHECK(ok == HG_TPL_SPLIT || ok == HG_TPL_PARTIAL || (po->out < 0 && ok == HG_TPL_ANY),
              "%s: op %d %s makes %s", p->what, v, hg_tp_mode_name(o->mode),
              hg_tpl_kind_name(ok));
    if (ok == HG_TPL_SPLIT) {
        split_ok(p, po->out, o->out, "op", v);
        PCHECK(o->out.axis < 0 || o->out.axis >= pg->shape[po->out].ndim ||
              pg->shape[po->out].dim[o->out.axis] == o->len, "%s: op %d splits its output's "
              "axis %d of %lld, its shards tile %lld", p->what, v, o->out.axis,
              (long long)pg->shape[po->out].dim[o->out.axis], (long long)o->len);
    }
    if (ok == HG_TPL_PARTIAL)
        PCHECK(o->mode == HG_TPM_ROW || o->mode == HG_TPM_VOCAB, "%s: op %d %s makes a "
              "partial sum", p->what, v, hg_tp_mode_name(o->mode));
    for (int k = 0; k < po->nin; k++) {
        struct hg_tplayout l = o->in[k];
        int t = po->in[k].tensor;
        PCHECK(l.kind == HG_TPL_FULL || l.kind == HG_TPL_SPLIT || l.kind == HG_TPL_ANY,
              "%s: op %d reads input %d as %s", p->what, v, k, hg_tpl_kind_name(l.kind));
        PCHECK(o->mode != HG_TPM_REPL || l.kind != HG_TPL_SPLIT, "%s: op %d replicated reads "
              "input %d split", p->what, v, k);
        /* a partial sum: each device sums its part of the split inputs
         * (an embedding: its rows; the ids whole) */
        if (ok == HG_TPL_PARTIAL && !(po->kind == HG_OP_EMBEDDING && k == 1))
            PCHECK(l.kind == HG_TPL_SPLIT || l.kind == HG_TPL_ANY, "%s: op %d makes a partial "
                  "sum from input %d read %s", p->what, v, k, hg_tpl_kind_name(l.kind));
        if (l.kind != HG_TPL_SPLIT)
            continue;
        split_ok(p, t, l, "op", v);
        PCHECK(l.axis < 0 || l.axis >= pg->shape[t].ndim || pg->shape[t].dim[l.axis] == o->len,
              "%s: op %d reads input %d split on axis %d of %lld, its shards tile %lld",
              p->what, v, k, l.axis, (long long)pg->shape[t].dim[l.axis], (long long)o->len);
    }
    if (po->out >= 0)
        PCHECK(tp->tset[po->out] == o->set && lay_eq(tp->tlay[po->out], o->out), "%s: op %d's "
              "output stored as %s on set %d", p->what, v, hg_tpl_kind_name(tp->tlay[po->out].kind),
              tp->tset[po->out]);
}

/* (4) Tensor t read as `want` on set s: none when made so, else exactly
 * one collective of (t, s) makes it. */
static void prop_read(const struct pctx *p, int t, int s, struct hg_tplayout want, int v)
{
    const struct hg_tp *tp = p->lw->tp;
    int n = 0;
    for (int i = p->cstart[t]; i < p->cstart[t + 1]; i++)
        if (tp->coll[i].set == s && lay_eq(tp->coll[i].to, want)) {
            n++;
            p->used[i] = 1;
        }
    struct hg_tplayout m = made(p, t, s);
    PCHECK(lay_eq(m, want) ? n == 0 : n == 1, "%s: op %d reads tensor %d as %s(%d), made %s(%d): "
          "%d collectives make it", p->what, v, t, hg_tpl_kind_name(want.kind), want.axis,
          hg_tpl_kind_name(m.kind), m.axis, n);
    tally.reads++;
}

/* Tensor t needs a reduction on set s: read there (not for its shape) or
 * outside it. */
static int read_whole(const struct pctx *p, int t, int s)
{
    const struct hg_tp *tp = p->lw->tp;
    for (int r = p->x->rstart[t]; r < p->x->rstart[t + 1]; r++) {
        int w = p->x->rd[r] / HG_MAX_INPUTS, k = p->x->rd[r] % HG_MAX_INPUTS;
        if (tp->op[w].set != s || tp->op[w].in[k].kind != HG_TPL_ANY)
            return 1;
    }
    return 0;
}

/* (3) Every partial sum needed is reduced once, on its set; none else. */
static void prop_partial(const struct pctx *p)
{
    const struct hg_tp *tp = p->lw->tp;
    const struct hg_pgraph *pg = p->x->pg;
    for (int t = 0; t < pg->ntensors; t++) {
        int u = p->x->prod[t], red = 0, s = u >= 0 ? tp->op[u].set : -1;
        int partial = s >= 0 && tp->op[u].out.kind == HG_TPL_PARTIAL;
        for (int i = p->cstart[t]; i < p->cstart[t + 1]; i++)
            if (tp->coll[i].from.kind == HG_TPL_PARTIAL) {
                red++;
                PCHECK(partial && tp->coll[i].set == s && (tp->coll[i].kind == HG_TPC_ALLREDUCE ||
                      tp->coll[i].kind == HG_TPC_REDUCE_SCATTER), "%s: collective %d (%s) "
                      "reduces tensor %d, not a partial sum of set %d", p->what, i,
                      hg_tpc_kind_name(tp->coll[i].kind), t, tp->coll[i].set);
            }
        if (partial)
            PCHECK(red == read_whole(p, t, s), "%s: the partial sum of op %d (tensor %d) is "
                  "reduced %d times, read whole %d", p->what, u, t, red, read_whole(p, t, s));
    }
}

/* (6) The per-device counts of collective c: its split part by the set's
 * weights (the numel over the axis times the shard), or the whole. */
static void prop_counts(const struct pctx *p, int i)
{
    const struct hg_tpcoll *c = &p->lw->tp->coll[i];
    const struct hg_tpset *s = &p->lw->tp->set[c->set];
    const struct hg_shape *sh = &p->x->pg->shape[c->tensor];
    int64_t size[HG_PLAN_MAXDEV], sum = 0;
    PCHECK(c->numel == hg_shape_numel(sh), "%s: collective %d: numel %lld of %lld", p->what, i,
          (long long)c->numel, (long long)hg_shape_numel(sh));
    if (c->kind == HG_TPC_ALLREDUCE || c->kind == HG_TPC_BCAST) {
        for (int j = 0; j < s->n; j++)
            PCHECK(c->count[j] == c->numel, "%s: collective %d (%s) sends %lld of %lld on "
                  "device %d", p->what, i, hg_tpc_kind_name(c->kind), (long long)c->count[j],
                  (long long)c->numel, s->dev[j]);
        return;
    }
    struct hg_tplayout part = c->kind == HG_TPC_ALLGATHER ? c->from : c->to;
    if (part.axis < 0 || part.axis >= sh->ndim)
        return; /* split_ok said so */
    int64_t len = sh->dim[part.axis];
    want_sizes(len, s->w, s->n, size);
    for (int j = 0; j < s->n; j++) {
        PCHECK(c->count[j] == (len ? c->numel / len * size[j] : 0), "%s: collective %d (%s of "
              "tensor %d): device %d's part %lld, want %lld", p->what, i,
              hg_tpc_kind_name(c->kind), c->tensor, s->dev[j], (long long)c->count[j],
              (long long)(len ? c->numel / len * size[j] : 0));
        sum += c->count[j];
    }
    PCHECK(sum == c->numel, "%s: collective %d (%s of tensor %d): parts sum to %lld of %lld",
          p->what, i, hg_tpc_kind_name(c->kind), c->tensor, (long long)sum,
          (long long)c->numel);
}

/* The step a collective runs at: its producer's in the set, else the
 * first reader's there (by id: the executor runs a set's ops in id order,
 * controller/tp.c). */
static void prop_at(const struct pctx *p, int i)
{
    const struct hg_tp *tp = p->lw->tp;
    const struct hg_tpcoll *c = &tp->coll[i];
    int u = p->x->prod[c->tensor], first = -1;
    if (u >= 0 && tp->op[u].set == c->set) {
        PCHECK(c->at == u, "%s: collective %d of tensor %d at op %d, its producer is %d",
              p->what, i, c->tensor, c->at, u);
        return;
    }
    for (int r = p->x->rstart[c->tensor]; r < p->x->rstart[c->tensor + 1]; r++) {
        int w = p->x->rd[r] / HG_MAX_INPUTS, k = p->x->rd[r] % HG_MAX_INPUTS;
        if (tp->op[w].set == c->set && tp->op[w].in[k].kind != HG_TPL_ANY &&
            (first < 0 || w < first))
            first = w;
    }
    PCHECK(first >= 0 && c->at == first, "%s: collective %d of tensor %d at op %d, its first "
          "reader on set %d is %d", p->what, i, c->tensor, c->at, c->set, first);
}

/* (4), (5), (6) per collective: its kind's layouts, its source (a slice
 * cuts a whole tensor: made whole, or made whole by an earlier gather,
 * reduction or broadcast of (t, s)), the list's order, its counts. */
static void prop_coll(const struct pctx *p, int i)
{
    static const enum hg_tpl_kind from_of[] = {HG_TPL_FULL, HG_TPL_SPLIT, HG_TPL_PARTIAL,
                                               HG_TPL_PARTIAL, HG_TPL_LEAD};
    static const enum hg_tpl_kind to_of[] = {HG_TPL_SPLIT, HG_TPL_FULL, HG_TPL_SPLIT,
                                             HG_TPL_FULL, HG_TPL_FULL};
    const struct hg_tp *tp = p->lw->tp;
    const struct hg_tpcoll *c = &tp->coll[i];
    int t = c->tensor, s = c->set;
    REQUIRE((unsigned)c->kind <= HG_TPC_BCAST && s >= 0 && s < tp->nset, "%s: collective %d: "
            "kind %d, set %d", p->what, i, (int)c->kind, s);
    tally.kind[c->kind]++;
    PCHECK(c->from.kind == from_of[c->kind] && c->to.kind == to_of[c->kind], "%s: collective "
          "%d (%s) from %s to %s", p->what, i, hg_tpc_kind_name(c->kind),
          hg_tpl_kind_name(c->from.kind), hg_tpl_kind_name(c->to.kind));
    PCHECK(c->op == p->x->prod[t], "%s: collective %d of tensor %d names producer %d, not %d",
          p->what, i, t, c->op, p->x->prod[t]);
    PCHECK(i == 0 || tp->coll[i - 1].tensor < t ||
          (tp->coll[i - 1].tensor == t && tp->coll[i - 1].set <= s), "%s: collective %d out "
          "of order (by tensor, then set)", p->what, i);
    split_ok(p, t, c->from, "collective", i);
    split_ok(p, t, c->to, "collective", i);
    struct hg_tplayout m = made(p, t, s);
    if (c->kind != HG_TPC_SLICE) {
        PCHECK(lay_eq(c->from, m), "%s: collective %d (%s of tensor %d) from %s, made %s",
              p->what, i, hg_tpc_kind_name(c->kind), t, hg_tpl_kind_name(c->from.kind),
              hg_tpl_kind_name(m.kind));
    } else if (m.kind != HG_TPL_FULL) {
        int src = -1;
        for (int j = p->cstart[t]; j < i; j++)
            if (tp->coll[j].set == s && tp->coll[j].kind != HG_TPC_SLICE &&
                tp->coll[j].kind != HG_TPC_REDUCE_SCATTER)
                src = j;
        PCHECK(src >= 0, "%s: collective %d slices tensor %d, made %s on set %d, never made "
              "whole before", p->what, i, t, hg_tpl_kind_name(m.kind), s);
        if (src >= 0)
            p->used[src] = 1;
    }
    prop_counts(p, i);
    prop_at(p, i);
}

/* Every property of one lowering of st. */
static void prop_check(const struct pgidx *x, const struct hg_lowered *lw,
                       const struct hg_strategy *st, const char *what)
{
    const struct hg_pgraph *pg = x->pg;
    const struct hg_tp *tp = lw->tp;
    REQUIRE(tp != NULL, "%s: no TP layer", what);
    struct pctx p = {x, lw, st, what, calloc((size_t)pg->ntensors + 2, sizeof(int)),
                     calloc((size_t)tp->ncoll + 1, 1)};
    REQUIRE(p.cstart && p.used, "calloc");
    for (int i = 0; i < tp->ncoll; i++) {
        REQUIRE(tp->coll[i].tensor >= 0 && tp->coll[i].tensor < pg->ntensors, "%s: collective "
                "%d of tensor %d", what, i, tp->coll[i].tensor);
        p.cstart[tp->coll[i].tensor + 1]++;
    }
    for (int t = 0; t < pg->ntensors; t++)
        p.cstart[t + 1] += p.cstart[t];
    for (int v = 0; v < pg->nops; v++) {
        const struct hg_pop *po = &pg->ops[v];
        int s = tp->op[v].set, outside = 0;
        prop_shards(&p, v);
        prop_layouts(&p, v);
        for (int k = 0; k < po->nin; k++)
            if (tp->op[v].in[k].kind != HG_TPL_ANY)
                prop_read(&p, po->in[k].tensor, s, tp->op[v].in[k], v);
        for (int k = 0; k < po->ncons; k++)
            outside |= tp->op[po->cons[k]].set != s;
        if (outside && po->out >= 0) /* whole on the lead */
            prop_read(&p, po->out, s, L_FULL, v);
    }
    for (int t = 0; t < pg->ntensors; t++)
        if (tp->tset[t] >= 0)
            split_ok(&p, t, tp->tlay[t], "tensor", t);
    prop_partial(&p);
    for (int i = 0; i < tp->ncoll; i++)
        prop_coll(&p, i);
    for (int i = 0; i < tp->ncoll; i++)
        PCHECK(p.used[i], "%s: collective %d (%s of tensor %d on set %d) serves no read",
              what, i, hg_tpc_kind_name(tp->coll[i].kind), tp->coll[i].tensor,
              tp->coll[i].set);
    tally.ops += pg->nops;
    tally.colls += tp->ncoll;
    free(p.cstart);
    free(p.used);
}

/* Every group TP: the whole graph, consecutive runs or ops scattered over
 * 2..6 groups; weights 0..8, or even (hgplan --tensor even), or one device
 * 8 and the rest 0 or 1 (empty shards of short axes). */
static struct hg_strategy *random_all_tp(const struct hg_pgraph *pg, uint64_t *rng)
{
    int shape = (int)(hg_rand(rng) % 3), nd = pg->ndev;
    int G = shape == 0 ? 1 : 2 + (int)(hg_rand(rng) % 5);
    struct hg_strategy *st = hg_strategy_new(pg->nops, nd, G);
    for (int v = 0; v < pg->nops; v++)
        st->group[v] = shape == 2 ? (int)(hg_rand(rng) % (uint64_t)G) : 0;
    if (shape == 1) /* G - 1 random cuts, ascending */
        for (int k = 1; k < G; k++)
            for (int v = (int)(hg_rand(rng) % (uint64_t)pg->nops); v < pg->nops; v++)
                st->group[v]++;
    for (int k = 0; k < G; k++) {
        struct hg_gcfg *g = &st->cfg[k];
        int kind = (int)(hg_rand(rng) % 4), even = 1 + (int)(hg_rand(rng) % 8), any = 0;
        int skew = kind == 0;
        memset(g, 0, sizeof(*g));
        g->mode = HG_MODE_TP;
        g->device = -1;
        for (int d = 0; d < nd; d++) {
            g->rep[d] = skew ? (int)(hg_rand(rng) % 2)
                        : kind == 1 ? even : (int)(hg_rand(rng) % 9);
            any |= g->rep[d];
        }
        if (skew || !any)
            g->rep[hg_rand(rng) % (uint64_t)nd] = 8;
        for (int d = nd - 1; d >= 0; d--) {
            tally.zero_w += g->rep[d] == 0;
            if (g->rep[d] > 0)
                g->device = d;
        }
    }
    return st;
}

/* n strategies on pg (seeded), each lowered by hg_lower_full and checked. */
static void prop_cases(const struct hg_pgraph *pg, const char *name, uint64_t seed, int n)
{
    struct pgidx x;
    uint64_t rng = seed;
    pgidx_build(&x, pg);
    for (int t = 0; t < pg->ntensors; t++)
        tally.varying += pg->tvary[t] != 0;
    for (int i = 0; i < n; i++) {
        struct hg_strategy *st = random_all_tp(pg, &rng);
        char what[160], err[512] = "";
        snprintf(what, sizeof(what), "%s on %d devices, strategy %d (seed %llu)", name,
                 pg->ndev, i, (unsigned long long)seed);
        struct hg_lowered *lw = hg_lower_new(pg);
        REQUIRE(hg_lower_full(lw, st, err, sizeof(err)) == 0, "%s: %s", what, err);
        prop_check(&x, lw, st, what);
        tally.strategies++;
        hg_lower_free(lw);
        hg_strategy_free(st);
    }
    tally.graphs++;
    pgidx_free(&x);
}

static struct hg_cluster *n_cpus(int n)
{
    char text[512];
    snprintf(text, sizeof(text), "nodes = ({ name = \"n\"; devices = ({ kind = \"cpu\"; "
             "count = %d; memory = \"1GiB\"; peak_flops = \"1TFLOP/s\"; }); intra = { kind = "
             "\"shm\"; bandwidth = \"10GB/s\"; latency = \"1us\"; }; });", n);
    return parse(text);
}

/* Self-attention unfused, over symbols: x[B,S,16] -> q, k, v -> scores
 * q k^T [B,S,S] (its N is the length) -> softmax -> . v -> . Wo -> times
 * a gain[1] (broadcast on every axis) -> sum.
 * A scores matmul whose q and k arrive whole (from another group) would
 * split the length by columns, but the length varies. */
static struct hg_graph *attention_graph(void)
{
    struct hg_graph *g = hg_graph_new();
    int64_t B = hg_graph_sym(g, "batch", 6), S = hg_graph_sym(g, "len", 10);
    int64_t xd[3] = {B, S, 16}, wd[2] = {16, 16};
    int x = hg_graph_input(g, "x", HG_F32, 3, xd, 0), qkv[3];
    for (int i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof(name), "w%d", i);
        qkv[i] = hg_matmul(g, x, hg_graph_param(g, name, 2, wd, HG_INIT_UNIFORM, 0.1f), 0, 0);
    }
    int p = hg_softmax(g, hg_matmul(g, qkv[0], qkv[1], 0, 1));
    int64_t one = 1;
    int wo = hg_graph_param(g, "wo", 2, wd, HG_INIT_UNIFORM, 0.1f);
    int gain = hg_graph_param(g, "gain", 1, &one, HG_INIT_UNIFORM, 0.1f); /* broadcast */
    int o = hg_matmul(g, hg_matmul(g, p, qkv[2], 0, 0), wo, 0, 0);
    int loss = hg_sum(g, hg_mul(g, o, gain), HG_AXIS_ALL);
    hg_graph_backward(g, loss);
    adamw_update(g);
    return g;
}

/* The tasks' graphs, an unfused attention and HeteroG's models on 2, 3
 * and 4 devices. */
static void test_properties(void)
{
    char dir[] = "/tmp/hg_test_tensor.XXXXXX";
    const char *names[] = {"mnist", "bert", "translation"};
    struct hg_cluster *c[3] = {n_cpus(2), n_cpus(3), n_cpus(4)};
    task_dicts(dir);
    for (int i = 0; i < 3; i++) {
        int64_t batch = 11 + 4 * i;
        struct hg_graph *g = task_graph(names[i], dir, batch, 12);
        for (int n = 0; n < 3; n++) {
            struct hg_pgraph *pg = pgraph(g, c[n], batch);
            prop_cases(pg, names[i], 4000 + 10 * (uint64_t)i + (uint64_t)n, 12);
            hg_pgraph_free(pg);
        }
        hg_graph_free(g);
    }
    task_dicts_remove(dir);
    struct hg_graph *ga = attention_graph();
    for (int n = 0; n < 3; n++) {
        struct hg_pgraph *pg = pgraph(ga, c[n], 6);
        prop_cases(pg, "attention", 4100 + (uint64_t)n, 30);
        hg_pgraph_free(pg);
    }
    hg_graph_free(ga);
    for (int i = 0; i < hg_n_model_specs; i++) {
        const struct hg_model_spec *m = &hg_model_specs[i];
        struct hg_model_opts mo = {.batch = 8, .seq = m->default_seq ? 16 : 0, .train = 1,
                                   .optim = HG_OPTIM_ADAMW};
        struct hg_graph *g = hg_graph_new();
        char err[512];
        REQUIRE(hg_model_build(g, m->name, &mo, err, sizeof(err)) >= 0, "%s", err);
        for (int n = 0; n < 3; n++) {
            struct hg_pgraph *pg = pgraph(g, c[n], 8);
            prop_cases(pg, m->name, 5000 + 10 * (uint64_t)i + (uint64_t)n, 10);
            hg_pgraph_free(pg);
        }
        hg_graph_free(g);
    }
    for (int n = 0; n < 3; n++)
        hg_cluster_free(c[n]);
    /* the cases the properties are about did occur */
    EXPECT(tally.empty > 0 && tally.zero_w > 0 && tally.varying > 0, "%ld empty shards, %ld "
           "weight-0 devices, %ld varying tensors", tally.empty, tally.zero_w, tally.varying);
    for (int k = 0; k <= HG_TPC_BCAST; k++)
        EXPECT(tally.kind[k] > 0, "no %s made", hg_tpc_kind_name((enum hg_tpc_kind)k));
    printf("properties: %ld strategies on %ld graphs, %ld ops, %ld reads and %ld collectives "
           "checked (%ld slice, %ld allgather, %ld reduce-scatter, %ld allreduce, %ld "
           "broadcast); %ld empty shards, %ld weight-0 devices, %ld tensors with varying "
           "axes; %ld failed\n", tally.strategies, tally.graphs, tally.ops, tally.reads,
           tally.colls, tally.kind[0], tally.kind[1], tally.kind[2], tally.kind[3], tally.kind[4],
           tally.empty, tally.zero_w, tally.varying, pbad);
}

int main(void)
{
    const char *s = getenv("HG_SRCDIR");
    if (s)
        snprintf(srcdir, sizeof(srcdir), "%s", s);
    test_split();
    test_mlp_and_file();
    test_executable();
    test_sim();
    test_models();
    test_tasks();
    test_properties();
    printf("%s: %d failure%s\n", __FILE__, failures, failures == 1 ? "" : "s");
    return failures ? 1 : 0;
}
