/* hgtrain.c - the training program. This first version trains the built-in
 * default job: the MNIST CNN on Fashion-MNIST (Debian's dataset-fashion-mnist)
 * on one process, and reports test accuracy. Tasks, HDF5 data, distributed
 * workers and checkpoints arrive with their issues. */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "data/hg_data.h"
#include "graph/hg_graph.h"
#include "tasks/models.h"

#define DEFAULT_DATA "/usr/share/datasets/fashion-mnist"

struct opts {
    const char *data;
    int epochs;
    long max_steps;   /* 0: whole epochs */
    int batch;
    float lr;
    const char *optimizer;
    int threads;
    unsigned long seed;
    long max_train;   /* 0: all samples */
    long max_valid;   /* 0: all samples */
    long log_every;
};

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: hgtrain [options]\n"
            "  --data DIR          Fashion-MNIST/MNIST IDX files (default " DEFAULT_DATA ")\n"
            "  --epochs N          passes over the training set (default 1)\n"
            "  --max-steps N       stop after N updates (default: no limit)\n"
            "  --max-train N       use the first N training images (default: all)\n"
            "  --max-valid N       evaluate on the first N test images (default: all)\n"
            "  --batch-size N      sentences per batch (default 64)\n"
            "  --optimizer NAME    sgd | adamw | adam | adadelta (default sgd)\n"
            "  --lr X              learning rate (default 0.01 sgd, 0.001 adamw/adam,\n"
            "                      1.0 adadelta)\n"
            "  --threads N         compute threads (default: all cores)\n"
            "  --seed N            initialisation and dropout seed (default 1)\n"
            "  --log-interval N    steps between log lines (default 100)\n");
}

