/* test_cuda_nlm.c — the CUDA twin of nlm-surface (cuda/nlm_*.cu) against its CPU reference
 * (core/cpu/nlm_kernels.h, nlm_surface_cpu.c). Skips (77) without a CUDA device. Test thread.
 *
 *   top-m       the fused distance + top-m kernel against nw_nlm_neighbours_brute_cpu: on random
 *               patches, on the band of a noisy sphere, on quantised patches with many exact
 *               ties, on small and odd sizes (n not a multiple of the 64-row tile, m = n - 1 and m
 * = 128, patch 3, 7 and 9: one and several chunks per lane group). Asserted: at least 99.9 % of
 * rows keep the CPU's set, and every row that does not differs only by near-ties (each differing
 * pair's CPU and GPU distances within 1e-5 (|a|^2 + |b|^2) of the CPU's m-th distance). The kernel
 * is designed to equal the CPU bit for bit (nlm_topm_kernel.cu), so each case also reports how many
 * rows are identical in indices, order and distance bits; with ties that must be all. large       a
 * band of 30000 rows (469 tiles of 64): rows sampled across it (tile edges, the last rows) against
 * a CPU computation of just those rows, and the tc kernel against the exact one on all of them.
 * top-m-tc   the pruned tensor-core variant (nlm_topm_tc_kernel.cu) against the exact kernel:
 *            every row identical (indices, order, distance bits) on the sphere band (two sizes,
 *            n not a multiple of 64; the larger must prune: < 60 % of the tiles visited),
 *            random patches, exact ties (its lists overflow: the exact fallback), equal keys
 *            (rows that permute each other's values; all rows equal), the shapes above, and a
 *            value beyond FP16's range (all blocks by the fallback); on the band-like cases at
 *            most 5 % of blocks may fall back. patches the
 * device patch matrix (padded layout) equals nw_nlm_patches_cpu bit for bit, borders included, and
 * the centres phi[band[j]]. weights weights, row sums, dt and the update equal the CPU's within
 * 1e-6 relative, with and without the spatial factor. method      the method through its table: CPU
 * and CUDA on test_nlm_accuracy's noisy sphere (its parameters, the default 4 iterations; and
 * re-initialising every 2 so the band is taken again on the GPU path): the result SDFs differ by <
 * 0.01 voxel (max abs), band sizes are equal and dt / rms_change agree. method-tc the CUDA method
 * with its default (tc) kernel gives the exact kernel's SDF bit for bit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "method.h"
#include "nlm_kernels.h"
#include "nlm_surface_method.h"
#include "nlm_testutil.h"
#include "nw_error.h"
#include "nw_nlm_cuda.h"
#include "sdf_reinit.h"
#include "testutil.h"

/* n x p patches: uniform in -3..3, or (ties) one of 0, 0.5, 1 (distances exact, many equal). */
static float *random_patches(int n, int p, gboolean ties, guint32 seed)
{
  float *x = g_new(float, (size_t)n *p);
  GRand *g = g_rand_new_with_seed(seed);
  for (size_t e = 0; e < (size_t)n * p; e++)
    x[e] = ties ? 0.5f * g_rand_int_range(g, 0, 3) : (float)g_rand_double_range(g, -3, 3);
  g_rand_free(g);
  return x;
}

static double sq_norm(const float *a, int p)
{
  double s = 0.0;
  for (int q = 0; q < p; q++)
    s += (double)a[q] * a[q];
  return s;
}

