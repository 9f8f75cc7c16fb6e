/* nw_layer.h — one thing shown in the views: an image, a label map, a displacement field
 * (drawn as a warped grid, arrows, magnitude or log-Jacobian map) or a surface, with its
 * display settings.
 *
 * Only nw_layer.c writes a layer's fields: everyone else reads them through the getters and
 * changes them through the setters below, which keep the display rules (default styles per
 * kind, window presets, how a field is coloured for each way of drawing it) in one place.
 * The loader makes layers on a worker thread and hands them to the main thread, which alone
 * changes them afterwards.
 *
 * Signal "changed": a display setting changed (visibility, style, field drawing, grid step);
 * emitted by the setters, only when the value changes. The scene holding the layer passes it
 * on (nw_scene.h). New data (nw_layer_take_volume / _surface) and the live source emit
 * nothing: the views re-upload when the generation moves, and whoever replaces the data asks
 * for the redraw (a run's frames are taken while the views draw). */
#ifndef NW_LAYER_H
#define NW_LAYER_H

#include <glib-object.h>

#include "live_source.h"
#include "nw_label_table.h"
#include "renderer.h"
#include "surface.h"
#include "volume.h"

G_BEGIN_DECLS

typedef enum { NW_LAYER_IMAGE, NW_LAYER_LABELS, NW_LAYER_FIELD, NW_LAYER_SURFACE } NwLayerKind;

typedef enum {
  NW_FIELD_SHOW_GRID,
  NW_FIELD_SHOW_ARROWS,
  NW_FIELD_SHOW_MAGNITUDE,
  NW_FIELD_SHOW_LOG_JACOBIAN,
  NW_FIELD_SHOW_COUNT
} NwFieldShow;

/* "grid", "arrows", "magnitude", "log-jacobian" */
const char *nw_field_show_name(NwFieldShow s);
gboolean nw_field_show_from_name(const char *name, NwFieldShow *s);

#define NW_TYPE_LAYER (nw_layer_get_type())
G_DECLARE_FINAL_TYPE(NwLayer, nw_layer, NW, LAYER, GObject)

/* Takes ownership of volume (image / labels: nc 1; field: nc 3, voxel units). Picks the
 * colour map and range for the kind. */
NwLayer *nw_layer_new_volume(NwLayerKind kind, const char *name, NwVolume *volume);
/* Takes ownership of surface (computes normals when missing). */
NwLayer *nw_layer_new_surface(const char *name, NwSurface *surface);

/* ---- what it is ---- */
NwLayerKind nw_layer_get_kind(NwLayer *l);
const char *nw_layer_get_name(NwLayer *l); /* shown in the layer list: "fixed", a file name */
const char *nw_layer_get_path(NwLayer *l); /* the file it came from, or NULL */
void nw_layer_set_path(NwLayer *l, const char *path);
const NwVolume *nw_layer_get_volume(NwLayer *l);   /* NULL for surfaces */
const NwSurface *nw_layer_get_surface(NwLayer *l); /* NULL for volumes; with normals */
/* Finite values at creation (fields: |u| in mm; surfaces: scalars). */
void nw_layer_get_data_range(NwLayer *l, float *min, float *max);
/* Bumped when the data change: the views re-upload. */
guint nw_layer_get_generation(NwLayer *l);

/* ---- new data (main thread once the layer is shown; no "changed") ---- */
/* Replace the volume (taken) or the surface (taken; normals computed when missing). */
void nw_layer_take_volume(NwLayer *l, NwVolume *volume);
/* The same, returning the volume replaced (the caller's now, e.g. a live frame's to recycle). */
NwVolume *nw_layer_swap_volume(NwLayer *l, NwVolume *volume);
void nw_layer_take_surface(NwLayer *l, NwSurface *surface);

/* ---- display settings ---- */
gboolean nw_layer_get_visible(NwLayer *l);
void nw_layer_set_visible(NwLayer *l, gboolean visible);
/* Colour map, range [lo, hi], opacity. */
const NwLayerStyle *nw_layer_get_style(NwLayer *l);
/* The whole style at once, e.g. another layer's so that two images compare like with like. */
void nw_layer_set_style(NwLayer *l, const NwLayerStyle *style);
void nw_layer_set_colormap(NwLayer *l, NwColormap colormap);
void nw_layer_set_range(NwLayer *l, float lo, float hi);
void nw_layer_set_opacity(NwLayer *l, float opacity);
/* Window (width) and level (centre) -> range; the width is kept above zero. */
void nw_layer_set_window_level(NwLayer *l, double window, double level);
/* Window presets: "auto" (the auto window), "full" (min..max), "ct-brain" (W 80 L 40),
 * "ct-bone" (W 2000 L 500), "ct-soft" (W 400 L 40). FALSE for an unknown name. */
