/* io_mesh.c — mesh file readers and writers (see io_mesh.h for formats and conventions).
 * Any thread; giftiio calls under one lock. Readers load the file into memory and parse it
 * through a bounds-checked cursor, so truncation is an error at the first missing byte. */
#include "io_mesh.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "atomic_file.h"
#include "nw_error.h"

#ifdef NW_HAVE_GIFTI
#include <gifti_io.h>
#endif

/* ---- cursor over a file in memory -------------------------------------------------------- */

typedef struct {
  const char *name; /* the user's path, for messages */
  const guint8 *p, *end;
} Cursor;

static gboolean fail(GError **error, const Cursor *c, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static gboolean fail(GError **error, const Cursor *c, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: %s", c->name, msg);
  return FALSE;
}

static gsize left(const Cursor *c)
{
  return (gsize)(c->end - c->p);
}

/* n items of `size` bytes must still be in the file: refuses absurd counts before any
 * allocation. */
static gboolean need(Cursor *c, gint64 n, gsize size, const char *what, GError **error)
{
  if (n < 0 || n > G_MAXINT32 / 3)
    return fail(error, c, "invalid %s count %" G_GINT64_FORMAT, what, n);
  if ((guint64)n * size > left(c))
    return fail(error, c,
                "truncated: %" G_GINT64_FORMAT " %s need %" G_GUINT64_FORMAT " bytes, %zu left", n,
                what, (guint64)n * size, left(c));
  return TRUE;
}

static guint32 be32(Cursor *c)
{
  guint32 v = (guint32)c->p[0] << 24 | (guint32)c->p[1] << 16 | (guint32)c->p[2] << 8 | c->p[3];
  c->p += 4;
  return v;
}

static float bits_to_float(guint32 u)
{
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static void skip_space(Cursor *c)
{
  while (c->p < c->end && g_ascii_isspace(*c->p))
    c->p++;
}

/* Next line (without its "\r\n"), as a new string; NULL at the end of the file. */
static char *next_line(Cursor *c)
{
  if (c->p >= c->end)
    return NULL;
  const guint8 *nl = memchr(c->p, '\n', left(c));
  const guint8 *stop = nl ? nl : c->end;
  char *line = g_strndup((const char *)c->p, (gsize)(stop - c->p));
  c->p = nl ? nl + 1 : c->end;
  g_strchomp(line);
  return line;
}

/* Next non-blank line, leading blanks removed; NULL at the end. */
static char *next_content_line(Cursor *c)
{
  skip_space(c);
  return next_line(c);
}

/* An ASCII number: the buffer is NUL-terminated (g_file_get_contents), so strtod stops. */
static gboolean read_ascii(Cursor *c, double *out, const char *what, GError **error)
{
  skip_space(c);
  if (c->p >= c->end)
    return fail(error, c, "truncated: expected %s", what);
  char *stop = NULL;
  *out = g_ascii_strtod((const char *)c->p, &stop);
  if (stop == (const char *)c->p || (stop < (const char *)c->end && !g_ascii_isspace(*stop)))
    return fail(error, c, "expected %s, found \"%.12s\"", what, (const char *)c->p);
  c->p = (const guint8 *)stop;
  return TRUE;
}

static gboolean load(const char *path, char **contents, Cursor *c, GError **error)
{
  gsize len = 0;
  GError *local = NULL;
  if (!g_file_get_contents(path, contents, &len, &local)) {
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "%s: cannot read: %s", path, local->message);
    g_error_free(local);
    return FALSE;
  }
  c->name = path;
  c->p = (const guint8 *)*contents;
  c->end = c->p + len;
  return TRUE;
}

/* ---- building the surface ----------------------------------------------------------------- */

typedef struct {
  GArray *vertices;  /* float, 3 per vertex */
  GArray *triangles; /* guint32, 3 per triangle */
  GArray *scalars;   /* float per vertex, or NULL */
} Builder;

static void builder_init(Builder *b)
{
  b->vertices = g_array_new(FALSE, FALSE, sizeof(float));
  b->triangles = g_array_new(FALSE, FALSE, sizeof(guint32));
  b->scalars = NULL;
}

static void builder_clear(Builder *b)
{
  g_array_unref(b->vertices);
  g_array_unref(b->triangles);
  if (b->scalars)
    g_array_unref(b->scalars);
}

/* Polygon v0..v(n-1) as the fan (v0, vi, vi+1). */
static void add_polygon(Builder *b, const guint32 *v, gsize n)
{
  for (gsize i = 1; i + 1 < n; i++) {
    guint32 t[3] = {v[0], v[i], v[i + 1]};
    g_array_append_vals(b->triangles, t, 3);
  }
}

/* Strip v0..v(n-1): triangle i is (vi, vi+1, vi+2), odd ones reversed to keep the winding;
 * the degenerate triangles strips use as joints are dropped. */
static void add_strip(Builder *b, const guint32 *v, gsize n)
{
  for (gsize i = 0; i + 2 < n; i++) {
    guint32 t[3] = {v[i], v[i + 1], v[i + 2]};
    if (i & 1) {
      t[0] = v[i + 1];
      t[1] = v[i];
    }
    if (t[0] != t[1] && t[1] != t[2] && t[0] != t[2])
      g_array_append_vals(b->triangles, t, 3);
  }
}

static NwSurface *builder_finish(Builder *b, const char *name, GError **error)
{
  gsize nv = b->vertices->len / 3, nt = b->triangles->len / 3;
  NwSurface *s = NULL;
  if (nv > G_MAXINT32 / 3 || nt > G_MAXINT32 / 3)
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "%s: mesh too large (%zu vertices, %zu "
                "triangles)",
                name, nv, nt);
  else if (nt == 0)
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: no triangles", name);
  else
    s = nw_surface_new((int)nv, (int)nt, error);
  if (s != NULL) {
    if (nv > 0) /* triangles without vertices fail validation below */
      memcpy(s->vertices, b->vertices->data, nv * 3 * sizeof(float));
    memcpy(s->triangles, b->triangles->data, nt * 3 * sizeof(guint32));
    if (b->scalars != NULL && b->scalars->len == nv)
      s->scalars = g_memdup2(b->scalars->data, nv * sizeof(float));
    if (!nw_surface_validate(s, name, error))
      g_clear_pointer(&s, nw_surface_free);
  }
  builder_clear(b);
  return s;
}

/* ---- FreeSurfer ----------------------------------------------------------------------------- */

/* After the triangles FreeSurfer may append the volume geometry: tag 20 (or 2 0 20), then
 * text lines "key = value" among them "valid = 1" and "cras = x y z", the scanner RAS of
 * the conformed volume's centre. tkregister RAS + c_ras = scanner RAS. */
