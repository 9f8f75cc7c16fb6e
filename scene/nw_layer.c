/* nw_layer.c — layers, their display defaults and rules (see nw_layer.h). Created on any
 * thread, changed on the main thread only (once handed over). The only file that writes a
 * layer's fields. */
#include "nw_layer.h"

#include <math.h>
#include <string.h>
#include <stdlib.h>

#include "field.h"
#include "nw_mat4.h"
#include "resample.h"

struct _NwLayer {
  GObject parent;
  NwLayerKind kind;
  char *name;
  char *path;
  NwVolume *volume;   /* image / labels (nc 1) or field (nc 3, voxel units); owned */
  NwSurface *surface; /* surfaces; owned, with normals */
  gboolean visible;
  NwLayerStyle style;
  float color[3];
  NwFieldShow field_show;
  gboolean overlay; /* a map over the anatomy, not an image to compare */
  NwLabelTable *label_table; /* label maps: names and colours, or NULL */
  int grid_step_vox;
  float data_min, data_max;   /* finite values (fields: |u| in mm; surfaces: scalars) */
  float robust_lo, robust_hi; /* the "auto" window: 0.5 and 99.5 percentiles of the
                                 foreground */
  guint generation;
  NwLiveSource *live; /* borrowed from the run */
  float live_iso;
  int live_shown;
};

G_DEFINE_TYPE(NwLayer, nw_layer, G_TYPE_OBJECT)

