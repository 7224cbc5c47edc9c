/* profile.c - the profiler's half that lives in the library: the fit, the
 * profile in memory and its versioned file, op shape signatures, the
 * measurement of a graph's ops with the executor, and binding a profile to
 * a cluster (docs/planner.md, "Profiler").  The link measurement forks
 * workers and talks through comm/, so it lives with the hgplan program
 * (planner/prof_links.c): this room stays planner -> graph -> kernels. */
#define _POSIX_C_SOURCE 200809L
#include <libconfig.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "planner/hg_planner.h"
#include "planner/planner-impl.h"

static const char *const coll_names[HG_PROF_COLL_COUNT] = {"sendrecv", "allreduce", "ps"};

const char *hg_prof_coll_name(enum hg_prof_coll k)
{
    return (unsigned)k < HG_PROF_COLL_COUNT ? coll_names[k] : "?";
}

/* ---------------------------------------------------------------- the fit */

int hg_prof_fit_line(const double *x, const double *t, int n, struct hg_prof_fit *f)
{
    memset(f, 0, sizeof(*f));
    if (n < 1)
        return -1;
    double S = 0, Sx = 0, Sxx = 0, St = 0, Sxt = 0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(x[i]) || !isfinite(t[i]) || x[i] < 0 || !(t[i] > 0))
            return -1;
        double w = 1 / (t[i] * t[i]);
        S += w;
        Sx += w * x[i];
        Sxx += w * x[i] * x[i];
        St += w * t[i];
        Sxt += w * x[i] * t[i];
    }
    double det = S * Sxx - Sx * Sx;
    /* one point, or every x alike: no slope to see */
    if (!(det > 1e-12 * S * Sxx)) {
        f->a = St / S;
        f->b = 0;
    } else {
        f->b = (S * Sxt - Sx * St) / det;
        f->a = (St - f->b * Sx) / S;
        if (f->a < 0) { /* through the origin */
            f->a = 0;
            f->b = Sxt / Sxx;
        }
        if (f->b < 0) { /* flat */
            f->b = 0;
            f->a = St / S;
        }
    }
    for (int i = 0; i < n; i++) {
        double r = fabs(f->a + f->b * x[i] - t[i]) / t[i];
        f->rmax = r > f->rmax ? r : f->rmax;
    }
    return 0;
}

/* ---------------------------------------------------------------- in memory */

struct hg_profile *hg_prof_new(void)
{
    struct hg_profile *p = calloc(1, sizeof(*p));
    HG_CHECK(p != NULL);
    return p;
}

