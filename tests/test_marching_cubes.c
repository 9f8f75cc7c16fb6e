/* test_marching_cubes.c — the CPU reference marching cubes (core/marching_cubes.c): the
 * generated case table, a single-voxel octahedron with its exact vertices and canonical
 * order, a sampled sphere (closed, genus 0, radius, area, volume, outward normals) on an
 * identity and on a mirroring, anisotropic affine, and the ch2bet brain when installed.
 * CPU, main thread. */
#include <math.h>
#include <string.h>

#include "io_nifti.h"
#include "marching_cubes.h"
#include "nw_error.h"
#include "testutil.h"

/* Every case's triangles use exactly the edges whose two corners differ. (Complementary cases may
 * differ: ambiguous faces always separate the inside corners.) */
static gboolean edges_share_face(int e, int f)
{
  int ce, ae, cf, af;
  nw_mc_edge(e, &ce, &ae);
  nw_mc_edge(f, &cf, &af);
  int corners[4] = {ce, ce | 1 << ae, cf, cf | 1 << af};
  for (int axis = 0; axis < 3; axis++) {
    int ones = 0;
    for (int k = 0; k < 4; k++)
      ones += corners[k] >> axis & 1;
    if (ones == 0 || ones == 4)
      return TRUE;
  }
  return FALSE;
}

static void test_case_table(void)
{
  const gint8 *table = nw_mc_triangle_table();
  for (int ci = 0; ci < 256; ci++) {
    const gint8 *row = table + ci * NW_MC_TABLE_STRIDE;
    gboolean used[12] = {FALSE};
    int n = 0;
    for (; row[n] >= 0; n++) {
      g_assert_cmpint(row[n], <, 12);
      used[row[n]] = TRUE;
    }
    g_assert_cmpint(n % 3, ==, 0);
    g_assert_cmpint(n, <=, 3 * NW_MC_MAX_TRIANGLES);
    for (int e = 0; e < 12; e++) {
      int c, a;
      nw_mc_edge(e, &c, &a);
      g_assert_cmpint(c >> a & 1, ==, 0);
      gboolean crossed = (ci >> c & 1) != (ci >> (c | 1 << a) & 1);
      g_assert_cmpint(used[e], ==, crossed);
    }
  }
  g_assert_cmpint(table[0], ==, -1);
  /* Fan diagonals (pairs used by two triangles of a case) cross the cube's interior: they
   * never join two vertices of one face, which a neighbour could join too. */
  for (int ci = 0; ci < 256; ci++) {
    const gint8 *row = table + ci * NW_MC_TABLE_STRIDE;
    int count[12][12] = {{0}};
    for (int t = 0; row[t * 3] >= 0; t++)
      for (int k = 0; k < 3; k++) {
        int a = row[t * 3 + k], b = row[t * 3 + (k + 1) % 3];
        count[MIN(a, b)][MAX(a, b)]++;
      }
    for (int a = 0; a < 12; a++)
      for (int b = a + 1; b < 12; b++)
        if (count[a][b] == 2)
          g_assert_false(edges_share_face(a, b));
  }
  g_assert_cmpint(table[255 * NW_MC_TABLE_STRIDE], ==, -1);
  /* one corner inside: one triangle */
  g_assert_cmpint(table[1 * NW_MC_TABLE_STRIDE + 3], ==, -1);
}

static void assert_closed_genus0(const NwSurface *s)
{
  NwMeshTopology topo;
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_mesh_check_manifold(s, "mc", &topo, &error));
  g_assert_no_error(error);
  g_assert_cmpint(topo.n_boundary_edges, ==, 0);
  g_assert_cmpint(topo.n_nonmanifold_edges, ==, 0);
  g_assert_cmpint(topo.n_misoriented_edges, ==, 0);
  g_assert_cmpint(topo.euler, ==, 2);
  g_assert_true(nw_surface_validate(s, "mc", &error));
}

/* A 3x3x3 volume with 1 at the centre voxel, iso 0.5: an octahedron whose six vertices sit
 * half-way along the six edges from the centre, numbered by edge name (3 * voxel + axis). */
