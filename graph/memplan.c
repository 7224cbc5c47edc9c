/* memplan.c - static memory plan from liveness (greedy by size).
 *
 * Every activation gets an offset in one arena, computed once for the
 * maximum symbol values, so smaller batches fit the same plan and the
 * training loop never allocates. Two tensors may share bytes only if their
 * live ranges [producer position, last reader position] do not meet; an
 * op's output never aliases its inputs because both are live at that op.
 *
 * The one exception is a view: RESHAPE and RESHAPE_LIKE of an activation
 * change the shape, not the bytes, and a SLICE with only 1s before its
 * axis is one contiguous run of them, so their output is placed on their
 * input's bytes (the copy kernels then have nothing to do), and the bytes
 * stay live until the last reader of any view.  Activations are written
 * only by their producer, so sharing bytes between views is safe.
 */
#include <stdint.h>
#include <stdlib.h>

#include "graph/graph-impl.h"

struct live {
    int t;
    int first, last; /* positions in the order */
    size_t size;
    size_t off;
};

static int by_size_desc(const void *a, const void *b)
{
    const struct live *x = a, *y = b;
    if (x->size != y->size)
        return x->size < y->size ? 1 : -1;
    return x->first - y->first; /* deterministic ties */
}

static int by_off(const void *a, const void *b)
{
    const struct live *const *x = a, *const *y = b;
    return (*x)->off < (*y)->off ? -1 : (*x)->off > (*y)->off;
}

void hg__memplan(const struct hg_graph *g, const int *order, int n, const size_t *bytes,
                 size_t *off, int *view, size_t *arena, size_t *naive)
{
    int nt = g->nt;
    int *first = malloc((size_t)nt * sizeof(int));
    int *last = malloc((size_t)nt * sizeof(int));
    int *root = malloc((size_t)nt * sizeof(int)); /* [nt] the tensor whose bytes t uses */
    HG_CHECK(first && last && root);
    for (int t = 0; t < nt; t++) {
        first[t] = last[t] = -1;
        off[t] = SIZE_MAX;
        root[t] = t;
        view[t] = -1;
    }
    for (int i = 0; i < n; i++) {
        const struct hg_node_info *nd = &g->n[order[i]];
        if (hg__node_view(g, nd)) {
            root[nd->out] = root[nd->in[0]]; /* the input's root: produced earlier */
            view[nd->out] = nd->in[0];
        }
        /* a view's readers keep its root's bytes live */
        for (int k = 0; k < nd->n_in; k++)
            last[nd->in[k]] = last[root[nd->in[k]]] = i;
        if (nd->out >= 0 && g->t[nd->out].info.kind == HG_T_ACT) {
            first[nd->out] = i;
            if (last[nd->out] < i)
                last[nd->out] = i;
            if (last[root[nd->out]] < i)
                last[root[nd->out]] = i;
        }
    }
    /* a kept or unread view keeps its root to the end */
    for (int t = 0; t < nt; t++)
        if (root[t] != t && first[t] >= 0 && (g->t[t].keep || last[t] == first[t]))
            last[root[t]] = n;
    int nl = 0;
    struct live *lv = malloc((size_t)nt * sizeof(*lv));
    HG_CHECK(lv != NULL);
    *naive = 0;
    for (int t = 0; t < nt; t++) {
        if (g->t[t].info.kind != HG_T_ACT || root[t] != t)
            continue;
        if (first[t] < 0) {
            /* read before being produced in this order: a bug in the order */
            HG_CHECK(last[t] < 0);
            continue;
        }
        const struct hg_tensor_info *ti = &g->t[t].info;
        int unread = last[t] == first[t];
        lv[nl].t = t;
        lv[nl].first = first[t];
        /* kept and unread tensors are results: live to the end */
        lv[nl].last = (g->t[t].keep || unread || last[t] == n) ? n : last[t];
        lv[nl].size = hg__align(bytes ? bytes[t]
                                      : (size_t)hg_shape_numel(&ti->shape) *
                                            hg_dtype_size(ti->dtype));
        *naive += lv[nl].size;
        nl++;
    }
    qsort(lv, (size_t)nl, sizeof(*lv), by_size_desc);

    /* Place each tensor at the lowest offset free during its live range. */
    struct live **placed = malloc((size_t)(nl ? nl : 1) * sizeof(*placed));
    HG_CHECK(placed != NULL);
    size_t top = 0;
    for (int i = 0; i < nl; i++) {
        int np = 0;
        for (int j = 0; j < i; j++)
            if (lv[j].first <= lv[i].last && lv[i].first <= lv[j].last)
                placed[np++] = &lv[j];
        qsort(placed, (size_t)np, sizeof(*placed), by_off);
        size_t o = 0;
        for (int j = 0; j < np; j++) {
            if (placed[j]->off >= o + lv[i].size)
                break; /* the gap before placed[j] fits */
            if (placed[j]->off + placed[j]->size > o)
                o = placed[j]->off + placed[j]->size;
        }
        lv[i].off = o;
        if (o + lv[i].size > top)
            top = o + lv[i].size;
        off[lv[i].t] = o;
    }
    *arena = top;
    for (int t = 0; t < nt; t++) /* views: their root's bytes */
        if (root[t] != t && first[t] >= 0) {
            HG_CHECK(bytes ? bytes[t] <= bytes[root[t]] : 1);
            off[t] = off[root[t]];
        }
    free(placed);
    free(lv);
    free(first);
    free(last);
    free(root);
}
