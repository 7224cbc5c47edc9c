/* batch.c - epoch planning: which samples each rank gets at each step.
 *
 * The plan is a pure function of (lengths, opts, epoch): no state, no
 * clock, no thread count, only integer arithmetic and one IEEE division
 * per rank, so every rank computes the same plan on its own and a resumed
 * run re-plans exactly the epoch it left (struct hg_iter_state: the step,
 * and the segments below when the cluster changed). The algorithm, in
 * full:
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
 * Segments (hg_epoch_plan_segments: resuming on another cluster shape).
 *    An epoch is a list of segments; segment j begins at epoch step
 *    start_j (start_0 = 0) with its own world and resolved per-rank
 *    budgets (tok[r], sent[r] of step 0, saved as numbers so that a
 *    replay needs no options). The samples are sorted once (1.).
 *    Segment j cuts the samples that no earlier segment consumed, in that
 *    sort order, with its budgets (2.), and orders its steps (3.) with
 *    k1_j = k1 for j = 0, hg_rand_key(k1, j) after. It consumes its first
 *    start_{j+1} - start_j steps (in that order); what is left goes on to
 *    segment j + 1. The last segment runs to the end of the epoch: the
 *    plan holds its steps only, numbered from its start. One segment with
 *    the budgets of o is exactly hg_epoch_plan. Every sample of the epoch
 *    is in exactly one consumed step of one segment; none is repeated.
 *    Cost: O(n log n + segments * (n + steps * world)).
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
    int64_t steps; /* of the epoch: first + the last segment's */
    int64_t first; /* the last segment's first step (0: one segment) */
    int64_t *idx; /* [n] sample indices in (step, rank) order */
    int64_t *off; /* [(steps - first) * world + 1] start of (step, rank) in idx */
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

/* Resolved budgets of o (step 0): tok[r], sent[r], INT64_MAX unlimited. */
static void resolve(const struct hg_batch_opts *o, int64_t *tok, int64_t *sent)
{
    double maxc = 0.0;
    for (int r = 0; r < o->world; r++) {
        double c = o->capacity ? o->capacity[r] : 1.0;
        maxc = c > maxc ? c : maxc;
    }
    for (int r = 0; r < o->world; r++) {
        double c = o->capacity ? o->capacity[r] : 1.0;
        tok[r] = o->rank_max_tokens ? o->rank_max_tokens[r]
                                    : budget(o->max_tokens, c, maxc);
        sent[r] = o->rank_max_sentences ? o->rank_max_sentences[r]
                                        : budget(o->max_sentences, c, maxc);
    }
}

int hg_epoch_budgets(const struct hg_batch_opts *o, int64_t *tok, int64_t *sent,
                     char *err, size_t errlen)
{
    if (check_opts(NULL, 0, o, err, errlen))
        return -1;
    resolve(o, tok, sent);
    return 0;
}

/* The step key of segment j: segment 0 keeps the one-segment plan's. */
static uint64_t step_key(uint64_t seed, uint64_t epoch, int j)
{
    uint64_t k1 = hg_rand_key(seed, 2 * epoch + 1);
    return j == 0 ? k1 : hg_rand_key(k1, (uint64_t)j);
}

/* Cuts the samples left, s[0 .. n) in sort order, with seg's budgets
 * (step 2) and orders the steps (step 3): *cnt_out [steps * W] counts in
 * sort order, *perm_out [steps] the step order, *start_out [steps + 1]
 * the first position of each (unpermuted) step in s. */
