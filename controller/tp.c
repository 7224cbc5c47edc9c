/* tp.c - hg__mode_tp, tensor parallelism (hg_ctl_strategy's HG_LAYOUT_TP):
 * every rank runs every op of the train graph on its shard of the op's
 * split axis, with the lowering's layouts and collectives
 * (planner/tensor.c, reduced by trainer/strategy.c).  The train graph is
 * rewritten after the optimizer: parameters and optimizer state cut to
 * this rank's shards (hg_graph_narrow), the collectives added as SLICE
 * and RESHARD nodes at their ops, each read rewired to the layout the
 * lowering chose, an embedding's vocabulary shard set; node shapes then
 * follow from the resolve.  Checkpoints, validation and the initial values
 * see the parameters whole: a second graph from the same recipe (its
 * parameters and state only are used) that sync gathers into and the
 * initial or loaded values are scattered from.  CPU plans. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "comm/hg_comm.h"
#include "controller/ctl-impl.h"

struct hg_tpx {
    struct hg_comm *comm;
    int me, world;
    struct hg_graph *g;      /* the train graph (rewritten) */
    int *coll_out;           /* [tp_ncoll] the tensor each collective makes */
    int *coll_node;          /* [tp_ncoll] its node, -1: none (a broadcast) */
    int64_t *clo, *chi;      /* [tp_ncoll][world] the bounds of its split axis */
    struct hg_graph *wg;     /* the parameters and state whole */
    struct hg_exec *wex;
    float *tmp;              /* [ntmp] a collective's rank-major pieces */
    size_t ntmp;
    size_t *counts;          /* [world] */
    int *norm, nnorm;        /* [nnorm] the gradients this rank counts in the norm */
};

static int mode_claims(const struct hg_ctl *c)
{
    return c->comm && c->s && c->s->kind == HG_LAYOUT_TP;
}

static const int64_t *tlo(const struct hg_ctl_strategy *s, int t) { return s->tp_tlo + (size_t)t * (size_t)s->world; }
static const int64_t *thi(const struct hg_ctl_strategy *s, int t) { return s->tp_thi + (size_t)t * (size_t)s->world; }

/* 1 when node v reads input i in the layout collective k makes, in k's
 * set (a read in the layout made, in the making set, is none's) */
static int reads(const struct hg_ctl_strategy *s, const struct hg_graph *g, int v, int i,
                 const struct hg_ctl_tpcoll *k)
{
    return hg_graph_node(g, v)->in[i] == k->tensor && s->tp_set[v] == k->set &&
           s->tp_read[v * HG_MAX_INPUTS + i] == k->to;
}

/* The bounds of the axis a collective splits: the made tensor's for an
 * all-gather, else those of a node of its set reading what it makes (any:
 * every split op of a set tiles an axis of that length alike). */
static int coll_bounds(const struct hg_ctl_strategy *s, const struct hg_graph *g,
                       const struct hg_ctl_tpcoll *k, int64_t *lo, int64_t *hi)
{
    size_t W = (size_t)s->world;
    if (k->kind == HG_CTL_TP_ALLGATHER) {
        memcpy(lo, tlo(s, k->tensor), W * sizeof *lo);
        memcpy(hi, thi(s, k->tensor), W * sizeof *hi);
        return 0;
    }
    if (k->kind == HG_CTL_TP_ALLREDUCE || k->kind == HG_CTL_TP_BCAST)
        return 0;
    for (int v = 0; v < s->nops; v++)
        for (int i = 0; i < hg_graph_node(g, v)->n_in; i++)
            if (reads(s, g, v, i, k)) {
                memcpy(lo, s->tp_lo + (size_t)v * W, W * sizeof *lo);
                memcpy(hi, s->tp_hi + (size_t)v * W, W * sizeof *hi);
                return 0;
            }
    return -1;
}

/* 1 when only optimizer ops read what collective k makes: a slice of a
 * whole gradient, taken in the update (of the micro-batches' sum, so
 * --update-freq needs nothing carried). */
static int update_only(const struct hg_ctl_strategy *s, const struct hg_graph *g,
                       const struct hg_ctl_tpcoll *k)
{
    int any = 0;
    for (int v = 0; v < s->nops; v++)
        for (int i = 0; i < hg_graph_node(g, v)->n_in; i++)
            if (reads(s, g, v, i, k)) {
                if (hg_graph_node(g, v)->phase != HG_PH_UPDATE)
                    return 0;
                any = 1;
            }
    return any;
}

