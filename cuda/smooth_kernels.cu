/* smooth_kernels.cu — see smooth_kernels.cuh. CUDA back end. */
#include "smooth_kernels.cuh"

#include "cuda_check.h"

/* x pass: threads per block. y/z passes: 32 consecutive row floats (one warp, coalesced) by
 * STRIDED_ROWS thread rows, each block covering STRIDED_TILE positions along the axis. */
#define X_THREADS 256
#define STRIDED_ROWS 8
#define STRIDED_TILE 64
#define MAX_GRID_Y 65535

/* Clamped tap sum over positions centred at `centre` in a shared tile whose element for
 * position q and component c is tile[q * pitch + c]; same order and rounding as smooth.c. */
__device__ __forceinline__ float tap_sum(const float *tile, int centre, int pitch,
                                         const NwGaussKernel &k)
{
  float acc = 0.0f;
  for (int t = 0; t <= 2 * k.radius; t++)
    acc = __fadd_rn(acc, __fmul_rn(k.w[t], tile[(centre + t) * pitch]));
  return acc;
}

/* Along x. Grid: x = segments of `seg` positions per row, y = rows (j, k) in a grid-stride
 * loop. The tile holds positions i0-r .. i0+seg+r-1 (clamped), all nc components, loaded
 * with consecutive threads on consecutive floats. Dynamic shared: (seg + 2r) * nc floats. */
__global__ void smooth_x_kernel(float *__restrict__ out, const float *__restrict__ in, int nx,
                                int nc, long long n_rows, int seg, NwGaussKernel k)
{
  extern __shared__ float tile[];
  const int r = k.radius;
  const int i0 = blockIdx.x * seg;
  const int n_load = (seg + 2 * r) * nc, n_out = min(seg, nx - i0) * nc;
  const size_t row_floats = (size_t)nx * nc;
  for (long long row = blockIdx.y; row < n_rows; row += gridDim.y) {
    const float *src = in + (size_t)row * row_floats;
    for (int m = threadIdx.x; m < n_load; m += blockDim.x) {
      int q = i0 - r + m / nc, c = m % nc;
      q = q < 0 ? 0 : (q > nx - 1 ? nx - 1 : q);
      tile[m] = src[(size_t)q * nc + c];
    }
    __syncthreads();
    float *dst = out + (size_t)row * row_floats + (size_t)i0 * nc;
    for (int m = threadIdx.x; m < n_out; m += blockDim.x)
      dst[m] = tap_sum(tile + m % nc, m / nc, nc, k);
    __syncthreads(); /* the next row's loads overwrite the tile */
  }
}

/* Along y or z: n positions `step` floats apart, each a run of `row_len` contiguous floats;
 * `n_outer` independent slabs `outer_stride` floats apart (y: slabs are z slices; z: slabs
 * are y rows). Block (32, STRIDED_ROWS): threadIdx.x walks 32 consecutive floats of a run so
 * a warp reads 128 contiguous bytes. Grid x = x_blocks * tiles along the axis; grid y =
 * slabs in a grid-stride loop. Dynamic shared: (STRIDED_TILE + 2r) * 32 floats. */
__global__ void smooth_strided_kernel(float *__restrict__ out, const float *__restrict__ in, int n,
                                      size_t step, int row_len, long long n_outer,
                                      size_t outer_stride, int x_blocks, NwGaussKernel k)
{
  extern __shared__ float tile[];
  const int r = k.radius;
  const int e = (blockIdx.x % x_blocks) * 32 + threadIdx.x;
  const int p0 = (blockIdx.x / x_blocks) * STRIDED_TILE;
  const int n_load = STRIDED_TILE + 2 * r, n_out = min(STRIDED_TILE, n - p0);
  const bool active = e < row_len;
  for (long long o = blockIdx.y; o < n_outer; o += gridDim.y) {
    const size_t base = (size_t)o * outer_stride + (size_t)e;
    for (int m = threadIdx.y; m < n_load; m += blockDim.y) {
      int q = p0 - r + m;
      q = q < 0 ? 0 : (q > n - 1 ? n - 1 : q);
      tile[m * 32 + threadIdx.x] = active ? in[base + (size_t)q * step] : 0.0f;
    }
    __syncthreads();
    if (active)
      for (int m = threadIdx.y; m < n_out; m += blockDim.y)
        out[base + (size_t)(p0 + m) * step] = tap_sum(tile + threadIdx.x, m, 32, k);
    __syncthreads();
  }
}

static unsigned grid_rows(long long n)
{
  return (unsigned)(n < MAX_GRID_Y ? n : MAX_GRID_Y);
}

cudaError_t nw_smooth_pass_cuda(float *dst, const float *src, int nx, int ny, int nz, int nc,
                                int axis, const NwGaussKernel *k, cudaStream_t stream)
{
  const int r = k->radius, row_len = nx * nc;
  if (axis == 0) {
    int seg = X_THREADS / nc > 0 ? X_THREADS / nc : 1;
    dim3 grid((nx + seg - 1) / seg, grid_rows((long long)ny * nz));
    size_t shmem = (size_t)(seg + 2 * r) * nc * sizeof(float);
    smooth_x_kernel<<<grid, X_THREADS, shmem, stream>>>(dst, src, nx, nc, (long long)ny * nz, seg,
                                                        *k);
    return nw_cuda_launched(stream);
  }
  int n = axis == 1 ? ny : nz;
  size_t step = axis == 1 ? (size_t)row_len : (size_t)row_len * ny;
  long long n_outer = axis == 1 ? nz : ny;
  size_t outer_stride = axis == 1 ? (size_t)row_len * ny : (size_t)row_len;
  int x_blocks = (row_len + 31) / 32, tiles = (n + STRIDED_TILE - 1) / STRIDED_TILE;
  dim3 block(32, STRIDED_ROWS), grid((unsigned)x_blocks * tiles, grid_rows(n_outer));
  size_t shmem = (size_t)(STRIDED_TILE + 2 * r) * 32 * sizeof(float);
  smooth_strided_kernel<<<grid, block, shmem, stream>>>(dst, src, n, step, row_len, n_outer,
                                                        outer_stride, x_blocks, *k);
  return nw_cuda_launched(stream);
}
