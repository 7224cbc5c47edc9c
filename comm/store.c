/* store.c - the rendezvous store of hg_comm.h: a key-value server in a
 * thread of rank 0's process, and the client every rank connects with.
 *
 * Wire protocol.  Every message, either way, is one frame:
 *
 *     u32 magic      0x54534748 ("HGST")
 *     u8  op         enum hg_store_op (comm/store-impl.h)
 *     u8  flags      0
 *     u16 reserved   0
 *     u32 klen       key bytes that follow (<= HG_STORE_MAX_KEY)
 *     u32 vlen       value bytes after the key (<= HG_STORE_MAX_VALUE)
 *     key, value
 *
 * all integers little-endian.  The header is checked (magic, op, zero
 * flags, lengths against the limits and the op's shape) before anything is
 * allocated for the payload; a bad header closes that connection only.
 *
 *     HELLO  key = the job token (HG_STORE_TOKEN_LEN), value = i32 rank
 *            (-1..world-1; -1: not a rank, e.g. a launcher).  Must be the
 *            first frame, and only the first; reply OK.  A wrong token:
 *            reply ERR, close.
 *     SET    key, value          reply OK (ERR when the store is full)
 *     GET    key                 reply VALUE when the key exists: the server
 *                                parks the request until a SET or ADD makes
 *                                it; the client side has the timeout
 *     ADD    key, i64 delta      reply VALUE i64 (the new value; the key
 *                                holds an 8-byte i64, absent = 0)
 *     CHECK  key                 reply VALUE u8: 1 if the key exists, at once
 *     CLAIM  key, value          set-if-absent: reply VALUE u8 0 when the key
 *                                was absent (now set to value), else u8 1
 *                                followed by the value it holds (unchanged);
 *                                a rank's claim on its rank number
 *     ABORT  value               the job has failed, value says why (at most
 *                                HG_STORE_ABORT_MAX bytes; the first ABORT
 *                                wins, later ones change nothing): every
 *                                parked GET and every later GET of an absent
 *                                key gets ERR HG_STORE_FAILED + the message at
 *                                once, and the message is kept under
 *                                HG_STORE_ABORT_KEY (a CHECK finds it);
 *                                reply OK.  A launcher sends it when one of
 *                                its ranks dies, so that ranks waiting for
 *                                that one in the rendezvous fail at once
 *                                naming it instead of at their timeout.
 *
 * A connection's requests are answered in order: while its GET is parked,
 * its later frames wait in its read buffer.  A client that gives up on a
 * GET (timeout) drops the connection and connects afresh for its next call,
 * so the stream never carries a stale reply.
 *
 * The server is one thread running poll() over the listening socket, a
 * wake-up pipe and the clients; every socket is non-blocking with its own
 * read and write buffers, so a slow, silent or half-sent client never holds
 * up the others.  Limits: 4 * world + 16 connections, STORE_MAX_BYTES
 * stored, STORE_MAX_OUT bytes of unread replies per client, HELLO within
 * STORE_HELLO_S seconds.  Rejections are logged to stderr (rate-limited)
 * with the peer's address and the reason, never with the bytes received. */
#define _GNU_SOURCE

#include "base/hg_base.h"
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define STORE_MAX_BYTES ((size_t)256 << 20)
#define STORE_MAX_OUT ((size_t)8 << 20)
#define STORE_HELLO_S 10.0
#define STORE_LOG_FIRST 8       /* rejections logged one by one */
#define STORE_LOG_EVERY 1000    /* then one line per this many */
#define STORE_RETRY_S 0.05      /* between connection attempts */
#define STORE_ENTRY_OVERHEAD 64 /* bytes counted per key besides its data */

/* Milliseconds from now to deadline for poll(), at least 0, rounded up so
 * a wait never ends just before its deadline. */
static int ms_left(double deadline)
{
    double ms = (deadline - hg_now()) * 1000.0;
    if (ms <= 0)
        return 0;
    return ms > INT_MAX - 1 ? INT_MAX - 1 : (int)ms + 1;
}

static void put_u32(unsigned char *b, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_u32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
           (uint32_t)b[3] << 24;
}

static void put_i64(unsigned char *b, int64_t v)
{
    uint64_t u = (uint64_t)v;
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(u >> (8 * i));
}

static int64_t get_i64(const unsigned char *b)
{
    uint64_t u = 0;
    for (int i = 0; i < 8; i++)
        u |= (uint64_t)b[i] << (8 * i);
    return (int64_t)u;
}

/* ---------------------------------------------------------------- frames */

void hg_store_put_header(unsigned char *b, enum hg_store_op op, uint32_t klen,
                         uint32_t vlen)
{
    put_u32(b, HG_STORE_MAGIC);
    b[4] = (unsigned char)op;
    b[5] = 0;
    b[6] = b[7] = 0;
    put_u32(b + 8, klen);
    put_u32(b + 12, vlen);
}

int hg_store_parse_header(const unsigned char *b, size_t len,
                          struct hg_store_hdr *h, char *err, size_t errlen)
{
    if (len < HG_STORE_HDR_LEN)
        return 0;
    h->magic = get_u32(b);
    h->op = b[4];
    h->flags = b[5];
    h->reserved = (uint16_t)(b[6] | b[7] << 8);
    h->klen = get_u32(b + 8);
    h->vlen = get_u32(b + 12);
    if (h->magic != HG_STORE_MAGIC)
        return hg_kerr(err, errlen, "bad magic 0x%08x", (unsigned)h->magic);
    if (h->flags != 0 || h->reserved != 0)
        return hg_kerr(err, errlen, "nonzero flags or reserved bits");
    if (h->klen > HG_STORE_MAX_KEY)
        return hg_kerr(err, errlen, "key of %u bytes (at most %d)",
                       (unsigned)h->klen, HG_STORE_MAX_KEY);
    if (h->vlen > HG_STORE_MAX_VALUE)
        return hg_kerr(err, errlen, "value of %u bytes (at most %u)",
                       (unsigned)h->vlen, HG_STORE_MAX_VALUE);
    /* the shape of each op: what its key and value must be */
    int ok;
    switch (h->op) {
    case HG_STORE_HELLO: ok = h->klen == HG_STORE_TOKEN_LEN && h->vlen == 4; break;
    case HG_STORE_SET: ok = h->klen > 0; break;
    case HG_STORE_GET:
    case HG_STORE_CHECK: ok = h->klen > 0 && h->vlen == 0; break;
    case HG_STORE_ADD: ok = h->klen > 0 && h->vlen == 8; break;
    case HG_STORE_CLAIM: ok = h->klen > 0 && h->vlen < HG_STORE_MAX_VALUE; break;
    case HG_STORE_ABORT:
        ok = h->klen == 0 && h->vlen > 0 && h->vlen <= HG_STORE_ABORT_MAX;
        break;
    case HG_STORE_OK: ok = h->klen == 0 && h->vlen == 0; break;
    case HG_STORE_VALUE:
    case HG_STORE_ERR: ok = h->klen == 0; break;
    default:
        return hg_kerr(err, errlen, "unknown op %u", (unsigned)h->op);
    }
    if (!ok)
        return hg_kerr(err, errlen, "op %u with a %u-byte key and a %u-byte value",
                       (unsigned)h->op, (unsigned)h->klen, (unsigned)h->vlen);
    return HG_STORE_HDR_LEN;
}

/* ---------------------------------------------------------------- tokens */

static int is_token(const char *t, size_t len)
{
    if (len != HG_STORE_TOKEN_LEN)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!((t[i] >= '0' && t[i] <= '9') || (t[i] >= 'a' && t[i] <= 'f') ||
              (t[i] >= 'A' && t[i] <= 'F')))
            return 0;
    return 1;
}

