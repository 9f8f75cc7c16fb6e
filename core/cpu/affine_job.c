/* affine_job.c — the "affine" job (affine_method.h) that every back end of the cost shares:
 * inputs, pyramids, starts, the runs per level on the host (GSL's Nelder–Mead nmsimplex2, or
 * its BFGS vector_bfgs2 on central differences of the cost), reports, frames and results. The
 * job's worker thread. */
#include "affine_method.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multimin.h>
#include <math.h>
#include <string.h>

#include "affine_init.h"
#include "affine_resample.h"
#include "nw_error.h"
#include "pyramid.h"

struct NwAffineJob {
  NwAffineCostSpec spec;
  NwAffinePrecision precision; /* of every level's images in the cost */
  int levels_asked, iterations, dim, restarts;
  double step_vox, tol_vox, radius_mm;
  const NwVolume *fixed_full, *moving_full; /* borrowed */
  NwVolume **pyr[4]; /* fixed, moving, fixed mask, moving mask; [n_levels], 0 = coarsest */
  int n_levels;
  NwAffineCost *cost;
  GArray *starts;   /* NwTransform, tried at level 0 */
  int start;        /* the run's start at level 0 */
  NwTransform best; /* best transform so far (of finished runs) */
  double best_cost; /* at level 0 among the starts */
  NwAffineCostValue best_value;
  /* the current run */
  int level, iter_in_run, iter_in_level; /* the latter goes on over a level's restarts */
  int restarts_left;                     /* fresh simplices still allowed at this level */
  double level_cost;    /* cost at the end of the level's previous run (+inf: none yet) */
  NwTransform run_base; /* the run's start: members outside the free set come from it */
  double mm_per_unit[NW_XFORM_MAX_PARAMS];
  gsl_multimin_fminimizer *nm;
  gsl_multimin_function fn; /* GSL keeps a pointer to it for the whole run */
  /* optimizer "gradient": BFGS instead of the simplex, its gradient by central differences
   * of h_mm (a quarter of the level's voxel) in each parameter */
  gboolean gradient;
  gsl_multimin_fdfminimizer *gm;
  gsl_multimin_function_fdf fdf;
  gsl_vector *probe; /* where the differences are taken */
  double h_mm;
  NwAffineCostValue last; /* of the latest evaluation */
  /* the current level's start (G_MESSAGES_DEBUG=all): its set-up, evaluations, requests */
  gint64 level_t0;
  guint64 level_evals0, level_requests0;
  int level_calls[3]; /* the level's calls of the cost alone, the gradient, both */
  GError *eval_error;     /* an error inside the cost function, reported by step */
  gboolean finished;
};

/* ---- inputs -------------------------------------------------------------------------- */

static gboolean slice_in_xy_plane(const NwVolume *v)
{
  const double *a = v->vox_to_ras; /* i and j move in x and y only */
  return fabs(a[8]) < 1e-6 && fabs(a[9]) < 1e-6;
}

/* The inputs' shapes, grids and masks; their voxels are checked by start_finite_check. */
static gboolean check_inputs(const NwMethodInputs *in, int *dim, GError **error)
{
  if (in->fixed == NULL || in->moving == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "affine: needs a fixed and a moving image");
    return FALSE;
  }
  if (in->fixed->nc != 1 || in->moving->nc != 1) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "affine: the images must be scalar (fixed has %d, moving %d components)",
                in->fixed->nc, in->moving->nc);
    return FALSE;
  }
  const gboolean f2 = in->fixed->nz == 1, m2 = in->moving->nz == 1;
  if (f2 != m2) {
    g_set_error(error, NW_ERROR, NW_ERROR_MISMATCH,
                "affine: the fixed image is %s and the moving image %s: both must be 2D (one "
                "slice) or both 3D",
                f2 ? "2D" : "3D", m2 ? "2D" : "3D");
    return FALSE;
  }
  *dim = f2 ? 2 : 3;
  if (*dim == 2 && !(slice_in_xy_plane(in->fixed) && slice_in_xy_plane(in->moving))) {
    g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED,
                "affine: 2D registration needs slices in the world x-y plane (axial)");
    return FALSE;
  }
  const NwVolume *masks[2][2] = {{in->fixed_mask, in->fixed}, {in->moving_mask, in->moving}};
  const char *which[2] = {"fixed", "moving"};
  for (int i = 0; i < 2; i++)
    if (masks[i][0] != NULL && !nw_volume_same_grid(masks[i][0], masks[i][1])) {
      g_set_error(error, NW_ERROR, NW_ERROR_MISMATCH,
                  "affine: the %s mask is not on the %s image's grid", which[i], which[i]);
      return FALSE;
    }
  return TRUE;
}

