/* test_options.c - hgtrain's option parser (trainer/options.c): defaults,
 * every option type, aliases, --name=value, flags, -c files (values,
 * command-line override, unknown keys, wrong types and syntax errors with
 * their lines), bad numbers, both --adam-betas syntaxes, task options,
 * hg_opts_peek_task, validation, the to_string round trip and --help
 * (every row of the table). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trainer/options.h"
#include "tests/hg_test.h"


static char tmpdir[256];

/* ------------------------------------------------------------ helpers */

/* A shell-like split: spaces separate, '...' quotes (with '\'' inside). */
struct args {
    int argc;
    char *argv[128];
};

static void split(const char *s, struct args *a)
{
    a->argc = 0;
    a->argv[a->argc++] = strdup("hgtrain");
    while (*s) {
        while (*s == ' ')
            s++;
        if (!*s)
            break;
        char *w = malloc(strlen(s) + 1);
        size_t n = 0;
        while (*s && *s != ' ') {
            if (*s == '\'') {
                s++;
                while (*s && *s != '\'')
                    w[n++] = *s++;
                if (*s)
                    s++;
            } else if (*s == '\\' && s[1]) {
                w[n++] = s[1];
                s += 2;
            } else {
                w[n++] = *s++;
            }
        }
        w[n] = 0;
        if (a->argc < 127)
            a->argv[a->argc++] = w;
        else
            free(w);
    }
    a->argv[a->argc] = NULL;
}

static void args_free(struct args *a)
{
    for (int i = 0; i < a->argc; i++)
        free(a->argv[i]);
    a->argc = 0;
}

static int parse_str(struct hg_opts *o, const char *cmd, const struct hg_task_option *t,
                     const char **tv, char *err, size_t errlen)
{
    struct args a;
    split(cmd, &a);
    err[0] = 0;
    int rc = hg_opts_parse(o, a.argc, a.argv, t, tv, err, errlen);
    args_free(&a);
    return rc;
}

/* Parses cmd expecting failure; err must contain each of the words. */
static void expect_error(const char *cmd, const char *w1, const char *w2, int line)
{
    struct hg_opts o;
    char err[512];
    int rc = parse_str(&o, cmd, NULL, NULL, err, sizeof(err));
    if (rc != -1)
        fprintf(stderr, "line %d: '%s' parsed\n", line, cmd);
    EXPECT(rc == -1, "'%s' should fail (test line %d)", cmd, line);
    EXPECT(!w1 || strstr(err, w1), "'%s': error '%s' lacks '%s' (test line %d)", cmd, err,
           w1, line);
    EXPECT(!w2 || strstr(err, w2), "'%s': error '%s' lacks '%s' (test line %d)", cmd, err,
           w2, line);
    hg_opts_free(&o);
}

static const char *write_file(const char *name, const char *text)
{
    static char path[8][512];
    static int k;
    char *p = path[k++ % 8];
    snprintf(p, 512, "%s/%s", tmpdir, name);
    FILE *f = fopen(p, "w");
    if (!f) {
        perror(p);
        exit(99);
    }
    fputs(text, f);
    fclose(f);
    return p;
}

#define FIELD(o, s, T) ((const T *)(const void *)((const char *)(o) + (s)->offset))

/* Compares every table field of a and b; returns the differences. */
static int compare(const struct hg_opts *a, const struct hg_opts *b)
{
    int diff = 0;
    for (int i = 0; i < hg_train_nopts; i++) {
        const struct hg_opt *s = &hg_train_opts[i];
        if (s->flags & HG_OPTF_NOSAVE)
            continue;
        int same = 1;
        switch (s->type) {
        case HG_OPT_I64:
            same = *FIELD(a, s, int64_t) == *FIELD(b, s, int64_t);
            break;
        case HG_OPT_REAL:
            same = *FIELD(a, s, double) == *FIELD(b, s, double);
            break;
        case HG_OPT_BOOL:
            same = *FIELD(a, s, int) == *FIELD(b, s, int);
            break;
        case HG_OPT_STR: {
            const char *x = *FIELD(a, s, char *), *y = *FIELD(b, s, char *);
            same = (!x && !y) || (x && y && strcmp(x, y) == 0);
            break;
        }
        case HG_OPT_LIST: {
            const struct hg_opt_list *x = FIELD(a, s, struct hg_opt_list);
            const struct hg_opt_list *y = FIELD(b, s, struct hg_opt_list);
            same = x->n == y->n;
            for (int k = 0; same && k < x->n; k++)
                same = x->v[k] == y->v[k];
            break;
        }
        default: /* hgtrain's table has no other types */
            fprintf(stderr, "  --%s: type %d not compared\n", s->name, (int)s->type);
            same = 0;
            break;
        }
        if (!same) {
            fprintf(stderr, "  --%s differs\n", s->name);
            diff++;
        }
    }
    return diff;
}

