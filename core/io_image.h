/* io_image.h — 2D images (PNG, PGM/PPM, TIFF; 8 and 16 bit; grey, or colour converted to
 * luminance) loaded as single-slice volumes (nz = 1, spacing 1 mm unless the file says
 * otherwise), and 8-bit PNG slices saved. Format chosen by content (magic bytes), not by
 * name. Any thread.
 *
 * Orientation: row 0 of an image file is its TOP row. Rows are flipped on load so that voxel
 * row j = 0 is the BOTTOM row and j increases upwards (i = 0 stays the left column): a viewer
 * that draws j upwards, as a radiological slice view does, shows the picture upright.
 * nw_image_write_png flips back, so reading and writing round-trips.
 * Values are the stored integers as floats (not rescaled to 0..1); colour becomes
 * Y = 0.2126 R + 0.7152 G + 0.0722 B of the stored values; alpha is dropped. */
#ifndef NW_IO_IMAGE_H
#define NW_IO_IMAGE_H

#include <glib.h>

#include "volume.h"

G_BEGIN_DECLS

/* TRUE when the file starts with a PNG, PNM (P2/P3/P5/P6) or TIFF signature. */
gboolean nw_image_is_2d_file(const char *path);
/* Errors name the file: NW_ERROR_IO (cannot open), NW_ERROR_FORMAT (corrupt, truncated,
 * absurd size), NW_ERROR_UNSUPPORTED (e.g. a TIFF with separate colour planes). */
NwVolume *nw_image_read(const char *path, GError **error);
/* Slice k of v (component 0) mapped linearly from [lo, hi] to 0..255 (clamped; NaN -> 0),
 * written atomically as an 8-bit grey PNG, top row = voxel row ny-1. */
gboolean nw_image_write_png(const char *path, const NwVolume *v, int k, float lo, float hi,
                            GError **error);

/* NIfTI or 2D image by content: the one loader the CLI and the GUI call. */
NwVolume *nw_volume_read_any(const char *path, GError **error);

G_END_DECLS

#endif
