/* demons_kernels.cu — see demons_kernels.cuh. CUDA back end. */
#include "demons_kernels.cuh"

#include <cub/block/block_reduce.cuh>
#include <cuda/functional>
#include <float.h>

#include "cuda_check.h"
#include "demons_method.h"

#define THREADS 256

/* ---- update ------------------------------------------------------------------------------ */

/* Gradient of the x component of a float4 image (F̂ or Ŵ), as gradient(). */
__device__ __forceinline__ float3 gradient_x(const float4 *__restrict__ f, const NwGrid &g, int i,
                                             int j, int k, long long e)
{
  const NwDiff dx = diff_axis(i, g.nx, 1), dy = diff_axis(j, g.ny, g.nx),
               dz = diff_axis(k, g.nz, (long long)g.nx * g.ny);
  return make_float3((f[e + dx.hi].x - f[e + dx.lo].x) * dx.inv,
                     (f[e + dy.hi].x - f[e + dy.lo].x) * dy.inv,
                     (f[e + dz.hi].x - f[e + dz.lo].x) * dz.inv);
}

/* demons_cpu.c update_at + demons_step_vec, per voxel; 0 outside the masks' region. */
__global__ void update_kernel(float4 *__restrict__ u, const float *__restrict__ F,
                              const float *__restrict__ W, const float4 *__restrict__ lcc_f,
                              const float4 *__restrict__ lcc_w, const float *__restrict__ region,
                              int force, float alpha, NwDemonsLevelConst lc, NwGrid g)
{
  int i, j, k;
  long long e;
  if (!voxel_of_thread(g, i, j, k, e))
    return;
  if (region != NULL && region[e] == 0.0f) {
    u[e] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    return;
  }
  float r;
  float3 gf, gw;
  if (lcc_f == NULL) {
    r = F[e] - W[e];
    gf = gradient(F, g, i, j, k, e);
    gw = gradient(W, g, i, j, k, e);
  } else {
    r = lcc_f[e].x - lcc_w[e].x;
    gf = gradient_x(lcc_f, g, i, j, k, e);
    gw = gradient_x(lcc_w, g, i, j, k, e);
  }
  float3 J;
  if (force == NW_DEMONS_FORCE_FIXED)
    J = gf;
  else if (force == NW_DEMONS_FORCE_MOVING)
    J = gw;
  else
    J = make_float3(0.5f * (gf.x + gw.x), 0.5f * (gf.y + gw.y), 0.5f * (gf.z + gw.z));
  const float j2 = J.x * J.x + J.y * J.y + J.z * J.z;
  const float den = j2 + r * r / (4.0f * alpha * alpha);
  float s = den > (float)(NW_DEMONS_DEN_MIN * (lcc_f ? 1.0 : lc.scale2)) ? r / den : 0.0f;
  const float len = fabsf(s) * sqrtf(j2);
  if (len > alpha)
    s *= alpha / len;
  u[e] = make_float4(s * J.x, s * J.y, s * J.z, 0.0f);
}

cudaError_t nw_demons_update_cuda(float4 *u, const float *F, const float *W, const float4 *lcc_f,
                                  const float4 *lcc_w, const float *region, int force, float alpha,
                                  NwDemonsLevelConst lc, const NwGrid &g, cudaStream_t stream)
{
  update_kernel<<<nw_voxel_grid(g), NW_VOXEL_THREADS, 0, stream>>>(u, F, W, lcc_f, lcc_w, region,
                                                                   force, alpha, lc, g);
  return nw_cuda_launched(stream);
}

/* ---- masks ------------------------------------------------------------------------------- */

/* demons_cpu.c nw_demons_region_cpu, per voxel: the moving mask sampled as warp_kernel does. */
__global__ void region_kernel(float *__restrict__ region, const float *__restrict__ fixed_mask,
                              const float *__restrict__ moving_mask, const float4 *__restrict__ s,
                              NwGrid g)
{
  int i, j, k;
  long long e;
  if (!voxel_of_thread(g, i, j, k, e))
    return;
  bool inside = fixed_mask == NULL || fixed_mask[e] >= 0.5f;
  if (moving_mask != NULL) {
    const float4 d = s[e];
    inside = inside && sample_trilinear(moving_mask, g, (float)i + d.x, (float)j + d.y,
                                        (float)k + d.z) >= 0.5f;
  }
  region[e] = inside ? 1.0f : 0.0f;
}

