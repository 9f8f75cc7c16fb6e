/* test_demo.c — the demo case (core/demo.c): determinism, the true field's peak and positive
 * Jacobian, moving = fixed pulled back through the true field up to bias and noise, labels.
 * Phantom always; Colin27 at 2 mm when mricron-data is installed. CPU, a few seconds. */
#include <math.h>
#include <string.h>

#include "demo.h"
#include "field.h"
#include "nw_error.h"
#include "resample.h"
#include "smooth.h"
#include "testutil.h"

static NwDemoCase make_case(guint32 seed, gboolean phantom, double noise, double bias)
{
  NwDemoOptions o;
  nw_demo_options_init(&o);
  o.seed = seed;
  o.force_phantom = phantom;
  o.noise_sigma = noise;
  o.bias_amplitude = bias;
  NwDemoCase c;
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_demo_make(&o, 2.0, &c, &error));
  g_assert_no_error(error);
  return c;
}

static gboolean same_bytes(const NwVolume *a, const NwVolume *b)
{
  return nw_volume_n_floats(a) == nw_volume_n_floats(b) &&
         memcmp(a->data, b->data, nw_volume_n_floats(a) * sizeof(float)) == 0;
}

static void test_determinism(void)
{
  NwDemoCase a = make_case(3, TRUE, 0.02, 0.1), b = make_case(3, TRUE, 0.02, 0.1);
  NwDemoCase c = make_case(4, TRUE, 0.02, 0.1);
  g_assert_true(a.is_phantom);
  g_assert_true(same_bytes(a.moving, b.moving));
  g_assert_true(same_bytes(a.true_field, b.true_field));
  g_assert_true(same_bytes(a.moving_labels, b.moving_labels));
  g_assert_false(same_bytes(a.moving, c.moving));
  g_assert_false(same_bytes(a.true_field, c.true_field));
  g_assert_true(same_bytes(a.fixed, c.fixed)); /* the seed moves the copy, not the source */
  nw_demo_case_clear(&a);
  nw_demo_case_clear(&b);
  nw_demo_case_clear(&c);
}

/* Sorted distinct values; asserts they are integers. */
static GArray *label_set(const NwVolume *v)
{
  GArray *set = g_array_new(FALSE, FALSE, sizeof(int));
  gboolean seen[65536] = {FALSE};
  for (size_t e = 0; e < nw_volume_n_voxels(v); e++) {
    float x = v->data[e];
    g_assert_cmpfloat(x, ==, floorf(x));
    g_assert_true(x >= 0.0f && x < 65536.0f);
    seen[(int)x] = TRUE;
  }
  for (int l = 0; l < 65536; l++)
    if (seen[l])
      g_array_append_val(set, l);
  return set;
}

static void check_labels(const NwDemoCase *c, guint min_labels)
{
  g_autoptr(GArray) f = label_set(c->fixed_labels), m = label_set(c->moving_labels);
  g_assert_cmpuint(f->len, >=, min_labels);
  g_assert_cmpuint(f->len, ==, m->len);
  g_assert_cmpmem(f->data, f->len * sizeof(int), m->data, m->len * sizeof(int));
}

/* Grid of the phantom at 2 mm, its peak displacement and the Jacobian of the true field. */
static void check_field(const NwDemoCase *c, double max_disp_mm)
{
  const NwVolume *u = c->true_field;
  g_assert_cmpint(u->nc, ==, 3);
  g_assert_true(nw_volume_same_grid(u, c->fixed));
  g_assert_cmpfloat_with_epsilon(nw_field_max_norm(u), max_disp_mm / u->spacing_mm[0], 1e-4);
  g_autoptr(NwVolume) det = nw_volume_new_like(u, 1, NULL);
  nw_field_jacobian_det(det, u);
  NwJacobianStats js;
  nw_jacobian_stats(det, &js);
  g_test_message("Jacobian min %g max %g", js.min, js.max);
  g_assert_cmpfloat(js.min, >, 0.2);
  g_assert_cmpfloat(js.max, <, 5.0);
  g_assert_cmpuint(js.n_folds, ==, 0);
}

/* Grid, field and labels of the phantom at 2 mm. */
static void test_phantom_field(void)
{
  NwDemoCase c = make_case(1, TRUE, 0.02, 0.1);
  g_assert_cmpint(c.fixed->nx, ==, 60);
  g_assert_cmpint(c.fixed->ny, ==, 72);
  g_assert_cmpint(c.fixed->nz, ==, 60);
  g_assert_cmpfloat_with_epsilon(c.fixed->spacing_mm[0], 2.0, 1e-6);
  check_field(&c, 4.0);
  check_labels(&c, 10); /* background and labels 1..9 */
  nw_demo_case_clear(&c);
}

