/* mpi.c - the `mpi` backend of hg_comm.h: ranks started by mpirun, one
 * duplicate of MPI_COMM_WORLD per handle.  Without MPI (configure found no
 * mpicc) hg_comm_have_mpi() is 0 and hg_comm_mpi_new fails with a message.
 *
 * allreduce is deterministic like shm's, bitwise the same: element i is
 * ((x0[i] + x1[i]) + x2[i]) + ... in rank order.  MPI_Allreduce promises no
 * order, so it is done by hand, in pieces of at most PIECE elements, each
 * cut into world chunks: an all-to-all gives rank r chunk r of every rank;
 * rank r sums them in rank order; an all-gather puts the sums everywhere.
 *
 * allgatherv and reduce_scatterv are point to point (see there), with a
 * digest of the counts first, so ranks with other counts are named.
 *
 * Errors: the duplicate has MPI_ERRORS_RETURN, every MPI error becomes a
 * message (MPI_Error_string) naming the rank and the call.  (MPI_Init and
 * MPI_Comm_dup run under MPI_COMM_WORLD's handler, fatal by default.)
 *
 * Timeouts: MPI has none.  Every operation is nonblocking (MPI_Ialltoallv,
 * MPI_Iallgather(v), MPI_Ibcast, MPI_Ibarrier, MPI_Isend; recv polls
 * MPI_Improbe) and polled with MPI_Test until a deadline: HG_COMM_TIMEOUT_S
 * seconds from the environment when the handle is made, else 300.  The
 * limits: a collective that times out cannot say which rank is late (MPI
 * does not tell), and its request cannot be cancelled, so the handle is
 * only marked broken and MPI's own state is left as it is; a rank whose
 * process dies is noticed by mpirun, which by default ends the whole job.
 *
 * abort: MPI_Abort(comm, 1), which ends every process of the job, this one
 * included: it does not return.  A failed call only breaks this handle;
 * the peers are told nothing until the caller aborts.
 *
 * free: MPI_Comm_free; MPI_Finalize when the last handle goes and we were
 * the ones to call MPI_Init_thread.
 *
 * Threads: we ask MPI_THREAD_MULTIPLE.  Given it, a handle's asynchronous
 * requests run on its progress thread and different handles may be used
 * by different threads (HG_COMM_ASYNC, HG_COMM_THREADS, HG_COMM_PS); with
 * less (or when MPI was started by someone else with less) every call
 * stays in the caller's thread and a start runs its request at once.
 *
 * Groups: MPI_Comm_create_group over the members, called by them only,
 * with a tag made from the member list (so that a rank making several
 * groups one after the other is matched with the right peers); MPI gives
 * it no timeout. */
#define _GNU_SOURCE

#include "base/hg_base.h"
#include "comm/comm-impl.h"

#ifndef HG_HAVE_MPI

int hg_comm_have_mpi(void) { return 0; }

int hg_comm_mpi_new(struct hg_comm **c, char *err, size_t errlen)
{
    *c = NULL;
    return hg_kerr(err, errlen, "mpi: built without MPI (install Open MPI or "
                   "MPICH and configure --with-mpi)");
}

#else

#include <limits.h>
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_TIMEOUT_S 300.0
#define PIECE ((size_t)1 << 20)     /* allreduce elements per piece */
#define MAX_MSG ((size_t)1 << 30)   /* bytes per MPI call: counts are int */
#define TAG 0x6867                  /* send/recv */
#define TAG_V 0x6868                /* the v collectives' messages */

struct mpi_comm {
    struct hg_comm base; /* ops, rank, world */
    MPI_Comm comm;
    double timeout_s;
    int broken;
    void *tmp; /* allreduce: world chunks of a piece */
    size_t tmp_bytes;
    int jrank; /* this rank in MPI_COMM_WORLD (messages) */
    /* the v collectives' exchanges; kept in the handle, since a timeout
     * leaves MPI requests pending on them */
    MPI_Request *vreq; /* [vcap] */
    int *vpeer;        /* [vcap] the peer of vreq[i] */
    int vcap;
    uint64_t *vhdr;    /* [world + 1]: what each peer's header said, ours */
    int *wrank; /* (world) a group's ranks in MPI_COMM_WORLD; NULL: the
                   job's own handle */
};

