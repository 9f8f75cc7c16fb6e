/* demons_cpu.c — "demons" on the CPU: the diffeomorphic log-domain demons reference
 * (Vercauteren et al. 2009) with SSD or LCC similarity (Lorenzi et al. 2013), readable line by
 * line against the algorithm in demons_method.h. Plain loops with OpenMP. Driven from one
 * job worker thread (method.h). Fields in voxel units of the current level, nc = 3. */
#include "demons_method.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "field.h"
#include "histogram_match.h"
#include "nw_error.h"
#include "pyramid.h"
#include "resample.h"
#include "smooth.h"

static const char *const force_choices[] = {"symmetric", "fixed", "moving", NULL};
static const char *const similarity_choices[] = {"ssd", "lcc", NULL};
static const char *const composition_choices[] = {"compose", "bch", NULL};

const NwParamSpec nw_demons_param_specs[] = {
    {"levels", NW_PARAM_INT, 3, 1, 8, "",
     "Multi-resolution levels; each coarser level halves the size (more for large motion)", FALSE,
     NULL},
    {"iterations", NW_PARAM_INT, 50, 1, 100000, "", "Maximum iterations per level", FALSE, NULL},
    {"sigma-fluid", NW_PARAM_DOUBLE, 1.0, 0, 20, "voxel",
     "Gaussian smoothing of each update (fluid-like regularisation)", TRUE, NULL},
    {"sigma-diff", NW_PARAM_DOUBLE, 1.0, 0, 20, "voxel",
     "Gaussian smoothing of the velocity field (diffusion-like regularisation)", TRUE, NULL},
    {"max-step", NW_PARAM_DOUBLE, 1.0, 0.01, 10, "voxel",
     "Largest update length per iteration (alpha); smaller is slower and safer", TRUE, NULL},
    {"force", NW_PARAM_ENUM, NW_DEMONS_FORCE_SYMMETRIC, 0, 2, "",
     "Gradient driving the update: symmetric (fixed and warped moving), fixed or moving", FALSE,
     force_choices},
    {"similarity", NW_PARAM_ENUM, NW_DEMONS_SIM_SSD, 0, 1, "",
     "ssd for equal intensities, lcc (local correlation) for bias fields or contrast changes",
     FALSE, similarity_choices},
    {"lcc-sigma", NW_PARAM_DOUBLE, 2.0, 0.5, 20, "voxel",
     "Gaussian window of the local correlation (lcc only)", TRUE, NULL},
    {"composition", NW_PARAM_ENUM, NW_DEMONS_COMPOSE, 0, 1, "",
     "Velocity update: compose (v <- v o u) or bch (first-order BCH, v <- v + u)", FALSE,
     composition_choices},
    {"histogram-match", NW_PARAM_BOOL, 0, 0, 1, "",
     "Match the moving intensities to the fixed ones before registering", FALSE, NULL},
    {"tolerance", NW_PARAM_DOUBLE, 1e-4, 0, 1, "",
     "A level ends when the relative energy change per iteration falls below this", TRUE, NULL},
};
const int nw_demons_n_params = G_N_ELEMENTS(nw_demons_param_specs);

/* Added to local variances, times the squared intensity range: keeps ρ defined where an
 * image is locally flat (there ρ -> 0 and so does the force). */
#define LCC_EPS NW_DEMONS_LCC_EPS


typedef struct {
  NwParams *params;
  const NwVolume *fixed_full, *moving_full; /* borrowed inputs */
  const NwVolume *moving_labels;            /* borrowed, may be NULL */
  NwVolume **pyr_fixed, **pyr_moving; /* [pr.n_levels], 0 = coarsest; owned */
  NwDemonsProgress pr;                 /* level, iteration, stopping state and figures */

  /* Current level. */
  const NwVolume *F, *M;     /* pyr_fixed[level], pyr_moving[level] */
  NwVolume *v, *s, *u, *tmp; /* velocity, exp(v), update, scratch: nc = 3 */
  NwVolume *W;               /* M ∘ s */
  NwVolume *lcc_f;           /* nc = 3: F̂, μF, σF² (lcc only) */
  NwVolume *lcc_w;           /* nc = 4: Ŵ, μW, σW², σFW (lcc only) */
  double shift;              /* global mean of F, subtracted before squaring (precision) */
  double scale2;             /* squared intensity range of F, for thresholds */
} DemonsState;

