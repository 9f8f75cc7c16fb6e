/* affine_cost_cuda.cu — the CUDA twin of the affine cost (core/affine_cost.h; CPU reference
 * core/cpu/affine_cost_cpu.c, sampling core/sampler.c) and the CUDA method "affine" (the
 * shared job of affine_method.h over this cost). CUDA back end; every call runs on the job's
 * worker thread, which owns the stream and the device buffers.
 *
 * The job's pyramids are made here (pyramid: the image up once, each level by
 * nw_downsample2_cuda from the one below, bit for bit the CPU's, all in one allocation) and
 * stay on the device for the cost's life; on the host only the coarsest level has voxels (the
 * starts read it), the others are headers. set_level finds a level by its host volume, and
 * uploads only what it does not find (the tests' and the benchmark's own volumes); the level's
 * statistics (shifts, MI ranges, u16 quantisations) are computed where its images are
 * (level_stats, affine_stats_cuda.cuh).
 * An evaluation is one launch and one synchronisation, with no allocation and no copy:
 * cost_kernel (a variant per sampler and metric) has a thread per fixed voxel (grid-stride)
 * map the voxel, test the masks and the domain, sample the moving image, and add to six
 * double sums; with mi also to the joint histogram, kept per block in shared memory when it
 * fits (bins <= 64) and then added into the global one. Each block writes its six sums; the
 * last block to finish sums them in a fixed order and writes the result, with the histogram
 * as counts, into pinned host memory mapped into the device, then zeroes the histogram and
 * the block counter for the next evaluation. (The first version launched a second kernel
 * for the sums, a memset and a copy: four operations of a few microseconds each, most of an
 * evaluation at the coarse pyramid levels.)
 *
 * Parity with the CPU (1e-4 relative on the cost, issue 11): positions and interpolation
 * weights are computed in double as sampler.c does, the map without fused multiply-adds (so
 * the domain and nearest decisions are the CPU's, voxel for voxel), and the sample rounded
 * to float as the CPU's is. Histogram masses are fixed-point integers (2^-24 of a count):
 * integer atomics make the histogram exact for plain bins and the same on every run,
 * whatever order the blocks add in; the sums' order is fixed too, so an evaluation is
 * deterministic and the simplex takes the same path on every run.
 *
 * Precision u16 (the level's NwAffineLevel.precision, the job's default): set_level also makes
 * 16-bit codes of the level's fixed and moving images on the device (quantise_kernel,
 * affine_quant.h), and the cost kernel's Q variants read those (4 bytes a voxel instead of 8)
 * with positions and weights in float, through the same inline functions as the CPU twin's
 * evaluate_u16, each operation an explicit IEEE one: the same voxels and samples as the CPU,
 * bit for bit. With linear and cubic sampling the moving codes are also copied into a layered
 * texture (affine_texture_cuda.cuh), from which the kTexture variants gather the taps, four a
 * request: the same samples (NW_AFFINE_TEXTURE=0 keeps the plain loads, kCodes). Linear
 * through the texture with mse or ncc and no masks takes the rows variants (rows_kernel,
 * affine_cost_rows_cuda.cuh): a thread has K consecutive voxels of a fixed row (4 in 2D, 2 in
 * 3D) and issues their gathers together, for the same voxels and samples, and sums the codes,
 * turned into the values' sums once a thread (within 1e-12 of the one-voxel kernel's;
 * NW_AFFINE_VOXELS_PER_THREAD=1 keeps the one-voxel kernel, =2 or =4 sets K). The
 * float levels stay for warp (the result's and the frames' image). The codes
 * live in one grow-only work buffer, the pyramids' smoothing buffers before. Large copies to
 * and from the host go through a pinned pair of chunks (staging_cuda.cuh). */
#include <cuda_runtime.h>

#include <stdint.h>
#include <string.h>

#include "affine_cost_rows_cuda.cuh"
#include "affine_method.h"
#include "affine_quant.h"
#include "affine_stats_cuda.cuh"
#include "affine_texture_cuda.cuh"
#include "cuda_check.h"
#include "interp_weights.h"
#include "nw_affine_cost_cuda.h"
#include "nw_error.h"
#include "kept_blocks_cuda.cuh"
#include "pyramid.h"
#include "pyramid_cuda.cuh"
#include "resample.h"
#include "staging_cuda.cuh"

