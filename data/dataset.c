/* dataset.c - a set of HDF5 shards opened read-only (layout: docs/data.md).
 *
 * Open reads only shapes and the offsets arrays; every shard is validated
 * against the expected fields. Reads are hyperslabs of one row, serialised
 * by one mutex (serial HDF5 is not thread-safe), through a byte-bounded
 * LRU cache (hash map index -> entry, doubly-linked recency list). */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <hdf5.h>

#include "data/data-impl.h"
#include "data/hg_data.h"

#define HG_DS_MAX_FIELDS 8

/* Per shard, per field. */
struct sfield {
    hid_t data;        /* ARRAY: <name> [N, item...]; SEQ: <name>/tokens [T] */
    int64_t *offsets;  /* SEQ: [N+1]; ARRAY: NULL */
};

struct shard {
    char *path;
    hid_t file;
    int64_t n;
    int64_t set[3];        /* root attributes set_index, set_shards,
                              set_samples; -1: absent */
    struct sfield f[HG_DS_MAX_FIELDS];
};

/* A cached sample: key = index * nfields + field. */
struct centry {
    uint64_t key;
    struct centry *hnext;          /* hash chain */
    struct centry *prev, *next;    /* recency list, head = most recent */
    size_t bytes;                  /* payload + this header */
    int64_t count;
    unsigned char data[];          /* [count * esz] */
};

struct hg_dataset {
    int nfields;
    struct hg_field field[HG_DS_MAX_FIELDS];
    char *name[HG_DS_MAX_FIELDS];
    struct hg_shape item[HG_DS_MAX_FIELDS]; /* ARRAY: per-sample shape */
    int64_t item_elems[HG_DS_MAX_FIELDS];
    int nshards;
    struct shard *sh;      /* [nshards] */
    int64_t *prefix;       /* [nshards + 1]: first global index of each shard */
    int32_t *len[HG_DS_MAX_FIELDS]; /* [size] */
    pthread_mutex_t mu;
    /* LRU cache */
    size_t cache_cap, cache_bytes;
    struct centry **bucket; /* [nbucket] */
    size_t nbucket, nentry;
    struct centry *head, *tail;
    int64_t hits, misses;
};

/* ---------------------------------------------------------------- spec */

struct plist {
    char **p;
    int n, cap;
};

static int plist_add(struct plist *l, const char *s, size_t len)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        char **np = realloc(l->p, (size_t)cap * sizeof(*np));
        if (!np)
            return -1;
        l->p = np;
        l->cap = cap;
    }
    char *c = malloc(len + 1);
    if (!c)
        return -1;
    memcpy(c, s, len);
    c[len] = '\0';
    l->p[l->n++] = c;
    return 0;
}

static void plist_free(struct plist *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->p[i]);
    free(l->p);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Expands spec into file paths. */
static int expand_spec(const char *spec, struct plist *l, char *err, size_t errlen)
{
    struct stat st;
    if (strchr(spec, ',')) {
        const char *s = spec;
        while (*s) {
            const char *e = strchr(s, ',');
            size_t n = e ? (size_t)(e - s) : strlen(s);
            if (n > 0 && plist_add(l, s, n))
                return hg_kerr(err, errlen, "%s: out of memory", spec);
            s += n + (e ? 1 : 0);
        }
    } else if (stat(spec, &st) == 0 && S_ISDIR(st.st_mode)) {
        DIR *d = opendir(spec);
        if (!d)
            return hg_kerr(err, errlen, "%s: cannot open directory", spec);
        struct dirent *e;
        size_t sl = strlen(spec);
        int slash = sl > 0 && spec[sl - 1] == '/';
        while ((e = readdir(d))) {
            size_t n = strlen(e->d_name);
            if (n < 4 || strcmp(e->d_name + n - 3, ".h5") != 0 || e->d_name[0] == '.')
                continue;
            char *p = malloc(sl + n + 2);
            if (!p || plist_add(l, p, (size_t)sprintf(p, "%s%s%s", spec,
                                                      slash ? "" : "/", e->d_name))) {
                free(p);
                closedir(d);
                return hg_kerr(err, errlen, "%s: out of memory", spec);
            }
            free(p);
        }
        closedir(d);
        if (l->n > 1)
            qsort(l->p, (size_t)l->n, sizeof(*l->p), cmp_str);
    } else if (strpbrk(spec, "*?[")) {
        glob_t g;
        int r = glob(spec, 0, NULL, &g);
        if (r == 0) {
            for (size_t i = 0; i < g.gl_pathc; i++)
                if (plist_add(l, g.gl_pathv[i], strlen(g.gl_pathv[i]))) {
                    globfree(&g);
                    return hg_kerr(err, errlen, "%s: out of memory", spec);
                }
        }
        if (r == 0 || r == GLOB_NOMATCH)
            globfree(&g);
    } else {
        if (stat(spec, &st) != 0)
            return hg_kerr(err, errlen, "%s: no such file or directory", spec);
        if (plist_add(l, spec, strlen(spec)))
            return hg_kerr(err, errlen, "%s: out of memory", spec);
    }
    if (l->n == 0)
        return hg_kerr(err, errlen, "%s: no shards found", spec);
    return 0;
}

