/* policy.c - the learned placement policy (HeteroG's GNN agent, GDP's
 * generalisation over graphs and clusters): features of op groups and
 * devices, the network as an hg_graph trained by REINFORCE with hgtrain's
 * own autodiff, executor and AdamW, and the policy file (HDF5, the
 * checkpoint's layout: attributes at the root, /params/<name> and
 * /optimizer/<name> f32 with a crc32 attribute).  docs/planner.md,
 * "Learned policy".
 *
 * The network's weights do not depend on the number of groups or devices:
 * each task builds the same network for its own sizes (the same parameters
 * and optimizer state in the same order) and the policy keeps the one
 * master copy that every task's executor loads before it runs and hands
 * back after an update. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data/hg_h5.h"
#include "planner/hg_planner.h"

#define POLICY_FORMAT "hgtrain-policy"
#define POLICY_VERSION 1
#define NLAYERS 2     /* graph attention layers */
#define CP_SCALE 4    /* capacity-proportional replicas, as the baselines */
#define NEG_INF -1e9f /* the additive mask of a non-neighbour */
#define REF_BIAS 4.f  /* the reference action's logit bias at first (x its learned
                         weight, 1 at first): p ~0.8-0.9 of 10-14 placements */

/* ---------------------------------------------------------------- features */

/* Op kinds for the histogram feature: a table indexed by the op. */
enum { K_DENSE, K_ELEM, K_NORM, K_LAYOUT, K_REDUCE, K_UPDATE, K_OTHER, K_COUNT };
static const unsigned char op_kind[HG_OP_COUNT] = {
    [HG_OP_MATMUL] = K_DENSE, [HG_OP_MATMUL_REDUCE] = K_DENSE, [HG_OP_CONV2D] = K_DENSE,
    [HG_OP_CONV2D_BWD_DATA] = K_DENSE, [HG_OP_CONV2D_BWD_FILTER] = K_DENSE,
    [HG_OP_MAXPOOL2D] = K_LAYOUT, [HG_OP_MAXPOOL2D_BWD] = K_LAYOUT,
    [HG_OP_ADD] = K_ELEM, [HG_OP_SUB] = K_ELEM, [HG_OP_MUL] = K_ELEM, [HG_OP_SCALE] = K_ELEM,
    [HG_OP_SUM_TO] = K_REDUCE, [HG_OP_RELU] = K_ELEM, [HG_OP_RELU_BWD] = K_ELEM,
    [HG_OP_GELU] = K_ELEM, [HG_OP_GELU_BWD] = K_ELEM, [HG_OP_TANH] = K_ELEM,
    [HG_OP_TANH_BWD] = K_ELEM, [HG_OP_SOFTMAX] = K_NORM, [HG_OP_SOFTMAX_BWD] = K_NORM,
    [HG_OP_LOG_SOFTMAX] = K_NORM, [HG_OP_LOG_SOFTMAX_BWD] = K_NORM,
    [HG_OP_LAYERNORM] = K_NORM, [HG_OP_LAYERNORM_BWD_X] = K_NORM,
    [HG_OP_LAYERNORM_BWD_G] = K_NORM, [HG_OP_DROPOUT] = K_ELEM,
    [HG_OP_EMBEDDING] = K_LAYOUT, [HG_OP_EMBEDDING_BWD] = K_LAYOUT,
    [HG_OP_RESHAPE] = K_LAYOUT, [HG_OP_RESHAPE_LIKE] = K_LAYOUT, [HG_OP_PERMUTE] = K_LAYOUT,
    [HG_OP_CONCAT] = K_LAYOUT, [HG_OP_SLICE] = K_LAYOUT, [HG_OP_SLICE_BWD] = K_LAYOUT,
    [HG_OP_MASKED_FILL] = K_ELEM, [HG_OP_ATTENTION] = K_DENSE,
    [HG_OP_ATTENTION_BWD] = K_DENSE, [HG_OP_SUM] = K_REDUCE, [HG_OP_MEAN] = K_REDUCE,
    [HG_OP_EXPAND_LIKE] = K_REDUCE, [HG_OP_CROSS_ENTROPY] = K_REDUCE,
    [HG_OP_CROSS_ENTROPY_BWD] = K_REDUCE, [HG_OP_NLL] = K_REDUCE, [HG_OP_NLL_BWD] = K_REDUCE,
    [HG_OP_SGD_STEP] = K_UPDATE, [HG_OP_ADAMW_STEP] = K_UPDATE,
    [HG_OP_ADADELTA_STEP] = K_UPDATE, [HG_OP_ALLREDUCE] = K_OTHER, [HG_OP_SEND] = K_OTHER,
    [HG_OP_RECV] = K_OTHER, [HG_OP_PS_PUSH] = K_OTHER, [HG_OP_PS_PULL] = K_OTHER,
};
_Static_assert(HG_POLICY_FG == 13 + K_COUNT + 4,
               "group features: 13 scalars, the histogram, the reference's action");

static void node_cost(const struct hg_graph *g, int n, struct hg_cost *c)
{
    const struct hg_node_info *nd = hg_graph_node(g, n);
    struct hg_shape ins[HG_MAX_INPUTS], none = {0};
    for (int i = 0; i < nd->n_in; i++)
        ins[i] = hg_graph_tensor(g, nd->in[i])->shape;
    memset(c, 0, sizeof(*c));
    hg_op_table[nd->op].cost(ins, nd->n_in, nd->out >= 0 ? &hg_graph_tensor(g, nd->out)->shape
                                                          : &none, &nd->attr, c);
}

static float lg(double x) /* log1p of a non-negative quantity */
{
    return (float)log1p(x > 0 ? x : 0);
}

void hg_policy_features(struct hg_policy_feat *f, const struct hg_pgraph *pg,
                        const struct hg_graph *g, const struct hg_pprice *pr,
                        const struct hg_strategy *st, const int *ref)
{
    const struct hg_cluster *c = pg->c;
    int G = st->ngroups, D = pg->ndev;
    f->ngroups = G;
    f->ndev = D;
    f->group = calloc((size_t)G * HG_POLICY_FG, sizeof(float));
    f->dev = calloc((size_t)D * HG_POLICY_FD, sizeof(float));
    f->time = calloc((size_t)G * D, sizeof(float));
    f->mem = calloc((size_t)G * D, sizeof(float));
    f->edge = calloc((size_t)G * G, sizeof(float));
    f->mask = malloc((size_t)G * G * sizeof(float));
    f->ref_place = calloc((size_t)G * HG_POLICY_ACTIONS(D), sizeof(float));
    f->ref_agg = calloc((size_t)G * 2, sizeof(float));
    double *gt = calloc((size_t)G * D, sizeof(double)); /* [G][D] seconds */
    double *acc = calloc((size_t)G * 8, sizeof(double)); /* [G][8] sums, below */
    double *hist = calloc((size_t)G * K_COUNT, sizeof(double)); /* [G][K_COUNT] */
    double *dt = calloc((size_t)D, sizeof(double)); /* [D] whole graph on d */
    HG_CHECK(f->group && f->dev && f->time && f->mem && f->edge && f->mask && f->ref_place &&
             f->ref_agg && gt && acc && hist && dt);
    /* acc: flops, bytes, param bytes, act bytes, batch ops, ops, fwd, bwd */
    double tot_flops = 0, tot_static = 0;
    for (int v = 0; v < pg->nops; v++) {
        const struct hg_pop *o = &pg->ops[v];
        int k = st->group[v];
        double *a = &acc[(size_t)k * 8];
        struct hg_cost cost;
        node_cost(g, v, &cost);
        a[0] += cost.flops;
        a[1] += cost.bytes;
        for (int i = 0; i < o->nparams; i++)
            a[2] += (double)pg->pstatic[o->params[i]];
        if (!o->out_grad)
            a[3] += (double)o->out_bytes;
        a[4] += o->batch;
        a[5] += 1;
        a[6] += o->phase == HG_PH_FORWARD;
        a[7] += o->phase == HG_PH_BACKWARD;
        hist[(size_t)k * K_COUNT + op_kind[o->kind]] += 1;
        tot_flops += cost.flops;
        for (int d = 0; d < D; d++) {
            size_t i = hg_pprice_at(pr, v, d);
            gt[(size_t)k * D + d] += pr->a[i] + pr->b[i];
            dt[d] += pr->a[i] + pr->b[i];
        }
        /* edges: bytes from the producers' groups */
        for (int i = 0; i < o->nin; i++) {
            int u = o->in[i].op;
            if (u < 0 || st->group[u] == k)
                continue;
            int j = st->group[u];
            f->edge[(size_t)j * G + k] += (float)((double)o->in[i].bytes / 1e6);
            f->edge[(size_t)k * G + j] += (float)((double)o->in[i].bytes / 1e6);
        }
    }
    double mmin = INFINITY, mmax = 0, tmin = INFINITY;
    for (int d = 0; d < D; d++) {
        double m = (double)c->devices[d].memory;
        mmin = m < mmin ? m : mmin;
        mmax = m > mmax ? m : mmax;
        tmin = dt[d] < tmin ? dt[d] : tmin;
    }
    double fast_tot = 0;
    for (int k = 0; k < G; k++) {
        double best = INFINITY;
        for (int d = 0; d < D; d++)
            best = gt[(size_t)k * D + d] < best ? gt[(size_t)k * D + d] : best;
        fast_tot += best;
        tot_static += acc[(size_t)k * 8 + 2] + acc[(size_t)k * 8 + 3];
    }
    for (int k = 0; k < G; k++) {
        const double *a = &acc[(size_t)k * 8];
        float *x = &f->group[(size_t)k * HG_POLICY_FG];
        double best = INFINITY, n = a[5] > 0 ? a[5] : 1;
        for (int d = 0; d < D; d++)
            best = gt[(size_t)k * D + d] < best ? gt[(size_t)k * D + d] : best;
        x[0] = lg(a[0] / 1e9);
        x[1] = lg(a[1] / 1e9);
        x[2] = lg(a[2] / 1e8);
        x[3] = lg(a[3] / 1e8);
        x[4] = lg(tot_flops > 0 ? G * a[0] / tot_flops : 0);
        x[5] = lg(fast_tot > 0 ? G * best / fast_tot : 0);
        x[6] = lg(best / 1e-3);
        x[7] = (float)fmin((a[2] + a[3]) / mmin, 4);
        x[8] = (float)(a[4] / n);
        x[9] = lg(a[5]) / 4;
        x[10] = (float)(a[6] / n);
        x[11] = (float)(a[7] / n);
        x[12] = (float)((a[5] - a[6] - a[7]) / n);
        for (int h = 0; h < K_COUNT; h++)
            x[13 + h] = (float)(hist[(size_t)k * K_COUNT + h] / n);
        /* the reference's action: MP, even DP, proportional DP, AllReduce */
        int ra = ref ? ref[2 * k] : -1, rb = ref ? ref[2 * k + 1] : -1;
        if (ra >= 0 && ra < D + 2) { /* the baselines place no group on one node */
            f->ref_place[(size_t)k * HG_POLICY_ACTIONS(D) + ra] = 1;
            x[13 + K_COUNT + (ra < D ? 0 : ra - D + 1)] = 1;
        }
        if (ra >= D && (rb == 0 || rb == 1)) {
            f->ref_agg[(size_t)k * 2 + rb] = 1;
            x[13 + K_COUNT + 3] = (float)rb;
        }
        for (int d = 0; d < D; d++) {
            double t = gt[(size_t)k * D + d];
            f->time[(size_t)k * D + d] = best > 0 ? (float)log(t / best) : 0;
            f->mem[(size_t)k * D + d] =
                (float)fmin((a[2] + a[3]) / (double)c->devices[d].memory, 4);
        }
    }
    float emax = 0;
    for (size_t i = 0; i < (size_t)G * G; i++) {
        f->edge[i] = lg(f->edge[i]);
        emax = f->edge[i] > emax ? f->edge[i] : emax;
    }
    for (int i = 0; i < G; i++)
        for (int j = 0; j < G; j++) {
            size_t x = (size_t)i * G + j;
            if (emax > 0)
                f->edge[x] /= emax;
            f->mask[x] = i == j || f->edge[x] > 0 ? 0.f : NEG_INF;
        }
    for (int d = 0; d < D; d++) {
        const struct hg_pdevice *dv = &c->devices[d];
        float *x = &f->dev[(size_t)d * HG_POLICY_FD];
        double bw = 0;
        int same = 0;
        for (int e = 0; e < D; e++) {
            if (e == d)
                continue;
            struct hg_path p;
            hg_cluster_path(c, d, e, &p);
            bw += p.bw / (D - 1);
            same += c->devices[e].node == dv->node;
        }
        x[0] = dt[d] > 0 ? (float)(tmin / dt[d]) : 1;
        x[1] = (float)log((double)dv->memory / mmax);
        x[2] = lg((double)dv->memory / 1e10);
        x[3] = lg(bw / 1e9) / 3;
        x[4] = D > 1 ? (float)same / (float)(D - 1) : 0;
        x[5] = lg(tot_static / (double)dv->memory);
    }
    free(gt);
    free(acc);
    free(hist);
    free(dt);
}

