/* layers.c - builder sugar (one op per call) and layers (helpers over ops
 * that declare their parameters with PyTorch/fairseq names and init). */
#include <math.h>
#include <stdio.h>

#include "graph/graph-impl.h"

int hg_matmul(struct hg_graph *g, int a, int b, int trans_a, int trans_b)
{
    union hg_attr at = {.mm = {.trans_a = trans_a, .trans_b = trans_b, .alpha = 1.f}};
    return hg__op2(g, HG_OP_MATMUL, a, b, &at);
}

int hg_add(struct hg_graph *g, int a, int b) { return hg__op2(g, HG_OP_ADD, a, b, NULL); }
int hg_sub(struct hg_graph *g, int a, int b) { return hg__op2(g, HG_OP_SUB, a, b, NULL); }
int hg_mul(struct hg_graph *g, int a, int b) { return hg__op2(g, HG_OP_MUL, a, b, NULL); }
int hg_relu(struct hg_graph *g, int x) { return hg__op1(g, HG_OP_RELU, x, NULL); }
int hg_gelu(struct hg_graph *g, int x) { return hg__op1(g, HG_OP_GELU, x, NULL); }
int hg_tanh(struct hg_graph *g, int x) { return hg__op1(g, HG_OP_TANH, x, NULL); }
int hg_softmax(struct hg_graph *g, int x) { return hg__op1(g, HG_OP_SOFTMAX, x, NULL); }
int hg_log_softmax(struct hg_graph *g, int x) { return hg__op1(g, HG_OP_LOG_SOFTMAX, x, NULL); }

int hg_scale(struct hg_graph *g, int x, float alpha)
{
    union hg_attr at = {.scale = {alpha}};
    return hg__op1(g, HG_OP_SCALE, x, &at);
}

int hg_reshape(struct hg_graph *g, int x, int ndim, const int64_t *dim)
{
    union hg_attr at = {.reshape = {.ndim = ndim}};
    HG_CHECK(ndim > 0 && ndim <= HG_MAX_DIMS);
    for (int i = 0; i < ndim; i++)
        at.reshape.dim[i] = dim[i];
    return hg__op1(g, HG_OP_RESHAPE, x, &at);
}

int hg_permute(struct hg_graph *g, int x, int ndim, const int *perm)
{
    union hg_attr at = {.permute = {.ndim = ndim}};
    HG_CHECK(ndim > 0 && ndim <= HG_MAX_DIMS);
    for (int i = 0; i < ndim; i++)
        at.permute.perm[i] = perm[i];
    return hg__op1(g, HG_OP_PERMUTE, x, &at);
}

int hg_concat(struct hg_graph *g, const int *xs, int n, int axis)
{
    union hg_attr at = {.concat = {axis}};
    return hg_graph_op(g, HG_OP_CONCAT, xs, n, &at);
}

int hg_slice(struct hg_graph *g, int x, int axis, int64_t start, int64_t len)
{
    union hg_attr at = {.slice = {.axis = axis, .start = start, .len = len}};
    return hg__op1(g, HG_OP_SLICE, x, &at);
}

void hg_split(struct hg_graph *g, int x, int axis, int n, int *out)
{
    const struct hg_shape *s = &hg_graph_tensor(g, x)->shape;
    int ax = axis < 0 ? axis + s->ndim : axis;
    HG_CHECK(ax >= 0 && ax < s->ndim && n > 0 && s->dim[ax] % n == 0);
    int64_t len = s->dim[ax] / n;
    for (int i = 0; i < n; i++)
        out[i] = hg_slice(g, x, ax, i * len, len);
}

int hg_sum(struct hg_graph *g, int x, int axis)
{
    union hg_attr at = {.reduce = {.axis = axis, .alpha = 1.f}};
    return hg__op1(g, HG_OP_SUM, x, &at);
}

int hg_mean(struct hg_graph *g, int x, int axis)
{
    union hg_attr at = {.reduce = {.axis = axis, .alpha = 1.f}};
    return hg__op1(g, HG_OP_MEAN, x, &at);
}

