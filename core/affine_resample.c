/* affine_resample.c — see affine_resample.h. */
#include "affine_resample.h"

#include "ras_affine.h"
#include "nw_error.h"

gboolean nw_affine_voxel_map(const NwVolume *from, const NwVolume *to, const double t_ras[16],
                             int dim, double map[12])
{
  double to_inv[16], m[16];
  if (!nw_affine_inverse(to->vox_to_ras, to_inv))
    return FALSE;
  nw_affine_mul(t_ras, from->vox_to_ras, m);
  nw_affine_mul(to_inv, m, m);
  for (int e = 0; e < 12; e++)
    map[e] = dim == 2 && e >= 8 ? 0.0 : m[e];
  return TRUE;
}

NwVolume *nw_affine_resample(const NwVolume *in, const NwVolume *grid, const double t_ras[16],
                             int dim, NwSampler sampler, float background, GError **error)
{
  double map[12];
  if (!nw_affine_voxel_map(grid, in, t_ras, dim, map)) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "resample: the image's voxel-to-world affine is singular");
    return NULL;
  }
  NwVolume *out = nw_volume_new_like(grid, 1, error);
  if (out == NULL)
    return NULL;
  const int nx = out->nx, ny = out->ny;
  const gint64 n = (gint64)nw_volume_n_voxels(out);
#pragma omp parallel for schedule(static)
  for (gint64 e = 0; e < n; e++) {
    const double i = (double)(e % nx), j = (double)((e / nx) % ny), k = (double)(e / nx / ny);
    const double x = map[0] * i + map[1] * j + map[2] * k + map[3];
    const double y = map[4] * i + map[5] * j + map[6] * k + map[7];
    const double z = map[8] * i + map[9] * j + map[10] * k + map[11];
    float v = background;
    nw_sampler_sample(in, sampler, x, y, z, &v);
    out->data[e] = v;
  }
  return out;
}
