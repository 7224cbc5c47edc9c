/* strategy.c - strategies in memory (HeteroG's op groups, per-group MP or
 * DP configurations, the execution order), their checks and the versioned
 * strategy file (libconfig, docs/planner.md "Strategy file").  Everything
 * here needs the planner graph's topology only, except the grouping (its
 * centres are the most expensive ops: it takes the prices). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <libconfig.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "planner/hg_planner.h"
#include "planner/planner-impl.h"

/* ------------------------------------------------------------ strategies */

struct hg_strategy *hg_strategy_new(int nops, int ndev, int ngroups)
{
    HG_CHECK(ndev > 0 && ndev <= HG_PLAN_MAXDEV && ngroups > 0);
    struct hg_strategy *s = calloc(1, sizeof(*s));
    HG_CHECK(s != NULL);
    s->nops = nops;
    s->ndev = ndev;
    s->ngroups = ngroups;
    s->group = calloc((size_t)nops + 1, sizeof(int));
    s->order = malloc(((size_t)nops + 1) * sizeof(int));
    s->cfg = calloc((size_t)ngroups, sizeof(struct hg_gcfg));
    HG_CHECK(s->group && s->order && s->cfg);
    for (int i = 0; i < nops; i++)
        s->order[i] = i;
    for (int k = 0; k < ngroups; k++)
        hg_gcfg_mp(&s->cfg[k], 0);
    return s;
}

struct hg_strategy *hg_strategy_copy(const struct hg_strategy *s)
{
    struct hg_strategy *t = hg_strategy_new(s->nops, s->ndev, s->ngroups);
    memcpy(t->group, s->group, (size_t)s->nops * sizeof(int));
    memcpy(t->order, s->order, (size_t)s->nops * sizeof(int));
    memcpy(t->cfg, s->cfg, (size_t)s->ngroups * sizeof(struct hg_gcfg));
    t->nmicro = s->nmicro;
    t->sched = s->sched;
    return t;
}

void hg_strategy_free(struct hg_strategy *s)
{
    if (!s)
        return;
    free(s->group);
    free(s->order);
    free(s->cfg);
    free(s);
}

void hg_strategy_group(struct hg_strategy *s, const struct hg_pgraph *pg,
                       const struct hg_pprice *pr, int n)
{
    HG_CHECK(pr->nops == pg->nops && pr->ndev == pg->ndev);
    int N = pg->nops;
    if (n > N)
        n = N;
    if (n < 1)
        n = 1;
    /* centres: the n ops with the largest time on device 0 (ties: lower id) */
    int *idx = malloc((size_t)N * sizeof(int)), *q = malloc((size_t)N * sizeof(int));
    int *dist = malloc((size_t)N * sizeof(int)), *deg = calloc((size_t)N, sizeof(int));
    HG_CHECK(idx && q && dist && deg);
    for (int i = 0; i < N; i++)
        idx[i] = i;
    /* selection by a simple sort on (time desc, id asc) */
    for (int i = 1; i < N; i++) { /* insertion sort is O(N^2) worst: use qsort-free merge */
        (void)0;
    }
    {
        /* heap-free: partial selection with qsort via a static comparator context */
        double *t = malloc((size_t)N * sizeof(double));
        HG_CHECK(t != NULL);
        for (int i = 0; i < N; i++)
            t[i] = pr->a[hg_pprice_at(pr, i, 0)] + pr->b[hg_pprice_at(pr, i, 0)];
        /* merge sort idx by t desc, id asc */
        int *tmp = malloc((size_t)N * sizeof(int));
        HG_CHECK(tmp != NULL);
        for (int w = 1; w < N; w *= 2)
            for (int lo = 0; lo < N; lo += 2 * w) {
                int mid = lo + w < N ? lo + w : N, hi = lo + 2 * w < N ? lo + 2 * w : N;
                int i = lo, j = mid, k = lo;
                while (i < mid && j < hi) {
                    int a = idx[i], b = idx[j];
                    int takea = t[a] > t[b] || (t[a] == t[b] && a < b);
                    tmp[k++] = takea ? idx[i++] : idx[j++];
                }
                while (i < mid)
                    tmp[k++] = idx[i++];
                while (j < hi)
                    tmp[k++] = idx[j++];
                memcpy(idx + lo, tmp + lo, (size_t)(hi - lo) * sizeof(int));
            }
        free(tmp);
        free(t);
    }
    for (int i = 0; i < N; i++) {
        dist[i] = -1;
        s->group[i] = -1;
    }
    /* centres in id order get group numbers 0..n-1 */
    int *cen = malloc((size_t)n * sizeof(int));
    HG_CHECK(cen != NULL);
    for (int k = 0; k < n; k++)
        cen[k] = idx[k];
    for (int i = 1; i < n; i++) /* sort cen ascending (n small enough) */
        for (int j = i; j > 0 && cen[j] < cen[j - 1]; j--) {
            int x = cen[j];
            cen[j] = cen[j - 1];
            cen[j - 1] = x;
        }
    int qh = 0, qt = 0;
    for (int k = 0; k < n; k++) {
        s->group[cen[k]] = k;
        dist[cen[k]] = 0;
        q[qt++] = cen[k];
    }
    /* multi-source BFS over producer and consumer edges */
    while (qh < qt) {
        int v = q[qh++];
        const struct hg_pop *o = &pg->ops[v];
        for (int k = 0; k < o->nin; k++) {
            int u = o->in[k].op;
            if (u >= 0 && dist[u] < 0) {
                dist[u] = dist[v] + 1;
                s->group[u] = s->group[v];
                q[qt++] = u;
            }
        }
        for (int k = 0; k < o->ncons; k++) {
            int u = o->cons[k];
            if (dist[u] < 0) {
                dist[u] = dist[v] + 1;
                s->group[u] = s->group[v];
                q[qt++] = u;
            }
        }
    }
    for (int i = 0; i < N; i++)
        if (s->group[i] < 0)
            s->group[i] = 0; /* not connected to any centre */
    s->ngroups = n;
    free(s->cfg);
    s->cfg = calloc((size_t)n, sizeof(struct hg_gcfg));
    HG_CHECK(s->cfg != NULL);
    for (int k = 0; k < n; k++)
        hg_gcfg_mp(&s->cfg[k], 0);
    for (int i = 0; i < N; i++)
        s->order[i] = i;
    free(cen);
    free(idx);
    free(q);
    free(dist);
    free(deg);
}

