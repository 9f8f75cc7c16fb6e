/* nw_anim_gif.c — see nw_anim_gif.h. */
#include "nw_anim_gif.h"

#include <gif_lib.h>
#include <string.h>

#include "atomic_file.h"
#include "nw_error.h"

typedef struct {
  GPtrArray *frames;
  int delay_cs;
} GifJob;

static gboolean gif_failed(GifFileType *gif, int code, GError **error)
{
  int close_error = 0;
  if (gif != NULL)
    EGifCloseFile(gif, &close_error);
  g_set_error(error, NW_ERROR, NW_ERROR_IO, "GIF: %s", GifErrorString(code));
  return FALSE;
}

/* The NETSCAPE2.0 application extension: loop for ever. */
static int put_loop(GifFileType *gif)
{
  static const GifByteType app[] = "NETSCAPE2.0", loop[] = {1, 0, 0};
  if (EGifPutExtensionLeader(gif, APPLICATION_EXT_FUNC_CODE) != GIF_OK ||
      EGifPutExtensionBlock(gif, 11, app) != GIF_OK ||
      EGifPutExtensionBlock(gif, 3, loop) != GIF_OK || EGifPutExtensionTrailer(gif) != GIF_OK)
    return gif->Error;
  return 0;
}

/* One frame: its delay, its own palette, its pixels. */
static int put_frame(GifFileType *gif, GdkPixbuf *pb, int delay_cs)
{
  const int w = gdk_pixbuf_get_width(pb), h = gdk_pixbuf_get_height(pb);
  const int stride = gdk_pixbuf_get_rowstride(pb), nch = gdk_pixbuf_get_n_channels(pb);
  const guint8 *px = gdk_pixbuf_read_pixels(pb);
  const size_t n = (size_t)w * h;
  g_autofree GifByteType *r = g_malloc(n), *g = g_malloc(n), *b = g_malloc(n),
                         *idx = g_malloc(n);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      const guint8 *p = px + (size_t)y * stride + (size_t)x * nch;
      const size_t e = (size_t)y * w + x;
      r[e] = p[0], g[e] = p[1], b[e] = p[2];
    }
  GifColorType colours[256];
  int n_colours = 256;
  if (GifQuantizeBuffer((unsigned)w, (unsigned)h, &n_colours, r, g, b, idx, colours) != GIF_OK)
    return E_GIF_ERR_NOT_ENOUGH_MEM;
  ColorMapObject *map = GifMakeMapObject(256, colours);
  if (map == NULL)
    return E_GIF_ERR_NOT_ENOUGH_MEM;
  const GraphicsControlBlock gcb = {.DisposalMode = DISPOSE_DO_NOT,
                                    .UserInputFlag = false,
                                    .DelayTime = delay_cs,
                                    .TransparentColor = NO_TRANSPARENT_COLOR};
  GifByteType ext[4];
  EGifGCBToExtension(&gcb, ext);
  int status = EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, 4, ext) == GIF_OK &&
                       EGifPutImageDesc(gif, 0, 0, w, h, false, map) == GIF_OK
                   ? 0
                   : gif->Error;
  for (int y = 0; y < h && status == 0; y++)
    if (EGifPutLine(gif, idx + (size_t)y * w, w) != GIF_OK)
      status = gif->Error;
  GifFreeMapObject(map);
  return status;
}

static gboolean write_gif(const char *tmp_path, gpointer data, GError **error)
{
  const GifJob *job = data;
  GdkPixbuf *first = g_ptr_array_index(job->frames, 0);
  int code = 0;
  GifFileType *gif = EGifOpenFileName(tmp_path, false, &code);
  if (gif == NULL)
    return gif_failed(NULL, code, error);
  EGifSetGifVersion(gif, true); /* GIF89a: extensions */
  if (EGifPutScreenDesc(gif, gdk_pixbuf_get_width(first), gdk_pixbuf_get_height(first), 8, 0,
                        NULL) != GIF_OK)
    return gif_failed(gif, gif->Error, error);
  if ((code = put_loop(gif)) != 0)
    return gif_failed(gif, code, error);
  for (guint i = 0; i < job->frames->len; i++)
    if ((code = put_frame(gif, g_ptr_array_index(job->frames, i), job->delay_cs)) != 0)
      return gif_failed(gif, code, error);
  if (EGifCloseFile(gif, &code) != GIF_OK) {
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "GIF: %s", GifErrorString(code));
    return FALSE;
  }
  return TRUE;
}

gboolean nw_anim_gif_write(const char *path, GPtrArray *frames, int delay_cs, GError **error)
{
  g_return_val_if_fail(frames != NULL && frames->len > 0, FALSE);
  GdkPixbuf *first = g_ptr_array_index(frames, 0);
  for (guint i = 1; i < frames->len; i++) {
    GdkPixbuf *pb = g_ptr_array_index(frames, i);
    if (gdk_pixbuf_get_width(pb) != gdk_pixbuf_get_width(first) ||
        gdk_pixbuf_get_height(pb) != gdk_pixbuf_get_height(first)) {
      g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "%s: the frames differ in size", path);
      return FALSE;
    }
  }
  GifJob job = {frames, delay_cs};
  if (!nw_write_atomically(path, write_gif, &job, error)) {
    g_prefix_error(error, "%s: ", path);
    return FALSE;
  }
  return TRUE;
}
