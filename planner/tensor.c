/* tensor.c - the tensor-parallel layer of a lowering (hg_planner.h,
 * "Tensor parallelism"; docs/planner.md, "Tensor parallelism").  The rows
 * layer (lower.c) sees a TP group as model parallel on its lead device;
 * here each op of the group gets a mode (which axis its devices split) by
 * a greedy choice in id order: of the modes its kind allows, the one whose
 * inputs need the fewest bytes moved from the layouts they are made in
 * (ties: the first listed, splitting before replicating).  Then per tensor
 * the collectives that turn its layout into each layout read: one
 * reduction per partial sum, one gather per split tensor read whole,
 * local slices for the rest.  trainer/strategy.c hands the layouts,
 * shards and collectives to the executor (controller/tp.c). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "planner/hg_planner.h"
#include "planner/planner-impl.h"

static const char *const mode_names[] = {"replicated", "column", "row", "vocab", "axis"};
static const char *const lay_names[] = {"full", "split", "partial", "lead", "any"};
static const char *const coll_names[] = {"slice", "allgather", "reduce-scatter", "allreduce",
                                         "broadcast"};

const char *hg_tp_mode_name(enum hg_tp_mode m)
{
    return (unsigned)m <= HG_TPM_AXIS ? mode_names[m] : "?";
}

const char *hg_tpl_kind_name(enum hg_tpl_kind k)
{
    return (unsigned)k <= HG_TPL_ANY ? lay_names[k] : "?";
}

const char *hg_tpc_kind_name(enum hg_tpc_kind k)
{
    return (unsigned)k <= HG_TPC_BCAST ? coll_names[k] : "?";
}

void hg_tp_split(int64_t len, const int *w, int n, int64_t *size)
{
    int64_t W = 0, given = 0;
    for (int i = 0; i < n; i++) {
        HG_CHECK(w[i] >= 0);
        W += w[i];
    }
    HG_CHECK(W > 0 && len >= 0 && len <= INT64_MAX / W);
    int64_t *rem = malloc(((size_t)n + 1) * sizeof(int64_t)); /* [n] len * w mod W */
    HG_CHECK(rem != NULL);
    for (int i = 0; i < n; i++) {
        size[i] = len * w[i] / W;
        rem[i] = len * w[i] % W;
        given += size[i];
    }
    /* fewer left than devices with a remainder: each gets at most one */
    for (int64_t left = len - given; left > 0; left--) {
        int best = -1;
        for (int i = 0; i < n; i++)
            if (rem[i] > 0 && (best < 0 || rem[i] > rem[best]))
                best = i;
        HG_CHECK(best >= 0);
        size[best]++;
        rem[best] = 0;
    }
    free(rem);
}

static struct hg_tplayout lay(enum hg_tpl_kind k, int axis)
{
    return (struct hg_tplayout){k, k == HG_TPL_SPLIT ? axis : -1};
}

static int lay_eq(struct hg_tplayout a, struct hg_tplayout b)
{
    return a.kind == b.kind && (a.kind != HG_TPL_SPLIT || a.axis == b.axis);
}

void hg__tp_free(struct hg_lowered *lw)
{
    struct hg_tp *tp = lw->tp;
    if (!tp)
        return;
    for (int i = 0; i < tp->nset; i++) {
        free(tp->set[i].dev);
        free(tp->set[i].w);
    }
    for (int v = 0; v < lw->nops; v++)
        free(tp->op[v].shard);
    for (int i = 0; i < tp->ncoll; i++)
        free(tp->coll[i].count);
    free(tp->set);
    free(tp->gset);
    free(tp->op);
    free(tp->tlay);
    free(tp->tset);
    free(tp->coll);
    free(tp);
    lw->tp = NULL;
}

double hg_tp_share(const struct hg_tp *tp, int v, int dev)
{
    const struct hg_tpop *o = &tp->op[v];
    for (int i = 0; o->set >= 0 && i < o->nshard; i++)
        if (o->shard[i].dev == dev)
            return o->mode == HG_TPM_REPL ? 1
                                          : (double)(o->shard[i].end - o->shard[i].begin) /
                                                (double)o->len;
    return 0;
}

