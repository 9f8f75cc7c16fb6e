/* mesh_sdf.c — a closed mesh's signed distance on a grid: ray-parity inside test, exact
 * distances near the triangles, fast sweeping beyond (mesh_sdf.h). CPU; any thread. */
#include "mesh_sdf.h"

#include <math.h>
#include <stdlib.h>

#include "nw_error.h"
#include "sdf_reinit.h"

/* Voxels within this many voxels (of the largest spacing) of a triangle get exact distances. */
#define EXACT_RADIUS_VOX 2.0
#define MAX_AXIS 512

NwVolume *nw_mesh_grid(const NwSurface *s, double spacing_mm, double margin_mm, GError **error)
{
  if (!(spacing_mm > 0.0) || !isfinite(spacing_mm) || !(margin_mm >= 0.0)) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "grid: spacing %g mm and margin %g mm: the spacing must be positive", spacing_mm,
                margin_mm);
    return NULL;
  }
  float lo[3], hi[3];
  nw_surface_bounds(s, lo, hi);
  int n[3];
  for (int a = 0; a < 3; a++) {
    double extent = (double)hi[a] - lo[a] + 2.0 * margin_mm;
    double count = ceil(extent / spacing_mm) + 1.0;
    if (count > MAX_AXIS) {
      g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                  "grid: %.0f voxels along axis %d at %g mm: at most %d (a larger spacing, or "
                  "--like an image)",
                  count, a, spacing_mm, MAX_AXIS);
      return NULL;
    }
    n[a] = (int)count;
  }
  NwVolume *v = nw_volume_new(n[0], n[1], n[2], 1, error);
  if (v == NULL)
    return NULL;
  double m[16] = {spacing_mm, 0, 0,          lo[0] - margin_mm, 0, spacing_mm, 0, lo[1] - margin_mm,
                  0,          0, spacing_mm, lo[2] - margin_mm, 0, 0,          0, 1};
  nw_volume_set_affine(v, m);
  return v;
}

static void sub(double out[3], const double a[3], const double b[3])
{
  for (int i = 0; i < 3; i++)
    out[i] = a[i] - b[i];
}

static double dot(const double a[3], const double b[3])
{
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

double nw_point_triangle_distance(const double p[3], const double a[3], const double b[3],
                                  const double c[3])
{
  double ab[3], ac[3], ap[3], bp[3], cp[3], q[3];
  sub(ab, b, a), sub(ac, c, a), sub(ap, p, a);
  double d1 = dot(ab, ap), d2 = dot(ac, ap);
  if (d1 <= 0.0 && d2 <= 0.0)
    return sqrt(dot(ap, ap)); /* vertex a */
  sub(bp, p, b);
  double d3 = dot(ab, bp), d4 = dot(ac, bp);
  if (d3 >= 0.0 && d4 <= d3)
    return sqrt(dot(bp, bp)); /* vertex b */
  double vc = d1 * d4 - d3 * d2;
  double v, w;
  if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) { /* edge ab */
    v = d1 / (d1 - d3);
    for (int i = 0; i < 3; i++)
      q[i] = a[i] + v * ab[i];
    sub(q, p, q);
    return sqrt(dot(q, q));
  }
  sub(cp, p, c);
  double d5 = dot(ab, cp), d6 = dot(ac, cp);
  if (d6 >= 0.0 && d5 <= d6)
    return sqrt(dot(cp, cp)); /* vertex c */
  double vb = d5 * d2 - d1 * d6;
  if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) { /* edge ac */
    w = d2 / (d2 - d6);
    for (int i = 0; i < 3; i++)
      q[i] = a[i] + w * ac[i];
    sub(q, p, q);
    return sqrt(dot(q, q));
  }
  double va = d3 * d6 - d5 * d4;
  if (va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0) { /* edge bc */
    w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
    for (int i = 0; i < 3; i++)
      q[i] = b[i] + w * (c[i] - b[i]);
    sub(q, p, q);
    return sqrt(dot(q, q));
  }
  double denom = 1.0 / (va + vb + vc); /* inside the face */
  v = vb * denom, w = vc * denom;
  for (int i = 0; i < 3; i++)
    q[i] = a[i] + ab[i] * v + ac[i] * w;
  sub(q, p, q);
  return sqrt(dot(q, q));
}

