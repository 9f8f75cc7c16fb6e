/* deformable_common.c — see deformable_common.h: input checks, pyramids, carried fields, the
 * stopping rule and live-parameter checks of the dense deformable methods (demons, fluid).
 * Host code, on the job's worker thread. */
#include "deformable_common.h"

#include <float.h>
#include <math.h>

#include "histogram_match.h"
#include "nw_error.h"
#include "pyramid.h"
#include "resample.h"

/* A mask (may be NULL) on the fixed grid, scalar, finite, with some voxel inside. */
static gboolean check_mask(const NwVolume *fixed, const NwVolume *mask, const char *what,
                           const char *method, GError **error)
{
  if (mask == NULL)
    return TRUE;
  if (!nw_volume_check_same_grid(fixed, "fixed", mask, what, error) ||
      !nw_volume_check_finite(mask, what, error))
    return FALSE;
  if (mask->nc != 1) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "%s: the %s must be a scalar image (got %d components)", method, what, mask->nc);
    return FALSE;
  }
  for (size_t e = 0; e < nw_volume_n_voxels(mask); e++)
    if (mask->data[e] >= 0.5f)
      return TRUE;
  g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
              "%s: the %s is empty (no voxel >= 0.5): nothing to register", method, what);
  return FALSE;
}

gboolean nw_deformable_check_inputs(const NwMethodInputs *in, const char *method, GError **error)
{
  if (in->fixed == NULL || in->moving == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "%s: needs a fixed and a moving image",
                method);
    return FALSE;
  }
  if (in->fixed->nc != 1 || in->moving->nc != 1) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "%s: fixed and moving must be scalar images (got %d and %d components)", method,
                in->fixed->nc, in->moving->nc);
    return FALSE;
  }
  return nw_volume_check_same_grid(in->fixed, "fixed", in->moving, "moving", error) &&
         nw_volume_check_finite(in->fixed, "fixed", error) &&
         nw_volume_check_finite(in->moving, "moving", error) &&
         (in->fixed_labels == NULL ||
          nw_volume_check_same_grid(in->fixed, "fixed", in->fixed_labels, "fixed labels", error)) &&
         (in->moving_labels == NULL ||
          nw_volume_check_same_grid(in->fixed, "fixed", in->moving_labels, "moving labels",
                                    error)) &&
         check_mask(in->fixed, in->fixed_mask, "fixed mask", method, error) &&
         check_mask(in->fixed, in->moving_mask, "moving mask", method, error);
}

gboolean nw_pyramid_set_build(NwPyramidSet *s, const NwMethodInputs *in, int levels,
                              gboolean histogram_match, GError **error)
{
  g_autoptr(NwVolume) matched = NULL;
  if (histogram_match && (matched = nw_histogram_match(in->moving, in->fixed, 1024, error)) == NULL)
    return FALSE;
  int n = 0;
  s->fixed = nw_pyramid_new(in->fixed, levels, &s->n_levels, error);
  s->moving = s->fixed ? nw_pyramid_new(matched ? matched : in->moving, levels, &n, error) : NULL;
  if (s->moving == NULL)
    return FALSE;
  if (in->fixed_mask != NULL &&
      (s->fixed_mask = nw_pyramid_new(in->fixed_mask, levels, &n, error)) == NULL)
    return FALSE;
  return in->moving_mask == NULL ||
         (s->moving_mask = nw_pyramid_new(in->moving_mask, levels, &n, error)) != NULL;
}

void nw_pyramid_set_clear(NwPyramidSet *s)
{
  nw_pyramid_free(s->fixed, s->n_levels);
  nw_pyramid_free(s->moving, s->n_levels);
  nw_pyramid_free(s->fixed_mask, s->n_levels);
  nw_pyramid_free(s->moving_mask, s->n_levels);
  *s = (NwPyramidSet){0};
}

NwVolume *nw_deformable_carry_field(const NwVolume *prev, const NwVolume *F, GError **error)
{
  NwVolume *v = prev == NULL ? nw_volume_new_like(F, 3, error)
                             : nw_resize(prev, F->nx, F->ny, F->nz, TRUE, error);
  if (v != NULL)
    nw_volume_set_affine(v, F->vox_to_ras);
  return v;
}

gboolean nw_deformable_level_done(int iter_in_level, int iterations, double prev_energy,
                                  double energy, double tolerance)
{
  const double rel = fabs(prev_energy - energy) / fmax(fabs(prev_energy), DBL_MIN);
  return iter_in_level >= iterations ||
         (iter_in_level >= NW_DEFORMABLE_MIN_LEVEL_ITERATIONS && rel < tolerance);
}

gboolean nw_deformable_check_live_change(const NwParams *current, const NwParams *next,
                                         const char *method, GError **error)
{
  const char *fixed_name = nw_params_first_non_live_change(current, next);
  if (fixed_name == NULL)
    return TRUE;
  g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
              "%s: parameter '%s' cannot change while the job runs", method, fixed_name);
  return FALSE;
}
