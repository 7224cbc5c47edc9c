/* hgtrain.c - the training program: its commands (merge-checkpoint,
 * generate, interactive), the task and options, the job's launch and this
 * worker's start, the signals, and the run in order: set-up
 * (run-setup.c), the epoch loop (run-train.c), the end.  One process per
 * rank: trainer/launch.c forks this node's workers (--devices cpu:N) or
 * finds the job's other ranks (Slurm, mpirun, --distributed-*); every
 * rank trains on its share of each step and the controller sums the rest.
 * Rank 0 alone logs and writes checkpoints.  The run's files and their
 * arrows: run-impl.h.
 *
 * With no arguments it runs the built-in default job: the mnist task on
 * data-bin/fashion-mnist (shards written by `hgpreprocess images
 * --fashion-mnist /usr/share/datasets/fashion-mnist --out
 * data-bin/fashion-mnist`), 2 epochs. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hg_base.h"
#include "controller/hg_controller.h"
#include "planner/hg_planner.h"
#include "trainer/generate.h"
#include "trainer/launch.h"
#include "trainer/options.h"
#include "trainer/run-impl.h"

#define ERRLEN 1024

static const char *const default_job[] = {
    "hgtrain", "--task", "mnist", "--data", "data-bin/fashion-mnist",
    "--valid-subset", "test", "--batch-size", "64", "--optimizer", "sgd",
    "--momentum", "0.9", "--lr", "0.01", "--max-epoch", "2",
    "--save-dir", "checkpoints/mnist", "--log-interval", "200", NULL};

/* the first SIGINT or SIGTERM goes to hg__run_stop_signal (run-train.c,
 * which reads it) */
static volatile sig_atomic_t n_sigint;   /* SIGINTs seen (Ctrl-C) */
static volatile sig_atomic_t says_stops; /* this process reports them (rank 0) */

/* The first SIGINT or SIGTERM stops after the update in flight, which
 * writes checkpoint_last.h5 (no final validation); a second SIGINT quits
 * at once (checkpoints are written to a temporary name and renamed, so
 * the last one written stays whole).  Only SIGINT counts twice: a
 * launcher forwards SIGTERM on the first. */
static void on_signal(int sig)
{
    static const char first[] =
        "\nhgtrain: stopping after the update in flight, then writing checkpoint_last.h5 "
        "(no final validation); Ctrl-C again to quit at once\n";
    static const char again[] =
        "\nhgtrain: quitting at once; checkpoint_last.h5 is the last one written\n";
    if (sig == SIGINT && n_sigint++ > 0) {
        if (says_stops)
            (void)!write(2, again, sizeof again - 1);
        _exit(HG_LAUNCH_EXIT_QUIT);
    }
    if (!hg__run_stop_signal && sig == SIGINT && says_stops)
        (void)!write(2, first, sizeof first - 1);
    if (!hg__run_stop_signal)
        hg__run_stop_signal = sig;
}

/* `hgtrain merge-checkpoint SHARDED.h5 OUT.h5`: a sharded checkpoint
 * (--save-sharded) as one ordinary file, for h5py and export-pytorch. */
static int merge_main(int argc, char **argv)
{
    static const char usage[] =
        "usage: hgtrain merge-checkpoint SHARDED.h5 OUT.h5\n"
        "  writes the checkpoint SHARDED.h5 and its shard files (--save-sharded),\n"
        "  every CRC verified, as one ordinary checkpoint OUT.h5\n";
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(usage, stdout);
        return 0;
    }
    if (argc != 3 || argv[1][0] == '-' || argv[2][0] == '-') {
        fputs(usage, stderr);
        return 2;
    }
    char err[ERRLEN];
    if (hg_ckpt_merge(argv[1], argv[2], err, sizeof(err)) != 0) {
        fprintf(stderr, "hgtrain merge-checkpoint: %s\n", err);
        return 1;
    }
    printf("| merged %s into %s\n", argv[1], argv[2]);
    return 0;
}

/* --export-graph: rank 0's train plan's graph as JSON (hgplan
 * --export-graph's format; '-': standard output), the plans' batch and
 * length logged (tests/graph_recipe.sh compares it with hgplan's). */