void hg_gcfg_mp(struct hg_gcfg *g, int device)
{
    memset(g, 0, sizeof(*g));
    g->mode = HG_MODE_MP;
    g->device = device;
    g->agg = HG_AGG_AR;
    g->ps = device;
    g->rep[device] = 1;
}

int hg_gcfg_choose_ps(const struct hg_cluster *c, const int *rep)
{
    int devs[HG_PLAN_MAXDEV], n = 0, best = -1;
    for (int d = 0; d < c->ndev; d++)
        if (rep[d] > 0)
            devs[n++] = d;
    double bt = INFINITY;
    for (int p = 0; p < c->ndev; p++) {
        double t = hg_cost_ps(c, devs, n, p, 1e8);
        if (t < bt) {
            bt = t;
            best = p;
        }
    }
    return best;
}


void hg_gcfg_even(struct hg_gcfg *g, const struct hg_cluster *c, enum hg_agg agg)
{
    memset(g, 0, sizeof(*g));
    g->mode = HG_MODE_DP;
    g->agg = agg;
    for (int d = 0; d < c->ndev; d++)
        g->rep[d] = 1;
    g->ps = hg_gcfg_choose_ps(c, g->rep);
}

void hg_gcfg_prop(struct hg_gcfg *g, const struct hg_cluster *c, int k, enum hg_agg agg)
{
    double cap[HG_PLAN_MAXDEV];
    memset(g, 0, sizeof(*g));
    g->mode = HG_MODE_DP;
    g->agg = agg;
    if (hg_cluster_rank_capacities(c, cap, NULL, 0) != 0)
        for (int d = 0; d < c->ndev; d++)
            cap[d] = 1;
    for (int d = 0; d < c->ndev; d++) {
        int r = (int)lround(cap[d] * k);
        g->rep[d] = r < 1 ? 1 : r;
    }
    g->ps = hg_gcfg_choose_ps(c, g->rep);
}

int hg_strategy_check(const struct hg_strategy *s, const struct hg_pgraph *pg, char *err,
                      size_t errlen)
{
    if (s->nops != pg->nops)
        return hg_kerr(err, errlen, "the strategy has %d ops, graph %s has %d", s->nops,
                       pg->model, pg->nops);
    if (s->ndev != pg->ndev)
        return hg_kerr(err, errlen, "the strategy has %d devices, cluster %s has %d", s->ndev,
                       pg->c->name, pg->ndev);
    if (s->nmicro < 0 || s->nmicro > HG_PLAN_MAXREP ||
        (s->sched != HG_SCHED_GPIPE && s->sched != HG_SCHED_1F1B))
        return hg_kerr(err, errlen, "pipeline: %d micro-batches, schedule %d", s->nmicro,
                       (int)s->sched);
    for (int i = 0; i < s->nops; i++)
        if (s->group[i] < 0 || s->group[i] >= s->ngroups)
            return hg_kerr(err, errlen, "op %d is in no group", i);
    for (int k = 0; k < s->ngroups; k++) {
        const struct hg_gcfg *g = &s->cfg[k];
        if (g->mode == HG_MODE_MP) {
            if (g->device < 0 || g->device >= s->ndev)
                return hg_kerr(err, errlen, "group %d: device %d does not exist", k,
                               g->device);
            continue;
        }
        int tot = 0;
        for (int d = 0; d < s->ndev; d++) {
            if (g->rep[d] < 0 || g->rep[d] > HG_PLAN_MAXREP)
                return hg_kerr(err, errlen, "group %d: %d replicas on %s", k, g->rep[d],
                               pg->c->devices[d].name);
            tot += g->rep[d];
        }
        for (int d = s->ndev; d < HG_PLAN_MAXDEV; d++)
            if (g->rep[d] != 0)
                return hg_kerr(err, errlen, "group %d: replicas on a device that does not "
                               "exist", k);
        if (tot <= 0)
            return hg_kerr(err, errlen, g->mode == HG_MODE_TP
                           ? "group %d: tensor parallel with every shard weight 0"
                           : "group %d: data parallel without any replica", k);
        if (g->mode == HG_MODE_TP && (g->device < 0 || g->device >= s->ndev ||
                                      g->rep[g->device] <= 0))
            return hg_kerr(err, errlen, "group %d: tensor parallel: its lead device is not "
                           "one of weight > 0", k);
        if (g->agg == HG_AGG_PS && (g->ps < 0 || g->ps >= s->ndev))
            return hg_kerr(err, errlen, "group %d: the parameter server is not a device", k);
    }
    /* the order: a permutation that puts every producer before its consumers */
    int *pos = malloc((size_t)s->nops * sizeof(int));
    HG_CHECK(pos != NULL);
    for (int i = 0; i < s->nops; i++)
        pos[i] = -1;
    int rc = 0;
    for (int p = 0; p < s->nops && rc == 0; p++) {
        int v = s->order[p];
        if (v < 0 || v >= s->nops)
            rc = hg_kerr(err, errlen, "order: op %d does not exist", v);
        else if (pos[v] >= 0)
            rc = hg_kerr(err, errlen, "order: op %d appears twice", v);
        else
            pos[v] = p;
    }
    for (int v = 0; v < s->nops && rc == 0; v++)
        for (int k = 0; k < pg->ops[v].nin && rc == 0; k++) {
            int u = pg->ops[v].in[k].op;
            if (u >= 0 && pos[u] > pos[v])
                rc = hg_kerr(err, errlen, "order: op %d runs before its input's producer %d",
                             v, u);
        }
    free(pos);
    return rc;
}

