/* gauss_cuda.cu — see gauss_cuda.cuh. CUDA back end. */
#include "gauss_cuda.cuh"

#include "cuda_check.h"
#include "field_cuda.cuh"

/* x pass: one block per row segment of X_TILE outputs. */
#define X_TILE 128
/* y and z passes: 32 x-columns by AXIS_ROWS thread rows, AXIS_TILE outputs along the axis.
 * Shared memory (AXIS_TILE + 2 r) * 32 float4 <= 96 * 512 B = 48 KiB at r = 32. */
#define AXIS_COLS 32
#define AXIS_ROWS 8
#define AXIS_TILE 32

__global__ void gauss_x_kernel(float4 *__restrict__ out, const float4 *__restrict__ in, NwGrid g,
                               NwGaussKernel k, unsigned *max_bits)
{
  extern __shared__ float4 tile[];
  const int r = k.radius;
  const int i0 = blockIdx.x * X_TILE;
  const long long row = ((long long)blockIdx.z * g.ny + blockIdx.y) * g.nx;
  for (int t = threadIdx.x; t < X_TILE + 2 * r; t += blockDim.x)
    tile[t] = in[row + clamp_int(i0 + t - r, 0, g.nx - 1)];
  __syncthreads();
  const int i = i0 + threadIdx.x;
  float m = 0.0f;
  if (i < g.nx) {
    float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int t = 0; t <= 2 * r; t++)
      acc = acc + k.w[t] * tile[threadIdx.x + t];
    out[row + i] = acc;
    m = norm3(acc);
  }
  if (max_bits != NULL)
    nw_block_max_to<X_TILE, 1>(max_bits, m);
}

/* Along an axis of length n_axis with element stride `stride`; blockIdx.z walks the other
 * non-x axis with stride `other`. */
__global__ void gauss_axis_kernel(float4 *__restrict__ out, const float4 *__restrict__ in, int nx,
                                  int n_axis, long long stride, long long other, NwGaussKernel k,
                                  unsigned *max_bits)
{
  extern __shared__ float4 tile[];
  const int r = k.radius;
  const int i = blockIdx.x * AXIS_COLS + threadIdx.x;
  const int ic = i < nx ? i : nx - 1; /* load a valid column; store only real ones */
  const int a0 = blockIdx.y * AXIS_TILE;
  const long long base = (long long)blockIdx.z * other + ic;
  for (int t = threadIdx.y; t < AXIS_TILE + 2 * r; t += AXIS_ROWS)
    tile[t * AXIS_COLS + threadIdx.x] = in[base + clamp_int(a0 + t - r, 0, n_axis - 1) * stride];
  __syncthreads();
  float m = 0.0f;
  if (i < nx) {
    for (int p = threadIdx.y; p < AXIS_TILE && a0 + p < n_axis; p += AXIS_ROWS) {
      float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      for (int t = 0; t <= 2 * r; t++)
        acc = acc + k.w[t] * tile[(p + t) * AXIS_COLS + threadIdx.x];
      out[base + (long long)(a0 + p) * stride] = acc;
      m = fmaxf(m, norm3(acc));
    }
  }
  if (max_bits != NULL)
    nw_block_max_to<AXIS_COLS, AXIS_ROWS>(max_bits, m);
}

static void swap_buffers(float4 **a, float4 **b)
{
  float4 *t = *a;
  *a = *b;
  *b = t;
}

cudaError_t nw_gauss3_float4(float4 **data, float4 **scratch, const NwGrid &g,
                             const NwGaussKernel k[3], float *d_max_norm, cudaStream_t stream)
{
  const int n[3] = {g.nx, g.ny, g.nz};
  int last = -1;
  for (int axis = 0; axis < 3; axis++)
    if (k[axis].radius > 0 && n[axis] > 1)
      last = axis;
  if (d_max_norm != NULL) {
    if (last < 0) /* nothing to smooth: the maximum of the field as it is */
      return nw_max_norm_cuda(d_max_norm, *data, g, stream);
    cudaError_t e = cudaMemsetAsync(d_max_norm, 0, sizeof(float), stream);
    if (e != cudaSuccess)
      return e;
  }
  for (int axis = 0; axis <= last; axis++) {
    const int r = k[axis].radius;
    if (r == 0 || n[axis] == 1)
      continue;
    unsigned *max_bits = axis == last ? reinterpret_cast<unsigned *>(d_max_norm) : NULL;
    if (axis == 0) {
      dim3 grid((g.nx + X_TILE - 1) / X_TILE, g.ny, g.nz);
      size_t shmem = (size_t)(X_TILE + 2 * r) * sizeof(float4);
      gauss_x_kernel<<<grid, X_TILE, shmem, stream>>>(*scratch, *data, g, k[axis], max_bits);
    } else {
      const long long plane = (long long)g.nx * g.ny;
      const long long stride = axis == 1 ? g.nx : plane, other = axis == 1 ? plane : g.nx;
      const int n_other = axis == 1 ? g.nz : g.ny;
      dim3 grid((g.nx + AXIS_COLS - 1) / AXIS_COLS, (n[axis] + AXIS_TILE - 1) / AXIS_TILE, n_other);
      size_t shmem = (size_t)(AXIS_TILE + 2 * r) * AXIS_COLS * sizeof(float4);
      if (shmem > 40 * 1024) { /* large radii: above the default 48 KiB with CUB's scratch */
        cudaError_t e = cudaFuncSetAttribute(
            gauss_axis_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shmem);
        if (e != cudaSuccess)
          return e;
      }
      gauss_axis_kernel<<<grid, dim3(AXIS_COLS, AXIS_ROWS), shmem, stream>>>(
          *scratch, *data, g.nx, n[axis], stride, other, k[axis], max_bits);
    }
    cudaError_t e = nw_cuda_launched(stream);
    if (e != cudaSuccess)
      return e;
    swap_buffers(data, scratch);
  }
  return cudaSuccess;
}
