/* nw_view_render.h — what a view draws, separate from the widget: the GL objects one view's
 * context holds for the scene's layers (textures, mesh buffers, letter sprites; uploaded
 * lazily and again when a layer's generation changes) and the drawing of a 2D slice view
 * or the 3D view into the currently bound framebuffer.
 * Main thread, with the view's GL context current. */
#ifndef NW_VIEW_RENDER_H
#define NW_VIEW_RENDER_H

#include "nw_scene.h"
#include "renderer.h"
#include "view_geometry.h"

G_BEGIN_DECLS

typedef struct NwViewGpu NwViewGpu;

/* After nw_gl_init in the view's context. */
NwViewGpu *nw_view_gpu_new(GError **error);
void nw_view_gpu_free(NwViewGpu *gpu);

/* Colour of the crosshair lines (a yellow no comparison mode produces). */
extern const float nw_crosshair_color[4];
/* Background colour of every view. */
extern const float nw_view_background[3];

/* Clear and draw a slice view of g->width x g->height pixels. */
void nw_view_render_slice(NwViewGpu *gpu, NwScene *scene, const NwSliceGeometry *g);
/* Clear and draw the 3D view: the three slice planes through the crosshair and every
 * visible surface, lit. */
void nw_view_render_3d(NwViewGpu *gpu, NwScene *scene, const NwOrbitCamera *cam);

G_END_DECLS

#endif
