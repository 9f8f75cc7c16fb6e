/* view_geometry.h — where a view looks: the slice planes of the 2D views and the orbit
 * camera of the 3D view, as world (RAS mm) <-> pixel and world -> clip mappings.
 * Pure math, any thread.
 *
 * Screen conventions (neurological: the patient's right on the screen's right):
 *   axial    screen right = +x (R), up = +y (A), normal z (S)
 *   coronal  screen right = +x (R), up = +z (S), normal y (A)
 *   sagittal screen right = +y (A), up = +z (S), normal x (R)
 * A mirrored geometry (mirror_u) has screen right = -u instead: the radiological convention
 * (the patient's right on the screen's left, as seen from the feet or the front) for the
 * axial and coronal planes.
 * Pixels count from the top-left corner of the viewport; pixel (i, j) has its centre at
 * (i + 0.5, j + 0.5). One pixel spans the same millimetres along both screen axes, so the
 * picture keeps the aspect of the voxel spacing. */
#ifndef NW_VIEW_GEOMETRY_H
#define NW_VIEW_GEOMETRY_H

#include <glib.h>

#include "volume.h"

G_BEGIN_DECLS

typedef enum { NW_PLANE_AXIAL, NW_PLANE_CORONAL, NW_PLANE_SAGITTAL } NwPlane;

/* World axes (0 = x/R, 1 = y/A, 2 = z/S) along screen right, screen up and the normal. */
void nw_plane_axes(NwPlane plane, int *u_axis, int *v_axis, int *n_axis);
/* Orientation letters at the left, right, top and bottom edges, e.g. "L" "R" "A" "P". */
void nw_plane_letters(NwPlane plane, const char *letters[4]);
const char *nw_plane_name(NwPlane plane); /* "axial", "coronal", "sagittal" */

typedef struct {
  NwPlane plane;
  double center_ras[3]; /* world point at the viewport centre; [n_axis] is the slice depth */
  double mm_per_pixel;  /* zoom */
  int width, height;    /* viewport in pixels */
  gboolean mirror_u;    /* screen right = -u (radiological axial and coronal views) */
} NwSliceGeometry;

/* The letters at the left, right, top and bottom edges of g's view (mirror_u swaps left and
 * right). */
void nw_slice_geometry_letters(const NwSliceGeometry *g, const char *letters[4]);
/* +1, or -1 when mirrored: world u per screen-right millimetre. */
double nw_slice_geometry_u_sign(const NwSliceGeometry *g);

/* world RAS mm -> clip coordinates (row-major, for nw_gl_set_mat4). */
void nw_slice_geometry_mvp(const NwSliceGeometry *g, double mvp[16]);
void nw_slice_geometry_pixel_to_world(const NwSliceGeometry *g, double px, double py,
                                      double ras[3]);
void nw_slice_geometry_world_to_pixel(const NwSliceGeometry *g, const double ras[3], double *px,
                                      double *py);
/* The visible rectangle on the slice plane: 4 corners (x, y, z) as a triangle strip. */
void nw_slice_geometry_quad(const NwSliceGeometry *g, float quad[12]);
/* Zoom so that the box [lo, hi] (RAS mm) fills the viewport with a 4 % margin. */
void nw_slice_geometry_fit(NwSliceGeometry *g, const double lo[3], const double hi[3]);

/* Axis-aligned world bounds of a volume's voxels (voxel edges, i.e. -0.5 .. n - 0.5). */
void nw_volume_world_bounds(const NwVolume *v, double lo[3], double hi[3]);

/* The 3D view: a perspective camera orbiting target, S always up. yaw turns about the S
 * axis, pitch raises the eye towards S. */
typedef struct {
  double target[3];   /* RAS mm */
  double distance_mm; /* eye to target */
  double yaw_deg, pitch_deg;
  int width, height;
} NwOrbitCamera;

/* Eye position: target + distance * (cos p sin y, -cos p cos y, sin p): yaw 0, pitch 0
 * looks from posterior (-y) towards anterior; yaw 90 from the right (+x). */
void nw_orbit_camera_eye(const NwOrbitCamera *c, double eye[3]);
/* view (world -> eye) and mvp (world -> clip) matrices, row-major. */
void nw_orbit_camera_matrices(const NwOrbitCamera *c, double view[16], double mvp[16]);
/* Place the target at the box centre and back off so that the box fits. */
void nw_orbit_camera_fit(NwOrbitCamera *c, const double lo[3], const double hi[3]);

G_END_DECLS

#endif
