/* marching_cubes.h — CPU reference marching cubes: the iso-surface of a scalar volume as an
 * NwSurface in world RAS mm. The CUDA version (which writes into a GL vertex buffer) is
 * tested against this one, so the output order and the case table are part of the contract.
 * Any thread; plain loops.
 *
 * Conventions:
 *   - Inside is value >= iso (NaN is outside). Triangles are counter-clockwise seen from
 *     outside and normals point outward, i.e. towards lower values.
 *   - Cubes span voxel centres: the cube at voxel (i, j, k) has corner c at voxel
 *     (i + (c & 1), j + (c >> 1 & 1), k + (c >> 2 & 1)); its case index is the sum of 1 << c
 *     over the corners that are inside.
 *   - Cube edge e (0..11) runs along axis e / 4 from corner nw_mc_edge_corner(e) (whose bit
 *     for that axis is 0) to the corner with that bit set.
 *   - Vertices sit on crossed grid edges, one per edge, shared by every cube that uses it.
 *     A grid edge is named by (voxel index of its lower end) * 3 + axis, and vertices are
 *     numbered in increasing edge name. Triangles come in increasing cube index
 *     ((k * ny + j) * nx + i), and within a cube in case-table order.
 *   - Vertex positions interpolate linearly along the edge in voxel space, then go through
 *     vox_to_ras. Normals are the negated volume gradient (central differences, one-sided at
 *     the border), interpolated the same way and mapped to world by the inverse-transpose
 *     of the affine; where the gradient vanishes, the area-weighted face normal is used.
 *     With a mirroring affine (negative determinant) the winding is flipped so that it stays
 *     counter-clockwise from outside in world space.
 *   - The case table is generated, not typed in: on each cube face the iso-line pieces
 *     separate the inside corners (the same decision from both cubes sharing the face), and
 *     the pieces chain into loops that are fanned into triangles. The result is watertight
 *     wherever the region stays away from the grid border (there the surface is open). */
#ifndef NW_MARCHING_CUBES_H
#define NW_MARCHING_CUBES_H

#include <glib.h>

#include "surface.h"
#include "volume.h"

G_BEGIN_DECLS

/* Most triangles one cube can produce with the generated table. */
#define NW_MC_MAX_TRIANGLES 5
/* Row length of the triangle table: 3 edge indices per triangle, then a -1 terminator. */
#define NW_MC_TABLE_STRIDE (3 * NW_MC_MAX_TRIANGLES + 1)

/* The triangle table, 256 rows of NW_MC_TABLE_STRIDE edge indices, -1 terminated. Built
 * once (thread-safe); never freed. */
const gint8 *nw_mc_triangle_table(void);
/* Cube edge e (0..11): the corner it starts from and the axis (0 = i, 1 = j, 2 = k). */
void nw_mc_edge(int e, int *corner, int *axis);

/* inv_t = (A^-1)^T of the affine's 3x3 A, which maps voxel-space gradients to world normals
 * (row-major, 0 when A is singular); returns det(A) (negative: mirroring, winding flips). */
double nw_mc_normal_matrix(const double vox_to_ras[16], double inv_t[9]);

/* Iso-surface of v (nc must be 1) at iso. An empty surface (0 vertices, 0 triangles) when
 * nothing crosses. Errors: nc != 1, a non-finite iso value, or a mesh too large. */
NwSurface *nw_marching_cubes(const NwVolume *v, float iso, GError **error);

G_END_DECLS

#endif
