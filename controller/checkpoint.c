/* checkpoint.c - exact checkpoints in HDF5 (h5dump/h5py can read them).
 *
 * Layout:
 *   /                attributes: format "hgtrain-checkpoint", version 1,
 *                    epoch, num_updates, iter_epoch, iter_step, seed,
 *                    best_metric, train_wall, wall (meters), options (string)
 *   /params/<name>   f32, the parameter's shape (torch's state_dict names)
 *   /optimizer/<name>  f32, optimizer state (<param>.exp_avg, ...)
 * Written to <path>.tmp (mode 0600), flushed, fsynced, renamed over
 * <path>, directory fsynced: a crash leaves the old file or the new one.
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
#define CKPT_VERSION 1

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

static int write_tensor(hid_t grp, const char *name, const struct hg_shape *s,
                        const float *data)
{
    hsize_t d[HG_MAX_DIMS];
    for (int i = 0; i < s->ndim; i++)
        d[i] = (hsize_t)s->dim[i];
    hid_t sp = H5Screate_simple(s->ndim, d, NULL);
    hid_t ds = H5Dcreate2(grp, name, H5T_IEEE_F32LE, sp, H5P_DEFAULT,
                          H5P_DEFAULT, H5P_DEFAULT);
    herr_t rc = ds < 0 ? -1 : H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL,
                                       H5P_DEFAULT, data);
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
            rc = hg_kerr(err, errlen, "%s: cannot write %s/%s (disk full?)",
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
    /* create it 0600 first: H5Fcreate would use 0666 & umask */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return hg_kerr(err, errlen, "%s: cannot create: %s", tmp, strerror(errno));
    close(fd);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0) {
        unlink(tmp);
        return hg_kerr(err, errlen, "%s: cannot create HDF5 file", tmp);
    }
    int rc = 0;
    if (attr_str(f, "format", CKPT_FORMAT) || attr_i64(f, "version", CKPT_VERSION) ||
        attr_i64(f, "epoch", meta->epoch) ||
        attr_i64(f, "num_updates", meta->num_updates) ||
        attr_i64(f, "iter_epoch", (int64_t)meta->iter.epoch) ||
        attr_i64(f, "iter_step", meta->iter.step) ||
        attr_i64(f, "seed", (int64_t)meta->seed) ||
        attr_f64(f, "best_metric", meta->best_metric) ||
        attr_f64(f, "train_wall", meta->train_wall) ||
        attr_f64(f, "wall", meta->wall) ||
        attr_str(f, "options", meta->options ? meta->options : ""))
        rc = hg_kerr(err, errlen, "%s: cannot write attributes (disk full?)", tmp);
    if (rc == 0)
        rc = write_kind(f, "params", g, ex, HG_T_PARAM, tmp, err, errlen);
    if (rc == 0)
        rc = write_kind(f, "optimizer", g, ex, HG_T_STATE, tmp, err, errlen);
    if (H5Fclose(f) < 0 && rc == 0)
        rc = hg_kerr(err, errlen, "%s: cannot flush (disk full?)", tmp);
    if (rc == 0 && fsync_path(tmp, 0) != 0)
        rc = hg_kerr(err, errlen, "%s: fsync: %s", tmp, strerror(errno));
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

static int read_kind(hid_t f, const char *group, const struct hg_graph *g,
                     struct hg_exec *ex, enum hg_tkind kind, const char *path,
                     char *err, size_t errlen)
{
    if (H5Lexists(f, group, H5P_DEFAULT) <= 0)
        return hg_kerr(err, errlen, "%s: no group /%s", path, group);
    hid_t grp = H5Gopen2(f, group, H5P_DEFAULT);
    if (grp < 0)
        return hg_kerr(err, errlen, "%s: cannot open /%s", path, group);
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
            for (int i = 0; same && i < nd; i++)
                same = (int64_t)d[i] == ti->shape.dim[i];
            shape_str(d, nd, got, sizeof(got));
            if (!same)
                rc = hg_kerr(err, errlen,
                             "%s: /%s/%s has shape %s, the model has %s", path,
                             group, ti->name, got, want);
            else if (H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                             hg_exec_data(ex, t)) < 0)
                rc = hg_kerr(err, errlen, "%s: /%s/%s: read failed (corrupt?)",
                             path, group, ti->name);
        }
        if (sp >= 0)
            H5Sclose(sp);
        if (ds >= 0)
            H5Dclose(ds);
    }
    H5Gclose(grp);
    return rc;
}

int hg_ckpt_load(const char *path, const struct hg_graph *g,
                 struct hg_exec *ex, int reset_optimizer,
                 struct hg_ckpt_meta *meta, char *err, size_t errlen)
{
    memset(meta, 0, sizeof(*meta));
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (access(path, R_OK) != 0)
        return hg_kerr(err, errlen, "%s: %s", path, strerror(errno));
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        return hg_kerr(err, errlen, "%s: not an HDF5 file (corrupt or truncated?)",
                       path);
    int rc = 0;
    char *fmt = read_str(f, "format");
    int64_t version = 0, iter_epoch = 0, seed = 0;
    if (!fmt || strcmp(fmt, CKPT_FORMAT) != 0)
        rc = hg_kerr(err, errlen, "%s: not an hgtrain checkpoint (format '%s')",
                     path, fmt ? fmt : "none");
    else if (read_i64(f, "version", &version) != 0 || version != CKPT_VERSION)
        rc = hg_kerr(err, errlen, "%s: checkpoint version %lld, this hgtrain reads %d",
                     path, (long long)version, CKPT_VERSION);
    else if (read_i64(f, "epoch", &meta->epoch) || read_i64(f, "num_updates", &meta->num_updates) ||
             read_i64(f, "iter_epoch", &iter_epoch) || read_i64(f, "iter_step", &meta->iter.step) ||
             read_i64(f, "seed", &seed) || read_f64(f, "best_metric", &meta->best_metric) ||
             read_f64(f, "train_wall", &meta->train_wall) || read_f64(f, "wall", &meta->wall))
        rc = hg_kerr(err, errlen, "%s: missing or corrupt attributes", path);
    free(fmt);
    meta->iter.epoch = (uint64_t)iter_epoch;
    meta->seed = (uint64_t)seed;
    if (rc == 0)
        rc = read_kind(f, "params", g, ex, HG_T_PARAM, path, err, errlen);
    if (rc == 0 && !reset_optimizer)
        rc = read_kind(f, "optimizer", g, ex, HG_T_STATE, path, err, errlen);
    if (rc == 0)
        meta->options = read_str(f, "options");
    H5Fclose(f);
    if (rc == 0) /* a GPU plan computes with the device's copy */
        rc = hg_exec_upload(ex, HG_R_PARAMS | HG_R_STATE, err, errlen);
    return rc;
}

void hg_ckpt_meta_free(struct hg_ckpt_meta *meta)
{
    free((char *)meta->options);
    meta->options = NULL;
}
