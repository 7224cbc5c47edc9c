/* dp.c - whole-model data parallelism: every rank runs the whole graph on
 * its own batch, and the gradient block is summed over the ranks by
 * ALLREDUCE nodes appended between the backward and the optimizer
 * (PyTorch DDP's buckets, as graph nodes); the callbacks that run them
 * over comm/; rank 0's parameters broadcast at the start. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

#include "controller/ctl-impl.h"

struct gspan {
    size_t lo, n;   /* floats [lo, lo + n) of the grad block */
    int ready;      /* last forward/backward position using it; -1: none */
    int t;          /* the grad tensor */
};

struct bucket {
    size_t lo, n;
    int ready;
    int first, last; /* grad tensors at its ends (first: the lowest lo) */
};

static int by_lo_desc(const void *a, const void *b)
{
    const struct gspan *x = a, *y = b;
    return x->lo < y->lo ? 1 : x->lo > y->lo ? -1 : 0;
}

static int by_ready(const void *a, const void *b)
{
    const struct bucket *x = a, *y = b;
    if (x->ready != y->ready)
        return x->ready < y->ready ? -1 : 1;
    return x->lo < y->lo ? 1 : x->lo > y->lo ? -1 : 0;
}

/* The AllReduce nodes of the gradient block appended to g (after
 * hg_graph_backward, before hg_graph_optimizer); *early: 1 when they may
 * start from the backward; returns the number of nodes. */
static int add_allreduce(struct hg_graph *g, const struct hg_ctl_cfg *cfg,
                         const struct hg_ctl_strategy *s, int *early)
{
    HG_CHECK(cfg->comm != NULL);
    int gpu = cfg->cuda, nt = hg_graph_n_tensors(g), nn = hg_graph_n_nodes(g);
    /* buckets started from the backward: on a GPU only where comm sums
     * device memory (nccl, on its stream); never with several micro-batches
     * per update (the sum is final after the last); --bucket-cap-mb 0: one
     * AllReduce after the backward */
    *early = cfg->bucket_cap_mb > 0 && cfg->update_freq <= 1 &&
             (!gpu || (hg_comm_caps(cfg->comm) & HG_COMM_DEVICE_MEMORY));
    double cap = *early ? cfg->bucket_cap_mb * 1024 * 1024 : 1e300; /* bytes */
    int *order = malloc((size_t)(nn ? nn : 1) * sizeof *order); /* [nn] */
    int *last = malloc((size_t)(nt ? nt : 1) * sizeof *last);   /* [nt] last position */
    struct gspan *sp = malloc((size_t)(nt ? nt : 1) * sizeof *sp);  /* [<= nt] */
    struct bucket *bk = malloc((size_t)(nt ? nt : 1) * sizeof *bk); /* [<= nt] */
    HG_CHECK(order && last && sp && bk);
    int n = hg_graph_order(g, HG_PH_FORWARD | HG_PH_BACKWARD, order), ns = 0, nb = 0;
    for (int t = 0; t < nt; t++)
        last[t] = -1;
    for (int i = 0; i < n; i++) {
        const struct hg_node_info *nd = hg_graph_node(g, order[i]);
        for (int k = 0; k < nd->n_in; k++)
            last[nd->in[k]] = i;
        if (nd->out >= 0)
            last[nd->out] = i;
    }
    /* the grad block is in parameter order, unpadded (graph/exec.c) */
    size_t lo = 0;
    for (int i = 0; i < hg_graph_n_params(g); i++) {
        int t = hg_graph_grad(g, hg_graph_param_at(g, i));
        if (t < 0)
            continue;
        size_t m = (size_t)hg_shape_numel(&hg_graph_tensor(g, t)->shape);
        /* a gradient served by a parameter server is not all-reduced */
        if (!hg__psagg_served(s, i))
            sp[ns++] = (struct gspan){.lo = lo, .n = m, .ready = last[t], .t = t};
        lo += m;
    }
    /* gradients taken from the end of the block (the last layers', which
     * the backward finishes first), each bucket one contiguous span that
     * takes the next gradient while it stays within cap (one larger than
     * cap is a bucket of its own) */
    qsort(sp, (size_t)ns, sizeof *sp, by_lo_desc);
    for (int i = 0; i < ns;) {
        struct bucket b = {.lo = sp[i].lo, .n = sp[i].n, .ready = sp[i].ready,
                           .first = sp[i].t, .last = sp[i].t};
        size_t hi = sp[i].lo + sp[i].n;
        for (i++; i < ns && sp[i].lo + sp[i].n == b.lo &&
                  (double)(hi - sp[i].lo) * sizeof(float) <= cap; i++) {
            b.lo = sp[i].lo;
            b.first = sp[i].t;
            b.ready = sp[i].ready > b.ready ? sp[i].ready : b.ready;
        }
        b.n = hi - b.lo;
        bk[nb++] = b;
    }
    /* appended in the order they become final: the executor starts comm
     * nodes in order, so none waits behind a later one */
    qsort(bk, (size_t)nb, sizeof *bk, by_ready);
    enum hg_phase was = hg_graph_set_phase(g, HG_PH_UPDATE);
    for (int i = 0; i < nb; i++) {
        union hg_attr at = {.comm = {.group = 0, .peer = -1, .tag = i}};
        hg_graph_comm_span(g, HG_OP_ALLREDUCE, bk[i].first, bk[i].last, &at);
    }
    hg_graph_set_phase(g, was);
    free(order);
    free(last);
    free(sp);
    free(bk);
    return nb;
}

