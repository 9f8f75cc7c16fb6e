/* demons_method.h — "demons": diffeomorphic log-domain demons (Vercauteren et al. 2009,
 * NeuroImage 45:S61), with the classic SSD similarity or local normalised cross-correlation
 * (LCC-demons, Lorenzi et al. 2013, NeuroImage 81:470). The parameter table, the figures,
 * the results and the job below are shared by the CPU reference (core/cpu/demons_cpu.c) and
 * its CUDA twin (cuda/demons_cuda.cu); demons_common.c holds them.
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
 * Masks (NwMethodInputs fixed_mask, moving_mask; both on the fixed grid here, >= 0.5 inside,
 * as ANTs/ITK demons take them): the update of step 2 is computed only where the fixed mask
 * is inside and the moving mask warped by the current s (M_mask ∘ s, trilinear) is >= 0.5,
 * and is zero elsewhere before the smoothing of step 3, which still spreads it; the
 * similarity sums (energy, mse, ncc, so the stopping rule) are over that same region. The
 * masks go down the pyramid like the images (nw_downsample2) and are tested >= 0.5 at every
 * level; local LCC statistics and the Jacobian figures still use every voxel. Without masks
 * everything is as if both covered the whole volume.
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

/* Where a demons job is, and the figures of its current state. */
typedef struct {
  int level, n_levels; /* current level (0 = coarsest) of n_levels */
  int iter_in_level, iteration;
  gboolean level_done, finished;
  double energy, prev_energy, mse, ncc, max_u, min_jac;
  size_t folds;
  int squarings;
} NwDemonsProgress;

/* The similarity sums of F and W = M ∘ s over the voxels of a level inside the masks (all
 * without masks) and their number n, both intensities shifted by the level's mean of F
 * before squaring (precision), and with lcc the sum of the local correlations ρ over those
 * voxels where the fixed image is not locally flat and their number. The figures mse, ncc and
 * energy follow from them (nw_demons_set_figures). */
typedef struct {
  double sf, sw, sff, sww, sfw, sd2, slcc, n_lcc, n;
} NwDemonsSimSums;

/* ---- the job both back ends drive ------------------------------------------------------
 * Each back end's state begins with an NwDemonsJob; the stopping rule, the level changes,
 * live parameter changes and the reports are written once here (demons_common.c), and call
 * back into the back end for the work on its own buffers. All on the job's worker thread. */
typedef struct {
  NwParams *params;                                         /* own copy */
  const NwVolume *fixed_full, *moving_full, *moving_labels; /* borrowed inputs */
  /* The image pyramids, [pr.n_levels], 0 = coarsest; owned. The mask pyramids likewise,
   * NULL without that mask (values in 0..1, inside where >= 0.5). */
  NwVolume **pyr_fixed, **pyr_moving, **pyr_fixed_mask, **pyr_moving_mask;
  /* Level, iteration, stopping state and figures. */
  NwDemonsProgress pr;
  /* Of F at the current level: its mean, subtracted before squaring, and its squared
   * intensity range (1 when flat). */
  double shift, scale2;
} NwDemonsJob;

typedef struct {
  /* Make level l's buffers and carry v onto them (zero at the first level); pr.level still
   * names the level before (nothing yet at the first call), shift and scale2 are level l's. */
  gboolean (*setup_level)(NwDemonsJob *job, int l, GError **error);
  /* lcc: the local statistics of F at the current level (lcc-sigma may have changed). */
  gboolean (*lcc_fixed)(NwDemonsJob *job, GError **error);
  /* Step 1 of an iteration for the current v: s = exp(v), W = M ∘ s and every figure. */
  gboolean (*evaluate)(NwDemonsJob *job, GError **error);
  /* Steps 2-5, then evaluate; sets pr.max_u and pr.prev_energy. */
  gboolean (*iterate)(NwDemonsJob *job, GError **error);
} NwDemonsBackend;

/* Fixed and moving present, scalar, on one grid, finite; label maps and masks on the fixed
 * grid, masks scalar, finite and not empty (some voxel >= 0.5). */
gboolean nw_demons_check_inputs(const NwMethodInputs *in, GError **error);
/* After nw_demons_check_inputs: keep the inputs and a copy of p, build the pyramids and
 * enter the first level. */
gboolean nw_demons_job_start(NwDemonsJob *job, const NwDemonsBackend *be, const NwMethodInputs *in,
                             const NwParams *p, GError **error);
/* One step of the method interface: the next level when the last one ended, one iteration,
 * the stopping rule, the report (a finished job only reports). */
gboolean nw_demons_job_step(NwDemonsJob *job, const NwDemonsBackend *be, NwIterationReport *report,
                            GError **error);
/* New parameters between iterations; a new lcc-sigma renews the LCC statistics and the
 * figures. Refuses a change of a parameter that is not live. */
gboolean nw_demons_job_set_params(NwDemonsJob *job, const NwDemonsBackend *be, const NwParams *p,
                                  GError **error);
/* Enter level l (the current level again, or a finer one): set up, per-level constants,
 * fixed LCC statistics, first evaluation. */
gboolean nw_demons_job_enter_level(NwDemonsJob *job, const NwDemonsBackend *be, int l,
                                   GError **error);
