/* launch.c - see launch.h.  The parent forks before anything starts a
 * thread or touches a device (OpenMP, BLAS, HDF5 and CUDA are not safe
 * across a fork once running); each worker then initialises its own. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kernels/hg_kernels.h"
#include "trainer/launch.h"
#ifdef HG_HAVE_CUDA
#include "kernels/cuda/hg_cuda.h"
#endif

#define GRACE_S 20.0 /* after a worker dies, the others get this long */
#define NOTIFY_S 10.0 /* a launcher tries this long to tell the store a rank died */

static const char *backend_name(enum hg_launch_backend b)
{
    static const char *const names[] = {[HG_BK_NONE] = "none", [HG_BK_SHM] = "shm",
                                        [HG_BK_TCP] = "tcp", [HG_BK_NCCL] = "nccl",
                                        [HG_BK_MPI] = "mpi"};
    return names[b];
}

/* --devices / --distributed-gpus -> nlocal, cuda, dev[] */
static int parse_devices(struct hg_launch *L, const struct hg_opts *o, char *err,
                         size_t errlen)
{
    const char *d = o->devices;
    L->nlocal = 1;
    L->dev[0] = 0;
    if (o->distributed_gpus > 0) {
        if (d && *d)
            return hg_kerr(err, errlen, "give --devices or --distributed-gpus, not both");
        if (o->distributed_gpus > HG_LAUNCH_MAX_LOCAL)
            return hg_kerr(err, errlen, "--distributed-gpus %lld: at most %d",
                           (long long)o->distributed_gpus, HG_LAUNCH_MAX_LOCAL);
        L->cuda = 1;
        L->nlocal = (int)o->distributed_gpus;
        for (int i = 0; i < L->nlocal; i++)
            L->dev[i] = i;
        return 0;
    }
    if (!d || !*d || strcmp(d, "cpu") == 0)
        return 0;
    char *end;
    if (strncmp(d, "cpu:", 4) == 0) {
        long n = strtol(d + 4, &end, 10);
        if (end == d + 4 || *end || n < 1 || n > HG_LAUNCH_MAX_LOCAL)
            return hg_kerr(err, errlen, "--devices %s: want cpu:N with 1 <= N <= %d", d,
                           HG_LAUNCH_MAX_LOCAL);
        L->nlocal = (int)n;
        for (int i = 0; i < L->nlocal; i++)
            L->dev[i] = i;
        return 0;
    }
    /* cuda:0,cuda:1,... or a mix of kinds, cuda:0,cpu:2 (a GPU worker and
     * two CPU workers: dev -1) */
    L->cuda = 1;
    L->nlocal = 0;
    int ngpu = 0;
    for (const char *p = d; *p;) {
        int gpu = strncmp(p, "cuda:", 5) == 0;
        if ((!gpu && strncmp(p, "cpu", 3) != 0) || L->nlocal == HG_LAUNCH_MAX_LOCAL)
            return hg_kerr(err, errlen, "--devices %s: want cpu, cpu:N, cuda:I,cuda:J,... "
                           "or a mix such as cuda:0,cpu:2", d);
        long i = 1;
        end = (char *)p + 3;
        if (gpu || p[3] == ':')
            i = strtol(p + (gpu ? 5 : 4), &end, 10);
        if (end == p + (gpu ? 5 : 4) || (*end && *end != ',') || i < 0 || i > 1023 ||
            (!gpu && (i < 1 || L->nlocal + i > HG_LAUNCH_MAX_LOCAL)))
            return hg_kerr(err, errlen, "--devices %s: bad device '%.*s'", d,
                           (int)strcspn(p, ","), p);
        if (gpu)
            L->dev[L->nlocal++] = (int)i, ngpu++;
        else
            for (long k = 0; k < i; k++)
                L->dev[L->nlocal++] = -1;
        p = *end ? end + 1 : end;
    }
    L->mixed = ngpu < L->nlocal;
    if (ngpu == 0)
        return hg_kerr(err, errlen, "--devices %s: write cpu:N for CPU workers", d);
    return 0;
}

/* The first host of a Slurm node list: "a[01-04,07],b" -> "a01". */
static int slurm_first_host(const char *list, char *out, size_t len)
{
    size_t n = strcspn(list, "[,");
    if (n == 0 || n >= len)
        return -1;
    memcpy(out, list, n);
    out[n] = 0;
    if (list[n] == '[') {
        size_t k = strcspn(list + n + 1, "-,]");
        if (k == 0 || n + k >= len)
            return -1;
        memcpy(out + n, list + n + 1, k);
        out[n + k] = 0;
    }
    return 0;
}

static int env_int(const char *name, long *v)
{
    const char *s = getenv(name);
    char *end;
    if (!s || !*s)
        return 0;
    *v = strtol(s, &end, 10);
    return *end == 0;
}

/* --devices cuda...: the GPUs named exist (counted here only when one
 * worker runs on this node), and this build has CUDA. */
static int check_gpus(const struct hg_launch *L, const struct hg_opts *o, char *err,
                      size_t errlen)
{
#ifdef HG_HAVE_CUDA
    /* Counting GPUs starts the CUDA driver, which a forked child could
     * then not use: with several local workers each checks its own
     * device after the fork (hg_exec_new_dev names it). */
    if (L->nlocal > 1)
        return 0;
    char why[256] = "";
    int n = hg_cuda_device_count(why, sizeof(why));
    if (n <= 0)
        return hg_kerr(err, errlen, "--devices %s: no usable GPU (%s)",
                       o->devices ? o->devices : "cuda", why);
    for (int i = 0; i < L->nlocal; i++)
        if (L->dev[i] >= n) /* -1: a CPU worker of a mix */
            return hg_kerr(err, errlen, "--devices %s: cuda:%d does not exist (%d "
                           "GPU%s)", o->devices ? o->devices : "cuda", L->dev[i], n,
                           n == 1 ? "" : "s");
    return 0;
#else
    (void)L;
    return hg_kerr(err, errlen, "--devices %s: this hgtrain was built without "
                   "CUDA (configure --with-cuda)", o->devices ? o->devices : "cuda");
#endif
}

/* Who started this process, as the environment and the options say. */
struct starter {
    const char *bk;   /* --distributed-backend, "auto" when not given */
    const char *init; /* --distributed-init-method; NULL for none and env:// */
    int under_mpi;    /* mpirun's (or a PMI's) variables are set */
    int torch;        /* torchrun or env:// */
    int slurm;        /* a Slurm task */
    long tr_rank, tr_world, tr_local; /* RANK, WORLD_SIZE, LOCAL_RANK */
    long sl_rank, sl_ntasks;          /* SLURM_PROCID, SLURM_NTASKS */
};

