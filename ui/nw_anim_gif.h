/* nw_anim_gif.h — frames (RGB GdkPixbufs of one size) as an animated GIF that loops: each
 * frame quantised to its own palette of up to 256 colours (giflib's median cut), shown for
 * delay_cs hundredths of a second. Written to a temporary name and renamed
 * (nw_write_atomically): a failure leaves nothing. Any thread. */
#ifndef NW_ANIM_GIF_H
#define NW_ANIM_GIF_H

#include <gdk-pixbuf/gdk-pixbuf.h>

G_BEGIN_DECLS

gboolean nw_anim_gif_write(const char *path, GPtrArray *frames, int delay_cs, GError **error);

G_END_DECLS

#endif
