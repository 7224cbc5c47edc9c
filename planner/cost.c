/* cost.c - the roofline cost model for devices that are not present, and
 * the communication model (point to point, ring and hierarchical
 * AllReduce, parameter server).  A profile bound to the cluster
 * (hg_cluster_set_profile) replaces the roofline op by op where a device
 * is present (hg_cost_node), and the ring formula by the measured
 * AllReduce among profiled devices of one node.
 *
 * Compute: time(op, d) = max(F / (peak_d * e_f[op]), B / (bw_d * e_b[op]))
 *          + launch overhead,
 * F and B the op's declared FLOPs and bytes (kernels/shapes.c).
 * Communication: a transfer over a path costs lat + bytes / bw, bw the
 * slowest channel on the path (intra-node link, or NIC -> switch -> NIC). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "planner/hg_planner.h"

/* Efficiency factors: the fraction of peak FLOP/s (e_f) and of memory
 * bandwidth (e_b) an op kind reaches on a large input.  Defaults, not
 * measurements: dense GEMM/convolution reach 60-80% of fp32 peak in cuDNN
 * and cuBLAS on V100/P100-class GPUs at training sizes (we take 0.7 and
 * 0.6; the backward convolutions are less regular, 0.5); streaming
 * element-wise kernels reach ~80% of the memory bandwidth (STREAM-like);
 * reductions, softmax and norms ~0.6 (two passes); gathers and scatters
 * (embedding, its backward), permutes and slices ~0.4-0.5 (strided
 * access).  The profiler's fit overrides all of this for present devices.
 * Rows not listed: {0.5, 0.5}. */
#define E(op, f, b) [HG_OP_##op] = {f, b}
const struct hg_op_eff hg_op_eff_table[HG_OP_COUNT] = {
    E(MATMUL, 0.7, 0.8),
    E(MATMUL_REDUCE, 0.6, 0.8),
    E(CONV2D, 0.6, 0.8),
    E(CONV2D_BWD_DATA, 0.5, 0.8),
    E(CONV2D_BWD_FILTER, 0.5, 0.8),
    E(MAXPOOL2D, 0.5, 0.7),
    E(MAXPOOL2D_BWD, 0.5, 0.6),
    E(ADD, 0.5, 0.8),
    E(SUB, 0.5, 0.8),
    E(MUL, 0.5, 0.8),
    E(SCALE, 0.5, 0.8),
    E(SUM_TO, 0.5, 0.6),
    E(RELU, 0.5, 0.8),
    E(RELU_BWD, 0.5, 0.8),
    E(GELU, 0.5, 0.8),
    E(GELU_BWD, 0.5, 0.8),
    E(TANH, 0.5, 0.8),
    E(TANH_BWD, 0.5, 0.8),
    E(SOFTMAX, 0.5, 0.6),
    E(SOFTMAX_BWD, 0.5, 0.6),
    E(LOG_SOFTMAX, 0.5, 0.6),
    E(LOG_SOFTMAX_BWD, 0.5, 0.6),
    E(LAYERNORM, 0.5, 0.6),
    E(LAYERNORM_BWD_X, 0.5, 0.6),
    E(LAYERNORM_BWD_G, 0.5, 0.6),
    E(DROPOUT, 0.5, 0.8),
    E(EMBEDDING, 0.5, 0.5),
    E(EMBEDDING_BWD, 0.5, 0.4),
    E(RESHAPE, 0.5, 0.8),
    E(RESHAPE_LIKE, 0.5, 0.8),
    E(PERMUTE, 0.5, 0.5),
    E(CONCAT, 0.5, 0.7),
    E(SLICE, 0.5, 0.5),
    E(SLICE_BWD, 0.5, 0.5),
    E(MASKED_FILL, 0.5, 0.8),
    /* GEMMs on one head's small blocks between row passes */
    E(ATTENTION, 0.4, 0.6),
    E(ATTENTION_BWD, 0.4, 0.6),
    E(SUM, 0.5, 0.6),
    E(MEAN, 0.5, 0.6),
    E(EXPAND_LIKE, 0.5, 0.8),
    E(CROSS_ENTROPY, 0.5, 0.6),
    E(CROSS_ENTROPY_BWD, 0.5, 0.6),
    E(NLL, 0.5, 0.6),
    E(NLL_BWD, 0.5, 0.6),
    E(SGD_STEP, 0.5, 0.8),
    E(ADAMW_STEP, 0.5, 0.8),
    E(ADADELTA_STEP, 0.5, 0.8),
    /* communication ops cross links: the simulator prices them with the
     * channels (transfer, AllReduce and PS costs below), never with a
     * device's roofline; the rows keep the table whole */
    E(ALLREDUCE, 0.5, 0.5),
    E(SEND, 0.5, 0.5),
    E(RECV, 0.5, 0.5),
    E(PS_PUSH, 0.5, 0.5),
    E(PS_PULL, 0.5, 0.5),
    E(RESHARD, 0.5, 0.5),
};
#undef E
_Static_assert(HG_OP_COUNT == 53, "a new op needs a row in hg_op_eff_table");

