/* comm_cases.h - the checks of asynchronous calls, groups and the
 * parameter server that test_comm (shm), test_comm_tcp (tcp) and test_mpi
 * (mpi) each run over their own communicators.  Every case is a function
 * of one rank's handle, run by every rank of it; it returns nothing and
 * counts failures with EXPECT/REQUIRE.  Include after hg_test.h and
 * comm_test.h. */
#ifndef HG_COMM_CASES_H
#define HG_COMM_CASES_H

#include "comm/hg_comm.h"

#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A byte pattern naming its rank, its message and its offset. */
static inline unsigned char case_pat(int rank, int msg, size_t i)
{
    return (unsigned char)(i * 131 + (size_t)rank * 29 + (size_t)msg * 7 + 1);
}

/* ----------------------------------------------------------- async */

/* Sends as requests (hg_comm_send_start): rank 0 starts two sends to rank
 * 1 (one beyond any mailbox) and a third after a blocking call; rank 1
 * receives them in order with the blocking recv: the same bytes. */
static inline void case_send_start(struct hg_comm *c)
{
    int me = hg_comm_rank(c);
    char err[512] = "";
    if (hg_comm_world(c) < 2)
        return;
    static const size_t ns[] = {(3u << 20) + 5, 1, 4096};
    unsigned char *m[3];
    for (int k = 0; k < 3; k++) {
        m[k] = malloc(ns[k]);
        REQUIRE(m[k] != NULL, "malloc");
        for (size_t i = 0; i < ns[k]; i++)
            m[k][i] = me == 0 ? case_pat(0, k, i) : 0;
    }
    if (me == 0) {
        struct hg_comm_req r[3];
        for (int k = 0; k < 2; k++)
            REQUIRE(hg_comm_send_start(c, m[k], ns[k], 1, &r[k], err, sizeof err) == 0,
                    "rank 0 send_start %d: %s", k, err);
        REQUIRE(hg_comm_wait_req(c, r[1], err, sizeof err) == 0, "rank 0 wait: %s", err);
        REQUIRE(hg_comm_send_start(c, m[2], ns[2], 1, &r[2], err, sizeof err) == 0,
                "rank 0 send_start 2: %s", err);
        REQUIRE(hg_comm_wait(c, err, sizeof err) == 0, "rank 0 wait: %s", err);
    } else if (me == 1) {
        for (int k = 0; k < 3; k++) {
            REQUIRE(hg_comm_recv(c, m[k], ns[k], 0, err, sizeof err) == 0,
                    "rank 1 recv %d: %s", k, err);
            size_t bad = 0;
            for (size_t i = 0; i < ns[k]; i++)
                bad += m[k][i] != case_pat(0, k, i);
            EXPECT(bad == 0, "rank 1: message %d of rank 0's send_start: %zu bytes differ",
                   k, bad);
        }
    }
    for (int k = 0; k < 3; k++)
        free(m[k]);
}

/* Receives as requests (hg_comm_recv_start), as model parallelism's
 * RECV nodes use them: each rank of 0 and 1 posts, in one order, a
 * receive of a large message from the other, a send of its own and a
 * second receive, before the peer has sent anything; the blocking recv
 * of rank 1 meanwhile would have waited.  Both end with the peer's bytes,
 * and a wait for the second receive covers the first (FIFO). */
static inline void case_recv_start(struct hg_comm *c)
{
    int me = hg_comm_rank(c);
    char err[512] = "";
    if (hg_comm_world(c) < 2 || me > 1)
        return;
    int peer = 1 - me;
    static const size_t ns[] = {(2u << 20) + 3, 4099};
    unsigned char *in[2], *out[2];
    for (int k = 0; k < 2; k++) {
        in[k] = calloc(ns[k], 1);
        out[k] = malloc(ns[k]);
        REQUIRE(in[k] && out[k], "malloc");
        for (size_t i = 0; i < ns[k]; i++)
            out[k][i] = case_pat(me, k + 10, i);
    }
    struct hg_comm_req r[3];
    /* rank 0: recv 0, send 0, send 1, recv 1; rank 1: send 0, recv 0,
     * recv 1, send 1 (each FIFO pairs with the other's in order) */
    if (me == 0) {
        REQUIRE(hg_comm_recv_start(c, in[0], ns[0], peer, &r[0], err, sizeof err) == 0 &&
                    hg_comm_send_start(c, out[0], ns[0], peer, NULL, err, sizeof err) == 0 &&
                    hg_comm_send_start(c, out[1], ns[1], peer, NULL, err, sizeof err) == 0 &&
                    hg_comm_recv_start(c, in[1], ns[1], peer, &r[1], err, sizeof err) == 0,
                "rank 0 starts: %s", err);
    } else {
        sleep_s(0.05); /* rank 0's receive waits on the progress thread */
        REQUIRE(hg_comm_send_start(c, out[0], ns[0], peer, NULL, err, sizeof err) == 0 &&
                    hg_comm_recv_start(c, in[0], ns[0], peer, &r[0], err, sizeof err) == 0 &&
                    hg_comm_recv_start(c, in[1], ns[1], peer, &r[1], err, sizeof err) == 0 &&
                    hg_comm_send_start(c, out[1], ns[1], peer, &r[2], err, sizeof err) == 0,
                "rank 1 starts: %s", err);
    }
    REQUIRE(hg_comm_wait_req(c, r[1], err, sizeof err) == 0, "rank %d wait: %s", me, err);
    for (int k = 0; k < 2; k++) {
        size_t bad = 0;
        for (size_t i = 0; i < ns[k]; i++)
            bad += in[k][i] != case_pat(peer, k + 10, i);
        EXPECT(bad == 0, "rank %d: message %d of rank %d's, received as a request: %zu "
               "bytes differ", me, k, peer, bad);
    }
    REQUIRE(hg_comm_wait(c, err, sizeof err) == 0, "rank %d wait: %s", me, err);
    for (int k = 0; k < 2; k++) {
        free(in[k]);
        free(out[k]);
    }
}

/* Several requests in flight (f32 and f64 allreduces, a broadcast, an
 * allgather), waited for in another order than started: bitwise the
 * blocking calls' results on the same inputs; a blocking call right after
 * a start (it waits for it first); progress without a wait where the
 * backend has a progress thread or stream; sends as requests. */
