/* test_store.c - the rendezvous store: set/get/add/barrier between forked
 * clients, a get that waits for a later set, a get that times out naming
 * its key, a wrong token, raw sockets sending garbage, nothing, or an
 * oversize length (each rejected without disturbing the real clients), a
 * barrier missing a rank (the message names it), connecting where no
 * server listens, and the token file rules.
 *
 * The server runs in the parent and is started after the fork: its thread
 * would not survive fork, and a child holding copies of the server's
 * sockets would keep connections open that the server has closed. */
#define _GNU_SOURCE

#include "comm/hg_comm.h"
#include "comm/store-impl.h"
#include "tests/hg_test.h"
#include "tests/comm_test.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TOKEN "0123456789abcdef0123456789abcdef"
#define WRONG "0123456789abcdef0123456789abcdee"
#define CHILD_LIMIT_S 60
#define MAXW 8

typedef int client_fn(struct hg_store *st, int rank, int world);
/* Runs in the parent while the clients run (the server is up). */
typedef void parent_fn(int port, struct hg_store_server *s);

/* Forks nclients clients (ranks 0..nclients-1 of world), starts the server,
 * tells them its port, runs `during` in the parent, reaps them.  Returns
 * the number of clients that failed. */
static int run_clients(int world, int nclients, double timeout_s,
                       client_fn *fn, parent_fn *during)
{
    pid_t pids[MAXW];
    int pipes[MAXW][2];
    fflush(stdout);
    for (int r = 0; r < nclients; r++) {
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
            int rc = 1;
            if (hg_store_connect(&st, "127.0.0.1", port, TOKEN, r, timeout_s,
                                 err, sizeof err) != 0) {
                printf("rank %d: %s\n", r, err);
            } else {
                rc = fn(st, r, world);
                hg_store_close(st);
            }
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
    EXPECT(port > 0, "port %d", port);
    for (int r = 0; r < nclients; r++) {
        REQUIRE(write(pipes[r][1], &port, sizeof port) == (ssize_t)sizeof port,
                "write");
        close(pipes[r][1]);
    }
    if (during)
        during(port, s);
    int bad = 0, left = nclients, done[MAXW] = {0};
    double deadline = hg_now() + CHILD_LIMIT_S;
    while (left > 0 && hg_now() < deadline) {
        for (int r = 0; r < nclients; r++) {
            int stt = 0;
            if (done[r] || waitpid(pids[r], &stt, WNOHANG) != pids[r])
                continue;
            done[r] = 1;
            left--;
            if (!WIFEXITED(stt) || WEXITSTATUS(stt) != 0) {
                printf("client %d exited with status 0x%x\n", r, stt);
                bad++;
            }
        }
        sleep_s(0.002);
    }
    for (int r = 0; r < nclients; r++)
        if (!done[r]) {
            printf("client %d still running: killed\n", r);
            kill(pids[r], SIGKILL);
            waitpid(pids[r], NULL, 0);
            bad++;
        }
    hg_store_server_stop(s);
    return bad;
}

/* ------------------------------------------------------------ basics */

static int client_basic(struct hg_store *st, int me, int world)
{
    char err[512], key[64], val[64], got[64];
    size_t len = 0;
    snprintf(key, sizeof key, "k/%d", me);
    snprintf(val, sizeof val, "value of rank %d", me);
    REQUIRE(hg_store_set(st, key, val, strlen(val), err, sizeof err) == 0,
            "rank %d set: %s", me, err);
    /* the next rank's key: waits until it is set */
    int next = (me + 1) % world;
    snprintf(key, sizeof key, "k/%d", next);
    REQUIRE(hg_store_get(st, key, got, sizeof got, &len, err, sizeof err) == 0,
            "rank %d get %s: %s", me, key, err);
    snprintf(val, sizeof val, "value of rank %d", next);
    EXPECT(len == strlen(val) && memcmp(got, val, len) == 0,
           "rank %d: %s = '%.*s'", me, key, (int)len, got);
    /* a short buffer: copies cap bytes, says the full size */
    REQUIRE(hg_store_get(st, key, got, 3, &len, err, sizeof err) == 0,
            "get: %s", err);
    EXPECT(len == strlen(val) && memcmp(got, val, 3) == 0, "short get: %zu", len);

    int64_t v = 0;
    REQUIRE(hg_store_add(st, "counter", 10 + me, &v, err, sizeof err) == 0,
            "add: %s", err);
    EXPECT(v >= 10 + me, "add gave %lld", (long long)v);
    for (int i = 0; i < 20; i++) /* the same name, again and again */
        REQUIRE(hg_store_barrier(st, "b", world, err, sizeof err) == 0,
                "rank %d barrier %d: %s", me, i, err);
    int64_t want = 0;
    for (int r = 0; r < world; r++)
        want += 10 + r;
    REQUIRE(hg_store_add(st, "counter", 0, &v, err, sizeof err) == 0,
            "add: %s", err);
    EXPECT(v == want, "rank %d: counter %lld, want %lld", me, (long long)v,
           (long long)want);
    /* GET of a counter: 8 bytes little-endian */
    unsigned char b[8];
    REQUIRE(hg_store_get(st, "counter", b, 8, &len, err, sizeof err) == 0,
            "get counter: %s", err);
    EXPECT(len == 8 && b[0] == (unsigned char)want, "counter bytes");
    /* an ADD on a key that is not a counter is refused, the handle lives */
    EXPECT(hg_store_add(st, "k/0", 1, &v, err, sizeof err) == -1 &&
               strstr(err, "not a counter"), "add on a string: %s", err);

    /* the largest value, from rank 0 to everyone */
    size_t big = HG_STORE_MAX_VALUE;
    unsigned char *p = malloc(big);
    REQUIRE(p, "malloc");
    if (me == 0) {
        for (size_t i = 0; i < big; i++)
            p[i] = (unsigned char)(i * 7 + 1);
        REQUIRE(hg_store_set(st, "big", p, big, err, sizeof err) == 0,
                "set big: %s", err);
        EXPECT(hg_store_set(st, "bigger", p, big + 1, err, sizeof err) == -1 &&
                   strstr(err, "bigger"), "oversize value: %s", err);
    } else {
        memset(p, 0, big);
        REQUIRE(hg_store_get(st, "big", p, big, &len, err, sizeof err) == 0,
                "get big: %s", err);
        size_t wrong = 0;
        for (size_t i = 0; i < big; i++)
            wrong += p[i] != (unsigned char)(i * 7 + 1);
        EXPECT(len == big && wrong == 0, "big value: %zu bytes, %zu wrong", len,
               wrong);
    }
    free(p);
    EXPECT(hg_store_set(st, "", "x", 1, err, sizeof err) == -1, "empty key set");
    char longkey[HG_STORE_MAX_KEY + 2];
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = '\0';
    EXPECT(hg_store_set(st, longkey, "x", 1, err, sizeof err) == -1,
           "a %zu-byte key accepted", strlen(longkey));
    REQUIRE(hg_store_barrier(st, "end", world, err, sizeof err) == 0,
            "barrier end: %s", err);
    return failures ? 1 : 0;
}

/* Rank 1 waits for a key rank 0 sets 0.3 s later; rank 1's GET of a key
 * nobody sets times out naming it, and the handle still works. */
static int client_wait(struct hg_store *st, int me, int world)
{
    (void)world;
    char err[512], got[16];
    size_t len = 0;
    if (me == 0) {
        sleep_s(0.3);
        REQUIRE(hg_store_set(st, "late", "yes", 3, err, sizeof err) == 0,
                "set: %s", err);
        /* rank 1 sets it after its own 1 s timeout: ask a few times */
        int rc = -1;
        for (int i = 0; i < 5 && rc != 0; i++)
            rc = hg_store_get(st, "after", got, sizeof got, &len, err, sizeof err);
        EXPECT(rc == 0, "get after: %s", err);
        return failures ? 1 : 0;
    }
    double t0 = hg_now();
    REQUIRE(hg_store_get(st, "late", got, sizeof got, &len, err, sizeof err) == 0,
            "get late: %s", err);
    double dt = hg_now() - t0;
    EXPECT(len == 3 && memcmp(got, "yes", 3) == 0, "late value");
    EXPECT(dt > 0.2 && dt < 5, "get returned after %.2f s", dt);
    printf("get waited %.2f s for a later set\n", dt);
    t0 = hg_now();
    int rc = hg_store_get(st, "never", got, sizeof got, &len, err, sizeof err);
    dt = hg_now() - t0;
    EXPECT(rc == -1 && strstr(err, "'never'") && strstr(err, "rank 1"),
           "get never: %d %s", rc, err);
    EXPECT(dt > 0.9 && dt < 3, "get timed out after %.2f s (timeout 1)", dt);
    printf("get timeout after %.2f s: %s\n", dt, err);
    REQUIRE(hg_store_set(st, "after", "ok", 2, err, sizeof err) == 0,
            "set after a timeout: %s", err);
    return failures ? 1 : 0;
}

/* ------------------------------------------------------------ attackers */

static int raw_connect(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd >= 0, "socket");
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    REQUIRE(connect(fd, (struct sockaddr *)&a, sizeof a) == 0, "connect: %s",
            strerror(errno));
    return fd;
}

