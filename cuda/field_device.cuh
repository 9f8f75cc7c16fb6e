/* field_device.cuh — device helpers shared by the CUDA field kernels: float4 arithmetic, the
 * grid type, clamped trilinear gathers through the read-only cache, central-difference
 * gradients and the Jacobian determinant. CUDA back end; include from .cu files only.
 *
 * Every helper reproduces its CPU reference line by line so parity tests can be tight:
 *   trilinear  — core/resample.c: clamp the coordinate to [0, n-1], i0 = floor, i1 =
 *                min(i0 + 1, n - 1), interpolate along x, then y, then z as a + f (b - a);
 *   gradient   — core/cpu/demons_cpu.c gradient_at: central differences in voxel units,
 *                one-sided at the borders, 0 along axes of size 1;
 *   jacobian   — core/field.c: det(I + ∇u) with the same differences.
 * Fields are float4 (x, y, z, unused) in voxel units: the array-of-structures layout gives
 * one 16-byte load per voxel. */
#ifndef NW_FIELD_DEVICE_CUH
#define NW_FIELD_DEVICE_CUH

#include <cub/block/block_reduce.cuh>
#include <cuda/functional>
#include <cuda_runtime.h>

/* Voxel grid dimensions; index e = (k * ny + j) * nx + i. */
struct NwGrid {
  int nx, ny, nz;
  __host__ __device__ long long n() const { return (long long)nx * ny * nz; }
  __device__ long long index(int i, int j, int k) const
  {
    return ((long long)k * ny + j) * nx + i;
  }
};

__device__ __forceinline__ float4 operator+(float4 a, float4 b)
{
  return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
}
__device__ __forceinline__ float4 operator-(float4 a, float4 b)
{
  return make_float4(a.x - b.x, a.y - b.y, a.z - b.z, a.w - b.w);
}
__device__ __forceinline__ float4 operator*(float s, float4 a)
{
  return make_float4(s * a.x, s * a.y, s * a.z, s * a.w);
}
__device__ __forceinline__ float norm3(float4 a)
{
  return sqrtf(a.x * a.x + a.y * a.y + a.z * a.z);
}

__device__ __forceinline__ int clamp_int(int q, int lo, int hi)
{
  return q < lo ? lo : (q > hi ? hi : q);
}

/* One thread per voxel without index divisions (64-bit division costs dozens of
 * instructions): threads along i, one grid row per (j, k). Launch with nw_voxel_grid(g) and
 * NW_VOXEL_THREADS threads; voxel_of_thread is FALSE for the padding threads of a row. */
#define NW_VOXEL_THREADS 128
static inline dim3 nw_voxel_grid(const NwGrid &g)
{
  return dim3((unsigned)((g.nx + NW_VOXEL_THREADS - 1) / NW_VOXEL_THREADS), (unsigned)g.ny,
              (unsigned)g.nz);
}
__device__ __forceinline__ bool voxel_of_thread(const NwGrid &g, int &i, int &j, int &k,
                                                long long &e)
{
  i = blockIdx.x * blockDim.x + threadIdx.x;
  j = blockIdx.y;
  k = blockIdx.z;
  e = ((long long)k * g.ny + j) * g.nx + i;
  return i < g.nx;
}

/* Blocks of `threads` threads for one thread per element of n (at least one block). */
static inline unsigned nw_blocks_for(long long n, int threads)
{
  const long long b = (n + threads - 1) / threads;
  return (unsigned)(b < 1 ? 1 : b);
}

/* Block maximum of m (non-negative), then one atomicMax on the float's bits into *max_bits:
 * non-negative IEEE floats order like their unsigned bit patterns. Every thread of the
 * BX x BY block must call it. */
template <int BX, int BY>
__device__ __forceinline__ void nw_block_max_to(unsigned *max_bits, float m)
{
  typedef cub::BlockReduce<float, BX, cub::BLOCK_REDUCE_WARP_REDUCTIONS, BY> Reduce;
  __shared__ typename Reduce::TempStorage tmp;
  const float b = Reduce(tmp).Reduce(m, cuda::maximum<>{});
  if (threadIdx.x == 0 && threadIdx.y == 0)
    atomicMax(max_bits, __float_as_uint(b));
}

/* Linear voxel index -> (i, j, k). */
__device__ __forceinline__ void unravel(const NwGrid &g, long long e, int &i, int &j, int &k)
{
  i = (int)(e % g.nx);
  long long t = e / g.nx;
  j = (int)(t % g.ny);
  k = (int)(t / g.ny);
}

/* The clamp-and-split of resample.c, the position x in float (the GPU samplers) or in double
 * (resample.c's own, where a kernel must give its bits): the fraction rounded to float. */
template <typename R>
__device__ __forceinline__ void clamp_split(R x, int n, int &i0, int &i1, float &f)
{
  const R hi = (R)(n - 1);
  x = x < (R)0 ? (R)0 : (x > hi ? hi : x);
  const int i = (int)floor(x);
  i0 = i;
  i1 = i + 1 < n ? i + 1 : n - 1;
  f = (float)(x - (R)i);
}

