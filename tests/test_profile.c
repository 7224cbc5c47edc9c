/* test_profile.c - the profiler's library half: the fit recovers known a
 * and b (exact and noisy data, clamps, refusals); the profile file round
 * trips and bad files give errors naming the file, line and key; op
 * signatures are one per batch size; the cost model and the simulator use
 * profiled times where present (op by op, time_share, the measured
 * AllReduce and point-to-point fits) and the roofline elsewhere; the tcp
 * fits (hgplan --profile-links tcp) price the paths between nodes,
 * AllReduce over one device per node and a PS among them, and a profile of
 * links only loads; a small graph measured with the executor gives an
 * entry per (op, signature). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "planner/hg_planner.h"
#include "tests/hg_test.h"

static int close_to(double x, double y, double rel)
{
    return fabs(x - y) <= rel * fabs(y) + 1e-300;
}

/* ------------------------------------------------------------ the fit */

static void test_fit(void)
{
    struct hg_prof_fit f;
    double x[6] = {8, 16, 24, 32, 48, 96}, t[6];
    const double a = 2.5e-4, b = 3.1e-6;
    for (int i = 0; i < 6; i++)
        t[i] = a + b * x[i];
    REQUIRE(hg_prof_fit_line(x, t, 6, &f) == 0, "exact data refused");
    EXPECT(close_to(f.a, a, 1e-9) && close_to(f.b, b, 1e-9), "exact: a %g b %g", f.a, f.b);
    EXPECT(f.rmax < 1e-9, "exact: rmax %g", f.rmax);
    /* +-3% of deterministic noise: a and b within a few percent */
    const double noise[6] = {0.03, -0.03, 0.02, -0.01, 0.03, -0.02};
    for (int i = 0; i < 6; i++)
        t[i] = (a + b * x[i]) * (1 + noise[i]);
    REQUIRE(hg_prof_fit_line(x, t, 6, &f) == 0, "noisy data refused");
    EXPECT(close_to(f.a, a, 0.15) && close_to(f.b, b, 0.05), "noisy: a %g b %g", f.a, f.b);
    EXPECT(f.rmax > 0.005 && f.rmax < 0.1, "noisy: rmax %g", f.rmax);
    /* a link: latency 2 us, 10 GB/s, over four decades of sizes: the
     * relative weights keep the latency */
    double bx[5] = {1024, 16384, 262144, 4194304, 16777216}, bt[5];
    for (int i = 0; i < 5; i++)
        bt[i] = 2e-6 + bx[i] / 1e10;
    REQUIRE(hg_prof_fit_line(bx, bt, 5, &f) == 0, "link refused");
    EXPECT(close_to(f.a, 2e-6, 1e-6) && close_to(1 / f.b, 1e10, 1e-6), "link: %g s, %g B/s",
           f.a, 1 / f.b);
    /* clamps: a line through a negative intercept is refitted through the
     * origin; a falling one is flat */
    double cx[3] = {10, 20, 30}, ct[3] = {1e-6, 3e-6, 5e-6};
    REQUIRE(hg_prof_fit_line(cx, ct, 3, &f) == 0, "clamp a");
    EXPECT(f.a == 0 && f.b > 0, "negative intercept: a %g b %g", f.a, f.b);
    double dt[3] = {5e-6, 4e-6, 3e-6};
    REQUIRE(hg_prof_fit_line(cx, dt, 3, &f) == 0, "clamp b");
    EXPECT(f.b == 0 && f.a > 3e-6 && f.a < 5e-6, "falling: a %g b %g", f.a, f.b);
    /* one point, or every x alike: a constant */
    REQUIRE(hg_prof_fit_line(cx, ct, 1, &f) == 0, "one point");
    EXPECT(f.a == ct[0] && f.b == 0, "one point: a %g b %g", f.a, f.b);
    /* refusals */
    double z[2] = {1e-3, 0}, nanv[2] = {1e-3, NAN}, nx[2] = {-1, 2};
    EXPECT(hg_prof_fit_line(cx, z, 2, &f) != 0, "a time of 0 accepted");
    EXPECT(hg_prof_fit_line(cx, nanv, 2, &f) != 0, "NaN accepted");
    EXPECT(hg_prof_fit_line(nx, ct, 2, &f) != 0, "x < 0 accepted");
    EXPECT(hg_prof_fit_line(cx, ct, 0, &f) != 0, "no points accepted");
}

/* ------------------------------------------------------------ the file */

static struct hg_profile *sample(void)
{
    char err[512] = "";
    struct hg_profile *p = hg_prof_new();
    snprintf(p->host, sizeof(p->host), "box");
    snprintf(p->date, sizeof(p->date), "2026-01-01T00:00:00Z");
    snprintf(p->source, sizeof(p->source), "hgplan --task \"x\" \\ test");
    int d1 = hg_prof_device(p, "cpu-t1", HG_DEV_CPU, "Some \"CPU\", 1 thread", 1, 2);
    int d2 = hg_prof_device(p, "cpu-t2", HG_DEV_CPU, "Some CPU, 2 threads", 2, 1);
    double x[3] = {8, 16, 32}, t[3] = {1.5e-4, 2.9e-4, 6.1e-4};
    REQUIRE(hg_prof_set_op(p, d1, HG_OP_MATMUL, "f32[B,64],f32[64,32]>f32[B,32];t=00", 3, 3, x,
                           t, err, sizeof(err)) == 0, "%s", err);
    REQUIRE(hg_prof_set_op(p, d2, HG_OP_RELU, "f32[B,32]>f32[B,32]", 1, 3, x, t, err,
                           sizeof(err)) == 0, "%s", err);
    REQUIRE(hg_prof_set_op(p, d1, HG_OP_ADD, "f32[B,32],f32[32]>f32[B,32]", 2, 2, x, t, err,
                           sizeof(err)) == 0, "%s", err);
    double bx[3] = {4096, 65536, 1048576}, bt[3] = {2e-6, 8e-6, 9e-5};
    REQUIRE(hg_prof_set_link(p, HG_LINK_SHM, HG_PROF_ALLREDUCE, 3, 3, bx, bt, err,
                             sizeof(err)) == 0, "%s", err);
    REQUIRE(hg_prof_set_link(p, HG_LINK_SHM, HG_PROF_SENDRECV, 2, 3, bx, bt, err,
                             sizeof(err)) == 0, "%s", err);
    return p;
}

static char *save_str(const struct hg_profile *p)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    REQUIRE(f != NULL, "open_memstream");
    REQUIRE(hg_prof_save(p, f) == 0, "save");
    fclose(f);
    return buf;
}

