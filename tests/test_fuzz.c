/* test_fuzz.c - randomized corruption: hg_idx_parse on mutated IDX images,
 * hg_dataset_open + reads on shards with flipped bytes or truncated at
 * random lengths. Every call must return 0 or -1 (with the file named),
 * never crash; run under the ASan build too. Deterministic (fixed seeds);
 * HG_FUZZ_SEED=n picks another seed, HG_FUZZ_SCALE=k multiplies the
 * iteration counts. Exit 0: pass; 1: failure. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>

#include "data/hg_data.h"
#include "tests/hg_test.h"


/* LeakSanitizer: HDF5 1.10 leaks metadata-cache entries on some error
 * paths when it parses corrupt object headers (the blocks come from its
 * free lists, so LSan shows the stack that first allocated them). Our own
 * HDF5 ids cannot show up here anyway (H5close frees them at exit), so
 * nothing of ours is hidden by ignoring the library's allocations. */
/* AddressSanitizer: HDF5 mallocs sizes read from corrupt headers; the real
 * malloc returns NULL (and HDF5 fails cleanly), ASan would abort. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}

const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libhdf5\n";
}
static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static size_t rnd_below(size_t n)
{
    return n ? (size_t)(rnd() % n) : 0;
}

/* Flips, sets, inserts-by-overwrite: `edits` random byte edits. */
static void mutate(unsigned char *b, size_t len, int edits)
{
    for (int e = 0; e < edits && len > 0; e++) {
        size_t at = rnd_below(len);
        switch (rnd() % 4) {
        case 0: b[at] ^= (unsigned char)(1u << (rnd() % 8)); break;
        case 1: b[at] = (unsigned char)rnd(); break;
        case 2: b[at] = (rnd() & 1) ? 0xff : 0x00; break;
        default: b[at] = (unsigned char)(b[at] + 1); break;
        }
    }
}

/* ------------------------------------------------------------ IDX */

static void fuzz_idx(int iters)
{
    unsigned char *buf = malloc(1 << 16);
    char err[256];
    int ok = 0, bad = 0;
    for (int it = 0; it < iters; it++) {
        /* a valid image first: 1..4 dims of 1..9 */
        int nd = 1 + (int)rnd_below(4);
        size_t total = 1, len = 4 + 4 * (size_t)nd;
        buf[0] = buf[1] = 0;
        buf[2] = 0x08;
        buf[3] = (unsigned char)nd;
        for (int i = 0; i < nd; i++) {
            uint32_t d = 1 + (uint32_t)rnd_below(9);
            total *= d;
            unsigned char *p = buf + 4 + 4 * i;
            p[0] = (unsigned char)(d >> 24);
            p[1] = (unsigned char)(d >> 16);
            p[2] = (unsigned char)(d >> 8);
            p[3] = (unsigned char)d;
        }
        for (size_t i = 0; i < total; i++)
            buf[len + i] = (unsigned char)rnd();
        len += total;
        switch (rnd() % 4) {
        case 0: len = rnd_below(len + 1); break;                  /* truncate */
        case 1: mutate(buf, len, 1 + (int)rnd_below(4)); break;    /* edits */
        case 2: mutate(buf, len < 20 ? len : 20, 1 + (int)rnd_below(3)); break;
        default: len += rnd_below(8); break;                      /* trailing */
        }
        struct hg_idx idx;
        int rc = hg_idx_parse(buf, len, "fuzz.idx", &idx, err, sizeof(err));
        if (rc == 0) {
            int64_t n = 1;
            for (int i = 0; i < idx.ndim; i++)
                n *= idx.dim[i];
            if (idx.ndim < 1 || idx.ndim > 4 || !idx.data ||
                (size_t)n + 4 + 4 * (size_t)idx.ndim != len) {
                fprintf(stderr, "idx iteration %d: accepted an inconsistent image\n", it);
                failures++;
            }
            hg_idx_free(&idx);
            ok++;
        } else if (rc == -1 && strstr(err, "fuzz.idx")) {
            bad++;
        } else {
            fprintf(stderr, "idx iteration %d: rc %d, message '%s'\n", it, rc, err);
            failures++;
        }
    }
    free(buf);
    printf("idx: %d iterations, %d accepted, %d refused\n", iters, ok, bad);
}

/* ------------------------------------------------------------ shards */

static const struct hg_field fields[2] = {
    {"src", HG_FIELD_SEQ, HG_I32, 1, 500},
    {"img", HG_FIELD_ARRAY, HG_U8, 2, 0},
};

static int write_seed_shard(const char *path)
{
    static const struct hg_shape item[2] = {{0, {0}}, {2, {4, 4}}};
    struct hg_shard_writer *w;
    char err[256];
    if (hg_shard_writer_open(&w, path, fields, 2, item, err, sizeof(err))) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    int32_t tok[64];
    uint8_t img[16];
    for (int i = 0; i < 40; i++) {
        int64_t n = (int64_t)rnd_below(64);
        for (int k = 0; k < n; k++)
            tok[k] = (int32_t)rnd_below(500);
        for (int k = 0; k < 16; k++)
            img[k] = (uint8_t)rnd();
        const void *v[2] = {tok, img};
        int64_t c[2] = {n, 0};
        if (hg_shard_writer_add(w, v, c, err, sizeof(err))) {
            fprintf(stderr, "%s\n", err);
            hg_shard_writer_abort(w);
            return -1;
        }
    }
    if (hg_shard_writer_finish(w, err, sizeof(err))) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    return 0;
}

/* The same fields written as h5py would by default: no metadata
 * checksums, contiguous datasets, so corruption reaches HDF5's parsers. */
