/* pyramid_cuda.cu — see pyramid_cuda.cuh. CUDA back end. */
#include "pyramid_cuda.cuh"

#include "cuda_check.h"
#include "smooth.h"
#include "smooth_kernels.cuh"

namespace {

/* sampler.c's clamp_split for the positions nw_downsample2 asks for (o * scale + offset):
 * the lower index, the upper one and the weight of the upper. */
struct Split {
  int i0, i1;
  float f;
};

__device__ __forceinline__ Split split_at(int o, int n)
{
  if (n == 1)
    return {0, 0, 0.0f}; /* an axis of one voxel is not halved */
  const int i = 2 * o;   /* position 2o + 0.5 */
  if (i + 1 > n - 1)     /* past the last voxel centre: clamped to it, weight 0 */
    return {n - 1, n - 1, 0.0f};
  return {i, i + 1, 0.5f};
}

__device__ __forceinline__ float lerp_rn(float a, float b, float f)
{
  return __fadd_rn(a, __fmul_rn(f, __fsub_rn(b, a))); /* a + f (b - a), as sampler.c */
}

__global__ void decimate2_kernel(float *__restrict__ out, const float *__restrict__ in, int nx,
                                 int ny, int nz, int ox, int oy, int oz)
{
  const long long n_out = (long long)ox * oy * oz;
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < n_out;
       e += (long long)gridDim.x * blockDim.x) {
    const int i = (int)(e % ox), j = (int)((e / ox) % oy), k = (int)(e / ((long long)ox * oy));
    const Split x = split_at(i, nx), y = split_at(j, ny), z = split_at(k, nz);
    auto at = [&](int a, int b, int c) { return in[((size_t)c * ny + b) * nx + a]; };
    /* along x, then y, then z: sampler.c's order */
    const float c00 = lerp_rn(at(x.i0, y.i0, z.i0), at(x.i1, y.i0, z.i0), x.f);
    const float c10 = lerp_rn(at(x.i0, y.i1, z.i0), at(x.i1, y.i1, z.i0), x.f);
    const float c01 = lerp_rn(at(x.i0, y.i0, z.i1), at(x.i1, y.i0, z.i1), x.f);
    const float c11 = lerp_rn(at(x.i0, y.i1, z.i1), at(x.i1, y.i1, z.i1), x.f);
    out[e] = lerp_rn(lerp_rn(c00, c10, y.f), lerp_rn(c01, c11, y.f), z.f);
  }
}

} // namespace

cudaError_t nw_downsample2_cuda(float *dst, const float *src, int nx, int ny, int nz,
                                float *const scratch[2], cudaStream_t stream)
{
  /* nw_smooth_gaussian with sigma 1 along every axis longer than one voxel */
  const int dims[3] = {nx, ny, nz};
  const float *smooth = src;
  int next = 0;
  for (int axis = 0; axis < 3; axis++) {
    if (dims[axis] == 1)
      continue;
    NwGaussKernel k;
    nw_gauss_kernel(&k, 1.0);
    if (k.radius == 0)
      continue;
    const cudaError_t err =
        nw_smooth_pass_cuda(scratch[next], smooth, nx, ny, nz, 1, axis, &k, stream);
    if (err != cudaSuccess)
      return err;
    smooth = scratch[next];
    next ^= 1;
  }
  const int ox = nx > 1 ? (nx + 1) / 2 : 1, oy = ny > 1 ? (ny + 1) / 2 : 1,
            oz = nz > 1 ? (nz + 1) / 2 : 1;
  const long long n_out = (long long)ox * oy * oz;
  const int threads = 256;
  const int blocks = (int)((n_out + threads - 1) / threads < 65535 * 16
                               ? (n_out + threads - 1) / threads
                               : 65535 * 16);
  decimate2_kernel<<<blocks, threads, 0, stream>>>(dst, smooth, nx, ny, nz, ox, oy, oz);
  return nw_cuda_launched(stream);
}
