/* test_policy.c - the learned placement policy (planner/policy.c): on a
 * toy graph whose heavy op belongs on the fast device of two, REINFORCE
 * raises the reward and the greedy strategy puts it there; the forward
 * against a plain-C reference of the same math; the same seed gives the
 * same policy file byte for byte; files of another feature layout,
 * truncated or with a corrupted tensor are refused naming the file, and
 * so are tensors with a NaN, an inf or a 1e38 behind a valid CRC (naming
 * the tensor); an update that leaves a tensor non-finite or absurd stops
 * the training naming the tensor and the update, the policy unchanged,
 * and such a policy is never saved. */
#define _POSIX_C_SOURCE 200809L
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data/hg_h5.h"
#include "planner/hg_planner.h"
#include "planner/policy-file.h"
#include "planner/policy-impl.h"
#include "tests/hg_test.h"

/* One node of two devices over PCIe: device 1 is ten times faster than
 * device 0, so everything belongs on device 1, and each group moved there
 * pays on its own (over a slow network between two nodes only the move of
 * every group at once paid: a plateau a policy could leave by luck only,
 * and did for some seeds). */
static const char *toy_cluster =
    "name = \"toy\";\n"
    "nodes = (\n"
    "  { name = \"box\";\n"
    "    intra = { kind = \"pcie\"; bandwidth = \"12GB/s\"; latency = \"10us\"; };\n"
    "    devices = ( { kind = \"gpu\"; memory = \"8GiB\"; peak_flops = \"1TFLOP/s\";\n"
    "                  memory_bandwidth = \"100GB/s\"; },\n"
    "                { kind = \"gpu\"; memory = \"8GiB\"; peak_flops = \"10TFLOP/s\";\n"
    "                  memory_bandwidth = \"1000GB/s\"; } ); }\n"
    ");\n";

struct toy {
    struct hg_cluster *c;
    struct hg_graph *g;
    struct hg_pgraph *pg;
    struct hg_pprice *pr;
};

/* x[B,1024] -> linear 4096 -> relu -> linear 10 -> cross entropy, SGD */
static void toy_new(struct toy *t)
{
    char err[512];
    REQUIRE(hg_cluster_parse(&t->c, toy_cluster, "toy.cfg", err, sizeof(err)) == 0, "%s", err);
    struct hg_graph *g = t->g = hg_graph_new();
    int64_t B = hg_graph_sym(g, "batch", 64), xd[2] = {B, 1024};
    int x = hg_graph_input(g, "x", HG_F32, 2, xd, 0);
    int y = hg_graph_input(g, "y", HG_I32, 1, &B, 0);
    int h = hg_relu(g, hg_layer_linear(g, "fc1", x, 1024, 4096, 1));
    int loss = hg_cross_entropy(g, hg_layer_linear(g, "fc2", h, 4096, 10, 1), y, -100, 0.f);
    hg_graph_backward(g, loss);
    union hg_attr sgd = {.sgd = {.momentum = 0.9f}};
    hg_graph_optimizer(g, HG_OPTIM_SGD, &sgd);
    REQUIRE(hg_graph_resolve(g, NULL, err, sizeof(err)) == 0, "%s", err);
    REQUIRE(hg_pgraph_build(&t->pg, g, t->c, "toy", 64, err, sizeof(err)) == 0, "%s", err);
    REQUIRE(hg_pprice_build(&t->pr, t->pg, g, err, sizeof(err)) == 0, "%s", err);
}

static void toy_free(struct toy *t)
{
    hg_pprice_free(t->pr);
    hg_pgraph_free(t->pg);
    hg_graph_free(t->g);
    hg_cluster_free(t->c);
}

/* ------------------------------------------------------------ reference */

static const float *P(const struct hg_policy *p, const char *name, size_t want)
{
    size_t n = 0;
    const float *x = hg_policy_param(p, name, &n);
    REQUIRE(x != NULL && n == want, "param %s: %zu floats, want %zu", name, n, want);
    return x;
}

/* y[n, out] = x[n, in] W^T + b (torch.nn.Linear; W [out, in]) */
static void ref_linear(const struct hg_policy *p, const char *pre, const double *x, int n,
                       int in, int out, double *y)
{
    char nm[64];
    snprintf(nm, sizeof(nm), "%s.weight", pre);
    const float *w = P(p, nm, (size_t)in * out);
    snprintf(nm, sizeof(nm), "%s.bias", pre);
    const float *b = P(p, nm, (size_t)out);
    for (int i = 0; i < n; i++)
        for (int o = 0; o < out; o++) {
            double s = b[o];
            for (int k = 0; k < in; k++)
                s += x[(size_t)i * in + k] * w[(size_t)o * in + k];
            y[(size_t)i * out + o] = s;
        }
}

static void ref_relu(double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = x[i] > 0 ? x[i] : 0;
}

/* x = LN(x + r) in place, eps 1e-5 */
static void ref_add_ln(const struct hg_policy *p, const char *pre, double *x, const double *r,
                       int n, int d)
{
    char nm[64];
    snprintf(nm, sizeof(nm), "%s.weight", pre);
    const float *gm = P(p, nm, (size_t)d);
    snprintf(nm, sizeof(nm), "%s.bias", pre);
    const float *bt = P(p, nm, (size_t)d);
    for (int i = 0; i < n; i++) {
        double *v = &x[(size_t)i * d], mu = 0, var = 0;
        for (int k = 0; k < d; k++) {
            v[k] += r[(size_t)i * d + k];
            mu += v[k] / d;
        }
        for (int k = 0; k < d; k++)
            var += (v[k] - mu) * (v[k] - mu) / d;
        for (int k = 0; k < d; k++)
            v[k] = (v[k] - mu) / sqrt(var + 1e-5) * gm[k] + bt[k];
    }
}

static void ref_softmax(double *x, int n)
{
    double m = x[0], s = 0;
    for (int i = 1; i < n; i++)
        m = x[i] > m ? x[i] : m;
    for (int i = 0; i < n; i++)
        s += (x[i] = exp(x[i] - m));
    for (int i = 0; i < n; i++)
        x[i] /= s;
}

