/* shard_write.c - writes one HDF5 shard (layout: docs/data.md).
 *
 * Samples are buffered per dataset (about 1 MiB each) and appended to
 * chunked, extendible datasets one buffer at a time. The file is written
 * as path.tmp (mode 0600); finish() closes, fsyncs, chmods 0644 and
 * renames it, so a shard exists complete or not at all. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>

#include "data/data-impl.h"
#include "data/hg_data.h"

#define HG_SHARD_BUF_BYTES ((size_t)1 << 20)
#define HG_SHARD_CHUNK_ELEMS 65536

/* One extendible dataset and its append buffer. */
struct wdset {
    hid_t id;
    hid_t mem_type;
    const char *what;      /* dataset path inside the file, for messages */
    char what_buf[160];
    size_t esz;            /* bytes per element */
    size_t row_elems;      /* elements per row (1 for tokens/offsets) */
    int ndim;              /* rank on disk */
    hsize_t item[HG_MAX_DIMS]; /* per-row dims (dims 1..ndim-1) */
    int64_t rows_on_disk;
    unsigned char *buf;    /* [cap_rows * row_elems * esz] */
    int64_t cap_rows;
    int64_t nbuf;          /* rows buffered */
};

struct wfield {
    enum hg_field_kind kind;
    enum hg_dtype dtype;
    struct wdset data;     /* ARRAY: <name>; SEQ: <name>/tokens */
    struct wdset offsets;  /* SEQ: <name>/offsets [N+1] i64 */
    int64_t total;         /* SEQ: tokens so far */
};

struct hg_shard_writer {
    char *path;
    char *tmp;             /* path + ".tmp" */
    hid_t file;
    int nfields;
    struct wfield *f;      /* [nfields] */
    int64_t n;             /* samples added */
    int failed;
};

static int dset_create(struct wdset *d, hid_t loc, const char *name,
                       enum hg_dtype dt, int item_rank, const int64_t *item,
                       int gzip, const char *path, char *err, size_t errlen)
{
    d->mem_type = hg__h5_mem_type(dt);
    d->esz = hg_dtype_size(dt);
    d->ndim = 1 + item_rank;
    d->row_elems = 1;
    for (int i = 0; i < item_rank; i++) {
        d->item[i] = (hsize_t)item[i];
        d->row_elems *= (size_t)item[i];
    }
    hsize_t dims[HG_MAX_DIMS] = {0}, maxd[HG_MAX_DIMS], chunk[HG_MAX_DIMS];
    maxd[0] = H5S_UNLIMITED;
    size_t rows = d->row_elems ? HG_SHARD_CHUNK_ELEMS / d->row_elems : 1;
    chunk[0] = rows ? rows : 1;
    for (int i = 0; i < item_rank; i++) {
        dims[1 + i] = maxd[1 + i] = (hsize_t)item[i];
        chunk[1 + i] = item[i] ? (hsize_t)item[i] : 1;
    }
    size_t row_bytes = d->row_elems * d->esz;
    d->cap_rows = row_bytes ? (int64_t)(HG_SHARD_BUF_BYTES / row_bytes) : 1;
    if (d->cap_rows < 1)
        d->cap_rows = 1;
    d->buf = malloc((size_t)d->cap_rows * (row_bytes ? row_bytes : 1));
    if (!d->buf)
        return hg_kerr(err, errlen, "%s: out of memory", path);
    hid_t space = H5Screate_simple(d->ndim, dims, maxd);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    int rc = -1;
    if (space >= 0 && dcpl >= 0 && H5Pset_chunk(dcpl, d->ndim, chunk) >= 0 &&
        H5Pset_fletcher32(dcpl) >= 0 && (!gzip || H5Pset_deflate(dcpl, 1) >= 0)) {
        d->id = H5Dcreate2(loc, name, hg__h5_file_type(dt), space, H5P_DEFAULT,
                           dcpl, H5P_DEFAULT);
        rc = d->id >= 0 ? 0 : -1;
    }
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (space >= 0)
        H5Sclose(space);
    if (rc)
        return hg_kerr(err, errlen, "%s: cannot create dataset '%s'", path,
                       d->what);
    return 0;
}

