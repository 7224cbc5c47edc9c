/* policy_place.c - placing with the learned policy: the greedy placement,
 * then the policy's moves and a steepest descent with pairs, each from the
 * faster of the greedy placement and the reference; the decoding training
 * evaluates; MCMC proposals drawn from the policy's probabilities. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "planner/hg_planner.h"
#include "planner/policy-impl.h"

static int argmax(const float *x, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        best = x[i] > x[best] ? i : best;
    return best;
}

/* One move of the placement: group k to action (a, b) with probability p;
 * key: the probability of group k's most probable move. */
struct move {
    int k, a, b;
    float p, key;
};

static int move_cmp(const void *x, const void *y)
{
    const struct move *m = x, *n = y;
    if (m->key != n->key)
        return m->key > n->key ? -1 : 1;
    if (m->k != n->k)
        return m->k - n->k;
    if (m->p != n->p)
        return m->p > n->p ? -1 : 1;
    return m->a != n->a ? m->a - n->a : m->b - n->b;
}

/* Each group's `top` most probable placements (both aggregations for the
 * data-parallel ones) other than its action act[k] as moves: a group's
 * moves together (tried one after another, each a delta of the one
 * before), the group with the most probable move first. */
static struct move *moves_new(const float *pl, const float *ag, const int *act, int G, int D,
                              int top, int *n)
{
    int A = HG_POLICY_ACTIONS(D);
    top = top < A ? top : A;
    struct move *m = malloc((size_t)G * (size_t)top * 2 * sizeof(*m)); /* [G * top * 2] */
    int *ord = malloc((size_t)A * sizeof(int));                         /* [2D+2] */
    HG_CHECK(m && ord);
    *n = 0;
    for (int k = 0; k < G; k++) {
        const float *p = pl + (size_t)k * A;
        for (int i = 0; i < A; i++)
            ord[i] = i;
        for (int i = 0; i < top; i++) /* partial selection sort: top is small */
            for (int j = i + 1; j < A; j++)
                if (p[ord[j]] > p[ord[i]]) {
                    int x = ord[i];
                    ord[i] = ord[j];
                    ord[j] = x;
                }
        int first = *n;
        float key = 0;
        for (int i = 0; i < top; i++) {
            int a = ord[i];
            for (int b = 0; b < (a < D ? 1 : 2); b++) {
                if (a == act[2 * k] && (a < D || b == act[2 * k + 1]))
                    continue;
                float q = a < D ? p[a] : p[a] * ag[k * 2 + b];
                m[(*n)++] = (struct move){k, a, b, q, 0};
                key = q > key ? q : key;
            }
        }
        for (int i = first; i < *n; i++)
            m[i].key = key;
    }
    free(ord);
    qsort(m, (size_t)*n, sizeof(*m), move_cmp);
    return m;
}

/* Passes over the moves m[nm] (grouped by group) from the strategy in
 * t->st (actions act[G][2], cost cur): of each group's moves the fastest
 * kept where the delta simulator says faster than cur; until a pass keeps
 * nothing or `seconds` after t0.  Returns the cost reached. */
static double local_search(struct hg_policy_task *t, const struct move *m, int nm, int *act,
                           double cur, double t0, double seconds,
                           struct hg_policy_place_stats *ps)
{
    int D = t->feat.ndev;
    struct hg_sim_result r;
    for (int kept = 1; kept && hg_now() - t0 < seconds;) {
        kept = 0;
        for (int i = 0, j; i < nm && hg_now() - t0 < seconds; i = j) {
            int k = m[i].k, best = -1, last = -1;
            double bc = cur * (1 - 1e-9);
            struct hg_gcfg old = t->st->cfg[k];
            for (j = i; j < nm && m[j].k == k; j++) {
                int a = m[j].a, b = m[j].b;
                if ((act[2 * k] == a && (a < D || act[2 * k + 1] == b)) ||
                    hg_now() - t0 >= seconds)
                    continue;
                hg__pol_apply_action(t, k, a, b);
                hg_sim_delta(t->sim, t->st, k, &r);
                ps->tried++;
                last = j;
                if (hg_search_cost(&r) < bc) {
                    bc = hg_search_cost(&r);
                    best = j;
                }
            }
            if (best >= 0) {
                cur = bc;
                act[2 * k] = m[best].a;
                act[2 * k + 1] = m[best].b;
                ps->kept++;
                kept = 1;
                if (best != last) {
                    hg__pol_apply_action(t, k, m[best].a, m[best].b);
                    hg_sim_delta(t->sim, t->st, k, &r);
                }
            } else if (last >= 0) {
                t->st->cfg[k] = old;
                hg_sim_delta(t->sim, t->st, k, &r);
            }
        }
        ps->passes++;
    }
    return cur;
}

