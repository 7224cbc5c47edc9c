/* common.c - dtypes, shapes, error helpers and the counter-based RNG. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/ops-impl.h"

_Noreturn void hg_check_failed(const char *file, int line, const char *expr)
{
    fprintf(stderr, "%s:%d: check failed: %s\n", file, line, expr);
    fflush(stderr);
    abort();
}

size_t hg_dtype_size(enum hg_dtype dt)
{
    switch (dt) {
    case HG_F32: return 4;
    case HG_I32: return 4;
    case HG_I64: return 8;
    case HG_F16: return 2;
    case HG_BF16: return 2;
    case HG_U8: return 1;
    case HG_I8: return 1;
    default: break;
    }
    HG_CHECK(!"bad dtype");
}

const char *hg_dtype_name(enum hg_dtype dt)
{
    switch (dt) {
    case HG_F32: return "f32";
    case HG_I32: return "i32";
    case HG_I64: return "i64";
    case HG_F16: return "f16";
    case HG_BF16: return "bf16";
    case HG_U8: return "u8";
    case HG_I8: return "i8";
    default: return "?";
    }
}

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

int hg_kerr(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* Stateless counter-based uniform in [0,1). Exact formula (all arithmetic
 * on uint64_t, wrapping mod 2^64; G = 0x9E3779B97F4A7C15):
 *   key = mix64(seed ^ mix64(stream + G))
 *   h   = mix64(key + (index + 1) * G)      (splitmix64's index-th output
 *                                            from state key)
 *   u   = (float)(h >> 40) * 2^-24          (top 24 bits, exact in f32)
 * mix64(z) (hg_mix64, splitmix64's finaliser, Steele, Lea, Flood 2014):
 *           z = (z ^ z>>30) * 0xBF58476D1CE4E5B9;
 *           z = (z ^ z>>27) * 0x94D049BB133111EB; return z ^ z>>31.
 * A CUDA port is the same lines with unsigned long long. */
float hg_rand_uniform(uint64_t seed, uint64_t stream, uint64_t index)
{
    return hg_rand_u(hg_rand_key(seed, stream), index);
}