/* Every voxel of both images finite: a thread's work beside the pyramids' (they only read
 * and resample the images, which NaN does not upset), joined before anything uses a level's
 * values (finite_joined). Scanning two 3072² images took 1.0-1.5 ms of a 17 ms job on the
 * H100 host, in front of the uploads. */
typedef struct {
  const NwVolume *fixed, *moving;
  GError *error;
} FiniteCheck;

static gpointer check_finite(gpointer data)
{
  FiniteCheck *c = data;
  if (nw_volume_check_finite(c->fixed, "fixed image", &c->error))
    nw_volume_check_finite(c->moving, "moving image", &c->error);
  return NULL;
}

/* The check started (a thread, or here where none can be had). */
static GThread *start_finite_check(FiniteCheck *c)
{
  GThread *t = g_thread_try_new("nw-check-finite", check_finite, c, NULL);
  if (t == NULL)
    check_finite(c);
  return t;
}

/* Its outcome, once it is over; FALSE with its error where a voxel was not finite. */
static gboolean finite_joined(GThread *t, FiniteCheck *c, GError **error)
{
  if (t != NULL)
    g_thread_join(t);
  if (c->error == NULL)
    return TRUE;
  g_propagate_error(error, c->error);
  c->error = NULL;
  return FALSE;
}

/* The choice name of an enum parameter. */
static const char *choice(const NwParams *p, const char *name)
{
  const int i = nw_params_find(p, name);
  return p->specs[i].choices[(int)p->values[i]];
}

static void read_params(NwAffineJob *j, const NwParams *p, NwTransformKind *kind,
                        NwAffineStartSpec *starts)
{
  const char *m = choice(p, "metric"), *k = choice(p, "transform"), *in = choice(p, "init");
  j->spec.metric = g_str_equal(m, "mse")  ? NW_METRIC_MSE
                   : g_str_equal(m, "mi") ? NW_METRIC_MI
                                          : NW_METRIC_NCC;
  nw_sampler_parse(choice(p, "interp"), &j->spec.sampler, NULL);
  j->spec.bins = nw_params_get_int(p, "bins");
  j->spec.parzen = nw_params_get(p, "parzen") != 0.0;
  *kind = g_str_equal(k, "affine")       ? NW_XFORM_AFFINE
          : g_str_equal(k, "similarity") ? NW_XFORM_SIMILARITY
                                         : NW_XFORM_RIGID;
  starts->init = g_str_equal(in, "geometry")  ? NW_AFFINE_INIT_GEOMETRY
                 : g_str_equal(in, "moments") ? NW_AFFINE_INIT_MOMENTS
                                              : NW_AFFINE_INIT_MASS;
  starts->rotation_starts = nw_params_get_int(p, "rotation-starts");
  j->levels_asked = nw_params_get_int(p, "levels");
  j->iterations = nw_params_get_int(p, "iterations");
  j->step_vox = nw_params_get(p, "step");
  j->tol_vox = nw_params_get(p, "tolerance");
  j->restarts = nw_params_get_int(p, "restarts");
  j->gradient = g_str_equal(choice(p, "optimizer"), "gradient");
  /* the parameter's choices are the precisions' names (/affine/precision-names) */
  if (!nw_affine_precision_from_name(choice(p, "precision"), &j->precision)) {
    g_warn_if_reached();
    j->precision = NW_AFFINE_PRECISION_U16;
  }
}

/* ---- pyramids ------------------------------------------------------------------------ */

/* Pyramids of the images and masks with one level count, the smaller image's, made by the
 * cost's back end (on the GPU, where the levels then stay). */
