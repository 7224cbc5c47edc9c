/* mnist.c - the "mnist" task: HetSeq's (and the PyTorch example's) MNIST
 * CNN over shards written by `hgpreprocess images`: fields image u8
 * [N,28,28] and label i32 [N]. The loss is the NLL summed over the batch;
 * the sample size is the number of images; the metric is accuracy. */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "tasks/hg_task.h"
#include "tasks/task-impl.h"
#include "tasks/models.h"

/* The PyTorch example's normalisation: (x / 255 - mean) / std. */
#define MNIST_MEAN 0.1307f
#define MNIST_STD 0.3081f
#define MNIST_SIDE 28
#define MNIST_PIXELS (MNIST_SIDE * MNIST_SIDE)
#define MNIST_CLASSES 10

enum { F_IMAGE, F_LABEL, NFIELDS };
enum { OPT_NORMALIZE, OPT_DROPOUT };

static const struct hg_task_option mnist_options[] = {
    [OPT_NORMALIZE] = {"mnist-normalize", "1",
                       "normalise pixels with the MNIST mean/std as the "
                       "PyTorch example (0: x/255 only)"},
    [OPT_DROPOUT] = {"dropout", NULL,
                     "probability of both dropout layers (default: the "
                     "PyTorch example's 0.25 and 0.5; 0: none)"},
    {NULL, NULL, NULL, 0}};

static const struct hg_field mnist_fields[NFIELDS] = {
    [F_IMAGE] = {.name = "image", .kind = HG_FIELD_ARRAY, .dtype = HG_U8,
                 .rank = 2},
    [F_LABEL] = {.name = "label", .kind = HG_FIELD_ARRAY, .dtype = HG_I32,
                 .rank = 0, .vocab = MNIST_CLASSES},
};

struct mnist_state {
    int normalize;
    float dropout; /* < 0: the example's 0.25 / 0.5 */
};

static int mnist_setup(void **state, const char *data,
                       const struct hg_task_args *args, char *err,
                       size_t errlen)
{
    (void)data; /* train/ and test/ shards are the controller's business */
    const char *v = args && args->values ? args->values[OPT_NORMALIZE] : NULL;
    int normalize = 1;
    if (v) {
        if (strcmp(v, "1") == 0)
            normalize = 1;
        else if (strcmp(v, "0") == 0)
            normalize = 0;
        else {
            snprintf(err, errlen, "--mnist-normalize: expected 0 or 1, got '%s'", v);
            return -1;
        }
    }
    const char *dv = args && args->values ? args->values[OPT_DROPOUT] : NULL;
    float dropout = -1.f; /* the example's */
    if (dv && hg__task_opt_prob("dropout", dv, &dropout, err, errlen) != 0)
        return -1;
    struct mnist_state *s = malloc(sizeof(*s));
    if (!s) {
        snprintf(err, errlen, "mnist: out of memory");
        return -1;
    }
    s->normalize = normalize;
    s->dropout = dropout;
    *state = s;
    return 0;
}

static void mnist_teardown(void *state)
{
    free(state);
}

static int mnist_build(void *state, struct hg_graph *g, int64_t max_batch,
                       int64_t max_len, int train, struct hg_task_model *m,
                       char *err, size_t errlen)
{
    const struct mnist_state *s = state;
    (void)max_len; /* every sample is one 28x28 image */
    if (max_batch < 1) {
        snprintf(err, errlen, "mnist: max batch %lld < 1", (long long)max_batch);
        return -1;
    }
    struct hg_mnist_cnn_cfg cfg = HG_MNIST_CNN_DEFAULT;
    if (s && s->dropout >= 0)
        cfg.dropout1 = cfg.dropout2 = s->dropout;
    if (!train)
        cfg.dropout1 = cfg.dropout2 = 0.f; /* no dropout ops at all */
    struct hg_model mm;
    if (hg_model_mnist_cnn(g, &cfg, max_batch, &mm) < 0) {
        snprintf(err, errlen, "mnist: building the CNN failed");
        return -1;
    }
    memset(m, 0, sizeof(*m));
    m->loss = mm.loss;
    m->nll = -1; /* the loss is the NLL */
    m->metric_src = mm.logits;
    m->sym[0] = mm.batch_sym;
    m->nsym = 1;
    return 0;
}

/* The graph's input tensors, found by the names hg_model_mnist_cnn gives. */
static int mnist_inputs(struct hg_graph *g, int *image, int *label, char *err,
                        size_t errlen)
{
    *image = hg_graph_find(g, "image");
    *label = hg_graph_find(g, "label");
    if (*image < 0 || *label < 0) {
        snprintf(err, errlen, "mnist: graph has no 'image'/'label' inputs "
                 "(not built by this task?)");
        return -1;
    }
    return 0;
}

