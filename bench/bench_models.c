/* bench_models.c - forward + backward + update time of the MNIST CNN
 * (batch 64) and of one Transformer encoder layer (d_model 512, 8 heads,
 * ffn 2048, 64 sentences x 32 tokens). Prints one line per model:
 *   model <name> ms_per_step <t> gflops <r>
 * and, with --profile, the twelve most expensive nodes and the time per op
 * kind (ops under 0.5% of the step are left out). bench/run.sh compares
 * these figures with PyTorch measured in the same run. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/hg_graph.h"
#include "tasks/models.h"

static uint64_t rs = 0x2545F4914F6CDD1Dull;
static float frand(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (float)((rs >> 40) * (1.0 / 16777216.0)) * 2.f - 1.f;
}

static void fill_f32(struct hg_exec *ex, int t, int64_t n)
{
    float *p = hg_exec_data(ex, t);
    for (int64_t i = 0; i < n; i++)
        p[i] = frand();
}

struct pr { double t; int node; };
static int by_t(const void *a, const void *b)
{
    double x = ((const struct pr *)a)->t, y = ((const struct pr *)b)->t;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Runs warmup + iters steps; returns ms per step. */
static double run(const char *name, struct hg_graph *g, struct hg_exec *ex,
                  int n, int iters, int profile, float lr)
{
    char err[512];
    struct hg_step st = {.lr = lr, .grad_scale = 1.f / 64};
    for (int i = 0; i < 3; i++) {
        st.step++;
        if (hg_exec_run(ex, &st, 0, n, err, sizeof(err)) != 0) {
            fprintf(stderr, "bench: %s: %s\n", name, err);
            exit(1);
        }
    }
    if (profile)
        hg_exec_profile(ex, 1);
    double t0 = hg_now();
    for (int i = 0; i < iters; i++) {
        st.step++;
        if (hg_exec_run(ex, &st, 0, n, err, sizeof(err)) != 0) {
            fprintf(stderr, "bench: %s: %s\n", name, err);
            exit(1);
        }
    }
    double ms = (hg_now() - t0) * 1e3 / iters;
    struct hg_cost c;
    hg_graph_cost(g, &c);
    printf("model %s ms_per_step %.3f gflops %.1f\n", name, ms,
           c.flops / (ms * 1e-3) * 1e-9);
    if (profile) {
        const double *pt = hg_exec_profile_times(ex);
        struct pr *p = malloc((size_t)n * sizeof(*p));
        for (int i = 0; i < n; i++)
            p[i] = (struct pr){pt[i] / iters, hg_exec_order_at(ex, i)};
        qsort(p, (size_t)n, sizeof(*p), by_t);
        for (int i = 0; i < 12 && i < n; i++) {
            const struct hg_node_info *nd = hg_graph_node(g, p[i].node);
            char sb[96] = "-";
            if (nd->out >= 0)
                hg_shape_str(&hg_graph_tensor(g, nd->out)->shape, sb, sizeof(sb));
            printf("  %7.3f ms  %-18s %s\n", p[i].t * 1e3,
                   hg_op_table[nd->op].name, sb);
        }
        /* totals by op, to set beside torch.autograd.profiler's table */
        double by_op[HG_OP_COUNT] = {0}, total = 0;
        int count[HG_OP_COUNT] = {0};
        for (int i = 0; i < n; i++) {
            enum hg_op op = hg_graph_node(g, p[i].node)->op;
            by_op[op] += p[i].t;
            count[op]++;
            total += p[i].t;
        }
        printf("  by op (ms per step, %% of the sum %.3f ms):\n", total * 1e3);
        for (;;) {
            int best = -1;
            for (int o = 0; o < HG_OP_COUNT; o++)
                if (count[o] && (best < 0 || by_op[o] > by_op[best]))
                    best = o;
            if (best < 0 || by_op[best] < 0.005 * total)
                break;
            printf("  %7.3f ms %5.1f%%  %-18s x%d\n", by_op[best] * 1e3,
                   100 * by_op[best] / total, hg_op_table[best].name,
                   count[best]);
            count[best] = 0;
        }
        free(p);
    }
    fflush(stdout);
    return ms;
}

static struct hg_exec *plan(struct hg_graph *g, int *n)
{
    char err[512];
    int *order = malloc((size_t)hg_graph_n_nodes(g) * sizeof(int));
    *n = hg_graph_order(g, HG_PH_ALL, order);
    struct hg_exec *ex = hg_exec_new(g, order, *n, err, sizeof(err));
    free(order);
    if (!ex) {
        fprintf(stderr, "bench: %s\n", err);
        exit(1);
    }
    hg_graph_init_params(g, ex, 1);
    return ex;
}

static void bench_mnist(int iters, int profile)
{
    struct hg_graph *g = hg_graph_new();
    struct hg_mnist_cnn_cfg cfg = HG_MNIST_CNN_DEFAULT;
    struct hg_model m;
    hg_model_mnist_cnn(g, &cfg, 64, &m);
    hg_graph_backward(g, m.loss);
    union hg_attr h = {.sgd = {.momentum = 0.9f}};
    hg_graph_optimizer(g, HG_OPTIM_SGD, &h);
    int n;
    struct hg_exec *ex = plan(g, &n);
    fill_f32(ex, m.input, 64 * 784);
    int32_t *y = hg_exec_data(ex, m.target);
    for (int i = 0; i < 64; i++)
        y[i] = i % 10;
    run("mnist_cnn", g, ex, n, iters, profile, 0.01f);
    hg_exec_free(ex);
    hg_graph_free(g);
}

