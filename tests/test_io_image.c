/* test_io_image.c — 2D image I/O (core/io_image.c). Files are written here directly with
 * libpng, libtiff and by hand (PGM), read back through nw_image_read, and checked for values,
 * luminance, orientation (file row 0 = top = voxel row ny-1) and spacing; corrupt files must
 * give errors that name the file and the problem. CPU, main thread. */
#include <glib/gstdio.h>
#include <math.h>
#include <png.h>
#include <setjmp.h>
#include <string.h>
#include <tiffio.h>

#include "io_image.h"
#include "io_nifti.h"
#include "nw_error.h"
#include "testutil.h"

/* ---- writers used by the tests ------------------------------------------------------------ */

/* samples: h rows (top first) of w * channels values; depth 8 or 16 (or less for grey and
 * palette, one sample per byte here). ppm > 0 adds pHYs; palette: n_palette RGB entries. */
typedef struct {
  guint32 ppm;
  int interlace;
  const png_color *palette;
  int n_palette;
} PngOptions;

static void write_test_png_with(const char *path, int w, int h, int depth, int color_type,
                                const guint16 *samples, const PngOptions *o)
{
  FILE *f = g_fopen(path, "wb");
  g_assert_nonnull(f);
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  png_infop info = png_create_info_struct(png);
  if (setjmp(png_jmpbuf(png)))
    g_error("libpng failed writing %s", path);
  png_init_io(png, f);
  png_set_IHDR(png, info, w, h, depth, color_type, o->interlace, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  if (o->ppm > 0)
    png_set_pHYs(png, info, o->ppm, o->ppm, PNG_RESOLUTION_METER);
  if (o->palette != NULL)
    png_set_PLTE(png, info, o->palette, o->n_palette);
  png_write_info(png, info);
  if (depth < 8)
    png_set_packing(png); /* rows below hold one sample per byte */
  int passes = png_set_interlace_handling(png);
  int channels = png_get_channels(png, info), bps = depth == 16 ? 2 : 1;
  guint8 *row = g_malloc((size_t)w * channels * bps);
  for (int pass = 0; pass < passes; pass++)
    for (int y = 0; y < h; y++) {
      for (int e = 0; e < w * channels; e++) {
        guint16 s = samples[(size_t)y * w * channels + e];
        if (bps == 2) { /* PNG stores 16-bit samples big-endian */
          row[2 * e] = (guint8)(s >> 8);
          row[2 * e + 1] = (guint8)(s & 0xff);
        } else {
          row[e] = (guint8)s;
        }
      }
      png_write_row(png, row);
    }
  png_write_end(png, NULL);
  png_destroy_write_struct(&png, &info);
  g_free(row);
  fclose(f);
}

static void write_test_png(const char *path, int w, int h, int depth, int color_type,
                           const guint16 *samples, guint32 ppm)
{
  PngOptions o = {.ppm = ppm, .interlace = PNG_INTERLACE_NONE};
  write_test_png_with(path, w, h, depth, color_type, samples, &o);
}

static void write_test_tiff(const char *path, int w, int h, int bits, int spp, int photometric,
                            const guint16 *samples)
{
  TIFF *t = TIFFOpen(path, "w");
  g_assert_nonnull(t);
  TIFFSetField(t, TIFFTAG_IMAGEWIDTH, (uint32_t)w);
  TIFFSetField(t, TIFFTAG_IMAGELENGTH, (uint32_t)h);
  TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, (uint16_t)bits);
  TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, (uint16_t)spp);
  TIFFSetField(t, TIFFTAG_PHOTOMETRIC, (uint16_t)photometric);
  TIFFSetField(t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, (uint32_t)1);
  size_t n = (size_t)w * spp;
  guint8 *row = g_malloc(n * 2);
  for (int y = 0; y < h; y++) {
    for (size_t e = 0; e < n; e++) {
      guint16 s = samples[(size_t)y * n + e];
      if (bits == 16)
        memcpy(row + 2 * e, &s, 2); /* native order; libtiff records it */
      else
        row[e] = (guint8)s;
    }
    g_assert_cmpint(TIFFWriteScanline(t, row, y, 0), ==, 1);
  }
  g_free(row);
  TIFFClose(t);
}