/* ------------------------------------------------------------- tests */

static void test_defaults(void)
{
    struct hg_opts o;
    char err[512];
    int rc = parse_str(&o, "--max-tokens 100", NULL, NULL, err, sizeof(err));
    EXPECT(rc == 0, "%s", err);
    EXPECT(o.max_tokens == 100 && o.max_sentences == 0, "%lld", (long long)o.max_tokens);
    EXPECT(!o.task && !o.data && !o.arch && !o.task_plugin && !o.log_file, "unset strings");
    EXPECT(strcmp(o.optimizer, "sgd") == 0, "%s", o.optimizer);
    EXPECT(o.lr == 0.01, "%g", o.lr);
    EXPECT(strcmp(o.lr_scheduler, "fixed") == 0 && o.lr_kind == HG_LR_FIXED, "sched");
    EXPECT(o.log_interval == 100, "log-interval");
    EXPECT(strcmp(o.save_dir, "checkpoints") == 0, "%s", o.save_dir);
    EXPECT(o.max_epoch == 0 && o.max_update == 0, "unlimited");
    EXPECT(strcmp(o.valid_subset, "valid") == 0, "valid-subset");
    EXPECT(o.validate_interval == 1, "validate-interval");
    EXPECT(strcmp(o.best_checkpoint_metric, "loss") == 0, "metric");
    EXPECT(o.seed == 1, "seed");
    /* the test's stderr is a log file under make check, a TTY by hand */
    EXPECT(strcmp(o.log_format, isatty(2) ? "tqdm" : "simple") == 0, "%s", o.log_format);
    EXPECT(o.update_freq == 1, "update-freq");
    EXPECT(o.required_batch_size_multiple == 8, "multiple");
    EXPECT(o.clip_norm == 0, "clip");
    EXPECT(o.adam_betas.n == 2 && o.adam_betas.v[0] == 0.9 && o.adam_betas.v[1] == 0.999,
           "betas");
    EXPECT(o.adam_eps == 1e-8, "eps");
    EXPECT(o.rank_capacity.n == 0 && !o.rank_capacity.v, "rank-capacity");
    EXPECT(o.keep_last_epochs == -1 && o.keep_interval_updates == -1, "keep");
    EXPECT(o.save_interval == 1 && o.power == 1, "save-interval, power");
    EXPECT(!o.nesterov && !o.no_save && !o.help && !o.list_tasks && !o.reset_optimizer,
           "flags off");
    /* every row's default text is what landed in its field */
    for (int i = 0; i < hg_train_nopts; i++) {
        const struct hg_opt *s = &hg_train_opts[i];
        if (!s->def || s->offset == offsetof(struct hg_opts, max_tokens))
            continue;
        switch (s->type) {
        case HG_OPT_I64:
            EXPECT(*FIELD(&o, s, int64_t) == strtoll(s->def, NULL, 10), "--%s", s->name);
            break;
        case HG_OPT_REAL:
            EXPECT(*FIELD(&o, s, double) == strtod(s->def, NULL), "--%s", s->name);
            break;
        case HG_OPT_STR:
            EXPECT(strcmp(*FIELD(&o, s, char *), s->def) == 0, "--%s", s->name);
            break;
        default:
            break;
        }
    }
    hg_opts_free(&o);
    EXPECT(o.optimizer == NULL && o.adam_betas.v == NULL, "free clears");
    hg_opts_free(&o); /* twice is harmless */
}

