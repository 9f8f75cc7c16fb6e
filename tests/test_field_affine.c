/* test_field_affine.c — a field found after resampling moving onto the fixed grid through an
 * affine, turned into maps to the original moving image (core/field_affine.h), against the
 * world points they must reach: oblique fixed and moving grids of other sizes, a rigid T,
 * constant fields (whose inverse is exact). CPU, main thread. */
#include <math.h>
#include <string.h>

#include "affine_resample.h"
#include "field_affine.h"
#include "method.h"
#include "ras_affine.h"
#include "regrid.h"
#include "testutil.h"

/* A grid n0 x n1 x n2, voxel size s mm, rotated by deg about z, origin o. */
static NwVolume *grid(int n0, int n1, int n2, double s, double deg, const double o[3], int nc)
{
  NwVolume *v = nw_volume_new(n0, n1, n2, nc, NULL);
  const double a = deg * G_PI / 180.0;
  const double m[16] = {s * cos(a), -s * sin(a), 0, o[0], s * sin(a), s * cos(a), 0, o[1],
                        0,          0,           s, o[2], 0,          0,          0, 1};
  nw_volume_set_affine(v, m);
  return v;
}

/* T: 7 degrees about z, then (3, -2, 1.5) mm. */
static void rigid(double t[16])
{
  const double a = 7.0 * G_PI / 180.0;
  const double m[16] = {cos(a), -sin(a), 0, 3.0, sin(a), cos(a), 0, -2.0, 0, 0, 1, 1.5, 0, 0, 0, 1};
  memcpy(t, m, sizeof m);
}

static void fill_constant(NwVolume *u, const float c[3])
{
  for (size_t e = 0; e < nw_volume_n_voxels(u); e++)
    for (int k = 0; k < 3; k++)
      u->data[3 * e + k] = c[k];
}

/* World point of voxel p + d of v. */
static void world(const NwVolume *v, const double p[3], const float *d, double out[3])
{
  const double q[3] = {p[0] + d[0], p[1] + d[1], p[2] + d[2]};
  nw_affine_apply(v->vox_to_ras, q, out);
}

static void voxel(const NwVolume *v, size_t e, double p[3])
{
  p[0] = (double)(e % (size_t)v->nx);
  p[1] = (double)((e / (size_t)v->nx) % (size_t)v->ny);
  p[2] = (double)(e / (size_t)v->nx / (size_t)v->ny);
}

/* Forward: F(p + out(p)) = T(F(p + u(p))); inverse on the moving grid takes each moving point
 * back to the fixed point that forward sends there. */
static void test_forward_and_inverse(void)
{
  const double of[3] = {-10, 4, -7}, om[3] = {-12, 1, -9};
  g_autoptr(NwVolume) u = grid(10, 9, 8, 2.0, 20.0, of, 3);
  g_autoptr(NwVolume) w = grid(10, 9, 8, 2.0, 20.0, of, 3);
  g_autoptr(NwVolume) moving = grid(12, 11, 10, 1.6, -15.0, om, 1);
  double t[16];
  rigid(t);
  const float c[3] = {0.5f, -0.3f, 0.2f}, minus_c[3] = {-0.5f, 0.3f, -0.2f};
  fill_constant(u, c);
  fill_constant(w, minus_c);
  g_autoptr(NwVolume) fwd = nw_volume_copy(u);
  nw_field_compose_affine(fwd, u, t, 3);
  double worst = 0.0;
  for (size_t e = 0; e < nw_volume_n_voxels(u); e++) {
    double p[3], a[3], b[3];
    voxel(u, e, p);
    world(u, p, fwd->data + 3 * e, a);
    world(u, p, c, b);
    nw_affine_apply(t, b, b);
    for (int k = 0; k < 3; k++)
      worst = fmax(worst, fabs(a[k] - b[k]));
  }
  g_assert_cmpfloat(worst, <, 1e-4);
  g_autoptr(NwVolume) inv = nw_field_inverse_affine_on(w, moving, t, 3, NULL);
  g_assert_nonnull(inv);
  g_assert_cmpint(inv->nx, ==, 12);
  g_assert_cmpfloat(fabs(inv->vox_to_ras[3] - om[0]), <, 1e-12);
  worst = 0.0;
  for (size_t e = 0; e < nw_volume_n_voxels(inv); e++) {
    double m[3], z[3], y[3];
    voxel(inv, e, m);
    world(inv, m, inv->data + 3 * e, z); /* the fixed point, world */
    const double zc[3] = {z[0], z[1], z[2]};
    const float none[3] = {0, 0, 0};
    double fi[16];
    g_assert_true(nw_affine_inverse(u->vox_to_ras, fi));
    double zv[3];
    nw_affine_apply(fi, zc, zv);
    world(u, zv, c, y); /* forward of it */
    nw_affine_apply(t, y, y);
    world(inv, m, none, z); /* the moving point itself */
    for (int k = 0; k < 3; k++)
      worst = fmax(worst, fabs(y[k] - z[k]));
  }
  g_assert_cmpfloat(worst, <, 1e-3);
}