static int export_graph(struct hg__run *r, char *err, size_t errlen)
{
    const char *path = r->o.export_graph;
    if (r->rank != 0)
        return 0;
    int std = strcmp(path, "-") == 0;
    FILE *f = std ? stdout : fopen(path, "w");
    if (!f)
        return hg_kerr(err, errlen, "--export-graph %s: %s", path, strerror(errno));
    const struct hg_graph *g = hg_ctl_graph(r->ctl);
    int w = hg_graph_export_json(g, r->task->name, r->plan_batch, f);
    if ((!std && fclose(f) != 0) || w != 0)
        return hg_kerr(err, errlen, "--export-graph %s: write failed", path);
    char line[4200];
    snprintf(line, sizeof line, "| wrote %s: the train graph, %d ops (batch %lld, length "
             "%lld)\n", path, hg_graph_n_nodes(g), (long long)r->plan_batch,
             (long long)r->plan_len);
    hg__run_log(r, line, NULL);
    return 0;
}

/* The commands beside training (merge-checkpoint, generate, interactive),
 * --version, a mistyped command: 1 with *rc, main's status.  0: training,
 * with the built-in default job in *argc and *argv when there were no
 * arguments. */
static int commands(int *argc, char ***argv, int *rc)
{
    int n = *argc;
    char **v = *argv;
    if (n > 1 && strcmp(v[1], "merge-checkpoint") == 0) {
        *rc = merge_main(n - 1, v + 1);
        return 1;
    }
    if (n > 1 && strcmp(v[1], "generate") == 0) {
        *rc = hg_generate_main(n - 1, v + 1);
        return 1;
    }
    if (n > 1 && strcmp(v[1], "interactive") == 0) {
        *rc = hg_interactive_main(n - 1, v + 1);
        return 1;
    }
    if (n == 1) { /* the built-in default job */
        *argv = v = (char **)default_job;
        for (n = 0; default_job[n]; n++)
            ;
        *argc = n;
    }
    if (n > 1 && strcmp(v[1], "--version") == 0) {
        hg_print_version("hgtrain");
        *rc = 0;
        return 1;
    }
    if (n > 1 && v[1][0] && v[1][0] != '-') { /* a mistyped command? */
        static const char *const cmds[] = {"generate", "interactive", "merge-checkpoint", NULL};
        char hint[96];
        fprintf(stderr, "hgtrain: unknown command '%s'%s (commands: generate, interactive, "
                "merge-checkpoint; "
                "training takes options only: hgtrain --help)\n", v[1],
                hg_suggest_text(v[1], cmds, "", hint, sizeof(hint)));
        *rc = 2;
        return 1;
    }
    return 0;
}

/* The task (--task or a plug-in, found before the options, which it
 * extends) and the options; --version, --help, --arch's check and
 * --list-tasks answered.  1 with *rc, main's status; 0: a task to
 * train. */
