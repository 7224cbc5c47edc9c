/* hg_graph.h - the graph room: tensors, builder, autodiff, memory plan,
 * executor.  Tasks build a graph; backward and the optimizer update are
 * appended to the same graph; an executor runs an ordered list of its nodes.
 *
 * Tensors and nodes are named by int ids (stable while the graph grows, and
 * easy for the planner to serialise).  -1 is "no tensor".
 */
#ifndef HG_GRAPH_H
#define HG_GRAPH_H

#include "kernels/hg_kernels.h"

struct hg_graph;
struct hg_exec;

/* A symbolic dimension is stored as a negative number in a declared shape. */
#define HG_SYM(k) (-1 - (int64_t)(k))
#define HG_MAX_SYMS 64 /* symbols per graph (a split graph has one per piece) */
#define HG_IS_SYM(d) ((d) < 0)
#define HG_SYM_INDEX(d) ((int)(-1 - (d)))

enum hg_tkind {
    HG_T_INPUT,   /* filled by the caller before each run (data, labels) */
    HG_T_PARAM,   /* trained weights: one contiguous block */
    HG_T_GRAD,    /* gradient of a param: one contiguous block, same order */
    HG_T_STATE,   /* optimizer state (momentum, Adam m and v): one block */
    HG_T_CONST,   /* set once (the loss seed dL/dL = 1) */
    HG_T_ACT      /* everything else: placed by the liveness plan */
};

enum hg_phase { HG_PH_FORWARD = 1, HG_PH_BACKWARD = 2, HG_PH_UPDATE = 4, HG_PH_ALL = 7 };

enum hg_init { HG_INIT_ZERO, HG_INIT_ONE, HG_INIT_UNIFORM, HG_INIT_NORMAL };

struct hg_tensor_info {
    const char *name;       /* params, inputs: as given; others: generated */
    enum hg_tkind kind;
    enum hg_dtype dtype;
    struct hg_shape decl;   /* declared shape (may hold HG_SYM) */
    struct hg_shape shape;  /* concrete, for the current symbol values */
    int batch_axis;         /* -1: none */
    int producer;           /* node id, -1 for inputs/params/state/const */
    int grad_of;            /* HG_T_GRAD: the param; else -1 */
};

struct hg_node_info {
    enum hg_op op;
    int n_in;
    int in[HG_MAX_INPUTS];
    int out;                /* -1 for update ops */
    union hg_attr attr;
    enum hg_phase phase;
};

/* Building */
struct hg_graph *hg_graph_new(void);
void hg_graph_free(struct hg_graph *g);
/* Declares a symbolic dimension with its maximum (plans use the maximum). */
int64_t hg_graph_sym(struct hg_graph *g, const char *name, int64_t max);
int hg_graph_sym_find(const struct hg_graph *g, const char *name);
/* The maximum symbol k was declared with (what plans hold); 0 if none. */
int64_t hg_graph_sym_max(const struct hg_graph *g, int k);
/* Token cap: plans hold batch x length <= cap for each listed length
 * symbol instead of max batch x max length (what --max-tokens promises:
 * long sequences come in small batches).  Plans then size every tensor
 * for the worst "corner" of that region (the largest of a posynomial in
 * the symbols is at one of them), resolving a point outside it is an
 * error naming it, and a NULL symbol array means the first corner
 * (largest batch) rather than every maximum. */
int hg_graph_token_cap(struct hg_graph *g, int batch_k, const int *len_k, int nlen,
                       int64_t cap);
/* The corner points (symbol values) a plan is sized for: [n][HG_MAX_SYMS];
 * returns n (1 without a cap: the maxima). */
int hg_graph_token_corners(const struct hg_graph *g, int64_t (*corner)[HG_MAX_SYMS],
                           int max_corners);
int hg_graph_n_syms(const struct hg_graph *g);
const char *hg_graph_sym_name(const struct hg_graph *g, int k); /* NULL if none */
int hg_graph_input(struct hg_graph *g, const char *name, enum hg_dtype dt,
                   int ndim, const int64_t *dim, int batch_axis);
int hg_graph_param(struct hg_graph *g, const char *name, int ndim,
                   const int64_t *dim, enum hg_init init, float scale);
/* Appends one op; aborts (HG_CHECK) on a programmer error such as a shape
 * mismatch at the maximum symbol values, with the op and shapes named. */