cudaError_t nw_demons_region_cuda(float *region, const float *fixed_mask, const float *moving_mask,
                                  const float4 *s, const NwGrid &g, cudaStream_t stream)
{
  region_kernel<<<nw_voxel_grid(g), NW_VOXEL_THREADS, 0, stream>>>(region, fixed_mask, moving_mask,
                                                                   s, g);
  return nw_cuda_launched(stream);
}

/* ---- LCC local statistics ---------------------------------------------------------------- */

__global__ void lcc_fixed_pack_kernel(float4 *pack, const float *F, float shift, long long n)
{
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= n)
    return;
  const double f = (double)F[e] - shift;
  pack[e] = make_float4(0.0f, (float)f, (float)(f * f), 0.0f);
}

__global__ void lcc_fixed_post_kernel(float4 *p, const float *F, NwDemonsLevelConst lc, long long n)
{
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= n)
    return;
  float4 q = p[e];
  /* Rounded as the CPU's float expression (no contraction into an FMA): fluid's energy images
   * are these values, and its step decisions compare energies of them with the CPU's. */
  q.z = fmaxf(__fsub_rn(q.z, __fmul_rn(q.y, q.y)), 0.0f);
  q.x = (float)(((double)F[e] - lc.shift - q.y) / sqrt((double)q.z + lc.eps));
  p[e] = q;
}

__global__ void lcc_warped_pack_kernel(float4 *pack, const float *F, const float *W, float shift,
                                       long long n)
{
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= n)
    return;
  const double w = (double)W[e] - shift, f = (double)F[e] - shift;
  pack[e] = make_float4(0.0f, (float)w, (float)(w * w), (float)(f * w));
}

__global__ void lcc_warped_post_kernel(float4 *p, const float4 *lcc_f, const float *W,
                                       NwDemonsLevelConst lc, long long n)
{
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= n)
    return;
  float4 q = p[e];
  q.z = fmaxf(__fsub_rn(q.z, __fmul_rn(q.y, q.y)), 0.0f); /* the CPU's rounding, as above */
  q.w = __fsub_rn(q.w, __fmul_rn(lcc_f[e].y, q.y));
  q.x = (float)(((double)W[e] - lc.shift - q.y) / sqrt((double)q.z + lc.eps));
  p[e] = q;
}

cudaError_t nw_lcc_fixed_pack(float4 *pack, const float *F, float shift, const NwGrid &g,
                              cudaStream_t stream)
{
  lcc_fixed_pack_kernel<<<nw_blocks_for(g.n(), THREADS), THREADS, 0, stream>>>(pack, F, shift,
                                                                               g.n());
  return nw_cuda_launched(stream);
}

cudaError_t nw_lcc_fixed_post(float4 *lcc_f, const float *F, NwDemonsLevelConst lc, const NwGrid &g,
                              cudaStream_t stream)
{
  lcc_fixed_post_kernel<<<nw_blocks_for(g.n(), THREADS), THREADS, 0, stream>>>(lcc_f, F, lc, g.n());
  return nw_cuda_launched(stream);
}

cudaError_t nw_lcc_warped_pack(float4 *pack, const float *F, const float *W, float shift,
                               const NwGrid &g, cudaStream_t stream)
{
  lcc_warped_pack_kernel<<<nw_blocks_for(g.n(), THREADS), THREADS, 0, stream>>>(pack, F, W, shift,
                                                                                g.n());
  return nw_cuda_launched(stream);
}

cudaError_t nw_lcc_warped_post(float4 *lcc_w, const float4 *lcc_f, const float *W,
                               NwDemonsLevelConst lc, const NwGrid &g, cudaStream_t stream)
{
  lcc_warped_post_kernel<<<nw_blocks_for(g.n(), THREADS), THREADS, 0, stream>>>(lcc_w, lcc_f, W, lc,
                                                                                g.n());
  return nw_cuda_launched(stream);
}

/* ---- figures ----------------------------------------------------------------------------- */

