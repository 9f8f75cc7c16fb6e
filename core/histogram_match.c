/* histogram_match.c — quantile mapping of intensities (see histogram_match.h). CPU, any
 * thread; sorts copies of both images once. */
#include "histogram_match.h"

#include <math.h>
#include <stdlib.h>

#include "nw_error.h"

static int cmp_float(const void *a, const void *b)
{
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

/* nq + 1 quantiles (q = k / nq) of the finite voxels of v, linear between order statistics.
 * FALSE when v has no finite voxel. */
static gboolean quantiles(const NwVolume *v, int nq, double *q)
{
  const size_t n = nw_volume_n_floats(v);
  g_autofree float *s = g_new(float, n);
  size_t m = 0;
  for (size_t e = 0; e < n; e++)
    if (isfinite(v->data[e]))
      s[m++] = v->data[e];
  if (m == 0)
    return FALSE;
  qsort(s, m, sizeof(float), cmp_float);
  for (int k = 0; k <= nq; k++) {
    double pos = (double)k / nq * (double)(m - 1);
    size_t i = (size_t)pos;
    double w = pos - (double)i;
    q[k] = i + 1 < m ? (1.0 - w) * s[i] + w * s[i + 1] : s[m - 1];
  }
  return TRUE;
}

/* Map x through the monotone table src -> dst (nq + 1 entries each). */
static float map_value(float x, const double *src, const double *dst, int nq)
{
  int lo = 0, hi = nq + 1; /* lo: first index with src >= x */
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (src[mid] < x)
      lo = mid + 1;
    else
      hi = mid;
  }
  int last = lo; /* one past the last index with src == x */
  while (last <= nq && src[last] == x)
    last++;
  if (last > lo) { /* ties: the mean of the paired reference quantiles */
    double sum = 0.0;
    for (int k = lo; k < last; k++)
      sum += dst[k];
    return (float)(sum / (last - lo));
  }
  if (lo == 0)
    return (float)dst[0];
  if (lo > nq)
    return (float)dst[nq];
  double w = (x - src[lo - 1]) / (src[lo] - src[lo - 1]);
  return (float)(dst[lo - 1] + w * (dst[lo] - dst[lo - 1]));
}

NwVolume *nw_histogram_match(const NwVolume *image, const NwVolume *reference, int n_quantiles,
                             GError **error)
{
  if (n_quantiles < 1) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "histogram matching: %d quantiles: at least 1 is needed", n_quantiles);
    return NULL;
  }
  g_autofree double *src = g_new(double, n_quantiles + 1);
  g_autofree double *dst = g_new(double, n_quantiles + 1);
  if (!quantiles(image, n_quantiles, src) || !quantiles(reference, n_quantiles, dst)) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "histogram matching: an image has no finite voxel");
    return NULL;
  }
  NwVolume *out = nw_volume_copy(image);
  const size_t n = nw_volume_n_floats(out);
#pragma omp parallel for schedule(static)
  for (size_t e = 0; e < n; e++)
    if (isfinite(out->data[e]))
      out->data[e] = map_value(out->data[e], src, dst, n_quantiles);
  return out;
}
