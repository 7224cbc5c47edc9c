/* comm_test.h - what the comm/ tests share: the clock (hg_now), a sleep, and
 * the values whose rank-order sums are the reference of every backend's
 * allreduce.  Include after defining _GNU_SOURCE. */
#ifndef HG_COMM_TEST_H
#define HG_COMM_TEST_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "base/hg_base.h"

static inline void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* Rank-dependent values over several magnitudes, so that the order of the
 * sum shows in the low bits. */
static inline double value(int rank, size_t i)
{
    uint64_t x = (uint64_t)i * 0x9e3779b97f4a7c15ull + (uint64_t)rank * 0xbf58476d1ce4e5b9ull;
    x ^= x >> 31;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 29;
    double u = (double)(x >> 11) / 9007199254740992.0 - 0.5; /* [-0.5, 0.5) */
    static const double scale[] = {1.0, 1e3, 1e-3, 37.0};
    return u * scale[rank % 4];
}

#endif
