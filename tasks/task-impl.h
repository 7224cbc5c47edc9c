/* task-impl.h - private to tasks/: parsing the string values of a task's
 * options (struct hg_task_args) with errors that name the option. */
#ifndef HG_TASK_IMPL_H
#define HG_TASK_IMPL_H

#include <stddef.h>
#include <stdint.h>

struct hg_graph;

/* An integer in [lo, hi]. */
int hg__task_opt_int(const char *name, const char *v, int64_t lo, int64_t hi,
                     int64_t *out, char *err, size_t errlen);
/* A probability in [0, 1). */
int hg__task_opt_prob(const char *name, const char *v, float *out, char *err,
                      size_t errlen);
/* The translation task's --arch presets, "a|b|c" (tasks/translation.c). */
const char *hg_tr_archs(void);
/* 0/1 (also false/true). */
int hg__task_opt_bool(const char *name, const char *v, int *out, char *err,
                      size_t errlen);
/* --attention auto|fused|unfused: -1 (the graph's default: fused, unfused
 * in a GPU run of hgtrain), 1, 0. */
#define HG_TASK_ATTENTION_HELP                                                 \
    "attention layers: fused (one attention op), unfused (matmul, "           \
    "masked_fill, softmax, dropout, matmul) or auto (fused on the CPU, "      \
    "unfused on a GPU)"
int hg__task_opt_attention(const char *v, int *out, char *err, size_t errlen);
/* --activation-fn relu|gelu: the Transformer FFN's activation, 0 or 1
 * (hg_tlayer_cfg.gelu) */
#define HG_TASK_ACTIVATION_HELP                                                \
    "the feed-forward layers' activation: relu or gelu (RoBERTa's)"
int hg__task_opt_activation(const char *v, int *out, char *err, size_t errlen);
/* Applies it to g before the layers are built (-1: leaves g's default). */
void hg__task_attention(struct hg_graph *g, int mode);

#endif
