/* nw_run_summary.c — the end of a run in words (see nw_run_summary.h). Main thread. */
#include "nw_run_summary.h"

#include <math.h>
#include <string.h>

#include "field.h"

static const char *ending(NwJobState s)
{
  switch (s) {
  case NW_JOB_FINISHED:
    return "Finished";
  case NW_JOB_CANCELLED:
    return "Stopped";
  case NW_JOB_FAILED:
    return "Failed";
  default:
    return NULL;
  }
}

/* "Finished: 30 iterations (levels 10 + 10 + 10) in 4.2 s on the CPU" */
static void append_how(GString *s, NwRun *r)
{
  int counts[NW_RUN_MAX_LEVELS];
  const int n_levels = nw_run_get_level_iterations(r, counts);
  const NwMethodOps *ops = nw_run_get_ops(r);
  g_string_append_printf(s, "%s: %d iteration%s", ending(nw_run_get_state(r)),
                         nw_run_get_iteration(r), nw_run_get_iteration(r) == 1 ? "" : "s");
  if (n_levels > 1) {
    g_string_append(s, " (levels ");
    for (int l = 0; l < n_levels; l++)
      g_string_append_printf(s, "%s%d", l > 0 ? " + " : "", counts[l]);
    g_string_append(s, ")");
  }
  g_string_append_printf(s, " in %.1f s on the %s", nw_run_get_work_seconds(r),
                         ops != NULL && ops->device == NW_DEVICE_CUDA ? "GPU" : "CPU");
}

/* The report's value of name, or NAN. */
static double figure(const NwIterationReport *rep, const char *name)
{
  for (int f = 0; rep != NULL && f < rep->n_figures; f++)
    if (strcmp(rep->figure_names[f], name) == 0)
      return rep->figures[f];
  return NAN;
}

/* "NCC 0.972 → 0.998 · MSE 95.1 → 7.42 · energy 7.42 · smallest det J 0.37 · no folds" */
static void append_figures(GString *s, NwRun *r)
{
  const NwIterationReport *rep = nw_run_get_last_report(r);
  if (rep == NULL)
    return;
  double before[2]; /* mse, ncc */
  nw_run_get_before(r, &before[0], &before[1]);
  static const struct {
    const char *name, *label;
    int before; /* index into before[], or -1 */
  } shown[] = {{"ncc", "NCC", 1},
               {"mse", "MSE", 0},
               {"energy", "energy", -1},
               {"min_jac", "smallest det J", -1},
               {"rms_change", "RMS change", -1},
               {"mean", "mean", -1}};
  const char *sep = "";
  for (gsize i = 0; i < G_N_ELEMENTS(shown); i++) {
    const double v = figure(rep, shown[i].name);
    if (isnan(v))
      continue;
    g_string_append_printf(s, "%s%s ", sep, shown[i].label);
    if (shown[i].before >= 0 && !isnan(before[shown[i].before]))
      g_string_append_printf(s, "%.4g → ", before[shown[i].before]);
    g_string_append_printf(s, "%.4g", v);
    sep = " · ";
  }
  const double folds = figure(rep, "folds");
  if (folds == 0)
    g_string_append_printf(s, "%sno folds", sep);
  else if (!isnan(folds))
    g_string_append_printf(s, "%s%.0f folded voxel%s", sep, folds, folds == 1 ? "" : "s");
}

/* "Dice 0.851 (before 0.712), mean over 95 labels" */
static void append_dice(GString *s, NwRun *r)
{
  const NwVolume *fl = nw_run_get_input(r, NW_RUN_FIXED_LABELS);
  const NwVolume *ml = nw_run_get_input(r, NW_RUN_MOVING_LABELS);
  const NwMethodResult *res = nw_run_get_result(r);
  const NwVolume *warped = res != NULL ? nw_method_result_get(res, "labels") : NULL;
  if (fl == NULL || ml == NULL || warped == NULL)
    return;
  double after = 0.0, before = NAN;
  g_autoptr(GArray) d = nw_labels_dice(fl, warped, &after);
  /* moving labels on another grid: Dice before was measured on the fixed grid by the
   * worker (nw_run_inputs.h, affine_demons_method.h) */
  const double *b = nw_method_result_get_values(res, "before", NULL);
  if (b != NULL)
    before = b[2];
  else if (nw_volume_same_grid(fl, ml))
    g_array_unref(nw_labels_dice(fl, ml, &before));
  g_string_append_printf(s, "\nDice %.3f (before %.3f), mean over %u labels", after, before,
                         d->len);
}

/* A level-set method's result, in the words of neurowarp-cli denoise-surface's report:
 * "Surface of sphere.nii.gz as a mask: 2452 vertices, displacement from the input mean
 * -0.012 mm (|d| 0.310 mm), largest 1.24 mm
 *  Components inside/outside: 5/2 before, 1/1 after" */
static void append_surface(GString *s, NwRun *r)
{
  const NwRunLevelSet *ls = nw_run_get_level_set(r);
  const NwLevelSetMeasure *m = ls != NULL ? nw_run_level_set_measure(ls) : NULL;
  if (m == NULL)
    return;
  g_string_append_printf(s,
                         "\nSurface of %s: %d vertices, displacement from the input mean %.3f mm "
                         "(|d| %.3f mm), largest %.2f mm\nComponents inside/outside: %d/%d "
                         "before, %d/%d after",
                         nw_run_level_set_describe(ls), m->surface->n_vertices, m->disp_mean,
                         m->disp_mean_abs, m->disp_max_abs, m->in_inside, m->in_outside,
                         m->out_inside, m->out_outside);
}

char *nw_run_summary_text(NwRun *r)
{
  if (ending(nw_run_get_state(r)) == NULL)
    return NULL;
  GString *s = g_string_new(NULL);
  append_how(s, r);
  if (nw_run_get_state(r) == NW_JOB_FAILED && nw_run_get_error(r) != NULL) {
    g_string_append_printf(s, "\n%s", nw_run_get_error(r)->message);
    return g_string_free(s, FALSE);
  }
  g_string_append_c(s, '\n');
  append_figures(s, r);
  append_dice(s, r);
  append_surface(s, r);
  return g_string_free(s, FALSE);
}
