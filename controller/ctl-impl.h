/* ctl-impl.h - private to controller/: the controller's records, shared by
 * the step (step.c, which builds and runs whatever plan it has) and the
 * parallel modes (one file each, rows of hg__ctl_modes in mode.c), which
 * add their nodes to that plan and run them. */
#ifndef HG_CTL_IMPL_H
#define HG_CTL_IMPL_H

#include "controller/hg_controller.h"

/* A plan's order is [0, n_fb) forward + backward, [n_fb, n_c) the
 * communication nodes of the update (gradient aggregation), [n_c, n) the
 * optimizer; the loss statistics, gradient norm, NaN checks and clipping
 * run between the last two. */
struct plan {
    struct hg_graph *g;
    struct hg_exec *ex;
    struct hg_task_model m;
    int n;      /* nodes in the order */
    int n_fb;   /* forward + backward nodes */
    int n_c;    /* end of the update's comm nodes */
    int n_o;    /* end of the optimizer; [n_o, n): the PS_PULL nodes that
                   bring parameters from their servers (psagg.c) */
};

/* The placement the model-parallel executor runs (mp.c): the rank of each
 * of the first n_op_rank nodes of the train graph (the strategy's op_rank,
 * the split graph's, or with the recomputing copies: their originals') and
 * the order of its forward and backward (NULL: the id order), and the
 * transfers the lowering gives (model parallelism; NULL: derived). */
struct hg__place {
    const int *op_rank;      /* [n_op_rank] */
    int n_op_rank;
    const int *order;        /* [n_order] */
    int n_order;
    const int *xfer_node;    /* [nxfers] the lowering's transfers
                                (hg_ctl_strategy.xfer_*), or NULL */
    const int *xfer_dst;     /* [nxfers] */
    int nxfers;
};

struct hg_dp; /* dp.c */
struct hg_psagg; /* psagg.c */
struct hg_mp; /* mp.c */
struct hg_hyb; /* hybrid.c */
struct hg_tpx; /* tp.c */

/* A parallel mode of the train plan: one row per file (dp.c, psagg.c,
 * mp.c, hybrid.c), listed in hg__ctl_modes (mode.c).  build() asks every
 * row whether it claims this controller's plan, then calls the claiming
 * rows' hooks in table order at each stage of the recipe; any hook may
 * be NULL.  A new mode is a file with its row and one line in the table
 * (docs/architecture.md, "Adding a parallel mode"). */
struct hg__mode {
    const char *name;
    /* 1: the mode runs in c's train plan (c->cfg, c->s, c->comm set) */
    int (*claims)(const struct hg_ctl *c);
    /* after the task's forward, before the backward: rewrites p */
    int (*split_graph)(struct hg_ctl *c, struct plan *p, char *err, size_t errlen);
    /* the nodes standing for the task's nodes v[n] (recomputation) into
     * *out (malloc'ed); their number, -1 when out of memory */
    int (*copies)(const struct hg_ctl *c, const int *v, int n, int **out);
    /* after the backward, before the optimizer: appends the update's
     * first comm nodes (gradient aggregation); returns how many; *early:
     * whether they may start from the backward (in: the rows' before) */
    int (*aggregate)(struct hg_ctl *c, struct plan *p, int *early);
    /* after the optimizer: appends the plan's last comm nodes; how many */
    int (*finish)(struct hg_ctl *c, struct plan *p);
    /* the whole train plan's order (*order malloc'ed); its length, -1 with
     * err.  NULL: the id order, or the strategy's (hg__mp_sequence) */
    int (*order)(struct hg_ctl *c, struct plan *p, int **order, char *err,
                 size_t errlen);
    /* drops from order[n] what this rank does not run; the new n */
    int (*filter)(const struct hg_ctl *c, const struct plan *p, int *order, int n);
    /* after the executor: installs the comm callbacks, its state in c */
    int (*start)(struct hg_ctl *c, struct plan *p, char *err, size_t errlen);
    void (*free)(struct hg_ctl *c);

