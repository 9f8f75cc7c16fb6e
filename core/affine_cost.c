/* affine_cost.c — see affine_cost.h: the level statistics, the metric from the sums, and
 * the evaluation wrapper around a back end. The job's worker thread. */
#include "affine_cost.h"

#include <math.h>

#include "affine_resample.h"
#include "beside.h"
#include "interp_weights.h"
#include "nw_error.h"
#include "ordered_sums.h"
#include "pyramid.h"

const char *nw_affine_metric_name(NwAffineMetric m)
{
  switch (m) {
  case NW_METRIC_MSE:
    return "mse";
  case NW_METRIC_NCC:
    return "ncc";
  default:
    return "mi";
  }
}

const char *nw_affine_precision_name(NwAffinePrecision p)
{
  return p == NW_AFFINE_PRECISION_U16          ? "u16"
         : p == NW_AFFINE_PRECISION_U16_FILTER ? "u16-filter"
                                               : "single";
}

gboolean nw_affine_precision_from_name(const char *name, NwAffinePrecision *out)
{
  static const NwAffinePrecision all[] = {NW_AFFINE_PRECISION_SINGLE, NW_AFFINE_PRECISION_U16,
                                          NW_AFFINE_PRECISION_U16_FILTER};
  for (gsize i = 0; i < G_N_ELEMENTS(all); i++)
    if (g_strcmp0(name, nw_affine_precision_name(all[i])) == 0) {
      *out = all[i];
      return TRUE;
    }
  return FALSE;
}

int nw_affine_bin(double v, double lo, double hi, int bins)
{
  int b = (int)floor((double)bins * (v - lo) / (hi - lo));
  return CLAMP(b, 0, bins - 1);
}

void nw_affine_parzen(double v, double lo, double hi, int bins, int *first, double w[4])
{
  double u = (double)(bins - 1) * (v - lo) / (hi - lo);
  u = CLAMP(u, 0.0, (double)(bins - 1));
  const int f = (int)floor(u);
  *first = f - 1;
  for (int q = 0; q < 4; q++)
    w[q] = nw_bspline3_weight(u - (double)(f - 1 + q));
}

double nw_affine_mutual_information(const double *joint, int bins, double n)
{
  double pf[256] = {0}, pm[256] = {0}; /* bins <= 256 (the parameter's range) */
  g_return_val_if_fail(bins <= 256, NAN);
  for (int a = 0; a < bins; a++)
    for (int b = 0; b < bins; b++) {
      pf[a] += joint[a * bins + b];
      pm[b] += joint[a * bins + b];
    }
  double mi = 0.0;
  for (int a = 0; a < bins; a++)
    for (int b = 0; b < bins; b++) {
      const double p = joint[a * bins + b];
      if (p > 0.0)
        mi += p / n * log(p * n / (pf[a] * pm[b]));
    }
  return mi;
}

void nw_affine_cost_from_sums(const NwAffineCostSpec *spec, const NwAffineLevel *level,
                              const NwAffineSums *s, NwAffineCostValue *out)
{
  out->overlap = level->n_fixed > 0 ? s->n / level->n_fixed : 0.0;
  out->value = NAN;
  out->cost = NW_AFFINE_NO_OVERLAP_COST;
  if (s->n < 1.0 || out->overlap < NW_AFFINE_MIN_OVERLAP)
    return;
  const double n = s->n;
  switch (spec->metric) {
  case NW_METRIC_MSE:
    /* sum (F - M)² = sff - 2 sfm + smm for unshifted values; the shifts add back in */
    {
      const double d = level->fixed_shift - level->moving_shift;
      const double sdd = s->sff - 2.0 * s->sfm + s->smm + 2.0 * d * (s->sf - s->sm) + n * d * d;
      out->value = MAX(sdd, 0.0) / n;
      out->cost = out->value;
    }
    break;
  case NW_METRIC_NCC: {
    const double cov = s->sfm - s->sf * s->sm / n;
    const double vf = s->sff - s->sf * s->sf / n, vm = s->smm - s->sm * s->sm / n;
    out->value = vf > 0.0 && vm > 0.0 ? cov / sqrt(vf * vm) : 0.0;
    out->cost = 1.0 - out->value;
    break;
  }
  default:
    out->value = nw_affine_mutual_information(s->joint, spec->bins, n);
    out->cost = -out->value;
    break;
  }
}

struct NwAffineCost {
  const NwAffineCostBackend *be;
  void *impl;
  NwAffineCostSpec spec;
  NwAffineLevel level;
  double *joint;       /* bins² (mi) */
  double *joint_batch; /* NW_AFFINE_MAX_BATCH x bins² (mi), made by the first batch */
  guint64 count;
  guint64 requests;     /* calls that evaluated: one launch each on the GPU */
  GThread *warp_pages;  /* nw_affine_cost_prepare_warp's thread: it returns the volume */
  NwVolume *warp_ready; /* its volume, once joined, until a warp on its grid takes it */
};

