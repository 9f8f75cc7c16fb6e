/* marching_cubes.c — CPU reference marching cubes (see marching_cubes.h for the conventions
 * and output order the CUDA version must match). Any thread; plain loops: one pass to mark
 * the inside voxels (one byte each), then one pass over the slices keeping two slices of
 * edge -> vertex tables (3 * nx * ny indices each). */
#include "marching_cubes.h"

#include <math.h>
#include <string.h>

#include "mat3.h"
#include "nw_error.h"

/* ---- case table ------------------------------------------------------------------------ */

static gint8 tri_table[256][NW_MC_TABLE_STRIDE];
static guint8 edge_corner[12], edge_axis[12];

/* Corner index from the per-axis bits (x, y, z) of its offset. */
static int corner_at(const int bit[3])
{
  return bit[0] | bit[1] << 1 | bit[2] << 2;
}

/* Edge e = axis * 4 + (the two other bits, lower axis first). */
static void build_edges(void)
{
  for (int a = 0; a < 3; a++)
    for (int r = 0; r < 4; r++) {
      int bit[3] = {0, 0, 0};
      bit[(a + 1) % 3 < (a + 2) % 3 ? (a + 1) % 3 : (a + 2) % 3] = r & 1;
      bit[(a + 1) % 3 < (a + 2) % 3 ? (a + 2) % 3 : (a + 1) % 3] = r >> 1 & 1;
      edge_corner[a * 4 + r] = (guint8)corner_at(bit);
      edge_axis[a * 4 + r] = (guint8)a;
    }
}

static int edge_between(int c0, int c1)
{
  for (int e = 0; e < 12; e++) {
    int lo = edge_corner[e], hi = lo | 1 << edge_axis[e];
    if ((lo == c0 && hi == c1) || (lo == c1 && hi == c0))
      return e;
  }
  g_assert_not_reached();
  return -1;
}

/* The four corners of face (axis a, side s) counter-clockwise about its outward normal
 * (s ? +e_a : -e_a). With b = a+1, c = a+2 (mod 3), e_b x e_c = e_a, so (b,c) offsets
 * (0,0) (1,0) (1,1) (0,1) turn counter-clockwise about +e_a; side 0 takes them reversed. */
