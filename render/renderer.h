/* renderer.h — the renderers of one GL context: slices of scalar layers through colour maps,
 * two images compared (blend, checkerboard, difference, flicker, curtain), lines, and
 * screen-space sprites (orientation letters). The deformation renderers are in
 * field_renderer.h, meshes in mesh_renderer.h; all share the NwRenderer of the context.
 *
 * Geometry comes in as an mvp matrix (world RAS mm -> clip, from view_geometry.h) and a
 * quad of 4 world points (triangle strip) on which the volumes are sampled: the visible
 * rectangle of a 2D view, or a slice plane across the volume in the 3D view.
 * Thread: the one with the GL context current (created after nw_gl_init). */
#ifndef NW_RENDERER_H
#define NW_RENDERER_H

#include <GL/glew.h>
#include <glib.h>

#include "colormap.h"
#include "gl_volume.h"

G_BEGIN_DECLS

typedef struct {
  GLuint prog_slice, prog_compare, prog_heat, prog_lines, prog_field_lines, prog_mesh, prog_sprite;
  GLuint lut[NW_COLORMAP_COUNT]; /* GL_TEXTURE_1D, NW_LUT_SIZE RGBA8 */
  GLuint vao, vbo;               /* streamed vertices (vec4 per vertex) */
  GLuint mesh_vao; /* pointed at a mesh's buffers per draw: buffers are shared between the
                      views' contexts, vertex arrays are not */
} NwRenderer;

NwRenderer *nw_renderer_new(GError **error);
void nw_renderer_free(NwRenderer *r);

typedef struct {
  NwColormap colormap;
  float lo, hi;         /* values mapped to the LUT ends (window = hi - lo, level = mid) */
  float opacity;        /* 0..1 */
  gboolean clear_below; /* values up to lo + 5 % of hi - lo are transparent (heat maps
                           over anatomy, empty background of 3D slice planes) */
  gboolean clear_centre; /* values within 2.5 % of hi - lo of the middle are transparent
                            (diverging overlays such as a Jacobian map show only change) */
} NwLayerStyle;

/* A scalar layer; label maps (colormap NW_COLORMAP_LABEL) use the integer lookup. */
void nw_render_slice_layer(NwRenderer *r, const double mvp[16], const float quad[12],
                           const NwGlVolume *vol, const NwLayerStyle *style);
/* A label map in its own colours: label_colors from nw_label_colors_new (0: the default
 * colours, as nw_render_slice_layer). */
void nw_render_slice_labels(NwRenderer *r, const double mvp[16], const float quad[12],
                            const NwGlVolume *vol, const NwLayerStyle *style, GLuint label_colors);
/* The colours of labels 0..n_labels-1 (RGBA8, alpha 0 hides a label) as the 2D texture
 * nw_render_slice_labels reads: 256 wide, label l at (l % 256, l / 256). Delete with
 * glDeleteTextures. */
GLuint nw_label_colors_new(const guint8 *rgba, int n_labels);

typedef enum {
  NW_COMPARE_NONE,
  NW_COMPARE_BLEND,
  NW_COMPARE_CHECKER,
  NW_COMPARE_DIFFERENCE,
  NW_COMPARE_FLICKER,
  NW_COMPARE_CURTAIN,
  NW_COMPARE_COUNT
} NwCompareMode;

/* "none", "blend", "checker", "difference", "flicker", "curtain". */
const char *nw_compare_mode_name(NwCompareMode m);
gboolean nw_compare_mode_from_name(const char *name, NwCompareMode *m);

typedef struct {
  NwCompareMode mode;
  gboolean magenta_green; /* blend: A magenta, B green (default); else mix own colour maps */
  float blend;            /* blend weight of B, 0..1 */
  float tile_mm;          /* checkerboard tile edge, world mm */
  float diff_range;       /* difference: A - B = +-diff_range at the diverging map's ends */
  gboolean show_b;        /* flicker phase */
  float curtain;          /* 0..1 across the viewport: A left, B right */
} NwCompareStyle;

void nw_compare_style_init(NwCompareStyle *c); /* blend, magenta/green, 0.5, 10 mm, ... */

/* Images A and B at every point of quad; viewport_w (pixels) places the curtain. With
 * clear_below in both styles, points where both are near their low ends stay empty. */
void nw_render_slice_compare(NwRenderer *r, const double mvp[16], const float quad[12],
                             const NwGlVolume *a, const NwLayerStyle *sa, const NwGlVolume *b,
                             const NwLayerStyle *sb, const NwCompareStyle *cmp, int viewport_w);

/* GL_LINES through n_vertices world points (xyz triples, pairs make segments). */
void nw_render_lines(NwRenderer *r, const double mvp[16], const float *xyz, int n_vertices,
                     const float rgba[4]);

/* An image drawn in viewport pixels. Pixels: cairo's premultiplied ARGB32 (BGRA bytes on
 * little-endian machines), stride bytes per row. */
typedef struct {
  GLuint tex;
  int width, height;
} NwSprite;
NwSprite *nw_sprite_new(const guint8 *bgra, int width, int height, int stride);
void nw_sprite_free(NwSprite *s);
/* Top-left corner at (x, y) pixels of a viewport of vw x vh. */
void nw_render_sprite(NwRenderer *r, const NwSprite *s, double x, double y, int vw, int vh);

/* Internal to render/: stream n vec4 vertices into the shared buffer and bind the VAO. */
void nw_renderer_stream(NwRenderer *r, const float *xyzw, int n);

G_END_DECLS

#endif
