/* pp-lm.c - `hgpreprocess lm`: one sentence per line, documents separated
 * by empty lines, to BERT-style masked-LM pretraining data in NVIDIA's HDF5
 * layout: BPE codes (learned or given), a dictionary with [CLS], [SEP] and
 * [MASK], and shards of instances made as Google's
 * create_pretraining_data.py makes them (its own xoshiro256** stream: the
 * run is a function of --seed). Its own file, as each command is
 * (data/hgpreprocess.c lists them); what the commands share is in
 * data/pp-common.c. docs/preprocess.md. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hg_base.h"
#include "data/bpe.h"
#include "data/dict.h"
#include "data/hg_data.h"
#include "data/pp-impl.h"
#include "data/text.h"
#include "kernels/hg_kernels.h"

/* xoshiro256** seeded by splitmix64: the run is a function of --seed. */
struct rng {
    uint64_t s[4];
};

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static void rng_seed(struct rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++) {
        uint64_t z = (seed += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        r->s[i] = z ^ (z >> 31);
    }
}

static uint64_t rng_next(struct rng *r)
{
    uint64_t *s = r->s;
    uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

static double rng_random(struct rng *r)
{
    return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

/* Uniform in [a, b] (Python's randint). */
static int64_t rng_int(struct rng *r, int64_t a, int64_t b)
{
    uint64_t span = (uint64_t)(b - a) + 1, lim = UINT64_MAX - UINT64_MAX % span;
    uint64_t x;
    do
        x = rng_next(r);
    while (x >= lim);
    return a + (int64_t)(x % span);
}

static void shuffle_i64(struct rng *r, int64_t *v, int64_t n)
{
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = rng_int(r, 0, i);
        int64_t t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

struct lmopts {
    int64_t L, P, dupe;
    double mlm_prob, short_prob;
};

/* The corpus: tokens (dictionary ids) of sentences of documents. */
struct corpus {
    struct ivec tok;
    int64_t *soff;      /* sentence s: tok[soff[s] .. soff[s+1]) */
    size_t ns, scap;
    int64_t *doff;      /* document d: sentences [doff[d], doff[d+1]) */
    size_t nd, dcap;
};

/* The instances, [N, L] / [N, P] / [N] row-major. */
struct instances {
    int32_t *ids, *mpos, *mids;
    int8_t *mask, *seg, *nsl;
    int64_t n, cap;
};

static int inst_grow(struct instances *in, const struct lmopts *o)
{
    if (in->n < in->cap)
        return 0;
    int64_t nc = in->cap ? 2 * in->cap : 1024;
    size_t L = (size_t)o->L, P = (size_t)o->P;
    void *p;
#define GROW(f, per)                                                          \
    if (!(p = realloc(in->f, (size_t)nc * (per) * sizeof(*in->f))))          \
        return -1;                                                            \
    in->f = p;
    GROW(ids, L) GROW(mask, L) GROW(seg, L) GROW(mpos, P) GROW(mids, P)
    GROW(nsl, 1)
#undef GROW
    in->cap = nc;
    return 0;
}

struct lmgen {
    const struct corpus *cp;
    const struct lmopts *o;
    struct rng *rng;
    const int64_t *docs;  /* BERT shuffles the documents: [nd] */
    int32_t cls, sep, maskid, first_word, vocab;
    struct ivec a, b;
    int64_t *cand;
    size_t candcap;
    struct instances *out;
};

static int64_t sent_len(const struct corpus *cp, int64_t s)
{
    return cp->soff[s + 1] - cp->soff[s];
}

static int append_sent(struct ivec *v, const struct corpus *cp, int64_t s)
{
    int64_t n = sent_len(cp, s);
    if (hg__pp_ivec_reserve(v, (size_t)n))
        return -1;
    memcpy(v->v + v->n, cp->tok.v + cp->soff[s], (size_t)n * sizeof(int32_t));
    v->n += (size_t)n;
    return 0;
}

static int cmp_pos(const void *x, const void *y)
{
    int64_t a = ((const int64_t *)x)[0], b = ((const int64_t *)y)[0];
    return (a > b) - (a < b);
}

/* [CLS] a [SEP] b [SEP], masked as BERT's create_masked_lm_predictions. */
static int lm_emit(struct lmgen *g, const int32_t *a, int64_t na,
                   const int32_t *b, int64_t nb, int is_random)
{
    const struct lmopts *o = g->o;
    struct instances *in = g->out;
    if (inst_grow(in, o))
        return -1;
    int64_t n = na + nb + 3, L = o->L, P = o->P;
    int32_t *ids = in->ids + in->n * L;
    int8_t *mask = in->mask + in->n * L, *seg = in->seg + in->n * L;
    int64_t k = 0;
    ids[k] = g->cls, seg[k++] = 0;
    for (int64_t i = 0; i < na; i++)
        ids[k] = a[i], seg[k++] = 0;
    ids[k] = g->sep, seg[k++] = 0;
    for (int64_t i = 0; i < nb; i++)
        ids[k] = b[i], seg[k++] = 1;
    ids[k] = g->sep, seg[k++] = 1;
    for (int64_t i = 0; i < L; i++) {
        mask[i] = i < n;
        if (i >= n)
            ids[i] = HG_DICT_PAD, seg[i] = 0;
    }
    /* candidates: every position but [CLS] and [SEP] */
    if (g->candcap < (size_t)n * 2) {
        int64_t *c = realloc(g->cand, (size_t)n * 2 * sizeof(*c));
        if (!c)
            return -1;
        g->cand = c;
        g->candcap = (size_t)n * 2;
    }
    int64_t nc = 0;
    for (int64_t i = 0; i < n; i++)
        if (ids[i] != g->cls && ids[i] != g->sep)
            g->cand[nc++] = i;
    shuffle_i64(g->rng, g->cand, nc);
    int64_t want = llround((double)n * o->mlm_prob);
    if (want < 1)
        want = 1;
    if (want > P)
        want = P;
    /* (position, original id) pairs, sorted by position afterwards */
    int64_t *pl = g->cand + n, np = 0;
    for (int64_t i = 0; i < nc && np < want; i++) {
        int64_t pos = g->cand[i];
        int32_t orig = ids[pos], repl;
        if (rng_random(g->rng) < 0.8)
            repl = g->maskid;
        else if (rng_random(g->rng) < 0.5 || g->vocab <= g->first_word)
            repl = orig;
        else
            repl = (int32_t)rng_int(g->rng, g->first_word, g->vocab - 1);
        ids[pos] = repl;
        pl[np++] = pos * ((int64_t)1 << 32) + orig;
    }
    qsort(pl, (size_t)np, sizeof(*pl), cmp_pos);
    int32_t *mpos = in->mpos + in->n * P, *mids = in->mids + in->n * P;
    for (int64_t i = 0; i < P; i++) {
        mpos[i] = i < np ? (int32_t)(pl[i] >> 32) : 0;
        mids[i] = i < np ? (int32_t)(pl[i] & 0xffffffff) : 0;
    }
    in->nsl[in->n] = (int8_t)is_random;
    in->n++;
    return 0;
}

/* BERT's create_instances_from_document for the d-th shuffled document. */
static int lm_document(struct lmgen *g, int64_t d)
{
    const struct corpus *cp = g->cp;
    int64_t max_tokens = g->o->L - 3, target = max_tokens;
    if (rng_random(g->rng) < g->o->short_prob)
        target = rng_int(g->rng, 2, max_tokens);
    int64_t real = g->docs[d];
    int64_t s0 = cp->doff[real], ns = cp->doff[real + 1] - s0;
    int64_t chunk0 = 0, nchunk = 0, clen = 0;
    for (int64_t i = 0; i < ns; i++) {
        if (nchunk == 0)
            chunk0 = i;
        nchunk++;
        clen += sent_len(cp, s0 + i);
        if (i != ns - 1 && clen < target)
            continue;
        int64_t a_end = nchunk >= 2 ? rng_int(g->rng, 1, nchunk - 1) : 1;
        g->a.n = g->b.n = 0;
        for (int64_t j = 0; j < a_end; j++)
            if (append_sent(&g->a, cp, s0 + chunk0 + j))
                return -1;
        int is_random = 0;
        if (nchunk == 1 || rng_random(g->rng) < 0.5) {
            is_random = 1;
            int64_t tb = target - (int64_t)g->a.n, rd = d;
            for (int t = 0; t < 10; t++) {
                rd = rng_int(g->rng, 0, (int64_t)cp->nd - 1);
                if (rd != d)
                    break;
            }
            rd = g->docs[rd];
            int64_t r0 = cp->doff[rd], rn = cp->doff[rd + 1] - r0;
            for (int64_t j = rng_int(g->rng, 0, rn - 1); j < rn; j++) {
                if (append_sent(&g->b, cp, r0 + j))
                    return -1;
                if ((int64_t)g->b.n >= tb)
                    break;
            }
            i -= nchunk - a_end; /* put the unused segments back */
        } else {
            for (int64_t j = a_end; j < nchunk; j++)
                if (append_sent(&g->b, cp, s0 + chunk0 + j))
                    return -1;
        }
        /* truncate_seq_pair: trim the longer side, front or back at random */
        int64_t as = 0, an = (int64_t)g->a.n, bs = 0, bn = (int64_t)g->b.n;
        while (an + bn > max_tokens) {
            int64_t *st = an > bn ? &as : &bs, *len = an > bn ? &an : &bn;
            if (rng_random(g->rng) < 0.5)
                (*st)++;
            (*len)--;
        }
        if (an >= 1 && bn >= 1 &&
            lm_emit(g, g->a.v + as, an, g->b.v + bs, bn, is_random))
            return -1;
        nchunk = 0;
        clen = 0;
    }
    return 0;
}

/* One run of the command. */
struct lctx {
    struct textctx t;
    struct corpus cp;
    int64_t *cnt;        /* [ncnt] corpus token counts by BPE id */
    size_t ncnt;
    int64_t lines;       /* of --input */
    struct hg_dict *d;
    struct rng rng;      /* the shuffles and the masks */
    int64_t *docs;       /* [cp.nd] documents in shuffled order */
    struct lmgen g;
    struct instances in;
    int64_t *order;      /* [in.n] instances in shuffled order */
};

/* Pass 2: BPE ids per sentence, blank lines end documents. */
static int lm_read(struct lctx *c, const char *path, int learn, char *err,
                   size_t errlen)
{
    FILE *f = hg__pp_open_text(path, err, errlen);
    if (!f)
        return -1;
    struct hg_line_reader r;
    hg_line_reader_init(&r, f, path);
    struct progress pg;
    hg__pp_progress_start(&pg, learn ? "reading" : "segmenting");
    char *line;
    size_t len;
    int rc, in_doc = 0;
    struct corpus *cp = &c->cp;
    while ((rc = hg_line_reader_next(&r, &line, &len, err, errlen)) == 1) {
        hg__pp_progress_tick(&pg, r.lineno);
        if (learn) {
            if (hg__pp_add_words(&c->t, line, err, errlen)) {
                rc = -1;
                break;
            }
            continue;
        }
        size_t before = cp->tok.n;
        if (hg__pp_segment_line(&c->t, line, &cp->tok, err, errlen)) {
            rc = -1;
            break;
        }
        if (cp->tok.n == before) {
            in_doc = 0;
            continue;
        }
        size_t ns = cp->ns + 2, nd = cp->nd + 2;
        if (ns > cp->scap) {
            size_t nc = cp->scap ? 2 * cp->scap : 1024;
            int64_t *p = realloc(cp->soff, nc * sizeof(*p));
            if (!p)
                goto oom;
            cp->soff = p;
            cp->scap = nc;
        }
        if (nd > cp->dcap) {
            size_t nc = cp->dcap ? 2 * cp->dcap : 256;
            int64_t *p = realloc(cp->doff, nc * sizeof(*p));
            if (!p)
                goto oom;
            cp->doff = p;
            cp->dcap = nc;
        }
        if (!in_doc) {
            cp->doff[cp->nd++] = (int64_t)cp->ns;
            in_doc = 1;
        }
        cp->soff[cp->ns++] = (int64_t)before;
        cp->soff[cp->ns] = (int64_t)cp->tok.n;
        cp->doff[cp->nd] = (int64_t)cp->ns;
        continue;
oom:
        rc = hg_kerr(err, errlen, "out of memory");
        break;
    }
    hg__pp_progress_end(&pg, r.lineno);
    c->lines = r.lineno;
    hg_line_reader_free(&r);
    fclose(f);
    return rc < 0 ? -1 : 0;
}

static const char *const lm_specials[3] = {"[CLS]", "[SEP]", "[MASK]"};

static const struct hg_field lfields[6] = {
    {.name = "input_ids", .kind = HG_FIELD_ARRAY, .dtype = HG_I32, .rank = 1},
    {.name = "input_mask", .kind = HG_FIELD_ARRAY, .dtype = HG_I8, .rank = 1},
    {.name = "segment_ids", .kind = HG_FIELD_ARRAY, .dtype = HG_I8, .rank = 1},
    {.name = "masked_lm_positions", .kind = HG_FIELD_ARRAY, .dtype = HG_I32, .rank = 1},
    {.name = "masked_lm_ids", .kind = HG_FIELD_ARRAY, .dtype = HG_I32, .rank = 1},
    {.name = "next_sentence_labels", .kind = HG_FIELD_ARRAY, .dtype = HG_I8, .rank = 0},
};

static int lm_write(const struct instances *in, const struct lmopts *o,
                    const int64_t *order, const char *dir, int k, char *err,
                    size_t errlen)
{
    struct hg_shape shapes[6] = {
        {1, {o->L}}, {1, {o->L}}, {1, {o->L}}, {1, {o->P}}, {1, {o->P}}, {0, {0}}};
    if (hg__pp_make_dirs(dir, err, errlen))
        return -1;
    struct shard_out so = {0};
    int64_t L = o->L, P = o->P;
    for (int s = 0; s < k; s++) {
        char name[32];
        snprintf(name, sizeof(name), "shard-%05d.h5", s);
        char *p = hg__pp_path_join(dir, name);
        int rc = hg__pp_shard_open(&so, p, lfields, 6, shapes, err, errlen);
        free(p);
        if (rc)
            return -1;
        if (hg_shard_writer_set_info(so.w, s, k, in->n, err, errlen)) {
            hg__pp_shard_abort(&so);
            return -1;
        }
        for (int64_t j = hg__pp_shard_lo(in->n, k, s); j < hg__pp_shard_lo(in->n, k, s + 1); j++) {
            int64_t i = order[j];
            const void *val[6] = {in->ids + i * L, in->mask + i * L,
                                  in->seg + i * L, in->mpos + i * P,
                                  in->mids + i * P, in->nsl + i};
            const int64_t cnt[6] = {L, L, L, P, P, 1};
            if (hg_shard_writer_add(so.w, val, cnt, err, errlen)) {
                hg__pp_shard_abort(&so);
                return -1;
            }
        }
        if (hg__pp_shard_finish(&so, err, errlen))
            return -1;
    }
    return 0;
}

struct lm_opts {
    char *input, *destdir, *codes;
    int64_t merges, seed, nshards, minfreq;
    struct lmopts lm;
};

#define LM(f) offsetof(struct lm_opts, f)
static const struct hg_opt lm_opts[] = {
    {.name = "input", .type = HG_OPT_STR, .offset = LM(input), .metavar = "F",
     .help = "one sentence per line, documents separated by empty lines"},
    {.name = "destdir", .type = HG_OPT_STR, .offset = LM(destdir), .metavar = "DIR",
     .help = "where codes, the dictionary and the shards go"},
    BPE_CHOICE(struct lm_opts),
    {.name = "max-seq-len", .type = HG_OPT_I64, .offset = LM(lm.L), .def = "128", .min = 5,
     .max = 1 << 20, .metavar = "L", .help = "tokens per instance, [CLS] and [SEP]s included"},
    {.name = "max-predictions", .type = HG_OPT_I64, .offset = LM(lm.P), .def = "20",
     .min = 1, .max = 1 << 20, .metavar = "P", .help = "masked positions per instance at most"},
    {.name = "masked-lm-prob", .type = HG_OPT_REAL, .offset = LM(lm.mlm_prob), .def = "0.15",
     .max = 1, .help = "share of an instance's tokens that are masked"},
    {.name = "short-seq-prob", .type = HG_OPT_REAL, .offset = LM(lm.short_prob),
     .def = "0.1", .max = 1, .help = "probability of a chunk shorter than max-seq-len - 3"},
    {.name = "dupe-factor", .type = HG_OPT_I64, .offset = LM(lm.dupe), .def = "1", .min = 1,
     .max = 1000, .help = "passes over the corpus, each masked differently"},
    {.name = "seed", .type = HG_OPT_I64, .offset = LM(seed), .def = "12345",
     .help = "the shuffle and the masks are a function of the seed"},
    NUM_SHARDS(struct lm_opts),
    MIN_FREQUENCY(struct lm_opts),
};
#undef LM

/* Passes 1 and 2 over --input: the words counted and the codes learned
 * (or the codes loaded), then the corpus as BPE ids. */
static int lm_corpus(struct lctx *c, const struct lm_opts *lo, char *err, size_t errlen)
{
    const char *input = lo->input, *codes = lo->codes;
    if (!codes) {
        if (!(c->t.vocab = hg_bpe_vocab_new()))
            return hg_kerr(err, errlen, "out of memory");
        if (lm_read(c, input, 1, err, errlen))
            return -1;
    }
    if (hg__pp_get_codes(&c->t, lo->merges, codes, lo->minfreq, err, errlen) ||
        lm_read(c, input, 0, err, errlen))
        return -1;
    if (c->cp.nd == 0)
        return hg_kerr(err, errlen, "%s: no text", input);
    return 0;
}

/* The dictionary (c->d), then BPE ids -> dictionary ids in place. */
static int lm_dictionary(struct lctx *c, char *err, size_t errlen)
{
    struct idmap m = {0};
    if (hg__pp_count_tokens(&c->cnt, &c->ncnt, c->t.bpe, &c->cp.tok) ||
        !(c->d = hg_dict_new(lm_specials, 3)) ||
        hg__pp_dict_from_counts(c->d, c->t.bpe, c->cnt, c->ncnt) ||
        hg_dict_finalize(c->d, 0, -1))
        return hg_kerr(err, errlen, "out of memory");
    for (size_t i = 0; i < c->cp.tok.n; i++)
        if (hg__pp_idmap_get(&m, c->t.bpe, c->d, c->cp.tok.v[i], &c->cp.tok.v[i])) {
            free(m.v);
            return hg_kerr(err, errlen, "out of memory");
        }
    free(m.v);
    return 0;
}

/* The instances (c->in): BERT's create_training_instances, --dupe-factor
 * passes over the shuffled documents; then their shuffled order
 * (c->order). */
static int lm_instances(struct lctx *c, const struct lm_opts *lo, char *err,
                        size_t errlen)
{
    struct lmgen *g = &c->g;
    rng_seed(&c->rng, (uint64_t)lo->seed);
    c->docs = malloc(c->cp.nd * sizeof(*c->docs));
    if (!c->docs)
        return hg_kerr(err, errlen, "out of memory");
    g->cp = &c->cp;
    g->o = &lo->lm;
    g->rng = &c->rng;
    g->cls = 4;
    g->sep = 5;
    g->maskid = 6;
    g->first_word = hg_dict_nspecial(c->d);
    g->vocab = hg_dict_size(c->d);
    g->out = &c->in;
    for (size_t i = 0; i < c->cp.nd; i++)
        c->docs[i] = (int64_t)i;
    shuffle_i64(&c->rng, c->docs, (int64_t)c->cp.nd);
    g->docs = c->docs;
    struct progress pg;
    hg__pp_progress_start(&pg, "instances");
    int grc = 0;
    for (int64_t rep = 0; rep < lo->lm.dupe && grc == 0; rep++)
        for (size_t i = 0; i < c->cp.nd && grc == 0; i++) {
            grc = lm_document(g, (int64_t)i);
            hg__pp_progress_tick(&pg, c->in.n);
        }
    hg__pp_progress_end(&pg, c->in.n);
    if (grc)
        return hg_kerr(err, errlen, "out of memory");
    if (c->in.n == 0)
        return hg_kerr(err, errlen, "%s: no training instance could be made", lo->input);
    c->order = malloc((size_t)c->in.n * sizeof(*c->order));
    if (!c->order)
        return hg_kerr(err, errlen, "out of memory");
    for (int64_t i = 0; i < c->in.n; i++)
        c->order[i] = i;
    shuffle_i64(&c->rng, c->order, c->in.n);
    return 0;
}

/* The outputs, after a check for shards of an earlier run: DESTDIR/codes,
 * DESTDIR/dict.txt and the shards in DESTDIR/train; then the summary. */
static int lm_outputs(struct lctx *c, const struct lm_opts *lo, char *err, size_t errlen)
{
    const char *destdir = lo->destdir;
    int k = hg__pp_clamp_shards(lo->nshards, c->in.n);
    char *dir = hg__pp_path_join(destdir, "train"), *pcodes = NULL, *pdict = NULL;
    int rc = -1;
    if (hg__pp_check_stale_shards(dir, k, err, errlen) ||
        hg__pp_make_dirs(destdir, err, errlen))
        goto out;
    pcodes = hg__pp_path_join(destdir, "codes");
    pdict = hg__pp_path_join(destdir, "dict.txt");
    if (hg_bpe_save(c->t.bpe, pcodes, err, errlen) ||
        hg__pp_made_file(pcodes, err, errlen) ||
        hg_dict_save(c->d, pdict, err, errlen) ||
        hg__pp_made_file(pdict, err, errlen) ||
        lm_write(&c->in, &lo->lm, c->order, dir, k, err, errlen))
        goto out;
    int64_t nrand = 0;
    for (int64_t i = 0; i < c->in.n; i++)
        nrand += c->in.nsl[i];
    printf("lm: %" PRId64 " lines, %zu documents, %zu sentences -> %" PRId64
           " instances (%.1f%% random next) in %d shard%s in %s; dictionary: %d types\n",
           c->lines, c->cp.nd, c->cp.ns, c->in.n,
           100.0 * (double)nrand / (double)c->in.n, k, k == 1 ? "" : "s", dir,
           hg_dict_size(c->d));
    rc = 0;
out:
    free(pcodes);
    free(pdict);
    free(dir);
    return rc;
}

static void lm_free(struct lctx *c)
{
    free(c->docs);
    free(c->order);
    free(c->g.a.v);
    free(c->g.b.v);
    free(c->g.cand);
    free(c->in.ids);
    free(c->in.mask);
    free(c->in.seg);
    free(c->in.mpos);
    free(c->in.mids);
    free(c->in.nsl);
    free(c->cp.tok.v);
    free(c->cp.soff);
    free(c->cp.doff);
    free(c->cnt);
    free(c->t.tok);
    hg_bpe_vocab_free(c->t.vocab);
    hg_bpe_free(c->t.bpe);
    hg_dict_free(c->d);
}

static int cmd_lm(const void *opts, const struct hg_opt_prog *p)
{
    const struct lm_opts *lo = opts;
    const char *cmd = "lm";
    if (!lo->input || !lo->destdir)
        return hg__pp_usage_error(p->usage, cmd, "%s", "--input and --destdir are required");
    if ((hg_opt_given(p, "bpe-merges") == 1) == !!lo->codes)
        return hg__pp_usage_error(p->usage, cmd, "%s",
                                  "give exactly one of --bpe-merges and --bpe-codes");
    char err[ERRLEN];
    struct lctx c;
    memset(&c, 0, sizeof(c));
    int rc = lm_corpus(&c, lo, err, sizeof(err)) ||
             lm_dictionary(&c, err, sizeof(err)) ||
             lm_instances(&c, lo, err, sizeof(err)) ||
             lm_outputs(&c, lo, err, sizeof(err)) ? -1 : 0;
    if (rc != 0)
        fprintf(stderr, "hgpreprocess lm: %s\n", err);
    hg__pp_made_clear(rc != 0);
    lm_free(&c);
    return rc ? 1 : 0;
}

const struct pp_command hg__pp_lm = {
    .name = "lm",
    .opts = lm_opts,
    .nopts = NOPTS(lm_opts),
    .size = sizeof(struct lm_opts),
    .run = cmd_lm,
};
