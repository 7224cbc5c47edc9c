/* run-train.c - hgtrain's epoch loop: each batch accumulated, each update
 * applied, logged, validated and checkpointed as the options ask, the
 * stops (a signal, --max-update, --stop-time-hours, --max-epoch, --min-lr,
 * --patience), and the end of the run's measurements (--profile-ops,
 * --trace).  Uses the epoch plan (run-balance.c), the checkpoints
 * (run-ckpt.c) and the log (run-log.c); hgtrain.c's signal handler sets
 * hg__run_stop_signal, which lives here, so the arrow goes one way. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hg_base.h"
#include "controller/hg_controller.h"
#include "trainer/run-impl.h"

volatile sig_atomic_t hg__run_stop_signal;

/* Validation over the whole valid split; returns 0 and the metric that
 * --best-checkpoint-metric names. */
static int validate(struct hg__run *r, double *metric, char *err, size_t errlen)
{
    struct hg_batch_opts vo = r->bo;
    vo.capacity = NULL; /* validation: equal shares of the split */
    vo.rank_max_tokens = vo.rank_max_sentences = NULL;
    vo.max_tokens = r->bo.max_tokens ? r->max_tok : 0;
    vo.max_sentences = r->bo.max_sentences ? r->max_sent : 0;
    if (r->o.max_sentences_valid > 0 && (vo.max_sentences == 0 ||
                                         r->o.max_sentences_valid < vo.max_sentences))
        vo.max_sentences = r->o.max_sentences_valid; /* the plan's batch at most */
    vo.shuffle = 0;
    vo.required_multiple = 1;
    struct hg_epoch *ep;
    if (hg_epoch_plan(&ep, r->valid.cost, r->valid.n, &vo, 1, err, errlen) != 0)
        return -1;
    struct hg_loader *ld;
    struct hg_loader_opts lo = {.rank = r->data_rank, .prefetch = 2, .pad_id = 1,
                                .timeout_s = r->o.distributed_timeout};
    if (hg_loader_open(&ld, r->valid.ds, ep, &lo, 0, err, errlen) != 0) {
        hg_epoch_free(ep);
        return -1;
    }
    struct hg_ctl_stats st;
    memset(&st, 0, sizeof(st));
    struct hg_batch b;
    int rc;
    while ((rc = hg_loader_next(ld, &b, err, errlen)) == 1)
        if (hg_ctl_valid(r->ctl, &b, &st, err, errlen) != 0) {
            rc = -1;
            break;
        }
    hg_loader_close(ld);
    hg_epoch_free(ep);
    if (rc < 0 || hg_ctl_allreduce_stats(r->ctl, &st, err, errlen) != 0)
        return -1;
    double ss = st.sample_size > 0 ? st.sample_size : 1;
    double loss = st.loss_sum / ss / log(2.0);
    double nll = st.nll_sum / ss / log(2.0); /* fairseq: ppl = 2^nll_loss */
    *metric = loss;
    char line[1024], js[1024];
    int k = snprintf(line, sizeof(line), "| epoch %03lld | valid on '%s' subset | loss %.4f | "
                     "nll_loss %.4f | ppl %.2f", (long long)r->epoch, r->o.valid_subset, loss,
                     nll, pow(2.0, nll));
    char sub[512];
    hg__run_json_escape(r->o.valid_subset, strlen(r->o.valid_subset), sub, sizeof(sub));
    int kj = snprintf(js, sizeof(js), "{\"epoch\": %lld, \"valid_subset\": \"%s\", "
                      "\"valid_loss\": %.4f, \"valid_nll_loss\": %.4f, \"valid_ppl\": %.2f",
                      (long long)r->epoch, sub, loss, nll, pow(2.0, nll));
    for (int i = 0; i < HG_TASK_MAX_METRICS && r->task->metric_names[i]; i++) {
        double v = st.metrics[i] / ss;
        if (strcmp(r->task->metric_names[i], r->o.best_checkpoint_metric) == 0)
            *metric = v;
        k += snprintf(line + k, sizeof(line) - (size_t)k, " | %s %.4f",
                      r->task->metric_names[i], v);
        kj += snprintf(js + kj, sizeof(js) - (size_t)kj, ", \"valid_%s\": %.4f",
                       r->task->metric_names[i], v);
    }
    snprintf(line + k, sizeof(line) - (size_t)k, " | num_updates %llu\n",
             (unsigned long long)r->num_updates);
    snprintf(js + kj, sizeof(js) - (size_t)kj, ", \"num_updates\": %llu}\n",
             (unsigned long long)r->num_updates);
    hg__run_log(r, line, js);
    return 0;
}

