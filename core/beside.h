/* beside.h — work cut into pieces that the calling thread and a few helper threads share,
 * where the caller waits for the pieces and not for the helpers: large copies and scans of
 * images (copy_beside.h, nw_copy_floats, nw_volume_check_finite), any thread, several at once.
 *
 * The caller takes pieces itself from the start, and helpers from one process-wide GLib
 * thread pool take pieces too as they come: each piece is claimed by one atomic counter, and
 * the run is over when every piece is done. A helper that comes after the last piece was
 * claimed touches nothing of the run's but its reference-counted box. (OpenMP's parallel
 * loop ends at a barrier that every thread of its team must reach: on the H100 host a thread
 * woken late held a live view's frame copy at 4-5 ms against 0.75 ms (issue 8), and a 3072²
 * registration's input checks, uploads and download for 10-50 ms in many runs.) */
#ifndef NW_BESIDE_H
#define NW_BESIDE_H

#include <glib.h>

G_BEGIN_DECLS

/* One piece: p in [0, n_pieces). Runs on the caller's thread or a helper's. */
typedef void (*NwBesidePiece)(gpointer data, guint p);

/* Whose helpers a run takes. Each lane has its own pool, and a pool's helpers take the runs
 * asked of it in turn: the display's frame copies (copy_beside.h) have a lane of their own,
 * so that they never wait behind a job's scans and staging copies, which may ask for every
 * helper of theirs at once. */
typedef enum {
  NW_BESIDE_WORK,    /* the jobs' copies, scans and page touching: up to 15 helpers */
  NW_BESIDE_DISPLAY, /* the display's copies: as many helpers as its first run asks */
} NwBesideLane;

/* Runs piece(data, p) for every p in [0, n_pieces), with at most `helpers` helper threads
 * of `lane` beside the caller (none asked, or one piece: the caller alone); returns when all
 * are done. Everything piece wrote is visible to the caller then. */
void nw_beside_run_in(NwBesideLane lane, guint n_pieces, guint helpers, NwBesidePiece piece,
                      gpointer data);
/* nw_beside_run_in(NW_BESIDE_WORK, ...). */
void nw_beside_run(guint n_pieces, guint helpers, NwBesidePiece piece, gpointer data);

/* Helpers for memory-bound work that a caller waits for. Waking a helper costs the caller
 * some microseconds and the helper tens before it starts, so the count follows the run's
 * length. A long run (a scan of whole images): every core but the caller's, at most 15; one
 * thread reads some 4-6 GB/s on the H100 host, and two 3072² inputs (75 MB) took 2.6 ms with
 * 8 threads, 1.1 with 16. A short run (a staging chunk of 8 MiB, one of many): half the cores,
 * at most 8, less the caller; with 16 a 3072² upload took 2.4 ms against 1.4-1.6. */
guint nw_beside_scan_helpers(void);
guint nw_beside_copy_helpers(void);

G_END_DECLS

#endif