void hg_policy_feat_free(struct hg_policy_feat *f)
{
    free(f->group);
    free(f->dev);
    free(f->time);
    free(f->mem);
    free(f->edge);
    free(f->mask);
    free(f->ref_place);
    free(f->ref_agg);
    memset(f, 0, sizeof(*f));
}

/* ---------------------------------------------------------------- network */

/* One instance of the network for G groups and D devices. */
struct net {
    struct hg_graph *g;
    struct hg_exec *ex;
    int nfwd, n;          /* forward nodes (a prefix of the order), all */
    int in_group, in_dev, in_time, in_mem, in_edge, in_mask, in_ref_p, in_ref_a, in_adv_p,
        in_adv_a;
    int place, agg;       /* kept: softmax [G, 2D+2], softmax [G, 2] */
    int loss;
};

static int linear(struct hg_graph *g, const char *prefix, int x, int64_t in, int64_t out)
{
    return hg_layer_linear(g, prefix, x, in, out, 1);
}

/* A learned scalar, zero at first (the weight of a pairwise feature). */
static int scalar(struct hg_graph *g, const char *name)
{
    int64_t one = 1;
    return hg_graph_param(g, name, 1, &one, HG_INIT_ZERO, 0.f);
}

/* A learned scalar, one at first, times k (the reference's bias). */
static int scalar_one(struct hg_graph *g, const char *name, float k)
{
    int64_t one = 1;
    return hg_scale(g, hg_graph_param(g, name, 1, &one, HG_INIT_ONE, 0.f), k);
}

/* Multi-head self-attention of h [G, d] over the groups: scores [H, G, G]
 * plus edge * prefix.edge_weight and the additive mask (both -1: none). */
static int attention(struct hg_graph *g, const char *prefix, int h, int64_t G, int64_t d,
                     int heads, int edge, int mask)
{
    char nm[64];
    int64_t dh = d / heads;
    int64_t split[3] = {G, heads, dh}, back[2] = {G, d};
    int perm[3] = {1, 0, 2};
    int qkv[3];
    static const char *const which[3] = {"q", "k", "v"};
    for (int i = 0; i < 3; i++) {
        snprintf(nm, sizeof(nm), "%s.%s", prefix, which[i]);
        qkv[i] = hg_permute(g, hg_reshape(g, linear(g, nm, h, d, d), 3, split), 3, perm);
    } /* [H, G, dh] each */
    int s = hg_scale(g, hg_matmul(g, qkv[0], qkv[1], 0, 1), 1.f / sqrtf((float)dh)); /* [H,G,G] */
    if (edge >= 0) {
        snprintf(nm, sizeof(nm), "%s.edge_weight", prefix);
        s = hg_add(g, s, hg_mul(g, edge, scalar(g, nm)));
    }
    if (mask >= 0)
        s = hg_add(g, s, mask);
    int o = hg_matmul(g, hg_softmax(g, s), qkv[2], 0, 0); /* [H, G, dh] */
    o = hg_reshape(g, hg_permute(g, o, 3, perm), 2, back);  /* [G, d] */
    snprintf(nm, sizeof(nm), "%s.out", prefix);
    return linear(g, nm, o, d, d);
}

/* entropy-weighted loss term: sum(softmax * log_softmax) */
static int neg_entropy(struct hg_graph *g, int p, int logp)
{
    return hg_sum(g, hg_mul(g, p, logp), HG_AXIS_ALL);
}

static void net_build(struct net *n, const struct hg_policy_cfg *cfg, int64_t G, int64_t D)
{
    struct hg_graph *g = n->g = hg_graph_new();
    int64_t d = cfg->d;
    int64_t sg[2] = {G, HG_POLICY_FG}, sd[2] = {D, HG_POLICY_FD}, sgd[2] = {G, D},
            sgg[2] = {G, G}, sp[2] = {G, 2 * D + 2}, sa[2] = {G, 2};
    n->in_group = hg_graph_input(g, "group", HG_F32, 2, sg, -1);
    n->in_dev = hg_graph_input(g, "device", HG_F32, 2, sd, -1);
    n->in_time = hg_graph_input(g, "time", HG_F32, 2, sgd, -1);
    n->in_mem = hg_graph_input(g, "mem", HG_F32, 2, sgd, -1);
    n->in_edge = hg_graph_input(g, "edge", HG_F32, 2, sgg, -1);
    n->in_mask = hg_graph_input(g, "mask", HG_F32, 2, sgg, -1);
    n->in_ref_p = hg_graph_input(g, "ref_place", HG_F32, 2, sp, -1);
    n->in_ref_a = hg_graph_input(g, "ref_agg", HG_F32, 2, sa, -1);
    n->in_adv_p = hg_graph_input(g, "adv_place", HG_F32, 2, sp, -1);
    n->in_adv_a = hg_graph_input(g, "adv_agg", HG_F32, 2, sa, -1);
    /* groups: embedding, graph attention over neighbours, a Transformer layer */
    int h = hg_relu(g, linear(g, "enc.in", n->in_group, HG_POLICY_FG, d)); /* [G, d] */
    for (int l = 0; l < NLAYERS; l++) {
        char pre[32], ln[40];
        snprintf(pre, sizeof(pre), "gat%d", l);
        snprintf(ln, sizeof(ln), "gat%d.ln", l);
        int a = attention(g, pre, h, G, d, cfg->heads, n->in_edge, n->in_mask);
        h = hg_layer_layernorm(g, ln, hg_add(g, h, a), d, 1e-5f);
    }
    int a = attention(g, "tf.attn", h, G, d, cfg->heads, -1, -1);
    h = hg_layer_layernorm(g, "tf.ln1", hg_add(g, h, a), d, 1e-5f);
    int ff = linear(g, "tf.fc2", hg_relu(g, linear(g, "tf.fc1", h, d, 2 * d)), 2 * d, d);
    h = hg_layer_layernorm(g, "tf.ln2", hg_add(g, h, ff), d, 1e-5f);
    /* devices: their own embedding [D, d] */
    int e = linear(g, "dev.fc2", hg_relu(g, linear(g, "dev.fc1", n->in_dev, HG_POLICY_FD, d)),
                   d, d);
    /* heads: MP on device j scores group . device, plus the pairwise
     * features; two DP choices; the aggregation */
    int mp = hg_scale(g, hg_matmul(g, linear(g, "head.mp", h, d, d), e, 0, 1),
                      1.f / sqrtf((float)d)); /* [G, D] */
    mp = hg_add(g, mp, hg_mul(g, n->in_time, scalar(g, "head.time_weight")));
    mp = hg_add(g, mp, hg_mul(g, n->in_mem, scalar(g, "head.mem_weight")));
    int dp = linear(g, "head.dp", h, d, 2); /* [G, 2] */
    /* even DP over device j's node: scored as MP is, by its own projection */
    int nd = hg_scale(g, hg_matmul(g, linear(g, "head.node", h, d, d), e, 0, 1),
                      1.f / sqrtf((float)d)); /* [G, D] */
    nd = hg_add(g, nd, hg_mul(g, n->in_time, scalar(g, "head.node_time_weight")));
    int cat[3] = {mp, dp, nd};
    int pl = hg_concat(g, cat, 3, 1);                 /* [G, 2D+2] */
    int ag = linear(g, "head.agg", h, d, 2);          /* [G, 2] */
    /* the reference's action, biased: the policy starts from the best
     * baseline and learns where leaving it pays */
    pl = hg_add(g, pl, hg_mul(g, n->in_ref_p, scalar_one(g, "head.ref_weight", REF_BIAS)));
    ag = hg_add(g, ag, hg_mul(g, n->in_ref_a, scalar_one(g, "head.ref_agg_weight", REF_BIAS)));
    int lp = hg_log_softmax(g, pl), la = hg_log_softmax(g, ag);
    n->place = hg_softmax(g, pl);
    n->agg = hg_softmax(g, ag);
    hg_graph_keep(g, n->place);
    hg_graph_keep(g, n->agg);
    /* REINFORCE: adv_* hold -mean over samples of advantage x one-hot */
    int pg_loss = hg_add(g, hg_sum(g, hg_mul(g, lp, n->in_adv_p), HG_AXIS_ALL),
                         hg_sum(g, hg_mul(g, la, n->in_adv_a), HG_AXIS_ALL));
    int ent = hg_add(g, neg_entropy(g, n->place, lp), neg_entropy(g, n->agg, la));
    n->loss = hg_add(g, pg_loss, hg_scale(g, ent, cfg->entropy / (float)G));
    hg_graph_keep(g, n->loss);
    hg_graph_backward(g, n->loss);
    union hg_attr hyper = {.adam = {0.9f, 0.999f, 1e-8f, 0.f}};
    hg_graph_optimizer(g, HG_OPTIM_ADAMW, &hyper);
}

