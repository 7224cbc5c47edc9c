/* bert.c - the "bert" task: a small BERT-style masked language model (a
 * post-norm Transformer encoder) over shards written by `hgpreprocess lm`:
 * fields input_ids i32 [N,L], input_mask i8 [N,L], segment_ids i8 [N,L],
 * masked_lm_positions i32 [N,P] and masked_lm_ids i32 [N,P]; the
 * vocabulary is DATA/dict.txt. Masked LM only, no next-sentence
 * prediction (as RoBERTa): next_sentence_labels is not read. The loss is
 * the NLL summed over the masked tokens; the sample size is their number
 * (unit "tokens"); the metric is masked-token accuracy. Every sample costs
 * L (the shards' padded length) for batching; fill() trims each batch to
 * its longest real sequence. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/dict.h"
#include "tasks/hg_task.h"
#include "tasks/task-impl.h"

/* What the MLM targets hold where nothing is predicted (torch's default). */
#define BERT_IGNORE (-100)
/* Dropout stream: masks are a function of (seed, step, element), so a run
 * is deterministic; the controller's --seed only initialises parameters. */
#define BERT_DROPOUT_SEED 1
/* BERT's initializer_range for the embeddings (the output projection is
 * tied to the token embedding: N(0,1) would start at a huge loss). */
#define BERT_EMBED_STD 0.02f
#define BERT_SEGMENTS 2

enum { F_IDS, F_MASK, F_SEG, F_MPOS, F_MIDS, NFIELDS };
enum { OPT_LAYERS, OPT_EMBED, OPT_HEADS, OPT_FFN, OPT_DROPOUT, OPT_MAXPOS, OPT_ATTENTION,
       OPT_ACTIVATION, NOPTS };

static const struct hg_task_option bert_options[] = {
    [OPT_LAYERS] = {"bert-layers", "2", "number of encoder layers"},
    [OPT_EMBED] = {"bert-embed-dim", "128", "model width d"},
    [OPT_HEADS] = {"bert-heads", "4", "attention heads (must divide d)"},
    [OPT_FFN] = {"bert-ffn-dim", "512", "width of the feed-forward layers"},
    [OPT_DROPOUT] = {"dropout", "0.1",
                     "dropout on embeddings, attention, residuals and FFN "
                     "(0: the graph has no dropout ops)"},
    [OPT_MAXPOS] = {"bert-max-positions", NULL,
                    "rows of the position embedding (default: L of the data)"},
    [OPT_ATTENTION] = {"attention", "auto", HG_TASK_ATTENTION_HELP},
    [OPT_ACTIVATION] = {"activation-fn", "relu", HG_TASK_ACTIVATION_HELP},
    {NULL, NULL, NULL, 0}};

/* vocab 0: ids are checked by fill() against dict.txt, known only at setup. */
static const struct hg_field bert_fields[NFIELDS] = {
    [F_IDS] = {.name = "input_ids", .kind = HG_FIELD_ARRAY, .dtype = HG_I32, .rank = 1},
    [F_MASK] = {.name = "input_mask", .kind = HG_FIELD_ARRAY, .dtype = HG_I8, .rank = 1},
    [F_SEG] = {.name = "segment_ids", .kind = HG_FIELD_ARRAY, .dtype = HG_I8, .rank = 1},
    [F_MPOS] = {.name = "masked_lm_positions", .kind = HG_FIELD_ARRAY, .dtype = HG_I32,
                .rank = 1},
    [F_MIDS] = {.name = "masked_lm_ids", .kind = HG_FIELD_ARRAY, .dtype = HG_I32,
                .rank = 1},
};

/* The specials `hgpreprocess lm` puts after fairseq's four. */
static const char *const bert_specials[3] = {"[CLS]", "[SEP]", "[MASK]"};

struct bert_state {
    int64_t vocab;
    int64_t layers, d, heads, ffn;
    float dropout;
    int64_t max_pos;  /* 0: the build's max_len */
    int attention;    /* --attention: -1 auto, 0 unfused, 1 fused */
    int gelu;         /* --activation-fn: 0 relu, 1 gelu */
};

