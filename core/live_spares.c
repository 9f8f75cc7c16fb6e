/* live_spares.c — host volumes kept for the live view's next host frames (see
 * live_spares.h). Any thread for give; the downloading thread for the rest. The mutex is held
 * for pointer swaps only: allocation, touching and freeing happen outside it. */
#include "live_spares.h"

#include <string.h>

/* The slot of a kind of volume: 0 image, 1 field, -1 none. */
static int slot_of(int nc)
{
  return nc == 1 ? 0 : nc == 3 ? 1 : -1;
}

static int nc_of(int slot)
{
  return slot == 0 ? 1 : 3;
}

/* Under lock: v is of the grid of the frames to come, and its memory of the spares' kind. */
static gboolean keepable_locked(const NwLiveSpares *sp, const NwVolume *v)
{
  return v->nx == sp->d[0] && v->ny == sp->d[1] && v->nz == sp->d[2] &&
         v->allocator == sp->allocator;
}

void nw_live_spares_init(NwLiveSpares *sp, const NwVoxelAllocator *allocator)
{
  memset(sp, 0, sizeof *sp);
  sp->allocator = allocator;
  g_mutex_init(&sp->lock);
}

/* A new volume of the spares' kind (not under lock); when the allocator has no memory
 * (pinned memory is limited), one of GLib's: the frame still comes, and the volume is freed
 * after it rather than kept. */
static NwVolume *make(const NwLiveSpares *sp, const int d[3], int nc, GError **error)
{
  NwVolume *v = sp->allocator != NULL
                    ? nw_volume_new_from(sp->allocator, d[0], d[1], d[2], nc, NULL)
                    : NULL;
  return v != NULL ? v : nw_volume_new(d[0], d[1], d[2], nc, error);
}

void nw_live_spares_clear(NwLiveSpares *sp)
{
  for (int c = 0; c < 2; c++)
    g_clear_pointer(&sp->slot[c], nw_volume_free);
  g_mutex_clear(&sp->lock);
}

void nw_live_spares_set_grid(NwLiveSpares *sp, const int d[3])
{
  NwVolume *stale[2] = {NULL, NULL};
  g_mutex_lock(&sp->lock);
  if (memcmp(d, sp->d, sizeof sp->d) != 0) {
    memcpy(sp->d, d, sizeof sp->d);
    sp->given_back = FALSE; /* until the taker gives back a volume of this grid */
    for (int c = 0; c < 2; c++)
      if (sp->slot[c] != NULL && !keepable_locked(sp, sp->slot[c]))
        stale[c] = g_steal_pointer(&sp->slot[c]);
  }
  g_mutex_unlock(&sp->lock);
  nw_volume_free(stale[0]);
  nw_volume_free(stale[1]);
}

NwVolume *nw_live_spares_take(NwLiveSpares *sp, int nc, GError **error)
{
  const int c = slot_of(nc);
  g_return_val_if_fail(c >= 0, NULL);
  int d[3];
  g_mutex_lock(&sp->lock);
  NwVolume *v = g_steal_pointer(&sp->slot[c]);
  memcpy(d, sp->d, sizeof d);
  if (v == NULL)
    sp->made++;
  g_mutex_unlock(&sp->lock);
  return v != NULL ? v : make(sp, d, nc, error);
}

/* v into its slot when it is of the grid and the slot is empty, else freed. by_taker: it
 * comes from the taker of a frame (not from prepare). */
static void keep(NwLiveSpares *sp, NwVolume *v, gboolean by_taker)
{
  const int c = slot_of(v->nc);
  g_mutex_lock(&sp->lock);
  if (c >= 0 && keepable_locked(sp, v)) {
    sp->given_back |= by_taker;
    if (sp->slot[c] == NULL)
      sp->slot[c] = g_steal_pointer(&v);
  }
  g_mutex_unlock(&sp->lock);
  nw_volume_free(v); /* NULL when kept */
}

void nw_live_spares_give(NwLiveSpares *sp, NwVolume *v)
{
  if (v != NULL)
    keep(sp, v, TRUE);
}

void nw_live_spares_prepare(NwLiveSpares *sp)
{
  for (int c = 0; c < 2; c++) {
    int d[3];
    g_mutex_lock(&sp->lock);
    const gboolean wanted = sp->slot[c] == NULL && sp->d[0] > 0 && !sp->given_back;
    memcpy(d, sp->d, sizeof d);
    sp->made += wanted;
    g_mutex_unlock(&sp->lock);
    NwVolume *v = wanted ? make(sp, d, nc_of(c), NULL) : NULL;
    if (v == NULL)
      continue;
    if (v->allocator == NULL) /* the page faults now (pinned memory is in place already) */
      memset(v->data, 0, nw_volume_n_floats(v) * sizeof(float));
    keep(sp, v, FALSE);
  }
}
