/* elementwise.c - broadcasting arithmetic, SUM_TO, activations and dropout
 * (CPU reference kernels, f32).
 *
 * Broadcasting: both operands are aligned right against the output, axes of
 * size 1 are dropped, and neighbouring axes that are contiguous for the
 * output and both operands are merged.  What remains is a short list of
 * (dim, stride_a, stride_b) with stride 0 meaning "broadcast".  The last
 * merged axis is the inner loop (contiguous, or one operand a scalar), the
 * rest is per-row offset arithmetic: no per-element index math.  The plan
 * (hg_bplan) is kernels/shape-plan.h's, shared with the CUDA kernels.
 */
#include <math.h>
#include <string.h>

#include "kernels/cpu/cpu-impl.h"
#include "kernels/ew-math.h"
#include "kernels/shape-plan.h"

#define PAR_MIN 32768 /* below this many elements, stay on one thread */
#define CHUNK 4096    /* inner-loop tile: rows are split so one row parallelises */

enum bop { BOP_ADD, BOP_SUB, BOP_MUL };

#define BIN_LOOPS(EXPR)                                                        \
    do {                                                                       \
        if (ia == 1 && ib == 1) {                                              \
            _Pragma("omp simd")                                                \
            for (int64_t i = 0; i < n; i++) {                                  \
                float x = a[i], y = b[i];                                      \
                o[i] = (EXPR);                                                 \
            }                                                                  \
        } else if (ia == 1 && ib == 0) {                                       \
            const float y = b[0];                                              \
            _Pragma("omp simd")                                                \
            for (int64_t i = 0; i < n; i++) {                                  \
                float x = a[i];                                                \
                o[i] = (EXPR);                                                 \
            }                                                                  \
        } else if (ia == 0 && ib == 1) {                                       \
            const float x = a[0];                                              \
            _Pragma("omp simd")                                                \
            for (int64_t i = 0; i < n; i++) {                                  \
                float y = b[i];                                                \
                o[i] = (EXPR);                                                 \
            }                                                                  \
        } else {                                                               \
            _Pragma("omp simd")                                                \
            for (int64_t i = 0; i < n; i++) {                                  \
                float x = a[i * ia], y = b[i * ib];                            \
                o[i] = (EXPR);                                                 \
            }                                                                  \
        }                                                                      \
    } while (0)

/* o[n] = a[i*ia] op b[i*ib].  o may equal a or b element for element. */
HG_SIMD_DEF(static void, bin_row,
            (enum bop op, float *restrict o, const float *restrict a,
             const float *restrict b, int64_t ia, int64_t ib, int64_t n), {
    switch (op) {
    case BOP_ADD: BIN_LOOPS(x + y); break;
    case BOP_SUB: BIN_LOOPS(x - y); break;
    case BOP_MUL: BIN_LOOPS(x * y); break;
    }
})

static int binary(const struct hg_kargs *a, enum bop op)
{
    const struct hg_tview *va = &a->in[0], *vb = &a->in[1];
    const float *pa = va->data, *pb = vb->data; /* broadcastable to out */
    float *po = a->out->data;                   /* out: broadcast shape */
    int64_t n = hg_shape_numel(&a->out->shape);
    struct hg_bplan p;

    HG_CHECK(va->dtype == HG_F32 && vb->dtype == HG_F32);
    if (n == 0)
        return 0;
    hg_bplan_make(&p, &va->shape, &vb->shape, &a->out->shape);
    const int last = p.nd - 1;
    const int64_t inner = p.dim[last], ia = p.sa[last], ib = p.sb[last];
    const int64_t nch = (inner + CHUNK - 1) / CHUNK;
    const int64_t tiles = (n / inner) * nch;
    void (*const row)(enum bop, float *restrict, const float *restrict,
                      const float *restrict, int64_t, int64_t, int64_t) =
        HG_SIMD_PICK(bin_row);

#pragma omp parallel for if (n >= PAR_MIN) schedule(static)
    for (int64_t t = 0; t < tiles; t++) {
        int64_t r = t / nch, c0 = (t % nch) * CHUNK;
        int64_t len = inner - c0 < CHUNK ? inner - c0 : CHUNK;
        int64_t oa = 0, ob = 0, rr = r;
        for (int k = last - 1; k >= 0; k--) {
            int64_t ik = rr % p.dim[k];
            rr /= p.dim[k];
            oa += ik * p.sa[k];
            ob += ik * p.sb[k];
        }
        row(op, po + r * inner + c0, pa + oa + c0 * ia, pb + ob + c0 * ib,
                ia, ib, len);
    }
    return 0;
}

