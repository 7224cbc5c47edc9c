/* test_tasks.c - the task registry, plug-in loading (the example plug-in,
 * a wrong ABI version, a missing file, a library without the symbol) and
 * training through a task's build/fill/metrics on shards written here:
 * the xor example plug-in and the built-in mnist task.
 * Exit 0: pass; 1: failure (message on stderr). */
#define _GNU_SOURCE

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "controller/hg_controller.h"
#include "tasks/hg_task.h"
#include "tests/hg_test.h"


static char err[1024];
static char tmpdir[256];
static const char *builddir;

/* ------------------------------------------------------------ registry */

static void test_registry(void)
{
    const struct hg_task *t = hg_task_find("mnist");
    REQUIRE(t != NULL, "mnist not in the registry");
    EXPECT(t->abi_version == HG_TASK_ABI_VERSION && strcmp(t->name, "mnist") == 0 &&
           t->nfields == 2 && strcmp(t->fields[0].name, "image") == 0 &&
           t->fields[0].dtype == HG_U8 && t->fields[0].rank == 2 &&
           strcmp(t->fields[1].name, "label") == 0 && t->fields[1].dtype == HG_I32 &&
           t->fields[1].rank == 0, "mnist task declaration");
    EXPECT(strcmp(t->metric_names[0], "accuracy") == 0 && !t->metric_names[1] &&
           t->maximize_metric0 == 1 && strcmp(t->sample_unit, "images") == 0,
           "mnist metrics");
    EXPECT(t->options[0].name && strcmp(t->options[0].name, "mnist-normalize") == 0 &&
           t->options[1].name && strcmp(t->options[1].name, "dropout") == 0 &&
           !t->options[2].name, "mnist options");
    EXPECT(hg_task_find("nope") == NULL, "found a task named nope");
    EXPECT(hg_task_find(NULL) == NULL, "found a task named NULL");
    int n = 0;
    for (int i = 0; hg_task_registry[i]; i++, n++)
        EXPECT(hg_task_find(hg_task_registry[i]->name) == hg_task_registry[i],
               "row %d", i);
    EXPECT(n >= 1, "empty registry");
    printf("ok  registry (%d built-in task%s)\n", n, n == 1 ? "" : "s");
}

/* ------------------------------------------------------------ plug-ins */

static const struct hg_task *load_xor(void)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/tasks/examples/.libs/xor_task.so", builddir);
    const struct hg_task *t = hg_task_load_plugin(path, err, sizeof(err));
    REQUIRE(t != NULL, "loading %s: %s", path, err);
    EXPECT(strcmp(t->name, "xor") == 0 && t->abi_version == HG_TASK_ABI_VERSION,
           "xor plug-in: name %s", t->name);
    /* loading twice gives the same task (the handle is reference-counted) */
    EXPECT(hg_task_load_plugin(path, err, sizeof(err)) == t, "second load: %s", err);
    return t;
}

static void test_plugin_errors(void)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/tests/.libs/plugin_bad_abi.so", builddir);
    err[0] = 0;
    EXPECT(hg_task_load_plugin(path, err, sizeof(err)) == NULL, "ABI 999 accepted");
    char want[600];
    snprintf(want, sizeof(want), "%s: task ABI version 999, this hgtrain has %d", path,
             HG_TASK_ABI_VERSION);
    EXPECT(strcmp(err, want) == 0, "wrong ABI message: '%s'", err);

    snprintf(path, sizeof(path), "%s/no-such-task.so", tmpdir);
    err[0] = 0;
    EXPECT(hg_task_load_plugin(path, err, sizeof(err)) == NULL, "missing file loaded");
    EXPECT(strncmp(err, path, strlen(path)) == 0 && strstr(err, "cannot load"),
           "missing file message: '%s'", err);

    /* a shared object that is no task plug-in */
    snprintf(path, sizeof(path), "%s/.libs/libhgtrain.so", builddir);
    if (access(path, R_OK) == 0) {
        err[0] = 0;
        EXPECT(hg_task_load_plugin(path, err, sizeof(err)) == NULL,
               "libhgtrain.so taken for a plug-in");
        EXPECT(strncmp(err, path, strlen(path)) == 0 && strstr(err, "hg_task_plugin"),
               "missing symbol message: '%s'", err);
    }
    /* a file that is not a shared object */
    snprintf(path, sizeof(path), "%s/not-a-library.so", tmpdir);
    FILE *fp = fopen(path, "w");
    REQUIRE(fp != NULL, "%s", path);
    fputs("hello\n", fp);
    fclose(fp);
    err[0] = 0;
    EXPECT(hg_task_load_plugin(path, err, sizeof(err)) == NULL, "text file loaded");
    EXPECT(strncmp(err, path, strlen(path)) == 0, "bad file message: '%s'", err);
    unlink(path);
    printf("ok  plug-in errors\n");
}

/* ------------------------------------------------------------ training */

/* A task's model, trained with AdamW the way the controller does: fill,
 * resolve the symbols, run forward + backward + update with grad_scale =
 * 1 / sample size. */
struct run {
    const struct hg_task *task;
    void *state;
    struct hg_graph *g;
    struct hg_exec *ex;
    struct hg_task_model m;
    int n;
};

static void run_open(struct run *r, const struct hg_task *t, void *state,
                     int64_t max_batch, int64_t max_len, int train)
{
    memset(r, 0, sizeof(*r));
    r->task = t;
    r->state = state;
    r->g = hg_graph_new();
    REQUIRE(t->build(state, r->g, max_batch, max_len, train, &r->m, err, sizeof(err)) == 0,
            "%s build: %s", t->name, err);
    REQUIRE(r->m.nsym >= 1 && r->m.nsym <= 8, "nsym %d", r->m.nsym);
    int phases = HG_PH_FORWARD;
    if (train) {
        REQUIRE(hg_graph_backward(r->g, r->m.loss) == 0, "backward");
        union hg_attr a = {.adam = {0.9f, 0.999f, 1e-8f, 0.f}};
        REQUIRE(hg_graph_optimizer(r->g, HG_OPTIM_ADAMW, &a) == 0, "optimizer");
        phases = HG_PH_ALL;
    }
    int *order = malloc((size_t)hg_graph_n_nodes(r->g) * sizeof(int));
    REQUIRE(order, "oom");
    r->n = hg_graph_order(r->g, phases, order);
    r->ex = hg_exec_new(r->g, order, r->n, err, sizeof(err));
    free(order);
    REQUIRE(r->ex != NULL, "hg_exec_new: %s", err);
    hg_graph_init_params(r->g, r->ex, 42);
}

static void run_close(struct run *r)
{
    hg_exec_free(r->ex);
    hg_graph_free(r->g);
}

/* One batch: returns the summed loss; *size the sample size; acc[] the
 * metric sums. */
static double run_batch(struct run *r, const struct hg_batch *b, uint64_t step,
                        float lr, double *size, double *acc)
{
    struct hg_task_fill f;
    REQUIRE(r->task->fill(r->state, b, r->g, r->ex, &r->m, &f, err, sizeof(err)) == 0,
            "%s fill: %s", r->task->name, err);
    int64_t sym[16];
    for (int i = 0; i < 16; i++)
        sym[i] = 1;
    for (int i = 0; i < r->m.nsym; i++)
        sym[HG_SYM_INDEX(r->m.sym[i])] = f.sym_value[i];
    struct hg_step st = {.sym = sym, .step = step, .lr = lr,
                         .grad_scale = f.sample_size > 0 ? (float)(1.0 / f.sample_size) : 0.f};
    REQUIRE(hg_exec_run(r->ex, &st, 0, r->n, err, sizeof(err)) == 0, "run: %s", err);
    if (r->task->metrics)
        r->task->metrics(r->state, b, r->g, r->ex, &r->m, acc);
    *size = f.sample_size;
    return *(const float *)hg_exec_data(r->ex, r->m.loss);
}

/* Trains `epochs` epochs over the shards in dir; loss[e], accuracy[e]:
 * per-sample means of epoch e. */
