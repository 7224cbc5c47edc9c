/* hgplan.c - the planner's program: list and build HeteroG's models or a
 * task's training graph, export the graph as JSON, read and summarise a
 * cluster file, price the graph on each device kind (profile or roofline);
 * with --profile-out: measure the task's ops and the shm links on this
 * machine and write a profile, or (--profile-links tcp) the tcp links
 * between hgplan processes on several nodes; with --search: simulate the
 * baselines, search with MCMC; --dp: simulate hgtrain's data parallelism;
 * write the strategy and the trace (docs/planner.md).
 *
 * Exit status: 0 done, 1 runtime error (a file, a build), 2 usage error. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/hg_base.h"
#include "planner/hg_planner.h"
#include "comm/hg_comm.h"
#include "planner/policy-file.h"
#include "planner/prof-links.h"
#ifdef HG_HAVE_CUDA
#include "kernels/cuda/hg_cuda.h"
#endif
#include "tasks/hg_task.h"

#define ERRLEN 1024

static const char usage[] =
    "usage: hgplan (--model M | --task T [--data DIR] [task options]) [--batch B]\n"
    "              [--seq-len L] [--optimizer sgd|adam|adamw|adadelta]\n"
    "              [--cluster FILE] [--export-graph FILE]\n"
    "       hgplan --list-models | --cluster FILE\n"
    "       hgplan --train-policy --models LIST --clusters LIST [--minutes M] --out FILE\n"
    "       hgplan --profile-links tcp --distributed-world-size W --distributed-rank R\n"
    "              --distributed-init-method tcp://HOST:PORT --profile-out FILE\n";

#define MAXLIST 16

struct args {
    char *model, *task, *data, *cluster, *export_graph, *optimizer;
    int64_t batch, seq;
    int list_models, forward_only, help, version, dp, verbose, no_pipelines, no_tensor;
    char *profile, *profile_out;
    int64_t pbatch[MAXLIST], pthreads[MAXLIST], pworlds[MAXLIST], psizes[MAXLIST];
    int64_t pworkers[MAXLIST], pgpus[MAXLIST], pslow[MAXLIST];
    int npbatch, npthreads, npworlds, npsizes; /* -1: not given */
    int npworkers, npgpus, npslow;
    int64_t preps, pwarmup;
    char *profile_links, *dinit, *dtoken;
    int64_t dworld, drank;
    double dtimeout;
    char *search, *out, *trace, *strategy, *baseline, *pipeline, *schedule, *tensor;
    int64_t micro;
    double budget, margin;
    double beta;
    char *policy, *policy_out, *models, *clusters, *log_json;
    int train_policy;
    double minutes, finetune, place_seconds;
    int64_t policy_steps, perturb, samples, eval_every;
    int64_t seed, groups, iters, order_seed;
    char **task_vals;
    /* the --profile-* lists as read, copied into the arrays above */
    struct hg_opt_list lbatch, lthreads, lworkers, lworlds, lsizes, lgpus, lslow;
};

#define OFF(f) offsetof(struct args, f)
enum { G_GRAPH, G_PLAN, G_POLICY, G_PROFILE, G_OTHER, G_TASK };
#define PROFILE_LIST(lo) \
    .type = HG_OPT_LIST, .group = G_PROFILE, .flags = HG_OPTF_WHOLE, .min = lo, \
    .max_count = MAXLIST, .metavar = "L"