static gboolean freesurfer_c_ras(Cursor *c, double c_ras[3])
{
  if (left(c) < 4)
    return FALSE;
  guint32 tag = be32(c);
  if (tag == 2 && left(c) >= 8) {
    guint32 a = be32(c), b = be32(c);
    if (a != 0 || b != 20)
      return FALSE;
  } else if (tag != 20) {
    return FALSE;
  }
  gboolean valid = FALSE, have = FALSE;
  g_autofree char *line = NULL;
  while ((line = next_line(c)) != NULL) {
    char *eq = strchr(line, '=');
    if (eq != NULL) {
      *eq = '\0';
      g_strstrip(line);
      if (strcmp(line, "valid") == 0)
        valid = atoi(eq + 1) == 1;
      else if (strcmp(line, "cras") == 0)
        have = sscanf(eq + 1, "%lf %lf %lf", &c_ras[0], &c_ras[1], &c_ras[2]) == 3;
    }
    g_clear_pointer(&line, g_free);
  }
  return valid && have;
}

static NwSurface *read_freesurfer(Cursor *c, GError **error)
{
  c->p += 3; /* magic, checked by the caller */
  /* "created by <user> on <date>\n\n": two lines of free text */
  for (int k = 0; k < 2; k++) {
    const guint8 *nl = memchr(c->p, '\n', left(c));
    if (nl == NULL)
      return fail(error, c, "truncated: no end to the FreeSurfer header text"), NULL;
    c->p = nl + 1;
  }
  if (!need(c, 2, 4, "header words", error))
    return NULL;
  gint32 nv = (gint32)be32(c), nt = (gint32)be32(c);
  if (!need(c, nv, 12, "vertices", error))
    return NULL;
  if (!need(c, nt, 0, "triangles", error))
    return NULL;
  if ((guint64)nv * 12 + (guint64)nt * 12 > left(c))
    return fail(error, c,
                "truncated: %d vertices and %d triangles need %" G_GUINT64_FORMAT
                " bytes, %zu left",
                nv, nt, (guint64)nv * 12 + (guint64)nt * 12, left(c)),
           NULL;
  Builder b;
  builder_init(&b);
  g_array_set_size(b.vertices, (guint)nv * 3);
  g_array_set_size(b.triangles, (guint)nt * 3);
  float *v = (float *)b.vertices->data;
  for (gsize i = 0; i < (gsize)nv * 3; i++)
    v[i] = bits_to_float(be32(c));
  guint32 *t = (guint32 *)b.triangles->data;
  for (gsize i = 0; i < (gsize)nt * 3; i++)
    t[i] = be32(c);
  double c_ras[3];
  if (freesurfer_c_ras(c, c_ras))
    for (gsize i = 0; i < (gsize)nv * 3; i++)
      v[i] = (float)(v[i] + c_ras[i % 3]);
  return builder_finish(&b, c->name, error);
}

static float *read_freesurfer_curv(Cursor *c, int n_expected, GError **error)
{
  c->p += 3;
  if (!need(c, 3, 4, "header words", error))
    return NULL;
  gint32 nv = (gint32)be32(c);
  be32(c); /* face count: unused */
  gint32 per_vertex = (gint32)be32(c);
  if (per_vertex != 1)
    return fail(error, c, "%d values per vertex; only 1 is supported", per_vertex), NULL;
  if (nv != n_expected)
    return fail(error, c, "%d values for a mesh of %d vertices", nv, n_expected), NULL;
  if (!need(c, nv, 4, "values", error))
    return NULL;
  float *values = g_new(float, (gsize)nv + 1);
  for (gint32 i = 0; i < nv; i++)
    values[i] = bits_to_float(be32(c));
  return values;
}

/* ---- VTK legacy ----------------------------------------------------------------------------- */

typedef struct {
  Cursor *c;
  gboolean binary;
} Vtk;

/* One number of the given VTK type: ASCII text or big-endian binary. */
static gboolean vtk_value(Vtk *k, gboolean is_double, gboolean is_int, double *out, GError **error)
{
  if (!k->binary)
    return read_ascii(k->c, out, is_int ? "an integer" : "a number", error);
  gsize size = is_double ? 8 : 4;
  if (left(k->c) < size)
    return fail(error, k->c, "truncated binary data");
  if (is_double) {
    guint64 hi = be32(k->c), lo = be32(k->c), u = hi << 32 | lo;
    memcpy(out, &u, 8);
  } else {
    guint32 u = be32(k->c);
    *out = is_int ? (double)(gint32)u : (double)bits_to_float(u);
  }
  return TRUE;
}

