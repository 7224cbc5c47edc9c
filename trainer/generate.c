/* generate.c - `hgtrain generate`: translate a split of a `hgpreprocess
 * translation` directory with a trained checkpoint, as fairseq-generate:
 *
 *   hgtrain generate --data DIR --path CHECKPOINT [--gen-subset test]
 *       [--beam 5] [--lenpen 1] [--max-len-a 0] [--max-len-b 200]
 *       [--min-len 1] [--batch-size 32] [--results-path FILE]
 *       [--ref FILE] [--scores-path FILE] [--threads N] [--remove-bpe]
 *       [--score] [--no-incremental]
 *
 * The checkpoint's saved options give --arch and the task options; the
 * model is rebuilt forward-only (tasks/translation.h) and decoded with
 * fairseq's SequenceGenerator beam search and incremental (cached
 * keys/values) decoding. Output: one detokenized hypothesis per source
 * line, in input order; then BLEU and chrF against the references (the
 * split's target side, or --ref FILE: raw reference lines). */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controller/hg_controller.h"
#include "data/bleu.h"
#include "data/dict.h"
#include "tasks/translation.h"
#include "trainer/generate.h"
#include "trainer/options.h"

#define ERRLEN 1024

struct gopts {
    const char *data, *path, *subset, *results, *ref, *scores;
    int64_t beam, batch, min_len, threads;
    double lenpen, max_len_a, max_len_b;
    int incremental;
};

static const char usage[] =
    "usage: hgtrain generate --data DIR --path CHECKPOINT [--gen-subset test]\n"
    "    [--beam 5] [--lenpen 1] [--max-len-a 0] [--max-len-b 200] [--min-len 1]\n"
    "    [--batch-size 32 | --max-sentences 32] [--results-path FILE] [--ref FILE]\n"
    "    [--scores-path FILE] [--threads N] [--remove-bpe] [--score]\n"
    "    [--no-incremental]\n";

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int num(const char *name, const char *v, double lo, double hi, int integer,
               double *out, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || *end || !(x >= lo && x <= hi) ||
        (integer && x != floor(x))) {
        snprintf(err, errlen, "--%s: expected %s in [%g,%g], got '%s'", name,
                 integer ? "an integer" : "a number", lo, hi, v);
        return -1;
    }
    *out = x;
    return 0;
}

static int parse(struct gopts *o, int argc, char **argv, char *err, size_t errlen)
{
    *o = (struct gopts){.subset = "test", .beam = 5, .batch = 32, .min_len = 1,
                        .lenpen = 1, .max_len_a = 0, .max_len_b = 200, .incremental = 1};
    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        if (strncmp(a, "--", 2) != 0) {
            snprintf(err, errlen, "unexpected argument '%s'", a);
            return -1;
        }
        a += 2;
        char *eq = strchr(a, '=');
        char name[64];
        snprintf(name, sizeof(name), "%.*s", eq ? (int)(eq - a) : (int)strlen(a), a);
        if (strcmp(name, "remove-bpe") == 0 || strcmp(name, "score") == 0 ||
            strcmp(name, "quiet") == 0)
            continue; /* always on: BPE is removed and the score printed */
        if (strcmp(name, "no-incremental") == 0) {
            o->incremental = 0;
            continue;
        }
        if (strcmp(name, "help") == 0) {
            snprintf(err, errlen, "help");
            return -1;
        }
        const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (!v) {
            snprintf(err, errlen, "--%s needs a value", name);
            return -1;
        }
        double x;
        if (strcmp(name, "data") == 0)
            o->data = v;
        else if (strcmp(name, "path") == 0)
            o->path = v;
        else if (strcmp(name, "gen-subset") == 0)
            o->subset = v;
        else if (strcmp(name, "results-path") == 0)
            o->results = v;
        else if (strcmp(name, "ref") == 0)
            o->ref = v;
        else if (strcmp(name, "scores-path") == 0)
            o->scores = v;
        else if (strcmp(name, "beam") == 0) {
            if (num(name, v, 1, 1024, 1, &x, err, errlen))
                return -1;
            o->beam = (int64_t)x;
        } else if (strcmp(name, "batch-size") == 0 || strcmp(name, "max-sentences") == 0) {
            if (num(name, v, 1, 1 << 20, 1, &x, err, errlen))
                return -1;
            o->batch = (int64_t)x;
        } else if (strcmp(name, "min-len") == 0) {
            if (num(name, v, 0, 1 << 20, 1, &x, err, errlen))
                return -1;
            o->min_len = (int64_t)x;
        } else if (strcmp(name, "threads") == 0) {
            if (num(name, v, 0, 4096, 1, &x, err, errlen))
                return -1;
            o->threads = (int64_t)x;
        } else if (strcmp(name, "lenpen") == 0) {
            if (num(name, v, -100, 100, 0, &o->lenpen, err, errlen))
                return -1;
        } else if (strcmp(name, "max-len-a") == 0) {
            if (num(name, v, 0, 1e6, 0, &o->max_len_a, err, errlen))
                return -1;
        } else if (strcmp(name, "max-len-b") == 0) {
            if (num(name, v, 0, 1e6, 1, &o->max_len_b, err, errlen))
                return -1;
        } else {
            snprintf(err, errlen, "--%s: unknown option of hgtrain generate", name);
            return -1;
        }
    }
    if (!o->data || !o->path) {
        snprintf(err, errlen, "--data and --path are required");
        return -1;
    }
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

