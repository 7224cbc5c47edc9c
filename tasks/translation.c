/* translation.c - the "translation" task: fairseq's `transformer`
 * encoder-decoder over shards written by `hgpreprocess translation`
 * (SEQ fields src and tgt, i32 ids of DATA/dict.SRC.txt and
 * DATA/dict.TGT.txt, each sentence ending in </s> = 2).
 *
 * Model (fairseq's TransformerModel, names as its state dict):
 *   encoder.embed_tokens.weight [Vs,d] ~ N(0, d^-1/2), times sqrt(d), plus
 *   fairseq's sinusoidal positions (position of token j is j + 2 = j +
 *   padding_idx + 1), dropout, encoder.layers.N (post- or pre-norm, the
 *   latter with a final encoder.layer_norm); the decoder the same over
 *   prev_output_tokens (the target shifted right, </s> first: teacher
 *   forcing) with causal self-attention and attention over the encoder
 *   output (source pads masked), then decoder.output_projection.weight
 *   [Vt,d] or, tied, decoder.embed_tokens.weight. --share-all-embeddings
 *   uses one table (encoder.embed_tokens.weight) for both sides and the
 *   output; it needs the same dictionary on both sides.
 *
 * Loss: fairseq 0.12's label_smoothed_cross_entropy, summed over the
 * non-pad target tokens: with eps = --label-smoothing, V = |dict.TGT|,
 *   loss = (1 - eps - eps/(V-1)) * nll + eps/(V-1) * smooth,
 *   nll = -logp[target], smooth = sum_j -logp[j]
 * (computed by the nll op with smoothing s = eps*V/(V-1), whose
 * (1-s)*nll + s/V*smooth is the same quantity), and the plain nll beside
 * it (struct hg_task_model.nll) for the log. Sample size: target tokens
 * (</s> included, as fairseq's ntokens).
 *
 * Every sample costs max(source, target length) for batching (fairseq's
 * num_tokens); fill() trims each batch to its longest source and target. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/dict.h"
#include "tasks/hg_task.h"
#include "tasks/task-impl.h"

#define TR_PAD HG_DICT_PAD
#define TR_EOS HG_DICT_EOS
/* Dropout stream: masks are a function of (seed, step, element). */
#define TR_DROPOUT_SEED 1

enum { F_SRC, F_TGT, NFIELDS };
enum {
    OPT_SRC_LANG, OPT_TGT_LANG,
    OPT_ENC_LAYERS, OPT_ENC_DIM, OPT_ENC_FFN, OPT_ENC_HEADS, OPT_ENC_NB,
    OPT_DEC_LAYERS, OPT_DEC_DIM, OPT_DEC_FFN, OPT_DEC_HEADS, OPT_DEC_NB,
    OPT_DROPOUT, OPT_ATT_DROPOUT, OPT_ACT_DROPOUT,
    OPT_SHARE_ALL, OPT_SHARE_DEC,
    OPT_LS, OPT_MAX_SRC, OPT_MAX_TGT, OPT_ATTENTION, OPT_ACTIVATION,
    NOPTS
};

static const struct hg_task_option tr_options[] = {
    [OPT_SRC_LANG] = {"source-lang", NULL,
                      "source language: reads DATA/dict.LANG.txt (default: the other "
                      "of two dict.*.txt when --target-lang is given)"},
    [OPT_TGT_LANG] = {"target-lang", NULL, "target language (as --source-lang)"},
    [OPT_ENC_LAYERS] = {"encoder-layers", NULL, "encoder layers (default: the --arch preset)"},
    [OPT_ENC_DIM] = {"encoder-embed-dim", NULL, "encoder width d (default: preset)"},
    [OPT_ENC_FFN] = {"encoder-ffn-embed-dim", NULL, "encoder FFN width (default: preset)"},
    [OPT_ENC_HEADS] = {"encoder-attention-heads", NULL,
                       "encoder attention heads (default: preset)"},
    [OPT_ENC_NB] = {"encoder-normalize-before", "0",
                    "pre-norm encoder layers (plus a final encoder.layer_norm)", 1},
    [OPT_DEC_LAYERS] = {"decoder-layers", NULL, "decoder layers (default: preset)"},
    [OPT_DEC_DIM] = {"decoder-embed-dim", NULL, "decoder width d (default: preset)"},
    [OPT_DEC_FFN] = {"decoder-ffn-embed-dim", NULL, "decoder FFN width (default: preset)"},
    [OPT_DEC_HEADS] = {"decoder-attention-heads", NULL,
                       "decoder attention heads (default: preset)"},
    [OPT_DEC_NB] = {"decoder-normalize-before", "0",
                    "pre-norm decoder layers (plus a final decoder.layer_norm)", 1},
    [OPT_DROPOUT] = {"dropout", "0.1", "dropout on embeddings and residuals"},
    [OPT_ATT_DROPOUT] = {"attention-dropout", "0", "dropout on attention weights"},
    [OPT_ACT_DROPOUT] = {"activation-dropout", "0", "dropout after the FFN's activation"},
    [OPT_SHARE_ALL] = {"share-all-embeddings", "0",
                       "one embedding table for source, target and output "
                       "(needs dict.SRC.txt == dict.TGT.txt)", 1},
    [OPT_SHARE_DEC] = {"share-decoder-input-output-embed", "0",
                       "tie the output projection to the decoder's embedding", 1},
    [OPT_LS] = {"label-smoothing", "0.1",
                "epsilon of the label-smoothed cross entropy (fairseq 0.12's)"},
    [OPT_MAX_SRC] = {"max-source-positions", "1024", "longest source (positions)"},
    [OPT_MAX_TGT] = {"max-target-positions", "1024", "longest target (positions)"},
    [OPT_ATTENTION] = {"attention", "auto", HG_TASK_ATTENTION_HELP},
    [OPT_ACTIVATION] = {"activation-fn", "relu", HG_TASK_ACTIVATION_HELP},
    {NULL, NULL, NULL, 0}};

/* vocab 0: ids are checked by fill() against the dictionaries (named). */
static const struct hg_field tr_fields[NFIELDS] = {
    [F_SRC] = {.name = "src", .kind = HG_FIELD_SEQ, .dtype = HG_I32, .rank = 1},
    [F_TGT] = {.name = "tgt", .kind = HG_FIELD_SEQ, .dtype = HG_I32, .rank = 1},
};

/* --arch presets: layers, d, ffn, heads (per side). */
struct tr_arch {
    const char *name;
    int64_t layers, d, ffn, heads;
};
static const struct tr_arch tr_archs[] = {
    {"transformer_tiny", 2, 64, 128, 4},     /* tests */
    {"transformer_small", 3, 256, 1024, 4},  /* a 2-core machine in an hour */
    {"transformer_base", 6, 512, 2048, 8},   /* Vaswani et al.'s base model */
    {"transformer", 6, 512, 2048, 8},        /* fairseq's name for base */
    {"transformer_big", 6, 1024, 4096, 16},  /* Vaswani et al.'s big model */
    {NULL, 0, 0, 0, 0}};
