/* registry.c - the built-in tasks (one file per task, one row here) and
 * external task plug-ins loaded with dlopen. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hg_base.h"
#include "tasks/hg_task.h"
#include "tasks/task-impl.h"

extern const struct hg_task hg_task_mnist;
extern const struct hg_task hg_task_bert;
extern const struct hg_task hg_task_translation;

const struct hg_task *const hg_task_registry[] = {
    &hg_task_mnist,
    &hg_task_bert,
    &hg_task_translation,
    NULL,
};

const struct hg_task *hg_task_find(const char *name)
{
    if (!name)
        return NULL;
    for (int i = 0; hg_task_registry[i]; i++)
        if (strcmp(hg_task_registry[i]->name, name) == 0)
            return hg_task_registry[i];
    return NULL;
}

const char *hg_task_archs(const struct hg_task *t)
{
    if (t == &hg_task_translation)
        return hg_tr_archs();
    for (int i = 0; hg_task_registry[i]; i++)
        if (hg_task_registry[i] == t)
            return "";
    return NULL;
}

typedef const struct hg_task *(*hg_task_plugin_fn)(void);

/* What the controller cannot do without; the rest is optional. */
static const char *plugin_lacks(const struct hg_task *t)
{
    if (!t->name || !t->name[0])
        return "a name";
    if (!t->build)
        return "build()";
    if (!t->fill)
        return "fill()";
    if (t->nfields < 0 || t->nfields > 8 || (t->nfields > 0 && !t->fields))
        return "a valid field list (0..8 fields)";
    return NULL;
}

const struct hg_task *hg_task_load_plugin(const char *path, char *err,
                                          size_t errlen)
{
    /* A name without a slash would be searched in the library path: a
     * plug-in is a file the user names, so make it explicit. */
    char buf[4096];
    const char *file = path;
    if (!strchr(path, '/')) {
        snprintf(buf, sizeof(buf), "./%s", path);
        file = buf;
    }
    dlerror();
    void *h = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(err, errlen, "%s: cannot load task plug-in: %s", path,
                 e ? e : "unknown dlopen error");
        return NULL;
    }
    dlerror();
    void *sym = dlsym(h, "hg_task_plugin");
    const char *e = dlerror();
    if (e || !sym) {
        snprintf(err, errlen, "%s: not a task plug-in (no hg_task_plugin): %s",
                 path, e ? e : "symbol is NULL");
        dlclose(h);
        return NULL;
    }
    /* POSIX guarantees dlsym's object pointer converts to a function one. */
    hg_task_plugin_fn fn = (hg_task_plugin_fn)sym;
    const struct hg_task *t = fn();
    if (!t) {
        snprintf(err, errlen, "%s: hg_task_plugin() returned NULL", path);
        dlclose(h);
        return NULL;
    }
    /* abi_version is the first member in every ABI version: safe to read
     * before trusting the rest of the layout. */
    if (t->abi_version != HG_TASK_ABI_VERSION) {
        snprintf(err, errlen, "%s: task ABI version %d, this hgtrain has %d",
                 path, t->abi_version, HG_TASK_ABI_VERSION);
        dlclose(h);
        return NULL;
    }
    const char *lack = plugin_lacks(t);
    if (lack) {
        snprintf(err, errlen, "%s: task plug-in lacks %s", path, lack);
        dlclose(h);
        return NULL;
    }
    return t; /* the handle stays open: t lives in the plug-in */
}

struct hg_opt *hg_task_opt_rows(const struct hg_task_option *opts, int group, int *n)
{
    int k = 0;
    while (opts && opts[k].name)
        k++;
    *n = 0;
    if (!k)
        return NULL;
    struct hg_opt *rows = calloc((size_t)k, sizeof(*rows));
    if (!rows) {
        *n = -1;
        return NULL;
    }
    for (int i = 0; i < k; i++)
        rows[i] = (struct hg_opt){
            .name = opts[i].name,
            /* fairseq's short names of the language options */
            .short_name = strcmp(opts[i].name, "source-lang") == 0   ? 's'
                          : strcmp(opts[i].name, "target-lang") == 0 ? 't'
                                                                     : 0,
            .type = HG_OPT_STR,
            .group = group,
            .offset = (size_t)i * sizeof(char *),
            .def = opts[i].def,
            .flags = opts[i].flag ? HG_OPTF_SWITCH : 0,
            .metavar = opts[i].flag ? NULL : "VALUE",
            .help = opts[i].help,
        };
    *n = k;
    return rows;
}
