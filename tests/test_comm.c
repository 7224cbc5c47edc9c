/* test_comm.c - the shm backend of comm/: allreduce (f32, f64) bitwise
 * against a rank-order sum computed in the parent, broadcast, allgather
 * (aliased and not), send/recv in a ring and mixed with collectives,
 * barriers, pieces larger than the staging area, timeouts naming the
 * missing rank, abort naming the dead rank, a rank that exits noticed by
 * its pid, a send/recv size mismatch naming both ranks, nothing left in
 * /dev/shm.  Then comm_cases.h's cases, each in a world of its own:
 * asynchronous requests (bitwise the blocking calls, several in flight, a
 * timeout naming the peer), groups (disjoint pairs at once, renumbered
 * ranks, a group of a group), the parameter server (3 clients pushing at
 * once, summed in client order; a silent client and a killed one named),
 * allgatherv and reduce_scatterv with uneven counts (world, groups,
 * asynchronous; other counts on one rank, bad counts, a killed rank).
 * HG_COMM_CASES=<part of a case's name> runs those cases only. */
#define _GNU_SOURCE

#include "comm/hg_comm.h"
#include "tests/hg_test.h"
#include "tests/comm_test.h"
#include "tests/comm_cases.h"

#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STAGE_BYTES (1u << 20) /* pieces of 512 KiB: 3M floats = 24 pieces */
#define CHILD_LIMIT_S 120

static const size_t sizes[] = {1, 7, 1000, 3u << 20};
#define NSIZES (sizeof sizes / sizeof sizes[0])

/* ------------------------------------------------------------ /dev/shm */

/* Processes of this test: itself and every worker it forked (segment
 * names carry their creator's pid: comm/shm.c).  Other tests running at the
 * same time make segments of their own, which must not count. */
static long our_pids[4096];
static int n_our_pids;

static void note_pid(long pid)
{
    if (n_our_pids < (int)(sizeof our_pids / sizeof our_pids[0]))
        our_pids[n_our_pids++] = pid;
}

static int count_ours(void)
{
    DIR *d = opendir("/dev/shm");
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, "hgcomm.", 7) != 0)
            continue;
        long pid = strtol(e->d_name + 7, NULL, 10);
        int ours = pid == (long)getpid();
        for (int i = 0; i < n_our_pids && !ours; i++)
            ours = pid == our_pids[i];
        n += ours;
    }
    closedir(d);
    return n;
}

/* ------------------------------------------------------------ workers */

struct job {
    int world;
    float *want32[NSIZES];  /* expected sums, computed by the parent */
    double *want64[NSIZES];
};

typedef int worker_fn(struct hg_comm *c, struct job *job);

static int may_die = -1; /* a rank whose SIGKILL is the test */

/* Forks world workers running fn; returns the number of workers that did
 * not exit 0 in time (killed after CHILD_LIMIT_S). */
