/* shm.c - the `shm` backend of hg_comm.h: ranks are processes forked on
 * one machine, sharing one segment created by the parent before fork.
 *
 * Segment layout (offsets from the mapping's start):
 *
 *     struct shm_hdr              barrier counters, one struct shm_slot per rank
 *     stage[world][2][half]       each rank's copy of the current piece
 *     result[2][half]             the reduced piece, chunk r written by rank r
 *     struct shm_mbox[world][world]  point to point: counters, [src][dst]
 *     slot[world][world][2][pslot]   point to point: data, [src][dst]
 *
 * Every collective goes in pieces of at most `half` bytes; successive pieces
 * alternate between the two halves, so a piece can be written while the
 * ranks that are late may still read the piece before it (every piece has a
 * barrier after its writes, so piece k+2 is never written before every rank
 * has finished reading piece k).
 *
 * allreduce, one piece of m elements cut into world chunks:
 *   1. every rank copies its piece into stage[rank] (all but its own chunk,
 *      which only it reads, from its buffer);               barrier
 *   2. rank r sums chunk r over ranks 0..world-1 in order into result;
 *                                                            barrier
 *   3. every rank copies the whole result piece back (all-gather).
 * broadcast: root copies a piece into stage[root]; barrier; the others copy
 * it out.
 * allgather: every rank copies a piece of its buffer into stage[rank];
 * barrier; every rank copies every other rank's piece out.
 * allgatherv: the same, piece k of every block (a short block has none).
 * reduce_scatterv: the whole vector piece by piece as allreduce's step 1,
 * then each rank sums the part of the piece in its own slice, in rank
 * order, straight into its recv (one barrier per piece).  Both publish a
 * digest of their counts in the rank's slot before the first barrier and
 * compare the others' after it: ranks with other counts are named.
 *
 * send/recv never touch the staging area nor the barrier, so they mix with
 * collectives freely.  Each (sender, receiver) pair has its own mailbox: two
 * slots of pslot bytes (pslot = 8 MiB / (2 world^2), between 64 bytes and
 * `half`) and two counters, pieces written (by the sender only) and pieces
 * taken (by the receiver only).  The sender waits for a free slot, copies,
 * records the message's size and publishes; the receiver waits for a piece,
 * checks the size on a message's first piece (a mismatch fails naming both
 * ranks), copies out and frees the slot.  A message that fits in the two
 * slots of an empty mailbox is buffered (send returns before the matching
 * recv); a larger one waits for the receiver, as MPI_Send may: in a ring of
 * large messages even ranks send first and odd ranks receive first.
 * Waits have the same deadline, dead flags and exit check as the barrier.
 *
 * Barrier: a counter and a generation in the segment (sense reversal by
 * generation number), C11 atomics, spin then sched_yield, then sleep on
 * a futex on the word (the generation, a mailbox counter) that the
 * releasing rank wakes: a rank waiting for a slow or stopped peer uses no
 * CPU; it wakes every 10 ms to look at the dead flags, the peers' pids and
 * its deadline.  Each rank records the number of the barrier it last
 * arrived at, so a timeout names the ranks that have not arrived; each rank
 * has a dead flag, set by hg_comm_abort or by a failed collective, that
 * makes every waiting rank fail at once naming it; a rank whose process
 * has exited (and been reaped) is noticed within a millisecond or so.
 *
 * Groups: a segment of their own, laid out as above for the group's
 * world, the parent's staging size.  The members meet in the parent
 * segment's group directory (a spin lock with a deadline, SHM_GDIR
 * entries keyed by the hash of the member list): the first to come takes
 * an entry, creates the segment under a random name (O_EXCL, 0600) and
 * writes the name there; the others read it and map the segment; the
 * last to read gives the entry back.  Every member joins as its index in
 * the list, the group's first barrier says that all have mapped it, and
 * then every member unlinks the name.  So a name exists in /dev/shm only
 * while a group is being made (at most the timeout; a group whose members
 * are all killed in that window leaves it behind).  Messages name the
 * job's ranks (wrank). */
#define _GNU_SOURCE

#include "base/hg_base.h"
#include "comm/comm-impl.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static_assert(ATOMIC_INT_LOCK_FREE == 2,
              "process-shared atomics need lock-free atomic_uint");

#define SHM_MAGIC 0x6867636f6d6d3031ull /* "hgcomm01" */
#define SHM_MIN_BYTES 4096
#define SHM_MAX_WORLD 1024
#define SHM_CHUNK_ALIGN 64 /* elements: chunk boundaries on cache lines */
#define P2P_BUDGET (8u << 20) /* bytes of point-to-point slots, all pairs */

struct shm_slot {
    alignas(64) atomic_uint arrived; /* number of the last barrier entered */
    atomic_int dead;                 /* 0, or 1 + the rank whose failure
                                        stopped this one (itself: aborted) */
    atomic_int joined;
    atomic_int pid;                  /* 0 until joined */
    uint64_t digest[2]; /* a v collective's counts digest, written before
                           barrier b into [b & 1], read by the others right
                           after it (rewritten two barriers later at the
                           earliest, once every reader has moved on) */
};

/* One per (sender, receiver) pair.  Single producer, single consumer: only
 * the sender advances `written`, only the receiver `taken`. */
struct shm_mbox {
    alignas(64) atomic_uint written; /* pieces published by the sender */
    atomic_uint taken;               /* pieces copied out by the receiver */
    uint64_t total[2];               /* per slot: the message's size */
};

/* The group directory: where the members of a group being made find the
 * name of its segment.  An entry is taken by the first member to come
 * (MAKING while it creates the segment, READY once named) and given back
 * when the last member has read the name. */
#define SHM_GDIR 32
enum { GE_FREE, GE_MAKING, GE_READY, GE_FAILED };

struct shm_gent {
    atomic_uint state;
    uint64_t key;  /* hg_comm_group_hash of the members */
    int n;         /* members */
    int attached;  /* members that have the name */
    int maker;     /* the rank that creates the segment */
    char name[64];
};

