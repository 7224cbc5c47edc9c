/* hg_controller.h - the controller room: learning-rate schedules, exact
 * checkpoints, the planned-strategy contract and the training step. */
#ifndef HG_CONTROLLER_H
#define HG_CONTROLLER_H

#include <stddef.h>
#include <stdint.h>

#include "comm/hg_comm.h"
#include "data/hg_data.h"
#include "graph/hg_graph.h"
#include "tasks/hg_task.h"

/* ---------------------------------------------------------- lr schedules */

enum hg_lr_kind {
    HG_LR_FIXED,           /* lr (times a linear warmup factor if warmup > 0) */
    HG_LR_INVERSE_SQRT,    /* warmup from warmup_init_lr to lr, then lr*sqrt(warmup/u) */
    HG_LR_POLYNOMIAL,      /* warmup to lr, then (lr-end)*(1-p)^power + end */
    HG_LR_COSINE,          /* warmup to lr, then half a cosine down to min_lr */
    HG_LR_KIND_COUNT
};

struct hg_lr_sched {
    enum hg_lr_kind kind;
    double lr;              /* peak */
    double min_lr;          /* cosine floor; also the stop threshold */
    double warmup_init_lr;
    int64_t warmup_updates;
    double end_lr;          /* polynomial */
    double power;           /* polynomial */
    int64_t total_updates;  /* polynomial, cosine */
};

/* fairseq's names: "fixed", "inverse_sqrt", "polynomial_decay", "cosine". */
int hg_lr_kind_parse(const char *name, enum hg_lr_kind *kind);
const char *hg_lr_kind_name(enum hg_lr_kind kind);
/* Checks the parameters (names the bad one). */
int hg_lr_check(const struct hg_lr_sched *s, char *err, size_t errlen);
/* Learning rate for the update that follows num_updates finished updates
 * (fairseq's step_update(num_updates) convention). */
double hg_lr_at(const struct hg_lr_sched *s, int64_t num_updates);

/* ----------------------------------------------------------- checkpoints */

/* What a checkpoint holds besides the tensors of the plan. */
struct hg_ckpt_meta {
    int64_t epoch;           /* hgtrain writes iter.epoch here: the epoch a
                                resume trains in (1-based; the one a save
                                in the middle of an epoch was made in) */
    int64_t num_updates;
    struct hg_iter_state iter; /* where the data iterator resumes (on load,
                                  iter.segs is malloc'ed like options) */
    uint64_t seed;
    double best_metric;      /* NaN: none yet */
    const char *metric_name; /* the metric best_metric is (saved; on load:
                                malloc'ed like options) */
    int maximize;            /* 1: larger metric is better */
    int checksummed;         /* on load: 1 when every CRC was verified
                                (version 2), 0 for a version 1 file */
    double train_wall;       /* meters that continue across a resume */
    double wall;
    const char *options;     /* the run's options as text (saved; on load:
                                points into a buffer owned by the caller's
                                struct until hg_ckpt_meta_free) */
    const char *strategy;    /* hgtrain --plan: the strategy file's text
                                (attribute "strategy", written when set; on
                                load: malloc'ed like options, NULL when the
                                file has none) */
    int shards;              /* on load: 0: one file; else the number of
                                shard files (a sharded checkpoint) */
};

/* The mode of the files the checkpoint functions create (0600 by
 * default; 0640 for hgtrain --group-readable), less what the umask takes. */
void hg_ckpt_set_file_mode(unsigned mode);
/* 0: loading refuses a checkpoint's shard file that another user owns or
 * others can write, naming it (hgtrain's training, unless
 * --allow-shared-save-dir: it checks the main file the same way); 1 (the
 * default: generate, merge-checkpoint read other people's checkpoints):
 * any. */
void hg_ckpt_set_allow_shared(int allow);

/* Writes every param and every optimizer-state tensor of ex (by name) and
 * meta to path, each with a CRC-32: the file is built in memory, written
 * to path.tmp (0600; a stale path.tmp, even a symlink, is removed first,
 * never followed: created O_EXCL | O_NOFOLLOW), fsynced, renamed. A failure (a full disk included)
 * leaves any previous file at path untouched, removes path.tmp and returns
 * -1 naming the path. */
