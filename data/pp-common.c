/* pp-common.c - what the hgpreprocess commands (data/pp-*.c) share: the
 * files and directories this run made (removed again if it fails), usage
 * errors, progress lines, int vectors, the shard writer's shards and their
 * split over a set, and the text helpers (tokens, BPE codes learned or
 * loaded, BPE ids to dictionary ids). Here so that no command file uses
 * another: each uses this file only (declared in data/pp-impl.h).
 * docs/preprocess.md. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/hg_base.h"
#include "data/bpe.h"
#include "data/dict.h"
#include "data/hg_data.h"
#include "data/pp-impl.h"
#include "data/text.h"
#include "kernels/hg_kernels.h"

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

int hg__pp_made_file(const char *path, char *err, size_t errlen)
{
    if (remember(&made.files, &made.nfiles, &made.fcap, path))
        return hg_kerr(err, errlen, "out of memory");
    return 0;
}

/* mkdir -p, remembering the directories it creates. */
int hg__pp_make_dirs(const char *path, char *err, size_t errlen)
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

void hg__pp_made_clear(int remove_them)
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

char *hg__pp_path_join(const char *a, const char *b)
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

/* -------------------------------------------------------------- usage */

int hg__pp_usage_error(const char *usage, const char *cmd, const char *fmt,
                       const char *what)
{
    fprintf(stderr, "hgpreprocess%s%s: ", cmd ? " " : "", cmd ? cmd : "");
    fprintf(stderr, fmt, what);
    fprintf(stderr, "\n%s", usage);
    return 2;
}

/* ------------------------------------------------------------ progress */

void hg__pp_progress_start(struct progress *p, const char *what)
{
    p->what = what;
    p->tty = isatty(2);
    p->t0 = p->last = hg_now();
}

void hg__pp_progress_tick(struct progress *p, int64_t done)
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

double hg__pp_progress_end(struct progress *p, int64_t done)
{
    double dt = hg_now() - p->t0;
    if (p->tty && dt >= 0.25)
        fprintf(stderr, "\r%s: %" PRId64 " sentences, %.0f sentences/s   \n",
                p->what, done, (double)done / (dt > 0 ? dt : 1e-9));
    return dt;
}

/* --------------------------------------------------------- int vectors */

int hg__pp_ivec_reserve(struct ivec *a, size_t extra)
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

int hg__pp_shard_open(struct shard_out *s, const char *path,
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

int hg__pp_shard_finish(struct shard_out *s, char *err, size_t errlen)
{
    int rc = hg_shard_writer_finish(s->w, err, errlen);
    s->w = NULL;
    if (rc == 0)
        rc = hg__pp_made_file(s->path, err, errlen);
    free(s->path);
    s->path = NULL;
    return rc;
}

void hg__pp_shard_abort(struct shard_out *s)
{
    if (s->w)
        hg_shard_writer_abort(s->w);
    s->w = NULL;
    free(s->path);
    s->path = NULL;
}

/* Shard s of k over n samples: [n*s/k, n*(s+1)/k). */
int64_t hg__pp_shard_lo(int64_t n, int k, int s)
{
    return (int64_t)((__int128)n * s / k);
}

int hg__pp_clamp_shards(int64_t want, int64_t n)
{
    int64_t k = want < n ? want : n;
    return k < 1 ? 1 : (int)k;
}

/* Refuses to mix with shards of an earlier run: any shard-NNNNN.h5 in dir
 * with NNNNN >= k would be read together with ours. */
int hg__pp_check_stale_shards(const char *dir, int k, char *err, size_t errlen)
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

/* --------------------------------------------------------------- text */

FILE *hg__pp_open_text(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        hg_kerr(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    return f;
}

int hg__pp_add_words(struct textctx *c, char *line, char *err, size_t errlen)
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
int hg__pp_segment_line(struct textctx *c, char *line, struct ivec *out,
                        char *err, size_t errlen)
{
    int64_t n = hg_text_split(line, &c->tok, &c->tokcap);
    if (n < 0)
        return hg_kerr(err, errlen, "out of memory");
    for (int64_t i = 0; i < n; i++) {
        const int32_t *t;
        int k = hg_bpe_segment(c->bpe, c->tok[i], strlen(c->tok[i]), &t);
        if (k < 0 || hg__pp_ivec_reserve(out, (size_t)k))
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
int hg__pp_get_codes(struct textctx *c, int64_t merges, const char *codes,
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

int hg__pp_idmap_get(struct idmap *m, const struct hg_bpe *b,
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
int hg__pp_dict_from_counts(struct hg_dict *d, const struct hg_bpe *b,
                            const int64_t *cnt, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (cnt[i] && hg_dict_add(d, hg_bpe_token(b, (int32_t)i),
                                  hg_bpe_token_len(b, (int32_t)i), cnt[i]) < 0)
            return -1;
    return 0;
}

int hg__pp_count_tokens(int64_t **cnt, size_t *n, const struct hg_bpe *b,
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
