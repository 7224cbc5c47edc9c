/* test_planner.c - the planner room's foundation: cluster files (every
 * shipped example, every bad input), paths and channels, the roofline and
 * communication cost model (known values, monotonicity), HeteroG's models
 * (parameter counts and forward multiply-adds against published figures,
 * batch axes, phases, building allocates no tensors) and the JSON export
 * (well-formed, complete). */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "planner/hg_planner.h"
#include "tests/hg_test.h"

static char srcdir[4096] = ".";

static int near(double a, double b, double rel)
{
    return fabs(a - b) <= rel * fabs(b) + 1e-12;
}

/* ---------------------------------------------------------------- clusters */

static struct hg_cluster *load_example(const char *name)
{
    char path[4200], err[1024] = "";
    snprintf(path, sizeof(path), "%s/examples/clusters/%s", srcdir, name);
    struct hg_cluster *c = NULL;
    int rc = hg_cluster_load(&c, path, err, sizeof(err));
    EXPECT(rc == 0, "%s: %s", name, err);
    return c;
}

static void test_examples(void)
{
    static const struct {
        const char *file;
        int nodes, devs;
    } ex[] = {{"heterog-8gpu.cfg", 4, 8}, {"heterog-12gpu.cfg", 5, 12},
              {"hetseq-4node.cfg", 4, 16}, {"hetseq-8node.cfg", 8, 32},
              {"local.cfg", 1, 2}, {"shm-2cpu-slow3.cfg", 1, 2}, {"cuda1-cpu2.cfg", 1, 3},
              {"shm-2cpu-35mb.cfg", 1, 2}, {"shm-2cpu-slow2-40mb.cfg", 1, 2}};
    for (size_t i = 0; i < sizeof(ex) / sizeof(ex[0]); i++) {
        struct hg_cluster *c = load_example(ex[i].file);
        if (!c)
            continue;
        EXPECT(c->nnodes == ex[i].nodes && c->ndev == ex[i].devs, "%s: %d nodes, %d devices",
               ex[i].file, c->nnodes, c->ndev);
        /* every same-node pair has a link, rank order is node order */
        int pairs = 0;
        for (int n = 0; n < c->nnodes; n++)
            pairs += c->nodes[n].ndev * (c->nodes[n].ndev - 1) / 2;
        EXPECT(c->nlinks == pairs, "%s: %d links for %d pairs", ex[i].file, c->nlinks, pairs);
        for (int d = 1; d < c->ndev; d++)
            EXPECT(c->devices[d].node >= c->devices[d - 1].node, "%s: rank order", ex[i].file);
        double cap[64];
        EXPECT(hg_cluster_rank_capacities(c, cap, NULL, 0) == 0, "%s: capacities", ex[i].file);
        hg_cluster_free(c);
    }

    struct hg_cluster *c = load_example("heterog-8gpu.cfg");
    REQUIRE(c != NULL, "heterog-8gpu.cfg");
    EXPECT(strcmp(c->devices[0].name, "v100:0") == 0 && strcmp(c->devices[7].name, "p100-a:1") == 0,
           "names %s %s", c->devices[0].name, c->devices[7].name);
    EXPECT(c->devices[0].memory == 16LL << 30, "V100 memory %lld", (long long)c->devices[0].memory);
    EXPECT(near(c->devices[0].peak_flops, 15.7e12, 1e-12), "V100 peak %g", c->devices[0].peak_flops);
    EXPECT(near(c->devices[2].mem_bw, 484e9, 1e-12), "1080 Ti bandwidth %g", c->devices[2].mem_bw);
    EXPECT(near(c->nodes[0].nic_bw, 12.5e9, 1e-12) && near(c->nodes[1].nic_bw, 6.25e9, 1e-12),
           "NICs %g %g", c->nodes[0].nic_bw, c->nodes[1].nic_bw);
    double cap[8];
    REQUIRE(hg_cluster_rank_capacities(c, cap, NULL, 0) == 0, "capacities");
    EXPECT(cap[0] == 1 && cap[1] == 1 && near(cap[2], 11.3 / 15.7, 1e-9) &&
           near(cap[6], 9.3 / 15.7, 1e-9), "capacities %g %g %g %g", cap[0], cap[1], cap[2],
           cap[6]);

    /* paths: NVLink inside the V100 server, NIC->switch->NIC across */
    struct hg_path p;
    hg_cluster_path(c, 0, 1, &p);
    EXPECT(p.kind == HG_LINK_NVLINK && near(p.bw, 50e9, 1e-12) && p.nchan == 1,
           "v100 pair: %s %g", hg_link_kind_name(p.kind), p.bw);
    hg_cluster_path(c, 2, 3, &p);
    EXPECT(p.kind == HG_LINK_PCIE && near(p.bw, 12e9, 1e-12), "1080 Ti pair %g", p.bw);
    hg_cluster_path(c, 0, 2, &p);
    EXPECT(p.kind == HG_LINK_NET && near(p.bw, 6.25e9, 1e-12) && p.nchan == 3 &&
           near(p.lat, 5e-6, 1e-9), "v100 -> 1080 Ti: %g", p.bw);
    int up0 = 2 * c->nlinks, sw = 2 * c->nlinks + 2 * c->nnodes;
    EXPECT(p.chan[0] == up0 && p.chan[1] == sw && p.chan[2] == 2 * c->nlinks + 2 + 1,
           "channels %d %d %d", p.chan[0], p.chan[1], p.chan[2]);
    EXPECT(hg_cluster_n_channels(c) == sw + 1, "channel count");
    struct hg_path q;
    hg_cluster_path(c, 1, 0, &q);
    EXPECT(q.chan[0] != 0 || p.chan[0] != 0, "directions");
    hg_cluster_path(c, 0, 1, &p);
    EXPECT(p.chan[0] != q.chan[0], "the two directions of a link are two channels");
    hg_cluster_free(c);

    /* local.cfg: measured speeds win over peak FLOP/s */
    c = load_example("local.cfg");
    REQUIRE(c != NULL, "local.cfg");
    EXPECT(hg_cluster_rank_capacities(c, cap, NULL, 0) == 0 && cap[0] == 1 && cap[1] == 1,
           "local capacities");
    hg_cluster_path(c, 0, 1, &p);
    EXPECT(p.kind == HG_LINK_SHM, "local link %s", hg_link_kind_name(p.kind));
    hg_cluster_free(c);
}

