/* strategy.c - hgtrain --strategy: the strategy file planned for this
 * task (hgplan --out), lowered, and turned into what the controller runs:
 * data-parallel shaped, each rank's rows of the global batch (its budget)
 * and each parameter's aggregation (AllReduce or the rank of its parameter
 * server); model parallel, the rank of every op; any other, the pieces of
 * the batch (every op's row bounds), each op's rank per piece, the
 * backward nodes of each forward node and the parameters' owners
 * (controller/hybrid.c; these two: every rank reads the whole batch);
 * and the order.  The controller
 * never sees the planner: it gets these plain arrays, its strategy
 * contract (struct hg_ctl_strategy).
 * --plan: the planner room's baselines and search (planner/plan.c) over
 * the same graph, restricted to what this file executes. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/hg_planner.h"
#include "trainer/strategy.h"

/* The rows each device holds of op v ([ndev][2], zeros where none). */
static void op_rows(const struct hg_lowered *lw, int v, int64_t *rows)
{
    memset(rows, 0, (size_t)lw->ndev * 2 * sizeof *rows);
    const struct hg_lop *op = &lw->ops[v];
    for (int k = 0; k < op->nplace; k++) {
        rows[2 * op->place[k].dev] = op->place[k].begin;
        rows[2 * op->place[k].dev + 1] = op->place[k].end;
    }
}

/* out->order: the lowered order when it differs from the id order in the
 * forward and backward (what the controller runs in it; the update runs in
 * id order whatever it says: hg_ctl_strategy.order), with out->moved. */
static int planned_order(struct hg_ctl_strategy *out, const struct hg_lowered *lw,
                         const struct hg_graph *g, char *err, size_t errlen)
{
    out->nops = lw->nops;
    int k = 0;
    for (int i = 0; i < lw->nops; i++) {
        int v = lw->order[i];
        if (hg_graph_node(g, v)->phase != HG_PH_UPDATE)
            out->moved += v != k++;
    }
    if (out->moved == 0)
        return 0;
    out->order = malloc((size_t)lw->nops * sizeof *out->order);
    if (!out->order)
        return hg_kerr(err, errlen, "out of memory");
    memcpy(out->order, lw->order, (size_t)lw->nops * sizeof *out->order);
    return 0;
}

/* out->recompute: the ops the lowering recomputes (rhost: a recomputing
 * group's forward ops whose outputs only the group and the backward
 * read). */
static int recomputed(struct hg_ctl_strategy *out, const struct hg_lowered *lw, char *err,
                      size_t errlen)
{
    int n = 0;
    for (int v = 0; v < lw->nops; v++)
        n += lw->ops[v].rhost >= 0;
    if (n == 0)
        return 0;
    out->recompute = malloc((size_t)n * sizeof *out->recompute);
    if (!out->recompute)
        return hg_kerr(err, errlen, "out of memory");
    for (int v = 0; v < lw->nops; v++)
        if (lw->ops[v].rhost >= 0)
            out->recompute[out->nrecompute++] = v;
    return 0;
}

/* The log's words for the order and recomputation into b[160] (""): the
 * id order and none). */
static const char *order_desc(const struct hg_ctl_strategy *out, const struct hg_strategy *st,
                              char *b)
{
    int n = 0, k = 0;
    b[0] = 0;
    if (out->order)
        n = snprintf(b, 160, "; planned order (%d ops moved)", out->moved);
    for (int g = 0; g < st->ngroups; g++)
        k += st->cfg[g].recompute != 0;
    if (k > 0 && n >= 0 && n < 160)
        snprintf(b + n, 160 - (size_t)n, "; recomputation in %d group%s (%d ops)", k,
                 k == 1 ? "" : "s", out->nrecompute);
    return b;
}

/* out->xfer_*: the lowering's transfers of a model-parallel strategy,
 * every one a whole tensor from its op's device to another. */
