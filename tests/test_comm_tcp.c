/* test_comm_tcp.c - the tcp backend of comm/, the same checks as
 * test_comm.c's for shm: allreduce (f32, f64) bitwise against a rank-order
 * sum computed in the parent, broadcast, allgather, send/recv around a
 * ring, barriers, for worlds 1-4; then failures: a timeout naming the
 * silent peer, abort and exit naming the rank gone, mismatched send/recv
 * sizes naming both ranks, stray connections to a rank's port during
 * set-up.  Then comm_cases.h's cases, each in a world of its own:
 * asynchronous requests, groups (connections of their own through the
 * store), the parameter server (3 clients at once; a silent client and a
 * killed one named), allgatherv and reduce_scatterv with uneven counts
 * (world, groups, asynchronous; other counts on one rank, bad counts, a
 * killed rank).  HG_COMM_CASES=<part of a case's name> runs those only.
 *
 * Ranks are forked children; the store server runs in the parent, started
 * after the fork (its thread would not survive fork); each child learns
 * the port through a pipe. */
#define _GNU_SOURCE

#include "comm/hg_comm.h"
#include "comm/store-impl.h"
#include "tests/hg_test.h"
#include "tests/comm_test.h"
#include "tests/comm_cases.h"

#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TOKEN "00112233445566778899aabbccddeeff"
#define CHILD_LIMIT_S 120
#define MAXW 8

static const size_t sizes[] = {1, 7, 1000, 3u << 20};
#define NSIZES (sizeof sizes / sizeof sizes[0])

struct job {
    int world;
    double timeout_s;
    float *want32[NSIZES];
    double *want64[NSIZES];
};

typedef int worker_fn(struct hg_comm *c, struct hg_store *st, struct job *job);

static int may_die = -1; /* a rank whose SIGKILL is the test */

/* Forks world ranks running fn over a tcp communicator; returns the number
 * of ranks that did not exit 0 in time. */
static int run_world(int world, worker_fn *fn, struct job *job)
{
    pid_t pids[MAXW];
    int pipes[MAXW][2];
    fflush(stdout);
    for (int r = 0; r < world; r++) {
        REQUIRE(pipe(pipes[r]) == 0, "pipe");
        pids[r] = fork();
        REQUIRE(pids[r] >= 0, "fork");
        if (pids[r] == 0) {
            for (int q = 0; q <= r; q++)
                close(pipes[q][1]);
            int port = 0, rc = 1;
            if (read(pipes[r][0], &port, sizeof port) != (ssize_t)sizeof port)
                _exit(3);
            char err[512];
            struct hg_store *st;
            struct hg_comm *c;
            if (hg_store_connect(&st, "127.0.0.1", port, TOKEN, r, 30.0, err,
                                 sizeof err) != 0) {
                printf("rank %d: %s\n", r, err);
                _exit(1);
            }
            if (hg_comm_tcp_new(&c, st, r, world, job->timeout_s, err,
                                sizeof err) != 0) {
                printf("rank %d: %s\n", r, err);
            } else {
                if (strcmp(hg_comm_backend(c), "tcp") != 0 ||
                    hg_comm_rank(c) != r || hg_comm_world(c) != world)
                    printf("rank %d: wrong handle\n", r);
                else
                    rc = fn(c, st, job);
                hg_comm_free(c);
            }
            hg_store_close(st);
            fflush(stdout);
            _exit(rc);
        }
        close(pipes[r][0]);
    }
    char err[512];
    struct hg_store_server *s;
    REQUIRE(hg_store_server_start(&s, "127.0.0.1", 0, TOKEN, world, err,
                                  sizeof err) == 0, "server: %s", err);
    int port = hg_store_server_port(s);
    for (int r = 0; r < world; r++) {
        REQUIRE(write(pipes[r][1], &port, sizeof port) == (ssize_t)sizeof port,
                "write");
        close(pipes[r][1]);
    }
    int bad = 0, left = world, done[MAXW] = {0};
    double deadline = hg_now() + CHILD_LIMIT_S;
    while (left > 0 && hg_now() < deadline) {
        for (int r = 0; r < world; r++) {
            int stt = 0;
            if (done[r] || waitpid(pids[r], &stt, WNOHANG) != pids[r])
                continue;
            done[r] = 1;
            left--;
            if (r == may_die && WIFSIGNALED(stt) && WTERMSIG(stt) == SIGKILL)
                continue;
            if (!WIFEXITED(stt) || WEXITSTATUS(stt) != 0) {
                printf("rank %d exited with status 0x%x\n", r, stt);
                bad++;
            }
        }
        sleep_s(0.002);
    }
    for (int r = 0; r < world; r++)
        if (!done[r]) {
            printf("rank %d still running after %d s: killed\n", r,
                   CHILD_LIMIT_S);
            kill(pids[r], SIGKILL);
            waitpid(pids[r], NULL, 0);
            bad++;
        }
    hg_store_server_stop(s);
    return bad;
}

