/* nw_view_overlay.h — what a 2D view draws over its slice in screen space so that values
 * and sizes can be read: a colour bar per layer drawn through a continuous colour map (the
 * difference of the compared images, a field's |u| or log-Jacobian, an image mapped through
 * hot, turbo or diverging) and a scale bar of a round length in millimetres.
 *
 * Which bars and where (nw_view_overlay_layout) is pure arithmetic on the scene, for the
 * drawing and for scripts that check pixels against it; the sprites (cairo-drawn, so that
 * screenshots carry them) need the view's GL context. Main thread. */
#ifndef NW_VIEW_OVERLAY_H
#define NW_VIEW_OVERLAY_H

#include <cairo.h>

#include "nw_scene.h"
#include "renderer.h"
#include "view_geometry.h"

G_BEGIN_DECLS

#define NW_OVERLAY_MAX_BARS 3

typedef struct {
  int x, y, width, height; /* viewport pixels from the top-left corner */
} NwPixelRect;

typedef struct {
  char title[64]; /* "A − B", "|u| (mm)", "log det J", or the layer's name */
  NwColormap colormap;
  float lo, hi;      /* values at the left and right ends of the strip */
  NwPixelRect strip; /* the gradient: column c shows LUT entry round(255 c / (width - 1)) */
} NwColorBar;

typedef struct {
  int n_bars;
  NwColorBar bars[NW_OVERLAY_MAX_BARS]; /* the one of the layer drawn on top first */
  double scale_mm;                      /* the scale bar's length; 0: none */
  NwPixelRect scale;                    /* its white bar (a dark outline around it) */
} NwOverlayLayout;

/* The overlay of a slice view of scene with geometry g: bars bottom right, stacked upwards;
 * the scale bar bottom left, the longest of 1, 2, 5 x 10^k mm within a quarter of the
 * width. */
void nw_view_overlay_layout(NwScene *scene, const NwSliceGeometry *g, NwOverlayLayout *out);

/* The longest of 1, 2, 5 x 10^k mm that spans at most max_px pixels; 0 when none does. */
double nw_scale_bar_mm(double mm_per_pixel, double max_px);

/* The current cairo path (text) stroked with a dark outline of width outline, then filled
 * with (r, g, b): readable on any image (the views' letters, the bars' labels). */
void nw_overlay_outline_fill(cairo_t *cr, double outline, double r, double g, double b);

/* Sprites of one view's overlay, remade only when what they show changes. */
typedef struct NwViewOverlay NwViewOverlay;
NwViewOverlay *nw_view_overlay_new(void);
void nw_view_overlay_free(NwViewOverlay *ov); /* with the view's context current */
/* Draw layout into the bound framebuffer of g->width x g->height. */
void nw_view_overlay_draw(NwViewOverlay *ov, NwRenderer *r, const NwOverlayLayout *layout,
                          const NwSliceGeometry *g);

G_END_DECLS

#endif
