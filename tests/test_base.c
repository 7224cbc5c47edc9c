/* test_base.c - the base room (base/): the option parser on a table with
 * every type and flag (defaults, --name value, --name=value, -nVALUE,
 * aliases, --no-NAME, switches, ignored rows, unknown options with
 * suggestions, missing and bad values naming the option, refusals, config
 * keys, peek, --help, the text form's round trip), the RNG's values (fixed
 * before the RNG moved into base/), the clock, dtypes, hg_kerr and the
 * suggestions. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/hg_base.h"
#include "tests/hg_test.h"

static char tmpdir[256];

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

/* ------------------------------------------------------ a test program */

struct topts {
    int count;
    int64_t big;
    double rate;
    char *name, *color, *cfg, *extra;
    int fast, mode, cache, even, help;
    struct hg_opt_list sizes;
};

static int check_even(const void *field, const char *where, char *err, size_t errlen)
{
    int v = *(const int *)field;
    return v % 2 ? hg_kerr(err, errlen, "%s: %d is odd", where, v) : 0;
}

#define OFF(f) offsetof(struct topts, f)
static const struct hg_opt rows[] = {
    {.name = "count", .short_name = 'n', .type = HG_OPT_INT, .group = 0, .offset = OFF(count),
     .def = "3", .min = 1, .max = 10, .help = "how many"},
    {.name = "big", .alias = "large", .type = HG_OPT_I64, .group = 0, .offset = OFF(big),
     .def = "-5", .min = -HUGE_VAL, .help = "a big one"},
    {.name = "rate", .type = HG_OPT_REAL, .group = 0, .offset = OFF(rate), .def = "0.5",
     .flags = HG_OPTF_POSITIVE, .help = "a rate"},
    {.name = "name", .type = HG_OPT_STR, .group = 0, .offset = OFF(name), .def = "abc",
     .metavar = "WHO", .help = "a name"},
    {.name = "color", .type = HG_OPT_STR, .group = 0, .offset = OFF(color),
     .choices = "red|green|blue", .help = "a color"},
    {.name = "fast", .type = HG_OPT_BOOL, .group = 0, .offset = OFF(fast), .help = "go fast"},
    {.name = "mode", .type = HG_OPT_ENUM, .group = 0, .offset = OFF(mode), .def = "b",
     .choices = "a|b|c", .help = "a mode"},
    {.name = "sizes", .type = HG_OPT_LIST, .group = 0, .offset = OFF(sizes), .min = 1,
     .max_count = 3, .flags = HG_OPTF_WHOLE, .empty = "none", .help = "some sizes"},
    {.name = "cache", .type = HG_OPT_BOOL, .group = 0, .offset = OFF(cache), .def = "1",
     .flags = HG_OPTF_NEGATABLE, .help = "use the cache"},
    {.name = "config", .short_name = 'c', .type = HG_OPT_STR, .group = 2, .offset = OFF(cfg),
     .flags = HG_OPTF_CONFIG | HG_OPTF_NOCONFIG | HG_OPTF_NOSAVE, .metavar = "FILE",
     .help = "read a config file"},
    {.name = "extra", .type = HG_OPT_STR, .group = 0, .offset = OFF(extra), .def = "0",
     .flags = HG_OPTF_SWITCH, .help = "a switch with a text value"},
    {.name = "legacy", .type = HG_OPT_IGNORED, .group = 0, .help = "accepted, ignored"},
    {.name = "even", .type = HG_OPT_INT, .group = 0, .offset = OFF(even), .check = check_even,
     .help = "an even number"},
    {.name = "help", .short_name = 'h', .type = HG_OPT_BOOL, .group = 2, .offset = OFF(help),
     .flags = HG_OPTF_NOSAVE, .help = "show this help"},
};
#define NROWS ((int)(sizeof(rows) / sizeof(rows[0])))

static const struct hg_opt_refusal refused[] = {{"old-count", "use --count"}, {NULL, NULL}};
static const char *const groups[] = {"main options", "empty section", "other", NULL};
static unsigned char given[NROWS];

static struct hg_opt_prog prog(struct topts *o)
{
    memset(o, 0, sizeof(*o));
    return (struct hg_opt_prog){
        .usage = "usage: test [options]\n",
        .groups = groups,
        .refused = refused,
        .refused_what = "not an option of this test",
        .unknown_note = "; a note",
        .sets = {{.opts = rows, .n = NROWS, .base = o, .given = given}},
        .nsets = 1,
    };
}