/* the policy's attention: out [G, d] */
static void ref_attention(const struct hg_policy *p, const char *pre, const double *h, int G,
                          int d, int H, const float *edge, const float *mask, double *out)
{
    char nm[64];
    int dh = d / H;
    double *q = malloc(sizeof(double) * G * d), *k = malloc(sizeof(double) * G * d),
           *v = malloc(sizeof(double) * G * d), *o = calloc((size_t)G * d, sizeof(double)),
           *s = malloc(sizeof(double) * G);
    snprintf(nm, sizeof(nm), "%s.q", pre);
    ref_linear(p, nm, h, G, d, d, q);
    snprintf(nm, sizeof(nm), "%s.k", pre);
    ref_linear(p, nm, h, G, d, d, k);
    snprintf(nm, sizeof(nm), "%s.v", pre);
    ref_linear(p, nm, h, G, d, d, v);
    double ew = 0;
    if (edge) {
        snprintf(nm, sizeof(nm), "%s.edge_weight", pre);
        ew = P(p, nm, 1)[0];
    }
    for (int a = 0; a < H; a++)
        for (int i = 0; i < G; i++) {
            for (int j = 0; j < G; j++) {
                double x = 0;
                for (int c = 0; c < dh; c++)
                    x += q[(size_t)i * d + a * dh + c] * k[(size_t)j * d + a * dh + c];
                x /= sqrt((double)dh);
                if (edge)
                    x += edge[(size_t)i * G + j] * ew;
                if (mask)
                    x += mask[(size_t)i * G + j];
                s[j] = x;
            }
            ref_softmax(s, G);
            for (int j = 0; j < G; j++)
                for (int c = 0; c < dh; c++)
                    o[(size_t)i * d + a * dh + c] += s[j] * v[(size_t)j * d + a * dh + c];
        }
    snprintf(nm, sizeof(nm), "%s.out", pre);
    ref_linear(p, nm, o, G, d, d, out);
    free(q);
    free(k);
    free(v);
    free(o);
    free(s);
}

/* place [G][D+2], agg [G][2] as the network computes them */
static void ref_forward(const struct hg_policy *p, const struct hg_policy_feat *f,
                        double *place, double *agg)
{
    struct hg_policy_cfg cfg;
    hg_policy_get_cfg(p, &cfg, NULL);
    int G = f->ngroups, D = f->ndev, d = cfg.d, H = cfg.heads;
    double *x = malloc(sizeof(double) * G * HG_POLICY_FG), *h = malloc(sizeof(double) * G * d),
           *a = malloc(sizeof(double) * G * d), *ff = malloc(sizeof(double) * G * 2 * d),
           *xd = malloc(sizeof(double) * D * HG_POLICY_FD), *e1 = malloc(sizeof(double) * D * d),
           *e = malloc(sizeof(double) * D * d), *q = malloc(sizeof(double) * G * d),
           *qn = malloc(sizeof(double) * G * d);
    for (int i = 0; i < G * HG_POLICY_FG; i++)
        x[i] = f->group[i];
    for (int i = 0; i < D * HG_POLICY_FD; i++)
        xd[i] = f->dev[i];
    ref_linear(p, "enc.in", x, G, HG_POLICY_FG, d, h);
    ref_relu(h, (size_t)G * d);
    for (int l = 0; l < 2; l++) {
        char pre[16], ln[24];
        snprintf(pre, sizeof(pre), "gat%d", l);
        snprintf(ln, sizeof(ln), "gat%d.ln", l);
        ref_attention(p, pre, h, G, d, H, f->edge, f->mask, a);
        ref_add_ln(p, ln, h, a, G, d);
    }
    ref_attention(p, "tf.attn", h, G, d, H, NULL, NULL, a);
    ref_add_ln(p, "tf.ln1", h, a, G, d);
    ref_linear(p, "tf.fc1", h, G, d, 2 * d, ff);
    ref_relu(ff, (size_t)G * 2 * d);
    ref_linear(p, "tf.fc2", ff, G, 2 * d, d, a);
    ref_add_ln(p, "tf.ln2", h, a, G, d);
    ref_linear(p, "dev.fc1", xd, D, HG_POLICY_FD, d, e1);
    ref_relu(e1, (size_t)D * d);
    ref_linear(p, "dev.fc2", e1, D, d, d, e);
    ref_linear(p, "head.mp", h, G, d, d, q);
    ref_linear(p, "head.node", h, G, d, d, qn);
    double tw = P(p, "head.time_weight", 1)[0], mw = P(p, "head.mem_weight", 1)[0];
    double nw = P(p, "head.node_time_weight", 1)[0];
    int A = HG_POLICY_ACTIONS(D);
    double rw = 4 * P(p, "head.ref_weight", 1)[0], raw = 4 * P(p, "head.ref_agg_weight", 1)[0];
    double dp[2];
    for (int i = 0; i < G; i++) {
        double *row = &place[(size_t)i * A];
        for (int j = 0; j < D; j++) {
            double s = 0, sn = 0;
            for (int c = 0; c < d; c++) {
                s += q[(size_t)i * d + c] * e[(size_t)j * d + c];
                sn += qn[(size_t)i * d + c] * e[(size_t)j * d + c];
            }
            row[j] = s / sqrt((double)d) + f->time[(size_t)i * D + j] * tw +
                     f->mem[(size_t)i * D + j] * mw;
            row[D + 2 + j] = sn / sqrt((double)d) + f->time[(size_t)i * D + j] * nw;
        }
        ref_linear(p, "head.dp", &h[(size_t)i * d], 1, d, 2, dp);
        row[D] = dp[0];
        row[D + 1] = dp[1];
        for (int j = 0; j < A; j++)
            row[j] += f->ref_place[(size_t)i * A + j] * rw;
        ref_softmax(row, A);
        double *ag = &agg[(size_t)i * 2];
        ref_linear(p, "head.agg", &h[(size_t)i * d], 1, d, 2, ag);
        ag[0] += f->ref_agg[(size_t)i * 2] * raw;
        ag[1] += f->ref_agg[(size_t)i * 2 + 1] * raw;
        ref_softmax(ag, 2);
    }
    free(x);
    free(h);
    free(a);
    free(ff);
    free(xd);
    free(e1);
    free(e);
    free(q);
    free(qn);
}