/* Tensor t whole on this rank: itself when made whole, else what the
 * first collective made so far that makes it whole made (every set holds
 * every rank: whole in one set is whole in all); -1: none. */
static int whole_of(const struct hg_tpx *x, const struct hg_ctl_strategy *s, int t)
{
    if (s->tp_made[t] == -1)
        return t;
    for (int j = 0; j < s->tp_ncoll; j++)
        if (s->tp_coll[j].tensor == t && s->tp_coll[j].to == -1 && x->coll_out[j] >= 0)
            return x->coll_out[j];
    return -1;
}

/* The collective k as nodes at the end of g; its output (a broadcast:
 * the whole tensor, no node). */
static int add_coll(struct hg_tpx *x, const struct hg_ctl_strategy *s, int i, char *err,
                    size_t errlen)
{
    const struct hg_ctl_tpcoll *k = &s->tp_coll[i];
    struct hg_graph *g = x->g;
    int64_t *lo = x->clo + (size_t)i * (size_t)x->world, *hi = x->chi + (size_t)i * (size_t)x->world;
    if (coll_bounds(s, g, k, lo, hi) != 0)
        return hg_kerr(err, errlen, "the %d-th collective (tensor %d): no op reads what it "
                       "makes", i, k->tensor);
    int src = k->tensor;
    if (k->kind == HG_CTL_TP_SLICE || k->kind == HG_CTL_TP_BCAST) {
        src = whole_of(x, s, k->tensor);
        if (src < 0)
            return hg_kerr(err, errlen, "the %s of tensor %d: nothing makes it whole",
                           k->kind == HG_CTL_TP_SLICE ? "slice" : "broadcast", k->tensor);
        if (k->kind == HG_CTL_TP_BCAST)
            return src;
    }
    const struct hg_tensor_info *ti = hg_graph_tensor(g, src);
    hg_graph_set_phase(g, hg_graph_node(g, k->at)->phase);
    if (k->kind == HG_CTL_TP_SLICE && update_only(s, g, k))
        hg_graph_set_phase(g, HG_PH_UPDATE); /* of what the update sums */
    union hg_attr at;
    memset(&at, 0, sizeof at);
    if (k->kind == HG_CTL_TP_SLICE) {
        at.slice.axis = k->to;
        at.slice.start = lo[x->me];
        at.slice.len = hi[x->me] - lo[x->me];
        return hg_graph_op(g, HG_OP_SLICE, &src, 1, &at);
    }
    at.reshard.group = 0;
    at.reshard.tag = i;
    at.reshard.kind = k->kind;
    at.reshard.axis = k->kind == HG_CTL_TP_ALLGATHER ? k->from : k->to;
    at.reshard.len = k->kind == HG_CTL_TP_ALLGATHER ? hi[x->world - 1]
                     : k->kind == HG_CTL_TP_REDUCE_SCATTER ? hi[x->me] - lo[x->me] : 0;
    if (at.reshard.axis >= ti->shape.ndim)
        return hg_kerr(err, errlen, "the %d-th collective: axis %d of tensor %d", i,
                       at.reshard.axis, k->tensor);
    return hg_graph_op(g, HG_OP_RESHARD, &src, 1, &at);
}

/* Node v reads input k for its shape only (SUM_TO's reference, ...),
 * and makes a tensor of that shape: a reference in another layout (or
 * another set's shards) is replaced by the whole tensor, or its slice of
 * v's shard. */
