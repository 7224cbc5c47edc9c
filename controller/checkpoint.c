/* checkpoint.c - exact checkpoints in HDF5 (h5dump/h5py can read them).
 *
 * Layout (version 2):
 *   /                attributes: format "hgtrain-checkpoint", version 2,
 *                    epoch (hgtrain writes iter_epoch's value: the
 *                    epoch a resume trains in), num_updates, iter_epoch,
 *                    iter_step, seed,
 *                    best_metric, metric_name, maximize, train_wall, wall
 *                    (meters), options (string), data_samples and
 *                    data_hash (i64, the training data the iterator
 *                    indexes; absent in older files), meta_crc32 (u32:
 *                    CRC-32 of the attributes above, see meta_crc())
 *   /params/<name>   f32, the parameter's shape (torch's state_dict names),
 *                    attribute crc32 (u32: CRC-32 of its little-endian data)
 *   /optimizer/<name>  f32, optimizer state (<param>.exp_avg, ...), crc32
 *   /iter_segs       i64 [k], only when saved mid-epoch: the epoch's
 *                    segments as words (hg_epoch_segs_decode), attribute
 *                    crc32 (of its little-endian words); absent: one
 *                    segment (files from before segments read as before,
 *                    and a reader from before ignores it)
 * File format bounds V18..LATEST: superblock and object headers carry
 * HDF5's own checksums. Version 1 files (no CRCs) still load, flagged as
 * unverified.
 *
 * Sharded (version 3, hg_ckpt_save_sharded, --save-sharded): each rank that
 * owns parameters writes <name>.<tag>.shard<k>-of-<n> next to <name>
 * (k = 0..n-1 in rank order; tag: 8 hex digits, new at every save):
 *   /                attributes: format "hgtrain-checkpoint-shard",
 *                    version 3, shard k, shards n, tag, num_updates
 *   /params/<name>, /optimizer/<name>   the owner's tensors, as above
 * and rank 0 writes <name> itself, after every shard is renamed into
 * place and its directory fsynced:
 *   /                the attributes of version 2 with version 3, plus
 *                    shards n, tag and index_crc32 (u32: CRC-32 of the
 *                    index, see index_crc())
 *   /shards/<k>      attributes file (the shard's name, in <name>'s
 *                    directory), rank, size (bytes), crc32 (u32: CRC-32 of
 *                    the whole file), params (its parameters' names, one
 *                    per line; their optimizer state goes with them)
 * no /params, no /optimizer. A reader checks every shard's size and CRC
 * before it opens it; the previous save's shards are removed once the new
 * <name> is durable.
 *
 * The file is built in memory (HDF5's core driver) and written with
 * write(2) to <path>.tmp (mode 0600), fsynced, renamed over <path>,
 * directory fsynced: a crash leaves the old file or the new one, and a
 * full disk is a failed write(2), never HDF5 closing a half-written file
 * (which crashes HDF5 1.10's atexit handler, docs/data.md).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "controller/hg_controller.h"
#include "data/hg_h5.h"

#define CKPT_FORMAT "hgtrain-checkpoint"
#define CKPT_VERSION 2
#define CKPT_VERSION_SHARDED 3
#define SHARD_FORMAT "hgtrain-checkpoint-shard"
/* the name a shard's image is opened under: the core driver refuses one
 * that exists on disk */
#define IMAGE_NAME "/nonexistent/hgtrain-shard-image"

/* CRC-32 of the metadata, as text (doubles in %a: exact) */
static uint32_t meta_crc(const struct hg_ckpt_meta *m)
{
    char buf[512];
    int n = snprintf(buf, sizeof(buf), "%lld %lld %llu %lld %llu %a %s %d %a %a ",
                     (long long)m->epoch, (long long)m->num_updates,
                     (unsigned long long)m->iter.epoch, (long long)m->iter.step,
                     (unsigned long long)m->seed, m->best_metric,
                     m->metric_name ? m->metric_name : "", m->maximize, m->train_wall,
                     m->wall);
    uint32_t crc = hg_crc32_update(0, buf, n < (int)sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
    crc = m->options ? hg_crc32_update(crc, m->options, strlen(m->options)) : crc;
    if (m->iter.data_n > 0) { /* only when recorded: older files' CRCs stay valid */
        n = snprintf(buf, sizeof(buf), "data %lld %llu", (long long)m->iter.data_n,
                     (unsigned long long)m->iter.data_hash);
        crc = hg_crc32_update(crc, buf, (size_t)n);
    }
    /* the strategy only when there is one: older files' CRCs stay valid */
    return m->strategy ? hg_crc32_update(hg_crc32_update(crc, "strategy ", 9), m->strategy,
                                      strlen(m->strategy))
                       : crc;
}

/* CRC-32 of n int64 words as their little-endian bytes (the file's order) */
static uint32_t crc_i64(const int64_t *w, int64_t n)
{
    uint32_t crc = 0;
    for (int64_t i = 0; i < n; i++) {
        unsigned char b[8];
        for (int k = 0; k < 8; k++)
            b[k] = (unsigned char)((uint64_t)w[i] >> (8 * k));
        crc = hg_crc32_update(crc, b, 8);
    }
    return crc;
}

static int attr_u32(hid_t loc, const char *name, uint32_t v)
{
    return hg_h5_attr_write(loc, name, H5T_STD_U32LE, H5T_NATIVE_UINT32, &v);
}

/* The epoch's segments as the dataset /iter_segs [nsegs] (none: none). */
static int write_segs(hid_t f, const struct hg_iter_state *it)
{
    if (it->nsegs <= 0)
        return 0;
    hsize_t dim = (hsize_t)it->nsegs;
    hid_t sp = H5Screate_simple(1, &dim, NULL);
    hid_t d = H5Dcreate2(f, "iter_segs", H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT,
                         H5P_DEFAULT);
    herr_t rc = d < 0 ? -1 : H5Dwrite(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                                      it->segs);
    if (rc >= 0 && attr_u32(d, "crc32", crc_i64(it->segs, it->nsegs)) != 0)
        rc = -1;
    if (d >= 0)
        H5Dclose(d);
    H5Sclose(sp);
    return rc < 0 ? -1 : 0;
}

/* /iter_segs into it->segs (malloc'ed), if the file has it; -1: corrupt. */
static int read_segs(hid_t f, struct hg_iter_state *it)
{
    if (H5Lexists(f, "iter_segs", H5P_DEFAULT) <= 0)
        return 0;
    hid_t d = H5Dopen2(f, "iter_segs", H5P_DEFAULT);
    hid_t sp = d < 0 ? -1 : H5Dget_space(d);
    hsize_t dim = 0;
    int rc = sp < 0 || H5Sget_simple_extent_ndims(sp) != 1 ||
             H5Sget_simple_extent_dims(sp, &dim, NULL) < 0 || dim < 1 ? -1 : 0;
    int64_t *w = rc ? NULL : malloc((size_t)dim * sizeof(*w)); /* [dim] */
    uint32_t crc = 0;
    if (rc == 0 && (!w || H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                                 w) < 0 ||
                    hg_h5_attr_read(d, "crc32", H5T_NATIVE_UINT32, &crc) != 0 ||
                    crc != crc_i64(w, (int64_t)dim))) {
        free(w);
        rc = -1;
    } else if (rc == 0) {
        it->segs = w;
        it->nsegs = (int64_t)dim;
    }
    if (sp >= 0)
        H5Sclose(sp);
    if (d >= 0)
        H5Dclose(d);
    return rc;
}

