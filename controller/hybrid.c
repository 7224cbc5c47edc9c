/* hybrid.c - strategies whose op groups split the batch differently (model-
 * parallel groups beside data-parallel ones, replica counts that differ from
 * group to group): HeteroG's graph compiler on the model-parallel runtime.
 *
 * The lowering gives every op its devices and their rows of the planned
 * batch.  The union of all those row bounds cuts the batch into pieces, and
 * every op computes each piece on exactly one device.  So each rank builds
 * the same split graph: the task's forward copied once per piece (its
 * inputs are the pieces' rows of the task's inputs, copied in after fill();
 * ops that read no batch input, e.g. on parameters only, stay one), the
 * loss the sum of the pieces' losses; then backward and optimizer as
 * always, so every parameter's gradient is the sum over the pieces (an ADD
 * per further piece, autodiff's accumulation).  Every node of that graph
 * gets the rank of its op's piece (a backward node: the strategy's place
 * of the original backward node it corresponds to, hg_graph_node_origin;
 * an optimizer op: its parameter's owner), and mp.c runs it: each rank its
 * nodes, SEND/RECV where a tensor crosses ranks.  The original forward
 * nodes stay in the graph and run nowhere.
 *
 * A parameter the strategy all-reduces (hg_ctl_strategy.param_ar) whose partial
 * gradients several ranks compute is held by each of them: each sums its
 * own pieces' partials, the members all-reduce these sums over a group of
 * their own (a sub-communicator per replica set, mp.c), then each updates
 * its own copy; autodiff's chain runs nowhere and the parameter never
 * travels (allreduce_sums).
 *
 * The sums over the batch (loss, weight gradients) are the pieces' sums
 * added, so a run equals one rank within float rounding; so do dropout's
 * masks, keyed by each row's sample id (the graph's HG_SAMPLE_IDS input). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/ctl-impl.h"

struct hg_hyb {
    int np;              /* pieces */
    int nf;              /* the task's forward nodes (the originals) */
    int nn;              /* nodes when hyb_split returned */
    int64_t plan_batch;  /* the strategy's piece[npieces] */
    int64_t *piece;      /* [np + 1] the strategy's piece */
    int bsym;            /* the task's batch symbol (index) */
    int psym[HG_MAX_SYMS]; /* [np] each piece's batch symbol (index) */
    int nin;             /* inputs split into pieces */
    int *in;             /* [nin] the task's input */
    int *pin;            /* [nin][np] its pieces' inputs */
    int *clone;          /* [nf][np] node of piece p's copy of node v, -1: not
                            copied (reads no batch input) */
    int *dev;            /* [nn] the rank of each node before the backward: a
                            copy's piece's, a node of the task's that reads
                            no batch input its piece 0's, a copied one -1
                            (runs nowhere) */
    int *orig, *opiece;  /* [nn] a copy's node of the task's and piece; -1, 0 */
    int lossop;          /* the task's loss op */
    int *op_rank;        /* [nodes after the optimizer] hyb_ranks' */
    int64_t *key;        /* [same] its place in the strategy's order: position
                            of the node of the task's graph it stands for x
                            (np + 1) + piece */
    int *seq;            /* [forward + backward nodes] hyb_ranks' order */
    int nseq;
    int nar;             /* parameters all-reduced (allreduce_sums) */
    int nrep;            /* parameters updated on several ranks (replicate_updates) */
    uint64_t *grp;       /* [ngrp] their groups' members (rank masks):
                            ALLREDUCE nodes of group k + 1 */
    int ngrp;
};

/* The rows [r[p], r[p + 1]) of piece p in a global batch of B >= np: the
 * planned bounds scaled, each piece kept at one row at least (a graph's
 * symbols are >= 1). */
static void rows(const struct hg_hyb *h, int64_t B, int64_t *r)
{
    int np = h->np;
    for (int p = 0; p <= np; p++)
        r[p] = h->piece[p] * B / h->plan_batch;
    for (int p = 1; p < np; p++)
        if (r[p] < r[p - 1] + 1)
            r[p] = r[p - 1] + 1;
    for (int p = np - 1; p > 0; p--)
        if (r[p] > r[p + 1] - 1)
            r[p] = r[p + 1] - 1;
}


/* The nodes of the split graph standing for the task's nodes v[n] (their
 * copies per piece, or themselves) into out[n * pieces]; returns how many. */
static int hyb_nodes(const struct hg_hyb *h, const int *v, int n, int *out)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        HG_CHECK(v[i] >= 0 && v[i] < h->nf);
        const int *c = &h->clone[(size_t)v[i] * (size_t)h->np];
        if (c[0] < 0)
            out[k++] = v[i];
        for (int p = 0; p < h->np && c[0] >= 0; p++)
            out[k++] = c[p];
    }
    return k;
}

/* A copied op that would mix the pieces' rows: -1 with err. */
static int splittable(const struct hg_graph *g, int v, const unsigned char *bdep, char *err,
                      size_t errlen)
{
    const struct hg_node_info *nd = hg_graph_node(g, v);
    const struct hg_tensor_info *x = hg_graph_tensor(g, nd->in[0]);
    int ax = x->batch_axis;
    int mixes = 0;
    if (!bdep[nd->in[0]] || ax < 0)
        return 0;
    if (nd->op == HG_OP_MEAN)
        mixes = nd->attr.reduce.axis == ax || nd->attr.reduce.axis == HG_AXIS_ALL;
    else if (nd->op == HG_OP_CONCAT)
        mixes = nd->attr.concat.axis == ax;
    else if (nd->op == HG_OP_SLICE)
        mixes = nd->attr.slice.axis == ax;
    if (mixes)
        return hg_kerr(err, errlen, "a strategy splitting the batch: op %d (%s) works across "
                       "the batch axis of %s, so its pieces cannot be computed apart", v,
                       hg_op_table[nd->op].name, x->name);
    return 0;
}