namespace {

constexpr int kBlock = 256;          /* threads per block; the reductions assume 8 full warps */
constexpr int kWarps = kBlock / 32;
constexpr int kSums = 6;             /* n, sf, sm, sff, smm, sfm (NwAffineSums) */
constexpr double kHistOne = NW_AFFINE_HIST_ONE; /* one count in the fixed-point histogram */
constexpr size_t kSharedHistMax = 48 * 1024; /* the default dynamic shared-memory limit */
constexpr int kMaxKept = 32; /* device levels kept: 4 pyramids of up to 8 levels */
constexpr int kMaxBatch = NW_AFFINE_MAX_BATCH;
/* How the cost kernel reads the level: float images (the reference), u16 codes through
 * plain loads, or u16 codes with the moving image's taps gathered from a texture (linear and
 * cubic; the same samples, affine_texture_cuda.cuh); the last also with K voxels of a row a
 * thread (rows_kernel: linear without mi or masks), in four forms (NwRowsForm): 3D or 2D,
 * with a short group at each row's end or every group whole, each blending its taps itself or
 * (precision u16-filter) taking the texture unit's blend. Also the index of CudaCost's
 * variants. */
enum Storage { kSingle = 0, kCodes = 1, kTexture = 2, kRows = 3, kStorages = kRows + 8 };
constexpr int kRows2D = 1;     /* added to kRows where NwRowsForm.flat */
constexpr int kRowsWhole = 2;  /* added to kRows where NwRowsForm.whole */
constexpr int kRowsFilter = 4; /* added to kRows at precision u16-filter */
/* Blocks of 256 an SM the u16 variants are compiled for (sm_90, ptxas -v): linear through the
 * texture 6 (40 registers, no spills: 75 % occupancy, for an evaluation that waits on its
 * gathers: 16 cycles between a warp's instructions at 5 blocks, ncu on an H100); nearest and
 * linear through loads 5 (48 registers, no spills: 62.5 %; at 6, 40 registers, they spill 20
 * bytes: try -DNW_AFFINE_U16_MIN_BLOCKS=6 in CMAKE_CUDA_FLAGS to compare); cubic or mi 4 (64;
 * cubic through the texture spills 8 bytes); cubic with mi 3 (it spills at 4). The
 * single-precision variants, with their doubles, use 54-206 registers (linear 80: 3 blocks,
 * 37.5 %). */
#ifndef NW_AFFINE_U16_MIN_BLOCKS
#define NW_AFFINE_U16_MIN_BLOCKS 5
#endif
#ifndef NW_AFFINE_TEXTURE_MIN_BLOCKS
#define NW_AFFINE_TEXTURE_MIN_BLOCKS 6
#endif
constexpr int min_blocks(int sampler, bool mi, Storage p)
{
  return p == kSingle                           ? 1
         : sampler == NW_SAMPLER_CUBIC && mi    ? 3
         : sampler == NW_SAMPLER_CUBIC || mi    ? 4
         : p == kTexture                        ? NW_AFFINE_TEXTURE_MIN_BLOCKS
                                                : NW_AFFINE_U16_MIN_BLOCKS;
}
/* evaluate_batch's maps: doubles for single, then the same as floats for u16 */
constexpr size_t kMapsBytes = (size_t)kMaxBatch * 12 * (sizeof(double) + sizeof(float));

/* What the cost kernel reads, by value: the level's images, their sizes, the statistics of
 * affine_cost.h, the map and where the results go. Masks are NULL when absent. */
struct EvalArgs {
  double map[12]; /* fixed voxel -> moving voxel, 3x4 row-major */
  float mapf[12]; /* the same rounded to float (precision u16) */
  const double *maps; /* a batch: map q of blockIdx.y = q at maps + 12 q (device memory) */
  const float *mapsf; /* ... rounded to float, at mapsf + 12 q (precision u16) */
  const float *__restrict__ F, *__restrict__ M, *__restrict__ fmask, *__restrict__ mmask;
  /* precision u16: the level's images as codes, and what the codes stand for */
  const uint16_t *__restrict__ qF, *__restrict__ qM;
  cudaTextureObject_t qtexM; /* qM as a texture (affine_texture_cuda.cuh), storage kTexture */
  cudaTextureObject_t qtexMf; /* the same with the texture unit's linear filter (u16-filter) */
  NwQuant quant_f, quant_m;
  int fnx, fny, fnz, mnx, mny, mnz;
  unsigned int n; /* fixed voxels (<= NW_MAX_VOXELS < 2^31) */
  int parzen, bins, shared_hist;
  double fixed_shift, moving_shift, fixed_lo, fixed_hi, moving_lo, moving_hi;
  /* each per map of a batch (gridDim.y maps), one after the other: */
  double *partials;         /* gridDim.x x kSums */
  unsigned long long *hist; /* bins², fixed-point; zero between evaluations (mi) */
  unsigned int *done;       /* blocks finished; zero between evaluations */
  double *out;              /* kSums + bins², then the ticket: pinned host memory, mapped */
  unsigned long long ticket; /* the launch's: written last, after the results (finish) */
  NwRowsGrid rows; /* rows_kernel: the launch's stride split for the fixed grid (launch_grid) */
};

/* ---- sampling: sampler.c, line for line (32-bit offsets: images < 2^31 voxels) ----------- */

__device__ inline bool in_domain(double x, int n)
{
  return x >= -0.5 && x <= (double)n - 0.5;
}

__device__ inline int clampi(int i, int n)
{
  return i < 0 ? 0 : (i >= n ? n - 1 : i);
}

__device__ inline float sample_nearest(const float *__restrict__ d, int nx, int ny, int nz,
                                       double x, double y, double z)
{
  const int i = clampi((int)floor(x + 0.5), nx), j = clampi((int)floor(y + 0.5), ny);
  const int k = clampi((int)floor(z + 0.5), nz);
  return __ldg(d + (k * ny + j) * nx + i);
}

__device__ inline void linear_axis(double x, int n, int *i0, int *i1, double *u)
{
  const double f = floor(x);
  *u = x - f;
  *i0 = clampi((int)f, n);
  *i1 = clampi((int)f + 1, n);
}

__device__ inline float sample_linear(const float *__restrict__ d, int nx, int ny, int nz,
                                      double x, double y, double z)
{
  int x0, x1, y0, y1, z0, z1;
  double u, w, t;
  linear_axis(x, nx, &x0, &x1, &u);
  linear_axis(y, ny, &y0, &y1, &w);
  linear_axis(z, nz, &z0, &z1, &t);
  if (nz == 1)
    t = 0.0; /* a flat axis: its one voxel */
  const int sz = nx * ny;
  const float *p0 = d + z0 * sz;
  const double c00 = __ldg(p0 + y0 * nx + x0) * (1 - u) + __ldg(p0 + y0 * nx + x1) * u;
  const double c10 = __ldg(p0 + y1 * nx + x0) * (1 - u) + __ldg(p0 + y1 * nx + x1) * u;
  const double c0 = c00 * (1 - w) + c10 * w;
  if (t == 0.0)
    return (float)c0;
  const float *p1 = d + z1 * sz;
  const double c01 = __ldg(p1 + y0 * nx + x0) * (1 - u) + __ldg(p1 + y0 * nx + x1) * u;
  const double c11 = __ldg(p1 + y1 * nx + x0) * (1 - u) + __ldg(p1 + y1 * nx + x1) * u;
  return (float)(c0 * (1 - t) + (c01 * (1 - w) + c11 * w) * t);
}

/* Four clamped neighbours with Keys weights (fixed size: registers, not local memory). */
__device__ inline void cubic_taps(double x, int n, int idx[4], double w[4])
{
  const double f = floor(x), u = x - f;
#pragma unroll
  for (int q = 0; q < 4; q++) {
    idx[q] = clampi((int)f - 1 + q, n);
    w[q] = nw_keys_weight(u - (double)(q - 1));
  }
}

/* One row's four taps along x, summed as sampler.c sums them. */
__device__ inline double cubic_row(const float *__restrict__ row, const int ix[4],
                                   const double wx[4])
{
  double r = 0.0;
#pragma unroll
  for (int a = 0; a < 4; a++)
    r += wx[a] * (double)__ldg(row + ix[a]);
  return r;
}

/* A flat z axis (2D) takes its one slice with weight 1, as sampler.c does. */
__device__ inline float sample_cubic(const float *__restrict__ d, int nx, int ny, int nz,
                                     double x, double y, double z)
{
  int ix[4], iy[4];
  double wx[4], wy[4];
  cubic_taps(x, nx, ix, wx);
  cubic_taps(y, ny, iy, wy);
  double sum = 0.0;
  if (nz == 1) {
#pragma unroll
    for (int b = 0; b < 4; b++)
      sum += 1.0 * wy[b] * cubic_row(d + iy[b] * nx, ix, wx);
    return (float)sum;
  }
  int iz[4];
  double wz[4];
  cubic_taps(z, nz, iz, wz);
#pragma unroll
  for (int c = 0; c < 4; c++)
#pragma unroll
    for (int b = 0; b < 4; b++)
      sum += wz[c] * wy[b] * cubic_row(d + (iz[c] * ny + iy[b]) * nx, ix, wx);
  return (float)sum;
}

/* nw_sampler_sample for the sampler S: false outside the domain (or at a NaN position). */
template <int S>
__device__ inline bool sample(const EvalArgs &a, double x, double y, double z, float *out)
{
  if (!in_domain(x, a.mnx) || !in_domain(y, a.mny) || !in_domain(z, a.mnz))
    return false;
  if (S == NW_SAMPLER_NEAREST)
    *out = sample_nearest(a.M, a.mnx, a.mny, a.mnz, x, y, z);
  else if (S == NW_SAMPLER_LINEAR)
    *out = sample_linear(a.M, a.mnx, a.mny, a.mnz, x, y, z);
  else
    *out = sample_cubic(a.M, a.mnx, a.mny, a.mnz, x, y, z);
  return true;
}

/* One row of the map, ((m0 i + m1 j) + m2 k) + m3 as the CPU's C evaluates it: the explicit
 * roundings keep nvcc from fusing into FMAs, so positions are the CPU's bit for bit. */
__device__ inline double map_row(const double *m, double i, double j, double k)
{
  return __dadd_rn(__dadd_rn(__dadd_rn(__dmul_rn(m[0], i), __dmul_rn(m[1], j)), __dmul_rn(m[2], k)),
                   m[3]);
}

/* ---- the MI histogram (affine_cost.c nw_affine_bin, nw_affine_parzen) ------------------- */

__device__ inline int bin_of(double v, double lo, double hi, int bins)
{
  const int b = (int)floor((double)bins * (v - lo) / (hi - lo));
  return clampi(b, bins);
}

/* Adds the pair (f, m) to hist (shared or global; bins², fixed bin major). */
__device__ void add_joint(const EvalArgs &a, unsigned long long *hist, double f, double m)
{
  const int bins = a.bins;
  const int bf = bin_of(f, a.fixed_lo, a.fixed_hi, bins);
  if (!a.parzen) {
    atomicAdd(&hist[bf * bins + bin_of(m, a.moving_lo, a.moving_hi, bins)],
              (unsigned long long)kHistOne);
    return;
  }
  double u = (double)(bins - 1) * (m - a.moving_lo) / (a.moving_hi - a.moving_lo);
  u = fmin(fmax(u, 0.0), (double)(bins - 1));
  const int fl = (int)floor(u);
#pragma unroll
  for (int q = 0; q < 4; q++) {
    const double w = nw_bspline3_weight(u - (double)(fl - 1 + q));
    /* the CPU adds zero weights too; adding nothing is the same sum */
    const unsigned long long fixed_point = __double2ull_rn(w * kHistOne);
    if (fixed_point != 0)
      atomicAdd(&hist[bf * bins + clampi(fl - 1 + q, bins)], fixed_point);
  }
}

/* ---- reductions ------------------------------------------------------------------------- */

__device__ inline double warp_sum(double v)
{
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}

/* Sums v[kSums] over the block (every thread calls it); threads q < kSums write sum q to
 * out[q]. The warps' sums are added in warp order: the same result on every run. */
__device__ void block_sums(const double v[kSums], double *out)
{
  __shared__ double red[kSums][kWarps];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int q = 0; q < kSums; q++) {
    const double s = warp_sum(v[q]);
    if (lane == 0)
      red[q][warp] = s;
  }
  __syncthreads();
  if (threadIdx.x < kSums) {
    double s = 0.0;
    for (int w = 0; w < kWarps; w++)
      s += red[threadIdx.x][w];
    out[threadIdx.x] = s;
  }
}

/* ---- the kernel ------------------------------------------------------------------------- */

/* The last block to finish: the partials of every block summed in a fixed order (the same
 * on every run), the histogram as counts, both into the mapped host buffer; then the
 * histogram and the counter zeroed for the next evaluation, and last the launch's ticket
 * after the results, which the host waits for (wait_result). Reads bypass L1 (__ldcg): other
 * blocks wrote them. */
__device__ void finish(const double *partials, unsigned long long *hist, unsigned int *done,
                       double *out, int hist_len, unsigned long long ticket)
{
  double s[kSums];
#pragma unroll
  for (int q = 0; q < kSums; q++) {
    s[q] = 0.0;
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += blockDim.x)
      s[q] += __ldcg(partials + (size_t)b * kSums + q);
  }
  block_sums(s, out);
  for (int b = threadIdx.x; b < hist_len; b += blockDim.x) {
    out[kSums + b] = (double)__ldcg(hist + b) / kHistOne;
    hist[b] = 0;
  }
  if (threadIdx.x == 0)
    *done = 0;
  /* every thread's results reach the host before the ticket that says they are there */
  __threadfence_system();
  __syncthreads();
  if (threadIdx.x == 0)
    *(volatile unsigned long long *)(out + kSums + hist_len) = ticket;
}

/* Fixed voxel e's pair (f, m) for the map, false where it does not count (the moving mask,
 * the domain). P kCodes or kTexture: precision u16 (affine_quant.h, the CPU twin's
 * evaluate_u16 line for line): the codes, positions in float from mapf, the linear and cubic
 * taps gathered from the texture with kTexture; kSingle: float images, positions in double
 * (map) as sampler.c. The fixed mask is the caller's. */