static const struct hg_opt options[] = {
    /* ---------------------------------------------------------------- graph */
    {.name = "list-models", .type = HG_OPT_BOOL, .group = G_GRAPH, .offset = OFF(list_models),
     .help = "HeteroG's evaluation models and their default batch sizes"},
    {.name = "model", .type = HG_OPT_STR, .group = G_GRAPH, .offset = OFF(model),
     .metavar = "M", .help = "build model M's training graph (shapes only)"},
    {.name = "task", .type = HG_OPT_STR, .group = G_GRAPH, .offset = OFF(task),
     .metavar = "T", .help = "build task T's training graph (hgtrain --list-tasks); the task's "
                             "own options (--bert-layers ...) are accepted"},
    {.name = "data", .type = HG_OPT_STR, .group = G_GRAPH, .offset = OFF(data),
     .metavar = "DIR", .help = "the task's data directory (tasks that read a dictionary)"},
    {.name = "batch", .type = HG_OPT_I64, .group = G_GRAPH, .offset = OFF(batch), .min = 1,
     .metavar = "B", .help = "samples per iteration (default: the model's HeteroG Table 1 "
                             "batch; tasks: 32)"},
    {.name = "seq-len", .type = HG_OPT_I64, .group = G_GRAPH, .offset = OFF(seq), .min = 1,
     .metavar = "L", .help = "tokens per sample for sequence models (default: the model's; "
                             "tasks: 128)"},
    {.name = "optimizer", .type = HG_OPT_STR, .group = G_GRAPH, .offset = OFF(optimizer),
     .choices = "sgd|adam|adamw|adadelta", .metavar = "O",
     .help = "the update ops appended (default: tasks: hgtrain's, " HG_TASK_DEFAULT_OPTIMIZER
             "; models: sgd for CNNs, adam for sequence models)"},
    {.name = "forward-only", .type = HG_OPT_BOOL, .group = G_GRAPH,
     .offset = OFF(forward_only), .help = "no backward, no update"},
    {.name = "export-graph", .type = HG_OPT_STR, .group = G_GRAPH,
     .offset = OFF(export_graph), .metavar = "FILE",
     .help = "write the graph as JSON ('-': standard output)"},
    /* ----------------------------------------------------- cluster and plan */
    {.name = "cluster", .type = HG_OPT_STR, .group = G_PLAN, .offset = OFF(cluster),
     .metavar = "FILE", .help = "read and validate a cluster file, print a summary and, "
                                "with a graph, its roofline compute time per device"},
    {.name = "profile", .type = HG_OPT_STR, .group = G_PLAN, .offset = OFF(profile),
     .metavar = "FILE", .help = "price the devices of --cluster that name a profiled device "
                                "with FILE's measurements (roofline elsewhere)"},
    {.name = "search", .type = HG_OPT_STR, .group = G_PLAN, .offset = OFF(search),
     .choices = "baselines|mcmc|gnn|gnn+mcmc", .metavar = "S",
     .help = "with --cluster: simulate the baselines (EV-PS, EV-AR, CP-PS, CP-AR, MP) "
             "and, with S = mcmc, search from the best of them; gnn: place with "
             "--policy's network at once; gnn+mcmc: MCMC from that placement"},
    {.name = "budget", .type = HG_OPT_REAL, .group = G_PLAN, .offset = OFF(budget),
     .def = "30", .flags = HG_OPTF_POSITIVE, .metavar = "SECONDS",
     .help = "MCMC time budget"},
    {.name = "margin", .type = HG_OPT_REAL, .group = G_PLAN, .offset = OFF(margin),
     .def = HG_PLAN_MARGIN_DEF, .min = 0, .max = 100, .metavar = "PCT",
     .help = "--search mcmc: keep the best baseline unless the search's strategy is "
             "simulated at least PCT% faster (as hgtrain --plan-margin; 0: any gain)"},
    {.name = "beta", .type = HG_OPT_REAL, .group = G_PLAN, .offset = OFF(beta),
     .def = "1000", .flags = HG_OPTF_POSITIVE, .metavar = "B",
     .help = "MCMC acceptance exp(-B * increase / seed time)"},
    {.name = "iters", .type = HG_OPT_I64, .group = G_PLAN, .offset = OFF(iters), .min = 1,
     .help = "MCMC proposals at most (deterministic stop)"},
    {.name = "seed", .type = HG_OPT_I64, .group = G_PLAN, .offset = OFF(seed), .def = "0",
     .help = "MCMC seed"},
    {.name = "groups", .type = HG_OPT_I64, .group = G_PLAN, .offset = OFF(groups),
     .def = "64", .min = 1, .help = "HeteroG op groups"},
    {.name = "strategy", .type = HG_OPT_STR, .group = G_PLAN, .offset = OFF(strategy),
     .metavar = "FILE", .help = "simulate this strategy file instead of searching"},
    {.name = "dp", .type = HG_OPT_BOOL, .group = G_PLAN, .offset = OFF(dp),
     .help = "with --cluster: simulate hgtrain's data parallelism (every op on every "
             "device, even split, AllReduce)"},
    {.name = "baseline", .type = HG_OPT_STR, .group = G_PLAN, .offset = OFF(baseline),
     .choices = "EV-PS|EV-AR|CP-PS|CP-AR|MP|PIPE-U|PIPE-S|TP-E|TP-S", .metavar = "B",
     .help = "with --search baselines: the strategy to keep (--out, --trace) is this "
             "row of the table, not the fastest"},
    {.name = "pipeline", .type = HG_OPT_STR, .group = G_PLAN, .offset = OFF(pipeline),
     .choices = "uniform|speed|random", .metavar = "P",
     .help = "simulate (and --out) a pipeline over every device of --cluster in rank "
             "order, one stage each: equal forward op counts (uniform), forward time "
             "proportional to speed, or random boundaries drawn with --seed (a test aid)"},
    {.name = "tensor", .type = HG_OPT_STR, .group = G_PLAN, .offset = OFF(tensor),
     .choices = "even|speed", .metavar = "T",
     .help = "simulate (and --out) Megatron-style tensor parallelism on a one-node "
             "--cluster: every op in one tensor-parallel group over its devices, equal "
             "shards (even) or shards in proportion to speed; hgtrain --strategy runs it "
             "(docs/planner.md, \"Tensor parallelism\")"},
    {.name = "no-pipelines", .type = HG_OPT_BOOL, .group = G_PLAN, .offset = OFF(no_pipelines),
     .help = "the previous strategy space: no pipeline rows in the plan table, MCMC has "
             "the whole --budget (to compare the two spaces)"},
    {.name = "no-tensor", .type = HG_OPT_BOOL, .group = G_PLAN, .offset = OFF(no_tensor),
     .help = "no tensor-parallel rows (TP-E, TP-S) in the plan table (the space before "
             "them)"},
    {.name = "micro-batches", .type = HG_OPT_I64, .group = G_PLAN, .offset = OFF(micro),
     .def = "0", .min = 0, .metavar = "M",
     .help = "--pipeline: micro-batches (0: 4 per stage)"},
    {.name = "schedule", .type = HG_OPT_STR, .group = G_PLAN, .offset = OFF(schedule),
     .def = "1f1b", .choices = "1f1b|gpipe", .help = "--pipeline: its schedule"},
    {.name = "out", .type = HG_OPT_STR, .group = G_PLAN, .offset = OFF(out),
     .metavar = "FILE", .help = "write the best strategy (docs/planner.md)"},
    {.name = "trace", .type = HG_OPT_STR, .group = G_PLAN, .offset = OFF(trace),
     .metavar = "FILE", .help = "write its simulated timeline (Chrome trace JSON)"},
    {.name = "random-order", .type = HG_OPT_I64, .group = G_PLAN, .offset = OFF(order_seed),
     .def = "-1", .min = -1, .metavar = "SEED",
     .help = "replace the kept strategy's order by a random valid one drawn with SEED "
             "(-1: keep it): a test aid, executors must follow any valid order"},
    /* ------------------------------------------------------ learned policy */
    {.name = "policy", .type = HG_OPT_STR, .group = G_POLICY, .offset = OFF(policy),
     .metavar = "FILE", .help = "the policy file (HDF5) that --search gnn and gnn+mcmc "
                                "place with, or that --train-policy continues from"},
    {.name = "train-policy", .type = HG_OPT_BOOL, .group = G_POLICY,
     .offset = OFF(train_policy),
     .help = "train a placement policy by REINFORCE on every model of --models on every "
             "cluster of --clusters and --perturb perturbed copies of each; write --out"},
    {.name = "models", .type = HG_OPT_STR, .group = G_POLICY, .offset = OFF(models),
     .metavar = "LIST", .help = "--train-policy: models, comma-separated (hgplan "
                                "--list-models)"},
    {.name = "clusters", .type = HG_OPT_STR, .group = G_POLICY, .offset = OFF(clusters),
     .metavar = "LIST", .help = "--train-policy: cluster files, comma-separated"},
    {.name = "perturb", .type = HG_OPT_I64, .group = G_POLICY, .offset = OFF(perturb),
     .def = "2", .max = 64, .metavar = "N",
     .help = "--train-policy: copies of each cluster with device speeds, memories and "
             "bandwidths drawn around its own (seeded by --seed)"},
    {.name = "minutes", .type = HG_OPT_REAL, .group = G_POLICY, .offset = OFF(minutes),
     .def = "10", .flags = HG_OPTF_POSITIVE, .metavar = "M",
     .help = "--train-policy: training time"},
    {.name = "policy-steps", .type = HG_OPT_I64, .group = G_POLICY,
     .offset = OFF(policy_steps), .min = 1, .metavar = "N",
     .help = "--train-policy, --finetune: stop after N updates at most (a deterministic "
             "stop: the same --seed gives the same policy)"},
    {.name = "eval-every", .type = HG_OPT_I64, .group = G_POLICY, .offset = OFF(eval_every),
     .def = "1000", .min = 0, .metavar = "N",
     .help = "--train-policy: every N updates, score the greedy placement of every task "
             "against its best baseline and keep the policy that scored best (0: the last)"},
    {.name = "samples", .type = HG_OPT_I64, .group = G_POLICY, .offset = OFF(samples),
     .def = "8", .min = 1, .max = 1024, .metavar = "S",
     .help = "strategies sampled per update"},
    {.name = "finetune", .type = HG_OPT_REAL, .group = G_POLICY, .offset = OFF(finetune),
     .flags = HG_OPTF_POSITIVE, .metavar = "SECONDS",
     .help = "--search gnn, gnn+mcmc: train --policy on this graph and cluster first"},
    {.name = "place-seconds", .type = HG_OPT_REAL, .group = G_POLICY,
     .offset = OFF(place_seconds), .def = "1", .min = 0, .metavar = "S",
     .help = "--search gnn, gnn+mcmc: after the greedy placement, try each group's more "
             "probable actions in the policy's order, then a steepest descent with pairs, "
             "for S seconds, keeping those the simulator says are faster (0: the greedy "
             "placement alone; after --finetune F: at least F/4, and F*3/4 of training)"},
    {.name = "policy-out", .type = HG_OPT_STR, .group = G_POLICY, .offset = OFF(policy_out),
     .metavar = "FILE", .help = "with --finetune: write the finetuned policy"},
    {.name = "log-json", .type = HG_OPT_STR, .group = G_POLICY, .offset = OFF(log_json),
     .metavar = "FILE",
     .help = "--train-policy: the mean reward every 100 updates as json lines "
             "(scripts/plot-log draws them)"},
    /* ------------------------------------------------------------ profiling */
    {.name = "profile-out", .type = HG_OPT_STR, .group = G_PROFILE,
     .offset = OFF(profile_out), .metavar = "FILE",
     .help = "with --task: measure every op on this CPU at several batch sizes and the "
             "shm links, write FILE (merged into --profile FILE's entries when both are "
             "given)"},
    {.name = "profile-batches", PROFILE_LIST(1), .offset = OFF(lbatch),
     .help = "batch sizes to measure (default B/16,B/8,B/4,B/2,3B/4,B)"},
    {.name = "profile-threads", PROFILE_LIST(1), .offset = OFF(lthreads),
     .help = "thread counts, one profiled device each (cpu-tN; default 1 and this "
             "machine's cores)"},
    {.name = "profile-workers", PROFILE_LIST(2), .offset = OFF(lworkers),
     .help = "also one-thread workers beyond the cores: for each N of L, device "
             "cpu-t1-wN measured by N processes at once sharing the cores (default none)"},
    {.name = "profile-slowdown", PROFILE_LIST(2), .offset = OFF(lslow),
     .help = "also slowed devices: for each thread count N and each F of L, device "
             "cpu-tN-xF measured as hgtrain --rank-slowdown runs a rank slowed F times "
             "(the last of the processes at once; its ops' times, sleeps between them "
             "and all, times F) beside unslowed ones (default none)"},
    {.name = "profile-gpus", PROFILE_LIST(0), .offset = OFF(lgpus),
     .help = "also these CUDA devices: for each N of L, device cuda-N (kind gpu) "
             "measured on GPU N (default none)"},
    {.name = "profile-repeats", .type = HG_OPT_I64, .group = G_PROFILE, .offset = OFF(preps),
     .min = 1, .help = "timed runs per batch, median taken (default 7)"},
    {.name = "profile-warmup", .type = HG_OPT_I64, .group = G_PROFILE,
     .offset = OFF(pwarmup), .help = "untimed runs first (default 2)"},
    {.name = "profile-worlds", PROFILE_LIST(2), .offset = OFF(lworlds), .empty = "none",
     .help = "shm worlds whose AllReduce to time (default 2,3,4; 'none': no link "
             "measurement)"},
    {.name = "profile-sizes", PROFILE_LIST(4), .offset = OFF(lsizes),
     .help = "message bytes (default 4096,65536,1048576,4194304,16777216)"},
    {.name = "profile-links", .type = HG_OPT_STR, .group = G_PROFILE,
     .offset = OFF(profile_links), .choices = "shm|tcp", .metavar = "K",
     .help = "shm: with --task, the shm links of forked workers (the default); tcp: "
             "only the tcp links between this process and the other ranks' hgplan "
             "(--distributed-*), rank 0 writes --profile-out"},
    {.name = "distributed-world-size", .type = HG_OPT_I64, .group = G_PROFILE,
     .offset = OFF(dworld), .min = 2, .max = 64, .metavar = "W",
     .help = "--profile-links tcp: hgplan processes joined (one per node)"},
    {.name = "distributed-rank", .type = HG_OPT_I64, .group = G_PROFILE,
     .offset = OFF(drank), .def = "0", .metavar = "R",
     .help = "--profile-links tcp: this process's rank (0 serves the store and writes "
             "the profile)"},
    {.name = "distributed-init-method", .type = HG_OPT_STR, .group = G_PROFILE,
     .offset = OFF(dinit), .metavar = "tcp://HOST:PORT",
     .help = "--profile-links tcp: the rendezvous store, on rank 0's HOST"},
    {.name = "distributed-token-file", .type = HG_OPT_STR, .group = G_PROFILE,
     .offset = OFF(dtoken), .metavar = "FILE",
     .help = "--profile-links tcp: the job token (0600), else $HG_JOB_TOKEN"},
    {.name = "distributed-timeout", .type = HG_OPT_REAL, .group = G_PROFILE,
     .offset = OFF(dtimeout), .def = "120", .flags = HG_OPTF_POSITIVE, .metavar = "SECONDS",
     .help = "--profile-links tcp: every wait (store, links, parameter server)"},
    /* ---------------------------------------------------------------- other */
    {.name = "help", .short_name = 'h', .type = HG_OPT_BOOL, .group = G_OTHER,
     .offset = OFF(help), .help = "show this help (with --task: the task's options too)"},
    {.name = "version", .type = HG_OPT_BOOL, .group = G_OTHER, .offset = OFF(version),
     .help = "print the version and exit"},
    {.name = "verbose", .type = HG_OPT_BOOL, .group = G_OTHER, .offset = OFF(verbose),
     .help = "the plan table with every device's peak memory, the search's acceptance "
             "and order, and the simulator's speed and task count"},
};

#define NOPTS ((int)(sizeof(options) / sizeof(options[0])))

/* hgplan's program for the parser; task rows (may be NULL) come second. */
static void prog_init(struct hg_opt_prog *p, struct args *a, unsigned char *given,
                      const struct hg_task *task, const struct hg_opt *trows, int ntrows,
                      const char *const *groups)
{
    *p = (struct hg_opt_prog){
        .usage = usage,
        .groups = groups,
        .unknown_note = task ? NULL : "; task options need --task",
        .sets = {{.opts = options, .n = NOPTS, .base = a, .given = given}},
        .nsets = 1,
    };
    if (ntrows > 0)
        p->sets[p->nsets++] =
            (struct hg_opt_set){.opts = trows, .n = ntrows, .base = a->task_vals};
}

static void list_to_array(const struct hg_opt_list *l, int64_t *v, int *n)
{
    *n = l->n;
    for (int k = 0; k < l->n; k++)
        v[k] = (int64_t)l->v[k];
}

/* The task's training graph for samples of up to max_len, as hgtrain
 * builds it (the recipe, tasks/recipe.c), with its optimizer's default
 * hyper-parameters (they do not change the graph's nodes). */
static int build_task(struct hg_graph *g, const struct hg_task *t, const struct args *a,
                      enum hg_optim optim, int64_t max_len, char *err, size_t errlen)
{
    void *state = NULL;
    struct hg_task_args ta = {.values = (const char *const *)a->task_vals};
    if (t->setup && t->setup(&state, a->data, &ta, err, errlen) != 0)
        return -1;
    struct hg_task_graph_opts o = {.batch = a->batch, .max_len = max_len, .train = 1,
                                   .backward = !a->forward_only, .optim = optim};
    if (optim == HG_OPTIM_SGD) {
        o.hyper.sgd.momentum = 0.9f;
    } else if (optim == HG_OPTIM_ADADELTA) {
        o.hyper.adadelta.rho = 0.9f;
        o.hyper.adadelta.eps = 1e-6f;
    } else {
        o.hyper.adam.beta1 = 0.9f;
        o.hyper.adam.beta2 = 0.999f;
        o.hyper.adam.eps = 1e-8f;
    }
    struct hg_task_model m;
    int rc = hg_task_graph(g, t, state, &o, &m, err, errlen);
    if (t->teardown && state)
        t->teardown(state);
    return rc;
}

/* What made --task's graph, for the strategy file (hgtrain --strategy
 * compares it option by option; names: the task's option names); NULL for
 * a --model graph. */
#define HG_MADE_MAXOPTS 256
static const struct hg_graph_made *graph_made(const struct args *a, struct hg_graph_made *m,
                                              const char **names)
{
    const struct hg_task *t = a->task ? hg_task_find(a->task) : NULL;
    if (!t)
        return NULL;
    int n = 0;
    for (; t->options && t->options[n].name && n < HG_MADE_MAXOPTS; n++)
        names[n] = t->options[n].name;
    *m = (struct hg_graph_made){.optimizer = a->optimizer ? a->optimizer
                                                         : HG_TASK_DEFAULT_OPTIMIZER,
                                .nopts = n, .opt_name = names,
                                .opt_val = (const char *const *)a->task_vals};
    return m;
}

