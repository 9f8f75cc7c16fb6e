/* test_live_spares.c — the host volumes kept for the live view's next host frames
 * (core/live_spares.h), no GPU: a volume given back is the one the next take returns; one of
 * another grid or kind, or one for a full slot, is not kept; a new grid drops what was kept;
 * prepare makes volumes ahead only while the taker gives nothing back; and a downloader and
 * a display on two threads, the display keeping the frame it shows (as the application's
 * layers) or giving each back at once (as the benchmark), make no volume after the first
 * few however many frames pass; spares of another allocator (the pinned memory of the CUDA
 * downloader) make their volumes with it, keep only its volumes and free through it. */
#include <string.h>

#include "live_spares.h"
#include "testutil.h"

static const int grid[3] = {5, 4, 3};

static NwVolume *volume_of(const int d[3], int nc)
{
  return nw_volume_new(d[0], d[1], d[2], nc, NULL);
}

static void test_given_back_is_taken(void)
{
  NwLiveSpares sp;
  nw_live_spares_init(&sp, NULL);
  nw_live_spares_set_grid(&sp, grid);
  g_autoptr(GError) error = NULL;
  NwVolume *image = nw_live_spares_take(&sp, 1, &error); /* nothing kept: a new one */
  g_assert_no_error(error);
  NwVolume *field = nw_live_spares_take(&sp, 3, &error);
  g_assert_cmpint(image->nx, ==, 5);
  g_assert_cmpint(image->nz, ==, 3);
  g_assert_cmpint(image->nc, ==, 1);
  g_assert_cmpint(field->nc, ==, 3);
  g_assert_cmpuint(sp.made, ==, 2);
  float *image_data = image->data, *field_data = field->data;
  nw_live_spares_give(&sp, field);
  nw_live_spares_give(&sp, image);
  nw_live_spares_give(&sp, NULL);
  g_assert_true(sp.given_back);
  /* each kind to its own slot */
  NwVolume *again = nw_live_spares_take(&sp, 1, &error);
  g_assert_true(again == image);
  g_assert_true(again->data == image_data);
  NwVolume *field_again = nw_live_spares_take(&sp, 3, &error);
  g_assert_true(field_again->data == field_data);
  g_assert_cmpuint(sp.made, ==, 2);
  /* a full slot: the second volume is not kept (freed), the first is what comes next */
  NwVolume *other = volume_of(grid, 1);
  nw_live_spares_give(&sp, again);
  nw_live_spares_give(&sp, other);
  g_assert_true(sp.slot[0] == again);
  /* another grid, or a kind the frames do not have: not kept */
  const int coarse[3] = {2, 2, 2};
  nw_live_spares_give(&sp, volume_of(coarse, 3));
  g_assert_null(sp.slot[1]);
  nw_live_spares_give(&sp, volume_of(grid, 2));
  g_assert_null(sp.slot[1]);
  g_assert_true(sp.slot[0] == again);
  nw_volume_free(field_again);
  nw_live_spares_clear(&sp);
}

static void test_new_grid(void)
{
  NwLiveSpares sp;
  nw_live_spares_init(&sp, NULL);
  nw_live_spares_set_grid(&sp, grid);
  nw_live_spares_give(&sp, volume_of(grid, 1));
  g_assert_nonnull(sp.slot[0]);
  nw_live_spares_set_grid(&sp, grid); /* the same grid again: kept */
  g_assert_nonnull(sp.slot[0]);
  g_assert_true(sp.given_back);
  const int finer[3] = {10, 8, 6};
  nw_live_spares_set_grid(&sp, finer);
  g_assert_null(sp.slot[0]);
  g_assert_false(sp.given_back);
  NwVolume *v = nw_live_spares_take(&sp, 1, NULL);
  g_assert_cmpint(v->nx, ==, 10);
  g_assert_cmpint(v->ny, ==, 8);
  g_assert_cmpint(v->nz, ==, 6);
  nw_volume_free(v);
  nw_live_spares_clear(&sp);
}

static void test_prepare(void)
{
  NwLiveSpares sp;
  nw_live_spares_init(&sp, NULL);
  nw_live_spares_prepare(&sp); /* no grid yet: nothing */
  g_assert_null(sp.slot[0]);
  nw_live_spares_set_grid(&sp, grid);
  nw_live_spares_prepare(&sp);
  g_assert_nonnull(sp.slot[0]);
  g_assert_nonnull(sp.slot[1]);
  g_assert_cmpint(sp.slot[1]->nc, ==, 3);
  g_assert_cmpuint(sp.made, ==, 2);
  NwVolume *image = nw_live_spares_take(&sp, 1, NULL);
  NwVolume *field = nw_live_spares_take(&sp, 3, NULL);
  nw_live_spares_prepare(&sp); /* nothing given back yet: made ahead again */
  g_assert_cmpuint(sp.made, ==, 4);
  nw_volume_free(nw_live_spares_take(&sp, 1, NULL));
  nw_volume_free(nw_live_spares_take(&sp, 3, NULL));
  nw_live_spares_give(&sp, image); /* the taker recycles: the volumes it holds will come back */
  nw_live_spares_prepare(&sp);
  g_assert_cmpuint(sp.made, ==, 4);
  g_assert_true(sp.slot[0] == image);
  g_assert_null(sp.slot[1]);
  nw_volume_free(field);
  nw_live_spares_clear(&sp);
}

