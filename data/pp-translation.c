/* pp-translation.c - `hgpreprocess translation`: line-aligned parallel text
 * to fairseq-style training data: joint BPE codes (learned or given),
 * source and target dictionaries (made or given) and each split's shards
 * of `src`/`tgt` id sequences, in three passes over the text (check and
 * count words; segment the training data and count tokens; write). Its own
 * file, as each command is (data/hgpreprocess.c lists them); what the
 * commands share is in data/pp-common.c. docs/preprocess.md. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
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

/* Called per aligned line pair; lines are writable. 0 or -1. */
typedef int (*pair_fn)(void *ctx, char *src, char *tgt, char *err,
                       size_t errlen);

/* Reads sp and tp in step, checking UTF-8 and that they have the same
 * number of lines; *n = that number. fn may be NULL. */
static int read_pairs(const char *sp, const char *tp, int64_t *n, pair_fn fn,
                      void *ctx, struct progress *pg, char *err, size_t errlen)
{
    FILE *fs = hg__pp_open_text(sp, err, errlen);
    if (!fs)
        return -1;
    FILE *ft = hg__pp_open_text(tp, err, errlen);
    if (!ft) {
        fclose(fs);
        return -1;
    }
    struct hg_line_reader rs, rt;
    hg_line_reader_init(&rs, fs, sp);
    hg_line_reader_init(&rt, ft, tp);
    int rc = 0;
    char *ls, *lt;
    size_t ns, nt;
    for (;;) {
        int a = hg_line_reader_next(&rs, &ls, &ns, err, errlen);
        if (a < 0) {
            rc = -1;
            break;
        }
        int b = hg_line_reader_next(&rt, &lt, &nt, err, errlen);
        if (b < 0) {
            rc = -1;
            break;
        }
        if (a == 0 || b == 0) {
            /* count what is left of the longer file */
            struct hg_line_reader *r = a ? &rs : &rt;
            int more = a || b;
            while (more == 1)
                more = hg_line_reader_next(r, &ls, &ns, err, errlen);
            if (more < 0)
                rc = -1;
            else if (rs.lineno != rt.lineno)
                rc = hg_kerr(err, errlen,
                             "%s has %" PRId64 " lines but %s has %" PRId64
                             " lines: the files must be line-aligned",
                             sp, rs.lineno, tp, rt.lineno);
            break;
        }
        if (fn && fn(ctx, ls, lt, err, errlen)) {
            rc = -1;
            break;
        }
        if (pg)
            hg__pp_progress_tick(pg, rs.lineno);
    }
    *n = rs.lineno;
    hg_line_reader_free(&rs);
    hg_line_reader_free(&rt);
    fclose(fs);
    fclose(ft);
    return rc;
}

struct tsplit {
    const char *name;  /* train, valid, test */
    char *src, *tgt;   /* file paths */
    int64_t lines;     /* from pass 1 */
    int64_t kept;      /* after --max-len (train only) */
    int nshards;
};

struct tctx {
    struct textctx t;
    int64_t max_len;
    struct ivec s, g;          /* BPE ids of the current pair */
    int64_t *scnt, *gcnt;      /* train token counts by BPE id */
    size_t nscnt, ngcnt;
    int64_t kept, skipped, src_tokens, tgt_tokens, src_unk, tgt_unk;
    struct hg_dict *sd, *gd;
    struct idmap sm, gm;
    struct ivec ws, wg;        /* dictionary ids + </s> */
    /* pass 3 */
    struct tsplit *split;
    int shard;
    int64_t index;             /* kept pairs so far in this split */
    struct shard_out so;
    char *dir;
    struct progress pg;
};

static const struct hg_field tfields[2] = {
    {.name = "src", .kind = HG_FIELD_SEQ, .dtype = HG_I32, .rank = 1},
    {.name = "tgt", .kind = HG_FIELD_SEQ, .dtype = HG_I32, .rank = 1},
};

