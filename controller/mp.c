/* mp.c - model parallelism: a strategy that places every op of the
 * training graph whole on one rank (hg_ctl_strategy.op_rank; the row
 * hg__mode_mp; split strategies run it too).  Every rank builds the
 * same graph; this file gives each rank its part of it: the ops placed on
 * it, a SEND node after each op whose output a node of another rank reads
 * (one per reading rank), a RECV node standing for each tensor of another
 * rank that its ops read (their inputs rewired to it), and the callbacks
 * that run those nodes over comm/'s point-to-point calls.  A parameter
 * lives on the rank of its optimizer op (its owner), which sends its value
 * to the other ranks that read it at the start of every step.  GPU plans
 * exchange through host memory (a backend of host buffers: shm, tcp): a
 * SEND copies its tensor to the host mirror first, a RECV copies what
 * arrived back to the device. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/ctl-impl.h"

/* One transfer of a step: tensor t from rank src to rank dst, right after
 * node `after` (-1: before every node: parameters). */
struct xfer {
    int t, src, dst, after;
};

/* The owner of every tensor ([nt]: the rank that makes it, -1: every rank
 * has it: inputs, constants, optimizer state, parameters no op updates; a
 * parameter updated on several ranks (split strategies' AllReduce, each
 * updating its copy): the first updater). */
static void sources(const struct hg_graph *g, const int *op_rank, int nn, int *src)
{
    int nt = hg_graph_n_tensors(g);
    for (int t = 0; t < nt; t++) {
        const struct hg_tensor_info *ti = hg_graph_tensor(g, t);
        src[t] = ti->producer >= 0 && ti->producer < nn ? op_rank[ti->producer] : -1;
    }
    for (int v = 0; v < nn; v++) {
        const struct hg_node_info *nd = hg_graph_node(g, v);
        if (nd->out < 0 && nd->phase == HG_PH_UPDATE && nd->n_in > 0 &&
            hg_graph_tensor(g, nd->in[0])->kind == HG_T_PARAM && src[nd->in[0]] < 0)
            src[nd->in[0]] = op_rank[v]; /* updated in place by its owner */
    }
}

/* need[t * world + q]: rank q reads tensor t, made on another rank (src),
 * and does not hold it. */
static void needs(const struct hg_graph *g, const int *op_rank, int nn, int world,
                  const int *src, unsigned char *need)
{
    int nt = hg_graph_n_tensors(g);
    memset(need, 0, (size_t)nt * (size_t)world);
    for (int v = 0; v < nn; v++) {
        const struct hg_node_info *nd = hg_graph_node(g, v);
        for (int k = 0; k < nd->n_in && op_rank[v] >= 0; k++) {
            int t = nd->in[k];
            if (src[t] >= 0 && src[t] != op_rank[v])
                need[(size_t)t * (size_t)world + (size_t)op_rank[v]] = 1;
        }
    }
    /* a rank that updates a parameter holds it */
    for (int v = 0; v < nn; v++) {
        const struct hg_node_info *nd = hg_graph_node(g, v);
        if (nd->out < 0 && nd->phase == HG_PH_UPDATE && nd->n_in > 0 && op_rank[v] >= 0)
            need[(size_t)nd->in[0] * (size_t)world + (size_t)op_rank[v]] = 0;
    }
}

/* The lowering's transfers (pl->xfer_*) into need instead: each must come
 * from the rank of its node, and they must bring every tensor a rank's
 * ops read (need, derived); the recomputing copies' outputs (the
 * controller's, not the lowering's) as derived.  -1 with err naming the
 * first tensor they miss.  lneed: scratch [nt][world]. */
static int lowered(const struct hg_graph *g, const struct hg__place *pl, int world,
                   const int *src, unsigned char *need, unsigned char *lneed, char *err,
                   size_t errlen)
{
    int nt = hg_graph_n_tensors(g), nn = hg_graph_n_nodes(g);
    memset(lneed, 0, (size_t)nt * (size_t)world);
    for (int k = 0; k < pl->nxfers; k++) {
        int v = pl->xfer_node[k], q = pl->xfer_dst[k];
        if (v < 0 || v >= nn || q < 0 || q >= world)
            return hg_kerr(err, errlen, "model parallelism: the lowering's transfer %d "
                           "(op %d to rank %d) is outside the graph or the job", k, v, q);
        const struct hg_node_info *nd = hg_graph_node(g, v);
        int t = nd->out >= 0 ? nd->out : nd->n_in > 0 ? nd->in[0] : -1;
        if (t < 0 || src[t] != pl->op_rank[v])
            return hg_kerr(err, errlen, "model parallelism: the lowering sends op %d's "
                           "output from rank %d, which does not make it", v,
                           pl->op_rank[v]);
        lneed[(size_t)t * (size_t)world + (size_t)q] = 1;
    }
    for (int w = 0; w < nn; w++) {
        int t = hg_graph_node(g, w)->out;
        if (hg_graph_node_recomputes(g, w) >= 0 && t >= 0)
            memcpy(lneed + (size_t)t * (size_t)world, need + (size_t)t * (size_t)world,
                   (size_t)world);
    }
    for (size_t i = 0; i < (size_t)nt * (size_t)world; i++)
        if (need[i] && !lneed[i])
            return hg_kerr(err, errlen, "model parallelism: rank %d reads tensor %s from "
                           "rank %d, but the lowering's transfers do not bring it",
                           (int)(i % (size_t)world), hg_graph_tensor(g, (int)(i / (size_t)world))->name,
                           src[i / (size_t)world]);
    memcpy(need, lneed, (size_t)nt * (size_t)world);
    return 0;
}

