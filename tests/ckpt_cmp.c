/* ckpt_cmp.c - compares the tensors of two checkpoints.
 *
 *   ckpt_cmp A.h5 B.h5 TOL [GROUP...]      (default groups: params optimizer)
 *   ckpt_cmp --spread C.h5 [--factor K] [--floor F] A.h5 B.h5 [GROUP...]
 *
 * Per group: the relative error of the whole group as one vector,
 * ||a - b|| / max(||b||, 1e-30) in double over every dataset of the group
 * in A (B must have each with the same size), checked against TOL; the
 * largest per-tensor error is printed too (a tensor whose sum cancels,
 * e.g. a bias gradient, shows summation-order noise more than the whole).
 *
 * --spread: the tolerance comes from the arithmetic instead of a fixed
 * TOL (docs/reproducibility.md).  B and C are two runs of one rank on the
 * same global batches that sum in two equally valid orders (the whole
 * batch, and the same rows as micro-batches); ||C - B|| is what reordering
 * the sums alone does to each tensor.  Every tensor of A, and every group
 * as a whole, must lie within K times that distance of B, plus F times
 * ||b|| (the floor, for a tensor the reordering happened to leave nearly
 * alone): ||a - b|| <= K ||c - b|| + F ||b||.  Defaults K 8, F 1e-6.
 * Prints each group's error, its tolerance and the tensor nearest its own
 * tolerance (the ratio: 1 is the limit).
 *
 * Exits 1 if a group or tensor exceeds its tolerance or a tensor is
 * missing, 2 on a usage or read error. A sharded checkpoint
 * (--save-sharded) is first merged into one ordinary file (hg_ckpt_merge,
 * which verifies every shard); a shard that fails is an error (2) naming
 * it. */
#define _POSIX_C_SOURCE 200809L
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller/hg_controller.h"

