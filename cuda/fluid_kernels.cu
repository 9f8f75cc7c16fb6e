/* fluid_kernels.cu — see fluid_kernels.cuh; the CPU twins are core/cpu/fluid_kernels_cpu.c.
 * CUDA back end. */
#include "fluid_kernels.cuh"

#include <cub/block/block_reduce.cuh>
#include <cuda/functional>
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_check.h"

#define THREADS 256

/* ---- shared helpers ------------------------------------------------------------------------ */

__device__ __forceinline__ bool inside(const NwGrid &g, int i, int j, int k)
{
  return i >= 0 && j >= 0 && k >= 0 && i < g.nx && j < g.ny && k < g.nz;
}

/* u at (i, j, k), 0 outside the grid (the Dirichlet extension of fluid_kernels.h). */
__device__ __forceinline__ float4 u_or_zero(const float4 *__restrict__ u, const NwGrid &g, int i,
                                            int j, int k)
{
  return inside(g, i, j, k) ? __ldg(u + g.index(i, j, k)) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
}

__device__ __forceinline__ bool on_border(const NwGrid &g, int i, int j, int k)
{
  return (g.nx > 1 && (i == 0 || i == g.nx - 1)) || (g.ny > 1 && (j == 0 || j == g.ny - 1)) ||
         (g.nz > 1 && (k == 0 || k == g.nz - 1));
}

__device__ __forceinline__ float comp(float4 v, int c)
{
  return c == 0 ? v.x : (c == 1 ? v.y : v.z);
}

/* G_ra = ∂_a u_r in double at (i, j, k), as grad_u_at of the CPU (zero outside; an axis of
 * size 1 has both neighbours outside, so its column is 0 as the CPU's field_diff gives). */
__device__ __forceinline__ void grad_u_d(const float4 *__restrict__ u, const NwGrid &g, int i,
                                         int j, int k, double G[3][3])
{
  const float4 xm = u_or_zero(u, g, i - 1, j, k), xp = u_or_zero(u, g, i + 1, j, k);
  const float4 ym = u_or_zero(u, g, i, j - 1, k), yp = u_or_zero(u, g, i, j + 1, k);
  const float4 zm = u_or_zero(u, g, i, j, k - 1), zp = u_or_zero(u, g, i, j, k + 1);
#pragma unroll
  for (int r = 0; r < 3; r++) {
    G[r][0] = 0.5 * ((double)comp(xp, r) - (double)comp(xm, r));
    G[r][1] = 0.5 * ((double)comp(yp, r) - (double)comp(ym, r));
    G[r][2] = 0.5 * ((double)comp(zp, r) - (double)comp(zm, r));
  }
}

/* a b - c d in double without contraction: the CPU's (x86-64, no FMA) rounding. */
__device__ __forceinline__ double det2_d(double a, double b, double c, double d)
{
  return __dsub_rn(__dmul_rn(a, b), __dmul_rn(c, d));
}

/* cofactor3 of fluid_kernels_cpu.c, operation for operation; returns det D. */
__device__ __forceinline__ double cofactor3_d(const double D[3][3], double C[3][3])
{
  C[0][0] = det2_d(D[1][1], D[2][2], D[1][2], D[2][1]);
  C[0][1] = -det2_d(D[1][0], D[2][2], D[1][2], D[2][0]);
  C[0][2] = det2_d(D[1][0], D[2][1], D[1][1], D[2][0]);
  C[1][0] = -det2_d(D[0][1], D[2][2], D[0][2], D[2][1]);
  C[1][1] = det2_d(D[0][0], D[2][2], D[0][2], D[2][0]);
  C[1][2] = -det2_d(D[0][0], D[2][1], D[0][1], D[2][0]);
  C[2][0] = det2_d(D[0][1], D[1][2], D[0][2], D[1][1]);
  C[2][1] = -det2_d(D[0][0], D[1][2], D[0][2], D[1][0]);
  C[2][2] = det2_d(D[0][0], D[1][1], D[0][1], D[1][0]);
  return __dadd_rn(__dadd_rn(__dmul_rn(D[0][0], C[0][0]), __dmul_rn(D[0][1], C[0][1])),
                   __dmul_rn(D[0][2], C[0][2]));
}

/* J = det(I - ∇u) at a voxel in double, and the cofactors when C is wanted. */
__device__ __forceinline__ double jacobian_d(const float4 *__restrict__ u, const NwGrid &g, int i,
                                             int j, int k, double C[3][3])
{
  double G[3][3], D[3][3];
  grad_u_d(u, g, i, j, k, G);
#pragma unroll
  for (int r = 0; r < 3; r++)
#pragma unroll
    for (int a = 0; a < 3; a++)
      D[r][a] = (double)(r == a) - G[r][a];
  return cofactor3_d(D, C);
}

/* ---- deformed template and its gradient (double, as the CPU) ------------------------------ */

struct AxisTaps {
  int idx[2], didx[2];
  double w[2], dw[2];
};

