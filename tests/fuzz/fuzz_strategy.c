/* fuzz_strategy.c - a strategy file (hgplan --out) from the input, for
 * VGG-19 at batch 16 on a 4-GPU cluster; a strategy that loads must pass
 * hg_strategy_check and lower, every op's replicas covering the batch. */
#include "tests/fuzz/fuzz-util.h"
#include "planner/hg_planner.h"

static const char cluster[] =
    "name = \"fuzz4\"; network = { switch_bandwidth = \"100Gbps\"; latency = \"5us\"; };\n"
    "nodes = ( { name = \"a\"; nic_bandwidth = \"50Gbps\";\n"
    "  devices = ( { kind = \"gpu\"; model = \"V100\"; count = 2; memory = \"16GiB\";\n"
    "                peak_flops = \"15.7TFLOP/s\"; memory_bandwidth = \"900GB/s\"; } );\n"
    "  intra = { kind = \"nvlink\"; bandwidth = \"50GB/s\"; latency = \"2us\"; }; },\n"
    " { name = \"b\"; nic_bandwidth = \"50Gbps\";\n"
    "  devices = ( { kind = \"gpu\"; model = \"P100\"; count = 2; memory = \"12GiB\";\n"
    "                peak_flops = \"9.3TFLOP/s\"; memory_bandwidth = \"549GB/s\"; } );\n"
    "  intra = { kind = \"pcie\"; bandwidth = \"12GB/s\"; latency = \"10us\"; }; } );\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct hg_pgraph *pg;
    static struct hg_cluster *c;
    static struct hg_graph *g; /* kept for the whole run, as pg points into it */
    static struct hg_lowered *lw;
    char err[512];
    if (!pg) {
        g = hg_graph_new();
        struct hg_model_opts mo = {.batch = 16, .train = 1, .optim = HG_OPTIM_SGD};
        if (hg_cluster_parse(&c, cluster, "fuzz4.cfg", err, sizeof(err)) != 0 ||
            hg_model_build(g, "vgg19", &mo, err, sizeof(err)) < 0 ||
            hg_pgraph_build(&pg, g, c, "vgg19", 16, err, sizeof(err)) != 0) {
            fprintf(stderr, "fuzz_strategy: %s\n", err);
            abort();
        }
    }
    char *text = fuzz_text(data, size);
    struct hg_strategy *s;
    if (hg_strategy_parse(&s, text, "fuzz.cfg", pg, err, sizeof(err)) == 0) {
        if (hg_strategy_check(s, pg, err, sizeof(err)) != 0) {
            fprintf(stderr, "fuzz_strategy: loaded but fails its check: %s\n", err);
            abort();
        }
        if (!lw)
            lw = hg_lower_new(pg);
        if (hg_lower_full(lw, s, err, sizeof(err)) != 0) {
            fprintf(stderr, "fuzz_strategy: loaded but does not lower: %s\n", err);
            abort();
        }
        for (int v = 0; v < lw->nops; v++) {
            const struct hg_lop *o = &lw->ops[v];
            int64_t next = 0;
            for (int i = 0; i < o->nplace; i++) {
                if (o->place[i].begin != next || o->place[i].end < next) {
                    fprintf(stderr, "fuzz_strategy: op %d: rows of place %d\n", v, i);
                    abort();
                }
                next = o->place[i].end;
            }
            if (next != lw->batch) {
                fprintf(stderr, "fuzz_strategy: op %d covers %lld rows\n", v, (long long)next);
                abort();
            }
        }
        hg_strategy_free(s);
    }
    free(text);
    return 0;
}
