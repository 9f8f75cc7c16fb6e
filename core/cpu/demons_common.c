/* demons_common.c — the parts of the "demons" method that do not depend on the back end
 * (demons_method.h): the parameter table, input checks, the job both back ends drive (level
 * changes, stopping rule, iteration report, live parameters), the figures from the
 * similarity sums and the result. Called by core/cpu/demons_cpu.c and cuda/demons_cuda.cu
 * on the job's worker thread. */
#include <math.h>

#include "deformable_common.h"
#include "demons_method.h"
#include "nw_error.h"
#include "pyramid.h"

const char *const nw_demons_force_choices[] = {"symmetric", "fixed", "moving", NULL};
const char *const nw_demons_similarity_choices[] = {"ssd", "lcc", NULL};
const char *const nw_demons_composition_choices[] = {"compose", "bch", NULL};

const char *const nw_demons_plot_figures[] = {"energy", "ncc", "min_jac", NULL};

const NwParamSpec nw_demons_param_specs[] = {NW_DEMONS_PARAM_ROWS};
G_STATIC_ASSERT(G_N_ELEMENTS(nw_demons_param_specs) == NW_DEMONS_N_PARAMS);
const int nw_demons_n_params = NW_DEMONS_N_PARAMS;

gboolean nw_demons_check_inputs(const NwMethodInputs *in, GError **error)
{
  return nw_deformable_check_inputs(in, "demons", error);
}

double nw_demons_param(const NwDemonsJob *job, const char *name)
{
  return nw_params_get(job->params, name);
}

gboolean nw_demons_is_lcc(const NwDemonsJob *job)
{
  return nw_demons_param(job, "similarity") == NW_DEMONS_SIM_LCC;
}

gboolean nw_demons_has_masks(const NwDemonsJob *job)
{
  return job->pyr_fixed_mask != NULL || job->pyr_moving_mask != NULL;
}

/* ---- progress and reports ---------------------------------------------------------------- */

/* Count the iteration just done and apply the level's stopping rule (iterations, or relative
 * energy change below tolerance after a few iterations); sets level_done and finished. */
static void progress_advance(NwDemonsProgress *pr, const NwParams *p)
{
  pr->iter_in_level++;
  pr->iteration++;
  pr->level_done = nw_deformable_level_done(pr->iter_in_level, nw_params_get_int(p, "iterations"),
                                            pr->prev_energy, pr->energy,
                                            nw_params_get(p, "tolerance"));
  pr->finished = pr->level_done && pr->level == pr->n_levels - 1;
}

static void fill_report(const NwDemonsProgress *pr, const NwParams *p, NwIterationReport *r)
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

void nw_demons_set_figures(NwDemonsProgress *pr, const NwDemonsSimSums *t, gboolean lcc)
{
  const double n = t->n;
  if (!(n > 0)) { /* the masks leave no voxel: no similarity to speak of */
    pr->mse = pr->ncc = 0.0;
    pr->energy = lcc ? 1.0 : 0.0;
    return;
  }
  const double cov = t->sfw - t->sf * t->sw / n, vf = t->sff - t->sf * t->sf / n,
               vw = t->sww - t->sw * t->sw / n;
  pr->mse = t->sd2 / n;
  pr->ncc = vf > 0 && vw > 0 ? cov / sqrt(vf * vw) : 0.0;
  pr->energy = lcc ? 1.0 - (t->n_lcc > 0 ? t->slcc / t->n_lcc : 0.0) : pr->mse;
}

/* ---- the job ----------------------------------------------------------------------------- */

/* The image pyramids both back ends register (0 = coarsest), built once on the host
 * (deformable_common.h): the moving image histogram-matched to the fixed first when the
 * parameter asks for it, and the masks given. */
static gboolean build_pyramids(NwDemonsJob *job, const NwMethodInputs *in, GError **error)
{
  NwPyramidSet s = {0};
  const gboolean ok =
      nw_pyramid_set_build(&s, in, nw_params_get_int(job->params, "levels"),
                           nw_params_get(job->params, "histogram-match") != 0.0, error);
  job->pyr_fixed = s.fixed;
  job->pyr_moving = s.moving;
  job->pyr_fixed_mask = s.fixed_mask;
  job->pyr_moving_mask = s.moving_mask;
  job->pr.n_levels = s.n_levels;
  return ok;
}