/* ------------------------------------------------------------ tests */

static int heaviest_group(const struct hg_policy_feat *f)
{
    int best = 0;
    for (int k = 1; k < f->ngroups; k++)
        best = f->group[(size_t)k * HG_POLICY_FG] > f->group[(size_t)best * HG_POLICY_FG]
                   ? k : best;
    return best;
}

static void test_learns(struct toy *t)
{
    char err[512];
    struct hg_policy_cfg cfg = {.seed = getenv("HG_TEST_SEED") ? strtoull(getenv("HG_TEST_SEED"), NULL, 10) : 1};
    struct hg_policy *p = hg_policy_new(&cfg);
    struct hg_policy_task *task;
    REQUIRE(hg_policy_task_new(&task, p, t->pg, t->g, t->pr, 4, err, sizeof(err)) == 0, "%s",
            err);
    const struct hg_policy_feat *f = hg_policy_task_feat(task);
    EXPECT(f->ngroups >= 2 && f->ndev == 2, "%d groups, %d devices", f->ngroups, f->ndev);
    /* the fast device: relative speed 1, the slow one 0.1 */
    EXPECT(fabsf(f->dev[1 * HG_POLICY_FD] - 1) < 1e-6 && f->dev[0] < 0.2f,
           "speeds %g %g", f->dev[0], f->dev[HG_POLICY_FD]);
    /* 32 samples a step: 19 of the seeds 1-20 find it (HG_TEST_SEED=S
     * picks another; 19 settles on a mix 3% slower than the best baseline) */
    struct hg_policy_train_opts o = {.steps = 300, .samples = 32};
    struct hg_policy_train_stats st;
    double t0 = hg_now();
    REQUIRE(hg_policy_train(p, &task, 1, &o, &st, err, sizeof(err)) == 0, "%s", err);
    printf("learns: %ld steps in %.2f s, mean reward %.4f -> %.4f (reference %.4f s)\n",
           st.steps, hg_now() - t0, st.first_reward, st.last_reward, hg_policy_task_ref(task));
    EXPECT(st.steps == 300, "%ld steps", st.steps);
    EXPECT(st.last_reward > st.first_reward + 0.05, "reward %.4f -> %.4f", st.first_reward,
           st.last_reward);
    struct hg_sim_result r;
    struct hg_strategy *s = hg_policy_decode(p, task, &r, err, sizeof(err));
    REQUIRE(s != NULL, "%s", err);
    int k = heaviest_group(f);
    EXPECT(s->cfg[k].mode == HG_MODE_MP && s->cfg[k].device == 1,
           "heaviest group %d: mode %d device %d", k, s->cfg[k].mode, s->cfg[k].device);
    printf("greedy: %.5f s (best baseline %.5f s)\n", r.iter_s, hg_policy_task_ref(task));
    EXPECT(!r.oom && r.iter_s <= hg_policy_task_ref(task) * 1.0001, "greedy %.5f s, ref %.5f",
           r.iter_s, hg_policy_task_ref(task));
    /* the forward against the plain-C reference, with the trained weights */
    int G = f->ngroups, D = f->ndev;
    int A = HG_POLICY_ACTIONS(D);
    float *pl = malloc(sizeof(float) * G * A), *ag = malloc(sizeof(float) * G * 2);
    double *rp = malloc(sizeof(double) * G * A), *ra = malloc(sizeof(double) * G * 2);
    REQUIRE(hg_policy_forward(p, task, pl, ag, err, sizeof(err)) == 0, "%s", err);
    ref_forward(p, f, rp, ra);
    double worst = 0;
    for (int i = 0; i < G * A; i++)
        worst = fmax(worst, fabs(pl[i] - rp[i]));
    for (int i = 0; i < G * 2; i++)
        worst = fmax(worst, fabs(ag[i] - ra[i]));
    printf("forward vs reference: largest difference %.3g\n", worst);
    EXPECT(worst < 1e-4, "forward differs from the reference by %g", worst);
    free(pl);
    free(ag);
    free(rp);
    free(ra);
    hg_strategy_free(s);
    hg_policy_task_free(task);
    hg_policy_free(p);
}

/* eval_every: the policy kept is the best-scoring one evaluated, its
 * update count restored; evaluating does not change the training (the
 * same rewards as without it). */