/* axis_taps of fluid_kernels_cpu.c, line for line. */
__device__ __forceinline__ void axis_taps(double x, int n, AxisTaps &t)
{
  const double xc = fmin(fmax(x, 0.0), (double)(n - 1));
  int i0 = (int)floor(xc);
  if (i0 > n - 2)
    i0 = n > 1 ? n - 2 : 0;
  const int i1 = n > 1 ? i0 + 1 : 0;
  const double f = n > 1 ? xc - i0 : 0.0;
  t.idx[0] = t.didx[0] = i0;
  t.idx[1] = t.didx[1] = i1;
  t.w[0] = 1.0 - f;
  t.w[1] = f;
  t.dw[0] = -1.0;
  t.dw[1] = 1.0;
  if (n == 1 || x < 0.0 || x > n - 1) {
    t.dw[0] = t.dw[1] = 0.0;
  } else if (f == 0.0 && i0 > 0) {
    t.didx[0] = i0 - 1;
    t.dw[0] = -0.5;
    t.dw[1] = 0.5;
  } else if (f == 1.0 && i1 < n - 1) {
    t.didx[0] = i0;
    t.didx[1] = i1 + 1;
    t.dw[0] = -0.5;
    t.dw[1] = 0.5;
  }
}

/* taps_sum of the CPU: the 8 taps in its order, products and sums not contracted. */
__device__ __forceinline__ double taps_sum(const float *__restrict__ T, const NwGrid &g,
                                           const AxisTaps t[3], int deriv)
{
  double acc = 0.0;
#pragma unroll
  for (int c = 0; c < 8; c++) {
    const int b[3] = {c & 1, (c >> 1) & 1, (c >> 2) & 1};
    int ix[3];
    double w = 1.0;
#pragma unroll
    for (int a = 0; a < 3; a++) {
      ix[a] = a == deriv ? t[a].didx[b[a]] : t[a].idx[b[a]];
      w = __dmul_rn(w, a == deriv ? t[a].dw[b[a]] : t[a].w[b[a]]);
    }
    if (w != 0.0)
      acc = __dadd_rn(acc, __dmul_rn(w, (double)__ldg(T + g.index(ix[0], ix[1], ix[2]))));
  }
  return acc;
}

/* Tw and gTw at voxel e from the displacement d there. */
__device__ __forceinline__ void deform_grad_at(float *__restrict__ Tw, float4 *__restrict__ gTw,
                                               const float *__restrict__ T, float4 d, NwGrid g,
                                               int i, int j, int k, long long e)
{
  AxisTaps t[3];
  axis_taps((double)i - (double)d.x, g.nx, t[0]);
  axis_taps((double)j - (double)d.y, g.ny, t[1]);
  axis_taps((double)k - (double)d.z, g.nz, t[2]);
  Tw[e] = (float)taps_sum(T, g, t, -1);
  gTw[e] = make_float4((float)taps_sum(T, g, t, 0), (float)taps_sum(T, g, t, 1),
                       (float)taps_sum(T, g, t, 2), 0.0f);
}

__global__ void deform_grad_kernel(float *__restrict__ Tw, float4 *__restrict__ gTw,
                                   const float *__restrict__ T, const float4 *__restrict__ u,
                                   NwGrid g)
{
  int i, j, k;
  long long e;
  if (voxel_of_thread(g, i, j, k, e))
    deform_grad_at(Tw, gTw, T, u[e], g, i, j, k, e);
}

cudaError_t nw_fluid_deform_grad_cuda(float *Tw, float4 *gTw, const float *T, const float4 *u,
                                      const NwGrid &g, cudaStream_t stream)
{
  deform_grad_kernel<<<nw_voxel_grid(g), NW_VOXEL_THREADS, 0, stream>>>(Tw, gTw, T, u, g);
  return nw_cuda_launched(stream);
}

/* The trial step fused with its deformed template: u_out = u + s r with s = (float)(delta /
 * max|r|) formed here from the maximum the transport left on the device (the host needs not
 * read it first), added as nw_field_axpy rounds (float product, then float sum: no FMA), then
 * Tw and gTw of u_out. One pass over u and r instead of an axpy and a second read of u_out. */
__global__ void trial_kernel(float4 *__restrict__ u_out, float *__restrict__ Tw,
                             float4 *__restrict__ gTw, const float *__restrict__ T,
                             const float4 *__restrict__ u, const float4 *__restrict__ r,
                             double delta, const double *__restrict__ d_max_r, NwGrid g)
{
  int i, j, k;
  long long e;
  if (!voxel_of_thread(g, i, j, k, e))
    return;
  const double m = __ldg(d_max_r);
  const float s = m > 0.0 ? (float)(delta / m) : 0.0f;
  const float4 a = u[e], b = r[e];
  const float4 d = make_float4(__fadd_rn(a.x, __fmul_rn(s, b.x)), __fadd_rn(a.y, __fmul_rn(s, b.y)),
                               __fadd_rn(a.z, __fmul_rn(s, b.z)), 0.0f);
  u_out[e] = d;
  deform_grad_at(Tw, gTw, T, d, g, i, j, k, e);
}

cudaError_t nw_fluid_trial_cuda(float4 *u_out, float *Tw, float4 *gTw, const float *T,
                                const float4 *u, const float4 *r, double delta,
                                const double *d_max_r, const NwGrid &g, cudaStream_t stream)
{
  trial_kernel<<<nw_voxel_grid(g), NW_VOXEL_THREADS, 0, stream>>>(u_out, Tw, gTw, T, u, r, delta,
                                                                  d_max_r, g);
  return nw_cuda_launched(stream);
}

