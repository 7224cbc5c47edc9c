/* ps.c - a parameter server over hg_comm.h's public calls (hg_comm.h
 * documents what it promises).
 *
 * Connections: a group {server, client} of c per remote client (group rank
 * 0 the server, 1 the client), so that a client's death breaks its own
 * link only and the server can still tell the others who died.  On the
 * server one service thread per remote client reads that client's
 * requests one at a time and answers each; a client that is also the
 * server calls the same code in its own thread.
 *
 * Messages (native byte order, like the backends' data):
 *   request  struct ps_req: HELLO (id = nparams, step = hash of numel[],
 *            bytes = the client's rank), PUSH (+ bytes of floats), PULL,
 *            BYE;
 *   reply    struct ps_rep: status 0 + bytes of floats (PULL) or nothing,
 *            or status 1 + bytes of message text.
 *
 * Server state, under one lock: the master copies, each id's version
 * (steps summed), and per client a slot holding its push of the step being
 * gathered (pending[id]).  A push waits for its client's slot to be free
 * (its previous step summed); when the last client's push of a step
 * arrives, the pushing thread sums the slots in client rank order (slot of
 * the lowest rank += the next ones, in place), calls the apply hook and
 * bumps the version.  A wait that cannot end (a client gone, the apply
 * hook failed) fails at once naming why; one that could still end gives up
 * after cfg.timeout_s naming the clients that have not pushed. */
#define _GNU_SOURCE

#include "comm/hg_comm.h"
#include "base/hg_base.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PS_MAGIC 0x53504748u /* "HGPS" */
#define PS_MSG 512           /* bytes of an error message, NUL included */

enum { PS_HELLO = 1, PS_PUSH, PS_PULL, PS_BYE };

struct ps_req {
    uint32_t magic, op;
    int32_t id;
    uint32_t pad;
    uint64_t step;
    uint64_t bytes;
};

struct ps_rep {
    uint32_t magic;
    int32_t status;
    uint64_t version;
    uint64_t bytes;
    uint64_t pad;
};

struct ps_client {      /* the server's record of one client */
    struct hg_ps *ps;
    int rank;           /* in c */
    struct hg_comm *link; /* {server, client}; NULL: the server itself */
    pthread_t thread;
    int have_thread;
    float *slot;        /* [total] its push of the step being gathered,
                           parameter id at off[id] */
    unsigned char *pending; /* [nparams] 1: slot holds that push */
    uint64_t *pushed;   /* [nparams] the last step it pushed */
    float *out;         /* [maxn] a pull's copy, sent outside the lock */
    int gone;           /* left, died or broke the protocol */
    char why[PS_MSG];
};

struct hg_ps {
    int me, server, is_server, is_client;
    int nparams;
    size_t *numel;   /* [nparams] */
    size_t *off;     /* [nparams] offset of each id in a flat block */
    size_t total;    /* floats of all parameters */
    uint64_t sig;    /* hash of numel[]: the clients must agree */
    double timeout_s;
    struct hg_comm *link; /* a remote client's group with the server */
    /* the server's */
    pthread_mutex_t mu;
    pthread_cond_t cv; /* a push, a step summed, a client gone */
    int have_sync;
    float *master;     /* [total] */
    uint64_t *version; /* [nparams] */
    int *npending;     /* [nparams] pushes of the step being gathered */
    struct ps_client *cl; /* [ncl] in client rank order */
    int ncl;
    int local;         /* index in cl of the server itself, or -1 */
    int failed;        /* the apply hook failed: every wait fails */
    char fmsg[PS_MSG];
    hg_ps_apply_fn *apply;
    void *apply_arg;
};

static uint64_t numel_sig(const size_t *numel, int n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 8; k++) {
            h ^= ((uint64_t)numel[i] >> (8 * k)) & 0xff;
            h *= 0x100000001b3ull;
        }
    return h;
}

/* The clients not holding a push of id's step being gathered, as "1,3". */
static void missing(const struct hg_ps *ps, int id, char *out, size_t len)
{
    size_t n = 0;
    out[0] = '\0';
    for (int k = 0; k < ps->ncl && n + 16 < len; k++)
        if (!ps->cl[k].pending[id])
            n += (size_t)snprintf(out + n, len - n, "%s%d", n ? "," : "",
                                  ps->cl[k].rank);
}

