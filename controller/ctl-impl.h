/* ctl-impl.h - private to controller/: the controller's records, shared by
 * the step (step.c, which runs whatever plan it has) and whole-model data
 * parallelism (dp.c, which adds its AllReduce nodes to that plan). */
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

struct hg_dp; /* dp.c */
struct hg_psagg; /* psagg.c */
struct hg_mp; /* mp.c */
struct hg_hyb; /* hybrid.c */

struct hg_ctl {
    const struct hg_task *task;
    void *ts;                /* the task's state */
    struct hg_ctl_cfg cfg;
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
    struct hg_psagg *ps;     /* parameter servers of cfg.agg_ps, or NULL */
    double ps_sq_own, ps_sq_all; /* this update: squares of the gradients this
                                    rank serves, of all served ones (model
                                    parallelism: that this rank computes, of
                                    all) */
    struct hg_mp *mp;        /* cfg.op_rank's transfers, or NULL */
    struct hg_hyb *hyb;      /* cfg.n_pieces's split graph, or NULL */
    int *rc_rank;            /* [train.g's nodes] cfg.op_rank with the
                                recomputing copies' ranks (their
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

/* dp.c: appends the AllReduce nodes of the gradient block to g (after
 * hg_graph_backward, before hg_graph_optimizer); *early: 1 when they may
 * start from the backward; returns the number of nodes. */
int hg__dp_add_allreduce(struct hg_graph *g, const struct hg_ctl_cfg *cfg, int *early);
/* Installs the callbacks that run g's comm nodes on ex over comm (PS_PUSH
 * and PS_PULL through ps, which may be NULL). */
struct hg_dp *hg__dp_new(struct hg_comm *comm, const struct hg_graph *g,
                         struct hg_exec *ex, struct hg_psagg *ps, char *err,
                         size_t errlen);
void hg__dp_free(struct hg_dp *dp);

/* psagg.c: cfg.agg_ps.  1 when parameter i is served by a PS. */
int hg__psagg_served(const struct hg_ctl_cfg *cfg, int i);
/* Appends a PS_PUSH node per served gradient (after the AllReduce nodes,
 * before hg_graph_optimizer) or, pull = 1, a PS_PULL node per served
 * parameter (after it); returns the number of nodes. */
int hg__psagg_add(struct hg_graph *g, const struct hg_ctl_cfg *cfg, int pull);
/* Drops from order[n] the optimizer ops of parameters served by another
 * rank than me; returns the new n. */
int hg__psagg_filter(const struct hg_graph *g, const struct hg_ctl_cfg *cfg, int me,
                     int *order, int n);
/* The PS handles (one per server rank, every rank a client; every rank
 * calls it, in the same order).  NULL with err. */
struct hg_psagg *hg__psagg_new(struct hg_comm *comm, const struct hg_graph *g,
                               struct hg_exec *ex, const struct hg_ctl_cfg *cfg,
                               char *err, size_t errlen);
void hg__psagg_free(struct hg_psagg *ps);
/* A PS_PUSH or PS_PULL node's callbacks (dp.c installs them). */
int hg__psagg_start(struct hg_psagg *ps, struct hg_exec *ex, int node, char *err,
                    size_t errlen);
int hg__psagg_wait(struct hg_psagg *ps, struct hg_exec *ex, int node, char *err,
                   size_t errlen);
/* Sum of squares of the (summed) gradients this rank serves. */
double hg__psagg_sumsq(const struct hg_psagg *ps, struct hg_exec *ex);
/* hg_ctl_sync_state's work. */
int hg__psagg_sync_state(struct hg_psagg *ps, struct hg_exec *ex, char *err,
                         size_t errlen);

/* mp.c: cfg.op_rank.  Appends to g (after hg_graph_optimizer) this
 * rank's SEND and RECV nodes, rewires its ops' inputs made on other ranks
 * to the RECVs and gives its order (*order malloc'ed): its ops in the
 * execution order (cfg.op_order's, else id order), each transfer right
 * after the op making it (parameters first).
 * Returns the order's length, or -1 with err (a placement that does not
 * fit the graph, one that could deadlock). */
int hg__mp_plan(struct hg_graph *g, const struct hg_ctl_cfg *cfg, int me, int world,
                int **order, char *err, size_t errlen);
/* The execution order of g's first nn nodes (every node, phase by phase)
 * into seq[nn]: cfg.op_order's forward and backward nodes, then the
 * update's in id order (the controller runs it after the gradient
 * statistics); the id order without cfg.op_order; recomputing copies
 * (not in cfg.op_order) just before their first readers.  -1 with err
 * when the order lacks some of them.  Data parallelism orders its plan by
 * it too. */
int hg__mp_sequence(const struct hg_graph *g, const struct hg_ctl_cfg *cfg, int nn, int *seq,
                    char *err, size_t errlen);
/* Installs the callbacks that run the SEND and RECV nodes over comm. */
struct hg_mp *hg__mp_new(struct hg_comm *comm, const struct hg_graph *g,
                         struct hg_exec *ex, const struct hg_ctl_cfg *cfg, char *err,
                         size_t errlen);
void hg__mp_free(struct hg_mp *mp);
/* The update the next pass belongs to (both ends of a transfer check it). */
void hg__mp_set_step(struct hg_mp *mp, uint64_t step);
/* The rank owning parameter tensor `param` (that of its optimizer op);
 * -1: no op updates it (every rank has it). */
int hg__mp_owner(const struct hg_mp *mp, int param);
/* Every parameter and its optimizer state broadcast from its owner: every
 * rank then holds all of them (checkpoints, validation). */
int hg__mp_sync(struct hg_mp *mp, struct hg_exec *ex, char *err, size_t errlen);

/* hybrid.c: cfg.n_pieces.  After the task's build: copies the forward
 * once per piece of the batch (inputs cut by row), sets m's loss and NLL to
 * the pieces' sums; NULL with err (an op that mixes rows across the batch,
 * too many pieces). */
struct hg_hyb *hg__hyb_split(struct hg_graph *g, struct hg_task_model *m,
                             const struct hg_ctl_cfg *cfg, char *err, size_t errlen);
/* After the optimizer: the rank of every node of g (-1: none runs it) into
 * *op_rank and an order of its forward and backward nodes that follows
 * cfg.op_order's (where the pieces' accumulation allows) into *seq[*nseq]
 * (both owned by h), for hg__mp_plan. */
int hg__hyb_ranks(struct hg_hyb *h, struct hg_graph *g, const struct hg_ctl_cfg *cfg,
                  const int **op_rank, const int **seq, int *nseq, char *err,
                  size_t errlen);
/* The pieces' batch symbols for the batch symbol's value in sym[]. */
void hg__hyb_syms(const struct hg_hyb *h, int64_t *sym);
/* After fill() and hg_exec_prepare: the pieces' rows of the inputs copied
 * into their own inputs (a batch of B). */
int hg__hyb_copy(const struct hg_hyb *h, struct hg_exec *ex, const struct hg_graph *g,
                 int64_t B);
/* The nodes of the split graph standing for the task's nodes v[n] (their
 * copies per piece, or themselves) into out[n * pieces]; returns how many. */
int hg__hyb_nodes(const struct hg_hyb *h, const int *v, int n, int *out);
/* Parameters all-reduced among their pieces' ranks (cfg.param_ar). */
int hg__hyb_allreduced(const struct hg_hyb *h);
/* Parameters updated on several ranks from one gradient (cfg.param_upd). */
int hg__hyb_replicated(const struct hg_hyb *h);
/* The pieces: a batch needs as many samples at least. */
int hg__hyb_pieces(const struct hg_hyb *h);
void hg__hyb_free(struct hg_hyb *h);

#endif