static int mp_transfers(struct hg_ctl_strategy *out, const struct hg_lowered *lw, char *err,
                        size_t errlen)
{
    int n = 0;
    /* a test aid (tests/strategy_mp.sh): transfer k left out, a planted
     * bug the executor must refuse */
    const char *drop = getenv("HG_TEST_DROP_TRANSFER");
    long skip = drop && *drop ? strtol(drop, NULL, 10) : -1;
    for (int v = 0; v < lw->nops; v++)
        n += lw->ops[v].nxfer;
    out->xfer_node = malloc(((size_t)n + 1) * sizeof *out->xfer_node);
    out->xfer_dst = malloc(((size_t)n + 1) * sizeof *out->xfer_dst);
    if (!out->xfer_node || !out->xfer_dst)
        return hg_kerr(err, errlen, "out of memory");
    for (int v = 0; v < lw->nops; v++)
        for (int k = 0; k < lw->ops[v].nxfer; k++) {
            const struct hg_lxfer *x = &lw->ops[v].xfer[k];
            HG_CHECK(!x->split && x->begin == 0 && x->end == lw->batch);
            if (skip-- == 0)
                continue;
            out->xfer_node[out->nxfers] = v;
            out->xfer_dst[out->nxfers++] = x->dst;
        }
    return 0;
}

/* A tensor-parallel layout in the contract's numbers (hg_ctl_strategy). */
static int tp_lay(struct hg_tplayout l, int read)
{
    return l.kind == HG_TPL_SPLIT ? l.axis
           : l.kind == HG_TPL_FULL ? -1
           : l.kind == HG_TPL_PARTIAL && !read ? -2
           : l.kind == HG_TPL_ANY && read ? -2 : -3;
}

/* [lo, hi) of an axis of len on every rank: the set's shards
 * (hg_tp_split), into lo[world], hi[world]. */
static void tp_bounds(const struct hg_tpset *set, int64_t len, int64_t *lo, int64_t *hi)
{
    int64_t b = 0;
    hg_tp_split(len, set->w, set->n, hi); /* the sizes first */
    for (int r = 0; r < set->n; r++) {
        lo[r] = b;
        hi[r] = b += hi[r];
    }
}

/* What the executor cannot run yet of a lowering with tensor-parallel
 * groups over world ranks (0: none), named in err: what
 * tensor_parallel refuses, and hgtrain --plan's TP rows (tp_runs). */
static int tp_refused(const struct hg_lowered *lw, const struct hg_graph *g, int world,
                      char *err, size_t errlen)
{
    const struct hg_tp *tp = lw->tp;
    const struct hg_pgraph *pg = lw->pg;
    for (int k = 0; k < tp->nset; k++)
        if (tp->set[k].n != world)
            return hg_kerr(err, errlen, "group %d is tensor parallel over %d of the %d "
                           "devices: hgtrain runs tensor parallelism over every device only "
                           "so far", tp->set[k].group, tp->set[k].n, world);
    for (int v = 0; v < lw->nops; v++) {
        const struct hg_tpop *o = &tp->op[v];
        const struct hg_node_info *nd = hg_graph_node(g, v);
        if (o->set < 0)
            return hg_kerr(err, errlen, "op %d is in group %d, which is not tensor parallel: "
                           "hgtrain runs a strategy whose every group is tensor parallel "
                           "only so far", v, lw->ops[v].group);
        if (o->mode != HG_TPM_REPL &&
            (nd->op == HG_OP_DROPOUT ||
             ((nd->op == HG_OP_ATTENTION || nd->op == HG_OP_ATTENTION_BWD) && nd->attr.attn.p > 0)))
            return hg_kerr(err, errlen, "op %d (%s) splits its dropout masks' axis: not run "
                           "yet (train with --dropout 0)", v, hg_op_table[nd->op].name);
    }
    for (int t = 0; t < pg->ntensors; t++) {
        struct hg_tplayout l = tp->tset[t] >= 0 ? tp->tlay[t] : (struct hg_tplayout){HG_TPL_FULL, -1};
        if (tp_lay(l, 0) == -3)
            return hg_kerr(err, errlen, "tensor %d is made %s: not run yet", t,
                           hg_tpl_kind_name(l.kind));
    }
    for (int v = 0; v < lw->nops; v++)
        for (int k = 0; k < pg->ops[v].nin; k++)
            if (tp_lay(tp->op[v].in[k], 1) == -3)
                return hg_kerr(err, errlen, "op %d reads input %d %s: not run yet", v, k,
                               hg_tpl_kind_name(tp->op[v].in[k].kind));
    return 0;
}