static int t_learn_words(void *ctx, char *src, char *tgt, char *err,
                         size_t errlen)
{
    struct tctx *c = ctx;
    if (hg__pp_add_words(&c->t, src, err, errlen) || hg__pp_add_words(&c->t, tgt, err, errlen))
        return -1;
    return 0;
}

/* Segments both sides into c->s, c->g; 1 if the pair is kept. */
static int t_segment(struct tctx *c, char *src, char *tgt, int filter,
                     char *err, size_t errlen)
{
    c->s.n = c->g.n = 0;
    if (hg__pp_segment_line(&c->t, src, &c->s, err, errlen) ||
        hg__pp_segment_line(&c->t, tgt, &c->g, err, errlen))
        return -1;
    if (filter && c->max_len > 0 &&
        ((int64_t)c->s.n > c->max_len || (int64_t)c->g.n > c->max_len))
        return 0;
    return 1;
}

static int t_count(void *ctx, char *src, char *tgt, char *err, size_t errlen)
{
    struct tctx *c = ctx;
    int k = t_segment(c, src, tgt, 1, err, errlen);
    if (k < 0)
        return -1;
    if (k == 0) {
        c->skipped++;
        return 0;
    }
    c->kept++;
    if (hg__pp_count_tokens(&c->scnt, &c->nscnt, c->t.bpe, &c->s) ||
        hg__pp_count_tokens(&c->gcnt, &c->ngcnt, c->t.bpe, &c->g))
        return hg_kerr(err, errlen, "out of memory");
    return 0;
}

static int to_ids(struct idmap *m, const struct hg_bpe *b,
                  const struct hg_dict *d, const struct ivec *in,
                  struct ivec *out, int64_t *unk)
{
    out->n = 0;
    if (hg__pp_ivec_reserve(out, in->n + 1))
        return -1;
    for (size_t i = 0; i < in->n; i++) {
        int32_t id;
        if (hg__pp_idmap_get(m, b, d, in->v[i], &id))
            return -1;
        *unk += id == HG_DICT_UNK;
        out->v[out->n++] = id;
    }
    out->v[out->n++] = HG_DICT_EOS;
    return 0;
}

static int t_open_shard(struct tctx *c, char *err, size_t errlen)
{
    char name[32];
    snprintf(name, sizeof(name), "shard-%05d.h5", c->shard);
    char *p = hg__pp_path_join(c->dir, name);
    int rc = hg__pp_shard_open(&c->so, p, tfields, 2, NULL, err, errlen);
    free(p);
    return rc;
}

static int t_write(void *ctx, char *src, char *tgt, char *err, size_t errlen)
{
    struct tctx *c = ctx;
    struct tsplit *sp = c->split;
    int k = t_segment(c, src, tgt, sp->kept != sp->lines, err, errlen);
    if (k <= 0)
        return k;
    if (to_ids(&c->sm, c->t.bpe, c->sd, &c->s, &c->ws, &c->src_unk) ||
        to_ids(&c->gm, c->t.bpe, c->gd, &c->g, &c->wg, &c->tgt_unk))
        return hg_kerr(err, errlen, "out of memory");
    c->src_tokens += (int64_t)c->ws.n;
    c->tgt_tokens += (int64_t)c->wg.n;
    while (c->index >= hg__pp_shard_lo(sp->kept, sp->nshards, c->shard + 1)) {
        if (hg__pp_shard_finish(&c->so, err, errlen))
            return -1;
        c->shard++;
        if (t_open_shard(c, err, errlen))
            return -1;
    }
    const void *val[2] = {c->ws.v, c->wg.v};
    const int64_t cnt[2] = {(int64_t)c->ws.n, (int64_t)c->wg.n};
    if (hg_shard_writer_add(c->so.w, val, cnt, err, errlen))
        return -1;
    c->index++;
    hg__pp_progress_tick(&c->pg, c->index);
    return 0;
}