    /* The step (step.c asks these instead of testing which mode runs). */
    /* 1: one micro-batch per update only (--update-freq 1); NULL: any */
    int (*one_micro)(const struct hg_ctl *c);
    int partial;             /* 1: each rank's grad block holds the gradients
                                it computes only: the norm is the sum over
                                the ranks of sumsq's */
    /* before micro-batch b of update `update`: 1 to drop it (counted in
     * st->dropped), 0 to run it */
    int (*micro)(struct hg_ctl *c, const struct hg_batch *b, uint64_t update,
                 struct hg_ctl_stats *st);
    /* the train plan's symbols for a batch (sym: the task's, filled) */
    void (*syms)(const struct hg_ctl *c, int64_t *sym);
    /* after fill() and hg_exec_prepare of the train plan: inputs of its
     * own from the batch's (B samples) */
    int (*inputs)(const struct hg_ctl *c, struct plan *p, int64_t B);
    /* 0: another rank counts the loss and sample size (nll 0) or the NLL
     * (nll 1) */
    int (*counts)(const struct hg_ctl *c, int nll);
    /* the squares of the gradients this rank alone holds (the statistics
     * reduce adds them over the ranks) */
    int (*sumsq)(struct hg_ctl *c, double *own, char *err, size_t errlen);
    /* hg_ctl_sync_state's work */
    int (*sync)(struct hg_ctl *c, char *err, size_t errlen);
    /* before a validation batch: *skip 1 when this rank runs none */
    int (*valid)(struct hg_ctl *c, int *skip, char *err, size_t errlen);
    /* the rank holding parameter i, tensor `param` (-1: the default owner) */
    int (*owner)(const struct hg_ctl *c, int i, int param);
    /* more words for hg_ctl_describe, appended to buf[len] */
    void (*describe)(const struct hg_ctl *c, char *buf, size_t len);

    /* A mode whose train plan holds parameter shards (tensor parallelism)
     * keeps them whole elsewhere: `whole` gives that graph and executor
     * (checkpoints; the valid plan's values), which `sync` gathers into;
     * `init` sets the initial values (after the train plan's own),
     * `broadcast` rank 0's whole values everywhere, each then cut into
     * the shards. */
    int (*whole)(struct hg_ctl *c, struct hg_graph **g, struct hg_exec **ex, char *err,
                 size_t errlen);
    int (*init)(struct hg_ctl *c, uint64_t seed, char *err, size_t errlen);
    int (*broadcast)(struct hg_ctl *c, char *err, size_t errlen);
};

enum { HG__MAX_MODES = 8 };
/* The rows, NULL-terminated. */
extern const struct hg__mode *const hg__ctl_modes[];
extern const struct hg__mode hg__mode_split, hg__mode_mp, hg__mode_dp, hg__mode_ps, hg__mode_tp;

struct hg_ctl {
    const struct hg_task *task;
    void *ts;                /* the task's state */
    struct hg_ctl_cfg cfg;
    const struct hg_ctl_strategy *s; /* cfg.strat (NULL: none) */
    struct hg__place place;  /* the strategy's placement and order, as
                                the modes make them (build) */
    const struct hg__mode *mode[HG__MAX_MODES]; /* the rows claiming the
                                                   train plan, table order */
    int nmode;
    int partial;             /* some row's mode->partial: the ranks' grad
                                blocks hold their own gradients only */
    struct plan train, valid;
    size_t ngrad;
    int n_acc;               /* micro-batches with data in this step */
    int bad_in_a_row;
    double loss_scale;       /* fp16: current dynamic loss scale; else 1 */
    int good_in_a_row;       /* fp16: updates since the last overflow */
    int valid_stale;         /* valid params older than train params */
    struct hg_comm *comm;    /* cfg.comm: NULL: one process */
    struct hg_dp *dp;        /* the comm callbacks of the train plan */
    int early;               /* comm nodes may start from the backward */
    int nbk;                 /* gradient buckets started from the backward */
    int *owner;              /* [train.g's params] the rank owning each
                                (hg_ctl_param_owner) */
    struct hg_psagg *ps;     /* the strategy's parameter servers (psagg.c), or NULL */
    double sq_own, sq_all;   /* this update: squares of the gradients this
                                rank alone holds, of all such (the rows'
                                sumsq: the ones it serves, or under model
                                parallelism the ones it computes) */
    struct hg_mp *mp;        /* model parallelism's transfers (mp.c), or NULL */
    struct hg_hyb *hyb;      /* the strategy's split graph (hybrid.c), or NULL */
    struct hg_tpx *tp;       /* tensor parallelism's collectives and whole
                                parameters (tp.c), or NULL */
    int *rc_rank;            /* [train.g's nodes] the strategy's op_rank with
                                the recomputing copies' ranks (their
                                originals'), or NULL */
    int mp_loss, mp_nll;     /* model parallelism: this rank runs the loss
                                (and sample size) op, the nll op */
    double t_compute, t_wait; /* this update so far: forward + backward,
                                 gradient collectives (seconds) */
    int world;               /* ranks of comm (1 without) */
    double *red;             /* [R_N + 2 * world] the statistics reduce's
                                buffer: step.c's slots, then per rank its
                                compute and wait times */
    double *rank_t;          /* [2 * world] the last update's, per rank */
};