/* ---- the next warp's volume, made beside the evaluations ------------------------------- */

/* Pieces of 2 MiB of a fresh volume, a float of every page written. */
typedef struct {
  float *data;
  size_t n;
} Pages;

#define PAGE_PIECE_FLOATS (((size_t)2 << 20) / sizeof(float))

static void touch_piece(gpointer data, guint q)
{
  const Pages *pg = data;
  volatile float *p = pg->data; /* the stores are the point: keep them */
  const size_t page = 4096 / sizeof(float), e1 = MIN(pg->n, (q + 1) * PAGE_PIECE_FLOATS);
  for (size_t e = q * PAGE_PIECE_FLOATS; e < e1; e += page)
    p[e] = 0.0f;
}

/* A volume on the grid of the header it is given (which it frees), every page of it written
 * once: a thread's work, with three helpers (beside.h) for its 2 MiB pieces (one thread took
 * more than the 10 ms of a 3072² job's first levels for 37.7 MB on the H100 host). */
static gpointer touched_volume(gpointer data)
{
  NwVolume *grid = data;
  NwVolume *v = nw_volume_new_like(grid, 1, NULL);
  g_free(grid);
  if (v != NULL) {
    Pages pg = {v->data, nw_volume_n_voxels(v)};
    nw_beside_run((guint)((pg.n + PAGE_PIECE_FLOATS - 1) / PAGE_PIECE_FLOATS), 3, touch_piece,
                  &pg);
  }
  return v;
}

/* The prepared volume if it is on grid's grid (NULL when none was asked for, it could not be
 * made, or it is on another grid: then it waits for a warp on its own). */
static NwVolume *take_prepared(NwAffineCost *c, const NwVolume *grid)
{
  if (c->warp_pages != NULL) {
    c->warp_ready = g_thread_join(c->warp_pages);
    c->warp_pages = NULL;
  }
  NwVolume *v = c->warp_ready;
  if (v == NULL || (grid != NULL && !nw_volume_same_grid(v, grid)))
    return NULL;
  c->warp_ready = NULL;
  return v;
}

void nw_affine_cost_prepare_warp(NwAffineCost *c, const NwVolume *grid)
{
  nw_volume_free(take_prepared(c, NULL));
  if (c->be->warp == NULL)
    return;
  NwVolume *header = g_new0(NwVolume, 1);
  nw_volume_copy_header(header, grid);
  c->warp_pages = g_thread_try_new("nw-warp-pages", touched_volume, header, NULL);
  if (c->warp_pages == NULL)
    g_free(header); /* the warp makes its volume itself */
}

NwAffineCost *nw_affine_cost_new(const NwAffineCostBackend *be, const NwAffineCostSpec *spec,
                                 GError **error)
{
  void *impl = be->create(spec, error);
  if (impl == NULL)
    return NULL;
  NwAffineCost *c = g_new0(NwAffineCost, 1);
  c->be = be;
  c->impl = impl;
  c->spec = *spec;
  if (spec->metric == NW_METRIC_MI)
    c->joint = g_new0(double, (gsize)spec->bins *(gsize)spec->bins);
  return c;
}

void nw_affine_cost_free(NwAffineCost *c)
{
  if (c == NULL)
    return;
  nw_volume_free(take_prepared(c, NULL));
  c->be->destroy(c->impl);
  g_free(c->joint);
  g_free(c->joint_batch);
  g_free(c);
}

void nw_affine_stats_init(NwAffineStats *s)
{
  *s = (NwAffineStats){0.0, 0.0, INFINITY, -INFINITY};
}

void nw_affine_stats_merge(NwAffineStats *s, const NwAffineStats *part)
{
  s->sum += part->sum;
  s->n += part->n;
  s->lo = MIN(s->lo, part->lo);
  s->hi = MAX(s->hi, part->hi);
}

/* The slots of a chunk's statistics, in NwAffineStats's order. */
enum { STATS_SUM, STATS_N, STATS_LO, STATS_HI, STATS_COUNT };

typedef struct {
  const float *v, *mask;
} StatsIn;

static void stats_chunk(double *a, size_t begin, size_t end, const void *user)
{
  const StatsIn *in = user;
  for (size_t e = begin; e < end; e++) {
    if (in->mask != NULL && !(in->mask[e] >= 0.5f))
      continue;
    const double x = in->v[e];
    a[STATS_SUM] += x;
    a[STATS_N] += 1.0;
    a[STATS_LO] = MIN(a[STATS_LO], x);
    a[STATS_HI] = MAX(a[STATS_HI], x);
  }
}