static void train_epochs(struct run *r, const char *dir, int64_t batch, int epochs,
                         float lr, double *loss, double *accuracy)
{
    struct hg_dataset *ds;
    REQUIRE(hg_dataset_open(&ds, dir, r->task->fields, r->task->nfields, 0, err,
                            sizeof(err)) == 0, "open %s: %s", dir, err);
    int64_t N = hg_dataset_size(ds);
    uint64_t step = 1;
    for (int e = 0; e < epochs; e++) {
        struct hg_batch_opts bo = {.max_sentences = batch, .world = 1, .seed = 3,
                                   .shuffle = 1};
        struct hg_epoch *ep;
        REQUIRE(hg_epoch_plan(&ep, hg_dataset_lengths(ds, 0), N, &bo, (uint64_t)e + 1,
                              err, sizeof(err)) == 0, "plan: %s", err);
        struct hg_loader_opts lo = {.rank = 0, .prefetch = 1};
        struct hg_loader *ld;
        REQUIRE(hg_loader_open(&ld, ds, ep, &lo, 0, err, sizeof(err)) == 0, "%s", err);
        struct hg_batch b;
        int rc;
        double lsum = 0, nsum = 0, acc[HG_TASK_MAX_METRICS] = {0};
        while ((rc = hg_loader_next(ld, &b, err, sizeof(err))) == 1) {
            double n;
            lsum += run_batch(r, &b, step++, lr, &n, acc);
            nsum += n;
        }
        REQUIRE(rc == 0, "loader: %s", err);
        hg_loader_close(ld);
        hg_epoch_free(ep);
        REQUIRE(nsum == (double)N, "epoch %d saw %g of %lld samples", e, nsum,
                (long long)N);
        loss[e] = lsum / nsum;
        accuracy[e] = acc[0] / nsum;
    }
    hg_dataset_close(ds);
}

static void write_shard(const char *path, const struct hg_task *t,
                        const struct hg_shape *item, int64_t n,
                        void (*sample)(int64_t i, const void **v))
{
    struct hg_shard_writer *w;
    REQUIRE(hg_shard_writer_open(&w, path, t->fields, t->nfields, item, err,
                                 sizeof(err)) == 0, "writer: %s", err);
    for (int64_t i = 0; i < n; i++) {
        const void *v[8];
        int64_t count[8] = {0};
        sample(i, v);
        REQUIRE(hg_shard_writer_add(w, v, count, err, sizeof(err)) == 0, "add: %s", err);
    }
    REQUIRE(hg_shard_writer_finish(w, err, sizeof(err)) == 0, "finish: %s", err);
}

/* ------------------------------------------------------------ xor */

static float xor_x[2];
static int32_t xor_y;

static void xor_sample(int64_t i, const void **v)
{
    xor_x[0] = hg_rand_uniform(11, 0, (uint64_t)i) * 2.f - 1.f;
    xor_x[1] = hg_rand_uniform(11, 1, (uint64_t)i) * 2.f - 1.f;
    xor_y = xor_x[0] * xor_x[1] > 0;
    v[0] = xor_x;
    v[1] = &xor_y;
}

static void test_xor(const struct hg_task *t)
{
    char dir[512], path[600];
    snprintf(dir, sizeof(dir), "%s/xor", tmpdir);
    REQUIRE(mkdir(dir, 0700) == 0, "mkdir %s", dir);
    struct hg_shape item[2] = {{.ndim = 1, .dim = {2}}, {.ndim = 0}};
    snprintf(path, sizeof(path), "%s/train-0.h5", dir);
    write_shard(path, t, item, 512, xor_sample);

    const char *bad[] = {"0"};
    struct hg_task_args a = {.values = bad};
    void *state = NULL;
    EXPECT(t->setup(&state, dir, &a, err, sizeof(err)) == -1 &&
           strstr(err, "--xor-hidden") && strstr(err, "'0'"), "hidden 0: %s", err);
    const char *vals[] = {"16"};
    a.values = vals;
    REQUIRE(t->setup(&state, dir, &a, err, sizeof(err)) == 0, "xor setup: %s", err);

    struct run r;
    run_open(&r, t, state, 32, 1, 1);
    enum { E = 30 };
    double loss[E], acc[E];
    train_epochs(&r, dir, 32, E, 0.03f, loss, acc);
    EXPECT(loss[E - 1] < 0.5 * loss[0] && loss[E - 1] < 0.3,
           "xor loss %.4f -> %.4f", loss[0], loss[E - 1]);
    EXPECT(acc[E - 1] > 0.9 && acc[E - 1] <= 1.0, "xor accuracy %.3f", acc[E - 1]);

    /* a dummy batch: valid symbols, weight 0 */
    struct hg_batch dummy = {.size = 0};
    struct hg_task_fill f;
    REQUIRE(t->fill(state, &dummy, r.g, r.ex, &r.m, &f, err, sizeof(err)) == 0, "%s", err);
    EXPECT(f.sample_size == 0 && f.sym_value[0] == 1, "xor dummy batch");
    run_close(&r);
    t->teardown(state);
    printf("ok  xor plug-in: loss %.4f -> %.4f, accuracy %.3f -> %.3f\n", loss[0],
           loss[E - 1], acc[0], acc[E - 1]);
}



/* The example plug-in through the real program: hgtrain --task-plugin. */
static void test_hgtrain_plugin(void)
{
    char cmd[2048], log[600];
    snprintf(log, sizeof(log), "%s/hgtrain.log", tmpdir);
    snprintf(cmd, sizeof(cmd),
             "'%s/hgtrain' --task-plugin '%s/tasks/examples/.libs/xor_task.so' "
             "--data '%s/xor' --xor-hidden 16 --max-sentences 32 --optimizer adamw "
             "--lr 0.03 --max-epoch 20 --validate-interval 0 --no-save "
             "--log-format simple --log-interval 16 >'%s' 2>&1",
             builddir, builddir, tmpdir, log);
    int rc = system(cmd);
    FILE *f = fopen(log, "r");
    char line[1024], first[1024] = "", last[1024] = "";
    int done = 0;
    while (f && fgets(line, sizeof(line), f)) {
        if (strstr(line, "| update ")) {
            if (!first[0])
                snprintf(first, sizeof(first), "%s", line);
            snprintf(last, sizeof(last), "%s", line);
        }
        done |= strstr(line, "| done:") != NULL;
    }
    if (f)
        fclose(f);
    const char *a = strstr(first, "| loss "), *b = strstr(last, "| loss ");
    double l0 = a ? atof(a + 7) : 0, l1 = b ? atof(b + 7) : 0;
    EXPECT(rc == 0 && done, "hgtrain --task-plugin exited %d (log %s)", rc, log);
    EXPECT(a && b && l1 < 0.6 * l0, "hgtrain xor loss %g -> %g", l0, l1);
    if (rc == 0 && done)
        printf("ok  hgtrain --task-plugin xor_task.so: loss %.4f -> %.4f\n", l0, l1);

    /* --list-tasks lists the plug-in after the built-in tasks */
    snprintf(cmd, sizeof(cmd),
             "'%s/hgtrain' --task-plugin '%s/tasks/examples/.libs/xor_task.so' --list-tasks "
             ">'%s' 2>&1", builddir, builddir, log);
    rc = system(cmd);
    int builtin = 0, plugin = 0;
    f = fopen(log, "r");
    while (f && fgets(line, sizeof(line), f)) {
        builtin |= strncmp(line, "translation ", 12) == 0;
        plugin |= strncmp(line, "xor ", 4) == 0 && strstr(line, "(plug-in ") &&
                  strstr(line, "xor_task.so)");
    }
    if (f)
        fclose(f);
    EXPECT(rc == 0 && builtin && plugin, "--task-plugin --list-tasks: exit %d, built-in %d, "
           "plug-in %d (log %s)", rc, builtin, plugin, log);
}

/* ------------------------------------------------- controller: update-freq */

/* Feeds the first `count` batches of a plan with max_sentences bs (natural
 * order) into c, with a dummy batch after the first when dummy is set. */
static void feed(struct hg_ctl *c, struct hg_dataset *ds, int64_t bs, int count,
                 int dummy, struct hg_ctl_stats *st)
{
    struct hg_batch_opts bo = {.max_sentences = bs, .world = 1, .seed = 3};
    struct hg_epoch *ep;
    REQUIRE(hg_epoch_plan(&ep, hg_dataset_lengths(ds, 0), hg_dataset_size(ds), &bo, 1,
                          err, sizeof(err)) == 0, "plan: %s", err);
    struct hg_loader_opts lo = {.rank = 0};
    struct hg_loader *ld;
    REQUIRE(hg_loader_open(&ld, ds, ep, &lo, 0, err, sizeof(err)) == 0, "%s", err);
    struct hg_batch b;
    for (int i = 0; i < count; i++) {
        REQUIRE(hg_loader_next(ld, &b, err, sizeof(err)) == 1, "batch %d: %s", i, err);
        REQUIRE(hg_ctl_accumulate(c, 0, &b, st, err, sizeof(err)) == 0, "%s", err);
        if (dummy && i == 0) {
            struct hg_batch d = {.size = 0};
            REQUIRE(hg_ctl_accumulate(c, 0, &d, st, err, sizeof(err)) == 0, "%s", err);
        }
    }
    REQUIRE(hg_ctl_update(c, 0, 0.05, st, err, sizeof(err)) == 0, "%s", err);
    hg_loader_close(ld);
    hg_epoch_free(ep);
}

