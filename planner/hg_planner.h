/* hg_planner.h - the planner room (HeteroG with FlexFlow's simulator):
 * cluster descriptions, the roofline and communication cost model,
 * profiles (measured op and link times that replace the roofline for the
 * devices that are present), graph builders for HeteroG's evaluation models
 * (shapes only) and the JSON export of a training graph; the planner graph
 * (a training graph's topology) and its prices; strategies and their
 * lowering (what a strategy means op by op: the one definition that the
 * simulator prices and an executor compiles).  The simulator, scheduler
 * and strategy search build on these (docs/planner.md).
 *
 * Depends on graph/ and kernels/ only (and libconfig for cluster files).
 * Runtime errors return -1 with a message in err that names the file:line
 * and key, the device or the model; programmer errors abort (HG_CHECK).
 */
#ifndef HG_PLANNER_H
#define HG_PLANNER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "graph/hg_graph.h"

/* ------------------------------------------------------------ clusters */

enum hg_dev_kind { HG_DEV_GPU, HG_DEV_CPU, HG_DEV_KIND_COUNT };
/* HG_LINK_NET: the path between two nodes (NIC, switch, NIC); HG_LINK_TCP:
 * a profile's measurement of the tcp backend between nodes (docs/planner.md,
 * "Profiler"); a cluster file's intra-node links are nvlink, pcie or shm. */
enum hg_link_kind { HG_LINK_NVLINK, HG_LINK_PCIE, HG_LINK_SHM, HG_LINK_NET, HG_LINK_TCP,
                    HG_LINK_KIND_COUNT };
const char *hg_dev_kind_name(enum hg_dev_kind k);
const char *hg_link_kind_name(enum hg_link_kind k);

/* One device = one rank of a job.  Units: bytes, FLOP/s, bytes/s. */
struct hg_pdevice {
    char name[64];        /* "<node>:<index>", e.g. "v100:0" */
    char model[64];       /* free text, e.g. "Tesla V100-SXM2-16GB" */
    enum hg_dev_kind kind;
    int node;             /* index into nodes[] */
    int local;            /* index within its node */
    int64_t memory;       /* bytes (required, > 0) */
    double peak_flops;    /* fp32 peak, FLOP/s (0: not given) */
    double mem_bw;        /* memory bandwidth, bytes/s (0: not given) */
    double speed;         /* measured relative speed (0: not given) */
    char profile[64];     /* the profiled device that prices it ("": none) */
    double time_share;    /* fraction of that device this rank gets (ranks
                           * time-sharing cores: 2 cores / 3 workers = 0.667);
                           * every compute time is divided by it (default 1) */
    int prof_dev;         /* index into the bound profile's devices, -1: none
                           * (hg_cluster_set_profile) */
};

/* d's time_share, 1 where none was set (a device built in memory) */
static inline double hg_pdevice_share(const struct hg_pdevice *d)
{
    return d->time_share > 0 ? d->time_share : 1;
}

/* An intra-node link between two devices of one node, full duplex:
 * bandwidth is per direction. */
struct hg_plink {
    int a, b;             /* global device ids, a < b, same node */
    enum hg_link_kind kind;
    double bw;            /* bytes/s per direction (> 0) */
    double lat;           /* seconds (>= 0) */
    int implicit;         /* 1: from the node's default `intra` */
    double mbw, mlat;     /* the bound profile's point-to-point fit when both
                           * ends are profiled devices (hg_cluster_set_profile);
                           * mbw 0: none, the file's values hold */
};

struct hg_pnode {
    char name[64];
    int first_dev, ndev;  /* devices[first_dev .. first_dev+ndev) */
    int64_t pair_base;    /* this node's first entry in hg_cluster.pair_link */
    double nic_bw;        /* bytes/s per direction (0: single-node cluster) */
};

struct hg_cluster {
    char name[64];
    char file[1024];      /* where it was read from ("" if built in code) */
    struct hg_pnode *nodes;
    int nnodes;
    struct hg_pdevice *devices; /* in rank order: node order, then device order */
    int ndev;
    struct hg_plink *links;     /* every same-node pair has exactly one */
    int nlinks;
    int *pair_link;       /* per node, the upper triangle of its device pairs
                             (row-major, local ids i < j): the link, or -1;
                             hg_cluster_link in O(1) */
    double switch_bw;     /* bytes/s through the switch (0: one node) */
    double net_lat;       /* seconds, NIC to NIC through the switch */
    const struct hg_profile *prof; /* bound by hg_cluster_set_profile (not owned) */
    double net_mbw, net_mlat; /* the bound profile's (tcp, sendrecv) fit: bytes/s
                               * and seconds of every path between nodes, the
                               * NICs' bandwidth (0: none, the file's values hold) */
    double net_cpu;       /* its cpu: compute seconds a CPU device loses per
                           * byte it sends or receives between nodes (0: none) */
};

/* Reads and validates a libconfig cluster file (format: docs/planner.md).
 * Errors name file:line and the key: unknown key, a device without memory,
 * a link to a missing node or device, a bandwidth <= 0, ... */
int hg_cluster_load(struct hg_cluster **c, const char *path, char *err,
                    size_t errlen);
/* The same from a string (tests); name stands for the file in messages. */
int hg_cluster_parse(struct hg_cluster **c, const char *text, const char *name,
                     char *err, size_t errlen);
void hg_cluster_free(struct hg_cluster *c);
/* One paragraph: nodes, devices, links, network. */
void hg_cluster_print(const struct hg_cluster *c, FILE *f);

/* Relative speed per rank (rank order = devices[]), scaled so the largest
 * is 1: every device's `speed` if all give one, else peak_flops (all must
 * give it). cap[ndev]. Returns 0 or -1 naming the device. */
int hg_cluster_rank_capacities(const struct hg_cluster *c, double *cap,
                               char *err, size_t errlen);

/* A point-to-point path between two devices (a != b). */
struct hg_path {
    double bw;            /* bottleneck bandwidth, bytes/s */
    double lat;           /* seconds */
    enum hg_link_kind kind; /* the intra-node link's kind, or HG_LINK_NET */
    int nchan;            /* channels it occupies (see below) */
    int chan[3];
};

/* Channels are the simulator's link "devices" (FlexFlow: links are devices;
 * concurrent transfers on one channel share its bandwidth):
 *   2*l + 0 / 2*l + 1   link l, direction a->b / b->a
 *   2*nlinks + 2*n      node n's NIC, up (out of the node)
 *   2*nlinks + 2*n + 1  node n's NIC, down
 *   2*nlinks + 2*nnodes the switch (shared by all inter-node traffic)
 * An intra-node path uses one channel, an inter-node one three. */
int hg_cluster_n_channels(const struct hg_cluster *c);
double hg_cluster_channel_bw(const struct hg_cluster *c, int chan);
void hg_cluster_path(const struct hg_cluster *c, int from, int to,
                     struct hg_path *p);
/* The link between two devices of one node, or -1. */
int hg_cluster_link(const struct hg_cluster *c, int a, int b);

/* ------------------------------------------------------------ cost model */

/* Roofline efficiency of an op kind: achieved fraction of peak FLOP/s and
 * of memory bandwidth (documented defaults in planner/cost.c). */
struct hg_op_eff {
    double flops, bytes;
};
extern const struct hg_op_eff hg_op_eff_table[HG_OP_COUNT];
#define HG_LAUNCH_OVERHEAD_GPU 5e-6 /* s per op (kernel launch) */
#define HG_LAUNCH_OVERHEAD_CPU 1e-6 /* s per op (a call and a barrier) */

/* time = max(flops / (peak * eff.flops), bytes / (bw * eff.bytes)) + launch.
 * The device must have peak_flops (and, for the bytes term, mem_bw; 0 drops
 * the term). Returns seconds, or -1 if the device has no peak_flops (a
 * measured profile must price it instead). */
double hg_cost_op_time(const struct hg_pdevice *d, enum hg_op op,
                       const struct hg_cost *cost);
/* Node n of g (current shapes; the graph's batch symbol is `batch`) on
 * device d of c as time = a + b, b the part that scales with the batch
 * (the whole time for an op without a batch axis is a + b as well): from
 * the bound profile when d names a profiled device that has the op
 * (a, b*batch of the fit), else the roofline (a = the launch overhead).
 * Both are divided by d's time_share.  *pe (when pe is not NULL): the
 * profile's entry, NULL for the roofline.  Returns 1 (profile), 0 (roofline),
 * -1 (neither: no profile entry and no peak_flops). */
struct hg_prof_op;
/* What device d's profiled times are divided by: its time_share over the
 * share its profiled device was measured at (1 without a profile). */