int hg_store_token_equal(const char *a, const char *b)
{
    /* no early exit: the time taken says nothing about where they differ */
    volatile unsigned char diff = 0;
    for (size_t i = 0; i < HG_STORE_TOKEN_LEN; i++)
        diff |= (unsigned char)(a[i] ^ b[i]);
    return diff == 0;
}

int hg_store_token_new(char token[HG_STORE_TOKEN_LEN + 1], char *err,
                       size_t errlen)
{
    unsigned char r[HG_STORE_TOKEN_LEN / 2];
    size_t got = 0;
    while (got < sizeof r) {
        ssize_t n = getrandom(r + got, sizeof r - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return hg_kerr(err, errlen, "store: token: getrandom: %s",
                           strerror(errno));
        got += (size_t)n;
    }
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < sizeof r; i++) {
        token[2 * i] = hex[r[i] >> 4];
        token[2 * i + 1] = hex[r[i] & 15];
    }
    token[HG_STORE_TOKEN_LEN] = '\0';
    return 0;
}

int hg_store_token_load(char token[HG_STORE_TOKEN_LEN + 1], const char *path,
                        char *err, size_t errlen)
{
    const char *env = getenv("HG_JOB_TOKEN");
    if (env && *env) {
        /* the message gives the length, never the value */
        if (!is_token(env, strlen(env)))
            return hg_kerr(err, errlen,
                           "HG_JOB_TOKEN: expected %d hex characters (got %zu "
                           "characters, or not all hex)",
                           HG_STORE_TOKEN_LEN, strlen(env));
        memcpy(token, env, HG_STORE_TOKEN_LEN + 1);
        return 0;
    }
    if (!path || !*path)
        return hg_kerr(err, errlen,
                       "no job token: HG_JOB_TOKEN is unset and no token file "
                       "was given");
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return hg_kerr(err, errlen, "token file %s: %s", path, strerror(errno));
    /* fstat the open file, not the name: no window to swap it */
    struct stat sb;
    int rc = -1;
    if (fstat(fd, &sb) != 0) {
        hg_kerr(err, errlen, "token file %s: %s", path, strerror(errno));
        goto out;
    }
    if (!S_ISREG(sb.st_mode)) {
        hg_kerr(err, errlen, "token file %s: not a regular file", path);
        goto out;
    }
    if (sb.st_uid != geteuid()) {
        hg_kerr(err, errlen, "token file %s: owned by uid %ld, not by us (uid %ld)",
                path, (long)sb.st_uid, (long)geteuid());
        goto out;
    }
    if (sb.st_mode & 077) {
        hg_kerr(err, errlen,
                "token file %s: mode %04o lets group or others read it "
                "(chmod 600 %s)", path, (unsigned)(sb.st_mode & 07777), path);
        goto out;
    }
    char buf[HG_STORE_TOKEN_LEN + 4];
    size_t len = 0;
    for (;;) {
        ssize_t n = read(fd, buf + len, sizeof buf - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            hg_kerr(err, errlen, "token file %s: %s", path, strerror(errno));
            goto out;
        }
        if (n == 0 || (len += (size_t)n) == sizeof buf)
            break;
    }
    if (len > 0 && buf[len - 1] == '\n')
        len--;
    if (len > 0 && buf[len - 1] == '\r')
        len--;
    if (!is_token(buf, len)) {
        hg_kerr(err, errlen,
                "token file %s: expected %d hex characters and a newline",
                path, HG_STORE_TOKEN_LEN);
        goto out;
    }
    memcpy(token, buf, HG_STORE_TOKEN_LEN);
    token[HG_STORE_TOKEN_LEN] = '\0';
    rc = 0;
out:
    close(fd);
    return rc;
}

int hg_store_token_save(const char *token, const char *path, char *err,
                        size_t errlen)
{
    if (!token || !is_token(token, strlen(token)))
        return hg_kerr(err, errlen, "token file %s: not a %d-hex-character token",
                       path, HG_STORE_TOKEN_LEN);
    char tmp[PATH_MAX];
    int fd = -1;
    for (unsigned i = 0; i < 100 && fd < 0; i++) {
        if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", path, (long)getpid(), i) >=
            (int)sizeof tmp)
            return hg_kerr(err, errlen, "token file %s: path too long", path);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                  0600);
        if (fd < 0 && errno != EEXIST)
            return hg_kerr(err, errlen, "token file %s: creating %s: %s", path,
                           tmp, strerror(errno));
    }
    if (fd < 0)
        return hg_kerr(err, errlen, "token file %s: no free temporary name",
                       path);
    char line[HG_STORE_TOKEN_LEN + 1];
    memcpy(line, token, HG_STORE_TOKEN_LEN);
    line[HG_STORE_TOKEN_LEN] = '\n';
    size_t off = 0;
    while (off < sizeof line) {
        ssize_t n = write(fd, line + off, sizeof line - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            hg_kerr(err, errlen, "token file %s: writing %s: %s", path, tmp,
                    n < 0 ? strerror(errno) : "short write");
            goto fail;
        }
        off += (size_t)n;
    }
    if (fsync(fd) != 0) {
        hg_kerr(err, errlen, "token file %s: fsync %s: %s", path, tmp,
                strerror(errno));
        goto fail;
    }
    if (close(fd) != 0) {
        fd = -1;
        hg_kerr(err, errlen, "token file %s: close %s: %s", path, tmp,
                strerror(errno));
        goto fail;
    }
    fd = -1;
    if (rename(tmp, path) != 0) {
        hg_kerr(err, errlen, "token file %s: rename from %s: %s", path, tmp,
                strerror(errno));
        goto fail;
    }
    return 0;
fail:
    if (fd >= 0)
        close(fd);
    unlink(tmp);
    return -1;
}

/* ---------------------------------------------------------------- server */

struct entry {
    struct entry *next;
    uint64_t hash;
    uint32_t klen;
    uint32_t vlen;
    unsigned char *val;
    unsigned char key[]; /* (klen) */
};

struct conn {
    int fd;
    int authed, rank;
    int closing;   /* close once wbuf is flushed (or at deadline) */
    double deadline; /* unauthenticated or closing: dropped after this */
    char peer[80];
    unsigned char *rbuf; /* (rcap) */
    size_t rlen, rcap;
    unsigned char *wbuf; /* (wcap), unsent bytes at [woff, wlen) */
    size_t woff, wlen, wcap;
    int waiting;                            /* a GET is parked */
    unsigned char wkey[HG_STORE_MAX_KEY];   /* (wklen) its key */
    uint32_t wklen;
};

struct hg_store_server {
    int lfd;
    int wake[2]; /* self-pipe: stop writes a byte */
    pthread_t thread;
    atomic_int stop;
    int port, world;
    char token[HG_STORE_TOKEN_LEN + 1];
    struct conn **conns;
    int nconn, maxconn;
    struct entry **buckets;
    size_t nbuckets, nkeys, bytes;
    int woke; /* a parked GET was answered in this pass */
    char *failed; /* the first ABORT's message (NUL-terminated), or NULL */
    atomic_ulong rejected;
};

static uint64_t hash_key(const unsigned char *k, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ k[i]) * 1099511628211ull;
    return h;
}

static struct entry *lookup(struct hg_store_server *s, const unsigned char *k,
                            uint32_t klen)
{
    uint64_t h = hash_key(k, klen);
    for (struct entry *e = s->buckets[h % s->nbuckets]; e; e = e->next)
        if (e->hash == h && e->klen == klen && memcmp(e->key, k, klen) == 0)
            return e;
    return NULL;
}

