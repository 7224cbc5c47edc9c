/* prof_tcp.c - the profiler's tcp link measurement: AllReduce, send/recv
 * and a parameter server between hgplan processes on several nodes, joined
 * as hgtrain's ranks join (the rendezvous store on rank 0's host, the job
 * token, the tcp backend) (prof-links.h).  Part of the hgplan program. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/hg_base.h"
#include "comm/hg_comm.h"
#include "planner/prof-links.h"

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* What one rank times, each call on its own clock after a barrier. */
struct times {
    double *ar;  /* [ns][reps] seconds of each AllReduce */
    double *ps;  /* [ns][reps] seconds of each PS step (push + pull) */
    double *pp;  /* [ns][reps] half of each round trip (rank 0; 0 elsewhere) */
    double *cpu; /* [ns][reps] the largest size only: seconds a fixed stretch of
                    arithmetic took longer with that size in flight between
                    ranks 0 and 1 beside it than without (0 elsewhere) */
};

/* Arithmetic the compiler keeps: n dependent steps. */
static double spin(long n)
{
    volatile double x = 1;
    for (long i = 0; i < n; i++)
        x = x * 1.0000001 + 1e-9;
    return x;
}

/* Steps of spin() that take about `s` seconds here. */
static long spin_steps(double s)
{
    long n = 1 << 16;
    double t = 0;
    while (n < (1L << 40)) {
        double t0 = hg_now();
        spin(n);
        t = hg_now() - t0;
        if (t > 5e-3)
            break;
        n *= 4;
    }
    return t > 0 ? (long)(s / t * (double)n) + 1 : n;
}

/* The calls, on an open communicator. */
static int measure(struct hg_comm *c, const struct hg_prof_tcp_opts *o, struct times *tm,
                   float *buf, char *err, size_t errlen)
{
    int ns = o->nsizes, R = o->reps, rank = o->rank;
    int rc = 0;
    /* every loop goes round by round, each round through all the sizes: a
     * stretch of the machine busy elsewhere lands on one call of each size,
     * which the median or the mean of many takes in its stride, rather than
     * on every call of one size, which bends the fit (the ping-pong's
     * latency came out 0 on a loaded machine) */
    for (int r = -o->warmup; r < R && rc == 0; r++) {
        for (int s = 0; s < ns && rc == 0; s++) {
            size_t n = (size_t)o->sizes[s] / 4;
            rc = hg_comm_barrier(c, err, errlen);
            double t0 = hg_now();
            if (rc == 0)
                rc = hg_comm_allreduce_f32(c, buf, n, err, errlen);
            if (rc == 0 && r >= 0)
                tm->ar[(size_t)s * R + r] = hg_now() - t0;
        }
    }
    /* ping-pong between ranks 0 and 1; the others wait at the barrier */
    for (int r = -o->warmup; r < R && rc == 0; r++) {
        for (int s = 0; s < ns && rc == 0; s++) {
            size_t b = (size_t)o->sizes[s];
            double t0 = hg_now();
            if (rank == 0)
                rc = hg_comm_send(c, buf, b, 1, err, errlen) ||
                     hg_comm_recv(c, buf, b, 1, err, errlen);
            else if (rank == 1)
                rc = hg_comm_recv(c, buf, b, 0, err, errlen) ||
                     hg_comm_send(c, buf, b, 0, err, errlen);
            if (rc == 0 && rank == 0 && r >= 0)
                tm->pp[(size_t)s * R + r] = (hg_now() - t0) / 2;
        }
        if (rc == 0)
            rc = hg_comm_barrier(c, err, errlen);
    }
    /* the compute a transfer costs its ends: ranks 0 and 1 time the same
     * arithmetic (twice the one-way time of the largest size, rank 0's
     * median, and 20 ms) alone and with that size going from 0 to 1 on
     * the progress threads beside it; the others wait at the barriers */
    double one = 0, ones[64];
    if (rank == 0 && rc == 0) {
        double *v = &tm->pp[(size_t)(ns - 1) * R];
        double *cp = malloc((size_t)R * sizeof(double));
        if (!cp)
            return hg_kerr(err, errlen, "tcp links: out of memory");
        memcpy(cp, v, (size_t)R * sizeof(double));
        qsort(cp, (size_t)R, sizeof(double), cmp_dbl);
        one = cp[R / 2];
        free(cp);
    }
    if (rc == 0)
        rc = hg_comm_allgather(c, &one, ones, sizeof(double), err, errlen);
    long steps = rc == 0 ? spin_steps(2 * ones[0] + 0.02) : 0;
    size_t big = (size_t)o->sizes[ns - 1];
    for (int r = -o->warmup; r < R && rc == 0; r++) {
        rc = hg_comm_barrier(c, err, errlen);
        double t0 = hg_now();
        spin(steps);
        double alone = hg_now() - t0;
        if (rc == 0)
            rc = hg_comm_barrier(c, err, errlen);
        struct hg_comm_req q;
        if (rc == 0 && rank <= 1)
            rc = rank == 0 ? hg_comm_send_start(c, buf, big, 1, &q, err, errlen)
                           : hg_comm_recv_start(c, buf, big, 0, &q, err, errlen);
        t0 = hg_now();
        spin(steps);
        double beside = hg_now() - t0;
        if (rc == 0 && rank <= 1)
            rc = hg_comm_wait_req(c, q, err, errlen);
        if (rc == 0 && r >= 0 && rank <= 1)
            tm->cpu[(size_t)(ns - 1) * R + r] = beside - alone;
    }
    if (rc != 0)
        return -1;
    /* a parameter server on rank 0, every rank a client: id s is a
     * parameter of sizes[s] bytes, each step pushes it and pulls it back */
    size_t numel[HG_PROF_MAXPTS]; /* [ns] floats per parameter */
    int clients[64];              /* [world] every rank, ascending */
    for (int s = 0; s < ns; s++)
        numel[s] = (size_t)o->sizes[s] / 4;
    for (int k = 0; k < o->world; k++)
        clients[k] = k;
    struct hg_ps_config cfg = {.server = 0, .clients = clients, .nclients = o->world,
                               .nparams = ns, .numel = numel, .timeout_s = 0.8 * o->timeout_s};
    struct hg_ps *ps = NULL;
    if (hg_ps_new(&ps, c, &cfg, err, errlen) != 0)
        return -1;
    for (int r = -o->warmup; r < R && rc == 0; r++) {
        for (int s = 0; s < ns && rc == 0; s++) {
            uint64_t step = (uint64_t)(r + o->warmup + 1);
            rc = hg_comm_barrier(c, err, errlen);
            double t0 = hg_now();
            if (rc == 0)
                rc = hg_ps_push(ps, s, buf, step, err, errlen) ||
                     hg_ps_pull(ps, s, buf, step, NULL, err, errlen);
            if (rc == 0 && r >= 0)
                tm->ps[(size_t)s * R + r] = hg_now() - t0;
        }
    }
    hg_ps_free(ps);
    return rc ? -1 : 0;
}

