/* test_copy_beside.c — work shared with helper threads (core/beside.h) and the copy made of
 * it (core/copy_beside.h), no GPU: every piece runs once, also when a piece runs a shared
 * run of its own, and a scan for non-finite voxels counts them all across pieces;
 * every voxel lands where it belongs, same-size and 3 into 4 with the 4th 0, at sizes around
 * the piece boundaries (one piece short of, at and past the helpers' threshold; a short last
 * piece); four threads copying at once, each its own, all exact; a copy that ends before
 * a helper comes (its buffers freed at once) leaves the helper nothing to touch, which ASan
 * would report; and the display's lane has helpers while the work lane's are all held. */
#include <math.h>
#include <string.h>

#include "beside.h"
#include "copy_beside.h"
#include "nw_error.h"
#include "testutil.h"
#include "volume.h"

/* n voxels of nc distinct floats. */
static float *pattern(size_t n, int nc, float offset)
{
  float *v = g_new(float, n * (size_t)nc);
  for (size_t i = 0; i < n * (size_t)nc; i++)
    v[i] = offset + (float)i;
  return v;
}

/* dst holds src's n voxels in dst_nc floats each (0 past src_nc). */
static void assert_copied(const float *dst, int dst_nc, const float *src, int src_nc, size_t n)
{
  for (size_t i = 0; i < n; i++)
    for (int c = 0; c < dst_nc; c++) {
      const float want = c < src_nc ? src[i * src_nc + c] : 0.0f;
      if (dst[i * dst_nc + c] != want)
        g_error("voxel %zu component %d: %g, not %g", i, c, dst[i * dst_nc + c], want);
    }
}

static void copy_and_check(size_t n, int dst_nc, int src_nc)
{
  float *src = pattern(n, src_nc, 1.0f);
  float *dst = g_new(float, n * (size_t)dst_nc + 1);
  dst[n * (size_t)dst_nc] = -7.0f; /* one past the end: untouched */
  memset(dst, 0xff, n * (size_t)dst_nc * sizeof(float)); /* NaNs: every float must be written */
  nw_copy_voxels_beside(dst, dst_nc, src, src_nc, n);
  assert_copied(dst, dst_nc, src, src_nc, n);
  g_assert_cmpfloat(dst[n * (size_t)dst_nc], ==, -7.0f);
  g_free(src);
  g_free(dst);
}

static void test_sizes(void)
{
  const size_t piece1 = ((size_t)1 << 18) / sizeof(float); /* voxels a piece, 1 float each */
  const size_t sizes[] = {0, 1, 17, piece1 - 1, 3 * piece1 + 5, 4 * piece1 - 1, 4 * piece1,
                          4 * piece1 + 1, 37 * piece1 + 123};
  for (guint s = 0; s < G_N_ELEMENTS(sizes); s++) {
    copy_and_check(sizes[s], 1, 1);
    copy_and_check(sizes[s], 3, 3);
    copy_and_check(sizes[s] / 4 + 1, 4, 3); /* pieces of 16384 voxels */
    copy_and_check(sizes[s], 4, 3);
  }
  float a = 2.5f, b = 0.0f;
  nw_copy_floats_beside(&b, &a, 1);
  g_assert_cmpfloat(b, ==, 2.5f);
  g_assert_cmpint(nw_copy_threads_beside(), ==, 4);
}

static gpointer copier(gpointer data)
{
  const size_t n = 2000000 + (size_t)GPOINTER_TO_INT(data) * 4099;
  for (int round = 0; round < 5; round++)
    copy_and_check(n, 4, 3);
  return NULL;
}

static void test_concurrent(void)
{
  GThread *t[4];
  for (int i = 0; i < 4; i++)
    t[i] = g_thread_new("copier", copier, GINT_TO_POINTER(i));
  for (int i = 0; i < 4; i++)
    g_thread_join(t[i]);
}

/* Many small copies in a row, their buffers freed right after: the helpers asked for one
 * copy often come after it is over, and must then leave its (freed) buffers alone. */
static void test_helpers_late(void)
{
  const size_t n = ((size_t)1 << 16) * 5; /* 5 pieces of 1 float a voxel: helpers asked */
  for (int round = 0; round < 200; round++)
    copy_and_check(n, 1, 1);
}

/* Pieces that count their runs (and, nested, run a small shared run of their own). */
typedef struct {
  gint *runs;
  gboolean nested;
} Counted;

static void count_piece(gpointer data, guint p)
{
  const Counted *c = data;
  if (c->nested) {
    gint inner[8] = {0};
    Counted in = {inner, FALSE};
    nw_beside_run(8, 3, count_piece, &in);
    for (int q = 0; q < 8; q++)
      g_assert_cmpint(inner[q], ==, 1);
  }
  g_atomic_int_inc(&c->runs[p]);
}