static gboolean build_pyramids(NwAffineJob *j, const NwMethodInputs *in, GError **error)
{
  const NwVolume *src[4] = {in->fixed, in->moving, in->fixed_mask, in->moving_mask};
  j->n_levels = MIN(nw_pyramid_levels(in->fixed, j->levels_asked),
                    nw_pyramid_levels(in->moving, j->levels_asked));
  for (int i = 0; i < 4; i++)
    if (src[i] != NULL &&
        (j->pyr[i] = nw_affine_cost_pyramid(j->cost, src[i], j->n_levels, error)) == NULL)
      return FALSE;
  return TRUE;
}

/* ---- the simplex --------------------------------------------------------------------- */

/* The transform of a vertex x (free parameters in mm). */
static void vertex_transform(const NwAffineJob *j, const gsl_vector *x, NwTransform *t)
{
  double p[NW_XFORM_MAX_PARAMS];
  for (size_t i = 0; i < x->size; i++)
    p[i] = gsl_vector_get(x, i) / j->mm_per_unit[i];
  *t = j->run_base;
  nw_transform_set_params(t, p);
}

/* ... as a 4x4 RAS matrix. */
static void vertex_matrix(const NwAffineJob *j, const gsl_vector *x, double m[16])
{
  NwTransform t;
  vertex_transform(j, x, &t);
  nw_transform_matrix(&t, m);
}

static double cost_at(const gsl_vector *x, void *data)
{
  NwAffineJob *j = data;
  if (j->eval_error != NULL)
    return GSL_NAN;
  j->level_calls[0]++;
  NwTransform t;
  vertex_transform(j, x, &t);
  if (!nw_affine_cost_eval(j->cost, &t, &j->last, &j->eval_error))
    return GSL_NAN; /* GSL stops the run; step reports eval_error */
  return j->last.cost;
}

/* The cost at x (when f is not NULL) and its gradient by central differences (the cost is
 * interpolated, so smooth at the scale of h), all in one batch of evaluations: on the GPU
 * one launch for the 2n + 1 transforms, whose probes, a quarter voxel apart, read nearly the
 * same voxels. */
static void probe_batch(NwAffineJob *j, const gsl_vector *x, double *f, gsl_vector *g)
{
  G_STATIC_ASSERT(2 * NW_XFORM_MAX_PARAMS + 1 <= NW_AFFINE_MAX_BATCH);
  double m[NW_AFFINE_MAX_BATCH][16];
  NwAffineCostValue v[NW_AFFINE_MAX_BATCH];
  int k = 0;
  j->level_calls[f != NULL ? 2 : 1]++;
  if (f != NULL)
    vertex_matrix(j, x, m[k++]);
  gsl_vector_memcpy(j->probe, x);
  for (size_t i = 0; i < x->size; i++) {
    const double xi = gsl_vector_get(x, i);
    gsl_vector_set(j->probe, i, xi + j->h_mm);
    vertex_matrix(j, j->probe, m[k++]);
    gsl_vector_set(j->probe, i, xi - j->h_mm);
    vertex_matrix(j, j->probe, m[k++]);
    gsl_vector_set(j->probe, i, xi);
  }
  if (j->eval_error != NULL ||
      !nw_affine_cost_eval_batch(j->cost, (const double(*)[16])m, k, v, &j->eval_error)) {
    if (f != NULL)
      *f = GSL_NAN; /* GSL stops the run; step reports eval_error */
    gsl_vector_set_all(g, GSL_NAN);
    return;
  }
  const int first = f != NULL ? 1 : 0;
  if (f != NULL)
    *f = v[0].cost;
  j->last = v[f != NULL ? 0 : k - 1];
  for (size_t i = 0; i < x->size; i++)
    gsl_vector_set(g, i, (v[first + 2 * i].cost - v[first + 2 * i + 1].cost) / (2.0 * j->h_mm));
}

static void gradient_at(const gsl_vector *x, void *data, gsl_vector *g)
{
  probe_batch(data, x, NULL, g);
}

static void cost_and_gradient_at(const gsl_vector *x, void *data, double *f, gsl_vector *g)
{
  probe_batch(data, x, f, g);
}