/* ---------------------------------------------------------------- open */

/* "i32", "u8", "f64", ... for a file type. */
static void type_str(hid_t t, char *buf, size_t len)
{
    H5T_class_t c = H5Tget_class(t);
    size_t sz = H5Tget_size(t);
    if (c == H5T_INTEGER)
        snprintf(buf, len, "%s%zu", H5Tget_sign(t) == H5T_SGN_NONE ? "u" : "i",
                 sz * 8);
    else if (c == H5T_FLOAT)
        snprintf(buf, len, "f%zu", sz * 8);
    else if (c == H5T_STRING)
        snprintf(buf, len, "string");
    else
        snprintf(buf, len, "HDF5 class %d size %zu", (int)c, sz);
}

static int type_matches(hid_t t, enum hg_dtype dt)
{
    H5T_class_t c = H5Tget_class(t);
    size_t sz = H5Tget_size(t);
    if (sz != hg_dtype_size(dt))
        return 0;
    if (dt == HG_F32)
        return c == H5T_FLOAT;
    if (c != H5T_INTEGER)
        return 0;
    int is_signed = H5Tget_sign(t) == H5T_SGN_2;
    return dt == HG_U8 ? !is_signed : is_signed;
}

#define HG_CHUNK_CACHE_BYTES ((size_t)64 << 20) /* per dataset, at most */
#define HG_CHUNK_CACHE_SLOTS 12289               /* prime, >> chunks held */

/* Opens loc/name and checks type and rank; *id and dims filled. */
static int open_checked(hid_t loc, const char *name, const char *what,
                        enum hg_dtype dt, int rank, hsize_t *dims,
                        const char *path, hid_t *id, char *err, size_t errlen)
{
    *id = -1;
    htri_t ex = H5Lexists(loc, name, H5P_DEFAULT);
    if (ex < 0) /* the lookup failed: a header's checksum, a broken index */
        return hg_kerr(err, errlen, "%s: cannot look up dataset '%s': the file's headers are "
                       "corrupt", path, what);
    if (ex == 0)
        return hg_kerr(err, errlen, "%s: no dataset '%s'", path, what);
    /* Rows are read in random order and chunks are checksummed (and images
     * compressed): without a chunk cache that holds the data, every sample
     * would read and verify a whole chunk. HDF5 allocates the cache as it
     * fills, so a small shard costs only its own size. */
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
    if (dapl >= 0)
        H5Pset_chunk_cache(dapl, HG_CHUNK_CACHE_SLOTS, HG_CHUNK_CACHE_BYTES, 1.0);
    hid_t d = H5Dopen2(loc, name, dapl >= 0 ? dapl : H5P_DEFAULT);
    if (dapl >= 0)
        H5Pclose(dapl);
    if (d < 0)
        return hg_kerr(err, errlen, "%s: cannot open dataset '%s' (not a dataset or corrupt)",
                       path, what);
    hid_t t = H5Dget_type(d);
    hid_t s = H5Dget_space(d);
    int rc = 0;
    char got[64];
    if (t < 0 || s < 0) {
        rc = hg_kerr(err, errlen, "%s: dataset '%s': cannot read type or shape",
                     path, what);
    } else if (!type_matches(t, dt)) {
        type_str(t, got, sizeof(got));
        rc = hg_kerr(err, errlen, "%s: dataset '%s' has type %s, expected %s", path,
                     what, got, hg_dtype_name(dt));
    } else {
        int nd = H5Sget_simple_extent_ndims(s);
        if (nd != rank)
            rc = hg_kerr(err, errlen, "%s: dataset '%s' has rank %d, expected %d",
                         path, what, nd, rank);
        else if (H5Sget_simple_extent_dims(s, dims, NULL) < 0)
            rc = hg_kerr(err, errlen, "%s: dataset '%s': cannot read shape", path,
                         what);
    }
    if (t >= 0)
        H5Tclose(t);
    if (s >= 0)
        H5Sclose(s);
    if (rc)
        H5Dclose(d);
    else
        *id = d;
    return rc;
}

