/* graph.c - tensors, nodes, the builder, shape resolution, ordering. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph-impl.h"

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n);
    HG_CHECK(q != NULL);
    return q;
}

/* what a new graph's attention layers build (hg_graph_default_fused_attention) */
static int default_fused_attention = 1;

void hg_graph_default_fused_attention(int fused)
{
    default_fused_attention = fused != 0;
}

struct hg_graph *hg_graph_new(void)
{
    struct hg_graph *g = calloc(1, sizeof(*g));
    if (g)
        g->cap_batch = -1;
    HG_CHECK(g != NULL);
    g->phase = HG_PH_FORWARD;
    g->fused_attention = default_fused_attention;
    return g;
}

void hg_graph_set_fused_attention(struct hg_graph *g, int fused)
{
    g->fused_attention = fused != 0;
}

int hg_graph_fused_attention(const struct hg_graph *g)
{
    return g->fused_attention;
}

void hg_graph_free(struct hg_graph *g)
{
    if (!g)
        return;
    for (int i = 0; i < g->nt; i++)
        free(g->t[i].name);
    free(g->t);
    free(g->n);
    free(g->params);
    free(g->origin);
    free(g->acct);
    free(g->rsrc);
    free(g);
}

int64_t hg_graph_sym(struct hg_graph *g, const char *name, int64_t max)
{
    HG_CHECK(g->nsym < HG_MAX_SYMS && max > 0);
    HG_CHECK(hg_graph_sym_find(g, name) < 0);
    int k = g->nsym++;
    snprintf(g->sym[k].name, sizeof(g->sym[k].name), "%s", name);
    g->sym[k].max = g->sym[k].cur = g->sym[k].def = max;
    g->sym[k].capped = 0;
    return HG_SYM(k);
}

int hg_graph_token_cap(struct hg_graph *g, int batch_k, const int *len_k, int nlen,
                       int64_t cap)
{
    HG_CHECK(batch_k >= 0 && batch_k < g->nsym && cap > 0 && nlen >= 0);
    g->cap_batch = batch_k;
    g->cap = cap;
    for (int i = 0; i < nlen; i++) {
        HG_CHECK(len_k[i] >= 0 && len_k[i] < g->nsym && len_k[i] != batch_k);
        g->sym[len_k[i]].capped = 1;
    }
    /* the default point: the largest batch, lengths as long as the cap
     * lets them be */
    int64_t b = g->sym[batch_k].max;
    for (int k = 0; k < g->nsym; k++)
        if (g->sym[k].capped) {
            int64_t l = (cap + b - 1) / b;
            g->sym[k].def = l < g->sym[k].max ? l : g->sym[k].max;
        }
    return 0;
}

int hg_graph_token_corners(const struct hg_graph *g, int64_t (*corner)[HG_MAX_SYMS],
                           int max_corners)
{
    int n = 0;
    int64_t cand[HG_MAX_SYMS + 1];
    int nc = 0;
    if (g->cap_batch < 0) {
        for (int k = 0; k < g->nsym; k++)
            corner[0][k] = g->sym[k].max;
        return 1;
    }
    int64_t bmax = g->sym[g->cap_batch].max;
    cand[nc++] = bmax;
    for (int k = 0; k < g->nsym; k++)
        if (g->sym[k].capped) {
            int64_t b = (g->cap + g->sym[k].max - 1) / g->sym[k].max;
            cand[nc++] = b < 1 ? 1 : b > bmax ? bmax : b;
        }
    for (int c = 0; c < nc && n < max_corners; c++) {
        int dup = 0;
        for (int j = 0; j < c; j++)
            dup |= cand[j] == cand[c];
        if (dup)
            continue;
        for (int k = 0; k < g->nsym; k++) {
            int64_t v = g->sym[k].max;
            if (k == g->cap_batch)
                v = cand[c];
            else if (g->sym[k].capped) {
                /* A length reaches its maximum with up to cap / max
                 * samples, so a batch no larger than that, rounded up,
                 * gets the full length: rounding the batch up and then the
                 * length from it (cap / ceil(cap / max)) falls short of
                 * the maximum when max does not divide cap, and a batch
                 * of that maximum length would outgrow its buffers. */
                int64_t bk = (g->cap + v - 1) / v;
                if (cand[c] > bk) {
                    int64_t l = (g->cap + cand[c] - 1) / cand[c];
                    v = l < v ? l : v;
                }
            }
            corner[n][k] = v;
        }
        n++;
    }
    return n;
}

