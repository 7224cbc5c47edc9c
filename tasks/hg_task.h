/* hg_task.h - the task plug-in ABI (versioned). A task declares its
 * options and dataset fields, builds its model as a graph (forward and a
 * loss that is a SUM), fills the graph's inputs from a collated batch and
 * says how many units (sentences, tokens, pixels) the loss sums over. The
 * controller does everything else: batching, backward, optimizer, ranks.
 *
 * Built-in tasks are rows of hg_task_registry[] (tasks/registry.c). An
 * external task is a shared object exporting
 *     const struct hg_task *hg_task_plugin(void);
 * whose abi_version must equal HG_TASK_ABI_VERSION (hgtrain --task-plugin
 * PATH.so). Worked example: tasks/examples/; guide: docs/tasks.md.
 */
#ifndef HG_TASK_H
#define HG_TASK_H

#include <stddef.h>
#include <stdint.h>

#include "data/hg_data.h"
#include "graph/hg_graph.h"

#define HG_TASK_ABI_VERSION 3
#define HG_TASK_MAX_METRICS 4

/* An option the task adds to hgtrain's (--name VALUE); def may be NULL.
 * flag 1: a switch given as --name alone (its value is then "1"; a
 * config file may still give 0/1). */
struct hg_task_option {
    const char *name;
    const char *def;
    const char *help;
    int flag;
};

/* The task's options as parsed: values[i] for options[i] (defaults
 * applied; NULL if unset and no default). */
struct hg_task_args {
    const char *const *values;
    const char *arch;         /* hgtrain's --arch NAME, or NULL (ABI 2) */
};

/* What build() made. */
struct hg_task_model {
    int loss;                 /* [1]: sum over the batch of the loss */
    int nll;                  /* [1]: sum of the plain NLL when the loss is
                                 another quantity (label smoothing), logged
                                 as nll_loss; -1: the loss is the NLL (ABI 2) */
    int metric_src;           /* a tensor metrics() reads (logits), or -1 */
    int64_t sym[8];           /* symbols fill() resolves per batch (ids from hg_graph_sym) */
    int nsym;
};

/* Per-batch results of fill(). */
struct hg_task_fill {
    int64_t sym_value[8];     /* value of each model symbol for this batch */
    double sample_size;       /* units the loss sums over (weight of this batch) */
};

/* Optional (ABI 3): a forward-only model for sequence generation
 * (`hgtrain generate`, `hgtrain interactive`), rebuilt with the training
 * graph's parameter names so that a checkpoint loads into its graphs. */
struct hg_task_gen_cfg {
    int64_t max_sentences; /* sentences per encoder batch */
    int64_t max_rows;      /* decoder rows per step (sentences x beam) */
    int64_t max_src;       /* longest source, </s> included */
    int64_t max_steps;     /* decoder positions per hypothesis, </s> included */
    int incremental;       /* 1: cached keys/values; 0: recompute the prefix */
};

#define HG_TASK_GEN_MAX_GRAPHS 4

struct hg_task_gen {
    /* Sets the task up on data with the training run's task options and
     * --arch (args), then builds and plans the graphs into *model. */
    int (*open)(void **model, const char *data, const struct hg_task_args *args,
                const struct hg_task_gen_cfg *cfg, char *err, size_t errlen);
    void (*close)(void *model);
    /* The graphs whose parameters a checkpoint fills, with their
     * executors (at most HG_TASK_GEN_MAX_GRAPHS); returns how many. The
     * caller loads them (the task never reads checkpoints itself). */
    int (*graphs)(void *model, struct hg_graph **g, struct hg_exec **ex);
    int64_t (*vocab)(const void *model);  /* target dictionary size */
    /* --max-source-positions (target 0) or --max-target-positions (1) */
    int64_t (*max_positions)(const void *model, int target);
    const char *(*lang)(const void *model, int target); /* "en", "es" */
    int64_t (*params)(const void *model);  /* scalars in all graphs */
    /* Runs the encoder over B sentences: src[i] holds len[i] ids, </s>
     * included. Starts a new batch (the decoder's caches are dropped). */
    int (*encode)(void *model, const int32_t *const *src, const int32_t *len, int64_t B,
                  char *err, size_t errlen);
    /* Decoder step `step` (0, 1, ... for the current batch) for N rows:
     * row r decodes sentence row_sent[r] of the batch, continues row
     * row_from[r] of the previous step (ignored at step 0) and feeds token
     * tok[r] (</s> at step 0). *logp: [N,V] log-probabilities, valid until
     * the next call. */
    int (*step)(void *model, int64_t step, int64_t N, const int32_t *row_sent,
                const int32_t *row_from, const int32_t *tok, const float **logp,
                char *err, size_t errlen);
};

struct hg_task {
    int abi_version;          /* HG_TASK_ABI_VERSION */
    const char *name;
    const char *help;         /* one line */
    const char *sample_unit;  /* "sentences", "tokens", "pixels", ... */
    const struct hg_task_option *options; /* terminated by {NULL} */
    const struct hg_field *fields;        /* dataset fields of a split */
    int nfields;
    const char *metric_names[HG_TASK_MAX_METRICS]; /* NULL-terminated */
    int maximize_metric0;     /* 1 if larger metric_names[0] is better */