static int open_shard(struct hg_dataset *ds, struct shard *sh, char *err,
                      size_t errlen)
{
    const char *path = sh->path;
    sh->file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (sh->file < 0)
        return hg_kerr(err, errlen, "%s: cannot open as HDF5 (missing, truncated or corrupt)",
                       path);
    sh->n = -1;
    const char *first_name = NULL;
    /* A corrupt header can claim any size: bound the rows we allocate for
     * (lengths, offsets) by what the file could hold; compression stays far
     * below 1024:1 on real data. */
    hsize_t fsize = 0;
    H5Fget_filesize(sh->file, &fsize);
    hsize_t max_rows = fsize * 1024 / sizeof(int64_t) + ((hsize_t)1 << 20);
    for (int i = 0; i < ds->nfields; i++) {
        const struct hg_field *fd = &ds->field[i];
        struct sfield *f = &sh->f[i];
        hsize_t dims[HG_MAX_DIMS + 1];
        char what[300];
        int64_t n;
        if (fd->kind == HG_FIELD_ARRAY) {
            if (open_checked(sh->file, fd->name, fd->name, fd->dtype, 1 + fd->rank,
                             dims, path, &f->data, err, errlen))
                return -1;
            n = (int64_t)dims[0];
            struct hg_shape item = {.ndim = fd->rank};
            int64_t elems = 1;
            for (int k = 0; k < fd->rank; k++) {
                item.dim[k] = (int64_t)dims[1 + k];
                /* one sample over 2^31 elements: a corrupt header */
                if (dims[1 + k] > (hsize_t)INT32_MAX ||
                    (item.dim[k] > 0 && elems > INT32_MAX / item.dim[k]))
                    return hg_kerr(err, errlen,
                                   "%s: dataset '%s': per-sample shape too large (corrupt?)",
                                   path, fd->name);
                elems *= item.dim[k];
            }
            if (dims[0] > max_rows)
                return hg_kerr(err, errlen,
                               "%s: dataset '%s' claims %llu rows in a %llu-byte file (corrupt?)",
                               path, fd->name, (unsigned long long)dims[0],
                               (unsigned long long)fsize);
            if (sh == ds->sh) {
                ds->item[i] = item;
                ds->item_elems[i] = elems;
            } else if (!hg_shape_equal(&item, &ds->item[i])) {
                char a[96], b[96];
                return hg_kerr(err, errlen,
                               "%s: dataset '%s' has item shape %s, but %s has %s",
                               path, fd->name, hg_shape_str(&item, a, sizeof(a)),
                               ds->sh[0].path, hg_shape_str(&ds->item[i], b, sizeof(b)));
            }
        } else {
            hid_t off;
            snprintf(what, sizeof(what), "%s/tokens", fd->name);
            htri_t ex = H5Lexists(sh->file, fd->name, H5P_DEFAULT);
            if (ex < 0)
                return hg_kerr(err, errlen, "%s: cannot look up group '%s': the file's "
                               "headers are corrupt", path, fd->name);
            if (ex == 0)
                return hg_kerr(err, errlen, "%s: no dataset '%s'", path, what);
            hid_t g = H5Gopen2(sh->file, fd->name, H5P_DEFAULT);
            if (g < 0)
                return hg_kerr(err, errlen, "%s: '%s' is not a group (corrupt?)", path,
                               fd->name);
            int rc = open_checked(g, "tokens", what, fd->dtype, 1, dims, path,
                                  &f->data, err, errlen);
            int64_t ntok = (int64_t)dims[0];
            snprintf(what, sizeof(what), "%s/offsets", fd->name);
            if (rc == 0)
                rc = open_checked(g, "offsets", what, HG_I64, 1, dims, path, &off,
                                  err, errlen);
            H5Gclose(g);
            if (rc)
                return -1;
            if (dims[0] < 1) {
                H5Dclose(off);
                return hg_kerr(err, errlen, "%s: dataset '%s' is empty (needs N+1 entries)",
                               path, what);
            }
            n = (int64_t)dims[0] - 1;
            if (dims[0] > max_rows) {
                H5Dclose(off);
                return hg_kerr(err, errlen,
                               "%s: dataset '%s' claims %llu entries in a %llu-byte file (corrupt?)",
                               path, what, (unsigned long long)dims[0],
                               (unsigned long long)fsize);
            }
            f->offsets = malloc((size_t)(n + 1) * sizeof(int64_t));
            if (!f->offsets) {
                H5Dclose(off);
                return hg_kerr(err, errlen, "%s: out of memory for '%s'", path, what);
            }
            herr_t r = H5Dread(off, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                               f->offsets);
            H5Dclose(off);
            if (r < 0)
                return hg_kerr(err, errlen, "%s: cannot read '%s' (corrupt?)", path, what);
            if (f->offsets[0] != 0)
                return hg_kerr(err, errlen, "%s: dataset '%s' row 0: offset %lld, expected 0",
                               path, what, (long long)f->offsets[0]);
            for (int64_t r2 = 0; r2 < n; r2++) {
                /* offsets[r2] >= 0 here (by induction): no overflow */
                int64_t l = f->offsets[r2 + 1] < f->offsets[r2]
                                ? -1 : f->offsets[r2 + 1] - f->offsets[r2];
                if (l < 0 || l > INT32_MAX)
                    return hg_kerr(err, errlen,
                                   "%s: dataset '%s' row %lld: offsets %lld -> %lld %s",
                                   path, what, (long long)r2, (long long)f->offsets[r2],
                                   (long long)f->offsets[r2 + 1],
                                   l < 0 ? "decrease" : "give a sample over 2^31 tokens");
            }
            if (f->offsets[n] != ntok)
                return hg_kerr(err, errlen,
                               "%s: dataset '%s' ends at %lld, but '%s/tokens' has %lld tokens",
                               path, what, (long long)f->offsets[n], fd->name,
                               (long long)ntok);
        }
        if (sh->n < 0) {
            sh->n = n;
            first_name = fd->name;
        } else if (n != sh->n) {
            return hg_kerr(err, errlen,
                           "%s: field '%s' has %lld samples, but field '%s' has %lld",
                           path, fd->name, (long long)n, first_name, (long long)sh->n);
        }
    }
    if (sh->n == 0)
        return hg_kerr(err, errlen, "%s: empty shard (0 samples)", path);
    static const char *const set_attr[3] = {"set_index", "set_shards", "set_samples"};
    for (int k = 0; k < 3; k++) {
        sh->set[k] = -1;
        if (H5Aexists(sh->file, set_attr[k]) <= 0)
            continue;
        hid_t a = H5Aopen(sh->file, set_attr[k], H5P_DEFAULT);
        if (a < 0 || H5Aread(a, H5T_NATIVE_INT64, &sh->set[k]) < 0 || sh->set[k] < 0) {
            if (a >= 0)
                H5Aclose(a);
            return hg_kerr(err, errlen, "%s: attribute %s unreadable (corrupt?)", path,
                           set_attr[k]);
        }
        H5Aclose(a);
    }
    return 0;
}