/* The graph's HG_SAMPLE_IDS input [batch] for x, made on first use: the
 * dataset index of each row's sample, which keys the dropout masks (the
 * controller fills it); -1 when x has no leading batch axis or the graph
 * no "batch" symbol (its masks are then keyed by the row index). */
static int sample_ids(struct hg_graph *g, int x)
{
    int bs = hg_graph_sym_find(g, "batch"); /* the tasks' batch symbol */
    if (bs < 0 || hg_graph_tensor(g, x)->batch_axis != 0)
        return -1;
    int id = hg_graph_find(g, HG_SAMPLE_IDS);
    if (id >= 0)
        return id;
    int64_t B = HG_SYM(bs);
    return hg_graph_input(g, HG_SAMPLE_IDS, HG_I32, 1, &B, 0);
}

int hg_dropout(struct hg_graph *g, int x, float p, uint64_t seed)
{
    if (p <= 0.f)
        return x;
    HG_CHECK(p < 1.f);
    /* Every dropout of a graph draws its own mask: mix the node id in. */
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + (uint64_t)g->nn + 1;
    union hg_attr at = {.dropout = {.p = p, .seed = s}};
    int in[2] = {x, sample_ids(g, x)};
    return hg_graph_op(g, HG_OP_DROPOUT, in, in[1] >= 0 ? 2 : 1, &at);
}

/* A large finite fill instead of -inf: softmax gives exact zeros either
 * way, and a row whose keys are all masked stays finite instead of NaN. */
#define HG_MASK_FILL (-1e30f)

int hg_masked_fill(struct hg_graph *g, int scores, int keep, int causal)
{
    union hg_attr at = {.mask = {.causal = causal, .fill = HG_MASK_FILL}};
    if (keep >= 0)
        return hg__op2(g, HG_OP_MASKED_FILL, scores, keep, &at);
    return hg__op1(g, HG_OP_MASKED_FILL, scores, &at);
}

/* One ATTENTION node; seed: already mixed (a dropout's stream). */
static int attention_node(struct hg_graph *g, int q, int k, int v, int keep, int causal,
                          int self, float p, uint64_t seed)
{
    const struct hg_shape *qs = &hg_graph_tensor(g, q)->shape;
    HG_CHECK(qs->ndim == 4 && p < 1.f);
    union hg_attr at = {.attn = {.scale = 1.f / sqrtf((float)qs->dim[3]),
                                 .fill = HG_MASK_FILL, .p = p > 0.f ? p : 0.f,
                                 .causal = causal, .self = self,
                                 .seed = p > 0.f ? seed : 0}};
    int in[5] = {q, k, v, keep}, n = keep >= 0 ? 4 : 3;
    int ids = p > 0.f ? sample_ids(g, q) : -1;
    if (ids >= 0) {
        in[n++] = ids;
        at.attn.ids = 1;
    }
    return hg_graph_op(g, HG_OP_ATTENTION, in, n, &at);
}

int hg_attention(struct hg_graph *g, int q, int k, int v, int keep, int causal,
                 float dropout, uint64_t seed)
{
    /* mixed with the node's id, as hg_dropout mixes its own */
    return attention_node(g, q, k, v, keep, causal, 0, dropout,
                          seed * 0x9E3779B97F4A7C15ull + (uint64_t)g->nn + 1);
}

int hg_cross_entropy(struct hg_graph *g, int logits, int target,
                     int ignore_index, float smoothing)
{
    union hg_attr at = {.ce = {.ignore_index = ignore_index, .smoothing = smoothing}};
    return hg__op2(g, HG_OP_CROSS_ENTROPY, logits, target, &at);
}

int hg_nll(struct hg_graph *g, int logp, int target, int ignore_index,
           float smoothing)
{
    union hg_attr at = {.ce = {.ignore_index = ignore_index, .smoothing = smoothing}};
    return hg__op2(g, HG_OP_NLL, logp, target, &at);
}

int hg_maxpool2d(struct hg_graph *g, int x, int k, int stride, int pad)
{
    union hg_attr at = {.pool = {.kh = k, .kw = k, .stride = stride, .pad = pad}};
    return hg__op1(g, HG_OP_MAXPOOL2D, x, &at);
}

