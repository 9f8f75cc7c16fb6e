/* beside.c — pieces shared by the caller and helper threads that are not waited for (see
 * beside.h). Any thread. */
#include "beside.h"

/* The most helpers a run may have: its caller and these make 16 threads. */
#define MAX_HELPERS 15

/* One run: its pieces, claimed and done, in a reference-counted box: the caller's reference
 * and one for each helper asked, which may come after the run is over (then it claims
 * nothing, and calls nothing). */
typedef struct {
  NwBesidePiece piece;
  gpointer data;
  gint n_pieces;
  gint next, done; /* atomic: pieces claimed, pieces done */
  GMutex lock;     /* with all_done: the caller sleeps until a helper finishes the last piece */
  GCond all_done;
} Run;

/* Claims and runs pieces until none is left; the one who finishes the last says so. */
static void take_pieces(Run *r)
{
  for (;;) {
    const gint p = g_atomic_int_add(&r->next, 1);
    if (p >= r->n_pieces)
      return;
    r->piece(r->data, (guint)p);
    if (g_atomic_int_add(&r->done, 1) + 1 == r->n_pieces) {
      g_mutex_lock(&r->lock);
      g_cond_broadcast(&r->all_done);
      g_mutex_unlock(&r->lock);
    }
  }
}

static void run_clear(gpointer data)
{
  Run *r = data;
  g_mutex_clear(&r->lock);
  g_cond_clear(&r->all_done);
}

static void help(gpointer data, gpointer unused)
{
  (void)unused;
  take_pieces(data);
  g_atomic_rc_box_release_full(data, run_clear);
}

guint nw_beside_scan_helpers(void)
{
  return (guint)CLAMP((int)g_get_num_processors(), 1, MAX_HELPERS + 1) - 1;
}

guint nw_beside_copy_helpers(void)
{
  return (guint)CLAMP((int)g_get_num_processors() / 2, 1, 8) - 1;
}

/* A lane's helpers, made once for the process by the first run that asks for any, and kept
 * (an exclusive pool: its threads sleep until there is work instead of ending). The work
 * lane has as many as any run may ask for, whatever the cores; the display lane as many as
 * its first run asks (copy_beside.h's count, which tests raise on small machines), so that
 * the same few threads, recently run, take every frame's copy. */
static GThreadPool *helpers(NwBesideLane lane, guint asked)
{
  static GThreadPool *pools[2];
  static gsize made[2];
  if (g_once_init_enter(&made[lane])) {
    const guint n = lane == NW_BESIDE_WORK ? MAX_HELPERS : CLAMP(asked, 1, MAX_HELPERS);
    pools[lane] = g_thread_pool_new(help, NULL, (gint)n, TRUE, NULL);
    g_once_init_leave(&made[lane], 1);
  }
  return pools[lane];
}

void nw_beside_run_in(NwBesideLane lane, guint n_pieces, guint helpers_asked,
                      NwBesidePiece piece, gpointer data)
{
  g_return_if_fail(n_pieces <= G_MAXINT && (lane == NW_BESIDE_WORK || lane == NW_BESIDE_DISPLAY));
  GThreadPool *pool = n_pieces > 1 && helpers_asked > 0 ? helpers(lane, helpers_asked) : NULL;
  if (pool == NULL) {
    for (guint p = 0; p < n_pieces; p++)
      piece(data, p);
    return;
  }
  Run *r = g_atomic_rc_box_new(Run);
  *r = (Run){.piece = piece, .data = data, .n_pieces = (gint)n_pieces};
  g_mutex_init(&r->lock);
  g_cond_init(&r->all_done);
  const guint asked =
      MIN(MIN(helpers_asked, (guint)g_thread_pool_get_max_threads(pool)), n_pieces - 1);
  for (guint h = 0; h < asked; h++)
    g_thread_pool_push(pool, g_atomic_rc_box_acquire(r), NULL);
  take_pieces(r);
  g_mutex_lock(&r->lock);
  while (g_atomic_int_get(&r->done) < r->n_pieces)
    g_cond_wait(&r->all_done, &r->lock);
  g_mutex_unlock(&r->lock);
  g_atomic_rc_box_release_full(r, run_clear);
}

void nw_beside_run(guint n_pieces, guint helpers_asked, NwBesidePiece piece, gpointer data)
{
  nw_beside_run_in(NW_BESIDE_WORK, n_pieces, helpers_asked, piece, data);
}