HG_CPU_FN(add) { return binary(a, BOP_ADD); }
HG_CPU_FN(sub) { return binary(a, BOP_SUB); }
HG_CPU_FN(mul) { return binary(a, BOP_MUL); }

HG_CPU_FN(scale)
{
    const float *restrict x = a->in[0].data; /* [n] */
    float *restrict y = a->out->data;        /* [n] */
    const float alpha = a->attr->scale.alpha;
    const int64_t n = hg_shape_numel(&a->out->shape);

#pragma omp parallel for simd if (n >= PAR_MIN) schedule(static)
    for (int64_t i = 0; i < n; i++)
        y[i] = alpha * x[i];
    return 0;
}

/* ---- SUM_TO ------------------------------------------------------------ */

/* Odometer over a subset of groups: idx/off advance by one step. */
static inline void odo_next(int n, const int64_t *dim, const int64_t *st,
                            int64_t *idx, int64_t *off)
{
    for (int k = n - 1; k >= 0; k--) {
        idx[k]++;
        *off += st[k];
        if (idx[k] < dim[k])
            return;
        *off -= idx[k] * st[k];
        idx[k] = 0;
    }
}

HG_CPU_FN(sum_to)
{
    const float *x = a->in[0].data; /* [..] */
    float *y = a->out->data;        /* ref's shape */
    const int64_t nx = hg_shape_numel(&a->in[0].shape);
    const int64_t ny = hg_shape_numel(&a->out->shape);
    struct hg_rplan p;

    HG_CHECK(a->in[0].dtype == HG_F32);
    if (ny == 0)
        return 0;
    if (nx == ny) {
        if (y != x)
            memcpy(y, x, (size_t)nx * sizeof(float));
        return 0;
    }
    hg_rplan_make(&p, &a->in[0].shape, &a->out->shape);

    /* kept groups (k*) and reduced groups (r*), in order */
    int nk = 0, nr = 0;
    int64_t kd[HG_MAX_DIMS], ks[HG_MAX_DIMS], rd[HG_MAX_DIMS], rs[HG_MAX_DIMS];
    for (int g = 0; g < p.ng; g++) {
        if (p.red[g]) {
            rd[nr] = p.dim[g];
            rs[nr++] = p.st[g];
        } else {
            kd[nk] = p.dim[g];
            ks[nk++] = p.st[g];
        }
    }
    if (nk == 0) { /* everything reduced: ref numel 1 */
        y[0] = (float)hg_cpu_sum_all(x, nx);
        return 0;
    }

    if (p.red[p.ng - 1]) {
        /* Inner group reduced ([R,K,R] e.g. [N,O,H,W] -> [O,1,1]): each
         * output sums contiguous runs of I over the other reduced groups. */
        const int64_t I = rd[nr - 1];
        const int nro = nr - 1;
        int64_t nrun = 1;
        for (int k = 0; k < nro; k++)
            nrun *= rd[k];
#pragma omp parallel for if (nx >= PAR_MIN) schedule(static)
        for (int64_t m = 0; m < ny; m++) {
            int64_t base = 0, mm = m, idx[HG_MAX_DIMS] = {0}, off = 0;
            for (int k = nk - 1; k >= 0; k--) {
                base += (mm % kd[k]) * ks[k];
                mm /= kd[k];
            }
            double s = 0;
            for (int64_t r = 0; r < nrun; r++) {
                s += hg_cpu_sum_run(x + base + off, I);
                odo_next(nro, rd, rs, idx, &off);
            }
            y[m] = (float)s;
        }
        return 0;
    }

    /* Inner group kept ([R,K], bias [D] from [..,D]): output rows of K
     * columns accumulate whole x rows; tiles of columns so a single
     * output row still parallelises (col_block).  Each column sums in a fixed order. */
    const int64_t K = kd[nk - 1];
    const int64_t P = ny / K;
    const int64_t cb = hg_cpu_col_block(K, P, a->ctx->nthreads);
    const int64_t nblk = (K + cb - 1) / cb;
    int64_t nrun = 1;
    for (int k = 0; k < nr; k++)
        nrun *= rd[k];
#pragma omp parallel for if (nx >= PAR_MIN) schedule(static)
    for (int64_t t = 0; t < P * nblk; t++) {
        int64_t pr = t / nblk, c0 = (t % nblk) * cb;
        int64_t len = K - c0 < cb ? K - c0 : cb;
        int64_t base = c0, pp = pr, idx[HG_MAX_DIMS] = {0}, off = 0;
        for (int k = nk - 2; k >= 0; k--) {
            base += (pp % kd[k]) * ks[k];
            pp /= kd[k];
        }
        float *restrict yr = y + pr * K + c0;
#pragma omp simd
        for (int64_t i = 0; i < len; i++)
            yr[i] = 0.0f;
        for (int64_t r = 0; r < nrun; r++) {
            const float *restrict xr = x + base + off;
#pragma omp simd
            for (int64_t i = 0; i < len; i++)
                yr[i] += xr[i];
            odo_next(nr, rd, rs, idx, &off);
        }
    }
    return 0;
}