static inline void case_async(struct hg_comm *c)
{
    int me = hg_comm_rank(c), world = hg_comm_world(c);
    char err[512] = "";
    static const size_t ns[] = {1, 1000, (3u << 20) + 5};
    for (size_t s = 0; s < sizeof ns / sizeof ns[0]; s++) {
        size_t n = ns[s];
        float *a = malloc(n * sizeof *a), *a2 = malloc(n * sizeof *a2);
        double *b = malloc(n * sizeof *b), *b2 = malloc(n * sizeof *b2);
        float *d = malloc(n * sizeof *d), *d2 = malloc(n * sizeof *d2);
        unsigned char *bc = malloc(n + 1), *ag = malloc((size_t)world * n + 1);
        REQUIRE(a && a2 && b && b2 && d && d2 && bc && ag, "malloc");
        for (size_t i = 0; i < n; i++) {
            a[i] = a2[i] = (float)value(me, i);
            b[i] = b2[i] = value(me, i + 17);
            d[i] = d2[i] = (float)value(me, i + 5);
        }
        /* the references: the blocking calls */
        REQUIRE(hg_comm_allreduce_f32(c, a2, n, err, sizeof err) == 0,
                "rank %d allreduce_f32: %s", me, err);
        REQUIRE(hg_comm_allreduce_f64(c, b2, n, err, sizeof err) == 0,
                "rank %d allreduce_f64: %s", me, err);
        REQUIRE(hg_comm_allreduce_f32(c, d2, n, err, sizeof err) == 0,
                "rank %d allreduce_f32: %s", me, err);
        if (hg_comm_caps(c) & HG_COMM_RANK_ORDER) {
            size_t bad = 0;
            for (size_t i = 0; i < n; i++) {
                float want = (float)value(0, i);
                for (int r = 1; r < world; r++)
                    want += (float)value(r, i);
                bad += memcmp(&want, &a2[i], sizeof want) != 0;
            }
            EXPECT(bad == 0, "rank %d: blocking f32 sum of %zu: %zu elements "
                   "differ from the rank-order sum", me, n, bad);
        }
        int root = world - 1;
        for (size_t i = 0; i < n; i++)
            bc[i] = me == root ? case_pat(root, 3, i) : 0xee;
        memset(ag, 0xee, (size_t)world * n);
        for (size_t i = 0; i < n; i++)
            ag[(size_t)me * n + i] = case_pat(me, 4, i);

        struct hg_comm_req ra, rb, rbc, rag, rd;
        REQUIRE(hg_comm_allreduce_f32_start(c, a, n, NULL, &ra, err,
                                            sizeof err) == 0,
                "rank %d start f32: %s", me, err);
        REQUIRE(hg_comm_allreduce_f64_start(c, b, n, NULL, &rb, err,
                                            sizeof err) == 0,
                "rank %d start f64: %s", me, err);
        REQUIRE(hg_comm_broadcast_start(c, bc, n, root, NULL, &rbc, err,
                                        sizeof err) == 0,
                "rank %d start broadcast: %s", me, err);
        REQUIRE(hg_comm_allgather_start(c, ag + (size_t)me * n, ag, n, NULL,
                                        &rag, err, sizeof err) == 0,
                "rank %d start allgather: %s", me, err);
        REQUIRE(hg_comm_allreduce_f32_start(c, d, n, NULL, &rd, err,
                                            sizeof err) == 0,
                "rank %d start f32: %s", me, err);
        EXPECT(ra.id && rb.id == ra.id + 1 && rd.id == ra.id + 4,
               "rank %d: request ids %llu %llu %llu", me,
               (unsigned long long)ra.id, (unsigned long long)rb.id,
               (unsigned long long)rd.id);
        /* the middle one first: it covers the ones before it */
        REQUIRE(hg_comm_wait_req(c, rbc, err, sizeof err) == 0,
                "rank %d wait broadcast: %s", me, err);
        int done = 0;
        REQUIRE(hg_comm_test_req(c, ra, &done, err, sizeof err) == 0 && done,
                "rank %d: f32 request not done after a later one: %s", me, err);
        REQUIRE(hg_comm_wait_req(c, rd, err, sizeof err) == 0,
                "rank %d wait last: %s", me, err);
        REQUIRE(hg_comm_wait_req(c, ra, err, sizeof err) == 0 &&
                    hg_comm_wait_req(c, rag, err, sizeof err) == 0 &&
                    hg_comm_wait(c, err, sizeof err) == 0,
                "rank %d waits: %s", me, err);
        EXPECT(memcmp(a, a2, n * sizeof *a) == 0,
               "rank %d: async f32 sum of %zu differs from the blocking one",
               me, n);
        EXPECT(memcmp(b, b2, n * sizeof *b) == 0,
               "rank %d: async f64 sum of %zu differs from the blocking one",
               me, n);
        EXPECT(memcmp(d, d2, n * sizeof *d) == 0,
               "rank %d: async f32 sum (5th request) of %zu differs", me, n);
        size_t bad = 0;
        for (size_t i = 0; i < n; i++)
            bad += bc[i] != case_pat(root, 3, i);
        for (int r = 0; r < world; r++)
            for (size_t i = 0; i < n; i++)
                bad += ag[(size_t)r * n + i] != case_pat(r, 4, i);
        EXPECT(bad == 0, "rank %d: async broadcast/allgather of %zu: %zu "
               "bytes wrong", me, n, bad);

        /* a blocking call right after a start waits for it first */
        for (size_t i = 0; i < n; i++) {
            a[i] = (float)value(me, i);
            b[i] = value(me, i + 17);
        }
        REQUIRE(hg_comm_allreduce_f32_start(c, a, n, NULL, NULL, err,
                                            sizeof err) == 0,
                "rank %d start: %s", me, err);
        REQUIRE(hg_comm_allreduce_f64(c, b, n, err, sizeof err) == 0,
                "rank %d blocking after a start: %s", me, err);
        EXPECT(memcmp(a, a2, n * sizeof *a) == 0 &&
                   memcmp(b, b2, n * sizeof *b) == 0,
               "rank %d: a start then a blocking call of %zu: sums differ", me,
               n);
        free(a);
        free(a2);
        free(b);
        free(b2);
        free(d);
        free(d2);
        free(bc);
        free(ag);
    }
    /* progress without a wait: poll until done */
    float x[1000];
    for (int i = 0; i < 1000; i++)
        x[i] = (float)value(me, (size_t)i);
    struct hg_comm_req r;
    REQUIRE(hg_comm_allreduce_f32_start(c, x, 1000, NULL, &r, err,
                                        sizeof err) == 0,
            "rank %d start: %s", me, err);
    int done = 0;
    double t0 = hg_now();
    while (!done && hg_now() - t0 < 20) {
        REQUIRE(hg_comm_test_req(c, r, &done, err, sizeof err) == 0,
                "rank %d test: %s", me, err);
        if (!done)
            sleep_s(0.001);
    }
    EXPECT(done, "rank %d: a request made no progress in 20 s without a wait",
           me);
    struct hg_comm_req none = {0};
    EXPECT(hg_comm_wait_req(c, none, err, sizeof err) == 0 &&
               hg_comm_wait(c, err, sizeof err) == 0,
           "rank %d: waits with nothing pending: %s", me, err);
    case_send_start(c);
    case_recv_start(c);
    REQUIRE(hg_comm_barrier(c, err, sizeof err) == 0, "rank %d barrier: %s", me,
            err);
}

