/* nccl.c - the `nccl` backend of hg_comm.h: one GPU per rank, NCCL's
 * collectives.  Compiled with NCCL when configure found CUDA and NCCL
 * (HG_HAVE_NCCL); otherwise hg_comm_have_nccl() is 0 and hg_comm_nccl_new
 * fails with a message.
 *
 * Buffers are device memory on the device that was current when the
 * handle was made (the caller selects it, cudaSetDevice, before
 * hg_comm_nccl_new).  Host buffers (the training loop's scalars, a
 * parameter broadcast through a host mirror) are staged through a device
 * copy: correct, and slow only for big ones.
 *
 * Start: rank 0 calls ncclGetUniqueId and publishes it in the rendezvous
 * store under "nccl/id" (so one nccl handle per store), the others read it
 * (hg_store_get waits up to the store's timeout), then ncclCommInitRank,
 * which has no deadline of its own.  The store handle must outlive the
 * communicator: abort and the waits use it (below).
 *
 * Every operation goes on a stream of our own and is waited for by polling
 * cudaStreamQuery and ncclCommGetAsyncError until timeout_s: on an
 * asynchronous error or at the deadline the communicator is aborted
 * (ncclCommAbort: the kernels stop) and the call fails with a message
 * naming this rank, and the handle is broken.  NCCL cannot tell which rank
 * is late; a rank that called hg_comm_abort has said so in the store
 * ("nccl/dead" counts the aborted ranks, "nccl/aborted" names the last),
 * which the waits look at every STORE_POLL_S, so the peers fail naming it.
 *
 * allreduce is ncclAllReduce: the same result on every rank and in every
 * run with the same GPUs and NCCL configuration, but not the rank-order sum
 * of shm and mpi.  barrier is a one-float allreduce.  send/recv: the size
 * goes first (8 bytes, ncclSend/ncclRecv in a group), so a mismatch fails
 * the receiver naming both ranks before any data moves; then the data.
 * allgatherv and reduce_scatterv (NCCL has neither): a group of one
 * ncclBroadcast / ncclReduce per rank with a count; their counts are not
 * compared between ranks.
 *
 * Asynchronous calls (the table's start/wait/test): the collective is
 * queued on our stream behind an event recorded on the caller's stream
 * (`after`: the compute stream that produced the buffer) and the call
 * returns; wait is the stream's wait above, for everything queued; a
 * blocking call queues behind them on the same stream.  Groups: a
 * communicator of its own per group (ncclCommInitRank on an id published
 * in the store by group rank 0); the abort keys are the job's, so an
 * abort in a group fails every handle of the job. */
#define _GNU_SOURCE

#include "base/hg_base.h"
#include "comm/comm-impl.h"

#ifndef HG_HAVE_NCCL

int hg_comm_have_nccl(void) { return 0; }

int hg_comm_nccl_new(struct hg_comm **c, struct hg_store *st, int rank,
                     int world, double timeout_s, char *err, size_t errlen)
{
    (void)st, (void)rank, (void)world, (void)timeout_s;
    *c = NULL;
    return hg_kerr(err, errlen, "nccl: built without NCCL (configure found no "
                   "CUDA toolkit with nccl.h and libnccl)");
}

#else

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <sched.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define STORE_POLL_S 0.2 /* how often a long wait asks the store who died */

struct nccl_comm {
    struct hg_comm base; /* ops, rank, world */
    ncclComm_t comm;     /* NULL once aborted */
    cudaStream_t stream;
    struct hg_store *st;
    int device;
    double timeout_s;
    int broken;
    int ready; /* made: a failure is told to the peers through the store */
    int told;
    void *scratch; /* device: the barrier's float, the size of a message */
    cudaEvent_t after_ev; /* asynchronous calls: marks the caller's stream
                           * (created on first use) */
    int have_ev;
    int jrank;  /* this rank as the job numbers it (messages, the store) */
    int *wrank; /* (world) a group's ranks as the job numbers them; NULL:
                   the job's own handle */
};

