/* export.c - a training graph as JSON (format "hgplan-graph", version 1;
 * docs/planner.md): every op with its phase, inputs, outputs and declared
 * cost, every tensor with shape, dtype, bytes, batch axis and kind. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "planner/hg_planner.h"

static const char *tkind_name(enum hg_tkind k)
{
    switch (k) {
    case HG_T_INPUT: return "input";
    case HG_T_PARAM: return "param";
    case HG_T_GRAD: return "grad";
    case HG_T_STATE: return "state";
    case HG_T_CONST: return "const";
    default: return "act";
    }
}

static const char *phase_name(enum hg_phase p)
{
    switch (p) {
    case HG_PH_FORWARD: return "forward";
    case HG_PH_BACKWARD: return "backward";
    case HG_PH_UPDATE: return "update";
    default: return "?";
    }
}

static void jstr(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

/* Generated tensor names are "t<id>". */
static int generated(const char *name)
{
    if (!name)
        return 1;
    if (name[0] != 't' || !name[1])
        return 0;
    for (const char *c = name + 1; *c; c++)
        if (!isdigit((unsigned char)*c))
            return 0;
    return 1;
}

static void shape_json(FILE *f, const struct hg_shape *s)
{
    fputc('[', f);
    for (int i = 0; i < s->ndim; i++)
        fprintf(f, "%s%lld", i ? "," : "", (long long)s->dim[i]);
    fputc(']', f);
}

int hg_graph_export_json(const struct hg_graph *g, const char *model, int64_t batch,
                         FILE *f)
{
    int nt = hg_graph_n_tensors(g), nn = hg_graph_n_nodes(g);
    struct hg_cost ph[3];
    hg_graph_cost_phase(g, HG_PH_FORWARD, &ph[0]);
    hg_graph_cost_phase(g, HG_PH_BACKWARD, &ph[1]);
    hg_graph_cost_phase(g, HG_PH_UPDATE, &ph[2]);
    double kbytes[6] = {0};
    for (int t = 0; t < nt; t++) {
        const struct hg_tensor_info *ti = hg_graph_tensor(g, t);
        kbytes[ti->kind] += (double)hg_shape_numel(&ti->shape) * (double)hg_dtype_size(ti->dtype);
    }
    fprintf(f, "{\n\"format\": \"hgplan-graph\",\n\"version\": 1,\n\"model\": ");
    jstr(f, model);
    fprintf(f, ",\n\"batch\": %lld,\n\"symbols\": [", (long long)batch);
    for (int k = 0; k < hg_graph_n_syms(g); k++) {
        fprintf(f, "%s{\"name\": ", k ? ", " : "");
        jstr(f, hg_graph_sym_name(g, k));
        fprintf(f, ", \"value\": %lld}", (long long)hg_graph_sym_max(g, k));
    }
    fprintf(f, "],\n\"totals\": {\"n_ops\": %d, \"n_tensors\": %d, \"params\": %lld, ",
            nn, nt, (long long)hg_graph_param_count(g));
    fprintf(f, "\"bytes_by_kind\": {\"input\": %.17g, \"param\": %.17g, \"grad\": %.17g, "
            "\"state\": %.17g, \"const\": %.17g, \"act\": %.17g}, ", kbytes[HG_T_INPUT],
            kbytes[HG_T_PARAM], kbytes[HG_T_GRAD], kbytes[HG_T_STATE], kbytes[HG_T_CONST],
            kbytes[HG_T_ACT]);
    fprintf(f, "\"flops\": {\"forward\": %.17g, \"backward\": %.17g, \"update\": %.17g}, "
            "\"bytes\": {\"forward\": %.17g, \"backward\": %.17g, \"update\": %.17g}},\n",
            ph[0].flops, ph[1].flops, ph[2].flops, ph[0].bytes, ph[1].bytes, ph[2].bytes);

    fprintf(f, "\"tensors\": [\n");
    for (int t = 0; t < nt; t++) {
        const struct hg_tensor_info *ti = hg_graph_tensor(g, t);
        fprintf(f, "  {\"id\": %d, \"name\": ", t);
        jstr(f, ti->name);
        fprintf(f, ", \"kind\": \"%s\", \"dtype\": \"%s\", \"shape\": ", tkind_name(ti->kind),
                hg_dtype_name(ti->dtype));
        shape_json(f, &ti->shape);
        fprintf(f, ", \"bytes\": %lld, \"batch_axis\": %d, \"producer\": %d, \"grad_of\": %d}%s\n",
                (long long)(hg_shape_numel(&ti->shape) * (int64_t)hg_dtype_size(ti->dtype)),
                ti->batch_axis, ti->producer, ti->grad_of, t + 1 < nt ? "," : "");
    }
    fprintf(f, "],\n\"ops\": [\n");
    for (int n = 0; n < nn; n++) {
        const struct hg_node_info *nd = hg_graph_node(g, n);
        struct hg_shape in[HG_MAX_INPUTS], out = {0};
        for (int i = 0; i < nd->n_in; i++)
            in[i] = hg_graph_tensor(g, nd->in[i])->shape;
        if (nd->out >= 0)
            out = hg_graph_tensor(g, nd->out)->shape;
        struct hg_cost c = {0, 0};
        hg_op_table[nd->op].cost(in, nd->n_in, &out, &nd->attr, &c);
        const char *kind = hg_op_table[nd->op].name;
        char name[256];
        if (nd->out < 0)
            snprintf(name, sizeof(name), "update/%s", hg_graph_tensor(g, nd->in[0])->name);
        else if (!generated(hg_graph_tensor(g, nd->out)->name))
            snprintf(name, sizeof(name), "%s", hg_graph_tensor(g, nd->out)->name);
        else
            snprintf(name, sizeof(name), "%s_%d", kind, n);
        fprintf(f, "  {\"id\": %d, \"kind\": ", n);
        jstr(f, kind);
        fprintf(f, ", \"name\": ");
        jstr(f, name);
        fprintf(f, ", \"phase\": \"%s\", \"inputs\": [", phase_name(nd->phase));
        for (int i = 0; i < nd->n_in; i++)
            fprintf(f, "%s%d", i ? "," : "", nd->in[i]);
        fprintf(f, "], \"outputs\": [");
        if (nd->out >= 0)
            fprintf(f, "%d", nd->out);
        else /* update ops write their first inputs in place */
            fprintf(f, "%d", nd->in[0]);
        fprintf(f, "], \"in_place\": %s, \"flops\": %.17g, \"bytes\": %.17g}%s\n",
                nd->out < 0 ? "true" : "false", c.flops, c.bytes, n + 1 < nn ? "," : "");
    }
    fprintf(f, "]\n}\n");
    return ferror(f) ? -1 : 0;
}