static int write_tensor(hid_t grp, const char *name, const struct hg_shape *s,
                        const float *data)
{
    hsize_t d[HG_MAX_DIMS];
    size_t n = 1;
    for (int i = 0; i < s->ndim; i++)
        d[i] = (hsize_t)s->dim[i], n *= (size_t)s->dim[i];
    hid_t sp = H5Screate_simple(s->ndim, d, NULL);
    hid_t ds = H5Dcreate2(grp, name, H5T_IEEE_F32LE, sp, H5P_DEFAULT,
                          H5P_DEFAULT, H5P_DEFAULT);
    herr_t rc = ds < 0 ? -1 : H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL,
                                       H5P_DEFAULT, data);
    if (rc >= 0 && attr_u32(ds, "crc32", hg_crc32_f32(data, n)) != 0)
        rc = -1;
    if (ds >= 0)
        H5Dclose(ds);
    H5Sclose(sp);
    return rc < 0 ? -1 : 0;
}

/* Writes every tensor of kind from g (take: those t with take[t] != 0,
 * NULL: all) into group name of f. */
static int write_kind(hid_t f, const char *group, const struct hg_graph *g,
                      struct hg_exec *ex, enum hg_tkind kind, const char *take,
                      const char *path, char *err, size_t errlen)
{
    hid_t grp = H5Gcreate2(f, group, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (grp < 0)
        return hg_kerr(err, errlen, "%s: cannot create group %s", path, group);
    int rc = 0;
    for (int t = 0; t < hg_graph_n_tensors(g) && rc == 0; t++) {
        const struct hg_tensor_info *ti = hg_graph_tensor(g, t);
        if (ti->kind != kind || (take && !take[t]))
            continue;
        HG_CHECK(strchr(ti->name, '/') == NULL && ti->dtype == HG_F32);
        if (write_tensor(grp, ti->name, &ti->shape, hg_exec_data(ex, t)) != 0)
            rc = hg_kerr(err, errlen, "%s: cannot write %s/%s (out of memory?)",
                         path, group, ti->name);
    }
    H5Gclose(grp);
    return rc;
}

static int fsync_path(const char *path, int dir)
{
    int fd = open(path, dir ? O_RDONLY | O_DIRECTORY : O_RDONLY);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

/* Bob Jenkins' lookup3 hashlittle (initval 0): HDF5's metadata checksum. */
#define ROT(x, k) (((x) << (k)) | ((x) >> (32 - (k))))
static uint32_t lookup3(const unsigned char *k, size_t length)
{
    uint32_t a, b, c;
    a = b = c = 0xdeadbeef + (uint32_t)length;
    while (length > 12) {
        a += k[0] + ((uint32_t)k[1] << 8) + ((uint32_t)k[2] << 16) + ((uint32_t)k[3] << 24);
        b += k[4] + ((uint32_t)k[5] << 8) + ((uint32_t)k[6] << 16) + ((uint32_t)k[7] << 24);
        c += k[8] + ((uint32_t)k[9] << 8) + ((uint32_t)k[10] << 16) + ((uint32_t)k[11] << 24);
        a -= c, a ^= ROT(c, 4), c += b;
        b -= a, b ^= ROT(a, 6), a += c;
        c -= b, c ^= ROT(b, 8), b += a;
        a -= c, a ^= ROT(c, 16), c += b;
        b -= a, b ^= ROT(a, 19), a += c;
        c -= b, c ^= ROT(b, 4), b += a;
        length -= 12, k += 12;
    }
    if (length == 0)
        return c;
    uint32_t w[3] = {0, 0, 0};
    for (size_t i = 0; i < length; i++)
        w[i / 4] += (uint32_t)k[i] << (8 * (i % 4));
    a += w[0], b += w[1], c += w[2];
    c ^= b, c -= ROT(b, 14);
    a ^= c, a -= ROT(c, 11);
    b ^= a, b -= ROT(a, 25);
    c ^= b, c -= ROT(b, 16);
    a ^= c, a -= ROT(c, 4);
    b ^= a, b -= ROT(a, 14);
    c ^= b, c -= ROT(b, 24);
    return c;
}

/* HDF5 1.10.8's H5Fget_file_image clears the superblock's status flags in
 * the copy but keeps the checksum computed with them set: the image would
 * not open. Recomputes it (superblock version 2/3 at offset 0: 12 bytes
 * plus 4 addresses, then the checksum). */
static void fix_superblock(unsigned char *img, size_t len)
{
    if (len < 13 || memcmp(img, "\211HDF\r\n\032\n", 8) != 0 || (img[8] != 2 && img[8] != 3))
        return;
    size_t n = 12 + 4 * (size_t)img[9];
    if (n + 4 > len)
        return;
    uint32_t c = lookup3(img, n);
    for (int i = 0; i < 4; i++)
        img[n + (size_t)i] = (unsigned char)(c >> (8 * i));
}

/* A new HDF5 file in memory that grows by grow bytes at a time (the
 * tensors' size and room for the metadata: allocated once), or -1. */
static hid_t new_image(const char *path, size_t grow, char *err, size_t errlen)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    hid_t f = -1;
    /* core driver without a backing store: HDF5 never touches the disk */
    if (fapl >= 0 && H5Pset_fapl_core(fapl, grow, 0) >= 0 &&
        H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST) >= 0)
        f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (fapl >= 0)
        H5Pclose(fapl);
    if (f < 0)
        hg_kerr(err, errlen, "%s: cannot create the HDF5 image in memory", path);
    return f;
}

/* The metadata attributes of a checkpoint (version 2, or 3: sharded). */
static int write_meta(hid_t f, const struct hg_ckpt_meta *meta, int version)
{
    return hg_h5_attr_str(f, "format", CKPT_FORMAT) || hg_h5_attr_i64(f, "version", version) ||
        hg_h5_attr_i64(f, "epoch", meta->epoch) ||
        hg_h5_attr_i64(f, "num_updates", meta->num_updates) ||
        hg_h5_attr_i64(f, "iter_epoch", (int64_t)meta->iter.epoch) ||
        hg_h5_attr_i64(f, "iter_step", meta->iter.step) ||
        hg_h5_attr_i64(f, "seed", (int64_t)meta->seed) ||
        hg_h5_attr_f64(f, "best_metric", meta->best_metric) ||
        hg_h5_attr_str(f, "metric_name", meta->metric_name ? meta->metric_name : "") ||
        hg_h5_attr_i64(f, "maximize", meta->maximize) ||
        hg_h5_attr_f64(f, "train_wall", meta->train_wall) ||
        hg_h5_attr_f64(f, "wall", meta->wall) ||
        hg_h5_attr_str(f, "options", meta->options ? meta->options : "") ||
        (meta->strategy && hg_h5_attr_str(f, "strategy", meta->strategy)) ||
        (meta->iter.data_n > 0 && (hg_h5_attr_i64(f, "data_samples", meta->iter.data_n) ||
                                   hg_h5_attr_i64(f, "data_hash", (int64_t)meta->iter.data_hash))) ||
        attr_u32(f, "meta_crc32", meta_crc(meta)) || write_segs(f, &meta->iter) ? -1 : 0;
}

/* Closes f, returning its image (malloc'ed, *len bytes), or NULL with err
 * set; rc != 0: only closes. */
static void *finish_image(hid_t f, int rc, const char *path, size_t *len, char *err,
                          size_t errlen)
{
    void *img = NULL;
    ssize_t n = -1;
    if (rc == 0 && H5Fflush(f, H5F_SCOPE_GLOBAL) >= 0)
        n = H5Fget_file_image(f, NULL, 0);
    if (rc == 0 && n > 0 && (img = malloc((size_t)n)) != NULL &&
        H5Fget_file_image(f, img, (size_t)n) != n) {
        free(img);
        img = NULL;
    }
    H5Fclose(f);
    if (img)
        fix_superblock(img, (size_t)n);
    if (rc == 0 && !img)
        hg_kerr(err, errlen, "%s: cannot build the HDF5 image (out of memory?)", path);
    *len = (size_t)n;
    return img;
}