static int shape_ref(struct hg_tpx *x, const struct hg_ctl_strategy *s, int v, int k,
                     char *err, size_t errlen)
{
    struct hg_graph *g = x->g;
    const struct hg_node_info *nd = hg_graph_node(g, v);
    size_t W = (size_t)x->world, me = (size_t)x->me;
    int t = nd->in[k], a = nd->out >= 0 ? s->tp_made[nd->out] : -1, m = s->tp_made[t];
    if (a < 0 && m < 0)
        return 0;
    int64_t vlo = s->tp_lo[(size_t)v * W + me], vhi = s->tp_hi[(size_t)v * W + me];
    if (a >= 0 && m == a && tlo(s, t)[me] == vlo && thi(s, t)[me] == vhi)
        return 0; /* the very shard */
    int src = whole_of(x, s, t);
    if (src < 0 || hg_graph_tensor(g, t)->shape.ndim != hg_graph_tensor(g, nd->out)->shape.ndim)
        return hg_kerr(err, errlen, "node %d (%s) takes its shape from tensor %s, which is "
                       "split otherwise: not run yet", v, hg_op_table[nd->op].name,
                       hg_graph_tensor(g, t)->name);
    if (a >= 0) {
        union hg_attr at;
        memset(&at, 0, sizeof at);
        at.slice.axis = a;
        at.slice.start = vlo;
        at.slice.len = vhi - vlo;
        enum hg_phase was = hg_graph_set_phase(g, nd->phase);
        src = hg_graph_op(g, HG_OP_SLICE, &src, 1, &at);
        hg_graph_set_phase(g, was);
    }
    hg_graph_set_input(g, v, k, src);
    return 0;
}

/* -1 naming a node whose split axis varies with the batch (a sequence's
 * length: its shards would move from batch to batch; the planner splits
 * none: pg->tvary, from the same hg_graph_varying). */
static int symbolic(const struct hg_ctl_strategy *s, const struct hg_graph *g, char *err,
                    size_t errlen)
{
    unsigned char *vary = malloc((size_t)hg_graph_n_tensors(g) + 1); /* [nt] */
    if (!vary)
        return hg_kerr(err, errlen, "out of memory");
    int rc = 0;
    hg_graph_varying(g, vary); /* all 0 when a rule refuses: nothing more is known */
    for (int v = 0; v < s->nops && rc == 0; v++) {
        int out = hg_graph_node(g, v)->out, a = out >= 0 ? s->tp_made[out] : -1;
        if (a >= 0 && (vary[out] >> a & 1))
            rc = hg_kerr(err, errlen, "node %d (%s) splits axis %d, which varies with the "
                         "batch (a length): not run yet", v,
                         hg_op_table[hg_graph_node(g, v)->op].name, a);
    }
    free(vary);
    return rc;
}

/* After the optimizer: the train graph cut to this rank's shards. */
static int rewrite(struct hg_ctl *c, struct hg_tpx *x, char *err, size_t errlen)
{
    const struct hg_ctl_strategy *s = c->s;
    struct hg_graph *g = x->g;
    if (hg_graph_n_nodes(g) != s->nops || hg_graph_n_tensors(g) != s->ntensors)
        return hg_kerr(err, errlen, "the train graph has %d nodes and %d tensors, the "
                       "strategy %d and %d", hg_graph_n_nodes(g), hg_graph_n_tensors(g),
                       s->nops, s->ntensors);
    if (symbolic(s, g, err, errlen) != 0)
        return -1;
    for (int t = 0; t < s->ntensors; t++) {
        int a = s->tp_made[t];
        if (a >= 0 && hg_graph_tensor(g, t)->producer < 0)
            hg_graph_narrow(g, t, a, thi(s, t)[x->me] - tlo(s, t)[x->me]);
    }
    enum hg_phase was = hg_graph_set_phase(g, HG_PH_FORWARD);
    /* those reading what is made first, then the broadcasts and slices
     * of whole tensors they (or another set's) make: the list is by
     * tensor, then set, and a reading set may come before the making one */
    for (int i = 0; i < s->tp_ncoll; i++)
        x->coll_out[i] = -1;
    for (int pass = 0; pass < 3; pass++)
        for (int i = 0; i < s->tp_ncoll; i++) {
            int kd = s->tp_coll[i].kind;
            if ((kd == HG_CTL_TP_BCAST ? 1 : kd == HG_CTL_TP_SLICE ? 2 : 0) != pass)
                continue;
            if ((x->coll_out[i] = add_coll(x, s, i, err, errlen)) < 0) {
                hg_graph_set_phase(g, was);
                return -1;
            }
        }
    for (int i = 0; i < s->tp_ncoll; i++) /* a broadcast adds no node */
        x->coll_node[i] = s->tp_coll[i].kind == HG_CTL_TP_BCAST
                              ? -1 : hg_graph_tensor(g, x->coll_out[i])->producer;
    hg_graph_set_phase(g, was);
    for (int v = 0; v < s->nops; v++) {
        const struct hg_node_info *nd = hg_graph_node(g, v);
        for (int i = 0; i < nd->n_in; i++) {
            int t = nd->in[i], r = s->tp_read[v * HG_MAX_INPUTS + i], to = -1;
            if (r == -2) {
                if (shape_ref(x, s, v, i, err, errlen) != 0)
                    return -1;
                continue;
            }
            if (r == s->tp_made[t] && (s->tp_tset[t] < 0 || s->tp_tset[t] == s->tp_set[v]))
                continue; /* as made, in its set */
            for (int j = 0; j < s->tp_ncoll; j++)
                if (reads(s, g, v, i, &s->tp_coll[j]))
                    to = x->coll_out[j];
            if (to < 0)
                return hg_kerr(err, errlen, "node %d (%s) reads tensor %s in a layout no "
                               "collective makes", v, hg_op_table[nd->op].name,
                               hg_graph_tensor(g, t)->name);
            hg_graph_set_input(g, v, i, to);
        }
        if (s->tp_vocab[v] > 0) {
            union hg_attr at = nd->attr;
            at.emb.row0 = s->tp_lo[(size_t)v * (size_t)s->world + (size_t)x->me];
            at.emb.vocab = s->tp_vocab[v];
            hg_graph_set_attr(g, v, &at);
        }
    }
    if (hg_graph_resolve(g, NULL, err, errlen) != 0)
        return -1;
    for (int t = 0; t < s->ntensors; t++) { /* what the nodes make is the shard planned */
        int a = s->tp_made[t];
        const struct hg_tensor_info *ti = hg_graph_tensor(g, t);
        if (a >= 0 && ti->shape.dim[a] != thi(s, t)[x->me] - tlo(s, t)[x->me])
            return hg_kerr(err, errlen, "tensor %s (made by node %d, %s): axis %d is %lld "
                           "long on rank %d, its shard %lld", ti->name, ti->producer,
                           ti->producer >= 0 ? hg_op_table[hg_graph_node(g, ti->producer)->op].name
                                             : "-", a, (long long)ti->shape.dim[a], x->me,
                           (long long)(thi(s, t)[x->me] - tlo(s, t)[x->me]));
    }
    return 0;
}