void hg_strategy_random_order(struct hg_strategy *s, const struct hg_pgraph *pg,
                              uint64_t seed)
{
    HG_CHECK(s->nops == pg->nops);
    int N = pg->nops;
    int *indeg = calloc((size_t)N + 1, sizeof(int)); /* [N] unplaced producers */
    int *ready = malloc(((size_t)N + 1) * sizeof(int)); /* [<= N] ops free to go */
    HG_CHECK(indeg && ready);
    for (int v = 0; v < N; v++)
        for (int k = 0; k < pg->ops[v].ncons; k++)
            indeg[pg->ops[v].cons[k]]++;
    int nr = 0, p = 0;
    for (int v = 0; v < N; v++)
        if (indeg[v] == 0)
            ready[nr++] = v;
    for (uint64_t i = 0; nr > 0; i++) {
        int j = (int)(hg_mix64(seed * 0x9e3779b97f4a7c15ull + i) % (uint64_t)nr), v = ready[j];
        ready[j] = ready[--nr];
        s->order[p++] = v;
        for (int k = 0; k < pg->ops[v].ncons; k++)
            if (--indeg[pg->ops[v].cons[k]] == 0)
                ready[nr++] = pg->ops[v].cons[k];
    }
    HG_CHECK(p == N); /* consumers come after producers: id order is topological */
    free(indeg);
    free(ready);
}

/* ------------------------------------------------------------ file */

static void write_ops(FILE *f, const struct hg_strategy *s, int k)
{
    int first = 1;
    for (int i = 0; i < s->nops; i++) {
        if (s->group[i] != k)
            continue;
        int j = i;
        while (j + 1 < s->nops && s->group[j + 1] == k)
            j++;
        if (j == i)
            fprintf(f, "%s%d", first ? "" : ", ", i);
        else
            fprintf(f, "%s\"%d-%d\"", first ? "" : ", ", i, j);
        first = 0;
        i = j;
    }
}

/* s as a libconfig string: quoted, '"' and '\\' escaped. */
static void write_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

int hg_strategy_save(const struct hg_strategy *s, const struct hg_pgraph *pg,
                     const char *cluster_file, const struct hg_sim_result *pred,
                     const struct hg_graph_made *made, FILE *f)
{
    const struct hg_cluster *c = pg->c;
    fprintf(f, "# hgplan strategy (docs/planner.md, \"Strategy file\")\n");
    fprintf(f, "version = 1;\n");
    fprintf(f, "graph = { model = \"%s\"; batch = %lld; n_ops = %d;", pg->model,
            (long long)pg->batch, pg->nops);
    if (made) { /* what hgtrain --strategy compares, option by option */
        fprintf(f, "\n    optimizer = ");
        write_str(f, made->optimizer);
        fprintf(f, ";\n    options = (");
        int first = 1;
        for (int i = 0; i < made->nopts; i++)
            if (made->opt_val[i]) {
                fprintf(f, "%s(", first ? "" : ", ");
                write_str(f, made->opt_name[i]);
                fprintf(f, ", ");
                write_str(f, made->opt_val[i]);
                fprintf(f, ")");
                first = 0;
            }
        fprintf(f, ");");
    }
    fprintf(f, " };\n");
    fprintf(f, "cluster = { name = \"%s\"; file = \"%s\"; devices = [", c->name,
            cluster_file ? cluster_file : "");
    for (int d = 0; d < c->ndev; d++)
        fprintf(f, "%s\"%s\"", d ? ", " : "", c->devices[d].name);
    fprintf(f, "]; };\ngroups = (\n");
    for (int k = 0; k < s->ngroups; k++) {
        const struct hg_gcfg *g = &s->cfg[k];
        fprintf(f, "    { id = %d; ops = (", k);
        write_ops(f, s, k);
        fprintf(f, ");\n      ");
        if (g->mode == HG_MODE_MP) {
            fprintf(f, "mode = \"mp\"; device = \"%s\";", c->devices[g->device].name);
        } else if (g->mode == HG_MODE_TP) {
            fprintf(f, "mode = \"tp\"; shards = (");
            for (int d = 0, first = 1; d < c->ndev; d++)
                if (g->rep[d] > 0) {
                    fprintf(f, "%s(\"%s\", %d)", first ? "" : ", ", c->devices[d].name,
                            g->rep[d]);
                    first = 0;
                }
            fprintf(f, ");");
        } else {
            fprintf(f, "mode = \"dp\"; replicas = (");
            int first = 1;
            for (int d = 0; d < c->ndev; d++)
                if (g->rep[d] > 0) {
                    fprintf(f, "%s(\"%s\", %d)", first ? "" : ", ", c->devices[d].name,
                            g->rep[d]);
                    first = 0;
                }
            fprintf(f, ");\n      ");
            if (g->agg == HG_AGG_AR)
                fprintf(f, "aggregate = \"allreduce\";");
            else
                fprintf(f, "aggregate = \"ps\"; ps = \"%s\";", c->devices[g->ps].name);
        }
        fprintf(f, "%s }%s\n", g->recompute ? " recompute = true;" : "",
                k + 1 < s->ngroups ? "," : "");
    }
    fprintf(f, ");\n# every device runs its tasks in this order of their ops\norder = [");
    for (int p = 0; p < s->nops; p++)
        fprintf(f, "%s%s%d", p ? "," : "", p % 20 == 0 ? "\n    " : " ", s->order[p]);
    fprintf(f, "\n];\n");
    hg__pipe_write(f, s);
    if (pred) {
        fprintf(f, "predicted = { iteration_s = %.6g; oom = %d; peak_memory = (", pred->iter_s,
                pred->oom);
        for (int d = 0; d < c->ndev; d++)
            fprintf(f, "%s(\"%s\", %.6g)", d ? ", " : "", c->devices[d].name,
                    (double)pred->peak[d]);
        fprintf(f, "); };\n");
    }
    return ferror(f) ? -1 : 0;
}

