/* bench_data.c - is the data room fast enough to keep a training step fed?
 *   (a) epoch planning of 1M samples (data/batch.c);
 *   (b) the loader over freshly written shards: 200k translation-like
 *       samples (SEQ src, tgt; 5..60 tokens) and 60k MNIST-like samples
 *       (ARRAY image [28,28] u8, label i32), one epoch with prefetch 0 and
 *       prefetch 4,
 * next to the rate at which a training step consumes data. One line per
 * measurement:
 *   data <what> samples_per_s X tokens_per_s Y
 * Options: --dir D (where the shards go; default a fresh directory under
 * $TMPDIR or /tmp, removed at the end), --plan-only. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "data/hg_data.h"

/* What one training step consumes, from bench/RESULTS.md (latest run,
 * commit d3b0a36, 2 threads): the MNIST CNN at batch 64 takes 29.3 ms per
 * step, one Transformer encoder layer on 64 x 32 tokens 128.5 ms. A loader
 * slower than these rates would make training wait for data. */
#define REF_MNIST_MS 29.3
#define REF_MNIST_BATCH 64.0
#define REF_XFMR_MS 128.5
#define REF_XFMR_SENTENCES 64.0
#define REF_XFMR_TOKENS (64.0 * 32.0)

static uint64_t rs = 0x2545F4914F6CDD1Dull;
static int64_t irand(int64_t lo, int64_t hi) /* [lo, hi], xorshift64 */
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return lo + (int64_t)(rs % (uint64_t)(hi - lo + 1));
}

static void report(const char *what, double samples, double tokens, double s)
{
    printf("data %s samples_per_s %.0f tokens_per_s %.0f\n", what,
           samples / s, tokens / s);
    fflush(stdout);
}

/* ------------------------------------------------------ (a) planning */

static int bench_plan(void)
{
    const int64_t n = 1000000;
    int32_t *len = malloc((size_t)n * sizeof(*len));
    if (!len)
        return -1;
    double tokens = 0;
    for (int64_t i = 0; i < n; i++) {
        len[i] = (int32_t)irand(5, 60);
        tokens += len[i];
    }
    const double cap[4] = {2, 1, 1, 1};
    struct hg_batch_opts o = {.max_tokens = 4096, .required_multiple = 8,
                              .world = 4, .capacity = cap, .seed = 1};
    char err[256];
    for (int shuffle = 1; shuffle >= 0; shuffle--) {
        o.shuffle = shuffle;
        double best = 1e30;
        int64_t steps = 0;
        for (int rep = 0; rep < 3; rep++) { /* best of 3: shared machine */
            struct hg_epoch *ep;
            double t0 = hg_now();
            if (hg_epoch_plan(&ep, len, n, &o, (uint64_t)rep + 1, err,
                              sizeof(err))) {
                fprintf(stderr, "bench_data: %s\n", err);
                free(len);
                return -1;
            }
            double t = hg_now() - t0;
            best = t < best ? t : best;
            steps = hg_epoch_steps(ep);
            hg_epoch_free(ep);
        }
        char what[64];
        snprintf(what, sizeof(what), "plan_1M_%s_world4",
                 shuffle ? "shuffle" : "ordered");
        report(what, (double)n, tokens, best);
        printf("# plan: %lld steps, %.1f ms\n", (long long)steps, 1e3 * best);
    }
    free(len);
    return 0;
}

/* ------------------------------------------------------ (b) loader */

#define MAX_FILES 8
static char files[MAX_FILES][4200];
static int nfiles;

static int write_translation(const char *dir, int64_t n, int nshards,
                             char *err, size_t errlen)
{
    const struct hg_field f[2] = {
        {.name = "src", .kind = HG_FIELD_SEQ, .dtype = HG_I32, .rank = 1,
         .vocab = 32000},
        {.name = "tgt", .kind = HG_FIELD_SEQ, .dtype = HG_I32, .rank = 1,
         .vocab = 32000},
    };
    const struct hg_shape item[2] = {{0}, {0}};
    int32_t src[60], tgt[60];
    for (int s = 0; s < nshards; s++) {
        struct hg_shard_writer *w;
        snprintf(files[nfiles], sizeof(files[0]), "%s/trans-%03d.h5", dir, s);
        if (hg_shard_writer_open(&w, files[nfiles], f, 2, item, err, errlen))
            return -1;
        nfiles++;
        for (int64_t i = s * n / nshards; i < (s + 1) * n / nshards; i++) {
            int64_t cnt[2] = {irand(5, 60), 0};
            cnt[1] = cnt[0] + irand(-4, 4); /* target near source length */
            cnt[1] = cnt[1] < 5 ? 5 : cnt[1] > 60 ? 60 : cnt[1];
            for (int k = 0; k < 60; k++) {
                src[k] = (int32_t)irand(4, 31999);
                tgt[k] = (int32_t)irand(4, 31999);
            }
            const void *v[2] = {src, tgt};
            if (hg_shard_writer_add(w, v, cnt, err, errlen)) {
                hg_shard_writer_abort(w);
                return -1;
            }
        }
        if (hg_shard_writer_finish(w, err, errlen))
            return -1;
    }
    return 0;
}

