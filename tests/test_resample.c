/* test_resample.c — interpolation, warping, downsampling and resizing (core/resample.c)
 * against analytic results: linear functions are reproduced exactly, outside samples clamp,
 * integer shifts are array shifts, world positions survive pyramids and resizes. CPU. */
#include <math.h>
#include <string.h>

#include "nw_error.h"
#include "resample.h"
#include "testutil.h"

/* f(i, j, k) = 2 + 0.5 i - 1.25 j + 0.75 k, sampled on the grid. */
static double linear_f(double i, double j, double k)
{
  return 2.0 + 0.5 * i - 1.25 * j + 0.75 * k;
}

static NwVolume *linear_volume(int nx, int ny, int nz)
{
  NwVolume *v = nw_volume_new(nx, ny, nz, 1, NULL);
  for (int k = 0; k < nz; k++)
    for (int j = 0; j < ny; j++)
      for (int i = 0; i < nx; i++)
        v->data[nw_volume_index(v, i, j, k)] = (float)linear_f(i, j, k);
  return v;
}

static double clampd(double x, int n)
{
  return x < 0.0 ? 0.0 : (x > n - 1 ? n - 1 : x);
}

static void test_trilinear_linear_exact(void)
{
  g_autoptr(NwVolume) v = linear_volume(7, 6, 5);
  GRand *r = g_rand_new_with_seed(11);
  for (int n = 0; n < 2000; n++) {
    double x = g_rand_double_range(r, 0, 6), y = g_rand_double_range(r, 0, 5),
           z = g_rand_double_range(r, 0, 4);
    g_assert_cmpfloat_with_epsilon(nw_sample_trilinear(v, 0, x, y, z), linear_f(x, y, z), 1e-5);
  }
  /* grid points give the stored values exactly */
  g_assert_cmpfloat(nw_sample_trilinear(v, 0, 3, 2, 4), ==, v->data[nw_volume_index(v, 3, 2, 4)]);
  g_rand_free(r);
}

static void test_clamp_outside(void)
{
  g_autoptr(NwVolume) v = linear_volume(7, 6, 5);
  const double pts[][3] = {{-3.0, 2.5, 1.25}, {9.5, 2.5, 1.25},   {3.3, -0.7, 10.0},
                           {-1e9, 1e9, -0.5}, {6.0001, 5.0, 4.0}, {INFINITY, 1.0, 1.0}};
  for (size_t p = 0; p < G_N_ELEMENTS(pts); p++) {
    double x = pts[p][0], y = pts[p][1], z = pts[p][2];
    double want = linear_f(clampd(x, 7), clampd(y, 6), clampd(z, 5));
    g_assert_cmpfloat_with_epsilon(nw_sample_trilinear(v, 0, x, y, z), want, 1e-5);
  }
  /* nearest: rounds to the closest voxel, halves up, then clamps */
  g_assert_cmpfloat(nw_sample_nearest(v, 0, 2.4, 3.6, 1.5), ==, (float)linear_f(2, 4, 2));
  g_assert_cmpfloat(nw_sample_nearest(v, 0, -4.0, 99.0, 4.49), ==, (float)linear_f(0, 5, 4));
  g_assert_true(isnan(nw_sample_trilinear(v, 0, NAN, 1.0, 1.0)));
  g_assert_true(isnan(nw_sample_nearest(v, 0, 1.0, NAN, 1.0)));
}

/* An axis of size 1 (2D images) samples that one plane whatever the coordinate. */
static void test_single_slice(void)
{
  g_autoptr(NwVolume) v = linear_volume(5, 4, 1);
  g_assert_cmpfloat_with_epsilon(nw_sample_trilinear(v, 0, 1.5, 2.25, 0.7), linear_f(1.5, 2.25, 0),
                                 1e-6);
}

/* u = (2, -1, 1) voxels everywhere: out(i, j, k) = in(clamp(i+2), clamp(j-1), clamp(k+1)),
 * for every component, with both interpolators. */
static void test_warp_integer_shift(void)
{
  g_autoptr(NwVolume) in = nw_test_volume(9, 8, 6, 2, 5);
  g_autoptr(NwVolume) u = nw_volume_new_like(in, 3, NULL);
  for (size_t e = 0; e < nw_volume_n_voxels(u); e++) {
    u->data[e * 3 + 0] = 2.0f;
    u->data[e * 3 + 1] = -1.0f;
    u->data[e * 3 + 2] = 1.0f;
  }
  for (int interp = 0; interp < 2; interp++) {
    g_autoptr(NwVolume) out = nw_volume_new_like(in, 2, NULL);
    nw_warp(out, in, u, interp == 0 ? NW_INTERP_LINEAR : NW_INTERP_NEAREST);
    for (int k = 0; k < 6; k++)
      for (int j = 0; j < 8; j++)
        for (int i = 0; i < 9; i++)
          for (int c = 0; c < 2; c++) {
            int si = MIN(i + 2, 8), sj = MAX(j - 1, 0), sk = MIN(k + 1, 5);
            g_assert_cmpfloat(out->data[nw_volume_index(out, i, j, k) * 2 + c], ==,
                              in->data[nw_volume_index(in, si, sj, sk) * 2 + c]);
          }
  }
}

