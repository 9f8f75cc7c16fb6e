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

/* Runs piece(data, p) for every p in [0, n_pieces), with at most `helpers` helper threads
 * beside the caller (none when the pool has none, e.g. on two cores); returns when all are
 * done. Everything piece wrote is visible to the caller then. */
void nw_beside_run(guint n_pieces, guint helpers, NwBesidePiece piece, gpointer data);

/* Helpers for memory-bound work that a caller waits for (a copy, a scan): every core but
 * the caller's, at most 15. One thread reads some 4-6 GB/s on the H100 host, so scanning two
 * 3072² inputs (75 MB) wants them all: 2.6 ms with 8 threads, 1.2 with OpenMP's 16. Those
 * that come late are not waited for. */
guint nw_beside_memory_helpers(void);

G_END_DECLS

#endif