template <typename T> __device__ __forceinline__ T lerp_(T a, T b, float f)
{
  return a + f * (b - a);
}

template <typename T> __device__ __forceinline__ T load_ro(const T *p)
{
  return __ldg(p);
}

/* Trilinear sample of d at continuous voxel position (x, y, z), clamped. T is float or
 * float4. Gathers go through the read-only data cache (__ldg). */
template <typename T>
__device__ __forceinline__ T sample_trilinear(const T *__restrict__ d, const NwGrid &g, float x,
                                              float y, float z)
{
  int x0, x1, y0, y1, z0, z1;
  float fx, fy, fz;
  clamp_split(x, g.nx, x0, x1, fx);
  clamp_split(y, g.ny, y0, y1, fy);
  clamp_split(z, g.nz, z0, z1, fz);
  const long long r00 = ((long long)z0 * g.ny + y0) * g.nx, r10 = ((long long)z0 * g.ny + y1) * g.nx;
  const long long r01 = ((long long)z1 * g.ny + y0) * g.nx, r11 = ((long long)z1 * g.ny + y1) * g.nx;
  const T c00 = lerp_(load_ro(d + r00 + x0), load_ro(d + r00 + x1), fx);
  const T c10 = lerp_(load_ro(d + r10 + x0), load_ro(d + r10 + x1), fx);
  const T c01 = lerp_(load_ro(d + r01 + x0), load_ro(d + r01 + x1), fx);
  const T c11 = lerp_(load_ro(d + r11 + x0), load_ro(d + r11 + x1), fx);
  const T c0 = lerp_(c00, c10, fy);
  const T c1 = lerp_(c01, c11, fy);
  return lerp_(c0, c1, fz);
}

/* Nearest-neighbour sample (halves round up), for label maps. */
__device__ __forceinline__ float sample_nearest(const float *__restrict__ d, const NwGrid &g,
                                                float x, float y, float z)
{
  const int i = clamp_int((int)floorf(x + 0.5f), 0, g.nx - 1);
  const int j = clamp_int((int)floorf(y + 0.5f), 0, g.ny - 1);
  const int k = clamp_int((int)floorf(z + 0.5f), 0, g.nz - 1);
  return __ldg(d + (((long long)k * g.ny + j) * g.nx + i));
}

/* Neighbour offsets and divisors along one axis for central differences: lo/hi index steps
 * (0 at a border) and 1 / (hi - lo); inv = 0 along an axis of size 1. */
struct NwDiff {
  long long lo, hi;
  float inv;
};

__device__ __forceinline__ NwDiff diff_axis(int p, int n, long long stride)
{
  NwDiff d;
  if (n == 1) {
    d.lo = d.hi = 0;
    d.inv = 0.0f;
    return d;
  }
  const int lo = p > 0 ? p - 1 : p, hi = p < n - 1 ? p + 1 : p;
  d.lo = (long long)(lo - p) * stride;
  d.hi = (long long)(hi - p) * stride;
  d.inv = 1.0f / (float)(hi - lo);
  return d;
}

/* Gradient of scalar f at voxel (i, j, k) with linear index e. */
__device__ __forceinline__ float3 gradient(const float *__restrict__ f, const NwGrid &g, int i,
                                           int j, int k, long long e)
{
  const NwDiff dx = diff_axis(i, g.nx, 1), dy = diff_axis(j, g.ny, g.nx),
               dz = diff_axis(k, g.nz, (long long)g.nx * g.ny);
  return make_float3((__ldg(f + e + dx.hi) - __ldg(f + e + dx.lo)) * dx.inv,
                     (__ldg(f + e + dy.hi) - __ldg(f + e + dy.lo)) * dy.inv,
                     (__ldg(f + e + dz.hi) - __ldg(f + e + dz.lo)) * dz.inv);
}

/* det(I + ∇u) at voxel (i, j, k), ∇ as in gradient(). Row c, column a: ∂u_c/∂x_a. */
__device__ __forceinline__ float jacobian_det(const float4 *__restrict__ u, const NwGrid &g,
                                              int i, int j, int k, long long e)
{
  const NwDiff d[3] = {diff_axis(i, g.nx, 1), diff_axis(j, g.ny, g.nx),
                       diff_axis(k, g.nz, (long long)g.nx * g.ny)};
  float m[3][3];
#pragma unroll
  for (int a = 0; a < 3; a++) {
    const float4 h = __ldg(u + e + d[a].hi), l = __ldg(u + e + d[a].lo);
    m[0][a] = (h.x - l.x) * d[a].inv + (a == 0 ? 1.0f : 0.0f);
    m[1][a] = (h.y - l.y) * d[a].inv + (a == 1 ? 1.0f : 0.0f);
    m[2][a] = (h.z - l.z) * d[a].inv + (a == 2 ? 1.0f : 0.0f);
  }
  return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
         m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
         m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
}

#endif
