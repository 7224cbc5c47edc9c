/* models.c - graph builders (shapes only) for the models of HeteroG's
 * evaluation: VGG-19, ResNet-50/101/200, Inception-v3, MobileNet-v2,
 * Transformer (6 and 24 layers, base dims), BERT-large (24 and 48 layers).
 * Building a graph records tensors and nodes; no tensor storage is
 * allocated (that is hg_exec_new's job), so ResNet-200 at batch 576 builds
 * in milliseconds.
 *
 * Only shapes, FLOPs and bytes matter for planning.  Where the op table
 * lacks an op, an op of equal shapes, parameter count and (to first order)
 * cost stands in, as documented at each helper:
 *   - batch norm      -> x * gamma[C,1,1] + beta[C,1,1] (the same 2C trained
 *                        parameters; running statistics are buffers, not
 *                        parameters, and are left out; the normalisation
 *                        itself, ~4 more element-wise passes, is not priced)
 *   - average pooling -> max pooling of the same geometry (same output
 *                        shape, k*k reads per output)
 *   - ReLU6           -> ReLU
 *   - depthwise conv  -> a 1-channel convolution over [N,1,C*H,W] (the
 *                        channels stacked along H), with a [C,1,k,k]
 *                        parameter of which one [1,1,k,k] slice is used:
 *                        exact parameter count, output shape and
 *                        multiply-adds (N*C*OH*OW*k*k); the numbers
 *                        computed are meaningless, the costs are right
 *   - BERT's masked-LM gather of 20 positions -> the first 20 positions
 *                        (a slice of the same shape)
 * FLOPs count a multiply-add as 2 (kernels/shapes.c); published model
 * "FLOPs" (torchvision, the papers) are multiply-adds, so the test
 * compares the convolution and matmul FLOPs / 2 with them. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include <stdarg.h>

#include "planner/hg_planner.h"

/* snprintf for parameter names: a truncated name is a bug here. */
static void fmtname(char *buf, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fmtname(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    HG_CHECK(k >= 0 && (size_t)k < n);
}

/* Published parameter counts and forward multiply-adds per sample:
 * torchvision's model documentation (ImageNet weights: VGG-19, ResNet-50,
 * ResNet-101, Inception-v3 without the auxiliary head, MobileNet-v2), timm
 * for ResNet-200 (64.67M, 15.07 GMACs at 224), Vaswani et al. 2017 Table 3
 * (Transformer base: 65M), Devlin et al. 2019 (BERT-large: 340M; the
 * reference implementation counts 335M with the MLM head, hence 3%). */
const struct hg_model_spec hg_model_specs[] = {
    {"vgg19", "VGG-19, ImageNet 224x224, 1000 classes", 192, 0, 143.667240e6, 19.632e9,
     0.01, "torchvision vgg19: 143,667,240 params, 19.63 GMACs"},
    {"resnet50", "ResNet-50 (v1.5, stride in the 3x3), 224x224", 192, 0, 25.557032e6,
     4.089e9, 0.02, "torchvision resnet50: 25,557,032 params, 4.09 GMACs"},
    {"resnet101", "ResNet-101 (v1.5), 224x224", 192, 0, 44.549160e6, 7.801e9, 0.02,
     "torchvision resnet101: 44,549,160 params, 7.80 GMACs"},
    {"resnet200", "ResNet-200 (bottleneck 3-24-36-3), 224x224", 192, 0, 64.67e6,
     15.07e9, 0.03, "timm resnet200: 64.67M params, 15.07 GMACs"},
    {"inception_v3", "Inception-v3 without the auxiliary head, 299x299", 192, 0,
     23.834568e6, 5.713e9, 0.03,
     "torchvision inception_v3: 27.16M with AuxLogits (3.33M), 23.83M without; "
     "5.71 GMACs"},
    {"mobilenet_v2", "MobileNet-v2 (width 1.0), 224x224", 192, 0, 3.504872e6, 0.3e9,
     0.03, "torchvision mobilenet_v2: 3,504,872 params, 0.30 GMACs"},
    {"transformer", "Transformer base: 6+6 layers, d 512, 8 heads, FFN 2048, shared "
     "37000-token vocabulary", 720, 32, 65e6, 0, 0.05,
     "Vaswani et al. 2017, Table 3: base model 65M params"},
    {"transformer24", "Transformer with 24+24 layers, base dims", 120, 32, 0, 0, 0, ""},
    {"bert_large", "BERT-large: 24 layers, d 1024, 16 heads, FFN 4096, vocab 30522, "
     "MLM head on 20 positions", 48, 128, 340e6, 0, 0.03,
     "Devlin et al. 2019: BERT-large 340M params"},
    {"bert_large48", "BERT-large with 48 layers", 24, 128, 0, 0, 0, ""},
};
const int hg_n_model_specs = (int)(sizeof(hg_model_specs) / sizeof(hg_model_specs[0]));

const struct hg_model_spec *hg_model_spec_find(const char *name)
{
    for (int i = 0; name && i < hg_n_model_specs; i++)
        if (strcmp(hg_model_specs[i].name, name) == 0)
            return &hg_model_specs[i];
    return NULL;
}

void hg_graph_cost_phase(const struct hg_graph *g, int phase_mask, struct hg_cost *total)
{
    total->flops = total->bytes = 0;
    struct hg_shape in[HG_MAX_INPUTS], out;
    for (int n = 0; n < hg_graph_n_nodes(g); n++) {
        const struct hg_node_info *nd = hg_graph_node(g, n);
        if (!(nd->phase & phase_mask))
            continue;
        for (int i = 0; i < nd->n_in; i++)
            in[i] = hg_graph_tensor(g, nd->in[i])->shape;
        out = nd->out >= 0 ? hg_graph_tensor(g, nd->out)->shape : (struct hg_shape){0};
        struct hg_cost c = {0, 0};
        hg_op_table[nd->op].cost(in, nd->n_in, &out, &nd->attr, &c);
        total->flops += c.flops;
        total->bytes += c.bytes;
    }
}

/* ---------------------------------------------------------------- helpers */

static int64_t dim(struct hg_graph *g, int t, int i)
{
    return hg_graph_tensor(g, t)->shape.dim[i];
}

static int param(struct hg_graph *g, const char *prefix, const char *leaf, int nd,
                 const int64_t *d, enum hg_init init)
{
    char name[160];
    fmtname(name, sizeof(name), "%s.%s", prefix, leaf);
    return hg_graph_param(g, name, nd, d, init, init == HG_INIT_ZERO ? 0.f : 0.02f);
}

/* Convolution [N,C,H,W] -> [N,O,OH,OW] with a kh x kw kernel. */
static int conv(struct hg_graph *g, const char *prefix, int x, int64_t out, int kh,
                int kw, int sh, int sw, int ph, int pw, int bias)
{
    int64_t wd[4] = {out, dim(g, x, 1), kh, kw};
    int w = param(g, prefix, "weight", 4, wd, HG_INIT_NORMAL);
    union hg_attr at = {.conv = {.kh = kh, .kw = kw, .stride_h = sh, .stride_w = sw,
                                 .pad_h = ph, .pad_w = pw}};
    int in[2] = {x, w};
    int y = hg_graph_op(g, HG_OP_CONV2D, in, 2, &at);
    if (bias) {
        int64_t bd[3] = {out, 1, 1};
        y = hg_add(g, y, param(g, prefix, "bias", 3, bd, HG_INIT_ZERO));
    }
    return y;
}

/* Batch norm, approximated (see the top): x * gamma + beta per channel. */
static int bn(struct hg_graph *g, const char *prefix, int x)
{
    int64_t cd[3] = {dim(g, x, 1), 1, 1};
    int gamma = param(g, prefix, "weight", 3, cd, HG_INIT_ONE);
    int beta = param(g, prefix, "bias", 3, cd, HG_INIT_ZERO);
    return hg_add(g, hg_mul(g, x, gamma), beta);
}

/* conv (no bias) + bn (+ relu): torchvision's BasicConv2d / ConvBNReLU. */
static int cbr(struct hg_graph *g, const char *prefix, int x, int64_t out, int kh, int kw,
               int s, int ph, int pw, int relu)
{
    char p[160];
    fmtname(p, sizeof(p), "%s.conv", prefix);
    int y = conv(g, p, x, out, kh, kw, s, s, ph, pw, 0);
    fmtname(p, sizeof(p), "%s.bn", prefix);
    y = bn(g, p, y);
    return relu ? hg_relu(g, y) : y;
}

static int cbr_k(struct hg_graph *g, const char *prefix, int x, int64_t out, int k, int s,
                 int pad)
{
    return cbr(g, prefix, x, out, k, k, s, pad, pad, 1);
}

/* Depthwise k x k convolution, stride s, pad k/2 (see the top). */
static int dwconv(struct hg_graph *g, const char *prefix, int x, int k, int s)
{
    int64_t C = dim(g, x, 1), H = dim(g, x, 2), W = dim(g, x, 3);
    int64_t wd[4] = {C, 1, k, k};
    int w = param(g, prefix, "weight", 4, wd, HG_INIT_NORMAL);
    int w1 = hg_slice(g, w, 0, 0, 1);                 /* [1,1,k,k] */
    int64_t stack[4] = {0, 1, C * H, W};
    int xs = hg_reshape(g, x, 4, stack);              /* [N,1,C*H,W] */
    union hg_attr at = {.conv = {.kh = k, .kw = k, .stride_h = s, .stride_w = s,
                                 .pad_h = k / 2, .pad_w = k / 2}};
    int in[2] = {xs, w1};
    int y = hg_graph_op(g, HG_OP_CONV2D, in, 2, &at); /* [N,1,C*OH,OW] */
    int64_t oh = (H + 2 * (k / 2) - k) / s + 1;
    HG_CHECK(dim(g, y, 2) == C * oh); /* channels stay apart: needs C*H even at s 2 */
    int64_t back[4] = {0, C, oh, dim(g, y, 3)};
    return hg_reshape(g, y, 4, back);
}

/* Average pooling, approximated by max pooling of the same geometry. */
static int avgpool(struct hg_graph *g, int x, int k, int s, int pad)
{
    return hg_maxpool2d(g, x, k, s, pad);
}

/* Global average pooling [N,C,H,W] -> [N,C]. */
static int gap(struct hg_graph *g, int x)
{
    int64_t C = dim(g, x, 1);
    int64_t d3[3] = {0, C, dim(g, x, 2) * dim(g, x, 3)};
    int y = hg_mean(g, hg_reshape(g, x, 3, d3), 2); /* [N,C,1] */
    int64_t d2[2] = {0, C};
    return hg_reshape(g, y, 2, d2);
}

static int fc(struct hg_graph *g, const char *prefix, int x, int64_t out)
{
    return hg_layer_linear(g, prefix, x, dim(g, x, hg_graph_tensor(g, x)->shape.ndim - 1),
                           out, 1);
}

struct image_io {
    int image, label;
};

static void image_inputs(struct hg_graph *g, int64_t batch, int64_t hw, struct image_io *io)
{
    int64_t B = hg_graph_sym(g, "batch", batch);
    int64_t xd[4] = {B, 3, hw, hw};
    io->image = hg_graph_input(g, "image", HG_F32, 4, xd, 0);
    io->label = hg_graph_input(g, "label", HG_I32, 1, &B, 0);
}

static int classify(struct hg_graph *g, int logits, const struct image_io *io)
{
    hg_graph_keep(g, logits);
    return hg_cross_entropy(g, logits, io->label, -100, 0.f);
}

/* ---------------------------------------------------------------- VGG-19 */

static int build_vgg19(struct hg_graph *g, int64_t batch)
{
    static const int cfg[] = {64, 64, 0, 128, 128, 0, 256, 256, 256, 256, 0,
                              512, 512, 512, 512, 0, 512, 512, 512, 512, 0};
    struct image_io io;
    image_inputs(g, batch, 224, &io);
    int x = io.image, li = 0;
    char p[64];
    for (size_t i = 0; i < sizeof(cfg) / sizeof(cfg[0]); i++, li++) {
        if (cfg[i] == 0) {
            x = hg_maxpool2d(g, x, 2, 2, 0);
            continue;
        }
        fmtname(p, sizeof(p), "features.%d", li);
        x = hg_relu(g, conv(g, p, x, cfg[i], 3, 3, 1, 1, 1, 1, 1));
        li++; /* torchvision numbers the ReLU too */
    }
    int64_t flat[2] = {0, 512 * 7 * 7};
    x = hg_reshape(g, x, 2, flat);
    x = hg_dropout(g, hg_relu(g, fc(g, "classifier.0", x, 4096)), 0.5f, 1);
    x = hg_dropout(g, hg_relu(g, fc(g, "classifier.3", x, 4096)), 0.5f, 1);
    return classify(g, fc(g, "classifier.6", x, 1000), &io);
}

/* ---------------------------------------------------------------- ResNet */

static int bottleneck(struct hg_graph *g, const char *prefix, int x, int64_t width,
                      int stride)
{
    char p[160];
    int64_t out = 4 * width;
    fmtname(p, sizeof(p), "%s.1", prefix);
    int y = cbr_k(g, p, x, width, 1, 1, 0);
    fmtname(p, sizeof(p), "%s.2", prefix);
    y = cbr_k(g, p, y, width, 3, stride, 1);
    fmtname(p, sizeof(p), "%s.3", prefix);
    y = cbr(g, p, y, out, 1, 1, 1, 0, 0, 0);
    int sc = x;
    if (stride != 1 || dim(g, x, 1) != out) {
        fmtname(p, sizeof(p), "%s.downsample", prefix);
        sc = cbr(g, p, x, out, 1, 1, stride, 0, 0, 0);
    }
    return hg_relu(g, hg_add(g, y, sc));
}

static int build_resnet(struct hg_graph *g, int64_t batch, const int *blocks)
{
    struct image_io io;
    image_inputs(g, batch, 224, &io);
    int x = cbr_k(g, "stem", io.image, 64, 7, 2, 3);
    x = hg_maxpool2d(g, x, 3, 2, 1);
    for (int s = 0; s < 4; s++)
        for (int b = 0; b < blocks[s]; b++) {
            char p[64];
            fmtname(p, sizeof(p), "layer%d.%d", s + 1, b);
            x = bottleneck(g, p, x, 64 << s, b == 0 && s > 0 ? 2 : 1);
        }
    return classify(g, fc(g, "fc", gap(g, x), 1000), &io);
}

/* ---------------------------------------------------------------- Inception-v3 */

static int cat(struct hg_graph *g, const int *xs, int n)
{
    return hg_concat(g, xs, n, 1);
}

#define PFX(buf, fmt, ...) (fmtname(buf, sizeof(buf), fmt, __VA_ARGS__), buf)

static int inc_a(struct hg_graph *g, const char *m, int x, int64_t pool_features)
{
    char p[128];
    int b1 = cbr_k(g, PFX(p, "%s.branch1x1", m), x, 64, 1, 1, 0);
    int b5 = cbr_k(g, PFX(p, "%s.branch5x5_1", m), x, 48, 1, 1, 0);
    b5 = cbr_k(g, PFX(p, "%s.branch5x5_2", m), b5, 64, 5, 1, 2);
    int b3 = cbr_k(g, PFX(p, "%s.branch3x3dbl_1", m), x, 64, 1, 1, 0);
    b3 = cbr_k(g, PFX(p, "%s.branch3x3dbl_2", m), b3, 96, 3, 1, 1);
    b3 = cbr_k(g, PFX(p, "%s.branch3x3dbl_3", m), b3, 96, 3, 1, 1);
    int bp = cbr_k(g, PFX(p, "%s.branch_pool", m), avgpool(g, x, 3, 1, 1), pool_features,
                   1, 1, 0);
    int xs[4] = {b1, b5, b3, bp};
    return cat(g, xs, 4);
}

static int inc_b(struct hg_graph *g, const char *m, int x)
{
    char p[128];
    int b3 = cbr_k(g, PFX(p, "%s.branch3x3", m), x, 384, 3, 2, 0);
    int bd = cbr_k(g, PFX(p, "%s.branch3x3dbl_1", m), x, 64, 1, 1, 0);
    bd = cbr_k(g, PFX(p, "%s.branch3x3dbl_2", m), bd, 96, 3, 1, 1);
    bd = cbr_k(g, PFX(p, "%s.branch3x3dbl_3", m), bd, 96, 3, 2, 0);
    int xs[3] = {b3, bd, hg_maxpool2d(g, x, 3, 2, 0)};
    return cat(g, xs, 3);
}

/* 1x7 then 7x1 (or the reverse) */
static int c17(struct hg_graph *g, const char *name, int x, int64_t out, int horiz)
{
    return horiz ? cbr(g, name, x, out, 1, 7, 1, 0, 3, 1)
                 : cbr(g, name, x, out, 7, 1, 1, 3, 0, 1);
}

static int inc_c(struct hg_graph *g, const char *m, int x, int64_t c7)
{
    char p[128];
    int b1 = cbr_k(g, PFX(p, "%s.branch1x1", m), x, 192, 1, 1, 0);
    int b7 = cbr_k(g, PFX(p, "%s.branch7x7_1", m), x, c7, 1, 1, 0);
    b7 = c17(g, PFX(p, "%s.branch7x7_2", m), b7, c7, 1);
    b7 = c17(g, PFX(p, "%s.branch7x7_3", m), b7, 192, 0);
    int bd = cbr_k(g, PFX(p, "%s.branch7x7dbl_1", m), x, c7, 1, 1, 0);
    bd = c17(g, PFX(p, "%s.branch7x7dbl_2", m), bd, c7, 0);
    bd = c17(g, PFX(p, "%s.branch7x7dbl_3", m), bd, c7, 1);
    bd = c17(g, PFX(p, "%s.branch7x7dbl_4", m), bd, c7, 0);
    bd = c17(g, PFX(p, "%s.branch7x7dbl_5", m), bd, 192, 1);
    int bp = cbr_k(g, PFX(p, "%s.branch_pool", m), avgpool(g, x, 3, 1, 1), 192, 1, 1, 0);
    int xs[4] = {b1, b7, bd, bp};
    return cat(g, xs, 4);
}

static int inc_d(struct hg_graph *g, const char *m, int x)
{
    char p[128];
    int b3 = cbr_k(g, PFX(p, "%s.branch3x3_1", m), x, 192, 1, 1, 0);
    b3 = cbr_k(g, PFX(p, "%s.branch3x3_2", m), b3, 320, 3, 2, 0);
    int b7 = cbr_k(g, PFX(p, "%s.branch7x7x3_1", m), x, 192, 1, 1, 0);
    b7 = c17(g, PFX(p, "%s.branch7x7x3_2", m), b7, 192, 1);
    b7 = c17(g, PFX(p, "%s.branch7x7x3_3", m), b7, 192, 0);
    b7 = cbr_k(g, PFX(p, "%s.branch7x7x3_4", m), b7, 192, 3, 2, 0);
    int xs[3] = {b3, b7, hg_maxpool2d(g, x, 3, 2, 0)};
    return cat(g, xs, 3);
}

static int inc_e(struct hg_graph *g, const char *m, int x)
{
    char p[128];
    int b1 = cbr_k(g, PFX(p, "%s.branch1x1", m), x, 320, 1, 1, 0);
    int b3 = cbr_k(g, PFX(p, "%s.branch3x3_1", m), x, 384, 1, 1, 0);
    int b3s[2] = {cbr(g, PFX(p, "%s.branch3x3_2a", m), b3, 384, 1, 3, 1, 0, 1, 1),
                  cbr(g, PFX(p, "%s.branch3x3_2b", m), b3, 384, 3, 1, 1, 1, 0, 1)};
    int bd = cbr_k(g, PFX(p, "%s.branch3x3dbl_1", m), x, 448, 1, 1, 0);
    bd = cbr_k(g, PFX(p, "%s.branch3x3dbl_2", m), bd, 384, 3, 1, 1);
    int bds[2] = {cbr(g, PFX(p, "%s.branch3x3dbl_3a", m), bd, 384, 1, 3, 1, 0, 1, 1),
                  cbr(g, PFX(p, "%s.branch3x3dbl_3b", m), bd, 384, 3, 1, 1, 1, 0, 1)};
    int bp = cbr_k(g, PFX(p, "%s.branch_pool", m), avgpool(g, x, 3, 1, 1), 192, 1, 1, 0);
    int xs[4] = {b1, cat(g, b3s, 2), cat(g, bds, 2), bp};
    return cat(g, xs, 4);
}

static int build_inception_v3(struct hg_graph *g, int64_t batch)
{
    struct image_io io;
    image_inputs(g, batch, 299, &io);
    int x = cbr_k(g, "Conv2d_1a_3x3", io.image, 32, 3, 2, 0); /* 149 */
    x = cbr_k(g, "Conv2d_2a_3x3", x, 32, 3, 1, 0);             /* 147 */
    x = cbr_k(g, "Conv2d_2b_3x3", x, 64, 3, 1, 1);             /* 147 */
    x = hg_maxpool2d(g, x, 3, 2, 0);                           /* 73 */
    x = cbr_k(g, "Conv2d_3b_1x1", x, 80, 1, 1, 0);
    x = cbr_k(g, "Conv2d_4a_3x3", x, 192, 3, 1, 0);            /* 71 */
    x = hg_maxpool2d(g, x, 3, 2, 0);                           /* 35 */
    x = inc_a(g, "Mixed_5b", x, 32);
    x = inc_a(g, "Mixed_5c", x, 64);
    x = inc_a(g, "Mixed_5d", x, 64);
    x = inc_b(g, "Mixed_6a", x);                               /* 17 */
    x = inc_c(g, "Mixed_6b", x, 128);
    x = inc_c(g, "Mixed_6c", x, 160);
    x = inc_c(g, "Mixed_6d", x, 160);
    x = inc_c(g, "Mixed_6e", x, 192);
    x = inc_d(g, "Mixed_7a", x);                               /* 8 */
    x = inc_e(g, "Mixed_7b", x);
    x = inc_e(g, "Mixed_7c", x);
    x = hg_dropout(g, gap(g, x), 0.5f, 1);
    return classify(g, fc(g, "fc", x, 1000), &io);
}

/* ---------------------------------------------------------------- MobileNet-v2 */

static int build_mobilenet_v2(struct hg_graph *g, int64_t batch)
{
    static const int set[7][4] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2},
                                  {6, 64, 4, 2}, {6, 96, 3, 1}, {6, 160, 3, 2},
                                  {6, 320, 1, 1}};
    struct image_io io;
    image_inputs(g, batch, 224, &io);
    int x = cbr_k(g, "features.0", io.image, 32, 3, 2, 1);
    int li = 1;
    char p[128];
    for (int s = 0; s < 7; s++)
        for (int i = 0; i < set[s][2]; i++, li++) {
            int64_t cin = dim(g, x, 1), hidden = cin * set[s][0], cout = set[s][1];
            int stride = i == 0 ? set[s][3] : 1;
            int y = x;
            if (set[s][0] != 1)
                y = cbr_k(g, PFX(p, "features.%d.expand", li), y, hidden, 1, 1, 0);
            y = dwconv(g, PFX(p, "features.%d.dw.conv", li), y, 3, stride);
            y = hg_relu(g, bn(g, PFX(p, "features.%d.dw.bn", li), y));
            y = cbr(g, PFX(p, "features.%d.project", li), y, cout, 1, 1, 1, 0, 0, 0);
            x = stride == 1 && cin == cout ? hg_add(g, x, y) : y;
        }
    x = cbr_k(g, PFX(p, "features.%d", li), x, 1280, 1, 1, 0);
    x = hg_dropout(g, gap(g, x), 0.2f, 1);
    return classify(g, fc(g, "classifier.1", x, 1000), &io);
}