int hg_ckpt_save(const char *path, const struct hg_graph *g,
                 struct hg_exec *ex, const struct hg_ckpt_meta *meta,
                 char *err, size_t errlen);
/* Reads path into ex: every param (and state tensor, unless reset_optimizer)
 * must exist with the same shape and CRC; the first mismatch is named with
 * both shapes, a corrupt tensor by name. meta->options and
 * meta->metric_name are malloc'ed (free with hg_ckpt_meta_free; after a
 * failure they are already freed). */
int hg_ckpt_load(const char *path, const struct hg_graph *g,
                 struct hg_exec *ex, int reset_optimizer,
                 struct hg_ckpt_meta *meta, char *err, size_t errlen);
/* Reads and verifies only the metadata of path (no tensors). */
int hg_ckpt_read_meta(const char *path, struct hg_ckpt_meta *meta, char *err,
                      size_t errlen);
void hg_ckpt_meta_free(struct hg_ckpt_meta *meta);
/* Sharded saving (--save-sharded): every rank of comm (NULL: one process)
 * calls it with the same owner[i], the rank that writes parameter i
 * (hg_graph_param_at's order) and its optimizer state. Each rank owning
 * any writes its shard, path.<tag>.shard<k>-of-<n> (k: the owners in rank
 * order; tag: new at every save), like hg_ckpt_save (in memory, .tmp,
 * fsync, rename); once every shard is durable (the ranks tell each other:
 * an allgather), rank 0 writes path itself (rank 0's meta and the index:
 * the shards' names, ranks, sizes, CRC-32s and parameters) the same way,
 * then removes the shards of the checkpoint it replaced. Loading
 * (hg_ckpt_load, hg_ckpt_read_meta) reads either form; a shard missing,
 * of another size or CRC fails naming it. Any failure fails every rank
 * (each removes its own new shard) and leaves the previous checkpoint
 * whole. */
int hg_ckpt_save_sharded(const char *path, const struct hg_graph *g,
                         struct hg_exec *ex, const struct hg_ckpt_meta *meta,
                         struct hg_comm *comm, const int *owner, char *err,
                         size_t errlen);
/* Removes the checkpoint at path and, for a sharded one, its shards;
 * unlink(2)'s result for path. */
int hg_ckpt_remove(const char *path);
/* 1 when shard, a file named like a shard of checkpoint <name>, belongs
 * to no checkpoint: <name> does not exist, is one file, or its index does
 * not list it (left by a save killed before <name> was written, or
 * before the old shards were removed); 0 otherwise, also when <name> is
 * unreadable. */
int hg_ckpt_orphan_shard(const char *shard);
/* Writes the sharded checkpoint src (verified) as one ordinary version 2
 * file dst (tensors by name, the same data, CRCs and metadata); src
 * unsharded is an error. */
int hg_ckpt_merge(const char *src, const char *dst, char *err, size_t errlen);

/* ------------------------------------------------------ planned strategy */

/* How a planned strategy places the training graph (hg_ctl_strategy.kind). */
enum hg_ctl_layout {
    HG_LAYOUT_DP,    /* data-parallel shaped: every op on every rank, each
                        rank its rows (rank_sent), each gradient all-reduced
                        or pushed to a parameter server (agg_ps) */
    HG_LAYOUT_MP,    /* every op group whole on one device (op_rank); every
                        rank reads the whole batch */
    HG_LAYOUT_SPLIT, /* groups that split the batch differently (pieces);
                        every rank reads the whole batch */
    HG_LAYOUT_TP,    /* every op group tensor parallel over every rank
                        (tp_*); every rank reads the whole batch */
    HG_LAYOUT_COUNT
};

/* The one strategy contract: what the trainer reduces a planned, lowered
 * strategy to (trainer/strategy.c; docs/planner.md, "Executing a
 * strategy") and the controller runs (hg_ctl_cfg.strat; its modes:
 * controller/mode.c).  Node ids are those of the train graph as
 * hg_task_train_graph makes it (the task's build, hg_graph_backward,
 * hg_graph_optimizer), parameters in hg_graph_param_at's order.  The
 * arrays are malloc'ed by whoever fills it: hg_ctl_strategy_free. */