static void test_keep_best(struct toy *t)
{
    char err[512];
    enum { STEPS = 240, EVERY = 40 };
    double rw[2][STEPS];
    struct hg_policy_train_stats st[2];
    struct hg_policy *p[2];
    struct hg_policy_task *task[2];
    FILE *json = tmpfile();
    REQUIRE(json != NULL, "tmpfile");
    for (int e = 0; e < 2; e++) {
        p[e] = hg_policy_new(&(struct hg_policy_cfg){.seed = 3});
        REQUIRE(hg_policy_task_new(&task[e], p[e], t->pg, t->g, t->pr, 4, err, sizeof(err)) ==
                    0, "%s", err);
        struct hg_policy_train_opts o = {.steps = STEPS, .samples = 8, .rewards = rw[e],
                                         .eval_every = e ? EVERY : 0, .json = e ? json : NULL,
                                         .log_every = 1000};
        REQUIRE(hg_policy_train(p[e], &task[e], 1, &o, &st[e], err, sizeof(err)) == 0, "%s",
                err);
    }
    EXPECT(memcmp(rw[0], rw[1], sizeof(rw[0])) == 0, "evaluating changed the training");
    /* the json's eval lines: updates 0, 40, ..., 240 */
    rewind(json);
    char line[256];
    int nev = 0;
    double lo = INFINITY;
    long at = -1;
    while (fgets(line, sizeof(line), json)) {
        long u;
        double sc;
        if (sscanf(line, "{\"policy_eval\": %ld, \"score\": %lf", &u, &sc) != 2)
            continue;
        EXPECT(u == (long)nev * EVERY, "eval %d at update %ld", nev, u);
        EXPECT(sc > 0 && sc <= 1 + 1e-12, "score %g: min(greedy, reference) / reference", sc);
        if (sc < lo * (1 - 1e-6)) {
            lo = sc;
            at = u;
        }
        nev++;
    }
    fclose(json);
    EXPECT(nev == STEPS / EVERY + 1, "%d eval lines", nev);
    printf("keep best: %d evaluations, best x%.4f at update %ld, kept update %ld (x%.4f), "
           "last x%.4f\n", nev, lo, at, st[1].best_update, st[1].best_score, st[1].last_score);
    EXPECT(fabs(st[1].best_score - lo) <= 1e-6 * lo, "kept x%g, best evaluated x%g",
           st[1].best_score, lo);
    EXPECT(st[1].best_update % EVERY == 0 && st[1].best_update >= at,
           "kept update %ld (best score first at %ld)", st[1].best_update, at);
    EXPECT(st[1].steps == STEPS && st[1].best_score <= st[1].last_score * (1 + 1e-9),
           "%ld steps, kept x%g, last x%g", st[1].steps, st[1].best_score, st[1].last_score);
    long steps;
    struct hg_policy_cfg cfg;
    hg_policy_get_cfg(p[1], &cfg, &steps);
    EXPECT(steps == st[1].best_update, "the kept policy has %ld updates, not %ld", steps,
           st[1].best_update);
    /* the kept weights place as scored */
    struct hg_sim_result r;
    struct hg_strategy *s = hg_policy_decode(p[1], task[1], &r, err, sizeof(err));
    REQUIRE(s != NULL, "%s", err);
    double ref = hg_policy_task_ref(task[1]);
    double x = !r.oom && r.iter_s < ref ? r.iter_s / ref : 1;
    EXPECT(fabs(x - st[1].best_score) <= 1e-9, "kept policy places x%g, scored x%g", x,
           st[1].best_score);
    hg_strategy_free(s);
    for (int e = 0; e < 2; e++) {
        hg_policy_task_free(task[e]);
        hg_policy_free(p[e]);
    }
}

/* The weights of the reference's feature in both heads set to v (the
 * master copy, written through the accessor's pointer: a test's
 * shortcut). */
static void ref_weight(struct hg_policy *p, float v)
{
    size_t n;
    float *w = (float *)hg_policy_param(p, "head.ref_weight", &n);
    float *wa = (float *)hg_policy_param(p, "head.ref_agg_weight", &n);
    REQUIRE(w && wa && n == 1, "no reference weights");
    w[0] = wa[0] = v;
}

/* An untrained policy's greedy placement is the best baseline (the
 * reference's bias); one whose reference weight has settled samples only
 * that (every step's reward the same), and explores (hgplan --finetune)
 * only with explore set: then the steps' rewards differ and a strategy
 * better than the reference is sampled (the heavy op on the fast device). */
static void test_reference(struct toy *t)
{
    char err[512];
    struct hg_policy_cfg cfg = {.seed = 7};
    struct hg_policy *p = hg_policy_new(&cfg);
    struct hg_policy_task *task;
    REQUIRE(hg_policy_task_new(&task, p, t->pg, t->g, t->pr, 4, err, sizeof(err)) == 0, "%s",
            err);
    struct hg_sim_result r;
    struct hg_strategy *s = hg_policy_decode(p, task, &r, err, sizeof(err));
    REQUIRE(s != NULL, "%s", err);
    EXPECT(fabs(r.iter_s - hg_policy_task_ref(task)) < 1e-12, "untrained greedy %.6f s, best "
           "baseline %.6f s", r.iter_s, hg_policy_task_ref(task));
    hg_strategy_free(s);
    /* settled: the reference's logit 4 x 10 above the rest */
    ref_weight(p, 10);
    double rw[2][20];
    for (int e = 0; e < 2; e++) {
        struct hg_policy_train_opts o = {.steps = 20, .samples = 8, .rewards = rw[e],
                                         .explore = e};
        struct hg_policy_train_stats st;
        REQUIRE(hg_policy_train(p, &task, 1, &o, &st, err, sizeof(err)) == 0, "%s", err);
    }
    int same = 1;
    for (int i = 1; i < 20; i++)
        same &= rw[0][i] == rw[0][0];
    EXPECT(same && fabs(rw[0][0] + 1) < 1e-9, "settled, not exploring: rewards %.4f .. %.4f "
           "(want -1 every step)", rw[0][0], rw[0][19]);
    int differ = 0;
    for (int i = 1; i < 20; i++)
        differ |= rw[1][i] != rw[1][0];
    double best;
    EXPECT(hg_policy_task_best(task, &best) != NULL && differ &&
               best < hg_policy_task_ref(task) * 0.999,
           "exploring: rewards %.4f .. %.4f, best sampled %.6f s (reference %.6f s)", rw[1][0],
           rw[1][19], best, hg_policy_task_ref(task));
    printf("reference: untrained greedy = best baseline %.6f s; settled, exploring: best "
           "sampled %.6f s\n", hg_policy_task_ref(task), best);
    hg_policy_task_free(task);
    hg_policy_free(p);
}

/* A finetune (explore) imitates the best strategy it knows, the reference
 * and then its best sample: a policy turned away from the reference (its
 * weights -10: the greedy placement slower than the best baseline, as the
 * pretrained policy's is on inception_v3 and 8 GPUs, 0.52 s against
 * 0.20) places no slower than the reference after 100 updates, its mean
 * reward risen.  Seeds 1-10: 9 reach the toy's best (0.36 ms, the
 * reference 2.56 ms) in 100 updates; exploring without the imitation, 0
 * (all above the reference; on inception_v3 8000 updates left the mean
 * reward where it began). */