/* "dir/train-00001-of-00004.h5": the length of "dir/train", the index, the
 * count and the digits' width; 0 for other names. */
static size_t of_name(const char *path, long *idx, long *count, int *width)
{
    size_t n = strlen(path);
    const char *of = NULL;
    for (const char *p = strstr(path, "-of-"); p; p = strstr(p + 1, "-of-"))
        of = p;
    if (!of || n < 3 || strcmp(path + n - 3, ".h5") != 0)
        return 0;
    const char *a = of, *c = of + 4;
    while (a > path && a[-1] >= '0' && a[-1] <= '9')
        a--;
    size_t wa = (size_t)(of - a), wc = strspn(c, "0123456789");
    if (wa == 0 || wa > 9 || wc == 0 || wc > 9 || strcmp(c + wc, ".h5") != 0 || a == path ||
        a[-1] != '-')
        return 0;
    *idx = strtol(a, NULL, 10);
    *count = strtol(c, NULL, 10);
    *width = (int)wc;
    return (size_t)(a - 1 - path);
}

/* Every "-of-N" set complete (each index 0..N-1 once), and every set whose
 * shards carry set_* attributes (hgpreprocess writes them) complete with
 * the sample count they declare. The first problem names what is missing. */
static int check_sets(const struct hg_dataset *ds, const char *spec, char *err,
                      size_t errlen)
{
    int n = ds->nshards;
    for (int s = 0; s < n; s++) {
        long idx, cnt;
        int w;
        size_t plen = of_name(ds->sh[s].path, &idx, &cnt, &w);
        if (plen == 0)
            continue;
        /* the first shard of each (prefix, count) group checks the group */
        int first = 1, seen_here = 0;
        for (int t = 0; t < s && first; t++) {
            long i2, c2;
            int w2;
            size_t p2 = of_name(ds->sh[t].path, &i2, &c2, &w2);
            first = !(p2 == plen && c2 == cnt && strncmp(ds->sh[t].path, ds->sh[s].path, plen) == 0);
        }
        if (!first)
            continue;
        if (cnt < 1 || idx >= cnt)
            return hg_kerr(err, errlen, "%s: shard index %ld of %ld in the name", ds->sh[s].path,
                           idx, cnt);
        char *have = calloc((size_t)cnt, 1);
        if (!have)
            return hg_kerr(err, errlen, "%s: out of memory", spec);
        for (int t = s; t < n; t++) {
            long i2, c2;
            int w2;
            size_t p2 = of_name(ds->sh[t].path, &i2, &c2, &w2);
            if (p2 == plen && strncmp(ds->sh[t].path, ds->sh[s].path, plen) == 0) {
                if (c2 != cnt) {
                    free(have);
                    return hg_kerr(err, errlen, "%s and %s: shard sets of %ld and %ld "
                                   "files mixed", ds->sh[s].path, ds->sh[t].path, cnt, c2);
                }
                if (i2 < cnt)
                    have[i2] = 1;
                seen_here++;
            }
        }
        seen_here = 0;
        for (long i = 0; i < cnt; i++)
            seen_here += have[i];
        if (seen_here < cnt) {
            char list[512] = "";
            size_t k = 0;
            long missing = 0;
            const char *base = strrchr(ds->sh[s].path, '/');
            base = base ? base + 1 : ds->sh[s].path;
            int blen = (int)(plen - (size_t)(base - ds->sh[s].path));
            for (long i = 0; i < cnt; i++) {
                if (have[i])
                    continue;
                if (missing++ < 4 && k < sizeof(list))
                    k += (size_t)snprintf(list + k, sizeof(list) - k, "%s%.*s-%0*ld-of-%0*ld.h5",
                                          missing > 1 ? ", " : "", blen, base, w, i, w, cnt);
            }
            if (missing > 4 && k < sizeof(list))
                snprintf(list + k, sizeof(list) - k, " and %ld more", missing - 4);
            free(have);
            return hg_kerr(err, errlen, "%s: incomplete shard set: %ld of %ld files "
                           "missing: %s (an interrupted hgpreprocess?)", spec, missing, cnt,
                           list);
        }
        free(have);
    }
    for (int s = 0; s < n; s++) {
        const int64_t *set = ds->sh[s].set;
        if (set[1] < 0 || set[2] < 0)
            continue;
        int first = 1;
        for (int t = 0; t < s && first; t++)
            first = !(ds->sh[t].set[1] == set[1] && ds->sh[t].set[2] == set[2]);
        if (!first)
            continue;
        int64_t shards = 0, samples = 0;
        for (int t = s; t < n; t++)
            if (ds->sh[t].set[1] == set[1] && ds->sh[t].set[2] == set[2])
                shards++, samples += ds->sh[t].n;
        if (shards != set[1] || samples != set[2])
            return hg_kerr(err, errlen, "%s: incomplete shard set: %lld shards with %lld "
                           "samples, but %s says its set has %lld shards with %lld samples",
                           spec, (long long)shards, (long long)samples, ds->sh[s].path,
                           (long long)set[1], (long long)set[2]);
    }
    return 0;
}

