/* options.c - hgtrain's options: one table of rows (base/hg_base.h's
 * struct hg_opt) that base/opts.c turns into the command line, the -c
 * config file, --help and the text saved in checkpoints (see options.h).
 * Adding an option: a field in struct hg_opts and a row in
 * hg_train_opts[]; everything else follows from the row. Checks across
 * options go in validate(). */
#define _POSIX_C_SOURCE 200809L
#include "trainer/options.h"

#include "base/hg_base.h"
#include "planner/hg_planner.h"
#include "data/hg_data.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OFF(f) offsetof(struct hg_opts, f)
/* --help sections; the task's options come last */
enum { G_GEN, G_DATA, G_OPT, G_CKPT, G_DIST, G_TASK };
/* per-job options: neither saved in checkpoints nor read from -c files */
#define TRANSIENT (HG_OPTF_NOSAVE | HG_OPTF_NOCONFIG)

static int check_betas(const void *field, const char *where, char *err, size_t errlen)
{
    const struct hg_opt_list *l = field;
    for (int i = 0; i < l->n; i++)
        if (!(l->v[i] >= 0 && l->v[i] < 1))
            return hg_kerr(err, errlen, "%s: each beta must be in [0, 1) (got %g)", where,
                           l->v[i]);
    return 0;
}