/* A policy (*p, seed 5) turned away from the reference, and its task. */
static struct hg_policy_task *turned_away(struct toy *t, struct hg_policy **p)
{
    char err[512];
    struct hg_policy_cfg cfg = {.seed = 5};
    struct hg_policy_task *task;
    *p = hg_policy_new(&cfg);
    REQUIRE(hg_policy_task_new(&task, *p, t->pg, t->g, t->pr, 4, err, sizeof(err)) == 0, "%s",
            err);
    ref_weight(*p, -10);
    return task;
}

static void test_imitate(struct toy *t)
{
    char err[512];
    struct hg_policy *p;
    struct hg_policy_task *task = turned_away(t, &p);
    double ref = hg_policy_task_ref(task);
    struct hg_sim_result r0, r1;
    struct hg_strategy *s0 = hg_policy_decode(p, task, &r0, err, sizeof(err));
    REQUIRE(s0 != NULL, "%s", err);
    EXPECT(r0.oom || r0.iter_s > ref * 1.01, "turned away: greedy %.6f s, reference %.6f s",
           r0.iter_s, ref);
    struct hg_policy_train_opts o = {.steps = 100, .samples = 8, .explore = 1};
    struct hg_policy_train_stats st;
    REQUIRE(hg_policy_train(p, &task, 1, &o, &st, err, sizeof(err)) == 0, "%s", err);
    struct hg_strategy *s1 = hg_policy_decode(p, task, &r1, err, sizeof(err));
    REQUIRE(s1 != NULL, "%s", err);
    printf("imitate: greedy %.6f s%s -> %.6f s after %ld updates (reference %.6f s), mean "
           "reward %.4f -> %.4f\n", r0.iter_s, r0.oom ? " OOM" : "", r1.iter_s, st.steps, ref,
           st.first_reward, st.last_reward);
    EXPECT(!r1.oom && r1.iter_s <= ref * (1 + 1e-9) && st.last_reward > st.first_reward,
           "finetuned greedy %.6f s, reference %.6f s, reward %.4f -> %.4f", r1.iter_s, ref,
           st.first_reward, st.last_reward);
    hg_strategy_free(s0);
    hg_strategy_free(s1);
    hg_policy_task_free(task);
    hg_policy_free(p);
    /* a placement (hgplan places before a finetune) becomes the target:
     * 60 updates after it the greedy placement is as fast as the placed
     * strategy (60 updates without it: 3.55 ms, slower than the
     * reference; AdamW's steps, not the advantage's size, set the pace) */
    task = turned_away(t, &p);
    struct hg_policy_place_opts po = {.seconds = 30};
    struct hg_policy_place_stats ps;
    struct hg_strategy *pl = hg_policy_place(p, task, &po, &ps, err, sizeof(err));
    REQUIRE(pl != NULL, "%s", err);
    struct hg_sim *sim = hg_sim_new(t->pg, t->pr);
    struct hg_sim_result rp;
    hg_sim_full(sim, pl, &rp);
    o.steps = 60;
    REQUIRE(hg_policy_train(p, &task, 1, &o, &st, err, sizeof(err)) == 0, "%s", err);
    s1 = hg_policy_decode(p, task, &r1, err, sizeof(err));
    REQUIRE(s1 != NULL, "%s", err);
    printf("imitate the placement: placed %.6f s; greedy %.6f s after %ld updates\n",
           rp.iter_s, r1.iter_s, st.steps);
    EXPECT(!r1.oom && r1.iter_s <= rp.iter_s * 1.0001, "greedy %.6f s after the placement's "
           "%.6f s", r1.iter_s, rp.iter_s);
    hg_sim_free(sim);
    hg_strategy_free(pl);
    hg_strategy_free(s1);
    hg_policy_task_free(task);
    hg_policy_free(p);
}

/* Placing (hgplan --search gnn): with no seconds the greedy strategy;
 * with seconds, an untrained policy (greedy = the reference) moves the
 * toy's groups to the fast device one by one, each move kept only where
 * the simulator says faster, and ends below the reference; MCMC with the
 * policy's proposals keeps every strategy of the grouping valid. */