static double param(const DemonsState *st, const char *name)
{
  return nw_params_get(st->params, name);
}

/* Gradient of component c of f at voxel (i, j, k), central differences in voxel units,
 * one-sided at the borders, 0 along axes of size 1. */
static void gradient_c_at(const NwVolume *f, int c, int i, int j, int k, double g[3])
{
  const int n[3] = {f->nx, f->ny, f->nz};
  const int p[3] = {i, j, k};
  for (int a = 0; a < 3; a++) {
    if (n[a] == 1) {
      g[a] = 0.0;
      continue;
    }
    int lo[3] = {i, j, k}, hi[3] = {i, j, k};
    lo[a] = p[a] > 0 ? p[a] - 1 : p[a];
    hi[a] = p[a] < n[a] - 1 ? p[a] + 1 : p[a];
    double fl = f->data[nw_volume_index(f, lo[0], lo[1], lo[2]) * f->nc + c];
    double fh = f->data[nw_volume_index(f, hi[0], hi[1], hi[2]) * f->nc + c];
    g[a] = (fh - fl) / (double)(hi[a] - lo[a]);
  }
}

static void gradient_at(const NwVolume *f, int i, int j, int k, double g[3])
{
  gradient_c_at(f, 0, i, j, k, g);
}

/* Isotropic Gaussian in voxels of the current level; fails only when its line buffers
 * cannot be allocated. */
static gboolean smooth_iso(NwVolume *v, double sigma_vox, GError **error)
{
  if (sigma_vox <= 0.0)
    return TRUE;
  const double s[3] = {sigma_vox, sigma_vox, sigma_vox};
  return nw_smooth_gaussian(v, s, error);
}

/* LCC by local normalisation: with Gaussian windows (sigma lcc-sigma) of local mean μ and
 * variance σ², the normalised image Î = (I - μI) / sqrt(σI² + ε) turns the local correlation
 * into a sum of squares, |F̂ - Ŵ|² summed over a window = 2 (1 - ρ) up to ε, so the SSD
 * demons machinery applied to F̂ and Ŵ maximises ρ; where an image is locally flat (σ² << ε)
 * its normalised version and the force vanish. ε = LCC_EPS (intensity range)². Intensities
 * are shifted by st->shift before squaring (precision of G*I² - μ² in float). */

/* lcc_f = (F̂, μF, σF²) for this level. */
static gboolean lcc_fixed_stats(DemonsState *st, GError **error)
{
  const size_t n = nw_volume_n_voxels(st->F);
  const double eps = LCC_EPS * st->scale2;
  st->lcc_f = nw_volume_new_like(st->F, 3, error);
  if (st->lcc_f == NULL)
    return FALSE;
  float *q = st->lcc_f->data;
  for (size_t e = 0; e < n; e++) {
    double f = st->F->data[e] - st->shift;
    q[3 * e] = 0.0f;
    q[3 * e + 1] = (float)f;
    q[3 * e + 2] = (float)(f * f);
  }
  if (!smooth_iso(st->lcc_f, param(st, "lcc-sigma"), error))
    return FALSE;
  for (size_t e = 0; e < n; e++) {
    float *p = q + 3 * e;
    p[2] = fmaxf(p[2] - p[1] * p[1], 0.0f);
    p[0] = (float)((st->F->data[e] - st->shift - p[1]) / sqrt(p[2] + eps));
  }
  return TRUE;
}

