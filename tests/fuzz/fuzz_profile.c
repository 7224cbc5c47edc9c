/* fuzz_profile.c - a profile file (hgplan --profile-out) from the input. */
#include "tests/fuzz/fuzz-util.h"
#include "planner/hg_planner.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size), err[512];
    struct hg_profile *p;
    if (hg_prof_parse(&p, text, "fuzz.cfg", err, sizeof(err)) == 0)
        hg_prof_free(p);
    free(text);
    return 0;
}