static void hyb_free(struct hg_hyb *h)
{
    if (!h)
        return;
    free(h->piece);
    free(h->in);
    free(h->pin);
    free(h->clone);
    free(h->dev);
    free(h->orig);
    free(h->opiece);
    free(h->op_rank);
    free(h->key);
    free(h->seq);
    free(h->grp);
    free(h);
}

/* The pieces' batch symbols (at most their share of the largest batch)
 * and inputs (the task's inputs with a batch axis, rows cut; bdep[t] 1
 * for those, map[t][p] piece p's); -1 with err. */
static int split_inputs(struct hg_graph *g, struct hg_hyb *h, int nt0, unsigned char *bdep,
                        int *map, char *err, size_t errlen)
{
    int np = h->np;
    int64_t bmax = hg_graph_sym_max(g, h->bsym);
    for (int p = 0; p < np; p++) {
        int64_t len = h->piece[p + 1] - h->piece[p];
        int64_t mx = (len * bmax + h->plan_batch - 1) / h->plan_batch + 1;
        char name[32];
        snprintf(name, sizeof name, "batch.p%d", p);
        h->psym[p] = HG_SYM_INDEX(hg_graph_sym(g, name, mx < bmax ? mx : bmax));
    }
    for (int t = 0; t < nt0; t++) {
        const struct hg_tensor_info *ti = hg_graph_tensor(g, t);
        if (ti->kind != HG_T_INPUT || ti->batch_axis < 0)
            continue;
        if (ti->batch_axis != 0 || ti->decl.dim[0] != HG_SYM(h->bsym))
            return hg_kerr(err, errlen, "a strategy splitting the batch: input %s has its "
                           "batch on axis %d, not as the leading \"batch\" dimension",
                           ti->name, ti->batch_axis);
        bdep[t] = 1;
        h->in[h->nin] = t;
        for (int p = 0; p < np; p++) {
            ti = hg_graph_tensor(g, t); /* may move as tensors are added */
            struct hg_shape d = ti->decl;
            d.dim[0] = HG_SYM(h->psym[p]);
            char name[160];
            snprintf(name, sizeof name, "%s.p%d", ti->name, p);
            int x = hg_graph_input(g, name, ti->dtype, d.ndim, d.dim, 0);
            h->pin[(size_t)h->nin * (size_t)np + (size_t)p] = x;
            map[(size_t)t * (size_t)np + (size_t)p] = x;
        }
        h->nin++;
    }
    return 0;
}

/* Each forward node that reads a batch input, once per piece (h->clone,
 * map and bdep extended to their outputs); -1 with err. */
static int split_forward(struct hg_graph *g, struct hg_hyb *h, unsigned char *bdep, int *map,
                         char *err, size_t errlen)
{
    int np = h->np;
    for (int v = 0; v < h->nf; v++) {
        const struct hg_node_info nd = *hg_graph_node(g, v);
        int dep = 0;
        for (int k = 0; k < nd.n_in; k++)
            dep |= bdep[nd.in[k]];
        for (int p = 0; p < np; p++)
            h->clone[(size_t)v * (size_t)np + (size_t)p] = -1;
        if (!dep)
            continue;
        if (nd.out < 0)
            return hg_kerr(err, errlen, "a strategy splitting the batch: forward op %d (%s) "
                           "has no output", v, hg_op_table[nd.op].name);
        if (splittable(g, v, bdep, err, errlen) != 0)
            return -1;
        bdep[nd.out] = 1;
        for (int p = 0; p < np; p++) {
            int in[HG_MAX_INPUTS];
            for (int k = 0; k < nd.n_in; k++) {
                int c = map[(size_t)nd.in[k] * (size_t)np + (size_t)p];
                in[k] = c >= 0 ? c : nd.in[k];
            }
            /* dropout: a piece's rows keep their masks, keyed by their
             * sample ids (an input cut into pieces as the others) */
            union hg_attr at = nd.attr;
            h->clone[(size_t)v * (size_t)np + (size_t)p] = hg_graph_n_nodes(g);
            map[(size_t)nd.out * (size_t)np + (size_t)p] =
                hg_graph_op(g, nd.op, in, nd.n_in, &at);
        }
    }
    return 0;
}

/* The loss (and the NLL) of the batch: the pieces' sums added (m's loss
 * and nll set to them; the task's loss into *loss); -1 with err. */
static int split_sums(struct hg_graph *g, struct hg_hyb *h, struct hg_task_model *m, int nt0,
                      const unsigned char *bdep, const int *map, int *loss, char *err,
                      size_t errlen)
{
    int np = h->np;
    int sums[2] = {m->loss, m->nll}, ns = m->nll >= 0 && m->nll != m->loss ? 2 : 1;
    *loss = sums[0];
    for (int i = 0; i < ns; i++) {
        int t = sums[i];
        if (t < 0 || t >= nt0 || !bdep[t])
            return hg_kerr(err, errlen, "a strategy splitting the batch: the task's %s does "
                           "not depend on the batch", i ? "NLL" : "loss");
        int s = map[(size_t)t * (size_t)np];
        for (int p = 1; p < np; p++) {
            int in[2] = {s, map[(size_t)t * (size_t)np + (size_t)p]};
            s = hg_graph_op(g, HG_OP_ADD, in, 2, NULL);
        }
        if (i == 0)
            m->loss = s;
        else
            m->nll = s;
    }
    if (ns == 1 && m->nll >= 0)
        m->nll = m->loss;
    return 0;
}