static void test_types(void)
{
    struct hg_opts o;
    char err[512];
    int rc = parse_str(&o,
                       "--task mt --data /d --arch lstm --max-sentences 64 "
                       "--max-update 5 --lr 0.5 --momentum 0.9 --nesterov "
                       "--rank-capacity 2,1,1 --optimizer=adamw --seed=7 "
                       "--warmup-init-lr=1e-7 --valid-subset=test --no-save "
                       "--no-epoch-checkpoints --reset-dataloader --reset-lr-scheduler "
                       "--reset-meters --reset-optimizer --maximize-best-checkpoint-metric "
                       "--threads 3 --log-format json --log-file 'my log.txt' "
                       "--clip-norm 0.1 --update-freq 4 --weight-decay 0.01 --adam-eps 1e-6 "
                       "--lr-scheduler inverse_sqrt --warmup-updates 4000 "
                       "--max-epoch 10 --keep-last-epochs 3 --save-interval-updates 1000 "
                       "--keep-interval-updates 2 --validate-interval-updates 500 "
                       "--best-checkpoint-metric accuracy --restore-file x.h5 "
                       "--save-dir /ck --required-batch-size-multiple 1 --min-lr 1e-9",
                       NULL, NULL, err, sizeof(err));
    EXPECT(rc == 0, "%s", err);
    if (rc == 0) {
        EXPECT(strcmp(o.task, "mt") == 0 && strcmp(o.data, "/d") == 0 &&
               strcmp(o.arch, "lstm") == 0, "strings");
        EXPECT(o.max_sentences == 64 && o.max_update == 5 && o.seed == 7 && o.threads == 3,
               "ints");
        EXPECT(o.lr == 0.5 && o.momentum == 0.9 && o.warmup_init_lr == 1e-7 &&
               o.clip_norm == 0.1 && o.adam_eps == 1e-6 && o.min_lr == 1e-9, "reals");
        EXPECT(o.nesterov && o.no_save && o.no_epoch_checkpoints && o.reset_dataloader &&
               o.reset_lr_scheduler && o.reset_meters && o.reset_optimizer &&
               o.maximize_best_checkpoint_metric, "flags");
        EXPECT(o.rank_capacity.n == 3 && o.rank_capacity.v[0] == 2 &&
               o.rank_capacity.v[2] == 1, "list");
        EXPECT(strcmp(o.optimizer, "adamw") == 0 && strcmp(o.valid_subset, "test") == 0,
               "--name=value");
        EXPECT(strcmp(o.log_format, "json") == 0 && strcmp(o.log_file, "my log.txt") == 0,
               "log");
        EXPECT(o.lr_kind == HG_LR_INVERSE_SQRT && o.warmup_updates == 4000, "sched");
        EXPECT(o.keep_last_epochs == 3 && o.update_freq == 4, "more ints");
    }
    hg_opts_free(&o);

    /* the alias, and the later of two spellings wins */
    rc = parse_str(&o, "--batch-size 32", NULL, NULL, err, sizeof(err));
    EXPECT(rc == 0 && o.max_sentences == 32, "%s", err);
    hg_opts_free(&o);
    rc = parse_str(&o, "--max-sentences 8 --batch-size=16", NULL, NULL, err, sizeof(err));
    EXPECT(rc == 0 && o.max_sentences == 16, "%s", err);
    hg_opts_free(&o);
    /* a negative value is a value, not an option */
    rc = parse_str(&o, "--max-tokens 10 --keep-last-epochs -1", NULL, NULL, err,
                   sizeof(err));
    EXPECT(rc == 0 && o.keep_last_epochs == -1, "%s", err);
    hg_opts_free(&o);
    /* --help and --list-tasks need no batch size */
    rc = parse_str(&o, "--help", NULL, NULL, err, sizeof(err));
    EXPECT(rc == 0 && o.help, "%s", err);
    hg_opts_free(&o);
    rc = parse_str(&o, "-h", NULL, NULL, err, sizeof(err));
    EXPECT(rc == 0 && o.help, "%s", err);
    hg_opts_free(&o);
    rc = parse_str(&o, "--list-tasks", NULL, NULL, err, sizeof(err));
    EXPECT(rc == 0 && o.list_tasks, "%s", err);
    hg_opts_free(&o);
}

static void test_betas(void)
{
    const char *forms[] = {"'(0.9, 0.98)'", "0.9,0.98", "'[0.9,0.98]'", "' 0.9 , 0.98 '"};
    for (int i = 0; i < 4; i++) {
        struct hg_opts o;
        char err[512], cmd[128];
        snprintf(cmd, sizeof(cmd), "--max-tokens 1 --adam-betas %s", forms[i]);
        int rc = parse_str(&o, cmd, NULL, NULL, err, sizeof(err));
        EXPECT(rc == 0, "%s: %s", forms[i], err);
        EXPECT(rc != 0 || (o.adam_betas.n == 2 && o.adam_betas.v[0] == 0.9 &&
                           o.adam_betas.v[1] == 0.98), "%s", forms[i]);
        hg_opts_free(&o);
    }
    expect_error("--max-tokens 1 --adam-betas 0.9", "--adam-betas", "2", __LINE__);
    expect_error("--max-tokens 1 --adam-betas 0.9,1.0", "--adam-betas", NULL, __LINE__);
    expect_error("--max-tokens 1 --adam-betas 0.9,x", "--adam-betas", "0.9,x", __LINE__);
    expect_error("--max-tokens 1 --adam-betas '(0.9,)'", "--adam-betas", NULL, __LINE__);
}

