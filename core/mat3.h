/* mat3.h — the 3x3 matrix arithmetic of the affines' linear parts (voxel <-> world), written
 * once: the inverse (field conversions between voxel and mm units, core/io_nifti_field.c) and the
 * inverse-transpose that maps voxel-space gradients to world normals (marching cubes). Row-major
 * m[r * 3 + c]. Any thread. */
#ifndef NW_MAT3_H
#define NW_MAT3_H

#include <glib.h>

G_BEGIN_DECLS

/* The determinant (the cofactor expansion along the first row). */
double nw_mat3_det(const double m[9]);
/* inv = m^-1 by cofactors over the determinant, which it returns; inv is all zeros when the
 * determinant is 0 (callers decide what is too close to singular for them). */
double nw_mat3_inverse(const double m[9], double inv[9]);
/* The 3x3 linear part of a row-major 4x4 affine. */
void nw_mat3_from_affine(const double affine[16], double m[9]);

G_END_DECLS

#endif