static int bert_setup(void **state, const char *data,
                      const struct hg_task_args *args, char *err, size_t errlen)
{
    const char *v[NOPTS];
    for (int i = 0; i < NOPTS; i++)
        v[i] = args && args->values && args->values[i] ? args->values[i]
                                                       : bert_options[i].def;
    struct bert_state s = {0};
    if (hg__task_opt_int("bert-layers", v[OPT_LAYERS], 1, 1024, &s.layers, err, errlen) ||
        hg__task_opt_int("bert-embed-dim", v[OPT_EMBED], 1, 1 << 16, &s.d, err, errlen) ||
        hg__task_opt_int("bert-heads", v[OPT_HEADS], 1, 1024, &s.heads, err, errlen) ||
        hg__task_opt_int("bert-ffn-dim", v[OPT_FFN], 1, 1 << 20, &s.ffn, err, errlen))
        return -1;
    if (v[OPT_MAXPOS] &&
        hg__task_opt_int("bert-max-positions", v[OPT_MAXPOS], 1, 1 << 20, &s.max_pos, err, errlen))
        return -1;
    if (s.d % s.heads != 0) {
        snprintf(err, errlen, "--bert-heads %lld does not divide --bert-embed-dim %lld",
                 (long long)s.heads, (long long)s.d);
        return -1;
    }
    if (hg__task_opt_prob("dropout", v[OPT_DROPOUT], &s.dropout, err, errlen) != 0 ||
        hg__task_opt_attention(v[OPT_ATTENTION], &s.attention, err, errlen) != 0 ||
        hg__task_opt_activation(v[OPT_ACTIVATION], &s.gelu, err, errlen) != 0)
        return -1;

    char path[4096];
    if (!data || snprintf(path, sizeof(path), "%s/dict.txt", data) >= (int)sizeof(path)) {
        snprintf(err, errlen, "bert: no data directory, or its name is too long");
        return -1;
    }
    struct hg_dict *dict;
    if (hg_dict_load(&dict, path, bert_specials, 3, err, errlen) != 0)
        return -1;
    s.vocab = hg_dict_size(dict);
    hg_dict_free(dict);

    struct bert_state *ps = malloc(sizeof(*ps));
    if (!ps) {
        snprintf(err, errlen, "bert: out of memory");
        return -1;
    }
    *ps = s;
    *state = ps;
    return 0;
}

static void bert_teardown(void *state)
{
    free(state);
}

/* Every sample costs L: the shards pad to it, and reading every
 * input_mask at start-up to learn the real lengths would read the whole
 * split. */
static void bert_cost(void *state, const struct hg_dataset *ds, int32_t *out)
{
    (void)state;
    struct hg_shape item = hg_dataset_item_shape(ds, F_IDS);
    int32_t L = item.ndim == 1 && item.dim[0] > 0 ? (int32_t)item.dim[0] : 1;
    for (int64_t i = 0, n = hg_dataset_size(ds); i < n; i++)
        out[i] = L;
}

/* An embedding table [rows,d] with BERT's N(0, 0.02) init; returns the
 * table, the looked-up rows in *y. */
static int embedding(struct hg_graph *g, const char *name, int ids, int64_t rows,
                     int64_t d, int *y)
{
    int64_t wd[2] = {rows, d};
    int w = hg_graph_param(g, name, 2, wd, HG_INIT_NORMAL, BERT_EMBED_STD);
    int in[2] = {w, ids};
    *y = hg_graph_op(g, HG_OP_EMBEDDING, in, 2, NULL);
    return w;
}

