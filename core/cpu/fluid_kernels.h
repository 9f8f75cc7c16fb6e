/* fluid_kernels.h — the kernels of unbiased viscous-fluid registration ("fluid",
 * fluid_method.h), CPU references in fluid_kernels_cpu.c. Each is one data-parallel pass over
 * the voxels, written as a per-voxel function, that a CUDA kernel of the same name (_cuda) is
 * to reproduce and be parity-tested against (the Gaussian of step 2 is smooth.h's, which has
 * its CUDA twin already). Any thread; OpenMP over z-slices inside; results do not depend on
 * the number of threads (reductions of the sums are in double: they agree to rounding).
 *
 * Shapes: images nc = 1, fields nc = 3 (voxel units, component c along index axis c), the
 * matrix field P nc = 9 (P_ij at 3 i + j, row-major), all on one grid of n = (nx, ny, nz).
 * u is the paper's displacement: the template is deformed as T(x - u(x)) (fluid_method.h).
 *
 * The discretisation (paper's notation, voxel spacing h = 1):
 *   ∂_j w(x) = (w(x + e_j) - w(x - e_j)) / 2 for the FIELDS u and P, with w = 0 outside the
 *     grid (the Dirichlet condition u = 0 on ∂Ω, extended by zero), and ∂_j = 0 along an
 *     axis of size 1 (2D images: nz = 1). D = I - ∇u, (∇u)_ij = ∂_j u_i; J = det D.
 *   T(x - u) and ∇T(x - u): the value and the exact gradient of T's trilinear interpolant
 *     (nw_fluid_deform_grad_cpu), so the L2 force too is the derivative of the discrete
 *     energy, not an approximation of it that would stop the step control short.
 *   d_i = Σ_j ∂_j P_ij with P_ij = L'(J) cof(D)_ij: with the same central differences and P
 *     = 0 outside, Σ_x ∂_j P(x) · w(x) = -Σ_x P(x) · ∂_j w(x) for every grid function w, so
 *     d is exactly the derivative of the discrete sKL = Σ_x (J(x) - 1) log J(x) with respect
 *     to u (tests/test_fluid.c checks it against finite differences of the energy).
 *   Sampling between voxels is trilinear with clamped borders (resample.h, field.h). */
#ifndef NW_FLUID_KERNELS_H
#define NW_FLUID_KERNELS_H

#include <glib.h>

#include "volume.h"

G_BEGIN_DECLS

/* Tw(x) = T(x - u(x)) and gTw(x) = ∇T(x - u(x)) (nc = 3): the value and the gradient of T's
 * trilinear interpolant (clamped borders, resample.h) at x - u, so that the L2 force is the
 * exact derivative of the discrete L2 energy: inside a cell the gradient is the difference
 * of the cell's taps weighted along the other axes; exactly on a voxel, where the
 * interpolant has a kink, the central difference; 0 where the position is clamped and along
 * an axis of size 1. */
void nw_fluid_deform_grad_cpu(NwVolume *Tw, NwVolume *gTw, const NwVolume *T, const NwVolume *u);

/* out(x) = in(x - u(x)), every component (out and in have one nc, 1 or 3), trilinear,
 * clamped: the moving mask deformed, and at regridding T(x - u_tot). */
void nw_fluid_deform_cpu(NwVolume *out, const NwVolume *in, const NwVolume *u);

/* region(x) = 1 where fixed_mask(x) >= 0.5 and moving_mask_d(x) >= 0.5 (the moving mask
 * deformed by the current map), else 0; a NULL mask is inside everywhere. */
void nw_fluid_region_cpu(NwVolume *region, const NwVolume *fixed_mask,
                         const NwVolume *moving_mask_d);

/* J(x) = det D(x), D = I - ∇u; and when P is not NULL, P_ij(x) = L'(J) cof(D)_ij with
 * L'(J) = 1 + log J - 1/J, the derivative of (J - 1) log J; P = 0 where J <= 0 (a fold,
 * where the energy is infinite and the step is refused). */
void nw_fluid_jacobian_cpu(NwVolume *J, NwVolume *P, const NwVolume *u);

/* The force f = -∂E/∂u at every voxel x (fluid_method.h step 1):
 *   f_i(x) = [Tw(x) - R(x)] gTw_i(x) [where region(x) != 0; region NULL: everywhere]
 *            - lambda Σ_j (P_ij(x + e_j) - P_ij(x - e_j)) / 2     (P = 0 outside the grid)
 * with Tw = T(x - u), gTw = ∇T(x - u) (nw_fluid_deform_grad_cpu), P of nw_fluid_jacobian_cpu. */
void nw_fluid_force_cpu(NwVolume *f, const NwVolume *R, const NwVolume *Tw, const NwVolume *gTw,
                        const NwVolume *P, const NwVolume *region, double lambda);

/* r = v - (v·∇)u, r_i(x) = v_i(x) - Σ_j v_j(x) ∂_j u_i(x) (∂u/∂t, step 3), and r = 0 on the
 * outermost voxels of every axis longer than one (u stays 0 on ∂Ω). Returns max |r|. */
double nw_fluid_transport_cpu(NwVolume *r, const NwVolume *u, const NwVolume *v);

/* u_tot(x) = u_new(x) + u_prev(x - u_new(x)) (u_prev trilinear, clamped): the map of
 * x -> x - u_new(x) followed by y -> y - u_prev(y). out is neither input. */
void nw_fluid_compose_cpu(NwVolume *out, const NwVolume *u_prev, const NwVolume *u_new);

/* u = 0 on the outermost voxels of every axis longer than one. */
void nw_fluid_zero_border_cpu(NwVolume *u);

/* The sums of the energy and the figures over one state (fluid_method.h): */
typedef struct {
  double l2;       /* Σ ½ (Tw - R)² over the voxels where region != 0 (all without region) */
  double n_region; /* their number */
  double skl;      /* Σ (J - 1) log J over the voxels with J > 0 */
  double sum_log;  /* Σ log J over the voxels with J > 0 */
  double n_folds;  /* voxels with J <= 0 (the energy is then +inf) */
  double min_jac, max_jac;
  double n; /* voxels */
} NwFluidSums;
void nw_fluid_sums_cpu(NwFluidSums *s, const NwVolume *R, const NwVolume *Tw, const NwVolume *J,
                       const NwVolume *region);
/* E = l2 + lambda skl of the sums, in sums over voxels; +inf with a fold. */
double nw_fluid_energy(const NwFluidSums *s, double lambda);

G_END_DECLS

#endif