/* One batch of 16 against two micro-batches of 8 (a dummy batch after the
 * first) through two fresh controllers of the task's current setup: the
 * largest parameter difference after the update (INFINITY: other sizes);
 * st[2] the two updates' statistics. */
static double one_vs_micro(const struct hg_task *t, void *state, struct hg_dataset *ds,
                           int64_t max_len, struct hg_ctl_stats *st)
{
    struct hg_ctl_cfg cfg = {.optim = HG_OPTIM_SGD, .hyper = {.sgd = {.momentum = 0.9f}},
                             .max_batch = 16, .max_len = max_len, .seed = 5};
    struct hg_ctl *c[2];
    memset(st, 0, 2 * sizeof(*st));
    for (int i = 0; i < 2; i++)
        REQUIRE(hg_ctl_new(&c[i], t, state, &cfg, err, sizeof(err)) == 0, "%s", err);
    feed(c[0], ds, 16, 1, 0, &st[0]);
    feed(c[1], ds, 8, 2, 1, &st[1]);
    size_t n0, n1;
    const float *p0 = hg_exec_param_block(hg_ctl_exec(c[0]), &n0);
    const float *p1 = hg_exec_param_block(hg_ctl_exec(c[1]), &n1);
    double md = n0 == n1 ? 0 : INFINITY;
    for (size_t i = 0; i < n0 && n0 == n1; i++)
        md = fmax(md, fabs((double)p0[i] - p1[i]));
    for (int i = 0; i < 2; i++)
        hg_ctl_free(c[i]);
    return md;
}

/* One batch of 16 == two micro-batches of 8 (--update-freq 2): the loss is a
 * sum and the update divides by the summed sample size. A dummy batch in
 * between changes nothing. */
static void test_update_freq(const struct hg_task *t)
{
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/xor", tmpdir);
    const char *vals[] = {"16"};
    struct hg_task_args a = {.values = vals};
    void *state = NULL;
    REQUIRE(t->setup(&state, dir, &a, err, sizeof(err)) == 0, "setup: %s", err);
    struct hg_dataset *ds;
    REQUIRE(hg_dataset_open(&ds, dir, t->fields, t->nfields, 0, err, sizeof(err)) == 0,
            "%s", err);
    struct hg_ctl_cfg cfg = {.optim = HG_OPTIM_SGD, .hyper = {.sgd = {.momentum = 0.9f}},
                             .max_batch = 16, .max_len = 1, .seed = 5};
    struct hg_ctl *c[3];
    struct hg_ctl_stats st[3];
    memset(st, 0, sizeof(st));
    for (int i = 0; i < 3; i++)
        REQUIRE(hg_ctl_new(&c[i], t, state, &cfg, err, sizeof(err)) == 0, "%s", err);
    feed(c[0], ds, 16, 1, 0, &st[0]);
    feed(c[1], ds, 8, 2, 0, &st[1]);
    feed(c[2], ds, 8, 2, 1, &st[2]);
    size_t n0, n1, n2;
    const float *p0 = hg_exec_param_block(hg_ctl_exec(c[0]), &n0);
    const float *p1 = hg_exec_param_block(hg_ctl_exec(c[1]), &n1);
    const float *p2 = hg_exec_param_block(hg_ctl_exec(c[2]), &n2);
    double md = 0, moved = 0;
    for (size_t i = 0; i < n0 && n0 == n1; i++)
        md = fmax(md, fabs((double)p0[i] - p1[i]));
    EXPECT(n0 == n1 && md < 1e-6, "batch 16 vs 2 x 8: params differ by %g", md);
    EXPECT(st[0].sample_size == 16 && st[1].sample_size == 16 &&
           fabs(st[0].loss_sum - st[1].loss_sum) < 1e-4 * fabs(st[0].loss_sum),
           "loss %g/%g vs %g/%g", st[0].loss_sum, st[0].sample_size, st[1].loss_sum,
           st[1].sample_size);
    EXPECT(n1 == n2 && memcmp(p1, p2, n1 * sizeof(float)) == 0,
           "a dummy batch changed the update");
    /* the update moved the parameters (the test is not vacuous) */
    struct hg_ctl *fresh;
    REQUIRE(hg_ctl_new(&fresh, t, state, &cfg, err, sizeof(err)) == 0, "%s", err);
    size_t nf;
    const float *pf = hg_exec_param_block(hg_ctl_exec(fresh), &nf);
    for (size_t i = 0; i < nf; i++)
        moved = fmax(moved, fabs((double)pf[i] - p0[i]));
    EXPECT(moved > 1e-4, "the update did not move the parameters (%g)", moved);
    /* a batch larger than the plan is refused before fill() writes */
    struct hg_ctl_cfg small = cfg;
    small.max_batch = 8;
    struct hg_ctl *cs;
    REQUIRE(hg_ctl_new(&cs, t, state, &small, err, sizeof(err)) == 0, "%s", err);
    {
        struct hg_batch_opts bo = {.max_sentences = 16, .world = 1, .seed = 3};
        struct hg_epoch *ep;
        REQUIRE(hg_epoch_plan(&ep, hg_dataset_lengths(ds, 0), hg_dataset_size(ds), &bo,
                              1, err, sizeof(err)) == 0, "plan: %s", err);
        struct hg_loader_opts lo = {.rank = 0};
        struct hg_loader *ld;
        REQUIRE(hg_loader_open(&ld, ds, ep, &lo, 0, err, sizeof(err)) == 0, "%s", err);
        struct hg_batch b;
        struct hg_ctl_stats sst;
        memset(&sst, 0, sizeof(sst));
        REQUIRE(hg_loader_next(ld, &b, err, sizeof(err)) == 1, "%s", err);
        err[0] = 0;
        EXPECT(hg_ctl_accumulate(cs, 0, &b, &sst, err, sizeof(err)) == -1 &&
               strstr(err, "16 samples") && strstr(err, "holds 8"),
               "oversized batch: '%s'", err);
        hg_loader_close(ld);
        hg_epoch_free(ep);
    }
    hg_ctl_free(cs);
    printf("ok  controller: batch 16 == 2 x 8 micro-batches (max diff %.2g, update %.2g), "
           "dummy batch inert, oversized batch refused\n", md, moved);
    hg_ctl_free(fresh);
    for (int i = 0; i < 3; i++)
        hg_ctl_free(c[i]);
    hg_dataset_close(ds);
    t->teardown(state);
}

/* ------------------------------------------------------------ mnist */

static uint8_t mn_img[28 * 28];
static int32_t mn_label;

/* Class k: a bright 6x6 square at a class-dependent place, plus noise. */
static void mnist_sample(int64_t i, const void **v)
{
    int k = (int)(i % 10);
    int r0 = 2 + (k / 5) * 13, c0 = 1 + (k % 5) * 5;
    for (int p = 0; p < 28 * 28; p++) {
        int rr = p / 28, cc = p % 28;
        int on = rr >= r0 && rr < r0 + 6 && cc >= c0 && cc < c0 + 6;
        float noise = hg_rand_uniform(5, (uint64_t)i, (uint64_t)p) * 40.f;
        mn_img[p] = (uint8_t)(on ? 200.f + noise : noise);
    }
    mn_label = k;
    v[0] = mn_img;
    v[1] = &mn_label;
}

