/* comm-impl.h - what a backend of hg_comm.h provides: a table of
 * operations behind a handle whose first member is struct hg_comm.
 *
 * Threads: comm.c lets one thread at a time into a handle's blocking
 * calls (a handle's queued requests run on its progress thread, and every
 * blocking call first waits for them), so a backend needs no lock of its
 * own.  Two exceptions: `abort` may be called while another thread is
 * inside a call of the same handle (it marks and shuts down, never frees),
 * and with HG_COMM_THREADS different handles of one process may be in
 * calls at the same time (a group's handle beside its parent's). */
#ifndef HG_COMM_IMPL_H
#define HG_COMM_IMPL_H

#include "comm/hg_comm.h"

enum hg_comm_dtype { HG_COMM_F32, HG_COMM_F64 };

/* One collective as the asynchronous calls queue it. */
enum hg_comm_kind {
    HG_COMM_OP_ALLREDUCE,
    HG_COMM_OP_BROADCAST,
    HG_COMM_OP_ALLGATHER,
    HG_COMM_OP_SEND,       /* point to point: send [n] bytes to root */
    HG_COMM_OP_RECV,       /* point to point: receive [n] bytes into buf from root */
    HG_COMM_OP_ALLGATHERV,
    HG_COMM_OP_REDUCE_SCATTERV, /* f32 */
};

struct hg_comm_op {
    enum hg_comm_kind kind;
    enum hg_comm_dtype dt; /* allreduce */
    void *buf;             /* allreduce: [n] of dt; broadcast: [n] bytes;
                              allgather: recv [world * n] bytes */
    const void *send;      /* allgather, send: [n] bytes */
    size_t n;              /* allreduce: elements; otherwise bytes */
    const size_t *counts;  /* allgatherv: [world] bytes; reduce_scatterv:
                              [world] floats (buf: recv [counts[rank]],
                              send: [sum]); allgatherv: buf = recv [sum] */
    size_t *own;           /* comm.c's copy of counts, freed once run */
    int root;              /* broadcast; send, recv: the peer */
    void *after;           /* device backends: a stream whose queued work
                              comes first; host backends ignore it */
};

struct hg_comm_ops {
    const char *name;
    /* HG_COMM_* capability bits of this handle */
    unsigned (*caps)(const struct hg_comm *c);
    int (*allreduce)(struct hg_comm *c, void *buf, size_t n,
                     enum hg_comm_dtype dt, char *err, size_t errlen);
    int (*broadcast)(struct hg_comm *c, void *buf, size_t bytes, int root,
                     char *err, size_t errlen);
    int (*allgather)(struct hg_comm *c, const void *send, void *recv,
                     size_t bytes, char *err, size_t errlen);
    /* counts checked by comm.c: their sum (times the element size) fits
     * a size_t */
    int (*allgatherv)(struct hg_comm *c, const void *send, void *recv,
                      const size_t *counts, char *err, size_t errlen);
    int (*reduce_scatterv)(struct hg_comm *c, const float *send, float *recv,
                           const size_t *counts, char *err, size_t errlen);
    int (*barrier)(struct hg_comm *c, char *err, size_t errlen);
    int (*send)(struct hg_comm *c, const void *buf, size_t bytes, int peer,
                char *err, size_t errlen);
    int (*recv)(struct hg_comm *c, void *buf, size_t bytes, int peer,
                char *err, size_t errlen);
    /* A new handle over ranks[0..n) (checked by comm.c: distinct, in
     * range, this rank among them), called by those ranks only; its rank
     * is this rank's index in ranks[]. */
    int (*group)(struct hg_comm *c, const int *ranks, int n,
                 struct hg_comm **g, char *err, size_t errlen);
    /* Asynchronous collectives of a backend that queues them by nature
     * (nccl: its stream): start queues op and returns; wait waits for
     * everything queued (the timeout, a dead peer named); test says
     * whether it is all done.  NULL on the host backends: comm.c runs
     * their blocking calls in order on the handle's progress thread
     * (HG_COMM_ASYNC), or at once without one. */
    int (*start)(struct hg_comm *c, const struct hg_comm_op *op, char *err,
                 size_t errlen);
    int (*wait)(struct hg_comm *c, char *err, size_t errlen);
    int (*test)(struct hg_comm *c, int *done, char *err, size_t errlen);
    void (*abort)(struct hg_comm *c);
    void (*free)(struct hg_comm *c);
};

struct hg_comm_async; /* comm.c's request queue and progress thread */

/* The first member of every backend's handle (designated initializers:
 * the fields a backend does not name start zero). */
struct hg_comm {
    const struct hg_comm_ops *ops;
    int rank, world;
    struct hg_comm_async *async; /* NULL until the first start */
};

/* A 64-bit FNV-1a hash of a group's member list, the same on every
 * member: backends name a group's rendezvous (store keys, directory
 * entries, MPI tags) by it. */
static inline uint64_t hg_comm_group_hash(const int *ranks, int n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < n; i++) {
        uint32_t v = (uint32_t)ranks[i];
        for (int k = 0; k < 4; k++) {
            h ^= (v >> (8 * k)) & 0xff;
            h *= 0x100000001b3ull;
        }
    }
    return h ^ (uint64_t)n;
}

/* A 64-bit FNV-1a digest of a v collective's counts[n], the same on every
 * rank that passes the same array: the backends that can compare it
 * between ranks (shm, tcp, mpi) fail ranks whose counts differ. */
static inline uint64_t hg_comm_counts_digest(const size_t *counts, int n)
{
    uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)n;
    for (int i = 0; i < n; i++) {
        uint64_t v = (uint64_t)counts[i];
        for (int k = 0; k < 8; k++) {
            h ^= (v >> (8 * k)) & 0xff;
            h *= 0x100000001b3ull;
        }
    }
    return h;
}

/* Element `lo` of rank r's slice: counts[0] + ... + counts[r-1] (comm.c
 * has checked that the whole sum fits). */
static inline size_t hg_comm_counts_off(const size_t *counts, int r)
{
    size_t off = 0;
    for (int i = 0; i < r; i++)
        off += counts[i];
    return off;
}

#endif
