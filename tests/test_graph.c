/* test_graph.c - the graph room: memory plan, blocks, symbolic shapes,
 * batch axes, autodiff bookkeeping, orders, optimizers, runtime errors,
 * comm nodes, the executor's slowdown. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "graph/hg_graph.h"
#include "tests/hg_test.h"


static uint64_t rng = 88172645463325252ull;
static float frand(void) /* [-1, 1) */
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)((rng >> 40) * (1.0 / 16777216.0)) * 2.f - 1.f;
}

/* x[B,8] -> linear 16 -> relu -> linear 3 -> cross entropy */
struct mlp {
    struct hg_graph *g;
    int x, y, h, logits, loss, w1, w2;
};

static void build_mlp(struct mlp *m, int64_t max_b, enum hg_optim opt)
{
    struct hg_graph *g = m->g = hg_graph_new();
    int64_t B = hg_graph_sym(g, "batch", max_b);
    int64_t xd[2] = {B, 8};
    m->x = hg_graph_input(g, "x", HG_F32, 2, xd, 0);
    m->y = hg_graph_input(g, "y", HG_I32, 1, &B, 0);
    m->h = hg_relu(g, hg_layer_linear(g, "fc1", m->x, 8, 16, 1));
    m->logits = hg_layer_linear(g, "fc2", m->h, 16, 3, 1);
    hg_graph_keep(g, m->logits);
    m->loss = hg_cross_entropy(g, m->logits, m->y, -100, 0.f);
    m->w1 = hg_graph_find(g, "fc1.weight");
    m->w2 = hg_graph_find(g, "fc2.weight");
    hg_graph_backward(g, m->loss);
    union hg_attr h;
    if (opt == HG_OPTIM_SGD)
        h = (union hg_attr){.sgd = {.momentum = 0.9f}};
    else if (opt == HG_OPTIM_ADADELTA)
        h = (union hg_attr){.adadelta = {.rho = 0.9f, .eps = 1e-6f}};
    else if (opt == HG_OPTIM_ADAM)
        h = (union hg_attr){.adam = {0.9f, 0.999f, 1e-8f, 1e-4f}};
    else
        h = (union hg_attr){.adam = {0.9f, 0.999f, 1e-8f, 0.f}};
    hg_graph_optimizer(g, opt, &h);
}

/* A linearly separable 3-class problem: class = argmax of 3 projections. */
static void fill_data(struct hg_exec *ex, const struct mlp *m, int b, int seed)
{
    float *x = hg_exec_data(ex, m->x);
    int32_t *y = hg_exec_data(ex, m->y);
    rng = 1234567u + (uint64_t)seed * 7919u;
    for (int i = 0; i < b; i++) {
        float s[3] = {0, 0, 0};
        for (int j = 0; j < 8; j++) {
            x[i * 8 + j] = frand();
            s[j % 3] += x[i * 8 + j];
        }
        y[i] = s[0] > s[1] ? (s[0] > s[2] ? 0 : 2) : (s[1] > s[2] ? 1 : 2);
    }
}

static struct hg_exec *plan(struct hg_graph *g, int phases, int **order, int *n)
{
    char err[256];
    *order = malloc((size_t)hg_graph_n_nodes(g) * sizeof(int));
    *n = hg_graph_order(g, phases, *order);
    struct hg_exec *ex = hg_exec_new(g, *order, *n, err, sizeof(err));
    if (!ex)
        printf("hg_exec_new: %s\n", err);
    return ex;
}

/* No two activations that are live at the same time share a byte. */
static void test_memory_plan(void)
{
    struct mlp m;
    build_mlp(&m, 32, HG_OPTIM_SGD);
    int *order, n;
    struct hg_exec *ex = plan(m.g, HG_PH_ALL, &order, &n);
    EXPECT(ex != NULL, "plan");
    struct hg_mem_stats st;
    hg_exec_mem(ex, &st);
    EXPECT(st.act_bytes < st.act_naive, "reuse: arena %zu, naive %zu",
           st.act_bytes, st.act_naive);
    EXPECT(st.total >= st.param_bytes + st.grad_bytes + st.state_bytes +
                           st.act_bytes, "total %zu", st.total);
    int nt = hg_graph_n_tensors(m.g);
    int *first = malloc((size_t)nt * sizeof(int)), *last = malloc((size_t)nt * sizeof(int));
    for (int t = 0; t < nt; t++)
        first[t] = last[t] = -1;
    for (int i = 0; i < n; i++) {
        const struct hg_node_info *nd = hg_graph_node(m.g, order[i]);
        for (int k = 0; k < nd->n_in; k++)
            last[nd->in[k]] = i;
        if (nd->out >= 0 && first[nd->out] < 0)
            first[nd->out] = i;
    }
    int checked = 0;
    for (int a = 0; a < nt; a++)
        for (int b = a + 1; b < nt; b++) {
            const struct hg_tensor_info *ta = hg_graph_tensor(m.g, a);
            const struct hg_tensor_info *tb = hg_graph_tensor(m.g, b);
            if (ta->kind != HG_T_ACT || tb->kind != HG_T_ACT || first[a] < 0 || first[b] < 0)
                continue;
            int la = last[a] > first[a] ? last[a] : n, lb = last[b] > first[b] ? last[b] : n;
            if (!(first[a] <= lb && first[b] <= la))
                continue;
            char *pa = hg_exec_data(ex, a), *pb = hg_exec_data(ex, b);
            size_t sa = (size_t)hg_shape_numel(&ta->shape) * hg_dtype_size(ta->dtype);
            size_t sb = (size_t)hg_shape_numel(&tb->shape) * hg_dtype_size(tb->dtype);
            EXPECT(pa + sa <= pb || pb + sb <= pa, "live tensors %s and %s overlap",
                   ta->name, tb->name);
            checked++;
        }
    EXPECT(checked > 10, "only %d live pairs checked", checked);

    /* params and grads: flat blocks in the same order */
    size_t np, ng;
    float *pb = hg_exec_param_block(ex, &np), *gb = hg_exec_grad_block(ex, &ng);
    EXPECT(np == (size_t)hg_graph_param_count(m.g) && ng == np, "blocks %zu %zu", np, ng);
    size_t off = 0;
    for (int i = 0; i < hg_graph_n_params(m.g); i++) {
        int p = hg_graph_param_at(m.g, i);
        EXPECT((float *)hg_exec_data(ex, p) == pb + off, "param %d not in block", i);
        EXPECT((float *)hg_exec_data(ex, hg_graph_grad(m.g, p)) == gb + off,
               "grad %d not in block", i);
        off += (size_t)hg_shape_numel(&hg_graph_tensor(m.g, p)->shape);
    }
    free(first);
    free(last);
    free(order);
    hg_exec_free(ex);
    hg_graph_free(m.g);
}

/* A batch smaller than the plan's maximum gives exactly what a graph built
 * for that batch gives; a larger one is refused with the symbol named. */
static void test_symbolic(void)
{
    struct mlp a, b;
    build_mlp(&a, 16, HG_OPTIM_SGD);
    build_mlp(&b, 5, HG_OPTIM_SGD);
    int *oa, *ob, na, nb;
    struct hg_exec *ea = plan(a.g, HG_PH_FORWARD | HG_PH_BACKWARD, &oa, &na);
    struct hg_exec *eb = plan(b.g, HG_PH_FORWARD | HG_PH_BACKWARD, &ob, &nb);
    hg_graph_init_params(a.g, ea, 7);
    hg_graph_init_params(b.g, eb, 7);
    int64_t sym[1] = {5};
    struct hg_step st = {.sym = sym, .step = 1, .grad_scale = 1.f};
    char err[256];
    EXPECT(hg_exec_prepare(ea, &st, err, sizeof(err)) == 0, "%s", err);
    EXPECT(hg_graph_tensor(a.g, a.logits)->shape.dim[0] == 5, "logits rows");
    fill_data(ea, &a, 5, 1);
    fill_data(eb, &b, 5, 1);
    EXPECT(hg_exec_run(ea, &st, 0, na, err, sizeof(err)) == 0, "%s", err);
    EXPECT(hg_exec_run(eb, NULL, 0, nb, err, sizeof(err)) == 0, "%s", err);
    float la = *(float *)hg_exec_data(ea, a.loss), lb = *(float *)hg_exec_data(eb, b.loss);
    EXPECT(la == lb, "loss %g vs %g", la, lb);
    size_t n1, n2;
    float *g1 = hg_exec_grad_block(ea, &n1), *g2 = hg_exec_grad_block(eb, &n2);
    EXPECT(n1 == n2 && memcmp(g1, g2, n1 * sizeof(float)) == 0, "grads differ");

    int64_t big[1] = {17};
    struct hg_step sb = {.sym = big, .step = 1};
    err[0] = 0;
    EXPECT(hg_exec_run(ea, &sb, 0, na, err, sizeof(err)) == -1, "batch 17 > 16 accepted");
    EXPECT(strstr(err, "batch") != NULL, "message does not name the symbol: %s", err);

    /* batch axes: data and activations carry it, the loss and grads do not */
    EXPECT(hg_graph_tensor(a.g, a.logits)->batch_axis == 0, "logits");
    EXPECT(hg_graph_tensor(a.g, a.h)->batch_axis == 0, "hidden");
    EXPECT(hg_graph_tensor(a.g, a.loss)->batch_axis == -1, "loss");
    EXPECT(hg_graph_tensor(a.g, hg_graph_grad(a.g, a.w1))->batch_axis == -1, "grad");
    free(oa);
    free(ob);
    hg_exec_free(ea);
    hg_exec_free(eb);
    hg_graph_free(a.g);
    hg_graph_free(b.g);
}

