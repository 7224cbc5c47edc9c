/* run-setup.c - hgtrain's run set up: the data's splits, the per-rank
 * budgets (the options', a strategy's rows, or --rebalance-interval's
 * capacities), the strategy's wiring (--strategy and --plan through
 * trainer/strategy.c into the controller's contract), the controller's
 * configuration, the checkpoint resumed (rank 0 reads it, the others get
 * it), and the checks and plans that come before the launch
 * (--arch, --max-restarts, --cluster-file, --plan).  Uses the save dir
 * (run-ckpt.c) and the log (run-log.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hg_base.h"
#include "controller/hg_controller.h"
#include "planner/hg_planner.h"
#include "trainer/run-impl.h"
#include "trainer/strategy.h"
static int split_open(struct split *s, const struct hg_task *task, void *ts,
                      const char *data, const char *name, char *err, size_t errlen)
{
    char spec[4096];
    memset(s, 0, sizeof(*s));
    if (hg_dataset_split_spec(data, name, spec, sizeof(spec), err, errlen) != 0 ||
        hg_dataset_open(&s->ds, spec, task->fields, task->nfields, 0, err, errlen) != 0)
        return -1;
    s->n = hg_dataset_size(s->ds);
    s->cost = malloc((size_t)(s->n ? s->n : 1) * sizeof(int32_t));
    if (!s->cost)
        return hg_kerr(err, errlen, "out of memory");
    /* the longest is the length a strategy's memory is priced at */
    s->max_len = hg_task_costs(task, ts, s->ds, s->cost);
    s->min_len = INT32_MAX;
    for (int64_t i = 0; i < s->n; i++)
        if (s->cost[i] < s->min_len)
            s->min_len = s->cost[i];
    if (s->min_len < 1)
        s->min_len = 1;
    return 0;
}

static void split_close(struct split *s)
{
    hg_dataset_close(s->ds);
    free(s->cost);
}

/* The batch multiple in effect: under a strategy (--strategy, --plan) its
 * rows, exactly, unless --required-batch-size-multiple is given. */
static int64_t batch_multiple(const struct hg__run *r)
{
    const struct hg_opts *o = &r->o;
    if ((o->strategy || r->plan_text) && !hg_opts_given(o, "required-batch-size-multiple"))
        return 1;
    return o->required_batch_size_multiple;
}

static int optimizer(const struct hg_opts *o, struct hg_ctl_cfg *c, char *err,
                     size_t errlen)
{
    if (strcmp(o->optimizer, "sgd") == 0) {
        c->optim = HG_OPTIM_SGD;
        c->hyper.sgd.momentum = (float)o->momentum;
        c->hyper.sgd.weight_decay = (float)o->weight_decay;
        c->hyper.sgd.nesterov = o->nesterov;
    } else if (strcmp(o->optimizer, "adam") == 0 || strcmp(o->optimizer, "adamw") == 0) {
        c->optim = strcmp(o->optimizer, "adam") == 0 ? HG_OPTIM_ADAM : HG_OPTIM_ADAMW;
        c->hyper.adam.beta1 = (float)o->adam_betas.v[0];
        c->hyper.adam.beta2 = (float)o->adam_betas.v[1];
        c->hyper.adam.eps = (float)o->adam_eps;
        c->hyper.adam.weight_decay = (float)o->weight_decay;
    } else if (strcmp(o->optimizer, "adadelta") == 0) {
        c->optim = HG_OPTIM_ADADELTA;
        c->hyper.adadelta.rho = 0.9f;
        c->hyper.adadelta.eps = 1e-6f;
        c->hyper.adadelta.weight_decay = (float)o->weight_decay;
    } else {
        return hg_kerr(err, errlen, "--optimizer %s: unknown", o->optimizer);
    }
    return 0;
}

/* HG_TEST_GRAD_WEIGHT=RANK:W, a test aid (docs/reproducibility.md): rank
 * RANK's gradient counted W times, a bug planted for the equivalence tests
 * to catch; 1 for every other rank, or unset */
static double planted_grad_weight(int rank)
{
    const char *e = getenv("HG_TEST_GRAD_WEIGHT");
    int r;
    double w;
    if (!e || sscanf(e, "%d:%lf", &r, &w) != 2 || r != rank || !(w > 0))
        return 1;
    fprintf(stderr, "| WARNING: HG_TEST_GRAD_WEIGHT: rank %d's gradient counted %g times "
            "(a planted bug)\n", rank, w);
    return w;
}

/* What rank 0 read from the checkpoint, for the others. */
struct resume_meta {
    int64_t loaded, num_updates, epoch, first_step, nsegs;
    double best, train_wall, wall;
};