/* 1 when the server closes fd within limit_s (read gives 0 or a reset). */
static int closed_by_server(int fd, double limit_s)
{
    double deadline = hg_now() + limit_s;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int ms = (int)((deadline - hg_now()) * 1000);
        if (ms <= 0 || poll(&p, 1, ms) <= 0)
            return 0;
        char b[256];
        ssize_t n = recv(fd, b, sizeof b, 0);
        if (n == 0 || (n < 0 && errno == ECONNRESET))
            return 1;
        if (n < 0)
            return 0;
        /* an ERR frame may come first */
    }
}

static void send_all(int fd, const void *b, size_t n)
{
    ssize_t k = send(fd, b, n, MSG_NOSIGNAL);
    EXPECT(k == (ssize_t)n, "raw send: %zd", k);
}

static void hello(unsigned char *b, const char *token)
{
    hg_store_put_header(b, HG_STORE_HELLO, HG_STORE_TOKEN_LEN, 4);
    memcpy(b + HG_STORE_HDR_LEN, token, HG_STORE_TOKEN_LEN);
    memset(b + HG_STORE_HDR_LEN + HG_STORE_TOKEN_LEN, 0, 4);
}

static void attack(int port, struct hg_store_server *s)
{
    unsigned long before = hg_store_server_rejected(s);
    /* stray: connects and says nothing, for the whole test */
    int stray = raw_connect(port);
    /* garbage bytes */
    int fd = raw_connect(port);
    send_all(fd, "GET / HTTP/1.0\r\n\r\n", 18);
    EXPECT(closed_by_server(fd, 2.0), "garbage connection left open");
    close(fd);
    /* an oversize value length in an otherwise good frame */
    unsigned char b[HG_STORE_HDR_LEN + HG_STORE_TOKEN_LEN + 4];
    hello(b, TOKEN);
    fd = raw_connect(port);
    send_all(fd, b, sizeof b);
    hg_store_put_header(b, HG_STORE_SET, 3, HG_STORE_MAX_VALUE + 1);
    send_all(fd, b, HG_STORE_HDR_LEN);
    EXPECT(closed_by_server(fd, 2.0), "oversize length left open");
    close(fd);
    /* an oversize key length before any hello */
    fd = raw_connect(port);
    hg_store_put_header(b, HG_STORE_SET, HG_STORE_MAX_KEY + 1, 0);
    send_all(fd, b, HG_STORE_HDR_LEN);
    EXPECT(closed_by_server(fd, 2.0), "oversize key left open");
    close(fd);
    /* a good frame that is not a hello, first */
    fd = raw_connect(port);
    hg_store_put_header(b, HG_STORE_SET, 1, 1);
    memcpy(b + HG_STORE_HDR_LEN, "kv", 2);
    send_all(fd, b, HG_STORE_HDR_LEN + 2);
    EXPECT(closed_by_server(fd, 2.0), "set before hello left open");
    close(fd);
    /* a wrong token, raw */
    fd = raw_connect(port);
    hello(b, WRONG);
    send_all(fd, b, sizeof b);
    EXPECT(closed_by_server(fd, 2.0), "wrong token left open");
    close(fd);
    /* a wrong token through the client: a clear error, quickly */
    char err[512];
    struct hg_store *st = NULL;
    double t0 = hg_now();
    int rc = hg_store_connect(&st, "127.0.0.1", port, WRONG, 0, 2.0, err,
                              sizeof err);
    EXPECT(rc == -1 && !st && strstr(err, "wrong job token"),
           "wrong token: %d %s", rc, err);
    EXPECT(!strstr(err, WRONG) && !strstr(err, TOKEN), "a token in: %s", err);
    EXPECT(hg_now() - t0 < 1.5, "wrong token took %.2f s", hg_now() - t0);
    printf("wrong token: %s\n", err);
    /* a half-sent frame from an authenticated client stays pending while
     * the others go on; then it leaves */
    fd = raw_connect(port);
    hello(b, TOKEN);
    send_all(fd, b, sizeof b);
    hg_store_put_header(b, HG_STORE_SET, 1, 1000);
    send_all(fd, b, HG_STORE_HDR_LEN + 1);
    /* a good client from the parent still works */
    REQUIRE(hg_store_connect(&st, "127.0.0.1", port, TOKEN, 0, 5.0, err,
                             sizeof err) == 0, "parent connect: %s", err);
    int64_t v;
    EXPECT(hg_store_add(st, "parent", 1, &v, err, sizeof err) == 0 && v == 1,
           "parent add: %s", err);
    hg_store_close(st);
    close(fd);
    EXPECT(hg_store_server_rejected(s) >= before + 6,
           "server counted %lu rejections", hg_store_server_rejected(s) - before);
    sleep_s(0.3); /* the clients finish while the stray still hangs on */
    close(stray);
}