/* Rank 1 never takes part in rank 0's asynchronous allreduces: rank 0's
 * wait for the second fails after the handle's timeout with the first's
 * message naming rank 1, hg_comm_failed_req names the first, and the next
 * blocking call fails too.  Run on a handle of its own (world 2, a short
 * timeout); rank 1 returns once rank 0 has given up. */
static inline void case_async_timeout(struct hg_comm *c, double timeout_s)
{
    int me = hg_comm_rank(c);
    char err[512] = "";
    if (me != 0) {
        sleep_s(timeout_s * 3);
        return;
    }
    float x[64] = {0}, y[64] = {0};
    struct hg_comm_req r, r2;
    double t0 = hg_now();
    REQUIRE(hg_comm_allreduce_f32_start(c, x, 64, NULL, &r, err,
                                        sizeof err) == 0 &&
                hg_comm_allreduce_f32_start(c, y, 64, NULL, &r2, err,
                                            sizeof err) == 0,
            "start: %s", err);
    EXPECT(hg_comm_failed_req(c).id == 0, "a failed request before any ran");
    int rc = hg_comm_wait_req(c, r2, err, sizeof err);
    double dt = hg_now() - t0;
    EXPECT(rc == -1 && (strstr(err, "not arrived: 1") ||
                        strstr(err, "waiting for rank 1")),
           "rank 0 got: %d %s", rc, err);
    EXPECT(hg_comm_failed_req(c).id == r.id && r.id + 1 == r2.id,
           "the failed request is %llu, the first %llu",
           (unsigned long long)hg_comm_failed_req(c).id,
           (unsigned long long)r.id);
    EXPECT(dt >= timeout_s * 0.9 && dt < timeout_s + 4.0,
           "rank 0 gave up after %.2f s (timeout %g)", dt, timeout_s);
    printf("async timeout: rank 0 after %.2f s: %s\n", dt, err);
    int done = 0;
    EXPECT(hg_comm_test_req(c, r, &done, err, sizeof err) == -1 && done,
           "test after the failure: done %d", done);
    rc = hg_comm_barrier(c, err, sizeof err);
    EXPECT(rc == -1, "a blocking call after a failed request returned %d", rc);
    rc = hg_comm_allreduce_f32_start(c, x, 64, NULL, &r, err, sizeof err);
    EXPECT(rc == -1, "a start after a failed request returned %d", rc);
}

/* World 2: rank 1 starts an allreduce that rank 0 never joins and aborts
 * while the request waits on the progress thread: its wait fails at once
 * (well before the handle's timeout), and rank 0's next call names rank 1.
 * Backends with HG_COMM_ASYNC and a recoverable abort (shm, tcp). */
static inline void case_async_abort(struct hg_comm *c, double timeout_s)
{
    int me = hg_comm_rank(c);
    char err[512] = "";
    float x[64] = {0};
    if (me == 0) {
        sleep_s(0.5);
        double t0 = hg_now();
        int rc = hg_comm_barrier(c, err, sizeof err);
        EXPECT(rc == -1 && strstr(err, "rank 1") && hg_now() - t0 < timeout_s / 2,
               "rank 0 got: %d %s", rc, err);
        printf("abort in flight: rank 0: %s\n", err);
        return;
    }
    struct hg_comm_req r;
    REQUIRE(hg_comm_allreduce_f32_start(c, x, 64, NULL, &r, err,
                                        sizeof err) == 0, "start: %s", err);
    sleep_s(0.2);
    double t0 = hg_now();
    hg_comm_abort(c);
    int rc = hg_comm_wait_req(c, r, err, sizeof err);
    double dt = hg_now() - t0;
    EXPECT(rc == -1 && strstr(err, "abort") && dt < timeout_s / 2,
           "rank 1 after %.2f s: %d %s", dt, rc, err);
    printf("abort in flight: rank 1 after %.2f s: %s\n", dt, err);
}

/* ---------------------------------------------------------- groups */

/* The f32 and f64 sums over the members in group order, compared bitwise
 * (backends with HG_COMM_RANK_ORDER) or as the exact integers they are
 * (others: values are small integers then). */
static inline void group_allreduce(struct hg_comm *g, const int *ranks, int n,
                                   size_t len, const char *what)
{
    int gr = hg_comm_rank(g), me = ranks[gr];
    char err[512] = "";
    float *x = malloc(len * sizeof *x);
    double *y = malloc(len * sizeof *y);
    REQUIRE(x && y, "malloc");
    for (size_t i = 0; i < len; i++) {
        x[i] = (float)value(me, i);
        y[i] = value(me, i + 3);
    }
    REQUIRE(hg_comm_allreduce_f32(g, x, len, err, sizeof err) == 0,
            "rank %d %s allreduce_f32: %s", me, what, err);
    REQUIRE(hg_comm_allreduce_f64(g, y, len, err, sizeof err) == 0,
            "rank %d %s allreduce_f64: %s", me, what, err);
    size_t bad = 0;
    for (size_t i = 0; i < len; i++) {
        float a = (float)value(ranks[0], i);
        double b = value(ranks[0], i + 3);
        for (int k = 1; k < n; k++) {
            a += (float)value(ranks[k], i);
            b += value(ranks[k], i + 3);
        }
        bad += memcmp(&a, &x[i], sizeof a) != 0 || memcmp(&b, &y[i], sizeof b) != 0;
    }
    EXPECT(bad == 0, "rank %d %s: %zu of %zu sums differ from the member-order "
           "sum", me, what, bad, len);
    free(x);
    free(y);
}

/* Broadcast from the last member, allgather, barriers, a ring of
 * send/recv, an asynchronous allreduce: inside group g. */