struct shm_hdr {
    uint64_t magic;
    int world;
    alignas(64) atomic_uint count; /* ranks arrived at the current barrier */
    alignas(64) atomic_uint gen;   /* barriers completed */
    alignas(64) atomic_uint gdir_lock; /* 0, or 1 + the rank holding it */
    struct shm_gent gdir[SHM_GDIR];
    struct shm_slot slots[];       /* (world) */
};

struct hg_comm_shm_group {
    struct shm_hdr *hdr;
    size_t map_bytes;
    size_t data_off; /* stage[0] */
    size_t half;     /* bytes of one piece */
    size_t mbox_off; /* struct shm_mbox [world][world] */
    size_t p2p_off;  /* slot[world][world][2][pslot] */
    size_t pslot;    /* bytes of one point-to-point slot */
    int world;
    double timeout_s;
};

struct shm_comm {
    struct hg_comm base;        /* ops, rank, world */
    struct hg_comm_shm_group g; /* a copy: the handle outlives nothing */
    int rank;
    unsigned nbar;   /* barriers completed by this rank */
    unsigned npiece; /* pieces done: which half the next one uses */
    atomic_int broken; /* set by abort, maybe from another thread */
    const char *tag;   /* "shm", or "shm group" in messages */
    int *wrank;        /* (world) a group's ranks as the job numbers them,
                          for messages; NULL: the job's own handle */
    int owns_map;      /* a group's handle unmaps its segment */
};

static const struct hg_comm_ops shm_ops;

/* A rank as the job numbers it (a group's handle counts from 0). */
static int W(const struct shm_comm *c, int r)
{
    return c->wrank ? c->wrank[r] : r;
}

/* ---------------------------------------------------------------- create */

/* The layout of a segment for `world` ranks with max_bytes of staging per
 * rank, into g (not mapped yet). */
static int layout(struct hg_comm_shm_group *g, int world, size_t max_bytes,
                  double timeout_s, char *err, size_t errlen)
{
    if (world < 1 || world > SHM_MAX_WORLD)
        return hg_kerr(err, errlen, "shm: world %d outside 1..%d", world,
                       SHM_MAX_WORLD);
    if (max_bytes < SHM_MIN_BYTES)
        return hg_kerr(err, errlen, "shm: max_bytes %zu below %d", max_bytes,
                       SHM_MIN_BYTES);
    if (!(timeout_s > 0))
        return hg_kerr(err, errlen, "shm: timeout %g s is not positive",
                       timeout_s);
    size_t half = (max_bytes / 2) & ~(size_t)63;
    size_t hdr = sizeof(struct shm_hdr) + (size_t)world * sizeof(struct shm_slot);
    size_t data_off = (hdr + 4095) & ~(size_t)4095;
    /* the point-to-point part stays below 1 GiB (world <= 1024) */
    if (half > (SIZE_MAX - data_off - ((size_t)1 << 30)) / 2 / ((size_t)world + 1))
        return hg_kerr(err, errlen, "shm: segment size overflows");
    size_t mbox_off = data_off + ((size_t)world + 1) * 2 * half;
    /* point to point: about P2P_BUDGET in all, at most `half` a slot */
    size_t pairs = (size_t)world * (size_t)world;
    size_t pslot = (P2P_BUDGET / (2 * pairs)) & ~(size_t)63;
    if (pslot < 64)
        pslot = 64;
    if (pslot > half)
        pslot = half;
    size_t p2p_off = mbox_off + pairs * sizeof(struct shm_mbox);
    p2p_off = (p2p_off + 4095) & ~(size_t)4095;
    *g = (struct hg_comm_shm_group){.map_bytes = p2p_off + pairs * 2 * pslot,
                                    .data_off = data_off, .half = half,
                                    .mbox_off = mbox_off, .p2p_off = p2p_off,
                                    .pslot = pslot, .world = world,
                                    .timeout_s = timeout_s};
    return 0;
}

/* Creates, reserves, maps and initialises a segment laid out as g, under
 * a fresh random name (O_EXCL, mode 0600), which stays until the caller
 * unlinks it. */
static int map_new(struct hg_comm_shm_group *g, char name[64], char *err,
                   size_t errlen)
{
    int fd = -1;
    for (int attempt = 0; attempt < 16 && fd < 0; attempt++) {
        uint64_t r = 0;
        if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
            r = (uint64_t)time(NULL) * 6364136223846793005ull + (uint64_t)attempt;
        snprintf(name, 64, "/hgcomm.%ld.%016llx", (long)getpid(),
                 (unsigned long long)r);
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd < 0 && errno != EEXIST)
            return hg_kerr(err, errlen, "shm: shm_open %s: %s", name,
                           strerror(errno));
    }
    if (fd < 0)
        return hg_kerr(err, errlen, "shm: shm_open: no free name");
    int rc;
    if (ftruncate(fd, (off_t)g->map_bytes) != 0) {
        rc = hg_kerr(err, errlen, "shm: ftruncate %s to %zu bytes: %s", name,
                     g->map_bytes, strerror(errno));
        goto fail;
    }
    /* reserve the pages now: a full /dev/shm is an error here, not a SIGBUS
     * in the middle of a collective */
    int e = posix_fallocate(fd, 0, (off_t)g->map_bytes);
    if (e != 0) {
        rc = hg_kerr(err, errlen, "shm: reserving %zu bytes for %s: %s",
                     g->map_bytes, name, strerror(e));
        goto fail;
    }
    void *p = mmap(NULL, g->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        rc = hg_kerr(err, errlen, "shm: mmap %zu bytes of %s: %s", g->map_bytes,
                     name, strerror(errno));
        goto fail;
    }
    close(fd);

    struct shm_hdr *h = p; /* ftruncate gave zeros */
    h->world = g->world;
    atomic_init(&h->count, 0);
    atomic_init(&h->gen, 0);
    atomic_init(&h->gdir_lock, 0);
    for (int i = 0; i < SHM_GDIR; i++)
        atomic_init(&h->gdir[i].state, GE_FREE);
    size_t pairs = (size_t)g->world * (size_t)g->world;
    struct shm_mbox *mb = (struct shm_mbox *)((char *)p + g->mbox_off);
    for (size_t i = 0; i < pairs; i++) {
        atomic_init(&mb[i].written, 0);
        atomic_init(&mb[i].taken, 0);
    }
    for (int r = 0; r < g->world; r++) {
        atomic_init(&h->slots[r].arrived, 0);
        atomic_init(&h->slots[r].dead, 0);
        atomic_init(&h->slots[r].joined, 0);
        atomic_init(&h->slots[r].pid, 0);
    }
    /* last: a member that opens the name checks the magic */
    atomic_thread_fence(memory_order_release);
    h->magic = SHM_MAGIC;
    g->hdr = h;
    return 0;
