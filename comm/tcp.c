/* tcp.c - the `tcp` backend of hg_comm.h: one TCP connection between every
 * pair of ranks, found through the rendezvous store.
 *
 * Set-up (hg_comm_tcp_new), for the gen-th communicator made on this store
 * (gen = ADD "tcp/new/<rank>", the same on every rank since all make them
 * in the same order):
 *   1. listen on an ephemeral port of the interface that reaches the store
 *      (the local address of the store connection); SET
 *      "tcp/<gen>/addr/<rank>" = "host:port";
 *   2. connect to every lower rank j (GET its address) and send a hello:
 *      header {HELLO, world << 32 | rank} + the job token;
 *   3. accept the world-1-rank higher ranks (asking the store every 200 ms
 *      whether the job failed: a rank reported dead ends the wait); a
 *      connection whose hello is not the token and a fresh higher rank is
 *      closed (a stray connection to a worker's port gets nothing); each
 *      accepted one gets an ACK;
 *   4. read the ACKs of the lower ranks (a missing one: that rank refused
 *      us); close the listening socket.
 * Lower ranks never wait on higher ones before accepting (the kernel's
 * backlog holds the connects), so no order of arrival deadlocks.
 *
 * Every collective starts with a 16-byte header to each peer it talks to
 * (u32 magic, u8 kind, u8 root, u16 0, u64 bytes), checked on arrival, so
 * mismatched calls fail naming both ranks instead of mixing up streams.
 * Transfers go through one engine: per peer a list of sends and receives,
 * progressed together with poll() on non-blocking sockets, so buffers of
 * any size never deadlock on full socket buffers; a peer with work pending
 * that makes no progress for timeout_s fails the call naming it.
 *
 * allreduce goes in pieces of TCP_PIECE bytes; a piece of m elements is
 * cut into world chunks, chunk r owned by rank r:
 *   reduce-scatter  rank r receives chunk r from every rank and sums them
 *                   in rank order ((x0 + x1) + x2) + ...;
 *   all-gather      rank r sends its summed chunk to every rank.
 * Each element is summed once, by one rank, in rank order: bitwise the same
 * as shm's result on every rank.  broadcast: root sends to each rank;
 * allgather: each to each; barrier: headers only; send/recv: a header with
 * the byte count (a mismatch names both ranks), then the bytes.
 * allgatherv: each to each; reduce_scatterv: allreduce's reduce-scatter
 * with the slices given; their headers carry a digest of the counts
 * instead of a size.
 *
 * After a failure every socket is closed: the peers' calls fail at once
 * with "rank R closed the connection".  hg_comm_abort may come from another
 * thread while a call runs (a request on the progress thread): it shuts
 * the sockets down instead (that call's poll wakes and fails, the peers
 * see them close) and leaves closing them to the call's failure or to
 * free, under a mutex, so no descriptor number is reused under a call.
 *
 * Groups: a handle of their own with connections of their own, set up as
 * above under "tcp/g/<hash of the members' job ranks>/<k>", k = ADD
 * "tcp/g/<hash>/made/<job rank>" (the same on every member: each makes the
 * groups of a list in the same order).  The store must outlive them. */
#define _GNU_SOURCE

#include "base/hg_base.h"
#include "comm/comm-impl.h"
#include "comm/store-impl.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define TCP_MAGIC 0x43544748u /* "HGTC" */
#define TCP_HDR 16
#define TCP_PIECE ((size_t)1 << 20) /* bytes of one allreduce piece */
#define TCP_MAX_WORLD 4096
#define TCP_MAX_PENDING 16 /* accepted connections not yet through hello */
#define TCP_POLL_STORE_MS 200 /* accepting peers: ask the store this often whether
                                 the job failed (a launcher reported a dead rank) */

enum tcp_kind {
    K_HELLO = 1,
    K_ACK,
    K_ALLREDUCE_F32,
    K_ALLREDUCE_F64,
    K_BROADCAST,
    K_ALLGATHER,
    K_BARRIER,
    K_P2P,
    K_ALLGATHERV,      /* bytes: the counts' digest, not a size */
    K_REDUCE_SCATTERV, /* likewise */
};

static const char *kind_name(unsigned k)
{
    switch (k) {
    case K_HELLO: return "hello";
    case K_ACK: return "ack";
    case K_ALLREDUCE_F32: return "allreduce_f32";
    case K_ALLREDUCE_F64: return "allreduce_f64";
    case K_BROADCAST: return "broadcast";
    case K_ALLGATHER: return "allgather";
    case K_BARRIER: return "barrier";
    case K_P2P: return "send";
    case K_ALLGATHERV: return "allgatherv";
    case K_REDUCE_SCATTERV: return "reduce_scatterv";
    default: return "garbage";
    }
}

struct seg {
    unsigned char *p;
    size_t len;
};

/* One peer's part of the current exchange. */
struct xfer {
    struct seg send[2], recv[2];
    int nsend, isend, nrecv, irecv;
    size_t soff, roff;
    int check_hdr;              /* recv[0] is a header to check */
    unsigned char hout[TCP_HDR]; /* the header we send */
    unsigned char hin[TCP_HDR];  /* the one we receive */
    unsigned char hwant[TCP_HDR];
    double last; /* time of the last progress */
};

struct tcp_comm {
    struct hg_comm base; /* ops, rank, world */
    int *fd;             /* (world) -1 for self */
    struct xfer *x;      /* (world) */
    struct pollfd *pf;   /* (world) */
    int *pfpeer;         /* (world) peer of pf[i] */
    unsigned char *scratch; /* (world, chunk) allreduce staging */
    size_t scratch_bytes;
    double timeout_s;
    atomic_int broken;  /* set by abort, maybe from another thread */
    atomic_int aborted; /* hg_comm_abort was called */
    pthread_mutex_t fdmu; /* abort's shutdowns vs fail's closes */
    char token[HG_STORE_TOKEN_LEN + 1];
    struct hg_store *st; /* groups connect through it */
    int *wrank;          /* (world) a group's ranks as the job numbers
                            them; NULL: the job's own handle */
};