/* One move of a sweep: group k to m[j], the strategy's cost c with it. */
struct single {
    int k, j;
    double c;
};

static int single_cmp(const void *x, const void *y)
{
    const struct single *a = x, *b = y;
    if (a->c != b->c)
        return a->c < b->c ? -1 : 1;
    return a->k != b->k ? a->k - b->k : a->j - b->j;
}

/* Group k to move mv (delta-simulated into r). */
static void move_to(struct hg_policy_task *t, int k, const struct move *mv,
                    struct hg_sim_result *r)
{
    hg__pol_apply_action(t, k, mv->a, mv->b);
    hg_sim_delta(t->sim, t->st, k, r);
}

/* Group k back to old (delta-simulated). */
static void restore(struct hg_policy_task *t, int k, struct hg_gcfg old)
{
    struct hg_sim_result r;
    t->st->cfg[k] = old;
    hg_sim_delta(t->sim, t->st, k, &r);
}

enum { PAIR_OF = 32 }; /* pairs among this many of a sweep's fastest moves */

/* Steepest descent over single moves and pairs from the strategy in t->st
 * (actions act[G][2], cost cur): a sweep tries every move of m[nm] alone
 * (keeping none), then every pair of two of its PAIR_OF fastest moves of
 * different groups; the fastest move or pair is kept where faster than
 * cur; until a sweep finds nothing faster or `seconds` after t0 (then the
 * fastest found so far).  Pairs reach what moves one at a time do not:
 * on inception_v3 on heterog-12gpu MCMC's answer is two groups model
 * parallel on the two P100s of a node, which a single move that is
 * faster alone blocks.  Returns the cost reached. */
static double pair_search(struct hg_policy_task *t, const struct move *m, int nm, int *act,
                          double cur, double t0, double seconds,
                          struct hg_policy_place_stats *ps)
{
    int D = t->feat.ndev;
    struct single *sw = malloc((size_t)(nm > 0 ? nm : 1) * sizeof(*sw)); /* [nm] */
    HG_CHECK(sw != NULL);
    struct hg_sim_result r;
    for (int found = 1; found && hg_now() - t0 < seconds;) {
        int n = 0;
        for (int i = 0, j; i < nm && hg_now() - t0 < seconds; i = j) {
            int k = m[i].k, any = 0;
            struct hg_gcfg old = t->st->cfg[k];
            for (j = i; j < nm && m[j].k == k; j++) {
                if (act[2 * k] == m[j].a && (m[j].a < D || act[2 * k + 1] == m[j].b))
                    continue;
                move_to(t, k, &m[j], &r);
                ps->tried++;
                any = 1;
                sw[n++] = (struct single){k, j, hg_search_cost(&r)};
            }
            if (any)
                restore(t, k, old);
        }
        qsort(sw, (size_t)n, sizeof(*sw), single_cmp);
        int top = n < PAIR_OF ? n : PAIR_OF, bp = -1, bq = -1;
        double bc = cur * (1 - 1e-9);
        if (n > 0 && sw[0].c < bc) {
            bc = sw[0].c;
            bp = 0;
        }
        for (int p = 0; p < top && hg_now() - t0 < seconds; p++) {
            int k = sw[p].k;
            struct hg_gcfg ok = t->st->cfg[k];
            move_to(t, k, &m[sw[p].j], &r); /* p's move stays for its pairs */
            for (int q = p + 1; q < top; q++) {
                int l = sw[q].k;
                if (k == l)
                    continue;
                struct hg_gcfg ol = t->st->cfg[l];
                move_to(t, l, &m[sw[q].j], &r);
                ps->tried++;
                if (hg_search_cost(&r) < bc) {
                    bc = hg_search_cost(&r);
                    bp = p;
                    bq = q;
                }
                restore(t, l, ol);
            }
            restore(t, k, ok);
        }
        found = bp >= 0;
        int keep[2] = {bp, bq}; /* sw[] indices, -1: none */
        for (int x = 0; x < 2 && found && keep[x] >= 0; x++) {
            const struct single *s1 = &sw[keep[x]];
            move_to(t, s1->k, &m[s1->j], &r);
            act[2 * s1->k] = m[s1->j].a;
            act[2 * s1->k + 1] = m[s1->j].b;
            ps->kept++;
        }
        if (found)
            cur = bc;
        ps->passes++;
    }
    free(sw);
    return cur;
}