static void face_corners(int a, int s, int q[4])
{
  static const int bc[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
  for (int k = 0; k < 4; k++) {
    int m = s ? k : (4 - k) % 4;
    int bit[3];
    bit[a] = s;
    bit[(a + 1) % 3] = bc[m][0];
    bit[(a + 2) % 3] = bc[m][1];
    q[k] = corner_at(bit);
  }
}

/* Do cube edges e and f lie on one cube face? */
static gboolean share_face(int e, int f)
{
  int ce = edge_corner[e], cf = edge_corner[f];
  int and_bits = ce & (ce | 1 << edge_axis[e]) & cf & (cf | 1 << edge_axis[f]);
  int or_bits = ce | (ce | 1 << edge_axis[e]) | cf | (cf | 1 << edge_axis[f]);
  return (and_bits | (~or_bits & 7)) != 0;
}

/* Where to put the fan's apex: a fan diagonal joining two vertices of one cube face that the
 * face's own iso-line pieces do not join could be drawn by the neighbouring cube as well,
 * and the edge would then belong to four triangles. Take the first apex whose diagonals
 * all cross the cube's interior. */
static int fan_start(const int *loop, int len)
{
  for (int r = 0; r < len; r++) {
    gboolean ok = TRUE;
    for (int t = 2; t + 1 < len && ok; t++)
      ok = !share_face(loop[r], loop[(r + t) % len]);
    if (ok)
      return r;
  }
  g_debug("marching cubes: no interior fan for a loop of %d edges", len);
  return 0;
}

/* On each face, walking its corners counter-clockwise about the outward normal, the piece of
 * iso-line runs from an entering crossing (outside -> inside) to the next leaving crossing:
 * the inside region then lies to the left of the piece seen from outside the surface, which
 * makes the chained loops counter-clockwise about the outward surface normal. Pairing with
 * the *next* leaving crossing isolates each inside corner on an ambiguous face. */
static void build_case(int ci, gint8 *row)
{
  int next[12];
  memset(next, -1, sizeof next);
  for (int f = 0; f < 6; f++) {
    int q[4], in[4];
    face_corners(f / 2, f % 2, q);
    for (int k = 0; k < 4; k++)
      in[k] = ci >> q[k] & 1;
    for (int k = 0; k < 4; k++) {
      if (in[k] || !in[(k + 1) % 4])
        continue; /* not an entering crossing */
      for (int m = 1; m < 4; m++) {
        int k0 = (k + m) % 4, k1 = (k + m + 1) % 4;
        if (in[k0] && !in[k1]) {
          next[edge_between(q[k], q[(k + 1) % 4])] = edge_between(q[k0], q[k1]);
          break;
        }
      }
    }
  }
  int n = 0;
  gboolean done[12] = {FALSE};
  for (int start = 0; start < 12; start++) {
    if (next[start] < 0 || done[start])
      continue;
    int loop[12], len = 0;
    for (int e = start; !done[e]; e = next[e]) {
      done[e] = TRUE;
      loop[len++] = e;
    }
    int r = fan_start(loop, len);
    for (int t = 1; t + 1 < len; t++) {
      g_assert(n + 3 < NW_MC_TABLE_STRIDE);
      row[n++] = (gint8)loop[r];
      row[n++] = (gint8)loop[(r + t) % len];
      row[n++] = (gint8)loop[(r + t + 1) % len];
    }
  }
  for (; n < NW_MC_TABLE_STRIDE; n++)
    row[n] = -1;
}

const gint8 *nw_mc_triangle_table(void)
{
  static gsize built = 0;
  if (g_once_init_enter(&built)) {
    build_edges();
    for (int ci = 0; ci < 256; ci++)
      build_case(ci, tri_table[ci]);
    g_once_init_leave(&built, 1);
  }
  return &tri_table[0][0];
}

void nw_mc_edge(int e, int *corner, int *axis)
{
  nw_mc_triangle_table();
  g_return_if_fail(e >= 0 && e < 12);
  *corner = edge_corner[e];
  *axis = edge_axis[e];
}

/* ---- extraction ------------------------------------------------------------------------ */

typedef struct {
  const NwVolume *v;
  float iso;
  guint8 *in;                 /* per voxel: 1 when inside (value >= iso), same layout as v->data */
  double inv_t[9];            /* inverse-transpose of the affine's 3x3: voxel gradient -> world */
  GArray *vertices, *normals; /* floats, 3 per vertex */
  GArray *triangles;          /* guint32, 3 per triangle */
  guint32 *slice[2];          /* nx*ny*3 edge -> vertex tables for slices k and k+1 */
} Mc;

static inline gboolean inside(const Mc *mc, size_t idx)
{
  return mc->in[idx];
}

static void classify(Mc *mc)
{
  size_t n = nw_volume_n_voxels(mc->v);
  mc->in = g_new(guint8, n);
  for (size_t i = 0; i < n; i++)
    mc->in[i] = mc->v->data[i] >= mc->iso; /* NaN compares false: outside */
}

/* Central difference along axis a at voxel (i,j,k); one-sided at the border. */
static double gradient_axis(const NwVolume *v, const int p[3], int a)
{
  int n[3] = {v->nx, v->ny, v->nz};
  int lo[3] = {p[0], p[1], p[2]}, hi[3] = {p[0], p[1], p[2]};
  lo[a] = MAX(p[a] - 1, 0);
  hi[a] = MIN(p[a] + 1, n[a] - 1);
  if (hi[a] == lo[a])
    return 0.0;
  double fl = v->data[nw_volume_index(v, lo[0], lo[1], lo[2])];
  double fh = v->data[nw_volume_index(v, hi[0], hi[1], hi[2])];
  return (fh - fl) / (hi[a] - lo[a]);
}

static void add_vertex(Mc *mc, const int p[3], int a)
{
  const NwVolume *v = mc->v;
  int q[3] = {p[0], p[1], p[2]};
  q[a]++;
  double f0 = v->data[nw_volume_index(v, p[0], p[1], p[2])];
  double f1 = v->data[nw_volume_index(v, q[0], q[1], q[2])];
  double t = (mc->iso - f0) / (f1 - f0);
  if (!isfinite(t))
    t = 0.5; /* a NaN end: no meaningful crossing, take the middle */
  t = CLAMP(t, 0.0, 1.0);
  double ijk[3] = {p[0], p[1], p[2]}, ras[3];
  ijk[a] += t;
  nw_volume_voxel_to_world(v, ijk, ras);
  float xyz[3] = {(float)ras[0], (float)ras[1], (float)ras[2]};
  g_array_append_vals(mc->vertices, xyz, 3);

  double g[3], n[3], len = 0.0;
  for (int d = 0; d < 3; d++)
    g[d] = (1.0 - t) * gradient_axis(v, p, d) + t * gradient_axis(v, q, d);
  for (int r = 0; r < 3; r++) {
    n[r] = -(mc->inv_t[r * 3] * g[0] + mc->inv_t[r * 3 + 1] * g[1] + mc->inv_t[r * 3 + 2] * g[2]);
    len += n[r] * n[r];
  }
  len = sqrt(len);
  float nf[3] = {0, 0, 0}; /* zero: filled from the faces afterwards */
  if (isfinite(len) && len > 1e-30)
    for (int d = 0; d < 3; d++)
      nf[d] = (float)(n[d] / len);
  g_array_append_vals(mc->normals, nf, 3);
}

/* Number the crossed edges whose lower end lies in slice k, in increasing edge name. */
static gboolean fill_slice(Mc *mc, int k, guint32 *table, GError **error)
{
  const NwVolume *v = mc->v;
  const int n[3] = {v->nx, v->ny, v->nz};
  const size_t stride[3] = {1, (size_t)v->nx, (size_t)v->nx * v->ny};
  for (int j = 0; j < v->ny; j++)
    for (int i = 0; i < v->nx; i++) {
      const int p[3] = {i, j, k};
      size_t at = nw_volume_index(v, i, j, k);
      guint32 *slot = table + ((size_t)j * v->nx + i) * 3;
      for (int a = 0; a < 3; a++) {
        slot[a] = G_MAXUINT32;
        if (p[a] + 1 >= n[a] || inside(mc, at + stride[a]) == inside(mc, at))
          continue;
        if (mc->vertices->len / 3 >= G_MAXINT32 / 3) {
          g_set_error(error, NW_ERROR, NW_ERROR_NOMEM, "iso-surface too large (over %d vertices)",
                      G_MAXINT32 / 3);
          return FALSE;
        }
        slot[a] = mc->vertices->len / 3;
        add_vertex(mc, p, a);
      }
    }
  return TRUE;
}

/* Emit the triangles of the cubes in layer k (between slices k and k+1). */
static void march_layer(Mc *mc, int k, const gint8 *table)
{
  const NwVolume *v = mc->v;
  for (int j = 0; j + 1 < v->ny; j++)
    for (int i = 0; i + 1 < v->nx; i++) {
      size_t at0 = nw_volume_index(v, i, j, k), sx = 1, sy = (size_t)v->nx,
             sz = (size_t)v->nx * v->ny;
      int ci = 0;
      for (int c = 0; c < 8; c++)
        ci |= inside(mc, at0 + (c & 1) * sx + (c >> 1 & 1) * sy + (c >> 2 & 1) * sz) << c;
      const gint8 *row = table + ci * NW_MC_TABLE_STRIDE;
      for (int m = 0; row[m] >= 0; m++) {
        int c = edge_corner[row[m]], a = edge_axis[row[m]];
        const guint32 *slice = mc->slice[c >> 2 & 1];
        size_t at = ((size_t)(j + (c >> 1 & 1)) * v->nx + (i + (c & 1))) * 3 + a;
        g_array_append_val(mc->triangles, slice[at]);
      }
    }
}

double nw_mc_normal_matrix(const double m[16], double inv_t[9])
{
  double a[9], inv[9];
  nw_mat3_from_affine(m, a);
  const double det = nw_mat3_inverse(a, inv);
  for (int r = 0; r < 3; r++) /* the transpose of the inverse */
    for (int c = 0; c < 3; c++)
      inv_t[r * 3 + c] = inv[c * 3 + r];
  return det;
}

static NwSurface *finish(Mc *mc, double det, GError **error)
{
  int nv = (int)(mc->vertices->len / 3), nt = (int)(mc->triangles->len / 3);
  NwSurface *s = nw_surface_new(nv, nt, error);
  if (s == NULL)
    return NULL;
  if (nv == 0) /* nothing crosses the iso-value */
    return s;
  memcpy(s->vertices, mc->vertices->data, (size_t)nv * 3 * sizeof(float));
  memcpy(s->triangles, mc->triangles->data, (size_t)nt * 3 * sizeof(guint32));
  if (det < 0) /* mirroring affine: keep counter-clockwise from outside in world space */
    for (int t = 0; t < nt; t++) {
      guint32 tmp = s->triangles[t * 3 + 1];
      s->triangles[t * 3 + 1] = s->triangles[t * 3 + 2];
      s->triangles[t * 3 + 2] = tmp;
    }
  const float *gn = (const float *)mc->normals->data;
  gboolean any_zero = FALSE;
  for (int i = 0; i < nv && !any_zero; i++)
    any_zero = gn[i * 3] == 0 && gn[i * 3 + 1] == 0 && gn[i * 3 + 2] == 0;
  if (any_zero) /* flat spots (plateaus at iso): take those from the faces */
    nw_surface_compute_normals(s);
  else
    s->normals = g_new(float, (size_t)nv * 3 + 1);
  for (int i = 0; i < nv; i++)
    if (gn[i * 3] != 0 || gn[i * 3 + 1] != 0 || gn[i * 3 + 2] != 0)
      memcpy(s->normals + (size_t)i * 3, gn + (size_t)i * 3, 3 * sizeof(float));
  return s;
}

NwSurface *nw_marching_cubes(const NwVolume *v, float iso, GError **error)
{
  if (v->nc != 1) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "marching cubes needs a scalar volume, got %d components", v->nc);
    return NULL;
  }
  if (!isfinite(iso)) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "iso-value %g is not finite", iso);
    return NULL;
  }
  const gint8 *table = nw_mc_triangle_table();
  Mc mc = {.v = v, .iso = iso};
  double det = nw_mc_normal_matrix(v->vox_to_ras, mc.inv_t);
  mc.vertices = g_array_new(FALSE, FALSE, sizeof(float));
  mc.normals = g_array_new(FALSE, FALSE, sizeof(float));
  mc.triangles = g_array_new(FALSE, FALSE, sizeof(guint32));
  size_t slice_len = (size_t)v->nx * v->ny * 3;
  mc.slice[0] = g_new(guint32, slice_len);
  mc.slice[1] = g_new(guint32, slice_len);
  classify(&mc);
  gboolean ok = fill_slice(&mc, 0, mc.slice[0], error);
  for (int k = 0; ok && k + 1 < v->nz; k++) {
    ok = fill_slice(&mc, k + 1, mc.slice[1], error);
    if (!ok)
      break;
    march_layer(&mc, k, table);
    if (mc.triangles->len / 3 >= G_MAXINT32 / 3) {
      g_set_error(error, NW_ERROR, NW_ERROR_NOMEM, "iso-surface too large (over %d triangles)",
                  G_MAXINT32 / 3);
      ok = FALSE;
    }
    guint32 *tmp = mc.slice[0];
    mc.slice[0] = mc.slice[1];
    mc.slice[1] = tmp;
  }
  NwSurface *s = ok ? finish(&mc, det, error) : NULL;
  g_free(mc.slice[0]);
  g_free(mc.slice[1]);
  g_free(mc.in);
  g_array_unref(mc.vertices);
  g_array_unref(mc.normals);
  g_array_unref(mc.triangles);
  return s;
}