/* "a-b" with two decimal numbers and nothing else; 0 or -1. */
static int op_range(const char *v, long *lo, long *hi)
{
    char *end;
    errno = 0;
    *lo = strtol(v, &end, 10);
    if (end == v || *end != '-' || errno)
        return -1;
    const char *b = end + 1;
    if (*b < '0' || *b > '9')
        return -1;
    *hi = strtol(b, &end, 10);
    return *end || errno ? -1 : 0;
}

static int find_device(struct hg_cfgctx *p, const config_setting_t *s, const struct hg_cluster *c,
                       const char *name, const char *what)
{
    for (int d = 0; d < c->ndev; d++)
        if (strcmp(c->devices[d].name, name) == 0)
            return d;
    return hg__cfg_err(p, s, "%s: device '%s' is not in cluster %s", what, name, c->name) - 1;
}

/* Every key of the file is typed: a key given with another type is an
 * error naming it, never its default (hg__cfg_member). */
#define T_INT (HG_CFG_T(CONFIG_TYPE_INT) | HG_CFG_T(CONFIG_TYPE_INT64))
#define T_STR HG_CFG_T(CONFIG_TYPE_STRING)
#define T_GROUP HG_CFG_T(CONFIG_TYPE_GROUP)
#define T_LIST HG_CFG_T(CONFIG_TYPE_LIST)
#define T_SEQ (HG_CFG_T(CONFIG_TYPE_ARRAY) | T_LIST)
#define T_BOOL HG_CFG_T(CONFIG_TYPE_BOOL)

/* String key of grp into *v: 1 if absent (*v untouched), 0, -1 (another
 * type: "WHAT: KEY is TYPE, expected a string EXPECT"). */
static int get_str(struct hg_cfgctx *p, const config_setting_t *grp, const char *key,
                   const char *what, const char *expect, const char **v)
{
    const config_setting_t *s;
    char exp[96];
    snprintf(exp, sizeof(exp), "a string%s%s", *expect ? " " : "", expect);
    int rc = hg__cfg_member(p, grp, key, what, T_STR, exp, &s);
    if (rc == 0)
        *v = config_setting_get_string(s);
    return rc;
}

/* Integer key of grp into *v: 1 if absent (*v untouched), 0, -1. */
static int get_int(struct hg_cfgctx *p, const config_setting_t *grp, const char *key,
                   const char *what, long long *v)
{
    const config_setting_t *s;
    int rc = hg__cfg_member(p, grp, key, what, T_INT, "an integer", &s);
    if (rc == 0)
        *v = config_setting_get_int64(s);
    return rc;
}

/* cluster = { name; file; devices }: devices, where given, are the
 * cluster's, in its order; 0 or -1. */
static int parse_cluster(struct hg_cfgctx *p, const config_setting_t *root,
                         const struct hg_pgraph *pg)
{
    static const char *const ckeys[] = {"name", "file", "devices", NULL};
    const config_setting_t *cl, *devs;
    const char *sv;
    if (hg__cfg_member(p, root, "cluster", NULL, T_GROUP, "a group { devices = [...]; }",
                       &cl) < 0)
        return -1;
    if (!cl)
        return 0;
    if (hg__cfg_check_keys(p, cl, "cluster", ckeys) != 0 ||
        get_str(p, cl, "name", "cluster", "(its name)", &sv) < 0 ||
        get_str(p, cl, "file", "cluster", "(its file)", &sv) < 0 ||
        hg__cfg_member(p, cl, "devices", "cluster", T_SEQ, "a list of device names",
                       &devs) < 0)
        return -1;
    if (!devs)
        return 0;
    int nd = config_setting_length(devs);
    if (nd != pg->ndev)
        return hg__cfg_err(p, devs, "cluster.devices lists %d devices, cluster %s has %d",
                           nd, pg->c->name, pg->ndev);
    for (int d = 0; d < nd; d++) {
        const config_setting_t *e = config_setting_get_elem(devs, (unsigned)d);
        if (config_setting_type(e) != CONFIG_TYPE_STRING)
            return hg__cfg_err(p, e, "cluster.devices[%d] is %s, expected a string (a "
                               "device name)", d, hg__cfg_type_name(e));
        const char *dn = config_setting_get_string(e);
        if (strcmp(dn, pg->c->devices[d].name) != 0)
            return hg__cfg_err(p, devs, "cluster.devices[%d] is '%s', device %d of "
                               "cluster %s is '%s'", d, dn, d, pg->c->name,
                               pg->c->devices[d].name);
    }
    return 0;
}

/* graph.optimizer and graph.options (("name", "value"), ...): typed;
 * into h where not NULL.  0 or -1. */
