/* fuzz_bpe.c - a BPE codes file (subword-nmt) loaded from the input, then
 * a few words segmented with it: every token must be a piece of the word. */
#include "tests/fuzz/fuzz-util.h"
#include "data/bpe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hg_bpe *b;
    char err[256];
    if (hg_bpe_load(&b, fuzz_file(data, size, ".codes"), err, sizeof(err)) != 0)
        return 0;
    static const char *const words[] = {"lowest", "newer", "wider", "na\xc3\xafve", "a",
                                        "\xe4\xb8\xad\xe6\x96\x87"};
    for (size_t w = 0; w < sizeof(words) / sizeof(*words); w++) {
        const int32_t *tok;
        int n = hg_bpe_segment(b, words[w], strlen(words[w]), &tok);
        if (n < 1)
            abort();
        size_t total = 0;
        for (int i = 0; i < n; i++) {
            size_t l = hg_bpe_token_len(b, tok[i]);
            const char *t = hg_bpe_token(b, tok[i]);
            /* "xx@@": the piece without its continuation mark */
            size_t piece = l >= 2 && i < n - 1 && strcmp(t + l - 2, "@@") == 0 ? l - 2 : l;
            if (total + piece > strlen(words[w]) || memcmp(t, words[w] + total, piece) != 0)
                abort();
            total += piece;
        }
        if (total != strlen(words[w]))
            abort();
    }
    hg_bpe_free(b);
    return 0;
}
