/* autodiff.c - reverse-mode autodiff that appends backward ops to the graph,
 * and the optimizer update as ops of the same graph. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph-impl.h"

struct ad {
    struct hg_graph *g;
    int *grad;  /* [nt at start] accumulated gradient per tensor, -1 none */
    char *need; /* [nt at start] depends on a param */
    int *nacc;  /* [nnacc] the accumulating ADD nodes (hg_graph_node_origin) */
    int *nacct; /* [nnacc] the tensor whose gradient each sums */
    int nnacc, cnacc;
};

static const struct hg_shape *shp(const struct hg_graph *g, int t)
{
    return &g->t[t].info.shape;
}

/* dx for a broadcast operand: sum the gradient down to x's shape. */
static int reduce_to(struct hg_graph *g, int gout, int x)
{
    if (hg_shape_equal(shp(g, gout), shp(g, x)))
        return gout;
    return hg__op2(g, HG_OP_SUM_TO, gout, x, NULL);
}

static void acc(struct ad *ad, int t, int gi)
{
    if (!ad->need[t])
        return;
    if (ad->grad[t] < 0)
        ad->grad[t] = gi;
    else {
        ad->grad[t] = hg__op2(ad->g, HG_OP_ADD, ad->grad[t], gi, NULL);
        if (ad->nnacc == ad->cnacc) {
            ad->cnacc = ad->cnacc ? 2 * ad->cnacc : 64;
            ad->nacc = realloc(ad->nacc, (size_t)ad->cnacc * sizeof *ad->nacc);
            ad->nacct = realloc(ad->nacct, (size_t)ad->cnacc * sizeof *ad->nacct);
            HG_CHECK(ad->nacc != NULL && ad->nacct != NULL);
        }
        ad->nacct[ad->nnacc] = t;
        ad->nacc[ad->nnacc++] = ad->g->nn - 1;
    }
}

/* [..,X,Y] -> [..,Y,X] */
static int swap_last2(struct hg_graph *g, int x)
{
    int nd = shp(g, x)->ndim;
    union hg_attr p = {.permute = {.ndim = nd}};
    for (int i = 0; i < nd; i++)
        p.permute.perm[i] = i;
    p.permute.perm[nd - 1] = nd - 2;
    p.permute.perm[nd - 2] = nd - 1;
    return hg__op1(g, HG_OP_PERMUTE, x, &p);
}

static void grad_matmul(struct ad *ad, const struct hg_node_info *nd, int G)
{
    struct hg_graph *g = ad->g;
    int a = nd->in[0], b = nd->in[1];
    int ta = nd->attr.mm.trans_a, tb = nd->attr.mm.trans_b;
    float alpha = nd->attr.mm.alpha == 0.f ? 1.f : nd->attr.mm.alpha;
    int shared_b = shp(g, b)->ndim == 2 && shp(g, a)->ndim > 2;
    union hg_attr at = {.mm = {.alpha = alpha}};
    if (ad->need[a]) {
        if (!ta) { /* da = G op(b)^T */
            at.mm.trans_a = 0, at.mm.trans_b = !tb;
            acc(ad, a, hg__op2(g, HG_OP_MATMUL, G, b, &at));
        } else if (!shared_b) { /* da = op(b) G^T */
            at.mm.trans_a = tb, at.mm.trans_b = 1;
            acc(ad, a, hg__op2(g, HG_OP_MATMUL, b, G, &at));
        } else { /* da = (G op(b)^T)^T per batch entry */
            at.mm.trans_a = 0, at.mm.trans_b = !tb;
            acc(ad, a, swap_last2(g, hg__op2(g, HG_OP_MATMUL, G, b, &at)));
        }
    }
    if (ad->need[b]) {
        int db;
        if (shared_b) { /* rows of every batch entry contract into b */
            int ar = ta ? swap_last2(g, a) : a; /* op(a): [..,M,K] */
            db = tb ? hg__op2(g, HG_OP_MATMUL_REDUCE, G, ar, NULL)
                    : hg__op2(g, HG_OP_MATMUL_REDUCE, ar, G, NULL);
            if (alpha != 1.f) {
                union hg_attr s = {.scale = {alpha}};
                db = hg__op1(g, HG_OP_SCALE, db, &s);
            }
        } else if (!tb) { /* db = op(a)^T G */
            at.mm.trans_a = !ta, at.mm.trans_b = 0;
            db = hg__op2(g, HG_OP_MATMUL, a, G, &at);
        } else { /* db = G^T op(a) */
            at.mm.trans_a = 1, at.mm.trans_b = ta;
            db = hg__op2(g, HG_OP_MATMUL, G, a, &at);
        }
        acc(ad, b, db);
    }
}

