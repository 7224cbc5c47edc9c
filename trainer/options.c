/* options.c - hgtrain's option table and the parser, config reader, help
 * and text form it drives (see options.h). Adding an option: a field in
 * struct hg_opts and a row in hg_opt_specs[]; parsing, -c files, --help and
 * hg_opts_to_string follow from the row. Checks beyond a row's range and
 * choices go in validate(). */
#define _POSIX_C_SOURCE 200809L
#include "trainer/options.h"

#include "base/hg_base.h"

#include <errno.h>
#include <libconfig.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OFF(f) offsetof(struct hg_opts, f)
#define G_GEN HG_GROUP_GENERAL
#define G_DATA HG_GROUP_DATASET
#define G_OPT HG_GROUP_OPTIMIZATION
#define G_CKPT HG_GROUP_CHECKPOINT
#define G_DIST HG_GROUP_DISTRIBUTED

const struct hg_opt_spec hg_opt_specs[] = {
    /* ------------------------------------------------------------ general */
    {.name = "task", .type = HG_OPT_STRING, .group = G_GEN, .offset = OFF(task),
     .metavar = "NAME", .help = "the task to train (see --list-tasks)"},
    {.name = "task-plugin", .type = HG_OPT_STRING, .group = G_GEN,
     .offset = OFF(task_plugin), .metavar = "PATH.so",
     .help = "load the task from this shared object (exports hg_task_plugin)"},
    {.name = "arch", .type = HG_OPT_STRING, .group = G_GEN, .offset = OFF(arch),
     .metavar = "NAME", .help = "model architecture (the task's choice)"},
    {.name = "seed", .type = HG_OPT_INT, .group = G_GEN, .offset = OFF(seed),
     .def = "1", .help = "initialisation, shuffling and dropout seed"},
    {.name = "threads", .type = HG_OPT_INT, .group = G_GEN, .offset = OFF(threads),
     .def = "0", .help = "compute threads per process (0: all cores)"},
    {.name = "log-format", .type = HG_OPT_STRING, .group = G_GEN,
     .offset = OFF(log_format), .choices = "none|simple|json|tqdm",
     .help = "progress format (default: tqdm if stderr is a terminal, else simple)"},
    {.name = "log-interval", .type = HG_OPT_INT, .group = G_GEN,
     .offset = OFF(log_interval), .def = "100", .min = 1,
     .help = "updates between progress lines"},
    {.name = "log-file", .type = HG_OPT_STRING, .group = G_GEN,
     .offset = OFF(log_file), .metavar = "PATH",
     .help = "also write the progress lines to this file"},
    {.name = "rank-capacity", .type = HG_OPT_LIST, .group = G_GEN,
     .offset = OFF(rank_capacity), .metavar = "C0,C1,...",
     .help = "relative speed of each rank; batches are split in proportion "
             "(default: equal)"},
    {.name = "list-tasks", .type = HG_OPT_FLAG, .group = G_GEN,
     .offset = OFF(list_tasks), .transient = 1,
     .help = "list the built-in tasks and exit"},
    {.name = "help", .short_name = 'h', .type = HG_OPT_FLAG, .group = G_GEN,
     .offset = OFF(help), .transient = 1,
     .help = "show this help (with --task: the task's options too) and exit"},
    {.name = "config", .short_name = 'c', .type = HG_OPT_STRING, .group = G_GEN,
     .offset = OFF(config), .transient = 1, .metavar = "FILE",
     .help = "read options from a libconfig file (keys: option names, '-' or "
             "'_'); the command line overrides it"},
    /* ------------------------------------------------------------ dataset */
    {.name = "data", .type = HG_OPT_STRING, .group = G_DATA, .offset = OFF(data),
     .metavar = "DIR", .help = "the preprocessed data (hgpreprocess output)"},
    {.name = "max-tokens", .type = HG_OPT_INT, .group = G_DATA,
     .offset = OFF(max_tokens), .def = "0",
     .help = "batch cost limit per rank and step (0: none; this or "
             "--max-sentences is required)"},
    {.name = "max-sentences", .alias = "batch-size", .type = HG_OPT_INT,
     .group = G_DATA, .offset = OFF(max_sentences), .def = "0",
     .help = "samples per batch per rank (0: no limit)"},
    {.name = "required-batch-size-multiple", .type = HG_OPT_INT, .group = G_DATA,
     .offset = OFF(required_batch_size_multiple), .def = "8", .min = 1,
     .help = "batch sizes are a multiple of this (when larger)"},
    {.name = "valid-subset", .type = HG_OPT_STRING, .group = G_DATA,
     .offset = OFF(valid_subset), .def = "valid", .metavar = "SPLIT",
     .help = "the split to validate on"},
    {.name = "validate-interval", .type = HG_OPT_INT, .group = G_DATA,
     .offset = OFF(validate_interval), .def = "1",
     .help = "validate every N epochs (0: never)"},
    {.name = "validate-interval-updates", .type = HG_OPT_INT, .group = G_DATA,
     .offset = OFF(validate_interval_updates), .def = "0",
     .help = "also validate every N updates (0: off)"},
    /* ------------------------------------------------------- optimization */
    {.name = "optimizer", .type = HG_OPT_STRING, .group = G_OPT,
     .offset = OFF(optimizer), .def = "sgd", .choices = "sgd|adam|adamw|adadelta",
     .help = "the optimizer"},
    {.name = "lr", .type = HG_OPT_REAL, .group = G_OPT, .offset = OFF(lr),
     .def = "0.01", .help = "(peak) learning rate, > 0"},
    {.name = "min-lr", .type = HG_OPT_REAL, .group = G_OPT, .offset = OFF(min_lr),
     .def = "0", .help = "cosine floor; training stops when the lr falls to it"},
    {.name = "adam-betas", .type = HG_OPT_LIST, .group = G_OPT,
     .offset = OFF(adam_betas), .def = "0.9,0.999", .min_count = 2,
     .max_count = 2, .metavar = "B1,B2",
     .help = "Adam betas, each in [0,1): \"0.9,0.98\" or \"(0.9, 0.98)\""},
    {.name = "adam-eps", .type = HG_OPT_REAL, .group = G_OPT,
     .offset = OFF(adam_eps), .def = "1e-08", .help = "Adam epsilon"},
    {.name = "weight-decay", .type = HG_OPT_REAL, .group = G_OPT,
     .offset = OFF(weight_decay), .def = "0", .help = "weight decay"},
    {.name = "momentum", .type = HG_OPT_REAL, .group = G_OPT,
     .offset = OFF(momentum), .def = "0", .max = 1, .help = "SGD momentum"},
    {.name = "nesterov", .type = HG_OPT_FLAG, .group = G_OPT,
     .offset = OFF(nesterov), .help = "SGD with Nesterov momentum"},
    {.name = "bf16", .type = HG_OPT_FLAG, .group = G_OPT, .offset = OFF(bf16),
     .help = "GPU: GEMMs on bf16 copies of their operands (tensor cores), fp32 "
             "accumulation, fp32 master weights and everything else"},
    {.name = "fp16", .type = HG_OPT_FLAG, .group = G_OPT, .offset = OFF(fp16),
     .help = "GPU: as --bf16 with fp16 operands and dynamic loss scaling (an "
             "overflow skips the update and halves the scale)"},
    {.name = "fp16-init-scale", .type = HG_OPT_REAL, .group = G_OPT,
     .offset = OFF(fp16_init_scale), .def = "128", .help = "--fp16: first loss scale"},
    {.name = "fp16-scale-window", .type = HG_OPT_INT, .group = G_OPT,
     .offset = OFF(fp16_scale_window), .def = "0",
     .help = "--fp16: double the scale after N updates without overflow "
             "(0: 2^14 / (world size x update-freq))"},
    {.name = "min-loss-scale", .type = HG_OPT_REAL, .group = G_OPT,
     .offset = OFF(min_loss_scale), .def = "0.0001",
     .help = "--fp16: stop when the scale would go below this"},
    {.name = "clip-norm", .type = HG_OPT_REAL, .group = G_OPT,
     .offset = OFF(clip_norm), .def = "0",
     .help = "clip the gradient to this global L2 norm (0: off)"},
    {.name = "update-freq", .type = HG_OPT_INT, .group = G_OPT,
     .offset = OFF(update_freq), .def = "1", .min = 1,
     .help = "accumulate the gradients of N batches per update"},
    {.name = "lr-scheduler", .type = HG_OPT_STRING, .group = G_OPT,
     .offset = OFF(lr_scheduler), .def = "fixed",
     .choices = "fixed|inverse_sqrt|polynomial_decay|cosine",
     .help = "learning-rate schedule"},
    {.name = "warmup-updates", .type = HG_OPT_INT, .group = G_OPT,
     .offset = OFF(warmup_updates), .def = "0",
     .help = "linear warmup over the first N updates"},
    {.name = "warmup-init-lr", .type = HG_OPT_REAL, .group = G_OPT,
     .offset = OFF(warmup_init_lr), .def = "0",
     .help = "initial lr of the warmup (inverse_sqrt)"},
    {.name = "end-learning-rate", .type = HG_OPT_REAL, .group = G_OPT,
     .offset = OFF(end_learning_rate), .def = "0",
     .help = "final lr (polynomial_decay)"},
    {.name = "power", .type = HG_OPT_REAL, .group = G_OPT, .offset = OFF(power),
     .def = "1", .help = "decay power (polynomial_decay)"},
    {.name = "total-num-update", .type = HG_OPT_INT, .group = G_OPT,
     .offset = OFF(total_num_update), .def = "0",
     .help = "updates the schedule spans (polynomial_decay, cosine)"},
    {.name = "max-epoch", .type = HG_OPT_INT, .group = G_OPT,
     .offset = OFF(max_epoch), .def = "0",
     .help = "stop after N epochs (0: no limit)"},
    {.name = "max-update", .type = HG_OPT_INT, .group = G_OPT,
     .offset = OFF(max_update), .def = "0",
     .help = "stop after N updates (0: no limit)"},
    {.name = "stop-time-hours", .type = HG_OPT_REAL, .group = G_OPT,
     .offset = OFF(stop_time_hours), .def = "0", .metavar = "H",
     .help = "stop after H hours of wall-clock time, resumes included (0: no limit)"},
    /* --------------------------------------------------------- checkpoint */
    {.name = "save-dir", .type = HG_OPT_STRING, .group = G_CKPT,
     .offset = OFF(save_dir), .def = "checkpoints", .metavar = "DIR",
     .help = "where checkpoints are written"},
    {.name = "restore-file", .type = HG_OPT_STRING, .group = G_CKPT,
     .offset = OFF(restore_file), .def = "checkpoint_last.h5", .metavar = "FILE",
     .help = "checkpoint to resume from (relative: in --save-dir); the default may be "
             "absent (a fresh start), a file named here must exist"},
    {.name = "reset-dataloader", .type = HG_OPT_FLAG, .group = G_CKPT,
     .offset = OFF(reset_dataloader),
     .help = "on restore, start the data iterator afresh"},
    {.name = "reset-lr-scheduler", .type = HG_OPT_FLAG, .group = G_CKPT,
     .offset = OFF(reset_lr_scheduler),
     .help = "on restore, do not load the lr scheduler state"},
    {.name = "reset-meters", .type = HG_OPT_FLAG, .group = G_CKPT,
     .offset = OFF(reset_meters), .help = "on restore, reset the meters"},
    {.name = "reset-optimizer", .type = HG_OPT_FLAG, .group = G_CKPT,
     .offset = OFF(reset_optimizer),
     .help = "on restore, do not load the optimizer state"},
    {.name = "save-interval", .type = HG_OPT_INT, .group = G_CKPT,
     .offset = OFF(save_interval), .def = "1", .min = 1,
     .help = "save a checkpoint every N epochs"},
    {.name = "save-interval-updates", .type = HG_OPT_INT, .group = G_CKPT,
     .offset = OFF(save_interval_updates), .def = "0",
     .help = "also save every N updates (0: off)"},
    {.name = "keep-last-epochs", .type = HG_OPT_INT, .group = G_CKPT,
     .offset = OFF(keep_last_epochs), .def = "-1", .min = -1,
     .help = "keep only the last N epoch checkpoints (-1: all)"},
    {.name = "keep-interval-updates", .type = HG_OPT_INT, .group = G_CKPT,
     .offset = OFF(keep_interval_updates), .def = "-1", .min = -1,
     .help = "keep only the last N update checkpoints (-1: all)"},
    {.name = "profile-ops", .type = HG_OPT_FLAG, .group = G_GEN, .offset = OFF(profile_ops),
     .help = "time every op of the training plan (a GPU waits after each) and "
             "print the op kinds that took the most time at the end"},
    {.name = "no-save", .type = HG_OPT_FLAG, .group = G_CKPT,
     .offset = OFF(no_save), .help = "write no checkpoints"},
    {.name = "no-epoch-checkpoints", .type = HG_OPT_FLAG, .group = G_CKPT,
     .offset = OFF(no_epoch_checkpoints),
     .help = "only checkpoint_last and checkpoint_best"},
    {.name = "best-checkpoint-metric", .type = HG_OPT_STRING, .group = G_CKPT,
     .offset = OFF(best_checkpoint_metric), .def = "loss", .metavar = "METRIC",
     .help = "validation metric that picks checkpoint_best"},
    {.name = "maximize-best-checkpoint-metric", .type = HG_OPT_FLAG,
     .group = G_CKPT, .offset = OFF(maximize_best_checkpoint_metric),
     .help = "larger --best-checkpoint-metric is better"},
    {.name = "patience", .type = HG_OPT_INT, .group = G_CKPT, .offset = OFF(patience),
     .def = "0", .help = "stop when --best-checkpoint-metric has not improved for N "
                         "validations in a row (0: never; counted within a run)"},
    /* -------------------------------------------------------- distributed */
    {.name = "devices", .type = HG_OPT_STRING, .group = G_DIST, .offset = OFF(devices),
     .metavar = "LIST", .transient = 1,
     .help = "this node's workers, one process each: cpu, cpu:N (N forked CPU "
             "workers), cuda:0,cuda:1 or cuda:N"},
    {.name = "distributed-gpus", .type = HG_OPT_INT, .group = G_DIST,
     .offset = OFF(distributed_gpus), .def = "0", .transient = 1,
     .help = "GPUs on this node, one worker each (--devices cuda:N)"},
    {.name = "distributed-world-size", .type = HG_OPT_INT, .group = G_DIST,
     .offset = OFF(distributed_world_size), .def = "0", .transient = 1,
     .help = "ranks in the whole job (0: this node's workers; under Slurm "
             "or mpirun: from the environment)"},
    {.name = "distributed-rank", .type = HG_OPT_INT, .group = G_DIST,
     .offset = OFF(distributed_rank), .def = "0", .transient = 1,
     .help = "global rank of this node's first worker"},
    {.name = "distributed-init-method", .type = HG_OPT_STRING, .group = G_DIST,
     .offset = OFF(distributed_init_method), .metavar = "URL", .transient = 1,
     .help = "where the ranks meet: tcp://HOST:PORT (rank 0's host serves "
             "the store there) or file:///shared/path (rank 0 writes its "
             "address there)"},
    {.name = "bucket-cap-mb", .type = HG_OPT_REAL, .group = G_DIST,
     .offset = OFF(bucket_cap_mb), .def = "25", .metavar = "MB",
     .help = "all-reduce gradients in buckets of MB MiB from the backward (nccl: "
             "overlapped with it; 0: all at once after it)"},
    {.name = "distributed-backend", .type = HG_OPT_STRING, .group = G_DIST,
     .offset = OFF(distributed_backend), .def = "auto", .transient = 1,
     .choices = "auto|shm|tcp|nccl|mpi",
     .help = "collectives: shm (one node), tcp, nccl (GPUs), mpi (under "
             "mpirun); auto: shm on one node, mpi under mpirun, else tcp; "
             "named with one rank, its collectives run anyway"},
    {.name = "distributed-port", .type = HG_OPT_INT, .group = G_DIST,
     .offset = OFF(distributed_port), .def = "0", .min = 0, .max = 65535,
     .transient = 1,
     .help = "Slurm: the store's port on the first node (0: 20000 + job id "
             "mod 20000)"},
    {.name = "distributed-timeout", .type = HG_OPT_REAL, .group = G_DIST,
     .offset = OFF(distributed_timeout), .def = "300", .min = 0.001,
     .transient = 1,
     .help = "seconds a rank waits for its peers before it gives up naming "
             "them"},
    {.name = "distributed-token-file", .type = HG_OPT_STRING, .group = G_DIST,
     .offset = OFF(distributed_token_file), .metavar = "PATH", .transient = 1,
     .help = "the job token that peers present (a 0600 file; the "
             "environment variable HG_JOB_TOKEN wins); made by the launcher "
             "when the job is on one node"},
    {.name = "max-tokens-per-rank", .type = HG_OPT_LIST, .group = G_DIST,
     .offset = OFF(max_tokens_per_rank), .metavar = "T0,T1,...",
     .help = "per-rank --max-tokens (replaces --max-tokens and "
             "--rank-capacity; 0: the rank gets no samples)"},
    {.name = "max-sentences-per-rank", .type = HG_OPT_LIST, .group = G_DIST,
     .offset = OFF(max_sentences_per_rank), .metavar = "S0,S1,...",
     .help = "per-rank --max-sentences (replaces --max-sentences and "
             "--rank-capacity; 0: the rank gets no samples)"},
    {.name = "cluster-file", .type = HG_OPT_STRING, .group = G_DIST,
     .offset = OFF(cluster_file), .metavar = "FILE",
     .help = "a cluster description (docs/planner.md): unless --rank-capacity "
             "is given, each rank's capacity is its device's speed (or peak "
             "FLOP/s); its devices must be as many as the job's ranks"},
};

