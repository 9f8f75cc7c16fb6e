/* io_mesh_common.c — the cursor, builder and writing helpers every mesh format shares
 * (io_mesh_private.h). Any thread. */
#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "input_file.h"
#include "io_mesh_private.h"
#include "nw_error.h"

/* ---- cursor over a file in memory -------------------------------------------------------- */

gboolean mesh_fail(GError **error, const Cursor *c, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: %s", c->name, msg);
  return FALSE;
}

gsize mesh_left(const Cursor *c)
{
  return (gsize)(c->end - c->p);
}

/* n items of `size` bytes must still be in the file: refuses absurd counts before any
 * allocation. */
gboolean mesh_need(Cursor *c, gint64 n, gsize size, const char *what, GError **error)
{
  if (n < 0 || n > G_MAXINT32 / 3)
    return mesh_fail(error, c, "invalid %s count %" G_GINT64_FORMAT, what, n);
  if ((guint64)n * size > mesh_left(c))
    return mesh_fail(error, c,
                "truncated: %" G_GINT64_FORMAT " %s need %" G_GUINT64_FORMAT " bytes, %zu left", n,
                what, (guint64)n * size, mesh_left(c));
  return TRUE;
}

guint32 mesh_be32(Cursor *c)
{
  guint32 v = (guint32)c->p[0] << 24 | (guint32)c->p[1] << 16 | (guint32)c->p[2] << 8 | c->p[3];
  c->p += 4;
  return v;
}

float mesh_bits_to_float(guint32 u)
{
  float f;
  memcpy(&f, &u, 4);
  return f;
}

void mesh_skip_space(Cursor *c)
{
  while (c->p < c->end && g_ascii_isspace(*c->p))
    c->p++;
}

/* Next line (without its "\r\n"), as a new string; NULL at the end of the file. */
char *mesh_next_line(Cursor *c)
{
  if (c->p >= c->end)
    return NULL;
  const guint8 *nl = memchr(c->p, '\n', mesh_left(c));
  const guint8 *stop = nl ? nl : c->end;
  char *line = g_strndup((const char *)c->p, (gsize)(stop - c->p));
  c->p = nl ? nl + 1 : c->end;
  g_strchomp(line);
  return line;
}

/* Next non-blank line, leading blanks removed; NULL at the end. */
char *mesh_next_content_line(Cursor *c)
{
  mesh_skip_space(c);
  return mesh_next_line(c);
}

/* An ASCII number: the buffer is NUL-terminated (g_file_get_contents), so strtod stops. */
gboolean mesh_read_ascii(Cursor *c, double *out, const char *what, GError **error)
{
  mesh_skip_space(c);
  if (c->p >= c->end)
    return mesh_fail(error, c, "truncated: expected %s", what);
  char *stop = NULL;
  *out = g_ascii_strtod((const char *)c->p, &stop);
  if (stop == (const char *)c->p || (stop < (const char *)c->end && !g_ascii_isspace(*stop)))
    return mesh_fail(error, c, "expected %s, found \"%.12s\"", what, (const char *)c->p);
  c->p = (const guint8 *)stop;
  return TRUE;
}

gboolean mesh_load(const char *path, char **contents, Cursor *c, GError **error)
{
  gsize len = 0;
  GError *local = NULL;
  if (!nw_input_file_check(path, NULL, error))
    return FALSE;
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

gboolean mesh_whole(double x, double max)
{
  return isfinite(x) && x >= 0.0 && x <= max && x == floor(x);
}

gboolean mesh_vertex_index(const Cursor *c, double x, const char *what, guint32 *out,
                           GError **error)
{
  if (!mesh_whole(x, (double)(G_MAXUINT32 - 1)))
    return mesh_fail(error, c, "%s refers to vertex %g", what, x);
  *out = (guint32)x;
  return TRUE;
}

/* ---- building the surface ----------------------------------------------------------------- */

void mesh_builder_init(Builder *b)
{
  b->vertices = g_array_new(FALSE, FALSE, sizeof(float));
  b->triangles = g_array_new(FALSE, FALSE, sizeof(guint32));
  b->scalars = NULL;
}

void mesh_builder_clear(Builder *b)
{
  g_array_unref(b->vertices);
  g_array_unref(b->triangles);
  if (b->scalars)
    g_array_unref(b->scalars);
}

/* Polygon v0..v(n-1) as the fan (v0, vi, vi+1). */
void mesh_add_polygon(Builder *b, const guint32 *v, gsize n)
{
  for (gsize i = 1; i + 1 < n; i++) {
    guint32 t[3] = {v[0], v[i], v[i + 1]};
    g_array_append_vals(b->triangles, t, 3);
  }
}

/* Strip v0..v(n-1): triangle i is (vi, vi+1, vi+2), odd ones reversed to keep the winding;
 * the degenerate triangles strips use as joints are dropped. */
void mesh_add_strip(Builder *b, const guint32 *v, gsize n)
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

NwSurface *mesh_builder_finish(Builder *b, const char *name, GError **error)
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
  mesh_builder_clear(b);
  return s;
}

/* ---- writers -------------------------------------------------------------------------------- */

void mesh_put_be32(FILE *f, guint32 u)
{
  guint32 b = GUINT32_TO_BE(u);
  fwrite(&b, 4, 1, f);
}

void mesh_put_be_float(FILE *f, float x)
{
  guint32 u;
  memcpy(&u, &x, 4);
  mesh_put_be32(f, u);
}

void mesh_put_le32(FILE *f, guint32 u)
{
  guint32 b = GUINT32_TO_LE(u);
  fwrite(&b, 4, 1, f);
}

void mesh_put_le_float(FILE *f, float x)
{
  guint32 u;
  memcpy(&u, &x, 4);
  mesh_put_le32(f, u);
}

gboolean mesh_close_checked(FILE *f, GError **error)
{
  gboolean ok = !ferror(f);
  ok = (fclose(f) == 0) && ok;
  if (!ok)
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "write failed: %s", g_strerror(errno));
  return ok;
}

FILE *mesh_create(const char *tmp_path, GError **error)
{
  FILE *f = g_fopen(tmp_path, "wb");
  if (f == NULL)
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "cannot create: %s", g_strerror(errno));
  return f;
}