static int parse_made(struct hg_cfgctx *p, const config_setting_t *gr,
                      struct hg_strategy_head *h)
{
    const char *sv;
    const config_setting_t *ol;
    int rc = get_str(p, gr, "optimizer", "graph", "(the optimizer's name)", &sv);
    if (rc < 0)
        return -1;
    if (rc == 0 && h && !(h->optimizer = strdup(sv)))
        return hg__cfg_err(p, gr, "out of memory");
    if (hg__cfg_member(p, gr, "options", "graph", T_LIST,
                       "a list ((\"name\", \"value\"), ...)", &ol) < 0)
        return -1;
    if (!ol)
        return 0;
    int n = config_setting_length(ol);
    if (h) {
        h->opt_name = calloc((size_t)n + 1, sizeof(char *));
        h->opt_val = calloc((size_t)n + 1, sizeof(char *));
        if (!h->opt_name || !h->opt_val)
            return hg__cfg_err(p, ol, "out of memory");
        h->nopts = n;
    }
    for (int i = 0; i < n; i++) {
        const config_setting_t *e = config_setting_get_elem(ol, (unsigned)i);
        const config_setting_t *e0 = config_setting_get_elem(e, 0);
        const config_setting_t *e1 = config_setting_get_elem(e, 1);
        if (!config_setting_is_list(e) || config_setting_length(e) != 2 || !e0 || !e1 ||
            config_setting_type(e0) != CONFIG_TYPE_STRING ||
            config_setting_type(e1) != CONFIG_TYPE_STRING)
            return hg__cfg_err(p, e, "graph.options[%d]: expected (\"name\", \"value\")", i);
        if (h && (!(h->opt_name[i] = strdup(config_setting_get_string(e0))) ||
                  !(h->opt_val[i] = strdup(config_setting_get_string(e1)))))
            return hg__cfg_err(p, e, "out of memory");
    }
    return 0;
}

/* The file's header: version, graph (its ops and batch) and cluster (its
 * devices) against pg; 0 or -1. */
static int parse_header(struct hg_cfgctx *p, const config_setting_t *root,
                        const struct hg_pgraph *pg)
{
    static const char *const gkeys[] = {"model", "batch", "n_ops", "optimizer", "options",
                                        NULL};
    long long ver = 0, nops = -1, fbatch;
    int rc = get_int(p, root, "version", NULL, &ver);
    if (rc != 0)
        return rc < 0 ? -1 : hg__cfg_err(p, root, "missing 'version' (an integer)");
    if (ver != 1)
        return hg__cfg_err(p, config_setting_get_member(root, "version"),
                    "version %lld: this hgplan reads version 1", ver);
    const config_setting_t *gr;
    const char *sv;
    if (hg__cfg_member(p, root, "graph", NULL, T_GROUP, "a group { n_ops = N; ... }",
                       &gr) < 0)
        return -1;
    if (gr && (hg__cfg_check_keys(p, gr, "graph", gkeys) != 0 ||
               get_str(p, gr, "model", "graph", "(its name)", &sv) < 0 ||
               parse_made(p, gr, NULL) != 0 ||
               (rc = get_int(p, gr, "n_ops", "graph", &nops)) < 0))
        return -1;
    if (!gr || rc == 1)
        return hg__cfg_err(p, gr ? gr : root, "missing graph.n_ops");
    if (nops != pg->nops)
        return hg__cfg_err(p, gr, "graph.n_ops = %lld, graph %s has %d ops", nops, pg->model,
                           pg->nops);
    /* the rows it splits and the devices it names: a strategy for another
     * batch or another cluster is refused, naming the first difference */
    if ((rc = get_int(p, gr, "batch", "graph", &fbatch)) < 0)
        return -1;
    if (rc == 0 && fbatch != (long long)pg->batch)
        return hg__cfg_err(p, gr, "graph.batch = %lld: the strategy splits a batch of %lld, "
                           "graph %s is built for a batch of %lld", fbatch, fbatch, pg->model,
                           (long long)pg->batch);
    return parse_cluster(p, root, pg);
}

/* Group k's 'ops' (op ids and "a-b" ranges) into s->group; 0 or -1. */
static int parse_ops(struct hg_cfgctx *p, const config_setting_t *g, const char *what, int k,
                     const struct hg_pgraph *pg, struct hg_strategy *s)
{
    const config_setting_t *ops;
    if (hg__cfg_member(p, g, "ops", what, T_SEQ, "a list of op ids and \"a-b\" ranges",
                       &ops) < 0)
        return -1;
    if (!ops)
        return hg__cfg_err(p, g, "%s: missing 'ops' (op ids and \"a-b\" ranges)", what);
    for (int i = 0; i < config_setting_length(ops); i++) {
        const config_setting_t *e = config_setting_get_elem(ops, (unsigned)i);
        long lo, hi;
        if (config_setting_type(e) == CONFIG_TYPE_INT) {
            lo = hi = config_setting_get_int(e);
        } else if (config_setting_type(e) != CONFIG_TYPE_STRING ||
                   op_range(config_setting_get_string(e), &lo, &hi) != 0) {
            return hg__cfg_err(p, e, "%s: ops: expected an op id or \"a-b\"", what);
        }
        /* checked before the loop: "40-4000000000" must not spin */
        if (lo > hi)
            return hg__cfg_err(p, e, "%s: ops: range %ld-%ld is empty (the first op is after "
                               "the last)", what, lo, hi);
        if (lo < 0 || hi >= s->nops)
            return hg__cfg_err(p, e, "%s: op %ld does not exist (graph %s has %d ops)", what,
                               lo < 0 ? lo : hi, pg->model, s->nops);
        for (int v = (int)lo; v <= (int)hi; v++) {
            if (s->group[v] >= 0)
                return hg__cfg_err(p, e, "%s: op %d is already in group %d", what, v,
                                   s->group[v]);
            s->group[v] = k;
        }
    }
    return 0;
}

/* A data-parallel group's 'replicas' or a tensor-parallel one's 'shards'
 * (key: (("device", count), ...)) into cf->rep; 0 or -1. */