int hg_graph_op(struct hg_graph *g, enum hg_op op, const int *in, int n_in,
                const union hg_attr *attr);

/* Communication ops (HG_OPF_COMM: ALLREDUCE, SEND, RECV, PS_PUSH,
 * PS_PULL, attributes in attr.comm) are nodes like any other, run by the
 * callbacks the executor's owner installs (hg_exec_set_comm below), so the
 * graph never knows ranks.  SEND is hg_graph_op(g, HG_OP_SEND, &x, 1, at),
 * RECV hg_graph_op(g, HG_OP_RECV, NULL, 0, at) with the declared output
 * in at->comm.  hg_graph_comm_span appends ALLREDUCE, PS_PUSH or PS_PULL
 * over first..last of one flat block (params or grads in parameter order,
 * state in id order; first == last: that one tensor, of any kind), with
 * attr->comm.count filled in: two inputs name a span of any length, so a
 * bucket of hundreds of gradients keeps within HG_MAX_INPUTS.  They update
 * in place and have no output; like the optimizer ops they order by id
 * after the nodes that write their tensors.  Autodiff refuses a comm op
 * that reads a tensor depending on a parameter (no gradient rule). */
int hg_graph_comm_span(struct hg_graph *g, enum hg_op op, int first, int last,
                       const union hg_attr *attr);
/* Model parallelism (controller/mp.c): a RECV node whose output has the
 * dtype, batch axis and shape of tensor `like` (made on another rank) at
 * every resolve, so its readers see the shapes `like`'s readers would;
 * attr->comm's peer, group and tag are kept, its dtype and dims filled
 * in.  Returns the output. */
int hg_graph_recv_like(struct hg_graph *g, int like, const union hg_attr *attr);
/* Tensor parallelism (controller/tp.c): a parameter's, state's or input's
 * constant axis cut to the len of this rank's shard; the nodes reading it
 * take their shapes from it at the next resolve. */
void hg_graph_narrow(struct hg_graph *g, int t, int axis, int64_t len);
/* Node `node`'s input k becomes t (of its dtype; shapes are checked by
 * the next resolve), and its attributes attr (an embedding's shard). */
void hg_graph_set_input(struct hg_graph *g, int node, int k, int t);
void hg_graph_set_attr(struct hg_graph *g, int node, const union hg_attr *attr);
/* Node `node` reads `to` wherever it read `from` (a RECV output standing
 * for a tensor of another rank: the same dtype and shape). */
void hg_graph_rewire(struct hg_graph *g, int node, int from, int to);
/* Nodes a and b exchange their outputs (the same dtype and shape): what
 * read a's now reads b's result (controller/hybrid.c: a parameter's
 * gradient made by another sum). */
void hg_graph_swap_outputs(struct hg_graph *g, int a, int b);
/* The phase appended nodes get (backward and optimizer set their own);
 * returns the previous one.  Whole-model DP appends its AllReduce nodes in
 * HG_PH_UPDATE between hg_graph_backward and hg_graph_optimizer. */
enum hg_phase hg_graph_set_phase(struct hg_graph *g, enum hg_phase phase);

/* Keeps t readable after a run (outputs that later ops consume, such as
 * logits; unconsumed tensors such as the loss are kept anyway). */
void hg_graph_keep(struct hg_graph *g, int t);

/* Queries */
int hg_graph_n_tensors(const struct hg_graph *g);
int hg_graph_n_nodes(const struct hg_graph *g);
const struct hg_tensor_info *hg_graph_tensor(const struct hg_graph *g, int t);
const struct hg_node_info *hg_graph_node(const struct hg_graph *g, int n);
int hg_graph_find(const struct hg_graph *g, const char *name); /* -1 if none */
int hg_graph_n_params(const struct hg_graph *g);
int hg_graph_param_at(const struct hg_graph *g, int i); /* i-th param tensor */
int64_t hg_graph_param_count(const struct hg_graph *g); /* scalars */
/* mask[nt]: bit i of mask[t] set when axis i of tensor t changes with a
 * symbol (a batch, a length), found by the shape rules at the maxima and
 * one less; 0 for every axis of a graph without symbols.  -1 when a rule
 * refuses the smaller shapes (the mask then all 0). */
int hg_graph_varying(const struct hg_graph *g, unsigned char *mask);
/* Resolves every concrete shape for the given symbol values (NULL: maxima). */
int hg_graph_resolve(struct hg_graph *g, const int64_t *sym_values, char *err,
                     size_t errlen);
