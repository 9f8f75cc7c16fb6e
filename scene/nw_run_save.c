/* nw_run_save.c — a run's results written as the CLI writes them (nw_run_save_results,
 * nw_run.h). Main thread. */
#include <string.h>

#include "io_mesh.h"
#include "level_set_result.h"
#include "marching_cubes.h"
#include "nw_error.h"
#include "nw_run_private.h"
#include "result_io.h"

/* The paths out named, appended to written (may be NULL). */
static void add_written(NwOutputs *out, GPtrArray *written)
{
  for (const char *const *p = nw_outputs_paths(out); written != NULL && *p != NULL; p++)
    g_ptr_array_add(written, g_strdup(*p));
}

/* A level-set run's files as neurowarp-cli denoise-surface writes them (level_set_result.h):
 * PREFIX_sdf.nii.gz and PREFIX_surface.gii with each vertex's displacement from the input. */
static gboolean save_level_set(NwRun *r, NwOutputs *out, const char *prefix, GPtrArray *written,
                               GError **error)
{
  const NwLevelSetMeasure *m = nw_run_level_set_measure(r->level_set);
  if (m == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "save results %s: run %s has no surface", prefix,
                r->label);
    return FALSE;
  }
  if (!nw_level_set_write(out, prefix, "gii", r->result, m, error) ||
      !nw_outputs_commit(out, error))
    return FALSE;
  add_written(out, written);
  return TRUE;
}

gboolean nw_run_save_results(NwRun *r, const char *prefix, GPtrArray *written, GError **error)
{
  if (r->result == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "save results %s: run %s has no results (it has not ended, or it failed)", prefix,
                r->label);
    return FALSE;
  }
  /* One output set for the run (atomic_file.h): the volumes and the surface are named
   * together or not at all. Replacing existing files was agreed by the caller (the run
   * panel asks first). */
  g_autoptr(NwOutputs) out = nw_outputs_new(TRUE);
  if (r->level_set != NULL)
    return save_level_set(r, out, prefix, written, error);
  static const char *const required[] = {"warped", NULL};
  const char *method = r->ops != NULL ? r->ops->name : "method";
  if (!nw_result_write(out, r->result, method, prefix, required, NW_FIELD_ITK, error) ||
      !nw_result_write_transform(out, r->result, prefix, r->inputs[NW_RUN_FIXED],
                                 r->inputs[NW_RUN_MOVING], error))
    return FALSE;
  /* the surface layer holds the result's iso-surface once its task is done (show_result);
   * until then, or when it could not be made, it is made here. 2D results have none. */
  const NwVolume *warped = nw_method_result_get(r->result, "warped");
  g_autoptr(NwSurface) made = NULL;
  const NwSurface *s =
      r->surface != NULL && r->surface_is_result ? nw_layer_get_surface(r->surface) : NULL;
  if (nw_run_wants_surface(warped)) {
    if (s == NULL && (s = made = nw_marching_cubes(warped, r->iso, error)) == NULL)
      return FALSE;
    g_autofree char *path = g_strdup_printf("%s_surface.gii", prefix);
    if (!nw_mesh_write_to(out, path, s, NW_MESH_AUTO, error))
      return FALSE;
  }
  if (!nw_outputs_commit(out, error))
    return FALSE;
  add_written(out, written);
  return TRUE;
}
