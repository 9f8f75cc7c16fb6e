/* nw_screenshot.c — PNG pictures of views and of the 2x2 figure (see nw_screenshot.h).
 * Main thread. */
#include "nw_screenshot.h"

#include <gdk-pixbuf/gdk-pixbuf.h>
#include <string.h>

#include "atomic_file.h"

enum { GUTTER = 2 };

static gboolean write_png(const char *tmp_path, gpointer data, GError **error)
{
  return gdk_pixbuf_save(GDK_PIXBUF(data), tmp_path, "png", error, NULL);
}

gboolean nw_png_save_rgba(const char *path, const guint8 *rgba, int w, int h, GError **error)
{
  g_autoptr(GdkPixbuf) pb = gdk_pixbuf_new(GDK_COLORSPACE_RGB, FALSE, 8, w, h);
  int stride = gdk_pixbuf_get_rowstride(pb);
  guint8 *dst = gdk_pixbuf_get_pixels(pb);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      memcpy(dst + (size_t)y * stride + (size_t)x * 3, rgba + ((size_t)y * w + x) * 4, 3);
  return nw_write_atomically(path, write_png, pb, error);
}

gboolean nw_screenshot_view(NwView *view, const char *path, int w, int h, GError **error)
{
  g_autofree guint8 *px = nw_view_snapshot(view, w, h, error);
  if (px == NULL)
    return FALSE;
  return nw_png_save_rgba(path, px, w, h, error);
}

gboolean nw_screenshot_figure(NwView *const views[4], const char *path, int cell, GError **error)
{
  int W = 2 * cell + GUTTER, H = W;
  g_autofree guint8 *fig = g_malloc0((size_t)W * H * 4);
  for (int i = 0; i < 4; i++) {
    g_autofree guint8 *px = nw_view_snapshot(views[i], cell, cell, error);
    if (px == NULL)
      return FALSE;
    int ox = (i % 2) * (cell + GUTTER), oy = (i / 2) * (cell + GUTTER);
    for (int y = 0; y < cell; y++)
      memcpy(fig + ((size_t)(oy + y) * W + ox) * 4, px + (size_t)y * cell * 4, (size_t)cell * 4);
  }
  return nw_png_save_rgba(path, fig, W, H, error);
}