/* Topological order of the nodes in the given phases, by phase then id. */
int hg_graph_order(const struct hg_graph *g, int phase_mask, int *order);
/* Sum of the declared costs of the nodes at the current shapes. */
void hg_graph_cost(const struct hg_graph *g, struct hg_cost *total);
/* Writes a readable dump (one line per node). */
void hg_graph_print(const struct hg_graph *g, void *file);

/* Autodiff: appends the backward of loss ([1]) w.r.t. every param. */
int hg_graph_backward(struct hg_graph *g, int loss);
int hg_graph_grad(const struct hg_graph *g, int param);
/* After hg_graph_backward: the forward node whose gradient rule appended
 * node `node` (-1: none: a forward or update node, a gradient's copy into
 * its GRAD tensor), and *accum (may be NULL) 1 when it is an ADD summing a
 * further contribution into a tensor's gradient (the tensor feeds several
 * consumers).  Two graphs that differ only in how often a tensor is
 * consumed append the same other nodes per forward node, in the same
 * order: controller/hybrid.c places the backward of a split graph by it. */
int hg_graph_node_origin(const struct hg_graph *g, int node, int *accum); /* -1 if none */
/* An accumulating ADD's tensor: the one whose gradient it sums, its
 * in[0] the sum so far and in[1] one more contribution; -1: not one. */
int hg_graph_node_accumulates(const struct hg_graph *g, int node);
/* Recomputation (graph/recompute.c), after hg_graph_backward: each of the
 * forward nodes[n] whose output the backward reads (or a copy needs) is
 * copied, appended in the backward phase, and the backward reads the
 * copies, so the originals' outputs die with the forward.  Returns the
 * copies made, or -1 with err (a node that is no forward op with an
 * output).  Appended nodes come after everything before (the optimizer's
 * too): hg_graph_order_recompute puts them in place. */
int hg_graph_recompute(struct hg_graph *g, const int *nodes, int n, char *err,
                       size_t errlen);
/* The forward node a copy recomputes; -1: not a copy. */
int hg_graph_node_recomputes(const struct hg_graph *g, int node);
/* Moves the copies in order[n] to just before their first reader there
 * (after the copies they read); copies nothing there reads go just before
 * the update phase.  -1: out of memory. */
int hg_graph_order_recompute(const struct hg_graph *g, int *order, int n);

/* Optimizer update as ops of the graph (one per param). lr, step and the
 * gradient scale come from the run (struct hg_step).  hyper: .sgd for SGD,
 * .adam for ADAMW and ADAM (adam.l2 is set from the kind), .adadelta for
 * ADADELTA.  State tensors carry torch's names (<param>.momentum_buffer,
 * .exp_avg, .exp_avg_sq, .square_avg, .acc_delta). */
enum hg_optim { HG_OPTIM_SGD, HG_OPTIM_ADAMW, HG_OPTIM_ADAM, HG_OPTIM_ADADELTA };
int hg_graph_optimizer(struct hg_graph *g, enum hg_optim kind,
                       const union hg_attr *hyper);
/* An optimizer by the name the programs take ("sgd", "adamw", "adam",
 * "adadelta"): 0, or -1 for another name. */
int hg_optim_kind(const char *name, enum hg_optim *kind);

/* Parameter initialisation, deterministic in seed (PyTorch-like fan-in). */
void hg_graph_init_params(struct hg_graph *g, struct hg_exec *ex, uint64_t seed);

/* Builder sugar: one line per op. */
int hg_matmul(struct hg_graph *g, int a, int b, int trans_a, int trans_b);
int hg_add(struct hg_graph *g, int a, int b);
int hg_sub(struct hg_graph *g, int a, int b);
int hg_mul(struct hg_graph *g, int a, int b);
int hg_scale(struct hg_graph *g, int x, float alpha);
int hg_relu(struct hg_graph *g, int x);
int hg_gelu(struct hg_graph *g, int x);
int hg_tanh(struct hg_graph *g, int x);
int hg_softmax(struct hg_graph *g, int x);
int hg_log_softmax(struct hg_graph *g, int x);
int hg_reshape(struct hg_graph *g, int x, int ndim, const int64_t *dim);
int hg_permute(struct hg_graph *g, int x, int ndim, const int *perm);
int hg_concat(struct hg_graph *g, const int *xs, int n, int axis);
int hg_slice(struct hg_graph *g, int x, int axis, int64_t start, int64_t len);
/* Splits x along axis into n equal parts, written to out[n]. */
void hg_split(struct hg_graph *g, int x, int axis, int n, int *out);
int hg_sum(struct hg_graph *g, int x, int axis);
int hg_mean(struct hg_graph *g, int x, int axis);
int hg_dropout(struct hg_graph *g, int x, float p, uint64_t seed);
/* The input dropout keys its masks by (docs/reproducibility.md,
 * "Dropout"): I32 [B], each row's sample index in the dataset; made by the
 * first hg_dropout or hg_attention with p > 0, filled by the controller. */