static void test_errors(void)
{
    expect_error("--max-tokens 1 --bogus 3", "--bogus", NULL, __LINE__);
    expect_error("--max-tokens 1 --bogus", "--bogus", NULL, __LINE__);
    expect_error("--max-tokens 1 -x", "-x", NULL, __LINE__);
    expect_error("--max_tokens 1", "--max_tokens", NULL, __LINE__);
    expect_error("--max-tokens 1 stray", "stray", NULL, __LINE__);
    expect_error("--max-tokens 1 --lr abc", "--lr", "abc", __LINE__);
    expect_error("--max-tokens 1.5", "--max-tokens", "1.5", __LINE__);
    expect_error("--max-tokens 12k", "--max-tokens", "12k", __LINE__);
    expect_error("--max-tokens 99999999999999999999", "--max-tokens", NULL, __LINE__);
    expect_error("--max-tokens 1 --lr", "--lr", "value", __LINE__);
    expect_error("--max-tokens 1 --no-save=1", "--no-save", "no value", __LINE__);
    expect_error("--max-tokens 1 --rank-capacity 2,a", "--rank-capacity", "2,a", __LINE__);
    /* validation names the option */
    expect_error("--max-tokens 1 --lr 0", "--lr", NULL, __LINE__);
    expect_error("--max-tokens 1 --lr -1", "--lr", NULL, __LINE__);
    expect_error("--max-tokens 1 --update-freq 0", "--update-freq", NULL, __LINE__);
    expect_error("--max-tokens 1 --rank-capacity 2,0,1", "--rank-capacity", NULL, __LINE__);
    expect_error("--max-tokens -5", "--max-tokens", NULL, __LINE__);
    expect_error("--lr 0.1", "--max-tokens", "--max-sentences", __LINE__);
    expect_error("--max-tokens 1 --optimizer rmsprop", "--optimizer", "rmsprop", __LINE__);
    expect_error("--max-tokens 1 --lr-scheduler step", "--lr-scheduler", "step", __LINE__);
    expect_error("--max-tokens 1 --log-format xml", "--log-format", "xml", __LINE__);
    expect_error("--max-tokens 1 --lr-scheduler polynomial_decay", "--total-num-update",
                 NULL, __LINE__);
    expect_error("--max-tokens 1 --nesterov", "--nesterov", "--momentum", __LINE__);
    expect_error("--max-tokens 1 --momentum 1.5", "--momentum", NULL, __LINE__);
    expect_error("--max-tokens 1 --log-interval 0", "--log-interval", NULL, __LINE__);
    expect_error("--max-tokens 1 -c /nonexistent/run.cfg", "/nonexistent/run.cfg", NULL,
                 __LINE__);
}

