/* nw_layer.c — layers and their display defaults (see nw_layer.h). Created on any thread,
 * changed on the main thread only. */
#include "nw_layer.h"

#include <math.h>
#include <stdlib.h>

#include "nw_mat4.h"
#include "resample.h"

static const char *const show_names[NW_FIELD_SHOW_COUNT] = {"grid", "arrows", "magnitude",
                                                            "log-jacobian"};

const char *nw_field_show_name(NwFieldShow s)
{
  return s < NW_FIELD_SHOW_COUNT ? show_names[s] : "?";
}

gboolean nw_field_show_from_name(const char *name, NwFieldShow *s)
{
  for (int i = 0; i < NW_FIELD_SHOW_COUNT; i++)
    if (g_ascii_strcasecmp(name, show_names[i]) == 0) {
      *s = (NwFieldShow)i;
      return TRUE;
    }
  return FALSE;
}

static int cmp_float(const void *a, const void *b)
{
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

/* Value per voxel used for ranges: the scalar, or |u| in mm for fields. */
static float voxel_value(const NwVolume *v, size_t i)
{
  if (v->nc == 1)
    return v->data[i];
  double d[3] = {v->data[i * 3], v->data[i * 3 + 1], v->data[i * 3 + 2]}, mm[3];
  nw_mat4_apply_dir(v->vox_to_ras, d, mm);
  return (float)sqrt(mm[0] * mm[0] + mm[1] * mm[1] + mm[2] * mm[2]);
}

/* Min/max, and percentiles of a sample of at most 2^20 voxels. Images with a large zero
 * background (skull-stripped brains) take their percentiles over the non-zero voxels, so
 * that "auto" shows the tissue and not the empty space. */
static void compute_ranges(NwLayer *l)
{
  const NwVolume *v = l->volume;
  size_t n = nw_volume_n_voxels(v), stride = MAX(n >> 20, (size_t)1), n_zero = 0;
  GArray *s = g_array_new(FALSE, FALSE, sizeof(float));
  float lo = G_MAXFLOAT, hi = -G_MAXFLOAT;
  for (size_t i = 0; i < n; i++) {
    float x = voxel_value(v, i);
    if (!isfinite(x))
      continue;
    lo = MIN(lo, x);
    hi = MAX(hi, x);
    if (i % stride == 0)
      g_array_append_val(s, x);
  }
  if (lo > hi)
    lo = hi = 0.0f;
  l->data_min = lo;
  l->data_max = hi;
  for (guint i = 0; i < s->len; i++)
    n_zero += g_array_index(s, float, i) == 0.0f;
  if (n_zero > s->len / 10 && n_zero < s->len) {
    guint w = 0;
    for (guint i = 0; i < s->len; i++)
      if (g_array_index(s, float, i) != 0.0f)
        g_array_index(s, float, w++) = g_array_index(s, float, i);
    g_array_set_size(s, w);
  }
  l->robust_lo = lo;
  l->robust_hi = hi;
  if (s->len > 0) {
    qsort(s->data, s->len, sizeof(float), cmp_float);
    l->robust_lo = g_array_index(s, float, (guint)(0.005 * (s->len - 1)));
    l->robust_hi = g_array_index(s, float, (guint)(0.995 * (s->len - 1)));
    if (n_zero > 0 && l->kind == NW_LAYER_IMAGE)
      l->robust_lo = MIN(l->robust_lo, 0.0f); /* keep the background black */
  }
  if (l->robust_hi <= l->robust_lo) {
    /* a constant image: show it against zero (white if positive, black if negative) */
    float c = l->robust_lo;
    l->robust_lo = MIN(c, 0.0f);
    l->robust_hi = c != 0.0f ? MAX(c, 0.0f) : 1.0f;
  }
  g_array_free(s, TRUE);
}

NwLayer *nw_layer_new_volume(NwLayerKind kind, const char *name, NwVolume *volume)
{
  NwLayer *l = g_new0(NwLayer, 1);
  l->live_shown = -1;
  l->ref = 1;
  l->kind = kind;
  l->name = g_strdup(name);
  l->volume = volume;
  l->visible = TRUE;
  l->style.opacity = 1.0f;
  l->grid_step_vox = 4;
  l->color[0] = 1.0f, l->color[1] = 0.85f, l->color[2] = 0.2f;
  compute_ranges(l);
  l->style.lo = l->robust_lo;
  l->style.hi = l->robust_hi;
  switch (kind) {
  case NW_LAYER_LABELS:
    l->style.colormap = NW_COLORMAP_LABEL;
    l->style.opacity = 0.5f;
    break;
  case NW_LAYER_FIELD:
    l->style.colormap = NW_COLORMAP_HOT;
    l->style.lo = 0.0f;
    l->style.hi = MAX(l->data_max, 1e-3f);
    l->style.opacity = 0.8f;
    l->color[0] = 0.2f, l->color[1] = 0.9f, l->color[2] = 1.0f;
    break;
  default:
    l->style.colormap = NW_COLORMAP_GREY;
    break;
  }
  return l;
}

NwLayer *nw_layer_new_surface(const char *name, NwSurface *surface)
{
  NwLayer *l = g_new0(NwLayer, 1);
  l->live_shown = -1;
  l->ref = 1;
  l->kind = NW_LAYER_SURFACE;
  l->name = g_strdup(name);
  l->surface = surface;
  if (surface->normals == NULL)
    nw_surface_compute_normals(surface);
  l->visible = TRUE;
  l->style.colormap = NW_COLORMAP_TURBO;
  l->style.opacity = 1.0f;
  l->color[0] = 0.95f, l->color[1] = 0.75f, l->color[2] = 0.55f;
  if (surface->scalars != NULL && surface->n_vertices > 0) {
    l->data_min = l->data_max = surface->scalars[0];
    for (int i = 1; i < surface->n_vertices; i++) {
      l->data_min = MIN(l->data_min, surface->scalars[i]);
      l->data_max = MAX(l->data_max, surface->scalars[i]);
    }
  }
  l->robust_lo = l->style.lo = l->data_min;
  l->robust_hi = l->style.hi = l->data_max > l->data_min ? l->data_max : l->data_min + 1.0f;
  return l;
}

NwLayer *nw_layer_ref(NwLayer *l)
{
  g_atomic_int_inc(&l->ref);
  return l;
}

void nw_layer_unref(NwLayer *l)
{
  if (l == NULL || !g_atomic_int_dec_and_test(&l->ref))
    return;
  g_free(l->name);
  g_free(l->path);
  nw_volume_free(l->volume);
  nw_surface_free(l->surface);
  g_free(l);
}

gboolean nw_layer_value_at(const NwLayer *l, const double ras[3], double *value)
{
  const NwVolume *v = l->volume;
  if (v == NULL)
    return FALSE;
  double ijk[3];
  nw_volume_world_to_voxel(v, ras, ijk);
  if (ijk[0] < -0.5 || ijk[1] < -0.5 || ijk[2] < -0.5 || ijk[0] > v->nx - 0.5 ||
      ijk[1] > v->ny - 0.5 || ijk[2] > v->nz - 0.5)
    return FALSE;
  if (v->nc == 3) {
    double u[3], mm[3];
    for (int c = 0; c < 3; c++)
      u[c] = nw_sample_trilinear(v, c, ijk[0], ijk[1], ijk[2]);
    nw_mat4_apply_dir(v->vox_to_ras, u, mm);
    *value = sqrt(mm[0] * mm[0] + mm[1] * mm[1] + mm[2] * mm[2]);
  } else if (l->kind == NW_LAYER_LABELS) {
    *value = nw_sample_nearest(v, 0, ijk[0], ijk[1], ijk[2]);
  } else {
    *value = nw_sample_trilinear(v, 0, ijk[0], ijk[1], ijk[2]);
  }
  return TRUE;
}

void nw_layer_set_window_level(NwLayer *l, double window, double level)
{
  double span = MAX(fabs((double)l->data_max - l->data_min), 1e-6);
  window = MAX(window, span * 1e-4);
  l->style.lo = (float)(level - 0.5 * window);
  l->style.hi = (float)(level + 0.5 * window);
}

float nw_layer_surface_iso(const NwLayer *image)
{
  return 0.4f * image->robust_hi;
}

gboolean nw_layer_apply_window_preset(NwLayer *l, const char *preset)
{
  if (g_strcmp0(preset, "auto") == 0) {
    l->style.lo = l->robust_lo;
    l->style.hi = l->robust_hi;
  } else if (g_strcmp0(preset, "full") == 0) {
    l->style.lo = l->data_min;
    l->style.hi = l->data_max > l->data_min ? l->data_max : l->data_min + 1.0f;
  } else if (g_strcmp0(preset, "ct-brain") == 0) {
    nw_layer_set_window_level(l, 80, 40);
  } else if (g_strcmp0(preset, "ct-bone") == 0) {
    nw_layer_set_window_level(l, 2000, 500);
  } else if (g_strcmp0(preset, "ct-soft") == 0) {
    nw_layer_set_window_level(l, 400, 40);
  } else {
    return FALSE;
  }
  return TRUE;
}

gboolean nw_volume_looks_like_labels(const NwVolume *v)
{
  if (v->nc != 1)
    return FALSE;
  GHashTable *seen = g_hash_table_new(g_direct_hash, g_direct_equal);
  gboolean ok = TRUE;
  size_t n = nw_volume_n_voxels(v);
  for (size_t i = 0; i < n && ok; i++) {
    float x = v->data[i];
    if (!isfinite(x))
      continue;
    if (x < 0.0f || x != floorf(x) || x > 65535.0f)
      ok = FALSE;
    else
      g_hash_table_add(seen, GINT_TO_POINTER((int)x + 1));
    if (g_hash_table_size(seen) > 1024)
      ok = FALSE;
  }
  ok = ok && g_hash_table_size(seen) >= 2;
  g_hash_table_destroy(seen);
  return ok;
}