/* Reads the launcher's variables into S, checking torchrun's. */
static int read_starter(struct starter *S, const struct hg_launch *L,
                        const struct hg_opts *o, char *err, size_t errlen)
{
    memset(S, 0, sizeof(*S));
    S->bk = o->distributed_backend ? o->distributed_backend : "auto";
    S->init = o->distributed_init_method;
    S->under_mpi = getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") ||
                   getenv("PMIX_RANK");
    /* torchrun (or any env:// launcher): one process per rank, RANK and
     * WORLD_SIZE, the store at MASTER_ADDR:MASTER_PORT; it wins over the
     * Slurm variables of the job it runs in */
    int env_init = S->init && strcmp(S->init, "env://") == 0;
    if (env_init)
        S->init = NULL;
    S->tr_rank = -1, S->tr_world = -1, S->tr_local = 0;
    S->torch = (env_init || (getenv("RANK") && getenv("WORLD_SIZE"))) && !S->under_mpi &&
               !S->init;
    if (S->torch) {
        static const char *const need[] = {"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"};
        for (int i = 0; i < 4; i++)
            if (!getenv(need[i]) || !*getenv(need[i]))
                return hg_kerr(err, errlen, "torchrun/env://: %s is not set (RANK, WORLD_SIZE, "
                               "MASTER_ADDR and MASTER_PORT are needed)", need[i]);
        if (!env_int("RANK", &S->tr_rank) || !env_int("WORLD_SIZE", &S->tr_world) ||
            (getenv("LOCAL_RANK") && !env_int("LOCAL_RANK", &S->tr_local)) ||
            S->tr_world < 1 || S->tr_rank < 0 || S->tr_rank >= S->tr_world || S->tr_local < 0)
            return hg_kerr(err, errlen, "torchrun/env://: RANK '%s', WORLD_SIZE '%s', "
                           "LOCAL_RANK '%s': want 0 <= RANK < WORLD_SIZE", getenv("RANK"),
                           getenv("WORLD_SIZE"),
                           getenv("LOCAL_RANK") ? getenv("LOCAL_RANK") : "");
        if (L->nlocal != 1)
            return hg_kerr(err, errlen, "torchrun/env://: torchrun starts one process per "
                           "rank; give one device per process, not --devices %s", o->devices);
    }
    S->slurm = !S->init && !S->torch && env_int("SLURM_PROCID", &S->sl_rank) &&
               env_int("SLURM_NTASKS", &S->sl_ntasks) && !S->under_mpi;
    return 0;
}

/* mpirun starts the ranks: 1 when the backend is MPI (the world is known
 * after MPI_Init), 0 when not, -1 on an error. */
static int plan_mpi(struct hg_launch *L, const struct starter *S, const struct hg_opts *o,
                    char *err, size_t errlen)
{
    if (!(strcmp(S->bk, "mpi") == 0 || (strcmp(S->bk, "auto") == 0 && S->under_mpi &&
                                        hg_comm_have_mpi())))
        return 0;
    if (!hg_comm_have_mpi())
        return hg_kerr(err, errlen, "--distributed-backend mpi: this hgtrain was "
                       "built without MPI (configure --with-mpi)");
    if (L->nlocal != 1)
        return hg_kerr(err, errlen, "--distributed-backend mpi: mpirun starts the "
                       "ranks; give one device per process, not --devices %s",
                       o->devices);
    L->backend = HG_BK_MPI;
    L->how = "mpirun";
    L->world = -1; /* known after MPI_Init */
    return 1;
}

/* A Slurm task: the world, this node's first rank, and the store on the
 * job's first host at a port made from the job id. */
static int plan_slurm(struct hg_launch *L, const struct starter *S, const struct hg_opts *o,
                      char *err, size_t errlen)
{
    if (S->sl_ntasks < 1 || S->sl_rank < 0 || S->sl_rank >= S->sl_ntasks)
        return hg_kerr(err, errlen, "Slurm: SLURM_PROCID %ld outside SLURM_NTASKS %ld",
                       S->sl_rank, S->sl_ntasks);
    L->world = (int)S->sl_ntasks * L->nlocal;
    L->rank0 = (int)S->sl_rank * L->nlocal;
    L->how = "slurm";
    if (o->distributed_world_size > 0 && o->distributed_world_size != L->world)
        return hg_kerr(err, errlen, "--distributed-world-size %lld, but Slurm runs "
                       "%ld tasks of %d workers", (long long)o->distributed_world_size,
                       S->sl_ntasks, L->nlocal);
    const char *nl = getenv("SLURM_STEP_NODELIST");
    if (!nl)
        nl = getenv("SLURM_JOB_NODELIST");
    if (!nl)
        nl = getenv("SLURM_NODELIST");
    if (!nl || slurm_first_host(nl, L->host, sizeof(L->host)) != 0)
        return hg_kerr(err, errlen, "Slurm: cannot read the first host of "
                       "SLURM_NODELIST '%s'", nl ? nl : "");
    long job = 0;
    env_int("SLURM_JOB_ID", &job);
    L->port = o->distributed_port > 0 ? (int)o->distributed_port
                                      : 20000 + (int)(job % 20000);
    return 0;
}

/* torchrun: the world and rank it gives, the GPU of LOCAL_RANK, the
 * store at MASTER_ADDR:MASTER_PORT, and a job token every rank knows. */