/* hg_plan_opts.tp_runs under hgtrain --plan: ctx the plan's graph. */
static int tp_runs(void *ctx, const struct hg_lowered *lw, char *why, size_t n)
{
    return tp_refused(lw, ctx, lw->ndev, why, n);
}

/* Every group tensor parallel over every rank: the lowering's layouts,
 * shards and collectives (planner/tensor.c) as the executor's
 * (controller/tp.c).  What it cannot run yet is refused by name. */
static int tensor_parallel(struct hg_ctl_strategy *out, const struct hg_lowered *lw,
                           const struct hg_graph *g, const char *path, int world, char *err,
                           size_t errlen)
{
    const struct hg_tp *tp = lw->tp;
    const struct hg_pgraph *pg = lw->pg;
    size_t T = (size_t)pg->ntensors, N = (size_t)lw->nops, W = (size_t)world;
    char e[512];
    if (tp_refused(lw, g, world, e, sizeof e) != 0)
        return hg_kerr(err, errlen, "--strategy %s: %s", path, e);
    out->ntensors = pg->ntensors;
    out->tp_made = malloc((T + 1) * sizeof(int));
    out->tp_tset = malloc((T + 1) * sizeof(int));
    out->tp_set = malloc((N + 1) * sizeof(int));
    out->tp_tlo = calloc(T * W + 1, sizeof(int64_t));
    out->tp_thi = calloc(T * W + 1, sizeof(int64_t));
    out->tp_read = malloc((N * HG_MAX_INPUTS + 1) * sizeof(int));
    out->tp_lo = calloc(N * W + 1, sizeof(int64_t));
    out->tp_hi = calloc(N * W + 1, sizeof(int64_t));
    out->tp_vocab = calloc(N + 1, sizeof(int64_t));
    out->tp_coll = calloc((size_t)tp->ncoll + 1, sizeof(*out->tp_coll));
    if (!out->tp_made || !out->tp_tset || !out->tp_set || !out->tp_tlo || !out->tp_thi ||
        !out->tp_read || !out->tp_lo || !out->tp_hi || !out->tp_vocab || !out->tp_coll)
        return hg_kerr(err, errlen, "out of memory");
    for (size_t t = 0; t < T; t++) {
        struct hg_tplayout l = tp->tset[t] >= 0 ? tp->tlay[t] : (struct hg_tplayout){HG_TPL_FULL, -1};
        out->tp_made[t] = tp_lay(l, 0);
        out->tp_tset[t] = tp->tset[t];
        if (l.kind == HG_TPL_SPLIT)
            tp_bounds(&tp->set[tp->tset[t]], pg->shape[t].dim[l.axis], out->tp_tlo + t * W,
                      out->tp_thi + t * W);
    }
    for (int v = 0; v < lw->nops; v++) {
        const struct hg_tpop *o = &tp->op[v];
        out->tp_set[v] = o->set;
        for (int k = 0; k < HG_MAX_INPUTS; k++) {
            int r = k < pg->ops[v].nin ? tp_lay(o->in[k], 1) : -2;
            out->tp_read[(size_t)v * HG_MAX_INPUTS + (size_t)k] = r;
        }
        for (int i = 0; o->mode != HG_TPM_REPL && i < o->nshard; i++) {
            out->tp_lo[(size_t)v * W + (size_t)o->shard[i].dev] = o->shard[i].begin;
            out->tp_hi[(size_t)v * W + (size_t)o->shard[i].dev] = o->shard[i].end;
        }
        if (o->mode == HG_TPM_VOCAB)
            out->tp_vocab[v] = o->len;
    }
    for (int i = 0; i < tp->ncoll; i++) {
        const struct hg_tpcoll *c = &tp->coll[i];
        static const int kind[] = {
            [HG_TPC_SLICE] = HG_CTL_TP_SLICE, [HG_TPC_ALLGATHER] = HG_CTL_TP_ALLGATHER,
            [HG_TPC_REDUCE_SCATTER] = HG_CTL_TP_REDUCE_SCATTER,
            [HG_TPC_ALLREDUCE] = HG_CTL_TP_ALLREDUCE, [HG_TPC_BCAST] = HG_CTL_TP_BCAST};
        out->tp_coll[i] = (struct hg_ctl_tpcoll){kind[c->kind], c->tensor, c->at, c->set,
                                                 c->from.kind == HG_TPL_LEAD ? -1
                                                                             : tp_lay(c->from, 0),
                                                 tp_lay(c->to, 1)};
    }
    out->tp_ncoll = tp->ncoll;
    out->kind = HG_LAYOUT_TP;
    out->world = world;
    out->nops = lw->nops;
    out->nparams = pg->nparams;
    for (int d = 0; d < world; d++)
        out->rank_sent[d] = lw->batch;
    int split = 0;
    for (int v = 0; v < lw->nops; v++)
        split += tp->op[v].mode != HG_TPM_REPL;
    int n = snprintf(out->desc, sizeof out->desc, "| strategy %s: tensor parallel over %d "
                     "ranks, shard weights", path, world);
    for (int d = 0; d < world && n > 0 && n < (int)sizeof out->desc - 24; d++)
        n += snprintf(out->desc + n, sizeof out->desc - (size_t)n, "%s%d", d ? "," : " ",
                      tp->set[0].w[d]);
    if (n > 0 && n < (int)sizeof out->desc)
        snprintf(out->desc + n, sizeof out->desc - (size_t)n, "; %d of %d ops split, %d "
                 "collectives; the whole batch on every rank\n", split, lw->nops, tp->ncoll);
    return 0;
}

