/* psagg.c - parameter-server aggregation of a planned strategy
 * (hg_ctl_strategy.agg_ps, from the trainer's lowering; the row
 * hg__mode_ps): a parameter served by rank r
 * keeps its master copy and optimizer state on r.  Every rank's update
 * then has, beside dp.c's AllReduce buckets of the other gradients,
 *   PS_PUSH (gradient span)  every rank pushes its gradient sum to r's PS
 *                            (comm/ps.c: r's service threads sum the
 *                            pushes in rank order, as an AllReduce does);
 *                            r pulls that sum into its gradient block, the
 *                            others zero their copy (it is not theirs);
 *   optimizer op             on r only (the row's filter drops it from the
 *                            others' plans);
 *   PS_PULL (param span)     r publishes the new value, the others pull it.
 * One PS handle per server rank, every rank a client of each.  Ids of a
 * handle: 2k is the gradient of its k-th parameter (pushed, summed), 2k+1
 * its value (published by the server, pulled).  Every wait is the PS's
 * (hg_ctl_cfg.ps_timeout_s) or comm's, and names the peer.  A GPU plan goes
 * through its host mirror (comm/ps.c sums host memory): what is pushed or
 * published is copied from the device first, what is pulled to it after. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "controller/ctl-impl.h"

struct server {
    int rank;
    struct hg_ps *ps;
    int n;               /* parameters it serves */
};

struct hg_psagg {
    struct hg_comm *comm;
    const struct hg_graph *g;
    int me;
    int np;              /* the graph's parameters */
    int *srv;            /* [np] index into s of each parameter's server, -1 */
    int *id;             /* [np] its index k among its server's parameters */
    uint64_t *pushed;    /* [np] pushes of its gradient so far (PS steps) */
    uint64_t *pulled;    /* [np] publications of its value so far */
    struct server *s;    /* [world], the first ns used: ascending ranks */
    int ns;
    int gpu;             /* a GPU plan: spans through the host mirror */
};

int hg__psagg_served(const struct hg_ctl_strategy *s, int i)
{
    return s && s->kind == HG_LAYOUT_DP && s->nps > 0 && s->agg_ps && i >= 0 &&
           i < s->nparams && s->agg_ps[i] >= 0;
}

/* A PS_PUSH node per served gradient (after the AllReduce nodes, before
 * hg_graph_optimizer) or, pull = 1, a PS_PULL node per served parameter
 * (after it); returns the number of nodes. */
static int add_nodes(struct hg_graph *g, const struct hg_ctl_strategy *s, int pull)
{
    int n = 0;
    enum hg_phase was = hg_graph_set_phase(g, HG_PH_UPDATE);
    for (int i = 0; i < hg_graph_n_params(g); i++) {
        int p = hg_graph_param_at(g, i), t = pull ? p : hg_graph_grad(g, p);
        if (!hg__psagg_served(s, i) || hg_graph_grad(g, p) < 0)
            continue;
        union hg_attr at = {.comm = {.group = 0, .peer = s->agg_ps[i], .tag = i}};
        hg_graph_comm_span(g, pull ? HG_OP_PS_PULL : HG_OP_PS_PUSH, t, t, &at);
        n++;
    }
    hg_graph_set_phase(g, was);
    return n;
}

/* The parameter index whose optimizer op node is, or -1. */
static int optim_param(const struct hg_graph *g, int node)
{
    const struct hg_node_info *nd = hg_graph_node(g, node);
    if (nd->phase != HG_PH_UPDATE || (hg_op_table[nd->op].flags & HG_OPF_COMM) ||
        nd->n_in < 1 || hg_graph_tensor(g, nd->in[0])->kind != HG_T_PARAM)
        return -1;
    for (int i = 0; i < hg_graph_n_params(g); i++)
        if (hg_graph_param_at(g, i) == nd->in[0])
            return i;
    return -1;
}

/* Drops from order[n] the optimizer ops of parameters served by another
 * rank than this one; returns the new n. */
static int mode_filter(const struct hg_ctl *c, const struct plan *p, int *order, int n)
{
    int m = 0, me = hg_comm_rank(c->comm);
    for (int k = 0; k < n; k++) {
        int i = optim_param(p->g, order[k]);
        if (i >= 0 && hg__psagg_served(c->s, i) && c->s->agg_ps[i] != me)
            continue;
        order[m++] = order[k];
    }
    return m;
}

/* The server's hook: a gradient id's master copy is the step's sum. */
static int apply_sum(void *arg, int id, uint64_t step, float *master, const float *sum,
                     size_t numel, char *err, size_t errlen)
{
    (void)arg, (void)step, (void)err, (void)errlen;
    if (id % 2 == 0)
        memcpy(master, sum, numel * sizeof(float));
    return 0;
}

static void ps_free(struct hg_psagg *ps)
{
    if (!ps)
        return;
    for (int k = 0; k < ps->ns; k++)
        hg_ps_free(ps->s[k].ps);
    free(ps->s);
    free(ps->srv);
    free(ps->id);
    free(ps->pushed);
    free(ps->pulled);
    free(ps);
}

