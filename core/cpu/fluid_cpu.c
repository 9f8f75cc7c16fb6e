/* fluid_cpu.c — "fluid" on the CPU: the unbiased viscous-fluid reference (Yanovsky et al.
 * 2007), readable step by step against fluid_method.h over the kernels of fluid_kernels.h.
 * Driven from one job worker thread (method.h). Fields in voxel units of the current level,
 * u in the paper's sign (the template deformed as T(x - u)). */
#include <float.h>
#include <math.h>
#include <string.h>

#include "demons_cpu.h"
#include "deformable_common.h"
#include "field.h"
#include "fluid_kernels.h"
#include "fluid_method.h"
#include "nw_error.h"
#include "resample.h"
#include "smooth.h"

/* One state of the map since the last regridding and what the energy needs of it. */
typedef struct {
  NwVolume *u;      /* nc = 3, u since the last regridding */
  NwVolume *Tw;     /* T_g(x - u) */
  NwVolume *gTw;    /* ∇T_g(x - u), nc = 3 (of the trilinear interpolant) */
  NwVolume *J, *P;  /* det D, L'(J) cof(D) (nc = 9) */
  NwVolume *mask_d; /* moving mask deformed (moving mask only) */
  NwVolume *region; /* 1 where the L2 term counts (masks only) */
  NwFluidSums s;
  double E; /* l2 + λ skl (sums); +inf with a fold */
} FluidEval;

typedef struct {
  NwParams *params;
  const NwVolume *fixed_full, *moving_full, *moving_labels; /* borrowed */
  NwPyramidSet pyr;
  double scale; /* 1 / range of the fixed image: intensities of the ssd energy */

  /* Progress. */
  int level, iter_in_level, iteration, regrids;
  gboolean level_done, finished;
  double delta, last_step; /* δ now, δ of the last accepted step */
  double prev_energy;      /* E before the last iteration (the stopping rule) */

  /* The current level. */
  NwVolume *R, *T0;        /* fixed and moving of the level, as the energy sees them */
  NwVolume *Tg;            /* the template since the last regridding, T0(x - u_prev) */
  NwVolume *mmask_g;       /* the moving mask likewise (NULL without) */
  NwVolume *u_prev;        /* the map at the last regridding, NULL before any */
  FluidEval cur, trial;    /* the state, and a step being tried */
  NwVolume *f, *r;         /* force then velocity (smoothed in place), transport */
  NwVolume *u_tot, *J_tot; /* the whole map and its J, for the figures after a regridding */

  /* Figures of the whole map (fluid_method.h). */
  NwFluidFigures fig;
} FluidState;

static double param(const FluidState *st, const char *name)
{
  return nw_params_get(st->params, name);
}

static const NwVolume *level_mask(NwVolume *const *pyr, int l)
{
  return pyr != NULL ? pyr[l] : NULL;
}

static gboolean has_masks(const FluidState *st)
{
  return st->pyr.fixed_mask != NULL || st->pyr.moving_mask != NULL;
}

/* ---- states ------------------------------------------------------------------------------ */

static void eval_clear(FluidEval *ev)
{
  NwVolume **all[] = {&ev->u, &ev->Tw, &ev->gTw, &ev->J, &ev->P, &ev->mask_d, &ev->region};
  for (gsize i = 0; i < G_N_ELEMENTS(all); i++)
    g_clear_pointer(all[i], nw_volume_free);
}

static gboolean eval_alloc(FluidEval *ev, const NwVolume *F, gboolean moving_mask, gboolean masks,
                           GError **error)
{
  return (ev->u = nw_volume_new_like(F, 3, error)) != NULL &&
         (ev->Tw = nw_volume_new_like(F, 1, error)) != NULL &&
         (ev->gTw = nw_volume_new_like(F, 3, error)) != NULL &&
         (ev->J = nw_volume_new_like(F, 1, error)) != NULL &&
         (ev->P = nw_volume_new_like(F, 9, error)) != NULL &&
         (!moving_mask || (ev->mask_d = nw_volume_new_like(F, 1, error)) != NULL) &&
         (!masks || (ev->region = nw_volume_new_like(F, 1, error)) != NULL);
}