/* Every node's rank before the backward (h->dev, orig, opiece): a copy's
 * piece's, a task's node that reads no batch input its piece 0's, the
 * sums (nodes from first_sum) the rank of the task's loss op's first
 * piece; -1 when out of memory. */
static int place_nodes(const struct hg_graph *g, struct hg_hyb *h,
                       const struct hg_ctl_strategy *st, int loss, int first_sum)
{
    int np = h->np;
    h->nn = hg_graph_n_nodes(g);
    h->dev = malloc((size_t)h->nn * sizeof *h->dev);
    h->orig = malloc((size_t)h->nn * sizeof *h->orig);
    h->opiece = calloc((size_t)h->nn, sizeof *h->opiece);
    if (!h->dev || !h->orig || !h->opiece)
        return -1;
    for (int w = 0; w < h->nn; w++)
        h->dev[w] = -1, h->orig[w] = -1;
    for (int v = 0; v < h->nf; v++) {
        if (h->clone[(size_t)v * (size_t)np] < 0) {
            h->dev[v] = st->piece_dev[(size_t)v * (size_t)np];
            h->orig[v] = v;
            continue;
        }
        for (int p = 0; p < np; p++) {
            int c = h->clone[(size_t)v * (size_t)np + (size_t)p];
            h->dev[c] = st->piece_dev[(size_t)v * (size_t)np + (size_t)p];
            h->orig[c] = v, h->opiece[c] = p;
        }
    }
    h->lossop = hg_graph_tensor(g, loss)->producer;
    int lrank = st->piece_dev[(size_t)h->lossop * (size_t)np];
    for (int w = first_sum; w < h->nn; w++)
        h->dev[w] = lrank;
    return 0;
}

/* After the task's build: copies the forward once per piece of the batch
 * (inputs cut by row), sets m's loss and NLL to the pieces' sums; NULL
 * with err (an op that mixes rows across the batch, too many pieces). */
static struct hg_hyb *hyb_split(struct hg_graph *g, struct hg_task_model *m,
                                const struct hg_ctl_strategy *st, char *err, size_t errlen)
{
    int np = st->npieces, nf = hg_graph_n_nodes(g), nt0 = hg_graph_n_tensors(g);
    struct hg_hyb *h = calloc(1, sizeof *h);
    unsigned char *bdep = calloc((size_t)nt0 + 1, 1); /* [nt0] depends on a batch input */
    int *map = NULL; /* [nt0][np] piece p's copy of tensor t, -1: t itself */
    if (!h || !bdep) {
        hg_kerr(err, errlen, "out of memory");
        goto fail;
    }
    h->np = np;
    h->nf = nf;
    h->plan_batch = st->piece[st->npieces];
    h->bsym = hg_graph_sym_find(g, "batch");
    if (h->bsym < 0) {
        hg_kerr(err, errlen, "a strategy splitting the batch: the task's graph has no symbol "
                "named \"batch\"");
        goto fail;
    }
    if (hg_graph_n_syms(g) + np > HG_MAX_SYMS) {
        hg_kerr(err, errlen, "a strategy splitting the batch into %d pieces: the graph holds "
                "%d symbols, the task declares %d", np, HG_MAX_SYMS, hg_graph_n_syms(g));
        goto fail;
    }
    h->piece = malloc((size_t)(np + 1) * sizeof *h->piece);
    h->in = malloc((size_t)(nt0 + 1) * sizeof *h->in);
    h->pin = malloc((size_t)(nt0 + 1) * (size_t)np * sizeof *h->pin);
    h->clone = malloc((size_t)(nf + 1) * (size_t)np * sizeof *h->clone);
    map = malloc((size_t)(nt0 + 1) * (size_t)np * sizeof *map);
    if (!h->piece || !h->in || !h->pin || !h->clone || !map) {
        hg_kerr(err, errlen, "out of memory");
        goto fail;
    }
    memcpy(h->piece, st->piece, (size_t)(np + 1) * sizeof *h->piece);
    for (size_t i = 0; i < (size_t)nt0 * (size_t)np; i++)
        map[i] = -1;
    if (split_inputs(g, h, nt0, bdep, map, err, errlen) != 0)
        goto fail;
    enum hg_phase was = hg_graph_set_phase(g, HG_PH_FORWARD);
    int first_sum = -1, loss = -1, rc = split_forward(g, h, bdep, map, err, errlen);
    if (rc == 0) {
        first_sum = hg_graph_n_nodes(g);
        rc = split_sums(g, h, m, nt0, bdep, map, &loss, err, errlen);
    }
    hg_graph_set_phase(g, was);
    if (rc != 0)
        goto fail;
    /* metrics read the task's own tensors, which no rank computes here
     * (validation runs the whole graph) */
    m->metric_src = -1;
    if (place_nodes(g, h, st, loss, first_sum) != 0) {
        hg_kerr(err, errlen, "out of memory");
        goto fail;
    }
    free(bdep);
    free(map);
    return h;
fail:
    free(bdep);
    free(map);
    hyb_free(h);
    return NULL;
}