/* Between measured batches the measurements, outside them the fit. */
static void test_interp(void)
{
    char err[256] = "";
    struct hg_profile *p = hg_prof_new();
    int dev = hg_prof_device(p, "cpu-t1", HG_DEV_CPU, "", 1, 1);
    double x[3] = {32, 8, 16}, t[3] = {5e-4, 1e-4, 2e-4}; /* not linear, not sorted */
    REQUIRE(hg_prof_set_op(p, dev, HG_OP_RELU, "s", 1, 3, x, t, err, sizeof(err)) == 0, "%s",
            err);
    const struct hg_prof_op *e = hg_prof_find_op(p, dev, HG_OP_RELU, "s");
    REQUIRE(e != NULL, "entry");
    EXPECT(hg_prof_time(e, 8) == 1e-4 && hg_prof_time(e, 16) == 2e-4 &&
           hg_prof_time(e, 32) == 5e-4, "at the measured batches: %g %g %g",
           hg_prof_time(e, 8), hg_prof_time(e, 16), hg_prof_time(e, 32));
    EXPECT(close_to(hg_prof_time(e, 12), 1.5e-4, 1e-12) &&
           close_to(hg_prof_time(e, 24), 3.5e-4, 1e-12), "between: %g %g",
           hg_prof_time(e, 12), hg_prof_time(e, 24));
    EXPECT(close_to(hg_prof_time(e, 64), e->fit.a + e->fit.b * 64, 1e-12) &&
           close_to(hg_prof_time(e, 4), e->fit.a + e->fit.b * 4, 1e-12) &&
           hg_prof_time(e, 64) != 5e-4 * 2, "outside: the fit (%g at 64)",
           hg_prof_time(e, 64));
    hg_prof_free(p);
}

static void test_roundtrip(void)
{
    char err[512] = "";
    struct hg_profile *p = sample();
    EXPECT(p->nops == 3 && p->nlinks == 2 && p->ndevs == 2, "sample: %d ops %d links", p->nops,
           p->nlinks);
    /* sorted by (device, op, sig) */
    for (int i = 1; i < p->nops; i++)
        EXPECT(p->ops[i - 1].dev < p->ops[i].dev ||
               (p->ops[i - 1].dev == p->ops[i].dev && p->ops[i - 1].op <= p->ops[i].op),
               "ops not sorted at %d", i);
    char *text = save_str(p);
    char path[] = "/tmp/test_profile-XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0, "mkstemp");
    REQUIRE(write(fd, text, strlen(text)) == (ssize_t)strlen(text), "write");
    close(fd);
    struct hg_profile *q = NULL;
    REQUIRE(hg_prof_load(&q, path, err, sizeof(err)) == 0, "load: %s\n%s", err, text);
    EXPECT(strcmp(q->file, path) == 0, "file %s", q->file);
    EXPECT(strcmp(q->host, p->host) == 0 && strcmp(q->date, p->date) == 0 &&
           strcmp(q->source, p->source) == 0, "host/date/source: %s %s %s", q->host, q->date,
           q->source);
    REQUIRE(q->ndevs == 2 && q->nops == 3 && q->nlinks == 2, "loaded %d %d %d", q->ndevs,
            q->nops, q->nlinks);
    for (int i = 0; i < 2; i++)
        EXPECT(strcmp(q->devs[i].name, p->devs[i].name) == 0 &&
               strcmp(q->devs[i].model, p->devs[i].model) == 0 &&
               q->devs[i].threads == p->devs[i].threads &&
               q->devs[i].processes == p->devs[i].processes, "device %d", i);
    for (int i = 0; i < p->nops; i++) {
        const struct hg_prof_op *a = &p->ops[i];
        const struct hg_prof_op *b = hg_prof_find_op(q, a->dev, a->op, a->sig);
        REQUIRE(b != NULL, "op %s %s lost", hg_op_table[a->op].name, a->sig);
        EXPECT(close_to(b->fit.a, a->fit.a, 1e-6) && close_to(b->fit.b, a->fit.b, 1e-6) &&
               b->npts == a->npts && b->nodes == a->nodes, "op %d fit", i);
        for (int k = 0; k < a->npts; k++)
            EXPECT(b->x[k] == a->x[k] && close_to(b->t[k], a->t[k], 1e-6), "op %d point %d", i,
                   k);
    }
    for (int i = 0; i < p->nlinks; i++) {
        const struct hg_prof_link *a = &p->links[i];
        const struct hg_prof_link *b = hg_prof_find_link(q, a->kind, a->coll, a->world);
        REQUIRE(b != NULL, "link %d lost", i);
        EXPECT(close_to(b->fit.a, a->fit.a, 1e-6) && close_to(b->fit.b, a->fit.b, 1e-6) &&
               b->npts == a->npts, "link %d fit", i);
    }
    EXPECT(hg_prof_find_op(q, 0, HG_OP_RELU, "f32[B,32]>f32[B,32]") == NULL,
           "relu was measured on cpu-t2, not cpu-t1");
    EXPECT(hg_prof_find_link(q, HG_LINK_SHM, HG_PROF_ALLREDUCE, 2) == NULL, "world 2 invented");
    /* saving what was loaded gives the same text */
    char *again = save_str(q);
    EXPECT(strcmp(text, again) == 0, "second save differs:\n%s\n---\n%s", text, again);
    /* replacing an entry keeps one */
    double x[2] = {1, 2}, t[2] = {1e-3, 2e-3};
    REQUIRE(hg_prof_set_op(q, 0, HG_OP_ADD, "f32[B,32],f32[32]>f32[B,32]", 2, 2, x, t, err,
                           sizeof(err)) == 0, "%s", err);
    EXPECT(q->nops == 3, "replace added: %d", q->nops);
    free(again);
    free(text);
    unlink(path);
    hg_prof_free(q);
    hg_prof_free(p);
}

/* text must fail to load with an error that contains every one of want[] */
static void bad(const char *text, const char *const *want)
{
    char err[512] = "";
    struct hg_profile *p = NULL;
    int rc = hg_prof_parse(&p, text, "bad.cfg", err, sizeof(err));
    EXPECT(rc != 0 && p == NULL, "accepted:\n%s", text);
    for (int i = 0; want[i]; i++)
        EXPECT(strstr(err, want[i]) != NULL, "error '%s' lacks '%s' (file:\n%s)", err, want[i],
               text);
}

#define DEVS "devices = ({ name = \"cpu-t1\"; kind = \"cpu\"; });\n"

