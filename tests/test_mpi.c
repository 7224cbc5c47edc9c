/* test_mpi.c - the mpi backend of comm/, one process per rank under mpirun
 * (tests/mpi.sh runs it for 1..4 ranks): allreduce (f32, f64) bitwise
 * against the rank-order sum shm gives (the same reference as
 * test_comm.c), broadcast, allgather (aliased and not), send/recv in a
 * ring and next to a collective, sizes larger than one MPI piece, a recv
 * timeout naming the peer, a size mismatch naming both ranks.  Then
 * comm_cases.h's cases: asynchronous requests, groups
 * (MPI_Comm_create_group), the parameter server (3 clients at once when
 * there are 4 ranks; a silent client named at the PS timeout; a killed
 * process cannot be tested: mpirun ends the whole job) when MPI gave
 * MPI_THREAD_MULTIPLE; allgatherv and reduce_scatterv with uneven
 * counts (world, groups, asynchronous), other counts on one rank named.
 * SKIP (77) when built without MPI. */
#define _GNU_SOURCE

#include "comm/hg_comm.h"
#include "tests/hg_test.h"
#include "tests/comm_test.h"
#include "tests/comm_cases.h"

#include <stdint.h>
#include <string.h>
#include <time.h>

static const size_t sizes[] = {0, 1, 7, 1000, (3u << 20) + 5};
#define NSIZES (sizeof sizes / sizeof sizes[0])

static unsigned char pat(int rank, int msg, size_t i)
{
    return case_pat(rank, msg, i);
}

static size_t count_bad(const unsigned char *b, size_t n, int rank, int msg)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += b[i] != pat(rank, msg, i);
    return bad;
}

static void test_allreduce(struct hg_comm *c)
{
    int me = hg_comm_rank(c), world = hg_comm_world(c);
    char err[256];
    for (size_t s = 0; s < NSIZES; s++) {
        size_t n = sizes[s];
        float *x = malloc(n * sizeof *x + 1);
        double *y = malloc(n * sizeof *y + 1);
        REQUIRE(x && y, "malloc");
        for (size_t i = 0; i < n; i++) {
            x[i] = (float)value(me, i);
            y[i] = value(me, i);
        }
        REQUIRE(hg_comm_allreduce_f32(c, x, n, err, sizeof err) == 0,
                "rank %d allreduce_f32 %zu: %s", me, n, err);
        REQUIRE(hg_comm_allreduce_f64(c, y, n, err, sizeof err) == 0,
                "rank %d allreduce_f64 %zu: %s", me, n, err);
        size_t bad32 = 0, bad64 = 0;
        for (size_t i = 0; i < n; i++) {
            float a = (float)value(0, i);
            double b = value(0, i);
            for (int r = 1; r < world; r++) {
                a += (float)value(r, i);
                b += value(r, i);
            }
            bad32 += memcmp(&a, &x[i], sizeof a) != 0;
            bad64 += memcmp(&b, &y[i], sizeof b) != 0;
        }
        EXPECT(bad32 == 0, "world %d rank %d: f32 sum of %zu: %zu elements "
               "differ from the rank-order sum", world, me, n, bad32);
        EXPECT(bad64 == 0, "world %d rank %d: f64 sum of %zu: %zu elements "
               "differ from the rank-order sum", world, me, n, bad64);
        free(x);
        free(y);
    }
}

