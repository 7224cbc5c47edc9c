/* step.c - one training step on one process: micro-batches accumulate
 * gradient sums, one update runs the plan's communication nodes (the
 * gradients summed over the ranks: dp.c adds them), divides by the total
 * sample size, clips, refuses NaN/Inf, and runs the optimizer ops. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/ctl-impl.h"

#define HG_MAX_SYMS_TASK HG_MAX_SYMS /* graph symbols */

/* The scalars of a step, summed over ranks in one f64 allreduce (then,
 * per rank, its compute and wait times: hg_ctl_rank_times). */
enum { R_LOSS, R_NLL, R_SS, R_SENT, R_STOP_SIGNAL, R_STOP_TIME, R_PS_SQ, R_METRIC,
       R_N = R_METRIC + HG_TASK_MAX_METRICS };

/* The strategy's recomputation on the train graph (after the optimizer):
 * the task's nodes, or the nodes standing for them (a row's copies). */
static int recompute(struct hg_ctl *c, struct plan *p, char *err, size_t errlen)
{
    const int *v = c->s->recompute;
    int n = c->s->nrecompute, *own = NULL;
    for (int k = 0; k < c->nmode; k++)
        if (c->mode[k]->copies) {
            int *w = NULL;
            n = c->mode[k]->copies(c, v, n, &w);
            free(own);
            if (n < 0)
                return hg_kerr(err, errlen, "out of memory");
            v = own = w;
        }
    int made = hg_graph_recompute(p->g, v, n, err, errlen);
    free(own);
    return made < 0 ? -1 : 0;
}

/* What build() hands the recipe's hooks (tasks/recipe.c): the plan being
 * built; the update's comm nodes before (ncomm) and after (npull) the
 * optimizer; early: the first may start from the backward. */
struct stage {
    struct hg_ctl *c;
    struct plan *p;
    int train, ncomm, npull, early;
};

/* After the task's build: --max-tokens' caps; the modes' splits. */
static int on_forward(void *ctx, struct hg_graph *g, struct hg_task_model *m, char *err,
                      size_t errlen)
{
    struct stage *st = ctx;
    struct hg_ctl *c = st->c;
    const struct hg_ctl_cfg *cfg = &c->cfg;
    (void)m;
    int kb = hg_graph_sym_find(g, "batch");
    if (cfg->max_tokens > 0 && kb >= 0) {
        int lens[HG_MAX_SYMS], nl = 0;
        for (int k = 0; k < hg_graph_n_syms(g); k++)
            if (k != kb && hg_graph_sym_max(g, k) == cfg->max_len)
                lens[nl++] = k;
        /* the epoch plan keeps samples x their longest cost within
         * max_tokens, and a task's length symbols are at most that cost
         * (hg_task.h); a task that breaks this gets the error that names
         * the batch */
        int64_t cap = cfg->max_tokens;
        if (nl > 0 && cap < cfg->max_batch * cfg->max_len)
            hg_graph_token_cap(g, kb, lens, nl, cap);
    }
    for (int k = 0; st->train && k < c->nmode; k++)
        if (c->mode[k]->split_graph && c->mode[k]->split_graph(c, st->p, err, errlen) != 0)
            return -1;
    return 0;
}

/* After the backward: the modes' gradient aggregation. */
static int on_backward(void *ctx, struct hg_graph *g, struct hg_task_model *m, char *err,
                       size_t errlen)
{
    struct stage *st = ctx;
    (void)g, (void)m, (void)err, (void)errlen;
    for (int k = 0; k < st->c->nmode; k++)
        if (st->c->mode[k]->aggregate)
            st->ncomm += st->c->mode[k]->aggregate(st->c, st->p, &st->early);
    return 0;
}

/* After the optimizer: the modes' last nodes; recomputation. */
static int on_update(void *ctx, struct hg_graph *g, struct hg_task_model *m, char *err,
                     size_t errlen)
{
    struct stage *st = ctx;
    (void)g, (void)m;
    for (int k = 0; k < st->c->nmode; k++)
        if (st->c->mode[k]->finish)
            st->npull += st->c->mode[k]->finish(st->c, st->p);
    return st->c->s && st->c->s->nrecompute > 0 ? recompute(st->c, st->p, err, errlen) : 0;
}

/* The plan's order (*order malloc'ed): a claiming row's, else every node
 * phase by phase in the strategy's order or the id order; then what the
 * rows filter out.  Its length, -1 with err. */