/* ------------------------------------------------------------ collectives */

static int worker_collectives(struct hg_comm *c, struct hg_store *st,
                              struct job *job)
{
    (void)st;
    int me = hg_comm_rank(c), world = hg_comm_world(c);
    char err[512];
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
    /* allgather, separate send buffer and in place */
    size_t gb = 1001;
    unsigned char *send = malloc(gb), *recv = malloc(gb * (size_t)world);
    REQUIRE(send && recv, "malloc");
    for (int pass = 0; pass < 2; pass++) {
        memset(recv, 0xee, gb * (size_t)world);
        unsigned char *src = pass ? recv + (size_t)me * gb : send;
        for (size_t i = 0; i < gb; i++)
            src[i] = (unsigned char)(i + 13 * (size_t)me);
        REQUIRE(hg_comm_allgather(c, src, recv, gb, err, sizeof err) == 0,
                "rank %d allgather: %s", me, err);
        size_t bad = 0;
        for (int r = 0; r < world; r++)
            for (size_t i = 0; i < gb; i++)
                bad += recv[(size_t)r * gb + i] != (unsigned char)(i + 13 * (size_t)r);
        EXPECT(bad == 0, "world %d rank %d: allgather pass %d: %zu bytes wrong",
               world, me, pass, bad);
    }
    free(send);
    free(recv);
    /* a ring: even ranks send first, odd ranks receive first */
    if (world > 1) {
        size_t rb = 300000;
        unsigned char *out = malloc(rb), *in = malloc(rb);
        REQUIRE(out && in, "malloc");
        for (size_t i = 0; i < rb; i++)
            out[i] = (unsigned char)(i * 3 + (size_t)me);
        int to = (me + 1) % world, from = (me + world - 1) % world;
        int rc1, rc2;
        if (me % 2 == 0) {
            rc1 = hg_comm_send(c, out, rb, to, err, sizeof err);
            rc2 = rc1 ? -1 : hg_comm_recv(c, in, rb, from, err, sizeof err);
        } else {
            rc2 = hg_comm_recv(c, in, rb, from, err, sizeof err);
            rc1 = rc2 ? -1 : hg_comm_send(c, out, rb, to, err, sizeof err);
        }
        REQUIRE(rc1 == 0 && rc2 == 0, "rank %d ring: %s", me, err);
        size_t bad = 0;
        for (size_t i = 0; i < rb; i++)
            bad += in[i] != (unsigned char)(i * 3 + (size_t)from);
        EXPECT(bad == 0, "world %d rank %d: ring: %zu bytes wrong", world, me,
               bad);
        free(out);
        free(in);
    }
    for (int i = 0; i < 200; i++)
        REQUIRE(hg_comm_barrier(c, err, sizeof err) == 0, "rank %d barrier %d: %s",
                me, i, err);
    return failures ? 1 : 0;
}

