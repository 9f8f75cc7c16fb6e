/* test_surface.c — NwSurface (core/surface.c): allocation limits, copies, area-weighted
 * normals against hand-computed values, bounds, validation messages and the edge census of
 * closed, open, non-manifold and misoriented meshes. CPU, main thread. */
#include <math.h>
#include <string.h>

#include "nw_error.h"
#include "surface.h"
#include "testutil.h"

/* A regular-ish tetrahedron, counter-clockwise seen from outside. */
static NwSurface *tetrahedron(void)
{
  static const float v[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  static const guint32 t[4][3] = {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3}};
  NwSurface *s = nw_surface_new(4, 4, NULL);
  memcpy(s->vertices, v, sizeof v);
  memcpy(s->triangles, t, sizeof t);
  return s;
}

static void test_new_copy(void)
{
  g_autoptr(GError) error = NULL;
  g_assert_null(nw_surface_new(-1, 3, &error));
  g_assert_error(error, NW_ERROR, NW_ERROR_INVALID);
  g_assert_nonnull(strstr(error->message, "-1 vertices"));
  g_clear_error(&error);
  g_assert_null(nw_surface_new(10, G_MAXINT32, &error));
  g_assert_error(error, NW_ERROR, NW_ERROR_INVALID);
  g_clear_error(&error);

  g_autoptr(NwSurface) empty = nw_surface_new(0, 0, &error);
  g_assert_no_error(error);
  float lo[3], hi[3];
  nw_surface_bounds(empty, lo, hi);
  g_assert_cmpfloat(lo[0], ==, 0.0f);
  g_assert_cmpfloat(hi[2], ==, 0.0f);

  g_autoptr(NwSurface) s = tetrahedron();
  s->scalars = g_new(float, 4);
  for (int i = 0; i < 4; i++)
    s->scalars[i] = (float)i * 0.5f;
  nw_surface_compute_normals(s);
  g_autoptr(NwSurface) c = nw_surface_copy(s);
  g_assert_cmpint(c->n_vertices, ==, 4);
  g_assert_cmpint(c->n_triangles, ==, 4);
  g_assert_true(c->vertices != s->vertices && c->scalars != s->scalars);
  g_assert_cmpmem(c->vertices, 12 * sizeof(float), s->vertices, 12 * sizeof(float));
  g_assert_cmpmem(c->triangles, 12 * sizeof(guint32), s->triangles, 12 * sizeof(guint32));
  g_assert_cmpmem(c->normals, 12 * sizeof(float), s->normals, 12 * sizeof(float));
  g_assert_cmpfloat(c->scalars[3], ==, 1.5f);
}

/* Vertex 0 and 1 belong to a triangle of area 2 facing +z and one of area 1 facing +y:
 * weighted by area their normal is (0, 1, 2) / sqrt(5); vertex 2 and 3 see one face each. */
static void test_normals_area_weighted(void)
{
  g_autoptr(NwSurface) s = nw_surface_new(4, 2, NULL);
  const float v[12] = {0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 1};
  const guint32 t[6] = {0, 1, 2, 0, 3, 1};
  memcpy(s->vertices, v, sizeof v);
  memcpy(s->triangles, t, sizeof t);
  nw_surface_compute_normals(s);
  const float expect[4][3] = {
      {0, 1 / sqrtf(5), 2 / sqrtf(5)}, {0, 1 / sqrtf(5), 2 / sqrtf(5)}, {0, 0, 1}, {0, 1, 0}};
  for (int i = 0; i < 4; i++)
    for (int d = 0; d < 3; d++)
      g_assert_cmpfloat_with_epsilon(s->normals[i * 3 + d], expect[i][d], 1e-6);
}

static void test_normals_outward_and_bounds(void)
{
  g_autoptr(NwSurface) s = tetrahedron();
  nw_surface_compute_normals(s);
  /* every normal points away from the centroid (0.25, 0.25, 0.25) and is unit length */
  for (int i = 0; i < 4; i++) {
    const float *n = s->normals + i * 3, *p = s->vertices + i * 3;
    float dot = n[0] * (p[0] - 0.25f) + n[1] * (p[1] - 0.25f) + n[2] * (p[2] - 0.25f);
    g_assert_cmpfloat(dot, >, 0.0f);
    g_assert_cmpfloat_with_epsilon(n[0] * n[0] + n[1] * n[1] + n[2] * n[2], 1.0, 1e-6);
  }
  /* vertex 0: faces -z (area 1/2), -y (1/2), -x (1/2): (-1, -1, -1) / sqrt(3) */
  for (int d = 0; d < 3; d++)
    g_assert_cmpfloat_with_epsilon(s->normals[d], -1 / sqrtf(3), 1e-6);
  float lo[3], hi[3];
  s->vertices[3 * 3 + 2] = 2.5f;
  s->vertices[1 * 3 + 0] = -1.5f;
  nw_surface_bounds(s, lo, hi);
  g_assert_cmpfloat(lo[0], ==, -1.5f);
  g_assert_cmpfloat(lo[1], ==, 0.0f);
  g_assert_cmpfloat(hi[1], ==, 1.0f);
  g_assert_cmpfloat(hi[2], ==, 2.5f);
}