template <int S, int P>
__device__ inline bool voxel_pair(const EvalArgs &a, const double *map, const float *mapf,
                                  unsigned int e, unsigned int vi, unsigned int vj,
                                  unsigned int vk, double *f, double *m)
{
  if (P != kSingle) {
    const float i = (float)vi, j = (float)vj, k = (float)vk;
    const float x = nw_quant_map_row(mapf, i, j, k), y = nw_quant_map_row(mapf + 4, i, j, k),
                z = nw_quant_map_row(mapf + 8, i, j, k);
    if (!nw_quant_inside(x, y, z, a.mnx, a.mny, a.mnz))
      return false;
    float q;
    if (S == NW_SAMPLER_NEAREST)
      q = (float)__ldg(a.qM + nw_quant_nearest(x, y, z, a.mnx, a.mny, a.mnz));
    else if (S == NW_SAMPLER_LINEAR)
      q = P == kTexture ? nw_codes_linear(a.qtexM, a.mnz, x, y, z)
                        : nw_quant_linear(a.qM, a.mnx, a.mny, a.mnz, x, y, z);
    else
      q = P == kTexture ? nw_codes_cubic(a.qtexM, a.mnx, a.mny, a.mnz, x, y, z)
                        : nw_quant_cubic(a.qM, a.mnx, a.mny, a.mnz, x, y, z);
    if (a.mmask != nullptr &&
        !(__ldg(a.mmask + nw_quant_nearest(x, y, z, a.mnx, a.mny, a.mnz)) >= 0.5f))
      return false;
    *m = nw_quant_value(a.quant_m, q);
    *f = nw_quant_value(a.quant_f, (float)__ldg(a.qF + e));
    return true;
  }
  const double i = (double)vi, j = (double)vj, k = (double)vk;
  const double x = map_row(map, i, j, k), y = map_row(map + 4, i, j, k),
               z = map_row(map + 8, i, j, k);
  float mv;
  if (!sample<S>(a, x, y, z, &mv))
    return false;
  /* the moving mask, nearest (same grid as M, so the domain test above holds for it) */
  if (a.mmask != nullptr && !(sample_nearest(a.mmask, a.mnx, a.mny, a.mnz, x, y, z) >= 0.5f))
    return false;
  *f = (double)__ldg(a.F + e);
  *m = (double)mv;
  return true;
}

/* A thread's fixed voxel (i, j, k) through the grid-stride loop without a division a voxel:
 * the stride split once into whole voxels, rows and slices (si < nx, sj < ny), then each step
 * adds them with at most one carry per axis. (Two 32-bit divisions a voxel, ~40
 * instructions, cost more than the rest of a u16 evaluation's arithmetic.) */
struct VoxelWalk {
  unsigned int i, j, k;
  unsigned int si, sj, sk, nx, ny;
  __device__ VoxelWalk(unsigned int e, unsigned int stride, unsigned int nx_, unsigned int ny_)
      : nx(nx_), ny(ny_)
  {
    const unsigned int row = e / nx, srow = stride / nx;
    i = e - row * nx;
    j = row % ny;
    k = row / ny;
    si = stride - srow * nx;
    sj = srow % ny;
    sk = srow / ny;
  }
  __device__ void step()
  {
    i += si;
    const unsigned int ci = i >= nx;
    i -= ci ? nx : 0u;
    j += sj + ci; /* < 2 ny */
    const unsigned int cj = j >= ny;
    j -= cj ? ny : 0u;
    k += sk + cj;
  }
};

/* Where evaluation q of a launch (blockIdx.y of a batch, else 0) leaves its results: its
 * blocks' partials, its histogram, its counter of finished blocks and its output. */
struct EvalOut {
  double *partials;
  unsigned long long *hist;
  unsigned int *done;
  double *out;
  unsigned long long ticket;
};

template <bool MI>
__device__ inline EvalOut eval_out(const EvalArgs &a, unsigned int q, int hist_len)
{
  return {a.partials + (size_t)q * gridDim.x * kSums, MI ? a.hist + (size_t)q * hist_len : nullptr,
          a.done + q, a.out + (size_t)q * (kSums + hist_len + 1), a.ticket};
}

/* The block's sums s into its partials; the last block of the evaluation to get here adds up
 * every block's (finish). Every thread calls it. */
__device__ void block_done(const double s[kSums], const EvalOut &o, int hist_len)
{
  block_sums(s, o.partials + (size_t)blockIdx.x * kSums);
  /* the block's sums and histogram additions are visible device-wide before it counts */
  __shared__ bool last;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0)
    last = atomicAdd(o.done, 1u) == gridDim.x - 1;
  __syncthreads();
  if (last) {
    __threadfence();
    finish(o.partials, o.hist, o.done, o.out, hist_len, o.ticket);
  }
}

/* One evaluation in one launch: a thread per fixed voxel (grid-stride) maps it, tests the
 * masks and the domain, samples the moving image with sampler S and adds to six double
 * sums (and, with MI, to the joint histogram); each block writes its sums, and the last
 * block to finish adds them up (finish). Templated on the sampler, MI and the storage (Q:
 * u16) so that each variant keeps its taps in registers. BATCH: gridDim.y evaluations, map
 * q = blockIdx.y from a.maps (a.mapsf), each with its own partials, counter, histogram and
 * output; the blocks of every map walk the voxels in the same order, so the maps' reads
 * meet in the caches. */
template <int S, bool MI, bool BATCH, int P>
__global__ void __launch_bounds__(kBlock, min_blocks(S, MI, (Storage)P))
    cost_kernel(EvalArgs a)
{
  extern __shared__ unsigned long long shared_hist[]; /* bins² when a.shared_hist */
  const int hist_len = MI ? a.bins * a.bins : 0;
  const unsigned int q = BATCH ? blockIdx.y : 0;
  /* a batch's map in shared memory (a broadcast read, no registers held for it) */
  __shared__ double batch_map[12];
  __shared__ float batch_mapf[12];
  if (BATCH) {
    if (threadIdx.x < 12) {
      if (P != kSingle)
        batch_mapf[threadIdx.x] = a.mapsf[12 * q + threadIdx.x];
      else
        batch_map[threadIdx.x] = a.maps[12 * q + threadIdx.x];
    }
    __syncthreads();
  }
  const double *const map = BATCH ? batch_map : a.map;
  const float *const mapf = BATCH ? batch_mapf : a.mapf;
  const EvalOut o = eval_out<MI>(a, q, hist_len);
  if (MI && a.shared_hist) {
    for (int b = threadIdx.x; b < hist_len; b += blockDim.x)
      shared_hist[b] = 0;
    __syncthreads();
  }
  unsigned long long *hist = MI && a.shared_hist ? shared_hist : o.hist;
  double s[kSums] = {0, 0, 0, 0, 0, 0};
  const unsigned int stride = gridDim.x * blockDim.x;
  const unsigned int e0 = blockIdx.x * blockDim.x + threadIdx.x;
  VoxelWalk v(e0, stride, (unsigned int)a.fnx, (unsigned int)a.fny);
  /* e < 2^31 and stride < 2^31, so e + stride never wraps */
  for (unsigned int e = e0; e < a.n; e += stride, v.step()) {
    if (a.fmask != nullptr && !(__ldg(a.fmask + e) >= 0.5f))
      continue;
    double f, m;
    if (!voxel_pair<S, P>(a, map, mapf, e, v.i, v.j, v.k, &f, &m))
      continue;
    if (MI)
      add_joint(a, hist, f, m);
    const double fs = f - a.fixed_shift, ms = m - a.moving_shift;
    s[0] += 1.0;
    s[1] += fs;
    s[2] += ms;
    s[3] += fs * fs;
    s[4] += ms * ms;
    s[5] += fs * ms;
  }
  if (MI && a.shared_hist) {
    __syncthreads(); /* every thread's additions are in before the block's are flushed */
    for (int b = threadIdx.x; b < hist_len; b += blockDim.x)
      if (shared_hist[b] != 0)
        atomicAdd(&o.hist[b], shared_hist[b]);
  }
  block_done(s, o, hist_len);
}

/* cost_kernel's kTexture with K voxels a thread (linear, mse or ncc, no masks): a thread per
 * group of K consecutive voxels of a fixed row (grid-stride over the groups; the short group
 * at a row's end has masked lanes, unless WHOLE: K divides the rows), the group's K (2K in
 * 3D) gathers in flight together (affine_cost_rows_cuda.cuh). FLAT: a 2D level. The same
 * voxels and samples as kTexture's; the sums taken on the codes (nw_rows_values). */
template <int K, bool FLAT, bool WHOLE, bool BATCH, bool FILTER>
__global__ void __launch_bounds__(kBlock, nw_rows_min_blocks(K, FLAT, BATCH))
    rows_kernel(EvalArgs a)
{
  __shared__ float batch_mapf[12]; /* as cost_kernel's */
  if (BATCH) {
    if (threadIdx.x < 12)
      batch_mapf[threadIdx.x] = a.mapsf[12 * blockIdx.y + threadIdx.x];
    __syncthreads();
  }
  const NwRowsLevel lv = {FILTER ? a.qtexMf : a.qtexM, a.qF, a.quant_f, a.quant_m,
                          a.fixed_shift, a.moving_shift,
                          (unsigned int)a.fnx, (unsigned int)a.fny, a.n, a.mnx, a.mny, a.mnz,
                          a.rows};
  double s[kSums];
  const float *mapf = BATCH ? batch_mapf : a.mapf;
  const unsigned int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (FLAT && mapf[8] == 0.0f) /* the z of a 2D level's rows is the row's (nw_rows_gather) */
    nw_rows_sums<K, FLAT, WHOLE, FLAT, FILTER>(lv, mapf, t, s);
  else
    nw_rows_sums<K, FLAT, WHOLE, false, FILTER>(lv, mapf, t, s);
  block_done(s, eval_out<false>(a, BATCH ? blockIdx.y : 0, 0), 0);
}

