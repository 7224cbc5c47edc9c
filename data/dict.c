/* dict.c - fairseq-style dictionary (see dict.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hg_base.h"
#include "data/dict.h"
#include "data/text.h"

static const char *const base_specials[4] = {"<s>", "<pad>", "</s>", "<unk>"};

struct hg_dict {
    struct hg_strtab *t;  /* symbols by provisional id */
    int64_t *count;       /* [ccap] by provisional id */
    size_t ccap;
    int32_t nspecial;
    int final;
    int32_t *order;       /* final id -> provisional id [size] */
    int32_t *rank;        /* provisional id -> final id or -1 */
    int32_t size;
};

struct hg_dict *hg_dict_new(const char *const *extra_specials, int nextra)
{
    struct hg_dict *d = calloc(1, sizeof(*d));
    if (!d || !(d->t = hg_strtab_new()))
        goto fail;
    for (int i = 0; i < 4 + nextra; i++) {
        const char *s = i < 4 ? base_specials[i] : extra_specials[i - 4];
        if (hg_dict_add(d, s, strlen(s), 1) != i)
            goto fail;
    }
    d->nspecial = 4 + nextra;
    return d;
fail:
    hg_dict_free(d);
    return NULL;
}

void hg_dict_free(struct hg_dict *d)
{
    if (!d)
        return;
    hg_strtab_free(d->t);
    free(d->count);
    free(d->order);
    free(d->rank);
    free(d);
}

int32_t hg_dict_add(struct hg_dict *d, const char *sym, size_t n,
                    int64_t count)
{
    HG_CHECK(!d->final);
    int added;
    int32_t id = hg_strtab_intern(d->t, sym, n, &added);
    if (id < 0)
        return -1;
    if (added) {
        if ((size_t)id >= d->ccap) {
            size_t nc = d->ccap ? 2 * d->ccap : 1024;
            int64_t *c = realloc(d->count, nc * sizeof(*c));
            if (!c)
                return -1;
            d->count = c;
            d->ccap = nc;
        }
        d->count[id] = 0;
    }
    d->count[id] += count;
    return id;
}

/* qsort has no context argument in C11: the dictionary being sorted. */
static const struct hg_dict *sort_dict;

static int by_count_then_bytes(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    int64_t cx = sort_dict->count[x], cy = sort_dict->count[y];
    if (cx != cy)
        return cx > cy ? -1 : 1;
    return strcmp(hg_strtab_str(sort_dict->t, x), hg_strtab_str(sort_dict->t, y));
}

/* Final ids: specials, then provisional ids [nspecial, n) sorted or not. */
static int dict_freeze(struct hg_dict *d, int sort, int64_t threshold,
                       int64_t nwords)
{
    HG_CHECK(!d->final);
    int32_t n = hg_strtab_size(d->t);
    d->order = malloc((size_t)n * sizeof(*d->order));
    d->rank = malloc((size_t)n * sizeof(*d->rank));
    if (!d->order || !d->rank)
        return -1;
    for (int32_t i = 0; i < n; i++)
        d->order[i] = i;
    if (sort) {
        sort_dict = d;
        qsort(d->order + d->nspecial, (size_t)(n - d->nspecial),
              sizeof(*d->order), by_count_then_bytes);
        sort_dict = NULL;
    }
    int32_t keep = d->nspecial;
    for (int32_t i = d->nspecial; i < n; i++) {
        if (threshold > 0 && d->count[d->order[i]] < threshold)
            break; /* sorted: the rest are rarer */
        if (nwords >= 0 && keep - d->nspecial >= nwords)
            break;
        keep++;
    }
    for (int32_t i = 0; i < n; i++)
        d->rank[i] = -1;
    for (int32_t i = 0; i < keep; i++)
        d->rank[d->order[i]] = i;
    d->size = keep;
    d->final = 1;
    return 0;
}

int hg_dict_finalize(struct hg_dict *d, int64_t threshold, int64_t nwords)
{
    return dict_freeze(d, 1, threshold, nwords);
}

