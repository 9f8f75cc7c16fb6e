/* mesh_sdf.h — a closed triangle mesh turned into a signed distance (mm, negative inside:
 * sdf_reinit.h) on a voxel grid the caller picks: another image's grid, or an axis-aligned
 * RAS grid around the mesh at a given spacing. CPU; any thread; plain loops.
 *
 * Inside: parity of the crossings of a ray along the grid's i axis through each row of voxel
 * centres (the ray is nudged by ~1e-5 voxel in j and k so that it never runs exactly through
 * an edge or a vertex, which marching-cubes meshes of the same grid would otherwise do).
 * Distance: exact point-to-triangle distance for every voxel within two voxels of some
 * triangle (each triangle visits the voxels of its bounding box grown by that much:
 * O(T x ~125) distance evaluations for triangles of about a voxel, well under a second for
 * 10^5 triangles), then fast sweeping (nw_sdf_extend) for the rest of the grid. */
#ifndef NW_MESH_SDF_H
#define NW_MESH_SDF_H

#include <glib.h>

#include "surface.h"
#include "volume.h"

G_BEGIN_DECLS

/* An empty axis-aligned RAS grid (identity directions) with spacing_mm voxels that covers
 * the mesh's bounds grown by margin_mm on every side. Errors: spacing not positive, a grid
 * too large (more than NW_MAX_VOXELS, or above 512 voxels along an axis). */
NwVolume *nw_mesh_grid(const NwSurface *s, double spacing_mm, double margin_mm, GError **error);

/* The signed distance of s on grid's geometry (dims and affine; its voxels are not read).
 * The mesh must be closed (every edge shared by exactly two triangles, nw_mesh_check_manifold)
 * so that inside means something; errors name `name`: not closed, not a manifold, no voxel
 * inside or every voxel inside (the mesh misses the grid). */
NwVolume *nw_mesh_to_sdf(const NwSurface *s, const NwVolume *grid, const char *name,
                         GError **error);

/* The distance from point p to triangle (a, b, c), all in the same space (Ericson, Real-Time
 * Collision Detection, 5.1.5). */
double nw_point_triangle_distance(const double p[3], const double a[3], const double b[3],
                                  const double c[3]);

G_END_DECLS

#endif