/* The point the current run stands at. */
static const gsl_vector *run_x(const NwAffineJob *j)
{
  return j->gradient ? gsl_multimin_fdfminimizer_x(j->gm) : gsl_multimin_fminimizer_x(j->nm);
}

/* How far the run still searches (mm): the simplex's size, or BFGS's last step. */
static double run_size(const NwAffineJob *j)
{
  return j->gradient ? gsl_blas_dnrm2(gsl_multimin_fdfminimizer_dx(j->gm))
                     : gsl_multimin_fminimizer_size(j->nm);
}

/* The cost at the point the current run stands at. */
static double run_cost(const NwAffineJob *j)
{
  return j->gradient ? gsl_multimin_fdfminimizer_minimum(j->gm)
                     : gsl_multimin_fminimizer_minimum(j->nm);
}

/* Whether the cost went from before to after by more than relative 1e-6: well below what a
 * run that moved changes and above the rounding of the cost. */
static gboolean lowered(double before, double after)
{
  return isinf(before) || after < before - 1e-6 * fabs(before);
}

/* Mean voxel size of the fixed image at level l over the axes in play (mm). */
static double level_voxel_mm(const NwAffineJob *j, int l)
{
  const NwVolume *f = j->pyr[0][l];
  double s = 0.0;
  for (int a = 0; a < j->dim; a++)
    s += f->spacing_mm[a];
  return s / j->dim;
}

static gboolean start_run(NwAffineJob *j, const NwTransform *from, GError **error)
{
  const int n = nw_transform_n_params(from->dim, from->kind);
  j->run_base = *from;
  j->iter_in_run = 0;
  nw_transform_param_mm(from, j->radius_mm, j->mm_per_unit);
  double p[NW_XFORM_MAX_PARAMS];
  nw_transform_get_params(from, p);
  gsl_vector *x = gsl_vector_alloc(n), *step = gsl_vector_alloc(n);
  for (int i = 0; i < n; i++) {
    gsl_vector_set(x, i, p[i] * j->mm_per_unit[i]);
    gsl_vector_set(step, i, j->step_vox * level_voxel_mm(j, j->level));
  }
  int status;
  if (j->gradient) {
    if (j->gm == NULL) {
      j->gm = gsl_multimin_fdfminimizer_alloc(gsl_multimin_fdfminimizer_vector_bfgs2, n);
      j->probe = gsl_vector_alloc(n);
    }
    j->h_mm = 0.25 * level_voxel_mm(j, j->level);
    j->fdf = (gsl_multimin_function_fdf){
        .f = cost_at, .df = gradient_at, .fdf = cost_and_gradient_at, .n = n, .params = j};
    /* the first trial step as long as the simplex's first edge; line searches to 0.1 */
    status = gsl_multimin_fdfminimizer_set(j->gm, &j->fdf, x,
                                           j->step_vox * level_voxel_mm(j, j->level), 0.1);
  } else {
    if (j->nm == NULL)
      j->nm = gsl_multimin_fminimizer_alloc(gsl_multimin_fminimizer_nmsimplex2, n);
    j->fn = (gsl_multimin_function){.f = cost_at, .n = n, .params = j};
    status = gsl_multimin_fminimizer_set(j->nm, &j->fn, x, step);
  }
  gsl_vector_free(x);
  gsl_vector_free(step);
  if (j->eval_error != NULL) {
    g_propagate_error(error, j->eval_error);
    j->eval_error = NULL;
    return FALSE;
  }
  if (status != GSL_SUCCESS) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "affine: %s: %s",
                j->gradient ? "gradient search" : "simplex", gsl_strerror(status));
    return FALSE;
  }
  return TRUE;
}