/* Under mu: -1 with a message when the step being gathered for id can
 * never be summed (a missing client gone, the apply hook failed). */
static int hopeless(const struct hg_ps *ps, int id, char *err, size_t errlen)
{
    if (ps->failed)
        return hg_kerr(err, errlen, "%s", ps->fmsg);
    for (int k = 0; k < ps->ncl; k++) {
        const struct ps_client *cl = &ps->cl[k];
        if (!cl->pending[id] && cl->gone)
            return hg_kerr(err, errlen, "ps: rank %d (server): step %llu of "
                           "parameter %d cannot be summed: rank %d is gone (%s)",
                           ps->me, (unsigned long long)ps->version[id] + 1, id,
                           cl->rank, cl->why);
    }
    return 0;
}

/* Under mu: waits on cv until *done() or hopeless or the deadline. */
static int wait_for(struct hg_ps *ps, int id, const struct timespec *dl,
                    int (*done)(struct hg_ps *, int, const void *),
                    const void *arg, const char *what, char *err,
                    size_t errlen)
{
    while (!done(ps, id, arg)) {
        if (hopeless(ps, id, err, errlen) != 0)
            return -1;
        if (pthread_cond_timedwait(&ps->cv, &ps->mu, dl) == ETIMEDOUT &&
            !done(ps, id, arg)) {
            char m[256];
            missing(ps, id, m, sizeof m);
            return hg_kerr(err, errlen, "ps: rank %d (server): %s: step %llu "
                           "of parameter %d: rank%s %s %s not pushed within "
                           "%g s", ps->me, what,
                           (unsigned long long)ps->version[id] + 1, id,
                           strchr(m, ',') ? "s" : "", m,
                           strchr(m, ',') ? "have" : "has", ps->timeout_s);
        }
    }
    return 0;
}

static int slot_free(struct hg_ps *ps, int id, const void *arg)
{
    (void)ps;
    return !((const struct ps_client *)arg)->pending[id];
}

static int has_version(struct hg_ps *ps, int id, const void *arg)
{
    return ps->version[id] >= *(const uint64_t *)arg;
}

/* Under mu: every client's push of id's step is in: sum, apply, bump. */
static void sum_step(struct hg_ps *ps, int id)
{
    size_t n = ps->numel[id], off = ps->off[id];
    float *acc = ps->cl[0].slot + off; /* [n] */
    for (int k = 1; k < ps->ncl; k++) {
        const float *g = ps->cl[k].slot + off; /* [n] */
        for (size_t i = 0; i < n; i++)
            acc[i] += g[i];
    }
    uint64_t step = ps->version[id] + 1;
    float *m = ps->master + off; /* [n] */
    if (ps->apply) {
        char e[PS_MSG] = "";
        if (ps->apply(ps->apply_arg, id, step, m, acc, n, e, sizeof e) != 0 &&
            !ps->failed) {
            ps->failed = 1;
            snprintf(ps->fmsg, sizeof ps->fmsg, "ps: rank %d (server): the "
                     "apply hook failed at step %llu of parameter %d: %s",
                     ps->me, (unsigned long long)step, id, e);
        }
    } else {
        for (size_t i = 0; i < n; i++)
            m[i] += acc[i];
    }
    ps->version[id] = step;
    ps->npending[id] = 0;
    for (int k = 0; k < ps->ncl; k++)
        ps->cl[k].pending[id] = 0;
    pthread_cond_broadcast(&ps->cv);
}

/* Checks a push's step against the client's last; -1 with a message. */
static int check_step(const struct hg_ps *ps, const struct ps_client *cl,
                      int id, uint64_t step, char *err, size_t errlen)
{
    if (step == cl->pushed[id] + 1)
        return 0;
    return hg_kerr(err, errlen, "ps: rank %d (server): rank %d pushed step "
                   "%llu of parameter %d after step %llu (steps go 1, 2, 3, "
                   "...)", ps->me, cl->rank, (unsigned long long)step, id,
                   (unsigned long long)cl->pushed[id]);
}

/* Under mu: the slot holds client k's push of `step` now. */
static void deposited(struct hg_ps *ps, struct ps_client *cl, int id,
                      uint64_t step)
{
    cl->pending[id] = 1;
    cl->pushed[id] = step;
    if (++ps->npending[id] == ps->ncl)
        sum_step(ps, id);
    else
        pthread_cond_broadcast(&ps->cv);
}

