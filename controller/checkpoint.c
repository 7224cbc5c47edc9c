/* checkpoint.c - exact checkpoints in HDF5 (h5dump/h5py can read them).
 *
 * Layout (version 2):
 *   /                attributes: format "hgtrain-checkpoint", version 2,
 *                    epoch, num_updates, iter_epoch, iter_step, seed,
 *                    best_metric, metric_name, maximize, train_wall, wall
 *                    (meters), options (string), meta_crc32 (u32: CRC-32
 *                    of the attributes above, see meta_crc())
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

#define CKPT_FORMAT "hgtrain-checkpoint"
#define CKPT_VERSION 2

/* CRC-32 (IEEE 802.3, zlib's), one table, built on first use. Threads:
 * only rank 0's main thread saves and loads. */
static uint32_t crc_table[256];

static uint32_t crc32_update(uint32_t crc, const void *buf, size_t n)
{
    if (crc_table[1] == 0)
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++)
                c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            crc_table[i] = c;
        }
    const unsigned char *p = buf;
    crc = ~crc;
    while (n--)
        crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

/* CRC-32 of n floats as their little-endian bytes (the file's order) */
static uint32_t crc_f32(const float *x, size_t n)
{
    uint32_t crc = 0;
    unsigned char b[1024];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t v;
        memcpy(&v, &x[i], 4);
        b[k++] = (unsigned char)v, b[k++] = (unsigned char)(v >> 8);
        b[k++] = (unsigned char)(v >> 16), b[k++] = (unsigned char)(v >> 24);
        if (k == sizeof(b)) {
            crc = crc32_update(crc, b, k);
            k = 0;
        }
    }
    return crc32_update(crc, b, k);
}

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
    uint32_t crc = crc32_update(0, buf, n < (int)sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
    return m->options ? crc32_update(crc, m->options, strlen(m->options)) : crc;
}

/* CRC-32 of n int64 words as their little-endian bytes (the file's order) */
static uint32_t crc_i64(const int64_t *w, int64_t n)
{
    uint32_t crc = 0;
    for (int64_t i = 0; i < n; i++) {
        unsigned char b[8];
        for (int k = 0; k < 8; k++)
            b[k] = (unsigned char)((uint64_t)w[i] >> (8 * k));
        crc = crc32_update(crc, b, 8);
    }
    return crc;
}

/* A scalar attribute stored as file_t from memory of type mem_t. */
static int attr_write(hid_t loc, const char *name, hid_t file_t, hid_t mem_t,
                      const void *v)
{
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(loc, name, file_t, sp, H5P_DEFAULT, H5P_DEFAULT);
    herr_t rc = a < 0 ? -1 : H5Awrite(a, mem_t, v);
    if (a >= 0)
        H5Aclose(a);
    H5Sclose(sp);
    return rc < 0 ? -1 : 0;
}

static int attr_i64(hid_t loc, const char *name, int64_t v)
{
    return attr_write(loc, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &v);
}

static int attr_f64(hid_t loc, const char *name, double v)
{
    return attr_write(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &v);
}

static int attr_str(hid_t loc, const char *name, const char *v)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, strlen(v) + 1);
    int rc = attr_write(loc, name, t, t, v);
    H5Tclose(t);
    return rc;
}

/* A scalar attribute read as mem_t; -1 if absent or unreadable. */
static int attr_read(hid_t loc, const char *name, hid_t mem_t, void *v)
{
    if (H5Aexists(loc, name) <= 0)
        return -1;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    herr_t rc = a < 0 ? -1 : H5Aread(a, mem_t, v);
    if (a >= 0)
        H5Aclose(a);
    return rc < 0 ? -1 : 0;
}

static int read_i64(hid_t loc, const char *name, int64_t *v)
{
    return attr_read(loc, name, H5T_NATIVE_INT64, v);
}

static int read_f64(hid_t loc, const char *name, double *v)
{
    return attr_read(loc, name, H5T_NATIVE_DOUBLE, v);
}

/* malloc'ed string attribute, NULL if absent or not a string */
static char *read_str(hid_t loc, const char *name)
{
    if (H5Aexists(loc, name) <= 0)
        return NULL;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a < 0)
        return NULL;
    hid_t t = H5Aget_type(a);
    char *s = NULL;
    if (H5Tget_class(t) == H5T_STRING && !H5Tis_variable_str(t)) {
        size_t n = H5Tget_size(t);
        s = calloc(n + 1, 1);
        if (s && H5Aread(a, t, s) < 0) {
            free(s);
            s = NULL;
        }
    }
    H5Tclose(t);
    H5Aclose(a);
    return s;
}