static const struct hg_comm_ops mpi_ops;
static int live_handles; /* ours: MPI_Finalize when the last goes */
static int we_initialized;
static int thread_level; /* what MPI gave (MPI_Query_thread) */

static int wrap(struct mpi_comm **cp, MPI_Comm comm, double timeout_s,
                char *err, size_t errlen);

/* A rank as the job numbers it (a group's handle counts from 0). */
static int W(const struct mpi_comm *c, int r)
{
    return c->wrank ? c->wrank[r] : r;
}

int hg_comm_have_mpi(void) { return 1; }

/* An MPI error code as a message naming the rank and the call; breaks the
 * handle. */
static int mpi_fail(struct mpi_comm *c, int rc, const char *call, char *err,
                    size_t errlen)
{
    char s[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS)
        snprintf(s, sizeof s, "MPI error %d", rc);
    c->broken = 1;
    return hg_kerr(err, errlen, "mpi: rank %d: %s: %s", c->jrank, call, s);
}

static int check_usable(struct mpi_comm *c, char *err, size_t errlen)
{
    if (!c->broken)
        return 0;
    return hg_kerr(err, errlen, "mpi: rank %d: communicator unusable after an "
                   "earlier failure", c->jrank);
}

/* Polls one request until done or the deadline; `what` names the
 * operation in the messages. */
static int wait_req(struct mpi_comm *c, MPI_Request *req, MPI_Status *st,
                    const char *what, char *err, size_t errlen)
{
    double start = hg_now(), deadline = start + c->timeout_s;
    for (unsigned long it = 0;; it++) {
        int done = 0;
        int rc = MPI_Test(req, &done, st ? st : MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return mpi_fail(c, rc, what, err, errlen);
        if (done)
            return 0;
        /* MPI_Test drives the progress: spin first, then let others run */
        if (it >= 1024) {
            if (it < 8192) {
                sched_yield();
            } else {
                struct timespec ts = {0, 20000}; /* 20 us */
                nanosleep(&ts, NULL);
            }
        }
        if ((it & 63) == 0 && hg_now() > deadline) {
            c->broken = 1;
            return hg_kerr(err, errlen, "mpi: rank %d waited %.3g s in %s (MPI "
                           "cannot say which rank is late; the request is left "
                           "pending)", c->jrank, hg_now() - start, what);
        }
    }
}

/* ---------------------------------------------------------------- create */

int hg_comm_mpi_new(struct hg_comm **cp, char *err, size_t errlen)
{
    *cp = NULL;
    int flag = 0, rc;
    MPI_Finalized(&flag);
    if (flag)
        return hg_kerr(err, errlen, "mpi: MPI already finalized");
    MPI_Initialized(&flag);
    if (!flag) {
        int provided = 0;
        rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
        if (rc != MPI_SUCCESS)
            return hg_kerr(err, errlen, "mpi: MPI_Init_thread failed (%d)", rc);
        we_initialized = 1;
    }
    MPI_Query_thread(&thread_level);
    double timeout_s = DEFAULT_TIMEOUT_S;
    const char *e = getenv("HG_COMM_TIMEOUT_S");
    if (e && *e) {
        char *end;
        double t = strtod(e, &end);
        if (*end != '\0' || !(t > 0))
            return hg_kerr(err, errlen, "mpi: HG_COMM_TIMEOUT_S=%s is not a "
                           "positive number of seconds", e);
        timeout_s = t;
    }
    MPI_Comm dup;
    rc = MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    if (rc != MPI_SUCCESS)
        return hg_kerr(err, errlen, "mpi: MPI_Comm_dup failed (%d)", rc);
    struct mpi_comm *c;
    if (wrap(&c, dup, timeout_s, err, errlen) != 0)
        return -1;
    *cp = &c->base;
    return 0;
}

/* A handle over comm (ours from now on: freed on failure too). */
static int wrap(struct mpi_comm **cp, MPI_Comm comm, double timeout_s,
                char *err, size_t errlen)
{
    *cp = NULL;
    struct mpi_comm *c = calloc(1, sizeof *c);
    if (!c) {
        MPI_Comm_free(&comm);
        return hg_kerr(err, errlen, "mpi: out of memory");
    }
    c->timeout_s = timeout_s;
    c->comm = comm;
    int rank = 0, world = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &world);
    c->base = (struct hg_comm){.ops = &mpi_ops, .rank = rank, .world = world};
    MPI_Comm_rank(MPI_COMM_WORLD, &c->jrank);
    int rc = MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
    if (rc != MPI_SUCCESS) {
        mpi_fail(c, rc, "MPI_Comm_set_errhandler", err, errlen);
        MPI_Comm_free(&c->comm);
        free(c);
        return -1;
    }
    live_handles++;
    *cp = c;
    return 0;
}

