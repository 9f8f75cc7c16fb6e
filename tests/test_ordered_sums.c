/* test_ordered_sums — nw_ordered_reduce (and with the caller's chunks,
 * nw_ordered_reduce_split) gives the same bits for any thread count, combines sums, minima
 * and maxima over chunk boundaries, and handles ranges shorter than a chunk. */
#include <math.h>
#include <string.h>

#include <glib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "ordered_sums.h"

typedef struct {
  const double *x;
} Data;

static void chunk(double *a, size_t begin, size_t end, const void *user)
{
  const Data *d = user;
  for (size_t e = begin; e < end; e++) {
    a[0] += d->x[e];
    a[1] = fmin(a[1], d->x[e]);
    a[2] = fmax(a[2], d->x[e]);
  }
}

static const NwCombine kind[3] = {NW_COMBINE_SUM, NW_COMBINE_MIN, NW_COMBINE_MAX};

/* Values of very different magnitudes, so that the order of additions shows in the bits. */
static double *make_values(size_t n)
{
  double *x = g_new(double, n);
  GRand *r = g_rand_new_with_seed(7);
  for (size_t e = 0; e < n; e++)
    x[e] = g_rand_double_range(r, -1.0, 1.0) * pow(10.0, g_rand_int_range(r, -8, 9));
  g_rand_free(r);
  return x;
}

static void test_same_bits_any_threads(void)
{
  const size_t n = 7 * NW_ORDERED_SUMS_CHUNK + 12345;
  g_autofree double *x = make_values(n);
  x[5 * NW_ORDERED_SUMS_CHUNK + 3] = -1e12; /* the minimum, in a later chunk */
  x[NW_ORDERED_SUMS_CHUNK - 1] = 1e12;      /* the maximum, at a chunk's end */
  const Data d = {x};
  double ref[3];
#ifdef _OPENMP
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
#endif
  nw_ordered_reduce(ref, 3, kind, n, chunk, &d);
  /* the reference: chunk by chunk, in order, by hand */
  double want = 0.0;
  for (size_t c0 = 0; c0 < n; c0 += NW_ORDERED_SUMS_CHUNK) {
    double s = 0.0;
    for (size_t e = c0; e < MIN(n, c0 + NW_ORDERED_SUMS_CHUNK); e++)
      s += x[e];
    want += s;
  }
  g_assert_true(memcmp(&ref[0], &want, sizeof want) == 0);
  g_assert_cmpfloat(ref[1], ==, -1e12);
  g_assert_cmpfloat(ref[2], ==, 1e12);
  for (int threads = 2; threads <= 5; threads++) {
#ifdef _OPENMP
    omp_set_num_threads(threads);
#endif
    double v[3];
    nw_ordered_reduce(v, 3, kind, n, chunk, &d);
    g_assert_true(memcmp(v, ref, sizeof v) == 0);
  }
#ifdef _OPENMP
  omp_set_num_threads(saved);
#endif
}

/* The caller's chunks (nw_ordered_reduce_split): the sum is the chunks' sums added in chunk
 * order, with any number of threads, above and below the team's threshold. */
static void test_split_same_bits_any_threads(void)
{
  const size_t n = 20 * 1000 + 7;
  g_autofree double *x = make_values(n);
  const Data d = {x};
  double want = 0.0;
  for (size_t c0 = 0; c0 < n; c0 += 1000) {
    double s = 0.0;
    for (size_t e = c0; e < MIN(n, c0 + 1000); e++)
      s += x[e];
    want += s;
  }
#ifdef _OPENMP
  const int saved = omp_get_max_threads();
#endif
  for (int threads = 1; threads <= 5; threads++) {
#ifdef _OPENMP
    omp_set_num_threads(threads);
#endif
    for (size_t team_min = 1; team_min <= 64; team_min *= 8) { /* 21 chunks: teams, then none */
      const NwOrderedSplit split = {1000, team_min};
      double v[3];
      nw_ordered_reduce_split(v, 3, kind, n, split, chunk, &d);
      g_assert_true(memcmp(&v[0], &want, sizeof want) == 0);
    }
  }
#ifdef _OPENMP
  omp_set_num_threads(saved);
#endif
}

static void test_short_and_empty(void)
{
  const double x[3] = {1.5, -2.0, 4.0};
  const Data d = {x};
  double v[3];
  nw_ordered_reduce(v, 3, kind, 3, chunk, &d);
  g_assert_cmpfloat(v[0], ==, 3.5);
  g_assert_cmpfloat(v[1], ==, -2.0);
  g_assert_cmpfloat(v[2], ==, 4.0);
  nw_ordered_reduce(v, 3, kind, 0, chunk, &d); /* nothing: each combination's identity */
  g_assert_cmpfloat(v[0], ==, 0.0);
  g_assert_true(isinf(v[1]) && v[1] > 0);
  g_assert_true(isinf(v[2]) && v[2] < 0);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/ordered-sums/same-bits-any-threads", test_same_bits_any_threads);
  g_test_add_func("/ordered-sums/split-same-bits-any-threads", test_split_same_bits_any_threads);
  g_test_add_func("/ordered-sums/short-and-empty", test_short_and_empty);
  return g_test_run();
}