static inline void group_rest(struct hg_comm *g, const int *ranks, int n,
                              const char *what)
{
    int gr = hg_comm_rank(g), me = ranks[gr];
    char err[512] = "";
    size_t len = 1000;
    unsigned char b[1000], all[8 * 1000];
    REQUIRE(n <= 8, "group of %d", n);
    int root = n - 1;
    for (size_t i = 0; i < len; i++)
        b[i] = gr == root ? case_pat(ranks[root], 7, i) : 0xee;
    REQUIRE(hg_comm_broadcast(g, b, len, root, err, sizeof err) == 0,
            "rank %d %s broadcast: %s", me, what, err);
    size_t bad = 0;
    for (size_t i = 0; i < len; i++)
        bad += b[i] != case_pat(ranks[root], 7, i);
    EXPECT(bad == 0, "rank %d %s: broadcast from group rank %d: %zu wrong", me,
           what, root, bad);
    for (size_t i = 0; i < len; i++)
        b[i] = case_pat(me, 8, i);
    REQUIRE(hg_comm_allgather(g, b, all, len, err, sizeof err) == 0,
            "rank %d %s allgather: %s", me, what, err);
    bad = 0;
    for (int k = 0; k < n; k++)
        for (size_t i = 0; i < len; i++)
            bad += all[(size_t)k * len + i] != case_pat(ranks[k], 8, i);
    EXPECT(bad == 0, "rank %d %s: allgather: %zu wrong", me, what, bad);
    for (int i = 0; i < 20; i++)
        REQUIRE(hg_comm_barrier(g, err, sizeof err) == 0,
                "rank %d %s barrier: %s", me, what, err);
    if (n > 1) {
        /* small messages: buffered, so everyone sends first */
        int right = (gr + 1) % n, left = (gr + n - 1) % n;
        REQUIRE(hg_comm_send(g, b, 100, right, err, sizeof err) == 0,
                "rank %d %s send: %s", me, what, err);
        unsigned char in[100];
        REQUIRE(hg_comm_recv(g, in, 100, left, err, sizeof err) == 0,
                "rank %d %s recv: %s", me, what, err);
        bad = 0;
        for (size_t i = 0; i < 100; i++)
            bad += in[i] != case_pat(ranks[left], 8, i);
        EXPECT(bad == 0, "rank %d %s: recv from group rank %d: %zu wrong", me,
               what, left, bad);
    }
    float x[300], y[300];
    for (int i = 0; i < 300; i++)
        x[i] = y[i] = (float)value(me, (size_t)i);
    struct hg_comm_req r;
    REQUIRE(hg_comm_allreduce_f32_start(g, x, 300, NULL, &r, err,
                                        sizeof err) == 0 &&
                hg_comm_allreduce_f32(g, y, 300, err, sizeof err) == 0,
            "rank %d %s async: %s", me, what, err);
    EXPECT(memcmp(x, y, sizeof x) == 0, "rank %d %s: async sum differs", me,
           what);
}

/* Groups: disjoint pairs (and a single rank left over) running at the same
 * time; every rank in reverse order (ranks renumbered, the root a group
 * rank); the same list twice, used alternately; a group of a group; bad
 * lists refused without breaking the handle. */
static inline void case_groups(struct hg_comm *c)
{
    int me = hg_comm_rank(c), world = hg_comm_world(c);
    char err[512] = "";
    REQUIRE(hg_comm_caps(c) & HG_COMM_GROUPS, "%s: no HG_COMM_GROUPS",
            hg_comm_backend(c));
    REQUIRE(world <= 8, "world %d", world);
    /* pairs {0,1}, {2,3}, ...; an odd world's last rank alone */
    int pair[2], np = 0;
    for (int r = me & ~1; r < world && r <= (me | 1); r++)
        pair[np++] = r;
    struct hg_comm *g;
    REQUIRE(hg_comm_group_new(c, pair, np, &g, err, sizeof err) == 0,
            "rank %d: group of %d: %s", me, np, err);
    EXPECT(hg_comm_world(g) == np && pair[hg_comm_rank(g)] == me,
           "rank %d: group rank %d of %d", me, hg_comm_rank(g), hg_comm_world(g));
    group_allreduce(g, pair, np, 7, "pair");
    group_allreduce(g, pair, np, (3u << 20) + 1, "pair");
    group_rest(g, pair, np, "pair");
    hg_comm_free(g);

    int rev[8];
    for (int k = 0; k < world; k++)
        rev[k] = world - 1 - k;
    struct hg_comm *g1, *g2;
    REQUIRE(hg_comm_group_new(c, rev, world, &g1, err, sizeof err) == 0 &&
                hg_comm_group_new(c, rev, world, &g2, err, sizeof err) == 0,
            "rank %d: reversed groups: %s", me, err);
    EXPECT(hg_comm_rank(g1) == world - 1 - me, "rank %d: reversed rank %d", me,
           hg_comm_rank(g1));
    group_allreduce(g2, rev, world, 1000, "reversed (second)");
    group_allreduce(g1, rev, world, 1000, "reversed (first)");
    group_rest(g1, rev, world, "reversed");
    if (world >= 3 && hg_comm_rank(g1) < 2) {
        /* a group of a group: group ranks {1, 0} of g1 */
        int sub[2] = {1, 0}, subw[2] = {rev[1], rev[0]};
        struct hg_comm *s;
        REQUIRE(hg_comm_group_new(g1, sub, 2, &s, err, sizeof err) == 0,
                "rank %d: subgroup: %s", me, err);
        group_allreduce(s, subw, 2, 500, "subgroup");
        hg_comm_free(s);
    }
    hg_comm_free(g2);
    REQUIRE(hg_comm_barrier(g1, err, sizeof err) == 0, "rank %d: %s", me, err);
    hg_comm_free(g1);

    /* refused at once, the handle still good */
    int other = (me + 1) % world, dup[2] = {me, me}, out[2] = {me, world};
    EXPECT(world == 1 || (hg_comm_group_new(c, &other, 1, &g, err, sizeof err) == -1 &&
                          strstr(err, "not a member")),
           "rank %d: a group without this rank: %s", me, err);
    EXPECT(world == 1 || (hg_comm_group_new(c, dup, 2, &g, err, sizeof err) == -1 &&
                          strstr(err, "twice")),
           "rank %d: a rank twice: %s", me, err);
    EXPECT(world == 1 || (hg_comm_group_new(c, out, 2, &g, err, sizeof err) == -1 &&
                          strstr(err, "outside")),
           "rank %d: a rank outside: %s", me, err);
    int all[8];
    for (int k = 0; k < world; k++)
        all[k] = k;
    group_allreduce(c, all, world, 1000, "parent after groups");
}

/* ------------------------------------------------- parameter server */

#define PS_STEPS 4
static const size_t ps_numel[] = {1, 1000, 100003};
#define PS_NPARAMS 3

/* client rank r's gradient of step s, parameter id */
static inline float ps_grad(int r, int s, int id, size_t i)
{
    return (float)value(r + 8 * s, i + (size_t)id * 7);
}

static inline float ps_init(int id, size_t i)
{
    return (float)value(99, i + (size_t)id * 11);
}

/* The hook: SGD with lr 0.5 on the summed gradient. */
static inline int ps_sgd(void *arg, int id, uint64_t step, float *master,
                         const float *sum, size_t numel, char *err,
                         size_t errlen)
{
    (void)err, (void)errlen, (void)id, (void)step;
    int *calls = arg;
    (*calls)++;
    for (size_t i = 0; i < numel; i++)
        master[i] -= 0.5f * sum[i];
    return 0;
}

