/* nw_layer.h — one thing shown in the views: an image, a label map, a displacement field
 * (drawn as a warped grid, arrows, magnitude or log-Jacobian map) or a surface, with its
 * display settings. Reference counted plain data: the loader makes layers on a worker
 * thread and hands them to the main thread, which alone changes them afterwards. */
#ifndef NW_LAYER_H
#define NW_LAYER_H

#include <glib.h>

#include "live_source.h"
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

typedef struct {
  gint ref;
  NwLayerKind kind;
  char *name;         /* shown in the layer list, e.g. "fixed" or the file's name */
  char *path;         /* the file it came from, or NULL */
  NwVolume *volume;   /* image / labels (nc 1) or field (nc 3, voxel units); owned */
  NwSurface *surface; /* surfaces; owned, with normals */
  gboolean visible;
  NwLayerStyle style; /* colour map, range [lo, hi], opacity */
  float color[3];     /* surfaces without scalars, field grid and arrows */
  NwFieldShow field_show;
  int grid_step_vox;          /* grid lines / arrows every k voxels */
  float data_min, data_max;   /* finite values (fields: |u| in mm; surfaces: scalars) */
  float robust_lo, robust_hi; /* the "auto" window: 0.5 and 99.5 percentiles of the
                                 foreground */
  guint generation;           /* bumped when the data change: views re-upload */
  /* Layers of a running job (nw_run.h): its frame source (render/live_source.h), which the
   * views ask for a frame once per display frame. On the interop path the views fill shared
   * GL objects from the source's front instead of uploading volume / surface, which then
   * hold the last host copy; on the host path the run moves each frame into volume.
   * Borrowed from the run, which clears it before freeing the source. live_iso: iso level
   * of a live surface. */
  NwLiveSource *live;
  float live_iso;
  int live_shown; /* newest iteration a view has drawn from live (-1: none yet) */
} NwLayer;

/* Takes ownership of volume. Picks the colour map and range for the kind. */
NwLayer *nw_layer_new_volume(NwLayerKind kind, const char *name, NwVolume *volume);
/* Takes ownership of surface (computes normals when missing). */
NwLayer *nw_layer_new_surface(const char *name, NwSurface *surface);
NwLayer *nw_layer_ref(NwLayer *l);
void nw_layer_unref(NwLayer *l);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(NwLayer, nw_layer_unref)

/* The value under world point ras (RAS mm): images and labels sample the voxel that
 * contains it (labels nearest, images trilinear); fields give |u| in mm. FALSE when ras is
 * outside the grid or the layer has no voxels. */
gboolean nw_layer_value_at(const NwLayer *l, const double ras[3], double *value);

/* The level at which an image's surface is drawn: 40 % of its robust maximum, between the
 * background and grey matter in Colin27 and the demo phantom (the demo's brain surface, a
 * run's live surface). */
float nw_layer_surface_iso(const NwLayer *image);

/* Window presets: "auto" (robust range), "full" (min..max), "ct-brain" (W 80 L 40),
 * "ct-bone" (W 2000 L 500), "ct-soft" (W 400 L 40). FALSE for an unknown name. */
gboolean nw_layer_apply_window_preset(NwLayer *l, const char *preset);
/* Window (width) and level (centre) -> style.lo/hi; width is kept above zero. */
void nw_layer_set_window_level(NwLayer *l, double window, double level);

/* TRUE when every finite voxel is a whole number >= 0 and there are few distinct values:
 * the loader shows such images with the label map when their name suggests labels. */
gboolean nw_volume_looks_like_labels(const NwVolume *v);

G_END_DECLS

#endif
