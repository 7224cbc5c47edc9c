/* hgscore - corpus BLEU (13a) and chrF2 of a hypothesis file against a
 * reference file, the numbers sacreBLEU 2.x prints with its defaults:
 *
 *   hgscore --ref REF --hyp HYP [--chrf]
 *   hgscore --tokenize FILE        (each line as the 13a tokenizer splits it)
 *
 * HYP "-" (the default) reads standard input. Exit 0, 1 on bad input (the
 * message names the file and line), 2 on a usage error. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hg_base.h"
#include "data/bleu.h"
#include "data/text.h"

struct score_opts {
    char *ref, *hyp, *tok;
    int chrf, bleu, help, version;
};

#define OFF(f) offsetof(struct score_opts, f)
static const struct hg_opt options[] = {
    {.name = "ref", .type = HG_OPT_STR, .offset = OFF(ref), .metavar = "REF",
     .help = "the reference, one segment per line (required)"},
    {.name = "hyp", .type = HG_OPT_STR, .offset = OFF(hyp), .def = "-", .metavar = "HYP",
     .help = "the hypotheses, one segment per line ('-': standard input)"},
    {.name = "chrf", .type = HG_OPT_BOOL, .offset = OFF(chrf), .help = "also chrF2"},
    {.name = "bleu", .type = HG_OPT_BOOL, .offset = OFF(bleu), .def = "1",
     .flags = HG_OPTF_NEGATABLE, .help = "BLEU (--no-bleu: chrF2 alone)"},
    {.name = "tokenize", .type = HG_OPT_STR, .offset = OFF(tok), .metavar = "FILE",
     .help = "print each line of FILE as the 13a tokenizer splits it"},
    {.name = "help", .short_name = 'h', .type = HG_OPT_BOOL, .offset = OFF(help),
     .help = "show this help and exit"},
    {.name = "version", .type = HG_OPT_BOOL, .offset = OFF(version),
     .help = "print the version and exit"},
};

static const char usage[] =
    "usage: hgscore --ref REF [--hyp HYP] [--chrf] [--no-bleu]\n"
    "       hgscore --tokenize FILE\n"
    "Corpus BLEU (sacreBLEU's 13a tokenization, exp smoothing) and\n"
    "chrF2 of HYP (default: standard input) against REF, one segment\n"
    "per line.\n";

static int tokenize_file(const char *path)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) {
        perror(path);
        return 1;
    }
    struct hg_line_reader r;
    hg_line_reader_init(&r, f, path);
    char err[512];
    int rc = 0;
    for (;;) {
        char *line;
        size_t len;
        int got = hg_line_reader_next(&r, &line, &len, err, sizeof(err));
        if (got < 0) {
            fprintf(stderr, "hgscore: %s\n", err);
            rc = 1;
            break;
        }
        if (got == 0)
            break;
        char *t = hg_tokenize_13a(line, len);
        if (!t) {
            fprintf(stderr, "hgscore: out of memory\n");
            rc = 1;
            break;
        }
        puts(t);
        free(t);
    }
    hg_line_reader_free(&r);
    if (f != stdin)
        fclose(f);
    return rc;
}

/* The scores of o's files: 0, or 1 on bad input. */
static int score(const struct score_opts *o)
{
    int want_bleu = o->bleu, want_chrf = o->chrf || !o->bleu;
    struct hg_bleu b;
    double chrf = 0.0;
    char err[1024];
    if (hg_score_files(o->hyp, o->ref, want_bleu ? &b : NULL, want_chrf ? &chrf : NULL, err,
                       sizeof(err)) != 0) {
        fprintf(stderr, "hgscore: %s\n", err);
        return 1;
    }
    if (want_bleu) {
        char line[256];
        hg_bleu_format(&b, line, sizeof(line));
        puts(line);
    }
    if (want_chrf)
        printf("chrF2 = %.2f\n", chrf);
    return 0;
}

int main(int argc, char **argv)
{
    static const char *const groups[] = {"options", NULL};
    struct score_opts o = {0};
    const struct hg_opt_prog p = {
        .usage = usage,
        .groups = groups,
        .sets = {{.opts = options, .n = (int)(sizeof(options) / sizeof(options[0])),
                  .base = &o}},
        .nsets = 1,
    };
    char err[512];
    int rc;
    if (hg_opt_parse(&p, argc, argv, err, sizeof(err)) != 0) {
        fprintf(stderr, "hgscore: %s\n%s", err, usage);
        rc = 2;
    } else if (o.help) {
        hg_opt_help(stdout, &p);
        rc = 0;
    } else if (o.version) {
        hg_print_version("hgscore");
        rc = 0;
    } else if (o.tok) {
        rc = tokenize_file(o.tok);
    } else if (!o.ref) {
        fprintf(stderr, "hgscore: --ref is required\n%s", usage);
        rc = 2;
    } else {
        rc = score(&o);
    }
    hg_opt_free(&p);
    return rc;
}
