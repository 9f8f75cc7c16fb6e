/* live_reduce.h — host frames of the live view at reduced size: each reduced voxel is the
 * mean of a block of f x f x f voxels (f per axis), so a frame for display moves a fraction
 * of the bytes of the full grid. This is the CPU reference of the reduction the GPU performs
 * when it downloads a live frame (cuda/live_front.cu); the two are tested against each other.
 * Any thread; plain loops.
 *
 * Geometry: on an axis of n voxels reduced by f, reduced voxel c averages fine voxels
 * f*c .. f*c + f - 1 (floor(n / f) of them; the last n mod f fine voxels are left out), and
 * its centre lies at fine index f*c + (f - 1) / 2, so the affine keeps world positions. An
 * axis shorter than the factor is not reduced (f = 1 there). Vector fields in voxel units
 * (nc 3) are divided by f per component: the same displacement in reduced voxels. */
#ifndef NW_LIVE_REDUCE_H
#define NW_LIVE_REDUCE_H

#include <glib.h>

#include "volume.h"

G_BEGIN_DECLS

/* Upper bound on the voxels of a reduced host frame by default: 2^20 (e.g. 90x108x90 for a
 * 1 mm brain, 85^3 for 256^3; 16 MiB for an image and its field), so that a frame crosses
 * to the host and into the views' textures within a few milliseconds. */
#define NW_LIVE_HOST_MAX_VOXELS ((size_t)1 << 20)

/* The smallest factor r >= 1 whose reduced grid of nx*ny*nz has at most max_voxels voxels. */
int nw_live_reduce_choose(int nx, int ny, int nz, size_t max_voxels);
/* Per-axis factors for r (1 on axes shorter than r), reduced dims and affine. */
void nw_live_reduce_grid(int nx, int ny, int nz, const double vox_to_ras[16], int r, int f[3],
                         int dims[3], double reduced_vox_to_ras[16]);
/* Block means of v (any nc) reduced by r; voxel_field: v is a displacement in voxels (nc 3),
 * divided by the factors. r = 1 gives a copy. */
NwVolume *nw_live_reduce(const NwVolume *v, int r, gboolean voxel_field, GError **error);

G_END_DECLS

#endif