static int plan_order(struct hg_ctl *c, struct plan *p, int train, int **order, char *err,
                      size_t errlen)
{
    int n = -2;
    *order = NULL;
    for (int k = 0; train && k < c->nmode && n == -2; k++)
        if (c->mode[k]->order)
            n = c->mode[k]->order(c, p, order, err, errlen);
    if (n == -2) {
        *order = malloc((size_t)hg_graph_n_nodes(p->g) * sizeof(int));
        if (!*order)
            return hg_kerr(err, errlen, "out of memory");
        n = hg_graph_order(p->g, train ? HG_PH_ALL : HG_PH_FORWARD, *order);
        /* hg_graph_order's is the id order: every node, phase by phase */
        HG_CHECK(!train || n == hg_graph_n_nodes(p->g));
        if (train && (c->place.order || (c->s && c->s->nrecompute > 0)) &&
            hg__mp_sequence(p->g, &c->place, n, *order, err, errlen) != 0)
            n = -1;
    }
    for (int k = 0; train && n >= 0 && k < c->nmode; k++)
        if (c->mode[k]->filter)
            n = c->mode[k]->filter(c, p, *order, n);
    if (n < 0) {
        free(*order);
        *order = NULL;
    }
    return n;
}

/* One plan (train: with backward, optimizer and the claiming modes'
 * nodes and callbacks; else the forward), its executor included. */
static int build_plan(struct hg_ctl *c, struct plan *p, const struct hg_task *task, void *ts,
                      int train, char *err, size_t errlen)
{
    const struct hg_ctl_cfg *cfg = &c->cfg;
    struct stage st = {.c = c, .p = p, .train = train};
    const struct hg_task_recipe hooks = {.ctx = &st, .forward = on_forward,
                                         .backward = on_backward, .update = on_update};
    const struct hg_task_graph_opts go = {.batch = cfg->max_batch, .max_len = cfg->max_len,
                                          .train = train, .backward = train,
                                          .optim = cfg->optim, .hyper = cfg->hyper,
                                          .hooks = &hooks};
    p->g = hg_graph_new();
    if (hg_task_graph(p->g, task, ts, &go, &p->m, err, errlen) != 0)
        return -1;
    int ncomm = st.ncomm, npull = st.npull, early = st.early, *order = NULL;
    p->n = plan_order(c, p, train, &order, err, errlen);
    if (p->n < 0)
        return -1;
    /* the order is phase by phase: the update nodes are its tail */
    p->n_fb = 0;
    while (p->n_fb < p->n && hg_graph_node(p->g, order[p->n_fb])->phase != HG_PH_UPDATE)
        p->n_fb++;
    /* the update phase opens with its comm nodes (appended first) */
    p->n_c = p->n_fb + ncomm;
    p->n_o = p->n - npull;
    for (int i = p->n_fb; i < p->n; i++)
        HG_CHECK((i < p->n_c || i >= p->n_o) ==
                 ((hg_op_table[hg_graph_node(p->g, order[i])->op].flags & HG_OPF_COMM) != 0));
    p->ex = hg_exec_new_dev(p->g, order, p->n, cfg->cuda ? cfg->cuda_device : -1, err,
                            errlen);
    free(order);
    if (!p->ex)
        return -1;
    /* the rows in reverse: the parameter servers' handles exist before
     * the callbacks that run their nodes are installed */
    for (int k = train ? c->nmode - 1 : -1; k >= 0; k--)
        if (c->mode[k]->start && c->mode[k]->start(c, p, err, errlen) != 0)
            return -1;
    if (train) {
        c->early = early;
        c->nbk = early ? ncomm : 0;
    }
    return 0;
}

/* c->owner: each parameter's server (the strategy's agg_ps: it holds the master copy
 * and optimizer state), the others rank 0's or, with cfg.spread_owners,
 * greedy largest first onto the least-loaded rank (the servers' own
 * parameters counted in their loads); -1 when out of memory. */
