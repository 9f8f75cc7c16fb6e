/* test_nlm_kernels.c — the kernels of nlm-surface (core/cpu/nlm_kernels.h): the exact top-m
 * selection against a brute-force sort (with many ties), the pruned scan against the brute
 * force (bit for bit: band patches, ties, equal keys), the patch distances against double
 * precision, patches and band order, the weights, the step, results independent of the thread
 * count, and the method through the registry (a plane is a fixed point). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "method.h"
#include "method_table.h"
#include "nlm_kernels.h"
#include "nlm_surface_method.h"
#include "nlm_testutil.h"
#include "testutil.h"

/* n x p random patches; quantised to multiples of 0.5 in 0..1 when `ties` (squared distances
 * are then exact in float and many are equal). */
static float *random_patches(int n, int p, gboolean ties, guint32 seed)
{
  float *x = g_new(float, (size_t)n *p);
  GRand *g = g_rand_new_with_seed(seed);
  for (size_t e = 0; e < (size_t)n * p; e++)
    x[e] = ties ? 0.5f * g_rand_int_range(g, 0, 3) : (float)g_rand_double_range(g, -3, 3);
  g_rand_free(g);
  return x;
}

typedef struct {
  double d;
  int l;
} Pair;

static int by_distance_then_index(const void *pa, const void *pb)
{
  const Pair *a = pa, *b = pb;
  if (a->d != b->d)
    return a->d < b->d ? -1 : 1;
  return a->l - b->l;
}

/* Brute force: every distance in double, the whole row sorted. */
static void check_top_m(int n, int p, int m, gboolean ties, guint32 seed)
{
  g_autofree float *x = random_patches(n, p, ties, seed);
  g_autofree int *nbr = g_new(int, (size_t)n *m);
  g_autofree float *nd = g_new(float, (size_t)n *m);
  g_assert_true(nw_nlm_neighbours_cpu(nbr, nd, x, n, p, m));
  g_autofree Pair *row = g_new(Pair, n);
  int n_tied_at_cut = 0;
  for (int i = 0; i < n; i++) {
    int c = 0;
    for (int l = 0; l < n; l++) {
      if (l == i)
        continue;
      double s = 0.0;
      for (int q = 0; q < p; q++) {
        double d = (double)x[(size_t)i * p + q] - x[(size_t)l * p + q];
        s += d * d;
      }
      row[c++] = (Pair){s, l};
    }
    qsort(row, c, sizeof *row, by_distance_then_index);
    n_tied_at_cut += m < c && row[m - 1].d == row[m].d;
    for (int s = 0; s < m; s++) {
      if (ties) { /* exact: same set, same order, same numbers */
        g_assert_cmpint(nbr[(size_t)i * m + s], ==, row[s].l);
        g_assert_cmpfloat(nd[(size_t)i * m + s], ==, row[s].d);
      } else {
        g_assert_cmpfloat_with_epsilon(nd[(size_t)i * m + s], row[s].d, 1e-5 * (1 + row[s].d));
        g_assert_cmpint(nbr[(size_t)i * m + s], ==, row[s].l);
      }
    }
  }
  /* The ties case must really have ties where the cut falls, or it tests nothing. */
  if (ties && m > 1 && m < n - 1)
    g_assert_cmpint(n_tied_at_cut, >, n / 4);
}

static void test_top_m_ties(void)
{
  check_top_m(300, 27, 17, TRUE, 1); /* 300 rows: several blocks of 64 */
  check_top_m(40, 8, 1, TRUE, 2);
  check_top_m(40, 8, 39, TRUE, 3); /* m = n - 1: every other element, sorted */
}

static void test_top_m_random(void)
{
  check_top_m(200, 125, 96, FALSE, 4);
}

/* The pruned scan's output equals the brute force's, indices and distance bits; returns the
 * fraction of tiles it visited. */