using CostKernel = void (*)(EvalArgs);

/* The variant for a sampler, metric and storage, one evaluation or a batch; the rows ones with
 * k voxels a thread (kTexture's where they do not exist: never chosen, variant), in the order
 * of their kRows2D, kRowsWhole and kRowsFilter bits. Nearest reads one tap a sample: it has
 * no texture variant (kTexture gives kCodes's). */
CostKernel cost_kernel_for(NwSampler sampler, bool mi, bool batch, Storage p, int k)
{
  if (p >= kRows && nw_rows_exist(sampler, mi, k)) {
#define NW_ROWS_BATCH(K, F, W, X) {rows_kernel<K, F, W, false, X>, rows_kernel<K, F, W, true, X>}
#define NW_ROWS_BLENDS(K, X)                                                                     \
  NW_ROWS_BATCH(K, false, false, X), NW_ROWS_BATCH(K, true, false, X),                          \
      NW_ROWS_BATCH(K, false, true, X), NW_ROWS_BATCH(K, true, true, X)
#define NW_ROWS_FORMS(K) {NW_ROWS_BLENDS(K, false), NW_ROWS_BLENDS(K, true)}
    static const CostKernel rows[2][8][2] = {NW_ROWS_FORMS(2), NW_ROWS_FORMS(4)};
#undef NW_ROWS_FORMS
#undef NW_ROWS_BLENDS
#undef NW_ROWS_BATCH
    return rows[k == 4][p - kRows][batch ? 1 : 0];
  }
#define NW_COST_STORAGES(S, MI, B)                                                               \
  {cost_kernel<S, MI, B, kSingle>, cost_kernel<S, MI, B, kCodes>,                               \
   cost_kernel<S, MI, B, (S) == NW_SAMPLER_NEAREST ? kCodes : kTexture>}
#define NW_COST_VARIANTS(S)                                                                      \
  {{NW_COST_STORAGES(S, false, false), NW_COST_STORAGES(S, false, true)},                        \
   {NW_COST_STORAGES(S, true, false), NW_COST_STORAGES(S, true, true)}}
  static const CostKernel table[3][2][2][kTexture + 1] = {NW_COST_VARIANTS(NW_SAMPLER_NEAREST),
                                                          NW_COST_VARIANTS(NW_SAMPLER_LINEAR),
                                                          NW_COST_VARIANTS(NW_SAMPLER_CUBIC)};
#undef NW_COST_VARIANTS
#undef NW_COST_STORAGES
  const int si = sampler == NW_SAMPLER_NEAREST ? 0 : sampler == NW_SAMPLER_LINEAR ? 1 : 2;
  return table[si][mi ? 1 : 0][batch ? 1 : 0][p > kTexture ? kTexture : p];
}

/* nw_affine_quantise on the device: v's codes into q (affine_quant.h). */
__global__ void __launch_bounds__(kBlock)
    quantise_kernel(const float *__restrict__ v, uint16_t *__restrict__ q, unsigned int n,
                    NwQuant quant)
{
  for (unsigned int e = blockIdx.x * blockDim.x + threadIdx.x; e < n; e += gridDim.x * blockDim.x)
    q[e] = nw_quant_code(quant, __ldg(v + e));
}

/* nw_affine_resample on the device: every fixed voxel's moving sample (sampler S), or
 * background outside the moving image; positions as cost_kernel's. */
template <int S>
__global__ void __launch_bounds__(kBlock) warp_kernel(EvalArgs a, float *out, float background)
{
  const unsigned int stride = gridDim.x * blockDim.x;
  const unsigned int fnx = (unsigned int)a.fnx, fny = (unsigned int)a.fny;
  for (unsigned int e = blockIdx.x * blockDim.x + threadIdx.x; e < a.n; e += stride) {
    const unsigned int row = e / fnx;
    const double i = (double)(e - row * fnx);
    const double j = (double)(row % fny), k = (double)(row / fny);
    float v = background;
    sample<S>(a, map_row(a.map, i, j, k), map_row(a.map + 4, i, j, k), map_row(a.map + 8, i, j, k),
              &v);
    out[e] = v;
  }
}

/* ---- the back end ----------------------------------------------------------------------- */

struct CudaCost {
  NwAffineCostSpec spec;
  NwAffineLevel level;
  cudaStream_t stream;
  bool have_stream;
  /* indexed by Storage: precision single, u16 codes, u16 through the texture, the same with
   * rows_k voxels a thread */
  CostKernel kernel[kStorages]; /* the variants for the spec's sampler and metric */
  int max_blocks[kStorages];    /* resident blocks of each on the whole device */
  size_t shared_bytes;  /* the kernel's dynamic shared memory (0: global histogram) */
  int hist_len;         /* bins² for mi, else 0 */
  float *F, *M, *fmask, *mmask; /* the current level */
  bool owned[4];        /* F, M, fmask, mmask uploaded by set_level (else kept levels) */
  /* precision u16: the current level's images as codes (made by set_level from F and M on
   * the device, as nw_affine_quantise makes them on the host) and their quantisations */
  uint16_t *qF, *qM;
  NwQuant quant_f, quant_m;
  /* the moving codes as a texture (remade when a level of another size is set), whether the
   * current level reads through it (texture_wanted), and the largest image the device's
   * textures hold, asked once (zeros: no texture, NW_AFFINE_TEXTURE=0 at creation) */
  NwCodesTexture qtex;
  bool level_tex;
  int tex_max[3];
  /* the rows variants' voxels a thread, 3D and 2D (NW_AFFINE_VOXELS_PER_THREAD at creation;
   * 1: none), whether the current level takes one (set_level), and its form */
  int rows_k[2];
  bool level_rows;
  NwRowsForm rows;
  struct {
    const NwVolume *host; /* the level's host copy, the caller's */
    float *dev;
  } kept[kMaxKept];     /* pyramid levels made here */
  int n_kept;
  float *stage;         /* pinned pair for the large copies (staging_cuda.cuh), on first use */
  float *warped;        /* warp's output at the current level, allocated on first use */
  size_t warped_bytes;
  double *partials;     /* max(max_blocks) x kSums */
  unsigned long long *hist;
  unsigned int *done;
  double *h_out, *d_out; /* out_stride, pinned and mapped: the host's and device's view */
  bool wait_sync;        /* NW_AFFINE_WAIT=sync: wait_result synchronises the stream */
  /* evaluate_batch's own, made by its first call: the same per map, and the maps */
  struct {
    bool ready;
    CostKernel kernel[kStorages];
    int max_blocks[kStorages];
    double *partials;         /* (max(max_blocks) + kMaxBatch) x kSums */
    unsigned long long *hist; /* kMaxBatch x hist_len */
    unsigned int *done;       /* kMaxBatch */
    double *h_out, *d_out;    /* kMaxBatch x out_stride, pinned and mapped */
    /* kMaxBatch x 12 doubles, then kMaxBatch x 12 floats (the maps rounded, for u16):
     * pinned, and the device's copy */
    double *h_maps, *d_maps;
  } batch;
  /* the pyramids' and levels' own (cuda_pyramid, level_stats, set_level) */
  struct {
    float *arena[kMaxKept]; /* each pyramid's one allocation, its levels in it */
    int n_arenas;
    /* grow-only: the two smoothing buffers of a pyramid being made, then the current
     * level's u16 codes (qF, qM point into it) */
    void *work;
    size_t work_bytes;
    NwImageStatsCuda *stats; /* level_stats': 2 x kNwStatsBlocks partials, then 2 results */
    bool bound;              /* level_stats put c->level's images on the device, for set_level */
  } prep;
};

/* An evaluation's slot in the mapped output, in doubles: its sums, its histogram and the
 * ticket of the launch that wrote them (finish). */
size_t out_stride(const CudaCost *c)
{
  return kSums + (size_t)c->hist_len + 1;
}

/* The bytes of the mapped output of `evals` evaluations. */
size_t out_bytes(const CudaCost *c, int evals)
{
  return (size_t)evals * out_stride(c) * sizeof(double);
}

/* A launch's ticket: unique in the process, so that a kept pinned block (kept_blocks_cuda.cuh)
 * never holds one that a later launch waits for. */
unsigned long long next_ticket(void)
{
  static unsigned long long last = 0;
  return __atomic_add_fetch(&last, 1, __ATOMIC_RELAXED);
}

inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/* Waits until evaluation q of the launch with this ticket has left its result in out (the
 * host's view of the mapped output): by reading its ticket, which the host sees some
 * microseconds before cudaStreamSynchronize returns, as the last block writes it before the
 * kernel retires. A stalled or failed launch is caught by asking the stream now and then (it
 * errs, or is done with no ticket). NW_AFFINE_WAIT=sync synchronises instead. */
