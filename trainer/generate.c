/* generate.c - `hgtrain generate`: translate with a trained checkpoint, as
 * fairseq-generate and fairseq-interactive:
 *
 *   hgtrain generate --data DIR --path CHECKPOINT [--gen-subset test]
 *       [--input FILE|-] [--beam 5] [--n-best 1] [--lenpen 1] [--max-len-a 0]
 *       [--max-len-b 200] [--min-len 1] [--batch-size 32] [--buffer-size N]
 *       [--results-path FILE] [--ref FILE] [--scores-path FILE]
 *       [--print-scores] [--threads N] [--remove-bpe] [--score]
 *       [--no-incremental]
 *   hgtrain interactive ...   (generate --input -)
 *
 * The checkpoint's saved options give --arch and the task options; the
 * task's generation model (struct hg_task_gen) is built forward-only, the
 * checkpoint's parameters are loaded into its graphs, and it is decoded with
 * fairseq's SequenceGenerator beam search and incremental (cached
 * keys/values) decoding. A split of --data is read as ids; --input reads
 * raw lines and applies what training saw: whitespace tokens, DIR/codes,
 * DIR/dict.SRC.txt. Output: --n-best detokenized hypotheses per input
 * line, in input order; then BLEU and chrF against the references (the
 * split's target side, or --ref FILE: raw reference lines). */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hg_base.h"
#include "controller/hg_controller.h"
#include "data/bleu.h"
#include "data/bpe.h"
#include "data/dict.h"
#include "data/text.h"
#include "tasks/hg_task.h"
#include "trainer/generate.h"
#include "trainer/options.h"

#define ERRLEN 1024

struct gopts {
    char *data, *path, *subset, *results, *ref, *scores;
    char *input;     /* raw text ("-": stdin), or NULL: the split */
    int64_t beam, nbest, batch, buffer, min_len, threads;
    double lenpen, max_len_a, max_len_b;
    int incremental, print_scores, help, version;
};

/* what the messages are prefixed with: the command the user typed */
static const char *gen_name = "hgtrain generate";

static const char usage[] =
    "usage: hgtrain generate --data DIR --path CHECKPOINT [--gen-subset test]\n"
    "    [--input FILE|-] [--beam 5] [--n-best 1] [--lenpen 1] [--max-len-a 0]\n"
    "    [--max-len-b 200] [--min-len 1] [--batch-size 32 | --max-sentences 32]\n"
    "    [--buffer-size N] [--results-path FILE] [--ref FILE] [--scores-path FILE]\n"
    "    [--print-scores] [--threads N] [--remove-bpe] [--score] [--no-incremental]\n"
    "       hgtrain interactive --data DIR --path CHECKPOINT [options as above]\n"
    "    (translates stdin: generate --input -)\n";

#define OFF(f) offsetof(struct gopts, f)
enum { G_IO, G_SEARCH, G_OTHER };

static const struct hg_opt options[] = {
    /* ------------------------------------------------------ input and output */
    {.name = "data", .type = HG_OPT_STR, .group = G_IO, .offset = OFF(data),
     .metavar = "DIR", .help = "the preprocessed data: dictionaries, codes and splits "
                               "(required)"},
    {.name = "path", .type = HG_OPT_STR, .group = G_IO, .offset = OFF(path),
     .metavar = "CHECKPOINT", .help = "the checkpoint to translate with (required)"},
    {.name = "gen-subset", .type = HG_OPT_STR, .group = G_IO, .offset = OFF(subset),
     .def = "test", .metavar = "SPLIT", .help = "the split of --data to translate"},
    {.name = "input", .type = HG_OPT_STR, .group = G_IO, .offset = OFF(input),
     .metavar = "FILE|-", .help = "raw lines instead of a split, tokenized, BPE'd "
                                  "(DIR/codes) and looked up (DIR/dict.*.txt) as in training"},
    {.name = "buffer-size", .type = HG_OPT_I64, .group = G_IO, .offset = OFF(buffer),
     .min = 1, .max = 1e15,
     .help = "--input lines per decoding (default: all; 1 on a terminal)"},
    {.name = "results-path", .type = HG_OPT_STR, .group = G_IO, .offset = OFF(results),
     .metavar = "FILE", .help = "also write the hypotheses to FILE"},
    {.name = "ref", .type = HG_OPT_STR, .group = G_IO, .offset = OFF(ref),
     .metavar = "FILE", .help = "raw reference lines to score against (default: the "
                                "split's target side)"},
    {.name = "scores-path", .type = HG_OPT_STR, .group = G_IO, .offset = OFF(scores),
     .metavar = "FILE", .help = "a split's hypothesis scores, one per line"},
    {.name = "print-scores", .type = HG_OPT_BOOL, .group = G_IO,
     .offset = OFF(print_scores), .help = "print score TAB text for each hypothesis"},
    /* -------------------------------------------------------------- search */
    {.name = "beam", .type = HG_OPT_I64, .group = G_SEARCH, .offset = OFF(beam),
     .def = "5", .min = 1, .max = 1024, .help = "beam width"},
    {.name = "n-best", .alias = "nbest", .type = HG_OPT_I64, .group = G_SEARCH,
     .offset = OFF(nbest), .def = "1", .min = 1, .max = 1024,
     .help = "hypotheses per sentence, best first (at most --beam)"},
    {.name = "lenpen", .type = HG_OPT_REAL, .group = G_SEARCH, .offset = OFF(lenpen),
     .def = "1", .min = -100, .max = 100,
     .help = "length penalty: a hypothesis scores its log-probability / length^lenpen"},
    {.name = "max-len-a", .type = HG_OPT_REAL, .group = G_SEARCH, .offset = OFF(max_len_a),
     .def = "0", .max = 1e6,
     .help = "a of the longest hypothesis, a * source length + b tokens"},
    {.name = "max-len-b", .type = HG_OPT_REAL, .group = G_SEARCH, .offset = OFF(max_len_b),
     .def = "200", .max = 1e6, .flags = HG_OPTF_WHOLE, .metavar = "N",
     .help = "b of the longest hypothesis, a * source length + b tokens"},
    {.name = "min-len", .type = HG_OPT_I64, .group = G_SEARCH, .offset = OFF(min_len),
     .def = "1", .max = 1 << 20, .help = "shortest hypothesis (tokens before </s>)"},
    {.name = "batch-size", .alias = "max-sentences", .type = HG_OPT_I64, .group = G_SEARCH,
     .offset = OFF(batch), .def = "32", .min = 1, .max = 1 << 20,
     .help = "sentences decoded together"},
    {.name = "incremental", .type = HG_OPT_BOOL, .group = G_SEARCH,
     .offset = OFF(incremental), .def = "1", .flags = HG_OPTF_NEGATABLE,
     .help = "cached keys and values (fairseq's incremental decoding); "
             "--no-incremental: the full prefix at every step"},
    /* --------------------------------------------------------------- other */
    {.name = "threads", .type = HG_OPT_I64, .group = G_OTHER, .offset = OFF(threads),
     .def = "0", .max = 4096, .help = "compute threads (0: all cores)"},
    {.name = "remove-bpe", .type = HG_OPT_IGNORED, .group = G_OTHER,
     .help = "fairseq's; always on: hypotheses are printed without BPE"},
    {.name = "score", .type = HG_OPT_IGNORED, .group = G_OTHER,
     .help = "fairseq's; always on: BLEU and chrF are printed"},
    {.name = "quiet", .type = HG_OPT_IGNORED, .group = G_OTHER, .help = "fairseq's; ignored"},
    {.name = "help", .short_name = 'h', .type = HG_OPT_BOOL, .group = G_OTHER,
     .offset = OFF(help), .help = "show this help and exit"},
    {.name = "version", .type = HG_OPT_BOOL, .group = G_OTHER, .offset = OFF(version),
     .help = "print the version and exit"},
};

