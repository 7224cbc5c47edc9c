/* prof_links.c - the profiler's link measurement: AllReduce and send/recv
 * between forked workers over the shm backend, as hgtrain runs them on one
 * machine (prof-links.h).  Part of the hgplan program. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/hg_base.h"
#include "comm/hg_comm.h"
#include "planner/prof-links.h"

#define STAGING (4u << 20) /* what trainer/launch.c gives the shm backend */
#define MSGLEN 256

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* What the workers write back through a shared anonymous mapping. */
struct shared {
    int W, ns, reps;
    double *in, *out; /* [W][ns][reps] CLOCK_MONOTONIC (one clock for every
                       * process) at entering and leaving each AllReduce */
    double *p2p;      /* [ns][reps] half a round trip (W = 2) */
    char *msg;        /* [W][MSGLEN] a failed rank's error */
};

/* A fixed amount of arithmetic (so that ranks sharing a core take longer,
 * as training's compute does); the result keeps the compiler from
 * dropping it. */
static volatile float sink;
static double iters_per_us = 300; /* calibrated before the fork */
static void spin(long n)
{
    float x = 1.f;
    for (long i = 0; i < n; i++)
        x = x * 0.9999999f + 1e-7f;
    sink = x;
}

static void busy(double us)
{
    spin((long)(us * iters_per_us));
}

/* iterations of spin() per microsecond on this core, alone */
static void calibrate(void)
{
    double best = 0;
    for (int k = 0; k < 3; k++) {
        double t0 = hg_now();
        spin(1000000);
        double r = 1e6 / ((hg_now() - t0) * 1e6);
        best = r > best ? r : best;
    }
    iters_per_us = best;
}

/* One worker: AllReduce of every size, then (W = 2) the ping-pong. */
static int worker(struct hg_comm_shm_group *grp, int rank, const struct hg_prof_link_opts *o,
                  struct shared *sh, char *err, size_t errlen)
{
    struct hg_comm *c = NULL;
    if (hg_comm_shm_join(&c, grp, rank, err, errlen) != 0)
        return -1;
    int64_t mx = 4;
    for (int s = 0; s < o->nsizes; s++)
        mx = o->sizes[s] > mx ? o->sizes[s] : mx;
    float *buf = calloc((size_t)mx / 4, sizeof(float)); /* [mx/4] zeros: sums stay finite */
    if (!buf) {
        hg_comm_free(c);
        return hg_kerr(err, errlen, "out of memory");
    }
    int rc = 0;
    /* round by round, each round through all the sizes: a stretch of the
     * machine busy elsewhere slows one call of each size rather than every
     * call of one (prof_tcp.c does the same) */
    for (int r = -o->warmup; r < o->reps && rc == 0; r++) {
        for (int s = 0; s < o->nsizes && rc == 0; s++) {
            size_t n = (size_t)o->sizes[s] / 4;
            /* every rank computes first, as in training: the call meets the
             * cores busy and (with more ranks than cores) time-shared */
            busy(o->busy_us);
            double t0 = hg_now();
            rc = hg_comm_allreduce_f32(c, buf, n, err, errlen);
            if (r >= 0) {
                size_t k = ((size_t)rank * o->nsizes + s) * o->reps + r;
                sh->in[k] = t0;
                sh->out[k] = hg_now();
            }
        }
    }
    for (int r = -o->warmup; r < o->reps && rc == 0 && sh->W == 2; r++) {
        for (int s = 0; s < o->nsizes && rc == 0; s++) {
            size_t b = (size_t)o->sizes[s];
            rc = hg_comm_barrier(c, err, errlen);
            double t0 = hg_now();
            if (rc == 0 && rank == 0)
                rc = hg_comm_send(c, buf, b, 1, err, errlen) ||
                     hg_comm_recv(c, buf, b, 1, err, errlen);
            else if (rc == 0)
                rc = hg_comm_recv(c, buf, b, 0, err, errlen) ||
                     hg_comm_send(c, buf, b, 0, err, errlen);
            if (rank == 0 && r >= 0)
                sh->p2p[(size_t)s * o->reps + r] = (hg_now() - t0) / 2;
        }
    }
    if (rc != 0)
        hg_comm_abort(c);
    free(buf);
    hg_comm_free(c);
    return rc ? -1 : 0;
}

/* Forks W workers, waits for them; 0, or -1 naming the first that failed. */
static int run_world(int W, const struct hg_prof_link_opts *o, struct shared *sh, char *err,
                     size_t errlen)
{
    struct hg_comm_shm_group *grp = NULL;
    if (hg_comm_shm_create(&grp, W, STAGING, o->timeout_s, err, errlen) != 0)
        return -1;
    pid_t pid[64];
    int started = 0, rc = 0;
    fflush(NULL);
    for (int r = 0; r < W; r++) {
        pid[r] = fork();
        if (pid[r] < 0) {
            rc = hg_kerr(err, errlen, "fork of worker %d: %s", r, strerror(errno));
            break;
        }
        if (pid[r] == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive hgplan */
            char e[MSGLEN] = "";
            int x = worker(grp, r, o, sh, e, sizeof(e));
            if (x != 0)
                snprintf(sh->msg + (size_t)r * MSGLEN, MSGLEN, "%s", e);
            hg_comm_shm_group_free(grp);
            _exit(x ? 1 : 0);
        }
        started++;
    }
    for (int r = 0; r < started; r++) {
        int st = 0;
        if (rc != 0)
            kill(pid[r], SIGKILL);
        while (waitpid(pid[r], &st, 0) < 0 && errno == EINTR)
            ;
        if (rc == 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
            const char *m = sh->msg + (size_t)r * MSGLEN;
            rc = hg_kerr(err, errlen, "shm world %d: worker %d %s%s%s", W, r,
                         WIFSIGNALED(st) ? "was killed" : "failed", m[0] ? ": " : "", m);
        }
    }
    hg_comm_shm_group_free(grp);
    return rc;
}