/* Any topological order computes the same thing: the order is an input. */
static void test_orders(void)
{
    struct mlp m;
    build_mlp(&m, 8, HG_OPTIM_SGD);
    int *o1, n1;
    struct hg_exec *e1 = plan(m.g, HG_PH_FORWARD | HG_PH_BACKWARD, &o1, &n1);
    /* a different valid order: Kahn's algorithm taking the newest ready node */
    int nn = hg_graph_n_nodes(m.g), nt = hg_graph_n_tensors(m.g);
    char *ready_t = calloc((size_t)nt, 1), *done = calloc((size_t)nn, 1);
    int *o2 = malloc((size_t)nn * sizeof(int)), n2 = 0;
    for (int t = 0; t < nt; t++)
        ready_t[t] = hg_graph_tensor(m.g, t)->producer < 0;
    while (n2 < n1) {
        int pick = -1;
        for (int i = n1 - 1; i >= 0 && pick < 0; i--) {
            int id = o1[i];
            if (done[id])
                continue;
            const struct hg_node_info *nd = hg_graph_node(m.g, id);
            int ok = 1;
            for (int k = 0; k < nd->n_in; k++)
                ok &= ready_t[nd->in[k]];
            if (ok)
                pick = id;
        }
        done[pick] = 1;
        o2[n2++] = pick;
        if (hg_graph_node(m.g, pick)->out >= 0)
            ready_t[hg_graph_node(m.g, pick)->out] = 1;
    }
    EXPECT(memcmp(o1, o2, (size_t)n1 * sizeof(int)) != 0, "orders are identical");
    char err[256];
    struct hg_exec *e2 = hg_exec_new(m.g, o2, n2, err, sizeof(err));
    EXPECT(e2 != NULL, "%s", err);
    hg_graph_init_params(m.g, e1, 3);
    hg_graph_init_params(m.g, e2, 3);
    fill_data(e1, &m, 8, 2);
    fill_data(e2, &m, 8, 2);
    EXPECT(hg_exec_run(e1, NULL, 0, n1, err, sizeof(err)) == 0, "%s", err);
    EXPECT(hg_exec_run(e2, NULL, 0, n2, err, sizeof(err)) == 0, "%s", err);
    size_t a, b;
    float *g1 = hg_exec_grad_block(e1, &a), *g2 = hg_exec_grad_block(e2, &b);
    EXPECT(a == b && memcmp(g1, g2, a * sizeof(float)) == 0, "grads differ by order");
    free(ready_t);
    free(done);
    free(o1);
    free(o2);
    hg_exec_free(e1);
    hg_exec_free(e2);
    hg_graph_free(m.g);
}

/* A param used twice gets the sum of both uses; an unused one gets zeros. */
static void test_accumulation(void)
{
    struct hg_graph *g = hg_graph_new();
    int64_t xd[2] = {4, 6}, wd[2] = {5, 6};
    int x = hg_graph_input(g, "x", HG_F32, 2, xd, 0);
    int w = hg_graph_param(g, "w", 2, wd, HG_INIT_UNIFORM, 1.f);
    int unused = hg_graph_param(g, "unused", 2, wd, HG_INIT_UNIFORM, 1.f);
    int y1 = hg_matmul(g, x, w, 0, 1), y2 = hg_matmul(g, x, w, 0, 1);
    int loss = hg_sum(g, hg_add(g, y1, y2), HG_AXIS_ALL);
    hg_graph_backward(g, loss);
    int *order, n;
    struct hg_exec *ex = plan(g, HG_PH_ALL, &order, &n);
    hg_graph_init_params(g, ex, 1);
    float *xv = hg_exec_data(ex, x);
    for (int i = 0; i < 24; i++)
        xv[i] = frand();
    char err[256];
    EXPECT(hg_exec_run(ex, NULL, 0, n, err, sizeof(err)) == 0, "%s", err);
    const float *gw = hg_exec_data(ex, hg_graph_grad(g, w));
    const float *gu = hg_exec_data(ex, hg_graph_grad(g, unused));
    double maxerr = 0, maxu = 0;
    for (int o = 0; o < 5; o++)
        for (int j = 0; j < 6; j++) {
            double ref = 0; /* d/dw sum(2 x w^T) = 2 * sum over rows of x */
            for (int i = 0; i < 4; i++)
                ref += 2.0 * xv[i * 6 + j];
            maxerr = fmax(maxerr, fabs(gw[o * 6 + j] - ref));
            maxu = fmax(maxu, fabs(gu[o * 6 + j]));
        }
    EXPECT(maxerr < 1e-5, "shared grad off by %g", maxerr);
    EXPECT(maxu == 0, "unused grad %g", maxu);
    free(order);
    hg_exec_free(ex);
    hg_graph_free(g);
}

static const char *optim_name(enum hg_optim opt)
{
    switch (opt) {
    case HG_OPTIM_SGD: return "sgd";
    case HG_OPTIM_ADAMW: return "adamw";
    case HG_OPTIM_ADAM: return "adam";
    case HG_OPTIM_ADADELTA: return "adadelta";
    }
    return "?";
}

/* The update nodes and state tensors hg_graph_optimizer appends: one node
 * of the right op (Adam: adam.l2 set) per param, states with torch's names. */
static void check_optimizer_nodes(const struct mlp *m, enum hg_optim opt)
{
    static const char *st[][2] = {
        [HG_OPTIM_SGD] = {"momentum_buffer", NULL},
        [HG_OPTIM_ADAMW] = {"exp_avg", "exp_avg_sq"},
        [HG_OPTIM_ADAM] = {"exp_avg", "exp_avg_sq"},
        [HG_OPTIM_ADADELTA] = {"square_avg", "acc_delta"},
    };
    enum hg_op want = opt == HG_OPTIM_SGD        ? HG_OP_SGD_STEP
                      : opt == HG_OPTIM_ADADELTA ? HG_OP_ADADELTA_STEP
                                                 : HG_OP_ADAMW_STEP;
    int nupd = 0;
    for (int i = 0; i < hg_graph_n_nodes(m->g); i++) {
        const struct hg_node_info *nd = hg_graph_node(m->g, i);
        if (nd->op != want)
            continue;
        nupd++;
        if (want == HG_OP_ADAMW_STEP)
            EXPECT(nd->attr.adam.l2 == (opt == HG_OPTIM_ADAM), "%s: adam.l2 %d",
                   optim_name(opt), nd->attr.adam.l2);
    }
    EXPECT(nupd == 4, "%s: %d update nodes, want 4", optim_name(opt), nupd);
    for (int k = 0; k < 2 && st[opt][k]; k++) {
        char name[64];
        snprintf(name, sizeof name, "fc1.weight.%s", st[opt][k]);
        int t = hg_graph_find(m->g, name);
        EXPECT(t >= 0 && hg_graph_tensor(m->g, t)->kind == HG_T_STATE,
               "%s: no state tensor %s", optim_name(opt), name);
    }
}

/* Every optimizer drives the loss of a separable problem down. */
static void test_training(enum hg_optim opt, float lr)
{
    struct mlp m;
    build_mlp(&m, 64, opt);
    check_optimizer_nodes(&m, opt);
    int *order, n;
    struct hg_exec *ex = plan(m.g, HG_PH_ALL, &order, &n);
    hg_graph_init_params(m.g, ex, 11);
    char err[256];
    float first = 0, last = 0;
    for (int s = 1; s <= 150; s++) {
        struct hg_step st = {.step = (uint64_t)s, .lr = lr, .grad_scale = 1.f / 64};
        fill_data(ex, &m, 64, s);
        if (hg_exec_run(ex, &st, 0, n, err, sizeof(err)) != 0) {
            EXPECT(0, "%s", err);
            break;
        }
        float l = *(float *)hg_exec_data(ex, m.loss) / 64;
        if (s <= 10)
            first += l / 10;
        if (s > 140)
            last += l / 10;
    }
    EXPECT(isfinite(last) && last < 0.5f * first, "%s: loss %.4f -> %.4f",
           optim_name(opt), first, last);
    printf("ok  training %s: loss %.4f -> %.4f\n", optim_name(opt), first, last);
    free(order);
    hg_exec_free(ex);
    hg_graph_free(m.g);
}

