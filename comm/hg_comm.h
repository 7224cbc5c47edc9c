/* hg_comm.h - collectives between the ranks of one training job, the
 * rendezvous store that lets the ranks find each other, and a parameter
 * server over them.
 *
 * One interface, several backends chosen at start-up; the controller never
 * knows which (it asks hg_comm_caps what a handle can do):
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
 * A handle is used by one thread at a time; its asynchronous requests run
 * on a progress thread of its own.  With HG_COMM_THREADS, different
 * handles (a group's beside its parent's) may be used by different threads
 * at once.
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
/* "shm", "tcp", "nccl", "mpi": for messages only (ask hg_comm_caps what
 * a handle can do). */
const char *hg_comm_backend(const struct hg_comm *c);

/* What a handle can do, a set of bits: */
#define HG_COMM_DEVICE_MEMORY (1u << 0) /* buffers are device memory (host
                                           ones are staged, slowly) */
#define HG_COMM_ASYNC (1u << 1)  /* the *_start calls overlap the caller: a
                                    progress thread or a device stream */
#define HG_COMM_GROUPS (1u << 2) /* hg_comm_group_new */
#define HG_COMM_THREADS (1u << 3) /* different handles may be in calls from
                                     different threads at once */
#define HG_COMM_RANK_ORDER (1u << 4) /* allreduce and reduce_scatterv are
                                        the rank-order sum, bitwise the
                                        same on every backend that has
                                        this bit */
#define HG_COMM_PS (1u << 5) /* hg_ps_new works over it (host memory,
                                groups, threads) */
unsigned hg_comm_caps(const struct hg_comm *c);

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
/* Uneven counts (tensor parallelism with shards of different sizes).
 * counts[world] is the same array on every rank (a group: its own world);
 * off_r = counts[0] + ... + counts[r-1]; any count may be 0.  Counts that
 * do not add up (size_t overflow, a negative number converted) fail at
 * once, and break the handle like a bad root.  Ranks that pass different
 * counts fail naming each other where the backend can see it (shm, tcp,
 * mpi: a digest of the counts travels with the first piece); nccl cannot
 * check them (a mismatch is NCCL's undefined behaviour, bounded by the
 * timeout).
 *
 * allgatherv: recv[off_r .. off_r + counts[r]) = rank r's send (counts[r]
 * bytes), on every rank.  recv holds sum(counts) bytes; send may alias
 * recv + off_rank. */
int hg_comm_allgatherv(struct hg_comm *c, const void *send, void *recv,
                       const size_t *counts, char *err, size_t errlen);
/* reduce_scatterv: send[sum(counts)] floats on every rank; recv[counts[rank]]
 * = the sum over ranks of send[off_rank .. off_rank + counts[rank]).  recv
 * may alias send + off_rank.  With HG_COMM_RANK_ORDER the sum is the
 * rank-order one, ((x0 + x1) + x2) + ..., bitwise the elements
 * hg_comm_allreduce_f32 gives for the same inputs; nccl: ncclReduce per
 * slice, NCCL's order. */
int hg_comm_reduce_scatterv_f32(struct hg_comm *c, const float *send,
                                float *recv, const size_t *counts, char *err,
                                size_t errlen);
int hg_comm_barrier(struct hg_comm *c, char *err, size_t errlen);
/* Point to point, blocking, matched in order per (sender, receiver) pair;
 * the sizes must agree (a mismatch is an error naming both ranks). */
int hg_comm_send(struct hg_comm *c, const void *buf, size_t bytes, int peer,
                 char *err, size_t errlen);
int hg_comm_recv(struct hg_comm *c, void *buf, size_t bytes, int peer,
                 char *err, size_t errlen);

/* ---------------------------------------------------- asynchronous calls */

/* A started request: ids 1, 2, ... per handle, in the order of starting;
 * {0} is no request (waiting for it returns at once). */
struct hg_comm_req {
    uint64_t id;
};

