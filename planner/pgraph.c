/* pgraph.c - the planner graph: a training graph's topology as the planner
 * sees it (ops with their inputs, consumers and output bytes; parameters,
 * their gradients and static bytes), on the cluster whose devices a
 * strategy names.  No prices: a strategy loads and lowers on it without a
 * cost table; price.c prices it for the simulator. */
#include <stdlib.h>
#include <string.h>

#include "planner/hg_planner.h"

static int64_t tbytes(const struct hg_tensor_info *t)
{
    return hg_shape_numel(&t->shape) * (int64_t)hg_dtype_size(t->dtype);
}

/* Each parameter's static bytes (pg->pstatic, zeroed first): itself, its
 * gradient and its optimizer state at g's shapes. */
static void statics(struct hg_pgraph *pg, const struct hg_graph *g)
{
    memset(pg->pstatic, 0, ((size_t)pg->ntensors + 1) * sizeof *pg->pstatic);
    for (int t = 0; t < pg->ntensors; t++) {
        const struct hg_tensor_info *ti = hg_graph_tensor(g, t);
        if (ti->kind == HG_T_PARAM)
            pg->pstatic[t] += tbytes(ti);
        else if (ti->kind == HG_T_GRAD && ti->grad_of >= 0)
            pg->pstatic[ti->grad_of] += tbytes(ti);
    }
    for (int n = 0; n < pg->nops; n++) {
        const struct hg_node_info *nd = hg_graph_node(g, n);
        if (nd->out >= 0 || nd->n_in < 1 ||
            hg_graph_tensor(g, nd->in[0])->kind != HG_T_PARAM)
            continue;
        /* optimizer state belongs to the updated param (input 0), counted
         * once: states are inputs of exactly one update op */
        for (int k = 1; k < nd->n_in; k++)
            if (hg_graph_tensor(g, nd->in[k])->kind == HG_T_STATE)
                pg->pstatic[nd->in[0]] += tbytes(hg_graph_tensor(g, nd->in[k]));
    }
}

/* The parameters in the graph's order, their gradients and the ops that
 * write them. */
static void params(struct hg_pgraph *pg, const struct hg_graph *g)
{
    pg->nparams = hg_graph_n_params(g);
    pg->param = malloc(((size_t)pg->nparams + 1) * sizeof(int));
    pg->param_grad = malloc(((size_t)pg->nparams + 1) * sizeof(int));
    pg->grad_op = malloc(((size_t)pg->nparams + 1) * sizeof(int));
    pg->upd_op = malloc(((size_t)pg->nparams + 1) * sizeof(int));
    int *pi = pg->param_idx = malloc(((size_t)pg->ntensors + 1) * sizeof(int)); /* [ntensors] */
    HG_CHECK(pg->param && pg->param_grad && pg->grad_op && pg->upd_op && pi);
    for (int t = 0; t < pg->ntensors; t++)
        pi[t] = -1;
    for (int i = 0; i < pg->nparams; i++) {
        int p = hg_graph_param_at(g, i);
        int gp = hg_graph_grad(g, p);
        pg->param[i] = p;
        pg->param_grad[i] = gp;
        pg->grad_op[i] = gp >= 0 ? hg_graph_tensor(g, gp)->producer : -1;
        pg->upd_op[i] = -1;
        pi[p] = i;
    }
    /* each parameter's update op and the ops reading the parameter: where
     * the updated value has to be (the lowering's transfers of it) */
    int *nr = calloc((size_t)pg->nops + 1, sizeof(int)); /* [nops] readers per update op */
    HG_CHECK(nr != NULL);
    for (int n = 0; n < pg->nops; n++) {
        struct hg_pop *o = &pg->ops[n];
        o->pidx = -1;
        if (o->out < 0 && o->phase == HG_PH_UPDATE && o->nin > 0 && pi[o->in[0].tensor] >= 0 &&
            pg->upd_op[pi[o->in[0].tensor]] < 0) {
            o->pidx = pi[o->in[0].tensor];
            pg->upd_op[o->pidx] = n;
        }
    }
    for (int pass = 0; pass < 2; pass++) {
        for (int n = 0; n < pg->nops; n++) {
            const struct hg_pop *o = &pg->ops[n];
            for (int k = 0; k < o->nparams && o->phase != HG_PH_UPDATE; k++) {
                int i = pi[o->params[k]], u = i >= 0 ? pg->upd_op[i] : -1;
                if (u >= 0 && pass == 0)
                    nr[u]++;
                else if (u >= 0)
                    pg->ops[u].preaders[pg->ops[u].npreaders++] = n;
            }
        }
        for (int u = 0; u < pg->nops && pass == 0; u++) {
            pg->ops[u].preaders = malloc(((size_t)nr[u] + 1) * sizeof(int));
            HG_CHECK(pg->ops[u].preaders != NULL);
        }
    }
    free(nr);
}