static void mpi_abort(struct hg_comm *base)
{
    struct mpi_comm *c = (struct mpi_comm *)base;
    c->broken = 1;
    MPI_Abort(c->comm, 1); /* ends the whole job; does not return */
}

static void mpi_free(struct hg_comm *base)
{
    struct mpi_comm *c = (struct mpi_comm *)base;
    MPI_Comm_free(&c->comm);
    free(c->tmp);
    free(c->wrank);
    free(c->vreq);
    free(c->vpeer);
    free(c->vhdr);
    free(c);
    int fin = 0;
    if (--live_handles == 0 && we_initialized &&
        MPI_Finalized(&fin) == MPI_SUCCESS && !fin)
        MPI_Finalize();
}

/* ---------------------------------------------------------------- collectives */

#define DEFINE_SUM(name, T)                                                    \
    /* dst[i] = ((src[0][i] + src[1][i]) + ...), src[r] = tmp + r*m */         \
    static void name(void *dstv, const void *tmpv, int world, size_t m)        \
    {                                                                          \
        T *dst = dstv;                                                         \
        const T *tmp = tmpv;                                                   \
        for (size_t i = 0; i < m; i++)                                         \
            dst[i] = tmp[i];                                                   \
        for (int r = 1; r < world; r++) {                                      \
            const T *s = tmp + (size_t)r * m;                                  \
            for (size_t i = 0; i < m; i++)                                     \
                dst[i] += s[i];                                                \
        }                                                                      \
    }
DEFINE_SUM(sum_f32, float)
DEFINE_SUM(sum_f64, double)

static int mpi_allreduce(struct hg_comm *base, void *bufv, size_t n,
                         enum hg_comm_dtype dt, char *err, size_t errlen)
{
    struct mpi_comm *c = (struct mpi_comm *)base;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    int world = base->world, me = base->rank;
    if (world == 1 || n == 0)
        return 0;
    size_t esz = dt == HG_COMM_F32 ? sizeof(float) : sizeof(double);
    MPI_Datatype type = dt == HG_COMM_F32 ? MPI_FLOAT : MPI_DOUBLE;
    int *counts = malloc(4 * (size_t)world * sizeof *counts);
    if (!counts)
        return hg_kerr(err, errlen, "mpi: rank %d: out of memory", c->jrank);
    int *displs = counts + world, *rcounts = displs + world, *rdispls = rcounts + world;
    char *buf = bufv;
    int rc = 0;
    for (size_t off = 0; off < n && rc == 0; off += PIECE) {
        size_t m = n - off < PIECE ? n - off : PIECE;
        /* the same cut on every rank; chunk r is rank r's to sum */
        size_t chunk = (m + (size_t)world - 1) / (size_t)world;
        for (int r = 0; r < world; r++) {
            size_t lo = (size_t)r * chunk < m ? (size_t)r * chunk : m;
            size_t hi = lo + chunk < m ? lo + chunk : m;
            counts[r] = (int)(hi - lo);
            displs[r] = (int)lo;
        }
        size_t mine = (size_t)counts[me];
        size_t need = (size_t)world * mine * esz;
        if (need > c->tmp_bytes) {
            void *t = realloc(c->tmp, need);
            if (!t) {
                rc = hg_kerr(err, errlen, "mpi: rank %d: out of memory (%zu "
                             "bytes)", c->jrank, need);
                break;
            }
            c->tmp = t;
            c->tmp_bytes = need;
        }
        for (int r = 0; r < world; r++) {
            rcounts[r] = (int)mine;
            rdispls[r] = (int)((size_t)r * mine);
        }
        char *piece = buf + off * esz;
        MPI_Request req;
        int e = MPI_Ialltoallv(piece, counts, displs, type, c->tmp, rcounts,
                               rdispls, type, c->comm, &req);
        if (e != MPI_SUCCESS) {
            rc = mpi_fail(c, e, "MPI_Ialltoallv (allreduce)", err, errlen);
            break;
        }
        if ((rc = wait_req(c, &req, NULL, "allreduce (all-to-all)", err,
                           errlen)) != 0)
            break;
        if (mine > 0) {
            char *dst = piece + (size_t)displs[me] * esz;
            if (dt == HG_COMM_F32)
                sum_f32(dst, c->tmp, world, mine);
            else
                sum_f64(dst, c->tmp, world, mine);
        }
        e = MPI_Iallgatherv(MPI_IN_PLACE, 0, type, piece, counts, displs, type,
                            c->comm, &req);
        if (e != MPI_SUCCESS) {
            rc = mpi_fail(c, e, "MPI_Iallgatherv (allreduce)", err, errlen);
            break;
        }
        rc = wait_req(c, &req, NULL, "allreduce (all-gather)", err, errlen);
    }
    free(counts);
    return rc;
}

