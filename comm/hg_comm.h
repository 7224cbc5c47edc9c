/* hg_comm.h - collectives between the ranks of one training job, and the
 * rendezvous store that lets the ranks find each other.
 *
 * One interface, several backends chosen at start-up; the controller never
 * knows which:
 *   shm   worker processes forked on one machine (comm/shm.c)
 *   tcp   processes anywhere, a socket to every peer (comm/tcp.c)
 *   nccl  GPUs; compiled when CUDA and NCCL are found (comm/nccl.c)
 *   mpi   optional (--with-mpi), ranks started by mpirun (comm/mpi.c)
 *
 * Every call that can fail returns 0, or -1 with a message in err (may be
 * NULL) that names the rank(s) at fault.  Every rank must make the same
 * collective calls in the same order with the same sizes (as with MPI and
 * NCCL).  After a failed call the handle is broken: later calls fail at
 * once (the peers learn of it through hg_comm_abort's mark or a closed
 * connection and fail too, naming this rank).
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
#include <stdint.h>

struct hg_comm;           /* one rank's handle, any backend */
struct hg_comm_shm_group; /* the shared segment, created before fork */
struct hg_store;          /* a client connection to the rendezvous store */
struct hg_store_server;   /* the store itself (rank 0's host) */

/* ---------------------------------------------------------- collectives */

int hg_comm_rank(const struct hg_comm *c);
int hg_comm_world(const struct hg_comm *c);
/* "shm", "tcp", "nccl", "mpi" */
const char *hg_comm_backend(const struct hg_comm *c);

/* In-place sum over all ranks.  shm and tcp are deterministic: element i of
 * the result is ((x0[i] + x1[i]) + x2[i]) + ... in rank order, bitwise the
 * same on every rank and in every run.  (nccl: buffers in device memory.) */
int hg_comm_allreduce_f32(struct hg_comm *c, float *buf, size_t n, char *err,
                          size_t errlen);
int hg_comm_allreduce_f64(struct hg_comm *c, double *buf, size_t n, char *err,
                          size_t errlen);
/* Copies root's buf into every rank's buf. */
int hg_comm_broadcast(struct hg_comm *c, void *buf, size_t bytes, int root,
                      char *err, size_t errlen);
/* recv[r*bytes .. (r+1)*bytes) = rank r's send, on every rank.
 * recv holds world*bytes; send may alias recv + rank*bytes. */
int hg_comm_allgather(struct hg_comm *c, const void *send, void *recv,
                      size_t bytes, char *err, size_t errlen);
int hg_comm_barrier(struct hg_comm *c, char *err, size_t errlen);
/* Point to point, blocking, matched in order per (sender, receiver) pair;
 * the sizes must agree (a mismatch is an error naming both ranks). */
int hg_comm_send(struct hg_comm *c, const void *buf, size_t bytes, int peer,
                 char *err, size_t errlen);
int hg_comm_recv(struct hg_comm *c, void *buf, size_t bytes, int peer,
                 char *err, size_t errlen);

/* Marks this rank dead: the other ranks' current and later collectives fail
 * at once with this rank named.  The handle is unusable afterwards (free
 * it). */
void hg_comm_abort(struct hg_comm *c);
/* Frees the handle (not an shm segment: hg_comm_shm_group_free). */
void hg_comm_free(struct hg_comm *c);

/* ------------------------------------------------------------------ shm */

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

/* ---------------------------------------------------- rendezvous store */

/* A key-value store over TCP on rank 0's host (comm/store.c).  Every
 * message is framed and length-checked; a client must present the job's
 * token first (HG_STORE_TOKEN_LEN bytes; compared in constant time); a
 * wrong token, a stray connection or garbage bytes close that connection
 * only.  Keys are at most HG_STORE_MAX_KEY bytes, values at most
 * HG_STORE_MAX_VALUE. */
#define HG_STORE_TOKEN_LEN 32 /* hex characters of 128 random bits */
#define HG_STORE_MAX_KEY 256
#define HG_STORE_MAX_VALUE (1u << 20)

/* A fresh random token (HG_STORE_TOKEN_LEN hex characters + NUL). */
int hg_store_token_new(char token[HG_STORE_TOKEN_LEN + 1], char *err,
                       size_t errlen);