static void test_each_piece_once(void)
{
  const guint n[] = {0, 1, 2, 7, 1000};
  for (guint s = 0; s < G_N_ELEMENTS(n); s++)
    for (int round = 0; round < 20; round++) {
      gint *runs = g_new0(gint, n[s] + 1);
      Counted c = {runs, round % 5 == 0};
      nw_beside_run(n[s], 3, count_piece, &c);
      for (guint p = 0; p < n[s]; p++)
        g_assert_cmpint(runs[p], ==, 1);
      g_assert_cmpint(runs[n[s]], ==, 0);
      g_free(runs);
    }
}

/* The display's lane keeps its helpers while every helper of the work lane is held: pieces
 * of a display run still run on other threads than the caller's. Were the lanes one pool,
 * the display's helpers would wait behind the held ones and the caller would run them all. */
typedef struct {
  GMutex lock;
  GCond cond;
  int started;       /* work pieces begun */
  gboolean released; /* the work pieces may end */
  GThread *caller;   /* the display run's */
  gint elsewhere;    /* atomic: display pieces run on another thread */
} Lanes;

static void held_piece(gpointer data, guint p)
{
  (void)p;
  Lanes *l = data;
  const gint64 give_up = g_get_monotonic_time() + 20 * G_TIME_SPAN_SECOND;
  g_mutex_lock(&l->lock);
  l->started++;
  g_cond_broadcast(&l->cond);
  while (!l->released && g_cond_wait_until(&l->cond, &l->lock, give_up))
    ;
  g_mutex_unlock(&l->lock);
}

static gpointer hold_work_lane(gpointer data)
{
  nw_beside_run(16, 15, held_piece, data); /* the caller and all 15 helpers, one piece each */
  return NULL;
}

/* A helper's piece counts itself; the caller's first waits (up to 10 s, however slow the
 * machine) for a helper to have come, so that a lane whose helpers can come is never failed
 * by a caller that ran every piece first. */
static void display_piece(gpointer data, guint p)
{
  Lanes *l = data;
  if (g_thread_self() != l->caller) {
    g_atomic_int_inc(&l->elsewhere);
    return;
  }
  const gint64 give_up = g_get_monotonic_time() + 10 * G_TIME_SPAN_SECOND;
  while (p == 0 && g_atomic_int_get(&l->elsewhere) == 0 && g_get_monotonic_time() < give_up)
    g_usleep(1000);
}

static void test_lanes(void)
{
  Lanes l = {.caller = g_thread_self()};
  g_mutex_init(&l.lock);
  g_cond_init(&l.cond);
  GThread *work = g_thread_new("work-lane", hold_work_lane, &l);
  g_mutex_lock(&l.lock);
  while (l.started < 16)
    g_cond_wait(&l.cond, &l.lock);
  g_mutex_unlock(&l.lock);
  nw_beside_run_in(NW_BESIDE_DISPLAY, 64, 3, display_piece, &l);
  g_assert_cmpint(g_atomic_int_get(&l.elsewhere), >, 0);
  g_mutex_lock(&l.lock);
  l.released = TRUE;
  g_cond_broadcast(&l.cond);
  g_mutex_unlock(&l.lock);
  g_thread_join(work);
  g_mutex_clear(&l.lock);
  g_cond_clear(&l.cond);
}

/* NaN and Inf at pieces' first and last voxels (volume.c's pieces are 2^16 floats) and in
 * the short last piece: every one counted, the message exact. */
static void test_check_finite_pieces(void)
{
  const int nx = (1 << 18) + 3, ny = 3; /* whole pieces and a short last one */
  g_autoptr(NwVolume) v = nw_volume_new(nx, ny, 1, 1, NULL);
  for (size_t e = 0; e < (size_t)nx * ny; e++)
    v->data[e] = 1.0f;
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_volume_check_finite(v, "fixed image", &error));
  const size_t bad[] = {0, (1 << 18) - 1, 1 << 18, 2 * (1 << 18) + 1, (size_t)nx * ny - 1};
  for (guint b = 0; b < G_N_ELEMENTS(bad); b++)
    v->data[bad[b]] = b % 2 ? INFINITY : NAN;
  g_assert_false(nw_volume_check_finite(v, "fixed image", &error));
  g_assert_error(error, NW_ERROR, NW_ERROR_INVALID);
  g_autofree char *want = g_strdup_printf(
      "fixed image: 5 of %zu voxels are NaN or Inf; mask or fill them before registering",
      (size_t)nx * ny);
  g_assert_cmpstr(error->message, ==, want);
}

int main(int argc, char **argv)
{
  g_setenv("NW_COPY_THREADS", "4", TRUE); /* three helpers, also on CI's two cores */
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/copy-beside/sizes", test_sizes);
  g_test_add_func("/copy-beside/concurrent", test_concurrent);
  g_test_add_func("/copy-beside/helpers-late", test_helpers_late);
  g_test_add_func("/beside/each-piece-once", test_each_piece_once);
  g_test_add_func("/beside/check-finite-pieces", test_check_finite_pieces);
  g_test_add_func("/beside/lanes", test_lanes);
  return g_test_run();
}
