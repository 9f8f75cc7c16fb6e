/* demons_cpu.c — "demons" on the CPU: the diffeomorphic log-domain demons reference
 * (Vercauteren et al. 2009) with SSD or LCC similarity (Lorenzi et al. 2013), readable line by
 * line against the algorithm in demons_method.h. Plain loops with OpenMP. Driven from one
 * job worker thread (method.h) through the job of demons_common.c. Fields in voxel units of
 * the current level, nc = 3. The steps are public (demons_cpu.h) for the kernel parity tests. */
#include "demons_cpu.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "field.h"
#include "nw_error.h"
#include "ordered_sums.h"
#include "resample.h"
#include "smooth.h"

typedef struct {
  NwDemonsJob job; /* first: params, inputs, pyramids, progress, level constants */

  /* Current level. */
  const NwVolume *F, *M;     /* pyr_fixed[level], pyr_moving[level] */
  NwVolume *v, *s, *u, *tmp; /* velocity, exp(v), update, scratch: nc = 3 */
  NwVolume *W;               /* M ∘ s */
  NwVolume *lcc_f;           /* nc = 3: F̂, μF, σF² (lcc only) */
  NwVolume *lcc_w;           /* nc = 4: Ŵ, μW, σW², σFW (lcc only) */
  NwVolume *region;          /* nc = 1: 1 where the masks let the update act (masks only) */
} DemonsState;

static double param(const DemonsState *st, const char *name)
{
  return nw_demons_param(&st->job, name);
}

/* NW_DEMONS_LCC_EPS (intensity range)²: keeps ρ defined where an image is locally flat
 * (there ρ -> 0 and so does the force). */
