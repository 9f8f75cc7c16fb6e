/* colormap.h — the colour maps of the slice, field and mesh renderers as 256-entry RGBA
 * lookup tables (uploaded as 1D textures by renderer.c). Pure data, any thread.
 *
 * grey, hot, turbo and diverging map t in [0, 1] (a value's place between the layer's low
 * and high range ends); diverging is blue - white - red with white at t = 0.5 (difference
 * images, log-Jacobian). label maps an integer label l > 0 to entry 1 + (l - 1) mod 255,
 * colours that look random but are fixed for every run; entry 0 (background) is
 * transparent. */
#ifndef NW_COLORMAP_H
#define NW_COLORMAP_H

#include <glib.h>

G_BEGIN_DECLS

#define NW_LUT_SIZE 256

typedef enum {
  NW_COLORMAP_GREY,
  NW_COLORMAP_HOT,
  NW_COLORMAP_TURBO,
  NW_COLORMAP_DIVERGING,
  NW_COLORMAP_LABEL,
  NW_COLORMAP_COUNT
} NwColormap;

/* "grey", "hot", "turbo", "diverging", "label". */
const char *nw_colormap_name(NwColormap map);
/* Parse a name as above; FALSE for anything else. */
gboolean nw_colormap_from_name(const char *name, NwColormap *map);

/* rgba: NW_LUT_SIZE * 4 bytes. */
void nw_colormap_fill(NwColormap map, guint8 *rgba);

/* The LUT entry a label value uses (what the slice shader computes). */
int nw_colormap_label_index(int label);

G_END_DECLS

#endif
