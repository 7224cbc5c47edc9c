/* hgtrain.c - the training program: options, task, data, the epoch loop
 * (training steps, validation, checkpoints, logging).  One process per
 * rank: trainer/launch.c forks this node's workers (--devices cpu:N) or
 * finds the job's other ranks (Slurm, mpirun, --distributed-*); every
 * rank trains on its share of each step and the controller sums the rest.
 * Rank 0 alone logs and writes checkpoints.
 *
 * With no arguments it runs the built-in default job: the mnist task on
 * data-bin/fashion-mnist (shards written by `hgpreprocess images
 * --fashion-mnist /usr/share/datasets/fashion-mnist --out
 * data-bin/fashion-mnist`), 2 epochs. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "controller/hg_controller.h"
#include "trainer/generate.h"
#include "base/hg_base.h"
#include "trainer/launch.h"
#include "trainer/options.h"
#include "trainer/strategy.h"
#include "planner/hg_planner.h"

#define ERRLEN 1024

static const char *const default_job[] = {
    "hgtrain", "--task", "mnist", "--data", "data-bin/fashion-mnist",
    "--valid-subset", "test", "--batch-size", "64", "--optimizer", "sgd",
    "--momentum", "0.9", "--lr", "0.01", "--max-epoch", "2",
    "--save-dir", "checkpoints/mnist", "--log-interval", "200", NULL};

static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t n_sigint;   /* SIGINTs seen (Ctrl-C) */
static volatile sig_atomic_t says_stops; /* this process reports them (rank 0) */

/* The first SIGINT or SIGTERM stops after the update in flight, which
 * writes checkpoint_last.h5 (no final validation); a second SIGINT quits
 * at once (checkpoints are written to a temporary name and renamed, so
 * the last one written stays whole).  Only SIGINT counts twice: a
 * launcher forwards SIGTERM on the first. */
static void on_signal(int sig)
{
    static const char first[] =
        "\nhgtrain: stopping after the update in flight, then writing checkpoint_last.h5 "
        "(no final validation); Ctrl-C again to quit at once\n";
    static const char again[] =
        "\nhgtrain: quitting at once; checkpoint_last.h5 is the last one written\n";
    if (sig == SIGINT && n_sigint++ > 0) {
        if (says_stops)
            (void)!write(2, again, sizeof again - 1);
        _exit(HG_LAUNCH_EXIT_QUIT);
    }
    if (!stop_signal && sig == SIGINT && says_stops)
        (void)!write(2, first, sizeof first - 1);
    if (!stop_signal)
        stop_signal = sig;
}

/* The shards of split under data: data/split/ (translation, lm) or
 * data/split-*.h5 (images). */
static int split_spec(const char *data, const char *split, char *out,
                      size_t len, char *err, size_t errlen)
{
    struct stat st;
    snprintf(out, len, "%s/%s", data, split);
    if (stat(out, &st) == 0 && S_ISDIR(st.st_mode))
        return 0;
    snprintf(out, len, "%s/%s-*.h5", data, split);
    glob_t gl;
    int found = glob(out, 0, NULL, &gl) == 0 && gl.gl_pathc > 0;
    globfree(&gl);
    if (found)
        return 0;
    if (stat(data, &st) != 0)
        return hg_kerr(err, errlen, "--data %s: %s (prepare data with hgpreprocess; "
                       "for the default job: hgpreprocess images --fashion-mnist "
                       "/usr/share/datasets/fashion-mnist --out %s)",
                       data, strerror(errno), data);
    return hg_kerr(err, errlen, "--data %s: no split '%s' (looked for %s/%s/ and %s/%s-*.h5)",
                   data, split, data, split, data, split);
}

/* One split: its shard set, per-sample costs and the epoch plan. */
struct split {
    struct hg_dataset *ds;
    int32_t *cost; /* [n] */
    int64_t n;
    int32_t max_len, min_len;
};

static int split_open(struct split *s, const struct hg_task *task, void *ts,
                      const char *data, const char *name, char *err, size_t errlen)
{
    char spec[4096];
    memset(s, 0, sizeof(*s));
    if (split_spec(data, name, spec, sizeof(spec), err, errlen) != 0 ||
        hg_dataset_open(&s->ds, spec, task->fields, task->nfields, 0, err, errlen) != 0)
        return -1;
    s->n = hg_dataset_size(s->ds);
    s->cost = malloc((size_t)(s->n ? s->n : 1) * sizeof(int32_t));
    if (!s->cost)
        return hg_kerr(err, errlen, "out of memory");
    if (task->cost)
        task->cost(ts, s->ds, s->cost);
    else
        memcpy(s->cost, hg_dataset_lengths(s->ds, 0), (size_t)s->n * sizeof(int32_t));
    s->max_len = 1;
    s->min_len = INT32_MAX;
    for (int64_t i = 0; i < s->n; i++) {
        if (s->cost[i] > s->max_len)
            s->max_len = s->cost[i];
        if (s->cost[i] < s->min_len)
            s->min_len = s->cost[i];
    }
    if (s->min_len < 1)
        s->min_len = 1;
    return 0;
}

static void split_close(struct split *s)
{
    hg_dataset_close(s->ds);
    free(s->cost);
}

struct run {
    struct hg_opts o;
    int rank, world;      /* this process in the job */
    int data_rank;        /* whose batches it reads: its rank; 0 for a
                             model-parallel strategy (the whole batch) */
    struct hg_comm *comm; /* NULL: one rank */
    int64_t plan_batch, plan_len; /* the plans' largest batch and length */
    int cuda_device;      /* this worker's GPU, -1: the CPU */
    int64_t *rank_tok, *rank_sent; /* [world] per-rank budgets, or NULL */
    int64_t *segs, nsegs;          /* [nsegs] this epoch's segments as words
                                      (hg_epoch_segs_decode); saved mid-epoch */
    FILE *trace;                   /* HG_TRACE_SAMPLES: this rank's consumed samples */
    uint64_t data_hash;            /* FNV-1a of train.cost: which data a checkpoint's
                                      epoch position indexes */
    int64_t rebalance;             /* --rebalance-interval in effect (0: off) */
    double *cap;                   /* [world] --rebalance-interval: the
                                      capacities in effect (r->bo.capacity) */
    double *rb_cost, *rb_time;     /* [world] per rank, batch cost and compute
                                      seconds since the last decision */
    int rb_guess;                  /* the capacities are a guess (the options'),
                                      not yet a measurement: the first
                                      decision goes all the way */
    double *rank_t;                /* [2 * world] per rank, compute and wait
                                      seconds summed over the updates since
                                      the last log line */
    struct hg_ctl_strategy strat;  /* --strategy: what it gives (trainer/strategy.c) */
    char *plan_text;               /* --plan: the strategy file planned before
                                      the fork (every rank the same text) */
    char *plan_table;              /* --plan: hgplan's table, logged by rank 0 */
    char plan_path[4200];          /* --plan: SAVE_DIR/strategy.cfg (its name) */
    int64_t max_tok, max_sent;     /* the largest rank's budgets (0: none) */
    const struct hg_task *task;
    void *ts;
    struct hg_ctl *ctl;
    struct split train, valid;
    struct hg_batch_opts bo;
    struct hg_lr_sched sched;
    char *opts_text;
    FILE *log;            /* --log-file, or NULL */
    int json;
    int tty;              /* --log-format tqdm on a terminal: a progress line */
    uint64_t num_updates;
    uint64_t first_update; /* num_updates when this process started training */
    double t_train0;       /* ... and when */
    int lock_fd;           /* --save-dir's lock (rank 0), -1: none */
    double patience_best;  /* --patience: the best metric so far (NaN: none) */
    int64_t patience_runs; /* validations since it improved */
    int64_t epoch;        /* current (1-based) */
    double best;          /* best validation metric, NaN: none; at least
                             as good as checkpoint_best.h5's on disk */
    int best_locked;      /* checkpoint_best.h5 was chosen by another metric
                             (or is unreadable): never replaced */
    uint64_t valid_at;    /* num_updates of the last validation (+1; 0: none) */
    double valid_metric;  /* and its metric */
    double t_start, train_wall;
};

/* s as a JSON string body (quotes and backslashes escaped, control
 * characters as \u00XX) into out[len]. */
static void json_escape(const char *s, size_t n, char *out, size_t len)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k + 7 < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            out[k++] = '\\';
            out[k++] = (char)c;
        } else if (c < 0x20) {
            k += (size_t)snprintf(out + k, len - k, "\\u%04x", c);
        } else {
            out[k++] = (char)c;
        }
    }
    out[k] = 0;
}

/* One log record, rank 0 only: text ("| ..." lines, for --log-format
 * simple and tqdm) and its JSON form (json; NULL: each line of text
 * becomes {"message": "..."}). stdout gets the form --log-format asks for;
 * --log-file always gets JSON Lines, so both parse line by line. */
static void logf_line(struct run *r, const char *text, const char *json)
{
    if (r->rank != 0)
        return;
    char buf[4096];
    const char *j = json;
    if (!j) {
        size_t k = 0;
        for (const char *p = text; *p && k + 32 < sizeof(buf);) {
            const char *e = strchr(p, '\n');
            size_t n = e ? (size_t)(e - p) : strlen(p);
            const char *body = p;
            if (n >= 2 && p[0] == '|' && p[1] == ' ') { /* the text's margin */
                body += 2;
                n -= 2;
            }
            char esc[2048];
            json_escape(body, n, esc, sizeof(esc));
            k += (size_t)snprintf(buf + k, sizeof(buf) - k, "{\"message\": \"%s\"}\n", esc);
            p = e ? e + 1 : p + strlen(p);
        }
        buf[k < sizeof(buf) ? k : sizeof(buf) - 1] = 0;
        j = buf;
    }
    if (strcmp(r->o.log_format, "none") != 0) {
        fputs(r->json ? j : text, stdout);
        fflush(stdout);
    }
    if (r->log) {
        fputs(j, r->log);
        fflush(r->log);
    }
}

static int ckpt_path(const struct run *r, const char *name, char *out, size_t len)
{
    return snprintf(out, len, "%s/%s", r->o.save_dir, name) >= (int)len ? -1 : 0;
}

static int save(struct run *r, const char *name, int64_t iter_step, char *err,
                size_t errlen)
{
    char path[4096];
    if (!r->o.save_sharded) {
        /* rank 0 writes for everyone: the parameters are equal, and the
         * optimizer state on other PS ranks comes to it first */
        if (hg_ctl_sync_state(r->ctl, err, errlen) != 0)
            return -1;
        if (r->rank != 0)
            return 0;
    }
    if (ckpt_path(r, name, path, sizeof(path)) != 0)
        return hg_kerr(err, errlen, "--save-dir too long");
    struct hg_ckpt_meta m = {
        .epoch = iter_step < 0 ? r->epoch : r->epoch - 1,
        .num_updates = (int64_t)r->num_updates,
        .iter = {.epoch = (uint64_t)(iter_step < 0 ? r->epoch + 1 : r->epoch),
                 .step = iter_step < 0 ? 0 : iter_step,
                 .segs = iter_step < 0 ? NULL : r->segs,
                 .nsegs = iter_step < 0 ? 0 : r->nsegs,
                 .data_n = r->train.n, .data_hash = r->data_hash},
        .seed = (uint64_t)r->o.seed,
        .best_metric = r->best,
        .metric_name = r->o.best_checkpoint_metric,
        .maximize = r->o.maximize_best_checkpoint_metric,
        .train_wall = r->train_wall,
        .wall = hg_now() - r->t_start,
        .options = r->opts_text,
        .strategy = r->plan_text,
    };
    if (!r->o.save_sharded)
        return hg_ckpt_save(path, hg_ctl_graph(r->ctl), hg_ctl_exec(r->ctl), &m, err,
                            errlen);
    /* every rank writes the parameters it owns, rank 0 the index */
    int np = hg_graph_n_params(hg_ctl_graph(r->ctl));
    int *owner = malloc((size_t)(np > 0 ? np : 1) * sizeof(int)); /* [np] */
    if (!owner)
        return hg_kerr(err, errlen, "out of memory");
    hg_ctl_param_owners(r->ctl, owner);
    int rc = hg_ckpt_save_sharded(path, hg_ctl_graph(r->ctl), hg_ctl_exec(r->ctl), &m,
                                  r->comm, owner, err, errlen);
    free(owner);
    return rc;
}