static void test_bad_files(void)
{
    bad("version = 2;\n" DEVS, (const char *[]){"bad.cfg:1", "version", NULL});
    bad(DEVS, (const char *[]){"bad.cfg", "no 'version'", NULL});
    bad("version = 1;\n", (const char *[]){"bad.cfg", "'devices'", NULL});
    bad("version = 1;\nhosts = \"x\";\n" DEVS,
        (const char *[]){"bad.cfg:2", "unknown key 'hosts'", NULL});
    bad("version = 1;\ndevices = ({ name = \"cpu-t1\"; kind = \"tpu\"; });\n",
        (const char *[]){"bad.cfg:2", "kind 'tpu'", NULL});
    bad("version = 1;\ndevices = ({ name = \"cpu-t1\"; kind = \"cpu\";\n time_share = 3; });\n",
        (const char *[]){"bad.cfg:3", "'time_share' must be in (0, 1]", NULL});
    bad("version = 1;\ndevices = ({ name = \"cpu-t1\"; kind = \"cpu\";\n time_share = 0; });\n",
        (const char *[]){"bad.cfg:3", "'time_share' must be in (0, 1]", NULL});
    bad("version = 1;\ndevices = ({ name = \"a\"; kind = \"cpu\"; },\n"
        "{ name = \"a\"; kind = \"cpu\"; });\n",
        (const char *[]){"bad.cfg:3", "'a' is used twice", NULL});
    bad("version = 1;\n" DEVS "ops = ({ device = \"cpu-t9\"; op = \"relu\"; sig = \"s\";\n"
        " a = 1e-6; b = 1e-7; });\n",
        (const char *[]){"bad.cfg:3", "device 'cpu-t9'", NULL});
    bad("version = 1;\n" DEVS "ops = ({ device = \"cpu-t1\"; op = \"relux\"; sig = \"s\";\n"
        " a = 1e-6; b = 1e-7; });\n",
        (const char *[]){"bad.cfg:3", "op 'relux'", NULL});
    bad("version = 1;\n" DEVS "ops = ({ device = \"cpu-t1\"; op = \"relu\"; sig = \"s\";\n"
        " a = -1e-6; b = 1e-7; });\n",
        (const char *[]){"bad.cfg:4", "'a' must be >= 0", NULL});
    bad("version = 1;\n" DEVS "ops = ({ device = \"cpu-t1\"; op = \"relu\"; sig = \"s\";\n"
        " b = 1e-7; });\n",
        (const char *[]){"bad.cfg:3", "no 'a'", NULL});
    bad("version = 1;\n" DEVS "ops = ({ device = \"cpu-t1\"; op = \"relu\"; sig = \"s\";\n"
        " a = \"fast\"; b = 1e-7; });\n",
        (const char *[]){"bad.cfg:4", "key 'a'", NULL});
    bad("version = 1;\n" DEVS "ops = ({ device = \"cpu-t1\"; op = \"relu\"; sig = \"s\";\n"
        " a = 1e-6; b = 1e-7;\n batch = [8, 16]; time = [1.0e-6]; });\n",
        (const char *[]){"bad.cfg:5", "'time' has 1 values", NULL});
    bad("version = 1;\n" DEVS "ops = ({ device = \"cpu-t1\"; op = \"relu\"; sig = \"s\";\n"
        " a = 1e-6; b = 1e-7; batch = [8, 16]; });\n",
        (const char *[]){"bad.cfg:4", "'batch' and 'time' go together", NULL});
    bad("version = 1;\n" DEVS
        "ops = ({ device = \"cpu-t1\"; op = \"relu\"; sig = \"s\"; a = 1e-6; b = 1e-7; },\n"
        "       { device = \"cpu-t1\"; op = \"relu\"; sig = \"s\"; a = 2e-6; b = 1e-7; });\n",
        (const char *[]){"bad.cfg:4", "given twice", NULL});
    bad("version = 1;\n" DEVS "links = ({ kind = \"shm\"; op = \"allreduce\"; world = 1;\n"
        " latency = 1e-6; bandwidth = 1e10; });\n",
        (const char *[]){"bad.cfg:3", "'world' must be >= 2", NULL});
    bad("version = 1;\n" DEVS "links = ({ kind = \"shm\"; op = \"sendrecv\"; world = 3;\n"
        " latency = 1e-6; bandwidth = 1e10; });\n",
        (const char *[]){"bad.cfg:3", "world 3", NULL});
    bad("version = 1;\n" DEVS "links = ({ kind = \"infiniband\"; op = \"allreduce\";\n"
        " world = 2; latency = 1e-6; bandwidth = 1e10; });\n",
        (const char *[]){"bad.cfg:3", "kind 'infiniband'", NULL});
    bad("version = 1;\n" DEVS "links = ({ kind = \"shm\"; op = \"allreduce\"; world = 2;\n"
        " latency = 1e-6; });\n",
        (const char *[]){"bad.cfg:3", "no 'bandwidth'", NULL});
    bad("version = 1;\n" DEVS "ops = 3;\n", (const char *[]){"bad.cfg:3", "'ops'", NULL});
    bad("version = 1;\n" DEVS "ops = ({ device = \"cpu-t1\" ", /* a syntax error */
        (const char *[]){"bad.cfg:3", NULL});
    char err[512] = "";
    struct hg_profile *p = NULL;
    EXPECT(hg_prof_load(&p, "/nonexistent/prof.cfg", err, sizeof(err)) != 0 &&
           strstr(err, "/nonexistent/prof.cfg") != NULL, "missing file: %s", err);
}

/* ------------------------------------------------------------ signatures */

/* x[B,64] -> linear 64x32 -> relu -> reshape [B*32] -> sum; training with
 * SGD.  Returns the graph (symbol "batch" with max maxb). */
static struct hg_graph *small_graph(int64_t maxb, int train)
{
    struct hg_graph *g = hg_graph_new();
    int64_t B = hg_graph_sym(g, "batch", maxb);
    int64_t xd[2] = {B, 64};
    int x = hg_graph_input(g, "x", HG_F32, 2, xd, 0);
    int y = hg_graph_input(g, "y", HG_I32, 1, &B, 0);
    int h = hg_relu(g, hg_layer_linear(g, "fc", x, 64, 32, 1));
    int logits = hg_layer_linear(g, "out", h, 32, 10, 1);
    int loss = hg_cross_entropy(g, logits, y, -100, 0.f);
    if (train) {
        hg_graph_backward(g, loss);
        union hg_attr hy = {0};
        hy.sgd.momentum = 0.9f;
        hg_graph_optimizer(g, HG_OPTIM_SGD, &hy);
    }
    return g;
}