static void test_collectives(int world)
{
    struct job job = {.world = world, .timeout_s = 30.0};
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
    double t0 = hg_now();
    int bad = run_world(world, worker_collectives, &job);
    EXPECT(bad == 0, "world %d: %d ranks failed", world, bad);
    printf("tcp world %d: collectives %s (%.2f s)\n", world, bad ? "FAILED" : "ok",
           hg_now() - t0);
    for (size_t s = 0; s < NSIZES; s++) {
        free(job.want32[s]);
        free(job.want64[s]);
    }
}

/* ------------------------------------------------------------ failures */

static int worker_timeout(struct hg_comm *c, struct hg_store *st,
                          struct job *job)
{
    (void)st, (void)job;
    char err[512] = "";
    float x[16] = {0};
    if (hg_comm_rank(c) == 1) {
        sleep_s(1.5); /* never joins the allreduce; finds rank 0 gone */
        double t0 = hg_now();
        int rc = hg_comm_barrier(c, err, sizeof err);
        /* rank 0's allreduce header may still be in the socket, ahead of
         * the close: then the calls are named instead */
        EXPECT(rc == -1 && (strstr(err, "rank 0 closed the connection") ||
                            strstr(err, "rank 0 is in allreduce_f32")),
               "rank 1 barrier after rank 0 failed: %d %s", rc, err);
        printf("tcp timeout: rank 1: %s\n", err);
        EXPECT(hg_now() - t0 < 0.4, "rank 1 took %.2f s to fail", hg_now() - t0);
        return failures ? 1 : 0;
    }
    double t0 = hg_now();
    int rc = hg_comm_allreduce_f32(c, x, 16, err, sizeof err);
    double dt = hg_now() - t0;
    EXPECT(rc == -1 && strstr(err, "tcp: rank 0:") &&
               strstr(err, "waiting for rank 1"), "rank 0 got: %d %s", rc, err);
    EXPECT(dt >= 0.45 && dt < 4.0, "rank 0 gave up after %.2f s (timeout 0.5)",
           dt);
    printf("tcp timeout: rank 0 after %.2f s: %s\n", dt, err);
    rc = hg_comm_barrier(c, err, sizeof err);
    EXPECT(rc == -1 && strstr(err, "unusable"), "after failure: %d %s", rc, err);
    return failures ? 1 : 0;
}

static int worker_abort(struct hg_comm *c, struct hg_store *st, struct job *job)
{
    (void)st, (void)job;
    char err[512] = "";
    if (hg_comm_rank(c) == 1) {
        sleep_s(0.2);
        hg_comm_abort(c);
        sleep_s(1.0); /* still alive: the abort, not the exit, is seen */
        return 0;
    }
    double x[100] = {0};
    double t0 = hg_now();
    int rc = hg_comm_allreduce_f64(c, x, 100, err, sizeof err);
    double dt = hg_now() - t0;
    EXPECT(rc == -1 && strstr(err, "tcp: rank 0: rank 1 closed the connection "
                                   "(exited?)"), "rank 0 got: %d %s", rc, err);
    EXPECT(dt < 6.0, "rank 0 took %.2f s to notice (timeout 10 s)", dt);
    printf("tcp abort: rank 0 after %.2f s: %s\n", dt, err);
    EXPECT(hg_comm_broadcast(c, x, sizeof x, 0, err, sizeof err) == -1,
           "broadcast after a failure");
    return failures ? 1 : 0;
}

/* world 3: rank 2 exits; ranks 0 and 1 fail naming it */
static int worker_exit(struct hg_comm *c, struct hg_store *st, struct job *job)
{
    (void)st, (void)job;
    char err[512] = "";
    int me = hg_comm_rank(c);
    if (me == 2)
        _exit(0); /* without a word: a crash */
    float x[100] = {0};
    double t0 = hg_now();
    int rc = hg_comm_allreduce_f32(c, x, 100, err, sizeof err);
    double dt = hg_now() - t0;
    EXPECT(rc == -1 && strstr(err, "closed the connection"), "rank %d got: %d %s",
           me, rc, err);
    /* rank 0 may see rank 1's failure first: either way a closed peer */
    EXPECT(me == 1 ? strstr(err, "rank 2 closed") != NULL : 1, "rank 1: %s", err);
    EXPECT(dt < 6.0, "rank %d took %.2f s to notice (timeout 10 s)", me, dt);
    printf("tcp exit: rank %d after %.2f s: %s\n", me, dt, err);
    return failures ? 1 : 0;
}

