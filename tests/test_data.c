/* test_data.c - shard writer, shard sets, LRU cache, loader.
 * Exit 0: pass; 1: failure (message on stderr). */
#define _GNU_SOURCE

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hdf5.h>

#include "data/hg_data.h"
#include "tests/hg_test.h"


static char dir[256];
static char err[1024];

/* ------------------------------------------------------------ the samples */

enum { F_SRC, F_IMG, F_LABEL, F_VEC, NF };
static const struct hg_field fields[NF] = {
    {"src", HG_FIELD_SEQ, HG_I32, 1, 1000},
    {"img", HG_FIELD_ARRAY, HG_U8, 2, 0},
    {"label", HG_FIELD_ARRAY, HG_I64, 0, 0},
    {"vec", HG_FIELD_ARRAY, HG_F32, 1, 0},
};
static const struct hg_shape item_shape[NF] = {
    {0, {0}}, {2, {3, 4}}, {0, {0}}, {1, {5}}};

#define MAXLEN 400

static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

/* Sample i (global index): tokens [len], img [3,4], label, vec [5]. */
struct sample {
    int32_t len;
    int32_t tok[MAXLEN];
    uint8_t img[12];
    int64_t label;
    float vec[5];
};

static void make_sample(int64_t i, struct sample *s)
{
    s->len = (int32_t)(mix((uint64_t)i) % (i % 7 == 0 ? MAXLEN : 40));
    for (int k = 0; k < s->len; k++)
        s->tok[k] = (int32_t)((i * 31 + k * 7) % 1000);
    for (int k = 0; k < 12; k++)
        s->img[k] = (uint8_t)(i + k * 19);
    s->label = i * 3 - 5;
    for (int k = 0; k < 5; k++)
        s->vec[k] = (float)i + 0.5f * (float)k;
}

static int mode_of(const char *p)
{
    struct stat st;
    if (stat(p, &st) != 0)
        return -1;
    return (int)(st.st_mode & 0777);
}

static int exists(const char *p)
{
    return access(p, F_OK) == 0;
}

/* Writes samples [first, first + n) to path; checks the .tmp on the way. */
static void write_shard(const char *path, int64_t first, int64_t n)
{
    struct hg_shard_writer *w;
    int rc = hg_shard_writer_open(&w, path, fields, NF, item_shape, err, sizeof(err));
    REQUIRE(rc == 0, "writer open: %s", err);
    char tmp[512];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    EXPECT(mode_of(tmp) == 0600, "%s mode %o while writing", tmp, mode_of(tmp));
    EXPECT(!exists(path), "%s exists before finish", path);
    struct sample s;
    for (int64_t i = first; i < first + n; i++) {
        make_sample(i, &s);
        const void *v[NF] = {s.tok, s.img, &s.label, s.vec};
        int64_t c[NF] = {s.len, 0, 0, 0};
        rc = hg_shard_writer_add(w, v, c, err, sizeof(err));
        REQUIRE(rc == 0, "writer add: %s", err);
    }
    rc = hg_shard_writer_finish(w, err, sizeof(err));
    REQUIRE(rc == 0, "writer finish: %s", err);
    EXPECT(!exists(tmp), "%s left behind", tmp);
    EXPECT(mode_of(path) == 0644, "%s mode %o", path, mode_of(path));
}

/* ------------------------------------------------------------ good data */

static const int64_t shard_n[3] = {2000, 1, 300};
static int64_t total;

static void check_all(struct hg_dataset *ds, const char *how)
{
    EXPECT(hg_dataset_size(ds) == total, "%s: size %lld", how,
           (long long)hg_dataset_size(ds));
    EXPECT(hg_dataset_nshards(ds) == 3, "%s: %d shards", how, hg_dataset_nshards(ds));
    int shard;
    int64_t row, first = 0;
    for (int s = 0; s < 3; s++) {
        hg_dataset_locate(ds, first, &shard, &row);
        EXPECT(shard == s && row == 0, "%s: locate(%lld) = %d,%lld", how,
               (long long)first, shard, (long long)row);
        hg_dataset_locate(ds, first + shard_n[s] - 1, &shard, &row);
        EXPECT(shard == s && row == shard_n[s] - 1, "%s: locate last of %d", how, s);
        first += shard_n[s];
    }
    struct hg_shape is = hg_dataset_item_shape(ds, F_IMG);
    EXPECT(is.ndim == 2 && is.dim[0] == 3 && is.dim[1] == 4, "%s: img item shape", how);
    is = hg_dataset_item_shape(ds, F_LABEL);
    EXPECT(is.ndim == 0, "%s: label item rank %d", how, is.ndim);
    const int32_t *len = hg_dataset_lengths(ds, F_SRC);
    const int32_t *len1 = hg_dataset_lengths(ds, F_IMG);
    struct sample s, r;
    int bad = 0;
    for (int64_t i = 0; i < total && bad < 5; i++) {
        make_sample(i, &s);
        int64_t c[NF];
        int rc = hg_dataset_read(ds, F_SRC, i, r.tok, sizeof(r.tok), &c[0], err, sizeof(err));
        rc |= hg_dataset_read(ds, F_IMG, i, r.img, sizeof(r.img), &c[1], err, sizeof(err));
        rc |= hg_dataset_read(ds, F_LABEL, i, &r.label, sizeof(r.label), &c[2], err,
                              sizeof(err));
        rc |= hg_dataset_read(ds, F_VEC, i, r.vec, sizeof(r.vec), &c[3], err, sizeof(err));
        int ok = rc == 0 && len[i] == s.len && len1[i] == 1 && c[0] == s.len &&
                 c[1] == 12 && c[2] == 1 && c[3] == 5 &&
                 memcmp(r.tok, s.tok, (size_t)s.len * 4) == 0 &&
                 memcmp(r.img, s.img, 12) == 0 && r.label == s.label &&
                 memcmp(r.vec, s.vec, sizeof(s.vec)) == 0;
        EXPECT(ok, "%s: sample %lld differs (rc %d: %s)", how, (long long)i, rc,
               rc ? err : "");
        bad += !ok;
    }
}