static const struct hg_comm_ops nccl_ops;

int hg_comm_have_nccl(void) { return 1; }

/* A rank as the job numbers it (a group's handle counts from 0). */
static int W(const struct nccl_comm *c, int r)
{
    return c->wrank ? c->wrank[r] : r;
}


/* Breaks the handle: tells the peers through the store (once; `tell` 0
 * when we only follow a peer that aborted, whose name stays there), stops
 * the kernels of a communicator that will not finish. */
static void stop(struct nccl_comm *c, int tell)
{
    c->broken = 1;
    if (tell && c->ready && !c->told && c->st) {
        char e[256];
        int64_t n;
        int me = c->jrank;
        c->told = 1;
        if (hg_store_set(c->st, "nccl/aborted", &me, sizeof me, e, sizeof e) == 0)
            hg_store_add(c->st, "nccl/dead", 1, &n, e, sizeof e);
    }
    if (c->comm) {
        ncclCommAbort(c->comm);
        c->comm = NULL;
    }
}

static int nccl_fail(struct nccl_comm *c, ncclResult_t r, const char *call,
                     char *err, size_t errlen)
{
    const char *last = c->comm ? ncclGetLastError(c->comm) : NULL;
    hg_kerr(err, errlen, "nccl: rank %d: %s: %s%s%s%s", c->jrank, call,
            ncclGetErrorString(r), last && *last ? " (" : "", last ? last : "",
            last && *last ? ")" : "");
    stop(c, 1);
    return -1;
}

static int cuda_fail(struct nccl_comm *c, cudaError_t e, const char *call,
                     char *err, size_t errlen)
{
    hg_kerr(err, errlen, "nccl: rank %d: %s: %s", c->jrank, call,
            cudaGetErrorString(e));
    stop(c, 1);
    return -1;
}

