/* test_fuzz.c - randomized corruption: hg_idx_parse on mutated IDX images,
 * hg_dataset_open + reads on shards with flipped bytes or truncated at
 * random lengths; the store's frame parser on random and mutated headers,
 * and a live store server fed random, mutated and truncated frames on many
 * connections (a good client must still work afterwards).
 * Every call must return 0 or -1 (with the file named),
 * never crash; run under the ASan build too. Deterministic (fixed seeds);
 * HG_FUZZ_SEED=n picks another seed, HG_FUZZ_SCALE=k multiplies the
 * iteration counts. Exit 0: pass; 1: failure. */
#define _GNU_SOURCE

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>

#include "comm/hg_comm.h"
#include "comm/store-impl.h"
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


/* ------------------------------------------------------------ store */

#define FUZZ_TOKEN "a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5"

/* A well-formed frame of a random op (requests mostly, replies too) with a
 * random key and value of the op's shape; returns its length. */
static size_t store_frame(unsigned char *b, size_t cap)
{
    static const unsigned char ops[] = {HG_STORE_HELLO, HG_STORE_SET,
                                        HG_STORE_GET,   HG_STORE_ADD,
                                        HG_STORE_CHECK, HG_STORE_OK,
                                        HG_STORE_VALUE, HG_STORE_ERR};
    unsigned op = ops[rnd_below(sizeof ops)];
    size_t klen = 1 + rnd_below(24), vlen = rnd_below(64);
    if (rnd_below(50) == 0)
        vlen = rnd_below(cap - HG_STORE_HDR_LEN - 64); /* a big one */
    switch (op) {
    case HG_STORE_HELLO: klen = HG_STORE_TOKEN_LEN; vlen = 4; break;
    case HG_STORE_GET:
    case HG_STORE_CHECK: vlen = 0; break;
    case HG_STORE_ADD: vlen = 8; break;
    case HG_STORE_OK: klen = vlen = 0; break;
    case HG_STORE_VALUE:
    case HG_STORE_ERR: klen = 0; break;
    }
    hg_store_put_header(b, (enum hg_store_op)op, (uint32_t)klen, (uint32_t)vlen);
    unsigned char *k = b + HG_STORE_HDR_LEN;
    if (op == HG_STORE_HELLO) {
        memcpy(k, FUZZ_TOKEN, HG_STORE_TOKEN_LEN);
        if (rnd_below(4) == 0)
            k[rnd_below(HG_STORE_TOKEN_LEN)] ^= 1; /* a wrong token */
        memset(k + klen, 0, 4);
        k[klen] = (unsigned char)rnd_below(3); /* rank 0..2 */
    } else {
        for (size_t i = 0; i < klen; i++) /* few keys: GETs often find one */
            k[i] = (unsigned char)('a' + rnd_below(3));
        for (size_t i = 0; i < vlen; i++)
            k[klen + i] = (unsigned char)rnd();
    }
    return HG_STORE_HDR_LEN + klen + vlen;
}

static void fuzz_store_parser(int iters)
{
    unsigned char b[HG_STORE_HDR_LEN + 4096];
    char err[256];
    int good = 0, bad = 0;
    for (int it = 0; it < iters; it++) {
        size_t len = store_frame(b, 4096 + HG_STORE_HDR_LEN);
        if (rnd() & 1)
            mutate(b, HG_STORE_HDR_LEN, 1 + (int)rnd_below(3));
        if (rnd_below(8) == 0)
            for (size_t i = 0; i < HG_STORE_HDR_LEN; i++)
                b[i] = (unsigned char)rnd();
        size_t have = rnd_below(4) == 0 ? rnd_below(HG_STORE_HDR_LEN + 1) : len;
        struct hg_store_hdr h;
        err[0] = '\0';
        int r = hg_store_parse_header(b, have, &h, err, sizeof err);
        if (have < HG_STORE_HDR_LEN) {
            EXPECT(r == 0, "parser: %zu bytes gave %d", have, r);
        } else if (r == HG_STORE_HDR_LEN) {
            good++;
            EXPECT(h.magic == HG_STORE_MAGIC && h.klen <= HG_STORE_MAX_KEY &&
                       h.vlen <= HG_STORE_MAX_VALUE && h.flags == 0,
                   "parser accepted a bad header (klen %u vlen %u)",
                   (unsigned)h.klen, (unsigned)h.vlen);
        } else {
            bad++;
            EXPECT(r == -1 && err[0], "parser: rc %d, message '%s'", r, err);
        }
    }
    printf("store parser: %d iterations, %d accepted, %d refused\n", iters,
           good, bad);
}

