/* common.c - shape helpers (dtypes, errors and the RNG are in base/). */
#include <stdio.h>

#include "kernels/ops-impl.h"

int64_t hg_shape_numel(const struct hg_shape *s)
{
    int64_t n = 1;
    HG_CHECK(s->ndim >= 0 && s->ndim <= HG_MAX_DIMS);
    for (int i = 0; i < s->ndim; i++)
        n *= s->dim[i];
    return n;
}

int hg_shape_equal(const struct hg_shape *a, const struct hg_shape *b)
{
    if (a->ndim != b->ndim)
        return 0;
    for (int i = 0; i < a->ndim; i++)
        if (a->dim[i] != b->dim[i])
            return 0;
    return 1;
}

char *hg_shape_str(const struct hg_shape *s, char *buf, size_t len)
{
    size_t pos = 0;
    if (len == 0)
        return buf;
    buf[0] = '\0';
    pos += (size_t)snprintf(buf, len, "[");
    for (int i = 0; i < s->ndim && pos < len; i++)
        pos += (size_t)snprintf(buf + pos, len - pos, i ? ",%lld" : "%lld",
                                (long long)s->dim[i]);
    if (pos < len)
        snprintf(buf + pos, len - pos, "]");
    return buf;
}
