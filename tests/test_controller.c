/* test_controller.c - learning-rate schedules (fairseq's formulas) and
 * checkpoints: exact round trip and resume, 0600 files, no damage to the
 * previous checkpoint on failure, mismatches named. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "controller/hg_controller.h"
#include "tests/hg_test.h"


static int close_to(double a, double b) { return fabs(a - b) <= 1e-12 + 1e-9 * fabs(b); }

static void test_schedules(void)
{
    struct hg_lr_sched s = {.kind = HG_LR_INVERSE_SQRT, .lr = 5e-4,
                            .warmup_init_lr = 1e-7, .warmup_updates = 4000};
    char err[256];
    EXPECT(hg_lr_check(&s, err, sizeof(err)) == 0, "%s", err);
    EXPECT(close_to(hg_lr_at(&s, 0), 1e-7), "%g", hg_lr_at(&s, 0));
    EXPECT(close_to(hg_lr_at(&s, 2000), 1e-7 + 2000 * (5e-4 - 1e-7) / 4000), "%g",
           hg_lr_at(&s, 2000));
    EXPECT(close_to(hg_lr_at(&s, 4000), 5e-4), "%g", hg_lr_at(&s, 4000));
    EXPECT(close_to(hg_lr_at(&s, 16000), 2.5e-4), "%g", hg_lr_at(&s, 16000));

    s = (struct hg_lr_sched){.kind = HG_LR_POLYNOMIAL, .lr = 1e-3, .warmup_updates = 10,
                             .total_updates = 110, .power = 1.0};
    EXPECT(hg_lr_check(&s, err, sizeof(err)) == 0, "%s", err);
    EXPECT(close_to(hg_lr_at(&s, 5), 5e-4), "%g", hg_lr_at(&s, 5));
    EXPECT(close_to(hg_lr_at(&s, 10), 1e-3), "%g", hg_lr_at(&s, 10));
    EXPECT(close_to(hg_lr_at(&s, 60), 5e-4), "%g", hg_lr_at(&s, 60));
    EXPECT(close_to(hg_lr_at(&s, 200), 0), "%g", hg_lr_at(&s, 200));
    s.power = 2.0, s.end_lr = 1e-4;
    EXPECT(close_to(hg_lr_at(&s, 60), 9e-4 * 0.25 + 1e-4), "%g", hg_lr_at(&s, 60));

    s = (struct hg_lr_sched){.kind = HG_LR_COSINE, .lr = 1.0, .min_lr = 0.1,
                             .total_updates = 100};
    EXPECT(close_to(hg_lr_at(&s, 0), 1.0), "%g", hg_lr_at(&s, 0));
    EXPECT(close_to(hg_lr_at(&s, 50), 0.55), "%g", hg_lr_at(&s, 50));
    EXPECT(close_to(hg_lr_at(&s, 100), 0.1), "%g", hg_lr_at(&s, 100));

    s = (struct hg_lr_sched){.kind = HG_LR_FIXED, .lr = 0.4, .warmup_updates = 4};
    EXPECT(close_to(hg_lr_at(&s, 0), 0.1) && close_to(hg_lr_at(&s, 3), 0.4) &&
           close_to(hg_lr_at(&s, 99), 0.4), "fixed warmup");

    enum hg_lr_kind k;
    EXPECT(hg_lr_kind_parse("polynomial_decay", &k) == 0 && k == HG_LR_POLYNOMIAL, "parse");
    EXPECT(hg_lr_kind_parse("linear", &k) == -1, "unknown name accepted");
    s = (struct hg_lr_sched){.kind = HG_LR_COSINE, .lr = 1.0, .total_updates = 0};
    EXPECT(hg_lr_check(&s, err, sizeof(err)) == -1 && strstr(err, "--total-num-update"),
           "cosine without total: %s", err);
    printf("ok  lr schedules\n");
}

/* x[B,6] -> linear hidden -> relu -> linear 3 -> cross entropy, AdamW */
struct net {
    struct hg_graph *g;
    struct hg_exec *ex;
    int x, y, loss, n;
};

static void net_build(struct net *m, int64_t hidden)
{
    struct hg_graph *g = m->g = hg_graph_new();
    int64_t xd[2] = {8, 6}, yd[1] = {8};
    m->x = hg_graph_input(g, "x", HG_F32, 2, xd, 0);
    m->y = hg_graph_input(g, "y", HG_I32, 1, yd, 0);
    int h = hg_relu(g, hg_layer_linear(g, "fc1", m->x, 6, hidden, 1));
    m->loss = hg_cross_entropy(g, hg_layer_linear(g, "fc2", h, hidden, 3, 1), m->y, -100, 0.f);
    hg_graph_backward(g, m->loss);
    union hg_attr a = {.adam = {0.9f, 0.999f, 1e-8f, 0.01f}};
    hg_graph_optimizer(g, HG_OPTIM_ADAMW, &a);
    int *order = malloc((size_t)hg_graph_n_nodes(g) * sizeof(int));
    m->n = hg_graph_order(g, HG_PH_ALL, order);
    char err[256];
    m->ex = hg_exec_new(g, order, m->n, err, sizeof(err));
    HG_CHECK(m->ex != NULL);
    free(order);
    hg_graph_init_params(g, m->ex, 42);
}

static float net_step(struct net *m, uint64_t step)
{
    float *x = hg_exec_data(m->ex, m->x);
    int32_t *y = hg_exec_data(m->ex, m->y);
    for (int i = 0; i < 48; i++)
        x[i] = hg_rand_uniform(7, step, (uint64_t)i) * 2.f - 1.f;
    for (int i = 0; i < 8; i++)
        y[i] = (int32_t)(hg_rand_uniform(8, step, (uint64_t)i) * 3.f) % 3;
    struct hg_step st = {.step = step, .lr = 0.01f, .grad_scale = 1.f / 8};
    char err[256];
    HG_CHECK(hg_exec_run(m->ex, &st, 0, m->n, err, sizeof(err)) == 0);
    return *(float *)hg_exec_data(m->ex, m->loss);
}