static void test_single_voxel(void)
{
  g_autoptr(NwVolume) v = nw_volume_new(3, 3, 3, 1, NULL);
  v->data[nw_volume_index(v, 1, 1, 1)] = 1.0f;
  g_autoptr(GError) error = NULL;
  g_autoptr(NwSurface) s = nw_marching_cubes(v, 0.5f, &error);
  g_assert_no_error(error);
  g_assert_cmpint(s->n_vertices, ==, 6);
  g_assert_cmpint(s->n_triangles, ==, 8);
  /* edge names 14 (z from (1,1,0)), 31 (y from (1,0,1)), 36 (x from (0,1,1)), then the x, y,
   * z edges from the centre voxel 13: 39, 40, 41 */
  static const float expect[6][3] = {{1, 1, 0.5f}, {1, 0.5f, 1}, {0.5f, 1, 1},
                                     {1.5f, 1, 1}, {1, 1.5f, 1}, {1, 1, 1.5f}};
  for (int i = 0; i < 6; i++)
    for (int d = 0; d < 3; d++) {
      g_assert_cmpfloat_with_epsilon(s->vertices[i * 3 + d], expect[i][d], 1e-6);
      /* outward normal: along the offset from the centre */
      g_assert_cmpfloat_with_epsilon(s->normals[i * 3 + d], (expect[i][d] - 1.0f) * 2.0f, 1e-6);
    }
  assert_closed_genus0(s);
  /* counter-clockwise from outside: each face normal points away from the centre */
  for (int t = 0; t < 8; t++) {
    const float *a = s->vertices + s->triangles[t * 3] * 3,
                *b = s->vertices + s->triangles[t * 3 + 1] * 3,
                *c = s->vertices + s->triangles[t * 3 + 2] * 3;
    float u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    float w[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    float n[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]};
    float centroid_dot = 0;
    for (int d = 0; d < 3; d++)
      centroid_dot += n[d] * ((a[d] + b[d] + c[d]) / 3.0f - 1.0f);
    g_assert_cmpfloat(centroid_dot, >, 0.0f);
  }
}

static double triangle_area(const NwSurface *s, int t, double *signed_volume)
{
  const float *a = s->vertices + s->triangles[t * 3] * 3,
              *b = s->vertices + s->triangles[t * 3 + 1] * 3,
              *c = s->vertices + s->triangles[t * 3 + 2] * 3;
  double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
  double w[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
  double n[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]};
  /* divergence theorem: volume = sum over faces of a . (b x c) / 6 */
  *signed_volume += (a[0] * (b[1] * c[2] - b[2] * c[1]) + a[1] * (b[2] * c[0] - b[0] * c[2]) +
                     a[2] * (b[0] * c[1] - b[1] * c[0])) /
                    6.0;
  return 0.5 * sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
}

/* Sphere of radius r mm around centre c (world), sampled as r - |x - c| on v's grid. */
static void check_sphere(NwVolume *v, const double c[3], double r, double radius_tol_mm)
{
  for (int k = 0; k < v->nz; k++)
    for (int j = 0; j < v->ny; j++)
      for (int i = 0; i < v->nx; i++) {
        double ijk[3] = {i, j, k}, x[3];
        nw_volume_voxel_to_world(v, ijk, x);
        double d = sqrt((x[0] - c[0]) * (x[0] - c[0]) + (x[1] - c[1]) * (x[1] - c[1]) +
                        (x[2] - c[2]) * (x[2] - c[2]));
        v->data[nw_volume_index(v, i, j, k)] = (float)(r - d);
      }
  g_autoptr(GError) error = NULL;
  g_autoptr(NwSurface) s = nw_marching_cubes(v, 0.0f, &error);
  g_assert_no_error(error);
  assert_closed_genus0(s);
  double max_dev = 0, min_dot = 1;
  for (int i = 0; i < s->n_vertices; i++) {
    const float *p = s->vertices + i * 3, *n = s->normals + i * 3;
    double q[3] = {p[0] - c[0], p[1] - c[1], p[2] - c[2]};
    double len = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2]);
    max_dev = MAX(max_dev, fabs(len - r));
    min_dot = MIN(min_dot, (n[0] * q[0] + n[1] * q[1] + n[2] * q[2]) / len);
  }
  g_assert_cmpfloat(max_dev, <, radius_tol_mm);
  g_assert_cmpfloat(min_dot, >, 0.99); /* gradient normals of a distance map are radial */
  double area = 0, volume = 0;
  for (int t = 0; t < s->n_triangles; t++)
    area += triangle_area(s, t, &volume);
  /* Flat triangles inscribed in a sphere slightly underestimate both: 1% is the stated
   * tolerance for area 4 pi r^2 and volume 4/3 pi r^3 at r = 10 voxels. Positive volume
   * means counter-clockwise seen from outside. */
  g_assert_cmpfloat(fabs(area / (4 * G_PI * r * r) - 1), <, 0.01);
  g_assert_cmpfloat(fabs(volume / (4.0 / 3.0 * G_PI * r * r * r) - 1), <, 0.01);
}

