/* nlm_testutil.c — see nlm_testutil.h. */
#include "nlm_testutil.h"

#include <math.h>

#include "level_set.h"
#include "nlm_surface_method.h"
#include "sampler.h"
#include "sdf_reinit.h"

static void centre(int n, double c[3])
{
  c[0] = (n - 1) / 2.0 + 0.23, c[1] = (n - 1) / 2.0 - 0.17, c[2] = (n - 1) / 2.0 + 0.11;
}

NwVolume *nlm_test_sphere(int n, double r)
{
  NwVolume *v = nw_volume_new(n, n, n, 1, NULL);
  double c[3];
  centre(n, c);
  for (int k = 0; k < n; k++)
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++)
        v->data[nw_volume_index(v, i, j, k)] =
            (float)(sqrt((i - c[0]) * (i - c[0]) + (j - c[1]) * (j - c[1]) +
                         (k - c[2]) * (k - c[2])) -
                    r);
  return v;
}

static double gauss(GRand *g)
{
  double u = g_rand_double_range(g, 1e-12, 1.0), w = g_rand_double(g);
  return sqrt(-2.0 * log(u)) * cos(2.0 * G_PI * w);
}

NwVolume *nlm_test_add_noise(const NwVolume *phi, double noise_mm, guint32 seed)
{
  NwVolume *v = nw_volume_copy(phi);
  GRand *g = g_rand_new_with_seed(seed);
  for (size_t e = 0; e < nw_volume_n_voxels(v); e++)
    v->data[e] += (float)(noise_mm * gauss(g));
  g_rand_free(g);
  return v;
}

/* Ball of radius br at distance `at` from the centre c along unit direction u: its signed
 * distance at voxel (i, j, k). */
static double ball(const double c[3], const double u[3], double at, double br, int i, int j, int k)
{
  double p[3] = {c[0] + at * u[0], c[1] + at * u[1], c[2] + at * u[2]};
  return sqrt((i - p[0]) * (i - p[0]) + (j - p[1]) * (j - p[1]) + (k - p[2]) * (k - p[2])) - br;
}

/* Blobs and holes alternate along the spiral while both last. */
static gboolean is_blob(int b, int n_blobs, int n_holes)
{
  int pairs = MIN(n_blobs, n_holes);
  if (b < 2 * pairs)
    return b % 2 == 0;
  return n_blobs > pairs;
}

NwVolume *nlm_test_noisy_sphere(const NwVolume *clean, double r, double noise_mm, int n_blobs,
                                int n_holes, double blob_mm, guint32 seed)
{
  NwVolume *v = nlm_test_add_noise(clean, noise_mm, seed);
  double c[3];
  centre(v->nx, c);
  /* Directions spread over the sphere (golden-angle spiral), blobs and holes alternating. */
  const int total = n_blobs + n_holes;
  for (int b = 0; b < total; b++) {
    double z = 1.0 - (2.0 * b + 1.0) / total, rho = sqrt(1.0 - z * z);
    double phi = b * G_PI * (3.0 - sqrt(5.0));
    const double u[3] = {rho * cos(phi), rho * sin(phi), z};
    gboolean blob = is_blob(b, n_blobs, n_holes);
    double at = blob ? r + 3.0 + blob_mm : r - 3.0 - blob_mm;
    for (int k = 0; k < v->nz; k++)
      for (int j = 0; j < v->ny; j++)
        for (int i = 0; i < v->nx; i++) {
          float *x = &v->data[nw_volume_index(v, i, j, k)];
          double d = ball(c, u, at, blob_mm, i, j, k);
          *x = blob ? (float)MIN(*x, d) : (float)MAX(*x, -d);
        }
  }
  return v;
}

NwVolume *nlm_test_boxes(int n)
{
  g_autoptr(NwVolume) mask = nw_volume_new(n, n, n, 1, NULL);
  /* Box A: a cube; box B: a flatter box on A's +x face, offset in y and z, so that the union
   * has convex and concave edges and corners. Inclusive voxel ranges. */
  const int a0 = n / 5, a1 = n / 2, b1 = a1 + n / 4;
  for (int k = 0; k < n; k++)
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) {
        gboolean in_a = i >= a0 && i <= a1 && j >= a0 && j <= a1 && k >= a0 && k <= a1;
        gboolean in_b = i > a1 && i <= b1 && j >= a0 + 3 && j <= b1 && k >= a0 + 2 && k <= a1 - 2;
        mask->data[nw_volume_index(mask, i, j, k)] = in_a || in_b;
      }
  return nw_sdf_from_mask(mask, "boxes", NULL);
}

/* Mean over the vertices of `of`'s zero level set of |field| sampled there. */
static double mean_abs_at_surface(const NwVolume *of, const NwVolume *field)
{
  g_autoptr(GError) error = NULL;
  NwSurface *s = nw_level_set_mesh(of, field, &error);
  g_assert_no_error(error);
  double sum = 0.0;
  for (int v = 0; v < s->n_vertices; v++)
    sum += fabs(s->scalars[v]);
  double mean = sum / MAX(1, s->n_vertices);
  nw_surface_free(s);
  return mean;
}

double nlm_test_surface_distance(const NwVolume *a, const NwVolume *clean)
{
  g_autoptr(NwVolume) a_sdf = nw_volume_copy(a);
  g_assert_true(nw_sdf_reinit(a_sdf, "test", NULL));
  return 0.5 * (mean_abs_at_surface(a, clean) + mean_abs_at_surface(clean, a_sdf));
}

NwVolume *nlm_test_denoise(const NwVolume *phi, const NwParams *p, int *band)
{
  return nlm_test_denoise_ops(&nw_nlm_surface_cpu_ops, phi, p, band, NULL);
}

NwVolume *nlm_test_denoise_ops(const NwMethodOps *ops, const NwVolume *phi, const NwParams *p,
                               int *band, NwIterationReport *reports)
{
  g_autoptr(GError) error = NULL;
  NwMethodInputs in = {.fixed = phi};
  void *state = ops->create(&in, p, &error);
  g_assert_no_error(error);
  int iterations = nw_params_get_int(p, "iterations");
  for (int it = 0; it < iterations; it++) {
    NwIterationReport r = {0};
    gboolean stepped = ops->step(state, &r, &error);
    g_assert_no_error(error); /* first, so that a failure shows its message */
    g_assert_true(stepped);
    if (it == 0 && band != NULL)
      *band = (int)r.figures[2];
    if (reports != NULL)
      reports[it] = r;
    if (g_getenv("NLM_VERBOSE"))
      g_printerr("  it %d: rms %.4f max %.3f band %.0f dt %.4f wsum %.2f\n", r.iteration,
                 r.figures[0], r.figures[1], r.figures[2], r.figures[3], r.figures[4]);
  }
  NwMethodResult *res = ops->result(state, &error);
  g_assert_no_error(error);
  ops->destroy(state);
  NwVolume *out = nw_method_result_take(res, "sdf");
  nw_method_result_free(res);
  return out;
}