/* All groups model parallel (1), none (0), or a mix (2). */
static int all_mp(const struct hg_lowered *lw, const struct hg_strategy *st)
{
    int k0 = lw->ops[0].group, mp = st->cfg[k0].mode == HG_MODE_MP;
    for (int v = 0; v < lw->nops; v++)
        if ((st->cfg[lw->ops[v].group].mode == HG_MODE_MP) != mp)
            return 2;
    return mp;
}

/* A strategy whose groups split the batch differently (controller/
 * hybrid.c): the pieces (the bounds of every forward and backward op's
 * rows), each op's rank per piece, the backward nodes each forward node's
 * gradient rule made (hg_graph_node_origin) and the parameters' owners
 * (a server, else the first device of the optimizer op). */
static int hybrid(struct hg_ctl_strategy *out, const struct hg_lowered *lw,
                  const struct hg_pgraph *pg, const struct hg_graph *g, char *err,
                  size_t errlen)
{
    int nops = lw->nops, np = 0;
    /* the lowering's cuts (the rows where a forward or backward op's place
     * begins or ends), what the simulator priced the pieces by */
    int64_t *cut = malloc(((size_t)lw->batch + 2) * sizeof *cut); /* [np + 1] */
    if (!cut)
        return hg_kerr(err, errlen, "out of memory");
    cut[0] = 0;
    for (int64_t x = 1; x <= lw->batch; x++)
        if (x == lw->batch || lw->cutn[x] > 0)
            cut[++np] = x;
    out->npieces = np;
    out->piece = cut;
    out->piece_dev = malloc((size_t)nops * (size_t)np * sizeof *out->piece_dev);
    out->bwd_start = calloc((size_t)nops + 2, sizeof *out->bwd_start);
    out->bwd_node = malloc(((size_t)hg_graph_n_nodes(g) + 1) * sizeof *out->bwd_node);
    out->param_rank = malloc(((size_t)pg->nparams + 1) * sizeof *out->param_rank);
    out->param_ar = malloc(((size_t)pg->nparams + 1) * sizeof *out->param_ar);
    out->param_upd = calloc((size_t)pg->nparams + 1, sizeof *out->param_upd);
    int *prank = malloc(((size_t)hg_graph_n_tensors(g) + 1) * sizeof *prank); /* [nt] */
    if (!out->piece_dev || !out->bwd_start || !out->bwd_node || !out->param_rank ||
        !out->param_ar || !out->param_upd || !prank) {
        free(prank);
        return hg_kerr(err, errlen, "out of memory");
    }
    for (int v = 0; v < nops; v++)
        for (int p = 0; p < np; p++) {
            const struct hg_lop *op = &lw->ops[v];
            int d = op->place[0].dev;
            for (int k = 0; k < op->nplace; k++)
                if (op->place[k].begin <= cut[p] && cut[p] < op->place[k].end)
                    d = op->place[k].dev;
            out->piece_dev[(size_t)v * (size_t)np + (size_t)p] = d;
        }
    /* bwd_node: by origin, each origin's in node order */
    int nn = hg_graph_n_nodes(g);
    for (int w = 0; w < nn; w++) {
        int accum, o = hg_graph_node_origin(g, w, &accum);
        if (o >= 0 && !accum)
            out->bwd_start[o + 1]++;
    }
    for (int v = 0; v < nops; v++)
        out->bwd_start[v + 1] += out->bwd_start[v];
    int *at = calloc((size_t)nops + 1, sizeof *at); /* [nops] filled so far */
    if (!at) {
        free(prank);
        return hg_kerr(err, errlen, "out of memory");
    }
    for (int w = 0; w < nn; w++) {
        int accum, o = hg_graph_node_origin(g, w, &accum);
        if (o >= 0 && !accum)
            out->bwd_node[out->bwd_start[o] + at[o]++] = w;
    }
    free(at);
    for (int t = 0; t < hg_graph_n_tensors(g); t++)
        prank[t] = -1;
    for (int u = 0; u < nops; u++) {
        const struct hg_node_info *nd = hg_graph_node(g, u);
        if (nd->phase == HG_PH_UPDATE && nd->out < 0 && nd->n_in > 0)
            prank[nd->in[0]] = lw->ops[u].place[0].dev;
    }
    for (int i = 0; i < pg->nparams; i++) {
        const struct hg_lagg *a = &lw->agg[i];
        int r = a->kind == HG_LAGG_PS ? a->ps : prank[pg->param[i]];
        out->param_rank[i] = r >= 0 ? r : 0;
        out->param_ar[i] = a->kind == HG_LAGG_RING || a->kind == HG_LAGG_HIER;
    }
    /* where the update ops run (a server's parameter: on the server) */
    for (int u = 0; u < nops; u++) {
        const struct hg_node_info *nd = hg_graph_node(g, u);
        if (nd->phase != HG_PH_UPDATE || nd->out >= 0 || nd->n_in == 0)
            continue;
        for (int i = 0; i < pg->nparams; i++)
            if (pg->param[i] == nd->in[0] && lw->agg[i].kind != HG_LAGG_PS)
                for (int k = 0; k < lw->ops[u].nplace && lw->ops[u].place[k].dev < 64; k++)
                    out->param_upd[i] |= 1ull << lw->ops[u].place[k].dev;
    }
    free(prank);
    return 0;
}