static int write_mnist(const char *dir, int64_t n, char *err, size_t errlen)
{
    const struct hg_field f[2] = {
        {.name = "image", .kind = HG_FIELD_ARRAY, .dtype = HG_U8, .rank = 2},
        {.name = "label", .kind = HG_FIELD_ARRAY, .dtype = HG_I32, .rank = 0,
         .vocab = 10},
    };
    const struct hg_shape item[2] = {{.ndim = 2, .dim = {28, 28}}, {0}};
    uint8_t img[28 * 28];
    int32_t label;
    struct hg_shard_writer *w;
    snprintf(files[nfiles], sizeof(files[0]), "%s/mnist-000.h5", dir);
    if (hg_shard_writer_open(&w, files[nfiles], f, 2, item, err, errlen))
        return -1;
    nfiles++;
    for (int64_t i = 0; i < n; i++) {
        for (int k = 0; k < 28 * 28; k++)
            img[k] = (uint8_t)irand(0, 255);
        label = (int32_t)irand(0, 9);
        const void *v[2] = {img, &label};
        const int64_t cnt[2] = {1, 1};
        if (hg_shard_writer_add(w, v, cnt, err, errlen)) {
            hg_shard_writer_abort(w);
            return -1;
        }
    }
    return hg_shard_writer_finish(w, err, errlen);
}

/* One epoch of rank 0 of a 1-rank plan through the loader. With step_s > 0
 * each batch is followed by a simulated training step of step_s seconds
 * per reference batch (scaled by the batch's samples / ref_batch), spent
 * sleeping as a GPU step would leave the CPU free, for at most max_steps
 * (ref_batch < 0: scaled by tokens / -ref_batch instead)
 * steps: the data stall (time waiting in hg_loader_next) shows whether the
 * prefetch thread hides the loading. */
static int run_loader(struct hg_dataset *ds, const struct hg_epoch *ep,
                      int prefetch, const char *what, double step_s,
                      double ref_batch, int64_t max_steps, char *err,
                      size_t errlen)
{
    struct hg_loader *ld;
    const struct hg_loader_opts lo = {.rank = 0, .prefetch = prefetch,
                                      .pad_id = 0};
    double t0 = hg_now(), stall = 0;
    if (hg_loader_open(&ld, ds, ep, &lo, 0, err, errlen))
        return -1;
    struct hg_batch b;
    double samples = 0, tokens = 0;
    int64_t steps = 0;
    int rc;
    for (;;) {
        double w0 = hg_now();
        rc = hg_loader_next(ld, &b, err, errlen);
        stall += hg_now() - w0;
        if (rc != 1)
            break;
        samples += (double)b.size;
        tokens += (double)b.tokens;
        if (step_s > 0) {
            double d = ref_batch > 0 ? step_s * (double)b.size / ref_batch
                                     : step_s * (double)b.tokens / -ref_batch;
            struct timespec ts = {(time_t)d, (long)((d - (double)(time_t)d) * 1e9)};
            nanosleep(&ts, NULL);
            if (++steps == max_steps)
                break;
        }
    }
    hg_loader_close(ld);
    if (rc < 0)
        return -1;
    char name[128];
    snprintf(name, sizeof(name), "%s_prefetch%d%s", what, prefetch,
             step_s > 0 ? "_with_train_step" : "");
    report(name, samples, tokens, hg_now() - t0);
    if (step_s > 0)
        printf("#   data stall %.1f%% of %.2f s (%lld steps)\n",
               100.0 * stall / (hg_now() - t0), hg_now() - t0, (long long)steps);
    return 0;
}