static int cut(const struct sort_key *s, int64_t n, const struct hg_epoch_seg *sg,
               int j, uint64_t seed, int shuffle, uint64_t epoch, int64_t max_tokens,
               int64_t **cnt_out, int64_t **perm_out, int64_t **start_out,
               int64_t *steps_out, char *err, size_t errlen)
{
    const int W = sg->world;
    const int64_t m = sg->required_multiple > 1 ? sg->required_multiple : 1;
    int64_t maxtok = 0;
    for (int r = 0; r < W; r++)
        if (sg->sent[r] > 0) /* a rank that takes no samples places none */
            maxtok = sg->tok[r] > maxtok ? sg->tok[r] : maxtok;
    /* the longest sample left is the last in sort order; the first error
     * names the lowest index of that length, as the one-segment plan */
    if (n > 0 && s[n - 1].len > maxtok) {
        int64_t lo = INT64_MAX;
        int32_t l = 0;
        for (int64_t i = 0; i < n; i++)
            if (s[i].len > maxtok && s[i].idx < lo)
                lo = s[i].idx, l = s[i].len;
        return hg_kerr(err, errlen,
                       "epoch plan: sample %lld has length %d, more than "
                       "the largest token budget %lld (max_tokens %lld)%s",
                       (long long)lo, l, (long long)maxtok, (long long)max_tokens,
                       j > 0 ? " in a later segment" : "");
    }
    int64_t cap_steps = 64, steps = 0, p = 0;
    int64_t *cnt = malloc((size_t)cap_steps * (size_t)W * sizeof(*cnt)); /* [cap_steps * W] */
    HG_CHECK(cnt);
    while (p < n) {
        if (steps == cap_steps) {
            cap_steps *= 2;
            cnt = realloc(cnt, (size_t)cap_steps * (size_t)W * sizeof(*cnt));
            HG_CHECK(cnt);
        }
        int64_t before = p;
        for (int r = 0; r < W; r++) {
            int64_t c = greedy_take(s, n, p, sg->tok[r], sg->sent[r]);
            if (c > m)
                c -= c % m;
            cnt[steps * W + r] = c;
            p += c;
        }
        HG_CHECK(p > before); /* the largest rank always takes one */
        steps++;
    }
    int64_t *start = malloc((size_t)(steps + 1) * sizeof(*start));     /* [steps + 1] */
    int64_t *perm = malloc((size_t)(steps > 0 ? steps : 1) * sizeof(*perm)); /* [steps] */
    HG_CHECK(start && perm);
    start[0] = 0;
    for (int64_t st = 0; st < steps; st++) {
        int64_t tot = 0;
        for (int r = 0; r < W; r++)
            tot += cnt[st * W + r];
        start[st + 1] = start[st] + tot;
        perm[st] = st;
    }
    if (shuffle) {
        const uint64_t k1 = step_key(seed, epoch, j);
        for (int64_t i = steps - 1; i > 0; i--) {
            int64_t jj = (int64_t)(rand64(k1, (uint64_t)i) % (uint64_t)(i + 1));
            int64_t t = perm[i];
            perm[i] = perm[jj];
            perm[jj] = t;
        }
    }
    *cnt_out = cnt;
    *perm_out = perm;
    *start_out = start;
    *steps_out = steps;
    return 0;
}

static int check_segs(const struct hg_epoch_seg *seg, int nseg, char *err,
                      size_t errlen)
{
    if (nseg < 1)
        return hg_kerr(err, errlen, "epoch plan: no segment");
    for (int j = 0; j < nseg; j++) {
        const struct hg_epoch_seg *g = &seg[j];
        if (g->world < 1 || !g->tok || !g->sent || g->required_multiple < 0)
            return hg_kerr(err, errlen, "epoch plan: segment %d: world %d, "
                           "required_multiple %lld", j, g->world,
                           (long long)g->required_multiple);
        if (j == 0 ? g->start != 0 : g->start < seg[j - 1].start)
            return hg_kerr(err, errlen, "epoch plan: segment %d starts at step "
                           "%lld, after segment %d's %lld", j, (long long)g->start,
                           j - 1, (long long)(j ? seg[j - 1].start : 0));
        int64_t mx = 0;
        for (int r = 0; r < g->world; r++) {
            if (g->tok[r] < 0 || g->sent[r] < 0)
                return hg_kerr(err, errlen, "epoch plan: segment %d: rank %d's "
                               "budget is negative", j, r);
            mx = g->sent[r] > 0 && g->tok[r] > mx ? g->tok[r] : mx;
        }
        if (mx == 0)
            return hg_kerr(err, errlen, "epoch plan: segment %d: no rank takes "
                           "samples", j);
    }
    return 0;
}

