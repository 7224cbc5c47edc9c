/* pp-impl.h - private to the hgpreprocess program: the entry each command's
 * file defines (data/pp-images.c, pp-translation.c, pp-apply-bpe.c,
 * pp-lm.c, pp-batches.c; listed by the table in data/hgpreprocess.c), and
 * what the commands share from data/pp-common.c: the outputs of this run
 * (removed again if it fails), usage errors, progress lines, int vectors,
 * shards, and the text helpers (tokens, BPE codes, dictionary ids). The
 * arrows go one way: hgpreprocess.c -> pp-<command>.c -> pp-common.c. */
#ifndef HG_PP_IMPL_H
#define HG_PP_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/hg_base.h"
#include "data/bpe.h"
#include "data/dict.h"
#include "data/hg_data.h"
#include "kernels/hg_kernels.h"

#define ERRLEN 1024

/* ------------------------------------------------------------ commands */

/* A command: its options struct, the table of its options (base/opts.c)
 * and the function that runs it (its exit status: 0 ok, 1 error, 2 usage;
 * p->usage is the program's usage text). One per pp-<command>.c. */
struct pp_command {
    const char *name;
    const struct hg_opt *opts;
    int nopts;
    size_t size; /* sizeof its options struct */
    int (*run)(const void *opts, const struct hg_opt_prog *p);
};

extern const struct pp_command hg__pp_images;      /* pp-images.c */
extern const struct pp_command hg__pp_translation; /* pp-translation.c */
extern const struct pp_command hg__pp_lm;          /* pp-lm.c */
extern const struct pp_command hg__pp_batches;     /* pp-batches.c */
extern const struct pp_command hg__pp_apply_bpe;   /* pp-apply-bpe.c */

/* Option rows more than one command takes. */
#define NUM_SHARDS(T)                                                                 \
    {.name = "num-shards", .type = HG_OPT_I64, .offset = offsetof(T, nshards),       \
     .def = "1", .min = 1, .max = 99999, .metavar = "K",                              \
     .help = "shards per split (fewer when a split has fewer samples)"}
#define MIN_FREQUENCY(T)                                                              \
    {.name = "min-frequency", .type = HG_OPT_I64, .offset = offsetof(T, minfreq),    \
     .def = "2", .min = 1,                                                            \
     .help = "--bpe-merges: stop learning when the best pair is rarer than N"}
#define BPE_CHOICE(T)                                                                 \
    {.name = "bpe-merges", .type = HG_OPT_I64, .offset = offsetof(T, merges),        \
     .max = 10000000, .help = "learn N joint BPE merges from the training text"},     \
    {.name = "bpe-codes", .type = HG_OPT_STR, .offset = offsetof(T, codes),          \
     .metavar = "FILE", .help = "apply these BPE codes (subword-nmt format) instead"}
#define NOPTS(t) ((int)(sizeof(t) / sizeof((t)[0])))

/* "hgpreprocess[ cmd]: " fmt (with what), then the usage text; returns 2. */
int hg__pp_usage_error(const char *usage, const char *cmd, const char *fmt,
                       const char *what);

/* ------------------------------------------------ outputs of this run */

/* Remembers a file this run wrote (0, or -1 with err). */
int hg__pp_made_file(const char *path, char *err, size_t errlen);
/* mkdir -p, remembering the directories it creates. */
int hg__pp_make_dirs(const char *path, char *err, size_t errlen);
/* Forgets what this run made, removing it first when remove_them. */
void hg__pp_made_clear(int remove_them);
/* a/b, malloc'ed (exits on out of memory). */
char *hg__pp_path_join(const char *a, const char *b);

/* ------------------------------------------------------------ progress */

struct progress {
    const char *what;
    int tty;
    double t0, last;
};

void hg__pp_progress_start(struct progress *p, const char *what);
void hg__pp_progress_tick(struct progress *p, int64_t done);
/* Seconds since the start. */
double hg__pp_progress_end(struct progress *p, int64_t done);

/* --------------------------------------------------------- int vectors */

struct ivec {
    int32_t *v; /* [cap], the first n used */
    size_t n, cap;
};

/* Room for extra more ints (0, or -1 out of memory). */
int hg__pp_ivec_reserve(struct ivec *a, size_t extra);

/* ------------------------------------------------------------- shards */

/* One shard of samples [lo, hi), written via the shard writer. */
struct shard_out {
    struct hg_shard_writer *w;
    char *path;
};

int hg__pp_shard_open(struct shard_out *s, const char *path,
                      const struct hg_field *fields, int nfields,
                      const struct hg_shape *shapes, char *err, size_t errlen);
/* Commits the shard and remembers it as made. */
int hg__pp_shard_finish(struct shard_out *s, char *err, size_t errlen);
void hg__pp_shard_abort(struct shard_out *s);
/* Shard s of k over n samples: [n*s/k, n*(s+1)/k). */
int64_t hg__pp_shard_lo(int64_t n, int k, int s);
/* want shards, but no more than n and at least 1. */
int hg__pp_clamp_shards(int64_t want, int64_t n);
/* Refuses to mix with shards of an earlier run: any shard-NNNNN.h5 in dir
 * with NNNNN >= k would be read together with ours. */
int hg__pp_check_stale_shards(const char *dir, int k, char *err, size_t errlen);

/* --------------------------------------------------------------- text */

/* fopen(path, "rb"), or NULL with err. */
FILE *hg__pp_open_text(const char *path, char *err, size_t errlen);

/* Shared by the commands: tokenizer scratch, BPE, vocabulary. */
struct textctx {
    char **tok;             /* [tokcap] the current line's words */
    size_t tokcap;
    struct hg_bpe_vocab *vocab;
    struct hg_bpe *bpe;
};

/* Counts line's words into c->vocab. */
int hg__pp_add_words(struct textctx *c, char *line, char *err, size_t errlen);
/* Appends the BPE token ids of line to out. */
int hg__pp_segment_line(struct textctx *c, char *line, struct ivec *out,
                        char *err, size_t errlen);
/* Learns or loads the codes into c->bpe. */
int hg__pp_get_codes(struct textctx *c, int64_t merges, const char *codes,
                     int64_t min_freq, char *err, size_t errlen);

/* Maps BPE token ids to dictionary ids, growing as the BPE hands out new
 * tokens. */
struct idmap {
    int32_t *v; /* [n] dictionary id by BPE id, -1: not looked up yet */
    size_t n;
};

int hg__pp_idmap_get(struct idmap *m, const struct hg_bpe *b,
                     const struct hg_dict *d, int32_t tok, int32_t *out);
/* Adds BPE token counts cnt[0..n) to d. */
int hg__pp_dict_from_counts(struct hg_dict *d, const struct hg_bpe *b,
                            const int64_t *cnt, size_t n);
/* (*cnt)[id] += occurrences of BPE id in v, *cnt grown to the BPE's
 * tokens ([*n]). */
int hg__pp_count_tokens(int64_t **cnt, size_t *n, const struct hg_bpe *b,
                        const struct ivec *v);

#endif