/* A field that varies: u(x) = (0.25 i, 0, -0.5) on a linear image gives f(x + u(x)). */
static void test_warp_linear_field(void)
{
  g_autoptr(NwVolume) in = linear_volume(10, 9, 8);
  g_autoptr(NwVolume) u = nw_volume_new_like(in, 3, NULL);
  for (int k = 0; k < 8; k++)
    for (int j = 0; j < 9; j++)
      for (int i = 0; i < 10; i++) {
        float *d = u->data + nw_volume_index(u, i, j, k) * 3;
        d[0] = 0.25f * i;
        d[2] = -0.5f;
      }
  g_autoptr(NwVolume) out = nw_volume_new_like(in, 1, NULL);
  nw_warp(out, in, u, NW_INTERP_LINEAR);
  for (int k = 0; k < 8; k++)
    for (int j = 0; j < 9; j++)
      for (int i = 0; i < 10; i++) {
        double want = linear_f(clampd(1.25 * i, 10), j, clampd(k - 0.5, 8));
        g_assert_cmpfloat_with_epsilon(out->data[nw_volume_index(out, i, j, k)], want, 1e-5);
      }
}

/* g(world) = 3 + 0.4 x - 0.2 y + 0.1 z on a grid with spacing and origin: after
 * downsampling, each coarse voxel holds g at its own world position (away from the borders,
 * where clamping in the pre-smoothing bends the ramp). */
static void test_downsample_ramp(void)
{
  const int n[3] = {20, 16, 14};
  g_autoptr(NwVolume) in = nw_volume_new(n[0], n[1], n[2], 1, NULL);
  double aff[16] = {1.5, 0, 0, -10, 0, 2.0, 0, 5, 0, 0, 2.5, 7, 0, 0, 0, 1};
  nw_volume_set_affine(in, aff);
  for (int k = 0; k < n[2]; k++)
    for (int j = 0; j < n[1]; j++)
      for (int i = 0; i < n[0]; i++) {
        double w[3];
        nw_volume_voxel_to_world(in, (double[3]){i, j, k}, w);
        in->data[nw_volume_index(in, i, j, k)] = (float)(3 + 0.4 * w[0] - 0.2 * w[1] + 0.1 * w[2]);
      }
  g_autoptr(GError) error = NULL;
  g_autoptr(NwVolume) out = nw_downsample2(in, &error);
  g_assert_no_error(error);
  g_assert_cmpint(out->nx, ==, 10);
  g_assert_cmpint(out->ny, ==, 8);
  g_assert_cmpint(out->nz, ==, 7);
  g_assert_cmpfloat_with_epsilon(out->spacing_mm[0], 3.0, 1e-6);
  g_assert_cmpfloat_with_epsilon(out->spacing_mm[2], 5.0, 1e-6);
  /* coarse voxel 0 sits between fine voxels 0 and 1 */
  g_assert_cmpfloat_with_epsilon(out->vox_to_ras[3], -10 + 0.75, 1e-9);
  int checked = 0;
  for (int k = 2; k <= 4; k++)
    for (int j = 2; j <= 5; j++)
      for (int i = 2; i <= 7; i++) {
        double w[3], fine[3];
        nw_volume_voxel_to_world(out, (double[3]){i, j, k}, w);
        nw_volume_world_to_voxel(in, w, fine);
        g_assert_cmpfloat_with_epsilon(fine[0], 2 * i + 0.5, 1e-9);
        double want = 3 + 0.4 * w[0] - 0.2 * w[1] + 0.1 * w[2];
        g_assert_cmpfloat_with_epsilon(out->data[nw_volume_index(out, i, j, k)], want, 1e-4);
        checked++;
      }
  g_assert_cmpint(checked, ==, 3 * 4 * 6);
}

static void test_downsample_odd_and_flat(void)
{
  g_autoptr(NwVolume) in = linear_volume(9, 1, 5);
  g_autoptr(NwVolume) out = nw_downsample2(in, NULL);
  g_assert_nonnull(out);
  g_assert_cmpint(out->nx, ==, 5);
  g_assert_cmpint(out->ny, ==, 1);
  g_assert_cmpint(out->nz, ==, 3);
  g_assert_cmpfloat(out->spacing_mm[1], ==, 1.0f); /* the flat axis keeps its spacing */
  g_assert_cmpfloat_with_epsilon(out->vox_to_ras[1 * 4 + 3], 0.0, 1e-12);
}