int hg_graph_n_syms(const struct hg_graph *g) { return g->nsym; }

const char *hg_graph_sym_name(const struct hg_graph *g, int k)
{
    return k >= 0 && k < g->nsym ? g->sym[k].name : NULL;
}

int64_t hg_graph_sym_max(const struct hg_graph *g, int k)
{
    return k >= 0 && k < g->nsym ? g->sym[k].max : 0;
}

int hg_graph_sym_find(const struct hg_graph *g, const char *name)
{
    for (int k = 0; k < g->nsym; k++)
        if (strcmp(g->sym[k].name, name) == 0)
            return k;
    return -1;
}

/* Declared shape -> concrete shape at the current symbol values. */
static void resolve_decl(const struct hg_graph *g, const struct hg_shape *decl,
                         struct hg_shape *out)
{
    *out = *decl;
    for (int i = 0; i < decl->ndim; i++)
        if (HG_IS_SYM(decl->dim[i])) {
            int k = HG_SYM_INDEX(decl->dim[i]);
            HG_CHECK(k < g->nsym);
            out->dim[i] = g->sym[k].cur;
        }
}

int hg__graph_tensor(struct hg_graph *g, const char *name, enum hg_tkind kind,
                     enum hg_dtype dt, const struct hg_shape *decl,
                     int batch_axis)
{
    if (g->nt == g->ct) {
        g->ct = g->ct ? 2 * g->ct : 64;
        g->t = xrealloc(g->t, (size_t)g->ct * sizeof(*g->t));
    }
    int id = g->nt++;
    struct hg_trec *r = &g->t[id];
    memset(r, 0, sizeof(*r));
    char buf[32];
    if (!name) {
        snprintf(buf, sizeof(buf), "t%d", id);
        name = buf;
    }
    r->name = strdup(name);
    HG_CHECK(r->name != NULL);
    r->info.name = r->name;
    r->info.kind = kind;
    r->info.dtype = dt;
    r->info.decl = *decl;
    resolve_decl(g, decl, &r->info.shape);
    r->info.batch_axis = batch_axis;
    r->info.producer = -1;
    r->info.grad_of = -1;
    r->grad = -1;
    r->like = -1;
    return id;
}

static struct hg_shape make_shape(int ndim, const int64_t *dim)
{
    struct hg_shape s = {.ndim = ndim};
    HG_CHECK(ndim >= 0 && ndim <= HG_MAX_DIMS);
    for (int i = 0; i < ndim; i++)
        s.dim[i] = dim[i];
    return s;
}

int hg_graph_input(struct hg_graph *g, const char *name, enum hg_dtype dt,
                   int ndim, const int64_t *dim, int batch_axis)
{
    HG_CHECK(name && hg_graph_find(g, name) < 0);
    struct hg_shape s = make_shape(ndim, dim);
    return hg__graph_tensor(g, name, HG_T_INPUT, dt, &s, batch_axis);
}

int hg_graph_param(struct hg_graph *g, const char *name, int ndim,
                   const int64_t *dim, enum hg_init init, float scale)
{
    HG_CHECK(name && hg_graph_find(g, name) < 0);
    HG_CHECK(!g->has_backward); /* params are fixed once backward exists */
    struct hg_shape s = make_shape(ndim, dim);
    for (int i = 0; i < ndim; i++)
        HG_CHECK(!HG_IS_SYM(dim[i])); /* params have static shapes */
    int id = hg__graph_tensor(g, name, HG_T_PARAM, HG_F32, &s, -1);
    g->t[id].init = init;
    g->t[id].init_scale = scale;
    if (g->np == g->cp) {
        g->cp = g->cp ? 2 * g->cp : 32;
        g->params = xrealloc(g->params, (size_t)g->cp * sizeof(int));
    }
    g->params[g->np++] = id;
    return id;
}