const int hg_opt_nspecs = (int)(sizeof(hg_opt_specs) / sizeof(hg_opt_specs[0]));

static const char *const group_names[HG_GROUP_COUNT] = {
    "general", "dataset", "optimization", "checkpoint", "distributed"};

/* ---------------------------------------------------------------- helpers */

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

#define FIELD(o, s, T) ((T *)(void *)((char *)(o) + (s)->offset))

static int task_count(const struct hg_task_option *t)
{
    int n = 0;
    while (t && t[n].name)
        n++;
    return n;
}

/* name[0..len) equals s, with '_' in name read as '-'. */
static int name_eq(const char *name, size_t len, const char *s)
{
    if (!s || strlen(s) != len)
        return 0;
    for (size_t i = 0; i < len; i++)
        if ((name[i] == '_' ? '-' : name[i]) != s[i])
            return 0;
    return 1;
}

static const struct hg_opt_spec *find_spec(const char *name, size_t len)
{
    for (int i = 0; i < hg_opt_nspecs; i++)
        if (name_eq(name, len, hg_opt_specs[i].name) ||
            name_eq(name, len, hg_opt_specs[i].alias))
            return &hg_opt_specs[i];
    return NULL;
}

static int find_task_opt(const struct hg_task_option *t, const char *name, size_t len)
{
    for (int i = 0; t && t[i].name; i++)
        if (name_eq(name, len, t[i].name))
            return i;
    return -1;
}

