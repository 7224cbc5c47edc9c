/* loader.c - collates one rank's batches of an epoch, optionally ahead of
 * time on a producer thread.
 *
 * Buffers are allocated once at open, sized for the largest batch of this
 * rank (max B, and max L per SEQ field, over its remaining steps). With
 * prefetch P there are P + 1 slots: the consumer holds one (valid until
 * its next call) while the producer fills up to P ahead. Every wait is a
 * pthread_cond_timedwait; the consumer turns a timeout into an error. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "data/data-impl.h"
#include "data/hg_data.h"

#define HG_LD_MAX_FIELDS 8
#define HG_LD_ERRLEN 512

enum slot_state { SLOT_EMPTY, SLOT_READY, SLOT_ERROR };

struct slot {
    enum slot_state state;
    int64_t step;
    int64_t size;
    int64_t tokens;
    const int64_t *ids;                 /* [size] the samples (the epoch plan's) */
    void *data[HG_LD_MAX_FIELDS];       /* SEQ: [maxB, maxL]; ARRAY: [maxB, item...] */
    int32_t *len[HG_LD_MAX_FIELDS];     /* SEQ: [maxB] */
    struct hg_shape shape[HG_LD_MAX_FIELDS];
    char err[HG_LD_ERRLEN];
};

struct hg_loader {
    struct hg_dataset *ds;
    const struct hg_epoch *ep;
    int rank;
    int32_t pad_id;
    double timeout_s;
    int nfields;
    enum hg_field_kind kind[HG_LD_MAX_FIELDS];
    enum hg_dtype dtype[HG_LD_MAX_FIELDS];
    struct hg_shape item[HG_LD_MAX_FIELDS]; /* ARRAY: per-sample shape */
    int64_t item_elems[HG_LD_MAX_FIELDS];
    int64_t max_b, max_l[HG_LD_MAX_FIELDS];
    int64_t nsteps, next_step;   /* consumer: the step next() returns */
    int nslot;
    struct slot *slot;           /* [nslot] */
    int held;                    /* slot the consumer holds, -1: none */
    int failed;
    /* producer */
    int threaded;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv_ready;     /* a slot became READY/ERROR */
    pthread_cond_t cv_free;      /* a slot became EMPTY, or stop */
    int stop;
};

static void fill_pad(void *dst, enum hg_dtype dt, int64_t n, int32_t pad)
{
    switch (dt) {
    case HG_U8: memset(dst, (uint8_t)pad, (size_t)n); break;
    case HG_I8: memset(dst, (int8_t)pad, (size_t)n); break;
    case HG_I32:
        for (int64_t i = 0; i < n; i++)
            ((int32_t *)dst)[i] = pad;
        break;
    case HG_I64:
        for (int64_t i = 0; i < n; i++)
            ((int64_t *)dst)[i] = pad;
        break;
    case HG_F32:
        for (int64_t i = 0; i < n; i++)
            ((float *)dst)[i] = (float)pad;
        break;
    default: HG_CHECK(!"dtype not held by shards");
    }
}

/* Reads and collates step into s (no lock held: the slot is ours). */
static int fill_slot(struct hg_loader *ld, struct slot *s, int64_t step, char *err,
                     size_t errlen)
{
    int64_t b;
    const int64_t *idx = hg_epoch_batch(ld->ep, ld->rank, step, &b);
    HG_CHECK(b <= ld->max_b);
    s->step = step;
    s->size = b;
    s->ids = idx; /* the epoch plan's: it outlives the loader */
    s->tokens = -1;
    for (int f = 0; f < ld->nfields; f++) {
        size_t esz = hg_dtype_size(ld->dtype[f]);
        unsigned char *dst = s->data[f];
        if (ld->kind[f] == HG_FIELD_ARRAY) {
            size_t row = (size_t)ld->item_elems[f] * esz;
            s->shape[f].ndim = 1 + ld->item[f].ndim;
            s->shape[f].dim[0] = b;
            for (int k = 0; k < ld->item[f].ndim; k++)
                s->shape[f].dim[1 + k] = ld->item[f].dim[k];
            for (int64_t i = 0; i < b; i++) {
                int64_t n;
                if (hg_dataset_read(ld->ds, f, idx[i], dst + (size_t)i * row, row, &n,
                                    err, errlen))
                    return -1;
            }
            continue;
        }
        const int32_t *lens = hg_dataset_lengths(ld->ds, f);
        int64_t L = 0, tok = 0;
        for (int64_t i = 0; i < b; i++)
            if (lens[idx[i]] > L)
                L = lens[idx[i]];
        HG_CHECK(L <= ld->max_l[f]);
        s->shape[f] = (struct hg_shape){.ndim = 2, .dim = {b, L}};
        fill_pad(dst, ld->dtype[f], b * L, ld->pad_id);
        for (int64_t i = 0; i < b; i++) {
            int64_t n;
            if (hg_dataset_read(ld->ds, f, idx[i], dst + (size_t)(i * L) * esz,
                                (size_t)L * esz, &n, err, errlen))
                return -1;
            s->len[f][i] = (int32_t)n;
            tok += n;
        }
        if (s->tokens < 0)
            s->tokens = tok;
    }
    if (s->tokens < 0)
        s->tokens = b;
    return 0;
}