static void summary(FILE *o, const struct hg_graph *g, const char *what, int64_t batch)
{
    struct hg_cost f, b, u;
    hg_graph_cost_phase(g, HG_PH_FORWARD, &f);
    hg_graph_cost_phase(g, HG_PH_BACKWARD, &b);
    hg_graph_cost_phase(g, HG_PH_UPDATE, &u);
    double act = 0;
    for (int t = 0; t < hg_graph_n_tensors(g); t++) {
        const struct hg_tensor_info *ti = hg_graph_tensor(g, t);
        if (ti->kind == HG_T_ACT)
            act += (double)hg_shape_numel(&ti->shape) * (double)hg_dtype_size(ti->dtype);
    }
    fprintf(o, "graph %s, batch %lld: %d ops, %d tensors, %lld parameters (%.1f MB)\n", what,
           (long long)batch, hg_graph_n_nodes(g), hg_graph_n_tensors(g),
           (long long)hg_graph_param_count(g), (double)hg_graph_param_count(g) * 4 / 1e6);
    fprintf(o, "  GFLOPs: forward %.2f, backward %.2f, update %.3f (forward per sample %.3f)\n",
           f.flops / 1e9, b.flops / 1e9, u.flops / 1e9, f.flops / 1e9 / (double)batch);
    fprintf(o, "  GB moved: forward %.2f, backward %.2f, update %.3f; activations (no "
           "reuse) %.2f GB\n", f.bytes / 1e9, b.bytes / 1e9, u.bytes / 1e9, act / 1e9);
}

/* Whole-graph compute time on one device of each distinct kind: the
 * profile's fits where the device is profiled and has the op, else the
 * roofline. */
static void roofline(FILE *o, const struct hg_graph *g, const struct hg_cluster *c,
                     int64_t batch)
{
    fprintf(o, "compute time of one iteration on a single device (%s):\n",
            c->prof ? "profile where measured, else roofline" : "roofline");
    for (int i = 0; i < c->ndev; i++) {
        const struct hg_pdevice *d = &c->devices[i];
        int seen = 0;
        for (int j = 0; j < i; j++)
            seen |= strcmp(c->devices[j].model, d->model) == 0 &&
                    c->devices[j].peak_flops == d->peak_flops &&
                    c->devices[j].prof_dev == d->prof_dev &&
                    c->devices[j].time_share == d->time_share;
        if (seen)
            continue;
        double t = 0;
        int nprof = 0, n = hg_graph_n_nodes(g), missing = 0;
        for (int k = 0; k < n; k++) {
            double a, b;
            int r = hg_cost_node(c, i, g, k, batch, &a, &b, NULL);
            missing |= r < 0;
            nprof += r == 1;
            t += a + b;
        }
        if (missing) {
            fprintf(o, "  %-24s no peak_flops and ops the profile lacks: needs a measured "
                    "profile of this graph\n", d->model[0] ? d->model : d->name);
            continue;
        }
        fprintf(o, "  %-24s %9.4f s (from %s", d->model[0] ? d->model : d->name, t, d->name);
        if (c->prof && d->prof_dev >= 0)
            fprintf(o, "; %d of %d ops profiled on %s", nprof, n, d->profile);
        if (d->time_share > 0 && d->time_share < 1)
            fprintf(o, "; time share %.3g", d->time_share);
        fprintf(o, ")\n");
    }
}

/* Places with pol (hg_policy_place for seconds), list-scheduled; the
 * greedy placement where that is faster after scheduling.  Prints the
 * moves' line (prefixed by what).  0, or 1 with a message. */
static int place_once(FILE *o, struct hg_policy *pol, struct hg_policy_task *t,
                      struct hg_sim *sim, const struct hg_pgraph *pg, const struct args *a,
                      double seconds, const char *what, struct hg_strategy **best,
                      struct hg_sim_result *br)
{
    char err[ERRLEN] = "";
    struct hg_policy_place_opts plo = {.seconds = seconds, .want_greedy = seconds > 0};
    struct hg_policy_place_stats pls;
    *best = hg_policy_place(pol, t, &plo, &pls, err, sizeof(err));
    if (!*best) {
        fprintf(stderr, "hgplan: --policy %s: %s\n", a->policy, err);
        return 1;
    }
    hg_sched_best(sim, pg, *best, br, NULL);
    if (pls.greedy_st) {
        /* the moves were kept in the reference's order: list-scheduled, the
         * greedy placement may still be faster */
        struct hg_strategy *gs = pls.greedy_st;
        struct hg_sim_result gr;
        hg_sched_best(sim, pg, gs, &gr, NULL);
        int keep = hg_search_cost(&gr) <= hg_search_cost(br);
        fprintf(o, "%sgreedy %.4f s%s; the policy's moves from the %s: %ld tried, %ld kept "
                "(%ld passes): %.4f s%s: kept the %s\n", what, gr.iter_s,
                gr.oom ? " OOM" : "", pls.from_ref ? "best baseline" : "greedy placement",
                pls.tried, pls.kept, pls.passes, br->iter_s, br->oom ? " OOM" : "",
                keep                           ? "greedy"
                : pls.how == HG_PLACE_PAIRS  ? "steepest descent with pairs"
                : pls.how == HG_PLACE_PAIRS_OTHER
                    ? (pls.from_ref ? "steepest descent with pairs from the greedy placement"
                                    : "steepest descent with pairs from the best baseline")
                                             : "moves");
        if (keep) {
            hg_strategy_free(*best);
            *best = gs;
            *br = gr;
        } else {
            hg_strategy_free(gs);
        }
    }
    return 0;
}

/* The faster of the strategy kept (*best, *br) and cand (cr), printed as
 * "placed T, what T': kept the <cand_name|own_name>"; cand is taken over
 * (kept or freed). */
static void keep_faster(FILE *o, struct hg_strategy **best, struct hg_sim_result *br,
                        struct hg_strategy *cand, const struct hg_sim_result *cr,
                        const char *what, const char *cand_name, const char *own_name)
{
    int better = hg_search_cost(cr) < hg_search_cost(br);
    fprintf(o, "placed %.4f s%s, %s %.4f s%s: kept the %s\n", br->iter_s,
            br->oom ? " OOM" : "", what, cr->iter_s, cr->oom ? " OOM" : "",
            better ? cand_name : own_name);
    if (better) {
        hg_strategy_free(*best);
        *best = cand;
        *br = *cr;
    } else {
        hg_strategy_free(cand);
    }
}

/* --search gnn and gnn+mcmc: the baselines' table, then --policy's
 * placement (after --finetune seconds of training on this graph and
 * cluster), list-scheduled, or the best baseline where that is faster;
 * with gnn+mcmc, MCMC for --budget from that (where MCMC alone starts
 * when the baseline is faster: a policy's placement above the baseline
 * left MCMC short of it).  *best and *br: the strategy kept. */
static int place_gnn(FILE *o, struct hg_sim *sim, const struct hg_pgraph *pg,
                     const struct hg_graph *g, const struct hg_pprice *pr,
                     const struct args *a, struct hg_strategy **best,
                     struct hg_sim_result *br)
{
    char err[ERRLEN] = "";
    struct hg_policy *pol = NULL;
    if (hg_policy_load(&pol, a->policy, err, sizeof(err)) != 0) {
        fprintf(stderr, "hgplan: --policy %s\n", err);
        return 1;
    }
    struct hg_plan_opts po = {.groups = (int)a->groups, .seed = (uint64_t)a->seed,
                              .verbose = a->verbose, .rows_only = 1};
    struct hg_sim_result bl;
    struct hg_strategy *base = hg_plan_run(o, sim, pg, pr, &po, &bl);
    struct hg_policy_task *t = NULL;
    struct hg_strategy *zs = NULL; /* finetuned: the zero-shot placement first */
    struct hg_sim_result zr;
    int rc = 0;
    double t0 = hg_now();
    if (hg_policy_task_new(&t, pol, pg, g, pr, (int)a->groups, err, sizeof(err)) != 0) {
        fprintf(stderr, "hgplan: --policy %s: %s\n", a->policy, err);
        rc = 1;
        goto out;
    }
    if (a->finetune > 0) {
        if (place_once(o, pol, t, sim, pg, a, a->place_seconds, "zero-shot: ", &zs, &zr) != 0) {
            rc = 1;
            goto out;
        }
        struct hg_policy_train_opts to = {.steps = a->policy_steps, .seconds = a->finetune * 3 / 4,
                                          .samples = (int)a->samples, .explore = 1};
        struct hg_policy_train_stats ts;
        if (hg_policy_train(pol, &t, 1, &to, &ts, err, sizeof(err)) != 0) {
            fprintf(stderr, "hgplan: --finetune: %s; nothing written%s%s\n", err,
                    a->policy_out ? ", not --policy-out " : "",
                    a->policy_out ? a->policy_out : "");
            rc = 1;
            goto out;
        }
        fprintf(o, "finetune: %ld updates in %.2f s, mean reward %.4f -> %.4f\n", ts.steps,
                ts.seconds, ts.first_reward, ts.last_reward);
        if (a->policy_out) {
            if (hg_policy_save(pol, a->policy_out, err, sizeof(err)) != 0) {
                fprintf(stderr, "hgplan: --policy-out %s\n", err);
                rc = 1;
                goto out;
            }
            fprintf(o, "wrote %s\n", a->policy_out);
        }
    }
    t0 = hg_now();
    /* a finetune's last quarter: the placement's searches run to their
     * end where they take longer than --place-seconds (transformer24 on
     * heterog-8gpu: 13 s) */
    double place_s = a->place_seconds;
    if (a->finetune > 0 && place_s > 0 && a->finetune / 4 > place_s)
        place_s = a->finetune / 4;
    if (place_once(o, pol, t, sim, pg, a, place_s, "", best, br) != 0) {
        rc = 1;
        goto out;
    }
    if (zs) { /* finetuned: the better of it and the zero-shot placement */
        keep_faster(o, best, br, zs, &zr, "zero-shot before the finetune", "zero-shot",
                    "finetuned");
        zs = NULL;
    }
    const struct hg_strategy *sampled = hg_policy_task_best(t, NULL);
    if (sampled) { /* finetuned: the better of the greedy and the best sample */
        struct hg_strategy *x = hg_strategy_copy(sampled);
        struct hg_sim_result xr;
        hg_sched_best(sim, pg, x, &xr, NULL);
        keep_faster(o, best, br, x, &xr, "best sampled in the finetune", "sample", "placed");
    }
    /* list scheduling can leave the moves' strategy just above the best
     * baseline (resnet101/heterog-12gpu: 0.1880 s against 0.1876 s) */
    const char *from = "gnn";
    if (base && hg_search_cost(&bl) < hg_search_cost(br)) {
        keep_faster(o, best, br, hg_strategy_copy(base), &bl, "the best baseline",
                    "best baseline", "placed");
        from = "the best baseline";
    }
    double ref = bl.oom ? 0 : bl.iter_s;
    struct hg_policy_cfg pc;
    long updates;
    hg_policy_get_cfg(pol, &pc, &updates);
    fprintf(o, "policy %s (%ld updates): placed in %.3f s\n", a->policy, updates,
            hg_now() - t0);
    hg_plan_print_row(o, "gnn", br, pg->c, NULL, NULL, strcmp(a->search, "gnn") == 0,
                      a->verbose);
    if (strcmp(a->search, "gnn+mcmc") == 0) {
        struct hg_strategy *seed = hg_strategy_copy(*best);
        struct hg_sim_result sr = *br;
        struct hg_search_opts so = {.budget_s = a->budget, .max_iters = a->iters,
                                    .stagnation = 20000, .seed = (uint64_t)a->seed,
                                    .after_full = 5,
                                    .beta = a->beta / hg_search_cost(br),
                                    .propose = hg_policy_propose, .propose_ctx = t};
        struct hg_search_stats ss;
        hg_search_mcmc(sim, pg, *best, &so, &ss);
        hg_sched_best(sim, pg, *best, br, NULL);
        if (hg_search_cost(br) > hg_search_cost(&sr)) { /* never worse than its seed */
            hg_strategy_free(*best);
            *best = seed;
            hg_sim_full(sim, *best, br);
        } else {
            hg_strategy_free(seed);
        }
        fprintf(o, "mcmc from %s: %ld proposals (%ld accepted, %ld improvements) in %.2f s, "
                "seed %lld\n", from, ss.iters, ss.accepted, ss.improved, ss.seconds,
                (long long)a->seed);
        hg_plan_print_row(o, "gnn+mcmc", br, pg->c, NULL, NULL, 1, a->verbose);
    }
    if (ref > 0)
        fprintf(o, "chosen: %s, %.1f%% %s than the best baseline (%.4f s)\n", a->search,
                (br->iter_s <= ref ? ref - br->iter_s : br->iter_s - ref) / ref * 100,
                br->iter_s <= ref ? "faster" : "slower", ref);
out:
    hg_strategy_free(zs);
    hg_strategy_free(base);
    hg_policy_task_free(t);
    hg_policy_free(pol);
    return rc;
}