/* The PS handles (one per server rank, every rank a client; every rank
 * calls it, in the same order).  NULL with err. */
static struct hg_psagg *ps_new(struct hg_comm *comm, const struct hg_graph *g,
                               struct hg_exec *ex, const struct hg_ctl_strategy *cs,
                               double timeout_s, char *err, size_t errlen)
{
    int np = hg_graph_n_params(g), world = hg_comm_world(comm);
    struct hg_psagg *ps = calloc(1, sizeof *ps);
    if (ps) {
        ps->srv = malloc((size_t)(np ? np : 1) * sizeof *ps->srv);
        ps->id = malloc((size_t)(np ? np : 1) * sizeof *ps->id);
        ps->pushed = calloc((size_t)(np ? np : 1), sizeof *ps->pushed);
        ps->pulled = calloc((size_t)(np ? np : 1), sizeof *ps->pulled);
        ps->s = calloc((size_t)world, sizeof *ps->s);
    }
    int *clients = malloc((size_t)world * sizeof *clients);    /* [world] */
    size_t *numel = malloc((size_t)(2 * np + 2) * sizeof *numel); /* [<= 2 np] */
    if (!ps || !ps->srv || !ps->id || !ps->pushed || !ps->pulled || !ps->s || !clients ||
        !numel) {
        hg_kerr(err, errlen, "out of memory");
        goto fail;
    }
    ps->comm = comm;
    ps->g = g;
    ps->gpu = hg_exec_device(ex) >= 0;
    ps->me = hg_comm_rank(comm);
    ps->np = np;
    for (int r = 0; r < world; r++)
        clients[r] = r;
    for (int i = 0; i < np; i++)
        if (hg__psagg_served(cs, i) && cs->agg_ps[i] >= world) {
            hg_kerr(err, errlen, "rank %d: parameter %d (%s) is served by rank %d, the job "
                    "has %d ranks", ps->me, i, hg_graph_tensor(g, hg_graph_param_at(g, i))->name,
                    cs->agg_ps[i], world);
            goto fail;
        }
    /* servers in ascending rank order, every rank the same */
    for (int r = 0; r < world; r++) {
        int n = 0;
        for (int i = 0; i < np; i++) {
            if (r == 0)
                ps->srv[i] = -1;
            int p = hg_graph_param_at(g, i);
            if (!hg__psagg_served(cs, i) || cs->agg_ps[i] != r || hg_graph_grad(g, p) < 0)
                continue;
            ps->srv[i] = ps->ns;
            ps->id[i] = n;
            numel[2 * n] = numel[2 * n + 1] =
                (size_t)hg_shape_numel(&hg_graph_tensor(g, p)->shape);
            n++;
        }
        if (n == 0)
            continue;
        struct hg_ps_config pc = {.server = r, .clients = clients, .nclients = world,
                                  .nparams = 2 * n, .numel = numel,
                                  .timeout_s = timeout_s > 0 ? timeout_s : 60,
                                  .apply = apply_sum};
        struct server *s = &ps->s[ps->ns];
        s->rank = r;
        s->n = n;
        if (hg_ps_new(&s->ps, comm, &pc, err, errlen) != 0)
            goto fail;
        ps->ns++;
    }
    free(clients);
    free(numel);
    return ps;
fail:
    free(clients);
    free(numel);
    ps_free(ps);
    return NULL;
}

/* The parameter index of a PS node (its tag) and its server. */
static int node_param(const struct hg_psagg *ps, int node, const struct server **s)
{
    int i = hg_graph_node(ps->g, node)->attr.comm.tag;
    HG_CHECK(i >= 0 && i < ps->np && ps->srv[i] >= 0);
    *s = &ps->s[ps->srv[i]];
    return i;
}

int hg__psagg_start(struct hg_psagg *ps, struct hg_exec *ex, int node, char *err,
                    size_t errlen)
{
    const struct server *s;
    int i = node_param(ps, node, &s);
    struct hg_exec_buf b;
    hg_exec_comm_buf(ex, node, &b);
    float *buf = b.host; /* [numel]: the gradient (push) or parameter (pull) */
    int push = hg_graph_node(ps->g, node)->op == HG_OP_PS_PUSH;
    /* what leaves this rank from the device first */
    if (ps->gpu && (push || s->rank == ps->me) &&
        hg_exec_comm_copy(ex, node, 1, err, errlen) != 0)
        return -1;
    if (push)
        return hg_ps_push(s->ps, 2 * ps->id[i], buf, ++ps->pushed[i], err, errlen);
    ps->pulled[i]++;
    if (s->rank == ps->me)
        return hg_ps_publish(s->ps, 2 * ps->id[i] + 1, buf, ps->pulled[i], err, errlen);
    if (hg_ps_pull(s->ps, 2 * ps->id[i] + 1, buf, ps->pulled[i], NULL, err, errlen) != 0)
        return -1;
    return ps->gpu ? hg_exec_comm_copy(ex, node, 0, err, errlen) : 0;
}

