/* io_tiles.c — see io_tiles.h. */
#include "io_tiles.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "io_image.h"
#include "io_image_private.h"
#include "io_nifti.h"
#include "nw_error.h"

typedef enum { TILES_NIFTI, TILES_TIFF, TILES_WHOLE } TilesKind;

struct NwTiledImage {
  char *path;
  TilesKind kind;
  NwVolume grid; /* data NULL */
  const char *how;
  NwNiftiSlabs *nifti;
  TIFF *tiff;
  TiffMessages *msgs; /* libtiff's handlers write here while the handle is open */
  TiffLayout L;
  NwVolume *whole;
};

static gboolean is_tiff(const char *path)
{
  guint8 b[4] = {0};
  FILE *f = fopen(path, "rb");
  const gboolean got = f != NULL && fread(b, 1, 4, f) == 4;
  if (f != NULL)
    fclose(f);
  return got && ((b[0] == 'I' && b[1] == 'I' && (b[2] == 42 || b[2] == 43) && b[3] == 0) ||
                 (b[0] == 'M' && b[1] == 'M' && b[2] == 0 && (b[3] == 42 || b[3] == 43)));
}

static gboolean open_tiff(NwTiledImage *t, gboolean ignore_spacing, GError **error)
{
  t->msgs = g_new0(TiffMessages, 1);
  if ((t->tiff = nw_tiff_open(t->path, t->msgs, error)) == NULL ||
      !nw_tiff_layout(t->tiff, t->path, &t->L, error) ||
      !nw_tiff_data_possible(t->tiff, t->path, &t->L, error))
    return FALSE;
  t->how = TIFFIsTiled(t->tiff) ? "tiff tiles" : "tiff strips";
  t->grid = (NwVolume){.nx = (int)t->L.w, .ny = (int)t->L.h, .nz = 1, .nc = 1, .data = NULL};
  double sx = 1.0, sy = 1.0;
  if (!ignore_spacing && !nw_tiff_spacing(t->tiff, &sx, &sy))
    sx = sy = 1.0;
  nw_image_set_spacing(&t->grid, sx, sy);
  return TRUE;
}

NwTiledImage *nw_tiled_open(const char *path, gboolean ignore_spacing, GError **error)
{
  NwTiledImage *t = g_new0(NwTiledImage, 1);
  t->path = g_strdup(path);
  gboolean ok;
  if (!g_file_test(path, G_FILE_TEST_IS_REGULAR)) {
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "%s: no such file", path);
    ok = FALSE;
  } else if (is_tiff(path)) {
    t->kind = TILES_TIFF;
    ok = open_tiff(t, ignore_spacing, error);
  } else if (nw_image_is_2d_file(path)) {
    /* PNG and PGM are read row by row from the start anyway, and are never huge */
    t->kind = TILES_WHOLE;
    t->how = "whole";
    t->whole = nw_volume_read_any(path, error);
    ok = t->whole != NULL;
    if (ok) {
      t->grid = *t->whole;
      t->grid.data = NULL;
      if (ignore_spacing)
        nw_volume_set_spacing(&t->grid, 1.0, 1.0, 1.0);
    }
  } else {
    t->kind = TILES_NIFTI;
    t->how = g_str_has_suffix(path, ".gz") ? "nifti.gz rows" : "nifti rows";
    ok = (t->nifti = nw_nifti_slabs_open(path, &t->grid, error)) != NULL;
  }
  if (!ok)
    g_clear_pointer(&t, nw_tiled_close);
  return t;
}

void nw_tiled_close(NwTiledImage *t)
{
  if (t == NULL)
    return;
  nw_nifti_slabs_close(t->nifti);
  if (t->tiff != NULL)
    TIFFClose(t->tiff);
  g_free(t->msgs);
  nw_volume_free(t->whole);
  g_free(t->path);
  g_free(t);
}

const NwVolume *nw_tiled_grid(const NwTiledImage *t)
{
  return &t->grid;
}

const char *nw_tiled_how(const NwTiledImage *t)
{
  return t->how;
}

/* File rows r0..r1 (top first) of a TIFF into rows of decoded pixels: band[(r - r0) * w ...]
 * (w = L.w pixels of `used` values), by scanlines or by the tiles that hold them. */