/* The level's fixed LCC statistics (lcc), a fresh level count, the first evaluation. */
static gboolean restart_level(NwDemonsJob *job, const NwDemonsBackend *be, GError **error)
{
  if (nw_demons_is_lcc(job) && !be->lcc_fixed(job, error))
    return FALSE;
  job->pr.iter_in_level = 0;
  job->pr.level_done = FALSE;
  job->pr.max_u = 0.0;
  if (!be->evaluate(job, error))
    return FALSE;
  job->pr.prev_energy = job->pr.energy;
  return TRUE;
}

gboolean nw_demons_job_enter_level(NwDemonsJob *job, const NwDemonsBackend *be, int l,
                                   GError **error)
{
  NwVolumeStats fs;
  nw_volume_stats(job->pyr_fixed[l], &fs);
  job->shift = fs.mean;
  const double range = (double)fs.max - fs.min;
  job->scale2 = range > 0 ? range * range : 1.0;
  if (!be->setup_level(job, l, error))
    return FALSE;
  job->pr.level = l;
  return restart_level(job, be, error);
}

gboolean nw_demons_job_start(NwDemonsJob *job, const NwDemonsBackend *be, const NwMethodInputs *in,
                             const NwParams *p, GError **error)
{
  job->params = nw_params_copy(p);
  job->fixed_full = in->fixed;
  job->moving_full = in->moving;
  job->moving_labels = in->moving_labels;
  return build_pyramids(job, in, error) && nw_demons_job_enter_level(job, be, 0, error);
}

gboolean nw_demons_job_step(NwDemonsJob *job, const NwDemonsBackend *be, NwIterationReport *report,
                            GError **error)
{
  if (!job->pr.finished) {
    if (job->pr.level_done && !nw_demons_job_enter_level(job, be, job->pr.level + 1, error))
      return FALSE;
    if (!be->iterate(job, error))
      return FALSE;
    progress_advance(&job->pr, job->params);
  }
  fill_report(&job->pr, job->params, report);
  return TRUE;
}

gboolean nw_demons_job_set_params(NwDemonsJob *job, const NwDemonsBackend *be, const NwParams *p,
                                  GError **error)
{
  if (!nw_deformable_check_live_change(job->params, p, "demons", error))
    return FALSE;
  const gboolean new_window = nw_params_get(p, "lcc-sigma") != nw_demons_param(job, "lcc-sigma");
  nw_params_free(job->params);
  job->params = nw_params_copy(p);
  if (new_window && nw_demons_is_lcc(job)) { /* new LCC window: local statistics and energy */
    if (!be->lcc_fixed(job, error) || !be->evaluate(job, error))
      return FALSE;
    job->pr.prev_energy = job->pr.energy;
  }
  return TRUE;
}

void nw_demons_job_clear(NwDemonsJob *job)
{
  nw_pyramid_free(job->pyr_fixed, job->pr.n_levels);
  nw_pyramid_free(job->pyr_moving, job->pr.n_levels);
  nw_pyramid_free(job->pyr_fixed_mask, job->pr.n_levels);
  nw_pyramid_free(job->pyr_moving_mask, job->pr.n_levels);
  job->pyr_fixed = job->pyr_moving = job->pyr_fixed_mask = job->pyr_moving_mask = NULL;
  g_clear_pointer(&job->params, nw_params_free);
}

NwVolume *nw_demons_carry_velocity(const NwVolume *v_prev, const NwVolume *F, GError **error)
{
  return nw_deformable_carry_field(v_prev, F, error);
}

/* ---- results ----------------------------------------------------------------------------- */

void nw_demons_outputs_clear(NwDemonsOutputs *out)
{
  NwVolume **all[] = {&out->warped,   &out->forward,  &out->inverse,
                      &out->velocity, &out->jacobian, &out->labels};
  for (gsize i = 0; i < G_N_ELEMENTS(all); i++)
    g_clear_pointer(all[i], nw_volume_free);
}

NwMethodResult *nw_demons_result_take(NwDemonsOutputs *out)
{
  if (out->warped == NULL || out->forward == NULL || out->inverse == NULL ||
      out->velocity == NULL || out->jacobian == NULL) {
    nw_demons_outputs_clear(out);
    return NULL;
  }
  NwMethodResult *r = nw_method_result_new();
  nw_method_result_add(r, "warped", g_steal_pointer(&out->warped));
  nw_method_result_add(r, "forward", g_steal_pointer(&out->forward));
  nw_method_result_add(r, "inverse", g_steal_pointer(&out->inverse));
  nw_method_result_add(r, "velocity", g_steal_pointer(&out->velocity));
  nw_method_result_add(r, "jacobian", g_steal_pointer(&out->jacobian));
  if (out->labels != NULL)
    nw_method_result_add(r, "labels", g_steal_pointer(&out->labels));
  return r;
}