/* ------------------------------------------------------------ modes */

/* A candidate mode of an op: what it reads of each input, what it makes. */
struct cand {
    enum hg_tp_mode mode;
    int64_t len;
    struct hg_tplayout out, in[HG_MAX_INPUTS];
};

/* The pass's state: FRESH marks a parameter that only this set reads and
 * whose layout its first reader chooses. */
#define FRESH ((enum hg_tpl_kind)99)
struct ctx {
    const struct hg_pgraph *pg;
    const struct hg_strategy *st;
    struct hg_tp *tp;
    int *pgroup;          /* [ntensors] a param's readers' one group, -2: several */
    int *prod;            /* [ntensors] the producing op, -1 */
};

static const struct hg_shape *shp(const struct ctx *x, int t)
{
    return &x->pg->shape[t];
}

/* What op v (in set s) finds of input k: its producer's layout in the set,
 * LEAD from another group, a param's layout (FRESH before its first
 * reader), FULL for data and constants. */
static struct hg_tplayout avail(const struct ctx *x, int v, int k, int s)
{
    const struct hg_pin *in = &x->pg->ops[v].in[k];
    if (in->op >= 0)
        return x->tp->op[in->op].set == s ? x->tp->op[in->op].out : lay(HG_TPL_LEAD, -1);
    if (x->tp->tset[in->tensor] == s)
        return x->tp->tlay[in->tensor];
    if (x->pg->tkind[in->tensor] == HG_T_PARAM &&
        x->pgroup[in->tensor] == x->tp->set[s].group)
        return lay(FRESH, -1);
    return lay(HG_TPL_FULL, -1);
}

/* Bytes moved to turn a into b (a FRESH param takes b for free). */
static double conv_cost(struct hg_tplayout a, struct hg_tplayout b, double bytes)
{
    if (b.kind == HG_TPL_ANY || lay_eq(a, b) || a.kind == FRESH)
        return 0;
    if (b.kind == HG_TPL_PARTIAL)
        return 1e300; /* nothing is made partial by moving it */
    double pre = 0;
    if (a.kind == HG_TPL_LEAD) {
        pre = bytes;
        a = lay(HG_TPL_FULL, -1);
    }
    if (a.kind == HG_TPL_FULL)
        return pre; /* a slice */
    if (a.kind == HG_TPL_PARTIAL)
        return pre + (b.kind == HG_TPL_FULL ? 2 : 1) * bytes;
    return pre + bytes; /* split: a gather (and a slice) */
}

static int is_ew(enum hg_op k)
{
    switch (k) {
    case HG_OP_ADD: case HG_OP_SUB: case HG_OP_MUL: case HG_OP_SCALE: case HG_OP_SUM_TO:
    case HG_OP_RELU: case HG_OP_RELU_BWD: case HG_OP_GELU: case HG_OP_GELU_BWD:
    case HG_OP_TANH: case HG_OP_TANH_BWD: case HG_OP_DROPOUT:
    case HG_OP_SOFTMAX: case HG_OP_SOFTMAX_BWD: case HG_OP_LOG_SOFTMAX:
    case HG_OP_LOG_SOFTMAX_BWD:
        return 1;
    default:
        return 0;
    }
}

static int is_update(enum hg_op k)
{
    return k == HG_OP_SGD_STEP || k == HG_OP_ADAMW_STEP || k == HG_OP_ADADELTA_STEP;
}

/* Inputs read for their shape only. */
static int shape_only(enum hg_op k, int i)
{
    return (i == 1 && (k == HG_OP_SUM_TO || k == HG_OP_RESHAPE_LIKE || k == HG_OP_SLICE_BWD ||
                       k == HG_OP_EXPAND_LIKE)) ||
           (i == 2 && (k == HG_OP_CONV2D_BWD_DATA || k == HG_OP_EMBEDDING_BWD));
}

static void repl(const struct hg_pop *o, struct cand *c)
{
    memset(c, 0, sizeof(*c));
    c->mode = HG_TPM_REPL;
    c->out = lay(HG_TPL_FULL, -1);
    for (int i = 0; i < o->nin; i++)
        c->in[i] = lay(shape_only(o->kind, i) ? HG_TPL_ANY : HG_TPL_FULL, -1);
}

