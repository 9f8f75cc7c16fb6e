/* regrid.c — see regrid.h. */
#include "regrid.h"

#include <math.h>
#include <string.h>

#include "affine_resample.h"
#include "field.h"
#include "field_affine.h"
#include "mat3.h"
#include "nw_error.h"
#include "ras_affine.h"

gboolean nw_regrid_init(NwRegrid *g, const NwVolume *fixed, const NwVolume *moving,
                        const NwVolume *moving_labels, const double *t_ras,
                        NwVolume *moving_on_fixed, GError **error)
{
  *g = (NwRegrid){.moving = moving, .moving_labels = moving_labels};
  if (t_ras != NULL)
    memcpy(g->t_ras, t_ras, sizeof g->t_ras);
  else
    nw_affine_identity(g->t_ras);
  g->dim = fixed->nz == 1 && moving->nz == 1 ? 2 : 3;
  if (moving_on_fixed != NULL && nw_volume_same_grid(moving_on_fixed, fixed) &&
      moving_on_fixed->nc == moving->nc)
    g->moving_on_fixed = moving_on_fixed;
  else {
    nw_volume_free(moving_on_fixed);
    g->moving_on_fixed =
        nw_affine_resample(moving, fixed, g->t_ras, g->dim, NW_SAMPLER_LINEAR, 0.0f, error);
  }
  if (g->moving_on_fixed != NULL && moving_labels != NULL)
    g->labels_on_fixed = nw_affine_resample(moving_labels, fixed, g->t_ras, g->dim,
                                            NW_SAMPLER_NEAREST, 0.0f, error);
  if (g->moving_on_fixed == NULL || (moving_labels != NULL && g->labels_on_fixed == NULL)) {
    nw_regrid_clear(g);
    return FALSE;
  }
  return TRUE;
}

void nw_regrid_clear(NwRegrid *g)
{
  g_clear_pointer(&g->moving_on_fixed, nw_volume_free);
  g_clear_pointer(&g->labels_on_fixed, nw_volume_free);
}

NwVolume *nw_regrid_mask(const NwRegrid *g, const NwVolume *fixed, const NwVolume *moving_mask,
                         GError **error)
{
  return nw_affine_resample(moving_mask, fixed, g->t_ras, g->dim, NW_SAMPLER_LINEAR, 0.0f, error);
}

/* det of T's linear part (2D: of its x-y block): the volume change T adds to the field's. */
static double transform_det(const NwRegrid *g)
{
  const double *t = g->t_ras;
  const double a3[9] = {t[0], t[1], t[2], t[4], t[5], t[6], t[8], t[9], t[10]};
  return g->dim == 2 ? t[0] * t[5] - t[1] * t[4] : nw_mat3_det(a3);
}

gboolean nw_regrid_compose_result(const NwRegrid *g, NwMethodResult *res, GError **error)
{
  const NwVolume *u = nw_method_result_get(res, "forward");
  const NwVolume *w = nw_method_result_get(res, "inverse");
  NwVolume *jac = (NwVolume *)nw_method_result_get(res, "jacobian");
  if (u == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "regrid: the registration returned no forward field to compose");
    return FALSE;
  }
  /* What a caller took out of res (outputs nobody asked for) is not composed: the inverse on
   * the moving grid is the costly one. */
  if (nw_method_result_get(res, "warped") != NULL) {
    NwVolume *warped =
        nw_field_warp_affine(g->moving, u, g->t_ras, g->dim, NW_SAMPLER_LINEAR, 0.0f, error);
    if (warped == NULL)
      return FALSE;
    nw_method_result_replace(res, "warped", warped);
  }
  if (g->moving_labels != NULL) {
    NwVolume *labels = nw_field_warp_affine(g->moving_labels, u, g->t_ras, g->dim,
                                            NW_SAMPLER_NEAREST, 0.0f, error);
    if (labels == NULL)
      return FALSE;
    nw_method_result_replace(res, "labels", labels);
  }
  if (w != NULL) {
    NwVolume *inverse = nw_field_inverse_affine_on(w, g->moving, g->t_ras, g->dim, error);
    if (inverse == NULL)
      return FALSE;
    nw_method_result_replace(res, "inverse", inverse);
  }
  NwVolume *forward = nw_volume_copy(u);
  nw_field_compose_affine(forward, u, g->t_ras, g->dim);
  nw_method_result_replace(res, "forward", forward); /* u (borrowed above) is freed here */
  const double det = transform_det(g);
  for (size_t e = 0; jac != NULL && e < nw_volume_n_floats(jac); e++)
    jac->data[e] = (float)(det * jac->data[e]);
  return TRUE;
}

void nw_pair_figures(const NwVolume *fixed, const NwVolume *moving, const NwVolume *fixed_labels,
                     const NwVolume *moving_labels, double out[3])
{
  nw_image_similarity(fixed, moving, &out[0], &out[1]);
  out[2] = NAN;
  if (fixed_labels != NULL && moving_labels != NULL &&
      nw_volume_same_grid(fixed_labels, moving_labels))
    g_array_unref(nw_labels_dice(fixed_labels, moving_labels, &out[2]));
}

void nw_regrid_before(const NwVolume *fixed, const NwVolume *moving,
                      const NwVolume *fixed_labels, const NwVolume *moving_labels,
                      double out[3])
{
  out[0] = out[1] = out[2] = NAN;
  if (nw_volume_same_grid(fixed, moving)) {
    nw_pair_figures(fixed, moving, fixed_labels, moving_labels, out);
    return;
  }
  NwRegrid g;
  if (!nw_regrid_init(&g, fixed, moving, moving_labels, NULL, NULL, NULL))
    return;
  nw_pair_figures(fixed, g.moving_on_fixed, fixed_labels, g.labels_on_fixed, out);
  nw_regrid_clear(&g);
}
