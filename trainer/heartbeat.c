/* heartbeat.c - see heartbeat.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/hg_base.h"
#include "comm/hg_comm.h"
#include "trainer/heartbeat.h"

#define HB_DONE ((int64_t)1 << 40) /* added to hb/<rank> when it leaves */
#define HB_PERIOD_MAX 2.0
#define HB_PERIOD_MIN 0.2
#define HB_LIMIT_MAX 50.0 /* named within a minute with the period */

struct hg_hb {
    struct hg_store *st; /* this thread's own connection */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* signalled by stop */
    int stop;
    int rank;                 /* beat: the rank; watch: -1 */
    int world, skip_lo, skip_hi;
    double limit, period;
    char where[300];          /* "host:port", for messages */
};

double hg_hb_limit(double timeout_s)
{
    double l = timeout_s / 2;
    return l < HB_LIMIT_MAX ? l : HB_LIMIT_MAX;
}

/* Sleeps one period unless stopped; 1 when stopped. */
static int pause_period(struct hg_hb *hb)
{
    struct timespec ts;
    hg_deadline_ts(&ts, hb->period);
    pthread_mutex_lock(&hb->mu);
    while (!hb->stop && pthread_cond_timedwait(&hb->cv, &hb->mu, &ts) != ETIMEDOUT)
        ;
    int stop = hb->stop;
    pthread_mutex_unlock(&hb->mu);
    return stop;
}

static void *beat_main(void *arg)
{
    struct hg_hb *hb = arg;
    char key[32];
    snprintf(key, sizeof key, "hb/%d", hb->rank);
    double last_ok = hg_now(), last_try = last_ok;
    do {
        int64_t dead = 0;
        double t = hg_now();
        if (t - last_try > hb->limit / 2) /* we were stopped ourselves: not */
            last_ok = t;                  /* the store's silence */
        last_try = t;
        if (hg_store_add(hb->st, key, 1, NULL, NULL, 0) == 0 &&
            hg_store_add(hb->st, "hb/dead", 0, &dead, NULL, 0) == 0) {
            last_ok = hg_now();
            if (dead > 0) {
                /* our collective waits for that rank: nothing to save */
                fprintf(stderr, "hgtrain: rank %d: leaving: rank %" PRId64 " has sent "
                        "no heartbeat for %.0f s (stopped, hung or cut off)\n", hb->rank,
                        dead - 1, hb->limit);
                _exit(HG_HB_EXIT_PEER);
            }
        } else if (hg_now() - last_ok >= hb->limit) {
            fprintf(stderr, "hgtrain: rank %d: leaving: the rendezvous store at %s (rank 0's "
                    "node) has not answered for %.0f s (stopped, hung or cut off)\n",
                    hb->rank, hb->where, hg_now() - last_ok);
            _exit(HG_HB_EXIT_PEER);
        }
    } while (!pause_period(hb));
    return NULL;
}

static void *watch_main(void *arg)
{
    struct hg_hb *hb = arg;
    int n = hb->world;
    int64_t *last = calloc((size_t)n, sizeof *last); /* [world] last beat count */
    double *seen = calloc((size_t)n, sizeof *seen);   /* [world] when it changed */
    if (!last || !seen) {
        free(last);
        free(seen);
        fprintf(stderr, "hgtrain: heartbeat watcher: out of memory; ranks not watched\n");
        return NULL;
    }
    do {
        int named = -1;
        for (int r = 0; r < n && named < 0; r++) {
            if (r >= hb->skip_lo && r < hb->skip_hi)
                continue;
            char key[32];
            int64_t v;
            snprintf(key, sizeof key, "hb/%d", r);
            /* the store is in this process: a failure is no peer's fault */
            if (hg_store_add(hb->st, key, 0, &v, NULL, 0) != 0 || v >= HB_DONE)
                continue;
            double t = hg_now();
            if (v != last[r]) {
                last[r] = v;
                seen[r] = t;
            } else if (v > 0 && t - seen[r] >= hb->limit) {
                named = r;
                fprintf(stderr, "hgtrain: rank %d has sent no heartbeat for %.0f s (stopped, "
                        "hung or cut off); stopping the job\n", r, t - seen[r]);
            }
        }
        if (named >= 0) { /* the beating ranks read it and leave */
            hg_store_add(hb->st, "hb/dead", 1 + named, NULL, NULL, 0);
            break;
        }
    } while (!pause_period(hb));
    free(last);
    free(seen);
    return NULL;
}