/* A candidate: REPL's reads with the given ones replaced (-2: keep). */
static struct cand mk(const struct hg_pop *o, enum hg_tp_mode m, int64_t len,
                      struct hg_tplayout out, const int *split)
{
    struct cand c;
    repl(o, &c);
    c.mode = m;
    c.len = len;
    c.out = out;
    for (int i = 0; i < o->nin; i++)
        if (split[i] >= 0)
            c.in[i] = lay(HG_TPL_SPLIT, split[i]);
    return c;
}

/* An element-wise op split on output axis ao: inputs aligned to the right
 * (numpy broadcasting) split where their axis has the output's length. */
static int ew_axis(const struct ctx *x, int v, int ao, struct cand *c)
{
    const struct hg_pop *o = &x->pg->ops[v];
    const struct hg_shape *so = shp(x, o->out);
    int sp[HG_MAX_INPUTS];
    if (ao < 0 || ao >= so->ndim || so->dim[ao] < 1)
        return 0;
    if ((o->kind == HG_OP_SOFTMAX || o->kind == HG_OP_LOG_SOFTMAX ||
         o->kind == HG_OP_SOFTMAX_BWD || o->kind == HG_OP_LOG_SOFTMAX_BWD) &&
        ao == so->ndim - 1)
        return 0; /* they normalise over the last axis */
    for (int i = 0; i < o->nin; i++) {
        const struct hg_shape *si = shp(x, o->in[i].tensor);
        int ai = ao - (so->ndim - si->ndim);
        sp[i] = -1;
        if (shape_only(o->kind, i) || (o->kind == HG_OP_DROPOUT && i == 1))
            continue;
        if (ai >= 0 && ai < si->ndim && si->dim[ai] == so->dim[ao])
            sp[i] = ai;
    }
    *c = mk(o, HG_TPM_AXIS, so->dim[ao], lay(HG_TPL_SPLIT, ao), sp);
    return 1;
}

/* sp[HG_MAX_INPUTS]: no input split (every one: attention's keep mask
 * and sample ids come after the first four) */
static void unsplit(int *sp)
{
    for (int i = 0; i < HG_MAX_INPUTS; i++)
        sp[i] = -1;
}

/* A matmul's modes: column (N), row (K), and each batch axis that an
 * input already arrives split on. */
static int mm_cands(const struct ctx *x, int v, int s, struct cand *c)
{
    const struct hg_pop *o = &x->pg->ops[v];
    const struct hg_shape *sa = shp(x, o->in[0].tensor), *sb = shp(x, o->in[1].tensor),
                          *so = shp(x, o->out);
    int aK = o->trans_a ? sa->ndim - 2 : sa->ndim - 1;
    int bK = o->trans_b ? sb->ndim - 1 : sb->ndim - 2;
    int bN = o->trans_b ? sb->ndim - 2 : sb->ndim - 1;
    int n = 0, sp[HG_MAX_INPUTS];
    unsplit(sp);
    if (sa->ndim < 2 || sb->ndim < 2 || o->nin != 2)
        return 0;
    sp[1] = bN;
    c[n++] = mk(o, HG_TPM_COL, so->dim[so->ndim - 1], lay(HG_TPL_SPLIT, so->ndim - 1), sp);
    sp[0] = aK;
    sp[1] = bK;
    c[n++] = mk(o, HG_TPM_ROW, sa->dim[aK], lay(HG_TPL_PARTIAL, -1), sp);
    struct hg_tplayout a0 = avail(x, v, 0, s);
    if (a0.kind == HG_TPL_SPLIT && a0.axis < so->ndim - 2 && sa->ndim == so->ndim) {
        sp[0] = a0.axis;
        sp[1] = sb->ndim == so->ndim ? a0.axis : -1;
        c[n++] = mk(o, HG_TPM_AXIS, so->dim[a0.axis], lay(HG_TPL_SPLIT, a0.axis), sp);
    }
    return n;
}