static void prog_init(struct hg_opt_prog *p, struct gopts *o)
{
    static const char *const groups[] = {"input and output", "search", "other", NULL};
    *p = (struct hg_opt_prog){
        .usage = usage,
        .groups = groups,
        .sets = {{.opts = options, .n = (int)(sizeof(options) / sizeof(options[0])),
                  .base = o}},
        .nsets = 1,
    };
}

static int parse(const struct hg_opt_prog *p, struct gopts *o, int argc, char **argv,
                 char *err, size_t errlen)
{
    if (hg_opt_parse(p, argc, argv, err, errlen) != 0)
        return -1;
    if (o->help || o->version)
        return 0;
    if (!o->data || !o->path)
        return hg_kerr(err, errlen, "--data and --path are required");
    if (o->nbest > o->beam)
        return hg_kerr(err, errlen, "--n-best %lld is more than --beam %lld",
                       (long long)o->nbest, (long long)o->beam);
    if (o->scores && o->input)
        return hg_kerr(err, errlen,
                       "--scores-path is for a split; with --input use --print-scores");
    return 0;
}

/* A shell-like split of the saved options ('...' quotes, '\'' inside). */
static int split_words(const char *s, char ***argv_out, int *argc_out)
{
    size_t cap = 16;
    int n = 0;
    char **v = malloc(cap * sizeof(char *));
    if (!v)
        return -1;
    v[n++] = strdup("hgtrain");
    while (*s) {
        while (*s == ' ')
            s++;
        if (!*s)
            break;
        char *w = malloc(strlen(s) + 1);
        if (!w)
            return -1;
        size_t k = 0;
        while (*s && *s != ' ') {
            if (*s == '\'') {
                s++;
                while (*s && *s != '\'')
                    w[k++] = *s++;
                if (*s)
                    s++;
            } else if (*s == '\\' && s[1]) {
                w[k++] = s[1];
                s += 2;
            } else {
                w[k++] = *s++;
            }
        }
        w[k] = 0;
        if ((size_t)n + 2 > cap) {
            cap *= 2;
            char **nv = realloc(v, cap * sizeof(char *));
            if (!nv)
                return -1;
            v = nv;
        }
        v[n++] = w;
    }
    v[n] = NULL;
    *argv_out = v;
    *argc_out = n;
    return 0;
}

/* One hypothesis being finalized. */
struct hypo {
    int32_t *tok; /* without the final </s> */
    int64_t len;  /* tokens, </s> included */
    double score; /* sum logp / len^lenpen */
    double sum;   /* sum logp */
};

struct sent {
    int64_t idx;     /* in the split */
    int32_t *src, *tgt;
    int32_t slen, tlen;
    int64_t max_len; /* decoding steps before </s> is forced */
    int skip;        /* not translated (the message was printed) */
    struct hypo *fin;
    int nfin;
    int active;
    int64_t base;    /* its first row in the previous step */
    int64_t nbeam;   /* its rows there */
    double fin_score, fin_sum; /* the best hypothesis */
    int64_t fin_len;
};

struct cand {
    float score;
    int32_t beam, tok;
};

static int cand_cmp(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    if (x->beam != y->beam)
        return x->beam < y->beam ? -1 : 1;
    return x->tok < y->tok ? -1 : x->tok > y->tok;
}

/* The rows of one search step: per row its sentence, the row of the
 * previous step it extends, its last token, its history of tokens and
 * its score; the n* arrays are the next step's. */
struct beams {
    int64_t k, V, steps; /* beam, vocabulary, most decoding steps + 1 */
    int64_t N;           /* rows this step */
    int32_t *row_sent, *row_from, *tok; /* [B*k] */
    int32_t *hist, *nhist;              /* [B*k][steps] */
    double *score, *nscore;             /* [B*k] sum logp */
    struct cand *c;                     /* [2k+1] one sentence's best candidates */
};

static void beams_free(struct beams *bm)
{
    free(bm->row_sent);
    free(bm->row_from);
    free(bm->tok);
    free(bm->hist);
    free(bm->nhist);
    free(bm->score);
    free(bm->nscore);
    free(bm->c);
}

/* The rows for B sentences and each sentence's k finalized hypotheses;
 * step 0: k rows per sentence, all </s>. */