static int net_new(struct net *n, const struct hg_policy_cfg *cfg, int G, int D, char *err,
                   size_t errlen)
{
    memset(n, 0, sizeof(*n));
    net_build(n, cfg, G, D);
    if (hg_graph_resolve(n->g, NULL, err, errlen) != 0)
        return -1;
    int total = hg_graph_n_nodes(n->g);
    int *order = malloc((size_t)total * sizeof(int)); /* [total] */
    HG_CHECK(order != NULL);
    n->nfwd = hg_graph_order(n->g, HG_PH_FORWARD, order);
    n->n = hg_graph_order(n->g, HG_PH_ALL, order); /* by phase: the forward first */
    for (int i = 0; i < n->nfwd; i++) /* a forward pass runs the prefix */
        HG_CHECK(hg_graph_node(n->g, order[i])->phase == HG_PH_FORWARD);
    n->ex = hg_exec_new(n->g, order, n->n, err, errlen);
    free(order);
    return n->ex ? 0 : -1;
}

static void net_free(struct net *n)
{
    if (n->ex)
        hg_exec_free(n->ex);
    if (n->g)
        hg_graph_free(n->g);
    memset(n, 0, sizeof(*n));
}

/* ---------------------------------------------------------------- policy */

struct hg_policy {
    struct hg_policy_cfg cfg;
    long steps;           /* AdamW updates so far */
    struct net tmpl;      /* the network for 2 groups, 2 devices: names, shapes */
    float *params;        /* [nparams] the master copy, the graph's block order */
    float *state;         /* [nstate] AdamW's m and v, the state block order */
    size_t nparams, nstate;
};

static void cfg_defaults(struct hg_policy_cfg *c)
{
    c->d = c->d > 0 ? c->d : 32;
    c->heads = c->heads > 0 ? c->heads : 2;
    c->lr = c->lr > 0 ? c->lr : 3e-3f;
    c->entropy = c->entropy > 0 ? c->entropy : 0.01f;
}

struct hg_policy *hg_policy_new(const struct hg_policy_cfg *cfg)
{
    struct hg_policy *p = calloc(1, sizeof(*p));
    HG_CHECK(p != NULL);
    p->cfg = *cfg;
    cfg_defaults(&p->cfg);
    HG_CHECK(p->cfg.d % p->cfg.heads == 0);
    char err[256];
    HG_CHECK(net_new(&p->tmpl, &p->cfg, 2, 2, err, sizeof(err)) == 0);
    hg_graph_init_params(p->tmpl.g, p->tmpl.ex, p->cfg.seed);
    const float *pb = hg_exec_param_block(p->tmpl.ex, &p->nparams);
    hg_exec_state_block(p->tmpl.ex, &p->nstate);
    p->params = malloc(p->nparams * sizeof(float));
    p->state = calloc(p->nstate + 1, sizeof(float));
    HG_CHECK(p->params && p->state);
    memcpy(p->params, pb, p->nparams * sizeof(float));
    return p;
}

void hg_policy_free(struct hg_policy *p)
{
    if (!p)
        return;
    net_free(&p->tmpl);
    free(p->params);
    free(p->state);
    free(p);
}

void hg_policy_get_cfg(const struct hg_policy *p, struct hg_policy_cfg *cfg, long *steps)
{
    *cfg = p->cfg;
    if (steps)
        *steps = p->steps;
}

/* Where tensor t of kind (PARAM or STATE) of the template lies in the
 * master copy (blocks in id order with no gaps: what the executor lays out). */
static float *master_at(const struct hg_policy *p, int t)
{
    const struct hg_tensor_info *ti = hg_graph_tensor(p->tmpl.g, t);
    struct hg_exec *ex = p->tmpl.ex;
    size_t n;
    if (ti->kind == HG_T_PARAM)
        return p->params + ((float *)hg_exec_data(ex, t) - hg_exec_param_block(ex, &n));
    return p->state + ((float *)hg_exec_data(ex, t) - hg_exec_state_block(ex, &n));
}

const float *hg_policy_param(const struct hg_policy *p, const char *name, size_t *n)
{
    int t = hg_graph_find(p->tmpl.g, name);
    if (t < 0 || hg_graph_tensor(p->tmpl.g, t)->kind != HG_T_PARAM)
        return NULL;
    *n = (size_t)hg_shape_numel(&hg_graph_tensor(p->tmpl.g, t)->shape);
    return master_at(p, t);
}

/* ---------------------------------------------------------------- file */

/* The format attribute, or "" (absent, not a short string). */
static void read_format(hid_t f, char *buf, size_t n)
{
    buf[0] = 0;
    if (H5Aexists(f, "format") <= 0)
        return;
    hid_t a = H5Aopen(f, "format", H5P_DEFAULT);
    hid_t t = a < 0 ? -1 : H5Aget_type(a);
    if (t >= 0 && H5Tget_class(t) == H5T_STRING && !H5Tis_variable_str(t) &&
        H5Tget_size(t) < n && H5Aread(a, t, buf) < 0)
        buf[0] = 0;
    buf[n - 1] = 0;
    if (t >= 0)
        H5Tclose(t);
    if (a >= 0)
        H5Aclose(a);
}

/* Every tensor of kind of the template into group name of f: no times in
 * the headers, so that the same policy is the same bytes. */
static int write_kind(const struct hg_policy *p, hid_t f, const char *group,
                      enum hg_tkind kind)
{
    hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_obj_track_times(gcpl, 0);
    H5Pset_obj_track_times(dcpl, 0);
    hid_t grp = H5Gcreate2(f, group, H5P_DEFAULT, gcpl, H5P_DEFAULT);
    int rc = grp < 0 ? -1 : 0;
    const struct hg_graph *g = p->tmpl.g;
    for (int t = 0; t < hg_graph_n_tensors(g) && rc == 0; t++) {
        const struct hg_tensor_info *ti = hg_graph_tensor(g, t);
        if (ti->kind != kind)
            continue;
        hsize_t dim[HG_MAX_DIMS];
        for (int i = 0; i < ti->shape.ndim; i++)
            dim[i] = (hsize_t)ti->shape.dim[i];
        const float *x = master_at(p, t);
        hid_t sp = H5Screate_simple(ti->shape.ndim, dim, NULL);
        hid_t ds = H5Dcreate2(grp, ti->name, H5T_IEEE_F32LE, sp, H5P_DEFAULT, dcpl,
                              H5P_DEFAULT);
        if (ds < 0 || H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, x) < 0 ||
            hg_h5_attr_write(ds, "crc32", H5T_STD_U32LE, H5T_NATIVE_UINT32,
                       &(uint32_t){hg_crc32_f32(x, (size_t)hg_shape_numel(&ti->shape))}) != 0)
            rc = -1;
        if (ds >= 0)
            H5Dclose(ds);
        H5Sclose(sp);
    }
    if (grp >= 0)
        H5Gclose(grp);
    H5Pclose(gcpl);
    H5Pclose(dcpl);
    return rc;
}

int hg_policy_save(const struct hg_policy *p, const char *path, char *err, size_t errlen)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    char tmp[4200];
    if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
        return hg_kerr(err, errlen, "%s: path too long", path);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), fcpl = H5Pcreate(H5P_FILE_CREATE);
    H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST);
    H5Pset_obj_track_times(fcpl, 0);
    hid_t f = H5Fcreate(tmp, H5F_ACC_TRUNC, fcpl, fapl);
    H5Pclose(fapl);
    H5Pclose(fcpl);
    if (f < 0)
        return hg_kerr(err, errlen, "%s: cannot create: %s", tmp, strerror(errno));
    const struct hg_policy_cfg *c = &p->cfg;
    int rc = hg_h5_attr_str(f, "format", POLICY_FORMAT) || hg_h5_attr_i64(f, "version", POLICY_VERSION) ||
             hg_h5_attr_i64(f, "feature_layout", HG_POLICY_LAYOUT) ||
             hg_h5_attr_i64(f, "group_features", HG_POLICY_FG) ||
             hg_h5_attr_i64(f, "device_features", HG_POLICY_FD) ||
             hg_h5_attr_i64(f, "gat_layers", NLAYERS) || hg_h5_attr_i64(f, "d_model", c->d) ||
             hg_h5_attr_i64(f, "heads", c->heads) || hg_h5_attr_f64(f, "lr", c->lr) ||
             hg_h5_attr_f64(f, "entropy", c->entropy) || hg_h5_attr_i64(f, "seed", (int64_t)c->seed) ||
             hg_h5_attr_i64(f, "num_updates", p->steps) ||
             write_kind(p, f, "params", HG_T_PARAM) ||
             write_kind(p, f, "optimizer", HG_T_STATE)
                 ? -1 : 0;
    if (H5Fclose(f) < 0)
        rc = -1;
    if (rc == 0 && rename(tmp, path) != 0)
        return hg_kerr(err, errlen, "%s: rename from %s: %s", path, tmp, strerror(errno));
    if (rc != 0) {
        unlink(tmp);
        return hg_kerr(err, errlen, "%s: write failed", path);
    }
    return 0;
}

