/* translation.h - the translation task's model for generation (`hgtrain
 * generate`): the trained Transformer rebuilt forward-only as two graphs
 * with the training graph's parameter names, so a checkpoint loads into
 * them:
 *
 *   encoder: src [B,S] -> encoder output [B,S,d] and, per decoder layer,
 *     the encoder-attention keys and values [B,S,d] (projected once per
 *     batch);
 *   decoder step (incremental): for N rows (sentences x beams), the
 *     previous token [N,1] at its position, per layer the cached
 *     self-attention keys/values of the earlier positions [N,L,d] (L = step
 *     + 1: row 0 is a masked dummy, as graphs have no empty dimension) and
 *     the rows' encoder keys/values -> log-probabilities [N,V] and the new
 *     keys/values row [N,1,d], which the host appends to its caches.
 *
 * With incremental = 0 the step instead reruns the whole decoder over the
 * prefix [N,step+1] (O(T^2): the reference the cached path is tested
 * against). */
#ifndef HG_TASKS_TRANSLATION_H
#define HG_TASKS_TRANSLATION_H

#include <stddef.h>
#include <stdint.h>

#include "tasks/hg_task.h"

/* the task itself (tasks/registry.c lists it) */
extern const struct hg_task hg_task_translation;
/* its --arch presets, "a|b|c" */
const char *hg_tr_archs(void);

struct hg_tr_gen;

struct hg_tr_gen_cfg {
    int64_t max_sentences; /* sentences per encoder batch */
    int64_t max_rows;      /* decoder rows per step (sentences x beam) */
    int64_t max_src;       /* longest source, </s> included */
    int64_t max_steps;     /* decoder positions per hypothesis, </s> included */
    int incremental;       /* 1: cached keys/values; 0: recompute the prefix */
};

/* Sets the task up on data (its dictionaries) with the training run's task
 * options and --arch (args), then builds and plans the graphs. */
int hg_tr_gen_new(struct hg_tr_gen **out, const char *data,
                  const struct hg_task_args *args, const struct hg_tr_gen_cfg *cfg,
                  char *err, size_t errlen);
void hg_tr_gen_free(struct hg_tr_gen *m);
/* Loads a training checkpoint's parameters (optimizer state ignored). */
int hg_tr_gen_load(struct hg_tr_gen *m, const char *path, char *err, size_t errlen);
int64_t hg_tr_gen_vocab(const struct hg_tr_gen *m); /* target dictionary size */
int64_t hg_tr_gen_max_positions(const struct hg_tr_gen *m); /* --max-target-positions */
int64_t hg_tr_gen_max_source_positions(const struct hg_tr_gen *m); /* --max-source-positions */
const char *hg_tr_gen_lang(const struct hg_tr_gen *m, int target);
int64_t hg_tr_gen_params(const struct hg_tr_gen *m); /* scalars (encoder + step) */

/* Runs the encoder over B sentences: src[i] holds len[i] ids, </s>
 * included. Starts a new batch (the decoder's caches are dropped). */
int hg_tr_gen_encode(struct hg_tr_gen *m, const int32_t *const *src, const int32_t *len,
                     int64_t B, char *err, size_t errlen);
/* Decoder step `step` (0, 1, ... for the current batch) for N rows: row r
 * decodes sentence row_sent[r] of the batch, continues row row_from[r] of
 * the previous step (ignored at step 0) and feeds token tok[r] (</s> at
 * step 0). *logp: [N,V] log-probabilities, valid until the next call. */
int hg_tr_gen_step(struct hg_tr_gen *m, int64_t step, int64_t N, const int32_t *row_sent,
                   const int32_t *row_from, const int32_t *tok, const float **logp,
                   char *err, size_t errlen);

#endif
