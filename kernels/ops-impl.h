/* ops-impl.h - private to kernels/: the functions the op table points to.
 *
 * Semantics every implementation (CPU now, CUDA later) follows exactly:
 * - All tensors contiguous row-major. f32 unless stated; ids/targets i32.
 * - MATMUL: a[...,M,K] (trans_a: a[...,K,M]), b[...,K,N] (trans_b: [...,N,K]).
 *   If b is 2-D it is shared by every batch entry of a (and with trans_a == 0
 *   the batch dims of a fold into M: one GEMM). Otherwise a and b have the
 *   same leading dims. out = alpha * op(a) op(b), alpha 0 means 1.
 * - MATMUL_REDUCE: x[...,K], d[...,N] same leading dims -> [K,N] = X^T D with
 *   X, D the 2-D views [rows,K], [rows,N].
 * - CONV2D: cross-correlation as torch.nn.functional.conv2d, no bias, groups 1.
 *   OH = (H + 2*pad_h - kh)/stride_h + 1.
 * - MAXPOOL2D: as torch max_pool2d (padding acts as -inf); backward sends dy to
 *   the first maximum in row-major window order.
 * - ADD/SUB/MUL: numpy broadcasting, shapes aligned right; out has the
 *   broadcast shape. SUM_TO(x, ref): sums x over the axes where ref (aligned
 *   right, missing axes count as 1) has size 1 and x does not.
 * - SOFTMAX/LOG_SOFTMAX over the last axis, max-subtracted.
 * - LAYERNORM over the last axis, biased variance, eps inside the sqrt.
 * - DROPOUT: keep element i iff hg_rand_uniform(seed, ctx->step, i) >= p;
 *   kept values are scaled by 1/(1-p). p == 0 is the identity. The backward is
 *   the same op applied to dy (same seed, same step, same mask).
 * - EMBEDDING: out[...,:] = w[id,:]; an id outside [0,V) is a runtime error
 *   (message names the id and V). EMBEDDING_BWD accumulates rows of dy.
 * - RESHAPE: dims with 0 = copy that input dim, one -1 = inferred.
 * - PERMUTE: out.dim[i] = in.dim[perm[i]].
 * - CONCAT: every input equal except on axis. SLICE: len elements from start.
 * - MASKED_FILL: s[B,Tq,Tk] or s[B,H,Tq,Tk]; an element is masked if causal
 *   and k > q, or if keep (optional second input, i32 [B,Tk]) is 0 at [b,k].
 *   Masked elements become fill (hg_masked_fill uses -1e30 for scores,
 *   which softmax turns into exact zeros without NaN rows; 0 backward).
 *   Causal masking is aligned top-left (k > q), as for self-attention.
 * - ATTENTION(q[B,H,Tq,Dh], k[B,H,Tk,Dh], v[B,H,Tk,Dh] [, keep[B,Tk] i32]):
 *   per (b,h): S = scale q k^T; masked elements of S (MASKED_FILL's rule:
 *   causal and k > q, or keep[b,k] == 0) become fill; P = softmax(S) over
 *   k (max-subtracted); P' = DROPOUT(P) with seed, ctx->step and the index
 *   ((b*H + h)*Tq + q)*Tk + k of [B,H,Tq,Tk]; out = P' v.  The semantics
 *   of the unfused chain MATMUL, MASKED_FILL, SOFTMAX, DROPOUT, MATMUL; the
 *   values agree to float rounding (the CPU kernel's exp is a polynomial
 *   within 2 ulp of expf, 0 below -87.3; its row sums take 16 lanes).  The
 *   scores live in the workspace (per thread), never in the graph.
 *   ATTENTION_BWD(q, k, v, do [, keep]) recomputes S and P: dv = P'^T do,
 *   dP = mask(do v^T) (the dropout mask, scaled), dS = P (dP - rowsum(P dP))
 *   with masked elements 0, dq = scale dS k, dk = scale dS^T q.  which 0
 *   gives dq [B,H,Tq,Dh]; which 1 gives dk and dv as [2,B,H,Tk,Dh]; which
 *   2 (Tq == Tk) gives dq, dk and dv as [3,B,H,T,Dh].
 * - SUM/MEAN: over axis (kept with size 1), or HG_AXIS_ALL -> shape [1].
 *   EXPAND_LIKE(dy, x_ref): broadcasts dy back to x's shape times alpha;
 *   alpha < 0 means 1/count with count = numel(x_ref)/numel(dy) (MEAN's
 *   backward: the count changes with symbolic dims, so it is read per run).
 * - CROSS_ENTROPY(logits, target): sum over rows with target != ignore_index
 *   of (1-s) * (-logp[t]) + s/C * sum_j(-logp[j])  (torch's label smoothing),
 *   out shape [1]. NLL: the same on log-probabilities. The _BWD ops multiply
 *   by dloss[0]. A target outside [0,C) other than ignore_index is a runtime
 *   error.
 * - SGD_STEP(param, grad, buf): g = grad*grad_scale + wd*param;
 *   buf = momentum*buf + g (if momentum != 0); param -= lr * (nesterov ?
 *   g + momentum*buf : buf or g)  -- torch.optim.SGD.
 * - ADAMW_STEP(param, grad, m, v): g = grad*grad_scale; param *= 1 - lr*wd;
 *   m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
 *   param -= lr * (m/(1-b1^t)) / (sqrt(v/(1-b2^t)) + eps), t = ctx->step
 *   -- torch.optim.AdamW.  With adam.l2 (torch.optim.Adam): no decoupled
 *   decay, g = grad*grad_scale + wd*param instead; the rest is the same.
 * - ADADELTA_STEP(param, grad, sq, acc): g = grad*grad_scale + wd*param;
 *   sq = rho sq + (1-rho) g^2; d = sqrt(acc + eps) / sqrt(sq + eps) * g;
 *   acc = rho acc + (1-rho) d^2; param -= lr * d  -- torch.optim.Adadelta.
 * - Communication ops (HG_OPF_COMM) have shape and cost rules only.
 *   ALLREDUCE/PS_PUSH/PS_PULL(first[, last]): f32, comm.count floats
 *   (>= each input's; 0 with one input), no output; the executor checks the
 *   span against its layout.  SEND(x): x's dtype is comm.dtype.  RECV():
 *   [comm.dim] of comm.dtype, dims already resolved by the graph.
 */
