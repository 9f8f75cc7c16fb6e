/* io_mesh_obj.c — Wavefront OBJ: v and f lines ("i", "i/t", "i//n", "i/t/n", negative
 * indices counting back); everything else (vt, vn, groups, materials) is read over.
 * Any thread. */
#include <stdio.h>
#include <string.h>

#include "io_mesh_private.h"

/* "i", "i/t", "i//n", "i/t/n": 1-based, negative counts back from the last vertex so far. */
static gboolean obj_index(Cursor *c, const char *tok, gsize n_vertices, int line_no, guint32 *out,
                          GError **error)
{
  char *stop = NULL;
  gint64 i = g_ascii_strtoll(tok, &stop, 10);
  if (stop == tok || (*stop != '\0' && *stop != '/'))
    return mesh_fail(error, c, "line %d: bad face vertex \"%s\"", line_no, tok);
  gint64 v = i > 0 ? i - 1 : (gint64)n_vertices + i;
  if (i == 0 || v < 0 || v > G_MAXINT32)
    return mesh_fail(error, c,
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
        return mesh_fail(error, c, "line %d: vertex needs three coordinates", line_no);
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
      return mesh_fail(error, c, "line %d: face with %u vertices", line_no, ids->len);
    mesh_add_polygon(b, (const guint32 *)ids->data, ids->len);
  } /* vt, vn, g, o, s, usemtl, mtllib, l, comments: not needed for the surface */
  return TRUE;
}

NwSurface *nw_mesh_read_obj(Cursor *c, GError **error)
{
  Builder b;
  mesh_builder_init(&b);
  g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(guint32));
  char *line;
  for (int line_no = 1; (line = mesh_next_line(c)) != NULL; line_no++) {
    g_strchug(line);
    gboolean ok = obj_line(c, line, line_no, &b, ids, error);
    g_free(line);
    if (!ok) {
      mesh_builder_clear(&b);
      return NULL;
    }
  }
  return mesh_builder_finish(&b, c->name, error);
}

gboolean nw_mesh_write_obj(const char *tmp_path, gpointer data, GError **error)
{
  const NwSurface *s = data;
  FILE *f = mesh_create(tmp_path, error);
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
  return mesh_close_checked(f, error);
}