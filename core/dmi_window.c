/* dmi_window.c — see dmi_window.h: the replicated strategy's resident moving window, the box a
 * block needs, the budget, and the copies that move the window. Any thread. */
#include "dmi_window.h"

#include <math.h>
#include <string.h>

gboolean nw_dmi_needed_box(const double map[12], const int lo[3], const int hi[3],
                           const int moving_n[3], NwSampler s, int out_lo[3], int out_hi[3])
{
  for (int a = 0; a < 3; a++)
    if (hi[a] <= lo[a]) {
      memset(out_lo, 0, 3 * sizeof(int));
      memset(out_hi, 0, 3 * sizeof(int));
      return FALSE;
    }
  double mn[3] = {INFINITY, INFINITY, INFINITY}, mx[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int c = 0; c < 8; c++) {
    /* the block's extreme voxels (hi - 1: the last voxel, not the bound) */
    const double i = (c & 1) ? hi[0] - 1 : lo[0], j = (c & 2) ? hi[1] - 1 : lo[1],
                 k = (c & 4) ? hi[2] - 1 : lo[2];
    for (int a = 0; a < 3; a++) {
      const double p = map[4 * a] * i + map[4 * a + 1] * j + map[4 * a + 2] * k + map[4 * a + 3];
      mn[a] = MIN(mn[a], p);
      mx[a] = MAX(mx[a], p);
    }
  }
  /* taps below floor(p) and above it (nearest rounds: floor(p + 0.5) <= floor(p) + 1) */
  const int below = s == NW_SAMPLER_CUBIC ? 1 : 0, above = s == NW_SAMPLER_CUBIC ? 2 : 1;
  for (int a = 0; a < 3; a++) {
    /* positions far outside the domain are skipped by the samplers; clamp before the cast */
    const double f0 = CLAMP(floor(mn[a]), -4.0, (double)moving_n[a] + 4.0);
    const double f1 = CLAMP(floor(mx[a]), -4.0, (double)moving_n[a] + 4.0);
    out_lo[a] = CLAMP((int)f0 - below - 1, 0, moving_n[a] - 1);
    out_hi[a] = CLAMP((int)f1 + above + 1, 0, moving_n[a] - 1) + 1;
  }
  return TRUE;
}

gint64 nw_dmi_window_budget(double cap_mb, gint64 fixed_voxels, gboolean fixed_mask,
                            gboolean moving_mask, int bins)
{
  if (cap_mb <= 0.0)
    return G_MAXINT64;
  const double left =
      cap_mb * 1e6 - 4.0 * (double)fixed_voxels * (fixed_mask ? 2 : 1) - 8.0 * (double)bins * bins;
  /* (+1e-3: the cap came from bytes / 1e6; its round trip must not cost the slab a voxel) */
  return MAX((gint64)1, (gint64)floor(left / (moving_mask ? 8.0 : 4.0) + 1e-3));
}

static gint64 box_voxels(const int n[3])
{
  return (gint64)n[0] * n[1] * n[2];
}

static int clamp_lo(int lo, int n, int full)
{
  return CLAMP(lo, 0, full - n);
}

/* A window of size n centred on the needed box, inside the domain. */
static void place(const int need_lo[3], const int need_hi[3], const int n[3], const int moving_n[3],
                  int lo[3])
{
  for (int a = 0; a < 3; a++) {
    const int e = need_hi[a] - need_lo[a];
    lo[a] = clamp_lo(need_lo[a] - (n[a] - e) / 2, n[a], moving_n[a]);
  }
}

/* The size for a needed box of extents e: e plus the largest margin <= margin that fits the
 * budget; when e alone does not, e scaled down uniformly over its non-flat axes. partial:
 * smaller than e. */
static void size_for(const int e[3], const int moving_n[3], gint64 budget, int margin, int n[3],
                     gboolean *partial)
{
  *partial = FALSE;
  if (box_voxels(moving_n) <= budget) { /* the whole level: placed once, never moved */
    memcpy(n, moving_n, 3 * sizeof(int));
    return;
  }
  for (int m = margin; m >= 0; m = m > 8 ? m / 2 : m - 1) {
    for (int a = 0; a < 3; a++)
      n[a] = MIN(e[a] + 2 * m, moving_n[a]);
    if (box_voxels(n) <= budget)
      return;
  }
  *partial = TRUE;
  int flat = 0;
  for (int a = 0; a < 3; a++)
    flat += e[a] > 1 ? 1 : 0;
  const double s = pow((double)budget / (double)box_voxels(e), 1.0 / MAX(flat, 1));
  for (int a = 0; a < 3; a++)
    n[a] = e[a] > 1 ? MAX(1, (int)floor(e[a] * s)) : e[a];
  while (box_voxels(n) > budget) { /* pow's rounding: trim the longest axis */
    int l = 0;
    for (int a = 1; a < 3; a++)
      if (n[a] > n[l])
        l = a;
    if (n[l] == 1)
      break;
    n[l]--;
  }
}