/* Reads group name's tensors of kind into p's master copy, each checked
 * for its shape and CRC. */
static int read_kind(struct hg_policy *p, hid_t f, const char *path, const char *group,
                     enum hg_tkind kind, char *err, size_t errlen)
{
    hid_t grp = H5Lexists(f, group, H5P_DEFAULT) > 0 ? H5Gopen2(f, group, H5P_DEFAULT) : -1;
    if (grp < 0)
        return hg_kerr(err, errlen, "%s: no group /%s (corrupt or truncated?)", path, group);
    int rc = 0;
    const struct hg_graph *g = p->tmpl.g;
    for (int t = 0; t < hg_graph_n_tensors(g) && rc == 0; t++) {
        const struct hg_tensor_info *ti = hg_graph_tensor(g, t);
        if (ti->kind != kind)
            continue;
        hid_t ds = H5Lexists(grp, ti->name, H5P_DEFAULT) > 0
                       ? H5Dopen2(grp, ti->name, H5P_DEFAULT) : -1;
        if (ds < 0) {
            rc = hg_kerr(err, errlen, "%s: no /%s/%s", path, group, ti->name);
            break;
        }
        hid_t sp = H5Dget_space(ds);
        hsize_t dim[HG_MAX_DIMS];
        int nd = sp < 0 ? -1 : H5Sget_simple_extent_ndims(sp);
        int same = nd == ti->shape.ndim && nd <= HG_MAX_DIMS &&
                   H5Sget_simple_extent_dims(sp, dim, NULL) == nd;
        for (int i = 0; same && i < nd; i++)
            same = dim[i] == (hsize_t)ti->shape.dim[i];
        float *x = master_at(p, t);
        size_t n = (size_t)hg_shape_numel(&ti->shape);
        uint32_t crc = 0;
        if (!same)
            rc = hg_kerr(err, errlen, "%s: /%s/%s: not of shape the network has", path,
                         group, ti->name);
        else if (H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, x) < 0)
            rc = hg_kerr(err, errlen, "%s: /%s/%s: unreadable (corrupt or truncated?)", path,
                         group, ti->name);
        else if (hg_h5_attr_read(ds, "crc32", H5T_NATIVE_UINT32, &crc) != 0 ||
                 crc != hg_crc32_f32(x, n))
            rc = hg_kerr(err, errlen, "%s: /%s/%s: CRC mismatch (corrupt file)", path, group,
                         ti->name);
        if (sp >= 0)
            H5Sclose(sp);
        H5Dclose(ds);
    }
    H5Gclose(grp);
    return rc;
}

int hg_policy_load(struct hg_policy **pp, const char *path, char *err, size_t errlen)
{
    *pp = NULL;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (access(path, R_OK) != 0)
        return hg_kerr(err, errlen, "%s: %s", path, strerror(errno));
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        return hg_kerr(err, errlen, "%s: not an HDF5 file (corrupt or truncated?)", path);
    char fmt[64];
    read_format(f, fmt, sizeof(fmt));
    int64_t version = 0, layout = 0, fg = 0, fd = 0, nl = 0, d = 0, heads = 0, seed = 0,
            steps = 0;
    double lr = 0, ent = 0;
    int rc = 0;
    if (strcmp(fmt, POLICY_FORMAT) != 0)
        rc = hg_kerr(err, errlen, "%s: not an hgtrain policy (format '%s')", path,
                     fmt[0] ? fmt : "none");
    else if (hg_h5_read_i64(f, "version", &version) != 0 || version != POLICY_VERSION)
        rc = hg_kerr(err, errlen, "%s: policy version %lld, this hgplan reads %d", path,
                     (long long)version, POLICY_VERSION);
    else if (hg_h5_read_i64(f, "feature_layout", &layout) != 0 || hg_h5_read_i64(f, "group_features", &fg) ||
             hg_h5_read_i64(f, "device_features", &fd) || hg_h5_read_i64(f, "gat_layers", &nl))
        rc = hg_kerr(err, errlen, "%s: no feature layout attributes (corrupt?)", path);
    else if (layout != HG_POLICY_LAYOUT || fg != HG_POLICY_FG || fd != HG_POLICY_FD ||
             nl != NLAYERS)
        rc = hg_kerr(err, errlen, "%s: feature layout %lld (%lld group, %lld device features, "
                     "%lld attention layers); this hgplan's is %d (%d, %d, %d): train the "
                     "policy again", path, (long long)layout, (long long)fg, (long long)fd,
                     (long long)nl, HG_POLICY_LAYOUT, HG_POLICY_FG, HG_POLICY_FD, NLAYERS);
    else if (hg_h5_read_i64(f, "d_model", &d) || hg_h5_read_i64(f, "heads", &heads) ||
             hg_h5_read_f64(f, "lr", &lr) || hg_h5_read_f64(f, "entropy", &ent) ||
             hg_h5_read_i64(f, "seed", &seed) || hg_h5_read_i64(f, "num_updates", &steps))
        rc = hg_kerr(err, errlen, "%s: missing attributes (corrupt?)", path);
    else if (d < 1 || d > 1024 || heads < 1 || d % heads != 0 || !(lr > 0) || !(ent > 0) ||
             steps < 0)
        rc = hg_kerr(err, errlen, "%s: d_model %lld, heads %lld, lr %g, entropy %g: not a "
                     "valid network", path, (long long)d, (long long)heads, lr, ent);
    struct hg_policy *p = NULL;
    if (rc == 0) {
        struct hg_policy_cfg cfg = {.d = (int)d, .heads = (int)heads, .lr = (float)lr,
                                    .entropy = (float)ent, .seed = (uint64_t)seed};
        p = hg_policy_new(&cfg);
        p->steps = steps;
        rc = read_kind(p, f, path, "params", HG_T_PARAM, err, errlen);
        if (rc == 0)
            rc = read_kind(p, f, path, "optimizer", HG_T_STATE, err, errlen);
    }
    H5Fclose(f);
    if (rc != 0) {
        hg_policy_free(p);
        return -1;
    }
    *pp = p;
    return 0;
}

/* ---------------------------------------------------------------- tasks */

struct hg_policy_task {
    const struct hg_pgraph *pg;
    struct hg_strategy *st;   /* the grouping, the reference's order; cfgs are scratch */
    struct hg_policy_feat feat;
    struct hg_sim *sim;
    struct net net;
    double ref;               /* the best baseline's time, seconds */
    double baseline;          /* moving average of the reward */
    int have_baseline;
    struct hg_gcfg dp[2][2];  /* [even, prop][PS, AR] */
    struct hg_gcfg *node_dp;  /* [nnodes][2] even over a node's devices [PS, AR] */
    struct hg_strategy *best; /* the best strategy sampled in training */
    double best_cost;         /* its hg_search_cost; INFINITY: none yet */
    int *ref_act;             /* [G][2] the reference's actions (placement, aggregation
                                 or -1 where model parallel) */
    int *place_act;           /* [G][2] the same of the placement's reference */
    int *imit_act;            /* [G][2] a finetune's imitation target: the reference's
                                 actions, then the best sample's or placement's */
    double imit_reward;       /* its reward */
    int *placed_act;          /* [G][2] the last hg_policy_place's (seconds > 0) */
    int placed_new;           /* placed_act not yet weighed against imit_act */
    int *place_order;         /* [nops] its order */
    float *prob_p, *prob_a;   /* [G][2D+2], [G][2] the last hg_policy_place's
                                 probabilities (hg_policy_propose draws from them) */
};

static void set_input(struct net *n, int t, const float *x)
{
    const struct hg_tensor_info *ti = hg_graph_tensor(n->g, t);
    memcpy(hg_exec_data(n->ex, t), x, (size_t)hg_shape_numel(&ti->shape) * sizeof(float));
}

static double reward(const struct hg_sim_result *r, double ref)
{
    double x = r->iter_s / ref;
    if (r->oom)
        x += 10 * (1 + fmin(r->overflow, 10));
    return -sqrt(x);
}

/* The reference's actions of baseline strategy b into ref[G][2]
 * (placement, aggregation or -1 where model parallel). */
static void baseline_actions(const struct hg_strategy *b, enum hg_baseline k, int D, int *ref)
{
    int even = k == HG_BASE_EV_PS || k == HG_BASE_EV_AR;
    for (int j = 0; j < b->ngroups; j++) {
        const struct hg_gcfg *cf = &b->cfg[j];
        int mp = cf->mode == HG_MODE_MP;
        ref[2 * j] = mp ? cf->device : even ? D : D + 1;
        ref[2 * j + 1] = mp ? -1 : cf->agg == HG_AGG_AR;
    }
}

/* The fastest of the baselines on t's grouping, each from the order of
 * `from` (nops ints) and scheduled by sched: its actions into act[G][2],
 * its order into order[nops], its simulation into *rb. */
static void best_baseline(struct hg_policy_task *t,
                          void (*sched)(struct hg_sim *, const struct hg_pgraph *,
                                        struct hg_strategy *, struct hg_sim_result *,
                                        enum hg_sched_policy *),
                          const int *from, int *act, int *order, struct hg_sim_result *rb)
{
    const struct hg_pgraph *pg = t->pg;
    double best = INFINITY;
    for (int k = 0; k < HG_BASE_COUNT; k++) {
        struct hg_strategy *b = hg_strategy_copy(t->st);
        struct hg_sim_result r;
        memcpy(b->order, from, (size_t)pg->nops * sizeof(int));
        hg_baseline_apply(b, pg, (enum hg_baseline)k);
        sched(t->sim, pg, b, &r, NULL);
        if (hg_search_cost(&r) < best) {
            best = hg_search_cost(&r);
            *rb = r;
            memcpy(order, b->order, (size_t)pg->nops * sizeof(int));
            baseline_actions(b, (enum hg_baseline)k, pg->ndev, act);
        }
        hg_strategy_free(b);
    }
}

