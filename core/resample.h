/* resample.h — interpolation and resampling on the CPU (the reference for the CUDA twins).
 * Coordinates are continuous voxel indices of the volume being sampled. Outside the grid,
 * samples take the value of the nearest border voxel (clamp), which keeps warped borders
 * free of artificial edges. Any thread; OpenMP inside the whole-volume functions. */
#ifndef NW_RESAMPLE_H
#define NW_RESAMPLE_H

#include "volume.h"

G_BEGIN_DECLS

/* Trilinear sample of component c at (x, y, z); a NaN coordinate gives NaN. Float weights,
 * interpolated along x, then y, then z. */
float nw_sample_trilinear(const NwVolume *v, int c, double x, double y, double z);
/* Nearest-neighbour sample (for label maps): index floor(x + 0.5), halves round up. */
float nw_sample_nearest(const NwVolume *v, int c, double x, double y, double z);

typedef enum { NW_INTERP_LINEAR, NW_INTERP_NEAREST } NwInterp;

/* out(x) = in(x + u(x)) for every voxel x of out; u has nc = 3, voxel units, same grid as
 * out; in may have several components. out must exist with in's nc. */
void nw_warp(NwVolume *out, const NwVolume *in, const NwVolume *u, NwInterp interp);

/* Half resolution per axis (ceil(n/2); axes of size 1 stay 1), for image pyramids: Gaussian
 * pre-smoothing (sigma 1 voxel on the axes that shrink), then trilinear sampling where the
 * coarse voxel centre i lies at fine index 2i + 0.5; the affine is updated so that voxel
 * centres keep their world positions. */
NwVolume *nw_downsample2(const NwVolume *in, GError **error);
/* The volume nw_downsample2 would return, its data zero: the grid (size and voxel-to-world)
 * for back ends that compute the data themselves. */
NwVolume *nw_downsample2_new(const NwVolume *in, GError **error);
/* Its grid alone, into a header without voxels (out->data NULL): the levels of an image too
 * large to hold (the distributed metric's level geometry, dmi_cost.h). */
void nw_downsample2_header(const NwVolume *in, NwVolume *out);
/* Resample in onto a grid of nx*ny*nz covering the same world box (trilinear). For vector
 * fields in voxel units the components are scaled by the size ratio per axis. */
NwVolume *nw_resize(const NwVolume *in, int nx, int ny, int nz, gboolean is_voxel_field,
                    GError **error);

G_END_DECLS

#endif