/* Mean |a - b| over the voxels. */
static double mean_abs_diff(const NwVolume *a, const NwVolume *b)
{
  double s = 0.0;
  size_t n = nw_volume_n_voxels(a);
  for (size_t e = 0; e < n; e++)
    s += fabs((double)a->data[e] - (double)b->data[e]);
  return s / (double)n;
}

/* moving ∘ (id + u) must give fixed back, up to bias, noise and interpolation. Two trilinear
 * passes blur the phantom's sharp edges by a fraction of a voxel, so both sides are compared
 * after a Gaussian of 1.5 voxels, which keeps a 2-voxel displacement plainly visible. The
 * undeformed difference is the yardstick. */
static void check_recovery(const NwDemoCase *c, double max_ratio)
{
  const double sigma_vox[3] = {1.5, 1.5, 1.5};
  g_autoptr(NwVolume) back = nw_volume_new_like(c->fixed, 1, NULL);
  nw_warp(back, c->moving, c->true_field, NW_INTERP_LINEAR);
  g_autoptr(NwVolume) fixed = nw_volume_copy(c->fixed);
  g_autoptr(NwVolume) moving = nw_volume_copy(c->moving);
  g_assert_true(nw_smooth_gaussian(back, sigma_vox, NULL));
  g_assert_true(nw_smooth_gaussian(fixed, sigma_vox, NULL));
  g_assert_true(nw_smooth_gaussian(moving, sigma_vox, NULL));
  double before = mean_abs_diff(moving, fixed), after = mean_abs_diff(back, fixed);
  g_test_message("mean |moving - fixed| %g, after the true field %g", before, after);
  g_assert_cmpfloat(after, <, max_ratio * before);
}

static void test_phantom_recovery(void)
{
  NwDemoCase clean = make_case(5, TRUE, 0.0, 0.0);
  check_recovery(&clean, 0.35);
  /* Bias and noise: the residual is about their size, still well below the deformation's. */
  NwDemoCase noisy = make_case(5, TRUE, 0.02, 0.1);
  check_recovery(&noisy, 0.8);
  nw_demo_case_clear(&clean);
  nw_demo_case_clear(&noisy);
}

static void test_field_2d(void)
{
  g_autoptr(NwVolume) u = nw_volume_new(64, 48, 1, 3, NULL);
  nw_demo_smooth_field(u, 3.0, 9);
  g_assert_cmpfloat_with_epsilon(nw_field_max_norm(u), 3.0, 1e-4);
  for (size_t e = 0; e < nw_volume_n_voxels(u); e++)
    g_assert_cmpfloat(u->data[e * 3 + 2], ==, 0.0f); /* no motion along a flat axis */
  g_assert_cmpuint(nw_field_count_folds(u), ==, 0);
}

/* The drawn generator: its options in their ranges and set from the seed alone, the same
 * bytes for a seed, a diffeomorphic true field (a velocity, integrated) whose inverse takes
 * the moving image back to the fixed one, Rician noise positive in the background. */