#define TR_DEFAULT_ARCH "transformer_base"

const char *hg_tr_archs(void)
{
    static char names[256]; /* the table's names joined by '|' */
    if (!names[0])
        for (int i = 0; tr_archs[i].name; i++)
            snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
                     i ? "|" : "", tr_archs[i].name);
    return names;
}

struct tr_side {
    int64_t layers, d, ffn, heads;
    int normalize_before;
};

struct tr_state {
    int64_t vsrc, vtgt;
    struct tr_side enc, dec;
    float dropout, att_dropout, act_dropout;
    float eps;
    int share_all, share_dec;
    int64_t max_src, max_tgt;
    int attention;   /* --attention: -1 auto, 0 unfused, 1 fused */
    int gelu;        /* --activation-fn: 0 relu, 1 gelu */
    char src_lang[64], tgt_lang[64];
};

/* The languages of DATA's dict.LANG.txt files, up to 3 (to tell two). */
static int dict_langs(const char *data, char langs[3][64])
{
    DIR *d = opendir(data);
    int n = 0;
    if (!d)
        return -1;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len > 9 && strncmp(e->d_name, "dict.", 5) == 0 &&
            strcmp(e->d_name + len - 4, ".txt") == 0 && len - 9 < 64) {
            if (n < 3) {
                memcpy(langs[n], e->d_name + 5, len - 9);
                langs[n][len - 9] = 0;
            }
            n++;
        }
    }
    closedir(d);
    /* a fixed order whatever readdir gives */
    if (n >= 2 && strcmp(langs[0], langs[1]) > 0) {
        char t[64];
        memcpy(t, langs[0], 64);
        memcpy(langs[0], langs[1], 64);
        memcpy(langs[1], t, 64);
    }
    return n;
}

static int pick_langs(struct tr_state *s, const char *data, const char *sl,
                      const char *tl, char *err, size_t errlen)
{
    if (sl && tl) {
        snprintf(s->src_lang, sizeof(s->src_lang), "%s", sl);
        snprintf(s->tgt_lang, sizeof(s->tgt_lang), "%s", tl);
        return 0;
    }
    char langs[3][64];
    int n = dict_langs(data, langs);
    if (n == 2 && (sl || tl)) {
        const char *given = sl ? sl : tl;
        const char *other = strcmp(langs[0], given) == 0   ? langs[1]
                            : strcmp(langs[1], given) == 0 ? langs[0] : NULL;
        if (other) {
            snprintf(s->src_lang, sizeof(s->src_lang), "%s", sl ? sl : other);
            snprintf(s->tgt_lang, sizeof(s->tgt_lang), "%s", tl ? tl : other);
            return 0;
        }
    }
    if (n == 2)
        snprintf(err, errlen, "translation: %s has dict.%s.txt and dict.%s.txt: say which "
                 "is the source with --source-lang and --target-lang", data, langs[0],
                 langs[1]);
    else
        snprintf(err, errlen, "translation: cannot tell the languages from %s (%d "
                 "dict.LANG.txt files): give --source-lang and --target-lang", data,
                 n < 0 ? 0 : n);
    return -1;
}

/* Loads DATA/dict.LANG.txt; *d stays loaded (caller frees). */
static int load_dict(const char *data, const char *lang, struct hg_dict **d,
                     char *err, size_t errlen)
{
    char path[4096];
    if (snprintf(path, sizeof(path), "%s/dict.%s.txt", data, lang) >= (int)sizeof(path)) {
        snprintf(err, errlen, "translation: data directory name too long");
        return -1;
    }
    return hg_dict_load(d, path, NULL, 0, err, errlen);
}

static int same_dict(const struct hg_dict *a, const struct hg_dict *b)
{
    if (hg_dict_size(a) != hg_dict_size(b))
        return 0;
    for (int32_t i = 0; i < hg_dict_size(a); i++)
        if (strcmp(hg_dict_symbol(a, i), hg_dict_symbol(b, i)) != 0)
            return 0;
    return 1;
}

static int tr_setup(void **state, const char *data, const struct hg_task_args *args,
                    char *err, size_t errlen)
{
    const char *v[NOPTS];
    for (int i = 0; i < NOPTS; i++)
        v[i] = args && args->values && args->values[i] ? args->values[i]
                                                       : tr_options[i].def;
    struct tr_state s;
    memset(&s, 0, sizeof(s));
    const char *arch = args && args->arch ? args->arch : TR_DEFAULT_ARCH;
    const struct tr_arch *a = NULL;
    for (int i = 0; tr_archs[i].name; i++)
        if (strcmp(tr_archs[i].name, arch) == 0)
            a = &tr_archs[i];
    if (!a) {
        snprintf(err, errlen, "translation: --arch %s: unknown (%s)", arch, hg_tr_archs());
        return -1;
    }
    s.enc = (struct tr_side){a->layers, a->d, a->ffn, a->heads, 0};
    s.dec = s.enc;
    static const int side_opts[2][4] = {
        {OPT_ENC_LAYERS, OPT_ENC_DIM, OPT_ENC_FFN, OPT_ENC_HEADS},
        {OPT_DEC_LAYERS, OPT_DEC_DIM, OPT_DEC_FFN, OPT_DEC_HEADS}};
    static const int64_t hi[4] = {1024, 1 << 16, 1 << 20, 1024};
    for (int side = 0; side < 2; side++) {
        struct tr_side *sd = side ? &s.dec : &s.enc;
        int64_t *dst[4] = {&sd->layers, &sd->d, &sd->ffn, &sd->heads};
        for (int k = 0; k < 4; k++) {
            int o = side_opts[side][k];
            if (v[o] && hg__task_opt_int(tr_options[o].name, v[o], 1, hi[k], dst[k], err, errlen))
                return -1;
        }
        if (sd->d % sd->heads != 0) {
            snprintf(err, errlen, "--%s %lld does not divide --%s %lld",
                     tr_options[side_opts[side][3]].name, (long long)sd->heads,
                     tr_options[side_opts[side][1]].name, (long long)sd->d);
            return -1;
        }
    }
    if (hg__task_opt_bool("encoder-normalize-before", v[OPT_ENC_NB], &s.enc.normalize_before,
                 err, errlen) ||
        hg__task_opt_bool("decoder-normalize-before", v[OPT_DEC_NB], &s.dec.normalize_before,
                 err, errlen) ||
        hg__task_opt_bool("share-all-embeddings", v[OPT_SHARE_ALL], &s.share_all, err, errlen) ||
        hg__task_opt_bool("share-decoder-input-output-embed", v[OPT_SHARE_DEC], &s.share_dec, err,
                 errlen) ||
        hg__task_opt_prob("dropout", v[OPT_DROPOUT], &s.dropout, err, errlen) ||
        hg__task_opt_prob("attention-dropout", v[OPT_ATT_DROPOUT], &s.att_dropout, err, errlen) ||
        hg__task_opt_prob("activation-dropout", v[OPT_ACT_DROPOUT], &s.act_dropout, err, errlen) ||
        hg__task_opt_prob("label-smoothing", v[OPT_LS], &s.eps, err, errlen) ||
        hg__task_opt_int("max-source-positions", v[OPT_MAX_SRC], 1, 1 << 20, &s.max_src, err,
                errlen) ||
        hg__task_opt_int("max-target-positions", v[OPT_MAX_TGT], 1, 1 << 20, &s.max_tgt, err,
                errlen) ||
        hg__task_opt_attention(v[OPT_ATTENTION], &s.attention, err, errlen) ||
        hg__task_opt_activation(v[OPT_ACTIVATION], &s.gelu, err, errlen))
        return -1;
    /* the decoder attends to the encoder's output: one width (fairseq
     * allows kdim != d; this model does not) */
    if (s.enc.d != s.dec.d) {
        snprintf(err, errlen, "translation: --encoder-embed-dim %lld != "
                 "--decoder-embed-dim %lld (not supported)", (long long)s.enc.d,
                 (long long)s.dec.d);
        return -1;
    }
    if (s.share_all)
        s.share_dec = 1; /* as fairseq */
    if (!data) {
        snprintf(err, errlen, "translation: no data directory");
        return -1;
    }
    if (pick_langs(&s, data, v[OPT_SRC_LANG], v[OPT_TGT_LANG], err, errlen) != 0)
        return -1;
    struct hg_dict *ds = NULL, *dt = NULL;
    if (load_dict(data, s.src_lang, &ds, err, errlen) != 0)
        return -1;
    if (load_dict(data, s.tgt_lang, &dt, err, errlen) != 0) {
        hg_dict_free(ds);
        return -1;
    }
    s.vsrc = hg_dict_size(ds);
    s.vtgt = hg_dict_size(dt);
    int same = same_dict(ds, dt);
    hg_dict_free(ds);
    hg_dict_free(dt);
    if (s.share_all && !same) {
        snprintf(err, errlen, "--share-all-embeddings requires a joined dictionary: "
                 "%s/dict.%s.txt (%lld symbols) and dict.%s.txt (%lld) differ",
                 data, s.src_lang, (long long)s.vsrc, s.tgt_lang, (long long)s.vtgt);
        return -1;
    }
    if (s.vtgt < 2) {
        snprintf(err, errlen, "translation: target dictionary of %lld symbols",
                 (long long)s.vtgt);
        return -1;
    }
    struct tr_state *ps = malloc(sizeof(*ps));
    if (!ps) {
        snprintf(err, errlen, "translation: out of memory");
        return -1;
    }
    *ps = s;
    *state = ps;
    return 0;
}