/* A two-node cluster with the line of every key known; `extra` text
 * replaces the marker @X@ to break it. */
static const char *good_cluster =
    "name = \"t\";\n"                                                        /* 1 */
    "network = { switch_bandwidth = \"100Gbps\"; latency = \"5us\"; };\n"    /* 2 */
    "nodes = (\n"                                                            /* 3 */
    "  { name = \"a\"; nic_bandwidth = \"100Gbps\";\n"                       /* 4 */
    "    intra = { kind = \"nvlink\"; bandwidth = \"50GB/s\"; latency = 2e-6; };\n" /* 5 */
    "    devices = ( { kind = \"gpu\"; count = 2; memory = \"16GiB\";\n"     /* 6 */
    "                  peak_flops = 15.7e12; memory_bandwidth = 9e11; } ); },\n" /* 7 */
    "  { name = \"b\"; nic_bandwidth = 6.25e9;\n"                             /* 8 */
    "    devices = ( { kind = \"gpu\"; memory = 12884901888L;\n"             /* 9 */
    "                  peak_flops = \"9.3TFLOP/s\"; } ); }\n"                /* 10 */
    ");\n"                                                                   /* 11 */
    "links = ( { from = \"a:0\"; to = \"a:1\"; kind = \"pcie\"; bandwidth = \"12GB/s\"; } );\n"; /* 12 */

static char *replace(const char *s, const char *from, const char *to)
{
    const char *at = strstr(s, from);
    HG_CHECK(at != NULL);
    size_t n = strlen(s) - strlen(from) + strlen(to) + 1;
    char *r = malloc(n);
    HG_CHECK(r != NULL);
    snprintf(r, n, "%.*s%s%s", (int)(at - s), s, to, at + strlen(from));
    return r;
}

static void bad(const char *from, const char *to, const char *want1, const char *want2)
{
    char *text = replace(good_cluster, from, to);
    char err[1024] = "";
    struct hg_cluster *c = NULL;
    int rc = hg_cluster_parse(&c, text, "bad.cfg", err, sizeof(err));
    EXPECT(rc == -1 && c == NULL, "'%s' -> '%s' was accepted", from, to);
    EXPECT(strstr(err, want1) && (!want2 || strstr(err, want2)),
           "'%s' -> '%s': error '%s' lacks '%s' / '%s'", from, to, err, want1,
           want2 ? want2 : "");
    hg_cluster_free(c);
    free(text);
}