/* Binary data begins after the newline that ends the keyword line, which next_line ate. */
static gboolean vtk_points(Vtk *k, const char *line, Builder *b, GError **error)
{
  gint64 n = 0;
  char type[32] = "";
  if (sscanf(line, "POINTS %" G_GINT64_FORMAT " %31s", &n, type) != 2)
    return fail(error, k->c, "bad line \"%s\"", line);
  gboolean dbl = g_ascii_strcasecmp(type, "double") == 0;
  if (!dbl && g_ascii_strcasecmp(type, "float") != 0)
    return fail(error, k->c, "unsupported POINTS type \"%s\" (float or double)", type);
  if (!need(k->c, n, k->binary ? (dbl ? 24 : 12) : 3, "points", error))
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
    return fail(error, k->c, "bad line \"%s\"", line);
  if (!need(k->c, size, k->binary ? 4 : 1, "cell list integers", error))
    return FALSE;
  if (n > size)
    return fail(error, k->c, "%s: %" G_GINT64_FORMAT " cells in %" G_GINT64_FORMAT " integers",
                kind, n, size);
  gboolean strip = strcmp(kind, "TRIANGLE_STRIPS") == 0;
  gboolean keep = strip || strcmp(kind, "POLYGONS") == 0;
  g_autofree guint32 *ids = g_new(guint32, (gsize)size + 1);
  gint64 used = 0;
  for (gint64 cell = 0; cell < n; cell++) {
    double d;
    if (!vtk_value(k, FALSE, TRUE, &d, error))
      return FALSE;
    gint64 m = (gint64)d;
    if (m < 1 || used + 1 + m > size)
      return fail(error, k->c,
                  "%s cell %" G_GINT64_FORMAT " has a bad vertex count %" G_GINT64_FORMAT, kind,
                  cell, m);
    used += 1 + m;
    for (gint64 i = 0; i < m; i++) {
      if (!vtk_value(k, FALSE, TRUE, &d, error))
        return FALSE;
      if (d < 0)
        return fail(error, k->c, "%s cell %" G_GINT64_FORMAT " has a negative index %g", kind, cell,
                    d);
      ids[i] = d > G_MAXUINT32 ? G_MAXUINT32 : (guint32)d;
    }
    if (keep && strip)
      add_strip(b, ids, (gsize)m);
    else if (keep)
      add_polygon(b, ids, (gsize)m);
  }
  if (used != size)
    return fail(error, k->c,
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
    return fail(error, k->c, "unsupported VTK cell array type \"%s\"", type);
  if (!need(k->c, n, k->binary ? (i64 ? 8 : 4) : 1, "cell array integers", error))
    return FALSE;
  for (gint64 i = 0; i < n; i++) {
    double d;
    if (k->binary && i64) {
      guint64 hi = be32(k->c), lo = be32(k->c);
      out[i] = (gint64)(hi << 32 | lo);
      continue;
    }
    if (!vtk_value(k, FALSE, TRUE, &d, error))
      return FALSE;
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
    return fail(error, k->c, "bad line \"%s\"", line);
  g_autofree char *l1 = next_content_line(k->c);
  if (l1 == NULL || sscanf(l1, "OFFSETS %31s", type) != 1)
    return fail(error, k->c, "%s: OFFSETS expected", kind);
  if (!need(k->c, n_off, k->binary ? 4 : 1, "offsets", error))
    return FALSE;
  g_autofree gint64 *off = g_new(gint64, n_off);
  if (!vtk_ints(k, type, n_off, off, error))
    return FALSE;
  g_autofree char *l2 = next_content_line(k->c);
  if (l2 == NULL || sscanf(l2, "CONNECTIVITY %31s", type) != 1)
    return fail(error, k->c, "%s: CONNECTIVITY expected", kind);
  if (!need(k->c, n_conn, k->binary ? 4 : 1, "connectivity", error))
    return FALSE;
  g_autofree gint64 *conn = g_new(gint64, n_conn + 1);
  if (!vtk_ints(k, type, n_conn, conn, error))
    return FALSE;
  g_autofree guint32 *ids = g_new(guint32, n_conn + 1);
  for (gint64 i = 0; i < n_conn; i++)
    ids[i] = conn[i] < 0 || conn[i] > G_MAXUINT32 ? G_MAXUINT32 : (guint32)conn[i];
  if (off[0] != 0 || off[n_off - 1] != n_conn)
    return fail(error, k->c,
                "%s: offsets run from %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT
                ", not 0 to %" G_GINT64_FORMAT,
                kind, off[0], off[n_off - 1], n_conn);
  gboolean strip = strcmp(kind, "TRIANGLE_STRIPS") == 0;
  gboolean keep = strip || strcmp(kind, "POLYGONS") == 0;
  for (gint64 c = 0; c + 1 < n_off; c++) {
    if (off[c + 1] < off[c] || off[c + 1] > n_conn)
      return fail(error, k->c,
                  "%s: offset %" G_GINT64_FORMAT " of cell %" G_GINT64_FORMAT
                  " is out of order or past the %" G_GINT64_FORMAT " indices",
                  kind, off[c + 1], c, n_conn);
    if (keep && strip)
      add_strip(b, ids + off[c], (gsize)(off[c + 1] - off[c]));
    else if (keep)
      add_polygon(b, ids + off[c], (gsize)(off[c + 1] - off[c]));
  }
  return TRUE;
}

/* POINT_DATA n, then SCALARS name type [ncomp], LOOKUP_TABLE name, n * ncomp values; only
 * the first component is kept. Other attributes end the reading (geometry is complete). */
static gboolean vtk_point_data(Vtk *k, const char *line, Builder *b, GError **error)
{
  gint64 n = 0;
  if (sscanf(line, "POINT_DATA %" G_GINT64_FORMAT, &n) != 1)
    return fail(error, k->c, "bad line \"%s\"", line);
  g_autofree char *scal = next_content_line(k->c);
  char name[256] = "", type[32] = "";
  int ncomp = 1;
  if (scal == NULL || sscanf(scal, "SCALARS %255s %31s %d", name, type, &ncomp) < 2)
    return TRUE;
  gboolean dbl = g_ascii_strcasecmp(type, "double") == 0;
  if (!dbl && g_ascii_strcasecmp(type, "float") != 0)
    return TRUE; /* integer scalars: not worth a display colour map; ignored */
  if (ncomp < 1 || ncomp > 4)
    return fail(error, k->c, "SCALARS with %d components", ncomp);
  g_autofree char *lut = next_content_line(k->c);
  if (lut == NULL || !g_str_has_prefix(lut, "LOOKUP_TABLE"))
    return fail(error, k->c, "SCALARS without LOOKUP_TABLE");
  if (n != (gint64)(b->vertices->len / 3))
    return fail(error, k->c, "POINT_DATA %" G_GINT64_FORMAT " for %u points", n,
                b->vertices->len / 3);
  if (!need(k->c, n * ncomp, k->binary ? (dbl ? 8 : 4) : 1, "scalars", error))
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

static NwSurface *read_vtk(Cursor *c, GError **error)
{
  g_autofree char *version = next_line(c), *title = next_line(c);
  g_autofree char *mode = next_content_line(c), *dataset = next_content_line(c);
  if (mode == NULL || dataset == NULL)
    return fail(error, c, "truncated VTK header"), NULL;
  Vtk k = {c, g_ascii_strcasecmp(mode, "BINARY") == 0};
  if (!k.binary && g_ascii_strcasecmp(mode, "ASCII") != 0)
    return fail(error, c, "VTK data mode \"%s\" is neither ASCII nor BINARY", mode), NULL;
  if (!g_str_has_prefix(dataset, "DATASET") || strstr(dataset, "POLYDATA") == NULL)
    return fail(error, c, "unsupported VTK \"%s\": only DATASET POLYDATA", dataset), NULL;
  Builder b;
  builder_init(&b);
  gboolean ok = TRUE, points = FALSE;
  char *line;
  while (ok && (line = next_content_line(c)) != NULL) {
    if (g_str_has_prefix(line, "POINTS")) {
      ok = vtk_points(&k, line, &b, error);
      points = TRUE;
    } else if (g_str_has_prefix(line, "POLYGONS") || g_str_has_prefix(line, "TRIANGLE_STRIPS") ||
               g_str_has_prefix(line, "VERTICES") || g_str_has_prefix(line, "LINES")) {
      Cursor peek = *c; /* look ahead without consuming: binary data may follow */
      skip_space(&peek);
      if (left(&peek) >= 7 && strncmp((const char *)peek.p, "OFFSETS", 7) == 0)
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
      ok = fail(error, c, "unexpected VTK line \"%.40s\"", line);
    }
    g_free(line);
  }
  if (ok && !points)
    ok = fail(error, c, "no POINTS");
  if (!ok) {
    builder_clear(&b);
    return NULL;
  }
  return builder_finish(&b, c->name, error);
}

/* ---- PLY ---------------------------------------------------------------------------------- */

enum { PLY_MAX_ELEMENTS = 16, PLY_MAX_PROPS = 32 };
static const struct {
  const char *name, *alias;
  int size;
} ply_types[] = {{"char", "int8", 1},     {"uchar", "uint8", 1},   {"short", "int16", 2},
                 {"ushort", "uint16", 2}, {"int", "int32", 4},     {"uint", "uint32", 4},
                 {"float", "float32", 4}, {"double", "float64", 8}};

typedef struct {
  char name[64];
  int type;       /* index into ply_types */
  int count_type; /* list length type, or -1 for a scalar property */
} PlyProp;

typedef struct {
  char name[64];
  gint64 count;
  int n_props;
  PlyProp props[PLY_MAX_PROPS];
} PlyElement;

typedef struct {
  Cursor *c;
  int format; /* 0 ascii, 1 binary little endian, 2 binary big endian */
  int n_elements;
  PlyElement elements[PLY_MAX_ELEMENTS];
} Ply;

static int ply_type(const char *name)
{
  for (int i = 0; i < (int)G_N_ELEMENTS(ply_types); i++)
    if (strcmp(name, ply_types[i].name) == 0 || strcmp(name, ply_types[i].alias) == 0)
      return i;
  return -1;
}

static gboolean ply_value(Ply *p, int type, double *out, GError **error)
{
  if (p->format == 0)
    return read_ascii(p->c, out, "a number", error);
  int size = ply_types[type].size;
  if (left(p->c) < (gsize)size)
    return fail(error, p->c, "truncated binary data");
  guint8 b[8];
  for (int i = 0; i < size; i++) /* to host (little-endian) byte order */
    b[i] = p->format == 1 ? p->c->p[i] : p->c->p[size - 1 - i];
  p->c->p += size;
  union {
    gint8 i8;
    guint8 u8;
    gint16 i16;
    guint16 u16;
    gint32 i32;
    guint32 u32;
    float f;
    double d;
  } u;
  memcpy(&u, b, (gsize)size);
#if G_BYTE_ORDER == G_BIG_ENDIAN
#error "PLY binary reading assumes a little-endian host"
#endif
  switch (type) {
  case 0:
    *out = u.i8;
    break;
  case 1:
    *out = u.u8;
    break;
  case 2:
    *out = u.i16;
    break;
  case 3:
    *out = u.u16;
    break;
  case 4:
    *out = u.i32;
    break;
  case 5:
    *out = u.u32;
    break;
  case 6:
    *out = u.f;
    break;
  default:
    *out = u.d;
    break;
  }
  return TRUE;
}

static gboolean ply_property_line(Ply *p, const char *line, GError **error)
{
  if (p->n_elements == 0)
    return fail(error, p->c, "PLY property before any element");
  PlyElement *e = &p->elements[p->n_elements - 1];
  if (e->n_props == PLY_MAX_PROPS)
    return fail(error, p->c, "PLY element \"%s\" has more than %d properties", e->name,
                PLY_MAX_PROPS);
  PlyProp *q = &e->props[e->n_props];
  char t1[32] = "", t2[32] = "";
  if (sscanf(line, "property list %31s %31s %63s", t1, t2, q->name) == 3) {
    q->count_type = ply_type(t1);
    q->type = ply_type(t2);
    if (q->count_type < 0 || q->count_type >= 6)
      return fail(error, p->c, "bad PLY list length type in \"%s\"", line);
  } else if (sscanf(line, "property %31s %63s", t1, q->name) == 2) {
    q->count_type = -1;
    q->type = ply_type(t1);
  } else {
    return fail(error, p->c, "bad PLY line \"%s\"", line);
  }
  if (q->type < 0)
    return fail(error, p->c, "unknown PLY type in \"%s\"", line);
  e->n_props++;
  return TRUE;
}

static gboolean ply_header(Ply *p, GError **error)
{
  g_autofree char *magic = next_line(p->c);
  for (;;) {
    g_autofree char *line = next_line(p->c);
    if (line == NULL)
      return fail(error, p->c, "truncated PLY header (no end_header)");
    char word[64] = "";
    gint64 count = 0;
    if (strcmp(line, "end_header") == 0)
      return TRUE;
    if (g_str_has_prefix(line, "format ")) {
      if (sscanf(line, "format %63s", word) != 1)
        return fail(error, p->c, "bad PLY line \"%s\"", line);
      p->format = strcmp(word, "ascii") == 0                  ? 0
                  : strcmp(word, "binary_little_endian") == 0 ? 1
                  : strcmp(word, "binary_big_endian") == 0    ? 2
                                                              : -1;
      if (p->format < 0)
        return fail(error, p->c, "unknown PLY format \"%s\"", word);
    } else if (g_str_has_prefix(line, "element ")) {
      if (p->n_elements == PLY_MAX_ELEMENTS)
        return fail(error, p->c, "more than %d PLY elements", PLY_MAX_ELEMENTS);
      PlyElement *e = &p->elements[p->n_elements];
      if (sscanf(line, "element %63s %" G_GINT64_FORMAT, e->name, &count) != 2 || count < 0 ||
          count > G_MAXINT32 / 3)
        return fail(error, p->c, "bad PLY line \"%s\"", line);
      e->count = count;
      e->n_props = 0;
      p->n_elements++;
    } else if (g_str_has_prefix(line, "property ")) {
      if (!ply_property_line(p, line, error))
        return FALSE;
    } /* comment, obj_info: ignored */
  }
}

static int ply_find(const PlyElement *e, const char *name)
{
  for (int i = 0; i < e->n_props; i++)
    if (strcmp(e->props[i].name, name) == 0)
      return i;
  return -1;
}

/* The scalar shown as a colour: the first plain vertex property that is not geometry,
 * normal, colour or texture coordinate. */
static int ply_scalar_property(const PlyElement *e)
{
  static const char *known[] = {"x",    "y",     "z", "nx", "ny", "nz", "red",       "green",
                                "blue", "alpha", "u", "v",  "s",  "t",  "texture_u", "texture_v"};
  for (int i = 0; i < e->n_props; i++) {
    gboolean is_known = e->props[i].count_type >= 0;
    for (gsize k = 0; k < G_N_ELEMENTS(known) && !is_known; k++)
      is_known = strcmp(e->props[i].name, known[k]) == 0;
    if (!is_known)
      return i;
  }
  return -1;
}

/* One element row: scalars into row[prop]; the `keep_list` list property into ids. */
static gboolean ply_row(Ply *p, const PlyElement *e, double *row, int keep_list, GArray *ids,
                        GError **error)
{
  for (int i = 0; i < e->n_props; i++) {
    const PlyProp *q = &e->props[i];
    if (q->count_type < 0) {
      if (!ply_value(p, q->type, &row[i], error))
        return FALSE;
      continue;
    }
    double m;
    if (!ply_value(p, q->count_type, &m, error))
      return FALSE;
    if (m < 0 || m > (double)left(p->c))
      return fail(error, p->c, "PLY list \"%s\" has a bad length %g", q->name, m);
    if (i == keep_list)
      g_array_set_size(ids, 0);
    for (gint64 k = 0; k < (gint64)m; k++) {
      double x;
      if (!ply_value(p, q->type, &x, error))
        return FALSE;
      if (i == keep_list) {
        if (x < 0 || x > G_MAXUINT32)
          return fail(error, p->c, "PLY face refers to vertex %g", x);
        guint32 id = (guint32)x;
        g_array_append_val(ids, id);
      }
    }
  }
  return TRUE;
}

static gboolean ply_element(Ply *p, const PlyElement *e, Builder *b, GError **error)
{
  gsize min_row = 0;
  for (int i = 0; i < e->n_props; i++)
    min_row +=
        (gsize)ply_types[e->props[i].count_type >= 0 ? e->props[i].count_type : e->props[i].type]
            .size;
  if (!need(p->c, e->count, p->format == 0 ? 1 : MAX(min_row, 1), e->name, error))
    return FALSE;
  gboolean is_vertex = strcmp(e->name, "vertex") == 0, is_face = strcmp(e->name, "face") == 0;
  int ix = ply_find(e, "x"), iy = ply_find(e, "y"), iz = ply_find(e, "z");
  int is = ply_scalar_property(e);
  int list = ply_find(e, "vertex_indices");
  if (list < 0)
    list = ply_find(e, "vertex_index");
  if (is_vertex && (ix < 0 || iy < 0 || iz < 0 || e->props[ix].count_type >= 0))
    return fail(error, p->c, "PLY vertex element without x, y, z");
  if (is_face && (list < 0 || e->props[list].count_type < 0))
    return fail(error, p->c, "PLY face element without a vertex_indices list");
  if (is_vertex && is >= 0)
    b->scalars = g_array_sized_new(FALSE, FALSE, sizeof(float), (guint)e->count);
  double row[PLY_MAX_PROPS];
  g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(guint32));
  for (gint64 r = 0; r < e->count; r++) {
    if (!ply_row(p, e, row, is_face ? list : -1, ids, error))
      return FALSE;
    if (is_vertex) {
      float xyz[3] = {(float)row[ix], (float)row[iy], (float)row[iz]};
      g_array_append_vals(b->vertices, xyz, 3);
      if (is >= 0) {
        float f = (float)row[is];
        g_array_append_val(b->scalars, f);
      }
    } else if (is_face) {
      add_polygon(b, (const guint32 *)ids->data, ids->len);
    }
  }
  return TRUE;
}

static NwSurface *read_ply(Cursor *c, GError **error)
{
  g_autofree Ply *p = g_new0(Ply, 1);
  p->c = c;
  p->format = -1;
  if (!ply_header(p, error))
    return NULL;
  if (p->format < 0)
    return fail(error, c, "PLY header without a format line"), NULL;
  Builder b;
  builder_init(&b);
  for (int i = 0; i < p->n_elements; i++)
    if (!ply_element(p, &p->elements[i], &b, error)) {
      builder_clear(&b);
      return NULL;
    }
  return builder_finish(&b, c->name, error);
}

/* ---- OBJ ---------------------------------------------------------------------------------- */

/* "i", "i/t", "i//n", "i/t/n": 1-based, negative counts back from the last vertex so far. */
static gboolean obj_index(Cursor *c, const char *tok, gsize n_vertices, int line_no, guint32 *out,
                          GError **error)
{
  char *stop = NULL;
  gint64 i = g_ascii_strtoll(tok, &stop, 10);
  if (stop == tok || (*stop != '\0' && *stop != '/'))
    return fail(error, c, "line %d: bad face vertex \"%s\"", line_no, tok);
  gint64 v = i > 0 ? i - 1 : (gint64)n_vertices + i;
  if (i == 0 || v < 0 || v > G_MAXINT32)
    return fail(error, c,
                "line %d: face vertex %" G_GINT64_FORMAT " out of range (%zu "
                "vertices so far)",
                line_no, i, n_vertices);
  *out = (guint32)v;
  return TRUE;
}

static gboolean obj_line(Cursor *c, char *line, int line_no, Builder *b, GArray *ids,
                         GError **error)
{
  if (line[0] == 'v' && g_ascii_isspace(line[1])) {
    float xyz[3];
    char *p = line + 1, *stop;
    for (int d = 0; d < 3; d++, p = stop) {
      xyz[d] = (float)g_ascii_strtod(p, &stop);
      if (stop == p)
        return fail(error, c, "line %d: vertex needs three coordinates", line_no);
    }
    g_array_append_vals(b->vertices, xyz, 3);
  } else if (line[0] == 'f' && g_ascii_isspace(line[1])) {
    g_auto(GStrv) tok = g_strsplit_set(line + 2, " \t", -1);
    g_array_set_size(ids, 0);
    for (int k = 0; tok[k] != NULL; k++) {
      guint32 id;
      if (tok[k][0] == '\0')
        continue;
      if (!obj_index(c, tok[k], b->vertices->len / 3, line_no, &id, error))
        return FALSE;
      g_array_append_val(ids, id);
    }
    if (ids->len < 3)
      return fail(error, c, "line %d: face with %u vertices", line_no, ids->len);
    add_polygon(b, (const guint32 *)ids->data, ids->len);
  } /* vt, vn, g, o, s, usemtl, mtllib, l, comments: not needed for the surface */
  return TRUE;
}

static NwSurface *read_obj(Cursor *c, GError **error)
{
  Builder b;
  builder_init(&b);
  g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(guint32));
  char *line;
  for (int line_no = 1; (line = next_line(c)) != NULL; line_no++) {
    g_strchug(line);
    gboolean ok = obj_line(c, line, line_no, &b, ids, error);
    g_free(line);
    if (!ok) {
      builder_clear(&b);
      return NULL;
    }
  }
  return builder_finish(&b, c->name, error);
}

/* ---- GIFTI (giftiio) ---------------------------------------------------------------------- */

#ifdef NW_HAVE_GIFTI
/* giftiio keeps global state (verbosity, parser buffers). */
static GMutex gifti_lock;

static gboolean da_type_ok(int t)
{
  return t == NIFTI_TYPE_FLOAT32 || t == NIFTI_TYPE_FLOAT64 || t == NIFTI_TYPE_INT32 ||
         t == NIFTI_TYPE_UINT32 || t == NIFTI_TYPE_INT16 || t == NIFTI_TYPE_UINT16 ||
         t == NIFTI_TYPE_UINT8 || t == NIFTI_TYPE_INT8;
}

static double da_get(const giiDataArray *da, long long i)
{
  switch (da->datatype) {
  case NIFTI_TYPE_FLOAT32:
    return ((const float *)da->data)[i];
  case NIFTI_TYPE_FLOAT64:
    return ((const double *)da->data)[i];
  case NIFTI_TYPE_INT32:
    return ((const gint32 *)da->data)[i];
  case NIFTI_TYPE_UINT32:
    return ((const guint32 *)da->data)[i];
  case NIFTI_TYPE_INT16:
    return ((const gint16 *)da->data)[i];
  case NIFTI_TYPE_UINT16:
    return ((const guint16 *)da->data)[i];
  case NIFTI_TYPE_INT8:
    return ((const gint8 *)da->data)[i];
  default:
    return ((const guint8 *)da->data)[i];
  }
}

/* Element (r, col) of an n x ncol array in either index order. */
static double da_at(const giiDataArray *da, long long r, int col, int ncol)
{
  long long n = da->dims[0];
  return da_get(da, da->ind_ord == GIFTI_IND_ORD_COL_MAJOR ? col * n + r : r * ncol + col);
}

/* n x ncol (ncol 1: a plain list), data present, a type we convert. */
static gboolean da_shape_ok(const giiDataArray *da, int ncol)
{
  int nbyper = 0, swapsize = 0; /* the buffer holds nvals * nbyper bytes */
  if (da == NULL || da->data == NULL || !da_type_ok(da->datatype) ||
      gifti_datatype_sizes(da->datatype, &nbyper, &swapsize) != 0 || nbyper != da->nbyper ||
      da->num_dim < 1 || da->dims[0] < 0 || da->dims[0] > G_MAXINT32 / 3)
    return FALSE;
  if (ncol == 1)
    return (da->num_dim == 1 || (da->num_dim == 2 && da->dims[1] == 1)) && da->nvals == da->dims[0];
  return da->num_dim == 2 && da->dims[1] == ncol && da->nvals == (long long)da->dims[0] * ncol;
}

/* giftiio prints expat's complaints about malformed XML to stderr. Check well-formedness
 * with GMarkup first, so that a truncated or corrupt file gets our message and no print.
 * (Errors inside the encoded data are still giftiio's to find, and it prints those.) */
static gboolean xml_well_formed(const char *path, GError **error)
{
  g_autofree char *text = NULL;
  gsize len = 0;
  GError *local = NULL;
  if (!g_file_get_contents(path, &text, &len, &local)) {
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "%s: cannot read: %s", path, local->message);
    g_error_free(local);
    return FALSE;
  }
  static const GMarkupParser ignore_all = {0};
  GMarkupParseContext *ctx = g_markup_parse_context_new(&ignore_all, 0, NULL, NULL);
  gboolean ok = g_markup_parse_context_parse(ctx, text, (gssize)len, &local) &&
                g_markup_parse_context_end_parse(ctx, &local);
  g_markup_parse_context_free(ctx);
  if (!ok) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: not a readable GIFTI file: %s", path,
                local->message);
    g_error_free(local);
  }
  return ok;
}