/* A tiled TIFF (16 x 16 tiles over a 20 x 18 image: the last tiles overhang). */
static void write_tiled_tiff(const char *path, int w, int h, const guint16 *samples)
{
  TIFF *t = TIFFOpen(path, "w");
  g_assert_nonnull(t);
  TIFFSetField(t, TIFFTAG_IMAGEWIDTH, (uint32_t)w);
  TIFFSetField(t, TIFFTAG_IMAGELENGTH, (uint32_t)h);
  TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, (uint16_t)16);
  TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, (uint16_t)1);
  TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
  TIFFSetField(t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  TIFFSetField(t, TIFFTAG_TILEWIDTH, (uint32_t)16);
  TIFFSetField(t, TIFFTAG_TILELENGTH, (uint32_t)16);
  guint16 tile[16 * 16];
  for (int y0 = 0; y0 < h; y0 += 16)
    for (int x0 = 0; x0 < w; x0 += 16) {
      for (int r = 0; r < 16; r++)
        for (int c = 0; c < 16; c++)
          tile[r * 16 + c] = (y0 + r < h && x0 + c < w) ? samples[(y0 + r) * w + x0 + c] : 0;
      g_assert_cmpint(TIFFWriteTile(t, tile, x0, y0, 0, 0), >, 0);
    }
  TIFFClose(t);
}

static char *write_bytes(const char *name, const void *data, gssize len)
{
  char *path = nw_test_path(name);
  g_assert_true(g_file_set_contents(path, data, len, NULL));
  return path;
}

/* Voxel (i, j) of a single-slice volume against file pixel (column i, row h-1-j). */
static void assert_upright(const NwVolume *v, int w, int h, const double *want_rows_top_first,
                           double tol)
{
  g_assert_cmpint(v->nx, ==, w);
  g_assert_cmpint(v->ny, ==, h);
  g_assert_cmpint(v->nz, ==, 1);
  g_assert_cmpint(v->nc, ==, 1);
  for (int j = 0; j < h; j++)
    for (int i = 0; i < w; i++)
      g_assert_cmpfloat(fabs(v->data[nw_volume_index(v, i, j, 0)] -
                             want_rows_top_first[(size_t)(h - 1 - j) * w + i]),
                        <=, tol);
}

static NwVolume *read_ok(const char *path)
{
  g_autoptr(GError) error = NULL;
  NwVolume *v = nw_image_read(path, &error);
  g_assert_no_error(error);
  g_assert_nonnull(v);
  return v;
}

static void assert_read_fails(const char *path, int code, const char *substring)
{
  g_autoptr(GError) error = NULL;
  g_assert_null(nw_image_read(path, &error));
  g_assert_error(error, NW_ERROR, code);
  if (strstr(error->message, path) == NULL || strstr(error->message, substring) == NULL)
    g_error("message \"%s\" should name %s and say \"%s\"", error->message, path, substring);
}

/* ---- PNG ----------------------------------------------------------------------------------- */

static void test_png_grey_8_and_16(void)
{
  enum { W = 5, H = 3 };
  guint16 s8[W * H], s16[W * H];
  double want8[W * H], want16[W * H];
  for (int e = 0; e < W * H; e++) {
    want8[e] = s8[e] = (guint16)(50 * (e / W) + e % W); /* top row 0..4, then 50.., 100.. */
    want16[e] = s16[e] = (guint16)(20000 * (e / W) + 7 * (e % W) + 300);
  }
  g_autofree char *p8 = nw_test_path("grey8.png"), *p16 = nw_test_path("grey16.png");
  write_test_png(p8, W, H, 8, PNG_COLOR_TYPE_GRAY, s8, 0);
  write_test_png(p16, W, H, 16, PNG_COLOR_TYPE_GRAY, s16, 0);
  g_autoptr(NwVolume) v8 = read_ok(p8);
  assert_upright(v8, W, H, want8, 0.0);
  /* the top-left pixel (0) is at the top: j = ny-1 */
  g_assert_cmpfloat(v8->data[nw_volume_index(v8, 0, H - 1, 0)], ==, 0.0f);
  g_assert_cmpfloat(v8->data[nw_volume_index(v8, 0, 0, 0)], ==, 100.0f);
  g_assert_cmpfloat(v8->spacing_mm[0], ==, 1.0f);
  g_autoptr(NwVolume) v16 = read_ok(p16);
  assert_upright(v16, W, H, want16, 0.0);
  g_assert_cmpfloat(v16->data[nw_volume_index(v16, 4, 0, 0)], ==, 40328.0f);
}