static int cmp_int(const void *a, const void *b)
{
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

typedef struct {
  int rows, same_set, identical; /* rows compared, same kept set, same indices+order+bits */
  int worst_row;                 /* a differing row (-1: none) */
  double worst_excess;           /* largest |d_cuda - d_cpu_m| / (|a|^2 + |b|^2) seen on one */
} TopmCompare;

/* Row j (GPU nbr/nd against CPU cnbr/cnd): the same set? identical? A differing row is allowed
 * only when every element that one side keeps and the other does not lies within 1e-5
 * (|a|^2 + |b|^2) of the CPU's m-th distance (a near-tie at the cut); else the test fails with
 * the row, the element and both distances. */
static void compare_row(TopmCompare *c, const float *x, int p, int m, int j, const int *nbr,
                        const float *nd, const int *cnbr, const float *cnd)
{
  c->rows++;
  if (memcmp(nbr, cnbr, m * sizeof(int)) == 0 && memcmp(nd, cnd, m * sizeof(float)) == 0) {
    c->same_set++, c->identical++;
    return;
  }
  g_autofree int *a = g_memdup2(nbr, m * sizeof(int)), *b = g_memdup2(cnbr, m * sizeof(int));
  qsort(a, m, sizeof(int), cmp_int);
  qsort(b, m, sizeof(int), cmp_int);
  if (memcmp(a, b, m * sizeof(int)) == 0) {
    /* same set, other order or other distance bits: the order must still be ascending */
    c->same_set++;
    for (int s = 1; s < m; s++)
      if (nd[s] < nd[s - 1] || (nd[s] == nd[s - 1] && nbr[s] < nbr[s - 1]))
        g_error("top-m row %d: the CUDA list is not ascending at %d: (%.9g, %d) after (%.9g, %d)",
                j, s, nd[s], nbr[s], nd[s - 1], nbr[s - 1]);
    return;
  }
  const double cut = cnd[m - 1];
  for (int s = 0; s < m; s++) {
    /* a GPU element missing from the CPU's set, then a CPU element missing from the GPU's */
    for (int side = 0; side < 2; side++) {
      const int l = side == 0 ? nbr[s] : cnbr[s];
      const int *other = side == 0 ? b : a;
      if (bsearch(&l, other, m, sizeof(int), cmp_int) != NULL)
        continue;
      const double d = side == 0 ? nd[s] : cnd[s];
      const double scale = sq_norm(x + (size_t)j * p, p) + sq_norm(x + (size_t)l * p, p);
      const double excess = fabs(d - cut) / scale;
      if (excess > 1e-5)
        g_error("top-m row %d: element %d (distance %.9g) is kept by the %s only, and is not a "
                "near-tie of the CPU's m-th distance %.9g (|d - cut| = %.3g > 1e-5 (|a|^2 + "
                "|b|^2) = %.3g)",
                j, l, d, side == 0 ? "GPU" : "CPU", cut, fabs(d - cut), 1e-5 * scale);
      if (excess >= c->worst_excess)
        c->worst_excess = excess, c->worst_row = j;
    }
  }
}

static void report_and_assert(const char *what, const TopmCompare *c, gboolean must_be_identical)
{
  const double same = (double)c->same_set / c->rows;
  g_test_message("top-m %s: %d rows, same set %d (%.4f %%), identical (indices, order, distance "
                 "bits) %d (%.4f %%)%s",
                 what, c->rows, c->same_set, 100.0 * same, c->identical,
                 100.0 * c->identical / c->rows,
                 c->worst_row >= 0 ? "; differing rows are near-ties only" : "");
  printf("# top-m %s: same set %.4f %%, identical %.4f %% of %d rows\n", what, 100.0 * same,
         100.0 * c->identical / c->rows, c->rows);
  if (same < 0.999)
    g_error("top-m %s: only %d of %d rows (%.4f %%) keep the CPU's set; at least 99.9 %% must",
            what, c->same_set, c->rows, 100.0 * same);
  if (must_be_identical && c->identical != c->rows)
    g_error("top-m %s: %d of %d rows differ from the CPU's (indices, order or distance bits); "
            "with exactly representable distances every row must be identical",
            what, c->rows - c->identical, c->rows);
}

/* The whole matrix on both sides, every row compared. */
static void check_topm(const char *what, const float *x, int n, int p, int m,
                       gboolean must_be_identical)
{
  g_autoptr(GError) error = NULL;
  g_autofree int *nbr = g_new(int, (size_t)n *m), *cnbr = g_new(int, (size_t)n *m);
  g_autofree float *nd = g_new(float, (size_t)n *m), *cnd = g_new(float, (size_t)n *m);
  g_assert_true(nw_nlm_neighbours_brute_cpu(cnbr, cnd, x, n, p, m));
  if (!nw_nlm_neighbours_cuda_host(nbr, nd, x, n, p, m, &error))
    g_error("top-m %s (n %d, p %d, m %d): %s", what, n, p, m, error->message);
  TopmCompare c = {0, 0, 0, -1, 0.0};
  for (int j = 0; j < n; j++)
    compare_row(&c, x, p, m, j, nbr + (size_t)j * m, nd + (size_t)j * m, cnbr + (size_t)j * m,
                cnd + (size_t)j * m);
  g_autofree char *label = g_strdup_printf("%s (n %d, p %d, m %d)", what, n, p, m);
  report_and_assert(label, &c, must_be_identical);
}

static void test_topm_random(void)
{
  g_autofree float *x = random_patches(3000, 125, FALSE, 1);
  check_topm("random", x, 3000, 125, 96, FALSE);
}

/* The band and patch matrix of nlm_test_accuracy's noisy sphere, re-initialised as the method
 * does; *n its size. */
static float *sphere_band_patches(int grid, double r, int patch, double band_mm, int *n,
                                  NwVolume **phi_out, guint32 **band_out)
{
  g_autoptr(NwVolume) clean = nlm_test_sphere(grid, r);
  NwVolume *phi = nlm_test_noisy_sphere(clean, r, 0.4, 3, 3, 1.5, 7);
  g_assert_true(nw_sdf_reinit(phi, "test", NULL));
  guint32 *band = g_new(guint32, nw_volume_n_voxels(phi));
  *n = nw_nlm_band_cpu(band, phi, (float)band_mm);
  const int p = patch * patch * patch;
  float *x = g_new(float, (size_t)*n *p);
  nw_nlm_patches_cpu(x, phi, band, *n, patch);
  if (phi_out != NULL)
    *phi_out = phi;
  else
    nw_volume_free(phi);
  if (band_out != NULL)
    *band_out = band;
  else
    g_free(band);
  return x;
}

static void test_topm_sphere(void)
{
  int n = 0;
  g_autofree float *x = sphere_band_patches(32, 8.0, 5, 2.0, &n, NULL, NULL);
  g_assert_cmpint(n, >, 2000);
  check_topm("sphere band", x, n, 125, 96, FALSE);
  check_topm("sphere band", x, n, 125, 16, FALSE);
}

static void test_topm_ties(void)
{
  g_autofree float *a = random_patches(700, 125, TRUE, 2);
  check_topm("ties", a, 700, 125, 128, TRUE);
  g_autofree float *b = random_patches(700, 27, TRUE, 3);
  check_topm("ties", b, 700, 27, 17, TRUE); /* 27 values: few distinct distances */
  g_autofree float *c = random_patches(300, 8, TRUE, 4);
  check_topm("ties", c, 300, 8, 100, TRUE); /* p = 8: one value per lane */
}

/* Sizes around the tile (64 rows) and the chunk (16 slots a lane): n = 2, 64, 65, 129, 130, 200;
 * m = n - 1 (every other row) and m = 128 (the most);
 * patch 3 (one padded chunk a lane, 27 of 128 slots used), 7 (343 values: 3 chunks a lane)
 * and 9 (729: 6 chunks a lane). */
static void test_topm_shapes(void)
{
  const struct {
    int n, p, m;
  } cases[] = {{2, 125, 1},     {65, 125, 64}, {130, 27, 128}, {130, 343, 96},
               {200, 729, 128}, {64, 125, 63}, {129, 125, 128}};
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree float *x = random_patches(cases[i].n, cases[i].p, FALSE, 10 + (guint32)i);
    check_topm("shapes", x, cases[i].n, cases[i].p, cases[i].m, FALSE);
  }
}