static void test_sig(void)
{
    char err[512] = "", s8[256], s16[256];
    struct hg_graph *g = small_graph(16, 1);
    int n = hg_graph_n_nodes(g);
    int64_t sym[1] = {8};
    REQUIRE(hg_graph_resolve(g, sym, err, sizeof(err)) == 0, "%s", err);
    char **at8 = calloc((size_t)n, sizeof(char *));
    for (int k = 0; k < n; k++) {
        REQUIRE(hg_prof_op_sig(g, k, 8, s8, sizeof(s8)) == 0, "sig %d", k);
        at8[k] = strdup(s8);
    }
    sym[0] = 16;
    REQUIRE(hg_graph_resolve(g, sym, err, sizeof(err)) == 0, "%s", err);
    int seen_b = 0, seen_mm = 0;
    for (int k = 0; k < n; k++) {
        REQUIRE(hg_prof_op_sig(g, k, 16, s16, sizeof(s16)) == 0, "sig %d", k);
        EXPECT(strcmp(at8[k], s16) == 0, "node %d: '%s' at batch 8, '%s' at 16", k, at8[k], s16);
        seen_b |= strstr(s16, "[B,64]") != NULL;
        seen_mm |= hg_graph_node(g, k)->op == HG_OP_MATMUL && strstr(s16, ";t=") != NULL;
        free(at8[k]);
    }
    free(at8);
    EXPECT(seen_b && seen_mm, "no 'B' dims or matmul transposes in the signatures");
    /* too small a buffer is refused, not cut silently */
    EXPECT(hg_prof_op_sig(g, 0, 16, s8, 8) != 0, "8-byte signature accepted");
    /* a batch axis twice the batch: [B,4] concatenated with itself */
    struct hg_graph *r = hg_graph_new();
    int64_t B = hg_graph_sym(r, "batch", 8), xd[2] = {B, 4};
    int x = hg_graph_input(r, "x", HG_F32, 2, xd, 0);
    int xs[2] = {x, x};
    hg_relu(r, hg_concat(r, xs, 2, 0));
    REQUIRE(hg_graph_resolve(r, NULL, err, sizeof(err)) == 0, "%s", err);
    REQUIRE(hg_prof_op_sig(r, 1, 8, s8, sizeof(s8)) == 0, "relu sig");
    EXPECT(strcmp(s8, "f32[B*2,4]>f32[B*2,4]") == 0, "doubled axis: %s", s8);
    hg_graph_free(r);
    hg_graph_free(g);
}

/* ------------------------------------------------------------ cost and sim */

static const char *cluster_txt =
    "nodes = ({ name = \"h\"; devices = (\n"
    "  { kind = \"cpu\"; count = 2; memory = \"8GiB\"; peak_flops = \"100GFLOP/s\";\n"
    "    memory_bandwidth = \"20GB/s\"; profile = \"cpu-t1\"; time_share = %s; },\n"
    "  { kind = \"cpu\"; memory = \"8GiB\"; peak_flops = \"100GFLOP/s\"; } );\n"
    "  intra = { kind = \"shm\"; bandwidth = \"12GB/s\"; latency = \"1us\"; }; });\n";

static struct hg_cluster *cluster(const char *share)
{
    char txt[1024], err[512] = "";
    snprintf(txt, sizeof(txt), cluster_txt, share);
    struct hg_cluster *c = NULL;
    REQUIRE(hg_cluster_parse(&c, txt, "three", err, sizeof(err)) == 0, "%s", err);
    return c;
}