/* Baselines, search, strategy file and trace; memory priced on gm (NULL:
 * on g). */
static int plan_and_report(FILE *o, const struct hg_graph *g, const struct hg_graph *gm,
                           const struct hg_cluster *c, const char *what, const struct args *a)
{
    char err[ERRLEN] = "";
    struct hg_pgraph *pg = NULL;
    struct hg_pprice *pr = NULL;
    if (hg_plan_price(&pg, &pr, g, gm, c, what, a->batch, err, sizeof(err)) != 0) {
        fprintf(stderr, "hgplan: %s\n", err);
        return 1;
    }
    struct hg_sim *sim = hg_sim_new(pg, pr);
    struct hg_strategy *best = NULL;
    struct hg_sim_result br;
    int rc = 0;
    if (a->dp) {
        /* what hgtrain runs: one group of every op, one replica per device,
         * AllReduce, the executor's order (forward, backward, update) */
        best = hg_strategy_new(pg->nops, pg->ndev, 1);
        hg_gcfg_even(&best->cfg[0], c, HG_AGG_AR);
        int n = hg_graph_order(g, HG_PH_ALL, best->order);
        HG_CHECK(n == pg->nops);
        hg_sim_full(sim, best, &br);
        fprintf(o, "data parallel as hgtrain runs it (%d device%s, even split, AllReduce):\n",
                pg->ndev, pg->ndev == 1 ? "" : "s");
        hg_plan_print_head(o, c, 0);
        hg_plan_print_row(o, "dp", &br, c, NULL, NULL, 0, a->verbose);
    } else if (a->tensor) {
        best = hg_tp_baseline(pg, strcmp(a->tensor, "speed") == 0 ? HG_TP_SPEED : HG_TP_EVEN,
                              err, sizeof(err));
        if (!best) {
            fprintf(stderr, "hgplan: --tensor %s: %s\n", a->tensor, err);
            rc = 1;
            goto done;
        }
        hg_sim_full(sim, best, &br);
        fprintf(o, "tensor parallelism (%s shards over %d devices, the plan table's %s "
                "row; hgtrain --strategy runs it):\n", a->tensor, pg->ndev,
                strcmp(a->tensor, "even") == 0 ? "TP-E" : "TP-S");
        hg_plan_print_head(o, c, 0);
        hg_plan_print_row(o, strcmp(a->tensor, "even") == 0 ? "TP-E" : "TP-S", &br, c, NULL,
                          NULL, 0, a->verbose);
    } else if (a->pipeline) {
        enum hg_pipe_cut cut = strcmp(a->pipeline, "speed") == 0    ? HG_PIPE_SPEED
                               : strcmp(a->pipeline, "random") == 0 ? HG_PIPE_RANDOM
                                                                    : HG_PIPE_UNIFORM;
        int M = a->micro > 0 ? (int)a->micro : 4 * pg->ndev;
        best = hg_pipe_baseline(pg, pr, cut, (uint64_t)(a->seed & 0xffffff), M,
                                strcmp(a->schedule, "gpipe") == 0 ? HG_SCHED_GPIPE
                                                                  : HG_SCHED_1F1B,
                                err, sizeof(err));
        if (!best) {
            fprintf(stderr, "hgplan: --pipeline %s: %s\n", a->pipeline, err);
            rc = 1;
            goto done;
        }
        hg_sim_full(sim, best, &br);
        fprintf(o, "pipeline (%s stages, %d micro-batches, %s):\n", a->pipeline, M,
                a->schedule);
        hg_plan_print_head(o, c, 0);
        hg_plan_print_row(o, "pipeline", &br, c, NULL, NULL, 0, a->verbose);
    } else if (a->strategy) {
        if (hg_strategy_load(&best, a->strategy, pg, err, sizeof(err)) != 0) {
            fprintf(stderr, "hgplan: %s\n", err);
            rc = 1;
            goto done;
        }
        hg_sim_full(sim, best, &br);
        fprintf(o, "strategy %s (%d groups):\n", a->strategy, best->ngroups);
        hg_plan_print_head(o, c, 0);
        hg_plan_print_row(o, "file", &br, c, NULL, NULL, 0, a->verbose);
        hg_plan_print_recompute(o, best);
    } else if (strncmp(a->search, "gnn", 3) == 0) {
        rc = place_gnn(o, sim, pg, g, pr, a, &best, &br);
        if (rc != 0)
            goto done;
    } else {
        struct hg_plan_opts po = {.mcmc = strcmp(a->search, "mcmc") == 0,
                                  .groups = (int)a->groups,
                                  .budget_s = a->budget,
                                  .max_iters = a->iters,
                                  .seed = (uint64_t)a->seed,
                                  .beta = a->beta,
                                  .margin = a->margin / 100,
                                  .keep = a->baseline,
                                  .verbose = a->verbose,
                                  .no_pipelines = a->no_pipelines,
                                  .no_tensor = a->no_tensor};
        best = hg_plan_run(o, sim, pg, pr, &po, &br);
    }
    if (a->verbose && a->search && strcmp(a->search, "mcmc") == 0) {
        /* the simulator's speed: full simulations vs delta simulations of
         * random one-group changes (applied and reverted); up to 20 and 200
         * of them, within half a second each (a large cluster's simulation
         * takes a tenth of a second: the budget is the search's) */
        struct hg_strategy *t = hg_strategy_copy(best);
        struct hg_sim_result x;
        int nf = 0, ndl = 0;
        t->nmicro = 0; /* a random change may break a pipeline: its groups without one */
        double t0 = hg_now();
        while (nf < 20 && (nf < 2 || hg_now() - t0 < 0.5)) {
            hg_sim_full(sim, t, &x);
            nf++;
        }
        double tf = (hg_now() - t0) / nf;
        uint64_t rng = 12345;
        t0 = hg_now();
        for (int i = 0; i < 200 && (i < 2 || hg_now() - t0 < 0.5); i++, ndl++) {
            int k;
            struct hg_gcfg nc, old;
            hg_propose_random(NULL, pg, t, &rng, &k, &nc);
            old = t->cfg[k];
            t->cfg[k] = nc;
            hg_sim_delta(sim, t, k, &x);
            t->cfg[k] = old;
            hg_sim_delta(sim, t, k, &x);
        }
        double td = (hg_now() - t0) / (2 * ndl);
        fprintf(o, "simulator: %ld tasks; full %.3f ms (%.3g tasks/s), delta %.3f ms: "
                "delta speedup %.2fx\n", x.ntasks, tf * 1e3, (double)x.ntasks / tf, td * 1e3,
                tf / td);
        hg_strategy_free(t);
    }
    if (a->order_seed >= 0) {
        hg_strategy_random_order(best, pg, (uint64_t)a->order_seed);
        fprintf(o, "order: random, seed %lld\n", (long long)a->order_seed);
    }
    hg_sim_full(sim, best, &br);
    if (a->verbose)
        fprintf(o, "tasks of the strategy kept: %ld\n", br.ntasks);
    if (a->out) {
        FILE *f = fopen(a->out, "w");
        struct hg_graph_made made;
        const char *names[HG_MADE_MAXOPTS];
        if (!f || hg_strategy_save(best, pg, c->file, &br, graph_made(a, &made, names), f) != 0 ||
            fclose(f) != 0) {
            fprintf(stderr, "hgplan: --out %s: write failed\n", a->out);
            rc = 1;
        } else {
            fprintf(o, "wrote %s\n", a->out);
        }
    }
    if (a->trace) {
        FILE *f = fopen(a->trace, "w");
        if (!f || hg_sim_trace(sim, f) != 0 || fclose(f) != 0) {
            fprintf(stderr, "hgplan: --trace %s: write failed\n", a->trace);
            rc = 1;
        } else {
            fprintf(o, "wrote %s\n", a->trace);
        }
    }
done:
    hg_strategy_free(best);
    hg_sim_free(sim);
    hg_pprice_free(pr);
    hg_pgraph_free(pg);
    return rc;
}

/* The CPU's model name (/proc/cpuinfo), or "cpu". */
static void cpu_model(char *buf, size_t n)
{
    snprintf(buf, n, "cpu");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof(line), f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) != 0 || !colon)
            continue;
        colon++;
        while (*colon == ' ' || *colon == '\t')
            colon++;
        colon[strcspn(colon, "\n")] = 0;
        snprintf(buf, n, "%s", colon);
        break;
    }
    fclose(f);
}

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

/* What the processes measuring one device at once share (an anonymous
 * mapping): how many are done, a barrier after every run, and each one's
 * run totals. */
struct shared {
    atomic_int done, arrived, gen, failed;
    double totals[]; /* [procs][nbatches][reps] */
};

struct hold {
    struct shared *sh;
    int procs, counted;
};

static int hold_busy(void *ctx)
{
    struct hold *h = ctx;
    if (!h->counted) {
        atomic_fetch_add(&h->sh->done, 1);
        h->counted = 1;
    }
    return atomic_load(&h->sh->done) < h->procs;
}

/* The barrier after every run: a data-parallel step's ranks wait for each
 * other, so the measuring processes do too (who runs when on shared cores
 * follows from it).  Sleeps rather than spins: the others need the cores. */
