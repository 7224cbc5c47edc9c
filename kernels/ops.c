/* ops.c - the op table: one row per op, indexed by enum hg_op. */
#include <assert.h>

#include "kernels/ops-impl.h"

#ifdef HG_HAVE_CUDA
#define CUDA_FN(fn) hg_cuda_##fn
#define CUDA_WS(fn) hg_ws_cuda_##fn
#else
#define CUDA_FN(fn) NULL
#define CUDA_WS(fn) NULL
#endif

#define ROW(op, nm, nin, fl, sh, co, ws_, fn)                                  \
    [op] = {.name = nm, .n_in = nin, .flags = fl, .shape = hg_shape_##sh,       \
            .cost = hg_cost_##co, .workspace = ws_, .cpu = hg_cpu_##fn,          \
            .cuda = CUDA_FN(fn)}
/* ops whose CUDA kernel needs a workspace of its own (cuDNN's, or the
 * partial sums of a fixed-order reduction) */
#define ROW_CWS(op, nm, nin, fl, sh, co, ws_, fn)                              \
    [op] = {.name = nm, .n_in = nin, .flags = fl, .shape = hg_shape_##sh,       \
            .cost = hg_cost_##co, .workspace = ws_, .cpu = hg_cpu_##fn,          \
            .cuda = CUDA_FN(fn), .cuda_workspace = CUDA_WS(fn)}

