/* price.c - the planner graph's prices: each op's time on each device
 * (hg_cost_node: the bound profile's measurements where it has the op,
 * else the roofline), kept apart from the topology so that a strategy
 * loads and lowers where no device can be priced. */
#include <stdlib.h>

#include "planner/hg_planner.h"

int hg_pprice_build(struct hg_pprice **out, const struct hg_pgraph *pg,
                    const struct hg_graph *g, char *err, size_t errlen)
{
    *out = NULL;
    const struct hg_cluster *c = pg->c;
    HG_CHECK(hg_graph_n_nodes(g) == pg->nops && c->ndev == pg->ndev);
    struct hg_pprice *pr = calloc(1, sizeof(*pr));
    HG_CHECK(pr != NULL);
    pr->nops = pg->nops;
    pr->ndev = pg->ndev;
    size_t n = (size_t)pg->nops * (size_t)pg->ndev + 1;
    pr->a = malloc(n * sizeof(double));
    pr->b = malloc(n * sizeof(double));
    pr->pe = malloc(n * sizeof(*pr->pe));
    HG_CHECK(pr->a && pr->b && pr->pe);
    for (int v = 0; v < pg->nops; v++) {
        const struct hg_pop *o = &pg->ops[v];
        for (int d = 0; d < pg->ndev; d++) {
            size_t i = hg_pprice_at(pr, v, d);
            /* the profile where it has the op, else the roofline */
            if (hg_cost_node(c, d, g, v, pg->batch, &pr->a[i], &pr->b[i], &pr->pe[i]) < 0) {
                hg_kerr(err, errlen, "device %s: no 'peak_flops' for the roofline and no "
                        "profiled time for node %d (%s)", c->devices[d].name, v,
                        hg_op_table[o->kind].name);
                hg_pprice_free(pr);
                return -1;
            }
            if (!o->batch) { /* runs whole on every device that holds it */
                pr->a[i] += pr->b[i];
                pr->b[i] = 0;
                pr->pe[i] = NULL;
            }
        }
    }
    *out = pr;
    return 0;
}

void hg_pprice_free(struct hg_pprice *pr)
{
    if (!pr)
        return;
    free(pr->a);
    free(pr->b);
    free(pr->pe);
    free(pr);
}
