/* test_sdf_reinit.c — fast-sweeping re-initialisation (core/sdf_reinit.c): a sphere given by a
 * function that is not a distance comes back as its signed distance within half a voxel (in
 * the 6 mm around the surface that the method reads; within a voxel anywhere), with
 * |grad phi| close to 1, also on an anisotropic grid; masks, extension from known values, and
 * the errors (no surface, NaN). */
#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "nw_error.h"
#include "sdf_reinit.h"
#include "testutil.h"

#define N 32
#define R 9.0

static void centre(double c[3])
{
  c[0] = 15.3, c[1] = 15.8, c[2] = 15.1;
}

/* (|x - c|^2 - R^2) / (2 R) in mm: the sphere's zero set, but |grad| = |x - c| / R != 1. */
static NwVolume *sphere_not_distance(double sz)
{
  NwVolume *v = nw_volume_new(N, N, N, 1, NULL);
  nw_volume_set_spacing(v, 1.0, 1.0, sz);
  double c[3];
  centre(c);
  for (int k = 0; k < N; k++)
    for (int j = 0; j < N; j++)
      for (int i = 0; i < N; i++) {
        double x = i - c[0], y = j - c[1], z = (k - c[2]) * sz;
        v->data[nw_volume_index(v, i, j, k)] = (float)((x * x + y * y + z * z - R * R) / (2 * R));
      }
  return v;
}

static double exact(int i, int j, int k, double sz)
{
  double c[3];
  centre(c);
  double x = i - c[0], y = j - c[1], z = (k - c[2]) * sz;
  return sqrt(x * x + y * y + z * z) - R;
}

/* Largest |phi - exact| over the voxels within `within` mm of the surface (0: all). */
static double max_error(const NwVolume *phi, double sz, double within)
{
  double worst = 0.0;
  for (int k = 0; k < N; k++)
    for (int j = 0; j < N; j++)
      for (int i = 0; i < N; i++) {
        double e = exact(i, j, k, sz);
        if (within > 0 && fabs(e) > within)
          continue;
        worst = MAX(worst, fabs(phi->data[nw_volume_index(phi, i, j, k)] - e));
      }
  return worst;
}

/* Mean | |grad phi| - 1 | (central differences, mm) and the fraction within 0.1 of 1, over
 * voxels 2..6 mm from the surface outside and 2..6 mm inside (away from the kinks at the
 * surface and the centre, where no distance function is differentiable). */
static void gradient_norms(const NwVolume *phi, double *mean_dev, double *within)
{
  double sum = 0.0;
  int n = 0, ok = 0;
  for (int k = 1; k < N - 1; k++)
    for (int j = 1; j < N - 1; j++)
      for (int i = 1; i < N - 1; i++) {
        double e = fabs(exact(i, j, k, phi->spacing_mm[2]));
        if (e < 2.0 || e > 6.0)
          continue;
        double g[3];
        const size_t idx = nw_volume_index(phi, i, j, k);
        const size_t st[3] = {1, N, N * N};
        for (int a = 0; a < 3; a++)
          g[a] = (phi->data[idx + st[a]] - phi->data[idx - st[a]]) / (2.0 * phi->spacing_mm[a]);
        double dev = fabs(sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]) - 1.0);
        sum += dev;
        ok += dev <= 0.1;
        n++;
      }
  *mean_dev = sum / n;
  *within = (double)ok / n;
}

static void check_sphere(double sz)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(NwVolume) phi = sphere_not_distance(sz);
  double before = max_error(phi, sz, 0); /* sz: the largest spacing, "a voxel" below */
  g_assert_true(nw_sdf_reinit(phi, "sphere", &error));
  g_assert_no_error(error);
  double err_all = max_error(phi, sz, 0), err_band = max_error(phi, sz, 6.0),
         err_near = max_error(phi, sz, 2.0);
  double mean_dev, within;
  gradient_norms(phi, &mean_dev, &within);
  g_test_message("spacing z %.1f: max error %.3f mm within 2 mm, %.3f within 6 mm, %.3f "
                 "anywhere (input %.2f); | |grad| - 1 | mean %.4f, %.1f%% within 0.1",
                 sz, err_near, err_band, err_all, before, mean_dev, 100 * within);
  g_assert_cmpfloat(before, >, 2.0); /* the input was far from a distance */
  /* Half a voxel where the method works (band + patch radius); the first-order scheme's
   * error grows with the distance, up to a voxel at the sphere's centre (a kink). */
  g_assert_cmpfloat(err_near, <=, 0.15 * sz);
  g_assert_cmpfloat(err_band, <=, 0.5 * sz);
  g_assert_cmpfloat(err_all, <=, 1.0 * sz);
  g_assert_cmpfloat(mean_dev, <=, 0.05);
  g_assert_cmpfloat(within, >=, 0.95);
}