void hg_prof_free(struct hg_profile *p)
{
    if (!p)
        return;
    free(p->devs);
    free(p->ops);
    free(p->links);
    free(p);
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

int hg_prof_find_device(const struct hg_profile *p, const char *name)
{
    for (int i = 0; i < p->ndevs; i++)
        if (strcmp(p->devs[i].name, name) == 0)
            return i;
    return -1;
}

int hg_prof_device(struct hg_profile *p, const char *name, enum hg_dev_kind kind,
                   const char *model, int threads, int processes)
{
    int i = hg_prof_find_device(p, name);
    if (i < 0) {
        p->devs = grow(p->devs, p->ndevs, &p->cdevs, sizeof(*p->devs));
        i = p->ndevs++;
        memset(&p->devs[i], 0, sizeof(p->devs[i]));
        snprintf(p->devs[i].name, sizeof(p->devs[i].name), "%s", name);
    }
    p->devs[i].kind = kind;
    snprintf(p->devs[i].model, sizeof(p->devs[i].model), "%s", model ? model : "");
    p->devs[i].threads = threads > 0 ? threads : 1;
    p->devs[i].processes = processes > 0 ? processes : 1;
    if (!(p->devs[i].share > 0))
        p->devs[i].share = 1;
    return i;
}

static int op_cmp(int dev, enum hg_op op, const char *sig, const struct hg_prof_op *e)
{
    if (dev != e->dev)
        return dev < e->dev ? -1 : 1;
    if (op != e->op)
        return op < e->op ? -1 : 1;
    return strcmp(sig, e->sig);
}

/* Index of (dev, op, sig) in the sorted ops, or where it would go (*found 0). */
static int op_pos(const struct hg_profile *p, int dev, enum hg_op op, const char *sig,
                  int *found)
{
    int lo = 0, hi = p->nops;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        int c = op_cmp(dev, op, sig, &p->ops[mid]);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    *found = 0;
    return lo;
}

const struct hg_prof_op *hg_prof_find_op(const struct hg_profile *p, int dev, enum hg_op op,
                                         const char *sig)
{
    int found;
    int i = op_pos(p, dev, op, sig, &found);
    return found ? &p->ops[i] : NULL;
}

double hg_prof_time(const struct hg_prof_op *e, double x)
{
    int lo = -1, hi = -1; /* the nearest measured batch at or below x, above x */
    for (int i = 0; i < e->npts; i++) {
        if (e->x[i] <= x && (lo < 0 || e->x[i] > e->x[lo]))
            lo = i;
        if (e->x[i] > x && (hi < 0 || e->x[i] < e->x[hi]))
            hi = i;
    }
    if (lo >= 0 && e->x[lo] == x)
        return e->t[lo];
    if (lo < 0 || hi < 0)
        return e->fit.a + e->fit.b * x;
    double w = (x - e->x[lo]) / (e->x[hi] - e->x[lo]);
    return e->t[lo] + w * (e->t[hi] - e->t[lo]);
}

static int fit_points(int npts, const double *x, const double *t, struct hg_prof_fit *f,
                      const char *what, char *err, size_t errlen)
{
    if (npts < 1 || npts > HG_PROF_MAXPTS)
        return hg_kerr(err, errlen, "%s: %d points (1 to %d)", what, npts, HG_PROF_MAXPTS);
    if (hg_prof_fit_line(x, t, npts, f) != 0)
        return hg_kerr(err, errlen, "%s: a point is not finite, x < 0 or time <= 0", what);
    return 0;
}

/* Inserts e (already fitted) at its sorted place, replacing an equal key. */
static struct hg_prof_op *put_op(struct hg_profile *p, int dev, enum hg_op op, const char *sig,
                                 int *existed)
{
    int found;
    int i = op_pos(p, dev, op, sig, &found);
    *existed = found;
    if (!found) {
        p->ops = grow(p->ops, p->nops, &p->cops, sizeof(*p->ops));
        memmove(&p->ops[i + 1], &p->ops[i], (size_t)(p->nops - i) * sizeof(*p->ops));
        p->nops++;
        memset(&p->ops[i], 0, sizeof(p->ops[i]));
        p->ops[i].dev = dev;
        p->ops[i].op = op;
        snprintf(p->ops[i].sig, sizeof(p->ops[i].sig), "%s", sig);
    }
    return &p->ops[i];
}

int hg_prof_set_op(struct hg_profile *p, int dev, enum hg_op op, const char *sig, int nodes,
                   int npts, const double *x, const double *t, char *err, size_t errlen)
{
    HG_CHECK(dev >= 0 && dev < p->ndevs && (unsigned)op < HG_OP_COUNT);
    if (strlen(sig) >= sizeof(p->ops[0].sig))
        return hg_kerr(err, errlen, "%s %s: signature longer than %zu characters",
                       p->devs[dev].name, hg_op_table[op].name, sizeof(p->ops[0].sig) - 1);
    char what[160];
    snprintf(what, sizeof(what), "%s %s", p->devs[dev].name, hg_op_table[op].name);
    struct hg_prof_fit f;
    if (fit_points(npts, x, t, &f, what, err, errlen) != 0)
        return -1;
    int existed;
    struct hg_prof_op *e = put_op(p, dev, op, sig, &existed);
    e->nodes = nodes;
    e->npts = npts;
    memcpy(e->x, x, (size_t)npts * sizeof(double));
    memcpy(e->t, t, (size_t)npts * sizeof(double));
    e->fit = f;
    return 0;
}

static struct hg_prof_link *find_link(const struct hg_profile *p, enum hg_link_kind kind,
                                      enum hg_prof_coll coll, int world)
{
    for (int i = 0; i < p->nlinks; i++)
        if (p->links[i].kind == kind && p->links[i].coll == coll && p->links[i].world == world)
            return &p->links[i];
    return NULL;
}

const struct hg_prof_link *hg_prof_find_link(const struct hg_profile *p,
                                             enum hg_link_kind kind,
                                             enum hg_prof_coll coll, int world)
{
    return p ? find_link(p, kind, coll, world) : NULL;
}

static struct hg_prof_link *put_link(struct hg_profile *p, enum hg_link_kind kind,
                                     enum hg_prof_coll coll, int world)
{
    struct hg_prof_link *l = find_link(p, kind, coll, world);
    if (!l) {
        p->links = grow(p->links, p->nlinks, &p->clinks, sizeof(*p->links));
        l = &p->links[p->nlinks++];
        memset(l, 0, sizeof(*l));
        l->kind = kind;
        l->coll = coll;
        l->world = world;
    }
    return l;
}

int hg_prof_set_link_cpu(struct hg_profile *p, enum hg_link_kind kind, enum hg_prof_coll coll,
                         int world, double cpu)
{
    struct hg_prof_link *l = find_link(p, kind, coll, world);
    if (!l)
        return -1;
    l->cpu = cpu > 0 ? cpu : 0;
    return 0;
}

int hg_prof_set_link(struct hg_profile *p, enum hg_link_kind kind, enum hg_prof_coll coll,
                     int world, int npts, const double *x, const double *t, char *err,
                     size_t errlen)
{
    HG_CHECK((unsigned)kind < HG_LINK_KIND_COUNT && (unsigned)coll < HG_PROF_COLL_COUNT &&
             world >= 2);
    char what[96];
    snprintf(what, sizeof(what), "%s %s world %d", hg_link_kind_name(kind),
             hg_prof_coll_name(coll), world);
    struct hg_prof_fit f;
    if (fit_points(npts, x, t, &f, what, err, errlen) != 0)
        return -1;
    struct hg_prof_link *l = put_link(p, kind, coll, world);
    l->npts = npts;
    memcpy(l->x, x, (size_t)npts * sizeof(double));
    memcpy(l->t, t, (size_t)npts * sizeof(double));
    l->fit = f;
    return 0;
}

/* ---------------------------------------------------------------- signatures */

/* Appends printf output at *k; 0, or -1 once it no longer fits. */
static int app(char *buf, size_t n, size_t *k, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int app(char *buf, size_t n, size_t *k, const char *fmt, ...)
{
    if (*k >= n)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf + *k, n - *k, fmt, ap);
    va_end(ap);
    if (w < 0 || (size_t)w >= n - *k) {
        *k = n;
        return -1;
    }
    *k += (size_t)w;
    return 0;
}

static int tensor_sig(const struct hg_graph *g, int t, int64_t batch, char *buf, size_t n,
                      size_t *k)
{
    const struct hg_tensor_info *ti = hg_graph_tensor(g, t);
    int rc = app(buf, n, k, "%s[", hg_dtype_name(ti->dtype));
    for (int i = 0; i < ti->shape.ndim; i++) {
        int64_t d = ti->shape.dim[i];
        const char *sep = i ? "," : "";
        /* the batch axis per sample: one signature for every batch size */
        if (i == ti->batch_axis && batch > 0 && d % batch == 0)
            rc |= d == batch ? app(buf, n, k, "%sB", sep)
                             : app(buf, n, k, "%sB*%lld", sep, (long long)(d / batch));
        else
            rc |= app(buf, n, k, "%s%lld", sep, (long long)d);
    }
    return rc | app(buf, n, k, "]");
}

int hg_prof_op_sig(const struct hg_graph *g, int node, int64_t batch, char *buf, size_t n)
{
    const struct hg_node_info *nd = hg_graph_node(g, node);
    size_t k = 0;
    int rc = 0;
    if (n)
        buf[0] = 0;
    for (int i = 0; i < nd->n_in; i++) {
        rc |= i ? app(buf, n, &k, ",") : 0;
        rc |= tensor_sig(g, nd->in[i], batch, buf, n, &k);
    }
    rc |= app(buf, n, &k, ">");
    rc |= nd->out >= 0 ? tensor_sig(g, nd->out, batch, buf, n, &k) : app(buf, n, &k, "-");
    const union hg_attr *a = &nd->attr;
    switch (nd->op) {
    case HG_OP_MATMUL:
        rc |= app(buf, n, &k, ";t=%d%d", a->mm.trans_a != 0, a->mm.trans_b != 0);
        break;
    case HG_OP_CONV2D:
    case HG_OP_CONV2D_BWD_DATA:
    case HG_OP_CONV2D_BWD_FILTER:
        rc |= app(buf, n, &k, ";k=%dx%d,s=%dx%d,p=%dx%d", a->conv.kh, a->conv.kw,
                  a->conv.stride_h, a->conv.stride_w, a->conv.pad_h, a->conv.pad_w);
        break;
    case HG_OP_MAXPOOL2D:
    case HG_OP_MAXPOOL2D_BWD:
        rc |= app(buf, n, &k, ";k=%dx%d,s=%d,p=%d", a->pool.kh, a->pool.kw, a->pool.stride,
                  a->pool.pad);
        break;
    default:
        break;
    }
    return rc ? -1 : 0;
}

/* ---------------------------------------------------------------- the file */

/* A string as a libconfig literal body (quotes and backslashes escaped,
 * control characters dropped). */
static void put_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        if ((unsigned char)*s >= 0x20)
            fputc(*s, f);
    }
    fputc('"', f);
}