static int set_owners(struct hg_ctl *c)
{
    int np = hg_graph_n_params(c->train.g);
    int world = c->comm ? hg_comm_world(c->comm) : 1;
    c->owner = calloc((size_t)(np > 0 ? np : 1), sizeof(int)); /* [np] */
    int *by = malloc((size_t)(np > 0 ? np : 1) * sizeof(int));        /* [np] */
    int64_t *size = malloc((size_t)(np > 0 ? np : 1) * sizeof(int64_t)); /* [np] */
    int64_t *load = calloc((size_t)world, sizeof(int64_t));           /* [world] */
    int rc = c->owner && by && size && load ? 0 : -1;
    int nfree = 0; /* parameters no server holds, in by[0..nfree) */
    for (int i = 0; rc == 0 && i < np; i++) {
        int t = hg_graph_param_at(c->train.g, i);
        size[i] = hg_shape_numel(&hg_graph_tensor(c->train.g, t)->shape);
        /* a server, or under model parallelism the rank that holds and
         * updates it */
        int server = -1;
        for (int k = 0; k < c->nmode; k++)
            if (c->mode[k]->owner)
                server = c->mode[k]->owner(c, i, t);
        HG_CHECK(server < world);
        if (server >= 0) {
            c->owner[i] = server;
            load[server] += size[i];
        } else {
            by[nfree++] = i;
        }
    }
    /* largest first, ties by parameter index (insertion sort: stable) */
    for (int i = 1; rc == 0 && i < nfree; i++)
        for (int j = i; j > 0 && size[by[j - 1]] < size[by[j]]; j--) {
            int t = by[j - 1];
            by[j - 1] = by[j];
            by[j] = t;
        }
    for (int k = 0; rc == 0 && c->cfg.spread_owners && k < nfree; k++) {
        int best = 0;
        for (int r = 1; r < world; r++)
            if (load[r] < load[best])
                best = r;
        c->owner[by[k]] = best;
        load[best] += size[by[k]];
    }
    free(by);
    free(size);
    free(load);
    return rc;
}

int hg_ctl_param_owner(const struct hg_ctl *c, int i)
{
    HG_CHECK(i >= 0 && i < hg_graph_n_params(c->train.g));
    return c->owner[i];
}

int hg_ctl_param_owners(const struct hg_ctl *c, int *owner)
{
    int np = hg_graph_n_params(c->train.g);
    int world = c->comm ? hg_comm_world(c->comm) : 1;
    int n = 0;
    for (int r = 0; r < world; r++) {
        int has = 0;
        for (int i = 0; i < np; i++)
            has |= c->owner[i] == r;
        n += has;
    }
    memcpy(owner, c->owner, (size_t)np * sizeof(int));
    return n;
}