static void grow_table(struct hg_store_server *s)
{
    size_t nb = s->nbuckets * 4;
    struct entry **b = calloc(nb, sizeof *b);
    if (!b)
        return; /* longer chains, still correct */
    for (size_t i = 0; i < s->nbuckets; i++)
        for (struct entry *e = s->buckets[i], *next; e; e = next) {
            next = e->next;
            e->next = b[e->hash % nb];
            b[e->hash % nb] = e;
        }
    free(s->buckets);
    s->buckets = b;
    s->nbuckets = nb;
}

/* Sets key to a copy of val; NULL with a reason when it does not fit. */
static struct entry *put(struct hg_store_server *s, const unsigned char *k,
                         uint32_t klen, const unsigned char *val, uint32_t vlen,
                         const char **why)
{
    struct entry *e = lookup(s, k, klen);
    size_t old = e ? e->vlen : 0;
    size_t add = vlen + (e ? 0 : klen + STORE_ENTRY_OVERHEAD);
    if (s->bytes - old + add > STORE_MAX_BYTES) {
        *why = "the store is full";
        return NULL;
    }
    unsigned char *copy = malloc(vlen ? vlen : 1);
    if (!copy) {
        *why = "out of memory";
        return NULL;
    }
    memcpy(copy, val, vlen);
    if (!e) {
        e = malloc(sizeof *e + klen);
        if (!e) {
            free(copy);
            *why = "out of memory";
            return NULL;
        }
        e->hash = hash_key(k, klen);
        e->klen = klen;
        memcpy(e->key, k, klen);
        e->next = s->buckets[e->hash % s->nbuckets];
        s->buckets[e->hash % s->nbuckets] = e;
        e->val = NULL;
        e->vlen = 0;
        if (++s->nkeys > 2 * s->nbuckets)
            grow_table(s);
    }
    free(e->val);
    e->val = copy;
    e->vlen = vlen;
    s->bytes = s->bytes - old + add;
    return e;
}

static void reject_log(struct hg_store_server *s, const struct conn *c,
                       const char *why)
{
    unsigned long n = atomic_fetch_add(&s->rejected, 1) + 1;
    char who[32] = "before hello";
    if (c->authed || c->rank != -2)
        snprintf(who, sizeof who, "rank %d", c->rank);
    if (n <= STORE_LOG_FIRST)
        fprintf(stderr, "hg store: closed connection from %s (%s): %s\n",
                c->peer, who, why);
    else if (n % STORE_LOG_EVERY == 0)
        fprintf(stderr, "hg store: %lu connections closed for protocol or "
                        "token errors so far (latest from %s: %s)\n",
                n, c->peer, why);
}

static void conn_drop(struct conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}

static void conn_free(struct conn *c)
{
    conn_drop(c);
    free(c->rbuf);
    free(c->wbuf);
    free(c);
}

static void conn_flush(struct conn *c)
{
    while (c->fd >= 0 && c->woff < c->wlen) {
        ssize_t n = send(c->fd, c->wbuf + c->woff, c->wlen - c->woff,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n <= 0) {
            conn_drop(c); /* the client went away: nothing to tell anyone */
            return;
        }
        c->woff += (size_t)n;
    }
    if (c->woff == c->wlen)
        c->woff = c->wlen = 0;
    if (c->fd >= 0 && c->closing && c->wlen == 0)
        conn_drop(c);
}

/* Queues one reply frame and tries to send it at once. */
static void reply(struct hg_store_server *s, struct conn *c,
                  enum hg_store_op op, const void *val, uint32_t vlen)
{
    size_t need = c->wlen + HG_STORE_HDR_LEN + vlen;
    if (need - c->woff > STORE_MAX_OUT) {
        /* it sends requests without reading the replies */
        reject_log(s, c, "too many unread replies");
        conn_drop(c);
        return;
    }
    if (need > c->wcap) {
        if (c->woff > 0) {
            memmove(c->wbuf, c->wbuf + c->woff, c->wlen - c->woff);
            c->wlen -= c->woff;
            c->woff = 0;
            need = c->wlen + HG_STORE_HDR_LEN + vlen;
        }
        size_t cap = c->wcap ? c->wcap : 256;
        while (cap < need)
            cap *= 2;
        unsigned char *b = realloc(c->wbuf, cap);
        if (!b) {
            conn_drop(c);
            return;
        }
        c->wbuf = b;
        c->wcap = cap;
    }
    hg_store_put_header(c->wbuf + c->wlen, op, 0, vlen);
    if (vlen)
        memcpy(c->wbuf + c->wlen + HG_STORE_HDR_LEN, val, vlen);
    c->wlen += HG_STORE_HDR_LEN + vlen;
    conn_flush(c);
}

static void reply_err(struct hg_store_server *s, struct conn *c,
                      const char *msg)
{
    reply(s, c, HG_STORE_ERR, msg, (uint32_t)strlen(msg));
}

/* Answers the GETs parked on e's key. */
static void wake_waiters(struct hg_store_server *s, const struct entry *e)
{
    for (int i = 0; i < s->nconn; i++) {
        struct conn *w = s->conns[i];
        if (w->fd >= 0 && w->waiting && w->wklen == e->klen &&
            memcmp(w->wkey, e->key, e->klen) == 0) {
            w->waiting = 0;
            reply(s, w, HG_STORE_VALUE, e->val, e->vlen);
            s->woke = 1; /* its later frames can go on now */
        }
    }
}

/* "the job failed: " + the ABORT's message, to a GET that cannot wait */
static void reply_failed(struct hg_store_server *s, struct conn *c)
{
    char msg[sizeof HG_STORE_FAILED + HG_STORE_ABORT_MAX];
    snprintf(msg, sizeof msg, "%s%s", HG_STORE_FAILED, s->failed);
    reply_err(s, c, msg);
}

/* ABORT: keep the first message, fail the parked GETs. */
static void job_failed(struct hg_store_server *s, struct conn *c,
                       const unsigned char *val, uint32_t vlen)
{
    if (!s->failed) {
        char *m = malloc((size_t)vlen + 1);
        if (!m) {
            reply_err(s, c, "out of memory");
            return;
        }
        for (uint32_t i = 0; i < vlen; i++) /* it is printed by every rank */
            m[i] = val[i] < 32 || val[i] > 126 ? '?' : (char)val[i];
        m[vlen] = '\0';
        const char *why = NULL;
        put(s, (const unsigned char *)HG_STORE_ABORT_KEY, sizeof HG_STORE_ABORT_KEY - 1,
            (const unsigned char *)m, vlen, &why);
        s->failed = m;
        for (int i = 0; i < s->nconn; i++) {
            struct conn *w = s->conns[i];
            if (w->fd >= 0 && w->waiting) {
                w->waiting = 0;
                reply_failed(s, w);
                s->woke = 1;
            }
        }
    }
    reply(s, c, HG_STORE_OK, NULL, 0);
}