/* A band large enough for many tiles: the GPU's whole output, rows sampled against the CPU. */
static void test_topm_large(void)
{
  const int n = 30000, p = 125, m = 96;
  /* Patches of a smooth random-ish field (sums of sines), so distances spread like a band's */
  g_autofree float *x = g_new(float, (size_t)n *p);
  GRand *g = g_rand_new_with_seed(20);
  for (int j = 0; j < n; j++) {
    const double f1 = g_rand_double_range(g, 0.2, 1.2), f2 = g_rand_double_range(g, 0.2, 1.2),
                 ph = g_rand_double_range(g, 0, 6.28), amp = g_rand_double_range(g, 0.5, 2.0);
    for (int q = 0; q < p; q++)
      x[(size_t)j * p + q] = (float)(amp * sin(f1 * (q % 5) + f2 * (q / 25) + ph) +
                                     0.1 * g_rand_double_range(g, -1, 1));
  }
  g_rand_free(g);
  g_autoptr(GError) error = NULL;
  NwNlmTopmBench *b = nw_nlm_topm_bench_new(x, n, p, m, &error);
  if (b == NULL)
    g_error("top-m large: %s", error->message);
  double ms = 0.0;
  if (!nw_nlm_topm_bench_run(b, NW_NLM_KERNEL_EXACT, &ms, &error))
    g_error("top-m large: %s", error->message);
  /* sampled rows: the first and last of the band, both sides of tile edges, and a spread */
  int rows[96], n_rows = 0;
  const int fixed[] = {0, 1, 63, 64, 65, 127, 128, 12799, 12800, n - 65, n - 64, n - 2, n - 1};
  for (size_t i = 0; i < G_N_ELEMENTS(fixed); i++)
    rows[n_rows++] = fixed[i];
  while (n_rows < 96)
    rows[n_rows] = (int)((gint64)(n_rows - 12) * 7919 % n), n_rows++;
  g_autofree float *dist = g_new(float, n);
  g_autofree int *cnbr = g_new(int, (size_t)n *m), *nbr = g_new(int, m);
  g_autofree float *cnd = g_new(float, (size_t)n *m), *nd = g_new(float, m);
  TopmCompare c = {0, 0, 0, -1, 0.0};
  for (int i = 0; i < n_rows; i++) {
    const int j = rows[i];
    nw_nlm_pair_distances_cpu(dist, x, n, p, j, 1);
    nw_nlm_select_top_m_cpu(cnbr, cnd, dist, n, j, 1, m); /* into row j of cnbr / cnd */
    if (!nw_nlm_topm_bench_download(b, nbr, nd, j, 1, &error))
      g_error("top-m large: %s", error->message);
    compare_row(&c, x, p, m, j, nbr, nd, cnbr + (size_t)j * m, cnd + (size_t)j * m);
  }
  /* the tc kernel on the same handle: all 30000 rows identical to the exact kernel's */
  g_autofree int *all = g_new(int, (size_t)n *m), *tall = g_new(int, (size_t)n *m);
  g_autofree float *alld = g_new(float, (size_t)n *m), *talld = g_new(float, (size_t)n *m);
  double tc_ms = 0.0;
  NwNlmTcStats st = {0};
  if (!nw_nlm_topm_bench_download(b, all, alld, 0, n, &error) ||
      !nw_nlm_topm_bench_run(b, NW_NLM_KERNEL_TC, &tc_ms, &error) ||
      !nw_nlm_topm_bench_download(b, tall, talld, 0, n, &error) ||
      !nw_nlm_topm_bench_tc_stats(b, &st, &error))
    g_error("top-m large (tc): %s", error->message);
  nw_nlm_topm_bench_free(b);
  g_test_message("top-m large: n %d, %.1f ms on the GPU (tc %.1f ms, %.1f %% of the tiles "
                 "visited, %.1f candidates a row, %d of %d blocks by the fallback)",
                 n, ms, tc_ms, 100.0 * st.visited_fraction, st.mean_candidates, st.fallback_blocks,
                 st.blocks);
  report_and_assert("large (30000 rows, 96 sampled)", &c, FALSE);
  g_assert_true(memcmp(all, tall, (size_t)n * m * sizeof(int)) == 0);
  g_assert_true(memcmp(alld, talld, (size_t)n * m * sizeof(float)) == 0);
  g_assert_cmpint(st.fallback_blocks, <=, st.blocks / 20);
}

