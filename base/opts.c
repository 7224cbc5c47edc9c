/* opts.c - the option parser every program uses (base/hg_base.h): a
 * program's tables of struct hg_opt rows drive its command line, its
 * config file (libconfig), --help, suggestions and the text form.
 *
 * A value is checked where it is read, so that its error names where it
 * came from: "--batch: expected an integer >= 1, got '0'" or
 * "run.cfg:3: key 'lr': expected a number, got a string". */
#define _POSIX_C_SOURCE 200809L
#include "base/hg_base.h"

#include <errno.h>
#include <libconfig.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* A row of the program: p->sets[set].opts[idx]. */
struct ref {
    int set, idx;
};

static const struct hg_opt *row(const struct hg_opt_prog *p, struct ref r)
{
    return &p->sets[r.set].opts[r.idx];
}

static void *field(const struct hg_opt_prog *p, struct ref r)
{
    return (char *)p->sets[r.set].base + row(p, r)->offset;
}

#define AS(p, r, T) ((T *)field(p, r))

static void mark_given(const struct hg_opt_prog *p, struct ref r)
{
    if (p->sets[r.set].given)
        p->sets[r.set].given[r.idx] = 1;
}

/* name[0..len) equals s, with '_' in name read as '-'. */
static int name_eq(const char *name, size_t len, const char *s)
{
    if (!s || strlen(s) != len)
        return 0;
    for (size_t i = 0; i < len; i++)
        if ((name[i] == '_' ? '-' : name[i]) != s[i])
            return 0;
    return 1;
}

/* The row named (or aliased) name[0..len); 1 if found. */
static int find(const struct hg_opt_prog *p, const char *name, size_t len, struct ref *r)
{
    for (int s = 0; s < p->nsets; s++)
        for (int i = 0; i < p->sets[s].n; i++) {
            const struct hg_opt *o = &p->sets[s].opts[i];
            if (name_eq(name, len, o->name) || name_eq(name, len, o->alias)) {
                *r = (struct ref){s, i};
                return 1;
            }
        }
    return 0;
}

static int find_short(const struct hg_opt_prog *p, char c, struct ref *r)
{
    for (int s = 0; s < p->nsets; s++)
        for (int i = 0; i < p->sets[s].n; i++)
            if (c && p->sets[s].opts[i].short_name == c) {
                *r = (struct ref){s, i};
                return 1;
            }
    return 0;
}

/* word[0..len) spelled with '-' */
static void dashed(const char *word, size_t len, char *out, size_t outlen)
{
    snprintf(out, outlen, "%.*s", (int)len, word);
    for (char *c = out; *c; c++)
        if (*c == '_')
            *c = '-';
}

/* " (did you mean PREFIXNAME?)" or "": the name or alias nearest to
 * word[0..len) */
static const char *suggest(const struct hg_opt_prog *p, const char *word, size_t len,
                           const char *prefix, char *out, size_t outlen)
{
    char w[128];
    dashed(word, len, w, sizeof(w));
    struct hg_suggest sg;
    hg_suggest_init(&sg, w);
    for (int s = 0; s < p->nsets; s++)
        for (int i = 0; i < p->sets[s].n; i++) {
            hg_suggest_add(&sg, p->sets[s].opts[i].name);
            hg_suggest_add(&sg, p->sets[s].opts[i].alias);
        }
    const char *b = hg_suggest_best(&sg);
    out[0] = 0;
    if (b)
        snprintf(out, outlen, " (did you mean %s%s?)", prefix, b);
    return out;
}

/* -1 with err when word[0..len) is an option the program refuses;
 * where: "--" or "FILE:LINE: key " */
static int refuse(const struct hg_opt_prog *p, const char *word, size_t len, const char *where,
                  char *err, size_t errlen)
{
    char w[128];
    dashed(word, len, w, sizeof(w));
    for (int k = 0; p->refused && p->refused[k].name; k++)
        if (strcmp(w, p->refused[k].name) == 0)
            return hg_kerr(err, errlen, "%s%s: %s: %s", where, w,
                           p->refused_what ? p->refused_what : "not an option here",
                           p->refused[k].why);
    return 0;
}

/* ------------------------------------------------------------ values */

static int parse_i64(const char *s, int64_t *v)
{
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (end == s || *end || errno)
        return -1;
    *v = x;
    return 0;
}

static int parse_real(const char *s, double *v)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    while (end != s && (*end == ' ' || *end == '\t'))
        end++;
    if (end == s || *end || errno == ERANGE || !isfinite(x))
        return -1;
    *v = x;
    return 0;
}

