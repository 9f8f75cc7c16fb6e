/* nw_mat4.h — 4x4 matrix helpers for the renderers' cameras and world <-> texture mappings.
 * Row-major doubles like NwVolume.vox_to_ras: element (r, c) is m[r * 4 + c], points are
 * column vectors (p' = M p). Pure math, any thread. */
#ifndef NW_MAT4_H
#define NW_MAT4_H

#include <glib.h>

G_BEGIN_DECLS

void nw_mat4_identity(double m[16]);
/* out = a * b; out may alias a or b. */
void nw_mat4_mul(double out[16], const double a[16], const double b[16]);
/* General inverse; FALSE (out untouched) when singular. */
gboolean nw_mat4_invert(double out[16], const double m[16]);
/* p' = M (p, 1), with the perspective divide when w != 1. */
void nw_mat4_apply_point(const double m[16], const double p[3], double out[3]);
/* Linear part only (directions). */
void nw_mat4_apply_dir(const double m[16], const double d[3], double out[3]);
/* OpenGL-style perspective (fovy in degrees) and look-at, as row-major matrices. */
void nw_mat4_perspective(double m[16], double fovy_deg, double aspect, double znear, double zfar);
void nw_mat4_look_at(double m[16], const double eye[3], const double center[3], const double up[3]);

G_END_DECLS

#endif