static int parse_i64(const char *s, int64_t *v)
{
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (end == s || *end || errno)
        return -1;
    *v = x;
    return 0;
}

static int parse_real(const char *s, double *v)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    while (end != s && (*end == ' ' || *end == '\t'))
        end++;
    if (end == s || *end || errno == ERANGE || !isfinite(x))
        return -1;
    *v = x;
    return 0;
}

/* "2,1,1", "0.9,0.98", "(0.9, 0.98)", "[0.9, 0.98]". */
static int parse_list(const char *s, struct hg_opts_list *l)
{
    while (*s == ' ')
        s++;
    size_t n = strlen(s);
    while (n && s[n - 1] == ' ')
        n--;
    char *buf = malloc(n + 1);
    if (!buf)
        return -1;
    memcpy(buf, s, n);
    buf[n] = 0;
    char *p = buf;
    if (n >= 2 && ((p[0] == '(' && p[n - 1] == ')') || (p[0] == '[' && p[n - 1] == ']'))) {
        p[n - 1] = 0;
        p++;
    }
    int cap = 1;
    for (char *q = p; *q; q++)
        cap += *q == ',';
    double *v = malloc((size_t)cap * sizeof(*v));
    int cnt = 0, rc = 0;
    if (!v)
        rc = -1;
    for (char *tok = p; rc == 0 && tok;) {
        char *comma = strchr(tok, ',');
        if (comma)
            *comma = 0;
        while (*tok == ' ' || *tok == '\t')
            tok++;
        if (parse_real(tok, &v[cnt]) != 0)
            rc = -1;
        cnt++;
        tok = comma ? comma + 1 : NULL;
    }
    free(buf);
    if (rc != 0) {
        free(v);
        return -1;
    }
    free(l->v);
    l->v = v;
    l->n = cnt;
    return 0;
}

