/* prof-links.h - the profiler's link measurement (planner/prof_links.c),
 * part of the hgplan program, not of the library: it forks workers and
 * talks through comm/, which the planner room does not depend on. */
#ifndef HG_PROF_LINKS_H
#define HG_PROF_LINKS_H

#include <stdint.h>
#include <stdio.h>

#include "planner/hg_planner.h"

struct hg_prof_link_opts {
    const int *worlds;      /* forked ranks per measurement (2..64) */
    int nworlds;
    const int64_t *sizes;   /* message bytes (multiples of 4), <= HG_PROF_MAXPTS */
    int nsizes;
    int reps, warmup;       /* timed and untimed calls per size */
    double busy_us;         /* arithmetic before each AllReduce, microseconds
                             * of one idle core */
    double timeout_s;       /* every wait of the backend */
    FILE *log;              /* a line per measurement, or NULL */
};

/* For each world W: forks W workers joined by the shm backend (4 MiB of
 * staging per rank, as hgtrain's launcher makes it) and times f32
 * AllReduce of every size as training meets it: every rank computes
 * busy_us first, so the call finds the cores busy (and, with more ranks
 * than cores, time-shared); a call lasts from the last rank's arrival to
 * the last rank's departure (one clock for all processes); the mean of
 * reps, stalls included; fitted as latency + bytes / bandwidth into p's
 * (shm, allreduce, W) entry.  With W = 2 also a ping-pong: half the round
 * trip of a send and a recv, the median (shm, sendrecv).  Call it before
 * anything starts a thread (OpenMP, BLAS): it forks. */
int hg_prof_measure_links(struct hg_profile *p, const struct hg_prof_link_opts *o, char *err,
                          size_t errlen);

#endif