void hg_graph_keep(struct hg_graph *g, int t)
{
    HG_CHECK(t >= 0 && t < g->nt);
    g->t[t].keep = 1;
}

/* Which axis of the output carries the batch, from the op and its inputs. */
static int out_batch_axis(const struct hg_graph *g, enum hg_op op,
                          const int *in, int n_in, const union hg_attr *attr,
                          const struct hg_shape *out)
{
    if (op == HG_OP_RECV)
        return attr->comm.batch_axis; /* declared, as an input's */
    int b0 = g->t[in[0]].info.batch_axis;
    switch (op) {
    case HG_OP_MATMUL_REDUCE: case HG_OP_CONV2D_BWD_FILTER:
    case HG_OP_LAYERNORM_BWD_G: case HG_OP_EMBEDDING_BWD:
    case HG_OP_CROSS_ENTROPY: case HG_OP_NLL:
    case HG_OP_SGD_STEP: case HG_OP_ADAMW_STEP: case HG_OP_ADADELTA_STEP:
        return -1;
    case HG_OP_SUM_TO: case HG_OP_RESHAPE_LIKE: case HG_OP_EXPAND_LIKE:
    case HG_OP_SLICE_BWD:
        return g->t[in[1]].info.batch_axis;
    case HG_OP_CONV2D_BWD_DATA:
    case HG_OP_CROSS_ENTROPY_BWD: case HG_OP_NLL_BWD:
        return g->t[in[0]].info.batch_axis >= 0 ? b0
                                                : g->t[in[2]].info.batch_axis;
    case HG_OP_EMBEDDING:
        return g->t[in[1]].info.batch_axis;
    case HG_OP_MATMUL: {
        /* the batch survives as a leading dim, a row of op(a) or a column
         * of op(b); contracted away it is gone (weight gradients) */
        int nd = out->ndim;
        const struct hg_tensor_info *ta = &g->t[in[0]].info, *tb = &g->t[in[1]].info;
        if (ta->batch_axis >= 0) {
            int ba = ta->batch_axis + nd - ta->shape.ndim;
            if (ba < nd - 2)
                return ba;
            return ba == (attr->mm.trans_a ? nd - 1 : nd - 2) ? nd - 2 : -1;
        }
        if (tb->batch_axis >= 0) {
            int bb = tb->batch_axis + nd - tb->shape.ndim;
            if (bb < nd - 2)
                return bb;
            return bb == (attr->mm.trans_b ? nd - 2 : nd - 1) ? nd - 1 : -1;
        }
        return -1;
    }
    case HG_OP_SUM: case HG_OP_MEAN: {
        int ax = attr->reduce.axis;
        if (ax == HG_AXIS_ALL)
            return -1;
        if (ax < 0)
            ax += out->ndim;
        return ax == b0 ? -1 : b0;
    }
    case HG_OP_ATTENTION_BWD:
        /* dq as q; a stack of gradients [2 or 3,B,H,T,Dh] one axis in */
        return attr->attn.which == 0 || b0 < 0 ? b0 : b0 + 1;
    case HG_OP_RESHAPE:
        /* The batch survives a reshape that keeps the leading axis. */
        return (b0 == 0 && attr->reshape.dim[0] == 0) ? 0 : -1;
    case HG_OP_PERMUTE:
        for (int i = 0; i < attr->permute.ndim; i++)
            if (attr->permute.perm[i] == b0)
                return b0 < 0 ? -1 : i;
        return -1;
    case HG_OP_ADD: case HG_OP_SUB: case HG_OP_MUL:
        for (int i = 0; i < n_in; i++) {
            const struct hg_tensor_info *ti = &g->t[in[i]].info;
            if (ti->batch_axis >= 0)
                return ti->batch_axis + out->ndim - ti->shape.ndim;
        }
        return -1;
    default:
        return b0;
    }
}