const struct hg_opt hg_train_opts[] = {
    /* ------------------------------------------------------------ general */
    {.name = "task", .type = HG_OPT_STR, .group = G_GEN, .offset = OFF(task),
     .metavar = "NAME", .help = "the task to train (see --list-tasks)"},
    {.name = "task-plugin", .type = HG_OPT_STR, .group = G_GEN,
     .offset = OFF(task_plugin), .metavar = "PATH.so",
     .help = "load the task from this shared object (exports hg_task_plugin)"},
    {.name = "arch", .type = HG_OPT_STR, .group = G_GEN, .offset = OFF(arch),
     .metavar = "NAME", .help = "model architecture (the task's choice)"},
    {.name = "seed", .type = HG_OPT_I64, .group = G_GEN, .offset = OFF(seed),
     .def = "1", .help = "initialisation, shuffling and dropout seed"},
    {.name = "threads", .type = HG_OPT_I64, .group = G_GEN, .offset = OFF(threads),
     .def = "0", .help = "compute threads per process (0: all cores)"},
    {.name = "log-format", .type = HG_OPT_STR, .group = G_GEN,
     .offset = OFF(log_format), .choices = "none|simple|json|tqdm",
     .help = "progress format (default: tqdm if stderr is a terminal, else simple)"},
    {.name = "log-interval", .type = HG_OPT_I64, .group = G_GEN,
     .offset = OFF(log_interval), .def = "100", .min = 1,
     .help = "updates between progress lines"},
    {.name = "log-file", .type = HG_OPT_STR, .group = G_GEN,
     .offset = OFF(log_file), .metavar = "PATH",
     .help = "also write the progress lines to this file"},
    {.name = "rank-capacity", .type = HG_OPT_LIST, .group = G_GEN,
     .offset = OFF(rank_capacity), .flags = HG_OPTF_POSITIVE, .metavar = "C0,C1,...",
     .help = "relative speed of each rank; batches are split in proportion "
             "(default: equal)"},
    {.name = "rank-slowdown", .type = HG_OPT_LIST, .group = G_GEN,
     .offset = OFF(rank_slowdown), .flags = HG_OPTF_POSITIVE, .metavar = "F0,F1,...",
     .help = "a test and benchmark aid: each compute op of rank r's training "
             "step (forward, backward, optimizer) takes F_r times its time (it "
             "sleeps the rest; communication is not slowed); each F_r >= 1"},
    {.name = "rebalance-interval", .type = HG_OPT_I64, .group = G_GEN,
     .offset = OFF(rebalance_interval), .def = "-1", .min = -1, .metavar = "N",
     .help = "every N updates, set the ranks' capacities in proportion to their "
             "measured speed and cut the rest of the epoch with them (-1: 50 "
             "on several ranks unless --rank-capacity, per-rank budget lists, "
             "--strategy or --plan set the budgets; 0: off)"},
    {.name = "verbose", .type = HG_OPT_BOOL, .group = G_GEN, .offset = OFF(verbose),
     .flags = HG_OPTF_NOSAVE,
     .help = "log the details too: the plan's activation memory and the BLAS "
             "library's whole build line"},
    {.name = "list-tasks", .type = HG_OPT_BOOL, .group = G_GEN,
     .offset = OFF(list_tasks), .flags = HG_OPTF_NOSAVE,
     .help = "list the built-in tasks (and --task-plugin's) and exit"},
    {.name = "help", .short_name = 'h', .type = HG_OPT_BOOL, .group = G_GEN,
     .offset = OFF(help), .flags = HG_OPTF_NOSAVE,
     .help = "show this help (with --task: the task's options too) and exit"},
    {.name = "version", .type = HG_OPT_BOOL, .group = G_GEN, .offset = OFF(version),
     .flags = HG_OPTF_NOSAVE, .help = "print the version and exit"},
    {.name = "config", .short_name = 'c', .type = HG_OPT_STR, .group = G_GEN,
     .offset = OFF(config), .flags = TRANSIENT | HG_OPTF_CONFIG, .metavar = "FILE",
     .help = "read options from a libconfig file (keys: option names, '-' or "
             "'_'); the command line overrides it"},
    /* ------------------------------------------------------------ dataset */
    {.name = "data", .type = HG_OPT_STR, .group = G_DATA, .offset = OFF(data),
     .metavar = "DIR", .help = "the preprocessed data (hgpreprocess output)"},
    {.name = "max-tokens", .type = HG_OPT_I64, .group = G_DATA,
     .offset = OFF(max_tokens), .def = "0",
     .help = "batch cost limit per rank and step (0: none; this or "
             "--max-sentences is required)"},
    {.name = "max-sentences", .alias = "batch-size", .type = HG_OPT_I64,
     .group = G_DATA, .offset = OFF(max_sentences), .def = "0",
     .help = "samples per batch per rank (0: no limit)"},
    {.name = "required-batch-size-multiple", .type = HG_OPT_I64, .group = G_DATA,
     .offset = OFF(required_batch_size_multiple), .def = HG_BATCH_MULTIPLE_TEXT, .min = 1,
     .help = "batch sizes are a multiple of this (when larger); under --strategy or "
             "--plan only when given (the strategy's rows are trained exactly)"},
    {.name = "train-subset", .type = HG_OPT_STR, .group = G_DATA,
     .offset = OFF(train_subset), .def = "train", .metavar = "SPLIT",
     .help = "the split to train on"},
    {.name = "valid-subset", .type = HG_OPT_STR, .group = G_DATA,
     .offset = OFF(valid_subset), .def = "valid", .metavar = "SPLIT",
     .help = "the split to validate on"},
    {.name = "validate-interval", .type = HG_OPT_I64, .group = G_DATA,
     .offset = OFF(validate_interval), .def = "1",
     .help = "validate every N epochs (0: never)"},
    {.name = "validate-interval-updates", .type = HG_OPT_I64, .group = G_DATA,
     .offset = OFF(validate_interval_updates), .def = "0",
     .help = "also validate every N updates (0: off)"},
    {.name = "disable-validation", .type = HG_OPT_BOOL, .group = G_DATA,
     .offset = OFF(disable_validation),
     .help = "no validation (the valid split is not opened)"},
    {.name = "max-sentences-valid", .alias = "batch-size-valid", .type = HG_OPT_I64,
     .group = G_DATA, .offset = OFF(max_sentences_valid), .def = "0",
     .help = "samples per validation batch per rank (0: as in training); at most "
             "the training's --max-sentences, which the evaluation graph is planned "
             "for"},
    /* ------------------------------------------------------- optimization */
    {.name = "optimizer", .type = HG_OPT_STR, .group = G_OPT,
     .offset = OFF(optimizer), .def = HG_TASK_DEFAULT_OPTIMIZER,
     .choices = "sgd|adam|adamw|adadelta",
     .help = "the optimizer (hgplan --task plans for the same default)"},
    {.name = "lr", .type = HG_OPT_LIST, .group = G_OPT, .offset = OFF(lrs),
     .def = "0.01", .min_count = 1, .flags = HG_OPTF_POSITIVE, .metavar = "LR[,LR...]",
     .help = "(peak) learning rate, > 0; a list (--lr-scheduler fixed): epoch i "
             "uses the i-th, the last one after (fairseq's)"},
    {.name = "min-lr", .type = HG_OPT_REAL, .group = G_OPT, .offset = OFF(min_lr),
     .def = "0", .help = "cosine floor; training stops when the lr falls to it"},
    {.name = "stop-min-lr", .type = HG_OPT_REAL, .group = G_OPT,
     .offset = OFF(stop_min_lr), .def = "-1", .min = -HUGE_VAL,
     .help = "stop at the end of an epoch when the lr is at or below this "
             "(fairseq's; -1: off)"},
    {.name = "adam-betas", .type = HG_OPT_LIST, .group = G_OPT,
     .offset = OFF(adam_betas), .def = "0.9,0.999", .min_count = 2,
     .max_count = 2, .check = check_betas, .metavar = "B1,B2",
     .help = "Adam betas, each in [0,1): \"0.9,0.98\" or \"(0.9, 0.98)\""},
    {.name = "adam-eps", .type = HG_OPT_REAL, .group = G_OPT,
     .offset = OFF(adam_eps), .def = "1e-08", .help = "Adam epsilon"},
    {.name = "weight-decay", .type = HG_OPT_REAL, .group = G_OPT,
     .offset = OFF(weight_decay), .def = "0", .help = "weight decay"},
    {.name = "momentum", .type = HG_OPT_REAL, .group = G_OPT,
     .offset = OFF(momentum), .def = "0", .max = 1, .help = "SGD momentum"},
    {.name = "nesterov", .type = HG_OPT_BOOL, .group = G_OPT,
     .offset = OFF(nesterov), .help = "SGD with Nesterov momentum"},
    {.name = "bf16", .type = HG_OPT_BOOL, .group = G_OPT, .offset = OFF(bf16),
     .help = "GPU: GEMMs on bf16 copies of their operands (tensor cores), fp32 "
             "accumulation, fp32 master weights and everything else"},
    {.name = "fp16", .type = HG_OPT_BOOL, .group = G_OPT, .offset = OFF(fp16),
     .help = "GPU: as --bf16 with fp16 operands and dynamic loss scaling (an "
             "overflow skips the update and halves the scale)"},
    {.name = "fp16-init-scale", .type = HG_OPT_REAL, .group = G_OPT,
     .offset = OFF(fp16_init_scale), .def = "128", .help = "--fp16: first loss scale"},
    {.name = "fp16-scale-window", .type = HG_OPT_I64, .group = G_OPT,
     .offset = OFF(fp16_scale_window), .def = "0",
     .help = "--fp16: double the scale after N updates without overflow "
             "(0: 2^14 / (world size x update-freq))"},
    {.name = "min-loss-scale", .type = HG_OPT_REAL, .group = G_OPT,
     .offset = OFF(min_loss_scale), .def = "0.0001",
     .help = "--fp16: stop when the scale would go below this"},
    {.name = "clip-norm", .type = HG_OPT_REAL, .group = G_OPT,
     .offset = OFF(clip_norm), .def = "0",
     .help = "clip the gradient to this global L2 norm (0: off)"},
    {.name = "update-freq", .type = HG_OPT_I64, .group = G_OPT,
     .offset = OFF(update_freq), .def = "1", .min = 1,
     .help = "accumulate the gradients of N batches per update (under "
             "--strategy: data-parallel shapes and pipelines, each batch then "
             "the pipeline's micro-batches; other model-parallel and split "
             "strategies take 1)"},
    {.name = "lr-scheduler", .type = HG_OPT_STR, .group = G_OPT,
     .offset = OFF(lr_scheduler), .def = "fixed",
     .choices = "fixed|inverse_sqrt|polynomial_decay|cosine",
     .help = "learning-rate schedule"},
    {.name = "warmup-updates", .type = HG_OPT_I64, .group = G_OPT,
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
    {.name = "total-num-update", .type = HG_OPT_I64, .group = G_OPT,
     .offset = OFF(total_num_update), .def = "0",
     .help = "updates the schedule spans (polynomial_decay, cosine)"},
    {.name = "max-epoch", .type = HG_OPT_I64, .group = G_OPT,
     .offset = OFF(max_epoch), .def = "0",
     .help = "stop after N epochs (0: no limit)"},
    {.name = "max-update", .type = HG_OPT_I64, .group = G_OPT,
     .offset = OFF(max_update), .def = "0",
     .help = "stop after N updates (0: no limit)"},
    {.name = "stop-time-hours", .type = HG_OPT_REAL, .group = G_OPT,
     .offset = OFF(stop_time_hours), .def = "0", .metavar = "H",
     .help = "stop after H hours of wall-clock time, resumes included (0: no limit)"},
    /* --------------------------------------------------------- checkpoint */
    {.name = "save-dir", .type = HG_OPT_STR, .group = G_CKPT,
     .offset = OFF(save_dir), .def = "checkpoints", .metavar = "DIR",
     .help = "where checkpoints are written"},
    {.name = "restore-file", .type = HG_OPT_STR, .group = G_CKPT,
     .offset = OFF(restore_file), .def = "checkpoint_last.h5", .metavar = "FILE",
     .help = "checkpoint to resume from (relative: in --save-dir); the default may be "
             "absent (a fresh start), a file named here must exist"},
    {.name = "group-readable", .type = HG_OPT_BOOL, .group = G_CKPT,
     .offset = OFF(group_readable),
     .help = "create checkpoints, strategy.cfg, the lock, --log-file and --trace 0640 "
             "(default 0600)"},
    {.name = "allow-shared-save-dir", .type = HG_OPT_BOOL, .group = G_CKPT,
     .offset = OFF(allow_shared_save_dir),
     .help = "use a --save-dir others can write, and load checkpoints others own or "
             "can write (refused otherwise); symlinks are never followed"},
    {.name = "reset-dataloader", .type = HG_OPT_BOOL, .group = G_CKPT,
     .offset = OFF(reset_dataloader),
     .help = "on restore, start the data iterator afresh"},
    {.name = "reset-lr-scheduler", .type = HG_OPT_BOOL, .group = G_CKPT,
     .offset = OFF(reset_lr_scheduler),
     .help = "on restore, do not load the lr scheduler state"},
    {.name = "reset-meters", .type = HG_OPT_BOOL, .group = G_CKPT,
     .offset = OFF(reset_meters), .help = "on restore, reset the meters"},
    {.name = "reset-optimizer", .type = HG_OPT_BOOL, .group = G_CKPT,
     .offset = OFF(reset_optimizer),
     .help = "on restore, do not load the optimizer state"},
    {.name = "save-interval", .type = HG_OPT_I64, .group = G_CKPT,
     .offset = OFF(save_interval), .def = "1", .min = 1,
     .help = "save a checkpoint every N epochs"},
    {.name = "save-interval-updates", .type = HG_OPT_I64, .group = G_CKPT,
     .offset = OFF(save_interval_updates), .def = "0",
     .help = "also save every N updates (0: off)"},
    {.name = "keep-last-epochs", .type = HG_OPT_I64, .group = G_CKPT,
     .offset = OFF(keep_last_epochs), .def = "-1", .min = -1,
     .help = "keep only the last N epoch checkpoints (-1: all)"},
    {.name = "keep-interval-updates", .type = HG_OPT_I64, .group = G_CKPT,
     .offset = OFF(keep_interval_updates), .def = "-1", .min = -1,
     .help = "keep only the last N update checkpoints (-1: all)"},
    {.name = "profile-ops", .type = HG_OPT_BOOL, .group = G_GEN, .offset = OFF(profile_ops),
     .help = "time every op of the training plan (a GPU waits after each) and "
             "print at the end the op kinds that took the most time, the kernel "
             "calls and bytes copied per pass (and the launches per update on a GPU)"},
    {.name = "export-graph", .type = HG_OPT_STR, .group = G_GEN,
     .offset = OFF(export_graph), .metavar = "FILE",
     .help = "write the training graph rank 0 would run (its train plan's, the "
             "strategy's transfers and aggregation included) as JSON, in hgplan "
             "--export-graph's format ('-': standard output), and exit without "
             "training"},
    {.name = "trace", .type = HG_OPT_STR, .group = G_GEN, .offset = OFF(trace),
     .help = "write the timeline of the last training step, every op and transfer "
             "with its start and end, as Chrome trace JSON (chrome://tracing, Perfetto; "
             "as hgplan --trace writes the simulated one); with several ranks each "
             "writes its own, FILE with .rankR before the extension"},
    {.name = "no-save", .type = HG_OPT_BOOL, .group = G_CKPT,
     .offset = OFF(no_save), .help = "write no checkpoints"},
    {.name = "save-sharded", .type = HG_OPT_BOOL, .group = G_CKPT,
     .offset = OFF(save_sharded), .flags = HG_OPTF_NOSAVE,
     .help = "every rank writes the parameters it owns (spread over the ranks, "
             "balanced by bytes) to a shard file of its own, rank 0 the metadata "
             "and the shards' index (docs/distributed.md); --save-dir must be "
             "a directory every rank sees"},
    {.name = "no-epoch-checkpoints", .type = HG_OPT_BOOL, .group = G_CKPT,
     .offset = OFF(no_epoch_checkpoints),
     .help = "only checkpoint_last and checkpoint_best"},
    {.name = "best-checkpoint-metric", .type = HG_OPT_STR, .group = G_CKPT,
     .offset = OFF(best_checkpoint_metric), .def = "loss", .metavar = "METRIC",
     .help = "validation metric that picks checkpoint_best"},
    {.name = "maximize-best-checkpoint-metric", .type = HG_OPT_BOOL,
     .group = G_CKPT, .offset = OFF(maximize_best_checkpoint_metric),
     .help = "larger --best-checkpoint-metric is better"},
    {.name = "patience", .type = HG_OPT_I64, .group = G_CKPT, .offset = OFF(patience),
     .def = "0", .help = "stop when --best-checkpoint-metric has not improved for N "
                         "validations in a row (0: never; counted within a run)"},
    /* -------------------------------------------------------- distributed */
    {.name = "devices", .type = HG_OPT_STR, .group = G_DIST, .offset = OFF(devices),
     .metavar = "LIST", .flags = TRANSIENT,
     .help = "this node's workers, one process each: cpu, cpu:N (N forked CPU "
             "workers), cuda:0,cuda:1 or cuda:N, or a mix of kinds such as "
             "cuda:0,cpu:2 (a GPU worker and two CPU workers, over shm or tcp)"},
    {.name = "distributed-gpus", .type = HG_OPT_I64, .group = G_DIST,
     .offset = OFF(distributed_gpus), .def = "0", .flags = TRANSIENT,
     .help = "GPUs on this node, one worker each (--devices cuda:N)"},
    {.name = "max-restarts", .type = HG_OPT_I64, .group = G_DIST,
     .offset = OFF(max_restarts), .def = "0", .flags = TRANSIENT, .metavar = "N",
     .help = "one node: when a worker dies (killed by a signal, e.g. the OOM "
             "killer, or stopped), restart the job from the save dir's "
             "checkpoint_last.h5 on the surviving devices, at most N times"},
    {.name = "restart-devices", .type = HG_OPT_STR, .group = G_DIST,
     .offset = OFF(restart_devices), .def = "survivors", .flags = TRANSIENT,
     .choices = "survivors|all",
     .help = "where --max-restarts restarts: the survivors, or all the devices "
             "(the dead worker's device too: an OOM-killed process leaves its "
             "device usable)"},
    {.name = "distributed-world-size", .type = HG_OPT_I64, .group = G_DIST,
     .offset = OFF(distributed_world_size), .def = "0", .flags = TRANSIENT,
     .help = "ranks in the whole job (0: this node's workers; under Slurm "
             "or mpirun: from the environment)"},
    {.name = "distributed-rank", .type = HG_OPT_I64, .group = G_DIST,
     .offset = OFF(distributed_rank), .def = "0", .flags = TRANSIENT,
     .help = "global rank of this node's first worker"},
    {.name = "distributed-init-method", .type = HG_OPT_STR, .group = G_DIST,
     .offset = OFF(distributed_init_method), .metavar = "URL", .flags = TRANSIENT,
     .help = "where the ranks meet: tcp://HOST:PORT (rank 0's host serves "
             "the store there) or file:///shared/path (rank 0 writes its "
             "address there)"},
    {.name = "bucket-cap-mb", .type = HG_OPT_REAL, .group = G_DIST,
     .offset = OFF(bucket_cap_mb), .def = "25", .metavar = "MB",
     .help = "all-reduce gradients in buckets of MB MiB from the backward (nccl: "
             "overlapped with it; 0: all at once after it)"},
    {.name = "distributed-backend", .type = HG_OPT_STR, .group = G_DIST,
     .offset = OFF(distributed_backend), .def = "auto", .flags = TRANSIENT,
     .choices = "auto|shm|tcp|nccl|mpi",
     .help = "collectives: shm (one node), tcp, nccl (GPUs), mpi (under "
             "mpirun); auto: shm on one node, mpi under mpirun, else tcp; "
             "named with one rank, its collectives run anyway"},
    {.name = "distributed-port", .type = HG_OPT_I64, .group = G_DIST,
     .offset = OFF(distributed_port), .def = "0", .min = 0, .max = 65535,
     .flags = TRANSIENT,
     .help = "Slurm: the store's port on the first node (0: 20000 + job id "
             "mod 20000)"},
    {.name = "distributed-timeout", .type = HG_OPT_REAL, .group = G_DIST,
     .offset = OFF(distributed_timeout), .def = "300", .min = 0.001,
     .flags = TRANSIENT,
     .help = "seconds a rank waits for its peers before it gives up naming "
             "them"},
    {.name = "distributed-token-file", .type = HG_OPT_STR, .group = G_DIST,
     .offset = OFF(distributed_token_file), .metavar = "PATH", .flags = TRANSIENT,
     .help = "the job token that peers present (a 0600 file; the "
             "environment variable HG_JOB_TOKEN wins); made by the launcher "
             "when the job is on one node"},
    {.name = "max-tokens-per-rank", .type = HG_OPT_LIST, .group = G_DIST,
     .offset = OFF(max_tokens_per_rank), .flags = HG_OPTF_WHOLE,
     .metavar = "T0,T1,...",
     .help = "per-rank --max-tokens (replaces --max-tokens and "
             "--rank-capacity; 0: the rank gets no samples)"},
    {.name = "max-sentences-per-rank", .type = HG_OPT_LIST, .group = G_DIST,
     .offset = OFF(max_sentences_per_rank), .flags = HG_OPTF_WHOLE,
     .metavar = "S0,S1,...",
     .help = "per-rank --max-sentences (replaces --max-sentences and "
             "--rank-capacity; 0: the rank gets no samples)"},
    {.name = "cluster-file", .type = HG_OPT_STR, .group = G_DIST,
     .offset = OFF(cluster_file), .metavar = "FILE",
     .help = "a cluster description (docs/planner.md): unless --rank-capacity "
             "is given, each rank's capacity is its device's speed (or peak "
             "FLOP/s); its devices must be as many as the job's ranks"},
    {.name = "strategy", .type = HG_OPT_STR, .group = G_DIST,
     .offset = OFF(strategy), .metavar = "FILE",
     .help = "run a strategy written by hgplan --out for this task (device d "
             "is rank d); its cluster file, devices, global batch, optimizer and "
             "task options are the file's: --cluster-file and --max-sentences may "
             "be left out, and whatever differs from the file is refused before "
             "the workers start, naming the option: a data-parallel-shaped one's "
             "batch shares become the "
             "per-rank budgets and each parameter is aggregated as it says "
             "(AllReduce or a parameter server); a model-parallel one (every "
             "op group whole on one device) runs each op on its device's rank, "
             "every rank reading the whole batch, tensors sent between ranks; "
             "any other (a mix of the two, other replica counts per group) "
             "splits the batch into pieces at every op's row bounds and runs "
             "each op's piece on its device"},
    {.name = "plan", .type = HG_OPT_STR, .group = G_DIST, .offset = OFF(plan),
     .choices = "baselines|mcmc", .metavar = "S",
     .help = "plan at start-up for this task's training graph on --cluster-file "
             "(global batch --max-sentences; roofline prices unless --plan-profile) "
             "and train with the "
             "result as --strategy would: 'baselines' keeps the fastest simulated "
             "data-parallel baseline (EV-PS, EV-AR, CP-PS, CP-AR), 'mcmc' searches "
             "from it among the strategies this build executes for --plan-budget "
             "seconds; logs the plan table (hgplan's), writes SAVE_DIR/strategy.cfg and "
             "stores the strategy in every checkpoint; planned once, before the "
             "workers are forked; a resumed run trains with its checkpoint's "
             "strategy unless --replan"},
    {.name = "plan-budget", .type = HG_OPT_REAL, .group = G_DIST,
     .offset = OFF(plan_budget), .def = "10", .flags = HG_OPTF_POSITIVE,
     .metavar = "SECONDS",
     .help = "--plan mcmc: the search's wall-clock budget"},
    {.name = "plan-margin", .type = HG_OPT_REAL, .group = G_DIST,
     .offset = OFF(plan_margin), .def = HG_PLAN_MARGIN_DEF, .min = 0, .max = 100, .metavar = "PCT",
     .help = "--plan mcmc: train with the search's strategy only when simulated at "
             "least PCT% faster than the best baseline, else with that baseline (a "
             "smaller predicted gain is within the simulator's error against measured "
             "runs: bench/RESULTS.md; 0: any gain)"},
    {.name = "plan-profile", .type = HG_OPT_STR, .group = G_DIST,
     .offset = OFF(plan_profile), .metavar = "FILE",
     .help = "--plan: price the devices of --cluster-file that name a profiled "
             "device with FILE's measurements (hgplan --profile-out; the roofline "
             "elsewhere), as hgplan --profile does"},
    {.name = "plan-iters", .type = HG_OPT_I64, .group = G_DIST, .offset = OFF(plan_iters),
     .def = "0", .min = 0, .metavar = "N",
     .help = "--plan mcmc: stop after N proposals (0: none); the result depends on "
             "--seed alone when N proposals finish within --plan-budget"},
    {.name = "plan-groups", .type = HG_OPT_I64, .group = G_DIST, .offset = OFF(plan_groups),
     .def = "64", .min = 1, .metavar = "N",
     .help = "--plan: HeteroG's op groups (the N most expensive ops and their "
             "neighbours), the unit of a strategy's decisions; recomputation drops "
             "only activations read inside a group"},
    {.name = "plan-split", .type = HG_OPT_BOOL, .group = G_DIST, .offset = OFF(plan_split),
     .help = "--plan: also choose among strategies that split the batch (model- and "
             "data-parallel groups mixed, other replica counts per group; CPU, "
             "--update-freq 1): they train exactly, but run slower than simulated "
             "today (bench/RESULTS.md)"},
    {.name = "replan", .type = HG_OPT_BOOL, .group = G_DIST, .offset = OFF(replan),
     .help = "--plan, resumed: plan again rather than train with the strategy the "
             "checkpoint keeps"},
};

const int hg_train_nopts = (int)(sizeof(hg_train_opts) / sizeof(hg_train_opts[0]));

static const char usage[] =
    "usage: hgtrain --task NAME --data DIR (--max-tokens N | --max-sentences N)\n"
    "           [options]\n"
    "       hgtrain --task NAME --data DIR --devices cpu:N --strategy FILE\n"
    "           [options]\n"
    "       hgtrain generate|interactive --data DIR --path CHECKPOINT ...\n"
    "           (see their --help)\n"
    "       hgtrain merge-checkpoint SHARDED.h5 OUT.h5\n"
    "           (a --save-sharded checkpoint as one file)\n"
    "Options may also come from -c FILE (libconfig); the command line wins.\n";

/* fairseq options with no meaning here, each with what to do instead:
 * refused by name rather than as unknown */
static const struct hg_opt_refusal not_here[] = {
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
    {"skip-invalid-size-inputs-valid-test",
     "a split with sequences longer than --max-source-positions or "
     "--max-target-positions is refused, naming them; drop long pairs when "
     "the data are made (hgpreprocess translation --max-len L)"},
    {NULL, NULL}};

/* hgtrain's program for the parser: its table, then the task's (if any). */
static void prog_init(struct hg_opt_prog *p, const struct hg_opts *o,
                      const char *const *groups)
{
    HG_CHECK(hg_train_nopts <= HG_TRAIN_MAXOPTS);
    *p = (struct hg_opt_prog){
        .usage = usage,
        .groups = groups,
        .refused = not_here,
        .refused_what = "a fairseq option that does not apply to hgtrain",
        .sets = {{.opts = hg_train_opts, .n = hg_train_nopts, .base = (void *)o,
                  .given = (unsigned char *)o->given_}},
        .nsets = 1,
    };
    if (o->ntask_)
        p->sets[p->nsets++] = (struct hg_opt_set){
            .opts = o->task_table_, .n = o->ntask_, .base = o->task_vals_};
}

/* The task's options as rows of their own: text values in task_vals_[i]. */
static int task_table(struct hg_opts *o, const struct hg_task_option *t, char *err,
                      size_t errlen)
{
    int n;
    o->task_opts_ = t;
    o->task_table_ = hg_task_opt_rows(t, G_TASK, &n);
    if (n < 0)
        return hg_kerr(err, errlen, "out of memory");
    if (n && (!(o->task_vals_ = calloc((size_t)n, sizeof(char *))) ||
              !(o->task_names_ = calloc((size_t)n, sizeof(char *)))))
        return hg_kerr(err, errlen, "out of memory");
    for (int i = 0; i < n; i++)
        o->task_names_[i] = t[i].name;
    o->ntask_ = n;
    return 0;
}

static int own_option(const char *name)
{
    for (int i = 0; i < hg_train_nopts; i++)
        if (strcmp(name, hg_train_opts[i].name) == 0 ||
            (hg_train_opts[i].alias && strcmp(name, hg_train_opts[i].alias) == 0))
            return 1;
    return 0;
}

/* ---------------------------------------------------------- validation */

static int validate(struct hg_opts *o, char *err, size_t errlen)
{
    if (hg_lr_kind_parse(o->lr_scheduler, &o->lr_kind) != 0)
        return hg_kerr(err, errlen, "--lr-scheduler: unknown '%s'", o->lr_scheduler);
    if (o->help || o->list_tasks || o->version)
        return 0;
    if (!(o->lr > 0))
        return hg_kerr(err, errlen, "--lr must be > 0 (got %g)", o->lr);
    /* a strategy file names its cluster file and global batch: the
     * launcher takes them from it (run-strategy.c) */
    if (o->lrs.n > 1 && o->lr_kind != HG_LR_FIXED)
        return hg_kerr(err, errlen, "--lr: a list of %d rates is one per epoch, which "
                       "only --lr-scheduler fixed follows (as in fairseq); give one rate "
                       "for %s", o->lrs.n, o->lr_scheduler);
    if (o->max_tokens == 0 && o->max_sentences == 0 && o->max_tokens_per_rank.n == 0 &&
        o->max_sentences_per_rank.n == 0 && !o->strategy)
        return hg_kerr(err, errlen, "give --max-tokens or --max-sentences (--batch-size)");
    if (o->strategy && (o->rank_capacity.n || o->max_tokens_per_rank.n ||
                        o->max_sentences_per_rank.n))
        return hg_kerr(err, errlen, "--strategy %s gives the per-rank batch shares; drop "
                       "--rank-capacity, --max-tokens-per-rank and --max-sentences-per-rank",
                       o->strategy);
    if (o->plan && o->strategy)
        return hg_kerr(err, errlen, "--plan %s plans the strategy that --strategy %s would "
                       "give; give one of them", o->plan, o->strategy);
    if (o->plan_profile && !o->plan)
        return hg_kerr(err, errlen, "--plan-profile %s prices the planning of --plan; "
                       "give --plan baselines|mcmc", o->plan_profile);
    if (o->plan_split && !o->plan)
        return hg_kerr(err, errlen, "--plan-split widens the search of --plan; give --plan "
                       "baselines|mcmc");
    if (o->replan && !o->plan)
        return hg_kerr(err, errlen, "--replan plans a resumed run again; give --plan "
                       "baselines|mcmc");
    if (o->plan && (!o->cluster_file || o->max_sentences <= 0))
        return hg_kerr(err, errlen, "--plan %s needs the --cluster-file to plan for and the "
                       "global batch (--max-sentences) to split", o->plan);
    if (o->plan && (o->rank_capacity.n || o->max_tokens_per_rank.n ||
                    o->max_sentences_per_rank.n))
        return hg_kerr(err, errlen, "--plan %s gives the per-rank batch shares; drop "
                       "--rank-capacity, --max-tokens-per-rank and --max-sentences-per-rank",
                       o->plan);
    if (o->nesterov && !(o->momentum > 0))
        return hg_kerr(err, errlen, "--nesterov needs --momentum > 0");
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
    if (task_table(o, task_opts, err, errlen) != 0)
        return -1;
    for (int i = 0; i < o->ntask_; i++) {
        if (task_values)
            task_values[i] = task_opts[i].def;
        if (own_option(task_opts[i].name))
            return hg_kerr(err, errlen, "task option --%s clashes with hgtrain's own",
                           task_opts[i].name);
    }
    struct hg_opt_prog p;
    prog_init(&p, o, NULL);
    if (hg_opt_parse(&p, argc, argv, err, errlen) != 0)
        return -1;
    o->lr = o->lrs.v[0]; /* min_count 1 */
    if (!o->log_format && !(o->log_format = strdup(isatty(2) ? "tqdm" : "simple")))
        return hg_kerr(err, errlen, "out of memory");
    for (int i = 0; i < o->ntask_ && task_values; i++)
        task_values[i] = o->task_vals_[i];
    return validate(o, err, errlen);
}

const char *hg_opts_peek_task(int argc, char **argv, const char **plugin)
{
    static char task_buf[256], plugin_buf[4096];
    struct hg_opts o;
    memset(&o, 0, sizeof(o));
    struct hg_opt_prog p;
    prog_init(&p, &o, NULL);
    char *task = hg_opt_peek(&p, argc, argv, "task");
    char *plug = hg_opt_peek(&p, argc, argv, "task-plugin");
    const char *rt = NULL, *rp = NULL;
    if (task && strlen(task) < sizeof(task_buf)) {
        strcpy(task_buf, task);
        rt = task_buf;
    }
    if (plug && strlen(plug) < sizeof(plugin_buf)) {
        strcpy(plugin_buf, plug);
        rp = plugin_buf;
    }
    free(task);
    free(plug);
    if (plugin)
        *plugin = rp;
    return rt;
}

/* ---------------------------------------------------------------- help */

void hg_opts_help(FILE *f, const struct hg_task_option *task_opts, const char *task_name)
{
    struct hg_opts o;
    memset(&o, 0, sizeof(o));
    char title[160];
    const char *groups[] = {"general options", "dataset options", "optimization options",
                            "checkpoint options", "distributed options", NULL, NULL};
    if (task_opts) {
        snprintf(title, sizeof(title), "task options (%s)", task_name ? task_name : "task");
        groups[G_TASK] = title;
        if (task_table(&o, task_opts, NULL, 0) != 0)
            o.ntask_ = 0;
    }
    struct hg_opt_prog p;
    prog_init(&p, &o, groups);
    hg_opt_help(f, &p);
    hg_opts_free(&o);
}

/* ------------------------------------------------------------- to text */

char *hg_opts_to_string(const struct hg_opts *o)
{
    struct hg_opt_prog p;
    prog_init(&p, o, NULL);
    return hg_opt_to_string(&p);
}

int hg_opts_given(const struct hg_opts *o, const char *name)
{
    struct hg_opt_prog p;
    prog_init(&p, o, NULL);
    return hg_opt_given(&p, name) == 1;
}

void hg_opts_graph_made(const struct hg_opts *o, struct hg_graph_made *m)
{
    *m = (struct hg_graph_made){.optimizer = o->optimizer, .nopts = o->ntask_,
                                .opt_name = o->task_names_,
                                .opt_val = (const char *const *)o->task_vals_};
}

double hg_opts_lr_epoch(const struct hg_opts *o, int64_t epoch)
{
    if (o->lrs.n == 0)
        return o->lr;
    int64_t i = epoch - 1 < o->lrs.n - 1 ? epoch - 1 : o->lrs.n - 1;
    return o->lrs.v[i > 0 ? i : 0];
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
    struct hg_opt_prog p;
    prog_init(&p, o, NULL);
    hg_opt_free(&p);
    free(o->task_table_);
    free(o->task_vals_);
    free(o->task_names_);
    o->task_table_ = NULL;
    o->task_vals_ = NULL;
    o->task_names_ = NULL;
    o->ntask_ = 0;
}