static int param(struct hg_graph *g, const char *prefix, const char *suffix,
                 int ndim, const int64_t *dim, enum hg_init init, float scale)
{
    char name[256];
    snprintf(name, sizeof(name), "%s.%s", prefix, suffix);
    return hg_graph_param(g, name, ndim, dim, init, scale);
}

int hg_layer_linear(struct hg_graph *g, const char *prefix, int x,
                    int64_t in_features, int64_t out_features, int bias)
{
    /* torch.nn.Linear: kaiming_uniform(a=sqrt 5) = U(+-1/sqrt(fan_in)) */
    float bound = 1.f / sqrtf((float)in_features);
    int64_t wd[2] = {out_features, in_features};
    int w = param(g, prefix, "weight", 2, wd, HG_INIT_UNIFORM, bound);
    int y = hg_matmul(g, x, w, 0, 1); /* [..,in] x [out,in]^T */
    if (bias) {
        int b = param(g, prefix, "bias", 1, &out_features, HG_INIT_UNIFORM, bound);
        y = hg_add(g, y, b);
    }
    return y;
}

int hg_layer_conv2d(struct hg_graph *g, const char *prefix, int x,
                    int64_t in_ch, int64_t out_ch, int k, int stride, int pad,
                    int bias)
{
    float bound = 1.f / sqrtf((float)(in_ch * k * k));
    int64_t wd[4] = {out_ch, in_ch, k, k};
    int w = param(g, prefix, "weight", 4, wd, HG_INIT_UNIFORM, bound);
    union hg_attr at = {.conv = {.kh = k, .kw = k, .stride_h = stride,
                                 .stride_w = stride, .pad_h = pad, .pad_w = pad}};
    int y = hg__op2(g, HG_OP_CONV2D, x, w, &at);
    if (bias) {
        /* bias [O] as torch names it, viewed as [O,1,1] to broadcast */
        int b = param(g, prefix, "bias", 1, &out_ch, HG_INIT_UNIFORM, bound);
        int64_t d3[3] = {out_ch, 1, 1};
        y = hg_add(g, y, hg_reshape(g, b, 3, d3));
    }
    return y;
}

int hg_layer_layernorm(struct hg_graph *g, const char *prefix, int x,
                       int64_t d, float eps)
{
    int gm = param(g, prefix, "weight", 1, &d, HG_INIT_ONE, 0.f);
    int bt = param(g, prefix, "bias", 1, &d, HG_INIT_ZERO, 0.f);
    union hg_attr at = {.ln = {eps}};
    int in[3] = {x, gm, bt};
    return hg_graph_op(g, HG_OP_LAYERNORM, in, 3, &at);
}

int hg_layer_embedding(struct hg_graph *g, const char *prefix, int ids,
                       int64_t vocab, int64_t d)
{
    int64_t wd[2] = {vocab, d};
    int w = param(g, prefix, "weight", 2, wd, HG_INIT_NORMAL, 1.f);
    return hg__op2(g, HG_OP_EMBEDDING, w, ids, NULL);
}

/* [B,T,D] -> [B,H,T,Dh] */
static int split_heads(struct hg_graph *g, int x, int heads, int64_t dh)
{
    int64_t d4[4] = {0, 0, heads, dh};
    int perm[4] = {0, 2, 1, 3};
    return hg_permute(g, hg_reshape(g, x, 4, d4), 4, perm);
}

/* A linear layer: PyTorch's init (wbound 0), or weight U(+-wbound) with
 * zero bias (zero_bias) or PyTorch's bias init. */
static int linear_init(struct hg_graph *g, const char *prefix, int x, int64_t in,
                       int64_t out, float wbound, int zero_bias)
{
    if (wbound <= 0.f)
        return hg_layer_linear(g, prefix, x, in, out, 1);
    float bound = 1.f / sqrtf((float)in);
    int64_t wd[2] = {out, in};
    int w = param(g, prefix, "weight", 2, wd, HG_INIT_UNIFORM, wbound);
    int b = zero_bias ? param(g, prefix, "bias", 1, &out, HG_INIT_ZERO, 0.f)
                      : param(g, prefix, "bias", 1, &out, HG_INIT_UNIFORM, bound);
    return hg_add(g, hg_matmul(g, x, w, 0, 1), b);
}