    /* Reads dictionaries etc. from data; *state is the task's own. */
    int (*setup)(void **state, const char *data, const struct hg_task_args *args,
                 char *err, size_t errlen);
    void (*teardown)(void *state);
    /* Per-sample batching cost from the split's field lengths (fairseq:
     * max(src, tgt)); NULL: the first field's lengths. */
    void (*cost)(void *state, const struct hg_dataset *ds, int32_t *out);
    /* Builds forward + loss for batches up to max_batch samples and
     * max_len positions (train: dropout on).  Name the batch symbol
     * "batch" and declare sequence-length symbols with max_len: with
     * --max-tokens the controller then plans for batch x length <=
     * max-tokens instead of max_batch x max_len (so a length symbol must
     * not exceed the sample's batching cost from cost()). */
    int (*build)(void *state, struct hg_graph *g, int64_t max_batch,
                 int64_t max_len, int train, struct hg_task_model *m,
                 char *err, size_t errlen);
    /* Copies batch b into the graph's inputs, each contiguous in its shape
     * for this batch, and returns the symbol values and the sample size in
     * f; the controller resolves the symbols before running. b->size 0
     * (a dummy batch) must give sample_size 0. */
    int (*fill)(void *state, const struct hg_batch *b, struct hg_graph *g,
                struct hg_exec *ex, const struct hg_task_model *m,
                struct hg_task_fill *f, char *err, size_t errlen);
    /* Optional: adds this batch's metric sums to acc[] after a forward
     * (e.g. acc[0] += correct predictions); the controller divides by the
     * summed sample_size. */
    void (*metrics)(void *state, const struct hg_batch *b, struct hg_graph *g,
                    struct hg_exec *ex, const struct hg_task_model *m,
                    double *acc);
    /* Optional (ABI 3): generation, or NULL. */
    const struct hg_task_gen *gen;
};

/* The training graph's recipe (tasks/recipe.c).  Hooks add what a caller
 * needs between its stages (each may be NULL; ctx is theirs). */
struct hg_task_recipe {
    void *ctx;
    /* after the task's build(): its model checked */
    int (*forward)(void *ctx, struct hg_graph *g, struct hg_task_model *m, char *err,
                   size_t errlen);
    /* after the backward, before the optimizer (gradient aggregation) */
    int (*backward)(void *ctx, struct hg_graph *g, struct hg_task_model *m, char *err,
                    size_t errlen);
    /* after the optimizer */
    int (*update)(void *ctx, struct hg_graph *g, struct hg_task_model *m, char *err,
                  size_t errlen);
};

/* The optimizer whose update ops a task's training graph gets when
 * --optimizer is not given: hgtrain's default and hgplan --task's alike
 * (a strategy planned with the defaults runs with the defaults). */
#define HG_TASK_DEFAULT_OPTIMIZER "sgd"

struct hg_task_graph_opts {
    int64_t batch, max_len;   /* build()'s max_batch, max_len */
    int train;                /* build()'s: dropout on */
    int backward;             /* 1: the backward and the update ops too */
    enum hg_optim optim;
    union hg_attr hyper;      /* the optimizer's hyper-parameters */
    const struct hg_task_recipe *hooks; /* NULL: none */
};

/* Builds the task's graph into g: build() (its model into m, checked:
 * the symbols it lists, its nll tensor), then with o->backward
 * hg_graph_backward of m->loss and hg_graph_optimizer.  Without hooks
 * this is the graph a strategy file indexes by node id: hgtrain's
 * controller, its --strategy loader and hgplan --task all build theirs
 * here.  -1 with err (the task's, or naming the task). */
int hg_task_graph(struct hg_graph *g, const struct hg_task *task, void *ts,
                  const struct hg_task_graph_opts *o, struct hg_task_model *m, char *err,
                  size_t errlen);

/* Each sample's batching cost in ds into out[n] (the task's cost(), else
 * the first field's lengths); returns the longest, at least 1. */
int32_t hg_task_costs(const struct hg_task *task, void *ts, const struct hg_dataset *ds,
                      int32_t *out);
/* The longest sample of split under data by that cost: the length a
 * training graph's memory is priced at (every device's planned peak), by
 * hgtrain --strategy's check, hgtrain --plan and hgplan --task alike, so
 * that a strategy one of them accepts the others accept. -1 with err. */
int hg_task_longest(const struct hg_task *task, void *ts, const char *data, const char *split,
                    int32_t *len, char *err, size_t errlen);

/* Built-in tasks. */
extern const struct hg_task *const hg_task_registry[];
const struct hg_task *hg_task_find(const char *name);
/* A built-in task's --arch choices, "a|b|c", or "" when it has no --arch
 * (its options set the model); NULL for a plug-in (it checks args->arch). */
const char *hg_task_archs(const struct hg_task *t);
/* dlopens path and checks its ABI version; the handle stays open. */
const struct hg_task *hg_task_load_plugin(const char *path, char *err,
                                          size_t errlen);
/* A task's options as rows of a program's option table (base/opts.c):
 * text values in a char *[n] array (row i at offset i * sizeof(char *)),
 * switches as HG_OPTF_SWITCH, in --help section group. malloc'ed [*n];
 * NULL with *n = 0 when there are none or memory ran out (*n = -1). */
struct hg_opt *hg_task_opt_rows(const struct hg_task_option *opts, int group, int *n);

#endif
