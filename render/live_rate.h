/* live_rate.h — at most fps events a second, for a caller that gets a chance at every display
 * frame (live_source.c: the asks for host frames). A token bucket with credit in events,
 * refilled at fps.
 *
 * A little under one event of credit (0.9) is enough: a display whose period divides the
 * cap's evenly (60 Hz, cap 30) would otherwise skip a tick whenever jitter brings a chance a
 * few microseconds early. The debt is paid from the next credit, and what is left over after
 * an event is kept up to a quarter of one, so the rate stays at the cap on displays whose
 * period does not divide it (144 Hz, cap 30), while a pause still does not turn into a burst
 * (after one, the next event waits for most of a period). Plain data; the caller serialises. */
#ifndef NW_LIVE_RATE_H
#define NW_LIVE_RATE_H

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  double fps;    /* the cap; 0 or less: no cap */
  double credit; /* in events */
  gint64 last;   /* time of the last chance, microseconds; 0: none yet */
} NwLiveRate;

/* Whether the event may happen at `now` (monotonic microseconds); if so it is counted. */
static inline gboolean nw_live_rate_allow(NwLiveRate *r, gint64 now)
{
  if (r->fps <= 0)
    return TRUE;
  r->credit = r->last != 0 ? r->credit + r->fps * (double)(now - r->last) / G_USEC_PER_SEC : 1.0;
  r->last = now;
  if (r->credit < 0.9)
    return FALSE;
  r->credit = MIN(r->credit - 1.0, 0.25);
  return TRUE;
}

G_END_DECLS

#endif