/* lcc_w = (Ŵ, μW, σW², σFW) for the current W. */
static gboolean lcc_warped_stats(DemonsState *st, GError **error)
{
  const size_t n = nw_volume_n_voxels(st->F);
  const double eps = LCC_EPS * st->scale2;
  float *q = st->lcc_w->data;
#pragma omp parallel for schedule(static)
  for (size_t e = 0; e < n; e++) {
    double w = st->W->data[e] - st->shift, f = st->F->data[e] - st->shift;
    q[4 * e] = 0.0f;
    q[4 * e + 1] = (float)w;
    q[4 * e + 2] = (float)(w * w);
    q[4 * e + 3] = (float)(f * w);
  }
  if (!smooth_iso(st->lcc_w, param(st, "lcc-sigma"), error))
    return FALSE;
#pragma omp parallel for schedule(static)
  for (size_t e = 0; e < n; e++) {
    float *p = q + 4 * e;
    p[2] = fmaxf(p[2] - p[1] * p[1], 0.0f);
    p[3] = p[3] - st->lcc_f->data[3 * e + 1] * p[1];
    p[0] = (float)((st->W->data[e] - st->shift - p[1]) / sqrt(p[2] + eps));
  }
  return TRUE;
}

/* Local correlation ρ = σFW / sqrt((σF² + ε)(σW² + ε)) at voxel e. */
static inline double lcc_rho(const DemonsState *st, size_t e)
{
  const double eps = LCC_EPS * st->scale2;
  const float *pf = st->lcc_f->data + 3 * e, *pw = st->lcc_w->data + 4 * e;
  return pw[3] / sqrt((pf[2] + eps) * (pw[2] + eps));
}

/* Similarity figures of the current W: mse, global ncc, and the energy. */
static void similarity_figures(DemonsState *st, gboolean lcc)
{
  const size_t n = nw_volume_n_voxels(st->F);
  double sf = 0, sw = 0, sff = 0, sww = 0, sfw = 0, sd2 = 0, slcc = 0, n_lcc = 0;
#pragma omp parallel for schedule(static) reduction(+ : sf, sw, sff, sww, sfw, sd2, slcc, n_lcc)
  for (size_t e = 0; e < n; e++) {
    double f = st->F->data[e] - st->shift, w = st->W->data[e] - st->shift;
    sf += f;
    sw += w;
    sff += f * f;
    sww += w * w;
    sfw += f * w;
    sd2 += (f - w) * (f - w);
    if (lcc && st->lcc_f->data[3 * e + 2] > LCC_EPS * st->scale2) {
      slcc += lcc_rho(st, e); /* over the fixed image's structured voxels only */
      n_lcc += 1.0;
    }
  }
  double cov = sfw - sf * sw / n, vf = sff - sf * sf / n, vw = sww - sw * sw / n;
  st->pr.mse = sd2 / n;
  st->pr.ncc = vf > 0 && vw > 0 ? cov / sqrt(vf * vw) : 0.0;
  st->pr.energy = lcc ? 1.0 - (n_lcc > 0 ? slcc / n_lcc : 0.0) : st->pr.mse;
}

/* s = exp(v), W = M ∘ s, and every figure of that state. */
static gboolean evaluate(DemonsState *st, GError **error)
{
  const gboolean lcc = param(st, "similarity") == NW_DEMONS_SIM_LCC;
  st->pr.squarings = nw_field_exp_scratch(st->s, st->v, 1.0, st->tmp); /* tmp is free here */
  nw_warp(st->W, st->M, st->s, NW_INTERP_LINEAR);
  if (lcc && !lcc_warped_stats(st, error))
    return FALSE;
  similarity_figures(st, lcc);
  /* det(I + ∇s) into tmp's first third (tmp is free between iterations). */
  NwVolume det = *st->F;
  det.nc = 1;
  det.data = st->tmp->data;
  nw_field_jacobian_det(&det, st->s);
  NwJacobianStats js;
  nw_jacobian_stats(&det, &js);
  st->pr.min_jac = js.min;
  st->pr.folds = js.n_folds;
  return TRUE;
}

/* One demons step for residual r and gradient J: out = r J / (|J|² + r²/K), K = 4 α²,
 * clamped to |out| <= α (already implied by K; kept against rounding); 0 where the
 * denominator vanishes. */