/* xavier_uniform's bound for a [out,in] weight, times gain */
static float xavier(int64_t in, int64_t out, float gain)
{
    return gain * sqrtf(6.f / (float)(in + out));
}

static int mha(struct hg_graph *g, const char *prefix, int q, int kv, int key_keep,
               int64_t d, int heads, int causal, float dropout, uint64_t seed,
               int fairseq_init)
{
    HG_CHECK(heads > 0 && d % heads == 0);
    int64_t dh = d / heads;
    float wq = fairseq_init ? xavier(d, d, 1.f / sqrtf(2.f)) : 0.f;
    float wo = fairseq_init ? xavier(d, d, 1.f) : 0.f;
    char name[256];
    snprintf(name, sizeof(name), "%s.q_proj", prefix);
    int Q = linear_init(g, name, q, d, d, wq, 0);
    snprintf(name, sizeof(name), "%s.k_proj", prefix);
    int K = linear_init(g, name, kv, d, d, wq, 0);
    snprintf(name, sizeof(name), "%s.v_proj", prefix);
    int V = linear_init(g, name, kv, d, d, wq, 0);
    Q = split_heads(g, Q, heads, dh); /* [B,H,Tq,Dh] */
    K = split_heads(g, K, heads, dh); /* [B,H,Tk,Dh] */
    V = split_heads(g, V, heads, dh); /* [B,H,Tk,Dh] */
    int O;
    if (g->fused_attention) {
        /* the seed the unfused chain's DROPOUT node would get (hg_dropout
         * mixes in its node id: after the MATMUL, MASKED_FILL, SOFTMAX) */
        int masked = causal || key_keep >= 0;
        uint64_t s = seed * 0x9E3779B97F4A7C15ull + (uint64_t)(g->nn + 2 + masked) + 1;
        /* q == kv: self-attention, Tq == Tk for every batch */
        O = attention_node(g, Q, K, V, key_keep, causal, q == kv, dropout, s); /* [B,H,Tq,Dh] */
    } else {
        union hg_attr at = {.mm = {.trans_b = 1, .alpha = 1.f / sqrtf((float)dh)}};
        int S = hg__op2(g, HG_OP_MATMUL, Q, K, &at); /* [B,H,Tq,Tk] */
        if (causal || key_keep >= 0)
            S = hg_masked_fill(g, S, key_keep, causal);
        int P = hg_dropout(g, hg_softmax(g, S), dropout, seed);
        O = hg_matmul(g, P, V, 0, 0); /* [B,H,Tq,Dh] */
    }
    int perm[4] = {0, 2, 1, 3};
    int64_t d3[3] = {0, 0, d};
    O = hg_reshape(g, hg_permute(g, O, 4, perm), 3, d3); /* [B,Tq,D] */
    snprintf(name, sizeof(name), "%s.out_proj", prefix);
    return linear_init(g, name, O, d, d, wo, fairseq_init);
}

int hg_layer_mha(struct hg_graph *g, const char *prefix, int q, int kv,
                 int key_keep, int64_t d, int heads, int causal, float dropout,
                 uint64_t seed)
{
    return mha(g, prefix, q, kv, key_keep, d, heads, causal, dropout, seed, 0);
}

/* One residual sub-layer around f = (attention or FFN): the caller passes
 * its input; pre-norm normalises it first (norm_in), post-norm after. */
static int pre(struct hg_graph *g, const char *prefix, const char *norm, int x,
               const struct hg_tlayer_cfg *c)
{
    if (!c->normalize_before)
        return x;
    char name[256];
    snprintf(name, sizeof(name), "%s.%s", prefix, norm);
    return hg_layer_layernorm(g, name, x, c->d, 1e-5f);
}

static int post(struct hg_graph *g, const char *prefix, const char *norm,
                int residual, int y, const struct hg_tlayer_cfg *c)
{
    int x = hg_add(g, residual, hg_dropout(g, y, c->dropout, c->seed));
    if (c->normalize_before)
        return x;
    char name[256];
    snprintf(name, sizeof(name), "%s.%s", prefix, norm);
    return hg_layer_layernorm(g, name, x, c->d, 1e-5f);
}

