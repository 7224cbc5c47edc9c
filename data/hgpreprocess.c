/* hgpreprocess.c - turns raw data into hgtrain shards: IDX images, parallel
 * text for translation (joint BPE + fairseq dictionaries), and BERT-style
 * masked-LM pretraining data in NVIDIA's HDF5 layout. docs/preprocess.md.
 *
 * Every input is read and checked before the first output is written; a
 * run that fails later removes what it wrote (shards go through the shard
 * writer's temp + rename, text files through temp + fsync + rename), so a
 * failed run leaves no partial output. Exit: 0 ok, 1 error, 2 usage. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/hg_base.h"
#include "data/bpe.h"
#include "data/dict.h"
#include "data/hg_data.h"
#include "data/text.h"
#include "kernels/hg_kernels.h"

#define ERRLEN 1024

static const char usage_text[] =
    "usage: hgpreprocess images --images F --labels F --out DIR [--num-shards K] [--prefix NAME]\n"
    "       hgpreprocess images --fashion-mnist DIR [--out DIR] [--num-shards K]\n"
    "       hgpreprocess translation --source-lang S --target-lang T --trainpref P\n"
    "           --validpref P [--testpref P] --destdir DIR (--bpe-merges N | --bpe-codes FILE)\n"
    "           [--num-shards K] [--max-len L] [--min-frequency N] [--thresholdsrc N]\n"
    "           [--thresholdtgt N] [--nwordssrc N] [--nwordstgt N] [--joined-dictionary]\n"
    "           [--srcdict FILE] [--tgtdict FILE]\n"
    "           (with --bpe-codes and both dictionaries, any of the three prefixes)\n"
    "       hgpreprocess apply-bpe --codes FILE [--input F|-] [--output F]\n"
    "       hgpreprocess lm --input F --destdir DIR (--bpe-merges N | --bpe-codes FILE)\n"
    "           [--max-seq-len 128] [--max-predictions 20] [--masked-lm-prob 0.15]\n"
    "           [--short-seq-prob 0.1] [--dupe-factor 1] [--seed S] [--num-shards K]\n"
    "           [--min-frequency N]\n"
    "       hgpreprocess batches --data SPEC [--layout translation|images|lm]\n"
    "           (--max-tokens N | --max-sentences N | --batch-size N)\n"
    "           [--required-batch-size-multiple M] [--rank-capacity C0,C1,...]\n"
    "           [--seed S] [--epoch E] [--valid]\n"
    "           (how an epoch of shards SPEC is cut into per-rank batches)\n";

/* ------------------------------------------------ outputs of this run */

/* Files and directories this run created, removed again if it fails. */
static struct {
    char **files;
    size_t nfiles, fcap;
    char **dirs;
    size_t ndirs, dcap;
} made;

static int remember(char ***list, size_t *n, size_t *cap, const char *path)
{
    if (*n == *cap) {
        size_t nc = *cap ? 2 * *cap : 16;
        char **l = realloc(*list, nc * sizeof(*l));
        if (!l)
            return -1;
        *list = l;
        *cap = nc;
    }
    char *copy = strdup(path);
    if (!copy)
        return -1;
    (*list)[(*n)++] = copy;
    return 0;
}

static int made_file(const char *path, char *err, size_t errlen)
{
    if (remember(&made.files, &made.nfiles, &made.fcap, path))
        return hg_kerr(err, errlen, "out of memory");
    return 0;
}

/* mkdir -p, remembering the directories it creates. */
static int make_dirs(const char *path, char *err, size_t errlen)
{
    char *p = strdup(path);
    if (!p)
        return hg_kerr(err, errlen, "out of memory");
    int rc = 0;
    size_t n = strlen(p);
    for (size_t i = 1; i <= n && rc == 0; i++) {
        if (i < n && p[i] != '/')
            continue;
        char c = p[i];
        p[i] = 0;
        if (mkdir(p, 0755) == 0) {
            if (remember(&made.dirs, &made.ndirs, &made.dcap, p))
                rc = hg_kerr(err, errlen, "out of memory");
        } else {
            struct stat st;
            if (errno != EEXIST || stat(p, &st) != 0 || !S_ISDIR(st.st_mode))
                rc = hg_kerr(err, errlen, "%s: cannot create directory: %s",
                             p, strerror(errno == EEXIST ? ENOTDIR : errno));
        }
        p[i] = c;
    }
    free(p);
    return rc;
}

static void made_clear(int remove_them)
{
    for (size_t i = made.nfiles; i-- > 0;) {
        if (remove_them)
            unlink(made.files[i]);
        free(made.files[i]);
    }
    for (size_t i = made.ndirs; i-- > 0;) {
        if (remove_them)
            rmdir(made.dirs[i]);
        free(made.dirs[i]);
    }
    free(made.files);
    free(made.dirs);
    memset(&made, 0, sizeof(made));
}

static char *path_join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *p = malloc(la + lb + 2);
    if (!p) {
        fprintf(stderr, "hgpreprocess: out of memory\n");
        exit(1);
    }
    memcpy(p, a, la);
    p[la] = '/';
    memcpy(p + la + 1, b, lb + 1);
    return p;
}

/* ------------------------------------------------------------ options */

static int usage_error(const char *cmd, const char *fmt, const char *what)
{
    fprintf(stderr, "hgpreprocess%s%s: ", cmd ? " " : "", cmd ? cmd : "");
    fprintf(stderr, fmt, what);
    fprintf(stderr, "\n%s", usage_text);
    return 2;
}

/* Each command is a row of cmds[] (main): its options struct, the table of
 * its options (base/opts.c) and the function that runs it. */
#define NUM_SHARDS(T)                                                                 \
    {.name = "num-shards", .type = HG_OPT_I64, .offset = offsetof(T, nshards),       \
     .def = "1", .min = 1, .max = 99999, .metavar = "K",                              \
     .help = "shards per split (fewer when a split has fewer samples)"}
#define MIN_FREQUENCY(T)                                                              \
    {.name = "min-frequency", .type = HG_OPT_I64, .offset = offsetof(T, minfreq),    \
     .def = "2", .min = 1,                                                            \
     .help = "--bpe-merges: stop learning when the best pair is rarer than N"}
#define BPE_CHOICE(T)                                                                 \
    {.name = "bpe-merges", .type = HG_OPT_I64, .offset = offsetof(T, merges),        \
     .max = 10000000, .help = "learn N joint BPE merges from the training text"},     \
    {.name = "bpe-codes", .type = HG_OPT_STR, .offset = offsetof(T, codes),          \
     .metavar = "FILE", .help = "apply these BPE codes (subword-nmt format) instead"}
#define NOPTS(t) ((int)(sizeof(t) / sizeof((t)[0])))

/* ------------------------------------------------------------ progress */

struct progress {
    const char *what;
    int tty;
    double t0, last;
};

static void progress_start(struct progress *p, const char *what)
{
    p->what = what;
    p->tty = isatty(2);
    p->t0 = p->last = hg_now();
}