static int client_busy(struct hg_store *st, int me, int world)
{
    char err[512], key[64];
    for (int i = 0; i < 300; i++) {
        int64_t v;
        snprintf(key, sizeof key, "busy/%d/%d", me, i);
        REQUIRE(hg_store_set(st, key, &i, sizeof i, err, sizeof err) == 0,
                "rank %d set %d: %s", me, i, err);
        REQUIRE(hg_store_add(st, "busy", 1, &v, err, sizeof err) == 0,
                "rank %d add %d: %s", me, i, err);
        snprintf(key, sizeof key, "busy/%d/%d", (me + 1) % world, i);
        int got = -1;
        size_t len;
        REQUIRE(hg_store_get(st, key, &got, sizeof got, &len, err, sizeof err) == 0,
                "rank %d get %s: %s", me, key, err);
        EXPECT(got == i, "rank %d: %s = %d", me, key, got);
        if (i % 10 == 0) /* let the attacks interleave */
            sleep_s(0.002);
    }
    REQUIRE(hg_store_barrier(st, "busy", world, err, sizeof err) == 0,
            "barrier: %s", err);
    return failures ? 1 : 0;
}

/* ------------------------------------------------------------ failures */

static int client_missing(struct hg_store *st, int me, int world)
{
    char err[512] = "";
    if (me == 1)
        return 0; /* connected, but never comes to the barrier */
    double t0 = hg_now();
    int rc = hg_store_barrier(st, "b", world, err, sizeof err);
    double dt = hg_now() - t0;
    EXPECT(rc == -1, "barrier without rank 1 returned %d", rc);
    EXPECT(strstr(err, "ranks not arrived: 1") && !strstr(err, "arrived: 1 "),
           "rank %d got: %s", me, err);
    EXPECT(dt >= 0.45 && dt < 2.0, "barrier gave up after %.2f s (0.5)", dt);
    if (me == 0)
        printf("barrier timeout after %.2f s: %s\n", dt, err);
    return failures ? 1 : 0;
}