static void close_shard(struct hg_dataset *ds, struct shard *sh)
{
    for (int i = 0; i < ds->nfields; i++) {
        if (sh->f[i].data >= 0)
            H5Dclose(sh->f[i].data);
        free(sh->f[i].offsets);
    }
    if (sh->file >= 0)
        H5Fclose(sh->file);
    free(sh->path);
}

static void cache_clear(struct hg_dataset *ds);

void hg_dataset_close(struct hg_dataset *ds)
{
    if (!ds)
        return;
    for (int s = 0; s < ds->nshards; s++)
        close_shard(ds, &ds->sh[s]);
    free(ds->sh);
    free(ds->prefix);
    for (int i = 0; i < ds->nfields; i++) {
        free(ds->len[i]);
        free(ds->name[i]);
    }
    cache_clear(ds);
    free(ds->bucket);
    pthread_mutex_destroy(&ds->mu);
    free(ds);
}

/* hgtrain's splits and hgplan's longest sample look their shards up here. */
int hg_dataset_split_spec(const char *data, const char *split, char *out,
                          size_t len, char *err, size_t errlen)
{
    struct stat st;
    snprintf(out, len, "%s/%s", data, split);
    if (stat(out, &st) == 0 && S_ISDIR(st.st_mode))
        return 0;
    snprintf(out, len, "%s/%s-*.h5", data, split);
    glob_t gl;
    int found = glob(out, 0, NULL, &gl) == 0 && gl.gl_pathc > 0;
    globfree(&gl);
    if (found)
        return 0;
    if (stat(data, &st) != 0)
        return hg_kerr(err, errlen, "--data %s: %s (prepare data with hgpreprocess; "
                       "for the default job: hgpreprocess images --fashion-mnist "
                       "/usr/share/datasets/fashion-mnist --out %s)",
                       data, strerror(errno), data);
    return hg_kerr(err, errlen, "--data %s: no split '%s' (looked for %s/%s/ and %s/%s-*.h5)",
                   data, split, data, split, data, split);
}

