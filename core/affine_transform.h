/* affine_transform.h — the transform model of affine registration: 2D and 3D rigid,
 * similarity and affine maps of world space, parametrised about a centre (the fixed image's
 * centre), as the optimiser varies them and as reports and transform files show them.
 *
 * Direction: a transform maps a point of the FIXED image's world (RAS mm) to the point of
 * the MOVING image's world that corresponds to it (ITK's convention), so the warped image is
 * W(x) = M(T(x)) on the fixed grid.
 *
 *   T(x) = A (x - c) + c + t,   A = R · K · S
 *   R = Rz(rz) · Ry(ry) · Rx(rx)  (right-handed rotations about the world axes, radians;
 *                                  x is rotated about x first)
 *   K = [[1, kxy, kxz], [0, 1, kyz], [0, 0, 1]]  (shears)
 *   S = diag(sx, sy, sz)                        (scales)
 * Every A with det A > 0 has exactly one such factorisation (QR of A: R orthogonal, K·S upper
 * triangular with a positive diagonal), so any matrix read from a file can be reported and
 * refined in these terms.
 *
 * 2D (images with one slice): rotation about the world z axis only (rz), translation in x and
 * y, scales sx, sy and the shear kxy; z is left alone. The free parameters of each kind, in
 * the order of the optimiser's vector:
 *   3D rigid       tx ty tz rx ry rz                      6
 *   3D similarity  tx ty tz rx ry rz s                    7   (s sets sx = sy = sz)
 *   3D affine      tx ty tz rx ry rz sx sy sz kxy kxz kyz  12
 *   2D rigid       tx ty rz                               3
 *   2D similarity  tx ty rz s                             4   (s sets sx = sy)
 *   2D affine      tx ty rz sx sy kxy                     6
 * Members outside a kind's free set keep their values (e.g. the scales of an affine initial
 * transform stay while a rigid registration refines rotation and translation).
 * Any thread; plain data. */
#ifndef NW_AFFINE_TRANSFORM_H
#define NW_AFFINE_TRANSFORM_H

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
  NW_XFORM_RIGID,
  NW_XFORM_SIMILARITY,
  NW_XFORM_AFFINE,
} NwTransformKind;

#define NW_XFORM_MAX_PARAMS 12

const char *nw_transform_kind_name(NwTransformKind k); /* "rigid", "similarity", "affine" */

typedef struct {
  int dim; /* 2 or 3 */
  NwTransformKind kind;
  double centre_mm[3];      /* c, RAS mm (the fixed image's centre) */
  double translation_mm[3]; /* t, RAS mm */
  double rotation_rad[3];   /* rx, ry, rz */
  double scale[3];          /* sx, sy, sz */
  double shear[3];          /* kxy, kxz, kyz */
} NwTransform;

/* The identity of a kind about centre. */
void nw_transform_init(NwTransform *t, int dim, NwTransformKind kind, const double centre_mm[3]);
/* Number of free parameters (table above). */
int nw_transform_n_params(int dim, NwTransformKind kind);
/* Name of free parameter i ("tx", "rz", "s", "kxy", ...): static string. */
const char *nw_transform_param_name(int dim, NwTransformKind kind, int i);
/* Free parameters <-> members, angles in radians. */
void nw_transform_get_params(const NwTransform *t, double *p);
void nw_transform_set_params(NwTransform *t, const double *p);
/* How far a point at radius_mm from the centre moves per unit of each free parameter
 * (1 for translations, radius_mm for angles, scales and shears): dividing by it puts every
 * parameter in millimetres, so that one simplex size and one tolerance fit them all. */
void nw_transform_param_mm(const NwTransform *t, double radius_mm, double *mm_per_unit);

/* The 4x4 RAS map fixed world -> moving world, row-major. */
void nw_transform_matrix(const NwTransform *t, double m[16]);
/* The members of a kind and centre that give matrix m (QR factorisation, angles from R).
 * 2D: m must leave z alone (third row and column those of the identity, within 1e-6).
 * Errors (NW_ERROR_INVALID): a reflection or a singular matrix ("determinant D: ..."),
 * a 3D matrix for a 2D transform. kind only labels the result: nothing is projected. */
gboolean nw_transform_from_matrix(NwTransform *t, int dim, NwTransformKind kind,
                                  const double centre_mm[3], const double m[16], GError **error);

G_END_DECLS

#endif