static void test_sphere(void)
{
  check_sphere(1.0);
}

static void test_sphere_anisotropic(void)
{
  check_sphere(1.5);
}

/* A mask's distance: the surface half-way between voxel centres; a staircase, so within a
 * voxel of the true sphere, and signs as the mask says. */
static void test_mask(void)
{
  g_autoptr(NwVolume) mask = nw_volume_new(N, N, N, 1, NULL);
  for (int k = 0; k < N; k++)
    for (int j = 0; j < N; j++)
      for (int i = 0; i < N; i++)
        mask->data[nw_volume_index(mask, i, j, k)] = exact(i, j, k, 1.0) <= 0.0;
  g_autoptr(GError) error = NULL;
  g_autoptr(NwVolume) phi = nw_sdf_from_mask(mask, "mask", &error);
  g_assert_no_error(error);
  for (size_t e = 0; e < nw_volume_n_voxels(phi); e++)
    g_assert_cmpint(phi->data[e] <= 0.0f, ==, mask->data[e] >= 0.5f);
  double err = max_error(phi, 1.0, 0);
  g_test_message("mask: max error %.3f mm", err);
  g_assert_cmpfloat(err, <=, 1.0);
}

/* Known values extend as distances: one known plane of voxels gives |z - z0| everywhere. */
static void test_extend(void)
{
  g_autoptr(NwVolume) phi = nw_volume_new(8, 8, 12, 1, NULL);
  g_autofree guint8 *known = g_new0(guint8, nw_volume_n_voxels(phi));
  for (int k = 0; k < 12; k++)
    for (int j = 0; j < 8; j++)
      for (int i = 0; i < 8; i++) {
        size_t e = nw_volume_index(phi, i, j, k);
        phi->data[e] = k < 5 ? -1.0f : 1.0f;
        if (k == 4 || k == 5) {
          phi->data[e] = k == 4 ? -0.5f : 0.5f;
          known[e] = 1;
        }
      }
  g_assert_true(nw_sdf_extend(phi, known, "plane", NULL));
  for (int k = 0; k < 12; k++)
    g_assert_cmpfloat_with_epsilon(phi->data[nw_volume_index(phi, 3, 3, k)], k - 4.5, 1e-5);
}

/* The largest d an upwind voxel allows (the eikonal update written out again here, apart from
 * sdf_reinit.c): sum over the axes used of ((d - a_i) / h_i)^2 = 1. */
static double upwind(double a0, double a1, double a2, const double h_in[3])
{
  double a[3] = {a0, a1, a2}, h[3] = {h_in[0], h_in[1], h_in[2]};
  for (int x = 0; x < 3; x++) /* by a, ascending */
    for (int y = x + 1; y < 3; y++)
      if (a[y] < a[x]) {
        double t = a[x], u = h[x];
        a[x] = a[y], h[x] = h[y], a[y] = t, h[y] = u;
      }
  double d = a[0] + h[0];
  for (int m = 2; m <= 3; m++) { /* the first m axes, while d stays above the next a */
    if (d <= a[m - 1])
      break;
    double sa = 0, sb = 0, sc = 0;
    for (int q = 0; q < m; q++) {
      const double w = 1.0 / (h[q] * h[q]);
      sa += w, sb += a[q] * w, sc += a[q] * a[q] * w;
    }
    const double disc = sb * sb - sa * (sc - 1.0);
    if (disc >= 0.0)
      d = (sb + sqrt(disc)) / sa;
  }
  return d;
}

/* The sweeps ran to their fixed point: every voxel off the interface (no face neighbour of the
 * other sign) holds the upwind solution of its neighbours to 1e-4 mm (the stopping tolerance;
 * the floats' rounding is far below it). Returns the largest residual. */
static double eikonal_residual(const NwVolume *phi)
{
  const int n[3] = {phi->nx, phi->ny, phi->nz};
  const double h[3] = {phi->spacing_mm[0], phi->spacing_mm[1], phi->spacing_mm[2]};
  double worst = 0.0;
  for (int k = 0; k < n[2]; k++)
    for (int j = 0; j < n[1]; j++)
      for (int i = 0; i < n[0]; i++) {
        const int c[3] = {i, j, k};
        const float v = phi->data[nw_volume_index(phi, i, j, k)];
        double a[3] = {INFINITY, INFINITY, INFINITY};
        gboolean interface = FALSE;
        for (int ax = 0; ax < 3; ax++)
          for (int s = -1; s <= 1; s += 2) {
            int q[3] = {c[0], c[1], c[2]};
            q[ax] += s;
            if (q[ax] < 0 || q[ax] >= n[ax])
              continue;
            const float w = phi->data[nw_volume_index(phi, q[0], q[1], q[2])];
            interface |= (w <= 0.0f) != (v <= 0.0f);
            a[ax] = MIN(a[ax], fabs(w));
          }
        if (!interface)
          worst = MAX(worst, fabs(upwind(a[0], a[1], a[2], h) - fabs(v)));
      }
  return worst;
}