static void test_cost_sim(void)
{
    char err[512] = "", sig[256];
    const int64_t batch = 16;
    struct hg_graph *g = small_graph(batch, 1);
    REQUIRE(hg_graph_resolve(g, NULL, err, sizeof(err)) == 0, "%s", err);
    int n = hg_graph_n_nodes(g);
    /* a profile of every node but the first, a = 1e-4 * (k+1), b = 1e-5 */
    struct hg_profile *p = hg_prof_new();
    int dev = hg_prof_device(p, "cpu-t1", HG_DEV_CPU, "test cpu", 1, 1);
    for (int k = 1; k < n; k++) {
        REQUIRE(hg_prof_op_sig(g, k, batch, sig, sizeof(sig)) == 0, "sig");
        if (hg_prof_find_op(p, dev, hg_graph_node(g, k)->op, sig))
            continue; /* one entry per (op, sig): the first node's */
        double x[2] = {8, 16}, t[2] = {1e-4 * (k + 1) + 8e-5, 1e-4 * (k + 1) + 16e-5};
        REQUIRE(hg_prof_set_op(p, dev, hg_graph_node(g, k)->op, sig, 1, 2, x, t, err,
                               sizeof(err)) == 0, "%s", err);
    }
    double bx[2] = {1e3, 1e6}, bt[2] = {5e-6 + 1e3 / 2e9, 5e-6 + 1e6 / 2e9};
    REQUIRE(hg_prof_set_link(p, HG_LINK_SHM, HG_PROF_ALLREDUCE, 2, 2, bx, bt, err,
                             sizeof(err)) == 0, "%s", err);
    double px[2] = {1e3, 1e6}, pt[2] = {3e-6 + 1e3 / 4e9, 3e-6 + 1e6 / 4e9};
    REQUIRE(hg_prof_set_link(p, HG_LINK_SHM, HG_PROF_SENDRECV, 2, 2, px, pt, err,
                             sizeof(err)) == 0, "%s", err);

    struct hg_cluster *c = cluster("0.5");
    /* without the profile: the roofline everywhere */
    double a, b, ar, br;
    EXPECT(hg_cost_node(c, 0, g, 1, batch, &a, &b, NULL) == 0, "unbound: not the roofline");
    REQUIRE(hg_cluster_set_profile(c, p, err, sizeof(err)) == 0, "%s", err);
    EXPECT(c->devices[0].prof_dev == 0 && c->devices[1].prof_dev == 0 &&
           c->devices[2].prof_dev == -1, "binding %d %d %d", c->devices[0].prof_dev,
           c->devices[1].prof_dev, c->devices[2].prof_dev);
    double want_mp = 0;
    for (int k = 0; k < n; k++) {
        int r = hg_cost_node(c, 0, g, k, batch, &a, &b, NULL);
        REQUIRE(hg_prof_op_sig(g, k, batch, sig, sizeof(sig)) == 0, "sig");
        const struct hg_prof_op *e = hg_prof_find_op(p, 0, hg_graph_node(g, k)->op, sig);
        if (e) {
            /* profiled: the fit at this batch, divided by the time share */
            EXPECT(r == 1 && close_to(a, e->fit.a / 0.5, 1e-12) &&
                   close_to(b, e->fit.b * batch / 0.5, 1e-12), "node %d: r %d a %g b %g", k,
                   r, a, b);
        } else {
            EXPECT(k == 0 && r == 0, "node %d not profiled (r %d)", k, r);
        }
        /* device 2 names no profile: the roofline */
        EXPECT(hg_cost_node(c, 2, g, k, batch, &ar, &br, NULL) == 0, "device 2 node %d", k);
        want_mp += a + b;
    }
    /* a profiled device measured slowed 2x (hgplan --profile-slowdown 2:
     * time_share 0.5 in the profile) already holds the cluster's share
     * of 0.5: its fit as it is; and the share goes through the file */
    p->devs[dev].share = 0.5;
    EXPECT(hg_cost_prof_share(c, 0) == 1 && hg_cost_prof_share(c, 2) == 1,
           "shares %g %g", hg_cost_prof_share(c, 0), hg_cost_prof_share(c, 2));
    for (int k = 1; k < n; k++) {
        REQUIRE(hg_prof_op_sig(g, k, batch, sig, sizeof(sig)) == 0, "sig");
        const struct hg_prof_op *e = hg_prof_find_op(p, 0, hg_graph_node(g, k)->op, sig);
        EXPECT(hg_cost_node(c, 0, g, k, batch, &a, &b, NULL) == 1 && close_to(a, e->fit.a, 1e-12) &&
               close_to(b, e->fit.b * batch, 1e-12), "slowed node %d: a %g b %g", k, a, b);
    }
    {
        char *buf = NULL;
        size_t blen = 0;
        FILE *mf = open_memstream(&buf, &blen);
        REQUIRE(mf && hg_prof_save(p, mf) == 0 && fclose(mf) == 0, "save");
        EXPECT(strstr(buf, "time_share = 0.5;") != NULL, "no time_share in\n%s", buf);
        struct hg_profile *q = NULL;
        REQUIRE(hg_prof_parse(&q, buf, "slowed.cfg", err, sizeof(err)) == 0, "%s", err);
        EXPECT(q->devs[0].share == 0.5, "share read back: %g", q->devs[0].share);
        hg_prof_free(q);
        free(buf);
    }
    p->devs[dev].share = 1;
    EXPECT(hg_cost_prof_share(c, 0) == 0.5, "share %g", hg_cost_prof_share(c, 0));
    /* the simulator: every op on device 0 (model parallel, one group) takes
     * the profiled times */
    struct hg_pgraph *pg = NULL;
    struct hg_pprice *pr = NULL;
    REQUIRE(hg_pgraph_build(&pg, g, c, "small", batch, err, sizeof(err)) == 0, "%s", err);
    REQUIRE(hg_pprice_build(&pr, pg, g, err, sizeof(err)) == 0, "%s", err);
    struct hg_strategy *st = hg_strategy_new(pg->nops, pg->ndev, 1);
    hg_gcfg_mp(&st->cfg[0], 0);
    struct hg_sim *sim = hg_sim_new(pg, pr);
    struct hg_sim_result res;
    hg_sim_full(sim, st, &res);
    EXPECT(close_to(res.iter_s, want_mp, 1e-9), "sim MP: %.9g s, want %.9g", res.iter_s,
           want_mp);
    /* unbinding gives the roofline back, and a different time */
    struct hg_cluster *c2 = cluster("0.5");
    struct hg_pgraph *pg2 = NULL;
    struct hg_pprice *pr2 = NULL;
    REQUIRE(hg_pgraph_build(&pg2, g, c2, "small", batch, err, sizeof(err)) == 0, "%s", err);
    REQUIRE(hg_pprice_build(&pr2, pg2, g, err, sizeof(err)) == 0, "%s", err);
    struct hg_sim *sim2 = hg_sim_new(pg2, pr2);
    struct hg_sim_result res2;
    hg_sim_full(sim2, st, &res2);
    EXPECT(!close_to(res2.iter_s, res.iter_s, 1e-3), "roofline %g == profile %g", res2.iter_s,
           res.iter_s);
    hg_sim_free(sim2);
    hg_pprice_free(pr2);
    hg_pgraph_free(pg2);
    hg_cluster_free(c2);
    /* data parallel over the two profiled devices: their AllReduce is the
     * measured fit, their link the measured point to point */
    int devs[2] = {0, 1};
    double bytes = 123456;
    EXPECT(close_to(hg_cost_allreduce_ring(c, devs, 2, bytes), 5e-6 + bytes / 2e9, 1e-9),
           "allreduce %g", hg_cost_allreduce_ring(c, devs, 2, bytes));
    int devs3[3] = {0, 1, 2};
    /* an unprofiled device in the ring: the formula, over the slowest hop
     * (the profiled link 0-1 at its measured speed) */
    EXPECT(close_to(hg_cost_allreduce_ring(c, devs3, 3, bytes),
                    hg_cost_ring_allreduce(3, bytes, 4e9, 3e-6), 1e-9),
           "an unprofiled device in the ring: the formula");
    struct hg_path path;
    hg_cluster_path(c, 0, 1, &path);
    EXPECT(close_to(path.bw, 4e9, 1e-9) && close_to(path.lat, 3e-6, 1e-9),
           "profiled link %g B/s %g s", path.bw, path.lat);
    hg_cluster_path(c, 0, 2, &path);
    EXPECT(path.bw == 12e9 && path.lat == 1e-6, "unprofiled link %g B/s", path.bw);
    /* even data parallelism over the two profiled CPU workers: each
     * replica's measured time at batch 8, and the AllReduces computed by
     * the workers themselves, so nothing overlaps: the sum of both */
    struct hg_strategy *dp = hg_strategy_new(pg->nops, pg->ndev, 1);
    hg_gcfg_even(&dp->cfg[0], c, HG_AGG_AR);
    dp->cfg[0].rep[2] = 0; /* devices 0 and 1 */
    hg_sim_full(sim, dp, &res);
    double want_dp = 0;
    for (int k = 0; k < pg->nops; k++) {
        const struct hg_pop *o = &pg->ops[k];
        size_t i = hg_pprice_at(pr, k, 0);
        want_dp += !o->batch ? pr->a[i]
                   : pr->pe[i] ? hg_prof_time(pr->pe[i], batch / 2.0) / 0.5
                               : pr->a[i] + pr->b[i] / 2;
        if (o->out_grad) { /* less its bucket share's saving of the latency */
            double f = (double)o->out_bytes / (25.0 * 1024 * 1024);
            want_dp += hg_cost_allreduce_ring(c, devs, 2, (double)o->out_bytes) -
                       (f < 1 ? (1 - f) * hg_cost_allreduce_ring(c, devs, 2, 1) : 0);
        }
    }
    EXPECT(close_to(res.iter_s, want_dp, 1e-9), "sim DP on CPU workers: %.9g s, want %.9g",
           res.iter_s, want_dp);
    hg_strategy_free(dp);
    hg_sim_free(sim);
    hg_strategy_free(st);
    hg_pprice_free(pr);
    hg_pgraph_free(pg);
    /* a device naming a device the profile lacks */
    struct hg_profile *q = hg_prof_new();
    snprintf(q->file, sizeof(q->file), "prof.cfg");
    hg_prof_device(q, "gpu-x", HG_DEV_GPU, "", 1, 1);
    struct hg_cluster *c3 = cluster("1");
    EXPECT(hg_cluster_set_profile(c3, q, err, sizeof(err)) != 0 &&
           strstr(err, "h:0") && strstr(err, "cpu-t1") && strstr(err, "prof.cfg") &&
           strstr(err, "gpu-x"), "unknown profiled device: %s", err);
    EXPECT(c3->prof == NULL, "bound after an error");
    /* time_share outside (0, 1] */
    char txt[1024];
    snprintf(txt, sizeof(txt), cluster_txt, "1.5");
    struct hg_cluster *c4 = NULL;
    EXPECT(hg_cluster_parse(&c4, txt, "share", err, sizeof(err)) != 0 &&
           strstr(err, "share:3") && strstr(err, "time_share"), "time_share 1.5: %s", err);
    hg_cluster_free(c4);
    hg_cluster_free(c3);
    hg_prof_free(q);
    hg_cluster_free(c);
    hg_prof_free(p);
    hg_graph_free(g);
}