static gboolean enter_level(NwAffineJob *j, int l, GError **error)
{
  j->level = l;
  j->restarts_left = l > 0 ? j->restarts : 0; /* level 0 has its starts instead */
  j->iter_in_level = 0;
  j->level_cost = INFINITY;
  NwAffineLevel lv = {.dim = j->dim,
                      .fixed = j->pyr[0][l],
                      .moving = j->pyr[1][l],
                      .fixed_mask = j->pyr[2] ? j->pyr[2][l] : NULL,
                      .moving_mask = j->pyr[3] ? j->pyr[3][l] : NULL,
                      .precision = j->precision};
  const gint64 t0 = g_get_monotonic_time();
  j->level_t0 = t0;
  j->level_evals0 = nw_affine_cost_count(j->cost);
  j->level_requests0 = nw_affine_cost_requests(j->cost);
  memset(j->level_calls, 0, sizeof j->level_calls);
  if (!nw_affine_cost_set_level(j->cost, &lv, error)) {
    g_prefix_error(error, "affine: level %d of %d: ", l + 1, j->n_levels);
    return FALSE;
  }
  g_debug("affine: level %d of %d (%d x %d x %d) set in %.1f ms, %" G_GUINT64_FORMAT
          " evaluations before it",
          l + 1, j->n_levels, lv.fixed->nx, lv.fixed->ny, lv.fixed->nz,
          (g_get_monotonic_time() - t0) / 1e3, nw_affine_cost_count(j->cost));
  const NwTransform *from = l == 0 ? &g_array_index(j->starts, NwTransform, 0) : &j->best;
  return start_run(j, from, error);
}

/* Where a level's time went (G_MESSAGES_DEBUG=all); on the GPU each request is a launch and
 * a wait for its result, ~15 µs at the coarse levels whatever it holds (the H100 host). */
static void level_ended(const NwAffineJob *j)
{
  const guint64 evals = nw_affine_cost_count(j->cost) - j->level_evals0;
  const guint64 requests = nw_affine_cost_requests(j->cost) - j->level_requests0;
  g_debug("affine: level %d of %d took %.2f ms from its set-up: %" G_GUINT64_FORMAT
          " evaluations in %" G_GUINT64_FORMAT " requests (the optimiser asked for the cost %d"
          " times, the gradient %d, both %d)",
          j->level + 1, j->n_levels, (g_get_monotonic_time() - j->level_t0) / 1e3, evals, requests,
          j->level_calls[0], j->level_calls[1], j->level_calls[2]);
}

/* The run ended: keep its result, then the next start, the next level or the end. */
static gboolean end_run(NwAffineJob *j, GError **error)
{
  NwTransform t;
  vertex_transform(j, run_x(j), &t);
  NwAffineCostValue v;
  if (!nw_affine_cost_eval(j->cost, &t, &v, error))
    return FALSE;
  /* At level 0 the starts compete; at finer levels the run refines the winner. */
  if (j->level > 0 || j->start == 0 || v.cost < j->best_cost) {
    j->best = t;
    j->best_cost = v.cost;
    j->best_value = v;
  }
  /* A fresh simplex from the point reached while the last run gained. */
  if (j->level > 0 && j->restarts_left > 0 && lowered(j->level_cost, v.cost)) {
    j->restarts_left--;
    j->level_cost = v.cost;
    return start_run(j, &t, error);
  }
  if (j->level == 0 && j->start + 1 < (int)j->starts->len) {
    j->start++;
    return start_run(j, &g_array_index(j->starts, NwTransform, j->start), error);
  }
  level_ended(j);
  if (j->level + 1 < j->n_levels)
    return enter_level(j, j->level + 1, error);
  j->finished = TRUE;
  return TRUE;
}

/* ---- the method's operations ----------------------------------------------------------- */

static double rms_half_extent_mm(const NwVolume *f, int dim)
{
  const int n[3] = {f->nx, f->ny, f->nz};
  double s = 0.0;
  for (int a = 0; a < dim; a++) {
    const double e = 0.5 * n[a] * f->spacing_mm[a];
    s += e * e;
  }
  return sqrt(s / dim);
}

/* What both constructors share before the pyramids: the parameters, the base transform about
 * the fixed image's centre (initial_transform's, when given) and the cost. */