static int worker_mismatch(struct hg_comm *c, struct hg_store *st,
                           struct job *job)
{
    (void)st, (void)job;
    char err[512] = "", b[100] = {0};
    if (hg_comm_rank(c) == 0) {
        /* goes out whole (socket buffers); the receiver fails */
        EXPECT(hg_comm_send(c, b, 100, 1, err, sizeof err) == 0, "send: %s", err);
        sleep_s(0.3);
        return failures ? 1 : 0;
    }
    int rc = hg_comm_recv(c, b, 50, 0, err, sizeof err);
    EXPECT(rc == -1 && strstr(err, "tcp: rank 1: recv of 50 bytes from rank 0, "
                                   "but rank 0 sent 100 bytes"),
           "mismatch: %d %s", rc, err);
    printf("tcp mismatch: %s\n", err);
    return failures ? 1 : 0;
}

/* Before rank 1 joins, it knocks on rank 0's port with garbage, silence
 * and a wrong token: rank 0 must still accept the real rank 1. */
static int worker_stray(struct hg_comm *c, struct hg_store *st, struct job *job)
{
    (void)st, (void)job;
    char err[512];
    float x[4] = {1, 2, 3, 4};
    int rc = hg_comm_allreduce_f32(c, x, 4, err, sizeof err);
    EXPECT(rc == 0 && x[0] == 2 && x[3] == 8, "allreduce after strays: %s", err);
    return failures ? 1 : 0;
}

static int stray_fd(const char *addr)
{
    char host[128];
    const char *colon = strrchr(addr, ':');
    REQUIRE(colon && (size_t)(colon - addr) < sizeof host, "addr '%s'", addr);
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = '\0';
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai;
    REQUIRE(getaddrinfo(host, colon + 1, &hints, &ai) == 0, "getaddrinfo");
    int fd = socket(ai->ai_family, SOCK_STREAM, 0);
    REQUIRE(fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0,
            "connect to %s: %s", addr, strerror(errno));
    freeaddrinfo(ai);
    return fd;
}

