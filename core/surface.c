/* surface.c — NwSurface allocation, area-weighted normals, bounds, validation and the edge
 * census (manifold check). CPU, any thread; plain loops. Coordinates are RAS mm. */
#include "surface.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nw_error.h"

/* Counts above this would overflow the int index arithmetic (3 floats per vertex). */
#define NW_SURFACE_MAX_COUNT (G_MAXINT32 / 3)

NwSurface *nw_surface_new(int n_vertices, int n_triangles, GError **error)
{
  if (n_vertices < 0 || n_triangles < 0 || n_vertices > NW_SURFACE_MAX_COUNT ||
      n_triangles > NW_SURFACE_MAX_COUNT) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "invalid mesh size: %d vertices, %d triangles (limit %d)", n_vertices, n_triangles,
                NW_SURFACE_MAX_COUNT);
    return NULL;
  }
  float *vertices = g_try_malloc0_n((gsize)n_vertices * 3 + 1, sizeof(float));
  guint32 *triangles = g_try_malloc0_n((gsize)n_triangles * 3 + 1, sizeof(guint32));
  if (vertices == NULL || triangles == NULL) {
    g_free(vertices);
    g_free(triangles);
    g_set_error(error, NW_ERROR, NW_ERROR_NOMEM,
                "out of memory for a mesh of %d vertices and %d triangles", n_vertices,
                n_triangles);
    return NULL;
  }
  NwSurface *s = g_new0(NwSurface, 1);
  s->n_vertices = n_vertices;
  s->n_triangles = n_triangles;
  s->vertices = vertices;
  s->triangles = triangles;
  return s;
}

NwSurface *nw_surface_copy(const NwSurface *s)
{
  NwSurface *c = g_new0(NwSurface, 1);
  gsize nv = (gsize)s->n_vertices;
  c->n_vertices = s->n_vertices;
  c->n_triangles = s->n_triangles;
  c->vertices = g_memdup2(s->vertices, (nv * 3 + 1) * sizeof(float));
  c->triangles = g_memdup2(s->triangles, ((gsize)s->n_triangles * 3 + 1) * sizeof(guint32));
  if (s->normals != NULL)
    c->normals = g_memdup2(s->normals, nv * 3 * sizeof(float));
  if (s->scalars != NULL)
    c->scalars = g_memdup2(s->scalars, nv * sizeof(float));
  return c;
}

void nw_surface_free(NwSurface *s)
{
  if (s == NULL)
    return;
  g_free(s->vertices);
  g_free(s->normals);
  g_free(s->scalars);
  g_free(s->triangles);
  g_free(s);
}

/* The cross product of two edges has length twice the triangle's area, so summing it
 * unnormalised weights each face by its area. Triangles are assumed counter-clockwise seen
 * from outside, which makes the result point outward. */