static void test_write_read(void)
{
    char p[512];
    int64_t first = 0;
    for (int s = 0; s < 3; s++) {
        snprintf(p, sizeof(p), "%s/good/shard_%d.h5", dir, s);
        write_shard(p, first, shard_n[s]);
        first += shard_n[s];
    }
    total = first;

    /* abort leaves nothing */
    snprintf(p, sizeof(p), "%s/good/aborted.h5", dir);
    struct hg_shard_writer *w;
    REQUIRE(hg_shard_writer_open(&w, p, fields, NF, item_shape, err, sizeof(err)) == 0,
            "%s", err);
    struct sample s;
    make_sample(3, &s);
    const void *v[NF] = {s.tok, s.img, &s.label, s.vec};
    int64_t c[NF] = {s.len, 0, 0, 0};
    EXPECT(hg_shard_writer_add(w, v, c, err, sizeof(err)) == 0, "%s", err);
    hg_shard_writer_abort(w);
    char tmp[600];
    snprintf(tmp, sizeof(tmp), "%s.tmp", p);
    EXPECT(!exists(p) && !exists(tmp), "abort left a file");

    /* a writer for a path in a missing directory fails, naming it */
    snprintf(p, sizeof(p), "%s/nodir/x.h5", dir);
    EXPECT(hg_shard_writer_open(&w, p, fields, NF, item_shape, err, sizeof(err)) == -1 &&
               strstr(err, p), "missing dir: %s", err);

    struct hg_dataset *ds;
    char spec[2048];
    snprintf(spec, sizeof(spec), "%s/good", dir);
    REQUIRE(hg_dataset_open(&ds, spec, fields, NF, 0, err, sizeof(err)) == 0, "%s", err);
    check_all(ds, "directory");
    snprintf(p, sizeof(p), "%s/good/shard_2.h5", dir);
    EXPECT(strcmp(hg_dataset_shard_path(ds, 2), p) == 0, "shard path %s",
           hg_dataset_shard_path(ds, 2));
    /* a too small buffer is an error, not an overflow */
    int32_t small[2];
    int64_t n;
    EXPECT(hg_dataset_read(ds, F_SRC, 0, small, sizeof(small), &n, err, sizeof(err)) ==
               (make_sample(0, &s), s.len > 2 ? -1 : 0), "small buffer");
    hg_dataset_close(ds);

    snprintf(spec, sizeof(spec), "%s/good/shard_0.h5,%s/good/shard_1.h5,%s/good/shard_2.h5",
             dir, dir, dir);
    REQUIRE(hg_dataset_open(&ds, spec, fields, NF, 0, err, sizeof(err)) == 0, "%s", err);
    check_all(ds, "list");
    hg_dataset_close(ds);

    snprintf(spec, sizeof(spec), "%s/good/shard_*.h5", dir);
    REQUIRE(hg_dataset_open(&ds, spec, fields, NF, 1 << 20, err, sizeof(err)) == 0,
            "%s", err);
    check_all(ds, "glob+cache");
    hg_dataset_close(ds);

    /* no shards */
    snprintf(spec, sizeof(spec), "%s/good/nothing_*.h5", dir);
    EXPECT(hg_dataset_open(&ds, spec, fields, NF, 0, err, sizeof(err)) == -1 &&
               strstr(err, spec), "no match: %s", err);
    snprintf(spec, sizeof(spec), "%s/emptydir", dir);
    mkdir(spec, 0700);
    EXPECT(hg_dataset_open(&ds, spec, fields, NF, 0, err, sizeof(err)) == -1 &&
               strstr(err, spec), "empty dir: %s", err);
    rmdir(spec);
}

static void test_cache(void)
{
    char spec[512];
    snprintf(spec, sizeof(spec), "%s/good", dir);
    struct hg_dataset *ds;
    size_t cap = 8192;
    REQUIRE(hg_dataset_open(&ds, spec, fields, NF, cap, err, sizeof(err)) == 0, "%s", err);
    int32_t buf[MAXLEN];
    int64_t n, hits, misses;
    size_t bytes;
    for (int rep = 0; rep < 3; rep++)
        for (int64_t i = 0; i < 5; i++)
            EXPECT(hg_dataset_read(ds, F_SRC, i, buf, sizeof(buf), &n, err, sizeof(err)) == 0,
                   "%s", err);
    hg_dataset_cache_stats(ds, &hits, &misses, &bytes);
    EXPECT(misses == 5 && hits == 10, "hits %lld misses %lld", (long long)hits,
           (long long)misses);
    for (int64_t i = 0; i < total; i++) {
        EXPECT(hg_dataset_read(ds, F_SRC, i, buf, sizeof(buf), &n, err, sizeof(err)) == 0,
               "%s", err);
        hg_dataset_cache_stats(ds, NULL, NULL, &bytes);
        if (bytes > cap) {
            EXPECT(bytes <= cap, "cache holds %zu bytes > %zu", bytes, cap);
            break;
        }
    }
    /* the most recent sample is a hit, sample 0 was evicted long ago */
    hg_dataset_cache_stats(ds, &hits, &misses, NULL);
    hg_dataset_read(ds, F_SRC, total - 1, buf, sizeof(buf), &n, err, sizeof(err));
    hg_dataset_read(ds, F_SRC, 0, buf, sizeof(buf), &n, err, sizeof(err));
    int64_t h2, m2;
    hg_dataset_cache_stats(ds, &h2, &m2, NULL);
    EXPECT(h2 == hits + 1 && m2 == misses + 1, "LRU order: +%lld hits +%lld misses",
           (long long)(h2 - hits), (long long)(m2 - misses));
    hg_dataset_close(ds);

    REQUIRE(hg_dataset_open(&ds, spec, fields, NF, 0, err, sizeof(err)) == 0, "%s", err);
    for (int rep = 0; rep < 2; rep++)
        hg_dataset_read(ds, F_SRC, 1, buf, sizeof(buf), &n, err, sizeof(err));
    hg_dataset_cache_stats(ds, &hits, &misses, &bytes);
    EXPECT(hits == 0 && bytes == 0, "cache off: hits %lld", (long long)hits);
    hg_dataset_close(ds);
}