int hg_dataset_open(struct hg_dataset **out, const char *spec,
                    const struct hg_field *fields, int nfields,
                    size_t cache_bytes, char *err, size_t errlen)
{
    HG_CHECK(out && spec && fields && nfields > 0 && nfields <= HG_DS_MAX_FIELDS);
    *out = NULL;
    for (int i = 0; i < nfields; i++) {
        HG_CHECK(fields[i].name && fields[i].name[0]);
        HG_CHECK(fields[i].kind == HG_FIELD_SEQ ||
                 (fields[i].rank >= 0 && fields[i].rank < HG_MAX_DIMS));
        if (hg__h5_mem_type(fields[i].dtype) < 0)
            return hg_kerr(err, errlen, "%s: field '%s': dtype %s is not supported in shards",
                           spec, fields[i].name, hg_dtype_name(fields[i].dtype));
    }
    hg__h5_quiet();
    struct plist pl = {0};
    if (expand_spec(spec, &pl, err, errlen)) {
        plist_free(&pl);
        return -1;
    }
    struct hg_dataset *ds = calloc(1, sizeof(*ds));
    if (!ds) {
        plist_free(&pl);
        return hg_kerr(err, errlen, "%s: out of memory", spec);
    }
    pthread_mutex_init(&ds->mu, NULL);
    ds->nfields = nfields;
    ds->cache_cap = cache_bytes;
    int rc = 0;
    for (int i = 0; i < nfields; i++) {
        ds->field[i] = fields[i];
        ds->name[i] = strdup(fields[i].name);
        if (!ds->name[i])
            rc = -1;
        ds->field[i].name = ds->name[i];
        if (fields[i].kind == HG_FIELD_SEQ)
            ds->field[i].rank = 1;
    }
    ds->sh = calloc((size_t)pl.n, sizeof(*ds->sh));
    ds->prefix = calloc((size_t)pl.n + 1, sizeof(int64_t));
    if (rc || !ds->sh || !ds->prefix) {
        plist_free(&pl);
        hg_dataset_close(ds);
        return hg_kerr(err, errlen, "%s: out of memory", spec);
    }
    for (int s = 0; s < pl.n; s++) {
        struct shard *sh = &ds->sh[s];
        sh->path = pl.p[s];
        pl.p[s] = NULL;
        sh->file = -1;
        for (int i = 0; i < nfields; i++)
            sh->f[i].data = -1;
        ds->nshards = s + 1;
        if (open_shard(ds, sh, err, errlen)) {
            rc = -1;
            break;
        }
        ds->prefix[s + 1] = ds->prefix[s] + sh->n;
    }
    plist_free(&pl);
    if (rc == 0)
        rc = check_sets(ds, spec, err, errlen);
    if (rc) {
        hg_dataset_close(ds);
        return -1;
    }
    int64_t size = ds->prefix[ds->nshards];
    for (int i = 0; i < nfields && rc == 0; i++) {
        int32_t *len = malloc((size_t)size * sizeof(int32_t));
        ds->len[i] = len;
        if (!len) {
            rc = hg_kerr(err, errlen, "%s: out of memory", spec);
            break;
        }
        if (fields[i].kind == HG_FIELD_ARRAY) {
            for (int64_t k = 0; k < size; k++)
                len[k] = 1;
            continue;
        }
        int64_t maxl = 0;
        for (int s = 0; s < ds->nshards; s++) {
            const int64_t *o = ds->sh[s].f[i].offsets;
            for (int64_t r = 0; r < ds->sh[s].n; r++) {
                int64_t l = o[r + 1] - o[r];
                len[ds->prefix[s] + r] = (int32_t)l;
                if (l > maxl)
                    maxl = l;
            }
        }
        ds->item[i] = (struct hg_shape){.ndim = 1, .dim = {maxl}};
        ds->item_elems[i] = maxl;
    }
    if (rc) {
        hg_dataset_close(ds);
        return -1;
    }
    *out = ds;
    return 0;
}

/* ---------------------------------------------------------------- queries */

int64_t hg_dataset_size(const struct hg_dataset *ds)
{
    return ds->prefix[ds->nshards];
}

int hg_dataset_nshards(const struct hg_dataset *ds)
{
    return ds->nshards;
}

const char *hg_dataset_shard_path(const struct hg_dataset *ds, int shard)
{
    HG_CHECK(shard >= 0 && shard < ds->nshards);
    return ds->sh[shard].path;
}

void hg_dataset_locate(const struct hg_dataset *ds, int64_t index, int *shard,
                       int64_t *row)
{
    HG_CHECK(index >= 0 && index < hg_dataset_size(ds));
    /* the last shard whose first index is <= index */
    int lo = 0, hi = ds->nshards - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (ds->prefix[mid] <= index)
            lo = mid;
        else
            hi = mid - 1;
    }
    *shard = lo;
    *row = index - ds->prefix[lo];
}