static void test_bad_clusters(void)
{
    char err[1024] = "";
    struct hg_cluster *c = NULL;
    REQUIRE(hg_cluster_parse(&c, good_cluster, "good.cfg", err, sizeof(err)) == 0,
            "the good cluster: %s", err);
    EXPECT(c->ndev == 3 && c->nlinks == 1 && !c->links[0].implicit &&
           c->links[0].kind == HG_LINK_PCIE, "explicit link wins over intra");
    EXPECT(c->devices[2].memory == 12884901888LL && c->devices[2].mem_bw == 0,
           "node b device");
    EXPECT(near(c->switch_bw, 12.5e9, 1e-12), "switch %g", c->switch_bw);
    hg_cluster_free(c);

    bad("name = \"t\";", "name = \"t\"; bogus = 1;", "bad.cfg:1:", "unknown key 'bogus'");
    bad("count = 2;", "count = 2; colour = \"red\";", "bad.cfg:6:", "unknown key 'colour'");
    bad("memory = \"16GiB\";", "", "bad.cfg:6:", "no 'memory'");
    bad("memory = \"16GiB\";", "memory = 0;", "bad.cfg:6:", "'memory' must be > 0");
    bad("from = \"a:0\"", "from = \"nope:0\"", "bad.cfg:12:", "no node named 'nope'");
    bad("to = \"a:1\"", "to = \"a:5\"", "bad.cfg:12:", "has no device 5");
    bad("to = \"a:1\"", "to = \"b:0\"", "bad.cfg:12:", "different nodes");
    bad("to = \"a:1\"", "to = \"a:0\"", "bad.cfg:12:", "to itself");
    bad("to = \"a:1\"", "to = \"a1\"", "bad.cfg:12:", "node:index");
    bad("bandwidth = \"12GB/s\"", "bandwidth = -5.0", "bad.cfg:12:", "'bandwidth' must be > 0");
    bad("bandwidth = \"50GB/s\"", "bandwidth = 0", "bad.cfg:5:", "'bandwidth' must be > 0");
    bad("nic_bandwidth = 6.25e9", "nic_bandwidth = -1.0", "bad.cfg:8:", "must be > 0");
    bad("nic_bandwidth = 6.25e9;", "", "node 'b'", "no 'nic_bandwidth'");
    bad("switch_bandwidth = \"100Gbps\"", "switch_bandwidth = \"100 parsecs\"", "bad.cfg:2:",
        "unknown unit");
    bad("latency = \"5us\"", "latency = -1.0", "bad.cfg:2:", "'latency' must be >= 0");
    bad("network = {", "netwerk = {", "bad.cfg:2:", "unknown key 'netwerk'");
    bad("network = { switch_bandwidth = \"100Gbps\"; latency = \"5us\"; };", "", "bad.cfg:",
        "need a 'network'");
    bad("kind = \"gpu\"; count", "kind = \"tpu\"; count", "bad.cfg:6:", "expected gpu or cpu");
    bad("kind = \"nvlink\"", "kind = \"smoke\"", "bad.cfg:5:", "nvlink, pcie or shm");
    bad("peak_flops = \"9.3TFLOP/s\";", "", "bad.cfg:9:", "give 'peak_flops'");
    bad("count = 2;", "count = 0;", "bad.cfg:6:", "'count'");
    bad("name = \"b\";", "name = \"a\";", "bad.cfg:8:", "used twice");
    bad("links = (", "links = ( { from = \"a:1\"; to = \"a:0\"; kind = \"shm\"; "
        "bandwidth = 1e9; },", "bad.cfg:12:", "given twice");
    {   /* no intra and no link for a pair (the explicit link covers a:0-a:1) */
        char *t1 = replace(good_cluster, "count = 2", "count = 3");
        char *t2 = replace(t1, "    intra = { kind = \"nvlink\"; bandwidth = \"50GB/s\"; latency = 2e-6; };\n", "");
        EXPECT(hg_cluster_parse(&c, t2, "bad.cfg", err, sizeof(err)) == -1 &&
               strstr(err, "no link between a:0 and a:2"), "3 devices, one link: %s", err);
        free(t1);
        free(t2);
    }
    bad("nodes = (", "nodes = ( 5,", "bad.cfg:", "not a group");
    bad("devices = ( { kind = \"gpu\"; memory = 12884901888L;",
        "devices = ( { kind = \"gpu\"; memory = true;", "bad.cfg:9:", "expected a size");
    /* syntax errors and files that are not there */
    EXPECT(hg_cluster_parse(&c, "nodes = ( { name = ", "syn.cfg", err, sizeof(err)) == -1 &&
           strncmp(err, "syn.cfg:1:", 10) == 0, "syntax error: %s", err);
    EXPECT(hg_cluster_load(&c, "/nonexistent/x.cfg", err, sizeof(err)) == -1 &&
           strstr(err, "/nonexistent/x.cfg: cannot read"), "missing file: %s", err);
    EXPECT(hg_cluster_parse(&c, "name = \"x\";", "e.cfg", err, sizeof(err)) == -1 &&
           strstr(err, "no 'nodes'"), "no nodes: %s", err);
    /* capacities need one measure on every device */
    REQUIRE(hg_cluster_parse(&c, "nodes = ( { name = \"n\"; intra = { kind = \"shm\"; "
                             "bandwidth = 1e9; }; devices = ( { kind = \"cpu\"; memory = 1e9; "
                             "speed = 2.0; }, { kind = \"cpu\"; memory = 1e9; speed = 1.0; "
                             "peak_flops = 1e11; } ); } );", "s.cfg", err, sizeof(err)) == 0,
            "speeds: %s", err);
    double cap[2];
    EXPECT(hg_cluster_rank_capacities(c, cap, err, sizeof(err)) == 0 && cap[0] == 1 &&
           cap[1] == 0.5, "speeds %g %g", cap[0], cap[1]);
    c->devices[1].speed = 0; /* now device 0 has no peak_flops to fall back on */
    EXPECT(hg_cluster_rank_capacities(c, cap, err, sizeof(err)) == -1 && strstr(err, "n:0"),
           "mixed: %s", err);
    hg_cluster_free(c);
}

