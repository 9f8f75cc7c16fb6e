/* smooth_kernels.cuh — one separable Gaussian pass over an interleaved volume on the GPU:
 * the kernels of the "smooth" method (smooth_cuda.cu), the twin of one axis of
 * nw_smooth_gaussian (core/smooth.c). CUDA back end; the caller's stream.
 *
 * Layout (volume.h): data[((k * ny + j) * nx + i) * nc + c]. Taps are summed in ascending
 * order into a float accumulator with separately rounded multiply and add (__fmul_rn /
 * __fadd_rn, so nvcc cannot fuse them), borders clamp: the result equals the CPU's pass bit
 * for bit on IEEE hosts. Parity test: tests/test_cuda_gauss_kernels.cu. */
#ifndef NW_SMOOTH_KERNELS_CUH
#define NW_SMOOTH_KERNELS_CUH

#include <cuda_runtime.h>

#include "smooth.h"

/* At most this many components per voxel (the x pass's tile holds every component of a row
 * segment: (256 / nc + 2 * 32) * nc floats, 16.6 KB at 64 components); rows of nx * nc floats
 * must fit an int. */
#define NW_SMOOTH_MAX_COMPONENTS 64

/* dst = src smoothed along axis (0 = x, 1 = y, 2 = z) with kernel k (radius >= 1). dst and
 * src are distinct device buffers of nx * ny * nz * nc floats. Returns the launch status
 * (nw_cuda_launched). */
cudaError_t nw_smooth_pass_cuda(float *dst, const float *src, int nx, int ny, int nz, int nc,
                                int axis, const NwGaussKernel *k, cudaStream_t stream);

#endif