static double check_pruned(const float *x, int n, int p, int m)
{
  g_autofree int *nbr = g_new(int, (size_t)n *m), *bnbr = g_new(int, (size_t)n *m);
  g_autofree float *nd = g_new(float, (size_t)n *m), *bnd = g_new(float, (size_t)n *m);
  double visited = 0.0;
  g_assert_true(nw_nlm_neighbours_pruned_cpu(nbr, nd, x, n, p, m, &visited));
  g_assert_true(nw_nlm_neighbours_brute_cpu(bnbr, bnd, x, n, p, m));
  g_assert_cmpmem(nbr, (size_t)n * m * sizeof(int), bnbr, (size_t)n * m * sizeof(int));
  g_assert_cmpmem(nd, (size_t)n * m * sizeof(float), bnd, (size_t)n * m * sizeof(float));
  return visited;
}

/* The band patches of a noisy sphere (the method's own rows), n rows of them. */
static float *sphere_band_patches(int *n, int patch, int grid, double r, double noise)
{
  g_autoptr(NwVolume) clean = nlm_test_sphere(grid, r);
  g_autoptr(NwVolume) phi = nlm_test_add_noise(clean, noise, 11);
  g_autofree guint32 *band = g_new(guint32, nw_volume_n_voxels(phi));
  *n = nw_nlm_band_cpu(band, phi, 2.0f);
  float *x = g_new(float, (size_t)*n *patch *patch *patch);
  nw_nlm_patches_cpu(x, phi, band, *n, patch);
  return x;
}

static void test_pruned(void)
{
  /* band patches: the case the pruning is for; it must prune there */
  int n = 0;
  g_autofree float *band = sphere_band_patches(&n, 5, 28, 9.3, 0.3);
  n -= n % 64 == 0; /* a partial last tile */
  const double visited = check_pruned(band, n, 125, 96);
  g_test_message("band of %d rows: %.1f %% of the tiles visited", n, 100.0 * visited);
  g_assert_cmpfloat(visited, <, 0.8);
  /* every patch equal: all keys and distances tie, the order is by index alone */
  g_autofree float *same = g_new(float, 300 * 27);
  for (int e = 0; e < 300 * 27; e++)
    same[e] = 0.25f * (e % 27);
  check_pruned(same, 300, 27, 40);
  /* quantised values: many ties at the cut and many equal keys */
  g_autofree float *ties = random_patches(700, 27, TRUE, 12);
  check_pruned(ties, 700, 27, 17);
  /* rows that are permutations of each other: equal keys and norms, different distances */
  g_autofree float *perm = random_patches(333, 27, FALSE, 13);
  for (int j = 1; j < 333; j += 2)
    for (int q = 0; q < 27; q++)
      perm[(size_t)j * 27 + q] = perm[(size_t)(j - 1) * 27 + (q * 5 + 3) % 27];
  check_pruned(perm, 333, 27, 20);
  /* m = n - 1, and fewer rows than a tile */
  check_pruned(ties, 97, 27, 96);
  check_pruned(ties, 40, 27, 39);
  /* a NaN: the brute force's output (via the fallback to it) */
  ties[5 * 27 + 3] = NAN;
  check_pruned(ties, 200, 27, 10);
}

static void test_distances(void)
{
  const int n = 70, p = 27;
  g_autofree float *x = random_patches(n, p, FALSE, 5);
  g_autofree float *d = g_new(float, (size_t)5 * n);
  nw_nlm_pair_distances_cpu(d, x, n, p, 60, 5);
  for (int r = 0; r < 5; r++)
    for (int l = 0; l < n; l++) {
      double s = 0.0;
      for (int q = 0; q < p; q++) {
        double e = (double)x[(size_t)(60 + r) * p + q] - x[(size_t)l * p + q];
        s += e * e;
      }
      g_assert_cmpfloat_with_epsilon(d[(size_t)r * n + l], s, 1e-5 * (1 + s));
    }
  g_assert_cmpfloat(d[0 * n + 60], ==, 0.0f); /* row 60 against itself */
}

