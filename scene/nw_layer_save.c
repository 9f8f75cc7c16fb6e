/* nw_layer_save.c — writing one layer to a file (see nw_layer_save.h). Main thread. */
#include "nw_layer_save.h"

#include <string.h>

#include "atomic_file.h"
#include "io_mesh.h"
#include "io_nifti.h"
#include "nw_error.h"

gboolean nw_layer_save(NwLayer *l, const char *path, gboolean overwrite, GError **error)
{
  const NwVolume *v = nw_layer_get_volume(l);
  const NwSurface *surf = nw_layer_get_surface(l);
  if (v == NULL && surf == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "%s: layer %s has no data to save", path,
                nw_layer_get_name(l));
    return FALSE;
  }
  /* a set of one file: refuses an existing file unless overwrite, names it when complete */
  g_autoptr(NwOutputs) out = nw_outputs_new(overwrite);
  gboolean ok;
  switch (nw_layer_get_kind(l)) {
  case NW_LAYER_FIELD:
    ok = nw_nifti_write_field_to(out, path, v, NW_FIELD_ITK, error);
    break;
  case NW_LAYER_SURFACE:
    ok = nw_mesh_write_to(out, path, surf, NW_MESH_AUTO, error);
    break;
  case NW_LAYER_LABELS: /* whole numbers 0..65535 (nw_volume_looks_like_labels) */
    ok = nw_nifti_write_to(out, path, v, NW_DT_UINT16, FALSE, error);
    break;
  default:
    ok = nw_nifti_write_to(out, path, v, NW_DT_FLOAT32, FALSE, error);
    break;
  }
  return ok && nw_outputs_commit(out, error);
}

char *nw_layer_save_suggest_name(NwLayer *l)
{
  const char *name = nw_layer_get_name(l);
  const char *ext = nw_layer_get_kind(l) == NW_LAYER_SURFACE ? ".gii" : ".nii.gz";
  /* "fixed.nii.gz" keeps its name; "warped · 1" becomes "warped_1.nii.gz" */
  g_autofree char *stem =
      g_str_has_suffix(name, ext) ? g_strndup(name, strlen(name) - strlen(ext)) : g_strdup(name);
  GString *s = g_string_new(NULL);
  for (const char *p = stem; *p != '\0'; p = g_utf8_next_char(p)) {
    const gunichar c = g_utf8_get_char(p);
    if (g_unichar_isalnum(c) || c == '-' || c == '.')
      g_string_append_unichar(s, c);
    else if (s->len > 0 && s->str[s->len - 1] != '_')
      g_string_append_c(s, '_');
  }
  while (s->len > 0 && s->str[s->len - 1] == '_')
    g_string_truncate(s, s->len - 1);
  if (s->len == 0)
    g_string_append(s, "layer");
  g_string_append(s, ext);
  return g_string_free(s, FALSE);
}