const int32_t *hg_dataset_lengths(const struct hg_dataset *ds, int field)
{
    HG_CHECK(field >= 0 && field < ds->nfields);
    return ds->len[field];
}

struct hg_shape hg_dataset_item_shape(const struct hg_dataset *ds, int field)
{
    HG_CHECK(field >= 0 && field < ds->nfields);
    return ds->item[field];
}

int hg__dataset_nfields(const struct hg_dataset *ds)
{
    return ds->nfields;
}

void hg__dataset_field(const struct hg_dataset *ds, int field,
                       enum hg_field_kind *kind, enum hg_dtype *dtype)
{
    HG_CHECK(field >= 0 && field < ds->nfields);
    *kind = ds->field[field].kind;
    *dtype = ds->field[field].dtype;
}

void hg_dataset_cache_stats(const struct hg_dataset *ds, int64_t *hits,
                            int64_t *misses, size_t *bytes)
{
    pthread_mutex_t *mu = (pthread_mutex_t *)&ds->mu;
    pthread_mutex_lock(mu);
    if (hits)
        *hits = ds->hits;
    if (misses)
        *misses = ds->misses;
    if (bytes)
        *bytes = ds->cache_bytes;
    pthread_mutex_unlock(mu);
}

/* ---------------------------------------------------------------- cache */

static size_t hash_key(uint64_t k, size_t nbucket)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return (size_t)k & (nbucket - 1);
}

static void lru_unlink(struct hg_dataset *ds, struct centry *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        ds->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        ds->tail = e->prev;
    e->prev = e->next = NULL;
}

static void lru_push_front(struct hg_dataset *ds, struct centry *e)
{
    e->prev = NULL;
    e->next = ds->head;
    if (ds->head)
        ds->head->prev = e;
    ds->head = e;
    if (!ds->tail)
        ds->tail = e;
}

static struct centry *cache_find(struct hg_dataset *ds, uint64_t key)
{
    if (!ds->bucket)
        return NULL;
    for (struct centry *e = ds->bucket[hash_key(key, ds->nbucket)]; e; e = e->hnext)
        if (e->key == key)
            return e;
    return NULL;
}

static void cache_evict(struct hg_dataset *ds, struct centry *e)
{
    struct centry **pp = &ds->bucket[hash_key(e->key, ds->nbucket)];
    while (*pp != e)
        pp = &(*pp)->hnext;
    *pp = e->hnext;
    lru_unlink(ds, e);
    ds->cache_bytes -= e->bytes;
    ds->nentry--;
    free(e);
}

static void cache_clear(struct hg_dataset *ds)
{
    struct centry *e = ds->head;
    while (e) {
        struct centry *n = e->next;
        free(e);
        e = n;
    }
    ds->head = ds->tail = NULL;
    ds->nentry = 0;
    ds->cache_bytes = 0;
}

/* Inserts a copy of data; silently skips when memory is short. */
static void cache_insert(struct hg_dataset *ds, uint64_t key, const void *data,
                         int64_t count, size_t nbytes)
{
    size_t bytes = sizeof(struct centry) + nbytes;
    if (bytes > ds->cache_cap)
        return;
    if (ds->nentry + 1 > ds->nbucket) { /* grow: load factor <= 1 */
        size_t nb = ds->nbucket ? 2 * ds->nbucket : 64;
        struct centry **b = calloc(nb, sizeof(*b));
        if (!b)
            return;
        for (struct centry *e = ds->head; e; e = e->next) {
            size_t h = hash_key(e->key, nb);
            e->hnext = b[h];
            b[h] = e;
        }
        free(ds->bucket);
        ds->bucket = b;
        ds->nbucket = nb;
    }
    while (ds->cache_bytes + bytes > ds->cache_cap && ds->tail)
        cache_evict(ds, ds->tail);
    struct centry *e = malloc(bytes);
    if (!e)
        return;
    e->key = key;
    e->bytes = bytes;
    e->count = count;
    memcpy(e->data, data, nbytes);
    size_t h = hash_key(key, ds->nbucket);
    e->hnext = ds->bucket[h];
    ds->bucket[h] = e;
    lru_push_front(ds, e);
    ds->cache_bytes += bytes;
    ds->nentry++;
}

/* ---------------------------------------------------------------- read */