static void node_shape(const struct hg_graph *g, const struct hg_node_info *nd,
                       struct hg_shape *out, enum hg_dtype *odt, char *err,
                       size_t errlen, int *rc)
{
    struct hg_shape ins[HG_MAX_INPUTS];
    enum hg_dtype dts[HG_MAX_INPUTS];
    for (int i = 0; i < nd->n_in; i++) {
        ins[i] = g->t[nd->in[i]].info.shape;
        dts[i] = g->t[nd->in[i]].info.dtype;
    }
    memset(out, 0, sizeof(*out));
    *odt = HG_F32;
    union hg_attr at = nd->attr;
    if (nd->op == HG_OP_RECV) {
        /* a declared shape: its symbols resolve as an input's do */
        for (int i = 0; i < at.comm.ndim && i < HG_MAX_DIMS; i++)
            if (HG_IS_SYM(at.comm.dim[i])) {
                int k = HG_SYM_INDEX(at.comm.dim[i]);
                HG_CHECK(k < g->nsym);
                at.comm.dim[i] = (int32_t)g->sym[k].cur;
            }
    }
    *rc = hg_op_table[nd->op].shape(ins, dts, nd->n_in, &at, out, odt, err, errlen);
}

int hg_graph_op(struct hg_graph *g, enum hg_op op, const int *in, int n_in,
                const union hg_attr *attr)
{
    HG_CHECK(op >= 0 && op < HG_OP_COUNT);
    const struct hg_op_info *oi = &hg_op_table[op];
    HG_CHECK(n_in >= (oi->n_in == 0 ? 0 : 1) && n_in <= HG_MAX_INPUTS);
    HG_CHECK((oi->flags & HG_OPF_VARIADIC) ? n_in <= oi->n_in
                                           : n_in == oi->n_in);
    if (g->nn == g->cn) {
        g->cn = g->cn ? 2 * g->cn : 64;
        g->n = xrealloc(g->n, (size_t)g->cn * sizeof(*g->n));
    }
    struct hg_node_info nd;
    memset(&nd, 0, sizeof(nd));
    nd.op = op;
    nd.n_in = n_in;
    for (int i = 0; i < n_in; i++) {
        HG_CHECK(in[i] >= 0 && in[i] < g->nt);
        nd.in[i] = in[i];
    }
    if (attr)
        nd.attr = *attr;
    nd.phase = g->phase;
    nd.out = -1;

    struct hg_shape s;
    enum hg_dtype dt;
    char err[256] = "";
    int rc;
    node_shape(g, &nd, &s, &dt, err, sizeof(err), &rc);
    if (rc != 0) {
        fprintf(stderr, "hg_graph_op: %s: %s\n", oi->name, err);
        HG_CHECK(!"shape rule rejected the op");
    }
    int id = g->nn;
    if (!(oi->flags & HG_OPF_NO_OUTPUT)) {
        int ba = out_batch_axis(g, op, in, n_in, &nd.attr, &s);
        /* Outputs are concrete at creation; their symbolic form is only
         * needed for resolve(), which re-runs the shape rules. */
        nd.out = hg__graph_tensor(g, NULL, HG_T_ACT, dt, &s, ba);
        g->t[nd.out].info.producer = id;
    }
    g->n[g->nn++] = nd;
    return nd.out; /* -1 for update ops */
}

