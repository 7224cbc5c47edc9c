/* planner-impl.h - private to planner/: the libconfig reading helpers the
 * cluster and strategy parsers share (defined in cluster.c). */
#ifndef HG_PLANNER_IMPL_H
#define HG_PLANNER_IMPL_H

#include <libconfig.h>
#include <stddef.h>

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

#endif