int hg_ctl_new(struct hg_ctl **out, const struct hg_task *task, void *ts,
               const struct hg_ctl_cfg *cfg, char *err, size_t errlen)
{
    struct hg_ctl *c = calloc(1, sizeof(*c));
    *out = NULL;
    if (!c)
        return hg_kerr(err, errlen, "out of memory");
    c->task = task;
    c->ts = ts;
    c->cfg = *cfg;
    c->s = cfg->strat;
    if (c->s)
        c->place = (struct hg__place){.op_rank = c->s->op_rank, .n_op_rank = c->s->nops,
                                      .order = c->s->order, .n_order = c->s->nops,
                                      .xfer_node = c->s->xfer_node,
                                      .xfer_dst = c->s->xfer_dst, .nxfers = c->s->nxfers};
    c->comm = cfg->comm;
    c->world = cfg->comm ? hg_comm_world(cfg->comm) : 1;
    c->red = malloc(((size_t)R_N + 2 * (size_t)c->world) * sizeof(double));
    c->rank_t = calloc(2 * (size_t)c->world, sizeof(double));
    if (!c->red || !c->rank_t) {
        hg_ctl_free(c);
        return hg_kerr(err, errlen, "out of memory");
    }
    if (c->cfg.max_bad_updates <= 0)
        c->cfg.max_bad_updates = 10;
    for (int k = 0; hg__ctl_modes[k]; k++)
        if (hg__ctl_modes[k]->claims(c)) {
            HG_CHECK(c->nmode < HG__MAX_MODES);
            c->mode[c->nmode++] = hg__ctl_modes[k];
        }
    int one_micro = 0;
    for (int k = 0; k < c->nmode; k++) {
        one_micro |= c->mode[k]->one_micro && c->mode[k]->one_micro(c);
        c->partial |= c->mode[k]->partial;
    }
    if (one_micro && cfg->update_freq > 1) {
        hg_ctl_free(c);
        return hg_kerr(err, errlen, "a model-parallel strategy runs one micro-batch per "
                       "update so far (--update-freq > 1: its gradients arrive outside the "
                       "grad block); a pipeline takes --update-freq");
    }
    if (build_plan(c, &c->train, task, ts, 1, err, errlen) != 0 ||
        build_plan(c, &c->valid, task, ts, 0, err, errlen) != 0) {
        hg_ctl_free(c);
        return -1;
    }
    /* --update-freq > 1: what the update reads from the forward and
     * backward outside the grad block (a gradient another rank sent) is
     * summed over the micro-batches with it */
    if (cfg->update_freq > 1 &&
        hg_exec_grad_carry(c->train.ex, c->train.n_fb, err, errlen) < 0) {
        hg_ctl_free(c);
        return -1;
    }
    size_t np, npv;
    struct hg_graph *wg = c->train.g;
    struct hg_exec *wex = c->train.ex;
    if (hg_ctl_state_view(c, &wg, &wex, err, errlen) != 0) { /* the parameters whole */
        hg_ctl_free(c);
        return -1;
    }
    hg_exec_param_block(wex, &np);
    hg_exec_param_block(c->valid.ex, &npv);
    if (np != npv) {
        hg_ctl_free(c);
        return hg_kerr(err, errlen, "task %s: train and valid models differ "
                       "(%zu vs %zu parameters)", task->name, np, npv);
    }
    hg_exec_grad_block(c->train.ex, &c->ngrad);
    if (set_owners(c) != 0) {
        hg_ctl_free(c);
        return hg_kerr(err, errlen, "out of memory");
    }
    c->loss_scale = 1;
    if (cfg->lowp != HG_LOWP_NONE) {
        if (!cfg->cuda) {
            hg_ctl_free(c);
            return hg_kerr(err, errlen, "--bf16/--fp16: mixed precision is a GPU "
                           "feature (--devices cuda:N); the CPU computes in fp32");
        }
        hg_exec_set_lowp(c->train.ex, cfg->lowp);
        hg_exec_set_lowp(c->valid.ex, cfg->lowp);
        if (cfg->lowp == HG_LOWP_FP16) {
            c->loss_scale = cfg->loss_scale_init > 0 ? cfg->loss_scale_init : 128;
            hg_exec_set_loss_scale(c->train.ex, (float)c->loss_scale);
        }
    }
    /* a planted bug (a test aid): the loss gradient's seed, 1 in fp32,
     * scales this rank's whole gradient */
    if (cfg->grad_weight > 0 && cfg->grad_weight != 1 && cfg->lowp == HG_LOWP_NONE)
        hg_exec_set_loss_scale(c->train.ex, (float)cfg->grad_weight);
    /* --rank-slowdown: every compute op of the train plan (forward,
     * backward, optimizer), as the planner's time_share divides every
     * compute time; comm nodes and the validation plan run as they are */
    hg_exec_set_slowdown(c->train.ex, cfg->slowdown);
    hg_graph_init_params(c->train.g, c->train.ex, cfg->seed);
    for (int k = 0; k < c->nmode; k++)
        if (c->mode[k]->init && c->mode[k]->init(c, cfg->seed, err, errlen) != 0) {
            hg_ctl_free(c);
            return -1;
        }
    if (hg_exec_upload(c->train.ex, HG_R_PARAMS, err, errlen) != 0) {
        hg_ctl_free(c);
        return -1;
    }
    c->valid_stale = 1;
    *out = c;
    return 0;
}

void hg_ctl_free(struct hg_ctl *c)
{
    if (!c)
        return;
    struct plan *ps[2] = {&c->train, &c->valid};
    for (int i = 0; i < 2; i++) {
        hg_exec_free(ps[i]->ex);
        hg_graph_free(ps[i]->g);
    }
    for (int k = 0; k < c->nmode; k++)
        if (c->mode[k]->free)
            c->mode[k]->free(c);
    free(c->owner);
    free(c->rc_rank);
    free(c->red);
    free(c->rank_t);
    free(c);
}

struct hg_graph *hg_ctl_graph(struct hg_ctl *c) { return c->train.g; }
struct hg_exec *hg_ctl_exec(struct hg_ctl *c) { return c->train.ex; }