static void put_arr(FILE *f, const double *v, int n, int ints)
{
    fputc('[', f);
    for (int i = 0; i < n; i++) {
        if (ints)
            fprintf(f, "%s%lld", i ? ", " : "", (long long)llround(v[i]));
        else
            fprintf(f, "%s%.6e", i ? ", " : "", v[i]);
    }
    fputc(']', f);
}

int hg_prof_save(const struct hg_profile *p, FILE *f)
{
    fprintf(f, "# hgplan profile: measured op and link times (docs/planner.md, "
               "\"Profile file\").\n# ops: seconds per node = a + b * batch; "
               "links: seconds = latency + bytes / bandwidth.\nversion = %d;\n",
            HG_PROF_VERSION);
    if (p->host[0]) {
        fputs("host = ", f);
        put_str(f, p->host);
        fputs(";\n", f);
    }
    if (p->date[0]) {
        fputs("date = ", f);
        put_str(f, p->date);
        fputs(";\n", f);
    }
    if (p->source[0]) {
        fputs("source = ", f);
        put_str(f, p->source);
        fputs(";\n", f);
    }
    fputs("devices = (\n", f);
    for (int i = 0; i < p->ndevs; i++) {
        const struct hg_prof_device *d = &p->devs[i];
        fputs("    { name = ", f);
        put_str(f, d->name);
        fprintf(f, "; kind = \"%s\"; model = ", hg_dev_kind_name(d->kind));
        put_str(f, d->model);
        fprintf(f, "; threads = %d; processes = %d;", d->threads, d->processes);
        if (d->share > 0 && d->share < 1)
            fprintf(f, " time_share = %.6g;", d->share);
        fprintf(f, " }%s\n", i + 1 < p->ndevs ? "," : "");
    }
    fputs(");\nops = (\n", f);
    for (int i = 0; i < p->nops; i++) {
        const struct hg_prof_op *o = &p->ops[i];
        fputs("    { device = ", f);
        put_str(f, p->devs[o->dev].name);
        fprintf(f, "; op = \"%s\"; sig = ", hg_op_table[o->op].name);
        put_str(f, o->sig);
        fprintf(f, "; nodes = %d;\n      a = %.6e; b = %.6e; rmax = %.4f;", o->nodes, o->fit.a,
                o->fit.b, o->fit.rmax);
        if (o->npts > 0) {
            fputs("\n      batch = ", f);
            put_arr(f, o->x, o->npts, 1);
            fputs("; time = ", f);
            put_arr(f, o->t, o->npts, 0);
            fputc(';', f);
        }
        fprintf(f, " }%s\n", i + 1 < p->nops ? "," : "");
    }
    fputs(");\nlinks = (\n", f);
    for (int i = 0; i < p->nlinks; i++) {
        const struct hg_prof_link *l = &p->links[i];
        fprintf(f, "    { kind = \"%s\"; op = \"%s\"; world = %d;\n      latency = %.6e; "
                "bandwidth = %.6e; rmax = %.4f;", hg_link_kind_name(l->kind),
                hg_prof_coll_name(l->coll), l->world, l->fit.a,
                l->fit.b > 0 ? 1 / l->fit.b : 0.0, l->fit.rmax);
        if (l->cpu > 0)
            fprintf(f, " cpu = %.6e;", l->cpu);
        if (l->npts > 0) {
            fputs("\n      bytes = ", f);
            put_arr(f, l->x, l->npts, 1);
            fputs("; time = ", f);
            put_arr(f, l->t, l->npts, 0);
            fputc(';', f);
        }
        fprintf(f, " }%s\n", i + 1 < p->nlinks ? "," : "");
    }
    fputs(");\n", f);
    return ferror(f) ? -1 : 0;
}

static const char *const top_keys[] = {"version", "host", "date", "source", "devices", "ops",
                                       "links", NULL};
static const char *const dev_keys[] = {"name", "kind", "model", "threads", "processes",
                                       "time_share", NULL};
static const char *const op_keys[] = {"device", "op", "sig", "nodes", "a", "b", "rmax",
                                      "batch", "time", NULL};
static const char *const link_keys[] = {"kind", "op", "world", "latency", "bandwidth", "rmax",
                                        "bytes", "time", "cpu", NULL};

