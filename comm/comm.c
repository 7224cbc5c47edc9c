/* comm.c - hg_comm.h's calls dispatched to the handle's backend, with the
 * argument checks every backend would otherwise repeat, and the
 * asynchronous requests of the host backends.
 *
 * Requests of a host backend (ops->start NULL): a FIFO per handle and, with
 * HG_COMM_ASYNC, a progress thread of the handle (made at the first start,
 * every signal blocked in it) that runs them one by one through the
 * backend's blocking calls, so the result is the blocking call's, bit for
 * bit.  Every blocking call first waits until the FIFO is empty: one
 * thread at a time is inside the backend.  Without HG_COMM_ASYNC a start
 * runs the request at once, in the caller's thread.  Either way the first
 * failure is kept (its id and message) and returned by the waits for it
 * or any later request, and by the next blocking call.  A wait has no
 * deadline of its own: every request is a backend call whose waits give up
 * after the handle's timeout naming the peer. */
#define _GNU_SOURCE

#include "base/hg_base.h"
#include "comm/comm-impl.h"

#include <assert.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct hg_comm_async {
    pthread_mutex_t mu;
    pthread_cond_t work; /* the progress thread: a request, or stop */
    pthread_cond_t done; /* waiters: a request finished */
    pthread_t thread;
    int threaded; /* the progress thread exists */
    int stop;
    int aborted;
    struct hg_comm_op *q; /* [cap] ring: the requests not finished yet,
                             the oldest (maybe running) at head */
    size_t cap, head, len;
    uint64_t started, finished; /* ids handed out / finished (in order) */
    uint64_t failed;            /* the first failed request's id, or 0 */
    int told;                   /* its failure was returned by a blocking
                                   call already */
    char msg[512];              /* its message */
};

int hg_comm_rank(const struct hg_comm *c) { return c->rank; }
int hg_comm_world(const struct hg_comm *c) { return c->world; }
const char *hg_comm_backend(const struct hg_comm *c) { return c->ops->name; }
unsigned hg_comm_caps(const struct hg_comm *c) { return c->ops->caps(c); }

/* ------------------------------------------------------------ requests */

static int run_op(struct hg_comm *c, const struct hg_comm_op *op, char *err,
                  size_t errlen)
{
    switch (op->kind) {
    case HG_COMM_OP_ALLREDUCE:
        return c->ops->allreduce(c, op->buf, op->n, op->dt, err, errlen);
    case HG_COMM_OP_BROADCAST:
        return c->ops->broadcast(c, op->buf, op->n, op->root, err, errlen);
    case HG_COMM_OP_ALLGATHER:
        return c->ops->allgather(c, op->send, op->buf, op->n, err, errlen);
    case HG_COMM_OP_SEND:
        return c->ops->send(c, op->send, op->n, op->root, err, errlen);
    case HG_COMM_OP_RECV:
        return c->ops->recv(c, op->buf, op->n, op->root, err, errlen);
    case HG_COMM_OP_ALLGATHERV:
        return c->ops->allgatherv(c, op->send, op->buf, op->counts, err,
                                  errlen);
    case HG_COMM_OP_REDUCE_SCATTERV:
        return c->ops->reduce_scatterv(c, op->send, op->buf, op->counts, err,
                                       errlen);
    }
    return hg_kerr(err, errlen, "%s: rank %d: unknown request kind %d",
                   c->ops->name, c->rank, (int)op->kind);
}

/* Records request `id`'s outcome (under mu). */
static void finish(struct hg_comm_async *a, uint64_t id, int rc,
                   const char *msg)
{
    a->finished = id;
    if (rc != 0 && !a->failed) {
        a->failed = id;
        snprintf(a->msg, sizeof a->msg, "%s", msg);
    }
    pthread_cond_broadcast(&a->done);
}

