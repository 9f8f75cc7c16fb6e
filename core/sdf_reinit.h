/* sdf_reinit.h — signed distance functions on a voxel grid: re-initialisation of a level-set
 * function to a distance (|grad phi| = 1) by fast sweeping (Zhao 2005), and the signed distance
 * of a binary mask. CPU reference; any thread; plain loops (the sweeps are sequential by
 * nature, OpenMP only in the initialisation).
 *
 * Conventions (the whole nlm-surface method uses them): phi is in world MILLIMETRES, negative
 * inside, positive outside, the surface is its zero level set. Distances use the voxel spacing
 * of each axis (spacing_mm); an oblique affine is treated as its column norms (the grid is
 * taken to be orthogonal, as NIfTI grids from scanners are). */
#ifndef NW_SDF_REINIT_H
#define NW_SDF_REINIT_H

#include <glib.h>

#include "volume.h"

G_BEGIN_DECLS

/* Replace phi (nc = 1) in place by the signed distance to its zero level set, keeping every
 * voxel's sign. The interface is located to sub-voxel accuracy: a voxel with a neighbour of
 * the other sign gets the distance to the plane through the linearly interpolated crossings
 * on its axes (1 / d^2 = sum over crossed axes of 1 / d_axis^2); those values stay fixed,
 * and Gauss-Seidel sweeps in the 8 axis orderings solve the upwind (Godunov) discretisation
 * of |grad d| = 1 everywhere else, until no value changes by more than 1e-4 of the smallest
 * spacing (at most 8 rounds of 8 sweeps; 2 are usually enough). Voxels exactly 0 count as
 * inside. Errors: nc != 1, NaN/Inf voxels (named by `name`), no zero crossing (all one sign:
 * there is no surface). */
gboolean nw_sdf_reinit(NwVolume *phi, const char *name, GError **error);
/* nw_sdf_reinit with the sweeps' tiles of tile^3 voxels (nw_sdf_reinit: 16): the result is the
 * same bits for every tile and thread count; a tile larger than the grid is the plain serial
 * sweep (the tests compare with it). */
gboolean nw_sdf_reinit_tiled(NwVolume *phi, int tile, const char *name, GError **error);

/* Extend known distances to the whole grid: voxels with known[e] != 0 keep |phi| as their
 * distance (e.g. exact distances to a mesh near it), every other voxel gets the fast-sweeping
 * solution from them; every voxel keeps its sign. Errors as nw_sdf_reinit, and none known. */
gboolean nw_sdf_extend(NwVolume *phi, const guint8 *known, const char *name, GError **error);

/* The signed distance of a mask (inside where value >= 0.5), on its grid: the surface lies
 * half-way between inside and outside voxel centres (phi0 = 0.5 - mask, then
 * nw_sdf_reinit). Errors name `name`: an empty mask, a mask that fills the whole grid. */
NwVolume *nw_sdf_from_mask(const NwVolume *mask, const char *name, GError **error);

G_END_DECLS

#endif
