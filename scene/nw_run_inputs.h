/* nw_run_inputs.h — the pair a run registers (nw_run.h), taken from the scene, and the
 * moving image's way onto the fixed grid when the two lie on different grids (size, voxel
 * size, orientation, origin).
 *
 * Inputs: fixed = the compared image A, moving = B; moving labels: the first label layer
 * whose name says "moving", on the moving grid; fixed labels: the first other label layer on
 * the fixed grid. Copies: the job borrows them while the layers may change.
 *
 * A method that takes any grid (NwMethodOps.any_grid: "affine", "affine-demons") gets the
 * pair as it is. For the others the job resamples the moving image (linear) and labels
 * (nearest) onto the fixed grid through the identity world map (scanner coordinates) on its
 * worker before the method starts, and makes the results map fixed -> ORIGINAL moving after
 * it ends (regrid.h; what `neurowarp-cli demons` does): the window never waits for it.
 * Main thread, except the job hooks (the job's worker). */
#ifndef NW_RUN_INPUTS_H
#define NW_RUN_INPUTS_H

#include "job.h"
#include "nw_scene.h"

G_BEGIN_DECLS

/* inputs[4]: fixed, moving, fixed labels, moving labels (NwRunInput order; the labels may
 * be NULL), freed first where set. fixed_out: the fixed layer. FALSE with a message naming
 * the run when the scene has no pair, or a one-slice image is paired with a volume. */
gboolean nw_run_inputs_take(NwScene *scene, const char *label, NwVolume *inputs[4],
                            NwLayer **fixed_out, GError **error);

/* The worker's regridding of one job's inputs, or NULL when the method needs none (same
 * grid, or a method that takes any grid). The job's inputs are the run's copies, which
 * outlive the job. */
typedef struct NwRunRegrid NwRunRegrid;
NwRunRegrid *nw_run_regrid_new(const NwMethodOps *ops, NwVolume *const inputs[4]);
/* Before nw_job_start. The job's result then also has "before" (mse, ncc, mean Dice of the
 * pair as given, on the fixed grid). rg must outlive the job. */
void nw_run_regrid_attach(NwRunRegrid *rg, NwJob *job);
void nw_run_regrid_free(NwRunRegrid *rg);

G_END_DECLS

#endif