struct hg_dp {
    struct hg_comm *comm;
    const struct hg_graph *g;
    int via_host;             /* a GPU plan, a backend of host memory: the
                                 span goes through the host mirror */
    struct hg_comm_req *req;  /* [nodes] the request of each comm node */
    struct hg_psagg *ps;      /* PS_PUSH/PS_PULL nodes; NULL: none */
};

static int dp_start(void *arg, struct hg_exec *ex, int node, char *err, size_t errlen)
{
    struct hg_dp *dp = arg;
    const struct hg_node_info *nd = hg_graph_node(dp->g, node);
    if (dp->ps && (nd->op == HG_OP_PS_PUSH || nd->op == HG_OP_PS_PULL))
        return hg__psagg_start(dp->ps, ex, node, err, errlen);
    if (nd->op != HG_OP_ALLREDUCE || nd->attr.comm.group != 0)
        return hg_kerr(err, errlen, "data parallelism runs AllReduce over the job only, "
                       "not %s over group %d", hg_op_table[nd->op].name,
                       nd->attr.comm.group);
    struct hg_exec_buf b;
    hg_exec_comm_buf(ex, node, &b);
    float *buf = b.dev && !dp->via_host ? b.dev : b.host; /* [bytes / 4] */
    if (b.dev && dp->via_host && hg_exec_comm_copy(ex, node, 1, err, errlen) != 0)
        return -1;
    return hg_comm_allreduce_f32_start(dp->comm, buf, b.bytes / sizeof(float),
                                       hg_exec_stream(ex), &dp->req[node], err, errlen);
}

static int dp_wait(void *arg, struct hg_exec *ex, int node, char *err, size_t errlen)
{
    struct hg_dp *dp = arg;
    struct hg_exec_buf b;
    int op = hg_graph_node(dp->g, node)->op;
    if (dp->ps && (op == HG_OP_PS_PUSH || op == HG_OP_PS_PULL))
        return hg__psagg_wait(dp->ps, ex, node, err, errlen);
    if (hg_comm_wait_req(dp->comm, dp->req[node], err, errlen) != 0)
        return -1;
    dp->req[node] = (struct hg_comm_req){0};
    hg_exec_comm_buf(ex, node, &b);
    return b.dev && dp->via_host ? hg_exec_comm_copy(ex, node, 0, err, errlen) : 0;
}

static const struct hg_exec_comm_ops dp_ops = {.start = dp_start, .wait = dp_wait};

static void dp_free(struct hg_dp *dp);

/* Installs the callbacks that run g's comm nodes on ex over comm (PS_PUSH
 * and PS_PULL through ps, which may be NULL). */
static struct hg_dp *dp_new(struct hg_comm *comm, const struct hg_graph *g,
                            struct hg_exec *ex, struct hg_psagg *ps, char *err,
                            size_t errlen)
{
    struct hg_dp *dp = calloc(1, sizeof *dp);
    int nn = hg_graph_n_nodes(g);
    if (dp)
        dp->req = calloc((size_t)(nn ? nn : 1), sizeof *dp->req);
    if (!dp || !dp->req) {
        dp_free(dp);
        hg_kerr(err, errlen, "out of memory");
        return NULL;
    }
    dp->comm = comm;
    dp->g = g;
    dp->ps = ps;
    dp->via_host = hg_exec_device(ex) >= 0 &&
                   !(hg_comm_caps(comm) & HG_COMM_DEVICE_MEMORY);
    hg_exec_set_comm(ex, &dp_ops, dp);
    return dp;
}

static void dp_free(struct hg_dp *dp)
{
    if (!dp)
        return;
    free(dp->req);
    free(dp);
}

/* The row: every op on every rank, each its own rows; with or without a
 * DP-shaped strategy (whose parameter servers are hg__mode_ps's). */
static int mode_claims(const struct hg_ctl *c)
{
    return c->comm && (!c->s || c->s->kind == HG_LAYOUT_DP);
}

static int mode_aggregate(struct hg_ctl *c, struct plan *p, int *early)
{
    return add_allreduce(p->g, &c->cfg, c->s, early);
}

static int mode_start(struct hg_ctl *c, struct plan *p, char *err, size_t errlen)
{
    c->dp = dp_new(c->comm, p->g, p->ex, c->ps, err, errlen);
    return c->dp ? 0 : -1;
}

static void mode_free(struct hg_ctl *c) { dp_free(c->dp); }

const struct hg__mode hg__mode_dp = {
    .name = "data parallel",
    .claims = mode_claims,
    .aggregate = mode_aggregate,
    .start = mode_start,
    .free = mode_free,
};

int hg_ctl_broadcast_params(struct hg_ctl *c, char *err, size_t errlen)
{
    if (!c->comm)
        return 0;
    for (int k = 0; k < c->nmode; k++) /* a mode with its parameters elsewhere */
        if (c->mode[k]->broadcast)
            return c->mode[k]->broadcast(c, err, errlen);
    size_t np, ns;
    float *p = hg_exec_param_block(c->train.ex, &np); /* [np] */
    float *s = hg_exec_state_block(c->train.ex, &ns); /* [ns] */
    if (hg_exec_download(c->train.ex, HG_R_PARAMS | HG_R_STATE, err, errlen) != 0 ||
        hg_comm_broadcast(c->comm, p, np * sizeof(float), 0, err, errlen) != 0 ||
        (ns && hg_comm_broadcast(c->comm, s, ns * sizeof(float), 0, err, errlen) != 0) ||
        hg_exec_upload(c->train.ex, HG_R_PARAMS | HG_R_STATE, err, errlen) != 0)
        return -1;
    c->valid_stale = 1;
    return 0;
}
