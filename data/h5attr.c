/* h5attr.c - scalar attributes and CRC-32s of the HDF5 files this project
 * writes (checkpoints: controller/checkpoint.c; policy files:
 * planner/policy.c; both rooms may use data/): one definition of how a
 * number or a string is stored and read back, and of a tensor's check
 * sum. */
#include <stdlib.h>
#include <string.h>

#include "data/hg_h5.h"

/* A scalar attribute stored as file_t from memory of type mem_t. */
int hg_h5_attr_write(hid_t loc, const char *name, hid_t file_t, hid_t mem_t,
                      const void *v)
{
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(loc, name, file_t, sp, H5P_DEFAULT, H5P_DEFAULT);
    herr_t rc = a < 0 ? -1 : H5Awrite(a, mem_t, v);
    if (a >= 0)
        H5Aclose(a);
    H5Sclose(sp);
    return rc < 0 ? -1 : 0;
}

int hg_h5_attr_i64(hid_t loc, const char *name, int64_t v)
{
    return hg_h5_attr_write(loc, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &v);
}

int hg_h5_attr_f64(hid_t loc, const char *name, double v)
{
    return hg_h5_attr_write(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &v);
}

int hg_h5_attr_str(hid_t loc, const char *name, const char *v)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, strlen(v) + 1);
    int rc = hg_h5_attr_write(loc, name, t, t, v);
    H5Tclose(t);
    return rc;
}

/* A scalar attribute read as mem_t; -1 if absent or unreadable. */
int hg_h5_attr_read(hid_t loc, const char *name, hid_t mem_t, void *v)
{
    if (H5Aexists(loc, name) <= 0)
        return -1;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    herr_t rc = a < 0 ? -1 : H5Aread(a, mem_t, v);
    if (a >= 0)
        H5Aclose(a);
    return rc < 0 ? -1 : 0;
}

int hg_h5_read_i64(hid_t loc, const char *name, int64_t *v)
{
    return hg_h5_attr_read(loc, name, H5T_NATIVE_INT64, v);
}

int hg_h5_read_f64(hid_t loc, const char *name, double *v)
{
    return hg_h5_attr_read(loc, name, H5T_NATIVE_DOUBLE, v);
}

/* malloc'ed string attribute, NULL if absent or not a string */
char *hg_h5_read_str(hid_t loc, const char *name)
{
    if (H5Aexists(loc, name) <= 0)
        return NULL;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a < 0)
        return NULL;
    hid_t t = H5Aget_type(a);
    char *s = NULL;
    if (H5Tget_class(t) == H5T_STRING && !H5Tis_variable_str(t)) {
        size_t n = H5Tget_size(t);
        s = calloc(n + 1, 1);
        if (s && H5Aread(a, t, s) < 0) {
            free(s);
            s = NULL;
        }
    }
    H5Tclose(t);
    H5Aclose(a);
    return s;
}


/* CRC-32 (IEEE 802.3, zlib's), one table, built on first use. Threads:
 * one thread per process saves and loads (rank 0's; each rank's for its
 * shard). */
static uint32_t crc_table[256];

uint32_t hg_crc32_update(uint32_t crc, const void *buf, size_t n)
{
    if (crc_table[1] == 0)
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++)
                c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            crc_table[i] = c;
        }
    const unsigned char *p = buf;
    crc = ~crc;
    while (n--)
        crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

/* CRC-32 of n floats as their little-endian bytes (the file's order) */
uint32_t hg_crc32_f32(const float *x, size_t n)
{
    uint32_t crc = 0;
    unsigned char b[1024];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t v;
        memcpy(&v, &x[i], 4);
        b[k++] = (unsigned char)v, b[k++] = (unsigned char)(v >> 8);
        b[k++] = (unsigned char)(v >> 16), b[k++] = (unsigned char)(v >> 24);
        if (k == sizeof(b)) {
            crc = hg_crc32_update(crc, b, k);
            k = 0;
        }
    }
    return hg_crc32_update(crc, b, k);
}