static int parse_replicas(struct hg_cfgctx *p, const config_setting_t *reps, const char *what,
                          const char *key, const struct hg_cluster *c, struct hg_gcfg *cf)
{
    const char *unit = strcmp(key, "shards") == 0 ? "weight" : "count";
    for (int i = 0; i < config_setting_length(reps); i++) {
        const config_setting_t *e = config_setting_get_elem(reps, (unsigned)i);
        const config_setting_t *e0 = config_setting_get_elem(e, 0);
        const config_setting_t *e1 = config_setting_get_elem(e, 1);
        if (!config_setting_is_list(e) || config_setting_length(e) != 2 || !e0 || !e1 ||
            config_setting_type(e0) != CONFIG_TYPE_STRING ||
            !(T_INT & HG_CFG_T(config_setting_type(e1))))
            return hg__cfg_err(p, e, "%s: %s: expected (\"device\", %s)", what, key, unit);
        int d = find_device(p, e, c, config_setting_get_string(e0), what);
        if (d < 0)
            return -1;
        long long n = config_setting_get_int64(e1);
        /* weights of the batch or axis split: bounded so that sums stay exact */
        if (n < 0 || n > HG_PLAN_MAXREP)
            return strcmp(key, "shards") == 0
                       ? hg__cfg_err(p, e, "%s: shards: weight %lld on %s: expected 0 to %d",
                                     what, n, c->devices[d].name, HG_PLAN_MAXREP)
                       : hg__cfg_err(p, e, "%s: %lld replicas on %s: expected 0 to %d", what,
                                     n, c->devices[d].name, HG_PLAN_MAXREP);
        if (cf->rep[d] != 0)
            return hg__cfg_err(p, e, "%s: %s: %s is given twice", what, key,
                               c->devices[d].name);
        cf->rep[d] = (int)n;
    }
    return 0;
}

/* A group of mode "tp": 'shards' (weights, at least one > 0) into cf;
 * replicas, split, aggregate and ps refused (a replicated TP group is not
 * planned yet); 0 or -1. */
static int parse_tp(struct hg_cfgctx *p, const config_setting_t *g, const char *what,
                    const struct hg_cluster *c, struct hg_gcfg *cf)
{
    static const char *const no[] = {"replicas", "split", "aggregate", "ps", "allreduce",
                                     "device"};
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
        if (config_setting_get_member(g, no[i]))
            return hg__cfg_err(p, config_setting_get_member(g, no[i]),
                               "%s: mode \"tp\" takes 'shards' only, not '%s' (a "
                               "tensor-parallel group is not replicated yet)", what, no[i]);
    const config_setting_t *sh;
    if (hg__cfg_member(p, g, "shards", what, T_LIST, "a list ((\"device\", weight), ...)",
                       &sh) < 0)
        return -1;
    if (!sh)
        return hg__cfg_err(p, g, "%s: mode \"tp\" needs 'shards' ((\"dev\", weight), ...)",
                           what);
    memset(cf, 0, sizeof(*cf));
    cf->mode = HG_MODE_TP;
    cf->agg = HG_AGG_AR;
    if (parse_replicas(p, sh, what, "shards", c, cf) != 0)
        return -1;
    cf->device = -1;
    for (int d = c->ndev - 1; d >= 0; d--)
        if (cf->rep[d] > 0)
            cf->device = d;
    if (cf->device < 0)
        return hg__cfg_err(p, sh, "%s: shards: every weight is 0 (at least one must be > 0)",
                           what);
    cf->ps = cf->device;
    return 0;
}

/* A group of mode "dp": aggregate, split or replicas, ps, allreduce into
 * cf; 0 or -1. */
static int parse_dp(struct hg_cfgctx *p, const config_setting_t *g, const char *what,
                    const struct hg_cluster *c, struct hg_gcfg *cf)
{
    const char *sv, *agg = "allreduce";
    if (get_str(p, g, "aggregate", what, "\"allreduce\" or \"ps\"", &agg) < 0)
        return -1;
    enum hg_agg ak;
    if (strcmp(agg, "allreduce") == 0)
        ak = HG_AGG_AR;
    else if (strcmp(agg, "ps") == 0)
        ak = HG_AGG_PS;
    else
        return hg__cfg_err(p, g, "%s: aggregate \"%s\": expected \"allreduce\" or \"ps\"", what, agg);
    const config_setting_t *reps;
    if (hg__cfg_member(p, g, "replicas", what, T_LIST, "a list ((\"device\", count), ...)",
                       &reps) < 0)
        return -1;
    int rc = get_str(p, g, "split", what, "\"even\" or \"proportional\"", &sv);
    if (rc < 0)
        return -1;
    if (rc == 0) {
        if (reps)
            return hg__cfg_err(p, g, "%s: give 'replicas' or 'split', not both", what);
        if (strcmp(sv, "even") == 0)
            hg_gcfg_even(cf, c, ak);
        else if (strcmp(sv, "proportional") == 0)
            hg_gcfg_prop(cf, c, 4, ak);
        else
            return hg__cfg_err(p, g, "%s: split \"%s\": expected \"even\" or \"proportional\"",
                               what, sv);
    } else {
        if (!reps)
            return hg__cfg_err(p, g, "%s: mode \"dp\" needs 'replicas' ((\"dev\", n), ...) or "
                               "'split'", what);
        cf->mode = HG_MODE_DP;
        cf->agg = ak;
        if (parse_replicas(p, reps, what, "replicas", c, cf) != 0)
            return -1;
        cf->ps = hg_gcfg_choose_ps(c, cf->rep);
    }
    if ((rc = get_str(p, g, "ps", what, "(a device name)", &sv)) < 0)
        return -1;
    if (rc == 0) {
        int d = find_device(p, g, c, sv, what);
        if (d < 0)
            return -1;
        cf->ps = d;
    }
    /* files written before 2026-11-29 name an algorithm: checked, then
     * ignored (hgtrain's backends run one AllReduce whatever it says) */
    if ((rc = get_str(p, g, "allreduce", what, "\"ring\" or \"hierarchical\"", &sv)) < 0)
        return -1;
    if (rc == 0 && strcmp(sv, "ring") != 0 && strcmp(sv, "hierarchical") != 0)
        return hg__cfg_err(p, g, "%s: allreduce \"%s\": expected \"ring\" or \"hierarchical\"",
                           what, sv);
    int64_t tot = 0;
    for (int d = 0; d < c->ndev; d++)
        tot += cf->rep[d];
    if (tot <= 0)
        return hg__cfg_err(p, g, "%s: data parallel without any replica", what);
    return 0;
}

