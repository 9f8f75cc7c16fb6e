/* field_affine.h — a displacement field found on the fixed grid after the moving image was
 * resampled there through an affine map of world space, turned into maps to the ORIGINAL
 * moving image: the composed forward field, the composed inverse on the moving grid, and
 * the original moving image (or labels) sampled through the composition. What
 * `neurowarp-cli demons` writes for pairs on different grids or with an initial transform
 * (docs/FIELDS.md, "Pairs on different grids").
 *
 * Notation: F, G the voxel-to-world (RAS mm) matrices of the fixed and the moving grid,
 * T the affine fixed world -> moving world (affine_transform.h), u a field on the fixed grid
 * in fixed voxel units (field.h) between the fixed image and the resampled moving image
 * M'(p) = M(G^-1 T F p), so the registration maps fixed voxel p to M at
 *   G^-1 T F (p + u(p)).
 * dim 2 (one-slice images): k is left at 0 as nw_affine_voxel_map does.
 * CPU, OpenMP over voxels. Any thread. Outputs first. */
#ifndef NW_FIELD_AFFINE_H
#define NW_FIELD_AFFINE_H

#include <glib.h>

#include "sampler.h"
#include "volume.h"

G_BEGIN_DECLS

/* out(p) = F^-1 T F (p + u(p)) - p: on u's grid (the fixed one), fixed voxel units, so that
 * in world d(x) = T(x + U(x)) - x with x = F p and U = R u. out may be u. */
void nw_field_compose_affine(NwVolume *out, const NwVolume *u, const double t_ras[16], int dim);

/* The inverse of the composed map on the moving grid (moving's dims and affine, nc = 3,
 * moving voxel units): for moving voxel m, q = F^-1 T^-1 G m, then
 *   out(m) = G^-1 F (q + w(q)) - m
 * with w the inverse field on the fixed grid (e.g. exp(-v)), clamped to its border outside.
 * Errors: a singular T (NW_ERROR_INVALID). */
NwVolume *nw_field_inverse_affine_on(const NwVolume *w, const NwVolume *moving,
                                     const double t_ras[16], int dim, GError **error);

/* out(p) = in(G^-1 T F (p + u(p))) on u's grid; background outside in's domain. in is on
 * the moving grid (G), u as above. One component. */
NwVolume *nw_field_warp_affine(const NwVolume *in, const NwVolume *u, const double t_ras[16],
                               int dim, NwSampler sampler, float background, GError **error);

G_END_DECLS

#endif