static void test_png_colour_to_luminance(void)
{
  enum { W = 3, H = 2 };
  const guint16 rgb[W * H * 3] = {255, 0,  0,  0,   255, 0,  0,   0,   255,
                                  10,  20, 30, 200, 100, 50, 255, 255, 255};
  double want[W * H];
  for (int e = 0; e < W * H; e++)
    want[e] = 0.2126 * rgb[3 * e] + 0.7152 * rgb[3 * e + 1] + 0.0722 * rgb[3 * e + 2];
  g_autofree char *prgb = nw_test_path("rgb8.png");
  write_test_png(prgb, W, H, 8, PNG_COLOR_TYPE_RGB, rgb, 0);
  g_autoptr(NwVolume) v = read_ok(prgb);
  assert_upright(v, W, H, want, 1e-3);

  /* 16-bit RGBA: alpha is dropped, colour still becomes luminance */
  guint16 rgba[W * H * 4];
  double want16[W * H];
  for (int e = 0; e < W * H; e++) {
    guint16 r = (guint16)(1000 * e), g = (guint16)(60000 - 1000 * e), b = 777;
    rgba[4 * e] = r, rgba[4 * e + 1] = g, rgba[4 * e + 2] = b, rgba[4 * e + 3] = (guint16)(e * 9);
    want16[e] = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  }
  g_autofree char *prgba = nw_test_path("rgba16.png");
  write_test_png(prgba, W, H, 16, PNG_COLOR_TYPE_RGB_ALPHA, rgba, 0);
  g_autoptr(NwVolume) v16 = read_ok(prgba);
  assert_upright(v16, W, H, want16, 1e-2);

  /* grey + alpha: the grey channel */
  const guint16 ga[W * H * 2] = {1, 255, 2, 0, 3, 128, 4, 255, 5, 255, 6, 9};
  const double want_ga[W * H] = {1, 2, 3, 4, 5, 6};
  g_autofree char *pga = nw_test_path("greyalpha.png");
  write_test_png(pga, W, H, 8, PNG_COLOR_TYPE_GRAY_ALPHA, ga, 0);
  g_autoptr(NwVolume) vga = read_ok(pga);
  assert_upright(vga, W, H, want_ga, 0.0);
}

/* Interlaced (Adam7), palette and 1-bit images go through libpng's expansions. */
static void test_png_interlaced_palette_1bit(void)
{
  enum { W = 9, H = 7 };
  guint16 s[W * H], idx[W * H], bits[W * H];
  double want[W * H], want_pal[W * H], want_bits[W * H];
  const png_color pal[3] = {{255, 0, 0}, {0, 0, 255}, {10, 200, 30}};
  for (int e = 0; e < W * H; e++) {
    want[e] = s[e] = (guint16)(1000 * (e / W) + 13 * (e % W));
    idx[e] = (guint16)(e % 3);
    want_pal[e] = 0.2126 * pal[e % 3].red + 0.7152 * pal[e % 3].green + 0.0722 * pal[e % 3].blue;
    bits[e] = (guint16)((e / W + e % W) % 2);
    want_bits[e] = 255.0 * bits[e]; /* libpng scales 1-bit grey to 0 / 255 */
  }
  g_autofree char *pi = nw_test_path("adam7.png"), *pp = nw_test_path("palette.png"),
                  *pb = nw_test_path("bits.png");
  PngOptions adam7 = {.interlace = PNG_INTERLACE_ADAM7};
  write_test_png_with(pi, W, H, 16, PNG_COLOR_TYPE_GRAY, s, &adam7);
  PngOptions palette = {.interlace = PNG_INTERLACE_NONE, .palette = pal, .n_palette = 3};
  write_test_png_with(pp, W, H, 8, PNG_COLOR_TYPE_PALETTE, idx, &palette);
  write_test_png(pb, W, H, 1, PNG_COLOR_TYPE_GRAY, bits, 0);
  g_autoptr(NwVolume) vi = read_ok(pi);
  assert_upright(vi, W, H, want, 0.0);
  g_autoptr(NwVolume) vp = read_ok(pp);
  assert_upright(vp, W, H, want_pal, 1e-3);
  g_autoptr(NwVolume) vb = read_ok(pb);
  assert_upright(vb, W, H, want_bits, 0.0);
}