/* Every transfer of need[] in one global order: parameters first (tensor
 * order), then each op's output right after the op (ops in seq[nn], the
 * execution order), reading ranks ascending.  Every rank's sends and
 * receives are this order filtered to the rank, so the earliest
 * unfinished transfer always has both ends waiting for it.  Returns the
 * count; xf[<= nt * world]. */
static int transfers(const struct hg_graph *g, const int *seq, int nn, int world,
                     const int *src, const unsigned char *need, struct xfer *xf)
{
    int nt = hg_graph_n_tensors(g), nx = 0;
    for (int t = 0; t < nt; t++)
        if (hg_graph_tensor(g, t)->kind == HG_T_PARAM)
            for (int q = 0; q < world; q++)
                if (need[(size_t)t * (size_t)world + (size_t)q])
                    xf[nx++] = (struct xfer){.t = t, .src = src[t], .dst = q, .after = -1};
    for (int i = 0; i < nn; i++) {
        int v = seq[i], t = hg_graph_node(g, v)->out;
        if (t < 0)
            continue;
        for (int q = 0; q < world; q++)
            if (need[(size_t)t * (size_t)world + (size_t)q])
                xf[nx++] = (struct xfer){.t = t, .src = src[t], .dst = q, .after = v};
    }
    return nx;
}

/* Plays every rank's sequence of transfers with blocking sends and
 * receives (each waits for its peer): -1 with err naming the ranks and
 * tensors that would wait for each other forever. */
static int check_deadlock(const struct hg_graph *g, const struct xfer *xf, int nx,
                          int world, char *err, size_t errlen)
{
    int *len = calloc((size_t)world, sizeof *len);           /* [world] */
    int *at = calloc((size_t)world, sizeof *at);             /* [world] next of each */
    int *seq = malloc((size_t)(2 * nx + 1) * sizeof *seq);   /* [world][<= nx] by start */
    int *start = malloc((size_t)(world + 1) * sizeof *start); /* [world + 1] */
    int rc = 0;
    if (!len || !at || !seq || !start) {
        rc = hg_kerr(err, errlen, "out of memory");
        goto done;
    }
    for (int i = 0; i < nx; i++)
        len[xf[i].src]++, len[xf[i].dst]++;
    start[0] = 0;
    for (int q = 0; q < world; q++)
        start[q + 1] = start[q] + len[q];
    for (int i = 0; i < nx; i++) {
        seq[start[xf[i].src] + at[xf[i].src]++] = i;
        seq[start[xf[i].dst] + at[xf[i].dst]++] = i;
    }
    memset(at, 0, (size_t)world * sizeof *at);
    for (int moved = 1; moved;) {
        moved = 0;
        for (int q = 0; q < world; q++) {
            if (at[q] == len[q])
                continue;
            int i = seq[start[q] + at[q]], p = xf[i].src == q ? xf[i].dst : xf[i].src;
            if (at[p] < len[p] && seq[start[p] + at[p]] == i) {
                at[q]++, at[p]++;
                moved = 1;
            }
        }
    }
    for (int q = 0; q < world && rc == 0; q++)
        if (at[q] < len[q]) {
            const struct xfer *x = &xf[seq[start[q] + at[q]]];
            rc = hg_kerr(err, errlen, "model parallelism: rank %d would wait forever to "
                         "%s tensor %s %s rank %d (its peer waits for another transfer); "
                         "refusing the placement", q, x->src == q ? "send" : "receive",
                         hg_graph_tensor(g, x->t)->name, x->src == q ? "to" : "from",
                         x->src == q ? x->dst : x->src);
        }
done:
    free(len);
    free(at);
    free(seq);
    free(start);
    return rc;
}

