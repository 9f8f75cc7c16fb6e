/* affine_texture_cuda.cuh — the moving image's u16 codes (affine_quant.h) as a layered 2D
 * texture, read by texture gathers: the u16 cost kernel's linear and cubic samplers through it
 * (affine_cost_cuda.cu; with several voxels a thread, affine_cost_rows_cuda.cuh). CUDA back
 * end; the caller's stream.
 *
 * Why: an evaluation's time goes to the moving image's scattered taps (ncu on an H100 at
 * 3072²: 47 % of the stall cycles on L1TEX loads, neither DRAM nor the issue slots saturated;
 * docs/PERFORMANCE.md). A gather (PTX tld4) brings the 2 x 2 texels of a bilinear footprint in
 * one request, where the plain path issues four 2-byte loads, and the texture's block-linear
 * layout keeps a rotated row's taps in fewer cache lines.
 *
 * Exactness: no filtering by the hardware (its weights have 8 fractional bits). A gather is
 * asked at the centre between four texel centres, (i0 + 1, j0 + 1) in unnormalised
 * coordinates, which the unit turns into the footprint (i0, i0 + 1) x (j0, j0 + 1) with no
 * rounding to decide; clamp addressing clamps each index to [0, n - 1] as nw_quant_clampi
 * does. The codes come back as integers, and the blend is affine_quant.h's, operation for
 * operation: the samples equal nw_quant_linear's and nw_quant_cubic's bit for bit. Slices are
 * layers (the z taps are whole layers, their index clamped here as there). */
#ifndef NW_AFFINE_TEXTURE_CUDA_CUH
#define NW_AFFINE_TEXTURE_CUDA_CUH

#include <cuda_runtime.h>

#include <stdint.h>

#include "affine_quant.h"

/* The codes of one image as a texture; zero-initialised = none. */
struct NwCodesTexture {
  cudaArray_t array;
  cudaTextureObject_t tex;      /* 0: none */
  cudaTextureObject_t filtered; /* the same array with the unit's linear filter, read as
                                 * normalised floats (precision u16-filter) */
  int nx, ny, nz;
};

/* The largest image (width, height, layers) the current device's layered textures hold, into
 * max; false (max zeroed) when the device does not say. */
bool nw_codes_texture_limits(int max[3]);
/* t holds the n codes at codes (device memory, x fastest): its array remade when the size
 * changed, then a device-to-device copy on stream. */
cudaError_t nw_codes_texture_fill(NwCodesTexture *t, const uint16_t *codes, int nx, int ny, int nz,
                                  cudaStream_t stream);
/* Frees t's texture and array (the device must be done with them); t is none after. */
void nw_codes_texture_free(NwCodesTexture *t);

/* The four codes around (x0, y0)..(x0 + 1, y0 + 1) of layer k (each index clamped):
 * q[0] (x0, y0), q[1] (x0 + 1, y0), q[2] (x0, y0 + 1), q[3] (x0 + 1, y0 + 1). x0, y0 are whole
 * numbers (floats, from floorf). A gather returns, in order, (x0, y0 + 1), (x0 + 1, y0 + 1),
 * (x0 + 1, y0), (x0, y0) (the order of Direct3D's Gather4, which CUDA's tex2Dgather shares). */
__device__ inline void nw_codes_quad(cudaTextureObject_t t, int k, float x0, float y0, float q[4])
{
  unsigned int a, b, c, d;
  asm("tld4.r.a2d.v4.u32.f32 {%0, %1, %2, %3}, [%4, {%5, %6, %7, %7}];"
      : "=r"(a), "=r"(b), "=r"(c), "=r"(d)
      : "l"(t), "r"(k), "f"(x0 + 1.0f), "f"(y0 + 1.0f));
  q[0] = (float)d;
  q[1] = (float)c;
  q[2] = (float)a;
  q[3] = (float)b;
}

/* The texture unit's bilinear blend of layer k's codes at (x, y) (voxel indices), in codes:
 * its weights have 8 fractional bits (the CUDA programming guide, "Linear Filtering"), so a
 * sample is within ~1/256 of its taps' spread of nw_quant_linear's, not bit for bit. t: a
 * filtered texture (NwCodesTexture.filtered). Clamp addressing clamps the taps as
 * nw_quant_clampi does. */
__device__ inline float nw_codes_filtered(cudaTextureObject_t t, int k, float x, float y)
{
  return tex2DLayered<float>(t, x + 0.5f, y + 0.5f, k) * 65535.0f;
}

/* A linear sample's footprint at (x, y, z): the corner (fx, fy) of its 2 x 2 taps in each of
 * its layers z0 and z1, and its fractions u, w and tz (tz = 0: layer z0 alone, as a flat z
 * axis always is). Split from the blend so that a thread can gather several samples' taps
 * before it blends any (affine_cost_rows_cuda.cuh). */
struct NwLinearTaps {
  float fx, fy, u, w, tz;
  int z0, z1;
};