static void test_place(struct toy *t)
{
    char err[512];
    struct hg_policy_cfg cfg = {.seed = 3};
    struct hg_policy *p = hg_policy_new(&cfg);
    struct hg_policy_task *task;
    REQUIRE(hg_policy_task_new(&task, p, t->pg, t->g, t->pr, 4, err, sizeof(err)) == 0, "%s",
            err);
    double ref = hg_policy_task_ref(task);
    struct hg_policy_place_opts o0 = {0}, o1 = {.seconds = 30, .top = 4};
    struct hg_policy_place_stats s0, s1;
    struct hg_strategy *g0 = hg_policy_place(p, task, &o0, &s0, err, sizeof(err));
    REQUIRE(g0 != NULL, "%s", err);
    struct hg_sim *sim = hg_sim_new(t->pg, t->pr);
    struct hg_sim_result r0, r1;
    hg_sim_full(sim, g0, &r0);
    EXPECT(s0.tried == 0 && fabs(r0.iter_s - s0.greedy.iter_s) < 1e-12 &&
               fabs(r0.iter_s - ref) < 1e-12,
           "no seconds: %ld moves, %.6f s (greedy %.6f s, reference %.6f s)", s0.tried,
           r0.iter_s, s0.greedy.iter_s, ref);
    struct hg_strategy *g1 = hg_policy_place(p, task, &o1, &s1, err, sizeof(err));
    REQUIRE(g1 != NULL, "%s", err);
    hg_sim_full(sim, g1, &r1);
    printf("place: %ld moves tried, %ld kept in %ld passes, %.3f s: %.6f s (reference "
           "%.6f s)\n", s1.tried, s1.kept, s1.passes, s1.seconds, r1.iter_s, ref);
    EXPECT(s1.kept > 0 && s1.passes >= 2 && !r1.oom && r1.iter_s < ref * 0.99,
           "placed %.6f s after %ld of %ld moves, reference %.6f s", r1.iter_s, s1.kept,
           s1.tried, ref);
    /* the searches start list-scheduled from the greedy strategy and the
     * reference: never slower than either so scheduled; valid; placing
     * again gives the same strategy (the task's order restored) */
    struct hg_strategy *gs = hg_strategy_copy(g0);
    struct hg_sim_result rg;
    hg_sched_best(sim, t->pg, gs, &rg, NULL);
    EXPECT(r1.iter_s <= rg.iter_s && r1.iter_s <= ref,
           "placed %.6f s, greedy list-scheduled %.6f s, reference %.6f s", r1.iter_s,
           rg.iter_s, ref);
    EXPECT(hg_strategy_check(g1, t->pg, err, sizeof(err)) == 0, "placed: %s", err);
    struct hg_policy_place_stats s2;
    struct hg_strategy *g2 = hg_policy_place(p, task, &o1, &s2, err, sizeof(err));
    REQUIRE(g2 != NULL, "%s", err);
    EXPECT(memcmp(g1->cfg, g2->cfg, (size_t)g1->ngroups * sizeof(struct hg_gcfg)) == 0 &&
               memcmp(g1->order, g2->order, (size_t)g1->nops * sizeof(int)) == 0 &&
               s2.how == s1.how,
           "placing twice: different strategies");
    hg_strategy_free(gs);
    hg_strategy_free(g2);
    int k = heaviest_group(hg_policy_task_feat(task));
    EXPECT((g1->cfg[k].mode == HG_MODE_MP && g1->cfg[k].device == 1) ||
               (g1->cfg[k].mode == HG_MODE_DP && g1->cfg[k].rep[1] > g1->cfg[k].rep[0]),
           "heaviest group %d not weighted to the fast device", k);
    /* MCMC with the policy's proposals from the placed strategy */
    struct hg_search_opts so = {.max_iters = 200, .seed = 1, .propose = hg_policy_propose,
                                .propose_ctx = task};
    struct hg_search_stats ss;
    hg_search_mcmc(sim, t->pg, g1, &so, &ss);
    EXPECT(ss.iters == 200 && ss.best_cost <= ss.seed_cost, "mcmc: %ld proposals, %.6f -> "
           "%.6f", ss.iters, ss.seed_cost, ss.best_cost);
    hg_sim_free(sim);
    hg_strategy_free(g0);
    hg_strategy_free(g1);
    hg_policy_task_free(task);
    hg_policy_free(p);
}

static long file_bytes(const char *path, char **buf)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    *buf = malloc((size_t)n + 1);
    if (fread(*buf, 1, (size_t)n, f) != (size_t)n)
        n = -1;
    fclose(f);
    return n;
}

static void train_save(struct toy *t, uint64_t seed, const char *path)
{
    char err[512];
    struct hg_policy_cfg cfg = {.seed = seed};
    struct hg_policy *p = hg_policy_new(&cfg);
    struct hg_policy_task *task;
    REQUIRE(hg_policy_task_new(&task, p, t->pg, t->g, t->pr, 4, err, sizeof(err)) == 0, "%s",
            err);
    struct hg_policy_train_opts o = {.steps = 20, .samples = 4};
    struct hg_policy_train_stats st;
    REQUIRE(hg_policy_train(p, &task, 1, &o, &st, err, sizeof(err)) == 0, "%s", err);
    REQUIRE(hg_policy_save(p, path, err, sizeof(err)) == 0, "%s", err);
    hg_policy_task_free(task);
    hg_policy_free(p);
}

static void expect_refused(const char *path, const char *what)
{
    char err[512] = "";
    struct hg_policy *p = NULL;
    int rc = hg_policy_load(&p, path, err, sizeof(err));
    printf("%s: %s\n", what, err);
    EXPECT(rc == -1 && p == NULL, "%s: accepted", what);
    EXPECT(strstr(err, path) != NULL, "%s: message does not name %s: %s", what, path, err);
}

static void test_file(struct toy *t, const char *dir)
{
    char a[512], b[512], c[512], x[512];
    snprintf(a, sizeof(a), "%s/a.h5", dir);
    snprintf(b, sizeof(b), "%s/b.h5", dir);
    snprintf(c, sizeof(c), "%s/c.h5", dir);
    snprintf(x, sizeof(x), "%s/x.h5", dir);
    train_save(t, 7, a);
    train_save(t, 7, b);
    train_save(t, 8, c);
    char *ba = NULL, *bb = NULL, *bc = NULL;
    long na = file_bytes(a, &ba), nb = file_bytes(b, &bb), nc = file_bytes(c, &bc);
    REQUIRE(na > 0 && nb > 0 && nc > 0, "policy files %ld %ld %ld bytes", na, nb, nc);
    EXPECT(na == nb && memcmp(ba, bb, (size_t)na) == 0, "same seed, different files");
    EXPECT(na != nc || memcmp(ba, bc, (size_t)na) != 0, "another seed, the same file");
    /* loads back: the same parameters */
    char err[512];
    struct hg_policy *p = NULL;
    REQUIRE(hg_policy_load(&p, a, err, sizeof(err)) == 0, "%s", err);
    long steps;
    struct hg_policy_cfg cfg;
    hg_policy_get_cfg(p, &cfg, &steps);
    EXPECT(steps == 20 && cfg.seed == 7, "loaded: %ld steps, seed %llu", steps,
           (unsigned long long)cfg.seed);
    REQUIRE(hg_policy_save(p, x, err, sizeof(err)) == 0, "%s", err);
    char *bx = NULL;
    long nx = file_bytes(x, &bx);
    EXPECT(nx == na && memcmp(bx, ba, (size_t)na) == 0, "saved again: different bytes");
    hg_policy_free(p);
    free(bx);
    /* another feature layout */
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fopen(b, H5F_ACC_RDWR, H5P_DEFAULT);
    REQUIRE(f >= 0, "reopen %s", b);
    hid_t at = H5Aopen(f, "feature_layout", H5P_DEFAULT);
    int64_t other = HG_POLICY_LAYOUT + 1;
    REQUIRE(at >= 0 && H5Awrite(at, H5T_NATIVE_INT64, &other) >= 0, "rewrite layout");
    H5Aclose(at);
    H5Fclose(f);
    expect_refused(b, "another feature layout");
    /* a tensor changed behind its CRC */
    f = H5Fopen(c, H5F_ACC_RDWR, H5P_DEFAULT);
    REQUIRE(f >= 0, "reopen %s", c);
    hid_t ds = H5Dopen2(f, "params/head.dp.bias", H5P_DEFAULT);
    float v[2] = {0.25f, -0.5f};
    REQUIRE(ds >= 0 && H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0,
            "rewrite head.dp.bias");
    H5Dclose(ds);
    H5Fclose(f);
    expect_refused(c, "a corrupted tensor");
    /* truncated, and not HDF5 at all */
    FILE *w = fopen(x, "wb");
    REQUIRE(w && fwrite(ba, 1, (size_t)na / 2, w) == (size_t)na / 2 && fclose(w) == 0,
            "write %s", x);
    expect_refused(x, "a truncated file");
    w = fopen(x, "wb");
    REQUIRE(w && fputs("not a policy\n", w) >= 0 && fclose(w) == 0, "write %s", x);
    expect_refused(x, "a text file");
    free(ba);
    free(bb);
    free(bc);
    unlink(a);
    unlink(b);
    unlink(c);
    unlink(x);
}

