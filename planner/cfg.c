/* cfg.c - the libconfig reading helpers that the cluster, profile and
 * strategy parsers share (planner-impl.h): errors naming file:line and the
 * key, unknown keys, strings, keys of the wrong type. */
#define _POSIX_C_SOURCE 200809L
#include <libconfig.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "planner/hg_planner.h"
#include "planner/planner-impl.h"

int hg__cfg_err(struct hg_cfgctx *p, const config_setting_t *s, const char *fmt, ...)
{
    if (!p->err || !p->errlen)
        return -1;
    int k = snprintf(p->err, p->errlen, "%s:%d: ", p->file,
                     s ? config_setting_source_line(s) : 0);
    if (k < 0 || (size_t)k >= p->errlen)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err + k, p->errlen - (size_t)k, fmt, ap);
    va_end(ap);
    return -1;
}

int hg__cfg_check_keys(struct hg_cfgctx *p, const config_setting_t *s, const char *what,
                      const char *const *allowed)
{
    int n = config_setting_length(s);
    for (int i = 0; i < n; i++) {
        const config_setting_t *c = config_setting_get_elem(s, (unsigned)i);
        const char *k = config_setting_name(c);
        int ok = 0;
        for (int j = 0; k && allowed[j]; j++)
            ok |= strcmp(k, allowed[j]) == 0;
        if (!ok) {
            char list[256] = "";
            size_t len = 0;
            for (int j = 0; allowed[j] && len < sizeof(list); j++)
                len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
                                        j ? ", " : "", allowed[j]);
            return hg__cfg_err(p, c, "%s: unknown key '%s' (known: %s)", what, k ? k : "?", list);
        }
    }
    return 0;
}

int hg__cfg_str(struct hg_cfgctx *p, const config_setting_t *grp, const char *key,
                const char *what, int allow_empty, char *dst, size_t n)
{
    const config_setting_t *s = config_setting_get_member(grp, key);
    if (!s)
        return 1;
    if (config_setting_type(s) != CONFIG_TYPE_STRING)
        return hg__cfg_err(p, s, "%s: key '%s': expected a string", what, key);
    const char *v = config_setting_get_string(s);
    if ((!allow_empty && !*v) || strlen(v) >= n)
        return hg__cfg_err(p, s, "%s: key '%s': empty or longer than %zu characters", what, key,
                    n - 1);
    snprintf(dst, n, "%s", v);
    return 0;
}

const char *hg__cfg_type_name(const config_setting_t *s)
{
    switch (config_setting_type(s)) {
    case CONFIG_TYPE_GROUP: return "a group";
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64: return "an integer";
    case CONFIG_TYPE_FLOAT: return "a number with a fraction";
    case CONFIG_TYPE_STRING: return "a string";
    case CONFIG_TYPE_BOOL: return "a boolean";
    case CONFIG_TYPE_ARRAY: return "an array";
    case CONFIG_TYPE_LIST: return "a list";
    default: return "of no type";
    }
}

int hg__cfg_member(struct hg_cfgctx *p, const config_setting_t *grp, const char *key,
                   const char *what, unsigned types, const char *expect,
                   const config_setting_t **out)
{
    const config_setting_t *s = grp ? config_setting_get_member(grp, key) : NULL;
    *out = NULL;
    if (!s)
        return 1;
    if (!(types & HG_CFG_T(config_setting_type(s))))
        return hg__cfg_err(p, s, "%s%s%s is %s, expected %s", what ? what : "",
                           what ? ": " : "", key, hg__cfg_type_name(s), expect);
    *out = s;
    return 0;
}

int hg__cfg_read_err(struct hg_cfgctx *p, config_t *cfg, const char *what)
{
    if (config_error_type(cfg) == CONFIG_ERR_FILE_IO)
        hg_kerr(p->err, p->errlen, "%s: cannot read the %s", p->file, what);
    else
        hg_kerr(p->err, p->errlen, "%s:%d: %s", p->file, config_error_line(cfg),
                config_error_text(cfg));
    config_destroy(cfg);
    return -1;
}