/* The data: HG_TRACE_SAMPLES' file, the task set up, the train split
 * (its cost's hash: which data a checkpoint's epoch position indexes) and
 * the valid split. */
static int open_data(struct hg__run *r, char *err, size_t errlen)
{
    struct hg_opts *o = &r->o;
    if (!o->data)
        return hg_kerr(err, errlen, "--data is required");
    if (!(r->rank_t = calloc(2 * (size_t)r->world, sizeof(double))))
        return hg_kerr(err, errlen, "out of memory");
    const char *trace = getenv("HG_TRACE_SAMPLES"); /* a test aid: docs/distributed.md */
    if (trace && *trace) {
        char tp[4096];
        snprintf(tp, sizeof(tp), "%s.rank%d", trace, r->rank);
        int fd = hg__run_open_file(r, tp, 1, "HG_TRACE_SAMPLES", err, errlen);
        if (fd < 0)
            return -1;
        if (!(r->trace = fdopen(fd, "a"))) {
            close(fd);
            return hg_kerr(err, errlen, "HG_TRACE_SAMPLES: %s: %s", tp, strerror(errno));
        }
    }
    struct hg_task_args ta = {.values = (const char *const *)o->task_vals_,
                              .arch = o->arch};
    if (r->task->setup && r->task->setup(&r->ts, o->data, &ta, err, errlen) != 0)
        return -1;
    if (split_open(&r->train, r->task, r->ts, o->data, o->train_subset, err, errlen) != 0)
        return -1;
    r->data_hash = 14695981039346656037ull; /* FNV-1a, 64 bits */
    for (int64_t i = 0; i < r->train.n; i++)
        for (int b = 0; b < 4; b++)
            r->data_hash = (r->data_hash ^ (((uint32_t)r->train.cost[i] >> (8 * b)) & 0xff)) *
                           1099511628211ull;
    if (!o->disable_validation &&
        (o->validate_interval > 0 || o->validate_interval_updates > 0) &&
        split_open(&r->valid, r->task, r->ts, o->data, o->valid_subset, err, errlen) != 0)
        return -1;
    return 0;
}

/* The per-rank lists' lengths against the world, --rank-slowdown's
 * factors. */
static int check_rank_lists(const struct hg__run *r, char *err, size_t errlen)
{
    const struct hg_opts *o = &r->o;
    const struct hg_opt_list *lists[3] = {&o->rank_capacity, &o->max_tokens_per_rank,
                                           &o->max_sentences_per_rank};
    static const char *const names[3] = {"rank-capacity", "max-tokens-per-rank",
                                         "max-sentences-per-rank"};
    for (int k = 0; k < 3; k++)
        if (lists[k]->n > 0 && lists[k]->n != r->world)
            return hg_kerr(err, errlen, "--%s has %d entries for a world of %d rank%s%s%s",
                           names[k], lists[k]->n, r->world, r->world == 1 ? "" : "s",
                           k == 0 && o->cluster_file ? ": from --cluster-file " : "",
                           k == 0 && o->cluster_file ? o->cluster_file : "");
    if (o->rank_slowdown.n > 0 && o->rank_slowdown.n != r->world)
        return hg_kerr(err, errlen, "--rank-slowdown has %d entries for a world of %d rank%s",
                       o->rank_slowdown.n, r->world, r->world == 1 ? "" : "s");
    for (int i = 0; i < o->rank_slowdown.n; i++)
        if (!(o->rank_slowdown.v[i] >= 1))
            return hg_kerr(err, errlen, "--rank-slowdown: rank %d's factor is %g, must be >= 1",
                           i, o->rank_slowdown.v[i]);
    return 0;
}

/* --strategy or --plan: the strategy planned into r->strat (the
 * controller's contract); a data-parallel shaped one's rows of the global
 * batch are the per-rank budgets, a model-parallel one reads the whole
 * batch on every rank. */