static int beams_start(struct beams *bm, struct sent *ss, int64_t B, char *err, size_t errlen)
{
    const int64_t k = bm->k;
    int64_t steps = 0;
    for (int64_t i = 0; i < B; i++)
        steps = ss[i].max_len + 1 > steps ? ss[i].max_len + 1 : steps;
    bm->steps = steps;
    const size_t rows = (size_t)(B * k);
    bm->row_sent = malloc(rows * sizeof(int32_t)), bm->row_from = malloc(rows * sizeof(int32_t));
    bm->tok = malloc(rows * sizeof(int32_t));
    bm->hist = malloc(rows * (size_t)steps * sizeof(int32_t));
    bm->nhist = malloc(rows * (size_t)steps * sizeof(int32_t));
    bm->score = calloc(rows, sizeof(double)), bm->nscore = calloc(rows, sizeof(double));
    bm->c = malloc((size_t)(2 * k + 1) * sizeof(struct cand));
    if (!bm->row_sent || !bm->row_from || !bm->tok || !bm->hist || !bm->nhist || !bm->score ||
        !bm->nscore || !bm->c) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int64_t i = 0; i < B; i++) {
        ss[i].active = 1;
        ss[i].nfin = 0;
        ss[i].fin = calloc((size_t)k, sizeof(struct hypo));
        if (!ss[i].fin) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    int64_t N = 0;
    for (int64_t i = 0; i < B; i++) {
        ss[i].base = N;
        ss[i].nbeam = k;
        for (int64_t j = 0; j < k; j++, N++) {
            bm->row_sent[N] = (int32_t)i;
            bm->row_from[N] = (int32_t)N;
            bm->tok[N] = HG_DICT_EOS;
            bm->hist[(size_t)N * (size_t)steps] = HG_DICT_EOS;
            bm->score[N] = 0;
        }
    }
    bm->N = N;
    return 0;
}

/* Sentence s's best 2k candidates (row score + log p) over its beams'
 * log probabilities lp, sorted into bm->c; returns how many. */
static int64_t best_candidates(struct beams *bm, const struct sent *s, int64_t step,
                               const float *lp, const struct gopts *o)
{
    const int64_t k = bm->k, V = bm->V;
    struct cand *c = bm->c;
    int64_t nc = 0, nbeams = step == 0 ? 1 : s->nbeam;
    for (int64_t j = 0; j < nbeams; j++) {
        int64_t r = s->base + j;
        const float *l = lp + r * V;
        for (int64_t v = 0; v < V; v++) {
            float x = l[v];
            if (isnan(x) || v == HG_DICT_PAD)
                x = -INFINITY;
            if (step >= s->max_len && v != HG_DICT_EOS)
                x = -INFINITY;
            if (step < o->min_len && v == HG_DICT_EOS)
                x = -INFINITY;
            /* keep the best 2k, sorted (insertion) */
            struct cand x1 = {(float)(bm->score[r] + (double)x), (int32_t)j, (int32_t)v};
            if (nc == 2 * k && cand_cmp(&x1, &c[nc - 1]) >= 0)
                continue;
            int64_t p = nc < 2 * k ? nc++ : nc - 1;
            while (p > 0 && cand_cmp(&x1, &c[p - 1]) < 0) {
                c[p] = c[p - 1];
                p--;
            }
            c[p] = x1;
        }
    }
    return nc;
}

/* </s> among the first k of the top candidates finalizes a hypothesis
 * (score / len^lenpen) while s has fewer than k.  -1: out of memory (the
 * hypothesis counted, without tokens). */
static int finalize(struct beams *bm, struct sent *s, int64_t step, int64_t top,
                    const struct gopts *o, char *err, size_t errlen)
{
    const int64_t k = bm->k, steps = bm->steps;
    const struct cand *c = bm->c;
    for (int64_t q = 0; q < top && q < k; q++) {
        if (c[q].tok != HG_DICT_EOS || c[q].score == -INFINITY || s->nfin >= k)
            continue;
        int64_t r = s->base + c[q].beam;
        struct hypo *h = &s->fin[s->nfin++];
        h->len = step + 1;
        h->sum = c[q].score;
        h->score = c[q].score / pow((double)(step + 1), o->lenpen);
        h->tok = malloc((size_t)(step + 1) * sizeof(int32_t));
        if (!h->tok) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        for (int64_t t = 0; t < step; t++)
            h->tok[t] = bm->hist[(size_t)r * (size_t)steps + (size_t)t + 1];
    }
    return 0;
}

/* The first k top candidates other than </s> continue sentence i as the
 * next step's rows from *nN on; s->base and s->nbeam name them. */
static void extend(struct beams *bm, struct sent *s, int64_t i, int64_t step, int64_t top,
                   int32_t *nrow_sent, int32_t *nrow_from, int32_t *ntok, int64_t *nN)
{
    const int64_t k = bm->k, steps = bm->steps;
    const struct cand *c = bm->c;
    int64_t base = *nN;
    for (int64_t q = 0; q < top && *nN - base < k; q++) {
        if (c[q].tok == HG_DICT_EOS)
            continue;
        int64_t r = s->base + c[q].beam;
        nrow_sent[*nN] = (int32_t)i;
        nrow_from[*nN] = (int32_t)r;
        ntok[*nN] = c[q].tok;
        bm->nscore[*nN] = c[q].score;
        memcpy(bm->nhist + (size_t)*nN * (size_t)steps, bm->hist + (size_t)r * (size_t)steps,
               (size_t)(step + 1) * sizeof(int32_t));
        bm->nhist[(size_t)*nN * (size_t)steps + (size_t)step + 1] = c[q].tok;
        (*nN)++;
    }
    s->base = base;
    s->nbeam = *nN - base;
    if (s->nbeam == 0) /* nothing left to extend */
        s->active = 0;
}

/* One decoding step over the rows of the active sentences: the model's
 * log probabilities, then per sentence its finalized hypotheses and the
 * rows that continue.  The next step's rows replace this step's. */