/* ---- carrying a field to a finer grid (nw_resize, bit for bit) ------------------------------ */

/* a + f (b - a) rounded as the CPU's float expression (no FMA). */
__device__ __forceinline__ float lerp_rn(float a, float b, float f)
{
  return __fadd_rn(a, __fmul_rn(f, __fsub_rn(b, a)));
}

__device__ __forceinline__ float4 lerp4_rn(float4 a, float4 b, float f)
{
  return make_float4(lerp_rn(a.x, b.x, f), lerp_rn(a.y, b.y, f), lerp_rn(a.z, b.z, f), 0.0f);
}

struct ResizeMap {
  double scale[3], offset[3]; /* out index o -> in index o scale + offset */
  float ratio[3];             /* vector components times n_out / n_in */
};

/* resample_grid then the vector scaling of nw_resize: the position o scale + offset in
 * double (uncontracted), sample_trilinear_all's lerps along x, y, z, then times the ratio. */
__global__ void resize_field_kernel(float4 *__restrict__ out, NwGrid go,
                                    const float4 *__restrict__ in, NwGrid gi, ResizeMap m)
{
  int i, j, k;
  long long e;
  if (!voxel_of_thread(go, i, j, k, e))
    return;
  int x0, x1, y0, y1, z0, z1;
  float fx, fy, fz;
  clamp_split(__dadd_rn(__dmul_rn((double)i, m.scale[0]), m.offset[0]), gi.nx, x0, x1, fx);
  clamp_split(__dadd_rn(__dmul_rn((double)j, m.scale[1]), m.offset[1]), gi.ny, y0, y1, fy);
  clamp_split(__dadd_rn(__dmul_rn((double)k, m.scale[2]), m.offset[2]), gi.nz, z0, z1, fz);
  const float4 c00 =
      lerp4_rn(__ldg(in + gi.index(x0, y0, z0)), __ldg(in + gi.index(x1, y0, z0)), fx);
  const float4 c10 =
      lerp4_rn(__ldg(in + gi.index(x0, y1, z0)), __ldg(in + gi.index(x1, y1, z0)), fx);
  const float4 c01 =
      lerp4_rn(__ldg(in + gi.index(x0, y0, z1)), __ldg(in + gi.index(x1, y0, z1)), fx);
  const float4 c11 =
      lerp4_rn(__ldg(in + gi.index(x0, y1, z1)), __ldg(in + gi.index(x1, y1, z1)), fx);
  const float4 v = lerp4_rn(lerp4_rn(c00, c10, fy), lerp4_rn(c01, c11, fy), fz);
  out[e] = make_float4(__fmul_rn(v.x, m.ratio[0]), __fmul_rn(v.y, m.ratio[1]),
                       __fmul_rn(v.z, m.ratio[2]), 0.0f);
}

cudaError_t nw_fluid_resize_field_cuda(float4 *out, const NwGrid &go, const float4 *in,
                                       const NwGrid &gi, cudaStream_t stream)
{
  /* nw_resize's map: the same world box, in index = (o + 0.5) n_in / n_out - 0.5 */
  const int n_in[3] = {gi.nx, gi.ny, gi.nz}, n_out[3] = {go.nx, go.ny, go.nz};
  ResizeMap m;
  for (int a = 0; a < 3; a++) {
    m.scale[a] = (double)n_in[a] / (double)n_out[a];
    m.offset[a] = 0.5 * m.scale[a] - 0.5;
    m.ratio[a] = (float)((double)n_out[a] / (double)n_in[a]);
  }
  resize_field_kernel<<<nw_voxel_grid(go), NW_VOXEL_THREADS, 0, stream>>>(out, go, in, gi, m);
  return nw_cuda_launched(stream);
}

/* ---- deform, compose, region, zero border -------------------------------------------------- */

/* The CPU's position is i - u in float (int - float in C), then sampled as resample.c. */
__global__ void deform_kernel(float *__restrict__ out, const float *__restrict__ in,
                              const float4 *__restrict__ u, NwGrid g)
{
  int i, j, k;
  long long e;
  if (!voxel_of_thread(g, i, j, k, e))
    return;
  const float4 d = u[e];
  out[e] = sample_trilinear(in, g, (float)i - d.x, (float)j - d.y, (float)k - d.z);
}

cudaError_t nw_fluid_deform_cuda(float *out, const float *in, const float4 *u, const NwGrid &g,
                                 cudaStream_t stream)
{
  deform_kernel<<<nw_voxel_grid(g), NW_VOXEL_THREADS, 0, stream>>>(out, in, u, g);
  return nw_cuda_launched(stream);
}

__global__ void compose_kernel(float4 *__restrict__ out, const float4 *__restrict__ u_prev,
                               const float4 *__restrict__ u_new, float sign, NwGrid g)
{
  int i, j, k;
  long long e;
  if (!voxel_of_thread(g, i, j, k, e))
    return;
  const float4 a = u_new[e];
  float4 s = a;
  if (u_prev != NULL) {
    const float4 b = sample_trilinear(u_prev, g, (float)i - a.x, (float)j - a.y, (float)k - a.z);
    s = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, 0.0f);
  }
  out[e] = make_float4(sign * s.x, sign * s.y, sign * s.z, 0.0f);
}