/* expect[id] after `steps` steps: the server's arithmetic, written out */
static inline void ps_expect(float *m, int id, const int *clients, int ncl,
                             int steps, int sgd)
{
    size_t n = ps_numel[id];
    for (size_t i = 0; i < n; i++)
        m[i] = ps_init(id, i);
    for (int s = 1; s <= steps; s++)
        for (size_t i = 0; i < n; i++) {
            float acc = ps_grad(clients[0], s, id, i);
            for (int k = 1; k < ncl; k++)
                acc += ps_grad(clients[k], s, id, i);
            if (sgd)
                m[i] -= 0.5f * acc;
            else
                m[i] += acc;
        }
}

/* One PS: server and clients as given; every client pushes PS_STEPS steps
 * of every parameter (its own order of ids, small rank-dependent sleeps:
 * the arrival order varies) and pulls each step, bitwise equal to the sum
 * in client rank order. */
static inline void ps_run(struct hg_comm *c, int server, const int *clients,
                          int ncl, int sgd, double timeout_s)
{
    int me = hg_comm_rank(c);
    char err[512] = "";
    int is_client = 0, calls = 0;
    for (int k = 0; k < ncl; k++)
        is_client |= clients[k] == me;
    if (!is_client && me != server)
        return;
    float *init[PS_NPARAMS], *g = malloc(ps_numel[2] * sizeof *g),
          *m = malloc(ps_numel[2] * sizeof *m),
          *want = malloc(ps_numel[2] * sizeof *want);
    REQUIRE(g && m && want, "malloc");
    for (int id = 0; id < PS_NPARAMS; id++) {
        init[id] = malloc(ps_numel[id] * sizeof(float));
        REQUIRE(init[id], "malloc");
        for (size_t i = 0; i < ps_numel[id]; i++)
            init[id][i] = ps_init(id, i);
    }
    struct hg_ps_config cfg = {
        .server = server, .clients = clients, .nclients = ncl,
        .nparams = PS_NPARAMS, .numel = ps_numel,
        .init = (const float *const *)init, .timeout_s = timeout_s,
        .apply = sgd ? ps_sgd : NULL, .apply_arg = &calls};
    struct hg_ps *ps;
    REQUIRE(hg_ps_new(&ps, c, &cfg, err, sizeof err) == 0, "rank %d ps: %s", me,
            err);
    if (is_client) {
        for (int s = 1; s <= PS_STEPS; s++) {
            for (int j = 0; j < PS_NPARAMS; j++) {
                int id = (j + me + s) % PS_NPARAMS;
                for (size_t i = 0; i < ps_numel[id]; i++)
                    g[i] = ps_grad(me, s, id, i);
                sleep_s(0.001 * (double)((me * 7 + s * 3 + id) % 4));
                REQUIRE(hg_ps_push(ps, id, g, (uint64_t)s, err, sizeof err) == 0,
                        "rank %d push %d of %d: %s", me, s, id, err);
            }
            for (int id = 0; id < PS_NPARAMS; id++) {
                uint64_t v = 0;
                REQUIRE(hg_ps_pull(ps, id, m, (uint64_t)s, &v, err, sizeof err) == 0,
                        "rank %d pull %d of %d: %s", me, s, id, err);
                ps_expect(want, id, clients, ncl, s, sgd);
                size_t bad = 0;
                for (size_t i = 0; i < ps_numel[id]; i++)
                    bad += memcmp(&m[i], &want[i], sizeof *m) != 0;
                EXPECT(v == (uint64_t)s && bad == 0, "rank %d: step %d of "
                       "parameter %d: version %llu, %zu of %zu elements differ "
                       "from the client-order sum", me, s, id,
                       (unsigned long long)v, bad, ps_numel[id]);
            }
        }
        uint64_t v = 0;
        REQUIRE(hg_ps_pull(ps, 2, m, 0, &v, err, sizeof err) == 0,
                "rank %d pull current: %s", me, err);
        EXPECT(v == PS_STEPS, "rank %d: current version %llu", me,
               (unsigned long long)v);
        if (me == clients[0]) {
            /* a step out of order is refused, naming it */
            int rc = hg_ps_push(ps, 0, g, PS_STEPS + 2, err, sizeof err);
            EXPECT(rc == -1 && strstr(err, "after step"), "out of order: %d %s",
                   rc, err);
            rc = hg_ps_pull(ps, PS_NPARAMS, m, 0, NULL, err, sizeof err);
            EXPECT(rc == -1 && strstr(err, "outside"), "id out of range: %d %s",
                   rc, err);
        }
    } else {
        EXPECT(hg_ps_push(ps, 0, g, 1, err, sizeof err) == -1 &&
                   strstr(err, "not a client"), "server push: %s", err);
    }
    hg_ps_free(ps);
    if (me == server && sgd)
        EXPECT(calls == PS_STEPS * PS_NPARAMS, "apply hook called %d times",
               calls);
    for (int id = 0; id < PS_NPARAMS; id++)
        free(init[id]);
    free(g);
    free(m);
    free(want);
}

/* hg_ps_publish (world <= 8): server 0 publishes steps 1..PS_STEPS of an
 * id nobody pushes, every other rank pulls each, bitwise; an old step and a publish
 * from a client are refused, naming why. */
static inline void ps_publish_run(struct hg_comm *c, double timeout_s)
{
    int me = hg_comm_rank(c), world = hg_comm_world(c);
    char err[512] = "";
    int cl[8];
    for (int k = 0; k < world && k < 8; k++)
        cl[k] = k;
    size_t n = ps_numel[1];
    float *x = malloc(n * sizeof *x); /* [n] */
    REQUIRE(x, "malloc");
    struct hg_ps_config cfg = {.server = 0, .clients = cl,
                               .nclients = world < 8 ? world : 8, .nparams = 1,
                               .numel = &ps_numel[1], .timeout_s = timeout_s};
    struct hg_ps *ps;
    if (world > 8) { /* the barriers below need every rank */
        free(x);
        return;
    }
    REQUIRE(hg_ps_new(&ps, c, &cfg, err, sizeof err) == 0, "rank %d ps: %s", me, err);
    for (int s = 1; s <= PS_STEPS; s++) {
        if (me == 0) {
            for (size_t i = 0; i < n; i++)
                x[i] = ps_grad(0, s, 1, i);
            REQUIRE(hg_ps_publish(ps, 0, x, (uint64_t)s, err, sizeof err) == 0,
                    "publish %d: %s", s, err);
        } else {
            uint64_t v = 0;
            REQUIRE(hg_ps_pull(ps, 0, x, (uint64_t)s, &v, err, sizeof err) == 0,
                    "rank %d pull of published step %d: %s", me, s, err);
            size_t bad = 0;
            for (size_t i = 0; i < n; i++) {
                float w = ps_grad(0, s, 1, i);
                bad += memcmp(&x[i], &w, sizeof w) != 0;
            }
            EXPECT(v == (uint64_t)s && bad == 0, "rank %d: published step %d: "
                   "version %llu, %zu elements differ", me, s, (unsigned long long)v, bad);
        }
        /* the next step is published once every client has this one */
        REQUIRE(hg_comm_barrier(c, err, sizeof err) == 0, "barrier: %s", err);
    }
    int rc = hg_ps_publish(ps, 0, x, 1, err, sizeof err);
    EXPECT(rc == -1 && strstr(err, me == 0 ? "at version" : "but the server is rank 0"),
           "rank %d: a publish of an old step or from a client: %d %s", me, rc, err);
    hg_ps_free(ps);
    free(x);
}