static gboolean tiff_rows(NwTiledImage *t, uint32_t r0, uint32_t r1, int c0, int c1, float *px,
                          int used, GError **error)
{
  const TiffLayout *L = &t->L;
  const size_t pixel_bytes = (size_t)L->spp * (L->bits / 8), row_bytes = (size_t)L->w * pixel_bytes;
  if (!TIFFIsTiled(t->tiff)) {
    /* whole strips (a compressed strip decodes from its start: scanlines cannot go back) */
    uint32_t rps = 0;
    TIFFGetFieldDefaulted(t->tiff, TIFFTAG_ROWSPERSTRIP, &rps);
    rps = MAX(1u, MIN(rps, L->h));
    const tmsize_t strip_bytes = TIFFStripSize(t->tiff);
    if (strip_bytes < (tmsize_t)((size_t)rps * row_bytes)) {
      g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: bad TIFF strip of %u rows", t->path, rps);
      return FALSE;
    }
    g_autofree guint8 *strip = g_malloc((size_t)strip_bytes);
    for (uint32_t s0 = r0 - r0 % rps; s0 <= r1; s0 += rps) {
      if (TIFFReadEncodedStrip(t->tiff, TIFFComputeStrip(t->tiff, s0, 0), strip, -1) < 0)
        return nw_tiff_row_error(t->path, s0, t->msgs, error);
      for (uint32_t r = MAX(s0, r0); r < s0 + rps && r <= r1; r++)
        nw_tiff_decode_row(L, strip + (size_t)(r - s0) * row_bytes,
                           px + (size_t)(r - r0) * L->w * used);
    }
    return TRUE;
  }
  uint32_t tw = 0, th = 0;
  TIFFGetField(t->tiff, TIFFTAG_TILEWIDTH, &tw);
  TIFFGetField(t->tiff, TIFFTAG_TILELENGTH, &th);
  const tmsize_t tile_bytes = TIFFTileSize(t->tiff);
  if (tw == 0 || th == 0 || (guint64)tw * th > (1u << 26) ||
      tile_bytes < (tmsize_t)((size_t)tw * th * pixel_bytes)) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: bad TIFF tile size %u x %u", t->path, tw, th);
    return FALSE;
  }
  g_autofree guint8 *tile = g_malloc((size_t)tile_bytes);
  g_autofree guint8 *band = g_malloc0((size_t)th * row_bytes);
  for (uint32_t y0 = r0 - r0 % th; y0 <= r1; y0 += th) {
    const uint32_t rows = MIN(th, L->h - y0);
    /* only the tile columns that hold columns c0 .. c1 - 1 */
    for (uint32_t x0 = (uint32_t)c0 - (uint32_t)c0 % tw; x0 < (uint32_t)c1; x0 += tw) {
      if (TIFFReadTile(t->tiff, tile, x0, y0, 0, 0) < 0)
        return nw_tiff_row_error(t->path, y0, t->msgs, error);
      const size_t cols = MIN(tw, L->w - x0);
      for (uint32_t r = 0; r < rows; r++)
        memcpy(band + r * row_bytes + x0 * pixel_bytes, tile + (size_t)r * tw * pixel_bytes,
               cols * pixel_bytes);
    }
    for (uint32_t r = MAX(y0, r0); r < y0 + rows && r <= r1; r++)
      nw_tiff_decode_row(L, band + (size_t)(r - y0) * row_bytes,
                         px + (size_t)(r - r0) * L->w * used);
  }
  return TRUE;
}

/* Voxel rows lo[1] .. hi[1] - 1 are file rows h - hi[1] .. h - 1 - lo[1] (row 0 on top). */
static gboolean read_tiff_region(NwTiledImage *t, const int lo[3], const int hi[3], float *out,
                                 GError **error)
{
  const int used = t->L.photometric == PHOTOMETRIC_RGB ? 3 : 1, h = (int)t->L.h;
  const uint32_t r0 = (uint32_t)(h - hi[1]), r1 = (uint32_t)(h - 1 - lo[1]);
  const size_t n_rows = r1 - r0 + 1;
  float *px = g_try_new(float, n_rows * t->L.w * (size_t)used);
  if (px == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_NOMEM, "%s: no memory for %zu rows", t->path, n_rows);
    return FALSE;
  }
  const gboolean ok = tiff_rows(t, r0, r1, lo[0], hi[0], px, used, error);
  const int w = hi[0] - lo[0];
  for (int j = lo[1]; ok && j < hi[1]; j++)
    nw_image_pixel_values(px + (size_t)(h - 1 - j - (int)r0) * t->L.w * used, used, lo[0], w,
                          out + (size_t)(j - lo[1]) * w);
  g_free(px);
  return ok;
}

gboolean nw_tiled_read(NwTiledImage *t, const int lo[3], const int hi[3], float *out,
                       GError **error)
{
  const size_t n =
      (size_t)(hi[0] - lo[0]) * (size_t)(hi[1] - lo[1]) * (size_t)(hi[2] - lo[2]);
  gboolean ok = TRUE;
  switch (t->kind) {
  case TILES_NIFTI:
    ok = nw_nifti_slabs_read(t->nifti, lo, hi, out, error);
    break;
  case TILES_TIFF:
    ok = read_tiff_region(t, lo, hi, out, error);
    break;
  default:
    nw_volume_copy_region(t->whole, lo, hi, out);
  }
  if (!ok)
    return FALSE;
  size_t bad = 0;
  for (size_t e = 0; e < n; e++)
    bad += !isfinite(out[e]);
  if (bad > 0) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "%s: %zu of the %zu voxels of the block [%d, %d) x [%d, %d) x [%d, %d) are NaN "
                "or Inf; mask or fill them before registering",
                t->path, bad, n, lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]);
    return FALSE;
  }
  return TRUE;
}

gboolean nw_tiled_read_source(gpointer t, const int lo[3], const int hi[3], float *out,
                              GError **error)
{
  return nw_tiled_read(t, lo, hi, out, error);
}