int hg__mp_sequence(const struct hg_graph *g, const struct hg__place *pl, int nn, int *seq,
                    char *err, size_t errlen)
{
    int nfb = 0, k = 0;
    while (nfb < nn && hg_graph_node(g, nfb)->phase != HG_PH_UPDATE)
        nfb++;
    /* phase by phase, then id: the recomputing copies (appended last)
     * close the backward */
    HG_CHECK(hg_graph_order(g, HG_PH_ALL, seq) == nn);
    if (pl->order) {
        unsigned char *seen = calloc((size_t)nfb + 1, 1); /* [nfb] */
        if (!seen)
            return hg_kerr(err, errlen, "out of memory");
        for (int i = 0; i < pl->n_order && k <= nfb; i++) {
            int v = pl->order[i];
            if (v >= 0 && v < nfb && !seen[v]++)
                seq[k++] = v;
        }
        free(seen);
        if (k != nfb)
            return hg_kerr(err, errlen, "the planned order has %d of the train graph's %d "
                           "forward and backward ops", k, nfb);
    }
    if (hg_graph_order_recompute(g, seq, nn) != 0)
        return hg_kerr(err, errlen, "out of memory");
    return 0;
}

int hg__mp_plan(struct hg_graph *g, const struct hg__place *pl, int me, int world,
                int **order_out, char *err, size_t errlen)
{
    *order_out = NULL;
    int nn = hg_graph_n_nodes(g), nt = hg_graph_n_tensors(g);
    if (pl->n_op_rank != nn)
        return hg_kerr(err, errlen, "model parallelism: the placement has %d ops, the "
                       "train graph %d", pl->n_op_rank, nn);
    for (int v = 0; v < nn; v++)
        if (pl->op_rank[v] < -1 || pl->op_rank[v] >= world)
            return hg_kerr(err, errlen, "model parallelism: op %d (%s) is placed on rank "
                           "%d, the job has %d", v, hg_op_table[hg_graph_node(g, v)->op].name,
                           pl->op_rank[v], world);
    size_t cap = (size_t)(nt ? nt : 1) * (size_t)world;
    int *src = malloc((size_t)(nt ? nt : 1) * sizeof *src); /* [nt] */
    unsigned char *need = malloc(cap);                       /* [nt][world] */
    struct xfer *xf = malloc(cap * sizeof *xf);              /* [<= nt * world] */
    int *node = malloc(cap * sizeof *node); /* [nx] this rank's SEND/RECV of each, -1 */
    int *seq = malloc((size_t)(nn ? nn : 1) * sizeof *seq); /* [nn] execution order */
    int *order = NULL, n = 0, rc = -1;
    if (!src || !need || !xf || !node || !seq) {
        hg_kerr(err, errlen, "out of memory");
        goto done;
    }
    if (hg__mp_sequence(g, pl, nn, seq, err, errlen) != 0)
        goto done;
    sources(g, pl->op_rank, nn, src);
    needs(g, pl->op_rank, nn, world, src, need);
    if (pl->xfer_node) {
        unsigned char *lneed = malloc(cap); /* [nt][world] */
        int lrc = lneed ? lowered(g, pl, world, src, need, lneed, err, errlen)
                        : hg_kerr(err, errlen, "out of memory");
        free(lneed);
        if (lrc != 0)
            goto done;
    }
    int nx = transfers(g, seq, nn, world, src, need, xf);
    if (check_deadlock(g, xf, nx, world, err, errlen) != 0)
        goto done;
    /* this rank's SEND and RECV nodes, appended after the optimizer in the
     * phase of what they carry (parameters: the forward's) */
    enum hg_phase was = hg_graph_set_phase(g, HG_PH_FORWARD);
    for (int i = 0; i < nx; i++) {
        const struct xfer *x = &xf[i];
        node[i] = -1;
        if (x->src != me && x->dst != me)
            continue;
        enum hg_phase ph = x->after < 0 ? HG_PH_FORWARD : hg_graph_node(g, x->after)->phase;
        if (ph == HG_PH_UPDATE) {
            hg_graph_set_phase(g, was);
            hg_kerr(err, errlen, "model parallelism: tensor %s of the update phase (op %d, "
                    "%s) is read on rank %d, made on rank %d", hg_graph_tensor(g, x->t)->name,
                    x->after, hg_op_table[hg_graph_node(g, x->after)->op].name, x->dst, x->src);
            goto done;
        }
        hg_graph_set_phase(g, ph);
        union hg_attr at = {.comm = {.group = 0, .tag = i}};
        node[i] = hg_graph_n_nodes(g);
        if (x->src == me) {
            at.comm.peer = x->dst;
            hg_graph_op(g, HG_OP_SEND, &x->t, 1, &at);
        } else {
            at.comm.peer = x->src;
            int r = hg_graph_recv_like(g, x->t, &at);
            for (int v = 0; v < nn; v++)
                if (pl->op_rank[v] == me)
                    hg_graph_rewire(g, v, x->t, r);
        }
    }
    hg_graph_set_phase(g, was);
    order = malloc((size_t)hg_graph_n_nodes(g) * sizeof *order); /* [nodes] */
    if (!order) {
        hg_kerr(err, errlen, "out of memory");
        goto done;
    }
    /* this rank's ops in the execution order, each transfer right after
     * its producer (parameters first) */
    int i = 0;
    for (; i < nx && xf[i].after < 0; i++)
        if (node[i] >= 0)
            order[n++] = node[i];
    for (int j = 0; j < nn; j++) {
        int v = seq[j];
        if (pl->op_rank[v] == me)
            order[n++] = v;
        for (; i < nx && xf[i].after == v; i++)
            if (node[i] >= 0)
                order[n++] = node[i];
    }
    HG_CHECK(i == nx);
    *order_out = order;
    order = NULL;
    rc = n;
done:
    free(src);
    free(need);
    free(xf);
    free(node);
    free(seq);
    free(order);
    return rc;
}