struct hg_ctl_strategy {
    enum hg_ctl_layout kind;
    int world;               /* ranks it was reduced for */
    int64_t *rank_sent;      /* [world] rows of the global batch per rank (the
                                whole batch on every rank but under DP) */
    int nparams;
    int nops;                /* nodes of the train graph */
    /* HG_LAYOUT_DP: agg_ps[i] -1: AllReduce over the job (the buckets of
     * hg_ctl_cfg.bucket_cap_mb, which then skip the others); r: rank r is
     * its parameter server (controller/psagg.c, comm/ps.c): r holds its
     * master copy and optimizer state and runs its optimizer op, every rank
     * pushes its gradient (PS_PUSH nodes after the buckets) and the others
     * pull its new value (PS_PULL nodes after the optimizer).  CPU plans
     * and backends with HG_COMM_PS only. */
    int *agg_ps;             /* [nparams] */
    int nps;                 /* parameters served by a PS */
    /* HG_LAYOUT_MP: op_rank[v] the rank that runs node v.  Each rank runs
     * its ops only, SEND/RECV nodes carry the tensors between ranks
     * (controller/mp.c), a parameter lives on the rank of its optimizer
     * op, the loss and sample size are counted by the loss op's rank.  No
     * gradient aggregation; CPU plans, one micro-batch per update. */
    int *op_rank;            /* [nops] */
    /* HG_LAYOUT_MP: the lowering's transfers (planner/lower.c's hg_lxfer,
     * what the simulator prices), which the executor runs: node
     * xfer_node[k]'s output (an optimizer op: its parameter's new value)
     * sent whole to rank xfer_dst[k], after the node (a parameter: before
     * the next step's ops).  mp.c checks them against what each rank's ops
     * read and refuses a placement where they differ, naming the tensor;
     * NULL: derived from op_rank. */
    int nxfers;
    int *xfer_node;          /* [nxfers] */
    int *xfer_dst;           /* [nxfers] */
    /* The execution order (NULL: the graph's id order): a topological
     * order of the nodes.  The forward and backward run in it (model
     * parallelism: this rank's of them, every transfer right after the op
     * making it); the update runs after the gradient statistics, in id
     * order, whatever it says (its ops would otherwise overwrite
     * parameters a backward op of the order still reads, and consecutive
     * ones fuse). */
    int *order;              /* [nops] */
    int moved;               /* forward and backward ops order moves */
    /* HG_LAYOUT_SPLIT (controller/hybrid.c): the bounds of every op's rows
     * cut the planned batch piece[npieces] into pieces [piece[p], piece[p +
     * 1]); a batch of B samples is cut at piece[p] * B / piece[npieces].
     * piece_dev[v * npieces + p]: the rank computing piece p's rows of
     * node v; bwd_node[bwd_start[v] .. bwd_start[v + 1]): the backward
     * nodes that forward node v's gradient rule made, in order (not the
     * accumulating ADDs: hg_graph_node_origin); param_rank[i]: the rank
     * owning parameter i (its optimizer op).  The rest is model
     * parallelism over the split graph. */
    int npieces;
    int64_t *piece;          /* [npieces + 1] */
    int *piece_dev;          /* [nops][npieces] */
    int *bwd_start;          /* [nops + 1] */
    int *bwd_node;           /* [bwd_start[nops]] */
    int *param_rank;         /* [nparams] */
    /* piece_key[v * npieces + p]: where node v's piece p runs in the order
     * (a pipeline's schedule, planner/pipeline.c: each rank runs its pieces
     * micro-batch by micro-batch as its stage's micro-steps come); NULL:
     * by the order above, node by node, each node's pieces in turn. */
    int64_t *piece_key;      /* [nops][npieces] */
    int nmicro;              /* a pipeline's micro-batches (the log), 0: none */
    /* param_ar[i] 1 when parameter i is aggregated by AllReduce among the
     * ranks holding its partial gradients (NULL: none): each of them sums
     * its own pieces' partials, they exchange these sums, each adds them
     * in rank order (the same bits on every one) and updates its own copy
     * of the parameter and its optimizer state; no parameter travels.
     * Otherwise the partials are summed along the pieces' chain to the
     * parameter's owner, which sends the new value to the others at every
     * step. */
    int *param_ar;           /* [nparams] */
    /* param_upd[i] the ranks (a mask, rank r: bit r) where the strategy
     * runs parameter i's optimizer op (NULL or a single bit: its owner
     * alone).  A parameter not aggregated over several ranks above (its
     * gradient made whole on one rank, or a server's) is then updated by
     * each of them: the gradient is sent to every one, each updates its
     * own copy and optimizer state, and the parameter never travels, as
     * the simulator prices it. */
    uint64_t *param_upd;     /* [nparams] */
    /* Recomputation (any layout; NULL: none): forward nodes whose outputs
     * are dropped after the forward and recomputed just before their first
     * backward reader (hg_graph_recompute; a split graph: each of their
     * copies; every rank where the node runs).  The same losses and
     * parameters bit for bit; less activation memory (hg_exec_mem's
     * act_bytes). */
    int *recompute;          /* [nrecompute] */
    int nrecompute;
    /* HG_LAYOUT_TP (controller/tp.c; the lowering's planner/tensor.c).  A
     * layout is -1 whole on every rank, -2 a whole-shaped partial sum
     * (made), or as made (read: the input's shape only), a >= 0 each
     * rank's shard of axis a.  tp_made[t]: tensor t's layout as made, its
     * shard on rank r [tp_tlo, tp_thi)[t * world + r]; tp_read[v *
     * HG_MAX_INPUTS + k]: the layout node v reads input k in; a node
     * splitting an axis computes [tp_lo, tp_hi)[v * world + r] of it
     * (tp_vocab[v] > 0: an embedding's shard of that vocabulary).  The
     * collectives that make the reads from what is made, at node `at`
     * (after it when it makes the tensor, else before it): */
    int ntensors;
    int *tp_made;            /* [ntensors] */
    int *tp_tset;            /* [ntensors] the group set (hg_tp's) making it
                                so, -1: whole everywhere */
    int *tp_set;             /* [nops] each node's set: a read in another
                                set's layout is a collective of its own */
    int64_t *tp_tlo, *tp_thi; /* [ntensors][world] */
    int *tp_read;            /* [nops][HG_MAX_INPUTS] */
    int64_t *tp_lo, *tp_hi;  /* [nops][world] */
    int64_t *tp_vocab;       /* [nops] */
    int tp_ncoll;
    struct hg_ctl_tpcoll {
        int kind;            /* HG_CTL_TP_* */
        int tensor, at, set;
        int from, to;        /* layouts */
    } *tp_coll;              /* [tp_ncoll] */
    char desc[512];          /* one line for the log */
};
/* A tensor-parallel collective: a local slice of a whole tensor, an
 * all-gather of shards, a reduce-scatter or all-reduce of partial sums, a
 * broadcast of a whole tensor from another set's lead (every set holds
 * every rank so far: the whole tensor is already there). */
