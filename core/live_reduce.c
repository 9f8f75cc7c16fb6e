/* live_reduce.c — block-mean reduction of live frames (see live_reduce.h). Any thread. */
#include "live_reduce.h"

#include <string.h>

int nw_live_reduce_choose(int nx, int ny, int nz, size_t max_voxels)
{
  const int longest = MAX(nx, MAX(ny, nz));
  int r = 1;
  for (; r < longest; r++) {
    const int n[3] = {nx, ny, nz};
    size_t voxels = 1;
    for (int a = 0; a < 3; a++)
      voxels *= (size_t)(n[a] >= r ? n[a] / r : n[a]);
    if (voxels <= max_voxels)
      break;
  }
  return r;
}

void nw_live_reduce_grid(int nx, int ny, int nz, const double vox_to_ras[16], int r, int f[3],
                         int dims[3], double reduced_vox_to_ras[16])
{
  const int n[3] = {nx, ny, nz};
  for (int a = 0; a < 3; a++) {
    f[a] = n[a] >= r ? r : 1;
    dims[a] = n[a] / f[a];
  }
  /* fine index = f * reduced index + (f - 1) / 2, per axis: scale the columns, shift */
  memcpy(reduced_vox_to_ras, vox_to_ras, 16 * sizeof(double));
  for (int row = 0; row < 3; row++) {
    double shift = 0.0;
    for (int a = 0; a < 3; a++) {
      reduced_vox_to_ras[row * 4 + a] = vox_to_ras[row * 4 + a] * f[a];
      shift += vox_to_ras[row * 4 + a] * 0.5 * (f[a] - 1);
    }
    reduced_vox_to_ras[row * 4 + 3] = vox_to_ras[row * 4 + 3] + shift;
  }
}

NwVolume *nw_live_reduce(const NwVolume *v, int r, gboolean voxel_field, GError **error)
{
  int f[3], d[3];
  double affine[16];
  nw_live_reduce_grid(v->nx, v->ny, v->nz, v->vox_to_ras, MAX(r, 1), f, d, affine);
  NwVolume *out = nw_volume_new(d[0], d[1], d[2], v->nc, error);
  if (out == NULL)
    return NULL;
  nw_volume_set_affine(out, affine);
  const float count = (float)(f[0] * f[1] * f[2]);
  for (int k = 0; k < d[2]; k++)
    for (int j = 0; j < d[1]; j++)
      for (int i = 0; i < d[0]; i++)
        for (int c = 0; c < v->nc; c++) {
          /* float sums in z, y, x order: the GPU kernel adds in the same order */
          float sum = 0.0f;
          for (int dz = 0; dz < f[2]; dz++)
            for (int dy = 0; dy < f[1]; dy++)
              for (int dx = 0; dx < f[0]; dx++)
                sum += v->data[nw_volume_index(v, f[0] * i + dx, f[1] * j + dy, f[2] * k + dz) *
                                   v->nc + c];
          float mean = sum / count;
          if (voxel_field && c < 3)
            mean /= (float)f[c];
          out->data[nw_volume_index(out, i, j, k) * out->nc + c] = mean;
        }
  return out;
}