static int mpi_broadcast(struct hg_comm *base, void *bufv, size_t bytes,
                         int root, char *err, size_t errlen)
{
    struct mpi_comm *c = (struct mpi_comm *)base;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    char *buf = bufv;
    for (size_t off = 0; off < bytes; off += MAX_MSG) {
        size_t m = bytes - off < MAX_MSG ? bytes - off : MAX_MSG;
        MPI_Request req;
        int e = MPI_Ibcast(buf + off, (int)m, MPI_BYTE, root, c->comm, &req);
        if (e != MPI_SUCCESS)
            return mpi_fail(c, e, "MPI_Ibcast", err, errlen);
        char what[96];
        snprintf(what, sizeof what, "broadcast of %zu bytes from rank %d", bytes,
                 W(c, root));
        if (wait_req(c, &req, NULL, what, err, errlen) != 0)
            return -1;
    }
    return 0;
}

/* Rank r's block lands at recv + r*bytes: a datatype of m bytes whose
 * extent is `bytes`, one per rank, so no displacement has to fit an int. */
static int mpi_allgather(struct hg_comm *base, const void *sendv, void *recvv,
                         size_t bytes, char *err, size_t errlen)
{
    struct mpi_comm *c = (struct mpi_comm *)base;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    if (bytes == 0)
        return 0;
    const char *send = sendv;
    char *recv = recvv;
    int in_place = send == recv + (size_t)base->rank * bytes;
    for (size_t off = 0; off < bytes; off += MAX_MSG) {
        size_t m = bytes - off < MAX_MSG ? bytes - off : MAX_MSG;
        MPI_Datatype blk, rt;
        int e = MPI_Type_contiguous((int)m, MPI_BYTE, &blk);
        if (e != MPI_SUCCESS)
            return mpi_fail(c, e, "MPI_Type_contiguous", err, errlen);
        e = MPI_Type_create_resized(blk, 0, (MPI_Aint)bytes, &rt);
        MPI_Type_free(&blk);
        if (e != MPI_SUCCESS)
            return mpi_fail(c, e, "MPI_Type_create_resized", err, errlen);
        if ((e = MPI_Type_commit(&rt)) != MPI_SUCCESS) {
            MPI_Type_free(&rt);
            return mpi_fail(c, e, "MPI_Type_commit", err, errlen);
        }
        MPI_Request req;
        e = MPI_Iallgather(in_place ? MPI_IN_PLACE : send + off, (int)m,
                           MPI_BYTE, recv + off, 1, rt, c->comm, &req);
        /* freeing a type in use by a pending operation is allowed */
        MPI_Type_free(&rt);
        if (e != MPI_SUCCESS)
            return mpi_fail(c, e, "MPI_Iallgather", err, errlen);
        char what[64];
        snprintf(what, sizeof what, "allgather of %zu bytes", bytes);
        if (wait_req(c, &req, NULL, what, err, errlen) != 0)
            return -1;
    }
    return 0;
}

/* ----------------------------------------------------- uneven counts */