#define NCCL_CHECK(c, call, err, errlen)                                       \
    do {                                                                       \
        ncclResult_t r_ = (call);                                              \
        if (r_ != ncclSuccess)                                                 \
            return nccl_fail((c), r_, #call, (err), (errlen));                 \
    } while (0)
#define CUDA_CHECK(c, call, err, errlen)                                       \
    do {                                                                       \
        cudaError_t e_ = (call);                                               \
        if (e_ != cudaSuccess)                                                 \
            return cuda_fail((c), e_, #call, (err), (errlen));                 \
    } while (0)

static int check_usable(struct nccl_comm *c, char *err, size_t errlen)
{
    if (c->broken)
        return hg_kerr(err, errlen, "nccl: rank %d: communicator unusable after "
                       "an earlier failure or abort", c->jrank);
    CUDA_CHECK(c, cudaSetDevice(c->device), err, errlen);
    return 0;
}

/* The rank that aborted (from the store), -1 if none has. */
static int aborted_rank(struct nccl_comm *c)
{
    char e[256];
    int64_t dead = 0;
    if (!c->st || hg_store_add(c->st, "nccl/dead", 0, &dead, e, sizeof e) != 0 ||
        dead <= 0)
        return -1;
    int r = -1;
    size_t len = 0;
    if (hg_store_get(c->st, "nccl/aborted", &r, sizeof r, &len, e, sizeof e) != 0 ||
        len != sizeof r)
        return -1;
    return r;
}

/* Waits for the work queued on our stream; `what` names it in messages. */
static int sync_stream(struct nccl_comm *c, const char *what, char *err,
                       size_t errlen)
{
    double start = hg_now(), deadline = start + c->timeout_s;
    double next_poll = start + STORE_POLL_S;
    for (unsigned long it = 0;; it++) {
        cudaError_t e = cudaStreamQuery(c->stream);
        if (e == cudaSuccess)
            return 0;
        if (e != cudaErrorNotReady)
            return cuda_fail(c, e, "cudaStreamQuery", err, errlen);
        ncclResult_t async = ncclSuccess;
        NCCL_CHECK(c, ncclCommGetAsyncError(c->comm, &async), err, errlen);
        if (async != ncclSuccess && async != ncclInProgress) {
            char call[96];
            snprintf(call, sizeof call, "%s: asynchronous error", what);
            return nccl_fail(c, async, call, err, errlen);
        }
        if (it >= 1024) {
            struct timespec ts = {0, 20000}; /* 20 us */
            nanosleep(&ts, NULL);
        } else {
            sched_yield();
        }
        if ((it & 63) != 0)
            continue;
        double now = hg_now();
        if (now > next_poll) {
            next_poll = now + STORE_POLL_S;
            int r = aborted_rank(c);
            if (r >= 0) {
                hg_kerr(err, errlen, "nccl: rank %d in %s: rank %d aborted",
                        c->jrank, what, r);
                stop(c, 0);
                return -1;
            }
        }
        if (now > deadline) {
            hg_kerr(err, errlen, "nccl: rank %d waited %.3g s in %s; "
                    "communicator aborted (NCCL cannot say which rank is late)",
                    c->jrank, now - start, what);
            stop(c, 1);
            return -1;
        }
    }
}

/* ---------------------------------------------------------------- create */

/* A communicator of world ranks meeting under the store key `idkey`
 * (rank 0 publishes the unique id there); jrank and wrank (taken) name
 * the ranks in messages. */
static int make(struct nccl_comm **cp, struct hg_store *st, const char *idkey,
                int rank, int world, double timeout_s, int jrank, int *wrank,
                char *err, size_t errlen)
{
    *cp = NULL;
    struct nccl_comm *c = calloc(1, sizeof *c);
    if (!c) {
        free(wrank);
        return hg_kerr(err, errlen, "nccl: rank %d: out of memory", jrank);
    }
    c->base = (struct hg_comm){.ops = &nccl_ops, .rank = rank, .world = world};
    c->st = st;
    c->timeout_s = timeout_s;
    c->jrank = jrank;
    c->wrank = wrank;
    int rc = -1;
    cudaError_t e = cudaGetDevice(&c->device);
    if (e != cudaSuccess) {
        cuda_fail(c, e, "cudaGetDevice", err, errlen);
        goto out;
    }
    ncclUniqueId id;
    if (rank == 0) {
        ncclResult_t r = ncclGetUniqueId(&id);
        if (r != ncclSuccess) {
            nccl_fail(c, r, "ncclGetUniqueId", err, errlen);
            goto out;
        }
        if (hg_store_set(st, idkey, &id, sizeof id, err, errlen) != 0)
            goto out;
    } else {
        size_t len = 0;
        if (hg_store_get(st, idkey, &id, sizeof id, &len, err, errlen) != 0)
            goto out;
        if (len != sizeof id) {
            hg_kerr(err, errlen, "nccl: rank %d: \"%s\" in the store has %zu "
                    "bytes, not %zu", jrank, idkey, len, sizeof id);
            goto out;
        }
    }
    e = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        cuda_fail(c, e, "cudaStreamCreateWithFlags", err, errlen);
        goto out;
    }
    e = cudaMalloc(&c->scratch, 64);
    if (e != cudaSuccess) {
        cuda_fail(c, e, "cudaMalloc (64 bytes)", err, errlen);
        goto out;
    }
    ncclResult_t r = ncclCommInitRank(&c->comm, world, id, rank);
    if (r != ncclSuccess) {
        c->comm = NULL;
        nccl_fail(c, r, "ncclCommInitRank", err, errlen);
        goto out;
    }
    c->ready = 1;
    *cp = c;
    rc = 0;
out:
    if (rc != 0) {
        if (c->scratch)
            cudaFree(c->scratch);
        if (c->stream)
            cudaStreamDestroy(c->stream);
        free(c->wrank);
        free(c);
    }
    return rc;
}

int hg_comm_nccl_new(struct hg_comm **cp, struct hg_store *st, int rank,
                     int world, double timeout_s, char *err, size_t errlen)
{
    *cp = NULL;
    if (world < 1 || rank < 0 || rank >= world)
        return hg_kerr(err, errlen, "nccl: rank %d outside 0..%d", rank,
                       world - 1);
    if (!(timeout_s > 0))
        return hg_kerr(err, errlen, "nccl: timeout %g s is not positive",
                       timeout_s);
    if (!st)
        return hg_kerr(err, errlen, "nccl: rank %d: no store", rank);
    struct nccl_comm *c;
    if (make(&c, st, "nccl/id", rank, world, timeout_s, rank, NULL, err,
             errlen) != 0)
        return -1;
    *cp = &c->base;
    return 0;
}

/* A group is a communicator of its own: the members count the groups of
 * this list they have made (a store counter each, the same on all), and
 * group rank 0 publishes the unique id under a key of (list, count). */
static int nccl_group(struct hg_comm *base, const int *ranks, int n,
                      struct hg_comm **gp, char *err, size_t errlen)
{
    struct nccl_comm *c = (struct nccl_comm *)base;
    *gp = NULL;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    int me = 0;
    while (ranks[me] != base->rank)
        me++;
    int *wrank = malloc((size_t)n * sizeof *wrank);
    if (!wrank) {
        hg_kerr(err, errlen, "nccl: rank %d: out of memory", c->jrank);
        stop(c, 1);
        return -1;
    }
    for (int i = 0; i < n; i++)
        wrank[i] = W(c, ranks[i]);
    /* the job's numbering: the same list from any parent is one key */
    uint64_t h = hg_comm_group_hash(wrank, n);
    char key[96];
    int64_t k;
    snprintf(key, sizeof key, "nccl/g/%016llx/made/%d", (unsigned long long)h,
             c->jrank);
    if (hg_store_add(c->st, key, 1, &k, err, errlen) != 0) {
        free(wrank);
        stop(c, 1);
        return -1;
    }
    snprintf(key, sizeof key, "nccl/g/%016llx/%lld/id", (unsigned long long)h,
             (long long)k);
    struct nccl_comm *g;
    if (make(&g, c->st, key, me, n, c->timeout_s, c->jrank, wrank, err,
             errlen) != 0) {
        stop(c, 1);
        return -1;
    }
    *gp = &g->base;
    return 0;
}

/* Says so in the store (the peers' waits fail naming us), then stops our
 * kernels. */
static void nccl_abort(struct hg_comm *base)
{
    stop((struct nccl_comm *)base, 1);
}

static void nccl_free(struct hg_comm *base)
{
    struct nccl_comm *c = (struct nccl_comm *)base;
    cudaSetDevice(c->device);
    if (c->comm) {
        /* finish what is queued, then tear down */
        if (cudaStreamSynchronize(c->stream) == cudaSuccess)
            ncclCommDestroy(c->comm);
        else
            ncclCommAbort(c->comm);
    }
    cudaFree(c->scratch);
    if (c->have_ev)
        cudaEventDestroy(c->after_ev);
    cudaStreamDestroy(c->stream);
    free(c->wrank);
    free(c);
}

/* ---------------------------------------------------------------- collectives */

/* 1 when p is host memory NCCL cannot use (pageable or pinned). */
static int is_host(const void *p)
{
    struct cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError(); /* older drivers: unregistered host memory */
        return 1;
    }
    return a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged;
}