/* ---------------------------------------------------------------- Transformer */

#define TF_VOCAB 37000 /* Vaswani et al.: shared BPE vocabulary of ~37000 */

static int build_transformer(struct hg_graph *g, int64_t batch, int64_t seq, int layers)
{
    const int64_t d = 512, ffn = 2048, V = TF_VOCAB;
    const int heads = 8;
    const float p = 0.1f;
    int64_t B = hg_graph_sym(g, "batch", batch);
    int64_t T = hg_graph_sym(g, "length", seq);
    int64_t bt[2] = {B, T};
    int src = hg_graph_input(g, "src_tokens", HG_I32, 2, bt, 0);
    int tgt_in = hg_graph_input(g, "prev_output_tokens", HG_I32, 2, bt, 0);
    int tgt = hg_graph_input(g, "target", HG_I32, 2, bt, 0);
    /* one embedding for source, target and the output projection (tied);
     * sinusoidal positions have no parameters and are left out */
    int64_t ed[2] = {V, d};
    int emb = hg_graph_param(g, "embed_tokens.weight", 2, ed, HG_INIT_NORMAL, 0.044f);
    int in[2] = {emb, src};
    int x = hg_dropout(g, hg_scale(g, hg_graph_op(g, HG_OP_EMBEDDING, in, 2, NULL), 22.6f),
                       p, 1);
    char name[64];
    for (int l = 0; l < layers; l++) {
        fmtname(name, sizeof(name), "encoder.layers.%d", l);
        x = hg_layer_transformer_encoder(g, name, x, -1, d, heads, ffn, p, 1);
    }
    in[1] = tgt_in;
    int y = hg_dropout(g, hg_scale(g, hg_graph_op(g, HG_OP_EMBEDDING, in, 2, NULL), 22.6f),
                       p, 1);
    for (int l = 0; l < layers; l++) {
        fmtname(name, sizeof(name), "decoder.layers.%d", l);
        y = hg_layer_transformer_decoder(g, name, y, x, -1, d, heads, ffn, p, 1);
    }
    int logits = hg_matmul(g, y, emb, 0, 1); /* [B,T,V] */
    hg_graph_keep(g, logits);
    return hg_cross_entropy(g, logits, tgt, 1, 0.1f);
}