/* Every rank's times in all[world][4][ns*reps] (rank k's ar, ps, pp, cpu). */
static int gather(struct hg_comm *c, const struct hg_prof_tcp_opts *o, const double *mine,
                  double *all, char *err, size_t errlen)
{
    size_t per = 4 * (size_t)o->nsizes * o->reps * sizeof(double);
    return hg_comm_allgather(c, mine, all, per, err, errlen);
}

/* Fits one kind from all[world][4][ns][reps]: per call the slowest rank,
 * per size the mean (median: med) of the calls. */
static int fit(struct hg_profile *p, const struct hg_prof_tcp_opts *o, const double *all,
               int which, enum hg_prof_coll coll, int world, int med, char *err, size_t errlen)
{
    int ns = o->nsizes, R = o->reps;
    size_t per = 4 * (size_t)ns * R;
    double x[HG_PROF_MAXPTS], t[HG_PROF_MAXPTS];
    double *col = malloc((size_t)R * sizeof(double)); /* [reps] one size's calls */
    if (!col)
        return hg_kerr(err, errlen, "tcp links: out of memory");
    for (int s = 0; s < ns; s++) {
        x[s] = (double)o->sizes[s];
        for (int r = 0; r < R; r++) {
            double m = 0;
            for (int k = 0; k < o->world; k++) {
                double v = all[(size_t)k * per + (size_t)which * ns * R + (size_t)s * R + r];
                m = v > m ? v : m;
            }
            col[r] = m;
        }
        double v = 0;
        if (med) {
            qsort(col, (size_t)R, sizeof(double), cmp_dbl);
            v = col[R / 2];
        } else {
            for (int r = 0; r < R; r++)
                v += col[r] / R;
        }
        t[s] = v > 1e-9 ? v : 1e-9;
    }
    free(col);
    if (hg_prof_set_link(p, HG_LINK_TCP, coll, world, ns, x, t, err, errlen) != 0)
        return -1;
    const struct hg_prof_link *l = hg_prof_find_link(p, HG_LINK_TCP, coll, world);
    if (o->log && o->rank == 0) {
        double bw = l->fit.b > 0 ? 1 / l->fit.b : 0;
        fprintf(o->log, "  tcp %s world %d: latency %.1f us, bandwidth %.4g MB/s (%.4g Mbit/s; "
                "largest residual %.1f%%)\n", hg_prof_coll_name(coll), world, l->fit.a * 1e6,
                bw / 1e6, bw * 8 / 1e6, l->fit.rmax * 100);
    }
    return 0;
}

/* The sendrecv link's cpu: per call the mean of ranks 0 and 1's lost
 * seconds, the median over the calls, per byte (never below 0). */
