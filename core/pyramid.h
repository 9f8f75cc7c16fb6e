/* pyramid.h — multi-resolution image pyramids, shared by every multi-level method and by both
 * back ends (so CPU and CUDA register the very same images). Any thread. */
#ifndef NW_PYRAMID_H
#define NW_PYRAMID_H

#include <glib.h>

#include "volume.h"

G_BEGIN_DECLS

/* Up to max_levels levels of v, index 0 = coarsest, n-1 = a copy of v; each coarser level is
 * nw_downsample2 of the next finer one. A level is only added while every axis longer than
 * one voxel of the current coarsest level has at least 16 voxels, so *n_levels may be
 * smaller than max_levels. Free with nw_pyramid_free. */
NwVolume **nw_pyramid_new(const NwVolume *v, int max_levels, int *n_levels, GError **error);
void nw_pyramid_free(NwVolume **levels, int n_levels);
/* How many levels nw_pyramid_new(v, max_levels, ...) makes, from v's size alone. */
int nw_pyramid_levels(const NwVolume *v, int max_levels);

G_END_DECLS

#endif