static int search_step(const struct hg_task_gen *G, void *m, struct beams *bm,
                       struct sent *ss, int64_t B, int64_t step, const struct gopts *o,
                       char *err, size_t errlen)
{
    const int64_t k = bm->k, N = bm->N;
    const float *lp;
    int rc = 0;
    if (G->step(m, step, N, bm->row_sent, bm->row_from, bm->tok, &lp, err, errlen) != 0)
        return -1;
    int64_t nN = 0;
    int32_t *nrow_sent = malloc((size_t)N * sizeof(int32_t));
    int32_t *nrow_from = malloc((size_t)N * sizeof(int32_t));
    int32_t *ntok = malloc((size_t)N * sizeof(int32_t));
    if (!nrow_sent || !nrow_from || !ntok) {
        free(nrow_sent);
        free(nrow_from);
        free(ntok);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int64_t i = 0; i < B; i++) {
        struct sent *s = &ss[i];
        if (!s->active)
            continue;
        int64_t top = best_candidates(bm, s, step, lp, o);
        if (finalize(bm, s, step, top, o, err, errlen) != 0)
            rc = -1;
        if (s->nfin >= k || step >= s->max_len) {
            s->active = 0;
            continue;
        }
        extend(bm, s, i, step, top, nrow_sent, nrow_from, ntok, &nN);
    }
    memcpy(bm->row_sent, nrow_sent, (size_t)nN * sizeof(int32_t));
    memcpy(bm->row_from, nrow_from, (size_t)nN * sizeof(int32_t));
    memcpy(bm->tok, ntok, (size_t)nN * sizeof(int32_t));
    free(nrow_sent);
    free(nrow_from);
    free(ntok);
    int32_t *th = bm->hist;
    bm->hist = bm->nhist;
    bm->nhist = th;
    double *ts = bm->score;
    bm->score = bm->nscore;
    bm->nscore = ts;
    bm->N = nN;
    return rc;
}

/* fairseq's SequenceGenerator over B sentences (beam k): 2k candidates
 * per sentence each step; </s> among the first k finalizes a hypothesis
 * (score / len^lenpen), the first k others continue; a sentence is done
 * with k finalized hypotheses. Finished sentences leave the batch. */
static int search(const struct hg_task_gen *G, void *m, struct sent *ss, int64_t B,
                  const struct gopts *o, char *err, size_t errlen)
{
    struct beams bm;
    memset(&bm, 0, sizeof(bm));
    bm.k = o->beam;
    bm.V = G->vocab(m);
    int rc = beams_start(&bm, ss, B, err, errlen);
    for (int64_t step = 0; rc == 0 && bm.N > 0; step++)
        rc = search_step(G, m, &bm, ss, B, step, o, err, errlen);
    beams_free(&bm);
    return rc;
}

/* ids -> text: dictionary symbols joined by spaces (</s> and pads left
 * out), then BPE removed as fairseq's --remove-bpe ("@@ " joins; a final
 * "@@" dropped).  hgpreprocess translation tokenizes only by whitespace
 * and BPE, so nothing else is undone. */
static char *detok(const struct hg_dict *d, const int32_t *ids, int64_t n)
{
    size_t cap = 16, len = 0;
    for (int64_t i = 0; i < n; i++)
        cap += strlen(hg_dict_symbol(d, ids[i])) + 1;
    char *s = malloc(cap), *o = malloc(cap);
    if (!s || !o) {
        free(s);
        free(o);
        return NULL;
    }
    for (int64_t i = 0; i < n; i++) {
        if (ids[i] == HG_DICT_EOS || ids[i] == HG_DICT_PAD)
            continue;
        len += (size_t)sprintf(s + len, "%s%s", len ? " " : "", hg_dict_symbol(d, ids[i]));
    }
    s[len++] = ' ';
    s[len] = 0;
    size_t k = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '@' && s[i + 1] == '@' && s[i + 2] == ' ') {
            i += 2;
            continue;
        }
        o[k++] = s[i];
    }
    while (k > 0 && o[k - 1] == ' ')
        k--;
    o[k] = 0;
    free(s);
    return o;
}

static int read_lines(const char *path, char ***lines, int64_t *n, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "--ref %s: %s", path, strerror(errno));
        return -1;
    }
    size_t cap = 64;
    *n = 0;
    *lines = malloc(cap * sizeof(char *));
    char *line = NULL;
    size_t lc = 0;
    ssize_t got;
    while (*lines && (got = getline(&line, &lc, f)) >= 0) {
        while (got > 0 && (line[got - 1] == '\n' || line[got - 1] == '\r'))
            line[--got] = 0;
        if ((size_t)*n == cap) {
            cap *= 2;
            char **nl = realloc(*lines, cap * sizeof(char *));
            if (!nl)
                break;
            *lines = nl;
        }
        (*lines)[(*n)++] = strdup(line);
    }
    free(line);
    fclose(f);
    return 0;
}

static int by_len(const void *a, const void *b, void *arg)
{
    const struct sent *s = arg;
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    if (s[x].slen != s[y].slen)
        return s[x].slen < s[y].slen ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* What every batch of a run shares: the training run's options (from the
 * checkpoint), the model's limits, its dictionaries and, for raw text, the
 * data directory's BPE codes. */
struct gctx {
    const struct gopts *o;
    struct hg_opts to;
    char **av;                 /* the checkpoint's options as argv [ac] */
    int ac;
    struct hg_task_args ta;
    const struct hg_task *task; /* the checkpoint's, with a generation model */
    struct hg_dict *sd, *td;   /* source (text input only) and target */
    struct hg_bpe *bpe;        /* DATA/codes (text input only) */
    char **tok;                /* tokenizer scratch [tokcap] */
    size_t tokcap;
    int64_t max_src_pos, max_tgt_pos; /* </s> included */
    char slang[64], tlang[64];
    int64_t params;
    int announced;             /* the "| loaded" line printed */
    int64_t nsent, ntok;       /* decoded so far */
    double secs;               /* decoding time so far */
};

static void ctx_close(struct gctx *c)
{
    hg_dict_free(c->sd);
    hg_dict_free(c->td);
    hg_bpe_free(c->bpe);
    free(c->tok);
    hg_opts_free(&c->to);
    for (int i = 0; i < c->ac; i++)
        free(c->av[i]);
    free(c->av);
}

/* The checkpoint's parameters into every graph of the generation model
 * (its optimizer state is not needed). */