static void test_png_physical_spacing(void)
{
  const guint16 s[4] = {1, 2, 3, 4};
  g_autofree char *p = nw_test_path("phys.png");
  write_test_png(p, 2, 2, 8, PNG_COLOR_TYPE_GRAY, s, 4000); /* 4000 px/m = 0.25 mm */
  g_autoptr(NwVolume) v = read_ok(p);
  g_assert_cmpfloat_with_epsilon(v->spacing_mm[0], 0.25, 1e-6);
  g_assert_cmpfloat_with_epsilon(v->spacing_mm[1], 0.25, 1e-6);
  g_assert_cmpfloat_with_epsilon(v->spacing_mm[2], 1.0, 1e-6);
}

static void test_png_corrupt(void)
{
  enum { W = 64, H = 64 };
  guint16 s[W * H];
  for (int e = 0; e < W * H; e++)
    s[e] = (guint16)((e * 37) % 251); /* not compressible to nothing */
  g_autofree char *good = nw_test_path("good.png");
  write_test_png(good, W, H, 8, PNG_COLOR_TYPE_GRAY, s, 0);
  g_autofree char *bytes = NULL;
  gsize len = 0;
  g_assert_true(g_file_get_contents(good, &bytes, &len, NULL));
  g_autofree char *cut = write_bytes("cut.png", bytes, (gssize)len / 2);
  assert_read_fails(cut, NW_ERROR_FORMAT, "corrupt or truncated PNG");
  g_autofree char *sig_only = write_bytes("sig.png", bytes, 8);
  assert_read_fails(sig_only, NW_ERROR_FORMAT, "corrupt or truncated PNG");
  bytes[len / 2] ^= 0x5a; /* flip bits inside the image data: the CRC no longer matches */
  g_autofree char *flipped = write_bytes("flipped.png", bytes, (gssize)len);
  assert_read_fails(flipped, NW_ERROR_FORMAT, "corrupt or truncated PNG");
}

static void test_png_write_round_trip(void)
{
  g_autoptr(NwVolume) v = nw_volume_new(4, 3, 2, 1, NULL);
  for (int j = 0; j < 3; j++)
    for (int i = 0; i < 4; i++) {
      v->data[nw_volume_index(v, i, j, 1)] = (float)(10 * j + i); /* 0..23 */
      v->data[nw_volume_index(v, i, j, 0)] = -5.0f;
    }
  v->data[nw_volume_index(v, 3, 2, 1)] = NAN;
  g_autofree char *p = nw_test_path("out.png");
  g_assert_true(g_file_set_contents(p, "old contents", -1, NULL));
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_image_write_png(p, v, 1, 0.0f, 23.0f, &error));
  g_assert_no_error(error);
  g_autoptr(NwVolume) r = read_ok(p);
  g_assert_cmpint(r->nx, ==, 4);
  g_assert_cmpint(r->ny, ==, 3);
  for (int j = 0; j < 3; j++)
    for (int i = 0; i < 4; i++) {
      double want = (i == 3 && j == 2) ? 0.0 : rint((10 * j + i) * 255.0 / 23.0);
      g_assert_cmpfloat(r->data[nw_volume_index(r, i, j, 0)], ==, (float)want);
    }
  /* values outside [lo, hi] clamp */
  g_assert_true(nw_image_write_png(p, v, 0, 0.0f, 1.0f, &error));
  g_autoptr(NwVolume) z = read_ok(p);
  g_assert_cmpfloat(z->data[0], ==, 0.0f);
  /* only the result is left in the folder: no temporary siblings */
  GDir *d = g_dir_open(nw_test_tmpdir(), 0, NULL);
  const char *name;
  while ((name = g_dir_read_name(d)) != NULL)
    g_assert_false(g_str_has_prefix(name, ".out."));
  g_dir_close(d);

  g_assert_false(nw_image_write_png(p, v, 2, 0.0f, 1.0f, &error));
  g_assert_error(error, NW_ERROR, NW_ERROR_INVALID);
  g_assert_nonnull(strstr(error->message, "slice 2 is outside 0..1"));
  g_clear_error(&error);
  g_autofree char *bad_dir = nw_test_path("missing-folder/out.png");
  g_assert_false(nw_image_write_png(bad_dir, v, 0, 0.0f, 1.0f, &error));
  g_assert_error(error, NW_ERROR, NW_ERROR_IO);
  g_assert_nonnull(strstr(error->message, bad_dir));
}

