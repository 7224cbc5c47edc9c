/* heartbeat.h - liveness of the ranks of a job of several processes,
 * through the rendezvous store (docs/distributed.md, "Failures").
 *
 * A stopped or frozen process keeps its sockets open: its peers would wait
 * in a collective until --distributed-timeout (300 s by default) and then
 * could only say that it did not answer.  The launcher of a node sees its
 * own workers stop (waitpid), but not a whole other node, nor the ranks
 * that mpirun started.  So every rank beats, from a thread of its own, on
 * a connection of its own to the store, and one watcher (the process that
 * serves the store) names the first rank whose beat stops for `limit_s`:
 *
 *   hb/<rank>   ADDed by the rank every limit_s / 5 (at most 2 s, at least
 *               0.2 s); HB_DONE added when it leaves normally
 *   hb/dead     the watcher adds 1 + the rank it names; every beating rank
 *               reads it with its beat, prints it and leaves at once with
 *               HG_HB_EXIT_PEER (its collective is stuck on that rank)
 *
 * A rank whose store stops answering for limit_s (rank 0's node stopped
 * or cut off) names it and leaves too.  A rank that is alive but never
 * reaches its next collective (an endless loop) still beats: that one is
 * named by the collective's own timeout. */
#ifndef HG_TRAINER_HEARTBEAT_H
#define HG_TRAINER_HEARTBEAT_H

#include <stddef.h>

/* A worker's exit status when it leaves because another rank stopped
 * answering (named in its message and in the watcher's). */
#define HG_HB_EXIT_PEER 4

struct hg_hb;

/* The beat of `rank`: connects to the store at host:port with the job's
 * token and starts the beating thread. */
int hg_hb_beat_start(struct hg_hb **hb, const char *host, int port, const char *token,
                     int rank, double limit_s, char *err, size_t errlen);
/* Marks the rank as gone on purpose (the watcher no longer expects its
 * beat), stops the thread and frees hb (NULL: nothing). */
void hg_hb_beat_stop(struct hg_hb *hb);

/* The watcher: every beating rank of 0..world-1 except those in
 * [skip_lo, skip_hi) (the ranks this process watches by other means).
 * Messages go to stderr, prefixed "hgtrain: ". */
int hg_hb_watch_start(struct hg_hb **hb, const char *host, int port, const char *token,
                      int world, int skip_lo, int skip_hi, double limit_s, char *err,
                      size_t errlen);
void hg_hb_watch_stop(struct hg_hb *hb);

/* The limit for a job whose collectives wait at most timeout_s: half of
 * it (the beat names the rank before the collective gives up), at most
 * 50 s (+ one beat period of 2 s: named within a minute). */
double hg_hb_limit(double timeout_s);

#endif
