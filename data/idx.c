/* idx.c - IDX reader (LeCun's MNIST format), plain or gzip. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/hg_base.h"
#include "data/hg_data.h"

/* A sanity bound: no real IDX file is near this, a corrupt header can be. */
#define HG_IDX_MAX_BYTES ((int64_t)1 << 34)

int hg_idx_parse(const void *buf, size_t len, const char *name,
                 struct hg_idx *out, char *err, size_t errlen)
{
    const unsigned char *h = buf;
    memset(out, 0, sizeof(*out));
    if (len < 4)
        return hg_kerr(err, errlen, "%s: truncated header", name);
    /* magic: 0 0 type ndim; type 0x08 = unsigned byte */
    if (h[0] != 0 || h[1] != 0 || h[2] != 0x08 || h[3] < 1 || h[3] > 4)
        return hg_kerr(err, errlen,
                       "%s: not an unsigned-byte IDX file (magic %02x%02x%02x%02x)",
                       name, h[0], h[1], h[2], h[3]);
    int ndim = h[3];
    size_t head = 4 + 4 * (size_t)ndim;
    if (len < head)
        return hg_kerr(err, errlen, "%s: truncated header", name);
    int64_t total = 1;
    for (int i = 0; i < ndim; i++) {
        const unsigned char *d = h + 4 + 4 * i;
        int64_t v = ((int64_t)d[0] << 24) | (d[1] << 16) | (d[2] << 8) | d[3];
        if (v <= 0 || v > HG_IDX_MAX_BYTES / total)
            return hg_kerr(err, errlen, "%s: bad dimension %d (%lld)", name, i,
                           (long long)v);
        total *= v;
        out->dim[i] = v;
    }
    if ((uint64_t)(len - head) < (uint64_t)total)
        return hg_kerr(err, errlen,
                       "%s: truncated data (expected %lld bytes, found %zu)",
                       name, (long long)total, len - head);
    if ((uint64_t)(len - head) > (uint64_t)total)
        return hg_kerr(err, errlen, "%s: %zu trailing bytes after the data", name,
                       (size_t)(len - head - (size_t)total));
    out->data = malloc((size_t)total);
    if (!out->data)
        return hg_kerr(err, errlen, "%s: cannot allocate %lld bytes", name,
                       (long long)total);
    memcpy(out->data, h + head, (size_t)total);
    out->ndim = ndim;
    return 0;
}

int hg_idx_load(const char *path, struct hg_idx *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    gzFile f = gzopen(path, "rb");
    if (!f)
        return hg_kerr(err, errlen, "%s: cannot open", path);
    /* read everything (gzip or plain), then parse: one code path */
    size_t cap = 1 << 20, len = 0;
    unsigned char *buf = malloc(cap);
    int rc = 0;
    while (buf) {
        if (len == cap) {
            if (cap >= (size_t)HG_IDX_MAX_BYTES) {
                rc = hg_kerr(err, errlen, "%s: larger than %lld bytes", path,
                             (long long)HG_IDX_MAX_BYTES);
                break;
            }
            unsigned char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        int r = gzread(f, buf + len, (unsigned)(cap - len > (1u << 30) ? (1u << 30) : cap - len));
        if (r < 0) {
            int zerr;
            const char *msg = gzerror(f, &zerr);
            rc = hg_kerr(err, errlen, "%s: read error: %s (truncated or corrupt?)",
                         path, msg);
            break;
        }
        if (r == 0)
            break;
        len += (size_t)r;
    }
    gzclose(f);
    if (!buf)
        return hg_kerr(err, errlen, "%s: out of memory", path);
    if (rc == 0)
        rc = hg_idx_parse(buf, len, path, out, err, errlen);
    free(buf);
    return rc;
}

void hg_idx_free(struct hg_idx *idx)
{
    free(idx->data);
    idx->data = NULL;
}