static int run_world(struct hg_comm_shm_group *g, int world, worker_fn *fn,
                     struct job *job)
{
    pid_t pids[8];
    fflush(stdout);
    for (int r = 0; r < world; r++) {
        pids[r] = fork();
        REQUIRE(pids[r] >= 0, "fork");
        note_pid((long)pids[r]);
        if (pids[r] == 0) {
            char err[256];
            struct hg_comm *c;
            int rc = 1;
            failures = 0; /* the parent's earlier failures are the parent's */
            if (hg_comm_shm_join(&c, g, r, err, sizeof err) != 0) {
                printf("rank %d: %s\n", r, err);
            } else {
                rc = fn(c, job);
                hg_comm_free(c);
            }
            hg_comm_shm_group_free(g);
            fflush(stdout);
            _exit(rc);
        }
    }
    int bad = 0, left = world;
    int done[8] = {0};
    double deadline = hg_now() + CHILD_LIMIT_S;
    /* reap in any order: a worker that exits early must not stay a zombie
     * (the others detect a dead rank by its pid) */
    while (left > 0 && hg_now() < deadline) {
        for (int r = 0; r < world; r++) {
            int st = 0;
            if (done[r] || waitpid(pids[r], &st, WNOHANG) != pids[r])
                continue;
            done[r] = 1;
            left--;
            if (r == may_die && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
                continue;
            if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                printf("rank %d exited with status 0x%x\n", r, st);
                bad++;
            }
        }
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    for (int r = 0; r < world; r++)
        if (!done[r]) {
            printf("rank %d (pid %d) still running after %d s: killed\n", r,
                   (int)pids[r], CHILD_LIMIT_S);
            kill(pids[r], SIGKILL);
            waitpid(pids[r], NULL, 0);
            bad++;
        }
    return bad;
}

static int worker_collectives(struct hg_comm *c, struct job *job)
{
    int me = hg_comm_rank(c), world = hg_comm_world(c);
    char err[256];
    EXPECT(world == job->world, "world %d", world);
    for (size_t s = 0; s < NSIZES; s++) {
        size_t n = sizes[s];
        float *x = malloc(n * sizeof *x);
        double *y = malloc(n * sizeof *y);
        REQUIRE(x && y, "malloc");
        for (size_t i = 0; i < n; i++) {
            x[i] = (float)value(me, i);
            y[i] = value(me, i);
        }
        int rc = hg_comm_allreduce_f32(c, x, n, err, sizeof err);
        REQUIRE(rc == 0, "rank %d allreduce_f32 n=%zu: %s", me, n, err);
        EXPECT(memcmp(x, job->want32[s], n * sizeof *x) == 0,
               "world %d rank %d: f32 sum of %zu differs", world, me, n);
        rc = hg_comm_allreduce_f64(c, y, n, err, sizeof err);
        REQUIRE(rc == 0, "rank %d allreduce_f64 n=%zu: %s", me, n, err);
        EXPECT(memcmp(y, job->want64[s], n * sizeof *y) == 0,
               "world %d rank %d: f64 sum of %zu differs", world, me, n);

        /* broadcast n floats' worth of bytes from root */
        int root = world >= 3 ? 2 : 0;
        size_t bytes = n * sizeof(float) + 3; /* odd size */
        unsigned char *b = malloc(bytes);
        REQUIRE(b, "malloc");
        for (size_t i = 0; i < bytes; i++)
            b[i] = me == root ? (unsigned char)(i * 31 + 7) : 0xee;
        rc = hg_comm_broadcast(c, b, bytes, root, err, sizeof err);
        REQUIRE(rc == 0, "rank %d broadcast %zu: %s", me, bytes, err);
        size_t bad = 0;
        for (size_t i = 0; i < bytes; i++)
            bad += b[i] != (unsigned char)(i * 31 + 7);
        EXPECT(bad == 0, "world %d rank %d: broadcast of %zu: %zu bytes wrong",
               world, me, bytes, bad);
        free(b);
        free(x);
        free(y);
    }
    for (int i = 0; i < 200; i++) {
        int rc = hg_comm_barrier(c, err, sizeof err);
        REQUIRE(rc == 0, "rank %d barrier %d: %s", me, i, err);
    }
    return failures ? 1 : 0;
}

/* A byte pattern that names its rank, its message and its offset. */
static unsigned char pat(int rank, int msg, size_t i)
{
    return (unsigned char)(i * 131 + (size_t)rank * 29 + (size_t)msg * 7 + 1);
}

static size_t count_bad(const unsigned char *b, size_t n, int rank, int msg)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += b[i] != pat(rank, msg, i);
    return bad;
}

/* Several messages' worth: 0 bytes, small, and more than the staging area
 * (and than a point-to-point slot) in odd sizes. */
static const size_t gsizes[] = {0, 1, 1000, (3u << 20) + 5};
#define NGSIZES (sizeof gsizes / sizeof gsizes[0])

