/* affine_cost_rows_cuda.cuh — the u16 cost kernel's "rows" variants (affine_cost_cuda.cu's
 * rows_kernel: linear sampling through the moving codes' texture, mse and ncc, no masks), in
 * which a thread takes K consecutive fixed voxels of a row at a time instead of one: the
 * choice of a variant and its grid on the host, the walk over the groups of K, one group's
 * fixed codes and moving taps, and a thread's sums. CUDA back end; the host part on the cost's
 * thread (the job's worker), the rest device code.
 *
 * Why: the one-voxel kernel waits on its texture gathers (ncu on an H100 at 3072²: L1TEX
 * 17.6 %, DRAM 16.5 %, issue slots 54 %, ~110 instructions a voxel-warp). A thread with one
 * voxel has one gather in flight (in 3D the second waits for the first's blend) and its fixed
 * code's load; with K it issues the group's load and its K gathers (2K in 3D) back to back
 * before it blends any, and the per-voxel bookkeeping is shared by the group: one step of the
 * walk, one conversion of the row's j and k and their products with the map, one load of the
 * K fixed codes where they are aligned (sm_90 SASS of the 2D variant with K = 4: ~74
 * instructions a voxel in its loop, against ~178 for one voxel in the one-voxel kernel's).
 *
 * Exactness: every voxel's position is nw_quant_map_row's at its own (i, j, k) (the row's part
 * once a group, then m0 i added, the order in which the CPU twin computes it too; not a sum
 * along the row), its domain test nw_quant_inside's, its taps and blend nw_codes_linear's
 * (affine_texture_cuda.cuh): the same voxels count, with the same samples, bit for bit. The
 * sums differ: a thread sums the codes and turns its sums into the shifted values' once
 * (nw_rows_values), in a fixed order (deterministic), within 1e-12 of the one-voxel kernel's.
 * Not so at precision u16-filter (FILTER): there the samples are the texture unit's blend,
 * 8-bit weights, within ~1e-5 of the exact cost (affine_texture_cuda.cuh's nw_codes_filtered).
 *
 * The second version (sm_90 SASS, the 2D loop with K = 4): 212 instructions a group, 53 a
 * voxel, against 297 before it: the row's part of the map once a group, the codes summed (6
 * FP64 operations and one conversion a voxel instead of 11 and two), a shorter linear step
 * (affine_quant.h's nw_quant_lerp), the gather's corner floor(x) itself, and no branch a
 * voxel (a voxel outside adds zeros). An H100 evaluation at 3072²: 46-48 µs to 37.5-39. */
#ifndef NW_AFFINE_COST_ROWS_CUDA_CUH
#define NW_AFFINE_COST_ROWS_CUDA_CUH

#include <cuda_runtime.h>

#include <glib.h>
#include <stdint.h>

#include "affine_cost.h"
#include "affine_quant.h"
#include "affine_texture_cuda.cuh"

/* ---- the choice, on the host ---------------------------------------------------------- */

/* Voxels a thread of the rows variants, 3D and 2D, into k: NW_AFFINE_VOXELS_PER_THREAD's 1
 * (none: the one-voxel kernel), 2 or 4 for both, read when a cost is made; else 2 in 3D (two
 * gathers a voxel) and 4 in 2D: 4 gathers in flight a thread either way. */
inline void nw_rows_k_from_env(int k[2])
{
  const char *env = g_getenv("NW_AFFINE_VOXELS_PER_THREAD");
  const int asked = env != nullptr ? (int)g_ascii_strtoll(env, nullptr, 10) : 0;
  const bool valid = asked == 1 || asked == 2 || asked == 4;
  k[0] = valid ? asked : 2;
  k[1] = valid ? asked : 4;
}

/* Whether the rows variants exist for a spec's sampler and metric with k voxels a thread. */
inline bool nw_rows_exist(NwSampler sampler, bool mi, int k)
{
  return sampler == NW_SAMPLER_LINEAR && !mi && (k == 2 || k == 4);
}

/* Whether a level can take them: no masks (the one-voxel kernel keeps those), and fixed rows
 * whose voxel indices are exact as float sums (nw_rows_gather's i0 + l). */
inline bool nw_rows_level_ok(const NwAffineLevel *level)
{
  return level->fixed_mask == nullptr && level->moving_mask == nullptr &&
         level->fixed->nx <= (1 << 24);
}

