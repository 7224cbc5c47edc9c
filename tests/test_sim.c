/* test_sim.c - the planner's simulator, scheduler, strategy file and
 * search: hand-checkable graphs (a chain on one device, data parallelism
 * on two), OOM, list scheduling vs FIFO on a fork-join graph, delta ==
 * full simulation on random one-group changes, MCMC determinism, the
 * pipeline search (deterministic, never worse than its start, its result
 * lowered and executable, data-parallel stages reached on four GPUs), the
 * strategy file's round trip and its errors. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/hg_planner.h"
#include "tests/hg_test.h"

static char srcdir[4096] = ".";

static const char *two_gpu =
    "nodes = ({ name = \"n\"; devices = ({ kind = \"gpu\"; count = 2; memory = \"%s\";"
    " peak_flops = \"10TFLOP/s\"; memory_bandwidth = \"500GB/s\"; });"
    " intra = { kind = \"nvlink\"; bandwidth = \"25GB/s\"; latency = \"2us\"; }; });";

static struct hg_cluster *cluster2(const char *mem)
{
    char txt[1024], err[512] = "";
    snprintf(txt, sizeof(txt), two_gpu, mem);
    struct hg_cluster *c = NULL;
    REQUIRE(hg_cluster_parse(&c, txt, "two", err, sizeof(err)) == 0, "%s", err);
    return c;
}

static struct hg_cluster *example(const char *name)
{
    char path[4200], err[512] = "";
    snprintf(path, sizeof(path), "%s/examples/clusters/%s", srcdir, name);
    struct hg_cluster *c = NULL;
    REQUIRE(hg_cluster_load(&c, path, err, sizeof(err)) == 0, "%s", err);
    return c;
}

/* The prices of the planner graphs pgraph built, freed with them (pfree). */
static struct {
    const struct hg_pgraph *pg;
    struct hg_pprice *pr;
} priced[8];

static struct hg_pgraph *pgraph(struct hg_graph *g, struct hg_cluster *c, int64_t b)
{
    char err[512] = "";
    REQUIRE(hg_graph_resolve(g, NULL, err, sizeof(err)) == 0, "%s", err);
    struct hg_pgraph *pg = NULL;
    REQUIRE(hg_pgraph_build(&pg, g, c, "test", b, err, sizeof(err)) == 0, "%s", err);
    size_t i = 0;
    while (i < sizeof(priced) / sizeof(priced[0]) && priced[i].pg)
        i++;
    REQUIRE(i < sizeof(priced) / sizeof(priced[0]), "more than 8 planner graphs at once");
    REQUIRE(hg_pprice_build(&priced[i].pr, pg, g, err, sizeof(err)) == 0, "%s", err);
    priced[i].pg = pg;
    return pg;
}

static struct hg_pprice *price_of(const struct hg_pgraph *pg)
{
    for (size_t i = 0; i < sizeof(priced) / sizeof(priced[0]); i++)
        if (priced[i].pg == pg)
            return priced[i].pr;
    REQUIRE(0, "a planner graph without prices");
    return NULL;
}

static struct hg_sim *sim_new(const struct hg_pgraph *pg)
{
    return hg_sim_new(pg, price_of(pg));
}

static void pfree(struct hg_pgraph *pg)
{
    for (size_t i = 0; i < sizeof(priced) / sizeof(priced[0]); i++)
        if (priced[i].pg == pg) {
            hg_pprice_free(priced[i].pr);
            priced[i].pg = NULL;
            priced[i].pr = NULL;
        }
    hg_pgraph_free(pg);
}

/* Op v's price on device d: a, b. */
static double pa(const struct hg_pgraph *pg, int v, int d)
{
    return price_of(pg)->a[hg_pprice_at(price_of(pg), v, d)];
}

static double pb(const struct hg_pgraph *pg, int v, int d)
{
    return price_of(pg)->b[hg_pprice_at(price_of(pg), v, d)];
}

/* one group per op, MP on dev[v] */
static struct hg_strategy *per_op(const struct hg_pgraph *pg, const int *dev)
{
    struct hg_strategy *s = hg_strategy_new(pg->nops, pg->ndev, pg->nops);
    for (int v = 0; v < pg->nops; v++) {
        s->group[v] = v;
        hg_gcfg_mp(&s->cfg[v], dev ? dev[v] : 0);
    }
    return s;
}

static void test_chain(void)
{
    struct hg_cluster *c = cluster2("16GiB");
    struct hg_graph *g = hg_graph_new();
    int64_t d[2] = {64, 4096};
    int x = hg_graph_input(g, "x", HG_F32, 2, d, 0);
    hg_relu(g, hg_relu(g, hg_relu(g, x)));
    struct hg_pgraph *pg = pgraph(g, c, 64);
    EXPECT(pg->nops == 3, "%d ops", pg->nops);
    struct hg_strategy *s = per_op(pg, NULL);
    struct hg_sim *sim = sim_new(pg);
    struct hg_sim_result r;
    hg_sim_full(sim, s, &r);
    double want = 0;
    for (int v = 0; v < 3; v++) {
        struct hg_cost cost = {0, 0};
        struct hg_shape in = hg_graph_tensor(g, hg_graph_node(g, v)->in[0])->shape;
        struct hg_shape out = hg_graph_tensor(g, hg_graph_node(g, v)->out)->shape;
        hg_op_table[HG_OP_RELU].cost(&in, 1, &out, &hg_graph_node(g, v)->attr, &cost);
        want += hg_cost_op_time(&c->devices[0], HG_OP_RELU, &cost);
    }
    EXPECT(fabs(r.iter_s - want) <= 1e-12 * want, "chain: %.9g s, want %.9g", r.iter_s, want);
    EXPECT(r.oom == 0 && r.ntasks == 3, "chain: oom %d, %ld tasks", r.oom, r.ntasks);
    /* input 1 MiB static, two live activations at most */
    int64_t mb = 64 * 4096 * 4;
    EXPECT(r.peak[0] == 3 * mb && r.peak[1] == 0, "chain peak %lld %lld", (long long)r.peak[0],
           (long long)r.peak[1]);
    hg_strategy_free(s);
    hg_sim_free(sim);
    pfree(pg);
    hg_graph_free(g);
    hg_cluster_free(c);
}