/* Appends the buffered rows to the dataset. */
static int dset_flush(struct wdset *d, const char *path, char *err,
                      size_t errlen)
{
    if (d->nbuf == 0)
        return 0;
    hsize_t dims[HG_MAX_DIMS], start[HG_MAX_DIMS] = {0}, count[HG_MAX_DIMS];
    dims[0] = (hsize_t)(d->rows_on_disk + d->nbuf);
    start[0] = (hsize_t)d->rows_on_disk;
    count[0] = (hsize_t)d->nbuf;
    for (int i = 1; i < d->ndim; i++) {
        dims[i] = count[i] = d->item[i - 1];
    }
    int rc = -1;
    hid_t fspace = -1, mspace = -1;
    if (H5Dset_extent(d->id, dims) >= 0 &&
        (fspace = H5Dget_space(d->id)) >= 0 &&
        H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
        (mspace = H5Screate_simple(d->ndim, count, NULL)) >= 0 &&
        H5Dwrite(d->id, d->mem_type, mspace, fspace, H5P_DEFAULT, d->buf) >= 0)
        rc = 0;
    if (mspace >= 0)
        H5Sclose(mspace);
    if (fspace >= 0)
        H5Sclose(fspace);
    if (rc)
        return hg_kerr(err, errlen, "%s: cannot write dataset '%s' (disk full?)",
                       path, d->what);
    d->rows_on_disk += d->nbuf;
    d->nbuf = 0;
    return 0;
}

/* Appends n rows from src (buffered; flushes as the buffer fills). */
static int dset_append(struct wdset *d, const void *src, int64_t n,
                       const char *path, char *err, size_t errlen)
{
    const unsigned char *s = src;
    size_t row_bytes = d->row_elems * d->esz;
    while (n > 0) {
        int64_t k = d->cap_rows - d->nbuf;
        if (k > n)
            k = n;
        memcpy(d->buf + (size_t)d->nbuf * row_bytes, s, (size_t)k * row_bytes);
        d->nbuf += k;
        s += (size_t)k * row_bytes;
        n -= k;
        if (d->nbuf == d->cap_rows && dset_flush(d, path, err, errlen))
            return -1;
    }
    return 0;
}

static void dset_close(struct wdset *d)
{
    if (d->id >= 0)
        H5Dclose(d->id);
    d->id = -1;
    free(d->buf);
    d->buf = NULL;
}

/* Closes everything HDF5 holds; returns -1 if the final close failed. */
static int writer_close_file(struct hg_shard_writer *w)
{
    for (int i = 0; w->f && i < w->nfields; i++) {
        dset_close(&w->f[i].data);
        dset_close(&w->f[i].offsets);
    }
    int rc = 0;
    if (w->file >= 0)
        rc = H5Fclose(w->file) < 0 ? -1 : 0;
    w->file = -1;
    return rc;
}

static void writer_free(struct hg_shard_writer *w)
{
    writer_close_file(w);
    free(w->f);
    free(w->path);
    free(w->tmp);
    free(w);
}

/* An error after open: the temporary file goes, the writer is dead. */
static void writer_fail(struct hg_shard_writer *w)
{
    if (w->failed)
        return;
    w->failed = 1;
    writer_close_file(w);
    unlink(w->tmp);
}