static int load_model(const struct hg_task_gen *G, void *m, const char *path, char *err,
                      size_t errlen)
{
    struct hg_graph *g[HG_TASK_GEN_MAX_GRAPHS];
    struct hg_exec *ex[HG_TASK_GEN_MAX_GRAPHS];
    int n = G->graphs(m, g, ex);
    for (int i = 0; i < n; i++) {
        struct hg_ckpt_meta meta;
        int rc = hg_ckpt_load(path, g[i], ex[i], 1, &meta, err, errlen);
        hg_ckpt_meta_free(&meta);
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* Reads the checkpoint's options, probes the model's limits and languages
 * and loads the dictionaries (text = 1: the source side and codes too). */
static int ctx_open(struct gctx *c, const struct gopts *o, int text, char *err, size_t errlen)
{
    memset(c, 0, sizeof(*c));
    c->o = o;
    struct hg_graph *empty = hg_graph_new();
    struct hg_ckpt_meta meta;
    int rc = hg_ckpt_load(o->path, empty, NULL, 1, &meta, err, errlen);
    hg_graph_free(empty);
    if (rc != 0) {
        char e2[ERRLEN];
        snprintf(e2, sizeof(e2), "--path: %s", err);
        snprintf(err, errlen, "%s", e2);
        hg_ckpt_meta_free(&meta);
        return -1;
    }
    if (!meta.options || split_words(meta.options, &c->av, &c->ac) != 0) {
        snprintf(err, errlen, "--path %s: the checkpoint holds no training options",
                 o->path);
        hg_ckpt_meta_free(&meta);
        return -1;
    }
    hg_ckpt_meta_free(&meta);
    const char *tname = hg_opts_peek_task(c->ac, c->av, NULL);
    c->task = tname ? hg_task_find(tname) : NULL;
    if (!c->task || !c->task->gen) {
        snprintf(err, errlen, "--path %s: a checkpoint of task '%s', not translation "
                 "(hgtrain generate translates: it needs a task with a generation "
                 "model)", o->path, tname ? tname : "none");
        return -1;
    }
    if (hg_opts_parse(&c->to, c->ac, c->av, c->task->options, NULL, err,
                      errlen) != 0) {
        char e2[ERRLEN];
        snprintf(e2, sizeof(e2), "--path %s: its saved options: %s", o->path, err);
        snprintf(err, errlen, "%s", e2);
        return -1;
    }
    if (o->threads > 0)
        hg_kernels_set_threads((int)o->threads);
    c->ta = (struct hg_task_args){.values = (const char *const *)c->to.task_vals_,
                                  .arch = c->to.arch};
    const struct hg_task_gen *G = c->task->gen;
    void *probe = NULL;
    struct hg_task_gen_cfg pc = {1, 1, 1, 1, o->incremental};
    if (G->open(&probe, o->data, &c->ta, &pc, err, errlen) != 0)
        return -1;
    c->max_src_pos = G->max_positions(probe, 0);
    c->max_tgt_pos = G->max_positions(probe, 1);
    c->params = G->params(probe);
    snprintf(c->slang, sizeof(c->slang), "%s", G->lang(probe, 0));
    snprintf(c->tlang, sizeof(c->tlang), "%s", G->lang(probe, 1));
    G->close(probe);
    char p[4096];
    snprintf(p, sizeof(p), "%s/dict.%s.txt", o->data, c->tlang);
    if (hg_dict_load(&c->td, p, NULL, 0, err, errlen) != 0)
        return -1;
    if (!text)
        return 0;
    snprintf(p, sizeof(p), "%s/dict.%s.txt", o->data, c->slang);
    if (hg_dict_load(&c->sd, p, NULL, 0, err, errlen) != 0)
        return -1;
    /* the codes hgpreprocess translation saved beside the dictionaries */
    snprintf(p, sizeof(p), "%s/codes", o->data);
    if (hg_bpe_load(&c->bpe, p, err, errlen) != 0) {
        char e2[ERRLEN];
        snprintf(e2, sizeof(e2), "--input needs the BPE codes of --data: %s", err);
        snprintf(err, errlen, "%s", e2);
        return -1;
    }
    return 0;
}

/* s's finalized hypotheses, best first (insertion: stable, k is small). */
static void sort_fin(struct sent *s)
{
    for (int i = 1; i < s->nfin; i++) {
        struct hypo h = s->fin[i];
        int j = i;
        while (j > 0 && s->fin[j - 1].score < h.score) {
            s->fin[j] = s->fin[j - 1];
            j--;
        }
        s->fin[j] = h;
    }
}

/* The printed lines of s: its --n-best hypotheses, each "score\t" first
 * with --print-scores (fairseq's score, base 2). */
static char *hyp_lines(const struct gctx *c, const struct sent *s)
{
    int64_t nb = c->o->nbest < s->nfin ? c->o->nbest : s->nfin;
    char **t = calloc((size_t)(nb > 0 ? nb : 1), sizeof(char *));
    size_t len = 1;
    int ok = t != NULL;
    for (int64_t q = 0; ok && q < nb; q++) {
        const struct hypo *h = &s->fin[q];
        char *d = detok(c->td, h->tok, h->len - 1);
        if (!d) {
            ok = 0;
            break;
        }
        if (c->o->print_scores) {
            char *w = malloc(strlen(d) + 32);
            if (w)
                sprintf(w, "%.4f\t%s", h->score / log(2.0), d);
            free(d);
            d = w;
        }
        t[q] = d;
        ok = d != NULL;
        len += d ? strlen(d) + 1 : 0;
    }
    char *out = ok ? malloc(len) : NULL;
    if (out) {
        size_t k = 0;
        for (int64_t q = 0; q < nb; q++) { /* the lines joined by '\n' */
            const size_t n = strlen(t[q]);
            if (q)
                out[k++] = '\n';
            memcpy(out + k, t[q], n);
            k += n;
        }
        out[k] = 0;
    }
    for (int64_t q = 0; t && q < nb; q++)
        free(t[q]);
    free(t);
    return out;
}

/* Lines for a sentence that was not translated: empty, --n-best of them. */
static char *empty_lines(int64_t nbest)
{
    char *s = malloc((size_t)nbest);
    if (s) {
        memset(s, '\n', (size_t)nbest - 1);
        s[nbest - 1] = 0;
    }
    return s;
}

/* Beam search over ss[0..n) but the refused ones (skip), in batches of
 * similar source length; best[i] gets sentence i's best hypothesis and
 * outs[i] its printed lines. */
static int decode(struct gctx *c, struct sent *ss, int64_t n, char **best, char **outs,
                  char *err, size_t errlen)
{
    const struct gopts *o = c->o;
    int64_t *order = malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t)); /* [m] to decode */
    if (!order) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int64_t m = 0, max_src = 1, max_steps = 1;
    for (int64_t i = 0; i < n; i++) {
        struct sent *s = &ss[i];
        if (s->skip) {
            if (!(best[i] = strdup("")) || !(outs[i] = empty_lines(o->nbest))) {
                free(order);
                snprintf(err, errlen, "out of memory");
                return -1;
            }
            continue;
        }
        /* fairseq: a * src_len + b (src_len with </s>), below the positions
         * (max positions - 1) */
        double ml = o->max_len_a * (double)s->slen + o->max_len_b;
        s->max_len = ml > (double)(1 << 20) ? 1 << 20 : (int64_t)ml;
        if (s->max_len > c->max_tgt_pos - 1)
            s->max_len = c->max_tgt_pos - 1;
        if (s->max_len < 1)
            s->max_len = 1;
        max_src = s->slen > max_src ? s->slen : max_src;
        max_steps = s->max_len + 1 > max_steps ? s->max_len + 1 : max_steps;
        order[m++] = i;
    }
    if (m == 0) {
        free(order);
        return 0;
    }
    qsort_r(order, (size_t)m, sizeof(int64_t), by_len, ss);
    int64_t batch = o->batch < m ? o->batch : m;
    const struct hg_task_gen *G = c->task->gen;
    struct hg_task_gen_cfg gc = {.max_sentences = batch, .max_rows = batch * o->beam,
                               .max_src = max_src, .max_steps = max_steps,
                               .incremental = o->incremental};
    void *g = NULL;
    struct sent *bs = malloc((size_t)batch * sizeof(struct sent)); /* [batch] */
    const int32_t **srcp = malloc((size_t)batch * sizeof(int32_t *)); /* [batch] */
    int32_t *lens = malloc((size_t)batch * sizeof(int32_t));            /* [batch] */
    int rc = -1;
    if (!bs || !srcp || !lens) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    if (G->open(&g, o->data, &c->ta, &gc, err, errlen) != 0 ||
        load_model(G, g, o->path, err, errlen) != 0)
        goto out;
    if (!c->announced) {
        fprintf(stderr, "| loaded %s: translation %s-%s, %lld parameters, %s decoding\n",
                o->path, c->slang, c->tlang, (long long)c->params,
                o->incremental ? "incremental" : "full-prefix");
        c->announced = 1;
    }
    double t0 = hg_now();
    for (int64_t b0 = 0; b0 < m; b0 += batch) {
        int64_t B = m - b0 < batch ? m - b0 : batch;
        for (int64_t i = 0; i < B; i++) {
            bs[i] = ss[order[b0 + i]];
            srcp[i] = bs[i].src;
            lens[i] = bs[i].slen;
        }
        if (G->encode(g, srcp, lens, B, err, errlen) != 0 ||
            search(G, g, bs, B, o, err, errlen) != 0)
            goto out;
        for (int64_t i = 0; i < B; i++) {
            struct sent *s = &bs[i];
            if (s->nfin == 0) { /* cannot happen: the last step forces </s> */
                snprintf(err, errlen, "sentence %lld: no hypothesis", (long long)s->idx);
                goto out;
            }
            sort_fin(s);
            struct hypo *h = &s->fin[0];
            int64_t at = order[b0 + i];
            best[at] = detok(c->td, h->tok, h->len - 1);
            outs[at] = hyp_lines(c, s);
            if (!best[at] || !outs[at]) {
                snprintf(err, errlen, "out of memory");
                goto out;
            }
            c->ntok += h->len;
            ss[at].fin_score = h->score;
            ss[at].fin_sum = h->sum;
            ss[at].fin_len = h->len;
            for (int q = 0; q < s->nfin; q++)
                free(s->fin[q].tok);
            free(s->fin);
            s->fin = NULL;
        }
    }
    c->secs += hg_now() - t0;
    c->nsent += m;
    rc = 0;
out:
    if (g)
        G->close(g);
    free(order);
    free(bs);
    free(srcp);
    free(lens);
    return rc;
}