enum { HG_CTL_TP_SLICE, HG_CTL_TP_ALLGATHER, HG_CTL_TP_REDUCE_SCATTER, HG_CTL_TP_ALLREDUCE,
       HG_CTL_TP_BCAST };

/* Frees s's arrays and zeroes it (NULL: nothing). */
void hg_ctl_strategy_free(struct hg_ctl_strategy *s);

/* ------------------------------------------------------- training step */

/* One process, one device: the task's model with backward and optimizer
 * (train plan) and without (validation plan), sharing parameters by name.
 * A step is any number of micro-batches (hg_ctl_accumulate, --update-freq)
 * and one update (hg_ctl_update): the loss is a sum, the gradient is
 * divided by the summed sample size, so k micro-batches give what one
 * batch of their union would. */
struct hg_ctl_cfg {
    enum hg_optim optim;
    double slowdown;         /* --rank-slowdown: every compute op of this
                                rank's train plan (forward, backward,
                                optimizer) takes this many times its time,
                                the rest asleep (hg_exec_set_slowdown);
                                communication is not slowed; 0: as they are */
    double grad_weight;      /* a test aid (HG_TEST_GRAD_WEIGHT, hgtrain): this
                                rank's gradient counted this many times, a
                                planted bug that the equivalence tests must
                                catch (tests/planted_bug.sh); 0 or 1: as it
                                should be; fp32 only */
    union hg_attr hyper;     /* optimizer hyper-parameters */
    double clip_norm;        /* 0: no clipping */
    int64_t max_batch, max_len;
    int64_t max_tokens;      /* > 0: batches hold at most this many tokens
                                (samples x their cost): plans are sized for
                                batch x length <= max_tokens, not max_batch x
                                max_len (the symbols named "batch" and those
                                declared with max_len) */
    uint64_t seed;           /* parameter init and dropout */
    int max_bad_updates;     /* consecutive NaN/Inf updates before failing */
    int cuda;                /* 1: plans run on GPU cuda_device */
    int cuda_device;
    int lowp;                /* enum hg_lowp: --bf16, --fp16 (GPU only) */
    /* fp16's dynamic loss scale: start, halved on overflow (the update is
     * skipped), doubled after scale_window good updates, never below min */
    double loss_scale_init, loss_scale_min;
    int loss_scale_window;
    /* Data parallelism over the ranks of comm (NULL or a world of 1: one
     * process; not owned; set before hg_ctl_new, which builds the train
     * plan with ALLREDUCE nodes over the gradient block between the
     * backward and the optimizer: controller/dp.c).  hg_ctl_update then
     * sums the gradients (f32, rank order) and loss, sample size, samples,
     * metrics and the stop flag (f64) over the ranks before it divides by
     * the global sample size, so every rank applies the same update; a
     * rank without data this step contributes zeros (a dummy batch).  Free
     * the handle before hg_ctl_free after a failed step: model parallelism
     * may have sends in flight from its buffers (controller/mp.c). */
    struct hg_comm *comm;
    /* The gradient AllReduce nodes are buckets of about this many MiB,
     * each started as soon as the backward has written its last gradient
     * (PyTorch DDP's bucket_cap_mb): on a GPU with nccl on the
     * communicator's stream while the backward goes on; on the CPU at
     * once, from the backward (the same sums); 0: one AllReduce after the
     * backward, as always when an update has several micro-batches
     * (update_freq > 1) or a GPU plan uses a host backend. */
    double bucket_cap_mb;
    int update_freq;
    /* Who owns each parameter (holds it and its optimizer state, writes
     * them to checkpoints: hg_ctl_param_owner).  A parameter with a server
     * (the strategy's agg_ps) is its server's, one updated under model parallelism
     * (its op_rank) its optimizer op's rank's; the others are rank 0's (0: whole-
     * model data parallelism, one checkpoint file) or (1) spread over the
     * ranks of comm, balanced by bytes (--save-sharded: each rank writes
     * its own shard). */
    int spread_owners;
    /* A planned strategy (NULL: plain data parallelism over comm, every
     * gradient all-reduced): struct hg_ctl_strategy.  Not owned. */
    const struct hg_ctl_strategy *strat;
    double ps_timeout_s;     /* a PS wait for a peer (0: 60 s); keep it
                                below comm's timeout */
};