/* In fixed chunks combined in order (ordered_sums.h), so the result does not depend on the
 * number of threads (the mean shifts every evaluation's sums). */
void nw_affine_stats_add(NwAffineStats *out, const float *v, const float *mask, size_t nv)
{
  static const NwCombine kind[STATS_COUNT] = {NW_COMBINE_SUM, NW_COMBINE_SUM, NW_COMBINE_MIN,
                                              NW_COMBINE_MAX};
  const StatsIn in = {v, mask};
  double r[STATS_COUNT];
  nw_ordered_reduce(r, STATS_COUNT, kind, nv, stats_chunk, &in);
  const NwAffineStats part = {r[STATS_SUM], r[STATS_N], r[STATS_LO], r[STATS_HI]};
  nw_affine_stats_merge(out, &part);
}

/* An image's statistics as the level keeps them: no voxel gives a zero range, and a flat
 * image still has a bin range. */
static void stats_finish(NwAffineStats *s)
{
  if (s->n == 0.0)
    s->lo = s->hi = 0.0;
  if (!(s->hi > s->lo))
    s->hi = s->lo + 1.0;
}

static void masked_stats(const NwVolume *v, const NwVolume *mask, NwAffineStats *out)
{
  nw_affine_stats_init(out);
  nw_affine_stats_add(out, v->data, mask != NULL ? mask->data : NULL, nw_volume_n_voxels(v));
}

/* Whether every voxel of v (component 0) is an integer: 8- and 16-bit inputs, which u16
 * storage then keeps exactly (affine_quant.h). */
static gboolean all_integers(const NwVolume *v)
{
  const gint64 n = (gint64)nw_volume_n_voxels(v);
  gint64 fractional = 0;
  const gboolean team = n > (gint64)(4 * NW_ORDERED_SUMS_CHUNK);
  (void)team; /* unused without OpenMP */
#pragma omp parallel for schedule(static) reduction(+ : fractional) if (team)
  for (gint64 e = 0; e < n; e++) {
    const float x = v->data[(size_t)e * (size_t)v->nc];
    fractional += x != floorf(x);
  }
  return fractional == 0;
}

NwVolume **nw_affine_cost_pyramid(NwAffineCost *c, const NwVolume *v, int n_levels, GError **error)
{
  if (c->be->pyramid != NULL) {
    GError *why = NULL;
    NwVolume **levels = c->be->pyramid(c->impl, v, n_levels, &why);
    if (levels != NULL || why != NULL) {
      if (why != NULL)
        g_propagate_error(error, why);
      return levels;
    }
  }
  int n = 0;
  NwVolume **levels = nw_pyramid_new(v, n_levels, &n, error);
  g_warn_if_fail(levels == NULL || n == n_levels);
  return levels;
}

NwVolume *nw_affine_cost_level_copy(NwAffineCost *c, const NwVolume *level, GError **error)
{
  if (level->data != NULL)
    return nw_volume_try_copy(level, error);
  if (c->be->level_voxels == NULL || level->nc != 1) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "affine (%s): a pyramid level without voxels on the host", c->be->name);
    return NULL;
  }
  NwVolume *out = nw_volume_new_like(level, 1, error);
  if (out != NULL && !c->be->level_voxels(c->impl, level, out->data, error))
    g_clear_pointer(&out, nw_volume_free);
  return out;
}

NwVolume *nw_affine_cost_warp(NwAffineCost *c, const double t_ras[16], NwSampler sampler,
                              GError **error)
{
  const NwAffineLevel *l = &c->level;
  if (c->be->warp == NULL)
    return nw_affine_resample(l->moving, l->fixed, t_ras, l->dim, sampler, 0.0f, error);
  double map[12];
  if (!nw_affine_voxel_map(l->fixed, l->moving, t_ras, l->dim, map)) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "resample: the image's voxel-to-world affine is singular");
    return NULL;
  }
  const gint64 t0 = g_get_monotonic_time();
  NwVolume *out = take_prepared(c, l->fixed);
  if (out == NULL)
    out = nw_volume_new_like(l->fixed, 1, error);
  const gint64 t1 = g_get_monotonic_time();
  if (out != NULL && !c->be->warp(c->impl, map, sampler, 0.0f, out->data, error))
    g_clear_pointer(&out, nw_volume_free);
  g_debug("affine: warp: the volume %.2f ms, the back end's warp %.2f ms", (t1 - t0) / 1e3,
          (g_get_monotonic_time() - t1) / 1e3);
  return out;
}

