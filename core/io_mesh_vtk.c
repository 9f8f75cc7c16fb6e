/* io_mesh_vtk.c — VTK legacy POLYDATA: ASCII and BINARY (big-endian), classic cell lists and
 * VTK 5.1 OFFSETS/CONNECTIVITY, POINT_DATA SCALARS as per-vertex values; written BINARY.
 * Any thread. */
#include <stdio.h>
#include <string.h>

#include "io_mesh_private.h"

typedef struct {
  Cursor *c;
  gboolean binary;
} Vtk;

/* One number of the given VTK type: ASCII text or big-endian binary. */
static gboolean vtk_value(Vtk *k, gboolean is_double, gboolean is_int, double *out, GError **error)
{
  if (!k->binary)
    return mesh_read_ascii(k->c, out, is_int ? "an integer" : "a number", error);
  gsize size = is_double ? 8 : 4;
  if (mesh_left(k->c) < size)
    return mesh_fail(error, k->c, "truncated binary data");
  if (is_double) {
    guint64 hi = mesh_be32(k->c), lo = mesh_be32(k->c), u = hi << 32 | lo;
    memcpy(out, &u, 8);
  } else {
    guint32 u = mesh_be32(k->c);
    *out = is_int ? (double)(gint32)u : (double)mesh_bits_to_float(u);
  }
  return TRUE;
}

/* Binary data begins after the newline that ends the keyword line, which next_line ate. */
static gboolean vtk_points(Vtk *k, const char *line, Builder *b, GError **error)
{
  gint64 n = 0;
  char type[32] = "";
  if (sscanf(line, "POINTS %" G_GINT64_FORMAT " %31s", &n, type) != 2)
    return mesh_fail(error, k->c, "bad line \"%s\"", line);
  gboolean dbl = g_ascii_strcasecmp(type, "double") == 0;
  if (!dbl && g_ascii_strcasecmp(type, "float") != 0)
    return mesh_fail(error, k->c, "unsupported POINTS type \"%s\" (float or double)", type);
  if (!mesh_need(k->c, n, k->binary ? (dbl ? 24 : 12) : 3, "points", error))
    return FALSE;
  g_array_set_size(b->vertices, (guint)n * 3);
  float *v = (float *)b->vertices->data;
  for (gsize i = 0; i < (gsize)n * 3; i++) {
    double x;
    if (!vtk_value(k, dbl, FALSE, &x, error))
      return FALSE;
    v[i] = (float)x;
  }
  return TRUE;
}

/* POLYGONS / TRIANGLE_STRIPS / VERTICES / LINES n size, then `size` ints: (k, i0..ik-1)... */
static gboolean vtk_cells(Vtk *k, const char *line, Builder *b, GError **error)
{
  char kind[32] = "";
  gint64 n = 0, size = 0;
  if (sscanf(line, "%31s %" G_GINT64_FORMAT " %" G_GINT64_FORMAT, kind, &n, &size) != 3)
    return mesh_fail(error, k->c, "bad line \"%s\"", line);
  if (!mesh_need(k->c, size, k->binary ? 4 : 1, "cell list integers", error))
    return FALSE;
  if (n > size)
    return mesh_fail(error, k->c, "%s: %" G_GINT64_FORMAT " cells in %" G_GINT64_FORMAT " integers",
                kind, n, size);
  gboolean strip = strcmp(kind, "TRIANGLE_STRIPS") == 0;
  gboolean keep = strip || strcmp(kind, "POLYGONS") == 0;
  g_autofree guint32 *ids = g_new(guint32, (gsize)size + 1);
  gint64 used = 0;
  for (gint64 cell = 0; cell < n; cell++) {
    double d;
    if (!vtk_value(k, FALSE, TRUE, &d, error))
      return FALSE;
    if (!mesh_whole(d, (double)(size - used - 1)) || d < 1)
      return mesh_fail(error, k->c, "%s cell %" G_GINT64_FORMAT " has a bad vertex count %g", kind,
                       cell, d);
    gint64 m = (gint64)d;
    used += 1 + m;
    for (gint64 i = 0; i < m; i++) {
      if (!vtk_value(k, FALSE, TRUE, &d, error) ||
          !mesh_vertex_index(k->c, d, kind, &ids[i], error))
        return FALSE;
    }
    if (keep && strip)
      mesh_add_strip(b, ids, (gsize)m);
    else if (keep)
      mesh_add_polygon(b, ids, (gsize)m);
  }
  if (used != size)
    return mesh_fail(error, k->c,
                "%s: size %" G_GINT64_FORMAT " does not match the %" G_GINT64_FORMAT
                " integers of its cells",
                kind, size, used);
  return TRUE;
}