static void *progress(void *arg)
{
    struct hg_comm *c = arg;
    struct hg_comm_async *a = c->async;
    char msg[sizeof a->msg];
    pthread_mutex_lock(&a->mu);
    for (;;) {
        while (a->len == 0 && !a->stop)
            pthread_cond_wait(&a->work, &a->mu);
        if (a->len == 0)
            break;
        struct hg_comm_op op = a->q[a->head]; /* the ring may grow meanwhile */
        int aborted = a->aborted;
        pthread_mutex_unlock(&a->mu);
        int rc;
        msg[0] = '\0';
        if (aborted)
            rc = hg_kerr(msg, sizeof msg, "%s: rank %d: aborted before the "
                         "request ran", c->ops->name, c->rank);
        else
            rc = run_op(c, &op, msg, sizeof msg);
        free(op.own);
        pthread_mutex_lock(&a->mu);
        a->head = (a->head + 1) % a->cap;
        a->len--;
        finish(a, a->finished + 1, rc, msg);
    }
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

static int async_init(struct hg_comm *c, char *err, size_t errlen)
{
    if (c->async)
        return 0;
    struct hg_comm_async *a = calloc(1, sizeof *a);
    if (!a)
        return hg_kerr(err, errlen, "%s: rank %d: out of memory", c->ops->name,
                       c->rank);
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->work, NULL);
    pthread_cond_init(&a->done, NULL);
    c->async = a;
    if (c->ops->start || !(c->ops->caps(c) & HG_COMM_ASYNC))
        return 0;
    /* signals go to the program's own threads, never to ours */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    /* without a thread (none to be had) the requests run at once: the
     * same results, no overlap */
    a->threaded = pthread_create(&a->thread, NULL, progress, c) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return 0;
}

/* Waits (under mu) until request `id` has finished; its outcome. */
static int wait_locked(struct hg_comm *c, uint64_t id, char *err,
                       size_t errlen)
{
    struct hg_comm_async *a = c->async;
    while (a->finished < id)
        pthread_cond_wait(&a->done, &a->mu);
    if (a->failed && a->failed <= id) {
        hg_kerr(err, errlen, "%s", a->msg);
        return -1;
    }
    return 0;
}

/* Before a blocking call: every request done, and a failure not yet
 * returned by a blocking call returned now. */
static int drain(struct hg_comm *c, char *err, size_t errlen)
{
    struct hg_comm_async *a = c->async;
    if (!a)
        return 0;
    int rc = 0;
    if (c->ops->start) {
        if (a->finished < a->started) {
            rc = c->ops->wait(c, err, errlen);
            a->finished = a->started;
        }
        return rc;
    }
    pthread_mutex_lock(&a->mu);
    rc = wait_locked(c, a->started, err, errlen);
    if (rc != 0 && a->told)
        rc = 0; /* said once; the backend says "unusable" from now on */
    a->told |= rc != 0;
    pthread_mutex_unlock(&a->mu);
    return rc;
}

static int start(struct hg_comm *c, const struct hg_comm_op *op,
                 struct hg_comm_req *req, char *err, size_t errlen)
{
    if (req)
        req->id = 0;
    if (async_init(c, err, errlen) != 0)
        return -1;
    struct hg_comm_async *a = c->async;
    if (c->ops->start) {
        if (c->ops->start(c, op, err, errlen) != 0)
            return -1;
        if (req)
            req->id = ++a->started;
        else
            ++a->started;
        return 0;
    }
    /* the caller's counts may go once we return: the request runs on a
     * copy of its own */
    struct hg_comm_op qop = *op;
    if (op->counts) {
        size_t bytes = (size_t)c->world * sizeof *op->counts;
        if (!(qop.own = malloc(bytes)))
            return hg_kerr(err, errlen, "%s: rank %d: out of memory",
                           c->ops->name, c->rank);
        memcpy(qop.own, op->counts, bytes);
        qop.counts = qop.own;
    }
    pthread_mutex_lock(&a->mu);
    if (a->failed) {
        hg_kerr(err, errlen, "%s (an earlier request failed)", a->msg);
        pthread_mutex_unlock(&a->mu);
        free(qop.own);
        return -1;
    }
    uint64_t id = ++a->started;
    if (req)
        req->id = id;
    if (!a->threaded) {
        /* no progress thread: now, in the caller's thread */
        pthread_mutex_unlock(&a->mu);
        char msg[sizeof a->msg] = "";
        int rc = run_op(c, &qop, msg, sizeof msg);
        free(qop.own);
        pthread_mutex_lock(&a->mu);
        finish(a, id, rc, msg);
        pthread_mutex_unlock(&a->mu);
        return 0;
    }
    if (a->len == a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 16;
        struct hg_comm_op *q = malloc(cap * sizeof *q);
        if (!q) {
            a->started--;
            pthread_mutex_unlock(&a->mu);
            free(qop.own);
            return hg_kerr(err, errlen, "%s: rank %d: out of memory",
                           c->ops->name, c->rank);
        }
        for (size_t i = 0; i < a->len; i++)
            q[i] = a->q[(a->head + i) % a->cap];
        free(a->q);
        a->q = q;
        a->cap = cap;
        a->head = 0;
    }
    a->q[(a->head + a->len++) % a->cap] = qop;
    pthread_cond_signal(&a->work);
    pthread_mutex_unlock(&a->mu);
    return 0;
}