cudaError_t nw_fluid_compose_cuda(float4 *out, const float4 *u_prev, const float4 *u_new,
                                  float sign, const NwGrid &g, cudaStream_t stream)
{
  compose_kernel<<<nw_voxel_grid(g), NW_VOXEL_THREADS, 0, stream>>>(out, u_prev, u_new, sign, g);
  return nw_cuda_launched(stream);
}

__global__ void region_kernel(float *__restrict__ region, const float *__restrict__ fixed_mask,
                              const float *__restrict__ moving_mask_d, long long n)
{
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= n)
    return;
  const bool in_f = fixed_mask == NULL || fixed_mask[e] >= 0.5f;
  const bool in_m = moving_mask_d == NULL || moving_mask_d[e] >= 0.5f;
  region[e] = in_f && in_m ? 1.0f : 0.0f;
}

cudaError_t nw_fluid_region_cuda(float *region, const float *fixed_mask, const float *moving_mask_d,
                                 const NwGrid &g, cudaStream_t stream)
{
  region_kernel<<<nw_blocks_for(g.n(), THREADS), THREADS, 0, stream>>>(region, fixed_mask,
                                                                       moving_mask_d, g.n());
  return nw_cuda_launched(stream);
}

__global__ void zero_border_kernel(float4 *__restrict__ u, NwGrid g)
{
  int i, j, k;
  long long e;
  if (voxel_of_thread(g, i, j, k, e) && on_border(g, i, j, k))
    u[e] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
}

cudaError_t nw_fluid_zero_border_cuda(float4 *u, const NwGrid &g, cudaStream_t stream)
{
  zero_border_kernel<<<nw_voxel_grid(g), NW_VOXEL_THREADS, 0, stream>>>(u, g);
  return nw_cuda_launched(stream);
}

/* ---- Jacobian and P (double, as the CPU) -------------------------------------------------- */

__global__ void jacobian_kernel(float *__restrict__ Jv, float *__restrict__ P,
                                const float4 *__restrict__ u, NwGrid g)
{
  int i, j, k;
  long long e;
  if (!voxel_of_thread(g, i, j, k, e))
    return;
  double C[3][3];
  const double J = jacobian_d(u, g, i, j, k, C);
  Jv[e] = (float)J;
  if (P == NULL)
    return;
  const double Lp = J > 0.0 ? 1.0 + log(J) - 1.0 / J : 0.0;
#pragma unroll
  for (int r = 0; r < 3; r++)
#pragma unroll
    for (int a = 0; a < 3; a++)
      P[9 * e + 3 * r + a] = (float)(Lp * C[r][a]);
}

cudaError_t nw_fluid_jacobian_cuda(float *J, float *P, const float4 *u, const NwGrid &g,
                                   cudaStream_t stream)
{
  jacobian_kernel<<<nw_voxel_grid(g), NW_VOXEL_THREADS, 0, stream>>>(J, P, u, g);
  return nw_cuda_launched(stream);
}

/* ---- the force ----------------------------------------------------------------------------- */

/* Every float operation of P below is an explicit intrinsic (no contraction the compiler could
 * choose differently in the two kernels), so both variants produce the same bits. */
__device__ __forceinline__ float det2_f(float a, float b, float c, float d)
{
  return fmaf(a, b, -__fmul_rn(c, d));
}

/* G_ra = ∂_a u_r from the six neighbours (order -x, +x, -y, +y, -z, +z), zero outside. */
__device__ __forceinline__ void grad_f(const float4 nb[6], float G[3][3])
{
#pragma unroll
  for (int r = 0; r < 3; r++)
#pragma unroll
    for (int a = 0; a < 3; a++)
      G[r][a] = __fmul_rn(0.5f, __fsub_rn(comp(nb[2 * a + 1], r), comp(nb[2 * a], r)));
}

/* L'(J) = 1 + log J - 1/J = log1p(t) + t / (1 + t) with t = J - 1 = -tr G + E2(G) - det G
 * (det(I - G) expanded), accurate near J = 1 where 1 + log J - 1/J cancels; 0 where J <= 0. */
__device__ __forceinline__ float lprime_f(const float G[3][3])
{
  const float m01 = det2_f(G[0][0], G[1][1], G[0][1], G[1][0]);
  const float m02 = det2_f(G[0][0], G[2][2], G[0][2], G[2][0]);
  const float m12 = det2_f(G[1][1], G[2][2], G[1][2], G[2][1]);
  const float detG = fmaf(G[0][0], m12,
                          fmaf(-G[0][1], det2_f(G[1][0], G[2][2], G[1][2], G[2][0]),
                               __fmul_rn(G[0][2], det2_f(G[1][0], G[2][1], G[1][1], G[2][0]))));
  const float e2 = __fadd_rn(__fadd_rn(m01, m02), m12);
  const float tr = __fadd_rn(__fadd_rn(G[0][0], G[1][1]), G[2][2]);
  const float t = __fsub_rn(__fsub_rn(e2, tr), detG);
  if (!(t > -1.0f)) /* J <= 0: a fold, P = 0 as the CPU */
    return 0.0f;
  return __fadd_rn(log1pf(t), __fdiv_rn(t, __fadd_rn(1.0f, t)));
}