/* Bytes of the tensors of g that take selects (NULL: all), plus 1 MiB. */
static size_t image_grow(const struct hg_graph *g, const char *take)
{
    size_t n = 0;
    for (int t = 0; t < hg_graph_n_tensors(g); t++) {
        const struct hg_tensor_info *ti = hg_graph_tensor(g, t);
        if ((ti->kind == HG_T_PARAM || ti->kind == HG_T_STATE) && (!take || take[t]))
            n += (size_t)hg_shape_numel(&ti->shape) * sizeof(float);
    }
    return n + ((size_t)1 << 20);
}

/* The checkpoint as an HDF5 file image in memory (malloc'ed, *len bytes),
 * or NULL with err set. */
static void *build_image(const char *path, const struct hg_graph *g,
                         struct hg_exec *ex, const struct hg_ckpt_meta *meta,
                         size_t *len, char *err, size_t errlen)
{
    /* the image grows by this much: the tensors' size and room for the
     * metadata, so that it is allocated once */
    size_t np = 0, ns = 0;
    hg_exec_param_block(ex, &np);
    hg_exec_state_block(ex, &ns);
    size_t grow = (np + ns) * sizeof(float) + ((size_t)1 << 20);
    hid_t f = new_image(path, grow, err, errlen);
    if (f < 0)
        return NULL;
    int rc = 0;
    if (write_meta(f, meta, CKPT_VERSION) != 0)
        rc = hg_kerr(err, errlen, "%s: cannot write attributes", path);
    if (rc == 0)
        rc = write_kind(f, "params", g, ex, HG_T_PARAM, NULL, path, err, errlen);
    if (rc == 0)
        rc = write_kind(f, "optimizer", g, ex, HG_T_STATE, NULL, path, err, errlen);
    return finish_image(f, rc, path, len, err, errlen);
}

/* Writes len bytes to fd; -1 with errno on the first failure. */
static int write_all(int fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t k = write(fd, p, len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -1;
        if (k == 0) {
            errno = ENOSPC;
            return -1;
        }
        p += k, len -= (size_t)k;
    }
    return 0;
}

/* The directory of path ("." when it has none) into dir[len]. */
static void dir_of(const char *path, char *dir, size_t len)
{
    snprintf(dir, len, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == dir)
        dir[1] = 0; /* "/" */
    else if (slash)
        *slash = 0;
    else
        snprintf(dir, len, ".");
}

static unsigned file_mode = 0600; /* hg_ckpt_set_file_mode */

void hg_ckpt_set_file_mode(unsigned mode)
{
    file_mode = mode & 0777;
}

static int allow_shared = 1; /* hg_ckpt_set_allow_shared */

void hg_ckpt_set_allow_shared(int allow) { allow_shared = allow != 0; }

/* Writes img[len] to path.tmp (file_mode), fsyncs it, renames it over path
 * and fsyncs the directory; a failure removes path.tmp and names it.  In a
 * directory others can write, path.tmp may be a name someone planted (a
 * symlink to a file of ours): it is unlinked, never followed, and ours is
 * created O_EXCL | O_NOFOLLOW; after the rename path must still be the
 * file written (rename replaces a planted symlink at path, never follows
 * it). */
static int write_file(const char *path, const char *img, size_t len, char *err,
                      size_t errlen)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
        return hg_kerr(err, errlen, "%s: path too long", path);
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < 100; tries++) {
        if (unlink(tmp) != 0 && errno != ENOENT)
            return hg_kerr(err, errlen, "%s: cannot remove the stale file: %s", tmp,
                           strerror(errno));
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, file_mode);
        if (fd < 0 && errno != EEXIST)
            return hg_kerr(err, errlen, "%s: cannot create: %s", tmp, strerror(errno));
    }
    if (fd < 0)
        return hg_kerr(err, errlen, "%s: cannot create: made again by someone else at "
                       "every try (a directory others can write?)", tmp);
    struct stat mine;
    int rc = 0;
    if (fstat(fd, &mine) != 0)
        rc = hg_kerr(err, errlen, "%s: fstat: %s", tmp, strerror(errno));
    else if (write_all(fd, img, len) != 0)
        rc = hg_kerr(err, errlen, "%s: cannot write %zu bytes: %s", tmp, len,
                     strerror(errno));
    else if (fsync(fd) != 0)
        rc = hg_kerr(err, errlen, "%s: fsync: %s", tmp, strerror(errno));
    if (close(fd) != 0 && rc == 0) /* NFS reports a full disk here */
        rc = hg_kerr(err, errlen, "%s: close: %s", tmp, strerror(errno));
    if (rc == 0 && rename(tmp, path) != 0)
        rc = hg_kerr(err, errlen, "%s: cannot rename to %s: %s", tmp, path,
                     strerror(errno));
    if (rc != 0) {
        unlink(tmp);
        return -1;
    }
    struct stat now;
    if (lstat(path, &now) != 0 || !S_ISREG(now.st_mode) || now.st_ino != mine.st_ino ||
        now.st_dev != mine.st_dev)
        return hg_kerr(err, errlen, "%s: replaced by another file while it was saved "
                       "(a directory others can write?)", path);
/* make the rename itself durable */
    char dir[4096];
    dir_of(path, dir, sizeof(dir));
    fsync_path(dir, 1);
    return 0;
}

/* ------------------------------------------------------------ the index */

struct shard_ent {
    char file[256];   /* the shard's name, in the checkpoint's directory */
    int64_t rank;     /* the rank that wrote it */
    int64_t size;     /* bytes */
    uint32_t crc;     /* CRC-32 of the whole file */
    char *params;     /* malloc'ed: its parameters' names, one per line */
};

struct shard_index {
    int n;                 /* shards */
    char tag[32];          /* this save's tag (in every shard's name) */
    struct shard_ent *e;   /* [n] */
};

static void index_free(struct shard_index *ix)
{
    for (int k = 0; k < ix->n && ix->e; k++)
        free(ix->e[k].params);
    free(ix->e);
    memset(ix, 0, sizeof(*ix));
}

/* CRC-32 of the index as text: the tag, then per shard "file rank size
 * crc\nparams\n". */
