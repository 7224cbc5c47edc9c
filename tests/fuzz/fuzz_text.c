/* fuzz_text.c - the text reader of the preprocessing tools: lines (UTF-8
 * checked, NUL refused), split at whitespace, each token's UTF-8 walked. */
#define _GNU_SOURCE
#include "tests/fuzz/fuzz-util.h"
#include "data/text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fmemopen((void *)data, size, "r");
    if (!f)
        return 0;
    struct hg_line_reader r;
    hg_line_reader_init(&r, f, "fuzz");
    char *line, err[256], **tok = NULL;
    size_t len, cap = 0;
    while (hg_line_reader_next(&r, &line, &len, err, sizeof(err)) == 1) {
        if (hg_text_validate_utf8(line, len, NULL) != 0)
            abort(); /* the reader returned a line it should have refused */
        int64_t n = hg_text_split(line, &tok, &cap);
        for (int64_t i = 0; i < n; i++)
            for (const char *p = tok[i]; *p; p += hg_utf8_seqlen((unsigned char)*p))
                if (hg_utf8_seqlen((unsigned char)*p) < 1)
                    abort();
    }
    free(tok);
    hg_line_reader_free(&r);
    fclose(f);
    return 0;
}