/* Op v's candidate modes into c (at most 8), REPL last. */
static int cands(const struct ctx *x, int v, int s, struct cand *c)
{
    const struct hg_pop *o = &x->pg->ops[v];
    const struct hg_shape *so = o->out >= 0 ? shp(x, o->out) : NULL;
    int n = 0, sp[HG_MAX_INPUTS];
    unsplit(sp);
    switch (o->kind) {
    case HG_OP_MATMUL:
        n = mm_cands(x, v, s, c);
        break;
    case HG_OP_MATMUL_REDUCE: { /* x^T d: [K,N] by N or by K */
        int lx = shp(x, o->in[0].tensor)->ndim - 1, ld = shp(x, o->in[1].tensor)->ndim - 1;
        sp[1] = ld;
        c[n++] = mk(o, HG_TPM_AXIS, so->dim[1], lay(HG_TPL_SPLIT, 1), sp);
        sp[1] = -1;
        sp[0] = lx;
        c[n++] = mk(o, HG_TPM_AXIS, so->dim[0], lay(HG_TPL_SPLIT, 0), sp);
        break;
    }
    case HG_OP_CONV2D: /* output channels; input channels (partial) */
        sp[1] = 0;
        c[n++] = mk(o, HG_TPM_COL, so->dim[1], lay(HG_TPL_SPLIT, 1), sp);
        sp[0] = sp[1] = 1;
        c[n++] = mk(o, HG_TPM_ROW, shp(x, o->in[1].tensor)->dim[1], lay(HG_TPL_PARTIAL, -1), sp);
        break;
    case HG_OP_CONV2D_BWD_DATA:
        sp[0] = 1;
        sp[1] = 0;
        c[n++] = mk(o, HG_TPM_ROW, shp(x, o->in[1].tensor)->dim[0], lay(HG_TPL_PARTIAL, -1), sp);
        sp[0] = -1;
        sp[1] = 1;
        c[n++] = mk(o, HG_TPM_AXIS, so->dim[1], lay(HG_TPL_SPLIT, 1), sp);
        break;
    case HG_OP_CONV2D_BWD_FILTER:
        sp[1] = 1;
        c[n++] = mk(o, HG_TPM_AXIS, so->dim[0], lay(HG_TPL_SPLIT, 0), sp);
        sp[1] = -1;
        sp[0] = 1;
        c[n++] = mk(o, HG_TPM_AXIS, so->dim[1], lay(HG_TPL_SPLIT, 1), sp);
        break;
    case HG_OP_EMBEDDING: /* the table's rows: a partial sum of lookups */
        sp[0] = 0;
        c[n++] = mk(o, HG_TPM_VOCAB, shp(x, o->in[0].tensor)->dim[0], lay(HG_TPL_PARTIAL, -1),
                    sp);
        break;
    case HG_OP_EMBEDDING_BWD:
        c[n++] = mk(o, HG_TPM_VOCAB, so->dim[0], lay(HG_TPL_SPLIT, 0), sp);
        break;
    case HG_OP_ATTENTION: case HG_OP_ATTENTION_BWD: /* heads: axis 1 of q, k, v, do */
        for (int i = 0; i < o->nin && i < (o->kind == HG_OP_ATTENTION ? 3 : 4); i++)
            sp[i] = shp(x, o->in[i].tensor)->ndim == 4 ? 1 : -1;
        if (sp[0] == 1 && so->ndim >= 4)
            c[n++] = mk(o, HG_TPM_AXIS, so->dim[so->ndim - 3], lay(HG_TPL_SPLIT, so->ndim - 3),
                        sp);
        break;
    default:
        if (is_ew(o->kind) && so) /* follow an input's split */
            for (int i = 0; i < o->nin && n < 6; i++) {
                struct hg_tplayout a = avail(x, v, i, s);
                int ai = a.axis + (so->ndim - shp(x, o->in[i].tensor)->ndim);
                int dup = 0;
                for (int j = 0; j < n; j++)
                    dup |= c[j].out.axis == ai;
                if (a.kind == HG_TPL_SPLIT && !dup && ew_axis(x, v, ai, &c[n]))
                    n++;
            }
        break;
    }
    repl(o, &c[n++]);
    return n;
}

/* An update follows its parameter: the gradient read in its layout, the
 * optimizer state stored like it. */