static int worker_gather_p2p(struct hg_comm *c, struct job *job)
{
    (void)job;
    int me = hg_comm_rank(c), world = hg_comm_world(c);
    char err[256];
    for (size_t s = 0; s < NGSIZES; s++) {
        size_t n = gsizes[s];
        /* allgather from a separate buffer, then in place */
        unsigned char *send = malloc(n + 1), *recv = malloc((size_t)world * n + 1);
        REQUIRE(send && recv, "malloc");
        for (size_t i = 0; i < n; i++)
            send[i] = pat(me, (int)s, i);
        memset(recv, 0xee, (size_t)world * n);
        int rc = hg_comm_allgather(c, send, recv, n, err, sizeof err);
        REQUIRE(rc == 0, "rank %d allgather %zu: %s", me, n, err);
        for (int r = 0; r < world; r++) {
            size_t bad = count_bad(recv + (size_t)r * n, n, r, (int)s);
            EXPECT(bad == 0, "world %d rank %d: allgather of %zu: %zu bytes "
                   "of rank %d's wrong", world, me, n, bad, r);
        }
        memset(recv, 0xee, (size_t)world * n);
        memcpy(recv + (size_t)me * n, send, n);
        rc = hg_comm_allgather(c, recv + (size_t)me * n, recv, n, err, sizeof err);
        REQUIRE(rc == 0, "rank %d allgather in place %zu: %s", me, n, err);
        for (int r = 0; r < world; r++) {
            size_t bad = count_bad(recv + (size_t)r * n, n, r, (int)s);
            EXPECT(bad == 0, "world %d rank %d: in-place allgather of %zu: %zu "
                   "bytes of rank %d's wrong", world, me, n, bad, r);
        }

        if (world == 1) {
            free(send);
            free(recv);
            continue;
        }
        /* ring: to the right, from the left; large messages wait for the
         * receiver, so even ranks send first and odd ranks receive first
         * (an odd world's last even rank unblocks once rank 0 receives) */
        int right = (me + 1) % world, left = (me + world - 1) % world;
        memset(recv, 0xee, n);
        for (int step = 0; step < 2; step++) {
            if ((step == 0) == (me % 2 == 0)) {
                rc = hg_comm_send(c, send, n, right, err, sizeof err);
                REQUIRE(rc == 0, "rank %d send %zu to %d: %s", me, n, right, err);
            } else {
                rc = hg_comm_recv(c, recv, n, left, err, sizeof err);
                REQUIRE(rc == 0, "rank %d recv %zu from %d: %s", me, n, left, err);
            }
        }
        size_t bad = count_bad(recv, n, left, (int)s);
        EXPECT(bad == 0, "world %d rank %d: ring recv of %zu from %d: %zu bytes "
               "wrong", world, me, n, left, bad);
        free(send);
        free(recv);
    }
    if (world == 1)
        return failures ? 1 : 0;

    /* small messages stay buffered: every rank sends first, then a
     * collective runs while they wait, then two messages from the left
     * arrive in order */
    int right = (me + 1) % world, left = (me + world - 1) % world;
    unsigned char a[100], b[7], in[100];
    for (size_t i = 0; i < sizeof a; i++)
        a[i] = pat(me, 100, i);
    for (size_t i = 0; i < sizeof b; i++)
        b[i] = pat(me, 101, i);
    REQUIRE(hg_comm_send(c, a, sizeof a, right, err, sizeof err) == 0,
            "rank %d send: %s", me, err);
    REQUIRE(hg_comm_send(c, b, sizeof b, right, err, sizeof err) == 0,
            "rank %d send: %s", me, err);
    double x[1000];
    for (int i = 0; i < 1000; i++)
        x[i] = value(me, (size_t)i);
    REQUIRE(hg_comm_allreduce_f64(c, x, 1000, err, sizeof err) == 0,
            "rank %d allreduce between send and recv: %s", me, err);
    for (int i = 0; i < 1000; i++) {
        double want = value(0, (size_t)i);
        for (int r = 1; r < world; r++)
            want += value(r, (size_t)i);
        if (memcmp(&x[i], &want, sizeof want) != 0) {
            EXPECT(0, "rank %d: allreduce next to p2p: element %d differs", me, i);
            break;
        }
    }
    REQUIRE(hg_comm_recv(c, in, sizeof a, left, err, sizeof err) == 0,
            "rank %d recv: %s", me, err);
    EXPECT(count_bad(in, sizeof a, left, 100) == 0, "rank %d: first message", me);
    REQUIRE(hg_comm_recv(c, in, sizeof b, left, err, sizeof err) == 0,
            "rank %d recv: %s", me, err);
    EXPECT(count_bad(in, sizeof b, left, 101) == 0, "rank %d: second message", me);
    REQUIRE(hg_comm_barrier(c, err, sizeof err) == 0, "rank %d barrier: %s", me,
            err);
    return failures ? 1 : 0;
}

