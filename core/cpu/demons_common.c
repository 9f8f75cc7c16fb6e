/* demons_common.c — the parts of the "demons" method that do not depend on the back end:
 * input checks, the per-level stopping rule, the iteration report and the live-parameter
 * check (demons_method.h). Called by core/cpu/demons_cpu.c and cuda/demons_cuda.cu on the
 * job's worker thread. */
#include <float.h>
#include <math.h>

#include "demons_method.h"
#include "histogram_match.h"
#include "nw_error.h"
#include "pyramid.h"

/* Iterations a level runs at least before the tolerance may end it. */
#define MIN_LEVEL_ITERATIONS 5

gboolean nw_demons_check_inputs(const NwMethodInputs *in, GError **error)
{
  if (in->fixed == NULL || in->moving == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "demons: needs a fixed and a moving image");
    return FALSE;
  }
  if (in->fixed->nc != 1 || in->moving->nc != 1) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "demons: fixed and moving must be scalar images (got %d and %d components)",
                in->fixed->nc, in->moving->nc);
    return FALSE;
  }
  return nw_volume_check_same_grid(in->fixed, "fixed", in->moving, "moving", error) &&
         nw_volume_check_finite(in->fixed, "fixed", error) &&
         nw_volume_check_finite(in->moving, "moving", error) &&
         (in->fixed_labels == NULL ||
          nw_volume_check_same_grid(in->fixed, "fixed", in->fixed_labels, "fixed labels",
                                    error)) &&
         (in->moving_labels == NULL ||
          nw_volume_check_same_grid(in->fixed, "fixed", in->moving_labels, "moving labels",
                                    error));
}

void nw_demons_progress_advance(NwDemonsProgress *pr, const NwParams *p)
{
  pr->iter_in_level++;
  pr->iteration++;
  const double rel = fabs(pr->prev_energy - pr->energy) / fmax(fabs(pr->prev_energy), DBL_MIN);
  if (pr->iter_in_level >= nw_params_get_int(p, "iterations") ||
      (pr->iter_in_level >= MIN_LEVEL_ITERATIONS && rel < nw_params_get(p, "tolerance")))
    pr->level_done = TRUE;
  pr->finished = pr->level_done && pr->level == pr->n_levels - 1;
}

void nw_demons_fill_report(const NwDemonsProgress *pr, const NwParams *p, NwIterationReport *r)
{
  const double iters = nw_params_get_int(p, "iterations");
  r->iteration = pr->iteration;
  r->level = pr->level;
  r->n_levels = pr->n_levels;
  r->finished = pr->finished;
  r->progress = pr->finished ? 1.0 : (pr->level + pr->iter_in_level / iters) / pr->n_levels;
  r->n_figures = 0;
  nw_report_add(r, "energy", pr->energy);
  nw_report_add(r, "mse", pr->mse);
  nw_report_add(r, "ncc", pr->ncc);
  nw_report_add(r, "max_u", pr->max_u);
  nw_report_add(r, "min_jac", pr->min_jac);
  nw_report_add(r, "folds", (double)pr->folds);
  nw_report_add(r, "squarings", pr->squarings);
}

gboolean nw_demons_check_live_change(const NwParams *current, const NwParams *next,
                                     GError **error)
{
  const char *fixed_name = nw_params_first_non_live_change(current, next);
  if (fixed_name == NULL)
    return TRUE;
  g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
              "demons: parameter '%s' cannot change while the job runs", fixed_name);
  return FALSE;
}

gboolean nw_demons_pyramids(const NwMethodInputs *in, const NwParams *p, NwVolume ***fixed,
                            NwVolume ***moving, int *n_levels, GError **error)
{
  g_autoptr(NwVolume) matched = NULL;
  if (nw_params_get(p, "histogram-match") != 0.0 &&
      (matched = nw_histogram_match(in->moving, in->fixed, 1024, error)) == NULL)
    return FALSE;
  const int want = nw_params_get_int(p, "levels");
  int n_moving = 0;
  *fixed = nw_pyramid_new(in->fixed, want, n_levels, error);
  *moving = *fixed ? nw_pyramid_new(matched ? matched : in->moving, want, &n_moving, error)
                   : NULL;
  return *moving != NULL;
}
