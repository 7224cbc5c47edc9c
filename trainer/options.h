/* options.h - hgtrain's options: fairseq/HetSeq names, one table of rows
 * (trainer/options.c, read by base/opts.c) drives the command line, the -c
 * config file (libconfig), --help and the text saved into checkpoints.
 *
 * Precedence: defaults < -c FILE < command line. A task's own options
 * (struct hg_task_option) are parsed with the same rules and come back as
 * strings. Every option is documented in its row of the table: run
 * `hgtrain --help`. */
#ifndef HG_TRAINER_OPTIONS_H
#define HG_TRAINER_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/hg_base.h"
#include "controller/hg_controller.h"
#include "tasks/hg_task.h"

/* hgtrain's own options at most (the table's rows; checked at parse) */
#define HG_TRAIN_MAXOPTS 160

/* The parsed options. Strings are malloc'ed copies (NULL: not given and no
 * default); int options are int64_t, real options double, flags 0/1; lists
 * ("2,1,1"; adam-betas also "(0.9, 0.98)") struct hg_opt_list. */
struct hg_opts {
    /* general */
    char *task;                   /* --task NAME */
    char *task_plugin;            /* --task-plugin PATH.so */
    char *arch;                   /* --arch NAME (task-defined) */
    int64_t seed;                 /* --seed, default 1 */
    int64_t threads;              /* --threads, 0: all cores */
    char *log_format;             /* none|simple|json|tqdm; default tqdm if
                                     stderr is a TTY, else simple */
    int64_t log_interval;         /* --log-interval updates, default 100 */
    char *log_file;               /* --log-file PATH */
    struct hg_opt_list rank_capacity; /* --rank-capacity 2,1,1 (n 0: equal) */
    struct hg_opt_list rank_slowdown; /* --rank-slowdown 1,3 (n 0: none) */
    int64_t rebalance_interval;       /* --rebalance-interval N (0: off, -1: auto) */
    int list_tasks;               /* --list-tasks */
    int verbose;                  /* --verbose */
    int help;                     /* --help */
    int version;                  /* --version */
    char *config;                 /* -c FILE / --config FILE (not saved) */
    /* dataset */
    char *data;                   /* --data DIR */
    int64_t max_tokens;           /* --max-tokens, 0: unset */
    int64_t max_sentences;        /* --max-sentences/--batch-size, 0: unset */
    int64_t required_batch_size_multiple; /* default 8 */
    char *train_subset;           /* --train-subset, default "train" */
    char *valid_subset;           /* --valid-subset, default "valid" */
    int64_t validate_interval;    /* epochs, default 1 (0: never) */
    int64_t validate_interval_updates; /* 0: off */
    int disable_validation;       /* --disable-validation: no valid split */
    int64_t max_sentences_valid;  /* --max-sentences-valid, 0: the training's */
    /* optimization */
    char *optimizer;              /* sgd|adam|adamw|adadelta, default sgd */
    struct hg_opt_list lrs;       /* --lr 0.25,0.1: fairseq's per-epoch list
                                     (epoch i the i-th, the last after) */
    double lr;                    /* lrs.v[0], default 0.01, > 0 */
    double min_lr;                /* default 0: floor and stop threshold */
    double stop_min_lr;           /* --stop-min-lr, default -1: off */
    struct hg_opt_list adam_betas; /* always n == 2, default 0.9,0.999 */
    double adam_eps;              /* default 1e-8 */
    double weight_decay;          /* default 0 */
    double momentum;              /* sgd, default 0 */
    int nesterov;                 /* sgd */
    int bf16, fp16;               /* mixed precision (GPU) */
    double fp16_init_scale, min_loss_scale;
    int64_t fp16_scale_window;    /* 0: 2^14 / (world x update-freq), fairseq's */
    double clip_norm;             /* default 0: off */
    int64_t update_freq;          /* gradient accumulation, default 1 */
    char *lr_scheduler;           /* fixed|inverse_sqrt|polynomial_decay|cosine */
    enum hg_lr_kind lr_kind;      /* lr_scheduler as the controller's enum */
    int64_t warmup_updates;       /* default 0 */
    double warmup_init_lr;        /* default 0 */
    double end_learning_rate;     /* polynomial_decay, default 0 */
    double power;                 /* polynomial_decay, default 1 */
    int64_t total_num_update;     /* polynomial_decay, cosine; 0: unset */
    int64_t max_epoch;            /* 0: unlimited */
    int64_t max_update;           /* 0: unlimited */
    double bucket_cap_mb;         /* nccl gradient buckets, 0: one */
    double stop_time_hours;       /* wall-clock hours of the run, resumes
                                     included; 0: unlimited */
    /* checkpoint */
    char *save_dir;               /* default "checkpoints" */
    char *restore_file;           /* default "checkpoint_last.h5" (in save_dir) */
    int reset_dataloader;
    int reset_lr_scheduler;
    int reset_meters;
    int reset_optimizer;
    int64_t save_interval;        /* epochs, default 1 */
    int64_t save_interval_updates; /* 0: off */
    int64_t keep_last_epochs;     /* -1: keep all */
    int64_t keep_interval_updates; /* -1: keep all */
    int no_save;
    int group_readable;           /* files hgtrain creates 0640, not 0600 */
    int allow_shared_save_dir;    /* a save dir or checkpoint others own or
                                     can write: warned, not refused */
    int profile_ops;              /* time every op; print the top kinds */
    const char *trace;            /* the last step's timeline (Chrome trace) */
    const char *export_graph;     /* --export-graph: the train graph's JSON */
    int no_epoch_checkpoints;
    int save_sharded;             /* each rank writes a shard (the params it owns) */
    char *best_checkpoint_metric; /* default "loss" */
    int maximize_best_checkpoint_metric;
    int64_t patience;             /* validations without improvement; 0: off */
    /* distributed (docs/distributed.md) */
    char *devices;                /* --devices cpu | cpu:N | cuda:0,cuda:1 | cuda:N */
    int64_t distributed_gpus;     /* --distributed-gpus N: --devices cuda:N */
    int64_t max_restarts;         /* restarts on the survivors after a death */
    char *restart_devices;        /* survivors|all: where a restart runs */
    int64_t distributed_world_size; /* 0: this node's workers (or Slurm/MPI) */
    int64_t distributed_rank;     /* first global rank on this node */
    char *distributed_init_method; /* tcp://HOST:PORT | file:///PATH */
    char *distributed_backend;    /* auto|shm|tcp|nccl|mpi */
    int64_t distributed_port;     /* Slurm: the store's port (0: from the job id) */
    double distributed_timeout;   /* seconds any wait for a peer may last */
    char *distributed_token_file; /* the job token (else HG_JOB_TOKEN) */
    struct hg_opt_list max_tokens_per_rank;    /* per-rank --max-tokens */
    struct hg_opt_list max_sentences_per_rank; /* per-rank --max-sentences */
    char *cluster_file;           /* --cluster-file: rank capacities from the
                                     devices of a cluster file (planner/) */
    char *strategy;               /* --strategy: a planned strategy file
                                     (hgplan --out) to execute */
    char *plan;                   /* --plan baselines|mcmc: plan at start-up */
    double plan_budget;           /* --plan-budget: the search's seconds */
    double plan_margin;           /* --plan-margin: percent */
    int64_t plan_iters;           /* --plan-iters: proposals at most (0: none) */
    int64_t plan_groups;          /* --plan-groups: op groups */
    int plan_split;               /* --plan-split: also strategies that split
                                     the batch (controller/hybrid.c) */
    char *plan_profile;           /* --plan-profile: hgplan --profile-out's file */
    int replan;                   /* --replan: --plan searches again on a resume */