double hg_cost_prof_share(const struct hg_cluster *c, int d);
int hg_cost_node(const struct hg_cluster *c, int d, const struct hg_graph *g, int n,
                 int64_t batch, double *a, double *b, const struct hg_prof_op **pe);
/* latency + bytes / bandwidth over a path. */
double hg_cost_transfer(const struct hg_path *p, double bytes);
/* Ring AllReduce of bytes over n devices with the given slowest hop:
 * 2(n-1)/n * bytes / bw + 2(n-1) * lat; 0 for n <= 1. */
double hg_cost_ring_allreduce(int n, double bytes, double bw, double lat);
/* Ring AllReduce over devs[n] in the given ring order: the slowest hop's
 * bandwidth (NIC bandwidth when several hops cross one NIC is divided by
 * their number) and largest latency. */
double hg_cost_allreduce_ring(const struct hg_cluster *c, const int *devs,
                              int n, double bytes);
/* Ring all-gather (or reduce-scatter) of uneven parts bytes[n] over
 * devs[n] in that ring order: n - 1 steps, each the largest part over the
 * slowest hop (bandwidth and latency as hg_cost_allreduce_ring's); 0 for
 * n <= 1.  A reduce-scatter moves the same bytes the other way. */
double hg_cost_allgatherv_ring(const struct hg_cluster *c, const int *devs, int n,
                               const double *bytes);
/* Hierarchical: reduce-scatter in each node (ring), ring AllReduce of each
 * shard among the nodes' leaders in parallel over the NICs, all-gather in
 * each node. Equals the ring for one node. */
double hg_cost_allreduce_hier(const struct hg_cluster *c, const int *devs,
                              int n, double bytes);
/* 1 when the hierarchical AllReduce of bytes over devs[n] is strictly
 * cheaper than the ring, else 0 (ties go to the ring). */
int hg_cost_allreduce_hier_cheaper(const struct hg_cluster *c, const int *devs, int n,
                                   double bytes);
/* Parameter server on device ps: every other worker pushes bytes and pulls
 * bytes; each channel carries the sum of what crosses it, the busiest
 * channel bounds each phase (push, then pull). */
double hg_cost_ps(const struct hg_cluster *c, const int *devs, int n,
                  int ps, double bytes);

/* ------------------------------------------------------------ profiles
 * (planner/profile.c) What the profiler measured on the devices that are
 * present: per (profiled device, op kind, shape signature) a fit
 * time = a + b * batch, and per (link kind, collective, world) a fit
 * time = a + b * bytes.  A cluster bound to a profile prices its devices
 * that name a profiled device with it, op by op, and with the roofline
 * where the profile lacks the op or the device (docs/planner.md,
 * "Profiler").  The file is libconfig, versioned, checked key by key. */
#define HG_PROF_VERSION 1
#define HG_PROF_MAXPTS 16   /* points (batch sizes, message sizes) per fit */

/* time = a + b * x.  rmax: the largest |fit - t| / t over the points. */
struct hg_prof_fit {
    double a, b, rmax;
};
/* Least squares of t = a + b*x weighted by 1/t^2 (relative errors count
 * alike, so a latency is not lost beside large messages); a negative a or
 * b is set to 0 and the other refitted (times never shrink with x and are
 * never below 0).  -1 when n < 1, a point is not finite or a t <= 0. */
int hg_prof_fit_line(const double *x, const double *t, int n, struct hg_prof_fit *f);

struct hg_prof_device {
    char name[64];        /* "cpu-t1": what a cluster device's `profile` names */
    enum hg_dev_kind kind;
    char model[128];      /* the hardware (informative) */
    int threads;          /* compute threads the ops ran with */
    int processes;        /* processes measuring at once (each core busy, as
                           * hgtrain's workers keep them) */
    double share;         /* 1, or 1/F: measured slowed F times as hgtrain
                           * --rank-slowdown slows a rank (hgplan
                           * --profile-slowdown); a cluster device's
                           * time_share is divided by it */
};

struct hg_prof_op {
    int dev;              /* index into devices */
    enum hg_op op;
    char sig[256];        /* hg_prof_op_sig */
    int nodes;            /* graph nodes that shared (op, sig) (informative) */
    int npts;
    double x[HG_PROF_MAXPTS], t[HG_PROF_MAXPTS]; /* batch, seconds per node */
    struct hg_prof_fit fit;                      /* seconds = a + b * batch */
};

enum hg_prof_coll { HG_PROF_SENDRECV, HG_PROF_ALLREDUCE, HG_PROF_PS, HG_PROF_COLL_COUNT };
const char *hg_prof_coll_name(enum hg_prof_coll k);

struct hg_prof_link {
    enum hg_link_kind kind;   /* the backend's link: shm (forked workers) or
                               * tcp (one process per node) */
    enum hg_prof_coll coll;   /* sendrecv: one way between 2 ranks; allreduce:
                               * f32 sum over `world` ranks, start to last finish;
                               * ps: one step of a parameter server on rank 0
                               * with every rank a client (push bytes, pull
                               * them back), start to the last pull's end */
    int world;
    int npts;
    double x[HG_PROF_MAXPTS], t[HG_PROF_MAXPTS]; /* bytes, seconds */
    struct hg_prof_fit fit;   /* seconds = a (latency) + b (1 / bandwidth) * bytes */
    double cpu;               /* tcp sendrecv: seconds of compute an endpoint loses
                               * per byte of a transfer that runs beside its
                               * compute (the kernel's and the progress
                               * thread's share of the cores); 0: none measured */
};

struct hg_profile {
    char file[1024];      /* where it was read from ("" if built in code) */
    char host[128], date[64], source[512]; /* informative */
    struct hg_prof_device *devs;
    int ndevs, cdevs;
    struct hg_prof_op *ops;   /* sorted by (dev, op, sig) */
    int nops, cops;
    struct hg_prof_link *links;
    int nlinks, clinks;
};

struct hg_profile *hg_prof_new(void);
void hg_prof_free(struct hg_profile *p);
/* The device named name, added if new (kind, model, threads, processes
 * updated).  Returns its index. */
int hg_prof_device(struct hg_profile *p, const char *name, enum hg_dev_kind kind,
                   const char *model, int threads, int processes);
int hg_prof_find_device(const struct hg_profile *p, const char *name); /* -1 if none */
/* Adds or replaces the entry of (dev, op, sig) / (kind, coll, world) and
 * fits it.  -1 with err when the fit refuses the points. */
int hg_prof_set_op(struct hg_profile *p, int dev, enum hg_op op, const char *sig, int nodes,
                   int npts, const double *x, const double *t, char *err, size_t errlen);
int hg_prof_set_link(struct hg_profile *p, enum hg_link_kind kind, enum hg_prof_coll coll,
                     int world, int npts, const double *x, const double *t, char *err,
                     size_t errlen);
/* The link's cpu (struct hg_prof_link); -1 if p has no such link. */
int hg_prof_set_link_cpu(struct hg_profile *p, enum hg_link_kind kind, enum hg_prof_coll coll,
                         int world, double cpu);
/* The median of v[n] (sorts v; n >= 1). */
double hg_prof_median(double *v, int n);
/* Seconds per node at batch x: between the smallest and the largest
 * measured batch, the line through the two measured points around x (the
 * measurements themselves, which the fit misses by a few per cent where
 * the time is not linear in the batch); outside them, the fit. */
double hg_prof_time(const struct hg_prof_op *e, double x);
const struct hg_prof_op *hg_prof_find_op(const struct hg_profile *p, int dev, enum hg_op op,
                                         const char *sig);
const struct hg_prof_link *hg_prof_find_link(const struct hg_profile *p,
                                             enum hg_link_kind kind,
                                             enum hg_prof_coll coll, int world);
/* The shape signature of node n of g at its current shapes, for a graph
 * whose batch symbol is `batch`: input shapes > output shape (dtype and
 * dims; the batch axis as "B" or "B*k" when it is k * batch, so one
 * signature covers every batch), plus the attributes shapes do not show
 * (matmul transposes, kernel/stride/padding).  Returns 0, -1 if it does not
 * fit in n bytes. */
int hg_prof_op_sig(const struct hg_graph *g, int node, int64_t batch, char *buf, size_t n);

/* The versioned profile file (docs/planner.md, "Profile file").  path may
 * be a comma-separated list: the files merged in order, a later file's
 * device, op or link replacing an earlier one's of the same key. */
int hg_prof_save(const struct hg_profile *p, FILE *f);
int hg_prof_load(struct hg_profile **p, const char *path, char *err, size_t errlen);
int hg_prof_parse(struct hg_profile **p, const char *text, const char *name, char *err,
                  size_t errlen);