static void test_mnist(void)
{
    const struct hg_task *t = hg_task_find("mnist");
    REQUIRE(t, "mnist");
    char dir[512], path[600];
    snprintf(dir, sizeof(dir), "%s/mnist", tmpdir);
    REQUIRE(mkdir(dir, 0700) == 0, "mkdir %s", dir);
    struct hg_shape item[2] = {{.ndim = 2, .dim = {28, 28}}, {.ndim = 0}};
    snprintf(path, sizeof(path), "%s/train-0.h5", dir);
    write_shard(path, t, item, 256, mnist_sample);

    void *state = NULL;
    const char *bad[] = {"yes", NULL}; /* one value per option */
    struct hg_task_args a = {.values = bad};
    EXPECT(t->setup(&state, dir, &a, err, sizeof(err)) == -1 &&
           strstr(err, "--mnist-normalize"), "normalize yes: %s", err);
    const char *bad_p[] = {"1", "1.5"};
    a.values = bad_p;
    EXPECT(t->setup(&state, dir, &a, err, sizeof(err)) == -1 && strstr(err, "--dropout"),
           "dropout 1.5: %s", err);
    const char *vals[] = {t->options[0].def, NULL};
    a.values = vals;
    REQUIRE(t->setup(&state, dir, &a, err, sizeof(err)) == 0, "setup: %s", err);

    struct run r;
    run_open(&r, t, state, 32, 1, 1);
    enum { E = 2 };
    double loss[E], acc[E];
    train_epochs(&r, dir, 32, E, 1e-3f, loss, acc);
    EXPECT(isfinite(loss[E - 1]) && loss[E - 1] < 0.7 * loss[0],
           "mnist loss %.4f -> %.4f", loss[0], loss[E - 1]);
    for (int e = 0; e < E; e++)
        EXPECT(acc[e] >= 0 && acc[e] <= 1, "accuracy %g", acc[e]);

    /* evaluation graph (no dropout) with the trained weights */
    struct run ev;
    run_open(&ev, t, state, 16, 1, 0);
    size_t np, nq;
    float *p = hg_exec_param_block(r.ex, &np), *q = hg_exec_param_block(ev.ex, &nq);
    REQUIRE(np == nq, "param blocks %zu vs %zu", np, nq);
    memcpy(q, p, np * sizeof(float));
    uint8_t img[16 * 784];
    int32_t lab[16];
    for (int i = 0; i < 16; i++) {
        const void *v[2];
        mnist_sample(1000 + i, v);
        memcpy(img + i * 784, mn_img, 784);
        lab[i] = mn_label;
    }
    struct hg_batch b = {.size = 16, .step = 0};
    b.field[0] = (struct hg_tview){img, HG_U8, {.ndim = 3, .dim = {16, 28, 28}}};
    b.field[1] = (struct hg_tview){lab, HG_I32, {.ndim = 1, .dim = {16}}};
    double n, m[HG_TASK_MAX_METRICS] = {0};
    double l = run_batch(&ev, &b, 1, 0.f, &n, m);
    EXPECT(n == 16 && m[0] >= 0 && m[0] <= 16 && isfinite(l),
           "eval: size %g correct %g loss %g", n, m[0], l);
    EXPECT(m[0] / n > 0.5, "eval accuracy %.3f after training", m[0] / n);

    /* a smaller batch resolves the symbol */
    b.size = 5;
    b.field[0].shape.dim[0] = 5;
    b.field[1].shape.dim[0] = 5;
    double m5[HG_TASK_MAX_METRICS] = {0};
    run_batch(&ev, &b, 1, 0.f, &n, m5);
    EXPECT(n == 5 && m5[0] <= 5, "batch of 5: %g, %g", n, m5[0]);

    /* a dummy batch: one zero image, batch symbol 1, sample size 0; no metrics */
    struct hg_batch dummy = {.size = 0};
    double md[HG_TASK_MAX_METRICS] = {0};
    run_batch(&ev, &dummy, 1, 0.f, &n, md);
    EXPECT(n == 0 && md[0] == 0, "dummy: size %g correct %g", n, md[0]);

    /* a label out of range is named */
    lab[3] = 12;
    struct hg_task_fill f;
    EXPECT(t->fill(state, &b, ev.g, ev.ex, &ev.m, &f, err, sizeof(err)) == -1 &&
           strstr(err, "label 12"), "label 12: %s", err);
    lab[3] = 3;
    /* a wrong image shape is named */
    b.field[0].shape.dim[1] = 27;
    EXPECT(t->fill(state, &b, ev.g, ev.ex, &ev.m, &f, err, sizeof(err)) == -1 &&
           strstr(err, "image"), "image 27: %s", err);

    run_close(&ev);
    run_close(&r);
    t->teardown(state);
    printf("ok  mnist: loss %.4f -> %.4f, train accuracy %.3f -> %.3f, eval %.3f\n",
           loss[0], loss[E - 1], acc[0], acc[E - 1], m[0] / 16);
}

/* ------------------------------------------------------------ bert */

/* A collated batch in buffers of our own (the loader reuses its own). */
struct own_batch {
    struct hg_batch b;
    void *buf[8];
    int32_t *len[8];
    int64_t *ids;   /* [B] the batch's sample ids (the epoch plan's are freed) */
};

static void own_copy(struct own_batch *o, const struct hg_batch *b, int nfields)
{
    memset(o, 0, sizeof(*o));
    o->b = *b;
    if (b->ids) {
        o->ids = malloc((size_t)(b->size ? b->size : 1) * sizeof *o->ids);
        REQUIRE(o->ids, "oom");
        memcpy(o->ids, b->ids, (size_t)b->size * sizeof *o->ids);
        o->b.ids = o->ids;
    }
    for (int f = 0; f < nfields; f++) {
        size_t n = (size_t)hg_shape_numel(&b->field[f].shape) *
                   hg_dtype_size(b->field[f].dtype);
        o->buf[f] = malloc(n ? n : 1);
        REQUIRE(o->buf[f], "oom");
        memcpy(o->buf[f], b->field[f].data, n);
        o->b.field[f].data = o->buf[f];
        if (b->lengths[f]) { /* SEQ fields */
            o->len[f] = malloc((size_t)(b->size ? b->size : 1) * sizeof(int32_t));
            REQUIRE(o->len[f], "oom");
            memcpy(o->len[f], b->lengths[f], (size_t)b->size * sizeof(int32_t));
            o->b.lengths[f] = o->len[f];
        }
    }
}

static void own_free(struct own_batch *o, int n)
{
    for (int i = 0; i < n; i++)
        free(o[i].ids);
    for (int i = 0; i < n; i++)
        for (int f = 0; f < 8; f++) {
            free(o[i].buf[f]);
            free(o[i].len[f]);
        }
}

/* The first n batches of at most bs samples of epoch 1 (shuffled), copied. */
static void bert_batches(struct hg_dataset *ds, const struct hg_task *t, int64_t bs,
                         int n, struct own_batch *out)
{
    struct hg_batch_opts bo = {.max_sentences = bs, .world = 1, .seed = 3, .shuffle = 1};
    struct hg_epoch *ep;
    REQUIRE(hg_epoch_plan(&ep, hg_dataset_lengths(ds, 0), hg_dataset_size(ds), &bo, 1,
                          err, sizeof(err)) == 0, "plan: %s", err);
    struct hg_loader_opts lo = {.rank = 0};
    struct hg_loader *ld;
    REQUIRE(hg_loader_open(&ld, ds, ep, &lo, 0, err, sizeof(err)) == 0, "%s", err);
    struct hg_batch b;
    for (int i = 0; i < n; i++) {
        REQUIRE(hg_loader_next(ld, &b, err, sizeof(err)) == 1, "batch %d: %s", i, err);
        own_copy(&out[i], &b, t->nfields);
    }
    hg_loader_close(ld);
    hg_epoch_free(ep);
}

static void copy_params(struct run *dst, struct run *src)
{
    size_t np, nq;
    float *p = hg_exec_param_block(src->ex, &np), *q = hg_exec_param_block(dst->ex, &nq);
    REQUIRE(np == nq, "param blocks %zu vs %zu", np, nq);
    memcpy(q, p, np * sizeof(float));
}

/* Mean loss per masked token of the eval plan over batches b[0..n). */
static double bert_eval(struct run *ev, struct own_batch *b, int n, double *acc)
{
    double l = 0, size = 0, m[HG_TASK_MAX_METRICS] = {0};
    for (int i = 0; i < n; i++) {
        double s;
        l += run_batch(ev, &b[i].b, 1, 0.f, &s, m);
        size += s;
    }
    *acc = m[0] / size;
    return l / size;
}

enum { BERT_B = 16, BERT_L = 64, BERT_P = 10, BERT_NB = 40, BERT_UPDATES = 80 };