#define HG_SAMPLE_IDS "sample_id"
int hg_masked_fill(struct hg_graph *g, int scores, int keep, int causal);
/* One fused ATTENTION op: q[B,H,Tq,Dh], k, v[B,H,Tk,Dh], keep[B,Tk] i32 or
 * -1 -> [B,H,Tq,Dh]; scale 1/sqrt(Dh), masked scores -1e30 (as
 * hg_masked_fill), dropout on the probabilities (seed mixed with the
 * node's id, as hg_dropout does). */
int hg_attention(struct hg_graph *g, int q, int k, int v, int keep, int causal,
                 float dropout, uint64_t seed);
int hg_cross_entropy(struct hg_graph *g, int logits, int target,
                     int ignore_index, float smoothing);
int hg_nll(struct hg_graph *g, int logp, int target, int ignore_index,
           float smoothing);
int hg_maxpool2d(struct hg_graph *g, int x, int k, int stride, int pad);

/* Layers: helpers over ops that declare their parameters with PyTorch's
 * names (prefix.weight, prefix.bias) and PyTorch's default init. */
int hg_layer_linear(struct hg_graph *g, const char *prefix, int x,
                    int64_t in_features, int64_t out_features, int bias);
int hg_layer_conv2d(struct hg_graph *g, const char *prefix, int x,
                    int64_t in_ch, int64_t out_ch, int k, int stride, int pad,
                    int bias);
int hg_layer_layernorm(struct hg_graph *g, const char *prefix, int x,
                       int64_t d, float eps);
int hg_layer_embedding(struct hg_graph *g, const char *prefix, int ids,
                       int64_t vocab, int64_t d);
/* What attention layers build (hg_layer_mha, the Transformer layers; not
 * the incremental hg_layer_mha_attend): one fused ATTENTION op per
 * attention (1), or the unfused chain MATMUL, MASKED_FILL, SOFTMAX,
 * DROPOUT, MATMUL (0).  Both compute the same values to float rounding,
 * the attention's dropout mask included (a model's later dropouts draw
 * other masks: their seeds mix in node ids).  A new graph takes the
 * process default, fused
 * unless hg_graph_default_fused_attention(0) was called (hgtrain does for
 * GPU runs: the CUDA kernel is not the GPU default yet, docs/cuda.md). */
void hg_graph_default_fused_attention(int fused);
void hg_graph_set_fused_attention(struct hg_graph *g, int fused);
int hg_graph_fused_attention(const struct hg_graph *g);
/* Multi-head attention (fairseq names: prefix.{q,k,v,out}_proj.*).
 * q[B,Tq,D], kv[B,Tk,D]; key_keep[B,Tk] i32 (1 = token, 0 = pad) or -1. */
int hg_layer_mha(struct hg_graph *g, const char *prefix, int q, int kv,
                 int key_keep, int64_t d, int heads, int causal, float dropout,
                 uint64_t seed);
/* Post-norm Transformer layers as torch.nn.Transformer{En,De}coderLayer
 * with ReLU (fairseq names: self_attn, encoder_attn, fc1, fc2,
 * self_attn_layer_norm, encoder_attn_layer_norm, final_layer_norm). */
int hg_layer_transformer_encoder(struct hg_graph *g, const char *prefix,
                                 int x, int keep, int64_t d, int heads,
                                 int64_t ffn, float dropout, uint64_t seed);
int hg_layer_transformer_decoder(struct hg_graph *g, const char *prefix,
                                 int x, int enc, int enc_keep, int64_t d,
                                 int heads, int64_t ffn, float dropout,
                                 uint64_t seed);