static int set_string(char **dst, const char *v)
{
    char *c = strdup(v);
    if (!c)
        return -1;
    free(*dst);
    *dst = c;
    return 0;
}

static const char *type_word(enum hg_opt_type t)
{
    switch (t) {
    case HG_OPT_INT: return "an integer";
    case HG_OPT_REAL: return "a number";
    case HG_OPT_LIST: return "a list of numbers";
    case HG_OPT_FLAG: return "true or false";
    default: return "a string";
    }
}

/* Stores text (a command-line or default value) into the spec's field;
 * where names the source in the error ("--lr" or "run.cfg:3: key 'lr'"). */
static int set_text(struct hg_opts *o, const struct hg_opt_spec *s, const char *text,
                    const char *where, char *err, size_t errlen)
{
    switch (s->type) {
    case HG_OPT_INT:
        if (parse_i64(text, FIELD(o, s, int64_t)) != 0)
            return fail(err, errlen, "%s: '%s' is not an integer", where, text);
        return 0;
    case HG_OPT_REAL:
        if (parse_real(text, FIELD(o, s, double)) != 0)
            return fail(err, errlen, "%s: '%s' is not a number", where, text);
        return 0;
    case HG_OPT_LIST:
        if (parse_list(text, FIELD(o, s, struct hg_opts_list)) != 0)
            return fail(err, errlen, "%s: '%s' is not a list of numbers "
                        "(e.g. 2,1,1)", where, text);
        return 0;
    case HG_OPT_FLAG:
        *FIELD(o, s, int) = 1;
        return 0;
    case HG_OPT_STRING:
        if (set_string(FIELD(o, s, char *), text) != 0)
            return fail(err, errlen, "%s: out of memory", where);
        return 0;
    }
    return fail(err, errlen, "%s: bad option type", where);
}

static int set_task_value(struct hg_opts *o, int i, const char *text, char *err,
                          size_t errlen)
{
    if (set_string(&o->task_vals_[i], text) != 0)
        return fail(err, errlen, "--%s: out of memory", o->task_opts_[i].name);
    return 0;
}

/* fairseq options with no meaning here, each with what to do instead:
 * refused by name rather than as unknown */
static const struct {
    const char *name, *why;
} not_here[] = {
    {"num-workers", "batches are read by one prefetch thread per rank"},
    {"ddp-backend", "gradients are summed by the comm backend (--distributed-backend)"},
    {"find-unused-parameters", "an unused parameter simply gets a zero gradient"},
    {"user-dir", "load your task with --task-plugin PATH.so"},
    {"dataset-impl", "the data are HDF5 shards written by hgpreprocess"},
    {"tensorboard-logdir", "use --log-file (JSON Lines) and scripts/plot-log"},
    {"wandb-project", "use --log-file (JSON Lines) and scripts/plot-log"},
    {"cpu", "the CPU is the default device (--devices cpu:N)"},
    {"criterion", "the task sets its loss (translation: --label-smoothing)"},
    {"memory-efficient-fp16", "use --fp16"},
    {"distributed-no-spawn", "hgtrain forks one worker per device itself"},
    {"no-progress-bar", "use --log-format simple"},
    {"tokenizer", "hgpreprocess splits at whitespace"},
    {"bpe", "hgpreprocess applies the BPE (--bpe-merges, --bpe-codes)"},
    {NULL, NULL}};

/* word[0..len) spelled with '-' */
static void dashed(const char *word, size_t len, char *out, size_t outlen)
{
    snprintf(out, outlen, "%.*s", (int)len, word);
    for (char *p = out; *p; p++)
        if (*p == '_')
            *p = '-';
}

/* " (did you mean --NAME?)" or "": the option, alias or task option
 * nearest to word[0..len) (prefix "--" or "" for config keys). */