/* Everything of ev that follows from ev->u: T_g(x - u), ∇T_g(x - u), the region, J, P, the
 * sums and E. */
static void evaluate(FluidState *st, FluidEval *ev)
{
  nw_fluid_deform_grad_cpu(ev->Tw, ev->gTw, st->Tg, ev->u);
  if (ev->mask_d != NULL)
    nw_fluid_deform_cpu(ev->mask_d, st->mmask_g, ev->u);
  if (ev->region != NULL)
    nw_fluid_region_cpu(ev->region, level_mask(st->pyr.fixed_mask, st->level), ev->mask_d);
  nw_fluid_jacobian_cpu(ev->J, ev->P, ev->u);
  nw_fluid_sums_cpu(&ev->s, st->R, ev->Tw, ev->J, ev->region);
  ev->E = nw_fluid_energy(&ev->s, param(st, "lambda"));
}

/* The figures of the whole map u_tot (= cur.u before any regridding), per voxel. */
static void set_figures(FluidState *st)
{
  const NwVolume *u = st->cur.u;
  NwFluidSums s = st->cur.s;
  if (st->u_prev != NULL) {
    nw_fluid_compose_cpu(st->u_tot, st->u_prev, st->cur.u);
    nw_fluid_jacobian_cpu(st->J_tot, NULL, st->u_tot);
    nw_fluid_sums_cpu(&s, st->R, st->cur.Tw, st->J_tot, st->cur.region);
    u = st->u_tot;
  }
  nw_fluid_figures(&st->fig, &s, param(st, "lambda"), nw_field_max_norm(u));
}

/* The whole map so far into a new field: u_prev ∘ cur.u, or a copy of cur.u. */
static NwVolume *whole_map(const FluidState *st, GError **error)
{
  NwVolume *u = nw_volume_new_like(st->cur.u, 3, error);
  if (u == NULL)
    return NULL;
  if (st->u_prev != NULL)
    nw_fluid_compose_cpu(u, st->u_prev, st->cur.u);
  else
    memcpy(u->data, st->cur.u->data, nw_volume_n_floats(u) * sizeof(float));
  return u;
}

/* Regridding (fluid_method.h step 5): the template and the moving mask resampled from the
 * level's originals through the whole map, which becomes u_prev; u restarts at 0. */
static gboolean regrid(FluidState *st, GError **error)
{
  NwVolume *u_all = whole_map(st, error);
  if (u_all == NULL)
    return FALSE;
  g_clear_pointer(&st->u_prev, nw_volume_free);
  st->u_prev = u_all;
  nw_fluid_deform_cpu(st->Tg, st->T0, st->u_prev);
  if (st->mmask_g != NULL)
    nw_fluid_deform_cpu(st->mmask_g, st->pyr.moving_mask[st->level], st->u_prev);
  memset(st->cur.u->data, 0, nw_volume_n_floats(st->cur.u) * sizeof(float));
  evaluate(st, &st->cur);
  st->regrids++;
  return TRUE;
}

/* ---- one iteration (fluid_method.h steps 1-5) ------------------------------------------- */

/* Steps 3-4: the largest step along r, δ / max|r|, that lowers E, halving δ as needed;
 * FALSE when none does (the level has converged). */
static gboolean take_step(FluidState *st, double max_r)
{
  for (int h = 0; h <= NW_FLUID_MAX_HALVINGS && max_r > 0.0; h++, st->delta *= 0.5) {
    nw_field_axpy(st->trial.u, st->cur.u, st->delta / max_r, st->r);
    evaluate(st, &st->trial);
    if (st->trial.E < st->cur.E) {
      FluidEval t = st->cur;
      st->cur = st->trial;
      st->trial = t;
      st->last_step = st->delta;
      st->delta = fmin(st->delta * NW_FLUID_STEP_GROWTH, param(st, "max-step"));
      return TRUE;
    }
  }
  st->delta = param(st, "max-step"); /* for a later level or a live change */
  return FALSE;
}