/* The tc kernel (pruned tensor-core filter + exact recheck) against the exact kernel on the
 * same patches: every row identical in indices, order and distance bits (the variant is exact
 * by construction, not to a tolerance). most_fallback: the share of 64-row blocks it may leave
 * to the exact fallback (1.0: any; the band-like cases must be filtered by the tensor cores).
 * Returns the fraction of tiles its filter visited. */
static double check_tc(const char *what, const float *x, int n, int p, int m, double most_fallback,
                       gboolean want_out_of_range)
{
  const NwNlmKernel k = NW_NLM_KERNEL_TC;
  g_autoptr(GError) error = NULL;
  g_autofree int *nbr = g_new(int, (size_t)n *m), *tnbr = g_new(int, (size_t)n *m);
  g_autofree float *nd = g_new(float, (size_t)n *m), *tnd = g_new(float, (size_t)n *m);
  NwNlmTcStats st = {0};
  const char *kn = nw_nlm_kernel_name(k);
  if (!nw_nlm_neighbours_kernel_cuda_host(nbr, nd, x, n, p, m, NW_NLM_KERNEL_EXACT, NULL, &error) ||
      !nw_nlm_neighbours_kernel_cuda_host(tnbr, tnd, x, n, p, m, k, &st, &error))
    g_error("top-m %s %s (n %d, p %d, m %d): %s", kn, what, n, p, m, error->message);
  int differ = 0, first = -1;
  for (int j = 0; j < n; j++)
    if (memcmp(nbr + (size_t)j * m, tnbr + (size_t)j * m, m * sizeof(int)) != 0 ||
        memcmp(nd + (size_t)j * m, tnd + (size_t)j * m, m * sizeof(float)) != 0) {
      differ++;
      first = first < 0 ? j : first;
    }
  printf("# top-m %s %s (n %d, p %d, m %d): %d rows differ from the exact kernel; %.1f %% of "
         "the tiles visited, mean %.1f candidates a row, %d of %d blocks by the exact "
         "fallback%s\n",
         kn, what, n, p, m, differ, 100.0 * st.visited_fraction, st.mean_candidates,
         st.fallback_blocks, st.blocks, st.out_of_range ? ", values beyond FP16's range" : "");
  if (differ > 0)
    g_error("top-m %s %s: %d of %d rows differ from the exact kernel's (first: row %d, element "
            "0: %d (%.9g) against %d (%.9g))",
            kn, what, differ, n, first, tnbr[(size_t)first * m], tnd[(size_t)first * m],
            nbr[(size_t)first * m], nd[(size_t)first * m]);
  g_assert_cmpint(st.out_of_range, ==, want_out_of_range);
  if (st.fallback_blocks > most_fallback * st.blocks)
    g_error("top-m %s %s: %d of %d blocks fell back to the exact kernel; at most %.0f %% may", kn,
            what, st.fallback_blocks, st.blocks, 100.0 * most_fallback);
  return st.visited_fraction;
}