int hg_graph_recv_like(struct hg_graph *g, int like, const union hg_attr *attr)
{
    HG_CHECK(like >= 0 && like < g->nt);
    const struct hg_tensor_info *ti = &g->t[like].info;
    union hg_attr at = *attr;
    at.comm.dtype = ti->dtype;
    at.comm.batch_axis = ti->batch_axis;
    at.comm.ndim = ti->shape.ndim;
    for (int i = 0; i < ti->shape.ndim; i++) {
        HG_CHECK(ti->shape.dim[i] >= 0 && ti->shape.dim[i] <= INT32_MAX);
        at.comm.dim[i] = (int32_t)ti->shape.dim[i]; /* the current shape; resolve follows like */
    }
    int t = hg_graph_op(g, HG_OP_RECV, NULL, 0, &at);
    /* a recomputing copy's output takes its original's shape: follow it
     * there (resolve reads one level, in id order) */
    g->t[t].like = g->t[like].like >= 0 ? g->t[like].like : like;
    /* named after what it carries, for messages */
    size_t len = strlen(g->t[like].name) + 6;
    char *name = malloc(len);
    HG_CHECK(name != NULL);
    snprintf(name, len, "%s.recv", g->t[like].name);
    free(g->t[t].name);
    g->t[t].name = name;
    g->t[t].info.name = name;
    return t;
}

void hg_graph_narrow(struct hg_graph *g, int t, int axis, int64_t len)
{
    HG_CHECK(t >= 0 && t < g->nt);
    struct hg_tensor_info *ti = &g->t[t].info;
    HG_CHECK(ti->producer < 0 && axis >= 0 && axis < ti->decl.ndim);
    HG_CHECK(ti->decl.dim[axis] >= len && len >= 0); /* a constant axis, cut */
    ti->decl.dim[axis] = len;
    ti->shape.dim[axis] = len;
}

void hg_graph_set_input(struct hg_graph *g, int node, int k, int t)
{
    HG_CHECK(node >= 0 && node < g->nn && t >= 0 && t < g->nt);
    HG_CHECK(k >= 0 && k < g->n[node].n_in && g->t[t].info.dtype == g->t[g->n[node].in[k]].info.dtype);
    g->n[node].in[k] = t;
}

void hg_graph_set_attr(struct hg_graph *g, int node, const union hg_attr *attr)
{
    HG_CHECK(node >= 0 && node < g->nn);
    g->n[node].attr = *attr;
}

void hg_graph_rewire(struct hg_graph *g, int node, int from, int to)
{
    HG_CHECK(node >= 0 && node < g->nn && from >= 0 && from < g->nt && to >= 0 && to < g->nt);
    const struct hg_tensor_info *a = &g->t[from].info, *b = &g->t[to].info;
    HG_CHECK(a->dtype == b->dtype && a->shape.ndim == b->shape.ndim);
    for (int i = 0; i < a->shape.ndim; i++)
        HG_CHECK(a->shape.dim[i] == b->shape.dim[i]);
    struct hg_node_info *nd = &g->n[node];
    for (int k = 0; k < nd->n_in; k++)
        if (nd->in[k] == from)
            nd->in[k] = to;
}

void hg_graph_swap_outputs(struct hg_graph *g, int a, int b)
{
    HG_CHECK(a >= 0 && a < g->nn && b >= 0 && b < g->nn && a != b);
    int ta = g->n[a].out, tb = g->n[b].out;
    HG_CHECK(ta >= 0 && tb >= 0);
    const struct hg_tensor_info *x = &g->t[ta].info, *y = &g->t[tb].info;
    HG_CHECK(x->dtype == y->dtype && x->shape.ndim == y->shape.ndim);
    for (int i = 0; i < x->shape.ndim; i++)
        HG_CHECK(x->shape.dim[i] == y->shape.dim[i] && x->decl.dim[i] == y->decl.dim[i]);
    g->n[a].out = tb;
    g->n[b].out = ta;
    g->t[ta].info.producer = b;
    g->t[tb].info.producer = a;
}

int hg_graph_n_tensors(const struct hg_graph *g) { return g->nt; }
int hg_graph_n_nodes(const struct hg_graph *g) { return g->nn; }
int hg_graph_n_params(const struct hg_graph *g) { return g->np; }