#ifndef HG_OPS_IMPL_H
#define HG_OPS_IMPL_H

#include <stdio.h>

#include "kernels/hg_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Inner loops of memory-bound kernels are compiled for AVX-512
 * (x86-64-v4), AVX2 (x86-64-v3) and the baseline; HG_SIMD_PICK chooses one
 * at run time by hg_cpu_isa() (the CPU's level, capped by HG_ISA), so a
 * portable build runs the CPU's widest vectors and one machine can test
 * every path.  -std=c11 keeps FP contraction off and nothing reassociates,
 * so all variants compute bit-identical results (tests/isa.sh checks).
 *   HG_SIMD_DEF(static void, f, (params), { body })  defines f_v4, f_v3, f_v1
 *   HG_SIMD_PICK(f)                                 the variant to call */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    __GNUC__ >= 12 && defined(__linux__)
#define HG_SIMD_DEF(ret, name, params, ...)                                    \
    __attribute__((target("arch=x86-64-v4"))) ret name##_v4 params __VA_ARGS__ \
    __attribute__((target("arch=x86-64-v3"))) ret name##_v3 params __VA_ARGS__ \
    ret name##_v1 params __VA_ARGS__
#define HG_SIMD_PICK(name)                                                     \
    (hg_cpu_isa() >= 4 ? name##_v4 : hg_cpu_isa() >= 3 ? name##_v3 : name##_v1)
#else
#define HG_SIMD_DEF(ret, name, params, ...) ret name##_v1 params __VA_ARGS__
#define HG_SIMD_PICK(name) name##_v1
#endif

/* The x86-64 level the SIMD variants use: 4 (AVX-512 F/BW/CD/DQ/VL), 3
 * (AVX2, FMA, ...) or 1 (baseline): the CPU's, lowered by HG_ISA=avx512|
 * avx2|baseline.  Read once (kernels/blas.c). */
int hg_cpu_isa(void);

/* Runs body(lo, hi) over [0, n) in nthreads contiguous chunks when n is at
 * least min_par, else in one chunk; deterministic chunk boundaries. */
#define HG_PAR_CHUNKS(n, min_par, LO, HI, body)                                 \
    do {                                                                       \
        const int64_t hg_n_ = (n);                                             \
        const int hg_nc_ = hg_n_ >= (min_par) ? hg_kernels_get_threads() : 1;  \
        _Pragma("omp parallel for if (hg_nc_ > 1) schedule(static)")           \
        for (int hg_c_ = 0; hg_c_ < hg_nc_; hg_c_++) {                         \
            const int64_t LO = hg_n_ * hg_c_ / hg_nc_;                         \
            const int64_t HI = hg_n_ * (hg_c_ + 1) / hg_nc_;                   \
            body;                                                              \
        }                                                                      \
    } while (0)

/* Formats into err (may be NULL) and returns -1. */
int hg_kerr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define HG_SHAPE_FN(name)                                                      \
    int hg_shape_##name(const struct hg_shape *in, const enum hg_dtype *in_dt, \
                        int n_in, const union hg_attr *attr,                   \
                        struct hg_shape *out, enum hg_dtype *out_dt, char *err,\
                        size_t errlen)
#define HG_COST_FN(name)                                                       \
    void hg_cost_##name(const struct hg_shape *in, int n_in,                   \
                        const struct hg_shape *out, const union hg_attr *attr, \
                        struct hg_cost *cost)
