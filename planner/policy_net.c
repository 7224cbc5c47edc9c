/* policy_net.c - the learned policy's network (graph attention over the
 * groups' neighbourhoods, a Transformer layer, per-group heads) built as an
 * hg_graph with its REINFORCE loss, backward and AdamW, and the policy: one
 * master copy of the weights and AdamW state that every task's executor
 * loads before it runs and hands back after an update, and the checks of
 * what those may hold (finite, a weight within HG__POL_MAX_WEIGHT).
 *
 * The network's weights do not depend on the number of groups or devices:
 * each task builds the same network for its own sizes (the same parameters
 * and optimizer state in the same order). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/hg_planner.h"
#include "planner/policy-impl.h"

#define REF_BIAS 4.f  /* the reference action's logit bias at first (x its learned
                         weight, 1 at first): p ~0.8-0.9 of 10-14 placements */

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

static void net_build(struct hg__pol_net *n, const struct hg_policy_cfg *cfg, int64_t G, int64_t D)
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
    for (int l = 0; l < HG__POL_NLAYERS; l++) {
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

int hg__pol_net_new(struct hg__pol_net *n, const struct hg_policy_cfg *cfg, int G, int D, char *err,
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

void hg__pol_net_free(struct hg__pol_net *n)
{
    if (n->ex)
        hg_exec_free(n->ex);
    if (n->g)
        hg_graph_free(n->g);
    memset(n, 0, sizeof(*n));
}

/* ---------------------------------------------------------------- policy */

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
    HG_CHECK(hg__pol_net_new(&p->tmpl, &p->cfg, 2, 2, err, sizeof(err)) == 0);
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
    hg__pol_net_free(&p->tmpl);
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
float *hg__pol_master(const struct hg_policy *p, int t)
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
    return hg__pol_master(p, t);
}

/* ---------------------------------------------------------------- checks */

int hg__pol_check_values(const struct hg_tensor_info *ti, const float *x, char *why,
                         size_t whylen)
{
    size_t n = (size_t)hg_shape_numel(&ti->shape), len = strlen(ti->name);
    static const char sq_suffix[] = ".exp_avg_sq";
    size_t k = sizeof(sq_suffix) - 1;
    int sq = ti->kind == HG_T_STATE && len >= k && strcmp(ti->name + len - k, sq_suffix) == 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i]))
            return hg_kerr(why, whylen, "[%zu] = %g: not finite", i, (double)x[i]);
        if (ti->kind == HG_T_PARAM && fabsf(x[i]) > HG__POL_MAX_WEIGHT)
            return hg_kerr(why, whylen, "[%zu] = %g: beyond +-%g, more than any policy's "
                           "training reaches", i, (double)x[i], (double)HG__POL_MAX_WEIGHT);
        if (sq && x[i] < 0)
            return hg_kerr(why, whylen, "[%zu] = %g: negative, where it is a mean of squares",
                           i, (double)x[i]);
    }
    return 0;
}

int hg__pol_check(const struct hg_policy *p, const float *params, const float *state,
                  char *err, size_t errlen)
{
    const struct hg_graph *g = p->tmpl.g;
    for (int t = 0; t < hg_graph_n_tensors(g); t++) {
        const struct hg_tensor_info *ti = hg_graph_tensor(g, t);
        if (ti->kind != HG_T_PARAM && ti->kind != HG_T_STATE)
            continue;
        const float *x = hg__pol_master(p, t); /* where it lies in the master copy */
        if (ti->kind == HG_T_PARAM && params)
            x = params + (x - p->params);
        else if (ti->kind == HG_T_STATE && state)
            x = state + (x - p->state);
        char why[160];
        if (hg__pol_check_values(ti, x, why, sizeof(why)) != 0)
            return hg_kerr(err, errlen, "%s/%s%s",
                           ti->kind == HG_T_PARAM ? "params" : "optimizer", ti->name, why);
    }
    return 0;
}