static struct hg_graph *linear_train(int64_t B)
{
    struct hg_graph *g = hg_graph_new();
    int64_t xd[2] = {B, 512};
    int x = hg_graph_input(g, "x", HG_F32, 2, xd, 0);
    int y = hg_graph_input(g, "y", HG_I32, 1, &B, 0);
    int64_t wd[2] = {512, 1000};
    int w = hg_graph_param(g, "w", 2, wd, HG_INIT_UNIFORM, 0.1f);
    int loss = hg_cross_entropy(g, hg_matmul(g, x, w, 0, 0), y, -100, 0.f);
    hg_graph_backward(g, loss);
    union hg_attr h = {0};
    h.sgd.momentum = 0.9f;
    hg_graph_optimizer(g, HG_OPTIM_SGD, &h);
    return g;
}

static void test_dp2(void)
{
    struct hg_cluster *c = cluster2("16GiB");
    struct hg_graph *g = linear_train(256);
    struct hg_pgraph *pg = pgraph(g, c, 256);
    struct hg_strategy *s = hg_strategy_new(pg->nops, pg->ndev, 1);
    hg_gcfg_even(&s->cfg[0], c, HG_AGG_AR);
    struct hg_sim *sim = sim_new(pg);
    struct hg_sim_result r, r1;
    hg_sim_full(sim, s, &r);
    /* every op depends on the one before: the sum of half the batch ops,
     * whole non-batch ops, and one AllReduce of the weight's gradient */
    double want = 0, full = 0;
    int chain = 1;
    for (int v = 0; v < pg->nops; v++) {
        const struct hg_pop *o = &pg->ops[v];
        want += o->batch ? pa(pg, v, 0) + pb(pg, v, 0) / 2 : pa(pg, v, 0);
        full += pa(pg, v, 0) + pb(pg, v, 0);
        if (v > 0) {
            int dep = 0;
            for (int k = 0; k < o->nin; k++)
                dep |= o->in[k].op == v - 1;
            chain &= dep;
        }
        if (o->out_grad) {
            int devs[2] = {0, 1};
            double ring = hg_cost_allreduce_ring(c, devs, 2, (double)o->out_bytes);
            double hier = hg_cost_allreduce_hier(c, devs, 2, (double)o->out_bytes);
            /* less the part of the latency its share of a 25 MiB bucket saves */
            double f = (double)o->out_bytes / (25.0 * 1024 * 1024);
            double lat = ring < hier ? hg_cost_allreduce_ring(c, devs, 2, 1)
                                     : hg_cost_allreduce_hier(c, devs, 2, 1);
            want += (ring < hier ? ring : hier) - (f < 1 ? (1 - f) * lat : 0);
            EXPECT(ring > 0, "allreduce cost");
        }
    }
    (void)chain; /* the loss seed branch joins later; the times still add up */
    EXPECT(fabs(r.iter_s - want) <= 1e-9 * want, "dp2: %.9g s, want %.9g", r.iter_s, want);
    /* one device: the sum of the whole ops, no aggregation */
    hg_gcfg_mp(&s->cfg[0], 1);
    hg_sim_full(sim, s, &r1);
    EXPECT(fabs(r1.iter_s - full) <= 1e-9 * full, "mp: %.9g s, want %.9g", r1.iter_s, full);
    EXPECT(r1.peak[0] == 0 && r1.peak[1] > 0, "mp memory on device 1 only");
    /* OOM: the same on 1 MB devices */
    struct hg_cluster *tiny = cluster2("1MB");
    struct hg_pgraph *pt = pgraph(g, tiny, 256);
    struct hg_sim *st = sim_new(pt);
    hg_sim_full(st, s, &r1);
    EXPECT(r1.oom == 1 && r1.overflow > 0, "tiny: oom %d", r1.oom);
    EXPECT(hg_search_cost(&r1) > 1e3, "an OOM strategy costs more than any feasible one");
    hg_gcfg_even(&s->cfg[0], c, HG_AGG_PS);
    hg_sim_full(st, s, &r1);
    EXPECT(r1.oom == 2, "tiny dp: oom %d", r1.oom);
    hg_sim_free(st);
    pfree(pt);
    hg_cluster_free(tiny);
    hg_strategy_free(s);
    hg_sim_free(sim);
    pfree(pg);
    hg_graph_free(g);
    hg_cluster_free(c);
}