static void print_speed(const struct gctx *c)
{
    double t = c->secs > 0 ? c->secs : 1e-9;
    fprintf(stderr, "| Translated %lld sentences (%lld tokens) in %.1fs (%.2f sentences/s, "
            "%.2f tokens/s)\n", (long long)c->nsent, (long long)c->ntok, c->secs,
            (double)c->nsent / t, (double)c->ntok / t);
}

static void print_score(const struct gopts *o, const char *what, struct hg_bleu_stats *bst,
                        struct hg_chrf_stats *cst)
{
    struct hg_bleu bl;
    hg_bleu_compute(bst, &bl);
    char line[512];
    hg_bleu_format(&bl, line, sizeof(line));
    fprintf(stderr, "| Generate %s with beam=%lld: %s\n", what, (long long)o->beam, line);
    fprintf(stderr, "| Generate %s with beam=%lld: chrF2 = %.2f\n", what,
            (long long)o->beam, hg_chrf_compute(cst));
}

/* Closes --results-path (*res, NULL: stdout) and forgets it; a failed
 * close (a full disk) is an error naming the file. */
static int close_results(FILE **res, const struct gopts *o, char *err, size_t errlen)
{
    if (!*res)
        return 0;
    int bad = fclose(*res) != 0;
    *res = NULL;
    if (bad)
        return hg_kerr(err, errlen, "--results-path %s: %s", o->results, strerror(errno));
    return 0;
}

static void free_strs(char **v, int64_t n)
{
    if (v)
        for (int64_t i = 0; i < n; i++)
            free(v[i]);
    free(v);
}

/* One raw input line to source ids: whitespace tokens, the codes, the
 * source dictionary, </s>. A line that cannot be translated is marked
 * skip with a message on stderr; only running out of memory fails. */
