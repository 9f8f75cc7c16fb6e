/* affine_quant.h — the affine cost's 16-bit storage (precision "u16", affine_cost.h): how an
 * image is quantised and how the cost samples a quantised image, written once for the CPU
 * twin (core/cpu/affine_cost_cpu.c) and the CUDA kernel (cuda/affine_cost_cuda.cu). In C
 * these are plain static inline functions; compiled by nvcc they are __host__ __device__.
 * Any thread.
 *
 * Storage: an image with finite minimum lo and maximum hi over all its voxels keeps
 *   q = floor((v - lo) · scale + 0.5)   (unsigned 16 bits; double arithmetic)
 * and stands for the value lo + q · step, step = 1 / scale:
 *   - an image of integers spanning at most 65536 values (8- and 16-bit inputs, at the
 *     finest level): step 1, q = v - lo, exact;
 *   - else step (hi - lo) / 65535: within half of 1/65535 of the range.
 * Two bytes a voxel instead of four: half the memory traffic of an evaluation, and the two
 * 3072² images (2 x 18.9 MB) fit the H100's L2 together.
 *
 * Sampling: positions in single precision, the map rounded to float once on the host, each
 * coordinate m0 i + ((m1 j + m2 k) + m3) (the part in parentheses is a row's: the kernel that
 * walks a row computes it once and adds m0 i a voxel); domain test, nearest, linear and cubic
 * (sampler.h's definitions) in float on the codes q, and the sample turned into a value in
 * double. Parity of the twins: every operation here is one IEEE single or double operation in
 * a fixed order. C11 (no GNU extensions) never contracts a*b + c into a fused multiply-add,
 * and on the device every product and sum below is an explicit round-to-nearest intrinsic
 * (NW_QMUL...), which nvcc does not fuse either. So the CPU and the GPU take the same
 * inside/outside and nearest decisions and the same samples, bit for bit, and their costs
 * differ only by the order of the double sums. */
#ifndef NW_AFFINE_QUANT_H
#define NW_AFFINE_QUANT_H

#include <math.h>
#include <stdint.h>

#include "interp_weights.h"

#if defined(__CUDACC__) && defined(__CUDA_ARCH__)
#define NW_QLOAD(p) __ldg(p) /* read-only path: the images do not change during a launch */
#else
#define NW_QLOAD(p) (*(p))
#endif
#if defined(__CUDACC__) && defined(__CUDA_ARCH__)
#define NW_QMUL(a, b) __fmul_rn(a, b)
#define NW_QADD(a, b) __fadd_rn(a, b)
#define NW_QSUB(a, b) __fsub_rn(a, b)
#define NW_QDMUL(a, b) __dmul_rn(a, b)
#define NW_QDADD(a, b) __dadd_rn(a, b)
#define NW_QDSUB(a, b) __dsub_rn(a, b)
#else
#define NW_QMUL(a, b) ((a) * (b))
#define NW_QADD(a, b) ((a) + (b))
#define NW_QSUB(a, b) ((a) - (b))
#define NW_QDMUL(a, b) ((a) * (b))
#define NW_QDADD(a, b) ((a) + (b))
#define NW_QDSUB(a, b) ((a) - (b))
#endif
#if defined(__CUDACC__) && defined(__CUDA_ARCH__)
#define NW_QUNROLL _Pragma("unroll") /* taps in registers, not local memory */
#else
#define NW_QUNROLL
#endif

#define NW_QUANT_MAX 65535.0

/* The quantisation of an image with finite minimum lo and maximum hi (hi > lo, else the
 * image is flat and every code is 0); integers: every voxel is an integer. */
typedef struct {
  double lo;    /* the value of code 0 */
  double step;  /* the value of one code: 1, or (hi - lo) / 65535 */
  double scale; /* codes per unit of value: 1, or 65535 / (hi - lo) (0 for a flat image) */
} NwQuant;

static inline NW_HOST_DEVICE NwQuant nw_quant_make(double lo, double hi, int integers)
{
  NwQuant q;
  q.lo = lo;
  if (integers && hi > lo && hi - lo <= NW_QUANT_MAX) {
    q.step = 1.0;
    q.scale = 1.0;
  } else if (hi > lo) {
    q.step = (hi - lo) / NW_QUANT_MAX;
    q.scale = NW_QUANT_MAX / (hi - lo);
  } else {
    q.step = 0.0;
    q.scale = 0.0;
  }
  return q;
}

