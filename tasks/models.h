/* models.h - model builders shared by tasks, tests and benchmarks. */
#ifndef HG_MODELS_H
#define HG_MODELS_H

#include "graph/hg_graph.h"

/* The PyTorch MNIST example network (also HetSeq's):
 * conv1 Conv2d(1,c1,3) -> relu -> conv2 Conv2d(c1,c2,3) -> relu ->
 * max_pool2d(2) -> dropout(p1) -> flatten -> fc1 Linear(c2*12*12, hidden) ->
 * relu -> dropout(p2) -> fc2 Linear(hidden, 10) -> log_softmax -> nll (sum). */
struct hg_mnist_cnn_cfg {
    int64_t c1, c2, hidden;
    float dropout1, dropout2;
    uint64_t seed; /* dropout stream */
};
#define HG_MNIST_CNN_DEFAULT {.c1 = 32, .c2 = 64, .hidden = 128, \
                              .dropout1 = 0.25f, .dropout2 = 0.5f, .seed = 1}

struct hg_model {
    int input;  /* "image" [B,1,28,28] f32, batch axis 0 */
    int target; /* "label" [B] i32 */
    int logits; /* [B,10] log-probabilities */
    int loss;   /* [1], summed over the batch */
    int64_t batch_sym;
};

int hg_model_mnist_cnn(struct hg_graph *g, const struct hg_mnist_cnn_cfg *cfg,
                       int64_t max_batch, struct hg_model *m);

#endif