static void handle_frame(struct hg_store_server *s, struct conn *c,
                         const struct hg_store_hdr *h, const unsigned char *key,
                         const unsigned char *val)
{
    if (!c->authed) {
        if (h->op != HG_STORE_HELLO) {
            reject_log(s, c, "first frame is not a hello");
            conn_drop(c);
            return;
        }
        int32_t rank = (int32_t)get_u32(val);
        if (!hg_store_token_equal((const char *)key, s->token)) {
            reject_log(s, c, "wrong job token");
            reply_err(s, c, "wrong job token");
            c->closing = 1;
            c->deadline = hg_now() + 1.0;
            conn_flush(c);
            return;
        }
        if (rank < -1 || rank >= s->world) {
            c->rank = rank;
            reject_log(s, c, "rank outside -1..world-1");
            reply_err(s, c, "rank outside -1..world-1");
            c->closing = 1;
            c->deadline = hg_now() + 1.0;
            conn_flush(c);
            return;
        }
        c->authed = 1;
        c->rank = rank;
        reply(s, c, HG_STORE_OK, NULL, 0);
        return;
    }
    const char *why = NULL;
    struct entry *e;
    switch (h->op) {
    case HG_STORE_SET:
        e = put(s, key, h->klen, val, h->vlen, &why);
        if (!e) {
            reply_err(s, c, why);
            return;
        }
        reply(s, c, HG_STORE_OK, NULL, 0);
        wake_waiters(s, e);
        return;
    case HG_STORE_GET:
        e = lookup(s, key, h->klen);
        if (e) {
            reply(s, c, HG_STORE_VALUE, e->val, e->vlen);
        } else if (s->failed) {
            reply_failed(s, c); /* nobody will set it now */
        } else {
            c->waiting = 1;
            memcpy(c->wkey, key, h->klen);
            c->wklen = h->klen;
        }
        return;
    case HG_STORE_CHECK: {
        unsigned char yes = lookup(s, key, h->klen) != NULL ||
                            (s->failed && h->klen == sizeof HG_STORE_ABORT_KEY - 1 &&
                             memcmp(key, HG_STORE_ABORT_KEY, h->klen) == 0);
        reply(s, c, HG_STORE_VALUE, &yes, 1);
        return;
    }
    case HG_STORE_CLAIM: {
        e = lookup(s, key, h->klen);
        if (e) { /* held: say by whom */
            unsigned char *b = malloc((size_t)e->vlen + 1);
            if (!b) {
                reply_err(s, c, "out of memory");
                return;
            }
            b[0] = 1;
            memcpy(b + 1, e->val, e->vlen);
            reply(s, c, HG_STORE_VALUE, b, e->vlen + 1);
            free(b);
            return;
        }
        e = put(s, key, h->klen, val, h->vlen, &why);
        if (!e) {
            reply_err(s, c, why);
            return;
        }
        unsigned char zero = 0;
        reply(s, c, HG_STORE_VALUE, &zero, 1);
        wake_waiters(s, e);
        return;
    }
    case HG_STORE_ABORT:
        job_failed(s, c, val, h->vlen);
        return;
    case HG_STORE_ADD: {
        int64_t cur = 0, delta = get_i64(val);
        e = lookup(s, key, h->klen);
        if (e && e->vlen != 8) {
            reply_err(s, c, "the key holds a value that is not a counter");
            return;
        }
        if (e)
            cur = get_i64(e->val);
        if ((delta > 0 && cur > INT64_MAX - delta) ||
            (delta < 0 && cur < INT64_MIN - delta)) {
            reply_err(s, c, "the counter would overflow");
            return;
        }
        unsigned char b[8];
        put_i64(b, cur + delta);
        e = put(s, key, h->klen, b, 8, &why);
        if (!e) {
            reply_err(s, c, why);
            return;
        }
        reply(s, c, HG_STORE_VALUE, b, 8);
        wake_waiters(s, e);
        return;
    }
    default:
        reject_log(s, c, h->op == HG_STORE_HELLO ? "a second hello"
                                                 : "not a request");
        conn_drop(c);
        return;
    }
}

/* Handles every complete frame in c's read buffer, until a GET parks. */
static void conn_process(struct hg_store_server *s, struct conn *c)
{
    size_t off = 0;
    while (c->fd >= 0 && !c->closing && !c->waiting) {
        struct hg_store_hdr h;
        char why[128];
        int r = hg_store_parse_header(c->rbuf + off, c->rlen - off, &h, why,
                                      sizeof why);
        if (r == 0)
            break;
        if (r < 0) {
            reject_log(s, c, why);
            conn_drop(c);
            break;
        }
        size_t need = HG_STORE_HDR_LEN + (size_t)h.klen + h.vlen;
        if (c->rlen - off < need) {
            if (need > c->rcap) { /* lengths checked: at most ~1 MiB */
                memmove(c->rbuf, c->rbuf + off, c->rlen - off);
                c->rlen -= off;
                off = 0;
                unsigned char *b = realloc(c->rbuf, need);
                if (!b) {
                    conn_drop(c);
                    break;
                }
                c->rbuf = b;
                c->rcap = need;
            }
            break;
        }
        const unsigned char *key = c->rbuf + off + HG_STORE_HDR_LEN;
        handle_frame(s, c, &h, key, key + h.klen);
        off += need;
    }
    if (off > 0 && c->fd >= 0) {
        memmove(c->rbuf, c->rbuf + off, c->rlen - off);
        c->rlen -= off;
    }
}