static void test_bert(void)
{
    const struct hg_task *t = hg_task_find("bert");
    REQUIRE(t, "bert not in the registry");
    EXPECT(strcmp(t->sample_unit, "tokens") == 0 && t->nfields == 5 &&
           strcmp(t->metric_names[0], "accuracy") == 0 && t->maximize_metric0,
           "bert declaration");
    const char *src = getenv("HG_SRCDIR");
    REQUIRE(src, "HG_SRCDIR not set");
    char dir[512], cmd[2048];
    snprintf(dir, sizeof(dir), "%s/lm", tmpdir);
    /* documents of 15 sentences, as tests/preprocess.sh */
    snprintf(cmd, sizeof(cmd),
             "awk 'NR %% 15 == 0 { print \"\" } { print }' '%s/tests/data/corpus.en' "
             ">'%s/lm.txt' && '%s/hgpreprocess' lm --input '%s/lm.txt' --destdir '%s' "
             "--bpe-merges 500 --max-seq-len %d --max-predictions %d --seed 7 "
             ">'%s/lm.log' 2>&1", src, tmpdir, builddir, tmpdir, dir, BERT_L, BERT_P,
             tmpdir);
    REQUIRE(system(cmd) == 0, "hgpreprocess lm failed (%s/lm.log)", tmpdir);

    /* options and the dictionary are checked by setup */
    const char *vals[8] = {NULL}; /* one per bert option */
    struct hg_task_args a = {.values = vals};
    void *state = NULL;
    vals[2] = "3";
    EXPECT(t->setup(&state, dir, &a, err, sizeof(err)) == -1 &&
           strstr(err, "--bert-heads 3 does not divide --bert-embed-dim 128"),
           "heads 3: %s", err);
    vals[2] = NULL;
    vals[0] = "two";
    EXPECT(t->setup(&state, dir, &a, err, sizeof(err)) == -1 &&
           strstr(err, "--bert-layers") && strstr(err, "'two'"), "layers two: %s", err);
    vals[0] = NULL;
    vals[7] = "swish"; /* --activation-fn: relu or gelu */
    EXPECT(t->setup(&state, dir, &a, err, sizeof(err)) == -1 &&
           strstr(err, "--activation-fn") && strstr(err, "'swish'"), "activation swish: %s", err);
    vals[7] = NULL;
    EXPECT(t->setup(&state, tmpdir, &a, err, sizeof(err)) == -1 && strstr(err, "dict.txt"),
           "no dict.txt: %s", err);
    /* every plan below holds 64 positions, whatever its max length */
    vals[5] = "64";
    REQUIRE(t->setup(&state, dir, &a, err, sizeof(err)) == 0, "setup: %s", err);

    char split[600];
    snprintf(split, sizeof(split), "%s/train", dir);
    struct hg_dataset *ds;
    REQUIRE(hg_dataset_open(&ds, split, t->fields, t->nfields, 0, err, sizeof(err)) == 0,
            "open %s: %s", split, err);
    int32_t *cost = malloc((size_t)hg_dataset_size(ds) * sizeof(int32_t));
    REQUIRE(cost, "oom");
    t->cost(state, ds, cost);
    EXPECT(cost[0] == BERT_L && cost[hg_dataset_size(ds) - 1] == BERT_L,
           "cost %d, want L = %d", cost[0], BERT_L);
    free(cost);
    static struct own_batch bb[BERT_NB];
    bert_batches(ds, t, BERT_B, BERT_NB, bb);

    struct run tr, ev;
    run_open(&tr, t, state, BERT_B, BERT_L, 1);
    run_open(&ev, t, state, BERT_B, BERT_L, 0);
    copy_params(&ev, &tr);

    /* sample size = masked positions (non-zero entries), loss finite */
    struct hg_batch *b0 = &bb[0].b;
    const int32_t *mpos = b0->field[3].data; /* [B,P] */
    int64_t nmask = 0;
    for (int64_t i = 0; i < b0->size * BERT_P; i++)
        nmask += mpos[i] != 0;
    double n, m0[HG_TASK_MAX_METRICS] = {0};
    double l0 = run_batch(&ev, b0, 1, 0.f, &n, m0);
    EXPECT(isfinite(l0) && l0 > 0 && n == (double)nmask && nmask > b0->size,
           "batch 0: loss %g, sample size %g, masked %lld", l0, n, (long long)nmask);
    EXPECT(m0[0] >= 0 && m0[0] <= n, "correct %g of %g", m0[0], n);

    /* b0 cut to 40 real tokens per sample (predictions beyond dropped) */
    enum { CUT = 40 };
    struct own_batch cut;
    own_copy(&cut, b0, t->nfields);
    for (int64_t i = 0; i < b0->size; i++) {
        int8_t *mk = (int8_t *)cut.buf[1] + i * BERT_L;  /* [L] */
        int32_t *mp = (int32_t *)cut.buf[3] + i * BERT_P; /* [P] sorted, then 0 */
        for (int j = CUT; j < BERT_L; j++)
            mk[j] = 0;
        for (int k = 0; k < BERT_P; k++)
            if (mp[k] >= CUT)
                mp[k] = 0;
    }
    /* the symbolic plan == a plan built for exactly this batch, bitwise */
    int64_t sizes[3] = {b0->size, 5, b0->size};
    for (int k = 0; k < 3; k++) {
        struct hg_batch bk = k == 2 ? cut.b : *b0;
        bk.size = sizes[k];
        for (int f = 0; f < t->nfields; f++)
            bk.field[f].shape.dim[0] = sizes[k];
        struct hg_task_fill f;
        REQUIRE(t->fill(state, &bk, ev.g, ev.ex, &ev.m, &f, err, sizeof(err)) == 0,
                "%s", err);
        double ns, ms[HG_TASK_MAX_METRICS] = {0}, me[HG_TASK_MAX_METRICS] = {0};
        float ls = (float)run_batch(&ev, &bk, 1, 0.f, &ns, ms);
        struct run exact;
        run_open(&exact, t, state, f.sym_value[0], f.sym_value[1], 0);
        copy_params(&exact, &tr);
        float le = (float)run_batch(&exact, &bk, 1, 0.f, &ns, me);
        EXPECT(memcmp(&ls, &le, sizeof(float)) == 0 && ms[0] == me[0],
               "B %lld T %lld: symbolic plan loss %.9g, exact plan %.9g",
               (long long)f.sym_value[0], (long long)f.sym_value[1], ls, le);
        run_close(&exact);
        EXPECT(k < 2 || f.sym_value[1] == CUT, "cut batch: T %lld", (long long)f.sym_value[1]);
        printf("ok  bert: B %lld T %lld (of L %d), %g masked tokens, loss %.9g in "
                   "both plans\n", (long long)f.sym_value[0], (long long)f.sym_value[1],
                   BERT_L, ns, ls);
    }

    own_free(&cut, 1);

    /* a dummy batch */
    struct hg_batch dummy = {.size = 0};
    double md[HG_TASK_MAX_METRICS] = {0};
    run_batch(&ev, &dummy, 1, 0.f, &n, md);
    EXPECT(n == 0 && md[0] == 0, "dummy: size %g correct %g", n, md[0]);

    /* Adam on the train plan (dropout 0.1) lowers the held-in loss */
    double acc_before, acc_after;
    double before = bert_eval(&ev, bb, 4, &acc_before);
    for (int u = 0; u < BERT_UPDATES; u++) {
        double s, mm[HG_TASK_MAX_METRICS] = {0};
        run_batch(&tr, &bb[u % BERT_NB].b, (uint64_t)u + 1, 5e-3f, &s, mm);
    }
    copy_params(&ev, &tr);
    double after = bert_eval(&ev, bb, 4, &acc_after);
    EXPECT(isfinite(after) && after < before - 0.5,
           "bert loss per masked token %.4f -> %.4f", before, after);
    EXPECT(acc_after > acc_before, "accuracy %.3f -> %.3f", acc_before, acc_after);

    /* bad input is named, never crashes */
    struct own_batch bad;
    own_copy(&bad, b0, t->nfields);
    struct hg_task_fill f;
    int32_t *ids = bad.buf[0]; /* [B,L] */
    ids[3 * BERT_L + 1] = 100000;
    EXPECT(t->fill(state, &bad.b, ev.g, ev.ex, &ev.m, &f, err, sizeof(err)) == -1 &&
           strstr(err, "sample 3: input_ids 100000 at position 1 not in [0,") &&
               strstr(err, "; sample 3 is row "),
           "token 100000: %s", err);
    ids[3 * BERT_L + 1] = -2;
    EXPECT(t->fill(state, &bad.b, ev.g, ev.ex, &ev.m, &f, err, sizeof(err)) == -1 &&
           strstr(err, "input_ids -2"), "token -2: %s", err);
    memcpy(bad.buf[0], b0->field[0].data, (size_t)b0->size * BERT_L * sizeof(int32_t));
    int32_t *bp = bad.buf[3]; /* [B,P] */
    bp[2 * BERT_P] = BERT_L + 6;
    EXPECT(t->fill(state, &bad.b, ev.g, ev.ex, &ev.m, &f, err, sizeof(err)) == -1 &&
           strstr(err, "sample 2: masked_lm_positions 70 outside the sequence"),
           "position 70: %s", err);
    bp[2 * BERT_P] = mpos[2 * BERT_P];
    int32_t *bi = bad.buf[4]; /* [B,P] */
    bi[1] = 1 << 30;
    EXPECT(t->fill(state, &bad.b, ev.g, ev.ex, &ev.m, &f, err, sizeof(err)) == -1 &&
           strstr(err, "sample 0: masked_lm_ids 1073741824"), "masked id: %s", err);
    bi[1] = ((const int32_t *)b0->field[4].data)[1];
    int8_t *sg = bad.buf[2]; /* [B,L] */
    sg[0] = 7;
    EXPECT(t->fill(state, &bad.b, ev.g, ev.ex, &ev.m, &f, err, sizeof(err)) == -1 &&
           strstr(err, "segment_ids 7"), "segment 7: %s", err);
    sg[0] = 0;
    bad.b.field[1].dtype = HG_I32;
    EXPECT(t->fill(state, &bad.b, ev.g, ev.ex, &ev.m, &f, err, sizeof(err)) == -1 &&
           strstr(err, "input_mask is i32") && strstr(err, "; sample 0 is row ") &&
               strstr(err, ".h5"), "mask dtype (its shard and row named): %s", err);
    bad.b.field[1].dtype = HG_I8;
    EXPECT(t->fill(state, &bad.b, ev.g, ev.ex, &ev.m, &f, err, sizeof(err)) == 0,
           "restored batch: %s", err);
    /* a plan too short for the batch refuses it before writing */
    struct run shortp;
    run_open(&shortp, t, state, BERT_B, 4, 0);
    EXPECT(t->fill(state, &bad.b, shortp.g, shortp.ex, &shortp.m, &f, err,
                   sizeof(err)) == -1 && strstr(err, "the plan holds 16 of 4"),
           "short plan: %s", err);
    run_close(&shortp);
    own_free(&bad, 1);

    own_free(bb, BERT_NB);
    run_close(&ev);
    run_close(&tr);
    t->teardown(state);

    /* through the controller: one batch of 16 == two micro-batches of 8
     * (each trimmed to its own length), the property data-parallel
     * training relies on; with dropout 0, and with 0.1 (attention dropout
     * too): the masks are keyed by sample and position, not by micro-batch
     * or padding (docs/reproducibility.md, "Dropout") */
    double md2 = 0, mdd = 0;
    for (int drop = 0; drop < 2; drop++) {
        vals[4] = drop ? "0.1" : "0";
        REQUIRE(t->setup(&state, dir, &a, err, sizeof(err)) == 0, "setup: %s", err);
        struct hg_ctl_stats st[2];
        double md = one_vs_micro(t, state, ds, BERT_L, st);
        EXPECT(md < 1e-5, "bert batch 16 vs 2 x 8, dropout %s: params differ by %g", vals[4], md);
        EXPECT(st[0].sample_size == st[1].sample_size &&
               fabs(st[0].loss_sum - st[1].loss_sum) < 1e-5 * fabs(st[0].loss_sum),
               "dropout %s: loss %g/%g vs %g/%g", vals[4], st[0].loss_sum, st[0].sample_size,
               st[1].loss_sum, st[1].sample_size);
        *(drop ? &mdd : &md2) = md;
        if (!drop)
            t->teardown(state);
    }
    hg_dataset_close(ds);
    t->teardown(state);
    printf("ok  bert: loss/token %.4f -> %.4f, accuracy %.3f -> %.3f after %d Adam "
           "updates; bad ids named; 16 == 2 x 8 (max diff %.2g; with dropout 0.1 %.2g)\n",
           before, after, acc_before, acc_after, BERT_UPDATES, md2, mdd);
}

