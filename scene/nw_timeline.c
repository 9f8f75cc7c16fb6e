/* nw_timeline.c — a run's frames in a byte-bounded ring, oldest dropped first (see
 * nw_timeline.h). Whichever thread owns the timeline; no GL, no GTK. */
#include "nw_timeline.h"

#include "copy_beside.h"

struct NwTimeline {
  GPtrArray *frames; /* NwTimelineFrame*, oldest first, iterations increasing */
  size_t bytes, budget;
};

static void frame_free(gpointer data)
{
  NwTimelineFrame *f = data;
  nw_volume_free(f->image);
  if (f->field != NULL)
    nw_volume_free(f->field);
  g_free(f);
}

static size_t volume_bytes(const NwVolume *v)
{
  return v != NULL ? nw_volume_n_floats(v) * sizeof(float) : 0;
}

NwTimeline *nw_timeline_new(size_t budget_bytes)
{
  NwTimeline *t = g_new0(NwTimeline, 1);
  t->frames = g_ptr_array_new_with_free_func(frame_free);
  t->budget = budget_bytes > 0 ? budget_bytes : NW_TIMELINE_DEFAULT_BUDGET;
  return t;
}

void nw_timeline_free(NwTimeline *t)
{
  if (t == NULL)
    return;
  g_ptr_array_unref(t->frames);
  g_free(t);
}

/* Frame i out of the ring, the caller's now; the order of the others stays (a few hundred
 * pointers move at most). */
static NwTimelineFrame *steal(NwTimeline *t, guint i)
{
  NwTimelineFrame *f = g_ptr_array_steal_index(t->frames, i);
  t->bytes -= f->bytes;
  return f;
}

static void drop(NwTimeline *t, guint i)
{
  frame_free(steal(t, i));
}

/* A copy of src (NULL: none) into dst's memory when dst is a volume of the same shape, else
 * into a new one (dst freed). A full ring's oldest frame lends its volumes to the newest: a
 * live run's frames are all of a shape, and the copy then needs no allocation and takes no
 * page faults (16 MiB a frame by default, on the display thread). */
static NwVolume *copy_into(NwVolume *dst, const NwVolume *src)
{
  if (dst != NULL && src != NULL && dst->nx == src->nx && dst->ny == src->ny &&
      dst->nz == src->nz && dst->nc == src->nc) {
    nw_volume_copy_header(dst, src); /* dst's memory stays (src's may be pinned) */
    nw_copy_floats_beside(dst->data, src->data, nw_volume_n_floats(src));
    return dst;
  }
  nw_volume_free(dst);
  return src != NULL ? nw_volume_copy(src) : NULL;
}

gboolean nw_timeline_add(NwTimeline *t, int iteration, const NwVolume *image,
                         const NwVolume *field)
{
  g_return_val_if_fail(t != NULL && image != NULL, FALSE);
  const size_t bytes = volume_bytes(image) + volume_bytes(field);
  if (bytes > t->budget)
    return FALSE;
  /* a repeated or earlier iteration: what was kept from it on is superseded */
  while (t->frames->len > 0 &&
         ((NwTimelineFrame *)g_ptr_array_index(t->frames, t->frames->len - 1))->iteration >=
             iteration)
    drop(t, t->frames->len - 1);
  /* the oldest frames go to make room, the last of them to be refilled */
  NwTimelineFrame *f = NULL;
  while (t->bytes + bytes > t->budget) {
    if (f != NULL)
      frame_free(f);
    f = steal(t, 0);
  }
  if (f == NULL)
    f = g_new0(NwTimelineFrame, 1);
  f->iteration = iteration;
  f->image = copy_into(f->image, image);
  f->field = copy_into(f->field, field);
  f->bytes = bytes;
  g_ptr_array_add(t->frames, f);
  t->bytes += bytes;
  return TRUE;
}

void nw_timeline_clear(NwTimeline *t)
{
  g_ptr_array_set_size(t->frames, 0);
  t->bytes = 0;
}

guint nw_timeline_n_frames(const NwTimeline *t)
{
  return t->frames->len;
}

const NwTimelineFrame *nw_timeline_get(const NwTimeline *t, guint i)
{
  g_return_val_if_fail(i < t->frames->len, NULL);
  return g_ptr_array_index(t->frames, i);
}

const NwTimelineFrame *nw_timeline_find(const NwTimeline *t, int k)
{
  for (guint i = t->frames->len; i-- > 0;) {
    const NwTimelineFrame *f = g_ptr_array_index(t->frames, i);
    if (f->iteration <= k)
      return f;
  }
  return NULL;
}

size_t nw_timeline_bytes(const NwTimeline *t)
{
  return t->bytes;
}

size_t nw_timeline_budget(const NwTimeline *t)
{
  return t->budget;
}
