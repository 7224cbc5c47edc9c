/* policy_file.c - the learned policy's file: HDF5 in the checkpoint's
 * layout (attributes at the root, /params/<name> and /optimizer/<name> f32
 * with a crc32 attribute), docs/planner.md, "Learned policy".
 *
 * Compiled into hgplan and test_policy, not into the library: it uses the
 * data room's HDF5 attribute and CRC helpers (data/hg_h5.h), and the
 * planner library stays off data/ (planner -> graph -> kernels), as
 * prof_links.c keeps it off comm/. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <hdf5.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "data/hg_h5.h"
#include "planner/hg_planner.h"
#include "planner/policy-file.h"
#include "planner/policy-impl.h"

#define POLICY_FORMAT "hgtrain-policy"
#define POLICY_VERSION 1

/* The format attribute, or "" (absent, not a short string). */
static void read_format(hid_t f, char *buf, size_t n)
{
    buf[0] = 0;
    if (H5Aexists(f, "format") <= 0)
        return;
    hid_t a = H5Aopen(f, "format", H5P_DEFAULT);
    hid_t t = a < 0 ? -1 : H5Aget_type(a);
    if (t >= 0 && H5Tget_class(t) == H5T_STRING && !H5Tis_variable_str(t) &&
        H5Tget_size(t) < n && H5Aread(a, t, buf) < 0)
        buf[0] = 0;
    buf[n - 1] = 0;
    if (t >= 0)
        H5Tclose(t);
    if (a >= 0)
        H5Aclose(a);
}

/* Every tensor of kind of the template into group name of f: no times in
 * the headers, so that the same policy is the same bytes. */
static int write_kind(const struct hg_policy *p, hid_t f, const char *group,
                      enum hg_tkind kind)
{
    hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_obj_track_times(gcpl, 0);
    H5Pset_obj_track_times(dcpl, 0);
    hid_t grp = H5Gcreate2(f, group, H5P_DEFAULT, gcpl, H5P_DEFAULT);
    int rc = grp < 0 ? -1 : 0;
    const struct hg_graph *g = p->tmpl.g;
    for (int t = 0; t < hg_graph_n_tensors(g) && rc == 0; t++) {
        const struct hg_tensor_info *ti = hg_graph_tensor(g, t);
        if (ti->kind != kind)
            continue;
        hsize_t dim[HG_MAX_DIMS];
        for (int i = 0; i < ti->shape.ndim; i++)
            dim[i] = (hsize_t)ti->shape.dim[i];
        const float *x = hg__pol_master(p, t);
        hid_t sp = H5Screate_simple(ti->shape.ndim, dim, NULL);
        hid_t ds = H5Dcreate2(grp, ti->name, H5T_IEEE_F32LE, sp, H5P_DEFAULT, dcpl,
                              H5P_DEFAULT);
        if (ds < 0 || H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, x) < 0 ||
            hg_h5_attr_write(ds, "crc32", H5T_STD_U32LE, H5T_NATIVE_UINT32,
                       &(uint32_t){hg_crc32_f32(x, (size_t)hg_shape_numel(&ti->shape))}) != 0)
            rc = -1;
        if (ds >= 0)
            H5Dclose(ds);
        H5Sclose(sp);
    }
    if (grp >= 0)
        H5Gclose(grp);
    H5Pclose(gcpl);
    H5Pclose(dcpl);
    return rc;
}

