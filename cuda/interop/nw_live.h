/* nw_live.h — the front buffer of a live job on the GPU: where the worker leaves the
 * displayable state after an iteration and where the drawing thread takes it from, with no
 * trip through host memory (DESIGN.md, "Threads and live display").
 *
 * One writer (the job's worker, on the method's CUDA stream) and any number of readers
 * (the GTK main thread's views, a benchmark's draw loop), each on its own stream. The front
 * holds one frame: the image (float per voxel), optionally the displacement field (float4
 * per voxel, xyz in voxel units of the frame's grid, w unused) and the grid (dims and
 * voxel -> RAS affine: a coarse pyramid level is smaller than the full grid).
 *
 * Ordering is kept on the GPU, never by blocking a CPU thread on the GPU:
 *   publish:  the writer's stream waits for the "consumed" event of the last read, copies
 *             device-to-device into the front, records the "ready" event;
 *   read:     begin_read makes the reader's stream wait for "ready" and hands out the
 *             front's device pointers; the reader enqueues its copies on that stream;
 *             end_read records "consumed" on it.
 * A host mutex guards the bookkeeping only (held while calls enqueue work, microseconds),
 * except that publish blocks when the grid changes (the buffers are reallocated after the
 * last read has finished on the GPU: once per pyramid level).
 *
 * Without a CUDA build these functions exist as stubs (render/live_stub.c) that fail with
 * "built without CUDA". C API; the implementation is cuda/live_front.cu. */
#ifndef NW_LIVE_H
#define NW_LIVE_H

#include <glib.h>

#include "method.h"
#include "volume.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct NwLiveFront NwLiveFront;

/* The allocator of the host frames' voxels: pinned (page-locked, portable) host memory, which
 * the GPU's copy engines read and write (NwVoxelAllocator.pinned); its alloc returns NULL where
 * CUDA cannot pin. NULL in a build without CUDA. Any thread. */
const NwVoxelAllocator *nw_live_pinned_voxels(void);

/* Any thread. Empty until the first publish. NULL with an error when no CUDA device. */
NwLiveFront *nw_live_front_new(GError **error);
/* After the writer is done with it (its job ended) and no read is open; waits for the GPU. */
void nw_live_front_free(NwLiveFront *f);

/* Writer. like: the grid of the data (dims, affine; its voxels are not read). d_image: n
 * floats on the device; d_field: n float4 (may be NULL: no field in this frame). iteration:
 * what the frame shows. stream: the writer's cudaStream_t (NULL = default stream). */
gboolean nw_live_front_publish(NwLiveFront *f, const NwVolume *like, const float *d_image,
                               const void *d_field, int iteration, void *stream,
                               GError **error);

/* What a reader sees between begin_read and end_read. */
typedef struct {
  int iteration;           /* -1: nothing published yet (pointers NULL) */
  int nx, ny, nz;
  double vox_to_ras[16];   /* row-major, as NwVolume */
  const float *image;      /* device, nx*ny*nz floats */
  const void *field;       /* device, nx*ny*nz float4, or NULL */
  guint64 grid_generation; /* bumped when dims or affine change: readers re-make textures */
  int reduce;              /* the frame is the job's reduced by this (nw_live_front_set_reduce) */
} NwLiveView;

/* Reader: locks the front and makes stream wait (on the GPU) for the last publish. The
 * pointers stay valid until end_read, which records "consumed" on stream and unlocks. Keep
 * the span short: the writer waits on the lock. Always pair with end_read. With stream
 * NULL it is a peek at the iteration and grid only (no GPU ordering: do not touch the
 * pointers). */
void nw_live_front_begin_read(NwLiveFront *f, void *stream, NwLiveView *view);
void nw_live_front_end_read(NwLiveFront *f, void *stream);

/* Latest published iteration (-1 before the first), without locking out the writer for
 * long; for readouts and lag measurements. */
int nw_live_front_iteration(NwLiveFront *f);

/* A front that only feeds host frames: publish reduces the writer's frame on its stream to
 * at most max_voxels voxels (block means, core/live_reduce.h) instead of copying it whole,
 * so the front and every download are small (0: whole frames, the default). Any thread. */
void nw_live_front_set_reduce(NwLiveFront *f, size_t max_voxels);

/* A host frame of the newest publish, for views that cannot take interop frames: the image
 * and the field (nc 3, voxels of the reduced grid; NULL when the frame has none) reduced by
 * reduce per axis with block means (core/live_reduce.h, whose CPU loops this matches), on
 * the GPU into staging buffers, then copied to pinned host memory asynchronously on the
 * front's own download stream. The writer is held back only while the reduction kernels
 * read the front (its next publish waits for them on the GPU), never for the copy to the
 * host. Blocks the CALLING thread until the copy is done: call it from a downloader thread,
 * not from the worker or the GTK main thread. One download at a time per front (serialised
 * inside). out->iteration -1 and no volumes when nothing was published yet. */
gboolean nw_live_front_download(NwLiveFront *f, int reduce, NwFrame *out, GError **error);
/* On the downloader's thread after a download: make the host volumes of the next one ahead
 * of time (allocated and touched), so that it only copies; nothing once the taker gives
 * volumes back (nw_live_front_recycle): the next download reuses those. */
void nw_live_front_prepare_download(NwLiveFront *f);
/* Any thread, never blocked by a download (the display's take callback when it is done with
 * a downloaded volume): v back to the front (taken; NULL is fine), whose next download fills
 * it instead of a fresh volume, so that steady host frames allocate nothing (no mmap, page
 * faults or munmap per frame). Kept when it is of the grid of the latest download and no
 * volume of its kind (image nc 1, field nc 3) is waiting already; else freed. */
void nw_live_front_recycle(NwLiveFront *f, NwVolume *v);

#ifdef __cplusplus
}
#endif

#endif
