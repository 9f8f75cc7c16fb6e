/* io_image.c — 2D images as single-slice volumes: PNG (libpng), PGM/PPM (parsed here), TIFF
 * (libtiff), and 8-bit grey PNG output. Any thread; CPU only.
 *
 * Orientation: row 0 of a PNG, PNM or TIFF file is the TOP row of the picture. Rows are
 * flipped on load, so voxel row j = 0 is the BOTTOM row of the picture and j increases
 * upwards; columns keep their order (i = 0 is the left column). With the affine
 * diag(spacing) (i -> +x, j -> +y) a viewer that draws j upwards shows the picture upright.
 * nw_image_write_png flips back, so a read-write round trip gives the same file.
 *
 * Values: the stored integers (0..255, 0..65535, 0..maxval) as floats, not rescaled. Colour
 * is converted to luminance Y = 0.2126 R + 0.7152 G + 0.0722 B on the stored values (no gamma
 * decoding); alpha is dropped. Spacing comes from PNG pHYs (metre unit) or TIFF
 * X/YResolution (inch or cm), else 1 mm. */
#define _POSIX_C_SOURCE 200809L /* fileno */
#include "io_image.h"
#include "io_image_private.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <tiffio.h>

#include "atomic_file.h"
#include "input_file.h"
#include "io_nifti.h"
#include "nw_error.h"

/* ---- shared helpers ------------------------------------------------------------------ */

/* Refuse absurd sizes before allocating anything. */
static gboolean check_image_size(const char *path, guint64 w, guint64 h, GError **error)
{
  if (w == 0 || h == 0 || w > G_MAXINT32 || h > G_MAXINT32 || w * h > NW_MAX_VOXELS) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "%s: image size %" G_GUINT64_FORMAT " x %" G_GUINT64_FORMAT
                " is empty or exceeds the limit of %zu pixels",
                path, w, h, NW_MAX_VOXELS);
    return FALSE;
  }
  return TRUE;
}

static NwVolume *new_image_volume(const char *path, guint64 w, guint64 h, GError **error)
{
  if (!check_image_size(path, w, h, error))
    return NULL;
  NwVolume *v = nw_volume_new((int)w, (int)h, 1, 1, error);
  if (v == NULL)
    nw_error_prefix(error, path);
  return v;
}

/* Pixels of the file row `row` (0 = top), `channels` values each (1 grey, >= 3 colour), into
 * voxel row ny-1-row. */
static void store_row(NwVolume *v, int row, const float *px, int channels)
{
  nw_image_pixel_values(px, channels, 0, v->nx, v->data + nw_volume_index(v, 0, v->ny - 1 - row, 0));
}

void nw_image_pixel_values(const float *px, int channels, int i0, int n, float *dst)
{
  for (int i = 0; i < n; i++) {
    const float *p = px + (size_t)(i0 + i) * channels;
    dst[i] = channels >= 3 ? 0.2126f * p[0] + 0.7152f * p[1] + 0.0722f * p[2] : p[0];
  }
}

static void set_spacing_or_default(NwVolume *v, double sx, double sy)
{
  gboolean ok = sx > 0.0 && sy > 0.0 && isfinite(sx) && isfinite(sy);
  nw_volume_set_spacing(v, ok ? sx : 1.0, ok ? sy : 1.0, 1.0);
}

/* ---- PNG reading ----------------------------------------------------------------------- */

typedef struct {
  const char *path;
  FILE *f;
  png_structp png;
  png_infop info;
  png_bytep image; /* whole decoded image, top row first */
  png_bytepp rows;
  float *line; /* one row converted to float */
  NwVolume *v;
  GError *error; /* set by our checks; libpng's own errors land in msg */
  char msg[256];
} PngRead;

static void png_error_to_msg(png_structp png, png_const_charp msg)
{
  PngRead *r = png_get_error_ptr(png);
  g_strlcpy(r->msg, msg, sizeof r->msg);
  png_longjmp(png, 1);
}

static void png_warning_to_debug(png_structp png, png_const_charp msg)
{
  g_debug("libpng warning: %s", msg);
}

/* One decoded row (top row y = 0) into the volume; 16-bit samples are big-endian. */
static void png_store_row(PngRead *r, png_uint_32 y, const png_byte *src, int channels, int depth)
{
  for (size_t e = 0; e < (size_t)r->v->nx * channels; e++)
    r->line[e] = depth == 16 ? (float)((src[2 * e] << 8) | src[2 * e + 1]) : (float)src[e];
  store_row(r->v, (int)y, r->line, channels);
}

