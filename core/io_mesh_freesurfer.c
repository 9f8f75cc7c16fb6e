/* io_mesh_freesurfer.c — FreeSurfer binary triangle surfaces (magic 0xFFFFFE, big-endian,
 * optional volume-geometry footer whose c_ras moves the surface into scanner RAS) and curv
 * files (magic 0xFFFFFF: one value per vertex). Read only. Any thread. */
#include <stdlib.h>
#include <string.h>

#include "io_mesh_private.h"

/* After the triangles FreeSurfer may append the volume geometry: tag 20 (or 2 0 20), then
 * text lines "key = value" among them "valid = 1" and "cras = x y z", the scanner RAS of
 * the conformed volume's centre. tkregister RAS + c_ras = scanner RAS. */
static gboolean freesurfer_c_ras(Cursor *c, double c_ras[3])
{
  if (mesh_left(c) < 4)
    return FALSE;
  guint32 tag = mesh_be32(c);
  if (tag == 2 && mesh_left(c) >= 8) {
    guint32 a = mesh_be32(c), b = mesh_be32(c);
    if (a != 0 || b != 20)
      return FALSE;
  } else if (tag != 20) {
    return FALSE;
  }
  gboolean valid = FALSE, have = FALSE;
  g_autofree char *line = NULL;
  while ((line = mesh_next_line(c)) != NULL) {
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

NwSurface *nw_mesh_read_freesurfer(Cursor *c, GError **error)
{
  c->p += 3; /* magic, checked by the caller */
  /* "created by <user> on <date>\n\n": two lines of free text */
  for (int k = 0; k < 2; k++) {
    const guint8 *nl = memchr(c->p, '\n', mesh_left(c));
    if (nl == NULL)
      return mesh_fail(error, c, "truncated: no end to the FreeSurfer header text"), NULL;
    c->p = nl + 1;
  }
  if (!mesh_need(c, 2, 4, "header words", error))
    return NULL;
  gint32 nv = (gint32)mesh_be32(c), nt = (gint32)mesh_be32(c);
  if (!mesh_need(c, nv, 12, "vertices", error))
    return NULL;
  if (!mesh_need(c, nt, 0, "triangles", error))
    return NULL;
  if ((guint64)nv * 12 + (guint64)nt * 12 > mesh_left(c))
    return mesh_fail(error, c,
                "truncated: %d vertices and %d triangles need %" G_GUINT64_FORMAT
                " bytes, %zu left",
                nv, nt, (guint64)nv * 12 + (guint64)nt * 12, mesh_left(c)),
           NULL;
  Builder b;
  mesh_builder_init(&b);
  g_array_set_size(b.vertices, (guint)nv * 3);
  g_array_set_size(b.triangles, (guint)nt * 3);
  float *v = (float *)b.vertices->data;
  for (gsize i = 0; i < (gsize)nv * 3; i++)
    v[i] = mesh_bits_to_float(mesh_be32(c));
  guint32 *t = (guint32 *)b.triangles->data;
  for (gsize i = 0; i < (gsize)nt * 3; i++)
    t[i] = mesh_be32(c);
  double c_ras[3];
  if (freesurfer_c_ras(c, c_ras))
    for (gsize i = 0; i < (gsize)nv * 3; i++)
      v[i] = (float)(v[i] + c_ras[i % 3]);
  return mesh_builder_finish(&b, c->name, error);
}

float *nw_mesh_read_freesurfer_curv(Cursor *c, int n_expected, GError **error)
{
  c->p += 3;
  if (!mesh_need(c, 3, 4, "header words", error))
    return NULL;
  gint32 nv = (gint32)mesh_be32(c);
  mesh_be32(c); /* face count: unused */
  gint32 per_vertex = (gint32)mesh_be32(c);
  if (per_vertex != 1)
    return mesh_fail(error, c, "%d values per vertex; only 1 is supported", per_vertex), NULL;
  if (nv != n_expected)
    return mesh_fail(error, c, "%d values for a mesh of %d vertices", nv, n_expected), NULL;
  if (!mesh_need(c, nv, 4, "values", error))
    return NULL;
  float *values = g_new(float, (gsize)nv + 1);
  for (gint32 i = 0; i < nv; i++)
    values[i] = mesh_bits_to_float(mesh_be32(c));
  return values;
}