static gifti_image *gifti_open(const char *path, GError **error)
{
  if (!xml_well_formed(path, error))
    return NULL;
  gifti_set_verb(0); /* library code does not print: quiet the reader and its XML parser */
  gxml_set_verb(0);
  gifti_image *gim = gifti_read_image(path, 1);
  if (gim == NULL)
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "%s: not a readable GIFTI file (corrupt encoded data or bad attributes)", path);
  return gim;
}

/* The first array of n single values that is not geometry: per-vertex data. */
static giiDataArray *gifti_values(gifti_image *gim, long long n)
{
  for (int i = 0; i < gim->numDA; i++) {
    giiDataArray *da = gim->darray[i];
    if (da->intent != NIFTI_INTENT_POINTSET && da->intent != NIFTI_INTENT_TRIANGLE &&
        da_shape_ok(da, 1) && da->dims[0] == n)
      return da;
  }
  return NULL;
}

static NwSurface *read_gifti(const char *path, GError **error)
{
  g_mutex_lock(&gifti_lock);
  gifti_image *gim = gifti_open(path, error);
  if (gim == NULL) {
    g_mutex_unlock(&gifti_lock);
    return NULL;
  }
  giiDataArray *pts = gifti_find_DA(gim, NIFTI_INTENT_POINTSET, 0);
  giiDataArray *tri = gifti_find_DA(gim, NIFTI_INTENT_TRIANGLE, 0);
  Builder b;
  builder_init(&b);
  gboolean ok = FALSE;
  if (pts == NULL || tri == NULL)
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: no %s data array", path,
                pts == NULL ? "NIFTI_INTENT_POINTSET" : "NIFTI_INTENT_TRIANGLE");
  else if (!da_shape_ok(pts, 3) || !da_shape_ok(tri, 3))
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "%s: the %s array is not an N x 3 array of "
                "numbers",
                path, da_shape_ok(pts, 3) ? "triangle" : "point set");
  else
    ok = TRUE;
  if (ok) {
    long long nv = pts->dims[0], nt = tri->dims[0];
    for (long long r = 0; r < nv; r++)
      for (int d = 0; d < 3; d++) {
        float x = (float)da_at(pts, r, d, 3);
        g_array_append_val(b.vertices, x);
      }
    for (long long r = 0; r < nt; r++)
      for (int d = 0; d < 3; d++) {
        double x = da_at(tri, r, d, 3);
        guint32 id = x < 0 || x > G_MAXUINT32 ? G_MAXUINT32 : (guint32)x;
        g_array_append_val(b.triangles, id);
      }
    giiDataArray *val = gifti_values(gim, nv);
    if (val != NULL) {
      b.scalars = g_array_sized_new(FALSE, FALSE, sizeof(float), (guint)nv);
      for (long long r = 0; r < nv; r++) {
        float x = (float)da_get(val, r);
        g_array_append_val(b.scalars, x);
      }
    }
  }
  gifti_free_image(gim);
  g_mutex_unlock(&gifti_lock);
  if (!ok) {
    builder_clear(&b);
    return NULL;
  }
  return builder_finish(&b, path, error);
}