int hg__psagg_wait(struct hg_psagg *ps, struct hg_exec *ex, int node, char *err,
                   size_t errlen)
{
    const struct server *s;
    int i = node_param(ps, node, &s);
    if (hg_graph_node(ps->g, node)->op != HG_OP_PS_PUSH)
        return 0;
    struct hg_exec_buf b;
    hg_exec_comm_buf(ex, node, &b);
    float *buf = b.host; /* [numel] the gradient */
    if (s->rank != ps->me)
        memset(buf, 0, b.bytes); /* not ours: out of this rank's norm */
    else if (hg_ps_pull(s->ps, 2 * ps->id[i], buf, ps->pushed[i], NULL, err, errlen) != 0)
        return -1;
    return ps->gpu ? hg_exec_comm_copy(ex, node, 0, err, errlen) : 0;
}

/* Sum of squares of the (summed) gradients this rank serves. */
static double ps_sumsq(const struct hg_psagg *ps, struct hg_exec *ex)
{
    double sq = 0;
    for (int i = 0; i < ps->np; i++) {
        if (ps->srv[i] < 0 || ps->s[ps->srv[i]].rank != ps->me)
            continue;
        int t = hg_graph_grad(ps->g, hg_graph_param_at(ps->g, i));
        const float *x = hg_exec_data(ex, t); /* [numel] */
        int64_t n = hg_shape_numel(&hg_graph_tensor(ps->g, t)->shape);
        for (int64_t k = 0; k < n; k++)
            sq += (double)x[k] * x[k];
    }
    return sq;
}

/* hg_ctl_sync_state's work: the servers' optimizer state to every rank. */
static int ps_sync_state(struct hg_psagg *ps, struct hg_exec *ex, char *err, size_t errlen)
{
    /* the optimizer op of each served parameter names its state tensors
     * (a GPU plan: its host mirror travels) */
    if (hg_exec_download(ex, HG_R_STATE, err, errlen) != 0)
        return -1;
    int nn = hg_graph_n_nodes(ps->g);
    for (int v = 0; v < nn; v++) {
        int i = optim_param(ps->g, v);
        if (i < 0 || ps->srv[i] < 0 || ps->s[ps->srv[i]].rank == 0)
            continue;
        const struct hg_node_info *nd = hg_graph_node(ps->g, v);
        for (int k = 0; k < nd->n_in; k++) {
            const struct hg_tensor_info *ti = hg_graph_tensor(ps->g, nd->in[k]);
            if (ti->kind != HG_T_STATE)
                continue;
            void *x = hg_exec_data(ex, nd->in[k]); /* [numel] f32 */
            size_t bytes = (size_t)hg_shape_numel(&ti->shape) * sizeof(float);
            if (hg_comm_broadcast(ps->comm, x, bytes, ps->s[ps->srv[i]].rank, err,
                                  errlen) != 0)
                return -1;
        }
    }
    return hg_exec_upload(ex, HG_R_STATE, err, errlen);
}

/* The row: a DP-shaped strategy with parameter servers, beside the
 * AllReduce of the other gradients (dp.c runs the nodes' callbacks). */
static int mode_claims(const struct hg_ctl *c)
{
    return c->comm && c->s && c->s->kind == HG_LAYOUT_DP && c->s->nps > 0;
}

/* pushes after the buckets: the backward can no longer start them */
static int mode_aggregate(struct hg_ctl *c, struct plan *p, int *early)
{
    int npush = add_nodes(p->g, c->s, 0);
    *early = *early && npush == 0;
    return npush;
}

static int mode_finish(struct hg_ctl *c, struct plan *p) { return add_nodes(p->g, c->s, 1); }

static int mode_start(struct hg_ctl *c, struct plan *p, char *err, size_t errlen)
{
    c->ps = ps_new(c->comm, p->g, p->ex, c->s, c->cfg.ps_timeout_s, err, errlen);
    return c->ps ? 0 : -1;
}

static void mode_free(struct hg_ctl *c) { ps_free(c->ps); }

static int mode_sumsq(struct hg_ctl *c, double *own, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    *own = ps_sumsq(c->ps, c->train.ex);
    return 0;
}

static int mode_sync(struct hg_ctl *c, char *err, size_t errlen)
{
    return ps_sync_state(c->ps, c->train.ex, err, errlen);
}

/* a served parameter is its server's */
static int mode_owner(const struct hg_ctl *c, int i, int param)
{
    (void)param;
    return hg__psagg_served(c->s, i) ? c->s->agg_ps[i] : -1;
}

const struct hg__mode hg__mode_ps = {
    .name = "parameter server",
    .claims = mode_claims,
    .aggregate = mode_aggregate,
    .finish = mode_finish,
    .filter = mode_filter,
    .start = mode_start,
    .free = mode_free,
    .sumsq = mode_sumsq,
    .sync = mode_sync,
    .owner = mode_owner,
};