/* (q, k, v, dO [, keep] [, ids]): ATTENTION_BWD recomputes the scores.
 * Self-attention (attn.self: Tq == Tk for every batch): one node gives
 * dq, dk, dv as [3,B,H,T,Dh]; else one gives dq and one dk and dv
 * [2,B,H,Tk,Dh].  The stacks are cut on their axis of 2 or 3, so the
 * cuts do not depend on symbolic lengths. */
static void grad_attention(struct ad *ad, const struct hg_node_info *nd, int G)
{
    struct hg_graph *g = ad->g;
    const int *in = nd->in;
    const union hg_attr *at = &nd->attr;
    int bin[HG_MAX_INPUTS] = {in[0], in[1], in[2], G};
    for (int i = 3; i < nd->n_in; i++) /* keep, ids */
        bin[i + 1] = in[i];
    union hg_attr b = *at;
    int all = at->attn.self && ad->need[in[0]] && (ad->need[in[1]] || ad->need[in[2]]);
    if (ad->need[in[0]] && !all) {
        b.attn.which = 0;
        acc(ad, in[0], hg_graph_op(g, HG_OP_ATTENTION_BWD, bin, nd->n_in + 1, &b));
    }
    if (ad->need[in[1]] || ad->need[in[2]]) {
        b.attn.which = all ? 2 : 1;
        int st = hg_graph_op(g, HG_OP_ATTENTION_BWD, bin, nd->n_in + 1, &b);
        for (int i = all ? 0 : 1; i < 3; i++) {
            if (!ad->need[in[i]])
                continue;
            /* the stack's axis is outermost: each part is a view */
            union hg_attr s = {.slice = {.axis = 0, .start = all ? i : i - 1, .len = 1}};
            int part = hg__op1(g, HG_OP_SLICE, st, &s); /* [1,B,H,T,Dh] */
            acc(ad, in[i], hg__op2(g, HG_OP_RESHAPE_LIKE, part, in[i], NULL));
        }
    }
}

/* The gradient rule of each op, one case per op (a table over the ops):
 * the backward nodes for node nd, whose output's gradient is G, appended
 * and their results summed into its inputs' gradients. */