static const char *suggest(const char *word, size_t len, const struct hg_task_option *t,
                           const char *prefix, char *out, size_t outlen)
{
    char w[128];
    dashed(word, len, w, sizeof(w));
    struct hg_suggest sg;
    hg_suggest_init(&sg, w);
    for (int k = 0; k < hg_opt_nspecs; k++) {
        hg_suggest_add(&sg, hg_opt_specs[k].name);
        hg_suggest_add(&sg, hg_opt_specs[k].alias);
    }
    for (int k = 0; t && t[k].name; k++)
        hg_suggest_add(&sg, t[k].name);
    const char *b = hg_suggest_best(&sg);
    out[0] = 0;
    if (b)
        snprintf(out, outlen, " (did you mean %s%s?)", prefix, b);
    return out;
}

/* -1 with err when word[0..len) is a fairseq option refused here */
static int refuse_fairseq(const char *word, size_t len, const char *where, char *err,
                          size_t errlen)
{
    char w[128];
    dashed(word, len, w, sizeof(w));
    for (int k = 0; not_here[k].name; k++)
        if (strcmp(w, not_here[k].name) == 0)
            return fail(err, errlen, "%s%s: a fairseq option that does not apply to hgtrain: "
                        "%s", where, w, not_here[k].why);
    return 0;
}

/* ------------------------------------------------------- command line */

/* One token of the command line: an option of the table (spec), a task
 * option (task >= 0) or, when peeking, an unknown one (both unset). */
struct tok {
    const struct hg_opt_spec *spec;
    int task;
    const char *value; /* NULL for flags */
};

/* Splits argv into tokens. lenient (peek): unknown options are assumed to
 * take a value and no error is reported. Returns the count or -1. */
static int tokenize(int argc, char **argv, const struct hg_task_option *task_opts,
                    int lenient, struct tok *out, char *err, size_t errlen)
{
    int n = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *name, *eq = NULL;
        size_t len;
        struct tok t = {.task = -1};
        char shown[128];
        if (a[0] == '-' && a[1] == '-' && a[2]) {
            name = a + 2;
            eq = strchr(name, '=');
            len = eq ? (size_t)(eq - name) : strlen(name);
            snprintf(shown, sizeof(shown), "--%.*s", (int)len, name);
            /* on the command line, names are spelled with '-' only */
            t.spec = memchr(name, '_', len) ? NULL : find_spec(name, len);
            if (!t.spec && !memchr(name, '_', len))
                t.task = find_task_opt(task_opts, name, len);
        } else if (a[0] == '-' && a[1] && a[1] != '-') {
            name = a + 1;
            len = 1;
            snprintf(shown, sizeof(shown), "-%c", a[1]);
            for (int k = 0; k < hg_opt_nspecs; k++)
                if (hg_opt_specs[k].short_name == a[1])
                    t.spec = &hg_opt_specs[k];
            if (a[2])  /* -cFILE */
                eq = a + 1;
        } else {
            if (lenient)
                continue;
            return fail(err, errlen, "unexpected argument '%s'", a);
        }
        if (!t.spec && t.task < 0 && !lenient) {
            char hint[160];
            if (a[1] == '-' && refuse_fairseq(name, len, "--", err, errlen) != 0)
                return -1;
            return fail(err, errlen, "unknown option '%s'%s (see --help)", shown,
                        a[1] == '-' ? suggest(name, len, task_opts, "--", hint, sizeof(hint))
                                    : "");
        }
        if (!t.spec && t.task >= 0 && task_opts[t.task].flag) {
            /* a task's switch: --name alone is "1"; --name=V gives V */
            t.value = eq ? eq + 1 : "1";
        } else if (t.spec && t.spec->type == HG_OPT_FLAG) {
            if (eq) {
                if (lenient)
                    continue;
                return fail(err, errlen, "%s takes no value", shown);
            }
        } else if (eq) {
            t.value = eq + 1;
        } else if (i + 1 < argc) {
            t.value = argv[++i];
        } else {
            if (lenient)
                break;
            return fail(err, errlen, "%s needs a value", shown);
        }
        out[n++] = t;
    }
    return n;
}

/* ------------------------------------------------------------ config */

static int read_config(config_t *cfg, const char *path, char *err, size_t errlen)
{
    config_init(cfg);
    if (config_read_file(cfg, path))
        return 0;
    if (config_error_type(cfg) == CONFIG_ERR_FILE_IO)
        return fail(err, errlen, "-c %s: cannot read the file", path);
    return fail(err, errlen, "%s:%d: %s", config_error_file(cfg) ? config_error_file(cfg) : path,
                config_error_line(cfg), config_error_text(cfg));
}

static const char *setting_type_word(int t)
{
    switch (t) {
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64: return "an integer";
    case CONFIG_TYPE_FLOAT: return "a number";
    case CONFIG_TYPE_STRING: return "a string";
    case CONFIG_TYPE_BOOL: return "a boolean";
    case CONFIG_TYPE_GROUP: return "a group";
    case CONFIG_TYPE_ARRAY: return "an array";
    case CONFIG_TYPE_LIST: return "a list";
    default: return "something else";
    }
}

static int setting_real(const config_setting_t *s, double *v)
{
    switch (config_setting_type(s)) {
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64:
        *v = (double)config_setting_get_int64(s);
        return 0;
    case CONFIG_TYPE_FLOAT:
        *v = config_setting_get_float(s);
        return 0;
    default:
        return -1;
    }
}