/* tmpl: rank, world and the skipped range, copied before the thread runs */
static int start(struct hg_hb **out, const struct hg_hb *tmpl, const char *host, int port,
                 const char *token, double limit_s, void *(*fn)(void *), char *err,
                 size_t errlen)
{
    *out = NULL;
    struct hg_hb *hb = calloc(1, sizeof *hb);
    if (!hb)
        return hg_kerr(err, errlen, "heartbeat: out of memory");
    hb->rank = tmpl->rank;
    hb->world = tmpl->world;
    hb->skip_lo = tmpl->skip_lo;
    hb->skip_hi = tmpl->skip_hi;
    hb->limit = limit_s;
    hb->period = limit_s / 5;
    if (hb->period > HB_PERIOD_MAX)
        hb->period = HB_PERIOD_MAX;
    if (hb->period < HB_PERIOD_MIN)
        hb->period = HB_PERIOD_MIN;
    snprintf(hb->where, sizeof hb->where, "%s:%d", host, port);
    /* a request waits one period at most, so stop never waits longer */
    if (hg_store_connect(&hb->st, host, port, token, hb->rank, hb->period, err, errlen) !=
        0) {
        free(hb);
        return -1;
    }
    pthread_mutex_init(&hb->mu, NULL);
    pthread_condattr_t ca; /* deadlines on the monotonic clock */
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&hb->cv, &ca);
    pthread_condattr_destroy(&ca);
    int e = pthread_create(&hb->thread, NULL, fn, hb);
    if (e != 0) {
        hg_store_close(hb->st);
        pthread_mutex_destroy(&hb->mu);
        pthread_cond_destroy(&hb->cv);
        free(hb);
        return hg_kerr(err, errlen, "heartbeat thread: %s", strerror(e));
    }
    *out = hb;
    return 0;
}

static void stop(struct hg_hb *hb)
{
    pthread_mutex_lock(&hb->mu);
    hb->stop = 1;
    pthread_cond_signal(&hb->cv);
    pthread_mutex_unlock(&hb->mu);
    pthread_join(hb->thread, NULL);
}

static void destroy(struct hg_hb *hb)
{
    hg_store_close(hb->st);
    pthread_mutex_destroy(&hb->mu);
    pthread_cond_destroy(&hb->cv);
    free(hb);
}

int hg_hb_beat_start(struct hg_hb **hb, const char *host, int port, const char *token,
                     int rank, double limit_s, char *err, size_t errlen)
{
    struct hg_hb t = {.rank = rank};
    return start(hb, &t, host, port, token, limit_s, beat_main, err, errlen);
}

void hg_hb_beat_stop(struct hg_hb *hb)
{
    if (!hb)
        return;
    stop(hb);
    char key[32];
    snprintf(key, sizeof key, "hb/%d", hb->rank);
    hg_store_add(hb->st, key, HB_DONE, NULL, NULL, 0); /* no longer expected */
    destroy(hb);
}

int hg_hb_watch_start(struct hg_hb **hb, const char *host, int port, const char *token,
                      int world, int skip_lo, int skip_hi, double limit_s, char *err,
                      size_t errlen)
{
    struct hg_hb t = {.rank = -1, .world = world, .skip_lo = skip_lo, .skip_hi = skip_hi};
    return start(hb, &t, host, port, token, limit_s, watch_main, err, errlen);
}

void hg_hb_watch_stop(struct hg_hb *hb)
{
    if (!hb)
        return;
    stop(hb);
    destroy(hb);
}