static int plan_torch(struct hg_launch *L, const struct starter *S, const struct hg_opts *o,
                      char *err, size_t errlen)
{
    L->world = (int)S->tr_world;
    L->rank0 = (int)S->tr_rank;
    L->how = "torchrun";
    if (o->distributed_world_size > 0 && o->distributed_world_size != L->world)
        return hg_kerr(err, errlen, "--distributed-world-size %lld, but WORLD_SIZE is %ld",
                       (long long)o->distributed_world_size, S->tr_world);
    /* --devices cuda: this process's GPU is LOCAL_RANK */
    if (L->cuda && o->devices && strcmp(o->devices, "cuda") == 0)
        L->dev[0] = (int)S->tr_local;
    long port;
    if (!env_int("MASTER_PORT", &port) || port < 1 || port > 65535 ||
        strlen(getenv("MASTER_ADDR")) >= sizeof(L->host))
        return hg_kerr(err, errlen, "torchrun/env://: MASTER_ADDR '%s', MASTER_PORT '%s': "
                       "want a host and a port", getenv("MASTER_ADDR"),
                       getenv("MASTER_PORT"));
    /* torchrun's agent may serve its own store on MASTER_PORT: ours
     * then takes the next port */
    const char *agent = getenv("TORCHELASTIC_USE_AGENT_STORE");
    if (agent && (strcmp(agent, "True") == 0 || strcmp(agent, "1") == 0))
        port = port < 65535 ? port + 1 : port - 1;
    snprintf(L->host, sizeof(L->host), "%s", getenv("MASTER_ADDR"));
    L->port = (int)port;
    if (L->world > 1 && !getenv("HG_JOB_TOKEN") && !o->distributed_token_file)
        return hg_kerr(err, errlen, "torchrun/env://: the ranks are separate processes "
                       "and need one job token: export HG_JOB_TOKEN (32 hex digits, e.g. "
                       "from `od -An -tx1 -N16 /dev/urandom | tr -d ' \\n'`) before "
                       "torchrun, or give --distributed-token-file");
    return 0;
}

/* The backend (L->backend) for a world that has collectives, checked
 * against the node and the build. */
static int choose_backend(struct hg_launch *L, const char *bk, int one_node,
                          const struct hg_opts *o, char *err, size_t errlen)
{
    if (strcmp(bk, "auto") == 0)
        L->backend = L->cuda && !L->mixed && hg_comm_have_nccl() ? HG_BK_NCCL
                     : one_node                     ? HG_BK_SHM
                                                    : HG_BK_TCP;
    else if (strcmp(bk, "shm") == 0)
        L->backend = HG_BK_SHM;
    else if (strcmp(bk, "tcp") == 0)
        L->backend = HG_BK_TCP;
    else
        L->backend = HG_BK_NCCL;
    if (L->backend == HG_BK_SHM && !one_node)
        return hg_kerr(err, errlen, "--distributed-backend shm: the job has %d ranks but "
                       "this node only %d workers (shm joins processes of one node; "
                       "use tcp)", L->world, L->nlocal);
    if (L->backend == HG_BK_NCCL && !hg_comm_have_nccl())
        return hg_kerr(err, errlen, "--distributed-backend nccl: built without NCCL");
    /* NCCL sums device buffers: the workers must have GPUs */
    if (L->backend == HG_BK_NCCL && (!L->cuda || L->mixed))
        return hg_kerr(err, errlen, "--distributed-backend nccl: %s workers (--devices "
                       "%s): use shm, tcp or mpi", L->mixed ? "some are CPU" : "the workers "
                       "are CPU", o->devices ? o->devices : "cpu");
    return 0;
}

/* The store: where (--distributed-init-method, or this host for one
 * node), and who serves it (rank 0). */
static int plan_store(struct hg_launch *L, const struct starter *S, int one_node,
                      char *err, size_t errlen)
{
    const char *init = S->init;
    L->serve = L->rank0 == 0;
    if (init && strncmp(init, "tcp://", 6) == 0) {
        const char *hp = init + 6, *colon = strrchr(hp, ':');
        char *end;
        long port = colon ? strtol(colon + 1, &end, 10) : -1;
        if (!colon || colon == hp || *end || port < 1 || port > 65535 ||
            (size_t)(colon - hp) >= sizeof(L->host))
            return hg_kerr(err, errlen, "--distributed-init-method %s: want "
                           "tcp://HOST:PORT", init);
        memcpy(L->host, hp, (size_t)(colon - hp));
        L->host[colon - hp] = 0;
        L->port = (int)port;
    } else if (init && strncmp(init, "file://", 7) == 0) {
        if (snprintf(L->file, sizeof(L->file), "%s", init + 7) >= (int)sizeof(L->file) ||
            L->file[0] != '/')
            return hg_kerr(err, errlen, "--distributed-init-method %s: want "
                           "file:///absolute/path", init);
    } else if (init) {
        return hg_kerr(err, errlen, "--distributed-init-method %s: want tcp://HOST:PORT, "
                       "file:///PATH or env://", init);
    } else if (!S->slurm && !S->torch) {
        if (!one_node)
            return hg_kerr(err, errlen, "a world of %d ranks with %d on this node needs "
                           "--distributed-init-method (or Slurm)", L->world, L->nlocal);
        snprintf(L->host, sizeof(L->host), "127.0.0.1");
        L->port = 0;
    }
    return 0;
}

/* The token: given, or made here when nobody else needs to know it. */
static int plan_token(struct hg_launch *L, int one_node, const struct hg_opts *o,
                      char *err, size_t errlen)
{
    if (getenv("HG_JOB_TOKEN") || o->distributed_token_file) {
        if (hg_store_token_load(L->token, o->distributed_token_file, err, errlen) != 0)
            return -1;
    } else if (one_node || (L->file[0] && L->serve)) {
        if (hg_store_token_new(L->token, err, errlen) != 0)
            return -1;
    } else if (!L->file[0]) {
        return hg_kerr(err, errlen, "a job on several nodes needs its token on every "
                       "node: export HG_JOB_TOKEN (32 hex digits, e.g. from "
                       "`od -An -tx1 -N16 /dev/urandom | tr -d ' \\n'`) or give "
                       "--distributed-token-file (mode 0600)");
    }
    return 0;
}

int hg_launch_plan(struct hg_launch *L, const struct hg_opts *o, char *err,
                   size_t errlen)
{
    memset(L, 0, sizeof(*L));
    L->port_pipe[0] = L->port_pipe[1] = -1;
    L->timeout = o->distributed_timeout > 0 ? o->distributed_timeout : 300;
    if (parse_devices(L, o, err, errlen) != 0)
        return -1;
    if (L->cuda && check_gpus(L, o, err, errlen) != 0)
        return -1;
    struct starter S;
    if (read_starter(&S, L, o, err, errlen) != 0)
        return -1;

    L->world = o->distributed_world_size > 0 ? (int)o->distributed_world_size : L->nlocal;
    L->rank0 = (int)o->distributed_rank;
    L->how = o->distributed_world_size > 0 || S.init ? "options" : "devices";
    int mpi = plan_mpi(L, &S, o, err, errlen);
    if (mpi != 0)
        return mpi < 0 ? -1 : 0;
    if (S.slurm && plan_slurm(L, &S, o, err, errlen) != 0)
        return -1;
    if (S.torch && plan_torch(L, &S, o, err, errlen) != 0)
        return -1;
    if (L->world < 1 || L->rank0 < 0 || L->rank0 + L->nlocal > L->world)
        return hg_kerr(err, errlen, "this node's ranks %d..%d do not fit in a world of %d "
                       "(--distributed-rank, --distributed-world-size, --devices)",
                       L->rank0, L->rank0 + L->nlocal - 1, L->world);
    int one_node = L->world == L->nlocal;
    /* one rank needs no collectives, unless a backend is named: then they
     * run anyway (a world of 1: the path of W ranks, tested on one device) */
    if (L->world == 1 && strcmp(S.bk, "auto") == 0) {
        L->backend = HG_BK_NONE;
        return 0;
    }
    if (choose_backend(L, S.bk, one_node, o, err, errlen) != 0)
        return -1;
    if (L->backend == HG_BK_SHM)
        return 0;
    if (plan_store(L, &S, one_node, err, errlen) != 0)
        return -1;
    return plan_token(L, one_node, o, err, errlen);
}