/* fairseq's SequenceGenerator over B sentences (beam k): 2k candidates
 * per sentence each step; </s> among the first k finalizes a hypothesis
 * (score / len^lenpen), the first k others continue; a sentence is done
 * with k finalized hypotheses. Finished sentences leave the batch. */
static int search(struct hg_tr_gen *m, struct sent *ss, int64_t B, const struct gopts *o,
                  char *err, size_t errlen)
{
    const int64_t k = o->beam, V = hg_tr_gen_vocab(m);
    int64_t steps = 0;
    for (int64_t i = 0; i < B; i++)
        steps = ss[i].max_len + 1 > steps ? ss[i].max_len + 1 : steps;
    const size_t rows = (size_t)(B * k);
    int32_t *row_sent = malloc(rows * sizeof(int32_t)), *row_from = malloc(rows * sizeof(int32_t));
    int32_t *tok = malloc(rows * sizeof(int32_t));
    int32_t *hist = malloc(rows * (size_t)steps * sizeof(int32_t));
    int32_t *nhist = malloc(rows * (size_t)steps * sizeof(int32_t));
    double *score = calloc(rows, sizeof(double)), *nscore = calloc(rows, sizeof(double));
    struct cand *c = malloc((size_t)(2 * k + 1) * sizeof(struct cand));
    int rc = 0;
    if (!row_sent || !row_from || !tok || !hist || !nhist || !score || !nscore || !c) {
        rc = -1;
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    for (int64_t i = 0; i < B; i++) {
        ss[i].active = 1;
        ss[i].nfin = 0;
        ss[i].fin = calloc((size_t)k, sizeof(struct hypo));
        if (!ss[i].fin) {
            rc = -1;
            snprintf(err, errlen, "out of memory");
            goto done;
        }
    }
    /* step 0: k rows per sentence, all </s> */
    int64_t N = 0;
    for (int64_t i = 0; i < B; i++) {
        ss[i].base = N;
        ss[i].nbeam = k;
        for (int64_t j = 0; j < k; j++, N++) {
            row_sent[N] = (int32_t)i;
            row_from[N] = (int32_t)N;
            tok[N] = HG_DICT_EOS;
            hist[(size_t)N * (size_t)steps] = HG_DICT_EOS;
            score[N] = 0;
        }
    }
    for (int64_t step = 0; N > 0; step++) {
        const float *lp;
        if (hg_tr_gen_step(m, step, N, row_sent, row_from, tok, &lp, err, errlen) != 0) {
            rc = -1;
            goto done;
        }
        int64_t nN = 0;
        int32_t *nrow_sent = malloc((size_t)N * sizeof(int32_t));
        int32_t *nrow_from = malloc((size_t)N * sizeof(int32_t));
        int32_t *ntok = malloc((size_t)N * sizeof(int32_t));
        if (!nrow_sent || !nrow_from || !ntok) {
            free(nrow_sent);
            free(nrow_from);
            free(ntok);
            rc = -1;
            snprintf(err, errlen, "out of memory");
            goto done;
        }
        for (int64_t i = 0; i < B; i++) {
            struct sent *s = &ss[i];
            if (!s->active)
                continue;
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
                    struct cand x1 = {(float)(score[r] + (double)x), (int32_t)j, (int32_t)v};
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
            int64_t top = nc;
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
                    rc = -1;
                    snprintf(err, errlen, "out of memory");
                    break;
                }
                for (int64_t t = 0; t < step; t++)
                    h->tok[t] = hist[(size_t)r * (size_t)steps + (size_t)t + 1];
            }
            if (s->nfin >= k || step >= s->max_len) {
                s->active = 0;
                continue;
            }
            int64_t base = nN;
            for (int64_t q = 0; q < top && nN - base < k; q++) {
                if (c[q].tok == HG_DICT_EOS)
                    continue;
                int64_t r = s->base + c[q].beam;
                nrow_sent[nN] = (int32_t)i;
                nrow_from[nN] = (int32_t)r;
                ntok[nN] = c[q].tok;
                nscore[nN] = c[q].score;
                memcpy(nhist + (size_t)nN * (size_t)steps, hist + (size_t)r * (size_t)steps,
                       (size_t)(step + 1) * sizeof(int32_t));
                nhist[(size_t)nN * (size_t)steps + (size_t)step + 1] = c[q].tok;
                nN++;
            }
            s->base = base;
            s->nbeam = nN - base;
            if (s->nbeam == 0) /* nothing left to extend */
                s->active = 0;
        }
        memcpy(row_sent, nrow_sent, (size_t)nN * sizeof(int32_t));
        memcpy(row_from, nrow_from, (size_t)nN * sizeof(int32_t));
        memcpy(tok, ntok, (size_t)nN * sizeof(int32_t));
        free(nrow_sent);
        free(nrow_from);
        free(ntok);
        int32_t *th = hist;
        hist = nhist;
        nhist = th;
        double *ts = score;
        score = nscore;
        nscore = ts;
        N = nN;
        if (rc != 0)
            goto done;
    }