/* A device copy of host buffer h (bytes), or h itself when it is device
 * memory; *staged says which.  Freed by unstage, which copies back. */
static void *stage(struct nccl_comm *c, void *h, size_t bytes, int *staged,
                   char *err, size_t errlen)
{
    void *d = h;
    *staged = is_host(h);
    if (!*staged)
        return d;
    cudaError_t e = cudaMalloc(&d, bytes);
    if (e != cudaSuccess) {
        cuda_fail(c, e, "cudaMalloc (staging a host buffer)", err, errlen);
        return NULL;
    }
    e = cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, c->stream);
    if (e != cudaSuccess) {
        cudaFree(d);
        cuda_fail(c, e, "cudaMemcpyAsync (staging)", err, errlen);
        return NULL;
    }
    return d;
}

/* After the collective's sync: copy a staged result back, free it. */
static int unstage(struct nccl_comm *c, void *h, void *d, size_t bytes, int staged,
                   int rc, char *err, size_t errlen)
{
    if (!staged)
        return rc;
    if (rc == 0) {
        cudaError_t e = cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost);
        if (e != cudaSuccess)
            rc = cuda_fail(c, e, "cudaMemcpy (staged result)", err, errlen);
    }
    cudaFree(d);
    return rc;
}

static int nccl_allreduce(struct hg_comm *base, void *buf, size_t n,
                          enum hg_comm_dtype dt, char *err, size_t errlen)
{
    struct nccl_comm *c = (struct nccl_comm *)base;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    if (n == 0)
        return 0;
    size_t bytes = n * (dt == HG_COMM_F32 ? 4 : 8);
    int staged;
    void *d = stage(c, buf, bytes, &staged, err, errlen);
    if (!d)
        return -1;
    ncclResult_t r = ncclAllReduce(d, d, n, dt == HG_COMM_F32 ? ncclFloat32 : ncclFloat64,
                                   ncclSum, c->comm, c->stream);
    if (r != ncclSuccess) {
        unstage(c, buf, d, bytes, staged, -1, err, errlen);
        return nccl_fail(c, r, "ncclAllReduce", err, errlen);
    }
    char what[64];
    snprintf(what, sizeof what, "allreduce of %zu %s", n,
             dt == HG_COMM_F32 ? "floats" : "doubles");
    return unstage(c, buf, d, bytes, staged, sync_stream(c, what, err, errlen), err, errlen);
}