/* ------------------------------------------------------------- restart */

/* drops entry i of a per-rank list given for n ranks */
static void drop_entry(struct hg_opt_list *l, int n, int i)
{
    if (l->n != n || i >= n)
        return;
    memmove(l->v + i, l->v + i + 1, (size_t)(n - i - 1) * sizeof(double));
    l->n--;
}

static volatile sig_atomic_t parent_signal;

int hg_launch_restart(const struct hg_launch *L, struct hg_opts *o, int attempt, char *err,
                      size_t errlen)
{
    static char trace0[4096]; /* HG_TRACE_SAMPLES as the user gave it */
    int n = L->nlocal, d = L->dead;
    if (L->status == 0)
        return hg_kerr(err, errlen, "the job ended well");
    if (parent_signal)
        return hg_kerr(err, errlen, "the launcher was stopped by a signal");
    if (o->max_restarts <= 0)
        return hg_kerr(err, errlen, "no --max-restarts");
    if (d < 0)
        return hg_kerr(err, errlen, "no worker died by a signal (a worker that exits "
                       "with an error would fail the same way again)");
    if (attempt > o->max_restarts)
        return hg_kerr(err, errlen, "rank %d %s, and the %lld restart%s of "
                       "--max-restarts %lld %s used", L->rank0 + d, L->dead_how,
                       (long long)o->max_restarts, o->max_restarts == 1 ? "" : "s",
                       (long long)o->max_restarts, o->max_restarts == 1 ? "is" : "are");
    int all = o->restart_devices && strcmp(o->restart_devices, "all") == 0;
    if (n < 2 && !all)
        return hg_kerr(err, errlen, "rank %d %s and no device survives", L->rank0 + d,
                       L->dead_how);
    /* the survivors' devices (all: the same as before) */
    char dev[4096] = "";
    size_t k = 0;
    if (!L->cuda)
        k = (size_t)snprintf(dev, sizeof(dev), "cpu:%d", all ? n : n - 1);
    else
        for (int i = 0; i < n && k < sizeof(dev); i++)
            if (i != d || all)
                k += L->dev[i] < 0 ? (size_t)snprintf(dev + k, sizeof(dev) - k, "%scpu:1",
                                                      k ? "," : "")
                                   : (size_t)snprintf(dev + k, sizeof(dev) - k, "%scuda:%d",
                                                      k ? "," : "", L->dev[i]);
    char *devs = strdup(dev);
    if (k >= sizeof(dev) || !devs) {
        free(devs);
        return hg_kerr(err, errlen, "out of memory");
    }
    free(o->devices);
    o->devices = devs;
    o->distributed_gpus = 0;
    if (!all) {
        drop_entry(&o->rank_capacity, n, d);
        drop_entry(&o->rank_slowdown, n, d);
        drop_entry(&o->max_tokens_per_rank, n, d);
        drop_entry(&o->max_sentences_per_rank, n, d);
        /* its capacities are in --rank-capacity now; it describes the old shape */
        free(o->cluster_file);
        o->cluster_file = NULL;
    }
    /* resume from the last checkpoint, whatever the first start restored */
    char ck[4096];
    snprintf(ck, sizeof(ck), "%s/checkpoint_last.h5", o->save_dir);
    int have = !o->no_save && access(ck, F_OK) == 0;
    if (have) {
        char *rf = strdup("checkpoint_last.h5");
        if (!rf)
            return hg_kerr(err, errlen, "out of memory");
        free(o->restore_file);
        o->restore_file = rf;
        o->reset_dataloader = o->reset_lr_scheduler = o->reset_meters = 0;
        o->reset_optimizer = 0;
    }
    /* a test aid (docs/distributed.md): each start traces to its own files */
    const char *tr = getenv("HG_TRACE_SAMPLES");
    if (tr && *tr) {
        if (!trace0[0])
            snprintf(trace0, sizeof(trace0), "%s", tr);
        char t[4200];
        snprintf(t, sizeof(t), "%s.restart%d", trace0, attempt);
        setenv("HG_TRACE_SAMPLES", t, 1);
    }
    int m = all ? n : n - 1;
    fprintf(stderr, "hgtrain: rank %d %s; restart %d of %lld on the %d %sdevice%s "
            "(--devices %s), %s%s\n", L->rank0 + d, L->dead_how, attempt,
            (long long)o->max_restarts, m, all ? "" : "surviving ", m == 1 ? "" : "s",
            o->devices, have ? "resuming from " : "from the start (no checkpoint yet",
            have ? ck : ")");
    return 1;
}

void hg_launch_describe(const struct hg_launch *L, char *buf, size_t len)
{
    if (L->world == 1) {
        snprintf(buf, len, "1 rank%s%s", L->backend != HG_BK_NONE ? ", backend " : "",
                 L->backend != HG_BK_NONE ? backend_name(L->backend) : "");
        return;
    }
    if (L->nlocal == 1)
        snprintf(buf, len, "rank %d of %d (%s), backend %s", L->rank0, L->world, L->how,
                 backend_name(L->backend));
    else
        snprintf(buf, len, "ranks %d-%d of %d on this node (%s), backend %s", L->rank0,
                 L->rank0 + L->nlocal - 1, L->world, L->how, backend_name(L->backend));
}

/* ------------------------------------------------------------ the store */

static int need_store(const struct hg_launch *L)
{
    return L->backend == HG_BK_TCP || L->backend == HG_BK_NCCL;
}

