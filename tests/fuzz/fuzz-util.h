/* fuzz-util.h - what the libFuzzer entry points share: the input as a
 * NUL-terminated string, or as a file (for loaders that take a path).
 * Built by tests/fuzz.sh only. */
#ifndef HG_FUZZ_UTIL_H
#define HG_FUZZ_UTIL_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* data[0..size) + NUL, malloc'ed (a parser of text reads to the NUL). */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = 0;
    return s;
}

/* The input written to a file of this process (one path, rewritten). */
static inline const char *fuzz_file(const uint8_t *data, size_t size, const char *ext)
{
    static char path[256];
    const char *t = getenv("TMPDIR");
    snprintf(path, sizeof(path), "%s/hg_fuzz.%ld%s", t && *t ? t : "/tmp", (long)getpid(), ext);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
        abort();
    close(fd);
    return path;
}

#endif