static void test_drawn(void)
{
  int rician = 0, gaussian = 0;
  for (guint32 seed = 1; seed <= 40; seed++) {
    NwDemoOptions o;
    nw_demo_options_init(&o);
    o.seed = seed;
    nw_demo_draw(&o);
    g_assert_cmpfloat(o.max_disp_mm, >=, 2.0);
    g_assert_cmpfloat(o.max_disp_mm, <=, 8.0);
    g_assert_cmpint(o.n_terms, >=, 2);
    g_assert_cmpint(o.n_terms, <=, 8);
    g_assert_cmpfloat(o.wavelength[0], >=, 0.3);
    g_assert_cmpfloat(o.wavelength[1], <=, 1.0 + 1e-12);
    g_assert_cmpfloat(o.bias_amplitude, <=, 0.3);
    g_assert_cmpfloat(o.noise_sigma, >=, 0.005);
    g_assert_cmpfloat(o.noise_sigma, <=, 0.05);
    g_assert_cmpfloat(fabs(log(o.gamma)), <=, log(1.0 / 0.75) + 1e-12);
    g_assert_true(o.velocity && o.bias_drawn);
    rician += o.rician;
    gaussian += !o.rician;
  }
  g_assert_cmpint(rician, >, 5); /* both kinds come up */
  g_assert_cmpint(gaussian, >, 5);

  NwDemoOptions o;
  nw_demo_options_init(&o);
  o.seed = 23;
  o.force_phantom = TRUE;
  nw_demo_draw(&o);
  o.noise_sigma = 0.03;
  o.rician = TRUE;
  NwDemoCase a, b;
  g_assert_true(nw_demo_make(&o, 2.0, &a, NULL));
  g_assert_true(nw_demo_make(&o, 2.0, &b, NULL));
  g_assert_true(same_bytes(a.moving, b.moving));
  g_assert_true(same_bytes(a.true_field, b.true_field));
  g_autofree char *line = nw_demo_describe(&o);
  g_test_message("%s", line);
  g_assert_nonnull(strstr(line, "seed=23 "));
  g_assert_nonnull(strstr(line, "noise_kind=rician"));
  /* a diffeomorphism of about the peak asked for (the velocity's; its exponential's is near) */
  const double peak_mm = nw_field_max_norm(a.true_field) * a.fixed->spacing_mm[0];
  g_test_message("peak displacement %.3f mm for a velocity of %.3f mm", peak_mm, o.max_disp_mm);
  g_assert_cmpfloat(fabs(peak_mm - o.max_disp_mm), <, 0.25 * o.max_disp_mm);
  g_autoptr(NwVolume) det = nw_volume_new_like(a.true_field, 1, NULL);
  nw_field_jacobian_det(det, a.true_field);
  NwJacobianStats js;
  nw_jacobian_stats(det, &js);
  g_assert_cmpfloat(js.min, >, 0.0);
  g_assert_cmpuint(js.n_folds, ==, 0);
  /* Rician: the magnitude is never negative, and the empty background is lifted by it */
  double background = 0.0;
  size_t n_background = 0;
  for (size_t e = 0; e < nw_volume_n_voxels(a.moving); e++) {
    g_assert_cmpfloat(a.moving->data[e], >=, 0.0f);
    if (a.fixed_labels->data[e] == 0.0f && a.fixed->data[e] == 0.0f) {
      background += a.moving->data[e];
      n_background++;
    }
  }
  g_assert_cmpuint(n_background, >, 1000);
  g_assert_cmpfloat(background / (double)n_background, >, 0.0);
  /* the true field takes the moving image back to the fixed one (up to bias, noise and the
   * contrast change, which the clean case below leaves out) */
  nw_demo_case_clear(&a);
  nw_demo_case_clear(&b);
  o.noise_sigma = 0.0;
  o.bias_amplitude = 0.0;
  o.gamma = 1.0;
  NwDemoCase clean;
  g_assert_true(nw_demo_make(&o, 2.0, &clean, NULL));
  check_recovery(&clean, 0.35);
  nw_demo_case_clear(&clean);
}

static void test_bad_spacing(void)
{
  NwDemoOptions o;
  nw_demo_options_init(&o);
  NwDemoCase c;
  g_autoptr(GError) error = NULL;
  g_assert_false(nw_demo_make(&o, 3.0, &c, &error));
  g_assert_error(error, NW_ERROR, NW_ERROR_INVALID);
  g_assert_nonnull(strstr(error->message, "spacing 3 mm"));
}

static void test_colin(void)
{
  if (!g_file_test(NW_MRICRON_TEMPLATES "/ch2bet.nii.gz", G_FILE_TEST_EXISTS) ||
      !g_file_test(NW_MRICRON_TEMPLATES "/aal.nii.gz", G_FILE_TEST_EXISTS)) {
    g_test_skip("mricron-data is not installed");
    return;
  }
  NwDemoCase c = make_case(1, FALSE, 0.02, 0.1);
  g_assert_false(c.is_phantom);
  g_assert_cmpint(c.fixed->nx, ==, 91);
  g_assert_cmpint(c.fixed->ny, ==, 109);
  g_assert_cmpint(c.fixed->nz, ==, 91);
  check_field(&c, 4.0);
  check_recovery(&c, 0.8);
  check_labels(&c, 100); /* AAL: 116 regions; a few tiny ones may vanish at 2 mm */
  nw_demo_case_clear(&c);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/demo/determinism", test_determinism);
  g_test_add_func("/demo/phantom-field", test_phantom_field);
  g_test_add_func("/demo/phantom-recovery", test_phantom_recovery);
  g_test_add_func("/demo/field-2d", test_field_2d);
  g_test_add_func("/demo/bad-spacing", test_bad_spacing);
  g_test_add_func("/demo/drawn", test_drawn);
  g_test_add_func("/demo/colin-2mm", test_colin);
  return g_test_run();
}
