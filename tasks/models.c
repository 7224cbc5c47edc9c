/* models.c - model builders shared by tasks, tests and benchmarks. */
#include "tasks/models.h"

int hg_model_mnist_cnn(struct hg_graph *g, const struct hg_mnist_cnn_cfg *cfg,
                       int64_t max_batch, struct hg_model *m)
{
    int64_t B = hg_graph_sym(g, "batch", max_batch);
    int64_t xd[4] = {B, 1, 28, 28};
    m->batch_sym = B;
    m->input = hg_graph_input(g, "image", HG_F32, 4, xd, 0);
    m->target = hg_graph_input(g, "label", HG_I32, 1, &B, 0);
    int x = hg_relu(g, hg_layer_conv2d(g, "conv1", m->input, 1, cfg->c1, 3, 1, 0, 1));
    x = hg_relu(g, hg_layer_conv2d(g, "conv2", x, cfg->c1, cfg->c2, 3, 1, 0, 1));
    x = hg_maxpool2d(g, x, 2, 2, 0);                  /* [B,c2,12,12] */
    if (cfg->dropout1 > 0)
        x = hg_dropout(g, x, cfg->dropout1, cfg->seed);
    int64_t flat[2] = {0, -1};
    x = hg_reshape(g, x, 2, flat);                   /* [B,c2*144] */
    x = hg_relu(g, hg_layer_linear(g, "fc1", x, cfg->c2 * 144, cfg->hidden, 1));
    if (cfg->dropout2 > 0)
        x = hg_dropout(g, x, cfg->dropout2, cfg->seed);
    x = hg_layer_linear(g, "fc2", x, cfg->hidden, 10, 1);
    m->logits = hg_log_softmax(g, x);                /* [B,10] */
    hg_graph_keep(g, m->logits);
    m->loss = hg_nll(g, m->logits, m->target, -100, 0.f);
    return 0;
}
