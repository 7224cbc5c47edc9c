/* run-log.c - hgtrain's log (rank 0): records as text ("| ..." lines, for
 * --log-format simple and tqdm) and as JSON (--log-format json, and
 * always --log-file's JSON Lines), the training meters' lines and the
 * tqdm progress line.  At the bottom of the run's files: every other one
 * logs through it, and it calls none of them (run-impl.h). */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hg_base.h"
#include "trainer/run-impl.h"

/* s as a JSON string body (quotes and backslashes escaped, control
 * characters as \u00XX) into out[len]. */
void hg__run_json_escape(const char *s, size_t n, char *out, size_t len)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k + 7 < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            out[k++] = '\\';
            out[k++] = (char)c;
        } else if (c < 0x20) {
            k += (size_t)snprintf(out + k, len - k, "\\u%04x", c);
        } else {
            out[k++] = (char)c;
        }
    }
    out[k] = 0;
}

/* One log record, rank 0 only: text ("| ..." lines, for --log-format
 * simple and tqdm) and its JSON form (json; NULL: each line of text
 * becomes {"message": "..."}). stdout gets the form --log-format asks for;
 * --log-file always gets JSON Lines, so both parse line by line. */
void hg__run_log(struct hg__run *r, const char *text, const char *json)
{
    if (r->rank != 0)
        return;
    char buf[4096];
    const char *j = json;
    if (!j) {
        size_t k = 0;
        for (const char *p = text; *p && k + 32 < sizeof(buf);) {
            const char *e = strchr(p, '\n');
            size_t n = e ? (size_t)(e - p) : strlen(p);
            const char *body = p;
            if (n >= 2 && p[0] == '|' && p[1] == ' ') { /* the text's margin */
                body += 2;
                n -= 2;
            }
            char esc[2048];
            hg__run_json_escape(body, n, esc, sizeof(esc));
            k += (size_t)snprintf(buf + k, sizeof(buf) - k, "{\"message\": \"%s\"}\n", esc);
            p = e ? e + 1 : p + strlen(p);
        }
        buf[k < sizeof(buf) ? k : sizeof(buf) - 1] = 0;
        j = buf;
    }
    if (strcmp(r->o.log_format, "none") != 0) {
        fputs(r->json ? j : text, stdout);
        fflush(stdout);
    }
    if (r->log) {
        fputs(j, r->log);
        fflush(r->log);
    }
}

/* fairseq's meters, in base 2: loss and nll_loss per unit of sample size
 * (nll_loss equals loss for a task whose model has no separate nll, such
 * as mnist and bert; translation's loss is label-smoothed), ppl =
 * 2^nll_loss. */