/* The graph's sample ids (dropout's key; docs/reproducibility.md,
 * "Dropout"): each row's sample index in the dataset, which is the same on
 * every rank, in every micro-batch and piece of a split; the row index
 * where the batch does not say (a dummy batch: one row). */
static void fill_sample_ids(struct plan *p, const struct hg_batch *b)
{
    int t = hg_graph_find(p->g, HG_SAMPLE_IDS);
    if (t < 0)
        return;
    int32_t *id = hg_exec_data(p->ex, t); /* [B] */
    if (b->size == 0) {
        id[0] = 0;
        return;
    }
    for (int64_t i = 0; i < b->size; i++)
        id[i] = (int32_t)(uint32_t)(b->ids ? b->ids[i] : i);
}

/* fill() and resolve the task's symbols; returns the batch's sample size */
static int fill(struct hg_ctl *c, struct plan *p, const struct hg_batch *b,
                struct hg_step *st, int64_t *sym, double *sample_size,
                char *err, size_t errlen)
{
    /* fill() writes into buffers planned for the maxima: refuse a batch
     * that would not fit before anything is written */
    if (b->size > c->cfg.max_batch)
        return hg_kerr(err, errlen, "step %lld: batch of %lld samples, the plan "
                       "holds %lld", (long long)b->step, (long long)b->size,
                       (long long)c->cfg.max_batch);
    for (int i = 0; i < c->task->nfields && i < 8; i++)
        if (c->task->fields[i].kind == HG_FIELD_SEQ && b->field[i].shape.ndim >= 2 &&
            b->field[i].shape.dim[1] > c->cfg.max_len)
            return hg_kerr(err, errlen, "step %lld: field %s has length %lld, the "
                           "plan holds %lld", (long long)b->step,
                           c->task->fields[i].name, (long long)b->field[i].shape.dim[1],
                           (long long)c->cfg.max_len);
    struct hg_task_fill f;
    memset(&f, 0, sizeof(f));
    if (c->task->fill(c->ts, b, p->g, p->ex, &p->m, &f, err, errlen) != 0)
        return -1;
    fill_sample_ids(p, b);
    for (int i = 0; i < p->m.nsym; i++)
        sym[HG_SYM_INDEX(p->m.sym[i])] = f.sym_value[i];
    int train = p == &c->train;
    for (int k = 0; train && k < c->nmode; k++)
        if (c->mode[k]->syms)
            c->mode[k]->syms(c, sym);
    st->sym = sym;
    *sample_size = f.sample_size;
    if (hg_exec_prepare(p->ex, st, err, errlen) != 0)
        return -1;
    for (int k = 0; train && k < c->nmode; k++)
        if (c->mode[k]->inputs && c->mode[k]->inputs(c, p, b->size) != 0)
            return -1;
    return 0;
}

/* 0: another rank counts the loss (nll 0) or the NLL (nll 1) */
static int counts(const struct hg_ctl *c, int nll)
{
    for (int k = 0; k < c->nmode; k++)
        if (c->mode[k]->counts && !c->mode[k]->counts(c, nll))
            return 0;
    return 1;
}

int hg_ctl_accumulate(struct hg_ctl *c, uint64_t num_updates,
                      const struct hg_batch *b, struct hg_ctl_stats *st,
                      char *err, size_t errlen)
{
    if (b->size == 0)
        return 0; /* a dummy batch: weight zero, nothing to add */
    for (int k = 0; k < c->nmode; k++)
        if (c->mode[k]->micro && c->mode[k]->micro(c, b, num_updates + 1, st) != 0)
            return 0; /* dropped */
    int64_t sym[HG_MAX_SYMS_TASK];
    double ss;
    /* The first micro-batch's gradient stays in the grad block (the common
     * --update-freq 1 case copies nothing); a second one moves it aside
     * (where the grads live: on a GPU they stay there). */
    if (c->n_acc == 1 && hg_exec_grad_op(c->train.ex, HG_GRAD_SAVE, err, errlen) != 0)
        return -1;
    /* comm nodes start from the backward only when it gives the update's
     * gradient (one micro-batch per update: cfg.update_freq 1) */
    HG_CHECK(!(c->early && c->n_acc > 0));
    hg_exec_set_early_comm(c->train.ex, c->early);
    /* dropout's stream: the update (its masks are keyed by the samples
     * within it: fill_sample_ids) */
    struct hg_step hs = {.step = num_updates + 1, .grad_scale = 1.f};
    double t0 = hg_now();
    if (fill(c, &c->train, b, &hs, sym, &ss, err, errlen) != 0 ||
        hg_exec_run(c->train.ex, &hs, 0, c->train.n_fb, err, errlen) != 0)
        return -1;
    /* the run has finished (on a GPU it waited for the device): the forward
     * and backward are done, --rank-slowdown's sleep with them */
    c->t_compute += hg_now() - t0;
    /* model parallelism: each counted once, by the rank that has it */
    if (counts(c, 0)) {
        st->loss_sum += *(const float *)hg_exec_data(c->train.ex, c->train.m.loss);
        st->sample_size += ss;
        st->nsentences += (double)b->size;
    }
    if (counts(c, 1))
        st->nll_sum += *(const float *)hg_exec_data(c->train.ex, c->train.m.nll >= 0
                                                    ? c->train.m.nll : c->train.m.loss);
    if (c->n_acc >= 1 && hg_exec_grad_op(c->train.ex, HG_GRAD_ADD, err, errlen) != 0)
        return -1;
    c->n_acc++;
    return 0;
}

