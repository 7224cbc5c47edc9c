/* hgplan.c - the planner's program.  This step: list and build HeteroG's
 * models or a task's training graph, export the graph as JSON, read and
 * summarise a cluster file, price the graph on each device kind with the
 * roofline model; with --search: simulate the baselines, search with MCMC,
 * write the strategy and the trace (docs/planner.md).
 *
 * Exit status: 0 done, 1 runtime error (a file, a build), 2 usage error. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "planner/hg_planner.h"
#include "tasks/hg_task.h"

#define ERRLEN 1024

static void usage(FILE *f)
{
    fprintf(f,
        "usage: hgplan (--model M | --task T [--data DIR] [task options]) [--batch B]\n"
        "              [--seq-len L] [--optimizer sgd|adam|adamw|adadelta]\n"
        "              [--cluster FILE] [--export-graph FILE]\n"
        "       hgplan --list-models | --cluster FILE\n"
        "\n"
        "  --list-models        HeteroG's evaluation models and their default batch sizes\n"
        "  --model M            build model M's training graph (shapes only)\n"
        "  --task T             build task T's training graph (hgtrain --list-tasks);\n"
        "                       the task's own options (--bert-layers ...) are accepted\n"
        "  --data DIR           the task's data directory (tasks that read a dictionary)\n"
        "  --batch B            samples per iteration (default: the model's HeteroG\n"
        "                       Table 1 batch; tasks: 32)\n"
        "  --seq-len L          tokens per sample for sequence models (default: the\n"
        "                       model's; tasks: 128)\n"
        "  --optimizer O        the update ops appended (default: sgd for CNNs, adam\n"
        "                       for sequence models and tasks)\n"
        "  --forward-only       no backward, no update\n"
        "  --cluster FILE       read and validate a cluster file, print a summary and,\n"
        "                       with a graph, its roofline compute time per device\n"
        "  --export-graph FILE  write the graph as JSON ('-': standard output)\n"
        "  --search S           with --cluster: simulate the baselines (EV-PS, EV-AR,\n"
        "                       CP-PS, CP-AR, MP) and, with S = mcmc, search from the\n"
        "                       best of them (S: baselines | mcmc)\n"
        "  --budget SECONDS     MCMC time budget (default 30)\n"
        "  --iters N            MCMC proposals at most (deterministic stop)\n"
        "  --seed N             MCMC seed (default 1)\n"
        "  --groups N           HeteroG op groups (default 64)\n"
        "  --strategy FILE      simulate this strategy file instead of searching\n"
        "  --out FILE           write the best strategy (docs/planner.md)\n"
        "  --trace FILE         write its simulated timeline (Chrome trace JSON)\n");
}

struct args {
    const char *model, *task, *data, *cluster, *export_graph, *optimizer;
    int64_t batch, seq;
    int list_models, forward_only, help;
    const char *search, *out, *trace, *strategy;
    double budget;
    int64_t seed, groups, iters;
    const char **task_vals;
};

static int parse_i64(const char *opt, const char *v, int64_t lo, int64_t *out, char *err,
                     size_t errlen)
{
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || end == v || *end || x < lo)
        return hg_kerr(err, errlen, "%s: expected an integer >= %lld, got '%s'", opt,
                       (long long)lo, v);
    *out = x;
    return 0;
}

static int parse_args(struct args *a, int argc, char **argv, const struct hg_task *task,
                      char *err, size_t errlen)
{
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (strcmp(o, "--list-models") == 0) {
            a->list_models = 1;
            continue;
        }
        if (strcmp(o, "--forward-only") == 0) {
            a->forward_only = 1;
            continue;
        }
        if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
            a->help = 1;
            continue;
        }
        if (strncmp(o, "--", 2) != 0)
            return hg_kerr(err, errlen, "unexpected argument '%s'", o);
        if (i + 1 >= argc)
            return hg_kerr(err, errlen, "%s needs a value", o);
        const char *v = argv[++i];
        if (strcmp(o, "--search") == 0) {
            if (strcmp(v, "baselines") != 0 && strcmp(v, "mcmc") != 0)
                return hg_kerr(err, errlen, "--search %s: expected baselines or mcmc%s", v,
                               strcmp(v, "gnn") == 0 ? " (gnn: not built yet)" : "");
            a->search = v;
        } else if (strcmp(o, "--out") == 0)
            a->out = v;
        else if (strcmp(o, "--trace") == 0)
            a->trace = v;
        else if (strcmp(o, "--strategy") == 0)
            a->strategy = v;
        else if (strcmp(o, "--budget") == 0) {
            char *end;
            a->budget = strtod(v, &end);
            if (end == v || *end || !(a->budget > 0))
                return hg_kerr(err, errlen, "--budget: expected seconds > 0, got '%s'", v);
        } else if (strcmp(o, "--seed") == 0) {
            if (parse_i64(o, v, 0, &a->seed, err, errlen) != 0)
                return -1;
        } else if (strcmp(o, "--groups") == 0) {
            if (parse_i64(o, v, 1, &a->groups, err, errlen) != 0)
                return -1;
        } else if (strcmp(o, "--iters") == 0) {
            if (parse_i64(o, v, 1, &a->iters, err, errlen) != 0)
                return -1;
        } else if (strcmp(o, "--model") == 0)
            a->model = v;
        else if (strcmp(o, "--task") == 0)
            a->task = v;
        else if (strcmp(o, "--data") == 0)
            a->data = v;
        else if (strcmp(o, "--cluster") == 0)
            a->cluster = v;
        else if (strcmp(o, "--export-graph") == 0)
            a->export_graph = v;
        else if (strcmp(o, "--optimizer") == 0)
            a->optimizer = v;
        else if (strcmp(o, "--batch") == 0) {
            if (parse_i64(o, v, 1, &a->batch, err, errlen) != 0)
                return -1;
        } else if (strcmp(o, "--seq-len") == 0) {
            if (parse_i64(o, v, 1, &a->seq, err, errlen) != 0)
                return -1;
        } else {
            int found = 0;
            for (int k = 0; task && task->options && task->options[k].name; k++)
                if (strcmp(o + 2, task->options[k].name) == 0) {
                    a->task_vals[k] = v;
                    found = 1;
                }
            if (!found)
                return hg_kerr(err, errlen, "unknown option '%s' (hgplan --help)%s", o,
                               task ? "" : "; task options need --task");
        }
    }
    return 0;
}

static int optim_kind(const char *s, enum hg_optim *k)
{
    static const char *const names[] = {"sgd", "adamw", "adam", "adadelta"};
    static const enum hg_optim kinds[] = {HG_OPTIM_SGD, HG_OPTIM_ADAMW, HG_OPTIM_ADAM,
                                          HG_OPTIM_ADADELTA};
    for (int i = 0; i < 4; i++)
        if (strcmp(s, names[i]) == 0) {
            *k = kinds[i];
            return 0;
        }
    return -1;
}

static int build_task(struct hg_graph *g, const struct hg_task *t, const struct args *a,
                      enum hg_optim optim, char *err, size_t errlen)
{
    void *state = NULL;
    struct hg_task_args ta = {.values = a->task_vals};
    if (t->setup && t->setup(&state, a->data, &ta, err, errlen) != 0)
        return -1;
    struct hg_task_model m;
    memset(&m, 0, sizeof(m));
    int rc = t->build(state, g, a->batch, a->seq, 1, &m, err, errlen);
    if (t->teardown && state)
        t->teardown(state);
    if (rc != 0)
        return -1;
    if (!a->forward_only) {
        hg_graph_backward(g, m.loss);
        union hg_attr hyper = {0};
        if (optim == HG_OPTIM_SGD) {
            hyper.sgd.momentum = 0.9f;
        } else if (optim == HG_OPTIM_ADADELTA) {
            hyper.adadelta.rho = 0.9f;
            hyper.adadelta.eps = 1e-6f;
        } else {
            hyper.adam.beta1 = 0.9f;
            hyper.adam.beta2 = 0.999f;
            hyper.adam.eps = 1e-8f;
        }
        hg_graph_optimizer(g, optim, &hyper);
    }
    return 0;
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

/* Whole-graph compute time on one device of each distinct model. */
static void roofline(FILE *o, const struct hg_graph *g, const struct hg_cluster *c)
{
    fprintf(o, "roofline compute time of one iteration on a single device:\n");
    for (int i = 0; i < c->ndev; i++) {
        const struct hg_pdevice *d = &c->devices[i];
        int seen = 0;
        for (int j = 0; j < i; j++)
            seen |= strcmp(c->devices[j].model, d->model) == 0 &&
                    c->devices[j].peak_flops == d->peak_flops;
        if (seen)
            continue;
        if (!(d->peak_flops > 0)) {
            fprintf(o, "  %-24s no peak_flops: needs a measured profile\n", d->model);
            continue;
        }
        double t = 0;
        struct hg_shape in[HG_MAX_INPUTS], out;
        for (int n = 0; n < hg_graph_n_nodes(g); n++) {
            const struct hg_node_info *nd = hg_graph_node(g, n);
            for (int k = 0; k < nd->n_in; k++)
                in[k] = hg_graph_tensor(g, nd->in[k])->shape;
            out = nd->out >= 0 ? hg_graph_tensor(g, nd->out)->shape : (struct hg_shape){0};
            struct hg_cost cost = {0, 0};
            hg_op_table[nd->op].cost(in, nd->n_in, &out, &nd->attr, &cost);
            t += hg_cost_op_time(d, nd->op, &cost);
        }
        fprintf(o, "  %-24s %9.4f s (from %s)\n", d->model[0] ? d->model : d->name, t, d->name);
    }
}