static void test_config(void)
{
    const char *cfg = write_file("run.cfg",
                                 "# a run\n"
                                 "task = \"mt\";\n"
                                 "max_tokens = 4000;\n"
                                 "lr = 0.5;\n"
                                 "optimizer = \"adam\";\n"
                                 "adam_betas = [0.9, 0.98];\n"
                                 "rank-capacity = \"2,1\";\n"
                                 "momentum = 0.9;\n"
                                 "nesterov = true;\n"
                                 "no_save = false;\n"
                                 "warmup_updates = 4000L;\n"
                                 "clip_norm = 1;\n"
                                 "batch_size = 16;\n"
                                 "save_dir = \"/ck\";\n");
    struct hg_opts o;
    char err[512], cmd[1024];
    snprintf(cmd, sizeof(cmd), "--lr 0.25 -c %s --save-dir=/other", cfg);
    int rc = parse_str(&o, cmd, NULL, NULL, err, sizeof(err));
    EXPECT(rc == 0, "%s", err);
    if (rc == 0) {
        EXPECT(strcmp(o.task, "mt") == 0, "task");
        EXPECT(o.max_tokens == 4000 && o.max_sentences == 16, "ints");
        EXPECT(o.lr == 0.25, "the command line wins: %g", o.lr);
        EXPECT(strcmp(o.save_dir, "/other") == 0, "the command line wins: %s", o.save_dir);
        EXPECT(strcmp(o.optimizer, "adam") == 0, "optimizer");
        EXPECT(o.adam_betas.n == 2 && o.adam_betas.v[1] == 0.98, "betas array");
        EXPECT(o.rank_capacity.n == 2 && o.rank_capacity.v[0] == 2, "list string");
        EXPECT(o.nesterov == 1 && o.no_save == 0 && o.momentum == 0.9, "bools");
        EXPECT(o.warmup_updates == 4000 && o.clip_norm == 1.0, "int64, int as real");
    }
    hg_opts_free(&o);
    /* --config=FILE, -cFILE */
    snprintf(cmd, sizeof(cmd), "--config=%s", cfg);
    rc = parse_str(&o, cmd, NULL, NULL, err, sizeof(err));
    EXPECT(rc == 0 && o.lr == 0.5, "%s", err);
    hg_opts_free(&o);
    snprintf(cmd, sizeof(cmd), "-c%s", cfg);
    rc = parse_str(&o, cmd, NULL, NULL, err, sizeof(err));
    EXPECT(rc == 0 && o.lr == 0.5, "%s", err);
    hg_opts_free(&o);

    /* an unknown key: named, with file:line */
    const char *bad = write_file("unknown.cfg", "max_tokens = 10;\n\nbogus_key = 3;\n");
    char want[600];
    snprintf(cmd, sizeof(cmd), "-c %s", bad);
    snprintf(want, sizeof(want), "%s:3", bad);
    expect_error(cmd, "bogus_key", want, __LINE__);
    /* a wrong type: key and line */
    bad = write_file("type.cfg", "max_tokens = 10;\nlr = \"fast\";\n");
    snprintf(cmd, sizeof(cmd), "-c %s", bad);
    snprintf(want, sizeof(want), "%s:2", bad);
    expect_error(cmd, "'lr'", want, __LINE__);
    bad = write_file("type2.cfg", "max_tokens = 1.5;\n");
    snprintf(cmd, sizeof(cmd), "-c %s", bad);
    snprintf(want, sizeof(want), "%s:1", bad);
    expect_error(cmd, "max_tokens", want, __LINE__);
    bad = write_file("type3.cfg", "max_tokens = 10;\n\n\nnesterov = 1;\n");
    snprintf(cmd, sizeof(cmd), "-c %s", bad);
    snprintf(want, sizeof(want), "%s:4", bad);
    expect_error(cmd, "nesterov", want, __LINE__);
    bad = write_file("type4.cfg", "max_tokens = 10;\nadam_betas = [\"a\", \"b\"];\n");
    snprintf(cmd, sizeof(cmd), "-c %s", bad);
    snprintf(want, sizeof(want), "%s:2", bad);
    expect_error(cmd, "adam_betas", want, __LINE__);
    bad = write_file("group.cfg", "max_tokens = 10;\ndata = { a = 1; };\n");
    snprintf(cmd, sizeof(cmd), "-c %s", bad);
    snprintf(want, sizeof(want), "%s:2", bad);
    expect_error(cmd, "'data'", want, __LINE__);
    bad = write_file("nested.cfg", "config = \"x.cfg\";\n");
    snprintf(cmd, sizeof(cmd), "-c %s", bad);
    expect_error(cmd, "config", NULL, __LINE__);
    /* a syntax error: file:line and libconfig's message */
    bad = write_file("syntax.cfg", "max_tokens = 10;\nlr = ;\n");
    snprintf(cmd, sizeof(cmd), "-c %s", bad);
    snprintf(want, sizeof(want), "%s:2", bad);
    expect_error(cmd, want, "error", __LINE__);
    /* a bad value in a list string */
    bad = write_file("list.cfg", "max_tokens = 10;\nrank_capacity = \"2,x\";\n");
    snprintf(cmd, sizeof(cmd), "-c %s", bad);
    snprintf(want, sizeof(want), "%s:2", bad);
    expect_error(cmd, "2,x", want, __LINE__);
    /* a value out of range names the key and its line, like a bad type */
    bad = write_file("val.cfg", "max_tokens = 10;\nupdate_freq = 0;\n");
    snprintf(cmd, sizeof(cmd), "-c %s", bad);
    snprintf(want, sizeof(want), "%s:2", bad);
    expect_error(cmd, "'update_freq': expected an integer >= 1", want, __LINE__);
}

static const struct hg_task_option topts[] = {
    {.name = "source-lang", .def = "en", .help = "source language"},
    {.name = "max-positions", .help = "longest sequence"},
    {.name = "dropout", .def = "0.1", .help = "dropout probability"},
    {.name = "share-all", .def = "0", .help = "a switch", .flag = 1},
    {NULL, NULL, NULL, 0},
};