/* communication: no kernel on either backend (the executor's callbacks) */
#define ROW_COMM(op, nm, nin, fl, sh)                                          \
    [op] = {.name = nm, .n_in = nin, .flags = HG_OPF_COMM | (fl),              \
            .shape = hg_shape_##sh, .cost = hg_cost_comm}

const struct hg_op_info hg_op_table[HG_OP_COUNT] = {
    ROW_CWS(HG_OP_MATMUL, "matmul", 2, 0, matmul, matmul, NULL, matmul),
    ROW_CWS(HG_OP_MATMUL_REDUCE, "matmul_reduce", 2, 0, matmul_reduce, matmul_reduce, NULL, matmul_reduce),
    ROW_CWS(HG_OP_CONV2D, "conv2d", 2, 0, conv2d, conv2d, hg_ws_conv2d, conv2d),
    ROW_CWS(HG_OP_CONV2D_BWD_DATA, "conv2d_bwd_data", 3, 0, conv2d_bwd_data, conv2d_bwd_data, hg_ws_conv2d_bwd_data, conv2d_bwd_data),
    ROW_CWS(HG_OP_CONV2D_BWD_FILTER, "conv2d_bwd_filter", 2, 0, conv2d_bwd_filter, conv2d_bwd_filter, hg_ws_conv2d_bwd_filter, conv2d_bwd_filter),
    ROW(HG_OP_MAXPOOL2D, "maxpool2d", 1, 0, maxpool2d, pool, NULL, maxpool2d),
    ROW(HG_OP_MAXPOOL2D_BWD, "maxpool2d_bwd", 2, 0, like_first, pool, NULL, maxpool2d_bwd),
    ROW(HG_OP_ADD, "add", 2, 0, broadcast, elementwise, NULL, add),
    ROW(HG_OP_SUB, "sub", 2, 0, broadcast, elementwise, NULL, sub),
    ROW(HG_OP_MUL, "mul", 2, 0, broadcast, elementwise, NULL, mul),
    ROW(HG_OP_SCALE, "scale", 1, 0, like_first, elementwise, NULL, scale),
    ROW_CWS(HG_OP_SUM_TO, "sum_to", 2, 0, like_second, reduce, NULL, sum_to),
    ROW(HG_OP_RELU, "relu", 1, 0, like_first, elementwise, NULL, relu),
    ROW(HG_OP_RELU_BWD, "relu_bwd", 2, 0, like_first, elementwise, NULL, relu_bwd),
    ROW(HG_OP_GELU, "gelu", 1, 0, like_first, elementwise, NULL, gelu),
    ROW(HG_OP_GELU_BWD, "gelu_bwd", 2, 0, like_first, elementwise, NULL, gelu_bwd),
    ROW(HG_OP_TANH, "tanh", 1, 0, like_first, elementwise, NULL, tanh),
    ROW(HG_OP_TANH_BWD, "tanh_bwd", 2, 0, like_first, elementwise, NULL, tanh_bwd),
    ROW(HG_OP_SOFTMAX, "softmax", 1, 0, like_first, rowwise, NULL, softmax),
    ROW(HG_OP_SOFTMAX_BWD, "softmax_bwd", 2, 0, like_first, rowwise, NULL, softmax_bwd),
    ROW(HG_OP_LOG_SOFTMAX, "log_softmax", 1, 0, like_first, rowwise, NULL, log_softmax),
    ROW(HG_OP_LOG_SOFTMAX_BWD, "log_softmax_bwd", 2, 0, like_first, rowwise, NULL, log_softmax_bwd),
    ROW(HG_OP_LAYERNORM, "layernorm", 3, 0, like_first, layernorm, NULL, layernorm),
    ROW(HG_OP_LAYERNORM_BWD_X, "layernorm_bwd_x", 3, 0, like_first, layernorm, NULL, layernorm_bwd_x),
    ROW_CWS(HG_OP_LAYERNORM_BWD_G, "layernorm_bwd_g", 2, 0, layernorm_g, layernorm, NULL, layernorm_bwd_g),
    ROW(HG_OP_DROPOUT, "dropout", 2, HG_OPF_VARIADIC, like_first, elementwise, NULL, dropout),
    ROW(HG_OP_EMBEDDING, "embedding", 2, 0, embedding, embedding, NULL, embedding),
    ROW(HG_OP_EMBEDDING_BWD, "embedding_bwd", 3, 0, like_third, embedding, NULL, embedding_bwd),
    ROW(HG_OP_RESHAPE, "reshape", 1, 0, reshape, copy, NULL, copy),
    ROW(HG_OP_RESHAPE_LIKE, "reshape_like", 2, 0, like_second, copy, NULL, copy),
    ROW(HG_OP_PERMUTE, "permute", 1, 0, permute, copy, NULL, permute),
    ROW(HG_OP_CONCAT, "concat", HG_MAX_INPUTS, HG_OPF_VARIADIC, concat, copy, NULL, concat),
    ROW(HG_OP_SLICE, "slice", 1, 0, slice, copy, NULL, slice),
    ROW(HG_OP_SLICE_BWD, "slice_bwd", 2, 0, like_second, copy, NULL, slice_bwd),
    ROW(HG_OP_MASKED_FILL, "masked_fill", 2, HG_OPF_VARIADIC, masked_fill, copy, NULL, masked_fill),
    ROW_CWS(HG_OP_ATTENTION, "attention", 5, HG_OPF_VARIADIC, attention, attention, hg_ws_attention, attention),
    ROW_CWS(HG_OP_ATTENTION_BWD, "attention_bwd", 6, HG_OPF_VARIADIC, attention_bwd, attention_bwd, hg_ws_attention_bwd, attention_bwd),
    ROW(HG_OP_SUM, "sum", 1, 0, reduce, reduce, NULL, sum),
    ROW(HG_OP_MEAN, "mean", 1, 0, reduce, reduce, NULL, mean),
    ROW(HG_OP_EXPAND_LIKE, "expand_like", 2, 0, like_second, copy, NULL, expand_like),
    ROW_CWS(HG_OP_CROSS_ENTROPY, "cross_entropy", 2, 0, loss, loss, NULL, cross_entropy),
    ROW(HG_OP_CROSS_ENTROPY_BWD, "cross_entropy_bwd", 3, 0, loss_bwd, loss, NULL, cross_entropy_bwd),
    ROW_CWS(HG_OP_NLL, "nll", 2, 0, loss, loss, NULL, nll),
    ROW(HG_OP_NLL_BWD, "nll_bwd", 3, 0, loss_bwd, loss, NULL, nll_bwd),
    ROW(HG_OP_SGD_STEP, "sgd_step", 3, HG_OPF_NO_OUTPUT, update, sgd, NULL, sgd_step),
    ROW(HG_OP_ADAMW_STEP, "adamw_step", 4, HG_OPF_NO_OUTPUT, update, adamw, NULL, adamw_step),
    ROW(HG_OP_ADADELTA_STEP, "adadelta_step", 4, HG_OPF_NO_OUTPUT, update, adadelta, NULL, adadelta_step),
    ROW_COMM(HG_OP_ALLREDUCE, "allreduce", 2, HG_OPF_NO_OUTPUT | HG_OPF_VARIADIC, comm_span),
    ROW_COMM(HG_OP_SEND, "send", 1, HG_OPF_NO_OUTPUT, send),
    ROW_COMM(HG_OP_RECV, "recv", 0, 0, recv),
    ROW_COMM(HG_OP_PS_PUSH, "ps_push", 2, HG_OPF_NO_OUTPUT | HG_OPF_VARIADIC, comm_span),
    ROW_COMM(HG_OP_PS_PULL, "ps_pull", 2, HG_OPF_NO_OUTPUT | HG_OPF_VARIADIC, comm_span),
    ROW_COMM(HG_OP_RESHARD, "reshard", 1, 0, reshard),
};

/* Adding an op: enum entry, a row above, a CPU kernel, a test case; this
 * assert is the reminder that every table indexed by the enum must grow. */
static_assert(HG_OP_COUNT == 53, "update every table indexed by enum hg_op");
/* the plug-in ABI (tasks/hg_task.h) passes attributes by pointer: a new
 * member must fit in the union's size */
static_assert(sizeof(union hg_attr) == 56, "union hg_attr changed size");