/* The gradients this rank counts in the norm (x->norm, once per plan):
 * what each optimizer op reads, a shard this rank's alone, a whole one
 * every rank's (rank 0 counts it); a slice the update takes of a whole
 * gradient counts as that whole. */
static int norm_parts(const struct hg_ctl_strategy *s, struct hg_tpx *x, char *err,
                      size_t errlen)
{
    struct hg_graph *g = x->g;
    x->norm = malloc(((size_t)s->nparams + 1) * sizeof(int));
    if (!x->norm)
        return hg_kerr(err, errlen, "out of memory");
    x->nnorm = 0;
    for (int v = 0; v < s->nops; v++) {
        const struct hg_node_info *nd = hg_graph_node(g, v);
        if (nd->phase != HG_PH_UPDATE || nd->out >= 0 || nd->n_in < 2)
            continue;
        int t = nd->in[1], pr = hg_graph_tensor(g, t)->producer, mine = -1;
        if (pr >= s->nops && hg_graph_node(g, pr)->phase == HG_PH_UPDATE)
            t = hg_graph_node(g, pr)->in[0]; /* not sliced yet: the whole */
        if (t < s->ntensors)
            mine = s->tp_made[t] >= 0 ? 1 : s->tp_made[t] == -1 ? 0 : -1;
        for (int j = 0; j < s->tp_ncoll && t >= s->ntensors; j++)
            if (x->coll_out[j] == t)
                mine = s->tp_coll[j].to >= 0;
        if (mine < 0)
            return hg_kerr(err, errlen, "the norm: node %d (%s) reads gradient %s as a "
                           "partial sum", v, hg_op_table[nd->op].name,
                           hg_graph_tensor(g, t)->name);
        HG_CHECK(x->nnorm <= s->nparams);
        if (mine || x->me == 0)
            x->norm[x->nnorm++] = t;
    }
    return 0;
}

/* The train plan's order being made: a node goes in once, after the
 * appended nodes (collectives, slices) its inputs come from. */
struct emit {
    const struct hg_graph *g;
    int nops;                /* the nodes before the rewrite */
    int *order;              /* [nn] */
    int n;
    unsigned char *done;     /* [nn] */
};