int hg_pgraph_build(struct hg_pgraph **out, const struct hg_graph *g,
                    const struct hg_cluster *c, const char *model, int64_t batch,
                    char *err, size_t errlen)
{
    *out = NULL;
    if (c->ndev > HG_PLAN_MAXDEV)
        return hg_kerr(err, errlen, "cluster %s: %d devices, the planner handles %d", c->name,
                       c->ndev, HG_PLAN_MAXDEV);
    if (batch < 1)
        return hg_kerr(err, errlen, "graph %s: batch %lld: expected at least 1 sample",
                       model ? model : "graph", (long long)batch);
    struct hg_pgraph *pg = calloc(1, sizeof(*pg));
    HG_CHECK(pg != NULL);
    snprintf(pg->model, sizeof(pg->model), "%s", model ? model : "graph");
    pg->batch = batch;
    pg->c = c;
    pg->nops = hg_graph_n_nodes(g);
    pg->ndev = c->ndev;
    pg->ntensors = hg_graph_n_tensors(g);
    pg->ops = calloc((size_t)pg->nops + 1, sizeof(struct hg_pop));
    pg->pstatic = calloc((size_t)pg->ntensors + 1, sizeof(int64_t));
    pg->shape = calloc((size_t)pg->ntensors + 1, sizeof(struct hg_shape));
    pg->tkind = calloc((size_t)pg->ntensors + 1, 1);
    pg->tvary = calloc((size_t)pg->ntensors + 1, 1);
    int *ncons = calloc((size_t)pg->nops + 1, sizeof(int)); /* [nops] */
    HG_CHECK(pg->ops && pg->pstatic && pg->shape && pg->tkind && pg->tvary && ncons);
    hg_graph_varying(g, pg->tvary); /* all 0 when a rule refuses: nothing more is known */
    for (int t = 0; t < pg->ntensors; t++) {
        const struct hg_tensor_info *ti = hg_graph_tensor(g, t);
        pg->shape[t] = ti->shape;
        pg->tkind[t] = (unsigned char)ti->kind;
        if (ti->kind == HG_T_INPUT)
            pg->input_bytes += tbytes(ti);
    }
    statics(pg, g);
    for (int n = 0; n < pg->nops; n++) {
        const struct hg_node_info *nd = hg_graph_node(g, n);
        struct hg_pop *o = &pg->ops[n];
        o->kind = nd->op;
        o->phase = nd->phase;
        o->origin = hg_graph_node_origin(g, n, NULL);
        o->nin = nd->n_in;
        o->out = nd->out;
        if (nd->op == HG_OP_MATMUL) {
            o->trans_a = nd->attr.mm.trans_a;
            o->trans_b = nd->attr.mm.trans_b;
        }
        o->params = calloc((size_t)nd->n_in + 1, sizeof(int));
        HG_CHECK(o->params != NULL);
        for (int k = 0; k < nd->n_in; k++) {
            const struct hg_tensor_info *ti = hg_graph_tensor(g, nd->in[k]);
            o->in[k].tensor = nd->in[k];
            o->in[k].op = ti->producer;
            o->in[k].bytes = o->in[k].mem = tbytes(ti);
            o->in[k].batch = ti->batch_axis >= 0 &&
                             (ti->kind == HG_T_ACT || ti->kind == HG_T_INPUT);
            o->batch |= o->in[k].batch;
            if (ti->kind == HG_T_PARAM)
                o->params[o->nparams++] = nd->in[k];
            if (ti->producer >= 0) {
                int dup = 0;
                for (int j = 0; j < k; j++)
                    dup |= o->in[j].op == ti->producer;
                if (!dup)
                    ncons[ti->producer]++;
            }
        }
        if (nd->out >= 0) {
            const struct hg_tensor_info *to = hg_graph_tensor(g, nd->out);
            o->out_bytes = o->out_mem = tbytes(to);
            o->out_batch = to->batch_axis >= 0 && to->kind == HG_T_ACT;
            o->out_grad = to->kind == HG_T_GRAD;
            o->batch |= o->out_batch;
        }
    }
    for (int n = 0; n < pg->nops; n++) {
        pg->ops[n].cons = malloc((size_t)(ncons[n] + 1) * sizeof(int));
        HG_CHECK(pg->ops[n].cons != NULL);
    }
    for (int n = 0; n < pg->nops; n++) {
        struct hg_pop *o = &pg->ops[n];
        for (int k = 0; k < o->nin; k++) {
            int p = o->in[k].op;
            if (p < 0)
                continue;
            int dup = 0;
            for (int j = 0; j < k; j++)
                dup |= o->in[j].op == p;
            if (!dup)
                pg->ops[p].cons[pg->ops[p].ncons++] = n;
        }
    }
    free(ncons);
    params(pg, g);
    *out = pg;
    return 0;
}