static void grad_node(struct ad *ad, const struct hg_node_info *nd, int G)
{
    struct hg_graph *g = ad->g;
    const int *in = nd->in;
    const union hg_attr *at = &nd->attr;
    switch (nd->op) {
    case HG_OP_MATMUL:
        grad_matmul(ad, nd, G);
        break;
    case HG_OP_CONV2D:
        if (ad->need[in[0]])
            acc(ad, in[0], hg__op3(g, HG_OP_CONV2D_BWD_DATA, G, in[1], in[0], at));
        if (ad->need[in[1]])
            acc(ad, in[1], hg__op2(g, HG_OP_CONV2D_BWD_FILTER, in[0], G, at));
        break;
    case HG_OP_MAXPOOL2D:
        acc(ad, in[0], hg__op2(g, HG_OP_MAXPOOL2D_BWD, in[0], G, at));
        break;
    case HG_OP_ADD:
        acc(ad, in[0], reduce_to(g, G, in[0]));
        acc(ad, in[1], reduce_to(g, G, in[1]));
        break;
    case HG_OP_SUB: {
        acc(ad, in[0], reduce_to(g, G, in[0]));
        if (ad->need[in[1]]) {
            union hg_attr s = {.scale = {-1.f}};
            acc(ad, in[1], reduce_to(g, hg__op1(g, HG_OP_SCALE, G, &s), in[1]));
        }
        break;
    }
    case HG_OP_MUL:
        if (ad->need[in[0]])
            acc(ad, in[0], reduce_to(g, hg__op2(g, HG_OP_MUL, G, in[1], NULL), in[0]));
        if (ad->need[in[1]])
            acc(ad, in[1], reduce_to(g, hg__op2(g, HG_OP_MUL, G, in[0], NULL), in[1]));
        break;
    case HG_OP_SCALE:
        acc(ad, in[0], hg__op1(g, HG_OP_SCALE, G, at));
        break;
    case HG_OP_RELU:
        acc(ad, in[0], hg__op2(g, HG_OP_RELU_BWD, in[0], G, NULL));
        break;
    case HG_OP_GELU:
        acc(ad, in[0], hg__op2(g, HG_OP_GELU_BWD, in[0], G, NULL));
        break;
    case HG_OP_TANH:
        acc(ad, in[0], hg__op2(g, HG_OP_TANH_BWD, nd->out, G, NULL));
        break;
    case HG_OP_SOFTMAX:
        acc(ad, in[0], hg__op2(g, HG_OP_SOFTMAX_BWD, nd->out, G, NULL));
        break;
    case HG_OP_LOG_SOFTMAX:
        acc(ad, in[0], hg__op2(g, HG_OP_LOG_SOFTMAX_BWD, nd->out, G, NULL));
        break;
    case HG_OP_LAYERNORM:
        if (ad->need[in[0]])
            acc(ad, in[0], hg__op3(g, HG_OP_LAYERNORM_BWD_X, in[0], in[1], G, at));
        if (ad->need[in[1]])
            acc(ad, in[1], hg__op2(g, HG_OP_LAYERNORM_BWD_G, in[0], G, at));
        acc(ad, in[2], reduce_to(g, G, in[2]));
        break;
    case HG_OP_DROPOUT: { /* the same mask (the same sample ids), applied to the gradient */
        int din[2] = {G, nd->n_in > 1 ? in[1] : -1};
        acc(ad, in[0], hg_graph_op(g, HG_OP_DROPOUT, din, nd->n_in, at));
        break;
    }
    case HG_OP_EMBEDDING:
        if (ad->need[in[0]])
            acc(ad, in[0], hg__op3(g, HG_OP_EMBEDDING_BWD, in[1], G, in[0], NULL));
        break;
    case HG_OP_RESHAPE:
    case HG_OP_RESHAPE_LIKE:
        acc(ad, in[0], hg__op2(g, HG_OP_RESHAPE_LIKE, G, in[0], NULL));
        break;
    case HG_OP_PERMUTE: {
        union hg_attr inv = {.permute = {.ndim = at->permute.ndim}};
        for (int i = 0; i < at->permute.ndim; i++)
            inv.permute.perm[at->permute.perm[i]] = i;
        acc(ad, in[0], hg__op1(g, HG_OP_PERMUTE, G, &inv));
        break;
    }
    case HG_OP_CONCAT: {
        int axis = at->concat.axis;
        if (axis < 0)
            axis += shp(g, G)->ndim;
        int64_t off = 0;
        for (int i = 0; i < nd->n_in; i++) {
            int64_t len = shp(g, in[i])->dim[axis];
            union hg_attr s = {.slice = {.axis = axis, .start = off, .len = len}};
            if (ad->need[in[i]])
                acc(ad, in[i], hg__op1(g, HG_OP_SLICE, G, &s));
            off += len;
        }
        break;
    }
    case HG_OP_SLICE:
        acc(ad, in[0], hg__op2(g, HG_OP_SLICE_BWD, G, in[0], at));
        break;
    case HG_OP_MASKED_FILL: {
        union hg_attr m = {.mask = {.causal = at->mask.causal, .fill = 0.f}};
        int gi = nd->n_in == 2 ? hg__op2(g, HG_OP_MASKED_FILL, G, in[1], &m)
                               : hg__op1(g, HG_OP_MASKED_FILL, G, &m);
        acc(ad, in[0], gi);
        break;
    }
    case HG_OP_ATTENTION:
        grad_attention(ad, nd, G);
        break;
    case HG_OP_SUM:
    case HG_OP_MEAN: {
        /* alpha < 0: divide by the number of summed elements, known per run */
        union hg_attr e = {.reduce = {.axis = at->reduce.axis,
                                      .alpha = nd->op == HG_OP_MEAN ? -1.f : 1.f}};
        acc(ad, in[0], hg__op2(g, HG_OP_EXPAND_LIKE, G, in[0], &e));
        break;
    }
    case HG_OP_CROSS_ENTROPY:
        acc(ad, in[0], hg__op3(g, HG_OP_CROSS_ENTROPY_BWD, in[0], in[1], G, at));
        break;
    case HG_OP_NLL:
        acc(ad, in[0], hg__op3(g, HG_OP_NLL_BWD, in[0], in[1], G, at));
        break;
    default:
        /* Backward ops and updates have no gradient rule: no second order. */
        HG_CHECK(!"no gradient rule for this op");
    }
}