/* One top-level setting into its option. */
static int apply_setting(struct hg_opts *o, const config_setting_t *s, const char *path,
                         char *err, size_t errlen)
{
    const char *key = config_setting_name(s);
    int line = config_setting_source_line(s);
    int type = config_setting_type(s);
    char where[512];
    snprintf(where, sizeof(where), "%s:%d: key '%s'", path, line, key ? key : "?");
    if (!key)
        return fail(err, errlen, "%s: unnamed setting", where);
    size_t len = strlen(key);
    const struct hg_opt_spec *sp = find_spec(key, len);
    if (!sp) {
        int ti = find_task_opt(o->task_opts_, key, len);
        if (ti < 0) {
            char hint[160], where2[512];
            snprintf(where2, sizeof(where2), "%s:%d: key ", path, line);
            if (refuse_fairseq(key, len, where2, err, errlen) != 0)
                return -1;
            return fail(err, errlen, "%s:%d: unknown key '%s'%s", path, line, key,
                        suggest(key, len, o->task_opts_, "", hint, sizeof(hint)));
        }
        char num[64];
        const char *text = NULL;
        switch (type) {
        case CONFIG_TYPE_STRING:
            text = config_setting_get_string(s);
            break;
        case CONFIG_TYPE_INT:
        case CONFIG_TYPE_INT64:
            snprintf(num, sizeof(num), "%lld", (long long)config_setting_get_int64(s));
            text = num;
            break;
        case CONFIG_TYPE_FLOAT:
            snprintf(num, sizeof(num), "%.17g", config_setting_get_float(s));
            text = num;
            break;
        case CONFIG_TYPE_BOOL:
            text = config_setting_get_bool(s) ? "1" : "0";
            break;
        default:
            return fail(err, errlen, "%s: expected a string or a number, got %s", where,
                        setting_type_word(type));
        }
        return set_task_value(o, ti, text, err, errlen);
    }
    if (sp->transient && sp->type != HG_OPT_FLAG)
        return fail(err, errlen, "%s: not allowed in a config file", where);
    switch (sp->type) {
    case HG_OPT_INT:
        if (type != CONFIG_TYPE_INT && type != CONFIG_TYPE_INT64)
            break;
        *FIELD(o, sp, int64_t) = config_setting_get_int64(s);
        return 0;
    case HG_OPT_REAL:
        if (setting_real(s, FIELD(o, sp, double)) != 0)
            break;
        return 0;
    case HG_OPT_FLAG:
        if (type != CONFIG_TYPE_BOOL)
            break;
        *FIELD(o, sp, int) = config_setting_get_bool(s);
        return 0;
    case HG_OPT_STRING:
        if (type != CONFIG_TYPE_STRING)
            break;
        return set_text(o, sp, config_setting_get_string(s), where, err, errlen);
    case HG_OPT_LIST:
        if (type == CONFIG_TYPE_STRING)
            return set_text(o, sp, config_setting_get_string(s), where, err, errlen);
        if (type == CONFIG_TYPE_ARRAY || type == CONFIG_TYPE_LIST) {
            int n = config_setting_length(s);
            double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof(*v));
            if (!v)
                return fail(err, errlen, "%s: out of memory", where);
            for (int i = 0; i < n; i++)
                if (setting_real(config_setting_get_elem(s, (unsigned)i), &v[i]) != 0) {
                    free(v);
                    return fail(err, errlen, "%s: element %d is not a number", where, i);
                }
            struct hg_opts_list *l = FIELD(o, sp, struct hg_opts_list);
            free(l->v);
            l->v = v;
            l->n = n;
            return 0;
        }
        break;
    }
    return fail(err, errlen, "%s: expected %s, got %s", where, type_word(sp->type),
                setting_type_word(type));
}

static int load_config(struct hg_opts *o, const char *path, char *err, size_t errlen)
{
    config_t cfg;
    int rc = read_config(&cfg, path, err, errlen);
    if (rc == 0) {
        const config_setting_t *root = config_root_setting(&cfg);
        int n = config_setting_length(root);
        for (int i = 0; i < n && rc == 0; i++)
            rc = apply_setting(o, config_setting_get_elem(root, (unsigned)i), path, err,
                               errlen);
    }
    config_destroy(&cfg);
    return rc;
}

/* ---------------------------------------------------------- validation */

static int validate(struct hg_opts *o, char *err, size_t errlen)
{
    for (int i = 0; i < hg_opt_nspecs; i++) {
        const struct hg_opt_spec *s = &hg_opt_specs[i];
        double v;
        if (s->type == HG_OPT_INT || s->type == HG_OPT_REAL) {
            v = s->type == HG_OPT_INT ? (double)*FIELD(o, s, int64_t) : *FIELD(o, s, double);
            int bounded = s->max != 0 && s->max > s->min;
            if (v < s->min || (bounded && v > s->max)) {
                if (bounded)
                    return fail(err, errlen, "--%s must be in [%g, %g] (got %g)", s->name,
                                s->min, s->max, v);
                return fail(err, errlen, "--%s must be >= %g (got %g)", s->name, s->min, v);
            }
        } else if (s->type == HG_OPT_LIST) {
            const struct hg_opts_list *l = FIELD(o, s, struct hg_opts_list);
            if (l->n < s->min_count || (s->max_count && l->n > s->max_count)) {
                if (s->min_count == s->max_count)
                    return fail(err, errlen, "--%s needs %d values (got %d)", s->name,
                                s->min_count, l->n);
                return fail(err, errlen, "--%s: wrong number of values (%d)", s->name, l->n);
            }
        } else if (s->type == HG_OPT_STRING && s->choices) {
            const char *val = *FIELD(o, s, char *);
            size_t vl = val ? strlen(val) : 0;
            int ok = 0;
            for (const char *c = s->choices; val && *c;) {
                const char *bar = strchr(c, '|');
                size_t cl = bar ? (size_t)(bar - c) : strlen(c);
                if (cl == vl && strncmp(c, val, cl) == 0)
                    ok = 1;
                c += cl + (bar != NULL);
            }
            if (val && !ok)
                return fail(err, errlen, "--%s: unknown '%s' (%s)", s->name, val, s->choices);
        }
    }
    if (hg_lr_kind_parse(o->lr_scheduler, &o->lr_kind) != 0)
        return fail(err, errlen, "--lr-scheduler: unknown '%s'", o->lr_scheduler);
    if (o->help || o->list_tasks)
        return 0;
    if (!(o->lr > 0))
        return fail(err, errlen, "--lr must be > 0 (got %g)", o->lr);
    for (int i = 0; i < o->adam_betas.n; i++)
        if (!(o->adam_betas.v[i] >= 0 && o->adam_betas.v[i] < 1))
            return fail(err, errlen, "--adam-betas: each beta must be in [0, 1) (got %g)",
                        o->adam_betas.v[i]);
    for (int i = 0; i < o->rank_capacity.n; i++)
        if (!(o->rank_capacity.v[i] > 0))
            return fail(err, errlen, "--rank-capacity: capacities must be > 0 (rank %d: %g)",
                        i, o->rank_capacity.v[i]);
    if (o->max_tokens == 0 && o->max_sentences == 0 && o->max_tokens_per_rank.n == 0 &&
        o->max_sentences_per_rank.n == 0)
        return fail(err, errlen, "give --max-tokens or --max-sentences (--batch-size)");
    const struct hg_opts_list *pr[2] = {&o->max_tokens_per_rank, &o->max_sentences_per_rank};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < pr[k]->n; i++)
            if (!(pr[k]->v[i] >= 0) || pr[k]->v[i] != floor(pr[k]->v[i]))
                return fail(err, errlen, "--%s: rank %d: %g is not a whole number >= 0",
                            k ? "max-sentences-per-rank" : "max-tokens-per-rank", i,
                            pr[k]->v[i]);
    if (o->nesterov && !(o->momentum > 0))
        return fail(err, errlen, "--nesterov needs --momentum > 0");
    struct hg_lr_sched ls;
    hg_opts_lr_sched(o, &ls);
    if (hg_lr_check(&ls, err, errlen) != 0)
        return -1;
    return 0;
}