static void emit(struct emit *e, int u)
{
    if (e->done[u])
        return;
    e->done[u] = 1;
    const struct hg_node_info *nd = hg_graph_node(e->g, u);
    for (int i = 0; i < nd->n_in; i++) {
        int pr = hg_graph_tensor(e->g, nd->in[i])->producer;
        if (pr >= e->nops)
            emit(e, pr);
    }
    e->order[e->n++] = u;
}

/* the rewrite runs from the order hook: the optimizer is built by then */
static int mode_order(struct hg_ctl *c, struct plan *p, int **order, char *err,
                      size_t errlen)
{
    const struct hg_ctl_strategy *s = c->s;
    struct hg_tpx *x = calloc(1, sizeof *x);
    if (!x)
        return hg_kerr(err, errlen, "out of memory");
    c->tp = x;
    x->comm = c->comm;
    x->me = hg_comm_rank(c->comm);
    x->world = hg_comm_world(c->comm);
    x->g = p->g;
    size_t K = (size_t)s->tp_ncoll + 1, W = (size_t)x->world;
    x->coll_out = malloc(K * sizeof(int));
    x->coll_node = malloc(K * sizeof(int));
    x->clo = calloc(K * W, sizeof(int64_t));
    x->chi = calloc(K * W, sizeof(int64_t));
    x->counts = malloc(W * sizeof(size_t));
    if (!x->coll_out || !x->coll_node || !x->clo || !x->chi || !x->counts)
        return hg_kerr(err, errlen, "out of memory");
    if (s->world != x->world)
        return hg_kerr(err, errlen, "a tensor-parallel strategy for %d ranks on %d", s->world,
                       x->world);
    if (rewrite(c, x, err, errlen) != 0 || norm_parts(s, x, err, errlen) != 0)
        return -1;
    /* each original node with its collectives: those of what it reads
     * before it, those of what it makes after it (the appended nodes an
     * input needs, e.g. a slice giving a shape, just before it); then the
     * update, each optimizer op after the slices it reads */
    int nn = hg_graph_n_nodes(p->g);
    struct emit e = {p->g, s->nops, malloc((size_t)nn * sizeof(int)), 0,
                     calloc((size_t)nn, 1)};
    if (!e.order || !e.done) {
        free(e.order);
        free(e.done);
        return hg_kerr(err, errlen, "out of memory");
    }
    for (int v = 0; v < s->nops; v++) {
        if (hg_graph_node(p->g, v)->phase == HG_PH_UPDATE)
            continue;
        for (int after = 0; after < 2; after++) {
            if (after)
                emit(&e, v);
            for (int i = 0; i < s->tp_ncoll; i++) {
                const struct hg_ctl_tpcoll *k = &s->tp_coll[i];
                int made = hg_graph_tensor(p->g, k->tensor)->producer == v, u = x->coll_node[i];
                if (k->at == v && made == after && u >= 0 &&
                    hg_graph_node(p->g, u)->phase != HG_PH_UPDATE)
                    emit(&e, u);
            }
        }
    }
    for (int v = 0; v < s->nops; v++)
        if (hg_graph_node(p->g, v)->phase == HG_PH_UPDATE)
            emit(&e, v);
    free(e.done);
    *order = e.order;
    int n = e.n;
    if (n != nn)
        return hg_kerr(err, errlen, "the tensor-parallel order has %d of the %d nodes "
                       "(a collective at an update op?)", n, nn);
    return n;
}

/* ------------------------------------------------------------ collectives */

/* Tensor t's shape as [outer, len, inner] around axis a. */
static void around(const struct hg_shape *sh, int a, int64_t *outer, int64_t *inner)
{
    *outer = *inner = 1;
    for (int i = 0; i < sh->ndim; i++) {
        if (i < a)
            *outer *= sh->dim[i];
        else if (i > a)
            *inner *= sh->dim[i];
    }
}

static int want_tmp(struct hg_tpx *x, size_t n, char *err, size_t errlen)
{
    if (n <= x->ntmp)
        return 0;
    float *t = realloc(x->tmp, n * sizeof(float));
    if (!t)
        return hg_kerr(err, errlen, "out of memory");
    x->tmp = t;
    x->ntmp = n;
    return 0;
}