/* ------------------------------------------------------------ translation */

/* Option indices of the translation task (its options[] order). */
static int tr_opt(const struct hg_task *t, const char *name)
{
    for (int i = 0; t->options[i].name; i++)
        if (strcmp(t->options[i].name, name) == 0)
            return i;
    REQUIRE(0, "translation has no option --%s", name);
    return -1;
}

/* fairseq 0.12's label_smoothed_nll_loss over a run's kept logp and
 * target, in double: loss = (1-eps-eps_i) nll + eps_i smooth, eps_i =
 * eps/(V-1), pads ignored. */
static void tr_reference(struct run *r, double eps, double *loss, double *nll)
{
    int tt = hg_graph_find(r->g, "target");
    REQUIRE(tt >= 0 && r->m.metric_src >= 0, "no target/logp");
    const struct hg_shape *sh = &hg_graph_tensor(r->g, r->m.metric_src)->shape;
    REQUIRE(sh->ndim == 3, "logp rank %d", sh->ndim);
    const int64_t n = sh->dim[0] * sh->dim[1], V = sh->dim[2];
    const float *lp = hg_exec_data(r->ex, r->m.metric_src); /* [B,T,V] */
    const int32_t *tg = hg_exec_data(r->ex, tt);            /* [B,T] */
    double l = 0, nl = 0, eps_i = eps / (double)(V - 1);
    for (int64_t i = 0; i < n; i++) {
        if (tg[i] == 1)
            continue;
        double smooth = 0;
        for (int64_t k = 0; k < V; k++)
            smooth -= lp[i * V + k];
        double nll_i = -lp[i * V + tg[i]];
        nl += nll_i;
        l += (1.0 - eps - eps_i) * nll_i + eps_i * smooth;
    }
    *loss = l;
    *nll = nl;
}

static float tr_nll_of(struct run *r)
{
    return *(const float *)hg_exec_data(r->ex, r->m.nll >= 0 ? r->m.nll : r->m.loss);
}

enum { TR_B = 16, TR_NB = 12, TR_UPDATES = 24 };