/* The code of v (finite, in [lo, hi]; clamped to the codes regardless). */
static inline NW_HOST_DEVICE uint16_t nw_quant_code(NwQuant q, float v)
{
  double c = floor(NW_QDADD(NW_QDMUL(NW_QDSUB((double)v, q.lo), q.scale), 0.5));
  c = c < 0.0 ? 0.0 : (c > NW_QUANT_MAX ? NW_QUANT_MAX : c);
  return (uint16_t)c;
}

/* The value a code (or an interpolated code) stands for. */
static inline NW_HOST_DEVICE double nw_quant_value(NwQuant q, float code)
{
  return NW_QDADD(q.lo, NW_QDMUL(q.step, (double)code));
}

static inline NW_HOST_DEVICE int nw_quant_clampi(int i, int n)
{
  return i < 0 ? 0 : (i >= n ? n - 1 : i);
}

/* sampler.h's domain, in float: inside when -0.5 <= x <= n - 0.5 (NaN is outside). */
static inline NW_HOST_DEVICE int nw_quant_inside(float x, float y, float z, int nx, int ny, int nz)
{
  return x >= -0.5f && x <= (float)nx - 0.5f && y >= -0.5f && y <= (float)ny - 0.5f && z >= -0.5f &&
         z <= (float)nz - 0.5f;
}

/* The part of one coordinate of the map (3x4 row-major floats, a row at m) that a fixed row
 * (j, k) shares: (m1 j + m2 k) + m3. */
static inline NW_HOST_DEVICE float nw_quant_map_rest(const float *m, float j, float k)
{
  return NW_QADD(NW_QADD(NW_QMUL(m[1], j), NW_QMUL(m[2], k)), m[3]);
}

/* That coordinate at voxel i of the row whose nw_quant_map_rest is rest: m0 i + rest. */
static inline NW_HOST_DEVICE float nw_quant_map_at(const float *m, float i, float rest)
{
  return NW_QADD(NW_QMUL(m[0], i), rest);
}

/* One coordinate of the map at voxel (i, j, k). */
static inline NW_HOST_DEVICE float nw_quant_map_row(const float *m, float i, float j, float k)
{
  return nw_quant_map_at(m, i, nw_quant_map_rest(m, j, k));
}

/* The voxel offset of nearest's tap: floor(p + 0.5), clamped (for codes and masks). */
static inline NW_HOST_DEVICE uint32_t nw_quant_nearest(float x, float y, float z, int nx, int ny,
                                                       int nz)
{
  const int i = nw_quant_clampi((int)floorf(x + 0.5f), nx);
  const int j = nw_quant_clampi((int)floorf(y + 0.5f), ny);
  const int k = nw_quant_clampi((int)floorf(z + 0.5f), nz);
  return ((uint32_t)k * (uint32_t)ny + (uint32_t)j) * (uint32_t)nx + (uint32_t)i;
}

/* a + u (b - a): a linear step in three operations (sampler.c's a (1 - u) + b u takes four,
 * and one 1 - u serves two steps of a bilinear blend: 9 operations against 11). Between two
 * codes b - a is exact. (A fused multiply-add would take two, but the CPU twin would then
 * call fmaf: a third more time a CPU evaluation without -mfma.) */
static inline NW_HOST_DEVICE float nw_quant_lerp(float a, float b, float u)
{
  return NW_QADD(a, NW_QMUL(u, NW_QSUB(b, a)));
}

/* One slice's bilinear blend of the codes at (x0, y0), (x1, y0), (x0, y1), (x1, y1), with the
 * position's fractions u and w: sampler.c's order of operations (x first, then y). */
static inline NW_HOST_DEVICE float nw_quant_bilerp(float q00, float q10, float q01, float q11,
                                                   float u, float w)
{
  return nw_quant_lerp(nw_quant_lerp(q00, q10, u), nw_quant_lerp(q01, q11, u), w);
}

/* The two slices of a linear sample at z (clamped) and its fraction between them; a flat z
 * axis (nz = 1): slice 0 with fraction 0. */
static inline NW_HOST_DEVICE float nw_quant_z_taps(float z, int nz, int *z0, int *z1)
{
  *z0 = *z1 = 0;
  if (nz <= 1)
    return 0.0f;
  const float fz = floorf(z);
  *z0 = nw_quant_clampi((int)fz, nz);
  *z1 = nw_quant_clampi((int)fz + 1, nz);
  return z - fz;
}

