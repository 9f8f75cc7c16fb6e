/* nw_timeline.c — a run's frames in a byte-bounded ring, oldest dropped first (see
 * nw_timeline.h). Whichever thread owns the timeline; no GL, no GTK. */
#include "nw_timeline.h"

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

/* Frame i goes; the order of the others stays (a few hundred pointers move at most). */
static void drop(NwTimeline *t, guint i)
{
  const NwTimelineFrame *f = g_ptr_array_index(t->frames, i);
  t->bytes -= f->bytes;
  g_ptr_array_remove_index(t->frames, i);
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
  while (t->bytes + bytes > t->budget)
    drop(t, 0);
  NwTimelineFrame *f = g_new0(NwTimelineFrame, 1);
  f->iteration = iteration;
  f->image = nw_volume_copy(image);
  f->field = field != NULL ? nw_volume_copy(field) : NULL;
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
