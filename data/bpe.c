/* bpe.c - learning and applying BPE merges (see bpe.h).
 *
 * Learning is subword-nmt's incremental algorithm: pair counts live in a
 * hash map, each pair keeps the list of words it occurs in, and a merge
 * revisits only the words in the merged pair's list, applying to the
 * counts the difference between each word's pairs before and after the
 * merge. The best pair comes from a max-heap with lazy deletion: an entry
 * is valid while its count equals the pair's current count; every count
 * change pushes a fresh entry. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hg_base.h"
#include "data/bpe.h"
#include "data/text.h"

#define EOW "</w>"
#define EOW_LEN 4

static uint64_t pair_key(int32_t a, int32_t b)
{
    return ((uint64_t)(uint32_t)a << 32) | (uint32_t)b;
}

static int32_t key_first(uint64_t k) { return (int32_t)(k >> 32); }
static int32_t key_second(uint64_t k) { return (int32_t)(k & 0xffffffffu); }

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

/* Grows *p (elements of size sz) to hold at least need; 0 or -1. */
static int grow(void *p, size_t *cap, size_t need, size_t sz)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 16;
    while (nc < need)
        nc *= 2;
    void *q = realloc(*(void **)p, nc * sz);
    if (!q)
        return -1;
    *(void **)p = q;
    *cap = nc;
    return 0;
}

/* ------------------------------------------------------------- vocab */

struct hg_bpe_vocab {
    struct hg_strtab *words;
    int64_t *count; /* [ncap] by word id */
    size_t ncap;
};

struct hg_bpe_vocab *hg_bpe_vocab_new(void)
{
    struct hg_bpe_vocab *v = calloc(1, sizeof(*v));
    if (!v)
        return NULL;
    if (!(v->words = hg_strtab_new())) {
        free(v);
        return NULL;
    }
    return v;
}

void hg_bpe_vocab_free(struct hg_bpe_vocab *v)
{
    if (!v)
        return;
    hg_strtab_free(v->words);
    free(v->count);
    free(v);
}

int hg_bpe_vocab_add(struct hg_bpe_vocab *v, const char *word, size_t len,
                     int64_t count)
{
    int added;
    int32_t id = hg_strtab_intern(v->words, word, len, &added);
    if (id < 0)
        return -1;
    if (added) {
        if (grow(&v->count, &v->ncap, (size_t)id + 1, sizeof(*v->count)))
            return -1;
        v->count[id] = 0;
    }
    v->count[id] += count;
    return 0;
}

int64_t hg_bpe_vocab_size(const struct hg_bpe_vocab *v)
{
    return hg_strtab_size(v->words);
}

/* ------------------------------------------------------- codes object */

struct hg_bpe {
    struct hg_strtab *sym;  /* symbols, "</w>" suffix included */
    int32_t *mfirst, *msecond, *mresult; /* [nmerges] symbol ids */
    int nmerges;
    size_t mcap;
    uint64_t *rkey;         /* pair -> rank, open addressing; UINT64_MAX empty */
    int32_t *rval;
    size_t rslot;
    /* segmentation cache: word id -> tokens ctok[coff .. coff+ccount) */
    struct hg_strtab *words;
    int64_t *coff;
    int32_t *ccount;
    size_t ccap;
    int32_t *ctok;
    size_t nctok, ctokcap;
    struct hg_strtab *tokens; /* output tokens ("low@@") */
    int32_t *work;            /* scratch symbols of one word */
    size_t workcap;
    char *sbuf;               /* scratch string */
    size_t sbufcap;
};

static struct hg_bpe *bpe_new(void)
{
    struct hg_bpe *b = calloc(1, sizeof(*b));
    if (!b)
        return NULL;
    b->sym = hg_strtab_new();
    b->words = hg_strtab_new();
    b->tokens = hg_strtab_new();
    if (!b->sym || !b->words || !b->tokens) {
        hg_bpe_free(b);
        return NULL;
    }
    return b;
}

void hg_bpe_free(struct hg_bpe *b)
{
    if (!b)
        return;
    hg_strtab_free(b->sym);
    hg_strtab_free(b->words);
    hg_strtab_free(b->tokens);
    free(b->mfirst);
    free(b->msecond);
    free(b->mresult);
    free(b->rkey);
    free(b->rval);
    free(b->coff);
    free(b->ccount);
    free(b->ctok);
    free(b->work);
    free(b->sbuf);
    free(b);
}