static inline void demons_step_vec(double r, const double J[3], double alpha, double den_min,
                                   double out[3])
{
  const double j2 = J[0] * J[0] + J[1] * J[1] + J[2] * J[2];
  const double den = j2 + r * r / (4.0 * alpha * alpha);
  double f = den > den_min ? r / den : 0.0;
  const double len = fabs(f) * sqrt(j2);
  if (len > alpha)
    f *= alpha / len;
  for (int c = 0; c < 3; c++)
    out[c] = f * J[c];
}

/* The demons update u at voxel (i, j, k), before smoothing: u = r J / (|J|² + r²/K) with
 * ssd: r = F - W, J = ∇F (fixed), ∇W (moving) or their mean (symmetric, ESM);
 * lcc: the same on the locally normalised images, r = F̂ - Ŵ, J from ∇F̂ and ∇Ŵ. */
static void update_at(const DemonsState *st, gboolean lcc, int force, double alpha, double den_min,
                      int i, int j, int k, double u[3])
{
  const size_t e = nw_volume_index(st->F, i, j, k);
  double gf[3], gw[3], J[3], r;
  if (lcc) {
    gradient_c_at(st->lcc_f, 0, i, j, k, gf);
    gradient_c_at(st->lcc_w, 0, i, j, k, gw);
    r = (double)st->lcc_f->data[3 * e] - st->lcc_w->data[4 * e];
  } else {
    gradient_at(st->F, i, j, k, gf);
    gradient_at(st->W, i, j, k, gw);
    r = (double)st->F->data[e] - st->W->data[e];
  }
  for (int c = 0; c < 3; c++)
    J[c] = force == NW_DEMONS_FORCE_FIXED    ? gf[c]
           : force == NW_DEMONS_FORCE_MOVING ? gw[c]
                                             : 0.5 * (gf[c] + gw[c]);
  demons_step_vec(r, J, alpha, den_min, u);
}

/* The demons update field st->u (before smoothing) from the current W. */
static void demons_update(DemonsState *st)
{
  const gboolean lcc = param(st, "similarity") == NW_DEMONS_SIM_LCC;
  const int force = (int)param(st, "force");
  const double alpha = param(st, "max-step");
  const double den_min = NW_DEMONS_DEN_MIN * (lcc ? 1.0 : st->scale2); /* demons_method.h */
  const NwVolume *F = st->F;
#pragma omp parallel for schedule(static)
  for (int k = 0; k < F->nz; k++)
    for (int j = 0; j < F->ny; j++)
      for (int i = 0; i < F->nx; i++) {
        double u[3];
        update_at(st, lcc, force, alpha, den_min, i, j, k, u);
        float *p = st->u->data + 3 * nw_volume_index(F, i, j, k);
        for (int c = 0; c < 3; c++)
          p[c] = (float)u[c];
      }
}

/* v <- v ∘ u (compose: v(x) <- u(x) + v(x + u(x))) or v <- v + u (first-order BCH). */
static void velocity_update(DemonsState *st)
{
  if (param(st, "composition") == NW_DEMONS_BCH) {
    nw_field_axpy(st->v, st->v, 1.0, st->u);
    return;
  }
  nw_field_compose(st->tmp, st->v, st->u);
  NwVolume *t = st->v;
  st->v = st->tmp;
  st->tmp = t;
}

/* One iteration at the current level (steps 2-5 of demons_method.h, then step 1 for the
 * figures and the next iteration: s and W stay valid between iterations). */
static gboolean iterate(DemonsState *st, GError **error)
{
  demons_update(st);
  if (!smooth_iso(st->u, param(st, "sigma-fluid"), error))
    return FALSE;
  st->pr.max_u = nw_field_max_norm(st->u);
  velocity_update(st);
  if (!smooth_iso(st->v, param(st, "sigma-diff"), error))
    return FALSE;
  st->pr.prev_energy = st->pr.energy;
  return evaluate(st, error);
}

