/* planner-impl.h - private to planner/: the libconfig reading helpers the
 * cluster, strategy and profile parsers share (defined in cluster.c). */
#ifndef HG_PLANNER_IMPL_H
#define HG_PLANNER_IMPL_H

#include <libconfig.h>
#include <stddef.h>
#include <stdio.h>

/* Where errors go and which file they name. */
struct hg_cfgctx {
    const char *file;
    char *err;
    size_t errlen;
};

/* "FILE:LINE: message" into p->err (line of s, 0 without one); returns -1. */
int hg__cfg_err(struct hg_cfgctx *p, const config_setting_t *s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Every child of group s is named in allowed (NULL-terminated); else -1
 * naming the key, its line and the known keys. */
int hg__cfg_check_keys(struct hg_cfgctx *p, const config_setting_t *s, const char *what,
                       const char *const *allowed);
/* A string member into dst[n]: 1 if absent, 0, -1 naming the key (not a
 * string, too long, or empty unless allow_empty). */
int hg__cfg_str(struct hg_cfgctx *p, const config_setting_t *grp, const char *key,
                const char *what, int allow_empty, char *dst, size_t n);
/* A setting's type in words: "an integer", "a string", "a list", ... */
const char *hg__cfg_type_name(const config_setting_t *s);
/* A bit of the types mask of hg__cfg_member: HG_CFG_T(CONFIG_TYPE_STRING). */
#define HG_CFG_T(type) (1u << (type))
/* Member key of grp into *out: 1 (and NULL) if absent, 0 if its type is
 * in the types mask, else -1 naming it: "WHAT: KEY is TYPE, expected
 * EXPECT" (no "WHAT: " when what is NULL).  A key given with the wrong
 * type is an error, never the default. */
int hg__cfg_member(struct hg_cfgctx *p, const config_setting_t *grp, const char *key,
                   const char *what, unsigned types, const char *expect,
                   const config_setting_t **out);
/* After config_read_file/_string failed: "NAME: cannot read the WHAT" or
 * "NAME:LINE: libconfig's message" into p->err; destroys cfg; returns -1. */
int hg__cfg_read_err(struct hg_cfgctx *p, config_t *cfg, const char *what);

/* planner/pipeline.c: the strategy file's `pipeline` block into s (0 when
 * absent, -1 naming the key), written back; the lowering's pipeline part
 * (after the places and cuts: -1 with err naming the group or stage),
 * freed. */
struct hg_strategy;
struct hg_lowered;
int hg__pipe_parse(struct hg_cfgctx *p, const config_setting_t *root, struct hg_strategy *s);
void hg__pipe_write(FILE *f, const struct hg_strategy *s);
int hg__pipe_lower(struct hg_lowered *lw, const struct hg_strategy *st, char *err,
                   size_t errlen);
void hg__pipe_free(struct hg_lowered *lw);
/* The simulator's price of a lowered pipeline (lw->nmicro > 0): its
 * stages' micro-steps in the schedule's order, each once its inputs have
 * arrived, transfers overlapping compute (FIFO per device pair), then
 * each device's updates: the iteration's seconds.  The micro-batches a
 * device holds at once (its activations' share of the batch, x / M). */
struct hg_pprice;
double hg__pipe_time(const struct hg_lowered *lw, const struct hg_pprice *pr);
int hg__pipe_inflight(const struct hg_lowered *lw, int d);

/* planner/tensor.c: the tensor-parallel layer of a lowering (lw->tp, after
 * the places: -1 with err naming the group it refuses), freed. */
int hg__tp_lower(struct hg_lowered *lw, const struct hg_strategy *st, char *err,
                 size_t errlen);
void hg__tp_free(struct hg_lowered *lw);

#endif
