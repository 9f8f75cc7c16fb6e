/* test_field.c — field operations (core/field.h) against analytic results: Jacobian of a
 * linear field, exp of a constant field, exp(v) ∘ exp(-v) = identity, composition of a
 * linear and a constant field, folds, the vector sampler against nw_sample_trilinear, label
 * Dice, and histogram matching. CPU, main thread. */
#include <math.h>
#include <string.h>

#include "field.h"
#include "histogram_match.h"
#include "nw_error.h"
#include "resample.h"
#include "testutil.h"

/* u(x) = A (x - c): a linear field, voxel units. */
static NwVolume *linear_field(int n, const double A[3][3], double c)
{
  NwVolume *u = nw_volume_new(n, n, n, 3, NULL);
  for (int k = 0; k < n; k++)
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) {
        const double x[3] = {i - c, j - c, k - c};
        float *p = u->data + 3 * nw_volume_index(u, i, j, k);
        for (int r = 0; r < 3; r++)
          p[r] = (float)(A[r][0] * x[0] + A[r][1] * x[1] + A[r][2] * x[2]);
      }
  return u;
}

/* A smooth velocity field that vanishes towards the borders: Gaussian-windowed sines with
 * peak magnitude about `peak` voxels. */
static NwVolume *smooth_velocity(int n, double peak)
{
  return nw_test_smooth_velocity(n, peak, 5.0, 0.125, 0.1);
}

static void test_jacobian_linear(void)
{
  const double A[3][3] = {{0.1, 0.05, -0.02}, {-0.03, 0.2, 0.04}, {0.01, -0.06, -0.1}};
  g_autoptr(NwVolume) u = linear_field(12, A, 5.5);
  g_autoptr(NwVolume) det = nw_volume_new(12, 12, 12, 1, NULL);
  nw_field_jacobian_det(det, u);
  /* det(I + A), expanded by hand. */
  const double m[3][3] = {{1.1, 0.05, -0.02}, {-0.03, 1.2, 0.04}, {0.01, -0.06, 0.9}};
  double expect = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
                  m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
                  m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
  for (size_t e = 0; e < nw_volume_n_voxels(det); e++) /* borders too: one-sided is exact */
    g_assert_cmpfloat_with_epsilon(det->data[e], expect, 1e-5);
  NwJacobianStats js;
  nw_jacobian_stats(det, &js);
  g_assert_cmpfloat_with_epsilon(js.mean, expect, 1e-5);
  g_assert_cmpuint(js.n_folds, ==, 0);
  g_assert_cmpuint(nw_field_count_folds(u), ==, 0);
}

static void test_jacobian_2d_and_folds(void)
{
  /* 2D (nz = 1): u = (0.5 x, -0.25 y, 0) has det (1.5)(0.75); z derivative is zero. */
  g_autoptr(NwVolume) u = nw_volume_new(9, 7, 1, 3, NULL);
  for (int j = 0; j < 7; j++)
    for (int i = 0; i < 9; i++) {
      u->data[3 * nw_volume_index(u, i, j, 0)] = 0.5f * i;
      u->data[3 * nw_volume_index(u, i, j, 0) + 1] = -0.25f * j;
    }
  g_autoptr(NwVolume) det = nw_volume_new(9, 7, 1, 1, NULL);
  nw_field_jacobian_det(det, u);
  for (size_t e = 0; e < nw_volume_n_voxels(det); e++)
    g_assert_cmpfloat_with_epsilon(det->data[e], 1.5 * 0.75, 1e-6);
  /* u_x = -2 x folds every voxel: det = -1. */
  const double A[3][3] = {{-2, 0, 0}, {0, 0, 0}, {0, 0, 0}};
  g_autoptr(NwVolume) f = linear_field(6, A, 0.0);
  g_assert_cmpuint(nw_field_count_folds(f), ==, 6 * 6 * 6);
  g_assert_cmpfloat_with_epsilon(nw_field_max_norm(f), 10.0, 1e-6);
}