static gboolean iterate(FluidState *st, GError **error)
{
  const double sigma = param(st, "sigma");
  /* 1. force, 2. velocity v = G_σ * f (in place), 3. transport r = v - (v·∇)u. */
  nw_fluid_force_cpu(st->f, st->R, st->cur.Tw, st->cur.gTw, st->cur.P, st->cur.region,
                     param(st, "lambda"));
  const double s3[3] = {sigma, sigma, sigma};
  if (sigma > 0.0 && !nw_smooth_gaussian(st->f, s3, error))
    return FALSE;
  const double max_r = nw_fluid_transport_cpu(st->r, st->cur.u, st->f);
  /* 4. time step; 5. regridding when J got too small. */
  st->prev_energy = st->cur.E;
  const gboolean moved = take_step(st, max_r);
  if (!moved)
    st->last_step = 0.0;
  const double energy = st->cur.E;
  st->iter_in_level++;
  st->iteration++;
  st->level_done = !moved || nw_deformable_level_done(
                                 st->iter_in_level, nw_params_get_int(st->params, "iterations"),
                                 st->prev_energy, energy, param(st, "tolerance"));
  st->finished = st->level_done && st->level == st->pyr.n_levels - 1;
  if (moved && st->cur.s.min_jac < param(st, "regrid-jacobian") && !regrid(st, error))
    return FALSE;
  set_figures(st);
  return TRUE;
}

/* ---- levels ------------------------------------------------------------------------------ */

static void free_level(FluidState *st)
{
  eval_clear(&st->cur);
  eval_clear(&st->trial);
  NwVolume **all[] = {&st->R, &st->T0, &st->Tg,    &st->mmask_g, &st->u_prev,
                      &st->f, &st->r,  &st->u_tot, &st->J_tot};
  for (gsize i = 0; i < G_N_ELEMENTS(all); i++)
    g_clear_pointer(all[i], nw_volume_free);
}

/* The level's image as the energy sees it: ssd: times scale; lcc: locally normalised (the
 * LCC normalisation of demons_cpu.h with ε of its own range). */
static NwVolume *energy_image(const FluidState *st, const NwVolume *I, GError **error)
{
  g_autoptr(NwVolume) out = nw_volume_try_copy(I, error);
  if (out == NULL)
    return NULL;
  const size_t n = nw_volume_n_voxels(I);
  if (param(st, "similarity") != NW_FLUID_SIM_LCC) {
    for (size_t e = 0; e < n; e++)
      out->data[e] = (float)(I->data[e] * st->scale);
    return g_steal_pointer(&out);
  }
  NwVolumeStats vs;
  nw_volume_stats(I, &vs);
  const double range = (double)vs.max - vs.min,
               eps = NW_DEMONS_LCC_EPS * (range > 0 ? range * range : 1.0);
  /* The shift (it cancels in Î; it only keeps G*I² - μ² precise) rounded to a float: the
   * number the CUDA twin's kernels subtract, so that both normalise the same values. */
  const float shift = (float)vs.mean;
  g_autoptr(NwVolume) q = nw_volume_new_like(I, 3, error);
  if (q == NULL || !nw_demons_lcc_fixed_cpu(q, I, shift, eps, param(st, "lcc-sigma"), error))
    return NULL;
  for (size_t e = 0; e < n; e++)
    out->data[e] = q->data[3 * e];
  return g_steal_pointer(&out);
}

/* lcc: both normalised images divided by the range of the fixed one, so that λ weighs the
 * sKL term against intensity differences of the same scale as ssd's (there: the range of
 * the fixed image is 1); the normalised images span several local standard deviations. */
static void lcc_to_unit_range(NwVolume *R, NwVolume *T)
{
  NwVolumeStats rs;
  nw_volume_stats(R, &rs);
  const double k = rs.max > rs.min ? 1.0 / ((double)rs.max - rs.min) : 1.0;
  for (size_t e = 0; e < nw_volume_n_voxels(R); e++) {
    R->data[e] = (float)(R->data[e] * k);
    T->data[e] = (float)(T->data[e] * k);
  }
}