static float *read_gifti_values(const char *path, int n, GError **error)
{
  g_mutex_lock(&gifti_lock);
  gifti_image *gim = gifti_open(path, error);
  float *values = NULL;
  if (gim != NULL) {
    giiDataArray *da = gifti_values(gim, n);
    if (da == NULL) {
      g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                  "%s: no data array of %d values (one per vertex)", path, n);
    } else {
      values = g_new(float, (gsize)n + 1);
      for (int i = 0; i < n; i++)
        values[i] = (float)da_get(da, i);
    }
    gifti_free_image(gim);
  }
  g_mutex_unlock(&gifti_lock);
  return values;
}

/* Turn array `da` (made by gifti_create_image) into an n x ncol array of `type`. */
static gboolean gifti_shape(giiDataArray *da, int intent, int type, int n, int ncol)
{
  da->intent = intent;
  da->datatype = type;
  da->num_dim = ncol > 1 ? 2 : 1;
  da->dims[0] = n;
  da->dims[1] = ncol > 1 ? ncol : 0;
  da->nbyper = 4;
  da->nvals = (long long)n * ncol;
  da->ind_ord = GIFTI_IND_ORD_ROW_MAJOR;
  da->encoding = GIFTI_ENCODING_B64GZ;
  da->endian = gifti_get_this_endian();
  free(da->data); /* giftiio frees with free() */
  da->data = calloc((size_t)da->nvals + 1, 4);
  return da->data != NULL;
}