/* ------------------------------------------------------------ errors */

/* Writes an HDF5 file by hand (as h5py would): src/tokens [T] i32,
 * src/offsets [N+1] i64, img [N,3,4] u8, label [N] i64, vec [N,5] f32. */
static void write_raw(const char *path, const int64_t *off, int64_t n, int64_t ntok,
                      int64_t n_img, hid_t label_type)
{
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    REQUIRE(f >= 0, "H5Fcreate %s", path);
    hid_t g = H5Gcreate2(f, "src", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int32_t *tok = calloc((size_t)ntok + 1, 4);
    uint8_t *img = calloc((size_t)n_img * 12 + 1, 1);
    int64_t *lab = calloc((size_t)n + 1, 8);
    float *vec = calloc((size_t)n * 5 + 1, 4);
    hsize_t d[3];
    struct { hid_t loc; const char *name; hid_t ft, mt; int nd; hsize_t d0, d1, d2; void *p; } ds[] = {
        {g, "tokens", H5T_STD_I32LE, H5T_NATIVE_INT32, 1, (hsize_t)ntok, 0, 0, tok},
        {g, "offsets", H5T_STD_I64LE, H5T_NATIVE_INT64, 1, (hsize_t)n + 1, 0, 0, (void *)off},
        {f, "img", H5T_STD_U8LE, H5T_NATIVE_UINT8, 3, (hsize_t)n_img, 3, 4, img},
        {f, "label", label_type, H5T_NATIVE_INT64, 1, (hsize_t)n, 0, 0, lab},
        {f, "vec", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 2, (hsize_t)n, 5, 0, vec},
    };
    for (size_t i = 0; i < sizeof(ds) / sizeof(ds[0]); i++) {
        d[0] = ds[i].d0;
        d[1] = ds[i].d1;
        d[2] = ds[i].d2;
        hid_t s = H5Screate_simple(ds[i].nd, d, NULL);
        hid_t dd = H5Dcreate2(ds[i].loc, ds[i].name, ds[i].ft, s, H5P_DEFAULT, H5P_DEFAULT,
                              H5P_DEFAULT);
        REQUIRE(dd >= 0, "create %s", ds[i].name);
        if (d[0] > 0)
            H5Dwrite(dd, ds[i].mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, ds[i].p);
        H5Dclose(dd);
        H5Sclose(s);
    }
    H5Gclose(g);
    H5Fclose(f);
    free(tok);
    free(img);
    free(lab);
    free(vec);
}

/* Opens spec with fl; expects -1 and every needle in the message. */
static void expect_open_error(const char *spec, const struct hg_field *fl, int nf,
                              const char *n1, const char *n2, const char *n3)
{
    struct hg_dataset *ds = NULL;
    err[0] = '\0';
    int rc = hg_dataset_open(&ds, spec, fl, nf, 0, err, sizeof(err));
    EXPECT(rc == -1 && (!n1 || strstr(err, n1)) && (!n2 || strstr(err, n2)) &&
               (!n3 || strstr(err, n3)),
           "open %s: rc %d, message '%s' (want '%s' '%s' '%s')", spec, rc, err, n1,
           n2 ? n2 : "", n3 ? n3 : "");
    if (rc == 0)
        hg_dataset_close(ds);
}

static void copy_file(const char *from, const char *to)
{
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    REQUIRE(a && b, "copy %s", from);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), a)) > 0)
        fwrite(buf, 1, n, b);
    fclose(a);
    fclose(b);
}