static int parse(int argc, char **argv, struct opts *o)
{
    static const struct option lo[] = {
        {"data", required_argument, 0, 'd'},
        {"epochs", required_argument, 0, 'e'},
        {"max-steps", required_argument, 0, 's'},
        {"max-train", required_argument, 0, 'n'},
        {"max-valid", required_argument, 0, 'v'},
        {"batch-size", required_argument, 0, 'b'},
        {"optimizer", required_argument, 0, 'o'},
        {"lr", required_argument, 0, 'l'},
        {"threads", required_argument, 0, 't'},
        {"seed", required_argument, 0, 'r'},
        {"log-interval", required_argument, 0, 'i'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    *o = (struct opts){.data = DEFAULT_DATA, .epochs = 1, .batch = 64,
                       .lr = -1.f, .optimizer = "sgd", .seed = 1,
                       .log_every = 100};
    int c, li = 0;
    while ((c = getopt_long(argc, argv, "h", lo, &li)) != -1) {
        char *end = NULL;
        switch (c) {
        case 'd': o->data = optarg; break;
        case 'e': o->epochs = (int)strtol(optarg, &end, 10); break;
        case 's': o->max_steps = strtol(optarg, &end, 10); break;
        case 'n': o->max_train = strtol(optarg, &end, 10); break;
        case 'v': o->max_valid = strtol(optarg, &end, 10); break;
        case 'b': o->batch = (int)strtol(optarg, &end, 10); break;
        case 'o': o->optimizer = optarg; break;
        case 'l': o->lr = strtof(optarg, &end); break;
        case 't': o->threads = (int)strtol(optarg, &end, 10); break;
        case 'r': o->seed = strtoul(optarg, &end, 10); break;
        case 'i': o->log_every = strtol(optarg, &end, 10); break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); return -1;
        }
        if (end && *end) {
            fprintf(stderr, "hgtrain: --%s: '%s' is not a number\n",
                    lo[li].name, optarg);
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "hgtrain: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
    if (strcmp(o->optimizer, "sgd") && strcmp(o->optimizer, "adamw") &&
        strcmp(o->optimizer, "adam") && strcmp(o->optimizer, "adadelta")) {
        fprintf(stderr, "hgtrain: --optimizer: unknown '%s' (sgd, adamw, adam, "
                "adadelta)\n",
                o->optimizer);
        return -1;
    }
    if (o->batch < 1 || o->epochs < 1 || o->log_every < 1) {
        fprintf(stderr, "hgtrain: --batch-size, --epochs, --log-interval must be >= 1\n");
        return -1;
    }
    if (o->lr < 0)
        o->lr = strcmp(o->optimizer, "sgd") == 0        ? 0.01f
                : strcmp(o->optimizer, "adadelta") == 0 ? 1.0f
                                                        : 1e-3f;
    return 0;
}

struct split {
    struct hg_idx img, lab;
    long n;
};

static int load_split(const char *dir, const char *prefix, struct split *s,
                      char *err, size_t errlen)
{
    char p[1024];
    snprintf(p, sizeof(p), "%s/%s-images-idx3-ubyte.gz", dir, prefix);
    if (hg_idx_load(p, &s->img, err, errlen) != 0)
        return -1;
    snprintf(p, sizeof(p), "%s/%s-labels-idx1-ubyte.gz", dir, prefix);
    if (hg_idx_load(p, &s->lab, err, errlen) != 0)
        return -1;
    if (s->img.ndim != 3 || s->img.dim[1] != 28 || s->img.dim[2] != 28 ||
        s->lab.ndim != 1 || s->lab.dim[0] != s->img.dim[0])
        return hg_kerr(err, errlen, "%s/%s-*: expected [N,28,28] images and [N] labels",
                       dir, prefix);
    for (int64_t i = 0; i < s->lab.dim[0]; i++)
        if (s->lab.data[i] > 9)
            return hg_kerr(err, errlen, "%s: label %d at %lld outside [0,10)", p,
                           s->lab.data[i], (long long)i);
    s->n = (long)s->img.dim[0];
    return 0;
}

/* Copies samples idx[0..b) into the model's inputs (normalised like the
 * PyTorch MNIST example). */
static void fill(struct hg_exec *ex, const struct hg_model *m,
                 const struct split *s, const long *idx, int b)
{
    float *x = hg_exec_data(ex, m->input);   /* [b,1,28,28] */
    int32_t *y = hg_exec_data(ex, m->target); /* [b] */
    for (int i = 0; i < b; i++) {
        const uint8_t *src = s->img.data + idx[i] * 784;
        for (int j = 0; j < 784; j++)
            x[i * 784 + j] = ((float)src[j] / 255.f - 0.1307f) / 0.3081f;
        y[i] = s->lab.data[idx[i]];
    }
}

static void shuffle(long *a, long n, uint64_t seed)
{
    for (long i = n - 1; i > 0; i--) {
        long j = (long)(hg_rand_uniform(seed, 0, (uint64_t)i) * (float)(i + 1));
        if (j > i)
            j = i;
        long t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

int main(int argc, char **argv)
{
    struct opts o;
    char err[512];
    if (parse(argc, argv, &o) != 0)
        return 2;
    if (hg_kernels_init(err, sizeof(err)) != 0) {
        fprintf(stderr, "hgtrain: %s\n", err);
        return 1;
    }
    if (o.threads > 0)
        hg_kernels_set_threads(o.threads);

    struct split tr = {0}, te = {0};
    if (load_split(o.data, "train", &tr, err, sizeof(err)) != 0 ||
        load_split(o.data, "t10k", &te, err, sizeof(err)) != 0) {
        fprintf(stderr, "hgtrain: %s\n", err);
        return 1;
    }
    if (o.max_train > 0 && o.max_train < tr.n)
        tr.n = o.max_train;
    if (o.max_valid > 0 && o.max_valid < te.n)
        te.n = o.max_valid;

    /* train graph: forward + backward + update; eval graph: forward only */
    struct hg_mnist_cnn_cfg cfg = HG_MNIST_CNN_DEFAULT;
    cfg.seed = o.seed;
    struct hg_model m, me;
    struct hg_graph *g = hg_graph_new(), *ge = hg_graph_new();
    hg_model_mnist_cnn(g, &cfg, o.batch, &m);
    cfg.dropout1 = cfg.dropout2 = 0.f;
    hg_model_mnist_cnn(ge, &cfg, o.batch, &me);
    hg_graph_backward(g, m.loss);
    union hg_attr hyper;
    if (strcmp(o.optimizer, "sgd") == 0) {
        hyper = (union hg_attr){.sgd = {.momentum = 0.9f}};
        hg_graph_optimizer(g, HG_OPTIM_SGD, &hyper);
    } else if (strcmp(o.optimizer, "adadelta") == 0) {
        hyper = (union hg_attr){.adadelta = {.rho = 0.9f, .eps = 1e-6f}};
        hg_graph_optimizer(g, HG_OPTIM_ADADELTA, &hyper);
    } else { /* adamw: decoupled decay; adam: L2 in the gradient (no decay) */
        int adam = strcmp(o.optimizer, "adam") == 0;
        hyper = (union hg_attr){.adam = {0.9f, 0.999f, 1e-8f, adam ? 0.f : 0.01f}};
        hg_graph_optimizer(g, adam ? HG_OPTIM_ADAM : HG_OPTIM_ADAMW, &hyper);
    }
    int *order = malloc((size_t)hg_graph_n_nodes(g) * sizeof(int));
    int *eorder = malloc((size_t)hg_graph_n_nodes(ge) * sizeof(int));
    long *perm = malloc((size_t)tr.n * sizeof(long));
    long *seq = malloc((size_t)te.n * sizeof(long));
    if (!order || !eorder || !perm || !seq) {
        fprintf(stderr, "hgtrain: out of memory\n");
        return 1;
    }
    int n = hg_graph_order(g, HG_PH_ALL, order);
    int ne = hg_graph_order(ge, HG_PH_FORWARD, eorder);
    struct hg_exec *ex = hg_exec_new(g, order, n, err, sizeof(err));
    struct hg_exec *ee = ex ? hg_exec_new(ge, eorder, ne, err, sizeof(err)) : NULL;
    if (!ex || !ee) {
        fprintf(stderr, "hgtrain: %s\n", err);
        return 1;
    }
    hg_graph_init_params(g, ex, o.seed);
    struct hg_mem_stats ms;
    hg_exec_mem(ex, &ms);
    printf("| task mnist (CNN), data %s: %ld train, %ld test\n", o.data, tr.n, te.n);
    printf("| %lld parameters, %d ops, plan %.1f MiB (activations %.1f MiB, "
           "%.1f without reuse), BLAS %s, %d threads\n",
           (long long)hg_graph_param_count(g), n, ms.total / 1048576.0,
           ms.act_bytes / 1048576.0, ms.act_naive / 1048576.0,
           hg_kernels_blas_name(), hg_kernels_get_threads());

    size_t np, np_e;
    float *pb = hg_exec_param_block(ex, &np);
    float *pe = hg_exec_param_block(ee, &np_e);
    uint64_t step = 0;
    double t0 = now();
    int rc = 0;
    for (int ep = 1; ep <= o.epochs && rc == 0; ep++) {
        for (long i = 0; i < tr.n; i++)
            perm[i] = i;
        shuffle(perm, tr.n, o.seed * 1000003u + (uint64_t)ep);
        double lsum = 0;
        long lcount = 0;
        for (long s = 0; s < tr.n; s += o.batch) {
            if (o.max_steps > 0 && (long)step >= o.max_steps)
                break;
            int b = (int)(tr.n - s < o.batch ? tr.n - s : o.batch);
            int64_t sym[1] = {b};
            struct hg_step st = {.sym = sym, .step = ++step, .lr = o.lr,
                                 .grad_scale = 1.f / (float)b};
            if (hg_exec_prepare(ex, &st, err, sizeof(err)) != 0 ||
                (fill(ex, &m, &tr, perm + s, b), 0) ||
                hg_exec_run(ex, &st, 0, n, err, sizeof(err)) != 0) {
                fprintf(stderr, "hgtrain: step %llu: %s\n",
                        (unsigned long long)step, err);
                rc = 1;
                break;
            }
            float loss = *(float *)hg_exec_data(ex, m.loss);
            if (!isfinite(loss)) {
                fprintf(stderr, "hgtrain: step %llu: loss is %f\n",
                        (unsigned long long)step, loss);
                rc = 1;
                break;
            }
            lsum += loss;
            lcount += b;
            if (step % (uint64_t)o.log_every == 0) {
                printf("| epoch %03d | step %6llu | loss %.4f | %.1f img/s\n", ep,
                       (unsigned long long)step, lsum / (double)lcount,
                       (double)(s + b + (ep - 1) * tr.n) / (now() - t0));
                fflush(stdout);
                lsum = 0;
                lcount = 0;
            }
        }
        /* evaluate: copy weights into the eval plan (same param order) */
        memcpy(pe, pb, np * sizeof(float));
        long correct = 0;
        double tloss = 0;
        for (long i = 0; i < te.n; i++)
            seq[i] = i;
        for (long s = 0; s < te.n && rc == 0; s += o.batch) {
            int b = (int)(te.n - s < o.batch ? te.n - s : o.batch);
            int64_t sym[1] = {b};
            struct hg_step st = {.sym = sym, .step = step};
            if (hg_exec_prepare(ee, &st, err, sizeof(err)) != 0 ||
                (fill(ee, &me, &te, seq + s, b), 0) ||
                hg_exec_run(ee, &st, 0, ne, err, sizeof(err)) != 0) {
                fprintf(stderr, "hgtrain: eval: %s\n", err);
                rc = 1;
                break;
            }
            const float *lp = hg_exec_data(ee, me.logits); /* [b,10] */
            const int32_t *y = hg_exec_data(ee, me.target);
            for (int i = 0; i < b; i++) {
                int best = 0;
                for (int c = 1; c < 10; c++)
                    if (lp[i * 10 + c] > lp[i * 10 + best])
                        best = c;
                correct += best == y[i];
            }
            tloss += *(float *)hg_exec_data(ee, me.loss);
        }
        if (rc == 0)
            printf("| epoch %03d | valid loss %.4f | accuracy %.2f%% | %.1f s\n", ep,
                   tloss / (double)te.n, 100.0 * (double)correct / (double)te.n,
                   now() - t0);
    }
    (void)np_e;
    hg_exec_free(ex);
    hg_exec_free(ee);
    hg_graph_free(g);
    hg_graph_free(ge);
    hg_idx_free(&tr.img);
    hg_idx_free(&tr.lab);
    hg_idx_free(&te.img);
    hg_idx_free(&te.lab);
    free(order);
    free(eorder);
    free(perm);
    free(seq);
    return rc;
}