static int32_t rank_find(const struct hg_bpe *b, uint64_t key)
{
    if (!b->rslot)
        return -1;
    size_t mask = b->rslot - 1;
    for (size_t i = mix64(key) & mask;; i = (i + 1) & mask) {
        if (b->rkey[i] == UINT64_MAX)
            return -1;
        if (b->rkey[i] == key)
            return b->rval[i];
    }
}

static int rank_insert(struct hg_bpe *b, uint64_t key, int32_t rank)
{
    if (((size_t)b->nmerges + 1) * 2 > b->rslot) {
        size_t ns = b->rslot ? 2 * b->rslot : 1024;
        uint64_t *k = malloc(ns * sizeof(*k));
        int32_t *v = malloc(ns * sizeof(*v));
        if (!k || !v) {
            free(k);
            free(v);
            return -1;
        }
        memset(k, 0xff, ns * sizeof(*k));
        for (size_t i = 0; i < b->rslot; i++) {
            if (b->rkey[i] == UINT64_MAX)
                continue;
            size_t j = mix64(b->rkey[i]) & (ns - 1);
            while (k[j] != UINT64_MAX)
                j = (j + 1) & (ns - 1);
            k[j] = b->rkey[i];
            v[j] = b->rval[i];
        }
        free(b->rkey);
        free(b->rval);
        b->rkey = k;
        b->rval = v;
        b->rslot = ns;
    }
    size_t mask = b->rslot - 1;
    size_t i = mix64(key) & mask;
    while (b->rkey[i] != UINT64_MAX) {
        if (b->rkey[i] == key)
            return 0; /* a repeated merge: the first rank wins */
        i = (i + 1) & mask;
    }
    b->rkey[i] = key;
    b->rval[i] = rank;
    return 0;
}

/* Interns the concatenation of symbols a and b. */
static int32_t sym_concat(struct hg_bpe *b, int32_t x, int32_t y)
{
    size_t lx = hg_strtab_len(b->sym, x), ly = hg_strtab_len(b->sym, y);
    if (grow(&b->sbuf, &b->sbufcap, lx + ly + 1, 1))
        return -1;
    memcpy(b->sbuf, hg_strtab_str(b->sym, x), lx);
    memcpy(b->sbuf + lx, hg_strtab_str(b->sym, y), ly);
    return hg_strtab_intern(b->sym, b->sbuf, lx + ly, NULL);
}

/* Appends merge (x, y) with the next rank. */
static int add_merge(struct hg_bpe *b, int32_t x, int32_t y, int32_t *result)
{
    int32_t r = sym_concat(b, x, y);
    if (r < 0)
        return -1;
    size_t cap = b->mcap;
    if (grow(&b->mfirst, &cap, (size_t)b->nmerges + 1, sizeof(int32_t)))
        return -1;
    cap = b->mcap;
    if (grow(&b->msecond, &cap, (size_t)b->nmerges + 1, sizeof(int32_t)))
        return -1;
    cap = b->mcap;
    if (grow(&b->mresult, &cap, (size_t)b->nmerges + 1, sizeof(int32_t)))
        return -1;
    b->mcap = cap;
    if (rank_insert(b, pair_key(x, y), b->nmerges))
        return -1;
    b->mfirst[b->nmerges] = x;
    b->msecond[b->nmerges] = y;
    b->mresult[b->nmerges] = r;
    b->nmerges++;
    if (result)
        *result = r;
    return 0;
}

/* Splits word into code-point symbols (the last with "</w>") into
 * b->work; returns the count or -1. */
static int64_t split_chars(struct hg_bpe *b, const char *w, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len;) {
        size_t cl = (size_t)hg_utf8_seqlen((unsigned char)w[i]);
        if (cl > len - i)
            cl = len - i;
        if (grow(&b->work, &b->workcap, n + 1, sizeof(*b->work)))
            return -1;
        int32_t id;
        if (i + cl == len) {
            if (grow(&b->sbuf, &b->sbufcap, cl + EOW_LEN + 1, 1))
                return -1;
            memcpy(b->sbuf, w + i, cl);
            memcpy(b->sbuf + cl, EOW, EOW_LEN);
            id = hg_strtab_intern(b->sym, b->sbuf, cl + EOW_LEN, NULL);
        } else {
            id = hg_strtab_intern(b->sym, w + i, cl, NULL);
        }
        if (id < 0)
            return -1;
        b->work[n++] = id;
        i += cl;
    }
    return (int64_t)n;
}