static int check_vocab(const struct hg_field *fd, const void *data, int64_t count,
                       const char *path, const char *what, int64_t row, char *err,
                       size_t errlen)
{
    if (fd->vocab <= 0 || !hg__dtype_is_int(fd->dtype))
        return 0;
    for (int64_t k = 0; k < count; k++) {
        int64_t v;
        switch (fd->dtype) {
        case HG_U8: v = ((const uint8_t *)data)[k]; break;
        case HG_I8: v = ((const int8_t *)data)[k]; break;
        case HG_I32: v = ((const int32_t *)data)[k]; break;
        default: v = ((const int64_t *)data)[k]; break;
        }
        if (v < 0 || v >= fd->vocab)
            return hg_kerr(err, errlen,
                           "%s: dataset '%s' row %lld: token id %lld outside the vocabulary [0, %lld)",
                           path, what, (long long)row, (long long)v,
                           (long long)fd->vocab);
    }
    return 0;
}

/* Reads one row from disk into dst (the lock is held). */
static int read_row(struct hg_dataset *ds, int field, int shard, int64_t row,
                    void *dst, size_t cap, int64_t *count, char *err,
                    size_t errlen)
{
    const struct hg_field *fd = &ds->field[field];
    const struct sfield *f = &ds->sh[shard].f[field];
    const char *path = ds->sh[shard].path;
    size_t esz = hg_dtype_size(fd->dtype);
    char what[300];
    hsize_t start[HG_MAX_DIMS + 1] = {0}, cnt[HG_MAX_DIMS + 1];
    int nd;
    int64_t n;
    if (fd->kind == HG_FIELD_SEQ) {
        snprintf(what, sizeof(what), "%s/tokens", fd->name);
        nd = 1;
        start[0] = (hsize_t)f->offsets[row];
        n = f->offsets[row + 1] - f->offsets[row];
        cnt[0] = (hsize_t)n;
    } else {
        snprintf(what, sizeof(what), "%s", fd->name);
        nd = 1 + fd->rank;
        start[0] = (hsize_t)row;
        cnt[0] = 1;
        for (int k = 0; k < fd->rank; k++)
            cnt[1 + k] = (hsize_t)ds->item[field].dim[k];
        n = ds->item_elems[field];
    }
    if ((size_t)n * esz > cap)
        return hg_kerr(err, errlen,
                       "%s: dataset '%s' row %lld: %lld elements do not fit in %zu bytes",
                       path, what, (long long)row, (long long)n, cap);
    *count = n;
    if (n == 0)
        return 0;
    hsize_t mdim = (hsize_t)n;
    hid_t fs = H5Dget_space(f->data);
    hid_t ms = H5Screate_simple(1, &mdim, NULL);
    int rc = -1;
    if (fs >= 0 && ms >= 0 &&
        H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, cnt, NULL) >= 0 &&
        H5Dread(f->data, hg__h5_mem_type(fd->dtype), ms, fs, H5P_DEFAULT, dst) >= 0)
        rc = 0;
    (void)nd;
    if (ms >= 0)
        H5Sclose(ms);
    if (fs >= 0)
        H5Sclose(fs);
    if (rc)
        return hg_kerr(err, errlen, "%s: dataset '%s' row %lld: read failed (corrupt?)",
                       path, what, (long long)row);
    return check_vocab(fd, dst, n, path, what, row, err, errlen);
}

int hg_dataset_read(struct hg_dataset *ds, int field, int64_t index, void *dst,
                    size_t cap, int64_t *count, char *err, size_t errlen)
{
    HG_CHECK(field >= 0 && field < ds->nfields);
    HG_CHECK(index >= 0 && index < hg_dataset_size(ds));
    int shard;
    int64_t row, n = 0;
    hg__h5_quiet(); /* this thread's HDF5 error stack */
    hg_dataset_locate(ds, index, &shard, &row);
    size_t esz = hg_dtype_size(ds->field[field].dtype);
    uint64_t key = (uint64_t)index * (uint64_t)ds->nfields + (uint64_t)field;
    int rc = 0;
    pthread_mutex_lock(&ds->mu);
    struct centry *e = ds->cache_cap ? cache_find(ds, key) : NULL;
    if (e) {
        if ((size_t)e->count * esz > cap) {
            rc = hg_kerr(err, errlen,
                         "%s: dataset '%s' row %lld: %lld elements do not fit in %zu bytes",
                         ds->sh[shard].path, ds->field[field].name, (long long)row,
                         (long long)e->count, cap);
        } else {
            memcpy(dst, e->data, (size_t)e->count * esz);
            n = e->count;
            lru_unlink(ds, e);
            lru_push_front(ds, e);
            ds->hits++;
        }
    } else {
        ds->misses++;
        rc = read_row(ds, field, shard, row, dst, cap, &n, err, errlen);
        if (rc == 0 && ds->cache_cap)
            cache_insert(ds, key, dst, n, (size_t)n * esz);
    }
    pthread_mutex_unlock(&ds->mu);
    if (count)
        *count = rc ? 0 : n;
    return rc;
}