/* Each starts one collective, the same as its blocking twin (bitwise the
 * same result, the same order rule: every rank starts the same calls in
 * the same order, blocking ones included), and returns before it is done;
 * *req (may be NULL) names it.  The buffers belong to the request until a
 * wait says it is done: do not touch them before.  A blocking call on the
 * handle first waits for every request started before it.  start fails at
 * once only for bad arguments or a handle already failed; a failure while
 * the request runs (a timeout naming the peer, a dead rank) is returned by
 * the waits, and by the next blocking call, and breaks the handle.
 *
 * Where it runs: shm, tcp and mpi (with MPI_THREAD_MULTIPLE) run the
 * requests in order on a progress thread of the handle, made at the first
 * start (HG_COMM_ASYNC); mpi without it runs each at once, inside the
 * start.  nccl queues it on the communicator's stream, to start once the
 * work queued so far on `after` (a cudaStream_t: the compute stream that
 * produced the buffer) is done; host buffers are run at once.  The host
 * backends ignore `after` (the buffer must be ready at the start). */
int hg_comm_allreduce_f32_start(struct hg_comm *c, float *buf, size_t n,
                                void *after, struct hg_comm_req *req,
                                char *err, size_t errlen);
int hg_comm_allreduce_f64_start(struct hg_comm *c, double *buf, size_t n,
                                void *after, struct hg_comm_req *req,
                                char *err, size_t errlen);
int hg_comm_broadcast_start(struct hg_comm *c, void *buf, size_t bytes,
                            int root, void *after, struct hg_comm_req *req,
                            char *err, size_t errlen);
int hg_comm_allgather_start(struct hg_comm *c, const void *send, void *recv,
                            size_t bytes, void *after,
                            struct hg_comm_req *req, char *err,
                            size_t errlen);
/* counts is copied by the start (it may go at once); the buffers belong
 * to the request as above.  nccl: a group of ncclBroadcast (allgatherv) or
 * ncclReduce (reduce_scatterv), one per rank with a count; device
 * buffers only. */
int hg_comm_allgatherv_start(struct hg_comm *c, const void *send, void *recv,
                             const size_t *counts, void *after,
                             struct hg_comm_req *req, char *err,
                             size_t errlen);
int hg_comm_reduce_scatterv_f32_start(struct hg_comm *c, const float *send,
                                      float *recv, const size_t *counts,
                                      void *after, struct hg_comm_req *req,
                                      char *err, size_t errlen);
/* hg_comm_send as a request of the host backends (the blocking send on the
 * progress thread; the peer's hg_comm_recv is matched in order with the
 * blocking sends and these); a device backend (nccl) sends at once. */
int hg_comm_send_start(struct hg_comm *c, const void *buf, size_t bytes, int peer,
                       struct hg_comm_req *req, char *err, size_t errlen);
/* hg_comm_recv as a request, the same way (queued behind the requests
 * started before it: a receive posted early takes what arrives while the
 * caller computes, and the sends queued after it wait for it); a device
 * backend receives at once. */
int hg_comm_recv_start(struct hg_comm *c, void *buf, size_t bytes, int peer,
                       struct hg_comm_req *req, char *err, size_t errlen);
/* Waits until req and every request started before it are done (nccl:
 * every request started so far).  Every wait ends: each request's own
 * waits give up after the handle's timeout naming the peer. */
int hg_comm_wait_req(struct hg_comm *c, struct hg_comm_req req, char *err,
                     size_t errlen);
/* *done = 1 when req is done (0: still running); -1 if it failed. */
int hg_comm_test_req(struct hg_comm *c, struct hg_comm_req req, int *done,
                     char *err, size_t errlen);
/* Waits for every request started so far. */
int hg_comm_wait(struct hg_comm *c, char *err, size_t errlen);
/* The first request of the handle that failed ({0}: none, or a device
 * backend, whose failures name no request).  A wait for a later request
 * returns that one's message: the caller can tell which of its transfers
 * it was. */
struct hg_comm_req hg_comm_failed_req(struct hg_comm *c);

/* ---------------------------------------------------------------- groups */