static void test_broadcast_allgather(struct hg_comm *c)
{
    int me = hg_comm_rank(c), world = hg_comm_world(c);
    char err[256];
    int root = world - 1;
    for (size_t s = 0; s < NSIZES; s++) {
        size_t n = sizes[s];
        unsigned char *b = malloc(n + 1), *all = malloc((size_t)world * n + 1);
        REQUIRE(b && all, "malloc");
        for (size_t i = 0; i < n; i++)
            b[i] = me == root ? pat(root, (int)s, i) : 0xee;
        REQUIRE(hg_comm_broadcast(c, b, n, root, err, sizeof err) == 0,
                "rank %d broadcast %zu: %s", me, n, err);
        EXPECT(count_bad(b, n, root, (int)s) == 0,
               "world %d rank %d: broadcast of %zu wrong", world, me, n);

        for (size_t i = 0; i < n; i++)
            b[i] = pat(me, (int)s, i);
        memset(all, 0xee, (size_t)world * n);
        REQUIRE(hg_comm_allgather(c, b, all, n, err, sizeof err) == 0,
                "rank %d allgather %zu: %s", me, n, err);
        for (int r = 0; r < world; r++)
            EXPECT(count_bad(all + (size_t)r * n, n, r, (int)s) == 0,
                   "world %d rank %d: allgather of %zu: rank %d's block wrong",
                   world, me, n, r);
        memset(all, 0xee, (size_t)world * n);
        memcpy(all + (size_t)me * n, b, n);
        REQUIRE(hg_comm_allgather(c, all + (size_t)me * n, all, n, err,
                                  sizeof err) == 0,
                "rank %d allgather in place %zu: %s", me, n, err);
        for (int r = 0; r < world; r++)
            EXPECT(count_bad(all + (size_t)r * n, n, r, (int)s) == 0,
                   "world %d rank %d: in-place allgather of %zu: rank %d's "
                   "block wrong", world, me, n, r);
        free(b);
        free(all);
    }
}

static void test_p2p(struct hg_comm *c)
{
    int me = hg_comm_rank(c), world = hg_comm_world(c);
    char err[256];
    if (world == 1)
        return;
    int right = (me + 1) % world, left = (me + world - 1) % world;
    for (size_t s = 0; s < NSIZES; s++) {
        size_t n = sizes[s];
        unsigned char *out = malloc(n + 1), *in = malloc(n + 1);
        REQUIRE(out && in, "malloc");
        for (size_t i = 0; i < n; i++)
            out[i] = pat(me, (int)s, i);
        memset(in, 0xee, n);
        /* large messages wait for the receiver: even ranks send first */
        for (int step = 0; step < 2; step++) {
            if ((step == 0) == (me % 2 == 0))
                REQUIRE(hg_comm_send(c, out, n, right, err, sizeof err) == 0,
                        "rank %d send %zu to %d: %s", me, n, right, err);
            else
                REQUIRE(hg_comm_recv(c, in, n, left, err, sizeof err) == 0,
                        "rank %d recv %zu from %d: %s", me, n, left, err);
        }
        EXPECT(count_bad(in, n, left, (int)s) == 0,
               "world %d rank %d: ring recv of %zu from %d wrong", world, me, n,
               left);
        free(out);
        free(in);
    }
    /* two small messages, a collective, then the receives: in order */
    unsigned char a[100], b[7], in[100];
    for (size_t i = 0; i < sizeof a; i++)
        a[i] = pat(me, 100, i);
    for (size_t i = 0; i < sizeof b; i++)
        b[i] = pat(me, 101, i);
    REQUIRE(hg_comm_send(c, a, sizeof a, right, err, sizeof err) == 0,
            "rank %d send: %s", me, err);
    REQUIRE(hg_comm_send(c, b, sizeof b, right, err, sizeof err) == 0,
            "rank %d send: %s", me, err);
    REQUIRE(hg_comm_barrier(c, err, sizeof err) == 0, "rank %d barrier: %s", me,
            err);
    REQUIRE(hg_comm_recv(c, in, sizeof a, left, err, sizeof err) == 0,
            "rank %d recv: %s", me, err);
    EXPECT(count_bad(in, sizeof a, left, 100) == 0, "rank %d: first message", me);
    REQUIRE(hg_comm_recv(c, in, sizeof b, left, err, sizeof err) == 0,
            "rank %d recv: %s", me, err);
    EXPECT(count_bad(in, sizeof b, left, 101) == 0, "rank %d: second message", me);
}

