/* fuzz_dict.c - a fairseq dictionary ("word count" lines) from the input. */
#include "tests/fuzz/fuzz-util.h"
#include "data/dict.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hg_dict *d;
    char err[256];
    static const char *const extra[] = {"<mask>"};
    if (hg_dict_load(&d, fuzz_file(data, size, ".dict"), extra, 1, err, sizeof(err)) != 0)
        return 0;
    if (hg_dict_size(d) < 4)
        abort(); /* the specials are always there */
    hg_dict_free(d);
    return 0;
}