static void test_exp_constant(void)
{
  g_autoptr(NwVolume) v = nw_volume_new(8, 8, 8, 3, NULL);
  for (size_t e = 0; e < nw_volume_n_voxels(v); e++) {
    v->data[3 * e] = 2.0f;
    v->data[3 * e + 1] = -1.0f;
    v->data[3 * e + 2] = 2.0f;
  }
  /* |v| = 3: 2^-3 * 3 = 0.375 <= 0.5 < 0.75. */
  g_assert_cmpint(nw_field_exp_squarings(v), ==, 3);
  g_autoptr(NwVolume) s = nw_volume_new(8, 8, 8, 3, NULL);
  g_assert_cmpint(nw_field_exp(s, v, 1.0), ==, 3);
  g_assert_cmpfloat(nw_test_max_abs_diff(s, v), <, 1e-5);
  nw_field_exp(s, v, -1.0);
  for (size_t e = 0; e < nw_volume_n_voxels(v); e++)
    g_assert_cmpfloat_with_epsilon(s->data[3 * e + 1], 1.0, 1e-5);
  /* In place (out = v). */
  nw_field_exp(v, v, 1.0);
  g_assert_cmpfloat_with_epsilon(v->data[0], 2.0, 1e-5);
}

static void test_exp_inverse(void)
{
  const int n = 32;
  g_autoptr(NwVolume) v = smooth_velocity(n, 1.2);
  g_autoptr(NwVolume) fwd = nw_volume_new(n, n, n, 3, NULL);
  g_autoptr(NwVolume) inv = nw_volume_new(n, n, n, 3, NULL);
  g_autoptr(NwVolume) id = nw_volume_new(n, n, n, 3, NULL);
  g_assert_cmpfloat(nw_field_max_norm(v), >, 1.0); /* 2 squarings */
  g_assert_cmpint(nw_field_exp_squarings(v), ==, 2);
  nw_field_exp(fwd, v, 1.0);
  nw_field_exp(inv, v, -1.0);
  /* The scratch variant gives the same numbers. */
  g_autoptr(NwVolume) scratch = nw_volume_new(n, n, n, 3, NULL);
  nw_field_exp_scratch(id, v, 1.0, scratch);
  g_assert_cmpfloat(nw_test_max_abs_diff(id, fwd), ==, 0.0);
  nw_field_compose(id, fwd, inv); /* (id + fwd) ∘ (id + inv) */
  g_assert_cmpfloat(nw_field_max_norm(id), <, 0.1);
  nw_field_compose(id, inv, fwd);
  g_assert_cmpfloat(nw_field_max_norm(id), <, 0.1);
  g_assert_cmpuint(nw_field_count_folds(fwd), ==, 0);
  /* exp(v) differs from v itself for a non-constant v (it is not a plain copy). */
  g_assert_cmpfloat(nw_test_max_abs_diff(fwd, v), >, 0.05);
}

static void test_compose_linear(void)
{
  /* a(x) = A x (linear: trilinear sampling is exact inside), b = t constant:
   * (a ∘ b)(x) = t + A (x + t). */
  const double A[3][3] = {{0.1, 0.2, 0}, {0, -0.1, 0.3}, {0.05, 0, 0.1}};
  g_autoptr(NwVolume) a = linear_field(10, A, 0.0);
  g_autoptr(NwVolume) b = nw_volume_new(10, 10, 10, 3, NULL);
  const double t[3] = {0.5, -0.25, 1.5};
  for (size_t e = 0; e < nw_volume_n_voxels(b); e++)
    for (int c = 0; c < 3; c++)
      b->data[3 * e + c] = (float)t[c];
  g_autoptr(NwVolume) out = nw_volume_new(10, 10, 10, 3, NULL);
  nw_field_compose(out, a, b);
  for (int k = 1; k < 8; k++) /* x + t stays inside the grid */
    for (int j = 1; j < 8; j++)
      for (int i = 1; i < 8; i++) {
        const double y[3] = {i + t[0], j + t[1], k + t[2]};
        const float *p = out->data + 3 * nw_volume_index(out, i, j, k);
        for (int r = 0; r < 3; r++)
          g_assert_cmpfloat_with_epsilon(
              p[r], t[r] + A[r][0] * y[0] + A[r][1] * y[1] + A[r][2] * y[2], 1e-5);
      }
}

static void test_sample_matches_resample(void)
{
  g_autoptr(NwVolume) u = nw_test_volume(7, 6, 5, 3, 11);
  GRand *r = g_rand_new_with_seed(3);
  for (int t = 0; t < 500; t++) {
    double x = g_rand_double_range(r, -2, 9), y = g_rand_double_range(r, -2, 8),
           z = g_rand_double_range(r, -2, 7);
    float s[3];
    nw_field_sample(u, x, y, z, s);
    for (int c = 0; c < 3; c++)
      g_assert_cmpfloat_with_epsilon(s[c], nw_sample_trilinear(u, c, x, y, z), 1e-4);
  }
  g_rand_free(r);
  float s[3];
  nw_field_sample(u, NAN, 1, 1, s);
  g_assert_true(isnan(s[0]));
}