static void test_gather_p2p(int world)
{
    char err[256];
    struct hg_comm_shm_group *g;
    struct job job = {.world = world};
    REQUIRE(hg_comm_shm_create(&g, world, STAGE_BYTES, 30.0, err, sizeof err) == 0,
            "create: %s", err);
    double t0 = hg_now();
    int bad = run_world(g, world, worker_gather_p2p, &job);
    EXPECT(bad == 0, "world %d: %d workers failed", world, bad);
    printf("world %d: allgather, send/recv %s (%.2f s)\n", world,
           bad ? "FAILED" : "ok", hg_now() - t0);
    hg_comm_shm_group_free(g);
}

static void test_collectives(int world)
{
    struct job job = {.world = world};
    for (size_t s = 0; s < NSIZES; s++) {
        size_t n = sizes[s];
        job.want32[s] = malloc(n * sizeof(float));
        job.want64[s] = malloc(n * sizeof(double));
        REQUIRE(job.want32[s] && job.want64[s], "malloc");
        for (size_t i = 0; i < n; i++) {
            float a = (float)value(0, i);
            double b = value(0, i);
            for (int r = 1; r < world; r++) {
                a += (float)value(r, i);
                b += value(r, i);
            }
            job.want32[s][i] = a;
            job.want64[s][i] = b;
        }
    }
    char err[256];
    struct hg_comm_shm_group *g;
    REQUIRE(hg_comm_shm_create(&g, world, STAGE_BYTES, 30.0, err, sizeof err) == 0,
            "create: %s", err);
    EXPECT(count_ours() == 0, "segment still named in /dev/shm after create");
    double t0 = hg_now();
    int bad = run_world(g, world, worker_collectives, &job);
    EXPECT(bad == 0, "world %d: %d workers failed", world, bad);
    printf("world %d: collectives %s (%.2f s)\n", world, bad ? "FAILED" : "ok",
           hg_now() - t0);
    hg_comm_shm_group_free(g);
    for (size_t s = 0; s < NSIZES; s++) {
        free(job.want32[s]);
        free(job.want64[s]);
    }
}

/* ------------------------------------------------------------ failures */

static int worker_timeout(struct hg_comm *c, struct job *job)
{
    (void)job;
    char err[256] = "";
    float x[16] = {0};
    if (hg_comm_rank(c) == 1) {
        /* never joins the allreduce; later finds rank 0 dead */
        struct timespec ts = {1, 500000000};
        nanosleep(&ts, NULL);
        double t0 = hg_now();
        int rc = hg_comm_barrier(c, err, sizeof err);
        EXPECT(rc == -1, "rank 1 barrier after rank 0 failed returned %d", rc);
        EXPECT(strstr(err, "rank 0 aborted") != NULL, "rank 1 got: %s", err);
        EXPECT(hg_now() - t0 < 0.4, "rank 1 took %.2f s to fail", hg_now() - t0);
        return failures ? 1 : 0;
    }
    double t0 = hg_now();
    int rc = hg_comm_allreduce_f32(c, x, 16, err, sizeof err);
    double dt = hg_now() - t0;
    EXPECT(rc == -1, "rank 0 allreduce without rank 1 returned %d", rc);
    EXPECT(strstr(err, "ranks not arrived: 1") != NULL, "rank 0 got: %s", err);
    EXPECT(dt >= 0.45 && dt < 4.0, "rank 0 gave up after %.2f s (timeout 0.5)",
           dt);
    printf("timeout: rank 0 after %.2f s: %s\n", dt, err);
    /* the handle stays failed */
    rc = hg_comm_barrier(c, err, sizeof err);
    EXPECT(rc == -1 && strstr(err, "unusable"), "after failure: %d %s", rc, err);
    return failures ? 1 : 0;
}

