/* exec.c - runs an ordered list of nodes on one device (the CPU, or one
 * GPU through the op table's .cuda column) with the memory plan: one
 * allocation at creation, none per step. */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graph/graph-impl.h"
#ifdef HG_HAVE_CUDA
#include "kernels/cuda/hg_cuda.h"
#endif

struct hg_exec {
    struct hg_graph *g;
    int *order;           /* [n] node ids */
    int n;
    char *mem;            /* one block: params|grads|state|inputs|consts|acts|ws */
    size_t *off;          /* [nt] byte offset of each tensor in mem */
    int *view;            /* [nt] the tensor whose bytes t views, -1 (memplan) */
    struct hg_mem_stats st;
    size_t grad_base, state_base, ws_base;
    int64_t sym[HG_MAX_SYMS]; /* symbol values of the resolved shapes */
    size_t *bytes;        /* [nt] planned bytes of each tensor */
    int resolved;
    double *prof;         /* [n] seconds per position, NULL when off */
    unsigned long long launches; /* on a GPU, with prof: launches since it began */
    double *trace;        /* [n][2] start, end (hg_now) of each position's latest
                             run, NULL when off */
    /* communication nodes, in order position order (hg_exec_set_comm) */
    struct comm_node {
        int pos;          /* its position in the order */
        int ready;        /* last earlier position reading or writing its
                             buffer; -1: none */
        int ahead;        /* no output: may start before its position */
        int need;         /* with an output: the first later position reading
                             it (n: none); without: pos */
    } *cm;                /* [ncm] */
    int ncm;
    int *cm_at;           /* [n] index into cm of each position, -1 */
    int cm_next, cm_wait; /* this pass: cm[0, cm_next) started, [0, cm_wait) waited
                             or pending */
    int defer;            /* hg_exec_set_comm_defer */
    int *pend, npend;     /* [ncm] started comm nodes whose waits wait for their
                             need position */
    struct hg_exec_comm_ops cops; /* NULL members: none installed */
    void *carg;
    int early;            /* hg_exec_set_early_comm */
    int cur;              /* position being run, -1 */
    /* hg_exec_set_slowdown */
    double slow;          /* the factor, > 1; 0: off */
    double debt;          /* seconds still to sleep (< 0: overslept, the next
                             ops pay it back) */
    double seg_t0;        /* on a GPU: when the kernels since the last comm
                             node began */
    /* on a GPU: mem is the pinned host mirror, dmem the plan on the device */
    int device;           /* -1: CPU */
    char *dmem;
    struct hg_cuda_ctx *cu;
    size_t in_base, in_end; /* inputs and consts: uploaded by runs */
    unsigned char *result;  /* [nt] kept or read by no node: downloaded */
    float *stash;           /* [grad floats + carry floats] hg_exec_grad_op's,
                               where grads live: the grad block's sum, then
                               each carried tensor's */
    int *carry, ncarry;     /* [ncarry] hg_exec_grad_carry's tensors */
    size_t carry_floats;    /* their floats, together */
    int lowp;               /* enum hg_lowp */
    int *fuse;              /* [n] update nodes run as one from this position */
    int64_t *fuse_numel;    /* [n] the elements of each operand's span from it */
};

void hg_exec_set_comm(struct hg_exec *ex, const struct hg_exec_comm_ops *ops, void *arg)
{
    memset(&ex->cops, 0, sizeof ex->cops);
    if (ops)
        ex->cops = *ops;
    ex->carg = arg;
}

void hg_exec_set_early_comm(struct hg_exec *ex, int on) { ex->early = on != 0; }

int hg_exec_pos(const struct hg_exec *ex) { return ex->cur; }

void hg_exec_set_slowdown(struct hg_exec *ex, double f)
{
    ex->slow = f > 1 ? f : 0;
    ex->debt = 0;
}

/* Sleeps the slowdown debt off (nanosleep: no core is taken from a rank
 * beside this one); what the clock says was slept is paid, so an
 * oversleep is made up by the next ops. */
