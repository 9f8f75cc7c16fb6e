/* sampler.c — see sampler.h. Weights in double: this is the reference the GPU's float
 * kernel is compared with (to 1e-4 relative on the cost). */
#include "sampler.h"

#include <math.h>

#include "interp_weights.h"
#include "nw_error.h"

const char *nw_sampler_name(NwSampler s)
{
  switch (s) {
  case NW_SAMPLER_NEAREST:
    return "nearest";
  case NW_SAMPLER_CUBIC:
    return "cubic";
  default:
    return "linear";
  }
}

gboolean nw_sampler_parse(const char *text, NwSampler *out, GError **error)
{
  static const NwSampler all[] = {NW_SAMPLER_NEAREST, NW_SAMPLER_LINEAR, NW_SAMPLER_CUBIC};
  for (gsize i = 0; i < G_N_ELEMENTS(all); i++)
    if (text != NULL && g_ascii_strcasecmp(text, nw_sampler_name(all[i])) == 0) {
      *out = all[i];
      return TRUE;
    }
  g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
              "unknown interpolation '%s': expected nearest, linear or cubic", text ? text : "");
  return FALSE;
}

double nw_keys_kernel(double d)
{
  return nw_keys_weight(d);
}

static inline gboolean in_domain(double x, int n)
{
  return x >= -0.5 && x <= (double)n - 0.5;
}

static inline int clampi(int i, int n)
{
  return i < 0 ? 0 : (i >= n ? n - 1 : i);
}

/* The image as the kernels below read it: a window of voxels [lo, lo + n) of a grid of
 * full[3] voxels (the whole grid: lo = 0, n = full), with the strides of its floats.
 * Positions, the domain and the clamping are the full grid's; a window only changes where
 * a clamped voxel is stored, so a window that holds every tap gives the whole image's
 * sample bit for bit (the distributed metric, dmi_metric.c, samples blocks this way). */
typedef struct {
  const float *d;
  size_t sx, sy, sz;
  int lo[3], full[3];
} Grid;

static float sample_nearest(const Grid *g, double x, double y, double z)
{
  int i = clampi((int)floor(x + 0.5), g->full[0]), j = clampi((int)floor(y + 0.5), g->full[1]);
  int k = clampi((int)floor(z + 0.5), g->full[2]);
  return g->d[(size_t)(k - g->lo[2]) * g->sz + (size_t)(j - g->lo[1]) * g->sy +
              (size_t)(i - g->lo[0]) * g->sx];
}

/* Cubic taps and weights along one axis: 4 neighbours (clamped to the grid), or the one
 * voxel of a flat axis. */
typedef struct {
  int idx[4];
  double w[4];
  int n;
} Taps;

static void cubic_taps(double x, int n, Taps *t)
{
  double f = floor(x);
  double u = x - f;
  t->n = 4;
  for (int q = 0; q < 4; q++) {
    t->idx[q] = clampi((int)f - 1 + q, n);
    t->w[q] = nw_keys_kernel(u - (double)(q - 1));
  }
}

static void taps(double x, int n, Taps *t)
{
  if (n == 1) { /* a flat axis: its one voxel */
    t->n = 1;
    t->idx[0] = 0;
    t->w[0] = 1.0;
  } else {
    cubic_taps(x, n, t);
  }
}

/* One axis of the linear kernel: the two taps (clamped, then made window offsets) and the
 * second one's weight. */
static inline void linear_axis(double x, int n, int lo, size_t *i0, size_t *i1, double *u)
{
  const double f = floor(x);
  *u = x - f;
  *i0 = (size_t)(clampi((int)f, n) - lo);
  *i1 = (size_t)(clampi((int)f + 1, n) - lo);
}

/* Bilinear / trilinear without the general tap loops: the cost function's common case. */
static float sample_linear(const Grid *g, double x, double y, double z)
{
  size_t x0, x1, y0, y1, z0, z1;
  double u, w, t;
  linear_axis(x, g->full[0], g->lo[0], &x0, &x1, &u);
  linear_axis(y, g->full[1], g->lo[1], &y0, &y1, &w);
  linear_axis(z, g->full[2], g->lo[2], &z0, &z1, &t);
  if (g->full[2] == 1)
    t = 0.0; /* a flat axis: its one voxel */
  const size_t sx = g->sx, sy = g->sy, sz = g->sz;
  const float *d = g->d;
  const double c00 = d[z0 * sz + y0 * sy + x0 * sx] * (1 - u) + d[z0 * sz + y0 * sy + x1 * sx] * u;
  const double c10 = d[z0 * sz + y1 * sy + x0 * sx] * (1 - u) + d[z0 * sz + y1 * sy + x1 * sx] * u;
  const double c0 = c00 * (1 - w) + c10 * w;
  if (t == 0.0)
    return (float)c0;
  const double c01 = d[z1 * sz + y0 * sy + x0 * sx] * (1 - u) + d[z1 * sz + y0 * sy + x1 * sx] * u;
  const double c11 = d[z1 * sz + y1 * sy + x0 * sx] * (1 - u) + d[z1 * sz + y1 * sy + x1 * sx] * u;
  return (float)(c0 * (1 - t) + (c01 * (1 - w) + c11 * w) * t);
}

static gboolean sample_grid(const Grid *g, NwSampler s, double x, double y, double z, float *out)
{
  /* NaN fails every comparison, so it is outside. */
  if (!in_domain(x, g->full[0]) || !in_domain(y, g->full[1]) || !in_domain(z, g->full[2]))
    return FALSE;
  if (s == NW_SAMPLER_NEAREST) {
    *out = sample_nearest(g, x, y, z);
    return TRUE;
  }
  if (s == NW_SAMPLER_LINEAR) {
    *out = sample_linear(g, x, y, z);
    return TRUE;
  }
  Taps tx, ty, tz;
  taps(x, g->full[0], &tx);
  taps(y, g->full[1], &ty);
  taps(z, g->full[2], &tz);
  double sum = 0.0;
  for (int c = 0; c < tz.n; c++)
    for (int b = 0; b < ty.n; b++) {
      const float *row = g->d + (size_t)(tz.idx[c] - g->lo[2]) * g->sz +
                         (size_t)(ty.idx[b] - g->lo[1]) * g->sy;
      double r = 0.0;
      for (int a = 0; a < tx.n; a++)
        r += tx.w[a] * (double)row[(size_t)(tx.idx[a] - g->lo[0]) * g->sx];
      sum += tz.w[c] * ty.w[b] * r;
    }
  *out = (float)sum;
  return TRUE;
}

gboolean nw_sampler_sample(const NwVolume *v, NwSampler s, double x, double y, double z, float *out)
{
  const size_t nc = (size_t)v->nc;
  const Grid g = {v->data, nc, (size_t)v->nx * nc, (size_t)v->nx * (size_t)v->ny * nc,
                  {0, 0, 0}, {v->nx, v->ny, v->nz}};
  return sample_grid(&g, s, x, y, z, out);
}

gboolean nw_sampler_sample_window(const NwSampleWindow *w, NwSampler s, double x, double y,
                                  double z, float *out)
{
  const Grid g = {w->data, 1, (size_t)w->n[0], (size_t)w->n[0] * (size_t)w->n[1],
                  {w->lo[0], w->lo[1], w->lo[2]}, {w->full[0], w->full[1], w->full[2]}};
  return sample_grid(&g, s, x, y, z, out);
}
