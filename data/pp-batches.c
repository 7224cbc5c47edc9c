/* pp-batches.c - `hgpreprocess batches`: one epoch of a shard set planned
 * as hgtrain would plan it (data/batch.c), and what every rank gets: a
 * preview for choosing --max-tokens and --rank-capacity. It writes
 * nothing. Its own file, as each command is (data/hgpreprocess.c lists
 * them); what the commands share is in data/pp-common.c.
 * docs/preprocess.md. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hg_base.h"
#include "data/hg_data.h"
#include "data/pp-impl.h"
#include "kernels/hg_kernels.h"

struct batches_opts {
    char *data;
    int layout; /* translation, images, lm */
    int64_t maxtok, maxsent, mult, seed, epoch;
    struct hg_opt_list caps;
    int valid;
};

#define BA(f) offsetof(struct batches_opts, f)
static const struct hg_opt batches_opts[] = {
    {.name = "data", .type = HG_OPT_STR, .offset = BA(data), .metavar = "SPEC",
     .help = "the shard set to plan (a split's directory, e.g. DIR/train)"},
    {.name = "layout", .type = HG_OPT_ENUM, .offset = BA(layout), .def = "translation",
     .choices = "translation|images|lm", .help = "what the shards hold"},
    {.name = "max-tokens", .type = HG_OPT_I64, .offset = BA(maxtok), .def = "0",
     .max = (double)(INT64_MAX / 4), .help = "batch cost limit per rank and step (0: none)"},
    {.name = "max-sentences", .alias = "batch-size", .type = HG_OPT_I64, .offset = BA(maxsent),
     .def = "0", .max = (double)(INT64_MAX / 4), .help = "samples per batch per rank (0: none)"},
    {.name = "required-batch-size-multiple", .type = HG_OPT_I64, .offset = BA(mult),
     .def = HG_BATCH_MULTIPLE_TEXT, .min = 1, .max = 1 << 20, .metavar = "M",
     .help = "batch sizes are a multiple of M (when larger), as hgtrain's"},
    {.name = "rank-capacity", .type = HG_OPT_LIST, .offset = BA(caps), .def = "1",
     .flags = HG_OPTF_POSITIVE, .metavar = "C0,C1,...",
     .help = "relative speed of each rank, one number per rank"},
    {.name = "seed", .type = HG_OPT_I64, .offset = BA(seed), .def = "1",
     .help = "hgtrain's --seed"},
    {.name = "epoch", .type = HG_OPT_I64, .offset = BA(epoch), .def = "1", .min = 1,
     .help = "the epoch to plan"},
    {.name = "valid", .type = HG_OPT_BOOL, .offset = BA(valid),
     .help = "plan as for validation (no shuffling)"},
};
#undef BA

/* Plans one epoch of a shard set as hgtrain would, and reports what every
 * rank gets: a preview for choosing --max-tokens and --rank-capacity. */