static void test_validate(void)
{
  g_autoptr(NwSurface) s = tetrahedron();
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_surface_validate(s, "tet.ply", &error));
  g_assert_no_error(error);

  s->triangles[2 * 3 + 1] = 4;
  g_assert_false(nw_surface_validate(s, "tet.ply", &error));
  g_assert_error(error, NW_ERROR, NW_ERROR_FORMAT);
  g_assert_cmpstr(error->message, ==,
                  "tet.ply: triangle 2 refers to vertex 4, out of range (4 vertices)");
  g_clear_error(&error);

  s->triangles[2 * 3 + 1] = 0;
  g_assert_false(nw_surface_validate(s, "tet.ply", &error));
  g_assert_cmpstr(error->message, ==, "tet.ply: triangle 2 is degenerate (vertices 0 0 2)");
  g_clear_error(&error);

  s->triangles[2 * 3 + 1] = 3;
  s->vertices[5] = NAN;
  g_assert_false(nw_surface_validate(s, "tet.ply", &error));
  g_assert_cmpstr(error->message, ==, "tet.ply: vertex 1 has a non-finite coordinate");
}

static void test_manifold(void)
{
  g_autoptr(NwSurface) s = tetrahedron();
  g_autoptr(GError) error = NULL;
  NwMeshTopology topo;
  g_assert_true(nw_mesh_check_manifold(s, "tet", &topo, &error));
  g_assert_cmpint(topo.n_edges, ==, 6);
  g_assert_cmpint(topo.n_boundary_edges, ==, 0);
  g_assert_cmpint(topo.euler, ==, 2);

  /* open: drop the last triangle; three boundary edges, still a manifold */
  s->n_triangles = 3;
  g_assert_true(nw_mesh_check_manifold(s, "tet", &topo, &error));
  g_assert_cmpint(topo.n_boundary_edges, ==, 3);
  g_assert_cmpint(topo.euler, ==, 1);

  /* misoriented: flip one triangle */
  s->n_triangles = 4;
  guint32 tmp = s->triangles[1];
  s->triangles[1] = s->triangles[2];
  s->triangles[2] = tmp;
  g_assert_false(nw_mesh_check_manifold(s, "tet", &topo, &error));
  g_assert_error(error, NW_ERROR, NW_ERROR_FORMAT);
  g_assert_cmpint(topo.n_misoriented_edges, ==, 3);
  g_assert_nonnull(strstr(error->message, "tet: not a manifold: 0 non-manifold and 3 "
                                          "misoriented edges; edge "));
  g_assert_nonnull(strstr(error->message, "is used twice in the same direction"));
  g_clear_error(&error);

  /* non-manifold: three triangles on edge 0-1 */
  g_autoptr(NwSurface) fin = nw_surface_new(5, 3, NULL);
  const guint32 t[9] = {0, 1, 2, 1, 0, 3, 0, 1, 4};
  memcpy(fin->triangles, t, sizeof t);
  g_assert_false(nw_mesh_check_manifold(fin, "fin.obj", &topo, &error));
  g_assert_cmpint(topo.n_nonmanifold_edges, ==, 1);
  g_assert_cmpstr(error->message, ==,
                  "fin.obj: not a manifold: 1 non-manifold and 0 "
                  "misoriented edges; edge 0-1 is shared by more than two "
                  "triangles");
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/surface/new_copy", test_new_copy);
  g_test_add_func("/surface/normals_area_weighted", test_normals_area_weighted);
  g_test_add_func("/surface/normals_outward_and_bounds", test_normals_outward_and_bounds);
  g_test_add_func("/surface/validate", test_validate);
  g_test_add_func("/surface/manifold", test_manifold);
  return g_test_run();
}