static void test_errors(void)
{
    char p[512], good[512];
    snprintf(good, sizeof(good), "%s/good/shard_1.h5", dir);

    /* missing dataset */
    struct hg_field fl[NF + 1];
    memcpy(fl, fields, sizeof(fields));
    fl[NF] = (struct hg_field){"tgt", HG_FIELD_SEQ, HG_I32, 1, 0};
    expect_open_error(good, fl, NF + 1, good, "no dataset 'tgt/tokens'", NULL);
    fl[NF] = (struct hg_field){"mask", HG_FIELD_ARRAY, HG_I8, 1, 0};
    expect_open_error(good, fl, NF + 1, good, "no dataset 'mask'", NULL);

    /* wrong dtype */
    memcpy(fl, fields, sizeof(fields));
    fl[F_SRC].dtype = HG_I64;
    expect_open_error(good, fl, NF, good, "'src/tokens' has type i32, expected i64", NULL);
    memcpy(fl, fields, sizeof(fields));
    fl[F_IMG].dtype = HG_I8;
    expect_open_error(good, fl, NF, good, "'img' has type u8, expected i8", NULL);
    memcpy(fl, fields, sizeof(fields));
    fl[F_VEC].dtype = HG_I32;
    expect_open_error(good, fl, NF, good, "'vec' has type f32, expected i32", NULL);

    /* wrong rank */
    memcpy(fl, fields, sizeof(fields));
    fl[F_IMG].rank = 1;
    expect_open_error(good, fl, NF, good, "'img' has rank 3, expected 2", NULL);

    /* truncated to half */
    snprintf(p, sizeof(p), "%s/bad/trunc.h5", dir);
    char big[512];
    snprintf(big, sizeof(big), "%s/good/shard_0.h5", dir);
    copy_file(big, p);
    struct stat st;
    stat(p, &st);
    REQUIRE(truncate(p, st.st_size / 2) == 0, "truncate");
    expect_open_error(p, fields, NF, p, NULL, NULL);

    /* corrupt bytes: the superblock, then the middle of the metadata */
    snprintf(p, sizeof(p), "%s/bad/corrupt.h5", dir);
    copy_file(good, p);
    int fd = open(p, O_WRONLY);
    REQUIRE(fd >= 0, "open %s", p);
    REQUIRE(pwrite(fd, "garbage!", 8, 0) == 8, "pwrite");
    close(fd);
    expect_open_error(p, fields, NF, p, NULL, NULL);
    copy_file(good, p);
    stat(p, &st);
    fd = open(p, O_WRONLY);
    char junk[64];
    memset(junk, 0xA5, sizeof(junk));
    for (off_t o = 48; o < st.st_size; o += 512)
        REQUIRE(pwrite(fd, junk, sizeof(junk), o) == (ssize_t)sizeof(junk), "pwrite");
    close(fd);
    {
        struct hg_dataset *ds;
        int rc = hg_dataset_open(&ds, p, fields, NF, 0, err, sizeof(err));
        if (rc == 0) { /* then a read must fail, naming the file */
            int32_t buf[MAXLEN];
            uint8_t img[12];
            int64_t n;
            for (int64_t i = 0; rc == 0 && i < hg_dataset_size(ds); i++) {
                rc = hg_dataset_read(ds, F_SRC, i, buf, sizeof(buf), &n, err, sizeof(err));
                if (rc == 0)
                    rc = hg_dataset_read(ds, F_IMG, i, img, sizeof(img), &n, err,
                                         sizeof(err));
            }
            hg_dataset_close(ds);
        }
        EXPECT(rc == -1 && strstr(err, p), "corrupt middle: rc %d '%s'", rc, err);
    }

    /* empty shard (the writer writes it; the reader refuses it) */
    snprintf(p, sizeof(p), "%s/bad/empty.h5", dir);
    write_shard(p, 0, 0);
    expect_open_error(p, fields, NF, p, "empty shard", NULL);

    /* bad offsets (a file written without our writer, no hgtrain_format) */
    int64_t off_ok[4] = {0, 5, 7, 10};
    snprintf(p, sizeof(p), "%s/bad/raw_ok.h5", dir);
    write_raw(p, off_ok, 3, 10, 3, H5T_STD_I64LE);
    struct hg_dataset *ds;
    EXPECT(hg_dataset_open(&ds, p, fields, NF, 0, err, sizeof(err)) == 0,
           "h5py-style file refused: %s", err);
    if (ds) {
        EXPECT(hg_dataset_size(ds) == 3 && hg_dataset_lengths(ds, F_SRC)[1] == 2,
               "raw file sizes");
        hg_dataset_close(ds);
    }
    int64_t off_dec[4] = {0, 5, 3, 10};
    snprintf(p, sizeof(p), "%s/bad/raw_dec.h5", dir);
    write_raw(p, off_dec, 3, 10, 3, H5T_STD_I64LE);
    expect_open_error(p, fields, NF, p, "'src/offsets' row 1", NULL);
    int64_t off_start[4] = {1, 5, 7, 10};
    snprintf(p, sizeof(p), "%s/bad/raw_start.h5", dir);
    write_raw(p, off_start, 3, 10, 3, H5T_STD_I64LE);
    expect_open_error(p, fields, NF, p, "'src/offsets' row 0", NULL);
    int64_t off_end[4] = {0, 5, 7, 9};
    snprintf(p, sizeof(p), "%s/bad/raw_end.h5", dir);
    write_raw(p, off_end, 3, 10, 3, H5T_STD_I64LE);
    expect_open_error(p, fields, NF, p, "'src/offsets' ends at 9", NULL);
    /* N differs between fields */
    snprintf(p, sizeof(p), "%s/bad/raw_n.h5", dir);
    write_raw(p, off_ok, 3, 10, 4, H5T_STD_I64LE);
    expect_open_error(p, fields, NF, p, "'img' has 4 samples", NULL);
    /* big-endian i64 is fine (HDF5 converts), u64 is not i64 */
    snprintf(p, sizeof(p), "%s/bad/raw_be.h5", dir);
    write_raw(p, off_ok, 3, 10, 3, H5T_STD_I64BE);
    EXPECT(hg_dataset_open(&ds, p, fields, NF, 0, err, sizeof(err)) == 0,
           "big-endian label refused: %s", err);
    if (ds)
        hg_dataset_close(ds);
    snprintf(p, sizeof(p), "%s/bad/raw_u64.h5", dir);
    write_raw(p, off_ok, 3, 10, 3, H5T_STD_U64LE);
    expect_open_error(p, fields, NF, p, "'label' has type u64, expected i64", NULL);

    /* item shape differs between shards: the first error names both files */
    snprintf(p, sizeof(p), "%s/shapes", dir);
    mkdir(p, 0700);
    snprintf(p, sizeof(p), "%s/shapes/a.h5", dir);
    copy_file(good, p);
    snprintf(p, sizeof(p), "%s/shapes/b.h5", dir);
    {
        struct hg_shape is2[NF];
        memcpy(is2, item_shape, sizeof(is2));
        is2[F_IMG].dim[1] = 5;
        struct hg_shard_writer *w;
        REQUIRE(hg_shard_writer_open(&w, p, fields, NF, is2, err, sizeof(err)) == 0, "%s",
                err);
        struct sample s;
        make_sample(1, &s);
        uint8_t img[15] = {0};
        const void *v[NF] = {s.tok, img, &s.label, s.vec};
        int64_t c[NF] = {s.len, 0, 0, 0};
        REQUIRE(hg_shard_writer_add(w, v, c, err, sizeof(err)) == 0, "%s", err);
        REQUIRE(hg_shard_writer_finish(w, err, sizeof(err)) == 0, "%s", err);
    }
    char spec[512];
    snprintf(spec, sizeof(spec), "%s/shapes", dir);
    expect_open_error(spec, fields, NF, p, "item shape [3,5]", "[3,4]");

    /* token out of the vocabulary: open succeeds, the read names file, row */
    memcpy(fl, fields, sizeof(fields));
    fl[F_SRC].vocab = 100;
    snprintf(spec, sizeof(spec), "%s/good/shard_0.h5", dir);
    REQUIRE(hg_dataset_open(&ds, spec, fl, NF, 0, err, sizeof(err)) == 0, "%s", err);
    int32_t buf[MAXLEN];
    int64_t n;
    int rc = 0;
    int64_t i;
    for (i = 0; i < 2000 && rc == 0; i++)
        rc = hg_dataset_read(ds, F_SRC, i, buf, sizeof(buf), &n, err, sizeof(err));
    i--;
    struct sample s;
    make_sample(i, &s);
    int32_t bad = 0;
    for (int k = 0; k < s.len; k++)
        if (s.tok[k] >= 100) {
            bad = s.tok[k];
            break;
        }
    char want[1024];
    snprintf(want, sizeof(want),
             "%s: dataset 'src/tokens' row %lld: token id %d outside the vocabulary [0, 100)",
             spec, (long long)i, bad);
    EXPECT(rc == -1 && strcmp(err, want) == 0, "vocab: '%s' want '%s'", err, want);
    hg_dataset_close(ds);
}