/* Bad data is a runtime error naming the node and the value, not a crash. */
static void test_runtime_error(void)
{
    struct hg_graph *g = hg_graph_new();
    int64_t idd[1] = {4};
    int ids = hg_graph_input(g, "tokens", HG_I32, 1, idd, 0);
    int e = hg_layer_embedding(g, "embed", ids, 10, 3);
    int loss = hg_sum(g, e, HG_AXIS_ALL);
    hg_graph_backward(g, loss);
    int *order, n;
    struct hg_exec *ex = plan(g, HG_PH_FORWARD, &order, &n);
    int32_t *iv = hg_exec_data(ex, ids);
    iv[0] = 1, iv[1] = 2, iv[2] = 12, iv[3] = 0;
    char err[512] = "";
    EXPECT(hg_exec_run(ex, NULL, 0, n, err, sizeof(err)) == -1, "bad id accepted");
    EXPECT(strstr(err, "embedding") && strstr(err, "12"), "message: %s", err);
    printf("ok  runtime error: %s\n", err);
    free(order);
    hg_exec_free(ex);
    hg_graph_free(g);
}

/* Transformer layers build, carry the batch axis, and their plan reuses. */
static void test_transformer_plan(void)
{
    struct hg_graph *g = hg_graph_new();
    int64_t B = hg_graph_sym(g, "batch", 4), T = hg_graph_sym(g, "src_len", 7);
    int64_t U = hg_graph_sym(g, "tgt_len", 5);
    int64_t sd[3] = {B, T, 16}, kd[2] = {B, T}, td[3] = {B, U, 16};
    int src = hg_graph_input(g, "src", HG_F32, 3, sd, 0);
    int keep = hg_graph_input(g, "src_keep", HG_I32, 2, kd, 0);
    int tgt = hg_graph_input(g, "tgt", HG_F32, 3, td, 0);
    int enc = hg_layer_transformer_encoder(g, "enc", src, keep, 16, 4, 32, 0.1f, 1);
    int dec = hg_layer_transformer_decoder(g, "dec", tgt, enc, keep, 16, 4, 32, 0.1f, 1);
    EXPECT(hg_graph_tensor(g, enc)->batch_axis == 0, "enc batch axis");
    EXPECT(hg_graph_tensor(g, dec)->batch_axis == 0, "dec batch axis");
    int loss = hg_sum(g, dec, HG_AXIS_ALL);
    hg_graph_backward(g, loss);
    union hg_attr h = {.adam = {0.9f, 0.98f, 1e-8f, 0.f}};
    hg_graph_optimizer(g, HG_OPTIM_ADAMW, &h);
    int *order, n;
    struct hg_exec *ex = plan(g, HG_PH_ALL, &order, &n);
    EXPECT(ex != NULL, "plan");
    hg_graph_init_params(g, ex, 5);
    struct hg_mem_stats st;
    hg_exec_mem(ex, &st);
    EXPECT(st.act_bytes < st.act_naive / 2, "arena %zu naive %zu", st.act_bytes,
           st.act_naive);
    int64_t sym[3] = {3, 6, 2};
    struct hg_step s = {.sym = sym, .step = 1, .lr = 1e-3f, .grad_scale = 1.f};
    char err[256];
    EXPECT(hg_exec_prepare(ex, &s, err, sizeof(err)) == 0, "%s", err);
    float *sv = hg_exec_data(ex, src), *tv = hg_exec_data(ex, tgt);
    int32_t *kv = hg_exec_data(ex, keep);
    for (int i = 0; i < 3 * 6 * 16; i++)
        sv[i] = frand();
    for (int i = 0; i < 3 * 2 * 16; i++)
        tv[i] = frand();
    for (int i = 0; i < 3 * 6; i++)
        kv[i] = (i % 6) < 4 + (i / 6) % 3;
    EXPECT(hg_exec_run(ex, &s, 0, n, err, sizeof(err)) == 0, "%s", err);
    float l = *(float *)hg_exec_data(ex, loss);
    EXPECT(isfinite(l), "loss %g", l);

    /* Reshapes of activations are views (their input's bytes), so are
     * slices with only 1s before their axis (attention's gradient stacks
     * [2 or 3,B,H,T,Dh]), at the slice's start for these (not the
     * planned) lengths; apart from views no two activations live at once
     * share a byte, the views' readers counting as their root's
     * (memplan.c). */
    int nt = hg_graph_n_tensors(g), nviews = 0, nslices = 0, checked = 0;
    int *root = malloc((size_t)nt * sizeof(int)), *first = malloc((size_t)nt * sizeof(int));
    int *last = malloc((size_t)nt * sizeof(int));
    for (int t = 0; t < nt; t++) {
        root[t] = t;
        first[t] = last[t] = -1;
    }
    for (int i = 0; i < n; i++) {
        const struct hg_node_info *nd = hg_graph_node(g, order[i]);
        if ((nd->op == HG_OP_RESHAPE || nd->op == HG_OP_RESHAPE_LIKE) &&
            hg_graph_tensor(g, nd->out)->kind == HG_T_ACT &&
            hg_graph_tensor(g, nd->in[0])->kind == HG_T_ACT) {
            EXPECT(hg_exec_data(ex, nd->out) == hg_exec_data(ex, nd->in[0]),
                   "reshape %s is a copy", hg_graph_tensor(g, nd->out)->name);
            root[nd->out] = root[nd->in[0]];
            nviews++;
        }
        if (nd->op == HG_OP_SLICE && hg_graph_tensor(g, nd->out)->kind == HG_T_ACT) {
            const struct hg_shape *xs = &hg_graph_tensor(g, nd->in[0])->shape;
            int ax = nd->attr.slice.axis < 0 ? nd->attr.slice.axis + xs->ndim
                                             : nd->attr.slice.axis;
            int64_t outer = 1, inner = 1;
            for (int d = 0; d < xs->ndim; d++)
                *(d < ax ? &outer : &inner) *= d == ax ? 1 : xs->dim[d];
            EXPECT(outer == 1, "a slice of %s: %lld rows", hg_graph_tensor(g, nd->in[0])->name,
                   (long long)outer);
            EXPECT((char *)hg_exec_data(ex, nd->out) ==
                       (char *)hg_exec_data(ex, nd->in[0]) +
                           nd->attr.slice.start * inner * (int64_t)sizeof(float),
                   "slice %s is not its input's bytes from its start",
                   hg_graph_tensor(g, nd->out)->name);
            root[nd->out] = root[nd->in[0]];
            nviews++;
            nslices++;
        }
        for (int k = 0; k < nd->n_in; k++)
            last[nd->in[k]] = last[root[nd->in[k]]] = i;
        if (nd->out >= 0 && first[nd->out] < 0)
            first[nd->out] = i;
    }
    for (int t = 0; t < nt; t++)
        if (root[t] != t && last[t] > last[root[t]])
            last[root[t]] = last[t];
    for (int a = 0; a < nt; a++)
        for (int b = a + 1; b < nt; b++) {
            const struct hg_tensor_info *ta = hg_graph_tensor(g, a), *tb = hg_graph_tensor(g, b);
            if (ta->kind != HG_T_ACT || tb->kind != HG_T_ACT || first[a] < 0 ||
                first[b] < 0 || root[a] == root[b])
                continue;
            int ra = root[a], rb = root[b];
            int la = last[ra] > first[a] ? last[ra] : n, lb = last[rb] > first[b] ? last[rb] : n;
            if (!(first[a] <= lb && first[b] <= la))
                continue;
            char *pa = hg_exec_data(ex, a), *pb = hg_exec_data(ex, b);
            size_t sa = (size_t)hg_shape_numel(&ta->shape) * hg_dtype_size(ta->dtype);
            size_t sb = (size_t)hg_shape_numel(&tb->shape) * hg_dtype_size(tb->dtype);
            EXPECT(pa + sa <= pb || pb + sb <= pa, "live tensors %s and %s overlap",
                   ta->name, tb->name);
            checked++;
        }
    /* slices: dq, dk, dv of two self-attentions, dk, dv of the cross one */
    EXPECT(nviews >= 20 && nslices == 8 && checked > 100, "%d views (%d slices), %d live pairs "
           "checked", nviews, nslices, checked);
    /* one AdamW call for every parameter: params, grads, exp_avg and
     * exp_avg_sq each one span in update order */
    size_t copied, want = 0;
    int v, f, calls = hg_exec_kernel_calls(ex, &v, &f, &copied);
    EXPECT(v == nviews && f == hg_graph_n_params(g) - 1 && calls == n - v - f,
           "%d calls, %d views, %d fused of %d params", calls, v, f, hg_graph_n_params(g));
    /* the bytes layout ops that are not views write, at these lengths */
    for (int i = 0; i < n; i++) {
        const struct hg_node_info *nd = hg_graph_node(g, order[i]);
        const enum hg_op op = nd->op;
        if ((op == HG_OP_RESHAPE || op == HG_OP_RESHAPE_LIKE || op == HG_OP_PERMUTE ||
             op == HG_OP_CONCAT || op == HG_OP_SLICE || op == HG_OP_SLICE_BWD) &&
            root[nd->out] == nd->out)
            want += (size_t)hg_shape_numel(&hg_graph_tensor(g, nd->out)->shape) * sizeof(float);
    }
    EXPECT(copied == want && want > 0, "%zu bytes copied per pass, expected %zu", copied, want);
    free(root);
    free(first);
    free(last);
    printf("ok  transformer plan: %d ops, %d views, arena %.1f KiB (naive %.1f KiB), loss %g\n",
           n, nviews, st.act_bytes / 1024.0, st.act_naive / 1024.0, l);
    free(order);
    hg_exec_free(ex);
    hg_graph_free(g);
}