static void tr_teardown(void *state)
{
    free(state);
}

/* fairseq's num_tokens: max(source, target) */
static void tr_cost(void *state, const struct hg_dataset *ds, int32_t *out)
{
    (void)state;
    const int32_t *ls = hg_dataset_lengths(ds, F_SRC), *lt = hg_dataset_lengths(ds, F_TGT);
    for (int64_t i = 0, n = hg_dataset_size(ds); i < n; i++) {
        int32_t c = ls[i] > lt[i] ? ls[i] : lt[i];
        out[i] = c > 0 ? c : 1;
    }
}

/* ids -> table rows times sqrt(d), plus positions, dropout */
static int embed(struct hg_graph *g, int w, int ids, int pos, int64_t d, float p)
{
    int in[2] = {w, ids};
    int x = hg_graph_op(g, HG_OP_EMBEDDING, in, 2, NULL);
    x = hg_add(g, hg_scale(g, x, sqrtf((float)d)), pos);
    return hg_dropout(g, x, p, TR_DROPOUT_SEED);
}

static int tr_build(void *state, struct hg_graph *g, int64_t max_batch, int64_t max_len,
                    int train, struct hg_task_model *m, char *err, size_t errlen)
{
    const struct tr_state *s = state;
    if (max_batch < 1 || max_len < 1) {
        snprintf(err, errlen, "translation: max batch %lld, max length %lld: both must "
                 "be >= 1", (long long)max_batch, (long long)max_len);
        return -1;
    }
    if (max_len > s->max_src || max_len > s->max_tgt) {
        snprintf(err, errlen, "translation: sequences of %lld tokens, "
                 "--max-source-positions %lld, --max-target-positions %lld",
                 (long long)max_len, (long long)s->max_src, (long long)s->max_tgt);
        return -1;
    }
    hg__task_attention(g, s->attention);
    const int64_t d = s->enc.d;
    struct hg_tlayer_cfg ec = {.d = d, .ffn = s->enc.ffn, .heads = (int)s->enc.heads,
                               .gelu = s->gelu, .dropout = train ? s->dropout : 0.f,
                               .attention_dropout = train ? s->att_dropout : 0.f,
                               .activation_dropout = train ? s->act_dropout : 0.f,
                               .normalize_before = s->enc.normalize_before,
                               .fairseq_init = 1, .seed = TR_DROPOUT_SEED};
    struct hg_tlayer_cfg dc = ec;
    dc.ffn = s->dec.ffn;
    dc.heads = (int)s->dec.heads;
    dc.normalize_before = s->dec.normalize_before;

    int64_t B = hg_graph_sym(g, "batch", max_batch);
    int64_t S = hg_graph_sym(g, "src_len", max_len);
    int64_t T = hg_graph_sym(g, "tgt_len", max_len);
    int64_t bs[2] = {B, S}, bt[2] = {B, T}, sd[2] = {S, d}, td[2] = {T, d};
    int src = hg_graph_input(g, "src_tokens", HG_I32, 2, bs, 0);       /* [B,S] */
    int keep = hg_graph_input(g, "src_keep", HG_I32, 2, bs, 0);        /* [B,S] 1 = token */
    int prev = hg_graph_input(g, "prev_output_tokens", HG_I32, 2, bt, 0); /* [B,T] */
    int tgt = hg_graph_input(g, "target", HG_I32, 2, bt, 0);           /* [B,T] id or pad */
    int spos = hg_graph_input(g, "src_positions", HG_F32, 2, sd, -1);  /* [S,d] sinusoids */
    int tpos = hg_graph_input(g, "tgt_positions", HG_F32, 2, td, -1);  /* [T,d] */

    float std = 1.f / sqrtf((float)d); /* fairseq: N(0, d^-1/2) */
    int64_t es[2] = {s->vsrc, d}, et[2] = {s->vtgt, d};
    int wsrc = hg_graph_param(g, "encoder.embed_tokens.weight", 2, es, HG_INIT_NORMAL, std);
    int x = embed(g, wsrc, src, spos, d, ec.dropout);
    char name[64];
    for (int64_t l = 0; l < s->enc.layers; l++) {
        snprintf(name, sizeof(name), "encoder.layers.%lld", (long long)l);
        x = hg_layer_transformer_encoder_cfg(g, name, x, keep, &ec);
    }
    if (s->enc.normalize_before)
        x = hg_layer_layernorm(g, "encoder.layer_norm", x, d, 1e-5f);

    int wtgt = s->share_all ? wsrc
                            : hg_graph_param(g, "decoder.embed_tokens.weight", 2, et,
                                             HG_INIT_NORMAL, std);
    int y = embed(g, wtgt, prev, tpos, d, dc.dropout);
    for (int64_t l = 0; l < s->dec.layers; l++) {
        snprintf(name, sizeof(name), "decoder.layers.%lld", (long long)l);
        y = hg_layer_transformer_decoder_cfg(g, name, y, -1, x, keep, &dc);
    }
    if (s->dec.normalize_before)
        y = hg_layer_layernorm(g, "decoder.layer_norm", y, d, 1e-5f);
    int wout = s->share_dec ? wtgt
                            : hg_graph_param(g, "decoder.output_projection.weight", 2, et,
                                             HG_INIT_NORMAL, std);
    int logp = hg_log_softmax(g, hg_matmul(g, y, wout, 0, 1)); /* [B,T,Vt] */
    hg_graph_keep(g, logp);
    memset(m, 0, sizeof(*m));
    /* fairseq's (1-eps-eps_i)*nll + eps_i*smooth with eps_i = eps/(V-1) is
     * the op's (1-s)*nll + s/V*smooth at s = eps*V/(V-1) */
    float sm = (float)((double)s->eps * (double)s->vtgt / (double)(s->vtgt - 1));
    m->loss = hg_nll(g, logp, tgt, TR_PAD, sm);
    m->nll = s->eps > 0 ? hg_nll(g, logp, tgt, TR_PAD, 0.f) : -1;
    m->metric_src = logp;
    m->sym[0] = B;
    m->sym[1] = S;
    m->sym[2] = T;
    m->nsym = 3;
    return 0;
}