int hg_comm_allreduce_f32_start(struct hg_comm *c, float *buf, size_t n,
                                void *after, struct hg_comm_req *req,
                                char *err, size_t errlen)
{
    assert(c && (buf || n == 0));
    struct hg_comm_op op = {.kind = HG_COMM_OP_ALLREDUCE, .dt = HG_COMM_F32,
                            .buf = buf, .n = n, .after = after};
    return start(c, &op, req, err, errlen);
}

int hg_comm_allreduce_f64_start(struct hg_comm *c, double *buf, size_t n,
                                void *after, struct hg_comm_req *req,
                                char *err, size_t errlen)
{
    assert(c && (buf || n == 0));
    struct hg_comm_op op = {.kind = HG_COMM_OP_ALLREDUCE, .dt = HG_COMM_F64,
                            .buf = buf, .n = n, .after = after};
    return start(c, &op, req, err, errlen);
}

static int bad_root(struct hg_comm *c, int root, char *err, size_t errlen)
{
    if (root >= 0 && root < c->world)
        return 0;
    hg_kerr(err, errlen, "%s: rank %d: broadcast root %d outside 0..%d",
            c->ops->name, c->rank, root, c->world - 1);
    hg_comm_abort(c);
    return -1;
}

int hg_comm_broadcast_start(struct hg_comm *c, void *buf, size_t bytes,
                            int root, void *after, struct hg_comm_req *req,
                            char *err, size_t errlen)
{
    assert(c && (buf || bytes == 0));
    if (req)
        req->id = 0;
    if (bad_root(c, root, err, errlen) != 0)
        return -1;
    struct hg_comm_op op = {.kind = HG_COMM_OP_BROADCAST, .buf = buf,
                            .n = bytes, .root = root, .after = after};
    return start(c, &op, req, err, errlen);
}

int hg_comm_allgather_start(struct hg_comm *c, const void *send, void *recv,
                            size_t bytes, void *after,
                            struct hg_comm_req *req, char *err, size_t errlen)
{
    assert(c && ((send && recv) || bytes == 0));
    struct hg_comm_op op = {.kind = HG_COMM_OP_ALLGATHER, .buf = recv,
                            .send = send, .n = bytes, .after = after};
    return start(c, &op, req, err, errlen);
}

/* The counts of a v collective: *total = their sum, which must fit a
 * size_t in units of esz bytes (a count above PTRDIFF_MAX is a negative
 * number converted).  A failure breaks the handle, as a bad root does:
 * the peers, whose counts may look fine, fail instead of waiting. */