static void update_mode(struct ctx *x, int v, int s, struct cand *c)
{
    const struct hg_pop *o = &x->pg->ops[v];
    struct hg_tplayout p = avail(x, v, 0, s);
    if (p.kind == FRESH || p.kind == HG_TPL_LEAD)
        p = lay(HG_TPL_FULL, -1);
    repl(o, c);
    for (int i = 0; i < o->nin; i++)
        c->in[i] = p;
    c->out = lay(HG_TPL_ANY, -1);
    if (p.kind == HG_TPL_SPLIT) {
        c->mode = HG_TPM_AXIS;
        c->len = shp(x, o->in[0].tensor)->dim[p.axis];
    }
    for (int i = 0; i < o->nin; i++) /* the state lives with the parameter */
        if (o->in[i].op < 0 && x->pg->tkind[o->in[i].tensor] == HG_T_STATE) {
            x->tp->tlay[o->in[i].tensor] = p;
            x->tp->tset[o->in[i].tensor] = s;
        }
}

/* 1 when candidate c splits an axis that changes with a batch or a length
 * (its shards would move from batch to batch) */
static int varies(const struct ctx *x, int v, const struct cand *c)
{
    const struct hg_pop *o = &x->pg->ops[v];
    if (c->out.kind == HG_TPL_SPLIT && o->out >= 0 &&
        (x->pg->tvary[o->out] >> c->out.axis & 1))
        return 1;
    for (int i = 0; i < o->nin; i++)
        if (c->in[i].kind == HG_TPL_SPLIT && (x->pg->tvary[o->in[i].tensor] >> c->in[i].axis & 1))
            return 1;
    return 0;
}

/* Op v of set s: its mode (the cheapest candidate), shards, and the
 * layouts its first reading fixes for FRESH params. */
static void choose(struct ctx *x, int v, int s)
{
    const struct hg_pop *o = &x->pg->ops[v];
    struct hg_tp *tp = x->tp;
    const struct hg_tpset *set = &tp->set[s];
    struct cand c[8], best;
    if (is_update(o->kind) && o->out < 0) {
        update_mode(x, v, s, &best);
    } else {
        int n = cands(x, v, s, c), bi = n - 1, have = 0; /* REPL, last, always allowed */
        double bc = 0;
        for (int j = 0; j < n; j++) {
            double cost = 0;
            if (j < n - 1 && varies(x, v, &c[j]))
                continue;
            for (int i = 0; i < o->nin; i++)
                cost += conv_cost(avail(x, v, i, s), c[j].in[i], (double)o->in[i].bytes);
            if (!have || cost < bc) {
                have = 1;
                bc = cost;
                bi = j;
            }
        }
        best = c[bi];
    }
    struct hg_tpop *t = &tp->op[v];
    t->mode = best.mode;
    t->len = best.mode == HG_TPM_REPL ? 0 : best.len;
    t->out = best.out;
    memcpy(t->in, best.in, sizeof(t->in));
    t->nshard = set->n;
    free(t->shard);
    t->shard = calloc((size_t)set->n, sizeof(*t->shard));
    int64_t *size = malloc((size_t)set->n * sizeof(int64_t)); /* [n] */
    HG_CHECK(t->shard && size);
    if (t->mode != HG_TPM_REPL)
        hg_tp_split(t->len, set->w, set->n, size);
    int64_t b = 0;
    for (int i = 0; i < set->n; i++) {
        t->shard[i].dev = set->dev[i];
        if (t->mode != HG_TPM_REPL) {
            t->shard[i].begin = b;
            t->shard[i].end = b += size[i];
        }
    }
    free(size);
    for (int i = 0; i < o->nin; i++) {
        int tt = o->in[i].tensor;
        if (o->in[i].op < 0 && avail(x, v, i, s).kind == FRESH) {
            tp->tlay[tt] = t->in[i].kind == HG_TPL_SPLIT ? t->in[i] : lay(HG_TPL_FULL, -1);
            tp->tset[tt] = s;
        }
    }
    if (o->out >= 0) {
        tp->tlay[o->out] = t->out;
        tp->tset[o->out] = s;
    }
}

/* ------------------------------------------------------------ collectives */

struct need {             /* tensor t is read on set s in layout l by op w */
    int t, s, w;
    struct hg_tplayout l;
};

