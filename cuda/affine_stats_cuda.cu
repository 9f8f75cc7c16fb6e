/* affine_stats_cuda.cu — see affine_stats_cuda.cuh. CUDA back end. */
#include "affine_stats_cuda.cuh"

#include <math.h>

#include "cuda_check.h"

namespace {

constexpr int kThreads = 256; /* the block reduction assumes 8 full warps */
constexpr int kWarps = kThreads / 32;

__device__ NwImageStatsCuda stats_empty()
{
  NwImageStatsCuda s;
  s.sum = 0.0;
  s.n = 0;
  s.lo = s.all_lo = INFINITY;
  s.hi = s.all_hi = -INFINITY;
  s.fractional = 0;
  return s;
}

__device__ void stats_merge(NwImageStatsCuda *s, const NwImageStatsCuda &p)
{
  s->sum += p.sum;
  s->n += p.n;
  s->lo = fminf(s->lo, p.lo);
  s->hi = fmaxf(s->hi, p.hi);
  s->all_lo = fminf(s->all_lo, p.all_lo);
  s->all_hi = fmaxf(s->all_hi, p.all_hi);
  s->fractional += p.fractional;
}

__device__ NwImageStatsCuda shfl_down(const NwImageStatsCuda &s, int o)
{
  NwImageStatsCuda t;
  t.sum = __shfl_down_sync(0xffffffffu, s.sum, o);
  t.n = __shfl_down_sync(0xffffffffu, s.n, o);
  t.lo = __shfl_down_sync(0xffffffffu, s.lo, o);
  t.hi = __shfl_down_sync(0xffffffffu, s.hi, o);
  t.all_lo = __shfl_down_sync(0xffffffffu, s.all_lo, o);
  t.all_hi = __shfl_down_sync(0xffffffffu, s.all_hi, o);
  t.fractional = __shfl_down_sync(0xffffffffu, s.fractional, o);
  return t;
}

/* s merged over the block in a fixed order (lanes by halves, then the warps in order); thread
 * 0 returns the block's. Every thread calls it. */
__device__ NwImageStatsCuda block_merge(NwImageStatsCuda s)
{
  __shared__ NwImageStatsCuda warp_stats[kWarps];
  for (int o = 16; o > 0; o >>= 1)
    stats_merge(&s, shfl_down(s, o));
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0)
    warp_stats[warp] = s;
  __syncthreads();
  if (threadIdx.x == 0)
    for (int w = 1; w < kWarps; w++)
      stats_merge(&s, warp_stats[w]);
  return s;
}

struct Images {
  const float *image[2], *mask[2];
  unsigned int n[2];
};

/* Pass 1: image blockIdx.y, each block's statistics over its grid-stride share of the voxels
 * into partials[blockIdx.y * kNwStatsBlocks + blockIdx.x]. */
__global__ void __launch_bounds__(kThreads)
    stats_partial_kernel(Images in, NwImageStatsCuda *partials)
{
  const int i = blockIdx.y;
  const float *__restrict__ v = in.image[i];
  const float *__restrict__ mask = in.mask[i];
  const unsigned int n = in.n[i], stride = gridDim.x * blockDim.x;
  NwImageStatsCuda s = stats_empty();
  unsigned int count = 0, fractional = 0; /* < 2^31 voxels */
  for (unsigned int e = blockIdx.x * blockDim.x + threadIdx.x; e < n; e += stride) {
    const float x = __ldg(v + e);
    s.all_lo = fminf(s.all_lo, x);
    s.all_hi = fmaxf(s.all_hi, x);
    fractional += x != floorf(x);
    if (mask != nullptr && !(__ldg(mask + e) >= 0.5f))
      continue;
    s.sum += (double)x;
    count++;
    s.lo = fminf(s.lo, x);
    s.hi = fmaxf(s.hi, x);
  }
  s.n = count;
  s.fractional = fractional;
  s = block_merge(s);
  if (threadIdx.x == 0)
    partials[i * kNwStatsBlocks + blockIdx.x] = s;
}

/* Pass 2: block i merges image i's partials in a fixed order into out[i]. */
__global__ void __launch_bounds__(kThreads)
    stats_final_kernel(const NwImageStatsCuda *partials, NwImageStatsCuda *out)
{
  NwImageStatsCuda s = stats_empty();
  for (int b = threadIdx.x; b < kNwStatsBlocks; b += blockDim.x)
    stats_merge(&s, partials[blockIdx.x * kNwStatsBlocks + b]);
  s = block_merge(s);
  if (threadIdx.x == 0)
    out[blockIdx.x] = s;
}

} // namespace

cudaError_t nw_affine_stats_cuda(NwImageStatsCuda *out, NwImageStatsCuda *partials,
                                 const float *const image[2], const float *const mask[2],
                                 const unsigned int n[2], cudaStream_t stream)
{
  const Images in = {{image[0], image[1]}, {mask[0], mask[1]}, {n[0], n[1]}};
  stats_partial_kernel<<<dim3(kNwStatsBlocks, 2), kThreads, 0, stream>>>(in, partials);
  const cudaError_t e = nw_cuda_launched(stream);
  if (e != cudaSuccess)
    return e;
  stats_final_kernel<<<2, kThreads, 0, stream>>>(partials, out);
  return nw_cuda_launched(stream);
}
