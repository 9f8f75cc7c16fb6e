/* nw_timeline.h — a run's timeline: the frames its views were given (warped image and
 * displacement field, host copies, reduced as the live source reduced them), each with its
 * iteration, kept in a ring bounded by a byte budget: when a new frame would pass the budget
 * the oldest frames go first. Lets the user scrub back through a registration while or after
 * it runs (issue 15, point 11), and export it frame by frame.
 *
 * GLib and core/volume only, no GL, no GTK: testable without a display. Not thread-safe:
 * one thread (the main thread, for a run) adds and reads. */
#ifndef NW_TIMELINE_H
#define NW_TIMELINE_H

#include <glib.h>

#include "volume.h"

G_BEGIN_DECLS

/* 256 MB: about 250 reduced frames of a 128^3 warped image and its field, or the whole of a
 * typical 2D or coarse 3D run, while staying small beside the volumes themselves. */
#define NW_TIMELINE_DEFAULT_BUDGET ((size_t)256 << 20)

typedef struct {
  int iteration;   /* completed iterations when the frame was made */
  NwVolume *image; /* warped image (owned); never NULL */
  NwVolume *field; /* displacement field (owned) or NULL */
  size_t bytes;    /* of image and field data */
} NwTimelineFrame;

typedef struct NwTimeline NwTimeline;

/* budget_bytes: the most image and field bytes kept (0: NW_TIMELINE_DEFAULT_BUDGET). */
NwTimeline *nw_timeline_new(size_t budget_bytes);
void nw_timeline_free(NwTimeline *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(NwTimeline, nw_timeline_free)

/* Keep copies of image (required) and field (may be NULL) as the frame of iteration. A frame
 * of an iteration not after the newest kept one replaces the frames from that iteration on
 * (a job's iterations only grow: an equal one is the same iteration shown again, e.g. the
 * result after the last live frame). A frame larger than the whole budget is not kept:
 * FALSE. Once the budget is reached the copy goes into the memory of the oldest frame it
 * drops, when that is of the same shape: no allocation per live frame. */
gboolean nw_timeline_add(NwTimeline *t, int iteration, const NwVolume *image,
                         const NwVolume *field);
void nw_timeline_clear(NwTimeline *t);

guint nw_timeline_n_frames(const NwTimeline *t);
/* Frame i, oldest first (i < n_frames); borrowed until the next add or clear. */
const NwTimelineFrame *nw_timeline_get(const NwTimeline *t, guint i);
/* The newest frame of an iteration at or before k (NULL when every kept frame is later). */
const NwTimelineFrame *nw_timeline_find(const NwTimeline *t, int k);
size_t nw_timeline_bytes(const NwTimeline *t);
size_t nw_timeline_budget(const NwTimeline *t);

G_END_DECLS

#endif