static int sync_runs(void *ctx, char *err, size_t errlen)
{
    struct hold *h = ctx;
    struct shared *sh = h->sh;
    int g = atomic_load(&sh->gen);
    if (atomic_fetch_add(&sh->arrived, 1) == h->procs - 1) {
        atomic_store(&sh->arrived, 0);
        atomic_store(&sh->gen, g + 1);
        return 0;
    }
    for (long it = 0; atomic_load(&sh->gen) == g; it++) {
        if (atomic_load(&sh->failed))
            return hg_kerr(err, errlen, "another measuring process failed");
        if (it > 600000) /* 100 us each: a minute */
            return hg_kerr(err, errlen, "the other measuring processes did not arrive "
                           "within 60 s");
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

/* Device `name` of p from the measuring processes lo..hi-1 (part[i]:
 * process i's profile, sh->totals its runs' sums).  Per op and batch, the
 * mean over the processes of their medians; then per batch one factor for
 * all ops, so that the device's ops add up to the median over the runs of
 * the slowest process's run: a step of synchronized ranks lasts as long as
 * its slowest, and the ops' own medians drop the times an op was preempted
 * (with more workers than cores, most of the sharing). */
static int fit_device(FILE *o, struct hg_profile *p, struct hg_profile *const *part, int lo,
                      int hi, const struct shared *sh, const struct hg_prof_opts *po,
                      const char *name, const char *model, int threads, int procs, double share)
{
    char err[ERRLEN] = "";
    int nb = po->nbatches, R = po->reps, rc = 0;
    int nops = part[lo]->nops, used = hi - lo;
    double *tm = calloc((size_t)nops * HG_PROF_MAXPTS + 1, sizeof(double)); /* [nops][MAXPTS] */
    double scale[HG_PROF_MAXPTS], sum[HG_PROF_MAXPTS] = {0};
    HG_CHECK(tm != NULL);
    for (int k = 0; rc == 0 && k < nops; k++) {
        const struct hg_prof_op *e = &part[lo]->ops[k];
        for (int i = lo; i < hi && rc == 0; i++) {
            const struct hg_prof_op *f = hg_prof_find_op(part[i], 0, e->op, e->sig);
            if (!f || f->npts != nb || e->npts != nb) {
                fprintf(stderr, "hgplan: --profile-out: %s: process %d lacks %s %s\n", name, i,
                        hg_op_table[e->op].name, e->sig);
                rc = 1;
                break;
            }
            for (int j = 0; j < nb; j++)
                tm[(size_t)k * HG_PROF_MAXPTS + j] += f->t[j] / used;
        }
        for (int j = 0; j < nb; j++)
            sum[j] += e->nodes * tm[(size_t)k * HG_PROF_MAXPTS + j];
    }
    double *slowest = malloc((size_t)R * sizeof(double)); /* [R] */
    HG_CHECK(slowest != NULL);
    for (int j = 0; j < nb; j++) {
        for (int r = 0; r < R; r++) {
            slowest[r] = 0;
            for (int i = lo; i < hi; i++) {
                double t = sh->totals[((size_t)i * nb + j) * R + r];
                slowest[r] = t > slowest[r] ? t : slowest[r];
            }
        }
        double mx = hg_prof_median(slowest, R);
        scale[j] = sum[j] > 0 && mx > 0 ? mx / sum[j] : 1;
    }
    free(slowest);
    int dev = rc == 0 ? hg_prof_device(p, name, HG_DEV_CPU, model, threads, procs) : -1;
    if (dev >= 0)
        p->devs[dev].share = share;
    for (int k = 0; rc == 0 && k < nops; k++) {
        const struct hg_prof_op *e = &part[lo]->ops[k];
        double t[HG_PROF_MAXPTS];
        for (int j = 0; j < nb; j++)
            t[j] = tm[(size_t)k * HG_PROF_MAXPTS + j] * scale[j];
        if (hg_prof_set_op(p, dev, e->op, e->sig, e->nodes, nb, e->x, t, err,
                           sizeof(err)) != 0) {
            fprintf(stderr, "hgplan: --profile-out: %s\n", err);
            rc = 1;
        }
    }
    free(tm);
    if (rc == 0) {
        fprintf(o, "  %s: ", name);
        if (share < 1)
            fprintf(o, "process %d of %d (slowed %.3gx, the others not), ", lo, procs,
                    1 / share);
        if (used > 1)
            fprintf(o, "the %d processes' mean medians, ", used);
        fprintf(o, "scaled to the median%s run by", used > 1 ? " slowest process's" : "");
        for (int j = 0; j < nb; j++)
            fprintf(o, " %.3f", scale[j]);
        fprintf(o, " at batch");
        for (int j = 0; j < nb; j++)
            fprintf(o, "%s%lld", j ? "," : " ", (long long)po->batches[j]);
        fprintf(o, "\n");
    }
    return rc;
}

/* Measures g's ops as profiled device `name` (threads each) in `procs`
 * forked processes at once, so that every core is as busy as under
 * hgtrain's workers; each writes its profile to a temporary file, the
 * parent averages their times per point and refits into p.  Forking keeps
 * OpenMP and BLAS threads out of hgplan itself. */
static int measure_device(FILE *o, struct hg_profile *p, struct hg_graph *g, const char *name,
                          const char *model, int threads, int procs,
                          const struct hg_prof_opts *po, int slow)
{
    /* slowed: the last process runs slowed (po->slowdown), the device is
     * its times alone; the others keep their cores busy unslowed */
    const int first = slow > 1 ? procs - 1 : 0;
    /* a GPU is measured by one child too: CUDA starts there, after the
     * fork (a parent that started it could not fork a user of it) */
    char err[ERRLEN] = "", path[64][64];
    int nb = po->nbatches, R = po->reps;
    size_t shsize = sizeof(struct shared) + (size_t)procs * nb * R * sizeof(double);
    struct shared *sh = mmap(NULL, shsize, PROT_READ | PROT_WRITE,
                             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        fprintf(stderr, "hgplan: --profile-out: mmap: %s\n", strerror(errno));
        return 1;
    }
    memset(sh, 0, shsize);
    pid_t pid[64];
    int started = 0, rc = 0;
    for (int i = 0; i < procs && rc == 0; i++) {
        snprintf(path[i], sizeof(path[i]), "/tmp/hgplan-prof-XXXXXX");
        int fd = mkstemp(path[i]);
        if (fd < 0) {
            fprintf(stderr, "hgplan: --profile-out: mkstemp: %s\n", strerror(errno));
            rc = 1;
            break;
        }
        close(fd);
        fflush(NULL);
        pid[i] = fork();
        if (pid[i] < 0) {
            fprintf(stderr, "hgplan: --profile-out: fork: %s\n", strerror(errno));
            unlink(path[i]);
            rc = 1;
            break;
        }
        if (pid[i] == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive hgplan */
            struct hg_profile *cp = hg_prof_new();
            char gname[160] = "";
#ifdef HG_HAVE_CUDA
            if (po->on_gpu && hg_cuda_device_name(po->gpu, gname, sizeof gname) != 0)
                gname[0] = 0;
#endif
            int dev = hg_prof_device(cp, name, po->on_gpu ? HG_DEV_GPU : HG_DEV_CPU,
                                     gname[0] ? gname : model, threads, procs);
            struct hold h = {.sh = sh, .procs = procs};
            struct hg_prof_opts co = *po;
            co.log = po->log;
            co.slowdown = slow > 1 && i == procs - 1 ? slow : 0;
            if (procs > 1) { /* each process's sums, under its own name */
                snprintf(cp->devs[dev].name, sizeof(cp->devs[dev].name), "%s#%d", name, i);
                co.sync = sync_runs;
                co.sync_ctx = &h;
            }
            co.totals = sh->totals + (size_t)i * nb * R;
            co.hold = hold_busy;
            co.hold_ctx = &h;
            int x = hg_prof_measure_graph(cp, dev, g, &co, err, sizeof(err));
            if (x != 0) {
                atomic_store(&sh->failed, 1);
                hold_busy(&h); /* the others need not wait for us */
                fprintf(stderr, "hgplan: --profile-out: %s: %s\n", name, err);
            }
            FILE *f = x == 0 ? fopen(path[i], "w") : NULL;
            if (x == 0 && (!f || hg_prof_save(cp, f) != 0 || fclose(f) != 0)) {
                fprintf(stderr, "hgplan: --profile-out: %s: write failed\n", path[i]);
                x = 1;
            }
            hg_prof_free(cp);
            fflush(NULL);
            _exit(x ? 1 : 0);
        }
        started++;
    }
    for (int i = 0; i < started; i++) {
        int st = 0;
        if (rc != 0)
            kill(pid[i], SIGKILL);
        while (waitpid(pid[i], &st, 0) < 0 && errno == EINTR)
            ;
        if (rc == 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
            fprintf(stderr, "hgplan: --profile-out: %s: measuring process %d %s\n", name, i,
                    WIFSIGNALED(st) ? "was killed" : "failed");
            rc = 1;
        }
    }
    /* the mean over the processes of each point, refitted */
    struct hg_profile *part[64] = {0};
    for (int i = 0; i < started && rc == 0; i++)
        if (hg_prof_load(&part[i], path[i], err, sizeof(err)) != 0) {
            fprintf(stderr, "hgplan: --profile-out: %s\n", err);
            rc = 1;
        }
    if (rc == 0)
        rc = fit_device(o, p, part, first, started, sh, po, name, model, threads, procs,
                        slow > 1 ? 1.0 / slow : 1);
    for (int i = 0; i < started; i++) {
        hg_prof_free(part[i]);
        unlink(path[i]);
    }
    munmap(sh, shsize);
    return rc;
}

static int write_profile(FILE *o, struct hg_profile *p, const char *path, int argc,
                         char **argv);

/* --profile-out: the shm links first (they fork: no thread may exist yet),
 * then every op of the task's graph at each batch, once per thread count;
 * the profile is written to a.profile_out. */
static int profile(FILE *o, struct hg_profile *p, const struct hg_task *task,
                   const struct args *a, enum hg_optim optim, int argc, char **argv)
{
    char err[ERRLEN] = "";
    int64_t batches[MAXLIST], threads[MAXLIST], worlds[MAXLIST], sizes[MAXLIST];
    int nb = a->npbatch, nt = a->npthreads, nw = a->npworlds, ns = a->npsizes;
    memcpy(batches, a->pbatch, sizeof(batches));
    memcpy(threads, a->pthreads, sizeof(threads));
    memcpy(worlds, a->pworlds, sizeof(worlds));
    memcpy(sizes, a->psizes, sizeof(sizes));
    if (!nb) { /* a sixteenth, an eighth (a pipeline's micro-batches), a
                * quarter, a half, three quarters and all of --batch */
        int64_t cand[] = {a->batch / 16, a->batch / 8, a->batch / 4, a->batch / 2,
                          a->batch * 3 / 4, a->batch};
        for (size_t k = 0; k < sizeof cand / sizeof cand[0]; k++)
            if (cand[k] >= 1 && (nb == 0 || batches[nb - 1] != cand[k]))
                batches[nb++] = cand[k];
    }
    qsort(batches, (size_t)nb, sizeof(int64_t), cmp_i64);
    if (!nt) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        threads[nt++] = 1;
        if (cores > 1)
            threads[nt++] = cores;
    }
    if (nw < 0) {
        nw = 0;
        for (int w = 2; w <= 4; w++)
            worlds[nw++] = w;
    }
    if (!ns) {
        static const int64_t def[] = {4096, 65536, 1048576, 4194304, 16777216};
        for (size_t k = 0; k < sizeof(def) / sizeof(def[0]); k++)
            sizes[ns++] = def[k];
    }
    int reps = a->preps ? (int)a->preps : 7, warm = a->pwarmup ? (int)a->pwarmup : 2;
    if (nw > 0) {
        int w32[MAXLIST];
        for (int k = 0; k < nw; k++)
            w32[k] = (int)worlds[k];
        struct hg_prof_link_opts lo = {.worlds = w32, .nworlds = nw, .sizes = sizes,
                                       .nsizes = ns, .reps = 4 * reps, .warmup = 2 * warm + 1,
                                       .busy_us = 2000, .timeout_s = 60, .log = o};
        fprintf(o, "profiling the shm links (worlds");
        for (int k = 0; k < nw; k++)
            fprintf(o, "%s%d", k ? "," : " ", w32[k]);
        fprintf(o, "; %d sizes, mean of %d calls after %.0f ms of arithmetic each):\n", ns,
                lo.reps, lo.busy_us / 1e3);
        if (hg_prof_measure_links(p, &lo, err, sizeof(err)) != 0) {
            fprintf(stderr, "hgplan: --profile-out: %s\n", err);
            return 1;
        }
    }
    /* the graph as the main one, planned for the largest profiled batch */
    struct args pa = *a;
    pa.batch = batches[nb - 1];
    struct hg_graph *g = hg_graph_new();
    if (build_task(g, task, &pa, optim, pa.seq, err, sizeof(err)) != 0) {
        fprintf(stderr, "hgplan: --task %s: %s\n", a->task, err);
        hg_graph_free(g);
        return 1;
    }
    char model[96], full[128];
    cpu_model(model, sizeof(model));
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int rc = 0;
    int ns_ = nt + a->npworkers, nslow = a->npslow;
    for (int k = 0; k < ns_ + nt * nslow && rc == 0; k++) {
        char name[48];
        /* k >= ns_: thread count (k - ns_) / nslow slowed by factor (k - ns_) % nslow */
        int slow = k >= ns_ ? (int)a->pslow[(k - ns_) % nslow] : 0;
        /* as many processes as hgtrain would run workers of this many
         * threads: every core busy; --profile-workers: that many
         * one-thread workers, more than the cores */
        int shared = k >= nt && !slow;
        int64_t th = slow ? threads[(k - ns_) / nslow] : shared ? 1 : threads[k];
        int procs = shared ? (int)a->pworkers[k - nt] : cores / th > 1 ? (int)(cores / th) : 1;
        procs = procs > 64 ? 64 : procs;
        char how[32] = "";
        if (shared)
            snprintf(name, sizeof(name), "cpu-t1-w%d", procs);
        else if (slow)
            snprintf(name, sizeof(name), "cpu-t%lld-x%d", (long long)th, slow);
        else
            snprintf(name, sizeof(name), "cpu-t%lld", (long long)th);
        if (shared)
            snprintf(how, sizeof(how), ", cores shared");
        else if (slow)
            snprintf(how, sizeof(how), ", slowed %dx", slow);
        snprintf(full, sizeof(full), "%s, %lld thread%s%s", model, (long long)th,
                 th == 1 ? "" : "s", how);
        fprintf(o, "profiling %s: %d ops of %s at batch", name, hg_graph_n_nodes(g), a->task);
        for (int i = 0; i < nb; i++)
            fprintf(o, "%s%lld", i ? "," : " ", (long long)batches[i]);
        fprintf(o, ", median of %d runs after %d, %d process%s at once:\n", reps, warm, procs,
                procs == 1 ? "" : "es");
        struct hg_prof_opts po = {.batches = batches, .nbatches = nb, .reps = reps,
                                  .warmup = warm, .log = o};
        rc = measure_device(o, p, g, name, full, (int)th, procs, &po, slow);
    }
    for (int k = 0; k < a->npgpus && rc == 0; k++) {
        char name[32], full[64];
        snprintf(name, sizeof(name), "cuda-%lld", (long long)a->pgpus[k]);
        snprintf(full, sizeof(full), "GPU cuda:%lld", (long long)a->pgpus[k]);
        fprintf(o, "profiling %s: %d ops of %s at batch", name, hg_graph_n_nodes(g), a->task);
        for (int i = 0; i < nb; i++)
            fprintf(o, "%s%lld", i ? "," : " ", (long long)batches[i]);
        fprintf(o, ", median of %d runs after %d:\n", reps, warm);
#ifdef HG_HAVE_CUDA
        struct hg_prof_opts po = {.batches = batches, .nbatches = nb, .reps = reps,
                                  .warmup = warm, .log = o, .on_gpu = 1,
                                  .gpu = (int)a->pgpus[k]};
        rc = measure_device(o, p, g, name, full, 1, 1, &po, 0);
#else
        fprintf(stderr, "hgplan: --profile-gpus: this hgplan was built without CUDA "
                "(configure --with-cuda)\n");
        rc = 1;
#endif
    }
    hg_graph_free(g);
    if (rc != 0)
        return rc;
    return write_profile(o, p, a->profile_out, argc, argv);
}

/* Host, date and command into p, then p into path. */
static int write_profile(FILE *o, struct hg_profile *p, const char *path, int argc, char **argv)
{
    if (gethostname(p->host, sizeof(p->host)) != 0)
        p->host[0] = 0;
    p->host[sizeof(p->host) - 1] = 0;
    time_t now = time(NULL);
    struct tm tm;
    strftime(p->date, sizeof(p->date), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    size_t len = 0;
    for (int i = 0; i < argc && len < sizeof(p->source); i++)
        len += (size_t)snprintf(p->source + len, sizeof(p->source) - len, "%s%s", i ? " " : "",
                                argv[i]);
    FILE *f = fopen(path, "w");
    if (!f || hg_prof_save(p, f) != 0 || fclose(f) != 0) {
        fprintf(stderr, "hgplan: --profile-out %s: write failed: %s\n", path, strerror(errno));
        return 1;
    }
    fprintf(o, "wrote %s (%d devices, %d op entries, %d link entries)\n", path, p->ndevs,
            p->nops, p->nlinks);
    return 0;
}

/* --profile-links tcp: this process is one rank of --distributed-world-size
 * hgplan processes; the tcp links between them are measured and rank 0
 * writes them (merged into --profile's entries) to --profile-out. */
static int profile_tcp(FILE *o, const struct args *a, struct hg_opt_prog *prog, int argc,
                       char **argv)
{
    char err[ERRLEN] = "";
    static const char *const refused[] = {"model", "task", "cluster", "export-graph",
                                          "search", "strategy", "dp", "out", "trace",
                                          "list-models", "profile-batches", "profile-threads",
                                          "profile-workers", "profile-worlds", NULL};
    for (int i = 0; refused[i]; i++)
        if (hg_opt_given(prog, refused[i]) == 1) {
            fprintf(stderr, "hgplan: --profile-links tcp measures the links only: no --%s "
                    "(measure the ops with --task ... --profile-out and merge the two with "
                    "--profile)\n", refused[i]);
            return 2;
        }
    if (!a->profile_out || !a->dworld || !a->dinit) {
        fprintf(stderr, "hgplan: --profile-links tcp needs --profile-out, "
                "--distributed-world-size and --distributed-init-method tcp://HOST:PORT\n");
        return 2;
    }
    if (a->drank >= a->dworld) {
        fprintf(stderr, "hgplan: --distributed-rank %lld: outside a world of %lld\n",
                (long long)a->drank, (long long)a->dworld);
        return 2;
    }
    char host[256];
    const char *hp = strncmp(a->dinit, "tcp://", 6) == 0 ? a->dinit + 6 : NULL;
    const char *colon = hp ? strrchr(hp, ':') : NULL;
    char *end = NULL;
    long port = colon ? strtol(colon + 1, &end, 10) : -1;
    if (!colon || colon == hp || *end || port < 1 || port > 65535 ||
        (size_t)(colon - hp) >= sizeof(host)) {
        fprintf(stderr, "hgplan: --distributed-init-method %s: want tcp://HOST:PORT\n",
                a->dinit);
        return 2;
    }
    memcpy(host, hp, (size_t)(colon - hp));
    host[colon - hp] = 0;
    const char *env = getenv("HG_JOB_TOKEN");
    if ((!env || !*env) && !a->dtoken) {
        fprintf(stderr, "hgplan: --profile-links tcp: the ranks are separate processes and "
                "need one job token: export HG_JOB_TOKEN (32 hex digits) or give "
                "--distributed-token-file (mode 0600)\n");
        return 2;
    }
    char token[HG_STORE_TOKEN_LEN + 1];
    if (hg_store_token_load(token, a->dtoken, err, sizeof(err)) != 0) {
        fprintf(stderr, "hgplan: rank %lld: %s\n", (long long)a->drank, err);
        return 1;
    }
    int rank = (int)a->drank;
    struct hg_profile *p = NULL;
    if (rank == 0 && a->profile && hg_prof_load(&p, a->profile, err, sizeof(err)) != 0) {
        fprintf(stderr, "hgplan: --profile %s\n", err);
        return 1;
    }
    if (!p)
        p = hg_prof_new();
    int64_t sizes[MAXLIST];
    int ns = a->npsizes;
    memcpy(sizes, a->psizes, sizeof(sizes));
    if (!ns) {
        static const int64_t def[] = {4096, 65536, 1048576, 4194304, 16777216};
        for (size_t k = 0; k < sizeof(def) / sizeof(def[0]); k++)
            sizes[ns++] = def[k];
    }
    struct hg_prof_tcp_opts to = {.rank = rank, .world = (int)a->dworld, .host = host,
                                  .port = (int)port, .token = token, .sizes = sizes,
                                  .nsizes = ns, .reps = a->preps ? (int)a->preps : 7,
                                  .warmup = a->pwarmup ? (int)a->pwarmup : 2,
                                  .timeout_s = a->dtimeout, .log = o};
    fprintf(o, "profiling the tcp links: rank %d of %d, store at %s:%ld; %d sizes, %d calls "
            "after %d of each (AllReduce, ping-pong, PS step):\n", rank, to.world, host, port,
            ns, to.reps, to.warmup);
    int rc = 0;
    if (hg_prof_measure_tcp(p, &to, err, sizeof(err)) != 0) {
        fprintf(stderr, "hgplan: rank %d: --profile-links tcp: %s\n", rank, err);
        rc = 1;
    } else if (rank == 0) {
        rc = write_profile(o, p, a->profile_out, argc, argv);
    } else {
        fprintf(o, "rank %d: done (rank 0 writes the profile)\n", rank);
    }
    hg_prof_free(p);
    return rc;
}

/* Splits a comma-separated list in place: its words (at most max) in w. */
static int split_list(char *s, char **w, int max)
{
    int n = 0;
    for (char *tok = strtok(s, ","); tok && n < max; tok = strtok(NULL, ","))
        if (*tok)
            w[n++] = tok;
    return n;
}

#define MAXTRAIN 64 /* models, clusters */

/* --train-policy: every model of --models on every cluster of --clusters
 * and --perturb perturbed copies of each, trained for --minutes (or
 * --policy-steps updates), from --policy's weights when given; the
 * greedy placement of each against its best baseline; --out. */
static int train_policy(FILE *o, const struct args *a)
{
    char err[ERRLEN] = "";
    char *ml = strdup(a->models), *cl = strdup(a->clusters);
    HG_CHECK(ml && cl);
    char *mw[MAXTRAIN], *cw[MAXTRAIN];
    int nm = split_list(ml, mw, MAXTRAIN), ncf = split_list(cl, cw, MAXTRAIN), rc = 0;
    int per = 1 + (int)a->perturb;
    struct hg_cluster **cls = calloc((size_t)ncf * per, sizeof(*cls));   /* [ncf * per] */
    struct hg_graph **gs = calloc((size_t)nm, sizeof(*gs));              /* [nm] */
    int64_t *batch = calloc((size_t)nm, sizeof(int64_t));                /* [nm] */
    int nt = nm * ncf * per;
    struct hg_pgraph **pgs = calloc((size_t)nt, sizeof(*pgs));           /* [nt] */
    struct hg_pprice **prs = calloc((size_t)nt, sizeof(*prs));           /* [nt] */
    struct hg_policy_task **ts = calloc((size_t)nt, sizeof(*ts));        /* [nt] */
    HG_CHECK(cls && gs && batch && pgs && prs && ts);
    struct hg_policy *pol = NULL;
    if (nm == 0 || ncf == 0) {
        fprintf(stderr, "hgplan: --train-policy: --models and --clusters name nothing\n");
        rc = 2;
        goto out;
    }
    for (int i = 0; i < ncf && rc == 0; i++) {
        if (hg_cluster_load(&cls[i * per], cw[i], err, sizeof(err)) != 0) {
            fprintf(stderr, "hgplan: --clusters: %s\n", err);
            rc = 1;
            break;
        }
        for (int k = 1; k < per; k++)
            cls[i * per + k] =
                hg_policy_perturb(cls[i * per], (uint64_t)a->seed * 1000003u + (uint64_t)(i * per + k));
    }
    for (int m = 0; m < nm && rc == 0; m++) {
        const struct hg_model_spec *spec = hg_model_spec_find(mw[m]);
        gs[m] = hg_graph_new();
        if (!spec) {
            hg_model_build(gs[m], mw[m], NULL, err, sizeof(err)); /* names the choices */
            fprintf(stderr, "hgplan: --models: %s\n", err);
            rc = 2;
            break;
        }
        struct hg_model_opts mo = {.batch = a->batch, .seq = a->seq, .train = 1,
                                   .optim = spec->default_seq == 0 ? HG_OPTIM_SGD
                                                                   : HG_OPTIM_ADAM};
        batch[m] = a->batch ? a->batch : spec->default_batch;
        if (hg_model_build(gs[m], mw[m], &mo, err, sizeof(err)) < 0) {
            fprintf(stderr, "hgplan: --models: %s\n", err);
            rc = 1;
        }
    }
    if (rc == 0) {
        if (a->policy) {
            if (hg_policy_load(&pol, a->policy, err, sizeof(err)) != 0) {
                fprintf(stderr, "hgplan: --policy %s\n", err);
                rc = 1;
                goto out;
            }
        } else {
            pol = hg_policy_new(&(struct hg_policy_cfg){.seed = (uint64_t)a->seed});
        }
    }
    double t0 = hg_now();
    for (int m = 0; m < nm && rc == 0; m++)
        for (int c = 0; c < ncf * per && rc == 0; c++) {
            int i = m * ncf * per + c;
            if (hg_pgraph_build(&pgs[i], gs[m], cls[c], mw[m], batch[m], err, sizeof(err)) ||
                hg_pprice_build(&prs[i], pgs[i], gs[m], err, sizeof(err)) ||
                hg_policy_task_new(&ts[i], pol, pgs[i], gs[m], prs[i], (int)a->groups, err,
                                   sizeof(err))) {
                fprintf(stderr, "hgplan: --train-policy: %s on %s: %s\n", mw[m],
                        cls[c]->name, err);
                rc = 1;
            }
        }
    if (rc != 0)
        goto out;
    fprintf(o, "policy: %d models x %d clusters (%d perturbed copies each): %d tasks, set up "
            "in %.1f s; training for %g min%s\n", nm, ncf, per - 1, nt, hg_now() - t0,
            a->minutes, a->policy_steps ? " or --policy-steps updates" : "");
    struct hg_policy_train_opts to = {.steps = a->policy_steps, .seconds = a->minutes * 60,
                                      .samples = (int)a->samples, .log = o, .log_every = 100,
                                      .eval_every = a->eval_every};
    if (a->log_json && !(to.json = fopen(a->log_json, "w"))) {
        fprintf(stderr, "hgplan: --log-json %s: %s\n", a->log_json, strerror(errno));
        rc = 1;
        goto out;
    }
    struct hg_policy_train_stats st;
    rc = hg_policy_train(pol, ts, nt, &to, &st, err, sizeof(err)) != 0;
    if (to.json && (ferror(to.json) | fclose(to.json)) && rc == 0) {
        fprintf(stderr, "hgplan: --log-json %s: write failed\n", a->log_json);
        rc = 1;
        goto out;
    }
    if (rc != 0) {
        fprintf(stderr, "hgplan: --train-policy: %s; --out %s not written\n", err, a->out);
        goto out;
    }
    fprintf(o, "trained: %ld updates in %.1f s, mean reward %.4f (first tenth) -> %.4f (last "
            "tenth)\n", st.steps, st.seconds, st.first_reward, st.last_reward);
    if (a->eval_every > 0)
        fprintf(o, "kept: the policy of update %ld, its greedy placement x%.4f of the best "
                "baseline (geometric mean of the faster of the two), faster on %d of %d "
                "tasks (the last update's: x%.4f)\n", st.best_update, st.best_score,
                st.best_better, nt, st.last_score);
    fprintf(o, "greedy placement against the best baseline (in its schedule's order):\n");
    for (int i = 0; i < nt && rc == 0; i++) {
        struct hg_sim_result r;
        struct hg_strategy *s = hg_policy_decode(pol, ts[i], &r, err, sizeof(err));
        if (!s) {
            fprintf(stderr, "hgplan: --train-policy: %s\n", err);
            rc = 1;
            break;
        }
        double ref = hg_policy_task_ref(ts[i]);
        fprintf(o, "  %-14s %-28s %9.4f s  baseline %9.4f s  %+7.1f%%%s\n", pgs[i]->model,
                pgs[i]->c->name, r.iter_s, ref, (r.iter_s - ref) / ref * 100,
                r.oom ? "  OOM" : "");
        hg_strategy_free(s);
    }
    if (rc == 0 && hg_policy_save(pol, a->out, err, sizeof(err)) != 0) {
        fprintf(stderr, "hgplan: --out %s\n", err);
        rc = 1;
    } else if (rc == 0) {
        fprintf(o, "wrote %s\n", a->out);
    }
out:
    for (int i = 0; i < nt; i++) {
        hg_policy_task_free(ts[i]);
        hg_pprice_free(prs[i]);
        hg_pgraph_free(pgs[i]);
    }
    for (int m = 0; m < nm; m++)
        hg_graph_free(gs[m]);
    for (int i = 0; i < ncf * per; i++)
        hg_cluster_free(cls[i]);
    hg_policy_free(pol);
    free(ts);
    free(prs);
    free(pgs);
    free(batch);
    free(gs);
    free(cls);
    free(ml);
    free(cl);
    return rc;
}

/* The command line: hgplan's options, the task's (--task), and what the
 * parser keeps pointers to while it lives. */
struct cmdline {
    struct hg_opt_prog p;
    struct args a;
    const struct hg_task *task; /* --task's, NULL without one */
    struct hg_opt *trows;       /* [ntopt] the task's option rows */
    unsigned char given[NOPTS];
    char title[160];
    const char *groups[7];
};

/* Step 1: the command line into cl.  -1: go on; else the exit code
 * (--help, --version, an error: printed). */
static int parse_cmdline(struct cmdline *cl, int argc, char **argv)
{
    char err[ERRLEN] = "";
    struct args *a = &cl->a;
    struct hg_opt_prog *p = &cl->p;
    /* find --task first: its options are valid on the command line */
    prog_init(p, a, NULL, NULL, NULL, 0, NULL);
    char *tname = hg_opt_peek(p, argc, argv, "task");
    const struct hg_task *task = cl->task = tname ? hg_task_find(tname) : NULL;
    if (tname && !task) {
        fprintf(stderr, "hgplan: --task %s: unknown task (hgtrain --list-tasks)\n", tname);
        free(tname);
        return 2;
    }
    free(tname);
    int ntopt = 0;
    cl->trows = task ? hg_task_opt_rows(task->options, G_TASK, &ntopt) : NULL;
    a->task_vals = calloc((size_t)(ntopt > 0 ? ntopt : 0) + 1, sizeof(char *));
    if (ntopt < 0 || !a->task_vals) {
        fprintf(stderr, "hgplan: out of memory\n");
        return 1;
    }
    snprintf(cl->title, sizeof(cl->title), "task options (%s)", task ? task->name : "");
    const char *const groups[] = {"graph", "cluster and plan", "learned policy", "profiling",
                                  "other", task ? cl->title : NULL, NULL};
    memcpy(cl->groups, groups, sizeof(groups));
    prog_init(p, a, cl->given, task, cl->trows, ntopt, cl->groups);
    if (hg_opt_parse(p, argc, argv, err, sizeof(err)) != 0) {
        fprintf(stderr, "hgplan: %s\n", err);
        return 2;
    }
    if (a->version) {
        hg_print_version("hgplan");
        return 0;
    }
    if (a->help || argc == 1) {
        hg_opt_help(a->help ? stdout : stderr, p);
        return a->help ? 0 : 2;
    }
    list_to_array(&a->lbatch, a->pbatch, &a->npbatch);
    list_to_array(&a->lthreads, a->pthreads, &a->npthreads);
    list_to_array(&a->lworkers, a->pworkers, &a->npworkers);
    list_to_array(&a->lslow, a->pslow, &a->npslow);
    list_to_array(&a->lgpus, a->pgpus, &a->npgpus);
    list_to_array(&a->lsizes, a->psizes, &a->npsizes);
    list_to_array(&a->lworlds, a->pworlds, &a->npworlds);
    if (hg_opt_given(p, "profile-worlds") != 1)
        a->npworlds = -1;
    return -1;
}

/* Refused with "hgplan: MSG" and exit code 2. */
static int usage_error(const char *msg)
{
    fprintf(stderr, "hgplan: %s\n", msg);
    return 2;
}

/* Step 2a: --train-policy's options.  -1: they fit; else 2 (printed). */
static int check_train_policy(const struct cmdline *cl)
{
    static const char *const refused[] = {"model", "task", "cluster", "search", "strategy",
                                          "dp", "trace", "finetune", "profile", NULL};
    for (int i = 0; refused[i]; i++)
        if (hg_opt_given(&cl->p, refused[i]) == 1) {
            fprintf(stderr, "hgplan: --train-policy takes its graphs from --models and "
                    "its clusters from --clusters: no --%s\n", refused[i]);
            return 2;
        }
    if (!cl->a.models || !cl->a.clusters || !cl->a.out)
        return usage_error("--train-policy needs --models, --clusters and --out");
    return -1;
}

/* Step 2b: the options of a plan, a profile and an export (no
 * --train-policy, no --profile-links tcp).  -1: they fit; else 2. */
static int check_plan_options(const struct args *a)
{
    if (a->models || a->clusters || a->log_json)
        return usage_error("--models, --clusters and --log-json need --train-policy");
    int gnn = a->search && strncmp(a->search, "gnn", 3) == 0;
    if (gnn != !!a->policy) {
        fprintf(stderr, gnn ? "hgplan: --search %s needs --policy FILE\n"
                            : "hgplan: --policy needs --search gnn or gnn+mcmc, or "
                              "--train-policy\n", a->search);
        return 2;
    }
    if (a->finetune > 0 && !gnn)
        return usage_error("--finetune needs --search gnn or gnn+mcmc");
    if (a->policy_out && !(a->finetune > 0))
        return usage_error("--policy-out needs --finetune");
    if ((a->search || a->strategy || a->pipeline || a->tensor || a->out || a->trace ||
         a->dp) &&
        (!a->cluster || (!a->model && !a->task)))
        return usage_error("--search, --strategy, --pipeline, --tensor, --dp, --out and "
                           "--trace need a graph (--model or --task) and --cluster");
    if ((a->out || a->trace) && !a->search && !a->strategy && !a->pipeline && !a->tensor &&
        !a->dp)
        return usage_error("--out and --trace need --search, --strategy, --pipeline, "
                           "--tensor or --dp");
    if (!!a->search + !!a->strategy + !!a->pipeline + !!a->tensor + a->dp > 1)
        return usage_error("give one of --search, --strategy, --pipeline, --tensor and --dp");
    if (a->profile_out && !a->task)
        return usage_error("--profile-out needs --task (a graph the executor can run; "
                           "--model graphs hold shapes only)");
    if (!a->profile_out && (a->npbatch || a->npthreads || a->npworlds >= 0 || a->npsizes ||
                            a->npworkers || a->npgpus || a->npslow || a->preps ||
                            a->pwarmup || a->profile_links))
        return usage_error("--profile-batches/-threads/-workers/-slowdown/-worlds/-sizes/"
                           "-repeats/-warmup/-links need --profile-out");
    return -1;
}

static void list_models(void)
{
    printf("%-14s %6s %5s  %s\n", "model", "batch", "seq", "description");
    for (int i = 0; i < hg_n_model_specs; i++) {
        const struct hg_model_spec *s = &hg_model_specs[i];
        printf("%-14s %6lld %5lld  %s\n", s->name, (long long)s->default_batch,
               (long long)s->default_seq, s->desc);
    }
}

/* Step 3: --profile and --cluster (the profile's measured links on the
 * cluster's), the cluster printed to info.  0, or 1 (printed). */
static int load_cluster(FILE *info, const struct args *a, struct hg_cluster **c,
                        struct hg_profile **prof)
{
    char err[ERRLEN] = "";
    if (a->profile && hg_prof_load(prof, a->profile, err, sizeof(err)) != 0) {
        fprintf(stderr, "hgplan: --profile %s\n", err);
        return 1;
    }
    if (a->cluster) {
        if (hg_cluster_load(c, a->cluster, err, sizeof(err)) != 0 ||
            (*prof && hg_cluster_set_profile(*c, *prof, err, sizeof(err)) != 0)) {
            fprintf(stderr, "hgplan: %s\n", err);
            return 1;
        }
        hg_cluster_print(*c, info);
    }
    const struct hg_profile *pf = *prof;
    if (pf && !a->profile_out)
        fprintf(info, "profile %s: %d device%s, %d op entries, %d link entries%s%s\n",
                a->profile, pf->ndevs, pf->ndevs == 1 ? "" : "s", pf->nops, pf->nlinks,
                pf->date[0] ? ", measured " : "", pf->date);
    return 0;
}

/* Step 4: the graph of --model or --task into g (a->batch and a->seq
 * defaulted), trained with --optimizer's optimizer (*optim).  0, 1 or 2
 * (printed). */
static int build_graph(struct hg_graph *g, const struct hg_task *task, struct args *a,
                       enum hg_optim *optim)
{
    char err[ERRLEN] = "";
    const struct hg_model_spec *spec = a->model ? hg_model_spec_find(a->model) : NULL;
    /* a task's default is hgtrain's (one definition); a model's HeteroG's */
    *optim = spec && spec->default_seq == 0 ? HG_OPTIM_SGD : HG_OPTIM_ADAM;
    HG_CHECK(a->model || hg_optim_kind(HG_TASK_DEFAULT_OPTIMIZER, optim) == 0);
    if (a->optimizer && hg_optim_kind(a->optimizer, optim) != 0) {
        fprintf(stderr, "hgplan: --optimizer %s: expected sgd, adam, adamw or adadelta\n",
                a->optimizer);
        return 2;
    }
    if (a->model) {
        if (!spec) {
            hg_model_build(g, a->model, NULL, err, sizeof(err)); /* names the choices */
            fprintf(stderr, "hgplan: %s\n", err);
            return 2;
        }
        struct hg_model_opts mo = {.batch = a->batch, .seq = a->seq,
                                   .train = !a->forward_only, .optim = *optim};
        int rc = 0;
        if (hg_model_build(g, a->model, &mo, err, sizeof(err)) < 0) {
            fprintf(stderr, "hgplan: %s\n", err);
            rc = 1;
        }
        if (!a->batch)
            a->batch = spec->default_batch;
        return rc;
    }
    if (!a->batch)
        a->batch = 32;
    if (!a->seq)
        a->seq = 128;
    if (build_task(g, task, a, *optim, a->seq, err, sizeof(err)) != 0) {
        fprintf(stderr, "hgplan: --task %s: %s\n", a->task, err);
        return 1;
    }
    return 0;
}

/* Step 5b, before planning --task's graph g: the graph every device's
 * memory is priced at, the same one for the longest sample of --data's
 * train split (hg_task_longest: where hgtrain --strategy checks a
 * strategy's memory) into *gm; NULL when g is that graph, when g has no
 * length symbol, or when the split cannot be read (said on info).  0 or 1
 * (printed). */
static int memory_graph(FILE *info, const struct hg_graph *g, const struct hg_task *task,
                        const struct args *a, enum hg_optim optim, struct hg_graph **gm)
{
    *gm = NULL;
    int nlen = 0; /* symbols other than the batch: the lengths */
    for (int k = 0; k < hg_graph_n_syms(g); k++)
        nlen += strcmp(hg_graph_sym_name(g, k), "batch") != 0;
    if (!task || nlen == 0)
        return 0;
    char err[ERRLEN] = "";
    void *state = NULL;
    int32_t len = 0;
    struct hg_task_args ta = {.values = (const char *const *)a->task_vals};
    int rc = task->setup ? task->setup(&state, a->data, &ta, err, sizeof err) : 0;
    if (rc == 0)
        rc = hg_task_longest(task, state, a->data, "train", &len, err, sizeof err);
    if (task->teardown && state)
        task->teardown(state);
    if (rc != 0) {
        fprintf(info, "memory priced at --seq-len %lld, as compute: %s\n", (long long)a->seq,
                err);
        return 0;
    }
    fprintf(info, "memory priced at the longest training sample, %d (the train split of "
            "--data), compute at --seq-len %lld\n", (int)len, (long long)a->seq);
    if (len == a->seq)
        return 0;
    *gm = hg_graph_new();
    if (build_task(*gm, task, a, optim, len, err, sizeof err) != 0) {
        fprintf(stderr, "hgplan: --task %s: at the longest sample, %d: %s\n", a->task,
                (int)len, err);
        hg_graph_free(*gm);
        *gm = NULL;
        return 1;
    }
    return 0;
}

/* Step 6: --export-graph: the graph as JSON (to standard output for -). */
static int export_graph(FILE *info, const struct hg_graph *g, const char *what,
                        const struct args *a)
{
    int std = strcmp(a->export_graph, "-") == 0;
    FILE *f = std ? stdout : fopen(a->export_graph, "w");
    if (!f) {
        fprintf(stderr, "hgplan: --export-graph %s: %s\n", a->export_graph, strerror(errno));
        return 1;
    }
    int w = hg_graph_export_json(g, what, a->batch, f);
    if ((!std && fclose(f) != 0) || w != 0) {
        fprintf(stderr, "hgplan: --export-graph %s: write failed\n", a->export_graph);
        return 1;
    }
    if (!std)
        fprintf(info, "wrote %s\n", a->export_graph);
    return 0;
}

/* Steps 3 to 6 for a graph, a cluster or both: load, build, profile
 * (step 5: --profile-out), summarise, plan and report, export. */
static int run_graph(struct cmdline *cl, int argc, char **argv)
{
    struct args *a = &cl->a;
    /* with the graph on standard output, the report goes to standard error */
    FILE *info = a->export_graph && strcmp(a->export_graph, "-") == 0 ? stderr : stdout;
    char err[ERRLEN] = "";
    struct hg_cluster *c = NULL;
    struct hg_profile *prof = NULL;
    struct hg_graph *g = NULL, *gm = NULL; /* gm: memory's (memory_graph) */
    int rc = load_cluster(info, a, &c, &prof);
    if (rc != 0)
        goto out;
    if (!a->model && !a->task) {
        if (!c)
            rc = usage_error("give --model, --task, --cluster or --list-models "
                             "(hgplan --help)");
        else if (a->export_graph)
            rc = usage_error("--export-graph needs --model or --task");
        goto out;
    }
    g = hg_graph_new();
    const char *what = a->model ? a->model : a->task;
    enum hg_optim optim;
    rc = build_graph(g, cl->task, a, &optim);
    if (rc == 0 && a->profile_out) {
        if (!prof)
            prof = hg_prof_new();
        rc = profile(info, prof, cl->task, a, optim, argc, argv);
        if (rc == 0 && c && hg_cluster_set_profile(c, prof, err, sizeof(err)) != 0) {
            fprintf(stderr, "hgplan: %s\n", err);
            rc = 1;
        }
    }
    if (rc == 0) {
        summary(info, g, what, a->batch);
        if (c)
            roofline(info, g, c, a->batch);
        if (c && (a->search || a->strategy || a->pipeline || a->tensor || a->dp)) {
            rc = memory_graph(info, g, cl->task, a, optim, &gm);
            if (rc == 0)
                rc = plan_and_report(info, g, gm, c, what, a);
        }
    }
    if (rc == 0 && a->export_graph)
        rc = export_graph(info, g, what, a);
out:
    hg_graph_free(g);
    hg_graph_free(gm);
    hg_cluster_free(c);
    hg_prof_free(prof);
    return rc;
}

/* Step 2: the mode the options choose: tcp link profiling, policy
 * training, or a graph and a cluster (run_graph). */
static int run_command(struct cmdline *cl, int argc, char **argv)
{
    struct args *a = &cl->a;
    int tcp = a->profile_links && strcmp(a->profile_links, "tcp") == 0;
    if (!tcp && (a->dworld || a->dinit || a->dtoken ||
                 hg_opt_given(&cl->p, "distributed-rank") == 1 ||
                 hg_opt_given(&cl->p, "distributed-timeout") == 1))
        return usage_error("the --distributed-* options need --profile-links tcp");
    if (tcp)
        return profile_tcp(stdout, a, &cl->p, argc, argv);
    if (a->train_policy) {
        int rc = check_train_policy(cl);
        return rc >= 0 ? rc : train_policy(stdout, a);
    }
    int rc = check_plan_options(a);
    if (rc >= 0)
        return rc;
    if (a->list_models) {
        list_models();
        return 0;
    }
    if (a->model && a->task)
        return usage_error("give --model or --task, not both");
    return run_graph(cl, argc, argv);
}

int main(int argc, char **argv)
{
    struct cmdline cl;
    memset(&cl, 0, sizeof(cl));
    int rc = parse_cmdline(&cl, argc, argv);
    if (rc < 0)
        rc = run_command(&cl, argc, argv);
    hg_opt_free(&cl.p);
    free(cl.a.task_vals);
    free(cl.trows);
    return rc;
}