/* Patches: x fastest, then y, then z; borders repeat the edge voxel. */
static void test_patches_and_band(void)
{
  g_autoptr(NwVolume) v = nw_volume_new(4, 3, 2, 1, NULL);
  for (int k = 0; k < 2; k++)
    for (int j = 0; j < 3; j++)
      for (int i = 0; i < 4; i++)
        v->data[nw_volume_index(v, i, j, k)] = (float)(i + 10 * j + 100 * k) - 50.0f;
  g_autofree guint32 *band = g_new(guint32, 24);
  /* |phi| <= 45.5: voxels with -4.5 <= i + 10 j + 100 k - 50 <= 95.5... */
  int n = nw_nlm_band_cpu(band, v, 45.5f);
  int expect = 0;
  for (guint32 e = 0; e < 24; e++)
    if (fabsf(v->data[e]) <= 45.5f) {
      g_assert_cmpuint(band[expect], ==, e); /* increasing voxel order */
      expect++;
    }
  g_assert_cmpint(n, ==, expect);
  g_assert_cmpint(n, >, 3);
  guint32 corner = (guint32)nw_volume_index(v, 0, 0, 0);
  float patch[27];
  nw_nlm_patches_cpu(patch, v, &corner, 1, 3);
  /* Offset (dx, dy, dz) at index (dz+1)*9 + (dy+1)*3 + (dx+1); clamped to (max(dx,0), ...). */
  for (int dz = -1; dz <= 1; dz++)
    for (int dy = -1; dy <= 1; dy++)
      for (int dx = -1; dx <= 1; dx++)
        g_assert_cmpfloat(patch[(dz + 1) * 9 + (dy + 1) * 3 + (dx + 1)], ==,
                          (float)(MAX(dx, 0) + 10 * MAX(dy, 0) + 100 * MAX(dz, 0)) - 50.0f);
  float pos[3];
  guint32 e = (guint32)nw_volume_index(v, 3, 2, 1);
  nw_volume_set_spacing(v, 2.0, 3.0, 4.0);
  nw_nlm_positions_cpu(pos, v, &e, 1);
  g_assert_cmpfloat(pos[0], ==, 6.0f);
  g_assert_cmpfloat(pos[1], ==, 6.0f);
  g_assert_cmpfloat(pos[2], ==, 4.0f);
}

/* Three elements, two neighbours each: weights, dt and the step by hand. */
static void test_weights_and_step(void)
{
  const int nbr[6] = {1, 2, 0, 2, 0, 1};
  const float nd[6] = {0.0f, 2.0f, 0.0f, 4.0f, 2.0f, 4.0f};
  const float pos[9] = {0, 0, 0, 1, 0, 0, 0, 2, 0};
  const float centre[3] = {-1.0f, 0.0f, 2.0f};
  float w[6], wsum[3], out[3];
  nw_nlm_weights_cpu(w, wsum, nbr, nd, pos, 3, 2, 0.0, 2.0); /* no spatial factor */
  g_assert_cmpfloat_with_epsilon(w[0], 1.0, 1e-7);
  g_assert_cmpfloat_with_epsilon(w[1], exp(-1.0), 1e-7);
  g_assert_cmpfloat_with_epsilon(w[3], exp(-2.0), 1e-7);
  g_assert_cmpfloat_with_epsilon(wsum[0], 1.0 + exp(-1.0), 1e-6);
  nw_nlm_weights_cpu(w, wsum, nbr, nd, pos, 3, 2, 4.0, 2.0); /* |x0 - x2|^2 = 4 */
  g_assert_cmpfloat_with_epsilon(w[1], exp(-1.0) * exp(-1.0), 1e-7);
  g_assert_cmpfloat_with_epsilon(w[0], exp(-0.25), 1e-7);
  nw_nlm_weights_cpu(w, wsum, nbr, nd, pos, 3, 2, 0.0, 2.0);
  float dt = nw_nlm_step_size_cpu(wsum, 3);
  g_assert_cmpfloat_with_epsilon(dt, 1.0 / (1.0 + exp(-1.0)), 1e-6); /* rows 0 and 1 tie */
  nw_nlm_update_cpu(out, centre, nbr, w, 3, 2, dt);
  /* Element 0 has the largest sum: it lands on the weighted mean of its neighbours. */
  double mean0 = (w[0] * centre[1] + w[1] * centre[2]) / (w[0] + w[1]);
  g_assert_cmpfloat_with_epsilon(out[0], mean0, 1e-6);
  double flow2 = w[4] * (centre[0] - centre[2]) + w[5] * (centre[1] - centre[2]);
  g_assert_cmpfloat_with_epsilon(out[2], centre[2] + dt * flow2, 1e-6);
  float zero[3] = {0, 0, 0};
  g_assert_cmpfloat(nw_nlm_step_size_cpu(zero, 3), ==, 0.0f);
}