/* whole[outer, L, inner] <-> rank-major pieces[r][outer, hi_r - lo_r, inner] */
static void pieces(float *whole, float *pc, int64_t outer, int64_t L, int64_t inner,
                   const int64_t *lo, const int64_t *hi, int world, int to_pieces)
{
    size_t off = 0;
    for (int r = 0; r < world; r++) {
        size_t w = (size_t)(hi[r] - lo[r]) * (size_t)inner;
        for (int64_t o = 0; o < outer; o++, off += w) {
            float *a = whole + ((size_t)o * (size_t)L + (size_t)lo[r]) * (size_t)inner;
            if (to_pieces)
                memcpy(pc + off, a, w * sizeof(float));
            else
                memcpy(a, pc + off, w * sizeof(float));
        }
    }
}

/* An all-gather of shards of axis a (bounds lo, hi) from send into the
 * whole recv of shape sh. */
static int gather(struct hg_tpx *x, const float *send, float *recv, const struct hg_shape *sh,
                  int a, const int64_t *lo, const int64_t *hi, char *err, size_t errlen)
{
    int64_t outer, inner;
    around(sh, a, &outer, &inner);
    for (int r = 0; r < x->world; r++)
        x->counts[r] = (size_t)(outer * (hi[r] - lo[r]) * inner) * sizeof(float);
    if (outer == 1) /* the pieces are the whole's own order */
        return hg_comm_allgatherv(x->comm, send, recv, x->counts, err, errlen);
    size_t n = (size_t)hg_shape_numel(sh);
    if (want_tmp(x, n, err, errlen) != 0 ||
        hg_comm_allgatherv(x->comm, send, x->tmp, x->counts, err, errlen) != 0)
        return -1;
    pieces(recv, x->tmp, outer, sh->dim[a], inner, lo, hi, x->world, 0);
    return 0;
}

static int coll_start(void *arg, struct hg_exec *ex, int node, char *err, size_t errlen)
{
    struct hg_tpx *x = arg;
    const struct hg_node_info *nd = hg_graph_node(x->g, node);
    HG_CHECK(nd->op == HG_OP_RESHARD);
    int i = nd->attr.reshard.tag, a = nd->attr.reshard.axis;
    const int64_t *lo = x->clo + (size_t)i * (size_t)x->world,
                  *hi = x->chi + (size_t)i * (size_t)x->world;
    struct hg_exec_buf in, out;
    hg_exec_comm_in(ex, node, &in);
    hg_exec_comm_buf(ex, node, &out);
    const struct hg_shape *ish = &hg_graph_tensor(x->g, nd->in[0])->shape,
                          *osh = &hg_graph_tensor(x->g, nd->out)->shape;
    switch (nd->attr.reshard.kind) {
    case HG_CTL_TP_ALLGATHER:
        return gather(x, in.host, out.host, osh, a, lo, hi, err, errlen);
    case HG_CTL_TP_ALLREDUCE:
        memcpy(out.host, in.host, out.bytes);
        return hg_comm_allreduce_f32(x->comm, out.host, out.bytes / sizeof(float), err,
                                     errlen);
    case HG_CTL_TP_REDUCE_SCATTER: {
        int64_t outer, inner;
        around(ish, a, &outer, &inner);
        for (int r = 0; r < x->world; r++)
            x->counts[r] = (size_t)(outer * (hi[r] - lo[r]) * inner);
        const float *send = in.host;
        if (outer > 1) {
            if (want_tmp(x, (size_t)hg_shape_numel(ish), err, errlen) != 0)
                return -1;
            pieces(in.host, x->tmp, outer, ish->dim[a], inner, lo, hi, x->world, 1);
            send = x->tmp;
        }
        return hg_comm_reduce_scatterv_f32(x->comm, send, out.host, x->counts, err, errlen);
    }
    default:
        return hg_kerr(err, errlen, "reshard kind %d", nd->attr.reshard.kind);
    }
}

static int coll_wait(void *arg, struct hg_exec *ex, int node, char *err, size_t errlen)
{
    (void)arg, (void)ex, (void)node, (void)err, (void)errlen;
    return 0; /* the start ran it */
}

/* ------------------------------------------------------------ whole view */

/* Parameters and state: this rank's shards <-> the whole view (every rank
 * gathers; scattering is local). */
