/* run-impl.h - private to the hgtrain program: one training run (struct
 * run: the options, this rank in the job, the data's splits, the
 * controller, the epoch's plan and the run's counters) and what the
 * files of a run share, each under the hg__run_ prefix (everything else
 * is static in its file).  The arrows go one way (tests/file_arrows.sh):
 *
 *   hgtrain.c (main, the signals) -> run-setup.c (the run's set-up, the
 *   strategy's wiring), run-strategy.c (--strategy before the fork) and
 *   run-train.c (the epoch loop);
 *   run-setup.c -> run-ckpt.c (the save dir, checkpoints);
 *   run-train.c -> run-ckpt.c and run-balance.c (the epoch plan);
 *   every file -> run-log.c (the log), which calls none of them.
 *
 * The signal handler in hgtrain.c writes hg__run_stop_signal, which
 * run-train.c defines and reads: a use of run-train.c's symbol, so the
 * arrow stays hgtrain.c -> run-train.c. */
#ifndef HG_TRAINER_RUN_IMPL_H
#define HG_TRAINER_RUN_IMPL_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "controller/hg_controller.h"
#include "trainer/launch.h"
#include "trainer/options.h"

/* --rebalance-interval -1 (the default) on several ranks */
#define REBALANCE_AUTO 50

/* One split: its shard set, per-sample costs and the epoch plan. */
struct split {
    struct hg_dataset *ds;
    int32_t *cost; /* [n] */
    int64_t n;
    int32_t max_len, min_len;
};

struct hg__run {
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

/* The training meters between two log lines. */
struct meters {
    double loss, nll, ss, bsz, gnorm, clip, n, t0;
    double loss_scale;   /* --fp16: the last update's */
};

/* ------------------------------------------------------------ run-log.c */

/* s[n] as a JSON string body (quotes and backslashes escaped, control
 * characters as \u00XX) into out[len]. */
void hg__run_json_escape(const char *s, size_t n, char *out, size_t len);
/* One log record, rank 0 only: text ("| ..." lines) and its JSON form
 * (NULL: each line of text becomes {"message": "..."}). */
void hg__run_log(struct hg__run *r, const char *text, const char *json);
/* A training log line from m (rank 0), then m restarted. */
void hg__run_log_train(struct hg__run *r, struct meters *m, int64_t step, int64_t steps,
                       double lr);
/* --log-format tqdm on a terminal: the progress line on stderr. */
void hg__run_progress(struct hg__run *r, int64_t step, int64_t steps, const struct meters *m);

/* ----------------------------------------------------------- run-ckpt.c */

/* SAVE_DIR/name into out[len]; -1: too long. */
int hg__run_ckpt_path(const struct hg__run *r, const char *name, char *out, size_t len);
/* Saves SAVE_DIR/name: iter_step < 0 at the end of the epoch, else in
 * the middle of it at that step. */
int hg__run_save(struct hg__run *r, const char *name, int64_t iter_step, char *err,
                 size_t errlen);
/* Keeps the newest `keep` files of SAVE_DIR matching pattern (rank 0). */
void hg__run_prune(const struct hg__run *r, const char *pattern, int64_t keep);
/* After a checkpoint at path failed to load: err names another task's. */
void hg__run_other_task(const struct hg__run *r, const char *path, char *err, size_t errlen);
/* --save-dir others can write (group or others without the sticky bit)
 * or another user (not root) owns: -1 naming it, or a warning with
 * --allow-shared-save-dir; absent: 0. */
int hg__run_check_save_dir(const struct hg__run *r, char *err, size_t errlen);
/* A checkpoint to load: a regular file of ours that others cannot write;
 * another user's or a group/other-writable one is refused naming it, or
 * warned about with --allow-shared-save-dir. */
int hg__run_check_loaded(const struct hg__run *r, const char *path, char *err, size_t errlen);
/* path opened for writing (append, or truncated once checked) without
 * following a symlink, created 0600 (0640: --group-readable): a file that
 * is not a regular one of ours with one link nobody else can write is
 * refused naming it (what: "--log-file").  The fd, or -1. */
int hg__run_open_file(const struct hg__run *r, const char *path, int append, const char *what,
                      char *err, size_t errlen);
/* Rank 0: --save-dir made, checked, locked, cleaned, --plan's strategy
 * written, checkpoint_best.h5's metric read. */
int hg__run_prepare_save_dir(struct hg__run *r, char *err, size_t errlen);

/* -------------------------------------------------------- run-balance.c */

/* The plan of epoch r->epoch from first_step on (resumed: first_step is
 * a checkpoint's). */
int hg__run_plan_epoch(struct hg__run *r, int64_t first_step, int resumed,
                       struct hg_epoch **ep, char *err, size_t errlen);
/* Rank i's batch at step: samples x their largest cost. */
double hg__run_batch_cost(const struct hg__run *r, const struct hg_epoch *ep, int i,
                          int64_t step);
/* --rebalance-interval's decision at step: 1: a new segment; 0: the same
 * budgets; -1: error. */
int hg__run_rebalance(struct hg__run *r, int64_t step, char *err, size_t errlen);
/* HG_TRACE_SAMPLES: the sample indices of this rank's batch at step. */
void hg__run_trace_batch(struct hg__run *r, const struct hg_epoch *ep, int64_t step);

/* ---------------------------------------------------------- run-setup.c */

/* The run's set-up on every rank: data, budgets, the strategy, the
 * controller, the checkpoint resumed (*first_step: the step of its epoch
 * to go on from), --save-dir. */
int hg__run_setup(struct hg__run *r, int64_t *first_step, char *err, size_t errlen);
/* --plan, in the launcher before the fork. */
int hg__run_plan_before_fork(struct hg__run *r, int nccl, int cuda, char *err, size_t errlen);
/* --strategy, in the launcher before the fork (run-strategy.c): the
 * cluster file and global batch the file names where the options give
 * none, every difference between the file and the options in one error,
 * then the file loaded against the task's graph. */
int hg__run_strategy_before_fork(struct hg__run *r, const struct hg_launch *L, char *err,
                                 size_t errlen);
/* --max-restarts is possible with this launch (0, or -1 with err). */
int hg__run_restarts_possible(const struct hg_opts *o, const struct hg_launch *L,
                              char *err, size_t errlen);
/* --cluster-file: its devices' capacities become --rank-capacity. */
int hg__run_cluster_capacities(struct hg_opts *o, int world, char *err, size_t errlen);
/* --arch among a built-in task's choices. */
int hg__run_check_arch(const char *task, const char *archs, const char *arch, char *err,
                       size_t errlen);
/* What the run holds (not its options), freed. */
void hg__run_free(struct hg__run *r);

/* ---------------------------------------------------------- run-train.c */

/* The first SIGINT or SIGTERM seen (hgtrain.c's handler sets it; 0: none),
 * read by the epoch loop. */
extern volatile sig_atomic_t hg__run_stop_signal;
/* The epoch loop. Returns 0, 1 (stopped by a signal), or -1. */
int hg__run_train(struct hg__run *r, int64_t first_step, char *err, size_t errlen);
/* --profile-ops: seconds per op kind over the whole run (rank 0). */
void hg__run_print_profile(struct hg__run *r);
/* --trace: the latest step's ops on this rank, Chrome trace JSON. */
int hg__run_write_trace(struct hg__run *r, char *err, size_t errlen);

#endif