gboolean nw_affine_cost_set_level(NwAffineCost *c, const NwAffineLevel *level, GError **error)
{
  c->level = *level;
  NwAffineLevel *l = &c->level;
  NwAffineStats f, m;
  const gboolean u16 = nw_affine_precision_codes(l->precision);
  if (c->be->level_stats != NULL) {
    NwQuant q[2] = {l->fixed_quant, l->moving_quant};
    if (!c->be->level_stats(c->impl, l, &f, &m, u16 ? q : NULL, error))
      return FALSE;
    l->fixed_quant = q[0];
    l->moving_quant = q[1];
  } else {
    masked_stats(l->fixed, l->fixed_mask, &f);
    masked_stats(l->moving, l->moving_mask, &m);
  }
  if (u16 && c->be->level_stats == NULL) {
    /* the quantisation's range is the whole image's: the masked statistics are that
     * without a mask, and one more pass with one */
    NwAffineStats all[2] = {f, m};
    const NwVolume *v[2] = {l->fixed, l->moving}, *mk[2] = {l->fixed_mask, l->moving_mask};
    NwQuant *q[2] = {&l->fixed_quant, &l->moving_quant};
    for (int i = 0; i < 2; i++) {
      if (mk[i] != NULL)
        masked_stats(v[i], NULL, &all[i]);
      *q[i] = all[i].n > 0.0 ? nw_quant_make(all[i].lo, all[i].hi, all_integers(v[i]))
                             : nw_quant_make(0.0, 0.0, FALSE);
    }
  }
  stats_finish(&f);
  stats_finish(&m);
  l->fixed_shift = f.n > 0.0 ? f.sum / f.n : 0.0;
  l->moving_shift = m.n > 0.0 ? m.sum / m.n : 0.0;
  l->fixed_lo = f.lo;
  l->fixed_hi = f.hi;
  l->moving_lo = m.lo;
  l->moving_hi = m.hi;
  l->n_fixed = f.n; /* the fixed voxels inside the fixed mask (all without one) */
  if (l->n_fixed < 1.0) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "the fixed mask selects no voxel at this resolution");
    return FALSE;
  }
  return c->be->set_level(c->impl, l, error);
}

gboolean nw_affine_cost_eval_matrix(NwAffineCost *c, const double t_ras[16], NwAffineCostValue *out,
                                    GError **error)
{
  double map[12];
  if (!nw_affine_voxel_map(c->level.fixed, c->level.moving, t_ras, c->level.dim, map)) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "the moving image's affine is singular");
    return FALSE;
  }
  NwAffineSums sums = {.joint = c->joint};
  if (!c->be->evaluate(c->impl, map, &sums, error))
    return FALSE;
  c->count++;
  c->requests++;
  nw_affine_cost_from_sums(&c->spec, &c->level, &sums, out);
  return TRUE;
}

gboolean nw_affine_cost_eval_batch(NwAffineCost *c, const double (*t_ras)[16], int k,
                                   NwAffineCostValue *out, GError **error)
{
  g_return_val_if_fail(k >= 0 && k <= NW_AFFINE_MAX_BATCH, FALSE);
  if (c->be->evaluate_batch == NULL) {
    for (int q = 0; q < k; q++)
      if (!nw_affine_cost_eval_matrix(c, t_ras[q], &out[q], error))
        return FALSE;
    return TRUE;
  }
  double maps[NW_AFFINE_MAX_BATCH][12];
  NwAffineSums sums[NW_AFFINE_MAX_BATCH];
  const gsize hist = c->joint != NULL ? (gsize)c->spec.bins * (gsize)c->spec.bins : 0;
  if (hist > 0 && c->joint_batch == NULL)
    c->joint_batch = g_new0(double, NW_AFFINE_MAX_BATCH *hist);
  for (int q = 0; q < k; q++) {
    if (!nw_affine_voxel_map(c->level.fixed, c->level.moving, t_ras[q], c->level.dim, maps[q])) {
      g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "the moving image's affine is singular");
      return FALSE;
    }
    sums[q] = (NwAffineSums){.joint = hist > 0 ? c->joint_batch + (gsize)q * hist : NULL};
  }
  if (!c->be->evaluate_batch(c->impl, (const double(*)[12])maps, k, sums, error))
    return FALSE;
  c->count += (guint64)k;
  c->requests++;
  for (int q = 0; q < k; q++)
    nw_affine_cost_from_sums(&c->spec, &c->level, &sums[q], &out[q]);
  return TRUE;
}

gboolean nw_affine_cost_eval(NwAffineCost *c, const NwTransform *t, NwAffineCostValue *out,
                             GError **error)
{
  double m[16];
  nw_transform_matrix(t, m);
  return nw_affine_cost_eval_matrix(c, m, out, error);
}

guint64 nw_affine_cost_count(const NwAffineCost *c)
{
  return c->count;
}

guint64 nw_affine_cost_requests(const NwAffineCost *c)
{
  return c->requests;
}