/* Merges every (x, y) in s[0..n) left to right into r; returns new n. */
static size_t merge_in_place(int32_t *s, size_t n, int32_t x, int32_t y,
                             int32_t r)
{
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        if (i + 1 < n && s[i] == x && s[i + 1] == y) {
            s[o++] = r;
            i += 2;
        } else {
            s[o++] = s[i++];
        }
    }
    return o;
}

/* ------------------------------------------------------------ learning */

struct pairinfo {
    uint64_t key;
    int64_t count;
    int32_t *words; /* words that contained the pair (may hold stale ones) */
    int32_t nw, capw;
};

struct lword {
    int32_t *sym;
    int32_t len;
    int32_t stamp;  /* 1 + the last merge that visited the word */
    int64_t freq;
};

struct heapent {
    int64_t count;
    int32_t pair;
};

struct delta {
    uint64_t key;
    int64_t d;
};

struct learner {
    struct hg_bpe *b;
    struct lword *w;
    int64_t nw;
    struct pairinfo *p;
    size_t np, pcap;
    int32_t *slot;  /* pair hash: -1 empty */
    size_t nslot;
    struct heapent *heap;
    size_t nheap, heapcap;
    struct delta *dl;
    size_t dlcap;
};

static int pair_slots_grow(struct learner *L)
{
    size_t ns = L->nslot ? 2 * L->nslot : 4096;
    int32_t *s = malloc(ns * sizeof(*s));
    if (!s)
        return -1;
    memset(s, 0xff, ns * sizeof(*s));
    for (size_t i = 0; i < L->np; i++) {
        size_t j = mix64(L->p[i].key) & (ns - 1);
        while (s[j] >= 0)
            j = (j + 1) & (ns - 1);
        s[j] = (int32_t)i;
    }
    free(L->slot);
    L->slot = s;
    L->nslot = ns;
    return 0;
}

/* Index of the pair with key, created (count 0) if absent; -1: no memory. */
static int32_t pair_get(struct learner *L, uint64_t key)
{
    if ((L->np + 1) * 2 > L->nslot && pair_slots_grow(L))
        return -1;
    size_t mask = L->nslot - 1;
    size_t i = mix64(key) & mask;
    for (; L->slot[i] >= 0; i = (i + 1) & mask)
        if (L->p[L->slot[i]].key == key)
            return L->slot[i];
    if (L->np >= INT32_MAX ||
        grow(&L->p, &L->pcap, L->np + 1, sizeof(*L->p)))
        return -1;
    struct pairinfo *pi = &L->p[L->np];
    memset(pi, 0, sizeof(*pi));
    pi->key = key;
    L->slot[i] = (int32_t)L->np;
    return (int32_t)L->np++;
}

/* Heap order: higher count first, then the greater pair in byte order. */
static int heap_before(const struct learner *L, const struct heapent *x,
                       const struct heapent *y)
{
    if (x->count != y->count)
        return x->count > y->count;
    uint64_t kx = L->p[x->pair].key, ky = L->p[y->pair].key;
    if (kx == ky)
        return 0;
    const struct hg_strtab *t = L->b->sym;
    int c = strcmp(hg_strtab_str(t, key_first(kx)),
                   hg_strtab_str(t, key_first(ky)));
    if (c == 0)
        c = strcmp(hg_strtab_str(t, key_second(kx)),
                   hg_strtab_str(t, key_second(ky)));
    return c > 0;
}

static int heap_push(struct learner *L, int32_t pair)
{
    if (grow(&L->heap, &L->heapcap, L->nheap + 1, sizeof(*L->heap)))
        return -1;
    struct heapent e = {L->p[pair].count, pair};
    size_t i = L->nheap++;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (!heap_before(L, &e, &L->heap[up]))
            break;
        L->heap[i] = L->heap[up];
        i = up;
    }
    L->heap[i] = e;
    return 0;
}

static void heap_pop(struct learner *L)
{
    struct heapent e = L->heap[--L->nheap];
    size_t n = L->nheap, i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && heap_before(L, &L->heap[c + 1], &L->heap[c]))
            c++;
        if (!heap_before(L, &L->heap[c], &e))
            break;
        L->heap[i] = L->heap[c];
        i = c;
    }
    if (n)
        L->heap[i] = e;
}