int hg_ctl_buckets(const struct hg_ctl *c) { return c->nbk; }

/* times: an update's (its compute and wait times go along and come back
 * as c->rank_t); 0: validation's (zeros, c->rank_t stays) */
static int reduce_stats(struct hg_ctl *c, struct hg_ctl_stats *st, int times,
                        char *err, size_t errlen)
{
    double *v = c->red; /* [R_N + 2 * world] */
    memset(v, 0, ((size_t)R_N + 2 * (size_t)c->world) * sizeof(*v));
    v[R_LOSS] = st->loss_sum;
    v[R_NLL] = st->nll_sum;
    v[R_SS] = st->sample_size;
    v[R_SENT] = st->nsentences;
    v[R_STOP_SIGNAL] = (st->stop & HG_STOP_SIGNAL) != 0;
    v[R_STOP_TIME] = (st->stop & HG_STOP_TIME) != 0;
    v[R_PS_SQ] = c->sq_own;
    for (int i = 0; i < HG_TASK_MAX_METRICS; i++)
        v[R_METRIC + i] = st->metrics[i];
    /* each rank its own slots: the sum is every rank's times (exact:
     * the others add zeros) */
    int me = hg_comm_rank(c->comm);
    v[R_N + 2 * me] = times ? c->t_compute : 0;
    v[R_N + 2 * me + 1] = times ? c->t_wait : 0;
    if (hg_comm_allreduce_f64(c->comm, v, (size_t)R_N + 2 * (size_t)c->world, err,
                              errlen) != 0)
        return -1;
    if (times)
        memcpy(c->rank_t, v + R_N, 2 * (size_t)c->world * sizeof(*v));
    st->loss_sum = v[R_LOSS];
    st->nll_sum = v[R_NLL];
    st->sample_size = v[R_SS];
    st->nsentences = v[R_SENT];
    c->sq_all = v[R_PS_SQ];
    st->stop = (v[R_STOP_SIGNAL] > 0 ? HG_STOP_SIGNAL : 0) |
               (v[R_STOP_TIME] > 0 ? HG_STOP_TIME : 0);
    for (int i = 0; i < HG_TASK_MAX_METRICS; i++)
        st->metrics[i] = v[R_METRIC + i];
    return 0;
}

int hg_ctl_allreduce_stats(struct hg_ctl *c, struct hg_ctl_stats *st,
                           char *err, size_t errlen)
{
    c->sq_own = 0;
    return c->comm ? reduce_stats(c, st, 0, err, errlen) : 0;
}

int hg_ctl_rank_times(const struct hg_ctl *c, const double **t)
{
    *t = c->rank_t;
    return c->world;
}

int hg_ctl_state_view(struct hg_ctl *c, struct hg_graph **g, struct hg_exec **ex, char *err,
                      size_t errlen)
{
    *g = c->train.g;
    *ex = c->train.ex;
    for (int k = 0; k < c->nmode; k++)
        if (c->mode[k]->whole && c->mode[k]->whole(c, g, ex, err, errlen) != 0)
            return -1;
    return 0;
}

int hg_ctl_sync_state(struct hg_ctl *c, char *err, size_t errlen)
{
    for (int k = 0; k < c->nmode; k++)
        if (c->mode[k]->sync && c->mode[k]->sync(c, err, errlen) != 0)
            return -1;
    return 0;
}