static gboolean write_gifti(const char *tmp_path, gpointer data, GError **error)
{
  const NwSurface *s = data;
  int n_da = s->scalars != NULL ? 3 : 2, dims[2] = {1, 3};
  g_mutex_lock(&gifti_lock);
  gifti_set_verb(0);
  gxml_set_verb(0);
  gifti_image *gim =
      gifti_create_image(n_da, NIFTI_INTENT_POINTSET, NIFTI_TYPE_FLOAT32, 2, dims, 1);
  gboolean ok =
      gim != NULL &&
      gifti_shape(gim->darray[0], NIFTI_INTENT_POINTSET, NIFTI_TYPE_FLOAT32, s->n_vertices, 3) &&
      gifti_shape(gim->darray[1], NIFTI_INTENT_TRIANGLE, NIFTI_TYPE_INT32, s->n_triangles, 3) &&
      (n_da < 3 ||
       gifti_shape(gim->darray[2], NIFTI_INTENT_SHAPE, NIFTI_TYPE_FLOAT32, s->n_vertices, 1));
  if (ok) {
    memcpy(gim->darray[0]->data, s->vertices, (size_t)s->n_vertices * 3 * sizeof(float));
    memcpy(gim->darray[1]->data, s->triangles, (size_t)s->n_triangles * 3 * sizeof(guint32));
    if (n_da == 3)
      memcpy(gim->darray[2]->data, s->scalars, (size_t)s->n_vertices * sizeof(float));
    /* Tell other tools the coordinates are scanner RAS mm (identity transform). */
    giiDataArray *pts = gim->darray[0];
    if (gifti_add_empty_CS(pts) == 0 && pts->numCS > 0) {
      giiCoordSystem *cs = pts->coordsys[pts->numCS - 1];
      cs->dataspace = gifti_strdup("NIFTI_XFORM_SCANNER_ANAT");
      cs->xformspace = gifti_strdup("NIFTI_XFORM_SCANNER_ANAT");
      for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++)
          cs->xform[r][c] = r == c;
    }
    ok = gifti_write_image(gim, tmp_path, 1) == 0;
  }
  if (gim != NULL)
    gifti_free_image(gim);
  g_mutex_unlock(&gifti_lock);
  if (!ok)
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "giftiio could not write the GIFTI file");
  return ok;
}
#else
static gboolean no_gifti(const char *path, GError **error)
{
  g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED, "%s: GIFTI unsupported: built without giftiio",
              path);
  return FALSE;
}
static NwSurface *read_gifti(const char *path, GError **error)
{
  no_gifti(path, error);
  return NULL;
}
static float *read_gifti_values(const char *path, int n, GError **error)
{
  no_gifti(path, error);
  return NULL;
}
static gboolean write_gifti(const char *tmp_path, gpointer data, GError **error)
{
  g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED, "GIFTI unsupported: built without giftiio");
  return FALSE;
}
#endif

