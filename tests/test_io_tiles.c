/* test_io_tiles.c — images read region by region (core/io_tiles.c) are the whole reads'
 * regions, bit for bit: NIfTI (.nii int16 with scaling, .nii.gz float32, 3D), TIFF by strips
 * (16-bit grey, deflate with 8 rows a strip, RGB), by tiles (overhanging the image), BigTIFF,
 * and PNG (read whole); every block of several layouts; the grids equal. Then the messages:
 * a NaN in a block, a missing file. CPU, main thread. */
#include <math.h>
#include <string.h>
#include <tiffio.h>

#include "dmi_decomp.h"
#include "io_image.h"
#include "io_nifti.h"
#include "io_tiles.h"
#include "nw_error.h"
#include "testutil.h"

/* A 2D TIFF of w x h 16-bit (or 8-bit RGB) pixels: strips of rows_per_strip rows, or 16 x 16
 * tiles (tiled), deflate when asked, BigTIFF when big; pixel values from a formula. */
static char *write_tiff(const char *name, int w, int h, gboolean rgb, gboolean tiled,
                        int rows_per_strip, gboolean deflate, gboolean big)
{
  char *path = nw_test_path(name);
  TIFF *t = TIFFOpen(path, big ? "w8" : "w");
  g_assert_nonnull(t);
  const int spp = rgb ? 3 : 1, bytes = rgb ? 1 : 2;
  TIFFSetField(t, TIFFTAG_IMAGEWIDTH, (uint32_t)w);
  TIFFSetField(t, TIFFTAG_IMAGELENGTH, (uint32_t)h);
  TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, (uint16_t)(8 * bytes));
  TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, (uint16_t)spp);
  TIFFSetField(t, TIFFTAG_PHOTOMETRIC, rgb ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK);
  TIFFSetField(t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  TIFFSetField(t, TIFFTAG_XRESOLUTION, 2.0f); /* pixels per cm: 5 mm pixels */
  TIFFSetField(t, TIFFTAG_YRESOLUTION, 4.0f);
  TIFFSetField(t, TIFFTAG_RESOLUTIONUNIT, RESUNIT_CENTIMETER);
  if (deflate)
    TIFFSetField(t, TIFFTAG_COMPRESSION, COMPRESSION_ADOBE_DEFLATE);
  const size_t row_bytes = (size_t)w * spp * bytes;
  guint8 *img = g_malloc((size_t)h * row_bytes);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      for (int c = 0; c < spp; c++) {
        const guint v = (guint)((x * 37 + y * 101 + c * 50 + (x * y) % 13) % (rgb ? 256 : 60000));
        guint8 *p = img + (size_t)y * row_bytes + ((size_t)x * spp + c) * bytes;
        if (rgb) {
          *p = (guint8)v;
        } else {
          const guint16 s = (guint16)v;
          memcpy(p, &s, 2);
        }
      }
  if (tiled) {
    TIFFSetField(t, TIFFTAG_TILEWIDTH, (uint32_t)16);
    TIFFSetField(t, TIFFTAG_TILELENGTH, (uint32_t)16);
    guint8 *tile = g_malloc0(16 * 16 * spp * bytes);
    for (int y0 = 0; y0 < h; y0 += 16)
      for (int x0 = 0; x0 < w; x0 += 16) {
        memset(tile, 0, 16 * 16 * spp * bytes);
        for (int r = 0; r < 16 && y0 + r < h; r++)
          memcpy(tile + (size_t)r * 16 * spp * bytes,
                 img + (size_t)(y0 + r) * row_bytes + (size_t)x0 * spp * bytes,
                 (size_t)MIN(16, w - x0) * spp * bytes);
        g_assert_cmpint(TIFFWriteTile(t, tile, x0, y0, 0, 0), >, 0);
      }
    g_free(tile);
  } else {
    TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, (uint32_t)rows_per_strip);
    for (int y = 0; y < h; y++)
      g_assert_cmpint(TIFFWriteScanline(t, img + (size_t)y * row_bytes, y, 0), ==, 1);
  }
  g_free(img);
  TIFFClose(t);
  return path;
}