/* The plan of segments seg[0 .. nseg): see "Segments" at the top. */
static int plan_epoch(struct hg_epoch **out, const int32_t *lengths, int64_t n,
                      const struct hg_epoch_seg *seg, int nseg, uint64_t seed, int shuffle,
                      uint64_t epoch, int64_t max_tokens, char *err, size_t errlen)
{
    for (int64_t i = 0; i < n; i++)
        if (lengths[i] < 0)
            return hg_kerr(err, errlen, "epoch plan: sample %lld has "
                           "negative length %d", (long long)i, lengths[i]);
    /* 1. order */
    struct sort_key *s = malloc((size_t)(n > 0 ? n : 1) * sizeof(*s)); /* [n] */
    HG_CHECK(s);
    const uint64_t k0 = hg_rand_key(seed, 2 * epoch);
    for (int64_t i = 0; i < n; i++) {
        s[i].len = lengths[i];
        s[i].rnd = shuffle ? rand64(k0, (uint64_t)i) : 0;
        s[i].idx = i;
    }
    qsort(s, (size_t)n, sizeof(*s), cmp_key);

    /* earlier segments: each cuts what is left and consumes its first
     * (next start - start) steps; the rest moves on, in sort order */
    int64_t left = n;
    uint8_t *gone = nseg > 1 ? calloc((size_t)(n > 0 ? n : 1), 1) : NULL; /* [n] by sample */
    HG_CHECK(nseg == 1 || gone);
    int64_t *cnt = NULL, *perm = NULL, *start = NULL, steps = 0;
    for (int j = 0;; j++) {
        if (cut(s, left, &seg[j], j, seed, shuffle, epoch, max_tokens, &cnt, &perm,
                &start, &steps, err, errlen) != 0) {
            free(gone);
            free(s);
            return -1;
        }
        if (j == nseg - 1)
            break;
        int64_t used = seg[j + 1].start - seg[j].start;
        if (used > steps) {
            free(cnt);
            free(perm);
            free(start);
            free(gone);
            free(s);
            return hg_kerr(err, errlen, "epoch plan: segment %d starts at step %lld, "
                           "but segment %d ends at step %lld", j + 1,
                           (long long)seg[j + 1].start, j,
                           (long long)(seg[j].start + steps));
        }
        for (int64_t st = 0; st < used; st++)
            for (int64_t k = start[perm[st]]; k < start[perm[st] + 1]; k++)
                gone[s[k].idx] = 1;
        int64_t q = 0;
        for (int64_t k = 0; k < left; k++)
            if (!gone[s[k].idx])
                s[q++] = s[k];
        left = q;
        free(cnt);
        free(perm);
        free(start);
    }
    free(gone);

    const struct hg_epoch_seg *g = &seg[nseg - 1];
    const int W = g->world;
    struct hg_epoch *ep = calloc(1, sizeof(*ep));
    HG_CHECK(ep);
    ep->world = W;
    ep->n = left;
    ep->first = g->start;
    ep->steps = g->start + steps;
    ep->idx = malloc((size_t)(left > 0 ? left : 1) * sizeof(*ep->idx));
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
    HG_CHECK(q == left);
    free(start);
    free(perm);
    free(cnt);
    free(s);
    *out = ep;
    return 0;
}

int hg_epoch_plan(struct hg_epoch **out, const int32_t *lengths, int64_t n,
                  const struct hg_batch_opts *o, uint64_t epoch, char *err,
                  size_t errlen)
{
    *out = NULL;
    if (check_opts(lengths, n, o, err, errlen))
        return -1;
    int64_t *tok = malloc((size_t)o->world * sizeof(*tok));   /* [world] */
    int64_t *sent = malloc((size_t)o->world * sizeof(*sent)); /* [world] */
    HG_CHECK(tok && sent);
    resolve(o, tok, sent);
    struct hg_epoch_seg g = {.start = 0, .world = o->world,
                             .required_multiple = o->required_multiple,
                             .tok = tok, .sent = sent};
    int rc = plan_epoch(out, lengths, n, &g, 1, o->seed, o->shuffle, epoch, o->max_tokens,
                        err, errlen);
    free(tok);
    free(sent);
    return rc;
}