/* Less in the order: by key, then id. */
static int before(const int64_t *key, int a, int b)
{
    return key[a] < key[b] || (key[a] == key[b] && a < b);
}

/* The edges producer -> consumer among g's nodes [0, nfb): counted
 * (cons NULL: cstart[pr + 1] and indeg[w] each edge) or placed in
 * cons[cstart[pr] + at[pr]++]. */
static void edges(const struct hg_graph *g, int nfb, int *cstart, int *indeg, int *at,
                  int *cons)
{
    for (int w = 0; w < nfb; w++) {
        const struct hg_node_info *nd = hg_graph_node(g, w);
        for (int k = 0; k < nd->n_in; k++) {
            int pr = hg_graph_tensor(g, nd->in[k])->producer;
            if (pr < 0 || pr >= nfb)
                continue;
            if (cons)
                cons[cstart[pr] + at[pr]++] = w;
            else
                cstart[pr + 1]++, indeg[w]++;
        }
    }
}

/* h->seq: the forward and backward nodes [0, nfb) of g in a topological
 * order that follows h->key where the graph allows (Kahn's algorithm, the
 * ready node first in the strategy's order): the accumulating ADDs of a
 * parameter's pieces have no counterpart in the strategy's graph and may
 * need to wait for a later piece. */
static int order(struct hg_hyb *h, const struct hg_graph *g, int nfb, char *err,
                 size_t errlen)
{
    int *indeg = calloc((size_t)nfb + 1, sizeof *indeg);  /* [nfb] */
    int *cstart = calloc((size_t)nfb + 2, sizeof *cstart); /* [nfb + 1] consumers */
    int *heap = malloc(((size_t)nfb + 1) * sizeof *heap); /* [<= nfb] ready */
    int *cons = NULL, rc = -1, nh = 0, n = 0;
    free(h->seq);
    h->seq = malloc(((size_t)nfb + 1) * sizeof *h->seq);
    if (!indeg || !cstart || !heap || !h->seq)
        goto oom;
    edges(g, nfb, cstart, indeg, NULL, NULL);
    for (int w = 0; w < nfb; w++)
        cstart[w + 1] += cstart[w];
    cons = malloc(((size_t)cstart[nfb] + 1) * sizeof *cons); /* [edges] */
    int *at = calloc((size_t)nfb + 1, sizeof *at);          /* [nfb] */
    if (!cons || !at) {
        free(at);
        goto oom;
    }
    edges(g, nfb, cstart, NULL, at, cons);
    free(at);
    /* a binary heap of the ready nodes */
    for (int w = 0; w < nfb; w++) {
        if (indeg[w] > 0)
            continue;
        int i = nh++;
        for (; i > 0 && before(h->key, w, heap[(i - 1) / 2]); i = (i - 1) / 2)
            heap[i] = heap[(i - 1) / 2];
        heap[i] = w;
    }
    while (nh > 0) {
        int w = heap[0], x = heap[--nh], i = 0;
        for (;;) { /* sift x down from the root */
            int c = 2 * i + 1;
            if (c >= nh)
                break;
            if (c + 1 < nh && before(h->key, heap[c + 1], heap[c]))
                c++;
            if (!before(h->key, heap[c], x))
                break;
            heap[i] = heap[c];
            i = c;
        }
        if (nh > 0)
            heap[i] = x;
        h->seq[n++] = w;
        for (int k = cstart[w]; k < cstart[w + 1]; k++)
            if (--indeg[cons[k]] == 0) {
                int u = cons[k], j = nh++;
                for (; j > 0 && before(h->key, u, heap[(j - 1) / 2]); j = (j - 1) / 2)
                    heap[j] = heap[(j - 1) / 2];
                heap[j] = u;
            }
    }
    HG_CHECK(n == nfb); /* id order is topological: every node is reached */
    h->nseq = n;
    rc = 0;
    goto done;
oom:
    hg_kerr(err, errlen, "out of memory");
done:
    free(indeg);
    free(cstart);
    free(heap);
    free(cons);
    return rc;
}

/* The partial gradients of parameter p that autodiff's accumulating ADDs
 * sum into gradient tensor t, in their order, into leaf[*n] (the ADDs into
 * chain[*nc]); both [<= nodes]. */
static void leaves(const struct hg_graph *g, int p, int t, int *leaf, int *n, int *chain,
                   int *nc)
{
    int w = hg_graph_tensor(g, t)->producer;
    if (w >= 0 && hg_graph_node_accumulates(g, w) == p) {
        const struct hg_node_info *nd = hg_graph_node(g, w);
        chain[(*nc)++] = w;
        leaves(g, p, nd->in[0], leaf, n, chain, nc);
        leaf[(*n)++] = nd->in[1];
        return;
    }
    leaf[(*n)++] = t;
}

/* The next node of g goes on rank r (h->op_rank, h->key grown). */
static void place_next(struct hg_hyb *h, const struct hg_graph *g, int r, int64_t key)
{
    int w = hg_graph_n_nodes(g);
    int *nr = realloc(h->op_rank, ((size_t)w + 1) * sizeof *nr);
    int64_t *nk = realloc(h->key, ((size_t)w + 1) * sizeof *nk);
    HG_CHECK(nr && nk);
    h->op_rank = nr;
    h->key = nk;
    h->op_rank[w] = r;
    h->key[w] = key;
}

/* Appends one node on rank r; returns its output. */
static int put(struct hg_hyb *h, struct hg_graph *g, enum hg_op op, const int *in, int n_in,
               const union hg_attr *at, int r, int64_t key)
{
    place_next(h, g, r, key);
    return hg_graph_op(g, op, in, n_in, at);
}