/* Element i of dataset name in file path set to v, its crc32 attribute
 * recomputed: a file whose every CRC is valid. */
static void plant_value(const char *path, const char *name, size_t i, float v)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    REQUIRE(f >= 0, "reopen %s", path);
    hid_t ds = H5Dopen2(f, name, H5P_DEFAULT);
    REQUIRE(ds >= 0, "%s: no %s", path, name);
    hid_t sp = H5Dget_space(ds);
    size_t n = (size_t)H5Sget_simple_extent_npoints(sp);
    REQUIRE(i < n, "%s: %zu of %zu", name, i, n);
    float *x = malloc(n * sizeof(float));
    REQUIRE(x && H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, x) >= 0,
            "read %s", name);
    x[i] = v;
    uint32_t crc = hg_crc32_f32(x, n);
    hid_t at = H5Aopen(ds, "crc32", H5P_DEFAULT);
    REQUIRE(H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, x) >= 0 && at >= 0 &&
                H5Awrite(at, H5T_NATIVE_UINT32, &crc) >= 0,
            "rewrite %s", name);
    H5Aclose(at);
    H5Sclose(sp);
    H5Dclose(ds);
    H5Fclose(f);
    free(x);
}

/* A policy file with a value no policy holds behind a valid CRC (the
 * reliability probe's NaN, inf and 1e38 weights, which placed without a
 * word): refused, the file and the tensor named. */
static void test_file_values(struct toy *t, const char *dir)
{
    char good[512], x[512], err[512];
    snprintf(good, sizeof(good), "%s/good.h5", dir);
    snprintf(x, sizeof(x), "%s/x.h5", dir);
    train_save(t, 9, good);
    char *bg = NULL;
    long ng = file_bytes(good, &bg);
    REQUIRE(ng > 0, "%s", good);
    static const struct {
        const char *tensor;
        size_t i;
        float v;
        const char *what;
    } cases[] = {
        {"params/head.dp.weight", 3, NAN, "a NaN weight"},
        {"params/gat1.q.bias", 0, INFINITY, "an inf weight"},
        {"params/head.ref_weight", 0, -INFINITY, "a -inf weight"},
        {"params/enc.in.weight", 17, 1e38f, "a 1e38 weight"},
        {"params/tf.fc1.weight", 5, -2e6f, "a -2e6 weight"},
        {"optimizer/head.agg.weight.exp_avg", 1, NAN, "a NaN exp_avg"},
        {"optimizer/dev.fc1.bias.exp_avg_sq", 2, INFINITY, "an inf exp_avg_sq"},
        {"optimizer/tf.ln1.weight.exp_avg_sq", 0, -1.f, "a negative exp_avg_sq"},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        FILE *w = fopen(x, "wb");
        REQUIRE(w && fwrite(bg, 1, (size_t)ng, w) == (size_t)ng && fclose(w) == 0, "copy");
        plant_value(x, cases[c].tensor, cases[c].i, cases[c].v);
        expect_refused(x, cases[c].what);
        struct hg_policy *p = NULL;
        if (hg_policy_load(&p, x, err, sizeof(err)) != 0)
            EXPECT(strstr(err, cases[c].tensor) != NULL, "%s: message does not name %s: %s",
                   cases[c].what, cases[c].tensor, err);
        hg_policy_free(p);
    }
    /* the largest weight a policy may hold loads */
    FILE *w = fopen(x, "wb");
    REQUIRE(w && fwrite(bg, 1, (size_t)ng, w) == (size_t)ng && fclose(w) == 0, "copy");
    plant_value(x, "params/tf.fc1.weight", 5, -1e6f);
    struct hg_policy *p = NULL;
    EXPECT(hg_policy_load(&p, x, err, sizeof(err)) == 0, "a -1e6 weight refused: %s", err);
    hg_policy_free(p);
    /* a 1e38 exp_avg loads (AdamW's state has no bound of its own) and
     * moves its weight past the bound at the first update of a finetune,
     * which names it */
    w = fopen(x, "wb");
    REQUIRE(w && fwrite(bg, 1, (size_t)ng, w) == (size_t)ng && fclose(w) == 0, "copy");
    plant_value(x, "optimizer/head.agg.weight.exp_avg", 1, 1e38f);
    REQUIRE(hg_policy_load(&p, x, err, sizeof(err)) == 0, "%s", err);
    struct hg_policy_task *task;
    REQUIRE(hg_policy_task_new(&task, p, t->pg, t->g, t->pr, 4, err, sizeof(err)) == 0, "%s",
            err);
    struct hg_policy_train_opts o = {.steps = 2, .samples = 4, .explore = 1};
    struct hg_policy_train_stats st;
    err[0] = 0;
    int rc = hg_policy_train(p, &task, 1, &o, &st, err, sizeof(err));
    printf("finetune from a 1e38 exp_avg: %s\n", err);
    EXPECT(rc == -1 && strstr(err, "policy update 21: params/head.agg.weight[1] = "),
           "finetune from a 1e38 exp_avg (rc %d): %s", rc, err);
    hg_policy_task_free(task);
    hg_policy_free(p);
    /* a policy holding a NaN is not saved: an existing file stays as it
     * was, no .tmp is left */
    REQUIRE(hg_policy_load(&p, good, err, sizeof(err)) == 0, "%s", err);
    int wt = hg_graph_find(p->tmpl.g, "head.node.weight");
    REQUIRE(wt >= 0, "head.node.weight");
    hg__pol_master(p, wt)[7] = NAN;
    w = fopen(x, "wb");
    REQUIRE(w && fputs("keep me\n", w) >= 0 && fclose(w) == 0, "write %s", x);
    err[0] = 0;
    rc = hg_policy_save(p, x, err, sizeof(err));
    printf("save with a NaN: %s\n", err);
    EXPECT(rc == -1 && strstr(err, "head.node.weight") && strstr(err, x),
           "saved a NaN weight (rc %d): %s", rc, err);
    char *bx = NULL, tmp[600];
    EXPECT(file_bytes(x, &bx) == 8 && memcmp(bx, "keep me\n", 8) == 0,
           "the existing file was overwritten");
    snprintf(tmp, sizeof(tmp), "%s.tmp", x);
    EXPECT(access(tmp, F_OK) != 0, "%s left", tmp);
    hg_policy_free(p);
    free(bx);
    free(bg);
    unlink(good);
    unlink(x);
}