static void free_level(DemonsState *st)
{
  g_clear_pointer(&st->s, nw_volume_free);
  g_clear_pointer(&st->u, nw_volume_free);
  g_clear_pointer(&st->tmp, nw_volume_free);
  g_clear_pointer(&st->W, nw_volume_free);
  g_clear_pointer(&st->lcc_f, nw_volume_free);
  g_clear_pointer(&st->lcc_w, nw_volume_free);
}

/* Carry v onto level l's grid (zero at the first level) and set up that level's buffers. */
static gboolean enter_level(DemonsState *st, int l, GError **error)
{
  free_level(st);
  st->pr.level = l;
  st->F = st->pyr_fixed[l];
  st->M = st->pyr_moving[l];
  NwVolume *v = st->v == NULL ? nw_volume_new_like(st->F, 3, error)
                              : nw_resize(st->v, st->F->nx, st->F->ny, st->F->nz, TRUE, error);
  if (v == NULL)
    return FALSE;
  nw_volume_set_affine(v, st->F->vox_to_ras);
  g_clear_pointer(&st->v, nw_volume_free);
  st->v = v;
  const gboolean lcc = param(st, "similarity") == NW_DEMONS_SIM_LCC;
  if ((st->s = nw_volume_new_like(st->F, 3, error)) == NULL ||
      (st->u = nw_volume_new_like(st->F, 3, error)) == NULL ||
      (st->tmp = nw_volume_new_like(st->F, 3, error)) == NULL ||
      (st->W = nw_volume_new_like(st->F, 1, error)) == NULL ||
      (lcc && (st->lcc_w = nw_volume_new_like(st->F, 4, error)) == NULL))
    return FALSE;
  NwVolumeStats fs;
  nw_volume_stats(st->F, &fs);
  st->shift = fs.mean;
  double range = (double)fs.max - fs.min;
  st->scale2 = range > 0 ? range * range : 1.0;
  if (lcc && !lcc_fixed_stats(st, error))
    return FALSE;
  st->pr.iter_in_level = 0;
  st->pr.level_done = FALSE;
  st->pr.max_u = 0.0;
  if (!evaluate(st, error))
    return FALSE;
  st->pr.prev_energy = st->pr.energy;
  return TRUE;
}

static void demons_destroy(void *state)
{
  DemonsState *st = state;
  if (st == NULL)
    return;
  free_level(st);
  g_clear_pointer(&st->v, nw_volume_free);
  nw_pyramid_free(st->pyr_fixed, st->pr.n_levels);
  nw_pyramid_free(st->pyr_moving, st->pr.n_levels);
  nw_params_free(st->params);
  g_free(st);
}

static void *demons_create(const NwMethodInputs *in, const NwParams *p, GError **error)
{
  if (!nw_demons_check_inputs(in, error))
    return NULL;
  DemonsState *st = g_new0(DemonsState, 1);
  st->params = nw_params_copy(p);
  st->fixed_full = in->fixed;
  st->moving_full = in->moving;
  st->moving_labels = in->moving_labels;
  if (!nw_demons_pyramids(in, p, &st->pyr_fixed, &st->pyr_moving, &st->pr.n_levels, error) ||
      !enter_level(st, 0, error)) {
    demons_destroy(st);
    return NULL;
  }
  return st;
}

static gboolean demons_step(void *state, NwIterationReport *report, GError **error)
{
  DemonsState *st = state;
  if (st->pr.finished) {
    nw_demons_fill_report(&st->pr, st->params, report);
    return TRUE;
  }
  if (st->pr.level_done && !enter_level(st, st->pr.level + 1, error))
    return FALSE;
  if (!iterate(st, error))
    return FALSE;
  nw_demons_progress_advance(&st->pr, st->params);
  nw_demons_fill_report(&st->pr, st->params, report);
  return TRUE;
}