/* A token cap plans batch x length <= cap: far less memory than max batch
 * x max length, the same numbers at every admissible point (corners and
 * inside) as the uncapped plan, and a clear error outside. */
static struct hg_graph *cap_graph(int capped, int *src, int *keep, int *tgt, int *loss)
{
    struct hg_graph *g = hg_graph_new();
    int64_t B = hg_graph_sym(g, "batch", 32), T = hg_graph_sym(g, "src_len", 32);
    int64_t U = hg_graph_sym(g, "tgt_len", 32);
    int64_t sd[3] = {B, T, 16}, kd[2] = {B, T}, td[3] = {B, U, 16};
    *src = hg_graph_input(g, "src", HG_F32, 3, sd, 0);
    *keep = hg_graph_input(g, "src_keep", HG_I32, 2, kd, 0);
    *tgt = hg_graph_input(g, "tgt", HG_F32, 3, td, 0);
    int enc = hg_layer_transformer_encoder(g, "enc", *src, *keep, 16, 4, 32, 0.f, 1);
    int dec = hg_layer_transformer_decoder(g, "dec", *tgt, enc, *keep, 16, 4, 32, 0.f, 1);
    *loss = hg_sum(g, dec, HG_AXIS_ALL);
    hg_graph_backward(g, *loss);
    if (capped) {
        int lens[2] = {1, 2};
        hg_graph_token_cap(g, 0, lens, 2, 64);
    }
    return g;
}

static void test_token_cap(void)
{
    int src[2], keep[2], tgt[2], loss[2], *order[2], n[2];
    struct hg_graph *g[2];
    struct hg_exec *ex[2];
    struct hg_mem_stats st[2];
    for (int c = 0; c < 2; c++) {
        g[c] = cap_graph(c, &src[c], &keep[c], &tgt[c], &loss[c]);
        ex[c] = plan(g[c], HG_PH_ALL, &order[c], &n[c]);
        REQUIRE(ex[c] != NULL, "plan %d", c);
        hg_graph_init_params(g[c], ex[c], 9);
        hg_exec_mem(ex[c], &st[c]);
    }
    EXPECT(st[1].act_bytes * 4 < st[0].act_bytes, "capped arena %zu vs %zu",
           st[1].act_bytes, st[0].act_bytes);
    static const int64_t pts[][3] = {{32, 2, 2}, {2, 32, 32}, {32, 2, 1}, {8, 8, 8},
                                     {4, 16, 10}, {3, 21, 17}, {1, 32, 32}};
    char err[256];
    for (size_t p = 0; p < sizeof pts / sizeof pts[0]; p++) {
        float l[2];
        size_t ng;
        double gsum[2] = {0, 0};
        for (int c = 0; c < 2; c++) {
            struct hg_step s = {.sym = pts[p], .step = 1, .grad_scale = 1.f};
            REQUIRE(hg_exec_prepare(ex[c], &s, err, sizeof(err)) == 0, "%s", err);
            int64_t b = pts[p][0], t = pts[p][1], u = pts[p][2];
            float *sv = hg_exec_data(ex[c], src[c]), *tv = hg_exec_data(ex[c], tgt[c]);
            int32_t *kv = hg_exec_data(ex[c], keep[c]);
            for (int64_t i = 0; i < b * t * 16; i++)
                sv[i] = (float)((i * 37) % 101) / 101.f - 0.5f;
            for (int64_t i = 0; i < b * u * 16; i++)
                tv[i] = (float)((i * 53) % 97) / 97.f - 0.5f;
            for (int64_t i = 0; i < b * t; i++)
                kv[i] = (i % t) < t - (i / t) % 2;
            REQUIRE(hg_exec_run(ex[c], &s, 0, n[c], err, sizeof(err)) == 0, "%s", err);
            l[c] = *(float *)hg_exec_data(ex[c], loss[c]);
            const float *gb = hg_exec_grad_block(ex[c], &ng);
            for (size_t i = 0; i < ng; i++)
                gsum[c] += fabs(gb[i]);
        }
        EXPECT(l[0] == l[1] && gsum[0] == gsum[1],
               "point %lld,%lld,%lld: capped loss %g grads %g vs %g %g",
               (long long)pts[p][0], (long long)pts[p][1], (long long)pts[p][2],
               l[1], gsum[1], l[0], gsum[0]);
    }
    int64_t over[3] = {32, 3, 2};
    struct hg_step s = {.sym = over, .step = 1, .grad_scale = 1.f};
    EXPECT(hg_exec_prepare(ex[1], &s, err, sizeof(err)) == -1 && strstr(err, "token cap 64") &&
               strstr(err, "src_len 3"), "over the cap: '%s'", err);
    printf("ok  token cap: arena %.1f KiB capped vs %.1f KiB at max batch x max length\n",
           st[1].act_bytes / 1024.0, st[0].act_bytes / 1024.0);
    for (int c = 0; c < 2; c++) {
        free(order[c]);
        hg_exec_free(ex[c]);
        hg_graph_free(g[c]);
    }
}

/* A cap that the maximum length does not divide (72 = 2 x 32 + 8): the
 * plan must still hold a batch of maximum-length sequences (here 2 x 32)
 * for every tensor, those without a batch axis too (the translation
 * task's positions [T,d]). The corners used to be batch ceil(72/32) = 3
 * with length ceil(72/3) = 24, so [T,16] got 24 rows and a 2 x 32 batch
 * wrote past them, into the next buffers (the loss seed among them:
 * training then followed a sign-flipped, scaled gradient). */
static struct hg_graph *cap_pos_graph(int capped, int *in, int *loss)
{
    struct hg_graph *g = hg_graph_new();
    int64_t B = hg_graph_sym(g, "batch", 32), T = hg_graph_sym(g, "src_len", 32);
    int64_t U = hg_graph_sym(g, "tgt_len", 32);
    int64_t sd[3] = {B, T, 16}, kd[2] = {B, T}, td[3] = {B, U, 16}, pd[2] = {U, 16};
    in[0] = hg_graph_input(g, "src", HG_F32, 3, sd, 0);
    in[1] = hg_graph_input(g, "src_keep", HG_I32, 2, kd, 0);
    in[2] = hg_graph_input(g, "tgt", HG_F32, 3, td, 0);
    in[3] = hg_graph_input(g, "tgt_positions", HG_F32, 2, pd, -1);
    int enc = hg_layer_transformer_encoder(g, "enc", in[0], in[1], 16, 4, 32, 0.f, 1);
    int y = hg_add(g, in[2], in[3]);
    int dec = hg_layer_transformer_decoder(g, "dec", y, enc, in[1], 16, 4, 32, 0.f, 1);
    *loss = hg_sum(g, dec, HG_AXIS_ALL);
    hg_graph_backward(g, *loss);
    if (capped) {
        int lens[2] = {1, 2};
        hg_graph_token_cap(g, 0, lens, 2, 72);
    }
    return g;
}

static void test_token_cap_uneven(void)
{
    int in[2][4], loss[2], *order[2], n[2];
    struct hg_graph *g[2];
    struct hg_exec *ex[2];
    for (int c = 0; c < 2; c++) {
        g[c] = cap_pos_graph(c, in[c], &loss[c]);
        ex[c] = plan(g[c], HG_PH_ALL, &order[c], &n[c]);
        REQUIRE(ex[c] != NULL, "plan %d", c);
        hg_graph_init_params(g[c], ex[c], 5);
    }
    /* every length reaches its maximum at some corner */
    int64_t corner[HG_MAX_SYMS + 1][HG_MAX_SYMS];
    int nc = hg_graph_token_corners(g[1], corner, HG_MAX_SYMS + 1);
    for (int k = 1; k <= 2; k++) {
        int64_t lmax = 0;
        for (int i = 0; i < nc; i++)
            lmax = corner[i][k] > lmax ? corner[i][k] : lmax;
        EXPECT(lmax == 32, "cap 72: %s is at most %lld at the corners, not 32",
               hg_graph_sym_name(g[1], k), (long long)lmax);
    }
    static const int64_t pts[][3] = {{2, 32, 32}, {1, 32, 32}, {2, 32, 7}, {2, 5, 32},
                                     {3, 24, 24}, {9, 8, 8},   {32, 2, 2}};
    char err[256];
    for (size_t p = 0; p < sizeof pts / sizeof pts[0]; p++) {
        float l[2] = {0, 0};
        double gsum[2] = {0, 0};
        for (int c = 0; c < 2; c++) {
            struct hg_step s = {.sym = pts[p], .step = 1, .grad_scale = 1.f};
            /* before running: the plan must hold every tensor at this point */
            REQUIRE(hg_exec_prepare(ex[c], &s, err, sizeof(err)) == 0, "point %lld,%lld,%lld: %s",
                    (long long)pts[p][0], (long long)pts[p][1], (long long)pts[p][2], err);
            int64_t b = pts[p][0], t = pts[p][1], u = pts[p][2];
            float *sv = hg_exec_data(ex[c], in[c][0]), *tv = hg_exec_data(ex[c], in[c][2]);
            float *pv = hg_exec_data(ex[c], in[c][3]);
            int32_t *kv = hg_exec_data(ex[c], in[c][1]);
            for (int64_t i = 0; i < b * t * 16; i++)
                sv[i] = (float)((i * 37) % 101) / 101.f - 0.5f;
            for (int64_t i = 0; i < b * u * 16; i++)
                tv[i] = (float)((i * 53) % 97) / 97.f - 0.5f;
            for (int64_t i = 0; i < u * 16; i++)
                pv[i] = (float)((i * 29) % 89) / 89.f - 0.5f;
            for (int64_t i = 0; i < b * t; i++)
                kv[i] = (i % t) < t - (i / t) % 2;
            REQUIRE(hg_exec_run(ex[c], &s, 0, n[c], err, sizeof(err)) == 0, "%s", err);
            l[c] = *(float *)hg_exec_data(ex[c], loss[c]);
            size_t ng;
            const float *gb = hg_exec_grad_block(ex[c], &ng);
            for (size_t i = 0; i < ng; i++)
                gsum[c] += gb[i]; /* signed: a flipped gradient shows */
        }
        EXPECT(l[0] == l[1] && gsum[0] == gsum[1],
               "cap 72, point %lld,%lld,%lld: capped loss %g grads %g, uncapped %g %g",
               (long long)pts[p][0], (long long)pts[p][1], (long long)pts[p][2], l[1],
               gsum[1], l[0], gsum[0]);
    }
    printf("ok  token cap 72 with lengths up to 32: full-length batches fit, same numbers\n");
    for (int c = 0; c < 2; c++) {
        free(order[c]);
        hg_exec_free(ex[c]);
        hg_graph_free(g[c]);
    }
}