static int parse_options(struct hg__run *r, int argc, char **argv, int *rc)
{
    char err[ERRLEN] = "";
    const char *plugin = NULL;
    const char *tname = hg_opts_peek_task(argc, argv, &plugin);
    if (plugin) {
        r->task = hg_task_load_plugin(plugin, err, sizeof(err));
        if (!r->task) {
            fprintf(stderr, "hgtrain: %s\n", err);
            *rc = 2;
            return 1;
        }
    } else if (tname) {
        r->task = hg_task_find(tname);
        if (!r->task) {
            fprintf(stderr, "hgtrain: --task %s: unknown task (hgtrain --list-tasks)\n",
                    tname);
            *rc = 2;
            return 1;
        }
    }
    if (hg_opts_parse(&r->o, argc, argv, r->task ? r->task->options : NULL, NULL, err,
                      sizeof(err)) != 0) {
        fprintf(stderr, "hgtrain: %s\n", err);
        hg_opts_free(&r->o);
        *rc = 2;
        return 1;
    }
    if (r->o.version) {
        hg_print_version("hgtrain");
        hg_opts_free(&r->o);
        *rc = 0;
        return 1;
    }
    const char *archs = r->task ? hg_task_archs(r->task) : NULL;
    if (r->o.help) {
        hg_opts_help(stdout, r->task ? r->task->options : NULL, r->task ? r->task->name : NULL);
        if (archs) { /* "a|b|c", broken after a '|' before column 80 */
            int col = printf("\n--arch of task %s: ", r->task->name) - 1;
            const char *a = *archs ? archs : "none (its options set the model)";
            for (int first = 1; *a; first = 0) {
                size_t n = *archs ? strcspn(a, "|") + (a[strcspn(a, "|")] == '|') : strlen(a);
                if (!first && col + (int)n > 80) {
                    printf("\n    ");
                    col = 4;
                }
                col += printf("%.*s", (int)n, a);
                a += n;
            }
            putchar('\n');
        }
        hg_opts_free(&r->o);
        *rc = 0;
        return 1;
    }
    if (archs && r->o.arch &&
        hg__run_check_arch(r->task->name, archs, r->o.arch, err, sizeof(err)) != 0) {
        fprintf(stderr, "hgtrain: %s\n", err);
        hg_opts_free(&r->o);
        *rc = 2;
        return 1;
    }
    if (r->o.list_tasks) {
        for (int i = 0; hg_task_registry[i]; i++)
            printf("%-14s %s\n", hg_task_registry[i]->name, hg_task_registry[i]->help);
        if (plugin && r->task) /* --task-plugin's, loaded above */
            printf("%-14s %s (plug-in %s)\n", r->task->name,
                   r->task->help ? r->task->help : "", plugin);
        hg_opts_free(&r->o);
        *rc = 0;
        return 1;
    }
    if (!r->task) {
        fprintf(stderr, "hgtrain: --task is required (hgtrain --list-tasks)\n");
        hg_opts_free(&r->o);
        *rc = 2;
        return 1;
    }
    return 0;
}

/* The job: this node's workers forked before anything starts a thread,
 * --plan planned once before the fork so that every rank runs the same
 * strategy; the launcher starts them again on the survivors
 * (--max-restarts) and exits with their status.  1 with *rc, main's
 * status; 0: *local is this worker's index on the node (-2: an error, in
 * err). */
static int launch(struct hg__run *r, struct hg_launch *L, int *local, int *rc, char *err,
                  size_t errlen)
{
    for (int attempt = 1;; attempt++) {
        /* tasks' --attention auto: the fused op on the CPU, the unfused
         * chain in a GPU run (every rank of a mix: one graph); before
         * --strategy and --plan build their graphs */
        int plan_rc = hg_launch_plan(L, &r->o, err, errlen);
        if (plan_rc == 0)
            hg_graph_default_fused_attention(!L->cuda);
        /* --strategy: checked once, here, and its cluster file and batch
         * taken where the options give none */
        if (plan_rc != 0 || hg__run_restarts_possible(&r->o, L, err, errlen) != 0 ||
            hg__run_strategy_before_fork(r, L, err, errlen) != 0 ||
            hg__run_cluster_capacities(&r->o, L->world, err, errlen) != 0) {
            fprintf(stderr, "hgtrain: %s\n", err);
            hg_opts_free(&r->o);
            *rc = 2;
            return 1;
        }
        if (r->o.plan) {
            /* planned once, here, so that every rank runs the same strategy */
            if (L->nlocal != L->world) {
                fprintf(stderr, "hgtrain: --plan %s plans in the launcher before it forks "
                        "the job's ranks, but this launch (%s) starts %d of the %d ranks "
                        "here; plan with hgplan --search %s --out FILE and give every rank "
                        "--strategy FILE\n", r->o.plan, L->how, L->nlocal, L->world, r->o.plan);
                hg_opts_free(&r->o);
                *rc = 2;
                return 1;
            }
            if (hg__run_plan_before_fork(r, L->backend == HG_BK_NCCL, L->cuda, err, errlen) != 0) {
                fprintf(stderr, "hgtrain: %s\n", err);
                free(r->plan_text);
                free(r->plan_table);
                hg_opts_free(&r->o);
                *rc = 1;
                return 1;
            }
        }
        if (hg_launch_start(L, local, err, errlen) != 0) {
            *local = -2; /* an error, in err */
            return 0;
        }
        if (*local >= 0)
            return 0;
        /* the launcher: its workers have ended */
        if (hg_launch_restart(L, &r->o, attempt, err, errlen) != 1) {
            if (r->o.max_restarts > 0 && L->status != 0)
                fprintf(stderr, "hgtrain: not restarting: %s\n", err);
            free(r->plan_text);
            free(r->plan_table);
            hg_opts_free(&r->o);
            exit(L->status); /* what the launcher holds beyond this is on main's frame */
        }
    }
}