/* A full disk, simulated by RLIMIT_FSIZE (writes past it fail with EFBIG):
 * add or finish fails, naming the path, and nothing is left behind.
 * Runs in a child that leaves with _exit: after an H5Fclose that failed
 * to flush, HDF5 1.10.8's atexit handler crashes in H5F__close_cb (a
 * library bug; the writer has nothing else to close). */
/* A byte flipped in a shard's metadata is reported as corruption, never
 * as a dataset that is missing (it is there). */
static void test_header_flips(void)
{
    char p[600];
    snprintf(p, sizeof(p), "%s/bad/flips.h5", dir);
    write_shard(p, 0, 3);
    /* in a child that leaves with _exit: HDF5 leaks on the error paths of
     * corrupt files, which LeakSanitizer would report at exit */
    fflush(stdout);
    pid_t child = fork();
    REQUIRE(child >= 0, "fork");
    if (child > 0) {
        int st = 0;
        waitpid(child, &st, 0);
        EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 0, "header flips: child status %#x", st);
        return;
    }
    failures = 0;
    int fd = open(p, O_RDWR);
    REQUIRE(fd >= 0, "open %s", p);
    struct stat st;
    fstat(fd, &st);
    int refused = 0, wrong = 0;
    /* the superblock and the root group's and datasets' headers come first */
    for (off_t o = 0; o < st.st_size && o < 6144; o++) {
        unsigned char b, x;
        REQUIRE(pread(fd, &b, 1, o) == 1, "pread");
        x = b ^ 0x20;
        REQUIRE(pwrite(fd, &x, 1, o) == 1, "pwrite");
        struct hg_dataset *ds = NULL;
        if (hg_dataset_open(&ds, p, fields, NF, 0, err, sizeof(err)) == 0) {
            hg_dataset_close(ds);
        } else {
            refused++;
            if (strstr(err, "no dataset") && wrong++ < 3)
                EXPECT(0, "byte %lld flipped: '%s'", (long long)o, err);
        }
        REQUIRE(pwrite(fd, &b, 1, o) == 1, "pwrite");
    }
    close(fd);
    EXPECT(refused > 0 && wrong == 0, "%d flips refused, %d said 'no dataset'", refused, wrong);
    printf("ok  header flips: %d refused, none called a dataset missing\n", refused);
    fflush(stdout);
    _exit(failures ? 1 : 0);
}

struct quiet_arg {
    struct hg_dataset *ds;
    int rc;
    char err[1024];
};

static void *read_vec0(void *p)
{
    struct quiet_arg *a = p;
    float v[5];
    int64_t n;
    a->rc = hg_dataset_read(a->ds, F_VEC, 0, v, sizeof(v), &n, a->err, sizeof(a->err));
    return NULL;
}

/* A read that fails in another thread (the loader's prefetch thread) says
 * so in its message only: HDF5's error stack is per thread in a
 * thread-safe HDF5, and must be silenced there too. */