/* A handle over ranks[0..n) of c (distinct ranks of c, this rank among
 * them), made by those ranks only, each passing the same list; the other
 * ranks do not take part.  Its rank is this rank's index in ranks[], its
 * world n: collectives run among the members only, a broadcast's root and
 * a peer are group ranks.  A group is a communicator of its own (shm: a
 * segment of its own; tcp: sockets of its own; mpi:
 * MPI_Comm_create_group; nccl: a communicator of its own made through the
 * store), so disjoint groups run collectives at the same time, and a
 * group's calls never mix with its parent's.  Groups of the same list
 * made one after the other are distinct.  Free it with hg_comm_free,
 * before or after c; tcp and nccl keep using the store, which must
 * outlive it.  A failure breaks c too (every member is told).  Waits
 * until every member has come, at most the handle's timeout (mpi:
 * MPI_Comm_create_group has none). */
int hg_comm_group_new(struct hg_comm *c, const int *ranks, int n,
                      struct hg_comm **g, char *err, size_t errlen);

/* Marks this rank dead: the other ranks' current and later collectives fail
 * at once with this rank named.  The handle is unusable afterwards (free
 * it). */
void hg_comm_abort(struct hg_comm *c);
/* Frees the handle (not an shm segment: hg_comm_shm_group_free). */
void hg_comm_free(struct hg_comm *c);

/* ------------------------------------------------------ parameter server */

/* A parameter server (comm/ps.c): one rank of c (the server) holds a
 * master copy of every parameter id; client ranks push gradients and pull
 * parameters.  On the server one service thread per remote client answers
 * over a group {server, client} of its own (so that one client's death
 * breaks only its own connection), beside whatever the server's own
 * thread does with c; the server rank may be a client too (its calls go
 * straight to the master copies).  Needs HG_COMM_PS (shm, tcp, mpi with
 * MPI_THREAD_MULTIPLE); nccl has no host point-to-point path for it and
 * hg_ps_new fails saying so.
 *
 * Steps: every client pushes every parameter id once per step, steps
 * 1, 2, 3, ... in order.  When every client's push of step s for id has
 * arrived, the server sums them in client rank order, sum = ((g_c0 + g_c1)
 * + g_c2) + ... (whatever order they arrived in: bitwise reproducible),
 * calls the apply hook (default: master[i] += sum[i]) and the parameter's
 * version becomes s.  A client's push of step s+1 waits on the server
 * until step s is summed.
 *
 * Failures name the rank: a client that dies (its connection breaks, its
 * process is gone) or has not pushed a step within cfg.timeout_s fails
 * every pull and push that waits for it, with a message naming it; keep
 * cfg.timeout_s below the handle's timeout, so that the clients hear the
 * server's reason and not a timeout of their own.  A service thread waits
 * for its client's next request at most the handle's timeout (an idle
 * client is taken for dead). */
struct hg_ps;

/* The server's hook, run once per (id, step) on a service thread holding
 * the server's lock (keep it short): master[numel] is the master copy to
 * update, sum[numel] the step's summed gradients.  0, or -1 with a
 * message: the server then fails every later request with it. */
typedef int hg_ps_apply_fn(void *arg, int id, uint64_t step, float *master,
                           const float *sum, size_t numel, char *err,
                           size_t errlen);

struct hg_ps_config {
    int server;               /* the rank of c that serves */
    const int *clients;       /* [nclients] ranks of c, ascending: the
                                 ranks that push (the server may be one) */
    int nclients;
    int nparams;              /* ids 0 .. nparams-1 */
    const size_t *numel;      /* [nparams] floats of each parameter */
    const float *const *init; /* server: [nparams][numel[id]] the first
                                 master copies; NULL: zeros */
    double timeout_s;         /* the server's wait for a step's missing
                                 pushes */
    hg_ps_apply_fn *apply;    /* server: NULL = master += sum */
    void *apply_arg;
};

/* Made by the server and the clients (the same cfg on each; other ranks
 * do not take part); the server's service threads start here.  c must
 * outlive the handle; the PS does not use c after hg_ps_new. */
int hg_ps_new(struct hg_ps **ps, struct hg_comm *c,
              const struct hg_ps_config *cfg, char *err, size_t errlen);
/* Client: grad[numel[id]] is this client's gradient of step `step` for
 * id.  Returns once the server holds it (not once the step is summed). */
int hg_ps_push(struct hg_ps *ps, int id, const float *grad, uint64_t step,
               char *err, size_t errlen);