/* This worker: connected to the job, its rank and world, the log's form,
 * --log-file, the kernels and their threads (the node's cores shared
 * among its workers).  -1 (said, the job aborted): main returns 1. */
static int start_worker(struct hg__run *r, struct hg_launch *L, int local, char *err,
                        size_t errlen)
{
    if (local < 0 || hg_launch_connect(L, local, &r->comm, err, errlen) != 0) {
        fprintf(stderr, "hgtrain: rank %d: %s\n", L->rank0 + (local < 0 ? 0 : local), err);
        hg_comm_abort(r->comm);
        hg_launch_finish(L, NULL);
        free(r->plan_text);
        free(r->plan_table);
        hg_opts_free(&r->o);
        return -1;
    }
    r->cuda_device = L->cuda ? L->dev[local] : -1;
    r->rank = r->comm ? hg_comm_rank(r->comm) : 0;
    r->data_rank = r->rank;
    r->world = r->comm ? hg_comm_world(r->comm) : 1;
    r->json = strcmp(r->o.log_format, "json") == 0;
    r->tty = strcmp(r->o.log_format, "tqdm") == 0 && isatty(2) && r->rank == 0;
    hg_ckpt_set_file_mode(r->o.group_readable ? 0640 : 0600);
    hg_ckpt_set_allow_shared(r->o.allow_shared_save_dir); /* training's loads */
    int log_fd = -1;
    char log_err[4400] = "";
    if (r->rank == 0 && r->o.log_file &&
        ((log_fd = hg__run_open_file(r, r->o.log_file, 1, "--log-file", log_err,
                                     sizeof(log_err))) < 0 ||
         !(r->log = fdopen(log_fd, "a")))) {
        if (log_fd >= 0) {
            snprintf(log_err, sizeof(log_err), "--log-file %s: %s", r->o.log_file,
                     strerror(errno));
            close(log_fd);
        }
        fprintf(stderr, "hgtrain: %s\n", log_err);
        hg_comm_abort(r->comm);
        hg_launch_finish(L, r->comm);
        hg_opts_free(&r->o);
        return -1;
    }
    if (hg_kernels_init(err, errlen) != 0) {
        fprintf(stderr, "hgtrain: %s\n", err);
        hg_comm_abort(r->comm);
        hg_launch_finish(L, r->comm);
        return -1;
    }
    if (r->o.threads > 0) {
        hg_kernels_set_threads((int)r->o.threads);
    } else if (L->nlocal > 1) { /* the node's cores shared among its workers */
        cpu_set_t cs;
        int cores = sched_getaffinity(0, sizeof(cs), &cs) == 0 ? CPU_COUNT(&cs)
                                                               : (int)sysconf(_SC_NPROCESSORS_ONLN);
        hg_kernels_set_threads(cores / L->nlocal > 1 ? cores / L->nlocal : 1);
    }
    return 0;
}

/* --plan's table, line by line: JSON records under --log-format json */
static void log_plan_table(struct hg__run *r)
{
    for (char *p = r->plan_table, *e; p && *p; p = e + 1) {
        if (!(e = strchr(p, '\n')))
            e = p + strlen(p) - 1;
        char c = e[1];
        e[1] = 0;
        hg__run_log(r, p, NULL);
        e[1] = c;
        if (!c)
            break;
    }
}

/* The run as rank 0 logs it before training: the task and data, the
 * controller, the job, --cluster-file's capacities. */