gboolean nw_layer_apply_window_preset(NwLayer *l, const char *preset);
/* The "auto" window: 0.5 and 99.5 percentiles of the foreground at creation; a run sets
 * its warped image's to the fixed image's so that both are shown alike. */
void nw_layer_get_auto_window(NwLayer *l, float *lo, float *hi);
void nw_layer_set_auto_window(NwLayer *l, float lo, float hi);
/* Surfaces without scalars, field grid and arrows: RGB, 0..1. */
const float *nw_layer_get_color(NwLayer *l);
/* Another colour for them (e.g. a second surface told apart from the first); emits "changed". */
void nw_layer_set_color(NwLayer *l, const float rgb[3]);

/* An image of det J (log_scale FALSE: neutral at 1) or of log det J (TRUE: neutral at 0),
 * the way Jacobian maps are read: a diverging overlay, red where the transformation expands,
 * blue where it compresses, over a range symmetric about the neutral value that holds the
 * image's 0.5..99.5 % values, rounded up to 0.05 (0.05..1 for det J, 0.05..2 for log det J);
 * opacity 0.7, the neutral middle transparent so that the anatomy shows where nothing
 * changes. Such a map is an overlay: it is not one of the images compared. */
void nw_layer_show_as_jacobian(NwLayer *l, gboolean log_scale);
/* TRUE for an image drawn over the anatomy (a Jacobian map) rather than one to compare. */
gboolean nw_layer_is_overlay(NwLayer *l);

/* How a field is drawn. The one display rule of fields: a log-Jacobian map gets the
 * diverging colour map over a symmetric range around 0 (no volume change) that holds the
 * field's log det J, rounded up to 0.05 and between 0.05 and 2 (0.5 when it cannot be
 * computed); a magnitude map the hot colour map over 0 .. max(|u| max, 0.001) mm. The grid
 * and arrows keep the style. */
NwFieldShow nw_layer_get_field_show(NwLayer *l);
void nw_layer_set_field_show(NwLayer *l, NwFieldShow show);
/* Grid lines / arrows every step voxels (>= 1). */
int nw_layer_get_grid_step(NwLayer *l);
void nw_layer_set_grid_step(NwLayer *l, int step_vox);

/* Label maps: the names and colours of their labels (nw_label_table.h; taken: a reference);
 * NULL: bare numbers in the default colours. Emits "changed". */
void nw_layer_set_label_table(NwLayer *l, NwLabelTable *table);
NwLabelTable *nw_layer_get_label_table(NwLayer *l);
/* The label's name in the layer's table, or NULL. */
const char *nw_layer_get_label_name(NwLayer *l, int label);

/* ---- live layers (of a running job, nw_run.h) ---- */
/* The job's frame source (render/live_source.h), which the views ask for a frame once per
 * display frame; NULL: the layer shows its host data. On the interop path the views fill
 * shared GL objects from the source's front instead of uploading the volume / surface,
 * which then hold the last host copy; on the host path the run moves each frame into the
 * volume. Borrowed from the run, which clears it before freeing the source. iso: the level
 * of a live surface. */
void nw_layer_set_live(NwLayer *l, NwLiveSource *live, float iso);
NwLiveSource *nw_layer_get_live(NwLayer *l);
float nw_layer_get_live_iso(NwLayer *l);
/* Newest iteration a view has drawn from the live source (-1: none yet); views note the
 * iteration of each interop frame they draw. */
int nw_layer_get_live_shown(NwLayer *l);
void nw_layer_note_live_shown(NwLayer *l, int iteration);

/* ---- reading ---- */
/* The value under world point ras (RAS mm): images and labels sample the voxel that
 * contains it (labels nearest, images trilinear); fields give |u| in mm. FALSE when ras is
 * outside the grid or the layer has no voxels. */
gboolean nw_layer_value_at(NwLayer *l, const double ras[3], double *value);

/* The level at which an image's surface is drawn: 40 % of its auto window's top, between the
 * background and grey matter in Colin27 and the demo phantom (the demo's brain surface, a
 * run's live surface). */
float nw_layer_surface_iso(NwLayer *image);

/* TRUE when every finite voxel is a whole number >= 0 and there are few distinct values:
 * the loader shows such images with the label map when their name suggests labels. */
gboolean nw_volume_looks_like_labels(const NwVolume *v);

G_END_DECLS

#endif