/* World 4 or more: server 0, clients {1,2,3} pushing at once, the SGD
 * hook; any world of 2 or more: the last rank serves and is a client too
 * (its calls go straight in), the default sum. */
static inline void case_ps(struct hg_comm *c, double timeout_s)
{
    int world = hg_comm_world(c);
    char err[512] = "";
    if (world >= 4) {
        static const int cl[3] = {1, 2, 3};
        ps_run(c, 0, cl, 3, 1, timeout_s);
    }
    REQUIRE(hg_comm_barrier(c, err, sizeof err) == 0, "barrier: %s", err);
    if (world >= 2) {
        int cl[8];
        for (int k = 0; k < world && k < 8; k++)
            cl[k] = k;
        ps_run(c, world - 1, cl, world < 8 ? world : 8, 0, timeout_s);
        REQUIRE(hg_comm_barrier(c, err, sizeof err) == 0, "barrier: %s", err);
        ps_publish_run(c, timeout_s);
    }
    REQUIRE(hg_comm_barrier(c, err, sizeof err) == 0, "barrier: %s", err);
}

/* Server 0, clients {1, 2}; rank 2 is silent (`dead` 0: sleeps past the
 * PS timeout, then pushes) or dies (`dead` 1: pushes step 1, then SIGKILL).
 * Rank 1's pull fails naming rank 2: after the PS timeout, or at once. */
static inline void case_ps_missing(struct hg_comm *c, int dead,
                                   double timeout_s)
{
    int me = hg_comm_rank(c);
    char err[512] = "";
    if (me > 2)
        return;
    static const int cl[2] = {1, 2};
    static const size_t numel[1] = {100};
    float x[100] = {0};
    struct hg_ps_config cfg = {.server = 0, .clients = cl, .nclients = 2,
                               .nparams = 1, .numel = numel,
                               .timeout_s = timeout_s};
    struct hg_ps *ps;
    REQUIRE(hg_ps_new(&ps, c, &cfg, err, sizeof err) == 0, "rank %d ps: %s", me,
            err);
    if (me == 2) {
        if (dead) {
            REQUIRE(hg_ps_push(ps, 0, x, 1, err, sizeof err) == 0,
                    "rank 2 push: %s", err);
            fflush(stdout);
            kill(getpid(), SIGKILL);
        }
        sleep_s(timeout_s * 2.5);
        /* late but alive: its push still lands (the step is summed) */
        EXPECT(hg_ps_push(ps, 0, x, 1, err, sizeof err) == 0, "rank 2 late "
               "push: %s", err);
    } else if (me == 1) {
        REQUIRE(hg_ps_push(ps, 0, x, 1, err, sizeof err) == 0, "rank 1 push: %s",
                err);
        if (dead)
            REQUIRE(hg_ps_push(ps, 0, x, 2, err, sizeof err) == 0,
                    "rank 1 push 2: %s", err);
        double t0 = hg_now();
        int rc = hg_ps_pull(ps, 0, x, dead ? 2 : 1, NULL, err, sizeof err);
        double dt = hg_now() - t0;
        EXPECT(rc == -1 && strstr(err, "rank 2"), "rank 1 got: %d %s", rc, err);
        if (dead)
            EXPECT(rc == -1 && strstr(err, "gone") && dt < timeout_s,
                   "rank 1 after %.2f s (PS timeout %g): %s", dt, timeout_s, err);
        else
            EXPECT(rc == -1 && strstr(err, "not pushed") &&
                       dt >= timeout_s * 0.9 && dt < timeout_s + 4,
                   "rank 1 after %.2f s (PS timeout %g): %s", dt, timeout_s, err);
        printf("ps: %s client: rank 1 after %.2f s: %s\n",
               dead ? "a dead" : "a silent", dt, err);
    }
    hg_ps_free(ps);
}

/* ---------------------------------------------------- uneven counts */

#define UNEVEN_ROUNDS 6

/* counts[n] of round k, the same on every rank: all zero; one rank only;
 * small with zeros; up to 256 Ki with a zero; one slice of 300001 (more
 * than a tcp piece of floats, several shm pieces) beside small ones;
 * all ones. */
static inline void uneven_counts(size_t *counts, int n, int k)
{
    uint64_t s = 0x2545f4914f6cdd1dull * (uint64_t)(k + 1) + (uint64_t)n;
    for (int r = 0; r < n; r++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        size_t u = (size_t)(s >> 33);
        switch (k) {
        case 0: counts[r] = 0; break;
        case 1: counts[r] = r == n - 1 ? 1000 : 0; break;
        case 2: counts[r] = u % 3 == 0 ? 0 : u % 100; break;
        case 3: counts[r] = r == k % n ? 0 : u % (1u << 18); break;
        case 4: counts[r] = r == 0 ? 300001 : u % 5; break;
        default: counts[r] = 1; break;
        }
    }
}

/* Element i of the full vector member (job rank) `who` reduces in round k. */
static inline float uneven_val(int who, int k, size_t i)
{
    return (float)value(who, i + (size_t)k * 7);
}

/* allgatherv over g (members ranks[0..n), job ranks) for the counts of
 * round k, from a buffer of its own and in place: every block the
 * member's pattern. */
static inline void uneven_gather(struct hg_comm *g, const int *ranks, int n,
                                 const size_t *counts, int k, const char *what)
{
    int gr = hg_comm_rank(g), me = ranks[gr];
    char err[512] = "";
    size_t total = 0, at_me = 0;
    for (int r = 0; r < n; r++) {
        at_me += r < gr ? counts[r] : 0;
        total += counts[r];
    }
    unsigned char *send = malloc(counts[gr] + 1), *recv = malloc(total + 1);
    REQUIRE(send && recv, "malloc");
    for (size_t i = 0; i < counts[gr]; i++)
        send[i] = case_pat(me, 20 + k, i);
    for (int pass = 0; pass < 2; pass++) {
        memset(recv, 0xee, total + 1);
        const unsigned char *src = send;
        if (pass == 1) { /* in place */
            memcpy(recv + at_me, send, counts[gr]);
            src = recv + at_me;
        }
        REQUIRE(hg_comm_allgatherv(g, src, recv, counts, err, sizeof err) == 0,
                "rank %d %s allgatherv round %d: %s", me, what, k, err);
        size_t bad = 0, at = 0;
        for (int r = 0; r < n; at += counts[r], r++)
            for (size_t i = 0; i < counts[r]; i++)
                bad += recv[at + i] != case_pat(ranks[r], 20 + k, i);
        bad += recv[total] != 0xee;
        EXPECT(bad == 0, "rank %d %s: allgatherv round %d (%zu bytes%s): %zu "
               "bytes wrong", me, what, k, total, pass ? ", in place" : "", bad);
    }
    free(send);
    free(recv);
}