/* A constant voxel-unit field u = (1, 2, -1) resized from 8x8x4 to 16x4x4 becomes
 * (2, 1, -1): the same displacement in millimetres. */
static void test_resize_field_scales(void)
{
  g_autoptr(NwVolume) u = nw_volume_new(8, 8, 4, 3, NULL);
  nw_volume_set_spacing(u, 2.0, 1.0, 3.0);
  for (size_t e = 0; e < nw_volume_n_voxels(u); e++) {
    u->data[e * 3 + 0] = 1.0f;
    u->data[e * 3 + 1] = 2.0f;
    u->data[e * 3 + 2] = -1.0f;
  }
  g_autoptr(GError) error = NULL;
  g_autoptr(NwVolume) r = nw_resize(u, 16, 4, 4, TRUE, &error);
  g_assert_no_error(error);
  g_assert_cmpfloat_with_epsilon(r->spacing_mm[0], 1.0, 1e-6);
  g_assert_cmpfloat_with_epsilon(r->spacing_mm[1], 2.0, 1e-6);
  for (size_t e = 0; e < nw_volume_n_voxels(r); e++) {
    g_assert_cmpfloat_with_epsilon(r->data[e * 3 + 0], 2.0, 1e-6);
    g_assert_cmpfloat_with_epsilon(r->data[e * 3 + 1], 1.0, 1e-6);
    g_assert_cmpfloat_with_epsilon(r->data[e * 3 + 2], -1.0, 1e-6);
    for (int a = 0; a < 3; a++) /* displacement in mm is unchanged */
      g_assert_cmpfloat_with_epsilon(r->data[e * 3 + a] * r->spacing_mm[a],
                                     u->data[a] * u->spacing_mm[a], 1e-5);
  }
  g_autoptr(NwVolume) scalar = nw_volume_new(4, 4, 4, 1, NULL);
  g_assert_null(nw_resize(scalar, 8, 8, 8, TRUE, &error));
  g_assert_error(error, NW_ERROR, NW_ERROR_INVALID);
  g_assert_nonnull(strstr(error->message, "with 1 components: it needs 3"));
}

/* Resizing keeps the world box: the outer voxel faces coincide, and a ramp is sampled at
 * each new voxel's world position. */
static void test_resize_world_box(void)
{
  g_autoptr(NwVolume) in = linear_volume(12, 10, 6);
  g_autoptr(NwVolume) out = nw_resize(in, 8, 15, 6, FALSE, NULL);
  g_assert_nonnull(out);
  double lo_in[3], lo_out[3], hi_in[3], hi_out[3];
  nw_volume_voxel_to_world(in, (double[3]){-0.5, -0.5, -0.5}, lo_in);
  nw_volume_voxel_to_world(out, (double[3]){-0.5, -0.5, -0.5}, lo_out);
  nw_volume_voxel_to_world(in, (double[3]){11.5, 9.5, 5.5}, hi_in);
  nw_volume_voxel_to_world(out, (double[3]){7.5, 14.5, 5.5}, hi_out);
  for (int a = 0; a < 3; a++) {
    g_assert_cmpfloat_with_epsilon(lo_in[a], lo_out[a], 1e-9);
    g_assert_cmpfloat_with_epsilon(hi_in[a], hi_out[a], 1e-9);
  }
  for (int k = 0; k < 6; k++)
    for (int j = 0; j < 15; j++)
      for (int i = 0; i < 8; i++) {
        double w[3], src[3];
        nw_volume_voxel_to_world(out, (double[3]){i, j, k}, w);
        nw_volume_world_to_voxel(in, w, src);
        double want = linear_f(clampd(src[0], 12), clampd(src[1], 10), clampd(src[2], 6));
        g_assert_cmpfloat_with_epsilon(out->data[nw_volume_index(out, i, j, k)], want, 1e-5);
      }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/resample/trilinear-linear-exact", test_trilinear_linear_exact);
  g_test_add_func("/resample/clamp-outside", test_clamp_outside);
  g_test_add_func("/resample/single-slice", test_single_slice);
  g_test_add_func("/resample/warp-integer-shift", test_warp_integer_shift);
  g_test_add_func("/resample/warp-linear-field", test_warp_linear_field);
  g_test_add_func("/resample/downsample-ramp", test_downsample_ramp);
  g_test_add_func("/resample/downsample-odd-and-flat", test_downsample_odd_and_flat);
  g_test_add_func("/resample/resize-field-scales", test_resize_field_scales);
  g_test_add_func("/resample/resize-world-box", test_resize_world_box);
  return g_test_run();
}