/* The blocks of 256 an SM each variant is compiled for (sm_90, ptxas -v, the code-sum
 * version): 2D with 4 voxels 3 (70-80 registers, 37.5 % occupancy), with 2 voxels 5, a batch
 * 4 (46-61); 3D with 2 voxels 3 (64-72), with 4 voxels 2 (99-122). None spills. Four blocks
 * also fit without spilling for 2D with 4 voxels (63-64 registers) and 3D with 2 (64), but
 * were slower on an H100 (3072² 40.2-40.4 µs against 37.5-38.9, the brain 45.5-46.0 against
 * 43.8-44.3, three runs each beside each other): the compiler's schedule for 64 registers
 * keeps fewer gathers in flight. (A batch holds its map in registers from shared memory,
 * where one evaluation reads uniform registers.) -DNW_AFFINE_ROWS_MIN_BLOCKS=n in
 * CMAKE_CUDA_FLAGS sets all of them, to compare. */
constexpr int nw_rows_min_blocks(int k, bool flat, bool batch)
{
#ifdef NW_AFFINE_ROWS_MIN_BLOCKS
  return NW_AFFINE_ROWS_MIN_BLOCKS;
#else
  return flat ? (k == 2 ? (batch ? 4 : 5) : 3) : (k == 2 ? 3 : 2);
#endif
}

/* A level's rows variant: its voxels a thread and its form. */
struct NwRowsForm {
  int k;      /* voxels a thread: 2 or 4 */
  bool flat;  /* a 2D level: fixed and moving images one slice each */
  bool whole; /* k divides the fixed rows, and the fixed codes start on a 2k-byte boundary:
               * every group whole and aligned */
};

/* The form for a fixed image nx x . x nz, a moving one of mnz slices, the fixed codes at
 * codes, and k[0] (3D) or k[1] (2D) voxels a thread. */
inline NwRowsForm nw_rows_form(const int k[2], int nx, int nz, int mnz, const uint16_t *codes)
{
  NwRowsForm f;
  f.flat = nz == 1 && mnz == 1;
  f.k = k[f.flat ? 1 : 0];
  f.whole = f.k > 0 && nx % f.k == 0 && (uintptr_t)codes % (2 * f.k) == 0;
  return f;
}

/* Groups of k voxels in a row of nx: the last one short when k does not divide nx. */
inline unsigned int nw_rows_groups(int k, unsigned int nx)
{
  return (nx + k - 1) / k;
}

/* The threads a launch wants for a fixed image: one a group. */
inline size_t nw_rows_threads(const NwRowsForm &f, int nx, int ny, int nz)
{
  return (size_t)ny * nz * nw_rows_groups(f.k, nx);
}

/* The grid-stride loop's stride (a launch's threads, in groups) split for a fixed grid, on the
 * host: kernel arguments, which the walk's step reads from constant memory instead of holding
 * them in registers. */
struct NwRowsGrid {
  unsigned int groups;     /* groups a row */
  unsigned int pad;        /* groups k - nx: the short group's missing voxels */
  unsigned int sg, sj, sk; /* the stride as groups (< groups), rows (< ny; all of them when
                            * flat) and slices */
  unsigned int de;         /* the first voxel's step when the group does not pass a row's end */
};

inline NwRowsGrid nw_rows_grid(const NwRowsForm &f, unsigned int nx, unsigned int ny,
                               unsigned int stride)
{
  NwRowsGrid g;
  g.groups = nw_rows_groups(f.k, nx);
  g.pad = g.groups * f.k - nx;
  const unsigned int srow = stride / g.groups;
  g.sg = stride - srow * g.groups;
  g.sj = f.flat ? srow : srow % ny; /* flat: no slice's end to pass before the image's */
  g.sk = f.flat ? 0u : srow / ny;
  g.de = srow * nx + g.sg * f.k;
  return g;
}

/* ---- the walk -------------------------------------------------------------------------- */

/* A thread's groups through the grid-stride loop, as cost_kernel's VoxelWalk walks voxels:
 * group gi of row (j, k) holds voxels K gi .. K gi + K - 1 (those < nx), the first at e (e < 2^31
 * in the image: e + de never wraps). Each step adds the split stride (NwRowsGrid) with at most
 * one carry an axis; e follows without a multiplication. FLAT (a 2D image): k stays 0, and j
 * is the row, past ny only once e is past the image (the loop's end). */