static int ffn_cfg(struct hg_graph *g, const char *prefix, int x,
                   const struct hg_tlayer_cfg *c)
{
    char name[256];
    float w1 = c->fairseq_init ? xavier(c->d, c->ffn, 1.f) : 0.f;
    float w2 = c->fairseq_init ? xavier(c->ffn, c->d, 1.f) : 0.f;
    snprintf(name, sizeof(name), "%s.fc1", prefix);
    int h = linear_init(g, name, x, c->d, c->ffn, w1, 1);
    h = c->gelu ? hg_gelu(g, h) : hg_relu(g, h);
    h = hg_dropout(g, h, c->activation_dropout, c->seed);
    snprintf(name, sizeof(name), "%s.fc2", prefix);
    return linear_init(g, name, h, c->ffn, c->d, w2, 1);
}

int hg_layer_transformer_encoder_cfg(struct hg_graph *g, const char *prefix,
                                     int x, int keep,
                                     const struct hg_tlayer_cfg *c)
{
    char name[256];
    snprintf(name, sizeof(name), "%s.self_attn", prefix);
    int h = pre(g, prefix, "self_attn_layer_norm", x, c);
    int a = mha(g, name, h, h, keep, c->d, c->heads, 0, c->attention_dropout, c->seed,
                c->fairseq_init);
    x = post(g, prefix, "self_attn_layer_norm", x, a, c);
    h = pre(g, prefix, "final_layer_norm", x, c);
    int f = ffn_cfg(g, prefix, h, c);
    return post(g, prefix, "final_layer_norm", x, f, c);
}

int hg_layer_transformer_decoder_cfg(struct hg_graph *g, const char *prefix,
                                     int x, int self_keep, int enc, int enc_keep,
                                     const struct hg_tlayer_cfg *c)
{
    char name[256];
    snprintf(name, sizeof(name), "%s.self_attn", prefix);
    int h = pre(g, prefix, "self_attn_layer_norm", x, c);
    int a = mha(g, name, h, h, self_keep, c->d, c->heads, 1, c->attention_dropout,
                c->seed, c->fairseq_init);
    x = post(g, prefix, "self_attn_layer_norm", x, a, c);
    snprintf(name, sizeof(name), "%s.encoder_attn", prefix);
    h = pre(g, prefix, "encoder_attn_layer_norm", x, c);
    a = mha(g, name, h, enc, enc_keep, c->d, c->heads, 0, c->attention_dropout, c->seed,
            c->fairseq_init);
    x = post(g, prefix, "encoder_attn_layer_norm", x, a, c);
    h = pre(g, prefix, "final_layer_norm", x, c);
    int f = ffn_cfg(g, prefix, h, c);
    return post(g, prefix, "final_layer_norm", x, f, c);
}

static struct hg_tlayer_cfg plain_cfg(int64_t d, int heads, int64_t ffn, float dropout,
                                      uint64_t seed)
{
    struct hg_tlayer_cfg c = {.d = d, .ffn = ffn, .heads = heads, .dropout = dropout,
                              .attention_dropout = dropout,
                              .activation_dropout = dropout, .seed = seed};
    return c;
}

int hg_layer_transformer_encoder(struct hg_graph *g, const char *prefix,
                                 int x, int keep, int64_t d, int heads,
                                 int64_t ffn, float dropout, uint64_t seed)
{
    struct hg_tlayer_cfg c = plain_cfg(d, heads, ffn, dropout, seed);
    return hg_layer_transformer_encoder_cfg(g, prefix, x, keep, &c);
}

int hg_layer_transformer_decoder(struct hg_graph *g, const char *prefix,
                                 int x, int enc, int enc_keep, int64_t d,
                                 int heads, int64_t ffn, float dropout,
                                 uint64_t seed)
{
    struct hg_tlayer_cfg c = plain_cfg(d, heads, ffn, dropout, seed);
    return hg_layer_transformer_decoder_cfg(g, prefix, x, -1, enc, enc_keep, &c);
}

