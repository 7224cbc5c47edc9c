/* strategy.h - hgtrain --strategy: a strategy planned by hgplan for this
 * task's training graph, lowered (planner/lower.c) and reduced to what the
 * controller runs: per-rank batch budgets and per-parameter aggregation,
 * per-op ranks, or per-piece ranks of a split batch
 * (docs/planner.md, "Executing a strategy"). */
#ifndef HG_TRAINER_STRATEGY_H
#define HG_TRAINER_STRATEGY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "graph/hg_graph.h"
#include "tasks/hg_task.h"

struct hg_strat_run {
    int world;
    int64_t *rank_sent;   /* [world] rows of the global batch per rank */
    int nparams;
    int *agg_ps;          /* [nparams] -1: AllReduce over the job; r: PS rank r */
    int nps;              /* parameters served by a PS */
    int mp;               /* 1: every op group whole on one device (model
                             parallel): every rank reads the whole batch */
    int nops;
    int *op_rank;         /* [nops] mp: the rank running each op of the
                             training graph */
    int *order;           /* [nops] the strategy's execution order of the
                             training graph's ops (lw->order), or NULL
                             when it is the id order */
    /* groups that split the batch differently (mp is then 1: every rank
     * reads the whole batch; controller/hybrid.c, hg_ctl_cfg.n_pieces) */
    int npieces;
    int64_t *piece;       /* [npieces + 1] bounds of the pieces, rows */
    int *piece_dev;       /* [nops][npieces] the rank of each op's piece */
    int *bwd_start;       /* [nops + 1] */
    int *bwd_node;        /* each forward node's backward nodes */
    int *param_rank;      /* [nparams] each parameter's owner */
    int *param_ar;        /* [nparams] 1: aggregated by AllReduce */
    uint64_t *param_upd;  /* [nparams] ranks placing its update op (not a server's) */
    int *recompute;       /* [nrecompute] forward ops whose outputs are
                             recomputed before the backward (the lowering's:
                             a recomputing group's ops the backward reads) */
    int nrecompute;
    int moved;            /* forward and backward ops that order puts
                             elsewhere than the id order */
    char desc[512];       /* one line for the log */
};

/* Builds the task's training graph for the global batch `batch` (the same
 * build, backward and optimizer as the train plan), the planner graph over
 * cluster_file, loads the strategy file against it (a strategy for another
 * graph, batch or cluster is refused naming the first mismatch), lowers
 * it and reduces it for `world` ranks: data-parallel shaped (rows and
 * aggregation per rank), model parallel (every group whole on one device:
 * op_rank) or split (pieces, piece_dev, bwd_*, param_rank).  text != NULL: the
 * strategy file's text (--plan; path only names it).  -1 with err naming
 * the file and what is refused. */
int hg_strat_plan(struct hg_strat_run *out, const char *path, const char *text,
                  const char *cluster_file, const struct hg_task *task, void *ts,
                  int64_t batch, int64_t max_len, enum hg_optim optim,
                  const union hg_attr *hyper, int world, char *err, size_t errlen);
struct hg_plan_opts;
/* --plan: the same training graph on cluster_file, priced with profile's
 * measurements where its devices name a profiled device (profile NULL:
 * the roofline everywhere), planned by the planner room (hg_plan_run with
 * opts, which should ask for executable strategies), its table printed to
 * o; *text: the chosen strategy as a strategy file (malloc'ed).  -1 with
 * err naming the file. */
int hg_strat_search(char **text, FILE *o, const struct hg_plan_opts *opts,
                    const char *cluster_file, const char *profile,
                    const struct hg_task *task, void *ts,
                    int64_t batch, int64_t max_len, enum hg_optim optim,
                    const union hg_attr *hyper, char *err, size_t errlen);
void hg_strat_free(struct hg_strat_run *s);

#endif