#define HG_WS_FN(name)                                                         \
    size_t hg_ws_##name(const struct hg_shape *in, int n_in,                   \
                        const struct hg_shape *out, const union hg_attr *attr, \
                        int nthreads)
#define HG_CPU_FN(name) int hg_cpu_##name(const struct hg_kargs *a)
#define HG_CUDA_FN(name) int hg_cuda_##name(const struct hg_kargs *a)

/* Shape rules (kernels/shapes.c) */
HG_SHAPE_FN(matmul); HG_SHAPE_FN(matmul_reduce);
HG_SHAPE_FN(conv2d); HG_SHAPE_FN(conv2d_bwd_data); HG_SHAPE_FN(conv2d_bwd_filter);
HG_SHAPE_FN(maxpool2d); HG_SHAPE_FN(like_first); HG_SHAPE_FN(like_second);
HG_SHAPE_FN(like_third); HG_SHAPE_FN(broadcast); HG_SHAPE_FN(layernorm_g);
HG_SHAPE_FN(embedding); HG_SHAPE_FN(reshape); HG_SHAPE_FN(permute);
HG_SHAPE_FN(concat); HG_SHAPE_FN(slice); HG_SHAPE_FN(masked_fill);
HG_SHAPE_FN(attention); HG_SHAPE_FN(attention_bwd);
HG_SHAPE_FN(reduce); HG_SHAPE_FN(loss); HG_SHAPE_FN(loss_bwd);
HG_SHAPE_FN(update); HG_SHAPE_FN(comm_span); HG_SHAPE_FN(send); HG_SHAPE_FN(recv);
HG_SHAPE_FN(reshard);

/* Cost rules (kernels/shapes.c) */
HG_COST_FN(matmul); HG_COST_FN(matmul_reduce); HG_COST_FN(conv2d);
HG_COST_FN(conv2d_bwd_data); HG_COST_FN(conv2d_bwd_filter); HG_COST_FN(pool);
HG_COST_FN(elementwise); /* flops: per-op factor times out numel */
HG_COST_FN(copy); HG_COST_FN(rowwise); HG_COST_FN(layernorm);
HG_COST_FN(embedding); HG_COST_FN(reduce); HG_COST_FN(loss);
HG_COST_FN(attention); HG_COST_FN(attention_bwd);
HG_COST_FN(sgd); HG_COST_FN(adamw); HG_COST_FN(adadelta);
HG_COST_FN(comm); /* bytes moved, no flops */

/* Workspace rules */
HG_WS_FN(conv2d); HG_WS_FN(conv2d_bwd_data); HG_WS_FN(conv2d_bwd_filter);
/* ATTENTION(_BWD): [Tq,Tk] score buffers per thread (one, two) */
HG_WS_FN(attention); HG_WS_FN(attention_bwd);