/* "2,1,1", "0.9,0.98", "(0.9, 0.98)", "[0.9, 0.98]": v[*n], malloc'ed. */
static int parse_list(const char *s, double **out, int *count)
{
    while (*s == ' ')
        s++;
    size_t n = strlen(s);
    while (n && s[n - 1] == ' ')
        n--;
    char *buf = malloc(n + 1);
    if (!buf)
        return -1;
    memcpy(buf, s, n);
    buf[n] = 0;
    char *q = buf;
    if (n >= 2 && ((q[0] == '(' && q[n - 1] == ')') || (q[0] == '[' && q[n - 1] == ']'))) {
        q[n - 1] = 0;
        q++;
    }
    int cap = 1;
    for (char *c = q; *c; c++)
        cap += *c == ',';
    double *v = malloc((size_t)cap * sizeof(*v));
    int cnt = 0, rc = v ? 0 : -1;
    for (char *tok = q; rc == 0 && tok;) {
        char *comma = strchr(tok, ',');
        if (comma)
            *comma = 0;
        while (*tok == ' ' || *tok == '\t')
            tok++;
        if (parse_real(tok, &v[cnt]) != 0)
            rc = -1;
        cnt++;
        tok = comma ? comma + 1 : NULL;
    }
    free(buf);
    if (rc != 0) {
        free(v);
        return -1;
    }
    *out = v;
    *count = cnt;
    return 0;
}

/* x as written: whole numbers in full (1048576, not 1.04858e+06). */
static const char *num_text(double x, char *buf, size_t len)
{
    if (x == floor(x) && fabs(x) < 1e19)
        snprintf(buf, len, "%.0f", x);
    else
        snprintf(buf, len, "%g", x);
    return buf;
}

/* A number's bounds in words: " > 0", " in [0, 1]", " >= 1" or "". */
static void bounds_text(const struct hg_opt *o, char *buf, size_t len)
{
    char a[32], b[32];
    if (o->flags & HG_OPTF_POSITIVE)
        snprintf(buf, len, " > 0");
    else if (o->max != 0 && o->max > o->min)
        snprintf(buf, len, " in [%s, %s]", num_text(o->min, a, sizeof(a)),
                 num_text(o->max, b, sizeof(b)));
    else if (isfinite(o->min))
        snprintf(buf, len, " >= %s", num_text(o->min, a, sizeof(a)));
    else
        buf[0] = 0;
}

static int in_bounds(const struct hg_opt *o, double v)
{
    if (o->flags & HG_OPTF_POSITIVE)
        return v > 0;
    return v >= o->min && !(o->max != 0 && o->max > o->min && v > o->max);
}

/* What a value of o must look like: "an integer >= 1", "sgd, adam or
 * adamw", "up to 16 integers >= 2 separated by commas". */
static void expected(const struct hg_opt *o, char *buf, size_t len)
{
    char b[96];
    bounds_text(o, b, sizeof(b));
    switch (o->type) {
    case HG_OPT_INT:
    case HG_OPT_I64:
        snprintf(buf, len, "an integer%s", b);
        return;
    case HG_OPT_REAL:
        snprintf(buf, len, "%s%s", o->flags & HG_OPTF_WHOLE ? "a whole number" : "a number", b);
        return;
    case HG_OPT_BOOL:
        snprintf(buf, len, "true or false");
        return;
    case HG_OPT_STR:
    case HG_OPT_ENUM:
        if (!o->choices) {
            snprintf(buf, len, "a string");
            return;
        }
        buf[0] = 0;
        for (const char *c = o->choices; *c;) {
            const char *bar = strchr(c, '|');
            size_t cl = bar ? (size_t)(bar - c) : strlen(c);
            size_t k = strlen(buf);
            snprintf(buf + k, len - k, "%s%.*s",
                     c == o->choices ? "" : bar ? ", " : " or ", (int)cl, c);
            c += cl + (bar != NULL);
        }
        return;
    case HG_OPT_LIST: {
        char cnt[48] = "";
        if (o->min_count && o->min_count == o->max_count)
            snprintf(cnt, sizeof(cnt), "%d ", o->min_count);
        else if (o->min_count > 1 && o->max_count)
            snprintf(cnt, sizeof(cnt), "%d to %d ", o->min_count, o->max_count);
        else if (o->max_count)
            snprintf(cnt, sizeof(cnt), "up to %d ", o->max_count);
        else if (o->min_count > 1)
            snprintf(cnt, sizeof(cnt), "at least %d ", o->min_count);
        int one = o->min_count == 1 && o->max_count == 1;
        snprintf(buf, len, "%s%s%s%s%s%s%s", cnt,
                 o->flags & HG_OPTF_WHOLE ? "integer" : "number", one ? "" : "s", b,
                 one ? "" : " separated by commas", o->empty ? ", or " : "",
                 o->empty ? o->empty : "");
        return;
    }
    case HG_OPT_IGNORED:
        break;
    }
    snprintf(buf, len, "anything");
}

/* "WHERE: expected ..., got 'TEXT'" (-1), with a suggestion among the
 * choices of a STR or ENUM. */
static int bad_value(const struct hg_opt *o, const char *where, const char *text, char *err,
                     size_t errlen)
{
    char want[512], hint[160] = "";
    expected(o, want, sizeof(want));
    if (o->choices && (o->type == HG_OPT_STR || o->type == HG_OPT_ENUM)) {
        char names[512];
        const char *ptr[64];
        int n = 0;
        snprintf(names, sizeof(names), "%s", o->choices);
        for (char *c = names; c && n < 63;) {
            ptr[n++] = c;
            c = strchr(c, '|');
            if (c)
                *c++ = 0;
        }
        ptr[n] = NULL;
        hg_suggest_text(text, ptr, "", hint, sizeof(hint));
    }
    return hg_kerr(err, errlen, "%s: expected %s, got '%s'%s", where, want, text, hint);
}