static int t_write_split(struct tctx *c, const char *destdir,
                         struct tsplit *sp, char *err, size_t errlen)
{
    c->dir = hg__pp_path_join(destdir, sp->name);
    c->split = sp;
    c->shard = 0;
    c->index = 0;
    c->src_tokens = c->tgt_tokens = c->src_unk = c->tgt_unk = 0;
    int rc = hg__pp_make_dirs(c->dir, err, errlen);
    if (rc == 0)
        rc = t_open_shard(c, err, errlen);
    hg__pp_progress_start(&c->pg, sp->name);
    int64_t n;
    if (rc == 0)
        rc = read_pairs(sp->src, sp->tgt, &n, t_write, c, NULL, err, errlen);
    /* the remaining (empty) shards, then the last one */
    while (rc == 0 && c->shard + 1 < sp->nshards) {
        rc = hg__pp_shard_finish(&c->so, err, errlen);
        c->shard++;
        if (rc == 0)
            rc = t_open_shard(c, err, errlen);
    }
    if (rc == 0)
        rc = hg__pp_shard_finish(&c->so, err, errlen);
    hg__pp_shard_abort(&c->so);
    double dt = hg__pp_progress_end(&c->pg, c->index);
    if (rc == 0)
        printf("%s: %" PRId64 " sentence pairs -> %d shard%s in %s (%.2f s, "
               "%.0f sentences/s); tokens %" PRId64 " src, %" PRId64
               " tgt; <unk> %.2f%% src, %.2f%% tgt\n",
               sp->name, c->index, sp->nshards, sp->nshards == 1 ? "" : "s",
               c->dir, dt, (double)c->index / (dt > 0 ? dt : 1e-9),
               c->src_tokens, c->tgt_tokens,
               100.0 * (double)c->src_unk / (double)(c->src_tokens ? c->src_tokens : 1),
               100.0 * (double)c->tgt_unk / (double)(c->tgt_tokens ? c->tgt_tokens : 1));
    free(c->dir);
    c->dir = NULL;
    return rc;
}

static char *pref_path(const char *pref, const char *lang)
{
    char *p = malloc(strlen(pref) + strlen(lang) + 2);
    if (!p) {
        fprintf(stderr, "hgpreprocess: out of memory\n");
        exit(1);
    }
    sprintf(p, "%s.%s", pref, lang);
    return p;
}

struct translation_opts {
    char *sl, *tl, *trainpref, *validpref, *testpref, *destdir, *codes, *srcdict, *tgtdict;
    int64_t merges, nshards, maxlen, minfreq, ts, tt, ws, wt;
    int joined;
};

