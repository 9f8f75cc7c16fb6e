/* nw_scene.c — the shared document of the views (see nw_scene.h). Main thread only. */
#include "nw_scene.h"

#include <math.h>

#include "view_geometry.h"

struct _NwScene {
  GObject parent;
  GPtrArray *layers;                       /* NwLayer*, owned */
  NwLayer *active, *compare_a, *compare_b; /* borrowed from layers */
  NwCompareStyle compare;
  double crosshair[3];
  gboolean crosshair_set;
  gboolean radiological; /* axial and coronal views mirrored left-right */
  gboolean interop; /* live CUDA frames can reach the views by interop */
  char *interop_why;
};

G_DEFINE_TYPE(NwScene, nw_scene, G_TYPE_OBJECT)

enum { SIG_CHANGED, SIG_LAYERS_CHANGED, SIG_LAYER_CHANGED, SIG_CROSSHAIR_MOVED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void nw_scene_finalize(GObject *obj)
{
  NwScene *s = NW_SCENE(obj);
  for (guint i = 0; i < s->layers->len; i++)
    g_signal_handlers_disconnect_by_data(g_ptr_array_index(s->layers, i), s);
  g_ptr_array_unref(s->layers);
  g_free(s->interop_why);
  G_OBJECT_CLASS(nw_scene_parent_class)->finalize(obj);
}

static void nw_scene_class_init(NwSceneClass *klass)
{
  G_OBJECT_CLASS(klass)->finalize = nw_scene_finalize;
  signals[SIG_CHANGED] = g_signal_new("changed", NW_TYPE_SCENE, G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                      NULL, G_TYPE_NONE, 0);
  signals[SIG_LAYERS_CHANGED] = g_signal_new("layers-changed", NW_TYPE_SCENE, G_SIGNAL_RUN_LAST, 0,
                                             NULL, NULL, NULL, G_TYPE_NONE, 0);
  signals[SIG_LAYER_CHANGED] = g_signal_new("layer-changed", NW_TYPE_SCENE, G_SIGNAL_RUN_LAST, 0,
                                            NULL, NULL, NULL, G_TYPE_NONE, 1, NW_TYPE_LAYER);
  signals[SIG_CROSSHAIR_MOVED] = g_signal_new("crosshair-moved", NW_TYPE_SCENE, G_SIGNAL_RUN_LAST,
                                              0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void nw_scene_init(NwScene *s)
{
  s->layers = g_ptr_array_new_with_free_func(g_object_unref);
  nw_compare_style_init(&s->compare);
}

NwScene *nw_scene_new(void)
{
  return g_object_new(NW_TYPE_SCENE, NULL);
}

void nw_scene_changed(NwScene *s)
{
  g_signal_emit(s, signals[SIG_CHANGED], 0);
}

/* A layer's display setting changed: the list shows it, the views draw it. */
static void on_layer_changed(NwLayer *layer, NwScene *s)
{
  g_signal_emit(s, signals[SIG_LAYER_CHANGED], 0, layer);
  nw_scene_changed(s);
}

void nw_scene_add_layer(NwScene *s, NwLayer *layer)
{
  g_ptr_array_add(s->layers, g_object_ref(layer));
  g_signal_connect(layer, "changed", G_CALLBACK(on_layer_changed), s);
  const NwLayerKind kind = nw_layer_get_kind(layer);
  if (kind == NW_LAYER_IMAGE && !nw_layer_is_overlay(layer)) {
    if (s->compare_a == NULL)
      s->compare_a = layer;
    else if (s->compare_b == NULL)
      s->compare_b = layer;
  }
  if (s->active == NULL && kind != NW_LAYER_SURFACE)
    s->active = layer;
  if (!s->crosshair_set &&
      (nw_layer_get_volume(layer) != NULL || nw_layer_get_surface(layer) != NULL)) {
    /* start at the centre of the first volume (or surface) */
    double lo[3], hi[3];
    nw_scene_get_bounds(s, lo, hi);
    for (int a = 0; a < 3; a++)
      s->crosshair[a] = 0.5 * (lo[a] + hi[a]);
    s->crosshair_set = TRUE;
    g_signal_emit(s, signals[SIG_CROSSHAIR_MOVED], 0);
  }
  g_signal_emit(s, signals[SIG_LAYERS_CHANGED], 0);
  nw_scene_changed(s);
}

void nw_scene_remove_layer(NwScene *s, NwLayer *layer)
{
  if (s->active == layer)
    s->active = NULL;
  if (s->compare_a == layer)
    s->compare_a = NULL;
  if (s->compare_b == layer)
    s->compare_b = NULL;
  if (g_ptr_array_find(s->layers, layer, NULL))
    g_signal_handlers_disconnect_by_data(layer, s);
  g_ptr_array_remove(s->layers, layer);
  g_signal_emit(s, signals[SIG_LAYERS_CHANGED], 0);
  nw_scene_changed(s);
}

int nw_scene_layer_index(NwScene *s, NwLayer *layer)
{
  guint i;
  return g_ptr_array_find(s->layers, layer, &i) ? (int)i : -1;
}

void nw_scene_move_layer(NwScene *s, NwLayer *layer, guint index)
{
  const int from = nw_scene_layer_index(s, layer);
  index = MIN(index, s->layers->len - 1);
  if (from < 0 || (guint)from == index)
    return;
  g_ptr_array_steal_index(s->layers, (guint)from); /* keeps the scene's reference */
  g_ptr_array_insert(s->layers, (int)index, layer);
  g_signal_emit(s, signals[SIG_LAYERS_CHANGED], 0);
  nw_scene_changed(s);
}

guint nw_scene_n_layers(NwScene *s)
{
  return s->layers->len;
}

NwLayer *nw_scene_get_layer(NwScene *s, guint i)
{
  return i < s->layers->len ? g_ptr_array_index(s->layers, i) : NULL;
}

NwLayer *nw_scene_find_layer(NwScene *s, const char *name)
{
  for (guint i = 0; i < s->layers->len; i++) {
    NwLayer *l = g_ptr_array_index(s->layers, i);
    if (g_strcmp0(nw_layer_get_name(l), name) == 0)
      return l;
  }
  return NULL;
}

NwLayer *nw_scene_get_active(NwScene *s)
{
  return s->active;
}

void nw_scene_set_active(NwScene *s, NwLayer *layer)
{
  if (s->active == layer)
    return;
  s->active = layer;
  g_signal_emit(s, signals[SIG_LAYERS_CHANGED], 0);
}

NwLayer *nw_scene_get_compare_a(NwScene *s)
{
  return s->compare_a;
}

NwLayer *nw_scene_get_compare_b(NwScene *s)
{
  return s->compare_b;
}

void nw_scene_set_compare_pair(NwScene *s, NwLayer *a, NwLayer *b)
{
  if (s->compare_a == a && s->compare_b == b)
    return;
  s->compare_a = a;
  s->compare_b = b;
  g_signal_emit(s, signals[SIG_LAYERS_CHANGED], 0);
  nw_scene_changed(s);
}

const NwCompareStyle *nw_scene_get_compare(NwScene *s)
{
  return &s->compare;
}

void nw_scene_set_compare(NwScene *s, const NwCompareStyle *compare)
{
  s->compare = *compare;
  nw_scene_changed(s);
}

void nw_scene_set_compare_mode(NwScene *s, NwCompareMode mode)
{
  s->compare.mode = mode;
  s->compare.show_b = FALSE;
  g_signal_emit(s, signals[SIG_LAYERS_CHANGED], 0); /* the comparison bar names the mode */
  nw_scene_changed(s);
}

gboolean nw_scene_comparing(NwScene *s)
{
  return s->compare.mode != NW_COMPARE_NONE && s->compare_a != NULL && s->compare_b != NULL &&
         nw_layer_get_visible(s->compare_a) && nw_layer_get_visible(s->compare_b);
}

void nw_scene_get_crosshair(NwScene *s, double ras[3])
{
  for (int a = 0; a < 3; a++)
    ras[a] = s->crosshair[a];
}

void nw_scene_set_crosshair(NwScene *s, const double ras[3])
{
  for (int a = 0; a < 3; a++)
    s->crosshair[a] = ras[a];
  s->crosshair_set = TRUE;
  g_signal_emit(s, signals[SIG_CROSSHAIR_MOVED], 0);
  nw_scene_changed(s);
}

void nw_scene_set_radiological(NwScene *s, gboolean radiological)
{
  if (s->radiological != !!radiological) {
    s->radiological = !!radiological;
    nw_scene_changed(s);
  }
}

gboolean nw_scene_get_radiological(NwScene *s)
{
  return s->radiological;
}

gboolean nw_scene_is_flat(NwScene *s)
{
  gboolean any_volume = FALSE;
  for (guint i = 0; i < s->layers->len; i++) {
    const NwVolume *v = nw_layer_get_volume(g_ptr_array_index(s->layers, i));
    if (v == NULL || v->nz > 1) /* a surface, or a volume: the other views have content */
      return FALSE;
    any_volume = TRUE;
  }
  return any_volume;
}

void nw_scene_get_bounds(NwScene *s, double lo[3], double hi[3])
{
  gboolean any = FALSE;
  for (int pass = 0; pass < 2 && !any; pass++)
    for (guint i = 0; i < s->layers->len; i++) {
      NwLayer *l = g_ptr_array_index(s->layers, i);
      const NwVolume *v = nw_layer_get_volume(l);
      const NwSurface *surf = nw_layer_get_surface(l);
      double a[3], b[3];
      if (pass == 0 && v != NULL) {
        nw_volume_world_bounds(v, a, b);
      } else if (pass == 1 && surf != NULL && surf->n_vertices > 0) {
        float fa[3], fb[3];
        nw_surface_bounds(surf, fa, fb);
        for (int k = 0; k < 3; k++)
          a[k] = fa[k], b[k] = fb[k];
      } else {
        continue;
      }
      for (int k = 0; k < 3; k++) {
        lo[k] = any ? MIN(lo[k], a[k]) : a[k];
        hi[k] = any ? MAX(hi[k], b[k]) : b[k];
      }
      any = TRUE;
    }
  if (!any)
    for (int k = 0; k < 3; k++)
      lo[k] = -100.0, hi[k] = 100.0;
}

double nw_scene_slice_step(NwScene *s, int axis)
{
  for (guint i = 0; i < s->layers->len; i++) {
    const NwVolume *v = nw_layer_get_volume(g_ptr_array_index(s->layers, i));
    if (v != NULL) {
      /* the column of vox_to_ras that points most along the world axis */
      double best = 0.0, step = 1.0;
      for (int c = 0; c < 3; c++) {
        double n = 0.0;
        for (int r = 0; r < 3; r++)
          n += v->vox_to_ras[r * 4 + c] * v->vox_to_ras[r * 4 + c];
        n = sqrt(n);
        double along = n > 0 ? fabs(v->vox_to_ras[axis * 4 + c]) / n : 0.0;
        if (along > best)
          best = along, step = n;
      }
      return step;
    }
  }
  return 1.0;
}

void nw_scene_set_interop(NwScene *s, gboolean ok, const char *why)
{
  s->interop = ok;
  g_free(s->interop_why);
  s->interop_why = g_strdup(ok ? "" : why);
}

gboolean nw_scene_get_interop(NwScene *s, const char **why)
{
  if (why != NULL)
    *why = s->interop_why != NULL ? s->interop_why : "the views have not been shown yet";
  return s->interop;
}