gboolean wait_result(const CudaCost *c, const double *out, int q, unsigned long long ticket,
                     GError **error)
{
  if (c->wait_sync) /* the whole launch, once */
    return q > 0 || NW_CUDA_CHECK(cudaStreamSynchronize(c->stream), error);
  const unsigned long long *t =
      (const unsigned long long *)(out + (size_t)q * out_stride(c) + kSums + c->hist_len);
  for (unsigned int spins = 1; __atomic_load_n(t, __ATOMIC_ACQUIRE) != ticket; spins++) {
    cpu_relax();
    if (spins % 65536 != 0)
      continue;
    const cudaError_t st = cudaStreamQuery(c->stream);
    if (st == cudaErrorNotReady)
      continue;
    if (st != cudaSuccess)
      return NW_CUDA_CHECK(st, error);
    if (__atomic_load_n(t, __ATOMIC_ACQUIRE) == ticket)
      break;
    g_set_error(error, NW_ERROR, NW_ERROR_DEVICE,
                "affine (cuda): evaluation %d of a launch ended without its result", q + 1);
    return FALSE;
  }
  return TRUE;
}

/* The results of evaluations 0 .. k-1 of the launch with this ticket, each as it arrives in
 * out (wait_result): their sums and histograms into sums[0 .. k-1]. */
gboolean collect_results(const CudaCost *c, const double *out, int k, unsigned long long ticket,
                         NwAffineSums *sums, GError **error)
{
  for (int q = 0; q < k; q++) {
    if (!wait_result(c, out, q, ticket, error))
      return FALSE;
    const double *o = out + (size_t)q * out_stride(c);
    NwAffineSums *s = &sums[q];
    s->n = o[0];
    s->sf = o[1];
    s->sm = o[2];
    s->sff = o[3];
    s->smm = o[4];
    s->sfm = o[5];
    if (c->hist_len > 0)
      memcpy(s->joint, o + kSums, (size_t)c->hist_len * sizeof(double));
  }
  return TRUE;
}

void free_level(CudaCost *c)
{
  float **slot[4] = {&c->F, &c->M, &c->fmask, &c->mmask};
  for (int i = 0; i < 4; i++) {
    if (c->owned[i])
      nw_device_give(*slot[i]);
    *slot[i] = nullptr;
    c->owned[i] = false;
  }
  c->qF = c->qM = nullptr; /* in prep.work */
  c->level_tex = c->level_rows = false;
}

void cuda_destroy(void *impl)
{
  CudaCost *c = (CudaCost *)impl;
  if (c == nullptr)
    return;
  const gint64 t0 = g_get_monotonic_time();
  if (c->have_stream)
    cudaStreamSynchronize(c->stream); /* nothing may still use what is freed below */
  const gint64 t1 = g_get_monotonic_time();
  free_level(c);
  for (int i = 0; i < c->prep.n_arenas; i++)
    nw_device_give(c->prep.arena[i]);
  nw_device_give(c->prep.work);
  nw_device_give(c->prep.stats);
  nw_codes_texture_free(&c->qtex);
  nw_device_give(c->warped);
  nw_stage_free(c->stage);
  nw_device_give(c->partials);
  nw_device_give(c->hist);
  nw_device_give(c->done);
  nw_pinned_give(c->h_out, out_bytes(c, 1), cudaHostAllocMapped);
  nw_device_give(c->batch.partials);
  nw_device_give(c->batch.hist);
  nw_device_give(c->batch.done);
  nw_pinned_give(c->batch.h_out, out_bytes(c, kMaxBatch), cudaHostAllocMapped);
  nw_pinned_give(c->batch.h_maps, kMapsBytes, cudaHostAllocDefault);
  nw_device_give(c->batch.d_maps);
  if (c->have_stream)
    cudaStreamDestroy(c->stream);
  g_free(c);
  g_debug("affine (cuda): cost freed: the stream's work %.2f ms, the buffers %.2f ms",
          (t1 - t0) / 1e3, (g_get_monotonic_time() - t1) / 1e3);
}

/* The counter and histogram start at zero; every evaluation's last block leaves them so. */
gboolean zero_state(CudaCost *c, GError **error)
{
  return NW_CUDA_CHECK(cudaMemsetAsync(c->done, 0, sizeof *c->done, c->stream), error) &&
         (c->hist_len == 0 ||
          NW_CUDA_CHECK(cudaMemsetAsync(c->hist, 0, (size_t)c->hist_len * sizeof *c->hist,
                                        c->stream),
                        error)) &&
         NW_CUDA_CHECK(cudaStreamSynchronize(c->stream), error);
}

/* The resident blocks on the whole device of each variant (by Storage). */
gboolean resident_blocks(const CostKernel kernel[kStorages], size_t shared_bytes,
                         int out[kStorages], GError **error)
{
  int device = 0, sms = 0;
  if (!NW_CUDA_CHECK(cudaGetDevice(&device), error) ||
      !NW_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), error))
    return FALSE;
  for (int v = 0; v < kStorages; v++) {
    int per_sm = 0;
    if (!NW_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel[v], kBlock,
                                                                     shared_bytes),
                       error))
      return FALSE;
    out[v] = MAX(1, sms * per_sm);
  }
  return TRUE;
}

/* The variant of the current level. */
Storage variant(const CudaCost *c)
{
  return !nw_affine_precision_codes(c->level.precision) ? kSingle
         : c->level_rows ? (Storage)(kRows + (c->rows.flat ? kRows2D : 0) +
                                     (c->rows.whole ? kRowsWhole : 0) +
                                     (c->level.precision == NW_AFFINE_PRECISION_U16_FILTER
                                          ? kRowsFilter
                                          : 0))
         : c->level_tex  ? kTexture
                         : kCodes;
}

/* The blocks of a launch of variant v for the current level, at most max_blocks (the
 * resident ones): a thread a fixed voxel, or a group of them (the rows variants, whose
 * stride a.rows gets). */
unsigned int launch_grid(const CudaCost *c, Storage v, int max_blocks, EvalArgs *a)
{
  const NwVolume *f = c->level.fixed;
  const size_t threads =
      v >= kRows ? nw_rows_threads(c->rows, f->nx, f->ny, f->nz) : nw_volume_n_voxels(f);
  const unsigned int blocks =
      (unsigned int)MAX(1, MIN((size_t)max_blocks, (threads + kBlock - 1) / kBlock));
  if (v >= kRows)
    a->rows = nw_rows_grid(c->rows, (unsigned int)f->nx, (unsigned int)f->ny, blocks * kBlock);
  return blocks;
}

/* The largest of the variants' resident blocks (their partials' rows). */
int most_blocks(const int max_blocks[kStorages])
{
  int most = 0;
  for (int v = 0; v < kStorages; v++)
    most = MAX(most, max_blocks[v]);
  return most;
}

/* The variants for the spec, one evaluation (batch false) or a batch, into kernel. */
void cost_kernels(const CudaCost *c, bool batch, CostKernel kernel[kStorages])
{
  const bool mi = c->spec.metric == NW_METRIC_MI;
  for (int p = 0; p < kStorages; p++)
    kernel[p] = cost_kernel_for(c->spec.sampler, mi, batch, (Storage)p,
                                c->rows_k[p >= kRows && ((p - kRows) & kRows2D) != 0]);
}

void *cuda_create(const NwAffineCostSpec *spec, GError **error)
{
  const gint64 t0 = g_get_monotonic_time();
  CudaCost *c = g_new0(CudaCost, 1);
  c->spec = *spec;
  const bool mi = spec->metric == NW_METRIC_MI;
  nw_rows_k_from_env(c->rows_k);
  cost_kernels(c, false, c->kernel);
  const char *env = g_getenv("NW_AFFINE_TEXTURE");
  if (!(env != nullptr && strcmp(env, "0") == 0))
    nw_codes_texture_limits(c->tex_max);
  c->wait_sync = g_strcmp0(g_getenv("NW_AFFINE_WAIT"), "sync") == 0;
  c->hist_len = mi ? spec->bins * spec->bins : 0;
  const size_t hist_bytes = (size_t)c->hist_len * sizeof(unsigned long long);
  c->shared_bytes = mi && hist_bytes <= kSharedHistMax ? hist_bytes : 0;
  gboolean ok = resident_blocks(c->kernel, c->shared_bytes, c->max_blocks, error) &&
                NW_CUDA_CHECK(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking), error);
  c->have_stream = ok;
  const size_t n_partials = (size_t)most_blocks(c->max_blocks);
  /* the last block writes the result straight into pinned host memory: no copy to launch */
  ok = ok &&
       NW_CUDA_CHECK(nw_device_take((void **)&c->partials, n_partials * kSums * sizeof(double)),
                     error) &&
       NW_CUDA_CHECK(nw_device_take((void **)&c->done, sizeof *c->done), error) &&
       NW_CUDA_CHECK(nw_pinned_take((void **)&c->h_out, out_bytes(c, 1), cudaHostAllocMapped),
                     error) &&
       NW_CUDA_CHECK(cudaHostGetDevicePointer(&c->d_out, c->h_out, 0), error) &&
       (!mi || NW_CUDA_CHECK(nw_device_take((void **)&c->hist, hist_bytes), error)) &&
       zero_state(c, error);
  if (!ok) {
    cuda_destroy(c);
    return nullptr;
  }
  g_debug("affine (cuda): cost made in %.2f ms (stream, buffers, pinned output)",
          (g_get_monotonic_time() - t0) / 1e3);
  return c;
}

/* The device level made by pyramid whose host copy is v, or NULL. */
float *kept_level(const CudaCost *c, const NwVolume *v)
{
  for (int i = c->n_kept - 1; i >= 0; i--)
    if (c->kept[i].host == v)
      return c->kept[i].dev;
  return nullptr;
}

/* *dst: v's kept level, else a device copy of v (scalar) allocated here (*owned); NULL v
 * leaves *dst NULL. */
