/* affine_method.h — "affine": 2D and 3D rigid, similarity and affine registration by the
 * Nelder–Mead simplex (GSL's nmsimplex2) on an image pyramid. The parameter table, the job
 * and its reports below are shared by every back end of the cost (affine_cost.h); the CPU
 * method (affine_cpu.c) is this job over the CPU cost, and a CUDA twin is the same job over
 * a CUDA cost. All on the job's worker thread.
 *
 * The transform (affine_transform.h) maps fixed world to moving world about the fixed
 * image's centre. Images with one slice each are registered in 2D (in the world x-y plane).
 *
 * The job:
 *   1. Pyramids of both images (and masks) with `levels` levels (pyramid.h: Gaussian, half
 *      size per level; fewer when an image is small), level 0 the coarsest.
 *   2. Starts (affine_init.h): the initial transform alone if one was given, else `init`
 *      (geometry: centres; mass: centres of mass; moments: also the principal axes), each
 *      also turned by `rotation-starts` rotations about every axis.
 *   3. At level 0 a simplex run from every start; the lowest cost wins. At each finer level
 *      one run from the winner so far, then up to `restarts` runs from the point reached,
 *      each with a fresh simplex, for as long as the last one lowered the cost: a simplex
 *      that has flattened along a shallow valley (an affine's rotation against its shear)
 *      stops early, and a fresh one goes on.
 *   A run optimises the kind's free parameters in millimetres (affine_transform.h:
 *   nw_transform_param_mm with the fixed image's RMS half-extent as radius), from a simplex
 *   of size `step` voxels of the level and until its size (GSL's mean distance of the
 *   vertices from their centre) falls below `tolerance` voxels of the level, or after
 *   `iterations` simplex iterations. With optimizer gradient (BFGS) the size is the last
 *   step's length; at the finest level a step below the tolerance ends the run only once it
 *   no longer lowers the cost by relative 1e-6 (short steps along a narrow valley are not
 *   the bottom).
 * One step of the method interface is one simplex iteration. Figures: "cost", the metric
 * ("mse", "ncc" or "mi"), "overlap", "simplex" (size, mm), then the free parameters of the
 * best vertex (mm; angles in degrees). Results: "warped" (the moving image on the fixed grid,
 * 0 outside it) and the numbers "transform" (4x4 fixed world -> moving world, RAS mm),
 * "centre" (mm), "parameters" (free parameters, angles in radians), "cost" (cost, metric,
 * overlap at the finest level), "evaluations". */
#ifndef NW_AFFINE_METHOD_H
#define NW_AFFINE_METHOD_H

#include "affine_cost.h"
#include "affine_transform.h"
#include "method.h"

G_BEGIN_DECLS

/* Parameters (name, type, default, range):
 *   transform        enum   rigid | similarity | affine
 *   metric           enum   ncc | mse | mi
 *   bins             int    32     4..256     mi
 *   parzen           bool   true   mi: B-spline window on the moving intensity
 *   interp           enum   linear | nearest | cubic
 *   levels           int    3      1..8
 *   iterations       int    400    1..100000  simplex iterations per run, at most
 *   step             double 2      0.05..50   voxels of the level: initial simplex size
 *   tolerance        double 0.01   1e-6..10   voxels of the level: simplex size that ends a run
 *   init             enum   mass | geometry | moments
 *   rotation-starts  int    1      1..36      starts per full turn about each axis
 *   restarts         int    2      0..10      fresh simplices per finer level, at most
 *   optimizer        enum   simplex | gradient (BFGS, central differences)
 *   precision        enum   u16 | single: storage of the sampled images (affine_cost.h) */
#define NW_AFFINE_N_PARAMS 14
extern const NwParamSpec nw_affine_param_specs[NW_AFFINE_N_PARAMS];
extern const char *const nw_affine_plot_figures[];
/* Rows of the table under another name, for tables that offer them too ("affine-demons":
 * affine_demons_method.h, as "affine-transform", ...); def: the transform's default. */
extern const char *const nw_affine_transform_choices[];
extern const char *const nw_affine_metric_choices[];
extern const char *const nw_affine_init_choices[];
#define NW_AFFINE_ROW_TRANSFORM(name, def)                                                       \
  {name, NW_PARAM_ENUM, def, 0, 2, "",                                                           \
   "Degrees of freedom: rigid (rotation, translation), similarity (+ one scale), affine "        \
   "(+ scales and shears)",                                                                      \
   FALSE, nw_affine_transform_choices}