    /* internal: which of hgtrain's own options the command line or the
     * config file set (hg_opts_given) */
    unsigned char given_[HG_TRAIN_MAXOPTS];
    /* internal: the task options of the last parse and their values */
    const struct hg_task_option *task_opts_;
    struct hg_opt *task_table_;   /* [ntask_]: the task's options as rows */
    char **task_vals_;            /* [ntask_] */
    const char **task_names_;     /* [ntask_] the options' names */
    int ntask_;
};

/* Parses argv (argv[0] is the program name): defaults, then -c FILE, then
 * the rest of the command line (--name VALUE, --name=VALUE; flags take no
 * value), then validation. task_opts (may be NULL) is the task's option
 * table ({NULL}-terminated); task_values[i] receives option i's value or
 * its default (NULL if neither), valid until hg_opts_free(o). Returns 0,
 * or -1 with err naming the option, config key (with file:line) or value:
 * a usage error (hgtrain exits 2). o is always safe to hg_opts_free. */
int hg_opts_parse(struct hg_opts *o, int argc, char **argv,
                  const struct hg_task_option *task_opts,
                  const char **task_values, char *err, size_t errlen);

/* Finds --task and --task-plugin on the command line, else in the -c file
 * (task / task_plugin keys), without reporting errors: main looks the task
 * up with it before calling hg_opts_parse with the task's options. Returns
 * NULL when no task is named; *plugin (may be NULL) gets the plugin path
 * or NULL. The strings stay valid until the next call. */
const char *hg_opts_peek_task(int argc, char **argv, const char **plugin);

/* Grouped help (general, dataset, optimization, checkpoint, then the
 * task's options under task_name when task_opts is not NULL). */
void hg_opts_help(FILE *f, const struct hg_task_option *task_opts,
                  const char *task_name);

/* The effective options, task options included, as "--name value ..."
 * (values shell-quoted where needed; parses back to the same values).
 * malloc'ed; NULL on allocation failure. */
char *hg_opts_to_string(const struct hg_opts *o);

/* 1 if the command line or the config file set hgtrain's option name
 * (not a task's), else 0. */
int hg_opts_given(const struct hg_opts *o, const char *name);

/* What of the options made the task's training graph (the optimizer and
 * the task's options: what hgplan --task takes too), for a strategy file
 * (struct hg_graph_made; valid while o is). */
struct hg_graph_made;
void hg_opts_graph_made(const struct hg_opts *o, struct hg_graph_made *m);

/* The rate of epoch (1-based) under --lr's list: the epoch-th, the last
 * one after it (o->lr for a single rate). */
double hg_opts_lr_epoch(const struct hg_opts *o, int64_t epoch);
/* The learning-rate schedule the options describe (its lr: the first of
 * --lr's list; the epoch loop sets each epoch's). */
void hg_opts_lr_sched(const struct hg_opts *o, struct hg_lr_sched *s);

void hg_opts_free(struct hg_opts *o);

/* The table, for tests and docs. */
extern const struct hg_opt hg_train_opts[];
extern const int hg_train_nopts;

#endif