/* The index of text among o's choices, or -1. */
static int choice_index(const struct hg_opt *o, const char *text)
{
    size_t tl = strlen(text);
    int k = 0;
    for (const char *c = o->choices; c && *c; k++) {
        const char *bar = strchr(c, '|');
        size_t cl = bar ? (size_t)(bar - c) : strlen(c);
        if (cl == tl && strncmp(c, text, cl) == 0)
            return k;
        c += cl + (bar != NULL);
    }
    return -1;
}

/* The k-th choice into buf. */
static const char *choice_at(const struct hg_opt *o, int k, char *buf, size_t len)
{
    buf[0] = 0;
    for (const char *c = o->choices; c && *c; k--) {
        const char *bar = strchr(c, '|');
        size_t cl = bar ? (size_t)(bar - c) : strlen(c);
        if (k == 0) {
            snprintf(buf, len, "%.*s", (int)cl, c);
            break;
        }
        c += cl + (bar != NULL);
    }
    return buf;
}

static int set_string(char **dst, const char *v)
{
    char *c = strdup(v);
    if (!c)
        return -1;
    free(*dst);
    *dst = c;
    return 0;
}

/* Checks v[n] against o's count and bounds, then stores it (taking v,
 * which may be NULL when n is 0). */
static int store_list(const struct hg_opt *o, struct hg_opt_list *l, double *v, int n,
                      const char *where, const char *text, char *err, size_t errlen)
{
    int ok = n >= o->min_count && !(o->max_count && n > o->max_count);
    for (int i = 0; ok && i < n; i++)
        ok = in_bounds(o, v[i]) && (!(o->flags & HG_OPTF_WHOLE) || v[i] == floor(v[i]));
    if (!ok || n == 0) {
        free(v);
        v = NULL;
    }
    if (!ok)
        return bad_value(o, where, text, err, errlen);
    free(l->v);
    l->v = v;
    l->n = n;
    return 0;
}

/* A number just read (text: how it was written) into its field. */
static int store_number(const struct hg_opt_prog *p, struct ref r, double v, int64_t iv,
                        const char *where, const char *text, char *err, size_t errlen)
{
    const struct hg_opt *o = row(p, r);
    double x = o->type == HG_OPT_REAL ? v : (double)iv;
    if (!in_bounds(o, x) || (o->type == HG_OPT_INT && (iv < INT_MIN || iv > INT_MAX)) ||
        ((o->flags & HG_OPTF_WHOLE) && x != floor(x)))
        return bad_value(o, where, text, err, errlen);
    if (o->type == HG_OPT_INT)
        *AS(p, r, int) = (int)iv;
    else if (o->type == HG_OPT_I64)
        *AS(p, r, int64_t) = iv;
    else
        *AS(p, r, double) = v;
    return 0;
}

/* Stores text (from the command line or a default) into the row's field;
 * neg: --no-NAME. where names the source in errors. */
static int set_text(const struct hg_opt_prog *p, struct ref r, const char *text, int neg,
                    const char *where, char *err, size_t errlen)
{
    const struct hg_opt *o = row(p, r);
    int64_t iv = 0;
    double v = 0;
    switch (o->type) {
    case HG_OPT_INT:
    case HG_OPT_I64:
        if (parse_i64(text, &iv) != 0)
            return bad_value(o, where, text, err, errlen);
        if (store_number(p, r, 0, iv, where, text, err, errlen) != 0)
            return -1;
        break;
    case HG_OPT_REAL:
        if (parse_real(text, &v) != 0)
            return bad_value(o, where, text, err, errlen);
        if (store_number(p, r, v, 0, where, text, err, errlen) != 0)
            return -1;
        break;
    case HG_OPT_BOOL:
        /* the command line gives no text; a default says "1" or "0" */
        *AS(p, r, int) = neg ? 0 : !text || strcmp(text, "0") != 0;
        break;
    case HG_OPT_STR:
        if (o->choices && choice_index(o, text) < 0)
            return bad_value(o, where, text, err, errlen);
        if (set_string(AS(p, r, char *), text) != 0)
            return hg_kerr(err, errlen, "%s: out of memory", where);
        break;
    case HG_OPT_ENUM: {
        int k = choice_index(o, text);
        if (k < 0)
            return bad_value(o, where, text, err, errlen);
        *AS(p, r, int) = k;
        break;
    }
    case HG_OPT_LIST: {
        double *l = NULL; /* NULL for the empty word */
        int n = 0;
        if (!(o->empty && strcmp(text, o->empty) == 0) && parse_list(text, &l, &n) != 0)
            return bad_value(o, where, text, err, errlen);
        if (store_list(o, AS(p, r, struct hg_opt_list), l, n, where, text, err, errlen) != 0)
            return -1;
        break;
    }
    case HG_OPT_IGNORED:
        return 0;
    }
    return o->check ? o->check(field(p, r), where, err, errlen) : 0;
}

