/* test_affine_transform.c — the transform model of affine registration (matrix,
 * factorisation, parameters, conventions) and the samplers (exactness of each kernel, the
 * domain). CPU, main thread; milliseconds. */
#include <math.h>

#include "affine_resample.h"
#include "affine_transform.h"
#include "nw_error.h"
#include "ras_affine.h"
#include "sampler.h"
#include "testutil.h"

static void assert_matrix_close(const double *a, const double *b, double tol)
{
  for (int e = 0; e < 16; e++)
    g_assert_cmpfloat_with_epsilon(a[e], b[e], tol);
}

/* Every member set, through the matrix and back: the same members. */
static void test_transform_roundtrip(void)
{
  const double c[3] = {10.0, -20.0, 30.0};
  NwTransform t, back;
  nw_transform_init(&t, 3, NW_XFORM_AFFINE, c);
  const double p[12] = {5, -6, 7, 0.2, -0.3, 0.4, 1.1, 0.9, 1.05, 0.05, -0.04, 0.03};
  nw_transform_set_params(&t, p);
  double m[16], m2[16], q[12];
  nw_transform_matrix(&t, m);
  g_autoptr(GError) err = NULL;
  g_assert_true(nw_transform_from_matrix(&back, 3, NW_XFORM_AFFINE, c, m, &err));
  g_assert_no_error(err);
  nw_transform_get_params(&back, q);
  for (int i = 0; i < 12; i++)
    g_assert_cmpfloat_with_epsilon(q[i], p[i], 1e-12);
  nw_transform_matrix(&back, m2);
  assert_matrix_close(m, m2, 1e-12);
  /* T(c) = c + t */
  double tc[3];
  nw_affine_apply(m, c, tc);
  for (int a = 0; a < 3; a++)
    g_assert_cmpfloat_with_epsilon(tc[a], c[a] + p[a], 1e-12);
  g_assert_cmpstr(nw_transform_param_name(3, NW_XFORM_AFFINE, 6), ==, "sx");
  g_assert_cmpstr(nw_transform_param_name(3, NW_XFORM_SIMILARITY, 6), ==, "s");
  g_assert_cmpstr(nw_transform_param_name(2, NW_XFORM_AFFINE, 5), ==, "kxy");
}

/* Rz(90°) sends x to y (right-handed, radians); a mirror is refused with its reason. */
static void test_transform_conventions(void)
{
  const double c[3] = {0, 0, 0};
  NwTransform t;
  nw_transform_init(&t, 2, NW_XFORM_RIGID, c);
  const double p[3] = {1.0, 2.0, G_PI / 2};
  nw_transform_set_params(&t, p);
  double m[16], x[3] = {1, 0, 0}, y[3];
  nw_transform_matrix(&t, m);
  nw_affine_apply(m, x, y);
  g_assert_cmpfloat_with_epsilon(y[0], 1.0, 1e-12);
  g_assert_cmpfloat_with_epsilon(y[1], 3.0, 1e-12);
  g_assert_cmpfloat_with_epsilon(y[2], 0.0, 1e-12);
  g_assert_cmpint(nw_transform_n_params(2, NW_XFORM_RIGID), ==, 3);
  g_assert_cmpint(nw_transform_n_params(3, NW_XFORM_SIMILARITY), ==, 7);

  double mirror[16];
  nw_affine_identity(mirror);
  mirror[0] = -1.0;
  g_autoptr(GError) err = NULL;
  g_assert_false(nw_transform_from_matrix(&t, 3, NW_XFORM_AFFINE, c, mirror, &err));
  g_assert_error(err, NW_ERROR, NW_ERROR_INVALID);
  g_assert_cmpstr(err->message, ==,
                  "determinant -1: the matrix is singular or mirrors (a reflection is not a "
                  "registration transform)");
  g_clear_error(&err);
  double tilt[16];
  nw_affine_identity(tilt);
  tilt[2] = 0.1; /* x depends on z */
  g_assert_false(nw_transform_from_matrix(&t, 2, NW_XFORM_AFFINE, c, tilt, &err));
  g_assert_cmpstr(err->message, ==, "the matrix moves points along z: it is not a 2D transform");
}