int hg_epoch_plan_segments(struct hg_epoch **out, const int32_t *lengths, int64_t n,
                           const struct hg_epoch_seg *seg, int nseg, uint64_t seed,
                           int shuffle, uint64_t epoch, char *err, size_t errlen)
{
    *out = NULL;
    if (n < 0 || (n > 0 && !lengths))
        return hg_kerr(err, errlen, "epoch plan: %lld samples, lengths %p",
                       (long long)n, (const void *)lengths);
    if (check_segs(seg, nseg, err, errlen))
        return -1;
    return plan_epoch(out, lengths, n, seg, nseg, seed, shuffle, epoch, 0, err, errlen);
}

/* ------------------------------------------------ segments as int64 words */

int hg_epoch_segs_decode(const int64_t *w, int64_t nw, struct hg_epoch_seg *seg,
                         int maxseg, char *err, size_t errlen)
{
    int k = 0;
    for (int64_t p = 0; p < nw; k++) {
        if (k == maxseg)
            return hg_kerr(err, errlen, "epoch segments: more than %d", maxseg);
        if (nw - p < 3 || w[p + 1] < 1 || w[p + 1] > (nw - p - 3) / 2)
            return hg_kerr(err, errlen, "epoch segments: word %lld: truncated or "
                           "corrupt (world %lld)", (long long)p,
                           (long long)(nw - p >= 2 ? w[p + 1] : -1));
        int W = (int)w[p + 1];
        seg[k] = (struct hg_epoch_seg){.start = w[p], .world = W,
                                       .required_multiple = w[p + 2],
                                       .tok = w + p + 3, .sent = w + p + 3 + W};
        p += 3 + 2 * (int64_t)W;
    }
    return check_segs(seg, k, err, errlen) ? -1 : k;
}

int hg_epoch_segs_append(int64_t **words, int64_t *nw, int64_t start,
                         const struct hg_batch_opts *o, char *err, size_t errlen)
{
    if (check_opts(NULL, 0, o, err, errlen))
        return -1;
    const int W = o->world;
    const int64_t len = 3 + 2 * (int64_t)W;
    int64_t *w = malloc((size_t)len * sizeof(*w)); /* [3 + 2 * world] */
    HG_CHECK(w);
    w[0] = start;
    w[1] = W;
    w[2] = o->required_multiple;
    resolve(o, w + 3, w + 3 + W);
    /* the last segment, if any: the same budgets continue it */
    int64_t last = -1;
    for (int64_t p = 0; p < *nw; p += 3 + 2 * (*words)[p + 1])
        last = p;
    if (last >= 0 && start < (*words)[last]) {
        free(w);
        return hg_kerr(err, errlen, "epoch segments: a segment at step %lld after "
                       "one at step %lld", (long long)start, (long long)(*words)[last]);
    }
    if (last >= 0 && *nw - last == len &&
        memcmp(*words + last + 1, w + 1, (size_t)(len - 1) * sizeof(*w)) == 0) {
        free(w);
        return 0;
    }
    /* a new segment at the same step replaces the last one */
    int64_t keep = last >= 0 && (*words)[last] == start ? last : *nw;
    int64_t *nwds = realloc(*words, (size_t)(keep + len) * sizeof(*nwds));
    HG_CHECK(nwds);
    memcpy(nwds + keep, w, (size_t)len * sizeof(*w));
    free(w);
    *words = nwds;
    *nw = keep + len;
    return 1;
}

int64_t hg_epoch_first_step(const struct hg_epoch *ep)
{
    return ep->first;
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
    HG_CHECK(rank >= 0 && rank < ep->world && step >= ep->first && step < ep->steps);
    int64_t k = (step - ep->first) * ep->world + rank;
    *count = ep->off[k + 1] - ep->off[k];
    return ep->idx + ep->off[k];
}