/* The sweeps run the tiles of a wavefront in parallel and must give the plain serial sweep's
 * bits (one tile larger than the grid, one thread) for any tile and thread count: a grid of
 * partial tiles (53 x 41 x 37, anisotropic), two spheres' rough level set. */
static void test_tiles(void)
{
  g_autoptr(NwVolume) serial = nw_volume_new(53, 41, 37, 1, NULL);
  nw_volume_set_spacing(serial, 1.0, 1.3, 0.8);
  for (int k = 0; k < serial->nz; k++)
    for (int j = 0; j < serial->ny; j++)
      for (int i = 0; i < serial->nx; i++) {
        const double r1 = sqrt((i - 15.2) * (i - 15.2) + (j - 20.1) * (j - 20.1) + (k - 18.3) * (k - 18.3));
        const double r2 = sqrt((i - 38.7) * (i - 38.7) + (j - 14.9) * (j - 14.9) + (k - 12.4) * (k - 12.4));
        serial->data[nw_volume_index(serial, i, j, k)] =
            (float)(MIN(r1 - 9.0, r2 - 6.5) * (1.0 + 0.3 * sin(0.7 * i)));
      }
  g_autoptr(GError) error = NULL;
  const int tiles[] = {16, 5, 1, 64};
  NwVolume *tiled[G_N_ELEMENTS(tiles)];
  for (size_t t = 0; t < G_N_ELEMENTS(tiles); t++)
    tiled[t] = nw_volume_copy(serial);
#ifdef _OPENMP
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
#endif
  g_assert_true(nw_sdf_reinit_tiled(serial, 1 << 20, "serial", &error));
  const double res = eikonal_residual(serial);
  g_test_message("tiles: largest eikonal residual off the interface %.2g mm", res);
  g_assert_cmpfloat(res, <=, 1e-4);
#ifdef _OPENMP
  omp_set_num_threads(4);
#endif
  for (size_t t = 0; t < G_N_ELEMENTS(tiles); t++) {
    g_assert_true(nw_sdf_reinit_tiled(tiled[t], tiles[t], "tiled", &error));
    g_assert_cmpint(memcmp(serial->data, tiled[t]->data, nw_volume_n_voxels(serial) * sizeof(float)), ==, 0);
    nw_volume_free(tiled[t]);
  }
#ifdef _OPENMP
  omp_set_num_threads(threads);
#endif
  g_assert_no_error(error);
}

static void test_errors(void)
{
  g_autoptr(NwVolume) v = nw_volume_new(4, 4, 4, 1, NULL);
  for (size_t e = 0; e < 64; e++)
    v->data[e] = 2.0f;
  g_autoptr(GError) error = NULL;
  g_assert_false(nw_sdf_reinit(v, "flat.nii", &error));
  g_assert_error(error, NW_ERROR, NW_ERROR_INVALID);
  g_assert_nonnull(strstr(error->message, "flat.nii: no surface"));
  g_clear_error(&error);
  v->data[5] = NAN;
  v->data[6] = -1.0f;
  g_assert_false(nw_sdf_reinit(v, "nan.nii", &error));
  g_assert_nonnull(strstr(error->message, "nan.nii: 1 of 64 voxels are NaN"));
  g_clear_error(&error);
  for (size_t e = 0; e < 64; e++)
    v->data[e] = 0.0f;
  g_assert_null(nw_sdf_from_mask(v, "empty.nii", &error));
  g_assert_nonnull(strstr(error->message, "empty.nii: the mask is empty"));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/sdf/reinit/sphere", test_sphere);
  g_test_add_func("/sdf/reinit/sphere-anisotropic", test_sphere_anisotropic);
  g_test_add_func("/sdf/reinit/mask", test_mask);
  g_test_add_func("/sdf/reinit/extend", test_extend);
  g_test_add_func("/sdf/reinit/tiles", test_tiles);
  g_test_add_func("/sdf/reinit/errors", test_errors);
  return g_test_run();
}
