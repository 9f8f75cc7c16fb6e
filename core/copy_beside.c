/* copy_beside.c — a large copy shared by the caller and a few helper threads that are not
 * waited for (see copy_beside.h). Any thread. */
#include "copy_beside.h"

#include <string.h>

#define PIECE_BYTES ((size_t)1 << 18) /* written a piece: 256 KiB */
#define MIN_PIECES 4                  /* below that (1 MiB) the caller copies alone */

/* One copy: what to copy, the pieces claimed and done. In a reference-counted box: the
 * caller's reference and one for each helper asked, which may come after the copy is over
 * (then it claims nothing, and touches neither dst nor src). */
typedef struct {
  float *dst;
  const float *src;
  int dst_nc, src_nc;
  size_t n, piece; /* voxels; voxels a piece */
  gint n_pieces;
  gint next, done; /* atomic: pieces claimed, pieces copied */
  GMutex lock;     /* with all_done: the caller sleeps until a helper finishes the last piece */
  GCond all_done;
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

/* Claims and copies pieces until none is left; the one who finishes the last says so. */
static void take_pieces(Copy *c)
{
  for (;;) {
    const gint p = g_atomic_int_add(&c->next, 1);
    if (p >= c->n_pieces)
      return;
    const size_t begin = (size_t)p * c->piece;
    copy_voxels(c->dst, c->dst_nc, c->src, c->src_nc, begin, MIN(c->n, begin + c->piece));
    if (g_atomic_int_add(&c->done, 1) + 1 == c->n_pieces) {
      g_mutex_lock(&c->lock);
      g_cond_broadcast(&c->all_done);
      g_mutex_unlock(&c->lock);
    }
  }
}

static void copy_clear(gpointer data)
{
  Copy *c = data;
  g_mutex_clear(&c->lock);
  g_cond_clear(&c->all_done);
}

static void help(gpointer data, gpointer unused)
{
  (void)unused;
  take_pieces(data);
  g_atomic_rc_box_release_full(data, copy_clear);
}

/* The helpers, made once for the process and kept (an exclusive pool: its threads wait for
 * work instead of ending); NULL on a machine of one or two cores. */
static GThreadPool *helpers(void)
{
  static GThreadPool *pool;
  static gsize made;
  if (g_once_init_enter(&made)) {
    const int n = nw_copy_threads_beside() - 1;
    if (n > 0)
      pool = g_thread_pool_new(help, NULL, n, TRUE, NULL);
    g_once_init_leave(&made, 1);
  }
  return pool;
}

void nw_copy_voxels_beside(float *dst, int dst_nc, const float *src, int src_nc, size_t n)
{
  g_return_if_fail(src_nc >= 1 && (dst_nc == src_nc || (src_nc == 3 && dst_nc == 4)));
  if (n == 0)
    return;
  const size_t piece = PIECE_BYTES / sizeof(float) / (size_t)dst_nc;
  const size_t n_pieces = (n + piece - 1) / piece;
  GThreadPool *pool = n_pieces >= MIN_PIECES ? helpers() : NULL;
  if (pool == NULL) {
    copy_voxels(dst, dst_nc, src, src_nc, 0, n);
    return;
  }
  Copy *c = g_atomic_rc_box_new(Copy);
  /* n_pieces < 2^17: n < 3 x 2^31 voxels, a piece >= 2^14; next and done 0 */
  *c = (Copy){.dst = dst, .src = src, .dst_nc = dst_nc, .src_nc = src_nc, .n = n,
              .piece = piece, .n_pieces = (gint)n_pieces};
  g_mutex_init(&c->lock);
  g_cond_init(&c->all_done);
  const guint asked = MIN(g_thread_pool_get_max_threads(pool), (guint)(n_pieces - 1));
  for (guint h = 0; h < asked; h++)
    g_thread_pool_push(pool, g_atomic_rc_box_acquire(c), NULL);
  take_pieces(c);
  g_mutex_lock(&c->lock);
  while (g_atomic_int_get(&c->done) < c->n_pieces)
    g_cond_wait(&c->all_done, &c->lock);
  g_mutex_unlock(&c->lock);
  g_atomic_rc_box_release_full(c, copy_clear);
}

void nw_copy_floats_beside(float *dst, const float *src, size_t n)
{
  nw_copy_voxels_beside(dst, 1, src, 1, n);
}