static int pair_add_word(struct pairinfo *pi, int32_t w)
{
    if (pi->nw && pi->words[pi->nw - 1] == w)
        return 0;
    if (pi->nw == pi->capw) {
        int32_t nc = pi->capw ? 2 * pi->capw : 2;
        int32_t *q = realloc(pi->words, (size_t)nc * sizeof(*q));
        if (!q)
            return -1;
        pi->words = q;
        pi->capw = nc;
    }
    pi->words[pi->nw++] = w;
    return 0;
}

static int delta_cmp(const void *a, const void *b)
{
    uint64_t x = ((const struct delta *)a)->key, y = ((const struct delta *)b)->key;
    return (x > y) - (x < y);
}

/* Merges (x, y) -> r in word wi and updates the pair counts. */
static int learn_update_word(struct learner *L, int32_t wi, int32_t x,
                             int32_t y, int32_t r)
{
    struct lword *w = &L->w[wi];
    size_t n = (size_t)w->len;
    if (grow(&L->dl, &L->dlcap, 2 * n, sizeof(*L->dl)))
        return -1;
    size_t nd = 0;
    for (size_t i = 0; i + 1 < n; i++)
        L->dl[nd++] = (struct delta){pair_key(w->sym[i], w->sym[i + 1]), -w->freq};
    size_t m = merge_in_place(w->sym, n, x, y, r);
    if (m == n)
        return 0; /* a stale entry of the word list */
    w->len = (int32_t)m;
    for (size_t i = 0; i + 1 < m; i++)
        L->dl[nd++] = (struct delta){pair_key(w->sym[i], w->sym[i + 1]), w->freq};
    qsort(L->dl, nd, sizeof(*L->dl), delta_cmp);
    for (size_t i = 0; i < nd;) {
        size_t j = i;
        int64_t d = 0;
        for (; j < nd && L->dl[j].key == L->dl[i].key; j++)
            d += L->dl[j].d;
        if (d != 0) {
            int32_t pi = pair_get(L, L->dl[i].key);
            if (pi < 0)
                return -1;
            L->p[pi].count += d;
            if (d > 0 && pair_add_word(&L->p[pi], wi))
                return -1;
            if (L->p[pi].count > 0 && heap_push(L, pi))
                return -1;
        }
        i = j;
    }
    return 0;
}

static void learner_free(struct learner *L)
{
    for (int64_t i = 0; i < L->nw; i++)
        free(L->w[i].sym);
    free(L->w);
    for (size_t i = 0; i < L->np; i++)
        free(L->p[i].words);
    free(L->p);
    free(L->slot);
    free(L->heap);
    free(L->dl);
}