/* ---- communication ops through a fake comm table ---------------------- */

/* A loopback "world of two identical ranks": start doubles a span in
 * place (the sum of two equal copies), SEND copies into a mailbox, RECV
 * copies it out; every call is recorded with the position it came at. */
struct loop_ev {
    int node, start, pos;
    double t; /* hg_now() at the call */
};
struct loop {
    struct loop_ev ev[64];
    int nev;
    int nap_ms; /* an ALLREDUCE's wait takes this long: a slow link */
    float box[256]; /* SEND -> RECV */
    size_t box_bytes;
};

static int loop_call(struct loop *L, struct hg_exec *ex, int node, int start)
{
    if (L->nev < 64)
        L->ev[L->nev++] = (struct loop_ev){node, start, hg_exec_pos(ex), hg_now()};
    return 0;
}

static struct hg_graph *loop_graph; /* the graph the callbacks look at */

/* ALLREDUCE and SEND do their work at the start (a start before the
 * buffer is final shows in the values), RECV at its wait */
static int loop_do(struct loop *L, struct hg_exec *ex, int node, int start, char *err,
                   size_t errlen)
{
    struct hg_exec_buf b;
    hg_exec_comm_buf(ex, node, &b);
    loop_call(L, ex, node, start);
    enum hg_op op = hg_graph_node(loop_graph, node)->op;
    if (op == HG_OP_ALLREDUCE && start) {
        float *x = b.host; /* [bytes / 4] */
        for (size_t i = 0; i < b.bytes / sizeof(float); i++)
            x[i] *= 2;
    } else if (op == HG_OP_SEND && start) {
        if (b.bytes > sizeof L->box)
            return hg_kerr(err, errlen, "loopback: %zu bytes", b.bytes);
        memcpy(L->box, b.host, b.bytes);
        L->box_bytes = b.bytes;
    } else if (op == HG_OP_ALLREDUCE && L->nap_ms > 0) {
        struct timespec ts = {.tv_sec = L->nap_ms / 1000,
                              .tv_nsec = (long)(L->nap_ms % 1000) * 1000000};
        while (nanosleep(&ts, &ts) != 0)
            ;
    } else if (op == HG_OP_RECV && !start) {
        if (b.bytes != L->box_bytes)
            return hg_kerr(err, errlen, "loopback: recv of %zu bytes, sent %zu", b.bytes,
                           L->box_bytes);
        memcpy(b.host, L->box, b.bytes);
    }
    return 0;
}

static int loop_start(void *arg, struct hg_exec *ex, int node, char *err, size_t errlen)
{
    return loop_do(arg, ex, node, 1, err, errlen);
}

static int loop_wait(void *arg, struct hg_exec *ex, int node, char *err, size_t errlen)
{
    return loop_do(arg, ex, node, 0, err, errlen);
}

static const struct hg_exec_comm_ops loop_ops = {.start = loop_start, .wait = loop_wait};

/* The MLP with its gradients all-reduced by three nodes between the
 * backward and the optimizer, as controller/dp.c builds them. */
static void test_comm_allreduce(void)
{
    struct mlp m;
    struct hg_graph *g = m.g = hg_graph_new();
    int64_t B = hg_graph_sym(g, "batch", 6);
    int64_t xd[2] = {B, 8};
    m.x = hg_graph_input(g, "x", HG_F32, 2, xd, 0);
    m.y = hg_graph_input(g, "y", HG_I32, 1, &B, 0);
    m.h = hg_relu(g, hg_layer_linear(g, "fc1", m.x, 8, 16, 1));
    m.logits = hg_layer_linear(g, "fc2", m.h, 16, 3, 1);
    m.loss = hg_cross_entropy(g, m.logits, m.y, -100, 0.f);
    hg_graph_backward(g, m.loss);
    int gw1 = hg_graph_find(g, "fc1.weight.grad"), gb1 = hg_graph_find(g, "fc1.bias.grad");
    int gw2 = hg_graph_find(g, "fc2.weight.grad"), gb2 = hg_graph_find(g, "fc2.bias.grad");
    REQUIRE(gw1 >= 0 && gb1 >= 0 && gw2 >= 0 && gb2 >= 0, "grads");
    EXPECT(hg_graph_set_phase(g, HG_PH_UPDATE) == HG_PH_FORWARD, "phase after backward");
    union hg_attr at = {.comm = {.group = 0, .peer = -1}};
    /* fc2's gradients are final first (the backward starts there) */
    int nfirst = hg_graph_n_nodes(g);
    hg_graph_comm_span(g, HG_OP_ALLREDUCE, gw2, gb2, &at);
    hg_graph_comm_span(g, HG_OP_ALLREDUCE, gw1, gw1, &at);
    hg_graph_comm_span(g, HG_OP_ALLREDUCE, gb1, gb1, &at);
    hg_graph_set_phase(g, HG_PH_FORWARD);
    const struct hg_node_info *a0 = hg_graph_node(g, nfirst);
    EXPECT(a0->n_in == 2 && a0->attr.comm.count == 16 * 3 + 3 && a0->out < 0 &&
           a0->phase == HG_PH_UPDATE, "span node: n_in %d count %lld", a0->n_in,
           (long long)a0->attr.comm.count);
    EXPECT(hg_graph_node(g, nfirst + 1)->n_in == 1 &&
           hg_graph_node(g, nfirst + 1)->attr.comm.count == 0, "one-tensor node");
    union hg_attr h = {.sgd = {.momentum = 0.9f}};
    hg_graph_optimizer(g, HG_OPTIM_SGD, &h);

    /* cost: bytes moved, no flops */
    struct hg_shape in2[2] = {hg_graph_tensor(g, gw2)->shape, hg_graph_tensor(g, gb2)->shape};
    struct hg_cost c = {1, 1};
    hg_op_table[HG_OP_ALLREDUCE].cost(in2, 2, NULL, &a0->attr, &c);
    EXPECT(c.flops == 0 && c.bytes == 4.0 * 51, "allreduce cost %g flops %g bytes", c.flops,
           c.bytes);

    int *order, n;
    struct hg_exec *ex = plan(g, HG_PH_ALL, &order, &n);
    REQUIRE(ex, "plan");
    int n_fb = 0;
    while (hg_graph_node(g, order[n_fb])->phase != HG_PH_UPDATE)
        n_fb++;
    int n_c = n_fb + 3;
    /* the ready positions: the last forward/backward node using the span */
    for (int k = 0; k < 3; k++) {
        const struct hg_node_info *nd = hg_graph_node(g, order[n_fb + k]);
        int want = -1;
        for (int i = 0; i < n_fb; i++) {
            const struct hg_node_info *o = hg_graph_node(g, order[i]);
            for (int j = 0; j <= o->n_in; j++) {
                int t = j < o->n_in ? o->in[j] : o->out;
                for (int q = 0; q < nd->n_in; q++)
                    want = t >= 0 && t == nd->in[q] ? i : want;
            }
        }
        EXPECT(hg_exec_comm_ready(ex, n_fb + k) == want && want >= 0 && want < n_fb,
               "node %d: ready %d, expected %d", order[n_fb + k],
               hg_exec_comm_ready(ex, n_fb + k), want);
    }

    /* no callbacks: a clear error naming the node */
    char err[512] = "";
    struct hg_step st = {.step = 1, .grad_scale = 1.f};
    fill_data(ex, &m, 6, 1);
    REQUIRE(hg_exec_run(ex, &st, 0, n_fb, err, sizeof err) == 0, "%s", err);
    EXPECT(hg_exec_run(ex, &st, n_fb, n_c, err, sizeof err) == -1 &&
               strstr(err, "allreduce") && strstr(err, "no comm callbacks"),
           "no callbacks: %s", err);
    printf("ok  comm op without callbacks: %s\n", err);

    struct loop L;
    loop_graph = g;
    hg_exec_set_comm(ex, &loop_ops, &L);
    size_t ng;
    float *gb = hg_exec_grad_block(ex, &ng); /* [ng] */
    float *ref = malloc(ng * sizeof *ref);    /* [ng] one rank's gradient */
    REQUIRE(ref, "alloc");
    for (int early = 0; early < 2; early++) {
        memset(&L, 0, sizeof L);
        hg_exec_set_early_comm(ex, 0);
        REQUIRE(hg_exec_run(ex, &st, 0, n_fb, err, sizeof err) == 0, "%s", err);
        memcpy(ref, gb, ng * sizeof *ref);
        memset(&L, 0, sizeof L);
        hg_exec_set_early_comm(ex, early);
        REQUIRE(hg_exec_run(ex, &st, 0, n_fb, err, sizeof err) == 0, "%s", err);
        REQUIRE(hg_exec_run(ex, &st, n_fb, n_c, err, sizeof err) == 0, "%s", err);
        int bad = 0;
        for (size_t i = 0; i < ng; i++)
            bad += gb[i] != 2 * ref[i];
        EXPECT(bad == 0, "early %d: %d gradients are not twice one rank's", early, bad);
        /* starts in position order, each wait at its own position */
        int ns = 0, nw = 0;
        for (int e = 0; e < L.nev; e++) {
            int k = L.ev[e].start ? ns++ : nw++;
            EXPECT(L.ev[e].node == order[n_fb + k], "early %d: event %d is node %d, "
                   "expected %d", early, e, L.ev[e].node, order[n_fb + k]);
            int want = L.ev[e].start ? (early ? hg_exec_comm_ready(ex, n_fb + k) : n_fb)
                                     : n_fb + k;
            /* a start waits for the starts before it */
            if (early && k > 0 && L.ev[e].start)
                want = want > L.ev[e - 1].pos ? want : L.ev[e - 1].pos;
            EXPECT(L.ev[e].pos == want, "early %d: node %d %s at position %d, expected %d",
                   early, L.ev[e].node, L.ev[e].start ? "started" : "waited", L.ev[e].pos,
                   want);
        }
        EXPECT(ns == 3 && nw == 3, "early %d: %d starts, %d waits", early, ns, nw);
        /* the update range runs as before */
        REQUIRE(hg_exec_run(ex, &st, n_c, n, err, sizeof err) == 0, "%s", err);
    }
    printf("ok  allreduce nodes: ready at %d %d %d of %d forward/backward nodes\n",
           hg_exec_comm_ready(ex, n_fb), hg_exec_comm_ready(ex, n_fb + 1),
           hg_exec_comm_ready(ex, n_fb + 2), n_fb);

    /* a span the layout does not hold is refused at plan time */
    struct hg_graph *g2 = hg_graph_new();
    int64_t d4[1] = {4};
    int p1 = hg_graph_param(g2, "p1", 1, d4, HG_INIT_ONE, 1);
    int p2 = hg_graph_param(g2, "p2", 1, d4, HG_INIT_ONE, 1);
    int x2 = hg_graph_input(g2, "x", HG_F32, 1, d4, -1);
    hg_sum(g2, hg_add(g2, hg_mul(g2, x2, p1), p2), HG_AXIS_ALL);
    union hg_attr bad = {.comm = {.count = 7}};
    int in[2] = {p1, p2};
    hg_graph_op(g2, HG_OP_ALLREDUCE, in, 2, &bad);
    int *o2, n2;
    o2 = malloc((size_t)hg_graph_n_nodes(g2) * sizeof(int));
    n2 = hg_graph_order(g2, HG_PH_ALL, o2);
    EXPECT(hg_exec_new(g2, o2, n2, err, sizeof err) == NULL && strstr(err, "not a span"),
           "count 7 over 8 floats: %s", err);
    free(o2);
    hg_graph_free(g2);

    free(ref);
    free(order);
    hg_exec_free(ex);
    hg_graph_free(g);
}