static void test_forkjoin(void)
{
    struct hg_cluster *c = cluster2("16GiB");
    struct hg_graph *g = hg_graph_new();
    int64_t xd[2] = {512, 2048}, wd[2] = {2048, 2048};
    int x = hg_graph_input(g, "x", HG_F32, 2, xd, 0);
    int w1 = hg_graph_param(g, "w1", 2, wd, HG_INIT_UNIFORM, 1);
    int w2 = hg_graph_param(g, "w2", 2, wd, HG_INIT_UNIFORM, 1);
    int w3 = hg_graph_param(g, "w3", 2, wd, HG_INIT_UNIFORM, 1);
    int r = hg_relu(g, x);                    /* 0 dev0 */
    int s1 = hg_matmul(g, r, w3, 0, 0);       /* 1 dev0: short branch, lower id */
    int l1 = hg_matmul(g, r, w1, 0, 0);       /* 2 dev0 */
    int l2 = hg_matmul(g, l1, w2, 0, 0);      /* 3 dev1 */
    hg_add(g, l2, s1);                        /* 4 dev0 */
    struct hg_pgraph *pg = pgraph(g, c, 512);
    int dev[5] = {0, 0, 0, 1, 0};
    struct hg_strategy *s = per_op(pg, dev);
    struct hg_sim *sim = sim_new(pg);
    struct hg_sim_result rr, rf, rb;
    hg_sim_full(sim, s, &rr);
    hg_sched_order(sim, pg, s, HG_SCHED_FIFO);
    hg_sim_full(sim, s, &rf);
    hg_sched_order(sim, pg, s, HG_SCHED_RANK);
    hg_sim_full(sim, s, &rr);
    EXPECT(rr.iter_s < rf.iter_s, "fork-join: rank %.6g s, FIFO %.6g s", rr.iter_s, rf.iter_s);
    EXPECT(s->order[1] == 2, "rank runs the long branch first (order[1] = %d)", s->order[1]);
    enum hg_sched_policy pol;
    hg_sched_best(sim, pg, s, &rb, &pol);
    EXPECT(rb.iter_s <= rf.iter_s && rb.iter_s <= rr.iter_s && pol == HG_SCHED_RANK,
           "best %.6g", rb.iter_s);
    char err[256];
    EXPECT(hg_strategy_check(s, pg, err, sizeof(err)) == 0, "%s", err);
    hg_strategy_free(s);
    hg_sim_free(sim);
    pfree(pg);
    hg_graph_free(g);
    hg_cluster_free(c);
}

static struct hg_graph *model(const char *name, int64_t batch)
{
    struct hg_graph *g = hg_graph_new();
    char err[512];
    struct hg_model_opts mo = {.batch = batch, .train = 1, .optim = HG_OPTIM_SGD};
    REQUIRE(hg_model_build(g, name, &mo, err, sizeof(err)) >= 0, "%s", err);
    return g;
}

static int same(const struct hg_sim_result *a, const struct hg_sim_result *b, int ndev)
{
    if (memcmp(&a->iter_s, &b->iter_s, sizeof(double)) != 0 || a->oom != b->oom ||
        a->ntasks != b->ntasks)
        return 0;
    for (int d = 0; d < ndev; d++)
        if (a->peak[d] != b->peak[d])
            return 0;
    return 1;
}

/* A new strategy of pg in `groups` op groups, every group as baseline b. */
static struct hg_strategy *baseline(const struct hg_pgraph *pg, int groups, enum hg_baseline b)
{
    struct hg_strategy *s = hg_strategy_new(pg->nops, pg->ndev, 1);
    hg_strategy_group(s, pg, price_of(pg), groups);
    hg_baseline_apply(s, pg, b);
    return s;
}

/* rec: recomputation on in every other group of the seed */
static void test_delta(const char *name, const char *cl, int64_t batch, int ngroups, int rec)
{
    struct hg_cluster *c = example(cl);
    struct hg_graph *g = model(name, batch);
    struct hg_pgraph *pg = pgraph(g, c, batch);
    struct hg_strategy *s = baseline(pg, ngroups, HG_BASE_CP_AR);
    EXPECT(s->ngroups == ngroups, "%s: %d groups", name, s->ngroups);
    for (int k = 0; k < s->ngroups && rec; k += 2)
        s->cfg[k].recompute = 1;
    struct hg_sim *sd = sim_new(pg), *sf = sim_new(pg);
    struct hg_sim_result rd, rf;
    hg_sched_best(sd, pg, s, &rd, NULL);
    uint64_t rng = 42;
    int bad = 0;
    for (int i = 0; i < 150; i++) {
        int k;
        struct hg_gcfg nc;
        hg_propose_random(NULL, pg, s, &rng, &k, &nc);
        s->cfg[k] = nc;
        hg_sim_delta(sd, s, k, &rd);
        hg_sim_full(sf, s, &rf);
        if (!same(&rd, &rf, pg->ndev) && bad++ < 3)
            EXPECT(0, "%s change %d (group %d): delta %.17g s, full %.17g s", name, i, k,
                   rd.iter_s, rf.iter_s);
    }
    EXPECT(bad == 0, "%s: %d of 150 delta simulations differ", name, bad);
    hg_strategy_free(s);
    hg_sim_free(sd);
    hg_sim_free(sf);
    pfree(pg);
    hg_graph_free(g);
    hg_cluster_free(c);
}

/* Recomputation in every group: less memory on every device, more time
 * (each droppable forward op runs twice), more tasks; ResNet-200 at batch 384
 * on the 8-GPU testbed (HeteroG: every DP baseline OOM) fits. */
