/* xor_task.c - a worked external task plug-in: "xor", a 2-layer MLP that
 * learns the XOR of the signs of two numbers (x0 * x1 > 0 -> class 1).
 *
 * Shards have two ARRAY fields (write them with hg_shard_writer, or any
 * HDF5 tool: docs/data.md):
 *     x  f32 [N,2]   the two inputs
 *     y  i32 [N]     the class, 0 or 1
 *
 * Build it against an installed hgtrain and load it at run time:
 *     cc -shared -fPIC $(pkg-config --cflags hgtrain) xor_task.c -o xor_task.so
 *     hgtrain --task-plugin ./xor_task.so --data DIR ...
 * The hg_* functions it calls are resolved from the hgtrain that loads it,
 * so it does not link libhgtrain itself. Walk-through: docs/tasks.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tasks/hg_task.h"

enum { F_X, F_Y, NFIELDS };
enum { OPT_HIDDEN };

/* 1. Options: added to hgtrain's command line (--xor-hidden 16). */
static const struct hg_task_option xor_options[] = {
    [OPT_HIDDEN] = {"xor-hidden", "16", "width of the hidden layer"},
    {NULL, NULL, NULL, 0}};

/* 2. The fields every sample has; hgtrain checks them in every shard. */
static const struct hg_field xor_fields[NFIELDS] = {
    [F_X] = {.name = "x", .kind = HG_FIELD_ARRAY, .dtype = HG_F32, .rank = 1},
    [F_Y] = {.name = "y", .kind = HG_FIELD_ARRAY, .dtype = HG_I32, .rank = 0,
             .vocab = 2},
};

/* 3. The task's own state: parsed options, dictionaries, ... */
struct xor_state {
    int64_t hidden;
};

static int xor_setup(void **state, const char *data,
                     const struct hg_task_args *args, char *err, size_t errlen)
{
    (void)data; /* nothing to read besides the shards */
    const char *v = args && args->values ? args->values[OPT_HIDDEN] : NULL;
    char *end = NULL;
    long h = v ? strtol(v, &end, 10) : 16;
    if (v && (end == v || *end || h < 1 || h > 4096)) {
        snprintf(err, errlen, "--xor-hidden: expected 1..4096, got '%s'", v);
        return -1;
    }
    struct xor_state *s = malloc(sizeof(*s));
    if (!s) {
        snprintf(err, errlen, "xor: out of memory");
        return -1;
    }
    s->hidden = h;
    *state = s;
    return 0;
}

static void xor_teardown(void *state)
{
    free(state);
}

/* 4. The model: forward + a loss that is a SUM over the batch. The batch
 * axis is a symbol ("batch", at most max_batch); fill() gives its value. */
static int xor_build(void *state, struct hg_graph *g, int64_t max_batch,
                     int64_t max_len, int train, struct hg_task_model *m,
                     char *err, size_t errlen)
{
    const struct xor_state *s = state;
    (void)max_len; /* fixed-size samples */
    (void)train;   /* no dropout in this model */
    if (max_batch < 1) {
        snprintf(err, errlen, "xor: max batch %lld < 1", (long long)max_batch);
        return -1;
    }
    int64_t B = hg_graph_sym(g, "batch", max_batch);
    int64_t xd[2] = {B, 2};
    int x = hg_graph_input(g, "x", HG_F32, 2, xd, 0); /* [B,2] */
    int y = hg_graph_input(g, "y", HG_I32, 1, &B, 0); /* [B] */
    int h = hg_tanh(g, hg_layer_linear(g, "fc1", x, 2, s->hidden, 1));
    int logits = hg_layer_linear(g, "fc2", h, s->hidden, 2, 1); /* [B,2] */
    hg_graph_keep(g, logits); /* metrics() reads it after the forward */
    memset(m, 0, sizeof(*m));
    m->loss = hg_cross_entropy(g, logits, y, -100, 0.f); /* [1], summed */
    m->nll = -1;              /* the loss is the NLL (ABI 2) */
    m->metric_src = logits;
    m->sym[0] = B;
    m->nsym = 1;
    return 0;
}

/* 5. One batch into the graph's inputs. b->field[f] is field f collated as
 * [B, item shape]. A dummy batch (size 0) is one zero sample of weight 0. */
static int xor_fill(void *state, const struct hg_batch *b, struct hg_graph *g,
                    struct hg_exec *ex, const struct hg_task_model *m,
                    struct hg_task_fill *f, char *err, size_t errlen)
{
    (void)state;
    int tx = hg_graph_find(g, "x"), ty = hg_graph_find(g, "y");
    if (tx < 0 || ty < 0) {
        snprintf(err, errlen, "xor: graph has no x/y inputs");
        return -1;
    }
    float *x = hg_exec_data(ex, tx);   /* [B,2] */
    int32_t *y = hg_exec_data(ex, ty); /* [B] */
    int64_t B = b->size;
    memset(f, 0, sizeof(*f));
    if (B == 0) {
        x[0] = x[1] = 0.f;
        y[0] = 0;
        f->sym_value[0] = 1;
        f->sample_size = 0;
        return 0;
    }
    const struct hg_tview *bx = &b->field[F_X], *by = &b->field[F_Y];
    if (bx->shape.ndim != 2 || bx->shape.dim[0] != B || bx->shape.dim[1] != 2 ||
        by->shape.ndim != 1 || by->shape.dim[0] != B) {
        snprintf(err, errlen, "xor: batch step %lld: x must be [%lld,2] and "
                 "y [%lld]", (long long)b->step, (long long)B, (long long)B);
        return -1;
    }
    memcpy(x, bx->data, (size_t)B * 2 * sizeof(float));
    memcpy(y, by->data, (size_t)B * sizeof(int32_t));
    (void)m;
    f->sym_value[0] = B;
    f->sample_size = (double)B; /* the loss sums over B samples */
    return 0;
}

/* 6. Optional metrics: sums the controller divides by the sample size. */
static void xor_metrics(void *state, const struct hg_batch *b,
                        struct hg_graph *g, struct hg_exec *ex,
                        const struct hg_task_model *m, double *acc)
{
    (void)state;
    (void)g;
    const float *lg = hg_exec_data(ex, m->metric_src); /* [B,2] */
    const int32_t *y = b->field[F_Y].data;
    for (int64_t i = 0; i < b->size; i++)
        acc[0] += (lg[2 * i + 1] > lg[2 * i]) == (y[i] == 1);
}

static const struct hg_task xor_task = {
    .abi_version = HG_TASK_ABI_VERSION,
    .name = "xor",
    .help = "2-layer MLP learning XOR of signs (example plug-in)",
    .sample_unit = "samples",
    .options = xor_options,
    .fields = xor_fields,
    .nfields = NFIELDS,
    .metric_names = {"accuracy", NULL},
    .maximize_metric0 = 1,
    .setup = xor_setup,
    .teardown = xor_teardown,
    .cost = NULL,
    .build = xor_build,
    .fill = xor_fill,
    .metrics = xor_metrics,
};

/* 7. The one symbol hgtrain looks up. */
const struct hg_task *hg_task_plugin(void);
const struct hg_task *hg_task_plugin(void)
{
    return &xor_task;
}