int hg_prof_measure_links(struct hg_profile *p, const struct hg_prof_link_opts *o, char *err,
                          size_t errlen)
{
    if (o->nsizes < 1 || o->nsizes > HG_PROF_MAXPTS || o->reps < 1 || o->warmup < 0)
        return hg_kerr(err, errlen, "links: %d sizes (1 to %d), %d repeats", o->nsizes,
                       HG_PROF_MAXPTS, o->reps);
    for (int s = 0; s < o->nsizes; s++)
        if (o->sizes[s] < 4 || o->sizes[s] % 4)
            return hg_kerr(err, errlen, "links: size %lld: a multiple of 4 bytes, >= 4",
                           (long long)o->sizes[s]);
    calibrate();
    int rc = 0;
    for (int w = 0; w < o->nworlds && rc == 0; w++) {
        int W = o->worlds[w];
        if (W < 2 || W > 64)
            return hg_kerr(err, errlen, "links: world %d: 2 to 64 workers", W);
        size_t nar = (size_t)W * o->nsizes * o->reps, np = (size_t)o->nsizes * o->reps;
        size_t bytes = (2 * nar + np) * sizeof(double) + (size_t)W * MSGLEN;
        void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return hg_kerr(err, errlen, "links: mmap: %s", strerror(errno));
        memset(m, 0, bytes);
        struct shared sh = {.W = W, .ns = o->nsizes, .reps = o->reps, .in = m,
                            .out = (double *)m + nar, .p2p = (double *)m + 2 * nar,
                            .msg = (char *)((double *)m + 2 * nar + np)};
        rc = run_world(W, o, &sh, err, errlen);
        double x[HG_PROF_MAXPTS], t[HG_PROF_MAXPTS], col[4096];
        int R = o->reps < 4096 ? o->reps : 4096;
        for (int s = 0; s < o->nsizes && rc == 0; s++) {
            x[s] = (double)o->sizes[s];
            /* a call: from the last rank's arrival (the others waited for
             * their compute, not for the link) until the last rank leaves,
             * as the simulator's aggregation task starts when every
             * replica's compute is done; the mean: the stalls of ranks
             * that share a core are part of the cost */
            double sum = 0;
            for (int r = 0; r < R; r++) {
                double a = 0, e = 0;
                for (int k = 0; k < W; k++) {
                    size_t i = ((size_t)k * o->nsizes + s) * o->reps + r;
                    a = sh.in[i] > a ? sh.in[i] : a;
                    e = sh.out[i] > e ? sh.out[i] : e;
                }
                sum += e - a;
            }
            t[s] = sum / R > 1e-9 ? sum / R : 1e-9;
        }
        if (rc == 0)
            rc = hg_prof_set_link(p, HG_LINK_SHM, HG_PROF_ALLREDUCE, W, o->nsizes, x, t, err,
                                  errlen);
        if (rc == 0 && o->log) {
            const struct hg_prof_link *l = hg_prof_find_link(p, HG_LINK_SHM, HG_PROF_ALLREDUCE, W);
            fprintf(o->log, "  shm allreduce world %d: latency %.2f us, bandwidth %.3g GB/s "
                    "(largest residual %.1f%%)\n", W, l->fit.a * 1e6,
                    l->fit.b > 0 ? 1e-9 / l->fit.b : 0.0, l->fit.rmax * 100);
        }
        if (rc == 0 && W == 2) {
            for (int s = 0; s < o->nsizes; s++) {
                memcpy(col, sh.p2p + (size_t)s * o->reps, (size_t)R * sizeof(double));
                qsort(col, (size_t)R, sizeof(double), cmp_dbl);
                t[s] = col[R / 2] > 1e-9 ? col[R / 2] : 1e-9;
            }
            rc = hg_prof_set_link(p, HG_LINK_SHM, HG_PROF_SENDRECV, 2, o->nsizes, x, t, err,
                                  errlen);
            const struct hg_prof_link *l = hg_prof_find_link(p, HG_LINK_SHM, HG_PROF_SENDRECV, 2);
            if (rc == 0 && o->log)
                fprintf(o->log, "  shm sendrecv: latency %.2f us, bandwidth %.3g GB/s (largest "
                        "residual %.1f%%)\n", l->fit.a * 1e6, l->fit.b > 0 ? 1e-9 / l->fit.b : 0.0,
                        l->fit.rmax * 100);
        }
        munmap(m, bytes);
    }
    return rc;
}
