/* rowwise.h - private to kernels/cuda/: what the row-wise kernels (softmax,
 * losses, layernorm, embedding checks) share: a row is reduced by a group
 * of TPR threads (a warp for short rows, the whole block for long ones)
 * with a fixed tree, so every run gives the same bits.
 *
 * Row kernels run HG_ROW_BLOCK threads per block; group g of the grid takes
 * rows g, g + groups, ... (HG_ROW_LOOP).  Every thread of a group must
 * reach each hg_row_reduce of its row: branches that skip a reduction must
 * depend on the row only.
 */
#ifndef HG_CUDA_ROWWISE_H
#define HG_CUDA_ROWWISE_H

#include "kernels/cuda/cuda-impl.h"
#include "kernels/shape-plan.h"

#define HG_ROW_BLOCK 256     /* threads per block of every row kernel */
#define HG_ROW_WARP_MAX 1024 /* rows up to this long: a warp each */
#define HG_FULL_MASK 0xffffffffu

struct hg_op_sum {
    template <typename T> __device__ T operator()(T a, T b) const { return a + b; }
};
/* ignores NaN, as the CPU's `mx = x > mx ? x : mx` started at -inf does */
struct hg_op_max {
    __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct hg_op_min {
    __device__ long long operator()(long long a, long long b) const
    {
        return a < b ? a : b;
    }
};

/* v reduced over the TPR threads of a row group (TPR 32: a warp; TPR ==
 * HG_ROW_BLOCK: the block, through sh[HG_ROW_BLOCK / 32]).  Every thread
 * gets the same bits: the butterfly only adds commutatively, and the warp
 * results are combined in warp order by every thread. */
template <int TPR, typename T, typename Op>
__device__ inline T hg_row_reduce(T v, T *sh, Op op)
{
    static_assert(TPR == 32 || TPR == HG_ROW_BLOCK, "a warp or the block");
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v = op(v, __shfl_xor_sync(HG_FULL_MASK, v, o));
    if (TPR == 32)
        return v;
    __syncthreads(); /* sh may still be read by the previous reduction */
    if ((threadIdx.x & 31) == 0)
        sh[threadIdx.x >> 5] = v;
    __syncthreads();
    v = sh[0];
#pragma unroll
    for (int i = 1; i < TPR / 32; i++)
        v = op(v, sh[i]);
    return v;
}

/* Rows of a row kernel: group g of TPR threads takes rows g, g + groups, ... */
#define HG_ROW_LOOP(TPR, r, rows)                                              \
    for (long long r = ((long long)blockIdx.x * HG_ROW_BLOCK + threadIdx.x) /  \
                       (TPR);                                                  \
         r < (long long)(rows);                                                \
         r += (long long)gridDim.x * (HG_ROW_BLOCK / (TPR)))

/* Blocks for rows rows of TPR threads each: enough to fill the GPU. */
static inline unsigned hg_row_blocks(const struct hg_kargs *a, long long rows,
                                     int tpr)
{
    long long per = HG_ROW_BLOCK / tpr;
    long long want = (rows + per - 1) / per;
    long long cap = (long long)hg_cu(a)->sm_count * 32;
    if (want > cap)
        want = cap;
    return want < 1 ? 1u : (unsigned)want;
}

/* Lowest i in [0, n) with v[i] outside [0, bound) and v[i] != skip, or n:
 * the first bad id / target, the one the CPU reports.  Called by all
 * HG_ROW_BLOCK threads of one block; sh: [HG_ROW_BLOCK / 32]. */
__device__ inline long long hg_first_bad(const int32_t *v, long long n,
                                         long long bound, long long skip,
                                         long long *sh)
{
    long long first = n;
    for (long long i = threadIdx.x; i < n; i += HG_ROW_BLOCK) {
        long long x = v[i];
        if (x != skip && (x < 0 || x >= bound)) {
            first = i; /* later i of this thread are larger */
            break;
        }
    }
    return hg_row_reduce<HG_ROW_BLOCK>(first, sh, hg_op_min());
}

/* Launches kern<32> (a warp per row, C <= HG_ROW_WARP_MAX columns) or
 * kern<HG_ROW_BLOCK> on a's stream, enough groups for rows */
#define HG_ROW_LAUNCH(a, C, rows, kern, ...)                                   \
    do {                                                                       \
        if ((C) <= HG_ROW_WARP_MAX)                                            \
            kern<32><<<hg_row_blocks(a, rows, 32), HG_ROW_BLOCK, 0,            \
                       hg_cu(a)->stream>>>(__VA_ARGS__);                       \
        else                                                                   \
            kern<HG_ROW_BLOCK><<<hg_row_blocks(a, rows, HG_ROW_BLOCK),         \
                                 HG_ROW_BLOCK, 0, hg_cu(a)->stream>>>(         \
                __VA_ARGS__);                                                  \
        HG_CU_LAUNCHED(a);                                                     \
    } while (0)

#endif