void hg__run_log_train(struct hg__run *r, struct meters *m, int64_t step, int64_t steps,
                       double lr)
{
    if (m->n == 0 || r->rank != 0)
        return;
    if (r->tty)
        fputs("\r\033[K", stderr); /* clear the progress line */
    double dt = hg_now() - m->t0;
    double loss = m->loss / (m->ss > 0 ? m->ss : 1) / log(2.0);
    double nll = m->nll / (m->ss > 0 ? m->ss : 1) / log(2.0);
    char line[1024];
    /* per rank: 2 numbers of at most 20 characters */
    size_t jn = 1024 + 48 * (size_t)r->world;
    char *js = malloc(jn); /* [jn] */
    if (!js)
        return;
    /* "update" and "num_updates" (fairseq's key) are the same number */
    snprintf(js, jn,
             "{\"epoch\": %lld, \"update\": %llu, \"num_updates\": %llu, \"step\": %lld, "
             "\"steps\": %lld, \"loss\": %.4f, \"nll_loss\": %.4f, \"ppl\": %.2f, \"wps\": %.0f, "
             "\"ups\": %.2f, \"wpb\": %.1f, \"bsz\": %.1f, \"lr\": %.6g, \"gnorm\": %.3f, "
             "\"clip\": %.1f, \"train_wall\": %.1f, \"wall\": %.1f}\n",
             (long long)r->epoch, (unsigned long long)r->num_updates,
             (unsigned long long)r->num_updates, (long long)step, (long long)steps, loss, nll,
             pow(2.0, nll), m->ss / dt, m->n / dt, m->ss / m->n, m->bsz / m->n, lr,
             m->gnorm / m->n, 100.0 * m->clip / m->n, r->train_wall, hg_now() - r->t_start);
    snprintf(line, sizeof(line),
             "| epoch %03lld | update %llu | %lld / %lld | loss %.4f | nll_loss %.4f | ppl %.2f | "
             "wps %.0f | ups %.2f | wpb %.1f | bsz %.1f | lr %.6g | gnorm %.3f | "
             "clip %.0f%% | train_wall %.0f | wall %.0f\n",
             (long long)r->epoch, (unsigned long long)r->num_updates, (long long)step,
             (long long)steps, loss, nll, pow(2.0, nll), m->ss / dt, m->n / dt, m->ss / m->n,
             m->bsz / m->n, lr, m->gnorm / m->n, 100.0 * m->clip / m->n, r->train_wall,
             hg_now() - r->t_start);
    size_t len = strlen(line), lj = strlen(js);
    if (r->o.fp16 && len >= 2 && lj >= 2) { /* the scale joins the end of the line */
        snprintf(line + len - 1, sizeof(line) - len + 1, " | loss_scale %g\n", m->loss_scale);
        snprintf(js + lj - 2, jn - lj + 2, ", \"loss_scale\": %g}\n", m->loss_scale);
    }
    /* per rank, seconds per update: compute (forward + backward) and wait
     * (gradient collectives): the straggler computes longest, waits least */
    for (int k = 0; k < 2; k++) {
        lj = strlen(js);
        int w = snprintf(js + lj - 2, jn - lj + 2, ", \"%s\": [", k ? "wait" : "compute");
        size_t p = lj - 2 + (size_t)w;
        for (int i = 0; i < r->world; i++)
            p += (size_t)snprintf(js + p, jn - p, "%s%.6f", i ? ", " : "",
                                  r->rank_t[2 * i + k] / m->n);
        snprintf(js + p, jn - p, "]}\n");
    }
    memset(r->rank_t, 0, 2 * (size_t)r->world * sizeof(double));
    hg__run_log(r, line, js);
    free(js);
    memset(m, 0, sizeof(*m));
    m->t0 = hg_now();
}

/* h:mm:ss (or m:ss) of t seconds into out[len] */
static void hms(double t, char *out, size_t len)
{
    long long s = t > 0 && t < 1e9 ? (long long)(t + 0.5) : 0;
    if (s >= 3600)
        snprintf(out, len, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
    else
        snprintf(out, len, "%lld:%02lld", s / 60, s % 60);
}

/* Seconds left to the first stop that is set (--max-update, --max-epoch,
 * --stop-time-hours) at this run's update rate so far; < 0: unknown. */
static double eta(const struct hg__run *r, int64_t step, int64_t steps)
{
    const struct hg_opts *o = &r->o;
    double el = hg_now() - r->t_train0;
    uint64_t done = r->num_updates - r->first_update;
    if (done == 0 || el <= 0)
        return -1;
    double per = el / (double)done, left = -1;
    if (o->max_update > 0)
        left = per * (double)((uint64_t)o->max_update > r->num_updates
                                  ? (uint64_t)o->max_update - r->num_updates : 0);
    if (o->max_epoch > 0) {
        double ups_epoch = (double)steps / (double)o->update_freq;
        double e = per * ((double)(steps - step) / (double)o->update_freq +
                          (double)(o->max_epoch - r->epoch) * ups_epoch);
        left = left < 0 || e < left ? e : left;
    }
    if (o->stop_time_hours > 0) {
        double t = o->stop_time_hours * 3600 - (hg_now() - r->t_start);
        left = left < 0 || t < left ? (t > 0 ? t : 0) : left;
    }
    return left;
}

/* tqdm-style: one line on stderr, rewritten in place between log lines:
 * the epoch's progress, speed, loss, time since the start and the ETA */
void hg__run_progress(struct hg__run *r, int64_t step, int64_t steps, const struct meters *m)
{
    double dt = hg_now() - m->t0, left = eta(r, step, steps);
    char el[32], et[32] = "?";
    hms(hg_now() - r->t_start, el, sizeof(el));
    if (left >= 0)
        hms(left, et, sizeof(et));
    fprintf(stderr, "\r| epoch %03lld: %3d%% %lld/%lld, %.1f updates/s, loss %.4f, "
            "elapsed %s, ETA %s   ", (long long)r->epoch,
            steps ? (int)(100 * step / steps) : 100, (long long)step, (long long)steps,
            dt > 0 ? m->n / dt : 0.0, m->ss > 0 ? m->loss / m->ss / log(2.0) : 0.0, el, et);
    fflush(stderr);
}
