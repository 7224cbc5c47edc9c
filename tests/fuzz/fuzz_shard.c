/* fuzz_shard.c - a shard (HDF5) from the input: open with the images
 * layout, read every sample. HDF5 itself is not instrumented: this checks
 * our reader's validation of what HDF5 returns. */
#include "tests/fuzz/fuzz-util.h"
#include "data/hg_data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct hg_field fields[2] = {
        {"image", HG_FIELD_ARRAY, HG_U8, 2, 0},
        {"label", HG_FIELD_ARRAY, HG_I32, 0, 10},
    };
    struct hg_dataset *ds;
    char err[512];
    if (hg_dataset_open(&ds, fuzz_file(data, size, ".h5"), fields, 2, 0, err,
                        sizeof(err)) != 0)
        return 0;
    static unsigned char buf[1 << 16];
    for (int64_t i = 0; i < hg_dataset_size(ds) && i < 64; i++)
        for (int f = 0; f < 2; f++) {
            int64_t n;
            if (hg_dataset_read(ds, f, i, buf, sizeof(buf), &n, err, sizeof(err)) != 0)
                break;
        }
    hg_dataset_close(ds);
    return 0;
}