int32_t hg_dict_index(const struct hg_dict *d, const char *sym, size_t n)
{
    HG_CHECK(d->final);
    int32_t id = hg_strtab_find(d->t, sym, n);
    if (id < 0 || d->rank[id] < 0)
        return HG_DICT_UNK;
    return d->rank[id];
}

int32_t hg_dict_size(const struct hg_dict *d)
{
    return d->final ? d->size : hg_strtab_size(d->t);
}

int32_t hg_dict_nspecial(const struct hg_dict *d)
{
    return d->nspecial;
}

const char *hg_dict_symbol(const struct hg_dict *d, int32_t id)
{
    HG_CHECK(d->final && id >= 0 && id < d->size);
    return hg_strtab_str(d->t, d->order[id]);
}

int64_t hg_dict_count(const struct hg_dict *d, int32_t id)
{
    HG_CHECK(d->final && id >= 0 && id < d->size);
    return d->count[d->order[id]];
}

int hg_dict_save(const struct hg_dict *d, const char *path, char *err,
                 size_t errlen)
{
    HG_CHECK(d->final);
    struct hg_atomic_file a;
    if (hg_atomic_open(&a, path, err, errlen))
        return -1;
    for (int32_t i = 0; i < d->size; i++)
        fprintf(a.f, "%s %" PRId64 "\n", hg_dict_symbol(d, i),
                hg_dict_count(d, i));
    return hg_atomic_commit(&a, err, errlen);
}

int hg_dict_load(struct hg_dict **out, const char *path,
                 const char *const *extra_specials, int nextra, char *err,
                 size_t errlen)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return hg_kerr(err, errlen, "%s: cannot open: %s", path,
                       strerror(errno));
    struct hg_dict *d = hg_dict_new(extra_specials, nextra);
    if (!d) {
        fclose(f);
        return hg_kerr(err, errlen, "%s: out of memory", path);
    }
    struct hg_line_reader r;
    hg_line_reader_init(&r, f, path);
    char *line;
    size_t len;
    int rc, ret = 0;
    while ((rc = hg_line_reader_next(&r, &line, &len, err, errlen)) == 1) {
        static const char flag[] = " #fairseq:overwrite";
        size_t fl = sizeof(flag) - 1;
        if (len >= fl && memcmp(line + len - fl, flag, fl) == 0)
            line[len -= fl] = 0;
        while (len && line[len - 1] == ' ')
            line[--len] = 0;
        char *sp = strrchr(line, ' ');
        char *end;
        errno = 0;
        long long c = sp ? strtoll(sp + 1, &end, 10) : 0;
        if (!sp || sp == line || errno || end == sp + 1 || *end || c < 0) {
            ret = hg_kerr(err, errlen,
                          "%s:%lld: expected \"symbol count\", found \"%.40s\"",
                          path, (long long)r.lineno, line);
            break;
        }
        size_t sl = (size_t)(sp - line);
        int64_t line0 = r.lineno - 1;
        int32_t have = hg_strtab_find(d->t, line, sl);
        if (have >= 0 && have == line0 && line0 < d->nspecial) {
            d->count[have] = c; /* our own file: specials written first */
            continue;
        }
        if (have >= 0) {
            ret = hg_kerr(err, errlen, "%s:%lld: duplicate symbol \"%.40s\"",
                          path, (long long)r.lineno, line);
            break;
        }
        if (hg_dict_add(d, line, sl, c) < 0) {
            ret = hg_kerr(err, errlen, "%s: out of memory", path);
            break;
        }
    }
    if (rc < 0)
        ret = -1;
    hg_line_reader_free(&r);
    fclose(f);
    if (ret == 0 && dict_freeze(d, 0, 0, -1) != 0)
        ret = hg_kerr(err, errlen, "%s: out of memory", path);
    if (ret != 0) {
        hg_dict_free(d);
        return -1;
    }
    *out = d;
    return 0;
}