/* Measures every op of g (a training graph with a "batch" symbol; the
 * other symbols at their maxima) with the executor on this machine's CPU
 * at each batch of o->batches (at most the symbol's maximum and
 * HG_PROF_MAXPTS of them) with device dev's thread count: o->warmup runs
 * then o->reps runs per batch, batches interleaved so that a disturbance
 * spreads over all of them; per node the median of the runs; nodes of one
 * (op, sig) averaged; fitted over the batches.  log (may be NULL) gets a
 * line per batch: the summed medians against the summed fits.  hold (may
 * be NULL): after the timed runs, untimed runs go on while it returns 1
 * (several processes measuring at once: one that finishes first keeps its
 * core as busy as the others' until they are done). */
struct hg_prof_opts {
    const int64_t *batches;
    int nbatches;
    int reps, warmup;
    FILE *log;
    int (*hold)(void *ctx);
    void *hold_ctx;
    /* called after every run (warm-up and timed; non-zero stops with its
     * message in err): processes that measure at once wait for each other
     * there, as the ranks of a data-parallel step do */
    int (*sync)(void *ctx, char *err, size_t errlen);
    void *sync_ctx;
    double *totals; /* [nbatches][reps] or NULL: each timed run's op sum, s */
    double slowdown; /* > 1: every op slowed so many times as --rank-slowdown
                      * does (hg_exec_set_slowdown: the sleeps between ops
                      * happen), its time counted so many times (CPU only) */
    int on_gpu, gpu; /* on_gpu: measure on CUDA device gpu, else this CPU */
};
int hg_prof_measure_graph(struct hg_profile *p, int dev, struct hg_graph *g,
                          const struct hg_prof_opts *o, char *err, size_t errlen);

/* Binds p to c (NULL unbinds; p must outlive the binding): each device
 * whose `profile` names a device of p is priced by it (an unknown name is
 * an error naming the device and both files); a link between two profiled
 * devices whose kind p measured point to point has the measured latency
 * and bandwidth (hg_cluster_path, hg_cluster_channel_bw), and AllReduce
 * over profiled devices of one node the measured fit of that world size
 * (hg_cost_allreduce_ring).  Between nodes, p's (tcp, sendrecv) fit is
 * every path's latency and bandwidth and every NIC's bandwidth (the
 * switch carries at least that much); AllReduce over n devices on n
 * different nodes costs p's (tcp, allreduce, n) fit, a parameter server
 * among them its (tcp, ps, n) fit (hg_cost_allreduce_*, hg_cost_ps). */
int hg_cluster_set_profile(struct hg_cluster *c, const struct hg_profile *p, char *err,
                           size_t errlen);

/* ------------------------------------------------------------ models */

struct hg_model_spec {
    const char *name;       /* "vgg19", "resnet50", ... */
    const char *desc;
    int64_t default_batch;  /* HeteroG Table 1 (8 GPUs) */
    int64_t default_seq;    /* sequence models: tokens per sample; else 0 */
    /* published figures for the test: parameters, forward multiply-adds
     * per sample (0: none published), and the relative tolerance */
    double pub_params, pub_macs, tol;
    const char *source;     /* where the published numbers come from */
};
extern const struct hg_model_spec hg_model_specs[];
extern const int hg_n_model_specs;
const struct hg_model_spec *hg_model_spec_find(const char *name);

struct hg_model_opts {
    int64_t batch;          /* 0: the spec's default */
    int64_t seq;            /* 0: the spec's default */
    int train;              /* 1: loss, backward and optimizer update */
    enum hg_optim optim;    /* with train */
};

/* Builds the model's graph (shapes only: nothing is allocated for tensors)
 * into g (empty).  Returns the loss tensor id ([1]) or -1 with err. */
int hg_model_build(struct hg_graph *g, const char *name,
                   const struct hg_model_opts *o, char *err, size_t errlen);

/* Sum of the declared costs of the nodes in the phases of mask. */
void hg_graph_cost_phase(const struct hg_graph *g, int phase_mask,
                         struct hg_cost *total);

/* ------------------------------------------------------------ export */

/* Writes the graph as JSON (format: docs/planner.md): ops with phase,
 * inputs, outputs, FLOPs and bytes; tensors with shape, dtype, bytes,
 * batch axis and kind; totals. model names the graph. */
int hg_graph_export_json(const struct hg_graph *g, const char *model,
                         int64_t batch, FILE *f);

/* ------------------------------------------------------------ planner graph
 * (planner/pgraph.c) The training graph's topology as the planner sees it:
 * one entry per graph node ("op", ids equal node ids, id order topological)
 * with its inputs, consumers and output bytes; the parameters with their
 * gradients; and the cluster whose devices strategies name.  No prices: a
 * strategy loads (hg_strategy_load) and lowers (hg_lower_full) on it alone;
 * the simulator also needs the prices (hg_pprice_build). */
#define HG_PLAN_MAXDEV 1024
#define HG_PLAN_MAXREP 65536 /* replicas of a group on one device, at most */

struct hg_pin {
    int op;               /* producer op, -1: an input/param/state/const */
    int tensor;
    int batch;            /* the tensor has a batch axis */
    int64_t bytes;        /* whole tensor (transfers) */
    int64_t mem;          /* whole tensor at the memory graph's shapes (the
                           * simulator's memory; hg_pgraph_memory_from) */
};

struct hg_pop {
    enum hg_op kind;
    int phase;
    int batch;            /* time scales with the share */
    int nin;
    struct hg_pin in[HG_MAX_INPUTS];
    int out;              /* output tensor, -1 (update ops) */
    int out_batch, out_grad; /* output has a batch axis / is a param's gradient */
    int64_t out_bytes;    /* transfers and aggregations */
    int64_t out_mem;      /* out_bytes at the memory graph's shapes */
    int *cons, ncons;     /* distinct consumer ops */
    int *params, nparams; /* param tensors it needs resident (reads or updates) */
    int *preaders, npreaders; /* an update op: the ops (not updates) reading the
                                 parameter it updates (its input 0) */
    int pidx;             /* an update op: that parameter's index (pg->param),
                             -1: none */
    int origin;           /* a backward op: the forward op whose gradient
                             rule made it (hg_graph_node_origin), -1 */
    int trans_a, trans_b; /* HG_OP_MATMUL: its operands' transposes */
};

struct hg_pgraph {
    char model[64];
    int64_t batch;        /* samples per iteration: the rows strategies split */
    const struct hg_cluster *c;
    int nops, ndev, ntensors;
    struct hg_pop *ops;   /* [nops] */
    int64_t *pstatic;     /* [ntensors]: param + grad + optimizer state bytes
                           * for a param tensor, else 0 (the memory graph's) */
    int64_t input_bytes;  /* all INPUT tensors (split like the batch) */
    int nparams;
    int *param;           /* [nparams] param tensors, in the graph's order */
    int *param_grad;      /* [nparams] each one's gradient tensor, -1: none
                           * (a forward-only graph) */
    int *grad_op;         /* [nparams] the op that writes the gradient, -1:
                           * none (a param the loss does not use) */
    int *upd_op;          /* [nparams] the op updating it, -1: none */
    int *param_idx;       /* [ntensors] a param tensor's index in param, -1 */
    struct hg_shape *shape; /* [ntensors] concrete shapes (tensor parallelism
                             * splits their axes: planner/tensor.c) */
    unsigned char *tkind; /* [ntensors] enum hg_tkind */
    unsigned char *tvary; /* [ntensors] the axes that change with a batch or a
                           * length (hg_graph_varying): never split */
};

/* -1 with err for a cluster beyond HG_PLAN_MAXDEV devices or batch < 1. */
int hg_pgraph_build(struct hg_pgraph **pg, const struct hg_graph *g,
                    const struct hg_cluster *c, const char *model, int64_t batch,
                    char *err, size_t errlen);
void hg_pgraph_free(struct hg_pgraph *pg);
/* Memory priced on gm, the same training graph built for longer samples
 * (the longest the run can see), while transfers and (hg_pprice_build)
 * compute stay priced on pg's own graph: every op's out_mem and in[].mem
 * and pstatic from gm's shapes.  Until it is called they are the graph's
 * own.  -1 with err when gm's ops or tensors are not pg's. */
int hg_pgraph_memory_from(struct hg_pgraph *pg, const struct hg_graph *gm, char *err,
                          size_t errlen);

/* ------------------------------------------------------------ prices
 * (planner/price.c) Each op's time on each device (hg_cost_node: the bound
 * profile's fit, else the roofline) as time = a + b * share (share: the
 * fraction of the batch a device computes; ops without a batch axis have
 * b = 0 and run whole on every device that holds them). */
struct hg_pprice {
    int nops, ndev;
    double *a, *b;        /* [nops][ndev] seconds (hg_pprice_at) */
    /* [nops][ndev] ops with a batch axis: the profile's entry (NULL:
     * roofline); a replica's time is then hg_prof_time at its rows /
     * time_share */
    const struct hg_prof_op **pe;
};

