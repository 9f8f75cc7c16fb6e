/* nw_run_level_set.h — a run of a method whose input is a level set
 * (NwMethodOps.level_set_input: "nlm-surface") in the window: the input made a level set of a
 * volume the scene shows, as neurowarp-cli denoise-surface makes one of a file
 * (core/surface_input.h); the input's own surface, kept for comparison; the result measured
 * (core/level_set_result.h) for the run's summary and Save results.
 *
 * The volume: the active layer when it is a label layer, else the compared image A (the
 * fixed image: the first image opened), else the first label layer. What it is taken for:
 *   - a label N chosen (label >= 0): a label volume whose inside is label N (refused, naming
 *     the labels there, when it has none);
 *   - NW_RUN_LABEL_AUTO: a label layer (the loader's, nw_loader.h) gives its label with the
 *     most voxels (nw_surface_input_largest_label: the largest structure); any other volume
 *     is a signed distance (negative and positive values, mm) or a binary mask (0 and one
 *     other value) by its values; anything else, e.g. a grey-level MRI, is refused with what
 *     to open instead.
 * The check runs on the main thread at the start (one pass over the voxels). The conversion
 * (fast sweeping of a mask: seconds for a head at 1 mm) and the mesh of the input's zero
 * level set run on the job's worker before the method starts (a prepare hook, job.h), the
 * measure of the result after it ends (a finish hook): the window never waits for them. */
#ifndef NW_RUN_LEVEL_SET_H
#define NW_RUN_LEVEL_SET_H

#include "job.h"
#include "level_set_result.h"
#include "nw_scene.h"

G_BEGIN_DECLS

#define NW_RUN_LABEL_AUTO (-1)

typedef struct NwRunLevelSet NwRunLevelSet;

/* Main thread. inputs[4] as nw_run_inputs_take (nw_run_inputs.h): the fixed slot gets a copy
 * of the volume, the others are cleared; source_out: its layer. NULL with a message naming
 * the run and the layer when there is no volume, or it cannot be a level set. */
NwRunLevelSet *nw_run_level_set_new(NwScene *scene, const char *run_label, int label,
                                    NwVolume *inputs[4], NwLayer **source_out, GError **error);
/* Before nw_job_start: the hooks. ready runs on the WORKER once the input's mesh is made
 * (nw_run_level_set_take_input_mesh may then be called on the main thread). ls must outlive
 * the job. */
void nw_run_level_set_attach(NwRunLevelSet *ls, NwJob *job, void (*ready)(gpointer data),
                             gpointer data);
/* The input's zero level set (taken; NULL until ready, or after it was taken). */
NwSurface *nw_run_level_set_take_input_mesh(NwRunLevelSet *ls);
/* What the volume was taken for: "sphere.nii.gz as a mask", "aseg.nii.gz, label 17 (the
 * largest)", "phi.nii.gz as a signed distance". */
const char *nw_run_level_set_describe(const NwRunLevelSet *ls);
/* The ended job's measure (NULL before the job has ended with a result): read only after
 * the job was joined. */
const NwLevelSetMeasure *nw_run_level_set_measure(const NwRunLevelSet *ls);
void nw_run_level_set_free(NwRunLevelSet *ls);

G_END_DECLS

#endif