static void set_gone(struct hg_ps *ps, struct ps_client *cl, const char *why)
{
    pthread_mutex_lock(&ps->mu);
    if (!cl->gone) {
        cl->gone = 1;
        snprintf(cl->why, sizeof cl->why, "%s", why);
    }
    pthread_cond_broadcast(&ps->cv);
    pthread_mutex_unlock(&ps->mu);
}

/* ------------------------------------------------------ service thread */

static int reply(struct ps_client *cl, int status, uint64_t version,
                 const void *data, size_t bytes, char *e, size_t elen)
{
    struct ps_rep r = {.magic = PS_MAGIC, .status = status,
                       .version = version, .bytes = bytes};
    if (hg_comm_send(cl->link, &r, sizeof r, 1, e, elen) != 0)
        return -1;
    return bytes ? hg_comm_send(cl->link, data, bytes, 1, e, elen) : 0;
}

static int reply_err(struct ps_client *cl, const char *msg, char *e,
                     size_t elen)
{
    return reply(cl, 1, 0, msg, strlen(msg), e, elen);
}

static int bad_request(const struct hg_ps *ps, const struct ps_req *q,
                       char *err, size_t errlen)
{
    if (q->id < 0 || q->id >= ps->nparams)
        return hg_kerr(err, errlen, "ps: rank %d (server): parameter %d "
                       "outside 0..%d", ps->me, (int)q->id, ps->nparams - 1);
    if (q->op == PS_PUSH && q->bytes != ps->numel[q->id] * sizeof(float))
        return hg_kerr(err, errlen, "ps: rank %d (server): a push of %llu "
                       "bytes to parameter %d of %zu floats", ps->me,
                       (unsigned long long)q->bytes, (int)q->id,
                       ps->numel[q->id]);
    return 0;
}

/* One request of a remote client; -1 when its link is broken (gone set). */
static int serve_one(struct ps_client *cl, const struct ps_req *q)
{
    struct hg_ps *ps = cl->ps;
    char e[PS_MSG] = "", msg[PS_MSG] = "";
    struct timespec dl;
    if (bad_request(ps, q, msg, sizeof msg) != 0) {
        /* a client built on another config: nothing it sends can be
         * trusted any more */
        reply_err(cl, msg, e, sizeof e);
        set_gone(ps, cl, msg);
        return -1;
    }
    int id = q->id, rc;
    if (q->op == PS_PUSH) {
        hg_deadline_ts(&dl, ps->timeout_s);
        pthread_mutex_lock(&ps->mu);
        rc = check_step(ps, cl, id, q->step, msg, sizeof msg);
        if (rc == 0)
            rc = wait_for(ps, id, &dl, slot_free, cl, "a push waits for the "
                          "step before", msg, sizeof msg);
        pthread_mutex_unlock(&ps->mu);
        /* the data comes either way; the slot is ours while not pending */
        float *dst = rc == 0 ? cl->slot + ps->off[id] : cl->out;
        if (hg_comm_recv(cl->link, dst, q->bytes, 1, e, sizeof e) != 0) {
            set_gone(ps, cl, e);
            return -1;
        }
        uint64_t v = 0;
        if (rc == 0) {
            pthread_mutex_lock(&ps->mu);
            deposited(ps, cl, id, q->step);
            v = ps->version[id];
            pthread_mutex_unlock(&ps->mu);
        }
        rc = rc == 0 ? reply(cl, 0, v, NULL, 0, e, sizeof e)
                     : reply_err(cl, msg, e, sizeof e);
    } else {
        hg_deadline_ts(&dl, ps->timeout_s);
        uint64_t want = q->step, v = 0;
        pthread_mutex_lock(&ps->mu);
        rc = wait_for(ps, id, &dl, has_version, &want, "a pull waits", msg,
                      sizeof msg);
        if (rc == 0) {
            memcpy(cl->out, ps->master + ps->off[id],
                   ps->numel[id] * sizeof(float));
            v = ps->version[id];
        }
        pthread_mutex_unlock(&ps->mu);
        rc = rc == 0 ? reply(cl, 0, v, cl->out, ps->numel[id] * sizeof(float),
                             e, sizeof e)
                     : reply_err(cl, msg, e, sizeof e);
    }
    if (rc != 0) {
        set_gone(ps, cl, e);
        return -1;
    }
    return 0;
}