template <int K, bool FLAT> struct NwRowsWalk {
  unsigned int gi, j, k, e;
  __host__ __device__ NwRowsWalk(const NwRowsGrid &g, unsigned int t, unsigned int nx,
                                 unsigned int ny)
  {
    const unsigned int row = t / g.groups;
    gi = t - row * g.groups;
    j = FLAT ? row : row % ny;
    k = FLAT ? 0u : row / ny;
    e = row * nx + gi * K;
  }
  __host__ __device__ void step(const NwRowsGrid &g, unsigned int ny)
  {
    gi += g.sg;
    const unsigned int cg = gi >= g.groups; /* passed a row's end: one row more, pad less */
    gi -= cg ? g.groups : 0u;
    e += g.de - (cg ? g.pad : 0u);
    j += g.sj + cg; /* < 2 ny unless FLAT */
    if (FLAT)
      return;
    const unsigned int cj = j >= ny;
    j -= cj ? ny : 0u;
    k += g.sk + cj;
  }
};

/* ---- a group --------------------------------------------------------------------------- */

/* A group's fixed codes as loaded, read by code() once the gathers are in flight: one load of
 * the K codes when the group is WHOLE and aligned (NwRowsForm), else a load each (a short
 * group's missing voxels read nothing). WHOLE is a template argument, not a branch: a branch
 * between a load and its use made the compiler wait for the load (and convert the codes)
 * before it issued the gathers. */
template <int K, bool WHOLE> struct NwRowsFixed {
  static_assert(K == 2 || K == 4, "K voxels a thread: 2 or 4");
  unsigned int w[WHOLE ? K / 2 : K]; /* WHOLE: two codes a word, the first in the lower half */

  __device__ void load(const uint16_t *p, unsigned int last)
  {
    if constexpr (WHOLE && K == 4) {
      const uint2 v = __ldg((const uint2 *)p);
      w[0] = v.x;
      w[1] = v.y;
    } else if constexpr (WHOLE) {
      w[0] = __ldg((const unsigned int *)p);
    } else {
#pragma unroll
      for (int l = 0; l < K; l++)
        w[l] = l < (int)last ? __ldg(p + l) : 0u;
    }
  }
  /* voxel l's code */
  __device__ unsigned int code(int l) const
  {
    return WHOLE ? (w[l / 2] >> (16 * (l % 2))) & 0xffffu : w[l];
  }
};

/* What a group's samples read of the moving image. */
struct NwRowsMoving {
  cudaTextureObject_t tex; /* its codes (affine_texture_cuda.cuh) */
  int nx, ny, nz;
};

/* A group's moving taps in flight: each voxel's footprint and the quads gathered for it. */
template <int K> struct NwRowsTaps {
  NwLinearTaps t[K];
  float q0[K][4], q1[K][4];
};

/* The moving taps of a group's K voxels (i0 + l, j, k), l < K, under the map mapf (3x4
 * floats), gathered into g: live[l] comes in true for the voxels in the row and leaves true
 * only where the voxel counts (inside the moving domain). rest[c] is coordinate c's part
 * that the row shares (nw_quant_map_rest at its j and k): a voxel adds m0 i to it, as
 * nw_quant_map_row does. Every position and test first, then every gather: the gathers are
 * in flight together when it returns. FLAT: the moving image is one slice, whose samples are
 * one gather and hold one quad of registers each, not two. ZROW (FLAT only): the map's z does
 * not change along a row (m8 = 0: 0 i + rest is rest, so the row's z is rest[2] exactly), and
 * its domain test is the group's, not each voxel's.
 * A gather's corner is floor(x) itself: held until its gather issues, while u waits for the
 * blend. FILTER (precision u16-filter; mv.tex the filtered texture): each layer's sample is
 * the texture unit's blend (nw_codes_filtered), in q0[l][0] and q1[l][0]. */