/* The same layers as fairseq's TransformerEncoderLayer/DecoderLayer with
 * every knob: separate dropouts (residual `dropout`, `attention_dropout` on
 * the attention weights, `activation_dropout` after the FFN's activation),
 * pre-norm (normalize_before: x + f(LN(x)), the caller adds the stack's
 * final layer norm) or post-norm (LN(x + f(x))), and fairseq's init
 * (fairseq_init: q/k/v weights xavier_uniform with gain 1/sqrt 2, out_proj
 * and fc1/fc2 xavier_uniform with zero biases) or PyTorch's Linear init.
 * The plain functions above are these with one dropout everywhere,
 * post-norm and PyTorch's init. */
struct hg_tlayer_cfg {
    int64_t d, ffn;
    int heads;
    int gelu;                 /* the FFN's activation: 0 ReLU (fairseq's
                                 default), 1 GELU (RoBERTa's; smooth, so a
                                 rounding difference cannot flip a unit) */
    float dropout, attention_dropout, activation_dropout;
    int normalize_before;
    int fairseq_init;
    uint64_t seed;            /* dropout stream */
};
int hg_layer_transformer_encoder_cfg(struct hg_graph *g, const char *prefix,
                                     int x, int keep,
                                     const struct hg_tlayer_cfg *cfg);
/* self_keep: [B,T] key padding of the decoder's own input, or -1 (with
 * right padding the causal mask already hides the pads from real tokens). */
int hg_layer_transformer_decoder_cfg(struct hg_graph *g, const char *prefix,
                                     int x, int self_keep, int enc, int enc_keep,
                                     const struct hg_tlayer_cfg *cfg);

/* Incremental (one position per step) decoding with the parameter names of
 * hg_layer_transformer_decoder_cfg, so a trained model's checkpoint loads:
 * hg_layer_mha_project_kv declares prefix.{k,v}_proj and gives K, V
 * [B,Tk,D] (the encoder side's keys/values, computed once per batch);
 * hg_layer_mha_attend declares prefix.{q,out}_proj and attends q [B,Tq,D]
 * over such projected K, V (key_keep [B,Tk] or -1; no causal mask, no
 * dropout).  hg_layer_transformer_decoder_step is one decoder layer for one
 * new position x [N,1,D]: self_k/self_v [N,L,D] are the cached projected
 * keys/values of the earlier positions, self_keep [N,L+1] masks them (and
 * the new one, last); k_new, v_new [N,1,D] are the new position's row
 * (kept), which the caller appends to its caches. enc_k/enc_v [N,S,D]
 * from hg_layer_mha_project_kv over the encoder output, enc_keep [N,S]. */
void hg_layer_mha_project_kv(struct hg_graph *g, const char *prefix, int kv, int64_t d,
                             int fairseq_init, int *K, int *V);
int hg_layer_mha_attend(struct hg_graph *g, const char *prefix, int q, int K, int V,
                        int key_keep, int64_t d, int heads, int fairseq_init);
int hg_layer_transformer_decoder_step(struct hg_graph *g, const char *prefix, int x,
                                      int self_k, int self_v, int self_keep, int enc_k,
                                      int enc_v, int enc_keep,
                                      const struct hg_tlayer_cfg *cfg, int *k_new,
                                      int *v_new);

/* Execution: a memory plan for a node order, computed once at the maximum
 * symbol values; runs never allocate. */
struct hg_mem_stats {
    size_t param_bytes, grad_bytes, state_bytes, input_bytes, const_bytes;
    size_t act_bytes;  /* the liveness-planned arena */
    size_t ws_bytes;   /* the largest workspace of any node */
    size_t act_naive;  /* what the arena would be without reuse */
    size_t total;      /* everything above: the peak, known in advance */
};

struct hg_exec *hg_exec_new(struct hg_graph *g, const int *order, int n,
                            char *err, size_t errlen);
/* The same plan on a device: -1 is the CPU (hg_exec_new), d >= 0 is
 * cuda:d (an error naming it when built without CUDA or without such a
 * GPU).  On a GPU the plan is one device allocation with the CPU plan's
 * layout, mirrored by one pinned host block: hg_exec_data and the block
 * functions below return the host mirror, and the host is the truth until
 * it is uploaded.  A run uploads the inputs (when it starts at position 0)
 * and, when it ends, downloads the outputs it produced (kept or unread
 * tensors: losses, metric sources) and reports device-side errors.
 * Params, grads and state move only when asked (hg_exec_upload/_download;
 * both accept NULL, a graph read without a plan, and do nothing). */
struct hg_exec *hg_exec_new_dev(struct hg_graph *g, const int *order, int n,
                                int device, char *err, size_t errlen);