static void conn_read(struct hg_store_server *s, struct conn *c)
{
    while (c->fd >= 0 && c->rlen < c->rcap) {
        ssize_t n = recv(c->fd, c->rbuf + c->rlen, c->rcap - c->rlen,
                         MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (n <= 0) {
            if (!c->authed && c->rlen > 0)
                reject_log(s, c, "closed before a complete hello");
            conn_drop(c); /* an orderly exit, or a reset: either way gone */
            return;
        }
        c->rlen += (size_t)n;
        conn_process(s, c);
    }
}

static void describe_peer(const struct sockaddr_storage *ss, socklen_t len,
                          char *out, size_t cap)
{
    char host[64], port[16];
    if (getnameinfo((const struct sockaddr *)ss, len, host, sizeof host, port,
                    sizeof port, NI_NUMERICHOST | NI_NUMERICSERV) != 0)
        snprintf(out, cap, "?");
    else
        snprintf(out, cap, "%s:%s", host, port);
}

static void accept_all(struct hg_store_server *s)
{
    for (;;) {
        struct sockaddr_storage ss;
        socklen_t len = sizeof ss;
        int fd = accept4(s->lfd, (struct sockaddr *)&ss, &len,
                         SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            return; /* EAGAIN, or EMFILE & co: try again on the next wake */
        }
        char peer[80];
        describe_peer(&ss, len, peer, sizeof peer);
        if (s->nconn >= s->maxconn) {
            unsigned long n = atomic_fetch_add(&s->rejected, 1) + 1;
            if (n <= STORE_LOG_FIRST || n % STORE_LOG_EVERY == 0)
                fprintf(stderr, "hg store: refused a connection from %s: "
                                "already %d connections\n", peer, s->nconn);
            close(fd);
            continue;
        }
        struct conn *c = calloc(1, sizeof *c);
        if (c)
            c->rbuf = malloc(4096);
        if (!c || !c->rbuf) {
            if (c)
                free(c);
            close(fd);
            continue;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        c->fd = fd;
        c->rcap = 4096;
        c->rank = -2; /* unknown until hello */
        c->deadline = hg_now() + STORE_HELLO_S;
        snprintf(c->peer, sizeof c->peer, "%s", peer);
        s->conns[s->nconn++] = c;
    }
}

static void *server_main(void *arg)
{
    struct hg_store_server *s = arg;
    struct pollfd *pf = malloc(((size_t)s->maxconn + 2) * sizeof *pf);
    if (!pf) {
        fprintf(stderr, "hg store: out of memory: the server stops\n");
        return NULL;
    }
    while (!atomic_load(&s->stop)) {
        double now = hg_now(), next = now + 1.0;
        pf[0] = (struct pollfd){.fd = s->wake[0], .events = POLLIN};
        pf[1] = (struct pollfd){.fd = s->lfd, .events = POLLIN};
        for (int i = 0; i < s->nconn; i++) {
            struct conn *c = s->conns[i];
            short ev = POLLRDHUP;
            if (c->rlen < c->rcap && !c->closing)
                ev |= POLLIN;
            if (c->woff < c->wlen)
                ev |= POLLOUT;
            pf[i + 2] = (struct pollfd){.fd = c->fd, .events = ev};
            if ((!c->authed || c->closing) && c->deadline < next)
                next = c->deadline;
        }
        int n = poll(pf, (nfds_t)s->nconn + 2, ms_left(next));
        if (n < 0 && errno != EINTR) {
            fprintf(stderr, "hg store: poll: %s: the server stops\n",
                    strerror(errno));
            break;
        }
        if (n > 0 && (pf[0].revents & POLLIN)) {
            char b[16];
            while (read(s->wake[0], b, sizeof b) > 0) {
            }
        }
        int nold = s->nconn; /* accept_all appends after these */
        if (n > 0 && (pf[1].revents & POLLIN))
            accept_all(s);
        now = hg_now();
        for (int i = 0; n > 0 && i < nold; i++) {
            struct conn *c = s->conns[i];
            short re = pf[i + 2].revents;
            if (c->fd < 0 || re == 0)
                continue;
            if (re & POLLOUT)
                conn_flush(c);
            if (c->fd >= 0 && (re & (POLLIN | POLLERR | POLLHUP)))
                conn_read(s, c);
            /* a parked client whose buffer is full still tells us it left */
            if (c->fd >= 0 && (re & (POLLRDHUP | POLLHUP | POLLERR)) &&
                !(pf[i + 2].events & POLLIN))
                conn_drop(c);
        }
        /* answered GETs let their connections' later frames go on */
        while (s->woke) {
            s->woke = 0;
            for (int i = 0; i < s->nconn; i++)
                if (s->conns[i]->fd >= 0 && !s->conns[i]->waiting)
                    conn_process(s, s->conns[i]);
        }
        for (int i = 0; i < s->nconn; i++) {
            struct conn *c = s->conns[i];
            if (c->fd >= 0 && (!c->authed || c->closing) && c->deadline <= now) {
                if (!c->closing)
                    reject_log(s, c, "no hello in time");
                conn_drop(c);
            }
        }
        int kept = 0;
        for (int i = 0; i < s->nconn; i++) {
            if (s->conns[i]->fd < 0)
                conn_free(s->conns[i]);
            else
                s->conns[kept++] = s->conns[i];
        }
        s->nconn = kept;
    }
    free(pf);
    return NULL;
}

static void server_free(struct hg_store_server *s)
{
    for (int i = 0; i < s->nconn; i++)
        conn_free(s->conns[i]);
    free(s->conns);
    if (s->buckets)
        for (size_t i = 0; i < s->nbuckets; i++)
            for (struct entry *e = s->buckets[i], *next; e; e = next) {
                next = e->next;
                free(e->val);
                free(e);
            }
    free(s->buckets);
    free(s->failed);
    if (s->lfd >= 0)
        close(s->lfd);
    if (s->wake[0] >= 0)
        close(s->wake[0]);
    if (s->wake[1] >= 0)
        close(s->wake[1]);
    free(s);
}

int hg_store_loopback_only(const char *host)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *ai = NULL;
    if (!host || !host[0] || getaddrinfo(host, NULL, &hints, &ai) != 0)
        return 0;
    int all = ai != NULL;
    for (struct addrinfo *a = ai; a; a = a->ai_next) {
        if (a->ai_family == AF_INET) {
            const struct sockaddr_in *v4 = (const void *)a->ai_addr;
            all &= (ntohl(v4->sin_addr.s_addr) >> 24) == 127;
        } else if (a->ai_family == AF_INET6) {
            const struct sockaddr_in6 *v6 = (const void *)a->ai_addr;
            all &= IN6_IS_ADDR_LOOPBACK(&v6->sin6_addr);
        } else {
            all = 0;
        }
    }
    freeaddrinfo(ai);
    return all;
}

int hg_store_server_start(struct hg_store_server **sp, const char *host,
                          int port, const char *token, int world, char *err,
                          size_t errlen)
{
    *sp = NULL;
    const char *shown = host && *host ? host : "*";
    if (!token || !is_token(token, strlen(token)))
        return hg_kerr(err, errlen, "store %s:%d: the job token is not %d hex "
                       "characters", shown, port, HG_STORE_TOKEN_LEN);
    if (world < 1 || world > (INT_MAX - 16) / 4)
        return hg_kerr(err, errlen, "store %s:%d: world %d is not positive",
                       shown, port, world);
    if (port < 0 || port > 65535)
        return hg_kerr(err, errlen, "store %s:%d: port outside 0..65535",
                       shown, port);
    struct hg_store_server *s = calloc(1, sizeof *s);
    if (!s)
        return hg_kerr(err, errlen, "store: out of memory");
    s->lfd = s->wake[0] = s->wake[1] = -1;
    s->world = world;
    s->maxconn = 4 * world + 16;
    memcpy(s->token, token, HG_STORE_TOKEN_LEN + 1);
    atomic_init(&s->stop, 0);
    atomic_init(&s->rejected, 0);
    s->nbuckets = 256;
    s->buckets = calloc(s->nbuckets, sizeof *s->buckets);
    s->conns = calloc((size_t)s->maxconn, sizeof *s->conns);
    if (!s->buckets || !s->conns) {
        server_free(s);
        return hg_kerr(err, errlen, "store: out of memory");
    }
    if (pipe2(s->wake, O_NONBLOCK | O_CLOEXEC) != 0) {
        int e = errno;
        s->wake[0] = s->wake[1] = -1;
        server_free(s);
        return hg_kerr(err, errlen, "store: pipe: %s", strerror(e));
    }

    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *ai = NULL;
    char ports[16];
    snprintf(ports, sizeof ports, "%d", port);
    int g = getaddrinfo(host && *host ? host : NULL, ports, &hints, &ai);
    if (g != 0) {
        server_free(s);
        return hg_kerr(err, errlen, "store %s:%d: %s", shown, port,
                       gai_strerror(g));
    }
    int e = 0;
    for (struct addrinfo *a = ai; a && s->lfd < 0; a = a->ai_next) {
        int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                        a->ai_protocol);
        if (fd < 0) {
            e = errno;
            continue;
        }
        int one = 1; /* a restarted job may reuse the port at once */
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 || listen(fd, SOMAXCONN) != 0) {
            e = errno;
            close(fd);
            continue;
        }
        s->lfd = fd;
    }
    freeaddrinfo(ai);
    if (s->lfd < 0) {
        server_free(s);
        return hg_kerr(err, errlen, "store %s:%d: cannot listen: %s", shown,
                       port, strerror(e));
    }
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (getsockname(s->lfd, (struct sockaddr *)&ss, &len) != 0) {
        e = errno;
        server_free(s);
        return hg_kerr(err, errlen, "store %s:%d: getsockname: %s", shown, port,
                       strerror(e));
    }
    s->port = ss.ss_family == AF_INET6
                  ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                  : ntohs(((struct sockaddr_in *)&ss)->sin_port);
    e = pthread_create(&s->thread, NULL, server_main, s);
    if (e != 0) {
        server_free(s);
        return hg_kerr(err, errlen, "store %s:%d: starting the thread: %s",
                       shown, port, strerror(e));
    }
    *sp = s;
    return 0;
}

int hg_store_server_port(const struct hg_store_server *s) { return s->port; }

unsigned long hg_store_server_rejected(const struct hg_store_server *s)
{
    return atomic_load(&((struct hg_store_server *)s)->rejected);
}

void hg_store_server_stop(struct hg_store_server *s)
{
    if (!s)
        return;
    atomic_store(&s->stop, 1);
    char b = 1;
    while (write(s->wake[1], &b, 1) < 0 && errno == EINTR) {
    }
    pthread_join(s->thread, NULL);
    server_free(s);
}

/* ---------------------------------------------------------------- client */

struct hg_store {
    int fd; /* -1: reconnect before the next request */
    int timed_out; /* the last failure was a deadline */
    int port, rank;
    double timeout_s;
    char host[256];
    char token[HG_STORE_TOKEN_LEN + 1];
};