int hg_graph_backward(struct hg_graph *g, int loss)
{
    HG_CHECK(!g->has_backward);
    HG_CHECK(loss >= 0 && loss < g->nt);
    HG_CHECK(hg_shape_numel(shp(g, loss)) == 1);
    int nt = g->nt, nn = g->nn;
    struct ad ad = {.g = g};
    ad.grad = malloc((size_t)nt * sizeof(int));
    ad.need = calloc((size_t)nt, 1);
    HG_CHECK(ad.grad && ad.need);
    for (int i = 0; i < nt; i++) {
        ad.grad[i] = -1;
        ad.need[i] = g->t[i].info.kind == HG_T_PARAM;
    }
    for (int n = 0; n < nn; n++) {
        const struct hg_node_info *nd = &g->n[n];
        if (hg_op_table[nd->op].flags & HG_OPF_COMM)
            for (int i = 0; i < nd->n_in; i++)
                if (ad.need[nd->in[i]]) {
                    /* what crosses ranks is the compiler's, not autodiff's:
                     * a comm op has no gradient rule */
                    fprintf(stderr, "hg_graph_backward: node %d (%s) reads %s, which "
                            "depends on a parameter\n", n, hg_op_table[nd->op].name,
                            g->t[nd->in[i]].name);
                    HG_CHECK(!"no gradient through a communication op");
                }
        if (nd->out < 0)
            continue;
        for (int i = 0; i < nd->n_in; i++)
            ad.need[nd->out] |= ad.need[nd->in[i]];
    }
    g->phase = HG_PH_BACKWARD;
    g->has_backward = 1;

    struct hg_shape one = {.ndim = 1, .dim = {1}};
    int seed = hg__graph_tensor(g, "loss.grad", HG_T_CONST, HG_F32, &one, -1);
    g->t[seed].const_value = 1.f;
    if (ad.need[loss])
        ad.grad[loss] = seed;

    /* origin of every backward node: the forward node whose rule made it
     * (the nodes [start[k], start[k + 1]) of the k-th rule run) */
    int *from = malloc((size_t)(nn + 1) * sizeof(int));  /* [nn] rule run -> node */
    int *start = malloc((size_t)(nn + 2) * sizeof(int)); /* [runs + 1] */
    HG_CHECK(from && start);
    int runs = 0;
    for (int n = nn - 1; n >= 0; n--) {
        /* copy: appending ops may move g->n */
        struct hg_node_info nd = g->n[n];
        if (nd.out < 0 || !ad.need[nd.out] || ad.grad[nd.out] < 0)
            continue;
        from[runs] = n;
        start[runs++] = g->nn;
        grad_node(&ad, &nd, ad.grad[nd.out]);
    }
    start[runs] = g->nn;

    /* Each param's gradient becomes a distinct GRAD tensor (grad block). */
    for (int i = 0; i < g->np; i++) {
        int p = g->params[i];
        int gp = ad.grad[p];
        if (gp < 0) { /* unused param: a zero gradient that nothing writes */
            struct hg_shape d = g->t[p].info.decl; /* copy: g->t may move */
            gp = hg__graph_tensor(g, NULL, HG_T_GRAD, HG_F32, &d, -1);
        } else if (g->t[gp].info.kind != HG_T_ACT ||
                   g->t[gp].info.producer < nn) {
            gp = hg__op2(g, HG_OP_RESHAPE_LIKE, gp, p, NULL);
        }
        struct hg_trec *r = &g->t[gp];
        r->info.kind = HG_T_GRAD;
        r->info.grad_of = p;
        free(r->name);
        size_t len = strlen(g->t[p].name) + 6;
        r->name = malloc(len);
        HG_CHECK(r->name != NULL);
        snprintf(r->name, len, "%s.grad", g->t[p].name);
        r->info.name = r->name;
        g->t[p].grad = gp;
    }
    g->phase = HG_PH_FORWARD;
    free(g->origin);
    g->norigin = g->nn;
    g->origin = malloc((size_t)g->nn * sizeof(int));
    HG_CHECK(g->origin != NULL);
    for (int w = 0; w < g->nn; w++)
        g->origin[w] = -1;
    for (int k = 0; k < runs; k++)
        for (int w = start[k]; w < start[k + 1]; w++)
            g->origin[w] = from[k];
    for (int i = 0; i < ad.nnacc; i++)
        g->origin[ad.nacc[i]] = -2 - g->origin[ad.nacc[i]];
    free(g->acct);
    g->acct = malloc((size_t)g->nn * sizeof(int));
    HG_CHECK(g->acct != NULL);
    for (int w = 0; w < g->nn; w++)
        g->acct[w] = -1;
    for (int i = 0; i < ad.nnacc; i++)
        g->acct[ad.nacc[i]] = ad.nacct[i];
    free(from);
    free(start);
    free(ad.grad);
    free(ad.need);
    free(ad.nacc);
    free(ad.nacct);
    return 0;
}

