/* level_set.h — what is read off a level-set function phi (mm, negative inside: sdf_reinit.h):
 * its zero level set as a mesh with per-vertex values sampled from another level set, and the
 * connected components of its inside and outside (to count blobs and holes). CPU; any
 * thread; plain loops. */
#ifndef NW_LEVEL_SET_H
#define NW_LEVEL_SET_H

#include <glib.h>

#include "surface.h"
#include "volume.h"

G_BEGIN_DECLS

/* The zero level set of phi as a mesh in world RAS mm (marching cubes of -phi at 0, so that
 * inside is phi <= 0 and triangles face outwards: marching_cubes.h). With values (a scalar
 * volume on phi's grid, may be NULL) each vertex gets values trilinearly sampled at its
 * position as its scalar: given the input's signed distance, that is the vertex's signed
 * displacement from the input surface along its normal (mm, positive outward), exact up to
 * interpolation. Errors: nc != 1, grids that differ, nothing crosses zero. */
NwSurface *nw_level_set_mesh(const NwVolume *phi, const NwVolume *values, GError **error);

/* Connected components (6-connected voxels) of the inside (phi <= 0) and of the outside
 * (phi > 0); sizes (may be NULL) receive a GArray of int voxel counts per component, largest
 * first, for the inside and the outside. A sphere with one spurious blob outside it has 2
 * inside components; one with a bubble inside has 2 outside components. */
void nw_level_set_components(const NwVolume *phi, int *n_inside, int *n_outside,
                             GArray **inside_sizes, GArray **outside_sizes);

G_END_DECLS

#endif