static void test_quiet_threads(void)
{
    char p[600], log[600];
    snprintf(p, sizeof(p), "%s/bad/chunk.h5", dir);
    snprintf(log, sizeof(log), "%s/bad/stderr.txt", dir);
    write_shard(p, 0, 10);
    /* sample 0's vec [0, 0.5, 1, 1.5, 2] is one chunk's first row: flip it */
    size_t len = 0;
    FILE *f = fopen(p, "rb");
    REQUIRE(f, "open %s", p);
    static char buf[16 << 20];
    len = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    const float vec0[5] = {0.f, 0.5f, 1.f, 1.5f, 2.f};
    char *at = memmem(buf, len, vec0, sizeof(vec0));
    REQUIRE(at != NULL, "vec row 0 not found in %s", p);
    at[6] ^= 0x40;
    f = fopen(p, "r+b");
    REQUIRE(f && fwrite(buf, 1, len, f) == len, "rewrite %s", p);
    fclose(f);
    struct quiet_arg a = {0};
    REQUIRE(hg_dataset_open(&a.ds, p, fields, NF, 0, err, sizeof(err)) == 0, "open: %s", err);
    fflush(stderr);
    int saved = dup(2), fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(saved >= 0 && fd >= 0, "redirect stderr");
    dup2(fd, 2);
    pthread_t t;
    pthread_create(&t, NULL, read_vec0, &a);
    pthread_join(t, NULL);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(fd);
    hg_dataset_close(a.ds);
    f = fopen(log, "rb");
    size_t got = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
    buf[got] = 0;
    if (f)
        fclose(f);
    EXPECT(a.rc == -1 && strstr(a.err, "chunk.h5") && strstr(a.err, "vec"),
           "corrupt chunk read in a thread: rc %d '%s'", a.rc, a.err);
    EXPECT(got == 0, "stderr of the reading thread: '%.300s'", buf);
    printf("ok  a failed read in another thread prints nothing (%s)\n", a.err);
}

/* A shard of the set (index of count, samples in all); info: write the
 * set_* attributes. */
static void write_set_shard(const char *path, int index, int count, int64_t per, int info)
{
    struct hg_shard_writer *w;
    REQUIRE(hg_shard_writer_open(&w, path, fields, NF, item_shape, err, sizeof(err)) == 0,
            "writer open: %s", err);
    if (info)
        REQUIRE(hg_shard_writer_set_info(w, index, count, per * count, err, sizeof(err)) == 0,
                "set_info: %s", err);
    struct sample s;
    for (int64_t i = 0; i < per; i++) {
        make_sample(index * per + i, &s);
        const void *v[NF] = {s.tok, s.img, &s.label, s.vec};
        int64_t c[NF] = {s.len, 0, 0, 0};
        REQUIRE(hg_shard_writer_add(w, v, c, err, sizeof(err)) == 0, "add: %s", err);
    }
    REQUIRE(hg_shard_writer_finish(w, err, sizeof(err)) == 0, "finish: %s", err);
}

/* Partial shard sets are refused naming what is missing: by the "-of-N"
 * names (any writer) and by the set_* attributes (our writer). */
static void test_sets(void)
{
    char d[400], p[600];
    struct hg_dataset *ds;
    /* named -of-00004, no attributes (as h5py would write them) */
    snprintf(d, sizeof(d), "%s/set1", dir);
    mkdir(d, 0700);
    for (int i = 0; i < 4; i++) {
        snprintf(p, sizeof(p), "%s/train-%05d-of-00004.h5", d, i);
        write_set_shard(p, i, 4, 5, 0);
    }
    EXPECT(hg_dataset_open(&ds, d, fields, NF, 0, err, sizeof(err)) == 0, "full set: %s", err);
    if (ds) {
        EXPECT(hg_dataset_size(ds) == 20, "size %lld", (long long)hg_dataset_size(ds));
        hg_dataset_close(ds);
    }
    for (int i = 1; i < 4; i++) {
        snprintf(p, sizeof(p), "%s/train-%05d-of-00004.h5", d, i);
        unlink(p);
    }
    expect_open_error(d, fields, NF, "incomplete shard set",
                      "train-00001-of-00004.h5, train-00002-of-00004.h5", "train-00003-of-00004.h5");
    snprintf(p, sizeof(p), "%s/train-00000-of-00004.h5", d);
    expect_open_error(p, fields, NF, "3 of 4 files missing", "train-00003-of-00004.h5", NULL);
    /* two sizes of one set mixed */
    snprintf(p, sizeof(p), "%s/train-00001-of-00002.h5", d);
    write_set_shard(p, 1, 2, 5, 0);
    expect_open_error(d, fields, NF, "mixed", "train-00001-of-00002.h5", NULL);

    /* shard-NNNNN names with set attributes: one missing, then a shard of
     * another run with the same attributes but other counts */
    snprintf(d, sizeof(d), "%s/set2", dir);
    mkdir(d, 0700);
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof(p), "%s/shard-%05d.h5", d, i);
        write_set_shard(p, i, 3, 4, 1);
    }
    EXPECT(hg_dataset_open(&ds, d, fields, NF, 0, err, sizeof(err)) == 0, "full set: %s", err);
    if (ds)
        hg_dataset_close(ds);
    snprintf(p, sizeof(p), "%s/shard-00001.h5", d);
    unlink(p);
    expect_open_error(d, fields, NF, "2 shards with 8 samples", "3 shards with 12 samples", NULL);
    printf("ok  partial shard sets refused (by name and by set attributes)\n");
}

static void disk_full_child(void);
static void test_disk_full(void)
{
    fflush(NULL);
    pid_t pid = fork();
    REQUIRE(pid >= 0, "fork");
    if (pid == 0)
        disk_full_child();
    int st;
    REQUIRE(waitpid(pid, &st, 0) == pid, "waitpid");
    EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 0, "disk-full child: status %d", st);
}