/* Expand palettes and low bit depths to 8 bits, drop alpha (also the alpha that palette
 * expansion makes from tRNS): what remains is 1 (grey) or 3 (RGB) channels of 8 or 16 bits. */
static void png_set_transforms(png_structp png, png_infop info)
{
  int ctype = png_get_color_type(png, info), depth = png_get_bit_depth(png, info);
  if (ctype == PNG_COLOR_TYPE_PALETTE)
    png_set_palette_to_rgb(png);
  if (ctype == PNG_COLOR_TYPE_GRAY && depth < 8)
    png_set_expand_gray_1_2_4_to_8(png);
  png_set_strip_alpha(png);
  (void)png_set_interlace_handling(png);
  png_read_update_info(png, info);
}

/* zlib inflates at most about 1032 bytes from one: pixel rows beyond what the file's size
 * can hold mean a truncated file, refused before the image is allocated. */
static gboolean png_data_possible(PngRead *r, png_uint_32 w, png_uint_32 h)
{
  struct stat st;
  if (fstat(fileno(r->f), &st) != 0)
    return TRUE;
  const guint64 raw = (guint64)h * ((guint64)png_get_rowbytes(r->png, r->info) + 1);
  if (raw <= 1032 * (guint64)st.st_size + 4096)
    return TRUE;
  g_set_error(&r->error, NW_ERROR, NW_ERROR_FORMAT,
              "%s: truncated: %u x %u pixels need %" G_GUINT64_FORMAT
              " bytes of rows, more than a %" G_GINT64_FORMAT "-byte PNG can hold",
              r->path, w, h, raw, (gint64)st.st_size);
  return FALSE;
}

/* All libpng calls after setjmp; everything that must outlive a longjmp lives in *r (not in
 * locals of this function). Non-interlaced images are decoded row by row; interlaced ones
 * need the whole image in memory. */
static gboolean png_decode(PngRead *r)
{
  if (setjmp(png_jmpbuf(r->png)))
    return FALSE;
  png_init_io(r->png, r->f);
  png_read_info(r->png, r->info);
  png_uint_32 w = png_get_image_width(r->png, r->info), h = png_get_image_height(r->png, r->info);
  if (!check_image_size(r->path, w, h, &r->error) || !png_data_possible(r, w, h))
    return FALSE;
  png_set_transforms(r->png, r->info);
  int channels = png_get_channels(r->png, r->info), depth = png_get_bit_depth(r->png, r->info);
  size_t rowbytes = png_get_rowbytes(r->png, r->info);
  gboolean interlaced = png_get_interlace_type(r->png, r->info) != PNG_INTERLACE_NONE;
  png_uint_32 buffered = interlaced ? h : 1;
  r->v = new_image_volume(r->path, w, h, &r->error);
  if (r->v == NULL)
    return FALSE;
  r->image = g_try_malloc(rowbytes * buffered);
  r->rows = g_try_new(png_bytep, buffered);
  r->line = g_try_new(float, (size_t)w *channels);
  if (r->image == NULL || r->rows == NULL || r->line == NULL) {
    g_set_error(&r->error, NW_ERROR, NW_ERROR_NOMEM, "%s: out of memory for %u x %u pixels",
                r->path, w, h);
    return FALSE;
  }
  if (interlaced) {
    for (png_uint_32 y = 0; y < h; y++)
      r->rows[y] = r->image + (size_t)y * rowbytes;
    png_read_image(r->png, r->rows);
    for (png_uint_32 y = 0; y < h; y++)
      png_store_row(r, y, r->rows[y], channels, depth);
  } else {
    for (png_uint_32 y = 0; y < h; y++) {
      png_read_row(r->png, r->image, NULL);
      png_store_row(r, y, r->image, channels, depth);
    }
  }
  png_read_end(r->png, NULL); /* reaches IEND: a file cut after the pixels is still refused */
  png_uint_32 xres = 0, yres = 0;
  int unit = 0;
  if (png_get_pHYs(r->png, r->info, &xres, &yres, &unit) && unit == PNG_RESOLUTION_METER &&
      xres > 0 && yres > 0)
    set_spacing_or_default(r->v, 1000.0 / xres, 1000.0 / yres);
  return TRUE;
}