gboolean upload(CudaCost *c, float **dst, bool *owned, const NwVolume *v, GError **error)
{
  if (v == nullptr)
    return TRUE;
  if ((*dst = kept_level(c, v)) != nullptr)
    return TRUE;
  if (v->data == nullptr) { /* a header of another cost's pyramid */
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "affine (cuda): a level without voxels that this cost did not make");
    return FALSE;
  }
  const size_t n = nw_volume_n_voxels(v);
  *owned = true;
  return NW_CUDA_CHECK(nw_device_take((void **)dst, n * sizeof(float)), error) &&
         NW_CUDA_CHECK(nw_upload_floats(*dst, v->data, n, nw_stage_for(&c->stage, n), c->stream), error);
}

gboolean same_dims(const NwVolume *a, const NwVolume *b)
{
  return a->nx == b->nx && a->ny == b->ny && a->nz == b->nz;
}

/* Refuses what the kernel does not handle instead of computing something else. */
gboolean check_level(const NwAffineLevel *l, GError **error)
{
  const NwVolume *v[4] = {l->fixed, l->moving, l->fixed_mask, l->moving_mask};
  for (int i = 0; i < 4; i++)
    if (v[i] != nullptr && v[i]->nc != 1) {
      g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                  "affine (cuda): images and masks must be scalar (one has %d components)",
                  v[i]->nc);
      return FALSE;
    }
  if ((l->fixed_mask != nullptr && !same_dims(l->fixed_mask, l->fixed)) ||
      (l->moving_mask != nullptr && !same_dims(l->moving_mask, l->moving))) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "affine (cuda): a mask is not on its image's grid");
    return FALSE;
  }
  return TRUE;
}

/* prep.work of at least bytes (grow-only: its contents are not kept). */
gboolean work_ready(CudaCost *c, size_t bytes, GError **error)
{
  if (bytes <= c->prep.work_bytes)
    return TRUE;
  /* nothing in flight may still use it: the next taker may have it at once */
  if (!NW_CUDA_CHECK(cudaStreamSynchronize(c->stream), error))
    return FALSE;
  nw_device_give(c->prep.work);
  c->prep.work = nullptr;
  c->prep.work_bytes = 0;
  if (!NW_CUDA_CHECK(nw_device_take(&c->prep.work, bytes), error))
    return FALSE;
  c->prep.work_bytes = bytes;
  return TRUE;
}

/* u16 codes from the start of prep.work to the moving image's: 256-byte aligned. */
size_t codes_offset(const NwAffineLevel *l)
{
  return (nw_volume_n_voxels(l->fixed) + 127) / 128 * 128;
}

size_t codes_bytes(const NwAffineLevel *l)
{
  return (codes_offset(l) + nw_volume_n_voxels(l->moving)) * sizeof(uint16_t);
}

/* q: v's n codes (quantise_kernel), on the stream. */
gboolean quantise(CudaCost *c, uint16_t *q, const float *v, size_t n, NwQuant quant, GError **error)
{
  const int blocks = (int)MIN((size_t)c->max_blocks[0] * 4, (n + kBlock - 1) / kBlock);
  quantise_kernel<<<MAX(blocks, 1), kBlock, 0, c->stream>>>(v, q, (unsigned int)n, quant);
  return NW_CUDA_CHECK(nw_cuda_launched(c->stream), error);
}

/* nw_affine_cost_cuda_texture_levels's count */
int texture_levels = 0;

/* nw_affine_cost_cuda_voxels_per_thread's: the last u16 level's */
int last_per_thread = 1;

/* Whether the u16 level's moving taps should come from the texture: linear and cubic (one
 * tap a sample for nearest: nothing to gather), where the device's textures hold the image
 * (tex_max, zeros when NW_AFFINE_TEXTURE=0 asked for the plain loads: the same samples). */
bool texture_wanted(const CudaCost *c, const NwAffineLevel *level)
{
  const NwVolume *m = level->moving;
  return c->spec.sampler != NW_SAMPLER_NEAREST && m->nx <= c->tex_max[0] &&
         m->ny <= c->tex_max[1] && m->nz <= c->tex_max[2];
}

/* level's images on the device as c->level's: the kept levels where pyramid made them, the
 * others uploaded (the previous level's uploads freed). */
gboolean bind_level(CudaCost *c, const NwAffineLevel *level, GError **error)
{
  c->prep.bound = false;
  if (!check_level(level, error))
    return FALSE;
  /* the previous level's copies may still be in flight on the stream */
  if (!NW_CUDA_CHECK(cudaStreamSynchronize(c->stream), error))
    return FALSE;
  free_level(c);
  c->level = *level;
  const NwVolume *v[4] = {level->fixed, level->moving, level->fixed_mask, level->moving_mask};
  float **slot[4] = {&c->F, &c->M, &c->fmask, &c->mmask};
  size_t bytes = 0; /* what is not on the device yet */
  for (int i = 0; i < 4; i++)
    if (v[i] != nullptr && kept_level(c, v[i]) == nullptr)
      bytes += nw_volume_n_voxels(v[i]) * sizeof(float);
  if (nw_affine_precision_codes(level->precision) && codes_bytes(level) > c->prep.work_bytes)
    bytes += codes_bytes(level);
  const NwVolume *m = level->moving;
  if (nw_affine_precision_codes(level->precision) && texture_wanted(c, level) &&
      (c->qtex.nx != m->nx || c->qtex.ny != m->ny || c->qtex.nz != m->nz))
    bytes += nw_volume_n_voxels(m) * sizeof(uint16_t); /* the codes' texture (codes_texture) */
  if (!nw_cuda_check_fits(bytes, "affine: the images", "use --device cpu or smaller images",
                          error))
    return FALSE;
  for (int i = 0; i < 4; i++)
    if (!upload(c, slot[i], &c->owned[i], v[i], error))
      return FALSE;
  c->prep.bound = true;
  return TRUE;
}

bool same_volumes(const NwAffineLevel *a, const NwAffineLevel *b)
{
  return a->fixed == b->fixed && a->moving == b->moving && a->fixed_mask == b->fixed_mask &&
         a->moving_mask == b->moving_mask;
}

/* The statistics of the level's images where they are (nw_affine_cost_set_level calls this
 * first and then set_level, which keeps the images put on the device here). */
gboolean cuda_level_stats(void *impl, const NwAffineLevel *level, NwAffineStats *fixed,
                          NwAffineStats *moving, NwQuant *quant, GError **error)
{
  CudaCost *c = (CudaCost *)impl;
  const size_t stats_len = 2 * kNwStatsBlocks + 2;
  if (!bind_level(c, level, error))
    return FALSE;
  c->prep.bound = false; /* until the statistics are in */
  if (c->prep.stats == nullptr &&
      !NW_CUDA_CHECK(nw_device_take((void **)&c->prep.stats, stats_len * sizeof(NwImageStatsCuda)),
                     error))
    return FALSE;
  const float *const image[2] = {c->F, c->M}, *const mask[2] = {c->fmask, c->mmask};
  const unsigned int n[2] = {(unsigned int)nw_volume_n_voxels(level->fixed),
                             (unsigned int)nw_volume_n_voxels(level->moving)};
  NwImageStatsCuda *out = c->prep.stats + 2 * kNwStatsBlocks, h[2];
  if (!NW_CUDA_CHECK(nw_affine_stats_cuda(out, c->prep.stats, image, mask, n, c->stream), error) ||
      !NW_CUDA_CHECK(cudaMemcpyAsync(h, out, sizeof h, cudaMemcpyDeviceToHost, c->stream), error) ||
      !NW_CUDA_CHECK(cudaStreamSynchronize(c->stream), error))
    return FALSE;
  NwAffineStats *s[2] = {fixed, moving};
  for (int i = 0; i < 2; i++) {
    /* as nw_affine_stats_add leaves them: lo +inf and hi -inf over an empty mask */
    *s[i] = (NwAffineStats){h[i].sum, (double)h[i].n, (double)h[i].lo, (double)h[i].hi};
    if (quant != nullptr) /* as nw_affine_cost_set_level makes them on the host */
      quant[i] = nw_quant_make(h[i].all_lo, h[i].all_hi, h[i].fractional == 0);
  }
  c->prep.bound = true;
  return TRUE;
}

/* The moving codes (c->qM) into the texture, on the stream; false (with the reason in the
 * debug log) leaves the level to the plain loads, which give the same samples. */
bool codes_texture(CudaCost *c, const NwAffineLevel *level)
{
  const NwVolume *m = level->moving;
  const cudaError_t e = nw_codes_texture_fill(&c->qtex, c->qM, m->nx, m->ny, m->nz, c->stream);
  if (e == cudaSuccess)
    return true;
  cudaGetLastError(); /* not sticky: clear it for the next call's check */
  g_debug("affine (cuda): the moving codes as a texture: %s; plain loads instead",
          cudaGetErrorString(e));
  nw_codes_texture_free(&c->qtex);
  return false;
}