static void disk_full_child(void)
{
    char p[512], tmp[600];
    snprintf(p, sizeof(p), "%s/bad/full.h5", dir);
    snprintf(tmp, sizeof(tmp), "%s.tmp", p);
    struct rlimit old, lim;
    REQUIRE(getrlimit(RLIMIT_FSIZE, &old) == 0, "getrlimit");
    signal(SIGXFSZ, SIG_IGN);
    lim = old;
    lim.rlim_cur = 256 << 10;
    REQUIRE(setrlimit(RLIMIT_FSIZE, &lim) == 0, "setrlimit");
    struct hg_shard_writer *w;
    REQUIRE(hg_shard_writer_open(&w, p, fields, NF, item_shape, err, sizeof(err)) == 0,
            "%s", err);
    struct sample s;
    int rc = 0;
    for (int64_t i = 0; i < 20000 && rc == 0; i++) {
        make_sample(i, &s);
        const void *v[NF] = {s.tok, s.img, &s.label, s.vec};
        int64_t c[NF] = {s.len, 0, 0, 0};
        rc = hg_shard_writer_add(w, v, c, err, sizeof(err));
    }
    if (rc == 0)
        rc = hg_shard_writer_finish(w, err, sizeof(err));
    else
        hg_shard_writer_abort(w);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, SIG_DFL);
    EXPECT(rc == -1 && strstr(err, p) && strstr(err, "disk full"),
           "disk full: rc %d '%s'", rc, err);
    EXPECT(!exists(p) && !exists(tmp), "disk full left a file");
    printf("disk full: %s\n", err);
    fflush(NULL);
    _exit(failures ? 1 : 0);
}

/* ------------------------------------------------------------ loader */

struct seen {
    int64_t *count; /* [total] */
};

/* Checks a batch against the dataset; marks its samples seen. */
static void check_batch(struct hg_dataset *ds, const struct hg_epoch *ep, int rank,
                        const struct hg_batch *b, int32_t pad, int64_t *seen)
{
    int64_t cnt;
    const int64_t *idx = hg_epoch_batch(ep, rank, b->step, &cnt);
    EXPECT(cnt == b->size, "step %lld: size %lld vs %lld", (long long)b->step,
           (long long)b->size, (long long)cnt);
    if (b->size == 0)
        return;
    int64_t L = b->field[F_SRC].shape.dim[1], tok = 0, maxl = 0;
    EXPECT(b->field[F_SRC].shape.ndim == 2 && b->field[F_SRC].shape.dim[0] == b->size,
           "src shape");
    EXPECT(b->field[F_IMG].shape.ndim == 3 && b->field[F_IMG].shape.dim[0] == b->size &&
               b->field[F_IMG].shape.dim[1] == 3 && b->field[F_IMG].shape.dim[2] == 4,
           "img shape");
    EXPECT(b->field[F_LABEL].shape.ndim == 1 && b->lengths[F_IMG] == NULL, "label shape");
    const int32_t *src = b->field[F_SRC].data;
    const uint8_t *img = b->field[F_IMG].data;
    const int64_t *lab = b->field[F_LABEL].data;
    const float *vec = b->field[F_VEC].data;
    for (int64_t i = 0; i < b->size; i++) {
        struct sample s;
        make_sample(idx[i], &s);
        seen[idx[i]]++;
        tok += s.len;
        if (s.len > maxl)
            maxl = s.len;
        int ok = b->lengths[F_SRC][i] == s.len &&
                 memcmp(src + i * L, s.tok, (size_t)s.len * 4) == 0 &&
                 memcmp(img + i * 12, s.img, 12) == 0 && lab[i] == s.label &&
                 memcmp(vec + i * 5, s.vec, 20) == 0;
        for (int64_t k = s.len; k < L; k++)
            ok &= src[i * L + k] == pad;
        EXPECT(ok, "rank %d step %lld row %lld (sample %lld) wrong", rank,
               (long long)b->step, (long long)i, (long long)idx[i]);
    }
    EXPECT(L == maxl, "L %lld, longest %lld", (long long)L, (long long)maxl);
    EXPECT(b->tokens == tok, "tokens %lld vs %lld", (long long)b->tokens, (long long)tok);
    (void)ds;
}

/* Runs rank's loader over the epoch; returns a digest of all batches. */
static uint64_t run_loader(struct hg_dataset *ds, const struct hg_epoch *ep, int rank,
                           int prefetch, int64_t *seen)
{
    struct hg_loader_opts o = {.rank = rank, .prefetch = prefetch, .pad_id = -7};
    struct hg_loader *ld;
    REQUIRE(hg_loader_open(&ld, ds, ep, &o, 0, err, sizeof(err)) == 0, "%s", err);
    struct hg_batch b;
    uint64_t h = 0;
    int64_t steps = 0;
    int rc;
    while ((rc = hg_loader_next(ld, &b, err, sizeof(err))) == 1) {
        EXPECT(b.step == steps, "step %lld, expected %lld", (long long)b.step,
               (long long)steps);
        check_batch(ds, ep, rank, &b, -7, seen);
        for (int f = 0; f < NF; f++) {
            size_t n = (size_t)hg_shape_numel(&b.field[f].shape) *
                       hg_dtype_size(b.field[f].dtype);
            const unsigned char *p = b.field[f].data;
            for (size_t k = 0; k < n; k++)
                h = mix(h ^ p[k]);
        }
        h = mix(h ^ (uint64_t)b.size);
        steps++;
    }
    EXPECT(rc == 0, "loader: %s", err);
    EXPECT(steps == hg_epoch_steps(ep), "%lld steps of %lld", (long long)steps,
           (long long)hg_epoch_steps(ep));
    hg_loader_close(ld);
    return h;
}