/* D = I - G. */
__device__ __forceinline__ void d_of(const float G[3][3], float D[3][3])
{
#pragma unroll
  for (int r = 0; r < 3; r++)
#pragma unroll
    for (int a = 0; a < 3; a++)
      D[r][a] = r == a ? __fsub_rn(1.0f, G[r][a]) : -G[r][a];
}

/* cof(D)_ra, the CPU's cofactor3 formulas (r, a compile-time after unrolling). */
__device__ __forceinline__ float cof_f(const float D[3][3], int r, int a)
{
  switch (3 * r + a) {
  case 0:
    return det2_f(D[1][1], D[2][2], D[1][2], D[2][1]);
  case 1:
    return -det2_f(D[1][0], D[2][2], D[1][2], D[2][0]);
  case 2:
    return det2_f(D[1][0], D[2][1], D[1][1], D[2][0]);
  case 3:
    return -det2_f(D[0][1], D[2][2], D[0][2], D[2][1]);
  case 4:
    return det2_f(D[0][0], D[2][2], D[0][2], D[2][0]);
  case 5:
    return -det2_f(D[0][0], D[2][1], D[0][1], D[2][0]);
  case 6:
    return det2_f(D[0][1], D[1][2], D[0][2], D[1][1]);
  case 7:
    return -det2_f(D[0][0], D[1][2], D[0][2], D[1][0]);
  default:
    return det2_f(D[0][0], D[1][1], D[0][1], D[1][0]);
  }
}

/* The factors of P = L'(J) cof(D) at a voxel from its six neighbours' u (grad_f's order):
 * L'(J) and D = I - ∇u. Both force variants form every entry of P through this and p_entry,
 * so they agree bit for bit by construction (the kernel test checks it). */
__device__ __forceinline__ void p_factors(const float4 nb[6], float &Lp, float D[3][3])
{
  float G[3][3];
  grad_f(nb, G);
  Lp = lprime_f(G);
  d_of(G, D);
}

/* P_ra = L'(J) cof(D)_ra. */
__device__ __forceinline__ float p_entry(float Lp, const float D[3][3], int r, int a)
{
  return __fmul_rn(Lp, cof_f(D, r, a));
}

/* f at one voxel from the L2 term and the divergence d_r = Σ_a (P+ - P-)_ra / 2, summed over
 * a = 0, 1, 2 in the CPU's order; pm[a][r] = P_ra at x - e_a, pp[a][r] at x + e_a. */
__device__ __forceinline__ float4 force_at(float res, float4 gT, const float pm[3][3],
                                           const float pp[3][3], float lambda)
{
  float f[3];
#pragma unroll
  for (int r = 0; r < 3; r++) {
    float d = 0.0f;
#pragma unroll
    for (int a = 0; a < 3; a++)
      d = fmaf(0.5f, __fsub_rn(pp[a][r], pm[a][r]), d);
    f[r] = fmaf(-lambda, d, __fmul_rn(res, comp(gT, r)));
  }
  return make_float4(f[0], f[1], f[2], 0.0f);
}

/* The L2 residual Tw - R inside the region, else 0. */
__device__ __forceinline__ float residual(const float *__restrict__ R, const float *__restrict__ Tw,
                                          const float *__restrict__ region, long long e)
{
  return region == NULL || region[e] != 0.0f ? __fsub_rn(Tw[e], R[e]) : 0.0f;
}

/* Column a of P at (i, j, k) from u through the read-only cache: 0 outside the grid. */
__device__ __forceinline__ void p_column_global(const float4 *__restrict__ u, const NwGrid &g,
                                                int i, int j, int k, int a, float out[3])
{
  if (!inside(g, i, j, k)) {
    out[0] = out[1] = out[2] = 0.0f;
    return;
  }
  const float4 nb[6] = {u_or_zero(u, g, i - 1, j, k), u_or_zero(u, g, i + 1, j, k),
                        u_or_zero(u, g, i, j - 1, k), u_or_zero(u, g, i, j + 1, k),
                        u_or_zero(u, g, i, j, k - 1), u_or_zero(u, g, i, j, k + 1)};
  float Lp, D[3][3];
  p_factors(nb, Lp, D);
#pragma unroll
  for (int r = 0; r < 3; r++)
    out[r] = p_entry(Lp, D, r, a);
}

__global__ void __launch_bounds__(NW_VOXEL_THREADS)
    force_recompute_kernel(float4 *__restrict__ f, const float *__restrict__ R,
                           const float *__restrict__ Tw, const float4 *__restrict__ gTw,
                           const float4 *__restrict__ u, const float *__restrict__ region,
                           float lambda, NwGrid g)
{
  int i, j, k;
  long long e;
  if (!voxel_of_thread(g, i, j, k, e))
    return;
  float pm[3][3], pp[3][3];
  p_column_global(u, g, i - 1, j, k, 0, pm[0]);
  p_column_global(u, g, i + 1, j, k, 0, pp[0]);
  p_column_global(u, g, i, j - 1, k, 1, pm[1]);
  p_column_global(u, g, i, j + 1, k, 1, pp[1]);
  p_column_global(u, g, i, j, k - 1, 2, pm[2]);
  p_column_global(u, g, i, j, k + 1, 2, pp[2]);
  f[e] = force_at(residual(R, Tw, region, e), gTw[e], pm, pp, lambda);
}