int hg_pgraph_memory_from(struct hg_pgraph *pg, const struct hg_graph *gm, char *err,
                          size_t errlen)
{
    if (hg_graph_n_nodes(gm) != pg->nops || hg_graph_n_tensors(gm) != pg->ntensors)
        return hg_kerr(err, errlen, "graph %s: the memory graph has %d ops and %d tensors, "
                       "the planned one %d and %d", pg->model, hg_graph_n_nodes(gm),
                       hg_graph_n_tensors(gm), pg->nops, pg->ntensors);
    for (int n = 0; n < pg->nops; n++) {
        const struct hg_node_info *nd = hg_graph_node(gm, n);
        struct hg_pop *o = &pg->ops[n];
        int same = nd->op == o->kind && nd->n_in == o->nin && nd->out == o->out;
        for (int k = 0; k < o->nin && same; k++)
            same = nd->in[k] == o->in[k].tensor;
        if (!same)
            return hg_kerr(err, errlen, "graph %s: op %d (%s) differs in the memory graph",
                           pg->model, n, hg_op_table[o->kind].name);
        for (int k = 0; k < o->nin; k++)
            o->in[k].mem = tbytes(hg_graph_tensor(gm, nd->in[k]));
        if (nd->out >= 0)
            o->out_mem = tbytes(hg_graph_tensor(gm, nd->out));
    }
    statics(pg, gm);
    return 0;
}

void hg_pgraph_free(struct hg_pgraph *pg)
{
    if (!pg)
        return;
    for (int n = 0; n < pg->nops; n++) {
        free(pg->ops[n].cons);
        free(pg->ops[n].params);
        free(pg->ops[n].preaders);
    }
    free(pg->ops);
    free(pg->pstatic);
    free(pg->shape);
    free(pg->tkind);
    free(pg->tvary);
    free(pg->param);
    free(pg->param_grad);
    free(pg->grad_op);
    free(pg->upd_op);
    free(pg->param_idx);
    free(pg);
}
