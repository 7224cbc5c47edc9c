/* hg_planner.h - the planner room (HeteroG with FlexFlow's simulator):
 * cluster descriptions, the roofline and communication cost model, graph
 * builders for HeteroG's evaluation models (shapes only) and the JSON
 * export of a training graph.  The simulator, scheduler and strategy search
 * build on these (docs/planner.md).
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
enum hg_link_kind { HG_LINK_NVLINK, HG_LINK_PCIE, HG_LINK_SHM, HG_LINK_NET,
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
};

/* An intra-node link between two devices of one node, full duplex:
 * bandwidth is per direction. */
struct hg_plink {
    int a, b;             /* global device ids, a < b, same node */
    enum hg_link_kind kind;
    double bw;            /* bytes/s per direction (> 0) */
    double lat;           /* seconds (>= 0) */
    int implicit;         /* 1: from the node's default `intra` */
};

struct hg_pnode {
    char name[64];
    int first_dev, ndev;  /* devices[first_dev .. first_dev+ndev) */
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
    double switch_bw;     /* bytes/s through the switch (0: one node) */
    double net_lat;       /* seconds, NIC to NIC through the switch */
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
/* Hierarchical: reduce-scatter in each node (ring), ring AllReduce of each
 * shard among the nodes' leaders in parallel over the NICs, all-gather in
 * each node. Equals the ring for one node. */
double hg_cost_allreduce_hier(const struct hg_cluster *c, const int *devs,
                              int n, double bytes);
/* Parameter server on device ps: every other worker pushes bytes and pulls
 * bytes; each channel carries the sum of what crosses it, the busiest
 * channel bounds each phase (push, then pull). */
double hg_cost_ps(const struct hg_cluster *c, const int *devs, int n,
                  int ps, double bytes);

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

#endif