/* ---------------------------------------------------------------- cost model */

static void test_cost(void)
{
    struct hg_pdevice v100 = {.kind = HG_DEV_GPU, .peak_flops = 15.7e12, .mem_bw = 900e9};
    struct hg_cost big = {.flops = 1e12, .bytes = 1e9};
    double t = hg_cost_op_time(&v100, HG_OP_MATMUL, &big);
    EXPECT(near(t, 1e12 / (15.7e12 * hg_op_eff_table[HG_OP_MATMUL].flops) +
                   HG_LAUNCH_OVERHEAD_GPU, 1e-12), "compute-bound matmul %g", t);
    struct hg_cost stream = {.flops = 1e6, .bytes = 4e9};
    t = hg_cost_op_time(&v100, HG_OP_ADD, &stream);
    EXPECT(near(t, 4e9 / (900e9 * hg_op_eff_table[HG_OP_ADD].bytes) + HG_LAUNCH_OVERHEAD_GPU,
                1e-12), "memory-bound add %g", t);
    struct hg_cost none = {0, 0};
    EXPECT(hg_cost_op_time(&v100, HG_OP_RELU, &none) == HG_LAUNCH_OVERHEAD_GPU, "launch only");
    struct hg_pdevice p100 = v100;
    p100.peak_flops = 9.3e12;
    p100.mem_bw = 549e9;
    struct hg_pdevice nopeak = {.kind = HG_DEV_GPU, .speed = 1};
    EXPECT(hg_cost_op_time(&nopeak, HG_OP_MATMUL, &big) == -1, "no peak: -1");
    for (int op = 0; op < HG_OP_COUNT; op++) {
        EXPECT(hg_op_eff_table[op].flops > 0 && hg_op_eff_table[op].flops <= 1 &&
               hg_op_eff_table[op].bytes > 0 && hg_op_eff_table[op].bytes <= 1,
               "eff row %s", hg_op_table[op].name);
        /* monotone: more work costs more, a faster device costs less */
        double prev = 0;
        for (double s = 1e3; s <= 1e12; s *= 10) {
            struct hg_cost c = {.flops = s, .bytes = s / 8};
            double a = hg_cost_op_time(&v100, (enum hg_op)op, &c);
            double b = hg_cost_op_time(&p100, (enum hg_op)op, &c);
            EXPECT(a >= prev && b >= a, "%s at %g: %g then %g, p100 %g",
                   hg_op_table[op].name, s, prev, a, b);
            prev = a;
        }
    }

    struct hg_path p = {.bw = 10e9, .lat = 1e-5};
    EXPECT(near(hg_cost_transfer(&p, 1e9), 1e-5 + 0.1, 1e-12), "transfer");
    EXPECT(hg_cost_transfer(&p, 0) == 0, "empty transfer");
    EXPECT(near(hg_cost_ring_allreduce(4, 1e9, 1e10, 0), 0.15, 1e-12), "ring 4");
    EXPECT(near(hg_cost_ring_allreduce(2, 1e9, 1e10, 1e-6), 0.1 + 2e-6, 1e-12), "ring 2");
    EXPECT(hg_cost_ring_allreduce(1, 1e9, 1e10, 1e-6) == 0, "ring 1");

    char path[4200], err[1024];
    snprintf(path, sizeof(path), "%s/examples/clusters/heterog-12gpu.cfg", srcdir);
    struct hg_cluster *c;
    REQUIRE(hg_cluster_load(&c, path, err, sizeof(err)) == 0, "%s", err);
    int all[12], v[4] = {0, 1, 2, 3};
    for (int i = 0; i < 12; i++)
        all[i] = i;
    /* 4 V100 on NVLink: the plain ring formula at 50 GB/s, 2 us */
    EXPECT(near(hg_cost_allreduce_ring(c, v, 4, 1e9), hg_cost_ring_allreduce(4, 1e9, 50e9, 2e-6),
                1e-12), "nvlink ring %g", hg_cost_allreduce_ring(c, v, 4, 1e9));
    EXPECT(near(hg_cost_allreduce_hier(c, v, 4, 1e9), hg_cost_allreduce_ring(c, v, 4, 1e9),
                1e-12), "hierarchical on one node = ring");
    /* all 12: the ring crosses each 50 GbE NIC once each way */
    double ring = hg_cost_allreduce_ring(c, all, 12, 1e9);
    EXPECT(near(ring, hg_cost_ring_allreduce(12, 1e9, 6.25e9, 1e-5), 1e-12), "12-GPU ring %g",
           ring);
    /* hierarchical pays the intra-node phases in full; with 2-GPU nodes on
     * PCIe (12 GB/s, only 2x the 50 GbE NIC) that costs more than it saves:
     * 2*(1/2)/12e9 + 2*(4/5)/6.25e9 > 2*(11/12)/6.25e9 per byte */
    double hier = hg_cost_allreduce_hier(c, all, 12, 1e9);
    EXPECT(near(hier, 1e9 / 12e9 + 20e-6 + hg_cost_ring_allreduce(5, 1e9, 6.25e9, 5e-6), 1e-9)
           && hier > ring, "hierarchical %g vs ring %g on the 12-GPU testbed", hier, ring);
    /* monotone in bytes */
    double prev = 0;
    for (double b = 1e3; b <= 1e10; b *= 10) {
        double r = hg_cost_allreduce_ring(c, all, 12, b), h = hg_cost_allreduce_hier(c, all, 12, b);
        double s = hg_cost_ps(c, all, 12, 0, b);
        EXPECT(r > prev && h > 0 && s > 0, "bytes %g: ring %g hier %g ps %g", b, r, h, s);
        prev = r;
    }
    /* PS on v100:0 for v100:1: push and pull over NVLink */
    int two[2] = {0, 1};
    EXPECT(near(hg_cost_ps(c, two, 2, 0, 1e9), 2 * (1e9 / 50e9) + 2 * 2e-6, 1e-12), "ps pair");
    /* PS for all 12 on v100:0: 8 remote workers share its 100 GbE NIC */
    EXPECT(near(hg_cost_ps(c, all, 12, 0, 1e9), 2 * (8e9 / 12.5e9) + 2 * 5e-6, 1e-12),
           "ps 12 on v100:0: %g", hg_cost_ps(c, all, 12, 0, 1e9));
    /* ... on a 50 GbE node it is slower */
    EXPECT(hg_cost_ps(c, all, 12, 4, 1e9) > hg_cost_ps(c, all, 12, 0, 1e9), "ps placement");
    hg_cluster_free(c);

    /* HetSeq's 8 nodes of 4 GPUs on 10 GbE: hierarchical wins */
    snprintf(path, sizeof(path), "%s/examples/clusters/hetseq-8node.cfg", srcdir);
    REQUIRE(hg_cluster_load(&c, path, err, sizeof(err)) == 0, "%s", err);
    int a32[32];
    for (int i = 0; i < 32; i++)
        a32[i] = i;
    ring = hg_cost_allreduce_ring(c, a32, 32, 1e9);
    hier = hg_cost_allreduce_hier(c, a32, 32, 1e9);
    EXPECT(near(ring, hg_cost_ring_allreduce(32, 1e9, 1.25e9, 20e-6), 1e-12) && hier < ring,
           "hetseq-8node: hierarchical %g < ring %g", hier, ring);
    hg_cluster_free(c);
}

