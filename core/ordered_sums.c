/* ordered_sums.c — reductions in fixed chunks combined in chunk order (ordered_sums.h). */
#include "ordered_sums.h"

#include <math.h>

static double identity_of(NwCombine k)
{
  return k == NW_COMBINE_MIN ? INFINITY : k == NW_COMBINE_MAX ? -INFINITY : 0.0;
}

static double combine(NwCombine k, double a, double b)
{
  switch (k) {
  case NW_COMBINE_MIN:
    return fmin(a, b);
  case NW_COMBINE_MAX:
    return fmax(a, b);
  case NW_COMBINE_SUM:
  default:
    return a + b;
  }
}

void nw_ordered_reduce_split(double *out, int n_values, const NwCombine *kind, size_t n,
                             NwOrderedSplit split, NwChunkAccumulate accumulate, const void *user)
{
  g_return_if_fail(n_values > 0 && accumulate != NULL && split.chunk > 0);
  const gint64 n_chunks = (gint64)((n + split.chunk - 1) / split.chunk);
  const gboolean team = (size_t)n_chunks >= MAX(split.team_min, 2);
  (void)team; /* unused without OpenMP */
  double *part = g_new(double, (size_t)MAX(n_chunks, 1) * n_values);
#pragma omp parallel for schedule(static) if (team)
  for (gint64 c = 0; c < n_chunks; c++) {
    double *acc = part + (size_t)c * n_values;
    for (int s = 0; s < n_values; s++)
      acc[s] = identity_of(kind != NULL ? kind[s] : NW_COMBINE_SUM);
    const size_t begin = (size_t)c * split.chunk;
    accumulate(acc, begin, MIN(n, begin + split.chunk), user);
  }
  for (int s = 0; s < n_values; s++) {
    const NwCombine k = kind != NULL ? kind[s] : NW_COMBINE_SUM;
    double v = identity_of(k);
    for (gint64 c = 0; c < n_chunks; c++)
      v = combine(k, v, part[(size_t)c * n_values + s]);
    out[s] = v;
  }
  g_free(part);
}

void nw_ordered_reduce(double *out, int n_values, const NwCombine *kind, size_t n,
                       NwChunkAccumulate accumulate, const void *user)
{
  const NwOrderedSplit split = {NW_ORDERED_SUMS_CHUNK, 2};
  nw_ordered_reduce_split(out, n_values, kind, n, split, accumulate, user);
}