/* ------------------------------------------------------------ measuring */

static void test_measure(void)
{
    char err[512] = "";
    struct hg_graph *g = small_graph(16, 1);
    struct hg_profile *p = hg_prof_new();
    int dev = hg_prof_device(p, "cpu-t1", HG_DEV_CPU, "this cpu", 1, 1);
    int64_t batches[2] = {8, 16};
    struct hg_prof_opts o = {.batches = batches, .nbatches = 2, .reps = 3, .warmup = 1};
    REQUIRE(hg_prof_measure_graph(p, dev, g, &o, err, sizeof(err)) == 0, "%s", err);
    int nodes = 0;
    for (int i = 0; i < p->nops; i++) {
        const struct hg_prof_op *e = &p->ops[i];
        nodes += e->nodes;
        EXPECT(e->npts == 2 && e->x[0] == 8 && e->x[1] == 16 && e->t[0] > 0 && e->t[1] > 0 &&
               e->fit.a >= 0 && e->fit.b >= 0, "entry %s %s", hg_op_table[e->op].name, e->sig);
    }
    EXPECT(nodes == hg_graph_n_nodes(g), "%d nodes in entries, %d in the graph", nodes,
           hg_graph_n_nodes(g));
    /* a batch above the symbol's maximum, a graph without a batch symbol */
    int64_t big[1] = {32};
    struct hg_prof_opts ob = {.batches = big, .nbatches = 1, .reps = 1};
    EXPECT(hg_prof_measure_graph(p, dev, g, &ob, err, sizeof(err)) != 0 && strstr(err, "32"),
           "batch 32: %s", err);
    struct hg_graph *h = hg_graph_new();
    int64_t d[2] = {4, 4};
    hg_relu(h, hg_graph_input(h, "x", HG_F32, 2, d, 0));
    EXPECT(hg_prof_measure_graph(p, dev, h, &o, err, sizeof(err)) != 0 &&
           strstr(err, "'batch'"), "no batch symbol: %s", err);
    hg_graph_free(h);
    hg_prof_free(p);
    hg_graph_free(g);
}

/* ------------------------------------------------------------ tcp links */

static const char *nodes3_txt =
    "network = { switch_bandwidth = \"10Gbps\"; latency = \"50us\"; };\n"
    "nodes = (\n"
    " { name = \"n0\"; nic_bandwidth = \"1Gbps\"; devices = ({ kind = \"cpu\"; count = 1;\n"
    "   memory = \"8GiB\"; peak_flops = \"100GFLOP/s\"; }); },\n"
    " { name = \"n1\"; nic_bandwidth = \"1Gbps\"; devices = ({ kind = \"cpu\"; count = 1;\n"
    "   memory = \"8GiB\"; peak_flops = \"100GFLOP/s\"; }); },\n"
    " { name = \"n2\"; nic_bandwidth = \"1Gbps\"; devices = ({ kind = \"cpu\"; count = 2;\n"
    "   memory = \"8GiB\"; peak_flops = \"100GFLOP/s\"; });\n"
    "   intra = { kind = \"shm\"; bandwidth = \"12GB/s\"; latency = \"1us\"; }; });\n";

/* an exact line: latency a, bandwidth bw, at 1 kB and 1 MB */
static void tcp_link(struct hg_profile *p, enum hg_prof_coll coll, int world, double a,
                     double bw)
{
    char err[256] = "";
    double x[2] = {1e3, 1e6}, t[2] = {a + 1e3 / bw, a + 1e6 / bw};
    REQUIRE(hg_prof_set_link(p, HG_LINK_TCP, coll, world, 2, x, t, err, sizeof(err)) == 0, "%s",
            err);
}