/* What precedes every transfer on the wire: the two ends check that they
 * pair up (the same transfer of the same update). */
struct wire {
    uint64_t step;
    int64_t tag;
    int64_t bytes;
};

/* A SEND node's copy of what it sends, in flight on comm's progress thread
 * while this rank computes on (the executor may reuse the tensor's memory
 * at once). */
struct stage {
    char *buf;            /* [cap] the wire header, then the tensor's bytes */
    size_t cap;
    struct hg_comm_req req; /* the payload's send: done, the slot is free */
    struct wire in;       /* a RECV node's: the header it received */
    struct hg_comm_req rreq; /* a RECV node's payload, started, not waited */
    uint64_t first, last; /* the ids of its last start's requests (header,
                             payload): which transfer a failed id was */
    uint64_t step;        /* that start's update */
};

struct hg_mp {
    struct hg_comm *comm;
    const struct hg_graph *g;
    const int *op_rank;   /* [n_op_rank] the controller's place.op_rank */
    int n_op_rank;
    uint64_t step;        /* the update the pass belongs to (hg__mp_set_step) */
    int async;            /* sends as requests (HG_COMM_ASYNC) */
    int via_host;         /* a GPU plan: tensors through the host mirror */
    struct stage *stage;  /* [nodes] per SEND node */
    int nstage;
    struct hg_comm **grp; /* [ngrp] ALLREDUCE group k + 1's handle, NULL where
                             this rank is no member */
    int ngrp;
};


/* The error of a transfer of node's: of the transfer whose request failed
 * where the handle says which (the requests run in order, so a wait for
 * one returns the failure of one queued before it, and that one names the
 * rank that stopped), else of node's own.  e: the comm's message. */
static int xfer_err(const struct hg_mp *mp, int node, const char *e, char *err,
                    size_t errlen)
{
    int v = node;
    uint64_t step = mp->step, id = hg_comm_failed_req(mp->comm).id;
    for (int k = 0; id && k < mp->nstage; k++)
        if (mp->stage[k].first && mp->stage[k].first <= id && id <= mp->stage[k].last) {
            v = k;
            step = mp->stage[k].step;
            break;
        }
    const struct hg_node_info *nd = hg_graph_node(mp->g, v);
    int send = nd->op == HG_OP_SEND;
    const char *name = hg_graph_tensor(mp->g, send ? nd->in[0] : nd->out)->name;
    char also[200] = "";
    if (v != node) {
        const struct hg_node_info *wn = hg_graph_node(mp->g, node);
        snprintf(also, sizeof also, " (this rank waited for %s, transfer %lld, queued "
                 "after it)", hg_graph_tensor(mp->g, wn->op == HG_OP_SEND ? wn->in[0]
                                                                          : wn->out)->name,
                 (long long)wn->attr.comm.tag);
    }
    return hg_kerr(err, errlen, "rank %d: %s of tensor %s (transfer %lld, update %llu) %s "
                   "rank %d: %s%s", hg_comm_rank(mp->comm), send ? "send" : "receive", name,
                   (long long)nd->attr.comm.tag, (unsigned long long)step,
                   send ? "to" : "from", nd->attr.comm.peer, e, also);
}

/* A RECV's bytes arrived: the header o checked against what this rank
 * expects (w), then, on a GPU plan, copied to the device. */