const char *hg_store_token_of(const struct hg_store *st) { return st->token; }
int hg_store_rank_of(const struct hg_store *st) { return st->rank; }

#define WHO_FMT "store %s:%d: rank %d"
#define WHO(st) (st)->host, (st)->port, (st)->rank

static void drop(struct hg_store *st)
{
    if (st->fd >= 0)
        close(st->fd);
    st->fd = -1;
}

/* Sends all of b before deadline; `what` names the request in messages. */
static int send_all(struct hg_store *st, const void *bv, size_t len,
                    double deadline, const char *what, char *err, size_t errlen)
{
    const unsigned char *b = bv;
    while (len > 0) {
        ssize_t n = send(st->fd, b, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            b += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
            hg_kerr(err, errlen, WHO_FMT ": %s: %s", WHO(st), what,
                    errno == EPIPE || errno == ECONNRESET
                        ? "the server closed the connection"
                        : strerror(errno));
            drop(st);
            return -1;
        }
        struct pollfd p = {.fd = st->fd, .events = POLLOUT};
        int r = poll(&p, 1, ms_left(deadline));
        if (r < 0 && errno != EINTR) {
            hg_kerr(err, errlen, WHO_FMT ": %s: poll: %s", WHO(st), what,
                    strerror(errno));
            drop(st);
            return -1;
        }
        if (r == 0) {
            hg_kerr(err, errlen, WHO_FMT ": %s: could not send within %g s",
                    WHO(st), what, st->timeout_s);
            drop(st);
            st->timed_out = 1;
            return -1;
        }
    }
    return 0;
}

/* Receives exactly len bytes before deadline (b NULL: discards them). */
static int recv_all(struct hg_store *st, void *bv, size_t len, double deadline,
                    const char *what, char *err, size_t errlen)
{
    unsigned char *b = bv, sink[4096];
    while (len > 0) {
        size_t want = b ? len : (len < sizeof sink ? len : sizeof sink);
        ssize_t n = recv(st->fd, b ? b : sink, want, MSG_DONTWAIT);
        if (n > 0) {
            if (b)
                b += n;
            len -= (size_t)n;
            continue;
        }
        if (n == 0) {
            hg_kerr(err, errlen, WHO_FMT ": %s: the server closed the connection",
                    WHO(st), what);
            drop(st);
            return -1;
        }
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            hg_kerr(err, errlen, WHO_FMT ": %s: %s", WHO(st), what,
                    errno == ECONNRESET ? "the server closed the connection"
                                        : strerror(errno));
            drop(st);
            return -1;
        }
        struct pollfd p = {.fd = st->fd, .events = POLLIN};
        int r = poll(&p, 1, ms_left(deadline));
        if (r < 0 && errno != EINTR) {
            hg_kerr(err, errlen, WHO_FMT ": %s: poll: %s", WHO(st), what,
                    strerror(errno));
            drop(st);
            return -1;
        }
        if (r == 0) {
            hg_kerr(err, errlen, WHO_FMT ": %s: no answer within %g s", WHO(st),
                    what, st->timeout_s);
            drop(st);
            st->timed_out = 1;
            return -1;
        }
    }
    return 0;
}

/* One request and its reply header; the reply's value is left to read
 * (h->vlen bytes).  An ERR reply is read and turned into a message. */
static int request(struct hg_store *st, enum hg_store_op op, const void *key,
                   size_t klen, const void *val, size_t vlen, double deadline,
                   struct hg_store_hdr *h, const char *what, char *err,
                   size_t errlen)
{
    unsigned char hdr[HG_STORE_HDR_LEN];
    st->timed_out = 0;
    hg_store_put_header(hdr, op, (uint32_t)klen, (uint32_t)vlen);
    if (send_all(st, hdr, sizeof hdr, deadline, what, err, errlen) != 0 ||
        send_all(st, key, klen, deadline, what, err, errlen) != 0 ||
        send_all(st, val, vlen, deadline, what, err, errlen) != 0 ||
        recv_all(st, hdr, sizeof hdr, deadline, what, err, errlen) != 0)
        return -1;
    char why[128];
    if (hg_store_parse_header(hdr, sizeof hdr, h, why, sizeof why) < 0 ||
        h->op < HG_STORE_OK) {
        hg_kerr(err, errlen, WHO_FMT ": %s: bad reply from the server (%s)",
                WHO(st), what, h->op < HG_STORE_OK ? "a request" : why);
        drop(st);
        return -1;
    }
    if (h->op == HG_STORE_ERR) {
        char msg[256];
        size_t keep = h->vlen < sizeof msg ? h->vlen : sizeof msg - 1;
        if (recv_all(st, msg, keep, deadline, what, err, errlen) != 0 ||
            recv_all(st, NULL, h->vlen - keep, deadline, what, err, errlen) != 0)
            return -1;
        msg[keep] = '\0';
        for (size_t i = 0; i < keep; i++) /* it came off the wire */
            if ((unsigned char)msg[i] < 32 || (unsigned char)msg[i] > 126)
                msg[i] = '?';
        if (strncmp(msg, HG_STORE_FAILED, sizeof HG_STORE_FAILED - 1) == 0)
            return hg_kerr(err, errlen, WHO_FMT ": %s: %s", WHO(st), what, msg);
        return hg_kerr(err, errlen, WHO_FMT ": %s: refused by the server: %s",
                       WHO(st), what, msg);
    }
    return 0;
}

/* One hello on a fresh connection: 0; -1 with the handle dropped and
 * *refused set when the server said no (a wrong token: no retry). */
static int say_hello(struct hg_store *st, double deadline, int *refused,
                     char *err, size_t errlen)
{
    unsigned char rank[4];
    put_u32(rank, (uint32_t)st->rank);
    struct hg_store_hdr h;
    *refused = 0;
    if (request(st, HG_STORE_HELLO, st->token, HG_STORE_TOKEN_LEN, rank, 4,
                deadline, &h, "hello", err, errlen) != 0) {
        *refused = st->fd >= 0; /* an ERR reply leaves the stream whole */
        drop(st);
        return -1;
    }
    if (h.op != HG_STORE_OK) {
        drop(st);
        *refused = 1;
        return hg_kerr(err, errlen, WHO_FMT ": hello: unexpected reply %u",
                       WHO(st), (unsigned)h.op);
    }
    return 0;
}

/* Connects and says hello, retrying until deadline: the server may not be
 * up yet, or may be full for a moment (it then closes at once). */
static int store_open(struct hg_store *st, double deadline, char *err,
                      size_t errlen)
{
    char ports[16];
    snprintf(ports, sizeof ports, "%d", st->port);
    char last[320] = "no attempt";
    for (;;) {
        struct addrinfo hints = {.ai_family = AF_UNSPEC,
                                 .ai_socktype = SOCK_STREAM,
                                 .ai_flags = AI_NUMERICSERV};
        struct addrinfo *ai = NULL;
        int g = getaddrinfo(st->host, ports, &hints, &ai);
        if (g != 0)
            snprintf(last, sizeof last, "%s", gai_strerror(g));
        for (struct addrinfo *a = ai; g == 0 && a && st->fd < 0; a = a->ai_next) {
            int fd = socket(a->ai_family,
                            a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                            a->ai_protocol);
            if (fd < 0) {
                snprintf(last, sizeof last, "%s", strerror(errno));
                continue;
            }
            int rc = connect(fd, a->ai_addr, a->ai_addrlen);
            if (rc != 0 && errno == EINPROGRESS) {
                struct pollfd p = {.fd = fd, .events = POLLOUT};
                int soerr = 0;
                socklen_t sl = sizeof soerr;
                if (poll(&p, 1, ms_left(deadline)) == 1 &&
                    getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 &&
                    soerr == 0)
                    rc = 0;
                else
                    errno = soerr ? soerr : ETIMEDOUT;
            }
            if (rc != 0) {
                snprintf(last, sizeof last, "%s", strerror(errno));
                close(fd);
                continue;
            }
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            st->fd = fd;
        }
        if (ai)
            freeaddrinfo(ai);
        if (st->fd >= 0) {
            int refused;
            char why[256];
            if (say_hello(st, deadline, &refused, why, sizeof why) == 0)
                return 0;
            if (refused)
                return hg_kerr(err, errlen, "%s", why);
            snprintf(last, sizeof last, "%s", why);
        }
        double left = deadline - hg_now();
        if (left <= 0)
            return hg_kerr(err, errlen,
                           "store %s:%d: rank %d could not connect within %g s: %s",
                           st->host, st->port, st->rank, st->timeout_s, last);
        /* the last try comes at the deadline */
        double pause = left < STORE_RETRY_S ? left : STORE_RETRY_S;
        struct timespec ts = {0, (long)(pause * 1e9)};
        nanosleep(&ts, NULL);
    }
}

