/* level_set_result.h — what the "nlm-surface" method's result (nlm_surface_method.h: "sdf",
 * the denoised signed distance, and "input_sdf") becomes for people and files, the same in
 * `neurowarp-cli denoise-surface` and the window's Save results: the denoised zero level set
 * as a mesh whose per-vertex scalar is the vertex's signed displacement from the input
 * surface (mm, positive outward), figures of it, and the files PREFIX_sdf.nii.gz (float32 mm,
 * negative inside) and PREFIX_surface.EXT. CPU; any thread (the window measures on the job's
 * worker, the CLI on its main thread). */
#ifndef NW_LEVEL_SET_RESULT_H
#define NW_LEVEL_SET_RESULT_H

#include "atomic_file.h"
#include "method.h"
#include "surface.h"

G_BEGIN_DECLS

typedef struct {
  NwSurface *surface; /* the denoised zero level set, displacement as scalars; owned */
  int in_inside, in_outside, out_inside, out_outside; /* components, input and result */
  double disp_mean, disp_mean_abs, disp_max_abs;      /* mm over vertices */
} NwLevelSetMeasure;

/* The mesh and the figures of res. who starts the messages ("denoise-surface", "run 1"):
 * a result without the two level sets, a denoised level set that crosses zero nowhere. */
gboolean nw_level_set_measure(NwLevelSetMeasure *m, const NwMethodResult *res, const char *who,
                              GError **error);
void nw_level_set_measure_clear(NwLevelSetMeasure *m);

/* PREFIX_sdf.nii.gz and PREFIX_surface.MESH_EXT (gii, ply or vtk: the format follows the
 * name) into the output set o, which names them when the caller commits it. */
gboolean nw_level_set_write(NwOutputs *o, const char *prefix, const char *mesh_ext,
                            const NwMethodResult *res, const NwLevelSetMeasure *m, GError **error);

G_END_DECLS

#endif