static int shards(struct hg_ctl *c, int gather_them, char *err, size_t errlen)
{
    struct hg_tpx *x = c->tp;
    const struct hg_ctl_strategy *s = c->s;
    for (int t = 0; t < s->ntensors; t++) {
        const struct hg_tensor_info *ti = hg_graph_tensor(x->g, t);
        if (ti->kind != HG_T_PARAM && ti->kind != HG_T_STATE)
            continue;
        float *mine = hg_exec_data(c->train.ex, t), *whole = hg_exec_data(x->wex, t);
        const struct hg_shape *wsh = &hg_graph_tensor(x->wg, t)->shape;
        int a = s->tp_made[t];
        if (!mine || !whole)
            return hg_kerr(err, errlen, "tensor %s has no buffer", ti->name);
        if (a < 0) {
            size_t bytes = (size_t)hg_shape_numel(wsh) * sizeof(float);
            memcpy(gather_them ? whole : mine, gather_them ? mine : whole, bytes);
        } else if (gather_them) {
            if (gather(x, mine, whole, wsh, a, tlo(s, t), thi(s, t), err, errlen) != 0)
                return -1;
        } else {
            int64_t outer, inner, lo = tlo(s, t)[x->me], hi = thi(s, t)[x->me];
            around(wsh, a, &outer, &inner);
            size_t w = (size_t)((hi - lo) * inner);
            for (int64_t o = 0; o < outer; o++)
                memcpy(mine + (size_t)o * w,
                       whole + ((size_t)o * (size_t)wsh->dim[a] + (size_t)lo) * (size_t)inner,
                       w * sizeof(float));
        }
    }
    return 0;
}

/* The whole view: the recipe's graph again, an executor over its
 * optimizer (parameters, gradients and state get buffers; it never runs).
 * Made when asked for and dropped after use (the next micro-batch at the
 * latest), so that a rank holds its shards, not the whole model, while it
 * trains. */
static int whole_get(struct hg_ctl *c, char *err, size_t errlen)
{
    struct hg_tpx *x = c->tp;
    if (x->wex)
        return 0;
    const struct hg_task_graph_opts go = {.batch = c->cfg.max_batch, .max_len = c->cfg.max_len,
                                          .train = 1, .backward = 1, .optim = c->cfg.optim,
                                          .hyper = c->cfg.hyper};
    struct hg_task_model m;
    if (!x->wg) {
        x->wg = hg_graph_new();
        if (hg_task_graph(x->wg, c->task, c->ts, &go, &m, err, errlen) != 0)
            return -1;
    }
    int nn = hg_graph_n_nodes(x->wg), n = 0;
    int *order = malloc((size_t)(nn ? nn : 1) * sizeof(int)); /* [n] */
    if (!order)
        return hg_kerr(err, errlen, "out of memory");
    for (int v = 0; v < nn; v++)
        if (hg_graph_node(x->wg, v)->phase == HG_PH_UPDATE)
            order[n++] = v;
    x->wex = hg_exec_new(x->wg, order, n, err, errlen);
    free(order);
    return x->wex ? 0 : -1;
}

/* the buffers go; the graph (no buffers) stays for the next time */
static void whole_drop(struct hg_tpx *x)
{
    hg_exec_free(x->wex);
    x->wex = NULL;
}

static int mode_start(struct hg_ctl *c, struct plan *p, char *err, size_t errlen)
{
    if (hg_exec_device(p->ex) >= 0)
        return hg_kerr(err, errlen, "tensor parallelism runs on CPU plans so far");
    static const struct hg_exec_comm_ops ops = {coll_start, coll_wait};
    hg_exec_set_comm(p->ex, &ops, c->tp);
    return 0;
}

static void mode_free(struct hg_ctl *c)
{
    struct hg_tpx *x = c->tp;
    if (!x)
        return;
    hg_exec_free(x->wex);
    hg_graph_free(x->wg);
    free(x->coll_out);
    free(x->coll_node);
    free(x->clo);
    free(x->chi);
    free(x->tmp);
    free(x->counts);
    free(x->norm);
    free(x);
    c->tp = NULL;
}

/* the initial values: the whole graph's (one rank's), cut */
static int mode_init(struct hg_ctl *c, uint64_t seed, char *err, size_t errlen)
{
    if (whole_get(c, err, errlen) != 0)
        return -1;
    hg_graph_init_params(c->tp->wg, c->tp->wex, seed);
    int rc = shards(c, 0, err, errlen);
    whole_drop(c->tp);
    return rc;
}

/* Rank 0's whole parameters and state everywhere: what a checkpoint
 * loaded into its whole view; without one the shards are every rank's
 * cut of the same initial values already (rank 0 says which). */