/* The reuse kernel's tiling. A block of TX x TY threads owns a TX x TY column of voxels and
 * marches through ZC consecutive slices of it. Shared memory holds
 *   su[3]: u on slices s-1, s, s+1 over the tile + 2 voxels of halo in x and y (UW x UH), 0
 *          outside the grid, a ring indexed by slice mod 3;
 *   sp[2]: the 9 components of P on slices k, k+1 over the tile + 1 voxel of halo (PW x PH;
 *          the 4 corners are never computed nor read), 0 outside the grid, by slice mod 2;
 * and each thread keeps column 2 of P at its own (i, j) on slice k-1 in registers. Step s
 * loads u(s+1), computes P(s) (which needs u of s-1, s, s+1 at the point and its x, y
 * neighbours: the 2-voxel u halo), and writes f on slice k = s-1, which needs P column 0 at
 * x ± 1 and column 1 at y ± 1 on slice k (the 1-voxel P halo) and column 2 at k ± 1. A chunk
 * [k0, k1) starts at s = k0 - 1 so that P(k0 - 1) is there for the first slice. 45 KiB of
 * static shared memory. */
#define TX 32
#define TY 8
#define ZC 16
#define UW (TX + 4)
#define UH (TY + 4)
#define PW (TX + 2)
#define PH (TY + 2)

__device__ __forceinline__ int ring3(int s)
{
  return ((s % 3) + 3) % 3;
}

__global__ void __launch_bounds__(TX *TY)
    force_reuse_kernel(float4 *__restrict__ f, const float *__restrict__ R,
                       const float *__restrict__ Tw, const float4 *__restrict__ gTw,
                       const float4 *__restrict__ u, const float *__restrict__ region, float lambda,
                       NwGrid g)
{
  __shared__ float4 su[3][UW * UH];
  __shared__ float sp[2][9][PW * PH];
  const int tid = threadIdx.y * TX + threadIdx.x;
  const int i0 = blockIdx.x * TX, j0 = blockIdx.y * TY;
  const int k0 = blockIdx.z * ZC, k1 = min(k0 + ZC, g.nz);
  const int i = i0 + threadIdx.x, j = j0 + threadIdx.y;
  const bool mine = i < g.nx && j < g.ny;
  const int pc = (threadIdx.y + 1) * PW + threadIdx.x + 1; /* this thread's voxel in sp */

  /* u of slice s (0 outside the grid) into its ring slot. */
  auto load_u = [&](int s) {
    float4 *dst = su[ring3(s)];
    for (int q = tid; q < UW * UH; q += TX * TY) {
      const int ly = q / UW, lx = q - ly * UW;
      dst[q] = u_or_zero(u, g, i0 + lx - 2, j0 + ly - 2, s);
    }
  };
  load_u(k0 - 2);
  load_u(k0 - 1);
  float pz_prev[3] = {0.0f, 0.0f, 0.0f}; /* P_r2 on slice k - 1 at (i, j) */
  for (int s = k0 - 1; s <= k1; s++) {
    load_u(s + 1);
    __syncthreads();
    /* P(s) over the tile and its 1-voxel halo. */
    const float4 *um = su[ring3(s - 1)], *uc = su[ring3(s)], *up = su[ring3(s + 1)];
    float(*P)[PW * PH] = sp[s & 1];
    for (int q = tid; q < PW * PH; q += TX * TY) {
      const int ly = q / PW, lx = q - ly * PW;
      if ((lx == 0 || lx == PW - 1) && (ly == 0 || ly == PH - 1))
        continue; /* corners: no voxel's divergence reads them */
      const int gi = i0 + lx - 1, gj = j0 + ly - 1;
      if (!inside(g, gi, gj, s)) {
#pragma unroll
        for (int c = 0; c < 9; c++)
          P[c][q] = 0.0f;
        continue;
      }
      const int c0 = (ly + 1) * UW + lx + 1; /* the point in the u tile */
      const float4 nb[6] = {uc[c0 - 1], uc[c0 + 1], uc[c0 - UW], uc[c0 + UW], um[c0], up[c0]};
      float Lp, D[3][3];
      p_factors(nb, Lp, D);
#pragma unroll
      for (int r = 0; r < 3; r++)
#pragma unroll
        for (int a = 0; a < 3; a++)
          P[3 * r + a][q] = p_entry(Lp, D, r, a);
    }
    __syncthreads();
    const int k = s - 1;
    if (k >= k0 && mine) {
      const float(*Pk)[PW * PH] = sp[k & 1];
      float pm[3][3], pp[3][3];
#pragma unroll
      for (int r = 0; r < 3; r++) {
        pm[0][r] = Pk[3 * r][pc - 1];
        pp[0][r] = Pk[3 * r][pc + 1];
        pm[1][r] = Pk[3 * r + 1][pc - PW];
        pp[1][r] = Pk[3 * r + 1][pc + PW];
        pm[2][r] = pz_prev[r];
        pp[2][r] = P[3 * r + 2][pc];
      }
      const long long e = g.index(i, j, k);
      f[e] = force_at(residual(R, Tw, region, e), gTw[e], pm, pp, lambda);
    }
    if (k >= k0 - 1) /* P(k) exists from here on: it is P(k - 1) of the next slice */
#pragma unroll
      for (int r = 0; r < 3; r++)
        pz_prev[r] = sp[k & 1][3 * r + 2][pc];
  }
}