static int text_to_ids(struct gctx *c, char *line, const char *name, int64_t lineno,
                       struct sent *s, char *err, size_t errlen)
{
    int64_t nw = hg_text_split(line, &c->tok, &c->tokcap);
    size_t cap = 16, n = 0;
    int32_t *ids = malloc(cap * sizeof(int32_t));
    if (nw < 0 || !ids)
        goto oom;
    int64_t unk = 0;
    for (int64_t w = 0; w < nw; w++) {
        const int32_t *t;
        int k = hg_bpe_segment(c->bpe, c->tok[w], strlen(c->tok[w]), &t);
        if (k < 0)
            goto oom;
        if (n + (size_t)k + 1 > cap) {
            cap = 2 * (n + (size_t)k + 1);
            int32_t *v = realloc(ids, cap * sizeof(int32_t));
            if (!v)
                goto oom;
            ids = v;
        }
        for (int j = 0; j < k; j++) {
            ids[n] = hg_dict_index(c->sd, hg_bpe_token(c->bpe, t[j]),
                                   hg_bpe_token_len(c->bpe, t[j]));
            unk += ids[n++] == HG_DICT_UNK;
        }
    }
    ids[n++] = HG_DICT_EOS;
    s->src = ids;
    s->slen = (int32_t)n;
    if ((int64_t)n > c->max_src_pos) {
        fprintf(stderr, "%s: %s:%lld: %zu tokens after BPE (with </s>), more "
                "than the model's --max-source-positions %lld: not translated\n", gen_name, name,
                (long long)lineno, n, (long long)c->max_src_pos);
        s->skip = 1;
    } else if (unk > 0 && unk == (int64_t)n - 1) {
        fprintf(stderr, "%s: %s:%lld: every token is unknown to "
                "dict.%s.txt (translated as <unk>)\n", gen_name, name, (long long)lineno, c->slang);
    }
    return 0;
oom:
    free(ids);
    snprintf(err, errlen, "out of memory");
    return -1;
}

/* --input FILE|-: raw lines, translated --buffer-size lines at a time
 * (default: the whole input; one line at a time from a terminal). */
static int run_text(const struct gopts *o, char *err, size_t errlen)
{
    struct gctx c;
    FILE *in = NULL, *res = NULL;
    char **refs = NULL;
    int64_t nrefs = 0, total = 0;
    struct sent *ss = NULL;
    char **best = NULL, **outs = NULL;
    int64_t n = 0;
    struct hg_line_reader lr;
    memset(&lr, 0, sizeof(lr));
    struct hg_bleu_stats bst;
    struct hg_chrf_stats cst;
    memset(&bst, 0, sizeof(bst));
    memset(&cst, 0, sizeof(cst));
    int rc = -1;
    if (ctx_open(&c, o, 1, err, errlen) != 0)
        goto out;
    const int std_in = strcmp(o->input, "-") == 0;
    const char *name = std_in ? "<stdin>" : o->input;
    if (!(in = std_in ? stdin : fopen(o->input, "r"))) {
        snprintf(err, errlen, "--input %s: %s", o->input, strerror(errno));
        goto out;
    }
    if (o->ref && read_lines(o->ref, &refs, &nrefs, err, errlen) != 0)
        goto out;
    if (o->results && !(res = fopen(o->results, "w"))) {
        snprintf(err, errlen, "--results-path %s: %s", o->results, strerror(errno));
        goto out;
    }
    int64_t buffer = o->buffer > 0 ? o->buffer : isatty(fileno(in)) ? 1 : INT64_MAX;
    hg_line_reader_init(&lr, in, name);
    for (int eof = 0; !eof;) {
        size_t cap = 0;
        for (n = 0; n < buffer; n++) {
            char *line;
            size_t len;
            int got = hg_line_reader_next(&lr, &line, &len, err, errlen);
            if (got == 0) {
                eof = 1;
                break;
            }
            if ((size_t)n == cap) {
                cap = cap ? 2 * cap : 64;
                struct sent *v = realloc(ss, cap * sizeof(struct sent));
                if (!v)
                    goto oom;
                ss = v;
            }
            struct sent *s = &ss[n];
            memset(s, 0, sizeof(*s));
            s->idx = n;
            if (got < 0) {
                if (ferror(in))
                    goto out;
                /* bad bytes or a NUL: this line only */
                fprintf(stderr, "%s: %s: not translated\n", gen_name, err);
                s->skip = 1;
                continue;
            }
            if (text_to_ids(&c, line, name, lr.lineno, s, err, errlen) != 0) {
                n++;
                goto out;
            }
        }
        if (n == 0)
            break;
        if (!(best = calloc((size_t)n, sizeof(char *))) ||
            !(outs = calloc((size_t)n, sizeof(char *))))
            goto oom;
        if (decode(&c, ss, n, best, outs, err, errlen) != 0)
            goto out;
        for (int64_t i = 0; i < n; i++) {
            fprintf(res ? res : stdout, "%s\n", outs[i]);
            if (refs && total + i < nrefs &&
                (hg_bleu_add(&bst, best[i], refs[total + i]) != 0 ||
                 hg_chrf_add(&cst, best[i], refs[total + i]) != 0))
                goto oom;
        }
        fflush(res ? res : stdout);
        total += n;
        for (int64_t i = 0; i < n; i++)
            free(ss[i].src);
        free_strs(best, n);
        free_strs(outs, n);
        best = outs = NULL;
        n = 0;
    }
    if (close_results(&res, o, err, errlen) != 0)
        goto out;
    print_speed(&c);
    if (refs) {
        if (nrefs != total) {
            snprintf(err, errlen, "--ref %s has %lld lines but --input %s had %lld",
                     o->ref, (long long)nrefs, name, (long long)total);
            goto out;
        }
        print_score(o, name, &bst, &cst);
    }
    rc = 0;
    goto out;
oom:
    snprintf(err, errlen, "out of memory");
out:
    if (res)
        fclose(res);
    if (in && in != stdin)
        fclose(in);
    hg_line_reader_free(&lr);
    for (int64_t i = 0; ss && i < n; i++)
        free(ss[i].src);
    free(ss);
    free_strs(best, best ? n : 0);
    free_strs(outs, outs ? n : 0);
    free_strs(refs, nrefs);
    ctx_close(&c);
    return rc;
}