static void describe_job(struct hg__run *r, const struct hg_launch *L)
{
    char line[3072], desc[1024], job[512];
    hg_ctl_describe(r->ctl, r->o.verbose, desc, sizeof(desc));
    hg_launch_describe(L, job, sizeof(job));
    char valid[300];
    if (r->valid.ds)
        snprintf(valid, sizeof(valid), "%lld %s samples", (long long)r->valid.n,
                 r->o.valid_subset);
    else
        snprintf(valid, sizeof(valid), "no validation (%s)",
                 r->o.disable_validation ? "--disable-validation"
                                         : "--validate-interval 0");
    snprintf(line, sizeof(line), "| task %s, data %s: %lld %s samples, %s\n"
             "| %s\n| %s\n", r->task->name, r->o.data, (long long)r->train.n,
             r->o.train_subset, valid, desc, job);
    hg__run_log(r, line, NULL);
    if (r->o.cluster_file && !r->o.strategy && !r->o.plan) {
        int k = snprintf(line, sizeof(line), "| rank capacities (--cluster-file %s):",
                         r->o.cluster_file);
        for (int i = 0; i < r->o.rank_capacity.n && k > 0 && k < (int)sizeof(line) - 32; i++)
            k += snprintf(line + k, sizeof(line) - (size_t)k, "%s%.4g", i ? "," : " ",
                          r->o.rank_capacity.v[i]);
        if (k > 0 && k < (int)sizeof(line) - 2)
            snprintf(line + k, sizeof(line) - (size_t)k, "\n");
        hg__run_log(r, line, NULL);
    }
}

/* The training: the signals caught, --profile-ops and --trace switched
 * on, the epoch loop, then their output.  0, 1 (stopped by a signal), or
 * -1. */
static int run_training(struct hg__run *r, int64_t first_step, char *err, size_t errlen)
{
    says_stops = r->rank == 0;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    if (r->o.profile_ops)
        hg_exec_profile(hg_ctl_exec(r->ctl), 1);
    if (r->o.trace)
        hg_exec_trace(hg_ctl_exec(r->ctl), 1);
    r->first_update = r->num_updates;
    r->t_train0 = hg_now();
    int rc = hg__run_train(r, first_step, err, errlen);
    if (rc == 0 && r->o.profile_ops && r->rank == 0)
        hg__run_print_profile(r);
    if (rc == 0 && r->o.trace)
        rc = hg__run_write_trace(r, err, errlen);
    return rc;
}

/* The end of the run: its error (the other ranks stopped at once) or the
 * done line, the job finished, everything freed.  main's status. */
static int finish(struct hg__run *r, struct hg_launch *L, int rc, const char *err)
{
    if (rc < 0) {
        if (r->world > 1)
            fprintf(stderr, "hgtrain: rank %d: %s\n", r->rank, err);
        else
            fprintf(stderr, "hgtrain: %s\n", err);
        hg_comm_abort(r->comm); /* the other ranks stop at once, naming us */
    } else if (rc == 0) {
        char line[256];
        snprintf(line, sizeof(line), "| done: %llu updates in %.1f s\n",
                 (unsigned long long)r->num_updates, hg_now() - r->t_start);
        hg__run_log(r, line, NULL);
    }
    hg_launch_finish(L, rc < 0 ? NULL : r->comm);
    if (rc < 0)
        hg_comm_free(r->comm);
    hg__run_free(r);
    hg_opts_free(&r->o);
    /* a forked worker tells its launcher that the stop was a clean one */
    return rc == 0 ? 0 : rc == 1 && L->forked ? HG_LAUNCH_EXIT_SIGNAL : 1;
}

int main(int argc, char **argv)
{
    char err[ERRLEN] = "";
    int rc;
    if (commands(&argc, &argv, &rc))
        return rc;
    struct hg__run r;
    memset(&r, 0, sizeof(r));
    r.patience_best = NAN;
    r.lock_fd = -1;
    if (parse_options(&r, argc, argv, &rc))
        return rc;
    struct hg_launch L;
    int local = 0;
    if (launch(&r, &L, &local, &rc, err, sizeof(err)))
        return rc;
    if (start_worker(&r, &L, local, err, sizeof(err)) != 0)
        return 1;
    r.opts_text = hg_opts_to_string(&r.o);
    r.t_start = hg_now();
    log_plan_table(&r);

    int64_t first_step = 0;
    rc = hg__run_setup(&r, &first_step, err, sizeof(err));
    if (rc == 0 && r.o.export_graph) {
        rc = export_graph(&r, err, sizeof err);
    } else if (rc == 0) {
        describe_job(&r, &L);
        rc = run_training(&r, first_step, err, sizeof(err));
    }
    return finish(&r, &L, rc, err);
}