static inline size_t hg_pprice_at(const struct hg_pprice *pr, int op, int dev)
{
    return (size_t)op * (size_t)pr->ndev + (size_t)dev;
}

/* g is the graph pg was built from (its current shapes).  -1 with err
 * naming the device and the op that neither the roofline (no peak_flops)
 * nor the bound profile prices. */
int hg_pprice_build(struct hg_pprice **pr, const struct hg_pgraph *pg,
                    const struct hg_graph *g, char *err, size_t errlen);
void hg_pprice_free(struct hg_pprice *pr);

/* ------------------------------------------------------------ strategies */

/* HG_MODE_TP: tensor parallel (planner/tensor.c): every op of the group
 * on every device of weight rep[d] > 0, each computing its shard of the
 * op's split axis; run by hgtrain --strategy (controller/tp.c). */
enum hg_gmode { HG_MODE_MP, HG_MODE_DP, HG_MODE_TP };
enum hg_agg { HG_AGG_AR, HG_AGG_PS };

/* One group's configuration.  MP: every op on `device`.  DP: rep[d]
 * replicas on device d (>= 0, at least one > 0); a device's batch share is
 * rep[d] / sum(rep); gradients produced in the group are aggregated by
 * AllReduce (ring or hierarchical: the simulator takes the cheaper) or a
 * parameter server on `ps`.  TP: rep[d] is device d's shard weight (>= 0,
 * at least one > 0; hg_tp_split), `device` the first device of weight > 0
 * (where tensors enter and leave the group). */
struct hg_gcfg {
    enum hg_gmode mode;
    int device;
    enum hg_agg agg;
    int ps;
    int rep[HG_PLAN_MAXDEV];
    int recompute;        /* drop the group's activations after the forward and
                           * recompute them before its backward (sim.c) */
};

/* A pipeline's schedule (planner/pipeline.c). */
enum hg_psched { HG_SCHED_GPIPE, HG_SCHED_1F1B };
const char *hg_pipe_sched_name(enum hg_psched s);

struct hg_strategy {
    int nops, ndev, ngroups;
    int *group;           /* [nops] group of each op */
    struct hg_gcfg *cfg;  /* [ngroups] */
    int *order;           /* [nops] execution order: a topological order of
                           * the ops; every device runs its tasks in it */
    int nmicro;           /* > 0: a pipeline of this many micro-batches, its
                           * stages the groups' devices (planner/pipeline.c);
                           * 0: none */
    enum hg_psched sched; /* the pipeline's schedule */
};

struct hg_strategy *hg_strategy_new(int nops, int ndev, int ngroups);
struct hg_strategy *hg_strategy_copy(const struct hg_strategy *s);
void hg_strategy_free(struct hg_strategy *s);
/* HeteroG's grouping: the n most expensive ops (time on device 0) are
 * centres, every other op joins the nearest centre by hops (undirected; ties:
 * the earlier centre).  Fills s->group, sets s->ngroups (<= n); order = ids. */
void hg_strategy_group(struct hg_strategy *s, const struct hg_pgraph *pg,
                       const struct hg_pprice *pr, int n);
/* DP configurations: even (one replica per device), proportional to
 * capacity (k replicas on the fastest, at least 1 each), PS device chosen
 * to minimise hg_cost_ps. */
void hg_gcfg_even(struct hg_gcfg *g, const struct hg_cluster *c, enum hg_agg agg);
void hg_gcfg_prop(struct hg_gcfg *g, const struct hg_cluster *c, int k, enum hg_agg agg);
void hg_gcfg_mp(struct hg_gcfg *g, int device);
int hg_gcfg_choose_ps(const struct hg_cluster *c, const int *rep);
/* Checks the strategy against the graph and the cluster (every op in a
 * group, devices exist, replica counts, order is a topological permutation).
 * -1 with err naming the group, op or device. */
int hg_strategy_check(const struct hg_strategy *s, const struct hg_pgraph *pg,
                      char *err, size_t errlen);
/* Replaces the order by a random topological one (producers first; each
 * step draws uniformly among the ops whose producers have all run), the
 * same for the same seed: tests of executors that must follow any order. */
void hg_strategy_random_order(struct hg_strategy *s, const struct hg_pgraph *pg,
                              uint64_t seed);

struct hg_sim_result;
/* What made a task's training graph beside its batch: the optimizer and
 * the task's options as text, recorded in a strategy file's graph group
 * (graph.optimizer, graph.options) so that hgtrain --strategy names the
 * option that differs rather than an op count.  opt_val[i] NULL: option i
 * unset (not written). */
struct hg_graph_made {
    const char *optimizer;          /* "sgd", "adam", ... */
    int nopts;
    const char *const *opt_name;    /* [nopts] without "--" */
    const char *const *opt_val;     /* [nopts] */
};
/* The versioned strategy file (docs/planner.md, "Strategy file"); made
 * may be NULL (a HeteroG model's graph: nothing recorded). */
int hg_strategy_save(const struct hg_strategy *s, const struct hg_pgraph *pg,
                     const char *cluster_file, const struct hg_sim_result *pred,
                     const struct hg_graph_made *made, FILE *f);
/* A strategy file's header read without a graph (its keys typed, nothing
 * else checked): what it was planned for, so that hgtrain takes what the
 * command line leaves out and names what differs before it builds
 * anything. */
struct hg_strategy_head {
    char *model;                    /* graph.model; NULL: absent */
    int64_t batch;                  /* graph.batch; 0: absent */
    char *optimizer;                /* graph.optimizer; NULL: not recorded */
    int nopts;                      /* graph.options' entries; -1: not recorded */
    char **opt_name, **opt_val;     /* [nopts] */
    char *cluster_name, *cluster_file; /* cluster.name, .file; NULL: absent */
    int ndev;                       /* cluster.devices' length; -1: absent */
    char **dev;                     /* [ndev] */
};
/* From text (named path) or the file path; -1 with err (FILE:LINE). */
int hg_strategy_head_read(struct hg_strategy_head *h, const char *path, const char *text,
                          char *err, size_t errlen);
void hg_strategy_head_free(struct hg_strategy_head *h);
int hg_strategy_load(struct hg_strategy **s, const char *path,
                     const struct hg_pgraph *pg, char *err, size_t errlen);
int hg_strategy_parse(struct hg_strategy **s, const char *text, const char *name,
                      const struct hg_pgraph *pg, char *err, size_t errlen);

/* ------------------------------------------------------------ lowering
 * (planner/lower.c) What a strategy means op by op, with no prices: the one
 * definition that the simulator prices and that an executor compiles
 * (docs/planner.md, "Lowering").  Rows are samples of the global batch,
 * [0, pg->batch).  An op of R replicas gives replica j the rows
 * [hg_lower_bound(B, R, j), hg_lower_bound(B, R, j + 1)) (boundaries
 * rounded down: every replica gets floor(B/R) or ceil(B/R) rows, the
 * rows add up to B, a device's rows differ from its exact share by less
 * than one); a device's replicas are consecutive (devices in rank order),
 * so its rows are one range.  A device with no replica gets nothing.
 *
 * An op's output goes to every device that holds a consumer: the rows the
 * consumers there read (the hull of their rows; every row for a tensor
 * without a batch axis or a consumer that reads it whole), assembled from
 * the part produced on that device and one transfer from each other
 * producer device that holds some of them.  A transfer that takes a strict
 * part of its source's rows is a split there; a need assembled from more
 * than one piece is a concat; a consumer replica then reads its own rows
 * out of the need.  A tensor without a batch axis travels whole from the
 * op's first device (DP replicas of an op without a batch axis compute
 * the same whole tensor, as gradients after their aggregation do).
 *
 * Every parameter has one aggregation: the devices that hold a replica of
 * the op writing its gradient (a partial gradient each), summed by ring or
 * hierarchical AllReduce (the one the cost model finds cheaper for the
 * gradient's bytes) or by a parameter server, or nothing to sum (one
 * device, or no op writes the gradient). */
struct hg_lplace {        /* an op's replicas on one device */
    int dev;
    int rep0, nrep;       /* replicas rep0 .. rep0 + nrep - 1 of the op's R */
    int64_t begin, end;   /* their rows */
};

struct hg_lxfer {         /* a piece of an op's output between two devices */
    int src, dst;
    int64_t begin, end;   /* rows ([0, batch): the whole tensor) */
    int split;            /* 1: a strict part of what src holds */
};

struct hg_lneed {         /* an op's output where consumers read it */
    int dev;
    int64_t begin, end;   /* the rows needed there (begin == end: none) */
    int64_t lbegin, lend; /* the part produced on dev (lbegin == lend: none) */
    int xfer0, nxfer;     /* the transfers that bring the rest: the op's
                           * xfer[xfer0 .. xfer0 + nxfer), sources ascending */
    int concat;           /* pieces assembled (local part + transfers) */
};