/* ---- PGM ----------------------------------------------------------------------------------- */

static void test_pgm_binary_and_ascii(void)
{
  /* P5, 8 bit, with a comment in the header; rows top first */
  const char p5[] = "P5\n# made by hand\n3 2\n255\n\x01\x02\x03\xfd\xfe\xff";
  g_autofree char *a = write_bytes("a.pgm", p5, sizeof p5 - 1);
  g_autoptr(NwVolume) va = read_ok(a);
  assert_upright(va, 3, 2, (const double[]){1, 2, 3, 253, 254, 255}, 0.0);

  /* P5, 16 bit big-endian (maxval > 255) */
  const char p5w[] = "P5 2 2 65535 \x01\x00\xff\xff\x00\x07\x80\x01";
  g_autofree char *b = write_bytes("b.pgm", p5w, sizeof p5w - 1);
  g_autoptr(NwVolume) vb = read_ok(b);
  assert_upright(vb, 2, 2, (const double[]){256, 65535, 7, 32769}, 0.0);

  /* P2 with comments between tokens and maxval 1000 */
  const char p2[] = "P2\n# c\n4 # width\n2\n1000\n0 10 999\n1000 # row break\n5 6 7 8\n";
  g_autofree char *c = write_bytes("c.pgm", p2, sizeof p2 - 1);
  g_autoptr(NwVolume) vc = read_ok(c);
  assert_upright(vc, 4, 2, (const double[]){0, 10, 999, 1000, 5, 6, 7, 8}, 0.0);

  /* P6 colour becomes luminance */
  const char p6[] = "P6 1 1 255\n\xc8\x64\x32";
  g_autofree char *d = write_bytes("d.ppm", p6, sizeof p6 - 1);
  g_autoptr(NwVolume) vd = read_ok(d);
  g_assert_cmpfloat_with_epsilon(vd->data[0], 0.2126 * 200 + 0.7152 * 100 + 0.0722 * 50, 1e-3);
}

static void test_pgm_corrupt(void)
{
  const struct {
    const char *name, *bytes;
    int code;
    const char *message;
  } cases[] = {
      {"hdr.pgm", "P5\nabc 3\n255\n", NW_ERROR_FORMAT, "bad PGM header: expected the width"},
      {"eof.pgm", "P2\n3 2", NW_ERROR_FORMAT, "end of file where the maxval should be"},
      {"huge.pgm", "P5\n1000000 1000000\n255\n", NW_ERROR_FORMAT,
       "image size 1000000 x 1000000 is empty or exceeds the limit"},
      {"overflow.pgm", "P5 99999999999999999999999 2 255\n", NW_ERROR_FORMAT, "width"},
      {"zero.pgm", "P5 0 4 255\n", NW_ERROR_FORMAT, "width 0 is outside 1..2147483647"},
      {"maxval.pgm", "P5 2 2 70000\n", NW_ERROR_FORMAT, "maxval 70000 is outside 1..65535"},
      {"nows.pgm", "P5 1 1 255x", NW_ERROR_FORMAT, "no whitespace after maxval 255"},
      {"short.pgm", "P5 4 3 255\n\x01\x02\x03", NW_ERROR_FORMAT, "truncated: 3 of 12 samples"},
      {"short2.pgm", "P2 2 2 9\n1 2 3", NW_ERROR_FORMAT, "truncated: 3 of 4 samples"},
      {"above.pgm", "P2 2 1 9\n1 12", NW_ERROR_FORMAT, "sample 1 is 12, above maxval 9"},
      {"letter.pgm", "P2 2 1 9\n1 x", NW_ERROR_FORMAT, "sample 1 is not a number"},
      {"notimg.pgm", "hello world", NW_ERROR_FORMAT, "not a PNG, PGM/PPM or TIFF image"},
  };
  for (size_t n = 0; n < G_N_ELEMENTS(cases); n++) {
    g_autofree char *p = write_bytes(cases[n].name, cases[n].bytes, -1);
    assert_read_fails(p, cases[n].code, cases[n].message);
  }
  g_autofree char *missing = nw_test_path("missing.png");
  assert_read_fails(missing, NW_ERROR_IO, "cannot open");
}

/* ---- TIFF ---------------------------------------------------------------------------------- */

