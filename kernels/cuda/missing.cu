/* missing.cu - ops without a CUDA kernel yet: each says so at run time.
 * Delete a line when its kernel lands in its family's file. */
#include "kernels/cuda/cuda-impl.h"

#define MISSING(name)                                                          \
    extern "C" HG_CUDA_FN(name)                                                \
    {                                                                          \
        return hg_kerr(a->ctx->err, a->ctx->errlen,                            \
                       "%s: no CUDA kernel yet", #name);                       \
    }
#define MISSING_WS(name)                                                       \
    extern "C" HG_WS_FN(name)                                                  \
    {                                                                          \
        (void)in, (void)n_in, (void)out, (void)attr, (void)nthreads;           \
        return 0;                                                              \
    }

/* group A: elementwise, layout, reductions, optimizers */



/* group B: matmul, conv, pool, softmax, norm, embedding, losses */
MISSING(matmul)
MISSING(matmul_reduce)
MISSING(conv2d)
MISSING(conv2d_bwd_data)
MISSING(conv2d_bwd_filter)
MISSING(maxpool2d)
MISSING(maxpool2d_bwd)
MISSING(softmax)
MISSING(softmax_bwd)
MISSING(log_softmax)
MISSING(log_softmax_bwd)
MISSING(layernorm)
MISSING(layernorm_bwd_x)
MISSING(layernorm_bwd_g)
MISSING(embedding)
MISSING(embedding_bwd)
MISSING(cross_entropy)
MISSING(cross_entropy_bwd)
MISSING(nll)
MISSING(nll_bwd)
MISSING_WS(cuda_conv2d)
MISSING_WS(cuda_conv2d_bwd_data)
MISSING_WS(cuda_conv2d_bwd_filter)
