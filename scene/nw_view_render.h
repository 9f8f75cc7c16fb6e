/* nw_view_render.h — what a view draws, separate from the widget: the GL objects for the
 * scene's layers (textures, mesh buffers, live interop objects; uploaded lazily and again
 * when a layer's generation changes), kept in one cache that all views of a window share
 * (their GtkGLArea contexts share objects with the window's paint context), so a layer is
 * uploaded — and a live frame copied — once for the four views; per view only its
 * renderer's programs and vertex arrays and its letter sprites. And the drawing of a 2D
 * slice view or the 3D view into the currently bound framebuffer.
 * Main thread, with the view's GL context current. */
#ifndef NW_VIEW_RENDER_H
#define NW_VIEW_RENDER_H

#include "nw_scene.h"
#include "renderer.h"
#include "view_geometry.h"

G_BEGIN_DECLS

typedef struct NwViewGpu NwViewGpu;

/* After nw_gl_init in the view's context. share_group: an object standing for the group of
 * contexts that share GL objects with this one (the window's paint context,
 * gdk_gl_context_get_shared_context), or NULL: the cache of layer objects is then this
 * view's own. */
NwViewGpu *nw_view_gpu_new(GObject *share_group, GError **error);
/* With the view's context current; the shared cache goes with the last view of its group. */
void nw_view_gpu_free(NwViewGpu *gpu);

/* Live layers (those of a running job): start display frame frame_counter (the frame clock's
 * counter; the views of one window draw one display frame with the same counter): each
 * live source takes or asks for its next frame once (render/live_source.h), waiting at most
 * wait_us for a fast job's frame. */
void nw_view_render_begin_frame(NwScene *scene, guint64 frame_counter, gint64 wait_us);

/* Colour of the crosshair lines (a yellow no comparison mode produces). */
extern const float nw_crosshair_color[4];
/* Background colour of every view. */
extern const float nw_view_background[3];

/* Clear and draw a slice view of g->width x g->height pixels. */
void nw_view_render_slice(NwViewGpu *gpu, NwScene *scene, const NwSliceGeometry *g);
/* Clear and draw the 3D view: the three slice planes through the crosshair and every
 * visible surface, lit, and the orientation marker (R, A, S axes) in the bottom-left
 * corner. */
void nw_view_render_3d(NwViewGpu *gpu, NwScene *scene, const NwOrbitCamera *cam);

G_END_DECLS

#endif