static int nccl_broadcast(struct hg_comm *base, void *buf, size_t bytes,
                          int root, char *err, size_t errlen);

/* Queues op on our stream behind the work queued so far on op->after;
 * host buffers run at once (staged, blocking). */
static int nccl_send(struct hg_comm *base, const void *buf, size_t bytes, int peer,
                     char *err, size_t errlen);

static int queue_allgatherv(struct nccl_comm *c, const void *send, void *recv,
                            const size_t *counts, char *err, size_t errlen);
static int queue_reduce_scatterv(struct nccl_comm *c, const float *send,
                                 float *recv, const size_t *counts, char *err,
                                 size_t errlen);

static int nccl_start(struct hg_comm *base, const struct hg_comm_op *op,
                      char *err, size_t errlen)
{
    struct nccl_comm *c = (struct nccl_comm *)base;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    if (op->n == 0) /* a v collective's n: the sum of its counts */
        return 0;
    if (op->kind == HG_COMM_OP_SEND) /* hg_comm_send_start sends at once here */
        return nccl_send(base, op->send, op->n, op->root, err, errlen);
    if ((op->kind == HG_COMM_OP_ALLREDUCE || op->kind == HG_COMM_OP_BROADCAST) &&
        is_host(op->buf)) {
        if (op->kind == HG_COMM_OP_ALLREDUCE)
            return nccl_allreduce(base, op->buf, op->n, op->dt, err, errlen);
        return nccl_broadcast(base, op->buf, op->n, op->root, err, errlen);
    }
    cudaError_t e;
    if (!c->have_ev) {
        e = cudaEventCreateWithFlags(&c->after_ev, cudaEventDisableTiming);
        if (e != cudaSuccess)
            return cuda_fail(c, e, "cudaEventCreateWithFlags", err, errlen);
        c->have_ev = 1;
    }
    /* one event serves every call: a wait takes the record made before it */
    if ((e = cudaEventRecord(c->after_ev, (cudaStream_t)op->after)) != cudaSuccess)
        return cuda_fail(c, e, "cudaEventRecord", err, errlen);
    if ((e = cudaStreamWaitEvent(c->stream, c->after_ev, 0)) != cudaSuccess)
        return cuda_fail(c, e, "cudaStreamWaitEvent", err, errlen);
    switch (op->kind) {
    case HG_COMM_OP_ALLREDUCE:
        NCCL_CHECK(c, ncclAllReduce(op->buf, op->buf, op->n,
                                    op->dt == HG_COMM_F32 ? ncclFloat32
                                                          : ncclFloat64,
                                    ncclSum, c->comm, c->stream), err, errlen);
        break;
    case HG_COMM_OP_BROADCAST:
        NCCL_CHECK(c, ncclBroadcast(op->buf, op->buf, op->n, ncclUint8,
                                    op->root, c->comm, c->stream), err, errlen);
        break;
    case HG_COMM_OP_ALLGATHER:
        NCCL_CHECK(c, ncclAllGather(op->send, op->buf, op->n, ncclUint8,
                                    c->comm, c->stream), err, errlen);
        break;
    case HG_COMM_OP_ALLGATHERV:
        return queue_allgatherv(c, op->send, op->buf, op->counts, err, errlen);
    case HG_COMM_OP_REDUCE_SCATTERV:
        return queue_reduce_scatterv(c, op->send, op->buf, op->counts, err,
                                     errlen);
    case HG_COMM_OP_SEND:
    case HG_COMM_OP_RECV:
        break;
    }
    return 0;
}