/* A shell-like split ('...' quotes, \ escapes) into argv[0] = "test",
 * argv[1..]. */
struct args {
    int argc;
    char *argv[64];
};

static void split(const char *s, struct args *a)
{
    a->argc = 0;
    a->argv[a->argc++] = strdup("test");
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
        if (a->argc < 63)
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

static int parse(struct hg_opt_prog *p, const char *cmd, char *err, size_t errlen)
{
    struct args a;
    split(cmd, &a);
    err[0] = 0;
    int rc = hg_opt_parse(p, a.argc, a.argv, err, errlen);
    args_free(&a);
    return rc;
}

/* cmd must fail with each of the words in its message. */
static void expect_error(const char *cmd, const char *w1, const char *w2, int line)
{
    struct topts o;
    struct hg_opt_prog p = prog(&o);
    char err[512];
    int rc = parse(&p, cmd, err, sizeof(err));
    EXPECT(rc == -1, "line %d: '%s' parsed", line, cmd);
    EXPECT(!w1 || strstr(err, w1), "line %d: '%s': '%s' lacks '%s'", line, cmd, err, w1);
    EXPECT(!w2 || strstr(err, w2), "line %d: '%s': '%s' lacks '%s'", line, cmd, err, w2);
    hg_opt_free(&p);
}

/* ------------------------------------------------------------- parser */

static void test_defaults(void)
{
    struct topts o;
    struct hg_opt_prog p = prog(&o);
    char err[512];
    int rc = parse(&p, "", err, sizeof(err));
    EXPECT(rc == 0, "%s", err);
    EXPECT(o.count == 3 && o.big == -5 && o.rate == 0.5, "numbers");
    EXPECT(o.name && strcmp(o.name, "abc") == 0 && !o.color && !o.cfg, "strings");
    EXPECT(o.extra && strcmp(o.extra, "0") == 0, "a switch's default");
    EXPECT(!o.fast && o.cache == 1 && o.mode == 1 && o.sizes.n == 0 && !o.sizes.v, "rest");
    for (int i = 0; i < NROWS; i++)
        EXPECT(!given[i], "--%s given", rows[i].name);
    EXPECT(hg_opt_given(&p, "count") == 0 && hg_opt_given(&p, "nope") == -1, "given");
    hg_opt_free(&p);
    EXPECT(!o.name && !o.sizes.v, "free clears");
    hg_opt_free(&p); /* twice is harmless */
}

static void test_forms(void)
{
    struct topts o;
    struct hg_opt_prog p = prog(&o);
    char err[512];
    int rc = parse(&p,
                   "--count 4 --rate=0.25 --large 12345678901 --name 'a b' --color=green "
                   "--fast --mode c --sizes 1,2,3 --no-cache --extra --legacy --legacy=x "
                   "--even 4",
                   err, sizeof(err));
    EXPECT(rc == 0, "%s", err);
    EXPECT(o.count == 4 && o.rate == 0.25 && o.big == 12345678901LL && o.even == 4, "numbers");
    EXPECT(strcmp(o.name, "a b") == 0 && strcmp(o.color, "green") == 0, "strings");
    EXPECT(o.fast == 1 && o.cache == 0 && o.mode == 2, "switches and enum");
    EXPECT(o.sizes.n == 3 && o.sizes.v[0] == 1 && o.sizes.v[2] == 3, "list");
    EXPECT(o.extra && strcmp(o.extra, "1") == 0, "a switch alone is 1");
    EXPECT(hg_opt_given(&p, "count") == 1 && hg_opt_given(&p, "big") == 1 &&
           hg_opt_given(&p, "color") == 1 && hg_opt_given(&p, "help") == 0, "given");
    /* the later of two wins; -nVALUE; --extra=V; "none" is the empty list;
     * a negative value is a value */
    rc = parse(&p, "-n7 --count 8 --extra=yes --sizes none --big -3 --name=", err, sizeof(err));
    EXPECT(rc == 0, "%s", err);
    EXPECT(o.count == 8 && strcmp(o.extra, "yes") == 0 && o.sizes.n == 0 && o.big == -3,
           "second parse");
    EXPECT(o.name && !*o.name, "an empty value");
    EXPECT(hg_opt_given(&p, "sizes") == 1 && hg_opt_given(&p, "fast") == 0, "given reset");
    rc = parse(&p, "-n 9 --sizes '[4, 5]'", err, sizeof(err));
    EXPECT(rc == 0 && o.count == 9 && o.sizes.n == 2 && o.sizes.v[1] == 5, "%s", err);
    hg_opt_free(&p);
}

static void test_errors(void)
{
    expect_error("--cout 3", "unknown option '--cout' (did you mean --count?)", "; a note",
                 __LINE__);
    expect_error("--zzzzzzz 3", "unknown option '--zzzzzzz' (see --help)", NULL, __LINE__);
    expect_error("--count", "--count needs a value", NULL, __LINE__);
    expect_error("--count x", "--count: expected an integer in [1, 10], got 'x'", NULL,
                 __LINE__);
    expect_error("--count 11", "--count: expected an integer in [1, 10], got '11'", NULL,
                 __LINE__);
    expect_error("--count 2.5", "--count", "'2.5'", __LINE__);
    expect_error("--big 99999999999999999999", "--big: expected an integer", NULL, __LINE__);
    expect_error("--large x", "--big: expected an integer", NULL, __LINE__);
    expect_error("--rate 0", "--rate: expected a number > 0, got '0'", NULL, __LINE__);
    expect_error("--rate inf", "--rate", NULL, __LINE__);
    expect_error("--color gren", "--color: expected red, green or blue, got 'gren' (did you "
                 "mean green?)", NULL, __LINE__);
    expect_error("--mode d", "--mode: expected a, b or c, got 'd'", NULL, __LINE__);
    expect_error("--sizes 1,2,3,4", "--sizes: expected up to 3 integers >= 1 separated by "
                 "commas, or none, got '1,2,3,4'", NULL, __LINE__);
    expect_error("--sizes 1.5", "--sizes", "'1.5'", __LINE__);
    expect_error("--sizes 0", "--sizes", "'0'", __LINE__);
    expect_error("--sizes 1,x", "--sizes", "'1,x'", __LINE__);
    expect_error("--fast=1", "--fast takes no value", NULL, __LINE__);
    expect_error("--no-fast", "unknown option '--no-fast'", NULL, __LINE__);
    expect_error("--no_cache", "unknown option '--no_cache'", NULL, __LINE__);
    expect_error("stray", "unexpected argument 'stray'", NULL, __LINE__);
    expect_error("-x", "unknown option '-x'", NULL, __LINE__);
    expect_error("--even 3", "--even: 3 is odd", NULL, __LINE__);
    expect_error("--old-count 3", "--old-count: not an option of this test: use --count",
                 NULL, __LINE__);
    /* errors come before any value is stored */
    struct topts o;
    struct hg_opt_prog p = prog(&o);
    char err[512];
    EXPECT(parse(&p, "--count 5 --bogus", err, sizeof(err)) == -1 && o.count == 3,
           "count %d", o.count);
    hg_opt_free(&p);
}

static void test_config(void)
{
    const char *cfg = write_file("t.cfg", "# a file\n"
                                          "count = 7;\n"
                                          "large = 12345678901L;\n"
                                          "rate = 2;\n"
                                          "name = \"from file\";\n"
                                          "fast = true;\n"
                                          "mode = \"a\";\n"
                                          "sizes = [1, 2];\n"
                                          "no_such_thing_either_way = 0;\n");
    struct topts o;
    struct hg_opt_prog p = prog(&o);
    char err[512], cmd[1024];
    snprintf(cmd, sizeof(cmd), "-c %s", cfg);
    EXPECT(parse(&p, cmd, err, sizeof(err)) == -1 && strstr(err, "t.cfg:9: unknown key"),
           "%s", err);
    cfg = write_file("t.cfg", "count = 7;\n"
                              "large = 12345678901L;\n"
                              "rate = 2;\n"
                              "name = \"from file\";\n"
                              "fast = true;\n"
                              "mode = \"a\";\n"
                              "sizes = [1, 2];\n"
                              "cache = false;\n"
                              "extra = true;\n"
                              "color = \"blue\";\n");
    snprintf(cmd, sizeof(cmd), "--count 8 --config %s --rate=3", cfg);
    int rc = parse(&p, cmd, err, sizeof(err));
    EXPECT(rc == 0, "%s", err);
    EXPECT(o.count == 8 && o.rate == 3, "the command line wins: %d %g", o.count, o.rate);
    EXPECT(o.big == 12345678901LL && strcmp(o.name, "from file") == 0 && o.fast &&
           o.mode == 0 && o.sizes.n == 2 && o.cache == 0 && strcmp(o.extra, "1") == 0 &&
           strcmp(o.color, "blue") == 0, "from the file");
    EXPECT(strcmp(o.cfg, cfg) == 0 && hg_opt_given(&p, "big") == 1 &&
           hg_opt_given(&p, "even") == 0, "given");
    hg_opt_free(&p);

    char want[600];
    struct {
        const char *text, *w1;
    } bad[] = {
        {"big = 4;\ncuont = 1;\n", "unknown key 'cuont' (did you mean count?)"},
        {"big = 4;\ncount = \"many\";\n", "key 'count': expected an integer, got a string"},
        {"big = 4;\ncount = 0;\n", "key 'count': expected an integer in [1, 10], got '0'"},
        {"big = 4;\ncount = 2.5;\n", "key 'count': expected an integer, got a number"},
        {"big = 4;\nfast = 1;\n", "key 'fast': expected true or false, got an integer"},
        {"big = 4;\nsizes = [\"a\"];\n", "key 'sizes': element 0 is not a number"},
        {"big = 4;\nsizes = [1, 2, 3, 4];\n", "key 'sizes': expected up to 3 integers"},
        {"big = 4;\ncolor = \"pink\";\n", "key 'color': expected red, green or blue"},
        {"big = 4;\nconfig = \"other.cfg\";\n", "key 'config': not allowed in a config file"},
        {"big = 4;\nold_count = 3;\n", "key old-count: not an option of this test"},
        {"big = 4;\neven = 5;\n", "key 'even': 5 is odd"},
        {"big = 4;\nname = { a = 1; };\n", "key 'name': expected a string, got a group"},
        {"big = 4;\ncount = ;\n", "error"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cfg = write_file("bad.cfg", bad[i].text); /* each wrong on line 2 */
        snprintf(cmd, sizeof(cmd), "-c%s", cfg);
        snprintf(want, sizeof(want), "%s:2", cfg);
        expect_error(cmd, want, bad[i].w1, __LINE__);
    }
    expect_error("-c /nonexistent/t.cfg", "/nonexistent/t.cfg: cannot read", NULL, __LINE__);
}

static void test_peek(void)
{
    struct topts o;
    struct hg_opt_prog p = prog(&o);
    const char *cfg = write_file("peek.cfg", "name = \"in file\";\ncount = 2;\n");
    char cmd[600];
    struct args a;
    snprintf(cmd, sizeof(cmd), "--unknown v --name cmdline -c %s --fast --name=last", cfg);
    split(cmd, &a);
    char *v = hg_opt_peek(&p, a.argc, a.argv, "name");
    EXPECT(v && strcmp(v, "last") == 0, "%s", v ? v : "(null)");
    free(v);
    args_free(&a);
    snprintf(cmd, sizeof(cmd), "--bogus -c %s", cfg); /* --bogus takes "-c" */
    split(cmd, &a);
    v = hg_opt_peek(&p, a.argc, a.argv, "name");
    EXPECT(!v, "%s", v);
    free(v);
    args_free(&a);
    snprintf(cmd, sizeof(cmd), "--fast -c %s", cfg);
    split(cmd, &a);
    v = hg_opt_peek(&p, a.argc, a.argv, "name");
    EXPECT(v && strcmp(v, "in file") == 0, "from the file: %s", v ? v : "(null)");
    free(v);
    v = hg_opt_peek(&p, a.argc, a.argv, "count"); /* not a string in the file */
    EXPECT(!v, "%s", v);
    free(v);
    args_free(&a);
    split("-c /nonexistent.cfg", &a);
    v = hg_opt_peek(&p, a.argc, a.argv, "name");
    EXPECT(!v, "an unreadable file is no error: %s", v);
    free(v);
    args_free(&a);
}

static void test_help(void)
{
    struct topts o;
    struct hg_opt_prog p = prog(&o);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    hg_opt_help(f, &p);
    fclose(f);
    for (int i = 0; i < NROWS; i++) {
        char want[64];
        snprintf(want, sizeof(want), "--%s", rows[i].name);
        EXPECT(strstr(buf, want) || rows[i].flags & HG_OPTF_NEGATABLE, "no %s", want);
        EXPECT(strstr(buf, rows[i].help), "no help of --%s", rows[i].name);
    }
    const char *bits[] = {"usage: test [options]\n", "\nmain options:\n",
                          "\nempty section:\n  (none)\n", "\nother:\n", "-n, --count N",
                          "--big, --large N", "--name WHO", "(default: 3)", "(default: abc)",
                          "{red,green,blue}", "--[no-]cache", "use the cache (default: on)",
                          "-c, --config FILE", "--sizes LIST", "--mode NAME", "--extra "};
    for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
        EXPECT(strstr(buf, bits[i]), "help lacks '%s'", bits[i]);
    EXPECT(!strstr(buf, "--fast (default"), "a switch off by default shows no default");
    if (getenv("HG_SHOW_HELP"))
        fputs(buf, stdout);
    free(buf);

    /* a long help and a long usage line wrap at 80 columns (the stream is
     * no terminal), every word kept, in order */
    static const char long_help[] =
        "a help text far longer than one line of a terminal, which the parser "
        "must break at spaces into lines that start under the help column and "
        "end before the eightieth column, keeping every word of it in order, "
        "including a-rather-long-hyphenated-word-that-stays-whole";
    const struct hg_opt wide[] = {
        {.name = "a-very-long-option-name-indeed", .type = HG_OPT_INT, .group = 0,
         .offset = OFF(count), .def = "3", .metavar = "COUNT", .help = long_help},
    };
    struct hg_opt_prog q = {
        .usage = "usage: test --a-very-long-option-name-indeed COUNT [and many other "
                 "words that pass the eightieth column]\n",
        .groups = groups,
        .sets = {{.opts = wide, .n = 1, .base = &o}},
        .nsets = 1,
    };
    buf = NULL;
    len = 0;
    f = open_memstream(&buf, &len);
    hg_opt_help(f, &q);
    fclose(f);
    int longest = 0, n = 0, lines = 0;
    for (const char *l = buf; *l; lines++) {
        const char *e = strchr(l, '\n');
        int k = e ? (int)(e - l) : (int)strlen(l);
        longest = k > longest ? k : longest;
        l += k + (e != NULL);
    }
    EXPECT(longest <= 80, "a help line of %d columns:\n%s", longest, buf);
    EXPECT(lines >= 10, "%d lines: not wrapped?\n%s", lines, buf);
    char *flat = malloc(len + 1); /* the text with line breaks and indents as one space */
    for (size_t i = 0; i < len; i++) {
        if (buf[i] == '\n' || (buf[i] == ' ' && n > 0 && flat[n - 1] == ' ')) {
            if (n > 0 && flat[n - 1] != ' ')
                flat[n++] = ' ';
            continue;
        }
        flat[n++] = buf[i];
    }
    flat[n] = 0;
    EXPECT(strstr(flat, long_help), "the long help lost words:\n%s", buf);
    EXPECT(strstr(flat, "pass the eightieth column]"), "the usage lost words:\n%s", buf);
    EXPECT(strstr(flat, "(default: 3)"), "no default:\n%s", buf);
    free(flat);
    free(buf);
}

static int same(const struct topts *a, const struct topts *b)
{
    int ok = a->count == b->count && a->big == b->big && a->rate == b->rate &&
             a->fast == b->fast && a->mode == b->mode && a->cache == b->cache &&
             a->even == b->even && a->sizes.n == b->sizes.n;
    for (int i = 0; ok && i < a->sizes.n; i++)
        ok = a->sizes.v[i] == b->sizes.v[i];
    const char *const sa[] = {a->name, a->color, a->extra}, *const sb[] = {b->name, b->color,
                                                                         b->extra};
    for (int i = 0; ok && i < 3; i++)
        ok = (!sa[i] && !sb[i]) || (sa[i] && sb[i] && strcmp(sa[i], sb[i]) == 0);
    return ok;
}

static void test_round_trip(void)
{
    const char *cmds[] = {
        "",
        "--count 4 --rate 0.1 --big -77 --name 'it'\\''s' --color red --fast --mode a "
        "--sizes 3,2 --no-cache --extra=x --even 6 --legacy",
        "--extra --sizes none --name ''",
        "--extra=0 --rate 1e-300",
    };
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
        struct topts a, b;
        struct hg_opt_prog pa = prog(&a), pb = prog(&b);
        char err[512];
        int rc = parse(&pa, cmds[i], err, sizeof(err));
        EXPECT(rc == 0, "'%s': %s", cmds[i], err);
        char *s = hg_opt_to_string(&pa);
        REQUIRE(s, "to_string");
        rc = parse(&pb, s, err, sizeof(err));
        EXPECT(rc == 0, "'%s': %s", s, err);
        EXPECT(rc != 0 || same(&a, &b), "'%s' reads back differently", s);
        char *s2 = hg_opt_to_string(&pb);
        EXPECT(s2 && strcmp(s, s2) == 0, "'%s' then '%s'", s, s2 ? s2 : "(null)");
        if (i == 1)
            EXPECT(strstr(s, "--no-cache") && strstr(s, "--extra=x") &&
                       strstr(s, "--mode a") && strstr(s, "--sizes 3,2") &&
                       !strstr(s, "legacy") && !strstr(s, "config") && !strstr(s, "help"),
                   "%s", s);
        if (i == 2)
            EXPECT(strstr(s, "--extra --") && strstr(s, "--sizes none") &&
                       strstr(s, "--name ''") && !strstr(s, "cache"),
                   "%s", s);
        if (i == 3)
            EXPECT(!strstr(s, "extra"), "an off switch is left out: %s", s);
        free(s);
        free(s2);
        hg_opt_free(&pa);
        hg_opt_free(&pb);
    }
}

/* -------------------------------------------------------- the others */

static void test_rand(void)
{
    /* hg_rand_uniform(seed, stream, index) * 2^24, computed with the RNG as
     * it was in kernels/common.c before it moved: dropout masks and batch
     * orders of old runs depend on these bits */
    static const struct {
        uint64_t seed, stream, index;
        uint32_t u24;
    } cases[] = {
        {0, 0, 0, 0x00568a9b},
        {1, 0, 0, 0x0085c61a},
        {1, 2, 3, 0x00dac0b0},
        {42, 7, 1000000, 0x00ea2eed},
        {UINT64_MAX, 5, 123456789, 0x00c7bfd3},
        {123456789, 1, 0, 0x00d186dd},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        float u = hg_rand_uniform(cases[i].seed, cases[i].stream, cases[i].index);
        EXPECT((uint32_t)(u * 16777216.0f) == cases[i].u24 && u >= 0 && u < 1,
               "case %zu: %.9g", i, u);
        EXPECT(u == hg_rand_u(hg_rand_key(cases[i].seed, cases[i].stream), cases[i].index),
               "case %zu: key form", i);
    }
    EXPECT(hg_mix64(0) == 0 && hg_mix64(1) == 0x5692161d100b05e5ULL, "mix64");
    EXPECT(hg_rand_key(1, 2) == 0xf2826f98653e9e57ULL, "key");
}

static void test_clock(void)
{
    double t0 = hg_now(), prev = t0;
    for (int i = 0; i < 1000; i++) {
        double t = hg_now();
        EXPECT(t >= prev, "the clock went back by %g s", prev - t);
        prev = t;
    }
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    double dt = hg_now() - t0;
    EXPECT(dt >= 0.019 && dt < 10, "a 20 ms sleep took %g s", dt);
    struct timespec m;
    clock_gettime(CLOCK_MONOTONIC, &m);
    double direct = (double)m.tv_sec + 1e-9 * (double)m.tv_nsec;
    EXPECT(fabs(direct - hg_now()) < 1, "not CLOCK_MONOTONIC: %g vs %g", direct, hg_now());
}

static void test_misc(void)
{
    EXPECT(hg_dtype_size(HG_F32) == 4 && hg_dtype_size(HG_I64) == 8 &&
           hg_dtype_size(HG_BF16) == 2 && hg_dtype_size(HG_U8) == 1, "sizes");
    EXPECT(strcmp(hg_dtype_name(HG_I8), "i8") == 0 &&
           strcmp(hg_dtype_name(HG_DTYPE_COUNT), "?") == 0, "names");
    char err[8];
    EXPECT(hg_kerr(err, sizeof(err), "%s=%d", "abcdef", 12) == -1 && strcmp(err, "abcdef=") == 0,
           "truncated: %s", err);
    EXPECT(hg_kerr(NULL, 0, "x") == -1, "no buffer");
    const char *names[] = {"generate", "interactive", NULL};
    char out[96];
    EXPECT(strcmp(hg_suggest_text("generte", names, "", out, sizeof(out)),
                  " (did you mean generate?)") == 0, "%s", out);
    EXPECT(strcmp(hg_suggest_text("xyz", names, "--", out, sizeof(out)), "") == 0, "%s", out);
}

int main(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof(tmpdir), "%s/hgbase.XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 99;
    }
    test_defaults();
    test_forms();
    test_errors();
    test_config();
    test_peek();
    test_help();
    test_round_trip();
    test_rand();
    test_clock();
    test_misc();
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    if (failures) {
        fprintf(stderr, "test_base: %d failures\n", failures);
        return 1;
    }
    printf("test_base: all passed\n");
    return 0;
}