static int recv_done(struct hg_mp *mp, struct hg_exec *ex, int node, const struct wire *o,
                     const struct wire *w, char *err, size_t errlen)
{
    const struct hg_node_info *nd = hg_graph_node(mp->g, node);
    int me = hg_comm_rank(mp->comm), peer = nd->attr.comm.peer;
    const char *name = hg_graph_tensor(mp->g, nd->out)->name; /* "<tensor>.recv" */
    char e[300] = "";
    if (o->step != w->step || o->tag != w->tag || o->bytes != w->bytes)
        return hg_kerr(err, errlen, "rank %d: rank %d sent transfer %lld of update %llu "
                       "(%lld bytes), expected transfer %lld of update %llu (%lld bytes): the "
                       "ranks run different placements", me, peer, (long long)o->tag,
                       (unsigned long long)o->step, (long long)o->bytes, (long long)w->tag,
                       (unsigned long long)w->step, (long long)w->bytes);
    /* to the device, queued before the ops that read it */
    if (mp->via_host && hg_exec_comm_copy(ex, node, 0, e, sizeof e) != 0)
        return hg_kerr(err, errlen, "rank %d: receive of tensor %s from rank %d: %s", me,
                       name, peer, e);
    return 0;
}

static int mp_start(void *arg, struct hg_exec *ex, int node, char *err, size_t errlen)
{
    struct hg_mp *mp = arg;
    const struct hg_node_info *nd = hg_graph_node(mp->g, node);
    int me = hg_comm_rank(mp->comm), peer = nd->attr.comm.peer;
    if (nd->op == HG_OP_ALLREDUCE) {
        /* a split strategy's parameter, over its members' group */
        int k = nd->attr.comm.group - 1;
        struct hg_exec_buf b;
        hg_exec_comm_buf(ex, node, &b);
        char e[300] = "";
        if (k < 0 || k >= mp->ngrp || !mp->grp[k])
            return hg_kerr(err, errlen, "rank %d: AllReduce of group %d, not one of this "
                           "rank's", me, nd->attr.comm.group);
        if ((mp->via_host && hg_exec_comm_copy(ex, node, 1, e, sizeof e) != 0) ||
            hg_comm_allreduce_f32(mp->grp[k], b.host, b.bytes / sizeof(float), e,
                                  sizeof e) != 0 ||
            (mp->via_host && hg_exec_comm_copy(ex, node, 0, e, sizeof e) != 0))
            return hg_kerr(err, errlen, "rank %d: AllReduce of %s (update %llu) among its "
                           "replicas' ranks: %s", me,
                           hg_graph_tensor(mp->g, nd->in[0])->name,
                           (unsigned long long)mp->step, e);
        return 0;
    }
    if (nd->op != HG_OP_SEND && nd->op != HG_OP_RECV)
        return hg_kerr(err, errlen, "model parallelism runs SEND, RECV and group AllReduce "
                       "only, not %s", hg_op_table[nd->op].name);
    int send = nd->op == HG_OP_SEND;
    int t = send ? nd->in[0] : nd->out;
    const struct hg_tensor_info *ti = hg_graph_tensor(mp->g, t);
    const char *name = ti->name; /* a RECV's: "<tensor>.recv" */
    struct hg_exec_buf b;
    hg_exec_comm_buf(ex, node, &b);
    char *buf = b.host; /* [b.bytes] the tensor's current bytes */
    struct wire w = {.step = mp->step, .tag = nd->attr.comm.tag, .bytes = (int64_t)b.bytes}, o;
    char e[300] = "";
    /* the device's bytes to the host mirror (waits for the device) */
    if (send && mp->via_host && hg_exec_comm_copy(ex, node, 1, e, sizeof e) != 0)
        return hg_kerr(err, errlen, "rank %d: send of tensor %s to rank %d: %s", me, name,
                       peer, e);
    if (send && mp->async && node < mp->nstage) {
        /* a copy on its way while the ops after this one run: a transfer
         * to a slower rank no longer holds this one up (each is matched in
         * the one global order all the same) */
        struct stage *sg = &mp->stage[node];
        if (hg_comm_wait_req(mp->comm, sg->req, e, sizeof e) != 0)
            return xfer_err(mp, node, e, err, errlen);
        if (sg->cap < sizeof w + b.bytes) {
            char *nb = realloc(sg->buf, sizeof w + b.bytes);
            if (!nb)
                return hg_kerr(err, errlen, "rank %d: send of tensor %s: out of memory", me,
                               name);
            sg->buf = nb;
            sg->cap = sizeof w + b.bytes;
        }
        memcpy(sg->buf, &w, sizeof w);
        memcpy(sg->buf + sizeof w, buf, b.bytes);
        struct hg_comm_req h;
        if (hg_comm_send_start(mp->comm, sg->buf, sizeof w, peer, &h, e, sizeof e) != 0 ||
            hg_comm_send_start(mp->comm, sg->buf + sizeof w, b.bytes, peer, &sg->req, e,
                               sizeof e) != 0)
            return xfer_err(mp, node, e, err, errlen);
        sg->first = h.id;
        sg->last = sg->req.id;
        sg->step = w.step;
        return 0;
    }
    if (send) {
        if (hg_comm_send(mp->comm, &w, sizeof w, peer, e, sizeof e) != 0 ||
            hg_comm_send(mp->comm, buf, b.bytes, peer, e, sizeof e) != 0)
            return xfer_err(mp, node, e, err, errlen);
        return 0;
    }
    if (mp->async && node < mp->nstage) {
        /* received on comm's progress thread in the transfers' order while
         * this rank computes on; the executor waits for it just before
         * its first reader (mp_wait) */
        struct stage *sg = &mp->stage[node];
        struct hg_comm_req h;
        if (hg_comm_recv_start(mp->comm, &sg->in, sizeof sg->in, peer, &h, e,
                               sizeof e) != 0 ||
            hg_comm_recv_start(mp->comm, buf, b.bytes, peer, &sg->rreq, e, sizeof e) != 0)
            return xfer_err(mp, node, e, err, errlen);
        sg->first = h.id;
        sg->last = sg->rreq.id;
        sg->step = w.step;
        return 0;
    }
    if (hg_comm_recv(mp->comm, &o, sizeof o, peer, e, sizeof e) != 0 ||
        hg_comm_recv(mp->comm, buf, b.bytes, peer, e, sizeof e) != 0)
        return xfer_err(mp, node, e, err, errlen);
    return recv_done(mp, ex, node, &o, &w, err, errlen);
}