int hg_ctl_update(struct hg_ctl *c, uint64_t num_updates, double lr,
                  struct hg_ctl_stats *st, char *err, size_t errlen)
{
    int n_acc = c->n_acc;
    c->n_acc = 0;
    c->t_wait = 0;
    struct hg_exec *ex = c->train.ex;
    /* the update's gradient sum into the grad block (it stays on a GPU) */
    if (n_acc > 1 && hg_exec_grad_op(ex, HG_GRAD_RESTORE, err, errlen) != 0)
        return -1;
    if (c->comm) {
        /* every rank takes part, with or without data: the sums decide */
        if (n_acc == 0 && hg_exec_grad_op(ex, HG_GRAD_ZERO, err, errlen) != 0)
            return -1;
        n_acc = 1;
        /* the comm nodes (those the backward has not started, all of them
         * on a rank without data), then the statistics: every rank issues
         * the same collectives in the same order */
        struct hg_step hs = {.step = num_updates + 1, .grad_scale = 1.f};
        double t0 = hg_now();
        if (hg_exec_run(ex, &hs, c->train.n_fb, c->train.n_c, err, errlen) != 0)
            return -1;
        c->t_wait = hg_now() - t0;
        /* the gradients a PS serves are summed on their server only: the
         * norm adds each server's part */
        c->sq_own = 0;
        for (int k = 0; k < c->nmode; k++)
            if (c->mode[k]->sumsq && c->mode[k]->sumsq(c, &c->sq_own, err, errlen) != 0)
                return -1;
        if (reduce_stats(c, st, 1, err, errlen) != 0)
            return -1;
    }
    if (!c->comm) {
        c->rank_t[0] = c->t_compute;
        c->rank_t[1] = 0;
    }
    c->t_compute = 0; /* the next update's from here */
    if (n_acc == 0 || st->sample_size <= 0) {
        st->skipped = 1; /* nothing seen: no update */
        return 0;
    }
    double sumsq = c->sq_all;
    int part = c->partial;
    if (!part && hg_exec_grad_sumsq(ex, &sumsq, err, errlen) != 0)
        return -1;
    /* the gradients some rank alone holds (a server's): the others' (0
     * without such) */
    if (!part)
        sumsq += c->sq_all - c->sq_own;
    /* fp16: the grads are scaled by the loss scale */
    st->loss_scale = c->loss_scale;
    st->gnorm = sqrt(sumsq) / st->sample_size / c->loss_scale;
    if (c->cfg.lowp == HG_LOWP_FP16 && isfinite(st->loss_sum) && !isfinite(st->gnorm)) {
        /* an overflow of the scaled fp16 grads: skip, halve the scale */
        st->skipped = st->overflow = 1;
        c->good_in_a_row = 0;
        double min = c->cfg.loss_scale_min > 0 ? c->cfg.loss_scale_min : 1e-4;
        if (c->loss_scale / 2 < min)
            return hg_kerr(err, errlen, "update %llu: fp16 gradients overflow at the "
                           "minimum loss scale %g; stopping (use --bf16, lower --lr "
                           "or set --clip-norm)", (unsigned long long)num_updates + 1, min);
        c->loss_scale /= 2;
        hg_exec_set_loss_scale(c->train.ex, (float)c->loss_scale);
        fprintf(stderr, "| NOTE: update %llu: fp16 gradient overflow, update skipped, "
                "loss scale now %g\n", (unsigned long long)num_updates + 1, c->loss_scale);
        return 0;
    }
    if (!isfinite(st->loss_sum) || !isfinite(st->gnorm)) {
        st->skipped = 1;
        if (++c->bad_in_a_row >= c->cfg.max_bad_updates)
            return hg_kerr(err, errlen,
                           "update %llu: loss or gradient is NaN/Inf %d times "
                           "in a row; stopping (lower --lr or set --clip-norm)",
                           (unsigned long long)num_updates + 1, c->bad_in_a_row);
        fprintf(stderr, "| WARNING: update %llu: NaN/Inf loss or gradient, "
                "update skipped\n", (unsigned long long)num_updates + 1);
        return 0;
    }
    c->bad_in_a_row = 0;
    double scale = 1.0 / st->sample_size / c->loss_scale;
    if (c->cfg.clip_norm > 0 && st->gnorm > c->cfg.clip_norm) {
        scale *= c->cfg.clip_norm / st->gnorm;
        st->clipped = 1;
    }
    struct hg_step hs = {.step = num_updates + 1, .lr = (float)lr,
                         .grad_scale = (float)scale};
    if (hg_exec_run(c->train.ex, &hs, c->train.n_c, c->train.n, err, errlen) != 0)
        return -1;
    c->valid_stale = 1;
    if (c->cfg.lowp == HG_LOWP_FP16 &&
        ++c->good_in_a_row >= (c->cfg.loss_scale_window > 0 ? c->cfg.loss_scale_window : 2000)) {
        c->good_in_a_row = 0;
        c->loss_scale *= 2;
        hg_exec_set_loss_scale(c->train.ex, (float)c->loss_scale);
    }
    return 0;
}