static gboolean demons_set_params(void *state, const NwParams *p, GError **error)
{
  DemonsState *st = state;
  if (!nw_demons_check_live_change(st->params, p, error))
    return FALSE;
  const gboolean new_window = nw_params_get(p, "lcc-sigma") != param(st, "lcc-sigma");
  nw_params_free(st->params);
  st->params = nw_params_copy(p);
  if (new_window && param(st, "similarity") == NW_DEMONS_SIM_LCC) {
    /* The LCC window changed: local statistics and the energy with it. */
    g_clear_pointer(&st->lcc_f, nw_volume_free);
    if (!lcc_fixed_stats(st, error))
      return FALSE;
    if (!lcc_warped_stats(st, error))
      return FALSE;
    similarity_figures(st, TRUE);
    st->pr.prev_energy = st->pr.energy;
  }
  return TRUE;
}

static gboolean demons_publish_frame(void *state, NwFrame *frame, GError **error)
{
  DemonsState *st = state;
  frame->iteration = st->pr.iteration;
  frame->image = nw_volume_try_copy(st->W, error);
  frame->field = frame->image ? nw_volume_try_copy(st->s, error) : NULL;
  return frame->field != NULL;
}

/* v on the full-resolution grid (a copy), whatever the current level. */
static NwVolume *full_velocity(const DemonsState *st, GError **error)
{
  const NwVolume *full = st->fixed_full;
  NwVolume *v = st->pr.level == st->pr.n_levels - 1
                    ? nw_volume_try_copy(st->v, error)
                    : nw_resize(st->v, full->nx, full->ny, full->nz, TRUE, error);
  if (v != NULL)
    nw_volume_set_affine(v, full->vox_to_ras);
  return v;
}

static NwMethodResult *demons_result(void *state, GError **error)
{
  DemonsState *st = state;
  const NwVolume *full = st->fixed_full;
  g_autoptr(NwVolume) v = full_velocity(st, error);
  g_autoptr(NwVolume) fwd = v ? nw_volume_new_like(full, 3, error) : NULL;
  g_autoptr(NwVolume) inv = fwd ? nw_volume_new_like(full, 3, error) : NULL;
  g_autoptr(NwVolume) warped = inv ? nw_volume_new_like(full, 1, error) : NULL;
  g_autoptr(NwVolume) jac = warped ? nw_volume_new_like(full, 1, error) : NULL;
  g_autoptr(NwVolume) scratch = jac ? nw_volume_new_like(full, 3, error) : NULL;
  g_autoptr(NwVolume) labels = NULL;
  if (scratch != NULL && st->moving_labels != NULL &&
      (labels = nw_volume_new_like(full, 1, error)) == NULL)
    return NULL;
  if (scratch == NULL)
    return NULL;
  nw_field_exp_scratch(fwd, v, 1.0, scratch);
  nw_field_exp_scratch(inv, v, -1.0, scratch);
  /* The original moving intensities, also when they were histogram-matched for the run. */
  nw_warp(warped, st->moving_full, fwd, NW_INTERP_LINEAR);
  nw_field_jacobian_det(jac, fwd);
  if (labels != NULL)
    nw_warp(labels, st->moving_labels, fwd, NW_INTERP_NEAREST);
  NwMethodResult *r = nw_method_result_new();
  nw_method_result_add(r, "warped", g_steal_pointer(&warped));
  nw_method_result_add(r, "forward", g_steal_pointer(&fwd));
  nw_method_result_add(r, "inverse", g_steal_pointer(&inv));
  nw_method_result_add(r, "velocity", g_steal_pointer(&v));
  nw_method_result_add(r, "jacobian", g_steal_pointer(&jac));
  if (labels != NULL)
    nw_method_result_add(r, "labels", g_steal_pointer(&labels));
  return r;
}

const NwMethodOps nw_demons_cpu_ops = {
    .name = "demons",
    .device = NW_DEVICE_CPU,
    .description = "Diffeomorphic log-demons (SSD or local correlation), multi-resolution",
    .params = nw_demons_param_specs,
    .n_params = G_N_ELEMENTS(nw_demons_param_specs),
    .needs_moving = TRUE,
    .create = demons_create,
    .step = demons_step,
    .set_params = demons_set_params,
    .publish_frame = demons_publish_frame,
    .result = demons_result,
    .destroy = demons_destroy,
};