static int worker_abort(struct hg_comm *c, struct job *job)
{
    (void)job;
    char err[256] = "";
    if (hg_comm_rank(c) == 1) {
        struct timespec ts = {0, 200000000}; /* rank 0 is waiting by now */
        nanosleep(&ts, NULL);
        hg_comm_abort(c);
        return 0;
    }
    double x[100] = {0};
    double t0 = hg_now();
    int rc = hg_comm_allreduce_f64(c, x, 100, err, sizeof err);
    double dt = hg_now() - t0;
    EXPECT(rc == -1, "rank 0 allreduce with rank 1 aborted returned %d", rc);
    EXPECT(strstr(err, "rank 1 aborted") != NULL, "rank 0 got: %s", err);
    /* well before the 10 s timeout, even on a loaded machine (ASan, CI) */
    EXPECT(dt < 6.0, "rank 0 took %.2f s to notice (timeout 10 s)", dt);
    printf("abort: rank 0 after %.2f s: %s\n", dt, err);
    /* a later collective fails at once too */
    rc = hg_comm_broadcast(c, x, sizeof x, 0, err, sizeof err);
    EXPECT(rc == -1, "broadcast after abort returned %d", rc);
    return failures ? 1 : 0;
}

static int worker_exit(struct hg_comm *c, struct job *job)
{
    (void)job;
    char err[256] = "";
    if (hg_comm_rank(c) == 1)
        return 0; /* exits without a word: a crash */
    float x[100] = {0};
    double t0 = hg_now();
    int rc = hg_comm_allreduce_f32(c, x, 100, err, sizeof err);
    double dt = hg_now() - t0;
    EXPECT(rc == -1, "rank 0 allreduce with rank 1 gone returned %d", rc);
    EXPECT(strstr(err, "rank 1 (pid") && strstr(err, "has exited"),
           "rank 0 got: %s", err);
    /* well before the 10 s timeout, even on a loaded machine (ASan, CI) */
    EXPECT(dt < 6.0, "rank 0 took %.2f s to notice (timeout 10 s)", dt);
    printf("exit: rank 0 after %.2f s: %s\n", dt, err);
    return failures ? 1 : 0;
}

static int worker_mismatch(struct hg_comm *c, struct job *job)
{
    (void)job;
    char err[256] = "";
    unsigned char b[100] = {0};
    if (hg_comm_rank(c) == 0) {
        /* buffered: returns; the next call learns of rank 1's failure */
        int rc = hg_comm_send(c, b, 100, 1, err, sizeof err);
        EXPECT(rc == 0, "rank 0 send: %s", err);
        rc = hg_comm_barrier(c, err, sizeof err);
        EXPECT(rc == -1 && strstr(err, "rank 1 aborted"), "rank 0 got: %d %s",
               rc, err);
        return failures ? 1 : 0;
    }
    int rc = hg_comm_recv(c, b, 64, 0, err, sizeof err);
    EXPECT(rc == -1, "recv of 64 bytes of a 100-byte message returned %d", rc);
    EXPECT(strstr(err, "rank 1") && strstr(err, "from rank 0") &&
               strstr(err, "64") && strstr(err, "100"), "rank 1 got: %s", err);
    printf("mismatch: %s\n", err);
    return failures ? 1 : 0;
}

