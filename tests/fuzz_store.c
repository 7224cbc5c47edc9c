/* fuzz_store.c - libFuzzer entry point for the store's frame parser,
 * hg_store_parse_header, walked over the input as a stream of frames the
 * way the server reads a connection (tests/fuzz.sh builds and runs it with
 * the corpus tests/fuzz/corpus/store/).
 *
 * Build from the top of the source tree (config.h from any build dir):
 *   clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined \
 *         -include BUILD/config.h -I. tests/fuzz_store.c comm/store.c \
 *         base/check.c -lpthread -lm -o fuzz_store
 *   mkdir -p corpus && ./fuzz_store -max_len=4096 corpus */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "comm/store-impl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    size_t off = 0;
    for (;;) {
        struct hg_store_hdr h;
        int r = hg_store_parse_header(data + off, size - off, &h, err, sizeof err);
        if (r <= 0)
            break;
        if (h.klen > HG_STORE_MAX_KEY || h.vlen > HG_STORE_MAX_VALUE)
            abort(); /* the parser let an oversize length through */
        size_t need = HG_STORE_HDR_LEN + (size_t)h.klen + h.vlen;
        if (size - off < need)
            break;
        off += need;
    }
    return 0;
}