static void test_no_server(void)
{
    /* a port nobody listens on: bound, then closed */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    REQUIRE(bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
                getsockname(fd, (struct sockaddr *)&a, &len) == 0, "bind");
    close(fd);
    int port = ntohs(a.sin_port);
    char err[512];
    struct hg_store *st = NULL;
    double t0 = hg_now();
    int rc = hg_store_connect(&st, "127.0.0.1", port, TOKEN, 3, 0.4, err,
                              sizeof err);
    double dt = hg_now() - t0;
    char want[128];
    snprintf(want, sizeof want, "store 127.0.0.1:%d: rank 3 could not connect "
             "within 0.4 s: ", port);
    EXPECT(rc == -1 && !st && strstr(err, want), "no server: %d %s", rc, err);
    EXPECT(dt >= 0.3 && dt < 1.5, "gave up after %.2f s (0.4)", dt);
    printf("no server: %.2f s: %s\n", dt, err);
    /* bad arguments */
    EXPECT(hg_store_connect(&st, "127.0.0.1", port, "short", 0, 1, err,
                            sizeof err) == -1, "short token accepted");
    struct hg_store_server *s;
    EXPECT(hg_store_server_start(&s, NULL, 0, "zz", 2, err, sizeof err) == -1,
           "server with a bad token");
}

/* ------------------------------------------------------------ tokens */