static void slow_pay(struct hg_exec *ex)
{
    if (ex->debt <= 0)
        return;
    double t0 = hg_now();
    struct timespec ts = {.tv_sec = (time_t)ex->debt,
                          .tv_nsec = (long)((ex->debt - floor(ex->debt)) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
    ex->debt -= hg_now() - t0;
}

/* Before a comm node starts and at a run's end: everything computed so far
 * is slowed first, as on a slow device.  On a GPU (kernels are
 * asynchronous, per-op times are launch times) the stretch of kernels
 * since the last comm node is waited for and charged as a whole. */
static int slow_settle(struct hg_exec *ex, char *err, size_t errlen)
{
#ifdef HG_HAVE_CUDA
    if (ex->device >= 0) {
        if (hg_cuda_sync(ex->cu, err, errlen) != 0)
            return -1;
        ex->debt += (ex->slow - 1) * (hg_now() - ex->seg_t0);
    }
#else
    (void)err, (void)errlen;
#endif
    slow_pay(ex);
    ex->seg_t0 = hg_now();
    return 0;
}

int hg_exec_comm_ready(const struct hg_exec *ex, int pos)
{
    HG_CHECK(pos >= 0 && pos < ex->n && ex->cm_at[pos] >= 0);
    return ex->cm[ex->cm_at[pos]].ready;
}

/* [lo, hi) bytes of a comm node's buffer in the plan */
static void comm_range(const struct hg_exec *ex, const struct hg_node_info *nd,
                       size_t *lo, size_t *hi, size_t *cur)
{
    const struct hg_graph *g = ex->g;
    /* SEND's input, RECV's and RESHARD's output */
    int t = nd->n_in == 0 || nd->op == HG_OP_RESHARD ? nd->out : nd->in[0];
    *lo = ex->off[t];
    if (nd->n_in == 2) {
        *hi = ex->off[nd->in[1]] + ex->bytes[nd->in[1]];
        *cur = *hi - *lo;
    } else {
        *hi = *lo + ex->bytes[t];
        *cur = (size_t)hg_shape_numel(&g->t[t].info.shape) * hg_dtype_size(g->t[t].info.dtype);
    }
}

void hg_exec_comm_buf(struct hg_exec *ex, int node, struct hg_exec_buf *b)
{
    HG_CHECK(node >= 0 && node < ex->g->nn);
    const struct hg_node_info *nd = &ex->g->n[node];
    HG_CHECK(hg_op_table[nd->op].flags & HG_OPF_COMM);
    size_t lo, hi;
    comm_range(ex, nd, &lo, &hi, &b->bytes);
    b->host = ex->mem + lo;
    b->dev = ex->dmem ? ex->dmem + lo : NULL;
}

void hg_exec_comm_in(struct hg_exec *ex, int node, struct hg_exec_buf *b)
{
    HG_CHECK(node >= 0 && node < ex->g->nn);
    const struct hg_node_info *nd = &ex->g->n[node];
    HG_CHECK(nd->op == HG_OP_RESHARD);
    int t = nd->in[0];
    b->host = ex->mem + ex->off[t];
    b->dev = ex->dmem ? ex->dmem + ex->off[t] : NULL;
    b->bytes = (size_t)hg_shape_numel(&ex->g->t[t].info.shape) * hg_dtype_size(HG_F32);
}

int hg_exec_comm_copy(struct hg_exec *ex, int node, int to_host, char *err, size_t errlen)
{
    if (ex->device < 0)
        return 0;
#ifdef HG_HAVE_CUDA
    struct hg_exec_buf b;
    hg_exec_comm_buf(ex, node, &b);
    if (!to_host)
        return hg_cuda_h2d(ex->cu, b.dev, b.host, b.bytes, err, errlen);
    if (hg_cuda_d2h(ex->cu, b.host, b.dev, b.bytes, err, errlen) != 0)
        return -1;
    return hg_cuda_sync(ex->cu, err, errlen);
#else
    (void)node, (void)to_host, (void)err, (void)errlen;
    return 0;
#endif
}

/* At plan time: each comm node's buffer is checked against the layout
 * (a span is count floats of one block) and gets its ready position. */
static int plan_comm(struct hg_exec *ex, char *err, size_t errlen)
{
    const struct hg_graph *g = ex->g;
    ex->cm_at = malloc((size_t)(ex->n ? ex->n : 1) * sizeof *ex->cm_at);
    ex->cm = malloc((size_t)(ex->n ? ex->n : 1) * sizeof *ex->cm);
    ex->pend = malloc((size_t)(ex->n ? ex->n : 1) * sizeof *ex->pend);
    unsigned char *mark = calloc((size_t)(g->nt ? g->nt : 1), 1); /* [nt] in the buffer */
    int rc = 0;
    if (!ex->cm_at || !ex->cm || !ex->pend || !mark) {
        free(mark);
        return hg_kerr(err, errlen, "out of memory");
    }
    for (int i = 0; i < ex->n && rc == 0; i++) {
        const struct hg_node_info *nd = &g->n[ex->order[i]];
        ex->cm_at[i] = -1;
        if (!(hg_op_table[nd->op].flags & HG_OPF_COMM))
            continue;
        size_t lo, hi, cur;
        comm_range(ex, nd, &lo, &hi, &cur);
        memset(mark, 0, (size_t)g->nt);
        if (nd->n_in == 2) {
            const struct hg_tensor_info *a = &g->t[nd->in[0]].info, *b = &g->t[nd->in[1]].info;
            int block = a->kind == HG_T_PARAM || a->kind == HG_T_GRAD || a->kind == HG_T_STATE;
            if (!block || b->kind != a->kind || ex->off[nd->in[1]] < lo ||
                hi - lo != (size_t)nd->attr.comm.count * sizeof(float)) {
                rc = hg_kerr(err, errlen, "node %d (%s): %s..%s is not a span of %lld "
                             "floats of one block in this plan", ex->order[i],
                             hg_op_table[nd->op].name, a->name, b->name,
                             (long long)nd->attr.comm.count);
                break;
            }
            for (int t = 0; t < g->nt; t++)
                mark[t] = g->t[t].info.kind == a->kind && ex->off[t] != SIZE_MAX &&
                          ex->bytes[t] > 0 && ex->off[t] >= lo && ex->off[t] < hi;
        } else {
            mark[nd->n_in == 0 ? nd->out : nd->in[0]] = 1;
            if (nd->op == HG_OP_RESHARD)
                mark[nd->out] = 1;
        }
        struct comm_node *c = &ex->cm[ex->ncm];
        *c = (struct comm_node){.pos = i, .ready = -1, .ahead = nd->out < 0,
                                .need = nd->out < 0 ? i : ex->n};
        for (int q = i + 1; q < ex->n && c->need == ex->n; q++) {
            const struct hg_node_info *o = &g->n[ex->order[q]];
            for (int k = 0; k < o->n_in; k++)
                if (o->in[k] == nd->out)
                    c->need = q;
        }
        for (int q = 0; q < i; q++) {
            const struct hg_node_info *o = &g->n[ex->order[q]];
            int touch = o->out >= 0 && mark[o->out];
            for (int k = 0; k < o->n_in; k++)
                touch |= mark[o->in[k]];
            if (touch)
                c->ready = q;
        }
        ex->cm_at[i] = ex->ncm++;
    }
    free(mark);
    return rc;
}

static int comm_call(struct hg_exec *ex, int k, int start, char *err, size_t errlen)
{
    int node = ex->order[ex->cm[k].pos];
    int (*fn)(void *, struct hg_exec *, int, char *, size_t) =
        start ? ex->cops.start : ex->cops.wait;
    const char *op = hg_op_table[ex->g->n[node].op].name;
    if (!fn)
        return hg_kerr(err, errlen, "node %d (%s): a communication op, and no comm "
                       "callbacks are installed (hg_exec_set_comm)", node, op);
    char e[384] = "";
    if (ex->trace && start)
        ex->trace[2 * ex->cm[k].pos] = hg_now();
    if (fn(ex->carg, ex, node, e, sizeof e) != 0)
        return hg_kerr(err, errlen, "node %d (%s): %s", node, op, e);
    if (ex->trace && !start)
        ex->trace[2 * ex->cm[k].pos + 1] = hg_now();
    return 0;
}

/* Deferred comm nodes (hg_exec_set_comm_defer) whose need position is at
 * or before i: waited now (INT_MAX: all of them). */
static int comm_pending(struct hg_exec *ex, int i, char *err, size_t errlen)
{
    int kept = 0, rc = 0;
    for (int j = 0; j < ex->npend; j++) {
        int k = ex->pend[j];
        if (rc != 0 || ex->cm[k].need > i) {
            ex->pend[kept++] = k;
            continue;
        }
        /* the compute owed so far first: a slowed device reaches the wait later */
        if (ex->slow && (rc = slow_settle(ex, err, errlen)) != 0)
            continue;
        rc = comm_call(ex, k, 0, err, errlen);
        if (ex->slow)
            ex->seg_t0 = hg_now();
    }
    ex->npend = kept;
    return rc;
}

/* Early start after position i (i = begin - 1 at a run's start): the next
 * comm nodes in order whose buffers are final by then. */
static int comm_early(struct hg_exec *ex, int i, char *err, size_t errlen)
{
    while (ex->cm_next < ex->ncm) {
        const struct comm_node *c = &ex->cm[ex->cm_next];
        if (!c->ahead || c->ready > i || c->pos <= i)
            return 0;
        if (ex->slow && slow_settle(ex, err, errlen) != 0)
            return -1;
        if (comm_call(ex, ex->cm_next, 1, err, errlen) != 0)
            return -1;
        if (ex->slow) /* the comm call is not compute */
            ex->seg_t0 = hg_now();
        ex->cm_next++;
    }
    return 0;
}

/* The comm node at position i of a run that ends at end. */
static int comm_node(struct hg_exec *ex, int i, int end, char *err, size_t errlen)
{
    int k = ex->cm_at[i];
    if (k < ex->cm_wait) {
        /* a new pass before the last one's end (a run stopped half-way) */
        if (ex->cm_next > ex->cm_wait)
            return hg_kerr(err, errlen, "node %d (%s): comm node %d was started and "
                           "never waited", ex->order[i], hg_op_table[ex->g->n[ex->order[i]].op].name,
                           ex->order[ex->cm[ex->cm_wait].pos]);
        ex->cm_next = ex->cm_wait = 0;
        ex->npend = 0;
    }
    if (k != ex->cm_wait)
        return hg_kerr(err, errlen, "node %d: comm node %d comes first in this pass",
                       ex->order[i], ex->order[ex->cm[ex->cm_wait].pos]);
    for (; ex->cm_next <= k; ex->cm_next++)
        if (comm_call(ex, ex->cm_next, 1, err, errlen) != 0)
            return -1;
    /* the no-output comm nodes right behind it in this run start now, so
     * that their transfers queue behind this one's */
    for (int j = k + 1; j == ex->cm_next && j < ex->ncm; j++) {
        const struct comm_node *c = &ex->cm[j];
        if (c->pos >= end || c->pos != i + (j - k) || !c->ahead || c->ready >= i)
            break;
        if (comm_call(ex, j, 1, err, errlen) != 0)
            return -1;
        ex->cm_next++;
    }
    if (ex->defer && ex->cm[k].need > i + 1)
        ex->pend[ex->npend++] = k; /* waited just before its first reader */
    else if (comm_call(ex, k, 0, err, errlen) != 0)
        return -1;
    ex->cm_wait = k + 1;
    if (ex->cm_wait == ex->ncm)
        ex->cm_next = ex->cm_wait = 0; /* the pass is over */
    return 0;
}

void *hg_exec_stream(struct hg_exec *ex)
{
#ifdef HG_HAVE_CUDA
    if (ex->device >= 0)
        return hg_cuda_ctx_stream(ex->cu);
#endif
    (void)ex;
    return NULL;
}

void hg_exec_profile(struct hg_exec *ex, int on)
{
    free(ex->prof);
    ex->prof = on ? calloc((size_t)(ex->n ? ex->n : 1), sizeof(double)) : NULL;
    ex->launches = 0;
}

long long hg_exec_launches(const struct hg_exec *ex)
{
    return ex->device >= 0 && ex->prof ? (long long)ex->launches : -1;
}

const double *hg_exec_profile_times(const struct hg_exec *ex)
{
    return ex->prof;
}

void hg_exec_set_comm_defer(struct hg_exec *ex, int on) { ex->defer = on != 0; }

void hg_exec_trace(struct hg_exec *ex, int on)
{
    free(ex->trace);
    ex->trace = on ? calloc(2 * (size_t)(ex->n ? ex->n : 1), sizeof(double)) : NULL;
}

const double *hg_exec_trace_times(const struct hg_exec *ex)
{
    return ex->trace;
}

int hg_exec_order_at(const struct hg_exec *ex, int i)
{
    HG_CHECK(i >= 0 && i < ex->n);
    return ex->order[i];
}

static size_t shape_bytes(const struct hg_graph *g, int t)
{
    const struct hg_tensor_info *ti = &g->t[t].info;
    return (size_t)hg_shape_numel(&ti->shape) * hg_dtype_size(ti->dtype);
}

/* Largest workspace any node of the order asks for, at the current shapes. */
static size_t max_workspace(const struct hg_graph *g, const int *order, int n,
                            int cuda)
{
    size_t ws = 0;
    int nthreads = hg_kernels_get_threads();
    for (int i = 0; i < n; i++) {
        const struct hg_node_info *nd = &g->n[order[i]];
        const struct hg_op_info *oi = &hg_op_table[nd->op];
        if (!oi->workspace && !(cuda && oi->cuda_workspace))
            continue;
        struct hg_shape ins[HG_MAX_INPUTS];
        for (int k = 0; k < nd->n_in; k++)
            ins[k] = g->t[nd->in[k]].info.shape;
        size_t w = oi->workspace ? oi->workspace(ins, nd->n_in, &g->t[nd->out].info.shape,
                                                 &nd->attr, nthreads) : 0;
        if (w > ws)
            ws = w;
        if (cuda && oi->cuda_workspace) {
            w = oi->cuda_workspace(ins, nd->n_in, &g->t[nd->out].info.shape,
                                   &nd->attr, nthreads);
            if (w > ws)
                ws = w;
        }
    }
    return ws;
}

/* The optimizer's nodes, one per parameter, read params, grads and state
 * that lie one after another in their blocks (state slot by slot).  A run
 * of such nodes with the same op and attributes is one elementwise update
 * over the runs' spans: one launch (one parallel region on the CPU)
 * instead of one per parameter, the same arithmetic per element.
 * fuse[i]: how many nodes from position i run as one (1: alone). */
static int fusable(const struct hg_graph *g, const struct hg_node_info *a,
                   const struct hg_node_info *b, const size_t *off, const size_t *bytes)
{
    if (b->op != a->op || b->n_in != a->n_in || b->out >= 0 || a->out >= 0 ||
        memcmp(&a->attr, &b->attr, sizeof a->attr) != 0)
        return 0;
    for (int k = 0; k < a->n_in; k++) {
        const struct hg_tensor_info *ta = &g->t[a->in[k]].info;
        if (ta->dtype != HG_F32 || g->t[b->in[k]].info.dtype != HG_F32 ||
            off[a->in[k]] == SIZE_MAX || off[a->in[k]] + bytes[a->in[k]] != off[b->in[k]])
            return 0;
    }
    return 1;
}

static int fuse_updates(struct hg_exec *ex, char *err, size_t errlen)
{
    const struct hg_graph *g = ex->g;
    ex->fuse = malloc((size_t)(ex->n ? ex->n : 1) * sizeof(int));
    ex->fuse_numel = malloc((size_t)(ex->n ? ex->n : 1) * sizeof(int64_t));
    if (!ex->fuse || !ex->fuse_numel)
        return hg_kerr(err, errlen, "out of memory");
    for (int i = ex->n - 1; i >= 0; i--) {
        const struct hg_node_info *a = &g->n[ex->order[i]];
        const int upd = a->op == HG_OP_SGD_STEP || a->op == HG_OP_ADAMW_STEP ||
                        a->op == HG_OP_ADADELTA_STEP;
        ex->fuse[i] = 1;
        ex->fuse_numel[i] = a->n_in > 0 ? (int64_t)(ex->bytes[a->in[0]] / sizeof(float)) : 0;
        if (upd && i + 1 < ex->n && ex->cm_at[i] < 0 && ex->cm_at[i + 1] < 0 &&
            fusable(g, a, &g->n[ex->order[i + 1]], ex->off, ex->bytes)) {
            ex->fuse[i] = ex->fuse[i + 1] + 1;
            ex->fuse_numel[i] += ex->fuse_numel[i + 1];
        }
    }
    return 0;
}

struct hg_exec *hg_exec_new(struct hg_graph *g, const int *order, int n,
                            char *err, size_t errlen)
{
    return hg_exec_new_dev(g, order, n, -1, err, errlen);
}

/* Each view at its place in its root's bytes for the resolved shapes (a
 * slice's start moves with the lengths after its axis), in order: a view
 * of a view follows its input. */
static void place_views(struct hg_exec *ex)
{
    const struct hg_graph *g = ex->g;
    for (int i = 0; i < ex->n; i++) {
        const struct hg_node_info *nd = &g->n[ex->order[i]];
        if (nd->out >= 0 && ex->view[nd->out] >= 0)
            ex->off[nd->out] = ex->off[nd->in[0]] + hg__view_at(g, nd);
    }
}

/* The executor and its per-tensor arrays (order, offsets, bytes, views);
 * on a GPU its CUDA context.  NULL with err filled. */
static struct hg_exec *exec_alloc(struct hg_graph *g, const int *order, int n, int device,
                                  char *err, size_t errlen)
{
#ifndef HG_HAVE_CUDA
    if (device >= 0) {
        hg_kerr(err, errlen, "cuda:%d: this build has no CUDA backend "
                "(configure --with-cuda)", device);
        return NULL;
    }
#endif
    struct hg_exec *ex = calloc(1, sizeof(*ex));
    if (!ex) {
        hg_kerr(err, errlen, "out of memory");
        return NULL;
    }
    ex->device = -1;
#ifdef HG_HAVE_CUDA
    if (device >= 0) {
        ex->cu = hg_cuda_ctx_new(device, err, errlen);
        if (!ex->cu) {
            free(ex);
            return NULL;
        }
        ex->device = device;
    }
#endif
    ex->g = g;
    ex->n = n;
    ex->order = malloc((size_t)(n ? n : 1) * sizeof(int));
    ex->off = malloc((size_t)g->nt * sizeof(size_t));
    ex->bytes = calloc((size_t)(g->nt ? g->nt : 1), sizeof(size_t));
    ex->view = malloc((size_t)(g->nt ? g->nt : 1) * sizeof(int));
    if (!ex->order || !ex->off || !ex->bytes || !ex->view) {
        hg_exec_free(ex);
        hg_kerr(err, errlen, "out of memory");
        return NULL;
    }
    memcpy(ex->order, order, (size_t)n * sizeof(int));
    return ex;
}

/* On a GPU: which tensors a run downloads (result[t]): those kept, and
 * those no node of the order reads. */
static int mark_results(struct hg_exec *ex, char *err, size_t errlen)
{
    const struct hg_graph *g = ex->g;
    ex->result = calloc((size_t)(g->nt ? g->nt : 1), 1);
    if (!ex->result)
        return hg_kerr(err, errlen, "out of memory");
    for (int t = 0; t < g->nt; t++)
        ex->result[t] = 1;
    for (int i = 0; i < ex->n; i++) {
        const struct hg_node_info *nd = &g->n[ex->order[i]];
        for (int k = 0; k < nd->n_in; k++)
            ex->result[nd->in[k]] = 0;
    }
    for (int t = 0; t < g->nt; t++)
        if (g->t[t].keep)
            ex->result[t] = 1;
    return 0;
}

/* Plan for the largest size each tensor takes at any admissible symbol
 * values: the maxima, or the corners of the token cap.  ex->bytes gets
 * each tensor's largest bytes, *ws the largest workspace; the graph ends
 * resolved at corner[0]. */
static int size_at_corners(struct hg_exec *ex, int64_t corner[HG_MAX_SYMS + 1][HG_MAX_SYMS],
                           size_t *ws, char *err, size_t errlen)
{
    struct hg_graph *g = ex->g;
    int nc = hg_graph_token_corners(g, corner, HG_MAX_SYMS + 1);
    *ws = 0;
    /* the corners round lengths up, a hair outside the cap: resolve them
     * without its check */
    int cap_batch = g->cap_batch;
    g->cap_batch = -1;
    for (int c = nc - 1; c >= 0; c--) { /* ends resolved at corner 0 */
        if (hg_graph_resolve(g, corner[c], err, errlen) != 0) {
            g->cap_batch = cap_batch;
            return -1;
        }
        for (int t = 0; t < g->nt; t++) {
            size_t b = shape_bytes(g, t);
            ex->bytes[t] = b > ex->bytes[t] ? b : ex->bytes[t];
        }
        size_t w = max_workspace(g, ex->order, ex->n, ex->device >= 0);
        *ws = w > *ws ? w : *ws;
    }
    g->cap_batch = cap_batch;
    return 0;
}

/* Params, grads and state are packed without padding so that each block
 * is one flat float array (what allreduce and checkpoints want); grads
 * follow the param order exactly.  Returns the end of the state. */
static size_t layout_params(struct hg_exec *ex)
{
    const struct hg_graph *g = ex->g;
    size_t pos = 0;
    for (int i = 0; i < g->np; i++) {
        ex->off[g->params[i]] = pos;
        pos += ex->bytes[g->params[i]];
    }
    ex->st.param_bytes = pos;
    ex->grad_base = pos = hg__align(pos);
    for (int i = 0; i < g->np; i++) {
        int gt = g->t[g->params[i]].grad;
        if (gt >= 0) {
            ex->off[gt] = pos;
            pos += ex->bytes[gt];
        }
    }
    ex->st.grad_bytes = pos - ex->grad_base;
    /* Optimizer state slot by slot (every exp_avg in the graph's node
     * order, which is the parameter order, then every exp_avg_sq), so a run
     * of update nodes reads each operand as one flat span, like the params
     * and grads (fuse_updates).  The graph's nodes, not this plan's: a plan
     * that leaves some update nodes out (a parameter server's clients) has
     * the same layout as every other rank's, so state blocks can be
     * broadcast whole. */
    ex->state_base = pos = hg__align(pos);
    for (int t = 0; t < g->nt; t++)
        if (g->t[t].info.kind == HG_T_STATE)
            ex->off[t] = SIZE_MAX;
    for (int k = 0; k < HG_MAX_INPUTS; k++)
        for (int i = 0; i < g->nn; i++) {
            const struct hg_node_info *nd = &g->n[i];
            if (k >= nd->n_in)
                continue;
            int t = nd->in[k];
            if (g->t[t].info.kind == HG_T_STATE && ex->off[t] == SIZE_MAX) {
                ex->off[t] = pos;
                pos += ex->bytes[t];
            }
        }
    for (int t = 0; t < g->nt; t++) /* state no node reads */
        if (g->t[t].info.kind == HG_T_STATE && ex->off[t] == SIZE_MAX) {
            ex->off[t] = pos;
            pos += ex->bytes[t];
        }
    ex->st.state_bytes = pos - ex->state_base;
    return pos;
}

/* After the state: inputs, consts, the activations' arena (memplan's
 * offsets moved to it) and the workspace.  Returns the block's size. */
static size_t layout_rest(struct hg_exec *ex, size_t pos, size_t act_arena, size_t ws)
{
    const struct hg_graph *g = ex->g;
    pos = hg__align(pos);
    size_t in_base = pos;
    for (int t = 0; t < g->nt; t++)
        if (g->t[t].info.kind == HG_T_INPUT) {
            ex->off[t] = pos;
            pos = hg__align(pos + ex->bytes[t]);
        }
    ex->st.input_bytes = pos - in_base;
    size_t const_base = pos;
    for (int t = 0; t < g->nt; t++)
        if (g->t[t].info.kind == HG_T_CONST) {
            ex->off[t] = pos;
            pos = hg__align(pos + ex->bytes[t]);
        }
    ex->st.const_bytes = pos - const_base;
    ex->in_base = in_base;
    ex->in_end = pos;
    size_t act_base = pos;
    for (int t = 0; t < g->nt; t++)
        if (g->t[t].info.kind == HG_T_ACT && ex->off[t] != SIZE_MAX)
            ex->off[t] += act_base;
    ex->st.act_bytes = act_arena;
    pos = hg__align(pos + act_arena);
    ex->ws_base = pos;
    ex->st.ws_bytes = ws;
    pos += hg__align(ex->st.ws_bytes);
    ex->st.total = pos;
    return pos;
}

/* The one block of pos bytes (on a GPU: the pinned host mirror and the
 * device's copy), zeroed, the constants filled in. */
static int alloc_block(struct hg_exec *ex, size_t pos, char *err, size_t errlen)
{
    const struct hg_graph *g = ex->g;
#ifdef HG_HAVE_CUDA
    if (ex->device >= 0) {
        ex->mem = hg_cuda_host_alloc(pos, err, errlen);
        ex->dmem = ex->mem ? hg_cuda_malloc(ex->cu, pos, err, errlen) : NULL;
        if (!ex->dmem)
            return -1;
    } else
#endif
        ex->mem = aligned_alloc(HG_ALIGN, pos ? pos : HG_ALIGN);
    if (!ex->mem)
        return hg_kerr(err, errlen, "cannot allocate %zu bytes for the plan", pos);
    memset(ex->mem, 0, pos);
    for (int t = 0; t < g->nt; t++)
        if (g->t[t].info.kind == HG_T_CONST) {
            float *p = (float *)(ex->mem + ex->off[t]);
            int64_t m = hg_shape_numel(&g->t[t].info.shape);
            for (int64_t i = 0; i < m; i++)
                p[i] = g->t[t].const_value;
        }
    return 0;
}

struct hg_exec *hg_exec_new_dev(struct hg_graph *g, const int *order, int n,
                                int device, char *err, size_t errlen)
{
    if (hg_kernels_init(err, errlen) != 0)
        return NULL;
    struct hg_exec *ex = exec_alloc(g, order, n, device, err, errlen);
    if (!ex)
        return NULL;
    if (ex->device >= 0 && mark_results(ex, err, errlen) != 0) {
        hg_exec_free(ex);
        return NULL;
    }
    int64_t corner[HG_MAX_SYMS + 1][HG_MAX_SYMS];
    size_t ws;
    if (size_at_corners(ex, corner, &ws, err, errlen) != 0) {
        hg_exec_free(ex);
        return NULL;
    }
    size_t act_arena;
    hg__memplan(g, order, n, ex->bytes, ex->off, ex->view, &act_arena, &ex->st.act_naive);
    size_t pos = layout_rest(ex, layout_params(ex), act_arena, ws);
    if (alloc_block(ex, pos, err, errlen) != 0) {
        hg_exec_free(ex);
        return NULL;
    }
    for (int k = 0; k < g->nsym; k++)
        ex->sym[k] = corner[0][k];
    place_views(ex);
    ex->resolved = 1;
    ex->cur = -1;
    if (plan_comm(ex, err, errlen) != 0 || fuse_updates(ex, err, errlen) != 0) {
        hg_exec_free(ex);
        return NULL;
    }
    /* the device starts as a copy of the host: zeros and the constants */
    if (hg_exec_upload(ex, HG_R_ALL, err, errlen) != 0) {
        hg_exec_free(ex);
        return NULL;
    }
    return ex;
}

int hg_exec_device(const struct hg_exec *ex) { return ex->device; }

#ifdef HG_HAVE_CUDA
/* [lo, hi) byte ranges of the regions, in the order of the plan */
static int region_range(const struct hg_exec *ex, unsigned r, size_t *lo, size_t *hi)
{
    switch (r) {
    case HG_R_PARAMS: *lo = 0; *hi = ex->st.param_bytes; return 1;
    case HG_R_GRADS: *lo = ex->grad_base; *hi = ex->grad_base + ex->st.grad_bytes; return 1;
    case HG_R_STATE: *lo = ex->state_base; *hi = ex->state_base + ex->st.state_bytes; return 1;
    case HG_R_INPUTS: *lo = ex->in_base; *hi = ex->in_end; return 1; /* and consts */
    default: return 0;
    }
}
#endif

int hg_exec_upload(struct hg_exec *ex, unsigned regions, char *err, size_t errlen)
{
    if (!ex || ex->device < 0) /* no plan (a checkpoint read into a bare graph) or a CPU one */
        return 0;
#ifdef HG_HAVE_CUDA
    for (unsigned r = 1; r <= HG_R_INPUTS; r <<= 1) {
        size_t lo, hi;
        if ((regions & r) && region_range(ex, r, &lo, &hi) &&
            hg_cuda_h2d(ex->cu, ex->dmem + lo, ex->mem + lo, hi - lo, err, errlen) != 0)
            return -1;
    }
#else
    (void)regions, (void)err, (void)errlen;
#endif
    return 0;
}

int hg_exec_download(struct hg_exec *ex, unsigned regions, char *err, size_t errlen)
{
    if (!ex || ex->device < 0)
        return 0;
#ifdef HG_HAVE_CUDA
    for (unsigned r = 1; r <= HG_R_INPUTS; r <<= 1) {
        size_t lo, hi;
        if ((regions & r) && region_range(ex, r, &lo, &hi) &&
            hg_cuda_d2h(ex->cu, ex->mem + lo, ex->dmem + lo, hi - lo, err, errlen) != 0)
            return -1;
    }
    return hg_cuda_sync(ex->cu, err, errlen);
#else
    (void)regions, (void)err, (void)errlen;
    return 0;
#endif
}

/* sum of x[i]^2 in 16 float lanes per block of 4096, blocks added in
 * double: vectorisable, fixed order */
static double sum_squares(const float *x, size_t n)
{
    double s = 0;
    for (size_t b = 0; b < n; b += 4096) {
        size_t e = b + 4096 < n ? b + 4096 : n, i = b;
        float lane[16] = {0};
        for (; i + 16 <= e; i += 16)
            for (int l = 0; l < 16; l++)
                lane[l] += x[i + l] * x[i + l];
        for (int l = 0; l < 16; l++)
            s += lane[l];
        for (; i < e; i++)
            s += (double)x[i] * x[i];
    }
    return s;
}

int hg_exec_grad_sumsq(struct hg_exec *ex, double *out, char *err, size_t errlen)
{
    size_t n = ex->st.grad_bytes / sizeof(float);
#ifdef HG_HAVE_CUDA
    if (ex->device >= 0)
        return hg_cuda_sumsq(ex->cu, (const float *)(ex->dmem + ex->grad_base), n, out,
                             err, errlen);
#endif
    (void)err, (void)errlen;
    *out = sum_squares((const float *)(ex->mem + ex->grad_base), n);
    return 0;
}

int hg_exec_grad_carry(struct hg_exec *ex, int begin, char *err, size_t errlen)
{
    const struct hg_graph *g = ex->g;
    HG_CHECK(begin >= 0 && begin <= ex->n && !ex->stash);
    int *pos = malloc(((size_t)g->nn + 1) * sizeof *pos); /* [nodes] order position, -1 */
    unsigned char *on = calloc((size_t)g->nt + 1, 1);     /* [nt] carried already */
    int *carry = malloc(((size_t)g->nt + 1) * sizeof *carry); /* [<= nt] */
    if (!pos || !on || !carry) {
        free(pos);
        free(on);
        free(carry);
        return hg_kerr(err, errlen, "out of memory");
    }
    for (int v = 0; v < g->nn; v++)
        pos[v] = -1;
    for (int i = 0; i < ex->n; i++)
        pos[ex->order[i]] = i;
    int nc = 0, rc = 0;
    size_t floats = 0;
    for (int i = begin; i < ex->n && rc == 0; i++) {
        const struct hg_node_info *nd = &g->n[ex->order[i]];
        for (int k = 0; k < nd->n_in && rc == 0; k++) {
            int t = nd->in[k];
            const struct hg_tensor_info *ti = &g->t[t].info;
            int pr = ti->producer;
            if (on[t] || ti->kind != HG_T_ACT || pr < 0 || pos[pr] < 0 || pos[pr] >= begin)
                continue;
            /* a sum of runs needs one fixed shape of floats in bytes of
             * its own */
            int sym = 0;
            for (int d = 0; d < ti->decl.ndim; d++)
                sym |= ti->decl.dim[d] < 0;
            if (ti->dtype != HG_F32 || sym || ex->view[t] >= 0)
                rc = hg_kerr(err, errlen, "tensor %s (read by node %d, %s) cannot be "
                             "summed over micro-batches: %s", ti->name, ex->order[i],
                             hg_op_table[nd->op].name, ti->dtype != HG_F32 ? "not f32"
                             : sym ? "its shape changes with the batch" : "a view");
            on[t] = 1;
            carry[nc++] = t;
            floats += shape_bytes(g, t) / sizeof(float);
        }
    }
    free(pos);
    free(on);
    if (rc != 0) {
        free(carry);
        return -1;
    }
    free(ex->carry);
    ex->carry = carry;
    ex->ncarry = nc;
    ex->carry_floats = floats;
    return nc;
}

/* One grad op on the grad block and the carried tensors, against their
 * places in the stash (ZERO: the grad block alone, no stash needed),
 * where they live (base: mem, or a GPU plan's dmem). */
static int grad_op_on(struct hg_exec *ex, enum hg_grad_op op, char *base, char *err,
                      size_t errlen)
{
    size_t n = ex->st.grad_bytes / sizeof(float), at = 0;
    for (int c = -1; c < ex->ncarry; c++) {
        int t = c < 0 ? -1 : ex->carry[c];
        if (op == HG_GRAD_ZERO && t >= 0)
            break; /* the grad block's alone: the runs write the others */
        float *x = (float *)(base + (t < 0 ? ex->grad_base : ex->off[t])); /* [m] */
        size_t m = t < 0 ? n : shape_bytes(ex->g, t) / sizeof(float), b = m * sizeof(float);
        float *s = op == HG_GRAD_ZERO ? NULL : ex->stash + at; /* [m] */
        at += m;
#ifdef HG_HAVE_CUDA
        if (ex->device >= 0) {
            int rc = 0;
            switch (op) {
            case HG_GRAD_SAVE: rc = hg_cuda_d2d(ex->cu, s, x, b, err, errlen); break;
            case HG_GRAD_ADD: rc = hg_cuda_accumulate(ex->cu, s, x, m, err, errlen); break;
            case HG_GRAD_RESTORE: rc = hg_cuda_d2d(ex->cu, x, s, b, err, errlen); break;
            case HG_GRAD_ZERO: rc = hg_cuda_memset(ex->cu, x, 0, b, err, errlen); break;
            }
            if (rc != 0)
                return -1;
            continue;
        }
#endif
        (void)err, (void)errlen;
        switch (op) {
        case HG_GRAD_SAVE: memcpy(s, x, b); break;
        case HG_GRAD_ADD:
            for (size_t i = 0; i < m; i++)
                s[i] += x[i];
            break;
        case HG_GRAD_RESTORE: memcpy(x, s, b); break;
        case HG_GRAD_ZERO: memset(x, 0, b); break;
        }
    }
    return 0;
}

int hg_exec_grad_op(struct hg_exec *ex, enum hg_grad_op op, char *err, size_t errlen)
{
    size_t b = ex->st.grad_bytes + ex->carry_floats * sizeof(float);
    const int gpu = ex->device >= 0;
    if (!ex->stash && op != HG_GRAD_ZERO) {
        HG_CHECK(op == HG_GRAD_SAVE); /* ADD/RESTORE need a SAVE first */
#ifdef HG_HAVE_CUDA
        if (gpu)
            ex->stash = hg_cuda_malloc(ex->cu, b, err, errlen);
        else
#endif
            ex->stash = malloc(b ? b : 1);
        if (!ex->stash)
            return hg_kerr(err, errlen, "cannot allocate %zu bytes for the gradient sum", b);
    }
    return grad_op_on(ex, op, gpu ? ex->dmem : ex->mem, err, errlen);
}

void hg_exec_set_lowp(struct hg_exec *ex, int lowp) { ex->lowp = lowp; }

void hg_exec_set_loss_scale(struct hg_exec *ex, float scale)
{
    /* the seed is a constant in the inputs region: the next run that
     * starts at position 0 uploads it */
    int t = hg_graph_find(ex->g, "loss.grad");
    HG_CHECK(t >= 0 && ex->g->t[t].info.kind == HG_T_CONST);
    *(float *)(ex->mem + ex->off[t]) = scale;
}

float *hg_exec_grad_block_dev(struct hg_exec *ex, size_t *n)
{
    *n = ex->st.grad_bytes / sizeof(float);
    return ex->dmem ? (float *)(ex->dmem + ex->grad_base) : NULL;
}

void hg_exec_free(struct hg_exec *ex)
{
    if (!ex)
        return;
    free(ex->prof);
    free(ex->trace);
#ifdef HG_HAVE_CUDA
    if (ex->device >= 0) {
        hg_cuda_free(ex->stash);
        hg_cuda_free(ex->dmem);
        hg_cuda_host_free(ex->mem);
        hg_cuda_ctx_free(ex->cu);
    } else
#endif
    {
        free(ex->mem);
        free(ex->stash);
    }
    free(ex->carry);
    free(ex->off);
    free(ex->result);
    free(ex->bytes);
    free(ex->view);
    free(ex->order);
    free(ex->cm);
    free(ex->cm_at);
    free(ex->pend);
    free(ex->fuse);
    free(ex->fuse_numel);
    free(ex);
}

void hg_exec_mem(const struct hg_exec *ex, struct hg_mem_stats *st)
{
    *st = ex->st;
}

int hg_exec_n(const struct hg_exec *ex) { return ex->n; }

int hg_exec_kernel_calls(const struct hg_exec *ex, int *views, int *fused, size_t *copied)
{
    const struct hg_graph *g = ex->g;
    int calls = 0;
    *views = *fused = 0;
    *copied = 0;
    for (int i = 0; i < ex->n; i++) {
        const struct hg_node_info *nd = &g->n[ex->order[i]];
        if (ex->cm_at[i] >= 0)
            continue;
        if (nd->out >= 0 && ex->view[nd->out] >= 0) {
            (*views)++;
            continue;
        }
        calls++;
        switch (nd->op) {
        case HG_OP_RESHAPE: case HG_OP_RESHAPE_LIKE: case HG_OP_PERMUTE:
        case HG_OP_CONCAT: case HG_OP_SLICE: case HG_OP_SLICE_BWD:
            *copied += shape_bytes(g, nd->out);
            break;
        default:
            break;
        }
        *fused += ex->fuse[i] - 1;
        i += ex->fuse[i] - 1;
    }
    return calls;
}

void *hg_exec_data(struct hg_exec *ex, int t)
{
    HG_CHECK(t >= 0 && t < ex->g->nt);
    HG_CHECK(ex->off[t] != SIZE_MAX); /* not used by this plan */
    return ex->mem + ex->off[t];
}

float *hg_exec_param_block(struct hg_exec *ex, size_t *n)
{
    *n = ex->st.param_bytes / sizeof(float);
    return (float *)ex->mem;
}

float *hg_exec_grad_block(struct hg_exec *ex, size_t *n)
{
    *n = ex->st.grad_bytes / sizeof(float);
    return (float *)(ex->mem + ex->grad_base);
}

float *hg_exec_state_block(struct hg_exec *ex, size_t *n)
{
    *n = ex->st.state_bytes / sizeof(float);
    return (float *)(ex->mem + ex->state_base);
}

int hg_exec_prepare(struct hg_exec *ex, const struct hg_step *st, char *err,
                    size_t errlen)
{
    struct hg_graph *g = ex->g;
    int same = ex->resolved;
    for (int k = 0; k < g->nsym && same; k++)
        same = (st && st->sym ? st->sym[k] : g->sym[k].def) == ex->sym[k];
    if (same)
        return 0;
    ex->resolved = 0;
    if (hg_graph_resolve(g, st ? st->sym : NULL, err, errlen) != 0)
        return -1;
    /* The plan sized every tensor for the worst admissible point; a
     * resolved shape beyond it would run into its neighbours (and their
     * consts, such as the loss seed): refuse it instead. */
    for (int t = 0; t < g->nt; t++)
        if (ex->off[t] != SIZE_MAX && shape_bytes(g, t) > ex->bytes[t])
            return hg_kerr(err, errlen, "tensor %d (%s) needs %zu bytes at these symbol "
                           "values, the plan holds %zu (a planning bug)", t,
                           g->t[t].info.name ? g->t[t].info.name : "unnamed",
                           shape_bytes(g, t), ex->bytes[t]);
    for (int k = 0; k < g->nsym; k++)
        ex->sym[k] = g->sym[k].cur;
    place_views(ex);
    ex->resolved = 1;
    return 0;
}

#ifdef HG_HAVE_CUDA
/* After a GPU run of [begin, end): download the outputs it produced that
 * someone reads after the run (kept or unread activations), then wait and
 * report a device-side error with the node that recorded it. */
static int finish_gpu_run(struct hg_exec *ex, int begin, int end, char *err,
                          size_t errlen)
{
    struct hg_graph *g = ex->g;
    for (int i = begin; i < end; i++) {
        int t = g->n[ex->order[i]].out;
        if (t < 0 || g->t[t].info.kind != HG_T_ACT || !ex->result[t])
            continue;
        size_t b = shape_bytes(g, t);
        if (hg_cuda_d2h(ex->cu, ex->mem + ex->off[t], ex->dmem + ex->off[t], b, err,
                        errlen) != 0)
            return -1;
    }
    char kerr[384];
    if (hg_cuda_sync(ex->cu, kerr, sizeof kerr) != 0) {
        int pos = hg_cuda_error_pos(ex->cu);
        if (pos >= 0 && pos < ex->n) {
            const struct hg_node_info *nd = &g->n[ex->order[pos]];
            return hg_kerr(err, errlen, "node %d (%s -> %s) on cuda: %s", ex->order[pos],
                           hg_op_table[nd->op].name,
                           nd->out >= 0 ? g->t[nd->out].name : "-", kerr);
        }
        return hg_kerr(err, errlen, "cuda:%d: %s", ex->device, kerr);
    }
    return 0;
}
#endif

int hg_exec_run(struct hg_exec *ex, const struct hg_step *st, int begin,
                int end, char *err, size_t errlen)
{
    struct hg_graph *g = ex->g;
    HG_CHECK(begin >= 0 && begin <= end && end <= ex->n);
    if (hg_exec_prepare(ex, st, err, errlen) != 0)
        return -1;
    if (st && st->nthreads > 0 && st->nthreads != hg_kernels_get_threads())
        hg_kernels_set_threads(st->nthreads);
    char kerr[512];
    const int gpu = ex->device >= 0;
    char *base = gpu ? ex->dmem : ex->mem; /* where the kernels' tensors live */
#ifdef HG_HAVE_CUDA
    if (gpu && begin == 0 &&
        hg_exec_upload(ex, HG_R_INPUTS, err, errlen) != 0)
        return -1;
    const unsigned long long launched0 = gpu ? hg_cuda_launches(ex->cu) : 0;
#endif
    /* per-op times: the profile's, or the slowdown's on the CPU (one
     * branch per node when both are off) */
    const int timed = ex->prof || ex->trace || (ex->slow && !gpu);
    if (ex->slow)
        ex->seg_t0 = hg_now();
    struct hg_kctx ctx = {
        .dev = ex->cu,
        .lowp = ex->lowp,
        .nthreads = hg_kernels_get_threads(),
        .step = st ? st->step : 1,
        .lr = st ? st->lr : 0.f,
        .grad_scale = st ? st->grad_scale : 1.f,
        .ws = base + ex->ws_base,
        .ws_bytes = ex->st.ws_bytes,
        .err = kerr,
        .errlen = sizeof(kerr),
    };
    struct hg_tview in[HG_MAX_INPUTS], out;
    int rc = ex->early && ex->ncm ? comm_early(ex, begin - 1, err, errlen) : 0;
    for (int i = begin; i < end && rc == 0; i++) {
        const struct hg_node_info *nd = &g->n[ex->order[i]];
        ex->cur = i;
        if (ex->npend && (rc = comm_pending(ex, i, err, errlen)) != 0)
            break;
        if (ex->cm_at[i] >= 0) {
            /* a comm node's own time is never slowed */
            if (ex->slow && (rc = slow_settle(ex, err, errlen)) != 0)
                break;
            double t0 = ex->prof ? hg_now() : 0;
            rc = comm_node(ex, i, end, err, errlen);
            if (ex->prof)
                ex->prof[i] += hg_now() - t0;
            if (ex->slow)
                ex->seg_t0 = hg_now();
            if (rc == 0 && ex->early)
                rc = comm_early(ex, i, err, errlen);
            continue;
        }
        for (int k = 0; k < nd->n_in; k++) {
            const struct hg_tensor_info *ti = &g->t[nd->in[k]].info;
            in[k].data = base + ex->off[nd->in[k]];
            in[k].dtype = ti->dtype;
            in[k].shape = ti->shape;
        }
        const int nf = ex->fuse[i] < end - i ? ex->fuse[i] : end - i;
        if (nf > 1) { /* fuse_updates: each operand one flat span */
            /* the run from i, less what lies beyond end */
            int64_t numel = ex->fuse_numel[i] - (nf < ex->fuse[i] ? ex->fuse_numel[i + nf] : 0);
            for (int k = 0; k < nd->n_in; k++)
                in[k].shape = (struct hg_shape){.ndim = 1, .dim = {numel}};
        }
        struct hg_kargs a = {.in = in, .n_in = nd->n_in, .attr = &nd->attr,
                             .ctx = &ctx};
        if (nd->out >= 0) {
            const struct hg_tensor_info *ti = &g->t[nd->out].info;
            out.data = base + ex->off[nd->out];
            out.dtype = ti->dtype;
            out.shape = ti->shape;
            a.out = &out;
        }
        kerr[0] = 0;
        ctx.pos = i;
        double t0 = timed ? hg_now() : 0;
        rc = gpu ? hg_op_table[nd->op].cuda(&a) : hg_op_table[nd->op].cpu(&a);
#ifdef HG_HAVE_CUDA
        if (ex->prof && gpu && rc == 0) /* per-op times need the device idle */
            rc = hg_cuda_sync(ex->cu, kerr, sizeof kerr);
#endif
        if (timed) {
            double dt = hg_now() - t0;
            if (ex->prof)
                ex->prof[i] += dt;
            /* slept in pieces of about 1 ms: the op's slowdown stays near it */
            if (ex->slow && !gpu && (ex->debt += (ex->slow - 1) * dt) >= 1e-3)
                slow_pay(ex);
            if (ex->trace) /* with the slowdown's sleep just paid, if any */
                ex->trace[2 * i] = t0, ex->trace[2 * i + 1] = hg_now();
        }
        if (rc != 0) {
            hg_kerr(err, errlen, "node %d (%s -> %s)%s: %s", ex->order[i],
                    hg_op_table[nd->op].name, nd->out >= 0 ? g->t[nd->out].name : "-",
                    gpu ? " on cuda" : "", kerr);
            break;
        }
        i += nf - 1; /* the fused nodes ran with this one */
        if (ex->early && ex->ncm)
            rc = comm_early(ex, i, err, errlen);
    }
    ex->cur = -1;
    /* what the caller may read after the run has arrived */
    if (rc == 0 && ex->npend)
        rc = comm_pending(ex, INT_MAX, err, errlen);
    if (rc != 0)
        return -1;
#ifdef HG_HAVE_CUDA
    if (gpu && ex->prof)
        ex->launches += hg_cuda_launches(ex->cu) - launched0;
    if (gpu && finish_gpu_run(ex, begin, end, err, errlen) != 0)
        return -1;
#endif
    /* a run ends with its slowdown slept: the caller's clock sees it */
    return ex->slow ? slow_settle(ex, err, errlen) : 0;
}

/* Standard normal from two uniforms (Box-Muller), deterministic. */
static float normal(uint64_t seed, uint64_t stream, uint64_t i)
{
    float u1 = hg_rand_uniform(seed, stream, 2 * i);
    float u2 = hg_rand_uniform(seed, stream, 2 * i + 1);
    if (u1 < 1e-7f)
        u1 = 1e-7f;
    return sqrtf(-2.f * logf(u1)) * cosf(6.2831853f * u2);
}

void hg_graph_init_params(struct hg_graph *g, struct hg_exec *ex, uint64_t seed)
{
    for (int i = 0; i < g->np; i++) {
        int t = g->params[i];
        float *p = hg_exec_data(ex, t); /* [numel] */
        int64_t m = hg_shape_numel(&g->t[t].info.shape);
        float s = g->t[t].init_scale;
        for (int64_t j = 0; j < m; j++) {
            switch (g->t[t].init) {
            case HG_INIT_ZERO: p[j] = 0.f; break;
            case HG_INIT_ONE: p[j] = 1.f; break;
            case HG_INIT_UNIFORM:
                p[j] = s * (2.f * hg_rand_uniform(seed, (uint64_t)i, (uint64_t)j) - 1.f);
                break;
            case HG_INIT_NORMAL:
                p[j] = s * normal(seed, (uint64_t)i, (uint64_t)j);
                break;
            }
        }
    }
}
