/* hg_cuda.h - the CUDA backend as the rest of the library sees it: device
 * probe, a context per device (stream, cuBLAS/cuDNN handles, the error word
 * kernels report bad ids through), device and pinned memory, copies.
 *
 * Declared for C and C++ (the implementation is CUDA C++ in kernels/cuda/).
 * Only built when configure found nvcc, cudart and cuBLAS (HG_HAVE_CUDA).
 * Every function that can fail returns -1 (or NULL) with a message in err
 * naming the CUDA call and its error string.
 */
#ifndef HG_CUDA_H
#define HG_CUDA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct hg_cuda_ctx; /* kernels/cuda/cuda-impl.h */

/* Number of usable GPUs.  0 when there is no device or no (or too old a)
 * driver, with the reason in err; -1 with a message on any other CUDA
 * error. */
int hg_cuda_device_count(char *err, size_t errlen);

/* Runs a vector-scale kernel and one cublasSgemm on device 0 and compares
 * both with CPU values.  0 if they agree, -1 with a message in err. */
int hg_cuda_selftest(char *err, size_t errlen);

/* Makes device d current for the calling thread (before NCCL or a context
 * is made for it). */
int hg_cuda_set_device(int device, char *err, size_t errlen);

/* "NVIDIA H100 80GB HBM3, sm_90, 132 SMs, 79.1 GiB" into buf. */
int hg_cuda_device_name(int device, char *buf, size_t len);

/* A context on one device: makes it current for the calling thread,
 * creates a non-blocking stream, a cuBLAS handle (default math mode: fp32
 * GEMMs in fp32, never TF32, so results stay within fp32 rounding of the
 * CPU's), a cuDNN handle when
 * built with cuDNN, and the device error word.  Kernels of hg_op_table's
 * .cuda column take it as ctx->dev. */
struct hg_cuda_ctx *hg_cuda_ctx_new(int device, char *err, size_t errlen);
void hg_cuda_ctx_free(struct hg_cuda_ctx *c);
/* The stream every kernel of c runs on (a cudaStream_t). */
void *hg_cuda_ctx_stream(struct hg_cuda_ctx *c);

/* Waits for everything queued on c's stream.  Then reports, once, the
 * first runtime error a kernel recorded (an embedding id or a loss target
 * outside its range: "node at position P: embedding: id ..."); clears it.
 * Returns 0 or -1 with the message. */
int hg_cuda_sync(struct hg_cuda_ctx *c, char *err, size_t errlen);
/* The position (ctx->pos) of the node that recorded the pending error,
 * -1 if none; valid after hg_cuda_sync returned -1. */
int hg_cuda_error_pos(const struct hg_cuda_ctx *c);
/* Launches the op kernels have queued on c so far: kernels, cuBLAS and
 * cuDNN calls, stream copies and sets (--profile-ops). */
unsigned long long hg_cuda_launches(const struct hg_cuda_ctx *c);

/* Device memory on c's device (cudaMalloc: never managed memory). */
void *hg_cuda_malloc(struct hg_cuda_ctx *c, size_t bytes, char *err, size_t errlen);
void hg_cuda_free(void *p);
/* Page-locked host memory (fast, asynchronous copies). */
void *hg_cuda_host_alloc(size_t bytes, char *err, size_t errlen);
void hg_cuda_host_free(void *p);

/* Copies queued on c's stream (asynchronous for pinned host memory: call
 * hg_cuda_sync before reading a device-to-host result). */
int hg_cuda_h2d(struct hg_cuda_ctx *c, void *dst, const void *src, size_t n,
                char *err, size_t errlen);
int hg_cuda_d2h(struct hg_cuda_ctx *c, void *dst, const void *src, size_t n,
                char *err, size_t errlen);
int hg_cuda_d2d(struct hg_cuda_ctx *c, void *dst, const void *src, size_t n,
                char *err, size_t errlen);
int hg_cuda_memset(struct hg_cuda_ctx *c, void *dst, int value, size_t n,
                   char *err, size_t errlen);

/* Flat blocks on the device (kernels/cuda/blocks.cu): the sum of squares
 * in double, in an order that does not change from run to run (waits for
 * the stream); y[n] += x[n] (queued). */
int hg_cuda_sumsq(struct hg_cuda_ctx *c, const float *x, size_t n, double *out,
                  char *err, size_t errlen);
int hg_cuda_accumulate(struct hg_cuda_ctx *c, float *y, const float *x, size_t n,
                char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
