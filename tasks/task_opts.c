/* task_opts.c - see task-impl.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/hg_graph.h"
#include "tasks/task-impl.h"

int hg__task_opt_int(const char *name, const char *v, int64_t lo, int64_t hi,
                     int64_t *out, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi) {
        snprintf(err, errlen, "--%s: expected an integer in [%lld,%lld], got '%s'",
                 name, (long long)lo, (long long)hi, v);
        return -1;
    }
    *out = x;
    return 0;
}

int hg__task_opt_prob(const char *name, const char *v, float *out, char *err,
                      size_t errlen)
{
    char *end;
    errno = 0;
    double p = strtod(v, &end);
    if (errno || end == v || *end || !(p >= 0 && p < 1)) {
        snprintf(err, errlen, "--%s: expected a number in [0,1), got '%s'", name, v);
        return -1;
    }
    *out = (float)p;
    return 0;
}

int hg__task_opt_bool(const char *name, const char *v, int *out, char *err,
                      size_t errlen)
{
    if (strcmp(v, "1") == 0 || strcmp(v, "true") == 0) {
        *out = 1;
        return 0;
    }
    if (strcmp(v, "0") == 0 || strcmp(v, "false") == 0) {
        *out = 0;
        return 0;
    }
    snprintf(err, errlen, "--%s: expected 0 or 1, got '%s'", name, v);
    return -1;
}

/* v's index in names[n], or -1 */
static int word_index(const char *v, const char *const *names, int n)
{
    for (int i = 0; v && i < n; i++)
        if (strcmp(v, names[i]) == 0)
            return i;
    return -1;
}

int hg__task_opt_attention(const char *v, int *out, char *err, size_t errlen)
{
    static const char *const names[3] = {"auto", "unfused", "fused"};
    int i = word_index(v, names, 3);
    if (i >= 0) {
        *out = i - 1;
        return 0;
    }
    snprintf(err, errlen, "--attention: expected auto, fused or unfused, got '%s'",
             v ? v : "");
    return -1;
}

int hg__task_opt_activation(const char *v, int *out, char *err, size_t errlen)
{
    static const char *const names[2] = {"relu", "gelu"};
    int i = word_index(v, names, 2);
    if (i >= 0) {
        *out = i;
        return 0;
    }
    snprintf(err, errlen, "--activation-fn: expected relu or gelu, got '%s'", v ? v : "");
    return -1;
}

void hg__task_attention(struct hg_graph *g, int mode)
{
    if (mode >= 0)
        hg_graph_set_fused_attention(g, mode);
}
