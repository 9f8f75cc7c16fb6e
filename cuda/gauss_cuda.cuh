/* gauss_cuda.cuh — separable Gaussian smoothing of float4 fields on the GPU, the twin of
 * nw_smooth_gaussian (core/smooth.c) for vector fields. CUDA back end; the caller's stream.
 *
 * Passes along x, then y, then z, each reading the previous pass's output; weights from
 * nw_gauss_kernel; taps summed in ascending order from a zero float accumulator, borders
 * clamped — the CPU's order, so results agree to rounding (nvcc may fuse multiply-adds).
 * Every pass stages its input in shared memory: along x a row segment; along y and z a
 * tile of 32 consecutive x by the axis segment plus halo, so every global load and store is
 * a coalesced run of 32 float4 (512 bytes). Parity test: tests/test_cuda_gauss_kernels.cu. */
#ifndef NW_GAUSS_CUDA_CUH
#define NW_GAUSS_CUDA_CUH

#include <cuda_runtime.h>

#include "field_device.cuh"
#include "smooth.h"

/* Smooth the field in *data with kernels k[0..2] (one per axis; radius 0 skips an axis, as do
 * axes of size 1). Passes ping-pong between *data and *scratch; on return *data holds the
 * result (the two pointers may have been swapped). When d_max_norm is not NULL, max |result|
 * (Euclidean norm of x, y, z) is also written there, computed by the last pass as it stores
 * its output — one pass over the field fewer than a separate reduction. */
cudaError_t nw_gauss3_float4(float4 **data, float4 **scratch, const NwGrid &g,
                             const NwGaussKernel k[3], float *d_max_norm, cudaStream_t stream);

#endif