/* ---------------------------------------------------------------- BERT-large */

#define BERT_VOCAB 30522
#define BERT_MAX_POS 512
#define BERT_MLM_POSITIONS 20 /* max_predictions_per_seq at length 128 */

static int build_bert(struct hg_graph *g, int64_t batch, int64_t seq, int layers)
{
    const int64_t d = 1024, ffn = 4096, V = BERT_VOCAB, P = BERT_MAX_POS;
    const int heads = 16;
    const float p = 0.1f;
    if (seq > P)
        return -1;
    int64_t B = hg_graph_sym(g, "batch", batch);
    int64_t T = hg_graph_sym(g, "length", seq);
    int64_t bt[2] = {B, T};
    int ids = hg_graph_input(g, "input_ids", HG_I32, 2, bt, 0);
    int seg = hg_graph_input(g, "segment_ids", HG_I32, 2, bt, 0);
    int keep = hg_graph_input(g, "input_mask", HG_I32, 2, bt, 0);
    int pos = hg_graph_input(g, "positions", HG_I32, 1, &T, -1);
    int64_t npred = BERT_MLM_POSITIONS < seq ? BERT_MLM_POSITIONS : seq;
    int64_t bp[2] = {B, npred};
    int tgt = hg_graph_input(g, "masked_lm_ids", HG_I32, 2, bp, 0);
    int64_t wd[2] = {V, d}, pd[2] = {P, d}, sd[2] = {2, d};
    int wtok = hg_graph_param(g, "embeddings.word_embeddings.weight", 2, wd, HG_INIT_NORMAL,
                              0.02f);
    int wpos = hg_graph_param(g, "embeddings.position_embeddings.weight", 2, pd,
                              HG_INIT_NORMAL, 0.02f);
    int wseg = hg_graph_param(g, "embeddings.token_type_embeddings.weight", 2, sd,
                              HG_INIT_NORMAL, 0.02f);
    int a[2] = {wtok, ids}, b[2] = {wpos, pos}, c[2] = {wseg, seg};
    int x = hg_add(g, hg_add(g, hg_graph_op(g, HG_OP_EMBEDDING, a, 2, NULL),
                             hg_graph_op(g, HG_OP_EMBEDDING, b, 2, NULL)),
                   hg_graph_op(g, HG_OP_EMBEDDING, c, 2, NULL));
    x = hg_dropout(g, hg_layer_layernorm(g, "embeddings.LayerNorm", x, d, 1e-12f), p, 1);
    char n1[96], n2[96];
    for (int l = 0; l < layers; l++) {
        /* post-norm encoder layer with GELU (BERT), not the ReLU one of
         * hg_layer_transformer_encoder */
        fmtname(n1, sizeof(n1), "encoder.layer.%d.attention", l);
        int h = hg_layer_mha(g, n1, x, x, keep, d, heads, 0, p, 1);
        fmtname(n1, sizeof(n1), "encoder.layer.%d.attention.LayerNorm", l);
        x = hg_layer_layernorm(g, n1, hg_add(g, x, hg_dropout(g, h, p, 1)), d, 1e-12f);
        fmtname(n1, sizeof(n1), "encoder.layer.%d.intermediate.dense", l);
        fmtname(n2, sizeof(n2), "encoder.layer.%d.output.dense", l);
        h = hg_layer_linear(g, n2, hg_gelu(g, hg_layer_linear(g, n1, x, d, ffn, 1)), ffn,
                            d, 1);
        fmtname(n1, sizeof(n1), "encoder.layer.%d.output.LayerNorm", l);
        x = hg_layer_layernorm(g, n1, hg_add(g, x, hg_dropout(g, h, p, 1)), d, 1e-12f);
    }
    /* pooler on [CLS] (its output feeds next-sentence prediction) */
    int cls = hg_slice(g, x, 1, 0, 1); /* [B,1,d] */
    int pooled = hg_tanh(g, hg_layer_linear(g, "pooler.dense", cls, d, d, 1));
    int nsp = hg_layer_linear(g, "cls.seq_relationship", pooled, d, 2, 1); /* [B,1,2] */
    int nsp_t = hg_graph_input(g, "next_sentence_labels", HG_I32, 2,
                               (int64_t[2]){B, 1}, 0);
    /* masked LM head on npred positions (the first ones stand for the
     * gathered ones: same shapes), decoder tied to the word embeddings */
    int m = hg_slice(g, x, 1, 0, npred);
    m = hg_gelu(g, hg_layer_linear(g, "cls.predictions.transform.dense", m, d, d, 1));
    m = hg_layer_layernorm(g, "cls.predictions.transform.LayerNorm", m, d, 1e-12f);
    int64_t vd = V;
    int bias = hg_graph_param(g, "cls.predictions.bias", 1, &vd, HG_INIT_ZERO, 0.f);
    int logits = hg_add(g, hg_matmul(g, m, wtok, 0, 1), bias); /* [B,npred,V] */
    hg_graph_keep(g, logits);
    return hg_add(g, hg_cross_entropy(g, logits, tgt, -100, 0.f),
                  hg_cross_entropy(g, nsp, nsp_t, -100, 0.f));
}