static NwVolume *read_png(const char *path, GError **error)
{
  PngRead r = {.path = path};
  r.f = g_fopen(path, "rb");
  if (r.f == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "%s: cannot open: %s", path, g_strerror(errno));
    return NULL;
  }
  r.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &r, png_error_to_msg, png_warning_to_debug);
  r.info = r.png ? png_create_info_struct(r.png) : NULL;
  gboolean ok = r.info != NULL && png_decode(&r);
  if (!ok && r.error == NULL)
    g_set_error(&r.error, NW_ERROR, NW_ERROR_FORMAT, "%s: corrupt or truncated PNG: %s", path,
                r.msg[0] ? r.msg : "cannot initialise libpng");
  png_destroy_read_struct(r.png ? &r.png : NULL, r.info ? &r.info : NULL, NULL);
  fclose(r.f);
  g_free(r.image);
  g_free(r.rows);
  g_free(r.line);
  if (!ok) {
    nw_volume_free(r.v);
    g_propagate_error(error, r.error);
    return NULL;
  }
  return r.v;
}

/* ---- PNG writing ----------------------------------------------------------------------- */

typedef struct {
  const NwVolume *v;
  int k;
  float lo, hi;
  FILE *f;
  png_structp png;
  png_infop info;
  png_bytep row;
  char msg[256];
} PngWrite;

static png_byte to_byte(float x, float lo, float hi)
{
  if (isnan(x))
    return 0;
  float t = hi > lo ? (x - lo) / (hi - lo) : (x > lo ? 1.0f : 0.0f);
  t = t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
  return (png_byte)lrintf(t * 255.0f);
}

static gboolean png_encode(PngWrite *w)
{
  if (setjmp(png_jmpbuf(w->png)))
    return FALSE;
  const NwVolume *v = w->v;
  png_init_io(w->png, w->f);
  png_set_IHDR(w->png, w->info, (png_uint_32)v->nx, (png_uint_32)v->ny, 8, PNG_COLOR_TYPE_GRAY,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(w->png, w->info);
  for (int row = 0; row < v->ny; row++) { /* file row 0 is the top: voxel row ny-1 */
    const float *src = v->data + nw_volume_index(v, 0, v->ny - 1 - row, w->k) * v->nc;
    for (int i = 0; i < v->nx; i++)
      w->row[i] = to_byte(src[(size_t)i * v->nc], w->lo, w->hi);
    png_write_row(w->png, w->row);
  }
  png_write_end(w->png, NULL);
  return TRUE;
}

static gboolean write_png_file(const char *tmp_path, gpointer data, GError **error)
{
  PngWrite *w = data;
  w->f = g_fopen(tmp_path, "wb");
  if (w->f == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "cannot create: %s", g_strerror(errno));
    return FALSE;
  }
  w->msg[0] = '\0';
  w->png =
      png_create_write_struct(PNG_LIBPNG_VER_STRING, w, png_error_to_msg, png_warning_to_debug);
  w->info = w->png ? png_create_info_struct(w->png) : NULL;
  w->row = g_malloc((size_t)w->v->nx);
  gboolean ok = w->info != NULL && png_encode(w);
  png_destroy_write_struct(w->png ? &w->png : NULL, w->info ? &w->info : NULL);
  g_clear_pointer(&w->row, g_free);
  int close_status = fclose(w->f);
  if (ok && close_status != 0) {
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "write failed: %s", g_strerror(errno));
    return FALSE;
  }
  if (!ok)
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "cannot write PNG: %s",
                w->msg[0] ? w->msg : "cannot initialise libpng");
  return ok;
}

gboolean nw_image_write_png(const char *path, const NwVolume *v, int k, float lo, float hi,
                            GError **error)
{
  if (k < 0 || k >= v->nz) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "%s: slice %d is outside 0..%d", path, k,
                v->nz - 1);
    return FALSE;
  }
  if (v->nx > 1000000 || v->ny > 1000000) { /* libpng's default user limit */
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "%s: slice of %d x %d pixels is too large "
                "for PNG",
                path, v->nx, v->ny);
    return FALSE;
  }
  PngWrite w = {.v = v, .k = k, .lo = lo, .hi = hi};
  return nw_write_atomically(path, write_png_file, &w, error);
}

/* ---- PGM / PPM (P2, P3 ASCII; P5, P6 binary) ----------------------------------------------- */

typedef enum { PNM_OK, PNM_EOF, PNM_NOT_DIGIT, PNM_TOO_BIG } PnmStatus;

/* Skip whitespace and '#' comments (to the end of the line). */
static void pnm_skip(FILE *f)
{
  int c;
  while ((c = getc(f)) != EOF) {
    if (c == '#') {
      while ((c = getc(f)) != EOF && c != '\n' && c != '\r')
        ;
    } else if (!g_ascii_isspace(c)) {
      ungetc(c, f);
      return;
    }
  }
}