static void test_tcp(void)
{
    char err[512] = "";
    struct hg_cluster *c = NULL;
    REQUIRE(hg_cluster_parse(&c, nodes3_txt, "nodes3", err, sizeof(err)) == 0, "%s", err);
    REQUIRE(c->ndev == 4 && c->nnodes == 3, "%d devices on %d nodes", c->ndev, c->nnodes);
    struct hg_path p0, p;
    hg_cluster_path(c, 0, 1, &p0);
    EXPECT(close_to(p0.bw, 1.25e8, 1e-9) && close_to(p0.lat, 5e-5, 1e-9), "file path %g %g",
           p0.bw, p0.lat);
    int d01[2] = {0, 1}, d012[3] = {0, 1, 2}, d23[2] = {2, 3}, d02[2] = {0, 2};
    double ring01 = hg_cost_allreduce_ring(c, d01, 2, 1e6);
    double ring23 = hg_cost_allreduce_ring(c, d23, 2, 1e6);
    double ps01 = hg_cost_ps(c, d01, 2, 0, 1e6);
    double ps012 = hg_cost_ps(c, d012, 3, 0, 1e6);

    /* a profile of tcp links only: no devices, and it loads */
    struct hg_profile *pr = hg_prof_new();
    tcp_link(pr, HG_PROF_SENDRECV, 2, 2e-4, 1e7);
    tcp_link(pr, HG_PROF_ALLREDUCE, 2, 3e-4, 5e6);
    tcp_link(pr, HG_PROF_ALLREDUCE, 3, 5e-4, 4e6);
    tcp_link(pr, HG_PROF_PS, 2, 4e-4, 2e6);
    char *text = save_str(pr);
    struct hg_profile *q = NULL;
    REQUIRE(hg_prof_parse(&q, text, "tcp.cfg", err, sizeof(err)) == 0, "%s\n%s", err, text);
    EXPECT(q->ndevs == 0 && q->nlinks == 4, "links only: %d devices, %d links", q->ndevs,
           q->nlinks);
    EXPECT(strstr(text, "kind = \"tcp\"; op = \"ps\"; world = 2;") != NULL, "saved:\n%s", text);
    char *again = save_str(q);
    EXPECT(strcmp(text, again) == 0, "second save differs:\n%s\n---\n%s", text, again);
    free(again);
    free(text);
    bad("version = 1;\ndevices = ();\n", (const char *[]){"bad.cfg:2", "'devices' is empty",
                                                          NULL});
    bad("version = 1;\n" DEVS "links = ({ kind = \"tcp\"; op = \"pushpull\"; world = 2;\n"
        " latency = 1e-6; bandwidth = 1e10; });\n",
        (const char *[]){"bad.cfg:3", "op 'pushpull'", "sendrecv, allreduce or ps", NULL});

    /* bound: the paths between nodes and the NICs take the sendrecv fit */
    REQUIRE(hg_cluster_set_profile(c, q, err, sizeof(err)) == 0, "%s", err);
    EXPECT(close_to(c->net_mbw, 1e7, 1e-6) && close_to(c->net_mlat, 2e-4, 1e-6),
           "bound network %g B/s %g s", c->net_mbw, c->net_mlat);
    hg_cluster_path(c, 0, 1, &p);
    EXPECT(close_to(p.bw, 1e7, 1e-6) && close_to(p.lat, 2e-4, 1e-6), "measured path %g %g",
           p.bw, p.lat);
    EXPECT(close_to(hg_cluster_channel_bw(c, p.chan[0]), 1e7, 1e-6) &&
           close_to(hg_cluster_channel_bw(c, p.chan[1]), 1.25e9, 1e-9),
           "channels: NIC %g, switch %g", hg_cluster_channel_bw(c, p.chan[0]),
           hg_cluster_channel_bw(c, p.chan[1]));
    EXPECT(close_to(hg_cost_transfer(&p, 1e6), 2e-4 + 1e6 / 1e7, 1e-6), "transfer %g",
           hg_cost_transfer(&p, 1e6));
    hg_cluster_path(c, 2, 3, &p);
    EXPECT(p.bw == 12e9 && p.lat == 1e-6, "a same-node path moved: %g %g", p.bw, p.lat);
    /* AllReduce over one device per node: the fit of that world */
    double t = hg_cost_allreduce_ring(c, d01, 2, 1e6);
    EXPECT(close_to(t, 3e-4 + 1e6 / 5e6, 1e-6) && !close_to(t, ring01, 1e-3),
           "allreduce world 2: %g (file %g)", t, ring01);
    t = hg_cost_allreduce_ring(c, d012, 3, 1e6);
    EXPECT(close_to(t, 5e-4 + 1e6 / 4e6, 1e-6), "allreduce world 3: %g", t);
    EXPECT(close_to(hg_cost_allreduce_hier(c, d01, 2, 1e6), 3e-4 + 1e6 / 5e6, 1e-6),
           "hierarchical over 2 nodes: %g", hg_cost_allreduce_hier(c, d01, 2, 1e6));
    /* two devices of one node: no tcp in between, the file's shm link */
    EXPECT(hg_cost_allreduce_ring(c, d23, 2, 1e6) == ring23, "same node: %g, file %g",
           hg_cost_allreduce_ring(c, d23, 2, 1e6), ring23);
    /* the PS among its clients, one per node: the fit; without a fit of
     * that world: the formula, over the measured channels */
    t = hg_cost_ps(c, d01, 2, 0, 1e6);
    EXPECT(close_to(t, 4e-4 + 1e6 / 2e6, 1e-6) && !close_to(t, ps01, 1e-3), "ps world 2: %g "
           "(file %g)", t, ps01);
    t = hg_cost_ps(c, d012, 3, 0, 1e6);
    EXPECT(close_to(t, 2 * 1e6 / 1e7 + 2 * 1e6 / 1e7 + 2 * 2e-4, 1e-6) && t != ps012,
           "ps world 3 (no fit): %g (file %g)", t, ps012);
    t = hg_cost_ps(c, d02, 2, 3, 1e6); /* a server that is not a client */
    EXPECT(!close_to(t, 4e-4 + 1e6 / 2e6, 1e-3), "ps served elsewhere took the fit: %g", t);
    /* the compute a transfer between nodes costs its CPU ends (sendrecv's
     * cpu): kept through the file, bound as net_cpu, and in the simulator
     * a task on each end that delays what the device does next */
    {
        struct hg_graph *g = small_graph(16, 1);
        REQUIRE(hg_graph_resolve(g, NULL, err, sizeof(err)) == 0, "%s", err);
        struct hg_pgraph *pg = NULL;
        struct hg_pprice *pp = NULL;
        REQUIRE(hg_pgraph_build(&pg, g, c, "small", 16, err, sizeof(err)) == 0, "%s", err);
        REQUIRE(hg_pprice_build(&pp, pg, g, err, sizeof(err)) == 0, "%s", err);
        struct hg_strategy *st = hg_strategy_new(pg->nops, pg->ndev, pg->nops);
        hg_strategy_group(st, pg, pp, 2);
        REQUIRE(st->ngroups == 2, "%d groups", st->ngroups);
        hg_gcfg_mp(&st->cfg[0], 0);
        hg_gcfg_mp(&st->cfg[1], 1);
        struct hg_sim *sim = hg_sim_new(pg, pp);
        struct hg_sim_result r0, r1;
        hg_sim_full(sim, st, &r0);
        EXPECT(c->net_cpu == 0, "no cpu measured, yet net_cpu %g", c->net_cpu);
        REQUIRE(hg_prof_set_link_cpu(q, HG_LINK_TCP, HG_PROF_SENDRECV, 2, 1e-6) == 0, "cpu");
        EXPECT(hg_prof_set_link_cpu(q, HG_LINK_TCP, HG_PROF_SENDRECV, 3, 1e-6) == -1,
               "a link that is not there took a cpu");
        char *t2 = save_str(q);
        struct hg_profile *q2 = NULL;
        REQUIRE(hg_prof_parse(&q2, t2, "cpu.cfg", err, sizeof(err)) == 0, "%s\n%s", err, t2);
        const struct hg_prof_link *l2 = hg_prof_find_link(q2, HG_LINK_TCP, HG_PROF_SENDRECV, 2);
        EXPECT(strstr(t2, "cpu = 1.000000e-06;") && l2 && l2->cpu == 1e-6, "cpu not kept:\n%s",
               t2);
        REQUIRE(hg_cluster_set_profile(c, q2, err, sizeof(err)) == 0, "%s", err);
        EXPECT(c->net_cpu == 1e-6, "net_cpu %g", c->net_cpu);
        hg_sim_full(sim, st, &r1);
        char *buf = NULL;
        size_t blen = 0;
        FILE *mf = open_memstream(&buf, &blen);
        REQUIRE(mf && hg_sim_trace(sim, mf) == 0 && fclose(mf) == 0, "trace");
        EXPECT(strstr(buf, "network cpu #") != NULL, "no network cpu task in the trace");
        /* the forward's activation (16 x 32 floats) alone costs each end
         * 2 ms of compute here, far more than its wire time */
        EXPECT(r1.iter_s > r0.iter_s + 2e-3, "with cpu %g s, without %g s", r1.iter_s,
               r0.iter_s);
        free(buf);
        free(t2);
        REQUIRE(hg_cluster_set_profile(c, q, err, sizeof(err)) == 0, "%s", err);
        hg_prof_free(q2);
        hg_sim_free(sim);
        hg_strategy_free(st);
        hg_pprice_free(pp);
        hg_pgraph_free(pg);
        hg_graph_free(g);
    }
    /* unbound: the file's network again */
    REQUIRE(hg_cluster_set_profile(c, NULL, err, sizeof(err)) == 0, "%s", err);
    hg_cluster_path(c, 0, 1, &p);
    EXPECT(p.bw == p0.bw && p.lat == p0.lat && hg_cost_allreduce_ring(c, d01, 2, 1e6) == ring01,
           "unbound path %g %g", p.bw, p.lat);
    hg_prof_free(q);
    hg_prof_free(pr);
    hg_cluster_free(c);
}

