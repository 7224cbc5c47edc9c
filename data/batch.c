/* batch.c - epoch planning: which samples each rank gets at each step.
 *
 * The plan is a pure function of (lengths, opts, epoch): no state, no
 * clock, no thread count, only integer arithmetic and one IEEE division
 * per rank, so every rank computes the same plan on its own and a resumed
 * run re-plans exactly the epoch it left (struct hg_iter_state then only
 * needs the step). The algorithm, in full:
 *
 * 0. Budgets. maxc = max(capacity) (capacity NULL: all 1; every entry
 *    must be finite and > 0). For rank r:
 *      tok[r]  = max_tokens    == 0 ? unlimited
 *              : capacity[r] == maxc ? max_tokens
 *              : max(1, floor(max_tokens * capacity[r] / maxc))
 *      sent[r] = the same with max_sentences.
 *    Explicit per-rank lists (rank_max_tokens, rank_max_sentences) replace
 *    these formulas entry by entry; there an entry of 0 means "no
 *    samples" (greedy_take then takes none), not "unlimited".
 *    At least one of max_tokens, max_sentences must be > 0 (an epoch with
 *    neither would be a single batch of everything: almost surely a
 *    configuration mistake). m = max(1, required_multiple).
 *    A sample longer than max_r tok[r] can go nowhere: error naming the
 *    lowest such sample index, its length and that budget.
 *
 * 1. Order. Samples are sorted ascending by (length, r_i, i) where
 *    r_i = mix64(k0 + (i + 1) * G) is a 64-bit counter-based random
 *    number with k0 = hg_rand_key(seed, 2 * epoch) (splitmix64, see
 *    base/hg_base.h), or r_i = 0 when !shuffle. The key is a total
 *    order, so the result does not depend on the sort's stability or
 *    implementation. This equals "a random permutation, then a stable sort
 *    by length": batches hold similar lengths (little padding), and which
 *    equal-length samples share a batch changes every epoch. !shuffle:
 *    natural order stably sorted by length, the same every epoch.
 *
 * 2. Cut. A cursor p walks the sorted order. Each step visits ranks
 *    0 .. world-1 in turn; rank r takes the longest run sorted[p .. p+c)
 *    with c <= sent[r] and c * max(length in the run) <= tok[r] (padding-
 *    aware cost, as fairseq's batch_by_size), then, if c > m, rounds c down
 *    to a multiple of m. A rank whose greedy c is <= m keeps it unrounded
 *    (so c < m only when its budget cannot hold m samples here or the data
 *    ran out: fairseq's rule), and c == 0 when even sorted[p] alone does
 *    not fit its budget: that sample waits for a later, larger rank. p
 *    advances by c. Once p == n the remaining ranks of the step get empty
 *    batches. Every step places at least one sample (the largest rank
 *    takes any sample, checked in 0.), so there are at most n steps.
 *    Consequence tested by tests/test_batch.c: every count is a multiple
 *    of m or smaller than m.
 *
 * 3. Step order. shuffle: the steps (each with its world batches kept
 *    together) are permuted by Fisher-Yates with j = mix64(k1 + (i + 1) *
 *    G) mod (i + 1), k1 = hg_rand_key(seed, 2 * epoch + 1), as fairseq
 *    shuffles batches; otherwise they stay in ascending length order.
 *
 * Storage: one int64 index array [n] in final (step, rank) order and
 * offsets [steps * world + 1]; hg_epoch_batch returns pointers into it.
 * Cost: O(n log n) for the sort, O(n + steps * world) for the rest. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hg_base.h"
#include "data/hg_data.h"

#define HG_GOLDEN 0x9E3779B97F4A7C15ULL

struct hg_epoch {
    int world;
    int64_t n;
    int64_t steps;
    int64_t *idx; /* [n] sample indices in (step, rank) order */
    int64_t *off; /* [steps * world + 1] start of (step, rank) in idx */
};

/* One sample as the sort sees it. */
struct sort_key {
    int32_t len;
    uint64_t rnd;
    int64_t idx;
};