static void *serve(void *arg)
{
    struct ps_client *cl = arg;
    struct hg_ps *ps = cl->ps;
    char e[PS_MSG];
    for (;;) {
        struct ps_req q;
        if (hg_comm_recv(cl->link, &q, sizeof q, 1, e, sizeof e) != 0) {
            set_gone(ps, cl, e);
            break;
        }
        if (q.magic != PS_MAGIC || q.op < PS_HELLO || q.op > PS_BYE) {
            snprintf(e, sizeof e, "ps: rank %d (server): garbage from rank %d",
                     ps->me, cl->rank);
            set_gone(ps, cl, e);
            break;
        }
        if (q.op == PS_BYE) {
            snprintf(e, sizeof e, "rank %d has left (hg_ps_free)", cl->rank);
            set_gone(ps, cl, e);
            break;
        }
        if (q.op == PS_HELLO) {
            char msg[PS_MSG] = "";
            if (q.bytes != (uint64_t)cl->rank || q.id != ps->nparams ||
                q.step != ps->sig)
                snprintf(msg, sizeof msg, "ps: rank %d (server): rank %d "
                         "(says %llu) has another parameter list (%d ids) "
                         "than the server (%d ids)", ps->me, cl->rank,
                         (unsigned long long)q.bytes, (int)q.id, ps->nparams);
            int rc = msg[0] ? reply_err(cl, msg, e, sizeof e)
                            : reply(cl, 0, 0, NULL, 0, e, sizeof e);
            if (rc != 0 || msg[0]) {
                set_gone(ps, cl, rc != 0 ? e : msg);
                break;
            }
            continue;
        }
        if (serve_one(cl, &q) != 0)
            break;
    }
    return NULL;
}

/* -------------------------------------------------------------- client */

/* A remote request and its reply: data (PULL) into `in` [bytes]. */
static int call(struct hg_ps *ps, const struct ps_req *q, const void *out,
                void *in, size_t in_bytes, uint64_t *version,
                const char *what, char *err, size_t errlen)
{
    char e[PS_MSG] = "";
    struct ps_rep r;
    if (hg_comm_send(ps->link, q, sizeof *q, 0, e, sizeof e) != 0 ||
        (q->op == PS_PUSH &&
         hg_comm_send(ps->link, out, q->bytes, 0, e, sizeof e) != 0))
        goto fail;
    if (q->op == PS_BYE)
        return 0;
    if (hg_comm_recv(ps->link, &r, sizeof r, 0, e, sizeof e) != 0)
        goto fail;
    if (r.magic != PS_MAGIC) {
        snprintf(e, sizeof e, "garbage from the server, rank %d", ps->server);
        goto fail;
    }
    if (r.status != 0) {
        size_t n = r.bytes < sizeof e - 1 ? r.bytes : sizeof e - 1;
        if (r.bytes != n) {
            snprintf(e, sizeof e, "a message of %llu bytes from the server, "
                     "rank %d", (unsigned long long)r.bytes, ps->server);
            goto fail;
        }
        if (hg_comm_recv(ps->link, e, n, 0, e, sizeof e) != 0)
            goto fail;
        e[n] = '\0';
        goto fail;
    }
    if (r.bytes != (q->op == PS_PULL ? in_bytes : 0)) {
        snprintf(e, sizeof e, "a reply of %llu bytes from the server, rank %d",
                 (unsigned long long)r.bytes, ps->server);
        goto fail;
    }
    if (r.bytes && hg_comm_recv(ps->link, in, r.bytes, 0, e, sizeof e) != 0)
        goto fail;
    if (version)
        *version = r.version;
    return 0;
fail:
    return hg_kerr(err, errlen, "ps: rank %d: %s: %s", ps->me, what, e);
}

static int check_id(const struct hg_ps *ps, int id, char *err, size_t errlen)
{
    if (!ps->is_client)
        return hg_kerr(err, errlen, "ps: rank %d is the server, not a client",
                       ps->me);
    if (id < 0 || id >= ps->nparams)
        return hg_kerr(err, errlen, "ps: rank %d: parameter %d outside 0..%d",
                       ps->me, id, ps->nparams - 1);
    return 0;
}