/* The warp samples the original moving image at T(F(p + u)): a linear ramp (its world x)
 * is reproduced exactly between the border voxels' centres; outside the domain (sampler.h)
 * it gets the background. */
static void test_warp_linear_ramp(void)
{
  const double of[3] = {-10, 4, -7}, om[3] = {-12, 1, -9};
  g_autoptr(NwVolume) u = grid(10, 9, 8, 2.0, 20.0, of, 3);
  g_autoptr(NwVolume) moving = grid(12, 11, 10, 1.6, -15.0, om, 1);
  for (size_t e = 0; e < nw_volume_n_voxels(moving); e++) {
    double m[3], x[3];
    const float none[3] = {0, 0, 0};
    voxel(moving, e, m);
    world(moving, m, none, x);
    moving->data[e] = (float)x[0];
  }
  double t[16];
  rigid(t);
  const float c[3] = {0.5f, -0.3f, 0.2f};
  fill_constant(u, c);
  g_autoptr(NwVolume) out = nw_field_warp_affine(moving, u, t, 3, NW_SAMPLER_LINEAR, NAN, NULL);
  g_assert_nonnull(out);
  int inside = 0;
  for (size_t e = 0; e < nw_volume_n_voxels(out); e++) {
    double p[3], y[3];
    voxel(u, e, p);
    world(u, p, c, y);
    nw_affine_apply(t, y, y);
    double gi[16], mv[3];
    g_assert_true(nw_affine_inverse(moving->vox_to_ras, gi));
    nw_affine_apply(gi, y, mv);
    const gboolean interior = mv[0] >= 0 && mv[0] <= moving->nx - 1 && mv[1] >= 0 &&
                              mv[1] <= moving->ny - 1 && mv[2] >= 0 && mv[2] <= moving->nz - 1;
    g_assert_true(isnan(out->data[e]) == (mv[0] < -0.5 || mv[0] > moving->nx - 0.5 ||
                                          mv[1] < -0.5 || mv[1] > moving->ny - 0.5 ||
                                          mv[2] < -0.5 || mv[2] > moving->nz - 0.5));
    if (!interior) /* the half voxel beyond the border takes the border's value */
      continue;
    inside++;
    g_assert_cmpfloat(fabs(out->data[e] - y[0]), <, 1e-3);
  }
  g_assert_cmpint(inside, >, 200);
}

/* The regrid takes a moving image already sampled onto the fixed grid (an affine stage's
 * result) instead of resampling; one on another grid is dropped and the moving image
 * resampled as without it. A method result hands a volume over once. */
static void test_regrid_given(void)
{
  const double o[3] = {-10, 4, 2}, o2[3] = {3, -6, 0};
  g_autoptr(NwVolume) fixed = grid(12, 10, 8, 2.0, 0.0, o, 1);
  g_autoptr(NwVolume) moving = grid(9, 11, 7, 2.5, 20.0, o2, 1);
  for (size_t i = 0; i < nw_volume_n_floats(moving); i++)
    moving->data[i] = (float)(i % 13);
  double t[16];
  rigid(t);
  NwMethodResult *res = nw_method_result_new();
  nw_method_result_add(res, "warped", nw_volume_new_like(fixed, 1, NULL));
  NwVolume *given = nw_method_result_take(res, "warped");
  g_assert_nonnull(given);
  g_assert_null(nw_method_result_get(res, "warped"));
  g_assert_null(nw_method_result_take(res, "warped"));
  nw_method_result_free(res);
  NwRegrid g;
  g_assert_true(nw_regrid_init(&g, fixed, moving, NULL, t, given, NULL));
  g_assert_true(g.moving_on_fixed == given);
  nw_regrid_clear(&g);
  /* on the moving grid, not the fixed one: resampled through T after all */
  NwVolume *wrong = nw_volume_new_like(moving, 1, NULL);
  g_assert_true(nw_regrid_init(&g, fixed, moving, NULL, t, wrong, NULL));
  g_autoptr(NwVolume) want = nw_affine_resample(moving, fixed, t, 3, NW_SAMPLER_LINEAR, 0.0f, NULL);
  g_assert_true(nw_volume_same_grid(g.moving_on_fixed, fixed));
  g_assert_cmpmem(g.moving_on_fixed->data, nw_volume_n_floats(want) * sizeof(float), want->data,
                  nw_volume_n_floats(want) * sizeof(float));
  nw_regrid_clear(&g);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/field-affine/forward-and-inverse", test_forward_and_inverse);
  g_test_add_func("/field-affine/warp-linear-ramp", test_warp_linear_ramp);
  g_test_add_func("/field-affine/regrid-given", test_regrid_given);
  return g_test_run();
}
