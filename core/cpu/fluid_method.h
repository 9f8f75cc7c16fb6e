/* fluid_method.h — "fluid": unbiased viscous-fluid registration (Yanovsky, Thompson, Osher,
 * Leow 2007, "Topology preserving log-unbiased nonlinear image registration", MMBIA; on GPUs
 * Lee et al. 2010), issue 14. The parameter table, the figures and the names below are shared
 * by the CPU reference (core/cpu/fluid_cpu.c over the kernels of fluid_kernels.h) and its
 * CUDA twin (cuda/fluid_cuda.cu over cuda/fluid_kernels.cuh); fluid_common.c holds them.
 *
 * Notation (the paper's): R the reference (fixed) image, T the template (moving) image,
 * u the displacement in the paper's sign: the template is deformed as T(x - u(x)), i.e. the
 * fixed voxel x corresponds to the moving position x - u(x). The forward field that the
 * other methods and the outputs use (field.h: x -> x + s(x)) is s = -u. Everything is in
 * VOXEL units of the current level. D = D(x - u) = I - ∇u is the Jacobian matrix of the map
 * x -> x - u(x), (∇u)_ij = ∂u_i/∂x_j, and J = |D| its determinant.
 *
 * Energy, summed over the voxels of the level (fluid_kernels.h has the discrete forms):
 *   E(u) = L2(u) + λ sKL(u),  L2 = ½ Σ (T(x - u) - R)²,  sKL = Σ (J - 1) log J,
 * with intensities divided by the fixed image's range (max - min at full resolution) so that
 * λ is a number without units; sKL = +inf where any J <= 0 (a fold).
 *
 * One iteration at a level (the discretisation in fluid_kernels.h):
 *   1. force f = [T(x - u) - R] ∇T(x - u) - λ (d1, d2, d3),
 *      d_i = Σ_j ∂_j (L'(J) cof(D)_ij), L'(J) = 1 + log J - 1/J = d/dJ (J - 1) log J:
 *      f = -∂E/∂u, the exact gradient of the discrete sKL term (central differences for ∇u
 *      and for the divergence, u and L' cof(D) zero outside the grid: the divergence is the
 *      adjoint of the gradient), and of L2 up to interpolation (∇T by central differences,
 *      sampled trilinearly at x - u). Zero L2 force outside the masks.
 *   2. velocity v = G_σ * f (separable Gaussian, smooth.h, sigma voxels).
 *   3. transport r = v - (v·∇)u, i.e. r_i = v_i - Σ_j v_j ∂_j u_i (∂u/∂t = r), with r = 0 on
 *      the outermost voxels (u = 0 on ∂Ω, Dirichlet).
 *   4. time step Δt = δ / max|r|, so max|Δu| = δ voxels; u' = u + Δt r. δ starts at
 *      max-step; a step that raises E or folds (some J <= 0, E = inf) is refused and δ halved
 *      (at most 8 times a step; a level whose step cannot decrease E has converged), and
 *      after an accepted step δ grows by 1.2, up to max-step.
 *   5. regridding: when min J of u falls below regrid-jacobian, the template is resampled
 *      through the whole map so far, T_g(x) = T(x - u_tot(x)) (from the ORIGINAL T: one
 *      interpolation however many regriddings), the moving mask likewise, and u restarts at 0;
 *      u_tot(x) = u_new(x) + u_prev(x - u_new(x)) composes the pieces (Christensen et al.
 *      1996). Between regriddings E is exactly the paper's energy of u_tot; after one, the
 *      sKL term acts on the deformation since the last regridding. Regridding is rare with
 *      the sKL term (it keeps J near 1); the figures count it.
 * Figures after each iteration, of the whole map u_tot: "energy" (l2 + λ skl), "l2" (mean
 * ½(T(x - u) - R)² over the voxels inside the masks), "skl" (mean (J - 1) log J), "max_u"
 * (max |u_tot|, voxels), "min_jac", "max_jac" (of J = |I - ∇u_tot| as in the energy),
 * "mean_log_jac" (mean log J: 0 for an unbiased map between equal volumes), "folds" (J <= 0),
 * "step" (δ of the last accepted step, voxels; 0 when none was), "regrids" (so far).
 *
 * Multi-resolution as demons (demons_method.h, deformable_common.h): `levels` levels,
 * nw_downsample2 pyramids, u_tot carried up with nw_resize (vectors scaled), zeroed on the
 * border; a level restarts regridded when the carried map's min J is below regrid-jacobian.
 * A level ends after `iterations` iterations, when the relative change of E falls below
 * `tolerance` (after 5 iterations), or when no step decreases E.
 * Masks as demons: the L2 force and the l2 sum only where the fixed mask is inside and the
 * moving mask deformed by the current map, M_mask(x - u), is >= 0.5; the regulariser acts
 * everywhere.
 * Intensities as demons: histogram-match maps the moving intensities onto the fixed ones
 * first; similarity lcc replaces each image of a level, once, by its locally normalised
 * version Î = (I - μI) / sqrt(σI² + ε) (Gaussian windows of lcc-sigma voxels, ε as
 * demons'), on which a smooth multiplicative bias has no effect; the L2 force then compares
 * local structure (|R̂ - T̂|² summed over a window is 2 (1 - ρ) where the map is locally a
 * shift). Both are then divided by the range of the fixed one, so that λ means what it
 * means with ssd.
 *
 * Results: "warped" (the original moving image at x + s(x), s = -u_tot, at full resolution),
 * "forward" (s), "jacobian" (det(I + ∇s), field.h), and with moving labels "labels"
 * (nearest). No "inverse": the fluid map is not a stationary velocity's exponential. */