/* hg_ctl_strategy.param_ar: each AllReduce parameter whose partial gradients several
 * ranks (its members) compute.  Every member sums its own partials (its
 * pieces' in autodiff's order), and the members all-reduce these sums in
 * place over a group of their own (ALLREDUCE nodes of group k + 1, one per
 * member; mp.c makes the groups): the parameter's gradient on the first
 * member (its owner: the grad block, the norm, checkpoints), an
 * activation on the others, whose copy of the optimizer op reads it and
 * updates its own copy of the parameter.  Autodiff's chain runs nowhere.
 * A parameter read on a rank that holds no partial stays with the chain
 * (its owner sends it). */
static int allreduce_sums(struct hg_hyb *h, struct hg_graph *g, const struct hg_ctl_strategy *st,
                          unsigned char *ar, char *err, size_t errlen)
{
    int nn = hg_graph_n_nodes(g), np = hg_graph_n_params(g), rc = -1;
    int *leaf = malloc(((size_t)nn + 1) * sizeof *leaf);   /* [<= nn] */
    int *chain = malloc(((size_t)nn + 1) * sizeof *chain); /* [<= nn] */
    int *upd = malloc(((size_t)hg_graph_n_tensors(g) + 1) * sizeof *upd); /* [nt] its
                                                                   optimizer op */
    uint64_t *reads = calloc(((size_t)hg_graph_n_tensors(g) + 1), sizeof *reads); /* [nt]
                                                        mask of the ranks reading it */
    if (!leaf || !chain || !upd || !reads) {
        hg_kerr(err, errlen, "out of memory");
        goto done;
    }
    for (int t = 0; t < hg_graph_n_tensors(g); t++)
        upd[t] = -1;
    for (int w = 0; w < nn; w++) {
        const struct hg_node_info *nd = hg_graph_node(g, w);
        if (nd->phase == HG_PH_UPDATE && nd->out < 0 && nd->n_in > 1)
            upd[nd->in[0]] = w;
        for (int k = 0; k < nd->n_in && h->op_rank[w] >= 0 && nd->phase != HG_PH_UPDATE; k++)
            if (hg_graph_tensor(g, nd->in[k])->kind == HG_T_PARAM && h->op_rank[w] < 62)
                reads[nd->in[k]] |= 1ull << h->op_rank[w];
    }
    enum hg_phase was = hg_graph_set_phase(g, HG_PH_BACKWARD);
    for (int i = 0; i < np && i < st->nparams; i++) {
        int p = hg_graph_param_at(g, i), gt = hg_graph_grad(g, p);
        int u = upd[p];
        if (!st->param_ar[i] || gt < 0 || u < 0)
            continue;
        int n = 0, nc = 0, ok = 1;
        uint64_t mask = 0; /* the ranks holding partials */
        leaves(g, p, gt, leaf, &n, chain, &nc);
        for (int j = 0; j < n && ok; j++) {
            int pr = hg_graph_tensor(g, leaf[j])->producer;
            int r = pr >= 0 ? h->op_rank[pr] : -1;
            ok = r >= 0 && r < 62;
            mask |= ok ? 1ull << r : 0;
        }
        /* one member, or a reader outside the members: the chain */
        if (!ok || nc == 0 || (mask & (mask - 1)) == 0 || (reads[p] & ~mask) != 0)
            continue;
        int mem[62], nm = 0, sum[62]; /* [nm] the members, each one's sum */
        for (int r = 0; r < 62; r++)
            if (mask >> r & 1)
                mem[nm++] = r;
        int64_t key = h->key[u];
        int n0 = hg_graph_n_nodes(g);
        for (int m = 0; m < nm; m++) { /* each member's own partials */
            sum[m] = -1;
            for (int j = 0; j < n; j++) {
                if (h->op_rank[hg_graph_tensor(g, leaf[j])->producer] != mem[m])
                    continue;
                int in[2] = {sum[m], leaf[j]};
                sum[m] = sum[m] < 0 ? leaf[j] : put(h, g, HG_OP_ADD, in, 2, NULL, mem[m], key);
            }
        }
        /* the first member's sum is the parameter's gradient (its grad
         * block: the norm, checkpoints): a node of ours writes it (a copy
         * of a lone partial), autodiff's chain runs nowhere */
        int w0 = hg_graph_tensor(g, sum[0])->producer;
        if (w0 < n0) {
            union hg_attr one = {.scale = {.alpha = 1.f}};
            w0 = hg_graph_n_nodes(g);
            put(h, g, HG_OP_SCALE, &sum[0], 1, &one, mem[0], key);
        }
        hg_graph_swap_outputs(g, hg_graph_tensor(g, gt)->producer, w0);
        sum[0] = gt;
        for (int j = 0; j < nc; j++)
            h->op_rank[chain[j]] = -1;
        /* the members' group: its index + 1 (0 is the job) */
        int gi = 0;
        while (gi < h->ngrp && h->grp[gi] != mask)
            gi++;
        if (gi == h->ngrp) {
            uint64_t *ng = realloc(h->grp, ((size_t)gi + 1) * sizeof *ng);
            HG_CHECK(ng != NULL);
            h->grp = ng;
            h->grp[h->ngrp++] = mask;
        }
        for (int m = 0; m < nm; m++) {
            /* every member's sum all-reduced in place, in rank order (one
             * node after the other: no transfer between them) */
            union hg_attr at = {.comm = {.group = gi + 1, .peer = -1, .tag = i}};
            place_next(h, g, mem[m], key);
            hg_graph_comm_span(g, HG_OP_ALLREDUCE, sum[m], sum[m], &at);
        }
        /* every other member's copy of the optimizer op reads its sum */
        const struct hg_node_info nd = *hg_graph_node(g, u);
        hg_graph_set_phase(g, HG_PH_UPDATE);
        for (int m = 1; m < nm; m++) {
            int in[HG_MAX_INPUTS];
            for (int k = 0; k < nd.n_in; k++)
                in[k] = nd.in[k] == gt ? sum[m] : nd.in[k];
            put(h, g, nd.op, in, nd.n_in, &nd.attr, mem[m], key);
        }
        hg_graph_set_phase(g, HG_PH_BACKWARD);
        h->op_rank[u] = mem[0];
        h->nar++;
        ar[i] = 1;
    }
    hg_graph_set_phase(g, was);
    rc = 0;
done:
    free(leaf);
    free(chain);
    free(upd);
    free(reads);
    return rc;
}