/* Every block of each layout, read as a region, against the whole read's voxels. */
static void check_regions(const char *path)
{
  g_autoptr(GError) err = NULL;
  g_autoptr(NwVolume) whole = nw_volume_read_any(path, &err);
  g_assert_no_error(err);
  NwTiledImage *t = nw_tiled_open(path, FALSE, &err);
  g_assert_no_error(err);
  const NwVolume *g = nw_tiled_grid(t);
  g_test_message("%s: %s", path, nw_tiled_how(t));
  g_assert_true(nw_volume_same_grid(g, whole));
  g_assert_cmpmem(g->spacing_mm, sizeof g->spacing_mm, whole->spacing_mm, sizeof g->spacing_mm);
  const int n[3] = {g->nx, g->ny, g->nz};
  static const char *const layouts[] = {"1x1x1", "1x3x1", "3x1x1", "2x3x1", "2x2x2"};
  for (gsize li = 0; li < G_N_ELEMENTS(layouts); li++) {
    NwDmiLayout l;
    g_assert_true(nw_dmi_layout_parse(layouts[li], &l, NULL));
    if (n[2] == 1 && l.m[2] > 1)
      continue;
    /* the blocks in an order that seeks backwards too */
    for (int b = nw_dmi_layout_blocks(&l) - 1; b >= 0; b--) {
      int lo[3], hi[3];
      nw_dmi_block_bounds(&l, n, b, lo, hi);
      const int w = hi[0] - lo[0];
      g_autofree float *got = g_new(float, (gsize)w * (hi[1] - lo[1]) * (hi[2] - lo[2]));
      g_assert_true(nw_tiled_read(t, lo, hi, got, &err));
      g_assert_no_error(err);
      const float *p = got;
      for (int k = lo[2]; k < hi[2]; k++)
        for (int j = lo[1]; j < hi[1]; j++, p += w)
          g_assert_cmpmem(p, w * sizeof(float), whole->data + nw_volume_index(whole, lo[0], j, k),
                          w * sizeof(float));
    }
  }
  nw_tiled_close(t);
}

static void test_nifti(void)
{
  g_autoptr(NwVolume) v = nw_test_volume(23, 19, 11, 1, 4);
  g_autofree char *nii = nw_test_path("a.nii"), *gz = nw_test_path("b.nii.gz");
  g_assert_true(nw_nifti_write(nii, v, NW_DT_INT16, FALSE, NULL));
  g_assert_true(nw_nifti_write(gz, v, NW_DT_FLOAT32, FALSE, NULL));
  check_regions(nii);
  check_regions(gz);
}

static void test_tiff(void)
{
  g_autofree char *strips = write_tiff("s.tif", 45, 37, FALSE, FALSE, 1, FALSE, FALSE);
  g_autofree char *deflate = write_tiff("d.tif", 45, 37, FALSE, FALSE, 8, TRUE, FALSE);
  g_autofree char *rgb = write_tiff("c.tif", 40, 33, TRUE, FALSE, 3, FALSE, FALSE);
  g_autofree char *tiles = write_tiff("t.tif", 45, 37, FALSE, TRUE, 0, TRUE, FALSE);
  g_autofree char *big = write_tiff("b.tif", 45, 37, FALSE, TRUE, 0, FALSE, TRUE);
  const char *paths[] = {strips, deflate, rgb, tiles, big};
  for (gsize i = 0; i < G_N_ELEMENTS(paths); i++)
    check_regions(paths[i]);
}

static void test_png(void)
{
  g_autoptr(NwVolume) v = nw_test_volume(30, 20, 1, 1, 8);
  for (size_t e = 0; e < nw_volume_n_voxels(v); e++)
    v->data[e] = floorf(fabsf(v->data[e]) * 100.0f);
  g_autofree char *png = nw_test_path("p.png");
  g_assert_true(nw_image_write_png(png, v, 0, 0.0f, 255.0f, NULL));
  check_regions(png);
}

static void test_errors(void)
{
  g_autoptr(NwVolume) v = nw_test_volume(12, 10, 8, 1, 4);
  v->data[nw_volume_index(v, 3, 7, 6)] = NAN;
  g_autofree char *nii = nw_test_path("nan.nii");
  g_assert_true(nw_nifti_write(nii, v, NW_DT_FLOAT32, FALSE, NULL));
  GError *err = NULL;
  NwTiledImage *t = nw_tiled_open(nii, FALSE, &err);
  g_assert_no_error(err);
  float buf[12 * 10 * 8];
  const int lo[3] = {0, 0, 0}, hi[3] = {12, 10, 4}, hi2[3] = {12, 10, 8};
  g_assert_true(nw_tiled_read(t, lo, hi, buf, &err)); /* the NaN is in the other half */
  g_assert_false(nw_tiled_read(t, lo, hi2, buf, &err));
  g_autofree char *want = g_strdup_printf(
      "%s: 1 of the 960 voxels of the block [0, 12) x [0, 10) x [0, 8) are NaN or Inf; mask or "
      "fill them before registering",
      nii);
  g_assert_cmpstr(err->message, ==, want);
  g_clear_error(&err);
  nw_tiled_close(t);
  g_assert_null(nw_tiled_open("/nonexistent/x.nii", FALSE, &err));
  g_assert_cmpstr(err->message, ==, "/nonexistent/x.nii: no such file");
  g_clear_error(&err);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/io-tiles/nifti", test_nifti);
  g_test_add_func("/io-tiles/tiff", test_tiff);
  g_test_add_func("/io-tiles/png", test_png);
  g_test_add_func("/io-tiles/errors", test_errors);
  return g_test_run();
}
