/* affine_demons_method.h — "affine-demons": an affine stage, then demons, as one method (one
 * job, one worker thread, one live view): what `neurowarp-cli affine` followed by
 * `neurowarp-cli demons --initial-transform PREFIX_affine.txt` does.
 *
 *   1. "affine" (affine_method.h) on the pair as given: fixed and moving may lie on different
 *      grids; its frames show the moving image sliding into place on the fixed grid.
 *   2. When it finishes, the moving image (linear) and moving labels (nearest) are resampled
 *      onto the fixed grid through the transform T it found (regrid.h), on the worker.
 *   3. "demons" (demons_method.h) between fixed and that image, live as usual.
 * Masks (NwMethodInputs fixed_mask, moving_mask, each on its image's grid) go to both stages:
 * the affine stage compares inside them, and demons gets the fixed mask as given and the
 * moving mask resampled onto the fixed grid through T (regrid.h nw_regrid_mask).
 * The result is the demons result made to map fixed -> ORIGINAL moving (regrid.h: forward
 * composed with T, inverse on the moving grid, warped and labels sampled from the originals),
 * plus the affine stage's numbers "transform" (4x4 fixed world -> moving world, RAS mm),
 * "centre", "parameters", "cost" and "evaluations" (as "affine" has them), and "before"
 * (mse, ncc, mean Dice of the pair as given, in scanner coordinates). Stopped during the
 * affine stage, the result is the affine one.
 *
 * Parameters: every demons parameter under its own name, and the affine stage's
 *   affine-transform   enum  affine | rigid | similarity
 *   affine-metric      enum  ncc | mse | mi
 *   affine-levels      int   3   1..8
 *   affine-iterations  int   400 1..100000
 *   affine-init        enum  mass | geometry | moments
 * (the other affine parameters keep their defaults). Live: the demons ones that are live.
 * Reports: the affine stage's, then the demons stage's, with iterations counted on and the
 * levels of both stages in one count (the affine stage's first). All on the job's worker
 * thread; the stages' own back ends decide the device (the CPU table runs both on the CPU). */
#ifndef NW_AFFINE_DEMONS_METHOD_H
#define NW_AFFINE_DEMONS_METHOD_H

#include "method.h"

G_BEGIN_DECLS

#define NW_AFFINE_DEMONS_N_PARAMS 16
extern const NwParamSpec nw_affine_demons_param_specs[NW_AFFINE_DEMONS_N_PARAMS];
extern const char *const nw_affine_demons_plot_figures[];

/* The composite over two stage tables (their back ends decide the device), and its slots:
 * what a back end's table (create over its own stages) shares, in NwMethodOps' order:
 * { .name, .device, .description, NW_AFFINE_DEMONS_OPS_INPUTS, .create,
 *   NW_AFFINE_DEMONS_OPS_JOB } */
void *nw_affine_demons_new(const NwMethodOps *affine, const NwMethodOps *demons,
                           const NwMethodInputs *in, const NwParams *p, GError **error);
gboolean nw_affine_demons_op_step(void *state, NwIterationReport *r, GError **error);
gboolean nw_affine_demons_op_set_params(void *state, const NwParams *p, GError **error);
gboolean nw_affine_demons_op_publish_frame(void *state, NwFrame *frame, GError **error);
NwMethodResult *nw_affine_demons_op_result(void *state, GError **error);
void nw_affine_demons_op_destroy(void *state);
#define NW_AFFINE_DEMONS_OPS_INPUTS                                                              \
  .params = nw_affine_demons_param_specs, .n_params = NW_AFFINE_DEMONS_N_PARAMS,               \
  .needs_moving = TRUE, .plot_figures = nw_affine_demons_plot_figures, .any_grid = TRUE
#define NW_AFFINE_DEMONS_OPS_JOB                                                                 \
  .step = nw_affine_demons_op_step, .set_params = nw_affine_demons_op_set_params,              \
  .publish_frame = nw_affine_demons_op_publish_frame, .result = nw_affine_demons_op_result,    \
  .destroy = nw_affine_demons_op_destroy

extern const NwMethodOps nw_affine_demons_cpu_ops;
/* The same over the CUDA stages (cuda/affine_demons_cuda.cu); only in builds with CUDA. */
extern const NwMethodOps nw_affine_demons_cuda_ops;

G_END_DECLS

#endif