int hg_policy_task_new(struct hg_policy_task **tp, struct hg_policy *p,
                       const struct hg_pgraph *pg, const struct hg_graph *g,
                       const struct hg_pprice *pr, int groups, char *err, size_t errlen)
{
    struct hg_policy_task *t = calloc(1, sizeof(*t));
    HG_CHECK(t != NULL);
    *tp = NULL;
    t->pg = pg;
    t->st = hg_strategy_new(pg->nops, pg->ndev, 1);
    hg_strategy_group(t->st, pg, pr, groups > 0 ? groups : 64);
    t->sim = hg_sim_new(pg, pr);
    t->best = hg_strategy_copy(t->st);
    t->best_cost = INFINITY;
    /* the reference: the best baseline on this grouping, list-scheduled
     * (hg_sched_list); its order is the order samples are simulated in
     * (the id order hides or exaggerates transfers the schedule does not),
     * its actions a feature (ref [ngroups][2]: placement, aggregation).
     * Not hg_sched_best's: trained against that, the policy learns nothing
     * that beats it (a 40000-update pretraining kept update 0), and the
     * committed policy was trained against this one */
    int G = t->st->ngroups, D = pg->ndev;
    size_t sz = (size_t)G * 2 * sizeof(int), osz = (size_t)pg->nops * sizeof(int);
    int *ref = t->ref_act = malloc(sz);
    t->imit_act = malloc(sz);
    t->place_act = malloc(sz);
    t->placed_act = malloc(sz);
    t->place_order = malloc(osz);
    t->prob_p = calloc((size_t)G * HG_POLICY_ACTIONS(D), sizeof(float));
    t->prob_a = calloc((size_t)G * 2, sizeof(float));
    HG_CHECK(ref && t->imit_act && t->place_act && t->placed_act && t->place_order &&
             t->prob_p && t->prob_a);
    for (int k = 0; k < 2 * G; k++)
        ref[k] = -1;
    /* each baseline from the order of the fastest so far (t->st's) */
    struct hg_sim_result rb = {0};
    best_baseline(t, hg_sched_list, t->st->order, ref, t->st->order, &rb);
    memcpy(t->best->order, t->st->order, osz);
    t->ref = rb.iter_s > 0 ? rb.iter_s : 1;
    t->imit_reward = reward(&rb, t->ref);
    memcpy(t->imit_act, ref, sz);
    /* the placement's reference: hgplan's best baseline, each baseline in
     * op-id order (as hg_strategy_group leaves it) kept in the order
     * hg_sched_best keeps (graph order beats both list schedules on most
     * of HeteroG's CNN baselines) */
    int *ids = malloc(osz); /* [nops] */
    HG_CHECK(ids != NULL);
    for (int i = 0; i < pg->nops; i++)
        ids[i] = i;
    best_baseline(t, hg_sched_best, ids, t->place_act, t->place_order, &rb);
    free(ids);
    hg_policy_features(&t->feat, pg, g, pr, t->st, ref);
    if (net_new(&t->net, &p->cfg, G, D, err, errlen) != 0) {
        hg_policy_task_free(t);
        return -1;
    }
    size_t np, ns;
    hg_exec_param_block(t->net.ex, &np);
    hg_exec_state_block(t->net.ex, &ns);
    HG_CHECK(np == p->nparams && ns == p->nstate); /* the same network, other sizes */
    struct net *n = &t->net;
    set_input(n, n->in_group, t->feat.group);
    set_input(n, n->in_dev, t->feat.dev);
    set_input(n, n->in_time, t->feat.time);
    set_input(n, n->in_mem, t->feat.mem);
    set_input(n, n->in_edge, t->feat.edge);
    set_input(n, n->in_mask, t->feat.mask);
    set_input(n, n->in_ref_p, t->feat.ref_place);
    set_input(n, n->in_ref_a, t->feat.ref_agg);
    for (int a = 0; a < 2; a++) {
        enum hg_agg agg = a ? HG_AGG_AR : HG_AGG_PS;
        hg_gcfg_even(&t->dp[0][a], pg->c, agg);
        hg_gcfg_prop(&t->dp[1][a], pg->c, CP_SCALE, agg);
    }
    t->node_dp = calloc((size_t)pg->c->nnodes * 2, sizeof(struct hg_gcfg));
    HG_CHECK(t->node_dp != NULL);
    for (int nn = 0; nn < pg->c->nnodes; nn++)
        for (int a = 0; a < 2; a++) {
            struct hg_gcfg *cf = &t->node_dp[nn * 2 + a];
            cf->mode = HG_MODE_DP;
            cf->agg = a ? HG_AGG_AR : HG_AGG_PS;
            for (int d = 0; d < D; d++)
                cf->rep[d] = pg->c->devices[d].node == nn;
            cf->ps = hg_gcfg_choose_ps(pg->c, cf->rep);
        }
    *tp = t;
    return 0;
}

void hg_policy_task_free(struct hg_policy_task *t)
{
    if (!t)
        return;
    net_free(&t->net);
    hg_sim_free(t->sim);
    hg_strategy_free(t->best);
    hg_policy_feat_free(&t->feat);
    hg_strategy_free(t->st);
    free(t->ref_act);
    free(t->imit_act);
    free(t->placed_act);
    free(t->place_act);
    free(t->place_order);
    free(t->prob_p);
    free(t->prob_a);
    free(t->node_dp);
    free(t);
}

const struct hg_policy_feat *hg_policy_task_feat(const struct hg_policy_task *t)
{
    return &t->feat;
}

double hg_policy_task_ref(const struct hg_policy_task *t)
{
    return t->ref;
}

const struct hg_strategy *hg_policy_task_best(const struct hg_policy_task *t, double *cost)
{
    if (cost)
        *cost = t->best_cost;
    return t->best_cost < INFINITY ? t->best : NULL;
}

/* The master copy into t's executor (params and AdamW state). */
static void load_master(const struct hg_policy *p, struct hg_policy_task *t)
{
    size_t n;
    memcpy(hg_exec_param_block(t->net.ex, &n), p->params, p->nparams * sizeof(float));
    if (p->nstate)
        memcpy(hg_exec_state_block(t->net.ex, &n), p->state, p->nstate * sizeof(float));
}

int hg_policy_forward(struct hg_policy *p, struct hg_policy_task *t, float *place, float *agg,
                      char *err, size_t errlen)
{
    load_master(p, t);
    struct hg_step s = {.step = (uint64_t)p->steps + 1, .lr = p->cfg.lr, .grad_scale = 1,
                        .nthreads = 1};
    if (hg_exec_run(t->net.ex, &s, 0, t->net.nfwd, err, errlen) != 0)
        return -1;
    int G = t->feat.ngroups, D = t->feat.ndev;
    if (place)
        memcpy(place, hg_exec_data(t->net.ex, t->net.place),
               (size_t)G * HG_POLICY_ACTIONS(D) * sizeof(float));
    if (agg)
        memcpy(agg, hg_exec_data(t->net.ex, t->net.agg), (size_t)G * 2 * sizeof(float));
    return 0;
}

/* Group k's cfg for placement action a (< D: MP on a; D: even DP; D + 1:
 * proportional DP; D + 2 + j: even DP over device j's node) and
 * aggregation b (0: PS, 1: AllReduce). */
static const struct hg_gcfg *action_cfg(const struct hg_policy_task *t, int a, int b,
                                        struct hg_gcfg *mp)
{
    int D = t->feat.ndev;
    if (a < D) {
        hg_gcfg_mp(mp, a);
        return mp;
    }
    if (a < D + 2)
        return &t->dp[a - D][b];
    return &t->node_dp[t->pg->c->devices[a - D - 2].node * 2 + b];
}

static void apply_action(struct hg_policy_task *t, int k, int a, int b)
{
    struct hg_gcfg mp;
    t->st->cfg[k] = *action_cfg(t, a, b, &mp);
}

static int argmax(const float *x, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        best = x[i] > x[best] ? i : best;
    return best;
}

static double urand(uint64_t *rng)
{
    return (double)(hg_rand(rng) >> 11) * 0x1.0p-53;
}

static int sample(const float *p, int n, uint64_t *rng)
{
    double u = urand(rng), c = 0;
    for (int i = 0; i < n; i++) {
        c += p[i];
        if (u < c)
            return i;
    }
    return n - 1;
}

/* An action of n drawn from p, or uniformly with probability eps: a
 * policy whose probabilities have settled (every sample its greedy
 * choice: a finetune then sees one reward and learns nothing) still
 * tries other actions; the update pushes towards those that paid. */
static int explore(const float *p, int n, double eps, uint64_t *rng)
{
    if (urand(rng) < eps)
        return (int)(urand(rng) * n) % n;
    return sample(p, n, rng);
}

/* t->st set to the actions act[G][2], fully simulated (what the delta
 * simulator's next move is a delta of) into r where not NULL. */
static void set_actions(struct hg_policy_task *t, const int *act, struct hg_sim_result *r)
{
    struct hg_sim_result x;
    for (int k = 0; k < t->feat.ngroups; k++)
        apply_action(t, k, act[2 * k], act[2 * k + 1]);
    hg_sim_full(t->sim, t->st, r ? r : &x);
}

/* A finetune's start: the last placement, rewarded as its samples are
 * (the training's order), becomes the imitation target where it beats it
 * (bert_large48 on heterog-8gpu: no sample of a 45-s finetune came near
 * the zero-shot placement).  Here rather than in hg_policy_place, which
 * no finetune follows but in hgplan --finetune. */
static void weigh_placed(struct hg_policy_task *t)
{
    struct hg_sim_result r;
    set_actions(t, t->placed_act, &r);
    double rw = reward(&r, t->ref);
    if (rw > t->imit_reward) {
        t->imit_reward = rw;
        memcpy(t->imit_act, t->placed_act, (size_t)t->feat.ngroups * 2 * sizeof(int));
    }
    t->placed_new = 0;
}