static int bad_counts(struct hg_comm *c, const size_t *counts, size_t esz,
                      const char *what, size_t *total, char *err,
                      size_t errlen)
{
    size_t sum = 0, max = SIZE_MAX / esz;
    for (int r = 0; r < c->world; r++) {
        if (counts[r] > PTRDIFF_MAX / esz) {
            hg_kerr(err, errlen, "%s: rank %d: %s: counts[%d] = %zu is too "
                    "large (a negative count?)", c->ops->name, c->rank, what,
                    r, counts[r]);
            hg_comm_abort(c);
            return -1;
        }
        if (counts[r] > max - sum) {
            hg_kerr(err, errlen, "%s: rank %d: %s: the counts of ranks 0..%d "
                    "add up to more than %zu elements", c->ops->name,
                    c->rank, what, r, max);
            hg_comm_abort(c);
            return -1;
        }
        sum += counts[r];
    }
    *total = sum;
    return 0;
}

int hg_comm_allgatherv_start(struct hg_comm *c, const void *send, void *recv,
                             const size_t *counts, void *after,
                             struct hg_comm_req *req, char *err, size_t errlen)
{
    assert(c && counts);
    size_t total;
    if (req)
        req->id = 0;
    if (bad_counts(c, counts, 1, "allgatherv", &total, err, errlen) != 0)
        return -1;
    assert((send || counts[c->rank] == 0) && (recv || total == 0));
    struct hg_comm_op op = {.kind = HG_COMM_OP_ALLGATHERV, .buf = recv,
                            .send = send, .n = total, .counts = counts,
                            .after = after};
    return start(c, &op, req, err, errlen);
}

int hg_comm_reduce_scatterv_f32_start(struct hg_comm *c, const float *send,
                                      float *recv, const size_t *counts,
                                      void *after, struct hg_comm_req *req,
                                      char *err, size_t errlen)
{
    assert(c && counts);
    size_t total;
    if (req)
        req->id = 0;
    if (bad_counts(c, counts, sizeof(float), "reduce_scatterv", &total, err,
                   errlen) != 0)
        return -1;
    assert((send || total == 0) && (recv || counts[c->rank] == 0));
    struct hg_comm_op op = {.kind = HG_COMM_OP_REDUCE_SCATTERV, .buf = recv,
                            .send = send, .n = total, .counts = counts,
                            .after = after};
    return start(c, &op, req, err, errlen);
}

int hg_comm_wait_req(struct hg_comm *c, struct hg_comm_req req, char *err,
                     size_t errlen)
{
    assert(c);
    struct hg_comm_async *a = c->async;
    if (req.id == 0 || !a)
        return 0;
    if (req.id > a->started)
        return hg_kerr(err, errlen, "%s: rank %d: wait for request %llu, of "
                       "%llu started", c->ops->name, c->rank,
                       (unsigned long long)req.id,
                       (unsigned long long)a->started);
    if (c->ops->start) {
        if (a->finished >= req.id)
            return 0;
        int rc = c->ops->wait(c, err, errlen);
        a->finished = a->started;
        return rc;
    }
    pthread_mutex_lock(&a->mu);
    int rc = wait_locked(c, req.id, err, errlen);
    pthread_mutex_unlock(&a->mu);
    return rc;
}

int hg_comm_test_req(struct hg_comm *c, struct hg_comm_req req, int *done,
                     char *err, size_t errlen)
{
    assert(c && done);
    struct hg_comm_async *a = c->async;
    *done = 1;
    if (req.id == 0 || !a)
        return 0;
    if (c->ops->start) {
        if (a->finished >= req.id)
            return 0;
        if (c->ops->test(c, done, err, errlen) != 0)
            return -1;
        if (*done)
            a->finished = a->started;
        return 0;
    }
    pthread_mutex_lock(&a->mu);
    *done = a->finished >= req.id;
    int rc = 0;
    if (*done && a->failed && a->failed <= req.id)
        rc = hg_kerr(err, errlen, "%s", a->msg);
    pthread_mutex_unlock(&a->mu);
    return rc;
}

struct hg_comm_req hg_comm_failed_req(struct hg_comm *c)
{
    assert(c);
    struct hg_comm_async *a = c->async;
    struct hg_comm_req r = {0};
    if (!a || c->ops->start)
        return r;
    pthread_mutex_lock(&a->mu);
    r.id = a->failed;
    pthread_mutex_unlock(&a->mu);
    return r;
}

