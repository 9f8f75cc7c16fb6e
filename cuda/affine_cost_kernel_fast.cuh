/* affine_cost_kernel_fast.cuh — the u16 cost kernel (issue 11), included by affine_cost_cuda.cu
 * after its EvalArgs, add_joint, block_sums and finish; CUDA back end, the job's worker
 * thread launches it. cost_kernel (the reference, NW_AFFINE_KERNEL=reference) issues ~175
 * instructions a 2D linear voxel (SASS, sm_90): a flat grid-stride walk, 64-bit tap
 * addresses, clamps, floorf and float-to-int conversions (FRND, F2I: the slow conversion
 * pipe), and six double sums of values (12 double operations, 2 conversions). This kernel
 * computes the same samples in ~64 (48 in a run's unrolled steps, 16 a voxel for the run):
 *
 * - A warp takes a run of kFastRun fixed voxels of one row (fewer at a row's end), lane l
 *   the voxels i0 + l + 32 s (s < kFastSteps): each step's loads are coalesced as before,
 *   and the row's j, k and the map's j and k terms are worked out once a run, not a voxel.
 * - Positions stay per voxel nw_quant_map_row's, bit for bit (the CPU twin's). Each
 *   coordinate is monotonic along a row (a product and sums rounded to nearest are
 *   monotonic in i), so when the run's first and last voxels map inside [0, n - 1) on every
 *   axis, every voxel of the run does: no domain test, no clamp (floor(p) and floor(p) + 1
 *   are taps already), and floor by one FADD rounding down (fast_floor). Such a run is
 *   "deep"; the others (the domain's edge, and every run where there are masks) take the
 *   reference's per-voxel functions of affine_quant.h unchanged.
 * - The sums are kept in codes: count, Σqf and Σqf² as integers (exact), Σqm, Σqm² and
 *   Σqf·qm in double (each product exact: qm has 24 significant bits, qf 16), and turned
 *   into the six shifted sums (value = lo + step · code) once a thread. Per voxel that is one
 *   float-to-double conversion and four double operations instead of two and 12; the cost
 *   differs from the CPU's by the rounding of the sums only (~1e-12).
 *
 * Deterministic as cost_kernel: a thread's runs and steps in a fixed order, then the same
 * block and grid sums. MI keeps the exact values of each pair for its histogram. */
#ifndef NW_AFFINE_COST_KERNEL_FAST_CUH
#define NW_AFFINE_COST_KERNEL_FAST_CUH

#include <stdlib.h>
#include <string.h>