/* --profile A,B: the files merged in order, B's entries replacing A's */
static void test_merge(void)
{
    char err[512] = "", dir[] = "/tmp/test_profile.XXXXXX", a[64], b[64], list[256];
    REQUIRE(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(a, sizeof a, "%s/a.cfg", dir);
    snprintf(b, sizeof b, "%s/b.cfg", dir);
    struct hg_profile *pa = hg_prof_new(), *pb = hg_prof_new();
    double x[2] = {8, 16}, t1[2] = {1e-3, 2e-3}, t2[2] = {3e-3, 6e-3};
    int da = hg_prof_device(pa, "cpu-t1", HG_DEV_CPU, "a", 1, 2);
    REQUIRE(hg_prof_set_op(pa, da, HG_OP_RELU, "f32[B,4]>f32[B,4]", 1, 2, x, t1, err,
                           sizeof err) == 0 &&
            hg_prof_set_op(pa, da, HG_OP_ADD, "f32[B,4],f32[B,4]>f32[B,4]", 1, 2, x, t1, err,
                           sizeof err) == 0, "%s", err);
    int db = hg_prof_device(pb, "cpu-t1", HG_DEV_CPU, "b", 1, 2);
    int dx = hg_prof_device(pb, "cpu-t1-x3", HG_DEV_CPU, "b slowed", 1, 2);
    pb->devs[dx].share = 1.0 / 3;
    REQUIRE(hg_prof_set_op(pb, db, HG_OP_RELU, "f32[B,4]>f32[B,4]", 1, 2, x, t2, err,
                           sizeof err) == 0 &&
            hg_prof_set_op(pb, dx, HG_OP_RELU, "f32[B,4]>f32[B,4]", 1, 2, x, t2, err,
                           sizeof err) == 0, "%s", err);
    double bx[2] = {1e6, 4e6}, bt[2] = {1e-2, 4e-2};
    REQUIRE(hg_prof_set_link(pb, HG_LINK_TCP, HG_PROF_SENDRECV, 2, 2, bx, bt, err,
                             sizeof err) == 0 &&
            hg_prof_set_link_cpu(pb, HG_LINK_TCP, HG_PROF_SENDRECV, 2, 3e-9) == 0, "%s", err);
    FILE *f = fopen(a, "w");
    REQUIRE(f && hg_prof_save(pa, f) == 0 && fclose(f) == 0, "%s", a);
    f = fopen(b, "w");
    REQUIRE(f && hg_prof_save(pb, f) == 0 && fclose(f) == 0, "%s", b);
    snprintf(list, sizeof list, "%s,%s", a, b);
    struct hg_profile *m = NULL;
    REQUIRE(hg_prof_load(&m, list, err, sizeof err) == 0, "%s", err);
    int d0 = hg_prof_find_device(m, "cpu-t1"), d1 = hg_prof_find_device(m, "cpu-t1-x3");
    const struct hg_prof_op *relu = d0 >= 0 ? hg_prof_find_op(m, d0, HG_OP_RELU,
                                                             "f32[B,4]>f32[B,4]") : NULL;
    const struct hg_prof_op *add = d0 >= 0 ? hg_prof_find_op(m, d0, HG_OP_ADD,
                                                            "f32[B,4],f32[B,4]>f32[B,4]") : NULL;
    const struct hg_prof_link *l = hg_prof_find_link(m, HG_LINK_TCP, HG_PROF_SENDRECV, 2);
    EXPECT(m->ndevs == 2 && d1 >= 0 && fabs(m->devs[d1].share - 1.0 / 3) < 1e-6, "devices: %d", m->ndevs);
    EXPECT(relu && relu->t[1] == 6e-3 && add && add->t[1] == 2e-3,
           "ops: relu from b, add from a");
    EXPECT(d1 >= 0 && hg_prof_find_op(m, d1, HG_OP_RELU, "f32[B,4]>f32[B,4]") != NULL,
           "the slowed device's op");
    EXPECT(l && l->cpu == 3e-9 && l->t[1] == 4e-2, "the link from b");
    hg_prof_free(m);
    /* a missing file in the list names it; an empty name is refused */
    snprintf(list, sizeof list, "%s,%s/none.cfg", a, dir);
    EXPECT(hg_prof_load(&m, list, err, sizeof err) != 0 && m == NULL && strstr(err, "none.cfg"),
           "missing file: %s", err);
    snprintf(list, sizeof list, "%s,,%s", a, b);
    EXPECT(hg_prof_load(&m, list, err, sizeof err) != 0 && strstr(err, "empty"),
           "empty name: %s", err);
    hg_prof_free(pa);
    hg_prof_free(pb);
    unlink(a);
    unlink(b);
    rmdir(dir);
}

int main(void)
{
    test_merge();
    test_fit();
    test_interp();
    test_roundtrip();
    test_bad_files();
    test_sig();
    test_cost_sim();
    test_tcp();
    test_measure();
    printf("%s: %d failure%s\n", __FILE__, failures, failures == 1 ? "" : "s");
    return failures ? 1 : 0;
}