static void test_recompute(void)
{
    struct hg_cluster *c = example("heterog-8gpu.cfg");
    const struct {
        const char *name;
        int64_t batch;
    } cases[] = {{"resnet50", 64}, {"resnet200", 384}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct hg_graph *g = model(cases[i].name, cases[i].batch);
        struct hg_pgraph *pg = pgraph(g, c, cases[i].batch);
        struct hg_strategy *s = baseline(pg, 64, HG_BASE_CP_AR);
        struct hg_sim *sim = sim_new(pg);
        struct hg_sim_result r0, r1;
        hg_sim_full(sim, s, &r0);
        for (int k = 0; k < s->ngroups; k++)
            s->cfg[k].recompute = 1;
        hg_sim_full(sim, s, &r1);
        int64_t p0 = 0, p1 = 0;
        for (int d = 0; d < pg->ndev; d++) {
            p0 = r0.peak[d] > p0 ? r0.peak[d] : p0;
            p1 = r1.peak[d] > p1 ? r1.peak[d] : p1;
        }
        EXPECT(p1 < p0 * 6 / 10, "%s/%lld: recomputation peak %.2f GB, without %.2f GB",
               cases[i].name, (long long)cases[i].batch, p1 / 1e9, p0 / 1e9);
        EXPECT(r1.iter_s > r0.iter_s && r1.iter_s < 1.5 * r0.iter_s && r1.ntasks > r0.ntasks,
               "%s: recomputation %.4f s (%ld tasks), without %.4f s (%ld tasks)",
               cases[i].name, r1.iter_s, r1.ntasks, r0.iter_s, r0.ntasks);
        if (cases[i].batch == 384)
            EXPECT(r0.oom > 0 && r1.oom == 0, "resnet200/384: OOM devices %d without, %d with "
                   "recomputation", r0.oom, r1.oom);
        printf("recompute %s/%lld CP-AR: %.4f s, peak %.2f GB -> %.4f s, peak %.2f GB%s\n",
               cases[i].name, (long long)cases[i].batch, r0.iter_s, p0 / 1e9, r1.iter_s,
               p1 / 1e9, r1.oom ? " (OOM)" : "");
        hg_strategy_free(s);
        hg_sim_free(sim);
        pfree(pg);
        hg_graph_free(g);
    }
    hg_cluster_free(c);
}

/* hg_sched_best keeps the order a strategy came with where neither list
 * schedule is faster: inception_v3's CP-AR baseline on the 8-GPU testbed
 * in graph order (the forward layer by layer, then the backward) beats
 * both; the result is never slower than any of the three. */
static void test_sched_own(void)
{
    struct hg_cluster *c = example("heterog-8gpu.cfg");
    struct hg_graph *g = model("inception_v3", 64);
    struct hg_pgraph *pg = pgraph(g, c, 64);
    struct hg_strategy *s = baseline(pg, 64, HG_BASE_CP_AR);
    struct hg_strategy *rank = hg_strategy_copy(s), *fifo = hg_strategy_copy(s);
    int *own = malloc((size_t)pg->nops * sizeof(int)); /* [nops] */
    REQUIRE(own != NULL, "malloc");
    memcpy(own, s->order, (size_t)pg->nops * sizeof(int));
    struct hg_sim *sim = sim_new(pg);
    struct hg_sim_result r0, rr, rf, rb;
    hg_sim_full(sim, s, &r0);
    hg_sched_order(sim, pg, rank, HG_SCHED_RANK);
    hg_sched_order(sim, pg, fifo, HG_SCHED_FIFO);
    hg_sim_full(sim, rank, &rr);
    hg_sim_full(sim, fifo, &rf);
    enum hg_sched_policy pol;
    hg_sched_best(sim, pg, s, &rb, &pol);
    EXPECT(pol == HG_SCHED_OWN && r0.iter_s < rr.iter_s && r0.iter_s < rf.iter_s,
           "own order %.6g s, rank %.6g s, FIFO %.6g s: kept %d", r0.iter_s, rr.iter_s,
           rf.iter_s, (int)pol);
    EXPECT(rb.iter_s == r0.iter_s && memcmp(s->order, own, (size_t)pg->nops * sizeof(int)) == 0,
           "kept the own order: %.6g s, order changed %d", rb.iter_s,
           memcmp(s->order, own, (size_t)pg->nops * sizeof(int)) != 0);
    /* from the rank order, the own order is the rank order: kept, no slower */
    hg_sched_best(sim, pg, rank, &rb, &pol);
    EXPECT(rb.iter_s <= rr.iter_s, "from rank's order %.6g s, best %.6g s", rr.iter_s,
           rb.iter_s);
    printf("sched inception_v3/64 CP-AR on 8 GPUs: own %.4f s, rank %.4f s, FIFO %.4f s\n",
           r0.iter_s, rr.iter_s, rf.iter_s);
    free(own);
    hg_strategy_free(s);
    hg_strategy_free(rank);
    hg_strategy_free(fifo);
    hg_sim_free(sim);
    pfree(pg);
    hg_graph_free(g);
    hg_cluster_free(c);
}