/* ---------------------------------------------------------------- entry */

int hg_model_build(struct hg_graph *g, const char *name, const struct hg_model_opts *o,
                   char *err, size_t errlen)
{
    const struct hg_model_spec *s = hg_model_spec_find(name);
    if (!s) {
        char list[512] = "";
        size_t len = 0;
        for (int i = 0; i < hg_n_model_specs && len < sizeof(list); i++)
            len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "",
                                    hg_model_specs[i].name);
        return hg_kerr(err, errlen, "--model %s: unknown model (%s)", name ? name : "(none)",
                       list);
    }
    if (hg_graph_n_nodes(g) != 0 || hg_graph_n_tensors(g) != 0)
        return hg_kerr(err, errlen, "model %s: the graph is not empty", name);
    int64_t batch = o && o->batch > 0 ? o->batch : s->default_batch;
    int64_t seq = o && o->seq > 0 ? o->seq : s->default_seq;
    if (batch < 1 || batch > (1 << 24))
        return hg_kerr(err, errlen, "model %s: batch %lld out of range", name,
                       (long long)batch);
    if (s->default_seq > 0 && (seq < 1 || seq > 1 << 16))
        return hg_kerr(err, errlen, "model %s: sequence length %lld out of range", name,
                       (long long)seq);
    static const int r50[4] = {3, 4, 6, 3}, r101[4] = {3, 4, 23, 3}, r200[4] = {3, 24, 36, 3};
    int loss = -1;
    if (strcmp(name, "vgg19") == 0)
        loss = build_vgg19(g, batch);
    else if (strcmp(name, "resnet50") == 0)
        loss = build_resnet(g, batch, r50);
    else if (strcmp(name, "resnet101") == 0)
        loss = build_resnet(g, batch, r101);
    else if (strcmp(name, "resnet200") == 0)
        loss = build_resnet(g, batch, r200);
    else if (strcmp(name, "inception_v3") == 0)
        loss = build_inception_v3(g, batch);
    else if (strcmp(name, "mobilenet_v2") == 0)
        loss = build_mobilenet_v2(g, batch);
    else if (strcmp(name, "transformer") == 0)
        loss = build_transformer(g, batch, seq, 6);
    else if (strcmp(name, "transformer24") == 0)
        loss = build_transformer(g, batch, seq, 24);
    else if (strcmp(name, "bert_large") == 0)
        loss = build_bert(g, batch, seq, 24);
    else if (strcmp(name, "bert_large48") == 0)
        loss = build_bert(g, batch, seq, 48);
    if (loss < 0)
        return hg_kerr(err, errlen, "model %s: cannot build at batch %lld, length %lld",
                       name, (long long)batch, (long long)seq);
    if (o && o->train) {
        if (hg_graph_backward(g, loss) != 0)
            return hg_kerr(err, errlen, "model %s: backward failed", name);
        union hg_attr hyper = {0};
        if (o->optim == HG_OPTIM_SGD) {
            hyper.sgd.momentum = 0.9f;
        } else if (o->optim == HG_OPTIM_ADAMW || o->optim == HG_OPTIM_ADAM) {
            hyper.adam.beta1 = 0.9f;
            hyper.adam.beta2 = 0.999f;
            hyper.adam.eps = 1e-8f;
        } else {
            hyper.adadelta.rho = 0.9f;
            hyper.adadelta.eps = 1e-6f;
        }
        if (hg_graph_optimizer(g, o->optim, &hyper) != 0)
            return hg_kerr(err, errlen, "model %s: optimizer failed", name);
    }
    return loss;
}