/* reduce_scatterv over g for round k, from a buffer of its own and in
 * place: bitwise the member-order sum computed here, and (rank-order
 * backends) bitwise allreduce's slice. */
static inline void uneven_reduce(struct hg_comm *g, const int *ranks, int n,
                                 const size_t *counts, int k, const char *what)
{
    int gr = hg_comm_rank(g), me = ranks[gr];
    char err[512] = "";
    size_t total = 0, lo = 0, mine = counts[gr];
    for (int r = 0; r < n; r++) {
        lo += r < gr ? counts[r] : 0;
        total += counts[r];
    }
    float *send = malloc(total * sizeof *send + 1), *recv = malloc((mine + 1) * sizeof *recv);
    float *want = malloc(mine * sizeof *want + 1), *all = malloc(total * sizeof *all + 1);
    REQUIRE(send && recv && want && all, "malloc");
    for (size_t i = 0; i < total; i++)
        send[i] = all[i] = uneven_val(me, k, i);
    for (size_t i = 0; i < mine; i++) {
        float a = uneven_val(ranks[0], k, lo + i);
        for (int r = 1; r < n; r++)
            a += uneven_val(ranks[r], k, lo + i);
        want[i] = a;
    }
    int rank_order = (hg_comm_caps(g) & HG_COMM_RANK_ORDER) != 0;
    recv[mine] = -7.0f;
    REQUIRE(hg_comm_reduce_scatterv_f32(g, send, recv, counts, err, sizeof err) == 0,
            "rank %d %s reduce_scatterv round %d: %s", me, what, k, err);
    EXPECT(recv[mine] == -7.0f, "rank %d %s: reduce_scatterv round %d wrote "
           "past its slice", me, what, k);
    REQUIRE(hg_comm_reduce_scatterv_f32(g, send, send + lo, counts, err, sizeof err) == 0,
            "rank %d %s in-place reduce_scatterv round %d: %s", me, what, k, err);
    REQUIRE(hg_comm_allreduce_f32(g, all, total, err, sizeof err) == 0,
            "rank %d %s allreduce round %d: %s", me, what, k, err);
    size_t bad = 0, bad_in = 0, bad_ar = 0;
    for (size_t i = 0; i < mine; i++) {
        bad += memcmp(&recv[i], &want[i], sizeof *recv) != 0;
        bad_in += memcmp(&send[lo + i], &want[i], sizeof *recv) != 0;
        bad_ar += memcmp(&recv[i], &all[lo + i], sizeof *recv) != 0;
    }
    EXPECT(!rank_order || (bad == 0 && bad_in == 0 && bad_ar == 0),
           "rank %d %s: reduce_scatterv round %d, %zu of %zu: %zu differ from "
           "the member-order sum, %zu in place, %zu from allreduce's", me,
           what, k, mine, total, bad, bad_in, bad_ar);
    free(send);
    free(recv);
    free(want);
    free(all);
}

/* The asynchronous forms: an allgatherv, an allreduce and a
 * reduce_scatterv in flight together, their counts scribbled over right
 * after the starts (the request has its own copy), waited for in reverse:
 * bitwise the blocking calls' results. */
static inline void uneven_async(struct hg_comm *g, const int *ranks, int n,
                                const char *what)
{
    int gr = hg_comm_rank(g), me = ranks[gr];
    char err[512] = "";
    size_t counts[8], cnt[8], total = 0, lo = 0;
    REQUIRE(n <= 8, "group of %d", n);
    uneven_counts(counts, n, 3);
    for (int r = 0; r < n; r++) {
        lo += r < gr ? counts[r] : 0;
        total += counts[r];
    }
    unsigned char *gs = malloc(counts[gr] + 1), *gr1 = malloc(total + 1),
                  *gr2 = malloc(total + 1);
    float *x = malloc(total * sizeof *x + 1), *y1 = malloc(counts[gr] * sizeof *y1 + 1),
          *y2 = malloc(counts[gr] * sizeof *y2 + 1), *z = malloc(1000 * sizeof *z);
    REQUIRE(gs && gr1 && gr2 && x && y1 && y2 && z, "malloc");
    for (size_t i = 0; i < counts[gr]; i++)
        gs[i] = case_pat(me, 40, i);
    for (size_t i = 0; i < total; i++)
        x[i] = uneven_val(me, 9, i);
    for (size_t i = 0; i < 1000; i++)
        z[i] = uneven_val(me, 10, i);
    REQUIRE(hg_comm_allgatherv(g, gs, gr1, counts, err, sizeof err) == 0 &&
                hg_comm_reduce_scatterv_f32(g, x, y1, counts, err, sizeof err) == 0,
            "rank %d %s blocking: %s", me, what, err);
    struct hg_comm_req ra, rz, rr;
    memcpy(cnt, counts, sizeof cnt);
    REQUIRE(hg_comm_allgatherv_start(g, gs, gr2, cnt, NULL, &ra, err, sizeof err) == 0,
            "rank %d %s allgatherv_start: %s", me, what, err);
    memset(cnt, 0xff, sizeof cnt); /* the request must not read these */
    REQUIRE(hg_comm_allreduce_f32_start(g, z, 1000, NULL, &rz, err, sizeof err) == 0,
            "rank %d %s allreduce_start: %s", me, what, err);
    memcpy(cnt, counts, sizeof cnt);
    REQUIRE(hg_comm_reduce_scatterv_f32_start(g, x, y2, cnt, NULL, &rr, err,
                                              sizeof err) == 0,
            "rank %d %s reduce_scatterv_start: %s", me, what, err);
    memset(cnt, 0xff, sizeof cnt);
    EXPECT(rz.id == ra.id + 1 && rr.id == ra.id + 2, "rank %d %s: ids %llu %llu %llu",
           me, what, (unsigned long long)ra.id, (unsigned long long)rz.id,
           (unsigned long long)rr.id);
    REQUIRE(hg_comm_wait_req(g, rr, err, sizeof err) == 0 &&
                hg_comm_wait_req(g, rz, err, sizeof err) == 0 &&
                hg_comm_wait_req(g, ra, err, sizeof err) == 0,
            "rank %d %s waits: %s", me, what, err);
    EXPECT(memcmp(gr1, gr2, total) == 0 &&
               memcmp(y1, y2, counts[gr] * sizeof *y1) == 0,
           "rank %d %s: the asynchronous allgatherv/reduce_scatterv differ from "
           "the blocking ones", me, what);
    free(gs);
    free(gr1);
    free(gr2);
    free(x);
    free(y1);
    free(y2);
    free(z);
}