struct hg_lop {
    int group;
    int nrep;             /* R: replicas over all devices */
    int nplace, nneed, nxfer;
    struct hg_lplace *place; /* [nplace] devices ascending */
    struct hg_lneed *need;   /* [nneed] devices ascending; none without output */
    struct hg_lxfer *xfer;   /* [nxfer] by need, sources ascending */
    int agg;              /* the parameter (index into hg_lowered.agg) whose
                           * gradient this op writes, -1 */
    int rhost;            /* its group recomputes it: again just before op
                           * rhost (docs/planner.md, "Simulator"), else -1 */
    int cplace, cneed, cxfer; /* allocated entries */
};

enum hg_lagg_kind { HG_LAGG_NONE, HG_LAGG_RING, HG_LAGG_HIER, HG_LAGG_PS };
const char *hg_lagg_kind_name(enum hg_lagg_kind k);

struct hg_lagg {          /* one parameter's gradient aggregation */
    int param, grad;      /* tensors (grad -1: forward-only graph) */
    int op;               /* the op writing grad, -1: none; its places are
                           * the devices holding a partial gradient, in ring
                           * order */
    enum hg_lagg_kind kind;
    int ps;               /* HG_LAGG_PS: the server's device; else -1 */
};

/* Tensor parallelism (planner/tensor.c; docs/planner.md, "Tensor
 * parallelism").  The rows layer above sees a TP group as model parallel
 * on its lead device (the first of weight > 0): tensors from other groups
 * arrive there and leave from there.  This layer says what each device of
 * the group computes: per op a mode and a split axis whose shards tile it,
 * per tensor its layout on the group's devices, and the collectives that
 * turn a producer's layout into the one each consumer reads. */
enum hg_tpl_kind {
    HG_TPL_FULL,          /* every device of the set holds the whole tensor */
    HG_TPL_SPLIT,         /* each holds its shard of `axis` */
    HG_TPL_PARTIAL,       /* each holds a whole-shaped partial sum */
    HG_TPL_LEAD,          /* the set's lead alone holds it (from another group) */
    HG_TPL_ANY            /* a consumer reading the shape only */
};
struct hg_tplayout {
    enum hg_tpl_kind kind;
    int axis;             /* HG_TPL_SPLIT: the tensor's axis; else -1 */
};
/* REPL: every device computes the whole op; COL: a matmul split on its
 * output features (N), also a convolution on its output channels; ROW: a
 * matmul split on its reduction axis K (output partial), also
 * CONV2D_BWD_DATA on the output channels; VOCAB: an embedding split on its
 * table's rows (output partial); AXIS: split on an output axis that its
 * inputs share (element-wise ops, heads of attention, a weight gradient's
 * rows or columns, an update following its parameter). */
enum hg_tp_mode { HG_TPM_REPL, HG_TPM_COL, HG_TPM_ROW, HG_TPM_VOCAB, HG_TPM_AXIS };
const char *hg_tp_mode_name(enum hg_tp_mode m);
const char *hg_tpl_kind_name(enum hg_tpl_kind k);

struct hg_tpset {         /* a TP group's devices */
    int group;
    int n;                /* devices of weight > 0 */
    int *dev, *w;         /* [n] ascending; their weights */
};
struct hg_tshard {        /* device dev computes [begin, end) of the split axis */
    int dev;
    int64_t begin, end;
};
struct hg_tpop {
    int set;              /* index into hg_tp.set, -1: not tensor parallel */
    enum hg_tp_mode mode;
    int64_t len;          /* the split axis' length (REPL: 0) */
    int nshard;           /* = its set's n; REPL: every device whole */
    struct hg_tshard *shard; /* [nshard] tiling [0, len), devices ascending */
    struct hg_tplayout out;               /* its output's layout on the set */
    struct hg_tplayout in[HG_MAX_INPUTS]; /* what it reads of each input */
};
enum hg_tpc_kind {
    HG_TPC_SLICE,         /* local: FULL -> SPLIT, no communication */
    HG_TPC_ALLGATHER,     /* SPLIT -> FULL, uneven counts */
    HG_TPC_REDUCE_SCATTER, /* PARTIAL -> SPLIT, uneven counts */
    HG_TPC_ALLREDUCE,     /* PARTIAL -> FULL */
    HG_TPC_BCAST          /* LEAD -> FULL: from the lead to the others */
};
const char *hg_tpc_kind_name(enum hg_tpc_kind k);
struct hg_tpcoll {
    enum hg_tpc_kind kind;
    int tensor, op;       /* op: the tensor's producer, -1: a param or input */
    int set;
    int at;               /* the op whose step runs it: after the compute
                           * of its producer in the set, else (a param, an
                           * input, a tensor from another group) before
                           * that of its first reader in the set */
    struct hg_tplayout from, to;
    int64_t numel, bytes; /* the whole tensor */
    int64_t *count;       /* [set's n] elements per device: its part
                           * (ALLGATHER, REDUCE_SCATTER, SLICE), numel
                           * (ALLREDUCE, BCAST) */
};
struct hg_tp {
    int nset;
    struct hg_tpset *set; /* [nset] one per TP group */
    int *gset;            /* [ngroups] a group's set, -1 */
    struct hg_tpop *op;   /* [nops] */
    struct hg_tplayout *tlay; /* [ntensors] layout as made on tset's devices */
    int *tset;            /* [ntensors] the set holding it so, -1 */
    int ncoll, ccoll;
    struct hg_tpcoll *coll; /* [ncoll] by tensor, then set */
};
/* Shard sizes of an axis of len over weights w[n] (>= 0, sum > 0): each
 * floor(len * w / W), the rest one by one to the largest remainders (ties:
 * the earlier device); a weight of 0 gets 0.  size[n]. */
void hg_tp_split(int64_t len, const int *w, int n, int64_t *size);
/* Device j's share of op v's split axis (1 for REPL, 0 off the set). */
double hg_tp_share(const struct hg_tp *tp, int v, int dev);
/* Readable: per TP op its mode, shards and layouts; the collectives. */
struct hg_lowered;
int hg_tp_print(const struct hg_lowered *lw, FILE *f);

struct hg_lowered {
    const struct hg_pgraph *pg;
    int nops, ndev, ngroups;
    int64_t batch;        /* rows: pg->batch */
    struct hg_lop *ops;   /* [nops] by op id */
    struct hg_lagg *agg;  /* [pg->nparams] in the graph's parameter order */
    int *order, *pos;     /* [nops] execution order; each op's position */
    /* recomputation: what depends on the grouping and the order only */
    int *recompute;       /* [ngroups] the group's flag */
    int *droppable;       /* [nops] a forward output its group may drop */
    int *host;            /* [ngroups] the op before which group k recomputes, -1 */
    int *hstart, *hgroups; /* groups hosted by op v: hgroups[hstart[v] .. hstart[v + 1]) */
    int *dstart, *dops;   /* droppable ops of group k in order: dops[dstart[k] .. dstart[k + 1]) */
    int *gstart, *gops;   /* ops of group k: gops[gstart[k] .. gstart[k + 1]) */
    int *stamp, stampv;   /* [nops] scratch of hg_lower_group */
    /* The runtime's pieces (controller/hybrid.c, trainer/strategy.c): the
     * rows where some forward or backward op's place begins or ends cut
     * the batch; an op computes each piece of its place as one call. */
    int *cutn;            /* [batch + 1] such bounds at each row */
    int *cutstamp;        /* [batch + 1] scratch of hg_lower_group */
    unsigned char *cutwas; /* [batch + 1] scratch: cutn[x] > 0 before it */
    int64_t *cutchg;      /* [ncutchg] rows whose cut came or went in the
                           * last hg_lower_group */
    int ncutchg, ccutchg;
    /* A pipeline (planner/pipeline.c; nmicro 0: none).  The places' bounds
     * cut the batch into segments seg[i] .. seg[i + 1]; micro-batch m holds
     * the m-th of M near-equal chunks of every segment (so every device of a
     * data-parallel stage holds its share of every micro-batch), whose bounds
     * are cuts above.  Device d's forward (b 0) and backward (b 1) of
     * micro-batch m start at mstart[(d * M + m) * 2 + b] under the schedule
     * (unit times); hg_pipe_key orders the ops' micro-batches by it. */
    int nmicro, nstages, nseg;
    enum hg_psched sched;
    int64_t *seg;         /* [nseg + 1] */
    int64_t *mstart;      /* [ndev][nmicro][2] */
    int *stage;           /* [ndev] each device's stage, -1: none */
    struct hg_tp *tp;     /* tensor-parallel groups (planner/tensor.c); NULL: none */
};