static void print_result(FILE *o, const char *name, const struct hg_sim_result *r,
                         const struct hg_cluster *c, double ref)
{
    fprintf(o, "  %-8s %9.4f s", name, r->iter_s);
    if (ref > 0 && !r->oom)
        fprintf(o, "  speedup of the found strategy %+6.1f%%", (r->iter_s - ref) / ref * 100);
    fprintf(o, "%s\n    peak GB:", r->oom ? "  OOM" : "");
    for (int d = 0; d < c->ndev; d++)
        fprintf(o, " %s=%.2f%s", c->devices[d].name, (double)r->peak[d] / 1e9,
                r->peak[d] > c->devices[d].memory ? "(OOM)" : "");
    fprintf(o, "\n");
}

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Baselines, search, strategy file and trace. */
static int plan(FILE *o, const struct hg_graph *g, const struct hg_cluster *c,
                const char *what, const struct args *a)
{
    char err[ERRLEN] = "";
    struct hg_pgraph *pg = NULL;
    if (hg_pgraph_build(&pg, g, c, what, a->batch, err, sizeof(err)) != 0) {
        fprintf(stderr, "hgplan: %s\n", err);
        return 1;
    }
    struct hg_sim *sim = hg_sim_new(pg);
    struct hg_strategy *best = NULL;
    struct hg_sim_result br;
    int rc = 0;
    if (a->strategy) {
        if (hg_strategy_load(&best, a->strategy, pg, err, sizeof(err)) != 0) {
            fprintf(stderr, "hgplan: %s\n", err);
            rc = 1;
            goto done;
        }
        hg_sim_full(sim, best, &br);
        fprintf(o, "strategy %s (%d groups):\n", a->strategy, best->ngroups);
        print_result(o, "file", &br, c, 0);
    } else {
        int ng = a->groups ? (int)a->groups : 64;
        struct hg_sim_result res[HG_BASE_COUNT];
        struct hg_strategy *bs[HG_BASE_COUNT];
        fprintf(o, "baselines (%d op groups, list-scheduled):\n", ng);
        int bi = -1;
        for (int b = 0; b < HG_BASE_COUNT; b++) {
            bs[b] = hg_strategy_new(pg->nops, pg->ndev, 1);
            hg_strategy_group(bs[b], pg, ng);
            hg_baseline_apply(bs[b], pg, (enum hg_baseline)b);
            hg_sched_best(sim, pg, bs[b], &res[b], NULL);
            if (bi < 0 || hg_search_cost(&res[b]) < hg_search_cost(&res[bi]))
                bi = b;
        }
        best = hg_strategy_copy(bs[bi]);
        br = res[bi];
        double st0 = wall();
        if (strcmp(a->search, "mcmc") == 0) {
            struct hg_search_opts so = {.budget_s = a->budget > 0 ? a->budget : 30,
                                        .max_iters = a->iters,
                                        .stagnation = 20000,
                                        .seed = (uint64_t)a->seed};
            struct hg_search_stats ss;
            hg_search_mcmc(sim, pg, best, &so, &ss);
            enum hg_sched_policy pol;
            hg_sched_best(sim, pg, best, &br, &pol);
            /* never worse than the seed */
            if (hg_search_cost(&br) > hg_search_cost(&res[bi])) {
                hg_strategy_free(best);
                best = hg_strategy_copy(bs[bi]);
                hg_sim_full(sim, best, &br);
            }
            fprintf(o, "mcmc from %s: %ld proposals (%ld accepted, %ld improvements) in "
                    "%.2f s, seed %lld; order: %s\n", hg_baseline_name((enum hg_baseline)bi),
                    ss.iters, ss.accepted, ss.improved, wall() - st0, (long long)a->seed,
                    pol == HG_SCHED_RANK ? "list scheduling (rank)" : "FIFO");
        }
        fprintf(o, "simulated per-iteration time:\n");
        for (int b = 0; b < HG_BASE_COUNT; b++)
            print_result(o, hg_baseline_name((enum hg_baseline)b), &res[b], c,
                         br.oom ? 0 : br.iter_s);
        print_result(o, strcmp(a->search, "mcmc") == 0 ? "hgplan" : "best", &br, c, 0);
        for (int b = 0; b < HG_BASE_COUNT; b++)
            hg_strategy_free(bs[b]);
    }
    if (a->search && strcmp(a->search, "mcmc") == 0) {
        /* the simulator's speed: full simulations vs delta simulations of
         * random one-group changes (applied and reverted) */
        struct hg_strategy *t = hg_strategy_copy(best);
        struct hg_sim_result x;
        int nf = 20, ndl = 200;
        double t0 = wall();
        for (int i = 0; i < nf; i++)
            hg_sim_full(sim, t, &x);
        double tf = (wall() - t0) / nf;
        uint64_t rng = 12345;
        t0 = wall();
        for (int i = 0; i < ndl; i++) {
            int k;
            struct hg_gcfg nc, old;
            hg_propose_random(NULL, pg, t, &rng, &k, &nc);
            old = t->cfg[k];
            t->cfg[k] = nc;
            hg_sim_delta(sim, t, k, &x);
            t->cfg[k] = old;
            hg_sim_delta(sim, t, k, &x);
        }
        double td = (wall() - t0) / (2 * ndl);
        fprintf(o, "simulator: %ld tasks; full %.3f ms (%.3g tasks/s), delta %.3f ms: "
                "delta speedup %.2fx\n", x.ntasks, tf * 1e3, (double)x.ntasks / tf, td * 1e3,
                tf / td);
        hg_strategy_free(t);
    }
    hg_sim_full(sim, best, &br);
    fprintf(o, "  tasks: %ld\n", br.ntasks);
    if (a->out) {
        FILE *f = fopen(a->out, "w");
        if (!f || hg_strategy_save(best, pg, c->file, &br, f) != 0 || fclose(f) != 0) {
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
    hg_pgraph_free(pg);
    return rc;
}

int main(int argc, char **argv)
{
    char err[ERRLEN] = "";
    struct args a;
    memset(&a, 0, sizeof(a));
    /* find --task first: its options are valid on the command line */
    const struct hg_task *task = NULL;
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--task") == 0) {
            task = hg_task_find(argv[i + 1]);
            if (!task) {
                fprintf(stderr, "hgplan: --task %s: unknown task (hgtrain --list-tasks)\n",
                        argv[i + 1]);
                return 2;
            }
        }
    int ntopt = 0;
    while (task && task->options && task->options[ntopt].name)
        ntopt++;
    a.task_vals = calloc((size_t)ntopt + 1, sizeof(char *));
    if (!a.task_vals)
        return 1;
    for (int k = 0; k < ntopt; k++)
        a.task_vals[k] = task->options[k].def;
    int rc = 0;
    if (parse_args(&a, argc, argv, task, err, sizeof(err)) != 0) {
        fprintf(stderr, "hgplan: %s\n", err);
        rc = 2;
        goto out;
    }
    if (a.help || argc == 1) {
        usage(a.help ? stdout : stderr);
        rc = a.help ? 0 : 2;
        goto out;
    }
    if ((a.search || a.strategy || a.out || a.trace) && (!a.cluster || (!a.model && !a.task))) {
        fprintf(stderr, "hgplan: --search, --strategy, --out and --trace need a graph "
                "(--model or --task) and --cluster\n");
        rc = 2;
        goto out;
    }
    if ((a.out || a.trace) && !a.search && !a.strategy) {
        fprintf(stderr, "hgplan: --out and --trace need --search or --strategy\n");
        rc = 2;
        goto out;
    }
    if (a.list_models) {
        printf("%-14s %6s %5s  %s\n", "model", "batch", "seq", "description");
        for (int i = 0; i < hg_n_model_specs; i++) {
            const struct hg_model_spec *s = &hg_model_specs[i];
            printf("%-14s %6lld %5lld  %s\n", s->name, (long long)s->default_batch,
                   (long long)s->default_seq, s->desc);
        }
        goto out;
    }
    if (a.model && a.task) {
        fprintf(stderr, "hgplan: give --model or --task, not both\n");
        rc = 2;
        goto out;
    }
    /* with the graph on standard output, the report goes to standard error */
    FILE *info = a.export_graph && strcmp(a.export_graph, "-") == 0 ? stderr : stdout;
    struct hg_cluster *c = NULL;
    if (a.cluster) {
        if (hg_cluster_load(&c, a.cluster, err, sizeof(err)) != 0) {
            fprintf(stderr, "hgplan: %s\n", err);
            rc = 1;
            goto out;
        }
        hg_cluster_print(c, info);
    }
    if (!a.model && !a.task) {
        if (!c) {
            fprintf(stderr, "hgplan: give --model, --task, --cluster or --list-models "
                    "(hgplan --help)\n");
            rc = 2;
        } else if (a.export_graph) {
            fprintf(stderr, "hgplan: --export-graph needs --model or --task\n");
            rc = 2;
        }
        hg_cluster_free(c);
        goto out;
    }
    const struct hg_model_spec *spec = a.model ? hg_model_spec_find(a.model) : NULL;
    enum hg_optim optim = spec && spec->default_seq == 0 ? HG_OPTIM_SGD : HG_OPTIM_ADAM;
    if (a.optimizer && optim_kind(a.optimizer, &optim) != 0) {
        fprintf(stderr, "hgplan: --optimizer %s: expected sgd, adam, adamw or adadelta\n",
                a.optimizer);
        hg_cluster_free(c);
        rc = 2;
        goto out;
    }
    struct hg_graph *g = hg_graph_new();
    const char *what = a.model ? a.model : a.task;
    if (a.model) {
        if (!spec) {
            hg_model_build(g, a.model, NULL, err, sizeof(err)); /* names the choices */
            fprintf(stderr, "hgplan: %s\n", err);
            rc = 2;
        } else {
            struct hg_model_opts mo = {.batch = a.batch, .seq = a.seq,
                                       .train = !a.forward_only, .optim = optim};
            if (hg_model_build(g, a.model, &mo, err, sizeof(err)) < 0) {
                fprintf(stderr, "hgplan: %s\n", err);
                rc = 1;
            }
            if (!a.batch)
                a.batch = spec->default_batch;
        }
    } else {
        if (!a.batch)
            a.batch = 32;
        if (!a.seq)
            a.seq = 128;
        if (build_task(g, task, &a, optim, err, sizeof(err)) != 0) {
            fprintf(stderr, "hgplan: --task %s: %s\n", a.task, err);
            rc = 1;
        }
    }
    if (rc == 0) {
        summary(info, g, what, a.batch);
        if (c)
            roofline(info, g, c);
        if (c && (a.search || a.strategy))
            rc = plan(info, g, c, what, &a);
    }
    if (rc == 0 && a.export_graph) {
        int std = strcmp(a.export_graph, "-") == 0;
        FILE *f = std ? stdout : fopen(a.export_graph, "w");
        if (!f) {
            fprintf(stderr, "hgplan: --export-graph %s: %s\n", a.export_graph,
                    strerror(errno));
            rc = 1;
        } else {
            int w = hg_graph_export_json(g, what, a.batch, f);
            if ((!std && fclose(f) != 0) || w != 0) {
                fprintf(stderr, "hgplan: --export-graph %s: write failed\n", a.export_graph);
                rc = 1;
            } else if (!std) {
                fprintf(info, "wrote %s\n", a.export_graph);
            }
        }
    }
    hg_graph_free(g);
    hg_cluster_free(c);
out:
    free(a.task_vals);
    return rc;
}
