/* test_smooth.c — Gaussian kernel and separable smoothing (core/smooth.c) against analytic
 * results: the kernel's own numbers, the impulse response, the semigroup property of
 * Gaussians, constants, and sigma in mm with anisotropic voxels. CPU, main thread. */
#include <math.h>
#include <string.h>

#include "nw_error.h"
#include "smooth.h"
#include "testutil.h"

static void test_kernel_weights(void)
{
  NwGaussKernel k;
  nw_gauss_kernel(&k, 1.5);
  g_assert_cmpint(k.radius, ==, 5); /* ceil(3 * 1.5) */
  double sum = 0.0;
  for (int t = -5; t <= 5; t++) {
    sum += k.w[t + 5];
    g_assert_cmpfloat_with_epsilon(k.w[t + 5], k.w[5 - t], 1e-7); /* symmetric */
    /* ratio to the centre is exp(-t^2 / (2 sigma^2)) */
    g_assert_cmpfloat_with_epsilon(k.w[t + 5] / k.w[5], exp(-t * t / (2.0 * 2.25)), 1e-6);
  }
  g_assert_cmpfloat_with_epsilon(sum, 1.0, 1e-6);

  nw_gauss_kernel(&k, 20.0); /* 3 sigma = 60 > cap */
  g_assert_cmpint(k.radius, ==, NW_GAUSS_MAX_RADIUS);
  sum = 0.0;
  for (int t = 0; t <= 2 * NW_GAUSS_MAX_RADIUS; t++)
    sum += k.w[t];
  g_assert_cmpfloat_with_epsilon(sum, 1.0, 1e-6);

  nw_gauss_kernel(&k, 0.0);
  g_assert_cmpint(k.radius, ==, 0);
  g_assert_cmpfloat(k.w[0], ==, 1.0f);
  nw_gauss_kernel(&k, 0.2); /* 3 sigma = 0.6 -> radius 1 */
  g_assert_cmpint(k.radius, ==, 1);
}

/* The response to a unit impulse far from the borders is the outer product of the three
 * 1D kernels. */
static void check_impulse(NwVolume *v, const double sigma_vox[3])
{
  int ci = v->nx / 2, cj = v->ny / 2, ck = v->nz / 2;
  v->data[nw_volume_index(v, ci, cj, ck)] = 1.0f;
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_smooth_gaussian(v, sigma_vox, &error));
  g_assert_no_error(error);
  NwGaussKernel kx, ky, kz;
  /* axes of size 1 are left alone: the identity kernel */
  nw_gauss_kernel(&kx, v->nx > 1 ? sigma_vox[0] : 0.0);
  nw_gauss_kernel(&ky, v->ny > 1 ? sigma_vox[1] : 0.0);
  nw_gauss_kernel(&kz, v->nz > 1 ? sigma_vox[2] : 0.0);
  double total = 0.0;
  for (int k = 0; k < v->nz; k++)
    for (int j = 0; j < v->ny; j++)
      for (int i = 0; i < v->nx; i++) {
        int di = i - ci, dj = j - cj, dk = k - ck;
        double want = 0.0;
        if (abs(di) <= kx.radius && abs(dj) <= ky.radius && abs(dk) <= kz.radius)
          want = (double)kx.w[di + kx.radius] * ky.w[dj + ky.radius] * kz.w[dk + kz.radius];
        double got = v->data[nw_volume_index(v, i, j, k)];
        g_assert_cmpfloat_with_epsilon(got, want, 1e-7);
        total += got;
      }
  g_assert_cmpfloat_with_epsilon(total, 1.0, 1e-5); /* mass preserved away from borders */
}

static void test_impulse_is_kernel(void)
{
  g_autoptr(NwVolume) line = nw_volume_new(41, 1, 1, 1, NULL);
  check_impulse(line, (double[3]){2.0, 5.0, 5.0}); /* axes of size 1 are skipped */
  g_autoptr(NwVolume) vol = nw_volume_new(23, 19, 27, 1, NULL);
  check_impulse(vol, (double[3]){1.5, 1.0, 2.5});
}

/* Sampled Gaussian of sigma s1 smoothed with sigma s2 ~ Gaussian of sqrt(s1^2 + s2^2).
 * Truncating the kernel at 3 sigma removes 2.7% of its variance (a standard normal cut at
 * +-3 has variance 0.973): here the variance comes out 24.70 for 25 (1.2% low) and the peak
 * 0.6010 for 0.6, so they are checked within 2.5% and 0.5%. */
static void test_gaussian_semigroup(void)
{
  const int n = 201, c = 100;
  const double s1 = 3.0, s2 = 4.0, s = sqrt(s1 * s1 + s2 * s2);
  g_autoptr(NwVolume) v = nw_volume_new(n, 1, 1, 1, NULL);
  for (int i = 0; i < n; i++)
    v->data[i] = (float)exp(-(i - c) * (i - c) / (2.0 * s1 * s1));
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_smooth_gaussian(v, (double[3]){s2, 0.0, 0.0}, &error));
  double mass = 0.0, var = 0.0, peak = 0.0;
  for (int i = 0; i < n; i++) {
    mass += v->data[i];
    var += v->data[i] * (double)(i - c) * (i - c);
    peak = v->data[i] > peak ? v->data[i] : peak;
  }
  var /= mass;
  g_assert_cmpfloat_with_epsilon(mass, s1 * sqrt(2.0 * G_PI), 1e-4); /* mass preserved */
  g_assert_cmpfloat(fabs(var - s * s) / (s * s), <, 0.025);
  g_assert_cmpfloat(fabs(peak - s1 / s) / (s1 / s), <, 0.005);
  g_assert_cmpfloat(v->data[c], ==, (float)peak); /* still centred */
}

