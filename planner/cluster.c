/* cluster.c - cluster descriptions (libconfig), validated strictly; paths
 * and channels between devices; per-rank capacities.  Format: see
 * docs/planner.md and examples/clusters/. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <libconfig.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "planner/hg_planner.h"
#include "planner/planner-impl.h"

static const char *const dev_kind_names[HG_DEV_KIND_COUNT] = {"gpu", "cpu"};
static const char *const link_kind_names[HG_LINK_KIND_COUNT] = {"nvlink", "pcie",
                                                                "shm", "net", "tcp"};

const char *hg_dev_kind_name(enum hg_dev_kind k)
{
    return (unsigned)k < HG_DEV_KIND_COUNT ? dev_kind_names[k] : "?";
}

const char *hg_link_kind_name(enum hg_link_kind k)
{
    return (unsigned)k < HG_LINK_KIND_COUNT ? link_kind_names[k] : "?";
}

/* ---------------------------------------------------------------- units */

enum qty { Q_BYTES, Q_BW, Q_FLOPS, Q_TIME, Q_NUMBER };

struct unit {
    const char *name;
    double mul;
};

/* Decimal prefixes for B, B/s and FLOP/s as vendors quote them; binary
 * ones (GiB) for memory; bit rates (Gbps) as NICs are sold. */
static const struct unit u_bytes[] = {
    {"B", 1}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
    {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0},
    {"TiB", 1099511627776.0}, {NULL, 0}};
static const struct unit u_bw[] = {
    {"B/s", 1}, {"KB/s", 1e3}, {"MB/s", 1e6}, {"GB/s", 1e9}, {"TB/s", 1e12},
    {"bps", 0.125}, {"Kbps", 125.0}, {"Mbps", 1.25e5}, {"Gbps", 1.25e8},
    {"Gbit/s", 1.25e8}, {"Mbit/s", 1.25e5}, {NULL, 0}};
static const struct unit u_flops[] = {
    {"FLOP/s", 1}, {"FLOPS", 1}, {"GFLOP/s", 1e9}, {"GFLOPS", 1e9},
    {"TFLOP/s", 1e12}, {"TFLOPS", 1e12}, {NULL, 0}};