/* ---------------------------------------------- incremental decoding */

void hg_layer_mha_project_kv(struct hg_graph *g, const char *prefix, int kv, int64_t d,
                             int fairseq_init, int *K, int *V)
{
    float wk = fairseq_init ? xavier(d, d, 1.f / sqrtf(2.f)) : 0.f;
    char name[200];
    snprintf(name, sizeof(name), "%s.k_proj", prefix);
    *K = linear_init(g, name, kv, d, d, wk, 0);
    snprintf(name, sizeof(name), "%s.v_proj", prefix);
    *V = linear_init(g, name, kv, d, d, wk, 0);
}

int hg_layer_mha_attend(struct hg_graph *g, const char *prefix, int q, int K, int V,
                        int key_keep, int64_t d, int heads, int fairseq_init)
{
    HG_CHECK(heads > 0 && d % heads == 0);
    int64_t dh = d / heads;
    float wq = fairseq_init ? xavier(d, d, 1.f / sqrtf(2.f)) : 0.f;
    float wo = fairseq_init ? xavier(d, d, 1.f) : 0.f;
    char name[200];
    snprintf(name, sizeof(name), "%s.q_proj", prefix);
    int Q = split_heads(g, linear_init(g, name, q, d, d, wq, 0), heads, dh);
    K = split_heads(g, K, heads, dh);
    V = split_heads(g, V, heads, dh);
    union hg_attr at = {.mm = {.trans_b = 1, .alpha = 1.f / sqrtf((float)dh)}};
    int S = hg__op2(g, HG_OP_MATMUL, Q, K, &at); /* [B,H,Tq,Tk] */
    if (key_keep >= 0)
        S = hg_masked_fill(g, S, key_keep, 0);
    int O = hg_matmul(g, hg_softmax(g, S), V, 0, 0); /* [B,H,Tq,Dh] */
    int perm[4] = {0, 2, 1, 3};
    int64_t d3[3] = {0, 0, d};
    O = hg_reshape(g, hg_permute(g, O, 4, perm), 3, d3);
    snprintf(name, sizeof(name), "%s.out_proj", prefix);
    return linear_init(g, name, O, d, d, wo, fairseq_init);
}

int hg_layer_transformer_decoder_step(struct hg_graph *g, const char *prefix, int x,
                                      int self_k, int self_v, int self_keep, int enc_k,
                                      int enc_v, int enc_keep,
                                      const struct hg_tlayer_cfg *c, int *k_new,
                                      int *v_new)
{
    char name[200];
    struct hg_tlayer_cfg nc = *c; /* inference: no dropout */
    nc.dropout = nc.attention_dropout = nc.activation_dropout = 0.f;
    snprintf(name, sizeof(name), "%s.self_attn", prefix);
    int h = pre(g, prefix, "self_attn_layer_norm", x, &nc);
    hg_layer_mha_project_kv(g, name, h, nc.d, nc.fairseq_init, k_new, v_new);
    hg_graph_keep(g, *k_new);
    hg_graph_keep(g, *v_new);
    int ks[2] = {self_k, *k_new}, vs[2] = {self_v, *v_new};
    int K = hg_concat(g, ks, 2, 1), V = hg_concat(g, vs, 2, 1); /* [N,L+1,d] */
    int a = hg_layer_mha_attend(g, name, h, K, V, self_keep, nc.d, nc.heads,
                                nc.fairseq_init);
    x = post(g, prefix, "self_attn_layer_norm", x, a, &nc);
    snprintf(name, sizeof(name), "%s.encoder_attn", prefix);
    h = pre(g, prefix, "encoder_attn_layer_norm", x, &nc);
    a = hg_layer_mha_attend(g, name, h, enc_k, enc_v, enc_keep, nc.d, nc.heads,
                            nc.fairseq_init);
    x = post(g, prefix, "encoder_attn_layer_norm", x, a, &nc);
    h = pre(g, prefix, "final_layer_norm", x, &nc);
    int f = ffn_cfg(g, prefix, h, &nc);
    return post(g, prefix, "final_layer_norm", x, f, &nc);
}