int hg_bpe_learn(struct hg_bpe **out, const struct hg_bpe_vocab *v,
                 int nmerges, int64_t min_freq,
                 void (*progress)(int done, int total), char *err,
                 size_t errlen)
{
    *out = NULL;
    struct learner L;
    memset(&L, 0, sizeof(L));
    if (!(L.b = bpe_new()))
        return hg_kerr(err, errlen, "bpe: out of memory");
    int32_t nwords = hg_strtab_size(v->words);
    if (!(L.w = calloc((size_t)nwords + 1, sizeof(*L.w))))
        goto oom;
    /* words -> symbol sequences; pair counts and word lists */
    for (int32_t i = 0; i < nwords; i++) {
        const char *s = hg_strtab_str(v->words, i);
        size_t len = hg_strtab_len(v->words, i);
        int64_t n = split_chars(L.b, s, len);
        if (n < 0)
            goto oom;
        struct lword *w = &L.w[L.nw++];
        w->freq = v->count[i];
        w->len = (int32_t)n;
        if (!(w->sym = malloc((size_t)(n ? n : 1) * sizeof(*w->sym))))
            goto oom;
        memcpy(w->sym, L.b->work, (size_t)n * sizeof(*w->sym));
        for (int64_t k = 0; k + 1 < n; k++) {
            int32_t pi = pair_get(&L, pair_key(w->sym[k], w->sym[k + 1]));
            if (pi < 0)
                goto oom;
            L.p[pi].count += w->freq;
            if (pair_add_word(&L.p[pi], i))
                goto oom;
        }
    }
    for (size_t i = 0; i < L.np; i++)
        if (L.p[i].count > 0 && heap_push(&L, (int32_t)i))
            goto oom;
    for (int m = 0; m < nmerges; m++) {
        int32_t best = -1;
        while (L.nheap) {
            struct heapent top = L.heap[0];
            if (top.count == L.p[top.pair].count && top.count > 0) {
                best = top.pair;
                break;
            }
            heap_pop(&L);
        }
        if (best < 0 || L.p[best].count < min_freq)
            break;
        heap_pop(&L);
        uint64_t key = L.p[best].key;
        int32_t x = key_first(key), y = key_second(key), r;
        if (add_merge(L.b, x, y, &r))
            goto oom;
        /* The merged pair's own list is never appended to while we walk
         * it: no word can contain (x, y) after merging it. */
        for (int32_t k = 0; k < L.p[best].nw; k++) {
            int32_t wi = L.p[best].words[k];
            if (L.w[wi].stamp == m + 1)
                continue;
            L.w[wi].stamp = m + 1;
            if (learn_update_word(&L, wi, x, y, r))
                goto oom;
        }
        HG_CHECK(L.p[best].count == 0);
        free(L.p[best].words);
        L.p[best].words = NULL;
        L.p[best].nw = L.p[best].capw = 0;
        /* the heap holds stale entries; compact it when it grows large */
        if (L.nheap > 4 * L.np + 1024) {
            size_t o = 0;
            for (size_t i = 0; i < L.nheap; i++)
                if (L.heap[i].count == L.p[L.heap[i].pair].count &&
                    L.heap[i].count > 0)
                    L.heap[o++] = L.heap[i];
            L.nheap = 0;
            struct heapent *old = L.heap;
            size_t nold = o;
            L.heap = NULL;
            L.heapcap = 0;
            for (size_t i = 0; i < nold; i++)
                if (heap_push(&L, old[i].pair)) {
                    free(old);
                    goto oom;
                }
            free(old);
        }
        if (progress && (m + 1) % 100 == 0)
            progress(m + 1, nmerges);
    }
    learner_free(&L);
    *out = L.b;
    return 0;
oom:
    learner_free(&L);
    hg_bpe_free(L.b);
    return hg_kerr(err, errlen, "bpe: out of memory while learning merges");
}

/* ------------------------------------------------------- load / save */

int hg_bpe_load(struct hg_bpe **out, const char *path, char *err,
                size_t errlen)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return hg_kerr(err, errlen, "%s: cannot open: %s", path,
                       strerror(errno));
    struct hg_bpe *b = bpe_new();
    if (!b) {
        fclose(f);
        return hg_kerr(err, errlen, "%s: out of memory", path);
    }
    struct hg_line_reader r;
    hg_line_reader_init(&r, f, path);
    char *line;
    size_t len;
    int rc, ret = 0;
    while ((rc = hg_line_reader_next(&r, &line, &len, err, errlen)) == 1) {
        if (r.lineno == 1 && strncmp(line, "#version:", 9) == 0) {
            const char *ver = line + 9;
            while (*ver == ' ')
                ver++;
            if (strcmp(ver, "0.2") != 0) {
                ret = hg_kerr(err, errlen,
                              "%s:1: codes version %s not supported (0.2 only)",
                              path, ver);
                break;
            }
            continue;
        }
        while (len && line[len - 1] == ' ')
            line[--len] = 0;
        char *sp = memchr(line, ' ', len);
        if (!sp || sp == line || sp + 1 == line + len ||
            memchr(sp + 1, ' ', (size_t)(line + len - sp - 1))) {
            ret = hg_kerr(err, errlen,
                          "%s:%lld: expected two symbols \"a b\", found \"%.40s\"",
                          path, (long long)r.lineno, line);
            break;
        }
        int32_t x = hg_strtab_intern(b->sym, line, (size_t)(sp - line), NULL);
        int32_t y = hg_strtab_intern(b->sym, sp + 1,
                                     (size_t)(line + len - sp - 1), NULL);
        if (x < 0 || y < 0 || add_merge(b, x, y, NULL)) {
            ret = hg_kerr(err, errlen, "%s: out of memory", path);
            break;
        }
    }
    if (rc < 0)
        ret = -1;
    hg_line_reader_free(&r);
    fclose(f);
    if (ret != 0) {
        hg_bpe_free(b);
        return -1;
    }
    *out = b;
    return 0;
}