static void test_topm_tc(void)
{
  const gboolean small = nw_test_small_cases();
  int n = 0;
  /* a sphere's band: about 4,300 rows (small: a smaller sphere's; the share of blocks left
   * to the exact fallback is not held to 5 % there, the rows still must equal) */
  g_autofree float *band = small ? sphere_band_patches(16, 4.0, 5, 2.0, &n, NULL, NULL)
                                 : sphere_band_patches(32, 8.0, 5, 2.0, &n, NULL, NULL);
  const double most_fallback = small ? 1.0 : 0.05;
  check_tc("sphere band", band, n, 125, 96, most_fallback, FALSE);
  check_tc("sphere band", band, n, 125, 16, most_fallback, FALSE);
  /* a larger band (about 16000 rows): where the pruning must pay */
  if (!small) {
    int n2 = 0;
    g_autofree float *band2 = sphere_band_patches(48, 16.0, 5, 2.0, &n2, NULL, NULL);
    n2 -= n2 % 64 == 0; /* a partial last tile */
    const double visited = check_tc("larger sphere band", band2, n2, 125, 96, 0.05, FALSE);
    g_assert_cmpfloat(visited, <, 0.6);
  }
  /* equal keys: odd rows permute the even rows' values (same mean and norm, other distances);
   * then every row the same (all distances 0: the order is the index alone) */
  g_autofree float *perm = random_patches(1000, 125, FALSE, 3);
  for (int j = 1; j < 1000; j += 2)
    for (int q = 0; q < 125; q++)
      perm[(size_t)j * 125 + q] = perm[(size_t)(j - 1) * 125 + (q * 7 + 3) % 125];
  check_tc("equal keys", perm, 1000, 125, 96, 0.05, FALSE);
  for (size_t e = 0; e < 300 * 125; e++)
    perm[e] = 0.25f * (float)(e % 125 % 9);
  check_tc("all rows equal", perm, 300, 125, 96, 1.0, FALSE);
  const int n_rnd = small ? 700 : 3000;
  g_autofree float *rnd = random_patches(n_rnd, 125, FALSE, 1);
  check_tc("random", rnd, n_rnd, 125, 96, most_fallback, FALSE);
  /* exact ties everywhere: lists overflow, the fallback must give the exact kernel's rows */
  g_autofree float *ties = random_patches(700, 125, TRUE, 2);
  check_tc("ties", ties, 700, 125, 128, 1.0, FALSE);
  g_autofree float *few = random_patches(300, 8, TRUE, 4);
  check_tc("ties p 8", few, 300, 8, 100, 1.0, FALSE);
  /* shapes: partial tiles, m = n - 1, patch 3 and 7 (tc), 9 (the exact kernel only) */
  const struct {
    int n, p, m;
  } cases[] = {{2, 125, 1},    {65, 125, 64},   {130, 27, 128},
               {130, 343, 96}, {200, 729, 128}, {129, 125, 128}};
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree float *x = random_patches(cases[i].n, cases[i].p, FALSE, 10 + (guint32)i);
    check_tc("shapes", x, cases[i].n, cases[i].p, cases[i].m, 1.0, FALSE);
  }
  /* a value FP16 cannot hold: every block by the exact kernel, the same rows */
  rnd[5 * 125 + 7] = 1e6f;
  check_tc("out of FP16 range", rnd, n_rnd, 125, 96, 1.0, TRUE);
}