/* An accumulating ADD goes as late as its readers allow (the key of its
 * earliest reader): one that adds what another rank made waits for that
 * transfer, and a chain of them on one rank follows the last (the
 * receive is waited for just before its first reader), so the ops placed
 * between compute while the partial arrives. */
static int late_sums(struct hg_hyb *h, const struct hg_graph *g, int nfb, char *err,
                     size_t errlen)
{
    int nt = hg_graph_n_tensors(g);
    int64_t *mk = malloc(((size_t)nt + 1) * sizeof *mk); /* [nt] earliest reader's key */
    if (!mk)
        return hg_kerr(err, errlen, "out of memory");
    for (int t = 0; t < nt; t++)
        mk[t] = INT64_MAX;
    /* id order is topological: a node's readers come after it */
    for (int w = nfb - 1; w >= 0; w--) {
        const struct hg_node_info *nd = hg_graph_node(g, w);
        int accum = 0;
        if (h->op_rank[w] < 0)
            continue;
        hg_graph_node_origin(g, w, &accum);
        if (accum && nd->out >= 0 && mk[nd->out] != INT64_MAX && mk[nd->out] > h->key[w])
            h->key[w] = mk[nd->out];
        for (int k = 0; k < nd->n_in; k++)
            if (h->key[w] < mk[nd->in[k]])
                mk[nd->in[k]] = h->key[w];
    }
    free(mk);
    return 0;
}

/* hg_ctl_strategy.param_upd: a parameter not all-reduced above (its gradient made
 * whole on one rank) whose optimizer op the strategy runs on several
 * ranks: each of them gets a copy of the op reading that gradient (mp.c
 * sends it there) and updates its own copy of the parameter and optimizer
 * state (the same bits as the owner's), so the parameter never travels. */
static int replicate_updates(struct hg_hyb *h, struct hg_graph *g,
                             const struct hg_ctl_strategy *st, const unsigned char *ar,
                             char *err, size_t errlen)
{
    int nn = hg_graph_n_nodes(g), np = hg_graph_n_params(g), nt = hg_graph_n_tensors(g);
    int *upd = malloc(((size_t)nt + 1) * sizeof *upd); /* [nt] its optimizer op */
    if (!upd)
        return hg_kerr(err, errlen, "out of memory");
    for (int t = 0; t < nt; t++)
        upd[t] = -1;
    for (int w = 0; w < nn; w++) {
        const struct hg_node_info *nd = hg_graph_node(g, w);
        if (nd->phase == HG_PH_UPDATE && nd->out < 0 && nd->n_in > 1 && upd[nd->in[0]] < 0)
            upd[nd->in[0]] = w;
    }
    enum hg_phase was = hg_graph_set_phase(g, HG_PH_UPDATE);
    for (int i = 0; i < np && i < st->nparams; i++) {
        int p = hg_graph_param_at(g, i), u = upd[p];
        uint64_t mask = st->param_upd[i];
        if (ar[i] || u < 0 || hg_graph_grad(g, p) < 0 || (mask & (mask - 1)) == 0)
            continue;
        const struct hg_node_info nd = *hg_graph_node(g, u);
        int n = 0;
        for (int r = 0; r < 62; r++)
            if ((mask >> r & 1) && r != h->op_rank[u]) {
                put(h, g, nd.op, nd.in, nd.n_in, &nd.attr, r, h->key[u]);
                n++;
            }
        h->nrep += n > 0;
    }
    hg_graph_set_phase(g, was);
    free(upd);
    return 0;
}

/* Where piece p of the strategy's node v runs: the strategy's key (a
 * pipeline's schedule), else by v's place in the order, pieces in turn. */
static int64_t piece_key(const struct hg_ctl_strategy *st, const int *pos, int np, int v, int p)
{
    if (st->piece_key)
        return st->piece_key[(size_t)v * (size_t)np + (size_t)p];
    return (int64_t)pos[v] * (np + 1) + p;
}

/* After the optimizer: the rank of every node of g (-1: none runs it) into
 * *op_rank and an order of its forward and backward nodes that follows
 * the strategy's order (where the pieces' accumulation allows) into
 * *seq[*nseq] (both owned by h), for hg__mp_plan. */