/* One validation per update: a second request for the same update (the
 * interval and the stop both asking) returns the first one's metric.
 * Returns 1 after a new validation, 0 for the same one again, -1. */
static int validate_once(struct hg__run *r, double *metric, char *err, size_t errlen)
{
    if (r->valid_at == r->num_updates + 1) {
        *metric = r->valid_metric;
        return 0;
    }
    if (validate(r, metric, err, errlen) != 0)
        return -1;
    r->valid_at = r->num_updates + 1;
    r->valid_metric = *metric;
    return 1;
}

static int better(const struct hg__run *r, double v)
{
    if (isnan(v) || r->best_locked)
        return 0; /* a NaN metric is never the best */
    if (isnan(r->best))
        return 1;
    return r->o.maximize_best_checkpoint_metric ? v > r->best : v < r->best;
}

/* After a validation inside an epoch: checkpoint_best.h5 when the metric
 * is the best so far (as fairseq saves it at every validation). */
static int keep_best(struct hg__run *r, double metric, int64_t step, char *err, size_t errlen)
{
    if (r->o.no_save || !better(r, metric))
        return 0;
    r->best = metric;
    return hg__run_save(r, "checkpoint_best.h5", step, err, errlen);
}

/* fairseq's --patience: 1 when metric (just validated) has not beaten
 * the best of this run for --patience validations in a row. */
static int out_of_patience(struct hg__run *r, double metric)
{
    if (r->o.patience <= 0 || isnan(metric))
        return 0;
    int up = isnan(r->patience_best) ||
             (r->o.maximize_best_checkpoint_metric ? metric > r->patience_best
                                                    : metric < r->patience_best);
    if (up) {
        r->patience_best = metric;
        r->patience_runs = 0;
        return 0;
    }
    if (++r->patience_runs < r->o.patience)
        return 0;
    char line[256];
    snprintf(line, sizeof(line), "| early stop: %s has not improved for %lld validations "
             "(--patience), best %.4f\n", r->o.best_checkpoint_metric,
             (long long)r->patience_runs, r->patience_best);
    hg__run_log(r, line, NULL);
    return 1;
}

/* --profile-ops: seconds per op kind over the whole run, the top ones */
void hg__run_print_profile(struct hg__run *r)
{
    struct hg_exec *ex = hg_ctl_exec(r->ctl);
    const struct hg_graph *g = hg_ctl_graph(r->ctl);
    const double *t = hg_exec_profile_times(ex); /* [n] per position */
    double per[HG_OP_COUNT] = {0}, total = 0;
    int count[HG_OP_COUNT] = {0};
    if (!t)
        return;
    for (int i = 0; i < hg_exec_n(ex); i++) {
        enum hg_op op = hg_graph_node(g, hg_exec_order_at(ex, i))->op;
        per[op] += t[i];
        count[op]++;
        total += t[i];
    }
    char line[512];
    size_t copied;
    int views, fused, calls = hg_exec_kernel_calls(ex, &views, &fused, &copied);
    snprintf(line, sizeof line, "| op profile: %.3f s in the plan's ops over %llu updates; "
             "%d kernel calls per pass over %d nodes (%d reshapes and slices are views, %d "
             "optimizer nodes fused); %.2f MB copied by layout ops per pass (the last "
             "batch's shapes)\n", total, (unsigned long long)r->num_updates, calls,
             hg_exec_n(ex), views, fused, copied / 1e6);
    hg__run_log(r, line, NULL);
    long long launches = hg_exec_launches(ex);
    uint64_t updates = r->num_updates - r->first_update;
    if (launches >= 0 && updates > 0) {
        snprintf(line, sizeof line, "| op profile: %.1f launches per update on the GPU "
                 "(kernels, cuBLAS/cuDNN calls, stream copies and sets)\n",
                 (double)launches / (double)updates);
        hg__run_log(r, line, NULL);
    }
    for (int k = 0; k < 15; k++) {
        int best = -1;
        for (int op = 0; op < HG_OP_COUNT; op++)
            if (count[op] && (best < 0 || per[op] > per[best]))
                best = op;
        if (best < 0 || per[best] <= 0)
            break;
        snprintf(line, sizeof line, "|   %-20s %6.1f%%  %9.3f s  %4d nodes\n",
                 hg_op_table[best].name, 100 * per[best] / (total > 0 ? total : 1),
                 per[best], count[best]);
        hg__run_log(r, line, NULL);
        count[best] = 0;
    }
}