/* n integers of a VTK 5.1 array type (vtktypeint64 or vtktypeint32). */
static gboolean vtk_ints(Vtk *k, const char *type, gint64 n, gint64 *out, GError **error)
{
  gboolean i64 = strcmp(type, "vtktypeint64") == 0;
  if (!i64 && strcmp(type, "vtktypeint32") != 0)
    return mesh_fail(error, k->c, "unsupported VTK cell array type \"%s\"", type);
  if (!mesh_need(k->c, n, k->binary ? (i64 ? 8 : 4) : 1, "cell array integers", error))
    return FALSE;
  for (gint64 i = 0; i < n; i++) {
    double d;
    if (k->binary && i64) {
      guint64 hi = mesh_be32(k->c), lo = mesh_be32(k->c);
      out[i] = (gint64)(hi << 32 | lo);
      continue;
    }
    if (!vtk_value(k, FALSE, TRUE, &d, error))
      return FALSE;
    if (!mesh_whole(d, (double)G_MAXINT32)) /* offsets and indices: 0..2^31-1 */
      return mesh_fail(error, k->c, "bad cell array integer %g", d);
    out[i] = (gint64)d;
  }
  return TRUE;
}

/* VTK 5.1 cells: "KIND n_offsets n_connectivity", then "OFFSETS type" with n_offsets
 * offsets (0 first, n_connectivity last), then "CONNECTIVITY type" with the indices. */
static gboolean vtk_cells_51(Vtk *k, const char *line, Builder *b, GError **error)
{
  char kind[32] = "", type[32] = "";
  gint64 n_off = 0, n_conn = 0;
  if (sscanf(line, "%31s %" G_GINT64_FORMAT " %" G_GINT64_FORMAT, kind, &n_off, &n_conn) != 3 ||
      n_off < 1)
    return mesh_fail(error, k->c, "bad line \"%s\"", line);
  g_autofree char *l1 = mesh_next_content_line(k->c);
  if (l1 == NULL || sscanf(l1, "OFFSETS %31s", type) != 1)
    return mesh_fail(error, k->c, "%s: OFFSETS expected", kind);
  if (!mesh_need(k->c, n_off, k->binary ? 4 : 1, "offsets", error))
    return FALSE;
  g_autofree gint64 *off = g_new(gint64, n_off);
  if (!vtk_ints(k, type, n_off, off, error))
    return FALSE;
  g_autofree char *l2 = mesh_next_content_line(k->c);
  if (l2 == NULL || sscanf(l2, "CONNECTIVITY %31s", type) != 1)
    return mesh_fail(error, k->c, "%s: CONNECTIVITY expected", kind);
  if (!mesh_need(k->c, n_conn, k->binary ? 4 : 1, "connectivity", error))
    return FALSE;
  g_autofree gint64 *conn = g_new(gint64, n_conn + 1);
  if (!vtk_ints(k, type, n_conn, conn, error))
    return FALSE;
  g_autofree guint32 *ids = g_new(guint32, n_conn + 1);
  for (gint64 i = 0; i < n_conn; i++)
    ids[i] = conn[i] < 0 || conn[i] > G_MAXUINT32 ? G_MAXUINT32 : (guint32)conn[i];
  if (off[0] != 0 || off[n_off - 1] != n_conn)
    return mesh_fail(error, k->c,
                "%s: offsets run from %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT
                ", not 0 to %" G_GINT64_FORMAT,
                kind, off[0], off[n_off - 1], n_conn);
  gboolean strip = strcmp(kind, "TRIANGLE_STRIPS") == 0;
  gboolean keep = strip || strcmp(kind, "POLYGONS") == 0;
  for (gint64 c = 0; c + 1 < n_off; c++) {
    if (off[c + 1] < off[c] || off[c + 1] > n_conn)
      return mesh_fail(error, k->c,
                  "%s: offset %" G_GINT64_FORMAT " of cell %" G_GINT64_FORMAT
                  " is out of order or past the %" G_GINT64_FORMAT " indices",
                  kind, off[c + 1], c, n_conn);
    if (keep && strip)
      mesh_add_strip(b, ids + off[c], (gsize)(off[c + 1] - off[c]));
    else if (keep)
      mesh_add_polygon(b, ids + off[c], (gsize)(off[c + 1] - off[c]));
  }
  return TRUE;
}

/* POINT_DATA n, then SCALARS name type [ncomp], LOOKUP_TABLE name, n * ncomp values; only
 * the first component is kept. Other attributes end the reading (geometry is complete). */
