/* live_spares.h — the host volumes that the live view's host frames are downloaded into,
 * kept between frames so that in steady state a frame allocates nothing: a fresh 16 MiB
 * volume per frame costs an mmap, first-touch page faults and, when it is freed, an munmap
 * whose TLB shootdown interrupts every thread of the process. (A suspect, not a proven cause,
 * for the 12-30 ms stalls that hit the downloader and the display together on the GPU host
 * while the job ran on: issue 8, docs/PERFORMANCE.md.)
 *
 * One slot per kind: the image (nc 1) and the field (nc 3), of the grid of the latest
 * download, and of the spares' allocator. The taker of a frame gives its volumes back once it is done with them; the next
 * download takes them and overwrites every voxel (no zeroing: the contents of a taken volume
 * are undefined, its affine is the caller's to set). A volume of another grid or kind, or one
 * for a slot that is full, is freed.
 *
 * Threads: give on any thread (the display's take, the downloader dropping a frame nobody
 * took). set_grid and take on the thread that downloads, or on one that stands in for it (the
 * job's worker making ready for a new grid), serialised by the caller. prepare on any thread
 * but the display's (it allocates and touches memory), also beside another prepare: of two
 * volumes made for one slot one is kept, the other freed. A mutex held only for pointer swaps
 * guards the slots, never while memory is allocated, touched or freed, so that giving back
 * never waits behind a download. Pure C + GLib, no GPU. */
#ifndef NW_LIVE_SPARES_H
#define NW_LIVE_SPARES_H

#include <glib.h>

#include "volume.h"

G_BEGIN_DECLS

typedef struct {
  const NwVoxelAllocator *allocator; /* of the volumes made (NULL: GLib's); fixed at init */
  GMutex lock;
  /* under lock */
  NwVolume *slot[2];   /* image (nc 1), field (nc 3); NULL: none kept */
  int d[3];            /* the grid of the frames to come (0 0 0: none yet) */
  gboolean given_back; /* a volume of this grid came back since it was set: the taker recycles */
  guint64 made;        /* volumes asked of the allocator so far (take's fallback, prepare) */
} NwLiveSpares;

/* Volumes made with allocator (NULL: GLib's, nw_volume_new): pinned host memory lets the
 * download copy straight into a frame (cuda/live_front.cu). Only volumes of that allocator
 * are kept; others given back are freed. */
void nw_live_spares_init(NwLiveSpares *sp, const NwVoxelAllocator *allocator);
/* Frees what is kept. No other call may be running. */
void nw_live_spares_clear(NwLiveSpares *sp);

/* The grid (nx, ny, nz) of the frames to come; volumes kept for another grid are freed. */
void nw_live_spares_set_grid(NwLiveSpares *sp, const int d[3]);
/* A volume of the grid with nc (1 or 3) floats per voxel: the kept one, else a new one (NULL
 * and an error when memory is short). Contents undefined: the caller overwrites them all. */
NwVolume *nw_live_spares_take(NwLiveSpares *sp, int nc, GError **error);
/* Any thread: v back (taken; NULL is fine), kept for the next take when it is of the grid
 * and its slot is empty, else freed. */
void nw_live_spares_give(NwLiveSpares *sp, NwVolume *v);
/* After a download: fill the empty slots ahead of the next one (allocated and every page
 * touched, rather than while a frame waits), unless the taker gives volumes back: then the
 * ones it holds come back before they are needed, and volumes made now would only be freed
 * when they do. */
void nw_live_spares_prepare(NwLiveSpares *sp);

G_END_DECLS

#endif