int hg_exec_device(const struct hg_exec *ex); /* -1: CPU */
enum hg_region {
    HG_R_PARAMS = 1, HG_R_GRADS = 2, HG_R_STATE = 4, HG_R_INPUTS = 8,
    HG_R_ALL = 15
};
/* Host mirror -> device / device -> host for the regions; no-ops on the
 * CPU.  Download waits for the copies. */
int hg_exec_upload(struct hg_exec *ex, unsigned regions, char *err, size_t errlen);
int hg_exec_download(struct hg_exec *ex, unsigned regions, char *err, size_t errlen);
/* The grad block where it lives (host or device), so a GPU plan's
 * gradients stay on the GPU: SAVE copies it to a stash (allocated on first
 * use), ADD adds it into the stash, RESTORE copies the stash back, ZERO
 * clears it.  hg_exec_grad_sumsq: sum of squares in double in a fixed order
 * (the CPU's: 16 float lanes per 4096, blocks added in double). */
enum hg_grad_op { HG_GRAD_SAVE, HG_GRAD_ADD, HG_GRAD_RESTORE, HG_GRAD_ZERO };
int hg_exec_grad_op(struct hg_exec *ex, enum hg_grad_op op, char *err, size_t errlen);
/* Before the first grad op: the activations that nodes at positions >=
 * begin read and nodes before it make (a gradient another rank sent, a
 * sum all-reduced among some ranks: what an update reads outside the
 * grad block) join SAVE, ADD and RESTORE, so that runs of [0, begin)
 * accumulate them as the grad block.  Their number, or -1 with err naming
 * one that cannot be summed (not f32, a shape that changes, a view). */
int hg_exec_grad_carry(struct hg_exec *ex, int begin, char *err, size_t errlen);
int hg_exec_grad_sumsq(struct hg_exec *ex, double *out, char *err, size_t errlen);
/* Mixed precision of a GPU plan's GEMMs (enum hg_lowp; the CPU ignores
 * it).  The loss scale multiplies the backward's seed dL/dL (fp16's
 * dynamic loss scaling: the grads come out scaled by it). */
void hg_exec_set_lowp(struct hg_exec *ex, int lowp);
void hg_exec_set_loss_scale(struct hg_exec *ex, float scale);
/* Device address of the grad block (NCCL allreduce); NULL on the CPU. */
float *hg_exec_grad_block_dev(struct hg_exec *ex, size_t *n);
void hg_exec_free(struct hg_exec *ex);
void hg_exec_mem(const struct hg_exec *ex, struct hg_mem_stats *st);
/* Storage of a tensor (params, inputs, grads, acts while live). */
void *hg_exec_data(struct hg_exec *ex, int t);
float *hg_exec_param_block(struct hg_exec *ex, size_t *n); /* all params */
float *hg_exec_grad_block(struct hg_exec *ex, size_t *n);  /* all grads */
float *hg_exec_state_block(struct hg_exec *ex, size_t *n);

struct hg_step {
    const int64_t *sym;  /* symbol values for this batch; NULL: maxima */
    uint64_t step;       /* 1-based optimizer step */
    float lr;
    float grad_scale;    /* 1 / sample size */
    int nthreads;        /* 0: current setting */
};
/* Runs order[begin:end) of the plan's order. Returns 0, or -1 with a message
 * naming the node and op. */
int hg_exec_run(struct hg_exec *ex, const struct hg_step *st, int begin,
                int end, char *err, size_t errlen);
int hg_exec_n(const struct hg_exec *ex);
int hg_exec_order_at(const struct hg_exec *ex, int i); /* node id at position i */
/* Communication nodes run through callbacks installed from above (the
 * controller's, over comm/; a test's loopback): start begins the node's
 * transfer (node: its id), wait returns once it is done; each returns 0 or
 * -1 with err.  The executor starts comm nodes strictly in order position
 * order, each at most once per pass, and waits each at its own position:
 * at a comm node it starts every unstarted comm node up to it, and the
 * no-output ones right after it in the run (their inputs are final there
 * too), then waits for it.  A pass ends with the last comm node's wait.
 * With early start on, it also starts a no-output comm node, during any
 * run, right after its ready position (hg_exec_comm_ready: the last
 * earlier position that reads or writes any tensor of its buffer; -1:
 * none, at the start of a run) once every earlier comm node has started:
 * what overlaps an AllReduce with the rest of the backward.  Every rank
 * running the same graph thus starts the same transfers in the same order.
 * A comm node with no callbacks installed fails the run naming it. */