static int cmp_key(const void *pa, const void *pb)
{
    const struct sort_key *a = pa, *b = pb;
    if (a->len != b->len)
        return a->len < b->len ? -1 : 1;
    if (a->rnd != b->rnd)
        return a->rnd < b->rnd ? -1 : 1;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

/* splitmix64's index-th output from state key: the full 64 bits, because
 * hg_rand_u's 24-bit floats would tie often on a million samples. */
static uint64_t rand64(uint64_t key, uint64_t index)
{
    return hg_mix64(key + (index + 1) * HG_GOLDEN);
}

/* floor(limit * c / maxc), exact for the largest rank, never 0; 0 limit
 * means unlimited. */
static int64_t budget(int64_t limit, double c, double maxc)
{
    if (limit == 0)
        return INT64_MAX;
    if (c == maxc)
        return limit;
    double b = floor((double)limit * c / maxc);
    return b < 1.0 ? 1 : (int64_t)b;
}

static int check_opts(const int32_t *lengths, int64_t n,
                      const struct hg_batch_opts *o, char *err, size_t errlen)
{
    if (n < 0 || (n > 0 && !lengths))
        return hg_kerr(err, errlen, "epoch plan: %lld samples, lengths %p",
                       (long long)n, (const void *)lengths);
    if (o->world < 1)
        return hg_kerr(err, errlen, "epoch plan: world %d < 1", o->world);
    if (o->max_tokens < 0 || o->max_sentences < 0 || o->required_multiple < 0)
        return hg_kerr(err, errlen,
                       "epoch plan: negative max_tokens %lld, max_sentences "
                       "%lld or required_multiple %lld",
                       (long long)o->max_tokens, (long long)o->max_sentences,
                       (long long)o->required_multiple);
    const int64_t *lists[2] = {o->rank_max_tokens, o->rank_max_sentences};
    for (int k = 0; k < 2; k++) {
        if (!lists[k])
            continue;
        int64_t mx = 0;
        for (int r = 0; r < o->world; r++) {
            if (lists[k][r] < 0)
                return hg_kerr(err, errlen, "epoch plan: rank %d's max %s is %lld",
                               r, k ? "sentences" : "tokens", (long long)lists[k][r]);
            mx = lists[k][r] > mx ? lists[k][r] : mx;
        }
        if (mx == 0)
            return hg_kerr(err, errlen, "epoch plan: every rank's max %s is 0",
                           k ? "sentences" : "tokens");
    }
    if (o->max_tokens == 0 && o->max_sentences == 0 && !lists[0] && !lists[1])
        return hg_kerr(err, errlen,
                       "epoch plan: no budget (max_tokens and max_sentences "
                       "both 0)");
    for (int r = 0; o->capacity && r < o->world; r++)
        if (!isfinite(o->capacity[r]) || !(o->capacity[r] > 0.0))
            return hg_kerr(err, errlen,
                           "epoch plan: capacity of rank %d is %g, must be > 0",
                           r, o->capacity[r]);
    return 0;
}

/* Longest run from sorted[p] that fits (tok, sent), before rounding. */
static int64_t greedy_take(const struct sort_key *s, int64_t n, int64_t p,
                           int64_t tok, int64_t sent)
{
    int64_t c = 0;
    int32_t maxlen = 0;
    while (p + c < n && c < sent) {
        int32_t l = s[p + c].len > maxlen ? s[p + c].len : maxlen;
        /* (c + 1) * l <= tok without overflow */
        if (l > 0 && c + 1 > tok / l)
            break;
        maxlen = l;
        c++;
    }
    return c;
}

int hg_epoch_plan(struct hg_epoch **out, const int32_t *lengths, int64_t n,
                  const struct hg_batch_opts *o, uint64_t epoch, char *err,
                  size_t errlen)
{
    *out = NULL;
    if (check_opts(lengths, n, o, err, errlen))
        return -1;
    const int W = o->world;
    const int64_t m = o->required_multiple > 1 ? o->required_multiple : 1;

    int64_t *tok = malloc((size_t)W * sizeof(*tok));
    int64_t *sent = malloc((size_t)W * sizeof(*sent));
    HG_CHECK(tok && sent);
    double maxc = 0.0;
    for (int r = 0; r < W; r++) {
        double c = o->capacity ? o->capacity[r] : 1.0;
        maxc = c > maxc ? c : maxc;
    }
    int64_t maxtok = 0;
    for (int r = 0; r < W; r++) {
        double c = o->capacity ? o->capacity[r] : 1.0;
        tok[r] = o->rank_max_tokens ? o->rank_max_tokens[r]
                                    : budget(o->max_tokens, c, maxc);
        sent[r] = o->rank_max_sentences ? o->rank_max_sentences[r]
                                        : budget(o->max_sentences, c, maxc);
        if (sent[r] > 0) /* a rank that takes no samples places none */
            maxtok = tok[r] > maxtok ? tok[r] : maxtok;
    }
    for (int64_t i = 0; i < n; i++) {
        if (lengths[i] < 0 || lengths[i] > maxtok) {
            free(tok);
            free(sent);
            if (lengths[i] < 0)
                return hg_kerr(err, errlen, "epoch plan: sample %lld has "
                               "negative length %d", (long long)i, lengths[i]);
            return hg_kerr(err, errlen,
                           "epoch plan: sample %lld has length %d, more than "
                           "the largest token budget %lld (max_tokens %lld)",
                           (long long)i, lengths[i], (long long)maxtok,
                           (long long)o->max_tokens);
        }
    }

    /* 1. order */
    struct sort_key *s = malloc((size_t)(n > 0 ? n : 1) * sizeof(*s));
    HG_CHECK(s);
    const uint64_t k0 = hg_rand_key(o->seed, 2 * epoch);
    for (int64_t i = 0; i < n; i++) {
        s[i].len = lengths[i];
        s[i].rnd = o->shuffle ? rand64(k0, (uint64_t)i) : 0;
        s[i].idx = i;
    }
    qsort(s, (size_t)n, sizeof(*s), cmp_key);

    /* 2. cut: cnt[step * W + r] in sorted order; steps <= n, grown by
     * doubling because the count is only known at the end. */
    int64_t cap_steps = 64, steps = 0, p = 0;
    int64_t *cnt = malloc((size_t)cap_steps * (size_t)W * sizeof(*cnt));
    HG_CHECK(cnt);
    while (p < n) {
        if (steps == cap_steps) {
            cap_steps *= 2;
            cnt = realloc(cnt, (size_t)cap_steps * (size_t)W * sizeof(*cnt));
            HG_CHECK(cnt);
        }
        int64_t before = p;
        for (int r = 0; r < W; r++) {
            int64_t c = greedy_take(s, n, p, tok[r], sent[r]);
            if (c > m)
                c -= c % m;
            cnt[steps * W + r] = c;
            p += c;
        }
        HG_CHECK(p > before); /* the largest rank always takes one */
        steps++;
    }
    free(tok);
    free(sent);

    /* 3. step order; start[s] = first sorted position of step s */
    int64_t *start = malloc((size_t)(steps + 1) * sizeof(*start));
    int64_t *perm = malloc((size_t)(steps > 0 ? steps : 1) * sizeof(*perm));
    HG_CHECK(start && perm);
    start[0] = 0;
    for (int64_t st = 0; st < steps; st++) {
        int64_t tot = 0;
        for (int r = 0; r < W; r++)
            tot += cnt[st * W + r];
        start[st + 1] = start[st] + tot;
        perm[st] = st;
    }
    if (o->shuffle) {
        const uint64_t k1 = hg_rand_key(o->seed, 2 * epoch + 1);
        for (int64_t i = steps - 1; i > 0; i--) {
            int64_t j = (int64_t)(rand64(k1, (uint64_t)i) % (uint64_t)(i + 1));
            int64_t t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
    }

    struct hg_epoch *ep = calloc(1, sizeof(*ep));
    HG_CHECK(ep);
    ep->world = W;
    ep->n = n;
    ep->steps = steps;
    ep->idx = malloc((size_t)(n > 0 ? n : 1) * sizeof(*ep->idx));
    ep->off = malloc(((size_t)steps * (size_t)W + 1) * sizeof(*ep->off));
    HG_CHECK(ep->idx && ep->off);
    int64_t q = 0;
    for (int64_t st = 0; st < steps; st++) {
        int64_t src = perm[st];
        for (int64_t k = start[src]; k < start[src + 1]; k++)
            ep->idx[q + (k - start[src])] = s[k].idx;
        for (int r = 0; r < W; r++) {
            ep->off[st * W + r] = q;
            q += cnt[src * W + r];
        }
    }
    ep->off[steps * W] = q;
    HG_CHECK(q == n);
    free(start);
    free(perm);
    free(cnt);
    free(s);
    *out = ep;
    return 0;
}

void hg_epoch_free(struct hg_epoch *ep)
{
    if (!ep)
        return;
    free(ep->idx);
    free(ep->off);
    free(ep);
}

int64_t hg_epoch_steps(const struct hg_epoch *ep)
{
    return ep->steps;
}

const int64_t *hg_epoch_batch(const struct hg_epoch *ep, int rank,
                              int64_t step, int64_t *count)
{
    /* out-of-range arguments are the caller's bug, not a runtime error */
    HG_CHECK(rank >= 0 && rank < ep->world && step >= 0 && step < ep->steps);
    int64_t k = step * ep->world + rank;
    *count = ep->off[k + 1] - ep->off[k];
    return ep->idx + ep->off[k];
}