/* The v collectives are point to point (MPI_Iallgatherv's int
 * displacements stop at 2 GiB, MPI_Reduce_scatter's order is the
 * library's): with every peer j, sn[j] bytes from sb[j] out and rn[j]
 * bytes into rb[j] in, each a message of its own per MAX_MSG bytes (one
 * when empty, so that both sides post as many as the other), on TAG_V.
 * With `hdr`, the digest of the counts goes first: the exchange runs to
 * its end (MPI truncates what does not fit), then a digest that is not
 * ours fails the call naming that rank.  A timeout names the ranks whose
 * messages are missing. */
struct vpart {
    const void *sb;
    size_t sn;
    void *rb;
    size_t rn;
};

static size_t nmsg(size_t bytes)
{
    return bytes == 0 ? 1 : (bytes + MAX_MSG - 1) / MAX_MSG;
}

/* Posts one side of the exchange with peer j: its header when hdr, then
 * the messages of n bytes at b. */
static int post(struct mpi_comm *c, int j, int out, int hdr, void *b,
                size_t n, int *nr, char *err, size_t errlen)
{
    for (size_t k = 0, nm = nmsg(n) + (hdr != 0); k < nm; k++) {
        int e;
        MPI_Request *r = &c->vreq[*nr];
        if (hdr && k == 0) {
            e = out ? MPI_Isend(&c->vhdr[c->base.world], 8, MPI_BYTE, j, TAG_V,
                                c->comm, r)
                    : MPI_Irecv(&c->vhdr[j], 8, MPI_BYTE, j, TAG_V, c->comm, r);
        } else {
            size_t at = (k - (hdr != 0)) * MAX_MSG;
            size_t m = n - at < MAX_MSG ? n - at : MAX_MSG;
            e = out ? MPI_Isend((char *)b + at, (int)m, MPI_BYTE, j, TAG_V,
                                c->comm, r)
                    : MPI_Irecv((char *)b + at, (int)m, MPI_BYTE, j, TAG_V,
                                c->comm, r);
        }
        if (e != MPI_SUCCESS)
            return mpi_fail(c, e, out ? "MPI_Isend" : "MPI_Irecv", err, errlen);
        c->vpeer[(*nr)++] = j;
    }
    return 0;
}

/* Polls the nr requests posted until all are done or the deadline. */
static int finish_v(struct mpi_comm *c, int nr, int hdr, const char *what,
                    char *err, size_t errlen)
{
    double start = hg_now(), deadline = start + c->timeout_s;
    int first_e = MPI_SUCCESS, left = nr;
    for (unsigned long it = 0; left > 0; it++) {
        for (int i = 0; i < nr; i++) {
            if (c->vreq[i] == MPI_REQUEST_NULL)
                continue;
            int done = 0;
            int e = MPI_Test(&c->vreq[i], &done, MPI_STATUS_IGNORE);
            if (e != MPI_SUCCESS) { /* a truncation: done, and noted */
                first_e = first_e == MPI_SUCCESS ? e : first_e;
                c->vreq[i] = MPI_REQUEST_NULL;
                done = 1;
            }
            left -= done;
        }
        if (left == 0)
            break;
        if (it >= 1024) {
            struct timespec ts = {0, it < 8192 ? 0 : 20000};
            if (it < 8192)
                sched_yield();
            else
                nanosleep(&ts, NULL);
        }
        if ((it & 63) == 0 && hg_now() > deadline) {
            char late[256] = "";
            size_t len = 0;
            for (int j = 0; j < c->base.world && len + 16 < sizeof late; j++) {
                int pend = 0;
                for (int i = 0; i < nr && !pend; i++)
                    pend = c->vpeer[i] == j && c->vreq[i] != MPI_REQUEST_NULL;
                if (pend)
                    len += (size_t)snprintf(late + len, sizeof late - len,
                                            "%s%d", len ? "," : "", W(c, j));
            }
            c->broken = 1;
            return hg_kerr(err, errlen, "mpi: rank %d waited %.3g s in %s; "
                           "still waiting for rank(s) %s (the requests are "
                           "left pending)", c->jrank, hg_now() - start, what,
                           late);
        }
    }
    if (hdr) {
        char bad[256] = "";
        size_t len = 0;
        for (int j = 0; j < c->base.world; j++)
            if (j != c->base.rank && c->vhdr[j] != c->vhdr[c->base.world] &&
                len + 16 < sizeof bad)
                len += (size_t)snprintf(bad + len, sizeof bad - len, "%s%d",
                                        len ? "," : "", W(c, j));
        if (len) {
            c->broken = 1;
            return hg_kerr(err, errlen, "mpi: rank %d: %s: rank(s) %s passed "
                           "other counts than rank %d (the counts must be the "
                           "same on every rank)", c->jrank, what, bad,
                           c->jrank);
        }
    }
    if (first_e != MPI_SUCCESS)
        return mpi_fail(c, first_e, what, err, errlen);
    return 0;
}