/* --trace: the latest step's ops on this rank, Chrome trace JSON (pid:
 * the rank; times: the machine's monotonic clock in us, so the ranks of
 * one machine line up); rank R of several writes FILE.rankR (before the
 * extension).  -1 with err naming the file. */
int hg__run_write_trace(struct hg__run *r, char *err, size_t errlen)
{
    struct hg_exec *ex = hg_ctl_exec(r->ctl);
    const struct hg_graph *g = hg_ctl_graph(r->ctl);
    const double *t = hg_exec_trace_times(ex); /* [n][2] */
    char path[4096];
    const char *dot = strrchr(r->o.trace, '.'), *slash = strrchr(r->o.trace, '/');
    if (dot && slash && dot < slash)
        dot = NULL;
    if (r->world > 1)
        snprintf(path, sizeof path, "%.*s.rank%d%s", dot ? (int)(dot - r->o.trace)
                 : (int)strlen(r->o.trace), r->o.trace, r->rank, dot ? dot : "");
    else
        snprintf(path, sizeof path, "%s", r->o.trace);
    if (!t)
        return hg_kerr(err, errlen, "--trace %s: no timeline", path);
    int fd = hg__run_open_file(r, path, 0, "--trace", err, errlen);
    if (fd < 0)
        return -1;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        return hg_kerr(err, errlen, "--trace %s: %s", path, strerror(errno));
    }
    fprintf(f, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n"
            "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": 0, "
            "\"args\": {\"name\": \"rank %d\"}}", r->rank, r->rank);
    for (int i = 0; i < hg_exec_n(ex); i++) {
        if (t[2 * i] <= 0) /* never ran here (fused with an earlier node) */
            continue;
        int v = hg_exec_order_at(ex, i);
        const struct hg_node_info *nd = hg_graph_node(g, v);
        /* transfers (started, then waited for) on a track of their own */
        fprintf(f, ",\n{\"name\": \"%s #%d\", \"cat\": \"%s\", \"ph\": \"X\", \"pid\": %d, "
                "\"tid\": %d, \"ts\": %.3f, \"dur\": %.3f, \"args\": {\"out\": \"%s\"}}",
                hg_op_table[nd->op].name, v,
                nd->phase == HG_PH_FORWARD ? "forward"
                : nd->phase == HG_PH_BACKWARD ? "backward" : "update", r->rank,
                (hg_op_table[nd->op].flags & HG_OPF_COMM) != 0, t[2 * i] * 1e6,
                (t[2 * i + 1] - t[2 * i]) * 1e6,
                nd->out >= 0 ? hg_graph_tensor(g, nd->out)->name : "-");
    }
    fprintf(f, "\n]}\n");
    if (ferror(f) | (fclose(f) != 0))
        return hg_kerr(err, errlen, "--trace %s: write failed", path);
    return 0;
}

/* One epoch in the loop: its plan and loader (planned and opened again
 * when a rebalance starts a new segment), where it is, and what the next
 * log line reports. */
struct epoch_loop {
    struct hg_epoch *ep;
    struct hg_loader *ld;
    struct hg_loader_opts lo;
    int64_t steps, step;    /* the epoch's steps, and the last one read */
    struct meters m;        /* since the last log line */
    struct hg_ctl_stats st; /* the update's so far */
    int in_step;            /* micro-batches accumulated into the update */
    int impatient;          /* --patience ran out */
    double lr;              /* the last update's */
};

/* One batch into the update: traced (HG_TRACE_SAMPLES), its ranks' costs
 * counted for --rebalance-interval, accumulated; a batch smaller than a
 * split strategy's pieces is named. */
