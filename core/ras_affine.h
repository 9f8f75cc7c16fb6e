/* ras_affine.h — row-major 4x4 affine matrices (m[r * 4 + c], last row 0 0 0 1): products,
 * inverses and point maps of the world (RAS mm) and voxel transforms that affine
 * registration, resampling and transform files compose. Any thread; no state.
 * (render/nw_mat4.h has camera matrices for the views; core cannot use render/.) */
#ifndef NW_RAS_AFFINE_H
#define NW_RAS_AFFINE_H

#include <glib.h>

G_BEGIN_DECLS

void nw_affine_identity(double m[16]);
/* out = a * b (out may alias a or b). */
void nw_affine_mul(const double a[16], const double b[16], double out[16]);
/* inv = m^-1 for an affine m (linear part by nw_mat3_inverse); FALSE, and inv untouched,
 * when |det| of the linear part is below 1e-12. */
gboolean nw_affine_inverse(const double m[16], double inv[16]);
/* out = m * (p, 1) (out may alias p). */
void nw_affine_apply(const double m[16], const double p[3], double out[3]);
/* diag(-1, -1, 1, 1): RAS <-> LPS (ITK's physical space), its own inverse. */
void nw_affine_ras_lps(double m[16]);

G_END_DECLS

#endif