/* The graph's inputs, by the names tr_build gives. */
enum { IN_SRC, IN_KEEP, IN_PREV, IN_TGT, IN_SPOS, IN_TPOS, NIN };
static const char *const tr_inputs[NIN] = {
    [IN_SRC] = "src_tokens", [IN_KEEP] = "src_keep", [IN_PREV] = "prev_output_tokens",
    [IN_TGT] = "target", [IN_SPOS] = "src_positions", [IN_TPOS] = "tgt_positions"};

/* fairseq's SinusoidalPositionalEmbedding rows for positions
 * first..first+n-1 into out[n,d]: sin of pos * exp(-k log(10000)/(h-1)) in
 * the first h = d/2 columns, cos in the next h, a zero last column if d is
 * odd. */
static void sinusoids(float *out, int64_t n, int64_t d, int64_t first)
{
    int64_t h = d / 2;
    float step = h > 1 ? (float)(log(10000.0) / (double)(h - 1)) : 0.f;
    for (int64_t j = 0; j < n; j++) {
        float p = (float)(first + j);
        float *r = out + j * d;
        for (int64_t k = 0; k < h; k++) {
            float a = p * expf((float)k * -step);
            r[k] = (float)sin((double)a);
            r[h + k] = (float)cos((double)a);
        }
        if (d % 2)
            r[d - 1] = 0.f;
    }
}

static int check_field(const struct hg_batch *b, int f, char *err, size_t errlen)
{
    const struct hg_tview *v = &b->field[f];
    if (v->dtype == HG_I32 && v->shape.ndim == 2 && v->shape.dim[0] == b->size &&
        b->lengths[f])
        return 0;
    char sh[64], w[4200];
    snprintf(err, errlen, "translation: batch step %lld: %s is %s %s, want i32 [%lld,L] "
             "with lengths%s", (long long)b->step, tr_fields[f].name,
             hg_dtype_name(v->dtype), hg_shape_str(&v->shape, sh, sizeof(sh)),
             (long long)b->size, hg_batch_where(b, 0, w, sizeof w));
    return -1;
}

/* A dummy batch (b->size 0) is one source </s>, one prev </s> and a pad
 * target: loss 0, sample size 0. */
static int tr_fill(void *state, const struct hg_batch *b, struct hg_graph *g,
                   struct hg_exec *ex, const struct hg_task_model *m,
                   struct hg_task_fill *f, char *err, size_t errlen)
{
    const struct tr_state *s = state;
    int t[NIN];
    for (int i = 0; i < NIN; i++)
        if ((t[i] = hg_graph_find(g, tr_inputs[i])) < 0) {
            snprintf(err, errlen, "translation: graph has no '%s' input (not built by "
                     "this task?)", tr_inputs[i]);
            return -1;
        }
    memset(f, 0, sizeof(*f));
    if (m->nsym != 3) {
        snprintf(err, errlen, "translation: model has %d symbols, want 3", m->nsym);
        return -1;
    }
    int32_t *src = hg_exec_data(ex, t[IN_SRC]);   /* [B,S] */
    int32_t *keep = hg_exec_data(ex, t[IN_KEEP]); /* [B,S] */
    int32_t *prev = hg_exec_data(ex, t[IN_PREV]); /* [B,T] */
    int32_t *tgt = hg_exec_data(ex, t[IN_TGT]);   /* [B,T] */
    float *spos = hg_exec_data(ex, t[IN_SPOS]);   /* [S,d] */
    float *tpos = hg_exec_data(ex, t[IN_TPOS]);   /* [T,d] */
    const int64_t d = s->enc.d;
    if (b->size == 0) {
        src[0] = prev[0] = TR_EOS;
        keep[0] = 1;
        tgt[0] = TR_PAD;
        sinusoids(spos, 1, d, TR_PAD + 1);
        sinusoids(tpos, 1, d, TR_PAD + 1);
        f->sym_value[0] = f->sym_value[1] = f->sym_value[2] = 1;
        return 0;
    }
    const int64_t B = b->size;
    if (check_field(b, F_SRC, err, errlen) < 0 || check_field(b, F_TGT, err, errlen) < 0)
        return -1;
    const int64_t Ls = b->field[F_SRC].shape.dim[1], Lt = b->field[F_TGT].shape.dim[1];
    const int32_t *in_src = b->field[F_SRC].data, *in_tgt = b->field[F_TGT].data;
    const int32_t *len_s = b->lengths[F_SRC], *len_t = b->lengths[F_TGT];
    int64_t S = 1, T = 1;
    for (int64_t i = 0; i < B; i++) {
        if (len_s[i] < 0 || len_s[i] > Ls || len_t[i] < 0 || len_t[i] > Lt) {
            snprintf(err, errlen, "translation: batch step %lld, sample %lld: lengths "
                     "%d/%d outside the batch's %lld/%lld", (long long)b->step,
                     (long long)i, (int)len_s[i], (int)len_t[i], (long long)Ls,
                     (long long)Lt);
            return -1;
        }
        if (len_s[i] > S)
            S = len_s[i];
        if (len_t[i] > T)
            T = len_t[i];
    }
    /* the inputs are planned for the maxima: refuse before writing */
    int64_t maxB = hg_graph_sym_max(g, HG_SYM_INDEX(m->sym[0]));
    int64_t maxS = hg_graph_sym_max(g, HG_SYM_INDEX(m->sym[1]));
    int64_t maxT = hg_graph_sym_max(g, HG_SYM_INDEX(m->sym[2]));
    if (B > maxB || S > maxS || T > maxT) {
        snprintf(err, errlen, "translation: batch step %lld: %lld samples, source %lld, "
                 "target %lld tokens; the plan holds %lld, %lld, %lld", (long long)b->step,
                 (long long)B, (long long)S, (long long)T, (long long)maxB,
                 (long long)maxS, (long long)maxT);
        return -1;
    }
    int64_t ntok = 0;
    for (int64_t i = 0; i < B; i++) {
        for (int64_t j = 0; j < S; j++) {
            int real = j < len_s[i];
            int32_t id = real ? in_src[i * Ls + j] : TR_PAD;
            if (id < 0 || id >= s->vsrc) {
                char w[4200];
                snprintf(err, errlen, "translation: batch step %lld, sample %lld: src "
                         "id %d at position %lld not in [0,%lld) (dict.%s.txt)%s",
                         (long long)b->step, (long long)i, (int)id, (long long)j,
                         (long long)s->vsrc, s->src_lang, hg_batch_where(b, i, w, sizeof w));
                return -1;
            }
            src[i * S + j] = id;
            keep[i * S + j] = real;
        }
        /* teacher forcing: prev = </s> t0 .. t(n-2), as fairseq's
         * prev_output_tokens (the target's final </s> moved to the front) */
        for (int64_t j = 0; j < T; j++) {
            int real = j < len_t[i];
            int32_t id = real ? in_tgt[i * Lt + j] : TR_PAD;
            if (id < 0 || id >= s->vtgt) {
                char w[4200];
                snprintf(err, errlen, "translation: batch step %lld, sample %lld: tgt "
                         "id %d at position %lld not in [0,%lld) (dict.%s.txt)%s",
                         (long long)b->step, (long long)i, (int)id, (long long)j,
                         (long long)s->vtgt, s->tgt_lang, hg_batch_where(b, i, w, sizeof w));
                return -1;
            }
            tgt[i * T + j] = id;
            prev[i * T + j] = !real ? TR_PAD : j == 0 ? TR_EOS : in_tgt[i * Lt + j - 1];
        }
        ntok += len_t[i];
    }
    /* real tokens sit at positions pad+1, pad+2, ... (fairseq's
     * make_positions); pads get the rows after them instead of fairseq's
     * zero row, which only pad outputs see (masked keys, ignored targets) */
    sinusoids(spos, S, d, TR_PAD + 1);
    sinusoids(tpos, T, d, TR_PAD + 1);
    f->sym_value[0] = B;
    f->sym_value[1] = S;
    f->sym_value[2] = T;
    f->sample_size = (double)ntok;
    return 0;
}