/* On handles of their own (a failed call breaks its handle): a recv that
 * times out naming the peer, a size mismatch naming both ranks. */
static void test_failures(struct hg_comm *c)
{
    int me = hg_comm_rank(c), world = hg_comm_world(c);
    char err[256] = "";
    if (world == 1)
        return;
    setenv("HG_COMM_TIMEOUT_S", "0.5", 1);
    struct hg_comm *t, *m;
    REQUIRE(hg_comm_mpi_new(&t, err, sizeof err) == 0, "second handle: %s", err);
    REQUIRE(hg_comm_mpi_new(&m, err, sizeof err) == 0, "third handle: %s", err);
    unsetenv("HG_COMM_TIMEOUT_S");
    if (me == 0) {
        unsigned char b[10];
        double t0 = hg_now();
        int rc = hg_comm_recv(t, b, sizeof b, 1, err, sizeof err);
        double dt = hg_now() - t0;
        EXPECT(rc == -1 && strstr(err, "rank 0 waited") &&
                   strstr(err, "rank 1 did not send"), "rank 0 got: %d %s", rc,
               err);
        EXPECT(dt >= 0.45 && dt < 3.0, "gave up after %.2f s (timeout 0.5)", dt);
        printf("recv timeout: after %.2f s: %s\n", dt, err);
        rc = hg_comm_barrier(t, err, sizeof err);
        EXPECT(rc == -1 && strstr(err, "unusable"), "after failure: %d %s", rc,
               err);
    }
    REQUIRE(hg_comm_barrier(c, err, sizeof err) == 0, "rank %d barrier: %s", me,
            err);

    unsigned char b[100] = {0};
    if (me == 0) {
        REQUIRE(hg_comm_send(m, b, 100, 1, err, sizeof err) == 0,
                "rank 0 send: %s", err);
    } else if (me == 1) {
        int rc = hg_comm_recv(m, b, 64, 0, err, sizeof err);
        EXPECT(rc == -1 && strstr(err, "rank 1") && strstr(err, "from rank 0") &&
                   strstr(err, "64") && strstr(err, "100"),
               "rank 1 got: %d %s", rc, err);
        printf("mismatch: %s\n", err);
    }
    REQUIRE(hg_comm_barrier(c, err, sizeof err) == 0, "rank %d barrier: %s", me,
            err);
    hg_comm_free(m);
    hg_comm_free(t);
}

/* allgatherv and reduce_scatterv (comm_cases.h); then, on handles of
 * their own (a failure breaks its handle), rank 0 alone in an
 * allgatherv (a timeout naming the others) and other counts on rank 1
 * named by every rank.  (Not the bad counts nor a killed rank: our abort
 * and mpirun end the whole job.) */