static int bench_set(const char *spec, const struct hg_field *f, int nf,
                     const struct hg_batch_opts *o, int seq_pair,
                     const char *what, char *err, size_t errlen)
{
    struct hg_dataset *ds;
    double t0 = hg_now();
    if (hg_dataset_open(&ds, spec, f, nf, 0, err, errlen))
        return -1;
    int64_t n = hg_dataset_size(ds);
    printf("# %s: %lld samples in %d shards, opened in %.1f ms\n", what,
           (long long)n, hg_dataset_nshards(ds), 1e3 * (hg_now() - t0));
    /* translation batches cost the longer side, as fairseq's
     * max(src, tgt) */
    int32_t *len = malloc((size_t)(n > 0 ? n : 1) * sizeof(*len));
    const int32_t *l0 = hg_dataset_lengths(ds, 0);
    const int32_t *l1 = seq_pair ? hg_dataset_lengths(ds, 1) : NULL;
    for (int64_t i = 0; i < n; i++)
        len[i] = l1 && l1[i] > l0[i] ? l1[i] : l0[i];
    struct hg_epoch *ep;
    int rc = hg_epoch_plan(&ep, len, n, o, 1, err, errlen);
    free(len);
    if (rc == 0) {
        rc = run_loader(ds, ep, 0, what, 0, 1, 0, err, errlen);
        if (rc == 0)
            rc = run_loader(ds, ep, 4, what, 0, 1, 0, err, errlen);
        /* the reference step of this kind of model (bench/RESULTS.md) */
        double step_s = (seq_pair ? REF_XFMR_MS : REF_MNIST_MS) * 1e-3;
        double ref = seq_pair ? -REF_XFMR_TOKENS : REF_MNIST_BATCH;
        for (int p = 0; rc == 0 && p <= 4; p += 4)
            rc = run_loader(ds, ep, p, what, step_s, ref, 100, err, errlen);
        hg_epoch_free(ep);
    }
    hg_dataset_close(ds);
    return rc;
}

static int bench_loader(const char *dir_opt)
{
    char dir[4096], err[512], spec[4200];
    if (dir_opt) {
        snprintf(dir, sizeof(dir), "%s", dir_opt);
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof(dir), "%s/hg_bench_data.XXXXXX",
                 tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(dir)) {
            perror("bench_data: mkdtemp");
            return -1;
        }
    }
    int rc = -1;
    double t0 = hg_now();
    if (write_translation(dir, 200000, 2, err, sizeof(err)) ||
        write_mnist(dir, 60000, err, sizeof(err)))
        goto out;
    printf("# shards written to %s in %.1f s\n", dir, hg_now() - t0);

    const struct hg_field tf[2] = {
        {.name = "src", .kind = HG_FIELD_SEQ, .dtype = HG_I32, .rank = 1,
         .vocab = 32000},
        {.name = "tgt", .kind = HG_FIELD_SEQ, .dtype = HG_I32, .rank = 1,
         .vocab = 32000},
    };
    /* the reference step's budget: 64 sentences x 32 tokens */
    struct hg_batch_opts to = {.max_tokens = 2048, .required_multiple = 8,
                               .world = 1, .seed = 1, .shuffle = 1};
    snprintf(spec, sizeof(spec), "%s/trans-*.h5", dir);
    if (bench_set(spec, tf, 2, &to, 1, "translation_200k", err, sizeof(err)))
        goto out;

    const struct hg_field mf[2] = {
        {.name = "image", .kind = HG_FIELD_ARRAY, .dtype = HG_U8, .rank = 2},
        {.name = "label", .kind = HG_FIELD_ARRAY, .dtype = HG_I32, .rank = 0,
         .vocab = 10},
    };
    struct hg_batch_opts mo = {.max_sentences = 64, .world = 1, .seed = 1,
                               .shuffle = 1};
    snprintf(spec, sizeof(spec), "%s/mnist-000.h5", dir);
    if (bench_set(spec, mf, 2, &mo, 0, "mnist_60k", err, sizeof(err)))
        goto out;
    rc = 0;
out:
    if (rc)
        fprintf(stderr, "bench_data: %s\n", err);
    for (int i = 0; i < nfiles; i++)
        unlink(files[i]);
    if (!dir_opt)
        rmdir(dir);
    return rc;
}


int main(int argc, char **argv)
{
    const char *dir = NULL;
    int plan_only = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--dir") && i + 1 < argc)
            dir = argv[++i];
        else if (!strcmp(argv[i], "--plan-only"))
            plan_only = 1;
        else {
            fprintf(stderr, "usage: %s [--dir D] [--plan-only]\n", argv[0]);
            return 2;
        }
    }
    /* what training consumes: the loader must beat these */
    report("reference_train_mnist_cnn_b64", REF_MNIST_BATCH, 0.0,
           REF_MNIST_MS * 1e-3);
    report("reference_train_transformer_64x32", REF_XFMR_SENTENCES,
           REF_XFMR_TOKENS, REF_XFMR_MS * 1e-3);
    if (bench_plan())
        return 1;
    if (!plan_only && bench_loader(dir))
        return 1;
    return 0;
}
