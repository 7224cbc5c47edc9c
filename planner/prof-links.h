/* prof-links.h - the profiler's link measurement (planner/prof_links.c:
 * shm between forked workers; planner/prof_tcp.c: tcp between processes
 * of several nodes), part of the hgplan program, not of the library: it
 * forks workers and talks through comm/, which the planner room does not
 * depend on. */
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

/* The tcp links: this process is rank `rank` of `world` hgplan processes
 * (one per node, started by hand as hgtrain's ranks are), joined as
 * hgtrain's ranks join: rank 0 serves the rendezvous store on host:port,
 * every rank connects with the job's token and makes a tcp communicator. */
struct hg_prof_tcp_opts {
    int rank, world;        /* 0 <= rank < world, world >= 2 */
    const char *host;       /* the store: rank 0's address */
    int port;
    const char *token;      /* the job token (HG_STORE_TOKEN_LEN hex digits) */
    const int64_t *sizes;   /* message bytes (multiples of 4), <= HG_PROF_MAXPTS */
    int nsizes;
    int reps, warmup;       /* timed and untimed calls per size and kind */
    double timeout_s;       /* every wait: store, backend, parameter server */
    FILE *log;              /* a line per fit (rank 0), or NULL */
};

/* Times, for every size: f32 AllReduce over the world; a ping-pong between
 * ranks 0 and 1 (half the round trip); one step of a parameter server on
 * rank 0 with every rank a client (push the bytes, pull them back).  Each
 * call starts after a barrier and is timed by each rank on its own clock
 * (nodes share none); a call lasts as long as its slowest rank; AllReduce
 * and the PS step: the mean over reps, the ping-pong: the median.  Fits
 * latency + bytes / bandwidth into p's (tcp, allreduce, world), (tcp,
 * sendrecv, 2) and (tcp, ps, world) entries, on every rank.  Starts
 * threads (the store on rank 0, the PS's service threads): call it after
 * any fork. */
int hg_prof_measure_tcp(struct hg_profile *p, const struct hg_prof_tcp_opts *o, char *err,
                        size_t errlen);

#endif