int hg_ps_push(struct hg_ps *ps, int id, const float *grad, uint64_t step,
               char *err, size_t errlen)
{
    if (check_id(ps, id, err, errlen) != 0)
        return -1;
    char what[96];
    snprintf(what, sizeof what, "push of step %llu of parameter %d",
             (unsigned long long)step, id);
    size_t bytes = ps->numel[id] * sizeof(float);
    if (ps->is_server) { /* the server's own push: straight in */
        struct ps_client *cl = &ps->cl[ps->local];
        struct timespec dl;
        char msg[PS_MSG] = "";
        hg_deadline_ts(&dl, ps->timeout_s);
        pthread_mutex_lock(&ps->mu);
        int rc = check_step(ps, cl, id, step, msg, sizeof msg);
        if (rc == 0)
            rc = wait_for(ps, id, &dl, slot_free, cl, "a push waits for the "
                          "step before", msg, sizeof msg);
        if (rc == 0) {
            memcpy(cl->slot + ps->off[id], grad, bytes);
            deposited(ps, cl, id, step);
        }
        pthread_mutex_unlock(&ps->mu);
        return rc == 0 ? 0 : hg_kerr(err, errlen, "%s", msg);
    }
    struct ps_req q = {.magic = PS_MAGIC, .op = PS_PUSH, .id = id,
                       .step = step, .bytes = bytes};
    return call(ps, &q, grad, NULL, 0, NULL, what, err, errlen);
}

int hg_ps_pull(struct hg_ps *ps, int id, float *param, uint64_t step,
               uint64_t *version, char *err, size_t errlen)
{
    if (check_id(ps, id, err, errlen) != 0)
        return -1;
    char what[96];
    snprintf(what, sizeof what, "pull of step %llu of parameter %d",
             (unsigned long long)step, id);
    size_t bytes = ps->numel[id] * sizeof(float);
    if (ps->is_server) {
        struct timespec dl;
        char msg[PS_MSG] = "";
        hg_deadline_ts(&dl, ps->timeout_s);
        pthread_mutex_lock(&ps->mu);
        int rc = wait_for(ps, id, &dl, has_version, &step, "a pull waits",
                          msg, sizeof msg);
        if (rc == 0) {
            memcpy(param, ps->master + ps->off[id], bytes);
            if (version)
                *version = ps->version[id];
        }
        pthread_mutex_unlock(&ps->mu);
        return rc == 0 ? 0 : hg_kerr(err, errlen, "%s", msg);
    }
    struct ps_req q = {.magic = PS_MAGIC, .op = PS_PULL, .id = id,
                       .step = step};
    return call(ps, &q, NULL, param, bytes, version, what, err, errlen);
}

int hg_ps_publish(struct hg_ps *ps, int id, const float *param, uint64_t step,
                  char *err, size_t errlen)
{
    if (!ps->is_server)
        return hg_kerr(err, errlen, "ps: rank %d publishes parameter %d, but the "
                       "server is rank %d", ps->me, id, ps->server);
    if (id < 0 || id >= ps->nparams)
        return hg_kerr(err, errlen, "ps: rank %d: parameter %d outside 0..%d",
                       ps->me, id, ps->nparams - 1);
    pthread_mutex_lock(&ps->mu);
    int rc = 0;
    if (step <= ps->version[id] || ps->npending[id] > 0)
        rc = hg_kerr(err, errlen, "ps: rank %d (server): publishing step %llu of "
                     "parameter %d at version %llu%s", ps->me, (unsigned long long)step,
                     id, (unsigned long long)ps->version[id],
                     ps->npending[id] > 0 ? " with pushes pending" : "");
    if (rc == 0) {
        memcpy(ps->master + ps->off[id], param, ps->numel[id] * sizeof(float));
        ps->version[id] = step;
        pthread_cond_broadcast(&ps->cv);
    }
    pthread_mutex_unlock(&ps->mu);
    return rc;
}

/* ---------------------------------------------------------- life cycle */