static const struct hg_task_gen tr_gen; /* generation, at the end */

const struct hg_task hg_task_translation = {
    .abi_version = HG_TASK_ABI_VERSION,
    .name = "translation",
    .help = "Transformer encoder-decoder, label-smoothed CE (shards from "
            "`hgpreprocess translation`)",
    .sample_unit = "tokens",
    .options = tr_options,
    .fields = tr_fields,
    .nfields = NFIELDS,
    .metric_names = {NULL},
    .maximize_metric0 = 0,
    .setup = tr_setup,
    .teardown = tr_teardown,
    .cost = tr_cost,
    .build = tr_build,
    .fill = tr_fill,
    .metrics = NULL,
    .gen = &tr_gen,
};

/* ------------------------------------------------------------ generation */

/* The trained Transformer rebuilt forward-only as two graphs with the
 * training graph's parameter names, so that a checkpoint loads into
 * them:
 *
 *   encoder: src [B,S] -> encoder output [B,S,d] and, per decoder layer,
 *     the encoder-attention keys and values [B,S,d] (projected once per
 *     batch);
 *   decoder step (incremental): for N rows (sentences x beams), the
 *     previous token [N,1] at its position, per layer the cached
 *     self-attention keys/values of the earlier positions [N,L,d] (L = step
 *     + 1: row 0 is a masked dummy, as graphs have no empty dimension) and
 *     the rows' encoder keys/values -> log-probabilities [N,V] and the new
 *     keys/values row [N,1,d], which the host appends to its caches.
 *
 * With incremental = 0 the step instead reruns the whole decoder over the
 * prefix [N,step+1] (O(T^2): the reference the cached path is tested
 * against). */

struct tr_gen {
    struct tr_state s;
    struct hg_task_gen_cfg cfg;
    int64_t nl; /* decoder layers */
    /* encoder graph */
    struct hg_graph *eg;
    struct hg_exec *ee;
    int e_src, e_keep, e_pos, e_out;
    int *e_k, *e_v;  /* [nl] */
    int64_t B, S;    /* current batch */
    int32_t *keep;   /* [max_sentences, max_src] this batch's source mask, [B,S] */
    /* decoder step graph */
    struct hg_graph *dg;
    struct hg_exec *de;
    int d_tok, d_pos, d_skeep, d_ekeep, d_enc, d_logp;
    int *d_sk, *d_sv, *d_ek, *d_ev, *d_kn, *d_vn; /* [nl] (incremental) */
    /* host caches: per layer K and V [max_rows, max_steps + 1, d]
     * (incremental), or the tokens of each row [max_rows, max_steps] */
    float **cache;   /* [2 * nl] */
    int32_t *hist;
    float *lp;       /* [max_rows, V] (recompute: the last position's rows) */
    int64_t step_ok; /* the step the caches are ready for */
    int32_t *enc_rows; /* [max_rows] the sentence of each row of the step
                          graph's encoder inputs (-1: stale) */
    int64_t enc_n;
};

static void tr_gen_close(void *model)
{
    struct tr_gen *m = model;
    if (!m)
        return;
    hg_exec_free(m->ee);
    hg_graph_free(m->eg);
    hg_exec_free(m->de);
    hg_graph_free(m->dg);
    if (m->cache)
        for (int64_t i = 0; i < 2 * m->nl; i++)
            free(m->cache[i]);
    free(m->cache);
    free(m->hist);
    free(m->lp);
    free(m->keep);
    free(m->enc_rows);
    free(m->e_k);
    free(m->e_v);
    free(m->d_sk);
    free(m->d_sv);
    free(m->d_ek);
    free(m->d_ev);
    free(m->d_kn);
    free(m->d_vn);
    free(m);
}

static struct hg_exec *plan_forward(struct hg_graph *g, char *err, size_t errlen)
{
    int *order = malloc((size_t)hg_graph_n_nodes(g) * sizeof(int) + 1);
    if (!order) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    int n = hg_graph_order(g, HG_PH_FORWARD, order);
    struct hg_exec *ex = hg_exec_new(g, order, n, err, errlen);
    free(order);
    return ex;
}

static struct hg_tlayer_cfg gen_cfg(const struct tr_state *s, const struct tr_side *sd)
{
    struct hg_tlayer_cfg c = {.d = s->enc.d, .ffn = sd->ffn, .heads = (int)sd->heads,
                              .gelu = s->gelu, .normalize_before = sd->normalize_before,
                              .fairseq_init = 1, .seed = TR_DROPOUT_SEED};
    return c;
}