/* --gen-subset SPLIT of --data: scored against its target side (or --ref). */
static int run_split(const struct gopts *o, char *err, size_t errlen)
{
    struct gctx c;
    struct hg_dataset *ds = NULL;
    struct sent *ss = NULL;
    char **outs = NULL, **best = NULL, **refs = NULL;
    int64_t n = 0, nrefs = 0;
    FILE *res = NULL, *sc = NULL;
    int rc = -1;
    if (ctx_open(&c, o, 0, err, errlen) != 0)
        goto out;
    char spec[4096];
    snprintf(spec, sizeof(spec), "%s/%s", o->data, o->subset);
    if (hg_dataset_open(&ds, spec, c.task->fields, c.task->nfields,
                        0, err, errlen) != 0)
        goto out;
    n = hg_dataset_size(ds);
    if (n < 1) {
        snprintf(err, errlen, "--gen-subset %s: %.900s holds no sentences", o->subset, spec);
        goto out;
    }
    ss = calloc((size_t)n, sizeof(struct sent));
    outs = calloc((size_t)n, sizeof(char *));
    best = calloc((size_t)n, sizeof(char *));
    if (!ss || !outs || !best)
        goto oom;
    const int32_t *ls = hg_dataset_lengths(ds, 0), *lt = hg_dataset_lengths(ds, 1);
    for (int64_t i = 0; i < n; i++) {
        struct sent *s = &ss[i];
        s->idx = i;
        s->slen = ls[i];
        s->tlen = lt[i];
        s->src = malloc(((size_t)ls[i] + 1) * sizeof(int32_t));
        s->tgt = malloc(((size_t)lt[i] + 1) * sizeof(int32_t));
        if (!s->src || !s->tgt)
            goto oom;
        int64_t cnt;
        if (hg_dataset_read(ds, 0, i, s->src, ((size_t)ls[i] + 1) * sizeof(int32_t), &cnt,
                            err, errlen) != 0 ||
            hg_dataset_read(ds, 1, i, s->tgt, ((size_t)lt[i] + 1) * sizeof(int32_t), &cnt,
                            err, errlen) != 0)
            goto out;
        if (s->slen < 1) { /* an empty source: just </s> */
            s->src[0] = HG_DICT_EOS;
            s->slen = 1;
        }
        if (s->slen > c.max_src_pos) {
            snprintf(err, errlen, "--gen-subset %s: sentence %lld has %d tokens, more than "
                     "the model's --max-source-positions %lld", o->subset, (long long)i,
                     s->slen, (long long)c.max_src_pos);
            goto out;
        }
    }
    if (o->ref) {
        if (read_lines(o->ref, &refs, &nrefs, err, errlen) != 0)
            goto out;
        if (nrefs != n) {
            snprintf(err, errlen, "--ref %s has %lld lines but --gen-subset %s has %lld "
                     "sentences", o->ref, (long long)nrefs, o->subset, (long long)n);
            goto out;
        }
    }
    if (o->results && !(res = fopen(o->results, "w"))) {
        snprintf(err, errlen, "--results-path %s: %s", o->results, strerror(errno));
        goto out;
    }
    if (o->scores && !(sc = fopen(o->scores, "w"))) {
        snprintf(err, errlen, "--scores-path %s: %s", o->scores, strerror(errno));
        goto out;
    }
    if (decode(&c, ss, n, best, outs, err, errlen) != 0)
        goto out;
    if (sc) { /* input order: id, fairseq's score (base 2), sum of ln p, tokens */
        for (int64_t i = 0; i < n; i++)
            fprintf(sc, "%lld\t%.6f\t%.6f\t%lld\n", (long long)i,
                    ss[i].fin_score / log(2.0), ss[i].fin_sum, (long long)ss[i].fin_len);
        int bad = fclose(sc) != 0;
        sc = NULL;
        if (bad) {
            snprintf(err, errlen, "--scores-path %s: %s", o->scores, strerror(errno));
            goto out;
        }
    }
    struct hg_bleu_stats bst;
    struct hg_chrf_stats cst;
    memset(&bst, 0, sizeof(bst));
    memset(&cst, 0, sizeof(cst));
    for (int64_t i = 0; i < n; i++) {
        fprintf(res ? res : stdout, "%s\n", outs[i]);
        char *ref = refs ? refs[i] : detok(c.td, ss[i].tgt, ss[i].tlen);
        if (!ref || hg_bleu_add(&bst, best[i], ref) != 0 || hg_chrf_add(&cst, best[i], ref) != 0)
            goto oom;
        if (!refs)
            free(ref);
    }
    if (close_results(&res, o, err, errlen) != 0)
        goto out;
    fflush(stdout);
    print_speed(&c);
    print_score(o, o->subset, &bst, &cst);
    rc = 0;
    goto out;
oom:
    snprintf(err, errlen, "out of memory");
out:
    if (res)
        fclose(res);
    if (sc)
        fclose(sc);
    if (ss)
        for (int64_t i = 0; i < n; i++) {
            free(ss[i].src);
            free(ss[i].tgt);
        }
    free(ss);
    free_strs(outs, n);
    free_strs(best, n);
    free_strs(refs, nrefs);
    hg_dataset_close(ds);
    ctx_close(&c);
    return rc;
}

int hg_generate_main(int argc, char **argv)
{
    char err[ERRLEN] = "";
    struct gopts o;
    memset(&o, 0, sizeof(o));
    struct hg_opt_prog p;
    prog_init(&p, &o);
    int rc = 0;
    if (parse(&p, &o, argc, argv, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s: %s\n%s", gen_name, err, usage);
        rc = 2;
    } else if (o.help) {
        hg_opt_help(stdout, &p);
    } else if (o.version) {
        hg_print_version("hgtrain");
    } else if (hg_kernels_init(err, sizeof(err)) != 0 ||
               (o.input ? run_text(&o, err, sizeof(err)) : run_split(&o, err, sizeof(err))) !=
                   0) {
        fprintf(stderr, "%s: %s\n", gen_name, err);
        rc = 1;
    }
    hg_opt_free(&p);
    return rc;
}

int hg_interactive_main(int argc, char **argv)
{
    /* generate with --input - in front: a later --input wins */
    char **av = malloc(((size_t)argc + 3) * sizeof(char *));
    if (!av) {
        fprintf(stderr, "hgtrain interactive: out of memory\n");
        return 1;
    }
    av[0] = argv[0];
    av[1] = "--input";
    av[2] = "-";
    for (int i = 1; i < argc; i++)
        av[i + 2] = argv[i];
    av[argc + 2] = NULL;
    gen_name = "hgtrain interactive";
    int rc = hg_generate_main(argc + 2, av);
    gen_name = "hgtrain generate";
    free(av);
    return rc;
}
