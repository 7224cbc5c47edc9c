/* clock.c - the one monotonic clock (base/hg_base.h). */
#define _POSIX_C_SOURCE 200809L
#include "base/hg_base.h"

#include <time.h>

double hg_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