static int one_batch(struct hg__run *r, struct epoch_loop *e, const struct hg_batch *b,
                     char *err, size_t errlen)
{
    if (r->trace)
        hg__run_trace_batch(r, e->ep, b->step);
    for (int i = 0; r->rebalance && i < r->world; i++)
        r->rb_cost[i] += hg__run_batch_cost(r, e->ep, i, b->step);
    e->step++;
    int64_t dropped = e->st.dropped;
    if (hg_ctl_accumulate(r->ctl, r->num_updates, b, &e->st, err, errlen) != 0)
        return -1;
    if (e->st.dropped > dropped) {
        char w[200];
        snprintf(w, sizeof w, "warning: step %lld's batch of %lld samples is smaller "
                 "than the split strategy's pieces: not trained on",
                 (long long)b->step, (long long)(e->st.dropped - dropped));
        hg__run_log(r, w, NULL);
    }
    return 0;
}

/* An update applied: its per-rank times and statistics into the meters
 * (a skipped one counts nothing), then the statistics cleared. */
static void count_update(struct hg__run *r, struct epoch_loop *e)
{
    struct hg_ctl_stats *st = &e->st;
    if (!st->skipped) {
        const double *rt;
        int nw = hg_ctl_rank_times(r->ctl, &rt);
        for (int i = 0; i < 2 * nw && nw == r->world; i++)
            r->rank_t[i] += rt[i];
        for (int i = 0; r->rebalance && i < nw && nw == r->world; i++)
            r->rb_time[i] += rt[2 * i];
        e->m.bsz += st->nsentences;
        r->num_updates++;
        e->m.loss += st->loss_sum;
        e->m.nll += st->nll_sum;
        e->m.ss += st->sample_size;
        e->m.gnorm += st->gnorm;
        e->m.clip += st->clipped;
        e->m.loss_scale = st->loss_scale;
        e->m.n++;
    }
    memset(st, 0, sizeof(*st));
}

/* The validation an update asks for (--validate-interval-updates, or a
 * stop other than a signal) with checkpoint_best.h5 kept; *stop_now set
 * when --patience runs out. */
static int validate_in_epoch(struct hg__run *r, struct epoch_loop *e, int stop_req,
                             int *stop_now, char *err, size_t errlen)
{
    const struct hg_opts *o = &r->o;
    /* validated before any stop's save, so checkpoint_last holds
     * the final best_metric; not on a signal, which asks to stop now */
    if (!r->valid.ds || stop_req ||
        !((o->validate_interval_updates > 0 &&
           r->num_updates % (uint64_t)o->validate_interval_updates == 0) ||
          *stop_now))
        return 0;
    double metric;
    int fresh = validate_once(r, &metric, err, errlen);
    if (fresh < 0 || keep_best(r, metric, e->step, err, errlen) != 0)
        return -1;
    /* --patience counts validations, each once */
    if (fresh && out_of_patience(r, metric))
        e->impatient = *stop_now = 1;
    return 0;
}

/* The checkpoint an update asks for: --save-interval-updates' (pruned to
 * --keep-interval-updates) and checkpoint_last.h5, or the stop's
 * checkpoint_last.h5 alone. */
static int save_in_epoch(struct hg__run *r, const struct epoch_loop *e, int stop_now, char *err,
                         size_t errlen)
{
    const struct hg_opts *o = &r->o;
    if (o->no_save || !(stop_now || (o->save_interval_updates > 0 &&
                                     r->num_updates % (uint64_t)o->save_interval_updates == 0)))
        return 0;
    char name[128];
    snprintf(name, sizeof(name), "checkpoint_%lld_%llu.h5", (long long)r->epoch,
             (unsigned long long)r->num_updates);
    if ((!stop_now && hg__run_save(r, name, e->step, err, errlen) != 0) ||
        hg__run_save(r, "checkpoint_last.h5", e->step, err, errlen) != 0)
        return -1;
    if (!stop_now)
        hg__run_prune(r, "checkpoint_*_*.h5", o->keep_interval_updates);
    return 0;
}

/* A new segment from this step on (a rebalance): the rest of the epoch
 * planned again and its loader opened there. */
static int next_segment(struct hg__run *r, struct epoch_loop *e, char *err, size_t errlen)
{
    hg_loader_close(e->ld);
    hg_epoch_free(e->ep);
    e->ld = NULL;
    e->ep = NULL;
    if (hg__run_plan_epoch(r, e->step, 0, &e->ep, err, errlen) != 0 ||
        hg_loader_open(&e->ld, r->train.ds, e->ep, &e->lo, e->step, err, errlen) != 0)
        return -1;
    e->steps = hg_epoch_steps(e->ep);
    return 0;
}