/* SEND and RECV (a symbolic declared shape) through the loopback, and the
 * shape rules of the comm ops. */
static void test_comm_send_recv(void)
{
    struct hg_graph *g = hg_graph_new();
    int64_t B = hg_graph_sym(g, "batch", 5);
    int64_t xd[2] = {B, 4};
    int x = hg_graph_input(g, "x", HG_F32, 2, xd, 0);
    int r = hg_relu(g, x);
    union hg_attr sa = {.comm = {.peer = 1, .tag = 7, .dtype = HG_F32}};
    EXPECT(hg_graph_op(g, HG_OP_SEND, &r, 1, &sa) == -1, "send has no output");
    union hg_attr ra = {.comm = {.peer = 1, .tag = 7, .dtype = HG_F32, .ndim = 2,
                                 .batch_axis = 0, .dim = {(int32_t)B, 4}}};
    int y = hg_graph_op(g, HG_OP_RECV, NULL, 0, &ra);
    const struct hg_tensor_info *ti = hg_graph_tensor(g, y);
    EXPECT(ti->shape.ndim == 2 && ti->shape.dim[0] == 5 && ti->shape.dim[1] == 4 &&
           ti->batch_axis == 0 && ti->dtype == HG_F32, "recv's declared shape");
    int z = hg_scale(g, y, 3.f);
    hg_graph_keep(g, z);
    struct hg_cost c = {1, 1};
    hg_op_table[HG_OP_RECV].cost(NULL, 0, &ti->shape, &ra, &c);
    EXPECT(c.flops == 0 && c.bytes == 4.0 * 20, "recv cost %g %g", c.flops, c.bytes);
    c = (struct hg_cost){1, 1};
    hg_op_table[HG_OP_SEND].cost(&ti->shape, 1, NULL, &sa, &c);
    EXPECT(c.flops == 0 && c.bytes == 4.0 * 20, "send cost %g %g", c.flops, c.bytes);

    int *order, n;
    struct hg_exec *ex = plan(g, HG_PH_ALL, &order, &n);
    REQUIRE(ex, "plan");
    struct loop L;
    memset(&L, 0, sizeof L);
    loop_graph = g;
    hg_exec_set_comm(ex, &loop_ops, &L);
    hg_exec_set_early_comm(ex, 1);
    int64_t sym[1] = {3};
    struct hg_step st = {.sym = sym, .step = 1};
    char err[512] = "";
    REQUIRE(hg_exec_prepare(ex, &st, err, sizeof err) == 0, "%s", err);
    float *xv = hg_exec_data(ex, x); /* [3,4] */
    for (int i = 0; i < 12; i++)
        xv[i] = (float)(i - 5);
    REQUIRE(hg_exec_run(ex, &st, 0, n, err, sizeof err) == 0, "%s", err);
    const float *zv = hg_exec_data(ex, z); /* [3,4] */
    int bad = 0;
    for (int i = 0; i < 12; i++)
        bad += zv[i] != 3.f * (i > 5 ? (float)(i - 5) : 0.f);
    EXPECT(bad == 0 && L.box_bytes == 48, "recv'd %d wrong values, %zu bytes", bad,
           L.box_bytes);
    /* RECV has an output: never started before its position */
    for (int e = 0; e < L.nev; e++)
        if (hg_graph_node(g, L.ev[e].node)->op == HG_OP_RECV)
            EXPECT(order[L.ev[e].pos] == L.ev[e].node, "recv started at position %d",
                   L.ev[e].pos);
    EXPECT(L.nev == 4, "%d events", L.nev);
    printf("ok  send/recv through the loopback (batch 3 of 5)\n");

    /* shape rules */
    struct hg_shape s4 = {.ndim = 1, .dim = {4}}, out;
    enum hg_dtype f32[2] = {HG_F32, HG_F32}, i32 = HG_I32, odt;
    union hg_attr a = {.comm = {.dtype = HG_F32, .ndim = 0}};
    EXPECT(hg_op_table[HG_OP_RECV].shape(NULL, NULL, 0, &a, &out, &odt, err, sizeof err) ==
               -1 && strstr(err, "ndim"), "recv ndim 0: %s", err);
    a = (union hg_attr){.comm = {.dtype = HG_F32}};
    EXPECT(hg_op_table[HG_OP_SEND].shape(&s4, &i32, 1, &a, &out, &odt, err, sizeof err) ==
               -1 && strstr(err, "send"), "send i32 as f32: %s", err);
    struct hg_shape two[2] = {s4, s4};
    a = (union hg_attr){.comm = {.count = 3}};
    EXPECT(hg_op_table[HG_OP_ALLREDUCE].shape(two, f32, 2, &a, &out, &odt, err, sizeof err) ==
               -1 && strstr(err, "count"), "count 3 < 4: %s", err);
    a = (union hg_attr){.comm = {.count = 8}};
    EXPECT(hg_op_table[HG_OP_PS_PUSH].shape(two, f32, 2, &a, &out, &odt, err, sizeof err) == 0,
           "ps_push of 8: %s", err);
    for (int op = 0; op < HG_OP_COUNT; op++)
        if (hg_op_table[op].flags & HG_OPF_COMM)
            EXPECT(!hg_op_table[op].cpu && !hg_op_table[op].cuda, "%s has a kernel",
                   hg_op_table[op].name);
    printf("ok  comm shape and cost rules\n");
    free(order);
    hg_exec_free(ex);
    hg_graph_free(g);

    /* a backward through a comm op is a programmer error */
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stderr))
            _exit(2);
        struct hg_graph *gb = hg_graph_new();
        int64_t d[1] = {4};
        int p = hg_graph_param(gb, "p", 1, d, HG_INIT_ONE, 1);
        union hg_attr s1 = {.comm = {.peer = 1, .dtype = HG_F32}};
        hg_graph_op(gb, HG_OP_SEND, &p, 1, &s1);
        hg_graph_backward(gb, hg_sum(gb, p, HG_AXIS_ALL));
        _exit(0);
    }
    int ws = 0;
    waitpid(pid, &ws, 0);
    EXPECT(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGABRT, "backward through send: status %d",
           ws);
}