/* A string member: 1 if absent, 0, -1 with the error. */
static int str_key(struct hg_cfgctx *c, const config_setting_t *g, const char *key,
                   const char *what, int required, char *dst, size_t n)
{
    int rc = hg__cfg_str(c, g, key, what, !required, dst, n);
    if (rc == 1 && required)
        return hg__cfg_err(c, g, "%s: no '%s' (a string, required)", what, key);
    return rc;
}

static int num_of(const config_setting_t *s, double *v)
{
    switch (config_setting_type(s)) {
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64:
        *v = (double)config_setting_get_int64(s);
        return 0;
    case CONFIG_TYPE_FLOAT:
        *v = config_setting_get_float(s);
        return isfinite(*v) ? 0 : -1;
    default:
        return -1;
    }
}

/* A number member >= lo: 1 if absent (and not required), 0, -1. */
static int num_key(struct hg_cfgctx *c, const config_setting_t *g, const char *key,
                   const char *what, int required, double lo, double *v)
{
    const config_setting_t *s = config_setting_get_member(g, key);
    if (!s)
        return required ? hg__cfg_err(c, g, "%s: no '%s' (a number, required)", what, key) : 1;
    if (num_of(s, v) != 0)
        return hg__cfg_err(c, s, "%s: key '%s': expected a finite number", what, key);
    if (!(*v >= lo))
        return hg__cfg_err(c, s, "%s: key '%s' must be >= %g (got %g)", what, key, lo, *v);
    return 0;
}

/* The optional point arrays xkey/time: both or neither, equal lengths. */
static int points(struct hg_cfgctx *c, const config_setting_t *g, const char *xkey,
                  const char *what, int *npts, double *x, double *t)
{
    const config_setting_t *xs = config_setting_get_member(g, xkey);
    const config_setting_t *ts = config_setting_get_member(g, "time");
    *npts = 0;
    if (!xs && !ts)
        return 0;
    if (!xs || !ts)
        return hg__cfg_err(c, xs ? xs : ts, "%s: '%s' and 'time' go together", what, xkey);
    const config_setting_t *arr[2] = {xs, ts};
    const char *names[2] = {xkey, "time"};
    double *dst[2] = {x, t};
    int n = -1;
    for (int k = 0; k < 2; k++) {
        const config_setting_t *s = arr[k];
        int ty = config_setting_type(s);
        if (ty != CONFIG_TYPE_ARRAY && ty != CONFIG_TYPE_LIST)
            return hg__cfg_err(c, s, "%s: key '%s': expected an array [ ... ]", what, names[k]);
        int len = config_setting_length(s);
        if (len < 1 || len > HG_PROF_MAXPTS)
            return hg__cfg_err(c, s, "%s: key '%s': %d values (1 to %d)", what, names[k], len,
                               HG_PROF_MAXPTS);
        if (n >= 0 && len != n)
            return hg__cfg_err(c, s, "%s: '%s' has %d values, '%s' %d", what, names[k], len,
                               names[0], n);
        n = len;
        for (int i = 0; i < len; i++) {
            double v;
            if (num_of(config_setting_get_elem(s, (unsigned)i), &v) != 0 || v < 0 ||
                (k == 1 && !(v > 0)))
                return hg__cfg_err(c, s, "%s: key '%s': value %d is not a finite number %s",
                                   what, names[k], i, k ? "> 0" : ">= 0");
            dst[k][i] = v;
        }
    }
    *npts = n;
    return 0;
}

static const config_setting_t *list_key(struct hg_cfgctx *c, const config_setting_t *g,
                                        const char *key, int required, int *n)
{
    const config_setting_t *s = config_setting_get_member(g, key);
    *n = 0;
    if (!s) {
        if (required)
            hg__cfg_err(c, g, "profile: no '%s' list", key);
        return NULL;
    }
    if (config_setting_type(s) != CONFIG_TYPE_LIST) {
        hg__cfg_err(c, s, "profile: key '%s': expected a list of groups ( {...}, {...} )", key);
        return NULL;
    }
    *n = config_setting_length(s);
    for (int i = 0; i < *n; i++)
        if (config_setting_type(config_setting_get_elem(s, (unsigned)i)) != CONFIG_TYPE_GROUP) {
            hg__cfg_err(c, config_setting_get_elem(s, (unsigned)i),
                        "profile: '%s' element %d is not a group { ... }", key, i);
            return NULL;
        }
    return s;
}

static int parse_devices(struct hg_cfgctx *c, struct hg_profile *p, const config_setting_t *root)
{
    int n, nl = 0;
    const config_setting_t *l = list_key(c, root, "devices", 1, &n);
    if (!l)
        return -1;
    /* a profile of links only (hgplan --profile-links tcp) has no devices */
    const config_setting_t *links = config_setting_get_member(root, "links");
    if (links && config_setting_type(links) == CONFIG_TYPE_LIST)
        nl = config_setting_length(links);
    if (n == 0 && nl == 0)
        return hg__cfg_err(c, l, "profile: 'devices' is empty (and there are no 'links')");
    for (int i = 0; i < n; i++) {
        const config_setting_t *g = config_setting_get_elem(l, (unsigned)i);
        char what[64], name[64], kind[16], model[128] = "";
        snprintf(what, sizeof(what), "device %d", i);
        double threads = 1, procs = 1, share = 1;
        if (hg__cfg_check_keys(c, g, what, dev_keys) != 0 ||
            str_key(c, g, "name", what, 1, name, sizeof(name)) < 0 ||
            str_key(c, g, "kind", what, 1, kind, sizeof(kind)) < 0 ||
            str_key(c, g, "model", what, 0, model, sizeof(model)) < 0 ||
            num_key(c, g, "threads", what, 0, 1, &threads) < 0 ||
            num_key(c, g, "processes", what, 0, 1, &procs) < 0 ||
            num_key(c, g, "time_share", what, 0, 0, &share) < 0)
            return -1;
        if (!(share > 0 && share <= 1))
            return hg__cfg_err(c, config_setting_get_member(g, "time_share"),
                               "%s: key 'time_share' must be in (0, 1] (got %g)", what, share);
        if (strcmp(kind, "cpu") != 0 && strcmp(kind, "gpu") != 0)
            return hg__cfg_err(c, config_setting_get_member(g, "kind"),
                               "%s: kind '%s': expected cpu or gpu", what, kind);
        if (hg_prof_find_device(p, name) >= 0)
            return hg__cfg_err(c, config_setting_get_member(g, "name"),
                               "%s: name '%s' is used twice", what, name);
        int d = hg_prof_device(p, name, strcmp(kind, "gpu") == 0 ? HG_DEV_GPU : HG_DEV_CPU,
                               model, (int)threads, (int)procs);
        p->devs[d].share = share;
    }
    return 0;
}

