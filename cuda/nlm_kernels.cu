/* nlm_kernels.cu — the element-wise kernels of nlm-surface on the GPU (nlm_kernels.cuh): the
 * padded patch matrix, the weights, the update and the two reductions the method reports.
 * The fused distance + top-m is in nlm_topm_kernel.cu. CUDA back end, caller's stream.
 *
 * Double-precision arithmetic that the CPU reference does in double (weights, update) is
 * written with __dmul_rn / __dadd_rn / __dsub_rn: nvcc would otherwise fuse a * b + c into one
 * FMA and round differently from the CPU (gcc for x86-64 without -march has no FMA). */
#include <cub/device/device_reduce.cuh>
#include <math.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "cuda_check.h"
#include "nlm_kernels.cuh"

#define NLM_THREADS 256

/* The CPU lane stored in lane group g of a padded row: 0 4 2 6 1 5 3 7 (g's 3 bits reversed). */
__device__ __forceinline__ int lane_of_group(int g)
{
  return ((g & 1) << 2) | (g & 2) | ((g & 4) >> 2);
}

/* Patch value number q (< P) of the padded slot `slot`, or -1 for a zero slot. */
__device__ __forceinline__ int value_of_slot(int slot, int pp, int p)
{
  const int G = pp / 8, q = lane_of_group(slot / G) + 8 * (slot % G);
  return q < p ? q : -1;
}

__device__ __forceinline__ int clampi(int x, int hi)
{
  return x < 0 ? 0 : x > hi ? hi : x;
}

__global__ void nlm_patches_kernel(float *patches, float *centre, const float *__restrict__ phi,
                                   int nx, int ny, int nz, const unsigned *__restrict__ band, int n,
                                   int patch, int pp)
{
  const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= (size_t)n * pp)
    return;
  const int j = (int)(e / pp), slot = (int)(e % pp), p = patch * patch * patch;
  const unsigned vox = band[j];
  const int q = value_of_slot(slot, pp, p);
  float v = 0.0f;
  if (q >= 0) {
    const int r = patch / 2;
    const int i = (int)(vox % (unsigned)nx), jj = (int)(vox / (unsigned)nx % (unsigned)ny),
              k = (int)(vox / ((unsigned)nx * (unsigned)ny));
    const int dx = q % patch - r, dy = q / patch % patch - r, dz = q / (patch * patch) - r;
    v = phi[((size_t)clampi(k + dz, nz - 1) * ny + clampi(jj + dy, ny - 1)) * nx +
            clampi(i + dx, nx - 1)];
  }
  patches[e] = v;
  if (slot == 0)
    centre[j] = phi[vox];
}

cudaError_t nw_nlm_patches_cuda(float *patches, float *centre, const float *phi, int nx, int ny,
                                int nz, const unsigned *band, int n, int patch, cudaStream_t stream)
{
  const int pp = nw_nlm_padded_width(patch * patch * patch);
  const size_t total = (size_t)n * pp;
  nlm_patches_kernel<<<(unsigned)((total + NLM_THREADS - 1) / NLM_THREADS), NLM_THREADS, 0,
                       stream>>>(patches, centre, phi, nx, ny, nz, band, n, patch, pp);
  return nw_cuda_launched(stream);
}

__global__ void nlm_pad_kernel(float *padded, const float *__restrict__ rows, int n, int p, int pp)
{
  const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= (size_t)n * pp)
    return;
  const int j = (int)(e / pp), q = value_of_slot((int)(e % pp), pp, p);
  padded[e] = q >= 0 ? rows[(size_t)j * p + q] : 0.0f;
}

cudaError_t nw_nlm_pad_patches_cuda(float *padded, const float *rows, int n, int p,
                                    cudaStream_t stream)
{
  const int pp = nw_nlm_padded_width(p);
  const size_t total = (size_t)n * pp;
  nlm_pad_kernel<<<(unsigned)((total + NLM_THREADS - 1) / NLM_THREADS), NLM_THREADS, 0, stream>>>(
      padded, rows, n, p, pp);
  return nw_cuda_launched(stream);
}

/* One thread per element, its m weights in the CPU's order (nw_nlm_weights_cpu). The
 * position differences are float subtractions promoted to double, as in the CPU code. */
__global__ void nlm_weights_kernel(float *w, float *wsum, const int *__restrict__ nbr,
                                   const float *__restrict__ nd, const float *__restrict__ pos,
                                   int n, int m, double c1_mm2, double c2_mm2)
{
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= n)
    return;
  const float *x = pos + (size_t)j * 3;
  double sum = 0.0;
  for (int s = 0; s < m; s++) {
    const size_t js = (size_t)j * m + s;
    double spatial = 1.0;
    if (c1_mm2 > 0.0) {
      const float *y = pos + (size_t)nbr[js] * 3;
      const double dx = __fsub_rn(x[0], y[0]), dy = __fsub_rn(x[1], y[1]),
                   dz = __fsub_rn(x[2], y[2]);
      const double r2 =
          __dadd_rn(__dadd_rn(__dmul_rn(dx, dx), __dmul_rn(dy, dy)), __dmul_rn(dz, dz));
      spatial = exp(-r2 / c1_mm2);
    }
    const float wv = (float)__dmul_rn(spatial, exp(-(double)nd[js] / c2_mm2));
    w[js] = wv;
    sum = __dadd_rn(sum, (double)wv);
  }
  wsum[j] = (float)sum;
}