/* file:// init: "HOST PORT TOKEN\n", 0600, written whole (tmp + rename) */
static int write_init_file(const struct hg_launch *L, int port, char *err, size_t errlen)
{
    char host[256], tmp[4200];
    if (gethostname(host, sizeof(host)) != 0)
        snprintf(host, sizeof(host), "localhost");
    host[sizeof(host) - 1] = 0;
    snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", L->file, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0)
        return hg_kerr(err, errlen, "--distributed-init-method file://%s: %s", L->file,
                       strerror(errno));
    char line[512];
    int n = snprintf(line, sizeof(line), "%s %d %s\n", host, port, L->token);
    int ok = write(fd, line, (size_t)n) == n && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, L->file) != 0) {
        unlink(tmp);
        return hg_kerr(err, errlen, "--distributed-init-method file://%s: %s", L->file,
                       strerror(errno));
    }
    return 0;
}

static int read_init_file(struct hg_launch *L, int rank, char *err, size_t errlen)
{
    double deadline = hg_now() + L->timeout;
    for (;;) {
        int fd = open(L->file, O_RDONLY | O_NOFOLLOW);
        if (fd >= 0) {
            struct stat st;
            char buf[512];
            ssize_t n = fstat(fd, &st) == 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
            close(fd);
            if (st.st_uid != getuid() || (st.st_mode & 077))
                return hg_kerr(err, errlen, "file://%s: not ours or readable by others "
                               "(mode %03o): refusing its token", L->file,
                               (unsigned)(st.st_mode & 0777));
            if (n > 0) {
                buf[n] = 0;
                char tok[64];
                if (sscanf(buf, "%255s %d %63s", L->host, &L->port, tok) != 3 ||
                    strlen(tok) != HG_STORE_TOKEN_LEN || L->port < 1 || L->port > 65535)
                    return hg_kerr(err, errlen, "file://%s: not an init file", L->file);
                memcpy(L->token, tok, HG_STORE_TOKEN_LEN + 1);
                return 0;
            }
        }
        if (hg_now() > deadline)
            return hg_kerr(err, errlen, "rank %d: waited %.0f s for rank 0 to write "
                           "file://%s", rank, L->timeout, L->file);
        struct timespec ts = {0, 100000000};
        nanosleep(&ts, NULL);
    }
}

/* In the process that serves: start the store, publish its port. */
static int serve(struct hg_launch *L, char *err, size_t errlen)
{
    const char *bind_host = hg_store_loopback_only(L->host) ? L->host : "";
    if (hg_store_server_start(&L->server, bind_host, L->port, L->token, L->world, err,
                              errlen) != 0)
        return -1;
    L->port = hg_store_server_port(L->server);
    /* the ranks this process forks are watched by waitpid (supervise) */
    if (hg_hb_watch_start(&L->watch, bind_host[0] ? bind_host : "127.0.0.1", L->port,
                          L->token, L->world, L->rank0, L->rank0 + L->nlocal,
                          hg_hb_limit(L->timeout), err, errlen) != 0)
        return -1;
    if (L->file[0])
        return write_init_file(L, L->port, err, errlen);
    return 0;
}

/* ------------------------------------------------------------ supervise */

static volatile sig_atomic_t parent_sigints; /* SIGINTs to the launcher */

static void on_parent_signal(int sig)
{
    parent_signal = sig;
    if (sig == SIGINT)
        parent_sigints++;
}