static int strategy_budgets(struct hg__run *r, char *err, size_t errlen)
{
    const struct hg_opts *o = &r->o;
    /* the strategy's rows of the global batch are the per-rank budgets */
    struct hg_ctl_cfg oc;
    memset(&oc, 0, sizeof oc);
    if (optimizer(o, &oc, err, errlen) != 0 ||
        hg_strat_plan(&r->strat, r->plan_text ? r->plan_path : o->strategy, r->plan_text,
                      o->cluster_file, r->task, r->ts, o->max_sentences,
                      r->train.max_len, oc.optim, &oc.hyper, r->world, err,
                      errlen) != 0)
        return -1;
    if (r->strat.kind != HG_LAYOUT_DP) {
        /* model parallel: every rank reads what one rank would, the
         * whole global batch (rank 0's batches of a world of 1) */
        r->data_rank = 0;
    } else {
        if (!(r->rank_sent = malloc((size_t)r->world * sizeof(int64_t))))
            return hg_kerr(err, errlen, "out of memory");
        r->max_sent = 0;
        for (int i = 0; i < r->world; i++) {
            r->rank_sent[i] = r->strat.rank_sent[i];
            r->max_sent = r->rank_sent[i] > r->max_sent ? r->rank_sent[i] : r->max_sent;
        }
    }
    if (r->rank == 0)
        hg__run_log(r, r->strat.desc, NULL);
    /* the batcher cuts a rank's batch to the required multiple: say so
     * where that is not the strategy's rows (a multiple given) */
    int64_t m = batch_multiple(r), kept = 0, cut = 0;
    for (int i = 0; r->rank_sent && i < r->world; i++) {
        int64_t b = r->rank_sent[i];
        kept += b >= m ? b - b % m : b;
        cut += b >= m && b % m != 0;
    }
    if (cut && r->rank == 0)
        fprintf(stderr, "hgtrain: warning: %lld of the strategy's rows per rank are not "
                "multiples of --required-batch-size-multiple %lld: the batcher cuts them "
                "(%lld of %lld samples a step); drop --required-batch-size-multiple to "
                "train its rows exactly\n", (long long)cut, (long long)m, (long long)kept,
                (long long)o->max_sentences);
    return 0;
}

/* The batch budgets: per-rank lists (the options' or a strategy's), else
 * the global ones scaled by capacity; r->bo, and --rebalance-interval's
 * capacities when it is on. */
static int budgets(struct hg__run *r, char *err, size_t errlen)
{
    const struct hg_opts *o = &r->o;
    if (check_rank_lists(r, err, errlen) != 0)
        return -1;
    const struct hg_opt_list *lists[2] = {&o->max_tokens_per_rank,
                                           &o->max_sentences_per_rank};
    int64_t **dst[2] = {&r->rank_tok, &r->rank_sent};
    r->max_tok = o->max_tokens;
    r->max_sent = o->max_sentences;
    if ((o->strategy || r->plan_text) && strategy_budgets(r, err, errlen) != 0)
        return -1;
    for (int k = 0; k < 2; k++) {
        const struct hg_opt_list *l = lists[k];
        if (l->n == 0)
            continue;
        *dst[k] = malloc((size_t)l->n * sizeof(int64_t));
        if (!*dst[k])
            return hg_kerr(err, errlen, "out of memory");
        int64_t mx = 0;
        for (int i = 0; i < l->n; i++) {
            (*dst[k])[i] = (int64_t)l->v[i];
            mx = (*dst[k])[i] > mx ? (*dst[k])[i] : mx;
        }
        *(k ? &r->max_sent : &r->max_tok) = mx;
    }
    r->bo = (struct hg_batch_opts){
        .max_tokens = r->max_tok, .max_sentences = r->max_sent,
        .required_multiple = batch_multiple(r),
        .world = r->strat.kind != HG_LAYOUT_DP ? 1 : r->world,
        .capacity = o->rank_capacity.n > 0 ? o->rank_capacity.v : NULL,
        .rank_max_tokens = r->rank_tok, .rank_max_sentences = r->rank_sent,
        .seed = (uint64_t)o->seed, .shuffle = 1};
    if (o->rebalance_interval > 0 && (r->rank_tok || r->rank_sent))
        return hg_kerr(err, errlen, "--rebalance-interval sets the per-rank budgets; drop "
                       "--max-tokens-per-rank, --max-sentences-per-rank, --strategy and --plan");
    /* automatic: on, unless the user set the budgets (capacities from a
     * cluster file are datasheet peaks, which measuring corrects) */
    int64_t rbi = o->rebalance_interval;
    if (rbi < 0)
        rbi = r->rank_tok || r->rank_sent || o->strategy || r->plan_text ||
                      (o->rank_capacity.n > 0 && !o->cluster_file)
                  ? 0
                  : REBALANCE_AUTO;
    r->rebalance = r->world > 1 ? rbi : 0;
    if (r->rebalance) {
        r->cap = malloc((size_t)r->world * sizeof(double));
        r->rb_cost = calloc((size_t)r->world, sizeof(double));
        r->rb_time = calloc((size_t)r->world, sizeof(double));
        if (!r->cap || !r->rb_cost || !r->rb_time)
            return hg_kerr(err, errlen, "out of memory");
        for (int i = 0; i < r->world; i++)
            r->cap[i] = o->rank_capacity.n > 0 ? o->rank_capacity.v[i] : 1.0;
        r->bo.capacity = r->cap; /* what rebalance() changes */
        r->rb_guess = 1;
    }
    return 0;
}