int hg_policy_save(const struct hg_policy *p, const char *path, char *err, size_t errlen)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    char tmp[4200], why[320];
    if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
        return hg_kerr(err, errlen, "%s: path too long", path);
    /* what hg_policy_load would refuse is never written */
    if (hg__pol_check(p, NULL, NULL, why, sizeof(why)) != 0)
        return hg_kerr(err, errlen, "%s: not written: %s", path, why);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), fcpl = H5Pcreate(H5P_FILE_CREATE);
    H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST);
    H5Pset_obj_track_times(fcpl, 0);
    hid_t f = H5Fcreate(tmp, H5F_ACC_TRUNC, fcpl, fapl);
    H5Pclose(fapl);
    H5Pclose(fcpl);
    if (f < 0)
        return hg_kerr(err, errlen, "%s: cannot create: %s", tmp, strerror(errno));
    const struct hg_policy_cfg *c = &p->cfg;
    int rc = hg_h5_attr_str(f, "format", POLICY_FORMAT) || hg_h5_attr_i64(f, "version", POLICY_VERSION) ||
             hg_h5_attr_i64(f, "feature_layout", HG_POLICY_LAYOUT) ||
             hg_h5_attr_i64(f, "group_features", HG_POLICY_FG) ||
             hg_h5_attr_i64(f, "device_features", HG_POLICY_FD) ||
             hg_h5_attr_i64(f, "gat_layers", HG__POL_NLAYERS) || hg_h5_attr_i64(f, "d_model", c->d) ||
             hg_h5_attr_i64(f, "heads", c->heads) || hg_h5_attr_f64(f, "lr", c->lr) ||
             hg_h5_attr_f64(f, "entropy", c->entropy) || hg_h5_attr_i64(f, "seed", (int64_t)c->seed) ||
             hg_h5_attr_i64(f, "num_updates", p->steps) ||
             write_kind(p, f, "params", HG_T_PARAM) ||
             write_kind(p, f, "optimizer", HG_T_STATE)
                 ? -1 : 0;
    if (H5Fclose(f) < 0)
        rc = -1;
    if (rc == 0 && rename(tmp, path) != 0)
        return hg_kerr(err, errlen, "%s: rename from %s: %s", path, tmp, strerror(errno));
    if (rc != 0) {
        unlink(tmp);
        return hg_kerr(err, errlen, "%s: write failed", path);
    }
    return 0;
}

/* Reads group name's tensors of kind into p's master copy, each checked
 * for its shape, CRC and values (hg__pol_check_values: finite, a weight
 * within HG__POL_MAX_WEIGHT: a CRC says only that the bytes are those
 * written). */
static int read_kind(struct hg_policy *p, hid_t f, const char *path, const char *group,
                     enum hg_tkind kind, char *err, size_t errlen)
{
    hid_t grp = H5Lexists(f, group, H5P_DEFAULT) > 0 ? H5Gopen2(f, group, H5P_DEFAULT) : -1;
    if (grp < 0)
        return hg_kerr(err, errlen, "%s: no group /%s (corrupt or truncated?)", path, group);
    int rc = 0;
    const struct hg_graph *g = p->tmpl.g;
    for (int t = 0; t < hg_graph_n_tensors(g) && rc == 0; t++) {
        const struct hg_tensor_info *ti = hg_graph_tensor(g, t);
        if (ti->kind != kind)
            continue;
        hid_t ds = H5Lexists(grp, ti->name, H5P_DEFAULT) > 0
                       ? H5Dopen2(grp, ti->name, H5P_DEFAULT) : -1;
        if (ds < 0) {
            rc = hg_kerr(err, errlen, "%s: no /%s/%s", path, group, ti->name);
            break;
        }
        hid_t sp = H5Dget_space(ds);
        hsize_t dim[HG_MAX_DIMS];
        int nd = sp < 0 ? -1 : H5Sget_simple_extent_ndims(sp);
        int same = nd == ti->shape.ndim && nd <= HG_MAX_DIMS &&
                   H5Sget_simple_extent_dims(sp, dim, NULL) == nd;
        for (int i = 0; same && i < nd; i++)
            same = dim[i] == (hsize_t)ti->shape.dim[i];
        float *x = hg__pol_master(p, t);
        size_t n = (size_t)hg_shape_numel(&ti->shape);
        uint32_t crc = 0;
        char why[160];
        if (!same)
            rc = hg_kerr(err, errlen, "%s: /%s/%s: not of shape the network has", path,
                         group, ti->name);
        else if (H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, x) < 0)
            rc = hg_kerr(err, errlen, "%s: /%s/%s: unreadable (corrupt or truncated?)", path,
                         group, ti->name);
        else if (hg_h5_attr_read(ds, "crc32", H5T_NATIVE_UINT32, &crc) != 0 ||
                 crc != hg_crc32_f32(x, n))
            rc = hg_kerr(err, errlen, "%s: /%s/%s: CRC mismatch (corrupt file)", path, group,
                         ti->name);
        else if (hg__pol_check_values(ti, x, why, sizeof(why)) != 0)
            rc = hg_kerr(err, errlen, "%s: /%s/%s%s (a corrupt or diverged policy)", path,
                         group, ti->name, why);
        if (sp >= 0)
            H5Sclose(sp);
        H5Dclose(ds);
    }
    H5Gclose(grp);
    return rc;
}