static void test_axpy(void)
{
  g_autoptr(NwVolume) a = nw_test_volume(4, 4, 4, 3, 1);
  g_autoptr(NwVolume) b = nw_test_volume(4, 4, 4, 3, 2);
  g_autoptr(NwVolume) out = nw_volume_new(4, 4, 4, 3, NULL);
  nw_field_axpy(out, a, -0.5, b);
  for (size_t e = 0; e < nw_volume_n_floats(out); e++)
    g_assert_cmpfloat_with_epsilon(out->data[e], a->data[e] - 0.5 * b->data[e], 1e-3);
}

static void test_dice(void)
{
  /* a: label 1 in i < 4, label 3 in i >= 6; b: label 1 in i < 2, label 2 in i == 9. */
  g_autoptr(NwVolume) a = nw_volume_new(10, 2, 1, 1, NULL);
  g_autoptr(NwVolume) b = nw_volume_new(10, 2, 1, 1, NULL);
  for (int j = 0; j < 2; j++)
    for (int i = 0; i < 10; i++) {
      a->data[nw_volume_index(a, i, j, 0)] = i < 4 ? 1.0f : i >= 6 ? 3.0f : 0.0f;
      b->data[nw_volume_index(b, i, j, 0)] = i < 2 ? 1.0f : i == 9 ? 2.0f : 0.0f;
    }
  double mean = -1;
  g_autoptr(GArray) d = nw_labels_dice(a, b, &mean);
  g_assert_cmpuint(d->len, ==, 3);
  NwLabelDice *l1 = &g_array_index(d, NwLabelDice, 0);
  g_assert_cmpint(l1->label, ==, 1);
  g_assert_cmpuint(l1->n_a, ==, 8);
  g_assert_cmpuint(l1->n_b, ==, 4);
  g_assert_cmpuint(l1->n_both, ==, 4);
  g_assert_cmpfloat_with_epsilon(l1->dice, 8.0 / 12.0, 1e-12);
  g_assert_cmpint(g_array_index(d, NwLabelDice, 1).label, ==, 2);
  g_assert_cmpfloat(g_array_index(d, NwLabelDice, 1).dice, ==, 0.0);
  g_assert_cmpint(g_array_index(d, NwLabelDice, 2).label, ==, 3);
  g_assert_cmpfloat_with_epsilon(mean, (8.0 / 12.0) / 3.0, 1e-12);
}

static void test_histogram_match(void)
{
  /* image = exp(ref / 50): a monotone map, so quantile matching recovers ref. */
  g_autoptr(NwVolume) ref = nw_test_volume(24, 24, 24, 1, 5);
  g_autoptr(NwVolume) img = nw_volume_copy(ref);
  for (size_t e = 0; e < nw_volume_n_voxels(img); e++)
    img->data[e] = expf(ref->data[e] / 50.0f);
  g_autoptr(GError) err = NULL;
  g_autoptr(NwVolume) m = nw_histogram_match(img, ref, 1024, &err);
  g_assert_no_error(err);
  NwVolumeStats st;
  nw_volume_stats(ref, &st);
  g_assert_cmpfloat(nw_test_max_abs_diff(m, ref), <, 0.01 * (st.max - st.min));
  /* Errors name the problem. */
  g_assert_null(nw_histogram_match(img, ref, 0, &err));
  g_assert_error(err, NW_ERROR, NW_ERROR_INVALID);
  g_assert_nonnull(strstr(err->message, "0 quantiles"));
  g_clear_error(&err);
  for (size_t e = 0; e < nw_volume_n_voxels(img); e++)
    img->data[e] = NAN;
  g_assert_null(nw_histogram_match(img, ref, 16, &err));
  g_assert_nonnull(strstr(err->message, "no finite voxel"));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/field/jacobian-linear", test_jacobian_linear);
  g_test_add_func("/field/jacobian-2d-folds", test_jacobian_2d_and_folds);
  g_test_add_func("/field/exp-constant", test_exp_constant);
  g_test_add_func("/field/exp-inverse", test_exp_inverse);
  g_test_add_func("/field/compose-linear", test_compose_linear);
  g_test_add_func("/field/sample-matches-resample", test_sample_matches_resample);
  g_test_add_func("/field/axpy", test_axpy);
  g_test_add_func("/field/dice", test_dice);
  g_test_add_func("/field/histogram-match", test_histogram_match);
  return g_test_run();
}