/* The lr schedule and the controller: configured for the largest batch
 * and sequence any epoch can bring, with the strategy's contract when
 * there is one. */
static int controller(struct hg__run *r, char *err, size_t errlen)
{
    struct hg_opts *o = &r->o;
    hg_opts_lr_sched(o, &r->sched);
    if (hg_lr_check(&r->sched, err, errlen) != 0)
        return -1;

    /* The plan is for the largest batch and sequence any epoch can bring. */
    int32_t max_len = r->train.max_len, min_len = r->train.min_len;
    if (r->valid.ds) {
        if (r->valid.max_len > max_len)
            max_len = r->valid.max_len;
        if (r->valid.min_len < min_len)
            min_len = r->valid.min_len;
    }
    struct hg_ctl_cfg cc = {.clip_norm = o->clip_norm, .seed = (uint64_t)o->seed,
                            .max_len = max_len, .max_tokens = r->max_tok,
                            .cuda = r->cuda_device >= 0, .cuda_device = r->cuda_device,
                            .lowp = o->fp16 ? HG_LOWP_FP16 : o->bf16 ? HG_LOWP_BF16
                                                                     : HG_LOWP_NONE,
                            .loss_scale_init = o->fp16_init_scale,
                            .loss_scale_min = o->min_loss_scale,
                            .comm = r->comm, .bucket_cap_mb = o->bucket_cap_mb,
                            .slowdown = o->rank_slowdown.n ? o->rank_slowdown.v[r->rank] : 0,
                            .grad_weight = planted_grad_weight(r->rank),
                            .update_freq = (int)o->update_freq,
                            .strat = o->strategy || r->plan_text ? &r->strat : NULL,
                            .ps_timeout_s = o->distributed_timeout / 2,
                            .spread_owners = o->save_sharded};
    if (o->bf16 && o->fp16)
        return hg_kerr(err, errlen, "give --bf16 or --fp16, not both");
    cc.loss_scale_window = o->fp16_scale_window > 0
                               ? (int)o->fp16_scale_window
                               : (int)(16384 / (r->world * o->update_freq) > 0
                                           ? 16384 / (r->world * o->update_freq) : 1);
    /* every rank plans for the largest rank's batch (a slower rank only
     * leaves part of its buffers unused) */
    cc.max_batch = r->max_sent > 0 ? r->max_sent : r->max_tok / min_len;
    if (r->max_tok > 0 && cc.max_batch > r->max_tok / min_len)
        cc.max_batch = r->max_tok / min_len;
    if (cc.max_batch < 1)
        cc.max_batch = 1;
    r->plan_batch = cc.max_batch;
    r->plan_len = max_len;
    if (optimizer(o, &cc, err, errlen) != 0)
        return -1;
    if (hg_ctl_new(&r->ctl, r->task, r->ts, &cc, err, errlen) != 0) {
        /* memory for the plans: name the options that sized them */
        if (strstr(err, "cannot allocate")) {
            size_t n = strlen(err);
            snprintf(err + n, errlen > n ? errlen - n : 0, " (the plans hold a batch of %lld "
                     "samples of up to %lld positions: %s%s; lower %s)",
                     (long long)cc.max_batch, (long long)max_len,
                     r->max_sent > 0 ? "--max-sentences" : "--max-tokens",
                     r->max_sent > 0 && r->max_tok > 0 ? " and --max-tokens" : "",
                     r->max_sent > 0 && r->max_tok <= 0 ? "--max-sentences or give --max-tokens"
                                                        : "--max-tokens or --max-sentences");
        }
        return -1;
    }
    if (hg_ctl_buckets(r->ctl) > 0 && r->rank == 0) {
        char line[160];
        snprintf(line, sizeof(line),
                 "| gradients in %d bucket%s of at most %g MiB (or one tensor), all-reduced "
                 "from the backward\n",
                 hg_ctl_buckets(r->ctl), hg_ctl_buckets(r->ctl) > 1 ? "s" : "", o->bucket_cap_mb);
        hg__run_log(r, line, NULL);
    }
    return 0;
}

/* Rank 0: the checkpoint at path into the controller and the run's
 * counters (epoch, *first_step, updates, best metric, wall clocks, the
 * epoch's segments), and *meta for the other ranks. */
