/* test_cuda.c - the CUDA backend: a kernel and cuBLAS against CPU values.
 * SKIP (77) when built without CUDA or when no GPU is usable. */
#include <stdio.h>

#ifdef HG_HAVE_CUDA
#include "kernels/cuda/hg_cuda.h"
#endif

int main(void)
{
#ifndef HG_HAVE_CUDA
    printf("SKIP: built without CUDA (configure --with-cuda)\n");
    return 77;
#else
    char err[512] = "";
    int n = hg_cuda_device_count(err, sizeof err);
    if (n < 0) {
        fprintf(stderr, "FAIL: %s\n", err);
        return 1;
    }
    if (n == 0) {
        printf("SKIP: %s\n", err[0] ? err : "no CUDA device");
        return 77;
    }
    printf("%d CUDA device(s)\n", n);
    if (hg_cuda_selftest(err, sizeof err) != 0) {
        fprintf(stderr, "FAIL: %s\n", err);
        return 1;
    }
    printf("PASS: scale kernel and cublasSgemm match the CPU\n");
    return 0;
#endif
}