/* The first row of replica j of R over B rows: floor(j * B / R). */
int64_t hg_lower_bound(int64_t batch, int R, int j);
struct hg_lowered *hg_lower_new(const struct hg_pgraph *pg);
void hg_lower_free(struct hg_lowered *lw);
/* Lowers st (checked first: -1 with err naming the group, op or device). */
int hg_lower_full(struct hg_lowered *lw, const struct hg_strategy *st, char *err,
                  size_t errlen);
/* st when it lowers, else NULL with err (st freed): a baseline that
 * cannot run is none. */
struct hg_strategy *hg_lower_keep(const struct hg_pgraph *pg, struct hg_strategy *st, char *err,
                                  size_t errlen);
/* st differs from the strategy last lowered in group g's configuration
 * only: lowers again what that touches (g's ops, their producers' outputs,
 * their gradients' aggregations).  changed[nops] gets those ops; returns
 * their number; lw->cutchg the rows whose cut came or went (other ops'
 * pieces there changed).  The result equals hg_lower_full's. */
int hg_lower_group(struct hg_lowered *lw, const struct hg_strategy *st, int g, int *changed);
/* A lowered pipeline's micro-batch of a row; the rows of micro-batch m in
 * [a, b); where op v's micro-batch m runs on device d in the order (its
 * micro-step's start x (nops + 1) + v's place in the strategy's order;
 * updates after every micro-step). */
int hg_pipe_micro(const struct hg_lowered *lw, int64_t row);
int64_t hg_pipe_rows(const struct hg_lowered *lw, int m, int64_t a, int64_t b);
int64_t hg_pipe_key(const struct hg_lowered *lw, int v, int d, int m);
/* Readable: per op its places, needs and transfers; per parameter its
 * aggregation; the order. */
int hg_lower_print(const struct hg_lowered *lw, FILE *f);

/* ------------------------------------------------------------ simulator
 * (planner/sim.c) FlexFlow's task graph and simulation of a lowered
 * strategy, priced by hg_pprice; docs/planner.md. */
struct hg_sim_result {
    double iter_s;                 /* per-iteration time */
    int64_t peak[HG_PLAN_MAXDEV];  /* per-device peak memory, bytes */
    int oom;                       /* devices over their memory */
    double overflow;               /* sum of (peak - memory) / memory over them */
    long ntasks;
};
struct hg_sim;
struct hg_sim *hg_sim_new(const struct hg_pgraph *pg, const struct hg_pprice *pr);
void hg_sim_free(struct hg_sim *s);
/* Builds every task and simulates from scratch. */
void hg_sim_full(struct hg_sim *s, const struct hg_strategy *st, struct hg_sim_result *r);
/* st differs from the strategy of the previous simulation (full or delta)
 * in group g's configuration only: rebuilds the tasks that group touches and
 * re-simulates from the earliest of them.  Identical to hg_sim_full. */
void hg_sim_delta(struct hg_sim *s, const struct hg_strategy *st, int g,
                  struct hg_sim_result *r);
/* The last simulation as a Chrome trace (traceEvents, ph "X", pid = device
 * or channel, ts/dur in microseconds). */
int hg_sim_trace(const struct hg_sim *s, FILE *f);
/* Per op of the last simulation: the longest compute task, aggregation and
 * longest transfer out (the scheduler's weights). */
void hg_sim_op_times(const struct hg_sim *s, int op, double *comp, double *comm);
/* The lowered form of the last simulated strategy (owned by the sim). */
const struct hg_lowered *hg_sim_lowered(const struct hg_sim *s);

/* ------------------------------------------------------------ scheduler
 * (planner/sched.c) */
enum hg_sched_policy { HG_SCHED_RANK, HG_SCHED_FIFO, HG_SCHED_OWN };
/* Writes an execution order into st->order by list scheduling with the task
 * times of the last simulation of st (HeteroG: rank = own time + max over
 * successors of comm + rank; ready ops go by highest rank; FIFO: by the time
 * they became ready). */
void hg_sched_order(const struct hg_sim *sim, const struct hg_pgraph *pg,
                    struct hg_strategy *st, enum hg_sched_policy pol);
/* Both policies; keeps the faster (rank on ties), leaves it simulated in r. */
void hg_sched_list(struct hg_sim *sim, const struct hg_pgraph *pg,
                   struct hg_strategy *st, struct hg_sim_result *r,
                   enum hg_sched_policy *chosen);
/* hg_sched_list, or the order st came with (HG_SCHED_OWN) where that is
 * faster still; leaves the order kept simulated in r. */
void hg_sched_best(struct hg_sim *sim, const struct hg_pgraph *pg,
                   struct hg_strategy *st, struct hg_sim_result *r,
                   enum hg_sched_policy *chosen);

/* ------------------------------------------------------------ search
 * (planner/search.c) */
enum hg_baseline { HG_BASE_EV_PS, HG_BASE_EV_AR, HG_BASE_CP_PS, HG_BASE_CP_AR,
                   HG_BASE_MP, HG_BASE_COUNT };
const char *hg_baseline_name(enum hg_baseline b);
/* Fills every group's cfg of s (grouping already done). */
void hg_baseline_apply(struct hg_strategy *s, const struct hg_pgraph *pg,
                       enum hg_baseline b);
/* How hg_pipe_baseline cuts the forward into stages. */
enum hg_pipe_cut { HG_PIPE_UNIFORM, HG_PIPE_SPEED, HG_PIPE_RANDOM };
/* A pipeline over every device of pg's cluster in rank order, one group
 * per stage (planner/pipe_plan.c): the forward ops the batch reaches, in
 * id order, cut into consecutive stages of equal op counts (UNIFORM), of
 * forward time proportional to each device's speed (SPEED: pr,
 * hg_cluster_rank_capacities) or at random (RANDOM, drawn with seed; a
 * test aid); other forward ops with their first consumer, each backward
 * op on its origin's stage (else its producers' latest), each update with
 * its gradient; M micro-batches under sched.  NULL with err, also for one
 * the lowering refuses. */
struct hg_strategy *hg_pipe_baseline(const struct hg_pgraph *pg, const struct hg_pprice *pr,
                                     enum hg_pipe_cut cut, uint64_t seed, int M,
                                     enum hg_psched sched, char *err, size_t errlen);
struct hg_sim;
struct hg_sim_result;
/* A hill climb from the pipeline start (hg_pipe_baseline's, or any whose
 * groups are stages over disjoint devices covering the cluster): moves a
 * stage boundary by a few forward ops, doubles or halves M, swaps the
 * schedule, swaps two devices' places, makes two neighbour stages one
 * data-parallel stage or cuts one in two, or changes a data-parallel
 * stage's replica count on one device, keeping a move when the simulator
 * (hg_search_cost) finds it better; at most iters proposals within
 * budget_s (0: none), drawn with seed.  Returns the best (r its
 * simulation; the simulator ends on it). */
struct hg_strategy *hg_pipe_search(struct hg_sim *sim, const struct hg_pgraph *pg,
                                   const struct hg_strategy *start, long iters, double budget_s,
                                   uint64_t seed, struct hg_sim_result *r);
/* How hg_tp_baseline shards: equally, or in eighths of the fastest
 * device's speed (at least 1: 2:1 devices get 8:4). */
enum hg_tp_shards { HG_TP_EVEN, HG_TP_SPEED };
/* Megatron-style tensor parallelism within a node (planner/search.c):
 * every op in one tensor-parallel group over every device of pg's
 * one-node cluster, shards by how (the plan table's TP-E and TP-S,
 * hgplan --tensor).  NULL with err: a cluster of more nodes (Megatron
 * replicates the group across nodes, not planned yet), capacities that
 * cannot be priced, a strategy the lowering refuses. */
struct hg_strategy *hg_tp_baseline(const struct hg_pgraph *pg, enum hg_tp_shards how,
                                   char *err, size_t errlen);
/* The strategies hgtrain's executor runs (trainer/strategy.c), as bits:
 * HG_EXEC_DP every group data parallel with the same replicas on every
 * device, at least one each (aggregation free per group: AllReduce or any
 * PS); HG_EXEC_MP every group model parallel (CPU plans, one micro-batch
 * per update); HG_EXEC_SPLIT any mix of the two, replica counts free
 * (the batch split into pieces: controller/hybrid.c; CPU plans, one
 * micro-batch per update).  Any may recompute (hg_ctl_strategy.recompute).
 * HG_EXEC_NOPS, with the others: no group aggregated by a parameter
 * server (a job over NCCL: comm/ps.c sums host memory).  HG_EXEC_TP
 * every group tensor parallel over every device, a shard weight >= 1
 * each, no recomputation, no pipeline (controller/tp.c; CPU workers over
 * shm or tcp); a TP strategy is executable only with it. */
