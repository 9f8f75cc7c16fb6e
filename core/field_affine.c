/* field_affine.c — see field_affine.h. */
#include "field_affine.h"

#include "affine_resample.h"
#include "field.h"
#include "nw_error.h"
#include "ras_affine.h"

/* map · (x, y, z, 1), map the 3x4 voxel map of nw_affine_voxel_map. */
static void map_apply(const double map[12], const double p[3], double out[3])
{
  for (int r = 0; r < 3; r++)
    out[r] = map[4 * r] * p[0] + map[4 * r + 1] * p[1] + map[4 * r + 2] * p[2] + map[4 * r + 3];
}

/* Voxel (i, j, k) of element e of a grid nx x ny. */
static void voxel_of(gint64 e, int nx, int ny, double p[3])
{
  p[0] = (double)(e % nx);
  p[1] = (double)((e / nx) % ny);
  p[2] = (double)(e / nx / ny);
}

void nw_field_compose_affine(NwVolume *out, const NwVolume *u, const double t_ras[16], int dim)
{
  double map[12];
  if (!nw_affine_voxel_map(u, u, t_ras, dim, map))
    g_return_if_reached(); /* u's own affine was inverted to build it */
  const gint64 n = (gint64)nw_volume_n_voxels(u);
#pragma omp parallel for schedule(static)
  for (gint64 e = 0; e < n; e++) {
    double p[3], q[3], y[3];
    voxel_of(e, u->nx, u->ny, p);
    for (int c = 0; c < 3; c++)
      q[c] = p[c] + u->data[3 * e + c];
    map_apply(map, q, y);
    for (int c = 0; c < 3; c++)
      out->data[3 * e + c] = (float)(y[c] - p[c]);
  }
}

NwVolume *nw_field_inverse_affine_on(const NwVolume *w, const NwVolume *moving,
                                     const double t_ras[16], int dim, GError **error)
{
  double t_inv[16], id[16], to_fixed[12], to_moving[12];
  nw_affine_identity(id);
  if (!nw_affine_inverse(t_ras, t_inv) || !nw_affine_voxel_map(moving, w, t_inv, dim, to_fixed) ||
      !nw_affine_voxel_map(w, moving, id, dim, to_moving)) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "the initial transform or a voxel-to-world affine is singular");
    return NULL;
  }
  NwVolume *out = nw_volume_new_like(moving, 3, error);
  if (out == NULL)
    return NULL;
  const gint64 n = (gint64)nw_volume_n_voxels(out);
#pragma omp parallel for schedule(static)
  for (gint64 e = 0; e < n; e++) {
    double m[3], q[3], z[3];
    float wq[3];
    voxel_of(e, out->nx, out->ny, m);
    map_apply(to_fixed, m, q);
    nw_field_sample(w, q[0], q[1], q[2], wq);
    for (int c = 0; c < 3; c++)
      q[c] += wq[c];
    map_apply(to_moving, q, z);
    for (int c = 0; c < 3; c++)
      out->data[3 * e + c] = (float)(z[c] - m[c]);
  }
  return out;
}

NwVolume *nw_field_warp_affine(const NwVolume *in, const NwVolume *u, const double t_ras[16],
                               int dim, NwSampler sampler, float background, GError **error)
{
  double map[12];
  if (!nw_affine_voxel_map(u, in, t_ras, dim, map)) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "the moving image's voxel-to-world affine is singular");
    return NULL;
  }
  NwVolume *out = nw_volume_new_like(u, 1, error);
  if (out == NULL)
    return NULL;
  const gint64 n = (gint64)nw_volume_n_voxels(out);
#pragma omp parallel for schedule(static)
  for (gint64 e = 0; e < n; e++) {
    double p[3], x[3];
    voxel_of(e, u->nx, u->ny, p);
    for (int c = 0; c < 3; c++)
      p[c] += u->data[3 * e + c];
    map_apply(map, p, x);
    float v = background;
    nw_sampler_sample(in, sampler, x[0], x[1], x[2], &v);
    out->data[e] = v;
  }
  return out;
}
