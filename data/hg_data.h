/* hg_data.h - the data room: IDX files, sharded HDF5 datasets, batching
 * over heterogeneous ranks, the prefetching loader. Layout of a shard:
 * docs/data.md. Nothing here knows about graphs or communication: ranks
 * are numbers and budgets. Runtime errors return -1 with a message naming
 * the file, the dataset and the row. */
#ifndef HG_DATA_H
#define HG_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/hg_kernels.h"

/* ------------------------------------------------------------------ IDX */

/* An IDX file (optionally gzip-compressed): unsigned bytes, up to 4 dims. */
struct hg_idx {
    int ndim;
    int64_t dim[4];
    uint8_t *data; /* [dim[0] * ... * dim[ndim-1]] */
};

/* Loads path; on error returns -1 with a message naming the file. */
int hg_idx_load(const char *path, struct hg_idx *out, char *err, size_t errlen);
/* Parses an in-memory IDX image (not gzip): the fuzz target. name is used
 * in messages. */
int hg_idx_parse(const void *buf, size_t len, const char *name,
                 struct hg_idx *out, char *err, size_t errlen);
void hg_idx_free(struct hg_idx *idx);

/* -------------------------------------------------------------- datasets */

/* A field of every sample. SEQ: variable-length 1-D sequences stored as
 * <name>/tokens [T] and <name>/offsets [N+1] (i64); ARRAY: a dataset <name>
 * of shape [N, d1, ...] (fixed per-sample shape). */
enum hg_field_kind { HG_FIELD_SEQ, HG_FIELD_ARRAY };

struct hg_field {
    const char *name;
    enum hg_field_kind kind;
    enum hg_dtype dtype;  /* expected element type in memory (checked) */
    int rank;             /* ARRAY: per-sample rank (0 for labels); SEQ: 1 */
    int64_t vocab;        /* integer fields: ids must be in [0, vocab); 0: no check */
};

struct hg_dataset;

/* Opens every shard of spec: a directory (its *.h5 files in name order),
 * a comma-separated list of files, or a glob pattern. Reads sizes and
 * offsets only, never payload; checks every field's presence, dtype, rank
 * and per-sample shape in every shard, and that offsets are monotone and
 * end at the token count. Files stay open until close. cache_bytes bounds
 * the LRU cache of decoded samples (0: no cache). */
int hg_dataset_open(struct hg_dataset **out, const char *spec,
                    const struct hg_field *fields, int nfields,
                    size_t cache_bytes, char *err, size_t errlen);
void hg_dataset_close(struct hg_dataset *ds);
/* The spec of split's shards under data (hgpreprocess's layouts):
 * data/split/ (translation, lm) or data/split-*.h5 (images); -1 with err
 * naming what was looked for. */
int hg_dataset_split_spec(const char *data, const char *split, char *out, size_t len,
                          char *err, size_t errlen);
int64_t hg_dataset_size(const struct hg_dataset *ds);
int hg_dataset_nshards(const struct hg_dataset *ds);
const char *hg_dataset_shard_path(const struct hg_dataset *ds, int shard);
/* Global index -> (shard, row) by prefix sums. */
void hg_dataset_locate(const struct hg_dataset *ds, int64_t index, int *shard,
                       int64_t *row);
/* Per-sample size in tokens of a field (SEQ: its length; ARRAY: 1), known
 * from the offsets read at open. [size] */
const int32_t *hg_dataset_lengths(const struct hg_dataset *ds, int field);
/* Per-sample element shape of an ARRAY field (without the N axis). */
struct hg_shape hg_dataset_item_shape(const struct hg_dataset *ds, int field);
/* Copies sample index of field into dst (cap bytes): SEQ -> its tokens
 * (*count = length), ARRAY -> one item (*count = elements). Checks ids
 * against the field's vocab. Thread-safe (HDF5 calls are serialised). */
int hg_dataset_read(struct hg_dataset *ds, int field, int64_t index, void *dst,
                    size_t cap, int64_t *count, char *err, size_t errlen);
/* Cache statistics since open. */
void hg_dataset_cache_stats(const struct hg_dataset *ds, int64_t *hits,
                            int64_t *misses, size_t *bytes);

