/* hg_cuda.h - private to kernels/: the CUDA backend probe.
 *
 * Declared for C and C++ (the implementation is CUDA C++ in device.cu).
 * Only built when configure found nvcc, cudart and cuBLAS (HG_HAVE_CUDA).
 */
#ifndef HG_CUDA_H
#define HG_CUDA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Number of usable GPUs.  0 when there is no device or no (or too old a)
 * driver, with the reason in err; -1 with a message on any other CUDA
 * error. */
int hg_cuda_device_count(char *err, size_t errlen);

/* Runs a vector-scale kernel and one cublasSgemm on device 0 and compares
 * both with CPU values.  0 if they agree, -1 with a message in err. */
int hg_cuda_selftest(char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