static void test_tiff_grey_and_rgb(void)
{
  enum { W = 4, H = 3 };
  guint16 s8[W * H], s16[W * H], rgb[W * H * 3];
  double want8[W * H], want16[W * H], want_rgb[W * H];
  for (int e = 0; e < W * H; e++) {
    want8[e] = s8[e] = (guint16)(20 * (e / W) + e % W);
    want16[e] = s16[e] = (guint16)(65535 - 3000 * e);
    rgb[3 * e] = (guint16)(e * 20), rgb[3 * e + 1] = (guint16)(255 - e), rgb[3 * e + 2] = 9;
    want_rgb[e] = 0.2126 * rgb[3 * e] + 0.7152 * rgb[3 * e + 1] + 0.0722 * rgb[3 * e + 2];
  }
  g_autofree char *p8 = nw_test_path("g8.tif"), *p16 = nw_test_path("g16.tif"),
                  *prgb = nw_test_path("rgb.tiff");
  write_test_tiff(p8, W, H, 8, 1, PHOTOMETRIC_MINISBLACK, s8);
  write_test_tiff(p16, W, H, 16, 1, PHOTOMETRIC_MINISBLACK, s16);
  write_test_tiff(prgb, W, H, 8, 3, PHOTOMETRIC_RGB, rgb);
  g_assert_true(nw_image_is_2d_file(p8));
  g_autoptr(NwVolume) v8 = read_ok(p8);
  assert_upright(v8, W, H, want8, 0.0);
  g_autoptr(NwVolume) v16 = read_ok(p16);
  assert_upright(v16, W, H, want16, 0.0);
  g_autoptr(NwVolume) vrgb = read_ok(prgb);
  assert_upright(vrgb, W, H, want_rgb, 1e-3);

  /* MINISWHITE: 0 is white, so values are inverted */
  write_test_tiff(p8, W, H, 8, 1, PHOTOMETRIC_MINISWHITE, s8);
  g_autoptr(NwVolume) vw = read_ok(p8);
  g_assert_cmpfloat(vw->data[nw_volume_index(vw, 0, H - 1, 0)], ==, 255.0f);
}

static void test_tiff_tiled(void)
{
  enum { W = 20, H = 18 };
  guint16 s[W * H];
  double want[W * H];
  for (int e = 0; e < W * H; e++)
    want[e] = s[e] = (guint16)(1000 + 100 * (e / W) + e % W);
  g_autofree char *p = nw_test_path("tiled.tif");
  write_tiled_tiff(p, W, H, s);
  g_autoptr(NwVolume) v = read_ok(p);
  assert_upright(v, W, H, want, 0.0);
}

static void test_tiff_corrupt(void)
{
  enum { W = 32, H = 32 };
  guint16 s[W * H];
  for (int e = 0; e < W * H; e++)
    s[e] = (guint16)(e % 256);
  g_autofree char *good = nw_test_path("good.tif");
  write_test_tiff(good, W, H, 8, 1, PHOTOMETRIC_MINISBLACK, s);
  g_autofree char *bytes = NULL;
  gsize len = 0;
  g_assert_true(g_file_get_contents(good, &bytes, &len, NULL));
  /* libtiff writes the directory after the pixels: cutting the file loses it */
  g_autofree char *cut = write_bytes("cut.tif", bytes, (gssize)len / 2);
  assert_read_fails(cut, NW_ERROR_FORMAT, "TIFF");
  g_autofree char *head = write_bytes("head.tif", "II*\0\xff\xff\xff\x7f", 8);
  assert_read_fails(head, NW_ERROR_FORMAT, "corrupt or unreadable TIFF");
}

/* Every prefix of a valid file is refused with an error naming the file, and files with
 * random bytes changed either load or give such an error: never a crash (run under ASan). */