int hg_graph_node_accumulates(const struct hg_graph *g, int node)
{
    HG_CHECK(node >= 0 && node < g->nn);
    return node < g->norigin && g->acct ? g->acct[node] : -1;
}

int hg_graph_node_origin(const struct hg_graph *g, int node, int *accum)
{
    HG_CHECK(node >= 0 && node < g->nn);
    int o = node < g->norigin ? g->origin[node] : -1;
    if (accum)
        *accum = o <= -2;
    return o <= -2 ? -2 - o : o;
}

int hg_graph_grad(const struct hg_graph *g, int param)
{
    HG_CHECK(param >= 0 && param < g->nt);
    return g->t[param].grad;
}

static const char *const optim_names[] = {[HG_OPTIM_SGD] = "sgd", [HG_OPTIM_ADAMW] = "adamw",
                                          [HG_OPTIM_ADAM] = "adam",
                                          [HG_OPTIM_ADADELTA] = "adadelta"};

int hg_optim_kind(const char *name, enum hg_optim *kind)
{
    for (int k = HG_OPTIM_SGD; k <= HG_OPTIM_ADADELTA; k++)
        if (strcmp(name, optim_names[k]) == 0) {
            *kind = (enum hg_optim)k;
            return 0;
        }
    return -1;
}

int hg_graph_optimizer(struct hg_graph *g, enum hg_optim kind,
                       const union hg_attr *hyper)
{
    HG_CHECK(g->has_backward && !g->has_optimizer);
    HG_CHECK(kind >= HG_OPTIM_SGD && kind <= HG_OPTIM_ADADELTA && hyper != NULL);
    g->has_optimizer = 1;
    g->phase = HG_PH_UPDATE;
    for (int i = 0; i < g->np; i++) {
        int p = g->params[i];
        struct hg_shape dv = g->t[p].info.decl; /* copy: g->t may move */
        const struct hg_shape *d = &dv;
        char name[256];
        if (kind == HG_OPTIM_SGD) {
            snprintf(name, sizeof(name), "%s.momentum_buffer", g->t[p].name);
            int buf = hg__graph_tensor(g, name, HG_T_STATE, HG_F32, d, -1);
            hg__op3(g, HG_OP_SGD_STEP, p, g->t[p].grad, buf, hyper);
        } else if (kind == HG_OPTIM_ADADELTA) {
            snprintf(name, sizeof(name), "%s.square_avg", g->t[p].name);
            int sq = hg__graph_tensor(g, name, HG_T_STATE, HG_F32, d, -1);
            snprintf(name, sizeof(name), "%s.acc_delta", g->t[p].name);
            int acc = hg__graph_tensor(g, name, HG_T_STATE, HG_F32, d, -1);
            int in[4] = {p, g->t[p].grad, sq, acc};
            hg_graph_op(g, HG_OP_ADADELTA_STEP, in, 4, hyper);
        } else { /* ADAMW, ADAM: one op, adam.l2 tells them apart */
            union hg_attr h = *hyper;
            h.adam.l2 = kind == HG_OPTIM_ADAM;
            snprintf(name, sizeof(name), "%s.exp_avg", g->t[p].name);
            int m = hg__graph_tensor(g, name, HG_T_STATE, HG_F32, d, -1);
            snprintf(name, sizeof(name), "%s.exp_avg_sq", g->t[p].name);
            int v = hg__graph_tensor(g, name, HG_T_STATE, HG_F32, d, -1);
            int in[4] = {p, g->t[p].grad, m, v};
            hg_graph_op(g, HG_OP_ADAMW_STEP, in, 4, &h);
        }
    }
    g->phase = HG_PH_FORWARD;
    return 0;
}