static void build_encoder(struct tr_gen *m)
{
    const struct tr_state *s = &m->s;
    struct hg_graph *g = m->eg;
    const int64_t d = s->enc.d;
    int64_t B = hg_graph_sym(g, "batch", m->cfg.max_sentences);
    int64_t S = hg_graph_sym(g, "src_len", m->cfg.max_src);
    int64_t bs[2] = {B, S}, sd[2] = {S, d}, es[2] = {s->vsrc, d};
    m->e_src = hg_graph_input(g, "src_tokens", HG_I32, 2, bs, 0);
    m->e_keep = hg_graph_input(g, "src_keep", HG_I32, 2, bs, 0);
    m->e_pos = hg_graph_input(g, "src_positions", HG_F32, 2, sd, -1);
    float std = 1.f / sqrtf((float)d);
    int w = hg_graph_param(g, "encoder.embed_tokens.weight", 2, es, HG_INIT_NORMAL, std);
    int x = embed(g, w, m->e_src, m->e_pos, d, 0.f);
    struct hg_tlayer_cfg ec = gen_cfg(s, &s->enc);
    char name[96];
    for (int64_t l = 0; l < s->enc.layers; l++) {
        snprintf(name, sizeof(name), "encoder.layers.%lld", (long long)l);
        x = hg_layer_transformer_encoder_cfg(g, name, x, m->e_keep, &ec);
    }
    if (s->enc.normalize_before)
        x = hg_layer_layernorm(g, "encoder.layer_norm", x, d, 1e-5f);
    m->e_out = x;
    hg_graph_keep(g, x);
    for (int64_t l = 0; l < m->nl; l++) {
        snprintf(name, sizeof(name), "decoder.layers.%lld.encoder_attn", (long long)l);
        hg_layer_mha_project_kv(g, name, x, d, 1, &m->e_k[l], &m->e_v[l]);
        hg_graph_keep(g, m->e_k[l]);
        hg_graph_keep(g, m->e_v[l]);
    }
}

/* the target embedding table and the output projection */
static void tgt_tables(struct hg_graph *g, const struct tr_state *s, int *wt, int *wo)
{
    const int64_t d = s->enc.d;
    float std = 1.f / sqrtf((float)d);
    int64_t et[2] = {s->vtgt, d};
    *wt = hg_graph_param(g, s->share_all ? "encoder.embed_tokens.weight"
                                         : "decoder.embed_tokens.weight",
                         2, et, HG_INIT_NORMAL, std);
    *wo = s->share_dec ? *wt
                       : hg_graph_param(g, "decoder.output_projection.weight", 2, et,
                                        HG_INIT_NORMAL, std);
}

static void build_step(struct tr_gen *m)
{
    const struct tr_state *s = &m->s;
    struct hg_graph *g = m->dg;
    const int64_t d = s->enc.d;
    int64_t N = hg_graph_sym(g, "rows", m->cfg.max_rows);
    int64_t L = hg_graph_sym(g, "cache_len", m->cfg.max_steps);
    int64_t K = hg_graph_sym(g, "keys", m->cfg.max_steps + 1); /* L + 1 */
    int64_t S = hg_graph_sym(g, "src_len", m->cfg.max_src);
    int64_t n1[2] = {N, 1}, pd[2] = {1, d}, nk[2] = {N, K}, ns[2] = {N, S};
    int64_t nld[3] = {N, L, d}, nsd[3] = {N, S, d};
    m->d_tok = hg_graph_input(g, "prev_token", HG_I32, 2, n1, 0);
    m->d_pos = hg_graph_input(g, "position", HG_F32, 2, pd, -1);
    m->d_skeep = hg_graph_input(g, "self_keep", HG_I32, 2, nk, 0);
    m->d_ekeep = hg_graph_input(g, "src_keep", HG_I32, 2, ns, 0);
    int wt, wo;
    tgt_tables(g, s, &wt, &wo);
    int y = embed(g, wt, m->d_tok, m->d_pos, d, 0.f); /* [N,1,d] */
    struct hg_tlayer_cfg dc = gen_cfg(s, &s->dec);
    char name[96];
    for (int64_t l = 0; l < m->nl; l++) {
        snprintf(name, sizeof(name), "decoder.layers.%lld.self_attn.k_cache", (long long)l);
        m->d_sk[l] = hg_graph_input(g, name, HG_F32, 3, nld, 0);
        snprintf(name, sizeof(name), "decoder.layers.%lld.self_attn.v_cache", (long long)l);
        m->d_sv[l] = hg_graph_input(g, name, HG_F32, 3, nld, 0);
        snprintf(name, sizeof(name), "decoder.layers.%lld.encoder_attn.k", (long long)l);
        m->d_ek[l] = hg_graph_input(g, name, HG_F32, 3, nsd, 0);
        snprintf(name, sizeof(name), "decoder.layers.%lld.encoder_attn.v", (long long)l);
        m->d_ev[l] = hg_graph_input(g, name, HG_F32, 3, nsd, 0);
        snprintf(name, sizeof(name), "decoder.layers.%lld", (long long)l);
        y = hg_layer_transformer_decoder_step(g, name, y, m->d_sk[l], m->d_sv[l],
                                              m->d_skeep, m->d_ek[l], m->d_ev[l],
                                              m->d_ekeep, &dc, &m->d_kn[l], &m->d_vn[l]);
    }
    if (s->dec.normalize_before)
        y = hg_layer_layernorm(g, "decoder.layer_norm", y, d, 1e-5f);
    m->d_logp = hg_log_softmax(g, hg_matmul(g, y, wo, 0, 1)); /* [N,1,V] */
    hg_graph_keep(g, m->d_logp);
}

/* the reference: the whole decoder over the prefix [N,T] */
static void build_full(struct tr_gen *m)
{
    const struct tr_state *s = &m->s;
    struct hg_graph *g = m->dg;
    const int64_t d = s->enc.d;
    int64_t N = hg_graph_sym(g, "rows", m->cfg.max_rows);
    int64_t T = hg_graph_sym(g, "tgt_len", m->cfg.max_steps);
    int64_t S = hg_graph_sym(g, "src_len", m->cfg.max_src);
    int64_t nt[2] = {N, T}, td[2] = {T, d}, ns[2] = {N, S}, nsd[3] = {N, S, d};
    m->d_tok = hg_graph_input(g, "prev_output_tokens", HG_I32, 2, nt, 0);
    m->d_pos = hg_graph_input(g, "tgt_positions", HG_F32, 2, td, -1);
    m->d_ekeep = hg_graph_input(g, "src_keep", HG_I32, 2, ns, 0);
    m->d_enc = hg_graph_input(g, "encoder_out", HG_F32, 3, nsd, 0);
    int wt, wo;
    tgt_tables(g, s, &wt, &wo);
    int y = embed(g, wt, m->d_tok, m->d_pos, d, 0.f);
    struct hg_tlayer_cfg dc = gen_cfg(s, &s->dec);
    char name[96];
    for (int64_t l = 0; l < m->nl; l++) {
        snprintf(name, sizeof(name), "decoder.layers.%lld", (long long)l);
        y = hg_layer_transformer_decoder_cfg(g, name, y, -1, m->d_enc, m->d_ekeep, &dc);
    }
    if (s->dec.normalize_before)
        y = hg_layer_layernorm(g, "decoder.layer_norm", y, d, 1e-5f);
    m->d_logp = hg_log_softmax(g, hg_matmul(g, y, wo, 0, 1)); /* [N,T,V] */
    hg_graph_keep(g, m->d_logp);
}