/* Writes one shard: samples are appended in memory-bounded chunks to
 * path + ".tmp" (created 0600: a half-written file is nobody's business), finish()
 * flushes, fsyncs and renames it to path; abort() (or an error) removes
 * the temporary file, so a shard either exists complete or not at all.
 * item_shape[f]: the per-sample shape of ARRAY fields (ignored for SEQ). */
struct hg_shard_writer;
int hg_shard_writer_open(struct hg_shard_writer **out, const char *path,
                         const struct hg_field *fields, int nfields,
                         const struct hg_shape *item_shape, char *err,
                         size_t errlen);
/* One sample: value[f] points at its data; count[f] is the SEQ length
 * (ignored for ARRAY fields, which take one item). */
int hg_shard_writer_add(struct hg_shard_writer *w, const void *const *value,
                        const int64_t *count, char *err, size_t errlen);
/* Declares the shard as number `index` of a set of `shards` shards holding
 * `samples` samples in all (root attributes set_index, set_shards,
 * set_samples): hg_dataset_open refuses such a set when a shard is
 * missing or the counts differ. */
int hg_shard_writer_set_info(struct hg_shard_writer *w, int64_t index, int64_t shards,
                             int64_t samples, char *err, size_t errlen);
int hg_shard_writer_finish(struct hg_shard_writer *w, char *err, size_t errlen);
void hg_shard_writer_abort(struct hg_shard_writer *w);

/* -------------------------------------------------------------- batching */

/* The default of --required-batch-size-multiple (fairseq's), one for
 * hgtrain and `hgpreprocess batches`, so that a preview plans the batches
 * training will; HG_BATCH_MULTIPLE_TEXT is its option-table default. */
#define HG_BATCH_MULTIPLE 8
#define HG_BATCH_MULTIPLE_TEXT HG__BATCH_STR(HG_BATCH_MULTIPLE)
#define HG__BATCH_STR(x) HG__BATCH_STR_(x)
#define HG__BATCH_STR_(x) #x

/* Budgets of one epoch over `world` ranks. Rank r's batch costs
 * count * max(length of its samples) (padding-aware) and must stay within
 * max_tokens * capacity[r] (0: no token limit) and max_sentences *
 * capacity[r] (0: no limit), where capacity is normalised so that its
 * largest entry is 1. Every count is a multiple of required_multiple or
 * smaller than it (the budget cannot hold that many of these lengths, or
 * the data ran out). Exact algorithm: data/batch.c. */
struct hg_batch_opts {
    int64_t max_tokens;
    int64_t max_sentences;
    int64_t required_multiple; /* 0 or 1: none */
    int world;
    const double *capacity;    /* [world], NULL: equal */
    /* [world] or NULL: explicit per-rank budgets that replace max_tokens
     * (max_sentences) scaled by capacity; an entry of 0 gives that rank no
     * samples (it runs dummy batches), at least one entry is > 0. */
    const int64_t *rank_max_tokens;
    const int64_t *rank_max_sentences;
    uint64_t seed;
    int shuffle;               /* 0: validation (deterministic order) */
};

struct hg_epoch;

/* Plans epoch `epoch` over samples of the given lengths [n]: buckets by
 * length, shuffles with (seed, epoch), cuts each step into one batch per
 * rank. Every sample lands in exactly one batch of one rank; every rank
 * has the same number of steps (a rank may get an empty batch). A sample
 * longer than any rank's budget is an error naming it. */
int hg_epoch_plan(struct hg_epoch **out, const int32_t *lengths, int64_t n,
                  const struct hg_batch_opts *o, uint64_t epoch, char *err,
                  size_t errlen);
void hg_epoch_free(struct hg_epoch *ep);
int64_t hg_epoch_steps(const struct hg_epoch *ep);
/* The sample indices of rank's batch at step: idx[*count] (may be 0). */
const int64_t *hg_epoch_batch(const struct hg_epoch *ep, int rank,
                              int64_t step, int64_t *count);

/* Resolved budgets of o (data/batch.c, step 0): tok[world], sent[world],
 * INT64_MAX for "no limit", 0 for "no samples". -1 on bad options. */
int hg_epoch_budgets(const struct hg_batch_opts *o, int64_t *tok, int64_t *sent,
                     char *err, size_t errlen);

/* A segment of an epoch (docs/data.md, "Segments"): from epoch step start
 * on, the samples no earlier segment consumed are cut for world ranks
 * with these resolved budgets. */