static double lcc_eps(const DemonsState *st)
{
  return NW_DEMONS_LCC_EPS * st->job.scale2;
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

/* Isotropic Gaussian in voxels of the current level; fails only when its line buffers
 * cannot be allocated. */
static gboolean smooth_iso(NwVolume *v, double sigma_vox, GError **error)
{
  if (sigma_vox <= 0.0)
    return TRUE;
  const double s[3] = {sigma_vox, sigma_vox, sigma_vox};
  return nw_smooth_gaussian(v, s, error);
}

/* ---- the steps (demons_cpu.h) ------------------------------------------------------------ */

/* LCC by local normalisation: with Gaussian windows (sigma lcc-sigma) of local mean μ and
 * variance σ², the normalised image Î = (I - μI) / sqrt(σI² + ε) turns the local correlation
 * into a sum of squares, |F̂ - Ŵ|² summed over a window = 2 (1 - ρ) up to ε, so the SSD
 * demons machinery applied to F̂ and Ŵ maximises ρ; where an image is locally flat (σ² << ε)
 * its normalised version and the force vanish. Intensities are shifted by the level's mean
 * before squaring (precision of G*I² - μ² in float). */

gboolean nw_demons_lcc_fixed_cpu(NwVolume *lcc_f, const NwVolume *F, double shift, double eps,
                                 double sigma, GError **error)
{
  g_return_val_if_fail(lcc_f->nc == 3 && F->nc == 1, FALSE);
  const size_t n = nw_volume_n_voxels(F);
  float *q = lcc_f->data;
  for (size_t e = 0; e < n; e++) {
    double f = F->data[e] - shift;
    q[3 * e] = 0.0f;
    q[3 * e + 1] = (float)f;
    q[3 * e + 2] = (float)(f * f);
  }
  if (!smooth_iso(lcc_f, sigma, error))
    return FALSE;
  for (size_t e = 0; e < n; e++) {
    float *p = q + 3 * e;
    p[2] = fmaxf(p[2] - p[1] * p[1], 0.0f);
    p[0] = (float)((F->data[e] - shift - p[1]) / sqrt(p[2] + eps));
  }
  return TRUE;
}

gboolean nw_demons_lcc_warped_cpu(NwVolume *lcc_w, const NwVolume *F, const NwVolume *W,
                                  const NwVolume *lcc_f, double shift, double eps, double sigma,
                                  GError **error)
{
  g_return_val_if_fail(lcc_w->nc == 4 && lcc_f->nc == 3, FALSE);
  const size_t n = nw_volume_n_voxels(F);
  float *q = lcc_w->data;
#pragma omp parallel for schedule(static)
  for (size_t e = 0; e < n; e++) {
    double w = W->data[e] - shift, f = F->data[e] - shift;
    q[4 * e] = 0.0f;
    q[4 * e + 1] = (float)w;
    q[4 * e + 2] = (float)(w * w);
    q[4 * e + 3] = (float)(f * w);
  }
  if (!smooth_iso(lcc_w, sigma, error))
    return FALSE;
#pragma omp parallel for schedule(static)
  for (size_t e = 0; e < n; e++) {
    float *p = q + 4 * e;
    p[2] = fmaxf(p[2] - p[1] * p[1], 0.0f);
    p[3] = p[3] - lcc_f->data[3 * e + 1] * p[1];
    p[0] = (float)((W->data[e] - shift - p[1]) / sqrt(p[2] + eps));
  }
  return TRUE;
}

/* Local correlation ρ = σFW / sqrt((σF² + ε)(σW² + ε)) at voxel e. */
static inline double lcc_rho(const NwVolume *lcc_f, const NwVolume *lcc_w, double eps, size_t e)
{
  const float *pf = lcc_f->data + 3 * e, *pw = lcc_w->data + 4 * e;
  return pw[3] / sqrt((pf[2] + eps) * (pw[2] + eps));
}

/* The similarity sums' inputs, for the chunks of nw_ordered_reduce. */
typedef struct {
  const NwVolume *F, *W, *lcc_f, *lcc_w, *region;
  double shift, eps;
} SimSumsIn;

enum { S_SF, S_SW, S_SFF, S_SWW, S_SFW, S_SD2, S_SLCC, S_NLCC, S_N, S_COUNT };

static void sim_sums_chunk(double *a, size_t begin, size_t end, const void *user)
{
  const SimSumsIn *in = user;
  const gboolean lcc = in->lcc_f != NULL && in->lcc_w != NULL;
  for (size_t e = begin; e < end; e++) {
    if (in->region != NULL && in->region->data[e] == 0.0f)
      continue; /* outside the masks */
    a[S_N] += 1.0;
    const double f = in->F->data[e] - in->shift, w = in->W->data[e] - in->shift;
    a[S_SF] += f;
    a[S_SW] += w;
    a[S_SFF] += f * f;
    a[S_SWW] += w * w;
    a[S_SFW] += f * w;
    a[S_SD2] += (f - w) * (f - w);
    if (lcc && in->lcc_f->data[3 * e + 2] > in->eps) {
      a[S_SLCC] += lcc_rho(in->lcc_f, in->lcc_w, in->eps, e); /* the fixed image's structured voxels only */
      a[S_NLCC] += 1.0;
    }
  }
}

/* In fixed chunks added in order (ordered_sums.h): the same bits for any thread count. */
void nw_demons_similarity_sums_cpu(NwDemonsSimSums *t, const NwVolume *F, const NwVolume *W,
                                   const NwVolume *lcc_f, const NwVolume *lcc_w,
                                   const NwVolume *region, double shift, double eps)
{
  const SimSumsIn in = {F, W, lcc_f, lcc_w, region, shift, eps};
  double v[S_COUNT];
  nw_ordered_reduce(v, S_COUNT, NULL, nw_volume_n_voxels(F), sim_sums_chunk, &in);
  *t = (NwDemonsSimSums){v[S_SF],  v[S_SW],   v[S_SFF],  v[S_SWW], v[S_SFW],
                         v[S_SD2], v[S_SLCC], v[S_NLCC], v[S_N]};
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
static void update_at(const NwVolume *F, const NwVolume *W, const NwVolume *lcc_f,
                      const NwVolume *lcc_w, int force, double alpha, double den_min, int i, int j,
                      int k, double u[3])
{
  const size_t e = nw_volume_index(F, i, j, k);
  double gf[3], gw[3], J[3], r;
  if (lcc_f != NULL) {
    gradient_c_at(lcc_f, 0, i, j, k, gf);
    gradient_c_at(lcc_w, 0, i, j, k, gw);
    r = (double)lcc_f->data[3 * e] - lcc_w->data[4 * e];
  } else {
    gradient_c_at(F, 0, i, j, k, gf);
    gradient_c_at(W, 0, i, j, k, gw);
    r = (double)F->data[e] - W->data[e];
  }
  for (int c = 0; c < 3; c++)
    J[c] = force == NW_DEMONS_FORCE_FIXED    ? gf[c]
           : force == NW_DEMONS_FORCE_MOVING ? gw[c]
                                             : 0.5 * (gf[c] + gw[c]);
  demons_step_vec(r, J, alpha, den_min, u);
}

void nw_demons_update_cpu(NwVolume *u, const NwVolume *F, const NwVolume *W, const NwVolume *lcc_f,
                          const NwVolume *lcc_w, const NwVolume *region, int force, double alpha,
                          double den_min)
{
  g_return_if_fail(u->nc == 3 && (lcc_f == NULL) == (lcc_w == NULL));
#pragma omp parallel for schedule(static)
  for (int k = 0; k < F->nz; k++)
    for (int j = 0; j < F->ny; j++)
      for (int i = 0; i < F->nx; i++) {
        const size_t e = nw_volume_index(F, i, j, k);
        double d[3] = {0.0, 0.0, 0.0}; /* outside the masks: no force */
        if (region == NULL || region->data[e] != 0.0f)
          update_at(F, W, lcc_f, lcc_w, force, alpha, den_min, i, j, k, d);
        float *p = u->data + 3 * e;
        for (int c = 0; c < 3; c++)
          p[c] = (float)d[c];
      }
}

void nw_demons_region_cpu(NwVolume *region, const NwVolume *fixed_mask, const NwVolume *moving_mask,
                          const NwVolume *s)
{
  g_return_if_fail(region->nc == 1);
  const size_t n = nw_volume_n_voxels(region);
  if (moving_mask != NULL)
    nw_warp(region, moving_mask, s, NW_INTERP_LINEAR); /* M_mask ∘ s */
#pragma omp parallel for schedule(static)
  for (size_t e = 0; e < n; e++) {
    const gboolean in_m = moving_mask == NULL || region->data[e] >= 0.5f;
    const gboolean in_f = fixed_mask == NULL || fixed_mask->data[e] >= 0.5f;
    region->data[e] = in_m && in_f ? 1.0f : 0.0f;
  }
}

/* ---- the back end of the job (NwDemonsBackend) ------------------------------------------- */

static gboolean lcc_fixed(NwDemonsJob *job, GError **error)
{
  DemonsState *st = (DemonsState *)job;
  return nw_demons_lcc_fixed_cpu(st->lcc_f, st->F, job->shift, lcc_eps(st), param(st, "lcc-sigma"),
                                 error);
}

/* s = exp(v), W = M ∘ s, and every figure of that state. */
static gboolean evaluate(NwDemonsJob *job, GError **error)
{
  DemonsState *st = (DemonsState *)job;
  const gboolean lcc = nw_demons_is_lcc(job);
  job->pr.squarings = nw_field_exp_scratch(st->s, st->v, 1.0, st->tmp); /* tmp is free here */
  nw_warp(st->W, st->M, st->s, NW_INTERP_LINEAR);
  if (st->region != NULL)
    nw_demons_region_cpu(st->region, nw_demons_level_mask(job->pyr_fixed_mask, job->pr.level),
                         nw_demons_level_mask(job->pyr_moving_mask, job->pr.level), st->s);
  if (lcc && !nw_demons_lcc_warped_cpu(st->lcc_w, st->F, st->W, st->lcc_f, job->shift, lcc_eps(st),
                                       param(st, "lcc-sigma"), error))
    return FALSE;
  NwDemonsSimSums t;
  nw_demons_similarity_sums_cpu(&t, st->F, st->W, lcc ? st->lcc_f : NULL, lcc ? st->lcc_w : NULL,
                                st->region, job->shift, lcc_eps(st));
  nw_demons_set_figures(&job->pr, &t, lcc);
  /* det(I + ∇s) into tmp's first third (tmp is free between iterations). */
  NwVolume det = *st->F;
  det.nc = 1;
  det.data = st->tmp->data;
  nw_field_jacobian_det(&det, st->s);
  NwJacobianStats js;
  nw_jacobian_stats(&det, &js);
  job->pr.min_jac = js.min;
  job->pr.folds = js.n_folds;
  return TRUE;
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
static gboolean iterate(NwDemonsJob *job, GError **error)
{
  DemonsState *st = (DemonsState *)job;
  const gboolean lcc = nw_demons_is_lcc(job);
  const double den_min = NW_DEMONS_DEN_MIN * (lcc ? 1.0 : job->scale2); /* demons_method.h */
  nw_demons_update_cpu(st->u, st->F, st->W, lcc ? st->lcc_f : NULL, lcc ? st->lcc_w : NULL,
                       st->region, (int)param(st, "force"), param(st, "max-step"), den_min);
  if (!smooth_iso(st->u, param(st, "sigma-fluid"), error))
    return FALSE;
  job->pr.max_u = nw_field_max_norm(st->u);
  velocity_update(st);
  if (!smooth_iso(st->v, param(st, "sigma-diff"), error))
    return FALSE;
  job->pr.prev_energy = job->pr.energy;
  return evaluate(job, error);
}

static void free_level(DemonsState *st)
{
  g_clear_pointer(&st->s, nw_volume_free);
  g_clear_pointer(&st->u, nw_volume_free);
  g_clear_pointer(&st->tmp, nw_volume_free);
  g_clear_pointer(&st->W, nw_volume_free);
  g_clear_pointer(&st->lcc_f, nw_volume_free);
  g_clear_pointer(&st->lcc_w, nw_volume_free);
  g_clear_pointer(&st->region, nw_volume_free);
}

/* Carry v onto level l's grid (zero at the first level) and set up that level's buffers. */
static gboolean setup_level(NwDemonsJob *job, int l, GError **error)
{
  DemonsState *st = (DemonsState *)job;
  free_level(st);
  st->F = job->pyr_fixed[l];
  st->M = job->pyr_moving[l];
  NwVolume *v = nw_demons_carry_velocity(st->v, st->F, error);
  if (v == NULL)
    return FALSE;
  g_clear_pointer(&st->v, nw_volume_free);
  st->v = v;
  const gboolean lcc = nw_demons_is_lcc(job);
  return (st->s = nw_volume_new_like(st->F, 3, error)) != NULL &&
         (st->u = nw_volume_new_like(st->F, 3, error)) != NULL &&
         (st->tmp = nw_volume_new_like(st->F, 3, error)) != NULL &&
         (st->W = nw_volume_new_like(st->F, 1, error)) != NULL &&
         (!lcc || ((st->lcc_f = nw_volume_new_like(st->F, 3, error)) != NULL &&
                   (st->lcc_w = nw_volume_new_like(st->F, 4, error)) != NULL)) &&
         (!nw_demons_has_masks(job) || (st->region = nw_volume_new_like(st->F, 1, error)) != NULL);
}

static const NwDemonsBackend cpu_backend = {
    .setup_level = setup_level,
    .lcc_fixed = lcc_fixed,
    .evaluate = evaluate,
    .iterate = iterate,
};

/* ---- the method interface ---------------------------------------------------------------- */

static void demons_destroy(void *state)
{
  DemonsState *st = state;
  if (st == NULL)
    return;
  free_level(st);
  g_clear_pointer(&st->v, nw_volume_free);
  nw_demons_job_clear(&st->job);
  g_free(st);
}

static void *demons_create(const NwMethodInputs *in, const NwParams *p, GError **error)
{
  if (!nw_demons_check_inputs(in, error))
    return NULL;
  DemonsState *st = g_new0(DemonsState, 1);
  if (!nw_demons_job_start(&st->job, &cpu_backend, in, p, error)) {
    demons_destroy(st);
    return NULL;
  }
  return st;
}

static gboolean demons_step(void *state, NwIterationReport *report, GError **error)
{
  return nw_demons_job_step(state, &cpu_backend, report, error);
}

static gboolean demons_set_params(void *state, const NwParams *p, GError **error)
{
  return nw_demons_job_set_params(state, &cpu_backend, p, error);
}

static gboolean demons_publish_frame(void *state, NwFrame *frame, GError **error)
{
  DemonsState *st = state;
  frame->iteration = st->job.pr.iteration;
  frame->image = nw_volume_try_copy(st->W, error);
  frame->field = frame->image ? nw_volume_try_copy(st->s, error) : NULL;
  return frame->field != NULL;
}

/* v on the full-resolution grid (a copy), whatever the current level. */
static NwVolume *full_velocity(const DemonsState *st, GError **error)
{
  const NwVolume *full = st->job.fixed_full;
  NwVolume *v = st->job.pr.level == st->job.pr.n_levels - 1
                    ? nw_volume_try_copy(st->v, error)
                    : nw_resize(st->v, full->nx, full->ny, full->nz, TRUE, error);
  if (v != NULL)
    nw_volume_set_affine(v, full->vox_to_ras);
  return v;
}

static NwMethodResult *demons_result(void *state, GError **error)
{
  DemonsState *st = state;
  const NwVolume *full = st->job.fixed_full;
  NwDemonsOutputs o = {0};
  o.velocity = full_velocity(st, error);
  o.forward = o.velocity ? nw_volume_new_like(full, 3, error) : NULL;
  o.inverse = o.forward ? nw_volume_new_like(full, 3, error) : NULL;
  o.warped = o.inverse ? nw_volume_new_like(full, 1, error) : NULL;
  o.jacobian = o.warped ? nw_volume_new_like(full, 1, error) : NULL;
  g_autoptr(NwVolume) scratch = o.jacobian ? nw_volume_new_like(full, 3, error) : NULL;
  if (scratch == NULL ||
      (st->job.moving_labels != NULL && (o.labels = nw_volume_new_like(full, 1, error)) == NULL)) {
    nw_demons_outputs_clear(&o);
    return NULL;
  }
  nw_field_exp_scratch(o.forward, o.velocity, 1.0, scratch);
  nw_field_exp_scratch(o.inverse, o.velocity, -1.0, scratch);
  /* The original moving intensities, also when they were histogram-matched for the run. */
  nw_warp(o.warped, st->job.moving_full, o.forward, NW_INTERP_LINEAR);
  nw_field_jacobian_det(o.jacobian, o.forward);
  if (o.labels != NULL)
    nw_warp(o.labels, st->job.moving_labels, o.forward, NW_INTERP_NEAREST);
  return nw_demons_result_take(&o);
}

const NwMethodOps nw_demons_cpu_ops = {
    .name = "demons",
    .device = NW_DEVICE_CPU,
    .description = "Diffeomorphic log-demons (SSD or local correlation), multi-resolution",
    .params = nw_demons_param_specs,
    .n_params = NW_DEMONS_N_PARAMS,
    .needs_moving = TRUE,
    .plot_figures = nw_demons_plot_figures,
    .create = demons_create,
    .step = demons_step,
    .set_params = demons_set_params,
    .publish_frame = demons_publish_frame,
    .result = demons_result,
    .destroy = demons_destroy,
};