static int mode_broadcast(struct hg_ctl *c, char *err, size_t errlen)
{
    struct hg_tpx *x = c->tp;
    int has = x->wex != NULL;
    size_t np, ns;
    if (hg_comm_broadcast(c->comm, &has, sizeof has, 0, err, errlen) != 0)
        return -1;
    c->valid_stale = 1;
    if (!has)
        return 0;
    if (whole_get(c, err, errlen) != 0)
        return -1;
    float *p = hg_exec_param_block(x->wex, &np);  /* [np] */
    float *st = hg_exec_state_block(x->wex, &ns); /* [ns] */
    int rc = hg_comm_broadcast(c->comm, p, np * sizeof(float), 0, err, errlen) != 0 ||
                     (ns && hg_comm_broadcast(c->comm, st, ns * sizeof(float), 0, err,
                                              errlen) != 0)
                 ? -1
                 : shards(c, 0, err, errlen);
    whole_drop(x);
    return rc;
}

static int mode_whole(struct hg_ctl *c, struct hg_graph **g, struct hg_exec **ex, char *err,
                      size_t errlen)
{
    if (whole_get(c, err, errlen) != 0)
        return -1;
    *g = c->tp->wg;
    *ex = c->tp->wex;
    return 0;
}

static int mode_sync(struct hg_ctl *c, char *err, size_t errlen)
{
    return whole_get(c, err, errlen) != 0 ? -1 : shards(c, 1, err, errlen);
}

/* training goes on: the whole view (a checkpoint's) is let go */
static int mode_micro(struct hg_ctl *c, const struct hg_batch *b, uint64_t update,
                      struct hg_ctl_stats *st)
{
    (void)b, (void)update, (void)st;
    whole_drop(c->tp);
    return 0;
}

/* every rank gathers the parameters, rank 0 validates */
static int mode_valid(struct hg_ctl *c, int *skip, char *err, size_t errlen)
{
    *skip = c->tp->me != 0;
    if (!c->valid_stale)
        return 0;
    if (mode_sync(c, err, errlen) != 0)
        return -1;
    size_t n, nv;
    const float *p = hg_exec_param_block(c->tp->wex, &n);
    float *pv = hg_exec_param_block(c->valid.ex, &nv); /* the same order */
    HG_CHECK(n == nv);
    memcpy(pv, p, n * sizeof(float));
    whole_drop(c->tp);
    if (hg_exec_upload(c->valid.ex, HG_R_PARAMS, err, errlen) != 0)
        return -1;
    c->valid_stale = 0;
    return 0;
}

static int mode_sumsq(struct hg_ctl *c, double *own, char *err, size_t errlen)
{
    const struct hg_tpx *x = c->tp;
    (void)err, (void)errlen;
    *own = 0;
    for (int i = 0; i < x->nnorm; i++) {
        const float *d = hg_exec_data(c->train.ex, x->norm[i]);
        int64_t n = hg_shape_numel(&hg_graph_tensor(x->g, x->norm[i])->shape);
        for (int64_t k = 0; k < n; k++)
            *own += (double)d[k] * d[k];
    }
    return 0;
}

static int mode_counts(const struct hg_ctl *c, int nll)
{
    (void)nll;
    return c->tp->me == 0; /* every rank computes the loss */
}

static int mode_owner(const struct hg_ctl *c, int i, int param)
{
    (void)c, (void)i, (void)param;
    return 0; /* whole after sync on rank 0 */
}

static void mode_describe(const struct hg_ctl *c, char *buf, size_t len)
{
    size_t n = strlen(buf);
    if (n < len) /* after the thread count, as the other modes' */
        snprintf(buf + n, len - n, "; tensor parallel: %d collectives", c->s->tp_ncoll);
}

const struct hg__mode hg__mode_tp = {
    .name = "tensor parallel",
    .claims = mode_claims,
    .order = mode_order,
    .start = mode_start,
    .free = mode_free,
    .partial = 1,
    .micro = mode_micro,
    .init = mode_init,
    .broadcast = mode_broadcast,
    .whole = mode_whole,
    .counts = mode_counts,
    .sumsq = mode_sumsq,
    .sync = mode_sync,
    .valid = mode_valid,
    .owner = mode_owner,
    .describe = mode_describe,
};
