/* cuda_cases.h - the case format of tests/test_cuda_ops.c.
 *
 * A generator fills one case from a random stream: the op, its input
 * shapes and dtypes, its attributes, how i32 inputs are drawn and the
 * tolerance.  test_cuda_ops runs every generator several times (fresh
 * shapes each time), runs the CPU kernel and the CUDA kernel on the same
 * random inputs and compares outputs (update ops: the tensors they update).
 * Case files: tests/cuda_cases_a.h, tests/cuda_cases_b.h.
 */
#ifndef HG_CUDA_CASES_H
#define HG_CUDA_CASES_H

#include <stdint.h>
#include <string.h>

#include "kernels/hg_kernels.h"

struct cu_rng {
    uint64_t s;
};

static inline uint64_t cu_next(struct cu_rng *r)
{
    r->s += 0x9E3779B97F4A7C15ULL;
    return hg_mix64(r->s);
}

/* uniform integer in [lo, hi] */
static inline int64_t cu_int(struct cu_rng *r, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(cu_next(r) % (uint64_t)(hi - lo + 1));
}

struct cu_case {
    enum hg_op op;
    int n_in;
    struct hg_shape in[HG_MAX_INPUTS];
    enum hg_dtype dt[HG_MAX_INPUTS];  /* 0 = HG_F32 */
    /* i32 inputs: values drawn in [ilo, ihi]; ids/targets may include
     * ignore_index by setting ilo to it */
    int64_t ilo[HG_MAX_INPUTS], ihi[HG_MAX_INPUTS];
    /* f32 inputs: uniform in [-fscale, fscale] (0 = 1); loss seeds etc. */
    float fscale[HG_MAX_INPUTS];
    union hg_attr attr;
    double tol;  /* max |cuda - cpu| / max |cpu|; 0 = must be bitwise equal */
    uint64_t step; /* kctx step (dropout stream, optimizer t); 0 = 1 */
    float lr, grad_scale; /* update ops */
    char note[64];
};

typedef void (*cu_gen_fn)(struct cu_rng *r, struct cu_case *c);

static inline struct hg_shape cu_shape(int ndim, const int64_t *dim)
{
    struct hg_shape s;
    memset(&s, 0, sizeof s);
    s.ndim = ndim;
    for (int i = 0; i < ndim; i++)
        s.dim[i] = dim[i];
    return s;
}

#define CU_SHAPE(...) cu_shape((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), \
                               (int64_t[]){__VA_ARGS__})

#endif
