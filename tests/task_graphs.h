/* task_graphs.h - what the planner's unit tests (test_lower, test_tensor)
 * share: the example clusters (srcdir: HG_SRCDIR, set by main), a cluster
 * parsed from text, a resolved planner graph, and the mnist, bert and
 * translation training graphs as hgplan --task builds them (options at
 * their defaults, translation's transformer_tiny de-en, AdamW) with the
 * dictionaries their setup reads.  Needs planner/hg_planner.h,
 * tasks/hg_task.h and tests/hg_test.h included before it. */
#ifndef HG_TEST_TASK_GRAPHS_H
#define HG_TEST_TASK_GRAPHS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char srcdir[4096] = ".";

static struct hg_cluster *example(const char *name)
{
    char path[4200], err[512] = "";
    snprintf(path, sizeof(path), "%s/examples/clusters/%s", srcdir, name);
    struct hg_cluster *c = NULL;
    REQUIRE(hg_cluster_load(&c, path, err, sizeof(err)) == 0, "%s", err);
    return c;
}

static struct hg_cluster *parse(const char *text)
{
    char err[512] = "";
    struct hg_cluster *c = NULL;
    REQUIRE(hg_cluster_parse(&c, text, "test.cfg", err, sizeof(err)) == 0, "%s", err);
    return c;
}

static struct hg_pgraph *pgraph(struct hg_graph *g, const struct hg_cluster *c, int64_t b)
{
    char err[512] = "";
    REQUIRE(hg_graph_resolve(g, NULL, err, sizeof(err)) == 0, "%s", err);
    struct hg_pgraph *pg = NULL;
    REQUIRE(hg_pgraph_build(&pg, g, c, "test", b, err, sizeof(err)) == 0, "%s", err);
    return pg;
}

/* A dictionary file of n words w0 .. w(n-1), counts descending. */
static void write_dict(const char *dir, const char *name, int n)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    REQUIRE(f != NULL, "%s", path);
    for (int i = 0; i < n; i++)
        fprintf(f, "w%d %d\n", i, 1000 - i);
    fclose(f);
}

/* The dictionaries the tasks' setup reads (bert's, translation's de and
 * en), in dir (a mkdtemp template, filled in); task_dicts_remove undoes
 * it. */
static void task_dicts(char *dir)
{
    REQUIRE(mkdtemp(dir) != NULL, "mkdtemp");
    write_dict(dir, "dict.txt", 60);
    write_dict(dir, "dict.de.txt", 50);
    write_dict(dir, "dict.en.txt", 40);
}

static void task_dicts_remove(const char *dir)
{
    char path[4200];
    for (const char *f = "dict.txt\0dict.de.txt\0dict.en.txt\0"; *f; f += strlen(f) + 1) {
        snprintf(path, sizeof(path), "%s/%s", dir, f);
        unlink(path);
    }
    rmdir(dir);
}

/* The optimizer the planner's tests train with: AdamW's defaults. */
static void adamw_update(struct hg_graph *g)
{
    union hg_attr h = {0};
    h.adam.beta1 = 0.9f;
    h.adam.beta2 = 0.999f;
    h.adam.eps = 1e-8f;
    hg_graph_optimizer(g, HG_OPTIM_ADAMW, &h);
}

/* The task's training graph as hgplan --task builds it. */
static struct hg_graph *task_graph(const char *name, const char *data, int64_t batch,
                                   int64_t seq)
{
    const struct hg_task *t = hg_task_find(name);
    REQUIRE(t != NULL, "no task %s", name);
    const char *vals[64] = {NULL};
    int n = 0;
    for (; t->options && t->options[n].name; n++) {
        REQUIRE(n < 64, "options");
        vals[n] = t->options[n].def;
        if (strcmp(t->options[n].name, "source-lang") == 0)
            vals[n] = "de";
        if (strcmp(t->options[n].name, "target-lang") == 0)
            vals[n] = "en";
    }
    struct hg_task_args a = {.values = vals,
                             .arch = strcmp(name, "translation") == 0 ? "transformer_tiny" : NULL};
    void *state = NULL;
    char err[512] = "";
    REQUIRE(!t->setup || t->setup(&state, data, &a, err, sizeof(err)) == 0, "%s: %s", name,
            err);
    struct hg_graph *g = hg_graph_new();
    struct hg_task_model m;
    memset(&m, 0, sizeof(m));
    REQUIRE(t->build(state, g, batch, seq, 1, &m, err, sizeof(err)) == 0, "%s: %s", name, err);
    if (t->teardown && state)
        t->teardown(state);
    hg_graph_backward(g, m.loss);
    adamw_update(g);
    return g;
}

#endif