/* Every round of counts, blocking and in place, then the asynchronous
 * forms, over g. */
static inline void uneven_all(struct hg_comm *g, const int *ranks, int n,
                              const char *what)
{
    size_t counts[8];
    REQUIRE(n <= 8, "group of %d", n);
    for (int k = 0; k < UNEVEN_ROUNDS; k++) {
        uneven_counts(counts, n, k);
        uneven_gather(g, ranks, n, counts, k, what);
        uneven_reduce(g, ranks, n, counts, k, what);
    }
    uneven_async(g, ranks, n, what);
}

/* allgatherv and reduce_scatterv (world <= 8): over the whole handle, over
 * every rank in reverse order (a group: renumbered ranks), over disjoint
 * pairs at once; counts from none to 1.2 MB, zeros among them. */
static inline void case_uneven(struct hg_comm *c)
{
    int me = hg_comm_rank(c), world = hg_comm_world(c);
    char err[512] = "";
    REQUIRE(world <= 8, "world %d", world);
    int all[8], rev[8];
    for (int k = 0; k < world; k++) {
        all[k] = k;
        rev[k] = world - 1 - k;
    }
    uneven_all(c, all, world, "world");
    if (!(hg_comm_caps(c) & HG_COMM_GROUPS) || world == 1)
        return;
    struct hg_comm *g;
    REQUIRE(hg_comm_group_new(c, rev, world, &g, err, sizeof err) == 0,
            "rank %d: reversed group: %s", me, err);
    uneven_all(g, rev, world, "reversed group");
    hg_comm_free(g);
    int pair[2], np = 0;
    for (int r = me & ~1; r < world && r <= (me | 1); r++)
        pair[np++] = r;
    REQUIRE(hg_comm_group_new(c, pair, np, &g, err, sizeof err) == 0,
            "rank %d: pair group: %s", me, err);
    uneven_all(g, pair, np, "pair group");
    hg_comm_free(g);
    REQUIRE(hg_comm_barrier(c, err, sizeof err) == 0, "rank %d barrier: %s", me,
            err);
}

/* A planted error (world >= 2): rank 1 passes counts that differ from
 * the others' in rank 0's entry (an allgatherv when `reduce` is 0, a
 * reduce_scatterv otherwise).  Every rank fails well within the
 * handle's timeout, with a message saying that the counts differ and
 * naming a rank; counts that overflow fail at once on their own. */
static inline void case_uneven_mismatch(struct hg_comm *c, int reduce,
                                        double timeout_s)
{
    int me = hg_comm_rank(c), world = hg_comm_world(c);
    char err[512] = "";
    if (world < 2)
        return;
    size_t counts[8], total = 0;
    REQUIRE(world <= 8, "world %d", world);
    for (int r = 0; r < world; r++)
        total += counts[r] = 1000 * (size_t)(r + 1);
    if (me == 1)
        counts[0]++;
    float *buf = calloc(total + 1, sizeof *buf), *out = calloc(total + 1, sizeof *out);
    REQUIRE(buf && out, "calloc");
    double t0 = hg_now();
    int rc = reduce ? hg_comm_reduce_scatterv_f32(c, buf, out, counts, err, sizeof err)
                    : hg_comm_allgatherv(c, buf, out, counts, err, sizeof err);
    double dt = hg_now() - t0;
    char name[16];
    snprintf(name, sizeof name, "rank %d", me == 1 ? 0 : 1);
    EXPECT(rc == -1 && strstr(err, "counts") && strstr(err, "rank") &&
               dt < timeout_s * 0.8,
           "rank %d: %s with other counts on rank 1: %d after %.2f s (timeout "
           "%g): %s", me, reduce ? "reduce_scatterv" : "allgatherv", rc, dt,
           timeout_s, err);
    printf("uneven, other counts: rank %d after %.2f s: %s\n", me, dt, err);
    free(buf);
    free(out);
}

/* Counts that cannot be a sum (a negative count converted, or an
 * overflowing sum) fail at once on the rank that passes them, naming the
 * entry, before anything moves (and abort the handle: not on mpi, whose
 * abort ends the job). */
static inline void case_uneven_bad_counts(struct hg_comm *c)
{
    int me = hg_comm_rank(c), world = hg_comm_world(c);
    char err[512] = "";
    size_t counts[8] = {0};
    float x[4] = {0};
    REQUIRE(world <= 8, "world %d", world);
    counts[world - 1] = (size_t)-4; /* -4 as a size_t */
    int rc = hg_comm_allgatherv(c, x, x, counts, err, sizeof err);
    EXPECT(rc == -1 && strstr(err, "negative"), "rank %d: a negative count: "
           "%d %s", me, rc, err);
    if (world >= 3) { /* three counts of PTRDIFF_MAX / 4 floats overflow */
        for (int r = 0; r < world; r++)
            counts[r] = PTRDIFF_MAX / 4;
        rc = hg_comm_reduce_scatterv_f32(c, x, x, counts, err, sizeof err);
        EXPECT(rc == -1 && strstr(err, "add up"), "rank %d: counts that "
               "overflow: %d %s", me, rc, err);
    }
}

/* World 3: rank 2 is killed while ranks 0 and 1 wait for it in a
 * reduce_scatterv (rank 1's started as a request): both fail naming
 * rank 2, well before the handle's timeout. */
static inline void case_uneven_dead(struct hg_comm *c, double timeout_s)
{
    int me = hg_comm_rank(c);
    char err[512] = "";
    size_t counts[3] = {1000, 0, 200000};
    if (hg_comm_world(c) != 3)
        return;
    if (me == 2) {
        sleep_s(0.3);
        fflush(stdout);
        kill(getpid(), SIGKILL);
    }
    float *x = calloc(202001, sizeof *x); /* [201000] send, [1000] recv */
    REQUIRE(x, "calloc");
    double t0 = hg_now();
    struct hg_comm_req r;
    int rc = me == 0 ? hg_comm_reduce_scatterv_f32(c, x, x + 201000, counts, err,
                                                   sizeof err)
                     : hg_comm_reduce_scatterv_f32_start(c, x, x + 201000, counts,
                                                         NULL, &r, err, sizeof err);
    if (me == 1) {
        EXPECT(rc == 0, "rank 1 start: %s", err);
        rc = hg_comm_wait_req(c, r, err, sizeof err);
    }
    double dt = hg_now() - t0;
    EXPECT(rc == -1 && strstr(err, "rank 2") && dt < timeout_s * 0.8,
           "rank %d: %d after %.2f s (timeout %g): %s", me, rc, dt, timeout_s,
           err);
    printf("uneven, a killed rank: rank %d after %.2f s: %s\n", me, dt, err);
    free(x);
}

#endif