static NwAffineJob *job_begin(const NwAffineCostBackend *be, const void *backend_data,
                              const NwParams *p, int dim, const NwVolume *fixed,
                              const double *initial_transform, NwTransform *base,
                              NwAffineStartSpec *ss, GError **error)
{
  /* GSL's default handler aborts the process; its statuses are checked here instead. */
  gsl_set_error_handler_off();
  NwAffineJob *j = g_new0(NwAffineJob, 1);
  NwTransformKind kind;
  read_params(j, p, &kind, ss);
  j->spec.backend_data = backend_data;
  j->dim = dim;
  j->radius_mm = rms_half_extent_mm(fixed, dim);
  /* the cost first: it owns backend_data from here on, whatever fails after */
  if ((j->cost = nw_affine_cost_new(be, &j->spec, error)) == NULL) {
    nw_affine_job_free(j);
    return NULL;
  }
  double c[3];
  nw_volume_centre_mm(fixed, c);
  nw_transform_init(base, dim, kind, c);
  if (initial_transform != NULL &&
      !nw_transform_from_matrix(base, dim, kind, c, initial_transform, error)) {
    g_prefix_error(error, "affine: initial transform: ");
    nw_affine_job_free(j);
    return NULL;
  }
  return j;
}

/* ... and after them: the starts (from the coarsest level's images) and the first level. */
static gboolean job_start(NwAffineJob *j, const NwTransform *base, const NwAffineStartSpec *ss,
                          gboolean initial, const NwVolume *const coarse[4], GError **error)
{
  if (initial) {
    /* the caller's start is the only one: it says where the images already agree */
    j->starts = g_array_new(FALSE, FALSE, sizeof(NwTransform));
    g_array_append_val(j->starts, *base);
  } else {
    j->starts = nw_affine_starts(coarse[0], coarse[2], coarse[1], coarse[3], base, ss);
  }
  j->best = g_array_index(j->starts, NwTransform, 0);
  return enter_level(j, 0, error);
}

NwAffineJob *nw_affine_job_new(const NwAffineCostBackend *be, const NwMethodInputs *in,
                               const NwParams *p, GError **error)
{
  int dim = 3;
  const gint64 t_start = g_get_monotonic_time();
  if (!check_inputs(in, &dim, error))
    return NULL;
  FiniteCheck finite = {in->fixed, in->moving, NULL};
  GThread *checking = start_finite_check(&finite);
  const gint64 t_checked = g_get_monotonic_time();
  NwTransform base;
  NwAffineStartSpec ss;
  NwAffineJob *j =
      job_begin(be, NULL, p, dim, in->fixed, in->initial_transform, &base, &ss, error);
  if (j == NULL) {
    finite_joined(checking, &finite, NULL);
    return NULL;
  }
  j->fixed_full = in->fixed;
  j->moving_full = in->moving;
  /* Where a job's start goes (G_MESSAGES_DEBUG=all): the shape checks, the back end's
   * creation, the pyramids (the voxels' check beside them), the starts and the first level. */
  gint64 t[4];
  t[0] = g_get_monotonic_time();
  GError *why = NULL;
  const gboolean made = build_pyramids(j, in, &why);
  t[1] = g_get_monotonic_time();
  /* a voxel that is not finite is the error to report, whatever else failed */
  const gboolean finite_ok = finite_joined(checking, &finite, error);
  t[2] = g_get_monotonic_time();
  if (!finite_ok || !made) {
    if (finite_ok)
      g_propagate_error(error, why);
    else
      g_clear_error(&why);
    nw_affine_job_free(j);
    return NULL;
  }
  /* the result's volume (the finest level's warp), made while the job runs; not before the
   * pyramids, whose uploads it would slow (a 3072² job's creation 8.3 -> 10.5 ms) */
  nw_affine_cost_prepare_warp(j->cost, j->pyr[0][j->n_levels - 1]);
  const NwVolume *coarse[4];
  for (int i = 0; i < 4; i++)
    coarse[i] = j->pyr[i] != NULL ? j->pyr[i][0] : NULL;
  if (!job_start(j, &base, &ss, in->initial_transform != NULL, coarse, error)) {
    nw_affine_job_free(j);
    return NULL;
  }
  t[3] = g_get_monotonic_time();
  g_debug("affine (%s): input checks %.1f ms, cost %.1f ms, pyramids %.1f ms (the voxels' "
          "check beside them, then waited for %.1f ms), starts and first level %.1f ms",
          be->name, (t_checked - t_start) / 1e3, (t[0] - t_checked) / 1e3, (t[1] - t[0]) / 1e3,
          (t[2] - t[1]) / 1e3, (t[3] - t[2]) / 1e3);
  return j;
}