static int cmd_batches(const void *opts, const struct hg_opt_prog *p)
{
    const struct batches_opts *o = opts;
    static const char *const layouts[] = {"translation", "images", "lm"};
    const char *data = o->data, *layout = layouts[o->layout];
    const int64_t maxtok = o->maxtok, maxsent = o->maxsent, mult = o->mult, seed = o->seed,
                  epoch = o->epoch;
    if (!data)
        return hg__pp_usage_error(p->usage, "batches", "%s", "--data is required");
    if (maxtok == 0 && maxsent == 0)
        return hg__pp_usage_error(p->usage, "batches", "%s",
                                  "give --max-tokens or --max-sentences");
    const int world = o->caps.n;
    const double *caps = o->caps.v;
    char caps_s[256] = "";
    for (int r = 0; r < world; r++) {
        size_t k = strlen(caps_s);
        snprintf(caps_s + k, sizeof(caps_s) - k, "%s%g", r ? "," : "", caps[r]);
    }
    static const struct hg_field tl[2] = {
        {.name = "src", .kind = HG_FIELD_SEQ, .dtype = HG_I32, .rank = 1},
        {.name = "tgt", .kind = HG_FIELD_SEQ, .dtype = HG_I32, .rank = 1}};
    static const struct hg_field il[2] = {
        {.name = "image", .kind = HG_FIELD_ARRAY, .dtype = HG_U8, .rank = 2},
        {.name = "label", .kind = HG_FIELD_ARRAY, .dtype = HG_I32, .rank = 0}};
    static const struct hg_field ll[1] = {
        {.name = "input_ids", .kind = HG_FIELD_ARRAY, .dtype = HG_I32, .rank = 1}};
    const struct hg_field *const fl[3] = {tl, il, ll};
    const struct hg_field *f = fl[o->layout];
    const int nf = o->layout == 2 ? 1 : 2;
    char err[ERRLEN];
    struct hg_dataset *ds = NULL;
    struct hg_epoch *ep = NULL;
    int32_t *len = NULL;
    int rc = hg_dataset_open(&ds, data, f, nf, 0, err, sizeof(err));
    int64_t n = rc == 0 ? hg_dataset_size(ds) : 0;
    if (rc == 0) {
        /* a pair costs its longer side (fairseq); an array item its numel */
        len = malloc((size_t)(n > 0 ? n : 1) * sizeof(*len));
        if (!len)
            rc = hg_kerr(err, sizeof(err), "out of memory");
    }
    if (rc == 0) {
        const int32_t *l0 = hg_dataset_lengths(ds, 0);
        const int32_t *l1 = nf == 2 && f[1].kind == HG_FIELD_SEQ ? hg_dataset_lengths(ds, 1) : NULL;
        int64_t item = 1;
        if (f[0].kind == HG_FIELD_ARRAY && strcmp(layout, "lm") == 0) {
            struct hg_shape is = hg_dataset_item_shape(ds, 0);
            item = hg_shape_numel(&is);
        }
        for (int64_t i = 0; i < n; i++)
            len[i] = (int32_t)((l1 && l1[i] > l0[i] ? l1[i] : l0[i]) * item);
        struct hg_batch_opts bo = {.max_tokens = maxtok, .max_sentences = maxsent,
                                   .required_multiple = mult, .world = world,
                                   .capacity = caps, .seed = (uint64_t)seed,
                                   .shuffle = !o->valid};
        rc = hg_epoch_plan(&ep, len, n, &bo, (uint64_t)epoch, err, sizeof(err));
    }
    if (rc == 0) {
        int64_t steps = hg_epoch_steps(ep), seen = 0;
        printf("| %s: %lld samples in %d shards\n", data, (long long)n,
               hg_dataset_nshards(ds));
        printf("| epoch %lld: %lld steps over %d ranks (capacity %s, max-tokens %lld, "
               "max-sentences %lld, multiple %lld)\n", (long long)epoch,
               (long long)steps, world, caps_s, (long long)maxtok, (long long)maxsent,
               (long long)mult);
        for (int r = 0; r < world; r++) {
            int64_t samples = 0, tokens = 0, padded = 0, empty = 0;
            for (int64_t st = 0; st < steps; st++) {
                int64_t c;
                const int64_t *idx = hg_epoch_batch(ep, r, st, &c);
                int64_t mx = 0;
                for (int64_t k = 0; k < c; k++) {
                    tokens += len[idx[k]];
                    if (len[idx[k]] > mx)
                        mx = len[idx[k]];
                }
                samples += c;
                padded += c * mx;
                empty += c == 0;
            }
            seen += samples;
            printf("| rank %d: capacity %g, %lld samples, %lld tokens (%lld with "
                   "padding), %.1f samples per batch, %lld empty steps\n", r,
                   caps[r], (long long)samples, (long long)tokens, (long long)padded,
                   steps > empty ? (double)samples / (double)(steps - empty) : 0.0,
                   (long long)empty);
        }
        if (seen != n)
            rc = hg_kerr(err, sizeof(err), "internal error: %lld of %lld samples planned",
                         (long long)seen, (long long)n);
    }
    if (rc != 0)
        fprintf(stderr, "hgpreprocess batches: %s\n", err);
    hg_epoch_free(ep);
    hg_dataset_close(ds);
    free(len);
    return rc ? 1 : 0;
}

const struct pp_command hg__pp_batches = {
    .name = "batches",
    .opts = batches_opts,
    .nopts = NOPTS(batches_opts),
    .size = sizeof(struct batches_opts),
    .run = cmd_batches,
};