static const struct unit u_time[] = {
    {"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}, {NULL, 0}};

static const char *qty_word(enum qty q)
{
    switch (q) {
    case Q_BYTES: return "a size (bytes, or a string such as \"16GiB\")";
    case Q_BW: return "a bandwidth (bytes/s, or a string such as \"12GB/s\" or \"100Gbps\")";
    case Q_FLOPS: return "a rate (FLOP/s, or a string such as \"15.7TFLOP/s\")";
    case Q_TIME: return "a time (seconds, or a string such as \"5us\")";
    default: return "a number";
    }
}

/* ---------------------------------------------------------------- parser */

/* A quantity: a number in base units or a string "<number><unit>".
 * *v is left alone when the key is absent (returns 1). */
static int get_qty(struct hg_cfgctx *p, const config_setting_t *grp, const char *key,
                   const char *what, enum qty q, double *v)
{
    const config_setting_t *s = config_setting_get_member(grp, key);
    if (!s)
        return 1;
    switch (config_setting_type(s)) {
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64:
        *v = (double)config_setting_get_int64(s);
        break;
    case CONFIG_TYPE_FLOAT:
        *v = config_setting_get_float(s);
        break;
    case CONFIG_TYPE_STRING: {
        if (q == Q_NUMBER)
            return hg__cfg_err(p, s, "%s: key '%s': expected a number", what, key);
        const char *t = config_setting_get_string(s);
        char *end;
        errno = 0;
        double x = strtod(t, &end);
        if (end == t || errno)
            return hg__cfg_err(p, s, "%s: key '%s': '%s' is not %s", what, key, t, qty_word(q));
        while (*end == ' ')
            end++;
        const struct unit *u = q == Q_BYTES ? u_bytes : q == Q_BW ? u_bw
                             : q == Q_FLOPS ? u_flops : u_time;
        double mul = *end ? 0 : 1;
        for (; *end && u->name; u++)
            if (strcmp(end, u->name) == 0)
                mul = u->mul;
        if (mul == 0)
            return hg__cfg_err(p, s, "%s: key '%s': unknown unit '%s' in '%s' (%s)", what, key,
                        end, t, qty_word(q));
        *v = x * mul;
        break;
    }
    default:
        return hg__cfg_err(p, s, "%s: key '%s': expected %s", what, key, qty_word(q));
    }
    if (!isfinite(*v))
        return hg__cfg_err(p, s, "%s: key '%s': not a finite number", what, key);
    return 0;
}

/* A quantity that must be > 0 when present; required: absent is an error. */
static int get_pos(struct hg_cfgctx *p, const config_setting_t *grp, const char *key,
                   const char *what, enum qty q, int required, double *v)
{
    int rc = get_qty(p, grp, key, what, q, v);
    if (rc < 0)
        return -1;
    if (rc == 1) {
        if (required)
            return hg__cfg_err(p, grp, "%s: no '%s' (%s, required)", what, key, qty_word(q));
        return 0;
    }
    if (!(*v > 0))
        return hg__cfg_err(p, config_setting_get_member(grp, key),
                    "%s: key '%s' must be > 0 (got %g)", what, key, *v);
    return 0;
}

static int get_lat(struct hg_cfgctx *p, const config_setting_t *grp, const char *what,
                   double *v)
{
    int rc = get_qty(p, grp, "latency", what, Q_TIME, v);
    if (rc < 0)
        return -1;
    if (rc == 0 && !(*v >= 0))
        return hg__cfg_err(p, config_setting_get_member(grp, "latency"),
                    "%s: key 'latency' must be >= 0 (got %g)", what, *v);
    return 0;
}

static int get_str(struct hg_cfgctx *p, const config_setting_t *grp, const char *key,
                   const char *what, char *dst, size_t n)
{
    return hg__cfg_str(p, grp, key, what, 0, dst, n);
}

static int get_link_kind(struct hg_cfgctx *p, const config_setting_t *grp, const char *what,
                         enum hg_link_kind *k)
{
    char v[32];
    int rc = get_str(p, grp, "kind", what, v, sizeof(v));
    if (rc < 0)
        return -1;
    if (rc == 1)
        return hg__cfg_err(p, grp, "%s: no 'kind' (nvlink, pcie or shm)", what);
    for (int i = 0; i < HG_LINK_NET; i++)
        if (strcmp(v, link_kind_names[i]) == 0) {
            *k = (enum hg_link_kind)i;
            return 0;
        }
    return hg__cfg_err(p, config_setting_get_member(grp, "kind"),
                "%s: kind '%s': expected nvlink, pcie or shm", what, v);
}

static const config_setting_t *get_list(struct hg_cfgctx *p, const config_setting_t *grp,
                                        const char *key, const char *what, int required)
{
    const config_setting_t *s = config_setting_get_member(grp, key);
    if (!s) {
        if (required)
            hg__cfg_err(p, grp, "%s: no '%s' list", what, key);
        return NULL;
    }
    int t = config_setting_type(s);
    if (t != CONFIG_TYPE_LIST && t != CONFIG_TYPE_GROUP) {
        hg__cfg_err(p, s, "%s: key '%s': expected a list of groups ( {...}, {...} )", what, key);
        return NULL;
    }
    if (t == CONFIG_TYPE_GROUP) /* one group given without the list */
        return s;
    for (int i = 0; i < config_setting_length(s); i++)
        if (config_setting_type(config_setting_get_elem(s, (unsigned)i)) !=
            CONFIG_TYPE_GROUP) {
            hg__cfg_err(p, config_setting_get_elem(s, (unsigned)i),
                 "%s: '%s' element %d is not a group { ... }", what, key, i);
            return NULL;
        }
    return s;
}

static int n_groups(const config_setting_t *l)
{
    return config_setting_type(l) == CONFIG_TYPE_GROUP ? 1 : config_setting_length(l);
}

static const config_setting_t *group_at(const config_setting_t *l, int i)
{
    return config_setting_type(l) == CONFIG_TYPE_GROUP
               ? l : config_setting_get_elem(l, (unsigned)i);
}

static void *grow(void *v, int n, int *cap, size_t elt)
{
    if (n < *cap)
        return v;
    *cap = *cap ? 2 * *cap : 16;
    void *w = realloc(v, (size_t)*cap * elt);
    HG_CHECK(w != NULL);
    return w;
}

/* "node:index" -> device id. */
static int find_dev(struct hg_cfgctx *p, const struct hg_cluster *c, const config_setting_t *l,
                    const char *key, const char *what, int *dev)
{
    char ref[160];
    int rc = get_str(p, l, key, what, ref, sizeof(ref));
    if (rc < 0)
        return -1;
    if (rc == 1)
        return hg__cfg_err(p, l, "%s: no '%s' (\"node:index\")", what, key);
    const config_setting_t *s = config_setting_get_member(l, key);
    char *colon = strrchr(ref, ':');
    if (!colon)
        return hg__cfg_err(p, s, "%s: %s '%s': expected \"node:index\"", what, key, ref);
    *colon = 0;
    char *end;
    errno = 0;
    long idx = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || *end || errno || idx < 0)
        return hg__cfg_err(p, s, "%s: %s '%s:%s': the device index is not a number >= 0", what,
                    key, ref, colon + 1);
    for (int n = 0; n < c->nnodes; n++)
        if (strcmp(c->nodes[n].name, ref) == 0) {
            if (idx >= c->nodes[n].ndev)
                return hg__cfg_err(p, s, "%s: %s '%s:%ld': node '%s' has no device %ld (it has "
                            "%d)", what, key, ref, idx, ref, idx, c->nodes[n].ndev);
            *dev = c->nodes[n].first_dev + (int)idx;
            return 0;
        }
    return hg__cfg_err(p, s, "%s: %s '%s:%ld': no node named '%s'", what, key, ref, idx, ref);
}

static const char *const top_keys[] = {"name", "network", "nodes", "links", NULL};
static const char *const net_keys[] = {"switch_bandwidth", "latency", NULL};
static const char *const node_keys[] = {"name", "nic_bandwidth", "intra", "devices",
                                        NULL};
static const char *const intra_keys[] = {"kind", "bandwidth", "latency", NULL};
static const char *const dev_keys[] = {"kind", "model", "count", "memory", "peak_flops",
                                       "memory_bandwidth", "speed", "profile", "time_share",
                                       NULL};
static const char *const link_keys[] = {"from", "to", "kind", "bandwidth", "latency",
                                        NULL};

struct intra {
    int given;
    enum hg_link_kind kind;
    double bw, lat;
};

static int parse_device(struct hg_cfgctx *p, struct hg_cluster *c, int *cdev,
                        const config_setting_t *d, int node, const char *what)
{
    if (hg__cfg_check_keys(p, d, what, dev_keys) != 0)
        return -1;
    struct hg_pdevice t = {.node = node, .time_share = 1, .prof_dev = -1};
    char kind[16];
    int rc = get_str(p, d, "kind", what, kind, sizeof(kind));
    if (rc < 0)
        return -1;
    if (rc == 1)
        return hg__cfg_err(p, d, "%s: no 'kind' (gpu or cpu)", what);
    if (strcmp(kind, "gpu") == 0)
        t.kind = HG_DEV_GPU;
    else if (strcmp(kind, "cpu") == 0)
        t.kind = HG_DEV_CPU;
    else
        return hg__cfg_err(p, config_setting_get_member(d, "kind"),
                    "%s: kind '%s': expected gpu or cpu", what, kind);
    if (get_str(p, d, "model", what, t.model, sizeof(t.model)) < 0)
        return -1;
    double count = 1, mem = 0;
    if (get_qty(p, d, "count", what, Q_NUMBER, &count) < 0)
        return -1;
    if (!(count >= 1 && count <= 4096 && count == floor(count)))
        return hg__cfg_err(p, config_setting_get_member(d, "count"),
                    "%s: key 'count' must be a whole number in [1, 4096] (got %g)", what,
                    count);
    if (get_pos(p, d, "memory", what, Q_BYTES, 1, &mem) != 0 ||
        get_pos(p, d, "peak_flops", what, Q_FLOPS, 0, &t.peak_flops) != 0 ||
        get_pos(p, d, "memory_bandwidth", what, Q_BW, 0, &t.mem_bw) != 0 ||
        get_pos(p, d, "speed", what, Q_NUMBER, 0, &t.speed) != 0)
        return -1;
    if (get_str(p, d, "profile", what, t.profile, sizeof(t.profile)) < 0 ||
        get_pos(p, d, "time_share", what, Q_NUMBER, 0, &t.time_share) != 0)
        return -1;
    if (t.time_share > 1)
        return hg__cfg_err(p, config_setting_get_member(d, "time_share"),
                           "%s: key 'time_share' must be in (0, 1] (got %g)", what, t.time_share);
    if (t.peak_flops == 0 && t.speed == 0 && !t.profile[0])
        return hg__cfg_err(p, d, "%s: give 'peak_flops' (with 'memory_bandwidth'), a measured "
                    "'speed' or a 'profile'", what);
    t.memory = (int64_t)mem;
    for (int k = 0; k < (int)count; k++) {
        c->devices = grow(c->devices, c->ndev, cdev, sizeof(*c->devices));
        struct hg_pdevice *o = &c->devices[c->ndev];
        *o = t;
        o->local = c->ndev - c->nodes[node].first_dev;
        snprintf(o->name, sizeof(o->name), "%.40s:%d", c->nodes[node].name, o->local);
        c->ndev++;
    }
    return 0;
}

static int parse_node(struct hg_cfgctx *p, struct hg_cluster *c, int *cdev,
                      const config_setting_t *ns, int node, struct intra *in)
{
    char what[160];
    snprintf(what, sizeof(what), "node %d", node);
    if (hg__cfg_check_keys(p, ns, what, node_keys) != 0)
        return -1;
    struct hg_pnode *n = &c->nodes[node];
    int rc = get_str(p, ns, "name", what, n->name, sizeof(n->name));
    if (rc < 0)
        return -1;
    if (rc == 1)
        return hg__cfg_err(p, ns, "%s: no 'name'", what);
    if (strchr(n->name, ':'))
        return hg__cfg_err(p, config_setting_get_member(ns, "name"),
                    "%s: name '%s' may not contain ':'", what, n->name);
    for (int k = 0; k < node; k++)
        if (strcmp(c->nodes[k].name, n->name) == 0)
            return hg__cfg_err(p, config_setting_get_member(ns, "name"),
                        "%s: name '%s' is used twice", what, n->name);
    snprintf(what, sizeof(what), "node '%s'", n->name);
    if (get_pos(p, ns, "nic_bandwidth", what, Q_BW, 0, &n->nic_bw) != 0)
        return -1;
    const config_setting_t *is = config_setting_get_member(ns, "intra");
    if (is) {
        char w2[200];
        snprintf(w2, sizeof(w2), "%s: intra", what);
        if (config_setting_type(is) != CONFIG_TYPE_GROUP)
            return hg__cfg_err(p, is, "%s: expected a group { kind; bandwidth; latency; }", w2);
        in->given = 1;
        if (hg__cfg_check_keys(p, is, w2, intra_keys) != 0 || get_link_kind(p, is, w2, &in->kind) != 0 ||
            get_pos(p, is, "bandwidth", w2, Q_BW, 1, &in->bw) != 0 ||
            get_lat(p, is, w2, &in->lat) != 0)
            return -1;
    }
    const config_setting_t *dl = get_list(p, ns, "devices", what, 1);
    if (!dl)
        return -1;
    n->first_dev = c->ndev;
    if (n_groups(dl) == 0)
        return hg__cfg_err(p, dl, "%s: 'devices' is empty", what);
    for (int i = 0; i < n_groups(dl); i++) {
        char w2[200];
        snprintf(w2, sizeof(w2), "%s: device %d", what, i);
        n->ndev = c->ndev - n->first_dev; /* for names */
        if (parse_device(p, c, cdev, group_at(dl, i), node, w2) != 0)
            return -1;
    }
    n->ndev = c->ndev - n->first_dev;
    return 0;
}

/* The pair_link entry of same-node devices a < b. */
static int *pair_slot(const struct hg_cluster *c, int a, int b)
{
    const struct hg_pnode *nd = &c->nodes[c->devices[a].node];
    int64_t i = a - nd->first_dev, j = b - nd->first_dev, d = nd->ndev;
    return &c->pair_link[nd->pair_base + i * d - i * (i + 1) / 2 + (j - i - 1)];
}

static int parse_root(struct hg_cfgctx *p, struct hg_cluster *c, const config_setting_t *root)
{
    if (hg__cfg_check_keys(p, root, "cluster", top_keys) != 0)
        return -1;
    if (get_str(p, root, "name", "cluster", c->name, sizeof(c->name)) < 0)
        return -1;
    const config_setting_t *nl = get_list(p, root, "nodes", "cluster", 1);
    if (!nl)
        return -1;
    c->nnodes = n_groups(nl);
    if (c->nnodes == 0)
        return hg__cfg_err(p, nl, "cluster: 'nodes' is empty");
    c->nodes = calloc((size_t)c->nnodes, sizeof(*c->nodes));
    struct intra *in = calloc((size_t)c->nnodes, sizeof(*in));
    HG_CHECK(c->nodes && in);
    int cdev = 0, rc = 0;
    for (int i = 0; i < c->nnodes && rc == 0; i++)
        rc = parse_node(p, c, &cdev, group_at(nl, i), i, &in[i]);

    const config_setting_t *net = config_setting_get_member(root, "network");
    if (rc == 0 && net) {
        if (config_setting_type(net) != CONFIG_TYPE_GROUP)
            rc = hg__cfg_err(p, net, "cluster: 'network' must be a group { switch_bandwidth; "
                      "latency; }");
        else if (hg__cfg_check_keys(p, net, "network", net_keys) != 0 ||
                 get_pos(p, net, "switch_bandwidth", "network", Q_BW, 1, &c->switch_bw) != 0 ||
                 get_lat(p, net, "network", &c->net_lat) != 0)
            rc = -1;
    }
    if (rc == 0 && c->nnodes > 1) {
        if (!net)
            rc = hg__cfg_err(p, root, "cluster: %d nodes need a 'network' group "
                      "{ switch_bandwidth; latency; }", c->nnodes);
        for (int i = 0; i < c->nnodes && rc == 0; i++)
            if (c->nodes[i].nic_bw == 0)
                rc = hg__cfg_err(p, group_at(nl, i), "node '%s': no 'nic_bandwidth' (required "
                          "when the cluster has several nodes)", c->nodes[i].name);
    }

    /* the pair index: a lookup per pair keeps validation linear in the
     * pairs (a search over the links made it quartic in a node's size) */
    int64_t npairs = 0;
    for (int n = 0; n < c->nnodes && rc == 0; n++) {
        int64_t d = c->nodes[n].ndev;
        c->nodes[n].pair_base = npairs;
        npairs += d * (d - 1) / 2;
    }
    if (rc == 0 && npairs > INT32_MAX)
        rc = hg__cfg_err(p, root, "cluster: %lld same-node device pairs: too many",
                         (long long)npairs);
    if (rc == 0) {
        c->pair_link = malloc((size_t)(npairs ? npairs : 1) * sizeof(int));
        HG_CHECK(c->pair_link != NULL);
        memset(c->pair_link, 0xff, (size_t)npairs * sizeof(int)); /* -1 */
    }

    /* explicit links, then every other same-node pair from `intra` */
    int clink = 0;
    const config_setting_t *ll = rc == 0 ? config_setting_get_member(root, "links") : NULL;
    if (ll && !(ll = get_list(p, root, "links", "cluster", 0)))
        rc = -1;
    for (int i = 0; ll && rc == 0 && i < n_groups(ll); i++) {
        const config_setting_t *l = group_at(ll, i);
        char what[64];
        snprintf(what, sizeof(what), "link %d", i);
        struct hg_plink t = {0};
        if (hg__cfg_check_keys(p, l, what, link_keys) != 0 ||
            find_dev(p, c, l, "from", what, &t.a) != 0 ||
            find_dev(p, c, l, "to", what, &t.b) != 0 ||
            get_link_kind(p, l, what, &t.kind) != 0 ||
            get_pos(p, l, "bandwidth", what, Q_BW, 1, &t.bw) != 0 ||
            get_lat(p, l, what, &t.lat) != 0) {
            rc = -1;
            break;
        }
        if (t.a == t.b) {
            rc = hg__cfg_err(p, l, "%s: joins %s to itself", what, c->devices[t.a].name);
            break;
        }
        if (c->devices[t.a].node != c->devices[t.b].node) {
            rc = hg__cfg_err(p, l, "%s: %s and %s are on different nodes (nodes talk through "
                      "their NICs and the switch: 'nic_bandwidth', 'network')", what,
                      c->devices[t.a].name, c->devices[t.b].name);
            break;
        }
        if (t.a > t.b) {
            int x = t.a;
            t.a = t.b;
            t.b = x;
        }
        if (hg_cluster_link(c, t.a, t.b) >= 0) {
            rc = hg__cfg_err(p, l, "%s: %s - %s is given twice", what, c->devices[t.a].name,
                      c->devices[t.b].name);
            break;
        }
        c->links = grow(c->links, c->nlinks, &clink, sizeof(*c->links));
        *pair_slot(c, t.a, t.b) = c->nlinks;
        c->links[c->nlinks++] = t;
    }
    for (int n = 0; n < c->nnodes && rc == 0; n++) {
        const struct hg_pnode *nd = &c->nodes[n];
        for (int a = nd->first_dev; a < nd->first_dev + nd->ndev && rc == 0; a++)
            for (int b = a + 1; b < nd->first_dev + nd->ndev; b++) {
                if (hg_cluster_link(c, a, b) >= 0)
                    continue;
                if (!in[n].given) {
                    rc = hg__cfg_err(p, group_at(nl, n), "node '%s': no link between %s and %s "
                              "(give the node an 'intra' group or a 'links' entry)",
                              nd->name, c->devices[a].name, c->devices[b].name);
                    break;
                }
                c->links = grow(c->links, c->nlinks, &clink, sizeof(*c->links));
                *pair_slot(c, a, b) = c->nlinks;
                c->links[c->nlinks++] = (struct hg_plink){.a = a, .b = b,
                    .kind = in[n].kind, .bw = in[n].bw, .lat = in[n].lat, .implicit = 1};
            }
    }
    free(in);
    return rc;
}

static int finish(struct hg_cluster **out, config_t *cfg, int read_ok, const char *name,
                  char *err, size_t errlen)
{
    *out = NULL;
    struct hg_cfgctx p = {.file = name, .err = err, .errlen = errlen};
    if (!read_ok)
        return hg__cfg_read_err(&p, cfg, "cluster file");
    struct hg_cluster *c = calloc(1, sizeof(*c));
    HG_CHECK(c != NULL);
    snprintf(c->file, sizeof(c->file), "%s", name);
    int rc = parse_root(&p, c, config_root_setting(cfg));
    config_destroy(cfg);
    if (rc != 0) {
        hg_cluster_free(c);
        return -1;
    }
    if (!c->name[0]) { /* the file's base name without .cfg */
        const char *b = strrchr(name, '/');
        b = b ? b + 1 : name;
        snprintf(c->name, sizeof(c->name), "%s", b);
        char *dot = strrchr(c->name, '.');
        if (dot && dot != c->name)
            *dot = 0;
    }
    *out = c;
    return 0;
}

int hg_cluster_load(struct hg_cluster **c, const char *path, char *err, size_t errlen)
{
    config_t cfg;
    config_init(&cfg);
    int ok = hg_config_read_file(&cfg, path);
    return finish(c, &cfg, ok, path, err, errlen);
}

int hg_cluster_parse(struct hg_cluster **c, const char *text, const char *name,
                     char *err, size_t errlen)
{
    config_t cfg;
    config_init(&cfg);
    int ok = config_read_string(&cfg, text);
    return finish(c, &cfg, ok, name, err, errlen);
}

void hg_cluster_free(struct hg_cluster *c)
{
    if (!c)
        return;
    free(c->nodes);
    free(c->devices);
    free(c->links);
    free(c->pair_link);
    free(c);
}

/* ---------------------------------------------------------------- queries */

int hg_cluster_link(const struct hg_cluster *c, int a, int b)
{
    if (a > b) {
        int x = a;
        a = b;
        b = x;
    }
    if (a == b || a < 0 || b >= c->ndev || c->devices[a].node != c->devices[b].node ||
        !c->pair_link)
        return -1;
    return *pair_slot(c, a, b);
}

/* Link l's bandwidth and latency: the measured point-to-point fit that
 * hg_cluster_set_profile put on it, else the file's. */
static void link_bw_lat(const struct hg_cluster *c, int l, double *bw, double *lat)
{
    const struct hg_plink *k = &c->links[l];
    int measured = c->prof && k->mbw > 0;
    *bw = measured ? k->mbw : k->bw;
    *lat = measured ? k->mlat : k->lat;
}

int hg_cluster_n_channels(const struct hg_cluster *c)
{
    return 2 * c->nlinks + 2 * c->nnodes + 1;
}

double hg_cluster_channel_bw(const struct hg_cluster *c, int chan)
{
    HG_CHECK(chan >= 0 && chan < hg_cluster_n_channels(c));
    if (chan < 2 * c->nlinks) {
        double bw, lat;
        link_bw_lat(c, chan / 2, &bw, &lat);
        return bw;
    }
    chan -= 2 * c->nlinks;
    /* a measured network: the NICs carry what the tcp backend measured
     * between two nodes, and the switch at least that much */
    double m = c->prof ? c->net_mbw : 0;
    if (chan < 2 * c->nnodes)
        return m > 0 ? m : c->nodes[chan / 2].nic_bw;
    return m > c->switch_bw ? m : c->switch_bw;
}

void hg_cluster_path(const struct hg_cluster *c, int from, int to, struct hg_path *p)
{
    HG_CHECK(from >= 0 && from < c->ndev && to >= 0 && to < c->ndev && from != to);
    const struct hg_pdevice *a = &c->devices[from], *b = &c->devices[to];
    memset(p, 0, sizeof(*p));
    if (a->node == b->node) {
        int l = hg_cluster_link(c, from, to);
        HG_CHECK(l >= 0); /* validation gives every pair a link */
        link_bw_lat(c, l, &p->bw, &p->lat);
        p->kind = c->links[l].kind;
        p->nchan = 1;
        p->chan[0] = 2 * l + (from > to);
        return;
    }
    const struct hg_pnode *na = &c->nodes[a->node], *nb = &c->nodes[b->node];
    double bw = na->nic_bw < nb->nic_bw ? na->nic_bw : nb->nic_bw;
    p->bw = bw < c->switch_bw ? bw : c->switch_bw;
    p->lat = c->net_lat;
    if (c->prof && c->net_mbw > 0) { /* the bound profile's tcp point to point */
        p->bw = c->net_mbw;
        p->lat = c->net_mlat;
    }
    p->kind = HG_LINK_NET;
    p->nchan = 3;
    p->chan[0] = 2 * c->nlinks + 2 * a->node;
    p->chan[1] = 2 * c->nlinks + 2 * c->nnodes;
    p->chan[2] = 2 * c->nlinks + 2 * b->node + 1;
}

int hg_cluster_rank_capacities(const struct hg_cluster *c, double *cap, char *err,
                               size_t errlen)
{
    int all_speed = 1;
    for (int i = 0; i < c->ndev; i++)
        all_speed &= c->devices[i].speed > 0;
    double mx = 0;
    for (int i = 0; i < c->ndev; i++) {
        const struct hg_pdevice *d = &c->devices[i];
        /* a rank that gets a share of its device is that much slower */
        cap[i] = (all_speed ? d->speed : d->peak_flops) *
                 hg_pdevice_share(d);
        if (!(cap[i] > 0))
            return hg_kerr(err, errlen, "%s: device %s has no 'peak_flops' and not every "
                           "device has a 'speed': capacities need one or the other on "
                           "all devices", c->file, d->name);
        mx = cap[i] > mx ? cap[i] : mx;
    }
    for (int i = 0; i < c->ndev; i++)
        cap[i] /= mx;
    return 0;
}

static void fmt_bw(char *b, size_t n, double v)
{
    snprintf(b, n, "%.3g GB/s", v / 1e9);
}

static void print_link(const struct hg_cluster *c, int l, FILE *f)
{
    const struct hg_plink *k = &c->links[l];
    double bw, lat;
    char b[32];
    link_bw_lat(c, l, &bw, &lat);
    fmt_bw(b, sizeof(b), bw);
    fprintf(f, "    link %s - %s: %s, %s, %.3g us%s%s\n", c->devices[k->a].name,
            c->devices[k->b].name, hg_link_kind_name(k->kind), b, lat * 1e6,
            k->implicit ? "" : " (explicit)",
            bw != k->bw || lat != k->lat ? " (profiled)" : "");
}

/* Node n's implicit links: [*first, *first + *count) (they follow the
 * explicit ones, node by node); from the first implicit link l0. Returns
 * the last link looked at. */
static int implicit_range(const struct hg_cluster *c, int n, int l0, int *first, int *count)
{
    *first = -1;
    *count = 0;
    /* the node's pairs minus its explicit links, found through a pair */
    const struct hg_pnode *nd = &c->nodes[n];
    int l = l0;
    for (int a = nd->first_dev; a < nd->first_dev + nd->ndev && *first < 0; a++)
        for (int b = a + 1; b < nd->first_dev + nd->ndev && *first < 0; b++) {
            int k = hg_cluster_link(c, a, b);
            if (k >= 0 && c->links[k].implicit)
                *first = k;
        }
    if (*first < 0)
        return l;
    for (l = *first; l < c->nlinks && c->links[l].implicit &&
                     c->devices[c->links[l].a].node == n; l++)
        (*count)++;
    return l;
}

void hg_cluster_print(const struct hg_cluster *c, FILE *f)
{
    fprintf(f, "cluster %s (%s): %d node%s, %d device%s, %d intra-node link%s\n", c->name,
            c->file[0] ? c->file : "-", c->nnodes, c->nnodes == 1 ? "" : "s", c->ndev,
            c->ndev == 1 ? "" : "s", c->nlinks, c->nlinks == 1 ? "" : "s");
    char b1[32], b2[32];
    for (int n = 0; n < c->nnodes; n++) {
        const struct hg_pnode *nd = &c->nodes[n];
        fmt_bw(b1, sizeof(b1), nd->nic_bw);
        fprintf(f, "  node %-10s %d device%s", nd->name, nd->ndev, nd->ndev == 1 ? "" : "s");
        if (nd->nic_bw > 0)
            fprintf(f, ", NIC %s", b1);
        fputc('\n', f);
        for (int i = nd->first_dev; i < nd->first_dev + nd->ndev; i++) {
            const struct hg_pdevice *d = &c->devices[i];
            fprintf(f, "    rank %-3d %-10s %s %-24s %6.2f GiB", i, d->name,
                    hg_dev_kind_name(d->kind), d->model[0] ? d->model : "-",
                    (double)d->memory / 1073741824.0);
            if (d->peak_flops > 0)
                fprintf(f, ", %.4g TFLOP/s", d->peak_flops / 1e12);
            if (d->mem_bw > 0)
                fprintf(f, ", %.4g GB/s", d->mem_bw / 1e9);
            if (d->speed > 0)
                fprintf(f, ", speed %g", d->speed);
            if (d->profile[0])
                fprintf(f, ", profile %s%s", d->profile,
                        !c->prof ? "" : d->prof_dev >= 0 ? " (bound)" : " (not bound)");
            if (d->time_share > 0 && d->time_share < 1)
                fprintf(f, ", time share %.3g", d->time_share);
            fputc('\n', f);
        }
        /* explicit links one by one (they come first in links[]); the
         * implicit ones of the node in one line when they all price the
         * same (a node of 512 devices has 130816 of them) */
        int nimp = 0, same = 1, first = -1;
        double bw0 = 0, lat0 = 0;
        for (int l = 0; l < c->nlinks; l++) {
            const struct hg_plink *k = &c->links[l];
            if (k->implicit) {
                l = implicit_range(c, n, l, &first, &nimp);
                break;
            }
            if (c->devices[k->a].node == n)
                print_link(c, l, f);
        }
        for (int l = first; l >= 0 && l < first + nimp && same; l++) {
            double bw, lat;
            link_bw_lat(c, l, &bw, &lat);
            if (l == first)
                bw0 = bw, lat0 = lat;
            same = bw == bw0 && lat == lat0;
        }
        if (nimp > 0 && same) {
            const struct hg_plink *k = &c->links[first];
            fmt_bw(b2, sizeof(b2), bw0);
            fprintf(f, "    links: every other pair (%d) %s, %s, %.3g us%s\n", nimp,
                    hg_link_kind_name(k->kind), b2, lat0 * 1e6,
                    bw0 != k->bw || lat0 != k->lat ? " (profiled)" : "");
        } else {
            for (int l = first; l >= 0 && l < first + nimp; l++)
                print_link(c, l, f);
        }
    }
    if (c->nnodes > 1) {
        fmt_bw(b1, sizeof(b1), c->switch_bw);
        fprintf(f, "  network: switch %s, latency %.3g us", b1, c->net_lat * 1e6);
        if (c->prof && c->net_mbw > 0) {
            fmt_bw(b2, sizeof(b2), c->net_mbw);
            fprintf(f, "; between nodes %s, %.3g us (profiled, tcp)", b2, c->net_mlat * 1e6);
        }
        fputc('\n', f);
    }
    double cap[4096];
    if (c->ndev <= 4096 && hg_cluster_rank_capacities(c, cap, NULL, 0) == 0) {
        fprintf(f, "  rank capacities:");
        for (int i = 0; i < c->ndev; i++)
            fprintf(f, "%s%.3g", i ? "," : " ", cap[i]);
        fputc('\n', f);
    }
}
