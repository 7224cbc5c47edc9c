/* hg_comm.h - collectives between the ranks of one training job.
 *
 * Backends: `shm` (worker processes forked on one machine) today; nccl and
 * mpi later, behind the same calls.  Every call that can fail returns 0, or
 * -1 with a message in err (may be NULL) that names the rank(s) at fault.
 * Every rank must make the same collective calls in the same order with the
 * same sizes (as with MPI and NCCL).
 *
 * shm life cycle:
 *
 *     struct hg_comm_shm_group *g;
 *     hg_comm_shm_create(&g, world, max_bytes, timeout_s, err, sizeof err);
 *     for (rank ...) if (fork() == 0) {
 *         struct hg_comm *c;
 *         hg_comm_shm_join(&c, g, rank, err, sizeof err);
 *         hg_comm_allreduce_f32(c, grad, n, err, sizeof err);
 *         hg_comm_free(c);
 *         hg_comm_shm_group_free(g);
 *         _exit(0);
 *     }
 *     ... waitpid ...; hg_comm_shm_group_free(g);
 *
 * The segment is unlinked as soon as it is mapped: nothing is left in
 * /dev/shm, even when every process is killed. */
#ifndef HG_COMM_H
#define HG_COMM_H

#include <stddef.h>

struct hg_comm;           /* one rank's handle */
struct hg_comm_shm_group; /* the shared segment, created before fork */

/* Parent, before fork: maps one anonymous-by-name segment (mode 0600) for
 * `world` ranks with `max_bytes` of staging per rank (larger buffers go in
 * pieces; at least 4 KiB).  Every wait of a collective gives up after
 * timeout_s seconds. */
int hg_comm_shm_create(struct hg_comm_shm_group **g, int world,
                       size_t max_bytes, double timeout_s, char *err,
                       size_t errlen);
/* Each child, once: become `rank` (0 <= rank < world). */
int hg_comm_shm_join(struct hg_comm **c, struct hg_comm_shm_group *g, int rank,
                     char *err, size_t errlen);
/* Unmaps the segment (each process that has it mapped calls it once). */
void hg_comm_shm_group_free(struct hg_comm_shm_group *g);

int hg_comm_rank(const struct hg_comm *c);
int hg_comm_world(const struct hg_comm *c);

/* In-place sum over all ranks.  Deterministic: element i of the result is
 * ((x0[i] + x1[i]) + x2[i]) + ... in rank order, bitwise the same on every
 * rank and in every run. */
int hg_comm_allreduce_f32(struct hg_comm *c, float *buf, size_t n, char *err,
                          size_t errlen);
int hg_comm_allreduce_f64(struct hg_comm *c, double *buf, size_t n, char *err,
                          size_t errlen);
/* Copies root's buf into every rank's buf. */
int hg_comm_broadcast(struct hg_comm *c, void *buf, size_t bytes, int root,
                      char *err, size_t errlen);
int hg_comm_barrier(struct hg_comm *c, char *err, size_t errlen);

/* Marks this rank dead: the other ranks' current and later collectives fail
 * at once with this rank named.  The handle is unusable afterwards (free
 * it).  A rank whose collective failed marks itself dead the same way. */
void hg_comm_abort(struct hg_comm *c);
/* Frees the handle (not the segment: hg_comm_shm_group_free). */
void hg_comm_free(struct hg_comm *c);

#endif
