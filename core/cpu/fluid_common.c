/* fluid_common.c — the parts of the "fluid" method (fluid_method.h) that a CUDA twin shares
 * with the CPU reference: the parameter table and the live plot's figures. Host code. */
#include "fluid_method.h"

#include <math.h>

static const char *const fluid_similarity_choices[] = {"ssd", "lcc", NULL};

const char *const nw_fluid_plot_figures[] = {"l2",      "skl",          "max_u", "min_jac",
                                             "max_jac", "mean_log_jac", NULL};

const NwParamSpec nw_fluid_param_specs[] = {
    {"levels", NW_PARAM_INT, 3, 1, 8, "",
     "Multi-resolution levels; each coarser level halves the size (more for large motion)", FALSE,
     NULL},
    {"iterations", NW_PARAM_INT, 100, 1, 100000, "", "Maximum iterations per level", FALSE, NULL},
    {"lambda", NW_PARAM_DOUBLE, 0.01, 0, 100, "",
     "Weight of the symmetric-KL Jacobian term (unbiased: log-volume changes cost the same both "
     "ways); larger keeps volumes closer to their size",
     TRUE, NULL},
    {"sigma", NW_PARAM_DOUBLE, 2.0, 0, 20, "voxel",
     "Gaussian smoothing of the force into the velocity (the fluid's viscosity)", TRUE, NULL},
    {"max-step", NW_PARAM_DOUBLE, 0.5, 0.01, 5, "voxel",
     "Largest displacement change per iteration; halved while a step would not lower the energy",
     TRUE, NULL},
    {"regrid-jacobian", NW_PARAM_DOUBLE, 0.5, 0, 1, "",
     "Regrid (resample the template, restart the displacement) when the smallest Jacobian "
     "determinant falls below this",
     TRUE, NULL},
    {"similarity", NW_PARAM_ENUM, NW_FLUID_SIM_SSD, 0, 1, "",
     "ssd for equal intensities, lcc (locally normalised images) for bias fields or contrast "
     "changes",
     FALSE, fluid_similarity_choices},
    {"lcc-sigma", NW_PARAM_DOUBLE, 2.0, 0.5, 20, "voxel",
     "Gaussian window of the local normalisation (lcc only)", FALSE, NULL},
    {"histogram-match", NW_PARAM_BOOL, 0, 0, 1, "",
     "Match the moving intensities to the fixed ones before registering", FALSE, NULL},
    {"tolerance", NW_PARAM_DOUBLE, 1e-5, 0, 1, "",
     "A level ends when the relative energy change per iteration falls below this", TRUE, NULL},
};
G_STATIC_ASSERT(G_N_ELEMENTS(nw_fluid_param_specs) == NW_FLUID_N_PARAMS);

void nw_fluid_figures(NwFluidFigures *f, const NwFluidSums *s, double lambda, double max_u)
{
  const double n = s->n;
  f->l2 = s->l2 / n;
  f->skl = s->n_folds > 0 ? INFINITY : s->skl / n;
  f->energy = f->l2 + lambda * f->skl;
  f->max_u = max_u;
  f->min_jac = s->min_jac;
  f->max_jac = s->max_jac;
  f->mean_log_jac = s->n_folds > 0 ? -INFINITY : s->sum_log / n;
  f->folds = s->n_folds;
}

void nw_fluid_fill_report(NwIterationReport *r, const NwParams *p, int iteration, int level,
                          int iter_in_level, int n_levels, gboolean finished,
                          const NwFluidFigures *f, double step, int regrids)
{
  const double iters = nw_params_get_int(p, "iterations");
  r->iteration = iteration;
  r->level = level;
  r->n_levels = n_levels;
  r->finished = finished;
  r->progress = finished ? 1.0 : (level + iter_in_level / iters) / n_levels;
  r->n_figures = 0;
  nw_report_add(r, "energy", f->energy);
  nw_report_add(r, "l2", f->l2);
  nw_report_add(r, "skl", f->skl);
  nw_report_add(r, "max_u", f->max_u);
  nw_report_add(r, "min_jac", f->min_jac);
  nw_report_add(r, "max_jac", f->max_jac);
  nw_report_add(r, "mean_log_jac", f->mean_log_jac);
  nw_report_add(r, "folds", f->folds);
  nw_report_add(r, "step", step);
  nw_report_add(r, "regrids", regrids);
}

double nw_fluid_intensity_scale(const NwVolume *fixed)
{
  /* The extrema of nw_volume_stats (non-finite voxels skipped), over the cores: exact in any
   * order, and a whole-volume pass that every job's create pays. */
  const gint64 n = (gint64)nw_volume_n_floats(fixed);
  float lo = INFINITY, hi = -INFINITY;
#pragma omp parallel for schedule(static) reduction(min : lo) reduction(max : hi) if (n > (1 << 20))
  for (gint64 e = 0; e < n; e++) {
    const float x = fixed->data[e];
    if (isfinite(x)) {
      lo = x < lo ? x : lo;
      hi = x > hi ? x : hi;
    }
  }
  return hi > lo ? 1.0 / ((double)hi - lo) : 1.0;
}