int hg_shard_writer_open(struct hg_shard_writer **out, const char *path,
                         const struct hg_field *fields, int nfields,
                         const struct hg_shape *item_shape, char *err,
                         size_t errlen)
{
    HG_CHECK(out && path && fields && nfields > 0 && nfields <= 8);
    *out = NULL;
    hg__h5_quiet();
    for (int i = 0; i < nfields; i++) {
        if (hg__h5_file_type(fields[i].dtype) < 0)
            return hg_kerr(err, errlen, "%s: field '%s': dtype %s cannot be stored",
                           path, fields[i].name, hg_dtype_name(fields[i].dtype));
        HG_CHECK(fields[i].kind == HG_FIELD_SEQ || item_shape);
        HG_CHECK(fields[i].kind == HG_FIELD_SEQ ||
                 (item_shape[i].ndim >= 0 && item_shape[i].ndim < HG_MAX_DIMS));
    }
    struct hg_shard_writer *w = calloc(1, sizeof(*w));
    if (!w)
        return hg_kerr(err, errlen, "%s: out of memory", path);
    w->file = -1;
    w->nfields = nfields;
    w->path = strdup(path);
    w->tmp = malloc(strlen(path) + 5);
    w->f = calloc((size_t)nfields, sizeof(*w->f));
    if (!w->path || !w->tmp || !w->f) {
        writer_free(w);
        return hg_kerr(err, errlen, "%s: out of memory", path);
    }
    sprintf(w->tmp, "%s.tmp", path);
    for (int i = 0; i < nfields; i++)
        w->f[i].data.id = w->f[i].offsets.id = -1;

    /* Create the file 0600 ourselves: H5Fcreate's truncation keeps the mode
     * (no process-wide umask games, no window where it is world-readable). */
    int fd = open(w->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || fchmod(fd, 0600) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        writer_free(w);
        return hg_kerr(err, errlen, "%s: cannot create %s.tmp: %s", path, path,
                       strerror(e));
    }
    close(fd);
    /* libver >= 1.8: checksummed metadata, so corruption is detected. */
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0 && H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST) >= 0)
        w->file = H5Fcreate(w->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (fapl >= 0)
        H5Pclose(fapl);
    if (w->file < 0) {
        unlink(w->tmp);
        writer_free(w);
        return hg_kerr(err, errlen, "%s: cannot create HDF5 file %s.tmp", path,
                       path);
    }

    int rc = 0;
    /* root attribute hgtrain_format = 1 */
    hid_t as = H5Screate(H5S_SCALAR);
    hid_t at = as >= 0 ? H5Acreate2(w->file, "hgtrain_format", H5T_STD_I32LE, as,
                                    H5P_DEFAULT, H5P_DEFAULT) : -1;
    int one = 1;
    if (at < 0 || H5Awrite(at, H5T_NATIVE_INT, &one) < 0)
        rc = hg_kerr(err, errlen, "%s: cannot write attribute hgtrain_format", path);
    if (at >= 0)
        H5Aclose(at);
    if (as >= 0)
        H5Sclose(as);

    for (int i = 0; rc == 0 && i < nfields; i++) {
        const struct hg_field *fd_ = &fields[i];
        struct wfield *f = &w->f[i];
        f->kind = fd_->kind;
        f->dtype = fd_->dtype;
        if (fd_->kind == HG_FIELD_ARRAY) {
            snprintf(f->data.what_buf, sizeof(f->data.what_buf), "%s", fd_->name);
            f->data.what = f->data.what_buf;
            rc = dset_create(&f->data, w->file, fd_->name, fd_->dtype,
                             item_shape[i].ndim, item_shape[i].dim,
                             fd_->dtype == HG_U8, path, err, errlen);
            continue;
        }
        snprintf(f->data.what_buf, sizeof(f->data.what_buf), "%s/tokens", fd_->name);
        f->data.what = f->data.what_buf;
        snprintf(f->offsets.what_buf, sizeof(f->offsets.what_buf), "%s/offsets",
                 fd_->name);
        f->offsets.what = f->offsets.what_buf;
        hid_t g = H5Gcreate2(w->file, fd_->name, H5P_DEFAULT, H5P_DEFAULT,
                             H5P_DEFAULT);
        if (g < 0) {
            rc = hg_kerr(err, errlen, "%s: cannot create group '%s'", path, fd_->name);
            break;
        }
        rc = dset_create(&f->data, g, "tokens", fd_->dtype, 0, NULL, 0, path, err,
                         errlen);
        if (rc == 0)
            rc = dset_create(&f->offsets, g, "offsets", HG_I64, 0, NULL, 0, path,
                             err, errlen);
        H5Gclose(g);
        int64_t zero = 0;
        if (rc == 0)
            rc = dset_append(&f->offsets, &zero, 1, path, err, errlen);
    }
    if (rc) {
        writer_fail(w);
        writer_free(w);
        return -1;
    }
    *out = w;
    return 0;
}