static int need_cmp(const void *a, const void *b)
{
    const struct need *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->s != y->s)
        return x->s < y->s ? -1 : 1;
    return x->w < y->w ? -1 : x->w > y->w;
}

static void add_coll(struct ctx *x, enum hg_tpc_kind k, int t, int s, int at,
                     struct hg_tplayout from, struct hg_tplayout to)
{
    struct hg_tp *tp = x->tp;
    const struct hg_tpset *set = &tp->set[s];
    if (tp->ncoll == tp->ccoll) {
        tp->ccoll = tp->ccoll ? 2 * tp->ccoll : 16;
        tp->coll = realloc(tp->coll, (size_t)tp->ccoll * sizeof(*tp->coll));
        HG_CHECK(tp->coll != NULL);
    }
    struct hg_tpcoll *c = &tp->coll[tp->ncoll++];
    const struct hg_shape *sh = shp(x, t);
    c->kind = k;
    c->tensor = t;
    c->op = x->prod[t];
    c->set = s;
    c->at = at;
    c->from = from;
    c->to = to;
    c->numel = hg_shape_numel(sh);
    c->bytes = 0;
    c->count = malloc((size_t)set->n * sizeof(int64_t));
    HG_CHECK(c->count != NULL);
    /* the part of a split layout: the numel over the axis times its shard */
    struct hg_tplayout part = k == HG_TPC_ALLGATHER ? from : to;
    if (k == HG_TPC_ALLREDUCE || k == HG_TPC_BCAST) {
        for (int i = 0; i < set->n; i++)
            c->count[i] = c->numel;
    } else {
        int64_t len = sh->dim[part.axis];
        hg_tp_split(len, set->w, set->n, c->count);
        for (int i = 0; i < set->n; i++)
            c->count[i] = len ? c->numel / len * c->count[i] : 0;
    }
}

/* The collectives of tensor t on set s from `from` (its layout as made),
 * for the reads nd[n] (layouts sorted by the caller), run at op at. */
static void convert(struct ctx *x, int t, int s, int at, struct hg_tplayout from,
                    const struct need *nd, int n)
{
    int full = 0, nsplit = 0, axis = -1;
    for (int i = 0; i < n; i++) {
        if (lay_eq(nd[i].l, from))
            continue;
        if (nd[i].l.kind == HG_TPL_FULL)
            full = 1;
        else if (axis != nd[i].l.axis) {
            /* distinct axes: the caller's reads may repeat one */
            int seen = 0;
            for (int j = 0; j < i; j++)
                seen |= nd[j].l.kind == HG_TPL_SPLIT && nd[j].l.axis == nd[i].l.axis;
            if (!seen)
                nsplit++;
            axis = nd[i].l.axis;
        }
    }
    if (!full && nsplit == 0)
        return;
    struct hg_tplayout F = lay(HG_TPL_FULL, -1), src = from;
    if (from.kind == HG_TPL_PARTIAL && !full && nsplit == 1) {
        add_coll(x, HG_TPC_REDUCE_SCATTER, t, s, at, from, lay(HG_TPL_SPLIT, axis));
        return; /* the one read is made by the reduction */
    }
    if (from.kind == HG_TPL_LEAD)
        add_coll(x, HG_TPC_BCAST, t, s, at, from, F), src = F;
    else if (from.kind == HG_TPL_PARTIAL)
        add_coll(x, HG_TPC_ALLREDUCE, t, s, at, from, F), src = F;
    else if (from.kind == HG_TPL_SPLIT)
        add_coll(x, HG_TPC_ALLGATHER, t, s, at, from, F), src = F;
    for (int i = 0; i < n; i++) { /* each split read its slice of the whole */
        int seen = 0;
        for (int j = 0; j < i; j++)
            seen |= lay_eq(nd[j].l, nd[i].l);
        if (!seen && nd[i].l.kind == HG_TPL_SPLIT && !lay_eq(nd[i].l, from))
            add_coll(x, HG_TPC_SLICE, t, s, at, src, nd[i].l);
    }
}

/* Every read of a tensor in a layout other than the one it is made in,
 * and every TP output read outside its set (whole, from the lead), then
 * the collectives tensor by tensor. */