/* CPU kernels (the files in kernels/cpu/) */
HG_CPU_FN(matmul); HG_CPU_FN(matmul_reduce);
HG_CPU_FN(conv2d); HG_CPU_FN(conv2d_bwd_data); HG_CPU_FN(conv2d_bwd_filter);
HG_CPU_FN(maxpool2d); HG_CPU_FN(maxpool2d_bwd);
HG_CPU_FN(add); HG_CPU_FN(sub); HG_CPU_FN(mul); HG_CPU_FN(scale);
HG_CPU_FN(sum_to);
HG_CPU_FN(relu); HG_CPU_FN(relu_bwd); HG_CPU_FN(gelu); HG_CPU_FN(gelu_bwd);
HG_CPU_FN(tanh); HG_CPU_FN(tanh_bwd);
HG_CPU_FN(softmax); HG_CPU_FN(softmax_bwd); HG_CPU_FN(log_softmax);
HG_CPU_FN(log_softmax_bwd);
HG_CPU_FN(layernorm); HG_CPU_FN(layernorm_bwd_x); HG_CPU_FN(layernorm_bwd_g);
HG_CPU_FN(dropout);
HG_CPU_FN(embedding); HG_CPU_FN(embedding_bwd);
HG_CPU_FN(copy); /* RESHAPE, RESHAPE_LIKE */
HG_CPU_FN(permute); HG_CPU_FN(concat); HG_CPU_FN(slice); HG_CPU_FN(slice_bwd);
HG_CPU_FN(masked_fill);
HG_CPU_FN(attention); HG_CPU_FN(attention_bwd);
HG_CPU_FN(sum); HG_CPU_FN(mean); HG_CPU_FN(expand_like);
HG_CPU_FN(cross_entropy); HG_CPU_FN(cross_entropy_bwd); HG_CPU_FN(nll);
HG_CPU_FN(nll_bwd);
HG_CPU_FN(sgd_step); HG_CPU_FN(adamw_step); HG_CPU_FN(adadelta_step);

/* CUDA kernels (the files in kernels/cuda/), the same list: every op has
 * both.  Built only with HG_HAVE_CUDA; the table points to NULL otherwise. */
#ifdef HG_HAVE_CUDA
HG_CUDA_FN(matmul); HG_CUDA_FN(matmul_reduce);
HG_CUDA_FN(conv2d); HG_CUDA_FN(conv2d_bwd_data); HG_CUDA_FN(conv2d_bwd_filter);
HG_CUDA_FN(maxpool2d); HG_CUDA_FN(maxpool2d_bwd);
HG_CUDA_FN(add); HG_CUDA_FN(sub); HG_CUDA_FN(mul); HG_CUDA_FN(scale);
HG_CUDA_FN(sum_to);
HG_CUDA_FN(relu); HG_CUDA_FN(relu_bwd); HG_CUDA_FN(gelu); HG_CUDA_FN(gelu_bwd);
HG_CUDA_FN(tanh); HG_CUDA_FN(tanh_bwd);
HG_CUDA_FN(softmax); HG_CUDA_FN(softmax_bwd); HG_CUDA_FN(log_softmax);
HG_CUDA_FN(log_softmax_bwd);
HG_CUDA_FN(layernorm); HG_CUDA_FN(layernorm_bwd_x); HG_CUDA_FN(layernorm_bwd_g);
HG_CUDA_FN(dropout);
HG_CUDA_FN(embedding); HG_CUDA_FN(embedding_bwd);
HG_CUDA_FN(copy); /* RESHAPE, RESHAPE_LIKE */
HG_CUDA_FN(permute); HG_CUDA_FN(concat); HG_CUDA_FN(slice); HG_CUDA_FN(slice_bwd);
HG_CUDA_FN(masked_fill);
HG_CUDA_FN(attention); HG_CUDA_FN(attention_bwd);
HG_CUDA_FN(sum); HG_CUDA_FN(mean); HG_CUDA_FN(expand_like);
HG_CUDA_FN(cross_entropy); HG_CUDA_FN(cross_entropy_bwd); HG_CUDA_FN(nll);
HG_CUDA_FN(nll_bwd);
HG_CUDA_FN(sgd_step); HG_CUDA_FN(adamw_step); HG_CUDA_FN(adadelta_step);

HG_WS_FN(cuda_conv2d); HG_WS_FN(cuda_conv2d_bwd_data); HG_WS_FN(cuda_conv2d_bwd_filter);
/* per-row losses and LAYERNORM_BWD_G's partial sums (fixed-order reductions) */
HG_WS_FN(cuda_cross_entropy); HG_WS_FN(cuda_nll); HG_WS_FN(cuda_layernorm_bwd_g);
HG_WS_FN(cuda_matmul); HG_WS_FN(cuda_matmul_reduce); /* --bf16/--fp16 operand copies */
HG_WS_FN(cuda_sum_to); /* chunked column sums' partials */
/* ATTENTION(_BWD): the probabilities (and dS) of every row [B,H,Tq,Tk] */
HG_WS_FN(cuda_attention); HG_WS_FN(cuda_attention_bwd);
#endif

#ifdef __cplusplus
}
#endif

#endif