static void test_mcmc(void)
{
    struct hg_cluster *c = example("heterog-8gpu.cfg");
    struct hg_graph *g = model("vgg19", 64);
    struct hg_pgraph *pg = pgraph(g, c, 64);
    struct hg_strategy *seed = baseline(pg, 24, HG_BASE_EV_PS);
    struct hg_sim *sim = sim_new(pg);
    struct hg_sim_result r0;
    hg_sched_best(sim, pg, seed, &r0, NULL);
    struct hg_search_opts o = {.max_iters = 400, .seed = 7};
    struct hg_search_stats st1, st2;
    struct hg_strategy *a = hg_strategy_copy(seed), *b = hg_strategy_copy(seed);
    hg_search_mcmc(sim, pg, a, &o, &st1);
    hg_search_mcmc(sim, pg, b, &o, &st2);
    EXPECT(st1.iters == 400 && st1.best_cost == st2.best_cost &&
           memcmp(a->cfg, b->cfg, (size_t)a->ngroups * sizeof(struct hg_gcfg)) == 0,
           "mcmc is not deterministic: %.9g vs %.9g", st1.best_cost, st2.best_cost);
    EXPECT(st1.best_cost <= hg_search_cost(&r0), "mcmc %.6g worse than its seed %.6g",
           st1.best_cost, hg_search_cost(&r0));
    printf("mcmc vgg19/64 on 8 GPUs: EV-PS %.4f s -> %.4f s (%ld proposals, %ld improvements)\n",
           r0.iter_s, st1.best_cost, st1.iters, st1.improved);
    /* restricted to what hgtrain executes (hgtrain --plan mcmc): the
     * restricted search never leaves that set (its proposals that would
     * are skipped: asserted below), and is just as deterministic and never
     * worse than its seed */
    const unsigned dpmp = HG_EXEC_DP | HG_EXEC_MP;
    EXPECT(hg_strategy_executable(seed, dpmp), "the seed EV-PS is not executable");
    struct hg_search_opts ox = {.max_iters = 400, .seed = 7, .executable = dpmp};
    struct hg_strategy *xa = hg_strategy_copy(seed), *xb = hg_strategy_copy(seed);
    struct hg_search_stats sx1, sx2;
    hg_search_mcmc(sim, pg, xa, &ox, &sx1);
    hg_search_mcmc(sim, pg, xb, &ox, &sx2);
    EXPECT(hg_strategy_executable(xa, dpmp) && sx1.iters == 400 && sx1.stop == HG_SEARCH_STOP_ITERS &&
           sx1.skipped > 0 && sx1.skipped < sx1.iters && sx1.best_cost == sx2.best_cost &&
           memcmp(xa->cfg, xb->cfg, (size_t)xa->ngroups * sizeof(struct hg_gcfg)) == 0 &&
           sx1.best_cost <= hg_search_cost(&r0),
           "executable mcmc: executable %d, %ld proposals (%ld skipped), %.9g vs %.9g, seed "
           "%.9g", hg_strategy_executable(xa, dpmp), sx1.iters, sx1.skipped, sx1.best_cost,
           sx2.best_cost, hg_search_cost(&r0));
    printf("mcmc vgg19/64 on 8 GPUs, executable only: %.4f s (%ld proposals, %ld skipped, "
           "%ld improvements)\n", sx1.best_cost, sx1.iters, sx1.skipped, sx1.improved);
    /* data parallel only (hgtrain --plan mcmc with --update-freq > 1 or on
     * GPUs): the same search never reaches a model-parallel strategy */
    struct hg_search_opts od = {.max_iters = 400, .seed = 7, .executable = HG_EXEC_DP};
    struct hg_strategy *xd = hg_strategy_copy(seed);
    struct hg_search_stats sd;
    hg_search_mcmc(sim, pg, xd, &od, &sd);
    EXPECT(hg_strategy_executable(xd, HG_EXEC_DP) && sd.skipped > sx1.skipped &&
           !hg_strategy_executable(seed, HG_EXEC_MP),
           "data-parallel-only mcmc: executable %d, %ld skipped (%ld with MP)",
           hg_strategy_executable(xd, HG_EXEC_DP), sd.skipped, sx1.skipped);
    /* AllReduce only (a job over NCCL): from EV-AR, never a PS group */
    const unsigned nops = HG_EXEC_DP | HG_EXEC_NOPS;
    struct hg_strategy *xn = hg_strategy_copy(seed);
    hg_baseline_apply(xn, pg, HG_BASE_EV_AR);
    EXPECT(hg_strategy_executable(xn, nops) && !hg_strategy_executable(seed, nops),
           "NOPS: EV-AR %d, EV-PS %d", hg_strategy_executable(xn, nops),
           hg_strategy_executable(seed, nops));
    struct hg_search_opts on = {.max_iters = 400, .seed = 7, .executable = nops};
    struct hg_search_stats sn;
    hg_search_mcmc(sim, pg, xn, &on, &sn);
    int nps = 0;
    for (int k = 0; k < xn->ngroups; k++)
        nps += xn->cfg[k].mode == HG_MODE_DP && xn->cfg[k].agg == HG_AGG_PS;
    EXPECT(nps == 0 && sn.skipped > 0 && hg_strategy_executable(xn, nops),
           "AllReduce-only mcmc: %d PS groups, %ld skipped", nps, sn.skipped);
    hg_strategy_free(xn);
    hg_strategy_free(xd);
    hg_strategy_free(xa);
    hg_strategy_free(xb);
    /* round trip through the file */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    REQUIRE(f != NULL, "open_memstream");
    struct hg_sim_result ra;
    a->cfg[0].recompute = a->cfg[a->ngroups - 1].recompute = 1;
    hg_sim_full(sim, a, &ra);
    EXPECT(hg_strategy_save(a, pg, "heterog-8gpu.cfg", &ra, NULL, f) == 0, "save");
    fclose(f);
    struct hg_strategy *l = NULL;
    char err[1024] = "";
    EXPECT(hg_strategy_parse(&l, buf, "plan.cfg", pg, err, sizeof(err)) == 0, "%s", err);
    if (l) {
        struct hg_sim_result rl;
        hg_sim_full(sim, l, &rl);
        EXPECT(same(&ra, &rl, pg->ndev), "round trip: %.9g vs %.9g s", ra.iter_s, rl.iter_s);
        EXPECT(memcmp(l->order, a->order, (size_t)a->nops * sizeof(int)) == 0 &&
               memcmp(l->group, a->group, (size_t)a->nops * sizeof(int)) == 0,
               "round trip: order or groups differ");
        for (int k = 0; k < a->ngroups; k++)
            EXPECT(l->cfg[k].recompute == a->cfg[k].recompute, "round trip: group %d recompute",
                   k);
        hg_strategy_free(l);
    }
    /* errors */
    static const struct {
        const char *from, *to, *want;
    } bad[] = {
        {"n_ops = ", "n_ops = 1", "n_ops = 1"},
        {"version = 1", "version = 2", "version 2"},
        {"mode = \"dp\"", "mode = \"xx\"", "mode \"xx\""},
        {"id = 0; ops = (", "id = 0; ops = (100000, ", "op 100000 does not exist"},
        {"aggregate =", "bogus = 1; aggregate =", "unknown key 'bogus'"},
        {"recompute = true;", "recompute = 1;", "recompute is an integer, expected true or false"},
        /* made for another batch or cluster */
        {"batch = ", "batch = 1", "the strategy splits a batch of"},
        {"devices = [", "devices = [\"extra:0\", ", "cluster.devices lists"},
        {"devices = [\"", "devices = [\"x", "cluster.devices[0] is 'x"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *at = strstr(buf, bad[i].from);
        REQUIRE(at != NULL, "%s not in the file", bad[i].from);
        size_t n = strlen(buf) + strlen(bad[i].to) + 1;
        char *t = malloc(n);
        REQUIRE(t != NULL, "malloc");
        snprintf(t, n, "%.*s%s%s", (int)(at - buf), buf, bad[i].to, at + strlen(bad[i].from));
        err[0] = 0;
        EXPECT(hg_strategy_parse(&l, t, "plan.cfg", pg, err, sizeof(err)) != 0 &&
               strstr(err, bad[i].want) && strstr(err, "plan.cfg:"),
               "error %zu: '%s' lacks '%s'", i, err, bad[i].want);
        free(t);
    }
    {
        char t[512];
        snprintf(t, sizeof(t), "version = 1; graph = { n_ops = %d; };\ngroups = ( { ops = "
                 "(\"0-%d\"); mode = \"mp\"; device = \"nope:3\"; } );", pg->nops, pg->nops - 1);
        EXPECT(hg_strategy_parse(&l, t, "plan.cfg", pg, err, sizeof(err)) != 0 &&
               strstr(err, "nope:3") && strstr(err, "plan.cfg:2"), "missing device: '%s'", err);
        snprintf(t, sizeof(t), "version = 1; graph = { n_ops = %d; };\ngroups = ( { ops = "
                 "(\"1-%d\"); split = \"even\"; mode = \"dp\"; } );", pg->nops, pg->nops - 1);
        EXPECT(hg_strategy_parse(&l, t, "plan.cfg", pg, err, sizeof(err)) != 0 &&
               strstr(err, "op 0 is in no group"), "missing op: '%s'", err);
        snprintf(t, sizeof(t), "version = 1; graph = { n_ops = %d; };\ngroups = ( { ops = "
                 "(\"0-%d\"); split = \"even\"; mode = \"dp\"; } );", pg->nops, pg->nops - 1);
        EXPECT(hg_strategy_parse(&l, t, "plan.cfg", pg, err, sizeof(err)) == 0, "%s", err);
        hg_strategy_free(l);
    }
    {
        /* a key of another type is an error naming the file, the group and
         * the key, never the key's default (aggregate = 7 was AllReduce) */
        char t[1024], dev0[96];
        snprintf(dev0, sizeof(dev0), "mode = \"mp\"; device = \"%s\";", c->devices[0].name);
        /* head: a format of the graph's op count */
        static const char *const hdr = "version = 1; graph = { n_ops = %d; };";
        static const char *const dp = "mode = \"dp\"; split = \"even\"; ";
        const struct {
            const char *head, *mode, *keys, *tail, *want;
        } typed[] = {
            {hdr, dp, "aggregate = 7;", "",
             "group 0: aggregate is an integer, expected a string \"allreduce\" or \"ps\""},
            {hdr, dp, "aggregate = 1;", "", "group 0: aggregate is an integer"},
            {hdr, dp, "allreduce = 5;", "",
             "group 0: allreduce is an integer, expected a string \"ring\" or \"hierarchical\""},
            {hdr, dp, "aggregate = \"ps\"; ps = 5;", "",
             "group 0: ps is an integer, expected a string (a device name)"},
            {hdr, dp, "aggregate = \"allreduce\"; allreduce = true;", "",
             "group 0: allreduce is a boolean"},
            {hdr, "mode = \"dp\"; ", "split = 1;", "", "group 0: split is an integer"},
            {hdr, "mode = \"dp\"; ", "replicas = \"v100:0\";", "",
             "group 0: replicas is a string, expected a list"},
            {hdr, "mode = 1; ", "", "", "group 0: mode is an integer, expected a string"},
            {hdr, "mode = \"mp\"; ", "device = 3;", "", "group 0: device is an integer"},
            {hdr, dev0, "aggregate = 7;", "", "group 0: aggregate is an integer"},
            {hdr, dp, "id = \"0\";", "", "group 0: id is a string, expected an integer"},
            {hdr, dp, "recompute = \"yes\";", "",
             "group 0: recompute is a string, expected true or false"},
            {hdr, dp, "", " order = (0);", "order is a list, expected an array"},
            {hdr, dp, "", " predicted = 1.5;",
             "predicted is a number with a fraction, expected a group"},
            {"version = \"1\"; graph = { n_ops = %d; };", dp, "", "",
             "version is a string, expected an integer"},
            {"version = 1; graph = 1;", dp, "", "", "graph is an integer, expected a group"},
            {"version = 1; graph = { n_ops = \"%d\"; };", dp, "", "",
             "graph: n_ops is a string, expected an integer"},
            {"version = 1; graph = { n_ops = %d; batch = 1.5; };", dp, "", "",
             "graph: batch is a number with a fraction, expected an integer"},
            {"version = 1; graph = { n_ops = %d; bogus = 1; };", dp, "", "",
             "graph: unknown key 'bogus'"},
            {"version = 1; cluster = { name = 1; }; graph = { n_ops = %d; };", dp, "", "",
             "cluster: name is an integer, expected a string"},
            {"version = 1; cluster = { devices = 8; }; graph = { n_ops = %d; };", dp, "", "",
             "cluster: devices is an integer, expected a list of device names"},
            {"version = 1; cluster = { bogus = 8; }; graph = { n_ops = %d; };", dp, "", "",
             "cluster: unknown key 'bogus'"},
        };
        for (size_t i = 0; i < sizeof(typed) / sizeof(typed[0]); i++) {
            char head[160];
            snprintf(head, sizeof(head), typed[i].head, pg->nops);
            snprintf(t, sizeof(t), "%s\ngroups = ( { ops = (\"0-%d\"); %s%s } );%s", head,
                     pg->nops - 1, typed[i].mode, typed[i].keys, typed[i].tail);
            err[0] = 0;
            EXPECT(hg_strategy_parse(&l, t, "plan.cfg", pg, err, sizeof(err)) != 0 &&
                   strstr(err, typed[i].want) && strstr(err, "plan.cfg:"),
                   "typed %zu: '%s' lacks '%s'", i, err, typed[i].want);
        }
        char head[160];
        snprintf(head, sizeof(head), hdr, pg->nops);
        /* a device list of integers, as many as the cluster's devices */
        size_t n = (size_t)snprintf(t, sizeof(t), "version = 1; cluster = { devices = [");
        for (int d = 0; d < pg->ndev && n < sizeof(t); d++)
            n += (size_t)snprintf(t + n, sizeof(t) - n, "%s%d", d ? ", " : "", d);
        snprintf(t + n, sizeof(t) - n, "]; }; graph = { n_ops = %d; };\ngroups = ( { ops = "
                 "(\"0-%d\"); %s } );", pg->nops, pg->nops - 1, dp);
        EXPECT(hg_strategy_parse(&l, t, "plan.cfg", pg, err, sizeof(err)) != 0 &&
               strstr(err, "cluster.devices[0] is an integer, expected a string"),
               "devices: '%s'", err);
        snprintf(t, sizeof(t), "%s\ngroups = ( { ops = 5; %s } );", head, dp);
        EXPECT(hg_strategy_parse(&l, t, "plan.cfg", pg, err, sizeof(err)) != 0 &&
               strstr(err, "group 0: ops is an integer, expected a list"), "ops: '%s'", err);
    }
    /* infeasible: a DP group without replicas, an order that breaks a dependency */
    struct hg_strategy *z = hg_strategy_copy(a);
    z->cfg[0].mode = HG_MODE_DP;
    memset(z->cfg[0].rep, 0, sizeof(z->cfg[0].rep));
    EXPECT(hg_strategy_check(z, pg, err, sizeof(err)) != 0 && strstr(err, "group 0"), "%s", err);
    hg_strategy_free(z);
    z = hg_strategy_copy(a);
    int t0 = z->order[0];
    z->order[0] = z->order[1];
    z->order[1] = t0;
    EXPECT(hg_strategy_check(z, pg, err, sizeof(err)) != 0 && strstr(err, "order"), "%s", err);
    hg_strategy_free(z);
    free(buf);
    hg_strategy_free(a);
    hg_strategy_free(b);
    hg_strategy_free(seed);
    hg_sim_free(sim);
    pfree(pg);
    hg_graph_free(g);
    hg_cluster_free(c);
}

/* The pipeline search (planner/pipe_plan.c) on HeteroG's 8 GPUs of three
 * speeds: deterministic, never worse than its start, and every strategy it
 * returns a pipeline the lowering takes and hgtrain's split executor runs,
 * its stages disjoint sets of devices covering the cluster.  On 4 GPUs its
 * moves reach a data-parallel stage. */
static int pipe_search_case(const char *model_name, struct hg_cluster *c, const char *cl,
                            int64_t B, int iters)
{
    struct hg_graph *g = model(model_name, B);
    struct hg_pgraph *pg = pgraph(g, c, B);
    struct hg_sim *sim = sim_new(pg);
    char err[256] = "";
    int P = pg->ndev;
    struct hg_strategy *st = hg_pipe_baseline(pg, price_of(pg), HG_PIPE_SPEED, 0, 4 * P,
                                              HG_SCHED_1F1B, err, sizeof err);
    REQUIRE(st, "PIPE-S of %s on %s: %s", model_name, cl, err);
    struct hg_sim_result r0, ra, rb;
    hg_sim_full(sim, st, &r0);
    struct hg_strategy *a = hg_pipe_search(sim, pg, st, iters, 0, 5, &ra);
    struct hg_strategy *b = hg_pipe_search(sim, pg, st, iters, 0, 5, &rb);
    EXPECT(memcmp(&ra.iter_s, &rb.iter_s, sizeof(double)) == 0 && a->ngroups == b->ngroups &&
           a->nmicro == b->nmicro && memcmp(a->group, b->group, (size_t)pg->nops * sizeof(int)) == 0,
           "the pipeline search is not deterministic: %.9g vs %.9g", ra.iter_s, rb.iter_s);
    EXPECT(hg_search_cost(&ra) <= hg_search_cost(&r0), "the search %.6g is worse than its start %.6g",
           hg_search_cost(&ra), hg_search_cost(&r0));
    EXPECT(a->nmicro >= 1 && a->ngroups >= 2 && hg_strategy_executable(a, HG_EXEC_SPLIT),
           "the search's result: M %d, %d stages, executable %d", a->nmicro, a->ngroups,
           hg_strategy_executable(a, HG_EXEC_SPLIT));
    struct hg_lowered *lw = hg_lower_new(pg);
    EXPECT(hg_lower_full(lw, a, err, sizeof err) == 0, "the search's result does not lower: %s",
           err);
    hg_lower_free(lw);
    int used[HG_PLAN_MAXDEV] = {0}, ndp = 0;
    for (int k = 0; k < a->ngroups; k++) {
        const struct hg_gcfg *q = &a->cfg[k];
        int n = 0;
        for (int d = 0; d < pg->ndev; d++)
            if (q->mode == HG_MODE_MP ? q->device == d : q->rep[d] > 0) {
                used[d]++;
                n++;
            }
        ndp += n > 1;
    }
    for (int d = 0; d < pg->ndev; d++)
        EXPECT(used[d] == 1, "device %d is in %d stages", d, used[d]);
    printf("pipeline search %s/%lld on %s: PIPE-S %.4f s -> %.4f s (%d stages, %d data "
           "parallel, M %d, %s)\n", model_name, (long long)B, cl, r0.iter_s, ra.iter_s,
           a->ngroups, ndp, a->nmicro, hg_pipe_sched_name(a->sched));
    hg_strategy_free(a);
    hg_strategy_free(b);
    hg_strategy_free(st);
    hg_sim_free(sim);
    pfree(pg);
    hg_graph_free(g);
    hg_cluster_free(c);
    return ndp;
}

static const char four_gpu[] =
    "nodes = ({ name = \"n0\"; devices = ("
    " { kind = \"gpu\"; model = \"v100\"; count = 1; memory = \"16GiB\";"
    " peak_flops = \"15TFLOP/s\"; memory_bandwidth = \"900GB/s\"; },"
    " { kind = \"gpu\"; model = \"k80\"; count = 3; memory = \"12GiB\";"
    " peak_flops = \"4TFLOP/s\"; memory_bandwidth = \"240GB/s\"; });"
    " intra = { kind = \"nvlink\"; bandwidth = \"25GB/s\"; latency = \"2us\"; }; });";

static void test_pipe_search(void)
{
    pipe_search_case("vgg19", example("heterog-8gpu.cfg"), "heterog-8gpu.cfg", 64, 300);
    pipe_search_case("transformer", example("heterog-12gpu.cfg"), "heterog-12gpu.cfg", 64, 300);
    /* two losses summed into a scalar: it goes with its producers' stage
     * (it went to stage 0, and the forward came back to it) */
    struct hg_cluster *c8 = example("heterog-8gpu.cfg");
    struct hg_graph *g = model("bert_large", 48);
    struct hg_pgraph *pg = pgraph(g, c8, 48);
    char err[256] = "";
    struct hg_strategy *u = hg_pipe_baseline(pg, NULL, HG_PIPE_UNIFORM, 0, 32, HG_SCHED_1F1B,
                                             err, sizeof err);
    EXPECT(u != NULL, "bert_large's uniform pipeline on 8 GPUs: %s", err);
    hg_strategy_free(u);
    pfree(pg);
    hg_graph_free(g);
    hg_cluster_free(c8);
    const char *m[] = {"vgg19", "resnet50", "transformer", "inception_v3"};
    int ndp = 0;
    for (int i = 0; i < 4; i++) {
        char err[512] = "";
        struct hg_cluster *c = NULL;
        REQUIRE(hg_cluster_parse(&c, four_gpu, "four", err, sizeof(err)) == 0, "%s", err);
        ndp += pipe_search_case(m[i], c, "four GPUs", 64, 300);
    }
    EXPECT(ndp > 0, "no pipeline search on four GPUs made a data-parallel stage");
}

int main(void)
{
    const char *s = getenv("HG_SRCDIR");
    if (s)
        snprintf(srcdir, sizeof(srcdir), "%s", s);
    test_chain();
    test_dp2();
    test_forkjoin();
    test_delta("resnet50", "heterog-8gpu.cfg", 32, 40, 0);
    test_delta("vgg19", "heterog-12gpu.cfg", 48, 30, 0);
    test_delta("resnet50", "heterog-8gpu.cfg", 32, 40, 1);
    test_delta("transformer", "heterog-12gpu.cfg", 64, 30, 1);
    test_recompute();
    test_sched_own();
    test_mcmc();
    test_pipe_search();
    printf("%s: %d failure%s\n", __FILE__, failures, failures == 1 ? "" : "s");
    return failures ? 1 : 0;
}