/* A pipeline (lw->nmicro > 0): out->piece_key, each op's piece in the
 * order of its micro-batch's micro-step on the device computing it
 * (hg_pipe_key; the pieces are the micro-batches' chunks, cut further
 * where places are). */
static int pipeline_keys(struct hg_ctl_strategy *out, const struct hg_lowered *lw, char *err,
                         size_t errlen)
{
    if (lw->nmicro == 0)
        return 0;
    int np = out->npieces;
    out->nmicro = lw->nmicro;
    out->piece_key = malloc(((size_t)lw->nops * (size_t)np + 1) * sizeof *out->piece_key);
    if (!out->piece_key)
        return hg_kerr(err, errlen, "out of memory");
    for (int p = 0; p < np; p++) {
        int m = hg_pipe_micro(lw, out->piece[p]);
        for (int v = 0; v < lw->nops; v++) {
            size_t i = (size_t)v * (size_t)np + (size_t)p;
            out->piece_key[i] = hg_pipe_key(lw, v, out->piece_dev[i], m);
        }
    }
    return 0;
}

/* 1 when every op holds the same rows on the same devices as op 0 (whose
 * rows ref gets; rows: scratch). */
static int dp_shaped(const struct hg_lowered *lw, int64_t *ref, int64_t *rows)
{
    op_rows(lw, 0, ref);
    for (int v = 0; v < lw->nops; v++) {
        op_rows(lw, v, rows);
        for (int d = 0; d < lw->ndev; d++)
            if (rows[2 * d] != ref[2 * d] || rows[2 * d + 1] != ref[2 * d + 1])
                return 0;
    }
    return 1;
}

/* The strategy's planned peak memory on each device (the simulator's, on
 * g: the graph at the longest sample, where --plan and hgplan price
 * memory too) within the device's memory in the cluster file; -1 with err
 * naming the first device over it and both byte counts. */
