/* fluid_kernels.cuh — the "fluid" kernels on the GPU: the CUDA twins of core/cpu/fluid_kernels.h
 * (read that first: every contract and the discretisation are its). CUDA back end, caller's
 * stream; every launcher returns nw_cuda_launched's status. Parity tests:
 * tests/test_cuda_fluid_kernels.cu.
 *
 * Fields are float4 (x, y, z, 0) in voxel units on an NwGrid, u in the paper's sign (the
 * template deformed as T(x - u)); images are float.
 *
 * Arithmetic. Where the CPU computes in double and the result feeds the step control (the
 * deformed template and its gradient, J and the energy sums, the transport and its maximum)
 * the kernels compute in double too, in the CPU's order, so that the energies the accept /
 * refuse decisions compare and the step length are the CPU's to rounding. The force is the
 * exception: its regulariser d = div(L'(J) cof(D)) is evaluated from u on the fly, in float,
 * which is where the GPU's time goes (fluid_method.h: the compute-bound kernel), with
 * L'(J) = log1p(t) + t / (1 + t) of t = J - 1 formed without cancellation (t = -tr G + E2(G) -
 * det G, G = ∇u), so it is accurate relative to its own size also near J = 1. */
#ifndef NW_FLUID_KERNELS_CUH
#define NW_FLUID_KERNELS_CUH

#include <cuda_runtime.h>

#include "field_device.cuh"
#include "fluid_kernels.h"

/* Tw = T(x - u), gTw = ∇T(x - u) (w = 0): nw_fluid_deform_grad_cpu. */
cudaError_t nw_fluid_deform_grad_cuda(float *Tw, float4 *gTw, const float *T, const float4 *u,
                                      const NwGrid &g, cudaStream_t stream);

/* The trial step of fluid_method.h step 4 with its deformed template: u_out = u + s r,
 * s = (float)(delta / max|r|) from *d_max_r (device; nw_fluid_transport_cuda's) or 0 when
 * that is not positive, rounded as nw_field_axpy; then Tw, gTw of u_out as
 * nw_fluid_deform_grad_cuda. u_out is neither u nor r. */
cudaError_t nw_fluid_trial_cuda(float4 *u_out, float *Tw, float4 *gTw, const float *T,
                                const float4 *u, const float4 *r, double delta,
                                const double *d_max_r, const NwGrid &g, cudaStream_t stream);

/* A voxel field of grid gi resampled onto grid go covering the same world box, components
 * scaled by the size ratio per axis: nw_resize(in, ..., TRUE) bit for bit (w = 0). */
cudaError_t nw_fluid_resize_field_cuda(float4 *out, const NwGrid &go, const float4 *in,
                                       const NwGrid &gi, cudaStream_t stream);

/* out(x) = in(x - u(x)), trilinear, clamped, position i - u in float as the CPU's:
 * nw_fluid_deform_cpu for a scalar image. */
cudaError_t nw_fluid_deform_cuda(float *out, const float *in, const float4 *u, const NwGrid &g,
                                 cudaStream_t stream);

/* out = sign · (u_new(x) + u_prev(x - u_new(x))), or sign · u_new when u_prev is NULL:
 * nw_fluid_compose_cpu with sign 1, the forward field s = -u_tot with sign -1. out is
 * neither input. */
cudaError_t nw_fluid_compose_cuda(float4 *out, const float4 *u_prev, const float4 *u_new,
                                  float sign, const NwGrid &g, cudaStream_t stream);

/* nw_fluid_region_cpu (either mask may be NULL). */
cudaError_t nw_fluid_region_cuda(float *region, const float *fixed_mask, const float *moving_mask_d,
                                 const NwGrid &g, cudaStream_t stream);

/* J (and P, 9 floats per voxel as the CPU's nc = 9 volume, when not NULL): nw_fluid_jacobian_cpu
 * in double. The method does not need P stored (the force recomputes it); the parity tests do. */
cudaError_t nw_fluid_jacobian_cuda(float *J, float *P, const float4 *u, const NwGrid &g,
                                   cudaStream_t stream);

/* The force f = -∂E/∂u (nw_fluid_force_cpu with P = L'(J) cof(D) of u, i.e. after
 * nw_fluid_jacobian_cpu), in two implementations that give the same bits:
 *   RECOMPUTE  one thread per voxel; each of the six neighbours' column of P it needs is
 *              computed from u read through the read-only cache (6 x one column of P and
 *              its t: about 3.5x the arithmetic of one full P per voxel);
 *   REUSE      2D blocks of 32 x 8 threads marching in z over chunks of slices: a ring of
 *              three u slices (tile + 2 halo) and two P slices (tile + 1 halo) in shared
 *              memory, each P computed once per voxel (+ the halo) and read by its
 *              neighbours (Lee et al. 2010).
 * Both evaluate P through the same device functions (p_factors, p_entry) of non-contracted
 * float operations, so they agree bit for bit; reuse is the default (the faster on the H100,
 * bench_fluid), NW_FLUID_FORCE=recompute|reuse picks one. w of f is 0. */
enum NwFluidForceVariant { NW_FLUID_FORCE_RECOMPUTE = 0, NW_FLUID_FORCE_REUSE = 1 };
cudaError_t nw_fluid_force_cuda(float4 *f, const float *R, const float *Tw, const float4 *gTw,
                                const float4 *u, const float *region, float lambda, int variant,
                                const NwGrid &g, cudaStream_t stream);
/* The variant of the environment variable NW_FLUID_FORCE ("reuse" or "recompute"), else the
 * default; read by every create (a test or benchmark may switch between jobs). */
int nw_fluid_force_variant_default(void);

/* Floating-point operations one voxel's force costs in each variant, counted from the code
 * (bench_fluid's GFLOP/s; log1pf and the division counted as one each). */
double nw_fluid_force_flops_per_voxel(int variant);

/* r = v - (v·∇)u, 0 on the border (nw_fluid_transport_cpu, in double); *d_max_r (device) =
 * max |r| as a double, exactly the CPU's value. */
cudaError_t nw_fluid_transport_cuda(float4 *r, double *d_max_r, const float4 *u, const float4 *v,
                                    const NwGrid &g, cudaStream_t stream);

/* u = 0 on the outermost voxels of every axis longer than one (nw_fluid_zero_border_cpu). */
cudaError_t nw_fluid_zero_border_cuda(float4 *u, const NwGrid &g, cudaStream_t stream);

/* The sums of one state (nw_fluid_jacobian_cpu then nw_fluid_sums_cpu: J of u in double,
 * stored nowhere) and max |u|², reduced deterministically: per-block partials in a fixed
 * order, then one block. d_partials holds NW_FLUID_SUM_BLOCKS entries. */
struct NwFluidSumsCuda {
  NwFluidSums s;
  double max_u2; /* max |u|² (the figure max_u is its root) */
};
#define NW_FLUID_SUM_BLOCKS 1024
cudaError_t nw_fluid_sums_cuda(NwFluidSumsCuda *d_sums, NwFluidSumsCuda *d_partials, const float *R,
                               const float *Tw, const float4 *u, const float *region,
                               const NwGrid &g, cudaStream_t stream);

#endif