static int hyb_ranks(struct hg_hyb *h, struct hg_graph *g, const struct hg_ctl_strategy *st,
                     const int **op_rank, const int **seq, int *nseq, char *err,
                     size_t errlen)
{
    int nn = hg_graph_n_nodes(g), np = h->np, nfb = 0;
    free(h->op_rank);
    free(h->key);
    h->op_rank = malloc((size_t)nn * sizeof *h->op_rank);
    h->key = malloc((size_t)nn * sizeof *h->key);
    int *pos = malloc(((size_t)st->nops + 1) * sizeof *pos); /* [n_op_rank] place
                                                                     in the order */
    int64_t *lastkey = malloc(((size_t)nn + 1) * sizeof *lastkey); /* [nn] of the
                                                            origin's latest node */
    int *seen = calloc((size_t)nn + 1, sizeof *seen); /* [nn] non-accumulating
                                                        backward nodes per origin so far */
    int *last = malloc(((size_t)nn + 1) * sizeof *last); /* [nn] rank of the origin's
                                                           latest backward node */
    int *pidx = calloc((size_t)hg_graph_n_tensors(g) + 1, sizeof *pidx); /* [nt] param
                                                                        index + 1 */
    unsigned char *ar = NULL; /* [params] all-reduced by allreduce_sums */
    int rc = -1;
    if (!h->op_rank || !h->key || !pos || !lastkey || !seen || !last || !pidx) {
        hg_kerr(err, errlen, "out of memory");
        goto done;
    }
    for (int v = 0; v < st->nops; v++)
        pos[v] = v;
    for (int i = 0; st->order && i < st->nops; i++)
        if (st->order[i] >= 0 && st->order[i] < st->nops)
            pos[st->order[i]] = i;
    for (int i = 0; i < hg_graph_n_params(g); i++)
        pidx[hg_graph_param_at(g, i)] = i + 1;
    while (nfb < nn && hg_graph_node(g, nfb)->phase != HG_PH_UPDATE)
        nfb++;
    for (int w = 0; w < nn; w++) {
        const struct hg_node_info *nd = hg_graph_node(g, w);
        int r = -1, accum;
        int64_t key = (int64_t)w * (np + 1);
        if (w < h->nn) {
            r = h->dev[w];
            if (h->orig[w] >= 0)
                key = piece_key(st, pos, np, h->orig[w], h->opiece[w]);
            else if (w >= h->nf) /* the loss sums: after the last piece's loss */
                key = piece_key(st, pos, np, h->lossop, np - 1) + !st->piece_key;
            else
                key = piece_key(st, pos, np, w, 0);
        } else if (hg_graph_node_recomputes(g, w) >= 0) {
            /* a recomputing copy: with its original (its order
             * hg__mp_sequence's) */
            r = h->op_rank[hg_graph_node_recomputes(g, w)];
            key = h->key[hg_graph_node_recomputes(g, w)];
        } else if (nd->phase == HG_PH_UPDATE) {
            int i = nd->n_in > 0 ? pidx[nd->in[0]] - 1 : -1;
            if (i < 0 || i >= st->nparams) {
                hg_kerr(err, errlen, "a strategy splitting the batch: update op %d (%s) "
                        "updates no known parameter", w, hg_op_table[nd->op].name);
                goto done;
            }
            r = st->param_rank[i];
        } else if (hg_graph_node_origin(g, w, &accum) >= 0) {
            int o = hg_graph_node_origin(g, w, NULL);
            if (accum) {
                r = last[o];
                key = lastkey[o];
            } else {
                int v = o < h->nn ? h->orig[o] : -1, p = o < h->nn ? h->opiece[o] : 0;
                int k = seen[o]++;
                if (v < 0) { /* a node of ours (the loss sums): with it; in a
                                pipeline as soon as it can (it reads no
                                piece's loss), so the last stage's first
                                backward need not wait for its last forward */
                    r = o < h->nn ? h->dev[o] : -1;
                    key = st->piece_key ? INT64_MIN / 2 : h->key[o];
                } else {
                    int n = st->bwd_start[v + 1] - st->bwd_start[v];
                    if (k >= n) {
                        hg_kerr(err, errlen, "a strategy splitting the batch: the backward "
                                "of op %d (%s) has %d ops in the strategy's graph, more in "
                                "piece %d's copy", v,
                                hg_op_table[hg_graph_node(g, v)->op].name, n, p);
                        goto done;
                    }
                    int u = st->bwd_node[st->bwd_start[v] + k];
                    r = st->piece_dev[(size_t)u * (size_t)np + (size_t)p];
                    key = piece_key(st, pos, np, u, p);
                }
            }
            last[o] = r;
            lastkey[o] = key;
        } else {
            /* a gradient's copy into its GRAD tensor: where it is made */
            int t = nd->n_in > 0 ? nd->in[0] : -1;
            int pr = t >= 0 ? hg_graph_tensor(g, t)->producer : -1;
            r = pr >= 0 && pr < w ? h->op_rank[pr] : st->param_rank[0];
            key = pr >= 0 && pr < w ? h->key[pr] : key;
        }
        h->op_rank[w] = r;
        h->key[w] = key;
    }
    ar = calloc((size_t)hg_graph_n_params(g) + 1, 1);
    if (!ar) {
        hg_kerr(err, errlen, "out of memory");
        goto done;
    }
    if (late_sums(h, g, nfb, err, errlen) != 0)
        goto done;
    if (st->param_ar && allreduce_sums(h, g, st, ar, err, errlen) != 0)
        goto done;
    if (st->param_upd && replicate_updates(h, g, st, ar, err, errlen) != 0)
        goto done;
    if (order(h, g, nfb, err, errlen) != 0)
        goto done;
    *op_rank = h->op_rank;
    *seq = h->seq;
    *nseq = h->nseq;
    rc = 0;
done:
    free(pos);
    free(lastkey);
    free(seen);
    free(last);
    free(pidx);
    free(ar);
    return rc;
}

