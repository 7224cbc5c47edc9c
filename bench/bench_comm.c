/* bench_comm.c - shm allreduce (f32) bus bandwidth, then allgatherv and
 * reduce_scatterv (f32) with uneven shares (rank r holds (r+1) parts of
 * W(W+1)/2), 1 KiB .. 256 MiB, world 2 and 4 (forked workers), against
 * memcpy bandwidth measured in the same run.  allreduce: busbw =
 * 2*(W-1)/W * bytes / time (NCCL's definition); allgatherv (bytes = the
 * gathered total) and reduce_scatterv (bytes = the vector each rank
 * gives): algbw = bytes / time; memcpy_GBps is bytes copied per second by
 * one memcpy of the same size.
 *
 * usage: bench_comm [staging_MiB (default 1: pieces of 512 KiB stay in L2;
 *                    8 MiB was 1.5-2x slower on 16 MiB+ here)] [max_MiB (default 256)] */
#define _GNU_SOURCE

#include "base/hg_base.h"
#include "comm/hg_comm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NMAX 32

static size_t sizes[NMAX];
static double memcpy_gbps[NMAX];
static int nsizes;

static int iters_for(size_t bytes)
{
    size_t it = ((size_t)1 << 30) / bytes; /* about 1 GiB moved per size */
    if (it < 3)
        it = 3;
    if (it > 2000)
        it = 2000;
    return (int)it;
}

/* The collective that a row times, on buffers of the worker's. */
enum op { OP_ALLREDUCE, OP_ALLGATHERV, OP_REDUCE_SCATTERV };
static const char *const op_name[] = {"allreduce", "allgatherv",
                                      "reduce_scatterv"};

struct bufs {
    float *x;       /* [max_bytes / 4] allreduce; reduce_scatterv's send */
    float *y;       /* [max_bytes / 4] reduce_scatterv's recv */
    char *g;        /* [max_bytes] allgatherv's recv (send: this rank's
                       block, in place) */
    size_t *counts; /* [world] */
};

/* Uneven shares of `total` units: rank r has (r+1)/(W(W+1)/2) of them,
 * the last rank the rest. */
static void shares(size_t *counts, int world, size_t total)
{
    size_t tri = (size_t)world * (size_t)(world + 1) / 2, left = total;
    for (int r = 0; r < world; r++) {
        counts[r] = r == world - 1 ? left : total * (size_t)(r + 1) / tri;
        left -= counts[r];
    }
}

static int run_op(struct hg_comm *c, enum op op, struct bufs *b, size_t bytes,
                  char *err, size_t errlen)
{
    int me = hg_comm_rank(c);
    switch (op) {
    case OP_ALLREDUCE:
        return hg_comm_allreduce_f32(c, b->x, bytes / sizeof(float), err, errlen);
    case OP_ALLGATHERV: {
        size_t off = 0;
        for (int r = 0; r < me; r++)
            off += b->counts[r];
        return hg_comm_allgatherv(c, b->g + off, b->g, b->counts, err, errlen);
    }
    case OP_REDUCE_SCATTERV:
        return hg_comm_reduce_scatterv_f32(c, b->x, b->y, b->counts, err, errlen);
    }
    return -1;
}

/* One row: op on `bytes` (allreduce: the vector; allgatherv: the gathered
 * total; reduce_scatterv: the vector each rank gives), timed between
 * barriers.  busbw for allreduce (NCCL's 2(W-1)/W); algbw = bytes / time
 * for the uneven ones, whose traffic per rank differs. */
static int row(struct hg_comm *c, enum op op, struct bufs *b, int s,
               char *err, size_t errlen)
{
    int world = hg_comm_world(c);
    size_t bytes = sizes[s];
    int iters = iters_for(bytes);
    shares(b->counts, world, op == OP_ALLGATHERV ? bytes : bytes / sizeof(float));
    if (run_op(c, op, b, bytes, err, errlen) != 0 || /* warm */
        hg_comm_barrier(c, err, errlen) != 0)
        return -1;
    double t0 = hg_now();
    for (int i = 0; i < iters; i++)
        if (run_op(c, op, b, bytes, err, errlen) != 0)
            return -1;
    if (hg_comm_barrier(c, err, errlen) != 0)
        return -1;
    double t = (hg_now() - t0) / iters;
    if (hg_comm_rank(c) == 0) {
        double bw = (double)bytes / t / 1e9;
        if (op == OP_ALLREDUCE)
            bw *= 2.0 * (world - 1) / world;
        printf("comm %s world %d bytes %zu %s %.3f memcpy_GBps %.3f ratio "
               "%.3f  (%.1f us, %d iters)\n", op_name[op], world, bytes,
               op == OP_ALLREDUCE ? "busbw_GBps" : "algbw_GBps", bw,
               memcpy_gbps[s], bw / memcpy_gbps[s], t * 1e6, iters);
        fflush(stdout);
    }
    return 0;
}

