/* surface_input.c — the input of nlm-surface as a level set (surface_input.h): NIfTI masks,
 * labels and signed distances, and meshes through mesh_sdf.h. Any thread. */
#include "surface_input.h"

#include <math.h>

#include "io_mesh.h"
#include "io_nifti.h"
#include "mesh_sdf.h"
#include "nw_error.h"
#include "sdf_reinit.h"

const char *nw_surface_input_kind_name(NwSurfaceInputKind k)
{
  static const char *names[] = {"mask", "labels", "sdf", "mesh"};
  return names[k];
}

gboolean nw_surface_input_is_mesh(const char *path)
{
  return nw_mesh_format_from_name(path) != NW_MESH_AUTO;
}

/* A 0/1 volume (1 where keep says so), for nw_sdf_from_mask. */
static NwVolume *binary(const NwVolume *v, gboolean labels, int label, GError **error)
{
  NwVolume *m = nw_volume_new_like(v, 1, error);
  if (m == NULL)
    return NULL;
  const size_t n = nw_volume_n_voxels(v);
  for (size_t e = 0; e < n; e++)
    m->data[e] = labels ? lrintf(v->data[e]) == label : v->data[e] != 0.0f;
  return m;
}

/* Some of the labels present, for a message: "0, 1, 4, 17, ..." (at most 12). */
static char *some_labels(const NwVolume *v)
{
  g_autoptr(GHashTable) seen = g_hash_table_new(g_direct_hash, g_direct_equal);
  const size_t n = nw_volume_n_voxels(v);
  GString *s = g_string_new(NULL);
  for (size_t e = 0; e < n && g_hash_table_size(seen) <= 12; e++) {
    long l = lrintf(v->data[e]);
    if (g_hash_table_add(seen, GINT_TO_POINTER((int)l)))
      g_string_append_printf(s, "%s%ld", s->len > 0 ? ", " : "", l);
  }
  if (g_hash_table_size(seen) > 12)
    g_string_append(s, ", ...");
  return g_string_free(s, FALSE);
}

static gboolean label_present(const NwVolume *v, int label)
{
  const size_t n = nw_volume_n_voxels(v);
  for (size_t e = 0; e < n; e++)
    if (lrintf(v->data[e]) == label)
      return TRUE;
  return FALSE;
}

/* Which kind of image v is by its values: a signed distance (both signs) or a mask (0 and
 * one other value); otherwise an error. */
static gboolean classify(const NwVolume *v, const char *path, const char *label_hint,
                         NwSurfaceInputKind *kind, GError **error)
{
  const size_t n = nw_volume_n_voxels(v);
  float lo = INFINITY, hi = -INFINITY, other = 0.0f;
  gboolean more_than_two = FALSE;
  for (size_t e = 0; e < n; e++) {
    float x = v->data[e];
    lo = MIN(lo, x), hi = MAX(hi, x);
    if (x != 0.0f && other == 0.0f)
      other = x;
    else if (x != 0.0f && x != other)
      more_than_two = TRUE;
  }
  if (lo < 0.0f && hi > 0.0f) {
    *kind = NW_SURFACE_INPUT_SDF;
    return TRUE;
  }
  if (!more_than_two && lo >= 0.0f) {
    *kind = NW_SURFACE_INPUT_MASK;
    return TRUE;
  }
  g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
              "%s: neither a mask (0 and one other value) nor a signed distance (negative inside, "
              "positive outside): values %g..%g; for a label volume choose the label %s",
              path, lo, hi, label_hint);
  return FALSE;
}

gboolean nw_surface_input_classify(const NwVolume *v, const char *name, gboolean has_label,
                                   int label, const char *label_hint, NwSurfaceInputKind *kind,
                                   GError **error)
{
  if (!nw_volume_check_finite(v, name, error))
    return FALSE;
  if (!has_label)
    return classify(v, name, label_hint, kind, error);
  *kind = NW_SURFACE_INPUT_LABELS;
  if (label_present(v, label))
    return TRUE;
  g_autofree char *found = some_labels(v);
  g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
              "%s: label %d is not in the volume (labels there: %s)", name, label, found);
  return FALSE;
}

NwVolume *nw_surface_input_convert(const NwVolume *v, const char *name, NwSurfaceInputKind kind,
                                   int label, GError **error)
{
  if (kind == NW_SURFACE_INPUT_SDF)
    return nw_volume_try_copy(v, error);
  g_autoptr(NwVolume) mask = binary(v, kind == NW_SURFACE_INPUT_LABELS, label, error);
  return mask != NULL ? nw_sdf_from_mask(mask, name, error) : NULL;
}

gboolean nw_surface_input_largest_label(const NwVolume *v, int *label)
{
  g_autoptr(GHashTable) counts = g_hash_table_new(g_direct_hash, g_direct_equal);
  const size_t n = nw_volume_n_voxels(v);
  for (size_t e = 0; e < n; e++) {
    const float x = v->data[e];
    if (x == 0.0f || x != floorf(x) || fabsf(x) > (float)G_MAXINT / 2)
      continue;
    gpointer key = GINT_TO_POINTER((int)x);
    g_hash_table_insert(counts, key,
                        GSIZE_TO_POINTER(GPOINTER_TO_SIZE(g_hash_table_lookup(counts, key)) + 1));
  }
  gsize most = 0;
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init(&it, counts);
  while (g_hash_table_iter_next(&it, &key, &value)) {
    const gsize c = GPOINTER_TO_SIZE(value);
    const int l = GPOINTER_TO_INT(key);
    if (c > most || (c == most && l < *label))
      most = c, *label = l;
  }
  return most > 0;
}

static NwVolume *read_nifti(const NwSurfaceInputArgs *a, NwSurfaceInputKind *kind, GError **error)
{
  g_autoptr(NwVolume) v = nw_nifti_read(a->path, error);
  if (v == NULL ||
      !nw_surface_input_classify(v, a->path, a->has_label, a->label, "with --label N", kind, error))
    return NULL;
  if (*kind == NW_SURFACE_INPUT_SDF)
    return g_steal_pointer(&v);
  return nw_surface_input_convert(v, a->path, *kind, a->label, error);
}

/* The mesh's grid: like's geometry, or one around the mesh. */
static NwVolume *mesh_grid(const NwSurfaceInputArgs *a, const NwSurface *s, GError **error)
{
  if (a->like == NULL)
    return nw_mesh_grid(s, a->spacing_mm, a->margin_mm, error);
  return nw_nifti_read(a->like, error);
}

static NwVolume *read_mesh(const NwSurfaceInputArgs *a, GError **error)
{
  g_autoptr(NwSurface) s = nw_mesh_read(a->path, error);
  if (s == NULL)
    return NULL;
  g_autoptr(NwVolume) grid = mesh_grid(a, s, error);
  if (grid == NULL) {
    if (a->like == NULL)
      g_prefix_error(error, "%s: ", a->path);
    return NULL;
  }
  return nw_mesh_to_sdf(s, grid, a->path, error);
}

NwVolume *nw_surface_input_read(const NwSurfaceInputArgs *a, NwSurfaceInputKind *kind,
                                GError **error)
{
  if (nw_surface_input_is_mesh(a->path)) {
    *kind = NW_SURFACE_INPUT_MESH;
    return read_mesh(a, error);
  }
  return read_nifti(a, kind, error);
}