#define TR(f) offsetof(struct translation_opts, f)
static const struct hg_opt translation_opts[] = {
    {.name = "source-lang", .short_name = 's', .type = HG_OPT_STR, .offset = TR(sl), .metavar = "S",
     .help = "source language: files PREFIX.S"},
    {.name = "target-lang", .short_name = 't', .type = HG_OPT_STR, .offset = TR(tl), .metavar = "T",
     .help = "target language: files PREFIX.T"},
    {.name = "trainpref", .type = HG_OPT_STR, .offset = TR(trainpref), .metavar = "P",
     .help = "training text (learns the BPE and the dictionaries)"},
    {.name = "validpref", .type = HG_OPT_STR, .offset = TR(validpref), .metavar = "P",
     .help = "validation text"},
    {.name = "testpref", .type = HG_OPT_STR, .offset = TR(testpref), .metavar = "P",
     .help = "test text"},
    {.name = "destdir", .type = HG_OPT_STR, .offset = TR(destdir), .metavar = "DIR",
     .help = "where codes, dictionaries and the split shards go"},
    BPE_CHOICE(struct translation_opts),
    NUM_SHARDS(struct translation_opts),
    {.name = "max-len", .type = HG_OPT_I64, .offset = TR(maxlen), .def = "0",
     .max = INT32_MAX, .metavar = "L",
     .help = "drop training pairs with more than L BPE tokens on either side (0: keep all)"},
    MIN_FREQUENCY(struct translation_opts),
    {.name = "thresholdsrc", .type = HG_OPT_I64, .offset = TR(ts), .def = "0",
     .help = "source words seen N times or fewer map to <unk>"},
    {.name = "thresholdtgt", .type = HG_OPT_I64, .offset = TR(tt), .def = "0",
     .help = "target words seen N times or fewer map to <unk>"},
    {.name = "nwordssrc", .type = HG_OPT_I64, .offset = TR(ws), .def = "-1", .min = -1,
     .max = INT32_MAX, .help = "keep the N most frequent source symbols (-1: all)"},
    {.name = "nwordstgt", .type = HG_OPT_I64, .offset = TR(wt), .def = "-1", .min = -1,
     .max = INT32_MAX, .help = "keep the N most frequent target symbols (-1: all)"},
    {.name = "joined-dictionary", .type = HG_OPT_BOOL, .offset = TR(joined),
     .help = "one dictionary from both sides, written for both (same ids)"},
    {.name = "srcdict", .type = HG_OPT_STR, .offset = TR(srcdict), .metavar = "FILE",
     .help = "use this source dictionary (an existing model's)"},
    {.name = "tgtdict", .type = HG_OPT_STR, .offset = TR(tgtdict), .metavar = "FILE",
     .help = "use this target dictionary (an existing model's)"},
};
#undef TR

/* The usage errors (2), before anything is read; 0 if there is none. */
static int t_usage(const struct translation_opts *o, const struct hg_opt_prog *p)
{
    const char *sl = o->sl, *tl = o->tl, *trainpref = o->trainpref,
               *validpref = o->validpref, *testpref = o->testpref, *destdir = o->destdir,
               *codes = o->codes, *srcdict = o->srcdict, *tgtdict = o->tgtdict;
    const int joined = o->joined, have_merges = hg_opt_given(p, "bpe-merges") == 1;
    const char *cmd = "translation", *u = p->usage;
    if (joined && (o->tt != 0 || o->wt != -1))
        return hg__pp_usage_error(u, cmd, "%s", "--joined-dictionary takes --thresholdsrc "
                                  "and --nwordssrc; --thresholdtgt/--nwordstgt would be "
                                  "ignored");
    if (joined && tgtdict)
        return hg__pp_usage_error(u, cmd, "%s", "--joined-dictionary takes --srcdict for "
                                  "both sides, not --tgtdict");
    /* new text for an existing model: its codes and dictionaries, no
     * training data needed (fairseq-preprocess --srcdict --tgtdict) */
    const int given = codes && srcdict && (tgtdict || joined);
    if (!sl || !tl || !destdir || (!given && (!trainpref || !validpref)))
        return hg__pp_usage_error(u, cmd, "%s", "--source-lang, --target-lang, --trainpref, "
                                  "--validpref and --destdir are required (the prefixes may "
                                  "be left out when --bpe-codes, --srcdict and --tgtdict are "
                                  "given)");
    if (!trainpref && !validpref && !testpref)
        return hg__pp_usage_error(u, cmd, "%s", "give at least one of --trainpref, "
                                  "--validpref and --testpref");
    if (have_merges == !!codes)
        return hg__pp_usage_error(u, cmd, "%s", "give exactly one of --bpe-merges and "
                                  "--bpe-codes");
    if (strcmp(sl, tl) == 0 || !*sl || strchr(sl, '/') || strchr(tl, '/'))
        return hg__pp_usage_error(u, cmd, "%s", "source and target languages must be two "
                                  "different plain names");
    return 0;
}

/* Passes 1 and 2 over the inputs: every input checked (UTF-8, alignment)
 * and the training words counted; the codes learned or loaded; the
 * training data segmented and its tokens counted (c->scnt, c->gcnt) for
 * the dictionaries, pairs over --max-len dropped. */