/* Enter level l: the whole map of the level before carried onto this grid (zero at the
 * first level, 0 on the border), the level's images and buffers, the first evaluation, and a
 * regridding when the carried map's J is already too small. */
static gboolean enter_level(FluidState *st, int l, GError **error)
{
  g_autoptr(NwVolume) prev = st->cur.u != NULL ? whole_map(st, error) : NULL;
  if (st->cur.u != NULL && prev == NULL)
    return FALSE;
  const NwVolume *F = st->pyr.fixed[l];
  g_autoptr(NwVolume) carried = nw_deformable_carry_field(prev, F, error);
  if (carried == NULL)
    return FALSE;
  free_level(st);
  st->level = l;
  const gboolean mm = st->pyr.moving_mask != NULL, masks = has_masks(st);
  if (!eval_alloc(&st->cur, F, mm, masks, error) || !eval_alloc(&st->trial, F, mm, masks, error) ||
      (st->R = energy_image(st, F, error)) == NULL ||
      (st->T0 = energy_image(st, st->pyr.moving[l], error)) == NULL ||
      (mm && (st->mmask_g = nw_volume_try_copy(st->pyr.moving_mask[l], error)) == NULL) ||
      (st->f = nw_volume_new_like(F, 3, error)) == NULL ||
      (st->r = nw_volume_new_like(F, 3, error)) == NULL ||
      (st->u_tot = nw_volume_new_like(F, 3, error)) == NULL ||
      (st->J_tot = nw_volume_new_like(F, 1, error)) == NULL)
    return FALSE;
  /* Tg is copied after the division: the energy compares R with Tg, both on one scale. */
  if (param(st, "similarity") == NW_FLUID_SIM_LCC)
    lcc_to_unit_range(st->R, st->T0);
  if ((st->Tg = nw_volume_try_copy(st->T0, error)) == NULL)
    return FALSE;
  memcpy(st->cur.u->data, carried->data, nw_volume_n_floats(carried) * sizeof(float));
  nw_fluid_zero_border_cpu(st->cur.u);
  evaluate(st, &st->cur);
  if (st->cur.s.min_jac < param(st, "regrid-jacobian") && !regrid(st, error))
    return FALSE;
  st->delta = param(st, "max-step");
  st->iter_in_level = 0;
  st->level_done = FALSE;
  st->prev_energy = st->cur.E;
  set_figures(st);
  return TRUE;
}

/* ---- the method interface ---------------------------------------------------------------- */

static void fluid_destroy(void *state)
{
  FluidState *st = state;
  if (st == NULL)
    return;
  free_level(st);
  nw_pyramid_set_clear(&st->pyr);
  g_clear_pointer(&st->params, nw_params_free);
  g_free(st);
}

static void *fluid_create(const NwMethodInputs *in, const NwParams *p, GError **error)
{
  if (!nw_deformable_check_inputs(in, "fluid", error))
    return NULL;
  FluidState *st = g_new0(FluidState, 1);
  st->params = nw_params_copy(p);
  st->fixed_full = in->fixed;
  st->moving_full = in->moving;
  st->moving_labels = in->moving_labels;
  st->scale = nw_fluid_intensity_scale(in->fixed);
  if (!nw_pyramid_set_build(&st->pyr, in, nw_params_get_int(p, "levels"),
                            nw_params_get(p, "histogram-match") != 0.0, error) ||
      !enter_level(st, 0, error)) {
    fluid_destroy(st);
    return NULL;
  }
  return st;
}

static void fill_report(const FluidState *st, NwIterationReport *r)
{
  nw_fluid_fill_report(r, st->params, st->iteration, st->level, st->iter_in_level, st->pyr.n_levels,
                       st->finished, &st->fig, st->last_step, st->regrids);
}