static void test_patches(void)
{
  int n = 0;
  g_autoptr(NwVolume) phi = NULL;
  g_autofree guint32 *band = NULL;
  /* a small grid: the sphere's band reaches the border, so clamping is exercised */
  for (int patch = 3; patch <= 7; patch += 2) {
    g_autofree float *x = sphere_band_patches(20, 8.0, patch, 2.0, &n, &phi, &band);
    const int p = patch * patch * patch;
    g_autofree float *gx = g_new(float, (size_t)n *p), *centre = g_new(float, n);
    g_autoptr(GError) error = NULL;
    if (!nw_nlm_patches_cuda_host(gx, centre, phi, band, n, patch, &error))
      g_error("patches (patch %d): %s", patch, error->message);
    for (size_t e = 0; e < (size_t)n * p; e++)
      if (memcmp(&gx[e], &x[e], sizeof(float)) != 0)
        g_error("patches (patch %d): row %zu value %zu: cuda %.9g, cpu %.9g", patch, e / p, e % p,
                gx[e], x[e]);
    for (int j = 0; j < n; j++)
      if (centre[j] != phi->data[band[j]] || centre[j] != x[(size_t)j * p + p / 2])
        g_error("patches (patch %d): centre %d: cuda %.9g, phi %.9g", patch, j, centre[j],
                phi->data[band[j]]);
    g_clear_pointer(&phi, nw_volume_free);
    g_clear_pointer(&band, g_free);
  }
}

static void assert_close(const char *what, int i, double cuda, double cpu, double rel)
{
  if (fabs(cuda - cpu) > rel * fmax(fabs(cpu), 1e-30))
    g_error("%s[%d]: cuda %.9g, cpu %.9g (relative difference %.3g > %.1g)", what, i, cuda, cpu,
            fabs(cuda - cpu) / fmax(fabs(cpu), 1e-30), rel);
}

