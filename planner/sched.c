/* sched.c - HeteroG's list scheduling and the FIFO baseline: the execution
 * order of a strategy, from the task times of its last simulation.
 *
 * rank(v) = w(v) + max over consumers c of (comm(v) + rank(c)), w the op's
 * longest compute task plus its gradient aggregation, comm its longest
 * transfer out.  List scheduling: ops become ready when their producers are
 * scheduled (at their finish + comm); repeatedly take the ready op with the
 * highest rank (FIFO: the earliest ready, ties by id), start it when its
 * devices are free.  The sequence taken is a topological order: every
 * device runs its tasks in it.  The devices of an op are those of the
 * simulated strategy's lowering. */
#include <stdlib.h>
#include <string.h>

#include "planner/hg_planner.h"

struct heap {
    double *k;
    int *v, n;
};

static int less(const struct heap *h, int i, int j)
{
    return h->k[i] < h->k[j] || (h->k[i] == h->k[j] && h->v[i] < h->v[j]);
}

static void swap(struct heap *h, int i, int j)
{
    double k = h->k[i];
    int v = h->v[i];
    h->k[i] = h->k[j];
    h->v[i] = h->v[j];
    h->k[j] = k;
    h->v[j] = v;
}

static void push(struct heap *h, double k, int v)
{
    int i = h->n++;
    h->k[i] = k;
    h->v[i] = v;
    while (i > 0 && less(h, i, (i - 1) / 2)) {
        swap(h, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static int pop(struct heap *h)
{
    int top = h->v[0];
    h->n--;
    h->k[0] = h->k[h->n];
    h->v[0] = h->v[h->n];
    int i = 0;
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->n && less(h, l, m))
            m = l;
        if (r < h->n && less(h, r, m))
            m = r;
        if (m == i)
            break;
        swap(h, i, m);
        i = m;
    }
    return top;
}

void hg_sched_order(const struct hg_sim *sim, const struct hg_pgraph *pg,
                    struct hg_strategy *st, enum hg_sched_policy pol)
{
    int N = pg->nops, nd = pg->ndev;
    double *w = malloc((size_t)N * sizeof(double)), *cm = malloc((size_t)N * sizeof(double));
    double *rank = malloc((size_t)N * sizeof(double)), *ready = calloc((size_t)N, sizeof(double));
    int *indeg = calloc((size_t)N, sizeof(int));
    struct heap h = {malloc((size_t)N * sizeof(double)), malloc((size_t)N * sizeof(int)), 0};
    HG_CHECK(w && cm && rank && ready && indeg && h.k && h.v);
    for (int v = 0; v < N; v++)
        hg_sim_op_times(sim, v, &w[v], &cm[v]);
    for (int v = N - 1; v >= 0; v--) { /* id order is topological */
        double m = 0;
        for (int k = 0; k < pg->ops[v].ncons; k++) {
            double x = cm[v] + rank[pg->ops[v].cons[k]];
            m = x > m ? x : m;
        }
        rank[v] = w[v] + m;
    }
    for (int v = 0; v < N; v++)
        for (int k = 0; k < pg->ops[v].ncons; k++)
            indeg[pg->ops[v].cons[k]]++;
    for (int v = 0; v < N; v++)
        if (indeg[v] == 0)
            push(&h, pol == HG_SCHED_RANK ? -rank[v] : 0, v);
    double avail[HG_PLAN_MAXDEV] = {0};
    /* the devices holding each op: the simulated strategy's lowering */
    const struct hg_lowered *lw = hg_sim_lowered(sim);
    HG_CHECK(lw->nops == N && lw->ndev == nd);
    int p = 0;
    while (h.n > 0) {
        int v = pop(&h);
        st->order[p++] = v;
        const struct hg_lop *o = &lw->ops[v];
        HG_CHECK(o->group == st->group[v]);
        double s = ready[v];
        for (int i = 0; i < o->nplace; i++)
            if (avail[o->place[i].dev] > s)
                s = avail[o->place[i].dev];
        double f = s + w[v];
        for (int i = 0; i < o->nplace; i++)
            avail[o->place[i].dev] = f;
        for (int k = 0; k < pg->ops[v].ncons; k++) {
            int c = pg->ops[v].cons[k];
            if (f + cm[v] > ready[c])
                ready[c] = f + cm[v];
            if (--indeg[c] == 0)
                push(&h, pol == HG_SCHED_RANK ? -rank[c] : ready[c], c);
        }
    }
    HG_CHECK(p == N);
    free(w);
    free(cm);
    free(rank);
    free(ready);
    free(indeg);
    free(h.k);
    free(h.v);
}

/* hg_sched_list with st just simulated (the task times the ranks use). */
static void sched_list(struct hg_sim *sim, const struct hg_pgraph *pg, struct hg_strategy *st,
                       struct hg_sim_result *r, enum hg_sched_policy *chosen)
{
    struct hg_sim_result rr, rf;
    struct hg_strategy *fifo = hg_strategy_copy(st);
    hg_sched_order(sim, pg, st, HG_SCHED_RANK);
    hg_sched_order(sim, pg, fifo, HG_SCHED_FIFO);
    hg_sim_full(sim, fifo, &rf);
    hg_sim_full(sim, st, &rr);
    if (hg_search_cost(&rf) < hg_search_cost(&rr)) {
        memcpy(st->order, fifo->order, (size_t)st->nops * sizeof(int));
        hg_sim_full(sim, st, &rr);
        if (chosen)
            *chosen = HG_SCHED_FIFO;
    } else if (chosen) {
        *chosen = HG_SCHED_RANK;
    }
    *r = rr;
    hg_strategy_free(fifo);
}

void hg_sched_list(struct hg_sim *sim, const struct hg_pgraph *pg, struct hg_strategy *st,
                   struct hg_sim_result *r, enum hg_sched_policy *chosen)
{
    struct hg_sim_result r0;
    hg_sim_full(sim, st, &r0); /* task times for the ranks */
    sched_list(sim, pg, st, r, chosen);
}

void hg_sched_best(struct hg_sim *sim, const struct hg_pgraph *pg, struct hg_strategy *st,
                   struct hg_sim_result *r, enum hg_sched_policy *chosen)
{
    int *own = malloc((size_t)st->nops * sizeof(int)); /* [nops] the order st came with */
    HG_CHECK(own != NULL);
    memcpy(own, st->order, (size_t)st->nops * sizeof(int));
    struct hg_sim_result r0;
    hg_sim_full(sim, st, &r0); /* the own order's time, and the ranks' task times */
    sched_list(sim, pg, st, r, chosen);
    /* a search that ran in st's order can have fitted its moves to it:
     * both schedules slower there (inception_v3 on heterog-8gpu after the
     * policy's moves: 0.1988 s against 0.2005 s) */
    if (hg_search_cost(&r0) < hg_search_cost(r)) {
        memcpy(st->order, own, (size_t)st->nops * sizeof(int));
        hg_sim_full(sim, st, r);
        if (chosen)
            *chosen = HG_SCHED_OWN;
    }
    free(own);
}