static void collectives(struct ctx *x)
{
    const struct hg_pgraph *pg = x->pg;
    struct hg_tp *tp = x->tp;
    int cap = 64, n = 0;
    struct need *nd = malloc((size_t)cap * sizeof(*nd)); /* [n] */
    HG_CHECK(nd != NULL);
    for (int w = 0; w < pg->nops; w++) {
        const struct hg_pop *o = &pg->ops[w];
        int s = tp->op[w].set;
        for (int i = 0; i < o->nin + 1; i++) {
            struct need e;
            if (i < o->nin) { /* a read in the set */
                if (s < 0 || tp->op[w].in[i].kind == HG_TPL_ANY)
                    continue;
                e = (struct need){o->in[i].tensor, s, w, tp->op[w].in[i]};
            } else { /* w's output read by another group */
                int out = 0;
                for (int k = 0; k < o->ncons && s >= 0 && o->out >= 0; k++)
                    out |= tp->op[o->cons[k]].set != s;
                if (!out)
                    continue;
                e = (struct need){o->out, s, w, lay(HG_TPL_FULL, -1)};
            }
            if (n == cap) {
                nd = realloc(nd, (size_t)(cap *= 2) * sizeof(*nd));
                HG_CHECK(nd != NULL);
            }
            nd[n++] = e;
        }
    }
    qsort(nd, (size_t)n, sizeof(*nd), need_cmp);
    for (int i = 0, j; i < n; i = j) {
        for (j = i; j < n && nd[j].t == nd[i].t && nd[j].s == nd[i].s; j++)
            ;
        int t = nd[i].t, s = nd[i].s, prod = x->prod[t];
        /* where it is made: its producer in the set, else before the first reader */
        int inset = prod >= 0 && tp->op[prod].set == s;
        struct hg_tplayout from = inset ? tp->op[prod].out
                                  : prod >= 0 ? lay(HG_TPL_LEAD, -1)
                                  : tp->tset[t] == s ? tp->tlay[t] : lay(HG_TPL_FULL, -1);
        convert(x, t, s, inset ? prod : nd[i].w, from, nd + i, j - i);
    }
    free(nd);
}

/* ------------------------------------------------------------ lowering */

/* The sets (one per TP group) and each op's; -1 with err for what is not
 * planned yet: TP in a pipeline, a TP group that recomputes. */
static int sets(struct hg_tp *tp, const struct hg_strategy *st, int nd, char *err,
                size_t errlen)
{
    for (int k = 0; k < st->ngroups; k++) {
        const struct hg_gcfg *g = &st->cfg[k];
        tp->gset[k] = -1;
        if (g->mode != HG_MODE_TP)
            continue;
        if (st->nmicro > 0)
            return hg_kerr(err, errlen, "group %d is tensor parallel inside a pipeline: not "
                           "planned yet (docs/planner.md, \"Tensor parallelism\")", k);
        if (g->recompute)
            return hg_kerr(err, errlen, "group %d is tensor parallel and recomputes: not "
                           "planned yet (docs/planner.md, \"Tensor parallelism\")", k);
        struct hg_tpset *s = &tp->set[tp->nset];
        s->group = k;
        s->dev = malloc((size_t)nd * sizeof(int));
        s->w = malloc((size_t)nd * sizeof(int));
        HG_CHECK(s->dev && s->w);
        for (int d = 0; d < nd; d++)
            if (g->rep[d] > 0) {
                s->dev[s->n] = d;
                s->w[s->n++] = g->rep[d];
            }
        HG_CHECK(s->n > 0 && s->dev[0] == g->device);
        tp->gset[k] = tp->nset++;
    }
    return 0;
}