/* A RECV standing for another rank's tensor (model parallelism): its
 * shape follows the tensor's at every resolve, and so do the shapes of
 * the readers rewired to it, though it comes after them in id order. */
static void test_recv_like(void)
{
    struct mlp m;
    build_mlp(&m, 16, HG_OPTIM_SGD);
    struct hg_graph *g = m.g;
    union hg_attr at = {.comm = {.peer = 1, .tag = 7}};
    int r = hg_graph_recv_like(g, m.h, &at);
    const struct hg_tensor_info *ti = hg_graph_tensor(g, r);
    EXPECT(ti->shape.ndim == 2 && ti->shape.dim[0] == 16 && ti->shape.dim[1] == 16 &&
           ti->batch_axis == 0 && ti->dtype == HG_F32, "recv's shape");
    EXPECT(strstr(ti->name, ".recv") != NULL, "recv named %s", ti->name);
    EXPECT(hg_graph_node(g, ti->producer)->attr.comm.peer == 1 &&
           hg_graph_node(g, ti->producer)->attr.comm.tag == 7, "peer and tag kept");
    int reader = -1;
    for (int n = 0; n < hg_graph_n_nodes(g) && reader < 0; n++) {
        const struct hg_node_info *nd = hg_graph_node(g, n);
        for (int k = 0; k < nd->n_in; k++)
            if (nd->in[k] == m.h && nd->phase == HG_PH_FORWARD)
                reader = n;
    }
    EXPECT(reader >= 0 && reader < ti->producer, "a forward reader of h before the recv");
    hg_graph_rewire(g, reader, m.h, r);
    const struct hg_node_info *nd = hg_graph_node(g, reader);
    int reads_r = 0, reads_h = 0;
    for (int k = 0; k < nd->n_in; k++)
        reads_r += nd->in[k] == r, reads_h += nd->in[k] == m.h;
    EXPECT(reads_r == 1 && reads_h == 0, "rewired: reads recv %d, h %d", reads_r, reads_h);
    int64_t sym[1] = {5};
    char err[256] = "";
    EXPECT(hg_graph_resolve(g, sym, err, sizeof err) == 0, "%s", err);
    EXPECT(hg_graph_tensor(g, r)->shape.dim[0] == 5, "recv rows %lld",
           (long long)hg_graph_tensor(g, r)->shape.dim[0]);
    EXPECT(hg_graph_tensor(g, nd->out)->shape.dim[0] == 5, "reader rows %lld",
           (long long)hg_graph_tensor(g, nd->out)->shape.dim[0]);
    hg_graph_free(g);
}

/* x[B,D] -> 3 x (linear D, relu) -> linear 3 -> cross entropy, one
 * ALLREDUCE over the last layer's gradients, SGD with momentum: a step
 * takes a millisecond or two on one thread (seconds under valgrind). */
struct slow_net {
    struct hg_graph *g;
    struct hg_exec *ex;
    int *order, n, n_fb, x, y;
};

static void slow_net_new(struct slow_net *s)
{
    enum { B = 128, D = 224 };
    struct hg_graph *g = s->g = hg_graph_new();
    int64_t xd[2] = {B, D}, yd[1] = {B};
    s->x = hg_graph_input(g, "x", HG_F32, 2, xd, 0);
    s->y = hg_graph_input(g, "y", HG_I32, 1, yd, 0);
    int h = s->x;
    char name[16];
    for (int l = 0; l < 3; l++) {
        snprintf(name, sizeof name, "fc%d", l);
        h = hg_relu(g, hg_layer_linear(g, name, h, D, D, 1));
    }
    int loss = hg_cross_entropy(g, hg_layer_linear(g, "out", h, D, 3, 1), s->y, -100, 0.f);
    hg_graph_backward(g, loss);
    hg_graph_set_phase(g, HG_PH_UPDATE);
    union hg_attr at = {.comm = {.group = 0, .peer = -1}};
    hg_graph_comm_span(g, HG_OP_ALLREDUCE, hg_graph_find(g, "out.weight.grad"),
                       hg_graph_find(g, "out.bias.grad"), &at);
    hg_graph_set_phase(g, HG_PH_FORWARD);
    union hg_attr h2 = {.sgd = {.momentum = 0.9f}};
    hg_graph_optimizer(g, HG_OPTIM_SGD, &h2);
    s->ex = plan(g, HG_PH_ALL, &s->order, &s->n);
    REQUIRE(s->ex, "plan");
    for (s->n_fb = 0; hg_graph_node(g, s->order[s->n_fb])->phase != HG_PH_UPDATE;)
        s->n_fb++;
    hg_graph_init_params(g, s->ex, 7);
    float *x = hg_exec_data(s->ex, s->x); /* [B, D] */
    int32_t *y = hg_exec_data(s->ex, s->y); /* [B] */
    rng = 424242u;
    for (int i = 0; i < B * D; i++)
        x[i] = frand();
    for (int i = 0; i < B; i++)
        y[i] = i % 3;
}

static void slow_net_free(struct slow_net *s)
{
    free(s->order);
    hg_exec_free(s->ex);
    hg_graph_free(s->g);
}

/* Steps step, ..., step + n - 1 of the whole order (forward, backward,
 * allreduce started early, optimizer) slowed f times, each from no debt;
 * returns the seconds of the last one (*t0 its start, L and the profile
 * its events and times); *tmin: the least of its time and those of steps
 * after the first, less their comm node's time (a machine shared with
 * other jobs: the least disturbed). */
static double slow_steps(struct slow_net *s, struct loop *L, int nap_ms, double f,
                         int step, int n, double *t0, double *tmin)
{
    char err[512] = "";
    struct hg_step st = {.step = (uint64_t)step, .lr = 0.01f, .grad_scale = 1.f / 128,
                         .nthreads = 1};
    double t = 0;
    for (int k = 0; k < n; k++) {
        memset(L, 0, sizeof *L);
        L->nap_ms = nap_ms;
        hg_exec_profile(s->ex, 1); /* zeroed: this step's times */
        hg_exec_set_slowdown(s->ex, f);
        t = *t0 = hg_now();
        REQUIRE(hg_exec_run(s->ex, &st, 0, s->n, err, sizeof err) == 0, "%s", err);
        t = hg_now() - t;
        const double *pt = hg_exec_profile_times(s->ex);
        double c = 0;
        for (int i = 0; i < s->n; i++)
            if (hg_op_table[hg_graph_node(s->g, s->order[i])->op].flags & HG_OPF_COMM)
                c += pt[i];
        if (st.step > 1 && t - c < *tmin)
            *tmin = t - c;
        st.step++;
    }
    return t;
}

/* hg_exec_set_slowdown 3: a step takes 3 times its compute time plus the
 * comm node's own time (not slowed); the allreduce starts early only
 * after 3 times the compute before it; results are bitwise the same. */
