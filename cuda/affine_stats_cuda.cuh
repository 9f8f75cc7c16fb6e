/* affine_stats_cuda.cuh — the statistics of an affine cost's level on the device (the CUDA
 * cost's level_stats, affine_cost.h): what nw_affine_cost_set_level computes on the host for
 * the other back ends, read where the level's images already are. CUDA back end; the
 * caller's stream.
 *
 * Per image, over the voxels where its mask is >= 0.5 (all without one): the sum (double),
 * the count, the smallest and largest value; over all its voxels: the smallest and largest
 * value and how many are not integers (the u16 quantisation's, affine_quant.h). The count,
 * the extremes and the integer test are exact, so equal to the host's; the sum is added in
 * another order than the host's chunks (a fixed one: the same on every run and device), so
 * the level's shift (the mean) may differ from the CPU twin's in its last bits. */
#ifndef NW_AFFINE_STATS_CUDA_CUH
#define NW_AFFINE_STATS_CUDA_CUH

#include <cuda_runtime.h>

struct NwImageStatsCuda {
  double sum;                    /* over the mask */
  unsigned long long n;          /* voxels in the mask */
  float lo, hi;                  /* over the mask; +inf and -inf when it holds none */
  float all_lo, all_hi;          /* over every voxel */
  unsigned long long fractional; /* voxels that are not integers */
};

/* Blocks per image of the first pass: a constant, so the sums' order is too. */
constexpr int kNwStatsBlocks = 512;

/* The statistics of two images at once (a level's fixed and moving): image[i] of n[i] voxels,
 * mask[i] on its grid or NULL, into out[2] (device-visible memory, e.g. mapped pinned);
 * partials: device scratch of 2 * kNwStatsBlocks. Asynchronous: synchronise the stream before
 * reading out. Returns the launch status (nw_cuda_launched). */
cudaError_t nw_affine_stats_cuda(NwImageStatsCuda *out, NwImageStatsCuda *partials,
                                 const float *const image[2], const float *const mask[2],
                                 const unsigned int n[2], cudaStream_t stream);

#endif