template <int K, bool FLAT, bool ZROW, bool FILTER>
__device__ inline void nw_rows_gather(const NwRowsMoving &mv, const float *mapf, float i0,
                                      const float rest[3], bool live[K], NwRowsTaps<K> &g)
{
  static_assert(FLAT || !ZROW, "a row-constant z is the 2D variants'");
  const int nz = FLAT ? 1 : mv.nz;
  /* nw_quant_inside's z test, the row's once (ZROW) */
  const bool row_in = !ZROW || (rest[2] >= -0.5f && rest[2] <= 0.5f);
  float cx[K], cy[K];
#pragma unroll
  for (int l = 0; l < K; l++) {
    const float i = i0 + (float)l; /* exact where it counts: rows of 2^24 at most */
    const float x = nw_quant_map_at(mapf, i, rest[0]), y = nw_quant_map_at(mapf + 4, i, rest[1]),
                z = ZROW ? 0.0f : nw_quant_map_at(mapf + 8, i, rest[2]);
    live[l] = live[l] && row_in && nw_quant_inside(x, y, z, mv.nx, mv.ny, nz);
    g.t[l] = nw_codes_linear_taps(nz, x, y, z);
    cx[l] = FILTER ? x : g.t[l].fx;
    cy[l] = FILTER ? y : g.t[l].fy;
  }
  /* every voxel's taps, counted or not (clamp addressing takes any position): a blend never
   * reads a quad that was not gathered, and no branch splits the group */
  if constexpr (FILTER) {
#pragma unroll
    for (int l = 0; l < K; l++)
      g.q0[l][0] = nw_codes_filtered(mv.tex, g.t[l].z0, cx[l], cy[l]);
#pragma unroll
    for (int l = 0; l < K; l++)
      if (!FLAT && g.t[l].tz != 0.0f)
        g.q1[l][0] = nw_codes_filtered(mv.tex, g.t[l].z1, cx[l], cy[l]);
  } else {
#pragma unroll
    for (int l = 0; l < K; l++)
      nw_codes_quad(mv.tex, g.t[l].z0, cx[l], cy[l], g.q0[l]);
#pragma unroll
    for (int l = 0; l < K; l++)
      if (!FLAT && g.t[l].tz != 0.0f)
        nw_codes_quad(mv.tex, g.t[l].z1, cx[l], cy[l], g.q1[l]);
  }
}

/* ---- a thread's sums ------------------------------------------------------------------- */

/* What the rows loop reads of a level: the cost kernel's arguments. */
struct NwRowsLevel {
  cudaTextureObject_t tex; /* the moving codes */
  const uint16_t *codes;   /* the fixed codes */
  NwQuant quant_f, quant_m;
  double fixed_shift, moving_shift;
  unsigned int fnx, fny, n; /* the fixed image's size, and its voxels */
  int mnx, mny, mnz;
  NwRowsGrid grid;
};

/* A thread's sums on the codes themselves: its voxels counted, the fixed codes cf and their
 * squares (integers: exact), the moving samples cm (blended codes), their squares and the
 * products cf cm. A voxel's value is an affine function of its code (nw_quant_value), so the
 * five sums of shifted values follow from these once a thread (nw_rows_values) instead of a
 * voxel: the one-voxel kernel turns each code into a double value, subtracts the shift and
 * adds five doubles (11 FP64 operations and 2 conversions a voxel); here a voxel costs 5
 * FP64 operations, one conversion and two integer additions. */
struct NwRowsCodeSums {
  unsigned int n;
  double f, ff, m, mm, fm; /* f and ff are whole numbers: exact below 2^53 (ff: fewer than
                            * 2^21 voxels a thread) */
};

/* Adds a voxel, fixed code cf and moving sample cm, where live; else adds zeros (no branch:
 * the group's voxels are scheduled together). */
__device__ inline void nw_rows_add(NwRowsCodeSums &a, bool live, unsigned int cf, float cm)
{
  /* cf as a double without a conversion: the bits 0x43300000:cf are 2^52 + cf */
  const double df = __hiloint2double(0x43300000, live ? (int)cf : 0) - 4503599627370496.0;
  const double dm = (double)__int_as_float(live ? __float_as_int(cm) : 0);
  a.n += live ? 1u : 0u;
  a.f += df;
  a.ff += df * df;
  a.m += dm;
  a.mm += dm * dm;
  a.fm += df * dm;
}

/* A code near an image's shift: the values' sums are taken about it, which keeps the large
 * equal terms of the expansions below apart from the small sums they stand for. */
__device__ inline double nw_rows_centre(const NwQuant &q, double shift)
{
  const double c = q.step > 0.0 ? rint((shift - q.lo) / q.step) : 0.0;
  return fmin(fmax(c, 0.0), NW_QUANT_MAX);
}