enum { HG_STOP_SIGNAL = 1, HG_STOP_TIME = 2 }; /* hg_ctl_stats.stop bits */

struct hg_ctl_stats {
    double loss_sum;         /* summed over the micro-batches of the step */
    double nll_sum;          /* the task's NLL sum (its model's nll tensor;
                                the loss when it has none) */
    double sample_size;
    double nsentences;       /* samples (batch rows) */
    int stop;                /* in: HG_STOP_* bits, why this rank wants to
                                stop; out of hg_ctl_update: the bits of
                                every rank, OR-ed */
    double gnorm;            /* of the mean gradient, before clipping */
    int clipped;
    int skipped;             /* NaN/Inf: no update was made */
    int64_t dropped;         /* samples of batches smaller than a split
                                strategy's pieces (hybrid.c): not trained on */
    int overflow;            /* fp16: the scaled grads overflowed (skipped) */
    double loss_scale;       /* fp16: the scale of this update */
    double metrics[HG_TASK_MAX_METRICS];
};

struct hg_ctl;

int hg_ctl_new(struct hg_ctl **out, const struct hg_task *task, void *task_state,
               const struct hg_ctl_cfg *cfg, char *err, size_t errlen);
void hg_ctl_free(struct hg_ctl *c);
/* The train plan's graph and executor (checkpoints, inspection). */
struct hg_graph *hg_ctl_graph(struct hg_ctl *c);
struct hg_exec *hg_ctl_exec(struct hg_ctl *c);
/* Forward + backward of one micro-batch of the update that follows
 * num_updates (dropout masks are a function of that number and the
 * micro-batch's position, so a resumed run draws the same ones);
 * gradients accumulate until the next update. A batch of size 0 (dummy)
 * adds nothing. */