/* A decimal number <= limit; digits past the limit are consumed so the report is exact up
 * to overflow. *bad is the offending character for PNM_NOT_DIGIT. */
static PnmStatus pnm_read_uint(FILE *f, guint64 limit, guint64 *out, int *bad)
{
  pnm_skip(f);
  int c = getc(f);
  if (c == EOF)
    return PNM_EOF;
  if (!g_ascii_isdigit(c)) {
    *bad = c;
    return PNM_NOT_DIGIT;
  }
  guint64 x = 0;
  gboolean big = FALSE;
  for (; c != EOF && g_ascii_isdigit(c); c = getc(f)) {
    if (x > (G_MAXUINT64 - 9) / 10)
      big = TRUE;
    else
      x = x * 10 + (guint64)(c - '0');
  }
  if (c != EOF)
    ungetc(c, f);
  *out = x;
  return big || x > limit ? PNM_TOO_BIG : PNM_OK;
}

static gboolean pnm_header_field(FILE *f, const char *path, const char *what, guint64 lo,
                                 guint64 hi, guint64 *out, GError **error)
{
  int bad = 0;
  PnmStatus s = pnm_read_uint(f, hi, out, &bad);
  if (s == PNM_OK && *out >= lo)
    return TRUE;
  if (s == PNM_EOF)
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "%s: bad PGM header: end of file where the %s should be", path, what);
  else if (s == PNM_NOT_DIGIT)
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: bad PGM header: expected the %s, found '%c'",
                path, what, g_ascii_isprint(bad) ? bad : '?');
  else
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "%s: bad PGM header: %s %" G_GUINT64_FORMAT " is outside %" G_GUINT64_FORMAT
                "..%" G_GUINT64_FORMAT,
                path, what, *out, lo, hi);
  return FALSE;
}

/* One row of ASCII samples (P2/P3) into px. */
static gboolean pnm_ascii_row(FILE *f, const char *path, float *px, size_t n, guint64 maxval,
                              size_t done, size_t total, GError **error)
{
  for (size_t e = 0; e < n; e++) {
    guint64 x = 0;
    int bad = 0;
    PnmStatus s = pnm_read_uint(f, maxval, &x, &bad);
    if (s == PNM_OK) {
      px[e] = (float)x;
      continue;
    }
    if (s == PNM_EOF)
      g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: truncated: %zu of %zu samples", path,
                  done + e, total);
    else if (s == PNM_NOT_DIGIT)
      g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                  "%s: corrupt PGM data: sample %zu is not a number (found '%c')", path, done + e,
                  g_ascii_isprint(bad) ? bad : '?');
    else
      g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                  "%s: corrupt PGM data: sample %zu is %" G_GUINT64_FORMAT
                  ", above maxval %" G_GUINT64_FORMAT,
                  path, done + e, x, maxval);
    return FALSE;
  }
  return TRUE;
}

/* One row of binary samples (P5/P6: 1 byte, or 2 bytes big-endian when maxval > 255). */
static gboolean pnm_binary_row(FILE *f, const char *path, float *px, guint8 *bytes, size_t n,
                               guint64 maxval, size_t done, size_t total, GError **error)
{
  size_t bps = maxval > 255 ? 2 : 1, got = fread(bytes, bps, n, f);
  if (got < n) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: truncated: %zu of %zu samples", path,
                done + got, total);
    return FALSE;
  }
  for (size_t e = 0; e < n; e++) {
    guint x = bps == 2 ? (guint)((bytes[2 * e] << 8) | bytes[2 * e + 1]) : bytes[e];
    if (x > maxval) {
      g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                  "%s: corrupt PGM data: sample %zu is %u, above maxval %" G_GUINT64_FORMAT, path,
                  done + e, x, maxval);
      return FALSE;
    }
    px[e] = (float)x;
  }
  return TRUE;
}

/* The samples the header promises must be in the file before the image is allocated (a
 * 15-byte file may claim 3.4 GB): binary ones exactly, ASCII ones at one byte each at least
 * (the row reader then counts them exactly). */
static gboolean pnm_data_present(FILE *f, const char *path, guint64 w, guint64 h, int channels,
                                 guint64 maxval, gboolean binary, GError **error)
{
  const long here = ftell(f);
  struct stat st;
  if (here < 0 || fstat(fileno(f), &st) != 0)
    return TRUE; /* not seekable: the row reader finds the end */
  const guint64 left = (guint64)MAX((gint64)st.st_size - here, (gint64)0);
  const guint64 samples = w * h * (guint64)channels;
  const guint64 need = binary ? samples * (maxval > 255 ? 2 : 1) : samples;
  if (left >= need)
    return TRUE;
  const guint64 have = binary ? left / (maxval > 255 ? 2 : 1) : left;
  g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
              "%s: truncated: %s%" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " samples", path,
              binary ? "" : "at most ", have, samples);
  return FALSE;
}

