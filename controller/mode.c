/* mode.c - the controller's parallel modes as a table (comm/'s backends
 * are one the same way): each row, in its own file, says whether it runs
 * in a controller's train plan and adds its nodes, order and callbacks at
 * the recipe's stages (ctl-impl.h, struct hg__mode).  The table's order is
 * the order in which the claiming rows' hooks run (their start hooks in
 * reverse): the split graph before anything is placed, the AllReduce
 * buckets before the parameter servers' pushes, the servers' handles
 * before the callbacks that run their nodes.  Also the strategy
 * contract's destructor. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "controller/ctl-impl.h"

const struct hg__mode *const hg__ctl_modes[] = {
    &hg__mode_split, /* hybrid.c: pieces of the batch on their devices */
    &hg__mode_tp,    /* tp.c: every op on every rank, on its shards */
    &hg__mode_mp,    /* mp.c: every op group whole on one device */
    &hg__mode_dp,    /* dp.c: every op on every rank, gradients all-reduced */
    &hg__mode_ps,    /* psagg.c: the strategy's parameter servers */
    NULL,
};

void hg_ctl_strategy_free(struct hg_ctl_strategy *s)
{
    if (!s)
        return;
    free(s->rank_sent);
    free(s->agg_ps);
    free(s->op_rank);
    free(s->xfer_node);
    free(s->xfer_dst);
    free(s->order);
    free(s->piece);
    free(s->piece_dev);
    free(s->bwd_start);
    free(s->bwd_node);
    free(s->param_rank);
    free(s->param_ar);
    free(s->param_upd);
    free(s->piece_key);
    free(s->recompute);
    free(s->tp_made);
    free(s->tp_tset);
    free(s->tp_set);
    free(s->tp_tlo);
    free(s->tp_thi);
    free(s->tp_read);
    free(s->tp_lo);
    free(s->tp_hi);
    free(s->tp_vocab);
    free(s->tp_coll);
    memset(s, 0, sizeof *s);
}
