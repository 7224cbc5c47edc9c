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

#include "controller/hg_controller.h"
#include "graph/hg_graph.h"
#include "tasks/hg_task.h"

/* Builds the task's training graph for the global batch `batch` and
 * max_len, the longest sample (hg_task_longest; the same build, backward
 * and optimizer as the train plan), the planner graph over
 * cluster_file, loads the strategy file against it (a strategy for another
 * graph, batch or cluster is refused naming the first mismatch), lowers
 * it and reduces it for `world` ranks to the controller's strategy
 * contract (hg_ctl_strategy_free frees it): data-parallel shaped (rows and
 * aggregation per rank), model parallel (every group whole on one device:
 * op_rank) or split (pieces, piece_dev, bwd_*, param_rank).  text != NULL: the
 * strategy file's text (--plan; path only names it).  -1 with err naming
 * the file and what is refused. */
int hg_strat_plan(struct hg_ctl_strategy *out, const char *path, const char *text,
                  const char *cluster_file, const struct hg_task *task, void *ts,
                  int64_t batch, int64_t max_len, enum hg_optim optim,
                  const union hg_attr *hyper, int world, char *err, size_t errlen);
struct hg_plan_opts;
struct hg_graph_made;
/* --plan: the same training graph on cluster_file, its compute priced at
 * max_len and every device's memory at mem_len (the longest sample, as
 * hg_strat_plan checks it: hg_plan_price), with profile's
 * measurements where its devices name a profiled device (profile NULL:
 * the roofline everywhere), planned by the planner room (hg_plan_run with
 * opts, which should ask for executable strategies), its table printed to
 * o; *text: the chosen strategy as a strategy file (malloc'ed) that
 * records made (the optimizer and the task's options).  -1 with err
 * naming the file. */
int hg_strat_search(char **text, FILE *o, const struct hg_plan_opts *opts,
                    const char *cluster_file, const char *profile,
                    const struct hg_task *task, void *ts,
                    int64_t batch, int64_t max_len, int64_t mem_len, enum hg_optim optim,
                    const union hg_attr *hyper, const struct hg_graph_made *made,
                    char *err, size_t errlen);

#endif