/* The exchange of p[world] (p[rank] unused) to its end. */
static int exchange(struct mpi_comm *c, const struct vpart *p, uint64_t digest,
                    int hdr, const char *what, char *err, size_t errlen)
{
    int w = c->base.world, me = c->base.rank;
    size_t need = 0;
    for (int j = 0; j < w; j++)
        if (j != me)
            need += nmsg(p[j].sn) + nmsg(p[j].rn) + 2;
    if (need > INT_MAX)
        return hg_kerr(err, errlen, "mpi: rank %d: %s: %zu messages", c->jrank,
                       what, need);
    if ((int)need > c->vcap || !c->vhdr) {
        MPI_Request *r = realloc(c->vreq, need * sizeof *r);
        if (r)
            c->vreq = r;
        int *q = r ? realloc(c->vpeer, need * sizeof *q) : NULL;
        if (q)
            c->vpeer = q;
        if (!c->vhdr)
            c->vhdr = malloc(((size_t)w + 1) * sizeof *c->vhdr);
        if (!r || !q || !c->vhdr) {
            c->broken = 1;
            return hg_kerr(err, errlen, "mpi: rank %d: out of memory",
                           c->jrank);
        }
        c->vcap = (int)need;
    }
    c->vhdr[w] = digest;
    int nr = 0;
    /* receives first: a peer's messages find them posted */
    for (int j = 0; j < w; j++)
        if (j != me && post(c, j, 0, hdr, p[j].rb, p[j].rn, &nr, err, errlen) != 0)
            return -1;
    for (int j = 0; j < w; j++)
        if (j != me && post(c, j, 1, hdr, (void *)p[j].sb, p[j].sn, &nr, err,
                            errlen) != 0)
            return -1;
    return finish_v(c, nr, hdr, what, err, errlen);
}

static int mpi_allgatherv(struct hg_comm *base, const void *send, void *recvv,
                          const size_t *counts, char *err, size_t errlen)
{
    struct mpi_comm *c = (struct mpi_comm *)base;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    int w = base->world, me = base->rank;
    char *recv = recvv;
    size_t at_me = hg_comm_counts_off(counts, me);
    if (counts[me] > 0 && recv + at_me != (const char *)send)
        memmove(recv + at_me, send, counts[me]);
    if (w == 1)
        return 0;
    struct vpart *p = calloc((size_t)w, sizeof *p);
    if (!p)
        return hg_kerr(err, errlen, "mpi: rank %d: out of memory", c->jrank);
    size_t at = 0;
    for (int j = 0; j < w; at += counts[j], j++)
        p[j] = (struct vpart){.sb = recv + at_me, .sn = counts[me],
                              .rb = recv + at, .rn = counts[j]};
    char what[96];
    snprintf(what, sizeof what, "allgatherv of %zu bytes", at);
    int rc = exchange(c, p, hg_comm_counts_digest(counts, w), 1, what, err,
                      errlen);
    free(p);
    return rc;
}

/* In pieces of at most PIECE elements of every slice (at least one, so
 * that an empty call still checks the counts): rank r gets its slice's
 * piece from every rank into tmp[world][m] and sums it in rank order,
 * allreduce's arithmetic, so the same bits. */
