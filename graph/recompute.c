/* recompute.c - recomputation (activation checkpointing, HeteroG's and
 * the simulator's "recompute" of an op group): a forward op's copy is
 * appended to the backward and the backward reads the copy, so the
 * original output dies with its last forward reader and the copy lives
 * from just before its first backward reader (hg_graph_order_recompute
 * puts it there).  The copy runs the same kernel on the same inputs with
 * the same attributes (dropout: the same seed and step), so its output is
 * the original's bit for bit and a run gives what it gives without. */
#include <stdlib.h>
#include <string.h>

#include "graph/graph-impl.h"

int hg_graph_recompute(struct hg_graph *g, const int *nodes, int n, char *err,
                       size_t errlen)
{
    HG_CHECK(g->has_backward);
    int nn = g->nn, rc = -1, made = 0;
    unsigned char *mark = calloc((size_t)nn + 1, 1); /* [nn] asked for */
    unsigned char *need = calloc((size_t)nn + 1, 1); /* [nn] a copy is read */
    int *copy = malloc(((size_t)g->nt + 1) * sizeof *copy); /* [nt] copy of tensor, -1 */
    if (!mark || !need || !copy) {
        hg_kerr(err, errlen, "out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++) {
        int v = nodes[i];
        const struct hg_node_info *nd = v >= 0 && v < nn ? &g->n[v] : NULL;
        if (!nd) {
            hg_kerr(err, errlen, "recomputation: node %d of a graph of %d", v, nn);
            goto done;
        }
        if (nd->phase != HG_PH_FORWARD || nd->out < 0 ||
            (hg_op_table[nd->op].flags & HG_OPF_COMM)) {
            hg_kerr(err, errlen, "recomputation: node %d (%s) is not a forward op with an "
                    "output", v, hg_op_table[nd->op].name);
            goto done;
        }
        mark[v] = 1;
    }
    /* a copy is needed when a backward node or a needed copy reads the
     * output (readers come after producers in id order) */
    for (int w = nn - 1; w >= 0; w--) {
        const struct hg_node_info *nd = &g->n[w];
        if (nd->phase != HG_PH_BACKWARD && !need[w])
            continue;
        for (int k = 0; k < nd->n_in; k++) {
            int p = g->t[nd->in[k]].info.producer;
            if (p >= 0 && p < nn && mark[p])
                need[p] = 1;
        }
    }
    for (int t = 0; t < g->nt; t++)
        copy[t] = -1;
    enum hg_phase was = g->phase;
    g->phase = HG_PH_BACKWARD;
    for (int v = 0; v < nn; v++) {
        if (!need[v])
            continue;
        struct hg_node_info nd = g->n[v]; /* copy: appending may move g->n */
        for (int k = 0; k < nd.n_in; k++)
            if (copy[nd.in[k]] >= 0)
                nd.in[k] = copy[nd.in[k]];
        int w = g->nn;
        copy[nd.out] = hg_graph_op(g, nd.op, nd.in, nd.n_in, &nd.attr);
        /* its shape is the original's at every resolve: the backward,
         * earlier in id order, reads it (resolve goes in id order) */
        g->t[copy[nd.out]].like = nd.out;
        g->rsrc = realloc(g->rsrc, (size_t)g->nn * sizeof *g->rsrc);
        HG_CHECK(g->rsrc != NULL);
        for (int u = g->nrsrc; u < g->nn; u++)
            g->rsrc[u] = -1;
        g->nrsrc = g->nn;
        g->rsrc[w] = v;
        made++;
    }
    g->phase = was;
    /* the backward reads the copies */
    for (int w = 0; w < nn; w++) {
        struct hg_node_info *nd = &g->n[w];
        if (nd->phase != HG_PH_BACKWARD)
            continue;
        for (int k = 0; k < nd->n_in; k++)
            if (copy[nd->in[k]] >= 0)
                nd->in[k] = copy[nd->in[k]];
    }
    rc = made;
done:
    free(mark);
    free(need);
    free(copy);
    return rc;
}

int hg_graph_node_recomputes(const struct hg_graph *g, int node)
{
    HG_CHECK(node >= 0 && node < g->nn);
    return node < g->nrsrc ? g->rsrc[node] : -1;
}

/* Emits copy c (after the copies of the order it reads) unless it is out
 * already. */
static void emit(const struct hg_graph *g, int c, const unsigned char *here,
                 unsigned char *done, int *out, int *n)
{
    if (done[c] || !here[c])
        return;
    done[c] = 1;
    const struct hg_node_info *nd = &g->n[c];
    for (int k = 0; k < nd->n_in; k++) {
        int p = g->t[nd->in[k]].info.producer;
        if (p >= 0)
            emit(g, p, here, done, out, n);
    }
    out[(*n)++] = c;
}

int hg_graph_order_recompute(const struct hg_graph *g, int *order, int n)
{
    if (g->nrsrc == 0)
        return 0;
    int *in = malloc(((size_t)n + 1) * sizeof *in);          /* [n] the order given */
    unsigned char *done = calloc((size_t)g->nn + 1, 1);       /* [nn] copy emitted */
    unsigned char *here = calloc((size_t)g->nn + 1, 1);       /* [nn] copy in the order */
    if (!in || !done || !here) {
        free(in);
        free(done);
        free(here);
        return -1;
    }
    memcpy(in, order, (size_t)n * sizeof *in);
    for (int i = 0; i < n; i++)
        if (hg_graph_node_recomputes(g, in[i]) >= 0)
            here[in[i]] = 1;
    int m = 0, upd = 0;
    for (int i = 0; i < n; i++) {
        int w = in[i];
        if (here[w])
            continue;
        if (!upd && g->n[w].phase == HG_PH_UPDATE) {
            /* the copies no forward/backward node here reads (their
             * readers run elsewhere) before the update */
            upd = 1;
            for (int j = 0; j < n; j++)
                if (here[in[j]])
                    emit(g, in[j], here, done, order, &m);
        }
        const struct hg_node_info *nd = &g->n[w];
        for (int k = 0; k < nd->n_in; k++) {
            int p = g->t[nd->in[k]].info.producer;
            if (p >= 0)
                emit(g, p, here, done, order, &m);
        }
        order[m++] = w;
    }
    for (int j = 0; j < n && !upd; j++)
        if (here[in[j]])
            emit(g, in[j], here, done, order, &m);
    HG_CHECK(m == n);
    free(in);
    free(done);
    free(here);
    return 0;
}