int hg__tp_lower(struct hg_lowered *lw, const struct hg_strategy *st, char *err,
                 size_t errlen)
{
    hg__tp_free(lw);
    int any = 0;
    for (int k = 0; k < st->ngroups; k++)
        any |= st->cfg[k].mode == HG_MODE_TP;
    if (!any)
        return 0;
    const struct hg_pgraph *pg = lw->pg;
    size_t N = (size_t)pg->nops, T = (size_t)pg->ntensors;
    struct hg_tp *tp = lw->tp = calloc(1, sizeof(*tp));
    HG_CHECK(tp != NULL);
    tp->set = calloc((size_t)st->ngroups, sizeof(*tp->set));
    tp->gset = malloc((size_t)st->ngroups * sizeof(int));
    tp->op = calloc(N + 1, sizeof(*tp->op));
    tp->tlay = calloc(T + 1, sizeof(*tp->tlay));
    tp->tset = malloc((T + 1) * sizeof(int));
    struct ctx x = {pg, st, tp, malloc((T + 1) * sizeof(int)), malloc((T + 1) * sizeof(int))};
    HG_CHECK(tp->set && tp->gset && tp->op && tp->tlay && tp->tset && x.pgroup && x.prod);
    int rc = sets(tp, st, lw->ndev, err, errlen);
    for (size_t t = 0; t < T; t++) {
        tp->tset[t] = x.pgroup[t] = x.prod[t] = -1;
        tp->tlay[t] = lay(HG_TPL_FULL, -1);
    }
    /* a param is sharded only when one group reads and updates it all */
    for (int v = 0; v < pg->nops; v++) {
        const struct hg_pop *o = &pg->ops[v];
        if (o->out >= 0)
            x.prod[o->out] = v;
        for (int i = 0; i < o->nin; i++) {
            int *pgp = &x.pgroup[o->in[i].tensor];
            if (pg->tkind[o->in[i].tensor] == HG_T_PARAM)
                *pgp = *pgp == -1 || *pgp == st->group[v] ? st->group[v] : -2;
        }
    }
    for (int v = 0; v < pg->nops && rc == 0; v++) {
        tp->op[v].set = tp->gset[st->group[v]];
        tp->op[v].out = lay(HG_TPL_FULL, -1);
        if (tp->op[v].set >= 0)
            choose(&x, v, tp->op[v].set);
    }
    if (rc == 0)
        collectives(&x);
    free(x.pgroup);
    free(x.prod);
    if (rc != 0)
        hg__tp_free(lw);
    return rc;
}

static void print_lay(FILE *f, struct hg_tplayout l)
{
    fprintf(f, "%s", hg_tpl_kind_name(l.kind));
    if (l.kind == HG_TPL_SPLIT)
        fprintf(f, "(%d)", l.axis);
}

int hg_tp_print(const struct hg_lowered *lw, FILE *f)
{
    const struct hg_tp *tp = lw->tp;
    const struct hg_cluster *c = lw->pg->c;
    if (!tp)
        return fprintf(f, "no tensor-parallel group\n") < 0 ? -1 : 0;
    for (int v = 0; v < lw->nops; v++) {
        const struct hg_tpop *o = &tp->op[v];
        if (o->set < 0)
            continue;
        fprintf(f, "op %d %s (group %d): %s", v, hg_op_table[lw->pg->ops[v].kind].name,
                tp->set[o->set].group, hg_tp_mode_name(o->mode));
        for (int i = 0; i < o->nshard && o->mode != HG_TPM_REPL; i++)
            fprintf(f, " %s %lld-%lld", c->devices[o->shard[i].dev].name,
                    (long long)o->shard[i].begin, (long long)o->shard[i].end);
        fprintf(f, " of %lld; out ", (long long)o->len);
        print_lay(f, o->out);
        fprintf(f, "; reads");
        for (int i = 0; i < lw->pg->ops[v].nin; i++) {
            fprintf(f, " ");
            print_lay(f, o->in[i]);
        }
        fprintf(f, "\n");
    }
    for (int i = 0; i < tp->ncoll; i++) {
        const struct hg_tpcoll *k = &tp->coll[i];
        fprintf(f, "%s of tensor %d (op %d) at op %d: ", hg_tpc_kind_name(k->kind), k->tensor,
                k->op, k->at);
        print_lay(f, k->from);
        fprintf(f, " -> ");
        print_lay(f, k->to);
        fprintf(f, ", counts");
        for (int j = 0; j < tp->set[k->set].n; j++)
            fprintf(f, " %lld", (long long)k->count[j]);
        fprintf(f, "\n");
    }
    return ferror(f) ? -1 : 0;
}