/* dp.c: hg__mode_dp, whole-model data parallelism (AllReduce of the
 * gradient block; PS_PUSH and PS_PULL nodes run through c->ps). */

/* psagg.c: hg__mode_ps, the strategy's parameter servers (s->agg_ps).
 * 1 when parameter i is served by a PS. */
int hg__psagg_served(const struct hg_ctl_strategy *s, int i);
/* A PS_PUSH or PS_PULL node's callbacks (dp.c installs them). */
int hg__psagg_start(struct hg_psagg *ps, struct hg_exec *ex, int node, char *err,
                    size_t errlen);
int hg__psagg_wait(struct hg_psagg *ps, struct hg_exec *ex, int node, char *err,
                   size_t errlen);

/* mp.c: hg__mode_mp, c->place's model parallelism.  Appends to g (after
 * hg_graph_optimizer) this rank's SEND and RECV nodes, rewires its ops'
 * inputs made on other ranks to the RECVs and gives its order (*order
 * malloc'ed): its ops in the execution order (pl->order's, else id
 * order), each transfer right after the op making it (parameters first).
 * Returns the order's length, or -1 with err (a placement that does not
 * fit the graph, one that could deadlock). */
int hg__mp_plan(struct hg_graph *g, const struct hg__place *pl, int me, int world,
                int **order, char *err, size_t errlen);
/* The execution order of g's first nn nodes (every node, phase by phase)
 * into seq[nn]: pl->order's forward and backward nodes, then the
 * update's in id order (the controller runs it after the gradient
 * statistics); the id order without pl->order; recomputing copies (not
 * in pl->order) just before their first readers.  -1 with err when the
 * order lacks some of them.  Data parallelism orders its plan by it too. */
int hg__mp_sequence(const struct hg_graph *g, const struct hg__place *pl, int nn, int *seq,
                    char *err, size_t errlen);
/* After the executor: the SEND and RECV nodes' callbacks over c->comm
 * (c->mp), and which of the loss and NLL this rank counts. */
int hg__mp_start(struct hg_ctl *c, struct plan *p, char *err, size_t errlen);
void hg__mp_free(struct hg_mp *mp);
/* The model-parallel step's hooks (struct hg__mode), split strategies'
 * too. */
int hg__mp_micro(struct hg_ctl *c, const struct hg_batch *b, uint64_t update,
                 struct hg_ctl_stats *st);
int hg__mp_counts(const struct hg_ctl *c, int nll);
int hg__mp_sumsq(struct hg_ctl *c, double *own, char *err, size_t errlen);
int hg__mp_sync(struct hg_ctl *c, char *err, size_t errlen);
int hg__mp_valid(struct hg_ctl *c, int *skip, char *err, size_t errlen);
int hg__mp_owner(const struct hg_ctl *c, int i, int param);

/* hybrid.c: hg__mode_split, the strategy's pieces (s->npieces): the
 * forward copied once per piece of the batch, run as model parallelism
 * over the copies. */

#endif