static int write_seed_raw(const char *path)
{
    enum { N = 20, T = 100 };
    int32_t tok[T];
    int64_t off[N + 1];
    uint8_t img[N * 16];
    for (int k = 0; k < T; k++)
        tok[k] = (int32_t)rnd_below(500);
    off[0] = 0;
    for (int i = 1; i < N; i++)
        off[i] = off[i - 1] + (int64_t)rnd_below(5); /* < T in all */
    off[N] = T;
    for (int k = 0; k < N * 16; k++)
        img[k] = (uint8_t)rnd();
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0)
        return -1;
    hid_t g = H5Gcreate2(f, "src", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t dt = T, dof = N + 1, di[3] = {N, 4, 4};
    hid_t s1 = H5Screate_simple(1, &dt, NULL), s2 = H5Screate_simple(1, &dof, NULL),
          s3 = H5Screate_simple(3, di, NULL);
    hid_t d1 = H5Dcreate2(g, "tokens", H5T_STD_I32LE, s1, H5P_DEFAULT, H5P_DEFAULT,
                          H5P_DEFAULT);
    hid_t d2 = H5Dcreate2(g, "offsets", H5T_STD_I64LE, s2, H5P_DEFAULT, H5P_DEFAULT,
                          H5P_DEFAULT);
    hid_t d3 = H5Dcreate2(f, "img", H5T_STD_U8LE, s3, H5P_DEFAULT, H5P_DEFAULT,
                          H5P_DEFAULT);
    int rc = d1 >= 0 && d2 >= 0 && d3 >= 0 &&
             H5Dwrite(d1, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, tok) >= 0 &&
             H5Dwrite(d2, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, off) >= 0 &&
             H5Dwrite(d3, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, img) >= 0
                 ? 0 : -1;
    H5Dclose(d1);
    H5Dclose(d2);
    H5Dclose(d3);
    H5Sclose(s1);
    H5Sclose(s2);
    H5Sclose(s3);
    H5Gclose(g);
    H5Fclose(f);
    return rc;
}

static void fuzz_shards(const char *dir, int iters, int raw)
{
    char seed[512], path[512], err[1024];
    snprintf(seed, sizeof(seed), "%s/seed.h5", dir);
    snprintf(path, sizeof(path), "%s/fuzzed.h5", dir);
    if (raw ? write_seed_raw(seed) : write_seed_shard(seed)) {
        failures++;
        return;
    }
    FILE *f = fopen(seed, "rb");
    struct stat st;
    stat(seed, &st);
    size_t len = (size_t)st.st_size;
    unsigned char *orig = malloc(len), *buf = malloc(len);
    if (!f || fread(orig, 1, len, f) != len) {
        fprintf(stderr, "cannot read %s\n", seed);
        failures++;
        return;
    }
    fclose(f);
    struct hg_dataset *ds0;
    if (hg_dataset_open(&ds0, seed, fields, 2, 0, err, sizeof(err)) != 0) {
        fprintf(stderr, "the unmodified seed is refused: %s\n", err);
        failures++;
    } else {
        hg_dataset_close(ds0);
    }
    int refused = 0, opened = 0, read_errors = 0;
    for (int it = 0; it < iters; it++) {
        memcpy(buf, orig, len);
        size_t n = len;
        if (rnd() % 3 == 0)
            n = rnd_below(len);
        else
            mutate(buf, len, 1 + (int)rnd_below(8));
        f = fopen(path, "wb");
        if (!f || fwrite(buf, 1, n, f) != n) {
            fprintf(stderr, "cannot write %s\n", path);
            failures++;
            break;
        }
        fclose(f);
        struct hg_dataset *ds;
        err[0] = '\0';
        int rc = hg_dataset_open(&ds, path, fields, 2, it % 2 ? 4096 : 0, err, sizeof(err));
        if (rc != 0) {
            if (rc != -1 || !strstr(err, path)) {
                fprintf(stderr, "shard iteration %d: rc %d, message '%s'\n", it, rc, err);
                failures++;
            }
            refused++;
            continue;
        }
        opened++;
        int32_t tok[4096];
        for (int64_t i = 0; i < hg_dataset_size(ds); i++) {
            for (int fl = 0; fl < 2; fl++) {
                int64_t cnt;
                err[0] = '\0';
                rc = hg_dataset_read(ds, fl, i, tok, sizeof(tok), &cnt, err, sizeof(err));
                if (rc == -1 && strstr(err, path)) {
                    read_errors++;
                } else if (rc != 0) {
                    fprintf(stderr, "shard iteration %d: read rc %d, message '%s'\n", it,
                            rc, err);
                    failures++;
                }
            }
        }
        hg_dataset_close(ds);
    }
    free(orig);
    free(buf);
    unlink(seed);
    unlink(path);
    printf("%s shards: %d iterations, %d refused at open, %d opened, %d read errors\n",
           raw ? "plain (h5py-style)" : "hgtrain", iters, refused, opened, read_errors);
}

int main(void)
{
    const char *s = getenv("HG_FUZZ_SEED");
    const char *k = getenv("HG_FUZZ_SCALE");
    rng_state = s ? strtoull(s, NULL, 10) : 20261122;
    int scale = k ? atoi(k) : 1;
    if (scale < 1)
        scale = 1;
    fuzz_idx(20000 * scale);
    const char *t = getenv("TMPDIR");
    char dir[256];
    snprintf(dir, sizeof(dir), "%s/hg_test_fuzz.XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    fuzz_shards(dir, 300 * scale, 0);
    fuzz_shards(dir, 300 * scale, 1);
    rmdir(dir);
    if (failures)
        fprintf(stderr, "test_fuzz: %d failures\n", failures);
    return failures ? 1 : 0;
}
