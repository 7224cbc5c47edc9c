/* data-impl.h - private to the data room: dtype <-> HDF5 type mapping.
 * Shard layout: docs/data.md. */
#ifndef HG_DATA_IMPL_H
#define HG_DATA_IMPL_H

#include <hdf5.h>

#include "data/hg_data.h"
#include "kernels/hg_kernels.h"

/* The on-disk type we write for a dtype; -1 for dtypes shards do not hold. */
static inline hid_t hg__h5_file_type(enum hg_dtype dt)
{
    switch (dt) {
    case HG_U8: return H5T_STD_U8LE;
    case HG_I8: return H5T_STD_I8LE;
    case HG_I32: return H5T_STD_I32LE;
    case HG_I64: return H5T_STD_I64LE;
    case HG_F32: return H5T_IEEE_F32LE;
    default: return -1;
    }
}

/* The in-memory type HDF5 converts to (byte order of this machine). */
static inline hid_t hg__h5_mem_type(enum hg_dtype dt)
{
    switch (dt) {
    case HG_U8: return H5T_NATIVE_UINT8;
    case HG_I8: return H5T_NATIVE_INT8;
    case HG_I32: return H5T_NATIVE_INT32;
    case HG_I64: return H5T_NATIVE_INT64;
    case HG_F32: return H5T_NATIVE_FLOAT;
    default: return -1;
    }
}

static inline int hg__dtype_is_int(enum hg_dtype dt)
{
    return dt == HG_U8 || dt == HG_I8 || dt == HG_I32 || dt == HG_I64;
}

/* Silences HDF5's automatic error printing: we write our own messages.
 * A thread-safe HDF5 keeps the setting per thread, so every thread that
 * reads (the loader's prefetch thread) calls this; once per thread. */
static inline void hg__h5_quiet(void)
{
    static _Thread_local int quiet;
    if (!quiet) {
        H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
        quiet = 1;
    }
}

/* The fields a dataset was opened with (dataset.c), for the loader. */
struct hg_dataset;
int hg__dataset_nfields(const struct hg_dataset *ds);
void hg__dataset_field(const struct hg_dataset *ds, int field,
                       enum hg_field_kind *kind, enum hg_dtype *dtype);

#endif