gboolean cuda_set_level(void *impl, const NwAffineLevel *level, GError **error)
{
  CudaCost *c = (CudaCost *)impl;
  const bool bound = c->prep.bound && same_volumes(&c->level, level);
  if (!bound && !bind_level(c, level, error))
    return FALSE;
  c->prep.bound = false; /* a later set_level without level_stats binds again */
  c->level = *level;     /* with the statistics now */
  if (nw_affine_precision_codes(level->precision)) {
    c->quant_f = level->fixed_quant;
    c->quant_m = level->moving_quant;
    if (!work_ready(c, codes_bytes(level), error))
      return FALSE;
    uint16_t *codes = (uint16_t *)c->prep.work;
    if (!quantise(c, codes, c->F, nw_volume_n_voxels(level->fixed), c->quant_f, error) ||
        !quantise(c, codes + codes_offset(level), c->M, nw_volume_n_voxels(level->moving),
                  c->quant_m, error))
      return FALSE;
    c->qF = codes;
    c->qM = codes + codes_offset(level);
    c->level_tex = texture_wanted(c, level) && codes_texture(c, level);
    if (c->level_tex)
      g_atomic_int_inc(&texture_levels);
    /* K voxels a thread where the texture is read, the spec and the level allow them, and
     * NW_AFFINE_VOXELS_PER_THREAD did not ask for 1 */
    c->rows = nw_rows_form(c->rows_k, level->fixed->nx, level->fixed->nz, level->moving->nz, c->qF);
    c->level_rows = c->level_tex && nw_rows_level_ok(level) &&
                    nw_rows_exist(c->spec.sampler, c->spec.metric == NW_METRIC_MI, c->rows.k);
    g_atomic_int_set(&last_per_thread, c->level_rows ? c->rows.k : 1);
  }
  /* the host volumes are only borrowed: wait until the copies are done */
  return NW_CUDA_CHECK(cudaStreamSynchronize(c->stream), error);
}

/* The kernels' arguments for map at the current level; FALSE without one. */
gboolean eval_args(const CudaCost *c, const double map[12], EvalArgs *out, GError **error)
{
  const NwAffineLevel *l = &c->level;
  if (c->F == nullptr || c->M == nullptr || /* no level, or its upload failed */
      (variant(c) != kSingle && (c->qF == nullptr || c->qM == nullptr)) ||
      (variant(c) == kTexture && c->qtex.tex == 0)) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "affine (cuda): no images for this level");
    return FALSE;
  }
  EvalArgs a = {};
  for (int q = 0; q < 12; q++) {
    a.map[q] = map[q];
    a.mapf[q] = (float)map[q]; /* as the CPU twin rounds it (evaluate_u16) */
  }
  a.F = c->F;
  a.M = c->M;
  a.qF = c->qF;
  a.qM = c->qM;
  a.qtexM = c->qtex.tex;
  a.qtexMf = c->qtex.filtered;
  a.quant_f = c->quant_f;
  a.quant_m = c->quant_m;
  a.fmask = c->fmask;
  a.mmask = c->mmask;
  a.fnx = l->fixed->nx, a.fny = l->fixed->ny, a.fnz = l->fixed->nz;
  a.mnx = l->moving->nx, a.mny = l->moving->ny, a.mnz = l->moving->nz;
  a.n = (unsigned int)nw_volume_n_voxels(l->fixed);
  a.parzen = c->spec.parzen ? 1 : 0;
  a.bins = c->spec.bins;
  a.shared_hist = c->shared_bytes > 0;
  a.fixed_shift = l->fixed_shift, a.moving_shift = l->moving_shift;
  a.fixed_lo = l->fixed_lo, a.fixed_hi = l->fixed_hi;
  a.moving_lo = l->moving_lo, a.moving_hi = l->moving_hi;
  a.partials = c->partials;
  a.hist = c->hist;
  a.done = c->done;
  a.out = c->d_out;
  a.ticket = next_ticket();
  *out = a;
  return TRUE;
}

gboolean cuda_evaluate(void *impl, const double map[12], NwAffineSums *sums, GError **error)
{
  CudaCost *c = (CudaCost *)impl;
  EvalArgs a;
  if (!eval_args(c, map, &a, error))
    return FALSE;
  const Storage v = variant(c);
  const unsigned int blocks = launch_grid(c, v, c->max_blocks[v], &a);
  /* one launch, and a wait for the ticket: the last block leaves the result in h_out */
  c->kernel[v]<<<blocks, kBlock, c->shared_bytes, c->stream>>>(a);
  return NW_CUDA_CHECK(nw_cuda_launched(c->stream), error) &&
         collect_results(c, c->h_out, 1, a.ticket, sums, error);
}

/* evaluate_batch's buffers and kernel variant, once per cost (no allocation per call). */
gboolean batch_ready(CudaCost *c, GError **error)
{
  if (c->batch.ready)
    return TRUE;
  CostKernel kernel[kStorages];
  cost_kernels(c, true, kernel);
  if (!resident_blocks(kernel, c->shared_bytes, c->batch.max_blocks, error))
    return FALSE;
  const size_t n_partials =
      (size_t)most_blocks(c->batch.max_blocks) + kMaxBatch;
  const gboolean ok =
      NW_CUDA_CHECK(nw_device_take((void **)&c->batch.partials, n_partials * kSums * sizeof(double)),
                    error) &&
      NW_CUDA_CHECK(nw_device_take((void **)&c->batch.done, kMaxBatch * sizeof(unsigned int)),
                    error) &&
      NW_CUDA_CHECK(cudaMemsetAsync(c->batch.done, 0, kMaxBatch * sizeof(unsigned int), c->stream),
                    error) &&
      (c->hist_len == 0 ||
       (NW_CUDA_CHECK(nw_device_take((void **)&c->batch.hist,
                                     (size_t)kMaxBatch * c->hist_len * sizeof(unsigned long long)),
                      error) &&
        NW_CUDA_CHECK(cudaMemsetAsync(c->batch.hist, 0,
                                      (size_t)kMaxBatch * c->hist_len * sizeof(unsigned long long),
                                      c->stream),
                      error))) &&
      NW_CUDA_CHECK(
          nw_pinned_take((void **)&c->batch.h_out, out_bytes(c, kMaxBatch), cudaHostAllocMapped),
          error) &&
      NW_CUDA_CHECK(cudaHostGetDevicePointer(&c->batch.d_out, c->batch.h_out, 0), error) &&
      NW_CUDA_CHECK(nw_pinned_take((void **)&c->batch.h_maps, kMapsBytes, cudaHostAllocDefault),
                    error) &&
      NW_CUDA_CHECK(nw_device_take((void **)&c->batch.d_maps, kMapsBytes), error) &&
      NW_CUDA_CHECK(cudaStreamSynchronize(c->stream), error);
  if (ok) { /* else the buffers made are freed with the cost */
    memcpy(c->batch.kernel, kernel, sizeof kernel);
    c->batch.ready = true;
  }
  return ok;
}

/* k evaluations in one launch (cost_kernel's BATCH variant): the maps go up in one copy, and
 * the device's resident blocks are shared out among them, so all maps run at once, each
 * map's blocks walking the voxels in the same order. Each map's sums are evaluate's but for
 * the order of the additions (fewer blocks per map): equal to rounding, deterministic. */
gboolean cuda_evaluate_batch(void *impl, const double (*maps)[12], int k, NwAffineSums *sums,
                             GError **error)
{
  CudaCost *c = (CudaCost *)impl;
  if (k <= 0)
    return TRUE;
  EvalArgs a;
  if (k > kMaxBatch || !eval_args(c, maps[0], &a, error) || !batch_ready(c, error)) {
    if (k > kMaxBatch)
      g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "affine (cuda): a batch of %d maps", k);
    return FALSE;
  }
  memcpy(c->batch.h_maps, maps, (size_t)k * 12 * sizeof(double));
  float *h_mapsf = (float *)(c->batch.h_maps + kMaxBatch * 12);
  for (int q = 0; q < k; q++)
    for (int r = 0; r < 12; r++)
      h_mapsf[12 * q + r] = (float)maps[q][r]; /* as the CPU twin rounds them */
  a.maps = c->batch.d_maps;
  a.mapsf = (const float *)(c->batch.d_maps + kMaxBatch * 12);
  a.partials = c->batch.partials;
  a.hist = c->batch.hist;
  a.done = c->batch.done;
  a.out = c->batch.d_out;
  const Storage v = variant(c);
  const unsigned int per_map = launch_grid(c, v, MAX(1, c->batch.max_blocks[v] / k), &a);
  if (!NW_CUDA_CHECK(cudaMemcpyAsync(c->batch.d_maps, c->batch.h_maps, kMapsBytes,
                                     cudaMemcpyHostToDevice, c->stream),
                     error))
    return FALSE;
  c->batch.kernel[v]<<<dim3(per_map, (unsigned int)k), kBlock, c->shared_bytes, c->stream>>>(a);
  return NW_CUDA_CHECK(nw_cuda_launched(c->stream), error) &&
         collect_results(c, c->batch.h_out, k, a.ticket, sums, error);
}

/* The current level's moving image sampled at map for every fixed voxel, into out (the
 * host's, a fixed level's voxels): the result's and the frames' warped image, made where the
 * images already are. */