static int t_read(struct tctx *c, const struct translation_opts *o,
                  struct tsplit *splits, const char *const *prefs, char *err,
                  size_t errlen)
{
    const char *codes = o->codes;
    if (!codes && !(c->t.vocab = hg_bpe_vocab_new()))
        return hg_kerr(err, errlen, "out of memory");
    /* pass 1: every input checked (UTF-8, alignment); words counted */
    for (int i = 0; i < 3; i++) {
        if (!prefs[i])
            continue;
        struct progress pg;
        hg__pp_progress_start(&pg, "reading");
        if (read_pairs(splits[i].src, splits[i].tgt, &splits[i].lines,
                       i == 0 && !codes ? t_learn_words : NULL, c, &pg, err,
                       errlen))
            return -1;
        hg__pp_progress_end(&pg, splits[i].lines);
        splits[i].kept = splits[i].lines;
    }
    if (hg__pp_get_codes(&c->t, o->merges, codes, o->minfreq, err, errlen))
        return -1;
    /* pass 2: dictionaries from the segmented training data (and the
     * --max-len filter's count) */
    if (o->trainpref) {
        if (read_pairs(splits[0].src, splits[0].tgt, &splits[0].lines, t_count, c,
                       NULL, err, errlen))
            return -1;
        splits[0].kept = c->kept;
    }
    return 0;
}

/* The source and target dictionaries (c->sd, c->gd): loaded when given,
 * else made from the training counts. */
static int t_dicts(struct tctx *c, const struct translation_opts *o,
                   const struct tsplit *splits, char *err, size_t errlen)
{
    const char *srcdict = o->srcdict;
    const int joined = o->joined;
    const int64_t ts = o->ts, tt = o->tt, ws = o->ws, wt = o->wt;
    /* given dictionaries are taken as they are (ids of an existing model) */
    const char *gdict = joined ? srcdict : o->tgtdict;
    if (srcdict && hg_dict_load(&c->sd, srcdict, NULL, 0, err, errlen))
        return -1;
    if (gdict && hg_dict_load(&c->gd, gdict, NULL, 0, err, errlen))
        return -1;
    /* --joined-dictionary: both dictionaries from the counts of both sides
     * (ordered by count, ties by bytes: the same ids on both sides) */
    const struct hg_bpe *b = c->t.bpe;
    if ((!srcdict &&
         (!(c->sd = hg_dict_new(NULL, 0)) ||
          hg__pp_dict_from_counts(c->sd, b, c->scnt, c->nscnt) ||
          (joined && hg__pp_dict_from_counts(c->sd, b, c->gcnt, c->ngcnt)) ||
          hg_dict_add(c->sd, "</s>", 4, joined ? 2 * c->kept : c->kept) < 0 ||
          hg_dict_finalize(c->sd, ts, ws))) ||
        (!gdict &&
         (!(c->gd = hg_dict_new(NULL, 0)) ||
          hg__pp_dict_from_counts(c->gd, b, c->gcnt, c->ngcnt) ||
          (joined && hg__pp_dict_from_counts(c->gd, b, c->scnt, c->nscnt)) ||
          hg_dict_add(c->gd, "</s>", 4, joined ? 2 * c->kept : c->kept) < 0 ||
          hg_dict_finalize(c->gd, joined ? ts : tt, joined ? ws : wt))))
        return hg_kerr(err, errlen, "out of memory");
    if (c->skipped)
        printf("train: %" PRId64 " of %" PRId64 " pairs dropped (longer than "
               "--max-len %" PRId64 " tokens)\n", c->skipped, splits[0].lines,
               o->maxlen);
    printf("[%s] dictionary: %d types\n[%s] dictionary: %d types\n", o->sl,
           hg_dict_size(c->sd), o->tl, hg_dict_size(c->gd));
    return 0;
}