static void progress_tick(struct progress *p, int64_t done)
{
    if (!p->tty || (done & 4095))
        return;
    double t = hg_now();
    if (t - p->last < 0.25)
        return;
    p->last = t;
    fprintf(stderr, "\r%s: %" PRId64 " sentences, %.0f sentences/s   ",
            p->what, done, (double)done / (t - p->t0));
}

static double progress_end(struct progress *p, int64_t done)
{
    double dt = hg_now() - p->t0;
    if (p->tty && dt >= 0.25)
        fprintf(stderr, "\r%s: %" PRId64 " sentences, %.0f sentences/s   \n",
                p->what, done, (double)done / (dt > 0 ? dt : 1e-9));
    return dt;
}

/* --------------------------------------------------------- int vectors */

struct ivec {
    int32_t *v;
    size_t n, cap;
};

static int ivec_reserve(struct ivec *a, size_t extra)
{
    if (a->n + extra <= a->cap)
        return 0;
    size_t nc = a->cap ? a->cap : 256;
    while (nc < a->n + extra)
        nc *= 2;
    int32_t *v = realloc(a->v, nc * sizeof(*v));
    if (!v)
        return -1;
    a->v = v;
    a->cap = nc;
    return 0;
}

/* ------------------------------------------------------------- shards */

/* One shard of samples [lo, hi), written via the shard writer. */
struct shard_out {
    struct hg_shard_writer *w;
    char *path;
};

static int shard_open(struct shard_out *s, const char *path,
                      const struct hg_field *fields, int nfields,
                      const struct hg_shape *shapes, char *err, size_t errlen)
{
    s->path = strdup(path);
    if (!s->path)
        return hg_kerr(err, errlen, "out of memory");
    if (hg_shard_writer_open(&s->w, path, fields, nfields, shapes, err,
                             errlen) != 0) {
        free(s->path);
        s->path = NULL;
        s->w = NULL;
        return -1;
    }
    return 0;
}

static int shard_finish(struct shard_out *s, char *err, size_t errlen)
{
    int rc = hg_shard_writer_finish(s->w, err, errlen);
    s->w = NULL;
    if (rc == 0)
        rc = made_file(s->path, err, errlen);
    free(s->path);
    s->path = NULL;
    return rc;
}

static void shard_abort(struct shard_out *s)
{
    if (s->w)
        hg_shard_writer_abort(s->w);
    s->w = NULL;
    free(s->path);
    s->path = NULL;
}

/* Shard s of k over n samples: [n*s/k, n*(s+1)/k). */
static int64_t shard_lo(int64_t n, int k, int s)
{
    return (int64_t)((__int128)n * s / k);
}

static int clamp_shards(int64_t want, int64_t n)
{
    int64_t k = want < n ? want : n;
    return k < 1 ? 1 : (int)k;
}

/* Refuses to mix with shards of an earlier run: any shard-NNNNN.h5 in dir
 * with NNNNN >= k would be read together with ours. */
static int check_stale_shards(const char *dir, int k, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)) != NULL) {
        int idx;
        char tail[8];
        if (sscanf(e->d_name, "shard-%5d.%7s", &idx, tail) == 2 &&
            strcmp(tail, "h5") == 0 && idx >= k) {
            rc = hg_kerr(err, errlen,
                         "%s/%s: a shard of an earlier run (this run writes %d); "
                         "remove it or use a new --destdir", dir, e->d_name, k);
            break;
        }
    }
    closedir(d);
    return rc;
}

/* ------------------------------------------------------------- images */

static int images_one(const char *images, const char *labels,
                      const char *outdir, const char *prefix, int64_t nshards,
                      char *err, size_t errlen)
{
    struct hg_idx im, lb;
    if (hg_idx_load(images, &im, err, errlen))
        return -1;
    if (hg_idx_load(labels, &lb, err, errlen)) {
        hg_idx_free(&im);
        return -1;
    }
    int rc = 0;
    struct shard_out so = {0};
    if (im.ndim < 2 || im.ndim > 4) {
        rc = hg_kerr(err, errlen, "%s: expected [N, H, W] images, found %d dims",
                     images, im.ndim);
        goto out;
    }
    if (lb.ndim != 1) {
        rc = hg_kerr(err, errlen, "%s: expected [N] labels, found %d dims",
                     labels, lb.ndim);
        goto out;
    }
    int64_t n = im.dim[0];
    if (lb.dim[0] != n) {
        rc = hg_kerr(err, errlen, "%s has %" PRId64 " images but %s has %" PRId64
                     " labels", images, n, labels, lb.dim[0]);
        goto out;
    }
    struct hg_shape shapes[2] = {{.ndim = im.ndim - 1}, {.ndim = 0}};
    int64_t item = 1;
    for (int d = 1; d < im.ndim; d++) {
        shapes[0].dim[d - 1] = im.dim[d];
        item *= im.dim[d];
    }
    const struct hg_field fields[2] = {
        {.name = "image", .kind = HG_FIELD_ARRAY, .dtype = HG_U8,
         .rank = im.ndim - 1},
        {.name = "label", .kind = HG_FIELD_ARRAY, .dtype = HG_I32, .rank = 0},
    };
    int k = clamp_shards(nshards, n);
    char name[64];
    int plen = (int)strlen(prefix);
    if (make_dirs(outdir, err, errlen))
        goto fail;
    for (int s = 0; s < k; s++) {
        snprintf(name, sizeof(name), "-%05d-of-%05d.h5", s, k);
        char *full = malloc(strlen(outdir) + (size_t)plen + strlen(name) + 2);
        if (!full) {
            rc = hg_kerr(err, errlen, "out of memory");
            goto out;
        }
        sprintf(full, "%s/%s%s", outdir, prefix, name);
        int orc = shard_open(&so, full, fields, 2, shapes, err, errlen);
        free(full);
        if (orc || hg_shard_writer_set_info(so.w, s, k, n, err, errlen))
            goto fail;
        for (int64_t i = shard_lo(n, k, s); i < shard_lo(n, k, s + 1); i++) {
            int32_t label = lb.data[i];
            const void *val[2] = {im.data + i * item, &label};
            const int64_t cnt[2] = {item, 1};
            if (hg_shard_writer_add(so.w, val, cnt, err, errlen))
                goto fail;
        }
        if (shard_finish(&so, err, errlen))
            goto fail;
    }
    printf("%s: %" PRId64 " samples of %" PRId64 " bytes -> %d shard%s in %s\n",
           prefix, n, item, k, k == 1 ? "" : "s", outdir);
    goto out;
fail:
    rc = -1;
out:
    shard_abort(&so);
    hg_idx_free(&im);
    hg_idx_free(&lb);
    return rc;
}

/* dir/base.gz if present, else dir/base. */
static char *idx_path(const char *dir, const char *base)
{
    char *p = malloc(strlen(dir) + strlen(base) + 5);
    if (!p)
        return NULL;
    sprintf(p, "%s/%s.gz", dir, base);
    if (access(p, R_OK) != 0)
        sprintf(p, "%s/%s", dir, base);
    return p;
}