static int check_config(const struct hg_comm *c, const struct hg_ps_config *cfg,
                        char *err, size_t errlen)
{
    int me = hg_comm_rank(c), world = hg_comm_world(c);
    unsigned caps = hg_comm_caps(c);
    if (!(caps & HG_COMM_PS))
        return hg_kerr(err, errlen, "ps: rank %d: the %s backend cannot carry "
                       "a parameter server (%s)", me, hg_comm_backend(c),
                       caps & HG_COMM_DEVICE_MEMORY
                           ? "its buffers are device memory and it has no "
                             "host point-to-point path; use a host backend"
                           : "it needs groups and threads: mpi without "
                             "MPI_THREAD_MULTIPLE");
    if (cfg->server < 0 || cfg->server >= world)
        return hg_kerr(err, errlen, "ps: rank %d: server %d outside 0..%d", me,
                       cfg->server, world - 1);
    if (cfg->nclients < 1 || !cfg->clients)
        return hg_kerr(err, errlen, "ps: rank %d: no clients", me);
    for (int k = 0; k < cfg->nclients; k++)
        if (cfg->clients[k] < 0 || cfg->clients[k] >= world ||
            (k > 0 && cfg->clients[k] <= cfg->clients[k - 1]))
            return hg_kerr(err, errlen, "ps: rank %d: clients[%d] = %d: the "
                           "clients are ranks of 0..%d in ascending order", me,
                           k, cfg->clients[k], world - 1);
    if (cfg->nparams < 1 || !cfg->numel)
        return hg_kerr(err, errlen, "ps: rank %d: no parameters", me);
    for (int i = 0; i < cfg->nparams; i++)
        if (cfg->numel[i] == 0)
            return hg_kerr(err, errlen, "ps: rank %d: parameter %d has no "
                           "elements", me, i);
    if (!(cfg->timeout_s > 0))
        return hg_kerr(err, errlen, "ps: rank %d: timeout %g s is not positive",
                       me, cfg->timeout_s);
    return 0;
}

static int server_init(struct hg_ps *ps, struct hg_comm *c,
                       const struct hg_ps_config *cfg, char *err,
                       size_t errlen)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&ps->mu, NULL);
    pthread_cond_init(&ps->cv, &ca);
    pthread_condattr_destroy(&ca);
    ps->have_sync = 1;
    ps->apply = cfg->apply;
    ps->apply_arg = cfg->apply_arg;
    size_t maxn = 0;
    for (int i = 0; i < ps->nparams; i++)
        maxn = ps->numel[i] > maxn ? ps->numel[i] : maxn;
    ps->master = calloc(ps->total, sizeof *ps->master);
    ps->version = calloc((size_t)ps->nparams, sizeof *ps->version);
    ps->npending = calloc((size_t)ps->nparams, sizeof *ps->npending);
    ps->ncl = cfg->nclients;
    ps->cl = calloc((size_t)ps->ncl, sizeof *ps->cl);
    ps->local = -1;
    int ok = ps->master && ps->version && ps->npending && ps->cl;
    for (int k = 0; ok && k < ps->ncl; k++) {
        struct ps_client *cl = &ps->cl[k];
        cl->ps = ps;
        cl->rank = cfg->clients[k];
        cl->slot = malloc(ps->total * sizeof *cl->slot);
        cl->pending = calloc((size_t)ps->nparams, 1);
        cl->pushed = calloc((size_t)ps->nparams, sizeof *cl->pushed);
        cl->out = malloc(maxn * sizeof *cl->out);
        ok = cl->slot && cl->pending && cl->pushed && cl->out;
        if (cl->rank == ps->me)
            ps->local = k;
    }
    if (!ok)
        return hg_kerr(err, errlen, "ps: rank %d (server): out of memory for "
                       "%zu floats per client", ps->me, ps->total);
    if (cfg->init)
        for (int i = 0; i < ps->nparams; i++)
            if (cfg->init[i])
                memcpy(ps->master + ps->off[i], cfg->init[i],
                       ps->numel[i] * sizeof(float));
    /* one group per remote client, in client order (each client makes
     * only its own); its service thread starts at once */
    for (int k = 0; k < ps->ncl; k++) {
        struct ps_client *cl = &ps->cl[k];
        if (k == ps->local)
            continue;
        int pair[2] = {ps->me, cl->rank};
        char e[PS_MSG];
        if (hg_comm_group_new(c, pair, 2, &cl->link, e, sizeof e) != 0)
            return hg_kerr(err, errlen, "ps: rank %d (server): connecting "
                           "rank %d: %s", ps->me, cl->rank, e);
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        int rc = pthread_create(&cl->thread, NULL, serve, cl);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (rc != 0)
            return hg_kerr(err, errlen, "ps: rank %d (server): a thread for "
                           "rank %d: %s", ps->me, cl->rank, strerror(rc));
        cl->have_thread = 1;
    }
    return 0;
}