static int bert_build(void *state, struct hg_graph *g, int64_t max_batch,
                      int64_t max_len, int train, struct hg_task_model *m,
                      char *err, size_t errlen)
{
    const struct bert_state *s = state;
    if (max_batch < 1 || max_len < 1) {
        snprintf(err, errlen, "bert: max batch %lld, max length %lld: both must be >= 1",
                 (long long)max_batch, (long long)max_len);
        return -1;
    }
    hg__task_attention(g, s->attention);
    int64_t npos = s->max_pos > 0 ? s->max_pos : max_len;
    if (max_len > npos) {
        snprintf(err, errlen, "bert: sequences of %lld positions, --bert-max-positions %lld",
                 (long long)max_len, (long long)npos);
        return -1;
    }
    float p = train ? s->dropout : 0.f; /* p 0: hg_dropout adds no op */
    int64_t d = s->d;

    int64_t B = hg_graph_sym(g, "batch", max_batch);
    int64_t T = hg_graph_sym(g, "length", max_len);
    int64_t bt[2] = {B, T};
    int ids = hg_graph_input(g, "input_ids", HG_I32, 2, bt, 0);    /* [B,T] */
    int seg = hg_graph_input(g, "segment_ids", HG_I32, 2, bt, 0);  /* [B,T] */
    int keep = hg_graph_input(g, "input_mask", HG_I32, 2, bt, 0);  /* [B,T] 1 = token */
    int tgt = hg_graph_input(g, "mlm_target", HG_I32, 2, bt, 0);   /* [B,T] id or ignore */
    int pos = hg_graph_input(g, "positions", HG_I32, 1, &T, -1);   /* [T] 0..T-1 */

    int xt, xp, xs;
    int wtok = embedding(g, "embed_tokens.weight", ids, s->vocab, d, &xt); /* [B,T,d] */
    embedding(g, "embed_positions.weight", pos, npos, d, &xp);             /* [T,d] */
    embedding(g, "segment_embeddings.weight", seg, BERT_SEGMENTS, d, &xs); /* [B,T,d] */
    int x = hg_add(g, hg_add(g, xt, xp), xs);
    x = hg_layer_layernorm(g, "emb_layer_norm", x, d, 1e-5f);
    x = hg_dropout(g, x, p, BERT_DROPOUT_SEED);
    /* one dropout rate everywhere, post-norm, PyTorch's init (as
     * hg_layer_transformer_encoder) with --activation-fn's FFN */
    const struct hg_tlayer_cfg lc = {.d = d, .ffn = s->ffn, .heads = (int)s->heads,
                                     .gelu = s->gelu, .dropout = p, .attention_dropout = p,
                                     .activation_dropout = p, .seed = BERT_DROPOUT_SEED};
    for (int64_t l = 0; l < s->layers; l++) {
        char name[64];
        snprintf(name, sizeof(name), "layers.%lld", (long long)l);
        x = hg_layer_transformer_encoder_cfg(g, name, x, keep, &lc);
    }
    /* RoBERTa's lm_head: dense, gelu, layer norm, then the token embedding
     * transposed (tied) plus a bias. */
    int h = hg_gelu(g, hg_layer_linear(g, "lm_head.dense", x, d, d, 1));
    h = hg_layer_layernorm(g, "lm_head.layer_norm", h, d, 1e-5f);
    int bias = hg_graph_param(g, "lm_head.bias", 1, &s->vocab, HG_INIT_ZERO, 0.f);
    int logits = hg_add(g, hg_matmul(g, h, wtok, 0, 1), bias);   /* [B,T,V] */
    int logp = hg_log_softmax(g, logits);                         /* [B,T,V] */
    hg_graph_keep(g, logp);
    memset(m, 0, sizeof(*m));
    m->loss = hg_nll(g, logp, tgt, BERT_IGNORE, 0.f);
    m->nll = -1; /* the loss is the NLL */
    m->metric_src = logp;
    m->sym[0] = B;
    m->sym[1] = T;
    m->nsym = 2;
    return 0;
}

/* The graph's inputs, by the names bert_build gives. */
enum { IN_IDS, IN_SEG, IN_KEEP, IN_TGT, IN_POS, NIN };
static const char *const bert_inputs[NIN] = {
    [IN_IDS] = "input_ids", [IN_SEG] = "segment_ids", [IN_KEEP] = "input_mask",
    [IN_TGT] = "mlm_target", [IN_POS] = "positions"};

static int find_inputs(struct hg_graph *g, int *t, char *err, size_t errlen)
{
    for (int i = 0; i < NIN; i++)
        if ((t[i] = hg_graph_find(g, bert_inputs[i])) < 0) {
            snprintf(err, errlen, "bert: graph has no '%s' input (not built by this "
                     "task?)", bert_inputs[i]);
            return -1;
        }
    return 0;
}

/* Checks field f of the batch is dtype dt [B,width] (width 0: any). */
static int check_field(const struct hg_batch *b, int f, enum hg_dtype dt,
                       int64_t width, char *err, size_t errlen)
{
    const struct hg_tview *v = &b->field[f];
    if (v->dtype == dt && v->shape.ndim == 2 && v->shape.dim[0] == b->size &&
        v->shape.dim[1] >= 1 && (width == 0 || v->shape.dim[1] == width))
        return 0;
    char sh[64], w[4200];
    snprintf(err, errlen, "bert: batch step %lld: %s is %s %s, want %s [%lld,%s]%s",
             (long long)b->step, bert_fields[f].name, hg_dtype_name(v->dtype),
             hg_shape_str(&v->shape, sh, sizeof(sh)), hg_dtype_name(dt),
             (long long)b->size, width ? "L" : "P", hg_batch_where(b, 0, w, sizeof w));
    return -1;
}