struct images_opts {
    char *images, *labels, *out, *fashion, *prefix;
    int64_t nshards;
};

static const struct hg_opt images_opts[] = {
    {.name = "images", .type = HG_OPT_STR, .offset = offsetof(struct images_opts, images),
     .metavar = "F", .help = "IDX images (idx3-ubyte)"},
    {.name = "labels", .type = HG_OPT_STR, .offset = offsetof(struct images_opts, labels),
     .metavar = "F", .help = "IDX labels (idx1-ubyte)"},
    {.name = "out", .type = HG_OPT_STR, .offset = offsetof(struct images_opts, out),
     .metavar = "DIR", .help = "where the shards go (with --fashion-mnist: that DIR)"},
    {.name = "fashion-mnist", .type = HG_OPT_STR,
     .offset = offsetof(struct images_opts, fashion), .metavar = "DIR",
     .help = "Fashion-MNIST's four files in DIR: train and test splits"},
    {.name = "prefix", .type = HG_OPT_STR, .offset = offsetof(struct images_opts, prefix),
     .def = "train", .metavar = "NAME", .help = "shard names PREFIX-00000.h5 ..."},
    NUM_SHARDS(struct images_opts),
};

static int cmd_images(const void *opts, const struct hg_opt_prog *p)
{
    (void)p;
    const struct images_opts *o = opts;
    const char *images = o->images, *labels = o->labels, *out = o->out,
               *fashion = o->fashion, *prefix = o->prefix;
    const int64_t nshards = o->nshards;
    if (fashion && (images || labels))
        return usage_error("images", "%s", "--fashion-mnist replaces --images/--labels");
    if (!fashion && (!images || !labels || !out))
        return usage_error("images", "%s", "--images, --labels and --out are required");
    if (!*prefix || strchr(prefix, '/'))
        return usage_error("images", "--prefix '%s': expected a plain name", prefix);
    char err[ERRLEN];
    int rc;
    if (fashion) {
        if (!out)
            out = fashion;
        char *ti = idx_path(fashion, "train-images-idx3-ubyte");
        char *tl = idx_path(fashion, "train-labels-idx1-ubyte");
        char *vi = idx_path(fashion, "t10k-images-idx3-ubyte");
        char *vl = idx_path(fashion, "t10k-labels-idx1-ubyte");
        rc = !ti || !tl || !vi || !vl ? hg_kerr(err, sizeof(err), "out of memory")
             : images_one(ti, tl, out, "train", nshards, err, sizeof(err));
        if (rc == 0)
            rc = images_one(vi, vl, out, "test", nshards, err, sizeof(err));
        free(ti);
        free(tl);
        free(vi);
        free(vl);
    } else {
        rc = images_one(images, labels, out, prefix, nshards, err, sizeof(err));
    }
    if (rc != 0) {
        fprintf(stderr, "hgpreprocess images: %s\n", err);
        made_clear(1);
        return 1;
    }
    made_clear(0);
    return 0;
}

/* ------------------------------------------------------- text passes */

/* Called per aligned line pair; lines are writable. 0 or -1. */
typedef int (*pair_fn)(void *ctx, char *src, char *tgt, char *err,
                       size_t errlen);

static FILE *open_text(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        hg_kerr(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    return f;
}

/* Reads sp and tp in step, checking UTF-8 and that they have the same
 * number of lines; *n = that number. fn may be NULL. */
static int read_pairs(const char *sp, const char *tp, int64_t *n, pair_fn fn,
                      void *ctx, struct progress *pg, char *err, size_t errlen)
{
    FILE *fs = open_text(sp, err, errlen);
    if (!fs)
        return -1;
    FILE *ft = open_text(tp, err, errlen);
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
            progress_tick(pg, rs.lineno);
    }
    *n = rs.lineno;
    hg_line_reader_free(&rs);
    hg_line_reader_free(&rt);
    fclose(fs);
    fclose(ft);
    return rc;
}

/* Shared by the commands: tokenizer scratch, BPE, vocabulary. */
struct textctx {
    char **tok;
    size_t tokcap;
    struct hg_bpe_vocab *vocab;
    struct hg_bpe *bpe;
};

static int add_words(struct textctx *c, char *line, char *err, size_t errlen)
{
    int64_t n = hg_text_split(line, &c->tok, &c->tokcap);
    if (n < 0)
        return hg_kerr(err, errlen, "out of memory");
    for (int64_t i = 0; i < n; i++)
        if (hg_bpe_vocab_add(c->vocab, c->tok[i], strlen(c->tok[i]), 1))
            return hg_kerr(err, errlen, "out of memory");
    return 0;
}

/* Appends the BPE token ids of line to out. */
static int segment_line(struct textctx *c, char *line, struct ivec *out,
                        char *err, size_t errlen)
{
    int64_t n = hg_text_split(line, &c->tok, &c->tokcap);
    if (n < 0)
        return hg_kerr(err, errlen, "out of memory");
    for (int64_t i = 0; i < n; i++) {
        const int32_t *t;
        int k = hg_bpe_segment(c->bpe, c->tok[i], strlen(c->tok[i]), &t);
        if (k < 0 || ivec_reserve(out, (size_t)k))
            return hg_kerr(err, errlen, "out of memory");
        memcpy(out->v + out->n, t, (size_t)k * sizeof(*t));
        out->n += (size_t)k;
    }
    return 0;
}

static void learn_progress(int done, int total)
{
    if (isatty(2))
        fprintf(stderr, "\rlearning BPE: %d/%d merges   ", done, total);
}

/* Learns or loads the codes into c->bpe. */
static int get_codes(struct textctx *c, int64_t merges, const char *codes,
                     int64_t min_freq, char *err, size_t errlen)
{
    if (codes)
        return hg_bpe_load(&c->bpe, codes, err, errlen);
    double t0 = hg_now();
    int rc = hg_bpe_learn(&c->bpe, c->vocab, (int)merges, min_freq,
                          learn_progress, err, errlen);
    if (isatty(2) && merges >= 100)
        fputc('\n', stderr);
    if (rc == 0)
        printf("bpe: %d merges learned from %" PRId64 " word types in %.2f s\n",
               hg_bpe_nmerges(c->bpe), hg_bpe_vocab_size(c->vocab),
               hg_now() - t0);
    return rc;
}

/* Maps BPE token ids to dictionary ids, growing as the BPE hands out new
 * tokens. */
struct idmap {
    int32_t *v;
    size_t n;
};

static int idmap_get(struct idmap *m, const struct hg_bpe *b,
                     const struct hg_dict *d, int32_t tok, int32_t *out)
{
    if ((size_t)tok >= m->n) {
        size_t nn = (size_t)hg_bpe_ntokens(b);
        int32_t *v = realloc(m->v, nn * sizeof(*v));
        if (!v)
            return -1;
        for (size_t i = m->n; i < nn; i++)
            v[i] = -1;
        m->v = v;
        m->n = nn;
    }
    if (m->v[tok] < 0)
        m->v[tok] = hg_dict_index(d, hg_bpe_token(b, tok),
                                  hg_bpe_token_len(b, tok));
    *out = m->v[tok];
    return 0;
}

