/* hg_h5.h - scalar attributes of the HDF5 files this project writes
 * (data/h5attr.c).  Every function returns -1 (NULL) on an HDF5 failure or,
 * reading, an absent attribute; the caller names the file. */
#ifndef HG_H5_H
#define HG_H5_H

#include <stddef.h>
#include <stdint.h>

#include <hdf5.h>

/* A scalar attribute stored as file_t from memory of type mem_t. */
int hg_h5_attr_write(hid_t loc, const char *name, hid_t file_t, hid_t mem_t, const void *v);
int hg_h5_attr_i64(hid_t loc, const char *name, int64_t v);   /* little-endian i64 */
int hg_h5_attr_f64(hid_t loc, const char *name, double v);    /* little-endian f64 */
int hg_h5_attr_str(hid_t loc, const char *name, const char *v); /* fixed-length */
/* A scalar attribute read as mem_t. */
int hg_h5_attr_read(hid_t loc, const char *name, hid_t mem_t, void *v);
int hg_h5_read_i64(hid_t loc, const char *name, int64_t *v);
int hg_h5_read_f64(hid_t loc, const char *name, double *v);
/* A malloc'ed fixed-length string attribute; NULL if absent or another type. */
char *hg_h5_read_str(hid_t loc, const char *name);

/* CRC-32 (IEEE 802.3, zlib's) of n more bytes after crc (0 to start). */
uint32_t hg_crc32_update(uint32_t crc, const void *buf, size_t n);
/* CRC-32 of n floats as their little-endian bytes (the file's order). */
uint32_t hg_crc32_f32(const float *x, size_t n);

#endif