int hg_comm_wait(struct hg_comm *c, char *err, size_t errlen)
{
    assert(c);
    if (!c->async)
        return 0;
    return hg_comm_wait_req(c, (struct hg_comm_req){c->async->started}, err,
                            errlen);
}

/* ---------------------------------------------------- blocking calls */

int hg_comm_allreduce_f32(struct hg_comm *c, float *buf, size_t n, char *err,
                          size_t errlen)
{
    assert(c && (buf || n == 0));
    if (drain(c, err, errlen) != 0)
        return -1;
    return c->ops->allreduce(c, buf, n, HG_COMM_F32, err, errlen);
}

int hg_comm_allreduce_f64(struct hg_comm *c, double *buf, size_t n, char *err,
                          size_t errlen)
{
    assert(c && (buf || n == 0));
    if (drain(c, err, errlen) != 0)
        return -1;
    return c->ops->allreduce(c, buf, n, HG_COMM_F64, err, errlen);
}

int hg_comm_broadcast(struct hg_comm *c, void *buf, size_t bytes, int root,
                      char *err, size_t errlen)
{
    assert(c && (buf || bytes == 0));
    if (bad_root(c, root, err, errlen) != 0 || drain(c, err, errlen) != 0)
        return -1;
    return c->ops->broadcast(c, buf, bytes, root, err, errlen);
}

int hg_comm_allgather(struct hg_comm *c, const void *send, void *recv,
                      size_t bytes, char *err, size_t errlen)
{
    assert(c && ((send && recv) || bytes == 0));
    if (drain(c, err, errlen) != 0)
        return -1;
    return c->ops->allgather(c, send, recv, bytes, err, errlen);
}

int hg_comm_allgatherv(struct hg_comm *c, const void *send, void *recv,
                       const size_t *counts, char *err, size_t errlen)
{
    assert(c && counts);
    size_t total;
    if (bad_counts(c, counts, 1, "allgatherv", &total, err, errlen) != 0)
        return -1;
    assert((send || counts[c->rank] == 0) && (recv || total == 0));
    if (drain(c, err, errlen) != 0)
        return -1;
    return c->ops->allgatherv(c, send, recv, counts, err, errlen);
}

int hg_comm_reduce_scatterv_f32(struct hg_comm *c, const float *send,
                                float *recv, const size_t *counts, char *err,
                                size_t errlen)
{
    assert(c && counts);
    size_t total;
    if (bad_counts(c, counts, sizeof(float), "reduce_scatterv", &total, err,
                   errlen) != 0)
        return -1;
    assert((send || total == 0) && (recv || counts[c->rank] == 0));
    if (drain(c, err, errlen) != 0)
        return -1;
    return c->ops->reduce_scatterv(c, send, recv, counts, err, errlen);
}

int hg_comm_barrier(struct hg_comm *c, char *err, size_t errlen)
{
    assert(c);
    if (drain(c, err, errlen) != 0)
        return -1;
    return c->ops->barrier(c, err, errlen);
}

static int bad_peer(struct hg_comm *c, int peer, const char *what, char *err,
                    size_t errlen)
{
    if (peer >= 0 && peer < c->world && peer != c->rank)
        return 0;
    hg_kerr(err, errlen, "%s: rank %d: %s peer %d is not another rank of 0..%d",
            c->ops->name, c->rank, what, peer, c->world - 1);
    hg_comm_abort(c);
    return -1;
}

int hg_comm_send(struct hg_comm *c, const void *buf, size_t bytes, int peer,
                 char *err, size_t errlen)
{
    assert(c && (buf || bytes == 0));
    if (bad_peer(c, peer, "send", err, errlen) != 0 ||
        drain(c, err, errlen) != 0)
        return -1;
    return c->ops->send(c, buf, bytes, peer, err, errlen);
}

int hg_comm_send_start(struct hg_comm *c, const void *buf, size_t bytes, int peer,
                       struct hg_comm_req *req, char *err, size_t errlen)
{
    assert(c && (buf || bytes == 0));
    if (req)
        req->id = 0;
    if (bad_peer(c, peer, "send", err, errlen) != 0)
        return -1;
    if (c->ops->start) /* a device backend's queue takes collectives only */
        return hg_comm_send(c, buf, bytes, peer, err, errlen);
    struct hg_comm_op op = {.kind = HG_COMM_OP_SEND, .send = buf, .n = bytes, .root = peer};
    return start(c, &op, req, err, errlen);
}