/* A finetune whose update leaves a weight non-finite (an infinite
 * learning rate, a NaN planted by HG_TEST_POLICY_POISON) or absurd (a
 * learning rate of 1e30) stops at that update, naming the tensor and the
 * update; the policy stays that of the update before (what hgplan would
 * write).  good: updates made first, without the plant. */
static void diverges(struct toy *t, float lr, const char *poison, long good,
                     const char *want_update, const char *want_tensor, const char *what)
{
    char err[512] = "";
    struct hg_policy_cfg cfg = {.seed = 3, .lr = lr};
    struct hg_policy *p = hg_policy_new(&cfg);
    struct hg_policy_task *task;
    REQUIRE(hg_policy_task_new(&task, p, t->pg, t->g, t->pr, 4, err, sizeof(err)) == 0, "%s",
            err);
    struct hg_policy_train_stats st;
    if (good > 0) {
        struct hg_policy_train_opts o = {.steps = good, .samples = 4, .explore = 1};
        REQUIRE(hg_policy_train(p, &task, 1, &o, &st, err, sizeof(err)) == 0, "%s", err);
    }
    size_t n = 0;
    const float *w = hg_policy_param(p, "head.dp.weight", &n);
    REQUIRE(w != NULL, "head.dp.weight");
    float *keep = malloc(n * sizeof(float));
    REQUIRE(keep != NULL, "malloc");
    memcpy(keep, w, n * sizeof(float));
    if (poison)
        setenv("HG_TEST_POLICY_POISON", poison, 1);
    struct hg_policy_train_opts o = {.steps = 4, .samples = 4, .explore = 1};
    int rc = hg_policy_train(p, &task, 1, &o, &st, err, sizeof(err));
    unsetenv("HG_TEST_POLICY_POISON");
    printf("%s: %s\n", what, err);
    EXPECT(rc == -1, "%s: the finetune went on", what);
    EXPECT(strstr(err, want_update) != NULL, "%s: message does not name '%s': %s", what,
           want_update, err);
    EXPECT(strstr(err, want_tensor) != NULL, "%s: message does not name %s: %s", what,
           want_tensor, err);
    long steps;
    hg_policy_get_cfg(p, &cfg, &steps);
    EXPECT(steps == good, "%s: %ld updates kept, want %ld", what, steps, good);
    EXPECT(memcmp(keep, w, n * sizeof(float)) == 0, "%s: the policy changed", what);
    free(keep);
    hg_policy_task_free(task);
    hg_policy_free(p);
}

static void test_diverged(struct toy *t)
{
    diverges(t, INFINITY, NULL, 0, "policy update 1:", "params/", "an infinite learning rate");
    diverges(t, 1e30f, NULL, 0, "policy update 1:", "beyond", "a learning rate of 1e30");
    diverges(t, 0, "1", 1, "policy update 2:", "params/head.dp.weight[0] = nan",
             "a NaN at the second update");
    /* the check itself, on a copy of a policy's weights */
    struct hg_policy *p = hg_policy_new(&(struct hg_policy_cfg){.seed = 5});
    char err[512] = "";
    float *x = malloc(p->nparams * sizeof(float));
    REQUIRE(x != NULL, "malloc");
    memcpy(x, p->params, p->nparams * sizeof(float));
    EXPECT(hg__pol_check(p, x, NULL, err, sizeof(err)) == 0, "a new policy refused: %s", err);
    int wt = hg_graph_find(p->tmpl.g, "tf.fc2.bias");
    REQUIRE(wt >= 0, "tf.fc2.bias");
    x[hg__pol_master(p, wt) - p->params + 4] = -INFINITY;
    EXPECT(hg__pol_check(p, x, NULL, err, sizeof(err)) == -1 &&
               strstr(err, "params/tf.fc2.bias[4] = -inf"),
           "a poisoned copy: %s", err);
    free(x);
    hg_policy_free(p);
}

int main(void)
{
    char err[256];
    REQUIRE(hg_kernels_init(err, sizeof(err)) == 0, "%s", err);
    char dir[] = "/tmp/test_policy.XXXXXX";
    REQUIRE(mkdtemp(dir) != NULL, "mkdtemp");
    struct toy t;
    toy_new(&t);
    test_learns(&t);
    test_reference(&t);
    test_imitate(&t);
    test_keep_best(&t);
    test_place(&t);
    test_file(&t, dir);
    test_file_values(&t, dir);
    test_diverged(&t);
    toy_free(&t);
    rmdir(dir);
    printf("%s\n", failures ? "FAIL" : "PASS");
    return failures ? 1 : 0;
}
