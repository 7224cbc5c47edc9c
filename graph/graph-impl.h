/* graph-impl.h - private to graph/: the graph's records. */
#ifndef HG_GRAPH_IMPL_H
#define HG_GRAPH_IMPL_H

#include "graph/hg_graph.h"


struct hg_trec {
    struct hg_tensor_info info;
    char *name;            /* owned; info.name points here */
    enum hg_init init;     /* params */
    float init_scale;
    float const_value;     /* HG_T_CONST */
    int keep;              /* live until the end of a run */
    int grad;              /* params: gradient tensor, -1 if none */
    int like;              /* a RECV output: the tensor whose shape it takes
                              at every resolve (hg_graph_recv_like), else -1 */
};

struct hg_graph {
    struct hg_trec *t; /* [nt] */
    int nt, ct;
    struct hg_node_info *n; /* [nn] */
    int nn, cn;
    struct {
        char name[32];
        int64_t max, cur;
        int64_t def;   /* the values a NULL symbol array means */
        int capped;    /* a length under the token cap */
    } sym[HG_MAX_SYMS];
    int nsym;
    int cap_batch;     /* -1: no token cap */
    int64_t cap;       /* batch x each capped length <= cap */
    int *params; /* [np] tensor ids in declaration order */
    int np, cp;
    enum hg_phase phase; /* phase of appended nodes */
    int fused_attention; /* attention layers: one ATTENTION op (1) or the chain */
    int has_backward, has_optimizer;
    int *origin;       /* [norigin] hg_graph_node_origin's answer per node
                          (hg_graph_backward): v, -2 - v (an accumulating
                          ADD), -1 */
    int *acct;         /* [norigin] an accumulating ADD's tensor (the one
                          whose gradient it sums), else -1 */
    int norigin;
    int *rsrc;         /* [nrsrc] the forward node a recomputing copy
                          copies (hg_graph_recompute), else -1 */
    int nrsrc;
};

/* Adds a tensor record; returns its id. */
int hg__graph_tensor(struct hg_graph *g, const char *name, enum hg_tkind kind,
                     enum hg_dtype dt, const struct hg_shape *decl,
                     int batch_axis);

/* One-line op appends used by autodiff and layers. */
static inline int hg__op1(struct hg_graph *g, enum hg_op op, int a,
                          const union hg_attr *at)
{
    return hg_graph_op(g, op, &a, 1, at);
}

static inline int hg__op2(struct hg_graph *g, enum hg_op op, int a, int b,
                          const union hg_attr *at)
{
    int in[2] = {a, b};
    return hg_graph_op(g, op, in, 2, at);
}

static inline int hg__op3(struct hg_graph *g, enum hg_op op, int a, int b,
                          int c, const union hg_attr *at)
{
    int in[3] = {a, b, c};
    return hg_graph_op(g, op, in, 3, at);
}

/* Whether nd's output can be a view of its first input's bytes at the
 * current shapes: both activations of one dtype, and the op a reshape, or
 * a slice with nothing but 1s before its axis (one contiguous run, at
 * start x the elements after the axis).  At the maximum shapes, where the
 * plan is made, a 1 stays 1 (or 0) at every smaller point. */
static inline int hg__node_view(const struct hg_graph *g, const struct hg_node_info *nd)
{
    if (nd->out < 0 || nd->n_in < 1)
        return 0;
    const struct hg_tensor_info *x = &g->t[nd->in[0]].info, *y = &g->t[nd->out].info;
    if (x->kind != HG_T_ACT || y->kind != HG_T_ACT || x->dtype != y->dtype)
        return 0;
    if (nd->op == HG_OP_RESHAPE || nd->op == HG_OP_RESHAPE_LIKE)
        return 1;
    if (nd->op != HG_OP_SLICE)
        return 0;
    int ax = nd->attr.slice.axis < 0 ? nd->attr.slice.axis + x->shape.ndim : nd->attr.slice.axis;
    for (int i = 0; i < ax; i++)
        if (x->shape.dim[i] != 1)
            return 0;
    return 1;
}

/* Where view node nd's output starts in its input's bytes at the current
 * shapes: a slice's start x the bytes after its axis, a reshape's 0. */
static inline size_t hg__view_at(const struct hg_graph *g, const struct hg_node_info *nd)
{
    if (nd->op != HG_OP_SLICE)
        return 0;
    const struct hg_tensor_info *x = &g->t[nd->in[0]].info;
    int ax = nd->attr.slice.axis < 0 ? nd->attr.slice.axis + x->shape.ndim : nd->attr.slice.axis;
    int64_t inner = 1;
    for (int d = 0; d < x->shape.ndim; d++) {
        if (d < ax) /* 1s before the axis (hg__node_view at the plan's maxima), or empty */
            HG_CHECK(x->shape.dim[d] <= 1);
        else if (d > ax)
            inner *= x->shape.dim[d];
    }
    return (size_t)(nd->attr.slice.start * inner) * hg_dtype_size(x->dtype);
}

/* Liveness plan of the HG_T_ACT tensors for a node order at the current
 * (maximum) shapes: off[t] for every ACT tensor used by the order, the arena
 * size with reuse, and the size without reuse. Other tensors get SIZE_MAX.
 * view[t]: the tensor whose bytes t views (hg__node_view), else -1; a
 * view's off is its root's, the caller adds where in them it starts. */
/* bytes: [nt] planned size of each tensor, or NULL (the current shapes). */
void hg__memplan(const struct hg_graph *g, const int *order, int n, const size_t *bytes,
                 size_t *off, int *view, size_t *arena, size_t *naive);

#define HG_ALIGN 64
static inline size_t hg__align(size_t n)
{
    return (n + HG_ALIGN - 1) & ~(size_t)(HG_ALIGN - 1);
}

#endif
