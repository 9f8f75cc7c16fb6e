/* live_source.h — the frames of one live job for the views: made only when a redraw wants
 * one (at most one per display frame; none while nobody draws), and carried to the display
 * by the cheapest path (DESIGN.md, "Threads and live display"):
 *
 *   interop     a CUDA job publishes device-to-device into its front (cuda/interop/nw_live.h); the
 *               views fill their GL objects from the front (gl_live.h). Nothing crosses to
 *               the host.
 *   host, CUDA  the job's publish reduces its frame on the GPU to at most max_voxels voxels
 *               (block means, core/live_reduce.h) into the front; this source's downloader
 *               thread (never the worker, never the GTK thread) copies it to host memory
 *               through pinned memory and an asynchronous copy on the front's own stream.
 *   host, CPU   the method's own host frame, made by the worker when wanted.
 *
 * The display calls nw_live_source_begin_frame once per display frame: it asks for the next
 * frame unless one is on its way or a cap on frames a second says not yet (host frames:
 * NW_LIVE_HOST_FPS), and when frames have been arriving within wait_us of being asked for (a
 * fast job) it waits up to wait_us for that frame, so the frame drawn is at most an
 * iteration old. A frame that arrived too late for its display frame and is stale by the
 * next is replaced by asking again, cap or not; so is a frame that went stale while it was
 * being taken (a host frame's take callback made room for it at a new grid, or the machine
 * held the display's thread). A slow job's frame arrives later and
 * the notify callback asks for a redraw then. Host frames are handed to the take callback (the
 * owner moves them into its layers); interop frames are read from nw_live_source_front by the GL
 * side. A host frame's volumes go back to the source once the display is done with them
 * (nw_live_source_recycle): a CUDA job's downloads then reuse them, so that steady host frames
 * allocate nothing (no mmap, page faults or munmap per frame across the threads).
 *
 * Threads: new, free, set_job, begin_frame, the setters and stats on the display (main)
 * thread; push on the job's worker thread (from its on_frame callback); notify is called on
 * the worker or the downloader thread; take on the display thread; recycle on any. GL-free. */
#ifndef NW_LIVE_SOURCE_H
#define NW_LIVE_SOURCE_H

#include <glib.h>

#include "job.h"
#include "method.h"
#include "nw_live.h"

G_BEGIN_DECLS

typedef enum { NW_LIVE_PATH_HOST, NW_LIVE_PATH_INTEROP } NwLivePath;

/* Host frames asked for per second at most (0: one per display frame); the environment
 * variable NW_LIVE_HOST_FPS overrides it. Host frames cost the job more than interop ones
 * (a download, and an upload into the display's GL, which on the job's own GPU competes with
 * it): measured on an H100 at 256^3, 60 host frames a second slowed demons 1.14x, 30 a
 * second 1.07x (docs/PERFORMANCE.md). 30 is smooth enough to watch a registration by. */
#define NW_LIVE_HOST_FPS 30.0
const char *nw_live_path_name(NwLivePath p); /* "host frames", "CUDA–GL interop" */

typedef struct NwLiveSource NwLiveSource;

/* A frame arrived (any thread): ask the display for a redraw. */
typedef void (*NwLiveNotify)(gpointer data);
/* A host frame for the display (display thread); the callee takes frame, and gives it back
 * with nw_live_source_recycle_frame when done (or nw_frame_clear + g_free). */
typedef void (*NwLiveTake)(NwFrame *frame, gpointer data);

/* For a job of ops. interop: the display's GL context can take CUDA frames (asked with a
 * view's context current: nw_cuda_gl_available); used when ops runs on CUDA and a front can
 * be made, else host frames. max_voxels: bound for reduced host frames of CUDA jobs
 * (0: NW_LIVE_HOST_MAX_VOXELS; the environment variable NW_LIVE_HOST_VOXELS overrides). */
NwLiveSource *nw_live_source_new(const NwMethodOps *ops, gboolean interop, size_t max_voxels,
                                 NwLiveNotify notify, NwLiveTake take, gpointer data);
/* After the job has ended and been joined (nw_job_free), or before it was started. */
void nw_live_source_free(NwLiveSource *s);

NwLivePath nw_live_source_path(NwLiveSource *s);
/* Unique over the process's life (an address may be reused by a later source). */
guint64 nw_live_source_id(NwLiveSource *s);
/* What the job publishes into (nw_job_set_live(job, front)); NULL: host frames from the
 * method. */
NwLiveFront *nw_live_source_front(NwLiveSource *s);
/* The job to ask for frames; NULL before freeing the job (no more asks). */
void nw_live_source_set_job(NwLiveSource *s, NwJob *job);
/* Worker: the job's on_frame callback hands every frame here (takes frame). */
void nw_live_source_push(NwLiveSource *s, NwFrame *frame);
/* Any thread: a host frame's volume that nothing reads any more (taken; NULL is fine), for
 * the next download to fill instead of a fresh volume (nw_live_front_recycle). Host frames of
 * a CPU job (no front), and s NULL, free it. Never waits behind a download. */
void nw_live_source_recycle(NwLiveSource *s, NwVolume *v);
/* Any thread: a host frame done with: its volumes recycled as above, the frame freed. */
void nw_live_source_recycle_frame(NwLiveSource *s, NwFrame *frame);

/* Ask for one frame now (e.g. the first one of a paused job, before any redraw). */
void nw_live_source_want(NwLiveSource *s);
/* Once per display frame; calls with the counter of a display frame already begun return
 * FALSE at once (several views draw one display frame). TRUE when a new frame was taken:
 * a host frame went to the take callback, or a new device frame is in the front. */
gboolean nw_live_source_begin_frame(NwLiveSource *s, guint64 frame_counter, gint64 wait_us);
/* The job runs and the display pulls: a frame asked for will come (not paused, not ended). */
gboolean nw_live_source_fresh_coming(NwLiveSource *s);
/* At most fps frames asked for a second (0: one per display frame); host sources start at
 * NW_LIVE_HOST_FPS, interop ones at 0. */
void nw_live_source_set_max_fps(NwLiveSource *s, double fps);
/* The display pulls frames (the default) or not (the views keep the last one and the job
 * runs alone, e.g. to compare its speed without display). */
void nw_live_source_set_enabled(NwLiveSource *s, gboolean enabled);
gboolean nw_live_source_get_enabled(NwLiveSource *s);
/* The display asked for a frame within the last 250 ms plus twice the usual answer time
 * (any thread). */
gboolean nw_live_source_display_active(NwLiveSource *s);

typedef struct {
  NwLivePath path;
  guint64 wants;          /* frames asked of the job */
  guint64 arrived;        /* frames that reached the source (device publishes, host frames) */
  guint64 taken;          /* frames handed to the display */
  guint64 display_frames; /* distinct display frames begun */
  guint64 host_bytes;     /* image + field bytes of host frames that arrived */
  int reduce;             /* factor of the last reduced host frame (1: full size) */
  int shown;              /* iteration of the last frame taken (-1: none) */
  int lag;                /* the job's completed iterations when it was taken, minus shown */
  double fps;             /* frames taken per second, over about the last second */
  double arrival_ms;      /* typical time from asking to arrival (median of the latest) */
  double last_arrival_ms; /* ... of the latest answer */
  guint64 retaken;        /* frames replaced because taking them was slow (a new grid, a held
                           * display thread): the job moved on meanwhile */
} NwLiveStats;
void nw_live_source_stats(NwLiveSource *s, NwLiveStats *out);

G_END_DECLS

#endif