/* One job per --save-dir: an flock on SAVE_DIR/hgtrain.lock, taken by
 * rank 0 and held until the process exits (even by kill -9, so no stale
 * lock is left), the file naming its holder for the next job's message. */
static int lock_save_dir(struct run *r, char *err, size_t errlen)
{
    char path[4096];
    if (ckpt_path(r, "hgtrain.lock", path, sizeof(path)) != 0)
        return hg_kerr(err, errlen, "--save-dir too long");
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return hg_kerr(err, errlen, "--save-dir %s: %s: %s", r->o.save_dir, path,
                       strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        char who[256];
        ssize_t n = pread(fd, who, sizeof(who) - 1, 0);
        who[n > 0 ? n : 0] = 0;
        who[strcspn(who, "\n")] = 0;
        close(fd);
        if (e == EWOULDBLOCK)
            return hg_kerr(err, errlen, "--save-dir %s is in use by another hgtrain job "
                           "(%s, %s): let it finish, stop it, or give another --save-dir",
                           r->o.save_dir, who[0] ? who : "holder unknown", path);
        return hg_kerr(err, errlen, "--save-dir %s: cannot lock %s: %s", r->o.save_dir, path,
                       strerror(e));
    }
    char host[256], line[512];
    if (gethostname(host, sizeof(host)) != 0)
        snprintf(host, sizeof(host), "?");
    host[sizeof(host) - 1] = 0;
    time_t t = time(NULL);
    struct tm tm;
    char when[64] = "";
    if (localtime_r(&t, &tm))
        strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
    int n = snprintf(line, sizeof(line), "pid %ld on %s since %s\n", (long)getpid(), host,
                     when);
    if (ftruncate(fd, 0) != 0 || pwrite(fd, line, (size_t)n, 0) != n) {
        int e = errno;
        close(fd);
        return hg_kerr(err, errlen, "--save-dir %s: %s: %s", r->o.save_dir, path, strerror(e));
    }
    r->lock_fd = fd;
    return 0;
}

/* The first two numbers in the file name of path (0 when absent). */
static void name_numbers(const char *path, long long v[2])
{
    const char *p = strrchr(path, '/');
    p = p ? p + 1 : path;
    v[0] = v[1] = 0;
    for (int k = 0; k < 2 && *p; k++) {
        while (*p && (*p < '0' || *p > '9'))
            p++;
        char *end;
        v[k] = strtoll(p, &end, 10);
        p = end;
    }
}

/* Keeps the newest `keep` files matching pattern (by name order of their
 * numbers: fairseq's --keep-last-epochs / --keep-interval-updates). */
static void prune(const struct run *r, const char *pattern, int64_t keep)
{
    if (keep < 0 || r->rank != 0)
        return;
    char pat[4096];
    if (ckpt_path(r, pattern, pat, sizeof(pat)) != 0)
        return;
    glob_t gl;
    if (glob(pat, 0, NULL, &gl) != 0)
        return;
    /* oldest first: sort by the (epoch, update) numbers in the names */
    for (size_t i = 1; i < gl.gl_pathc; i++)
        for (size_t j = i; j > 0; j--) {
            long long a[2], b[2];
            name_numbers(gl.gl_pathv[j - 1], a);
            name_numbers(gl.gl_pathv[j], b);
            if (a[0] < b[0] || (a[0] == b[0] && a[1] <= b[1]))
                break;
            char *t = gl.gl_pathv[j - 1];
            gl.gl_pathv[j - 1] = gl.gl_pathv[j];
            gl.gl_pathv[j] = t;
        }
    for (size_t i = 0; i + (size_t)keep < gl.gl_pathc; i++)
        hg_ckpt_remove(gl.gl_pathv[i]); /* and its shards */
    globfree(&gl);
}

/* Validation over the whole valid split; returns 0 and the metric that
 * --best-checkpoint-metric names. */
static int validate(struct run *r, double *metric, char *err, size_t errlen)
{
    struct hg_batch_opts vo = r->bo;
    vo.capacity = NULL; /* validation: equal shares of the split */
    vo.rank_max_tokens = vo.rank_max_sentences = NULL;
    vo.max_tokens = r->bo.max_tokens ? r->max_tok : 0;
    vo.max_sentences = r->bo.max_sentences ? r->max_sent : 0;
    vo.shuffle = 0;
    vo.required_multiple = 1;
    struct hg_epoch *ep;
    if (hg_epoch_plan(&ep, r->valid.cost, r->valid.n, &vo, 1, err, errlen) != 0)
        return -1;
    struct hg_loader *ld;
    struct hg_loader_opts lo = {.rank = r->data_rank, .prefetch = 2, .pad_id = 1,
                                .timeout_s = r->o.distributed_timeout};
    if (hg_loader_open(&ld, r->valid.ds, ep, &lo, 0, err, errlen) != 0) {
        hg_epoch_free(ep);
        return -1;
    }
    struct hg_ctl_stats st;
    memset(&st, 0, sizeof(st));
    struct hg_batch b;
    int rc;
    while ((rc = hg_loader_next(ld, &b, err, errlen)) == 1)
        if (hg_ctl_valid(r->ctl, &b, &st, err, errlen) != 0) {
            rc = -1;
            break;
        }
    hg_loader_close(ld);
    hg_epoch_free(ep);
    if (rc < 0 || hg_ctl_allreduce_stats(r->ctl, &st, err, errlen) != 0)
        return -1;
    double ss = st.sample_size > 0 ? st.sample_size : 1;
    double loss = st.loss_sum / ss / log(2.0);
    double nll = st.nll_sum / ss / log(2.0); /* fairseq: ppl = 2^nll_loss */
    *metric = loss;
    char line[1024], js[1024];
    int k = snprintf(line, sizeof(line), "| epoch %03lld | valid on '%s' subset | loss %.4f | "
                     "nll_loss %.4f | ppl %.2f", (long long)r->epoch, r->o.valid_subset, loss,
                     nll, pow(2.0, nll));
    char sub[512];
    json_escape(r->o.valid_subset, strlen(r->o.valid_subset), sub, sizeof(sub));
    int kj = snprintf(js, sizeof(js), "{\"epoch\": %lld, \"valid_subset\": \"%s\", "
                      "\"valid_loss\": %.4f, \"valid_nll_loss\": %.4f, \"valid_ppl\": %.2f",
                      (long long)r->epoch, sub, loss, nll, pow(2.0, nll));
    for (int i = 0; i < HG_TASK_MAX_METRICS && r->task->metric_names[i]; i++) {
        double v = st.metrics[i] / ss;
        if (strcmp(r->task->metric_names[i], r->o.best_checkpoint_metric) == 0)
            *metric = v;
        k += snprintf(line + k, sizeof(line) - (size_t)k, " | %s %.4f",
                      r->task->metric_names[i], v);
        kj += snprintf(js + kj, sizeof(js) - (size_t)kj, ", \"valid_%s\": %.4f",
                       r->task->metric_names[i], v);
    }
    snprintf(line + k, sizeof(line) - (size_t)k, " | num_updates %llu\n",
             (unsigned long long)r->num_updates);
    snprintf(js + kj, sizeof(js) - (size_t)kj, ", \"num_updates\": %llu}\n",
             (unsigned long long)r->num_updates);
    logf_line(r, line, js);
    return 0;
}

struct meters {
    double loss, nll, ss, bsz, gnorm, clip, n, t0;
    double loss_scale;   /* --fp16: the last update's */
};

/* fairseq's meters, in base 2: loss and nll_loss per unit of sample size
 * (nll_loss equals loss for a task whose model has no separate nll, such
 * as mnist and bert; translation's loss is label-smoothed), ppl =
 * 2^nll_loss. */
static void log_train(struct run *r, struct meters *m, int64_t step, int64_t steps,
                      double lr)
{
    if (m->n == 0 || r->rank != 0)
        return;
    if (r->tty)
        fputs("\r\033[K", stderr); /* clear the progress line */
    double dt = hg_now() - m->t0;
    double loss = m->loss / (m->ss > 0 ? m->ss : 1) / log(2.0);
    double nll = m->nll / (m->ss > 0 ? m->ss : 1) / log(2.0);
    char line[1024];
    /* per rank: 2 numbers of at most 20 characters */
    size_t jn = 1024 + 48 * (size_t)r->world;
    char *js = malloc(jn); /* [jn] */
    if (!js)
        return;
    /* "update" and "num_updates" (fairseq's key) are the same number */
    snprintf(js, jn,
             "{\"epoch\": %lld, \"update\": %llu, \"num_updates\": %llu, \"step\": %lld, "
             "\"steps\": %lld, \"loss\": %.4f, \"nll_loss\": %.4f, \"ppl\": %.2f, \"wps\": %.0f, "
             "\"ups\": %.2f, \"wpb\": %.1f, \"bsz\": %.1f, \"lr\": %.6g, \"gnorm\": %.3f, "
             "\"clip\": %.1f, \"train_wall\": %.1f, \"wall\": %.1f}\n",
             (long long)r->epoch, (unsigned long long)r->num_updates,
             (unsigned long long)r->num_updates, (long long)step, (long long)steps, loss, nll,
             pow(2.0, nll), m->ss / dt, m->n / dt, m->ss / m->n, m->bsz / m->n, lr,
             m->gnorm / m->n, 100.0 * m->clip / m->n, r->train_wall, hg_now() - r->t_start);
    snprintf(line, sizeof(line),
             "| epoch %03lld | update %llu | %lld / %lld | loss %.4f | nll_loss %.4f | ppl %.2f | "
             "wps %.0f | ups %.2f | wpb %.1f | bsz %.1f | lr %.6g | gnorm %.3f | "
             "clip %.0f%% | train_wall %.0f | wall %.0f\n",
             (long long)r->epoch, (unsigned long long)r->num_updates, (long long)step,
             (long long)steps, loss, nll, pow(2.0, nll), m->ss / dt, m->n / dt, m->ss / m->n,
             m->bsz / m->n, lr, m->gnorm / m->n, 100.0 * m->clip / m->n, r->train_wall,
             hg_now() - r->t_start);
    size_t len = strlen(line), lj = strlen(js);
    if (r->o.fp16 && len >= 2 && lj >= 2) { /* the scale joins the end of the line */
        snprintf(line + len - 1, sizeof(line) - len + 1, " | loss_scale %g\n", m->loss_scale);
        snprintf(js + lj - 2, jn - lj + 2, ", \"loss_scale\": %g}\n", m->loss_scale);
    }
    /* per rank, seconds per update: compute (forward + backward) and wait
     * (gradient collectives): the straggler computes longest, waits least */
    for (int k = 0; k < 2; k++) {
        lj = strlen(js);
        int w = snprintf(js + lj - 2, jn - lj + 2, ", \"%s\": [", k ? "wait" : "compute");
        size_t p = lj - 2 + (size_t)w;
        for (int i = 0; i < r->world; i++)
            p += (size_t)snprintf(js + p, jn - p, "%s%.6f", i ? ", " : "",
                                  r->rank_t[2 * i + k] / m->n);
        snprintf(js + p, jn - p, "]}\n");
    }
    memset(r->rank_t, 0, 2 * (size_t)r->world * sizeof(double));
    logf_line(r, line, js);
    free(js);
    memset(m, 0, sizeof(*m));
    m->t0 = hg_now();
}