/* Adds BPE token counts cnt[0..n) to d. */
static int dict_from_counts(struct hg_dict *d, const struct hg_bpe *b,
                            const int64_t *cnt, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (cnt[i] && hg_dict_add(d, hg_bpe_token(b, (int32_t)i),
                                  hg_bpe_token_len(b, (int32_t)i), cnt[i]) < 0)
            return -1;
    return 0;
}

static int count_tokens(int64_t **cnt, size_t *n, const struct hg_bpe *b,
                        const struct ivec *v)
{
    size_t nt = (size_t)hg_bpe_ntokens(b);
    if (nt > *n) {
        int64_t *c = realloc(*cnt, nt * sizeof(*c));
        if (!c)
            return -1;
        memset(c + *n, 0, (nt - *n) * sizeof(*c));
        *cnt = c;
        *n = nt;
    }
    for (size_t i = 0; i < v->n; i++)
        (*cnt)[v->v[i]]++;
    return 0;
}

/* -------------------------------------------------------- translation */

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
    if (add_words(&c->t, src, err, errlen) || add_words(&c->t, tgt, err, errlen))
        return -1;
    return 0;
}

/* Segments both sides into c->s, c->g; 1 if the pair is kept. */
static int t_segment(struct tctx *c, char *src, char *tgt, int filter,
                     char *err, size_t errlen)
{
    c->s.n = c->g.n = 0;
    if (segment_line(&c->t, src, &c->s, err, errlen) ||
        segment_line(&c->t, tgt, &c->g, err, errlen))
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
    if (count_tokens(&c->scnt, &c->nscnt, c->t.bpe, &c->s) ||
        count_tokens(&c->gcnt, &c->ngcnt, c->t.bpe, &c->g))
        return hg_kerr(err, errlen, "out of memory");
    return 0;
}

