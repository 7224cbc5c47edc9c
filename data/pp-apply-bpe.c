/* pp-apply-bpe.c - `hgpreprocess apply-bpe`: subword-nmt's apply_bpe, a
 * text's lines segmented with given BPE codes (what hgtrain generate does
 * to raw input, for scripts that want the segmented text itself). Its own
 * file, as each command is (data/hgpreprocess.c lists them); what the
 * commands share is in data/pp-common.c. docs/preprocess.md. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hg_base.h"
#include "data/bpe.h"
#include "data/pp-impl.h"
#include "data/text.h"
#include "kernels/hg_kernels.h"

/* subword-nmt's apply_bpe: each line's whitespace tokens segmented with
 * the codes, joined by single spaces. */
struct apply_bpe_opts {
    char *codes, *input, *output;
};

static const struct hg_opt apply_bpe_opts[] = {
    {.name = "codes", .type = HG_OPT_STR, .offset = offsetof(struct apply_bpe_opts, codes),
     .metavar = "FILE", .help = "the BPE codes (DIR/codes of a preprocessed corpus)"},
    {.name = "input", .type = HG_OPT_STR, .offset = offsetof(struct apply_bpe_opts, input),
     .def = "-", .metavar = "F|-", .help = "the text to segment ('-': standard input)"},
    {.name = "output", .type = HG_OPT_STR, .offset = offsetof(struct apply_bpe_opts, output),
     .metavar = "F", .help = "where the segmented text goes (default: standard output)"},
};

static int cmd_apply_bpe(const void *opts, const struct hg_opt_prog *p)
{
    const struct apply_bpe_opts *o = opts;
    const char *codes = o->codes, *input = o->input, *output = o->output;
    const char *cmd = "apply-bpe";
    if (!codes)
        return hg__pp_usage_error(p->usage, cmd, "%s", "--codes is required");
    char err[ERRLEN];
    struct textctx c;
    memset(&c, 0, sizeof(c));
    struct hg_atomic_file af;
    memset(&af, 0, sizeof(af));
    struct hg_line_reader r;
    memset(&r, 0, sizeof(r));
    const int std_in = strcmp(input, "-") == 0;
    FILE *in = NULL, *out = stdout;
    int rc = -1;
    if (hg_bpe_load(&c.bpe, codes, err, sizeof(err)))
        goto done;
    if (!(in = std_in ? stdin : hg__pp_open_text(input, err, sizeof(err))))
        goto done;
    if (output) {
        if (hg_atomic_open(&af, output, err, sizeof(err)))
            goto done;
        out = af.f;
    }
    hg_line_reader_init(&r, in, std_in ? "<stdin>" : input);
    char *line;
    size_t len;
    int got;
    while ((got = hg_line_reader_next(&r, &line, &len, err, sizeof(err))) == 1) {
        int64_t n = hg_text_split(line, &c.tok, &c.tokcap);
        if (n < 0) {
            hg_kerr(err, sizeof(err), "out of memory");
            goto done;
        }
        int first = 1;
        for (int64_t i = 0; i < n; i++) {
            const int32_t *t;
            int k = hg_bpe_segment(c.bpe, c.tok[i], strlen(c.tok[i]), &t);
            if (k < 0) {
                hg_kerr(err, sizeof(err), "out of memory");
                goto done;
            }
            for (int j = 0; j < k; j++, first = 0)
                fprintf(out, "%s%s", first ? "" : " ", hg_bpe_token(c.bpe, t[j]));
        }
        fputc('\n', out);
    }
    if (got < 0)
        goto done;
    if (output ? hg_atomic_commit(&af, err, sizeof(err)) : fflush(out) != 0) {
        if (!output)
            hg_kerr(err, sizeof(err), "standard output: %s", strerror(errno));
        goto done;
    }
    rc = 0;
done:
    if (rc != 0) {
        fprintf(stderr, "hgpreprocess apply-bpe: %s\n", err);
        hg_atomic_abort(&af);
    }
    hg_line_reader_free(&r);
    if (in && in != stdin)
        fclose(in);
    free(c.tok);
    hg_bpe_free(c.bpe);
    return rc ? 1 : 0;
}

const struct pp_command hg__pp_apply_bpe = {
    .name = "apply-bpe",
    .opts = apply_bpe_opts,
    .nopts = NOPTS(apply_bpe_opts),
    .size = sizeof(struct apply_bpe_opts),
    .run = cmd_apply_bpe,
};
