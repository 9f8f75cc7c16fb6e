/* live_reduce.cuh — block means of a live frame on the GPU, the device twin of
 * core/live_reduce.h (nw_live_reduce): reduced voxel (i, j, k) averages the f[0] x f[1] x f[2]
 * fine voxels from (f*i, f*j, f*k), summed in z, y, x order in float as the CPU loops do, so
 * both give the same bits; a displacement in fine voxels (xyz of a float4) is divided by the
 * factor per axis. Used by the host download of the front (live_front.cu) and by the
 * interop fill of reduced field textures and surfaces (cuda_gl.cu). Device code only. */
#ifndef NW_LIVE_REDUCE_CUH
#define NW_LIVE_REDUCE_CUH

#include <cuda_runtime.h>

/* The fine grid's rows (nx, ny), the factors and the reduced dims (nw_live_reduce_grid). */
struct NwReduceGrid {
  int nx, ny;
  int f[3];
  int d[3];
};

__device__ __forceinline__ size_t nw_reduce_src(const NwReduceGrid &g, int i, int j, int k,
                                                int dx, int dy, int dz)
{
  return ((size_t)(g.f[2] * k + dz) * g.ny + (g.f[1] * j + dy)) * g.nx + (g.f[0] * i + dx);
}

__device__ __forceinline__ float nw_reduce_image_at(const float *__restrict__ image,
                                                    const NwReduceGrid &g, int i, int j, int k)
{
  float s = 0.0f;
  for (int dz = 0; dz < g.f[2]; dz++)
    for (int dy = 0; dy < g.f[1]; dy++)
      for (int dx = 0; dx < g.f[0]; dx++)
        s += image[nw_reduce_src(g, i, j, k, dx, dy, dz)];
  return s / (float)(g.f[0] * g.f[1] * g.f[2]);
}

__device__ __forceinline__ float3 nw_reduce_field_at(const float4 *__restrict__ field,
                                                     const NwReduceGrid &g, int i, int j, int k)
{
  float sx = 0.0f, sy = 0.0f, sz = 0.0f;
  for (int dz = 0; dz < g.f[2]; dz++)
    for (int dy = 0; dy < g.f[1]; dy++)
      for (int dx = 0; dx < g.f[0]; dx++) {
        const float4 u = field[nw_reduce_src(g, i, j, k, dx, dy, dz)];
        sx += u.x;
        sy += u.y;
        sz += u.z;
      }
  const float count = (float)(g.f[0] * g.f[1] * g.f[2]);
  return make_float3(sx / count / (float)g.f[0], sy / count / (float)g.f[1],
                     sz / count / (float)g.f[2]);
}

/* The reduced voxel of this thread in a one-thread-per-reduced-voxel launch: its index `at`
 * (x fastest) and (i, j, k); false for the threads past the last voxel. */
__device__ __forceinline__ bool nw_reduce_thread(const NwReduceGrid &g, size_t *at, int *i,
                                                 int *j, int *k)
{
  *at = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (*at >= (size_t)g.d[0] * g.d[1] * g.d[2])
    return false;
  *i = (int)(*at % g.d[0]);
  *j = (int)(*at / g.d[0] % g.d[1]);
  *k = (int)(*at / ((size_t)g.d[0] * g.d[1]));
  return true;
}

#endif