static void bench_transformer(int iters, int profile)
{
    struct hg_graph *g = hg_graph_new();
    int64_t xd[3] = {64, 32, 512}, kd[2] = {64, 32};
    int x = hg_graph_input(g, "x", HG_F32, 3, xd, 0);
    int keep = hg_graph_input(g, "keep", HG_I32, 2, kd, 0);
    int r = hg_graph_input(g, "r", HG_F32, 3, xd, 0);
    int y = hg_layer_transformer_encoder(g, "enc", x, keep, 512, 8, 2048, 0.1f, 1);
    int loss = hg_sum(g, hg_mul(g, y, r), HG_AXIS_ALL);
    hg_graph_backward(g, loss);
    union hg_attr h = {.adam = {0.9f, 0.98f, 1e-8f, 0.01f}};
    hg_graph_optimizer(g, HG_OPTIM_ADAMW, &h);
    int n;
    struct hg_exec *ex = plan(g, &n);
    fill_f32(ex, x, 64 * 32 * 512);
    fill_f32(ex, r, 64 * 32 * 512);
    int32_t *k = hg_exec_data(ex, keep);
    for (int i = 0; i < 64 * 32; i++)
        k[i] = 1;
    run("transformer_layer", g, ex, n, iters, profile, 1e-4f);
    hg_exec_free(ex);
    hg_graph_free(g);
}

/* Self-attention alone: q, k, v [64,8,T,64] as parameters, a key mask,
 * dropout 0.1, loss sum(o * r); the fused op or the unfused chain as the
 * graph's flag says (--attention). */
static void bench_attention(int64_t T, int iters, int profile)
{
    struct hg_graph *g = hg_graph_new();
    const int64_t B = 64, H = 8, Dh = 64;
    int64_t d4[4] = {B, H, T, Dh}, kd[2] = {B, T};
    int q = hg_graph_param(g, "q", 4, d4, HG_INIT_UNIFORM, 1.f);
    int k = hg_graph_param(g, "k", 4, d4, HG_INIT_UNIFORM, 1.f);
    int v = hg_graph_param(g, "v", 4, d4, HG_INIT_UNIFORM, 1.f);
    int keep = hg_graph_input(g, "keep", HG_I32, 2, kd, 0);
    int r = hg_graph_input(g, "r", HG_F32, 4, d4, 0);
    int o;
    if (hg_graph_fused_attention(g)) {
        union hg_attr at = {.attn = {.scale = 0.125f, .fill = -1e30f, .p = 0.1f, .self = 1,
                                     .seed = 7}};
        int in[4] = {q, k, v, keep};
        o = hg_graph_op(g, HG_OP_ATTENTION, in, 4, &at);
    } else {
        union hg_attr at = {.mm = {.trans_b = 1, .alpha = 0.125f}};
        int in[2] = {q, k};
        int s = hg_graph_op(g, HG_OP_MATMUL, in, 2, &at);
        s = hg_masked_fill(g, s, keep, 0);
        o = hg_matmul(g, hg_dropout(g, hg_softmax(g, s), 0.1f, 7), v, 0, 0);
    }
    int loss = hg_sum(g, hg_mul(g, o, r), HG_AXIS_ALL);
    hg_graph_backward(g, loss);
    int n;
    struct hg_exec *ex = plan(g, &n);
    fill_f32(ex, r, B * H * T * Dh);
    int32_t *kp = hg_exec_data(ex, keep);
    for (int64_t i = 0; i < B * T; i++)
        kp[i] = i % T < T - (i / T) % 5; /* a few padded keys per sentence */
    char name[64];
    snprintf(name, sizeof name, "attention_T%lld_%s", (long long)T,
             hg_graph_fused_attention(g) ? "fused" : "unfused");
    run(name, g, ex, n, iters, profile, 0.f);
    hg_exec_free(ex);
    hg_graph_free(g);
}

int main(int argc, char **argv)
{
    int iters = 20, profile = 0, threads = 0;
    const char *which = "all";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--profile"))
            profile = 1;
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--model") && i + 1 < argc)
            which = argv[++i];
        else if (!strcmp(argv[i], "--attention") && i + 1 < argc &&
                 (!strcmp(argv[i + 1], "fused") || !strcmp(argv[i + 1], "unfused")))
            hg_graph_default_fused_attention(!strcmp(argv[++i], "fused"));
        else {
            fprintf(stderr, "usage: bench_models [--model mnist|transformer|attention] "
                            "[--iters N] [--threads N] [--profile] "
                            "[--attention fused|unfused]\n");
            return 2;
        }
    }
    char err[512];
    if (hg_kernels_init(err, sizeof(err)) != 0) {
        fprintf(stderr, "bench: %s\n", err);
        return 1;
    }
    if (threads > 0)
        hg_kernels_set_threads(threads);
    printf("blas %s threads %d\n", hg_kernels_blas_name(), hg_kernels_get_threads());
    if (!strcmp(which, "all") || !strcmp(which, "mnist"))
        bench_mnist(iters, profile);
    if (!strcmp(which, "all") || !strcmp(which, "transformer"))
        bench_transformer(iters, profile < 1 ? 0 : 1);
    if (!strcmp(which, "attention")) { /* not in "all": bench/run.sh's table */
        bench_attention(32, iters, profile);
        bench_attention(128, iters, profile);
    }
    return 0;
}