/* One REINFORCE step on t: returns the mean reward of its samples. */
static int train_step(struct hg_policy *p, struct hg_policy_task *t, int S, int expl,
                      uint64_t *rng, double *mean, char *err, size_t errlen)
{
    int G = t->feat.ngroups, D = t->feat.ndev, A = HG_POLICY_ACTIONS(D);
    size_t np = (size_t)G * A, na = (size_t)G * 2;
    float *pl = malloc(np * sizeof(float));                 /* [G, 2D+2] */
    float *ag = malloc(na * sizeof(float));                 /* [G, 2] */
    int *act = malloc((size_t)S * G * 2 * sizeof(int));     /* [S][G][2] */
    double *rw = malloc((size_t)S * sizeof(double));        /* [S] */
    HG_CHECK(pl && ag && act && rw);
    /* exploring: one group per sample on average.  The samples are then
     * not the policy's own, and an advantage against a lagging baseline
     * would drift every group towards uniform (pretraining with it fell
     * from -1.06 to -6.95): against the step's other samples the drift
     * cancels */
    double eps = expl ? 1.0 / G : 0;
    int rc = hg_policy_forward(p, t, pl, ag, err, errlen);
    *mean = 0;
    for (int s = 0; rc == 0 && s < S; s++) {
        for (int k = 0; k < G; k++) {
            int *x = &act[((size_t)s * G + k) * 2];
            x[0] = explore(pl + (size_t)k * A, A, eps, rng);
            x[1] = explore(ag + (size_t)k * 2, 2, eps, rng);
            apply_action(t, k, x[0], x[1]);
        }
        struct hg_sim_result r;
        hg_sim_full(t->sim, t->st, &r);
        rw[s] = reward(&r, t->ref);
        if (expl && rw[s] > t->imit_reward) {
            t->imit_reward = rw[s];
            memcpy(t->imit_act, &act[(size_t)s * G * 2], (size_t)G * 2 * sizeof(int));
        }
        if (hg_search_cost(&r) < t->best_cost) {
            t->best_cost = hg_search_cost(&r);
            memcpy(t->best->cfg, t->st->cfg, (size_t)G * sizeof(struct hg_gcfg));
        }
        *mean += rw[s] / S;
    }
    if (rc == 0) {
        if (!t->have_baseline) {
            t->baseline = *mean;
            t->have_baseline = 1;
        }
        /* adv inputs: -(1/S) sum_s advantage_s one-hot_s; the aggregation
         * only where the sample chose data parallelism */
        float *ap = hg_exec_data(t->net.ex, t->net.in_adv_p);
        float *aa = hg_exec_data(t->net.ex, t->net.in_adv_a);
        memset(ap, 0, np * sizeof(float));
        memset(aa, 0, na * sizeof(float));
        for (int s = 0; s < S; s++) {
            double b = expl && S > 1 ? (*mean * S - rw[s]) / (S - 1) : t->baseline;
            float adv = (float)((rw[s] - b) / S);
            for (int k = 0; k < G; k++) {
                const int *x = &act[((size_t)s * G + k) * 2];
                ap[(size_t)k * A + x[0]] -= adv;
                if (x[0] >= D)
                    aa[(size_t)k * 2 + x[1]] -= adv;
            }
        }
        /* a finetune imitates the best strategy it knows (the reference,
         * then its best sample or placement) by as much as that beats the
         * step's mean (self-imitation, the advantage clipped at 0):
         * exploring alone, 8000 updates on inception_v3 left the mean
         * reward where it began (-1.72, samples 3x the reference) */
        float im = expl ? (float)(fmax(0, t->imit_reward - *mean) / S) : 0;
        for (int k = 0; im > 0 && k < G; k++) {
            const int *x = &t->imit_act[(size_t)k * 2];
            ap[(size_t)k * A + x[0]] -= im;
            if (x[0] >= D)
                aa[(size_t)k * 2 + x[1]] -= im;
        }
        t->baseline = 0.9 * t->baseline + 0.1 * *mean;
        struct hg_step st = {.step = (uint64_t)p->steps + 1, .lr = p->cfg.lr,
                             .grad_scale = 1, .nthreads = 1};
        rc = hg_exec_run(t->net.ex, &st, 0, t->net.n, err, errlen);
    }
    if (rc == 0) {
        size_t n;
        p->steps++;
        memcpy(p->params, hg_exec_param_block(t->net.ex, &n), p->nparams * sizeof(float));
        if (p->nstate)
            memcpy(p->state, hg_exec_state_block(t->net.ex, &n), p->nstate * sizeof(float));
    }
    free(pl);
    free(ag);
    free(act);
    free(rw);
    return rc;
}

/* One point of the reward curve (hg_policy_train_opts.json). */
static void json_line(FILE *f, long step, double reward, double wall)
{
    fprintf(f, "{\"policy_update\": %ld, \"reward\": %.6f, \"wall\": %.3f}\n", step, reward,
            wall);
    fflush(f);
}

/* The scores of p's greedy placements on the tasks (hg_policy_train_opts
 * eval_every), geometric means over the tasks: score, of min(greedy,
 * reference) / reference; tie, of greedy / reference (out of memory: 10);
 * *better: the tasks where the greedy placement is faster. */
static int evaluate(struct hg_policy *p, struct hg_policy_task *const *tasks, int ntasks,
                    double *score, double *tie, int *better, char *err, size_t errlen)
{
    double lsum = 0, ltie = 0;
    *better = 0;
    for (int i = 0; i < ntasks; i++) {
        struct hg_sim_result r;
        struct hg_strategy *s = hg_policy_decode(p, tasks[i], &r, err, errlen);
        if (!s)
            return -1;
        hg_strategy_free(s);
        double ref = tasks[i]->ref, x = !r.oom && r.iter_s < ref ? r.iter_s / ref : 1;
        *better += x < 1;
        lsum += log(x);
        ltie += log(r.oom ? 10 : fmin(r.iter_s / ref, 10));
    }
    *score = exp(lsum / ntasks);
    *tie = exp(ltie / ntasks);
    return 0;
}

/* The policy kept by eval_every: its weights, AdamW state and updates. */
struct snapshot {
    float *params, *state; /* [nparams], [nstate] */
    long steps;
    double score, tie;
};

static int eval_point(struct hg_policy *p, struct hg_policy_task *const *tasks, int ntasks,
                      const struct hg_policy_train_opts *o, struct snapshot *best,
                      struct hg_policy_train_stats *st, double t0, char *err, size_t errlen)
{
    double score, tie;
    int better;
    if (evaluate(p, tasks, ntasks, &score, &tie, &better, err, errlen) != 0)
        return -1;
    st->last_score = score;
    /* of equal scores, the greedy placement nearer the reference where it
     * loses (the placement's moves start from the faster of the two);
     * then the earliest */
    if (score < best->score * (1 - 1e-6) ||
        (score <= best->score * (1 + 1e-6) && tie < best->tie * (1 - 1e-6))) {
        best->score = score;
        best->tie = tie;
        best->steps = p->steps;
        memcpy(best->params, p->params, p->nparams * sizeof(float));
        memcpy(best->state, p->state, p->nstate * sizeof(float));
        st->best_better = better;
    }
    if (o->log) {
        fprintf(o->log, "  policy eval at update %ld: greedy placement x%.4f of the best "
                "baseline (geometric mean of the faster of the two; of greedy alone x%.4f), "
                "faster on %d of %d tasks; best x%.4f at update %ld\n", p->steps, score, tie,
                better, ntasks, best->score, best->steps);
        fflush(o->log);
    }
    if (o->json) {
        fprintf(o->json, "{\"policy_eval\": %ld, \"score\": %.6f, \"greedy\": %.6f, "
                "\"faster\": %d, \"wall\": %.3f}\n", p->steps, score, tie, better,
                hg_now() - t0);
        fflush(o->json);
    }
    return 0;
}

int hg_policy_train(struct hg_policy *p, struct hg_policy_task *const *tasks, int ntasks,
                    const struct hg_policy_train_opts *o, struct hg_policy_train_stats *st,
                    char *err, size_t errlen)
{
    HG_CHECK(ntasks > 0 && (o->steps > 0 || o->seconds > 0));
    memset(st, 0, sizeof(*st));
    double t0 = hg_now();
    int S = o->samples > 0 ? o->samples : 8;
    long every = o->log_every > 0 ? o->log_every : 50;
    /* the sampling stream: the seed and the updates so far (a finetune
     * continues rather than repeats the pretraining's draws) */
    uint64_t rng = hg_mix64(p->cfg.seed ^ hg_mix64((uint64_t)p->steps + 1));
    long cap = o->steps > 0 ? o->steps : -1;
    double *hist = NULL; /* [cap] each step's mean reward (seconds only: grown) */
    size_t hcap = 0;
    double win = 0;
    struct snapshot best = {.score = INFINITY, .tie = INFINITY};
    for (int i = 0; o->explore && i < ntasks; i++)
        if (tasks[i]->placed_new)
            weigh_placed(tasks[i]);
    if (o->eval_every > 0) {
        best.params = malloc(p->nparams * sizeof(float));
        best.state = malloc((p->nstate ? p->nstate : 1) * sizeof(float));
        HG_CHECK(best.params && best.state);
        if (eval_point(p, tasks, ntasks, o, &best, st, t0, err, errlen) != 0)
            goto fail;
    }
    for (long s = 0; cap < 0 || s < cap; s++) {
        if (o->seconds > 0 && hg_now() - t0 >= o->seconds)
            break;
        double m;
        if (train_step(p, tasks[s % ntasks], S, o->explore, &rng, &m, err, errlen) != 0)
            goto fail;
        if (o->eval_every > 0 && (s + 1) % o->eval_every == 0 &&
            eval_point(p, tasks, ntasks, o, &best, st, t0, err, errlen) != 0)
            goto fail;
        if ((size_t)s >= hcap) {
            hcap = hcap ? 2 * hcap : 256;
            hist = realloc(hist, hcap * sizeof(double));
            HG_CHECK(hist != NULL);
        }
        hist[s] = m;
        if (o->rewards)
            o->rewards[s] = m;
        st->steps = s + 1;
        win += m;
        if ((s + 1) % every == 0) {
            if (o->log) {
                fprintf(o->log, "  policy step %ld: mean reward %.4f over the last %ld steps "
                        "(%.1f s)\n", s + 1, win / every, every, hg_now() - t0);
                fflush(o->log);
            }
            if (o->json)
                json_line(o->json, s + 1, win / every, hg_now() - t0);
            win = 0;
        }
    }
    if (o->json && st->steps % every != 0) /* the last, shorter window */
        json_line(o->json, st->steps, win / (double)(st->steps % every), hg_now() - t0);
    if (o->eval_every > 0) {
        if (st->steps % o->eval_every != 0 &&
            eval_point(p, tasks, ntasks, o, &best, st, t0, err, errlen) != 0)
            goto fail;
        memcpy(p->params, best.params, p->nparams * sizeof(float));
        memcpy(p->state, best.state, p->nstate * sizeof(float));
        p->steps = best.steps;
        st->best_update = best.steps;
        st->best_score = best.score;
    }
    long n = st->steps, tenth = n / 10 > 0 ? n / 10 : 1;
    for (long s = 0; s < n && s < tenth; s++) {
        st->first_reward += hist[s] / (double)(tenth < n ? tenth : n);
        st->last_reward += hist[n - 1 - s] / (double)(tenth < n ? tenth : n);
    }
    free(hist);
    free(best.params);
    free(best.state);
    st->seconds = hg_now() - t0;
    return 0;
fail:
    free(hist);
    free(best.params);
    free(best.state);
    return -1;
}

