/* affine_resample.h — images moved by an affine map of world space: the voxel-to-voxel map
 * that the cost function and resampling share, and resampling onto another image's grid
 * (the warped moving image of a registration, `neurowarp-cli resample`). CPU; OpenMP over
 * the output voxels. Any thread. */
#ifndef NW_AFFINE_RESAMPLE_H
#define NW_AFFINE_RESAMPLE_H

#include <glib.h>

#include "sampler.h"
#include "volume.h"

G_BEGIN_DECLS

/* The map from a voxel (i, j, k) of grid `from` to the continuous voxel position of grid
 * `to` that the world map T (from's world -> to's world, 4x4 RAS) sends it to:
 * map = (ras_to_vox of to) · T · (vox_to_ras of from), its top three rows (3x4 row-major,
 * 12 numbers). dim 2: the k row is zero (slices are matched whatever their world z, as 2D
 * registration treats them). FALSE when to's affine is singular. */
gboolean nw_affine_voxel_map(const NwVolume *from, const NwVolume *to, const double t_ras[16],
                             int dim, double map[12]);

/* out(x) = in(T(x)) for every voxel x of grid's grid (dims and affine; grid's voxels are not
 * read), T = grid world -> in world; points outside in's domain (sampler.h) get background.
 * dim as above. The result has grid's dims and affine, one component. */
NwVolume *nw_affine_resample(const NwVolume *in, const NwVolume *grid, const double t_ras[16],
                             int dim, NwSampler sampler, float background, GError **error);

G_END_DECLS

#endif