/* Group k of the file: its keys, id, ops, mode and configuration into s;
 * 0 or -1. */
static int parse_group(struct hg_cfgctx *p, const config_setting_t *g, int k,
                       const struct hg_pgraph *pg, struct hg_strategy *s)
{
    static const char *const gkeys[] = {"id", "ops", "mode", "device", "replicas", "split",
                                        "aggregate", "allreduce", "ps", "recompute", "shards", NULL};
    char what[64];
    snprintf(what, sizeof(what), "group %d", k);
    if (!config_setting_is_group(g))
        return hg__cfg_err(p, g, "%s: not a group", what);
    if (hg__cfg_check_keys(p, g, what, gkeys) != 0)
        return -1;
    long long id = k;
    if (get_int(p, g, "id", what, &id) < 0)
        return -1;
    if (id != k)
        return hg__cfg_err(p, g, "%s: id = %lld (ids count from 0 in file order)", what, id);
    if (parse_ops(p, g, what, k, pg, s) != 0)
        return -1;
    const char *mode = NULL, *sv = NULL;
    int rc = get_str(p, g, "mode", what, "\"mp\", \"dp\" or \"tp\"", &mode);
    if (rc != 0)
        return rc < 0 ? -1 : hg__cfg_err(p, g, "%s: missing 'mode' (\"mp\", \"dp\" or \"tp\")",
                                         what);
    /* every string key typed whatever the mode, those it does not read too */
    static const char *const strs[][2] = {
        {"split", "\"even\" or \"proportional\""}, {"aggregate", "\"allreduce\" or \"ps\""},
        {"allreduce", "\"ring\" or \"hierarchical\""}, {"ps", "(a device name)"}};
    const config_setting_t *reps;
    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
        if (get_str(p, g, strs[i][0], what, strs[i][1], &sv) < 0)
            return -1;
    sv = NULL;
    if (get_str(p, g, "device", what, "(a device name)", &sv) < 0 ||
        hg__cfg_member(p, g, "replicas", what, T_LIST, "a list ((\"device\", count), ...)",
                       &reps) < 0)
        return -1;
    struct hg_gcfg *cf = &s->cfg[k];
    memset(cf, 0, sizeof(*cf));
    const config_setting_t *rs;
    if (hg__cfg_member(p, g, "recompute", what, T_BOOL, "true or false", &rs) < 0)
        return -1;
    int rec = rs ? config_setting_get_bool(rs) : 0;
    if (strcmp(mode, "tp") != 0 && config_setting_get_member(g, "shards"))
        return hg__cfg_err(p, config_setting_get_member(g, "shards"),
                           "%s: 'shards' belongs to mode \"tp\", not \"%s\"", what, mode);
    if (strcmp(mode, "tp") == 0) {
        if (parse_tp(p, g, what, pg->c, cf) != 0)
            return -1;
    } else if (strcmp(mode, "mp") == 0) {
        if (!sv)
            return hg__cfg_err(p, g, "%s: mode \"mp\" needs 'device'", what);
        int d = find_device(p, g, pg->c, sv, what);
        if (d < 0)
            return -1;
        hg_gcfg_mp(cf, d);
    } else if (strcmp(mode, "dp") != 0) {
        return hg__cfg_err(p, g, "%s: mode \"%s\": expected \"mp\", \"dp\" or \"tp\"", what,
                           mode);
    } else if (parse_dp(p, g, what, pg->c, cf) != 0) {
        return -1;
    }
    cf->recompute = rec;
    return 0;
}

/* 'order' (every op id once) into s->order where given; 0 or -1. */
static int parse_order(struct hg_cfgctx *p, const config_setting_t *ord,
                       struct hg_strategy *s)
{
    if (!config_setting_is_array(ord) || config_setting_length(ord) != s->nops)
        return hg__cfg_err(p, ord, "order: expected an array of all %d op ids", s->nops);
    for (int i = 0; i < s->nops; i++) {
        const config_setting_t *e = config_setting_get_elem(ord, (unsigned)i);
        if (!(T_INT & HG_CFG_T(config_setting_type(e))))
            return hg__cfg_err(p, e, "order[%d] is %s, expected an op id (an integer)", i,
                               hg__cfg_type_name(e));
        s->order[i] = config_setting_get_int(e);
    }
    return 0;
}

static int parse_root(struct hg_cfgctx *p, const config_setting_t *root, const struct hg_pgraph *pg,
                      struct hg_strategy **out)
{
    static const char *const top[] = {"version", "graph", "cluster", "groups", "order",
                                      "pipeline", "predicted", NULL};
    if (hg__cfg_check_keys(p, root, "strategy", top) != 0 || parse_header(p, root, pg) != 0)
        return -1;
    const config_setting_t *groups, *pred;
    if (hg__cfg_member(p, root, "groups", NULL, T_LIST, "a list ( {...}, {...} )", &groups) < 0 ||
        hg__cfg_member(p, root, "predicted", NULL, T_GROUP, "a group { ... } (ignored on load)",
                       &pred) < 0)
        return -1;
    if (!groups || config_setting_length(groups) < 1)
        return hg__cfg_err(p, groups ? groups : root, "'groups' must be a non-empty list");
    int ng = config_setting_length(groups);
    struct hg_strategy *s = hg_strategy_new(pg->nops, pg->ndev, ng);
    for (int i = 0; i < s->nops; i++)
        s->group[i] = -1;
    int rc = 0;
    for (int k = 0; k < ng && rc == 0; k++)
        rc = parse_group(p, config_setting_get_elem(groups, (unsigned)k), k, pg, s);
    for (int v = 0; v < s->nops && rc == 0; v++)
        if (s->group[v] < 0)
            rc = hg__cfg_err(p, groups, "op %d is in no group", v);
    const config_setting_t *ord = NULL;
    if (rc == 0 && hg__cfg_member(p, root, "order", NULL, HG_CFG_T(CONFIG_TYPE_ARRAY),
                                  "an array [...] of op ids", &ord) < 0)
        rc = -1;
    if (rc == 0 && ord)
        rc = parse_order(p, ord, s);
    if (rc == 0)
        rc = hg__pipe_parse(p, root, s);
    if (rc == 0) {
        char e2[512];
        if (hg_strategy_check(s, pg, e2, sizeof(e2)) != 0)
            rc = hg__cfg_err(p, ord ? ord : root, "%s", e2);
    }
    if (rc) {
        hg_strategy_free(s);
        return -1;
    }
    *out = s;
    return 0;
}