static int worker_p2p_timeout(struct hg_comm *c, struct job *job)
{
    (void)job;
    char err[256] = "";
    unsigned char b[10];
    if (hg_comm_rank(c) == 1) {
        struct timespec ts = {1, 0}; /* never sends */
        nanosleep(&ts, NULL);
        int rc = hg_comm_barrier(c, err, sizeof err);
        EXPECT(rc == -1 && strstr(err, "rank 0 aborted"), "rank 1 got: %d %s",
               rc, err);
        return failures ? 1 : 0;
    }
    double t0 = hg_now();
    int rc = hg_comm_recv(c, b, sizeof b, 1, err, sizeof err);
    double dt = hg_now() - t0;
    EXPECT(rc == -1 && strstr(err, "rank 1 did not send"), "rank 0 got: %d %s",
           rc, err);
    EXPECT(dt >= 0.45 && dt < 4.0, "rank 0 gave up after %.2f s (timeout 0.5)",
           dt);
    printf("recv timeout: rank 0 after %.2f s: %s\n", dt, err);
    return failures ? 1 : 0;
}

static int worker_p2p_exit(struct hg_comm *c, struct job *job)
{
    (void)job;
    char err[256] = "";
    if (hg_comm_rank(c) == 1)
        return 0; /* gone without sending */
    /* larger than the two slots: the send waits for a receiver */
    size_t n = 64u << 10;
    unsigned char *b = calloc(1, n);
    REQUIRE(b, "calloc");
    double t0 = hg_now();
    int rc = hg_comm_send(c, b, n, 1, err, sizeof err);
    double dt = hg_now() - t0;
    EXPECT(rc == -1 && strstr(err, "rank 1 (pid") && strstr(err, "has exited"),
           "rank 0 got: %d %s", rc, err);
    /* well before the 10 s timeout, even on a loaded machine (ASan, CI) */
    EXPECT(dt < 6.0, "rank 0 took %.2f s to notice (timeout 10 s)", dt);
    printf("send to an exited rank: rank 0 after %.2f s: %s\n", dt, err);
    free(b);
    return failures ? 1 : 0;
}

static void test_failure(const char *what, worker_fn *fn, double timeout_s)
{
    char err[256];
    struct hg_comm_shm_group *g;
    REQUIRE(hg_comm_shm_create(&g, 2, 8192, timeout_s, err, sizeof err) == 0,
            "create: %s", err);
    int bad = run_world(g, 2, fn, NULL);
    EXPECT(bad == 0, "%s: %d workers failed", what, bad);
    hg_comm_shm_group_free(g);
}

/* ------------------------------------------------------ comm_cases.h */

static void (*the_case)(struct hg_comm *c);
static double case_arg;

static int worker_case(struct hg_comm *c, struct job *job)
{
    (void)job;
    the_case(c);
    return failures ? 1 : 0;
}

static void run_async(struct hg_comm *c) { case_async(c); }
static void run_groups(struct hg_comm *c) { case_groups(c); }
static void run_ps(struct hg_comm *c) { case_ps(c, case_arg); }
static void run_async_timeout(struct hg_comm *c) { case_async_timeout(c, case_arg); }
static void run_async_abort(struct hg_comm *c) { case_async_abort(c, case_arg); }
static void run_ps_silent(struct hg_comm *c) { case_ps_missing(c, 0, case_arg); }
static void run_ps_dead(struct hg_comm *c) { case_ps_missing(c, 1, case_arg); }
static void run_uneven(struct hg_comm *c) { case_uneven(c); }
static void run_uneven_gather_other(struct hg_comm *c)
{
    case_uneven_mismatch(c, 0, case_arg);
}
static void run_uneven_reduce_other(struct hg_comm *c)
{
    case_uneven_mismatch(c, 1, case_arg);
}
static void run_uneven_bad(struct hg_comm *c) { case_uneven_bad_counts(c); }
static void run_uneven_dead(struct hg_comm *c) { case_uneven_dead(c, case_arg); }