/* Reads a token from the environment variable HG_JOB_TOKEN, else from the
 * file `path` (must be 0600 or stricter and owned by us; may be NULL). */
int hg_store_token_load(char token[HG_STORE_TOKEN_LEN + 1], const char *path,
                        char *err, size_t errlen);
/* Writes token to path: a temporary file created 0600, fsync, rename. */
int hg_store_token_save(const char *token, const char *path, char *err,
                        size_t errlen);

/* Starts serving on host:port (host NULL or "" = all interfaces; port 0 =
 * any free port, see hg_store_server_port) in a thread of this process.
 * `world` is the number of ranks expected (for messages naming the
 * missing ones). */
int hg_store_server_start(struct hg_store_server **s, const char *host,
                          int port, const char *token, int world, char *err,
                          size_t errlen);
int hg_store_server_port(const struct hg_store_server *s);
void hg_store_server_stop(struct hg_store_server *s);

/* Connects as `rank`, retrying until timeout_s (rank 0's store may start
 * later than us).  Every later call waits at most timeout_s. */
int hg_store_connect(struct hg_store **st, const char *host, int port,
                     const char *token, int rank, double timeout_s, char *err,
                     size_t errlen);
void hg_store_close(struct hg_store *st);
int hg_store_set(struct hg_store *st, const char *key, const void *val,
                 size_t len, char *err, size_t errlen);
/* Waits until key exists; copies at most cap bytes; *len = its size. */
int hg_store_get(struct hg_store *st, const char *key, void *val, size_t cap,
                 size_t *len, char *err, size_t errlen);
/* Atomically adds delta to the integer at key (absent = 0); *result = the
 * new value. */
int hg_store_add(struct hg_store *st, const char *key, int64_t delta,
                 int64_t *result, char *err, size_t errlen);
/* Every one of world ranks calls it with the same name: returns when all
 * have; a timeout names the ranks that have not arrived. */
int hg_store_barrier(struct hg_store *st, const char *name, int world,
                     char *err, size_t errlen);

/* ------------------------------------------------------ other backends */

/* tcp: every rank listens, publishes its address in the store, connects to
 * every other rank (token checked on each connection); every wait gives up
 * after timeout_s naming the peer. */
int hg_comm_tcp_new(struct hg_comm **c, struct hg_store *st, int rank,
                    int world, double timeout_s, char *err, size_t errlen);
/* nccl: rank 0 makes the unique id and publishes it in the store (key
 * "nccl/id"); the caller has selected the device; every buffer is device
 * memory; st must outlive the handle (abort is told through it).  Returns -1 with a message when the
 * build has no NCCL (hg_comm_have_nccl() == 0). */
int hg_comm_have_nccl(void);
int hg_comm_nccl_new(struct hg_comm **c, struct hg_store *st, int rank,
                     int world, double timeout_s, char *err, size_t errlen);
/* nccl: queues an in-place f32 AllReduce of device memory dbuf[n] on the
 * communicator's stream, to start once the work queued so far on `after`
 * (a cudaStream_t: the compute stream that produced dbuf) is done, and
 * returns without waiting: gradient buckets overlap the rest of the
 * backward.  Every rank queues the same calls in the same order.
 * hg_comm_wait waits (timeout_s, a dead peer named) for all of them; any
 * other nccl call waits for them too.  Host backends (shm, tcp, mpi): the
 * blocking hg_comm_allreduce_f32 of host memory, and a no-op wait. */
int hg_comm_allreduce_f32_async(struct hg_comm *c, float *dbuf, size_t n, void *after,
                                char *err, size_t errlen);
int hg_comm_wait(struct hg_comm *c, char *err, size_t errlen);
/* mpi: MPI_Init (if not yet) and MPI_COMM_WORLD; rank and world come from
 * MPI.  -1 with a message when built without MPI.  Every wait gives up
 * after HG_COMM_TIMEOUT_S seconds (environment, read here; default 300);
 * allreduce is the same rank-order sum as shm's; abort is MPI_Abort (ends
 * the whole job).  See comm/mpi.c. */
int hg_comm_have_mpi(void);
int hg_comm_mpi_new(struct hg_comm **c, char *err, size_t errlen);

#endif