static int nccl_wait(struct hg_comm *base, char *err, size_t errlen)
{
    struct nccl_comm *c = (struct nccl_comm *)base;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    return sync_stream(c, "asynchronous collectives", err, errlen);
}

static int nccl_test(struct hg_comm *base, int *done, char *err,
                     size_t errlen)
{
    struct nccl_comm *c = (struct nccl_comm *)base;
    *done = 0;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    cudaError_t e = cudaStreamQuery(c->stream);
    if (e == cudaErrorNotReady)
        return 0;
    if (e != cudaSuccess)
        return cuda_fail(c, e, "cudaStreamQuery", err, errlen);
    *done = 1;
    return 0;
}

static unsigned nccl_caps(const struct hg_comm *c)
{
    (void)c;
    return HG_COMM_DEVICE_MEMORY | HG_COMM_ASYNC | HG_COMM_GROUPS;
}

static int nccl_broadcast(struct hg_comm *base, void *buf, size_t bytes,
                          int root, char *err, size_t errlen)
{
    struct nccl_comm *c = (struct nccl_comm *)base;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    if (bytes == 0)
        return 0;
    int staged;
    void *d = stage(c, buf, bytes, &staged, err, errlen);
    if (!d)
        return -1;
    ncclResult_t r = ncclBroadcast(d, d, bytes, ncclUint8, root, c->comm, c->stream);
    if (r != ncclSuccess) {
        unstage(c, buf, d, bytes, staged, -1, err, errlen);
        return nccl_fail(c, r, "ncclBroadcast", err, errlen);
    }
    char what[96];
    snprintf(what, sizeof what, "broadcast of %zu bytes from rank %d", bytes,
             W(c, root));
    return unstage(c, buf, d, bytes, staged, sync_stream(c, what, err, errlen), err, errlen);
}

/* In place when send == recv + rank*bytes, as NCCL allows. */
static int nccl_allgather(struct hg_comm *base, const void *send, void *recv,
                          size_t bytes, char *err, size_t errlen)
{
    struct nccl_comm *c = (struct nccl_comm *)base;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    if (bytes == 0)
        return 0;
    NCCL_CHECK(c, ncclAllGather(send, recv, bytes, ncclUint8, c->comm,
                                c->stream), err, errlen);
    char what[64];
    snprintf(what, sizeof what, "allgather of %zu bytes", bytes);
    return sync_stream(c, what, err, errlen);
}