/* ---- format detection and the public readers ---------------------------------------------- */

static const guint8 fs_surface_magic[3] = {0xff, 0xff, 0xfe}, fs_curv_magic[3] = {0xff, 0xff, 0xff};

const char *nw_mesh_format_name(NwMeshFormat f)
{
  static const char *names[] = {"auto", "GIFTI", "FreeSurfer", "VTK", "PLY", "OBJ"};
  return (int)f >= 0 && (int)f < (int)G_N_ELEMENTS(names) ? names[f] : "unknown";
}

NwMeshFormat nw_mesh_format_from_name(const char *path)
{
  g_autofree char *base = g_path_get_basename(path);
  g_autofree char *low = g_ascii_strdown(base, -1);
  static const char *fs_ext[] = {".pial", ".white",    ".surf",         ".inflated", ".sphere",
                                 ".orig", ".smoothwm", ".midthickness", ".reg"};
  if (g_str_has_suffix(low, ".gii"))
    return NW_MESH_GIFTI;
  if (g_str_has_suffix(low, ".vtk"))
    return NW_MESH_VTK;
  if (g_str_has_suffix(low, ".ply"))
    return NW_MESH_PLY;
  if (g_str_has_suffix(low, ".obj"))
    return NW_MESH_OBJ;
  for (gsize i = 0; i < G_N_ELEMENTS(fs_ext); i++)
    if (g_str_has_suffix(low, fs_ext[i]))
      return NW_MESH_FREESURFER;
  return NW_MESH_AUTO;
}

static NwMeshFormat sniff(const Cursor *c)
{
  gsize n = left(c);
  const char *t = (const char *)c->p;
  if (n >= 3 && memcmp(c->p, fs_surface_magic, 3) == 0)
    return NW_MESH_FREESURFER;
  if (n >= 4 && (strncmp(t, "ply\n", 4) == 0 || strncmp(t, "ply\r", 4) == 0))
    return NW_MESH_PLY;
  if (n >= 14 && strncmp(t, "# vtk DataFile", 14) == 0)
    return NW_MESH_VTK;
  if (g_strstr_len(t, (gssize)MIN(n, 2048), "<GIFTI") != NULL)
    return NW_MESH_GIFTI;
  return NW_MESH_AUTO;
}

NwSurface *nw_mesh_read(const char *path, GError **error)
{
  g_autofree char *contents = NULL;
  Cursor c;
  if (!load(path, &contents, &c, error))
    return NULL;
  NwMeshFormat f = sniff(&c);
  if (f == NW_MESH_AUTO)
    f = nw_mesh_format_from_name(path);
  if (f == NW_MESH_AUTO && left(&c) >= 3 && memcmp(c.p, fs_curv_magic, 3) == 0)
    return fail(error, &c, "a FreeSurfer per-vertex value file, not a surface"), NULL;
  switch (f) {
  case NW_MESH_FREESURFER:
    if (left(&c) < 3 || memcmp(c.p, fs_surface_magic, 3) != 0)
      return fail(error, &c, "not a FreeSurfer triangle surface (magic 0xFFFFFE expected)"), NULL;
    return read_freesurfer(&c, error);
  case NW_MESH_VTK:
    return read_vtk(&c, error);
  case NW_MESH_PLY:
    return read_ply(&c, error);
  case NW_MESH_OBJ:
    return read_obj(&c, error);
  case NW_MESH_GIFTI:
    g_clear_pointer(&contents, g_free);
    return read_gifti(path, error);
  default:
    return fail(error, &c, "unknown mesh format (GIFTI, FreeSurfer, VTK, PLY or OBJ)"), NULL;
  }
}