static int mpi_reduce_scatterv(struct hg_comm *base, const float *send,
                               float *recv, const size_t *counts, char *err,
                               size_t errlen)
{
    struct mpi_comm *c = (struct mpi_comm *)base;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    int w = base->world, me = base->rank;
    size_t lo = hg_comm_counts_off(counts, me), mine = counts[me], maxc = 0;
    if (w == 1) {
        if (mine > 0 && recv != send + lo)
            memcpy(recv, send + lo, mine * sizeof *recv);
        return 0;
    }
    for (int j = 0; j < w; j++)
        maxc = counts[j] > maxc ? counts[j] : maxc;
    struct vpart *p = calloc((size_t)w, sizeof *p);
    if (!p)
        return hg_kerr(err, errlen, "mpi: rank %d: out of memory", c->jrank);
    uint64_t d = hg_comm_counts_digest(counts, w);
    char what[96];
    snprintf(what, sizeof what, "reduce_scatterv of %zu floats",
             hg_comm_counts_off(counts, w));
    int rc = 0;
    size_t off = 0;
    do {
        size_t m = mine > off ? (mine - off < PIECE ? mine - off : PIECE) : 0;
        size_t need = (size_t)w * m * sizeof(float);
        if (need > c->tmp_bytes) {
            void *t = realloc(c->tmp, need);
            if (!t) {
                rc = hg_kerr(err, errlen, "mpi: rank %d: out of memory (%zu "
                             "bytes)", c->jrank, need);
                break;
            }
            c->tmp = t;
            c->tmp_bytes = need;
        }
        float *tmp = c->tmp; /* [w][m]: rank j's part of my slice */
        size_t at = 0;
        for (int j = 0; j < w; at += counts[j], j++) {
            size_t len = counts[j] > off ? counts[j] - off : 0;
            len = len < PIECE ? len : PIECE;
            p[j] = (struct vpart){.sb = send + at + off, .sn = len * sizeof(float),
                                  .rb = tmp + (size_t)j * m,
                                  .rn = m * sizeof(float)};
        }
        if ((rc = exchange(c, p, d, off == 0, what, err, errlen)) != 0)
            break;
        if (m > 0) {
            /* in place, our part goes through tmp before recv overwrites it */
            memcpy(tmp + (size_t)me * m, send + lo + off, m * sizeof *tmp);
            sum_f32(recv + off, tmp, w, m);
        }
        off += PIECE;
    } while (off < maxc);
    free(p);
    return rc;
}

static int mpi_barrier(struct hg_comm *base, char *err, size_t errlen)
{
    struct mpi_comm *c = (struct mpi_comm *)base;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    MPI_Request req;
    int e = MPI_Ibarrier(c->comm, &req);
    if (e != MPI_SUCCESS)
        return mpi_fail(c, e, "MPI_Ibarrier", err, errlen);
    return wait_req(c, &req, NULL, "barrier", err, errlen);
}

/* ------------------------------------------------------- point to point */

/* A message is max(1, ceil(bytes / MAX_MSG)) MPI messages with one tag (MPI
 * keeps their order between a pair of ranks). */
static int mpi_send(struct hg_comm *base, const void *bufv, size_t bytes,
                    int peer, char *err, size_t errlen)
{
    struct mpi_comm *c = (struct mpi_comm *)base;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    const char *buf = bufv;
    size_t off = 0;
    do {
        size_t m = bytes - off < MAX_MSG ? bytes - off : MAX_MSG;
        MPI_Request req;
        int e = MPI_Isend(buf + off, (int)m, MPI_BYTE, peer, TAG, c->comm, &req);
        if (e != MPI_SUCCESS)
            return mpi_fail(c, e, "MPI_Isend", err, errlen);
        char what[96];
        snprintf(what, sizeof what, "send of %zu bytes to rank %d", bytes,
                 W(c, peer));
        if (wait_req(c, &req, NULL, what, err, errlen) != 0)
            return -1;
        off += m;
    } while (off < bytes);
    return 0;
}

/* Probes first (MPI_Improbe, polled to the deadline, nothing left pending
 * on a timeout), so that a size mismatch is an error naming both ranks and
 * not a truncation. */