static int tr_gen_open(void **out, const char *data, const struct hg_task_args *args,
                       const struct hg_task_gen_cfg *cfg, char *err, size_t errlen)
{
    *out = NULL;
    if (cfg->max_sentences < 1 || cfg->max_rows < 1 || cfg->max_src < 1 ||
        cfg->max_steps < 1) {
        snprintf(err, errlen, "translation: generation plan of %lld sentences, %lld "
                 "rows, source %lld, %lld steps: all must be >= 1",
                 (long long)cfg->max_sentences, (long long)cfg->max_rows,
                 (long long)cfg->max_src, (long long)cfg->max_steps);
        return -1;
    }
    void *st = NULL;
    if (tr_setup(&st, data, args, err, errlen) != 0)
        return -1;
    struct tr_gen *m = calloc(1, sizeof(*m));
    if (!m) {
        free(st);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    m->s = *(struct tr_state *)st;
    free(st);
    m->cfg = *cfg;
    const struct tr_state *s = &m->s;
    if (cfg->max_src > s->max_src) {
        snprintf(err, errlen, "translation: a source of %lld tokens, "
                 "--max-source-positions %lld", (long long)cfg->max_src,
                 (long long)s->max_src);
        tr_gen_close(m);
        return -1;
    }
    m->nl = s->dec.layers;
    size_t nl = (size_t)m->nl;
    int **arrs[] = {&m->e_k, &m->e_v, &m->d_sk, &m->d_sv, &m->d_ek, &m->d_ev, &m->d_kn,
                    &m->d_vn};
    for (size_t i = 0; i < sizeof(arrs) / sizeof(arrs[0]); i++)
        if (!(*arrs[i] = calloc(nl, sizeof(int))))
            goto oom;
    m->keep = malloc((size_t)(cfg->max_sentences * cfg->max_src) * sizeof(int32_t));
    m->lp = malloc((size_t)(cfg->max_rows * s->vtgt) * sizeof(float));
    m->enc_rows = malloc((size_t)cfg->max_rows * sizeof(int32_t));
    if (!m->keep || !m->lp || !m->enc_rows)
        goto oom;
    const size_t rows = (size_t)cfg->max_rows;
    if (cfg->incremental) {
        if (!(m->cache = calloc(2 * nl, sizeof(float *))))
            goto oom;
        for (size_t i = 0; i < 2 * nl; i++)
            if (!(m->cache[i] = malloc(rows * (size_t)(cfg->max_steps + 1) *
                                       (size_t)s->enc.d * sizeof(float))))
                goto oom;
    } else if (!(m->hist = malloc(rows * (size_t)cfg->max_steps * sizeof(int32_t)))) {
        goto oom;
    }
    m->eg = hg_graph_new();
    m->dg = hg_graph_new();
    if (!m->eg || !m->dg)
        goto oom;
    hg__task_attention(m->eg, s->attention);
    hg__task_attention(m->dg, s->attention);
    build_encoder(m);
    if (cfg->incremental)
        build_step(m);
    else
        build_full(m);
    if (!(m->ee = plan_forward(m->eg, err, errlen)) ||
        !(m->de = plan_forward(m->dg, err, errlen))) {
        tr_gen_close(m);
        return -1;
    }
    m->step_ok = -1;
    *out = m;
    return 0;
oom:
    tr_gen_close(m);
    snprintf(err, errlen, "translation: out of memory for a generation plan of %lld rows "
             "x %lld steps", (long long)cfg->max_rows, (long long)cfg->max_steps);
    return -1;
}

static int gen_graphs(void *model, struct hg_graph **g, struct hg_exec **ex)
{
    struct tr_gen *m = model;
    g[0] = m->eg;
    ex[0] = m->ee;
    g[1] = m->dg;
    ex[1] = m->de;
    return 2;
}

static int64_t gen_vocab(const void *m) { return ((const struct tr_gen *)m)->s.vtgt; }
static int64_t gen_max_positions(const void *model, int target)
{
    const struct tr_gen *m = model;
    return target ? m->s.max_tgt : m->s.max_src;
}
static const char *gen_lang(const void *model, int target)
{
    const struct tr_gen *m = model;
    return target ? m->s.tgt_lang : m->s.src_lang;
}
static int64_t gen_params(const void *model)
{
    const struct tr_gen *m = model;
    return hg_graph_param_count(m->eg) + hg_graph_param_count(m->dg);
}

static int tr_gen_encode(void *model, const int32_t *const *src, const int32_t *len,
                         int64_t B, char *err, size_t errlen)
{
    struct tr_gen *m = model;
    int64_t S = 1;
    for (int64_t i = 0; i < B; i++)
        S = len[i] > S ? len[i] : S;
    if (B < 1 || B > m->cfg.max_sentences || S > m->cfg.max_src) {
        snprintf(err, errlen, "translation: %lld sentences of up to %lld tokens; the "
                 "plan holds %lld of %lld", (long long)B, (long long)S,
                 (long long)m->cfg.max_sentences, (long long)m->cfg.max_src);
        return -1;
    }
    int64_t sym[2] = {B, S};
    struct hg_step st = {.sym = sym, .step = 1, .grad_scale = 1.f};
    if (hg_exec_prepare(m->ee, &st, err, errlen) != 0)
        return -1;
    int32_t *ids = hg_exec_data(m->ee, m->e_src), *keep = hg_exec_data(m->ee, m->e_keep);
    for (int64_t i = 0; i < B; i++)
        for (int64_t j = 0; j < S; j++) {
            int real = j < len[i];
            int32_t id = real ? src[i][j] : TR_PAD;
            if (id < 0 || id >= m->s.vsrc) {
                snprintf(err, errlen, "translation: source %lld: id %d not in [0,%lld) "
                         "(dict.%s.txt)", (long long)i, (int)id, (long long)m->s.vsrc,
                         m->s.src_lang);
                return -1;
            }
            ids[i * S + j] = id;
            keep[i * S + j] = m->keep[i * S + j] = real;
        }
    sinusoids(hg_exec_data(m->ee, m->e_pos), S, m->s.enc.d, TR_PAD + 1);
    if (hg_exec_run(m->ee, &st, 0, hg_exec_n(m->ee), err, errlen) != 0)
        return -1;
    m->B = B;
    m->S = S;
    m->step_ok = 0;
    m->enc_n = 0; /* the step graph's encoder inputs are stale */
    return 0;
}

/* dst rows r = src rows sent[r] of [*, S, d] */
static void gather_rows(float *dst, const float *src, const int32_t *sent, int64_t N,
                        size_t row)
{
    for (int64_t r = 0; r < N; r++)
        memcpy(dst + (size_t)r * row, src + (size_t)sent[r] * row, row * sizeof(float));
}

static int tr_gen_step(void *model, int64_t step, int64_t N, const int32_t *row_sent,
                       const int32_t *row_from, const int32_t *tok, const float **logp,
                       char *err, size_t errlen)
{
    struct tr_gen *m = model;
    const int64_t d = m->s.enc.d, V = m->s.vtgt, S = m->S;
    if (step != m->step_ok || N < 1 || N > m->cfg.max_rows || step >= m->cfg.max_steps) {
        snprintf(err, errlen, "translation: decoder step %lld of %lld rows (expected step "
                 "%lld, the plan holds %lld rows and %lld steps)", (long long)step,
                 (long long)N, (long long)m->step_ok, (long long)m->cfg.max_rows,
                 (long long)m->cfg.max_steps);
        return -1;
    }
    for (int64_t r = 0; r < N; r++)
        if (row_sent[r] < 0 || row_sent[r] >= m->B || tok[r] < 0 || tok[r] >= V ||
            (step > 0 && (row_from[r] < 0 || row_from[r] >= m->cfg.max_rows))) {
            snprintf(err, errlen, "translation: decoder step %lld, row %lld: sentence %d, "
                     "from %d, token %d out of range", (long long)step, (long long)r,
                     (int)row_sent[r], step > 0 ? (int)row_from[r] : -1, (int)tok[r]);
            return -1;
        }
    const size_t sd = (size_t)(S * d);
    struct hg_step st = {.step = 1, .grad_scale = 1.f};
    if (m->cache) {
        const int64_t L = step + 1; /* dummy row + step earlier positions */
        int64_t sym[4] = {N, L, L + 1, S};
        st.sym = sym;
        if (hg_exec_prepare(m->de, &st, err, errlen) != 0)
            return -1;
        int32_t *tk = hg_exec_data(m->de, m->d_tok);
        int32_t *sk = hg_exec_data(m->de, m->d_skeep);
        int32_t *ek = hg_exec_data(m->de, m->d_ekeep);
        for (int64_t r = 0; r < N; r++) {
            tk[r] = tok[r];
            for (int64_t j = 0; j <= L; j++)
                sk[r * (L + 1) + j] = j > 0;
            memcpy(ek + r * S, m->keep + (int64_t)row_sent[r] * S, (size_t)S * sizeof(int32_t));
        }
        sinusoids(hg_exec_data(m->de, m->d_pos), 1, d, step + TR_PAD + 1);
        /* the rows' encoder keys/values change only with the batch and
         * when sentences finish (beams of one sentence share them) */
        int same = m->enc_n == N;
        for (int64_t r = 0; same && r < N; r++)
            same = m->enc_rows[r] == row_sent[r];
        const size_t stride = (size_t)(m->cfg.max_steps + 1) * (size_t)d;
        const size_t crow = (size_t)L * (size_t)d;
        for (int64_t l = 0; l < m->nl; l++) {
            float *in[2] = {hg_exec_data(m->de, m->d_sk[l]), hg_exec_data(m->de, m->d_sv[l])};
            for (int kv = 0; kv < 2; kv++) {
                const float *c = m->cache[2 * l + kv];
                for (int64_t r = 0; r < N; r++) {
                    if (step == 0)
                        memset(in[kv] + (size_t)r * crow, 0, crow * sizeof(float));
                    else
                        memcpy(in[kv] + (size_t)r * crow, c + (size_t)row_from[r] * stride,
                               crow * sizeof(float));
                }
            }
            if (same)
                continue;
            gather_rows(hg_exec_data(m->de, m->d_ek[l]),
                        hg_exec_data(m->ee, m->e_k[l]), row_sent, N, sd);
            gather_rows(hg_exec_data(m->de, m->d_ev[l]),
                        hg_exec_data(m->ee, m->e_v[l]), row_sent, N, sd);
        }
        memcpy(m->enc_rows, row_sent, (size_t)N * sizeof(int32_t));
        m->enc_n = N;
        if (hg_exec_run(m->de, &st, 0, hg_exec_n(m->de), err, errlen) != 0)
            return -1;
        /* the caches for the next step: these rows, then the new one */
        for (int64_t l = 0; l < m->nl; l++) {
            const float *in[2] = {hg_exec_data(m->de, m->d_sk[l]),
                                  hg_exec_data(m->de, m->d_sv[l])};
            const float *nw[2] = {hg_exec_data(m->de, m->d_kn[l]),
                                  hg_exec_data(m->de, m->d_vn[l])};
            for (int kv = 0; kv < 2; kv++) {
                float *c = m->cache[2 * l + kv];
                for (int64_t r = 0; r < N; r++) {
                    memcpy(c + (size_t)r * stride, in[kv] + (size_t)r * crow,
                           crow * sizeof(float));
                    memcpy(c + (size_t)r * stride + crow, nw[kv] + (size_t)r * (size_t)d,
                           (size_t)d * sizeof(float));
                }
            }
        }
        *logp = hg_exec_data(m->de, m->d_logp);
    } else {
        const int64_t T = step + 1;
        int64_t sym[3] = {N, T, S};
        st.sym = sym;
        if (hg_exec_prepare(m->de, &st, err, errlen) != 0)
            return -1;
        int32_t *prev = hg_exec_data(m->de, m->d_tok);
        int32_t *ek = hg_exec_data(m->de, m->d_ekeep);
        const size_t hs = (size_t)m->cfg.max_steps;
        for (int64_t r = 0; r < N; r++) {
            if (step > 0)
                memcpy(prev + r * T, m->hist + (size_t)row_from[r] * hs,
                       (size_t)step * sizeof(int32_t));
            prev[r * T + step] = tok[r];
            memcpy(ek + r * S, m->keep + (int64_t)row_sent[r] * S, (size_t)S * sizeof(int32_t));
        }
        for (int64_t r = 0; r < N; r++)
            memcpy(m->hist + (size_t)r * hs, prev + r * T, (size_t)T * sizeof(int32_t));
        sinusoids(hg_exec_data(m->de, m->d_pos), T, d, TR_PAD + 1);
        gather_rows(hg_exec_data(m->de, m->d_enc), hg_exec_data(m->ee, m->e_out), row_sent,
                    N, sd);
        if (hg_exec_run(m->de, &st, 0, hg_exec_n(m->de), err, errlen) != 0)
            return -1;
        const float *lp = hg_exec_data(m->de, m->d_logp);
        for (int64_t r = 0; r < N; r++)
            memcpy(m->lp + r * V, lp + ((size_t)r * (size_t)T + (size_t)step) * (size_t)V,
                   (size_t)V * sizeof(float));
        *logp = m->lp;
    }
    m->step_ok = step + 1;
    return 0;
}

static const struct hg_task_gen tr_gen = {
    .open = tr_gen_open,
    .close = tr_gen_close,
    .graphs = gen_graphs,
    .vocab = gen_vocab,
    .max_positions = gen_max_positions,
    .lang = gen_lang,
    .params = gen_params,
    .encode = tr_gen_encode,
    .step = tr_gen_step,
};