int hg_store_connect(struct hg_store **stp, const char *host, int port,
                     const char *token, int rank, double timeout_s, char *err,
                     size_t errlen)
{
    *stp = NULL;
    const char *h = host && *host ? host : "localhost";
    if (!token || !is_token(token, strlen(token)))
        return hg_kerr(err, errlen, "store %s:%d: rank %d: the job token is not "
                       "%d hex characters", h, port, rank, HG_STORE_TOKEN_LEN);
    if (port < 1 || port > 65535)
        return hg_kerr(err, errlen, "store %s:%d: rank %d: port outside 1..65535",
                       h, port, rank);
    if (!(timeout_s > 0))
        return hg_kerr(err, errlen, "store %s:%d: rank %d: timeout %g s is not "
                       "positive", h, port, rank, timeout_s);
    if (strlen(h) >= sizeof((struct hg_store *)0)->host)
        return hg_kerr(err, errlen, "store: host name too long");
    struct hg_store *st = calloc(1, sizeof *st);
    if (!st)
        return hg_kerr(err, errlen, "store: out of memory");
    st->fd = -1;
    st->port = port;
    st->rank = rank;
    st->timeout_s = timeout_s;
    snprintf(st->host, sizeof st->host, "%s", h);
    memcpy(st->token, token, HG_STORE_TOKEN_LEN + 1);
    if (store_open(st, hg_now() + timeout_s, err, errlen) != 0) {
        free(st);
        return -1;
    }
    *stp = st;
    return 0;
}

void hg_store_close(struct hg_store *st)
{
    if (!st)
        return;
    drop(st);
    /* scrub the secret from the heap before it goes back */
    volatile char *t = st->token;
    for (size_t i = 0; i < sizeof st->token; i++)
        t[i] = 0;
    free(st);
}

/* Checks the key and makes sure the connection is up. */
static int prepare(struct hg_store *st, const char *key, double deadline,
                   const char *what, char *err, size_t errlen)
{
    size_t klen = strlen(key);
    if (klen == 0 || klen > HG_STORE_MAX_KEY)
        return hg_kerr(err, errlen, WHO_FMT ": %s: key of %zu bytes (1..%d)",
                       WHO(st), what, klen, HG_STORE_MAX_KEY);
    if (st->fd < 0)
        return store_open(st, deadline, err, errlen);
    return 0;
}

int hg_store_local_addr(struct hg_store *st, struct sockaddr_storage *ss,
                        socklen_t *sslen, char *err, size_t errlen)
{
    if (st->fd < 0 && store_open(st, hg_now() + st->timeout_s, err, errlen) != 0)
        return -1;
    *sslen = sizeof *ss;
    if (getsockname(st->fd, (struct sockaddr *)ss, sslen) != 0)
        return hg_kerr(err, errlen, WHO_FMT ": getsockname: %s", WHO(st),
                       strerror(errno));
    return 0;
}

int hg_store_set(struct hg_store *st, const char *key, const void *val,
                 size_t len, char *err, size_t errlen)
{
    char what[HG_STORE_MAX_KEY + 32];
    snprintf(what, sizeof what, "set '%.*s'", HG_STORE_MAX_KEY, key);
    double deadline = hg_now() + st->timeout_s;
    if (prepare(st, key, deadline, what, err, errlen) != 0)
        return -1;
    if (len > HG_STORE_MAX_VALUE)
        return hg_kerr(err, errlen, WHO_FMT ": %s: value of %zu bytes (at most %u)",
                       WHO(st), what, len, HG_STORE_MAX_VALUE);
    struct hg_store_hdr h;
    if (request(st, HG_STORE_SET, key, strlen(key), val, len, deadline, &h,
                what, err, errlen) != 0)
        return -1;
    if (h.op != HG_STORE_OK) {
        drop(st);
        return hg_kerr(err, errlen, WHO_FMT ": %s: unexpected reply %u",
                       WHO(st), what, (unsigned)h.op);
    }
    return 0;
}

int hg_store_get(struct hg_store *st, const char *key, void *val, size_t cap,
                 size_t *len, char *err, size_t errlen)
{
    char what[HG_STORE_MAX_KEY + 64];
    snprintf(what, sizeof what, "get '%.*s'", HG_STORE_MAX_KEY, key);
    double deadline = hg_now() + st->timeout_s;
    if (prepare(st, key, deadline, what, err, errlen) != 0)
        return -1;
    struct hg_store_hdr h;
    char inner[512];
    if (request(st, HG_STORE_GET, key, strlen(key), NULL, 0, deadline, &h,
                what, inner, sizeof inner) != 0) {
        /* the usual failure: nobody set the key in time */
        if (st->timed_out)
            return hg_kerr(err, errlen, WHO_FMT ": key '%s' not set within %g s",
                           WHO(st), key, st->timeout_s);
        return hg_kerr(err, errlen, "%s", inner);
    }
    if (h.op != HG_STORE_VALUE) {
        drop(st);
        return hg_kerr(err, errlen, WHO_FMT ": %s: unexpected reply %u",
                       WHO(st), what, (unsigned)h.op);
    }
    size_t keep = h.vlen < cap ? h.vlen : cap;
    if (recv_all(st, val, keep, deadline, what, err, errlen) != 0 ||
        recv_all(st, NULL, h.vlen - keep, deadline, what, err, errlen) != 0)
        return -1;
    if (len)
        *len = h.vlen;
    return 0;
}

/* CHECK: whether key exists now (1/0), or -1. */
static int check_key(struct hg_store *st, const char *key, double deadline,
                 char *err, size_t errlen)
{
    char what[HG_STORE_MAX_KEY + 32];
    snprintf(what, sizeof what, "check '%.*s'", HG_STORE_MAX_KEY, key);
    if (prepare(st, key, deadline, what, err, errlen) != 0)
        return -1;
    struct hg_store_hdr h;
    unsigned char yes = 0;
    if (request(st, HG_STORE_CHECK, key, strlen(key), NULL, 0, deadline, &h,
                what, err, errlen) != 0)
        return -1;
    if (h.op != HG_STORE_VALUE || h.vlen != 1) {
        drop(st);
        return hg_kerr(err, errlen, WHO_FMT ": %s: unexpected reply", WHO(st),
                       what);
    }
    if (recv_all(st, &yes, 1, deadline, what, err, errlen) != 0)
        return -1;
    return yes != 0;
}