static void test_constant_preserved(void)
{
  g_autoptr(NwVolume) v = nw_volume_new(13, 9, 7, 3, NULL);
  for (size_t e = 0; e < nw_volume_n_voxels(v); e++)
    for (int c = 0; c < 3; c++)
      v->data[e * 3 + c] = 7.5f + 10.0f * c;
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_smooth_gaussian(v, (double[3]){2.0, 3.0, 9.0}, &error));
  for (size_t e = 0; e < nw_volume_n_voxels(v); e++)
    for (int c = 0; c < 3; c++)
      g_assert_cmpfloat_with_epsilon(v->data[e * 3 + c], 7.5f + 10.0f * c, 1e-4);
}

/* Every component is smoothed on its own: an impulse in component 1 stays in component 1. */
static void test_components_independent(void)
{
  g_autoptr(NwVolume) v = nw_volume_new(11, 11, 11, 3, NULL);
  v->data[nw_volume_index(v, 5, 5, 5) * 3 + 1] = 1.0f;
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_smooth_gaussian(v, (double[3]){1.0, 1.0, 1.0}, &error));
  NwGaussKernel k;
  nw_gauss_kernel(&k, 1.0);
  double sum1 = 0.0;
  for (size_t e = 0; e < nw_volume_n_voxels(v); e++) {
    g_assert_cmpfloat(v->data[e * 3 + 0], ==, 0.0f);
    g_assert_cmpfloat(v->data[e * 3 + 2], ==, 0.0f);
    sum1 += v->data[e * 3 + 1];
  }
  g_assert_cmpfloat_with_epsilon(sum1, 1.0, 1e-5);
  g_assert_cmpfloat_with_epsilon(v->data[nw_volume_index(v, 5, 5, 5) * 3 + 1],
                                 k.w[3] * k.w[3] * k.w[3], 1e-7);
}

/* Clamped borders: an impulse on the first voxel gets the weight of the taps that fall off
 * the edge added to it. */
static void test_clamp_border(void)
{
  g_autoptr(NwVolume) v = nw_volume_new(20, 1, 1, 1, NULL);
  v->data[0] = 1.0f;
  g_assert_true(nw_smooth_gaussian(v, (double[3]){1.0, 0, 0}, NULL));
  NwGaussKernel k;
  nw_gauss_kernel(&k, 1.0); /* radius 3 */
  /* out[0]: taps t = -3..0 all read in[0]; out[2]: taps t = -3 (clamped) and -2 do. */
  g_assert_cmpfloat_with_epsilon(v->data[0], k.w[0] + k.w[1] + k.w[2] + k.w[3], 1e-7);
  g_assert_cmpfloat_with_epsilon(v->data[2], k.w[0] + k.w[1], 1e-7);
  g_assert_cmpfloat(v->data[4], ==, 0.0f);
}

/* sigma 2 mm on voxels of 1 x 2 x 0.5 mm is 2, 1 and 4 voxels. */
static void test_sigma_mm_anisotropic(void)
{
  g_autoptr(NwVolume) a = nw_volume_new(21, 15, 41, 1, NULL);
  nw_volume_set_spacing(a, 1.0, 2.0, 0.5);
  a->data[nw_volume_index(a, 10, 7, 20)] = 1.0f;
  g_autoptr(NwVolume) b = nw_volume_copy(a);
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_smooth_gaussian_mm(a, 2.0, &error));
  g_assert_no_error(error);
  g_assert_true(nw_smooth_gaussian(b, (double[3]){2.0, 1.0, 4.0}, &error));
  g_assert_cmpfloat(nw_test_max_abs_diff(a, b), ==, 0.0);
  /* and the impulse response has the expected spread along z: variance ~ 4^2 voxels */
  double m = 0.0, var = 0.0;
  for (int k = 0; k < a->nz; k++) {
    double p = a->data[nw_volume_index(a, 10, 7, k)];
    m += p;
    var += p * (k - 20) * (k - 20);
  }
  g_assert_cmpfloat(fabs(var / m - 16.0) / 16.0, <, 0.05);
}

static void test_invalid_sigma(void)
{
  g_autoptr(NwVolume) v = nw_volume_new(4, 4, 4, 1, NULL);
  g_autoptr(GError) error = NULL;
  g_assert_false(nw_smooth_gaussian(v, (double[3]){1.0, -1.0, 0.0}, &error));
  g_assert_error(error, NW_ERROR, NW_ERROR_INVALID);
  g_assert_nonnull(strstr(error->message, "sigma -1 voxels along axis 1 is invalid"));
  g_clear_error(&error);
  g_assert_false(nw_smooth_gaussian_mm(v, NAN, &error));
  g_assert_nonnull(strstr(error->message, "sigma nan mm is invalid"));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/smooth/kernel-weights", test_kernel_weights);
  g_test_add_func("/smooth/impulse-is-kernel", test_impulse_is_kernel);
  g_test_add_func("/smooth/gaussian-semigroup", test_gaussian_semigroup);
  g_test_add_func("/smooth/constant-preserved", test_constant_preserved);
  g_test_add_func("/smooth/components-independent", test_components_independent);
  g_test_add_func("/smooth/clamp-border", test_clamp_border);
  g_test_add_func("/smooth/sigma-mm-anisotropic", test_sigma_mm_anisotropic);
  g_test_add_func("/smooth/invalid-sigma", test_invalid_sigma);
  return g_test_run();
}