static void test_stray(void)
{
    /* run_world makes the communicators itself; here rank 1 first knocks */
    pid_t pids[2];
    int pipes[2][2];
    fflush(stdout);
    for (int r = 0; r < 2; r++) {
        REQUIRE(pipe(pipes[r]) == 0, "pipe");
        pids[r] = fork();
        REQUIRE(pids[r] >= 0, "fork");
        if (pids[r] == 0) {
            for (int q = 0; q <= r; q++)
                close(pipes[q][1]);
            int port = 0;
            if (read(pipes[r][0], &port, sizeof port) != (ssize_t)sizeof port)
                _exit(3);
            char err[512];
            struct hg_store *st;
            struct hg_comm *c;
            REQUIRE(hg_store_connect(&st, "127.0.0.1", port, TOKEN, r, 30.0, err,
                                     sizeof err) == 0, "connect: %s", err);
            int fds[3] = {-1, -1, -1};
            if (r == 1) {
                char addr[128];
                size_t len;
                REQUIRE(hg_store_get(st, "tcp/1/addr/0", addr, sizeof addr - 1,
                                     &len, err, sizeof err) == 0, "get: %s", err);
                addr[len] = '\0';
                fds[0] = stray_fd(addr); /* silent */
                fds[1] = stray_fd(addr);
                EXPECT(write(fds[1], "garbage garbage garbage garbage "
                                     "garbage garbage", 47) == 47, "write");
                fds[2] = stray_fd(addr);
                unsigned char hello[16 + HG_STORE_TOKEN_LEN] = {0x48, 0x47, 0x54,
                                                                0x43, 1};
                hello[8] = 1;  /* rank 1 */
                hello[12] = 2; /* of world 2 */
                memcpy(hello + 16, "ffffffffffffffffffffffffffffffff", 32);
                EXPECT(write(fds[2], hello, sizeof hello) == (ssize_t)sizeof hello,
                       "write");
            }
            int rc = 1;
            if (hg_comm_tcp_new(&c, st, r, 2, 10.0, err, sizeof err) != 0) {
                printf("rank %d: %s\n", r, err);
            } else {
                rc = worker_stray(c, st, NULL);
                hg_comm_free(c);
            }
            if (r == 1) {
                /* the garbage and the wrong token were shut out */
                char b[16];
                EXPECT(read(fds[1], b, sizeof b) <= 0, "garbage got an answer");
                EXPECT(read(fds[2], b, sizeof b) <= 0, "wrong token got an answer");
                for (int i = 0; i < 3; i++)
                    close(fds[i]);
                rc |= failures ? 1 : 0;
            }
            hg_store_close(st);
            fflush(stdout);
            _exit(rc);
        }
        close(pipes[r][0]);
    }
    char err[512];
    struct hg_store_server *s;
    REQUIRE(hg_store_server_start(&s, "127.0.0.1", 0, TOKEN, 2, err, sizeof err) == 0,
            "server: %s", err);
    int port = hg_store_server_port(s);
    for (int r = 0; r < 2; r++) {
        REQUIRE(write(pipes[r][1], &port, sizeof port) == (ssize_t)sizeof port,
                "write");
        close(pipes[r][1]);
    }
    for (int r = 0; r < 2; r++) {
        int stt = 0;
        waitpid(pids[r], &stt, 0);
        EXPECT(WIFEXITED(stt) && WEXITSTATUS(stt) == 0, "stray: rank %d status 0x%x",
               r, stt);
    }
    hg_store_server_stop(s);
}

static void test_failure(const char *what, int world, worker_fn *fn,
                         double timeout_s)
{
    struct job job = {.world = world, .timeout_s = timeout_s};
    int bad = run_world(world, fn, &job);
    EXPECT(bad == 0, "%s: %d ranks failed", what, bad);
}

/* ------------------------------------------------------ comm_cases.h */

static void (*the_case)(struct hg_comm *c);
static double case_arg;

static int worker_case(struct hg_comm *c, struct hg_store *st, struct job *job)
{
    (void)st, (void)job;
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

/* One case in a world of its own; timeout_s is the handles'. */
static void test_case(const char *what, void (*fn)(struct hg_comm *), int world,
                      double timeout_s, double arg)
{
    struct job job = {.world = world, .timeout_s = timeout_s};
    const char *only = getenv("HG_COMM_CASES");
    if (only && !strstr(what, only))
        return;
    the_case = fn;
    case_arg = arg;
    double t0 = hg_now();
    int bad = run_world(world, worker_case, &job);
    EXPECT(bad == 0, "%s, world %d: %d ranks failed", what, world, bad);
    printf("world %d: %s %s (%.2f s)\n", world, what, bad ? "FAILED" : "ok",
           hg_now() - t0);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGPIPE, SIG_IGN);
    /* HG_COMM_CASES=<part of a name>: those comm_cases.h cases only */
    if (!getenv("HG_COMM_CASES")) {
        for (int world = 1; world <= 4; world++)
            test_collectives(world);
        test_failure("timeout", 2, worker_timeout, 0.5);
        test_failure("abort", 2, worker_abort, 10.0);
        test_failure("exit", 3, worker_exit, 10.0);
        test_failure("mismatch", 2, worker_mismatch, 10.0);
        test_stray();
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
    printf("%s\n", failures ? "FAIL" : "PASS");
    return failures ? 1 : 0;
}