static void net_free(struct net *m)
{
    hg_exec_free(m->ex);
    hg_graph_free(m->g);
}

static int same_blocks(struct net *a, struct net *b)
{
    size_t na, nb;
    float *pa = hg_exec_param_block(a->ex, &na), *pb = hg_exec_param_block(b->ex, &nb);
    if (na != nb || memcmp(pa, pb, na * sizeof(float)))
        return 0;
    pa = hg_exec_state_block(a->ex, &na), pb = hg_exec_state_block(b->ex, &nb);
    return na == nb && memcmp(pa, pb, na * sizeof(float)) == 0;
}

static void test_checkpoints(const char *dir)
{
    char path[512], err[512];
    snprintf(path, sizeof(path), "%s/checkpoint_last.h5", dir);
    struct net a, b, c;
    net_build(&a, 16);
    for (uint64_t s = 1; s <= 3; s++)
        net_step(&a, s);
    struct hg_ckpt_meta meta = {.epoch = 2, .num_updates = 3,
                                .iter = {.epoch = 3, .step = 17}, .seed = 99,
                                .best_metric = 1.25, .options = "--lr 0.01 --task mnist"};
    EXPECT(hg_ckpt_save(path, a.g, a.ex, &meta, err, sizeof(err)) == 0, "%s", err);
    struct stat st;
    EXPECT(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "mode %o", st.st_mode & 0777);
    char tmp[600];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    EXPECT(access(tmp, F_OK) != 0, "temporary file left behind");

    /* restore into a fresh model: same bits, same future */
    net_build(&b, 16);
    struct hg_ckpt_meta got;
    EXPECT(hg_ckpt_load(path, b.g, b.ex, 0, &got, err, sizeof(err)) == 0, "%s", err);
    EXPECT(got.epoch == 2 && got.num_updates == 3 && got.iter.epoch == 3 &&
           got.iter.step == 17 && got.seed == 99 && got.best_metric == 1.25 &&
           got.options && strcmp(got.options, meta.options) == 0, "meta round trip");
    hg_ckpt_meta_free(&got);
    EXPECT(same_blocks(&a, &b), "params/state differ after load");
    for (uint64_t s = 4; s <= 6; s++) {
        float la = net_step(&a, s), lb = net_step(&b, s);
        EXPECT(la == lb, "step %llu: %.9g vs %.9g after resume", (unsigned long long)s, la, lb);
    }
    EXPECT(same_blocks(&a, &b), "resumed run diverged");

    /* another model: the first mismatching param and both shapes */
    net_build(&c, 12);
    EXPECT(hg_ckpt_load(path, c.g, c.ex, 0, &got, err, sizeof(err)) == -1 &&
           strstr(err, "fc1.weight") && strstr(err, "[16,6]") && strstr(err, "[12,6]"),
           "mismatch message: %s", err);
    hg_ckpt_meta_free(&got);

    /* a failed save (disk full) leaves the previous checkpoint intact */
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {.rlim_cur = 4096, .rlim_max = 4096};
        setrlimit(RLIMIT_FSIZE, &rl);
        char e[512];
        int rc = hg_ckpt_save(path, a.g, a.ex, &meta, e, sizeof(e));
        printf("    disk-full save: rc %d: %s\n", rc, rc ? e : "");
        fflush(stdout);
        _exit(rc == -1 && strstr(e, ".tmp") ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "disk-full save not reported");
    EXPECT(access(tmp, F_OK) != 0, "temporary file left after a failed save");
    EXPECT(hg_ckpt_load(path, b.g, b.ex, 0, &got, err, sizeof(err)) == 0,
           "previous checkpoint damaged: %s", err);
    hg_ckpt_meta_free(&got);

    /* unwritable place, corrupt file */
    char bad[600];
    snprintf(bad, sizeof(bad), "%s/no/such/dir/ck.h5", dir);
    EXPECT(hg_ckpt_save(bad, a.g, a.ex, &meta, err, sizeof(err)) == -1 &&
           strstr(err, "no/such/dir"), "unwritable: %s", err);
    snprintf(bad, sizeof(bad), "%s/corrupt.h5", dir);
    FILE *f = fopen(bad, "wb");
    fputs("this is not HDF5", f);
    fclose(f);
    EXPECT(hg_ckpt_load(bad, b.g, b.ex, 0, &got, err, sizeof(err)) == -1 &&
           strstr(err, "corrupt.h5"), "corrupt: %s", err);
    hg_ckpt_meta_free(&got);
    /* a truncated checkpoint */
    snprintf(bad, sizeof(bad), "cp '%s' '%s/trunc.h5' && truncate -s 3000 '%s/trunc.h5'",
             path, dir, dir);
    EXPECT(system(bad) == 0, "cp");
    snprintf(bad, sizeof(bad), "%s/trunc.h5", dir);
    EXPECT(hg_ckpt_load(bad, b.g, b.ex, 0, &got, err, sizeof(err)) == -1 &&
           strstr(err, "trunc.h5"), "truncated: %s", err);
    hg_ckpt_meta_free(&got);
    printf("ok  checkpoints: exact round trip and resume, 0600, failures named\n");
    net_free(&a);
    net_free(&b);
    net_free(&c);
}

int main(void)
{
    char dir[] = "/tmp/hg_ckpt_XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 99;
    }
    test_schedules();
    test_checkpoints(dir);
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        printf("warning: could not remove %s\n", dir);
    printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