static void *producer(void *arg)
{
    struct hg_loader *ld = arg;
    char err[HG_LD_ERRLEN];
    for (int64_t step = ld->next_step; step < ld->nsteps; step++) {
        struct slot *s = &ld->slot[step % ld->nslot];
        pthread_mutex_lock(&ld->mu);
        /* A full ring is not an error (training may be slow): wait on. */
        while (!ld->stop && s->state != SLOT_EMPTY) {
            struct timespec ts;
            hg_deadline_ts(&ts, ld->timeout_s);
            pthread_cond_timedwait(&ld->cv_free, &ld->mu, &ts);
        }
        int stop = ld->stop;
        pthread_mutex_unlock(&ld->mu);
        if (stop)
            break;
        int rc = fill_slot(ld, s, step, err, sizeof(err));
        pthread_mutex_lock(&ld->mu);
        if (rc) {
            snprintf(s->err, sizeof(s->err), "%s", err);
            s->step = step;
            s->state = SLOT_ERROR;
        } else {
            s->state = SLOT_READY;
        }
        pthread_cond_broadcast(&ld->cv_ready);
        pthread_mutex_unlock(&ld->mu);
        if (rc)
            break;
    }
    return NULL;
}

static void loader_free(struct hg_loader *ld)
{
    for (int k = 0; ld->slot && k < ld->nslot; k++)
        for (int f = 0; f < ld->nfields; f++) {
            free(ld->slot[k].data[f]);
            free(ld->slot[k].len[f]);
        }
    free(ld->slot);
    pthread_cond_destroy(&ld->cv_ready);
    pthread_cond_destroy(&ld->cv_free);
    pthread_mutex_destroy(&ld->mu);
    free(ld);
}

int hg_loader_open(struct hg_loader **out, struct hg_dataset *ds,
                   const struct hg_epoch *ep, const struct hg_loader_opts *o,
                   int64_t first_step, char *err, size_t errlen)
{
    HG_CHECK(out && ds && ep && o && o->prefetch >= 0 && o->rank >= 0);
    *out = NULL;
    struct hg_loader *ld = calloc(1, sizeof(*ld));
    if (!ld)
        return hg_kerr(err, errlen, "loader rank %d: out of memory", o->rank);
    pthread_mutex_init(&ld->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&ld->cv_ready, &ca);
    pthread_cond_init(&ld->cv_free, &ca);
    pthread_condattr_destroy(&ca);
    ld->ds = ds;
    ld->ep = ep;
    ld->rank = o->rank;
    ld->pad_id = o->pad_id;
    ld->timeout_s = o->timeout_s > 0 ? o->timeout_s : 60.0;
    ld->held = -1;
    ld->nsteps = hg_epoch_steps(ep);
    /* a segmented plan holds its last segment's steps only */
    ld->next_step = first_step < hg_epoch_first_step(ep) ? hg_epoch_first_step(ep)
                                                          : first_step;

    /* field kinds and dtypes: the dataset's (private accessors) */
    ld->nfields = hg__dataset_nfields(ds);
    for (int f = 0; f < ld->nfields; f++) {
        hg__dataset_field(ds, f, &ld->kind[f], &ld->dtype[f]);
        ld->item[f] = hg_dataset_item_shape(ds, f);
        ld->item_elems[f] = hg_shape_numel(&ld->item[f]);
    }
    /* the largest batch of this rank over the steps we will run */
    for (int64_t st = ld->next_step; st < ld->nsteps; st++) {
        int64_t b;
        const int64_t *idx = hg_epoch_batch(ep, ld->rank, st, &b);
        if (b > ld->max_b)
            ld->max_b = b;
        for (int f = 0; f < ld->nfields; f++) {
            if (ld->kind[f] != HG_FIELD_SEQ)
                continue;
            const int32_t *lens = hg_dataset_lengths(ds, f);
            for (int64_t i = 0; i < b; i++)
                if (lens[idx[i]] > ld->max_l[f])
                    ld->max_l[f] = lens[idx[i]];
        }
    }
    ld->threaded = o->prefetch > 0;
    ld->nslot = ld->threaded ? o->prefetch + 1 : 1;
    ld->slot = calloc((size_t)ld->nslot, sizeof(*ld->slot));
    int rc = ld->slot ? 0 : -1;
    for (int k = 0; rc == 0 && k < ld->nslot; k++) {
        for (int f = 0; f < ld->nfields; f++) {
            size_t esz = hg_dtype_size(ld->dtype[f]);
            size_t per = ld->kind[f] == HG_FIELD_SEQ ? (size_t)ld->max_l[f]
                                                     : (size_t)ld->item_elems[f];
            /* +1: never a zero-byte malloc */
            ld->slot[k].data[f] = malloc((size_t)ld->max_b * per * esz + 1);
            if (!ld->slot[k].data[f])
                rc = -1;
            if (ld->kind[f] == HG_FIELD_SEQ) {
                ld->slot[k].len[f] = malloc((size_t)ld->max_b * sizeof(int32_t) + 1);
                if (!ld->slot[k].len[f])
                    rc = -1;
            }
        }
    }
    if (rc) {
        loader_free(ld);
        return hg_kerr(err, errlen, "loader rank %d: out of memory for batch buffers",
                       o->rank);
    }
    if (ld->threaded && pthread_create(&ld->thread, NULL, producer, ld) != 0) {
        loader_free(ld);
        return hg_kerr(err, errlen, "loader rank %d: cannot start the prefetch thread",
                       o->rank);
    }
    *out = ld;
    return 0;
}