/* The pieces' batch symbols for the batch symbol's value in sym[]. */
static void hyb_syms(const struct hg_hyb *h, int64_t *sym)
{
    int64_t r[HG_MAX_SYMS + 1], B = sym[h->bsym];
    rows(h, B, r);
    for (int p = 0; p < h->np; p++)
        sym[h->psym[p]] = r[p + 1] - r[p];
}

/* After fill() and hg_exec_prepare: the pieces' rows of the inputs copied
 * into their own inputs (a batch of B). */
static int hyb_copy(const struct hg_hyb *h, struct hg_exec *ex, const struct hg_graph *g,
                    int64_t B)
{
    int64_t r[HG_MAX_SYMS + 1];
    rows(h, B, r);
    for (int i = 0; i < h->nin; i++) {
        const struct hg_tensor_info *ti = hg_graph_tensor(g, h->in[i]);
        size_t row = B > 0 ? (size_t)hg_shape_numel(&ti->shape) / (size_t)B *
                                 hg_dtype_size(ti->dtype) : 0;
        const char *src = hg_exec_data(ex, h->in[i]); /* [B, ...] */
        for (int p = 0; p < h->np; p++) {
            char *dst = hg_exec_data(ex, h->pin[(size_t)i * (size_t)h->np + (size_t)p]);
            if (r[p + 1] > r[p])
                memcpy(dst, src + (size_t)r[p] * row, (size_t)(r[p + 1] - r[p]) * row);
        }
    }
    return 0;
}

/* The row: groups that split the batch differently, run as model
 * parallelism (mp.c) over the split graph. */
static int mode_claims(const struct hg_ctl *c)
{
    return c->comm && c->s && c->s->kind == HG_LAYOUT_SPLIT;
}

static int mode_split(struct hg_ctl *c, struct plan *p, char *err, size_t errlen)
{
    c->hyb = hyb_split(p->g, &p->m, c->s, err, errlen);
    return c->hyb ? 0 : -1;
}

static int mode_copies(const struct hg_ctl *c, const int *v, int n, int **out)
{
    *out = malloc(((size_t)n * (size_t)c->hyb->np + 1) * sizeof **out); /* [<= n * np] */
    return *out ? hyb_nodes(c->hyb, v, n, *out) : -1;
}

/* every node of the split graph placed: the ranks of its nodes are the
 * model-parallel placement from here on */
static int mode_order(struct hg_ctl *c, struct plan *p, int **ord, char *err, size_t errlen)
{
    if (hyb_ranks(c->hyb, p->g, c->s, &c->place.op_rank, &c->place.order,
                  &c->place.n_order, err, errlen) != 0)
        return -1;
    c->place.n_op_rank = hg_graph_n_nodes(p->g);
    return hg__mp_plan(p->g, &c->place, hg_comm_rank(c->comm), hg_comm_world(c->comm), ord,
                       err, errlen);
}

static void mode_free(struct hg_ctl *c)
{
    hg__mp_free(c->mp);
    hyb_free(c->hyb);
}

/* a batch smaller than the pieces: every rank reads it, each drops it
 * alike */
static int mode_micro(struct hg_ctl *c, const struct hg_batch *b, uint64_t update,
                      struct hg_ctl_stats *st)
{
    if (b->size < c->hyb->np) {
        st->dropped += b->size;
        return 1;
    }
    return hg__mp_micro(c, b, update, st);
}

/* A pipeline accumulates over --update-freq global batches, each its
 * micro-batches: what its update ops read from other ranks (a gradient
 * sent to its owner, a data-parallel stage's all-reduced sums) is summed
 * over the runs beside the grad block (hg_exec_grad_carry, step.c).
 * Other split strategies: --update-freq 1 until tested. */
static int mode_one_micro(const struct hg_ctl *c) { return c->s->nmicro <= 0; }

static void mode_syms(const struct hg_ctl *c, int64_t *sym) { hyb_syms(c->hyb, sym); }

static int mode_inputs(const struct hg_ctl *c, struct plan *p, int64_t B)
{
    return hyb_copy(c->hyb, p->ex, p->g, B);
}

static void mode_describe(const struct hg_ctl *c, char *buf, size_t len)
{
    size_t n = strlen(buf);
    if (c->hyb->nar > 0 && n < len)
        n += (size_t)snprintf(buf + n, len - n, "; %d parameters all-reduced among the "
                              "ranks of their pieces", c->hyb->nar);
    if (c->hyb->nrep > 0 && n < len)
        snprintf(buf + n, len - n, "; %d parameters updated on every rank of their update "
                 "op", c->hyb->nrep);
}

const struct hg__mode hg__mode_split = {
    .name = "split",
    .claims = mode_claims,
    .split_graph = mode_split,
    .copies = mode_copies,
    .order = mode_order,
    .start = hg__mp_start,
    .free = mode_free,
    .one_micro = mode_one_micro,
    .partial = 1,
    .micro = mode_micro,
    .syms = mode_syms,
    .inputs = mode_inputs,
    .counts = hg__mp_counts,
    .sumsq = hg__mp_sumsq,
    .sync = hg__mp_sync,
    .valid = hg__mp_valid,
    .owner = hg__mp_owner,
    .describe = mode_describe,
};