static int attr_u32(hid_t loc, const char *name, uint32_t v)
{
    return attr_write(loc, name, H5T_STD_U32LE, H5T_NATIVE_UINT32, &v);
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
                    attr_read(d, "crc32", H5T_NATIVE_UINT32, &crc) != 0 ||
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
    if (rc >= 0 && attr_u32(ds, "crc32", crc_f32(data, n)) != 0)
        rc = -1;
    if (ds >= 0)
        H5Dclose(ds);
    H5Sclose(sp);
    return rc < 0 ? -1 : 0;
}

/* Writes every tensor of kind from g into group name of f. */
static int write_kind(hid_t f, const char *group, const struct hg_graph *g,
                      struct hg_exec *ex, enum hg_tkind kind, const char *path,
                      char *err, size_t errlen)
{
    hid_t grp = H5Gcreate2(f, group, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (grp < 0)
        return hg_kerr(err, errlen, "%s: cannot create group %s", path, group);
    int rc = 0;
    for (int t = 0; t < hg_graph_n_tensors(g) && rc == 0; t++) {
        const struct hg_tensor_info *ti = hg_graph_tensor(g, t);
        if (ti->kind != kind)
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

/* The checkpoint as an HDF5 file image in memory (malloc'ed, *len bytes),
 * or NULL with err set. */
static void *build_image(const char *path, const struct hg_graph *g,
                         struct hg_exec *ex, const struct hg_ckpt_meta *meta,
                         size_t *len, char *err, size_t errlen)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    hid_t f = -1;
    /* the image grows by this much: the tensors' size and room for the
     * metadata, so that it is allocated once */
    size_t np = 0, ns = 0;
    hg_exec_param_block(ex, &np);
    hg_exec_state_block(ex, &ns);
    size_t grow = (np + ns) * sizeof(float) + ((size_t)1 << 20);
    /* core driver without a backing store: HDF5 never touches the disk */
    if (fapl >= 0 && H5Pset_fapl_core(fapl, grow, 0) >= 0 &&
        H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST) >= 0)
        f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (fapl >= 0)
        H5Pclose(fapl);
    if (f < 0) {
        hg_kerr(err, errlen, "%s: cannot create the HDF5 image in memory", path);
        return NULL;
    }
    int rc = 0;
    if (attr_str(f, "format", CKPT_FORMAT) || attr_i64(f, "version", CKPT_VERSION) ||
        attr_i64(f, "epoch", meta->epoch) ||
        attr_i64(f, "num_updates", meta->num_updates) ||
        attr_i64(f, "iter_epoch", (int64_t)meta->iter.epoch) ||
        attr_i64(f, "iter_step", meta->iter.step) ||
        attr_i64(f, "seed", (int64_t)meta->seed) ||
        attr_f64(f, "best_metric", meta->best_metric) ||
        attr_str(f, "metric_name", meta->metric_name ? meta->metric_name : "") ||
        attr_i64(f, "maximize", meta->maximize) ||
        attr_f64(f, "train_wall", meta->train_wall) ||
        attr_f64(f, "wall", meta->wall) ||
        attr_str(f, "options", meta->options ? meta->options : "") ||
        attr_u32(f, "meta_crc32", meta_crc(meta)) || write_segs(f, &meta->iter))
        rc = hg_kerr(err, errlen, "%s: cannot write attributes", path);
    if (rc == 0)
        rc = write_kind(f, "params", g, ex, HG_T_PARAM, path, err, errlen);
    if (rc == 0)
        rc = write_kind(f, "optimizer", g, ex, HG_T_STATE, path, err, errlen);
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

int hg_ckpt_save(const char *path, const struct hg_graph *g,
                 struct hg_exec *ex, const struct hg_ckpt_meta *meta,
                 char *err, size_t errlen)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
        return hg_kerr(err, errlen, "%s: path too long", path);
    /* a GPU plan: the host mirror must hold the device's values */
    if (hg_exec_download(ex, HG_R_PARAMS | HG_R_STATE, err, errlen) != 0)
        return -1;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    size_t len = 0;
    char *img = build_image(path, g, ex, meta, &len, err, errlen);
    if (!img)
        return -1;
    /* 0600 from the start: nobody else reads our parameters */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        int e = errno;
        free(img);
        return hg_kerr(err, errlen, "%s: cannot create: %s", tmp, strerror(e));
    }
    int rc = 0;
    if (write_all(fd, img, len) != 0)
        rc = hg_kerr(err, errlen, "%s: cannot write %zu bytes: %s", tmp, len,
                     strerror(errno));
    else if (fsync(fd) != 0)
        rc = hg_kerr(err, errlen, "%s: fsync: %s", tmp, strerror(errno));
    free(img);
    if (close(fd) != 0 && rc == 0) /* NFS reports a full disk here */
        rc = hg_kerr(err, errlen, "%s: close: %s", tmp, strerror(errno));
    if (rc == 0 && rename(tmp, path) != 0)
        rc = hg_kerr(err, errlen, "%s: cannot rename to %s: %s", tmp, path,
                     strerror(errno));
    if (rc != 0) {
        unlink(tmp);
        return -1;
    }
    /* make the rename itself durable */
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    else
        snprintf(dir, sizeof(dir), ".");
    fsync_path(dir[0] ? dir : "/", 1);
    return 0;
}