namespace {

constexpr int kFastSteps = 8;             /* voxels a lane takes from its warp's run */
constexpr int kFastRun = 32 * kFastSteps; /* a warp's run of voxels along a fixed row */

/* Blocks of 256 an SM (sm_90, ptxas -v, CUDA 13): nearest and linear 4 (64 registers, 50 %
 * occupancy; linear spills 20 bytes, loop invariants reloaded once a run; at 5, 48
 * registers, it spilled 76: try -DNW_AFFINE_FAST_MIN_BLOCKS=3 or 5 in CMAKE_CUDA_FLAGS to
 * compare); with mi or a batch 3 (78-80, up to 20 bytes of such spills); cubic 3 (80), with
 * mi or a batch 2 (128), no spills. */
#ifndef NW_AFFINE_FAST_MIN_BLOCKS
#define NW_AFFINE_FAST_MIN_BLOCKS 4
#endif
constexpr int fast_min_blocks(int sampler, bool mi, bool batch)
{
  return sampler == NW_SAMPLER_CUBIC && (mi || batch) ? 2
         : sampler == NW_SAMPLER_CUBIC || mi || batch ? 3
                                                      : NW_AFFINE_FAST_MIN_BLOCKS;
}

/* NW_AFFINE_KERNEL=reference picks cost_kernel for u16 (an A/B in one process); else this. */
inline bool fast_kernel_wanted()
{
  const char *k = getenv("NW_AFFINE_KERNEL");
  return k == nullptr || strcmp(k, "reference") != 0;
}

/* floor(x) as float, and as int in *i, for -2^22 <= x < 2^22: x + 1.5·2^23 rounded down lands
 * in [2^23, 2^24), where floats are the integers, so it is 1.5·2^23 + floor(x) exactly; one
 * FADD instead of FRND and F2I. (floorf(-0) is -0 and this +0: u = x - floor(x) then is
 * -0 or +0, and a·(1 - u) + b·u takes the same value for both.) */
__device__ __forceinline__ float fast_floor(float x, int *i)
{
  const float t = __fadd_rd(x, 12582912.0f);
  *i = __float_as_int(t) - 0x4B400000;
  return __fsub_rn(t, 12582912.0f);
}

/* nw_quant_linear for a position whose taps need no clamp (0 <= p < n - 1 on every axis
 * of more than one voxel, p < 2^22): the same operations on the same taps. */
__device__ __forceinline__ float deep_linear(const uint16_t *__restrict__ d, unsigned int nx,
                                             unsigned int nxy, int nz, float x, float y, float z)
{
  int ix, iy;
  const float u = __fsub_rn(x, fast_floor(x, &ix)), w = __fsub_rn(y, fast_floor(y, &iy));
  /* 32-bit offsets of the two rows: one wide multiply-add an address */
  unsigned int r0 = (unsigned int)iy * nx + (unsigned int)ix;
  float t = 0.0f;
  if (nz > 1) {
    int iz;
    t = __fsub_rn(z, fast_floor(z, &iz));
    r0 += (unsigned int)iz * nxy;
  }
  const uint16_t *p0 = d + r0, *p1 = d + (r0 + nx);
  const float c00 = nw_quant_lerp(__ldg(p0), __ldg(p0 + 1), u);
  const float c10 = nw_quant_lerp(__ldg(p1), __ldg(p1 + 1), u);
  const float c0 = nw_quant_lerp(c00, c10, w);
  if (t == 0.0f)
    return c0;
  p0 = d + (r0 + nxy);
  p1 = d + (r0 + nxy + nx);
  const float c01 = nw_quant_lerp(__ldg(p0), __ldg(p0 + 1), u);
  const float c11 = nw_quant_lerp(__ldg(p1), __ldg(p1 + 1), u);
  return nw_quant_lerp(c0, nw_quant_lerp(c01, c11, w), t);
}

/* The moving code at (x, y, z) with sampler S, the position known inside; DEEP: deep too. */
template <int S, bool DEEP, bool FLAT = false>
__device__ __forceinline__ float fast_sample(const EvalArgs &a, float x, float y, float z)
{
  if (S == NW_SAMPLER_NEAREST) {
    if (DEEP) { /* floor(p + 0.5) is in [0, n - 1]: nw_quant_nearest without its clamps */
      int i, j, k = 0;
      fast_floor(__fadd_rn(x, 0.5f), &i);
      fast_floor(__fadd_rn(y, 0.5f), &j);
      if (!FLAT && a.mnz > 1)
        fast_floor(__fadd_rn(z, 0.5f), &k);
      return (float)__ldg(
          a.qM + (((unsigned int)k * (unsigned int)a.mny + (unsigned int)j) * (unsigned int)a.mnx +
                  (unsigned int)i));
    }
    return (float)__ldg(a.qM + nw_quant_nearest(x, y, z, a.mnx, a.mny, a.mnz));
  }
  if (S == NW_SAMPLER_LINEAR) {
    if (DEEP)
      return deep_linear(a.qM, (unsigned int)a.mnx, (unsigned int)a.mnx * (unsigned int)a.mny,
                         FLAT ? 1 : a.mnz, x, y, z);
    return nw_quant_linear(a.qM, a.mnx, a.mny, a.mnz, x, y, z);
  }
  return nw_quant_cubic(a.qM, a.mnx, a.mny, a.mnz, x, y, z);
}

/* A thread's sums in codes (qf the fixed code, qm the moving sample's): exact integers for
 * the fixed ones, doubles of exact products for the others. */
struct CodeSums {
  unsigned int n;
  unsigned long long f, ff;
  double m, mm, fm;
};

/* Adds one counted pair; with MI also its values to the histogram, as cost_kernel does. */
template <bool MI>
__device__ __forceinline__ void add_pair(const EvalArgs &a, unsigned long long *hist, CodeSums &s,
                                         unsigned int qf, float qm)
{
  s.ff += (unsigned long long)qf * qf;
  const double dm = (double)qm;
  /* 2^52 + qf, less 2^52: qf as a double without a conversion instruction */
  const double df = __dsub_rn(__hiloint2double(0x43300000, (int)qf), 4503599627370496.0);
  s.m += dm;
  s.mm = fma(dm, dm, s.mm);
  s.fm = fma(df, dm, s.fm);
  if (MI)
    add_joint(a, hist, nw_quant_value(a.quant_f, (float)qf), nw_quant_value(a.quant_m, qm));
}

/* The six shifted sums (NwAffineSums' order) of a thread's code sums: with
 * fs = af + bf·qf (af = lo - shift, bf = step) and ms likewise, Σfs = n·af + bf·Σqf,
 * Σfs² = n·af² + 2·af·bf·Σqf + bf²·Σqf², Σfs·ms = n·af·am + af·bm·Σqm + am·bf·Σqf +
 * bf·bm·Σqf·qm. The codes span the quantisation's range, so the terms cancel no more than
 * the image's mean² / variance in codes: a few bits of a double. */
__device__ inline void shifted_sums(const EvalArgs &a, const CodeSums &c, double s[kSums])
{
  const double n = (double)c.n, f = (double)c.f, ff = (double)c.ff;
  const double af = a.quant_f.lo - a.fixed_shift, bf = a.quant_f.step;
  const double am = a.quant_m.lo - a.moving_shift, bm = a.quant_m.step;
  s[0] = n;
  s[1] = n * af + bf * f;
  s[2] = n * am + bm * c.m;
  s[3] = n * af * af + 2.0 * af * bf * f + bf * bf * ff;
  s[4] = n * am * am + 2.0 * am * bm * c.m + bm * bm * c.mm;
  s[5] = n * af * am + af * bm * c.m + am * bf * f + bf * bm * c.fm;
}

/* Whether every voxel of a run maps deep into the moving image (see the header): lanes test
 * the run's first (even lanes) or last voxel (odd), the warp votes. m: the map (rows at 0,
 * 4, 8); ty, tz: the row's j and k terms per coordinate. */
__device__ __forceinline__ bool run_is_deep(const EvalArgs &a, const float *m, const float ty[3],
                                            const float tz[3], float fi_first, float fi_last)
{
  const float fi = (threadIdx.x & 1) ? fi_last : fi_first;
  float p[3];
#pragma unroll
  for (int r = 0; r < 3; r++)
    p[r] = __fadd_rn(__fadd_rn(__fadd_rn(__fmul_rn(m[4 * r], fi), ty[r]), tz[r]), m[4 * r + 3]);
  /* below 2^22 for fast_floor; a flat moving z (2D) needs only sampler.h's domain there */
  const float hx = fminf((float)(a.mnx - 1), 4194304.0f),
              hy = fminf((float)(a.mny - 1), 4194304.0f);
  const bool z_ok = a.mnz > 1 ? p[2] >= 0.0f && p[2] < fminf((float)(a.mnz - 1), 4194304.0f)
                              : p[2] >= -0.5f && p[2] <= 0.5f;
  const bool ok = p[0] >= 0.0f && p[0] < hx && p[1] >= 0.0f && p[1] < hy && z_ok;
  return __all_sync(0xffffffffu, ok);
}

/* A deep run's voxels of this lane (lane's first at fi0, fixed codes at qf_run): every one
 * counted, no domain test, no clamp. FLAT: the moving image 2D and tz ±0 (the caller's
 * test): x and y without the k term, no z. FULL: kFastSteps voxels, else steps (a run at the
 * end of a row narrower than kFastRun, e.g. every row of the 182-wide brain grid). */
template <int S, bool MI, bool FLAT, bool FULL>
__device__ __forceinline__ void deep_run(const EvalArgs &a, unsigned long long *hist, CodeSums &c,
                                         const float *m, const float ty[3], const float tz[3],
                                         float fi0, const uint16_t *__restrict__ qf_run,
                                         unsigned int steps)
{
  unsigned int run_f = 0; /* < 8 · 2^16: exact in 32 bits */
  /* cubic's 16 taps a voxel fill the registers in one step: unrolled, it spills */
#pragma unroll(S == NW_SAMPLER_CUBIC ? 1 : FULL ? kFastSteps : 4)
  for (int s = 0; s < kFastSteps; s++) {
    if (!FULL && s >= (int)steps)
      break;
    const float fi = __fadd_rn(fi0, (float)(32 * s)); /* exact: integers < 2^24 */
    float x, y, z = 0.0f;
    if (FLAT) {
      x = __fadd_rn(__fadd_rn(__fmul_rn(m[0], fi), ty[0]), m[3]);
      y = __fadd_rn(__fadd_rn(__fmul_rn(m[4], fi), ty[1]), m[7]);
    } else {
      x = __fadd_rn(__fadd_rn(__fadd_rn(__fmul_rn(m[0], fi), ty[0]), tz[0]), m[3]);
      y = __fadd_rn(__fadd_rn(__fadd_rn(__fmul_rn(m[4], fi), ty[1]), tz[1]), m[7]);
      z = __fadd_rn(__fadd_rn(__fadd_rn(__fmul_rn(m[8], fi), ty[2]), tz[2]), m[11]);
    }
    const unsigned int qf = __ldg(qf_run + 32 * s);
    run_f += qf;
    add_pair<MI>(a, hist, c, qf, fast_sample<S, true, FLAT>(a, x, y, z));
  }
  c.n += FULL ? kFastSteps : steps;
  c.f += run_f;
}

/* One evaluation (BATCH: gridDim.y of them) at precision u16: cost_kernel's result but for
 * the order of the double sums, from runs of kFastRun voxels a warp (see the header). */
template <int S, bool MI, bool BATCH>
__global__ void __launch_bounds__(kBlock, fast_min_blocks(S, MI, BATCH))
    cost_kernel_fast(EvalArgs a)
{
  extern __shared__ unsigned long long shared_hist[]; /* bins² when a.shared_hist */
  const int hist_len = MI ? a.bins * a.bins : 0;
  const unsigned int q = BATCH ? blockIdx.y : 0;
  __shared__ float batch_mapf[12];
  if (BATCH) {
    if (threadIdx.x < 12)
      batch_mapf[threadIdx.x] = a.mapsf[12 * q + threadIdx.x];
    __syncthreads();
  }
  float m[12]; /* the map in registers (or the kernel's constants) for the whole walk */
#pragma unroll
  for (int r = 0; r < 12; r++)
    m[r] = BATCH ? batch_mapf[r] : a.mapf[r];
  double *const partials = a.partials + (size_t)q * gridDim.x * kSums;
  unsigned long long *const ghist = MI ? a.hist + (size_t)q * hist_len : nullptr;
  unsigned int *const done = a.done + q;
  double *const out = a.out + (size_t)q * (kSums + hist_len);
  if (MI && a.shared_hist) {
    for (int b = threadIdx.x; b < hist_len; b += blockDim.x)
      shared_hist[b] = 0;
    __syncthreads();
  }
  unsigned long long *hist = MI && a.shared_hist ? shared_hist : ghist;
  CodeSums c = {0, 0, 0, 0.0, 0.0, 0.0};
  const unsigned int fnx = (unsigned int)a.fnx, fny = (unsigned int)a.fny;
  const unsigned int runs_per_row = (fnx + kFastRun - 1) / kFastRun;
  const unsigned int n_runs = runs_per_row * fny * (unsigned int)a.fnz;
  const unsigned int lane = threadIdx.x % 32;
  const unsigned int warp0 = blockIdx.x * kWarps + threadIdx.x / 32, n_warps = gridDim.x * kWarps;
  const bool plain = a.fmask == nullptr && a.mmask == nullptr; /* deep runs need no mask */
  /* (run within the row, j, k) of run r, stepped as cost_kernel steps voxels */
  VoxelWalk v(warp0, n_warps, runs_per_row, fny);
  for (unsigned int r = warp0; r < n_runs; r += n_warps, v.step()) {
    const unsigned int i0 = v.i * kFastRun, row = v.k * fny + v.j;
    const float fj = (float)v.j, fk = (float)v.k;
    float ty[3], tz[3];
#pragma unroll
    for (int d = 0; d < 3; d++) {
      ty[d] = __fmul_rn(m[4 * d + 1], fj);
      tz[d] = __fmul_rn(m[4 * d + 2], fk);
    }
    const float fi0 = (float)(i0 + lane);
    const uint16_t *const qf_run = a.qF + (size_t)row * fnx + i0 + lane;
    /* voxels of the run (the same in every lane); fi0 + 32 s is (float)i exactly while
     * i < 2^24 */
    const unsigned int run_len = min((unsigned int)kFastRun, fnx - i0);
    if (plain && i0 + run_len <= (1u << 24) &&
        run_is_deep(a, m, ty, tz, (float)i0, (float)(i0 + run_len - 1))) {
      /* flat: a 2D moving image and a row without a k term (every 2D pair): the position's
       * "+ tz" adds ±0, which changes at most the sign of a zero x or y, and no sample */
      const bool flat = a.mnz == 1 && tz[0] == 0.0f && tz[1] == 0.0f;
      const unsigned int steps = run_len > lane ? (run_len - lane + 31) / 32 : 0;
      /* (a partial run takes the general form: one copy fewer, the registers it would hold) */
      if (run_len == kFastRun && flat)
        deep_run<S, MI, true, true>(a, hist, c, m, ty, tz, fi0, qf_run, steps);
      else if (run_len == kFastRun)
        deep_run<S, MI, false, true>(a, hist, c, m, ty, tz, fi0, qf_run, steps);
      else
        deep_run<S, MI, false, false>(a, hist, c, m, ty, tz, fi0, qf_run, steps);
      continue;
    }
    /* the reference's per-voxel tests and samplers (affine_quant.h), in the same order */
    for (int s = 0; s < kFastSteps; s++) {
      const unsigned int i = i0 + lane + 32 * s;
      if (i >= fnx)
        break;
      const size_t e = (size_t)row * fnx + i;
      if (a.fmask != nullptr && !(__ldg(a.fmask + e) >= 0.5f))
        continue;
      const float fi = (float)i;
      const float x = __fadd_rn(__fadd_rn(__fadd_rn(__fmul_rn(m[0], fi), ty[0]), tz[0]), m[3]);
      const float y = __fadd_rn(__fadd_rn(__fadd_rn(__fmul_rn(m[4], fi), ty[1]), tz[1]), m[7]);
      const float z = __fadd_rn(__fadd_rn(__fadd_rn(__fmul_rn(m[8], fi), ty[2]), tz[2]), m[11]);
      if (!nw_quant_inside(x, y, z, a.mnx, a.mny, a.mnz))
        continue;
      const float qm = fast_sample<S, false>(a, x, y, z);
      if (a.mmask != nullptr &&
          !(__ldg(a.mmask + nw_quant_nearest(x, y, z, a.mnx, a.mny, a.mnz)) >= 0.5f))
        continue;
      const unsigned int qf = __ldg(a.qF + e);
      c.n++;
      c.f += qf;
      add_pair<MI>(a, hist, c, qf, qm);
    }
  }
  if (MI && a.shared_hist) {
    __syncthreads(); /* every thread's additions are in before the block's are flushed */
    for (int b = threadIdx.x; b < hist_len; b += blockDim.x)
      if (shared_hist[b] != 0)
        atomicAdd(&ghist[b], shared_hist[b]);
  }
  double s[kSums];
  shifted_sums(a, c, s);
  block_sums(s, partials + (size_t)blockIdx.x * kSums);
  /* the block's sums and histogram additions are visible device-wide before it counts */
  __shared__ bool last;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0)
    last = atomicAdd(done, 1u) == gridDim.x - 1;
  __syncthreads();
  if (last) {
    __threadfence();
    finish(partials, ghist, done, out, hist_len);
  }
}

