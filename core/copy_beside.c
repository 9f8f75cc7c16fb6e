/* copy_beside.c — a large copy shared by the caller and a few helper threads that are not
 * waited for (see copy_beside.h), through beside.h. Any thread. */
#include "copy_beside.h"

#include <string.h>

#include "beside.h"

#define PIECE_BYTES ((size_t)1 << 18) /* written a piece: 256 KiB */
#define MIN_PIECES 4                  /* below that (1 MiB) the caller copies alone */

/* One copy: what to copy, and the voxels of a piece. */
typedef struct {
  float *dst;
  const float *src;
  int dst_nc, src_nc;
  size_t n, piece;
} Copy;

int nw_copy_threads_beside(void)
{
  const char *env = g_getenv("NW_COPY_THREADS"); /* tests: helpers on a small machine too */
  const gint64 asked = env != NULL ? g_ascii_strtoll(env, NULL, 10) : 0;
  return asked >= 1 ? (int)MIN(asked, 16) : CLAMP((int)g_get_num_processors() / 2, 1, 4);
}

/* Voxels [begin, end). */
static void copy_voxels(float *dst, int dst_nc, const float *src, int src_nc, size_t begin,
                        size_t end)
{
  if (dst_nc == src_nc) {
    memcpy(dst + begin * dst_nc, src + begin * src_nc, (end - begin) * src_nc * sizeof(float));
    return;
  }
  /* 3 into 4, written out: a loop over the components at run time was 3.5 times slower */
  float *d = dst + 4 * begin;
  const float *s = src + 3 * begin;
  for (size_t i = begin; i < end; i++, d += 4, s += 3) {
    d[0] = s[0];
    d[1] = s[1];
    d[2] = s[2];
    d[3] = 0.0f;
  }
}

static void copy_piece(gpointer data, guint p)
{
  const Copy *c = data;
  const size_t begin = (size_t)p * c->piece;
  copy_voxels(c->dst, c->dst_nc, c->src, c->src_nc, begin, MIN(c->n, begin + c->piece));
}

/* The copy in pieces, with at most `helpers` of `lane`'s helpers. */
static void copy_in_lane(NwBesideLane lane, float *dst, int dst_nc, const float *src,
                         int src_nc, size_t n, guint helpers)
{
  g_return_if_fail(src_nc >= 1 && (dst_nc == src_nc || (src_nc == 3 && dst_nc == 4)));
  if (n == 0)
    return;
  const size_t piece = PIECE_BYTES / sizeof(float) / (size_t)dst_nc;
  const size_t n_pieces = (n + piece - 1) / piece;
  if (n_pieces < MIN_PIECES) {
    copy_voxels(dst, dst_nc, src, src_nc, 0, n);
    return;
  }
  /* n_pieces < 2^17: n < 3 x 2^31 voxels, a piece >= 2^14 */
  Copy c = {dst, src, dst_nc, src_nc, n, piece};
  nw_beside_run_in(lane, (guint)n_pieces, helpers, copy_piece, &c);
}

void nw_copy_voxels_beside(float *dst, int dst_nc, const float *src, int src_nc, size_t n)
{
  copy_in_lane(NW_BESIDE_DISPLAY, dst, dst_nc, src, src_nc, n,
               (guint)nw_copy_threads_beside() - 1);
}

void nw_copy_voxels_helped(float *dst, int dst_nc, const float *src, int src_nc, size_t n,
                           guint helpers)
{
  copy_in_lane(NW_BESIDE_WORK, dst, dst_nc, src, src_nc, n, helpers);
}

void nw_copy_floats_beside(float *dst, const float *src, size_t n)
{
  nw_copy_voxels_beside(dst, 1, src, 1, n);
}
