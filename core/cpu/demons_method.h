/* demons_method.h — "demons": diffeomorphic log-domain demons (Vercauteren et al. 2009,
 * NeuroImage 45:S61), with the classic SSD similarity or local normalised cross-correlation
 * (LCC-demons, Lorenzi et al. 2013, NeuroImage 81:470). The parameter table, the figures and
 * the results below are shared by the CPU reference (core/cpu/demons_cpu.c) and its CUDA twin.
 *
 * Notation: F fixed, M moving, v stationary velocity field, s = exp(v) the forward
 * displacement, all fields in VOXEL units of the current level (volume.h): the fixed voxel x
 * corresponds to the moving position x + s(x), and the warped image is W = M ∘ s, i.e.
 * W(x) = M(x + s(x)) (trilinear, clamped borders).
 *
 * One iteration at a level:
 *   1. s = exp(v) by scaling and squaring (field.h; N squarings with 2^-N max|v| <= 0.5),
 *      W = M ∘ s.
 *   2. demons update u(x) = r(x) J(x) / (|J(x)|² + r(x)²/K), K = 4 α², which keeps |u| <= α
 *      voxels for any r and J (the maximum over |J| of the fraction is sqrt(K)/2); u is also
 *      clamped to |u| <= α against rounding. Where the denominator vanishes u = 0.
 *        ssd: r = F - W; J by force: fixed ∇F, moving ∇W, symmetric (ESM, default) their
 *             mean. Gradients by central differences, voxel units.
 *        lcc: the same on the locally normalised images Î = (I - μI) / sqrt(σI² + ε), local
 *             mean μ and variance σ² in Gaussian windows (sigma lcc-sigma, voxels),
 *             ε = 1e-4 (range of F)²: summed over a window, |F̂ - Ŵ|² = 2 (1 - ρ) with ρ the
 *             local correlation, so the SSD machinery maximises the LCC (the criterion of
 *             Lorenzi et al.; their update differs) and is blind to smooth multiplicative
 *             bias; locally flat regions give Î ≈ 0 and no force.
 *   3. fluid-like regularisation: u <- G(sigma-fluid) * u.
 *   4. velocity update (composition): compose: v(x) <- u(x) + v(x + u(x)), i.e. the velocity
 *      fields composed as displacements, v <- v ∘ u, which approximates
 *      log(exp(v) ∘ exp(u)) = v + u + ½[v,u] + ... to first order and keeps the J_v u part of
 *      the bracket; bch: first-order BCH v <- v + u (what Vercauteren et al. found enough).
 *   5. diffusion-like regularisation: v <- G(sigma-diff) * v.
 * Figures after the iteration (for s = exp(v) of the updated v): "energy" (the similarity
 * energy: ssd: mean (F - W)²; lcc: 1 - mean of ρ over the voxels where the fixed image is
 * not locally flat, σF² > ε, a set fixed per level), "mse" (mean (F - W)²),
 * "ncc" (global normalised cross-correlation of F and W), "max_u" (max |u| of this update
 * after the fluid smoothing, voxels), "min_jac" (min det(I + ∇s)), "folds" (voxels with
 * det <= 0), "squarings" (N).
 *
 * Multi-resolution: `levels` levels (0 = coarsest), images reduced by nw_downsample2
 * (Gaussian pre-smoothing, half size per axis), capped so that the coarsest level keeps at
 * least 8 voxels along every axis longer than one; v is carried to the next level by
 * nw_resize with is_voxel_field TRUE. sigma-fluid, sigma-diff, max-step and lcc-sigma are in
 * voxels of the current level. A level ends after `iterations` iterations or when the relative
 * energy change |E_prev - E| / E_prev falls below `tolerance` (after at least 5 iterations
 * there); the job finishes with the last level.
 *
 * histogram-match maps the moving intensities onto the fixed ones' distribution
 * (histogram_match.h) before the pyramid is built; "warped" still shows the original ones.
 *
 * Results: "warped" (M ∘ exp(v) at full resolution), "forward" (exp(v)), "inverse"
 * (exp(-v)), "velocity" (v), "jacobian" (det(I + ∇ forward)), and with moving labels
 * "labels" (moving labels warped nearest-neighbour by forward). */
