/* recipe.c - the training graph's one recipe: a task's model, then the
 * backward of its loss, then the optimizer's update ops.  A strategy file
 * indexes that graph's ops by node id, so the controller (its plans),
 * the trainer (the graph it loads a strategy against) and hgplan (the
 * graph it plans) all build it here, and differ only in what their hooks
 * add between the stages.  Here too the longest sample, the length each of
 * them prices a strategy's memory at. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
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

int32_t hg_task_costs(const struct hg_task *task, void *ts, const struct hg_dataset *ds,
                      int32_t *out)
{
    int64_t n = hg_dataset_size(ds);
    if (task->cost)
        task->cost(ts, ds, out);
    else
        memcpy(out, hg_dataset_lengths(ds, 0), (size_t)n * sizeof *out);
    int32_t max = 1;
    for (int64_t i = 0; i < n; i++)
        max = out[i] > max ? out[i] : max;
    return max;
}

int hg_task_longest(const struct hg_task *task, void *ts, const char *data, const char *split,
                    int32_t *len, char *err, size_t errlen)
{
    char spec[4096];
    struct hg_dataset *ds = NULL;
    if (hg_dataset_split_spec(data, split, spec, sizeof spec, err, errlen) != 0 ||
        hg_dataset_open(&ds, spec, task->fields, task->nfields, 0, err, errlen) != 0)
        return -1;
    int64_t n = hg_dataset_size(ds);
    int32_t *cost = malloc((size_t)(n ? n : 1) * sizeof *cost); /* [n] */
    if (!cost) {
        hg_dataset_close(ds);
        return hg_kerr(err, errlen, "out of memory");
    }
    *len = hg_task_costs(task, ts, ds, cost);
    free(cost);
    hg_dataset_close(ds);
    return 0;
}
