/* affine_demons_method.h — "affine-demons": an affine stage, then demons, as one method (one
 * job, one worker thread, one live view): what `neurowarp-cli affine` followed by
 * `neurowarp-cli demons --initial-transform PREFIX_affine.txt` does.
 *
 *   1. "affine" (affine_method.h) on the pair as given: fixed and moving may lie on different
 *      grids; its frames show the moving image sliding into place on the fixed grid.
 *   2. When it finishes, the moving image (linear) and moving labels (nearest) are resampled
 *      onto the fixed grid through the transform T it found (regrid.h), on the worker.
 *   3. "demons" (demons_method.h) between fixed and that image, live as usual.
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
extern const NwMethodOps nw_affine_demons_cpu_ops;

G_END_DECLS

#endif
