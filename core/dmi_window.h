/* dmi_window.h — the resident moving window of the distributed MI metric's replicated strategy
 * on a device (issue 17): which region of the moving level a fixed block can read under the
 * current transform, whether the window a device holds still covers it, and, when it does
 * not, the window to hold next and the bulk copies that bring it in. Plain data and
 * arithmetic, no CUDA (cuda/dmi_cuda.cu issues the copies); any thread.
 *
 * Why: the replicated strategy used to keep only the block's own slab (its moving block and
 * halo) on the device and read every tap that left it from pinned host memory over PCIe
 * (zero-copy), one tap at a time. A rotated block leaves its slab at once; thin blocks on
 * many ranks leave it soonest, so more GPUs bought little. The window follows the transform
 * instead: it is placed on the block's mapped bounding box (plus the interpolation halo and a
 * margin, so that an optimiser's nearby transforms reuse it) and moved by bulk copies only
 * when the needed box leaves it. Taps outside the window (a window smaller than the needed
 * box: the memory cap) still read the host copy, so the counts never depend on the window.
 *
 * Storage is toroidal: voxel g of a window [lo, lo + n) sits at ((g - lo + org) mod n) along
 * each axis, so a window moved by a few voxels keeps the voxels it shares with the old one
 * where they are and only the new strips travel (no second buffer, no device-side move). */
#ifndef NW_DMI_WINDOW_H
#define NW_DMI_WINDOW_H

#include <glib.h>

#include "sampler.h"

G_BEGIN_DECLS

typedef struct {
  int lo[3], n[3];  /* moving voxels [lo, lo + n) */
  int org[3];       /* storage position of lo along each axis (toroidal) */
  gboolean valid;   /* FALSE: nothing resident yet */
  gboolean partial; /* the last needed box is not all inside (the taps outside read the host) */
} NwDmiWindow;

/* The moving voxels that sampler s reads for any fixed voxel of [lo, hi) under map (fixed
 * voxel -> moving voxel, 3x4): the bounding box of the images of the box's corners (an affine
 * map takes a box's extremes at its corners), widened by the sampler's taps (nearest: the
 * rounded voxel; linear: floor .. floor + 1; cubic: floor - 1 .. floor + 2) and one voxel more
 * against rounding of the per-voxel positions, clamped to [0, moving_n) as the samplers clamp
 * taps. out_hi exclusive. FALSE (and an empty box) when [lo, hi) is empty. */
gboolean nw_dmi_needed_box(const double map[12], const int lo[3], const int hi[3],
                           const int moving_n[3], NwSampler s, int out_lo[3], int out_hi[3]);

/* Voxels of the moving window one fixed block [lo, hi) may keep on the device under the
 * memory cap (dmi_decomp.h: one block's bytes on a device): the cap less the fixed block, its
 * mask and the histogram, over 4 bytes (8 with the moving mask, which travels alongside).
 * cap_mb <= 0 (no cap): G_MAXINT64, the device's memory decides. Never less than the slab the
 * plan counted (block + halo), since the plan made the block fit the cap with it. */
gint64 nw_dmi_window_budget(double cap_mb, gint64 fixed_voxels, gboolean fixed_mask,
                            gboolean moving_mask, int bins);

/* One bulk copy: the moving voxels [src_lo, src_lo + n) to storage [dst_lo, dst_lo + n) of the
 * window's buffer (no wrap inside a copy). */
typedef struct {
  int src_lo[3], dst_lo[3], n[3];
} NwDmiCopy;

typedef enum {
  NW_DMI_WINDOW_REUSE, /* the needed box is inside the window: nothing to copy */
  NW_DMI_WINDOW_SHIFT, /* same size, moved: only the voxels that were not resident */
  NW_DMI_WINDOW_FETCH, /* new size (or nothing shared): the whole window */
} NwDmiWindowAction;

/* At most 2 strips per axis, each cut in at most 2 along each axis by the wrap. */
#define NW_DMI_MAX_COPIES 48

typedef struct {
  NwDmiWindowAction action;
  NwDmiWindow next;
  int n_copies;
  NwDmiCopy copies[NW_DMI_MAX_COPIES];
  gint64 voxels; /* copied */
} NwDmiWindowPlan;

/* The window to hold for the needed box [need_lo, need_hi) (non-empty, inside [0, moving_n)),
 * given the one held (cur), at most budget voxels (>= 1), and a margin in voxels on each side
 * for nearby transforms:
 *   - the needed box inside cur: REUSE;
 *   - else cur's size kept, the window centred on the box (inside the domain), where that size
 *     holds the box or at least 4/5 of what a window shaped for the box would hold: SHIFT (a
 *     reshaped window is copied whole, and a sweep that alternated shapes would pay that at
 *     every step);
 *   - else a window shaped for the box: the box plus the margin (the margin shrunk to fit the
 *     budget), or, when the box alone exceeds the budget, the box's proportions scaled to the
 *     budget and centred on it (the taps outside read the host copy): FETCH.
 * A budget that holds the whole level gets the whole level, placed once and never moved. */
void nw_dmi_window_plan(const NwDmiWindow *cur, const int need_lo[3], const int need_hi[3],
                        const int moving_n[3], gint64 budget, int margin, NwDmiWindowPlan *out);

/* The storage offset of moving voxel (x, y, z) (inside w) in the window's toroidal buffer. */
static inline gsize nw_dmi_window_offset(const NwDmiWindow *w, int x, int y, int z)
{
  const int g[3] = {x, y, z};
  int s[3];
  for (int a = 0; a < 3; a++) {
    s[a] = g[a] - w->lo[a] + w->org[a];
    if (s[a] >= w->n[a])
      s[a] -= w->n[a];
  }
  return ((gsize)s[2] * (gsize)w->n[1] + (gsize)s[1]) * (gsize)w->n[0] + (gsize)s[0];
}

G_END_DECLS

#endif