enum { SIG_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

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

static void nw_layer_finalize(GObject *obj)
{
  NwLayer *l = NW_LAYER(obj);
  g_free(l->name);
  g_free(l->path);
  nw_volume_free(l->volume);
  nw_surface_free(l->surface);
  nw_label_table_unref(l->label_table);
  G_OBJECT_CLASS(nw_layer_parent_class)->finalize(obj);
}

static void nw_layer_class_init(NwLayerClass *klass)
{
  G_OBJECT_CLASS(klass)->finalize = nw_layer_finalize;
  signals[SIG_CHANGED] = g_signal_new("changed", NW_TYPE_LAYER, G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                      NULL, G_TYPE_NONE, 0);
}

/* What every layer starts with; the constructors set what depends on the kind. */
static void nw_layer_init(NwLayer *l)
{
  l->visible = TRUE;
  l->style.opacity = 1.0f;
  l->grid_step_vox = 4;
  l->live_shown = -1;
}

static void changed(NwLayer *l)
{
  g_signal_emit(l, signals[SIG_CHANGED], 0);
}

NwLayer *nw_layer_new_volume(NwLayerKind kind, const char *name, NwVolume *volume)
{
  NwLayer *l = g_object_new(NW_TYPE_LAYER, NULL);
  l->kind = kind;
  l->name = g_strdup(name);
  l->volume = volume;
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
  NwLayer *l = g_object_new(NW_TYPE_LAYER, NULL);
  l->kind = NW_LAYER_SURFACE;
  l->name = g_strdup(name);
  l->surface = surface;
  if (surface->normals == NULL)
    nw_surface_compute_normals(surface);
  l->style.colormap = NW_COLORMAP_TURBO;
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

/* ---- what it is ---- */

NwLayerKind nw_layer_get_kind(NwLayer *l)
{
  return l->kind;
}

const char *nw_layer_get_name(NwLayer *l)
{
  return l->name;
}

const char *nw_layer_get_path(NwLayer *l)
{
  return l->path;
}

void nw_layer_set_path(NwLayer *l, const char *path)
{
  char *copy = g_strdup(path);
  g_free(l->path);
  l->path = copy;
}

const NwVolume *nw_layer_get_volume(NwLayer *l)
{
  return l->volume;
}

const NwSurface *nw_layer_get_surface(NwLayer *l)
{
  return l->surface;
}

void nw_layer_get_data_range(NwLayer *l, float *min, float *max)
{
  *min = l->data_min;
  *max = l->data_max;
}

guint nw_layer_get_generation(NwLayer *l)
{
  return l->generation;
}

/* ---- new data ---- */

NwVolume *nw_layer_swap_volume(NwLayer *l, NwVolume *volume)
{
  NwVolume *replaced = l->volume;
  l->volume = volume;
  l->generation++;
  return replaced;
}

void nw_layer_take_volume(NwLayer *l, NwVolume *volume)
{
  nw_volume_free(nw_layer_swap_volume(l, volume));
}

void nw_layer_take_surface(NwLayer *l, NwSurface *surface)
{
  if (surface->normals == NULL)
    nw_surface_compute_normals(surface);
  nw_surface_free(l->surface);
  l->surface = surface;
  l->generation++;
}

/* ---- display settings ---- */

gboolean nw_layer_get_visible(NwLayer *l)
{
  return l->visible;
}

void nw_layer_set_visible(NwLayer *l, gboolean visible)
{
  visible = !!visible;
  if (l->visible != visible) {
    l->visible = visible;
    changed(l);
  }
}

const NwLayerStyle *nw_layer_get_style(NwLayer *l)
{
  return &l->style;
}

static gboolean style_equal(const NwLayerStyle *a, const NwLayerStyle *b)
{
  return a->colormap == b->colormap && a->lo == b->lo && a->hi == b->hi &&
         a->opacity == b->opacity && a->clear_below == b->clear_below &&
         a->clear_centre == b->clear_centre;
}

void nw_layer_set_style(NwLayer *l, const NwLayerStyle *style)
{
  if (!style_equal(&l->style, style)) {
    l->style = *style;
    changed(l);
  }
}

void nw_layer_set_colormap(NwLayer *l, NwColormap colormap)
{
  NwLayerStyle st = l->style;
  st.colormap = colormap;
  nw_layer_set_style(l, &st);
}

void nw_layer_set_range(NwLayer *l, float lo, float hi)
{
  NwLayerStyle st = l->style;
  st.lo = lo;
  st.hi = hi;
  nw_layer_set_style(l, &st);
}

void nw_layer_set_opacity(NwLayer *l, float opacity)
{
  NwLayerStyle st = l->style;
  st.opacity = opacity;
  nw_layer_set_style(l, &st);
}

void nw_layer_get_auto_window(NwLayer *l, float *lo, float *hi)
{
  *lo = l->robust_lo;
  *hi = l->robust_hi;
}

void nw_layer_set_auto_window(NwLayer *l, float lo, float hi)
{
  l->robust_lo = lo;
  l->robust_hi = hi;
}

const float *nw_layer_get_color(NwLayer *l)
{
  return l->color;
}

void nw_layer_set_color(NwLayer *l, const float rgb[3])
{
  if (memcmp(l->color, rgb, sizeof l->color) == 0)
    return;
  memcpy(l->color, rgb, sizeof l->color);
  changed(l);
}

/* Half the symmetric log-Jacobian range of a field: holds its log det J, a round number in
 * steps of 0.05 between 0.05 and 2; 0.5 when the determinant map cannot be made. */
static float log_jacobian_range(const NwVolume *field)
{
  double r = 0.5;
  g_autoptr(NwVolume) det = field != NULL ? nw_volume_new_like(field, 1, NULL) : NULL;
  if (det != NULL) {
    NwJacobianStats st;
    nw_field_jacobian_det(det, field);
    nw_jacobian_stats(det, &st);
    r = MAX(fabs(log(MAX(st.min, 1e-3))), fabs(log(MAX(st.max, 1e-3))));
    r = CLAMP(ceil(r * 20.0) / 20.0, 0.05, 2.0);
  }
  return (float)r;
}

void nw_layer_show_as_jacobian(NwLayer *l, gboolean log_scale)
{
  const double centre = log_scale ? 0.0 : 1.0, top = log_scale ? 2.0 : 1.0;
  double r = MAX(fabs(l->robust_lo - centre), fabs(l->robust_hi - centre));
  r = CLAMP(ceil(r * 20.0) / 20.0, 0.05, top);
  NwLayerStyle st = {.colormap = NW_COLORMAP_DIVERGING,
                     .lo = (float)(centre - r),
                     .hi = (float)(centre + r),
                     .opacity = 0.7f,
                     .clear_centre = TRUE};
  l->overlay = TRUE;
  nw_layer_set_style(l, &st);
}

gboolean nw_layer_is_overlay(NwLayer *l)
{
  return l->overlay;
}

NwFieldShow nw_layer_get_field_show(NwLayer *l)
{
  return l->field_show;
}

void nw_layer_set_field_show(NwLayer *l, NwFieldShow show)
{
  g_return_if_fail(show < NW_FIELD_SHOW_COUNT);
  NwLayerStyle st = l->style;
  if (show == NW_FIELD_SHOW_LOG_JACOBIAN) {
    const float r = log_jacobian_range(l->volume);
    st.colormap = NW_COLORMAP_DIVERGING;
    st.lo = -r;
    st.hi = r;
  } else if (show == NW_FIELD_SHOW_MAGNITUDE) {
    st.colormap = NW_COLORMAP_HOT;
    st.lo = 0.0f;
    st.hi = MAX(l->data_max, 1e-3f);
  }
  const gboolean same = l->field_show == show && style_equal(&st, &l->style);
  l->field_show = show;
  l->style = st;
  if (!same)
    changed(l);
}

int nw_layer_get_grid_step(NwLayer *l)
{
  return l->grid_step_vox;
}

void nw_layer_set_grid_step(NwLayer *l, int step_vox)
{
  step_vox = MAX(step_vox, 1);
  if (l->grid_step_vox != step_vox) {
    l->grid_step_vox = step_vox;
    changed(l);
  }
}

/* ---- label names ---- */

void nw_layer_set_label_table(NwLayer *l, NwLabelTable *table)
{
  if (table == l->label_table)
    return;
  nw_label_table_unref(l->label_table);
  l->label_table = table;
  changed(l);
}

NwLabelTable *nw_layer_get_label_table(NwLayer *l)
{
  return l->label_table;
}

const char *nw_layer_get_label_name(NwLayer *l, int label)
{
  return l->label_table != NULL ? nw_label_table_name(l->label_table, label) : NULL;
}

/* ---- live layers ---- */

void nw_layer_set_live(NwLayer *l, NwLiveSource *live, float iso)
{
  l->live = live;
  l->live_iso = iso;
}

NwLiveSource *nw_layer_get_live(NwLayer *l)
{
  return l->live;
}

float nw_layer_get_live_iso(NwLayer *l)
{
  return l->live_iso;
}

int nw_layer_get_live_shown(NwLayer *l)
{
  return l->live_shown;
}

void nw_layer_note_live_shown(NwLayer *l, int iteration)
{
  l->live_shown = MAX(l->live_shown, iteration);
}

/* ---- reading ---- */

gboolean nw_layer_value_at(NwLayer *l, const double ras[3], double *value)
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
  nw_layer_set_range(l, (float)(level - 0.5 * window), (float)(level + 0.5 * window));
}

float nw_layer_surface_iso(NwLayer *image)
{
  return 0.4f * image->robust_hi;
}

gboolean nw_layer_apply_window_preset(NwLayer *l, const char *preset)
{
  if (g_strcmp0(preset, "auto") == 0) {
    nw_layer_set_range(l, l->robust_lo, l->robust_hi);
  } else if (g_strcmp0(preset, "full") == 0) {
    nw_layer_set_range(l, l->data_min,
                       l->data_max > l->data_min ? l->data_max : l->data_min + 1.0f);
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