/* ---- a downloader and a display on two threads -------------------------------------------- */

enum { FRAMES = 2000 };

typedef struct {
  NwLiveSpares sp;
  GAsyncQueue *frames; /* NwVolume*, downloader -> display */
  GAsyncQueue *asks;   /* one token per frame asked for, display -> downloader */
} Pipe;

/* Downloader: per ask, the frame numbered f into a taken volume (every voxel, as a download),
 * then prepare as live_source.c's download task does. */
static gpointer downloader(gpointer data)
{
  Pipe *p = data;
  for (int f = 0; f < FRAMES; f++) {
    g_async_queue_pop(p->asks);
    nw_live_spares_set_grid(&p->sp, grid);
    NwVolume *v = nw_live_spares_take(&p->sp, 1, NULL);
    for (size_t i = 0; i < nw_volume_n_floats(v); i++)
      v->data[i] = (float)f;
    g_async_queue_push(p->frames, v);
    nw_live_spares_prepare(&p->sp);
  }
  return NULL;
}

/* Display: asks for each frame, checks it holds its own number, and gives back the frame it
 * replaces (keep_shown: the application's layer holds the frame shown) or the frame itself
 * once drawn (the benchmark's upload). Returns the volumes made. */
static guint64 run_pipe(gboolean keep_shown)
{
  Pipe p;
  nw_live_spares_init(&p.sp, NULL);
  p.frames = g_async_queue_new();
  p.asks = g_async_queue_new();
  GThread *t = g_thread_new("downloader", downloader, &p);
  NwVolume *shown = NULL;
  for (int f = 0; f < FRAMES; f++) {
    g_async_queue_push(p.asks, GINT_TO_POINTER(1));
    NwVolume *v = g_async_queue_pop(p.frames);
    g_assert_cmpfloat(v->data[0], ==, (float)f);
    g_assert_cmpfloat(v->data[nw_volume_n_floats(v) - 1], ==, (float)f);
    if (keep_shown) {
      nw_live_spares_give(&p.sp, shown);
      shown = v;
    } else {
      nw_live_spares_give(&p.sp, v);
    }
  }
  g_thread_join(t);
  nw_volume_free(shown);
  const guint64 made = p.sp.made;
  g_test_message("%s: %" G_GUINT64_FORMAT " volumes made for %d frames",
                 keep_shown ? "the shown frame kept" : "each frame given back at once", made,
                 FRAMES);
  nw_live_spares_clear(&p.sp);
  g_async_queue_unref(p.frames);
  g_async_queue_unref(p.asks);
  return made;
}

static void test_two_threads(void)
{
  /* the display may give the frame back while the downloader prepares: a volume or two more,
   * never one per frame (each frame made anew would make FRAMES) */
  g_assert_cmpuint(run_pipe(FALSE), <=, 4);
  g_assert_cmpuint(run_pipe(TRUE), <=, 4);
}


static void test_allocator(void)
{
  NwLiveSpares sp;
  nw_live_spares_init(&sp, &nw_test_counting_allocator);
  nw_live_spares_set_grid(&sp, grid);
  nw_live_spares_prepare(&sp);
  g_assert_cmpint(nw_test_counted_blocks(), ==, 2);
  g_assert_true(sp.slot[0]->allocator == &nw_test_counting_allocator);
  NwVolume *image = nw_live_spares_take(&sp, 1, NULL);
  NwVolume *field = nw_live_spares_take(&sp, 3, NULL); /* and a third made by take itself */
  NwVolume *image2 = nw_live_spares_take(&sp, 1, NULL);
  g_assert_true(image2->allocator == &nw_test_counting_allocator);
  g_assert_cmpint(nw_test_counted_blocks(), ==, 3);
  /* a volume of GLib's memory of the right grid and kind is not kept: the download copies
   * into the spares without looking */
  nw_live_spares_give(&sp, volume_of(grid, 1));
  g_assert_null(sp.slot[0]);
  nw_live_spares_give(&sp, image);
  g_assert_true(sp.slot[0] == image);
  nw_live_spares_give(&sp, image2); /* the slot is full: freed through the allocator */
  g_assert_cmpint(nw_test_counted_blocks(), ==, 2);
  /* a copy is GLib's; freeing it and the taker's field leaves the kept one */
  NwVolume *copy = nw_volume_copy(field);
  g_assert_null(copy->allocator);
  nw_volume_free(copy);
  nw_volume_free(field);
  g_assert_cmpint(nw_test_counted_blocks(), ==, 1);
  nw_live_spares_clear(&sp);
  g_assert_cmpint(nw_test_counted_blocks(), ==, 0);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/live-spares/given-back-is-taken", test_given_back_is_taken);
  g_test_add_func("/live-spares/new-grid", test_new_grid);
  g_test_add_func("/live-spares/prepare", test_prepare);
  g_test_add_func("/live-spares/two-threads", test_two_threads);
  g_test_add_func("/live-spares/allocator", test_allocator);
  return g_test_run();
}