static void fit_cpu(struct hg_profile *p, const struct hg_prof_tcp_opts *o, const double *all)
{
    int ns = o->nsizes, R = o->reps;
    size_t per = 4 * (size_t)ns * R, at = 3 * (size_t)ns * R + (size_t)(ns - 1) * R;
    double col[64];
    int n = R < 64 ? R : 64;
    for (int r = 0; r < n; r++)
        col[r] = (all[at + r] + all[per + at + r]) / 2;
    qsort(col, (size_t)n, sizeof(double), cmp_dbl);
    double lost = col[n / 2] > 0 ? col[n / 2] : 0, bytes = (double)o->sizes[ns - 1];
    if (hg_prof_set_link_cpu(p, HG_LINK_TCP, HG_PROF_SENDRECV, 2, lost / bytes) != 0)
        return;
    const struct hg_prof_link *l = hg_prof_find_link(p, HG_LINK_TCP, HG_PROF_SENDRECV, 2);
    if (o->log && o->rank == 0)
        fprintf(o->log, "  tcp sendrecv: an end's compute loses %.3g ms while %.4g MB go "
                "beside it (%.3g ns per byte; one way %.3g ms)\n", lost * 1e3, bytes / 1e6,
                l->cpu * 1e9, l->t[l->npts - 1] * 1e3);
}

int hg_prof_measure_tcp(struct hg_profile *p, const struct hg_prof_tcp_opts *o, char *err,
                        size_t errlen)
{
    if (o->world < 2 || o->world > 64 || o->rank < 0 || o->rank >= o->world)
        return hg_kerr(err, errlen, "tcp links: rank %d of a world of %d (2 to 64 ranks)",
                       o->rank, o->world);
    if (o->nsizes < 1 || o->nsizes > HG_PROF_MAXPTS || o->reps < 1 || o->warmup < 0)
        return hg_kerr(err, errlen, "tcp links: %d sizes (1 to %d), %d repeats", o->nsizes,
                       HG_PROF_MAXPTS, o->reps);
    int64_t mx = 4;
    for (int s = 0; s < o->nsizes; s++) {
        if (o->sizes[s] < 4 || o->sizes[s] % 4)
            return hg_kerr(err, errlen, "tcp links: size %lld: a multiple of 4 bytes, >= 4",
                           (long long)o->sizes[s]);
        mx = o->sizes[s] > mx ? o->sizes[s] : mx;
    }
    size_t nt = 4 * (size_t)o->nsizes * o->reps;
    float *buf = calloc((size_t)mx / 4, sizeof(float));       /* [mx/4] zeros: sums stay 0 */
    double *mine = calloc(nt, sizeof(double));                /* [4][ns][reps] ar, ps, pp, cpu */
    double *all = calloc(nt * (size_t)o->world, sizeof(double)); /* [world][4][ns][reps] */
    if (!buf || !mine || !all) {
        free(buf);
        free(mine);
        free(all);
        return hg_kerr(err, errlen, "tcp links: out of memory");
    }
    struct times tm = {.ar = mine, .ps = mine + nt / 4, .pp = mine + 2 * nt / 4,
                       .cpu = mine + 3 * nt / 4};
    struct hg_store_server *srv = NULL;
    struct hg_store *st = NULL;
    struct hg_comm *c = NULL;
    int rc = 0;
    if (o->rank == 0) {
        rc = hg_store_server_start(&srv, hg_store_loopback_only(o->host) ? o->host : "", o->port,
                                   o->token, o->world, err, errlen);
        if (rc == 0 && o->log)
            fprintf(o->log, "  rank 0: the store serves on port %d; waiting for %d rank%s\n",
                    hg_store_server_port(srv), o->world - 1, o->world == 2 ? "" : "s");
    }
    if (rc == 0)
        rc = hg_store_connect(&st, o->host, o->port, o->token, o->rank, o->timeout_s, err,
                              errlen);
    if (rc == 0)
        rc = hg_comm_tcp_new(&c, st, o->rank, o->world, o->timeout_s, err, errlen);
    if (rc == 0)
        rc = measure(c, o, &tm, buf, err, errlen);
    if (rc == 0)
        rc = gather(c, o, mine, all, err, errlen);
    /* nobody uses the store or the sockets after this: every rank has its
     * times, rank 0 may stop serving */
    if (rc == 0)
        rc = hg_comm_barrier(c, err, errlen);
    if (rc == 0)
        rc = fit(p, o, all, 0, HG_PROF_ALLREDUCE, o->world, 0, err, errlen) ||
             fit(p, o, all, 2, HG_PROF_SENDRECV, 2, 1, err, errlen) ||
             fit(p, o, all, 1, HG_PROF_PS, o->world, 0, err, errlen) ? -1 : 0;
    if (rc == 0)
        fit_cpu(p, o, all);
    if (rc != 0 && c)
        hg_comm_abort(c);
    hg_comm_free(c);
    hg_store_close(st);
    hg_store_server_stop(srv);
    free(buf);
    free(mine);
    free(all);
    return rc ? -1 : 0;
}