double hg_cost_op_time(const struct hg_pdevice *d, enum hg_op op,
                       const struct hg_cost *cost)
{
    HG_CHECK((unsigned)op < HG_OP_COUNT);
    if (!(d->peak_flops > 0))
        return -1;
    struct hg_op_eff e = hg_op_eff_table[op];
    if (!(e.flops > 0))
        e.flops = 0.5;
    if (!(e.bytes > 0))
        e.bytes = 0.5;
    double t = cost->flops / (d->peak_flops * e.flops);
    if (d->mem_bw > 0) {
        double tb = cost->bytes / (d->mem_bw * e.bytes);
        t = tb > t ? tb : t;
    }
    return t + (d->kind == HG_DEV_GPU ? HG_LAUNCH_OVERHEAD_GPU : HG_LAUNCH_OVERHEAD_CPU);
}

double hg_cost_prof_share(const struct hg_cluster *c, int d)
{
    const struct hg_pdevice *dv = &c->devices[d];
    double s = hg_pdevice_share(dv);
    if (c->prof && dv->prof_dev >= 0 && c->prof->devs[dv->prof_dev].share > 0)
        s /= c->prof->devs[dv->prof_dev].share;
    return s;
}

int hg_cost_node(const struct hg_cluster *c, int d, const struct hg_graph *g, int n,
                 int64_t batch, double *a, double *b, const struct hg_prof_op **pe)
{
    if (pe)
        *pe = NULL;
    const struct hg_pdevice *dv = &c->devices[d];
    const struct hg_node_info *nd = hg_graph_node(g, n);
    double share = hg_pdevice_share(dv);
    if (c->prof && dv->prof_dev >= 0) {
        char sig[256];
        const struct hg_prof_op *e =
            hg_prof_op_sig(g, n, batch, sig, sizeof(sig)) == 0
                ? hg_prof_find_op(c->prof, dv->prof_dev, nd->op, sig) : NULL;
        if (e) {
            double ps = hg_cost_prof_share(c, d);
            if (pe)
                *pe = e;
            *a = e->fit.a / ps;
            *b = e->fit.b * (double)batch / ps;
            return 1;
        }
    }
    struct hg_shape in[HG_MAX_INPUTS], out = {0};
    for (int k = 0; k < nd->n_in; k++)
        in[k] = hg_graph_tensor(g, nd->in[k])->shape;
    if (nd->out >= 0)
        out = hg_graph_tensor(g, nd->out)->shape;
    struct hg_cost cost = {0, 0};
    hg_op_table[nd->op].cost(in, nd->n_in, &out, &nd->attr, &cost);
    double t = hg_cost_op_time(dv, nd->op, &cost);
    if (t < 0)
        return -1;
    double launch = dv->kind == HG_DEV_GPU ? HG_LAUNCH_OVERHEAD_GPU : HG_LAUNCH_OVERHEAD_CPU;
    *a = launch / share;
    *b = (t - launch) / share;
    return 0;
}

double hg_cost_transfer(const struct hg_path *p, double bytes)
{
    return bytes > 0 ? p->lat + bytes / p->bw : 0;
}

double hg_cost_ring_allreduce(int n, double bytes, double bw, double lat)
{
    if (n <= 1 || !(bytes > 0))
        return 0;
    return 2.0 * (n - 1) / n * bytes / bw + 2.0 * (n - 1) * lat;
}