static int load_checkpoint(struct hg__run *r, const char *path, int64_t *first_step,
                           struct resume_meta *meta, char *err, size_t errlen)
{
    const struct hg_opts *o = &r->o;
    struct hg_ckpt_meta m;
    struct hg_graph *g;
    struct hg_exec *ex;
    if (hg_ctl_state_view(r->ctl, &g, &ex, err, errlen) != 0)
        return -1;
    if (hg_ckpt_load(path, g, ex,
                     o->reset_optimizer, &m, err, errlen) != 0) {
        hg_ckpt_meta_free(&m);
        hg__run_other_task(r, path, err, errlen);
        return -1;
    }
    if (!m.checksummed)
        fprintf(stderr, "hgtrain: warning: %s is a version 1 checkpoint (no "
                "checksums): loaded unverified\n", path);
    r->num_updates = (uint64_t)m.num_updates;
    r->best = o->reset_meters ? NAN : m.best_metric;
    if (m.checksummed && (strcmp(m.metric_name, o->best_checkpoint_metric) != 0 ||
                          m.maximize != o->maximize_best_checkpoint_metric))
        r->best = NAN; /* another metric: not comparable */
    if (!o->reset_meters) { /* wall clocks continue where they stopped */
        r->train_wall = m.train_wall;
        r->t_start -= m.wall;
    }
    if (!o->reset_dataloader) {
        if (m.iter.step > 0 && m.iter.data_n > 0 &&
            (m.iter.data_n != r->train.n || m.iter.data_hash != r->data_hash)) {
            hg_kerr(err, errlen, "%s was saved in the middle of epoch %llu (step %lld) "
                    "of training data with %lld samples (hash %016llx), but --data %s "
                    "has %lld (hash %016llx): the epoch cannot go on with other data; "
                    "train on the data it was saved with, or give --reset-dataloader "
                    "to start the epoch afresh", path, (unsigned long long)m.iter.epoch,
                    (long long)m.iter.step, (long long)m.iter.data_n,
                    (unsigned long long)m.iter.data_hash, o->data, (long long)r->train.n,
                    (unsigned long long)r->data_hash);
            hg_ckpt_meta_free(&m);
            return -1;
        }
        r->epoch = (int64_t)m.iter.epoch;
        *first_step = m.iter.step;
        if (m.iter.nsegs > 0 && m.iter.step > 0) { /* the epoch's segments */
            r->segs = (int64_t *)m.iter.segs;
            r->nsegs = m.iter.nsegs;
            m.iter.segs = NULL;
            m.iter.nsegs = 0;
        }
    }
    if (o->reset_lr_scheduler)
        r->num_updates = 0;
    hg_ckpt_meta_free(&m);
    *meta = (struct resume_meta){.loaded = 1, .num_updates = (int64_t)r->num_updates,
                                 .epoch = r->epoch, .first_step = *first_step,
                                 .nsegs = r->nsegs,
                                 .best = r->best, .train_wall = r->train_wall,
                                 .wall = hg_now() - r->t_start};
    char line[4300];
    snprintf(line, sizeof(line), "| loaded %s: epoch %lld, step %lld, %llu updates\n",
             path, (long long)r->epoch, (long long)*first_step,
             (unsigned long long)r->num_updates);
    hg__run_log(r, line, NULL);
    return 0;
}

/* Several ranks: rank 0's parameters and state (initial or loaded), and
 * what it read from the checkpoint, on every rank. */
static int share_resume(struct hg__run *r, struct resume_meta *meta, int64_t *first_step,
                        char *err, size_t errlen)
{
    /* the initial (or loaded) parameters and state of rank 0 everywhere */
    if (hg_comm_broadcast(r->comm, meta, sizeof(*meta), 0, err, errlen) != 0 ||
        hg_ctl_broadcast_params(r->ctl, err, errlen) != 0)
        return -1;
    if (meta->loaded && r->rank != 0) {
        r->num_updates = (uint64_t)meta->num_updates;
        r->epoch = meta->epoch;
        *first_step = meta->first_step;
        r->best = meta->best;
        r->train_wall = meta->train_wall;
        r->t_start = hg_now() - meta->wall;
        r->nsegs = meta->nsegs;
        if (r->nsegs > 0 && !(r->segs = malloc((size_t)r->nsegs * sizeof(int64_t))))
            return hg_kerr(err, errlen, "rank %d: out of memory", r->rank);
    }
    if (meta->loaded && meta->nsegs > 0 &&
        hg_comm_broadcast(r->comm, r->segs, (size_t)meta->nsegs * sizeof(int64_t), 0,
                          err, errlen) != 0)
        return -1;
    return 0;
}

/* The checkpoint --restore-file names (SAVE_DIR/checkpoint_last.h5 by
 * default: absent, a fresh start), read by rank 0 and handed to the
 * others. */
