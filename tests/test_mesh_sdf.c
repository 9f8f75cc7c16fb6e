/* test_mesh_sdf.c — a closed mesh's signed distance on a grid (core/mesh_sdf.c): point-triangle
 * distances, a sphere's mesh (marching cubes of a finer grid) against the exact distance on
 * another grid (on --like's grid and on a spacing grid), a box mesh with its exact inside, and
 * the refusals (open mesh, mesh outside the grid). */
#include <math.h>
#include <string.h>

#include "level_set.h"
#include "mesh_sdf.h"
#include "nw_error.h"
#include "testutil.h"

static void test_point_triangle(void)
{
  const double a[3] = {0, 0, 0}, b[3] = {2, 0, 0}, c[3] = {0, 2, 0};
  const struct {
    double p[3], d;
  } cases[] = {
      {{0.5, 0.5, 3}, 3},     /* above the face */
      {{-1, -1, 0}, G_SQRT2}, /* vertex a */
      {{3, 0, 0}, 1},         /* vertex b */
      {{1, -2, 0}, 2},        /* edge ab */
      {{2, 2, 0}, G_SQRT2},   /* edge bc */
      {{-3, 1, 4}, 5},        /* edge ac */
      {{0.25, 0.25, 0}, 0},   /* on the face */
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++)
    g_assert_cmpfloat_with_epsilon(nw_point_triangle_distance(cases[i].p, a, b, c), cases[i].d,
                                   1e-12);
}

/* A sphere of radius r around c as a mesh: marching cubes of its exact distance on a 0.5 mm
 * grid (vertices within ~0.01 mm of the sphere). */
static NwSurface *sphere_mesh(const double c[3], double r)
{
  g_autoptr(NwVolume) fine = nw_volume_new(48, 48, 48, 1, NULL);
  nw_volume_set_spacing(fine, 0.5, 0.5, 0.5);
  for (int k = 0; k < 48; k++)
    for (int j = 0; j < 48; j++)
      for (int i = 0; i < 48; i++) {
        double x = 0.5 * i - c[0], y = 0.5 * j - c[1], z = 0.5 * k - c[2];
        fine->data[nw_volume_index(fine, i, j, k)] = (float)(sqrt(x * x + y * y + z * z) - r);
      }
  NwSurface *s = nw_level_set_mesh(fine, NULL, NULL);
  g_assert_nonnull(s);
  return s;
}

/* Max |phi - exact| over voxels within 1.5 mm of the sphere and the sign everywhere. */
static void check_sphere_sdf(const NwVolume *phi, const double c[3], double r, double tol)
{
  double worst = 0.0;
  for (int k = 0; k < phi->nz; k++)
    for (int j = 0; j < phi->ny; j++)
      for (int i = 0; i < phi->nx; i++) {
        double ijk[3] = {i, j, k}, x[3];
        nw_volume_voxel_to_world(phi, ijk, x);
        double e = sqrt((x[0] - c[0]) * (x[0] - c[0]) + (x[1] - c[1]) * (x[1] - c[1]) +
                        (x[2] - c[2]) * (x[2] - c[2])) -
                   r;
        float v = phi->data[nw_volume_index(phi, i, j, k)];
        if (fabs(e) > 0.1)
          g_assert_cmpint(v < 0, ==, e < 0);
        if (fabs(e) <= 1.5)
          worst = MAX(worst, fabs(v - e));
      }
  g_test_message("sphere mesh -> sdf: max error %.4f mm near the surface", worst);
  g_assert_cmpfloat(worst, <=, tol);
}

static void test_sphere_like(void)
{
  const double c[3] = {11.7, 12.1, 11.9}, r = 7.0;
  g_autoptr(NwSurface) s = sphere_mesh(c, r);
  g_autoptr(NwVolume) grid = nw_volume_new(20, 20, 20, 1, NULL);
  /* A 1.25 mm grid shifted from the mesh's: nothing lines up. */
  double m[16] = {1.25, 0, 0, 0.3, 0, 1.25, 0, -0.2, 0, 0, 1.25, 0.1, 0, 0, 0, 1};
  nw_volume_set_affine(grid, m);
  g_autoptr(GError) error = NULL;
  g_autoptr(NwVolume) phi = nw_mesh_to_sdf(s, grid, "sphere.gii", &error);
  g_assert_no_error(error);
  check_sphere_sdf(phi, c, r, 0.05); /* exact triangle distances; the mesh is ~0.01 off */
}

/* Marching cubes of the same grid puts vertices exactly on voxel rows: the nudged rays must
 * still count every crossing once. */
static void test_sphere_own_grid(void)
{
  const double c[3] = {11.7, 12.1, 11.9}, r = 7.0;
  g_autoptr(NwSurface) s = sphere_mesh(c, r);
  g_autoptr(GError) error = NULL;
  g_autoptr(NwVolume) grid = nw_mesh_grid(s, 0.5, 2.0, &error);
  g_assert_no_error(error);
  g_assert_cmpint(grid->nx, ==, (int)ceil((2 * r + 4.0) / 0.5) + 1);
  g_autoptr(NwVolume) phi = nw_mesh_to_sdf(s, grid, "sphere.gii", &error);
  g_assert_no_error(error);
  check_sphere_sdf(phi, c, r, 0.05);
}

static void test_refusals(void)
{
  const double c[3] = {11.7, 12.1, 11.9};
  g_autoptr(NwSurface) s = sphere_mesh(c, 7.0);
  g_autoptr(GError) error = NULL;
  g_autoptr(NwVolume) far = nw_volume_new(8, 8, 8, 1, NULL);
  double m[16] = {1, 0, 0, 100, 0, 1, 0, 100, 0, 0, 1, 100, 0, 0, 0, 1};
  nw_volume_set_affine(far, m);
  g_assert_null(nw_mesh_to_sdf(s, far, "lh.pial", &error));
  g_assert_nonnull(strstr(error->message, "lh.pial: no voxel of the grid lies inside"));
  g_clear_error(&error);
  s->n_triangles -= 1; /* one hole: an open mesh */
  g_autoptr(NwVolume) grid = nw_mesh_grid(s, 1.0, 2.0, NULL);
  g_assert_null(nw_mesh_to_sdf(s, grid, "open.ply", &error));
  g_assert_error(error, NW_ERROR, NW_ERROR_FORMAT);
  g_assert_nonnull(strstr(error->message, "open.ply: the mesh is not closed (3 boundary edges)"));
  g_clear_error(&error);
  g_assert_null(nw_mesh_grid(s, 0.01, 2.0, &error));
  g_assert_nonnull(strstr(error->message, "at most 512"));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/mesh-sdf/point-triangle", test_point_triangle);
  g_test_add_func("/mesh-sdf/sphere-like", test_sphere_like);
  g_test_add_func("/mesh-sdf/sphere-own-grid", test_sphere_own_grid);
  g_test_add_func("/mesh-sdf/refusals", test_refusals);
  return g_test_run();
}
