/* fuzz_idx.c - libFuzzer entry point for hg_idx_parse (tests/fuzz.sh builds
 * and runs it with the corpus tests/fuzz/corpus/idx/).
 *
 * Build from the top of the source tree (config.h from any build dir):
 *   clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined \
 *         -include BUILD/config.h -I. tests/fuzz_idx.c data/idx.c \
 *         base/check.c -lz -lm -o fuzz_idx
 *   mkdir -p corpus && ./fuzz_idx -max_len=4096 corpus
 * (add seeds to corpus/: e.g. the first KB of a Fashion-MNIST file). */
#include <stddef.h>
#include <stdint.h>

#include "data/hg_data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hg_idx idx;
    char err[256];
    if (hg_idx_parse(data, size, "fuzz", &idx, err, sizeof(err)) == 0)
        hg_idx_free(&idx);
    return 0;
}