static NwVolume *pnm_parse(FILE *f, const char *path, GError **error)
{
  char magic[2];
  if (fread(magic, 1, 2, f) != 2 || magic[0] != 'P' || magic[1] == '\0' ||
      !strchr("2356", magic[1])) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: bad PGM header: no P2/P3/P5/P6 magic", path);
    return NULL;
  }
  gboolean binary = magic[1] == '5' || magic[1] == '6';
  int channels = (magic[1] == '3' || magic[1] == '6') ? 3 : 1;
  guint64 w, h, maxval;
  if (!pnm_header_field(f, path, "width", 1, G_MAXINT32, &w, error) ||
      !pnm_header_field(f, path, "height", 1, G_MAXINT32, &h, error) ||
      !check_image_size(path, w, h, error) ||
      !pnm_header_field(f, path, "maxval", 1, 65535, &maxval, error))
    return NULL;
  if (binary) { /* exactly one whitespace character separates maxval from the raster */
    int c = getc(f);
    if (c == EOF || !g_ascii_isspace(c)) {
      g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                  "%s: bad PGM header: no whitespace after maxval %" G_GUINT64_FORMAT, path,
                  maxval);
      return NULL;
    }
  }
  if (!pnm_data_present(f, path, w, h, channels, maxval, binary, error))
    return NULL;
  g_autoptr(NwVolume) v = new_image_volume(path, w, h, error);
  if (v == NULL)
    return NULL;
  size_t n = (size_t)w * channels, total = n * (size_t)h;
  g_autofree float *px = g_new(float, n);
  g_autofree guint8 *bytes = binary ? g_new(guint8, n * 2) : NULL;
  for (guint64 row = 0; row < h; row++) {
    gboolean ok = binary ? pnm_binary_row(f, path, px, bytes, n, maxval, row * n, total, error)
                         : pnm_ascii_row(f, path, px, n, maxval, row * n, total, error);
    if (!ok)
      return NULL;
    store_row(v, (int)row, px, channels);
  }
  return g_steal_pointer(&v);
}

static NwVolume *read_pnm(const char *path, GError **error)
{
  FILE *f = g_fopen(path, "rb");
  if (f == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "%s: cannot open: %s", path, g_strerror(errno));
    return NULL;
  }
  NwVolume *v = pnm_parse(f, path, error);
  fclose(f);
  return v;
}

/* ---- TIFF -------------------------------------------------------------------------------- */

/* Per-handle handlers (libtiff >= 4.5): messages are kept, never printed. */
static int tiff_error_to_msg(TIFF *t, void *user, const char *module, const char *fmt, va_list ap)
{
  TiffMessages *m = user;
  if (m->msg[0] == '\0')
    g_vsnprintf(m->msg, sizeof m->msg, fmt, ap);
  return 1;
}

static int tiff_warning_ignore(TIFF *t, void *user, const char *module, const char *fmt, va_list ap)
{
  return 1;
}

gboolean nw_tiff_layout(TIFF *t, const char *path, TiffLayout *L, GError **error)
{
  memset(L, 0, sizeof *L);
  if (!TIFFGetField(t, TIFFTAG_IMAGEWIDTH, &L->w) || !TIFFGetField(t, TIFFTAG_IMAGELENGTH, &L->h)) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: TIFF without image width or length", path);
    return FALSE;
  }
  TIFFGetFieldDefaulted(t, TIFFTAG_BITSPERSAMPLE, &L->bits);
  TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLESPERPIXEL, &L->spp);
  TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLEFORMAT, &L->format);
  TIFFGetFieldDefaulted(t, TIFFTAG_PLANARCONFIG, &L->planar);
  if (!TIFFGetField(t, TIFFTAG_PHOTOMETRIC, &L->photometric))
    L->photometric = PHOTOMETRIC_MINISBLACK;
  gboolean grey =
      (L->photometric == PHOTOMETRIC_MINISBLACK || L->photometric == PHOTOMETRIC_MINISWHITE) &&
      L->spp >= 1;
  gboolean rgb = L->photometric == PHOTOMETRIC_RGB && L->spp >= 3;
  gboolean sample_ok = ((L->bits == 8 || L->bits == 16) && L->format == SAMPLEFORMAT_UINT) ||
                       (L->bits == 32 && L->format == SAMPLEFORMAT_IEEEFP &&
                        L->photometric != PHOTOMETRIC_MINISWHITE);
  const char *why = !(grey || rgb) ? "only grey or RGB photometric interpretations are read"
                    : !sample_ok   ? "only 8- or 16-bit unsigned or 32-bit float samples are "
                                     "read"
                    : L->planar != PLANARCONFIG_CONTIG ? "separate colour planes are not read"
                                                       : NULL;
  if (why != NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED,
                "%s: unsupported TIFF (photometric %u, %u samples of %u bits, format %u): %s", path,
                L->photometric, L->spp, L->bits, L->format, why);
    return FALSE;
  }
  return check_image_size(path, L->w, L->h, error);
}