/* The slowest hop of a ring over devs[n] (in order, closing back to the
 * first): hops that leave one node share its NIC up channel, those that
 * enter share its down channel, and all of them share the switch. */
static void ring_hop(const struct hg_cluster *c, const int *devs, int n, double *bw,
                     double *lat)
{
    int nch = hg_cluster_n_channels(c);
    int *use = calloc((size_t)nch, sizeof(int));
    HG_CHECK(use != NULL);
    for (int i = 0; i < n; i++) {
        struct hg_path p;
        hg_cluster_path(c, devs[i], devs[(i + 1) % n], &p);
        for (int k = 0; k < p.nchan; k++)
            use[p.chan[k]]++;
    }
    *bw = INFINITY;
    *lat = 0;
    for (int i = 0; i < n; i++) {
        struct hg_path p;
        hg_cluster_path(c, devs[i], devs[(i + 1) % n], &p);
        for (int k = 0; k < p.nchan; k++) {
            double b = hg_cluster_channel_bw(c, p.chan[k]) / use[p.chan[k]];
            *bw = b < *bw ? b : *bw;
        }
        *lat = p.lat > *lat ? p.lat : *lat;
    }
    free(use);
}

/* The bound profile's tcp fit of coll over n ranks, when devs[n] are on n
 * different nodes (every hop between them crosses the network, as between
 * the processes hgplan --profile-links tcp measured, one per node).  1 with
 * *t, else 0. */
static int prof_net(const struct hg_cluster *c, const int *devs, int n, enum hg_prof_coll coll,
                    double bytes, double *t)
{
    if (!c->prof || n < 2 || n > c->nnodes)
        return 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (c->devices[devs[i]].node == c->devices[devs[j]].node)
                return 0;
    const struct hg_prof_link *m = hg_prof_find_link(c->prof, HG_LINK_TCP, coll, n);
    if (!m)
        return 0;
    *t = m->fit.a + m->fit.b * bytes;
    return 1;
}

/* The bound profile's AllReduce of this world size: over devices on as many
 * nodes, its tcp fit (prof_net); when every device of devs is profiled,
 * all are on one node and the ring's links are of one kind the profile
 * measured, that kind's fit: what the backend does, time-sharing of the
 * cores included, rather than the ring formula.  1 with *t, else 0. */
static int prof_allreduce(const struct hg_cluster *c, const int *devs, int n, double bytes,
                          double *t)
{
    if (!c->prof)
        return 0;
    if (prof_net(c, devs, n, HG_PROF_ALLREDUCE, bytes, t))
        return 1;
    int node = c->devices[devs[0]].node, kind = -1;
    for (int i = 0; i < n; i++) {
        const struct hg_pdevice *d = &c->devices[devs[i]];
        if (d->prof_dev < 0 || d->node != node)
            return 0;
        int l = hg_cluster_link(c, devs[i], devs[(i + 1) % n]);
        if (l < 0 || (kind >= 0 && (int)c->links[l].kind != kind))
            return 0;
        kind = (int)c->links[l].kind;
    }
    const struct hg_prof_link *m =
        hg_prof_find_link(c->prof, (enum hg_link_kind)kind, HG_PROF_ALLREDUCE, n);
    if (!m)
        return 0;
    *t = m->fit.a + m->fit.b * bytes;
    return 1;
}

double hg_cost_allreduce_ring(const struct hg_cluster *c, const int *devs, int n,
                              double bytes)
{
    if (n <= 1 || !(bytes > 0))
        return 0;
    double t;
    if (prof_allreduce(c, devs, n, bytes, &t))
        return t;
    double bw, lat;
    ring_hop(c, devs, n, &bw, &lat);
    return hg_cost_ring_allreduce(n, bytes, bw, lat);
}

double hg_cost_allgatherv_ring(const struct hg_cluster *c, const int *devs, int n,
                               const double *bytes)
{
    if (n <= 1)
        return 0;
    double bw, lat, big = 0;
    ring_hop(c, devs, n, &bw, &lat);
    for (int i = 0; i < n; i++)
        big = bytes[i] > big ? bytes[i] : big;
    /* each of the n - 1 steps waits for the largest part on the slowest hop */
    return (n - 1) * (big / bw + lat);
}

