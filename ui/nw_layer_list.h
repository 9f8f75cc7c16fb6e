/* nw_layer_list.h — the layer list beside the views: per layer a visibility switch,
 * opacity, colour map, value range and (fields) how the field is drawn; clicking a row makes
 * that layer the active one (window/level drags and presets act on it); the top row is the
 * layer drawn on top, and each row's arrows move its layer up or down the drawing order
 * (nw_scene_move_layer). Rebuilt when the
 * scene's layers change ("layers-changed"); a row takes its layer's new values when a
 * setting changes elsewhere ("layer-changed": a script, a drag, a preset). Edits go through
 * the layer's setters (nw_layer.h). Main thread only. */
#ifndef NW_LAYER_LIST_H
#define NW_LAYER_LIST_H

#include <gtk/gtk.h>

#include "nw_scene.h"

G_BEGIN_DECLS

#define NW_TYPE_LAYER_LIST (nw_layer_list_get_type())
G_DECLARE_FINAL_TYPE(NwLayerList, nw_layer_list, NW, LAYER_LIST, GtkBox)

NwLayerList *nw_layer_list_new(NwScene *scene);
/* The layers of the rows, top row first, a pending rebuild done first (g_ptr_array_unref;
 * borrowed layers). */
GPtrArray *nw_layer_list_get_rows(NwLayerList *ll);

G_END_DECLS

#endif