struct hg_exec_comm_ops {
    int (*start)(void *arg, struct hg_exec *ex, int node, char *err, size_t errlen);
    int (*wait)(void *arg, struct hg_exec *ex, int node, char *err, size_t errlen);
};
void hg_exec_set_comm(struct hg_exec *ex, const struct hg_exec_comm_ops *ops, void *arg);
void hg_exec_set_early_comm(struct hg_exec *ex, int on);
/* With defer on, a comm node with an output (a RECV) whose first reader
 * comes later is started at its position as always but waited just before
 * that reader (or at the end of the run, whichever comes first): a
 * receive started early lands while the ops between compute.  The
 * callbacks must allow it (the wait of a started request). */
void hg_exec_set_comm_defer(struct hg_exec *ex, int on);
/* Emulates a device f times slower (a test and benchmark aid; f <= 1:
 * off, the default): every node that is not a comm node adds f - 1 times
 * its measured wall time to a debt, slept off (nanosleep: no core is used)
 * whenever it reaches about 1 ms, before any comm node starts (early
 * starts included) and at the end of every hg_exec_run; a comm node's own
 * time is never slowed, nor are the results changed.  On a GPU plan
 * (asynchronous kernels) the kernels between two comm nodes are timed
 * as one stretch: the device is waited for before each comm node and at
 * the run's end, and f - 1 times the stretch is slept there. */
void hg_exec_set_slowdown(struct hg_exec *ex, double f);
int hg_exec_comm_ready(const struct hg_exec *ex, int pos); /* pos: a comm node's */
/* A comm node's buffer in this plan: SEND's input, RECV's and RESHARD's output (at the
 * current shapes), the span of ALLREDUCE/PS_*.  host: in the host plan
 * (the mirror on a GPU); dev: on the device, NULL on the CPU. */
struct hg_exec_buf {
    void *host, *dev;
    size_t bytes;
};
void hg_exec_comm_buf(struct hg_exec *ex, int node, struct hg_exec_buf *b);
/* A RESHARD node's input (its buffer above is the output). */
void hg_exec_comm_in(struct hg_exec *ex, int node, struct hg_exec_buf *b);
/* Copies a comm node's buffer device -> host mirror (to_host, waits) or
 * back (queued on the compute stream); no-ops on the CPU.  For a backend
 * that sums host memory under a GPU plan. */
int hg_exec_comm_copy(struct hg_exec *ex, int node, int to_host, char *err, size_t errlen);
/* The position hg_exec_run is at (-1 outside a run): a callback's view. */
int hg_exec_pos(const struct hg_exec *ex);
/* The compute stream (a cudaStream_t) of a GPU plan; NULL on the CPU. */
void *hg_exec_stream(struct hg_exec *ex);
/* Per-node wall time, accumulated over runs (the profiler's raw data). */
void hg_exec_profile(struct hg_exec *ex, int on);
const double *hg_exec_profile_times(const struct hg_exec *ex); /* [n] or NULL */
/* On a GPU with the profile on: the launches (kernels, cuBLAS/cuDNN calls,
 * stream copies and sets) the op kernels queued since it was turned on;
 * -1 on the CPU (one kernel call is one call: hg_exec_kernel_calls). */
long long hg_exec_launches(const struct hg_exec *ex);
/* The timeline of the latest run (hgtrain --trace): each position's start
 * and end (hg_now) when it last ran; a GPU plan's are launch times. */
void hg_exec_trace(struct hg_exec *ex, int on);
const double *hg_exec_trace_times(const struct hg_exec *ex); /* [n][2] or NULL */
/* Kernel calls in one pass over the whole order (communication nodes
 * aside); *views: reshapes and slices that are views (no call), *fused:
 * update nodes run with an earlier one (memplan.c, fuse_updates in
 * exec.c); *copied: the bytes the layout ops that do copy (reshape,
 * permute, concat, slice, slice backward) write in one pass at the
 * latest resolved shapes. */
int hg_exec_kernel_calls(const struct hg_exec *ex, int *views, int *fused, size_t *copied);
/* Sets up shapes for st->sym without running anything (for filling inputs). */
int hg_exec_prepare(struct hg_exec *ex, const struct hg_step *st, char *err,
                    size_t errlen);

#endif