done:
    free(row_sent);
    free(row_from);
    free(tok);
    free(hist);
    free(nhist);
    free(score);
    free(nscore);
    free(c);
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

static int run(const struct gopts *o, char *err, size_t errlen)
{
    /* the training run's options, from the checkpoint */
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
    char **av = NULL;
    int ac = 0;
    if (!meta.options || split_words(meta.options, &av, &ac) != 0) {
        snprintf(err, errlen, "--path %s: the checkpoint holds no training options",
                 o->path);
        hg_ckpt_meta_free(&meta);
        return -1;
    }
    hg_ckpt_meta_free(&meta);
    struct hg_opts to;
    memset(&to, 0, sizeof(to));
    const char *tname = hg_opts_peek_task(ac, av, NULL);
    struct hg_tr_gen *m = NULL;
    struct hg_dict *dt = NULL;
    struct hg_dataset *ds = NULL;
    struct sent *ss = NULL;
    char **outs = NULL, **refs = NULL;
    int64_t n = 0, nrefs = 0;
    FILE *res = NULL, *sc = NULL;
    rc = -1;
    if (!tname || strcmp(tname, "translation") != 0) {
        snprintf(err, errlen, "--path %s: a checkpoint of task '%s', not translation "
                 "(hgtrain generate translates)", o->path, tname ? tname : "none");
        goto out;
    }
    if (hg_opts_parse(&to, ac, av, hg_task_translation.options, NULL, err, errlen) != 0) {
        char e2[ERRLEN];
        snprintf(e2, sizeof(e2), "--path %s: its saved options: %s", o->path, err);
        snprintf(err, errlen, "%s", e2);
        goto out;
    }
    if (o->threads > 0)
        hg_kernels_set_threads((int)o->threads);
    /* the split */
    char spec[4096];
    snprintf(spec, sizeof(spec), "%s/%s", o->data, o->subset);
    if (hg_dataset_open(&ds, spec, hg_task_translation.fields, hg_task_translation.nfields,
                        0, err, errlen) != 0)
        goto out;
    n = hg_dataset_size(ds);
    if (n < 1) {
        snprintf(err, errlen, "--gen-subset %s: %.900s holds no sentences", o->subset, spec);
        goto out;
    }
    ss = calloc((size_t)n, sizeof(struct sent));
    outs = calloc((size_t)n, sizeof(char *));
    if (!ss || !outs)
        goto oom;
    const int32_t *ls = hg_dataset_lengths(ds, 0), *lt = hg_dataset_lengths(ds, 1);
    int64_t max_src = 1, max_steps = 1;
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
        /* fairseq: a * src_len + b (src_len with </s>), below the positions */
        s->max_len = (int64_t)(o->max_len_a * (double)s->slen + o->max_len_b);
        max_src = s->slen > max_src ? s->slen : max_src;
    }
    struct hg_task_args ta = {.values = (const char *const *)to.task_vals_, .arch = to.arch};
    /* the largest plan this split needs */
    int64_t cap_len = 1 << 20;
    for (int64_t i = 0; i < n; i++) {
        if (ss[i].max_len > cap_len)
            ss[i].max_len = cap_len;
        if (ss[i].max_len < 1)
            ss[i].max_len = 1;
        max_steps = ss[i].max_len + 1 > max_steps ? ss[i].max_len + 1 : max_steps;
    }
    int64_t batch = o->batch < n ? o->batch : n;
    struct hg_tr_gen_cfg gc = {.max_sentences = batch, .max_rows = batch * o->beam,
                               .max_src = max_src, .max_steps = max_steps,
                               .incremental = o->incremental};
    /* --max-target-positions bounds the steps (fairseq: max positions - 1) */
    {
        struct hg_tr_gen *probe = NULL;
        struct hg_tr_gen_cfg pc = {1, 1, max_src, 1, o->incremental};
        if (hg_tr_gen_new(&probe, o->data, &ta, &pc, err, errlen) != 0)
            goto out;
        int64_t mp = hg_tr_gen_max_positions(probe) - 1;
        hg_tr_gen_free(probe);
        if (max_steps > mp + 1) {
            max_steps = mp + 1;
            for (int64_t i = 0; i < n; i++)
                ss[i].max_len = ss[i].max_len < mp ? ss[i].max_len : mp;
            gc.max_steps = max_steps;
        }
    }
    if (hg_tr_gen_new(&m, o->data, &ta, &gc, err, errlen) != 0 ||
        hg_tr_gen_load(m, o->path, err, errlen) != 0)
        goto out;
    char dpath[4096];
    snprintf(dpath, sizeof(dpath), "%s/dict.%s.txt", o->data, hg_tr_gen_lang(m, 1));
    if (hg_dict_load(&dt, dpath, NULL, 0, err, errlen) != 0)
        goto out;
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
    fprintf(stderr, "| loaded %s: translation %s-%s, %lld parameters, %s decoding\n",
            o->path, hg_tr_gen_lang(m, 0), hg_tr_gen_lang(m, 1),
            (long long)hg_tr_gen_params(m), o->incremental ? "incremental" : "full-prefix");
    /* batches of similar source length */
    int64_t *order = malloc((size_t)n * sizeof(int64_t));
    if (!order)
        goto oom;
    for (int64_t i = 0; i < n; i++)
        order[i] = i;
    qsort_r(order, (size_t)n, sizeof(int64_t), by_len, ss);
    double t0 = now();
    int64_t ntok = 0;
    struct sent *bs = malloc((size_t)batch * sizeof(struct sent));
    const int32_t **srcp = malloc((size_t)batch * sizeof(int32_t *));
    int32_t *lens = malloc((size_t)batch * sizeof(int32_t));
    if (!bs || !srcp || !lens) {
        free(order);
        free(bs);
        free(srcp);
        free(lens);
        goto oom;
    }
    int brc = 0;
    for (int64_t b0 = 0; b0 < n && brc == 0; b0 += batch) {
        int64_t B = n - b0 < batch ? n - b0 : batch;
        for (int64_t i = 0; i < B; i++) {
            bs[i] = ss[order[b0 + i]];
            srcp[i] = bs[i].src;
            lens[i] = bs[i].slen;
        }
        if (hg_tr_gen_encode(m, srcp, lens, B, err, errlen) != 0 ||
            search(m, bs, B, o, err, errlen) != 0) {
            brc = -1;
            break;
        }
        for (int64_t i = 0; i < B; i++) {
            struct sent *s = &bs[i];
            int best = 0;
            for (int h = 1; h < s->nfin; h++)
                if (s->fin[h].score > s->fin[best].score)
                    best = h;
            if (s->nfin == 0) { /* cannot happen: the last step forces </s> */
                snprintf(err, errlen, "sentence %lld: no hypothesis", (long long)s->idx);
                brc = -1;
                break;
            }
            struct hypo *h = &s->fin[best];
            outs[s->idx] = detok(dt, h->tok, h->len - 1);
            ntok += h->len;
            ss[s->idx].fin_score = h->score;
            ss[s->idx].fin_sum = h->sum;
            ss[s->idx].fin_len = h->len;
            for (int q = 0; q < s->nfin; q++)
                free(s->fin[q].tok);
            free(s->fin);
            s->fin = NULL;
        }
    }
    free(order);
    free(bs);
    free(srcp);
    free(lens);
    if (brc != 0)
        goto out;
    double dt_s = now() - t0;
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
        if (!outs[i])
            goto oom;
        fprintf(res ? res : stdout, "%s\n", outs[i]);
        char *ref = refs ? refs[i] : detok(dt, ss[i].tgt, ss[i].tlen);
        if (!ref || hg_bleu_add(&bst, outs[i], ref) != 0 || hg_chrf_add(&cst, outs[i], ref) != 0)
            goto oom;
        if (!refs)
            free(ref);
    }
    if (res && fclose(res) != 0) {
        res = NULL;
        snprintf(err, errlen, "--results-path %s: %s", o->results, strerror(errno));
        goto out;
    }
    res = NULL;
    fflush(stdout);
    struct hg_bleu bl;
    hg_bleu_compute(&bst, &bl);
    char line[512];
    hg_bleu_format(&bl, line, sizeof(line));
    fprintf(stderr, "| Translated %lld sentences (%lld tokens) in %.1fs (%.2f sentences/s, "
            "%.2f tokens/s)\n", (long long)n, (long long)ntok, dt_s, (double)n / dt_s,
            (double)ntok / dt_s);
    fprintf(stderr, "| Generate %s with beam=%lld: %s\n", o->subset, (long long)o->beam, line);
    fprintf(stderr, "| Generate %s with beam=%lld: chrF2 = %.2f\n", o->subset,
            (long long)o->beam, hg_chrf_compute(&cst));
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
    if (outs)
        for (int64_t i = 0; i < n; i++)
            free(outs[i]);
    free(outs);
    if (refs)
        for (int64_t i = 0; i < nrefs; i++)
            free(refs[i]);
    free(refs);
    hg_dict_free(dt);
    hg_dataset_close(ds);
    hg_tr_gen_free(m);
    hg_opts_free(&to);
    for (int i = 0; i < ac; i++)
        free(av[i]);
    free(av);
    return rc;
}

int hg_generate_main(int argc, char **argv)
{
    char err[ERRLEN] = "";
    struct gopts o;
    if (parse(&o, argc, argv, err, sizeof(err)) != 0) {
        if (strcmp(err, "help") == 0) {
            fputs(usage, stdout);
            return 0;
        }
        fprintf(stderr, "hgtrain generate: %s\n%s", err, usage);
        return 2;
    }
    if (hg_kernels_init(err, sizeof(err)) != 0) {
        fprintf(stderr, "hgtrain generate: %s\n", err);
        return 1;
    }
    if (run(&o, err, sizeof(err)) != 0) {
        fprintf(stderr, "hgtrain generate: %s\n", err);
        return 1;
    }
    return 0;
}