struct walk {
    hid_t fa, fb, fc;    /* fc: the spread run, < 0 without --spread */
    const char *group;
    double tol;          /* without --spread: the fixed tolerance */
    double factor, floor;
    double worst, d2, b2, c2; /* c2: sum of ||c - b||^2 over the group */
    double worst_ratio;       /* --spread: the largest error / tolerance */
    double worst_err, worst_tol;
    char worst_name[256];
    int missing, errors, over;
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

/* ||x - b||^2 and (b2 not NULL) ||b||^2 over n floats, in double */
static void dist2(const float *x, const float *b, hssize_t n, double *d2, double *b2)
{
    double dd = 0, bb = 0;
    for (hssize_t i = 0; i < n; i++) {
        double d = (double)x[i] - (double)b[i];
        dd += d * d;
        bb += (double)b[i] * b[i];
    }
    *d2 = dd;
    if (b2)
        *b2 = bb;
}

/* the tensor's error against its tolerance (--spread), worst kept */
static void against_spread(struct walk *w, const char *name, double d2, double b2,
                           const float *c, const float *b, hssize_t n)
{
    double c2;
    dist2(c, b, n, &c2, NULL);
    w->c2 += c2;
    double err = sqrt(d2), tol = w->factor * sqrt(c2) + w->floor * sqrt(b2);
    double ratio = tol > 0 ? err / tol : err > 0 ? INFINITY : 0;
    if (isnan(err))
        ratio = INFINITY;
    if (ratio > 1)
        w->over++;
    if (ratio > w->worst_ratio || !w->worst_name[0]) {
        w->worst_ratio = ratio;
        w->worst_err = err;
        w->worst_tol = tol;
        snprintf(w->worst_name, sizeof(w->worst_name), "%s", name);
    }
}

static herr_t visit(hid_t g, const char *name, const H5L_info_t *info, void *data)
{
    (void)g, (void)info;
    struct walk *w = data;
    char path[1024];
    snprintf(path, sizeof(path), "/%s/%s", w->group, name);
    hssize_t na, nb, nc = 0;
    float *a = read_all(w->fa, path, &na);
    float *b = NULL, *c = NULL;
    H5E_BEGIN_TRY {
        b = read_all(w->fb, path, &nb);
        if (w->fc >= 0)
            c = read_all(w->fc, path, &nc);
    } H5E_END_TRY;
    if (!a) {
        fprintf(stderr, "ckpt_cmp: %s: unreadable in the first file\n", path);
        w->errors++;
    } else if (!b || na != nb) {
        fprintf(stderr, "ckpt_cmp: %s: missing or of another size in the second file\n", path);
        w->missing++;
    } else if (w->fc >= 0 && (!c || nc != nb)) {
        fprintf(stderr, "ckpt_cmp: %s: missing or of another size in the spread file\n", path);
        w->missing++;
    } else {
        double d2, b2;
        dist2(a, b, na, &d2, &b2);
        w->d2 += d2;
        w->b2 += b2;
        if (c) {
            against_spread(w, name, d2, b2, c, b, na);
        } else {
            double rel = sqrt(d2) / fmax(sqrt(b2), 1e-30);
            if (isnan(rel) || rel > w->worst) {
                w->worst = isnan(rel) ? INFINITY : rel;
                snprintf(w->worst_name, sizeof(w->worst_name), "%s", name);
            }
        }
    }
    free(a);
    free(b);
    free(c);
    return 0;
}

/* one group's line and verdict (1: over) */
static int report(const struct walk *w)
{
    double nb = fmax(sqrt(w->b2), 1e-30);
    double rel = sqrt(w->d2) / nb;
    if (isnan(rel))
        rel = INFINITY;
    const char *worst = w->worst_name[0] ? w->worst_name : "-";
    if (w->fc < 0) {
        printf("/%s: relative error %.3g%s (largest tensor: %.3g, %s)\n", w->group, rel,
               rel > w->tol ? " > tolerance" : "", w->worst, worst);
        return rel > w->tol;
    }
    double spread = sqrt(w->c2) / nb;
    double tol = w->factor * spread + w->floor;
    int over = !(rel <= tol) || w->over;
    printf("/%s: relative error %.3g, tolerance %.3g (%g x spread %.3g + floor %g)%s; "
           "worst tensor %s at %.2f of its tolerance (%.3g against %.3g)%s\n",
           w->group, rel, tol, w->factor, spread, w->floor, rel > tol ? " > tolerance" : "",
           worst, w->worst_ratio, w->worst_err, w->worst_tol,
           w->over ? ", over its tolerance" : "");
    if (w->over > 1)
        printf("/%s: %d tensors over their tolerance\n", w->group, w->over);
    return over;
}

static int usage(void)
{
    fprintf(stderr, "usage: ckpt_cmp A.h5 B.h5 TOL [GROUP...]\n"
                    "       ckpt_cmp --spread C.h5 [--factor K] [--floor F] A.h5 B.h5 [GROUP...]\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *spread = NULL;
    double factor = 8, floor_ = 1e-6;
    int i0 = 1;
    while (i0 + 1 < argc && argv[i0][0] == '-' && argv[i0][1] == '-') {
        char *end;
        if (strcmp(argv[i0], "--spread") == 0) {
            spread = argv[i0 + 1];
        } else if (strcmp(argv[i0], "--factor") == 0 || strcmp(argv[i0], "--floor") == 0) {
            double v = strtod(argv[i0 + 1], &end);
            if (*end || !(v >= 0))
                return usage();
            *(argv[i0][2] == 'f' && argv[i0][3] == 'a' ? &factor : &floor_) = v;
        } else {
            return usage();
        }
        i0 += 2;
    }
    int nfix = spread ? 2 : 3; /* A B, or A B TOL */
    if (argc - i0 < nfix)
        return usage();
    double tol = spread ? 0 : atof(argv[i0 + 2]);
    static const char *const def[] = {"params", "optimizer"};
    int ngroups = argc - i0 - nfix;
    const char *const *groups = ngroups > 0 ? (const char *const *)argv + i0 + nfix : def;
    if (ngroups == 0)
        ngroups = 2;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    /* sharded: merged into a temporary file ([3] names, "" for none) */
    char merged[3][64] = {"", "", ""};
    const char *file[3] = {argv[i0], argv[i0 + 1], spread};
    for (int i = 0; i < 3 && file[i]; i++) {
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
    hid_t fc = spread ? H5Fopen(file[2], H5F_ACC_RDONLY, H5P_DEFAULT) : -1;
    for (int i = 0; i < 3; i++)
        if (merged[i][0])
            unlink(merged[i]); /* open: gone once closed */
    if (fa < 0 || fb < 0 || (spread && fc < 0)) {
        fprintf(stderr, "ckpt_cmp: cannot open %s\n",
                fa < 0 ? argv[i0] : fb < 0 ? argv[i0 + 1] : spread);
        return 2;
    }
    int bad = 0;
    for (int k = 0; k < ngroups; k++) {
        struct walk w = {.fa = fa, .fb = fb, .fc = fc, .group = groups[k],
                         .tol = tol, .factor = factor, .floor = floor_};
        hid_t g = H5Gopen2(fa, groups[k], H5P_DEFAULT);
        if (g < 0) {
            fprintf(stderr, "ckpt_cmp: %s: no group /%s\n", argv[i0], groups[k]);
            return 2;
        }
        H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, NULL, visit, &w);
        H5Gclose(g);
        if (report(&w) || w.missing || w.errors)
            bad = 1;
    }
    H5Fclose(fa);
    H5Fclose(fb);
    if (fc >= 0)
        H5Fclose(fc);
    return bad;
}