/* Voxels of the needed box inside a window of size n placed for it. */
static gint64 covered(const int need_lo[3], const int need_hi[3], const int n[3],
                      const int moving_n[3])
{
  int lo[3];
  place(need_lo, need_hi, n, moving_n, lo);
  gint64 v = 1;
  for (int a = 0; a < 3; a++)
    v *= MAX(0, MIN(need_hi[a], lo[a] + n[a]) - MAX(need_lo[a], lo[a]));
  return v;
}

/* Box [lo, lo + n) of window w (its storage at w->org) as copies cut at the wrap. */
static void add_box(NwDmiWindowPlan *p, const NwDmiWindow *w, const int lo[3], const int n[3])
{
  int s0[3], n0[3], n1[3];
  for (int a = 0; a < 3; a++) {
    if (n[a] <= 0)
      return;
    s0[a] = (lo[a] - w->lo[a] + w->org[a]) % w->n[a];
    n0[a] = MIN(n[a], w->n[a] - s0[a]);
    n1[a] = n[a] - n0[a];
  }
  for (int c = 0; c < 8; c++) {
    NwDmiCopy cp;
    gboolean empty = FALSE;
    for (int a = 0; a < 3; a++) {
      const gboolean second = (c >> a) & 1;
      cp.n[a] = second ? n1[a] : n0[a];
      cp.src_lo[a] = second ? lo[a] + n0[a] : lo[a];
      cp.dst_lo[a] = second ? 0 : s0[a];
      empty = empty || cp.n[a] <= 0;
    }
    if (empty)
      continue;
    g_assert(p->n_copies < NW_DMI_MAX_COPIES);
    p->copies[p->n_copies++] = cp;
    p->voxels += box_voxels(cp.n);
  }
}

void nw_dmi_window_plan(const NwDmiWindow *cur, const int need_lo[3], const int need_hi[3],
                        const int moving_n[3], gint64 budget, int margin, NwDmiWindowPlan *out)
{
  memset(out, 0, sizeof *out);
  out->next = *cur;
  gboolean inside = cur->valid;
  for (int a = 0; a < 3 && inside; a++)
    inside = need_lo[a] >= cur->lo[a] && need_hi[a] <= cur->lo[a] + cur->n[a];
  if (inside) {
    out->action = NW_DMI_WINDOW_REUSE;
    return;
  }
  int e[3], n[3], fresh[3];
  gboolean partial, fits = cur->valid;
  for (int a = 0; a < 3; a++) {
    e[a] = need_hi[a] - need_lo[a];
    fits = fits && cur->n[a] >= e[a];
  }
  NwDmiWindow *next = &out->next;
  size_for(e, moving_n, budget, margin, fresh, &partial);
  /* keep the size (and the storage: only the strips not yet resident travel) where that holds
   * the box, or at least 4/5 of what a window shaped for it would: a reshaped window is copied
   * whole, and a sweep that alternates shapes would pay that at every step */
  gboolean keep = cur->valid && box_voxels(cur->n) <= budget;
  if (keep && !fits)
    keep = 5 * covered(need_lo, need_hi, cur->n, moving_n) >=
           4 * covered(need_lo, need_hi, fresh, moving_n);
  memcpy(n, keep ? cur->n : fresh, sizeof n);
  memcpy(next->n, n, sizeof n);
  place(need_lo, need_hi, n, moving_n, next->lo);
  next->valid = TRUE;
  next->partial = FALSE;
  for (int a = 0; a < 3; a++)
    next->partial = next->partial || need_lo[a] < next->lo[a] || need_hi[a] > next->lo[a] + n[a];
  int ilo[3], ihi[3];
  gboolean shared = cur->valid && memcmp(n, cur->n, sizeof n) == 0;
  for (int a = 0; a < 3; a++) {
    ilo[a] = MAX(next->lo[a], cur->lo[a]);
    ihi[a] = MIN(next->lo[a] + n[a], cur->lo[a] + cur->n[a]);
    shared = shared && ihi[a] > ilo[a];
  }
  if (!shared) {
    out->action = NW_DMI_WINDOW_FETCH;
    memset(next->org, 0, sizeof next->org);
    add_box(out, next, next->lo, n);
    return;
  }
  out->action = NW_DMI_WINDOW_SHIFT;
  for (int a = 0; a < 3; a++) /* where next->lo lies in cur's storage */
    next->org[a] = ((next->lo[a] - cur->lo[a] + cur->org[a]) % n[a] + n[a]) % n[a];
  /* next minus the shared box: per axis the parts below and above it, then narrow to it */
  int rlo[3], rhi[3];
  for (int a = 0; a < 3; a++) {
    rlo[a] = next->lo[a];
    rhi[a] = next->lo[a] + n[a];
  }
  for (int a = 0; a < 3; a++) {
    int blo[3], bn[3];
    for (int b = 0; b < 3; b++) {
      blo[b] = rlo[b];
      bn[b] = rhi[b] - rlo[b];
    }
    bn[a] = ilo[a] - rlo[a];
    add_box(out, next, blo, bn);
    blo[a] = ihi[a];
    bn[a] = rhi[a] - ihi[a];
    add_box(out, next, blo, bn);
    rlo[a] = ilo[a];
    rhi[a] = ihi[a];
  }
}