/* ----------------------------------------------------- uneven counts */

/* NCCL has no allgatherv: a group of one ncclBroadcast per rank with a
 * count (root r's counts[r] bytes into recv + off_r on every rank; a
 * non-root passes recvbuff as sendbuff, which NCCL does not read there;
 * send == recv + off_rank is its in-place case).  Device buffers.  The counts are not checked
 * across ranks: NCCL has no cheap way to. */
static int queue_allgatherv(struct nccl_comm *c, const void *send, void *recv,
                            const size_t *counts, char *err, size_t errlen)
{
    int w = c->base.world, me = c->base.rank;
    NCCL_CHECK(c, ncclGroupStart(), err, errlen);
    size_t at = 0;
    for (int r = 0; r < w; at += counts[r], r++) {
        if (counts[r] == 0) /* every rank skips it: the counts agree */
            continue;
        ncclResult_t res = ncclBroadcast(r == me ? send : (char *)recv + at,
                                         (char *)recv + at, counts[r],
                                         ncclUint8, r, c->comm, c->stream);
        if (res != ncclSuccess) {
            ncclGroupEnd();
            return nccl_fail(c, res, "ncclBroadcast (allgatherv)", err, errlen);
        }
    }
    NCCL_CHECK(c, ncclGroupEnd(), err, errlen);
    return 0;
}

/* reduce_scatterv: a group of one ncclReduce (sum) per rank with a count,
 * slice r of send to root r (recv on the root, NULL elsewhere as NCCL
 * allows; send + off_rank == recv is its in-place case).  NCCL's
 * summation order, not the rank order. */
static int queue_reduce_scatterv(struct nccl_comm *c, const float *send,
                                 float *recv, const size_t *counts, char *err,
                                 size_t errlen)
{
    int w = c->base.world, me = c->base.rank;
    NCCL_CHECK(c, ncclGroupStart(), err, errlen);
    size_t at = 0;
    for (int r = 0; r < w; at += counts[r], r++) {
        if (counts[r] == 0)
            continue;
        ncclResult_t res = ncclReduce(send + at, r == me ? recv : NULL,
                                      counts[r], ncclFloat32, ncclSum, r,
                                      c->comm, c->stream);
        if (res != ncclSuccess) {
            ncclGroupEnd();
            return nccl_fail(c, res, "ncclReduce (reduce_scatterv)", err,
                             errlen);
        }
    }
    NCCL_CHECK(c, ncclGroupEnd(), err, errlen);
    return 0;
}

static int nccl_allgatherv(struct hg_comm *base, const void *send, void *recv,
                           const size_t *counts, char *err, size_t errlen)
{
    struct nccl_comm *c = (struct nccl_comm *)base;
    if (check_usable(c, err, errlen) != 0 ||
        queue_allgatherv(c, send, recv, counts, err, errlen) != 0)
        return -1;
    char what[64];
    snprintf(what, sizeof what, "allgatherv of %zu bytes",
             hg_comm_counts_off(counts, base->world));
    return sync_stream(c, what, err, errlen);
}

static int nccl_reduce_scatterv(struct hg_comm *base, const float *send,
                                float *recv, const size_t *counts, char *err,
                                size_t errlen)
{
    struct nccl_comm *c = (struct nccl_comm *)base;
    if (check_usable(c, err, errlen) != 0 ||
        queue_reduce_scatterv(c, send, recv, counts, err, errlen) != 0)
        return -1;
    char what[64];
    snprintf(what, sizeof what, "reduce_scatterv of %zu floats",
             hg_comm_counts_off(counts, base->world));
    return sync_stream(c, what, err, errlen);
}

static int nccl_barrier(struct hg_comm *base, char *err, size_t errlen)
{
    struct nccl_comm *c = (struct nccl_comm *)base;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    NCCL_CHECK(c, ncclAllReduce(c->scratch, c->scratch, 1, ncclFloat32, ncclSum,
                                c->comm, c->stream), err, errlen);
    return sync_stream(c, "barrier", err, errlen);
}