/* DESTDIR/dict.LANG.txt, remembered as made. */
static int t_save_dict(const char *destdir, const char *lang, const struct hg_dict *d,
                       char *err, size_t errlen)
{
    char dname[64];
    snprintf(dname, sizeof(dname), "dict.%.50s.txt", lang);
    char *path = hg__pp_path_join(destdir, dname);
    int rc = hg_dict_save(d, path, err, errlen) || hg__pp_made_file(path, err, errlen);
    free(path);
    return rc ? -1 : 0;
}

/* Pass 3, the outputs: after a check for shards of an earlier run, the
 * codes, both dictionaries and every split's shards. */
static int t_outputs(struct tctx *c, const struct translation_opts *o,
                     struct tsplit *splits, const char *const *prefs, char *err,
                     size_t errlen)
{
    const char *destdir = o->destdir;
    for (int i = 0; i < 3; i++) {
        if (!prefs[i])
            continue;
        splits[i].nshards = hg__pp_clamp_shards(o->nshards, splits[i].kept);
        char *dir = hg__pp_path_join(destdir, splits[i].name);
        int bad = hg__pp_check_stale_shards(dir, splits[i].nshards, err, errlen);
        free(dir);
        if (bad)
            return -1;
    }
    if (hg__pp_make_dirs(destdir, err, errlen))
        return -1;
    char *pcodes = hg__pp_path_join(destdir, "codes");
    int bad = hg_bpe_save(c->t.bpe, pcodes, err, errlen) ||
              hg__pp_made_file(pcodes, err, errlen);
    free(pcodes);
    if (bad || t_save_dict(destdir, o->sl, c->sd, err, errlen) ||
        t_save_dict(destdir, o->tl, c->gd, err, errlen))
        return -1;
    for (int i = 0; i < 3; i++)
        if (prefs[i] && t_write_split(c, destdir, &splits[i], err, errlen))
            return -1;
    return 0;
}

static void t_free(struct tctx *c)
{
    free(c->t.tok);
    hg_bpe_vocab_free(c->t.vocab);
    hg_bpe_free(c->t.bpe);
    free(c->s.v);
    free(c->g.v);
    free(c->ws.v);
    free(c->wg.v);
    free(c->scnt);
    free(c->gcnt);
    free(c->sm.v);
    free(c->gm.v);
    hg_dict_free(c->sd);
    hg_dict_free(c->gd);
}

static int cmd_translation(const void *opts, const struct hg_opt_prog *p)
{
    const struct translation_opts *o = opts;
    int rc = t_usage(o, p);
    if (rc)
        return rc;
    char err[ERRLEN];
    struct tctx c;
    memset(&c, 0, sizeof(c));
    c.max_len = o->maxlen;
    struct tsplit splits[3] = {{.name = "train"}, {.name = "valid"}, {.name = "test"}};
    const char *prefs[3] = {o->trainpref, o->validpref, o->testpref};
    for (int i = 0; i < 3; i++)
        if (prefs[i]) {
            splits[i].src = pref_path(prefs[i], o->sl);
            splits[i].tgt = pref_path(prefs[i], o->tl);
        }
    rc = t_read(&c, o, splits, prefs, err, sizeof(err)) ||
         t_dicts(&c, o, splits, err, sizeof(err)) ||
         t_outputs(&c, o, splits, prefs, err, sizeof(err)) ? -1 : 0;
    if (rc != 0)
        fprintf(stderr, "hgpreprocess translation: %s\n", err);
    hg__pp_made_clear(rc != 0);
    for (int i = 0; i < 3; i++) {
        free(splits[i].src);
        free(splits[i].tgt);
    }
    t_free(&c);
    return rc ? 1 : 0;
}

const struct pp_command hg__pp_translation = {
    .name = "translation",
    .opts = translation_opts,
    .nopts = NOPTS(translation_opts),
    .size = sizeof(struct translation_opts),
    .run = cmd_translation,
};