static uint32_t index_crc(const struct shard_index *ix)
{
    uint32_t crc = hg_crc32_update(0, ix->tag, strlen(ix->tag));
    for (int k = 0; k < ix->n; k++) {
        char buf[400];
        const struct shard_ent *e = &ix->e[k];
        int n = snprintf(buf, sizeof(buf), "\n%s %lld %lld %u\n", e->file,
                         (long long)e->rank, (long long)e->size, (unsigned)e->crc);
        crc = hg_crc32_update(crc, buf, n < (int)sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
        crc = hg_crc32_update(crc, e->params, strlen(e->params));
    }
    return crc;
}

/* Reads the index of the (version 3) checkpoint f at path; verify: its
 * CRC must match. */
static int read_index(hid_t f, const char *path, int verify, struct shard_index *ix,
                      char *err, size_t errlen)
{
    memset(ix, 0, sizeof(*ix));
    int64_t n = 0;
    uint32_t crc = 0;
    char *tag = hg_h5_read_str(f, "tag");
    int rc = 0;
    if (hg_h5_read_i64(f, "shards", &n) != 0 || n < 1 || n > 1 << 20 || !tag ||
        strlen(tag) >= sizeof(ix->tag) || hg_h5_attr_read(f, "index_crc32", H5T_NATIVE_UINT32, &crc) != 0)
        rc = hg_kerr(err, errlen, "%s: no valid shard index (corrupt?)", path);
    if (rc == 0)
        snprintf(ix->tag, sizeof(ix->tag), "%s", tag);
    free(tag);
    if (rc == 0 && !(ix->e = calloc((size_t)n, sizeof(*ix->e))))
        rc = hg_kerr(err, errlen, "%s: out of memory", path);
    if (rc != 0)
        return -1;
    ix->n = (int)n;
    for (int k = 0; k < ix->n && rc == 0; k++) {
        char name[32];
        snprintf(name, sizeof(name), "shards/%d", k);
        struct shard_ent *e = &ix->e[k];
        hid_t grp = H5Lexists(f, "shards", H5P_DEFAULT) > 0 &&
                            H5Lexists(f, name, H5P_DEFAULT) > 0
                        ? H5Gopen2(f, name, H5P_DEFAULT)
                        : -1;
        char *file = grp < 0 ? NULL : hg_h5_read_str(grp, "file");
        e->params = grp < 0 ? NULL : hg_h5_read_str(grp, "params");
        if (!file || !e->params || strlen(file) >= sizeof(e->file) || strchr(file, '/') ||
            hg_h5_read_i64(grp, "rank", &e->rank) != 0 || hg_h5_read_i64(grp, "size", &e->size) != 0 ||
            hg_h5_attr_read(grp, "crc32", H5T_NATIVE_UINT32, &e->crc) != 0)
            rc = hg_kerr(err, errlen, "%s: shard index entry /%s missing or corrupt", path, name);
        else
            snprintf(e->file, sizeof(e->file), "%s", file);
        free(file);
        if (grp >= 0)
            H5Gclose(grp);
    }
    if (rc == 0 && verify && index_crc(ix) != crc)
        rc = hg_kerr(err, errlen, "%s: shard index checksum mismatch: the file is corrupt", path);
    if (rc != 0)
        index_free(ix);
    return rc;
}

/* The index of the checkpoint at path if it is a sharded one (ix->n = 0:
 * none, unreadable, or not sharded); no verification. */
static void index_of(const char *path, struct shard_index *ix)
{
    memset(ix, 0, sizeof(*ix));
    if (access(path, F_OK) != 0)
        return;
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    int64_t version = 0;
    char e[64];
    if (f >= 0 && hg_h5_read_i64(f, "version", &version) == 0 && version == CKPT_VERSION_SHARDED)
        read_index(f, path, 0, ix, e, sizeof(e));
    if (f >= 0)
        H5Fclose(f);
}

/* dir/file of shard e of the checkpoint at path into out[len]. */
static int shard_path(const char *path, const char *file, char *out, size_t len)
{
    char dir[4096];
    dir_of(path, dir, sizeof(dir));
    return snprintf(out, len, "%s/%s", dir, file) >= (int)len ? -1 : 0;
}

/* Removes the shards of ix (those of a checkpoint at path). */
static void unlink_shards(const char *path, const struct shard_index *ix)
{
    for (int k = 0; k < ix->n; k++) {
        char sp[4400];
        if (shard_path(path, ix->e[k].file, sp, sizeof(sp)) == 0)
            unlink(sp);
    }
}

int hg_ckpt_orphan_shard(const char *shard)
{
    /* <name>.<tag>.shard<k>-of-<n>: <name> is what precedes the tag */
    char name[4096];
    if (snprintf(name, sizeof(name), "%s", shard) >= (int)sizeof(name))
        return 0;
    char *dot = strrchr(name, '.');
    if (!dot || strncmp(dot, ".shard", 6) != 0 || !strstr(dot, "-of-"))
        return 0;
    *dot = 0;
    if (!(dot = strrchr(name, '.')) || strlen(dot + 1) != 8 ||
        strspn(dot + 1, "0123456789abcdef") != 8)
        return 0;
    *dot = 0;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (access(name, F_OK) != 0)
        return errno == ENOENT; /* no checkpoint of that name */
    hid_t f = H5Fopen(name, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        return 0; /* unreadable: keep what might be its shards */
    int64_t version = 0;
    int orphan = 0;
    if (hg_h5_read_i64(f, "version", &version) == 0 && version < CKPT_VERSION_SHARDED) {
        orphan = 1; /* one file now: it has no shards */
    } else if (version == CKPT_VERSION_SHARDED) {
        struct shard_index ix;
        char e[64];
        if (read_index(f, name, 0, &ix, e, sizeof(e)) == 0) {
            const char *base = strrchr(shard, '/');
            base = base ? base + 1 : shard;
            orphan = 1;
            for (int k = 0; k < ix.n; k++)
                orphan &= strcmp(ix.e[k].file, base) != 0;
            index_free(&ix);
        }
    }
    H5Fclose(f);
    return orphan;
}

int hg_ckpt_remove(const char *path)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    struct shard_index ix;
    index_of(path, &ix);
    int rc = unlink(path);
    unlink_shards(path, &ix);
    index_free(&ix);
    return rc;
}

int hg_ckpt_save(const char *path, const struct hg_graph *g,
                 struct hg_exec *ex, const struct hg_ckpt_meta *meta,
                 char *err, size_t errlen)
{
    if (strlen(path) + 5 > 4096)
        return hg_kerr(err, errlen, "%s: path too long", path);
    /* a GPU plan: the host mirror must hold the device's values */
    if (hg_exec_download(ex, HG_R_PARAMS | HG_R_STATE, err, errlen) != 0)
        return -1;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    size_t len = 0;
    char *img = build_image(path, g, ex, meta, &len, err, errlen);
    if (!img)
        return -1;
    /* a sharded checkpoint it replaces leaves its shards behind */
    struct shard_index old;
    index_of(path, &old);
    int rc = write_file(path, img, len, err, errlen);
    free(img);
    if (rc == 0)
        unlink_shards(path, &old);
    index_free(&old);
    return rc;
}

/* ------------------------------------------------------- sharded saving */

/* What each rank tells the others after writing its shard. */
struct shard_rec {
    int64_t size;     /* bytes of the shard written (0: none) */
    uint32_t crc;     /* its CRC-32 */
    int32_t status;   /* 0, or -1: msg says why */
    char msg[240];
};

/* shards: the ranks owning a parameter, in rank order; shard_of[r] = k,
 * or -1 for a rank that owns none. The number of shards. */
static int number_shards(const int *owner, int np, int world, int *shard_of)
{
    int n = 0;
    for (int r = 0; r < world; r++) {
        int has = 0;
        for (int i = 0; i < np && !has; i++)
            has = owner[i] == r;
        shard_of[r] = has ? n++ : -1;
    }
    return n;
}

/* take[t] = 1 for the params owned by rank and their optimizer state
 * (<param>.<what>: the longest param name that prefixes it). */
static void select_owned(const struct hg_graph *g, const int *owner, int rank, char *take)
{
    int np = hg_graph_n_params(g);
    for (int t = 0; t < hg_graph_n_tensors(g); t++) {
        const struct hg_tensor_info *ti = hg_graph_tensor(g, t);
        take[t] = 0;
        if (ti->kind != HG_T_PARAM && ti->kind != HG_T_STATE)
            continue;
        int of = -1;
        size_t best = 0;
        for (int i = 0; i < np; i++) {
            int p = hg_graph_param_at(g, i);
            const char *pn = hg_graph_tensor(g, p)->name;
            size_t l = strlen(pn);
            if (p == t) {
                of = i;
                break;
            }
            if (ti->kind == HG_T_STATE && l > best && strncmp(ti->name, pn, l) == 0 &&
                ti->name[l] == '.')
                of = i, best = l;
        }
        HG_CHECK(of >= 0); /* every state tensor belongs to a parameter */
        take[t] = owner[of] == rank;
    }
}

/* The shard file name: <name>.<tag>.shard<k>-of-<n> (no directory). */
static void shard_name(const char *path, const char *tag, int k, int n, char *out,
                       size_t len)
{
    const char *base = strrchr(path, '/');
    snprintf(out, len, "%s.%s.shard%d-of-%d", base ? base + 1 : path, tag, k, n);
}

/* Rank r's shard k of n as an HDF5 image (malloc'ed, *len bytes). */
static void *shard_image(const char *path, const struct hg_graph *g, struct hg_exec *ex,
                         const char *take, int k, int n, const char *tag,
                         int64_t num_updates, size_t *len, char *err, size_t errlen)
{
    hid_t f = new_image(path, image_grow(g, take), err, errlen);
    if (f < 0)
        return NULL;
    int rc = 0;
    if (hg_h5_attr_str(f, "format", SHARD_FORMAT) || hg_h5_attr_i64(f, "version", CKPT_VERSION_SHARDED) ||
        hg_h5_attr_i64(f, "shard", k) || hg_h5_attr_i64(f, "shards", n) || hg_h5_attr_str(f, "tag", tag) ||
        hg_h5_attr_i64(f, "num_updates", num_updates))
        rc = hg_kerr(err, errlen, "%s: cannot write attributes", path);
    if (rc == 0)
        rc = write_kind(f, "params", g, ex, HG_T_PARAM, take, path, err, errlen);
    if (rc == 0)
        rc = write_kind(f, "optimizer", g, ex, HG_T_STATE, take, path, err, errlen);
    return finish_image(f, rc, path, len, err, errlen);
}

/* The main file of a sharded checkpoint: meta and the index. */
static void *main_image(const char *path, const struct hg_ckpt_meta *meta,
                        const struct shard_index *ix, size_t *len, char *err, size_t errlen)
{
    hid_t f = new_image(path, (size_t)1 << 20, err, errlen);
    if (f < 0)
        return NULL;
    int rc = 0;
    if (write_meta(f, meta, CKPT_VERSION_SHARDED) != 0 || hg_h5_attr_i64(f, "shards", ix->n) ||
        hg_h5_attr_str(f, "tag", ix->tag) || attr_u32(f, "index_crc32", index_crc(ix)))
        rc = hg_kerr(err, errlen, "%s: cannot write attributes", path);
    hid_t grp = rc == 0 ? H5Gcreate2(f, "shards", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) : -1;
    if (rc == 0 && grp < 0)
        rc = hg_kerr(err, errlen, "%s: cannot create group shards", path);
    for (int k = 0; k < ix->n && rc == 0; k++) {
        char name[32];
        snprintf(name, sizeof(name), "%d", k);
        const struct shard_ent *e = &ix->e[k];
        hid_t s = H5Gcreate2(grp, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (s < 0 || hg_h5_attr_str(s, "file", e->file) || hg_h5_attr_i64(s, "rank", e->rank) ||
            hg_h5_attr_i64(s, "size", e->size) || attr_u32(s, "crc32", e->crc) ||
            hg_h5_attr_str(s, "params", e->params))
            rc = hg_kerr(err, errlen, "%s: cannot write the shard index", path);
        if (s >= 0)
            H5Gclose(s);
    }
    if (grp >= 0)
        H5Gclose(grp);
    return finish_image(f, rc, path, len, err, errlen);
}

/* ix's entries for the shards of owner (names, ranks, params); sizes and
 * CRCs from rec. */
static int fill_index(struct shard_index *ix, const char *path, const struct hg_graph *g,
                      const int *owner, const int *shard_of, int world,
                      const struct shard_rec *rec)
{
    int np = hg_graph_n_params(g);
    for (int r = 0; r < world; r++) {
        int k = shard_of[r];
        if (k < 0)
            continue;
        struct shard_ent *e = &ix->e[k];
        shard_name(path, ix->tag, k, ix->n, e->file, sizeof(e->file));
        e->rank = r;
        e->size = rec[r].size;
        e->crc = rec[r].crc;
        size_t len = 1;
        for (int i = 0; i < np; i++)
            if (owner[i] == r)
                len += strlen(hg_graph_tensor(g, hg_graph_param_at(g, i))->name) + 1;
        if (!(e->params = malloc(len))) /* [len] names, '\n' between */
            return -1;
        size_t at = 0;
        for (int i = 0; i < np; i++)
            if (owner[i] == r) {
                const char *pn = hg_graph_tensor(g, hg_graph_param_at(g, i))->name;
                at += (size_t)sprintf(e->params + at, "%s%s", at ? "\n" : "", pn);
            }
        e->params[at] = 0;
    }
    return 0;
}

int hg_ckpt_save_sharded(const char *path, const struct hg_graph *g,
                         struct hg_exec *ex, const struct hg_ckpt_meta *meta,
                         struct hg_comm *comm, const int *owner, char *err,
                         size_t errlen)
{
    int rank = comm ? hg_comm_rank(comm) : 0, world = comm ? hg_comm_world(comm) : 1;
    int np = hg_graph_n_params(g);
    for (int i = 0; i < np; i++)
        HG_CHECK(owner[i] >= 0 && owner[i] < world);
    if (strlen(path) + 64 > 4096)
        return hg_kerr(err, errlen, "%s: path too long", path);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    int *shard_of = malloc((size_t)world * sizeof(int));                  /* [world] */
    struct shard_rec *rec = calloc((size_t)world, sizeof(*rec));          /* [world] */
    char *take = malloc((size_t)hg_graph_n_tensors(g) + 1);               /* [tensors] */
    if (!shard_of || !rec || !take) {
        free(shard_of);
        free(rec);
        free(take);
        return hg_kerr(err, errlen, "%s: out of memory", path);
    }
    struct shard_index ix, old;
    memset(&ix, 0, sizeof(ix));
    memset(&old, 0, sizeof(old));
    char mine[4400] = "";   /* this rank's shard, once written */
    struct shard_rec me;
    memset(&me, 0, sizeof(me));
    int rc = 0;
    /* every rank takes part in each collective below whatever happened
     * to it before, so that all of them learn every outcome */
    int n = number_shards(owner, np, world, shard_of);
    /* the tag: new at every save, never the one on disk (rank 0's) */
    if (rank == 0) {
        index_of(path, &old);
        uint64_t x = hg_mix64((uint64_t)(hg_now() * 1e9) ^ ((uint64_t)getpid() << 32) ^
                              (uint64_t)meta->num_updates);
        do
            snprintf(ix.tag, sizeof(ix.tag), "%08x", (unsigned)(x++ & 0xffffffffu));
        while (old.n > 0 && strcmp(ix.tag, old.tag) == 0);
    }
    char ebuf[256];
    if (comm && hg_comm_broadcast(comm, ix.tag, sizeof(ix.tag), 0, ebuf, sizeof(ebuf)) != 0) {
        rc = hg_kerr(err, errlen, "%s: %s", path, ebuf);
        goto out;
    }
    /* this rank's shard: written, fsynced, renamed */
    if (rc == 0 && hg_exec_download(ex, HG_R_PARAMS | HG_R_STATE, err, errlen) != 0)
        rc = -1;
    if (rc == 0 && shard_of[rank] >= 0) {
        char file[300];
        shard_name(path, ix.tag, shard_of[rank], n, file, sizeof(file));
        shard_path(path, file, mine, sizeof(mine));
        select_owned(g, owner, rank, take);
        size_t len = 0;
        char *img = shard_image(mine, g, ex, take, shard_of[rank], n, ix.tag,
                                meta->num_updates, &len, err, errlen);
        rc = img ? write_file(mine, img, len, err, errlen) : -1;
        if (rc == 0) {
            me.size = (int64_t)len;
            me.crc = hg_crc32_update(0, img, len);
        } else {
            mine[0] = 0;
        }
        free(img);
    }
    me.status = rc;
    if (rc != 0)
        snprintf(me.msg, sizeof(me.msg), "%s", err);
    if (!comm)
        rec[0] = me;
    else if (hg_comm_allgather(comm, &me, rec, sizeof(me), ebuf, sizeof(ebuf)) != 0) {
        rc = hg_kerr(err, errlen, "%s: %s", path, ebuf);
        goto out;
    }
    for (int r = 0; rc == 0 && r < world; r++)
        if (rec[r].status != 0)
            rc = hg_kerr(err, errlen, "%s: not saved: rank %d could not write its shard: %s",
                         path, r, rec[r].msg);
    /* every shard is durable: rank 0 writes the main file, the others
     * wait for its outcome */
    struct shard_rec ok;     /* rank 0's outcome (status, msg) */
    memset(&ok, 0, sizeof(ok));
    ok.status = rc;
    if (rc == 0 && rank == 0) {
        ix.n = n;
        ix.e = calloc((size_t)n, sizeof(*ix.e));
        if (!ix.e || fill_index(&ix, path, g, owner, shard_of, world, rec) != 0)
            rc = hg_kerr(err, errlen, "%s: out of memory", path);
        size_t len = 0;
        char *img = rc == 0 ? main_image(path, meta, &ix, &len, err, errlen) : NULL;
        rc = img ? write_file(path, img, len, err, errlen) : -1;
        free(img);
        if (rc == 0)
            unlink_shards(path, &old); /* the previous save's, now unreferenced */
        ok.status = rc;
        if (rc != 0)
            snprintf(ok.msg, sizeof(ok.msg), "%s", err);
    }
    if (comm && world > 1 && hg_comm_broadcast(comm, &ok, sizeof(ok), 0, ebuf, sizeof(ebuf)) != 0 &&
        rc == 0)
        rc = hg_kerr(err, errlen, "%s: %s", path, ebuf);
    if (rc == 0 && ok.status != 0)
        rc = hg_kerr(err, errlen, "%s: not saved: rank 0 could not write it: %s", path, ok.msg);
out:
    if (rc != 0 && mine[0])
        unlink(mine); /* never referenced */
    index_free(&ix);
    index_free(&old);
    free(shard_of);
    free(rec);
    free(take);
    return rc;
}

static void shape_str(const hsize_t *d, int nd, char *buf, size_t len)
{
    struct hg_shape s = {.ndim = nd};
    for (int i = 0; i < nd && i < HG_MAX_DIMS; i++)
        s.dim[i] = (int64_t)d[i];
    hg_shape_str(&s, buf, len);
}

/* verify: version >= 2, every dataset's crc32 must match its data.
 * found == NULL: every tensor of kind must be in f; else (a shard) those
 * in f are read and marked in found[t], one missing is skipped. */
static int read_kind(hid_t f, const char *group, const struct hg_graph *g,
                     struct hg_exec *ex, enum hg_tkind kind, int verify, char *found,
                     const char *path, char *err, size_t errlen)
{
    if (H5Lexists(f, group, H5P_DEFAULT) <= 0)
        return hg_kerr(err, errlen, "%s: no group /%s", path, group);
    hid_t grp = H5Gopen2(f, group, H5P_DEFAULT);
    if (grp < 0)
        return hg_kerr(err, errlen, "%s: cannot open /%s (corrupt?)", path, group);
    int rc = 0;
    for (int t = 0; t < hg_graph_n_tensors(g) && rc == 0; t++) {
        const struct hg_tensor_info *ti = hg_graph_tensor(g, t);
        if (ti->kind != kind)
            continue;
        char want[96], got[96];
        hg_shape_str(&ti->shape, want, sizeof(want));
        if (found && H5Lexists(grp, ti->name, H5P_DEFAULT) <= 0)
            continue;
        if (found && found[t]) {
            rc = hg_kerr(err, errlen, "%s: /%s/%s is in two shards", path, group, ti->name);
            break;
        }
        if (found)
            found[t] = 1;
        if (H5Lexists(grp, ti->name, H5P_DEFAULT) <= 0) {
            rc = hg_kerr(err, errlen, "%s: /%s/%s missing (the model has it %s): "
                         "a checkpoint of another model?", path, group, ti->name, want);
            break;
        }
        hid_t ds = H5Dopen2(grp, ti->name, H5P_DEFAULT);
        hid_t sp = ds < 0 ? -1 : H5Dget_space(ds);
        hsize_t d[HG_MAX_DIMS + 1];
        int nd = sp < 0 ? -1 : H5Sget_simple_extent_ndims(sp);
        if (nd < 0 || nd > HG_MAX_DIMS) {
            rc = hg_kerr(err, errlen, "%s: /%s/%s unreadable (corrupt?)", path,
                         group, ti->name);
        } else {
            H5Sget_simple_extent_dims(sp, d, NULL);
            int same = nd == ti->shape.ndim;
            size_t n = 1;
            for (int i = 0; same && i < nd; i++)
                same = (int64_t)d[i] == ti->shape.dim[i], n *= (size_t)d[i];
            shape_str(d, nd, got, sizeof(got));
            uint32_t want_crc = 0;
            if (!same)
                rc = hg_kerr(err, errlen,
                             "%s: /%s/%s has shape %s, the model has %s", path,
                             group, ti->name, got, want);
            else if (H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                             hg_exec_data(ex, t)) < 0)
                rc = hg_kerr(err, errlen, "%s: /%s/%s: read failed (corrupt?)",
                             path, group, ti->name);
            else if (verify && hg_h5_attr_read(ds, "crc32", H5T_NATIVE_UINT32, &want_crc) != 0)
                rc = hg_kerr(err, errlen, "%s: /%s/%s: no checksum (corrupt?)",
                             path, group, ti->name);
            else if (verify && hg_crc32_f32(hg_exec_data(ex, t), n) != want_crc)
                rc = hg_kerr(err, errlen, "%s: /%s/%s: checksum mismatch: the file "
                             "is corrupt", path, group, ti->name);
        }
        if (sp >= 0)
            H5Sclose(sp);
        if (ds >= 0)
            H5Dclose(ds);
    }
    H5Gclose(grp);
    return rc;
}

/* Opens path and reads and verifies its metadata; the file id, or -1. */
static hid_t open_meta(const char *path, struct hg_ckpt_meta *meta, char *err,
                       size_t errlen)
{
    memset(meta, 0, sizeof(*meta));
    meta->best_metric = NAN;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (access(path, R_OK) != 0)
        return hg_kerr(err, errlen, "%s: %s", path, strerror(errno));
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        return hg_kerr(err, errlen, "%s: not an HDF5 file (corrupt or truncated?)",
                       path);
    int rc = 0;
    char *fmt = hg_h5_read_str(f, "format");
    int64_t version = 0, iter_epoch = 0, seed = 0, maximize = 0;
    uint32_t crc = 0;
    if (!fmt || strcmp(fmt, CKPT_FORMAT) != 0)
        rc = hg_kerr(err, errlen, "%s: not an hgtrain checkpoint (format '%s')",
                     path, fmt ? fmt : "none");
    else if (hg_h5_read_i64(f, "version", &version) != 0 || version < 1 ||
             version > CKPT_VERSION_SHARDED)
        rc = hg_kerr(err, errlen, "%s: checkpoint version %lld, this hgtrain reads "
                     "1 to %d", path, (long long)version, CKPT_VERSION_SHARDED);
    else if (hg_h5_read_i64(f, "epoch", &meta->epoch) || hg_h5_read_i64(f, "num_updates", &meta->num_updates) ||
             hg_h5_read_i64(f, "iter_epoch", &iter_epoch) || hg_h5_read_i64(f, "iter_step", &meta->iter.step) ||
             hg_h5_read_i64(f, "seed", &seed) || hg_h5_read_f64(f, "best_metric", &meta->best_metric) ||
             hg_h5_read_f64(f, "train_wall", &meta->train_wall) || hg_h5_read_f64(f, "wall", &meta->wall))
        rc = hg_kerr(err, errlen, "%s: missing or corrupt attributes", path);
    free(fmt);
    meta->iter.epoch = (uint64_t)iter_epoch;
    meta->seed = (uint64_t)seed;
    meta->options = hg_h5_read_str(f, "options");
    meta->strategy = hg_h5_read_str(f, "strategy");
    int64_t dn = 0, dh = 0; /* absent in files from before: not recorded */
    if (hg_h5_read_i64(f, "data_samples", &dn) != 0 || hg_h5_read_i64(f, "data_hash", &dh) != 0)
        dn = dh = 0;
    meta->iter.data_n = dn;
    meta->iter.data_hash = (uint64_t)dh;
    meta->checksummed = version >= 2;
    meta->shards = 0;
    if (rc == 0 && read_segs(f, &meta->iter) != 0)
        rc = hg_kerr(err, errlen, "%s: corrupt dataset iter_segs", path);
    if (rc == 0 && version >= 2) {
        meta->metric_name = hg_h5_read_str(f, "metric_name");
        if (!meta->metric_name || !meta->options ||
            hg_h5_read_i64(f, "maximize", &maximize) != 0 ||
            hg_h5_attr_read(f, "meta_crc32", H5T_NATIVE_UINT32, &crc) != 0)
            rc = hg_kerr(err, errlen, "%s: missing or corrupt attributes", path);
        meta->maximize = (int)maximize;
        if (rc == 0 && meta_crc(meta) != crc)
            rc = hg_kerr(err, errlen, "%s: metadata checksum mismatch: the file is "
                         "corrupt", path);
    }
    if (rc != 0) {
        H5Fclose(f);
        hg_ckpt_meta_free(meta);
        return -1;
    }
    return f;
}

/* The sharded checkpoint f (at path)'s index, verified, each shard present
 * with its size (ix->n = 0: f is not sharded). */
static int open_index(hid_t f, const char *path, struct shard_index *ix, char *err,
                      size_t errlen)
{
    int64_t version = 0;
    memset(ix, 0, sizeof(*ix));
    if (hg_h5_read_i64(f, "version", &version) != 0 || version != CKPT_VERSION_SHARDED)
        return 0;
    if (read_index(f, path, 1, ix, err, errlen) != 0)
        return -1;
    for (int k = 0; k < ix->n; k++) {
        char sp[4400];
        struct stat st;
        if (shard_path(path, ix->e[k].file, sp, sizeof(sp)) != 0) {
            hg_kerr(err, errlen, "%s: path too long", path);
        } else if (stat(sp, &st) != 0) {
            hg_kerr(err, errlen, "%s: shard %s (of rank %lld): %s: the checkpoint is "
                    "incomplete", path, sp, (long long)ix->e[k].rank, strerror(errno));
        } else if ((int64_t)st.st_size != ix->e[k].size) {
            hg_kerr(err, errlen, "%s: shard %s has %lld bytes, the index says %lld: "
                    "truncated or replaced", path, sp, (long long)st.st_size,
                    (long long)ix->e[k].size);
        } else {
            continue;
        }
        index_free(ix);
        return -1;
    }
    return 0;
}

/* Shard k of ix read whole and checked (size, CRC, its attributes), opened
 * from memory; the file id or -1. *img: the bytes (free after closing). */
static hid_t open_shard(const char *path, const struct shard_index *ix, int k,
                        void **img, char *err, size_t errlen)
{
    const struct shard_ent *e = &ix->e[k];
    char sp[4400];
    *img = NULL;
    if (shard_path(path, e->file, sp, sizeof(sp)) != 0)
        return hg_kerr(err, errlen, "%s: path too long", path);
    int fd = open(sp, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return hg_kerr(err, errlen, "%s: shard %s: %s: the checkpoint is incomplete",
                       path, sp, strerror(errno));
    /* as the main file (hgtrain checks it): another user's shard, or one
     * others can write, could hold anything its size and CRC-32 allow */
    struct stat st;
    if (!allow_shared && fstat(fd, &st) == 0 &&
        (st.st_uid != geteuid() || (st.st_mode & 022))) {
        close(fd);
        return hg_kerr(err, errlen, "%s: shard %s: %s: refused (--allow-shared-save-dir to "
                       "take the risk)", path, sp, st.st_uid != geteuid()
                       ? "owned by another user" : "others can write it");
    }
    char *buf = malloc((size_t)e->size + 1); /* [size + 1]: a longer file shows */
    ssize_t got = 0, k2;
    while (buf && got <= e->size &&
           ((k2 = read(fd, buf + got, (size_t)(e->size + 1 - got))) > 0 ||
            (k2 < 0 && errno == EINTR)))
        got += k2 > 0 ? k2 : 0;
    close(fd);
    if (!buf)
        return hg_kerr(err, errlen, "%s: shard %s: out of memory", path, sp);
    int rc = 0;
    if (got != e->size)
        rc = hg_kerr(err, errlen, "%s: shard %s has %s%lld bytes, the index says %lld: "
                     "truncated or replaced", path, sp, got > e->size ? "more than " : "",
                     (long long)(got > e->size ? e->size : got), (long long)e->size);
    else if (hg_crc32_update(0, buf, (size_t)got) != e->crc)
        rc = hg_kerr(err, errlen, "%s: shard %s: checksum mismatch: the file is corrupt",
                     path, sp);
    hid_t fapl = rc == 0 ? H5Pcreate(H5P_FILE_ACCESS) : -1, f = -1;
    if (fapl >= 0 && H5Pset_fapl_core(fapl, (size_t)1 << 20, 0) >= 0 &&
        H5Pset_file_image(fapl, buf, (size_t)got) >= 0)
        f = H5Fopen(IMAGE_NAME, H5F_ACC_RDONLY, fapl);
    if (fapl >= 0)
        H5Pclose(fapl);
    if (rc == 0 && f < 0)
        rc = hg_kerr(err, errlen, "%s: shard %s: not an HDF5 file (corrupt?)", path, sp);
    char *fmt = f >= 0 ? hg_h5_read_str(f, "format") : NULL;
    char *tag = f >= 0 ? hg_h5_read_str(f, "tag") : NULL;
    int64_t shard = -1;
    if (rc == 0 && (!fmt || strcmp(fmt, SHARD_FORMAT) != 0 || !tag ||
                    strcmp(tag, ix->tag) != 0 || hg_h5_read_i64(f, "shard", &shard) != 0 ||
                    shard != k))
        rc = hg_kerr(err, errlen, "%s: shard %s is not shard %d of this checkpoint", path,
                     sp, k);
    free(fmt);
    free(tag);
    if (rc != 0) {
        if (f >= 0)
            H5Fclose(f);
        free(buf);
        return -1;
    }
    *img = buf;
    return f;
}

int hg_ckpt_read_meta(const char *path, struct hg_ckpt_meta *meta, char *err,
                      size_t errlen)
{
    hid_t f = open_meta(path, meta, err, errlen);
    if (f < 0)
        return -1;
    struct shard_index ix;
    int rc = open_index(f, path, &ix, err, errlen);
    meta->shards = ix.n;
    index_free(&ix);
    H5Fclose(f);
    if (rc != 0)
        hg_ckpt_meta_free(meta);
    return rc;
}

/* The tensors of g from every shard of ix. */
static int load_shards(const char *path, const struct shard_index *ix,
                       const struct hg_graph *g, struct hg_exec *ex, int reset_optimizer,
                       char *err, size_t errlen)
{
    int nt = hg_graph_n_tensors(g);
    char *found = calloc((size_t)nt + 1, 1); /* [tensors] 1: read */
    if (!found)
        return hg_kerr(err, errlen, "%s: out of memory", path);
    int rc = 0;
    for (int k = 0; k < ix->n && rc == 0; k++) {
        void *img;
        hid_t f = open_shard(path, ix, k, &img, err, errlen);
        if (f < 0) {
            rc = -1;
            break;
        }
        char sp[4400];
        shard_path(path, ix->e[k].file, sp, sizeof(sp));
        rc = read_kind(f, "params", g, ex, HG_T_PARAM, 1, found, sp, err, errlen);
        if (rc == 0 && !reset_optimizer)
            rc = read_kind(f, "optimizer", g, ex, HG_T_STATE, 1, found, sp, err, errlen);
        if (H5Fclose(f) < 0 && rc == 0)
            rc = hg_kerr(err, errlen, "%s: corrupt (HDF5 close failed)", sp);
        free(img);
    }
    for (int t = 0; t < nt && rc == 0; t++) {
        const struct hg_tensor_info *ti = hg_graph_tensor(g, t);
        if (found[t] || !(ti->kind == HG_T_PARAM || (ti->kind == HG_T_STATE && !reset_optimizer)))
            continue;
        char want[96];
        hg_shape_str(&ti->shape, want, sizeof(want));
        rc = hg_kerr(err, errlen, "%s: /%s/%s missing from every shard (the model has it "
                     "%s): a checkpoint of another model?", path,
                     ti->kind == HG_T_PARAM ? "params" : "optimizer", ti->name, want);
    }
    free(found);
    return rc;
}

int hg_ckpt_load(const char *path, const struct hg_graph *g,
                 struct hg_exec *ex, int reset_optimizer,
                 struct hg_ckpt_meta *meta, char *err, size_t errlen)
{
    hid_t f = open_meta(path, meta, err, errlen);
    if (f < 0)
        return -1;
    int v = meta->checksummed;
    struct shard_index ix;
    int rc = open_index(f, path, &ix, err, errlen);
    meta->shards = ix.n;
    if (rc == 0 && ix.n > 0) {
        rc = load_shards(path, &ix, g, ex, reset_optimizer, err, errlen);
    } else if (rc == 0) {
        rc = read_kind(f, "params", g, ex, HG_T_PARAM, v, NULL, path, err, errlen);
        if (rc == 0 && !reset_optimizer)
            rc = read_kind(f, "optimizer", g, ex, HG_T_STATE, v, NULL, path, err, errlen);
    }
    index_free(&ix);
    if (H5Fclose(f) < 0 && rc == 0)
        rc = hg_kerr(err, errlen, "%s: corrupt (HDF5 close failed)", path);
    if (rc == 0 && ex) /* a GPU plan computes with the device's copy */
        rc = hg_exec_upload(ex, HG_R_PARAMS | HG_R_STATE, err, errlen);
    if (rc != 0)
        hg_ckpt_meta_free(meta);
    return rc;
}

/* H5Literate callback: copies one dataset of a shard group into dst. */
struct copy_ctx {
    hid_t dst;     /* the destination group */
    int failed;
};

static herr_t copy_one(hid_t grp, const char *name, const H5L_info_t *info, void *data)
{
    (void)info;
    struct copy_ctx *c = data;
    if (H5Lexists(c->dst, name, H5P_DEFAULT) > 0 ||
        H5Ocopy(grp, name, c->dst, name, H5P_DEFAULT, H5P_DEFAULT) < 0) {
        c->failed = 1;
        return 1; /* stop */
    }
    return 0;
}

int hg_ckpt_merge(const char *src, const char *dst, char *err, size_t errlen)
{
    struct hg_ckpt_meta meta;
    hid_t f = open_meta(src, &meta, err, errlen);
    if (f < 0)
        return -1;
    struct shard_index ix;
    int rc = open_index(f, src, &ix, err, errlen);
    H5Fclose(f);
    if (rc == 0 && ix.n == 0)
        rc = hg_kerr(err, errlen, "%s: not a sharded checkpoint (it is one file already)", src);
    int64_t bytes = 0;
    for (int k = 0; k < ix.n; k++)
        bytes += ix.e[k].size;
    hid_t out = rc == 0 ? new_image(dst, (size_t)bytes + ((size_t)1 << 20), err, errlen) : -1;
    if (rc == 0 && out < 0)
        rc = -1;
    if (rc == 0 && write_meta(out, &meta, CKPT_VERSION) != 0)
        rc = hg_kerr(err, errlen, "%s: cannot write attributes", dst);
    static const char *const groups[2] = {"params", "optimizer"};
    hid_t dg[2] = {-1, -1};
    for (int i = 0; i < 2 && rc == 0; i++)
        if ((dg[i] = H5Gcreate2(out, groups[i], H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0)
            rc = hg_kerr(err, errlen, "%s: cannot create group %s", dst, groups[i]);
    for (int k = 0; k < ix.n && rc == 0; k++) {
        void *img;
        hid_t sf = open_shard(src, &ix, k, &img, err, errlen);
        if (sf < 0) {
            rc = -1;
            break;
        }
        for (int i = 0; i < 2 && rc == 0; i++) {
            struct copy_ctx c = {.dst = dg[i]};
            hid_t sg = H5Lexists(sf, groups[i], H5P_DEFAULT) > 0
                           ? H5Gopen2(sf, groups[i], H5P_DEFAULT)
                           : -1;
            if (sg < 0 || H5Literate(sg, H5_INDEX_NAME, H5_ITER_INC, NULL, copy_one, &c) < 0 ||
                c.failed)
                rc = hg_kerr(err, errlen, "%s: shard %s: cannot copy /%s (corrupt, or a "
                             "tensor in two shards?)", src, ix.e[k].file, groups[i]);
            if (sg >= 0)
                H5Gclose(sg);
        }
        H5Fclose(sf);
        free(img);
    }
    for (int i = 0; i < 2; i++)
        if (dg[i] >= 0)
            H5Gclose(dg[i]);
    size_t len = 0;
    char *img = out >= 0 ? finish_image(out, rc, dst, &len, err, errlen) : NULL;
    if (rc == 0 && !img)
        rc = -1;
    if (rc == 0)
        rc = write_file(dst, img, len, err, errlen);
    free(img);
    index_free(&ix);
    hg_ckpt_meta_free(&meta);
    return rc;
}

void hg_ckpt_meta_free(struct hg_ckpt_meta *meta)
{
    free((char *)meta->options);
    free((char *)meta->metric_name);
    free((char *)meta->strategy);
    meta->options = meta->metric_name = meta->strategy = NULL;
    free((int64_t *)meta->iter.segs);
    meta->iter.segs = NULL;
    meta->iter.nsegs = 0;
}