/* One update (t0: when its last batch was read): applied with the ranks
 * agreeing on the stops, counted, rebalanced, logged, validated and saved
 * as the options ask.  0: go on; 2: stopped by a signal; 3: stopped by
 * --max-update, --stop-time-hours or --patience (validated and saved);
 * -1. */
static int one_update(struct hg__run *r, struct epoch_loop *e, double t0, char *err,
                      size_t errlen)
{
    const struct hg_opts *o = &r->o;
    e->lr = hg_lr_at(&r->sched, (int64_t)r->num_updates);
    /* the ranks agree on both in the update: every rank stops */
    e->st.stop = (hg__run_stop_signal ? HG_STOP_SIGNAL : 0) |
                 (o->stop_time_hours > 0 && hg_now() - r->t_start >= o->stop_time_hours * 3600
                      ? HG_STOP_TIME
                      : 0);
    if (hg_ctl_update(r->ctl, r->num_updates, e->lr, &e->st, err, errlen) != 0)
        return -1;
    r->train_wall += hg_now() - t0;
    int stop_req = (e->st.stop & HG_STOP_SIGNAL) != 0;
    int stop_time = (e->st.stop & HG_STOP_TIME) != 0;
    count_update(r, e);
    /* decided before any save, so a checkpoint of this update
     * holds the new segment as the run goes on with it */
    int resegment = 0;
    if (r->rebalance && r->num_updates % (uint64_t)r->rebalance == 0 && e->step < e->steps &&
        (resegment = hg__run_rebalance(r, e->step, err, errlen)) < 0)
        return -1;
    if (r->num_updates % (uint64_t)o->log_interval == 0)
        hg__run_log_train(r, &e->m, e->step, e->steps, e->lr);
    else if (r->tty)
        hg__run_progress(r, e->step, e->steps, &e->m);
    int stop_now = stop_req || stop_time ||
                   (o->max_update > 0 && r->num_updates >= (uint64_t)o->max_update);
    /* the meters' window leaves out validation and checkpoints: the
     * next line's wps and ups are the training's alone */
    double tv = hg_now();
    if (validate_in_epoch(r, e, stop_req, &stop_now, err, errlen) != 0)
        return -1;
    if (stop_time && r->rank == 0) {
        char line[160];
        snprintf(line, sizeof(line), "| --stop-time-hours %g reached after update %llu\n",
                 o->stop_time_hours, (unsigned long long)r->num_updates);
        hg__run_log(r, line, NULL);
    }
    if (save_in_epoch(r, e, stop_now, err, errlen) != 0)
        return -1;
    e->m.t0 += hg_now() - tv;
    if (stop_now)
        return stop_req ? 2 : 3;
    if (resegment && next_segment(r, e, err, errlen) != 0)
        return -1;
    return 0;
}

/* Epoch r->epoch from first_step on, through its last batch or a stop,
 * and its log line.  0: the epoch's end; 2, 3: one_update's stops; -1. */
static int run_epoch(struct hg__run *r, int64_t first_step, struct epoch_loop *e, char *err,
                     size_t errlen)
{
    const struct hg_opts *o = &r->o;
    if (hg__run_plan_epoch(r, first_step, first_step > 0, &e->ep, err, errlen) != 0)
        return -1;
    e->lo = (struct hg_loader_opts){.rank = r->data_rank, .prefetch = 4, .pad_id = 1,
                                    .timeout_s = o->distributed_timeout};
    if (hg_loader_open(&e->ld, r->train.ds, e->ep, &e->lo, first_step, err, errlen) != 0) {
        hg_epoch_free(e->ep);
        return -1;
    }
    e->steps = hg_epoch_steps(e->ep);
    e->step = first_step;
    e->m = (struct meters){.t0 = hg_now()};
    r->sched.lr = hg_opts_lr_epoch(o, r->epoch); /* --lr's list: this epoch's */
    memset(&e->st, 0, sizeof(e->st));
    e->in_step = e->impatient = 0;
    e->lr = hg_lr_at(&r->sched, (int64_t)r->num_updates);
    int rc;
    struct hg_batch b;
    while ((rc = hg_loader_next(e->ld, &b, err, errlen)) == 1) {
        double t0 = hg_now();
        if (one_batch(r, e, &b, err, errlen) != 0) {
            rc = -1;
            break;
        }
        if (++e->in_step < o->update_freq && e->step < e->steps)
            continue;
        e->in_step = 0;
        if ((rc = one_update(r, e, t0, err, errlen)) != 0)
            break;
    }
    hg_loader_close(e->ld);
    hg_epoch_free(e->ep);
    if (rc < 0)
        return -1;
    hg__run_log_train(r, &e->m, e->step, e->steps, e->lr);
    return rc;
}