/* ------------------------------------------------------- command line */

/* One option of the command line: its row (found) and value (NULL for
 * switches), neg for --no-NAME. */
struct tok {
    struct ref r;
    int found, neg;
    const char *value;
};

/* Splits argv[1..argc) into tokens. lenient (peek): unknown options are
 * assumed to take a value and nothing is an error. Returns the count or
 * -1 with err. */
static int tokenize(const struct hg_opt_prog *p, int argc, char **argv, int lenient,
                    struct tok *out, char *err, size_t errlen)
{
    int n = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *name, *eq = NULL;
        size_t len;
        struct tok t = {.found = 0};
        char shown[128];
        if (a[0] == '-' && a[1] == '-' && a[2]) {
            name = a + 2;
            eq = strchr(name, '=');
            len = eq ? (size_t)(eq - name) : strlen(name);
            snprintf(shown, sizeof(shown), "--%.*s", (int)len, name);
            /* on the command line, names are spelled with '-' only */
            if (!memchr(name, '_', len)) {
                t.found = find(p, name, len, &t.r);
                struct ref nr;
                if (!t.found && len > 3 && strncmp(name, "no-", 3) == 0 &&
                    find(p, name + 3, len - 3, &nr) && row(p, nr)->type == HG_OPT_BOOL &&
                    (row(p, nr)->flags & HG_OPTF_NEGATABLE)) {
                    t.r = nr;
                    t.found = t.neg = 1;
                }
            }
        } else if (a[0] == '-' && a[1] && a[1] != '-') {
            name = a + 1;
            len = 1;
            snprintf(shown, sizeof(shown), "-%c", a[1]);
            t.found = find_short(p, a[1], &t.r);
            if (a[2]) /* -cFILE */
                eq = a + 1;
        } else {
            if (lenient)
                continue;
            return hg_kerr(err, errlen, "unexpected argument '%s'", a);
        }
        if (!t.found && !lenient) {
            char hint[160];
            if (a[1] == '-' && refuse(p, name, len, "--", err, errlen) != 0)
                return -1;
            return hg_kerr(err, errlen, "unknown option '%s'%s (see --help)%s", shown,
                           a[1] == '-' ? suggest(p, name, len, "--", hint, sizeof(hint)) : "",
                           p->unknown_note ? p->unknown_note : "");
        }
        enum hg_opt_type type = t.found ? row(p, t.r)->type : HG_OPT_STR;
        unsigned flags = t.found ? row(p, t.r)->flags : 0;
        if (type == HG_OPT_BOOL) {
            if (eq) {
                if (lenient)
                    continue;
                return hg_kerr(err, errlen, "%s takes no value", shown);
            }
        } else if (type == HG_OPT_IGNORED) {
            t.value = eq ? eq + 1 : NULL;
        } else if (type == HG_OPT_STR && (flags & HG_OPTF_SWITCH)) {
            t.value = eq ? eq + 1 : "1";
        } else if (eq) {
            t.value = eq + 1;
        } else if (i + 1 < argc) {
            t.value = argv[++i];
        } else {
            if (lenient)
                break;
            return hg_kerr(err, errlen, "%s needs a value", shown);
        }
        out[n++] = t;
    }
    return n;
}

/* ------------------------------------------------------------ config */

/* the parse error of hg_config_read_file (a static text, as libconfig's) */
static int config_fail(config_t *cfg, config_error_t type, const char *text, int line)
{
    cfg->error_type = type;
    cfg->error_text = text;
    cfg->error_file = NULL;
    cfg->error_line = line;
    return CONFIG_FALSE;
}

int hg_config_read_file(config_t *cfg, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return config_fail(cfg, CONFIG_ERR_FILE_IO, "file I/O error", 0);
    size_t len = 0, cap = 0;
    char *buf = NULL;
    int too_big = 0, io = 0;
    for (;;) {
        if (cap - len < 2) { /* room for a read and the NUL */
            size_t ncap = cap ? 2 * cap : 65536;
            char *b = realloc(buf, ncap);
            if (!b) {
                io = 1;
                break;
            }
            buf = b;
            cap = ncap;
        }
        size_t n = fread(buf + len, 1, cap - len - 1, f);
        len += n;
        if (len > HG_CONFIG_MAX_BYTES) {
            too_big = 1;
            break;
        }
        if (n == 0) {
            io = ferror(f) != 0;
            break;
        }
    }
    fclose(f);
    if (io || too_big) {
        free(buf);
        return too_big ? config_fail(cfg, CONFIG_ERR_PARSE, "file larger than 256 MiB", 0)
                       : config_fail(cfg, CONFIG_ERR_FILE_IO, "file I/O error", 0);
    }
    buf[len] = '\0';
    const char *nul = memchr(buf, '\0', len);
    if (nul) {
        int line = 1;
        for (const char *c = buf; c < nul; c++)
            line += *c == '\n';
        free(buf);
        return config_fail(cfg, CONFIG_ERR_PARSE, "a NUL byte (not a text file?)", line);
    }
    int ok = config_read_string(cfg, buf);
    free(buf);
    return ok;
}

