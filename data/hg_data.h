/* hg_data.h - the data room. So far: IDX files (MNIST, Fashion-MNIST), the
 * raw input of `hgpreprocess images`; sharded HDF5 datasets come next. */
#ifndef HG_DATA_H
#define HG_DATA_H

#include <stddef.h>
#include <stdint.h>

/* An IDX file (optionally gzip-compressed): unsigned bytes, up to 4 dims. */
struct hg_idx {
    int ndim;
    int64_t dim[4];
    uint8_t *data; /* [dim[0] * ... * dim[ndim-1]] */
};

/* Loads path; on error returns -1 with a message naming the file. */
int hg_idx_load(const char *path, struct hg_idx *out, char *err, size_t errlen);
void hg_idx_free(struct hg_idx *idx);

#endif
