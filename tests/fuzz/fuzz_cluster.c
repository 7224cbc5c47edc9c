/* fuzz_cluster.c - a cluster description (libconfig) from the input:
 * parse, validate, every pair's path, the summary. */
#include "tests/fuzz/fuzz-util.h"
#include "planner/hg_planner.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size), err[512];
    struct hg_cluster *c;
    if (hg_cluster_parse(&c, text, "fuzz.cfg", err, sizeof(err)) == 0) {
        for (int a = 0; a < c->ndev && a < 64; a++)
            for (int b = 0; b < c->ndev && b < 64; b++)
                if (a != b) {
                    struct hg_path p;
                    hg_cluster_path(c, a, b, &p);
                    if (!(p.bw > 0) || p.nchan < 1)
                        abort();
                }
        FILE *null = fopen("/dev/null", "w");
        if (null) {
            hg_cluster_print(c, null);
            fclose(null);
        }
        hg_cluster_free(c);
    }
    free(text);
    return 0;
}