static int finish(struct hg_strategy **s, config_t *cfg, int ok, const char *name,
                  const struct hg_pgraph *pg, char *err, size_t errlen)
{
    struct hg_cfgctx p = {name, err, errlen};
    if (!ok)
        return hg__cfg_read_err(&p, cfg, "file");
    int rc = parse_root(&p, config_root_setting(cfg), pg, s);
    config_destroy(cfg);
    return rc;
}

void hg_strategy_head_free(struct hg_strategy_head *h)
{
    for (int i = 0; i < h->nopts; i++) {
        free(h->opt_name[i]);
        free(h->opt_val[i]);
    }
    for (int d = 0; d < h->ndev; d++)
        free(h->dev[d]);
    free(h->opt_name);
    free(h->opt_val);
    free(h->dev);
    free(h->model);
    free(h->optimizer);
    free(h->cluster_name);
    free(h->cluster_file);
    memset(h, 0, sizeof *h);
    h->nopts = h->ndev = -1;
}

/* The header's keys into h (the strings copied); 0 or -1. */
static int read_head(struct hg_cfgctx *p, const config_setting_t *root,
                     struct hg_strategy_head *h)
{
    long long ver = 0, batch = 0;
    const char *sv = NULL;
    const config_setting_t *gr, *cl, *devs;
    int rc = get_int(p, root, "version", NULL, &ver);
    if (rc != 0)
        return rc < 0 ? -1 : hg__cfg_err(p, root, "missing 'version' (an integer)");
    if (ver != 1)
        return hg__cfg_err(p, config_setting_get_member(root, "version"),
                           "version %lld: this hgtrain reads version 1", ver);
    if (hg__cfg_member(p, root, "graph", NULL, T_GROUP, "a group { n_ops = N; ... }", &gr) < 0 ||
        hg__cfg_member(p, root, "cluster", NULL, T_GROUP, "a group { devices = [...]; }",
                       &cl) < 0)
        return -1;
    if (gr) {
        if (get_str(p, gr, "model", "graph", "(its name)", &sv) < 0 ||
            get_int(p, gr, "batch", "graph", &batch) < 0 || parse_made(p, gr, h) != 0)
            return -1;
        if (config_setting_get_member(gr, "model") && !(h->model = strdup(sv)))
            return hg__cfg_err(p, gr, "out of memory");
        h->batch = batch > 0 ? (int64_t)batch : 0;
    }
    if (!cl)
        return 0;
    const char *name = NULL, *file = NULL;
    if (get_str(p, cl, "name", "cluster", "(its name)", &name) < 0 ||
        get_str(p, cl, "file", "cluster", "(its file)", &file) < 0 ||
        hg__cfg_member(p, cl, "devices", "cluster", T_SEQ, "a list of device names", &devs) < 0)
        return -1;
    if ((name && !(h->cluster_name = strdup(name))) ||
        (file && *file && !(h->cluster_file = strdup(file))))
        return hg__cfg_err(p, cl, "out of memory");
    if (!devs)
        return 0;
    int nd = config_setting_length(devs);
    if (!(h->dev = calloc((size_t)nd + 1, sizeof(char *))))
        return hg__cfg_err(p, devs, "out of memory");
    h->ndev = 0;
    for (int d = 0; d < nd; d++) {
        const config_setting_t *e = config_setting_get_elem(devs, (unsigned)d);
        if (config_setting_type(e) != CONFIG_TYPE_STRING)
            return hg__cfg_err(p, e, "cluster.devices[%d] is %s, expected a string (a "
                               "device name)", d, hg__cfg_type_name(e));
        if (!(h->dev[d] = strdup(config_setting_get_string(e))))
            return hg__cfg_err(p, devs, "out of memory");
        h->ndev = d + 1;
    }
    return 0;
}

int hg_strategy_head_read(struct hg_strategy_head *h, const char *path, const char *text,
                          char *err, size_t errlen)
{
    memset(h, 0, sizeof *h);
    h->nopts = h->ndev = -1;
    config_t cfg;
    config_init(&cfg);
    struct hg_cfgctx p = {path, err, errlen};
    int ok = text ? config_read_string(&cfg, text) == CONFIG_TRUE
                  : hg_config_read_file(&cfg, path) == CONFIG_TRUE;
    if (!ok)
        return hg__cfg_read_err(&p, &cfg, "file");
    int rc = read_head(&p, config_root_setting(&cfg), h);
    config_destroy(&cfg);
    if (rc != 0)
        hg_strategy_head_free(h);
    return rc;
}

int hg_strategy_load(struct hg_strategy **s, const char *path, const struct hg_pgraph *pg,
                     char *err, size_t errlen)
{
    config_t cfg;
    config_init(&cfg);
    *s = NULL;
    return finish(s, &cfg, hg_config_read_file(&cfg, path) == CONFIG_TRUE, path, pg, err, errlen);
}

int hg_strategy_parse(struct hg_strategy **s, const char *text, const char *name,
                      const struct hg_pgraph *pg, char *err, size_t errlen)
{
    config_t cfg;
    config_init(&cfg);
    *s = NULL;
    return finish(s, &cfg, config_read_string(&cfg, text) == CONFIG_TRUE, name, pg, err,
                  errlen);
}