int hg_store_add(struct hg_store *st, const char *key, int64_t delta,
                 int64_t *result, char *err, size_t errlen)
{
    char what[HG_STORE_MAX_KEY + 32];
    snprintf(what, sizeof what, "add '%.*s'", HG_STORE_MAX_KEY, key);
    double deadline = hg_now() + st->timeout_s;
    if (prepare(st, key, deadline, what, err, errlen) != 0)
        return -1;
    unsigned char b[8];
    put_i64(b, delta);
    struct hg_store_hdr h;
    if (request(st, HG_STORE_ADD, key, strlen(key), b, 8, deadline, &h, what,
                err, errlen) != 0)
        return -1;
    if (h.op != HG_STORE_VALUE || h.vlen != 8) {
        drop(st);
        return hg_kerr(err, errlen, WHO_FMT ": %s: unexpected reply", WHO(st),
                       what);
    }
    if (recv_all(st, b, 8, deadline, what, err, errlen) != 0)
        return -1;
    if (result)
        *result = get_i64(b);
    return 0;
}

int hg_store_claim(struct hg_store *st, const char *key, const char *val,
                   char *holder, size_t cap, char *err, size_t errlen)
{
    char what[HG_STORE_MAX_KEY + 32];
    snprintf(what, sizeof what, "claim '%.*s'", HG_STORE_MAX_KEY, key);
    double deadline = hg_now() + st->timeout_s;
    if (prepare(st, key, deadline, what, err, errlen) != 0)
        return -1;
    size_t vlen = strlen(val);
    if (vlen >= HG_STORE_MAX_VALUE)
        return hg_kerr(err, errlen, WHO_FMT ": %s: value of %zu bytes (at most %u)",
                       WHO(st), what, vlen, HG_STORE_MAX_VALUE - 1);
    struct hg_store_hdr h;
    if (request(st, HG_STORE_CLAIM, key, strlen(key), val, vlen, deadline, &h,
                what, err, errlen) != 0)
        return -1;
    unsigned char held = 0;
    if (h.op != HG_STORE_VALUE || h.vlen < 1 ||
        recv_all(st, &held, 1, deadline, what, err, errlen) != 0) {
        if (h.op != HG_STORE_VALUE || h.vlen < 1) {
            drop(st);
            return hg_kerr(err, errlen, WHO_FMT ": %s: unexpected reply", WHO(st),
                           what);
        }
        return -1;
    }
    size_t n = h.vlen - 1, keep = cap ? (n < cap - 1 ? n : cap - 1) : 0;
    if (recv_all(st, holder, keep, deadline, what, err, errlen) != 0 ||
        recv_all(st, NULL, n - keep, deadline, what, err, errlen) != 0)
        return -1;
    if (cap) {
        holder[keep] = '\0';
        for (size_t i = 0; i < keep; i++) /* it came off the wire */
            if ((unsigned char)holder[i] < 32 || (unsigned char)holder[i] > 126)
                holder[i] = '?';
    }
    return held != 0;
}

int hg_store_abort(struct hg_store *st, const char *why, char *err, size_t errlen)
{
    double deadline = hg_now() + st->timeout_s;
    if (st->fd < 0 && store_open(st, deadline, err, errlen) != 0)
        return -1;
    size_t n = strlen(why);
    if (n == 0)
        why = "(no reason given)", n = strlen(why);
    if (n > HG_STORE_ABORT_MAX)
        n = HG_STORE_ABORT_MAX;
    struct hg_store_hdr h;
    if (request(st, HG_STORE_ABORT, "", 0, why, n, deadline, &h, "abort", err,
                errlen) != 0)
        return -1;
    if (h.op != HG_STORE_OK) {
        drop(st);
        return hg_kerr(err, errlen, WHO_FMT ": abort: unexpected reply %u", WHO(st),
                       (unsigned)h.op);
    }
    return 0;
}

int hg_store_failed(struct hg_store *st, char *why, size_t cap)
{
    double deadline = hg_now() + (st->timeout_s < 2.0 ? st->timeout_s : 2.0);
    if (check_key(st, HG_STORE_ABORT_KEY, deadline, NULL, 0) != 1)
        return 0; /* not failed, or the store did not say: the caller's timeout */
    char msg[HG_STORE_ABORT_MAX + 1], e[512];
    size_t len = 0;
    if (hg_store_get(st, HG_STORE_ABORT_KEY, msg, sizeof msg - 1, &len, e, sizeof e) == 0) {
        msg[len < sizeof msg ? len : sizeof msg - 1] = '\0';
        snprintf(why, cap, "%s%s", HG_STORE_FAILED, msg);
    } else {
        const char *m = strstr(e, HG_STORE_FAILED); /* the message came as an ERR */
        snprintf(why, cap, "%s", m ? m : HG_STORE_FAILED "(the store lost why)");
    }
    return 1;
}

/* Keys of barrier `name`, round `gen` (a name may be used again: round
 * gen is the gen-th time all world ranks arrive):
 *   barrier/<name>              the counter (ADD)
 *   barrier/<name>/<gen>/<r>    rank r has arrived
 *   barrier/<name>/<gen>/done   set by the last arriver */
int hg_store_barrier(struct hg_store *st, const char *name, int world,
                     char *err, size_t errlen)
{
    if (world < 1)
        return hg_kerr(err, errlen, WHO_FMT ": barrier '%s': world %d",
                       WHO(st), name, world);
    char key[HG_STORE_MAX_KEY + 64];
    if (snprintf(key, sizeof key, "barrier/%s", name) > HG_STORE_MAX_KEY - 32)
        return hg_kerr(err, errlen, WHO_FMT ": barrier name of %zu bytes is "
                       "too long", WHO(st), strlen(name));
    int64_t n;
    if (hg_store_add(st, key, 1, &n, err, errlen) != 0)
        return -1;
    long long gen = (long long)((n - 1) / world);
    snprintf(key, sizeof key, "barrier/%s/%lld/%d", name, gen, st->rank);
    if (hg_store_set(st, key, "1", 1, err, errlen) != 0)
        return -1;
    snprintf(key, sizeof key, "barrier/%s/%lld/done", name, gen);
    if (n % world == 0 && hg_store_set(st, key, "1", 1, err, errlen) != 0)
        return -1;
    char one;
    char inner[512];
    if (hg_store_get(st, key, &one, 1, NULL, inner, sizeof inner) == 0)
        return 0;
    if (!st->timed_out) /* not a timeout: the message says what */
        return hg_kerr(err, errlen, "%s", inner);
    /* a timeout: ask which ranks never arrived, on a fresh connection */
    char missing[256] = "";
    size_t len = 0;
    int nmissing = 0, unknown = 0;
    double deadline = hg_now() + (st->timeout_s < 5.0 ? st->timeout_s : 5.0);
    for (int r = 0; r < world; r++) {
        char rk[HG_STORE_MAX_KEY + 64];
        snprintf(rk, sizeof rk, "barrier/%s/%lld/%d", name, gen, r);
        int yes = check_key(st, rk, deadline, NULL, 0);
        if (yes < 0) {
            unknown = 1;
            break;
        }
        if (yes)
            continue;
        nmissing++;
        if (len + 16 < sizeof missing)
            len += (size_t)snprintf(missing + len, sizeof missing - len, "%s%d",
                                    len ? " " : "", r);
        else if (len + 4 < sizeof missing && missing[len - 1] != '.')
            len += (size_t)snprintf(missing + len, sizeof missing - len, " ...");
    }
    if (unknown)
        return hg_kerr(err, errlen, WHO_FMT ": barrier '%s' timed out after "
                       "%g s (%lld of %d ranks arrived; the store did not "
                       "answer which)", WHO(st), name, st->timeout_s,
                       (long long)(n - gen * world), world);
    return hg_kerr(err, errlen, WHO_FMT ": barrier '%s' timed out after %g s; "
                   "ranks not arrived: %s", WHO(st), name, st->timeout_s,
                   nmissing ? missing : "(none: the last arrived just now)");
}