static int parse_ops(struct hg_cfgctx *c, struct hg_profile *p, const config_setting_t *root)
{
    int n;
    const config_setting_t *l = list_key(c, root, "ops", 0, &n);
    if (!l)
        return config_setting_get_member(root, "ops") ? -1 : 0;
    for (int i = 0; i < n; i++) {
        const config_setting_t *g = config_setting_get_elem(l, (unsigned)i);
        char what[64], dev[64], opname[64], sig[256];
        snprintf(what, sizeof(what), "op %d", i);
        double a, b, nodes = 1, rmax = 0;
        struct hg_prof_op e;
        memset(&e, 0, sizeof(e));
        if (hg__cfg_check_keys(c, g, what, op_keys) != 0 ||
            str_key(c, g, "device", what, 1, dev, sizeof(dev)) < 0 ||
            str_key(c, g, "op", what, 1, opname, sizeof(opname)) < 0 ||
            str_key(c, g, "sig", what, 1, sig, sizeof(sig)) < 0 ||
            num_key(c, g, "nodes", what, 0, 0, &nodes) < 0 ||
            num_key(c, g, "a", what, 1, 0, &a) < 0 || num_key(c, g, "b", what, 1, 0, &b) < 0 ||
            num_key(c, g, "rmax", what, 0, 0, &rmax) < 0 ||
            points(c, g, "batch", what, &e.npts, e.x, e.t) != 0)
            return -1;
        e.dev = hg_prof_find_device(p, dev);
        if (e.dev < 0)
            return hg__cfg_err(c, config_setting_get_member(g, "device"),
                               "%s: device '%s' is not in 'devices'", what, dev);
        int k = 0;
        while (k < HG_OP_COUNT && strcmp(hg_op_table[k].name, opname) != 0)
            k++;
        if (k == HG_OP_COUNT)
            return hg__cfg_err(c, config_setting_get_member(g, "op"),
                               "%s: op '%s' is not an op of this build", what, opname);
        int existed;
        struct hg_prof_op *o = put_op(p, e.dev, (enum hg_op)k, sig, &existed);
        if (existed)
            return hg__cfg_err(c, g, "%s: (%s, %s, \"%s\") is given twice", what, dev, opname,
                               sig);
        o->nodes = (int)nodes;
        o->npts = e.npts;
        memcpy(o->x, e.x, sizeof(e.x));
        memcpy(o->t, e.t, sizeof(e.t));
        o->fit = (struct hg_prof_fit){a, b, rmax};
    }
    return 0;
}

static int parse_links(struct hg_cfgctx *c, struct hg_profile *p, const config_setting_t *root)
{
    int n;
    const config_setting_t *l = list_key(c, root, "links", 0, &n);
    if (!l)
        return config_setting_get_member(root, "links") ? -1 : 0;
    for (int i = 0; i < n; i++) {
        const config_setting_t *g = config_setting_get_elem(l, (unsigned)i);
        char what[64], kind[16], coll[16];
        snprintf(what, sizeof(what), "link %d", i);
        double world, lat, bw, rmax = 0, cpu = 0;
        struct hg_prof_link e;
        memset(&e, 0, sizeof(e));
        if (hg__cfg_check_keys(c, g, what, link_keys) != 0 ||
            str_key(c, g, "kind", what, 1, kind, sizeof(kind)) < 0 ||
            str_key(c, g, "op", what, 1, coll, sizeof(coll)) < 0 ||
            num_key(c, g, "world", what, 1, 2, &world) < 0 ||
            num_key(c, g, "latency", what, 1, 0, &lat) < 0 ||
            num_key(c, g, "bandwidth", what, 1, 0, &bw) < 0 ||
            num_key(c, g, "rmax", what, 0, 0, &rmax) < 0 ||
            num_key(c, g, "cpu", what, 0, 0, &cpu) < 0 ||
            points(c, g, "bytes", what, &e.npts, e.x, e.t) != 0)
            return -1;
        int k = 0;
        while (k < HG_LINK_KIND_COUNT && strcmp(hg_link_kind_name((enum hg_link_kind)k), kind))
            k++;
        if (k == HG_LINK_KIND_COUNT)
            return hg__cfg_err(c, config_setting_get_member(g, "kind"),
                               "%s: kind '%s': expected nvlink, pcie, shm, net or tcp", what,
                               kind);
        int m = 0;
        while (m < HG_PROF_COLL_COUNT && strcmp(coll_names[m], coll) != 0)
            m++;
        if (m == HG_PROF_COLL_COUNT)
            return hg__cfg_err(c, config_setting_get_member(g, "op"),
                               "%s: op '%s': expected sendrecv, allreduce or ps", what, coll);
        if (world != floor(world) || (m == HG_PROF_SENDRECV && world != 2))
            return hg__cfg_err(c, config_setting_get_member(g, "world"),
                               "%s: world %g: a whole number (2 for sendrecv)", what, world);
        if (find_link(p, (enum hg_link_kind)k, (enum hg_prof_coll)m, (int)world))
            return hg__cfg_err(c, g, "%s: (%s, %s, world %d) is given twice", what, kind, coll,
                               (int)world);
        struct hg_prof_link *o = put_link(p, (enum hg_link_kind)k, (enum hg_prof_coll)m,
                                          (int)world);
        o->npts = e.npts;
        memcpy(o->x, e.x, sizeof(e.x));
        memcpy(o->t, e.t, sizeof(e.t));
        o->fit = (struct hg_prof_fit){lat, bw > 0 ? 1 / bw : 0, rmax};
        o->cpu = cpu;
    }
    return 0;
}