static int fuzz_connect(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0 &&
        errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Many raw connections to a live server: each gets a stream of frames,
 * well-formed, mutated, cut short or replaced by noise, in random pieces;
 * replies are drained (or not); connections close at random.  Afterwards
 * a good client must still get its answers. */
static void fuzz_store_server(int iters)
{
    char err[512];
    struct hg_store_server *s;
    const int world = 8; /* room for 4 * 8 + 16 connections */
    if (hg_store_server_start(&s, "127.0.0.1", 0, FUZZ_TOKEN, world, err,
                              sizeof err) != 0) {
        fprintf(stderr, "store fuzz: %s\n", err);
        failures++;
        return;
    }
    int port = hg_store_server_port(s);
    enum { NC = 40 };
    int fds[NC];
    for (int i = 0; i < NC; i++)
        fds[i] = -1;
    unsigned char *b = malloc(HG_STORE_HDR_LEN + 8192), sink[4096];
    REQUIRE(b, "malloc");
    double t0 = hg_now();
    long frames = 0, opened = 0;
    /* the server logs rejections to stderr: keep the first few only */
    for (int it = 0; it < iters; it++) {
        int i = (int)rnd_below(NC);
        if (fds[i] < 0) {
            fds[i] = fuzz_connect(port);
            opened++;
            if (fds[i] < 0)
                continue;
            if (rnd_below(3) != 0) { /* most say a good hello first */
                unsigned char h[HG_STORE_HDR_LEN + HG_STORE_TOKEN_LEN + 4] = {0};
                hg_store_put_header(h, HG_STORE_HELLO, HG_STORE_TOKEN_LEN, 4);
                memcpy(h + HG_STORE_HDR_LEN, FUZZ_TOKEN, HG_STORE_TOKEN_LEN);
                (void)!send(fds[i], h, sizeof h, MSG_NOSIGNAL | MSG_DONTWAIT);
            }
        }
        size_t len = store_frame(b, HG_STORE_HDR_LEN + 8192);
        switch (rnd_below(6)) {
        case 0: mutate(b, HG_STORE_HDR_LEN, 1 + (int)rnd_below(2)); break;
        case 1: mutate(b, len, 1 + (int)rnd_below(8)); break;
        case 2: len = rnd_below(len + 1); break; /* cut short */
        case 3:
            len = 1 + rnd_below(64);
            for (size_t k = 0; k < len; k++)
                b[k] = (unsigned char)rnd();
            break;
        default: break; /* as made */
        }
        size_t off = 0;
        while (off < len) { /* in random pieces */
            size_t piece = 1 + rnd_below(len - off);
            ssize_t n = send(fds[i], b + off, piece, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n <= 0)
                break;
            off += (size_t)n;
        }
        frames++;
        if (rnd() & 1)
            while (recv(fds[i], sink, sizeof sink, MSG_DONTWAIT) > 0) {
            }
        if (rnd_below(8) == 0) {
            close(fds[i]);
            fds[i] = -1;
        }
    }
    for (int i = 0; i < NC; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    /* a good client, through it all */
    struct hg_store *st = NULL;
    int rc = hg_store_connect(&st, "127.0.0.1", port, FUZZ_TOKEN, 0, 10.0, err,
                              sizeof err);
    EXPECT(rc == 0, "store fuzz: a good client cannot connect: %s", err);
    if (rc == 0) {
        char got[16];
        size_t len = 0;
        int64_t v = 0;
        EXPECT(hg_store_set(st, "fuzz/after", "alive", 5, err, sizeof err) == 0,
               "store fuzz: set: %s", err);
        EXPECT(hg_store_get(st, "fuzz/after", got, sizeof got, &len, err,
                            sizeof err) == 0 && len == 5 &&
                   memcmp(got, "alive", 5) == 0, "store fuzz: get: %s", err);
        EXPECT(hg_store_add(st, "fuzz/count", 3, &v, err, sizeof err) == 0 &&
                   v == 3, "store fuzz: add: %s", err);
        EXPECT(hg_store_barrier(st, "fuzz", 1, err, sizeof err) == 0,
               "store fuzz: barrier: %s", err);
        hg_store_close(st);
    }
    printf("store server: %d iterations, %ld frames on %ld connections, %lu "
           "closed by the server, %.2f s\n", iters, frames, opened,
           hg_store_server_rejected(s), hg_now() - t0);
    hg_store_server_stop(s);
    free(b);
}

int main(void)
{
    const char *s = getenv("HG_FUZZ_SEED");
    const char *k = getenv("HG_FUZZ_SCALE");
    rng_state = s ? strtoull(s, NULL, 10) : 20261122;
    int scale = k ? atoi(k) : 1;
    if (scale < 1)
        scale = 1;
    signal(SIGPIPE, SIG_IGN);
    fuzz_idx(20000 * scale);
    fuzz_store_parser(100000 * scale);
    fuzz_store_server(20000 * scale);
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