/* a's sums as cost_kernel's s[1..5] (the shifted values fs = value(cf) - fixed_shift and ms =
 * value(cm) - moving_shift; their sums, squares and product), s[0] its count. With cf = cb + d
 * (cb a whole code near the shift) and cm = cc + e: fs = bf d + af, ms = bm e + am, where b
 * is the step and a the value of the centre less the shift. */
__device__ inline void nw_rows_values(const NwRowsLevel &lv, const NwRowsCodeSums &a, double s[6])
{
  const double n = (double)a.n;
  const double cb = nw_rows_centre(lv.quant_f, lv.fixed_shift);
  const double cc = nw_rows_centre(lv.quant_m, lv.moving_shift);
  const double sd = a.f - n * cb; /* exact: whole numbers below 2^53 */
  const double sdd = (a.ff - 2.0 * cb * a.f) + n * cb * cb;
  const double se = a.m - n * cc;
  const double see = (a.mm - 2.0 * cc * a.m) + n * cc * cc;
  const double sde = ((a.fm - cc * (double)a.f) - cb * a.m) + n * cb * cc;
  const double bf = lv.quant_f.step, bm = lv.quant_m.step;
  const double af = (lv.quant_f.lo + bf * cb) - lv.fixed_shift;
  const double am = (lv.quant_m.lo + bm * cc) - lv.moving_shift;
  s[0] = n;
  s[1] = bf * sd + n * af;
  s[2] = bm * se + n * am;
  s[3] = bf * bf * sdd + 2.0 * bf * af * sd + n * af * af;
  s[4] = bm * bm * see + 2.0 * bm * am * se + n * am * am;
  s[5] = bf * bm * sde + bf * am * sd + af * bm * se + n * af * am;
}

/* A voxel's moving sample from its taps in flight: the blend of its gathered quads, or
 * (FILTER) of its layers' filtered samples along z. */
template <bool FILTER>
__device__ inline float nw_rows_sample(const NwLinearTaps &t, const float q0[4], const float q1[4])
{
  if constexpr (FILTER)
    return t.tz == 0.0f ? q0[0] : nw_quant_lerp(q0[0], q1[0], t.tz);
  else
    return nw_codes_linear_blend(t, q0, q1);
}

/* Thread t's sums over its groups (grid-stride) under the map mapf: s[0] the voxels counted,
 * s[1..5] as cost_kernel's (the shifted values, their squares and product), from the codes'
 * sums (nw_rows_values). ZROW and FILTER: nw_rows_gather's. */
template <int K, bool FLAT, bool WHOLE, bool ZROW, bool FILTER>
__device__ inline void nw_rows_sums(const NwRowsLevel &lv, const float *mapf, unsigned int t,
                                    double s[6])
{
  const NwRowsMoving mv = {lv.tex, lv.mnx, lv.mny, lv.mnz};
  NwRowsCodeSums a = {0, 0.0, 0.0, 0.0, 0.0, 0.0};
  for (NwRowsWalk<K, FLAT> v(lv.grid, t, lv.fnx, lv.fny); v.e < lv.n; v.step(lv.grid, lv.fny)) {
    const unsigned int last = WHOLE ? K : lv.fnx - v.gi * K; /* the group's voxels in the row */
    bool live[K];
#pragma unroll
    for (int l = 0; l < K; l++)
      live[l] = l < (int)last;
    NwRowsFixed<K, WHOLE> fixed;
    fixed.load(lv.codes + v.e, last);
    const float j = (float)v.j, k = FLAT ? 0.0f : (float)v.k;
    const float rest[3] = {nw_quant_map_rest(mapf, j, k), nw_quant_map_rest(mapf + 4, j, k),
                           nw_quant_map_rest(mapf + 8, j, k)};
    NwRowsTaps<K> g;
    nw_rows_gather<K, FLAT, ZROW, FILTER>(mv, mapf, (float)(v.gi * K), rest, live, g);
#pragma unroll
    for (int l = 0; l < K; l++)
      nw_rows_add(a, live[l], fixed.code(l), nw_rows_sample<FILTER>(g.t[l], g.q0[l], g.q1[l]));
  }
  nw_rows_values(lv, a, s);
}

#endif
