/* idx.c - IDX reader (LeCun's MNIST format), plain or gzip. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "data/hg_data.h"
#include "kernels/hg_kernels.h"

/* A sanity bound: no real IDX file is near this, a corrupt header can be. */
#define HG_IDX_MAX_BYTES ((int64_t)1 << 34)

static int read_all(gzFile f, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        unsigned chunk = n - got > (1u << 30) ? (1u << 30) : (unsigned)(n - got);
        int r = gzread(f, (char *)buf + got, chunk);
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

int hg_idx_load(const char *path, struct hg_idx *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    gzFile f = gzopen(path, "rb");
    if (!f)
        return hg_kerr(err, errlen, "%s: cannot open", path);
    unsigned char h[4];
    if (read_all(f, h, 4) != 0) {
        gzclose(f);
        return hg_kerr(err, errlen, "%s: truncated header", path);
    }
    /* magic: 0 0 type ndim; type 0x08 = unsigned byte */
    if (h[0] != 0 || h[1] != 0 || h[2] != 0x08 || h[3] < 1 || h[3] > 4) {
        gzclose(f);
        return hg_kerr(err, errlen,
                       "%s: not an unsigned-byte IDX file (magic %02x%02x%02x%02x)",
                       path, h[0], h[1], h[2], h[3]);
    }
    out->ndim = h[3];
    int64_t total = 1;
    for (int i = 0; i < out->ndim; i++) {
        unsigned char d[4];
        if (read_all(f, d, 4) != 0) {
            gzclose(f);
            return hg_kerr(err, errlen, "%s: truncated header", path);
        }
        out->dim[i] = ((int64_t)d[0] << 24) | (d[1] << 16) | (d[2] << 8) | d[3];
        total *= out->dim[i];
        if (out->dim[i] <= 0 || total > HG_IDX_MAX_BYTES) {
            gzclose(f);
            return hg_kerr(err, errlen, "%s: bad dimension %d", path, i);
        }
    }
    out->data = malloc((size_t)total);
    if (!out->data) {
        gzclose(f);
        return hg_kerr(err, errlen, "%s: cannot allocate %lld bytes", path,
                       (long long)total);
    }
    if (read_all(f, out->data, (size_t)total) != 0) {
        gzclose(f);
        hg_idx_free(out);
        return hg_kerr(err, errlen, "%s: truncated data (expected %lld bytes)",
                       path, (long long)total);
    }
    gzclose(f);
    return 0;
}

void hg_idx_free(struct hg_idx *idx)
{
    free(idx->data);
    idx->data = NULL;
}