/* local_search over the policy's top (o->top, 0: 3) moves per group from
 * the actions act[G][2] (cost cur), then, time left, over every other
 * action (the probable ones first: where the policy's ranking misses
 * one).  Returns the cost reached. */
static double policy_moves(struct hg_policy_task *t, const float *pl, const float *ag,
                           int *act, const struct hg_policy_place_opts *o, double cur,
                           double t0, struct hg_policy_place_stats *ps)
{
    int G = t->feat.ngroups, D = t->feat.ndev, A = HG_POLICY_ACTIONS(D);
    int top = o->top > 0 ? o->top : 3;
    for (int wide = 0; wide < 2 && hg_now() - t0 < o->seconds; wide++) {
        int nm;
        struct move *m = moves_new(pl, ag, act, G, D, wide ? A : top, &nm);
        cur = local_search(t, m, nm, act, cur, t0, o->seconds, ps);
        free(m);
        if (top >= A)
            break;
    }
    return cur;
}

/* One of hg_policy_place's searches (how) from the actions from[G][2]
 * (work[G][2] its scratch), in the order hg_sched_best gives the start
 * (t->st's order: the caller restores it) and once more list-scheduled at
 * the end (a move's worth depends on the order: transformer24 on
 * heterog-8gpu's greedy placement and the move that makes it faster than
 * the reference are both slower in the reference's order); kept in *best
 * (*br, ps->how, its actions best_act[G][2]) where faster than it. */
static void search_from(struct hg_policy_task *t, const float *pl, const float *ag,
                        const struct hg_policy_place_opts *o, double t0, const int *from,
                        enum hg_place_how how, int *work, int *best_act,
                        struct hg_strategy **best, struct hg_sim_result *br,
                        struct hg_policy_place_stats *ps)
{
    int G = t->feat.ngroups, D = t->feat.ndev;
    memcpy(work, from, (size_t)G * 2 * sizeof(int));
    hg__pol_set_actions(t, work, NULL);
    struct hg_sim_result r;
    hg_sched_best(t->sim, t->pg, t->st, &r, NULL);
    double c = hg_search_cost(&r);
    if (how != HG_PLACE_MOVES) {
        int nm;
        struct move *m = moves_new(pl, ag, work, G, D, HG_POLICY_ACTIONS(D), &nm);
        pair_search(t, m, nm, work, c, t0, o->seconds, ps);
        free(m);
    } else {
        policy_moves(t, pl, ag, work, o, c, t0, ps);
    }
    struct hg_strategy *s = hg_strategy_copy(t->st);
    hg_sched_best(t->sim, t->pg, s, &r, NULL);
    if (!*best || hg_search_cost(&r) < hg_search_cost(br)) {
        hg_strategy_free(*best);
        *best = s;
        *br = r;
        ps->how = how;
        memcpy(best_act, work, (size_t)G * 2 * sizeof(int));
    } else {
        hg_strategy_free(s);
    }
}