cudaError_t nw_nlm_weights_cuda(float *w, float *wsum, const int *nbr, const float *nd,
                                const float *pos_mm, int n, int m, double c1_mm2, double c2_mm2,
                                cudaStream_t stream)
{
  nlm_weights_kernel<<<(n + NLM_THREADS - 1) / NLM_THREADS, NLM_THREADS, 0, stream>>>(
      w, wsum, nbr, nd, pos_mm, n, m, c1_mm2, c2_mm2);
  return nw_cuda_launched(stream);
}

/* nw_nlm_update_cpu: the flow in double in the CPU's order; out and (phi given) the grid. The
 * centres are a separate array, so writing phi here cannot change what another thread reads. */
__global__ void nlm_update_kernel(float *out, float *phi, const unsigned *__restrict__ band,
                                  const float *__restrict__ centre, const int *__restrict__ nbr,
                                  const float *__restrict__ w, int n, int m, float dt)
{
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= n)
    return;
  const double cj = centre[j];
  double flow = 0.0;
  for (int s = 0; s < m; s++) {
    const size_t js = (size_t)j * m + s;
    flow = __dadd_rn(flow, __dmul_rn((double)w[js], __dsub_rn((double)centre[nbr[js]], cj)));
  }
  const float v = (float)__dadd_rn(cj, __dmul_rn((double)dt, flow));
  out[j] = v;
  if (phi != NULL)
    phi[band[j]] = v;
}

cudaError_t nw_nlm_update_cuda(float *out, float *phi, const unsigned *band, const float *centre,
                               const int *nbr, const float *w, int n, int m, float dt,
                               cudaStream_t stream)
{
  nlm_update_kernel<<<(n + NLM_THREADS - 1) / NLM_THREADS, NLM_THREADS, 0, stream>>>(
      out, phi, band, centre, nbr, w, n, m, dt);
  return nw_cuda_launched(stream);
}

/* ---- reductions (CUB over transform iterators, as smooth_cuda.cu) ------------------------ */

struct WsumAt {
  const float *wsum;
  __host__ __device__ NwNlmWsumStats operator()(int j) const
  {
    return NwNlmWsumStats{(double)wsum[j], wsum[j]};
  }
};
struct WsumCombine {
  __host__ __device__ NwNlmWsumStats operator()(const NwNlmWsumStats &a,
                                                const NwNlmWsumStats &b) const
  {
    return NwNlmWsumStats{a.sum + b.sum, a.most > b.most ? a.most : b.most};
  }
};
struct ChangeAt {
  const float *after, *before;
  __host__ __device__ NwNlmChangeStats operator()(int j) const
  {
    const double d = fabs((double)after[j] - (double)before[j]);
    return NwNlmChangeStats{d * d, d};
  }
};
struct ChangeCombine {
  __host__ __device__ NwNlmChangeStats operator()(const NwNlmChangeStats &a,
                                                  const NwNlmChangeStats &b) const
  {
    return NwNlmChangeStats{a.sum_sq + b.sum_sq, a.most > b.most ? a.most : b.most};
  }
};
typedef thrust::transform_iterator<WsumAt, thrust::counting_iterator<int>, NwNlmWsumStats> WsumIter;
typedef thrust::transform_iterator<ChangeAt, thrust::counting_iterator<int>, NwNlmChangeStats>
    ChangeIter;

cudaError_t nw_nlm_reduce_temp_bytes(size_t *bytes, int n)
{
  size_t a = 0, b = 0;
  WsumIter wi(thrust::counting_iterator<int>(0), WsumAt{NULL});
  ChangeIter ci(thrust::counting_iterator<int>(0), ChangeAt{NULL, NULL});
  cudaError_t s = cub::DeviceReduce::Reduce(NULL, a, wi, (NwNlmWsumStats *)NULL, n, WsumCombine(),
                                            NwNlmWsumStats{0.0, 0.0f});
  if (s == cudaSuccess)
    s = cub::DeviceReduce::Reduce(NULL, b, ci, (NwNlmChangeStats *)NULL, n, ChangeCombine(),
                                  NwNlmChangeStats{0.0, 0.0});
  *bytes = a > b ? a : b;
  return s;
}

/* most starts at 0 like the CPU's nw_nlm_step_size_cpu (weights are >= 0). */
cudaError_t nw_nlm_wsum_stats_cuda(NwNlmWsumStats *out, const float *wsum, int n, void *temp,
                                   size_t temp_bytes, cudaStream_t stream)
{
  WsumIter it(thrust::counting_iterator<int>(0), WsumAt{wsum});
  cudaError_t s = cub::DeviceReduce::Reduce(temp, temp_bytes, it, out, n, WsumCombine(),
                                            NwNlmWsumStats{0.0, 0.0f}, stream);
  return s != cudaSuccess ? s : nw_cuda_launched(stream);
}

cudaError_t nw_nlm_change_stats_cuda(NwNlmChangeStats *out, const float *after, const float *before,
                                     int n, void *temp, size_t temp_bytes, cudaStream_t stream)
{
  ChangeIter it(thrust::counting_iterator<int>(0), ChangeAt{after, before});
  cudaError_t s = cub::DeviceReduce::Reduce(temp, temp_bytes, it, out, n, ChangeCombine(),
                                            NwNlmChangeStats{0.0, 0.0}, stream);
  return s != cudaSuccess ? s : nw_cuda_launched(stream);
}