static int resume(struct hg__run *r, int64_t *first_step, char *err, size_t errlen)
{
    const struct hg_opts *o = &r->o;
    *first_step = 0;
    r->epoch = 1;
    r->best = NAN;
    char path[4096];
    if (strchr(o->restore_file, '/'))
        snprintf(path, sizeof(path), "%s", o->restore_file);
    else if (hg__run_ckpt_path(r, o->restore_file, path, sizeof(path)) != 0)
        return hg_kerr(err, errlen, "--restore-file too long");
    /* a save dir others can write is refused before anything in it is read */
    if (r->rank == 0 && hg__run_check_save_dir(r, err, errlen) != 0)
        return -1;
    /* rank 0 reads the checkpoint and hands it to the others */
    struct resume_meta meta;
    memset(&meta, 0, sizeof(meta));
    /* a file named on purpose must exist: never a silent fresh start */
    if (r->rank == 0 && access(path, F_OK) != 0 &&
        strcmp(o->restore_file, "checkpoint_last.h5") != 0)
        return hg_kerr(err, errlen, "--restore-file %s: %s", path, strerror(errno));
    if (r->rank == 0 && access(path, F_OK) == 0 &&
        (hg__run_check_loaded(r, path, err, errlen) != 0 ||
         load_checkpoint(r, path, first_step, &meta, err, errlen) != 0))
        return -1;
    if (r->comm && share_resume(r, &meta, first_step, err, errlen) != 0)
        return -1;
    return 0;
}