/* 0 with cfg to config_destroy, or -1 with err (and nothing to free). */
static int read_config(config_t *cfg, const char *path, char *err, size_t errlen)
{
    config_init(cfg);
    if (hg_config_read_file(cfg, path))
        return 0;
    if (config_error_type(cfg) == CONFIG_ERR_FILE_IO)
        hg_kerr(err, errlen, "%s: cannot read the config file", path);
    else
        hg_kerr(err, errlen, "%s:%d: %s", config_error_file(cfg) ? config_error_file(cfg) : path,
                config_error_line(cfg), config_error_text(cfg));
    config_destroy(cfg);
    return -1;
}

static const char *setting_type_word(int t)
{
    switch (t) {
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64: return "an integer";
    case CONFIG_TYPE_FLOAT: return "a number";
    case CONFIG_TYPE_STRING: return "a string";
    case CONFIG_TYPE_BOOL: return "a boolean";
    case CONFIG_TYPE_GROUP: return "a group";
    case CONFIG_TYPE_ARRAY: return "an array";
    case CONFIG_TYPE_LIST: return "a list";
    default: return "something else";
    }
}

static const char *type_word(enum hg_opt_type t)
{
    switch (t) {
    case HG_OPT_INT:
    case HG_OPT_I64: return "an integer";
    case HG_OPT_REAL: return "a number";
    case HG_OPT_LIST: return "a list of numbers";
    case HG_OPT_BOOL: return "true or false";
    default: return "a string";
    }
}

static int setting_real(const config_setting_t *s, double *v)
{
    switch (config_setting_type(s)) {
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64:
        *v = (double)config_setting_get_int64(s);
        return 0;
    case CONFIG_TYPE_FLOAT:
        *v = config_setting_get_float(s);
        return 0;
    default:
        return -1;
    }
}

/* A list setting ([0.9, 0.98] or (1, 2)) into its field. */
static int apply_array(const struct hg_opt_prog *p, struct ref r, const config_setting_t *s,
                       const char *where, char *err, size_t errlen)
{
    int n = config_setting_length(s);
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof(*v));
    if (!v)
        return hg_kerr(err, errlen, "%s: out of memory", where);
    char text[256] = "";
    for (int i = 0; i < n; i++) {
        if (setting_real(config_setting_get_elem(s, (unsigned)i), &v[i]) != 0) {
            free(v);
            return hg_kerr(err, errlen, "%s: element %d is not a number", where, i);
        }
        size_t k = strlen(text);
        snprintf(text + k, sizeof(text) - k, "%s%g", i ? "," : "", v[i]);
    }
    if (store_list(row(p, r), AS(p, r, struct hg_opt_list), v, n, where, text, err,
                   errlen) != 0)
        return -1;
    const struct hg_opt *o = row(p, r);
    return o->check ? o->check(field(p, r), where, err, errlen) : 0;
}

/* One top-level setting into its option. */
static int apply_setting(const struct hg_opt_prog *p, const config_setting_t *s,
                         const char *path, char *err, size_t errlen)
{
    const char *key = config_setting_name(s);
    int line = config_setting_source_line(s);
    int type = config_setting_type(s);
    char where[512];
    snprintf(where, sizeof(where), "%s:%d: key '%s'", path, line, key ? key : "?");
    if (!key)
        return hg_kerr(err, errlen, "%s: unnamed setting", where);
    size_t len = strlen(key);
    struct ref r;
    if (!find(p, key, len, &r)) {
        char hint[160], where2[512];
        snprintf(where2, sizeof(where2), "%s:%d: key ", path, line);
        if (refuse(p, key, len, where2, err, errlen) != 0)
            return -1;
        return hg_kerr(err, errlen, "%s:%d: unknown key '%s'%s", path, line, key,
                       suggest(p, key, len, "", hint, sizeof(hint)));
    }
    const struct hg_opt *o = row(p, r);
    if (o->flags & HG_OPTF_NOCONFIG)
        return hg_kerr(err, errlen, "%s: not allowed in a config file", where);
    mark_given(p, r);
    char num[64];
    switch (o->type) {
    case HG_OPT_INT:
    case HG_OPT_I64:
        if (type != CONFIG_TYPE_INT && type != CONFIG_TYPE_INT64)
            break;
        snprintf(num, sizeof(num), "%lld", (long long)config_setting_get_int64(s));
        return set_text(p, r, num, 0, where, err, errlen);
    case HG_OPT_REAL: {
        double v;
        if (setting_real(s, &v) != 0)
            break;
        snprintf(num, sizeof(num), "%.17g", v);
        return set_text(p, r, num, 0, where, err, errlen);
    }
    case HG_OPT_BOOL:
        if (type != CONFIG_TYPE_BOOL)
            break;
        *AS(p, r, int) = config_setting_get_bool(s);
        return o->check ? o->check(field(p, r), where, err, errlen) : 0;
    case HG_OPT_STR:
    case HG_OPT_ENUM:
        /* numbers and booleans become text, as a task option wants */
        switch (type) {
        case CONFIG_TYPE_STRING:
            return set_text(p, r, config_setting_get_string(s), 0, where, err, errlen);
        case CONFIG_TYPE_INT:
        case CONFIG_TYPE_INT64:
            snprintf(num, sizeof(num), "%lld", (long long)config_setting_get_int64(s));
            return set_text(p, r, num, 0, where, err, errlen);
        case CONFIG_TYPE_FLOAT:
            snprintf(num, sizeof(num), "%.17g", config_setting_get_float(s));
            return set_text(p, r, num, 0, where, err, errlen);
        case CONFIG_TYPE_BOOL:
            return set_text(p, r, config_setting_get_bool(s) ? "1" : "0", 0, where, err,
                            errlen);
        default:
            break;
        }
        break;
    case HG_OPT_LIST:
        if (type == CONFIG_TYPE_STRING)
            return set_text(p, r, config_setting_get_string(s), 0, where, err, errlen);
        if (type == CONFIG_TYPE_INT || type == CONFIG_TYPE_INT64 ||
            type == CONFIG_TYPE_FLOAT) { /* a list of one */
            char num[64];
            snprintf(num, sizeof(num), "%.17g", type == CONFIG_TYPE_FLOAT
                                                    ? config_setting_get_float(s)
                                                    : (double)config_setting_get_int64(s));
            return set_text(p, r, num, 0, where, err, errlen);
        }
        if (type == CONFIG_TYPE_ARRAY || type == CONFIG_TYPE_LIST)
            return apply_array(p, r, s, where, err, errlen);
        break;
    case HG_OPT_IGNORED:
        return 0;
    }
    return hg_kerr(err, errlen, "%s: expected %s, got %s", where, type_word(o->type),
                   setting_type_word(type));
}