struct hg_strategy *hg_policy_place(struct hg_policy *p, struct hg_policy_task *t,
                                    const struct hg_policy_place_opts *o,
                                    struct hg_policy_place_stats *ps, char *err,
                                    size_t errlen)
{
    double t0 = hg_now();
    int G = t->feat.ngroups, D = t->feat.ndev, A = HG_POLICY_ACTIONS(D);
    float *pl = t->prob_p, *ag = t->prob_a;
    memset(ps, 0, sizeof(*ps));
    if (hg_policy_forward(p, t, pl, ag, err, errlen) != 0)
        return NULL;
    int *act = malloc((size_t)G * 2 * sizeof(int)); /* [G][2] the greedy actions */
    int *order = malloc((size_t)t->st->nops * sizeof(int)); /* [nops] the training's */
    HG_CHECK(act && order);
    /* placing: the greedy strategy and the searches in the placement's
     * reference's order; decoding (training's evaluations) in the
     * training's */
    memcpy(order, t->st->order, (size_t)t->st->nops * sizeof(int));
    if (o->seconds > 0)
        memcpy(t->st->order, t->place_order, (size_t)t->st->nops * sizeof(int));
    for (int k = 0; k < G; k++) {
        act[2 * k] = argmax(pl + (size_t)k * A, A);
        act[2 * k + 1] = argmax(ag + (size_t)k * 2, 2);
        hg__pol_apply_action(t, k, act[2 * k], act[2 * k + 1]);
    }
    struct hg_sim_result r;
    hg_sim_full(t->sim, t->st, &r);
    ps->greedy = r;
    if (o->want_greedy)
        ps->greedy_st = hg_strategy_copy(t->st);
    struct hg_strategy *placed = NULL; /* the searches' fastest */
    if (o->seconds > 0) {
        /* the two starts: the greedy placement (act) and the reference
         * (the greedy aggregation where it is model parallel) */
        size_t sz = (size_t)G * 2 * sizeof(int);
        int *ref = malloc(sz), *work = malloc(sz); /* [G][2] each */
        HG_CHECK(ref && work);
        for (int k = 0; k < G; k++) {
            ref[2 * k] = t->place_act[2 * k];
            ref[2 * k + 1] = t->place_act[2 * k + 1] >= 0 ? t->place_act[2 * k + 1]
                                                          : act[2 * k + 1];
        }
        hg__pol_set_actions(t, ref, &r);
        double gc = hg_search_cost(&ps->greedy), rc = hg_search_cost(&r);
        ps->from_ref = rc < gc;
        const int *from = ps->from_ref ? ref : act, *other = ps->from_ref ? act : ref;
        int other_fits = ps->from_ref ? !ps->greedy.oom : !r.oom;
        /* the policy's moves one group at a time from the faster start,
         * which has an answer at any time; then, time left, the steepest
         * descent with pairs from there (every action, the policy's
         * ranking aside), which needs a whole sweep before it keeps
         * anything; then the same descent from the other start where it
         * fits (transformer24 on heterog-8gpu: the reference faster than
         * the greedy placement, which one move makes faster than both
         * once list-scheduled; the policy's own order of moves, once
         * finetuned, kept another one first).  The fastest kept. */
        struct hg_sim_result br;
        search_from(t, pl, ag, o, t0, from, HG_PLACE_MOVES, work, t->placed_act, &placed,
                    &br, ps);
        if (hg_now() - t0 < o->seconds)
            search_from(t, pl, ag, o, t0, from, HG_PLACE_PAIRS, work, t->placed_act,
                        &placed, &br, ps);
        if (hg_now() - t0 < o->seconds && other_fits)
            search_from(t, pl, ag, o, t0, other, HG_PLACE_PAIRS_OTHER, work, t->placed_act,
                        &placed, &br, ps);
        t->placed_new = 1; /* weighed by a finetune that follows (weigh_placed) */
        free(ref);
        free(work);
        memcpy(t->st->order, order, (size_t)t->st->nops * sizeof(int));
    }
    free(order);
    free(act);
    ps->seconds = hg_now() - t0;
    return placed ? placed : hg_strategy_copy(t->st);
}

struct hg_strategy *hg_policy_decode(struct hg_policy *p, struct hg_policy_task *t,
                                     struct hg_sim_result *r, char *err, size_t errlen)
{
    struct hg_policy_place_opts o = {0};
    struct hg_policy_place_stats st;
    struct hg_strategy *s = hg_policy_place(p, t, &o, &st, err, errlen);
    if (s && r)
        *r = st.greedy;
    return s;
}

void hg_policy_propose(void *ctx, const struct hg_pgraph *pg, const struct hg_strategy *st,
                       uint64_t *rng, int *group, struct hg_gcfg *cfg)
{
    struct hg_policy_task *t = ctx;
    int G = t->feat.ngroups, D = t->feat.ndev, A = HG_POLICY_ACTIONS(D);
    HG_CHECK(st->ngroups == G && pg->ndev == D);
    if (hg__pol_urand(rng) < 0.5) { /* the space the policy does not reach (replica counts) */
        hg_propose_random(NULL, pg, st, rng, group, cfg);
        return;
    }
    int k = (int)(hg__pol_urand(rng) * G) % G;
    int a = hg__pol_sample(t->prob_p + (size_t)k * A, A, rng);
    int b = hg__pol_sample(t->prob_a + (size_t)k * 2, 2, rng);
    struct hg_gcfg mp;
    *group = k;
    *cfg = *hg__pol_action_cfg(t, a, b, &mp);
    cfg->recompute = st->cfg[k].recompute;
}
