/* cuda_cases_a.h - CUDA vs CPU cases: elementwise, layout, reductions,
 * optimizers (format: tests/cuda_cases.h). */
#ifndef HG_CUDA_CASES_A_H
#define HG_CUDA_CASES_A_H

#include "tests/cuda_cases.h"

static void gen_relu(struct cu_rng *r, struct cu_case *c)
{
    c->op = HG_OP_RELU;
    c->n_in = 1;
    c->in[0] = CU_SHAPE(cu_int(r, 1, 7), cu_int(r, 1, 3000));
    c->tol = 0;
}

static const cu_gen_fn cu_gens_a[] = {gen_relu};

#endif