static const struct hg_comm_ops tcp_ops;

/* A rank as the job numbers it (a group's handle counts from 0). */
static int W(const struct tcp_comm *c, int r)
{
    return c->wrank ? c->wrank[r] : r;
}


static int ms_left(double deadline)
{
    double ms = (deadline - hg_now()) * 1000.0;
    if (ms <= 0)
        return 0;
    return ms > INT_MAX - 1 ? INT_MAX - 1 : (int)ms + 1;
}

static void put_hdr(unsigned char *b, unsigned kind, unsigned root,
                    uint64_t bytes)
{
    uint32_t m = TCP_MAGIC;
    for (int i = 0; i < 4; i++)
        b[i] = (unsigned char)(m >> (8 * i));
    b[4] = (unsigned char)kind;
    b[5] = (unsigned char)root;
    b[6] = b[7] = 0;
    for (int i = 0; i < 8; i++)
        b[8 + i] = (unsigned char)(bytes >> (8 * i));
}

static uint64_t hdr_bytes(const unsigned char *b)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)b[8 + i] << (8 * i);
    return v;
}

static int hdr_magic_ok(const unsigned char *b)
{
    return b[0] == (TCP_MAGIC & 0xff) && b[1] == ((TCP_MAGIC >> 8) & 0xff) &&
           b[2] == ((TCP_MAGIC >> 16) & 0xff) && b[3] == (TCP_MAGIC >> 24) &&
           b[6] == 0 && b[7] == 0;
}

static void close_all(struct tcp_comm *c)
{
    pthread_mutex_lock(&c->fdmu);
    for (int r = 0; r < c->base.world; r++)
        if (c->fd[r] >= 0) {
            close(c->fd[r]);
            c->fd[r] = -1;
        }
    pthread_mutex_unlock(&c->fdmu);
}

/* Fails the handle: the peers see the connections close. */
static int fail(struct tcp_comm *c)
{
    close_all(c);
    atomic_store(&c->broken, 1);
    return -1;
}

static int check_usable(struct tcp_comm *c, char *err, size_t errlen)
{
    if (!atomic_load(&c->broken))
        return 0;
    return hg_kerr(err, errlen,
                   "tcp: rank %d: communicator unusable after an earlier "
                   "failure or abort", W(c, c->base.rank));
}

/* ---------------------------------------------------------------- engine */

static void xfer_reset(struct tcp_comm *c)
{
    for (int r = 0; r < c->base.world; r++) {
        struct xfer *x = &c->x[r];
        x->nsend = x->isend = x->nrecv = x->irecv = 0;
        x->soff = x->roff = 0;
        x->check_hdr = 0;
    }
}

static void add_send(struct tcp_comm *c, int peer, const void *p, size_t len)
{
    struct xfer *x = &c->x[peer];
    if (len > 0)
        x->send[x->nsend++] = (struct seg){(unsigned char *)p, len};
}

static void add_recv(struct tcp_comm *c, int peer, void *p, size_t len)
{
    struct xfer *x = &c->x[peer];
    if (len > 0)
        x->recv[x->nrecv++] = (struct seg){p, len};
}

/* Queues the header of this call both ways with peer. */
static void add_headers(struct tcp_comm *c, int peer, int out, int in,
                        unsigned kind, unsigned root, uint64_t bytes_out,
                        uint64_t bytes_in)
{
    struct xfer *x = &c->x[peer];
    if (out) {
        put_hdr(x->hout, kind, root, bytes_out);
        add_send(c, peer, x->hout, TCP_HDR);
    }
    if (in) {
        put_hdr(x->hwant, kind, root, bytes_in);
        add_recv(c, peer, x->hin, TCP_HDR);
        x->check_hdr = 1;
    }
}

/* The peers whose connection has closed by now besides `peer`, as
 * "; rank R closed too" each into b[n]: a rank that fails because another
 * died closes its connections in turn, and this rank may see that
 * closing first; naming every closed peer names the first to die too. */
static void closed_too(struct tcp_comm *c, int peer, char *b, size_t n)
{
    size_t k = 0;
    b[0] = 0;
    /* up to 200 ms for the others' closing to show (a killed rank's
     * sockets close as its process is torn down, not always before the
     * peer that saw it first has exited): an error path, so the wait is
     * cheap */
    int others = 0;
    for (int r = 0; r < c->base.world; r++)
        others += r != peer && r != c->base.rank && c->fd[r] >= 0;
    for (double t0 = hg_now(); others && k == 0 && hg_now() - t0 < 0.2;) {
        for (int r = 0; r < c->base.world && k < n; r++) {
            if (r == peer || r == c->base.rank || c->fd[r] < 0)
                continue;
            struct pollfd p = {.fd = c->fd[r], .events = POLLRDHUP};
            if (poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)))
                k += (size_t)snprintf(b + k, n - k, "; rank %d closed too", W(c, r));
        }
        if (k == 0) {
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
}

static int check_header(struct tcp_comm *c, int peer, const char *what,
                        char *err, size_t errlen);

/* A peer closed during a call: a rank that failed on a mismatch closes
 * its connections after sending its header (flush_headers), and another
 * peer's header may be on its way that says more than the close.  Reads
 * the headers still missing, for up to 100 ms: -1 (the handle failed,
 * err set) when one of them differs from ours. */