static int fits(const char *path, const char *cluster_file, const struct hg_graph *g,
                const struct hg_pgraph *pg, const struct hg_strategy *st, char *err,
                size_t errlen)
{
    struct hg_pprice *pr = NULL;
    char e[512];
    if (hg_pprice_build(&pr, pg, g, e, sizeof e) != 0)
        return 0; /* unpriced (a device without peak_flops): nothing to plan memory by */
    struct hg_sim *sim = hg_sim_new(pg, pr);
    struct hg_sim_result r;
    hg_sim_full(sim, st, &r);
    int rc = 0;
    for (int d = 0; d < pg->ndev && rc == 0; d++) {
        const struct hg_pdevice *dv = &pg->c->devices[d];
        if (r.peak[d] > dv->memory)
            rc = hg_kerr(err, errlen, "--strategy %s: device %s (rank %d) would hold %.1f MB "
                         "at its planned peak, above its memory of %.1f MB in --cluster-file "
                         "%s: the strategy does not fit", path, dv->name, d,
                         (double)r.peak[d] / 1e6, (double)dv->memory / 1e6, cluster_file);
    }
    hg_sim_free(sim);
    hg_pprice_free(pr);
    return rc;
}

/* The graph hgplan --task plans and a strategy indexes: the recipe's. */
static int build_graph(struct hg_graph *g, const char *what, const struct hg_task *task,
                       void *ts, int64_t batch, int64_t max_len, enum hg_optim optim,
                       const union hg_attr *hyper, char *err, size_t errlen)
{
    struct hg_task_model m;
    char e[512] = "";
    const struct hg_task_graph_opts o = {.batch = batch, .max_len = max_len, .train = 1,
                                         .backward = 1, .optim = optim, .hyper = *hyper};
    if (hg_task_graph(g, task, ts, &o, &m, e, sizeof e) != 0)
        return hg_kerr(err, errlen, "%s: task %s: %s", what, task->name, e);
    return 0;
}

int hg_strat_search(char **text, FILE *o, const struct hg_plan_opts *po,
                    const char *cluster_file, const char *profile,
                    const struct hg_task *task, void *ts,
                    int64_t batch, int64_t max_len, int64_t mem_len, enum hg_optim optim,
                    const union hg_attr *hyper, const struct hg_graph_made *made,
                    char *err, size_t errlen)
{
    *text = NULL;
    struct hg_cluster *c = NULL;
    struct hg_profile *prof = NULL;
    struct hg_graph *g = hg_graph_new();
    struct hg_graph *gm = mem_len != max_len ? hg_graph_new() : NULL; /* memory's */
    struct hg_pgraph *pg = NULL;
    struct hg_pprice *pr = NULL;
    struct hg_sim *sim = NULL;
    struct hg_strategy *best = NULL;
    char e[512] = "";
    int rc = -1;
    if (hg_cluster_load(&c, cluster_file, err, errlen) != 0 ||
        build_graph(g, "--plan", task, ts, batch, max_len, optim, hyper, err, errlen) != 0 ||
        (gm && build_graph(gm, "--plan", task, ts, batch, mem_len, optim, hyper, err,
                           errlen) != 0))
        goto done;
    if (profile && (hg_prof_load(&prof, profile, e, sizeof e) != 0 ||
                    hg_cluster_set_profile(c, prof, e, sizeof e) != 0)) {
        hg_kerr(err, errlen, "--plan-profile %s", e);
        goto done;
    }
    if (hg_plan_price(&pg, &pr, g, gm, c, task->name, batch, e, sizeof e) != 0) {
        hg_kerr(err, errlen, "--plan: --cluster-file %s: %s", cluster_file, e);
        goto done;
    }
    if (!(sim = hg_sim_new(pg, pr))) {
        hg_kerr(err, errlen, "out of memory");
        goto done;
    }
    struct hg_sim_result br;
    struct hg_plan_opts p = *po; /* the TP rows asked what the executor runs */
    p.tp_runs = tp_runs;
    p.tp_ctx = g;
    best = hg_plan_run(o, sim, pg, pr, &p, &br);
    HG_CHECK(!po->executable || hg_strategy_executable(best, po->executable));
    hg_sim_full(sim, best, &br);
    size_t len = 0;
    FILE *f = open_memstream(text, &len);
    if (!f || hg_strategy_save(best, pg, cluster_file, &br, made, f) != 0 || fclose(f) != 0) {
        hg_kerr(err, errlen, "--plan: the strategy's text: out of memory");
        free(*text);
        *text = NULL;
        goto done;
    }
    rc = 0;
done:
    hg_strategy_free(best);
    hg_sim_free(sim);
    hg_pprice_free(pr);
    hg_pgraph_free(pg);
    hg_graph_free(g);
    hg_graph_free(gm);
    hg_cluster_free(c);
    hg_prof_free(prof);
    return rc;
}

