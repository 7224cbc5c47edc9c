/* run-strategy.c - hgtrain --strategy in the launcher, before the fork.
 * A strategy file names the cluster file, the devices and the global
 * batch it was planned for, and records the optimizer and the task's
 * options that made its graph (graph.optimizer, graph.options).  What the
 * command line leaves out is taken from the file (--cluster-file,
 * --max-sentences); what it gives is checked against the file, and every
 * difference is reported at once, naming the option and both values.
 * Then the file is loaded and lowered against the task's graph as every
 * rank will load it (trainer/strategy.c), so that what only the graph can
 * tell (a file written before the options were recorded) is refused here
 * too: once, before any worker exists. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hg_base.h"
#include "planner/hg_planner.h"
#include "trainer/run-impl.h"
#include "trainer/strategy.h"

/* The differences found, one a line. */
struct diffs {
    char text[8192];
    size_t len;
    int n;
};

static void diff(struct diffs *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void diff(struct diffs *d, const char *fmt, ...)
{
    if (d->len + 4 >= sizeof d->text)
        return;
    d->len += (size_t)snprintf(d->text + d->len, sizeof d->text - d->len, "\n  ");
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(d->text + d->len, sizeof d->text - d->len, fmt, ap);
    va_end(ap);
    if (k > 0)
        d->len += (size_t)k;
    if (d->len >= sizeof d->text)
        d->len = sizeof d->text - 1;
    d->n++;
}

/* Two option values alike: the same text, or the same number ("0" and
 * "0.0"); NULL (unset) only like NULL. */
static int same_value(const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    if (strcmp(a, b) == 0)
        return 1;
    char *ea, *eb;
    double x = strtod(a, &ea), y = strtod(b, &eb);
    return ea != a && eb != b && !*ea && !*eb && x == y;
}

/* The device names of a list, the first four, into b. */
static const char *dev_list(char *const *dev, int n, char *b, size_t len)
{
    size_t k = 0;
    b[0] = 0;
    for (int i = 0; i < n && i < 4 && k < len; i++)
        k += (size_t)snprintf(b + k, len - k, "%s%s", i ? ", " : "", dev[i]);
    if (n > 4 && k < len)
        snprintf(b + k, len - k, ", ...");
    return b;
}

/* The task's options against the ones the strategy was planned with. */
static void check_task_options(struct diffs *d, const struct hg_opts *o,
                               const struct hg_strategy_head *h, const char *task)
{
    for (int i = 0; i < o->ntask_; i++) {
        const char *name = o->task_names_[i], *v = o->task_vals_[i], *pv = NULL;
        for (int j = 0; j < h->nopts; j++)
            if (strcmp(h->opt_name[j], name) == 0)
                pv = h->opt_val[j];
        if (same_value(v, pv))
            continue;
        const char *def = o->task_opts_[i].def;
        const char *dnote = v && def && strcmp(v, def) == 0 ? " (the task's default)" : "";
        if (v && pv)
            diff(d, "--%s %s%s: the strategy was planned with --%s %s", name, v, dnote, name,
                 pv);
        else if (v)
            diff(d, "--%s %s%s: the strategy was planned without --%s", name, v, dnote, name);
        else
            diff(d, "--%s not given (the task's default): the strategy was planned with "
                 "--%s %s", name, name, pv);
    }
    for (int j = 0; j < h->nopts; j++) {
        int known = 0;
        for (int i = 0; i < o->ntask_; i++)
            known |= strcmp(h->opt_name[j], o->task_names_[i]) == 0;
        if (!known)
            diff(d, "the strategy was planned with --%s %s, an option task %s does not have",
                 h->opt_name[j], h->opt_val[j], task);
    }
}

/* The strategy's cluster file (cluster.file) as given, else beside the
 * strategy file; 0 with out, or -1. */
static int find_cluster_file(const char *strategy, const char *file, char *out, size_t len)
{
    const char *slash = strrchr(strategy, '/');
    if (access(file, R_OK) == 0 || file[0] == '/' || !slash)
        return snprintf(out, len, "%s", file) < (int)len && access(out, R_OK) == 0 ? 0 : -1;
    int k = snprintf(out, len, "%.*s/%s", (int)(slash - strategy), strategy, file);
    return k > 0 && k < (int)len && access(out, R_OK) == 0 ? 0 : -1;
}

/* The cluster file (given or the strategy's), its devices against the
 * strategy's; *c: the cluster loaded, or NULL.  -1: a file that cannot
 * be read (err). */
static int check_cluster(struct diffs *d, struct hg_opts *o, const struct hg_strategy_head *h,
                         struct hg_cluster **c, char *err, size_t errlen)
{
    char path[4096], a[512], b[512];
    int given = o->cluster_file != NULL;
    *c = NULL;
    if (!given) {
        if (!h->cluster_file) {
            diff(d, "the strategy names no cluster file (cluster.file): give --cluster-file");
            return 0;
        }
        if (find_cluster_file(o->strategy, h->cluster_file, path, sizeof path) != 0) {
            diff(d, "the strategy's cluster file %s (cluster.file) is found neither here nor "
                 "beside the strategy: give --cluster-file", h->cluster_file);
            return 0;
        }
        if (!(o->cluster_file = strdup(path)))
            return hg_kerr(err, errlen, "out of memory");
    }
    if (hg_cluster_load(c, o->cluster_file, err, errlen) != 0)
        return -1;
    if (h->ndev < 0)
        return 0;
    int same = (*c)->ndev == h->ndev;
    for (int i = 0; same && i < h->ndev; i++)
        same = strcmp((*c)->devices[i].name, h->dev[i]) == 0;
    if (same)
        return 0;
    char *names[4];
    for (int i = 0; i < 4 && i < (*c)->ndev; i++)
        names[i] = (*c)->devices[i].name;
    diff(d, "%s%s: cluster %s has %d device%s (%s), the strategy was planned for %s%s%s%d (%s)",
         given ? "--cluster-file " : "the strategy's cluster file ", o->cluster_file,
         (*c)->name, (*c)->ndev, (*c)->ndev == 1 ? "" : "s",
         dev_list(names, (*c)->ndev, a, sizeof a), h->cluster_name ? "cluster " : "",
         h->cluster_name ? h->cluster_name : "", h->cluster_name ? "'s " : "", h->ndev,
         dev_list(h->dev, h->ndev, b, sizeof b));
    return 0;
}

/* The whole file against the task's graph, as every rank loads it. */
static int check_graph(struct hg__run *r, int world, char *err, size_t errlen)
{
    const struct hg_opts *o = &r->o;
    if (!o->data)
        return hg_kerr(err, errlen, "--data is required");
    void *ts = NULL;
    struct hg_task_args ta = {.values = (const char *const *)o->task_vals_, .arch = o->arch};
    if (r->task->setup && r->task->setup(&ts, o->data, &ta, err, errlen) != 0)
        return -1;
    int32_t max_len = 0;
    enum hg_optim optim = HG_OPTIM_SGD;
    union hg_attr hyper; /* the hyper-parameters make no node */
    memset(&hyper, 0, sizeof hyper);
    struct hg_ctl_strategy cs;
    memset(&cs, 0, sizeof cs);
    int rc = hg_task_longest(r->task, ts, o->data, "train", &max_len, err, errlen);
    if (rc == 0 && hg_optim_kind(o->optimizer, &optim) != 0)
        rc = hg_kerr(err, errlen, "--optimizer %s: unknown", o->optimizer);
    if (rc == 0)
        rc = hg_strat_plan(&cs, o->strategy, NULL, o->cluster_file, r->task, ts,
                           o->max_sentences, max_len, optim, &hyper, world, err, errlen);
    if (rc == 0)
        hg_ctl_strategy_free(&cs);
    if (r->task->teardown && ts)
        r->task->teardown(ts);
    return rc;
}

int hg__run_strategy_before_fork(struct hg__run *r, const struct hg_launch *L, char *err,
                                 size_t errlen)
{
    struct hg_opts *o = &r->o;
    if (!o->strategy)
        return 0;
    struct hg_strategy_head h;
    char e[4096];
    if (hg_strategy_head_read(&h, o->strategy, NULL, e, sizeof e) != 0)
        return hg_kerr(err, errlen, "--strategy %s", e);
    struct diffs d = {.len = 0};
    const char *task = r->task->name;
    int rc = 0;
    if (h.model && strcmp(h.model, task) != 0) {
        /* another graph altogether: nothing else compares */
        int is_task = hg_task_find(h.model) != NULL;
        rc = hg_kerr(err, errlen, "--strategy %s: --task %s: the strategy was planned %s%s%s; "
                     "plan one with hgplan --task %s", o->strategy, task,
                     is_task ? "with --task " : "for the model ", h.model,
                     is_task ? "" : " (hgplan --model), not for a task", task);
        hg_strategy_head_free(&h);
        return rc;
    }
    if (h.optimizer && strcmp(h.optimizer, o->optimizer) != 0)
        diff(&d, "--optimizer %s%s: the strategy was planned with --optimizer %s",
             o->optimizer, hg_opts_given(o, "optimizer") ? "" : " (the default)",
             h.optimizer);
    if (h.nopts >= 0)
        check_task_options(&d, o, &h, task);
    if (o->max_sentences > 0 && h.batch > 0 && o->max_sentences != h.batch)
        diff(&d, "--max-sentences %lld: the strategy was planned for a global batch of %lld "
             "(hgplan --batch %lld)", (long long)o->max_sentences, (long long)h.batch,
             (long long)h.batch);
    else if (o->max_sentences <= 0 && h.batch > 0)
        o->max_sentences = h.batch;
    else if (o->max_sentences <= 0)
        diff(&d, "the strategy names no global batch (graph.batch): give --max-sentences");
    struct hg_cluster *c = NULL;
    if (check_cluster(&d, o, &h, &c, e, sizeof e) != 0) {
        hg_strategy_head_free(&h);
        return hg_kerr(err, errlen, "--strategy %s: %s", o->strategy, e);
    }
    int ndev = h.ndev >= 0 ? h.ndev : c ? c->ndev : -1;
    if (L->world > 0 && ndev > 0 && L->world != ndev) {
        if (o->devices)
            diff(&d, "--devices %s: %d rank%s, the strategy was planned for %d devices "
                 "(device d runs as rank d)", o->devices, L->world, L->world == 1 ? "" : "s",
                 ndev);
        else /* the launch's words where not the devices': slurm, mpirun ... */
            diff(&d, "the job has %d rank%s%s%s%s, the strategy was planned for %d devices "
                 "(device d runs as rank d): give --devices cpu:%d, or as many GPUs",
                 L->world, L->world == 1 ? "" : "s", strcmp(L->how, "devices") ? " (" : "",
                 strcmp(L->how, "devices") ? L->how : "", strcmp(L->how, "devices") ? ")" : "",
                 ndev, ndev);
    }
    hg_cluster_free(c);
    hg_strategy_head_free(&h);
    if (d.n == 1)
        return hg_kerr(err, errlen, "--strategy %s: %s", o->strategy, d.text + 3);
    if (d.n > 1)
        return hg_kerr(err, errlen, "--strategy %s: %d differences from this run:%s",
                       o->strategy, d.n, d.text);
    return check_graph(r, L->world > 0 ? L->world : ndev, err, errlen);
}