int hg__run_setup(struct hg__run *r, int64_t *first_step, char *err, size_t errlen)
{
    const struct hg_opts *o = &r->o;
    if (open_data(r, err, errlen) != 0 || budgets(r, err, errlen) != 0 ||
        controller(r, err, errlen) != 0 || resume(r, first_step, err, errlen) != 0)
        return -1;
    if (r->rank == 0 && hg__run_prepare_save_dir(r, err, errlen) != 0)
        return -1;
    /* sharded saves are collective: every rank decides the same way
     * whether checkpoint_best.h5 is replaced */
    if (r->comm && o->save_sharded && !o->no_save) {
        double b[2] = {r->best, r->best_locked}; /* rank 0's */
        if (hg_comm_broadcast(r->comm, b, sizeof(b), 0, err, errlen) != 0)
            return -1;
        r->best = b[0];
        r->best_locked = b[1] != 0;
    }
    return 0;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* The length --plan prices: over the batches of `batch` samples sorted by
 * cost (the epoch plan batches samples of like length, each padded to its
 * own longest), the root mean square of their padded lengths, at most the
 * longest; *mean: their mean.  A step's time grows faster than linearly
 * with the length (attention, small GEMMs of short batches): priced at the
 * mean, translation's steps ran 1.2-1.4x their simulation, at the root
 * mean square 1.04-1.19 (bench/RESULTS.md). */
static int32_t plan_len(const struct split *s, int64_t batch, int32_t *mean)
{
    int32_t *c = malloc((size_t)(s->n ? s->n : 1) * sizeof *c); /* [n] sorted costs */
    *mean = s->max_len;
    if (!c || s->n == 0 || batch < 1) {
        free(c);
        return s->max_len;
    }
    memcpy(c, s->cost, (size_t)s->n * sizeof *c);
    qsort(c, (size_t)s->n, sizeof *c, cmp_i32);
    double sum = 0, sq = 0;
    int64_t nb = 0;
    for (int64_t i = 0; i < s->n; i += batch, nb++) {
        double l = c[i + batch - 1 < s->n ? i + batch - 1 : s->n - 1];
        sum += l;
        sq += l * l;
    }
    free(c);
    int32_t m = (int32_t)(sum / (double)nb + 0.999);
    int32_t r = (int32_t)(sqrt(sq / (double)nb) + 0.999);
    *mean = m < 1 ? 1 : m > s->max_len ? s->max_len : m;
    return r < 1 ? 1 : r > s->max_len ? s->max_len : r;
}

/* --plan resumed: the strategy the checkpoint --restore-file names keeps
 * (its attribute "strategy"), checked as resume() checks the file, into
 * r->plan_text; 0 with r->plan_text NULL when there is none to reuse
 * (no checkpoint, or one from a run without --plan). */
static int plan_from_checkpoint(struct hg__run *r, char *path, size_t pathlen, char *err,
                                size_t errlen)
{
    const struct hg_opts *o = &r->o;
    if (strchr(o->restore_file, '/'))
        snprintf(path, pathlen, "%s", o->restore_file);
    else if (hg__run_ckpt_path(r, o->restore_file, path, pathlen) != 0)
        return hg_kerr(err, errlen, "--restore-file too long");
    if (access(path, F_OK) != 0)
        return 0;
    struct hg_ckpt_meta meta;
    memset(&meta, 0, sizeof meta);
    if (hg__run_check_save_dir(r, err, errlen) != 0 ||
        hg__run_check_loaded(r, path, err, errlen) != 0 ||
        hg_ckpt_read_meta(path, &meta, err, errlen) != 0)
        return -1;
    if (meta.strategy && !(r->plan_text = strdup(meta.strategy))) {
        hg_ckpt_meta_free(&meta);
        return hg_kerr(err, errlen, "out of memory");
    }
    hg_ckpt_meta_free(&meta);
    return 0;
}

/* --plan, in the launcher before the fork: the task's training graph for
 * the global batch, its compute priced at the batches' padded lengths'
 * root mean square (plan_len) and its memory at the longest sample (as
 * hg_strat_plan checks it), planned on --cluster-file; hgplan's table goes to r->plan_table (rank 0 logs it),
 * the strategy's text to r->plan_text (every forked rank inherits both). */
int hg__run_plan_before_fork(struct hg__run *r, int nccl, int cuda, char *err, size_t errlen)
{
    struct hg_opts *o = &r->o;
    if (!o->data)
        return hg_kerr(err, errlen, "--data is required");
    int n = o->no_save ? snprintf(r->plan_path, sizeof r->plan_path, "(--plan %s)", o->plan)
                       : snprintf(r->plan_path, sizeof r->plan_path, "%s/strategy.cfg",
                                  o->save_dir);
    if (n < 0 || n >= (int)sizeof r->plan_path)
        return hg_kerr(err, errlen, "--save-dir too long");
    /* resumed: the checkpoint's strategy, unless --replan */
    char ck[4096];
    if (!o->replan && plan_from_checkpoint(r, ck, sizeof ck, err, errlen) != 0)
        return -1;
    if (r->plan_text) {
        size_t len = 0;
        FILE *t = open_memstream(&r->plan_table, &len);
        if (!t)
            return hg_kerr(err, errlen, "out of memory");
        fprintf(t, "| --plan %s: resumed from %s: trained with the strategy it keeps, "
                "not planned again (--replan plans again)\n", o->plan, ck);
        if (fclose(t) != 0)
            return hg_kerr(err, errlen, "out of memory");
        return 0;
    }
    void *ts = NULL;
    struct split tr;
    struct hg_ctl_cfg oc;
    memset(&tr, 0, sizeof tr);
    memset(&oc, 0, sizeof oc);
    struct hg_task_args ta = {.values = (const char *const *)o->task_vals_, .arch = o->arch};
    int rc = -1;
    if (r->task->setup && r->task->setup(&ts, o->data, &ta, err, errlen) != 0)
        return -1;
    if (split_open(&tr, r->task, ts, o->data, "train", err, errlen) == 0 &&
        optimizer(o, &oc, err, errlen) == 0) {
        struct hg_plan_opts po = {.mcmc = strcmp(o->plan, "mcmc") == 0,
                                  .budget_s = o->plan_budget,
                                  .margin = o->plan_margin / 100,
                                  .max_iters = (long)o->plan_iters,
                                  .groups = (int)o->plan_groups,
                                  .seed = (uint64_t)o->seed,
                                  /* model parallelism and split batches
                                   * run one micro-batch per update, over
                                   * backends of host memory so far */
                                  .executable = HG_EXEC_DP | (nccl ? HG_EXEC_NOPS : 0) |
                                                (!nccl && o->update_freq == 1
                                                     ? HG_EXEC_MP | (o->plan_split
                                                                         ? HG_EXEC_SPLIT
                                                                         : 0)
                                                     : 0) |
                                                /* tensor parallelism: CPU workers, any
                                                 * --update-freq (controller/tp.c) */
                                                (!nccl && !cuda ? HG_EXEC_TP : 0)};
        size_t len = 0;
        FILE *t = open_memstream(&r->plan_table, &len);
        if (!t) {
            hg_kerr(err, errlen, "out of memory");
        } else {
            int32_t mean, len = plan_len(&tr, o->max_sentences, &mean);
            fprintf(t, "| --plan %s on --cluster-file %s, global batch %lld", o->plan,
                    o->cluster_file, (long long)o->max_sentences);
            if (tr.max_len > 1) /* a sequence task */
                fprintf(t, ", length %d (the batches' padded lengths' root mean square; "
                        "mean %d, longest %d: memory priced at the longest)", (int)len,
                        (int)mean, (int)tr.max_len);
            fprintf(t, ", %s%s:\n",
                    o->plan_profile ? "measured prices from --plan-profile "
                                    : "roofline prices",
                    o->plan_profile ? o->plan_profile : "");
            struct hg_graph_made made;
            hg_opts_graph_made(o, &made);
            rc = hg_strat_search(&r->plan_text, t, &po, o->cluster_file, o->plan_profile,
                                 r->task, ts, o->max_sentences, len, tr.max_len, oc.optim,
                                 &oc.hyper, &made, err, errlen);
            fprintf(t, "| --plan %s: the strategy%s%s\n", o->plan,
                    o->no_save ? " (not written: --no-save)" : " goes to ",
                    o->no_save ? "" : r->plan_path);
            if (fclose(t) != 0 && rc == 0)
                rc = hg_kerr(err, errlen, "out of memory");
        }
    }
    if (tr.ds)
        split_close(&tr);
    if (r->task->teardown && ts)
        r->task->teardown(ts);
    return rc;
}

/* --max-restarts needs a launcher on the only node and no plan bound to
 * the devices */
int hg__run_restarts_possible(const struct hg_opts *o, const struct hg_launch *L, char *err,
                              size_t errlen)
{
    if (o->max_restarts == 0)
        return 0;
    if (L->world < 2 || L->world != L->nlocal || L->backend == HG_BK_MPI)
        return hg_kerr(err, errlen, "--max-restarts restarts the workers of a job on one "
                       "node (--devices cpu:N or several GPUs); a job of one rank, of "
                       "several nodes or under mpirun is restarted by its scheduler with "
                       "the same command (it resumes from checkpoint_last.h5; "
                       "docs/distributed.md)");
    if (o->strategy || o->plan)
        return hg_kerr(err, errlen, "--max-restarts with --%s %s: the strategy is "
                       "planned for these devices, and a restart drops one",
                       o->strategy ? "strategy" : "plan", o->strategy ? o->strategy : o->plan);
    return 0;
}

/* --cluster-file: the capacities of its devices, in rank order, become
 * --rank-capacity unless that is given.  world < 0: not known before
 * MPI_Init (the set-up then checks the count against the real world:
 * check_rank_lists). */
int hg__run_cluster_capacities(struct hg_opts *o, int world, char *err, size_t errlen)
{
    if (!o->cluster_file)
        return 0;
    struct hg_cluster *c;
    if (hg_cluster_load(&c, o->cluster_file, err, errlen) != 0)
        return -1;
    int rc = 0;
    if (world > 0 && c->ndev != world) {
        rc = hg_kerr(err, errlen, "--cluster-file %s describes %d devices, but the job "
                     "has %d rank%s (one rank per device)", o->cluster_file, c->ndev, world,
                     world == 1 ? "" : "s");
    } else if (o->rank_capacity.n == 0 && !o->strategy && !o->plan) {
        double *cap = malloc((size_t)c->ndev * sizeof(double));
        if (!cap)
            rc = hg_kerr(err, errlen, "out of memory");
        else if (hg_cluster_rank_capacities(c, cap, err, errlen) != 0) {
            free(cap);
            rc = -1;
        } else {
            o->rank_capacity.v = cap;
            o->rank_capacity.n = c->ndev;
        }
    }
    hg_cluster_free(c);
    return rc;
}

/* --arch among a built-in task's choices ("a|b|c"; "": it has none) */
int hg__run_check_arch(const char *task, const char *archs, const char *arch, char *err,
                       size_t errlen)
{
    if (!*archs)
        return hg_kerr(err, errlen, "--arch %s: task %s has no --arch (its options set the "
                       "model)", arch, task);
    char buf[256], *save = NULL;
    const char *names[32];
    int n = 0;
    snprintf(buf, sizeof(buf), "%s", archs);
    for (char *t = strtok_r(buf, "|", &save); t && n < 31; t = strtok_r(NULL, "|", &save)) {
        if (strcmp(t, arch) == 0)
            return 0;
        names[n++] = t;
    }
    names[n] = NULL;
    char hint[128];
    return hg_kerr(err, errlen, "--arch %s: not an architecture of task %s%s (choices: %s)",
                   arch, task, hg_suggest_text(arch, names, "", hint, sizeof(hint)), archs);
}

void hg__run_free(struct hg__run *r)
{
    free(r->rank_tok);
    free(r->rank_sent);
    free(r->segs);
    free(r->rank_t);
    free(r->cap);
    free(r->rb_cost);
    free(r->rb_time);
    if (r->trace)
        fclose(r->trace);
    hg_ctl_strategy_free(&r->strat);
    free(r->plan_text);
    free(r->plan_table);
    hg_ctl_free(r->ctl);
    split_close(&r->train);
    if (r->valid.ds)
        split_close(&r->valid);
    if (r->task && r->task->teardown && r->ts)
        r->task->teardown(r->ts);
    if (r->log)
        fclose(r->log);
    if (r->lock_fd >= 0)
        close(r->lock_fd); /* the lock goes with it */
    free(r->opts_text);
}
