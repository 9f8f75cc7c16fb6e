/* view_geometry.c — slice plane and orbit camera mappings (see view_geometry.h). Pure math,
 * any thread. */
#include "view_geometry.h"

#include <math.h>
#include <string.h>

#include "nw_mat4.h"

void nw_plane_axes(NwPlane plane, int *u_axis, int *v_axis, int *n_axis)
{
  static const int axes[3][3] = {{0, 1, 2}, {0, 2, 1}, {1, 2, 0}};
  *u_axis = axes[plane][0];
  *v_axis = axes[plane][1];
  *n_axis = axes[plane][2];
}

void nw_plane_letters(NwPlane plane, const char *letters[4])
{
  static const char *const l[3][4] = {
      {"L", "R", "A", "P"}, {"L", "R", "S", "I"}, {"P", "A", "S", "I"}};
  for (int i = 0; i < 4; i++)
    letters[i] = l[plane][i];
}

const char *nw_plane_name(NwPlane plane)
{
  static const char *const n[3] = {"axial", "coronal", "sagittal"};
  return n[plane];
}

void nw_slice_geometry_letters(const NwSliceGeometry *g, const char *letters[4])
{
  nw_plane_letters(g->plane, letters);
  if (g->mirror_u) {
    const char *left = letters[0];
    letters[0] = letters[1];
    letters[1] = left;
  }
}

double nw_slice_geometry_u_sign(const NwSliceGeometry *g)
{
  return g->mirror_u ? -1.0 : 1.0;
}

void nw_slice_geometry_mvp(const NwSliceGeometry *g, double mvp[16])
{
  int u, v, n;
  nw_plane_axes(g->plane, &u, &v, &n);
  double sx = nw_slice_geometry_u_sign(g) * 2.0 / (g->mm_per_pixel * g->width),
         sy = 2.0 / (g->mm_per_pixel * g->height);
  memset(mvp, 0, 16 * sizeof(double));
  mvp[0 * 4 + u] = sx;
  mvp[0 * 4 + 3] = -sx * g->center_ras[u];
  mvp[1 * 4 + v] = sy;
  mvp[1 * 4 + 3] = -sy * g->center_ras[v];
  /* clip z stays 0: 2D views draw in order, without depth. */
  mvp[15] = 1.0;
}

void nw_slice_geometry_pixel_to_world(const NwSliceGeometry *g, double px, double py, double ras[3])
{
  int u, v, n;
  nw_plane_axes(g->plane, &u, &v, &n);
  ras[n] = g->center_ras[n];
  ras[u] = g->center_ras[u] + nw_slice_geometry_u_sign(g) * (px - 0.5 * g->width) * g->mm_per_pixel;
  ras[v] = g->center_ras[v] - (py - 0.5 * g->height) * g->mm_per_pixel;
}

void nw_slice_geometry_world_to_pixel(const NwSliceGeometry *g, const double ras[3], double *px,
                                      double *py)
{
  int u, v, n;
  nw_plane_axes(g->plane, &u, &v, &n);
  *px =
      0.5 * g->width + nw_slice_geometry_u_sign(g) * (ras[u] - g->center_ras[u]) / g->mm_per_pixel;
  *py = 0.5 * g->height - (ras[v] - g->center_ras[v]) / g->mm_per_pixel;
}

void nw_slice_geometry_quad(const NwSliceGeometry *g, float quad[12])
{
  static const double corners[4][2] = {{0, 1}, {1, 1}, {0, 0}, {1, 0}}; /* strip order */
  for (int c = 0; c < 4; c++) {
    double ras[3];
    nw_slice_geometry_pixel_to_world(g, corners[c][0] * g->width, corners[c][1] * g->height, ras);
    for (int a = 0; a < 3; a++)
      quad[c * 3 + a] = (float)ras[a];
  }
}

void nw_slice_geometry_fit(NwSliceGeometry *g, const double lo[3], const double hi[3])
{
  int u, v, n;
  nw_plane_axes(g->plane, &u, &v, &n);
  double w = MAX(g->width, 1), h = MAX(g->height, 1);
  double mm = MAX((hi[u] - lo[u]) / w, (hi[v] - lo[v]) / h) * 1.04;
  g->mm_per_pixel = mm > 0.0 ? mm : 1.0;
  g->center_ras[u] = 0.5 * (lo[u] + hi[u]);
  g->center_ras[v] = 0.5 * (lo[v] + hi[v]);
}

void nw_volume_world_bounds(const NwVolume *v, double lo[3], double hi[3])
{
  for (int a = 0; a < 3; a++) {
    lo[a] = G_MAXDOUBLE;
    hi[a] = -G_MAXDOUBLE;
  }
  for (int c = 0; c < 8; c++) {
    double ijk[3] = {(c & 1) ? v->nx - 0.5 : -0.5, (c & 2) ? v->ny - 0.5 : -0.5,
                     (c & 4) ? v->nz - 0.5 : -0.5};
    double ras[3];
    nw_mat4_apply_point(v->vox_to_ras, ijk, ras);
    for (int a = 0; a < 3; a++) {
      lo[a] = MIN(lo[a], ras[a]);
      hi[a] = MAX(hi[a], ras[a]);
    }
  }
}

void nw_orbit_camera_eye(const NwOrbitCamera *c, double eye[3])
{
  double y = c->yaw_deg * G_PI / 180.0, p = c->pitch_deg * G_PI / 180.0;
  eye[0] = c->target[0] + c->distance_mm * cos(p) * sin(y);
  eye[1] = c->target[1] - c->distance_mm * cos(p) * cos(y);
  eye[2] = c->target[2] + c->distance_mm * sin(p);
}

void nw_orbit_camera_matrices(const NwOrbitCamera *c, double view[16], double mvp[16])
{
  double eye[3], proj[16];
  static const double up[3] = {0, 0, 1};
  nw_orbit_camera_eye(c, eye);
  nw_mat4_look_at(view, eye, c->target, up);
  double aspect = (double)MAX(c->width, 1) / MAX(c->height, 1);
  nw_mat4_perspective(proj, 30.0, aspect, MAX(c->distance_mm * 0.05, 0.1),
                      c->distance_mm * 4.0 + 10.0);
  nw_mat4_mul(mvp, proj, view);
}

void nw_orbit_camera_fit(NwOrbitCamera *c, const double lo[3], const double hi[3])
{
  double r = 0.0;
  for (int a = 0; a < 3; a++) {
    c->target[a] = 0.5 * (lo[a] + hi[a]);
    r += 0.25 * (hi[a] - lo[a]) * (hi[a] - lo[a]);
  }
  r = sqrt(r);
  double aspect = (double)MAX(c->width, 1) / MAX(c->height, 1);
  double half_fov = 15.0 * G_PI / 180.0;
  if (aspect < 1.0)
    half_fov = atan(tan(half_fov) * aspect);
  c->distance_mm = MAX(r, 1.0) / sin(half_fov) * 1.02;
}