/* The fast variant for a sampler and metric, one evaluation or a batch. */
CostKernel cost_kernel_fast_for(NwSampler sampler, bool mi, bool batch)
{
#define NW_FAST_VARIANTS(S)                                                                        \
  {                                                                                                \
    {cost_kernel_fast<S, false, false>, cost_kernel_fast<S, false, true>},                         \
    {                                                                                              \
      cost_kernel_fast<S, true, false>, cost_kernel_fast<S, true, true>                            \
    }                                                                                              \
  }
  static const CostKernel table[3][2][2] = {NW_FAST_VARIANTS(NW_SAMPLER_NEAREST),
                                            NW_FAST_VARIANTS(NW_SAMPLER_LINEAR),
                                            NW_FAST_VARIANTS(NW_SAMPLER_CUBIC)};
#undef NW_FAST_VARIANTS
  const int si = sampler == NW_SAMPLER_NEAREST ? 0 : sampler == NW_SAMPLER_LINEAR ? 1 : 2;
  return table[si][mi ? 1 : 0][batch ? 1 : 0];
}

/* Blocks of kWarps warps for a run each: no more are needed for a level of rows of fnx. */
inline size_t fast_blocks_needed(unsigned int fnx, unsigned int rows)
{
  const size_t runs = (size_t)((fnx + kFastRun - 1) / kFastRun) * rows;
  return (runs + kWarps - 1) / kWarps;
}

} // namespace

#endif