/* A RECV started as requests: its payload waited for (and everything
 * queued before it), then checked; anything else happened in start. */
static int mp_wait(void *arg, struct hg_exec *ex, int node, char *err, size_t errlen)
{
    struct hg_mp *mp = arg;
    const struct hg_node_info *nd = hg_graph_node(mp->g, node);
    if (nd->op != HG_OP_RECV || !mp->async || node >= mp->nstage)
        return 0;
    struct stage *sg = &mp->stage[node];
    struct hg_exec_buf b;
    hg_exec_comm_buf(ex, node, &b);
    struct wire w = {.step = mp->step, .tag = nd->attr.comm.tag, .bytes = (int64_t)b.bytes};
    char e[300] = "";
    if (hg_comm_wait_req(mp->comm, sg->rreq, e, sizeof e) != 0)
        return xfer_err(mp, node, e, err, errlen);
    sg->rreq = (struct hg_comm_req){0};
    return recv_done(mp, ex, node, &sg->in, &w, err, errlen);
}

static const struct hg_exec_comm_ops mp_ops = {.start = mp_start, .wait = mp_wait};

/* The groups of the ALLREDUCE nodes (split strategies' parameters): group
 * k + 1's members are the ranks of its nodes; each rank makes the ones it
 * belongs to, in k order (the same on every rank: a group waits for its
 * members). */
static int make_groups(struct hg_mp *mp, char *err, size_t errlen)
{
    int nn = mp->n_op_rank, world = hg_comm_world(mp->comm), me = hg_comm_rank(mp->comm);
    for (int v = 0; v < nn; v++) {
        const struct hg_node_info *nd = hg_graph_node(mp->g, v);
        if (nd->op == HG_OP_ALLREDUCE && nd->attr.comm.group > mp->ngrp)
            mp->ngrp = nd->attr.comm.group;
    }
    if (mp->ngrp == 0)
        return 0;
    mp->grp = calloc((size_t)mp->ngrp, sizeof *mp->grp);
    unsigned char *in = malloc((size_t)world); /* [world] a member */
    int *ranks = malloc((size_t)world * sizeof *ranks); /* [<= world] */
    int rc = 0;
    if (!mp->grp || !in || !ranks) {
        rc = hg_kerr(err, errlen, "out of memory");
        goto done;
    }
    for (int k = 0; k < mp->ngrp && rc == 0; k++) {
        memset(in, 0, (size_t)world);
        for (int v = 0; v < nn; v++) {
            const struct hg_node_info *nd = hg_graph_node(mp->g, v);
            if (nd->op == HG_OP_ALLREDUCE && nd->attr.comm.group == k + 1 &&
                mp->op_rank[v] >= 0 && mp->op_rank[v] < world)
                in[mp->op_rank[v]] = 1;
        }
        int n = 0;
        for (int r = 0; r < world; r++)
            if (in[r])
                ranks[n++] = r;
        if (in[me] && hg_comm_group_new(mp->comm, ranks, n, &mp->grp[k], err, errlen) != 0)
            rc = -1;
    }
done:
    free(in);
    free(ranks);
    return rc;
}