static void test_tokens(void)
{
    char t1[HG_STORE_TOKEN_LEN + 1], t2[HG_STORE_TOKEN_LEN + 1];
    char err[512];
    REQUIRE(hg_store_token_new(t1, err, sizeof err) == 0, "new: %s", err);
    REQUIRE(hg_store_token_new(t2, err, sizeof err) == 0, "new: %s", err);
    EXPECT(strlen(t1) == HG_STORE_TOKEN_LEN && strspn(t1, "0123456789abcdef") ==
               HG_STORE_TOKEN_LEN, "token '%s'", t1);
    EXPECT(strcmp(t1, t2) != 0, "two tokens alike");
    EXPECT(hg_store_token_equal(t1, t1) && !hg_store_token_equal(t1, t2),
           "token_equal");

    const char *tmp = getenv("TMPDIR");
    char dir[256], path[300];
    snprintf(dir, sizeof dir, "%s/hg_test_store.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    REQUIRE(mkdtemp(dir), "mkdtemp");
    snprintf(path, sizeof path, "%s/token", dir);
    unsetenv("HG_JOB_TOKEN");
    REQUIRE(hg_store_token_save(t1, path, err, sizeof err) == 0, "save: %s", err);
    struct stat sb;
    REQUIRE(stat(path, &sb) == 0, "stat");
    EXPECT((sb.st_mode & 0777) == 0600, "saved with mode %o", sb.st_mode & 0777);
    char got[HG_STORE_TOKEN_LEN + 1] = "";
    EXPECT(hg_store_token_load(got, path, err, sizeof err) == 0 &&
               strcmp(got, t1) == 0, "load: %s", err);
    /* saving again replaces it */
    REQUIRE(hg_store_token_save(t2, path, err, sizeof err) == 0, "save: %s", err);
    EXPECT(hg_store_token_load(got, path, err, sizeof err) == 0 &&
               strcmp(got, t2) == 0, "load after a second save: %s", err);
    /* readable by others: refused, the file named, the token not shown */
    chmod(path, 0644);
    EXPECT(hg_store_token_load(got, path, err, sizeof err) == -1 &&
               strstr(err, path) && strstr(err, "0644") && !strstr(err, t2),
           "0644 file: %s", err);
    printf("0644: %s\n", err);
    chmod(path, 0640);
    EXPECT(hg_store_token_load(got, path, err, sizeof err) == -1, "0640 accepted");
    chmod(path, 0400);
    EXPECT(hg_store_token_load(got, path, err, sizeof err) == 0, "0400: %s", err);
    chmod(path, 0600);
    /* the environment wins over the file, even a bad file */
    setenv("HG_JOB_TOKEN", t1, 1);
    chmod(path, 0644);
    EXPECT(hg_store_token_load(got, path, err, sizeof err) == 0 &&
               strcmp(got, t1) == 0, "env: %s", err);
    EXPECT(hg_store_token_load(got, NULL, err, sizeof err) == 0, "env, no file");
    setenv("HG_JOB_TOKEN", "not-hex-and-too-short", 1);
    EXPECT(hg_store_token_load(got, path, err, sizeof err) == -1 &&
               strstr(err, "HG_JOB_TOKEN") && !strstr(err, "not-hex"),
           "bad env: %s", err);
    unsetenv("HG_JOB_TOKEN");
    chmod(path, 0600);
    EXPECT(hg_store_token_load(got, NULL, err, sizeof err) == -1, "no source");
    /* contents: without newline fine; short, long, non-hex refused */
    static const struct {
        const char *text;
        int ok;
    } cases[] = {
        {"0123456789abcdef0123456789ABCDEF", 1},
        {"0123456789abcdef0123456789abcdef\n", 1},
        {"0123456789abcdef0123456789abcde\n", 0},
        {"0123456789abcdef0123456789abcdef0\n", 0},
        {"0123456789abcdef0123456789abcdeg\n", 0},
        {"", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        FILE *f = fopen(path, "w");
        REQUIRE(f, "fopen");
        fputs(cases[i].text, f);
        fclose(f);
        int rc = hg_store_token_load(got, path, err, sizeof err);
        EXPECT((rc == 0) == cases[i].ok, "case %zu: %d %s", i, rc, err);
    }
    EXPECT(hg_store_token_save("xyz", path, err, sizeof err) == -1,
           "saved a bad token");
    char missing[320];
    snprintf(missing, sizeof missing, "%s/none", dir);
    EXPECT(hg_store_token_load(got, missing, err, sizeof err) == -1 &&
               strstr(err, missing), "missing file: %s", err);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGPIPE, SIG_IGN);
    test_tokens();
    test_no_server();
    double t0 = hg_now();
    EXPECT(run_clients(4, 4, 20.0, client_basic, NULL) == 0, "basic");
    printf("basic: %.2f s\n", hg_now() - t0);
    EXPECT(run_clients(2, 2, 1.0, client_wait, NULL) == 0, "wait");
    EXPECT(run_clients(3, 3, 20.0, client_busy, attack) == 0, "attacks");
    EXPECT(run_clients(3, 3, 0.5, client_missing, NULL) == 0, "missing rank");
    printf("%s\n", failures ? "FAIL" : "PASS");
    return failures ? 1 : 0;
}