void nw_tiff_decode_row(const TiffLayout *L, const guint8 *src, float *px)
{
  int used = L->photometric == PHOTOMETRIC_RGB ? 3 : 1;
  double white = L->bits == 8 ? 255.0 : 65535.0;
  for (uint32_t i = 0; i < L->w; i++)
    for (int c = 0; c < used; c++) {
      size_t s = (size_t)i * L->spp + (size_t)c;
      float x;
      if (L->bits == 8) {
        x = src[s];
      } else if (L->bits == 16) {
        guint16 y;
        memcpy(&y, src + 2 * s, 2); /* libtiff returns native byte order */
        x = y;
      } else {
        memcpy(&x, src + 4 * s, 4);
      }
      if (L->photometric == PHOTOMETRIC_MINISWHITE)
        x = (float)(white - x);
      px[(size_t)i * used + (size_t)c] = x;
    }
}

gboolean nw_tiff_row_error(const char *path, uint32_t row, const TiffMessages *m,
                               GError **error)
{
  g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: corrupt or truncated TIFF at row %u: %s", path,
              row, m->msg[0] ? m->msg : "read error");
  return FALSE;
}

/* Strips: one scanline at a time. */
static gboolean tiff_read_strips(TIFF *t, const char *path, const TiffLayout *L,
                                 const TiffMessages *m, NwVolume *v, float *px, GError **error)
{
  tmsize_t line_bytes = TIFFScanlineSize(t);
  g_autofree guint8 *line = line_bytes > 0 ? g_try_malloc((size_t)line_bytes) : NULL;
  if (line == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "%s: TIFF scanline of %" G_GINT64_FORMAT " bytes cannot be read", path,
                (gint64)line_bytes);
    return FALSE;
  }
  int used = L->photometric == PHOTOMETRIC_RGB ? 3 : 1;
  for (uint32_t row = 0; row < L->h; row++) {
    if (TIFFReadScanline(t, line, row, 0) < 0)
      return nw_tiff_row_error(path, row, m, error);
    nw_tiff_decode_row(L, line, px);
    store_row(v, (int)row, px, used);
  }
  return TRUE;
}

/* Tiles: one band of tile rows at a time, assembled into whole image rows. */
static gboolean tiff_read_tiles(TIFF *t, const char *path, const TiffLayout *L,
                                const TiffMessages *m, NwVolume *v, float *px, GError **error)
{
  uint32_t tw = 0, th = 0;
  TIFFGetField(t, TIFFTAG_TILEWIDTH, &tw);
  TIFFGetField(t, TIFFTAG_TILELENGTH, &th);
  size_t pixel_bytes = (size_t)L->spp * (L->bits / 8), row_bytes = (size_t)L->w * pixel_bytes;
  tmsize_t tile_bytes = TIFFTileSize(t);
  /* Tiles may overhang the image but not absurdly: at most 2^26 pixels each. */
  if (tw == 0 || th == 0 || (guint64)tw * th > (1u << 26) ||
      tile_bytes < (tmsize_t)((size_t)tw * th * pixel_bytes)) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: bad TIFF tile size %u x %u", path, tw, th);
    return FALSE;
  }
  g_autofree guint8 *tile = g_try_malloc((size_t)tile_bytes);
  g_autofree guint8 *band = g_try_malloc((size_t)MIN(th, L->h) * row_bytes);
  if (tile == NULL || band == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_NOMEM, "%s: out of memory for TIFF tiles of %u x %u",
                path, tw, th);
    return FALSE;
  }
  int used = L->photometric == PHOTOMETRIC_RGB ? 3 : 1;
  for (uint32_t y0 = 0; y0 < L->h; y0 += th) {
    uint32_t rows = MIN(th, L->h - y0);
    for (uint32_t x0 = 0; x0 < L->w; x0 += tw) {
      if (TIFFReadTile(t, tile, x0, y0, 0, 0) < 0)
        return nw_tiff_row_error(path, y0, m, error);
      size_t cols = MIN(tw, L->w - x0);
      for (uint32_t r = 0; r < rows; r++)
        memcpy(band + r * row_bytes + x0 * pixel_bytes, tile + (size_t)r * tw * pixel_bytes,
               cols * pixel_bytes);
    }
    for (uint32_t r = 0; r < rows; r++) {
      nw_tiff_decode_row(L, band + r * row_bytes, px);
      store_row(v, (int)(y0 + r), px, used);
    }
  }
  return TRUE;
}

