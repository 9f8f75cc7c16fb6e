/* nw_view.h — one view of the scene: an axial, coronal or sagittal slice, or the 3D view;
 * a GtkGLArea (OpenGL 3.3 core) whose GL objects are made in realize and freed in
 * unrealize. Mouse: left click/drag moves the crosshair (2D) or rotates (3D); middle or
 * shift+left drag pans; right drag changes window (horizontal) and level (vertical) of the
 * active layer; wheel steps through slices, ctrl+wheel (3D: wheel) zooms about the pointer.
 * Main thread only.
 *
 * Signals: "pointer-moved" (double x, double y, double z: world RAS mm under the pointer,
 * 2D views), "pointer-left", "activated" (the user clicked in the view). */
#ifndef NW_VIEW_H
#define NW_VIEW_H

#include <gtk/gtk.h>

#include "nw_scene.h"
#include "view_geometry.h"

G_BEGIN_DECLS

typedef enum { NW_VIEW_AXIAL, NW_VIEW_CORONAL, NW_VIEW_SAGITTAL, NW_VIEW_3D } NwViewKind;

/* "axial", "coronal", "sagittal", "3d" */
const char *nw_view_kind_name(NwViewKind k);
gboolean nw_view_kind_from_name(const char *name, NwViewKind *k);

#define NW_TYPE_VIEW (nw_view_get_type())
G_DECLARE_FINAL_TYPE(NwView, nw_view, NW, VIEW, GtkGLArea)

NwView *nw_view_new(NwViewKind kind, NwScene *scene);
NwViewKind nw_view_get_kind(NwView *v);
/* What a slice view shows at width x height pixels (its zoom and pan, the crosshair's
 * slice), as it draws it and as a snapshot of that size would. */
NwSliceGeometry nw_view_get_slice_geometry(NwView *v, int width, int height);
/* Zoom to fit, no pan, default 3D camera. */
void nw_view_reset(NwView *v);
/* The 3D view's camera: yaw about S and pitch towards S, degrees (view_geometry.h: yaw 0,
 * pitch 0 looks from posterior, R on the right). */
void nw_view_set_camera(NwView *v, double yaw_deg, double pitch_deg);
/* Zoom of a slice view about the view centre: 1 fits the scene box (clamped to 0.2..50). */
void nw_view_set_zoom(NwView *v, double zoom);
/* TRUE once the GL context is up and the renderers are built. */
gboolean nw_view_is_ready(NwView *v);
/* The GL error of realize, if any (e.g. no OpenGL 3.3 core), else NULL. */
const GError *nw_view_get_gl_error(NwView *v);

/* Render the view offscreen at w x h pixels and return RGBA8 bytes, rows top-down
 * (g_free). NULL with an error when the view has no GL context. */
guint8 *nw_view_snapshot(NwView *v, int w, int h, GError **error);

G_END_DECLS

#endif
