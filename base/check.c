/* check.c - the two error paths (base/hg_base.h): HG_CHECK aborts with
 * file:line on a programmer error; hg_kerr formats a runtime error for a
 * caller that returns -1. */
#include "base/hg_base.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

_Noreturn void hg_check_failed(const char *file, int line, const char *expr)
{
    fprintf(stderr, "%s:%d: check failed: %s\n", file, line, expr);
    fflush(stderr);
    abort();
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