static void test_slowdown(void)
{
    struct slow_net a, b;
    slow_net_new(&a);
    slow_net_new(&b);
    struct loop L;
    loop_graph = a.g;
    hg_exec_set_comm(a.ex, &loop_ops, &L);
    hg_exec_set_comm(b.ex, &loop_ops, &L);
    hg_exec_set_early_comm(a.ex, 1);
    hg_exec_set_early_comm(b.ex, 1);
    const int nap = 20; /* ms, the allreduce's wait */
    double t0, min_plain = INFINITY, min_slow = INFINITY;
    double t1 = slow_steps(&a, &L, nap, 1, 1, 1, &t0, &min_plain);
    /* 2 steps measured, 1 where a step takes long (valgrind) */
    int n = t1 > 0.25 + nap * 1e-3 ? 1 : 2;
    double t_plain = slow_steps(&a, &L, nap, 1, 2, n, &t0, &min_plain);
    double t_slow = slow_steps(&b, &L, nap, 3, 1, 1 + n, &t0, &min_slow);
    /* the slowed step's own compute (per-op times) and comm times */
    const double *pt = hg_exec_profile_times(b.ex);
    double comp = 0, comm = 0, before = 0;
    int pos_start = -1;
    double t_start = 0;
    for (int e = 0; e < L.nev; e++)
        if (L.ev[e].start) {
            pos_start = L.ev[e].pos;
            t_start = L.ev[e].t;
        }
    for (int i = 0; i < b.n; i++) {
        int is_comm = (hg_op_table[hg_graph_node(b.g, b.order[i])->op].flags &
                       HG_OPF_COMM) != 0;
        if (is_comm) {
            comm += pt[i];
            continue;
        }
        comp += pt[i];
        if (i <= pos_start)
            before += pt[i];
    }
    EXPECT(comm >= nap * 1e-3 && comm < 3 * nap * 1e-3, "the comm node took %.1f ms", comm * 1e3);
    /* 3x its compute plus its comm, not 3x the comm: a generous band */
    EXPECT(t_slow >= 2.9 * comp + comm && t_slow < 3.6 * comp + comm + 0.5 * nap * 1e-3,
           "step %.2f ms, 3 x compute + comm = %.2f ms", t_slow * 1e3,
           (3 * comp + comm) * 1e3);
    /* across two runs only a report: under ASan or a loaded machine the
     * plain run's time moves by itself (CI: 1.22 once); the check above
     * holds within one run */
    double r = min_slow / min_plain;
    printf("ok  slowdown 3: step %.1f ms (plain %.1f ms), compute %.1f ms, comm %.1f ms; "
           "fastest steps less their comm: %.2f x\n", t_slow * 1e3, t_plain * 1e3,
           comp * 1e3, comm * 1e3, r);
    /* the early start came after the slowdown of the ops before it */
    EXPECT(pos_start >= 0 && pos_start < b.n_fb, "allreduce started at %d", pos_start);
    EXPECT(t_start - t0 >= 2.95 * before, "allreduce started %.2f ms into the step, "
           "after %.2f ms of compute", (t_start - t0) * 1e3, before * 1e3);
    /* the results: both nets ran the same steps */
    size_t np, np2;
    const float *pa = hg_exec_param_block(a.ex, &np), *pb = hg_exec_param_block(b.ex, &np2);
    EXPECT(np == np2 && memcmp(pa, pb, np * sizeof(float)) == 0,
           "parameters differ with slowdown");
    slow_net_free(&a);
    slow_net_free(&b);
}

/* Recomputation: the first two layers' forward ops copied into the
 * backward (dropout included) gives the same losses and parameters bit for bit over batches
 * of changing size, in less activation memory; each copy runs after what
 * it reads and before its first reader; a backward node is refused. */
static struct hg_graph *rc_mlp(int recompute, int *x, int *y, int *loss)
{
    struct hg_graph *g = hg_graph_new();
    int64_t B = hg_graph_sym(g, "batch", 64);
    int64_t xd[2] = {B, 8};
    *x = hg_graph_input(g, "x", HG_F32, 2, xd, 0);
    *y = hg_graph_input(g, "y", HG_I32, 1, &B, 0);
    int h = hg_relu(g, hg_layer_linear(g, "fc1", *x, 8, 64, 1));
    h = hg_dropout(g, h, 0.25f, 17);
    h = hg_relu(g, hg_layer_linear(g, "fc2", h, 64, 64, 1));
    int cut = hg_graph_n_nodes(g); /* the first two layers' ops: recomputed */
    h = hg_relu(g, hg_layer_linear(g, "fc3", h, 64, 64, 1));
    h = hg_relu(g, hg_layer_linear(g, "fc4", h, 64, 64, 1));
    int logits = hg_layer_linear(g, "fc5", h, 64, 3, 1);
    *loss = hg_cross_entropy(g, logits, *y, -100, 0.f);
    int nf = hg_graph_n_nodes(g);
    hg_graph_backward(g, *loss);
    union hg_attr hy = {.sgd = {.momentum = 0.9f}};
    hg_graph_optimizer(g, HG_OPTIM_SGD, &hy);
    if (recompute) {
        int *v = malloc((size_t)nf * sizeof *v), n = 0;
        for (int i = 0; i < cut; i++)
            if (hg_graph_node(g, i)->out >= 0)
                v[n++] = i;
        char err[256] = "";
        int made = hg_graph_recompute(g, v, n, err, sizeof err);
        EXPECT(made >= 3 && made <= n, "recompute: %d copies of %d (%s)", made, n, err);
        free(v);
    }
    return g;
}

static void test_recompute(void)
{
    float loss[2][6];
    size_t act[2];
    float *params[2];
    size_t np = 0;
    for (int r = 0; r < 2; r++) {
        int x, y, l;
        struct hg_graph *g = rc_mlp(r, &x, &y, &l);
        int nn = hg_graph_n_nodes(g);
        int *order = malloc((size_t)nn * sizeof *order);
        int n = hg_graph_order(g, HG_PH_ALL, order);
        EXPECT(hg_graph_order_recompute(g, order, n) == 0, "order_recompute");
        if (r) {
            /* a copy after its inputs' producers, before its readers */
            int *pos = malloc((size_t)nn * sizeof *pos), copies = 0, nfw = 0;
            for (int i = 0; i < n; i++)
                pos[order[i]] = i, nfw += hg_graph_node(g, order[i])->phase == HG_PH_FORWARD;
            for (int i = 0; i < n; i++) {
                const struct hg_node_info *nd = hg_graph_node(g, order[i]);
                for (int k = 0; k < nd->n_in; k++) {
                    int p = hg_graph_tensor(g, nd->in[k])->producer;
                    EXPECT(p < 0 || pos[p] < i, "node %d reads node %d's output before it runs",
                           order[i], p);
                }
                if (hg_graph_node_recomputes(g, order[i]) >= 0) {
                    copies++;
                    EXPECT(nd->phase == HG_PH_BACKWARD, "a copy outside the backward");
                    EXPECT(i >= nfw, "copy %d at %d, in the forward (%d nodes)", order[i], i,
                           nfw);
                }
            }
            EXPECT(copies >= 3, "%d copies in the order", copies);
            free(pos);
        }
        char err[256];
        struct hg_exec *ex = hg_exec_new(g, order, n, err, sizeof err);
        EXPECT(ex != NULL, "plan: %s", err);
        if (!ex)
            return;
        hg_graph_init_params(g, ex, 5);
        struct hg_mem_stats ms;
        hg_exec_mem(ex, &ms);
        act[r] = ms.act_bytes;
        for (int s = 1; s <= 6; s++) {
            int b = 64 - 9 * (s % 3);
            int64_t sym[HG_MAX_SYMS] = {b};
            struct hg_step st = {.step = (uint64_t)s, .lr = 0.05f, .grad_scale = 1.f / b,
                                 .sym = sym};
            hg_exec_prepare(ex, &st, err, sizeof err);
            float *xv = hg_exec_data(ex, x);
            int32_t *yv = hg_exec_data(ex, y);
            rng = 99u + (uint64_t)s;
            for (int i = 0; i < b; i++) {
                for (int j = 0; j < 8; j++)
                    xv[i * 8 + j] = frand();
                yv[i] = xv[i * 8] > 0 ? (xv[i * 8 + 1] > 0 ? 0 : 1) : 2;
            }
            if (hg_exec_run(ex, &st, 0, n, err, sizeof err) != 0) {
                EXPECT(0, "run %d: %s", r, err);
                break;
            }
            loss[r][s - 1] = *(float *)hg_exec_data(ex, l);
        }
        float *pb = hg_exec_param_block(ex, &np);
        params[r] = malloc(np * sizeof(float));
        memcpy(params[r], pb, np * sizeof(float));
        if (r) {
            /* a backward node cannot be recomputed */
            int w = 0;
            while (hg_graph_node(g, w)->phase != HG_PH_BACKWARD)
                w++;
            EXPECT(hg_graph_recompute(g, &w, 1, err, sizeof err) == -1 &&
                       strstr(err, "not a forward op"), "backward node %d accepted: %s", w,
                   err);
        }
        free(order);
        hg_exec_free(ex);
        hg_graph_free(g);
    }
    EXPECT(memcmp(loss[0], loss[1], sizeof loss[0]) == 0, "losses differ: %.9g vs %.9g",
           loss[0][5], loss[1][5]);
    EXPECT(memcmp(params[0], params[1], np * sizeof(float)) == 0, "parameters differ");
    EXPECT(act[1] < act[0], "activations %zu with recomputation, %zu without", act[1], act[0]);
    printf("ok  recompute: bit for bit over 6 steps, activations %zu -> %zu bytes\n", act[0],
           act[1]);
    free(params[0]);
    free(params[1]);
}

int main(void)
{
    test_memory_plan();
    test_symbolic();
    test_orders();
    test_accumulation();
    test_training(HG_OPTIM_SGD, 0.1f);
    test_training(HG_OPTIM_ADAMW, 0.01f);
    test_training(HG_OPTIM_ADAM, 0.01f);
    test_training(HG_OPTIM_ADADELTA, 1.0f);
    test_runtime_error();
    test_transformer_plan();
    test_token_cap();
    test_token_cap_uneven();
    test_comm_allreduce();
    test_comm_send_recv();
    test_recv_like();
    test_slowdown();
    test_recompute();
    printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