/* Installs the callbacks that run the SEND and RECV nodes over comm. */
static struct hg_mp *mp_new(struct hg_comm *comm, const struct hg_graph *g,
                            struct hg_exec *ex, const struct hg__place *pl, char *err,
                            size_t errlen)
{
    struct hg_mp *mp = calloc(1, sizeof *mp);
    if (!mp) {
        hg_kerr(err, errlen, "out of memory");
        return NULL;
    }
    mp->comm = comm;
    mp->g = g;
    mp->op_rank = pl->op_rank;
    mp->n_op_rank = pl->n_op_rank;
    if (hg_comm_caps(comm) & HG_COMM_DEVICE_MEMORY) {
        free(mp);
        hg_kerr(err, errlen, "model-parallel and split strategies exchange tensors through "
                "host memory: use --distributed-backend shm or tcp, not %s",
                hg_comm_backend(comm));
        return NULL;
    }
    mp->async = (hg_comm_caps(comm) & HG_COMM_ASYNC) != 0;
    mp->via_host = hg_exec_device(ex) >= 0;
    mp->stage = calloc((size_t)hg_graph_n_nodes(g) + 1, sizeof *mp->stage);
    if (!mp->stage) {
        free(mp);
        hg_kerr(err, errlen, "out of memory");
        return NULL;
    }
    mp->nstage = hg_graph_n_nodes(g);
    if (make_groups(mp, err, errlen) != 0) {
        hg__mp_free(mp);
        return NULL;
    }
    hg_exec_set_comm(ex, &mp_ops, mp);
    hg_exec_set_comm_defer(ex, mp->async);
    return mp;
}

void hg__mp_free(struct hg_mp *mp)
{
    if (!mp)
        return;
    /* No send reads a stage any more: a step's statistics reduce (blocking)
     * waits for its sends, and after a failure the comm handle, freed
     * first (hg_controller.h), ends its progress thread.  The handle may be
     * gone already: it is not touched here. */
    for (int i = 0; i < mp->nstage; i++)
        free(mp->stage[i].buf);
    free(mp->stage);
    /* the groups are handles of their own (hg_comm_group_new: freed
     * before or after their parent) */
    for (int k = 0; k < mp->ngrp; k++)
        if (mp->grp[k])
            hg_comm_free(mp->grp[k]);
    free(mp->grp);
    free(mp);
}

/* The rank owning parameter tensor `param` (that of its optimizer op);
 * -1: no op updates it (every rank has it). */
static int mp_owner(const struct hg_mp *mp, int param)
{
    for (int v = 0; v < mp->n_op_rank; v++) {
        const struct hg_node_info *nd = hg_graph_node(mp->g, v);
        if (nd->out < 0 && nd->phase == HG_PH_UPDATE && nd->n_in > 0 && nd->in[0] == param)
            return mp->op_rank[v];
    }
    return -1;
}

/* Every parameter and its optimizer state broadcast from its owner: every
 * rank then holds all of them (checkpoints, validation). */
static int mp_sync(struct hg_mp *mp, struct hg_exec *ex, char *err, size_t errlen)
{
    /* a GPU plan: the host mirror is what travels */
    if (hg_exec_download(ex, HG_R_PARAMS | HG_R_STATE, err, errlen) != 0)
        return -1;
    /* each optimizer op's parameter and state from the op's rank, in the
     * graph's order (the same calls on every rank) */
    for (int v = 0; v < mp->n_op_rank; v++) {
        const struct hg_node_info *nd = hg_graph_node(mp->g, v);
        if (nd->out >= 0 || nd->phase != HG_PH_UPDATE || nd->n_in == 0)
            continue;
        int again = 0; /* a copy of an earlier optimizer op (the same values) */
        for (int u = 0; u < v && !again; u++) {
            const struct hg_node_info *ud = hg_graph_node(mp->g, u);
            again = ud->out < 0 && ud->phase == HG_PH_UPDATE && ud->n_in > 0 &&
                    ud->in[0] == nd->in[0];
        }
        for (int k = 0; k < nd->n_in && !again; k++) {
            int t = nd->in[k];
            const struct hg_tensor_info *ti = hg_graph_tensor(mp->g, t);
            if (ti->kind != HG_T_PARAM && ti->kind != HG_T_STATE)
                continue;
            size_t bytes = (size_t)hg_shape_numel(&ti->shape) * hg_dtype_size(ti->dtype);
            if (hg_comm_broadcast(mp->comm, hg_exec_data(ex, t), bytes, mp->op_rank[v],
                                  err, errlen) != 0)
                return -1;
        }
    }
    return hg_exec_upload(ex, HG_R_PARAMS | HG_R_STATE, err, errlen);
}