/* The end of epoch r->epoch: validated and saved as --validate-interval
 * and --save-interval ask; the last one (--max-epoch, --min-lr, or
 * --patience run out) always.  1: on to the next epoch; 0: done; -1. */
static int end_of_epoch(struct hg__run *r, int impatient, char *err, size_t errlen)
{
    const struct hg_opts *o = &r->o;
    /* the lr the next epoch would start with (--lr's list: its rate) */
    struct hg_lr_sched next = r->sched;
    next.lr = hg_opts_lr_epoch(o, r->epoch + 1);
    double lr_next = hg_lr_at(&next, (int64_t)r->num_updates);
    int low_lr = (o->min_lr > 0 && lr_next < o->min_lr) ||
                 (o->stop_min_lr >= 0 && lr_next <= o->stop_min_lr);
    int last = (o->max_epoch > 0 && r->epoch >= o->max_epoch) || low_lr;
    double metric = NAN;
    int have_valid = r->valid.ds && o->validate_interval > 0 &&
                     (r->epoch % o->validate_interval == 0 || last);
    int fresh = have_valid ? validate_once(r, &metric, err, errlen) : 0;
    if (fresh < 0)
        return -1;
    if (fresh && out_of_patience(r, metric))
        impatient = 1; /* the last epoch: saved, then stop */
    if (!o->no_save && (r->epoch % o->save_interval == 0 || last || impatient)) {
        if (have_valid && better(r, metric)) {
            r->best = metric;
            if (hg__run_save(r, "checkpoint_best.h5", -1, err, errlen) != 0)
                return -1;
        }
        char name[64];
        snprintf(name, sizeof(name), "checkpoint%lld.h5", (long long)r->epoch);
        if ((!o->no_epoch_checkpoints && hg__run_save(r, name, -1, err, errlen) != 0) ||
            hg__run_save(r, "checkpoint_last.h5", -1, err, errlen) != 0)
            return -1;
        if (!o->no_epoch_checkpoints)
            hg__run_prune(r, "checkpoint[0-9]*.h5", o->keep_last_epochs);
    }
    if (impatient)
        return 0;
    if (low_lr) {
        char line[256];
        if (o->min_lr > 0 && lr_next < o->min_lr)
            snprintf(line, sizeof(line), "| lr %.3g below --min-lr %.3g: done\n", lr_next,
                     o->min_lr);
        else
            snprintf(line, sizeof(line), "| lr %.3g at or below --stop-min-lr %.3g: done\n",
                     lr_next, o->stop_min_lr);
        hg__run_log(r, line, NULL);
        return 0;
    }
    return 1;
}

int hg__run_train(struct hg__run *r, int64_t first_step, char *err, size_t errlen)
{
    const struct hg_opts *o = &r->o;
    /* resumed at --max-update or beyond: nothing to do (not one more) */
    if (o->max_update > 0 && r->num_updates >= (uint64_t)o->max_update)
        return 0;
    for (;; r->epoch++, first_step = 0) {
        if (o->max_epoch > 0 && r->epoch > o->max_epoch)
            return 0;
        struct epoch_loop e;
        int rc = run_epoch(r, first_step, &e, err, errlen);
        if (rc < 0)
            return -1;
        if (rc == 2) {
            if (r->rank == 0)
                fprintf(stderr, "hgtrain: stopped by signal %d after update %llu%s; the final "
                        "validation skipped\n",
                        hg__run_stop_signal ? (int)hg__run_stop_signal : SIGTERM,
                        (unsigned long long)r->num_updates,
                        o->no_save ? "" : "; wrote checkpoint_last.h5");
            return 1;
        }
        /* stopped inside the epoch (--max-update, --stop-time-hours):
         * validated and saved above */
        if (rc == 3)
            return 0;
        /* end of the epoch; the last one (--max-epoch, --min-lr) is always
         * validated and saved */
        if ((rc = end_of_epoch(r, e.impatient, err, errlen)) <= 0)
            return rc;
    }
}