int hg_shard_writer_add(struct hg_shard_writer *w, const void *const *value,
                        const int64_t *count, char *err, size_t errlen)
{
    if (w->failed)
        return hg_kerr(err, errlen, "%s: writer failed earlier", w->path);
    for (int i = 0; i < w->nfields; i++) {
        struct wfield *f = &w->f[i];
        int rc;
        if (f->kind == HG_FIELD_ARRAY) {
            rc = dset_append(&f->data, value[i], 1, w->path, err, errlen);
        } else {
            HG_CHECK(count && count[i] >= 0);
            rc = dset_append(&f->data, value[i], count[i], w->path, err, errlen);
            f->total += count[i];
            if (rc == 0)
                rc = dset_append(&f->offsets, &f->total, 1, w->path, err, errlen);
        }
        if (rc) {
            writer_fail(w);
            return -1;
        }
    }
    w->n++;
    return 0;
}

/* fsync of a file or directory by path. */
static int sync_path(const char *p, int dir)
{
    int fd = open(p, (dir ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

int hg_shard_writer_set_info(struct hg_shard_writer *w, int64_t index, int64_t shards,
                             int64_t samples, char *err, size_t errlen)
{
    HG_CHECK(index >= 0 && index < shards && samples >= shards);
    const char *const name[3] = {"set_index", "set_shards", "set_samples"};
    const int64_t v[3] = {index, shards, samples};
    int rc = 0;
    for (int k = 0; k < 3 && rc == 0; k++) {
        hid_t as = H5Screate(H5S_SCALAR);
        hid_t at = as >= 0 ? H5Acreate2(w->file, name[k], H5T_STD_I64LE, as, H5P_DEFAULT,
                                        H5P_DEFAULT) : -1;
        if (at < 0 || H5Awrite(at, H5T_NATIVE_INT64, &v[k]) < 0)
            rc = hg_kerr(err, errlen, "%s: cannot write attribute %s", w->path, name[k]);
        if (at >= 0)
            H5Aclose(at);
        if (as >= 0)
            H5Sclose(as);
    }
    if (rc)
        w->failed = 1;
    return rc;
}

int hg_shard_writer_finish(struct hg_shard_writer *w, char *err, size_t errlen)
{
    int rc = 0;
    if (w->failed)
        rc = hg_kerr(err, errlen, "%s: writer failed earlier", w->path);
    for (int i = 0; rc == 0 && i < w->nfields; i++) {
        rc = dset_flush(&w->f[i].data, w->path, err, errlen);
        if (rc == 0)
            rc = dset_flush(&w->f[i].offsets, w->path, err, errlen);
    }
    if (rc == 0 && H5Fflush(w->file, H5F_SCOPE_GLOBAL) < 0)
        rc = hg_kerr(err, errlen, "%s: cannot flush (disk full?)", w->path);
    if (rc == 0 && writer_close_file(w) != 0)
        rc = hg_kerr(err, errlen, "%s: cannot close (disk full?)", w->path);
    if (rc == 0 && sync_path(w->tmp, 0) != 0)
        rc = hg_kerr(err, errlen, "%s: fsync: %s", w->path, strerror(errno));
    if (rc == 0 && chmod(w->tmp, 0644) != 0)
        rc = hg_kerr(err, errlen, "%s: chmod: %s", w->path, strerror(errno));
    if (rc == 0 && rename(w->tmp, w->path) != 0)
        rc = hg_kerr(err, errlen, "%s: rename from .tmp: %s", w->path,
                     strerror(errno));
    if (rc == 0) {
        /* the rename is durable once the directory is synced */
        char *dir = strdup(w->path);
        char *slash = dir ? strrchr(dir, '/') : NULL;
        if (slash == dir)
            slash[1] = '\0';
        else if (slash)
            *slash = '\0';
        if (dir && sync_path(slash ? dir : ".", 1) != 0)
            rc = hg_kerr(err, errlen, "%s: fsync of the directory: %s", w->path,
                         strerror(errno));
        free(dir);
        if (rc)
            unlink(w->path);
    }
    if (rc) {
        w->failed = 0;
        writer_fail(w);
    }
    writer_free(w);
    return rc;
}

void hg_shard_writer_abort(struct hg_shard_writer *w)
{
    if (!w)
        return;
    writer_fail(w);
    writer_free(w);
}