const struct hg_tensor_info *hg_graph_tensor(const struct hg_graph *g, int t)
{
    HG_CHECK(t >= 0 && t < g->nt);
    return &g->t[t].info;
}

const struct hg_node_info *hg_graph_node(const struct hg_graph *g, int n)
{
    HG_CHECK(n >= 0 && n < g->nn);
    return &g->n[n];
}

int hg_graph_find(const struct hg_graph *g, const char *name)
{
    for (int i = 0; i < g->nt; i++)
        if (strcmp(g->t[i].name, name) == 0)
            return i;
    return -1;
}

int hg_graph_param_at(const struct hg_graph *g, int i)
{
    HG_CHECK(i >= 0 && i < g->np);
    return g->params[i];
}

int64_t hg_graph_param_count(const struct hg_graph *g)
{
    int64_t n = 0;
    for (int i = 0; i < g->np; i++)
        n += hg_shape_numel(&g->t[g->params[i]].info.shape);
    return n;
}

/* Node n's output shape from its inputs', a later node making one of them
 * (tensor parallelism's collectives are appended after the optimizer, their
 * readers come earlier) resolved first. */
static int resolve_node(struct hg_graph *g, int n, unsigned char *done, char *err,
                        size_t errlen)
{
    const struct hg_node_info *nd = &g->n[n];
    if (done[n])
        return 0;
    done[n] = 1;
    if (nd->out < 0)
        return 0;
    for (int k = 0; k < nd->n_in; k++) {
        int p = g->t[nd->in[k]].info.producer;
        if (p > n && g->t[nd->in[k]].like < 0 && resolve_node(g, p, done, err, errlen) != 0)
            return -1;
    }
    /* a RECV standing for a tensor of another rank, and that rank's
     * readers' inputs before them (its readers come earlier in id
     * order than it: it was appended after the optimizer) */
    for (int k = 0; k < nd->n_in; k++) {
        int like = g->t[nd->in[k]].like;
        if (like >= 0)
            g->t[nd->in[k]].info.shape = g->t[like].info.shape;
    }
    if (g->t[nd->out].like >= 0) {
        g->t[nd->out].info.shape = g->t[g->t[nd->out].like].info.shape;
        return 0;
    }
    struct hg_shape s;
    enum hg_dtype dt;
    char e[256] = "";
    int rc;
    node_shape(g, nd, &s, &dt, e, sizeof(e), &rc);
    if (rc != 0)
        return hg_kerr(err, errlen, "node %d (%s): %s", n, hg_op_table[nd->op].name, e);
    g->t[nd->out].info.shape = s;
    return 0;
}

/* Every tensor's shape with each symbol at its maximum less `less` (at
 * least 1) into s[nt], the graph left as it is; -1 when a rule refuses. */
static int shapes_at(const struct hg_graph *g, int64_t less, struct hg_shape *s)
{
    for (int t = 0; t < g->nt; t++) {
        const struct hg_shape *d = &g->t[t].info.decl;
        s[t] = *d;
        for (int i = 0; i < d->ndim; i++)
            if (HG_IS_SYM(d->dim[i])) {
                int64_t m = g->sym[HG_SYM_INDEX(d->dim[i])].max;
                s[t].dim[i] = m - less >= 1 ? m - less : 1;
            }
    }
    for (int n = 0; n < g->nn; n++) {
        const struct hg_node_info *nd = &g->n[n];
        struct hg_shape ins[HG_MAX_INPUTS];
        enum hg_dtype dts[HG_MAX_INPUTS], odt;
        char e[128];
        if (nd->out < 0 || nd->op == HG_OP_RECV)
            continue;
        for (int i = 0; i < nd->n_in; i++) {
            ins[i] = s[nd->in[i]];
            dts[i] = g->t[nd->in[i]].info.dtype;
        }
        if (hg_op_table[nd->op].shape(ins, dts, nd->n_in, &nd->attr, &s[nd->out], &odt, e,
                                      sizeof e) != 0)
            return -1;
    }
    return 0;
}