/* ---------------------------------------------------------------- models */

static double conv_mm_flops(const struct hg_graph *g)
{
    double f = 0;
    struct hg_shape in[HG_MAX_INPUTS], out;
    for (int n = 0; n < hg_graph_n_nodes(g); n++) {
        const struct hg_node_info *nd = hg_graph_node(g, n);
        if (nd->phase != HG_PH_FORWARD || (nd->op != HG_OP_CONV2D && nd->op != HG_OP_MATMUL))
            continue;
        for (int i = 0; i < nd->n_in; i++)
            in[i] = hg_graph_tensor(g, nd->in[i])->shape;
        out = hg_graph_tensor(g, nd->out)->shape;
        struct hg_cost c = {0, 0};
        hg_op_table[nd->op].cost(in, nd->n_in, &out, &nd->attr, &c);
        f += c.flops;
    }
    return f;
}

static void test_models(void)
{
    char err[1024];
    printf("%-14s %14s %14s %7s %10s %10s %7s\n", "model", "params", "published", "err",
           "GMACs/smp", "published", "err");
    for (int i = 0; i < hg_n_model_specs; i++) {
        const struct hg_model_spec *s = &hg_model_specs[i];
        struct hg_graph *g = hg_graph_new();
        /* small batch and sequence: the counts are per sample anyway */
        struct hg_model_opts o = {.batch = 2, .seq = s->default_seq ? 16 : 0, .train = 1,
                                  .optim = s->default_seq ? HG_OPTIM_ADAMW : HG_OPTIM_SGD};
        int loss = hg_model_build(g, s->name, &o, err, sizeof(err));
        EXPECT(loss >= 0, "%s: %s", s->name, err);
        if (loss < 0) {
            hg_graph_free(g);
            continue;
        }
        double params = (double)hg_graph_param_count(g);
        double macs = conv_mm_flops(g) / 2 / 2; /* FLOPs -> MACs, per sample */
        printf("%-14s %14.0f %14.0f %6.2f%% %10.3f %10.3f %6.2f%%\n", s->name, params,
               s->pub_params, s->pub_params ? 100 * (params / s->pub_params - 1) : 0,
               macs / 1e9, s->pub_macs / 1e9,
               s->pub_macs ? 100 * (macs / s->pub_macs - 1) : 0);
        if (s->pub_params > 0)
            EXPECT(near(params, s->pub_params, s->tol), "%s: %.0f params, published %.0f",
                   s->name, params, s->pub_params);
        if (s->pub_macs > 0)
            EXPECT(near(macs, s->pub_macs, s->tol), "%s: %.3g MACs, published %.3g",
                   s->name, macs, s->pub_macs);
        /* the loss is [1]; phases all present; the inputs carry the batch */
        EXPECT(hg_shape_numel(&hg_graph_tensor(g, loss)->shape) == 1, "%s loss", s->name);
        int ph[8] = {0};
        for (int n = 0; n < hg_graph_n_nodes(g); n++)
            ph[hg_graph_node(g, n)->phase]++;
        EXPECT(ph[HG_PH_FORWARD] > 0 && ph[HG_PH_BACKWARD] > 0 &&
               ph[HG_PH_UPDATE] == hg_graph_n_params(g), "%s phases %d %d %d", s->name,
               ph[HG_PH_FORWARD], ph[HG_PH_BACKWARD], ph[HG_PH_UPDATE]);
        int batched = 0, inputs = 0;
        for (int t = 0; t < hg_graph_n_tensors(g); t++) {
            const struct hg_tensor_info *ti = hg_graph_tensor(g, t);
            if (ti->kind == HG_T_INPUT && ti->shape.ndim >= 1 && ti->shape.dim[0] == 2) {
                inputs++;
                batched += ti->batch_axis == 0;
            }
        }
        EXPECT(inputs > 0 && batched == inputs, "%s: %d of %d batch inputs have axis 0",
               s->name, batched, inputs);
        /* the per-sample forward FLOPs do not depend on the batch */
        struct hg_cost f2;
        hg_graph_cost_phase(g, HG_PH_FORWARD, &f2);
        struct hg_graph *g8 = hg_graph_new();
        o.batch = 8;
        REQUIRE(hg_model_build(g8, s->name, &o, err, sizeof(err)) >= 0, "%s", err);
        struct hg_cost f8;
        hg_graph_cost_phase(g8, HG_PH_FORWARD, &f8);
        EXPECT(near(f8.flops, 4 * f2.flops, 0.02), "%s: batch 8 %g vs 4 x batch 2 %g", s->name,
               f8.flops, 4 * f2.flops);
        EXPECT(hg_graph_param_count(g8) == hg_graph_param_count(g), "%s params vs batch",
               s->name);
        hg_graph_free(g8);
        hg_graph_free(g);
    }
    /* BERT-large 48 has 24 more layers of 12.6M parameters */
    struct hg_graph *a = hg_graph_new(), *b = hg_graph_new();
    struct hg_model_opts o = {.batch = 1, .seq = 8};
    REQUIRE(hg_model_build(a, "bert_large", &o, err, sizeof(err)) >= 0 &&
            hg_model_build(b, "bert_large48", &o, err, sizeof(err)) >= 0, "%s", err);
    EXPECT(hg_graph_param_count(b) - hg_graph_param_count(a) == 24LL * 12596224,
           "bert 48 - 24 layers: %lld", (long long)(hg_graph_param_count(b) - hg_graph_param_count(a)));
    hg_graph_free(a);
    hg_graph_free(b);

    /* building allocates no tensor storage: ResNet-200 at HeteroG's
     * largest batch (576) has ~700 GB of activations */
    struct rusage r0, r1;
    getrusage(RUSAGE_SELF, &r0);
    struct hg_graph *g = hg_graph_new();
    struct hg_model_opts big = {.batch = 576, .train = 1, .optim = HG_OPTIM_SGD};
    REQUIRE(hg_model_build(g, "resnet200", &big, err, sizeof(err)) >= 0, "%s", err);
    double act = 0;
    for (int t = 0; t < hg_graph_n_tensors(g); t++) {
        const struct hg_tensor_info *ti = hg_graph_tensor(g, t);
        if (ti->kind == HG_T_ACT)
            act += 4.0 * (double)hg_shape_numel(&ti->shape);
    }
    getrusage(RUSAGE_SELF, &r1);
    EXPECT(act > 1e11 && (r1.ru_maxrss - r0.ru_maxrss) < 200 * 1024,
           "resnet200@576: %.0f GB of activations, max RSS grew %ld KiB", act / 1e9,
           r1.ru_maxrss - r0.ru_maxrss);
    hg_graph_free(g);

    g = hg_graph_new();
    EXPECT(hg_model_build(g, "alexnet", NULL, err, sizeof(err)) == -1 &&
           strstr(err, "unknown model") && strstr(err, "resnet200"), "unknown: %s", err);
    hg_graph_free(g);
}