/* A dummy batch (b->size 0) becomes one sequence of one token with nothing
 * to predict and sample_size 0; the controller keeps zero-weight batches
 * away from the gradients (see mnist.c). */
static int bert_fill(void *state, const struct hg_batch *b, struct hg_graph *g,
                     struct hg_exec *ex, const struct hg_task_model *m,
                     struct hg_task_fill *f, char *err, size_t errlen)
{
    const struct bert_state *s = state;
    int t[NIN];
    if (find_inputs(g, t, err, errlen) < 0)
        return -1;
    int32_t *ids = hg_exec_data(ex, t[IN_IDS]);   /* [B,T] */
    int32_t *seg = hg_exec_data(ex, t[IN_SEG]);   /* [B,T] */
    int32_t *keep = hg_exec_data(ex, t[IN_KEEP]); /* [B,T] */
    int32_t *tgt = hg_exec_data(ex, t[IN_TGT]);   /* [B,T] */
    int32_t *pos = hg_exec_data(ex, t[IN_POS]);   /* [T] */
    memset(f, 0, sizeof(*f));
    if (m->nsym != 2) {
        snprintf(err, errlen, "bert: model has %d symbols, want 2", m->nsym);
        return -1;
    }
    if (b->size == 0) {
        ids[0] = seg[0] = pos[0] = 0;
        keep[0] = 1;
        tgt[0] = BERT_IGNORE;
        f->sym_value[0] = f->sym_value[1] = 1;
        return 0;
    }
    const int64_t B = b->size;
    if (check_field(b, F_IDS, HG_I32, 0, err, errlen) < 0)
        return -1;
    const int64_t L = b->field[F_IDS].shape.dim[1];
    if (check_field(b, F_MASK, HG_I8, L, err, errlen) < 0 ||
        check_field(b, F_SEG, HG_I8, L, err, errlen) < 0 ||
        check_field(b, F_MPOS, HG_I32, 0, err, errlen) < 0)
        return -1;
    const int64_t P = b->field[F_MPOS].shape.dim[1];
    const struct hg_tview *mv = &b->field[F_MIDS];
    if (mv->dtype != HG_I32 || mv->shape.ndim != 2 || mv->shape.dim[0] != B ||
        mv->shape.dim[1] != P) {
        char sh[64];
        snprintf(err, errlen, "bert: batch step %lld: masked_lm_ids is %s %s, want i32 "
                 "[%lld,%lld] like masked_lm_positions", (long long)b->step,
                 hg_dtype_name(mv->dtype), hg_shape_str(&mv->shape, sh, sizeof(sh)),
                 (long long)B, (long long)P);
        return -1;
    }
    const int32_t *in_ids = b->field[F_IDS].data;   /* [B,L] */
    const int8_t *in_mask = b->field[F_MASK].data;  /* [B,L] */
    const int8_t *in_seg = b->field[F_SEG].data;    /* [B,L] */
    const int32_t *in_mpos = b->field[F_MPOS].data; /* [B,P] */
    const int32_t *in_mids = b->field[F_MIDS].data; /* [B,P] */

