/* pp-images.c - `hgpreprocess images`: IDX images and labels (one pair, or
 * Fashion-MNIST's train and test splits) to shards of `image` u8 and
 * `label` i32 samples, PREFIX-IIIII-of-NNNNN.h5. Its own file, as each
 * command is (data/hgpreprocess.c lists them); what the commands share is
 * in data/pp-common.c. docs/preprocess.md. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hg_base.h"
#include "data/hg_data.h"
#include "data/pp-impl.h"
#include "kernels/hg_kernels.h"

static int images_one(const char *images, const char *labels,
                      const char *outdir, const char *prefix, int64_t nshards,
                      char *err, size_t errlen)
{
    struct hg_idx im, lb;
    if (hg_idx_load(images, &im, err, errlen))
        return -1;
    if (hg_idx_load(labels, &lb, err, errlen)) {
        hg_idx_free(&im);
        return -1;
    }
    int rc = 0;
    struct shard_out so = {0};
    if (im.ndim < 2 || im.ndim > 4) {
        rc = hg_kerr(err, errlen, "%s: expected [N, H, W] images, found %d dims",
                     images, im.ndim);
        goto out;
    }
    if (lb.ndim != 1) {
        rc = hg_kerr(err, errlen, "%s: expected [N] labels, found %d dims",
                     labels, lb.ndim);
        goto out;
    }
    int64_t n = im.dim[0];
    if (lb.dim[0] != n) {
        rc = hg_kerr(err, errlen, "%s has %" PRId64 " images but %s has %" PRId64
                     " labels", images, n, labels, lb.dim[0]);
        goto out;
    }
    struct hg_shape shapes[2] = {{.ndim = im.ndim - 1}, {.ndim = 0}};
    int64_t item = 1;
    for (int d = 1; d < im.ndim; d++) {
        shapes[0].dim[d - 1] = im.dim[d];
        item *= im.dim[d];
    }
    const struct hg_field fields[2] = {
        {.name = "image", .kind = HG_FIELD_ARRAY, .dtype = HG_U8,
         .rank = im.ndim - 1},
        {.name = "label", .kind = HG_FIELD_ARRAY, .dtype = HG_I32, .rank = 0},
    };
    int k = hg__pp_clamp_shards(nshards, n);
    char name[64];
    int plen = (int)strlen(prefix);
    if (hg__pp_make_dirs(outdir, err, errlen))
        goto fail;
    for (int s = 0; s < k; s++) {
        snprintf(name, sizeof(name), "-%05d-of-%05d.h5", s, k);
        char *full = malloc(strlen(outdir) + (size_t)plen + strlen(name) + 2);
        if (!full) {
            rc = hg_kerr(err, errlen, "out of memory");
            goto out;
        }
        sprintf(full, "%s/%s%s", outdir, prefix, name);
        int orc = hg__pp_shard_open(&so, full, fields, 2, shapes, err, errlen);
        free(full);
        if (orc || hg_shard_writer_set_info(so.w, s, k, n, err, errlen))
            goto fail;
        for (int64_t i = hg__pp_shard_lo(n, k, s); i < hg__pp_shard_lo(n, k, s + 1); i++) {
            int32_t label = lb.data[i];
            const void *val[2] = {im.data + i * item, &label};
            const int64_t cnt[2] = {item, 1};
            if (hg_shard_writer_add(so.w, val, cnt, err, errlen))
                goto fail;
        }
        if (hg__pp_shard_finish(&so, err, errlen))
            goto fail;
    }
    printf("%s: %" PRId64 " samples of %" PRId64 " bytes -> %d shard%s in %s\n",
           prefix, n, item, k, k == 1 ? "" : "s", outdir);
    goto out;
fail:
    rc = -1;
out:
    hg__pp_shard_abort(&so);
    hg_idx_free(&im);
    hg_idx_free(&lb);
    return rc;
}

/* dir/base.gz if present, else dir/base. */
static char *idx_path(const char *dir, const char *base)
{
    char *p = malloc(strlen(dir) + strlen(base) + 5);
    if (!p)
        return NULL;
    sprintf(p, "%s/%s.gz", dir, base);
    if (access(p, R_OK) != 0)
        sprintf(p, "%s/%s", dir, base);
    return p;
}

struct images_opts {
    char *images, *labels, *out, *fashion, *prefix;
    int64_t nshards;
};

static const struct hg_opt images_opts[] = {
    {.name = "images", .type = HG_OPT_STR, .offset = offsetof(struct images_opts, images),
     .metavar = "F", .help = "IDX images (idx3-ubyte)"},
    {.name = "labels", .type = HG_OPT_STR, .offset = offsetof(struct images_opts, labels),
     .metavar = "F", .help = "IDX labels (idx1-ubyte)"},
    {.name = "out", .type = HG_OPT_STR, .offset = offsetof(struct images_opts, out),
     .metavar = "DIR", .help = "where the shards go (with --fashion-mnist: that DIR)"},
    {.name = "fashion-mnist", .type = HG_OPT_STR,
     .offset = offsetof(struct images_opts, fashion), .metavar = "DIR",
     .help = "Fashion-MNIST's four files in DIR: train and test splits"},
    {.name = "prefix", .type = HG_OPT_STR, .offset = offsetof(struct images_opts, prefix),
     .def = "train", .metavar = "NAME", .help = "shard names PREFIX-00000.h5 ..."},
    NUM_SHARDS(struct images_opts),
};

static int cmd_images(const void *opts, const struct hg_opt_prog *p)
{
    const struct images_opts *o = opts;
    const char *images = o->images, *labels = o->labels, *out = o->out,
               *fashion = o->fashion, *prefix = o->prefix;
    const int64_t nshards = o->nshards;
    if (fashion && (images || labels))
        return hg__pp_usage_error(p->usage, "images", "%s",
                                  "--fashion-mnist replaces --images/--labels");
    if (!fashion && (!images || !labels || !out))
        return hg__pp_usage_error(p->usage, "images", "%s",
                                  "--images, --labels and --out are required");
    if (!*prefix || strchr(prefix, '/'))
        return hg__pp_usage_error(p->usage, "images", "--prefix '%s': expected a plain name",
                                  prefix);
    char err[ERRLEN];
    int rc;
    if (fashion) {
        if (!out)
            out = fashion;
        char *ti = idx_path(fashion, "train-images-idx3-ubyte");
        char *tl = idx_path(fashion, "train-labels-idx1-ubyte");
        char *vi = idx_path(fashion, "t10k-images-idx3-ubyte");
        char *vl = idx_path(fashion, "t10k-labels-idx1-ubyte");
        rc = !ti || !tl || !vi || !vl ? hg_kerr(err, sizeof(err), "out of memory")
             : images_one(ti, tl, out, "train", nshards, err, sizeof(err));
        if (rc == 0)
            rc = images_one(vi, vl, out, "test", nshards, err, sizeof(err));
        free(ti);
        free(tl);
        free(vi);
        free(vl);
    } else {
        rc = images_one(images, labels, out, prefix, nshards, err, sizeof(err));
    }
    if (rc != 0) {
        fprintf(stderr, "hgpreprocess images: %s\n", err);
        hg__pp_made_clear(1);
        return 1;
    }
    hg__pp_made_clear(0);
    return 0;
}

const struct pp_command hg__pp_images = {
    .name = "images",
    .opts = images_opts,
    .nopts = NOPTS(images_opts),
    .size = sizeof(struct images_opts),
    .run = cmd_images,
};