struct hg_epoch_seg {
    int64_t start;             /* first epoch step; 0 for segment 0 */
    int world;
    int64_t required_multiple;
    const int64_t *tok;        /* [world] resolved token budgets */
    const int64_t *sent;       /* [world] resolved sentence budgets */
};

/* The plan of the last of seg[nseg] after the earlier ones consumed
 * their steps: hg_epoch_batch serves steps hg_epoch_first_step(ep) ..
 * hg_epoch_steps(ep) - 1 for seg[nseg - 1].world ranks. seed and shuffle
 * as in hg_batch_opts. Errors: a segment starting after the end of the
 * previous one, bad budgets, a sample longer than every budget. */
int hg_epoch_plan_segments(struct hg_epoch **out, const int32_t *lengths, int64_t n,
                           const struct hg_epoch_seg *seg, int nseg, uint64_t seed,
                           int shuffle, uint64_t epoch, char *err, size_t errlen);
/* The first step the plan holds (its last segment's start; 0 for
 * hg_epoch_plan). */
int64_t hg_epoch_first_step(const struct hg_epoch *ep);

/* Segments as int64 words, as checkpoints hold them: per segment
 * [start, world, required_multiple, tok[world], sent[world]].
 * decode fills seg[] (pointers into w) and returns the count, or -1
 * naming what is corrupt. append adds a segment starting at start with
 * o's budgets to the malloc'ed *words [*nw]: 0 when the last segment has
 * the same world and budgets (nothing added), 1 when added (a segment
 * that starts at the last one's step replaces it), -1 on bad options. */
int hg_epoch_segs_decode(const int64_t *w, int64_t nw, struct hg_epoch_seg *seg,
                         int maxseg, char *err, size_t errlen);
int hg_epoch_segs_append(int64_t **words, int64_t *nw, int64_t start,
                         const struct hg_batch_opts *o, char *err, size_t errlen);

/* Where an iterator is: saved in checkpoints, restored exactly. */
struct hg_iter_state {
    uint64_t epoch;  /* 1-based */
    int64_t step;    /* next step within the epoch */
    /* the epoch's segments so far as words (hg_epoch_segs_decode); NULL,
     * 0: one segment with the run's own budgets (checkpoints before
     * segments existed) */
    const int64_t *segs; /* [nsegs] */
    int64_t nsegs;
    /* the training data the steps index (0, 0: not recorded): its sample
     * count and a 64-bit FNV-1a hash of the samples' costs */
    int64_t data_n;
    uint64_t data_hash;
};

/* ---------------------------------------------------------------- loader */

/* A collated batch: for each field, a tensor with the batch first.
 * SEQ fields: [B, L] padded with pad_id (L = longest sample) plus lengths;
 * ARRAY fields: [B, item shape...]. Buffers are owned by the loader and
 * valid until the next hg_loader_next. */
struct hg_batch {
    int64_t size;                  /* B (0: a dummy batch for this rank) */
    int64_t step;
    struct hg_tview field[8];      /* [nfields] */
    const int32_t *lengths[8];     /* SEQ fields: [B]; else NULL */
    int64_t tokens;                /* non-pad tokens of the first SEQ field */
    const int64_t *ids;            /* [B] each row's sample index in the
                                    * dataset (dropout's key); NULL: unknown */
    const struct hg_dataset *ds;   /* the dataset of ids (hg_batch_where);
                                    * NULL: unknown */
};

/* Where row i of b comes from, for an error about it: "; sample i is row
 * R of SHARD" into out[len] when b knows its dataset and sample ids, else
 * ""; returns out. */
const char *hg_batch_where(const struct hg_batch *b, int64_t i, char *out, size_t len);

struct hg_loader_opts {
    int rank;
    int prefetch;        /* batches prepared ahead by a thread; 0: inline */
    int32_t pad_id;
    double timeout_s;    /* a wait longer than this is an error; 0: 60 s */
};

struct hg_loader;

/* Iterates one rank's batches of ep from state->step on. */
int hg_loader_open(struct hg_loader **out, struct hg_dataset *ds,
                   const struct hg_epoch *ep, const struct hg_loader_opts *o,
                   int64_t first_step, char *err, size_t errlen);
/* 1: *b filled; 0: epoch done; -1: error (read error, timeout). */
int hg_loader_next(struct hg_loader *ld, struct hg_batch *b, char *err,
                   size_t errlen);
void hg_loader_close(struct hg_loader *ld);

#endif
