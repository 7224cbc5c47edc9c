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

void hg_deadline_ts(struct timespec *ts, double sec)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    double whole = (double)(time_t)sec;
    ts->tv_sec += (time_t)whole;
    ts->tv_nsec += (long)((sec - whole) * 1e9);
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}