static int load_config(const struct hg_opt_prog *p, const char *path, char *err,
                       size_t errlen)
{
    config_t cfg;
    if (read_config(&cfg, path, err, errlen) != 0)
        return -1;
    const config_setting_t *root = config_root_setting(&cfg);
    int n = config_setting_length(root), rc = 0;
    for (int i = 0; i < n && rc == 0; i++)
        rc = apply_setting(p, config_setting_get_elem(root, (unsigned)i), path, err, errlen);
    config_destroy(&cfg);
    return rc;
}

/* --------------------------------------------------------------- parse */

int hg_opt_parse(const struct hg_opt_prog *p, int argc, char **argv, char *err,
                 size_t errlen)
{
    for (int s = 0; s < p->nsets; s++) {
        if (p->sets[s].given)
            memset(p->sets[s].given, 0, (size_t)p->sets[s].n);
        for (int i = 0; i < p->sets[s].n; i++) {
            struct ref r = {s, i};
            const struct hg_opt *o = row(p, r);
            char where[160];
            snprintf(where, sizeof(where), "the default of --%s", o->name);
            if (o->def && set_text(p, r, o->def, 0, where, err, errlen) != 0)
                return -1;
        }
    }
    /* the command line, split (errors first), then the config file */
    struct tok *toks = malloc((size_t)(argc > 0 ? argc : 1) * sizeof(*toks));
    if (!toks)
        return hg_kerr(err, errlen, "out of memory");
    int n = tokenize(p, argc, argv, 0, toks, err, errlen);
    int rc = n < 0 ? -1 : 0;
    const char *cfile = NULL;
    for (int i = 0; i < n; i++)
        if (row(p, toks[i].r)->flags & HG_OPTF_CONFIG)
            cfile = toks[i].value;
    if (rc == 0 && cfile)
        rc = load_config(p, cfile, err, errlen);
    for (int i = 0; i < n && rc == 0; i++) {
        char where[160];
        snprintf(where, sizeof(where), "--%s", row(p, toks[i].r)->name);
        mark_given(p, toks[i].r);
        rc = set_text(p, toks[i].r, toks[i].value, toks[i].neg, where, err, errlen);
    }
    free(toks);
    return rc;
}

char *hg_opt_peek(const struct hg_opt_prog *p, int argc, char **argv, const char *name)
{
    struct ref want;
    if (!find(p, name, strlen(name), &want))
        return NULL;
    const char *val = NULL, *cfile = NULL;
    struct tok *toks = malloc((size_t)(argc > 0 ? argc : 1) * sizeof(*toks));
    int n = toks ? tokenize(p, argc, argv, 1, toks, NULL, 0) : 0;
    for (int i = 0; i < n; i++) {
        if (!toks[i].found)
            continue;
        if (toks[i].r.set == want.set && toks[i].r.idx == want.idx)
            val = toks[i].value;
        else if (row(p, toks[i].r)->flags & HG_OPTF_CONFIG)
            cfile = toks[i].value;
    }
    char *out = val ? strdup(val) : NULL;
    free(toks);
    config_t cfg;
    if (!val && cfile && read_config(&cfg, cfile, NULL, 0) == 0) {
        const config_setting_t *root = config_root_setting(&cfg);
        for (int i = 0; i < config_setting_length(root) && !out; i++) {
            const config_setting_t *s = config_setting_get_elem(root, (unsigned)i);
            const char *key = config_setting_name(s);
            const char *v = config_setting_get_string(s); /* NULL if not a string */
            struct ref r;
            if (key && v && find(p, key, strlen(key), &r) && r.set == want.set &&
                r.idx == want.idx)
                out = strdup(v);
        }
        config_destroy(&cfg);
    }
    return out;
}

