/* policy_feat.c - the learned policy's inputs: features of a graph's op
 * groups (FLOPs, bytes, times, the op kinds' histogram, the reference's
 * action) and of a cluster's devices, pairwise times, memory and edges,
 * log-scaled so that graphs and clusters of different sizes compare
 * (docs/planner.md, "Learned policy"). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "planner/hg_planner.h"

#define NEG_INF -1e9f /* the additive mask of a non-neighbour */

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
    [HG_OP_RESHARD] = K_OTHER,
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