fail:
    close(fd);
    shm_unlink(name);
    return rc;
}

/* Maps the segment another member created under `name`, laid out as g. */
static int map_open(struct hg_comm_shm_group *g, const char *name, char *err,
                    size_t errlen)
{
    int fd = shm_open(name, O_RDWR, 0);
    if (fd < 0)
        return hg_kerr(err, errlen, "shm: shm_open %s: %s", name,
                       strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || (size_t)st.st_size != g->map_bytes) {
        close(fd);
        return hg_kerr(err, errlen, "shm: %s has %lld bytes, not %zu", name,
                       (long long)st.st_size, g->map_bytes);
    }
    void *p = mmap(NULL, g->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return hg_kerr(err, errlen, "shm: mmap %zu bytes of %s: %s",
                       g->map_bytes, name, strerror(errno));
    struct shm_hdr *h = p;
    atomic_thread_fence(memory_order_acquire);
    if (h->magic != SHM_MAGIC || h->world != g->world) {
        munmap(p, g->map_bytes);
        return hg_kerr(err, errlen, "shm: %s is not a segment of %d ranks",
                       name, g->world);
    }
    g->hdr = h;
    return 0;
}

int hg_comm_shm_create(struct hg_comm_shm_group **gp, int world,
                       size_t max_bytes, double timeout_s, char *err,
                       size_t errlen)
{
    *gp = NULL;
    struct hg_comm_shm_group t;
    char name[64];
    if (layout(&t, world, max_bytes, timeout_s, err, errlen) != 0 ||
        map_new(&t, name, err, errlen) != 0)
        return -1;
    shm_unlink(name); /* the mapping lives on, and across fork */
    struct hg_comm_shm_group *g = malloc(sizeof *g);
    if (!g) {
        munmap(t.hdr, t.map_bytes);
        return hg_kerr(err, errlen, "shm: out of memory");
    }
    *g = t;
    *gp = g;
    return 0;
}

void hg_comm_shm_group_free(struct hg_comm_shm_group *g)
{
    if (!g)
        return;
    munmap(g->hdr, g->map_bytes);
    free(g);
}

/* Becomes `rank` of the segment g: a handle over it. */
static int join(struct shm_comm **cp, const struct hg_comm_shm_group *g,
                int rank, char *err, size_t errlen)
{
    *cp = NULL;
    if (!g || g->hdr->magic != SHM_MAGIC)
        return hg_kerr(err, errlen, "shm: join: not a shm group");
    if (rank < 0 || rank >= g->world)
        return hg_kerr(err, errlen, "shm: join: rank %d outside 0..%d", rank,
                       g->world - 1);
    struct shm_slot *s = &g->hdr->slots[rank];
    if (atomic_exchange(&s->joined, 1) != 0)
        return hg_kerr(err, errlen, "shm: join: rank %d joined twice", rank);
    atomic_store(&s->pid, (int)getpid());
    struct shm_comm *c = calloc(1, sizeof *c);
    if (!c)
        return hg_kerr(err, errlen, "shm: rank %d: out of memory", rank);
    c->base = (struct hg_comm){.ops = &shm_ops, .rank = rank, .world = g->world};
    c->g = *g;
    c->rank = rank;
    c->tag = "shm";
    *cp = c;
    return 0;
}

int hg_comm_shm_join(struct hg_comm **cp, struct hg_comm_shm_group *g, int rank,
                     char *err, size_t errlen)
{
    struct shm_comm *c;
    *cp = NULL;
    if (join(&c, g, rank, err, errlen) != 0)
        return -1;
    *cp = &c->base;
    return 0;
}

static void futex_wake_all(atomic_uint *w);

/* Marks this rank dead, blaming `culprit` (so that ranks which notice
 * the failure through us still name the rank that caused it), and wakes
 * the ranks asleep at a barrier so that they read it now. */
static void mark_dead(struct shm_comm *c, int culprit)
{
    int expected = 0;
    atomic_compare_exchange_strong(&c->g.hdr->slots[c->rank].dead, &expected,
                                   culprit + 1);
    atomic_store(&c->broken, 1);
    futex_wake_all(&c->g.hdr->gen);
}

static void shm_abort(struct hg_comm *base)
{
    struct shm_comm *c = (struct shm_comm *)base;
    mark_dead(c, c->rank);
}

static void shm_free(struct hg_comm *base)
{
    struct shm_comm *c = (struct shm_comm *)base;
    if (c->owns_map)
        munmap(c->g.hdr, c->g.map_bytes);
    free(c->wrank);
    free(c);
}

/* ---------------------------------------------------------------- barrier */

/* Sleeps while *w == seen, at most ms milliseconds (the word is in a
 * MAP_SHARED segment: a process-shared futex). */
static void futex_sleep(atomic_uint *w, unsigned seen, long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    syscall(SYS_futex, (unsigned *)w, FUTEX_WAIT, seen, &ts, NULL, 0);
}

/* Wakes every rank sleeping on w (after it changed). */
static void futex_wake_all(atomic_uint *w)
{
    syscall(SYS_futex, (unsigned *)w, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Fails the handle: this rank is dead to the others from now on. */
static int fail(struct shm_comm *c)
{
    shm_abort(&c->base);
    return -1;
}

/* Rank r is marked dead with value d: name the rank at the origin. */
static int peer_dead(struct shm_comm *c, int r, int d, unsigned bar, char *err,
                     size_t errlen)
{
    int culprit = d - 1;
    if (culprit == r || culprit < 0 || culprit >= c->g.world)
        hg_kerr(err, errlen, "%s: rank %d at barrier %u: rank %d aborted",
                c->tag, W(c, c->rank), bar, W(c, r));
    else
        hg_kerr(err, errlen, "%s: rank %d at barrier %u: rank %d failed "
                "(rank %d stopped because of it)", c->tag, W(c, c->rank), bar,
                W(c, culprit), W(c, r));
    mark_dead(c, culprit >= 0 && culprit < c->g.world ? culprit : r);
    return -1;
}

static int check_usable(struct shm_comm *c, char *err, size_t errlen)
{
    if (atomic_load(&c->broken))
        return hg_kerr(err, errlen,
                       "%s: rank %d: communicator unusable after an earlier "
                       "failure or abort", c->tag, W(c, c->rank));
    for (int r = 0; r < c->g.world; r++) {
        int d = atomic_load_explicit(&c->g.hdr->slots[r].dead,
                                     memory_order_acquire);
        if (d)
            return peer_dead(c, r, d, c->nbar + 1, err, errlen);
    }
    return 0;
}

static int barrier(struct shm_comm *c, char *err, size_t errlen)
{
    struct shm_hdr *h = c->g.hdr;
    int world = c->g.world;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    if (world == 1) {
        c->nbar++;
        return 0;
    }
    unsigned g = c->nbar, target = g + 1;
    atomic_store_explicit(&h->slots[c->rank].arrived, target,
                          memory_order_relaxed);
    if (atomic_fetch_add_explicit(&h->count, 1, memory_order_acq_rel) ==
        (unsigned)world - 1) {
        atomic_store_explicit(&h->count, 0, memory_order_relaxed);
        atomic_store_explicit(&h->gen, target, memory_order_release);
        futex_wake_all(&h->gen);
        c->nbar = target;
        return 0;
    }
    double start = 0, deadline = 0;
    for (unsigned long it = 0;; it++) {
        if (atomic_load_explicit(&h->gen, memory_order_acquire) != g)
            break;
        if (it < 256) {
            cpu_relax();
            continue;
        }
        for (int r = 0; r < world; r++) {
            int d = atomic_load_explicit(&h->slots[r].dead, memory_order_acquire);
            if (d)
                return peer_dead(c, r, d, target, err, errlen);
        }
        if (it == 256) {
            start = hg_now();
            deadline = start + c->g.timeout_s;
        }
        if (it < 4096) {
            sched_yield();
        } else {
            /* a rank that crashed (and was reaped) fails us now, not at
             * the deadline; after the dead flags, which say more */
            for (int r = 0; r < world; r++) {
                int pid = atomic_load_explicit(&h->slots[r].pid,
                                               memory_order_relaxed);
                if (atomic_load_explicit(&h->slots[r].arrived,
                                         memory_order_relaxed) < target &&
                    pid > 0 && kill(pid, 0) != 0 && errno == ESRCH) {
                    hg_kerr(err, errlen,
                            "%s: rank %d at barrier %u: rank %d (pid %d) has "
                            "exited", c->tag, W(c, c->rank), target, W(c, r),
                            pid);
                    mark_dead(c, r);
                    return -1;
                }
            }
            futex_sleep(&h->gen, g, 10);
        }
        if ((it >= 4096 || (it & 15) == 0) && hg_now() > deadline) {
            char missing[256] = "";
            size_t len = 0;
            for (int r = 0; r < world && len + 16 < sizeof missing; r++)
                if (atomic_load_explicit(&h->slots[r].arrived,
                                         memory_order_relaxed) < target)
                    len += (size_t)snprintf(missing + len, sizeof missing - len,
                                            "%s%d", len ? "," : "", W(c, r));
            hg_kerr(err, errlen,
                    "%s: rank %d waited %.3g s at barrier %u; ranks not "
                    "arrived: %s", c->tag, W(c, c->rank), hg_now() - start,
                    target, missing);
            return fail(c);
        }
    }
    c->nbar = target;
    return 0;
}

static int shm_barrier(struct hg_comm *c, char *err, size_t errlen)
{
    return barrier((struct shm_comm *)c, err, errlen);
}

/* ---------------------------------------------------------------- data */

static char *stage(const struct shm_comm *c, int r, unsigned half_idx)
{
    return (char *)c->g.hdr + c->g.data_off + (size_t)r * 2 * c->g.half +
           (size_t)half_idx * c->g.half;
}

/* dst[lo..hi) = ((src[0] + src[1]) + src[2]) + ..., in blocks that stay in
 * L1 so dst is not streamed world times. */
#define SUM_BLOCK 2048
#define DEFINE_SUM(name, T)                                                    \
    static void name(void *dstv, const void *const *srcv, int world,          \
                     size_t lo, size_t hi)                                     \
    {                                                                          \
        T *dst = dstv;                                                         \
        for (size_t b = lo; b < hi; b += SUM_BLOCK) {                          \
            size_t e = hi - b < SUM_BLOCK ? hi : b + SUM_BLOCK;                \
            const T *s0 = srcv[0];                                             \
            for (size_t i = b; i < e; i++)                                     \
                dst[i] = s0[i];                                                \
            for (int r = 1; r < world; r++) {                                  \
                const T *s = srcv[r];                                          \
                for (size_t i = b; i < e; i++)                                 \
                    dst[i] += s[i];                                            \
            }                                                                  \
        }                                                                      \
    }
DEFINE_SUM(sum_f32, float)
DEFINE_SUM(sum_f64, double)

typedef void sum_fn(void *dst, const void *const *src, int world, size_t lo,
                    size_t hi);

static int allreduce(struct shm_comm *c, void *bufv, size_t n, size_t esz,
                     sum_fn *sum, char *err, size_t errlen)
{
    if (check_usable(c, err, errlen) != 0)
        return -1;
    int world = c->g.world, me = c->rank;
    if (world == 1 || n == 0)
        return 0;
    char *buf = bufv;
    size_t piece = c->g.half / esz;
    const void *src[SHM_MAX_WORLD];
    for (size_t off = 0; off < n; off += piece) {
        size_t m = n - off < piece ? n - off : piece;
        size_t chunk = (m + (size_t)world - 1) / (size_t)world;
        chunk = (chunk + SHM_CHUNK_ALIGN - 1) / SHM_CHUNK_ALIGN * SHM_CHUNK_ALIGN;
        size_t lo = (size_t)me * chunk < m ? (size_t)me * chunk : m;
        size_t hi = lo + chunk < m ? lo + chunk : m;
        unsigned hx = c->npiece++ & 1;
        char *mine = buf + off * esz;
        char *st = stage(c, me, hx);
        memcpy(st, mine, lo * esz); /* all but my chunk */
        memcpy(st + hi * esz, mine + hi * esz, (m - hi) * esz);
        if (barrier(c, err, errlen) != 0)
            return -1;
        for (int r = 0; r < world; r++)
            src[r] = r == me ? (const void *)mine : (const void *)stage(c, r, hx);
        char *res = stage(c, world, hx);
        if (lo < hi)
            sum(res, src, world, lo, hi);
        if (barrier(c, err, errlen) != 0)
            return -1;
        memcpy(mine, res, m * esz);
    }
    return 0;
}

static int shm_allreduce(struct hg_comm *base, void *buf, size_t n,
                         enum hg_comm_dtype dt, char *err, size_t errlen)
{
    struct shm_comm *c = (struct shm_comm *)base;
    if (dt == HG_COMM_F32)
        return allreduce(c, buf, n, sizeof(float), sum_f32, err, errlen);
    return allreduce(c, buf, n, sizeof(double), sum_f64, err, errlen);
}

static int shm_broadcast(struct hg_comm *base, void *bufv, size_t bytes,
                         int root, char *err, size_t errlen)
{
    struct shm_comm *c = (struct shm_comm *)base;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    if (c->g.world == 1 || bytes == 0)
        return 0;
    char *buf = bufv;
    for (size_t off = 0; off < bytes; off += c->g.half) {
        size_t m = bytes - off < c->g.half ? bytes - off : c->g.half;
        unsigned hx = c->npiece++ & 1;
        char *st = stage(c, root, hx);
        if (c->rank == root)
            memcpy(st, buf + off, m);
        if (barrier(c, err, errlen) != 0)
            return -1;
        if (c->rank != root)
            memcpy(buf + off, st, m);
    }
    return 0;
}

/* allgather: piece by piece through the staging halves, like broadcast
 * with every rank a root at once. */
static int shm_allgather(struct hg_comm *base, const void *sendv, void *recvv,
                         size_t bytes, char *err, size_t errlen)
{
    struct shm_comm *c = (struct shm_comm *)base;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    int world = c->g.world, me = c->rank;
    if (bytes == 0)
        return 0;
    const char *send = sendv;
    char *recv = recvv;
    char *mine = recv + (size_t)me * bytes;
    if (world == 1) {
        if (mine != send)
            memmove(mine, send, bytes);
        return 0;
    }
    for (size_t off = 0; off < bytes; off += c->g.half) {
        size_t m = bytes - off < c->g.half ? bytes - off : c->g.half;
        unsigned hx = c->npiece++ & 1;
        memcpy(stage(c, me, hx), send + off, m);
        if (barrier(c, err, errlen) != 0)
            return -1;
        for (int r = 0; r < world; r++)
            if (r != me)
                memcpy(recv + (size_t)r * bytes + off, stage(c, r, hx), m);
    }
    /* last: send may be recv + me*bytes, whose pieces were read above */
    if (mine != send)
        memmove(mine, send, bytes);
    return 0;
}

/* ----------------------------------------------------- uneven counts */

/* Before the first barrier of a v collective: publishes this rank's
 * digest of the counts for the barrier it is about to enter. */
static void put_digest(struct shm_comm *c, uint64_t d)
{
    c->g.hdr->slots[c->rank].digest[(c->nbar + 1) & 1] = d;
}

/* Right after that barrier: every rank's digest is ours, or the call
 * fails naming the ranks whose counts differ from ours. */
static int check_digests(struct shm_comm *c, uint64_t d, const char *what,
                         char *err, size_t errlen)
{
    char bad[256] = "";
    size_t len = 0;
    for (int r = 0; r < c->g.world; r++)
        if (c->g.hdr->slots[r].digest[c->nbar & 1] != d &&
            len + 16 < sizeof bad)
            len += (size_t)snprintf(bad + len, sizeof bad - len, "%s%d",
                                    len ? "," : "", W(c, r));
    if (!len)
        return 0;
    hg_kerr(err, errlen, "%s: rank %d: %s: rank(s) %s passed other counts "
            "than rank %d (the counts must be the same on every rank)",
            c->tag, W(c, c->rank), what, bad, W(c, c->rank));
    return fail(c);
}

/* allgatherv: like allgather, in pieces of at most `half` bytes of every
 * rank's block: piece k is bytes [k*half, (k+1)*half) of each block (a
 * block that short has nothing in it).  At least one piece, so that an
 * empty call still checks the counts. */
static int shm_allgatherv(struct hg_comm *base, const void *sendv,
                          void *recvv, const size_t *counts, char *err,
                          size_t errlen)
{
    struct shm_comm *c = (struct shm_comm *)base;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    int world = c->g.world, me = c->rank;
    const char *send = sendv;
    char *recv = recvv;
    size_t maxc = 0;
    for (int r = 0; r < world; r++)
        maxc = counts[r] > maxc ? counts[r] : maxc;
    size_t at_me = hg_comm_counts_off(counts, me);
    uint64_t d = hg_comm_counts_digest(counts, world);
    size_t off = 0;
    do {
        unsigned hx = c->npiece++ & 1;
        if (off < counts[me]) {
            size_t m = counts[me] - off < c->g.half ? counts[me] - off : c->g.half;
            memcpy(stage(c, me, hx), send + off, m);
        }
        if (off == 0)
            put_digest(c, d);
        if (barrier(c, err, errlen) != 0)
            return -1;
        if (off == 0 && check_digests(c, d, "allgatherv", err, errlen) != 0)
            return -1;
        size_t at = 0; /* off_r */
        for (int r = 0; r < world; at += counts[r], r++) {
            if (r == me || off >= counts[r])
                continue;
            size_t m = counts[r] - off < c->g.half ? counts[r] - off : c->g.half;
            memcpy(recv + at + off, stage(c, r, hx), m);
        }
        off += c->g.half;
    } while (off < maxc);
    /* last: send may be mine, whose pieces were read above */
    if (counts[me] > 0 && recv + at_me != send)
        memmove(recv + at_me, send, counts[me]);
    return 0;
}

/* reduce_scatterv: the whole vector in pieces of at most `half` bytes;
 * every rank stages its piece but the part in its own slice (only it
 * reads that; in place, its part too: recv overwrites it), one barrier,
 * then each rank sums the part of the piece in its slice over ranks
 * 0..world-1 in order straight into recv.  One barrier per piece is
 * enough: piece k+2 reuses piece k's half only after the barrier of
 * piece k+1, which every rank reaches after reading piece k. */
static int shm_reduce_scatterv(struct hg_comm *base, const float *send,
                               float *recv, const size_t *counts, char *err,
                               size_t errlen)
{
    struct shm_comm *c = (struct shm_comm *)base;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    int world = c->g.world, me = c->rank;
    size_t total = hg_comm_counts_off(counts, world);
    size_t lo = hg_comm_counts_off(counts, me), hi = lo + counts[me];
    /* in place: recv is send + lo, written as the pieces go */
    int in_place = counts[me] > 0 && recv == send + lo;
    if (world == 1) {
        if (counts[me] > 0 && !in_place)
            memcpy(recv, send + lo, counts[me] * sizeof *recv);
        return 0;
    }
    uint64_t d = hg_comm_counts_digest(counts, world);
    size_t piece = c->g.half / sizeof(float);
    const void *src[SHM_MAX_WORLD];
    size_t off = 0;
    do {
        size_t m = total - off < piece ? total - off : piece;
        unsigned hx = c->npiece++ & 1;
        float *st = (float *)stage(c, me, hx);
        /* my slice within the piece: [a, b) of it */
        size_t a = lo > off ? lo - off : 0, b = hi > off ? hi - off : 0;
        a = a < m ? a : m;
        b = b < m ? b : m;
        if (m > 0 && in_place) {
            memcpy(st, send + off, m * sizeof *st);
        } else if (m > 0) {
            memcpy(st, send + off, a * sizeof *st);
            memcpy(st + b, send + off + b, (m - b) * sizeof *st);
        }
        if (off == 0)
            put_digest(c, d);
        if (barrier(c, err, errlen) != 0)
            return -1;
        if (off == 0 && check_digests(c, d, "reduce_scatterv", err, errlen) != 0)
            return -1;
        if (a < b) {
            for (int r = 0; r < world; r++)
                src[r] = r == me && !in_place ? (const void *)(send + off + a)
                                             : (const void *)((float *)stage(c, r, hx) + a);
            sum_f32(recv + (off + a - lo), src, world, 0, b - a);
        }
        off += m;
    } while (off < total);
    return 0;
}

/* ------------------------------------------------------- point to point */

static struct shm_mbox *mbox(const struct shm_comm *c, int src, int dst)
{
    return (struct shm_mbox *)((char *)c->g.hdr + c->g.mbox_off) +
           (size_t)src * (size_t)c->g.world + (size_t)dst;
}

static char *mbox_slot(const struct shm_comm *c, int src, int dst,
                       unsigned slot)
{
    size_t pair = (size_t)src * (size_t)c->g.world + (size_t)dst;
    return (char *)c->g.hdr + c->g.p2p_off + (pair * 2 + slot) * c->g.pslot;
}

/* Waits until *word reaches target (counters wrap), failing at the deadline,
 * when any rank is marked dead, or when `peer` has exited.  `op` and
 * `bytes` only go into the messages. */
static int wait_reach(struct shm_comm *c, atomic_uint *word, unsigned target,
                      int peer, const char *op, size_t bytes, char *err,
                      size_t errlen)
{
    struct shm_hdr *h = c->g.hdr;
    double start = 0, deadline = 0;
    for (unsigned long it = 0;; it++) {
        if ((int)(atomic_load_explicit(word, memory_order_acquire) - target) >= 0)
            return 0;
        if (it < 256) {
            cpu_relax();
            continue;
        }
        for (int r = 0; r < c->g.world; r++)
            if (atomic_load_explicit(&h->slots[r].dead, memory_order_acquire)) {
                hg_kerr(err, errlen, "%s: rank %d in %s of %zu bytes %s rank "
                        "%d: rank %d aborted", c->tag, W(c, c->rank), op, bytes,
                        op[0] == 's' ? "to" : "from", W(c, peer), W(c, r));
                return fail(c);
            }
        if (it == 256) {
            start = hg_now();
            deadline = start + c->g.timeout_s;
        }
        if (it < 4096) {
            sched_yield();
        } else {
            int pid = atomic_load_explicit(&h->slots[peer].pid,
                                           memory_order_relaxed);
            /* look again after the exit: the peer may have written its last
             * piece just before it went (checked after the dead flags) */
            if (pid > 0 && kill(pid, 0) != 0 &&
                errno == ESRCH &&
                (int)(atomic_load_explicit(word, memory_order_acquire) -
                      target) < 0) {
                hg_kerr(err, errlen, "%s: rank %d in %s of %zu bytes %s rank "
                        "%d: rank %d (pid %d) has exited", c->tag,
                        W(c, c->rank), op, bytes, op[0] == 's' ? "to" : "from",
                        W(c, peer), W(c, peer), pid);
                return fail(c);
            }
            /* sleep on the value seen, so a store in between is not lost */
            unsigned v = atomic_load_explicit(word, memory_order_acquire);
            if ((int)(v - target) >= 0)
                return 0;
            futex_sleep(word, v, 10);
        }
        if ((it >= 4096 || (it & 15) == 0) && hg_now() > deadline) {
            hg_kerr(err, errlen, "%s: rank %d waited %.3g s in %s of %zu bytes "
                    "%s rank %d; rank %d did not %s", c->tag, W(c, c->rank),
                    hg_now() - start, op, bytes, op[0] == 's' ? "to" : "from",
                    W(c, peer), W(c, peer), op[0] == 's' ? "receive" : "send");
            return fail(c);
        }
    }
}

/* A message is max(1, ceil(bytes / pslot)) pieces (an empty one too, so
 * that its size is checked and the order kept); two slots per pair, so the
 * sender writes piece k+1 while the receiver copies piece k.  A message
 * that fits in two slots is buffered: send returns before the receive. */
static size_t npieces(const struct shm_comm *c, size_t bytes)
{
    return bytes == 0 ? 1 : (bytes + c->g.pslot - 1) / c->g.pslot;
}

static int shm_send(struct hg_comm *base, const void *bufv, size_t bytes,
                    int peer, char *err, size_t errlen)
{
    struct shm_comm *c = (struct shm_comm *)base;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    struct shm_mbox *mb = mbox(c, c->rank, peer);
    const char *buf = bufv;
    /* only this rank writes `written`: its own count is the truth */
    unsigned w = atomic_load_explicit(&mb->written, memory_order_relaxed);
    size_t np = npieces(c, bytes);
    for (size_t k = 0; k < np; k++, w++) {
        if (wait_reach(c, &mb->taken, w - 1, peer, "send", bytes, err,
                       errlen) != 0)
            return -1;
        size_t off = k * c->g.pslot;
        size_t m = bytes - off < c->g.pslot ? bytes - off : c->g.pslot;
        if (bytes == 0)
            m = 0;
        memcpy(mbox_slot(c, c->rank, peer, w & 1), buf + off, m);
        mb->total[w & 1] = bytes;
        atomic_store_explicit(&mb->written, w + 1, memory_order_release);
        futex_wake_all(&mb->written);
    }
    return 0;
}

static int shm_recv(struct hg_comm *base, void *bufv, size_t bytes, int peer,
                    char *err, size_t errlen)
{
    struct shm_comm *c = (struct shm_comm *)base;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    struct shm_mbox *mb = mbox(c, peer, c->rank);
    char *buf = bufv;
    unsigned t = atomic_load_explicit(&mb->taken, memory_order_relaxed);
    size_t np = npieces(c, bytes);
    for (size_t k = 0; k < np; k++, t++) {
        if (wait_reach(c, &mb->written, t + 1, peer, "recv", bytes, err,
                       errlen) != 0)
            return -1;
        if (k == 0 && mb->total[t & 1] != bytes) {
            /* leave the message there: the handle is broken anyway */
            hg_kerr(err, errlen, "%s: rank %d: recv of %zu bytes from rank %d, "
                    "which sent %llu bytes (sizes must agree)", c->tag,
                    W(c, c->rank), bytes, W(c, peer),
                    (unsigned long long)mb->total[t & 1]);
            return fail(c);
        }
        size_t off = k * c->g.pslot;
        size_t m = bytes - off < c->g.pslot ? bytes - off : c->g.pslot;
        if (bytes == 0)
            m = 0;
        memcpy(buf + off, mbox_slot(c, peer, c->rank, t & 1), m);
        atomic_store_explicit(&mb->taken, t + 1, memory_order_release);
        futex_wake_all(&mb->taken);
    }
    return 0;
}

/* ---------------------------------------------------------------- groups */

/* Takes the directory lock of c's segment, at most until the deadline. */
static int gdir_lock(struct shm_comm *c, double deadline, char *err,
                     size_t errlen)
{
    atomic_uint *l = &c->g.hdr->gdir_lock;
    for (unsigned long it = 0;; it++) {
        unsigned free_ = 0;
        if (atomic_compare_exchange_weak_explicit(l, &free_,
                                                  (unsigned)c->rank + 1,
                                                  memory_order_acquire,
                                                  memory_order_relaxed))
            return 0;
        if (it < 64) {
            cpu_relax();
            continue;
        }
        if (hg_now() > deadline) {
            unsigned holder = atomic_load(l);
            hg_kerr(err, errlen, "%s: rank %d: the group directory stayed "
                    "locked by rank %d until the timeout (%g s)", c->tag,
                    W(c, c->rank), holder ? W(c, (int)holder - 1) : -1,
                    c->g.timeout_s);
            return -1;
        }
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
}

static void gdir_unlock(struct shm_comm *c)
{
    atomic_store_explicit(&c->g.hdr->gdir_lock, 0, memory_order_release);
}

/* Finds the segment's name through c's directory, or makes the segment
 * (*maker = 1: the entry is ours and MAKING; *e its index). */
static int gdir_find(struct shm_comm *c, uint64_t key, int n, char name[64],
                     int *maker, int *e, char *err, size_t errlen)
{
    struct shm_hdr *h = c->g.hdr;
    double deadline = hg_now() + c->g.timeout_s;
    *maker = 0;
    for (;;) {
        if (gdir_lock(c, deadline, err, errlen) != 0)
            return -1;
        int i, st = GE_FREE;
        for (i = 0; i < SHM_GDIR; i++) {
            struct shm_gent *g = &h->gdir[i];
            /* acquire: READY is stored (outside the lock) after the name */
            st = (int)atomic_load_explicit(&g->state, memory_order_acquire);
            if (st != GE_FREE && g->key == key && g->n == n && g->attached < n)
                break;
        }
        if (i == SHM_GDIR) { /* the first member here: ours to make */
            for (i = 0; i < SHM_GDIR; i++)
                if (atomic_load_explicit(&h->gdir[i].state,
                                         memory_order_relaxed) == GE_FREE)
                    break;
            if (i == SHM_GDIR) {
                gdir_unlock(c);
                return hg_kerr(err, errlen, "%s: rank %d: all %d entries of "
                               "the group directory are taken (groups being "
                               "made whose members have not all come)",
                               c->tag, W(c, c->rank), SHM_GDIR);
            }
            struct shm_gent *g = &h->gdir[i];
            g->key = key;
            g->n = n;
            g->attached = 1;
            g->maker = c->rank;
            g->name[0] = '\0';
            atomic_store_explicit(&g->state, GE_MAKING, memory_order_relaxed);
            gdir_unlock(c);
            *maker = 1;
            *e = i;
            return 0;
        }
        struct shm_gent *g = &h->gdir[i];
        int who = g->maker;
        if (st == GE_READY) {
            memcpy(name, g->name, 64);
            if (++g->attached == n) /* the last to read it: free again */
                atomic_store_explicit(&g->state, GE_FREE, memory_order_relaxed);
            gdir_unlock(c);
            return 0;
        }
        gdir_unlock(c);
        if (st == GE_FAILED)
            return hg_kerr(err, errlen, "%s: rank %d: rank %d could not make "
                           "the group's segment", c->tag, W(c, c->rank),
                           W(c, who));
        /* MAKING: the maker is creating it */
        int pid = atomic_load(&h->slots[who].pid);
        if (pid > 0 && kill(pid, 0) != 0 && errno == ESRCH)
            return hg_kerr(err, errlen, "%s: rank %d: rank %d (pid %d) exited "
                           "while making the group's segment", c->tag,
                           W(c, c->rank), W(c, who), pid);
        if (hg_now() > deadline)
            return hg_kerr(err, errlen, "%s: rank %d waited %g s for rank %d "
                           "to make the group's segment", c->tag,
                           W(c, c->rank), c->g.timeout_s, W(c, who));
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
}

/* A group is a segment of its own, made by the first member to come (the
 * parent's staging size and timeout): its name goes through the parent's
 * directory, every member maps it and joins as its index in ranks[], a
 * barrier of the group says that all have it mapped, and every member
 * unlinks the name (the first succeeds).  The name exists from the
 * creation to that barrier (at most the timeout). */
static int shm_group(struct hg_comm *base, const int *ranks, int n,
                     struct hg_comm **gp, char *err, size_t errlen)
{
    struct shm_comm *c = (struct shm_comm *)base;
    *gp = NULL;
    if (check_usable(c, err, errlen) != 0)
        return -1;
    int me = 0;
    while (ranks[me] != c->rank)
        me++;
    struct hg_comm_shm_group t;
    char name[64] = "";
    int maker, e;
    if (layout(&t, n, 2 * c->g.half, c->g.timeout_s, err, errlen) != 0 ||
        gdir_find(c, hg_comm_group_hash(ranks, n), n, name, &maker, &e, err,
                  errlen) != 0)
        return fail(c);
    if (maker) {
        int rc = map_new(&t, name, err, errlen);
        /* the entry is ours until READY: no lock needed to fill it */
        struct shm_gent *g = &c->g.hdr->gdir[e];
        memcpy(g->name, name, sizeof g->name);
        atomic_store_explicit(&g->state,
                              rc != 0 ? GE_FAILED : n == 1 ? GE_FREE : GE_READY,
                              memory_order_release);
        if (rc != 0)
            return fail(c);
    } else if (map_open(&t, name, err, errlen) != 0) {
        return fail(c);
    }
    struct shm_comm *g = NULL;
    int *wrank = malloc((size_t)n * sizeof *wrank);
    if (!wrank || join(&g, &t, me, err, errlen) != 0) {
        if (!wrank)
            hg_kerr(err, errlen, "%s: rank %d: out of memory", c->tag,
                    W(c, c->rank));
        free(wrank);
        munmap(t.hdr, t.map_bytes);
        shm_unlink(name);
        return fail(c);
    }
    for (int i = 0; i < n; i++)
        wrank[i] = W(c, ranks[i]);
    g->wrank = wrank;
    g->owns_map = 1;
    g->tag = "shm group";
    int rc = barrier(g, err, errlen);
    shm_unlink(name); /* mapped by all (or given up): the name goes */
    if (rc != 0) {
        shm_free(&g->base);
        return fail(c);
    }
    *gp = &g->base;
    return 0;
}

static unsigned shm_caps(const struct hg_comm *c)
{
    (void)c;
    return HG_COMM_ASYNC | HG_COMM_GROUPS | HG_COMM_THREADS |
           HG_COMM_RANK_ORDER | HG_COMM_PS;
}

static const struct hg_comm_ops shm_ops = {
    .name = "shm",
    .caps = shm_caps,
    .allreduce = shm_allreduce,
    .broadcast = shm_broadcast,
    .allgather = shm_allgather,
    .allgatherv = shm_allgatherv,
    .reduce_scatterv = shm_reduce_scatterv,
    .barrier = shm_barrier,
    .send = shm_send,
    .recv = shm_recv,
    .group = shm_group,
    .abort = shm_abort,
    .free = shm_free,
};