static void to_batch(const struct hg_loader *ld, struct slot *s, struct hg_batch *b)
{
    memset(b, 0, sizeof(*b));
    b->size = s->size;
    b->step = s->step;
    b->tokens = s->tokens;
    b->ids = s->ids;
    b->ds = ld->ds;
    for (int f = 0; f < ld->nfields; f++) {
        b->field[f].data = s->data[f];
        b->field[f].dtype = ld->dtype[f];
        b->field[f].shape = s->shape[f];
        b->lengths[f] = ld->kind[f] == HG_FIELD_SEQ ? s->len[f] : NULL;
    }
}

int hg_loader_next(struct hg_loader *ld, struct hg_batch *b, char *err,
                   size_t errlen)
{
    if (ld->failed)
        return hg_kerr(err, errlen, "loader rank %d: failed earlier", ld->rank);
    if (!ld->threaded) {
        if (ld->next_step >= ld->nsteps)
            return 0;
        struct slot *s = &ld->slot[0];
        if (fill_slot(ld, s, ld->next_step, err, errlen)) {
            ld->failed = 1;
            return -1;
        }
        ld->next_step++;
        to_batch(ld, s, b);
        return 1;
    }
    pthread_mutex_lock(&ld->mu);
    if (ld->held >= 0) { /* the previous batch is given back */
        ld->slot[ld->held].state = SLOT_EMPTY;
        ld->held = -1;
        pthread_cond_broadcast(&ld->cv_free);
    }
    if (ld->next_step >= ld->nsteps) {
        pthread_mutex_unlock(&ld->mu);
        return 0;
    }
    int k = (int)(ld->next_step % ld->nslot);
    struct slot *s = &ld->slot[k];
    struct timespec ts;
    hg_deadline_ts(&ts, ld->timeout_s);
    int rc = 0;
    while (s->state == SLOT_EMPTY && rc == 0)
        rc = pthread_cond_timedwait(&ld->cv_ready, &ld->mu, &ts);
    if (s->state == SLOT_EMPTY) {
        pthread_mutex_unlock(&ld->mu);
        ld->failed = 1;
        return hg_kerr(err, errlen, "loader rank %d: waited %g s for step %lld",
                       ld->rank, ld->timeout_s, (long long)ld->next_step);
    }
    if (s->state == SLOT_ERROR) {
        hg_kerr(err, errlen, "%s", s->err);
        pthread_mutex_unlock(&ld->mu);
        ld->failed = 1;
        return -1;
    }
    HG_CHECK(s->step == ld->next_step);
    ld->held = k;
    ld->next_step++;
    pthread_mutex_unlock(&ld->mu);
    to_batch(ld, s, b);
    return 1;
}

void hg_loader_close(struct hg_loader *ld)
{
    if (!ld)
        return;
    if (ld->threaded) {
        pthread_mutex_lock(&ld->mu);
        ld->stop = 1;
        pthread_cond_broadcast(&ld->cv_free);
        pthread_mutex_unlock(&ld->mu);
        pthread_join(ld->thread, NULL);
    }
    loader_free(ld);
}

const char *hg_batch_where(const struct hg_batch *b, int64_t i, char *out, size_t len)
{
    out[0] = 0;
    if (!b->ds || !b->ids || i < 0 || i >= b->size ||
        b->ids[i] < 0 || b->ids[i] >= hg_dataset_size(b->ds))
        return out;
    int shard;
    int64_t row;
    hg_dataset_locate(b->ds, b->ids[i], &shard, &row);
    snprintf(out, len, "; sample %lld is row %lld of %s", (long long)i, (long long)row,
             hg_dataset_shard_path(b->ds, shard));
    return out;
}