enum { HG_EXEC_DP = 1u, HG_EXEC_MP = 2u, HG_EXEC_SPLIT = 4u, HG_EXEC_NOPS = 8u,
       HG_EXEC_TP = 16u };
/* 1 when st is one of the kinds (a set of HG_EXEC_* bits). */
int hg_strategy_executable(const struct hg_strategy *st, unsigned kinds);
/* The search objective: the time if it fits, else a penalty above any
 * feasible time. */
double hg_search_cost(const struct hg_sim_result *r);

/* The seam for a learned policy: proposes a new cfg for one group. */
typedef void (*hg_propose_fn)(void *ctx, const struct hg_pgraph *pg,
                              const struct hg_strategy *st, uint64_t *rng,
                              int *group, struct hg_gcfg *cfg);
void hg_propose_random(void *ctx, const struct hg_pgraph *pg,
                       const struct hg_strategy *st, uint64_t *rng, int *group,
                       struct hg_gcfg *cfg);
uint64_t hg_rand(uint64_t *state);

struct hg_search_opts {
    double budget_s;      /* wall-clock budget (0: none) */
    long max_iters;       /* 0: none */
    long stagnation;      /* stop after this many proposals without a new best (0: none) */
    uint64_t seed;
    double beta;          /* accept exp(-beta * (new - old)); 0: 1000 / seed cost */
    hg_propose_fn propose;  /* NULL: hg_propose_random */
    void *propose_ctx;
    int after_full;       /* full simulations the caller runs after the search:
                           * reserved in the budget with the search's own final
                           * one and the slowest proposal, so that everything
                           * ends within budget_s (a proposal on 1024 devices
                           * can cost seconds) */
    unsigned executable;  /* HG_EXEC_* bits: only strategies hgtrain
                           * executes today of these kinds
                           * (hg_strategy_executable; 0: any); the seed must
                           * be one.
                           * A proposal that would leave them is applied to
                           * every group (lift: its replicas to every group,
                           * or the MP baseline's placement around it; a full
                           * simulation), and skipped when even that is not
                           * executable (each group keeping its
                           * recomputation flag) */
};
/* Why a search stopped: the first two are reproducible (the result
 * depends on the seed and the inputs alone), the budget is not. */
enum hg_search_stop { HG_SEARCH_STOP_ITERS, HG_SEARCH_STOP_STAGNATION,
                      HG_SEARCH_STOP_BUDGET };
struct hg_search_stats {
    long iters, accepted, improved;
    enum hg_search_stop stop;
    long skipped;         /* executable: proposals with no executable form */
    double seconds, seed_cost, best_cost;
};
/* Metropolis-Hastings from st (the seed) on delta simulation; st becomes
 * the best strategy found. With a budget, no proposal starts unless it,
 * the final full simulation and after_full more fit in what is left. */
void hg_search_mcmc(struct hg_sim *sim, const struct hg_pgraph *pg,
                    struct hg_strategy *st, const struct hg_search_opts *o,
                    struct hg_search_stats *stats);

/* ------------------------------------------------------------ policy
 * (planner/policy_*.c, policy-impl.h) A learned placement policy (HeteroG's GNN agent, with
 * GDP's generalisation across graphs and clusters): features of a graph's
 * op groups and a cluster's devices, a network built as an hg_graph
 * (graph attention over the groups' neighbourhoods, a Transformer layer,
 * per-group heads whose model-parallel part scores each group against each
 * device), trained by REINFORCE with hgtrain's own autodiff, executor and
 * AdamW; an HDF5 policy file (docs/planner.md, "Learned policy"). */
#define HG_POLICY_LAYOUT 3 /* the feature layout below; files of another are refused */
#define HG_POLICY_FG 24    /* features per group */
#define HG_POLICY_FD 6     /* features per device */
/* Placement actions of a group on D devices: MP on each device, even DP,
 * capacity-proportional DP, even DP over each device's node. */
#define HG_POLICY_ACTIONS(D) (2 * (D) + 2)

/* One graph on one cluster, as the network reads it (log-scaled so that
 * graphs and clusters of different sizes are comparable). */
struct hg_policy_feat {
    int ngroups, ndev;
    float *group;         /* [ngroups][HG_POLICY_FG] */
    float *dev;           /* [ndev][HG_POLICY_FD] */
    float *time;          /* [ngroups][ndev] log(priced time on d / on its fastest) */
    float *mem;           /* [ngroups][ndev] static + activation bytes / memory of d */
    float *edge;          /* [ngroups][ngroups] log1p(MB between them) / the largest */
    float *mask;          /* [ngroups][ngroups] 0: itself or a neighbour, -1e9: not */
    float *ref_place;     /* [ngroups][HG_POLICY_ACTIONS(ndev)] one-hot: the
                             reference's placement action (MP on d, even DP,
                             proportional DP; never one node's DP) */
    float *ref_agg;       /* [ngroups][2] one-hot: its aggregation (PS, AllReduce);
                             zeros where it places the group model parallel */
};
/* Features of pg's groups (st->group, st->ngroups: hg_strategy_group) from
 * g (the graph pg was built from: FLOPs and bytes), pr (times) and ref
 * ([ngroups][2]: each group's action in a reference strategy, placement
 * 0..ndev+1 and aggregation 0/1, -1 where it has none; NULL: no
 * reference), which the network starts from and learns where to leave. */
void hg_policy_features(struct hg_policy_feat *f, const struct hg_pgraph *pg,
                        const struct hg_graph *g, const struct hg_pprice *pr,
                        const struct hg_strategy *st, const int *ref);
void hg_policy_feat_free(struct hg_policy_feat *f);

struct hg_policy_cfg {
    int d;                /* embedding width (0: 32) */
    int heads;            /* attention heads, dividing d (0: 2) */
    float lr;             /* AdamW learning rate (0: 3e-3) */
    float entropy;        /* entropy bonus beta (0: 0.01) */
    uint64_t seed;        /* initial weights and sampling */
};
struct hg_policy;
struct hg_policy *hg_policy_new(const struct hg_policy_cfg *cfg);
void hg_policy_free(struct hg_policy *p);
/* The policy file (hg_policy_save, hg_policy_load): planner/policy-file.h,
 * compiled into hgplan, not the library. */
/* The master copy of parameter `name` (n: its floats), NULL if none. */
const float *hg_policy_param(const struct hg_policy *p, const char *name, size_t *n);
void hg_policy_get_cfg(const struct hg_policy *p, struct hg_policy_cfg *cfg, long *steps);

/* One graph on one cluster, to train on or to place: its grouping
 * (hg_strategy_group into `groups`), features, a simulator, the
 * reference (the best baseline, list-scheduled: its time, and its order
 * that samples are simulated in) and the network built
 * for its sizes.  pg, g and pr must outlive it. */
struct hg_policy_task;
int hg_policy_task_new(struct hg_policy_task **t, struct hg_policy *p,
                       const struct hg_pgraph *pg, const struct hg_graph *g,
                       const struct hg_pprice *pr, int groups, char *err, size_t errlen);
void hg_policy_task_free(struct hg_policy_task *t);
const struct hg_policy_feat *hg_policy_task_feat(const struct hg_policy_task *t);
double hg_policy_task_ref(const struct hg_policy_task *t);
/* The best strategy sampled while training on t (the reference's order) and its
 * hg_search_cost; NULL before any sample. */
const struct hg_strategy *hg_policy_task_best(const struct hg_policy_task *t, double *cost);
/* The network's probabilities for t: place[ngroups][HG_POLICY_ACTIONS(ndev)]
 * (MP on each device, even DP, capacity-proportional DP, even DP over each
 * device's node), agg[ngroups][2] (PS on the
 * device hg_gcfg_choose_ps picks, AllReduce).  Either may be NULL. */
int hg_policy_forward(struct hg_policy *p, struct hg_policy_task *t, float *place, float *agg,
                      char *err, size_t errlen);
/* The most probable action of each group as a strategy (the reference's order; the
 * caller frees it), simulated into r when r is not NULL. */
struct hg_strategy *hg_policy_decode(struct hg_policy *p, struct hg_policy_task *t,
                                     struct hg_sim_result *r, char *err, size_t errlen);