    /* T: one past the last real token of the batch (the mask is a prefix
     * in hgpreprocess's shards; a hole in it stays a hole, never cut) */
    int64_t T = 1;
    for (int64_t i = 0; i < B; i++)
        for (int64_t j = L - 1; j >= T; j--)
            if (in_mask[i * L + j]) {
                T = j + 1;
                break;
            }
    /* the inputs are planned for the maxima: refuse what would not fit
     * before writing (the controller checks B, not an ARRAY field's T) */
    int64_t maxB = hg_graph_sym_max(g, HG_SYM_INDEX(m->sym[0]));
    int64_t maxT = hg_graph_sym_max(g, HG_SYM_INDEX(m->sym[1]));
    if (B > maxB || T > maxT) {
        snprintf(err, errlen, "bert: batch step %lld: %lld samples of up to %lld tokens, "
                 "the plan holds %lld of %lld", (long long)b->step, (long long)B,
                 (long long)T, (long long)maxB, (long long)maxT);
        return -1;
    }
    for (int64_t j = 0; j < T; j++)
        pos[j] = (int32_t)j;
    int64_t masked = 0;
    for (int64_t i = 0; i < B; i++) {
        int64_t len = 0; /* this sample's real length */
        for (int64_t j = 0; j < T; j++) {
            int32_t id = in_ids[i * L + j];
            int8_t sg = in_seg[i * L + j];
            if (id < 0 || id >= s->vocab) {
                char w[4200];
                snprintf(err, errlen, "bert: batch step %lld, sample %lld: input_ids %d "
                         "at position %lld not in [0,%lld)%s", (long long)b->step,
                         (long long)i, (int)id, (long long)j, (long long)s->vocab,
                         hg_batch_where(b, i, w, sizeof w));
                return -1;
            }
            if (sg < 0 || sg >= BERT_SEGMENTS) {
                snprintf(err, errlen, "bert: batch step %lld, sample %lld: segment_ids "
                         "%d at position %lld not in [0,%d)", (long long)b->step,
                         (long long)i, (int)sg, (long long)j, BERT_SEGMENTS);
                return -1;
            }
            ids[i * T + j] = id;
            seg[i * T + j] = sg;
            keep[i * T + j] = in_mask[i * L + j] != 0;
            tgt[i * T + j] = BERT_IGNORE;
            if (keep[i * T + j])
                len = j + 1;
        }
        /* as NVIDIA's loader: position 0 ([CLS]) ends the predictions */
        for (int64_t k = 0; k < P && in_mpos[i * P + k] != 0; k++) {
            int32_t at = in_mpos[i * P + k], id = in_mids[i * P + k];
            if (at < 0 || at >= len) {
                snprintf(err, errlen, "bert: batch step %lld, sample %lld: "
                         "masked_lm_positions %d outside the sequence of %lld tokens",
                         (long long)b->step, (long long)i, (int)at, (long long)len);
                return -1;
            }
            if (id < 0 || id >= s->vocab) {
                char w[4200];
                snprintf(err, errlen, "bert: batch step %lld, sample %lld: masked_lm_ids "
                         "%d (position %d) not in [0,%lld)%s", (long long)b->step,
                         (long long)i, (int)id, (int)at, (long long)s->vocab,
                         hg_batch_where(b, i, w, sizeof w));
                return -1;
            }
            if (tgt[i * T + at] != BERT_IGNORE) {
                snprintf(err, errlen, "bert: batch step %lld, sample %lld: "
                         "masked_lm_positions repeats %d", (long long)b->step,
                         (long long)i, (int)at);
                return -1;
            }
            tgt[i * T + at] = id;
            masked++;
        }
    }
    f->sym_value[0] = B;
    f->sym_value[1] = T;
    f->sample_size = (double)masked;
    return 0;
}

/* Correct argmax predictions at the masked positions into acc[0]. */
static void bert_metrics(void *state, const struct hg_batch *b, struct hg_graph *g,
                         struct hg_exec *ex, const struct hg_task_model *m,
                         double *acc)
{
    (void)state;
    int tt = hg_graph_find(g, "mlm_target");
    if (b->size == 0 || m->metric_src < 0 || tt < 0)
        return;
    const struct hg_shape *sh = &hg_graph_tensor(g, m->metric_src)->shape;
    if (sh->ndim != 3)
        return;
    const int64_t n = sh->dim[0] * sh->dim[1], V = sh->dim[2];
    const float *lp = hg_exec_data(ex, m->metric_src); /* [B,T,V] */
    const int32_t *tgt = hg_exec_data(ex, tt);         /* [B,T] */
    int64_t correct = 0;
    for (int64_t r = 0; r < n; r++) {
        if (tgt[r] == BERT_IGNORE)
            continue;
        const float *row = lp + r * V;
        int64_t best = 0;
        for (int64_t k = 1; k < V; k++)
            if (row[k] > row[best])
                best = k;
        correct += best == tgt[r];
    }
    acc[0] += (double)correct;
}

const struct hg_task hg_task_bert = {
    .abi_version = HG_TASK_ABI_VERSION,
    .name = "bert",
    .help = "BERT-style masked LM, no NSP (shards from `hgpreprocess lm`)",
    .sample_unit = "tokens",
    .options = bert_options,
    .fields = bert_fields,
    .nfields = NFIELDS,
    .metric_names = {"accuracy", NULL},
    .maximize_metric0 = 1,
    .setup = bert_setup,
    .teardown = bert_teardown,
    .cost = bert_cost,
    .build = bert_build,
    .fill = bert_fill,
    .metrics = bert_metrics,
};