int hg_strat_plan(struct hg_ctl_strategy *out, const char *path, const char *text,
                  const char *cluster_file, const struct hg_task *task, void *ts,
                  int64_t batch, int64_t max_len, enum hg_optim optim,
                  const union hg_attr *hyper, int world, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    char ob[160]; /* order_desc */
    struct hg_cluster *c = NULL;
    struct hg_graph *g = hg_graph_new();
    struct hg_pgraph *pg = NULL;
    struct hg_strategy *st = NULL;
    struct hg_lowered *lw = NULL;
    int64_t *ref = NULL, *rows = NULL;
    char e[512] = "";
    int rc = -1;
    if (hg_cluster_load(&c, cluster_file, err, errlen) != 0)
        goto done;
    if (c->ndev != world) {
        hg_kerr(err, errlen, "--strategy %s: cluster %s (--cluster-file %s) has %d device%s, "
                "the job has %d rank%s (device d runs as rank d)", path, c->name, cluster_file,
                c->ndev, c->ndev == 1 ? "" : "s", world, world == 1 ? "" : "s");
        goto done;
    }
    char what[4200];
    snprintf(what, sizeof what, "--strategy %s", path);
    if (build_graph(g, what, task, ts, batch, max_len, optim, hyper, err, errlen) != 0)
        goto done;
    if (hg_pgraph_build(&pg, g, c, task->name, batch, e, sizeof e) != 0 ||
        (text ? hg_strategy_parse(&st, text, path, pg, e, sizeof e)
              : hg_strategy_load(&st, path, pg, e, sizeof e)) != 0) {
        hg_kerr(err, errlen, "--strategy %s: %s", path, e);
        goto done;
    }
    lw = hg_lower_new(pg);
    ref = malloc((size_t)c->ndev * 2 * sizeof *ref);   /* [ndev][2] */
    rows = malloc((size_t)c->ndev * 2 * sizeof *rows); /* [ndev][2] */
    out->rank_sent = calloc((size_t)world, sizeof *out->rank_sent);
    out->agg_ps = malloc((size_t)(pg->nparams ? pg->nparams : 1) * sizeof *out->agg_ps);
    if (!lw || !ref || !rows || !out->rank_sent || !out->agg_ps) {
        hg_kerr(err, errlen, "out of memory");
        goto done;
    }
    if (hg_lower_full(lw, st, e, sizeof e) != 0) {
        hg_kerr(err, errlen, "--strategy %s: %s", path, e);
        goto done;
    }
    if (fits(path, cluster_file, g, pg, st, err, errlen) != 0)
        goto done;
    if (lw->tp) { /* (the lowering refuses a TP group that recomputes) */
        if (tensor_parallel(out, lw, g, path, world, err, errlen) == 0)
            rc = 0;
        goto done;
    }
    int mp = all_mp(lw, st);
    if (planned_order(out, lw, g, err, errlen) != 0 || recomputed(out, lw, err, errlen) != 0)
        goto done;
    if (mp == 1 && lw->nmicro == 0) {
        /* every op on its group's device, device d = rank d; every rank
         * reads the whole batch */
        out->kind = HG_LAYOUT_MP;
        out->world = world;
        out->nops = lw->nops;
        out->nparams = pg->nparams;
        out->op_rank = malloc((size_t)lw->nops * sizeof *out->op_rank);
        if (!out->op_rank) {
            hg_kerr(err, errlen, "out of memory");
            goto done;
        }
        for (int v = 0; v < lw->nops; v++) {
            HG_CHECK(lw->ops[v].nplace == 1);
            out->op_rank[v] = lw->ops[v].place[0].dev;
        }
        if (mp_transfers(out, lw, err, errlen) != 0)
            goto done;
        for (int d = 0; d < world; d++)
            out->rank_sent[d] = batch;
        int n = snprintf(out->desc, sizeof out->desc, "| strategy %s: model parallel, "
                         "the whole batch of %lld on every rank; ops per rank", path,
                         (long long)batch);
        for (int d = 0; d < world && n > 0 && n < (int)sizeof out->desc - 24; d++) {
            int k = 0;
            for (int v = 0; v < lw->nops; v++)
                k += out->op_rank[v] == d;
            n += snprintf(out->desc + n, sizeof out->desc - (size_t)n, "%s%d", d ? "," : " ", k);
        }
        if (n > 0 && n < (int)sizeof out->desc)
            snprintf(out->desc + n, sizeof out->desc - (size_t)n, "%s\n", order_desc(out, st, ob));
        rc = 0;
        goto done;
    }
    if (mp == 2 || lw->nmicro > 0 || !dp_shaped(lw, ref, rows)) {
        /* groups that split the batch differently: every rank reads the
         * whole batch and runs its ops' pieces */
        if (hybrid(out, lw, pg, g, err, errlen) != 0 ||
            pipeline_keys(out, lw, err, errlen) != 0)
            goto done;
        out->kind = HG_LAYOUT_SPLIT;
        out->world = world;
        out->nparams = pg->nparams;
        for (int d = 0; d < world; d++)
            out->rank_sent[d] = batch;
        int n = lw->nmicro > 0
                    ? snprintf(out->desc, sizeof out->desc, "| strategy %s: a pipeline of %d "
                               "stages, the batch of %lld in %d micro-batches, %s schedule; "
                               "the whole batch on every rank; op pieces per rank", path,
                               lw->nstages, (long long)batch, lw->nmicro,
                               hg_pipe_sched_name(lw->sched))
                    : snprintf(out->desc, sizeof out->desc, "| strategy %s: the batch of %lld "
                               "split into %d pieces, each op's on its group's device; the "
                               "whole batch on every rank; op pieces per rank", path,
                               (long long)batch, out->npieces);
        for (int d = 0; d < world && n > 0 && n < (int)sizeof out->desc - 24; d++) {
            int k = 0;
            for (int v = 0; v < lw->nops; v++)
                for (int p = 0; p < out->npieces; p++)
                    k += out->piece_dev[(size_t)v * (size_t)out->npieces + (size_t)p] == d;
            n += snprintf(out->desc + n, sizeof out->desc - (size_t)n, "%s%d", d ? "," : " ", k);
        }
        if (n > 0 && n < (int)sizeof out->desc)
            snprintf(out->desc + n, sizeof out->desc - (size_t)n, "%s\n", order_desc(out, st, ob));
        rc = 0;
        goto done;
    }
    out->world = world;
    for (int d = 0; d < world; d++)
        out->rank_sent[d] = ref[2 * d + 1] - ref[2 * d];
    out->nparams = pg->nparams;
    int nar = 0;
    for (int i = 0; i < pg->nparams; i++) {
        const struct hg_lagg *a = &lw->agg[i];
        out->agg_ps[i] = a->kind == HG_LAGG_PS ? a->ps : -1;
        out->nps += a->kind == HG_LAGG_PS;
        nar += a->kind == HG_LAGG_RING || a->kind == HG_LAGG_HIER;
    }
    int n = snprintf(out->desc, sizeof out->desc, "| strategy %s: data parallel, rows", path);
    for (int d = 0; d < world && n > 0 && n < (int)sizeof out->desc - 40; d++)
        n += snprintf(out->desc + n, sizeof out->desc - (size_t)n, "%s%lld", d ? "," : " ",
                      (long long)out->rank_sent[d]);
    if (n > 0 && n < (int)sizeof out->desc)
        snprintf(out->desc + n, sizeof out->desc - (size_t)n, " of %lld; %d parameters "
                 "all-reduced, %d on parameter servers%s\n", (long long)batch, nar, out->nps,
                 order_desc(out, st, ob));
    rc = 0;
done:
    if (rc != 0)
        hg_ctl_strategy_free(out);
    free(ref);
    free(rows);
    hg_lower_free(lw);
    hg_strategy_free(st);
    hg_pgraph_free(pg);
    hg_graph_free(g);
    hg_cluster_free(c);
    return rc;
}