/* Client: param[numel[id]] = the master copy once its version is at least
 * `step` (0: the current one, at once); *version (may be NULL) = its
 * version. */
int hg_ps_pull(struct hg_ps *ps, int id, float *param, uint64_t step,
               uint64_t *version, char *err, size_t errlen);
/* Server: master copy of id = param[numel[id]], its version = step (above
 * the current one; no pushes of id pending), waking the pulls that wait
 * for it: an id that clients only pull (the server computes its value,
 * e.g. a parameter it updates itself). */
int hg_ps_publish(struct hg_ps *ps, int id, const float *param, uint64_t step,
                  char *err, size_t errlen);
/* Client: says goodbye.  Server: waits for every service thread (each
 * ends when its client says goodbye or fails, at most the handle's
 * timeout after its last request).  Then frees. */
void hg_ps_free(struct hg_ps *ps);

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
#define HG_STORE_ABORT_MAX 200 /* bytes of hg_store_abort's reason kept */

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

/* 1 when every address of host is a loopback one (localhost, 127.0.0.1,
 * ::1, ...): a store for it listens there only, never on all interfaces. */
int hg_store_loopback_only(const char *host);

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
/* Set-if-absent: sets key to the string val when nobody has (returns 0), or
 * leaves it and copies what it holds into holder[cap] (returns 1); -1 with
 * a message.  hg_launch_connect claims "rank/<rank>" with "pid P on HOST",
 * so that a second process started as the same rank is refused at once. */
int hg_store_claim(struct hg_store *st, const char *key, const char *val,
                   char *holder, size_t cap, char *err, size_t errlen);
/* The job has failed, `why` (at most HG_STORE_ABORT_MAX bytes kept; the
 * first abort wins): every GET parked in the store and every later GET of
 * an absent key fails at once with "the job failed: <why>" instead of
 * waiting for its timeout.  A launcher sends it when one of its ranks
 * dies. */
int hg_store_abort(struct hg_store *st, const char *why, char *err, size_t errlen);
/* 1 with "the job failed: <why>" in why[cap] when the store has been
 * aborted; 0 when not, or when the store did not answer within 2 s (a wait
 * that polls it keeps its own timeout). */
int hg_store_failed(struct hg_store *st, char *why, size_t cap);
/* Every one of world ranks calls it with the same name: returns when all
 * have; a timeout names the ranks that have not arrived. */
int hg_store_barrier(struct hg_store *st, const char *name, int world,
                     char *err, size_t errlen);

/* ------------------------------------------------------ other backends */

/* tcp: every rank listens, publishes its address in the store, connects to
 * every other rank (token checked on each connection); every wait gives up
 * after timeout_s naming the peer.  st must outlive the handle when groups
 * are made (they connect through it). */
int hg_comm_tcp_new(struct hg_comm **c, struct hg_store *st, int rank,
                    int world, double timeout_s, char *err, size_t errlen);
/* nccl: rank 0 makes the unique id and publishes it in the store (key
 * "nccl/id"); the caller has selected the device; every buffer is device
 * memory; st must outlive the handle (abort is told through it).  Returns -1 with a message when the
 * build has no NCCL (hg_comm_have_nccl() == 0). */
int hg_comm_have_nccl(void);
int hg_comm_nccl_new(struct hg_comm **c, struct hg_store *st, int rank,
                     int world, double timeout_s, char *err, size_t errlen);
/* mpi: MPI_Init_thread (if not yet; MPI_THREAD_MULTIPLE asked) and a
 * duplicate of MPI_COMM_WORLD; rank and world come from MPI.  -1 with a
 * message when built without MPI.  Every wait gives up after
 * HG_COMM_TIMEOUT_S seconds (environment, read here; default 300);
 * allreduce is the same rank-order sum as shm's; abort is MPI_Abort (ends
 * the whole job).  HG_COMM_ASYNC, HG_COMM_THREADS and HG_COMM_PS only when
 * MPI gave MPI_THREAD_MULTIPLE.  See comm/mpi.c. */
int hg_comm_have_mpi(void);
int hg_comm_mpi_new(struct hg_comm **c, char *err, size_t errlen);

#endif