/* ---------------------------------------------------------------- placing */

/* One move of the placement: group k to action (a, b) with probability p;
 * key: the probability of group k's most probable move. */
struct move {
    int k, a, b;
    float p, key;
};

static int move_cmp(const void *x, const void *y)
{
    const struct move *m = x, *n = y;
    if (m->key != n->key)
        return m->key > n->key ? -1 : 1;
    if (m->k != n->k)
        return m->k - n->k;
    if (m->p != n->p)
        return m->p > n->p ? -1 : 1;
    return m->a != n->a ? m->a - n->a : m->b - n->b;
}

/* Each group's `top` most probable placements (both aggregations for the
 * data-parallel ones) other than its action act[k] as moves: a group's
 * moves together (tried one after another, each a delta of the one
 * before), the group with the most probable move first. */
static struct move *moves_new(const float *pl, const float *ag, const int *act, int G, int D,
                              int top, int *n)
{
    int A = HG_POLICY_ACTIONS(D);
    top = top < A ? top : A;
    struct move *m = malloc((size_t)G * (size_t)top * 2 * sizeof(*m)); /* [G * top * 2] */
    int *ord = malloc((size_t)A * sizeof(int));                         /* [2D+2] */
    HG_CHECK(m && ord);
    *n = 0;
    for (int k = 0; k < G; k++) {
        const float *p = pl + (size_t)k * A;
        for (int i = 0; i < A; i++)
            ord[i] = i;
        for (int i = 0; i < top; i++) /* partial selection sort: top is small */
            for (int j = i + 1; j < A; j++)
                if (p[ord[j]] > p[ord[i]]) {
                    int x = ord[i];
                    ord[i] = ord[j];
                    ord[j] = x;
                }
        int first = *n;
        float key = 0;
        for (int i = 0; i < top; i++) {
            int a = ord[i];
            for (int b = 0; b < (a < D ? 1 : 2); b++) {
                if (a == act[2 * k] && (a < D || b == act[2 * k + 1]))
                    continue;
                float q = a < D ? p[a] : p[a] * ag[k * 2 + b];
                m[(*n)++] = (struct move){k, a, b, q, 0};
                key = q > key ? q : key;
            }
        }
        for (int i = first; i < *n; i++)
            m[i].key = key;
    }
    free(ord);
    qsort(m, (size_t)*n, sizeof(*m), move_cmp);
    return m;
}

/* Passes over the moves m[nm] (grouped by group) from the strategy in
 * t->st (actions act[G][2], cost cur): of each group's moves the fastest
 * kept where the delta simulator says faster than cur; until a pass keeps
 * nothing or `seconds` after t0.  Returns the cost reached. */
static double local_search(struct hg_policy_task *t, const struct move *m, int nm, int *act,
                           double cur, double t0, double seconds,
                           struct hg_policy_place_stats *ps)
{
    int D = t->feat.ndev;
    struct hg_sim_result r;
    for (int kept = 1; kept && hg_now() - t0 < seconds;) {
        kept = 0;
        for (int i = 0, j; i < nm && hg_now() - t0 < seconds; i = j) {
            int k = m[i].k, best = -1, last = -1;
            double bc = cur * (1 - 1e-9);
            struct hg_gcfg old = t->st->cfg[k];
            for (j = i; j < nm && m[j].k == k; j++) {
                int a = m[j].a, b = m[j].b;
                if ((act[2 * k] == a && (a < D || act[2 * k + 1] == b)) ||
                    hg_now() - t0 >= seconds)
                    continue;
                apply_action(t, k, a, b);
                hg_sim_delta(t->sim, t->st, k, &r);
                ps->tried++;
                last = j;
                if (hg_search_cost(&r) < bc) {
                    bc = hg_search_cost(&r);
                    best = j;
                }
            }
            if (best >= 0) {
                cur = bc;
                act[2 * k] = m[best].a;
                act[2 * k + 1] = m[best].b;
                ps->kept++;
                kept = 1;
                if (best != last) {
                    apply_action(t, k, m[best].a, m[best].b);
                    hg_sim_delta(t->sim, t->st, k, &r);
                }
            } else if (last >= 0) {
                t->st->cfg[k] = old;
                hg_sim_delta(t->sim, t->st, k, &r);
            }
        }
        ps->passes++;
    }
    return cur;
}

/* One move of a sweep: group k to m[j], the strategy's cost c with it. */
struct single {
    int k, j;
    double c;
};

static int single_cmp(const void *x, const void *y)
{
    const struct single *a = x, *b = y;
    if (a->c != b->c)
        return a->c < b->c ? -1 : 1;
    return a->k != b->k ? a->k - b->k : a->j - b->j;
}

/* Group k to move mv (delta-simulated into r). */
static void move_to(struct hg_policy_task *t, int k, const struct move *mv,
                    struct hg_sim_result *r)
{
    apply_action(t, k, mv->a, mv->b);
    hg_sim_delta(t->sim, t->st, k, r);
}

/* Group k back to old (delta-simulated). */
static void restore(struct hg_policy_task *t, int k, struct hg_gcfg old)
{
    struct hg_sim_result r;
    t->st->cfg[k] = old;
    hg_sim_delta(t->sim, t->st, k, &r);
}

enum { PAIR_OF = 32 }; /* pairs among this many of a sweep's fastest moves */

/* Steepest descent over single moves and pairs from the strategy in t->st
 * (actions act[G][2], cost cur): a sweep tries every move of m[nm] alone
 * (keeping none), then every pair of two of its PAIR_OF fastest moves of
 * different groups; the fastest move or pair is kept where faster than
 * cur; until a sweep finds nothing faster or `seconds` after t0 (then the
 * fastest found so far).  Pairs reach what moves one at a time do not:
 * on inception_v3 on heterog-12gpu MCMC's answer is two groups model
 * parallel on the two P100s of a node, which a single move that is
 * faster alone blocks.  Returns the cost reached. */
static double pair_search(struct hg_policy_task *t, const struct move *m, int nm, int *act,
                          double cur, double t0, double seconds,
                          struct hg_policy_place_stats *ps)
{
    int D = t->feat.ndev;
    struct single *sw = malloc((size_t)(nm > 0 ? nm : 1) * sizeof(*sw)); /* [nm] */
    HG_CHECK(sw != NULL);
    struct hg_sim_result r;
    for (int found = 1; found && hg_now() - t0 < seconds;) {
        int n = 0;
        for (int i = 0, j; i < nm && hg_now() - t0 < seconds; i = j) {
            int k = m[i].k, any = 0;
            struct hg_gcfg old = t->st->cfg[k];
            for (j = i; j < nm && m[j].k == k; j++) {
                if (act[2 * k] == m[j].a && (m[j].a < D || act[2 * k + 1] == m[j].b))
                    continue;
                move_to(t, k, &m[j], &r);
                ps->tried++;
                any = 1;
                sw[n++] = (struct single){k, j, hg_search_cost(&r)};
            }
            if (any)
                restore(t, k, old);
        }
        qsort(sw, (size_t)n, sizeof(*sw), single_cmp);
        int top = n < PAIR_OF ? n : PAIR_OF, bp = -1, bq = -1;
        double bc = cur * (1 - 1e-9);
        if (n > 0 && sw[0].c < bc) {
            bc = sw[0].c;
            bp = 0;
        }
        for (int p = 0; p < top && hg_now() - t0 < seconds; p++) {
            int k = sw[p].k;
            struct hg_gcfg ok = t->st->cfg[k];
            move_to(t, k, &m[sw[p].j], &r); /* p's move stays for its pairs */
            for (int q = p + 1; q < top; q++) {
                int l = sw[q].k;
                if (k == l)
                    continue;
                struct hg_gcfg ol = t->st->cfg[l];
                move_to(t, l, &m[sw[q].j], &r);
                ps->tried++;
                if (hg_search_cost(&r) < bc) {
                    bc = hg_search_cost(&r);
                    bp = p;
                    bq = q;
                }
                restore(t, l, ol);
            }
            restore(t, k, ok);
        }
        found = bp >= 0;
        int keep[2] = {bp, bq}; /* sw[] indices, -1: none */
        for (int x = 0; x < 2 && found && keep[x] >= 0; x++) {
            const struct single *s1 = &sw[keep[x]];
            move_to(t, s1->k, &m[s1->j], &r);
            act[2 * s1->k] = m[s1->j].a;
            act[2 * s1->k + 1] = m[s1->j].b;
            ps->kept++;
        }
        if (found)
            cur = bc;
        ps->passes++;
    }
    free(sw);
    return cur;
}

/* local_search over the policy's top (o->top, 0: 3) moves per group from
 * the actions act[G][2] (cost cur), then, time left, over every other
 * action (the probable ones first: where the policy's ranking misses
 * one).  Returns the cost reached. */
