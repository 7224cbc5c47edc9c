/* bench_comm.c - shm allreduce (f32) bus bandwidth, 1 KiB .. 256 MiB, world
 * 2 and 4 (forked workers), against memcpy bandwidth measured in the same
 * run.  busbw = 2*(W-1)/W * bytes / time (NCCL's definition); memcpy_GBps
 * is bytes copied per second by one memcpy of the same size.
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

static int worker(struct hg_comm *c, size_t max_bytes)
{
    char err[256];
    int me = hg_comm_rank(c), world = hg_comm_world(c);
    size_t n = max_bytes / sizeof(float);
    float *x = malloc(max_bytes);
    if (!x) {
        fprintf(stderr, "rank %d: out of memory\n", me);
        return 1;
    }
    for (size_t i = 0; i < n; i++)
        x[i] = (float)((i + (size_t)me) % 17) * 0.25f;
    for (int s = 0; s < nsizes; s++) {
        size_t bytes = sizes[s], m = bytes / sizeof(float);
        int iters = iters_for(bytes);
        if (hg_comm_allreduce_f32(c, x, m, err, sizeof err) != 0 || /* warm */
            hg_comm_barrier(c, err, sizeof err) != 0)
            goto fail;
        double t0 = hg_now();
        for (int i = 0; i < iters; i++)
            if (hg_comm_allreduce_f32(c, x, m, err, sizeof err) != 0)
                goto fail;
        if (hg_comm_barrier(c, err, sizeof err) != 0)
            goto fail;
        double t = (hg_now() - t0) / iters;
        if (me == 0) {
            double busbw = 2.0 * (world - 1) / world * (double)bytes / t / 1e9;
            printf("comm allreduce world %d bytes %zu busbw_GBps %.3f "
                   "memcpy_GBps %.3f ratio %.3f  (%.1f us, %d iters)\n",
                   world, bytes, busbw, memcpy_gbps[s], busbw / memcpy_gbps[s],
                   t * 1e6, iters);
            fflush(stdout);
        }
    }
    free(x);
    return 0;
fail:
    fprintf(stderr, "%s\n", err);
    free(x);
    return 1;
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
    printf("# shm allreduce f32, staging %zu MiB per rank, %ld CPUs\n",
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