static gboolean check_closed(const NwSurface *s, const char *name, GError **error)
{
  NwMeshTopology topo;
  if (!nw_surface_validate(s, name, error) || !nw_mesh_check_manifold(s, name, &topo, error))
    return FALSE;
  if (topo.n_boundary_edges > 0 || s->n_triangles == 0) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "%s: the mesh is not closed (%d boundary edges): it has no inside to denoise", name,
                topo.n_boundary_edges);
    return FALSE;
  }
  return TRUE;
}

/* A crossing of row (j, k)'s ray at i = x. */
typedef struct {
  size_t row;
  double x;
} Crossing;

static int by_row_then_x(const void *pa, const void *pb)
{
  const Crossing *a = pa, *b = pb;
  if (a->row != b->row)
    return a->row < b->row ? -1 : 1;
  return a->x < b->x ? -1 : a->x > b->x;
}

/* Where the ray (t, y, z) meets triangle t (voxel space) if it does: barycentric weights of
 * (y, z) in the triangle's (j, k) projection, all of one sign. */
static gboolean ray_hits(const double *p0, const double *p1, const double *p2, double y, double z,
                         double *x)
{
  double e0 = (p1[1] - y) * (p2[2] - z) - (p2[1] - y) * (p1[2] - z);
  double e1 = (p2[1] - y) * (p0[2] - z) - (p0[1] - y) * (p2[2] - z);
  double e2 = (p0[1] - y) * (p1[2] - z) - (p1[1] - y) * (p0[2] - z);
  gboolean pos = e0 > 0 && e1 > 0 && e2 > 0, neg = e0 < 0 && e1 < 0 && e2 < 0;
  if (!pos && !neg)
    return FALSE;
  double sum = e0 + e1 + e2;
  *x = (e0 * p0[0] + e1 * p1[0] + e2 * p2[0]) / sum;
  return TRUE;
}

/* Mark inside voxels (1) by the parity of the crossings along each i-row. */
static void inside_by_parity(guint8 *inside, const NwVolume *g, const double *vox,
                             const NwSurface *s)
{
  /* Irrational nudges: no vertex of a mesh on this grid lies exactly on a nudged ray. */
  const double ny_off = 1e-5 * G_SQRT2, nz_off = 1e-5 * 1.7320508075688772;
  GArray *cr = g_array_new(FALSE, FALSE, sizeof(Crossing));
  for (int t = 0; t < s->n_triangles; t++) {
    const double *p[3] = {vox + s->triangles[t * 3] * 3, vox + s->triangles[t * 3 + 1] * 3,
                          vox + s->triangles[t * 3 + 2] * 3};
    double lo_y = MIN(p[0][1], MIN(p[1][1], p[2][1])), hi_y = MAX(p[0][1], MAX(p[1][1], p[2][1]));
    double lo_z = MIN(p[0][2], MIN(p[1][2], p[2][2])), hi_z = MAX(p[0][2], MAX(p[1][2], p[2][2]));
    int j0 = MAX(0, (int)ceil(lo_y - ny_off)), j1 = MIN(g->ny - 1, (int)floor(hi_y - ny_off));
    int k0 = MAX(0, (int)ceil(lo_z - nz_off)), k1 = MIN(g->nz - 1, (int)floor(hi_z - nz_off));
    for (int k = k0; k <= k1; k++)
      for (int j = j0; j <= j1; j++) {
        Crossing c = {.row = (size_t)k * g->ny + j};
        if (ray_hits(p[0], p[1], p[2], j + ny_off, k + nz_off, &c.x))
          g_array_append_val(cr, c);
      }
  }
  g_array_sort(cr, by_row_then_x);
  for (guint a = 0; a < cr->len;) {
    guint b = a;
    while (b < cr->len && g_array_index(cr, Crossing, b).row == g_array_index(cr, Crossing, a).row)
      b++;
    /* Between crossings 2q and 2q+1 of a row lies inside; an odd count (a self-intersecting or
     * leaky mesh) leaves its last span out. */
    guint8 *row = inside + g_array_index(cr, Crossing, a).row * (size_t)g->nx;
    for (guint q = a; q + 1 < b; q += 2) {
      int i0 = MAX(0, (int)ceil(g_array_index(cr, Crossing, q).x));
      int i1 = MIN(g->nx - 1, (int)floor(g_array_index(cr, Crossing, q + 1).x));
      for (int i = i0; i <= i1; i++)
        row[i] = 1;
    }
    a = b;
  }
  g_array_unref(cr);
}