/* ---------------------------------------------------------------- JSON */

/* A strict recursive-descent JSON checker: returns the end or NULL. */
static const char *ws(const char *p)
{
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
        p++;
    return p;
}

static const char *jvalue(const char *p, int depth);

static const char *jstring(const char *p)
{
    if (*p != '"')
        return NULL;
    for (p++; *p != '"'; p++) {
        if (!*p || (unsigned char)*p < 0x20)
            return NULL;
        if (*p == '\\') {
            p++;
            if (*p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!isxdigit((unsigned char)p[i]))
                        return NULL;
                p += 4;
            } else if (!strchr("\"\\/bfnrt", *p) || !*p) {
                return NULL;
            }
        }
    }
    return p + 1;
}

static const char *jnumber(const char *p)
{
    const char *s = p;
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (isdigit((unsigned char)*p))
        while (isdigit((unsigned char)*p))
            p++;
    else
        return NULL;
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p))
            return NULL;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!isdigit((unsigned char)*p))
            return NULL;
        while (isdigit((unsigned char)*p))
            p++;
    }
    return p > s ? p : NULL;
}

static const char *jvalue(const char *p, int depth)
{
    if (depth > 64)
        return NULL;
    p = ws(p);
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        int obj = *p == '{';
        p = ws(p + 1);
        if (*p == close)
            return p + 1;
        for (;;) {
            if (obj) {
                p = jstring(ws(p));
                if (!p)
                    return NULL;
                p = ws(p);
                if (*p++ != ':')
                    return NULL;
            }
            p = jvalue(p, depth + 1);
            if (!p)
                return NULL;
            p = ws(p);
            if (*p == ',') {
                p++;
                continue;
            }
            return *p == close ? p + 1 : NULL;
        }
    }
    if (*p == '"')
        return jstring(p);
    if (strncmp(p, "true", 4) == 0 || strncmp(p, "null", 4) == 0)
        return p + 4;
    if (strncmp(p, "false", 5) == 0)
        return p + 5;
    return jnumber(p);
}