static void test_uneven(struct hg_comm *c)
{
    int me = hg_comm_rank(c), world = hg_comm_world(c);
    char err[256] = "";
    case_uneven(c);
    if (world < 2)
        return;
    /* rank 0 alone in an allgatherv: it gives up after the handle's
     * timeout naming the ranks whose messages are missing */
    setenv("HG_COMM_TIMEOUT_S", "0.5", 1);
    struct hg_comm *t;
    REQUIRE(hg_comm_mpi_new(&t, err, sizeof err) == 0, "handle: %s", err);
    unsetenv("HG_COMM_TIMEOUT_S");
    if (me == 0) {
        size_t counts[8] = {0};
        unsigned char b[8 * 10];
        for (int r = 0; r < world && r < 8; r++)
            counts[r] = 10;
        double t0 = hg_now();
        int rc = hg_comm_allgatherv(t, b, b, counts, err, sizeof err);
        double dt = hg_now() - t0;
        EXPECT(rc == -1 && strstr(err, "still waiting for rank(s) 1") &&
                   dt >= 0.45 && dt < 3.0,
               "rank 0 alone in an allgatherv: %d after %.2f s: %s", rc, dt, err);
        printf("uneven timeout: after %.2f s: %s\n", dt, err);
    }
    REQUIRE(hg_comm_barrier(c, err, sizeof err) == 0, "rank %d barrier: %s", me,
            err);
    hg_comm_free(t);
    for (int reduce = 0; reduce < 2; reduce++) {
        struct hg_comm *m;
        REQUIRE(hg_comm_mpi_new(&m, err, sizeof err) == 0, "handle: %s", err);
        case_uneven_mismatch(m, reduce, 300.0);
        hg_comm_free(m);
        REQUIRE(hg_comm_barrier(c, err, sizeof err) == 0, "rank %d barrier: %s",
                me, err);
    }
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    char err[256] = "";
    struct hg_comm *c = NULL;
    if (!hg_comm_have_mpi()) {
        EXPECT(hg_comm_mpi_new(&c, err, sizeof err) == -1 && !c &&
                   strstr(err, "without MPI"), "without MPI: %s", err);
        printf("SKIP: built without MPI (%s)\n", err);
        return failures ? 1 : 77;
    }
    REQUIRE(hg_comm_mpi_new(&c, err, sizeof err) == 0, "mpi_new: %s", err);
    int me = hg_comm_rank(c), world = hg_comm_world(c);
    EXPECT(strcmp(hg_comm_backend(c), "mpi") == 0, "backend %s",
           hg_comm_backend(c));
    double t0 = hg_now();
    test_allreduce(c);
    test_broadcast_allgather(c);
    test_p2p(c);
    for (int i = 0; i < 50; i++)
        REQUIRE(hg_comm_barrier(c, err, sizeof err) == 0, "rank %d barrier: %s",
                me, err);
    test_failures(c);
    double t1 = hg_now();
    case_async(c);
    if (me == 0)
        printf("world %d: async ok (%.2f s)\n", world, hg_now() - t1);
    t1 = hg_now();
    case_groups(c);
    if (me == 0)
        printf("world %d: groups ok (%.2f s)\n", world, hg_now() - t1);
    t1 = hg_now();
    test_uneven(c);
    if (me == 0)
        printf("world %d: uneven counts ok (%.2f s)\n", world, hg_now() - t1);
    if (hg_comm_caps(c) & HG_COMM_PS) {
        t1 = hg_now();
        case_ps(c, 10.0);
        if (world >= 3)
            case_ps_missing(c, 0, 1.0);
        REQUIRE(hg_comm_barrier(c, err, sizeof err) == 0, "rank %d barrier: %s",
                me, err);
        if (me == 0)
            printf("world %d: parameter server ok (%.2f s)\n", world,
                   hg_now() - t1);
    } else {
        char e2[512] = "";
        static const int cl[1] = {0};
        static const size_t numel[1] = {1};
        struct hg_ps_config cfg = {.server = 0, .clients = cl, .nclients = 1,
                                   .nparams = 1, .numel = numel, .timeout_s = 1};
        struct hg_ps *ps = NULL;
        EXPECT(hg_ps_new(&ps, c, &cfg, e2, sizeof e2) == -1 && !ps &&
                   strstr(e2, "MPI_THREAD_MULTIPLE"), "ps without threads: %s", e2);
        if (me == 0)
            printf("world %d: no MPI_THREAD_MULTIPLE, no parameter server: %s\n",
                   world, e2);
    }
    /* every rank's verdict, so that rank 0 can say it */
    double bad = failures;
    REQUIRE(hg_comm_allreduce_f64(c, &bad, 1, err, sizeof err) == 0,
            "rank %d: %s", me, err);
    if (me == 0)
        printf("world %d: %s (%.2f s)\n", world, bad ? "FAIL" : "PASS",
               hg_now() - t0);
    hg_comm_free(c);
    return failures ? 1 : 0;
}
