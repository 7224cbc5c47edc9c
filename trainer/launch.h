/* launch.h - turning one hgtrain command into the ranks of a job: which
 * ranks run on this node, how they meet (the rendezvous store, the job
 * token), which backend carries their collectives; forking one worker per
 * local device and supervising them. See docs/distributed.md. */
#ifndef HG_TRAINER_LAUNCH_H
#define HG_TRAINER_LAUNCH_H

#include <stddef.h>

#include "comm/hg_comm.h"
#include "trainer/heartbeat.h"
#include "trainer/options.h"

#define HG_LAUNCH_MAX_LOCAL 256
/* A forked worker's exit status after a clean stop on SIGINT/SIGTERM (it
 * finished its update and the checkpoint was written): the launcher
 * reports a clean stop and exits 1, as a single process does. */
#define HG_LAUNCH_EXIT_SIGNAL 3
/* A worker that quit at once on a second SIGINT (Ctrl-C twice): its last
 * checkpoint is whatever it last wrote (128 + SIGINT, as a shell reports
 * an interrupted program). */
#define HG_LAUNCH_EXIT_QUIT 130

enum hg_launch_backend { HG_BK_NONE, HG_BK_SHM, HG_BK_TCP, HG_BK_NCCL, HG_BK_MPI };

struct hg_launch {
    int world;            /* ranks in the job */
    int rank0;            /* global rank of this node's first worker */
    int nlocal;           /* workers on this node */
    int forked;           /* set by hg_launch_start: the workers are children
                             of a supervising launcher (nlocal > 1, or one
                             rank of a multi-node tcp/nccl job) */
    int cuda;             /* devices are GPUs (dev[i] -1: a CPU worker of a mix) */
    int mixed;            /* GPUs and CPU workers (--devices cuda:0,cpu:2) */
    int dev[HG_LAUNCH_MAX_LOCAL]; /* device index of each local worker */
    enum hg_launch_backend backend;
    double timeout;       /* seconds */
    /* the store (tcp, nccl) */
    char host[256];
    int port;             /* 0: any free one (one-node jobs) */
    int serve;            /* this node hosts it (global rank 0 is here) */
    char file[4096];      /* file:// init: rank 0 writes host, port, token */
    char token[HG_STORE_TOKEN_LEN + 1];
    const char *how;      /* "devices", "slurm", "mpirun", "options" */
    /* set up by hg_launch_start */
    struct hg_comm_shm_group *shm;
    struct hg_store_server *server; /* in the process that serves */
    struct hg_store *store;         /* a worker's connection */
    struct hg_store_server *mpi_server; /* mpirun: the heartbeat's store (rank 0) */
    struct hg_hb *beat;             /* a worker's heartbeat (heartbeat.h) */
    struct hg_hb *watch;            /* where the store is served: the watcher */
    int port_pipe[2];     /* parent -> workers: the store's port */
    /* set in the launcher when its workers have ended (*local == -1) */
    int status;           /* the job's exit status */
    int dead;             /* local index of the worker that died by a signal
                             not sent here (SIGKILL, OOM) or stayed stopped;
                             -1: none (it exited, or none failed) */
    char dead_how[128];   /* "was killed by signal 9 (Killed)" */
};

/* Works out the job from the options and the environment (Slurm, mpirun).
 * Forks nothing, starts no thread. */
int hg_launch_plan(struct hg_launch *L, const struct hg_opts *o, char *err,
                   size_t errlen);
/* A line describing the job ("rank 0-3 of 4 on this node, backend shm"). */
void hg_launch_describe(const struct hg_launch *L, char *buf, size_t len);

/* Forks the local workers (see `forked`): returns in each worker with its
 * local index (0..nlocal-1); the parent supervises them and returns 0 with
 * *local == -1 once all have ended, with status and dead set (it has freed
 * what it set up, so the caller may start the job again).  A worker that
 * dies takes the others with it within the grace period: they notice
 * through the backend and exit naming it; the parent kills what is left
 * after the grace period.  With nlocal == 1 returns 0 at once in this
 * process. */
int hg_launch_start(struct hg_launch *L, int *local, char *err, size_t errlen);

/* In a worker (after the fork, before any thread of its own): the
 * communicator of global rank rank0 + local.  *comm is NULL for a world of
 * one. */
int hg_launch_connect(struct hg_launch *L, int local, struct hg_comm **comm,
                      char *err, size_t errlen);

/* In the launcher after hg_launch_start returned with *local == -1: whether
 * to start the job again (restart `attempt` of --max-restarts, counted from
 * 1).  Yes (returns 1) when a worker died and restarts are left: the dead
 * worker's device and its entries of the per-rank lists are dropped from
 * *o, the job resumes from the save dir's checkpoint_last.h5, the traces of
 * HG_TRACE_SAMPLES go to PATH.restartK; says what it does on stderr.
 * Returns -1 with the reason in err when it does not. */
int hg_launch_restart(const struct hg_launch *L, struct hg_opts *o, int attempt, char *err,
                      size_t errlen);

/* Frees what the worker holds (the store server when it serves). */
void hg_launch_finish(struct hg_launch *L, struct hg_comm *comm);

#endif