/* The same numbers with one thread and with two: no result depends on scheduling. */
static void test_threads(void)
{
#ifdef _OPENMP
  const int n = 500, p = 125, m = 32;
  g_autofree float *x = random_patches(n, p, FALSE, 6);
  g_autofree int *nbr1 = g_new(int, (size_t)n *m), *nbr2 = g_new(int, (size_t)n *m);
  g_autofree float *nd1 = g_new(float, (size_t)n *m), *nd2 = g_new(float, (size_t)n *m);
  int before = omp_get_max_threads();
  omp_set_num_threads(1);
  g_assert_true(nw_nlm_neighbours_cpu(nbr1, nd1, x, n, p, m));
  omp_set_num_threads(2);
  g_assert_true(nw_nlm_neighbours_cpu(nbr2, nd2, x, n, p, m));
  omp_set_num_threads(before);
  g_assert_cmpmem(nbr1, (size_t)n * m * sizeof(int), nbr2, (size_t)n * m * sizeof(int));
  g_assert_cmpmem(nd1, (size_t)n * m * sizeof(float), nd2, (size_t)n * m * sizeof(float));
#else
  g_test_skip("no OpenMP in this build");
#endif
}

/* Through the registry: a plane parallel to the grid is a fixed point (every element has
 * many others with identical patches, so nothing moves), and the method refuses even patches
 * and a band too thin to hold two voxels. */
static void test_method(void)
{
  g_autoptr(GError) error = NULL;
  const NwMethodOps *ops = nw_method_lookup("nlm-surface", NW_DEVICE_CPU, &error);
  g_assert_no_error(error);
  g_autoptr(NwParams) p = nw_params_new(ops->params, ops->n_params);
  g_assert_cmpint(nw_params_get_int(p, "patch"), ==, 5);
  g_assert_cmpint(nw_params_get_int(p, "neighbours"), ==, 96);
  g_autoptr(NwVolume) plane = nw_volume_new(12, 12, 12, 1, NULL);
  for (int k = 0; k < 12; k++)
    for (int j = 0; j < 12; j++)
      for (int i = 0; i < 12; i++)
        plane->data[nw_volume_index(plane, i, j, k)] = (float)k - 5.5f;
  NwMethodInputs in = {.fixed = plane};
  void *state = ops->create(&in, p, &error);
  g_assert_no_error(error);
  NwIterationReport r = {0};
  g_assert_true(ops->step(state, &r, &error));
  g_assert_cmpstr(r.figure_names[0], ==, "rms_change");
  g_assert_cmpfloat(r.figures[0], ==, 0.0);
  g_assert_cmpfloat(r.figures[2], ==, 4 * 144); /* |k - 5.5| <= 2: four planes of voxels */
  ops->destroy(state);

  g_assert_true(nw_params_set(p, "patch", 4, NULL));
  g_assert_null(ops->create(&in, p, &error));
  g_assert_nonnull(strstr(error->message, "patch 4 is even"));
  g_clear_error(&error);
  g_assert_true(nw_params_set(p, "patch", 3, NULL));
  g_assert_true(nw_params_set(p, "band", 0.1, NULL));
  g_assert_null(ops->create(&in, p, &error));
  g_assert_nonnull(strstr(error->message, "holds 0 voxels: widen --band"));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  nw_methods_register_builtin();
  g_test_add_func("/nlm/kernels/top-m-ties", test_top_m_ties);
  g_test_add_func("/nlm/kernels/top-m-random", test_top_m_random);
  g_test_add_func("/nlm/kernels/pruned", test_pruned);
  g_test_add_func("/nlm/kernels/distances", test_distances);
  g_test_add_func("/nlm/kernels/patches-band", test_patches_and_band);
  g_test_add_func("/nlm/kernels/weights-step", test_weights_and_step);
  g_test_add_func("/nlm/kernels/threads", test_threads);
  g_test_add_func("/nlm/method/plane", test_method);
  return g_test_run();
}