static void check_damaged_copies(const char *good, const char *name, guint32 seed)
{
  g_autofree char *bytes = NULL;
  gsize len = 0;
  g_assert_true(g_file_get_contents(good, &bytes, &len, NULL));
  g_autofree char *path = nw_test_path(name);
  for (gsize cut = 0; cut < len; cut += 1 + cut / 8) {
    g_assert_true(g_file_set_contents(path, bytes, (gssize)cut, NULL));
    g_autoptr(GError) error = NULL;
    g_assert_null(nw_image_read(path, &error));
    g_assert_nonnull(error);
    g_assert_nonnull(strstr(error->message, path));
  }
  GRand *r = g_rand_new_with_seed(seed);
  g_autofree char *copy = g_memdup2(bytes, len);
  for (int n = 0; n < 100; n++) {
    memcpy(copy, bytes, len);
    for (int flips = 0; flips < 3; flips++)
      copy[g_rand_int_range(r, 0, (gint32)len)] = (char)g_rand_int_range(r, 0, 256);
    g_assert_true(g_file_set_contents(path, copy, (gssize)len, NULL));
    g_autoptr(GError) error = NULL;
    g_autoptr(NwVolume) v = nw_image_read(path, &error);
    g_assert_true((v != NULL) != (error != NULL));
    if (error != NULL)
      g_assert_nonnull(strstr(error->message, path));
  }
  g_rand_free(r);
}

static void test_damaged_files(void)
{
  enum { W = 24, H = 20 };
  guint16 s[W * H * 3];
  for (int e = 0; e < W * H * 3; e++)
    s[e] = (guint16)((e * 7919) % 65536);
  g_autofree char *png = nw_test_path("fuzz.png"), *tif = nw_test_path("fuzz.tif"),
                  *tiled = nw_test_path("fuzz-tiled.tif");
  write_test_png(png, W, H, 16, PNG_COLOR_TYPE_RGB, s, 0);
  write_test_tiff(tif, W, H, 16, 3, PHOTOMETRIC_RGB, s);
  write_tiled_tiff(tiled, W, H, s);
  GString *pgm = g_string_new("P5\n# comment\n24 20\n65535\n");
  for (int e = 0; e < W * H; e++) {
    g_string_append_c(pgm, (char)(s[e] >> 8));
    g_string_append_c(pgm, (char)(s[e] & 0xff));
  }
  g_autofree char *p5 = write_bytes("fuzz.pgm", pgm->str, (gssize)pgm->len);
  g_string_free(pgm, TRUE);
  check_damaged_copies(png, "damaged.png", 1);
  check_damaged_copies(tif, "damaged.tif", 2);
  check_damaged_copies(tiled, "damaged-tiled.tif", 3);
  check_damaged_copies(p5, "damaged.pgm", 4);
}

/* ---- detection ------------------------------------------------------------------------------ */

static void test_detect_and_read_any(void)
{
  const guint16 s[6] = {9, 8, 7, 6, 5, 4};
  g_autofree char *p = nw_test_path("named-like-nifti.nii"); /* content decides, not name */
  write_test_png(p, 3, 2, 8, PNG_COLOR_TYPE_GRAY, s, 0);
  g_assert_true(nw_image_is_2d_file(p));
  g_autoptr(GError) error = NULL;
  g_autoptr(NwVolume) v = nw_volume_read_any(p, &error);
  g_assert_no_error(error);
  assert_upright(v, 3, 2, (const double[]){9, 8, 7, 6, 5, 4}, 0.0);
  /* a NIfTI file goes to the NIfTI reader */
  g_autoptr(NwVolume) vol = nw_test_volume(4, 3, 2, 1, 3);
  nw_volume_set_spacing(vol, 1.5, 2.0, 2.5);
  g_autofree char *nii = nw_test_path("volume.nii");
  g_assert_true(nw_nifti_write(nii, vol, NW_DT_FLOAT32, FALSE, &error));
  g_assert_no_error(error);
  g_assert_false(nw_image_is_2d_file(nii));
  g_autoptr(NwVolume) back = nw_volume_read_any(nii, &error);
  g_assert_no_error(error);
  g_assert_cmpint(back->nz, ==, 2);
  g_assert_cmpfloat(nw_test_max_abs_diff(back, vol), ==, 0.0);
  g_assert_cmpfloat_with_epsilon(back->spacing_mm[2], 2.5, 1e-6);
  g_autofree char *txt = write_bytes("text.png", "P7 not pgm", -1);
  g_assert_false(nw_image_is_2d_file(txt));
  g_autofree char *missing = nw_test_path("nope.pgm");
  g_assert_false(nw_image_is_2d_file(missing));
}

/* A header that claims gigabytes over a few bytes of data is "truncated" before anything
 * is allocated, not "out of memory" (issue 9, point 6). */