static void describe_status(int status, char *buf, size_t len)
{
    if (WIFSIGNALED(status))
        snprintf(buf, len, "was killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
}

/* A stopped worker (SIGSTOP, SIGTSTP, a debugger) holds every collective
 * until the timeout; after this long stopped it is named and the job ends. */
#define STOPPED_S 30.0

/* a stopped worker that the launcher kills is the job's dead rank */
static void stop_dead(struct hg_launch *L, int i, int sig, int *ours)
{
    ours[i] = 1;
    if (L->dead < 0) {
        L->dead = i;
        snprintf(L->dead_how, sizeof(L->dead_how), "was stopped (signal %d, %s) and killed",
                 sig, strsignal(sig));
    }
}

/* the first local rank that is stopped now, or -1 */
static int stopped_rank(int n, const int *done, const double *stopped_at)
{
    for (int i = 0; i < n; i++)
        if (!done[i] && stopped_at[i] > 0)
            return i;
    return -1;
}

/* A rank's claim in the store (hg_launch_connect): "pid P on HOST". */
static void claim_value(pid_t pid, char *buf, size_t len)
{
    char host[256];
    if (gethostname(host, sizeof(host)) != 0)
        snprintf(host, sizeof(host), "localhost");
    host[sizeof(host) - 1] = 0;
    snprintf(buf, len, "pid %ld on %s", (long)pid, host);
}

/* What the launcher tells the store when one of its ranks dies (in a
 * thread of its own: the store may be slow or not up yet). */
struct notify {
    struct hg_launch L; /* a copy: the store's host, port, token, init file */
    int rank;
    char who[320];      /* the dead worker's claim value */
    char why[512];      /* cut to HG_STORE_ABORT_MAX by hg_store_abort */
};

/* Connects to the job's store as no rank and aborts the job with why,
 * unless the dead worker was a second claimant of a rank that another
 * process holds (that job goes on). */
static void *notify_main(void *arg)
{
    struct notify *n = arg;
    struct hg_launch *L = &n->L;
    char err[512], host[256], holder[320], key[32];
    struct hg_store *st = NULL;
    L->timeout = NOTIFY_S;
    if (!L->serve && L->file[0] && read_init_file(L, n->rank, err, sizeof(err)) != 0)
        goto fail;
    if (L->serve) /* this process serves it: where serve() listens */
        snprintf(host, sizeof(host), "%s",
                 hg_store_loopback_only(L->host) ? L->host : "127.0.0.1");
    else
        snprintf(host, sizeof(host), "%s", L->host);
    if (L->port < 1 || hg_store_connect(&st, host, L->port, L->token, -1, NOTIFY_S, err,
                                        sizeof(err)) != 0) {
        if (L->port < 1)
            snprintf(err, sizeof(err), "its port is not known");
        goto fail;
    }
    snprintf(key, sizeof(key), "rank/%d", n->rank);
    int held = hg_store_claim(st, key, n->who, holder, sizeof(holder), err, sizeof(err));
    if (held == 1 && strcmp(holder, n->who) != 0) {
        hg_store_close(st); /* it was refused: another process holds the rank */
        free(n);
        return NULL;
    }
    if (hg_store_abort(st, n->why, err, sizeof(err)) != 0)
        goto fail;
    hg_store_close(st);
    free(n);
    return NULL;
fail:
    fprintf(stderr, "hgtrain: could not tell the rendezvous store that rank %d died "
            "(the ranks waiting for it fail at their timeout): %s\n", n->rank, err);
    hg_store_close(st);
    free(n);
    return NULL;
}

/* What supervise knows of the workers of this node. */
struct workers {
    struct hg_launch *L;
    const pid_t *pid;
    int n, live;
    int code;      /* the launcher's exit status so far */
    int forwarded; /* the signal last forwarded to the workers */
    int clean;     /* ranks that saved and stopped on a signal */
    int quit;      /* ranks that quit at once (a second Ctrl-C) */
    int quit_sent; /* this launcher quit them on its own second Ctrl-C */
    int done[HG_LAUNCH_MAX_LOCAL];
    int ours[HG_LAUNCH_MAX_LOCAL]; /* killed by this launcher */
    double stopped_at[HG_LAUNCH_MAX_LOCAL];
    int stop_sig[HG_LAUNCH_MAX_LOCAL];
    /* half the peers' timeout, so the launcher names the stopped rank before
     * a rank that waits for it gives up */
    double stop_limit;
    double kill_at; /* when the ranks still running are killed; 0: not set */
    pthread_t notify; /* telling the store of the first dead rank */
    int notifying;
};

/* The job fails because local worker i did (how: "was killed by signal 9
 * (Killed)"): tell the store, whose waits then fail at once naming it,
 * also on other nodes and for a rank that never reached the store. */
static void report_dead(struct workers *w, int i, const char *how)
{
    struct hg_launch *L = w->L;
    if (w->notifying || !need_store(L))
        return;
    struct notify *n = malloc(sizeof(*n));
    if (!n)
        return;
    n->L = *L;
    n->rank = L->rank0 + i;
    claim_value(w->pid[i], n->who, sizeof(n->who));
    snprintf(n->why, sizeof(n->why), "rank %d (%s) %s", n->rank, n->who, how);
    if (pthread_create(&w->notify, NULL, notify_main, n) != 0) {
        free(n);
        return;
    }
    w->notifying = 1;
}

/* Worker i (pid p) ended with status: record how, and whether the job
 * fails because of it (the first failure names its rank). */
static void worker_ended(struct workers *w, int i, pid_t p, int status)
{
    struct hg_launch *L = w->L;
    int n = w->n;
    w->done[i] = 1;
    w->live--;
    if (WIFSIGNALED(status) && !w->ours[i] && L->dead < 0) {
        L->dead = i;
        describe_status(status, L->dead_how, sizeof(L->dead_how));
    }
    /* a rank that stopped on a signal after its save is no failure */
    if (WIFEXITED(status) && WEXITSTATUS(status) == HG_LAUNCH_EXIT_SIGNAL) {
        w->clean++;
        return;
    }
    /* nor one that quit at once on a second Ctrl-C: the others
     * go too (a checkpoint is renamed into place whole or not at
     * all; a .tmp left behind is removed at the next start) */
    if (WIFEXITED(status) && WEXITSTATUS(status) == HG_LAUNCH_EXIT_QUIT) {
        w->quit++;
        for (int k = 0; k < n; k++)
            if (!w->done[k]) {
                w->ours[k] = 1;
                kill(w->pid[k], SIGKILL);
            }
        return;
    }
    if (w->quit) /* killed here after the quit: no failure */
        return;
    /* it left because another rank stopped beating: it named that
     * one, and blaming it here would point at the wrong rank */
    if (WIFEXITED(status) && WEXITSTATUS(status) == HG_HB_EXIT_PEER && w->code == 0) {
        w->code = 1;
        w->kill_at = hg_now() + GRACE_S;
        return;
    }
    int bad = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    int st = stopped_rank(n, w->done, w->stopped_at);
    if (bad && w->code == 0 && st >= 0) {
        /* it gave up waiting for a stopped rank: that one is the cause */
        fprintf(stderr, "hgtrain: rank %d (pid %ld) has been stopped (signal %d, %s) "
                "for %.0f s and rank %d gave up waiting for it; stopping the job\n",
                L->rank0 + st, (long)w->pid[st], w->stop_sig[st], strsignal(w->stop_sig[st]),
                hg_now() - w->stopped_at[st], L->rank0 + i);
        w->stopped_at[st] = 0;
        stop_dead(L, st, w->stop_sig[st], w->ours);
        kill(w->pid[st], SIGKILL);
        w->code = 1;
        w->kill_at = hg_now() + GRACE_S;
        report_dead(w, st, L->dead_how);
    } else if (bad && w->code == 0) {
        char how[128];
        describe_status(status, how, sizeof(how));
        fprintf(stderr, "hgtrain: rank %d (pid %ld) %s; stopping the other "
                "ranks\n", L->rank0 + i, (long)p, how);
        w->code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
        w->kill_at = hg_now() + GRACE_S;
        report_dead(w, i, how);
    }
}

/* Every change of a worker's state since the last call: stopped,
 * continued or ended. */
static void reap(struct workers *w)
{
    int status;
    pid_t p;
    while ((p = waitpid(-1, &status, WNOHANG | WUNTRACED | WCONTINUED)) > 0) {
        int i = 0;
        while (i < w->n && w->pid[i] != p)
            i++;
        if (i == w->n || w->done[i])
            continue;
        if (WIFSTOPPED(status)) {
            w->stopped_at[i] = hg_now();
            w->stop_sig[i] = WSTOPSIG(status);
            continue;
        }
        if (WIFCONTINUED(status)) {
            w->stopped_at[i] = 0;
            continue;
        }
        worker_ended(w, i, p, status);
    }
}

/* A worker stopped for longer than stop_limit is killed and the job
 * ends. */
static void kill_stopped(struct workers *w)
{
    struct hg_launch *L = w->L;
    int n = w->n;
    for (int i = 0; i < n; i++)
        if (!w->done[i] && w->stopped_at[i] > 0 &&
            hg_now() - w->stopped_at[i] >= w->stop_limit) {
            /* named first: the ranks waiting for it fail after this */
            fprintf(stderr, "hgtrain: rank %d (pid %ld) has been stopped (signal %d, %s) "
                    "for %.0f s; stopping the job\n", L->rank0 + i, (long)w->pid[i],
                    w->stop_sig[i], strsignal(w->stop_sig[i]), hg_now() - w->stopped_at[i]);
            w->stopped_at[i] = 0;
            stop_dead(L, i, w->stop_sig[i], w->ours);
            kill(w->pid[i], SIGKILL);
            if (w->code == 0) {
                w->code = 1;
                w->kill_at = hg_now() + GRACE_S;
                report_dead(w, i, L->dead_how);
            }
            for (int k = 0; k < n; k++)
                if (!w->done[k] && k != i)
                    kill(w->pid[k], SIGTERM);
        }
}

/* The launcher's signals passed on to the workers, and the end of the
 * grace period after a failure. */
static void forward_and_expire(struct workers *w)
{
    int n = w->n;
    if (parent_signal && w->forwarded != parent_signal) {
        /* a signal to the launcher alone reaches the workers too */
        w->forwarded = parent_signal;
        for (int i = 0; i < n; i++)
            if (!w->done[i])
                kill(w->pid[i], SIGTERM);
    }
    if (parent_sigints >= 2 && !w->quit_sent) {
        /* Ctrl-C twice: quit at once, as each worker does on its own
         * second SIGINT (which a terminal sends; kill -INT to the
         * launcher alone does not) */
        w->quit_sent = 1;
        w->quit += w->quit == 0;
        for (int i = 0; i < n; i++)
            if (!w->done[i]) {
                w->ours[i] = 1;
                kill(w->pid[i], SIGKILL);
            }
    }
    if (w->kill_at > 0 && hg_now() > w->kill_at) {
        for (int i = 0; i < n; i++)
            if (!w->done[i]) {
                fprintf(stderr, "hgtrain: rank %d (pid %ld) did not stop within "
                        "%.0f s; killing it\n", w->L->rank0 + i, (long)w->pid[i], GRACE_S);
                w->ours[i] = 1;
                kill(w->pid[i], SIGKILL);
            }
        w->kill_at = 0;
    }
}

/* After the workers: the launcher's exit status (L->status), and the
 * store, the heartbeat watch, the shm group and the init file gone. */
static void supervise_end(struct workers *w)
{
    struct hg_launch *L = w->L;
    int n = w->n, code = w->code;
    if (code == 0 && w->quit > 0) {
        fprintf(stderr, "hgtrain: quit at once on a second Ctrl-C; checkpoint_last.h5 is the "
                "last one written\n");
        code = HG_LAUNCH_EXIT_QUIT;
    } else if (code == 0 && w->clean > 0) {
        fprintf(stderr, "hgtrain: stopped by a signal: %d of %d rank%s on this node saved "
                "and stopped cleanly\n", w->clean, n, n == 1 ? "" : "s");
        code = 1; /* as a single process stopped by a signal exits */
    }
    if (w->notifying) /* it may be talking to the store served here */
        pthread_join(w->notify, NULL);
    hg_hb_watch_stop(L->watch);
    L->watch = NULL;
    if (L->server)
        hg_store_server_stop(L->server);
    L->server = NULL;
    if (L->shm)
        hg_comm_shm_group_free(L->shm);
    L->shm = NULL;
    if (L->file[0] && L->serve)
        unlink(L->file);
    L->status = code;
}

/* Supervises the workers until all have ended; sets L->status and, where
 * a worker died by a signal nobody here sent (SIGKILL, the OOM killer) or
 * stayed stopped, L->dead and L->dead_how. */
static void supervise(struct hg_launch *L, const pid_t *pid)
{
    struct workers w;
    memset(&w, 0, sizeof(w));
    w.L = L;
    w.pid = pid;
    w.n = L->nlocal;
    w.live = w.n;
    w.stop_limit = 0.5 * L->timeout < STOPPED_S ? 0.5 * L->timeout : STOPPED_S;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_parent_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    while (w.live > 0) {
        reap(&w);
        if (w.live == 0)
            break;
        kill_stopped(&w);
        forward_and_expire(&w);
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
    }
    supervise_end(&w);
}

int hg_launch_start(struct hg_launch *L, int *local, char *err, size_t errlen)
{
    *local = 0;
    if (L->backend == HG_BK_SHM &&
        hg_comm_shm_create(&L->shm, L->world, 4u << 20, L->timeout, err, errlen) != 0)
        return -1;
    /* a job of several ranks forks even one local worker, so that a
     * launcher watches it (a stopped rank is named); not under mpirun,
     * whose processes are the ranks */
    if (L->nlocal == 1 && (L->world == 1 || L->backend == HG_BK_MPI ||
                           L->backend == HG_BK_NONE))
        return 0;
    L->forked = 1;
    if (L->serve && need_store(L) && pipe(L->port_pipe) != 0)
        return hg_kerr(err, errlen, "pipe: %s", strerror(errno));
    pid_t parent = getpid(), pid[HG_LAUNCH_MAX_LOCAL];
    fflush(NULL);
    for (int i = 0; i < L->nlocal; i++) {
        pid[i] = fork();
        if (pid[i] < 0) {
            int e = errno;
            for (int k = 0; k < i; k++)
                kill(pid[k], SIGKILL);
            while (wait(NULL) > 0)
                ;
            return hg_kerr(err, errlen, "fork of rank %d: %s", L->rank0 + i, strerror(e));
        }
        if (pid[i] == 0) {
            /* the launcher's death stops us (SIGTERM: save and leave) */
            prctl(PR_SET_PDEATHSIG, SIGTERM);
            if (getppid() != parent)
                _exit(1);
            if (L->port_pipe[1] >= 0)
                close(L->port_pipe[1]);
            char name[16]; /* ps and pgrep show which rank a process is */
            snprintf(name, sizeof(name), "hgtrain-r%d", L->rank0 + i);
            prctl(PR_SET_NAME, name);
            *local = i;
            return 0;
        }
    }
    if (L->port_pipe[0] >= 0) {
        close(L->port_pipe[0]);
        char e2[512];
        int port = serve(L, e2, sizeof(e2)) == 0 ? L->port : -1;
        if (port < 0)
            fprintf(stderr, "hgtrain: rendezvous store: %s\n", e2);
        for (int i = 0; i < L->nlocal; i++)
            if (write(L->port_pipe[1], &port, sizeof(port)) != (ssize_t)sizeof(port))
                break;
        close(L->port_pipe[1]);
    }
    L->dead = -1;
    L->dead_how[0] = 0;
    supervise(L, pid);
    *local = -1;
    return 0;
}

/* mpirun starts the ranks itself, so no launcher sees them stop: rank 0
 * serves a store for the heartbeat (a fresh token, sent over MPI) and
 * watches the others; the ranks on rank 0's host reach it on loopback. */
static int mpi_heartbeat(struct hg_launch *L, struct hg_comm *c, char *err, size_t errlen)
{
    struct {
        char host[256];
        char token[HG_STORE_TOKEN_LEN + 1];
        int32_t port;
    } at; /* rank 0 -> every rank */
    memset(&at, 0, sizeof at);
    int rank = L->rank0, ok = 1;
    char e[512] = "";
    if (rank == 0) {
        if (gethostname(at.host, sizeof at.host) != 0)
            snprintf(at.host, sizeof at.host, "localhost");
        at.host[sizeof at.host - 1] = 0;
        ok = hg_store_token_new(at.token, e, sizeof e) == 0 &&
             hg_store_server_start(&L->mpi_server, "", 0, at.token, L->world, e,
                                   sizeof e) == 0;
        at.port = ok ? hg_store_server_port(L->mpi_server) : -1;
    }
    if (hg_comm_broadcast(c, &at, sizeof at, 0, err, errlen) != 0)
        return -1;
    if (at.port < 0)
        return rank == 0 ? hg_kerr(err, errlen, "heartbeat store: %s", e)
                         : hg_kerr(err, errlen, "rank %d: rank 0 could not start the "
                                   "heartbeat store", rank);
    char mine[256] = "";
    gethostname(mine, sizeof mine - 1);
    const char *host = strcmp(mine, at.host) == 0 ? "127.0.0.1" : at.host;
    double limit = hg_hb_limit(L->timeout);
    if (rank == 0 && hg_hb_watch_start(&L->watch, "127.0.0.1", at.port, at.token, L->world,
                                       0, 1, limit, err, errlen) != 0)
        return -1;
    return hg_hb_beat_start(&L->beat, host, at.port, at.token, rank, limit, err, errlen);
}

int hg_launch_connect(struct hg_launch *L, int local, struct hg_comm **comm, char *err,
                      size_t errlen)
{
    *comm = NULL;
    int rank = L->rank0 + local;
    switch (L->backend) {
    case HG_BK_NONE:
        return 0;
    case HG_BK_SHM:
        return hg_comm_shm_join(comm, L->shm, rank, err, errlen);
    case HG_BK_MPI:
        if (hg_comm_mpi_new(comm, err, errlen) != 0)
            return -1;
        L->world = hg_comm_world(*comm);
        L->rank0 = hg_comm_rank(*comm);
        return L->world > 1 ? mpi_heartbeat(L, *comm, err, errlen) : 0;
    case HG_BK_TCP:
    case HG_BK_NCCL:
        break;
    }
    if (L->port_pipe[0] >= 0) { /* the launcher serves: wait for its port */
        struct pollfd pf = {.fd = L->port_pipe[0], .events = POLLIN};
        int port = -1;
        if (poll(&pf, 1, (int)(L->timeout * 1000)) != 1 ||
            read(L->port_pipe[0], &port, sizeof(port)) != (ssize_t)sizeof(port) || port < 0)
            return hg_kerr(err, errlen, "rank %d: the launcher did not start the "
                           "rendezvous store", rank);
        close(L->port_pipe[0]);
        L->port_pipe[0] = -1;
        L->port = port;
    } else if (L->serve && local == 0 && L->nlocal == 1) {
        if (serve(L, err, errlen) != 0)
            return -1;
    } else if (L->file[0]) {
        if (read_init_file(L, rank, err, errlen) != 0)
            return -1;
    }
    if (!L->host[0]) { /* file:// on rank 0's node: its name, as written */
        if (gethostname(L->host, sizeof(L->host)) != 0)
            snprintf(L->host, sizeof(L->host), "localhost");
        L->host[sizeof(L->host) - 1] = 0;
    }
    if (hg_store_connect(&L->store, L->host, L->port, L->token, rank, L->timeout, err,
                         errlen) != 0)
        return -1;
    /* one process per rank: a second one started as this rank (the same
     * token and init method) is refused here, naming the holder */
    char who[320], holder[320], key[32];
    claim_value(getpid(), who, sizeof(who));
    snprintf(key, sizeof(key), "rank/%d", rank);
    int held = hg_store_claim(L->store, key, who, holder, sizeof(holder), err, errlen);
    if (held < 0)
        return -1;
    if (held)
        return hg_kerr(err, errlen, "rank %d of this job is already held by %s (store %s:%d); "
                       "refusing a second process as rank %d (started twice with the same "
                       "rank and job token?)", rank, holder, L->host, L->port, rank);
    int rc;
    if (L->backend == HG_BK_TCP) {
        rc = hg_comm_tcp_new(comm, L->store, rank, L->world, L->timeout, err, errlen);
    } else {
#ifdef HG_HAVE_CUDA
        /* NCCL binds the communicator to the current device: this worker's */
        if (L->cuda && hg_cuda_set_device(L->dev[local], err, errlen) != 0)
            return -1;
#endif
        rc = hg_comm_nccl_new(comm, L->store, rank, L->world, L->timeout, err, errlen);
    }
    if (rc != 0)
        return -1;
    return hg_hb_beat_start(&L->beat, L->host, L->port, L->token, rank,
                            hg_hb_limit(L->timeout), err, errlen);
}

void hg_launch_finish(struct hg_launch *L, struct hg_comm *comm)
{
    /* mpirun: the heartbeat's store is in rank 0's process */
    int mpi_hb = L->backend == HG_BK_MPI && comm && L->world > 1;
    if (comm && L->store) /* leave together: the store outlives every peer */
        hg_store_barrier(L->store, "finish", L->world, NULL, 0);
    else if (mpi_hb)
        hg_comm_barrier(comm, NULL, 0);
    hg_hb_beat_stop(L->beat);
    L->beat = NULL;
    hg_hb_watch_stop(L->watch);
    L->watch = NULL;
    if (mpi_hb) /* every beat has said goodbye before the store goes */
        hg_comm_barrier(comm, NULL, 0);
    if (L->mpi_server)
        hg_store_server_stop(L->mpi_server);
    L->mpi_server = NULL;
    hg_comm_free(comm);
    if (L->store)
        hg_store_close(L->store);
    L->store = NULL;
    if (L->server) {
        hg_store_server_stop(L->server);
        if (L->file[0]) /* it holds the token: gone with the job */
            unlink(L->file);
    }
    L->server = NULL;
    if (L->shm)
        hg_comm_shm_group_free(L->shm);
    L->shm = NULL;
}