NwAffineJob *nw_affine_job_new_levels(const NwAffineCostBackend *be, const void *backend_data,
                                      const NwParams *p, const NwAffineLevels *lv,
                                      const double *initial_transform, GError **error)
{
  NwTransform base;
  NwAffineStartSpec ss;
  NwAffineJob *j = job_begin(be, backend_data, p, lv->dim, lv->fixed[lv->n_levels - 1],
                             initial_transform, &base, &ss, error);
  if (j == NULL) {
    nw_pyramid_free(lv->fixed, lv->n_levels);
    nw_pyramid_free(lv->moving, lv->n_levels);
    return NULL;
  }
  /* the distributed metric (dmi_cost.h) keeps and samples float blocks: its costs are the
   * single-precision ones whatever the parameter says */
  j->precision = NW_AFFINE_PRECISION_SINGLE;
  j->n_levels = lv->n_levels;
  j->pyr[0] = lv->fixed;
  j->pyr[1] = lv->moving;
  if (!job_start(j, &base, &ss, initial_transform != NULL, lv->coarse, error)) {
    nw_affine_job_free(j);
    return NULL;
  }
  return j;
}

void nw_affine_job_free(NwAffineJob *j)
{
  if (j == NULL)
    return;
  nw_affine_cost_free(j->cost); /* before the pyramids it may know by their addresses */
  for (int i = 0; i < 4; i++)
    nw_pyramid_free(j->pyr[i], j->pyr[i] ? j->n_levels : 0);
  if (j->starts != NULL)
    g_array_unref(j->starts);
  if (j->nm != NULL)
    gsl_multimin_fminimizer_free(j->nm);
  if (j->gm != NULL)
    gsl_multimin_fdfminimizer_free(j->gm);
  if (j->probe != NULL)
    gsl_vector_free(j->probe);
  g_clear_error(&j->eval_error);
  g_free(j);
}

const NwTransform *nw_affine_job_transform(const NwAffineJob *j)
{
  return &j->best;
}

static void fill_report(const NwAffineJob *j, NwIterationReport *r)
{
  r->level = j->level;
  r->n_levels = j->n_levels;
  r->finished = j->finished;
  const double runs = j->level == 0 ? (double)j->starts->len : 1.0;
  const int iters = j->level == 0 ? j->iter_in_run : j->iter_in_level; /* restarts go on */
  const double in_level =
      ((j->level == 0 ? j->start : 0) + MIN(1.0, (double)iters / j->iterations)) / runs;
  r->progress = j->finished ? 1.0 : (j->level + in_level) / j->n_levels;
  const NwAffineCostValue *v = j->finished ? &j->best_value : &j->last;
  nw_report_add(r, "cost", v->cost);
  nw_report_add(r, nw_affine_metric_name(j->spec.metric), v->value);
  nw_report_add(r, "overlap", v->overlap);
  nw_report_add(r, "simplex", j->finished ? 0.0 : run_size(j));
  NwTransform t = j->best;
  if (!j->finished)
    vertex_transform(j, run_x(j), &t);
  double p[NW_XFORM_MAX_PARAMS];
  nw_transform_get_params(&t, p);
  const int n = nw_transform_n_params(t.dim, t.kind);
  for (int i = 0; i < n; i++) {
    const char *name = nw_transform_param_name(t.dim, t.kind, i);
    nw_report_add(r, name, name[0] == 'r' ? p[i] * 180.0 / G_PI : p[i]);
  }
}

/* Whether the run ends after an iteration that set out from cost f_before: GSL_ENOPROG
 * (the simplex cannot shrink further, or the line search finds no lower cost: as good as
 * converged), the iterations ran out, or the search became smaller than the tolerance.
 * BFGS at the finest level goes on past a short step that still lowered the cost: along a
 * narrow valley (an affine's rotation against its shear) its steps are short long before
 * the bottom: ended there, each fresh run took two short steps that still lowered the cost
 * by 2e-6 to 3e-6, until the restarts ran out 1.6e-6 above the truth's cost
 * (test_affine_accuracy's 3D affine). At the coarser levels a run only has to bring the
 * next level into its basin. */