#ifndef NW_DEMONS_METHOD_H
#define NW_DEMONS_METHOD_H

#include "method.h"

G_BEGIN_DECLS

/* lcc: added to local variances, times the squared intensity range of F, so the normalised
 * images and their force vanish where an image is locally flat. Shared by both back ends. */
#define NW_DEMONS_LCC_EPS 1e-4

/* A voxel whose demons denominator |J|² + r²/K is below this (times the squared intensity
 * scale: the range of F for ssd, 1 for lcc's unit-scale normalised images) gets no update.
 * There the images carry no signal, and r and J are rounding noise whose ratio would
 * otherwise make a full-length step in a random direction (ITK's demons uses 1e-9 too). */
#define NW_DEMONS_DEN_MIN 1e-9

typedef enum {
  NW_DEMONS_FORCE_SYMMETRIC,
  NW_DEMONS_FORCE_FIXED,
  NW_DEMONS_FORCE_MOVING,
} NwDemonsForce;

typedef enum {
  NW_DEMONS_SIM_SSD,
  NW_DEMONS_SIM_LCC,
} NwDemonsSimilarity;

typedef enum {
  NW_DEMONS_COMPOSE,
  NW_DEMONS_BCH,
} NwDemonsComposition;

/* Parameters (name, type, default, range; live = may change while running):
 *   levels           int    3      1..8          pyramid levels
 *   iterations       int    50     1..100000     per level
 *   sigma-fluid      double 1.0    0..20 voxel   live
 *   sigma-diff       double 1.0    0..20 voxel   live
 *   max-step         double 1.0    0.01..10 voxel (α) live
 *   force            enum   symmetric | fixed | moving
 *   similarity       enum   ssd | lcc
 *   lcc-sigma        double 2.0    0.5..20 voxel live
 *   composition      enum   compose | bch
 *   histogram-match  bool   false  match the moving intensities to the fixed first
 *   tolerance        double 1e-4   0..1         live; relative energy change per iteration */
/* Where a demons job is, and the figures of its current state. Both back ends embed one, so
 * the stopping rule, the reports and the input checks below are one piece of code. */
typedef struct {
  int level, n_levels;      /* current level (0 = coarsest) of n_levels */
  int iter_in_level, iteration;
  gboolean level_done, finished;
  double energy, prev_energy, mse, ncc, max_u, min_jac;
  size_t folds;
  int squarings;
} NwDemonsProgress;

/* Fixed and moving present, scalar, on one grid, finite; label maps on the fixed grid. */
gboolean nw_demons_check_inputs(const NwMethodInputs *in, GError **error);
/* Count the iteration just done and apply the level's stopping rule (iterations, or relative
 * energy change below tolerance after a few iterations); sets level_done and finished. */
void nw_demons_progress_advance(NwDemonsProgress *pr, const NwParams *p);
void nw_demons_fill_report(const NwDemonsProgress *pr, const NwParams *p, NwIterationReport *r);
/* The image pyramids both back ends register (0 = coarsest), built once on the host: the
 * moving image histogram-matched to the fixed first when the parameter asks for it. Both
 * have *n_levels levels (the images share one grid). Free with nw_pyramid_free. */
gboolean nw_demons_pyramids(const NwMethodInputs *in, const NwParams *p, NwVolume ***fixed,
                            NwVolume ***moving, int *n_levels, GError **error);
/* FALSE with an error naming the parameter when a non-live one differs. */
gboolean nw_demons_check_live_change(const NwParams *current, const NwParams *next,
                                     GError **error);

extern const NwParamSpec nw_demons_param_specs[];
extern const int nw_demons_n_params;
extern const NwMethodOps nw_demons_cpu_ops;
/* In cuda/ when the build has CUDA. */
extern const NwMethodOps nw_demons_cuda_ops;

G_END_DECLS

#endif
