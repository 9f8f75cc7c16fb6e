/* io_image.h — 2D images (PNG, PGM/PPM, TIFF; 8 and 16 bit; grey, or colour converted to
 * luminance) loaded as single-slice volumes (nz = 1, spacing 1 mm unless the file says
 * otherwise), and 8-bit PNG slices saved. Format chosen by content (magic bytes), not by
 * name. Any thread. */
#ifndef NW_IO_IMAGE_H
#define NW_IO_IMAGE_H

#include <glib.h>

#include "volume.h"

G_BEGIN_DECLS

/* TRUE when the file starts with a PNG, PNM (P2/P5) or TIFF signature. */
gboolean nw_image_is_2d_file(const char *path);
NwVolume *nw_image_read(const char *path, GError **error);
/* Slice k of v mapped linearly from [lo, hi] to 0..255, written atomically as grey PNG. */
gboolean nw_image_write_png(const char *path, const NwVolume *v, int k, float lo, float hi,
                            GError **error);

/* NIfTI or 2D image by content: the one loader the CLI and the GUI call. */
NwVolume *nw_volume_read_any(const char *path, GError **error);

G_END_DECLS

#endif