/* h:mm:ss (or m:ss) of t seconds into out[len] */
static void hms(double t, char *out, size_t len)
{
    long long s = t > 0 && t < 1e9 ? (long long)(t + 0.5) : 0;
    if (s >= 3600)
        snprintf(out, len, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
    else
        snprintf(out, len, "%lld:%02lld", s / 60, s % 60);
}

/* Seconds left to the first stop that is set (--max-update, --max-epoch,
 * --stop-time-hours) at this run's update rate so far; < 0: unknown. */
static double eta(const struct run *r, int64_t step, int64_t steps)
{
    const struct hg_opts *o = &r->o;
    double el = hg_now() - r->t_train0;
    uint64_t done = r->num_updates - r->first_update;
    if (done == 0 || el <= 0)
        return -1;
    double per = el / (double)done, left = -1;
    if (o->max_update > 0)
        left = per * (double)((uint64_t)o->max_update > r->num_updates
                                  ? (uint64_t)o->max_update - r->num_updates : 0);
    if (o->max_epoch > 0) {
        double ups_epoch = (double)steps / (double)o->update_freq;
        double e = per * ((double)(steps - step) / (double)o->update_freq +
                          (double)(o->max_epoch - r->epoch) * ups_epoch);
        left = left < 0 || e < left ? e : left;
    }
    if (o->stop_time_hours > 0) {
        double t = o->stop_time_hours * 3600 - (hg_now() - r->t_start);
        left = left < 0 || t < left ? (t > 0 ? t : 0) : left;
    }
    return left;
}

/* tqdm-style: one line on stderr, rewritten in place between log lines:
 * the epoch's progress, speed, loss, time since the start and the ETA */
static void progress(struct run *r, int64_t step, int64_t steps, const struct meters *m)
{
    double dt = hg_now() - m->t0, left = eta(r, step, steps);
    char el[32], et[32] = "?";
    hms(hg_now() - r->t_start, el, sizeof(el));
    if (left >= 0)
        hms(left, et, sizeof(et));
    fprintf(stderr, "\r| epoch %03lld: %3d%% %lld/%lld, %.1f updates/s, loss %.4f, "
            "elapsed %s, ETA %s   ", (long long)r->epoch,
            steps ? (int)(100 * step / steps) : 100, (long long)step, (long long)steps,
            dt > 0 ? m->n / dt : 0.0, m->ss > 0 ? m->loss / m->ss / log(2.0) : 0.0, el, et);
    fflush(stderr);
}

/* One validation per update: a second request for the same update (the
 * interval and the stop both asking) returns the first one's metric.
 * Returns 1 after a new validation, 0 for the same one again, -1. */
static int validate_once(struct run *r, double *metric, char *err, size_t errlen)
{
    if (r->valid_at == r->num_updates + 1) {
        *metric = r->valid_metric;
        return 0;
    }
    if (validate(r, metric, err, errlen) != 0)
        return -1;
    r->valid_at = r->num_updates + 1;
    r->valid_metric = *metric;
    return 1;
}

static int better(const struct run *r, double v)
{
    if (isnan(v) || r->best_locked)
        return 0; /* a NaN metric is never the best */
    if (isnan(r->best))
        return 1;
    return r->o.maximize_best_checkpoint_metric ? v > r->best : v < r->best;
}

/* After a validation inside an epoch: checkpoint_best.h5 when the metric
 * is the best so far (as fairseq saves it at every validation). */
static int keep_best(struct run *r, double metric, int64_t step, char *err, size_t errlen)
{
    if (r->o.no_save || !better(r, metric))
        return 0;
    r->best = metric;
    return save(r, "checkpoint_best.h5", step, err, errlen);
}

/* fairseq's --patience: 1 when metric (just validated) has not beaten
 * the best of this run for --patience validations in a row. */
static int out_of_patience(struct run *r, double metric)
{
    if (r->o.patience <= 0 || isnan(metric))
        return 0;
    int up = isnan(r->patience_best) ||
             (r->o.maximize_best_checkpoint_metric ? metric > r->patience_best
                                                    : metric < r->patience_best);
    if (up) {
        r->patience_best = metric;
        r->patience_runs = 0;
        return 0;
    }
    if (++r->patience_runs < r->o.patience)
        return 0;
    char line[256];
    snprintf(line, sizeof(line), "| early stop: %s has not improved for %lld validations "
             "(--patience), best %.4f\n", r->o.best_checkpoint_metric,
             (long long)r->patience_runs, r->patience_best);
    logf_line(r, line, NULL);
    return 1;
}

/* --profile-ops: seconds per op kind over the whole run, the top ones */
static void print_profile(struct run *r)
{
    struct hg_exec *ex = hg_ctl_exec(r->ctl);
    const struct hg_graph *g = hg_ctl_graph(r->ctl);
    const double *t = hg_exec_profile_times(ex); /* [n] per position */
    double per[HG_OP_COUNT] = {0}, total = 0;
    int count[HG_OP_COUNT] = {0};
    if (!t)
        return;
    for (int i = 0; i < hg_exec_n(ex); i++) {
        enum hg_op op = hg_graph_node(g, hg_exec_order_at(ex, i))->op;
        per[op] += t[i];
        count[op]++;
        total += t[i];
    }
    char line[512];
    size_t copied;
    int views, fused, calls = hg_exec_kernel_calls(ex, &views, &fused, &copied);
    snprintf(line, sizeof line, "| op profile: %.3f s in the plan's ops over %llu updates; "
             "%d kernel calls per pass over %d nodes (%d reshapes and slices are views, %d "
             "optimizer nodes fused); %.2f MB copied by layout ops per pass (the last "
             "batch's shapes)\n", total, (unsigned long long)r->num_updates, calls,
             hg_exec_n(ex), views, fused, copied / 1e6);
    logf_line(r, line, NULL);
    long long launches = hg_exec_launches(ex);
    uint64_t updates = r->num_updates - r->first_update;
    if (launches >= 0 && updates > 0) {
        snprintf(line, sizeof line, "| op profile: %.1f launches per update on the GPU "
                 "(kernels, cuBLAS/cuDNN calls, stream copies and sets)\n",
                 (double)launches / (double)updates);
        logf_line(r, line, NULL);
    }
    for (int k = 0; k < 15; k++) {
        int best = -1;
        for (int op = 0; op < HG_OP_COUNT; op++)
            if (count[op] && (best < 0 || per[op] > per[best]))
                best = op;
        if (best < 0 || per[best] <= 0)
            break;
        snprintf(line, sizeof line, "|   %-20s %6.1f%%  %9.3f s  %4d nodes\n",
                 hg_op_table[best].name, 100 * per[best] / (total > 0 ? total : 1),
                 per[best], count[best]);
        logf_line(r, line, NULL);
        count[best] = 0;
    }
}

/* --trace: the latest step's ops on this rank, Chrome trace JSON (pid:
 * the rank; times: the machine's monotonic clock in us, so the ranks of
 * one machine line up); rank R of several writes FILE.rankR (before the
 * extension).  -1 with err naming the file. */
static int write_trace(struct run *r, char *err, size_t errlen)
{
    struct hg_exec *ex = hg_ctl_exec(r->ctl);
    const struct hg_graph *g = hg_ctl_graph(r->ctl);
    const double *t = hg_exec_trace_times(ex); /* [n][2] */
    char path[4096];
    const char *dot = strrchr(r->o.trace, '.'), *slash = strrchr(r->o.trace, '/');
    if (dot && slash && dot < slash)
        dot = NULL;
    if (r->world > 1)
        snprintf(path, sizeof path, "%.*s.rank%d%s", dot ? (int)(dot - r->o.trace)
                 : (int)strlen(r->o.trace), r->o.trace, r->rank, dot ? dot : "");
    else
        snprintf(path, sizeof path, "%s", r->o.trace);
    FILE *f = t ? fopen(path, "w") : NULL;
    if (!f)
        return hg_kerr(err, errlen, "--trace %s: %s", path, t ? strerror(errno) : "no timeline");
    fprintf(f, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n"
            "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": 0, "
            "\"args\": {\"name\": \"rank %d\"}}", r->rank, r->rank);
    for (int i = 0; i < hg_exec_n(ex); i++) {
        if (t[2 * i] <= 0) /* never ran here (fused with an earlier node) */
            continue;
        int v = hg_exec_order_at(ex, i);
        const struct hg_node_info *nd = hg_graph_node(g, v);
        /* transfers (started, then waited for) on a track of their own */
        fprintf(f, ",\n{\"name\": \"%s #%d\", \"ph\": \"X\", \"pid\": %d, \"tid\": %d, "
                "\"ts\": %.3f, \"dur\": %.3f, \"args\": {\"out\": \"%s\"}}",
                hg_op_table[nd->op].name, v, r->rank,
                (hg_op_table[nd->op].flags & HG_OPF_COMM) != 0, t[2 * i] * 1e6,
                (t[2 * i + 1] - t[2 * i]) * 1e6,
                nd->out >= 0 ? hg_graph_tensor(g, nd->out)->name : "-");
    }
    fprintf(f, "\n]}\n");
    if (ferror(f) | (fclose(f) != 0))
        return hg_kerr(err, errlen, "--trace %s: write failed", path);
    return 0;
}

/* The plan of epoch r->epoch from first_step on. A fresh epoch is one
 * segment with this run's budgets; a resumed one continues the
 * checkpoint's segments, and starts a new one at first_step when this run
 * has another world or other budgets (docs/distributed.md, "Resuming on
 * another cluster"). No segments from the checkpoint (a file from before
 * segments): one segment with this run's budgets, as always. */
static int plan_epoch(struct run *r, int64_t first_step, int resumed,
                      struct hg_epoch **ep, char *err, size_t errlen)
{
    if (first_step == 0) {
        free(r->segs);
        r->segs = NULL;
        r->nsegs = 0;
    }
    enum { MAXSEG = 4096 };
    struct hg_epoch_seg *sg = malloc(MAXSEG * sizeof(*sg)); /* [MAXSEG] */
    if (!sg)
        return hg_kerr(err, errlen, "out of memory");
    int ns = r->nsegs ? hg_epoch_segs_decode(r->segs, r->nsegs, sg, MAXSEG, err, errlen) : 0;
    /* --rebalance-interval resumed on the same world: the last segment's
     * budgets (a decision of the run that saved it) go on, and the
     * capacities start from them */
    int keep = resumed && r->rebalance && ns > 0 && sg[ns - 1].world == r->world;
    if (keep) {
        r->rb_guess = 0; /* a decision of the run that saved it */
        const struct hg_epoch_seg *g = &sg[ns - 1];
        const int64_t *b = g->sent[0] != INT64_MAX ? g->sent : g->tok;
        int64_t mx = 1;
        for (int i = 0; i < r->world; i++)
            mx = b[i] > mx ? b[i] : mx;
        for (int i = 0; i < r->world; i++)
            r->cap[i] = b[i] > 0 ? (double)b[i] / (double)mx : 1.0 / (double)mx;
    }
    if (ns >= 0 && !keep &&
        hg_epoch_segs_append(&r->segs, &r->nsegs, r->nsegs ? first_step : 0, &r->bo,
                             err, errlen) < 0)
        ns = -1;
    if (ns >= 0 && !keep)
        ns = hg_epoch_segs_decode(r->segs, r->nsegs, sg, MAXSEG, err, errlen);
    int rc = ns < 0 ? -1
                    : hg_epoch_plan_segments(ep, r->train.cost, r->train.n, sg, ns,
                                             r->bo.seed, r->bo.shuffle,
                                             (uint64_t)r->epoch, err, errlen);
    if (rc == 0 && ns > 1 && first_step == sg[ns - 1].start && r->rank == 0) {
        char line[256];
        snprintf(line, sizeof(line), "| epoch %lld: segment %d from step %lld on %d "
                 "ranks: %lld steps in the epoch\n", (long long)r->epoch, ns - 1,
                 (long long)first_step, sg[ns - 1].world, (long long)hg_epoch_steps(*ep));
        logf_line(r, line, NULL);
    }
    free(sg);
    return rc;
}

/* Rank i's batch at step: its cost, samples x their largest cost (the
 * padding-aware cost the budgets bound). */
static double batch_cost(const struct run *r, const struct hg_epoch *ep, int i,
                         int64_t step)
{
    int64_t c;
    const int64_t *idx = hg_epoch_batch(ep, i, step, &c);
    int32_t mx = 0;
    for (int64_t k = 0; k < c; k++)
        mx = r->train.cost[idx[k]] > mx ? r->train.cost[idx[k]] : mx;
    return (double)c * (double)mx;
}

/* --rebalance-interval -1 (the default) on several ranks */
#define REBALANCE_AUTO 50
#define REBALANCE_BAND 0.05

/* --rebalance-interval: each rank's speed over the last interval (batch
 * cost per compute second, the same numbers on every rank: the costs from
 * the plan, the times from the statistics allreduce), relative to the
 * fastest, moves the capacities halfway there (an exponential moving
 * average, so one noisy interval does not swing them; the first decision
 * after a guess goes all the way); new budgets start a segment at step.
 * 1: a new segment; 0: the same budgets; -1: error. */
static int rebalance(struct run *r, int64_t step, char *err, size_t errlen)
{
    double vmax = 0;
    for (int i = 0; i < r->world; i++) {
        double v = r->rb_time[i] > 0 ? r->rb_cost[i] / r->rb_time[i] : 0;
        vmax = v > vmax ? v : vmax;
    }
    /* every speed within REBALANCE_BAND of its capacity: nothing to gain,
     * and ranks of equal speed keep equal budgets through timing noise */
    int near = 1;
    for (int i = 0; i < r->world && vmax > 0; i++)
        if (r->rb_time[i] > 0 && r->rb_cost[i] > 0 &&
            fabs(r->rb_cost[i] / r->rb_time[i] / vmax - r->cap[i]) > REBALANCE_BAND * r->cap[i])
            near = 0;
    if (near) {
        memset(r->rb_cost, 0, (size_t)r->world * sizeof(double));
        memset(r->rb_time, 0, (size_t)r->world * sizeof(double));
        r->rb_guess = 0;
        return 0;
    }
    double w = r->rb_guess ? 1.0 : 0.5;
    r->rb_guess = 0;
    /* a rank without data or time this interval keeps its capacity */
    for (int i = 0; i < r->world && vmax > 0; i++)
        if (r->rb_time[i] > 0 && r->rb_cost[i] > 0)
            r->cap[i] = (1 - w) * r->cap[i] + w * (r->rb_cost[i] / r->rb_time[i] / vmax);
    double cmax = 0;
    for (int i = 0; i < r->world; i++)
        cmax = r->cap[i] > cmax ? r->cap[i] : cmax;
    for (int i = 0; i < r->world; i++) /* the fastest is 1 */
        r->cap[i] = r->cap[i] / cmax;
    memset(r->rb_cost, 0, (size_t)r->world * sizeof(double));
    memset(r->rb_time, 0, (size_t)r->world * sizeof(double));
    int nr = hg_epoch_segs_append(&r->segs, &r->nsegs, step, &r->bo, err, errlen);
    if (nr == 1 && r->rank == 0) {
        size_t jn = 256 + 48 * (size_t)r->world;
        char *js = malloc(jn); /* [jn] */
        if (!js)
            return hg_kerr(err, errlen, "out of memory");
        int k = snprintf(js, jn, "{\"rebalance\": %llu, \"epoch\": %lld, \"step\": %lld, "
                         "\"capacity\": [", (unsigned long long)r->num_updates,
                         (long long)r->epoch, (long long)step);
        for (int i = 0; i < r->world; i++)
            k += snprintf(js + k, jn - (size_t)k, "%s%.4f", i ? ", " : "", r->cap[i]);
        /* the budgets the capacities give (the new segment's) */
        struct hg_epoch_seg *sg = malloc((size_t)r->nsegs * sizeof(*sg)); /* [nsegs] */
        int ns = sg ? hg_epoch_segs_decode(r->segs, r->nsegs, sg, (int)r->nsegs, err, errlen)
                    : -1;
        if (ns > 0) {
            const struct hg_epoch_seg *g = &sg[ns - 1];
            int sent = g->sent[0] != INT64_MAX;
            k += snprintf(js + k, jn - (size_t)k, "], \"%s\": [", sent ? "sentences" : "tokens");
            for (int i = 0; i < r->world; i++)
                k += snprintf(js + k, jn - (size_t)k, "%s%lld", i ? ", " : "",
                              (long long)(sent ? g->sent[i] : g->tok[i]));
        }
        free(sg);
        if (ns <= 0) {
            free(js);
            return ns < 0 ? -1 : hg_kerr(err, errlen, "rebalance: no segment");
        }
        snprintf(js + k, jn - (size_t)k, "]}\n");
        char line[128];
        snprintf(line, sizeof(line), "| update %llu: rebalanced the capacities\n",
                 (unsigned long long)r->num_updates);
        logf_line(r, line, js);
        free(js);
    }
    return nr;
}

/* HG_TRACE_SAMPLES (a test aid): the sample indices this rank consumes,
 * one line per step, "epoch E step S rank R: i i ...". */
static void trace_batch(struct run *r, const struct hg_epoch *ep, int64_t step)
{
    int64_t c;
    const int64_t *idx = hg_epoch_batch(ep, r->rank, step, &c);
    fprintf(r->trace, "epoch %lld step %lld rank %d:", (long long)r->epoch,
            (long long)step, r->rank);
    for (int64_t i = 0; i < c; i++)
        fprintf(r->trace, " %lld", (long long)idx[i]);
    fputc('\n', r->trace);
    fflush(r->trace);
}

/* The epoch loop. Returns 0, 1 (stopped by a signal), or -1. */
static int train(struct run *r, int64_t first_step, char *err, size_t errlen)
{
    const struct hg_opts *o = &r->o;
    /* resumed at --max-update or beyond: nothing to do (not one more) */
    if (o->max_update > 0 && r->num_updates >= (uint64_t)o->max_update)
        return 0;
    for (;; r->epoch++, first_step = 0) {
        if (o->max_epoch > 0 && r->epoch > o->max_epoch)
            return 0;
        struct hg_epoch *ep;
        if (plan_epoch(r, first_step, first_step > 0, &ep, err, errlen) != 0)
            return -1;
        struct hg_loader *ld;
        struct hg_loader_opts lo = {.rank = r->data_rank, .prefetch = 4, .pad_id = 1,
                                    .timeout_s = o->distributed_timeout};
        if (hg_loader_open(&ld, r->train.ds, ep, &lo, first_step, err, errlen) != 0) {
            hg_epoch_free(ep);
            return -1;
        }
        int64_t steps = hg_epoch_steps(ep), step = first_step;
        struct meters m = {.t0 = hg_now()};
        struct hg_ctl_stats st;
        memset(&st, 0, sizeof(st));
        int rc = 0, in_step = 0, impatient = 0;
        struct hg_batch b;
        double lr = hg_lr_at(&r->sched, (int64_t)r->num_updates);
        while ((rc = hg_loader_next(ld, &b, err, errlen)) == 1) {
            double t0 = hg_now();
            if (r->trace)
                trace_batch(r, ep, b.step);
            for (int i = 0; r->rebalance && i < r->world; i++)
                r->rb_cost[i] += batch_cost(r, ep, i, b.step);
            step++;
            int64_t dropped = st.dropped;
            if (hg_ctl_accumulate(r->ctl, r->num_updates, &b, &st, err, errlen) != 0) {
                rc = -1;
                break;
            }
            if (st.dropped > dropped) {
                char w[200];
                snprintf(w, sizeof w, "warning: step %lld's batch of %lld samples is smaller "
                         "than the split strategy's pieces: not trained on",
                         (long long)b.step, (long long)(st.dropped - dropped));
                logf_line(r, w, NULL);
            }
            if (++in_step < o->update_freq && step < steps)
                continue;
            in_step = 0;
            lr = hg_lr_at(&r->sched, (int64_t)r->num_updates);
            /* the ranks agree on both in the update: every rank stops */
            st.stop = (stop_signal ? HG_STOP_SIGNAL : 0) |
                      (o->stop_time_hours > 0 && hg_now() - r->t_start >= o->stop_time_hours * 3600
                           ? HG_STOP_TIME
                           : 0);
            if (hg_ctl_update(r->ctl, r->num_updates, lr, &st, err, errlen) != 0) {
                rc = -1;
                break;
            }
            r->train_wall += hg_now() - t0;
            int stop_req = (st.stop & HG_STOP_SIGNAL) != 0, stop_time = (st.stop & HG_STOP_TIME) != 0;
            if (!st.skipped) {
                const double *rt;
                int nw = hg_ctl_rank_times(r->ctl, &rt);
                for (int i = 0; i < 2 * nw && nw == r->world; i++)
                    r->rank_t[i] += rt[i];
                for (int i = 0; r->rebalance && i < nw && nw == r->world; i++)
                    r->rb_time[i] += rt[2 * i];
                m.bsz += st.nsentences;
                r->num_updates++;
                m.loss += st.loss_sum;
                m.nll += st.nll_sum;
                m.ss += st.sample_size;
                m.gnorm += st.gnorm;
                m.clip += st.clipped;
                m.loss_scale = st.loss_scale;
                m.n++;
            }
            memset(&st, 0, sizeof(st));
            /* decided before any save, so a checkpoint of this update
             * holds the new segment as the run goes on with it */
            int resegment = 0;
            if (r->rebalance && r->num_updates % (uint64_t)r->rebalance == 0 && step < steps &&
                (resegment = rebalance(r, step, err, errlen)) < 0) {
                rc = -1;
                break;
            }
            if (r->num_updates % (uint64_t)o->log_interval == 0)
                log_train(r, &m, step, steps, lr);
            else if (r->tty)
                progress(r, step, steps, &m);
            int stop_now = stop_req || stop_time ||
                           (o->max_update > 0 && r->num_updates >= (uint64_t)o->max_update);
            /* validated before any stop's save, so checkpoint_last holds
             * the final best_metric; not on a signal, which asks to stop now */
            if (r->valid.ds && !stop_req &&
                ((o->validate_interval_updates > 0 &&
                  r->num_updates % (uint64_t)o->validate_interval_updates == 0) ||
                 stop_now)) {
                double metric;
                int fresh = validate_once(r, &metric, err, errlen);
                if (fresh < 0 || keep_best(r, metric, step, err, errlen) != 0) {
                    rc = -1;
                    break;
                }
                /* --patience counts validations, each once */
                if (fresh && out_of_patience(r, metric))
                    impatient = stop_now = 1;
            }
            if (stop_time && r->rank == 0) {
                char line[160];
                snprintf(line, sizeof(line), "| --stop-time-hours %g reached after update %llu\n",
                         o->stop_time_hours, (unsigned long long)r->num_updates);
                logf_line(r, line, NULL);
            }
            if (!o->no_save && (stop_now || (o->save_interval_updates > 0 &&
                                             r->num_updates % (uint64_t)o->save_interval_updates == 0))) {
                char name[128];
                snprintf(name, sizeof(name), "checkpoint_%lld_%llu.h5", (long long)r->epoch,
                         (unsigned long long)r->num_updates);
                if ((!stop_now && save(r, name, step, err, errlen) != 0) ||
                    save(r, "checkpoint_last.h5", step, err, errlen) != 0) {
                    rc = -1;
                    break;
                }
                if (!stop_now)
                    prune(r, "checkpoint_*_*.h5", o->keep_interval_updates);
            }
            if (stop_now) {
                rc = stop_req ? 2 : 3;
                break;
            }
            if (resegment) { /* a new segment from this step on */
                hg_loader_close(ld);
                hg_epoch_free(ep);
                ld = NULL;
                ep = NULL;
                if (plan_epoch(r, step, 0, &ep, err, errlen) != 0 ||
                    hg_loader_open(&ld, r->train.ds, ep, &lo, step, err, errlen) != 0) {
                    rc = -1;
                    break;
                }
                steps = hg_epoch_steps(ep);
            }
        }
        hg_loader_close(ld);
        hg_epoch_free(ep);
        if (rc < 0)
            return -1;
        log_train(r, &m, step, steps, lr);
        if (rc == 2) {
            if (r->rank == 0)
                fprintf(stderr, "hgtrain: stopped by signal %d after update %llu%s; the final "
                        "validation skipped\n",
                        stop_signal ? (int)stop_signal : SIGTERM, (unsigned long long)r->num_updates,
                        o->no_save ? "" : "; wrote checkpoint_last.h5");
            return 1;
        }
        /* stopped inside the epoch (--max-update, --stop-time-hours):
         * validated and saved above */
        if (rc == 3)
            return 0;
        /* end of the epoch; the last one (--max-epoch, --min-lr) is always
         * validated and saved */
        int last = (o->max_epoch > 0 && r->epoch >= o->max_epoch) ||
                   (o->min_lr > 0 && hg_lr_at(&r->sched, (int64_t)r->num_updates) < o->min_lr);
        double metric = NAN;
        int have_valid = r->valid.ds && o->validate_interval > 0 &&
                         (r->epoch % o->validate_interval == 0 || last);
        int fresh = have_valid ? validate_once(r, &metric, err, errlen) : 0;
        if (fresh < 0)
            return -1;
        if (fresh && out_of_patience(r, metric))
            impatient = 1; /* the last epoch: saved, then stop */
        if (!o->no_save && (r->epoch % o->save_interval == 0 || last || impatient)) {
            if (have_valid && better(r, metric)) {
                r->best = metric;
                if (save(r, "checkpoint_best.h5", -1, err, errlen) != 0)
                    return -1;
            }
            char name[64];
            snprintf(name, sizeof(name), "checkpoint%lld.h5", (long long)r->epoch);
            if ((!o->no_epoch_checkpoints && save(r, name, -1, err, errlen) != 0) ||
                save(r, "checkpoint_last.h5", -1, err, errlen) != 0)
                return -1;
            if (!o->no_epoch_checkpoints)
                prune(r, "checkpoint[0-9]*.h5", o->keep_last_epochs);
        }
        if (impatient)
            return 0;
        if (o->min_lr > 0 && hg_lr_at(&r->sched, (int64_t)r->num_updates) < o->min_lr) {
            char line[256];
            snprintf(line, sizeof(line), "| lr %.3g below --min-lr %.3g: done\n",
                     hg_lr_at(&r->sched, (int64_t)r->num_updates), o->min_lr);
            logf_line(r, line, NULL);
            return 0;
        }
    }
}

/* After a checkpoint failed to load: when it is another task's (two runs
 * in one --save-dir), say so instead of naming a parameter. */
static void other_task(const struct run *r, const char *path, char *err, size_t errlen)
{
    struct hg_graph *empty = hg_graph_new();
    struct hg_ckpt_meta m;
    memset(&m, 0, sizeof(m));
    char e2[256], task[64] = "";
    if (empty && hg_ckpt_load(path, empty, NULL, 1, &m, e2, sizeof(e2)) == 0 && m.options) {
        const char *t = strstr(m.options, "--task ");
        if (t && sscanf(t + 7, "%63[A-Za-z0-9_.-]", task) != 1)
            task[0] = 0;
    }
    hg_ckpt_meta_free(&m);
    hg_graph_free(empty);
    if (task[0] && strcmp(task, r->task->name) != 0)
        hg_kerr(err, errlen, "%s is a checkpoint of task '%s', but this run is task '%s': "
                "give it its own --save-dir (or --restore-file)", path, task, r->task->name);
}

/* mkdir -p, new directories 0700 (checkpoints are nobody else's) */
static int mkdir_p(const char *path)
{
    char buf[4096];
    if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(buf, 0700) != 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    return mkdir(buf, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

static int optimizer(const struct hg_opts *o, struct hg_ctl_cfg *c, char *err,
                     size_t errlen)
{
    if (strcmp(o->optimizer, "sgd") == 0) {
        c->optim = HG_OPTIM_SGD;
        c->hyper.sgd.momentum = (float)o->momentum;
        c->hyper.sgd.weight_decay = (float)o->weight_decay;
        c->hyper.sgd.nesterov = o->nesterov;
    } else if (strcmp(o->optimizer, "adam") == 0 || strcmp(o->optimizer, "adamw") == 0) {
        c->optim = strcmp(o->optimizer, "adam") == 0 ? HG_OPTIM_ADAM : HG_OPTIM_ADAMW;
        c->hyper.adam.beta1 = (float)o->adam_betas.v[0];
        c->hyper.adam.beta2 = (float)o->adam_betas.v[1];
        c->hyper.adam.eps = (float)o->adam_eps;
        c->hyper.adam.weight_decay = (float)o->weight_decay;
    } else if (strcmp(o->optimizer, "adadelta") == 0) {
        c->optim = HG_OPTIM_ADADELTA;
        c->hyper.adadelta.rho = 0.9f;
        c->hyper.adadelta.eps = 1e-6f;
        c->hyper.adadelta.weight_decay = (float)o->weight_decay;
    } else {
        return hg_kerr(err, errlen, "--optimizer %s: unknown", o->optimizer);
    }
    return 0;
}

/* A save interrupted by SIGKILL or a crash leaves <name>.h5.tmp (or a
 * shard's <name>.h5.<tag>.shard<k>-of-<n>.tmp, or shards that no
 * checkpoint lists); nothing else writes those names, so they go at the
 * next start. */
static void remove_stale_tmp(struct run *r)
{
    static const char *const pats[] = {"*.h5.tmp", "*.h5.*.shard*.tmp", NULL};
    for (const char *const *p = pats; *p; p++) {
        char pat[4096];
        glob_t gl;
        if (ckpt_path(r, *p, pat, sizeof(pat)) != 0 || glob(pat, 0, NULL, &gl) != 0)
            continue;
        for (size_t i = 0; i < gl.gl_pathc; i++)
            if (unlink(gl.gl_pathv[i]) == 0) {
                char line[4200];
                snprintf(line, sizeof(line), "| removed %s (left by an interrupted save)\n",
                         gl.gl_pathv[i]);
                logf_line(r, line, NULL);
            }
        globfree(&gl);
    }
    /* shards of no checkpoint (a save killed between its shards and its
     * index, or before it removed the old ones) */
    char pat[4096];
    glob_t gl;
    if (ckpt_path(r, "*.h5.*.shard*-of-*", pat, sizeof(pat)) != 0 || glob(pat, 0, NULL, &gl) != 0)
        return;
    for (size_t i = 0; i < gl.gl_pathc; i++)
        if (hg_ckpt_orphan_shard(gl.gl_pathv[i]) && unlink(gl.gl_pathv[i]) == 0) {
            char line[4200];
            snprintf(line, sizeof(line), "| removed %s (a shard of no checkpoint)\n",
                     gl.gl_pathv[i]);
            logf_line(r, line, NULL);
        }
    globfree(&gl);
}

/* checkpoint_best.h5 on disk bounds what may replace it, whatever the
 * resumed checkpoint says (an old one, --reset-meters, another
 * --restore-file): a metric of another name or direction cannot be
 * compared, so such a file is kept. */
static void best_from_disk(struct run *r)
{
    char path[4096], err[4300];
    if (r->o.no_save || ckpt_path(r, "checkpoint_best.h5", path, sizeof(path)) != 0 ||
        access(path, F_OK) != 0)
        return;
    struct hg_ckpt_meta m;
    if (hg_ckpt_read_meta(path, &m, err, sizeof(err)) != 0) {
        fprintf(stderr, "hgtrain: warning: %s; it is kept, not replaced\n", err);
        r->best_locked = 1;
        return;
    }
    const char *name = m.metric_name ? m.metric_name : "";
    if (m.checksummed && (strcmp(name, r->o.best_checkpoint_metric) != 0 ||
                          m.maximize != r->o.maximize_best_checkpoint_metric)) {
        fprintf(stderr, "hgtrain: warning: %s was chosen by '%s' (%s is better), this run "
                "by '%s' (%s): it is kept, not replaced\n", path, name,
                m.maximize ? "higher" : "lower", r->o.best_checkpoint_metric,
                r->o.maximize_best_checkpoint_metric ? "higher" : "lower");
        r->best_locked = 1;
    } else if (!isnan(m.best_metric) &&
               (isnan(r->best) || (r->o.maximize_best_checkpoint_metric ? m.best_metric > r->best
                                                                        : m.best_metric < r->best))) {
        r->best = m.best_metric; /* the file's metric is the bar */
    }
    hg_ckpt_meta_free(&m);
}

/* What rank 0 read from the checkpoint, for the others. */
struct resume_meta {
    int64_t loaded, num_updates, epoch, first_step, nsegs;
    double best, train_wall, wall;
};

static int prepare_save_dir(struct run *r, char *err, size_t errlen);

/* HG_TEST_GRAD_WEIGHT=RANK:W, a test aid (docs/reproducibility.md): rank
 * RANK's gradient counted W times, a bug planted for the equivalence tests
 * to catch; 1 for every other rank, or unset */
static double planted_grad_weight(int rank)
{
    const char *e = getenv("HG_TEST_GRAD_WEIGHT");
    int r;
    double w;
    if (!e || sscanf(e, "%d:%lf", &r, &w) != 2 || r != rank || !(w > 0))
        return 1;
    fprintf(stderr, "| WARNING: HG_TEST_GRAD_WEIGHT: rank %d's gradient counted %g times "
            "(a planted bug)\n", rank, w);
    return w;
}

static int setup(struct run *r, int64_t *first_step, char *err, size_t errlen)
{
    struct hg_opts *o = &r->o;
    if (!o->data)
        return hg_kerr(err, errlen, "--data is required");
    if (!(r->rank_t = calloc(2 * (size_t)r->world, sizeof(double))))
        return hg_kerr(err, errlen, "out of memory");
    const char *trace = getenv("HG_TRACE_SAMPLES"); /* a test aid: docs/distributed.md */
    if (trace && *trace) {
        char tp[4096];
        snprintf(tp, sizeof(tp), "%s.rank%d", trace, r->rank);
        if (!(r->trace = fopen(tp, "a")))
            return hg_kerr(err, errlen, "HG_TRACE_SAMPLES: %s: %s", tp, strerror(errno));
    }
    struct hg_task_args ta = {.values = (const char *const *)o->task_vals_,
                              .arch = o->arch};
    if (r->task->setup && r->task->setup(&r->ts, o->data, &ta, err, errlen) != 0)
        return -1;
    if (split_open(&r->train, r->task, r->ts, o->data, "train", err, errlen) != 0)
        return -1;
    r->data_hash = 14695981039346656037ull; /* FNV-1a, 64 bits */
    for (int64_t i = 0; i < r->train.n; i++)
        for (int b = 0; b < 4; b++)
            r->data_hash = (r->data_hash ^ (((uint32_t)r->train.cost[i] >> (8 * b)) & 0xff)) *
                           1099511628211ull;
    if (o->validate_interval > 0 &&
        split_open(&r->valid, r->task, r->ts, o->data, o->valid_subset, err, errlen) != 0)
        return -1;
    /* budgets: per-rank lists, else the global ones scaled by capacity */
    const struct hg_opt_list *lists[3] = {&o->rank_capacity, &o->max_tokens_per_rank,
                                           &o->max_sentences_per_rank};
    static const char *const names[3] = {"rank-capacity", "max-tokens-per-rank",
                                         "max-sentences-per-rank"};
    for (int k = 0; k < 3; k++)
        if (lists[k]->n > 0 && lists[k]->n != r->world)
            return hg_kerr(err, errlen, "--%s has %d entries for a world of %d ranks%s%s",
                           names[k], lists[k]->n, r->world,
                           k == 0 && o->cluster_file ? ": from --cluster-file " : "",
                           k == 0 && o->cluster_file ? o->cluster_file : "");
    if (o->rank_slowdown.n > 0 && o->rank_slowdown.n != r->world)
        return hg_kerr(err, errlen, "--rank-slowdown has %d entries for a world of %d ranks",
                       o->rank_slowdown.n, r->world);
    for (int i = 0; i < o->rank_slowdown.n; i++)
        if (!(o->rank_slowdown.v[i] >= 1))
            return hg_kerr(err, errlen, "--rank-slowdown: rank %d's factor is %g, must be >= 1",
                           i, o->rank_slowdown.v[i]);
    int64_t **dst[2] = {&r->rank_tok, &r->rank_sent};
    r->max_tok = o->max_tokens;
    r->max_sent = o->max_sentences;
    if (o->strategy || r->plan_text) {
        /* the strategy's rows of the global batch are the per-rank budgets */
        struct hg_ctl_cfg oc;
        memset(&oc, 0, sizeof oc);
        if (optimizer(o, &oc, err, errlen) != 0 ||
            hg_strat_plan(&r->strat, r->plan_text ? r->plan_path : o->strategy, r->plan_text,
                          o->cluster_file, r->task, r->ts, o->max_sentences,
                          r->train.max_len, oc.optim, &oc.hyper, r->world, err,
                          errlen) != 0)
            return -1;
        if (r->strat.kind != HG_LAYOUT_DP) {
            /* model parallel: every rank reads what one rank would, the
             * whole global batch (rank 0's batches of a world of 1) */
            r->data_rank = 0;
        } else {
            if (!(r->rank_sent = malloc((size_t)r->world * sizeof(int64_t))))
                return hg_kerr(err, errlen, "out of memory");
            r->max_sent = 0;
            for (int i = 0; i < r->world; i++) {
                r->rank_sent[i] = r->strat.rank_sent[i];
                r->max_sent = r->rank_sent[i] > r->max_sent ? r->rank_sent[i] : r->max_sent;
            }
        }
        if (r->rank == 0)
            logf_line(r, r->strat.desc, NULL);
        /* the batcher cuts a rank's batch to the required multiple: say so
         * where that is not the strategy's rows */
        int64_t m = o->required_batch_size_multiple, kept = 0, cut = 0;
        for (int i = 0; r->rank_sent && i < r->world; i++) {
            int64_t b = r->rank_sent[i];
            kept += b >= m ? b - b % m : b;
            cut += b >= m && b % m != 0;
        }
        if (cut && r->rank == 0)
            fprintf(stderr, "hgtrain: warning: %lld of the strategy's rows per rank are not "
                    "multiples of --required-batch-size-multiple %lld: the batcher cuts them "
                    "(%lld of %lld samples a step); give --required-batch-size-multiple 1 to "
                    "train its rows exactly\n", (long long)cut, (long long)m, (long long)kept,
                    (long long)o->max_sentences);
    }
    for (int k = 0; k < 2; k++) {
        const struct hg_opt_list *l = lists[k + 1];
        if (l->n == 0)
            continue;
        *dst[k] = malloc((size_t)l->n * sizeof(int64_t));
        if (!*dst[k])
            return hg_kerr(err, errlen, "out of memory");
        int64_t mx = 0;
        for (int i = 0; i < l->n; i++) {
            (*dst[k])[i] = (int64_t)l->v[i];
            mx = (*dst[k])[i] > mx ? (*dst[k])[i] : mx;
        }
        *(k ? &r->max_sent : &r->max_tok) = mx;
    }
    r->bo = (struct hg_batch_opts){
        .max_tokens = r->max_tok, .max_sentences = r->max_sent,
        .required_multiple = o->required_batch_size_multiple,
        .world = r->strat.kind != HG_LAYOUT_DP ? 1 : r->world,
        .capacity = o->rank_capacity.n > 0 ? o->rank_capacity.v : NULL,
        .rank_max_tokens = r->rank_tok, .rank_max_sentences = r->rank_sent,
        .seed = (uint64_t)o->seed, .shuffle = 1};
    if (o->rebalance_interval > 0 && (r->rank_tok || r->rank_sent))
        return hg_kerr(err, errlen, "--rebalance-interval sets the per-rank budgets; drop "
                       "--max-tokens-per-rank, --max-sentences-per-rank, --strategy and --plan");
    /* automatic: on, unless the user set the budgets (capacities from a
     * cluster file are datasheet peaks, which measuring corrects) */
    int64_t rbi = o->rebalance_interval;
    if (rbi < 0)
        rbi = r->rank_tok || r->rank_sent || o->strategy || r->plan_text ||
                      (o->rank_capacity.n > 0 && !o->cluster_file)
                  ? 0
                  : REBALANCE_AUTO;
    r->rebalance = r->world > 1 ? rbi : 0;
    if (r->rebalance) {
        r->cap = malloc((size_t)r->world * sizeof(double));
        r->rb_cost = calloc((size_t)r->world, sizeof(double));
        r->rb_time = calloc((size_t)r->world, sizeof(double));
        if (!r->cap || !r->rb_cost || !r->rb_time)
            return hg_kerr(err, errlen, "out of memory");
        for (int i = 0; i < r->world; i++)
            r->cap[i] = o->rank_capacity.n > 0 ? o->rank_capacity.v[i] : 1.0;
        r->bo.capacity = r->cap; /* what rebalance() changes */
        r->rb_guess = 1;
    }
    hg_opts_lr_sched(o, &r->sched);
    if (hg_lr_check(&r->sched, err, errlen) != 0)
        return -1;

    /* The plan is for the largest batch and sequence any epoch can bring. */
    int32_t max_len = r->train.max_len, min_len = r->train.min_len;
    if (r->valid.ds) {
        if (r->valid.max_len > max_len)
            max_len = r->valid.max_len;
        if (r->valid.min_len < min_len)
            min_len = r->valid.min_len;
    }
    struct hg_ctl_cfg cc = {.clip_norm = o->clip_norm, .seed = (uint64_t)o->seed,
                            .max_len = max_len, .max_tokens = r->max_tok,
                            .cuda = r->cuda_device >= 0, .cuda_device = r->cuda_device,
                            .lowp = o->fp16 ? HG_LOWP_FP16 : o->bf16 ? HG_LOWP_BF16
                                                                     : HG_LOWP_NONE,
                            .loss_scale_init = o->fp16_init_scale,
                            .loss_scale_min = o->min_loss_scale,
                            .comm = r->comm, .bucket_cap_mb = o->bucket_cap_mb,
                            .slowdown = o->rank_slowdown.n ? o->rank_slowdown.v[r->rank] : 0,
                            .grad_weight = planted_grad_weight(r->rank),
                            .update_freq = (int)o->update_freq,
                            .strat = o->strategy || r->plan_text ? &r->strat : NULL,
                            .ps_timeout_s = o->distributed_timeout / 2,
                            .spread_owners = o->save_sharded};
    if (o->bf16 && o->fp16)
        return hg_kerr(err, errlen, "give --bf16 or --fp16, not both");
    cc.loss_scale_window = o->fp16_scale_window > 0
                               ? (int)o->fp16_scale_window
                               : (int)(16384 / (r->world * o->update_freq) > 0
                                           ? 16384 / (r->world * o->update_freq) : 1);
    /* every rank plans for the largest rank's batch (a slower rank only
     * leaves part of its buffers unused) */
    cc.max_batch = r->max_sent > 0 ? r->max_sent : r->max_tok / min_len;
    if (r->max_tok > 0 && cc.max_batch > r->max_tok / min_len)
        cc.max_batch = r->max_tok / min_len;
    if (cc.max_batch < 1)
        cc.max_batch = 1;
    r->plan_batch = cc.max_batch;
    r->plan_len = max_len;
    if (optimizer(o, &cc, err, errlen) != 0 ||
        hg_ctl_new(&r->ctl, r->task, r->ts, &cc, err, errlen) != 0)
        return -1;
    if (hg_ctl_buckets(r->ctl) > 0 && r->rank == 0) {
        char line[160];
        snprintf(line, sizeof(line),
                 "| gradients in %d bucket%s of at most %g MiB (or one tensor), all-reduced "
                 "from the backward\n",
                 hg_ctl_buckets(r->ctl), hg_ctl_buckets(r->ctl) > 1 ? "s" : "", o->bucket_cap_mb);
        logf_line(r, line, NULL);
    }

    /* resume */
    *first_step = 0;
    r->epoch = 1;
    r->best = NAN;
    char path[4096];
    if (strchr(o->restore_file, '/'))
        snprintf(path, sizeof(path), "%s", o->restore_file);
    else if (ckpt_path(r, o->restore_file, path, sizeof(path)) != 0)
        return hg_kerr(err, errlen, "--restore-file too long");
    /* rank 0 reads the checkpoint and hands it to the others */
    struct resume_meta meta;
    memset(&meta, 0, sizeof(meta));
    /* a file named on purpose must exist: never a silent fresh start */
    if (r->rank == 0 && access(path, F_OK) != 0 &&
        strcmp(o->restore_file, "checkpoint_last.h5") != 0)
        return hg_kerr(err, errlen, "--restore-file %s: %s", path, strerror(errno));
    if (r->rank == 0 && access(path, F_OK) == 0) {
        struct hg_ckpt_meta m;
        if (hg_ckpt_load(path, hg_ctl_graph(r->ctl), hg_ctl_exec(r->ctl),
                         o->reset_optimizer, &m, err, errlen) != 0) {
            hg_ckpt_meta_free(&m);
            other_task(r, path, err, errlen);
            return -1;
        }
        if (!m.checksummed)
            fprintf(stderr, "hgtrain: warning: %s is a version 1 checkpoint (no "
                    "checksums): loaded unverified\n", path);
        r->num_updates = (uint64_t)m.num_updates;
        r->best = o->reset_meters ? NAN : m.best_metric;
        if (m.checksummed && (strcmp(m.metric_name, o->best_checkpoint_metric) != 0 ||
                              m.maximize != o->maximize_best_checkpoint_metric))
            r->best = NAN; /* another metric: not comparable */
        if (!o->reset_meters) { /* wall clocks continue where they stopped */
            r->train_wall = m.train_wall;
            r->t_start -= m.wall;
        }
        if (!o->reset_dataloader) {
            if (m.iter.step > 0 && m.iter.data_n > 0 &&
                (m.iter.data_n != r->train.n || m.iter.data_hash != r->data_hash)) {
                hg_kerr(err, errlen, "%s was saved in the middle of epoch %llu (step %lld) "
                        "of training data with %lld samples (hash %016llx), but --data %s "
                        "has %lld (hash %016llx): the epoch cannot go on with other data; "
                        "train on the data it was saved with, or give --reset-dataloader "
                        "to start the epoch afresh", path, (unsigned long long)m.iter.epoch,
                        (long long)m.iter.step, (long long)m.iter.data_n,
                        (unsigned long long)m.iter.data_hash, o->data, (long long)r->train.n,
                        (unsigned long long)r->data_hash);
                hg_ckpt_meta_free(&m);
                return -1;
            }
            r->epoch = (int64_t)m.iter.epoch;
            *first_step = m.iter.step;
            if (m.iter.nsegs > 0 && m.iter.step > 0) { /* the epoch's segments */
                r->segs = (int64_t *)m.iter.segs;
                r->nsegs = m.iter.nsegs;
                m.iter.segs = NULL;
                m.iter.nsegs = 0;
            }
        }
        if (o->reset_lr_scheduler)
            r->num_updates = 0;
        hg_ckpt_meta_free(&m);
        meta = (struct resume_meta){.loaded = 1, .num_updates = (int64_t)r->num_updates,
                              .epoch = r->epoch, .first_step = *first_step,
                              .nsegs = r->nsegs,
                              .best = r->best, .train_wall = r->train_wall,
                              .wall = hg_now() - r->t_start};
        char line[4300];
        snprintf(line, sizeof(line), "| loaded %s: epoch %lld, step %lld, %llu updates\n",
                 path, (long long)r->epoch, (long long)*first_step,
                 (unsigned long long)r->num_updates);
        logf_line(r, line, NULL);
    }
    if (r->comm) {
        /* the initial (or loaded) parameters and state of rank 0 everywhere */
        if (hg_comm_broadcast(r->comm, &meta, sizeof(meta), 0, err, errlen) != 0 ||
            hg_ctl_broadcast_params(r->ctl, err, errlen) != 0)
            return -1;
        if (meta.loaded && r->rank != 0) {
            r->num_updates = (uint64_t)meta.num_updates;
            r->epoch = meta.epoch;
            *first_step = meta.first_step;
            r->best = meta.best;
            r->train_wall = meta.train_wall;
            r->t_start = hg_now() - meta.wall;
            r->nsegs = meta.nsegs;
            if (r->nsegs > 0 && !(r->segs = malloc((size_t)r->nsegs * sizeof(int64_t))))
                return hg_kerr(err, errlen, "rank %d: out of memory", r->rank);
        }
        if (meta.loaded && meta.nsegs > 0 &&
            hg_comm_broadcast(r->comm, r->segs, (size_t)meta.nsegs * sizeof(int64_t), 0,
                              err, errlen) != 0)
            return -1;
    }
    if (r->rank == 0 && prepare_save_dir(r, err, errlen) != 0)
        return -1;
    /* sharded saves are collective: every rank decides the same way
     * whether checkpoint_best.h5 is replaced */
    if (r->comm && o->save_sharded && !o->no_save) {
        double b[2] = {r->best, r->best_locked}; /* rank 0's */
        if (hg_comm_broadcast(r->comm, b, sizeof(b), 0, err, errlen) != 0)
            return -1;
        r->best = b[0];
        r->best_locked = b[1] != 0;
    }
    return 0;
}

/* --plan: SAVE_DIR/strategy.cfg, written to .tmp, fsynced, renamed. */
static int write_plan(const struct run *r, char *err, size_t errlen)
{
    char tmp[4300];
    snprintf(tmp, sizeof tmp, "%s.tmp", r->plan_path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return hg_kerr(err, errlen, "--plan: %s: %s", tmp, strerror(errno));
    size_t len = strlen(r->plan_text), done = 0;
    while (done < len) {
        ssize_t n = write(fd, r->plan_text + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int e = n < 0 ? errno : ENOSPC;
            close(fd);
            unlink(tmp);
            return hg_kerr(err, errlen, "--plan: %s: write failed: %s", tmp, strerror(e));
        }
        done += (size_t)n;
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        int e = errno;
        unlink(tmp);
        return hg_kerr(err, errlen, "--plan: %s: %s", tmp, strerror(e));
    }
    if (rename(tmp, r->plan_path) != 0) {
        int e = errno;
        unlink(tmp);
        return hg_kerr(err, errlen, "--plan: %s: %s", r->plan_path, strerror(e));
    }
    return 0;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* The length --plan prices: over the batches of `batch` samples sorted by
 * cost (the epoch plan batches samples of like length, each padded to its
 * own longest), the root mean square of their padded lengths, at most the
 * longest; *mean: their mean.  A step's time grows faster than linearly
 * with the length (attention, small GEMMs of short batches): priced at the
 * mean, translation's steps ran 1.2-1.4x their simulation, at the root
 * mean square 1.04-1.19 (bench/RESULTS.md). */
static int32_t plan_len(const struct split *s, int64_t batch, int32_t *mean)
{
    int32_t *c = malloc((size_t)(s->n ? s->n : 1) * sizeof *c); /* [n] sorted costs */
    *mean = s->max_len;
    if (!c || s->n == 0 || batch < 1) {
        free(c);
        return s->max_len;
    }
    memcpy(c, s->cost, (size_t)s->n * sizeof *c);
    qsort(c, (size_t)s->n, sizeof *c, cmp_i32);
    double sum = 0, sq = 0;
    int64_t nb = 0;
    for (int64_t i = 0; i < s->n; i += batch, nb++) {
        double l = c[i + batch - 1 < s->n ? i + batch - 1 : s->n - 1];
        sum += l;
        sq += l * l;
    }
    free(c);
    int32_t m = (int32_t)(sum / (double)nb + 0.999);
    int32_t r = (int32_t)(sqrt(sq / (double)nb) + 0.999);
    *mean = m < 1 ? 1 : m > s->max_len ? s->max_len : m;
    return r < 1 ? 1 : r > s->max_len ? s->max_len : r;
}

/* --plan, in the launcher before the fork: the task's training graph for
 * the global batch and the batches' padded lengths' root mean square
 * (plan_len), planned on
 * --cluster-file; hgplan's table goes to r->plan_table (rank 0 logs it),
 * the strategy's text to r->plan_text (every forked rank inherits both). */
static int plan_before_fork(struct run *r, int nccl, char *err, size_t errlen)
{
    struct hg_opts *o = &r->o;
    if (!o->data)
        return hg_kerr(err, errlen, "--data is required");
    int n = o->no_save ? snprintf(r->plan_path, sizeof r->plan_path, "(--plan %s)", o->plan)
                       : snprintf(r->plan_path, sizeof r->plan_path, "%s/strategy.cfg",
                                  o->save_dir);
    if (n < 0 || n >= (int)sizeof r->plan_path)
        return hg_kerr(err, errlen, "--save-dir too long");
    void *ts = NULL;
    struct split tr;
    struct hg_ctl_cfg oc;
    memset(&tr, 0, sizeof tr);
    memset(&oc, 0, sizeof oc);
    struct hg_task_args ta = {.values = (const char *const *)o->task_vals_, .arch = o->arch};
    int rc = -1;
    if (r->task->setup && r->task->setup(&ts, o->data, &ta, err, errlen) != 0)
        return -1;
    if (split_open(&tr, r->task, ts, o->data, "train", err, errlen) == 0 &&
        optimizer(o, &oc, err, errlen) == 0) {
        struct hg_plan_opts po = {.mcmc = strcmp(o->plan, "mcmc") == 0,
                                  .budget_s = o->plan_budget,
                                  .margin = o->plan_margin / 100,
                                  .max_iters = (long)o->plan_iters,
                                  .groups = (int)o->plan_groups,
                                  .seed = (uint64_t)o->seed,
                                  /* model parallelism and split batches
                                   * run one micro-batch per update, over
                                   * backends of host memory so far */
                                  .executable = HG_EXEC_DP | (nccl ? HG_EXEC_NOPS : 0) |
                                                (!nccl && o->update_freq == 1
                                                     ? HG_EXEC_MP | (o->plan_split
                                                                         ? HG_EXEC_SPLIT
                                                                         : 0)
                                                     : 0)};
        size_t len = 0;
        FILE *t = open_memstream(&r->plan_table, &len);
        if (!t) {
            hg_kerr(err, errlen, "out of memory");
        } else {
            int32_t mean, len = plan_len(&tr, o->max_sentences, &mean);
            fprintf(t, "| --plan %s on --cluster-file %s, global batch %lld, length %d (the "
                    "batches' padded lengths' root mean square; mean %d, longest %d), %s%s:\n",
                    o->plan, o->cluster_file, (long long)o->max_sentences, (int)len,
                    (int)mean, (int)tr.max_len,
                    o->plan_profile ? "measured prices from --plan-profile "
                                    : "roofline prices",
                    o->plan_profile ? o->plan_profile : "");
            rc = hg_strat_search(&r->plan_text, t, &po, o->cluster_file, o->plan_profile,
                                 r->task, ts, o->max_sentences, len, oc.optim,
                                 &oc.hyper, err, errlen);
            fprintf(t, "| --plan %s: the strategy%s%s\n", o->plan,
                    o->no_save ? " (not written: --no-save)" : " goes to ",
                    o->no_save ? "" : r->plan_path);
            if (fclose(t) != 0 && rc == 0)
                rc = hg_kerr(err, errlen, "out of memory");
        }
    }
    if (tr.ds)
        split_close(&tr);
    if (r->task->teardown && ts)
        r->task->teardown(ts);
    return rc;
}

/* Rank 0: --save-dir made, locked, cleaned of interrupted saves, and
 * checkpoint_best.h5's metric read. */
static int prepare_save_dir(struct run *r, char *err, size_t errlen)
{
    const struct hg_opts *o = &r->o;
    if (!o->no_save && mkdir_p(o->save_dir) != 0)
        return hg_kerr(err, errlen, "--save-dir %s: %s", o->save_dir, strerror(errno));
    if (!o->no_save && access(o->save_dir, W_OK) != 0)
        return hg_kerr(err, errlen, "--save-dir %s: not writable", o->save_dir);
    /* the lock first: another job's .tmp files are not stale */
    if (!o->no_save && lock_save_dir(r, err, errlen) != 0)
        return -1;
    if (!o->no_save)
        remove_stale_tmp(r);
    if (!o->no_save && r->plan_text && write_plan(r, err, errlen) != 0)
        return -1;
    best_from_disk(r);
    return 0;
}

/* --cluster-file: the capacities of its devices, in rank order, become
 * --rank-capacity unless that is given.  world < 0: not known before
 * MPI_Init (setup() then checks the count against the real world). */
/* --max-restarts needs a launcher on the only node and no plan bound to
 * the devices */
static int restarts_possible(const struct hg_opts *o, const struct hg_launch *L, char *err,
                            size_t errlen)
{
    if (o->max_restarts == 0)
        return 0;
    if (L->world < 2 || L->world != L->nlocal || L->backend == HG_BK_MPI)
        return hg_kerr(err, errlen, "--max-restarts restarts the workers of a job on one "
                       "node (--devices cpu:N or several GPUs); a job of one rank, of "
                       "several nodes or under mpirun is restarted by its scheduler with "
                       "the same command (it resumes from checkpoint_last.h5; "
                       "docs/distributed.md)");
    if (o->strategy || o->plan)
        return hg_kerr(err, errlen, "--max-restarts with --%s %s: the strategy is "
                       "planned for these devices, and a restart drops one",
                       o->strategy ? "strategy" : "plan", o->strategy ? o->strategy : o->plan);
    return 0;
}

static int cluster_capacities(struct hg_opts *o, int world, char *err, size_t errlen)
{
    if (!o->cluster_file)
        return 0;
    struct hg_cluster *c;
    if (hg_cluster_load(&c, o->cluster_file, err, errlen) != 0)
        return -1;
    int rc = 0;
    if (world > 0 && c->ndev != world) {
        rc = hg_kerr(err, errlen, "--cluster-file %s describes %d devices, but the job "
                     "has %d ranks (one rank per device)", o->cluster_file, c->ndev, world);
    } else if (o->rank_capacity.n == 0 && !o->strategy && !o->plan) {
        double *cap = malloc((size_t)c->ndev * sizeof(double));
        if (!cap)
            rc = hg_kerr(err, errlen, "out of memory");
        else if (hg_cluster_rank_capacities(c, cap, err, errlen) != 0) {
            free(cap);
            rc = -1;
        } else {
            o->rank_capacity.v = cap;
            o->rank_capacity.n = c->ndev;
        }
    }
    hg_cluster_free(c);
    return rc;
}

/* --arch among a built-in task's choices ("a|b|c"; "": it has none) */
static int check_arch(const char *task, const char *archs, const char *arch, char *err,
                      size_t errlen)
{
    if (!*archs)
        return hg_kerr(err, errlen, "--arch %s: task %s has no --arch (its options set the "
                       "model)", arch, task);
    char buf[256], *save = NULL;
    const char *names[32];
    int n = 0;
    snprintf(buf, sizeof(buf), "%s", archs);
    for (char *t = strtok_r(buf, "|", &save); t && n < 31; t = strtok_r(NULL, "|", &save)) {
        if (strcmp(t, arch) == 0)
            return 0;
        names[n++] = t;
    }
    names[n] = NULL;
    char hint[128];
    return hg_kerr(err, errlen, "--arch %s: not an architecture of task %s%s (choices: %s)",
                   arch, task, hg_suggest_text(arch, names, "", hint, sizeof(hint)), archs);
}

/* `hgtrain merge-checkpoint SHARDED.h5 OUT.h5`: a sharded checkpoint
 * (--save-sharded) as one ordinary file, for h5py and export-pytorch. */
static int merge_main(int argc, char **argv)
{
    static const char usage[] =
        "usage: hgtrain merge-checkpoint SHARDED.h5 OUT.h5\n"
        "  writes the checkpoint SHARDED.h5 and its shard files (--save-sharded),\n"
        "  every CRC verified, as one ordinary checkpoint OUT.h5\n";
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(usage, stdout);
        return 0;
    }
    if (argc != 3 || argv[1][0] == '-' || argv[2][0] == '-') {
        fputs(usage, stderr);
        return 2;
    }
    char err[ERRLEN];
    if (hg_ckpt_merge(argv[1], argv[2], err, sizeof(err)) != 0) {
        fprintf(stderr, "hgtrain merge-checkpoint: %s\n", err);
        return 1;
    }
    printf("| merged %s into %s\n", argv[1], argv[2]);
    return 0;
}

/* --export-graph: rank 0's train plan's graph as JSON (hgplan
 * --export-graph's format; '-': standard output), the plans' batch and
 * length logged (tests/graph_recipe.sh compares it with hgplan's). */
static int export_graph(struct run *r, char *err, size_t errlen)
{
    const char *path = r->o.export_graph;
    if (r->rank != 0)
        return 0;
    int std = strcmp(path, "-") == 0;
    FILE *f = std ? stdout : fopen(path, "w");
    if (!f)
        return hg_kerr(err, errlen, "--export-graph %s: %s", path, strerror(errno));
    const struct hg_graph *g = hg_ctl_graph(r->ctl);
    int w = hg_graph_export_json(g, r->task->name, r->plan_batch, f);
    if ((!std && fclose(f) != 0) || w != 0)
        return hg_kerr(err, errlen, "--export-graph %s: write failed", path);
    char line[4200];
    snprintf(line, sizeof line, "| wrote %s: the train graph, %d ops (batch %lld, length "
             "%lld)\n", path, hg_graph_n_nodes(g), (long long)r->plan_batch,
             (long long)r->plan_len);
    logf_line(r, line, NULL);
    return 0;
}

int main(int argc, char **argv)
{
    char err[ERRLEN] = "";
    if (argc > 1 && strcmp(argv[1], "merge-checkpoint") == 0)
        return merge_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "generate") == 0)
        return hg_generate_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "interactive") == 0)
        return hg_interactive_main(argc - 1, argv + 1);
    if (argc == 1) { /* the built-in default job */
        argv = (char **)default_job;
        for (argc = 0; default_job[argc]; argc++)
            ;
    }
    if (argc > 1 && strcmp(argv[1], "--version") == 0) {
        hg_print_version("hgtrain");
        return 0;
    }
    if (argc > 1 && argv[1][0] && argv[1][0] != '-') { /* a mistyped command? */
        static const char *const cmds[] = {"generate", "interactive", "merge-checkpoint", NULL};
        char hint[96];
        fprintf(stderr, "hgtrain: unknown command '%s'%s (commands: generate, interactive, "
                "merge-checkpoint; "
                "training takes options only: hgtrain --help)\n", argv[1],
                hg_suggest_text(argv[1], cmds, "", hint, sizeof(hint)));
        return 2;
    }
    struct run r;
    memset(&r, 0, sizeof(r));
    r.patience_best = NAN;
    r.lock_fd = -1;
    const char *plugin = NULL;
    const char *tname = hg_opts_peek_task(argc, argv, &plugin);
    if (plugin) {
        r.task = hg_task_load_plugin(plugin, err, sizeof(err));
        if (!r.task) {
            fprintf(stderr, "hgtrain: %s\n", err);
            return 2;
        }
    } else if (tname) {
        r.task = hg_task_find(tname);
        if (!r.task) {
            fprintf(stderr, "hgtrain: --task %s: unknown task (hgtrain --list-tasks)\n",
                    tname);
            return 2;
        }
    }
    if (hg_opts_parse(&r.o, argc, argv, r.task ? r.task->options : NULL, NULL, err,
                      sizeof(err)) != 0) {
        fprintf(stderr, "hgtrain: %s\n", err);
        hg_opts_free(&r.o);
        return 2;
    }
    if (r.o.version) {
        hg_print_version("hgtrain");
        hg_opts_free(&r.o);
        return 0;
    }
    const char *archs = r.task ? hg_task_archs(r.task) : NULL;
    if (r.o.help) {
        hg_opts_help(stdout, r.task ? r.task->options : NULL, r.task ? r.task->name : NULL);
        if (archs)
            printf("\n--arch of task %s: %s\n", r.task->name,
                   *archs ? archs : "none (its options set the model)");
        hg_opts_free(&r.o);
        return 0;
    }
    if (archs && r.o.arch && check_arch(r.task->name, archs, r.o.arch, err, sizeof(err)) != 0) {
        fprintf(stderr, "hgtrain: %s\n", err);
        hg_opts_free(&r.o);
        return 2;
    }
    if (r.o.list_tasks) {
        for (int i = 0; hg_task_registry[i]; i++)
            printf("%-14s %s\n", hg_task_registry[i]->name, hg_task_registry[i]->help);
        hg_opts_free(&r.o);
        return 0;
    }
    if (!r.task) {
        fprintf(stderr, "hgtrain: --task is required (hgtrain --list-tasks)\n");
        hg_opts_free(&r.o);
        return 2;
    }
    /* the job: fork this node's workers before anything starts a thread;
     * the launcher starts it again on the survivors (--max-restarts) */
    struct hg_launch L;
    int local = 0;
    for (int attempt = 1;; attempt++) {
        if (hg_launch_plan(&L, &r.o, err, sizeof(err)) != 0 ||
            restarts_possible(&r.o, &L, err, sizeof(err)) != 0 ||
            cluster_capacities(&r.o, L.world, err, sizeof(err)) != 0) {
            fprintf(stderr, "hgtrain: %s\n", err);
            hg_opts_free(&r.o);
            return 2;
        }
        /* tasks' --attention auto: the fused op on the CPU, the unfused
         * chain in a GPU run (every rank of a mix: one graph); before
         * --plan builds its graph */
        hg_graph_default_fused_attention(!L.cuda);
        if (r.o.plan) {
            /* planned once, here, so that every rank runs the same strategy */
            if (L.nlocal != L.world) {
                fprintf(stderr, "hgtrain: --plan %s plans in the launcher before it forks "
                        "the job's ranks, but this launch (%s) starts %d of the %d ranks "
                        "here; plan with hgplan --search %s --out FILE and give every rank "
                        "--strategy FILE\n", r.o.plan, L.how, L.nlocal, L.world, r.o.plan);
                hg_opts_free(&r.o);
                return 2;
            }
            if (plan_before_fork(&r, L.backend == HG_BK_NCCL, err, sizeof(err)) != 0) {
                fprintf(stderr, "hgtrain: %s\n", err);
                free(r.plan_text);
                free(r.plan_table);
                hg_opts_free(&r.o);
                return 1;
            }
        }
        if (hg_launch_start(&L, &local, err, sizeof(err)) != 0) {
            local = -2; /* an error, in err */
            break;
        }
        if (local >= 0)
            break;
        /* the launcher: its workers have ended */
        if (hg_launch_restart(&L, &r.o, attempt, err, sizeof(err)) != 1) {
            if (r.o.max_restarts > 0 && L.status != 0)
                fprintf(stderr, "hgtrain: not restarting: %s\n", err);
            free(r.plan_text);
            free(r.plan_table);
            hg_opts_free(&r.o);
            exit(L.status); /* what the launcher holds beyond this is on main's frame */
        }
    }
    if (local < 0 || hg_launch_connect(&L, local, &r.comm, err, sizeof(err)) != 0) {
        fprintf(stderr, "hgtrain: rank %d: %s\n", L.rank0 + (local < 0 ? 0 : local), err);
        hg_comm_abort(r.comm);
        hg_launch_finish(&L, NULL);
        free(r.plan_text);
        free(r.plan_table);
        hg_opts_free(&r.o);
        return 1;
    }
    r.cuda_device = L.cuda ? L.dev[local] : -1;
    r.rank = r.comm ? hg_comm_rank(r.comm) : 0;
    r.data_rank = r.rank;
    r.world = r.comm ? hg_comm_world(r.comm) : 1;
    r.json = strcmp(r.o.log_format, "json") == 0;
    r.tty = strcmp(r.o.log_format, "tqdm") == 0 && isatty(2) && r.rank == 0;
    if (r.rank == 0 && r.o.log_file && !(r.log = fopen(r.o.log_file, "a"))) {
        fprintf(stderr, "hgtrain: --log-file %s: %s\n", r.o.log_file, strerror(errno));
        hg_comm_abort(r.comm);
        hg_launch_finish(&L, r.comm);
        hg_opts_free(&r.o);
        return 1;
    }
    if (hg_kernels_init(err, sizeof(err)) != 0) {
        fprintf(stderr, "hgtrain: %s\n", err);
        hg_comm_abort(r.comm);
        hg_launch_finish(&L, r.comm);
        return 1;
    }
    if (r.o.threads > 0) {
        hg_kernels_set_threads((int)r.o.threads);
    } else if (L.nlocal > 1) { /* the node's cores shared among its workers */
        cpu_set_t cs;
        int cores = sched_getaffinity(0, sizeof(cs), &cs) == 0 ? CPU_COUNT(&cs)
                                                               : (int)sysconf(_SC_NPROCESSORS_ONLN);
        hg_kernels_set_threads(cores / L.nlocal > 1 ? cores / L.nlocal : 1);
    }
    r.opts_text = hg_opts_to_string(&r.o);
    r.t_start = hg_now();
    /* --plan's table, line by line: JSON records under --log-format json */
    for (char *p = r.plan_table, *e; p && *p; p = e + 1) {
        if (!(e = strchr(p, '\n')))
            e = p + strlen(p) - 1;
        char c = e[1];
        e[1] = 0;
        logf_line(&r, p, NULL);
        e[1] = c;
        if (!c)
            break;
    }

    int64_t first_step = 0;
    int rc = setup(&r, &first_step, err, sizeof(err));
    if (rc == 0 && r.o.export_graph) {
        rc = export_graph(&r, err, sizeof err);
    } else if (rc == 0) {
        char line[3072], desc[1024], job[512];
        hg_ctl_describe(r.ctl, desc, sizeof(desc));
        hg_launch_describe(&L, job, sizeof(job));
        snprintf(line, sizeof(line), "| task %s, data %s: %lld train, %lld %s samples\n"
                 "| %s\n| %s\n", r.task->name, r.o.data, (long long)r.train.n,
                 (long long)r.valid.n, r.o.valid_subset, desc, job);
        logf_line(&r, line, NULL);
        if (r.o.cluster_file && !r.o.strategy && !r.o.plan) {
            int k = snprintf(line, sizeof(line), "| rank capacities (--cluster-file %s):",
                             r.o.cluster_file);
            for (int i = 0; i < r.o.rank_capacity.n && k > 0 && k < (int)sizeof(line) - 32; i++)
                k += snprintf(line + k, sizeof(line) - (size_t)k, "%s%.4g", i ? "," : " ",
                              r.o.rank_capacity.v[i]);
            if (k > 0 && k < (int)sizeof(line) - 2)
                snprintf(line + k, sizeof(line) - (size_t)k, "\n");
            logf_line(&r, line, NULL);
        }
        says_stops = r.rank == 0;
        signal(SIGINT, on_signal);
        signal(SIGTERM, on_signal);
        if (r.o.profile_ops)
            hg_exec_profile(hg_ctl_exec(r.ctl), 1);
        if (r.o.trace)
            hg_exec_trace(hg_ctl_exec(r.ctl), 1);
        r.first_update = r.num_updates;
        r.t_train0 = hg_now();
        rc = train(&r, first_step, err, sizeof(err));
        if (rc == 0 && r.o.profile_ops && r.rank == 0)
            print_profile(&r);
        if (rc == 0 && r.o.trace)
            rc = write_trace(&r, err, sizeof err);
    }
    if (rc < 0) {
        if (r.world > 1)
            fprintf(stderr, "hgtrain: rank %d: %s\n", r.rank, err);
        else
            fprintf(stderr, "hgtrain: %s\n", err);
        hg_comm_abort(r.comm); /* the other ranks stop at once, naming us */
    } else if (rc == 0) {
        char line[256];
        snprintf(line, sizeof(line), "| done: %llu updates in %.1f s\n",
                 (unsigned long long)r.num_updates, hg_now() - r.t_start);
        logf_line(&r, line, NULL);
    }
    hg_launch_finish(&L, rc < 0 ? NULL : r.comm);
    if (rc < 0)
        hg_comm_free(r.comm);
    free(r.rank_tok);
    free(r.rank_sent);
    free(r.segs);
    free(r.rank_t);
    free(r.cap);
    free(r.rb_cost);
    free(r.rb_time);
    if (r.trace)
        fclose(r.trace);
    hg_ctl_strategy_free(&r.strat);
    free(r.plan_text);
    free(r.plan_table);
    hg_ctl_free(r.ctl);
    split_close(&r.train);
    if (r.valid.ds)
        split_close(&r.valid);
    if (r.task && r.task->teardown && r.ts)
        r.task->teardown(r.ts);
    if (r.log)
        fclose(r.log);
    if (r.lock_fd >= 0)
        close(r.lock_fd); /* the lock goes with it */
    free(r.opts_text);
    hg_opts_free(&r.o);
    /* a forked worker tells its launcher that the stop was a clean one */
    return rc == 0 ? 0 : rc == 1 && L.forked ? HG_LAUNCH_EXIT_SIGNAL : 1;
}