__device__ inline NwLinearTaps nw_codes_linear_taps(int nz, float x, float y, float z)
{
  NwLinearTaps t;
  t.fx = floorf(x);
  t.fy = floorf(y);
  t.u = x - t.fx; /* as nw_quant_linear computes it */
  t.w = y - t.fy;
  t.tz = nw_quant_z_taps(z, nz, &t.z0, &t.z1);
  return t;
}

/* One layer's bilinear blend of the quad q gathered for t. */
__device__ inline float nw_codes_bilerp(const NwLinearTaps &t, const float q[4])
{
  return nw_quant_bilerp(q[0], q[1], q[2], q[3], t.u, t.w);
}

/* nw_quant_linear's blend of the quads gathered for t: q0 from layer z0, q1 from z1 (read only
 * when t.tz != 0). */
__device__ inline float nw_codes_linear_blend(const NwLinearTaps &t, const float q0[4],
                                              const float q1[4])
{
  const float c0 = nw_codes_bilerp(t, q0);
  return t.tz == 0.0f ? c0 : nw_quant_lerp(c0, nw_codes_bilerp(t, q1), t.tz);
}

/* nw_quant_linear through the texture: the same taps, weights and operations. The second
 * layer is gathered after the first is blended: one quad of registers, not two (the
 * one-voxel kernel is compiled for 40). */
__device__ inline float nw_codes_linear(cudaTextureObject_t t, int nz, float x, float y, float z)
{
  const NwLinearTaps p = nw_codes_linear_taps(nz, x, y, z);
  float q[4];
  nw_codes_quad(t, p.z0, p.fx, p.fy, q);
  const float c0 = nw_codes_bilerp(p, q);
  if (p.tz == 0.0f)
    return c0;
  nw_codes_quad(t, p.z1, p.fx, p.fy, q);
  return nw_quant_lerp(c0, nw_codes_bilerp(p, q), p.tz);
}

/* One row of nw_quant_cubic_row from two quads side by side: r is 0 (the quads' lower row) or
 * 1 (their upper row). */
__device__ inline float nw_codes_cubic_row(const float left[4], const float right[4], int r,
                                           const float wx[4])
{
  const float tap[4] = {left[2 * r], left[2 * r + 1], right[2 * r], right[2 * r + 1]};
  float s = 0.0f;
#pragma unroll
  for (int a = 0; a < 4; a++)
    s = NW_QADD(s, NW_QMUL(wx[a], tap[a]));
  return s;
}

/* The four rows' sums of layer k (rows fy - 1 .. fy + 2, each of the x taps fx - 1 .. fx + 2):
 * four gathers instead of sixteen loads. */
__device__ inline void nw_codes_cubic_rows(cudaTextureObject_t t, int k, float fx, float fy,
                                           const float wx[4], float row[4])
{
  float lo_l[4], lo_r[4], hi_l[4], hi_r[4];
  nw_codes_quad(t, k, fx - 1.0f, fy - 1.0f, lo_l);
  nw_codes_quad(t, k, fx + 1.0f, fy - 1.0f, lo_r);
  nw_codes_quad(t, k, fx - 1.0f, fy + 1.0f, hi_l);
  nw_codes_quad(t, k, fx + 1.0f, fy + 1.0f, hi_r);
  row[0] = nw_codes_cubic_row(lo_l, lo_r, 0, wx);
  row[1] = nw_codes_cubic_row(lo_l, lo_r, 1, wx);
  row[2] = nw_codes_cubic_row(hi_l, hi_r, 0, wx);
  row[3] = nw_codes_cubic_row(hi_l, hi_r, 1, wx);
}

/* nw_quant_cubic through the texture: the same taps, weights and order of sums. */
__device__ inline float nw_codes_cubic(cudaTextureObject_t t, int nx, int ny, int nz, float x,
                                       float y, float z)
{
  int ix[4], iy[4];
  float wx[4], wy[4], row[4];
  nw_quant_cubic_taps(x, nx, ix, wx);
  nw_quant_cubic_taps(y, ny, iy, wy);
  const float fx = floorf(x), fy = floorf(y);
  float sum = 0.0f;
  if (nz == 1) {
    nw_codes_cubic_rows(t, 0, fx, fy, wx, row);
#pragma unroll
    for (int b = 0; b < 4; b++)
      sum = NW_QADD(sum, NW_QMUL(wy[b], row[b]));
    return sum;
  }
  int iz[4];
  float wz[4];
  nw_quant_cubic_taps(z, nz, iz, wz);
#pragma unroll
  for (int c = 0; c < 4; c++) {
    nw_codes_cubic_rows(t, iz[c], fx, fy, wx, row);
#pragma unroll
    for (int b = 0; b < 4; b++)
      sum = NW_QADD(sum, NW_QMUL(NW_QMUL(wz[c], wy[b]), row[b]));
  }
  return sum;
}

#endif