/* Bilinear / trilinear on the codes; a flat z axis (nz = 1) takes its one slice. */
static inline NW_HOST_DEVICE float nw_quant_linear(const uint16_t *d, int nx, int ny, int nz,
                                                   float x, float y, float z)
{
  const float fx = floorf(x), fy = floorf(y);
  const float u = x - fx, w = y - fy; /* exact: x and floor(x) share the binade or less */
  const int x0 = nw_quant_clampi((int)fx, nx), x1 = nw_quant_clampi((int)fx + 1, nx);
  const int y0 = nw_quant_clampi((int)fy, ny), y1 = nw_quant_clampi((int)fy + 1, ny);
  const uint32_t r0 = (uint32_t)y0 * (uint32_t)nx, r1 = (uint32_t)y1 * (uint32_t)nx;
  int z0, z1;
  const float t = nw_quant_z_taps(z, nz, &z0, &z1);
  const uint16_t *p = d + (uint32_t)z0 * (uint32_t)nx * (uint32_t)ny;
  const float c0 = nw_quant_bilerp(NW_QLOAD(p + r0 + x0), NW_QLOAD(p + r0 + x1),
                                   NW_QLOAD(p + r1 + x0), NW_QLOAD(p + r1 + x1), u, w);
  if (t == 0.0f)
    return c0;
  const uint16_t *p1 = d + (uint32_t)z1 * (uint32_t)nx * (uint32_t)ny;
  return nw_quant_lerp(c0,
                       nw_quant_bilerp(NW_QLOAD(p1 + r0 + x0), NW_QLOAD(p1 + r0 + x1),
                                       NW_QLOAD(p1 + r1 + x0), NW_QLOAD(p1 + r1 + x1), u, w),
                       t);
}

/* Keys' kernel (a = -0.5) in float, the form of nw_keys_weight. */
static inline NW_HOST_DEVICE float nw_quant_keys(float d)
{
  /* a = -0.5: a + 2 = 1.5, a + 3 = 2.5, 5a = -2.5, 8a = -4, 4a = -2 (exact in float) */
  d = fabsf(d);
  if (d <= 1.0f)
    return NW_QADD(NW_QMUL(NW_QMUL(NW_QSUB(NW_QMUL(1.5f, d), 2.5f), d), d), 1.0f);
  if (d < 2.0f)
    return NW_QSUB(NW_QMUL(NW_QADD(NW_QMUL(NW_QSUB(NW_QMUL(-0.5f, d), -2.5f), d), -4.0f), d),
                   -2.0f);
  return 0.0f;
}

/* Four clamped taps along an axis of n voxels and their weights. */
static inline NW_HOST_DEVICE void nw_quant_cubic_taps(float x, int n, int idx[4], float w[4])
{
  const float f = floorf(x), u = x - f;
  NW_QUNROLL
  for (int q = 0; q < 4; q++) {
    idx[q] = nw_quant_clampi((int)f - 1 + q, n);
    w[q] = nw_quant_keys(NW_QSUB(u, (float)(q - 1)));
  }
}

/* One row's four taps along x. */
static inline NW_HOST_DEVICE float nw_quant_cubic_row(const uint16_t *row, const int ix[4],
                                                      const float wx[4])
{
  float r = 0.0f;
  NW_QUNROLL
  for (int a = 0; a < 4; a++)
    r = NW_QADD(r, NW_QMUL(wx[a], (float)NW_QLOAD(row + ix[a])));
  return r;
}

/* Keys cubic convolution on the codes (16 taps in 2D, 64 in 3D; a flat z axis takes its one
 * slice with weight 1), summed row by row as sampler.c sums. */
static inline NW_HOST_DEVICE float nw_quant_cubic(const uint16_t *d, int nx, int ny, int nz,
                                                  float x, float y, float z)
{
  int ix[4], iy[4];
  float wx[4], wy[4];
  nw_quant_cubic_taps(x, nx, ix, wx);
  nw_quant_cubic_taps(y, ny, iy, wy);
  float sum = 0.0f;
  if (nz == 1) {
    NW_QUNROLL
    for (int b = 0; b < 4; b++)
      sum = NW_QADD(sum,
                    NW_QMUL(wy[b], nw_quant_cubic_row(d + (uint32_t)iy[b] * (uint32_t)nx, ix, wx)));
    return sum;
  }
  int iz[4];
  float wz[4];
  nw_quant_cubic_taps(z, nz, iz, wz);
  NW_QUNROLL
  for (int c = 0; c < 4; c++)
    NW_QUNROLL
  for (int b = 0; b < 4; b++)
    sum = NW_QADD(sum,
                  NW_QMUL(NW_QMUL(wz[c], wy[b]),
                          nw_quant_cubic_row(
                              d + ((uint32_t)iz[c] * (uint32_t)ny + (uint32_t)iy[b]) * (uint32_t)nx,
                              ix, wx)));
  return sum;
}

#endif