static gboolean vtk_point_data(Vtk *k, const char *line, Builder *b, GError **error)
{
  gint64 n = 0;
  if (sscanf(line, "POINT_DATA %" G_GINT64_FORMAT, &n) != 1)
    return mesh_fail(error, k->c, "bad line \"%s\"", line);
  g_autofree char *scal = mesh_next_content_line(k->c);
  char name[256] = "", type[32] = "";
  int ncomp = 1;
  if (scal == NULL || sscanf(scal, "SCALARS %255s %31s %d", name, type, &ncomp) < 2)
    return TRUE;
  gboolean dbl = g_ascii_strcasecmp(type, "double") == 0;
  if (!dbl && g_ascii_strcasecmp(type, "float") != 0)
    return TRUE; /* integer scalars: not worth a display colour map; ignored */
  if (ncomp < 1 || ncomp > 4)
    return mesh_fail(error, k->c, "SCALARS with %d components", ncomp);
  g_autofree char *lut = mesh_next_content_line(k->c);
  if (lut == NULL || !g_str_has_prefix(lut, "LOOKUP_TABLE"))
    return mesh_fail(error, k->c, "SCALARS without LOOKUP_TABLE");
  if (n != (gint64)(b->vertices->len / 3))
    return mesh_fail(error, k->c, "POINT_DATA %" G_GINT64_FORMAT " for %u points", n,
                b->vertices->len / 3);
  if (!mesh_need(k->c, n * ncomp, k->binary ? (dbl ? 8 : 4) : 1, "scalars", error))
    return FALSE;
  b->scalars = g_array_sized_new(FALSE, FALSE, sizeof(float), (guint)n);
  for (gint64 i = 0; i < n * ncomp; i++) {
    double x;
    if (!vtk_value(k, dbl, FALSE, &x, error))
      return FALSE;
    if (i % ncomp == 0) {
      float f = (float)x;
      g_array_append_val(b->scalars, f);
    }
  }
  return TRUE;
}

NwSurface *nw_mesh_read_vtk(Cursor *c, GError **error)
{
  g_autofree char *version = mesh_next_line(c), *title = mesh_next_line(c);
  g_autofree char *mode = mesh_next_content_line(c), *dataset = mesh_next_content_line(c);
  if (mode == NULL || dataset == NULL)
    return mesh_fail(error, c, "truncated VTK header"), NULL;
  Vtk k = {c, g_ascii_strcasecmp(mode, "BINARY") == 0};
  if (!k.binary && g_ascii_strcasecmp(mode, "ASCII") != 0)
    return mesh_fail(error, c, "VTK data mode \"%s\" is neither ASCII nor BINARY", mode), NULL;
  if (!g_str_has_prefix(dataset, "DATASET") || strstr(dataset, "POLYDATA") == NULL)
    return mesh_fail(error, c, "unsupported VTK \"%s\": only DATASET POLYDATA", dataset), NULL;
  Builder b;
  mesh_builder_init(&b);
  gboolean ok = TRUE, points = FALSE;
  char *line;
  while (ok && (line = mesh_next_content_line(c)) != NULL) {
    if (g_str_has_prefix(line, "POINTS")) {
      ok = vtk_points(&k, line, &b, error);
      points = TRUE;
    } else if (g_str_has_prefix(line, "POLYGONS") || g_str_has_prefix(line, "TRIANGLE_STRIPS") ||
               g_str_has_prefix(line, "VERTICES") || g_str_has_prefix(line, "LINES")) {
      Cursor peek = *c; /* look ahead without consuming: binary data may follow */
      mesh_skip_space(&peek);
      if (mesh_left(&peek) >= 7 && strncmp((const char *)peek.p, "OFFSETS", 7) == 0)
        ok = vtk_cells_51(&k, line, &b, error);
      else
        ok = vtk_cells(&k, line, &b, error);
    } else if (g_str_has_prefix(line, "POINT_DATA")) {
      ok = vtk_point_data(&k, line, &b, error);
      g_free(line);
      break;
    } else if (g_str_has_prefix(line, "CELL_DATA") || g_str_has_prefix(line, "METADATA") ||
               g_str_has_prefix(line, "FIELD")) {
      g_free(line);
      break; /* attributes we do not use: the geometry is complete */
    } else {
      ok = mesh_fail(error, c, "unexpected VTK line \"%.40s\"", line);
    }
    g_free(line);
  }
  if (ok && !points)
    ok = mesh_fail(error, c, "no POINTS");
  if (!ok) {
    mesh_builder_clear(&b);
    return NULL;
  }
  return mesh_builder_finish(&b, c->name, error);
}

gboolean nw_mesh_write_vtk(const char *tmp_path, gpointer data, GError **error)
{
  const NwSurface *s = data;
  FILE *f = mesh_create(tmp_path, error);
  if (f == NULL)
    return FALSE;
  fprintf(f,
          "# vtk DataFile Version 3.0\nneurowarp surface, RAS mm\nBINARY\n"
          "DATASET POLYDATA\nPOINTS %d float\n",
          s->n_vertices);
  for (gsize i = 0; i < (gsize)s->n_vertices * 3; i++)
    mesh_put_be_float(f, s->vertices[i]);
  fprintf(f, "\nPOLYGONS %d %d\n", s->n_triangles, s->n_triangles * 4);
  for (gsize t = 0; t < (gsize)s->n_triangles; t++) {
    mesh_put_be32(f, 3);
    for (int d = 0; d < 3; d++)
      mesh_put_be32(f, s->triangles[t * 3 + d]);
  }
  fputc('\n', f);
  if (s->scalars) {
    fprintf(f, "POINT_DATA %d\nSCALARS scalars float 1\nLOOKUP_TABLE default\n", s->n_vertices);
    for (gsize i = 0; i < (gsize)s->n_vertices; i++)
      mesh_put_be_float(f, s->scalars[i]);
    fputc('\n', f);
  }
  return mesh_close_checked(f, error);
}