/* Weights, dt and update from the CPU's own neighbours (so only these kernels are compared). */
static void test_weights_step_update(void)
{
  int n = 0;
  g_autoptr(NwVolume) phi = NULL;
  g_autofree guint32 *band = NULL;
  g_autofree float *x = sphere_band_patches(32, 8.0, 5, 2.0, &n, &phi, &band);
  const int p = 125, m = 32;
  g_autofree int *nbr = g_new(int, (size_t)n *m);
  g_autofree float *nd = g_new(float, (size_t)n *m), *pos = g_new(float, (size_t)n * 3);
  g_assert_true(nw_nlm_neighbours_cpu(nbr, nd, x, n, p, m));
  nw_nlm_positions_cpu(pos, phi, band, n);
  g_autofree float *centre = g_new(float, n), *out = g_new(float, n), *gout = g_new(float, n);
  for (int j = 0; j < n; j++)
    centre[j] = x[(size_t)j * p + p / 2];
  g_autofree float *w = g_new(float, (size_t)n *m), *gw = g_new(float, (size_t)n *m);
  g_autofree float *wsum = g_new(float, n), *gwsum = g_new(float, n);
  const double c1s[2] = {0.0, 30.0};
  for (int k = 0; k < 2; k++) {
    g_autoptr(GError) error = NULL;
    const double c2 = 1.5 * p;
    nw_nlm_weights_cpu(w, wsum, nbr, nd, pos, n, m, c1s[k], c2);
    if (!nw_nlm_weights_cuda_host(gw, gwsum, nbr, nd, pos, n, m, c1s[k], c2, &error))
      g_error("weights: %s", error->message);
    for (size_t e = 0; e < (size_t)n * m; e++)
      assert_close(k ? "w (c1 30)" : "w (c1 0)", (int)e, gw[e], w[e], 1e-6);
    double total = 0.0;
    for (int j = 0; j < n; j++) {
      assert_close("wsum", j, gwsum[j], wsum[j], 1e-6);
      total += wsum[j];
    }
    float dt = nw_nlm_step_size_cpu(wsum, n), gdt = 0.0f;
    double gtotal = 0.0;
    if (!nw_nlm_step_size_cuda_host(&gdt, &gtotal, wsum, n, &error))
      g_error("step size: %s", error->message);
    g_assert_cmpfloat(gdt, ==, dt); /* a max of the same floats, one division */
    assert_close("sum of wsum", 0, gtotal, total, 1e-9);
    nw_nlm_update_cpu(out, centre, nbr, w, n, m, dt);
    if (!nw_nlm_update_cuda_host(gout, centre, nbr, w, n, m, dt, &error))
      g_error("update: %s", error->message);
    for (int j = 0; j < n; j++) /* the change, relative, and phi itself to 1e-6 mm */
      if (fabs(gout[j] - out[j]) > 1e-6 * fmax(fabs(out[j] - centre[j]), 1.0))
        g_error("update[%d]: cuda %.9g, cpu %.9g (centre %.9g)", j, gout[j], out[j], centre[j]);
  }
}

static NwParams *method_params(int reinit_every)
{
  NwParams *p = nw_params_new(nw_nlm_param_specs, NW_NLM_N_PARAMS);
  g_assert_true(nw_params_set(p, "iterations", 4, NULL));
  g_assert_true(nw_params_set(p, "neighbours", 16, NULL));
  g_assert_true(nw_params_set(p, "band", 2.0, NULL));
  g_assert_true(nw_params_set(p, "reinit-every", reinit_every, NULL));
  return p;
}

static void check_method(int reinit_every)
{
  const double r = 8.0;
  g_autoptr(NwVolume) clean = nlm_test_sphere(32, r);
  g_autoptr(NwVolume) noisy = nlm_test_noisy_sphere(clean, r, 0.4, 3, 3, 1.5, 7);
  g_autoptr(NwParams) p = method_params(reinit_every);
  NwIterationReport rc[4], rg[4];
  int band_c = 0, band_g = 0;
  g_autoptr(NwVolume) a = nlm_test_denoise_ops(&nw_nlm_surface_cpu_ops, noisy, p, &band_c, rc);
  g_autoptr(NwVolume) b = nlm_test_denoise_ops(&nw_nlm_surface_cuda_ops, noisy, p, &band_g, rg);
  double most = 0.0;
  size_t at = 0;
  for (size_t e = 0; e < nw_volume_n_voxels(a); e++)
    if (fabs((double)a->data[e] - b->data[e]) > most)
      most = fabs((double)a->data[e] - b->data[e]), at = e;
  g_test_message("method (reinit-every %d): band %d; max |sdf cpu - sdf cuda| %.3g mm at voxel %zu",
                 reinit_every, band_c, most, at);
  printf("# method (reinit-every %d): max |sdf cpu - sdf cuda| = %.3g voxel\n", reinit_every, most);
  if (most >= 0.01)
    g_error("method (reinit-every %d): CPU and CUDA SDFs differ by %.4g voxel at voxel %zu "
            "(cpu %.6g, cuda %.6g); at most 0.01",
            reinit_every, most, at, a->data[at], b->data[at]);
  for (int it = 0; it < 4; it++) {
    const char *names[] = {"band", "dt", "rms_change", "mean_wsum"};
    for (int f = 0; f < 4; f++) {
      double x = nw_test_figure(&rc[it], names[f]), y = nw_test_figure(&rg[it], names[f]);
      if (fabs(x - y) > 1e-4 * fmax(fabs(x), 1e-3))
        g_error("method (reinit-every %d): iteration %d: %s: cpu %.9g, cuda %.9g", reinit_every,
                it + 1, names[f], x, y);
    }
  }
}