gboolean cuda_warp(void *impl, const double map[12], NwSampler sampler, float background,
                   float *out, GError **error)
{
  CudaCost *c = (CudaCost *)impl;
  EvalArgs a;
  if (!eval_args(c, map, &a, error))
    return FALSE;
  const size_t bytes = (size_t)a.n * sizeof(float);
  if (bytes > c->warped_bytes) {
    /* nothing in flight may still use it: the next taker may have it at once */
    if (!NW_CUDA_CHECK(cudaStreamSynchronize(c->stream), error))
      return FALSE;
    nw_device_give(c->warped);
    c->warped = nullptr;
    c->warped_bytes = 0;
    if (!NW_CUDA_CHECK(nw_device_take((void **)&c->warped, bytes), error))
      return FALSE;
    c->warped_bytes = bytes;
  }
  const int blocks = (int)MIN((size_t)c->max_blocks[0], (a.n + kBlock - 1) / kBlock);
  if (sampler == NW_SAMPLER_NEAREST)
    warp_kernel<NW_SAMPLER_NEAREST><<<blocks, kBlock, 0, c->stream>>>(a, c->warped, background);
  else if (sampler == NW_SAMPLER_LINEAR)
    warp_kernel<NW_SAMPLER_LINEAR><<<blocks, kBlock, 0, c->stream>>>(a, c->warped, background);
  else
    warp_kernel<NW_SAMPLER_CUBIC><<<blocks, kBlock, 0, c->stream>>>(a, c->warped, background);
  /* through the pinned pair: the result's 37 MB at 3072² took ~22 ms into pageable memory */
  return NW_CUDA_CHECK(nw_cuda_launched(c->stream), error) &&
         NW_CUDA_CHECK(nw_download_floats(out, c->warped, a.n, nw_stage_for(&c->stage, a.n), c->stream),
                       error);
}

/* Floats from a level's start to the next's in a pyramid's allocation: 256-byte aligned. */
size_t level_stride(const NwVolume *v)
{
  return (nw_volume_n_voxels(v) + 63) / 64 * 64;
}

/* Host volumes of v's pyramid of n levels: headers without voxels, but for level 0 (the
 * coarsest), whose voxels the starts read: v's own when it is the only level, else room for
 * them. NULL where memory is short. */
NwVolume **host_levels(const NwVolume *v, int n, GError **error)
{
  NwVolume **levels = g_new0(NwVolume *, n);
  if (n == 1) {
    if ((levels[0] = nw_volume_try_copy(v, error)) == nullptr) {
      g_free(levels);
      return nullptr;
    }
    return levels;
  }
  levels[n - 1] = g_new0(NwVolume, 1);
  nw_volume_copy_header(levels[n - 1], v);
  for (int l = n - 2; l >= 0; l--) {
    levels[l] = g_new(NwVolume, 1);
    nw_downsample2_header(levels[l + 1], levels[l]);
  }
  const size_t n0 = nw_volume_n_voxels(levels[0]);
  if ((levels[0]->data = g_try_new(float, n0)) == nullptr) {
    g_set_error(error, NW_ERROR, NW_ERROR_NOMEM, "out of memory for %zu voxels (%.1f MiB)", n0,
                n0 * sizeof(float) / 1048576.0);
    nw_pyramid_free(levels, n);
    return nullptr;
  }
  return levels;
}

/* v's pyramid of n levels (affine_cost.h): v up once through the pinned pair, each coarser
 * level made on the device from the one below, all in one allocation kept for the cost's
 * life; only the coarsest comes back down (the finer ones' host volumes are headers). Where the
 * device lacks the memory, or the table is full, NULL without an error: the host makes it and
 * set_level uploads. (It used to copy the image on the host too, and bring every level down
 * into fresh pageable memory with an allocation each: most of the 21.6 ms of "pyramids" in a
 * 3072² job's creation on the H100, issue 11.) */
NwVolume **cuda_pyramid(void *impl, const NwVolume *v, int n, GError **error)
{
  CudaCost *c = (CudaCost *)impl;
  const gint64 t0 = g_get_monotonic_time();
  if (v->nc != 1 || n < 1 || n > 8 || c->n_kept + n > kMaxKept || c->prep.n_arenas >= kMaxKept)
    return nullptr;
  NwVolume **levels = host_levels(v, n, error);
  if (levels == nullptr)
    return nullptr;
  size_t offset[8], total = 0;
  for (int l = 0; l < n; l++) {
    offset[l] = total;
    total += level_stride(levels[l]);
  }
  const size_t nv = nw_volume_n_voxels(v), full = nv * sizeof(float);
  /* two smoothing buffers of the finest: prep.work, unless it holds the level's codes */
  const bool own_scratch = c->qF != nullptr;
  const size_t scratch_bytes = n > 1 ? 2 * full : 0;
  const size_t more = own_scratch || c->prep.work_bytes < scratch_bytes ? scratch_bytes : 0;
  size_t free_b = 0, total_b = 0;
  const size_t need = total * sizeof(float) + more + full / 2;
  if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess && free_b < need) {
    nw_device_kept_release(); /* earlier jobs' blocks, where they are in the way */
    cudaMemGetInfo(&free_b, &total_b);
  }
  if (free_b < need) {
    nw_pyramid_free(levels, n);
    return nullptr;
  }
  float *arena = nullptr, *scratch = nullptr;
  gboolean ok = NW_CUDA_CHECK(nw_device_take((void **)&arena, total * sizeof(float)), error) &&
                (scratch_bytes == 0 ||
                 (own_scratch ? NW_CUDA_CHECK(nw_device_take((void **)&scratch, scratch_bytes), error)
                              : work_ready(c, scratch_bytes, error)));
  float *dev[8];
  for (int l = 0; l < n; l++)
    dev[l] = arena + offset[l];
  float *const base = own_scratch ? scratch : (float *)c->prep.work;
  float *const smooth[2] = {base, scratch_bytes > 0 ? base + nv : nullptr};
  /* the job's pinned pair, made by its first large copy (16 MiB pinned: milliseconds): here,
   * so that the times below tell it from the upload */
  float *const stage = nw_stage_for(&c->stage, nv);
  const gint64 t1 = g_get_monotonic_time();
  ok = ok && NW_CUDA_CHECK(nw_upload_floats(dev[n - 1], v->data, nv, stage, c->stream), error);
  const gint64 t2 = g_get_monotonic_time();
  for (int l = n - 2; ok && l >= 0; l--) {
    const NwVolume *fine = levels[l + 1];
    ok = NW_CUDA_CHECK(
        nw_downsample2_cuda(dev[l], dev[l + 1], fine->nx, fine->ny, fine->nz, smooth, c->stream),
        error);
  }
  const size_t n0 = nw_volume_n_voxels(levels[0]);
  if (n > 1) /* the coarsest level down, for the starts (once the kernels made it) */
    ok = ok &&
         NW_CUDA_CHECK(nw_download_floats(levels[0]->data, dev[0], n0, nw_stage_for(&c->stage, n0), c->stream),
                       error);
  ok = ok && NW_CUDA_CHECK(cudaStreamSynchronize(c->stream), error);
  cudaStreamSynchronize(c->stream); /* nothing in flight uses the buffers freed below */
  nw_device_give(scratch);
  if (!ok) {
    nw_device_give(arena);
    nw_pyramid_free(levels, n);
    return nullptr;
  }
  for (int l = 0; l < n; l++)
    c->kept[c->n_kept++] = {levels[l], dev[l]};
  c->prep.arena[c->prep.n_arenas++] = arena;
  const gint64 t3 = g_get_monotonic_time();
  g_debug("affine (cuda): pyramid of %d x %d x %d, %d levels: buffers (and the job's pinned "
          "pair, at its first) %.2f ms, upload %.2f ms, levels and the coarsest down %.2f ms",
          v->nx, v->ny, v->nz, n, (t1 - t0) / 1e3, (t2 - t1) / 1e3, (t3 - t2) / 1e3);
  return levels;
}

/* A kept level's voxels into out (the tests' look at a pyramid's header levels). */
gboolean cuda_level_voxels(void *impl, const NwVolume *level, float *out, GError **error)
{
  CudaCost *c = (CudaCost *)impl;
  const float *d = kept_level(c, level);
  if (d == nullptr) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "affine (cuda): not a level of this cost's pyramids");
    return FALSE;
  }
  const size_t n = nw_volume_n_voxels(level);
  return NW_CUDA_CHECK(nw_download_floats(out, d, n, nw_stage_for(&c->stage, n), c->stream), error);
}

/* The method "affine" on CUDA: the shared job over this cost. */
void *affine_create(const NwMethodInputs *in, const NwParams *p, GError **error)
{
  return nw_affine_job_new(&nw_affine_cost_cuda, in, p, error);
}

} // namespace

extern "C" guint nw_affine_cost_cuda_texture_levels(void)
{
  return (guint)g_atomic_int_get(&texture_levels);
}

extern "C" guint nw_affine_cost_cuda_voxels_per_thread(void)
{
  return (guint)g_atomic_int_get(&last_per_thread);
}

extern "C" const NwAffineCostBackend nw_affine_cost_cuda = {
    .name = "cuda",
    .create = cuda_create,
    .set_level = cuda_set_level,
    .evaluate = cuda_evaluate,
    .destroy = cuda_destroy,
    .pyramid = cuda_pyramid,
    .warp = cuda_warp,
    .evaluate_batch = cuda_evaluate_batch,
    .level_stats = cuda_level_stats,
    .level_voxels = cuda_level_voxels,
};

/* C++20 designated initialisers: the slots of NwMethodOps by name, in their order. */
extern "C" const NwMethodOps nw_affine_cuda_ops = {
    .name = "affine",
    .device = NW_DEVICE_CUDA,
    .description = "Rigid, similarity or affine registration (2D or 3D; MSE, NCC or mutual "
                   "information; Nelder-Mead on an image pyramid), costs on the GPU",
    NW_AFFINE_OPS_INPUTS,
    .create = affine_create,
    NW_AFFINE_OPS_JOB,
};