/* How many bytes one stored byte can become at most: none 1, PackBits 128, deflate 1032,
 * LZW (12-bit codes of strings up to 4096 bytes) 4096; others are bounded like LZW. */
static guint64 tiff_max_expansion(TIFF *t)
{
  uint16_t c = COMPRESSION_NONE;
  TIFFGetFieldDefaulted(t, TIFFTAG_COMPRESSION, &c);
  return c == COMPRESSION_NONE                                    ? 1
         : c == COMPRESSION_PACKBITS                              ? 128
         : c == COMPRESSION_ADOBE_DEFLATE || c == COMPRESSION_DEFLATE ? 1032
                                                                  : 4096;
}

/* The strips or tiles must lie in the file, and their bytes must be able to become the
 * image, before the image is allocated (a 138-byte TIFF may claim 8 GB). */
gboolean nw_tiff_data_possible(TIFF *t, const char *path, const TiffLayout *L, GError **error)
{
  const gboolean tiled = TIFFIsTiled(t);
  const uint32_t n = tiled ? TIFFNumberOfTiles(t) : TIFFNumberOfStrips(t);
  uint64_t *offsets = NULL, *counts = NULL;
  GStatBuf st;
  if (g_stat(path, &st) != 0)
    return TRUE; /* opened a moment ago: reading will say what went wrong */
  /* Without offsets nothing says where the data lies, and nothing can be read: refused
   * before the image is allocated (fuzz_image_tiff: 158 bytes claiming 65281 x 16644). */
  if (!TIFFGetField(t, tiled ? TIFFTAG_TILEOFFSETS : TIFFTAG_STRIPOFFSETS, &offsets) ||
      !TIFFGetField(t, tiled ? TIFFTAG_TILEBYTECOUNTS : TIFFTAG_STRIPBYTECOUNTS, &counts) ||
      offsets == NULL || counts == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "%s: corrupt TIFF: no %s offsets or byte counts (where the image data lies)",
                path, tiled ? "tile" : "strip");
    return FALSE;
  }
  guint64 stored = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (offsets[i] > (guint64)st.st_size || counts[i] > (guint64)st.st_size - offsets[i]) {
      g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                  "%s: truncated: %s %u lies past the end of the %" G_GINT64_FORMAT "-byte file",
                  path, tiled ? "tile" : "strip", i, (gint64)st.st_size);
      return FALSE;
    }
    stored += counts[i];
  }
  /* Strips may name the same bytes: what they hold is bounded by the file itself. */
  stored = MIN(stored, (guint64)st.st_size);
  const guint64 need = (guint64)L->w * L->h * L->spp * (L->bits / 8);
  if (need <= stored * tiff_max_expansion(t))
    return TRUE;
  g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
              "%s: truncated: %u x %u pixels need %" G_GUINT64_FORMAT
              " bytes, more than the %" G_GUINT64_FORMAT " stored bytes can hold",
              path, L->w, L->h, need, stored);
  return FALSE;
}

static NwVolume *tiff_decode(TIFF *t, const char *path, TiffMessages *m, GError **error)
{
  TiffLayout L;
  if (!nw_tiff_layout(t, path, &L, error) || !nw_tiff_data_possible(t, path, &L, error))
    return NULL;
  g_autoptr(NwVolume) v = new_image_volume(path, L.w, L.h, error);
  if (v == NULL)
    return NULL;
  g_autofree float *px = g_new(float, (size_t)L.w * 3);
  gboolean ok = TIFFIsTiled(t) ? tiff_read_tiles(t, path, &L, m, v, px, error)
                               : tiff_read_strips(t, path, &L, m, v, px, error);
  if (!ok)
    return NULL;
  double sx, sy;
  if (nw_tiff_spacing(t, &sx, &sy))
    set_spacing_or_default(v, sx, sy);
  return g_steal_pointer(&v);
}