/* v(i, j, k) = f(i, j, k) on an n^3 grid. */
static NwVolume *field_volume(int n, double (*f)(double, double, double))
{
  NwVolume *v = nw_volume_new(n, n, n, 1, NULL);
  for (int k = 0; k < n; k++)
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++)
        v->data[nw_volume_index(v, i, j, k)] = (float)f(i, j, k);
  return v;
}

static double linear_fn(double x, double y, double z)
{
  return 2.0 * x - 3.0 * y + 0.5 * z + 1.0;
}

static double quadratic_fn(double x, double y, double z)
{
  return 0.1 * x * x - 0.2 * y * y + 0.05 * z * x + y;
}

/* Linear reproduces linear, Keys' cubic quadratics (away from the clamped border), nearest
 * rounds halves up; outside [-0.5, n - 0.5] nothing is sampled. */
static void test_samplers(void)
{
  g_autoptr(NwVolume) lin = field_volume(8, linear_fn);
  g_autoptr(NwVolume) quad = field_volume(8, quadratic_fn);
  float v = 0.0f;
  g_assert_true(nw_sampler_sample(lin, NW_SAMPLER_LINEAR, 2.3, 4.7, 3.9, &v));
  g_assert_cmpfloat_with_epsilon(v, linear_fn(2.3, 4.7, 3.9), 1e-4);
  g_assert_true(nw_sampler_sample(quad, NW_SAMPLER_CUBIC, 2.3, 4.7, 3.9, &v));
  g_assert_cmpfloat_with_epsilon(v, quadratic_fn(2.3, 4.7, 3.9), 1e-4);
  g_assert_true(nw_sampler_sample(lin, NW_SAMPLER_NEAREST, 2.5, 4.49, 3.0, &v));
  g_assert_cmpfloat(v, ==, (float)linear_fn(3, 4, 3));
  g_assert_false(nw_sampler_sample(lin, NW_SAMPLER_LINEAR, -0.51, 3, 3, &v));
  g_assert_false(nw_sampler_sample(lin, NW_SAMPLER_CUBIC, 3, 7.51, 3, &v));
  g_assert_false(nw_sampler_sample(lin, NW_SAMPLER_LINEAR, NAN, 3, 3, &v));
  g_assert_true(nw_sampler_sample(lin, NW_SAMPLER_LINEAR, 7.5, 3, 3, &v)); /* clamped edge */
  g_assert_cmpfloat_with_epsilon(nw_keys_kernel(0.0), 1.0, 1e-15);
  g_assert_cmpfloat_with_epsilon(nw_keys_kernel(1.0), 0.0, 1e-15);
  g_assert_cmpfloat_with_epsilon(nw_keys_kernel(0.5) * 2 + nw_keys_kernel(1.5) * 2, 1.0, 1e-15);
  NwSampler s;
  g_autoptr(GError) err = NULL;
  g_assert_false(nw_sampler_parse("bspline", &s, &err));
  g_assert_cmpstr(err->message, ==,
                  "unknown interpolation 'bspline': expected nearest, linear or cubic");
}

/* Resampling by a translation of one voxel along x (2 mm spacing) onto the same grid:
 * out(i) = in(i + 1), and the last column, mapped outside, gets the background. dim 2
 * ignores the slices' world z. */
static void test_resample_shift(void)
{
  g_autoptr(NwVolume) in = nw_test_volume(6, 5, 1, 1, 3);
  nw_volume_set_spacing(in, 2.0, 2.0, 3.0);
  double t[16];
  nw_affine_identity(t);
  t[3] = 2.0;
  t[11] = 7.0; /* a z shift that 2D resampling ignores */
  g_autoptr(GError) err = NULL;
  g_autoptr(NwVolume) out = nw_affine_resample(in, in, t, 2, NW_SAMPLER_LINEAR, -1.0f, &err);
  g_assert_no_error(err);
  for (int j = 0; j < 5; j++)
    for (int i = 0; i < 6; i++) {
      const float want = i < 5 ? in->data[nw_volume_index(in, i + 1, j, 0)] : -1.0f;
      g_assert_cmpfloat(out->data[nw_volume_index(out, i, j, 0)], ==, want);
    }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/affine/transform/roundtrip", test_transform_roundtrip);
  g_test_add_func("/affine/transform/conventions", test_transform_conventions);
  g_test_add_func("/affine/samplers", test_samplers);
  g_test_add_func("/affine/resample-shift", test_resample_shift);
  return g_test_run();
}
