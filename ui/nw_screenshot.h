/* nw_screenshot.h — pictures of the views as PNG files: one view, or the figure of all
 * four in the 2x2 layout (axial | coronal over sagittal | 3D) with a thin gutter. Files are
 * written atomically (nw_write_atomically). Main thread (the views render offscreen in
 * their own GL contexts). */
#ifndef NW_SCREENSHOT_H
#define NW_SCREENSHOT_H

#include "nw_view.h"

G_BEGIN_DECLS

/* RGBA8 rows top-down -> PNG at path. */
gboolean nw_png_save_rgba(const char *path, const guint8 *rgba, int w, int h, GError **error);

/* One view rendered at w x h pixels. */
gboolean nw_screenshot_view(NwView *view, const char *path, int w, int h, GError **error);

/* views: axial, coronal, sagittal, 3D; each rendered at cell x cell pixels. */
gboolean nw_screenshot_figure(NwView *const views[4], const char *path, int cell, GError **error);

G_END_DECLS

#endif