/* Block-reduce every member of a thread's partial sums (CUB), in one fixed order. */
__device__ void block_reduce_sums(NwDemonsSums &t)
{
  typedef cub::BlockReduce<double, THREADS> ReduceD;
  typedef cub::BlockReduce<unsigned long long, THREADS> ReduceU;
  __shared__ union {
    typename ReduceD::TempStorage d;
    typename ReduceU::TempStorage u;
  } tmp;
  double *fields[9] = {&t.sim.sf,  &t.sim.sw,   &t.sim.sff,   &t.sim.sww, &t.sim.sfw,
                       &t.sim.sd2, &t.sim.slcc, &t.sim.n_lcc, &t.sim.n};
  for (int q = 0; q < 9; q++) {
    const double v = ReduceD(tmp.d).Sum(*fields[q]);
    __syncthreads();
    *fields[q] = v; /* valid in thread 0 only */
  }
  const double mn = ReduceD(tmp.d).Reduce(t.jac_min, cuda::minimum<>{});
  __syncthreads();
  const unsigned long long folds = ReduceU(tmp.u).Sum(t.folds);
  __syncthreads();
  t.jac_min = mn;
  t.folds = folds;
}

/* Adds one voxel's terms (w: its warped intensity) to t: the similarity terms when the voxel
 * is inside the masks' region (region NULL: always), the Jacobian ones always. */
__device__ __forceinline__ void add_voxel(NwDemonsSums &t, float fv, float wv, int i, int j, int k,
                                          long long e, const float4 *__restrict__ s,
                                          const float4 *__restrict__ lcc_f,
                                          const float4 *__restrict__ lcc_w,
                                          const float *__restrict__ region,
                                          const NwDemonsLevelConst &lc, const NwGrid &g)
{
  if (region == NULL || region[e] != 0.0f) {
    const double f = (double)fv - lc.shift, w = (double)wv - lc.shift;
    t.sim.n += 1.0;
    t.sim.sf += f;
    t.sim.sw += w;
    t.sim.sff += f * f;
    t.sim.sww += w * w;
    t.sim.sfw += f * w;
    t.sim.sd2 += (f - w) * (f - w);
    /* ρ = σFW / sqrt((σF² + eps)(σW² + eps)), over the fixed image's structured voxels */
    if (lcc_f != NULL && (double)lcc_f[e].z > lc.eps) {
      const float4 pw = lcc_w[e];
      t.sim.slcc += (double)pw.w / sqrt(((double)lcc_f[e].z + lc.eps) * ((double)pw.z + lc.eps));
      t.sim.n_lcc += 1.0;
    }
  }
  const double det = jacobian_det(s, g, i, j, k, e);
  t.jac_min = det < t.jac_min ? det : t.jac_min;
  t.folds += det <= 0.0;
}

/* similarity_figures + the Jacobian statistics of evaluate(), one warp per row (j, k) of
 * the volume at a time; each lane takes voxels i and i + 32 together, issuing both voxels'
 * loads before either is used (the kernel is latency-bound: more bytes in flight per warp).
 * With FUSED_WARP, W = M ∘ s is computed and stored first. */