int hg_graph_varying(const struct hg_graph *g, unsigned char *mask)
{
    struct hg_shape *a = malloc(((size_t)g->nt + 1) * sizeof *a); /* [nt] at the maxima */
    struct hg_shape *b = malloc(((size_t)g->nt + 1) * sizeof *b); /* [nt] one less */
    HG_CHECK(a && b);
    memset(mask, 0, (size_t)g->nt);
    int rc = g->nsym == 0 ? 0 : shapes_at(g, 0, a) | shapes_at(g, 1, b);
    for (int t = 0; rc == 0 && g->nsym > 0 && t < g->nt; t++)
        for (int i = 0; i < a[t].ndim && i < HG_MAX_DIMS; i++) /* HG_MAX_DIMS <= 8 bits */
            if (a[t].dim[i] != b[t].dim[i])
                mask[t] |= (unsigned char)(1u << i);
    free(a);
    free(b);
    return rc;
}

int hg_graph_resolve(struct hg_graph *g, const int64_t *sym, char *err,
                     size_t errlen)
{
    for (int k = 0; k < g->nsym; k++) {
        int64_t v = sym ? sym[k] : g->sym[k].def;
        if (v < 1 || v > g->sym[k].max)
            return hg_kerr(err, errlen,
                           "symbol %s = %lld outside [1, %lld] (the plan's maximum)",
                           g->sym[k].name, (long long)v,
                           (long long)g->sym[k].max);
    }
    if (g->cap_batch >= 0 && sym) {
        /* the plan holds every point with batch x length <= cap */
        int64_t b = sym[g->cap_batch];
        for (int k = 0; k < g->nsym; k++)
            if (g->sym[k].capped && b * sym[k] > g->cap)
                return hg_kerr(err, errlen,
                               "%s %lld x %s %lld = %lld is more than the plan's "
                               "token cap %lld", g->sym[g->cap_batch].name,
                               (long long)b, g->sym[k].name, (long long)sym[k],
                               (long long)(b * sym[k]), (long long)g->cap);
    }
    for (int k = 0; k < g->nsym; k++)
        g->sym[k].cur = sym ? sym[k] : g->sym[k].def;
    for (int i = 0; i < g->nt; i++)
        if (g->t[i].info.producer < 0)
            resolve_decl(g, &g->t[i].info.decl, &g->t[i].info.shape);
    unsigned char *done = calloc((size_t)g->nn + 1, 1); /* [nn] resolved this time */
    HG_CHECK(done != NULL);
    int rc = 0;
    for (int n = 0; n < g->nn && rc == 0; n++)
        rc = resolve_node(g, n, done, err, errlen);
    free(done);
    return rc;
}

enum hg_phase hg_graph_set_phase(struct hg_graph *g, enum hg_phase phase)
{
    HG_CHECK(phase == HG_PH_FORWARD || phase == HG_PH_BACKWARD || phase == HG_PH_UPDATE);
    enum hg_phase was = g->phase;
    g->phase = phase;
    return was;
}

/* The tensors of t's flat block in the executor's layout: params and
 * grads in parameter order, state in id order; -1 for a tensor of no
 * block (activations, inputs). */
static int block_list(const struct hg_graph *g, int t, int *list)
{
    int n = 0;
    switch (g->t[t].info.kind) {
    case HG_T_PARAM:
        for (int i = 0; i < g->np; i++)
            list[n++] = g->params[i];
        return n;
    case HG_T_GRAD:
        for (int i = 0; i < g->np; i++)
            if (g->t[g->params[i]].grad >= 0)
                list[n++] = g->t[g->params[i]].grad;
        return n;
    case HG_T_STATE:
        for (int i = 0; i < g->nt; i++)
            if (g->t[i].info.kind == HG_T_STATE)
                list[n++] = i;
        return n;
    default:
        return -1;
    }
}