/* Placing with the policy (hgplan --search gnn): the greedy strategy
 * (each group's most probable action), simulated into stats->greedy: in
 * the training reference's order (hg_sched_list's) with seconds 0, else in
 * the placement's reference's (hgplan's best baseline in the order
 * hg_sched_best keeps).  With seconds > 0 then three searches, each in the
 * order hg_sched_best gives its start and list-scheduled at its end, the
 * fastest strategy kept: from the faster of the greedy strategy and the
 * reference, each group's `top` most probable actions other than its own
 * tried as single-group moves (delta-simulated; the group with the most
 * probable move first), the fastest of a group's kept where it beats the
 * strategy so far, passes until one keeps nothing, then the same with
 * every action (the policy's ranking can miss a move: inception_v3 on
 * heterog-8gpu); time left, from the same start a steepest descent over
 * every action (per sweep the fastest single move or pair of two of the
 * 32 fastest single moves kept, until none is faster); time left, that
 * descent from the slower start where it fits in memory.  Until the
 * seconds are spent.  The caller frees the strategy.  The probabilities
 * stay in t for hg_policy_propose; with seconds, the placement becomes
 * t's imitation target (hg_policy_train_opts.explore) where, at the next
 * finetune's start, its reward beats that target's. */
struct hg_policy_place_opts {
    double seconds;       /* 0: the greedy strategy alone */
    int top;              /* placements tried per group (0: 3) */
    int want_greedy;      /* a copy of the greedy strategy in stats->greedy_st */
};
enum hg_place_how {
    HG_PLACE_MOVES, /* the policy's moves from the faster start */
    HG_PLACE_PAIRS, /* the steepest descent with pairs from it */
    HG_PLACE_PAIRS_OTHER, /* the same from the other start */
};
struct hg_policy_place_stats {
    struct hg_sim_result greedy;
    struct hg_strategy *greedy_st; /* want_greedy: the caller frees it; else NULL */
    int from_ref;         /* the moves started from the reference */
    enum hg_place_how how; /* the search whose strategy was kept */
    long tried, kept, passes;
    double seconds;
};
struct hg_strategy *hg_policy_place(struct hg_policy *p, struct hg_policy_task *t,
                                    const struct hg_policy_place_opts *o,
                                    struct hg_policy_place_stats *stats, char *err,
                                    size_t errlen);
/* An hg_propose_fn for MCMC (ctx: a task that hg_policy_place has placed,
 * st of its grouping): half the proposals hg_propose_random's (the replica
 * counts and recomputation the policy does not choose), half a group drawn
 * uniformly and its action from the policy's probabilities. */
void hg_policy_propose(void *ctx, const struct hg_pgraph *pg, const struct hg_strategy *st,
                       uint64_t *rng, int *group, struct hg_gcfg *cfg);
/* REINFORCE: each step takes the next task (round robin), samples
 * `samples` strategies, rewards each -sqrt(time / reference) (out of
 * memory: -sqrt(10 (1 + overflow) + time / reference)), advantage against
 * the task's moving-average reward (explore: the mean of the step's other
 * samples), one AdamW step on the loss
 * sum(-advantage log p) - entropy * H.  Stops after steps (> 0) or
 * seconds (> 0), whichever first; deterministic given the seed when it
 * stops on steps. */
struct hg_policy_train_opts {
    long steps;
    double seconds;
    int samples;          /* 0: 8 */
    FILE *log;            /* a line every log_every steps (NULL: none) */
    FILE *json;           /* the same as a json line (NULL: none): {"policy_update":
                             N, "reward": mean of the last log_every, "wall": s};
                             and one for the steps after the last such line */
    long log_every;       /* 0: 50 */
    double *rewards;      /* [steps] or NULL: each step's mean reward */
    int explore;          /* a finetune: each group's action uniform with
                             probability 1/groups (else the policy's), the
                             advantage against the step's other samples; and
                             the best strategy the task knows (the
                             reference, a sample, hg_policy_place's result)
                             imitated by max(0, its reward - the mean) */
    long eval_every;      /* > 0: every eval_every updates (and before the
                             first, and after the last) the greedy placement
                             of every task is simulated and scored: the
                             geometric mean over the tasks of
                             min(greedy, reference) / reference (out of
                             memory: the reference), which is where hgplan's
                             placement starts from; the policy that scored
                             best is the one kept (of equals, that whose
                             greedy placements are nearer the references,
                             out of memory counted 10x; then the earliest) */
};
struct hg_policy_train_stats {
    long steps;
    double seconds, first_reward, last_reward; /* means over the first/last tenth */
    long best_update;     /* eval_every: the update whose policy was kept */
    double best_score, last_score; /* its score and the last update's */
    int best_better;      /* tasks whose greedy placement beat the reference then */
};
int hg_policy_train(struct hg_policy *p, struct hg_policy_task *const *tasks, int ntasks,
                    const struct hg_policy_train_opts *o, struct hg_policy_train_stats *st,
                    char *err, size_t errlen);
/* A copy of c with every device's speed (peak FLOP/s and memory
 * bandwidth) scaled by a factor in [1/2, 2], its memory in [1/2, 3/2], each
 * link's and NIC's bandwidth in [1/2, 2], drawn from seed (log-uniform). */
struct hg_cluster *hg_policy_perturb(const struct hg_cluster *c, uint64_t seed);

/* ------------------------------------------------------------ planning
 * (planner/plan.c) The baselines and the search as hgplan --search and
 * hgtrain --plan run them, with the table both print (docs/planner.md,
 * "The plan table"). */
/* The default of hgplan --margin and hgtrain --plan-margin, in percent
 * (the options' text): on this project's 2-core test machine the
 * simulator's error against measured runs is up to about 10% per
 * strategy (bench/RESULTS.md, 2026-11-27). */
#define HG_PLAN_MARGIN_DEF "10"
/* The search stops after this many proposals without a new best. */
#define HG_PLAN_STAGNATION 20000
struct hg_plan_opts {
    int mcmc;             /* 0: the best baseline; 1: MCMC from it */
    int groups;           /* HeteroG op groups (0: 64) */
    double budget_s;      /* MCMC wall-clock budget (0: 30) */
    long max_iters;       /* MCMC proposals at most (0: none) */
    uint64_t seed;
    double beta;          /* 0: 1000 (divided by the seed's cost) */
    unsigned executable;  /* HG_EXEC_* bits (0: any strategy): the best of
                           * the data-parallel baselines, the search restricted to these kinds
                           * (hg_search_opts); needs HG_EXEC_DP */
    const char *keep;     /* a baseline's name: keep it, not the best */
    double margin;        /* the search's strategy replaces the best baseline
                           * only when simulated at least this fraction
                           * faster (0: any gain): a smaller gain is within
                           * the simulator's error against real runs */
    int verbose;          /* the table's rows with every device's peak, the
                           * search's acceptance and order */
    int rows_only;        /* the caller adds candidates and chooses: the
                           * rows, no search or "chosen:" line, no mark */
    int no_pipelines;     /* the previous space: no pipeline rows */
    int no_tensor;        /* no tensor-parallel rows (TP-E, TP-S) */
    /* With HG_EXEC_TP: the executor's word on a tensor-parallel row,
     * simulated in lw (NULL: every one runs); 0, or -1 with why (what it
     * cannot run yet), which marks the row no candidate. */
    int (*tp_runs)(void *ctx, const struct hg_lowered *lw, char *why, size_t n);
    void *tp_ctx;
};
/* The planner graph of a training graph on c and its prices, as hgplan
 * and hgtrain --plan and --strategy plan a task: compute and transfers at
 * g's shapes (the length the steps are priced at), every device's memory
 * at gm's (the same graph built for the longest sample the run can see,
 * hg_task_longest; NULL: g's).  -1 with err (nothing to free). */
int hg_plan_price(struct hg_pgraph **pg, struct hg_pprice **pr, const struct hg_graph *g,
                  const struct hg_graph *gm, const struct hg_cluster *c, const char *model,
                  int64_t batch, char *err, size_t errlen);
/* Simulates the baselines, searches with opts, prints the plan table to o
 * (the candidates' rows, the chosen one marked, why the search stopped,
 * "chosen: X, because Y") and returns the strategy chosen (the caller
 * frees it), simulated in *br.  Deterministic given the options when the
 * search stops on max_iters or HG_PLAN_STAGNATION proposals without a new
 * best before budget_s. */
struct hg_strategy *hg_plan_run(FILE *o, struct hg_sim *sim, const struct hg_pgraph *pg,
                                const struct hg_pprice *pr, const struct hg_plan_opts *opts,
                                struct hg_sim_result *br);
/* The table's heading: the devices and op groups (0: no such line, the
 * caller says what the rows are), the columns. */
void hg_plan_print_head(FILE *o, const struct hg_cluster *c, int groups);
/* One row: name, time, the peak of the device nearest its memory,
 * feasible ("yes", "no: OOM on N devices", "no: why_not"), note, the
 * mark of the chosen row; verbose: every device's peak on a line below. */
void hg_plan_print_row(FILE *o, const char *name, const struct hg_sim_result *r,
                       const struct hg_cluster *c, const char *why_not, const char *note,
                       int chosen, int verbose);
/* "  recomputation in N of M groups", when N > 0. */
void hg_plan_print_recompute(FILE *o, const struct hg_strategy *st);

#endif