int hg_opt_given(const struct hg_opt_prog *p, const char *name)
{
    struct ref r;
    if (!find(p, name, strlen(name), &r) || !p->sets[r.set].given)
        return -1;
    return p->sets[r.set].given[r.idx];
}

/* ---------------------------------------------------------------- help */

static const char *metavar(const struct hg_opt *o)
{
    if (o->metavar)
        return o->metavar;
    switch (o->type) {
    case HG_OPT_INT:
    case HG_OPT_I64: return "N";
    case HG_OPT_REAL: return "X";
    case HG_OPT_LIST: return "LIST";
    case HG_OPT_ENUM: return "NAME";
    case HG_OPT_BOOL:
    case HG_OPT_IGNORED: return "";
    default: return o->flags & HG_OPTF_SWITCH ? "" : "STR";
    }
}

/* --help's width: the terminal's columns when f is one, else 80 */
static int help_width(FILE *f)
{
    struct winsize ws;
    int w = 80;
    if (isatty(fileno(f)) && ioctl(fileno(f), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        w = ws.ws_col;
    return w < 40 ? 40 : w;
}

/* Writes text at column *col, breaking at spaces so that no line passes
 * width; a continued line starts at column indent. A word longer than a
 * whole line gets a line of its own. */
static void wrap_text(FILE *f, const char *text, int *col, int indent, int width)
{
    const char *s = text;
    while (*s) {
        const char *e = s;
        while (*e && *e != ' ')
            e++;
        int len = (int)(e - s);
        if (len > 0) {
            int lead = *col > indent; /* a space before the word */
            if (lead && *col + 1 + len > width) {
                fprintf(f, "\n%*s", indent, "");
                *col = indent;
                lead = 0;
            }
            if (lead)
                fputc(' ', f);
            fwrite(s, 1, (size_t)len, f);
            *col += lead + len;
        }
        s = *e ? e + 1 : e;
    }
}

/* usage text: each line wrapped, continued 4 columns right of its indent */
static void wrap_usage(FILE *f, const char *usage, int width)
{
    char line[1024];
    for (const char *s = usage; *s;) {
        const char *e = strchr(s, '\n');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n >= sizeof(line))
            n = sizeof(line) - 1;
        memcpy(line, s, n);
        line[n] = 0;
        int lead = (int)strspn(line, " ");
        int col = lead;
        fprintf(f, "%*s", lead, "");
        wrap_text(f, line + lead, &col, lead + 4, width);
        fputc('\n', f);
        s = e ? e + 1 : s + n;
    }
}

static void help_line(FILE *f, const struct hg_opt *o, int width)
{
    /* the help column: 36 on a wide terminal, 30 on a narrow one */
    const int pos = width >= 100 ? 36 : 30;
    char left[200], text[2048];
    int k = 0;
    if (o->short_name)
        k = snprintf(left, sizeof(left), "-%c, ", o->short_name);
    k += snprintf(left + k, sizeof(left) - (size_t)k, "--%s%s",
                  o->flags & HG_OPTF_NEGATABLE ? "[no-]" : "", o->name);
    if (o->alias)
        k += snprintf(left + k, sizeof(left) - (size_t)k, ", --%s", o->alias);
    if (*metavar(o))
        snprintf(left + k, sizeof(left) - (size_t)k, " %s", metavar(o));
    if ((int)strlen(left) > pos - 3)
        fprintf(f, "  %s\n%*s", left, pos, "");
    else
        fprintf(f, "  %-*s ", pos - 3, left);
    k = snprintf(text, sizeof(text), "%s", o->help ? o->help : "");
    if (o->choices && k < (int)sizeof(text)) {
        k += snprintf(text + k, sizeof(text) - (size_t)k, " {");
        for (const char *c = o->choices; *c && k < (int)sizeof(text) - 2; c++)
            text[k++] = *c == '|' ? ',' : *c;
        text[k++] = '}';
        text[k] = 0;
    }
    if (k < (int)sizeof(text)) {
        if (o->type == HG_OPT_BOOL || (o->flags & HG_OPTF_SWITCH)) {
            if (o->def && strcmp(o->def, "0") != 0)
                snprintf(text + k, sizeof(text) - (size_t)k, " (default: %s)",
                         strcmp(o->def, "1") == 0 ? "on" : o->def);
        } else if (o->def && *o->def) {
            snprintf(text + k, sizeof(text) - (size_t)k, " (default: %s)", o->def);
        }
    }
    int col = pos;
    wrap_text(f, text, &col, pos, width);
    fputc('\n', f);
}

void hg_opt_help(FILE *f, const struct hg_opt_prog *p)
{
    int ngroups = 0, width = help_width(f);
    while (p->groups && p->groups[ngroups])
        ngroups++;
    for (int s = 0; s < p->nsets; s++) /* a row outside every section would vanish */
        for (int i = 0; i < p->sets[s].n; i++)
            HG_CHECK(p->sets[s].opts[i].group >= 0 && p->sets[s].opts[i].group < ngroups);
    if (p->usage)
        wrap_usage(f, p->usage, width);
    for (int g = 0; g < ngroups; g++) {
        fprintf(f, "\n%s:\n", p->groups[g]);
        int any = 0;
        for (int s = 0; s < p->nsets; s++)
            for (int i = 0; i < p->sets[s].n; i++)
                if (p->sets[s].opts[i].group == g) {
                    help_line(f, &p->sets[s].opts[i], width);
                    any = 1;
                }
        if (!any)
            fprintf(f, "  (none)\n");
    }
}

/* ------------------------------------------------------------- to text */

/* Shortest %g form that reads back to the same double. */
static void fmt_real(char *buf, size_t n, double v)
{
    for (int k = 6; k <= 17; k++) {
        snprintf(buf, n, "%.*g", k, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

static void put_quoted(FILE *f, const char *v)
{
    int plain = *v != 0;
    for (const char *c = v; *c; c++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                    "0123456789_-+./,:=@%", *c))
            plain = 0;
    if (plain) {
        fputs(v, f);
        return;
    }
    fputc('\'', f);
    for (const char *c = v; *c; c++)
        if (*c == '\'')
            fputs("'\\''", f);
        else
            fputc(*c, f);
    fputc('\'', f);
}

/* One row as " --name value" (nothing for a row that is not written). */
static void write_row(FILE *f, const struct hg_opt_prog *p, struct ref r, const char **sep)
{
    const struct hg_opt *o = row(p, r);
    char num[64];
    if (o->flags & HG_OPTF_NOSAVE)
        return;
    switch (o->type) {
    case HG_OPT_BOOL: { /* written where it differs from the default */
        int on = *AS(p, r, int), def_on = o->def && strcmp(o->def, "0") != 0;
        if (on && !def_on)
            fprintf(f, "%s--%s", *sep, o->name);
        else if (!on && def_on && (o->flags & HG_OPTF_NEGATABLE))
            fprintf(f, "%s--no-%s", *sep, o->name);
        else
            return;
        break;
    }
    case HG_OPT_INT:
        fprintf(f, "%s--%s %d", *sep, o->name, *AS(p, r, int));
        break;
    case HG_OPT_I64:
        fprintf(f, "%s--%s %lld", *sep, o->name, (long long)*AS(p, r, int64_t));
        break;
    case HG_OPT_REAL:
        fmt_real(num, sizeof(num), *AS(p, r, double));
        fprintf(f, "%s--%s %s", *sep, o->name, num);
        break;
    case HG_OPT_STR: {
        const char *v = *AS(p, r, char *);
        if (!v)
            return;
        if (o->flags & HG_OPTF_SWITCH) { /* a switch: named when on */
            if (strcmp(v, "0") == 0)
                return;
            fprintf(f, "%s--%s", *sep, o->name);
            if (strcmp(v, "1") != 0) {
                fputc('=', f);
                put_quoted(f, v);
            }
            break;
        }
        fprintf(f, "%s--%s ", *sep, o->name);
        put_quoted(f, v);
        break;
    }
    case HG_OPT_ENUM:
        fprintf(f, "%s--%s %s", *sep, o->name, choice_at(o, *AS(p, r, int), num, sizeof(num)));
        break;
    case HG_OPT_LIST: {
        const struct hg_opt_list *l = AS(p, r, struct hg_opt_list);
        if (l->n == 0) {
            if (!o->empty)
                return;
            fprintf(f, "%s--%s %s", *sep, o->name, o->empty);
            break;
        }
        fprintf(f, "%s--%s ", *sep, o->name);
        for (int k = 0; k < l->n; k++) {
            fmt_real(num, sizeof(num), l->v[k]);
            fprintf(f, "%s%s", k ? "," : "", num);
        }
        break;
    }
    case HG_OPT_IGNORED:
        return;
    }
    *sep = " ";
}

char *hg_opt_to_string(const struct hg_opt_prog *p)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    const char *sep = "";
    for (int s = 0; s < p->nsets; s++)
        for (int i = 0; i < p->sets[s].n; i++)
            write_row(f, p, (struct ref){s, i}, &sep);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

void hg_opt_free(const struct hg_opt_prog *p)
{
    for (int s = 0; s < p->nsets; s++)
        for (int i = 0; i < p->sets[s].n; i++) {
            struct ref r = {s, i};
            if (row(p, r)->type == HG_OPT_STR) {
                free(*AS(p, r, char *));
                *AS(p, r, char *) = NULL;
            } else if (row(p, r)->type == HG_OPT_LIST) {
                free(AS(p, r, struct hg_opt_list)->v);
                *AS(p, r, struct hg_opt_list) = (struct hg_opt_list){0};
            }
        }
}