int hg_policy_load(struct hg_policy **pp, const char *path, char *err, size_t errlen)
{
    *pp = NULL;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (access(path, R_OK) != 0)
        return hg_kerr(err, errlen, "%s: %s", path, strerror(errno));
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        return hg_kerr(err, errlen, "%s: not an HDF5 file (corrupt or truncated?)", path);
    char fmt[64];
    read_format(f, fmt, sizeof(fmt));
    int64_t version = 0, layout = 0, fg = 0, fd = 0, nl = 0, d = 0, heads = 0, seed = 0,
            steps = 0;
    double lr = 0, ent = 0;
    int rc = 0;
    if (strcmp(fmt, POLICY_FORMAT) != 0)
        rc = hg_kerr(err, errlen, "%s: not an hgtrain policy (format '%s')", path,
                     fmt[0] ? fmt : "none");
    else if (hg_h5_read_i64(f, "version", &version) != 0 || version != POLICY_VERSION)
        rc = hg_kerr(err, errlen, "%s: policy version %lld, this hgplan reads %d", path,
                     (long long)version, POLICY_VERSION);
    else if (hg_h5_read_i64(f, "feature_layout", &layout) != 0 || hg_h5_read_i64(f, "group_features", &fg) ||
             hg_h5_read_i64(f, "device_features", &fd) || hg_h5_read_i64(f, "gat_layers", &nl))
        rc = hg_kerr(err, errlen, "%s: no feature layout attributes (corrupt?)", path);
    else if (layout != HG_POLICY_LAYOUT || fg != HG_POLICY_FG || fd != HG_POLICY_FD ||
             nl != HG__POL_NLAYERS)
        rc = hg_kerr(err, errlen, "%s: feature layout %lld (%lld group, %lld device features, "
                     "%lld attention layers); this hgplan's is %d (%d, %d, %d): train the "
                     "policy again", path, (long long)layout, (long long)fg, (long long)fd,
                     (long long)nl, HG_POLICY_LAYOUT, HG_POLICY_FG, HG_POLICY_FD, HG__POL_NLAYERS);
    else if (hg_h5_read_i64(f, "d_model", &d) || hg_h5_read_i64(f, "heads", &heads) ||
             hg_h5_read_f64(f, "lr", &lr) || hg_h5_read_f64(f, "entropy", &ent) ||
             hg_h5_read_i64(f, "seed", &seed) || hg_h5_read_i64(f, "num_updates", &steps))
        rc = hg_kerr(err, errlen, "%s: missing attributes (corrupt?)", path);
    else if (d < 1 || d > 1024 || heads < 1 || d % heads != 0 || !(lr > 0) || !(ent > 0) ||
             steps < 0)
        rc = hg_kerr(err, errlen, "%s: d_model %lld, heads %lld, lr %g, entropy %g: not a "
                     "valid network", path, (long long)d, (long long)heads, lr, ent);
    struct hg_policy *p = NULL;
    if (rc == 0) {
        struct hg_policy_cfg cfg = {.d = (int)d, .heads = (int)heads, .lr = (float)lr,
                                    .entropy = (float)ent, .seed = (uint64_t)seed};
        p = hg_policy_new(&cfg);
        p->steps = steps;
        rc = read_kind(p, f, path, "params", HG_T_PARAM, err, errlen);
        if (rc == 0)
            rc = read_kind(p, f, path, "optimizer", HG_T_STATE, err, errlen);
    }
    H5Fclose(f);
    if (rc != 0) {
        hg_policy_free(p);
        return -1;
    }
    *pp = p;
    return 0;
}
