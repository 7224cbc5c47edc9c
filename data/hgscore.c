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

static void usage(FILE *f)
{
    fprintf(f,
            "usage: hgscore --ref REF [--hyp HYP] [--chrf] [--no-bleu]\n"
            "       hgscore --tokenize FILE\n"
            "Corpus BLEU (sacreBLEU's 13a tokenization, exp smoothing) and\n"
            "chrF2 of HYP (default: standard input) against REF, one segment\n"
            "per line.\n");
}

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

int main(int argc, char **argv)
{
    const char *ref = NULL, *hyp = "-", *tok = NULL;
    int want_chrf = 0, want_bleu = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has_val = i + 1 < argc;
        if (strcmp(a, "--ref") == 0 && has_val) {
            ref = argv[++i];
        } else if (strcmp(a, "--hyp") == 0 && has_val) {
            hyp = argv[++i];
        } else if (strcmp(a, "--tokenize") == 0 && has_val) {
            tok = argv[++i];
        } else if (strcmp(a, "--chrf") == 0) {
            want_chrf = 1;
        } else if (strcmp(a, "--no-bleu") == 0) {
            want_bleu = 0;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--version") == 0) {
            hg_print_version("hgscore");
            return 0;
        } else {
            static const char *const names[] = {"--ref", "--hyp", "--tokenize", "--chrf",
                                                "--no-bleu", "--help", "--version", NULL};
            char hint[96];
            int missing = a[0] == '-' && !has_val &&
                          (!strcmp(a, "--ref") || !strcmp(a, "--hyp") ||
                           !strcmp(a, "--tokenize"));
            fprintf(stderr, "hgscore: %s '%s'%s\n",
                    missing ? "missing value for" : "unknown option", a,
                    missing ? "" : hg_suggest_text(a, names, "", hint, sizeof(hint)));
            usage(stderr);
            return 2;
        }
    }
    if (tok)
        return tokenize_file(tok);
    if (!ref) {
        fprintf(stderr, "hgscore: --ref is required\n");
        usage(stderr);
        return 2;
    }
    if (!want_bleu)
        want_chrf = 1;
    struct hg_bleu b;
    double chrf = 0.0;
    char err[1024];
    if (hg_score_files(hyp, ref, want_bleu ? &b : NULL,
                       want_chrf ? &chrf : NULL, err, sizeof(err)) != 0) {
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