static void test_sphere(void)
{
  g_autoptr(NwVolume) v = nw_volume_new(28, 28, 28, 1, NULL);
  /* off-grid centre so that no vertex falls on a voxel */
  const double c[3] = {13.3, 13.6, 13.45};
  check_sphere(v, c, 10.0, 0.05);
}

/* A mirroring (x flipped), anisotropic, translated affine: the winding must be flipped to
 * stay counter-clockwise in world space, and the normals mapped by the inverse transpose. */
static void test_sphere_mirrored_affine(void)
{
  g_autoptr(NwVolume) v = nw_volume_new(26, 30, 22, 1, NULL);
  const double aff[16] = {-0.9, 0, 0, 20, 0, 0.8, 0, -5, 0, 0, 1.1, 3, 0, 0, 0, 1};
  nw_volume_set_affine(v, aff);
  const double c[3] = {8.7, 6.9, 15.2}; /* world mm, inside the grid */
  /* 0.05 voxel of the largest spacing */
  check_sphere(v, c, 8.0, 0.05 * 1.1);
}

static void test_errors_and_empty(void)
{
  g_autoptr(NwVolume) v3 = nw_volume_new(4, 4, 4, 3, NULL);
  g_autoptr(GError) error = NULL;
  g_assert_null(nw_marching_cubes(v3, 0.5f, &error));
  g_assert_error(error, NW_ERROR, NW_ERROR_INVALID);
  g_assert_nonnull(strstr(error->message, "3 components"));
  g_clear_error(&error);
  g_autoptr(NwVolume) v = nw_volume_new(4, 4, 4, 1, NULL);
  g_assert_null(nw_marching_cubes(v, NAN, &error));
  g_assert_nonnull(strstr(error->message, "not finite"));
  g_clear_error(&error);
  g_autoptr(NwSurface) s = nw_marching_cubes(v, 0.5f, &error);
  g_assert_no_error(error);
  g_assert_cmpint(s->n_vertices, ==, 0);
  g_assert_cmpint(s->n_triangles, ==, 0);
}

/* Colin27 brain (mricron-data) thresholded: runs and is closed. The brain-extracted image
 * is zero at the border, so nothing is cut open there. */
static void test_ch2bet(void)
{
  const char *path = "/usr/share/mricron/templates/ch2bet.nii.gz";
  if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
    g_test_skip("ch2bet.nii.gz (mricron-data) is not installed");
    return;
  }
  g_autoptr(GError) error = NULL;
  g_autoptr(NwVolume) v = nw_nifti_read(path, &error);
  g_assert_no_error(error);
  g_autoptr(NwSurface) s = nw_marching_cubes(v, 40.0f, &error);
  g_assert_no_error(error);
  g_assert_cmpint(s->n_triangles, >, 100000);
  NwMeshTopology topo;
  g_assert_true(nw_mesh_check_manifold(s, path, &topo, &error));
  g_assert_no_error(error);
  g_assert_cmpint(topo.n_boundary_edges, ==, 0);
  g_assert_cmpint(topo.euler % 2, ==, 0); /* closed orientable surfaces: V - E + F even */
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/marching_cubes/case_table", test_case_table);
  g_test_add_func("/marching_cubes/single_voxel", test_single_voxel);
  g_test_add_func("/marching_cubes/sphere", test_sphere);
  g_test_add_func("/marching_cubes/sphere_mirrored_affine", test_sphere_mirrored_affine);
  g_test_add_func("/marching_cubes/errors_and_empty", test_errors_and_empty);
  g_test_add_func("/marching_cubes/ch2bet", test_ch2bet);
  return g_test_run();
}