/* Exact distances (mm) of the voxels within EXACT_RADIUS_VOX of some triangle into dist
 * (+inf elsewhere). */
static void near_distances(float *dist, const NwVolume *g, const double *vox, const NwSurface *s)
{
  const double smax = MAX(g->spacing_mm[0], MAX(g->spacing_mm[1], g->spacing_mm[2]));
  const double r_mm = EXACT_RADIUS_VOX * smax;
  const int lim[3] = {g->nx, g->ny, g->nz};
  for (int t = 0; t < s->n_triangles; t++) {
    const guint32 *tri = s->triangles + (size_t)t * 3;
    double w[3][3]; /* the corners in world mm */
    int lo[3], hi[3];
    for (int a = 0; a < 3; a++) {
      double mn = INFINITY, mx = -INFINITY;
      for (int c = 0; c < 3; c++) {
        mn = MIN(mn, vox[tri[c] * 3 + a]);
        mx = MAX(mx, vox[tri[c] * 3 + a]);
        w[c][a] = s->vertices[tri[c] * 3 + a];
      }
      double grow = r_mm / g->spacing_mm[a];
      lo[a] = MAX(0, (int)ceil(mn - grow));
      hi[a] = MIN(lim[a] - 1, (int)floor(mx + grow));
    }
    for (int k = lo[2]; k <= hi[2]; k++)
      for (int j = lo[1]; j <= hi[1]; j++)
        for (int i = lo[0]; i <= hi[0]; i++) {
          double ijk[3] = {i, j, k}, p[3];
          nw_volume_voxel_to_world(g, ijk, p);
          size_t e = nw_volume_index(g, i, j, k);
          double d = nw_point_triangle_distance(p, w[0], w[1], w[2]);
          if (d < dist[e])
            dist[e] = (float)d;
        }
  }
  const size_t n = nw_volume_n_voxels(g);
  for (size_t e = 0; e < n; e++)
    if (dist[e] > r_mm)
      dist[e] = INFINITY; /* farther than the visit radius: maybe not the nearest triangle */
}

NwVolume *nw_mesh_to_sdf(const NwSurface *s, const NwVolume *grid, const char *name, GError **error)
{
  if (!check_closed(s, name, error))
    return NULL;
  g_autoptr(NwVolume) phi = nw_volume_new_like(grid, 1, error);
  if (phi == NULL)
    return NULL;
  const size_t n = nw_volume_n_voxels(phi);
  g_autofree double *vox = g_new(double, (size_t)s->n_vertices * 3 + 1);
  for (int v = 0; v < s->n_vertices; v++) {
    const double ras[3] = {s->vertices[v * 3], s->vertices[v * 3 + 1], s->vertices[v * 3 + 2]};
    nw_volume_world_to_voxel(phi, ras, vox + (size_t)v * 3);
  }
  g_autofree guint8 *inside = g_new0(guint8, n);
  g_autofree guint8 *known = g_new0(guint8, n);
  inside_by_parity(inside, phi, vox, s);
  for (size_t e = 0; e < n; e++)
    phi->data[e] = INFINITY;
  near_distances(phi->data, phi, vox, s);
  size_t n_inside = 0;
  for (size_t e = 0; e < n; e++) {
    known[e] = isfinite(phi->data[e]);
    float d = known[e] ? phi->data[e] : 1.0f;      /* unknown: only the sign matters here */
    phi->data[e] = inside[e] ? -d : MAX(d, 1e-6f); /* outside stays > 0 */
    n_inside += inside[e];
  }
  if (n_inside == 0 || n_inside == n) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "%s: %s voxel of the grid lies inside the mesh: the grid must contain the "
                "surface",
                name, n_inside == 0 ? "no" : "every");
    return NULL;
  }
  if (!nw_sdf_extend(phi, known, name, error))
    return NULL;
  return g_steal_pointer(&phi);
}