/* ---- activations --------------------------------------------------------- */

#define UNARY_KERNEL(name, EXPR)                                               \
    HG_SIMD_DEF(static void, name##_run,                                       \
                (const float *restrict xp, float *restrict yp, int64_t n), {   \
        for (int64_t i = 0; i < n; i++) {                                      \
            float x = xp[i];                                                   \
            yp[i] = (EXPR);                                                    \
        }                                                                      \
    })                                                                         \
    HG_CPU_FN(name)                                                            \
    {                                                                          \
        const float *xp = a->in[0].data; /* [n] */                             \
        float *yp = a->out->data;        /* [n] */                             \
        HG_PAR_CHUNKS(hg_shape_numel(&a->out->shape), PAR_MIN, lo, hi,         \
                      HG_SIMD_PICK(name##_run)(xp + lo, yp + lo, hi - lo));    \
        return 0;                                                              \
    }

/* (u, dy) -> dx, same shapes */
#define BINARY_KERNEL(name, EXPR)                                              \
    HG_SIMD_DEF(static void, name##_run,                                       \
                (const float *restrict up, const float *restrict dyp,          \
                 float *restrict dxp, int64_t n), {                            \
        for (int64_t i = 0; i < n; i++) {                                      \
            float u = up[i], dy = dyp[i];                                      \
            dxp[i] = (EXPR);                                                   \
        }                                                                      \
    })                                                                         \
    HG_CPU_FN(name)                                                            \
    {                                                                          \
        const float *up = a->in[0].data;  /* [n] */                            \
        const float *dyp = a->in[1].data; /* [n] */                            \
        float *dxp = a->out->data;        /* [n] */                            \
        const int64_t n = hg_shape_numel(&a->out->shape);                      \
        HG_CHECK(hg_shape_numel(&a->in[1].shape) == n);                        \
        HG_PAR_CHUNKS(n, PAR_MIN, lo, hi,                                      \
                      HG_SIMD_PICK(name##_run)(up + lo, dyp + lo, dxp + lo,    \
                                               hi - lo));                      \
        return 0;                                                              \
    }

UNARY_KERNEL(relu, hg_ew_relu(x))
BINARY_KERNEL(relu_bwd, hg_ew_relu_bwd(u, dy))
UNARY_KERNEL(gelu, hg_ew_gelu(x))
BINARY_KERNEL(gelu_bwd, hg_ew_gelu_bwd(u, dy))
UNARY_KERNEL(tanh, hg_ew_tanh(x))
BINARY_KERNEL(tanh_bwd, hg_ew_tanh_bwd(u, dy))

/* y[0,n) = mask(j) * x[j] * s: one row, whose key is key */
HG_SIMD_DEF(static void, dropout_run,
            (const float *restrict x, float *restrict y, int64_t n, uint64_t key,
             float p, float s), {
    for (int64_t j = 0; j < n; j++)
        y[j] = hg_ew_dropout(x[j], key, (uint64_t)j, p, s);
})

/* rows [lo,hi) of x, y (hg_ew_drop_row_key); the chain's links are kept
 * from row to row and only those whose coordinate changed are redrawn */
static void dropout_rows(const float *x, float *y, const struct hg_shape *sh,
                         const int32_t *ids, int64_t lo, int64_t hi, uint64_t key,
                         float p, float s)
{
    int64_t L, c[HG_MAX_DIMS];
    const int na = hg_ew_drop_rows(sh, &L);
    uint64_t k[HG_MAX_DIMS]; /* k[a]: the chain through axis a */
    int valid = 0;           /* links k[0, valid) hold for c[] */
    for (int64_t r = lo; r < hi; r++) {
        int64_t q = r, cr[HG_MAX_DIMS];
        for (int ax = na - 1; ax >= 0; ax--) {
            cr[ax] = q % sh->dim[ax];
            q /= sh->dim[ax];
        }
        int same = 0;
        while (same < valid && cr[same] == c[same])
            same++;
        for (int ax = same; ax < na; ax++) {
            c[ax] = cr[ax];
            uint64_t v = ax ? (uint64_t)c[ax] : (uint64_t)(ids ? (int64_t)ids[c[0]] : c[0]);
            k[ax] = hg_ew_drop_link(ax ? k[ax - 1] : key, v);
        }
        valid = na;
        HG_SIMD_PICK(dropout_run)(x + r * L, y + r * L, L, k[na - 1], p, s);
    }
}

HG_CPU_FN(dropout)
{
    const float *restrict x = a->in[0].data; /* [B,..] */
    float *restrict y = a->out->data;        /* [B,..] */
    const int32_t *ids = a->n_in > 1 ? a->in[1].data : NULL; /* [B] or NULL */
    const struct hg_shape *sh = &a->out->shape;
    const int64_t n = hg_shape_numel(sh);
    const float p = a->attr->dropout.p;
    const uint64_t seed = a->attr->dropout.seed, stream = a->ctx->step;
    HG_CHECK(sh->ndim >= 1 && (!ids || (a->in[1].dtype == HG_I32 &&
                                        hg_shape_numel(&a->in[1].shape) == sh->dim[0])));

    if (p <= 0.0f) {
        if (y != x)
            memcpy(y, x, (size_t)n * sizeof(float));
        return 0;
    }
    if (p >= 1.0f) {
        memset(y, 0, (size_t)n * sizeof(float));
        return 0;
    }
    const float s = 1.0f / (1.0f - p);
    const uint64_t key = hg_rand_key(seed, stream);
    int64_t L;
    hg_ew_drop_rows(sh, &L);
    const int64_t rows = L > 0 ? n / L : 0;
    HG_PAR_CHUNKS(rows, PAR_MIN / 4 / (L > 0 ? L : 1) + 1, lo, hi,
                  dropout_rows(x, y, sh, ids, lo, hi, key, p, s));
    return 0;
}
