/* nw_scene.h — what the window shows: the layers in drawing order, the linked crosshair
 * (world RAS mm), the pair of images being compared and how, and the active layer (the one
 * window/level drags change). Every view draws the same scene. Main thread only.
 *
 * The scene is the one place that emits its signals: its setters do, and it passes on the
 * "changed" of each layer it holds (nw_layer.h), so that whoever changes a setting of a
 * layer or of the scene only calls the setter.
 *   "changed"         something visible changed: views redraw
 *   "layers-changed"  layers were added or removed, or the active layer, the compared pair
 *                     or the comparison mode changed (the layer list is rebuilt, the
 *                     comparison bar follows)
 *   "layer-changed"   (NwLayer *layer) a display setting of that layer changed (the layer
 *                     list shows the new values)
 *   "crosshair-moved" the crosshair moved (the status bar follows) */
#ifndef NW_SCENE_H
#define NW_SCENE_H

#include <glib-object.h>

#include "nw_layer.h"
#include "renderer.h"

G_BEGIN_DECLS

#define NW_TYPE_SCENE (nw_scene_get_type())
G_DECLARE_FINAL_TYPE(NwScene, nw_scene, NW, SCENE, GObject)

NwScene *nw_scene_new(void);

/* Layers, bottom first. The scene keeps a reference. The first two images (not overlays,
 * nw_layer_is_overlay) become the compared pair A and B. */
void nw_scene_add_layer(NwScene *s, NwLayer *layer);
void nw_scene_remove_layer(NwScene *s, NwLayer *layer);
guint nw_scene_n_layers(NwScene *s);
NwLayer *nw_scene_get_layer(NwScene *s, guint i);
/* Move layer to place index of the drawing order (0: the bottom; clamped to the top). */
void nw_scene_move_layer(NwScene *s, NwLayer *layer, guint index);
/* Place of layer in the drawing order; -1 when the scene does not hold it. */
int nw_scene_layer_index(NwScene *s, NwLayer *layer);
/* First layer with this name, or NULL. */
NwLayer *nw_scene_find_layer(NwScene *s, const char *name);

NwLayer *nw_scene_get_active(NwScene *s);
void nw_scene_set_active(NwScene *s, NwLayer *layer);

/* Compared images (may be NULL) and the comparison settings. */
NwLayer *nw_scene_get_compare_a(NwScene *s);
NwLayer *nw_scene_get_compare_b(NwScene *s);
void nw_scene_set_compare_pair(NwScene *s, NwLayer *a, NwLayer *b);
const NwCompareStyle *nw_scene_get_compare(NwScene *s);
/* Every comparison setting at once (blend, tile, curtain, colours, flicker phase). */
void nw_scene_set_compare(NwScene *s, const NwCompareStyle *compare);
/* The mode, back to image A in flicker. */
void nw_scene_set_compare_mode(NwScene *s, NwCompareMode mode);
/* TRUE when A and B exist, are visible and a comparison mode is on. */
gboolean nw_scene_comparing(NwScene *s);

void nw_scene_get_crosshair(NwScene *s, double ras[3]);
void nw_scene_set_crosshair(NwScene *s, const double ras[3]);

/* Radiological convention: the axial and coronal views show the patient's right on the
 * screen's left (as Slicer does by default); FALSE (the default): neurological, right on
 * the right. Emits "changed". */
void nw_scene_set_radiological(NwScene *s, gboolean radiological);
gboolean nw_scene_get_radiological(NwScene *s);

/* World box (RAS mm) of all volume layers (else surfaces; else a 200 mm cube). */
void nw_scene_get_bounds(NwScene *s, double lo[3], double hi[3]);
/* TRUE when the scene holds 2D images only: at least one volume layer, every volume layer
 * a single slice (nz == 1) and no surface. Such a scene has nothing to show across slices
 * (the window then shows the axial view alone). */
gboolean nw_scene_is_flat(NwScene *s);
/* Voxel size (mm) of the first volume layer along world axis `axis`, for slice steps. */
double nw_scene_slice_step(NwScene *s, int axis);

/* Ask the views to redraw: new data in the layers (a run's frames and results, which
 * nw_layer_take_volume does not announce). Settings announce themselves. */
void nw_scene_changed(NwScene *s);

/* Whether the views' GL contexts can take live CUDA frames by interop, as the axial view
 * found when it was realized (FALSE until then), and why not. Runs read it when they start. */
void nw_scene_set_interop(NwScene *s, gboolean ok, const char *why);
gboolean nw_scene_get_interop(NwScene *s, const char **why);

G_END_DECLS

#endif