static int parse_root(struct hg_cfgctx *c, struct hg_profile *p, const config_setting_t *root)
{
    if (hg__cfg_check_keys(c, root, "profile", top_keys) != 0)
        return -1;
    const config_setting_t *v = config_setting_get_member(root, "version");
    if (!v)
        return hg__cfg_err(c, root, "profile: no 'version' (this build reads version %d)",
                           HG_PROF_VERSION);
    if (config_setting_type(v) != CONFIG_TYPE_INT || config_setting_get_int(v) != HG_PROF_VERSION)
        return hg__cfg_err(c, v, "profile: key 'version': this build reads version %d",
                           HG_PROF_VERSION);
    if (str_key(c, root, "host", "profile", 0, p->host, sizeof(p->host)) < 0 ||
        str_key(c, root, "date", "profile", 0, p->date, sizeof(p->date)) < 0 ||
        str_key(c, root, "source", "profile", 0, p->source, sizeof(p->source)) < 0)
        return -1;
    return parse_devices(c, p, root) || parse_ops(c, p, root) || parse_links(c, p, root) ? -1 : 0;
}

static int finish(struct hg_profile **out, config_t *cfg, int read_ok, const char *name,
                  char *err, size_t errlen)
{
    *out = NULL;
    struct hg_cfgctx c = {.file = name, .err = err, .errlen = errlen};
    if (!read_ok)
        return hg__cfg_read_err(&c, cfg, "profile");
    struct hg_profile *p = hg_prof_new();
    snprintf(p->file, sizeof(p->file), "%s", name);
    int rc = parse_root(&c, p, config_root_setting(cfg));
    config_destroy(cfg);
    if (rc != 0) {
        hg_prof_free(p);
        return -1;
    }
    *out = p;
    return 0;
}

static int load_one(struct hg_profile **p, const char *path, char *err, size_t errlen)
{
    config_t cfg;
    config_init(&cfg);
    int ok = hg_config_read_file(&cfg, path);
    return finish(p, &cfg, ok, path, err, errlen);
}

/* q's entries into p, replacing p's of the same key. */
static void merge(struct hg_profile *p, const struct hg_profile *q)
{
    int map[256];
    HG_CHECK(q->ndevs <= 256);
    for (int i = 0; i < q->ndevs; i++) {
        const struct hg_prof_device *d = &q->devs[i];
        map[i] = hg_prof_device(p, d->name, d->kind, d->model, d->threads, d->processes);
        p->devs[map[i]].share = d->share;
    }
    for (int i = 0; i < q->nops; i++) {
        const struct hg_prof_op *e = &q->ops[i];
        int existed;
        struct hg_prof_op *o = put_op(p, map[e->dev], e->op, e->sig, &existed);
        *o = *e;
        o->dev = map[e->dev];
    }
    for (int i = 0; i < q->nlinks; i++) {
        const struct hg_prof_link *l = &q->links[i];
        *put_link(p, l->kind, l->coll, l->world) = *l;
    }
}

int hg_prof_load(struct hg_profile **p, const char *path, char *err, size_t errlen)
{
    if (!strchr(path, ','))
        return load_one(p, path, err, errlen);
    /* FILE,FILE,...: merged in order, a later file's entries replacing an
     * earlier one's (an ops profile and a links profile measured apart) */
    *p = NULL;
    char one[4096];
    struct hg_profile *all = NULL;
    for (const char *s = path; *s;) {
        size_t n = strcspn(s, ",");
        if (n == 0 || n >= sizeof(one)) {
            hg_prof_free(all);
            return hg_kerr(err, errlen, "profile list '%s': an empty or overlong name", path);
        }
        memcpy(one, s, n);
        one[n] = 0;
        struct hg_profile *q = NULL;
        if (load_one(&q, one, err, errlen) != 0) {
            hg_prof_free(all);
            return -1;
        }
        if (!all) {
            all = q;
        } else {
            merge(all, q);
            hg_prof_free(q);
        }
        s += n + (s[n] == ',');
    }
    if (!all)
        return hg_kerr(err, errlen, "profile list '%s': no file", path);
    snprintf(all->file, sizeof(all->file), "%s", path);
    *p = all;
    return 0;
}

int hg_prof_parse(struct hg_profile **p, const char *text, const char *name, char *err,
                  size_t errlen)
{
    config_t cfg;
    config_init(&cfg);
    int ok = config_read_string(&cfg, text);
    return finish(p, &cfg, ok, name, err, errlen);
}