static void test_translation(void)
{
    const struct hg_task *t = hg_task_find("translation");
    REQUIRE(t, "translation not in the registry");
    EXPECT(strcmp(t->sample_unit, "tokens") == 0 && t->nfields == 2 &&
           strcmp(t->fields[0].name, "src") == 0 && strcmp(t->fields[1].name, "tgt") == 0 &&
           t->fields[0].kind == HG_FIELD_SEQ && !t->metric_names[0], "translation declaration");
    const char *src = getenv("HG_SRCDIR");
    REQUIRE(src, "HG_SRCDIR not set");
    char dir[512], cmd[4096];
    snprintf(dir, sizeof(dir), "%s/mt", tmpdir);
    /* as tests/preprocess.sh: the corpus, its first 200 lines as valid */
    snprintf(cmd, sizeof(cmd),
             "head -n 200 '%s/tests/data/corpus.en' >'%s/v.en' && "
             "head -n 200 '%s/tests/data/corpus.es' >'%s/v.es' && "
             "'%s/hgpreprocess' translation --source-lang en --target-lang es "
             "--trainpref '%s/tests/data/corpus' --validpref '%s/v' --destdir '%s' "
             "--bpe-merges 500 >'%s/mt.log' 2>&1", src, tmpdir, src, tmpdir, builddir, src,
             tmpdir, dir, tmpdir);
    REQUIRE(system(cmd) == 0, "hgpreprocess translation failed (%s/mt.log)", tmpdir);

    const char *vals[32] = {NULL};
    struct hg_task_args a = {.values = vals, .arch = "transformer_tiny"};
    void *state = NULL;
    /* setup: languages, presets, options, dictionaries */
    EXPECT(t->setup(&state, dir, &a, err, sizeof(err)) == -1 &&
           strstr(err, "dict.en.txt and dict.es.txt: say which is the source"),
           "no languages: %s", err);
    const int o_sl = tr_opt(t, "source-lang"), o_tl = tr_opt(t, "target-lang");
    const int o_eh = tr_opt(t, "encoder-attention-heads");
    const int o_do = tr_opt(t, "dropout"), o_ls = tr_opt(t, "label-smoothing");
    const int o_sa = tr_opt(t, "share-all-embeddings");
    const int o_sd = tr_opt(t, "share-decoder-input-output-embed");
    const int o_enb = tr_opt(t, "encoder-normalize-before");
    const int o_dnb = tr_opt(t, "decoder-normalize-before");
    const int o_el = tr_opt(t, "encoder-layers");
    EXPECT(t->options[o_sa].flag && t->options[o_enb].flag && !t->options[o_do].flag,
           "switches");
    vals[o_tl] = "es"; /* the source is the other dictionary */
    a.arch = "transformer_huge";
    EXPECT(t->setup(&state, dir, &a, err, sizeof(err)) == -1 &&
           strstr(err, "--arch transformer_huge: unknown"), "arch: %s", err);
    a.arch = "transformer_tiny";
    vals[o_eh] = "3";
    EXPECT(t->setup(&state, dir, &a, err, sizeof(err)) == -1 &&
           strstr(err, "--encoder-attention-heads 3 does not divide --encoder-embed-dim 64"),
           "heads 3: %s", err);
    vals[o_eh] = NULL;
    vals[o_sa] = "1";
    EXPECT(t->setup(&state, dir, &a, err, sizeof(err)) == -1 &&
           strstr(err, "--share-all-embeddings requires a joined dictionary") &&
           strstr(err, "dict.en.txt (560 symbols)"), "share-all: %s", err);
    vals[o_sa] = NULL;
    vals[o_ls] = "1.5";
    EXPECT(t->setup(&state, dir, &a, err, sizeof(err)) == -1 &&
           strstr(err, "--label-smoothing: expected a number in [0,1), got '1.5'"),
           "ls: %s", err);
    vals[o_ls] = NULL;
    vals[o_sl] = "en";
    REQUIRE(t->setup(&state, dir, &a, err, sizeof(err)) == 0, "setup: %s", err);

    char split[600];
    snprintf(split, sizeof(split), "%s/train", dir);
    struct hg_dataset *ds;
    REQUIRE(hg_dataset_open(&ds, split, t->fields, t->nfields, 0, err, sizeof(err)) == 0,
            "open %s: %s", split, err);
    int64_t N = hg_dataset_size(ds);
    int32_t *cost = malloc((size_t)N * sizeof(int32_t));
    REQUIRE(cost, "oom");
    t->cost(state, ds, cost);
    const int32_t *ls = hg_dataset_lengths(ds, 0), *lt = hg_dataset_lengths(ds, 1);
    int32_t L = 1;
    for (int64_t i = 0; i < N; i++) {
        EXPECT(cost[i] == (ls[i] > lt[i] ? ls[i] : lt[i]), "cost %lld", (long long)i);
        if (cost[i] > L)
            L = cost[i];
    }
    free(cost);
    static struct own_batch bb[TR_NB];
    bert_batches(ds, t, TR_B, TR_NB, bb);

    struct run tr, ev;
    run_open(&tr, t, state, TR_B, L, 1);
    run_open(&ev, t, state, TR_B, L, 0);
    copy_params(&ev, &tr);
    EXPECT(hg_graph_find(tr.g, "encoder.embed_tokens.weight") >= 0 &&
           hg_graph_find(tr.g, "decoder.embed_tokens.weight") >= 0 &&
           hg_graph_find(tr.g, "decoder.output_projection.weight") >= 0 &&
           hg_graph_find(tr.g, "encoder.layers.1.fc2.bias") >= 0 &&
           hg_graph_find(tr.g, "decoder.layers.1.encoder_attn.k_proj.weight") >= 0 &&
           hg_graph_find(tr.g, "decoder.layers.1.encoder_attn_layer_norm.weight") >= 0 &&
           hg_graph_find(tr.g, "encoder.layers.2.fc1.weight") < 0 &&
           hg_graph_find(tr.g, "encoder.layer_norm.weight") < 0, "fairseq parameter names");
    int64_t nparam = hg_graph_param_count(tr.g);

    /* shapes, sample size = target tokens, the loss against fairseq's formula */
    struct hg_batch *b0 = &bb[0].b;
    int64_t ntgt = 0, S0 = 0, T0 = 0;
    for (int64_t i = 0; i < b0->size; i++) {
        ntgt += b0->lengths[1][i];
        S0 = b0->lengths[0][i] > S0 ? b0->lengths[0][i] : S0;
        T0 = b0->lengths[1][i] > T0 ? b0->lengths[1][i] : T0;
    }
    double n;
    double l0 = run_batch(&ev, b0, 1, 0.f, &n, NULL);
    const struct hg_shape *lsh = &hg_graph_tensor(ev.g, ev.m.metric_src)->shape;
    EXPECT(lsh->ndim == 3 && lsh->dim[0] == b0->size && lsh->dim[1] == T0 &&
           lsh->dim[2] == 614, "logp shape [%lld,%lld,%lld], want [%lld,%lld,614]",
           (long long)lsh->dim[0], (long long)lsh->dim[1], (long long)lsh->dim[2],
           (long long)b0->size, (long long)T0);
    EXPECT(hg_graph_tensor(ev.g, hg_graph_find(ev.g, "src_tokens"))->shape.dim[1] == S0,
           "source trimmed to %lld", (long long)S0);
    EXPECT(n == (double)ntgt && ntgt > b0->size, "sample size %g, target tokens %lld", n,
           (long long)ntgt);
    double rl, rn;
    tr_reference(&ev, 0.1, &rl, &rn);
    double nl0 = tr_nll_of(&ev);
    EXPECT(fabs(l0 - rl) < 1e-5 * rl && fabs(nl0 - rn) < 1e-5 * rn && ev.m.nll >= 0,
           "label-smoothed loss %.9g vs fairseq's %.9g, nll %.9g vs %.9g", l0, rl, nl0, rn);
    /* about log V per token at the start */
    EXPECT(rn / (double)ntgt > 0.5 * log(614.0) && rn / (double)ntgt < 2 * log(614.0),
           "initial nll per token %g (log V %g)", rn / (double)ntgt, log(614.0));
    printf("ok  translation: B %lld, source %lld, target %lld, %lld target tokens; loss "
           "%.6f nll %.6f per token == fairseq's formula\n", (long long)b0->size,
           (long long)S0, (long long)T0, (long long)ntgt, l0 / n, nl0 / n);

    /* the symbolic plan == a plan built for exactly this batch, bitwise;
     * also for a batch of 5 */
    int64_t sizes[2] = {b0->size, 5};
    for (int k = 0; k < 2; k++) {
        struct hg_batch bk = *b0;
        bk.size = sizes[k];
        for (int f = 0; f < t->nfields; f++)
            bk.field[f].shape.dim[0] = sizes[k];
        struct hg_task_fill f;
        REQUIRE(t->fill(state, &bk, ev.g, ev.ex, &ev.m, &f, err, sizeof(err)) == 0,
                "%s", err);
        double ns;
        float ls1 = (float)run_batch(&ev, &bk, 1, 0.f, &ns, NULL), ln1 = tr_nll_of(&ev);
        struct run exact;
        int64_t ml = f.sym_value[1] > f.sym_value[2] ? f.sym_value[1] : f.sym_value[2];
        run_open(&exact, t, state, f.sym_value[0], ml, 0);
        copy_params(&exact, &tr);
        float le = (float)run_batch(&exact, &bk, 1, 0.f, &ns, NULL), lne = tr_nll_of(&exact);
        EXPECT(memcmp(&ls1, &le, sizeof(float)) == 0 && memcmp(&ln1, &lne, sizeof(float)) == 0,
               "B %lld S %lld T %lld: symbolic plan loss %.9g nll %.9g, exact %.9g %.9g",
               (long long)f.sym_value[0], (long long)f.sym_value[1],
               (long long)f.sym_value[2], ls1, ln1, le, lne);
        run_close(&exact);
        printf("ok  translation: B %lld S %lld T %lld: loss %.9g in both plans\n",
               (long long)f.sym_value[0], (long long)f.sym_value[1],
               (long long)f.sym_value[2], ls1);
    }

    /* a dummy batch */
    struct hg_batch dummy = {.size = 0};
    double ld = run_batch(&ev, &dummy, 1, 0.f, &n, NULL);
    EXPECT(n == 0 && ld == 0, "dummy: size %g loss %g", n, ld);

    /* Adam on the train plan (dropout 0.1) lowers the held-in loss */
    double before = 0, after = 0, size = 0;
    for (int i = 0; i < 4; i++) {
        before += run_batch(&ev, &bb[i].b, 1, 0.f, &n, NULL);
        size += n;
    }
    before /= size;
    for (int u = 0; u < TR_UPDATES; u++)
        run_batch(&tr, &bb[u % TR_NB].b, (uint64_t)u + 1, 3e-3f, &n, NULL);
    copy_params(&ev, &tr);
    size = 0;
    for (int i = 0; i < 4; i++) {
        after += run_batch(&ev, &bb[i].b, 1, 0.f, &n, NULL);
        size += n;
    }
    after /= size;
    EXPECT(isfinite(after) && after < before - 0.5, "loss per token %.4f -> %.4f", before,
           after);

    /* bad ids are named with field, sample, position and value */
    struct own_batch bad;
    own_copy(&bad, b0, t->nfields);
    struct hg_task_fill f;
    int64_t Lt = b0->field[1].shape.dim[1], Ls = b0->field[0].shape.dim[1];
    ((int32_t *)bad.buf[1])[3 * Lt + 1] = 100000;
    EXPECT(t->fill(state, &bad.b, ev.g, ev.ex, &ev.m, &f, err, sizeof(err)) == -1 &&
           strstr(err, "sample 3: tgt id 100000 at position 1 not in [0,614) (dict.es.txt)"
                       "; sample 3 is row ") && strstr(err, ".h5"),
           "tgt 100000: %s", err);
    ((int32_t *)bad.buf[1])[3 * Lt + 1] = 4;
    ((int32_t *)bad.buf[0])[2 * Ls] = -7;
    EXPECT(t->fill(state, &bad.b, ev.g, ev.ex, &ev.m, &f, err, sizeof(err)) == -1 &&
           strstr(err, "sample 2: src id -7 at position 0 not in [0,560) (dict.en.txt)"),
           "src -7: %s", err);
    own_free(&bad, 1);
    /* a plan too short for the batch refuses it before writing */
    struct run shortp;
    run_open(&shortp, t, state, TR_B, 3, 0);
    EXPECT(t->fill(state, b0, shortp.g, shortp.ex, &shortp.m, &f, err, sizeof(err)) == -1 &&
           strstr(err, "the plan holds 16, 3, 3"), "short plan: %s", err);
    run_close(&shortp);
    run_close(&ev);
    run_close(&tr);
    t->teardown(state);

    /* tied output projection: one parameter fewer, V*d scalars fewer */
    vals[o_sd] = "1";
    REQUIRE(t->setup(&state, dir, &a, err, sizeof(err)) == 0, "setup tied: %s", err);
    struct run tied;
    run_open(&tied, t, state, TR_B, L, 1);
    EXPECT(hg_graph_find(tied.g, "decoder.output_projection.weight") < 0 &&
           hg_graph_param_count(tied.g) == nparam - 614 * 64,
           "tied: %lld parameters, untied %lld", (long long)hg_graph_param_count(tied.g),
           (long long)nparam);
    run_close(&tied);
    t->teardown(state);
    vals[o_sd] = NULL;

    /* pre-norm on both sides: final layer norms, the loss still matches */
    vals[o_enb] = vals[o_dnb] = "1";
    vals[o_el] = "1";
    REQUIRE(t->setup(&state, dir, &a, err, sizeof(err)) == 0, "setup pre-norm: %s", err);
    struct run pn;
    run_open(&pn, t, state, TR_B, L, 0);
    EXPECT(hg_graph_find(pn.g, "encoder.layer_norm.weight") >= 0 &&
           hg_graph_find(pn.g, "decoder.layer_norm.bias") >= 0 &&
           hg_graph_find(pn.g, "encoder.layers.1.fc1.weight") < 0 &&
           hg_graph_find(pn.g, "decoder.layers.1.fc1.weight") >= 0, "pre-norm names");
    double lp = run_batch(&pn, b0, 1, 0.f, &n, NULL);
    tr_reference(&pn, 0.1, &rl, &rn);
    EXPECT(isfinite(lp) && fabs(lp - rl) < 1e-5 * rl, "pre-norm loss %g vs %g", lp, rl);
    run_close(&pn);
    t->teardown(state);
    vals[o_enb] = vals[o_dnb] = vals[o_el] = NULL;

    /* shared embeddings over a joined dictionary: one table for all three */
    char jdir[600];
    snprintf(jdir, sizeof(jdir), "%s/mtj", tmpdir);
    snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && cp '%s/dict.es.txt' '%s/dict.en.txt' && "
             "cp '%s/dict.es.txt' '%s/dict.es.txt'", jdir, dir, jdir, dir, jdir);
    REQUIRE(system(cmd) == 0, "%s", cmd);
    vals[o_sa] = "1";
    vals[o_ls] = "0";
    REQUIRE(t->setup(&state, jdir, &a, err, sizeof(err)) == 0, "setup shared: %s", err);
    struct run sh;
    run_open(&sh, t, state, TR_B, L, 1);
    int we = hg_graph_find(sh.g, "encoder.embed_tokens.weight");
    EXPECT(we >= 0 && hg_graph_find(sh.g, "decoder.embed_tokens.weight") < 0 &&
           hg_graph_find(sh.g, "decoder.output_projection.weight") < 0 &&
           hg_graph_param_count(sh.g) == nparam - 560 * 64 - 2 * 614 * 64 + 614 * 64,
           "shared: %lld parameters", (long long)hg_graph_param_count(sh.g));
    EXPECT(sh.m.nll < 0, "label smoothing 0: the loss is the nll");
    /* its gradient has rows from the source and the target side */
    double ls0 = run_batch(&sh, b0, 1, 0.f, &n, NULL);
    tr_reference(&sh, 0.0, &rl, &rn);
    EXPECT(fabs(ls0 - rn) < 1e-5 * rn, "eps 0: loss %g, nll %g", ls0, rn);
    run_close(&sh);
    t->teardown(state);
    vals[o_sa] = vals[o_ls] = NULL;

    /* through the controller: one batch of 16 == two micro-batches of 8,
     * loss and nll summed; with dropout 0, and with 0.1 (masks keyed by
     * sample and position) */
    double md2 = 0, mdd = 0;
    for (int drop = 0; drop < 2; drop++) {
        vals[o_do] = drop ? "0.1" : "0";
        REQUIRE(t->setup(&state, dir, &a, err, sizeof(err)) == 0, "setup: %s", err);
        struct hg_ctl_stats st[2];
        double md = one_vs_micro(t, state, ds, L, st);
        EXPECT(md < 1e-5, "batch 16 vs 2 x 8, dropout %s: params differ by %g", vals[o_do], md);
        EXPECT(st[0].sample_size == st[1].sample_size &&
               fabs(st[0].loss_sum - st[1].loss_sum) < 1e-5 * fabs(st[0].loss_sum) &&
               fabs(st[0].nll_sum - st[1].nll_sum) < 1e-5 * fabs(st[0].nll_sum) &&
               st[0].nll_sum > st[0].loss_sum * 0.9 && st[0].nll_sum != st[0].loss_sum,
               "dropout %s: loss %g nll %g / %g vs %g %g / %g", vals[o_do], st[0].loss_sum,
               st[0].nll_sum, st[0].sample_size, st[1].loss_sum, st[1].nll_sum,
               st[1].sample_size);
        *(drop ? &mdd : &md2) = md;
        if (!drop)
            t->teardown(state);
    }
    hg_dataset_close(ds);
    t->teardown(state);
    own_free(bb, TR_NB);
    printf("ok  translation: loss/token %.4f -> %.4f after %d Adam updates; tied and "
           "shared embeddings; pre-norm; bad ids named; 16 == 2 x 8 (max diff %.2g; with "
           "dropout 0.1 %.2g)\n", before, after, TR_UPDATES, md2, mdd);
}

/* ------------------------------------------------------------ main */

static void rm_tree(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "warning: could not remove %s\n", dir);
}

int main(void)
{
    builddir = getenv("HG_BUILDDIR");
    if (!builddir) {
        fprintf(stderr, "HG_BUILDDIR not set (run through make check)\n");
        return 77;
    }
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof(tmpdir), "%s/hg_tasks.XXXXXX", base ? base : "/tmp");
    REQUIRE(mkdtemp(tmpdir), "mkdtemp %s", tmpdir);

    /* HG_TASKS_ONLY=translation (or bert, ...): one task's test only */
    const char *only = getenv("HG_TASKS_ONLY");
    if (!only) {
        test_registry();
        test_plugin_errors();
        test_xor(load_xor());
        test_update_freq(load_xor());
        test_hgtrain_plugin();
        test_mnist();
    }
    if (!only || strcmp(only, "bert") == 0)
        test_bert();
    if (!only || strcmp(only, "translation") == 0)
        test_translation();

    rm_tree(tmpdir);
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    return 0;
}