/* ------------------------------------------------------- point to point */

static int nccl_send(struct hg_comm *base, const void *buf, size_t bytes,
                     int peer, char *err, size_t errlen)
{
    struct nccl_comm *c = (struct nccl_comm *)base;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    char what[96];
    snprintf(what, sizeof what, "send of %zu bytes to rank %d", bytes,
             W(c, peer));
    uint64_t size = bytes;
    char *hdr = (char *)c->scratch + 8;
    /* pageable source: the copy has read `size` when the call returns */
    CUDA_CHECK(c, cudaMemcpyAsync(hdr, &size, sizeof size,
                                  cudaMemcpyHostToDevice, c->stream),
               err, errlen);
    NCCL_CHECK(c, ncclGroupStart(), err, errlen);
    NCCL_CHECK(c, ncclSend(hdr, sizeof size, ncclUint8, peer, c->comm,
                           c->stream), err, errlen);
    NCCL_CHECK(c, ncclGroupEnd(), err, errlen);
    if (sync_stream(c, what, err, errlen) != 0)
        return -1;
    if (bytes == 0)
        return 0;
    NCCL_CHECK(c, ncclGroupStart(), err, errlen);
    NCCL_CHECK(c, ncclSend(buf, bytes, ncclUint8, peer, c->comm, c->stream),
               err, errlen);
    NCCL_CHECK(c, ncclGroupEnd(), err, errlen);
    return sync_stream(c, what, err, errlen);
}

static int nccl_recv(struct hg_comm *base, void *buf, size_t bytes, int peer,
                     char *err, size_t errlen)
{
    struct nccl_comm *c = (struct nccl_comm *)base;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    char what[96];
    snprintf(what, sizeof what, "recv of %zu bytes from rank %d", bytes,
             W(c, peer));
    char *hdr = (char *)c->scratch + 16;
    uint64_t size = 0;
    NCCL_CHECK(c, ncclGroupStart(), err, errlen);
    NCCL_CHECK(c, ncclRecv(hdr, sizeof size, ncclUint8, peer, c->comm,
                           c->stream), err, errlen);
    NCCL_CHECK(c, ncclGroupEnd(), err, errlen);
    CUDA_CHECK(c, cudaMemcpyAsync(&size, hdr, sizeof size,
                                  cudaMemcpyDeviceToHost, c->stream),
               err, errlen);
    if (sync_stream(c, what, err, errlen) != 0)
        return -1;
    if (size != bytes) {
        /* the sender waits in its data phase: it learns of our failure
         * from the store */
        hg_kerr(err, errlen, "nccl: rank %d: recv of %zu bytes from rank %d, "
                "which sent %llu bytes (sizes must agree)", c->jrank, bytes,
                W(c, peer), (unsigned long long)size);
        stop(c, 1);
        return -1;
    }
    if (bytes == 0)
        return 0;
    NCCL_CHECK(c, ncclGroupStart(), err, errlen);
    NCCL_CHECK(c, ncclRecv(buf, bytes, ncclUint8, peer, c->comm, c->stream),
               err, errlen);
    NCCL_CHECK(c, ncclGroupEnd(), err, errlen);
    return sync_stream(c, what, err, errlen);
}

static const struct hg_comm_ops nccl_ops = {
    .name = "nccl",
    .caps = nccl_caps,
    .allreduce = nccl_allreduce,
    .broadcast = nccl_broadcast,
    .allgather = nccl_allgather,
    .allgatherv = nccl_allgatherv,
    .reduce_scatterv = nccl_reduce_scatterv,
    .barrier = nccl_barrier,
    .send = nccl_send,
    .recv = nccl_recv,
    .group = nccl_group,
    .start = nccl_start,
    .wait = nccl_wait,
    .test = nccl_test,
    .abort = nccl_abort,
    .free = nccl_free,
};

#endif /* HG_HAVE_NCCL */