int hg_ctl_valid(struct hg_ctl *c, const struct hg_batch *b,
                 struct hg_ctl_stats *st, char *err, size_t errlen)
{
    if (b->size == 0)
        return 0;
    /* model parallelism: every rank feeds the whole valid set; the
     * parameters gathered from their owners (every rank), rank 0 counts */
    int skip = 0;
    for (int k = 0; k < c->nmode; k++)
        if (c->mode[k]->valid && c->mode[k]->valid(c, &skip, err, errlen) != 0)
            return -1;
    if (skip) {
        c->valid_stale = 0;
        return 0;
    }
    if (c->valid_stale) {
        size_t n, nv;
        const float *p = hg_exec_param_block(c->train.ex, &n);
        float *pv = hg_exec_param_block(c->valid.ex, &nv); /* same order */
        if (hg_exec_download(c->train.ex, HG_R_PARAMS, err, errlen) != 0)
            return -1;
        memcpy(pv, p, n * sizeof(float));
        if (hg_exec_upload(c->valid.ex, HG_R_PARAMS, err, errlen) != 0)
            return -1;
        c->valid_stale = 0;
    }
    int64_t sym[HG_MAX_SYMS_TASK];
    double ss;
    struct hg_step hs = {.step = 1, .grad_scale = 1.f};
    if (fill(c, &c->valid, b, &hs, sym, &ss, err, errlen) != 0 ||
        hg_exec_run(c->valid.ex, &hs, 0, c->valid.n, err, errlen) != 0)
        return -1;
    st->loss_sum += *(const float *)hg_exec_data(c->valid.ex, c->valid.m.loss);
    st->nll_sum += *(const float *)hg_exec_data(c->valid.ex, c->valid.m.nll >= 0
                                                ? c->valid.m.nll : c->valid.m.loss);
    st->sample_size += ss;
    if (c->task->metrics)
        c->task->metrics(c->ts, b, c->valid.g, c->valid.ex, &c->valid.m, st->metrics);
    return 0;
}

void hg_ctl_describe(struct hg_ctl *c, int verbose, char *buf, size_t len)
{
    struct hg_mem_stats ms;
    hg_exec_mem(c->train.ex, &ms);
    char dev[64] = "";
    if (hg_exec_device(c->train.ex) >= 0)
        snprintf(dev, sizeof dev, " on cuda:%d%s", hg_exec_device(c->train.ex),
                 c->cfg.lowp == HG_LOWP_BF16 ? " (bf16 GEMMs)"
                 : c->cfg.lowp == HG_LOWP_FP16 ? " (fp16 GEMMs, loss scaling)" : "");
    char ar[192] = "", act[96] = "";
    for (int k = 0; k < c->nmode; k++)
        if (c->mode[k]->describe)
            c->mode[k]->describe(c, ar, sizeof ar);
    if (verbose)
        snprintf(act, sizeof act, " (activations %.1f MiB, %.1f without reuse)",
                 ms.act_bytes / 1048576.0, ms.act_naive / 1048576.0);
    int nt = hg_kernels_get_threads();
    snprintf(buf, len, "%lld parameters, %d ops (train), plan %.1f MiB%s%s, BLAS %s, "
             "ISA %s, %d thread%s%s",
             (long long)hg_graph_param_count(c->train.g), c->train.n,
             ms.total / 1048576.0, dev, act,
             verbose ? hg_kernels_blas_name() : hg_kernels_blas_brief(),
             hg_kernels_isa_name(), nt, nt == 1 ? "" : "s", ar);
}