static int header_says_more(struct tcp_comm *c, int peer, const char *what,
                            char *err, size_t errlen)
{
    double t0 = hg_now();
    for (int again = 1; again && hg_now() - t0 < 0.1;) {
        again = 0;
        for (int r = 0; r < c->base.world; r++) {
            struct xfer *x = &c->x[r];
            if (r == peer || r == c->base.rank || c->fd[r] < 0 ||
                !x->check_hdr || x->irecv > 0 || x->nrecv == 0)
                continue;
            ssize_t n = recv(c->fd[r], x->hin + x->roff, TCP_HDR - x->roff,
                             MSG_DONTWAIT);
            if (n > 0)
                x->roff += (size_t)n;
            if (x->roff == TCP_HDR) {
                x->roff = 0;
                x->irecv = 1;
                if (check_header(c, r, what, err, errlen) != 0)
                    return -1;
            } else if (n != 0 && !(n < 0 && errno != EAGAIN &&
                                   errno != EWOULDBLOCK && errno != EINTR)) {
                again = 1; /* nothing yet: maybe soon */
            }
        }
        if (again) {
            struct timespec ts = {0, 5 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    return 0;
}

static int closed_err(struct tcp_comm *c, int peer, const char *what,
                      char *err, size_t errlen)
{
    char too[256];
    if (!atomic_load(&c->aborted) &&
        header_says_more(c, peer, what, err, errlen) != 0)
        return -1;
    if (atomic_load(&c->aborted)) {
        hg_kerr(err, errlen, "tcp: rank %d: aborted during %s",
                W(c, c->base.rank), what);
    } else {
        closed_too(c, peer, too, sizeof too);
        hg_kerr(err, errlen, "tcp: rank %d: rank %d closed the connection "
                "(exited?) during %s%s", W(c, c->base.rank), W(c, peer), what, too);
    }
    return fail(c);
}

/* Before a mismatch fails the call: this call's header to every peer that
 * has not had all of it (16 bytes into an idle socket: it goes at once),
 * so that each peer checks it and names the mismatch, rather than seeing
 * only the connection close. */
static void flush_headers(struct tcp_comm *c)
{
    for (int r = 0; r < c->base.world; r++) {
        struct xfer *x = &c->x[r];
        if (r == c->base.rank || c->fd[r] < 0 || x->nsend == 0 ||
            x->isend > 0 || x->send[0].p != x->hout)
            continue;
        ssize_t n = send(c->fd[r], x->hout + x->soff, TCP_HDR - x->soff,
                         MSG_DONTWAIT | MSG_NOSIGNAL);
        (void)n; /* best effort: the close says the rest */
    }
}

static int check_header(struct tcp_comm *c, int peer, const char *what,
                        char *err, size_t errlen)
{
    struct xfer *x = &c->x[peer];
    if (memcmp(x->hin, x->hwant, TCP_HDR) == 0)
        return 0;
    flush_headers(c);
    int me = W(c, c->base.rank);
    peer = W(c, peer);
    if (!hdr_magic_ok(x->hin)) {
        hg_kerr(err, errlen, "tcp: rank %d: garbage from rank %d during %s "
                "(not a message header)", me, peer, what);
    } else if (x->hin[4] == K_P2P && x->hwant[4] == K_P2P) {
        hg_kerr(err, errlen, "tcp: rank %d: recv of %llu bytes from rank %d, "
                "but rank %d sent %llu bytes", me,
                (unsigned long long)hdr_bytes(x->hwant), peer, peer,
                (unsigned long long)hdr_bytes(x->hin));
    } else if (x->hin[4] == x->hwant[4] && (x->hin[4] == K_ALLGATHERV ||
                                            x->hin[4] == K_REDUCE_SCATTERV)) {
        hg_kerr(err, errlen, "tcp: rank %d: %s: rank %d passed other counts "
                "than rank %d (the counts must be the same on every rank)",
                me, kind_name(x->hin[4]), peer, me);
    } else {
        hg_kerr(err, errlen, "tcp: rank %d: rank %d is in %s (%llu bytes, "
                "root %u) while rank %d is in %s (%llu bytes, root %u): "
                "mismatched calls", me, peer, kind_name(x->hin[4]),
                (unsigned long long)hdr_bytes(x->hin), x->hin[5], me,
                kind_name(x->hwant[4]), (unsigned long long)hdr_bytes(x->hwant),
                x->hwant[5]);
    }
    return fail(c);
}

static int pending(const struct xfer *x)
{
    return x->isend < x->nsend || x->irecv < x->nrecv;
}

/* Moves bytes with peer until it would block.  1: progress, 0: none,
 * -1: failed (message set, handle failed). */
static int pump(struct tcp_comm *c, int peer, const char *what, char *err,
                size_t errlen)
{
    struct xfer *x = &c->x[peer];
    int fd = c->fd[peer], moved = 0;
    while (x->irecv < x->nrecv) {
        struct seg *s = &x->recv[x->irecv];
        ssize_t n = recv(fd, s->p + x->roff, s->len - x->roff, MSG_DONTWAIT);
        if (n == 0)
            return closed_err(c, peer, what, err, errlen);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            if (errno == ECONNRESET)
                return closed_err(c, peer, what, err, errlen);
            hg_kerr(err, errlen, "tcp: rank %d: receiving from rank %d during "
                    "%s: %s", W(c, c->base.rank), W(c, peer), what,
                    strerror(errno));
            return fail(c);
        }
        moved = 1;
        x->roff += (size_t)n;
        if (x->roff == s->len) {
            x->roff = 0;
            if (x->irecv++ == 0 && x->check_hdr &&
                check_header(c, peer, what, err, errlen) != 0)
                return -1;
        }
    }
    while (x->isend < x->nsend) {
        struct seg *s = &x->send[x->isend];
        ssize_t n = send(fd, s->p + x->soff, s->len - x->soff,
                         MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            if (errno == EPIPE || errno == ECONNRESET)
                return closed_err(c, peer, what, err, errlen);
            hg_kerr(err, errlen, "tcp: rank %d: sending to rank %d during %s: "
                    "%s", W(c, c->base.rank), W(c, peer), what,
                    strerror(errno));
            return fail(c);
        }
        moved = 1;
        x->soff += (size_t)n;
        if (x->soff == s->len) {
            x->soff = 0;
            x->isend++;
        }
    }
    return moved;
}

/* Runs the queued transfers to completion. */
static int run(struct tcp_comm *c, const char *what, char *err, size_t errlen)
{
    int world = c->base.world;
    double now = hg_now();
    for (int r = 0; r < world; r++)
        c->x[r].last = now;
    for (;;) {
        int np = 0;
        double next = 0;
        for (int r = 0; r < world; r++) {
            struct xfer *x = &c->x[r];
            if (r == c->base.rank || !pending(x))
                continue;
            short ev = 0;
            if (x->irecv < x->nrecv)
                ev |= POLLIN;
            if (x->isend < x->nsend)
                ev |= POLLOUT;
            c->pf[np] = (struct pollfd){.fd = c->fd[r], .events = ev};
            c->pfpeer[np++] = r;
            if (np == 1 || x->last + c->timeout_s < next)
                next = x->last + c->timeout_s;
        }
        if (np == 0)
            break;
        int n = poll(c->pf, (nfds_t)np, ms_left(next));
        if (n < 0 && errno != EINTR) {
            hg_kerr(err, errlen, "tcp: rank %d: poll during %s: %s",
                    W(c, c->base.rank), what, strerror(errno));
            return fail(c);
        }
        now = hg_now();
        for (int i = 0; n > 0 && i < np; i++) {
            if (c->pf[i].revents == 0)
                continue;
            int r = c->pfpeer[i];
            int m = pump(c, r, what, err, errlen);
            if (m < 0)
                return -1;
            if (m > 0)
                c->x[r].last = now;
        }
        /* the peers that have held us up for timeout_s */
        char silent[256] = "";
        size_t len = 0;
        int nsilent = 0;
        for (int i = 0; i < np; i++) {
            int r = c->pfpeer[i];
            if (!pending(&c->x[r]) || now < c->x[r].last + c->timeout_s)
                continue;
            nsilent++;
            if (len + 16 < sizeof silent)
                len += (size_t)snprintf(silent + len, sizeof silent - len,
                                        "%s%d", len ? " " : "", W(c, r));
        }
        if (nsilent) {
            hg_kerr(err, errlen, "tcp: rank %d: %s timed out after %g s "
                    "waiting for rank%s %s", W(c, c->base.rank), what, c->timeout_s,
                    nsilent > 1 ? "s" : "", silent);
            return fail(c);
        }
    }
    return 0;
}

/* ---------------------------------------------------------- collectives */

static void sum_f32(void *accv, const void *addv, size_t m)
{
    float *acc = accv;
    const float *add = addv;
    for (size_t i = 0; i < m; i++)
        acc[i] += add[i];
}

static void sum_f64(void *accv, const void *addv, size_t m)
{
    double *acc = accv;
    const double *add = addv;
    for (size_t i = 0; i < m; i++)
        acc[i] += add[i];
}

/* First element of chunk j of m elements cut into w chunks (m is at most
 * a piece: no overflow). */
static size_t chunk_at(size_t m, int j, int w)
{
    return m * (size_t)j / (size_t)w;
}

static int tcp_allreduce(struct hg_comm *base, void *bufv, size_t n,
                         enum hg_comm_dtype dt, char *err, size_t errlen)
{
    struct tcp_comm *c = (struct tcp_comm *)base;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    int w = base->world, me = base->rank;
    if (w == 1)
        return 0;
    size_t esz = dt == HG_COMM_F32 ? sizeof(float) : sizeof(double);
    void (*sum)(void *, const void *, size_t) = dt == HG_COMM_F32 ? sum_f32
                                                                   : sum_f64;
    unsigned kind = dt == HG_COMM_F32 ? K_ALLREDUCE_F32 : K_ALLREDUCE_F64;
    char what[96];
    snprintf(what, sizeof what, "allreduce of %zu x %s", n,
             dt == HG_COMM_F32 ? "f32" : "f64");
    size_t piece = TCP_PIECE / esz;          /* elements */
    size_t cmax = piece / (size_t)w + 1;     /* elements of the largest chunk */
    size_t need = (size_t)w * cmax * esz;
    if (c->scratch_bytes < need) {
        unsigned char *s = realloc(c->scratch, need);
        if (!s) {
            hg_kerr(err, errlen, "tcp: rank %d: out of memory (%zu bytes)", W(c, me),
                    need);
            return fail(c);
        }
        c->scratch = s;
        c->scratch_bytes = need;
    }
    unsigned char *buf = bufv;
    size_t off = 0;
    do { /* n == 0 still exchanges headers: every call is checked */
        size_t m = n - off < piece ? n - off : piece;
        unsigned char *p = buf + off * esz;
        size_t mine = chunk_at(m, me, w), mlen = chunk_at(m, me + 1, w) - mine;
        /* reduce-scatter: chunk j to rank j, chunk `me` from everyone */
        xfer_reset(c);
        for (int j = 0; j < w; j++) {
            if (j == me)
                continue;
            if (off == 0)
                add_headers(c, j, 1, 1, kind, 0, n * esz, n * esz);
            size_t at = chunk_at(m, j, w), len = chunk_at(m, j + 1, w) - at;
            add_send(c, j, p + at * esz, len * esz);
            add_recv(c, j, c->scratch + (size_t)j * cmax * esz, mlen * esz);
        }
        if (run(c, what, err, errlen) != 0)
            return -1;
        /* rank order: acc = x0, then + x1, + x2, ... */
        memcpy(c->scratch + (size_t)me * cmax * esz, p + mine * esz, mlen * esz);
        memcpy(p + mine * esz, c->scratch, mlen * esz);
        for (int j = 1; j < w; j++)
            sum(p + mine * esz, c->scratch + (size_t)j * cmax * esz, mlen);
        /* all-gather: our summed chunk to everyone, theirs from them */
        xfer_reset(c);
        for (int j = 0; j < w; j++) {
            if (j == me)
                continue;
            size_t at = chunk_at(m, j, w), len = chunk_at(m, j + 1, w) - at;
            add_send(c, j, p + mine * esz, mlen * esz);
            add_recv(c, j, p + at * esz, len * esz);
        }
        if (run(c, what, err, errlen) != 0)
            return -1;
        off += m;
    } while (off < n);
    return 0;
}

static int tcp_broadcast(struct hg_comm *base, void *buf, size_t bytes,
                         int root, char *err, size_t errlen)
{
    struct tcp_comm *c = (struct tcp_comm *)base;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    int w = base->world, me = base->rank;
    if (w == 1)
        return 0;
    char what[96];
    snprintf(what, sizeof what, "broadcast of %zu bytes from rank %d", bytes,
             W(c, root));
    xfer_reset(c);
    if (me == root) {
        for (int j = 0; j < w; j++)
            if (j != me) {
                add_headers(c, j, 1, 0, K_BROADCAST, (unsigned)root & 0xff,
                            bytes, 0);
                add_send(c, j, buf, bytes);
            }
    } else {
        add_headers(c, root, 0, 1, K_BROADCAST, (unsigned)root & 0xff, 0, bytes);
        add_recv(c, root, buf, bytes);
    }
    return run(c, what, err, errlen);
}

static int tcp_allgather(struct hg_comm *base, const void *send, void *recvv,
                         size_t bytes, char *err, size_t errlen)
{
    struct tcp_comm *c = (struct tcp_comm *)base;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    int w = base->world, me = base->rank;
    unsigned char *recv = recvv;
    if (bytes > 0 && recv + (size_t)me * bytes != (const unsigned char *)send)
        memmove(recv + (size_t)me * bytes, send, bytes);
    if (w == 1)
        return 0;
    char what[96];
    snprintf(what, sizeof what, "allgather of %zu bytes", bytes);
    xfer_reset(c);
    for (int j = 0; j < w; j++)
        if (j != me) {
            add_headers(c, j, 1, 1, K_ALLGATHER, 0, bytes, bytes);
            add_send(c, j, recv + (size_t)me * bytes, bytes);
            add_recv(c, j, recv + (size_t)j * bytes, bytes);
        }
    return run(c, what, err, errlen);
}

/* allgatherv: each to each, like allgather, the digest of the counts in
 * the headers (checked before any data is taken). */
static int tcp_allgatherv(struct hg_comm *base, const void *send, void *recvv,
                          const size_t *counts, char *err, size_t errlen)
{
    struct tcp_comm *c = (struct tcp_comm *)base;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    int w = base->world, me = base->rank;
    unsigned char *recv = recvv;
    size_t at_me = hg_comm_counts_off(counts, me);
    if (counts[me] > 0 && recv + at_me != (const unsigned char *)send)
        memmove(recv + at_me, send, counts[me]);
    if (w == 1)
        return 0;
    uint64_t d = hg_comm_counts_digest(counts, w);
    char what[96];
    snprintf(what, sizeof what, "allgatherv of %zu bytes",
             hg_comm_counts_off(counts, w));
    xfer_reset(c);
    size_t at = 0;
    for (int j = 0; j < w; at += counts[j], j++)
        if (j != me) {
            add_headers(c, j, 1, 1, K_ALLGATHERV, 0, d, d);
            add_send(c, j, recv + at_me, counts[me]);
            add_recv(c, j, recv + at, counts[j]);
        }
    return run(c, what, err, errlen);
}

/* reduce_scatterv, in pieces of at most TCP_PIECE bytes of each slice
 * (piece k: elements [k*P, (k+1)*P) of every slice, at least one piece
 * so that an empty call still checks the counts): rank j receives its
 * slice's piece from every rank and sums them in rank order, as
 * allreduce's reduce-scatter does, so element for element the result is
 * allreduce's. */
static int tcp_reduce_scatterv(struct hg_comm *base, const float *send,
                               float *recv, const size_t *counts, char *err,
                               size_t errlen)
{
    struct tcp_comm *c = (struct tcp_comm *)base;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    int w = base->world, me = base->rank;
    size_t lo = hg_comm_counts_off(counts, me), mine = counts[me];
    if (w == 1) {
        if (mine > 0 && recv != send + lo)
            memcpy(recv, send + lo, mine * sizeof *recv);
        return 0;
    }
    size_t piece = TCP_PIECE / sizeof(float), maxc = 0;
    for (int j = 0; j < w; j++)
        maxc = counts[j] > maxc ? counts[j] : maxc;
    size_t need = (size_t)w * piece * sizeof(float);
    if (c->scratch_bytes < need) {
        unsigned char *s = realloc(c->scratch, need);
        if (!s) {
            hg_kerr(err, errlen, "tcp: rank %d: out of memory (%zu bytes)",
                    W(c, me), need);
            return fail(c);
        }
        c->scratch = s;
        c->scratch_bytes = need;
    }
    float *tmp = (float *)c->scratch; /* [w][piece]: rank j's part of mine */
    uint64_t d = hg_comm_counts_digest(counts, w);
    char what[96];
    snprintf(what, sizeof what, "reduce_scatterv of %zu floats",
             hg_comm_counts_off(counts, w));
    size_t off = 0;
    do {
        size_t m = mine > off ? (mine - off < piece ? mine - off : piece) : 0;
        xfer_reset(c);
        size_t at = 0;
        for (int j = 0; j < w; at += counts[j], j++) {
            if (j == me)
                continue;
            if (off == 0)
                add_headers(c, j, 1, 1, K_REDUCE_SCATTERV, 0, d, d);
            if (off < counts[j]) {
                size_t len = counts[j] - off < piece ? counts[j] - off : piece;
                add_send(c, j, send + at + off, len * sizeof(float));
            }
            add_recv(c, j, tmp + (size_t)j * piece, m * sizeof(float));
        }
        if (run(c, what, err, errlen) != 0)
            return -1;
        if (m > 0) {
            /* rank order: acc = x0, then + x1, + x2, ...; in place, our
             * own part goes through tmp before recv overwrites it */
            float *own = tmp + (size_t)me * piece, *dst = recv + off;
            memcpy(own, send + lo + off, m * sizeof *own);
            memcpy(dst, tmp, m * sizeof *dst);
            for (int j = 1; j < w; j++)
                sum_f32(dst, tmp + (size_t)j * piece, m);
        }
        off += piece;
    } while (off < maxc);
    return 0;
}

static int tcp_barrier(struct hg_comm *base, char *err, size_t errlen)
{
    struct tcp_comm *c = (struct tcp_comm *)base;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    if (base->world == 1)
        return 0;
    xfer_reset(c);
    for (int j = 0; j < base->world; j++)
        if (j != base->rank)
            add_headers(c, j, 1, 1, K_BARRIER, 0, 0, 0);
    return run(c, "barrier", err, errlen);
}

static int tcp_send(struct hg_comm *base, const void *buf, size_t bytes,
                    int peer, char *err, size_t errlen)
{
    struct tcp_comm *c = (struct tcp_comm *)base;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    char what[96];
    snprintf(what, sizeof what, "send of %zu bytes to rank %d", bytes,
             W(c, peer));
    xfer_reset(c);
    add_headers(c, peer, 1, 0, K_P2P, 0, bytes, 0);
    add_send(c, peer, buf, bytes);
    return run(c, what, err, errlen);
}

static int tcp_recv(struct hg_comm *base, void *buf, size_t bytes, int peer,
                    char *err, size_t errlen)
{
    struct tcp_comm *c = (struct tcp_comm *)base;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    char what[96];
    snprintf(what, sizeof what, "recv of %zu bytes from rank %d", bytes,
             W(c, peer));
    xfer_reset(c);
    add_headers(c, peer, 0, 1, K_P2P, 0, 0, bytes);
    add_recv(c, peer, buf, bytes);
    return run(c, what, err, errlen);
}

/* Maybe beside a call in another thread: shuts the connections down
 * (that call's poll wakes, the peers see them close) and leaves closing
 * them to that call's failure or to free. */
static void tcp_abort(struct hg_comm *base)
{
    struct tcp_comm *c = (struct tcp_comm *)base;
    atomic_store(&c->aborted, 1);
    atomic_store(&c->broken, 1);
    pthread_mutex_lock(&c->fdmu);
    for (int r = 0; r < base->world; r++)
        if (c->fd[r] >= 0)
            shutdown(c->fd[r], SHUT_RDWR);
    pthread_mutex_unlock(&c->fdmu);
}

static void tcp_free(struct hg_comm *base)
{
    struct tcp_comm *c = (struct tcp_comm *)base;
    if (!c)
        return;
    if (c->fd)
        close_all(c);
    volatile char *t = c->token; /* the secret does not linger in the heap */
    for (size_t i = 0; i < sizeof c->token; i++)
        t[i] = 0;
    free(c->fd);
    free(c->x);
    free(c->pf);
    free(c->pfpeer);
    free(c->scratch);
    free(c->wrank);
    pthread_mutex_destroy(&c->fdmu);
    free(c);
}

/* ---------------------------------------------------------------- set-up */

/* Blocking-with-deadline I/O on a set-up socket (non-blocking). */
static int io_all(int fd, void *bv, size_t len, int out, double deadline)
{
    unsigned char *b = bv;
    while (len > 0) {
        ssize_t n = out ? send(fd, b, len, MSG_DONTWAIT | MSG_NOSIGNAL)
                        : recv(fd, b, len, MSG_DONTWAIT);
        if (n > 0) {
            b += n;
            len -= (size_t)n;
            continue;
        }
        if (n == 0) {
            errno = ECONNRESET;
            return -1;
        }
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return -1;
        struct pollfd p = {.fd = fd, .events = out ? POLLOUT : POLLIN};
        int r = poll(&p, 1, ms_left(deadline));
        if (r == 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        if (r < 0 && errno != EINTR)
            return -1;
    }
    return 0;
}

static void tune(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* Connects to rank j at "host:port" and says hello. */
static int connect_peer(struct tcp_comm *c, int j, const char *addr,
                        double deadline, char *err, size_t errlen)
{
    int me = c->base.rank;
    char host[128];
    const char *colon = strrchr(addr, ':');
    if (!colon || (size_t)(colon - addr) >= sizeof host || colon == addr)
        return hg_kerr(err, errlen, "tcp: rank %d: rank %d published a bad "
                       "address '%s'", W(c, me), W(c, j), addr);
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = '\0';
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV};
    struct addrinfo *ai = NULL;
    int g = getaddrinfo(host, colon + 1, &hints, &ai);
    if (g != 0)
        return hg_kerr(err, errlen, "tcp: rank %d: rank %d's address '%s': %s",
                       W(c, me), W(c, j), addr, gai_strerror(g));
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int rc = fd < 0 ? -1 : connect(fd, ai->ai_addr, ai->ai_addrlen);
    freeaddrinfo(ai);
    if (rc != 0 && fd >= 0 && errno == EINPROGRESS) {
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        int soerr = 0;
        socklen_t sl = sizeof soerr;
        int r = poll(&p, 1, ms_left(deadline));
        if (r == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 &&
            soerr == 0)
            rc = 0;
        else
            errno = r == 0 ? ETIMEDOUT : soerr;
    }
    unsigned char hello[TCP_HDR + HG_STORE_TOKEN_LEN];
    put_hdr(hello, K_HELLO, 0, (uint64_t)c->base.world << 32 | (uint32_t)me);
    memcpy(hello + TCP_HDR, c->token, HG_STORE_TOKEN_LEN);
    if (rc != 0 || io_all(fd, hello, sizeof hello, 1, deadline) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return hg_kerr(err, errlen, "tcp: rank %d: connecting to rank %d at "
                       "%s: %s", W(c, me), W(c, j), addr, strerror(e));
    }
    tune(fd);
    c->fd[j] = fd;
    return 0;
}

struct pend {
    int fd;
    size_t got;
    unsigned char b[TCP_HDR + HG_STORE_TOKEN_LEN];
};

/* A hello read in full from an accepted connection: the rank it is from,
 * or -1 (stray, wrong token, a rank we have, another world). */
static int hello_rank(const struct tcp_comm *c, const unsigned char *b)
{
    if (!hdr_magic_ok(b) || b[4] != K_HELLO ||
        !hg_store_token_equal((const char *)b + TCP_HDR, c->token))
        return -1;
    uint64_t v = hdr_bytes(b);
    int64_t r = (int64_t)(v & 0xffffffffu);
    if ((v >> 32) != (uint64_t)c->base.world || r <= c->base.rank ||
        r >= c->base.world || c->fd[r] >= 0)
        return -1;
    return (int)r;
}

/* Accepts the higher ranks on lfd until all have said hello. */
static int accept_peers(struct tcp_comm *c, int lfd, double deadline,
                        char *err, size_t errlen)
{
    int me = c->base.rank, world = c->base.world, left = world - 1 - me;
    struct pend pend[TCP_MAX_PENDING];
    int np = 0, rc = 0;
    struct pollfd pf[TCP_MAX_PENDING + 1];
    while (left > 0) {
        pf[0] = (struct pollfd){.fd = lfd, .events = POLLIN};
        for (int i = 0; i < np; i++)
            pf[i + 1] = (struct pollfd){.fd = pend[i].fd, .events = POLLIN};
        /* in slices: between them the store says whether a launcher has
         * reported a rank dead (it may never connect) */
        int ms = ms_left(deadline);
        int n = poll(pf, (nfds_t)np + 1, ms < TCP_POLL_STORE_MS ? ms : TCP_POLL_STORE_MS);
        if (n < 0 && errno != EINTR) {
            rc = hg_kerr(err, errlen, "tcp: rank %d: poll: %s", W(c, me),
                         strerror(errno));
            break;
        }
        char why[HG_STORE_ABORT_MAX + 64];
        int over = n == 0 && hg_now() >= deadline;
        if (n == 0 && (over || (c->st && hg_store_failed(c->st, why, sizeof why)))) {
            char missing[256] = "";
            size_t len = 0;
            for (int r = me + 1; r < world && len + 16 < sizeof missing; r++)
                if (c->fd[r] < 0)
                    len += (size_t)snprintf(missing + len, sizeof missing - len,
                                            "%s%d", len ? " " : "", W(c, r));
            if (over)
                rc = hg_kerr(err, errlen, "tcp: rank %d: timed out after %g s "
                             "waiting for ranks to connect: %s", W(c, me), c->timeout_s,
                             missing);
            else
                rc = hg_kerr(err, errlen, "tcp: rank %d: waiting for ranks to connect "
                             "(%s): %s", W(c, me), missing, why);
            break;
        }
        if (n <= 0)
            continue;
        /* hellos first: pend[] shrinks, then new ones are appended */
        for (int i = np - 1; i >= 0; i--) {
            if (pf[i + 1].revents == 0)
                continue;
            struct pend *p = &pend[i];
            ssize_t k = recv(p->fd, p->b + p->got, sizeof p->b - p->got,
                             MSG_DONTWAIT);
            if (k < 0 && (errno == EAGAIN || errno == EINTR))
                continue;
            int r = -1;
            if (k > 0 && (p->got += (size_t)k) < sizeof p->b)
                continue;
            if (k > 0)
                r = hello_rank(c, p->b);
            unsigned char ack[TCP_HDR];
            put_hdr(ack, K_ACK, 0, (uint64_t)me);
            if (r >= 0 && io_all(p->fd, ack, sizeof ack, 1, deadline) == 0) {
                tune(p->fd);
                c->fd[r] = p->fd;
                left--;
            } else {
                close(p->fd); /* a stray: it learns nothing */
            }
            pend[i] = pend[--np];
        }
        if (pf[0].revents & POLLIN) {
            int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (fd >= 0) {
                if (np == TCP_MAX_PENDING) { /* the oldest stray goes */
                    close(pend[0].fd);
                    pend[0] = pend[--np];
                }
                pend[np++] = (struct pend){.fd = fd, .got = 0};
            }
        }
    }
    for (int i = 0; i < np; i++)
        close(pend[i].fd);
    return rc;
}

/* A handle of `world` ranks with nothing connected yet; wrank is taken. */
static struct tcp_comm *tcp_alloc(int rank, int world, double timeout_s,
                                  int *wrank)
{
    struct tcp_comm *c = calloc(1, sizeof *c);
    if (!c) {
        free(wrank);
        return NULL;
    }
    c->base = (struct hg_comm){.ops = &tcp_ops, .rank = rank, .world = world};
    c->timeout_s = timeout_s;
    c->wrank = wrank;
    pthread_mutex_init(&c->fdmu, NULL);
    c->fd = malloc((size_t)world * sizeof *c->fd);
    c->x = calloc((size_t)world, sizeof *c->x);
    c->pf = calloc((size_t)world, sizeof *c->pf);
    c->pfpeer = calloc((size_t)world, sizeof *c->pfpeer);
    if (!c->fd || !c->x || !c->pf || !c->pfpeer) {
        tcp_free(&c->base);
        return NULL;
    }
    for (int r = 0; r < world; r++)
        c->fd[r] = -1;
    return c;
}

/* Connects c to its peers through the store: addresses under
 * "<prefix>/addr/<rank>". */
static int connect_all(struct tcp_comm *c, struct hg_store *st,
                       const char *prefix, char *err, size_t errlen)
{
    int rank = c->base.rank, world = c->base.world;
    double timeout_s = c->timeout_s;
    c->st = st;
    memcpy(c->token, hg_store_token_of(st), HG_STORE_TOKEN_LEN + 1);
    int lfd = -1, rc = -1;
    char key[128];
    /* listen where the store connection leaves this host */
    struct sockaddr_storage ss;
    socklen_t sslen;
    if (hg_store_local_addr(st, &ss, &sslen, err, errlen) != 0)
        goto out;
    if (ss.ss_family == AF_INET6)
        ((struct sockaddr_in6 *)&ss)->sin6_port = 0;
    else
        ((struct sockaddr_in *)&ss)->sin_port = 0;
    lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&ss, sslen) != 0 ||
        listen(lfd, world + TCP_MAX_PENDING) != 0 ||
        getsockname(lfd, (struct sockaddr *)&ss, &sslen) != 0) {
        hg_kerr(err, errlen, "tcp: rank %d: listening: %s", W(c, rank),
                strerror(errno));
        goto out;
    }
    char host[NI_MAXHOST], port[NI_MAXSERV], addr[NI_MAXHOST + NI_MAXSERV + 2];
    int g = getnameinfo((struct sockaddr *)&ss, sslen, host, sizeof host, port,
                        sizeof port, NI_NUMERICHOST | NI_NUMERICSERV);
    if (g != 0) {
        hg_kerr(err, errlen, "tcp: rank %d: getnameinfo: %s", W(c, rank),
                gai_strerror(g));
        goto out;
    }
    snprintf(addr, sizeof addr, "%s:%s", host, port);
    snprintf(key, sizeof key, "%s/addr/%d", prefix, rank);
    if (hg_store_set(st, key, addr, strlen(addr), err, errlen) != 0)
        goto out;

    double deadline = hg_now() + timeout_s;
    for (int j = 0; j < rank; j++) {
        char peer[sizeof addr];
        size_t len;
        snprintf(key, sizeof key, "%s/addr/%d", prefix, j);
        if (hg_store_get(st, key, peer, sizeof peer - 1, &len, err, errlen) != 0)
            goto out;
        peer[len < sizeof peer ? len : sizeof peer - 1] = '\0';
        if (connect_peer(c, j, peer, deadline, err, errlen) != 0)
            goto out;
    }
    if (accept_peers(c, lfd, deadline, err, errlen) != 0)
        goto out;
    for (int j = 0; j < rank; j++) {
        unsigned char ack[TCP_HDR];
        const char *why = NULL;
        if (io_all(c->fd[j], ack, sizeof ack, 0, hg_now() + timeout_s) != 0)
            why = errno == ETIMEDOUT ? "no answer" : "it closed the connection";
        else if (!hdr_magic_ok(ack) || ack[4] != K_ACK ||
                 hdr_bytes(ack) != (uint64_t)j)
            why = "a bad answer";
        if (why) {
            hg_kerr(err, errlen, "tcp: rank %d: rank %d did not accept the "
                    "connection (%s; a different job token or world?)",
                    W(c, rank), W(c, j), why);
            goto out;
        }
    }
    rc = 0;
out:
    if (lfd >= 0)
        close(lfd);
    return rc;
}

int hg_comm_tcp_new(struct hg_comm **cp, struct hg_store *st, int rank,
                    int world, double timeout_s, char *err, size_t errlen)
{
    *cp = NULL;
    if (world < 1 || world > TCP_MAX_WORLD)
        return hg_kerr(err, errlen, "tcp: world %d outside 1..%d", world,
                       TCP_MAX_WORLD);
    if (rank < 0 || rank >= world)
        return hg_kerr(err, errlen, "tcp: rank %d outside 0..%d", rank,
                       world - 1);
    if (!(timeout_s > 0))
        return hg_kerr(err, errlen, "tcp: rank %d: timeout %g s is not positive",
                       rank, timeout_s);
    struct tcp_comm *c = tcp_alloc(rank, world, timeout_s, NULL);
    if (!c)
        return hg_kerr(err, errlen, "tcp: rank %d: out of memory", rank);
    if (world == 1) {
        c->st = st; /* groups of one need none */
        *cp = &c->base;
        return 0;
    }
    if (!st) {
        tcp_free(&c->base);
        return hg_kerr(err, errlen, "tcp: rank %d: no store", rank);
    }
    /* the gen-th communicator made on this store: the same gen on every
     * rank, since all make them in the same order */
    int64_t gen;
    char key[64];
    snprintf(key, sizeof key, "tcp/new/%d", rank);
    if (hg_store_add(st, key, 1, &gen, err, errlen) != 0) {
        tcp_free(&c->base);
        return -1;
    }
    snprintf(key, sizeof key, "tcp/%lld", (long long)gen);
    if (connect_all(c, st, key, err, errlen) != 0) {
        tcp_free(&c->base);
        return -1;
    }
    *cp = &c->base;
    return 0;
}

/* A group is a set of connections of its own: the members count the
 * groups of this list they have made (a store counter each, the same on
 * all) and meet under "tcp/g/<list>/<count>". */
static int tcp_group(struct hg_comm *base, const int *ranks, int n,
                     struct hg_comm **gp, char *err, size_t errlen)
{
    struct tcp_comm *c = (struct tcp_comm *)base;
    *gp = NULL;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    int me = 0;
    while (ranks[me] != base->rank)
        me++;
    int *wrank = malloc((size_t)n * sizeof *wrank);
    struct tcp_comm *g = NULL;
    if (wrank)
        for (int i = 0; i < n; i++)
            wrank[i] = W(c, ranks[i]);
    if (!wrank || !(g = tcp_alloc(me, n, c->timeout_s, wrank))) {
        hg_kerr(err, errlen, "tcp: rank %d: out of memory", W(c, base->rank));
        return fail(c);
    }
    if (n == 1) {
        g->st = c->st;
        *gp = &g->base;
        return 0;
    }
    /* the job's numbering: the same list from any parent is one key */
    uint64_t h = hg_comm_group_hash(wrank, n);
    char key[96];
    int64_t k;
    snprintf(key, sizeof key, "tcp/g/%016llx/made/%d", (unsigned long long)h,
             W(c, base->rank));
    if (!c->st) {
        hg_kerr(err, errlen, "tcp: rank %d: no store to make a group through",
                W(c, base->rank));
    } else if (hg_store_add(c->st, key, 1, &k, err, errlen) == 0) {
        snprintf(key, sizeof key, "tcp/g/%016llx/%lld", (unsigned long long)h,
                 (long long)k);
        if (connect_all(g, c->st, key, err, errlen) == 0) {
            *gp = &g->base;
            return 0;
        }
    }
    tcp_free(&g->base);
    return fail(c);
}

static unsigned tcp_caps(const struct hg_comm *c)
{
    (void)c;
    return HG_COMM_ASYNC | HG_COMM_GROUPS | HG_COMM_THREADS |
           HG_COMM_RANK_ORDER | HG_COMM_PS;
}

static const struct hg_comm_ops tcp_ops = {
    .name = "tcp",
    .caps = tcp_caps,
    .allreduce = tcp_allreduce,
    .broadcast = tcp_broadcast,
    .allgather = tcp_allgather,
    .allgatherv = tcp_allgatherv,
    .reduce_scatterv = tcp_reduce_scatterv,
    .barrier = tcp_barrier,
    .send = tcp_send,
    .recv = tcp_recv,
    .group = tcp_group,
    .abort = tcp_abort,
    .free = tcp_free,
};