static double policy_moves(struct hg_policy_task *t, const float *pl, const float *ag,
                           int *act, const struct hg_policy_place_opts *o, double cur,
                           double t0, struct hg_policy_place_stats *ps)
{
    int G = t->feat.ngroups, D = t->feat.ndev, A = HG_POLICY_ACTIONS(D);
    int top = o->top > 0 ? o->top : 3;
    for (int wide = 0; wide < 2 && hg_now() - t0 < o->seconds; wide++) {
        int nm;
        struct move *m = moves_new(pl, ag, act, G, D, wide ? A : top, &nm);
        cur = local_search(t, m, nm, act, cur, t0, o->seconds, ps);
        free(m);
        if (top >= A)
            break;
    }
    return cur;
}

/* One of hg_policy_place's searches (how) from the actions from[G][2]
 * (work[G][2] its scratch), in the order hg_sched_best gives the start
 * (t->st's order: the caller restores it) and once more list-scheduled at
 * the end (a move's worth depends on the order: transformer24 on
 * heterog-8gpu's greedy placement and the move that makes it faster than
 * the reference are both slower in the reference's order); kept in *best
 * (*br, ps->how, its actions best_act[G][2]) where faster than it. */
static void search_from(struct hg_policy_task *t, const float *pl, const float *ag,
                        const struct hg_policy_place_opts *o, double t0, const int *from,
                        enum hg_place_how how, int *work, int *best_act,
                        struct hg_strategy **best, struct hg_sim_result *br,
                        struct hg_policy_place_stats *ps)
{
    int G = t->feat.ngroups, D = t->feat.ndev;
    memcpy(work, from, (size_t)G * 2 * sizeof(int));
    set_actions(t, work, NULL);
    struct hg_sim_result r;
    hg_sched_best(t->sim, t->pg, t->st, &r, NULL);
    double c = hg_search_cost(&r);
    if (how != HG_PLACE_MOVES) {
        int nm;
        struct move *m = moves_new(pl, ag, work, G, D, HG_POLICY_ACTIONS(D), &nm);
        pair_search(t, m, nm, work, c, t0, o->seconds, ps);
        free(m);
    } else {
        policy_moves(t, pl, ag, work, o, c, t0, ps);
    }
    struct hg_strategy *s = hg_strategy_copy(t->st);
    hg_sched_best(t->sim, t->pg, s, &r, NULL);
    if (!*best || hg_search_cost(&r) < hg_search_cost(br)) {
        hg_strategy_free(*best);
        *best = s;
        *br = r;
        ps->how = how;
        memcpy(best_act, work, (size_t)G * 2 * sizeof(int));
    } else {
        hg_strategy_free(s);
    }
}

struct hg_strategy *hg_policy_place(struct hg_policy *p, struct hg_policy_task *t,
                                    const struct hg_policy_place_opts *o,
                                    struct hg_policy_place_stats *ps, char *err,
                                    size_t errlen)
{
    double t0 = hg_now();
    int G = t->feat.ngroups, D = t->feat.ndev, A = HG_POLICY_ACTIONS(D);
    float *pl = t->prob_p, *ag = t->prob_a;
    memset(ps, 0, sizeof(*ps));
    if (hg_policy_forward(p, t, pl, ag, err, errlen) != 0)
        return NULL;
    int *act = malloc((size_t)G * 2 * sizeof(int)); /* [G][2] the greedy actions */
    int *order = malloc((size_t)t->st->nops * sizeof(int)); /* [nops] the training's */
    HG_CHECK(act && order);
    /* placing: the greedy strategy and the searches in the placement's
     * reference's order; decoding (training's evaluations) in the
     * training's */
    memcpy(order, t->st->order, (size_t)t->st->nops * sizeof(int));
    if (o->seconds > 0)
        memcpy(t->st->order, t->place_order, (size_t)t->st->nops * sizeof(int));
    for (int k = 0; k < G; k++) {
        act[2 * k] = argmax(pl + (size_t)k * A, A);
        act[2 * k + 1] = argmax(ag + (size_t)k * 2, 2);
        apply_action(t, k, act[2 * k], act[2 * k + 1]);
    }
    struct hg_sim_result r;
    hg_sim_full(t->sim, t->st, &r);
    ps->greedy = r;
    if (o->want_greedy)
        ps->greedy_st = hg_strategy_copy(t->st);
    struct hg_strategy *placed = NULL; /* the searches' fastest */
    if (o->seconds > 0) {
        /* the two starts: the greedy placement (act) and the reference
         * (the greedy aggregation where it is model parallel) */
        size_t sz = (size_t)G * 2 * sizeof(int);
        int *ref = malloc(sz), *work = malloc(sz); /* [G][2] each */
        HG_CHECK(ref && work);
        for (int k = 0; k < G; k++) {
            ref[2 * k] = t->place_act[2 * k];
            ref[2 * k + 1] = t->place_act[2 * k + 1] >= 0 ? t->place_act[2 * k + 1]
                                                          : act[2 * k + 1];
        }
        set_actions(t, ref, &r);
        double gc = hg_search_cost(&ps->greedy), rc = hg_search_cost(&r);
        ps->from_ref = rc < gc;
        const int *from = ps->from_ref ? ref : act, *other = ps->from_ref ? act : ref;
        int other_fits = ps->from_ref ? !ps->greedy.oom : !r.oom;
        /* the policy's moves one group at a time from the faster start,
         * which has an answer at any time; then, time left, the steepest
         * descent with pairs from there (every action, the policy's
         * ranking aside), which needs a whole sweep before it keeps
         * anything; then the same descent from the other start where it
         * fits (transformer24 on heterog-8gpu: the reference faster than
         * the greedy placement, which one move makes faster than both
         * once list-scheduled; the policy's own order of moves, once
         * finetuned, kept another one first).  The fastest kept. */
        struct hg_sim_result br;
        search_from(t, pl, ag, o, t0, from, HG_PLACE_MOVES, work, t->placed_act, &placed,
                    &br, ps);
        if (hg_now() - t0 < o->seconds)
            search_from(t, pl, ag, o, t0, from, HG_PLACE_PAIRS, work, t->placed_act,
                        &placed, &br, ps);
        if (hg_now() - t0 < o->seconds && other_fits)
            search_from(t, pl, ag, o, t0, other, HG_PLACE_PAIRS_OTHER, work, t->placed_act,
                        &placed, &br, ps);
        t->placed_new = 1; /* weighed by a finetune that follows (weigh_placed) */
        free(ref);
        free(work);
        memcpy(t->st->order, order, (size_t)t->st->nops * sizeof(int));
    }
    free(order);
    free(act);
    ps->seconds = hg_now() - t0;
    return placed ? placed : hg_strategy_copy(t->st);
}

struct hg_strategy *hg_policy_decode(struct hg_policy *p, struct hg_policy_task *t,
                                     struct hg_sim_result *r, char *err, size_t errlen)
{
    struct hg_policy_place_opts o = {0};
    struct hg_policy_place_stats st;
    struct hg_strategy *s = hg_policy_place(p, t, &o, &st, err, errlen);
    if (s && r)
        *r = st.greedy;
    return s;
}

void hg_policy_propose(void *ctx, const struct hg_pgraph *pg, const struct hg_strategy *st,
                       uint64_t *rng, int *group, struct hg_gcfg *cfg)
{
    struct hg_policy_task *t = ctx;
    int G = t->feat.ngroups, D = t->feat.ndev, A = HG_POLICY_ACTIONS(D);
    HG_CHECK(st->ngroups == G && pg->ndev == D);
    if (urand(rng) < 0.5) { /* the space the policy does not reach (replica counts) */
        hg_propose_random(NULL, pg, st, rng, group, cfg);
        return;
    }
    int k = (int)(urand(rng) * G) % G;
    int a = sample(t->prob_p + (size_t)k * A, A, rng);
    int b = sample(t->prob_a + (size_t)k * 2, 2, rng);
    struct hg_gcfg mp;
    *group = k;
    *cfg = *action_cfg(t, a, b, &mp);
    cfg->recompute = st->cfg[k].recompute;
}

/* ---------------------------------------------------------------- clusters */

static double logu(uint64_t *rng, double lo, double hi)
{
    return exp(log(lo) + (log(hi) - log(lo)) * urand(rng));
}

struct hg_cluster *hg_policy_perturb(const struct hg_cluster *c, uint64_t seed)
{
    struct hg_cluster *x = malloc(sizeof(*x));
    HG_CHECK(x != NULL);
    *x = *c;
    int64_t npairs = 0;
    for (int n = 0; n < c->nnodes; n++)
        npairs += (int64_t)c->nodes[n].ndev * (c->nodes[n].ndev - 1) / 2;
    x->nodes = malloc((size_t)c->nnodes * sizeof(*x->nodes));
    x->devices = malloc((size_t)c->ndev * sizeof(*x->devices));
    x->links = malloc((size_t)(c->nlinks ? c->nlinks : 1) * sizeof(*x->links));
    x->pair_link = malloc((size_t)(npairs ? npairs : 1) * sizeof(int));
    HG_CHECK(x->nodes && x->devices && x->links && x->pair_link);
    memcpy(x->nodes, c->nodes, (size_t)c->nnodes * sizeof(*x->nodes));
    memcpy(x->devices, c->devices, (size_t)c->ndev * sizeof(*x->devices));
    memcpy(x->links, c->links, (size_t)c->nlinks * sizeof(*x->links));
    memcpy(x->pair_link, c->pair_link, (size_t)npairs * sizeof(int));
    uint64_t rng = hg_mix64(seed + 0x5eed);
    snprintf(x->name, sizeof(x->name), "%.40s~%llu", c->name, (unsigned long long)seed);
    for (int d = 0; d < x->ndev; d++) {
        struct hg_pdevice *v = &x->devices[d];
        double s = logu(&rng, 0.5, 2);
        v->peak_flops *= s;
        v->mem_bw *= s;
        v->speed *= s;
        v->memory = (int64_t)((double)v->memory * logu(&rng, 0.5, 1.5));
    }
    for (int l = 0; l < x->nlinks; l++)
        x->links[l].bw *= logu(&rng, 0.5, 2);
    for (int n = 0; n < x->nnodes; n++)
        x->nodes[n].nic_bw *= logu(&rng, 0.5, 2);
    return x;
}