#define NW_AFFINE_ROW_METRIC(name)                                                               \
  {name, NW_PARAM_ENUM, 0, 0, 2, "",                                                             \
   "Similarity: ncc (same contrast, any linear intensity change), mse (same intensities), "      \
   "mi (mutual information: different contrasts, e.g. T1 against PD)",                          \
   FALSE, nw_affine_metric_choices}
#define NW_AFFINE_ROW_LEVELS(name)                                                               \
  {name, NW_PARAM_INT, 3, 1, 8, "",                                                              \
   "Pyramid levels (each halves the image size); more levels catch larger misalignments", FALSE, \
   NULL}
#define NW_AFFINE_ROW_ITERATIONS(name)                                                           \
  {name, NW_PARAM_INT, 400, 1, 100000, "",                                                       \
   "Most simplex iterations per level (and per start at the coarsest level)", FALSE, NULL}
#define NW_AFFINE_ROW_INIT(name)                                                                 \
  {name, NW_PARAM_ENUM, 0, 0, 2, "",                                                             \
   "Start: mass (centres of mass together), geometry (image centres together) or moments "       \
   "(centres of mass and principal axes together)",                                              \
   FALSE, nw_affine_init_choices}

typedef struct NwAffineJob NwAffineJob;

/* Inputs: fixed and moving, scalar and finite, both 3D or both one slice (2D: slices in the
 * world x-y plane); masks on their image's grid. */
NwAffineJob *nw_affine_job_new(const NwAffineCostBackend *be, const NwMethodInputs *in,
                               const NwParams *p, GError **error);
/* The job over levels the caller made (the distributed metric, dmi_cost.h), always at
 * precision single (the metric keeps float blocks): the levels'
 * headers (grids only: their data may be NULL; the back end holds the voxels, and its
 * level_stats gives the statistics), fixed and moving, n_levels each, 0 = coarsest, taken
 * by the job (freed as nw_pyramid_free frees); coarse: the coarsest level's whole fixed image,
 * moving image and their masks (masks may be NULL), for the starts, borrowed for the call.
 * backend_data: the cost's (NwAffineCostSpec), taken by it. Inputs are not checked here, and
 * the result has no "warped" image. */
typedef struct {
  int dim, n_levels;
  NwVolume **fixed, **moving;
  const NwVolume *coarse[4]; /* fixed, moving, fixed mask, moving mask */
} NwAffineLevels;
NwAffineJob *nw_affine_job_new_levels(const NwAffineCostBackend *be, const void *backend_data,
                                      const NwParams *p, const NwAffineLevels *levels,
                                      const double *initial_transform, GError **error);
gboolean nw_affine_job_step(NwAffineJob *job, NwIterationReport *report, GError **error);
gboolean nw_affine_job_frame(NwAffineJob *job, NwFrame *frame, GError **error);
NwMethodResult *nw_affine_job_result(NwAffineJob *job, GError **error);
/* The best transform so far. */
const NwTransform *nw_affine_job_transform(const NwAffineJob *job);
void nw_affine_job_free(NwAffineJob *job);

/* The NwMethodOps slots of "affine" that do not depend on the back end (the job above, state
 * an NwAffineJob); each back end's table adds its device, description and create
 * (nw_affine_job_new with its cost). */
gboolean nw_affine_op_step(void *state, NwIterationReport *report, GError **error);
gboolean nw_affine_op_publish_frame(void *state, NwFrame *frame, GError **error);
NwMethodResult *nw_affine_op_result(void *state, GError **error);
void nw_affine_op_destroy(void *state);
/* In the order of NwMethodOps (C++ designated initialisers keep it): a back end's table is
 * { .name = "affine", .device, .description, NW_AFFINE_OPS_INPUTS, .create, NW_AFFINE_OPS_JOB } */
#define NW_AFFINE_OPS_INPUTS                                                                     \
  .params = nw_affine_param_specs, .n_params = NW_AFFINE_N_PARAMS, .needs_moving = TRUE,        \
  .plot_figures = nw_affine_plot_figures, .any_grid = TRUE
#define NW_AFFINE_OPS_JOB                                                                        \
  .step = nw_affine_op_step, .publish_frame = nw_affine_op_publish_frame,                      \
  .result = nw_affine_op_result, .destroy = nw_affine_op_destroy

extern const NwMethodOps nw_affine_cpu_ops;
/* The same job over the CUDA cost (cuda/affine_cost_cuda.cu); only in builds with CUDA. */
extern const NwMethodOps nw_affine_cuda_ops;

G_END_DECLS

#endif