static gboolean run_done(const NwAffineJob *j, int status, double f_before)
{
  if (status != GSL_SUCCESS || j->iter_in_run >= j->iterations)
    return TRUE;
  if (run_size(j) >= j->tol_vox * level_voxel_mm(j, j->level))
    return FALSE;
  const gboolean polish = j->gradient && j->level == j->n_levels - 1;
  return !polish || !lowered(f_before, run_cost(j));
}

gboolean nw_affine_job_step(NwAffineJob *j, NwIterationReport *r, GError **error)
{
  if (!j->finished) {
    const double f_before = run_cost(j);
    const int status = j->gradient ? gsl_multimin_fdfminimizer_iterate(j->gm)
                                   : gsl_multimin_fminimizer_iterate(j->nm);
    j->iter_in_run++;
    j->iter_in_level++;
    if (j->eval_error != NULL) {
      g_propagate_prefixed_error(error, j->eval_error, "affine: level %d: ", j->level + 1);
      j->eval_error = NULL;
      return FALSE;
    }
    if (run_done(j, status, f_before)) {
      g_debug("affine: level %d: a run ended after %d iterations (%s) at cost %.12g, "
              "%" G_GUINT64_FORMAT " evaluations so far",
              j->level + 1, j->iter_in_run, gsl_strerror(status), run_cost(j),
              nw_affine_cost_count(j->cost));
      if (!end_run(j, error))
        return FALSE;
    }
  }
  fill_report(j, r);
  return TRUE;
}

/* The moving image through t on the fixed grid, full size: at the finest level (copies of
 * the inputs) the cost's back end makes it where its images are; before, the host. */
static NwVolume *warped_now(const NwAffineJob *j, const NwTransform *t, GError **error)
{
  double m[16];
  nw_transform_matrix(t, m);
  if (j->level == j->n_levels - 1)
    return nw_affine_cost_warp(j->cost, m, j->spec.sampler, error);
  return nw_affine_resample(j->moving_full, j->fixed_full, m, j->dim, j->spec.sampler, 0.0f, error);
}

gboolean nw_affine_job_frame(NwAffineJob *j, NwFrame *frame, GError **error)
{
  if (j->fixed_full == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED,
                "affine: a distributed job has no whole image to show");
    return FALSE;
  }
  NwTransform t = j->best;
  if (!j->finished)
    vertex_transform(j, run_x(j), &t);
  frame->image = warped_now(j, &t, error);
  frame->field = NULL;
  return frame->image != NULL;
}

NwMethodResult *nw_affine_job_result(NwAffineJob *j, GError **error)
{
  /* a job over level headers (nw_affine_job_new_levels) has no image to warp */
  NwVolume *warped = NULL;
  if (j->fixed_full != NULL && (warped = warped_now(j, &j->best, error)) == NULL)
    return NULL;
  NwMethodResult *r = nw_method_result_new();
  if (warped != NULL)
    nw_method_result_add(r, "warped", warped);
  double m[16], p[NW_XFORM_MAX_PARAMS];
  nw_transform_matrix(&j->best, m);
  nw_transform_get_params(&j->best, p);
  nw_method_result_add_values(r, "transform", m, 16);
  nw_method_result_add_values(r, "centre", j->best.centre_mm, 3);
  nw_method_result_add_values(r, "parameters", p, nw_transform_n_params(j->dim, j->best.kind));
  const double cost[3] = {j->best_value.cost, j->best_value.value, j->best_value.overlap};
  nw_method_result_add_values(r, "cost", cost, 3);
  const double evals = (double)nw_affine_cost_count(j->cost);
  nw_method_result_add_values(r, "evaluations", &evals, 1);
  return r;
}

/* ---- the method-interface slots every back end shares ---------------------------------- */
gboolean nw_affine_op_step(void *state, NwIterationReport *report, GError **error)
{
  return nw_affine_job_step(state, report, error);
}

gboolean nw_affine_op_publish_frame(void *state, NwFrame *frame, GError **error)
{
  return nw_affine_job_frame(state, frame, error);
}

NwMethodResult *nw_affine_op_result(void *state, GError **error)
{
  return nw_affine_job_result(state, error);
}

void nw_affine_op_destroy(void *state)
{
  nw_affine_job_free(state);
}