static void test_method(void)
{
  check_method(5); /* the default: no re-initialisation within 4 iterations */
  check_method(2); /* the band taken again on the GPU path after iteration 2 */
}

/* The method with its default kernel (tc) and with NW_NLM_KERNEL=exact: the same SDF bit for
 * bit (the neighbours are the same, so is every later step), re-initialising every 2
 * iterations. */
static void test_method_tc(void)
{
  const double r = 8.0;
  g_autoptr(NwVolume) clean = nlm_test_sphere(32, r);
  g_autoptr(NwVolume) noisy = nlm_test_noisy_sphere(clean, r, 0.4, 3, 3, 1.5, 7);
  g_autoptr(NwParams) p = method_params(2);
  NwIterationReport re[4], rt[4];
  int band_e = 0, band_t = 0;
  g_setenv("NW_NLM_KERNEL", "exact", TRUE);
  g_autoptr(NwVolume) a = nlm_test_denoise_ops(&nw_nlm_surface_cuda_ops, noisy, p, &band_e, re);
  g_unsetenv("NW_NLM_KERNEL");
  g_autoptr(NwVolume) b = nlm_test_denoise_ops(&nw_nlm_surface_cuda_ops, noisy, p, &band_t, rt);
  g_assert_cmpint(band_e, ==, band_t);
  size_t differ = 0;
  for (size_t e = 0; e < nw_volume_n_voxels(a); e++)
    differ += memcmp(&a->data[e], &b->data[e], sizeof(float)) != 0;
  printf("# method tc: %zu voxels differ from the exact kernel's SDF\n", differ);
  g_assert_cmpuint(differ, ==, 0);
}

/* More neighbours than the GPU keeps: refused with a message, not a different result. */
static void test_method_refuses_large_m(void)
{
  g_autoptr(NwVolume) clean = nlm_test_sphere(24, 6.0);
  g_autoptr(NwParams) p = method_params(5);
  g_assert_true(nw_params_set(p, "neighbours", 200, NULL));
  NwMethodInputs in = {.fixed = clean};
  g_autoptr(GError) error = NULL;
  g_assert_null(nw_nlm_surface_cuda_ops.create(&in, p, &error));
  g_assert_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED);
  g_assert_nonnull(strstr(error->message, "at most 128"));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  if (!nw_test_have_cuda())
    return NW_TEST_SKIP;
  g_test_add_func("/cuda/nlm/top-m-random", test_topm_random);
  g_test_add_func("/cuda/nlm/top-m-sphere", test_topm_sphere);
  g_test_add_func("/cuda/nlm/top-m-ties", test_topm_ties);
  g_test_add_func("/cuda/nlm/top-m-shapes", test_topm_shapes);
  g_test_add_func("/cuda/nlm/top-m-large", test_topm_large);
  g_test_add_func("/cuda/nlm/top-m-tc", test_topm_tc);
  g_test_add_func("/cuda/nlm/patches", test_patches);
  g_test_add_func("/cuda/nlm/weights-step-update", test_weights_step_update);
  g_test_add_func("/cuda/nlm/method-sphere", test_method);
  g_test_add_func("/cuda/nlm/method-tc", test_method_tc);
  g_test_add_func("/cuda/nlm/method-refuses-large-m", test_method_refuses_large_m);
  return g_test_run();
}