static int worker(struct hg_comm *c, size_t max_bytes)
{
    char err[256] = "";
    int me = hg_comm_rank(c), world = hg_comm_world(c);
    size_t n = max_bytes / sizeof(float);
    struct bufs b = {.x = malloc(max_bytes), .y = malloc(max_bytes),
                     .g = malloc(max_bytes),
                     .counts = malloc((size_t)world * sizeof *b.counts)};
    int rc = 1;
    if (!b.x || !b.y || !b.g || !b.counts) {
        fprintf(stderr, "rank %d: out of memory\n", me);
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        b.x[i] = (float)((i + (size_t)me) % 17) * 0.25f;
    memset(b.g, me, max_bytes);
    for (int op = 0; op < 3; op++)
        for (int s = 0; s < nsizes; s++)
            if (row(c, (enum op)op, &b, s, err, sizeof err) != 0) {
                fprintf(stderr, "%s\n", err);
                goto out;
            }
    rc = 0;
out:
    free(b.x);
    free(b.y);
    free(b.g);
    free(b.counts);
    return rc;
}

int main(int argc, char **argv)
{
    size_t stage_mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 1;
    size_t max_mib = argc > 2 ? strtoul(argv[2], NULL, 10) : 256;
    size_t max_bytes = max_mib << 20;
    for (size_t b = 1024; b <= max_bytes && nsizes < NMAX; b *= 4)
        sizes[nsizes++] = b;

    /* memcpy bandwidth per size, best of a few runs */
    char *src = malloc(max_bytes), *dst = malloc(max_bytes);
    if (!src || !dst) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    memset(src, 1, max_bytes);
    memset(dst, 2, max_bytes);
    for (int s = 0; s < nsizes; s++) {
        int iters = iters_for(sizes[s]);
        double best = 1e30;
        for (int rep = 0; rep < 3; rep++) {
            double t0 = hg_now();
            for (int i = 0; i < iters; i++) {
                memcpy(dst, src, sizes[s]);
                __asm__ __volatile__("" ::"r"(dst) : "memory");
            }
            double t = (hg_now() - t0) / iters;
            if (t < best)
                best = t;
        }
        memcpy_gbps[s] = (double)sizes[s] / best / 1e9;
    }
    free(src);
    free(dst);

    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    printf("# shm allreduce f32, allgatherv, reduce_scatterv f32, staging %zu "
           "MiB per rank, %ld CPUs\n",
           stage_mib, ncpu);
    int worlds[] = {2, 4};
    int status = 0;
    for (int w = 0; w < 2; w++) {
        int world = worlds[w];
        char err[256];
        struct hg_comm_shm_group *g;
        if (hg_comm_shm_create(&g, world, stage_mib << 20, 60.0, err,
                               sizeof err) != 0) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        fflush(stdout);
        pid_t pids[4];
        for (int r = 0; r < world; r++) {
            pids[r] = fork();
            if (pids[r] < 0) {
                perror("fork");
                return 1;
            }
            if (pids[r] == 0) {
                struct hg_comm *c;
                int rc = 1;
                if (hg_comm_shm_join(&c, g, r, err, sizeof err) == 0) {
                    rc = worker(c, max_bytes);
                    hg_comm_free(c);
                } else {
                    fprintf(stderr, "%s\n", err);
                }
                hg_comm_shm_group_free(g);
                fflush(stdout);
                _exit(rc);
            }
        }
        for (int r = 0; r < world; r++) {
            int st;
            waitpid(pids[r], &st, 0);
            if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
                status = 1;
        }
        hg_comm_shm_group_free(g);
    }
    return status;
}