void nw_surface_compute_normals(NwSurface *s)
{
  gsize nv = (gsize)s->n_vertices;
  if (s->normals == NULL)
    s->normals = g_new0(float, nv * 3 + 1);
  double *acc = g_new0(double, nv * 3 + 1);
  for (int t = 0; t < s->n_triangles; t++) {
    const guint32 *tri = s->triangles + (gsize)t * 3;
    if (tri[0] >= nv || tri[1] >= nv || tri[2] >= nv)
      continue; /* invalid meshes are reported by nw_surface_validate, not here */
    const float *a = s->vertices + tri[0] * 3, *b = s->vertices + tri[1] * 3,
                *c = s->vertices + tri[2] * 3;
    double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    double v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    double n[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
    for (int k = 0; k < 3; k++)
      for (int d = 0; d < 3; d++)
        acc[tri[k] * 3 + d] += n[d];
  }
  for (gsize i = 0; i < nv; i++) {
    double *n = acc + i * 3;
    double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    for (int d = 0; d < 3; d++)
      s->normals[i * 3 + d] = len > 0 ? (float)(n[d] / len) : 0.0f; /* unused vertex: 0 */
  }
  g_free(acc);
}

void nw_surface_bounds(const NwSurface *s, float lo[3], float hi[3])
{
  for (int d = 0; d < 3; d++) {
    lo[d] = s->n_vertices > 0 ? INFINITY : 0.0f;
    hi[d] = s->n_vertices > 0 ? -INFINITY : 0.0f;
  }
  for (gsize i = 0; i < (gsize)s->n_vertices; i++)
    for (int d = 0; d < 3; d++) {
      float x = s->vertices[i * 3 + d];
      lo[d] = MIN(lo[d], x);
      hi[d] = MAX(hi[d], x);
    }
}

gboolean nw_surface_validate(const NwSurface *s, const char *name, GError **error)
{
  gsize nv = (gsize)s->n_vertices;
  for (gsize i = 0; i < nv * 3; i++)
    if (!isfinite(s->vertices[i])) {
      g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: vertex %zu has a non-finite coordinate",
                  name, i / 3);
      return FALSE;
    }
  for (int t = 0; t < s->n_triangles; t++) {
    const guint32 *tri = s->triangles + (gsize)t * 3;
    for (int k = 0; k < 3; k++)
      if (tri[k] >= nv) {
        g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                    "%s: triangle %d refers to vertex %u, out of range (%d vertices)", name, t,
                    tri[k], s->n_vertices);
        return FALSE;
      }
    if (tri[0] == tri[1] || tri[1] == tri[2] || tri[0] == tri[2]) {
      g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                  "%s: triangle %d is degenerate (vertices %u %u %u)", name, t, tri[0], tri[1],
                  tri[2]);
      return FALSE;
    }
  }
  return TRUE;
}

/* One directed edge: key = (min << 32) | max, forward = it runs min -> max. */
typedef struct {
  guint64 key;
  gboolean forward;
} DirectedEdge;

static int compare_edges(const void *a, const void *b)
{
  guint64 x = ((const DirectedEdge *)a)->key, y = ((const DirectedEdge *)b)->key;
  return x < y ? -1 : x > y;
}

static DirectedEdge *collect_edges(const NwSurface *s, gsize *n_out)
{
  gsize n = (gsize)s->n_triangles * 3;
  DirectedEdge *e = g_new(DirectedEdge, n + 1);
  for (gsize t = 0; t < (gsize)s->n_triangles; t++)
    for (int k = 0; k < 3; k++) {
      guint32 a = s->triangles[t * 3 + k], b = s->triangles[t * 3 + (k + 1) % 3];
      e[t * 3 + k].key = ((guint64)MIN(a, b) << 32) | MAX(a, b);
      e[t * 3 + k].forward = a < b;
    }
  qsort(e, n, sizeof *e, compare_edges);
  *n_out = n;
  return e;
}

gboolean nw_mesh_check_manifold(const NwSurface *s, const char *name, NwMeshTopology *topo,
                                GError **error)
{
  NwMeshTopology t = {0};
  gsize n = 0;
  g_autofree DirectedEdge *e = collect_edges(s, &n);
  guint64 first_bad = G_MAXUINT64;
  const char *first_what = NULL;
  for (gsize i = 0; i < n;) {
    gsize j = i + 1, n_forward = e[i].forward;
    for (; j < n && e[j].key == e[i].key; j++)
      n_forward += e[j].forward;
    gsize uses = j - i;
    t.n_edges++;
    if (uses == 1)
      t.n_boundary_edges++;
    else if (uses > 2)
      t.n_nonmanifold_edges++;
    else if (n_forward != 1)
      t.n_misoriented_edges++;
    if ((uses > 2 || (uses == 2 && n_forward != 1)) && first_what == NULL) {
      first_bad = e[i].key;
      first_what =
          uses > 2 ? "is shared by more than two triangles" : "is used twice in the same direction";
    }
    i = j;
  }
  t.euler = s->n_vertices - t.n_edges + s->n_triangles;
  if (topo != NULL)
    *topo = t;
  if (first_what == NULL)
    return TRUE;
  g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
              "%s: not a manifold: %d non-manifold and %d misoriented edges; edge %u-%u %s", name,
              t.n_nonmanifold_edges, t.n_misoriented_edges, (guint)(first_bad >> 32),
              (guint)(first_bad & 0xffffffffu), first_what);
  return FALSE;
}