static void test_task_options(void)
{
    struct hg_opts o;
    char err[512];
    const char *tv[4] = {"junk", "junk", "junk", "junk"};
    int rc = parse_str(&o, "--max-tokens 1", topts, tv, err, sizeof(err));
    EXPECT(rc == 0, "%s", err);
    EXPECT(tv[0] && strcmp(tv[0], "en") == 0, "default");
    EXPECT(tv[1] == NULL, "no default: NULL");
    EXPECT(tv[2] && strcmp(tv[2], "0.1") == 0, "default");
    hg_opts_free(&o);

    rc = parse_str(&o, "--max-tokens 1 --source-lang de --max-positions=512", topts, tv,
                   err, sizeof(err));
    EXPECT(rc == 0, "%s", err);
    EXPECT(tv[0] && strcmp(tv[0], "de") == 0, "%s", tv[0]);
    EXPECT(tv[1] && strcmp(tv[1], "512") == 0, "%s", tv[1]);
    EXPECT(tv[2] && strcmp(tv[2], "0.1") == 0, "%s", tv[2]);
    EXPECT(tv[3] && strcmp(tv[3], "0") == 0, "switch default %s", tv[3]);
    hg_opts_free(&o);

    /* a task's switch takes no value: alone it is "1", --name=V gives V */
    rc = parse_str(&o, "--share-all --max-tokens 1", topts, tv, err, sizeof(err));
    EXPECT(rc == 0 && tv[3] && strcmp(tv[3], "1") == 0, "switch: %s", err);
    hg_opts_free(&o);
    rc = parse_str(&o, "--max-tokens 1 --share-all=0", topts, tv, err, sizeof(err));
    EXPECT(rc == 0 && tv[3] && strcmp(tv[3], "0") == 0, "switch=0: %s", err);
    hg_opts_free(&o);

    /* from a config file (typed values become text), command line wins */
    const char *cfg = write_file("task.cfg",
                                 "max_tokens = 1;\nsource_lang = \"fr\";\n"
                                 "max_positions = 256;\ndropout = 0.25;\n");
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "-c %s --source-lang es", cfg);
    rc = parse_str(&o, cmd, topts, tv, err, sizeof(err));
    EXPECT(rc == 0, "%s", err);
    EXPECT(tv[0] && strcmp(tv[0], "es") == 0, "%s", tv[0]);
    EXPECT(tv[1] && strcmp(tv[1], "256") == 0, "%s", tv[1]);
    EXPECT(tv[2] && strtod(tv[2], NULL) == 0.25, "%s", tv[2]);
    hg_opts_free(&o);

    /* without the task's table, its options are unknown */
    rc = parse_str(&o, "--max-tokens 1 --source-lang de", NULL, NULL, err, sizeof(err));
    EXPECT(rc == -1 && strstr(err, "--source-lang"), "%s", err);
    hg_opts_free(&o);
    /* a task option that shadows hgtrain's own is refused */
    static const struct hg_task_option clash[] = {{"lr", "1", "x", 0},
                                                  {NULL, NULL, NULL, 0}};
    const char *cv[1];
    rc = parse_str(&o, "--max-tokens 1", clash, cv, err, sizeof(err));
    EXPECT(rc == -1 && strstr(err, "--lr"), "%s", err);
    hg_opts_free(&o);
}

static void test_peek(void)
{
    struct args a;
    const char *plugin = "junk";
    split("--max-tokens 5 --data d --task mt --task-plugin ./x.so --source-lang de", &a);
    const char *t = hg_opts_peek_task(a.argc, a.argv, &plugin);
    EXPECT(t && strcmp(t, "mt") == 0, "%s", t ? t : "(null)");
    EXPECT(plugin && strcmp(plugin, "./x.so") == 0, "%s", plugin ? plugin : "(null)");
    args_free(&a);

    /* --data's value is not mistaken for an option; --task=NAME */
    split("--data --task --task=lm", &a);
    t = hg_opts_peek_task(a.argc, a.argv, &plugin);
    EXPECT(t && strcmp(t, "lm") == 0 && plugin == NULL, "%s", t ? t : "(null)");
    args_free(&a);

    split("--max-tokens 5", &a);
    t = hg_opts_peek_task(a.argc, a.argv, &plugin);
    EXPECT(t == NULL && plugin == NULL, "none");
    args_free(&a);

    const char *cfg = write_file("peek.cfg", "max_tokens = 4;\ntask = \"mnist\";\n"
                                             "task_plugin = \"/p/t.so\";\n");
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "--unknown-task-opt v -c %s", cfg);
    split(cmd, &a);
    t = hg_opts_peek_task(a.argc, a.argv, &plugin);
    EXPECT(t && strcmp(t, "mnist") == 0, "%s", t ? t : "(null)");
    EXPECT(plugin && strcmp(plugin, "/p/t.so") == 0, "%s", plugin ? plugin : "(null)");
    args_free(&a);
    snprintf(cmd, sizeof(cmd), "-c %s --task mt", cfg);
    split(cmd, &a);
    t = hg_opts_peek_task(a.argc, a.argv, NULL);
    EXPECT(t && strcmp(t, "mt") == 0, "the command line wins: %s", t ? t : "(null)");
    args_free(&a);
    /* an unreadable file is not peek's error */
    split("-c /nonexistent.cfg", &a);
    t = hg_opts_peek_task(a.argc, a.argv, &plugin);
    EXPECT(t == NULL && plugin == NULL, "unreadable");
    args_free(&a);
}