cudaError_t nw_fluid_force_cuda(float4 *f, const float *R, const float *Tw, const float4 *gTw,
                                const float4 *u, const float *region, float lambda, int variant,
                                const NwGrid &g, cudaStream_t stream)
{
  if (variant == NW_FLUID_FORCE_REUSE) {
    const dim3 grid((unsigned)((g.nx + TX - 1) / TX), (unsigned)((g.ny + TY - 1) / TY),
                    (unsigned)((g.nz + ZC - 1) / ZC));
    force_reuse_kernel<<<grid, dim3(TX, TY), 0, stream>>>(f, R, Tw, gTw, u, region, lambda, g);
  } else {
    force_recompute_kernel<<<nw_voxel_grid(g), NW_VOXEL_THREADS, 0, stream>>>(f, R, Tw, gTw, u,
                                                                              region, lambda, g);
  }
  return nw_cuda_launched(stream);
}

/* reuse by default: on the H100 (bench_fluid, 240^3) 0.438 ms against recompute's 0.746. */
int nw_fluid_force_variant_default(void)
{
  const char *env = getenv("NW_FLUID_FORCE");
  return env != NULL && strcmp(env, "recompute") == 0 ? NW_FLUID_FORCE_RECOMPUTE
                                                      : NW_FLUID_FORCE_REUSE;
}

/* Counted from the code above, an FMA as 2: grad_f 18, d_of 3, one cofactor (det2_f) 3,
 * lprime_f 26 + 4 (log1pf and the division as one each), P = L' cof 1 per entry; force_at 37
 * (residual 1, 3 products, 9 differences with their FMA, 3 FMAs). One column of P: 18 + 3 +
 * 30 + 3 x 4 = 63; all of P: 18 + 3 + 30 + 9 x 4 = 87. recompute: 6 columns per voxel;
 * reuse: P on (TX + 2)(TY + 2) - 4 points per TX TY voxels and ZC + 2 slices per ZC. */
double nw_fluid_force_flops_per_voxel(int variant)
{
  if (variant == NW_FLUID_FORCE_REUSE)
    return 87.0 * ((double)(PW * PH - 4) / (TX * TY)) * ((ZC + 2.0) / ZC) + 37.0;
  return 6.0 * 63.0 + 37.0;
}

/* ---- transport ----------------------------------------------------------------------------- */

/* Block maximum of a non-negative double, then one atomicMax on its bits (non-negative IEEE
 * doubles order like their unsigned bit patterns). */
__device__ __forceinline__ void block_max_d(unsigned long long *max_bits, double m)
{
  typedef cub::BlockReduce<double, NW_VOXEL_THREADS> Reduce;
  __shared__ typename Reduce::TempStorage tmp;
  const double b = Reduce(tmp).Reduce(m, cuda::maximum<>{});
  if (threadIdx.x == 0)
    atomicMax(max_bits, (unsigned long long)__double_as_longlong(b));
}

__global__ void transport_kernel(float4 *__restrict__ r, unsigned long long *__restrict__ max_bits,
                                 const float4 *__restrict__ u, const float4 *__restrict__ v,
                                 NwGrid g)
{
  int i, j, k;
  long long e;
  const bool mine = voxel_of_thread(g, i, j, k, e);
  double n2 = 0.0;
  if (mine && on_border(g, i, j, k)) {
    r[e] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  } else if (mine) {
    double G[3][3];
    grad_u_d(u, g, i, j, k, G);
    const float4 vv = v[e];
    const double v0 = vv.x, v1 = vv.y, v2 = vv.z;
    float out[3];
#pragma unroll
    for (int c = 0; c < 3; c++) {
      const double adv = __dadd_rn(__dadd_rn(__dmul_rn(G[c][0], v0), __dmul_rn(G[c][1], v1)),
                                   __dmul_rn(G[c][2], v2));
      out[c] = (float)__dsub_rn((double)comp(vv, c), adv);
      n2 = __dadd_rn(n2, __dmul_rn((double)out[c], (double)out[c]));
    }
    r[e] = make_float4(out[0], out[1], out[2], 0.0f);
  }
  block_max_d(max_bits, sqrt(n2));
}

cudaError_t nw_fluid_transport_cuda(float4 *r, double *d_max_r, const float4 *u, const float4 *v,
                                    const NwGrid &g, cudaStream_t stream)
{
  cudaError_t err = cudaMemsetAsync(d_max_r, 0, sizeof(double), stream);
  if (err != cudaSuccess)
    return err;
  transport_kernel<<<nw_voxel_grid(g), NW_VOXEL_THREADS, 0, stream>>>(
      r, reinterpret_cast<unsigned long long *>(d_max_r), u, v, g);
  return nw_cuda_launched(stream);
}

/* ---- sums ---------------------------------------------------------------------------------- */

