/* recipe.c - the training graph's one recipe: a task's model, then the
 * backward of its loss, then the optimizer's update ops.  A strategy file
 * indexes that graph's ops by node id, so the controller (its plans),
 * the trainer (the graph it loads a strategy against) and hgplan (the
 * graph it plans) all build it here, and differ only in what their hooks
 * add between the stages. */
#define _POSIX_C_SOURCE 200809L
#include <string.h>

#include "tasks/hg_task.h"

int hg_task_graph(struct hg_graph *g, const struct hg_task *task, void *ts,
                  const struct hg_task_graph_opts *o, struct hg_task_model *m, char *err,
                  size_t errlen)
{
    const struct hg_task_recipe *h = o->hooks;
    memset(m, 0, sizeof *m);
    if (task->build(ts, g, o->batch, o->max_len, o->train, m, err, errlen) != 0)
        return -1;
    if (m->nsym != hg_graph_n_syms(g) || m->nsym > HG_MAX_SYMS)
        return hg_kerr(err, errlen, "task %s: build() declared %d symbols but "
                       "lists %d in its model", task->name, hg_graph_n_syms(g), m->nsym);
    if (m->nll >= 0) {
        /* -1 is "none": a memset model (nll 0) names an input, refused */
        const struct hg_tensor_info *ti = m->nll < hg_graph_n_tensors(g)
                                              ? hg_graph_tensor(g, m->nll) : NULL;
        if (!ti || ti->producer < 0 || ti->dtype != HG_F32 ||
            hg_shape_numel(&ti->decl) != 1)
            return hg_kerr(err, errlen, "task %s: build() gives nll tensor %d, not "
                           "a [1] f32 output of an op (-1: none)", task->name, m->nll);
    }
    if (h && h->forward && h->forward(h->ctx, g, m, err, errlen) != 0)
        return -1;
    if (!o->backward)
        return 0;
    hg_graph_backward(g, m->loss);
    if (h && h->backward && h->backward(h->ctx, g, m, err, errlen) != 0)
        return -1;
    hg_graph_optimizer(g, o->optim, &o->hyper);
    return h && h->update ? h->update(h->ctx, g, m, err, errlen) : 0;
}