gboolean nw_mesh_read_scalars(const char *path, NwSurface *s, GError **error)
{
  g_autofree char *contents = NULL;
  Cursor c;
  if (!load(path, &contents, &c, error))
    return FALSE;
  float *values = NULL;
  if (left(&c) >= 3 && memcmp(c.p, fs_curv_magic, 3) == 0)
    values = read_freesurfer_curv(&c, s->n_vertices, error);
  else if (sniff(&c) == NW_MESH_GIFTI)
    values = read_gifti_values(path, s->n_vertices, error);
  else
    return fail(error, &c, "not a FreeSurfer curv file (magic 0xFFFFFF) or a GIFTI file");
  if (values == NULL)
    return FALSE;
  g_free(s->scalars);
  s->scalars = values;
  return TRUE;
}

/* ---- writers -------------------------------------------------------------------------------- */

static void put_be32(FILE *f, guint32 u)
{
  guint32 b = GUINT32_TO_BE(u);
  fwrite(&b, 4, 1, f);
}

static void put_be_float(FILE *f, float x)
{
  guint32 u;
  memcpy(&u, &x, 4);
  put_be32(f, u);
}

static void put_le32(FILE *f, guint32 u)
{
  guint32 b = GUINT32_TO_LE(u);
  fwrite(&b, 4, 1, f);
}

static void put_le_float(FILE *f, float x)
{
  guint32 u;
  memcpy(&u, &x, 4);
  put_le32(f, u);
}

static gboolean close_checked(FILE *f, GError **error)
{
  gboolean ok = !ferror(f);
  ok = (fclose(f) == 0) && ok;
  if (!ok)
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "write failed: %s", g_strerror(errno));
  return ok;
}

static FILE *create(const char *tmp_path, GError **error)
{
  FILE *f = g_fopen(tmp_path, "wb");
  if (f == NULL)
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "cannot create: %s", g_strerror(errno));
  return f;
}

static gboolean write_ply(const char *tmp_path, gpointer data, GError **error)
{
  const NwSurface *s = data;
  FILE *f = create(tmp_path, error);
  if (f == NULL)
    return FALSE;
  fprintf(f,
          "ply\nformat binary_little_endian 1.0\ncomment neurowarp: RAS mm\n"
          "element vertex %d\nproperty float x\nproperty float y\nproperty float z\n%s"
          "element face %d\nproperty list uchar int vertex_indices\nend_header\n",
          s->n_vertices, s->scalars ? "property float scalar\n" : "", s->n_triangles);
  for (gsize i = 0; i < (gsize)s->n_vertices; i++) {
    for (int d = 0; d < 3; d++)
      put_le_float(f, s->vertices[i * 3 + d]);
    if (s->scalars)
      put_le_float(f, s->scalars[i]);
  }
  for (gsize t = 0; t < (gsize)s->n_triangles; t++) {
    fputc(3, f);
    for (int d = 0; d < 3; d++)
      put_le32(f, s->triangles[t * 3 + d]);
  }
  return close_checked(f, error);
}

static gboolean write_obj(const char *tmp_path, gpointer data, GError **error)
{
  const NwSurface *s = data;
  FILE *f = create(tmp_path, error);
  if (f == NULL)
    return FALSE;
  fprintf(f, "# neurowarp: RAS mm\n");
  char x[3][G_ASCII_DTOSTR_BUF_SIZE]; /* locale-independent: the GUI sets LC_NUMERIC */
  for (gsize i = 0; i < (gsize)s->n_vertices; i++) {
    for (int d = 0; d < 3; d++)
      g_ascii_formatd(x[d], sizeof x[d], "%.9g", s->vertices[i * 3 + d]);
    fprintf(f, "v %s %s %s\n", x[0], x[1], x[2]);
  }
  for (gsize t = 0; t < (gsize)s->n_triangles; t++)
    fprintf(f, "f %u %u %u\n", s->triangles[t * 3] + 1, s->triangles[t * 3 + 1] + 1,
            s->triangles[t * 3 + 2] + 1);
  return close_checked(f, error);
}

static gboolean write_vtk(const char *tmp_path, gpointer data, GError **error)
{
  const NwSurface *s = data;
  FILE *f = create(tmp_path, error);
  if (f == NULL)
    return FALSE;
  fprintf(f,
          "# vtk DataFile Version 3.0\nneurowarp surface, RAS mm\nBINARY\n"
          "DATASET POLYDATA\nPOINTS %d float\n",
          s->n_vertices);
  for (gsize i = 0; i < (gsize)s->n_vertices * 3; i++)
    put_be_float(f, s->vertices[i]);
  fprintf(f, "\nPOLYGONS %d %d\n", s->n_triangles, s->n_triangles * 4);
  for (gsize t = 0; t < (gsize)s->n_triangles; t++) {
    put_be32(f, 3);
    for (int d = 0; d < 3; d++)
      put_be32(f, s->triangles[t * 3 + d]);
  }
  fputc('\n', f);
  if (s->scalars) {
    fprintf(f, "POINT_DATA %d\nSCALARS scalars float 1\nLOOKUP_TABLE default\n", s->n_vertices);
    for (gsize i = 0; i < (gsize)s->n_vertices; i++)
      put_be_float(f, s->scalars[i]);
    fputc('\n', f);
  }
  return close_checked(f, error);
}

gboolean nw_mesh_write(const char *path, const NwSurface *s, NwMeshFormat format, GError **error)
{
  if (format == NW_MESH_AUTO)
    format = nw_mesh_format_from_name(path);
  if (s->n_triangles > G_MAXINT32 / 4) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "%s: %d triangles are too many to write", path,
                s->n_triangles);
    return FALSE;
  }
  NwFileWriter writer = format == NW_MESH_PLY     ? write_ply
                        : format == NW_MESH_OBJ   ? write_obj
                        : format == NW_MESH_VTK   ? write_vtk
                        : format == NW_MESH_GIFTI ? write_gifti
                                                  : NULL;
  if (writer == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED,
                "%s: cannot write meshes as %s (GIFTI .gii, VTK .vtk, PLY .ply or OBJ .obj)", path,
                format == NW_MESH_AUTO ? "an unknown format" : nw_mesh_format_name(format));
    return FALSE;
  }
  return nw_write_atomically(path, writer, (gpointer)s, error);
}