static void shape_str(const hsize_t *d, int nd, char *buf, size_t len)
{
    struct hg_shape s = {.ndim = nd};
    for (int i = 0; i < nd && i < HG_MAX_DIMS; i++)
        s.dim[i] = (int64_t)d[i];
    hg_shape_str(&s, buf, len);
}

/* verify: version >= 2, every dataset's crc32 must match its data */
static int read_kind(hid_t f, const char *group, const struct hg_graph *g,
                     struct hg_exec *ex, enum hg_tkind kind, int verify,
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
            else if (verify && attr_read(ds, "crc32", H5T_NATIVE_UINT32, &want_crc) != 0)
                rc = hg_kerr(err, errlen, "%s: /%s/%s: no checksum (corrupt?)",
                             path, group, ti->name);
            else if (verify && crc_f32(hg_exec_data(ex, t), n) != want_crc)
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
    char *fmt = read_str(f, "format");
    int64_t version = 0, iter_epoch = 0, seed = 0, maximize = 0;
    uint32_t crc = 0;
    if (!fmt || strcmp(fmt, CKPT_FORMAT) != 0)
        rc = hg_kerr(err, errlen, "%s: not an hgtrain checkpoint (format '%s')",
                     path, fmt ? fmt : "none");
    else if (read_i64(f, "version", &version) != 0 || version < 1 ||
             version > CKPT_VERSION)
        rc = hg_kerr(err, errlen, "%s: checkpoint version %lld, this hgtrain reads "
                     "1 to %d", path, (long long)version, CKPT_VERSION);
    else if (read_i64(f, "epoch", &meta->epoch) || read_i64(f, "num_updates", &meta->num_updates) ||
             read_i64(f, "iter_epoch", &iter_epoch) || read_i64(f, "iter_step", &meta->iter.step) ||
             read_i64(f, "seed", &seed) || read_f64(f, "best_metric", &meta->best_metric) ||
             read_f64(f, "train_wall", &meta->train_wall) || read_f64(f, "wall", &meta->wall))
        rc = hg_kerr(err, errlen, "%s: missing or corrupt attributes", path);
    free(fmt);
    meta->iter.epoch = (uint64_t)iter_epoch;
    meta->seed = (uint64_t)seed;
    meta->options = read_str(f, "options");
    meta->checksummed = version >= 2;
    if (rc == 0 && read_segs(f, &meta->iter) != 0)
        rc = hg_kerr(err, errlen, "%s: corrupt dataset iter_segs", path);
    if (rc == 0 && version >= 2) {
        meta->metric_name = read_str(f, "metric_name");
        if (!meta->metric_name || !meta->options ||
            read_i64(f, "maximize", &maximize) != 0 ||
            attr_read(f, "meta_crc32", H5T_NATIVE_UINT32, &crc) != 0)
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

int hg_ckpt_read_meta(const char *path, struct hg_ckpt_meta *meta, char *err,
                      size_t errlen)
{
    hid_t f = open_meta(path, meta, err, errlen);
    if (f < 0)
        return -1;
    H5Fclose(f);
    return 0;
}

int hg_ckpt_load(const char *path, const struct hg_graph *g,
                 struct hg_exec *ex, int reset_optimizer,
                 struct hg_ckpt_meta *meta, char *err, size_t errlen)
{
    hid_t f = open_meta(path, meta, err, errlen);
    if (f < 0)
        return -1;
    int v = meta->checksummed;
    int rc = read_kind(f, "params", g, ex, HG_T_PARAM, v, path, err, errlen);
    if (rc == 0 && !reset_optimizer)
        rc = read_kind(f, "optimizer", g, ex, HG_T_STATE, v, path, err, errlen);
    if (H5Fclose(f) < 0 && rc == 0)
        rc = hg_kerr(err, errlen, "%s: corrupt (HDF5 close failed)", path);
    if (rc == 0 && ex) /* a GPU plan computes with the device's copy */
        rc = hg_exec_upload(ex, HG_R_PARAMS | HG_R_STATE, err, errlen);
    if (rc != 0)
        hg_ckpt_meta_free(meta);
    return rc;
}

void hg_ckpt_meta_free(struct hg_ckpt_meta *meta)
{
    free((char *)meta->options);
    free((char *)meta->metric_name);
    meta->options = meta->metric_name = NULL;
    free((int64_t *)meta->iter.segs);
    meta->iter.segs = NULL;
    meta->iter.nsegs = 0;
}