template <bool FUSED_WARP>
__global__ void __launch_bounds__(THREADS, 3)
    sums_kernel(NwDemonsSums *__restrict__ partials, const float *__restrict__ F,
                float *__restrict__ W, const float *__restrict__ M, const float4 *__restrict__ s,
                const float4 *__restrict__ lcc_f, const float4 *__restrict__ lcc_w,
                const float *__restrict__ region, NwDemonsLevelConst lc, NwGrid g)
{
  NwDemonsSums t = {{0, 0, 0, 0, 0, 0, 0, 0, 0}, DBL_MAX, 0};
  const int lane = threadIdx.x & 31;
  const int rows = g.ny * g.nz, n_warps = (gridDim.x * blockDim.x) >> 5;
  for (int row = (blockIdx.x * blockDim.x + threadIdx.x) >> 5; row < rows; row += n_warps) {
    const int j = row % g.ny, k = row / g.ny;
    const long long base = (long long)row * g.nx;
    for (int i0 = lane; i0 < g.nx; i0 += 64) {
      const int i1 = i0 + 32;
      const bool two = i1 < g.nx;
      const long long e0 = base + i0, e1 = base + (two ? i1 : i0);
      const float f0 = F[e0], f1 = F[e1];
      float w0, w1;
      if (FUSED_WARP) {
        const float4 d0 = s[e0], d1 = s[e1];
        w0 = sample_trilinear(M, g, (float)i0 + d0.x, (float)j + d0.y, (float)k + d0.z);
        w1 = sample_trilinear(M, g, (float)i1 + d1.x, (float)j + d1.y, (float)k + d1.z);
        W[e0] = w0;
        if (two)
          W[e1] = w1;
      } else {
        w0 = W[e0];
        w1 = W[e1];
      }
      add_voxel(t, f0, w0, i0, j, k, e0, s, lcc_f, lcc_w, region, lc, g);
      if (two)
        add_voxel(t, f1, w1, i1, j, k, e1, s, lcc_f, lcc_w, region, lc, g);
    }
  }
  block_reduce_sums(t);
  if (threadIdx.x == 0)
    partials[blockIdx.x] = t;
}

/* One block: each thread adds a fixed subset of the partials, then one block reduction —
 * the same order on every run (deterministic figures). */
__global__ void sums_final_kernel(NwDemonsSums *__restrict__ out,
                                  const NwDemonsSums *__restrict__ partials, int n_partials)
{
  NwDemonsSums t = {{0, 0, 0, 0, 0, 0, 0, 0, 0}, DBL_MAX, 0};
  for (int b = threadIdx.x; b < n_partials; b += blockDim.x) {
    const NwDemonsSums p = partials[b];
    t.sim.sf += p.sim.sf;
    t.sim.sw += p.sim.sw;
    t.sim.sff += p.sim.sff;
    t.sim.sww += p.sim.sww;
    t.sim.sfw += p.sim.sfw;
    t.sim.sd2 += p.sim.sd2;
    t.sim.slcc += p.sim.slcc;
    t.sim.n_lcc += p.sim.n_lcc;
    t.sim.n += p.sim.n;
    t.jac_min = p.jac_min < t.jac_min ? p.jac_min : t.jac_min;
    t.folds += p.folds;
  }
  block_reduce_sums(t);
  if (threadIdx.x == 0)
    *out = t;
}

/* Blocks of sums_kernel<FUSED> that fit on the device at once: the grid is exactly one full
 * wave (the row loop balances the work), so no SM idles through a partial last wave. Capped
 * by the partials buffer. Device properties are read once per process. */
template <bool FUSED> static int one_wave_blocks(void)
{
  static int blocks = 0;
  if (blocks == 0) {
    int dev = 0, sms = 0, per_sm = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, sums_kernel<FUSED>, THREADS, 0) !=
            cudaSuccess ||
        sms * per_sm <= 0)
      return NW_DEMONS_FIG_BLOCKS;
    blocks = sms * per_sm < NW_DEMONS_FIG_BLOCKS ? sms * per_sm : NW_DEMONS_FIG_BLOCKS;
  }
  return blocks;
}

cudaError_t nw_demons_sums_cuda(NwDemonsSums *d_sums, NwDemonsSums *d_partials, const float *F,
                                float *W, const float *M, const float4 *s, const float4 *lcc_f,
                                const float4 *lcc_w, const float *region, NwDemonsLevelConst lc,
                                const NwGrid &g, cudaStream_t stream)
{
  int blocks;
  if (M != NULL) {
    blocks = one_wave_blocks<true>();
    sums_kernel<true>
        <<<blocks, THREADS, 0, stream>>>(d_partials, F, W, M, s, lcc_f, lcc_w, region, lc, g);
  } else {
    blocks = one_wave_blocks<false>();
    sums_kernel<false>
        <<<blocks, THREADS, 0, stream>>>(d_partials, F, W, M, s, lcc_f, lcc_w, region, lc, g);
  }
  cudaError_t e = nw_cuda_launched(stream);
  if (e != cudaSuccess)
    return e;
  sums_final_kernel<<<1, THREADS, 0, stream>>>(d_sums, d_partials, blocks);
  return nw_cuda_launched(stream);
}