/* One case in a world of its own; timeout_s is the segment's. */
static void test_case(const char *what, void (*fn)(struct hg_comm *), int world,
                      double timeout_s, double arg)
{
    char err[256];
    struct hg_comm_shm_group *g;
    REQUIRE(hg_comm_shm_create(&g, world, STAGE_BYTES, timeout_s, err,
                               sizeof err) == 0, "create: %s", err);
    struct job job = {.world = world};
    const char *only = getenv("HG_COMM_CASES");
    if (only && !strstr(what, only))
        return;
    the_case = fn;
    case_arg = arg;
    double t0 = hg_now();
    int bad = run_world(g, world, worker_case, &job);
    EXPECT(bad == 0, "%s, world %d: %d workers failed", what, world, bad);
    printf("world %d: %s %s (%.2f s)\n", world, what, bad ? "FAILED" : "ok",
           hg_now() - t0);
    hg_comm_shm_group_free(g);
}

static void test_errors(void)
{
    char err[256];
    struct hg_comm_shm_group *g = NULL;
    EXPECT(hg_comm_shm_create(&g, 0, 1 << 20, 1.0, err, sizeof err) == -1 && !g,
           "world 0 accepted");
    EXPECT(hg_comm_shm_create(&g, 2, 100, 1.0, err, sizeof err) == -1,
           "tiny staging accepted");
    EXPECT(hg_comm_shm_create(&g, 2, 1 << 20, 0.0, err, sizeof err) == -1,
           "zero timeout accepted");
    REQUIRE(hg_comm_shm_create(&g, 2, 1 << 20, 1.0, err, sizeof err) == 0,
            "create: %s", err);
    struct hg_comm *c = NULL, *c2 = NULL;
    EXPECT(hg_comm_shm_join(&c, g, 2, err, sizeof err) == -1 && !c,
           "rank 2 of 2 accepted");
    EXPECT(hg_comm_shm_join(&c, g, 0, err, sizeof err) == 0, "join: %s", err);
    EXPECT(hg_comm_shm_join(&c2, g, 0, err, sizeof err) == -1 &&
               strstr(err, "twice"), "rank 0 joined twice: %s", err);
    EXPECT(hg_comm_broadcast(c, err, 1, 5, err, sizeof err) == -1,
           "root 5 of 2 accepted");
    hg_comm_free(c);
    hg_comm_shm_group_free(g);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int before = count_ours();
    /* HG_COMM_CASES=<part of a name>: those comm_cases.h cases only */
    if (!getenv("HG_COMM_CASES")) {
        test_errors();
        for (int world = 1; world <= 4; world++)
            test_collectives(world);
        for (int world = 1; world <= 4; world++)
            test_gather_p2p(world);
        test_failure("timeout", worker_timeout, 0.5);
        test_failure("abort", worker_abort, 10.0);
        test_failure("exit", worker_exit, 10.0);
        test_failure("mismatch", worker_mismatch, 10.0);
        test_failure("recv timeout", worker_p2p_timeout, 0.5);
        test_failure("send to an exited rank", worker_p2p_exit, 10.0);
    }
    for (int world = 1; world <= 4; world++) {
        test_case("async", run_async, world, 30.0, 0);
        test_case("groups", run_groups, world, 30.0, 0);
        test_case("parameter server", run_ps, world, 30.0, 10.0);
        test_case("uneven counts", run_uneven, world, 30.0, 0);
    }
    test_case("uneven, other counts (allgatherv)", run_uneven_gather_other, 3, 10.0, 10.0);
    test_case("uneven, other counts (reduce_scatterv)", run_uneven_reduce_other, 3, 10.0,
              10.0);
    test_case("uneven, bad counts", run_uneven_bad, 3, 10.0, 0);
    may_die = 2;
    test_case("uneven, a killed rank", run_uneven_dead, 3, 10.0, 10.0);
    may_die = -1;
    test_case("async timeout", run_async_timeout, 2, 0.5, 0.5);
    test_case("async abort", run_async_abort, 2, 10.0, 10.0);
    test_case("ps, a silent client", run_ps_silent, 3, 10.0, 1.0);
    may_die = 2;
    test_case("ps, a killed client", run_ps_dead, 3, 10.0, 5.0);
    may_die = -1;
    EXPECT(count_ours() == before, "/dev/shm hgcomm.* entries: %d before, %d after",
           before, count_ours());
    printf("%s\n", failures ? "FAIL" : "PASS");
    return failures ? 1 : 0;
}