/* --------------------------------------------------------------- parse */

int hg_opts_parse(struct hg_opts *o, int argc, char **argv,
                  const struct hg_task_option *task_opts, const char **task_values,
                  char *err, size_t errlen)
{
    memset(o, 0, sizeof(*o));
    int ntask = task_count(task_opts);
    o->task_opts_ = task_opts;
    o->ntask_ = ntask;
    if (ntask) {
        o->task_vals_ = calloc((size_t)ntask, sizeof(char *));
        if (!o->task_vals_)
            return fail(err, errlen, "out of memory");
    }
    for (int i = 0; i < ntask; i++) {
        if (task_values)
            task_values[i] = task_opts[i].def;
        if (find_spec(task_opts[i].name, strlen(task_opts[i].name)))
            return fail(err, errlen, "task option --%s clashes with hgtrain's own",
                        task_opts[i].name);
    }
    /* defaults */
    for (int i = 0; i < hg_opt_nspecs; i++) {
        const struct hg_opt_spec *s = &hg_opt_specs[i];
        if (s->def && set_text(o, s, s->def, s->name, err, errlen) != 0)
            return -1;
    }
    /* the command line, split (errors first), then -c FILE */
    struct tok *toks = malloc((size_t)(argc > 0 ? argc : 1) * sizeof(*toks));
    if (!toks)
        return fail(err, errlen, "out of memory");
    int n = tokenize(argc, argv, task_opts, 0, toks, err, errlen);
    int rc = n < 0 ? -1 : 0;
    const char *cfile = NULL;
    for (int i = 0; i < n; i++)
        if (toks[i].spec && toks[i].spec->offset == OFF(config))
            cfile = toks[i].value;
    if (rc == 0 && cfile)
        rc = load_config(o, cfile, err, errlen);
    for (int i = 0; i < n && rc == 0; i++) {
        char where[160];
        if (toks[i].task >= 0) {
            rc = set_task_value(o, toks[i].task, toks[i].value, err, errlen);
            continue;
        }
        snprintf(where, sizeof(where), "--%s", toks[i].spec->name);
        rc = set_text(o, toks[i].spec, toks[i].value, where, err, errlen);
    }
    free(toks);
    if (rc != 0)
        return -1;
    if (!o->log_format && set_string(&o->log_format, isatty(2) ? "tqdm" : "simple") != 0)
        return fail(err, errlen, "out of memory");
    for (int i = 0; i < ntask && task_values; i++)
        if (o->task_vals_[i])
            task_values[i] = o->task_vals_[i];
    return validate(o, err, errlen);
}

const char *hg_opts_peek_task(int argc, char **argv, const char **plugin)
{
    static char task_buf[256], plugin_buf[4096];
    const char *task = NULL, *plug = NULL, *cfile = NULL;
    struct tok *toks = malloc((size_t)(argc > 0 ? argc : 1) * sizeof(*toks));
    int n = toks ? tokenize(argc, argv, NULL, 1, toks, NULL, 0) : 0;
    for (int i = 0; i < n; i++) {
        if (!toks[i].spec)
            continue;
        if (toks[i].spec->offset == OFF(task))
            task = toks[i].value;
        else if (toks[i].spec->offset == OFF(task_plugin))
            plug = toks[i].value;
        else if (toks[i].spec->offset == OFF(config))
            cfile = toks[i].value;
    }
    free(toks);
    config_t cfg;
    int use_cfg = cfile && (!task || !plug);
    if (use_cfg && read_config(&cfg, cfile, NULL, 0) == 0) {
        const config_setting_t *root = config_root_setting(&cfg);
        for (int i = 0; i < config_setting_length(root); i++) {
            const config_setting_t *s = config_setting_get_elem(root, (unsigned)i);
            const char *key = config_setting_name(s);
            const char *val = config_setting_get_string(s); /* NULL if not a string */
            if (!key || !val)
                continue;
            if (!task && name_eq(key, strlen(key), "task"))
                task = val;
            else if (!plug && name_eq(key, strlen(key), "task-plugin"))
                plug = val;
        }
    }
    const char *rt = NULL, *rp = NULL;
    if (task && strlen(task) < sizeof(task_buf)) {
        strcpy(task_buf, task);
        rt = task_buf;
    }
    if (plug && strlen(plug) < sizeof(plugin_buf)) {
        strcpy(plugin_buf, plug);
        rp = plugin_buf;
    }
    if (use_cfg)
        config_destroy(&cfg);
    if (plugin)
        *plugin = rp;
    return rt;
}

/* ---------------------------------------------------------------- help */

static const char *metavar(const struct hg_opt_spec *s)
{
    if (s->metavar)
        return s->metavar;
    switch (s->type) {
    case HG_OPT_INT: return "N";
    case HG_OPT_REAL: return "X";
    case HG_OPT_LIST: return "LIST";
    case HG_OPT_FLAG: return "";
    default: return "STR";
    }
}