double hg_cost_allreduce_hier(const struct hg_cluster *c, const int *devs, int n,
                              double bytes)
{
    if (n <= 1)
        return 0;
    /* group devs by node (in the order given) */
    int *grp = malloc((size_t)n * sizeof(int)), *cnt = calloc((size_t)c->nnodes, sizeof(int));
    int *leader = malloc((size_t)c->nnodes * sizeof(int));
    HG_CHECK(grp && cnt && leader);
    int nn = 0;
    for (int i = 0; i < n; i++)
        cnt[c->devices[devs[i]].node]++;
    for (int nd = 0; nd < c->nnodes; nd++)
        if (cnt[nd] > 0)
            nn++;
    /* phase 1 and 3: reduce-scatter and all-gather inside each node, in
     * parallel across nodes: each is half a ring AllReduce */
    double intra = 0;
    int kmax = 1;
    for (int nd = 0; nd < c->nnodes; nd++) {
        int k = 0;
        for (int i = 0; i < n; i++)
            if (c->devices[devs[i]].node == nd)
                grp[k++] = devs[i];
        if (k > 1) {
            double t = hg_cost_allreduce_ring(c, grp, k, bytes);
            intra = t > intra ? t : intra;
        }
        kmax = k > kmax ? k : kmax;
    }
    /* phase 2: each device of a node owns bytes/k of the sum and joins the
     * ring of its peers on the other nodes; all k rings share the NICs, so
     * the traffic per NIC is that of one ring over the whole buffer */
    double inter = 0;
    if (nn > 1) {
        int m = 0;
        for (int nd = 0; nd < c->nnodes; nd++)
            for (int i = 0; i < n; i++)
                if (c->devices[devs[i]].node == nd) {
                    leader[m++] = devs[i];
                    break;
                }
        if (!prof_net(c, leader, m, HG_PROF_ALLREDUCE, bytes, &inter)) {
            double bw, lat;
            ring_hop(c, leader, m, &bw, &lat);
            inter = hg_cost_ring_allreduce(m, bytes, bw, lat);
        }
    }
    free(grp);
    free(cnt);
    free(leader);
    return intra + inter; /* reduce-scatter + all-gather = one intra ring */
}

int hg_cost_allreduce_hier_cheaper(const struct hg_cluster *c, const int *devs, int n,
                                   double bytes)
{
    return n > 1 && hg_cost_allreduce_hier(c, devs, n, bytes) <
                        hg_cost_allreduce_ring(c, devs, n, bytes);
}

double hg_cost_ps(const struct hg_cluster *c, const int *devs, int n, int ps,
                  double bytes)
{
    /* a server among its clients, one per node: the measured tcp step */
    int served = 0;
    double t;
    for (int i = 0; i < n; i++)
        served |= devs[i] == ps;
    if (served && prof_net(c, devs, n, HG_PROF_PS, bytes, &t))
        return t;
    int nch = hg_cluster_n_channels(c);
    double *up = calloc((size_t)nch, sizeof(double)), *down = calloc((size_t)nch, sizeof(double));
    HG_CHECK(up && down);
    double lat = 0;
    int any = 0;
    for (int i = 0; i < n; i++) {
        if (devs[i] == ps)
            continue;
        struct hg_path p, q;
        hg_cluster_path(c, devs[i], ps, &p); /* push */
        hg_cluster_path(c, ps, devs[i], &q); /* pull */
        for (int k = 0; k < p.nchan; k++)
            up[p.chan[k]] += bytes;
        for (int k = 0; k < q.nchan; k++)
            down[q.chan[k]] += bytes;
        lat = p.lat > lat ? p.lat : lat;
        any = 1;
    }
    double tp = 0, tq = 0;
    for (int k = 0; k < nch; k++) {
        double b = hg_cluster_channel_bw(c, k);
        if (up[k] > 0 && up[k] / b > tp)
            tp = up[k] / b;
        if (down[k] > 0 && down[k] / b > tq)
            tq = down[k] / b;
    }
    free(up);
    free(down);
    return any ? tp + tq + 2 * lat : 0;
}