gboolean nw_tiff_spacing(TIFF *t, double *sx, double *sy)
{
  float xres = 0.0f, yres = 0.0f;
  uint16_t unit = RESUNIT_INCH;
  if (TIFFGetField(t, TIFFTAG_XRESOLUTION, &xres) && TIFFGetField(t, TIFFTAG_YRESOLUTION, &yres)) {
    TIFFGetFieldDefaulted(t, TIFFTAG_RESOLUTIONUNIT, &unit);
    double mm = unit == RESUNIT_INCH ? 25.4 : unit == RESUNIT_CENTIMETER ? 10.0 : 0.0;
    if (mm > 0.0 && xres > 0.0f && yres > 0.0f) {
      *sx = mm / xres;
      *sy = mm / yres;
      return TRUE;
    }
  }
  return FALSE;
}

void nw_image_set_spacing(NwVolume *v, double sx, double sy)
{
  set_spacing_or_default(v, sx, sy);
}

TIFF *nw_tiff_open(const char *path, TiffMessages *m, GError **error)
{
  memset(m, 0, sizeof *m);
  TIFFOpenOptions *opts = TIFFOpenOptionsAlloc();
  TIFFOpenOptionsSetErrorHandlerExtR(opts, tiff_error_to_msg, m);
  TIFFOpenOptionsSetWarningHandlerExtR(opts, tiff_warning_ignore, NULL);
  TIFF *t = TIFFOpenExt(path, "r", opts);
  TIFFOpenOptionsFree(opts);
  if (t == NULL)
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: corrupt or unreadable TIFF: %s", path,
                m->msg[0] ? m->msg : "cannot open");
  return t;
}

static NwVolume *read_tiff(const char *path, GError **error)
{
  TiffMessages m; /* the handlers write here until TIFFClose, within this call */
  TIFF *t = nw_tiff_open(path, &m, error);
  if (t == NULL)
    return NULL;
  NwVolume *v = tiff_decode(t, path, &m, error);
  TIFFClose(t);
  return v;
}

/* ---- format detection -------------------------------------------------------------------- */

typedef enum { FMT_UNKNOWN, FMT_PNG, FMT_PNM, FMT_TIFF } ImageFormat;

static ImageFormat detect_format(const guint8 *b, size_t n)
{
  static const guint8 png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (n >= 8 && memcmp(b, png_sig, 8) == 0)
    return FMT_PNG;
  if (n >= 3 && b[0] == 'P' && b[1] != '\0' && strchr("2356", b[1]) && g_ascii_isspace(b[2]))
    return FMT_PNM;
  /* classic TIFF (42) and BigTIFF (43), little- and big-endian */
  if (n >= 4 && ((b[0] == 'I' && b[1] == 'I' && (b[2] == 42 || b[2] == 43) && b[3] == 0) ||
                 (b[0] == 'M' && b[1] == 'M' && b[2] == 0 && (b[3] == 42 || b[3] == 43))))
    return FMT_TIFF;
  return FMT_UNKNOWN;
}

/* Only regular files are opened: opening a FIFO would wait for a writer. */
static ImageFormat sniff_file(const char *path, gboolean *opened)
{
  guint8 b[8] = {0};
  GStatBuf st;
  FILE *f = g_stat(path, &st) == 0 && S_ISREG(st.st_mode) ? g_fopen(path, "rb") : NULL;
  *opened = f != NULL;
  if (f == NULL)
    return FMT_UNKNOWN;
  size_t n = fread(b, 1, sizeof b, f);
  fclose(f);
  return detect_format(b, n);
}

gboolean nw_image_is_2d_file(const char *path)
{
  gboolean opened;
  return sniff_file(path, &opened) != FMT_UNKNOWN;
}

NwVolume *nw_image_read(const char *path, GError **error)
{
  gboolean opened;
  if (!nw_input_file_check(path, NULL, error))
    return NULL;
  ImageFormat fmt = sniff_file(path, &opened);
  if (!opened) {
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "%s: cannot open: %s", path, g_strerror(errno));
    return NULL;
  }
  switch (fmt) {
  case FMT_PNG:
    return read_png(path, error);
  case FMT_PNM:
    return read_pnm(path, error);
  case FMT_TIFF:
    return read_tiff(path, error);
  default:
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "%s: not a PNG, PGM/PPM or TIFF image (unrecognised signature)", path);
    return NULL;
  }
}

NwVolume *nw_volume_read_any(const char *path, GError **error)
{
  if (nw_image_is_2d_file(path))
    return nw_image_read(path, error);
  return nw_nifti_read(path, error);
}