#ifndef NW_FLUID_METHOD_H
#define NW_FLUID_METHOD_H

#include "fluid_kernels.h"
#include "method.h"

G_BEGIN_DECLS

/* Parameters (name, type, default, range; live = may change while running):
 *   levels           int    3      1..8
 *   iterations       int    100    1..100000       per level
 *   lambda           double 0.01   0..100          live; weight of sKL (λ)
 *   sigma            double 2.0    0..20 voxel     live; Gaussian of the velocity (G_σ)
 *   max-step         double 0.5    0.01..5 voxel   live; δ, max |Δu| per iteration
 *   regrid-jacobian  double 0.5    0..1            live; regrid when min J falls below
 *   similarity       enum   ssd | lcc
 *   lcc-sigma        double 2.0    0.5..20 voxel
 *   histogram-match  bool   false
 *   tolerance        double 1e-5   0..1            live; relative energy change per iteration */
#define NW_FLUID_N_PARAMS 10
extern const NwParamSpec nw_fluid_param_specs[NW_FLUID_N_PARAMS];
/* The live plot's panels: l2, skl, max_u, min_jac, max_jac, mean_log_jac. */
extern const char *const nw_fluid_plot_figures[];
extern const NwMethodOps nw_fluid_cpu_ops;
/* The CUDA twin (cuda/fluid_cuda.cu), registered by nw_cuda_register_methods. */
extern const NwMethodOps nw_fluid_cuda_ops;

typedef enum {
  NW_FLUID_SIM_SSD,
  NW_FLUID_SIM_LCC,
} NwFluidSimilarity;

/* The figures of a map, as both back ends report and plot them. */
typedef struct {
  double energy, l2, skl, max_u, min_jac, max_jac, mean_log_jac, folds;
} NwFluidFigures;
/* From the map's sums (per voxel of s->n; a fold makes skl +inf and mean_log_jac -inf), λ and
 * its largest |u| in voxels. */
void nw_fluid_figures(NwFluidFigures *f, const NwFluidSums *s, double lambda, double max_u);
/* A step's report: where the run stands (progress over levels of p's iterations), the
 * figures, the last accepted step δ and the regriddings so far. */
void nw_fluid_fill_report(NwIterationReport *r, const NwParams *p, int iteration, int level,
                          int iter_in_level, int n_levels, gboolean finished,
                          const NwFluidFigures *f, double step, int regrids);
/* ssd's intensity scale: 1 / the fixed image's range (1 for a flat image). OpenMP inside. */
double nw_fluid_intensity_scale(const NwVolume *fixed);

/* Halvings of δ an iteration tries before the level counts as converged. */
#define NW_FLUID_MAX_HALVINGS 8
/* Growth of δ after an accepted step (capped at max-step). */
#define NW_FLUID_STEP_GROWTH 1.2

G_END_DECLS

#endif