int hg_graph_comm_span(struct hg_graph *g, enum hg_op op, int first, int last,
                       const union hg_attr *attr)
{
    HG_CHECK(op == HG_OP_ALLREDUCE || op == HG_OP_PS_PUSH || op == HG_OP_PS_PULL);
    HG_CHECK(first >= 0 && first < g->nt && last >= 0 && last < g->nt);
    union hg_attr at = {0};
    if (attr)
        at = *attr;
    at.comm.dtype = HG_F32;
    at.comm.count = 0;
    if (first == last)
        return hg_graph_op(g, op, &first, 1, &at);
    int *list = xrealloc(NULL, (size_t)g->nt * sizeof *list); /* [<= nt] */
    int n = block_list(g, first, list), i0 = -1, i1 = -1;
    for (int i = 0; i < n; i++) {
        i0 = list[i] == first ? i : i0;
        i1 = list[i] == last ? i : i1;
    }
    /* a span is first..last of one block, in the block's order */
    HG_CHECK(n > 0 && i0 >= 0 && i1 >= i0);
    for (int i = i0; i <= i1; i++)
        at.comm.count += hg_shape_numel(&g->t[list[i]].info.shape);
    free(list);
    int in[2] = {first, last};
    return hg_graph_op(g, op, in, 2, &at);
}

int hg_graph_order(const struct hg_graph *g, int phase_mask, int *order)
{
    /* Nodes are appended after their inputs exist, so id order within a
     * phase is topological; nodes appended to an earlier phase later
     * (recomputation's copies, split strategies' AllReduce sums) still run
     * before the next phase. */
    int k = 0;
    for (int ph = HG_PH_FORWARD; ph <= HG_PH_UPDATE; ph <<= 1)
        for (int n = 0; n < g->nn; n++)
            if ((g->n[n].phase & phase_mask & ph) != 0)
                order[k++] = n;
    return k;
}

static void node_cost(const struct hg_graph *g, const struct hg_node_info *nd,
                      struct hg_cost *c)
{
    struct hg_shape ins[HG_MAX_INPUTS];
    for (int i = 0; i < nd->n_in; i++)
        ins[i] = g->t[nd->in[i]].info.shape;
    struct hg_shape none = {0};
    const struct hg_shape *out = nd->out >= 0 ? &g->t[nd->out].info.shape
                                              : &none;
    memset(c, 0, sizeof(*c));
    hg_op_table[nd->op].cost(ins, nd->n_in, out, &nd->attr, c);
}

void hg_graph_cost(const struct hg_graph *g, struct hg_cost *total)
{
    memset(total, 0, sizeof(*total));
    for (int n = 0; n < g->nn; n++) {
        struct hg_cost c;
        node_cost(g, &g->n[n], &c);
        total->flops += c.flops;
        total->bytes += c.bytes;
    }
}

void hg_graph_print(const struct hg_graph *g, void *file)
{
    FILE *f = file;
    static const char *phase[] = {"?", "fwd", "bwd", "?", "upd"};
    for (int n = 0; n < g->nn; n++) {
        const struct hg_node_info *nd = &g->n[n];
        char sb[96] = "-";
        if (nd->out >= 0)
            hg_shape_str(&g->t[nd->out].info.shape, sb, sizeof(sb));
        struct hg_cost c;
        node_cost(g, nd, &c);
        fprintf(f, "%4d %s %-18s %-8s <-", n, phase[nd->phase],
                hg_op_table[nd->op].name,
                nd->out >= 0 ? g->t[nd->out].name : "");
        for (int i = 0; i < nd->n_in; i++)
            fprintf(f, " %s", g->t[nd->in[i]].name);
        if (hg_op_table[nd->op].flags & HG_OPF_COMM)
            fprintf(f, "  %s  group %d peer %d tag %d  %.3g MB\n", sb, nd->attr.comm.group,
                    nd->attr.comm.peer, nd->attr.comm.tag, c.bytes * 1e-6);
        else
            fprintf(f, "  %s  %.3g MFLOP\n", sb, c.flops * 1e-6);
    }
}