/* ---------------------------------------------------------------- measuring */

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double hg_prof_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_dbl);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Inputs at their planned (largest) size: f32 uniform in [-1, 1); integer
 * inputs 1, a valid id, class, segment and "keep" mark in every built-in
 * task (ops' times do not depend on the values otherwise). */
static void fill_inputs(struct hg_graph *g, struct hg_exec *ex)
{
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (int t = 0; t < hg_graph_n_tensors(g); t++) {
        const struct hg_tensor_info *ti = hg_graph_tensor(g, t);
        if (ti->kind != HG_T_INPUT)
            continue;
        int64_t n = hg_shape_numel(&ti->shape);
        void *d = hg_exec_data(ex, t);
        for (int64_t i = 0; i < n; i++) {
            switch (ti->dtype) {
            case HG_F32:
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                ((float *)d)[i] = (float)((s >> 40) * (1.0 / 8388608.0)) - 1.f;
                break;
            case HG_I32: ((int32_t *)d)[i] = 1; break;
            case HG_I64: ((int64_t *)d)[i] = 1; break;
            case HG_U8: ((uint8_t *)d)[i] = 1; break;
            case HG_I8: ((int8_t *)d)[i] = 1; break;
            default: memset((char *)d + i * (int64_t)hg_dtype_size(ti->dtype), 0,
                            hg_dtype_size(ti->dtype));
            }
        }
    }
}

/* One (op, sig) group of nodes: which nodes, per batch the mean of their
 * medians. */
struct sgroup {
    enum hg_op op;
    char sig[256];
    int nodes;
    double t[HG_PROF_MAXPTS];
};

/* The timed runs of ex's n nodes: o->warmup + o->reps rounds over the
 * batches (symbol kb of sym), each node's times (times slow) into
 * raw[nb][R][n]; then o->hold's runs.  0 or -1. */
static int measure_runs(struct hg_exec *ex, const struct hg_prof_opts *o, int kb,
                        int64_t *sym, int n, double slow, double *raw, char *err,
                        size_t errlen)
{
    int rc = 0, nb = o->nbatches, R = o->reps;
    uint64_t step = 0;
    /* rounds over the batches, each round starting one batch later, so a
     * disturbance of the machine spreads over all of them */
    for (int round = 0; round < o->warmup + R && rc == 0; round++) {
        for (int j = 0; j < nb && rc == 0; j++) {
            int i = (j + round) % nb;
            sym[kb] = o->batches[i];
            struct hg_step st = {.sym = sym, .step = ++step, .lr = 1e-6f,
                                 .grad_scale = 1.f / (float)o->batches[i]};
            hg_exec_profile(ex, 1); /* zeroes the times */
            rc = hg_exec_run(ex, &st, 0, n, err, errlen);
            if (rc == 0 && round >= o->warmup) {
                double *r = raw + ((size_t)i * R + (round - o->warmup)) * n;
                memcpy(r, hg_exec_profile_times(ex), (size_t)n * sizeof(double));
                for (int k = 0; k < n && slow > 1; k++) /* as the slowed rank pays it */
                    r[k] *= slow;
                if (o->totals) {
                    double sum = 0;
                    for (int k = 0; k < n; k++)
                        sum += r[k];
                    o->totals[(size_t)i * R + (round - o->warmup)] = sum;
                }
            }
            if (rc == 0 && o->sync)
                rc = o->sync(o->sync_ctx, err, errlen);
        }
    }
    for (int i = 0; rc == 0 && o->hold && o->hold(o->hold_ctx); i = (i + 1) % nb) {
        sym[kb] = o->batches[i];
        struct hg_step st = {.sym = sym, .step = ++step, .lr = 1e-6f,
                             .grad_scale = 1.f / (float)o->batches[i]};
        rc = hg_exec_run(ex, &st, 0, n, err, errlen);
    }
    return rc;
}

/* The fits against the medians (med[nb][n] of the nodes order[n]) per
 * batch x[nb], and the ng entries, into o->log. */
static void log_fits(const struct hg_prof_opts *o, const struct hg_profile *p, int dev,
                     const struct hg_graph *g, const int *order, int n, const double *med,
                     char *const *sig, const double *x, int ng, int unstable)
{
    FILE *f = o->log;
    for (int i = 0; i < o->nbatches; i++) {
        double sm = 0, sf = 0;
        for (int k = 0; k < n; k++) {
            sm += med[(size_t)i * n + k];
            const struct hg_prof_op *e =
                sig[k] ? hg_prof_find_op(p, dev, hg_graph_node(g, order[k])->op, sig[k])
                       : NULL;
            sf += e ? e->fit.a + e->fit.b * x[i] : med[(size_t)i * n + k];
        }
        fprintf(f, "  %s batch %4lld: %d ops, sum of medians %9.3f ms, of fits %9.3f "
                "ms (%+.1f%%)\n", p->devs[dev].name, (long long)o->batches[i], n, sm * 1e3,
                sf * 1e3, (sf - sm) / sm * 100);
    }
    fprintf(f, "  %s: %d (op, signature) entries%s", p->devs[dev].name, ng,
            unstable ? "" : "\n");
    if (unstable)
        fprintf(f, "; %d nodes left out (signature changes with the batch)\n", unstable);
}

int hg_prof_measure_graph(struct hg_profile *p, int dev, struct hg_graph *g,
                          const struct hg_prof_opts *o, char *err, size_t errlen)
{
    HG_CHECK(dev >= 0 && dev < p->ndevs && o->reps >= 1 && o->warmup >= 0);
    int kb = hg_graph_sym_find(g, "batch");
    if (kb < 0)
        return hg_kerr(err, errlen, "the graph has no 'batch' symbol to vary");
    int nb = o->nbatches;
    if (nb < 1 || nb > HG_PROF_MAXPTS)
        return hg_kerr(err, errlen, "%d batch sizes (1 to %d)", nb, HG_PROF_MAXPTS);
    int64_t bmax = hg_graph_sym_max(g, kb);
    for (int i = 0; i < nb; i++)
        if (o->batches[i] < 1 || o->batches[i] > bmax)
            return hg_kerr(err, errlen, "batch %lld: outside [1, %lld] (the graph's maximum)",
                           (long long)o->batches[i], (long long)bmax);
    int N = hg_graph_n_nodes(g);
    int *order = malloc(((size_t)N + 1) * sizeof(int));
    HG_CHECK(order != NULL);
    int n = hg_graph_order(g, HG_PH_ALL, order);
    struct hg_exec *ex = hg_exec_new_dev(g, order, n, o->on_gpu ? o->gpu : -1, err, errlen);
    if (!ex) {
        free(order);
        return -1;
    }
    hg_graph_init_params(g, ex, 1);
    fill_inputs(g, ex);
    if (!o->on_gpu)
        hg_kernels_set_threads(p->devs[dev].threads);
    double slow = !o->on_gpu && o->slowdown > 1 ? o->slowdown : 1;
    if (slow > 1)
        hg_exec_set_slowdown(ex, slow);

    int R = o->reps;
    double *raw = malloc((size_t)nb * R * n * sizeof(double)); /* [nb][R][n] */
    double *med = malloc((size_t)nb * n * sizeof(double));     /* [nb][n] */
    double *col = malloc((size_t)R * sizeof(double));
    char **sig = calloc((size_t)n, sizeof(char *));
    HG_CHECK(raw && med && col && sig);
    int64_t sym[HG_MAX_SYMS];
    for (int k = 0; k < hg_graph_n_syms(g); k++)
        sym[k] = hg_graph_sym_max(g, k);
    int rc = measure_runs(ex, o, kb, sym, n, slow, raw, err, errlen);
    /* per node and batch: the median of the runs (>= 1 ns: the fit wants t > 0) */
    for (int i = 0; i < nb && rc == 0; i++)
        for (int k = 0; k < n; k++) {
            for (int r = 0; r < R; r++)
                col[r] = raw[((size_t)i * R + r) * n + k];
            double m = hg_prof_median(col, R);
            med[(size_t)i * n + k] = m > 1e-9 ? m : 1e-9;
        }
    /* signatures at every batch: a node whose signature changes with the
     * batch (a dim that scales but is not the batch axis) is left out */
    int unstable = 0;
    char buf[256];
    for (int i = 0; i < nb && rc == 0; i++) {
        sym[kb] = o->batches[i];
        struct hg_step st = {.sym = sym};
        rc = hg_exec_prepare(ex, &st, err, errlen);
        for (int k = 0; k < n && rc == 0; k++) {
            int node = order[k];
            if (hg_prof_op_sig(g, node, o->batches[i], buf, sizeof(buf)) != 0)
                snprintf(buf, sizeof(buf), "?");
            if (i == 0) {
                sig[k] = strdup(buf);
                HG_CHECK(sig[k] != NULL);
            } else if (sig[k] && strcmp(sig[k], buf) != 0) {
                free(sig[k]);
                sig[k] = NULL;
                unstable++;
            }
        }
    }
    /* nodes of one (op, sig) are one entry: the mean of their medians */
    struct sgroup *grp = calloc((size_t)n + 1, sizeof(*grp));
    int ng = 0;
    HG_CHECK(grp != NULL);
    for (int k = 0; k < n && rc == 0; k++) {
        if (!sig[k] || strcmp(sig[k], "?") == 0)
            continue;
        enum hg_op op = hg_graph_node(g, order[k])->op;
        int j = 0;
        while (j < ng && !(grp[j].op == op && strcmp(grp[j].sig, sig[k]) == 0))
            j++;
        if (j == ng) {
            grp[ng].op = op;
            snprintf(grp[ng].sig, sizeof(grp[ng].sig), "%s", sig[k]);
            ng++;
        }
        grp[j].nodes++;
        for (int i = 0; i < nb; i++)
            grp[j].t[i] += med[(size_t)i * n + k];
    }
    double x[HG_PROF_MAXPTS];
    for (int i = 0; i < nb; i++)
        x[i] = (double)o->batches[i];
    for (int j = 0; j < ng && rc == 0; j++) {
        for (int i = 0; i < nb; i++)
            grp[j].t[i] /= grp[j].nodes;
        rc = hg_prof_set_op(p, dev, grp[j].op, grp[j].sig, grp[j].nodes, nb, x, grp[j].t, err,
                            errlen);
    }
    if (rc == 0 && o->log)
        log_fits(o, p, dev, g, order, n, med, sig, x, ng, unstable);
    for (int k = 0; k < n; k++)
        free(sig[k]);
    free(sig);
    free(grp);
    free(col);
    free(med);
    free(raw);
    free(order);
    hg_exec_free(ex);
    return rc;
}

/* ---------------------------------------------------------------- binding */

int hg_cluster_set_profile(struct hg_cluster *c, const struct hg_profile *p, char *err,
                           size_t errlen)
{
    for (int d = 0; d < c->ndev; d++) {
        struct hg_pdevice *dv = &c->devices[d];
        dv->prof_dev = -1;
        if (!p || !dv->profile[0])
            continue;
        dv->prof_dev = hg_prof_find_device(p, dv->profile);
        if (dv->prof_dev < 0) {
            char names[512] = "";
            size_t k = 0;
            for (int i = 0; i < p->ndevs && k < sizeof(names); i++)
                k += (size_t)snprintf(names + k, sizeof(names) - k, "%s%s", i ? ", " : "",
                                      p->devs[i].name);
            for (int e = 0; e < d; e++)
                c->devices[e].prof_dev = -1;
            for (int l = 0; l < c->nlinks; l++)
                c->links[l].mbw = 0;
            c->net_mbw = c->net_cpu = 0;
            return hg_kerr(err, errlen, "%s: device %s: profile '%s' is not a device of %s "
                           "(it has: %s)", c->file[0] ? c->file : c->name, dv->name,
                           dv->profile, p->file[0] ? p->file : "the profile", names);
        }
    }
    /* the network between nodes: the tcp backend's point-to-point fit */
    const struct hg_prof_link *t = hg_prof_find_link(p, HG_LINK_TCP, HG_PROF_SENDRECV, 2);
    c->net_mbw = t && t->fit.b > 0 ? 1 / t->fit.b : 0;
    c->net_mlat = t && t->fit.b > 0 ? t->fit.a : 0;
    c->net_cpu = t && t->cpu > 0 ? t->cpu : 0;
    /* measured links: one fit per link kind, put on every link between two
     * profiled devices (so the cluster's path queries need no profile) */
    double mbw[HG_LINK_KIND_COUNT] = {0}, mlat[HG_LINK_KIND_COUNT] = {0};
    for (int k = 0; p && k < HG_LINK_KIND_COUNT; k++) {
        const struct hg_prof_link *m = hg_prof_find_link(p, (enum hg_link_kind)k,
                                                         HG_PROF_SENDRECV, 2);
        if (m && m->fit.b > 0) {
            mbw[k] = 1 / m->fit.b;
            mlat[k] = m->fit.a;
        }
    }
    for (int l = 0; l < c->nlinks; l++) {
        struct hg_plink *k = &c->links[l];
        int both = c->devices[k->a].prof_dev >= 0 && c->devices[k->b].prof_dev >= 0;
        k->mbw = both ? mbw[k->kind] : 0;
        k->mlat = both ? mlat[k->kind] : 0;
    }
    c->prof = p;
    return 0;
}