int hg_comm_recv_start(struct hg_comm *c, void *buf, size_t bytes, int peer,
                       struct hg_comm_req *req, char *err, size_t errlen)
{
    assert(c && (buf || bytes == 0));
    if (req)
        req->id = 0;
    if (bad_peer(c, peer, "recv", err, errlen) != 0)
        return -1;
    if (c->ops->start) /* a device backend's queue takes collectives only */
        return hg_comm_recv(c, buf, bytes, peer, err, errlen);
    struct hg_comm_op op = {.kind = HG_COMM_OP_RECV, .buf = buf, .n = bytes, .root = peer};
    return start(c, &op, req, err, errlen);
}

int hg_comm_recv(struct hg_comm *c, void *buf, size_t bytes, int peer,
                 char *err, size_t errlen)
{
    assert(c && (buf || bytes == 0));
    if (bad_peer(c, peer, "recv", err, errlen) != 0 ||
        drain(c, err, errlen) != 0)
        return -1;
    return c->ops->recv(c, buf, bytes, peer, err, errlen);
}

/* ---------------------------------------------------------------- groups */

int hg_comm_group_new(struct hg_comm *c, const int *ranks, int n,
                      struct hg_comm **g, char *err, size_t errlen)
{
    assert(c && g && (ranks || n == 0));
    *g = NULL;
    const char *name = c->ops->name;
    if (!(c->ops->caps(c) & HG_COMM_GROUPS) || !c->ops->group)
        return hg_kerr(err, errlen, "%s: rank %d: this handle cannot make "
                       "groups", name, c->rank);
    if (n < 1 || n > c->world)
        return hg_kerr(err, errlen, "%s: rank %d: a group of %d ranks in a "
                       "world of %d", name, c->rank, n, c->world);
    int me = -1;
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= c->world)
            return hg_kerr(err, errlen, "%s: rank %d: group member %d outside "
                           "0..%d", name, c->rank, ranks[i], c->world - 1);
        for (int j = 0; j < i; j++)
            if (ranks[j] == ranks[i])
                return hg_kerr(err, errlen, "%s: rank %d: rank %d is twice in "
                               "the group", name, c->rank, ranks[i]);
        if (ranks[i] == c->rank)
            me = i;
    }
    if (me < 0)
        return hg_kerr(err, errlen, "%s: rank %d: not a member of the group "
                       "it makes", name, c->rank);
    if (drain(c, err, errlen) != 0)
        return -1;
    return c->ops->group(c, ranks, n, g, err, errlen);
}

/* ------------------------------------------------------------ the end */

void hg_comm_abort(struct hg_comm *c)
{
    if (!c)
        return;
    struct hg_comm_async *a = c->async;
    if (a && !c->ops->start) {
        pthread_mutex_lock(&a->mu);
        a->aborted = 1; /* the queued requests fail without running */
        pthread_mutex_unlock(&a->mu);
    }
    c->ops->abort(c); /* safe beside a request that is running */
}

void hg_comm_free(struct hg_comm *c)
{
    if (!c)
        return;
    struct hg_comm_async *a = c->async;
    if (a) {
        if (c->ops->start) {
            if (a->finished < a->started)
                c->ops->wait(c, NULL, 0);
        } else if (a->threaded) {
            /* the queued requests run (or fail at once after an abort) */
            pthread_mutex_lock(&a->mu);
            a->stop = 1;
            pthread_cond_signal(&a->work);
            pthread_mutex_unlock(&a->mu);
            pthread_join(a->thread, NULL);
        }
        pthread_cond_destroy(&a->work);
        pthread_cond_destroy(&a->done);
        pthread_mutex_destroy(&a->mu);
        free(a->q);
        free(a);
        c->async = NULL;
    }
    c->ops->free(c);
}