static gboolean fluid_step(void *state, NwIterationReport *report, GError **error)
{
  FluidState *st = state;
  if (!st->finished) {
    if (st->level_done && !enter_level(st, st->level + 1, error))
      return FALSE;
    if (!iterate(st, error))
      return FALSE;
  }
  fill_report(st, report);
  return TRUE;
}

static gboolean fluid_set_params(void *state, const NwParams *p, GError **error)
{
  FluidState *st = state;
  if (!nw_deformable_check_live_change(st->params, p, "fluid", error))
    return FALSE;
  nw_params_free(st->params);
  st->params = nw_params_copy(p);
  /* A new λ changes E (its sums do not depend on it); a new max-step caps δ. */
  st->cur.E = nw_fluid_energy(&st->cur.s, param(st, "lambda"));
  st->prev_energy = st->cur.E;
  st->delta = fmin(st->delta, param(st, "max-step"));
  set_figures(st);
  return TRUE;
}

/* s = -u: the forward field (field.h) of the paper's u, in place. */
static void negate(NwVolume *u)
{
  for (size_t e = 0; e < nw_volume_n_floats(u); e++)
    u->data[e] = -u->data[e];
}

static gboolean fluid_publish_frame(void *state, NwFrame *frame, GError **error)
{
  FluidState *st = state;
  frame->iteration = st->iteration;
  NwVolume *s = whole_map(st, error);
  if (s == NULL)
    return FALSE;
  negate(s);
  frame->field = s;
  frame->image = nw_volume_new_like(s, 1, error); /* the moving image of the level, warped */
  if (frame->image != NULL)
    nw_warp(frame->image, st->pyr.moving[st->level], s, NW_INTERP_LINEAR);
  return frame->image != NULL;
}

static NwMethodResult *fluid_result(void *state, GError **error)
{
  FluidState *st = state;
  const NwVolume *full = st->fixed_full;
  g_autoptr(NwVolume) u = whole_map(st, error);
  if (u == NULL)
    return NULL;
  NwVolume *s = st->level == st->pyr.n_levels - 1
                    ? g_steal_pointer(&u)
                    : nw_resize(u, full->nx, full->ny, full->nz, TRUE, error);
  if (s == NULL)
    return NULL;
  negate(s);
  nw_volume_set_affine(s, full->vox_to_ras);
  g_autoptr(NwMethodResult) r = nw_method_result_new();
  nw_method_result_add(r, "forward", s);
  NwVolume *warped = nw_volume_new_like(full, 1, error);
  NwVolume *jac = warped ? nw_volume_new_like(full, 1, error) : NULL;
  NwVolume *labels = jac && st->moving_labels ? nw_volume_new_like(full, 1, error) : NULL;
  if (jac == NULL || (st->moving_labels != NULL && labels == NULL)) {
    g_clear_pointer(&warped, nw_volume_free);
    g_clear_pointer(&jac, nw_volume_free);
    return NULL;
  }
  /* The original moving intensities, also when they were histogram-matched for the run. */
  nw_warp(warped, st->moving_full, s, NW_INTERP_LINEAR);
  nw_field_jacobian_det(jac, s);
  nw_method_result_add(r, "warped", warped);
  nw_method_result_add(r, "jacobian", jac);
  if (labels != NULL) {
    nw_warp(labels, st->moving_labels, s, NW_INTERP_NEAREST);
    nw_method_result_add(r, "labels", labels);
  }
  return g_steal_pointer(&r);
}

const NwMethodOps nw_fluid_cpu_ops = {
    .name = "fluid",
    .device = NW_DEVICE_CPU,
    .description = "Unbiased viscous-fluid registration (symmetric-KL Jacobian term), "
                   "multi-resolution",
    .params = nw_fluid_param_specs,
    .n_params = NW_FLUID_N_PARAMS,
    .needs_moving = TRUE,
    .plot_figures = nw_fluid_plot_figures,
    .create = fluid_create,
    .step = fluid_step,
    .set_params = fluid_set_params,
    .publish_frame = fluid_publish_frame,
    .result = fluid_result,
    .destroy = fluid_destroy,
};