int hg_ps_new(struct hg_ps **psp, struct hg_comm *c,
              const struct hg_ps_config *cfg, char *err, size_t errlen)
{
    *psp = NULL;
    if (check_config(c, cfg, err, errlen) != 0)
        return -1;
    int me = hg_comm_rank(c);
    struct hg_ps *ps = calloc(1, sizeof *ps);
    if (!ps)
        return hg_kerr(err, errlen, "ps: rank %d: out of memory", me);
    ps->me = me;
    ps->server = cfg->server;
    ps->is_server = me == cfg->server;
    for (int k = 0; k < cfg->nclients; k++)
        ps->is_client |= cfg->clients[k] == me;
    ps->nparams = cfg->nparams;
    ps->timeout_s = cfg->timeout_s;
    ps->numel = malloc((size_t)cfg->nparams * sizeof *ps->numel);
    ps->off = malloc((size_t)cfg->nparams * sizeof *ps->off);
    if (!ps->numel || !ps->off) {
        hg_ps_free(ps);
        return hg_kerr(err, errlen, "ps: rank %d: out of memory", me);
    }
    for (int i = 0; i < cfg->nparams; i++) {
        ps->numel[i] = cfg->numel[i];
        ps->off[i] = ps->total;
        ps->total += cfg->numel[i];
    }
    ps->sig = numel_sig(ps->numel, ps->nparams);
    if (!ps->is_server && !ps->is_client) {
        hg_ps_free(ps);
        return hg_kerr(err, errlen, "ps: rank %d is neither the server (rank "
                       "%d) nor a client", me, cfg->server);
    }
    if (ps->is_server) {
        if (server_init(ps, c, cfg, err, errlen) != 0) {
            /* the threads started wait for requests: end their links */
            for (int k = 0; k < ps->ncl; k++)
                if (ps->cl[k].have_thread)
                    hg_comm_abort(ps->cl[k].link);
            hg_ps_free(ps);
            return -1;
        }
        *psp = ps;
        return 0;
    }
    int pair[2] = {cfg->server, me};
    char e[PS_MSG];
    if (hg_comm_group_new(c, pair, 2, &ps->link, e, sizeof e) != 0) {
        hg_ps_free(ps);
        return hg_kerr(err, errlen, "ps: rank %d: connecting to the server, "
                       "rank %d: %s", me, cfg->server, e);
    }
    struct ps_req q = {.magic = PS_MAGIC, .op = PS_HELLO, .id = ps->nparams,
                       .step = ps->sig, .bytes = (uint64_t)me};
    if (call(ps, &q, NULL, NULL, 0, NULL, "hello", err, errlen) != 0) {
        hg_ps_free(ps);
        return -1;
    }
    *psp = ps;
    return 0;
}

void hg_ps_free(struct hg_ps *ps)
{
    if (!ps)
        return;
    if (ps->link) { /* a remote client: goodbye, as far as it goes */
        struct ps_req q = {.magic = PS_MAGIC, .op = PS_BYE};
        char e[PS_MSG];
        call(ps, &q, NULL, NULL, 0, NULL, "goodbye", e, sizeof e);
        hg_comm_free(ps->link);
    }
    /* every thread first: any of them may sum every client's slot */
    for (int k = 0; ps->cl && k < ps->ncl; k++)
        if (ps->cl[k].have_thread)
            pthread_join(ps->cl[k].thread, NULL);
    for (int k = 0; ps->cl && k < ps->ncl; k++) {
        struct ps_client *cl = &ps->cl[k];
        hg_comm_free(cl->link);
        free(cl->slot);
        free(cl->pending);
        free(cl->pushed);
        free(cl->out);
    }
    if (ps->have_sync) {
        pthread_cond_destroy(&ps->cv);
        pthread_mutex_destroy(&ps->mu);
    }
    free(ps->cl);
    free(ps->master);
    free(ps->version);
    free(ps->npending);
    free(ps->numel);
    free(ps->off);
    free(ps);
}
