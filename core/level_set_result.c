/* level_set_result.c — nlm-surface's result measured and written (level_set_result.h). Any
 * thread. */
#include "level_set_result.h"

#include <math.h>

#include "io_mesh.h"
#include "io_nifti.h"
#include "level_set.h"
#include "nw_error.h"

void nw_level_set_measure_clear(NwLevelSetMeasure *m)
{
  g_clear_pointer(&m->surface, nw_surface_free);
}

gboolean nw_level_set_measure(NwLevelSetMeasure *m, const NwMethodResult *res, const char *who,
                              GError **error)
{
  const NwVolume *sdf = nw_method_result_get(res, "sdf");
  const NwVolume *input = nw_method_result_get(res, "input_sdf");
  if (sdf == NULL || input == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "%s: the job returned no level set", who);
    return FALSE;
  }
  /* the input's signed distance sampled at each vertex: its displacement along the normal */
  if ((m->surface = nw_level_set_mesh(sdf, input, error)) == NULL) {
    g_prefix_error(error, "%s: the denoised ", who);
    return FALSE;
  }
  double sum = 0.0, sum_abs = 0.0, most = 0.0;
  for (int v = 0; v < m->surface->n_vertices; v++) {
    double d = m->surface->scalars[v];
    sum += d, sum_abs += fabs(d), most = MAX(most, fabs(d));
  }
  m->disp_mean = sum / m->surface->n_vertices;
  m->disp_mean_abs = sum_abs / m->surface->n_vertices;
  m->disp_max_abs = most;
  nw_level_set_components(input, &m->in_inside, &m->in_outside, NULL, NULL);
  nw_level_set_components(sdf, &m->out_inside, &m->out_outside, NULL, NULL);
  return TRUE;
}

gboolean nw_level_set_write(NwOutputs *o, const char *prefix, const char *mesh_ext,
                            const NwMethodResult *res, const NwLevelSetMeasure *m, GError **error)
{
  g_autofree char *sdf = g_strdup_printf("%s_sdf.nii.gz", prefix);
  g_autofree char *mesh = g_strdup_printf("%s_surface.%s", prefix, mesh_ext);
  return nw_nifti_write_to(o, sdf, nw_method_result_get(res, "sdf"), NW_DT_FLOAT32, FALSE, error) &&
         nw_mesh_write_to(o, mesh, m->surface, NW_MESH_AUTO, error);
}