__device__ __forceinline__ NwFluidSumsCuda sums_zero(void)
{
  NwFluidSumsCuda t;
  t.s.l2 = t.s.n_region = t.s.skl = t.s.sum_log = t.s.n_folds = t.s.n = 0.0;
  t.s.min_jac = DBL_MAX;
  t.s.max_jac = -DBL_MAX;
  t.max_u2 = 0.0;
  return t;
}

/* Every member block-reduced (CUB), in one fixed order; valid in thread 0. */
__device__ void block_reduce_sums(NwFluidSumsCuda &t)
{
  typedef cub::BlockReduce<double, THREADS> Reduce;
  __shared__ typename Reduce::TempStorage tmp;
  double *sums[5] = {&t.s.l2, &t.s.n_region, &t.s.skl, &t.s.sum_log, &t.s.n_folds};
  for (int q = 0; q < 5; q++) {
    const double v = Reduce(tmp).Sum(*sums[q]);
    __syncthreads();
    *sums[q] = v;
  }
  const double mn = Reduce(tmp).Reduce(t.s.min_jac, cuda::minimum<>{});
  __syncthreads();
  const double mx = Reduce(tmp).Reduce(t.s.max_jac, cuda::maximum<>{});
  __syncthreads();
  const double mu = Reduce(tmp).Reduce(t.max_u2, cuda::maximum<>{});
  __syncthreads();
  t.s.min_jac = mn;
  t.s.max_jac = mx;
  t.max_u2 = mu;
}

/* nw_fluid_sums_cpu per voxel, with J as the CPU stores it (a float) and |u|² in double. */
__global__ void __launch_bounds__(THREADS)
    sums_kernel(NwFluidSumsCuda *__restrict__ partials, const float *__restrict__ R,
                const float *__restrict__ Tw, const float4 *__restrict__ u,
                const float *__restrict__ region, NwGrid g)
{
  NwFluidSumsCuda t = sums_zero();
  const int rows = g.ny * g.nz;
  for (int row = blockIdx.x; row < rows; row += gridDim.x) {
    const int j = row % g.ny, k = row / g.ny;
    for (int i = threadIdx.x; i < g.nx; i += blockDim.x) {
      const long long e = (long long)row * g.nx + i;
      if (region == NULL || region[e] != 0.0f) {
        const double d = (double)Tw[e] - R[e];
        t.s.l2 += 0.5 * d * d;
        t.s.n_region += 1.0;
      }
      double C[3][3];
      const double jv = (double)(float)jacobian_d(u, g, i, j, k, C);
      t.s.min_jac = fmin(t.s.min_jac, jv);
      t.s.max_jac = fmax(t.s.max_jac, jv);
      if (jv > 0.0) {
        t.s.skl += (jv - 1.0) * log(jv);
        t.s.sum_log += log(jv);
      } else {
        t.s.n_folds += 1.0;
      }
      const float4 p = u[e];
      const double u2 = __dadd_rn(__dadd_rn(__dmul_rn(p.x, p.x), __dmul_rn(p.y, p.y)),
                                  __dmul_rn(p.z, p.z)); /* nw_field_max_norm's, uncontracted */
      t.max_u2 = fmax(t.max_u2, u2);
    }
  }
  block_reduce_sums(t);
  if (threadIdx.x == 0)
    partials[blockIdx.x] = t;
}

/* One block: each thread folds a fixed subset of the partials, then one block reduction —
 * the same order on every run (deterministic figures and energies). */
__global__ void sums_final_kernel(NwFluidSumsCuda *__restrict__ out,
                                  const NwFluidSumsCuda *__restrict__ partials, int n_partials,
                                  double n)
{
  NwFluidSumsCuda t = sums_zero();
  for (int b = threadIdx.x; b < n_partials; b += blockDim.x) {
    const NwFluidSumsCuda p = partials[b];
    t.s.l2 += p.s.l2;
    t.s.n_region += p.s.n_region;
    t.s.skl += p.s.skl;
    t.s.sum_log += p.s.sum_log;
    t.s.n_folds += p.s.n_folds;
    t.s.min_jac = fmin(t.s.min_jac, p.s.min_jac);
    t.s.max_jac = fmax(t.s.max_jac, p.s.max_jac);
    t.max_u2 = fmax(t.max_u2, p.max_u2);
  }
  block_reduce_sums(t);
  if (threadIdx.x == 0) {
    t.s.n = n;
    *out = t;
  }
}

cudaError_t nw_fluid_sums_cuda(NwFluidSumsCuda *d_sums, NwFluidSumsCuda *d_partials, const float *R,
                               const float *Tw, const float4 *u, const float *region,
                               const NwGrid &g, cudaStream_t stream)
{
  const long long rows = (long long)g.ny * g.nz;
  const int blocks = rows < NW_FLUID_SUM_BLOCKS ? (int)rows : NW_FLUID_SUM_BLOCKS;
  sums_kernel<<<blocks, THREADS, 0, stream>>>(d_partials, R, Tw, u, region, g);
  cudaError_t err = nw_cuda_launched(stream);
  if (err != cudaSuccess)
    return err;
  sums_final_kernel<<<1, THREADS, 0, stream>>>(d_sums, d_partials, blocks, (double)g.n());
  return nw_cuda_launched(stream);
}