static int mpi_recv(struct hg_comm *base, void *bufv, size_t bytes, int peer,
                    char *err, size_t errlen)
{
    struct mpi_comm *c = (struct mpi_comm *)base;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    char *buf = bufv;
    size_t off = 0;
    do {
        size_t m = bytes - off < MAX_MSG ? bytes - off : MAX_MSG;
        MPI_Message msg;
        MPI_Status st;
        double start = hg_now(), deadline = start + c->timeout_s;
        for (unsigned long it = 0;; it++) {
            int found = 0;
            int e = MPI_Improbe(peer, TAG, c->comm, &found, &msg, &st);
            if (e != MPI_SUCCESS)
                return mpi_fail(c, e, "MPI_Improbe", err, errlen);
            if (found)
                break;
            if (it >= 1024) {
                struct timespec ts = {0, it < 8192 ? 0 : 20000};
                if (it < 8192)
                    sched_yield();
                else
                    nanosleep(&ts, NULL);
            }
            if ((it & 63) == 0 && hg_now() > deadline) {
                c->broken = 1;
                return hg_kerr(err, errlen, "mpi: rank %d waited %.3g s in recv "
                               "of %zu bytes from rank %d; rank %d did not send",
                               c->jrank, hg_now() - start, bytes, W(c, peer),
                               W(c, peer));
            }
        }
        int count = 0;
        int e = MPI_Get_count(&st, MPI_BYTE, &count);
        if (e != MPI_SUCCESS)
            return mpi_fail(c, e, "MPI_Get_count", err, errlen);
        if ((size_t)count != m) {
            c->broken = 1;
            /* the message stays matched but unreceived: the handle is broken */
            return hg_kerr(err, errlen, "mpi: rank %d: recv of %zu bytes from "
                           "rank %d, which sent %s%d bytes (sizes must agree)",
                           c->jrank, bytes, W(c, peer),
                           off ? "a piece of " : "", count);
        }
        e = MPI_Mrecv(buf + off, (int)m, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
        if (e != MPI_SUCCESS)
            return mpi_fail(c, e, "MPI_Mrecv", err, errlen);
        off += m;
    } while (off < bytes);
    return 0;
}

/* ---------------------------------------------------------------- groups */

static int mpi_group(struct hg_comm *base, const int *ranks, int n,
                     struct hg_comm **gp, char *err, size_t errlen)
{
    struct mpi_comm *c = (struct mpi_comm *)base;
    *gp = NULL;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    int *wrank = malloc((size_t)n * sizeof *wrank);
    if (!wrank) {
        c->broken = 1;
        return hg_kerr(err, errlen, "mpi: rank %d: out of memory", c->jrank);
    }
    for (int i = 0; i < n; i++)
        wrank[i] = W(c, ranks[i]);
    MPI_Group all, sub;
    MPI_Comm comm = MPI_COMM_NULL;
    int e = MPI_Comm_group(c->comm, &all);
    if (e != MPI_SUCCESS) {
        free(wrank);
        return mpi_fail(c, e, "MPI_Comm_group", err, errlen);
    }
    e = MPI_Group_incl(all, n, ranks, &sub);
    MPI_Group_free(&all);
    if (e != MPI_SUCCESS) {
        free(wrank);
        return mpi_fail(c, e, "MPI_Group_incl", err, errlen);
    }
    /* the tag tells apart the groups a rank makes one after the other */
    int tag = (int)(hg_comm_group_hash(ranks, n) & 0x3fff) + 1;
    e = MPI_Comm_create_group(c->comm, sub, tag, &comm);
    MPI_Group_free(&sub);
    if (e != MPI_SUCCESS) {
        free(wrank);
        return mpi_fail(c, e, "MPI_Comm_create_group", err, errlen);
    }
    struct mpi_comm *g;
    if (wrap(&g, comm, c->timeout_s, err, errlen) != 0) {
        free(wrank);
        c->broken = 1;
        return -1;
    }
    g->wrank = wrank;
    *gp = &g->base;
    return 0;
}

static unsigned mpi_caps(const struct hg_comm *c)
{
    (void)c;
    unsigned caps = HG_COMM_GROUPS | HG_COMM_RANK_ORDER;
    if (thread_level >= MPI_THREAD_MULTIPLE)
        caps |= HG_COMM_ASYNC | HG_COMM_THREADS | HG_COMM_PS;
    return caps;
}

static const struct hg_comm_ops mpi_ops = {
    .name = "mpi",
    .caps = mpi_caps,
    .allreduce = mpi_allreduce,
    .broadcast = mpi_broadcast,
    .allgather = mpi_allgather,
    .allgatherv = mpi_allgatherv,
    .reduce_scatterv = mpi_reduce_scatterv,
    .barrier = mpi_barrier,
    .send = mpi_send,
    .recv = mpi_recv,
    .group = mpi_group,
    .abort = mpi_abort,
    .free = mpi_free,
};

#endif /* HG_HAVE_MPI */