static void test_loader(void)
{
    char spec[512];
    snprintf(spec, sizeof(spec), "%s/good", dir);
    struct hg_dataset *ds;
    REQUIRE(hg_dataset_open(&ds, spec, fields, NF, 1 << 16, err, sizeof(err)) == 0, "%s",
            err);
    struct hg_batch_opts bo = {.max_tokens = 0, .max_sentences = 16, .world = 2,
                               .seed = 42, .shuffle = 1};
    struct hg_epoch *ep;
    REQUIRE(hg_epoch_plan(&ep, hg_dataset_lengths(ds, F_SRC), total, &bo, 1, err,
                          sizeof(err)) == 0, "plan: %s", err);
    int64_t *seen = calloc((size_t)total, sizeof(int64_t));
    int64_t *seen2 = calloc((size_t)total, sizeof(int64_t));
    for (int rank = 0; rank < 2; rank++) {
        uint64_t h0 = run_loader(ds, ep, rank, 0, seen);
        uint64_t h1 = run_loader(ds, ep, rank, 1, seen2);
        uint64_t h3 = run_loader(ds, ep, rank, 3, seen2);
        EXPECT(h0 == h1 && h0 == h3, "rank %d: prefetch changes the batches", rank);
    }
    int64_t bad = 0;
    for (int64_t i = 0; i < total; i++)
        bad += seen[i] != 1 || seen2[i] != 2;
    EXPECT(bad == 0, "%lld samples not seen exactly once per pass", (long long)bad);

    /* close mid-epoch, with the producer waiting on a full ring */
    struct hg_loader_opts o = {.rank = 1, .prefetch = 2, .pad_id = 0};
    struct hg_loader *ld;
    struct hg_batch b;
    REQUIRE(hg_loader_open(&ld, ds, ep, &o, 1, err, sizeof(err)) == 0, "%s", err);
    EXPECT(hg_loader_next(ld, &b, err, sizeof(err)) == 1 && b.step == 1,
           "first_step 1: got step %lld", (long long)b.step);
    usleep(20000);
    hg_loader_close(ld);

    /* timeout: a 1 us budget for a batch of 16 HDF5 reads */
    int timed_out = 0;
    for (int t = 0; t < 20 && !timed_out; t++) {
        struct hg_dataset *slow;
        REQUIRE(hg_dataset_open(&slow, spec, fields, NF, 0, err, sizeof(err)) == 0, "%s",
                err);
        o = (struct hg_loader_opts){.rank = 0, .prefetch = 1, .timeout_s = 1e-6};
        REQUIRE(hg_loader_open(&ld, slow, ep, &o, 0, err, sizeof(err)) == 0, "%s", err);
        int rc = hg_loader_next(ld, &b, err, sizeof(err));
        if (rc == -1) {
            EXPECT(strstr(err, "loader rank 0: waited") && strstr(err, "for step 0"),
                   "timeout message '%s'", err);
            timed_out = 1;
        }
        hg_loader_close(ld);
        hg_dataset_close(slow);
    }
    EXPECT(timed_out, "no timeout in 20 tries");
    printf("loader: %lld steps x 2 ranks, prefetch 0/1/3 identical; timeout seen: %s\n",
           (long long)hg_epoch_steps(ep), timed_out ? "yes" : "no");

    /* a read error in the producer is the error of its step */
    struct hg_field fl[NF];
    memcpy(fl, fields, sizeof(fields));
    fl[F_SRC].vocab = 10;
    struct hg_dataset *bad_ds;
    REQUIRE(hg_dataset_open(&bad_ds, spec, fl, NF, 0, err, sizeof(err)) == 0, "%s", err);
    for (int pf = 0; pf <= 2; pf += 2) {
        o = (struct hg_loader_opts){.rank = 0, .prefetch = pf};
        REQUIRE(hg_loader_open(&ld, bad_ds, ep, &o, 0, err, sizeof(err)) == 0, "%s", err);
        int rc;
        while ((rc = hg_loader_next(ld, &b, err, sizeof(err))) == 1)
            ;
        EXPECT(rc == -1 && strstr(err, "outside the vocabulary [0, 10)"),
               "prefetch %d: rc %d '%s'", pf, rc, err);
        EXPECT(hg_loader_next(ld, &b, err, sizeof(err)) == -1, "sticky error");
        hg_loader_close(ld);
    }
    hg_dataset_close(bad_ds);

    free(seen);
    free(seen2);
    hg_epoch_free(ep);
    hg_dataset_close(ds);
}

/* ------------------------------------------------------------ main */

static void rm_rf(const char *d)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", d);
}

int main(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof(dir), "%s/hg_test_data.XXXXXX", t && *t ? t : "/tmp");
    REQUIRE(mkdtemp(dir), "mkdtemp");
    char p[512];
    snprintf(p, sizeof(p), "%s/good", dir);
    mkdir(p, 0700);
    snprintf(p, sizeof(p), "%s/bad", dir);
    mkdir(p, 0700);
    test_write_read();
    test_cache();
    test_errors();
    test_sets();
    test_quiet_threads();
    test_header_flips();
    test_disk_full();
    test_loader();
    if (failures == 0)
        rm_rf(dir);
    else
        fprintf(stderr, "test_data: %d failures (files kept in %s)\n", failures, dir);
    return failures ? 1 : 0;
}