static int json_ok(const char *s)
{
    const char *e = jvalue(s, 0);
    return e && *ws(e) == 0;
}

static void test_json(void)
{
    EXPECT(json_ok("{\"a\": [1, -2.5e3, \"x\\n\", true, null, {}]}"), "checker accepts");
    EXPECT(!json_ok("{\"a\": [1, 2,]}") && !json_ok("{\"a\" 1}") && !json_ok("[01]") &&
           !json_ok("{\"a\": nan}") && !json_ok("[1] x"), "checker rejects");
    char err[1024];
    const char *models[] = {"resnet50", "bert_large"};
    for (int m = 0; m < 2; m++) {
        struct hg_graph *g = hg_graph_new();
        struct hg_model_opts o = {.batch = 2, .seq = 8, .train = 1, .optim = HG_OPTIM_ADAMW};
        REQUIRE(hg_model_build(g, models[m], &o, err, sizeof(err)) >= 0, "%s", err);
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        REQUIRE(f != NULL, "memstream");
        EXPECT(hg_graph_export_json(g, models[m], 2, f) == 0, "export");
        fclose(f);
        EXPECT(json_ok(buf), "%s: the export is not well-formed JSON", models[m]);
        EXPECT(strstr(buf, "\"format\": \"hgplan-graph\"") && strstr(buf, "\"version\": 1") &&
               strstr(buf, "\"phase\": \"forward\"") && strstr(buf, "\"phase\": \"backward\"") &&
               strstr(buf, "\"phase\": \"update\"") && strstr(buf, "\"kind\": \"grad\"") &&
               strstr(buf, "\"kind\": \"state\"") && strstr(buf, "\"batch_axis\": 0") &&
               strstr(buf, "{\"name\": \"batch\", \"value\": 2}"), "%s: fields", models[m]);
        /* one entry per op and per tensor */
        int nops = 0, nts = 0;
        for (const char *p = buf; (p = strstr(p, "\"phase\": ")); p++)
            nops++;
        for (const char *p = buf; (p = strstr(p, "\"batch_axis\": ")); p++)
            nts++;
        EXPECT(nops == hg_graph_n_nodes(g) && nts == hg_graph_n_tensors(g),
               "%s: %d ops (%d), %d tensors (%d)", models[m], nops, hg_graph_n_nodes(g), nts,
               hg_graph_n_tensors(g));
        free(buf);
        hg_graph_free(g);
    }
}

int main(void)
{
    const char *s = getenv("HG_SRCDIR");
    if (s)
        snprintf(srcdir, sizeof(srcdir), "%s", s);
    test_examples();
    test_bad_clusters();
    test_cost();
    test_models();
    test_json();
    printf("%s: %d failure%s\n", __FILE__, failures, failures == 1 ? "" : "s");
    return failures ? 1 : 0;
}
