/* ckpt_cmp.c - compares the tensors of two checkpoints.
 *
 *   ckpt_cmp A.h5 B.h5 TOL [GROUP...]      (default groups: params optimizer)
 *
 * Per group: the relative error of the whole group as one vector,
 * ||a - b|| / max(||b||, 1e-30) in double over every dataset of the group
 * in A (B must have each with the same size), checked against TOL; the
 * largest per-tensor error is printed too (a tensor whose sum cancels,
 * e.g. a bias gradient, shows summation-order noise more than the whole).
 * Exits 1 if a group exceeds TOL or a tensor is missing, 2 on a usage or
 * read error. A sharded checkpoint (--save-sharded) is first merged into
 * one ordinary file (hg_ckpt_merge, which verifies every shard); a shard
 * that fails is an error (2) naming it. */
#define _POSIX_C_SOURCE 200809L
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller/hg_controller.h"

struct walk {
    hid_t fa, fb;
    const char *group;
    double worst, d2, b2;
    char worst_name[256];
    int missing, errors;
};

static float *read_all(hid_t f, const char *path, hssize_t *n)
{
    hid_t d = H5Dopen2(f, path, H5P_DEFAULT);
    if (d < 0)
        return NULL;
    hid_t sp = H5Dget_space(d);
    *n = H5Sget_simple_extent_npoints(sp);
    float *v = malloc((size_t)(*n > 0 ? *n : 1) * sizeof(float));
    if (v && H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0) {
        free(v);
        v = NULL;
    }
    H5Sclose(sp);
    H5Dclose(d);
    return v;
}

static herr_t visit(hid_t g, const char *name, const H5L_info_t *info, void *data)
{
    (void)g, (void)info;
    struct walk *w = data;
    char path[1024];
    snprintf(path, sizeof(path), "/%s/%s", w->group, name);
    hssize_t na, nb;
    float *a = read_all(w->fa, path, &na);
    float *b = NULL;
    H5E_BEGIN_TRY { b = read_all(w->fb, path, &nb); } H5E_END_TRY;
    if (!a) {
        fprintf(stderr, "ckpt_cmp: %s: unreadable in the first file\n", path);
        w->errors++;
    } else if (!b || na != nb) {
        fprintf(stderr, "ckpt_cmp: %s: missing or of another size in the second file\n", path);
        w->missing++;
    } else {
        double d2 = 0, b2 = 0;
        for (hssize_t i = 0; i < na; i++) {
            double d = (double)a[i] - (double)b[i];
            d2 += d * d;
            b2 += (double)b[i] * b[i];
        }
        w->d2 += d2;
        w->b2 += b2;
        double rel = sqrt(d2) / fmax(sqrt(b2), 1e-30);
        if (isnan(rel) || rel > w->worst) {
            w->worst = isnan(rel) ? INFINITY : rel;
            snprintf(w->worst_name, sizeof(w->worst_name), "%s", name);
        }
    }
    free(a);
    free(b);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: ckpt_cmp A.h5 B.h5 TOL [GROUP...]\n");
        return 2;
    }
    double tol = atof(argv[3]);
    static const char *const def[] = {"params", "optimizer"};
    const char *const *groups = argc > 4 ? (const char *const *)argv + 4 : def;
    int ngroups = argc > 4 ? argc - 4 : 2;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    /* sharded: merged into a temporary file ([2] names, "" for none) */
    char merged[2][64] = {"", ""};
    const char *file[2] = {argv[1], argv[2]};
    for (int i = 0; i < 2; i++) {
        struct hg_ckpt_meta m;
        char err[4400];
        if (hg_ckpt_read_meta(file[i], &m, err, sizeof(err)) != 0) {
            if (strstr(err, "shard")) { /* an unreadable shard is not a format question */
                fprintf(stderr, "ckpt_cmp: %s\n", err);
                return 2;
            }
            continue; /* the HDF5 open below says what is wrong */
        }
        int sharded = m.shards > 0;
        hg_ckpt_meta_free(&m);
        if (!sharded)
            continue;
        const char *td = getenv("TMPDIR");
        snprintf(merged[i], sizeof(merged[i]), "%.40s/ckpt_cmp.XXXXXX", td && *td ? td : "/tmp");
        int fd = mkstemp(merged[i]);
        if (fd < 0) {
            fprintf(stderr, "ckpt_cmp: cannot make a temporary file in %s\n", merged[i]);
            return 2;
        }
        close(fd);
        if (hg_ckpt_merge(file[i], merged[i], err, sizeof(err)) != 0) {
            fprintf(stderr, "ckpt_cmp: %s\n", err);
            unlink(merged[i]);
            return 2;
        }
        file[i] = merged[i];
    }
    hid_t fa = H5Fopen(file[0], H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t fb = H5Fopen(file[1], H5F_ACC_RDONLY, H5P_DEFAULT);
    for (int i = 0; i < 2; i++)
        if (merged[i][0])
            unlink(merged[i]); /* open: gone once closed */
    if (fa < 0 || fb < 0) {
        fprintf(stderr, "ckpt_cmp: cannot open %s\n", fa < 0 ? argv[1] : argv[2]);
        return 2;
    }
    int bad = 0;
    for (int k = 0; k < ngroups; k++) {
        struct walk w = {.fa = fa, .fb = fb, .group = groups[k]};
        hid_t g = H5Gopen2(fa, groups[k], H5P_DEFAULT);
        if (g < 0) {
            fprintf(stderr, "ckpt_cmp: %s: no group /%s\n", argv[1], groups[k]);
            return 2;
        }
        H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, NULL, visit, &w);
        H5Gclose(g);
        double rel = sqrt(w.d2) / fmax(sqrt(w.b2), 1e-30);
        if (isnan(rel))
            rel = INFINITY;
        printf("/%s: relative error %.3g%s (largest tensor: %.3g, %s)\n", groups[k], rel,
               rel > tol ? " > tolerance" : "", w.worst, w.worst_name[0] ? w.worst_name : "-");
        if (rel > tol || w.missing || w.errors)
            bad = 1;
    }
    H5Fclose(fa);
    H5Fclose(fb);
    return bad;
}