static void test_claims_before_data(void)
{
  g_autofree char *pnm = nw_test_path("claim.pgm");
  g_assert_true(g_file_set_contents(pnm, "P5 40000 40000 255\n", -1, NULL));
  GError *err = NULL;
  g_assert_null(nw_image_read(pnm, &err));
  g_autofree char *want = g_strdup_printf("%s: truncated: 0 of 1600000000 samples", pnm);
  g_assert_cmpstr(err->message, ==, want);
  g_clear_error(&err);
  /* A float TIFF of 60000 x 30000 pixels (7.2 GB) with one strip of 240000 bytes. */
  g_autofree char *tif = nw_test_path("claim.tif");
  TIFF *t = TIFFOpen(tif, "w");
  TIFFSetField(t, TIFFTAG_IMAGEWIDTH, (uint32_t)60000);
  TIFFSetField(t, TIFFTAG_IMAGELENGTH, (uint32_t)30000);
  TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, (uint16_t)32);
  TIFFSetField(t, TIFFTAG_SAMPLEFORMAT, (uint16_t)SAMPLEFORMAT_IEEEFP);
  TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, (uint16_t)1);
  TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
  TIFFSetField(t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, (uint32_t)30000);
  g_autofree float *row = g_new0(float, 60000);
  g_assert_cmpint(TIFFWriteScanline(t, row, 0, 0), ==, 1);
  TIFFClose(t);
  g_assert_null(nw_image_read(tif, &err));
  GStatBuf st;
  g_assert_cmpint(g_stat(tif, &st), ==, 0);
  /* libtiff cut the image into strips of its own; only the first holds data */
  g_autofree char *want2 = g_strdup_printf(
      "%s: truncated: strip 1 lies past the end of the %" G_GINT64_FORMAT "-byte file", tif,
      (gint64)st.st_size);
  g_assert_cmpstr(err->message, ==, want2);
  g_clear_error(&err);
  /* fuzz_image_tiff's finding: 158 bytes, no strip offsets, 65281 x 16644 pixels claimed
   * (the reader asked for 4.3 GB before libtiff said the data was missing) */
  static const char oom_b64[] =
      "SUkqACQAAACAAAAApKoAAAQAAADQEKziOYAB4Jkie1AxXVAQCgAAAQMAAQAAAAH/CQABAQMAAQAAAARBAAAC"
      "AQMAAQAAAAgAAAADAQMAAQAAAAYAAAAGAQMAAQAAAAMAAAAREQQAAgAAAKIsLCwsLCwsLCwsLCwsLCwsLCws"
      "LCwsLCwsLCwXAQMAAgAAAA4ADgABAAABCAAAABYAAAA=";
  gsize n = 0;
  g_autofree guchar *oom = g_base64_decode(oom_b64, &n);
  g_assert_cmpuint(n, ==, 158);
  g_autofree char *tif3 = nw_test_path("no-offsets.tif");
  g_assert_true(g_file_set_contents(tif3, (const char *)oom, (gssize)n, NULL));
  g_assert_null(nw_image_read(tif3, &err));
  g_autofree char *want3 = g_strdup_printf(
      "%s: corrupt TIFF: no strip offsets or byte counts (where the image data lies)", tif3);
  g_assert_cmpstr(err->message, ==, want3);
  g_clear_error(&err);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/io-image/png-grey-8-and-16", test_png_grey_8_and_16);
  g_test_add_func("/io-image/png-colour-to-luminance", test_png_colour_to_luminance);
  g_test_add_func("/io-image/png-interlaced-palette-1bit", test_png_interlaced_palette_1bit);
  g_test_add_func("/io-image/png-physical-spacing", test_png_physical_spacing);
  g_test_add_func("/io-image/png-corrupt", test_png_corrupt);
  g_test_add_func("/io-image/png-write-round-trip", test_png_write_round_trip);
  g_test_add_func("/io-image/pgm-binary-and-ascii", test_pgm_binary_and_ascii);
  g_test_add_func("/io-image/pgm-corrupt", test_pgm_corrupt);
  g_test_add_func("/io-image/tiff-grey-and-rgb", test_tiff_grey_and_rgb);
  g_test_add_func("/io-image/tiff-tiled", test_tiff_tiled);
  g_test_add_func("/io-image/tiff-corrupt", test_tiff_corrupt);
  g_test_add_func("/io-image/damaged-files", test_damaged_files);
  g_test_add_func("/io-image/detect-and-read-any", test_detect_and_read_any);
  g_test_add_func("/io-image/claims-before-data", test_claims_before_data);
  return g_test_run();
}