static void help_line(FILE *f, const char *left, const char *help, const char *choices,
                      const char *def)
{
    if (strlen(left) > 34)
        fprintf(f, "  %s\n  %-34s ", left, "");
    else
        fprintf(f, "  %-34s ", left);
    fputs(help ? help : "", f);
    if (choices) {
        fputs(" {", f);
        for (const char *c = choices; *c; c++)
            fputc(*c == '|' ? ',' : *c, f);
        fputc('}', f);
    }
    if (def && *def)
        fprintf(f, " (default: %s)", def);
    fputc('\n', f);
}

void hg_opts_help(FILE *f, const struct hg_task_option *task_opts, const char *task_name)
{
    fprintf(f, "usage: hgtrain --task NAME --data DIR (--max-tokens N | --max-sentences N) "
               "[options]\n"
               "Options may also come from -c FILE (libconfig); the command line wins.\n");
    for (int g = 0; g < HG_GROUP_COUNT; g++) {
        fprintf(f, "\n%s options:\n", group_names[g]);
        for (int i = 0; i < hg_opt_nspecs; i++) {
            const struct hg_opt_spec *s = &hg_opt_specs[i];
            if ((int)s->group != g)
                continue;
            char left[160];
            int k = 0;
            if (s->short_name)
                k = snprintf(left, sizeof(left), "-%c, ", s->short_name);
            k += snprintf(left + k, sizeof(left) - (size_t)k, "--%s", s->name);
            if (s->alias)
                k += snprintf(left + k, sizeof(left) - (size_t)k, ", --%s", s->alias);
            if (s->type != HG_OPT_FLAG)
                snprintf(left + k, sizeof(left) - (size_t)k, " %s", metavar(s));
            help_line(f, left, s->help, s->choices, s->def);
        }
    }
    if (task_opts) {
        fprintf(f, "\ntask options (%s):\n", task_name ? task_name : "task");
        if (!task_opts[0].name)
            fprintf(f, "  (none)\n");
        for (int i = 0; task_opts[i].name; i++) {
            char left[160];
            snprintf(left, sizeof(left), task_opts[i].flag ? "--%s" : "--%s VALUE",
                     task_opts[i].name);
            help_line(f, left, task_opts[i].help, NULL, task_opts[i].def);
        }
    }
}

/* ------------------------------------------------------------- to text */

/* Shortest %g form that reads back to the same double. */
static void fmt_real(char *buf, size_t n, double v)
{
    for (int p = 6; p <= 17; p++) {
        snprintf(buf, n, "%.*g", p, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

static void put_quoted(FILE *f, const char *v)
{
    int plain = *v != 0;
    for (const char *c = v; *c; c++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                    "0123456789_-+./,:=@%", *c))
            plain = 0;
    if (plain) {
        fputs(v, f);
        return;
    }
    fputc('\'', f);
    for (const char *c = v; *c; c++)
        if (*c == '\'')
            fputs("'\\''", f);
        else
            fputc(*c, f);
    fputc('\'', f);
}

char *hg_opts_to_string(const struct hg_opts *o)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    const char *sep = "";
    for (int i = 0; i < hg_opt_nspecs; i++) {
        const struct hg_opt_spec *s = &hg_opt_specs[i];
        char num[64];
        if (s->transient)
            continue;
        switch (s->type) {
        case HG_OPT_FLAG:
            if (*FIELD(o, s, int))
                fprintf(f, "%s--%s", sep, s->name), sep = " ";
            break;
        case HG_OPT_INT:
            fprintf(f, "%s--%s %lld", sep, s->name, (long long)*FIELD(o, s, int64_t));
            sep = " ";
            break;
        case HG_OPT_REAL:
            fmt_real(num, sizeof(num), *FIELD(o, s, double));
            fprintf(f, "%s--%s %s", sep, s->name, num);
            sep = " ";
            break;
        case HG_OPT_STRING:
            if (*FIELD(o, s, char *)) {
                fprintf(f, "%s--%s ", sep, s->name);
                put_quoted(f, *FIELD(o, s, char *));
                sep = " ";
            }
            break;
        case HG_OPT_LIST: {
            const struct hg_opts_list *l = FIELD(o, s, struct hg_opts_list);
            if (l->n == 0)
                break;
            fprintf(f, "%s--%s ", sep, s->name);
            for (int k = 0; k < l->n; k++) {
                fmt_real(num, sizeof(num), l->v[k]);
                fprintf(f, "%s%s", k ? "," : "", num);
            }
            sep = " ";
            break;
        }
        }
    }
    for (int i = 0; i < o->ntask_; i++) {
        const char *v = o->task_vals_[i] ? o->task_vals_[i] : o->task_opts_[i].def;
        if (!v)
            continue;
        if (o->task_opts_[i].flag) { /* a switch: named when on */
            if (strcmp(v, "1") == 0) {
                fprintf(f, "%s--%s", sep, o->task_opts_[i].name);
                sep = " ";
            } else if (strcmp(v, "0") != 0) {
                fprintf(f, "%s--%s=", sep, o->task_opts_[i].name);
                put_quoted(f, v);
                sep = " ";
            }
            continue;
        }
        fprintf(f, "%s--%s ", sep, o->task_opts_[i].name);
        put_quoted(f, v);
        sep = " ";
    }
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

void hg_opts_lr_sched(const struct hg_opts *o, struct hg_lr_sched *s)
{
    *s = (struct hg_lr_sched){
        .kind = o->lr_kind,
        .lr = o->lr,
        .min_lr = o->min_lr,
        .warmup_init_lr = o->warmup_init_lr,
        .warmup_updates = o->warmup_updates,
        .end_lr = o->end_learning_rate,
        .power = o->power,
        .total_updates = o->total_num_update,
    };
}

void hg_opts_free(struct hg_opts *o)
{
    if (!o)
        return;
    for (int i = 0; i < hg_opt_nspecs; i++) {
        const struct hg_opt_spec *s = &hg_opt_specs[i];
        if (s->type == HG_OPT_STRING) {
            free(*FIELD(o, s, char *));
            *FIELD(o, s, char *) = NULL;
        } else if (s->type == HG_OPT_LIST) {
            free(FIELD(o, s, struct hg_opts_list)->v);
            *FIELD(o, s, struct hg_opts_list) = (struct hg_opts_list){0};
        }
    }
    for (int i = 0; i < o->ntask_; i++)
        free(o->task_vals_[i]);
    free(o->task_vals_);
    o->task_vals_ = NULL;
    o->ntask_ = 0;
}
