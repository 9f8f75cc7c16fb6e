/* pyramid_cuda.cuh — one pyramid level on the GPU: the twin of nw_downsample2 (core/resample.c)
 * for a scalar volume, equal to it bit for bit. CUDA back end; the caller's stream.
 *
 * nw_downsample2 smooths with a Gaussian of one voxel along every axis longer than one voxel
 * (nw_smooth_gaussian: passes x, y, z, clamped borders) and samples the result trilinearly at
 * fine index 2o + 0.5 (the last coarse voxel of an odd axis clamps to the last fine one). The
 * passes here are the "smooth" method's (smooth_kernels.cuh, bit for bit the CPU's), the
 * sampling repeats sampler.c's float arithmetic in its order with separately rounded
 * operations. Parity test: /cuda/affine-cost/pyramid (tests/test_cuda_affine_cost.c). */
#ifndef NW_PYRAMID_CUDA_CUH
#define NW_PYRAMID_CUDA_CUH

#include <cuda_runtime.h>

/* dst (the coarse level: (n + 1) / 2 along every axis of n > 1) from src (nx x ny x nz
 * floats). scratch: two device buffers of nx * ny * nz floats, distinct from src and dst.
 * Returns the launch status (nw_cuda_launched). */
cudaError_t nw_downsample2_cuda(float *dst, const float *src, int nx, int ny, int nz,
                                float *const scratch[2], cudaStream_t stream);

#endif
