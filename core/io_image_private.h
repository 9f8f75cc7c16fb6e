/* io_image_private.h — what io_image.c's TIFF reader shares with the region reader of
 * io_tiles.c (the distributed metric's blocks, read strip by strip or tile by tile): opening
 * with the messages kept, the layout checks, a row's decoding, the resolution. Any thread;
 * a TIFF handle is used by one thread at a time. */
#ifndef NW_IO_IMAGE_PRIVATE_H
#define NW_IO_IMAGE_PRIVATE_H

#include <glib.h>
#include <tiffio.h>

#include "volume.h"

G_BEGIN_DECLS

typedef struct {
  char msg[256]; /* libtiff's first error message */
} TiffMessages;

typedef struct {
  uint32_t w, h;
  uint16_t bits, spp, format, planar, photometric;
} TiffLayout;

/* Opens path with its errors kept in *m (which must outlive the handle); NULL and
 * "PATH: corrupt or unreadable TIFF: ..." on failure. */
TIFF *nw_tiff_open(const char *path, TiffMessages *m, GError **error);
/* The image's layout, refused when neurowarp does not read it or its data cannot be there. */
gboolean nw_tiff_layout(TIFF *t, const char *path, TiffLayout *L, GError **error);
gboolean nw_tiff_data_possible(TIFF *t, const char *path, const TiffLayout *L, GError **error);
/* One decoded row (scanline bytes) into px: L->w pixels of 1 (grey) or 3 (RGB) values. */
void nw_tiff_decode_row(const TiffLayout *L, const guint8 *src, float *px);
/* "PATH: corrupt or truncated TIFF at row R: ..." */
gboolean nw_tiff_row_error(const char *path, uint32_t row, const TiffMessages *m, GError **error);
/* The pixel size (mm) the resolution tags give, if they give one. */
gboolean nw_tiff_spacing(TIFF *t, double *sx, double *sy);
/* Pixels i0 .. i0 + n - 1 of a decoded row (channels values each) as image values (grey, or
 * colour's luminance), as every 2D reader stores them. */
void nw_image_pixel_values(const float *px, int channels, int i0, int n, float *dst);
/* The spacing a 2D reader sets: (sx, sy) when both are positive and finite, else 1 mm. */
void nw_image_set_spacing(NwVolume *v, double sx, double sy);

G_END_DECLS

#endif