/* Frees the pyramids and the parameters (the back end frees its own buffers). */
void nw_demons_job_clear(NwDemonsJob *job);
double nw_demons_param(const NwDemonsJob *job, const char *name);
gboolean nw_demons_is_lcc(const NwDemonsJob *job);

/* mse, ncc and energy of pr from the sums over their t->n voxels (all 0 when n is 0: the
 * masks leave no voxel at this level and state). */
void nw_demons_set_figures(NwDemonsProgress *pr, const NwDemonsSimSums *t, gboolean lcc);
/* Whether the job has a mask, i.e. a region to compute (demons_cpu.h nw_demons_region_cpu). */
gboolean nw_demons_has_masks(const NwDemonsJob *job);
/* Level l of a mask pyramid (job->pyr_fixed_mask or pyr_moving_mask), NULL without it. */
static inline const NwVolume *nw_demons_level_mask(NwVolume *const *pyr, int l)
{
  return pyr != NULL ? pyr[l] : NULL;
}
/* v of the previous level carried onto F's grid (nw_resize, voxel field) with F's affine,
 * or zero when v_prev is NULL (the first level). */
NwVolume *nw_demons_carry_velocity(const NwVolume *v_prev, const NwVolume *F, GError **error);

/* The results (demons_method.h), in this order; labels only with moving labels. */
typedef struct {
  NwVolume *warped, *forward, *inverse, *velocity, *jacobian, *labels;
} NwDemonsOutputs;
/* Moves the outputs into a new result (out is left empty); NULL, and out cleared, when any
 * but labels is missing (an error was set where it failed to be made). */
NwMethodResult *nw_demons_result_take(NwDemonsOutputs *out);
void nw_demons_outputs_clear(NwDemonsOutputs *out);

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
 *   tolerance        double 1e-4   0..1         live; relative energy change per iteration
 * The table is in demons_common.c, shared by both back ends. */
#define NW_DEMONS_N_PARAMS 11
/* The table's rows, for tables that include them ("affine-demons": affine_demons_method.h). */
extern const char *const nw_demons_force_choices[];
extern const char *const nw_demons_similarity_choices[];
extern const char *const nw_demons_composition_choices[];
#define NW_DEMONS_PARAM_ROWS                                                                     \
    {"levels", NW_PARAM_INT, 3, 1, 8, "",                                                        \
     "Multi-resolution levels; each coarser level halves the size (more for large motion)", FALSE, \
     NULL},                                                                                      \
    {"iterations", NW_PARAM_INT, 50, 1, 100000, "", "Maximum iterations per level", FALSE, NULL}, \
    {"sigma-fluid", NW_PARAM_DOUBLE, 1.0, 0, 20, "voxel",                                        \
     "Gaussian smoothing of each update (fluid-like regularisation)", TRUE, NULL},               \
    {"sigma-diff", NW_PARAM_DOUBLE, 1.0, 0, 20, "voxel",                                         \
     "Gaussian smoothing of the velocity field (diffusion-like regularisation)", TRUE, NULL},    \
    {"max-step", NW_PARAM_DOUBLE, 1.0, 0.01, 10, "voxel",                                        \
     "Largest update length per iteration (alpha); smaller is slower and safer", TRUE, NULL},    \
    {"force", NW_PARAM_ENUM, NW_DEMONS_FORCE_SYMMETRIC, 0, 2, "",                                \
     "Gradient driving the update: symmetric (fixed and warped moving), fixed or moving", FALSE, \
     nw_demons_force_choices},                                                                   \
    {"similarity", NW_PARAM_ENUM, NW_DEMONS_SIM_SSD, 0, 1, "",                                   \
     "ssd for equal intensities, lcc (local correlation) for bias fields or contrast changes",   \
     FALSE, nw_demons_similarity_choices},                                                       \
    {"lcc-sigma", NW_PARAM_DOUBLE, 2.0, 0.5, 20, "voxel",                                        \
     "Gaussian window of the local correlation (lcc only)", TRUE, NULL},                         \
    {"composition", NW_PARAM_ENUM, NW_DEMONS_COMPOSE, 0, 1, "",                                  \
     "Velocity update: compose (v <- v o u) or bch (first-order BCH, v <- v + u)", FALSE,        \
     nw_demons_composition_choices},                                                             \
    {"histogram-match", NW_PARAM_BOOL, 0, 0, 1, "",                                              \
     "Match the moving intensities to the fixed ones before registering", FALSE, NULL},          \
    {"tolerance", NW_PARAM_DOUBLE, 1e-4, 0, 1, "",                                               \
     "A level ends when the relative energy change per iteration falls below this", TRUE, NULL}
extern const NwParamSpec nw_demons_param_specs[NW_DEMONS_N_PARAMS];
/* The figures the live plot shows (NwMethodOps.plot_figures; demons_common.c): the energy,
 * the NCC whatever the similarity, and the smallest Jacobian determinant (folds below 0). */
extern const char *const nw_demons_plot_figures[];
extern const int nw_demons_n_params;
extern const NwMethodOps nw_demons_cpu_ops;
/* In cuda/ when the build has CUDA. */
extern const NwMethodOps nw_demons_cuda_ops;

G_END_DECLS

#endif
