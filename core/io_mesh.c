/* io_mesh.c — mesh files: which format a file is (content first, then name), and the public
 * readers and writers that hand over to one file per format (io_mesh_freesurfer.c,
 * io_mesh_vtk.c, io_mesh_ply.c, io_mesh_obj.c, io_mesh_gifti.c). See io_mesh.h. Any thread;
 * giftiio calls run under one lock (io_mesh_gifti.c). */
#include "io_mesh.h"

#include <string.h>

#include "atomic_file.h"
#include "io_mesh_private.h"
#include "nw_error.h"

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
  gsize n = mesh_left(c);
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
  if (!mesh_load(path, &contents, &c, error))
    return NULL;
  NwMeshFormat f = sniff(&c);
  if (f == NW_MESH_AUTO)
    f = nw_mesh_format_from_name(path);
  if (f == NW_MESH_AUTO && mesh_left(&c) >= 3 && memcmp(c.p, fs_curv_magic, 3) == 0)
    return mesh_fail(error, &c, "a FreeSurfer per-vertex value file, not a surface"), NULL;
  switch (f) {
  case NW_MESH_FREESURFER:
    if (mesh_left(&c) < 3 || memcmp(c.p, fs_surface_magic, 3) != 0)
      return mesh_fail(error, &c, "not a FreeSurfer triangle surface (magic 0xFFFFFE expected)"), NULL;
    return nw_mesh_read_freesurfer(&c, error);
  case NW_MESH_VTK:
    return nw_mesh_read_vtk(&c, error);
  case NW_MESH_PLY:
    return nw_mesh_read_ply(&c, error);
  case NW_MESH_OBJ:
    return nw_mesh_read_obj(&c, error);
  case NW_MESH_GIFTI:
    g_clear_pointer(&contents, g_free);
    return nw_mesh_read_gifti(path, error);
  default:
    return mesh_fail(error, &c, "unknown mesh format (GIFTI, FreeSurfer, VTK, PLY or OBJ)"), NULL;
  }
}

gboolean nw_mesh_read_scalars(const char *path, NwSurface *s, GError **error)
{
  g_autofree char *contents = NULL;
  Cursor c;
  if (!mesh_load(path, &contents, &c, error))
    return FALSE;
  float *values = NULL;
  if (mesh_left(&c) >= 3 && memcmp(c.p, fs_curv_magic, 3) == 0)
    values = nw_mesh_read_freesurfer_curv(&c, s->n_vertices, error);
  else if (sniff(&c) == NW_MESH_GIFTI)
    values = nw_mesh_read_gifti_values(path, s->n_vertices, error);
  else
    return mesh_fail(error, &c, "not a FreeSurfer curv file (magic 0xFFFFFF) or a GIFTI file");
  if (values == NULL)
    return FALSE;
  g_free(s->scalars);
  s->scalars = values;
  return TRUE;
}

gboolean nw_mesh_write_to(NwOutputs *o, const char *path, const NwSurface *s, NwMeshFormat format,
                          GError **error)
{
  if (format == NW_MESH_AUTO)
    format = nw_mesh_format_from_name(path);
  if (s->n_triangles > G_MAXINT32 / 4) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "%s: %d triangles are too many to write", path,
                s->n_triangles);
    return FALSE;
  }
  NwFileWriter writer = format == NW_MESH_PLY     ? nw_mesh_write_ply
                        : format == NW_MESH_OBJ   ? nw_mesh_write_obj
                        : format == NW_MESH_VTK   ? nw_mesh_write_vtk
                        : format == NW_MESH_GIFTI ? nw_mesh_write_gifti
                                                  : NULL;
  if (writer == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED,
                "%s: cannot write meshes as %s (GIFTI .gii, VTK .vtk, PLY .ply or OBJ .obj)", path,
                format == NW_MESH_AUTO ? "an unknown format" : nw_mesh_format_name(format));
    return FALSE;
  }
  return nw_outputs_write(o, path, writer, (gpointer)s, error);
}

gboolean nw_mesh_write(const char *path, const NwSurface *s, NwMeshFormat format, GError **error)
{
  g_autoptr(NwOutputs) o = nw_outputs_new(TRUE);
  return nw_mesh_write_to(o, path, s, format, error) && nw_outputs_commit(o, error);
}