static void test_round_trip(void)
{
    const char *cmds[] = {
        "--max-tokens 100",
        "--task mt --data '/data/with space' --arch transformer --max-sentences 64 "
        "--lr 0.0007 --optimizer adam --adam-betas '(0.9, 0.98)' --nesterov --momentum 0.3 "
        "--rank-capacity 2,1,1.5 --log-file 'it'\\''s here' --lr-scheduler cosine "
        "--warmup-updates 10 --total-num-update 1000 --min-lr 1e-9 --no-save "
        "--reset-optimizer --maximize-best-checkpoint-metric --source-lang de "
        "--dropout 0.3 --seed 123456789012 --keep-last-epochs 2 --log-format none",
    };
    for (int i = 0; i < 2; i++) {
        struct hg_opts a, b;
        char err[512];
        const char *tva[4], *tvb[4]; /* one per topts entry */
        int rc = parse_str(&a, cmds[i], topts, tva, err, sizeof(err));
        EXPECT(rc == 0, "%s", err);
        char *s = hg_opts_to_string(&a);
        EXPECT(s != NULL, "to_string");
        if (rc == 0 && s) {
            rc = parse_str(&b, s, topts, tvb, err, sizeof(err));
            EXPECT(rc == 0, "'%s': %s", s, err);
            if (rc == 0) {
                EXPECT(compare(&a, &b) == 0, "round trip of '%s'", s);
                EXPECT(a.lr_kind == b.lr_kind, "lr_kind");
                for (int k = 0; k < 3; k++)
                    EXPECT((!tva[k] && !tvb[k]) ||
                           (tva[k] && tvb[k] && strcmp(tva[k], tvb[k]) == 0),
                           "task option %d", k);
                char *s2 = hg_opts_to_string(&b);
                EXPECT(s2 && strcmp(s, s2) == 0, "'%s' vs '%s'", s, s2);
                free(s2);
            }
            hg_opts_free(&b);
        }
        if (i == 1 && s) {
            EXPECT(strstr(s, "--data '/data/with space'"), "%s", s ? s : "(null)");
            EXPECT(strstr(s, "--adam-betas 0.9,0.98"), "%s", s ? s : "(null)");
            EXPECT(strstr(s, "--source-lang de"), "%s", s ? s : "(null)");
            EXPECT(!strstr(s, "--help") && !strstr(s, "--config"), "%s", s ? s : "(null)");
        }
        free(s);
        hg_opts_free(&a);
    }
}

static void test_help(void)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    hg_opts_help(f, topts, "mt");
    fclose(f);
    /* wrapped at 80 columns: each help text is whole once a line break and
     * the next line's indent read as one space */
    char *flat = malloc(len + 1);
    size_t k = 0;
    int longest = 0, col = 0;
    for (size_t i = 0; i < len; i++) {
        col = buf[i] == '\n' ? 0 : col + 1;
        longest = col > longest ? col : longest;
        if (buf[i] == '\n') {
            flat[k++] = ' ';
            while (i + 1 < len && buf[i + 1] == ' ')
                i++;
        } else {
            flat[k++] = buf[i];
        }
    }
    flat[k] = 0;
    EXPECT(longest <= 80, "a help line of %d columns", longest);
    for (int i = 0; i < hg_train_nopts; i++) {
        char want[128];
        snprintf(want, sizeof(want), "--%s", hg_train_opts[i].name);
        EXPECT(strstr(buf, want), "help lacks %s", want);
        if (hg_train_opts[i].alias) {
            snprintf(want, sizeof(want), "--%s", hg_train_opts[i].alias);
            EXPECT(strstr(buf, want), "help lacks %s", want);
        }
        EXPECT(strstr(flat, hg_train_opts[i].help), "help lacks the text of --%s",
               hg_train_opts[i].name);
    }
    for (int i = 0; topts[i].name; i++)
        EXPECT(strstr(buf, topts[i].name), "help lacks --%s", topts[i].name);
    const char *groups[] = {"general options", "dataset options", "optimization options",
                            "checkpoint options", "task options (mt)"};
    for (int i = 0; i < 5; i++)
        EXPECT(strstr(buf, groups[i]), "help lacks '%s'", groups[i]);
    EXPECT(strstr(buf, "-c, --config FILE"), "short option");
    EXPECT(strstr(buf, "{sgd,adam,adamw,adadelta}"), "choices");
    if (getenv("HG_SHOW_HELP"))
        fputs(buf, stdout);
    free(flat);
    free(buf);
}