int hg_bpe_save(const struct hg_bpe *b, const char *path, char *err,
                size_t errlen)
{
    struct hg_atomic_file a;
    if (hg_atomic_open(&a, path, err, errlen))
        return -1;
    fputs("#version: 0.2\n", a.f);
    for (int i = 0; i < b->nmerges; i++)
        fprintf(a.f, "%s %s\n", hg_strtab_str(b->sym, b->mfirst[i]),
                hg_strtab_str(b->sym, b->msecond[i]));
    return hg_atomic_commit(&a, err, errlen);
}

int hg_bpe_nmerges(const struct hg_bpe *b)
{
    return b->nmerges;
}

void hg_bpe_merge(const struct hg_bpe *b, int i, const char **first,
                  const char **second)
{
    HG_CHECK(i >= 0 && i < b->nmerges);
    *first = hg_strtab_str(b->sym, b->mfirst[i]);
    *second = hg_strtab_str(b->sym, b->msecond[i]);
}

/* ------------------------------------------------------------ applying */

/* Interns output token s[0..n) + (cont ? "@@" : ""). */
static int32_t out_token(struct hg_bpe *b, const char *s, size_t n, int cont)
{
    if (!cont)
        return hg_strtab_intern(b->tokens, s, n, NULL);
    if (grow(&b->sbuf, &b->sbufcap, n + 3, 1))
        return -1;
    memmove(b->sbuf, s, n);
    memcpy(b->sbuf + n, "@@", 2);
    return hg_strtab_intern(b->tokens, b->sbuf, n + 2, NULL);
}

int hg_bpe_segment(struct hg_bpe *b, const char *word, size_t len,
                   const int32_t **tok)
{
    int added;
    int32_t wid = hg_strtab_intern(b->words, word, len, &added);
    if (wid < 0)
        return -1;
    if (!added) {
        *tok = b->ctok + b->coff[wid];
        return b->ccount[wid];
    }
    size_t cap = b->ccap;
    if (grow(&b->coff, &cap, (size_t)wid + 1, sizeof(*b->coff)))
        return -1;
    cap = b->ccap;
    if (grow(&b->ccount, &cap, (size_t)wid + 1, sizeof(*b->ccount)))
        return -1;
    b->ccap = cap;
    b->coff[wid] = (int64_t)b->nctok;
    b->ccount[wid] = 0;
    int64_t sn = split_chars(b, word, len);
    if (sn < 0)
        return -1;
    size_t n = (size_t)sn;
    while (n > 1) {
        int32_t best = INT32_MAX;
        for (size_t i = 0; i + 1 < n; i++) {
            int32_t rk = rank_find(b, pair_key(b->work[i], b->work[i + 1]));
            if (rk >= 0 && rk < best)
                best = rk;
        }
        if (best == INT32_MAX)
            break;
        n = merge_in_place(b->work, n, b->mfirst[best], b->msecond[best],
                           b->mresult[best]);
    }
    if (grow(&b->ctok, &b->ctokcap, b->nctok + n, sizeof(*b->ctok)))
        return -1;
    int32_t count = 0;
    for (size_t i = 0; i < n; i++) {
        const char *s = hg_strtab_str(b->sym, b->work[i]);
        size_t sl = hg_strtab_len(b->sym, b->work[i]);
        int last = i + 1 == n;
        if (last && sl >= EOW_LEN && memcmp(s + sl - EOW_LEN, EOW, EOW_LEN) == 0)
            sl -= EOW_LEN;
        if (sl == 0)
            continue; /* a bare "</w>" */
        int32_t t = out_token(b, s, sl, !last);
        if (t < 0)
            return -1;
        b->ctok[b->nctok + (size_t)count++] = t;
    }
    b->nctok += (size_t)count;
    b->ccount[wid] = count;
    *tok = b->ctok + b->coff[wid];
    return count;
}

const char *hg_bpe_token(const struct hg_bpe *b, int32_t id)
{
    return hg_strtab_str(b->tokens, id);
}

size_t hg_bpe_token_len(const struct hg_bpe *b, int32_t id)
{
    return hg_strtab_len(b->tokens, id);
}

int32_t hg_bpe_ntokens(const struct hg_bpe *b)
{
    return hg_strtab_size(b->tokens);
}