static int to_ids(struct idmap *m, const struct hg_bpe *b,
                  const struct hg_dict *d, const struct ivec *in,
                  struct ivec *out, int64_t *unk)
{
    out->n = 0;
    if (ivec_reserve(out, in->n + 1))
        return -1;
    for (size_t i = 0; i < in->n; i++) {
        int32_t id;
        if (idmap_get(m, b, d, in->v[i], &id))
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
    char *p = path_join(c->dir, name);
    int rc = shard_open(&c->so, p, tfields, 2, NULL, err, errlen);
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
    while (c->index >= shard_lo(sp->kept, sp->nshards, c->shard + 1)) {
        if (shard_finish(&c->so, err, errlen))
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
    progress_tick(&c->pg, c->index);
    return 0;
}

static int t_write_split(struct tctx *c, const char *destdir,
                         struct tsplit *sp, char *err, size_t errlen)
{
    c->dir = path_join(destdir, sp->name);
    c->split = sp;
    c->shard = 0;
    c->index = 0;
    c->src_tokens = c->tgt_tokens = c->src_unk = c->tgt_unk = 0;
    int rc = make_dirs(c->dir, err, errlen);
    if (rc == 0)
        rc = t_open_shard(c, err, errlen);
    progress_start(&c->pg, sp->name);
    int64_t n;
    if (rc == 0)
        rc = read_pairs(sp->src, sp->tgt, &n, t_write, c, NULL, err, errlen);
    /* the remaining (empty) shards, then the last one */
    while (rc == 0 && c->shard + 1 < sp->nshards) {
        rc = shard_finish(&c->so, err, errlen);
        c->shard++;
        if (rc == 0)
            rc = t_open_shard(c, err, errlen);
    }
    if (rc == 0)
        rc = shard_finish(&c->so, err, errlen);
    shard_abort(&c->so);
    double dt = progress_end(&c->pg, c->index);
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
    {.name = "source-lang", .type = HG_OPT_STR, .offset = TR(sl), .metavar = "S",
     .help = "source language: files PREFIX.S"},
    {.name = "target-lang", .type = HG_OPT_STR, .offset = TR(tl), .metavar = "T",
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

static int cmd_translation(const void *opts, const struct hg_opt_prog *p)
{
    const struct translation_opts *o = opts;
    const char *sl = o->sl, *tl = o->tl, *trainpref = o->trainpref,
               *validpref = o->validpref, *testpref = o->testpref, *destdir = o->destdir,
               *codes = o->codes, *srcdict = o->srcdict, *tgtdict = o->tgtdict;
    const int64_t merges = o->merges, nshards = o->nshards, maxlen = o->maxlen,
                  minfreq = o->minfreq, ts = o->ts, tt = o->tt, ws = o->ws, wt = o->wt;
    const int joined = o->joined, have_merges = hg_opt_given(p, "bpe-merges") == 1;
    const char *cmd = "translation";
    if (joined && (tt != 0 || wt != -1))
        return usage_error(cmd, "%s", "--joined-dictionary takes --thresholdsrc and "
                           "--nwordssrc; --thresholdtgt/--nwordstgt would be ignored");
    if (joined && tgtdict)
        return usage_error(cmd, "%s", "--joined-dictionary takes --srcdict for both sides, "
                           "not --tgtdict");
    /* new text for an existing model: its codes and dictionaries, no
     * training data needed (fairseq-preprocess --srcdict --tgtdict) */
    const int given = codes && srcdict && (tgtdict || joined);
    if (!sl || !tl || !destdir || (!given && (!trainpref || !validpref)))
        return usage_error(cmd, "%s", "--source-lang, --target-lang, --trainpref, "
                           "--validpref and --destdir are required (the prefixes may be "
                           "left out when --bpe-codes, --srcdict and --tgtdict are given)");
    if (!trainpref && !validpref && !testpref)
        return usage_error(cmd, "%s", "give at least one of --trainpref, --validpref "
                           "and --testpref");
    if (have_merges == !!codes)
        return usage_error(cmd, "%s", "give exactly one of --bpe-merges and --bpe-codes");
    if (strcmp(sl, tl) == 0 || !*sl || strchr(sl, '/') || strchr(tl, '/'))
        return usage_error(cmd, "%s", "source and target languages must be two different plain names");

    char err[ERRLEN];
    struct tctx c;
    memset(&c, 0, sizeof(c));
    c.max_len = maxlen;
    struct tsplit splits[3] = {{.name = "train"}, {.name = "valid"}, {.name = "test"}};
    const char *prefs[3] = {trainpref, validpref, testpref};
    for (int i = 0; i < 3; i++)
        if (prefs[i]) {
            splits[i].src = pref_path(prefs[i], sl);
            splits[i].tgt = pref_path(prefs[i], tl);
        }
    char *dsrc = NULL, *dtgt = NULL, *pcodes = NULL;
    int rc = -1;
    if (!codes && !(c.t.vocab = hg_bpe_vocab_new())) {
        hg_kerr(err, sizeof(err), "out of memory");
        goto out;
    }
    /* pass 1: every input checked (UTF-8, alignment); words counted */
    for (int i = 0; i < 3; i++) {
        if (!prefs[i])
            continue;
        struct progress pg;
        progress_start(&pg, "reading");
        if (read_pairs(splits[i].src, splits[i].tgt, &splits[i].lines,
                       i == 0 && !codes ? t_learn_words : NULL, &c, &pg, err,
                       sizeof(err)))
            goto out;
        progress_end(&pg, splits[i].lines);
        splits[i].kept = splits[i].lines;
    }
    if (get_codes(&c.t, merges, codes, minfreq, err, sizeof(err)))
        goto out;
    /* pass 2: dictionaries from the segmented training data (and the
     * --max-len filter's count) */
    if (trainpref) {
        if (read_pairs(splits[0].src, splits[0].tgt, &splits[0].lines, t_count, &c,
                       NULL, err, sizeof(err)))
            goto out;
        splits[0].kept = c.kept;
    }
    /* given dictionaries are taken as they are (ids of an existing model) */
    const char *gdict = joined ? srcdict : tgtdict;
    if (srcdict && hg_dict_load(&c.sd, srcdict, NULL, 0, err, sizeof(err)))
        goto out;
    if (gdict && hg_dict_load(&c.gd, gdict, NULL, 0, err, sizeof(err)))
        goto out;
    /* --joined-dictionary: both dictionaries from the counts of both sides
     * (ordered by count, ties by bytes: the same ids on both sides) */
    if ((!srcdict &&
         (!(c.sd = hg_dict_new(NULL, 0)) || dict_from_counts(c.sd, c.t.bpe, c.scnt, c.nscnt) ||
          (joined && dict_from_counts(c.sd, c.t.bpe, c.gcnt, c.ngcnt)) ||
          hg_dict_add(c.sd, "</s>", 4, joined ? 2 * c.kept : c.kept) < 0 ||
          hg_dict_finalize(c.sd, ts, ws))) ||
        (!gdict &&
         (!(c.gd = hg_dict_new(NULL, 0)) || dict_from_counts(c.gd, c.t.bpe, c.gcnt, c.ngcnt) ||
          (joined && dict_from_counts(c.gd, c.t.bpe, c.scnt, c.nscnt)) ||
          hg_dict_add(c.gd, "</s>", 4, joined ? 2 * c.kept : c.kept) < 0 ||
          hg_dict_finalize(c.gd, joined ? ts : tt, joined ? ws : wt)))) {
        hg_kerr(err, sizeof(err), "out of memory");
        goto out;
    }
    if (c.skipped)
        printf("train: %" PRId64 " of %" PRId64 " pairs dropped (longer than "
               "--max-len %" PRId64 " tokens)\n", c.skipped, splits[0].lines,
               maxlen);
    printf("[%s] dictionary: %d types\n[%s] dictionary: %d types\n", sl,
           hg_dict_size(c.sd), tl, hg_dict_size(c.gd));
    for (int i = 0; i < 3; i++) {
        if (!prefs[i])
            continue;
        splits[i].nshards = clamp_shards(nshards, splits[i].kept);
        char *dir = path_join(destdir, splits[i].name);
        int bad = check_stale_shards(dir, splits[i].nshards, err, sizeof(err));
        free(dir);
        if (bad)
            goto out;
    }
    /* outputs */
    char dname[64];
    if (make_dirs(destdir, err, sizeof(err)))
        goto out;
    pcodes = path_join(destdir, "codes");
    if (hg_bpe_save(c.t.bpe, pcodes, err, sizeof(err)) ||
        made_file(pcodes, err, sizeof(err)))
        goto out;
    snprintf(dname, sizeof(dname), "dict.%.50s.txt", sl);
    dsrc = path_join(destdir, dname);
    if (hg_dict_save(c.sd, dsrc, err, sizeof(err)) ||
        made_file(dsrc, err, sizeof(err)))
        goto out;
    snprintf(dname, sizeof(dname), "dict.%.50s.txt", tl);
    dtgt = path_join(destdir, dname);
    if (hg_dict_save(c.gd, dtgt, err, sizeof(err)) ||
        made_file(dtgt, err, sizeof(err)))
        goto out;
    for (int i = 0; i < 3; i++)
        if (prefs[i] && t_write_split(&c, destdir, &splits[i], err, sizeof(err)))
            goto out;
    rc = 0;
out:
    if (rc != 0)
        fprintf(stderr, "hgpreprocess translation: %s\n", err);
    made_clear(rc != 0);
    for (int i = 0; i < 3; i++) {
        free(splits[i].src);
        free(splits[i].tgt);
    }
    free(dsrc);
    free(dtgt);
    free(pcodes);
    free(c.t.tok);
    hg_bpe_vocab_free(c.t.vocab);
    hg_bpe_free(c.t.bpe);
    free(c.s.v);
    free(c.g.v);
    free(c.ws.v);
    free(c.wg.v);
    free(c.scnt);
    free(c.gcnt);
    free(c.sm.v);
    free(c.gm.v);
    hg_dict_free(c.sd);
    hg_dict_free(c.gd);
    return rc ? 1 : 0;
}

/* ---------------------------------------------------------- apply-bpe */

/* subword-nmt's apply_bpe: each line's whitespace tokens segmented with
 * the codes, joined by single spaces. */
struct apply_bpe_opts {
    char *codes, *input, *output;
};

static const struct hg_opt apply_bpe_opts[] = {
    {.name = "codes", .type = HG_OPT_STR, .offset = offsetof(struct apply_bpe_opts, codes),
     .metavar = "FILE", .help = "the BPE codes (DIR/codes of a preprocessed corpus)"},
    {.name = "input", .type = HG_OPT_STR, .offset = offsetof(struct apply_bpe_opts, input),
     .def = "-", .metavar = "F|-", .help = "the text to segment ('-': standard input)"},
    {.name = "output", .type = HG_OPT_STR, .offset = offsetof(struct apply_bpe_opts, output),
     .metavar = "F", .help = "where the segmented text goes (default: standard output)"},
};

static int cmd_apply_bpe(const void *opts, const struct hg_opt_prog *p)
{
    (void)p;
    const struct apply_bpe_opts *o = opts;
    const char *codes = o->codes, *input = o->input, *output = o->output;
    const char *cmd = "apply-bpe";
    if (!codes)
        return usage_error(cmd, "%s", "--codes is required");
    char err[ERRLEN];
    struct textctx c;
    memset(&c, 0, sizeof(c));
    struct hg_atomic_file af;
    memset(&af, 0, sizeof(af));
    struct hg_line_reader r;
    memset(&r, 0, sizeof(r));
    const int std_in = strcmp(input, "-") == 0;
    FILE *in = NULL, *out = stdout;
    int rc = -1;
    if (hg_bpe_load(&c.bpe, codes, err, sizeof(err)))
        goto done;
    if (!(in = std_in ? stdin : open_text(input, err, sizeof(err))))
        goto done;
    if (output) {
        if (hg_atomic_open(&af, output, err, sizeof(err)))
            goto done;
        out = af.f;
    }
    hg_line_reader_init(&r, in, std_in ? "<stdin>" : input);
    char *line;
    size_t len;
    int got;
    while ((got = hg_line_reader_next(&r, &line, &len, err, sizeof(err))) == 1) {
        int64_t n = hg_text_split(line, &c.tok, &c.tokcap);
        if (n < 0) {
            hg_kerr(err, sizeof(err), "out of memory");
            goto done;
        }
        int first = 1;
        for (int64_t i = 0; i < n; i++) {
            const int32_t *t;
            int k = hg_bpe_segment(c.bpe, c.tok[i], strlen(c.tok[i]), &t);
            if (k < 0) {
                hg_kerr(err, sizeof(err), "out of memory");
                goto done;
            }
            for (int j = 0; j < k; j++, first = 0)
                fprintf(out, "%s%s", first ? "" : " ", hg_bpe_token(c.bpe, t[j]));
        }
        fputc('\n', out);
    }
    if (got < 0)
        goto done;
    if (output ? hg_atomic_commit(&af, err, sizeof(err)) : fflush(out) != 0) {
        if (!output)
            hg_kerr(err, sizeof(err), "standard output: %s", strerror(errno));
        goto done;
    }
    rc = 0;
done:
    if (rc != 0) {
        fprintf(stderr, "hgpreprocess apply-bpe: %s\n", err);
        hg_atomic_abort(&af);
    }
    hg_line_reader_free(&r);
    if (in && in != stdin)
        fclose(in);
    free(c.tok);
    hg_bpe_free(c.bpe);
    return rc ? 1 : 0;
}

/* ----------------------------------------------------------------- lm */

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
    if (ivec_reserve(v, (size_t)n))
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

struct lctx {
    struct textctx t;
    struct corpus cp;
    int64_t *cnt;
    size_t ncnt;
    int64_t lines;
};

/* Pass 2: BPE ids per sentence, blank lines end documents. */
static int lm_read(struct lctx *c, const char *path, int learn, char *err,
                   size_t errlen)
{
    FILE *f = open_text(path, err, errlen);
    if (!f)
        return -1;
    struct hg_line_reader r;
    hg_line_reader_init(&r, f, path);
    struct progress pg;
    progress_start(&pg, learn ? "reading" : "segmenting");
    char *line;
    size_t len;
    int rc, in_doc = 0;
    struct corpus *cp = &c->cp;
    while ((rc = hg_line_reader_next(&r, &line, &len, err, errlen)) == 1) {
        progress_tick(&pg, r.lineno);
        if (learn) {
            if (add_words(&c->t, line, err, errlen)) {
                rc = -1;
                break;
            }
            continue;
        }
        size_t before = cp->tok.n;
        if (segment_line(&c->t, line, &cp->tok, err, errlen)) {
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
    progress_end(&pg, r.lineno);
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
    if (make_dirs(dir, err, errlen))
        return -1;
    struct shard_out so = {0};
    int64_t L = o->L, P = o->P;
    for (int s = 0; s < k; s++) {
        char name[32];
        snprintf(name, sizeof(name), "shard-%05d.h5", s);
        char *p = path_join(dir, name);
        int rc = shard_open(&so, p, lfields, 6, shapes, err, errlen);
        free(p);
        if (rc)
            return -1;
        if (hg_shard_writer_set_info(so.w, s, k, in->n, err, errlen)) {
            shard_abort(&so);
            return -1;
        }
        for (int64_t j = shard_lo(in->n, k, s); j < shard_lo(in->n, k, s + 1); j++) {
            int64_t i = order[j];
            const void *val[6] = {in->ids + i * L, in->mask + i * L,
                                  in->seg + i * L, in->mpos + i * P,
                                  in->mids + i * P, in->nsl + i};
            const int64_t cnt[6] = {L, L, L, P, P, 1};
            if (hg_shard_writer_add(so.w, val, cnt, err, errlen)) {
                shard_abort(&so);
                return -1;
            }
        }
        if (shard_finish(&so, err, errlen))
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

static int cmd_lm(const void *opts, const struct hg_opt_prog *p)
{
    const struct lm_opts *lo = opts;
    const char *input = lo->input, *destdir = lo->destdir, *codes = lo->codes;
    const char *cmd = "lm";
    if (!input || !destdir)
        return usage_error(cmd, "%s", "--input and --destdir are required");
    if ((hg_opt_given(p, "bpe-merges") == 1) == !!codes)
        return usage_error(cmd, "%s", "give exactly one of --bpe-merges and --bpe-codes");
    struct lmopts o = lo->lm;
    const int64_t merges = lo->merges, seed = lo->seed, nshards = lo->nshards,
                  minfreq = lo->minfreq;

    char err[ERRLEN];
    struct lctx c;
    memset(&c, 0, sizeof(c));
    struct instances in;
    memset(&in, 0, sizeof(in));
    struct lmgen g;
    memset(&g, 0, sizeof(g));
    struct hg_dict *d = NULL;
    int64_t *docs = NULL, *order = NULL;
    char *pcodes = NULL, *pdict = NULL, *dir = NULL;
    int rc = -1;
    if (!codes) {
        if (!(c.t.vocab = hg_bpe_vocab_new())) {
            hg_kerr(err, sizeof(err), "out of memory");
            goto out;
        }
        if (lm_read(&c, input, 1, err, sizeof(err)))
            goto out;
    }
    if (get_codes(&c.t, merges, codes, minfreq, err, sizeof(err)) ||
        lm_read(&c, input, 0, err, sizeof(err)))
        goto out;
    if (c.cp.nd == 0) {
        hg_kerr(err, sizeof(err), "%s: no text", input);
        goto out;
    }
    /* dictionary, then BPE ids -> dictionary ids in place */
    struct idmap m = {0};
    if (count_tokens(&c.cnt, &c.ncnt, c.t.bpe, &c.cp.tok) ||
        !(d = hg_dict_new(lm_specials, 3)) ||
        dict_from_counts(d, c.t.bpe, c.cnt, c.ncnt) ||
        hg_dict_finalize(d, 0, -1)) {
        hg_kerr(err, sizeof(err), "out of memory");
        goto out;
    }
    for (size_t i = 0; i < c.cp.tok.n; i++)
        if (idmap_get(&m, c.t.bpe, d, c.cp.tok.v[i], &c.cp.tok.v[i])) {
            free(m.v);
            hg_kerr(err, sizeof(err), "out of memory");
            goto out;
        }
    free(m.v);
    /* instances: BERT's create_training_instances */
    struct rng rng;
    rng_seed(&rng, (uint64_t)seed);
    docs = malloc(c.cp.nd * sizeof(*docs));
    if (!docs) {
        hg_kerr(err, sizeof(err), "out of memory");
        goto out;
    }
    g.cp = &c.cp;
    g.o = &o;
    g.rng = &rng;
    g.cls = 4;
    g.sep = 5;
    g.maskid = 6;
    g.first_word = hg_dict_nspecial(d);
    g.vocab = hg_dict_size(d);
    g.out = &in;
    for (size_t i = 0; i < c.cp.nd; i++)
        docs[i] = (int64_t)i;
    shuffle_i64(&rng, docs, (int64_t)c.cp.nd);
    g.docs = docs;
    struct progress pg;
    progress_start(&pg, "instances");
    int grc = 0;
    for (int64_t rep = 0; rep < o.dupe && grc == 0; rep++)
        for (size_t i = 0; i < c.cp.nd && grc == 0; i++) {
            grc = lm_document(&g, (int64_t)i);
            progress_tick(&pg, in.n);
        }
    progress_end(&pg, in.n);
    if (grc) {
        hg_kerr(err, sizeof(err), "out of memory");
        goto out;
    }
    if (in.n == 0) {
        hg_kerr(err, sizeof(err), "%s: no training instance could be made", input);
        goto out;
    }
    order = malloc((size_t)in.n * sizeof(*order));
    if (!order) {
        hg_kerr(err, sizeof(err), "out of memory");
        goto out;
    }
    for (int64_t i = 0; i < in.n; i++)
        order[i] = i;
    shuffle_i64(&rng, order, in.n);
    int k = clamp_shards(nshards, in.n);
    dir = path_join(destdir, "train");
    if (check_stale_shards(dir, k, err, sizeof(err)) ||
        make_dirs(destdir, err, sizeof(err)))
        goto out;
    pcodes = path_join(destdir, "codes");
    pdict = path_join(destdir, "dict.txt");
    if (hg_bpe_save(c.t.bpe, pcodes, err, sizeof(err)) ||
        made_file(pcodes, err, sizeof(err)) ||
        hg_dict_save(d, pdict, err, sizeof(err)) ||
        made_file(pdict, err, sizeof(err)) ||
        lm_write(&in, &o, order, dir, k, err, sizeof(err)))
        goto out;
    int64_t nrand = 0;
    for (int64_t i = 0; i < in.n; i++)
        nrand += in.nsl[i];
    printf("lm: %" PRId64 " lines, %zu documents, %zu sentences -> %" PRId64
           " instances (%.1f%% random next) in %d shard%s in %s; dictionary: %d types\n",
           c.lines, c.cp.nd, c.cp.ns, in.n, 100.0 * (double)nrand / (double)in.n,
           k, k == 1 ? "" : "s", dir, hg_dict_size(d));
    rc = 0;
out:
    if (rc != 0)
        fprintf(stderr, "hgpreprocess lm: %s\n", err);
    made_clear(rc != 0);
    free(pcodes);
    free(pdict);
    free(dir);
    free(docs);
    free(order);
    free(g.a.v);
    free(g.b.v);
    free(g.cand);
    free(in.ids);
    free(in.mask);
    free(in.seg);
    free(in.mpos);
    free(in.mids);
    free(in.nsl);
    free(c.cp.tok.v);
    free(c.cp.soff);
    free(c.cp.doff);
    free(c.cnt);
    free(c.t.tok);
    hg_bpe_vocab_free(c.t.vocab);
    hg_bpe_free(c.t.bpe);
    hg_dict_free(d);
    return rc ? 1 : 0;
}

/* ------------------------------------------------------------- batches */

struct batches_opts {
    char *data;
    int layout; /* translation, images, lm */
    int64_t maxtok, maxsent, mult, seed, epoch;
    struct hg_opt_list caps;
    int valid;
};

#define BA(f) offsetof(struct batches_opts, f)
static const struct hg_opt batches_opts[] = {
    {.name = "data", .type = HG_OPT_STR, .offset = BA(data), .metavar = "SPEC",
     .help = "the shard set to plan (a split's directory, e.g. DIR/train)"},
    {.name = "layout", .type = HG_OPT_ENUM, .offset = BA(layout), .def = "translation",
     .choices = "translation|images|lm", .help = "what the shards hold"},
    {.name = "max-tokens", .type = HG_OPT_I64, .offset = BA(maxtok), .def = "0",
     .max = (double)(INT64_MAX / 4), .help = "batch cost limit per rank and step (0: none)"},
    {.name = "max-sentences", .alias = "batch-size", .type = HG_OPT_I64, .offset = BA(maxsent),
     .def = "0", .max = (double)(INT64_MAX / 4), .help = "samples per batch per rank (0: none)"},
    {.name = "required-batch-size-multiple", .type = HG_OPT_I64, .offset = BA(mult),
     .def = "1", .min = 1, .max = 1 << 20, .metavar = "M",
     .help = "batch sizes are a multiple of M (when larger)"},
    {.name = "rank-capacity", .type = HG_OPT_LIST, .offset = BA(caps), .def = "1",
     .flags = HG_OPTF_POSITIVE, .metavar = "C0,C1,...",
     .help = "relative speed of each rank, one number per rank"},
    {.name = "seed", .type = HG_OPT_I64, .offset = BA(seed), .def = "1",
     .help = "hgtrain's --seed"},
    {.name = "epoch", .type = HG_OPT_I64, .offset = BA(epoch), .def = "1", .min = 1,
     .help = "the epoch to plan"},
    {.name = "valid", .type = HG_OPT_BOOL, .offset = BA(valid),
     .help = "plan as for validation (no shuffling)"},
};
#undef BA

/* Plans one epoch of a shard set as hgtrain would, and reports what every
 * rank gets: a preview for choosing --max-tokens and --rank-capacity. */
static int cmd_batches(const void *opts, const struct hg_opt_prog *p)
{
    (void)p;
    const struct batches_opts *o = opts;
    static const char *const layouts[] = {"translation", "images", "lm"};
    const char *data = o->data, *layout = layouts[o->layout];
    const int64_t maxtok = o->maxtok, maxsent = o->maxsent, mult = o->mult, seed = o->seed,
                  epoch = o->epoch;
    if (!data)
        return usage_error("batches", "%s", "--data is required");
    if (maxtok == 0 && maxsent == 0)
        return usage_error("batches", "%s", "give --max-tokens or --max-sentences");
    const int world = o->caps.n;
    const double *caps = o->caps.v;
    char caps_s[256] = "";
    for (int r = 0; r < world; r++) {
        size_t k = strlen(caps_s);
        snprintf(caps_s + k, sizeof(caps_s) - k, "%s%g", r ? "," : "", caps[r]);
    }
    static const struct hg_field tl[2] = {
        {.name = "src", .kind = HG_FIELD_SEQ, .dtype = HG_I32, .rank = 1},
        {.name = "tgt", .kind = HG_FIELD_SEQ, .dtype = HG_I32, .rank = 1}};
    static const struct hg_field il[2] = {
        {.name = "image", .kind = HG_FIELD_ARRAY, .dtype = HG_U8, .rank = 2},
        {.name = "label", .kind = HG_FIELD_ARRAY, .dtype = HG_I32, .rank = 0}};
    static const struct hg_field ll[1] = {
        {.name = "input_ids", .kind = HG_FIELD_ARRAY, .dtype = HG_I32, .rank = 1}};
    const struct hg_field *const fl[3] = {tl, il, ll};
    const struct hg_field *f = fl[o->layout];
    const int nf = o->layout == 2 ? 1 : 2;
    char err[ERRLEN];
    struct hg_dataset *ds = NULL;
    struct hg_epoch *ep = NULL;
    int32_t *len = NULL;
    int rc = hg_dataset_open(&ds, data, f, nf, 0, err, sizeof(err));
    int64_t n = rc == 0 ? hg_dataset_size(ds) : 0;
    if (rc == 0) {
        /* a pair costs its longer side (fairseq); an array item its numel */
        len = malloc((size_t)(n > 0 ? n : 1) * sizeof(*len));
        if (!len)
            rc = hg_kerr(err, sizeof(err), "out of memory");
    }
    if (rc == 0) {
        const int32_t *l0 = hg_dataset_lengths(ds, 0);
        const int32_t *l1 = nf == 2 && f[1].kind == HG_FIELD_SEQ ? hg_dataset_lengths(ds, 1) : NULL;
        int64_t item = 1;
        if (f[0].kind == HG_FIELD_ARRAY && strcmp(layout, "lm") == 0) {
            struct hg_shape is = hg_dataset_item_shape(ds, 0);
            item = hg_shape_numel(&is);
        }
        for (int64_t i = 0; i < n; i++)
            len[i] = (int32_t)((l1 && l1[i] > l0[i] ? l1[i] : l0[i]) * item);
        struct hg_batch_opts bo = {.max_tokens = maxtok, .max_sentences = maxsent,
                                   .required_multiple = mult, .world = world,
                                   .capacity = caps, .seed = (uint64_t)seed,
                                   .shuffle = !o->valid};
        rc = hg_epoch_plan(&ep, len, n, &bo, (uint64_t)epoch, err, sizeof(err));
    }
    if (rc == 0) {
        int64_t steps = hg_epoch_steps(ep), seen = 0;
        printf("| %s: %lld samples in %d shards\n", data, (long long)n,
               hg_dataset_nshards(ds));
        printf("| epoch %lld: %lld steps over %d ranks (capacity %s, max-tokens %lld, "
               "max-sentences %lld, multiple %lld)\n", (long long)epoch,
               (long long)steps, world, caps_s, (long long)maxtok, (long long)maxsent,
               (long long)mult);
        for (int r = 0; r < world; r++) {
            int64_t samples = 0, tokens = 0, padded = 0, empty = 0;
            for (int64_t st = 0; st < steps; st++) {
                int64_t c;
                const int64_t *idx = hg_epoch_batch(ep, r, st, &c);
                int64_t mx = 0;
                for (int64_t k = 0; k < c; k++) {
                    tokens += len[idx[k]];
                    if (len[idx[k]] > mx)
                        mx = len[idx[k]];
                }
                samples += c;
                padded += c * mx;
                empty += c == 0;
            }
            seen += samples;
            printf("| rank %d: capacity %g, %lld samples, %lld tokens (%lld with "
                   "padding), %.1f samples per batch, %lld empty steps\n", r,
                   caps[r], (long long)samples, (long long)tokens, (long long)padded,
                   steps > empty ? (double)samples / (double)(steps - empty) : 0.0,
                   (long long)empty);
        }
        if (seen != n)
            rc = hg_kerr(err, sizeof(err), "internal error: %lld of %lld samples planned",
                         (long long)seen, (long long)n);
    }
    if (rc != 0)
        fprintf(stderr, "hgpreprocess batches: %s\n", err);
    hg_epoch_free(ep);
    hg_dataset_close(ds);
    free(len);
    return rc ? 1 : 0;
}

/* The commands: each one's options struct, table and run function. */
static const struct command {
    const char *name;
    const struct hg_opt *opts;
    int nopts;
    size_t size; /* sizeof its options struct */
    int (*run)(const void *opts, const struct hg_opt_prog *p);
} commands[] = {
    {.name = "images", .opts = images_opts, .nopts = NOPTS(images_opts),
     .size = sizeof(struct images_opts), .run = cmd_images},
    {.name = "translation", .opts = translation_opts, .nopts = NOPTS(translation_opts),
     .size = sizeof(struct translation_opts), .run = cmd_translation},
    {.name = "lm", .opts = lm_opts, .nopts = NOPTS(lm_opts), .size = sizeof(struct lm_opts),
     .run = cmd_lm},
    {.name = "batches", .opts = batches_opts, .nopts = NOPTS(batches_opts),
     .size = sizeof(struct batches_opts), .run = cmd_batches},
    {.name = "apply-bpe", .opts = apply_bpe_opts, .nopts = NOPTS(apply_bpe_opts),
     .size = sizeof(struct apply_bpe_opts), .run = cmd_apply_bpe},
};

/* What every command takes besides its own options. */
struct common_opts {
    int help;
};

static const struct hg_opt common_opts[] = {
    {.name = "help", .short_name = 'h', .type = HG_OPT_BOOL, .group = 1,
     .offset = offsetof(struct common_opts, help), .help = "show this help and exit"},
};

/* Parses argv[2..] into the command's options and runs it: its exit status. */
static int run_command(const struct command *c, int argc, char **argv)
{
    void *opts = calloc(1, c->size);
    unsigned char *given = calloc((size_t)c->nopts, 1);
    if (!opts || !given) {
        free(opts);
        free(given);
        fprintf(stderr, "hgpreprocess: out of memory\n");
        return 1;
    }
    char title[64];
    snprintf(title, sizeof(title), "hgpreprocess %s options", c->name);
    const char *const groups[] = {title, "other", NULL};
    struct common_opts co = {0};
    const struct hg_opt_prog p = {
        .usage = usage_text,
        .groups = groups,
        .sets = {{.opts = c->opts, .n = c->nopts, .base = opts, .given = given},
                 {.opts = common_opts, .n = NOPTS(common_opts), .base = &co}},
        .nsets = 2,
    };
    char err[ERRLEN];
    int rc;
    if (hg_opt_parse(&p, argc - 1, argv + 1, err, sizeof(err)) != 0)
        rc = usage_error(c->name, "%s", err);
    else if (co.help)
        rc = (hg_opt_help(stdout, &p), 0);
    else
        rc = c->run(opts, &p);
    hg_opt_free(&p);
    free(opts);
    free(given);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage_error(NULL, "%s", "a command is required");
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        hg_print_version("hgpreprocess");
        return 0;
    }
    const char *names[NOPTS(commands) + 1];
    for (int i = 0; i < NOPTS(commands); i++) {
        if (strcmp(cmd, commands[i].name) == 0)
            return run_command(&commands[i], argc, argv);
        names[i] = commands[i].name;
    }
    names[NOPTS(commands)] = NULL;
    char hint[96], fmt[160];
    snprintf(fmt, sizeof(fmt), "unknown command '%%s'%s",
             hg_suggest_text(cmd, names, "", hint, sizeof(hint)));
    return usage_error(NULL, fmt, cmd);
}