/* fairseq's names that hgtrain takes: --lr lists (one rate per epoch),
 * --train-subset, --disable-validation, --max-sentences-valid,
 * --stop-min-lr, -s/-t; --skip-invalid-size-inputs-valid-test refused by
 * name with advice */
static void test_fairseq_names(void)
{
    struct hg_opts o;
    char err[512];
    int rc = parse_str(&o, "--max-tokens 1 --lr 0.25,0.1 --train-subset train2 "
                       "--disable-validation --batch-size-valid 16 --stop-min-lr 1e-5",
                       NULL, NULL, err, sizeof(err));
    EXPECT(rc == 0, "%s", err);
    if (rc == 0) {
        EXPECT(o.lrs.n == 2 && o.lr == 0.25, "--lr list: n %d, lr %g", o.lrs.n, o.lr);
        EXPECT(hg_opts_lr_epoch(&o, 1) == 0.25 && hg_opts_lr_epoch(&o, 2) == 0.1 &&
                   hg_opts_lr_epoch(&o, 7) == 0.1,
               "per-epoch lr: %g %g %g", hg_opts_lr_epoch(&o, 1), hg_opts_lr_epoch(&o, 2),
               hg_opts_lr_epoch(&o, 7));
        EXPECT(strcmp(o.train_subset, "train2") == 0, "%s", o.train_subset);
        EXPECT(o.disable_validation == 1 && o.max_sentences_valid == 16 &&
                   o.stop_min_lr == 1e-5,
               "disable %d, valid batch %lld, stop-min-lr %g", o.disable_validation,
               (long long)o.max_sentences_valid, o.stop_min_lr);
        char *text = hg_opts_to_string(&o); /* the list is saved whole */
        EXPECT(text && strstr(text, "--lr 0.25,0.1"), "%s", text ? text : "(null)");
        free(text);
    }
    hg_opts_free(&o);
    rc = parse_str(&o, "--max-tokens 1", NULL, NULL, err, sizeof(err));
    EXPECT(rc == 0 && strcmp(o.train_subset, "train") == 0 && o.stop_min_lr == -1 &&
               o.lrs.n == 1 && hg_opts_lr_epoch(&o, 3) == 0.01,
           "defaults: %s", err);
    hg_opts_free(&o);
    expect_error("--max-tokens 1 --lr 0.25,0.1 --lr-scheduler inverse_sqrt", "--lr",
                 "--lr-scheduler fixed", __LINE__);
    expect_error("--max-tokens 1 --lr 0.25,0", "--lr", NULL, __LINE__);
    expect_error("--max-tokens 1 --skip-invalid-size-inputs-valid-test",
                 "--skip-invalid-size-inputs-valid-test: a fairseq option", "--max-len",
                 __LINE__);
    /* -s/-t: fairseq's short names of a task's --source-lang/--target-lang */
    const char *tv[4];
    rc = parse_str(&o, "-s it --max-tokens 1", topts, tv, err, sizeof(err));
    EXPECT(rc == 0 && tv[0] && strcmp(tv[0], "it") == 0, "-s: %s", err);
    hg_opts_free(&o);
    /* a number in a config file for a list option: a list of one */
    const char *cfg = write_file("lr.cfg", "max_tokens = 1;\nlr = 0.5;\n");
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "-c %s", cfg);
    rc = parse_str(&o, cmd, NULL, NULL, err, sizeof(err));
    EXPECT(rc == 0 && o.lr == 0.5 && o.lrs.n == 1, "lr = 0.5 in a file: %s", err);
    hg_opts_free(&o);
}

int main(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof(tmpdir), "%s/hgopts.XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 99;
    }
    test_defaults();
    test_types();
    test_betas();
    test_errors();
    test_config();
    test_task_options();
    test_peek();
    test_round_trip();
    test_help();
    test_fairseq_names();
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    if (failures) {
        fprintf(stderr, "test_options: %d failures\n", failures);
        return 1;
    }
    printf("test_options: all passed\n");
    return 0;
}