/* A dummy batch (b->size 0, a rank with no data this step) becomes one
 * all-zero image with label 0 and sample_size 0: the symbols stay valid, so
 * the graph can run if the controller chooses to. Requirement on the
 * controller: a zero-weight batch must contribute nothing. It scales the
 * loss gradient by grad_scale = 1 / (global sample size), and this batch's
 * loss is NOT zero, so it must skip the batch's forward/backward (sending
 * zero gradients to the all-reduce) or zero the gradients it produced. */
static int mnist_fill(void *state, const struct hg_batch *b, struct hg_graph *g,
                      struct hg_exec *ex, const struct hg_task_model *m,
                      struct hg_task_fill *f, char *err, size_t errlen)
{
    const struct mnist_state *s = state;
    int ti, tl;
    if (mnist_inputs(g, &ti, &tl, err, errlen) < 0)
        return -1;
    float *x = hg_exec_data(ex, ti);   /* [B,1,28,28] */
    int32_t *y = hg_exec_data(ex, tl); /* [B] */
    memset(f, 0, sizeof(*f));
    if (b->size == 0) {
        memset(x, 0, MNIST_PIXELS * sizeof(float));
        y[0] = 0;
        for (int i = 0; i < m->nsym; i++)
            f->sym_value[i] = 1;
        f->sample_size = 0;
        return 0;
    }
    int64_t B = b->size;
    const struct hg_tview *im = &b->field[F_IMAGE], *lb = &b->field[F_LABEL];
    if (im->dtype != HG_U8 || im->shape.ndim != 3 || im->shape.dim[0] != B ||
        im->shape.dim[1] != MNIST_SIDE || im->shape.dim[2] != MNIST_SIDE) {
        char sh[64], w[4200];
        snprintf(err, errlen, "mnist: batch step %lld: image is %s %s, want u8 "
                 "[%lld,28,28]%s", (long long)b->step, hg_dtype_name(im->dtype),
                 hg_shape_str(&im->shape, sh, sizeof(sh)), (long long)B,
                 hg_batch_where(b, 0, w, sizeof w));
        return -1;
    }
    if (lb->dtype != HG_I32 || lb->shape.ndim != 1 || lb->shape.dim[0] != B) {
        char sh[64], w[4200];
        snprintf(err, errlen, "mnist: batch step %lld: label is %s %s, want i32 "
                 "[%lld]%s", (long long)b->step, hg_dtype_name(lb->dtype),
                 hg_shape_str(&lb->shape, sh, sizeof(sh)), (long long)B,
                 hg_batch_where(b, 0, w, sizeof w));
        return -1;
    }
    const int32_t *lab = lb->data;
    for (int64_t i = 0; i < B; i++) {
        if (lab[i] < 0 || lab[i] >= MNIST_CLASSES) {
            char w[4200];
            snprintf(err, errlen, "mnist: batch step %lld, sample %lld: label %d "
                     "not in [0,%d)%s", (long long)b->step, (long long)i,
                     (int)lab[i], MNIST_CLASSES, hg_batch_where(b, i, w, sizeof w));
            return -1;
        }
        y[i] = lab[i];
    }
    const uint8_t *px = im->data;
    const float a = s->normalize ? 1.f / (255.f * MNIST_STD) : 1.f / 255.f;
    const float c = s->normalize ? -MNIST_MEAN / MNIST_STD : 0.f;
    for (int64_t i = 0; i < B * MNIST_PIXELS; i++)
        x[i] = (float)px[i] * a + c;
    for (int i = 0; i < m->nsym; i++)
        f->sym_value[i] = B;
    f->sample_size = (double)B;
    return 0;
}

static void mnist_metrics(void *state, const struct hg_batch *b,
                          struct hg_graph *g, struct hg_exec *ex,
                          const struct hg_task_model *m, double *acc)
{
    (void)state;
    (void)g;
    if (b->size == 0 || m->metric_src < 0)
        return;
    const float *lp = hg_exec_data(ex, m->metric_src); /* [B,10] */
    const int32_t *lab = b->field[F_LABEL].data;       /* [B] */
    int64_t correct = 0;
    for (int64_t i = 0; i < b->size; i++) {
        const float *row = lp + i * MNIST_CLASSES;
        int best = 0;
        for (int k = 1; k < MNIST_CLASSES; k++)
            if (row[k] > row[best])
                best = k;
        correct += best == lab[i];
    }
    acc[0] += (double)correct;
}

const struct hg_task hg_task_mnist = {
    .abi_version = HG_TASK_ABI_VERSION,
    .name = "mnist",
    .help = "MNIST digits with HetSeq's CNN (shards from `hgpreprocess images`)",
    .sample_unit = "images",
    .options = mnist_options,
    .fields = mnist_fields,
    .nfields = NFIELDS,
    .metric_names = {"accuracy", NULL},
    .maximize_metric0 = 1,
    .setup = mnist_setup,
    .teardown = mnist_teardown,
    .cost = NULL, /* one unit per image */
    .build = mnist_build,
    .fill = mnist_fill,
    .metrics = mnist_metrics,
};