int hg__mp_start(struct hg_ctl *c, struct plan *p, char *err, size_t errlen)
{
    /* the loss and the sample size are counted by the loss op's rank
     * (every rank feeds the same batch); the gradients this rank computes
     * are the only ones in its grad block (the norm sums the ranks'
     * squares) */
    int me = hg_comm_rank(c->comm), nll = p->m.nll >= 0 ? p->m.nll : p->m.loss;
    c->mp_loss = c->place.op_rank[hg_graph_tensor(p->g, p->m.loss)->producer] == me;
    c->mp_nll = c->place.op_rank[hg_graph_tensor(p->g, nll)->producer] == me;
    if (!(c->mp = mp_new(c->comm, p->g, p->ex, &c->place, err, errlen)))
        return -1;
    return hg_exec_grad_op(p->ex, HG_GRAD_ZERO, err, errlen);
}

/* The row: every op group whole on one device. */
static int mode_claims(const struct hg_ctl *c)
{
    return c->comm && c->s && c->s->kind == HG_LAYOUT_MP;
}

/* c->place with the recomputing copies (appended after the strategy's
 * nodes) on their originals' ranks, then this rank's part of the plan */
static int mode_order(struct hg_ctl *c, struct plan *p, int **ord, char *err, size_t errlen)
{
    int nn = hg_graph_n_nodes(p->g), n0 = nn;
    while (n0 > 0 && hg_graph_node_recomputes(p->g, n0 - 1) >= 0)
        n0--;
    if (n0 < nn) {
        if (c->place.n_op_rank != n0)
            return hg_kerr(err, errlen, "model parallelism: the placement has %d ops, the "
                           "train graph %d", c->place.n_op_rank, n0);
        c->rc_rank = malloc((size_t)nn * sizeof *c->rc_rank); /* [nn] */
        if (!c->rc_rank)
            return hg_kerr(err, errlen, "out of memory");
        memcpy(c->rc_rank, c->place.op_rank, (size_t)n0 * sizeof *c->rc_rank);
        for (int w = n0; w < nn; w++)
            c->rc_rank[w] = c->place.op_rank[hg_graph_node_recomputes(p->g, w)];
        c->place.op_rank = c->rc_rank;
        c->place.n_op_rank = nn;
    }
    return hg__mp_plan(p->g, &c->place, hg_comm_rank(c->comm), hg_comm_world(c->comm), ord,
                       err, errlen);
}

static void mode_free(struct hg_ctl *c) { hg__mp_free(c->mp); }

/* --update-freq 1 only: the step's accumulation would carry the received
 * gradients too (hg_exec_grad_carry), untested here so far */
static int mode_one_micro(const struct hg_ctl *c)
{
    (void)c;
    return 1;
}

/* The step's hooks, split strategies' too. */
int hg__mp_micro(struct hg_ctl *c, const struct hg_batch *b, uint64_t update,
                 struct hg_ctl_stats *st)
{
    (void)b, (void)st;
    c->mp->step = update; /* both ends of a transfer check it */
    return 0;
}

/* the loss and sample size are counted by the loss op's rank */
int hg__mp_counts(const struct hg_ctl *c, int nll) { return nll ? c->mp_nll : c->mp_loss; }

int hg__mp_sumsq(struct hg_ctl *c, double *own, char *err, size_t errlen)
{
    return hg_exec_grad_sumsq(c->train.ex, own, err, errlen);
}

int hg__mp_sync(struct hg_ctl *c, char *err, size_t errlen)
{
    return mp_sync(c->mp, c->train.ex, err, errlen);
}

/* every rank feeds the whole valid set; the parameters gathered from
 * their owners (every rank), rank 0 counts */
int hg__mp_valid(struct hg_ctl *c, int *skip, char *err, size_t errlen)
{
    if (c->valid_stale && mp_sync(c->mp, c->train.ex, err, errlen) != 0)
        return -1;
    *skip = hg_comm_rank(c->comm) != 0;
    return 0;
}

int hg__mp_owner(const struct hg_ctl *c, int i, int param)
{
    (void)i;
    return mp_owner(c->mp, param);
}

const struct hg__mode hg__mode_mp = {
    .name = "model parallel",
    .claims = mode_claims,
    .order = mode_order,
    .start = hg__mp_start,
    .free = mode_free,
    .one_micro = mode_one_micro,
    .partial = 1,
    .micro = hg__mp_micro,
    .counts = hg__mp_counts,
    .sumsq = hg__mp_sumsq,
    .sync = hg__mp_sync,
    .valid = hg__mp_valid,
    .owner = hg__mp_owner,
};