int hg_ctl_accumulate(struct hg_ctl *c, uint64_t num_updates,
                      const struct hg_batch *b, struct hg_ctl_stats *st,
                      char *err, size_t errlen);
/* Clip, check and apply the update number num_updates + 1 with lr. */
int hg_ctl_update(struct hg_ctl *c, uint64_t num_updates, double lr,
                  struct hg_ctl_stats *st, char *err, size_t errlen);
/* Validation forward (no dropout, no update): adds loss, sample size and
 * the task's metric sums into st. */
int hg_ctl_valid(struct hg_ctl *c, const struct hg_batch *b,
                 struct hg_ctl_stats *st, char *err, size_t errlen);
/* Gradient buckets started from the backward (0: none; cfg.comm). */
int hg_ctl_buckets(const struct hg_ctl *c);
/* Copies rank 0's parameters and optimizer state to every rank (after
 * initialisation or after rank 0 loaded a checkpoint). */
int hg_ctl_broadcast_params(struct hg_ctl *c, char *err, size_t errlen);
/* Sums validation statistics (loss, sample size, samples, metrics) over
 * the ranks, in place. */
/* Per rank, its compute time (forward + backward of the update's
 * micro-batches, --rank-slowdown's sleep in them included) and its wait time
 * (the update's gradient collectives, where a fast rank waits for the
 * slowest; the statistics reduce that carries these numbers is not
 * counted) of the last update, in seconds: *t [2 * world], t[2r] and
 * t[2r + 1]. Returns world (1 without comm). */
int hg_ctl_rank_times(const struct hg_ctl *c, const double **t);
int hg_ctl_allreduce_stats(struct hg_ctl *c, struct hg_ctl_stats *st,
                           char *err, size_t errlen);
/* The rank that owns parameter i (hg_graph_param_at's order of the train
 * graph): it holds the parameter's master copy and optimizer state and
 * writes them to sharded checkpoints. Its parameter server when
 * the strategy's agg_ps gives one, the rank of its optimizer op under model
 * parallelism (its op_rank); else rank 0, unless cfg.spread_owners: then greedy
 * largest first onto the rank with the fewest bytes so far (the servers'
 * parameters counted; ties: the lower parameter index, the lower rank).
 * The same on every rank. */
int hg_ctl_param_owner(const struct hg_ctl *c, int i);
/* owner[i] = hg_ctl_param_owner(c, i) for the n params of the train graph
 * (owner holds hg_graph_n_params(hg_ctl_graph(c)) ints); the number of
 * ranks that own at least one. */
int hg_ctl_param_owners(const struct hg_ctl *c, int *owner);
/* Parameter-server aggregation (the strategy's agg_ps): copies the optimizer state
 * of the parameters served by ranks other than 0 to every rank (rank 0
 * then checkpoints all of it); model parallelism (its op_rank): every
 * parameter and its state from the rank that owns it.  Every rank calls
 * it; a no-op without such parameters. */
int hg_ctl_sync_state(struct hg_ctl *c, char *err, size_t errlen);
/* The graph and executor holding the model's parameters and optimizer
 * state whole, by the train graph's names (checkpoints save them after
 * hg_ctl_sync_state and load into them before hg_ctl_broadcast_params):
 * the train plan's, or under tensor parallelism (its plan holds shards)
 * a copy of them, made when asked for (-1 with err when it cannot be) and
 * let go at the next micro-batch, that rank 0's are cut from. */
int hg_ctl_state_view(struct hg_ctl *c, struct hg_graph **g, struct hg_exec **ex, char *err,
                      size_t errlen);
/* Parameter and graph summary for the log: parameters, ops, the plan's
 * memory, the BLAS (library and core), ISA and threads; verbose: the
 * plan's activations and the BLAS's whole build line too. */
void hg_ctl_describe(struct hg_ctl *c, int verbose, char *buf, size_t len);

#endif
