/* nlm_band_cpu.c — the narrow band of nlm-surface and what is read from it: band extraction,
 * world positions and the patch matrix (nlm_kernels.h). CPU reference; any thread; OpenMP
 * over band elements. */
#include "nlm_kernels.h"

#include <math.h>

/* Sequential on purpose: the band's order (increasing voxel index) is part of the contract
 * (ties in the top-m selection are broken by band index), and one pass over the grid is
 * negligible beside the O(N^2 P) distances. */
int nw_nlm_band_cpu(guint32 *band, const NwVolume *phi, float band_mm)
{
  const size_t nv = nw_volume_n_voxels(phi);
  int n = 0;
  for (size_t e = 0; e < nv; e++)
    if (fabsf(phi->data[e]) <= band_mm)
      band[n++] = (guint32)e;
  return n;
}

static void voxel_of(const NwVolume *v, guint32 e, int c[3])
{
  c[0] = (int)(e % (guint32)v->nx);
  c[1] = (int)(e / (guint32)v->nx % (guint32)v->ny);
  c[2] = (int)(e / ((guint32)v->nx * (guint32)v->ny));
}

void nw_nlm_positions_cpu(float *pos_mm, const NwVolume *phi, const guint32 *band, int n)
{
#pragma omp parallel for schedule(static)
  for (int j = 0; j < n; j++) {
    int c[3];
    voxel_of(phi, band[j], c);
    double ijk[3] = {c[0], c[1], c[2]}, ras[3];
    nw_volume_voxel_to_world(phi, ijk, ras);
    for (int a = 0; a < 3; a++)
      pos_mm[(size_t)j * 3 + a] = (float)ras[a];
  }
}

static int clampi(int x, int hi)
{
  return x < 0 ? 0 : x > hi ? hi : x;
}

void nw_nlm_patches_cpu(float *patches, const NwVolume *phi, const guint32 *band, int n, int patch)
{
  const int r = patch / 2;
  const size_t p = (size_t)patch * patch * patch;
#pragma omp parallel for schedule(static)
  for (int j = 0; j < n; j++) {
    int c[3];
    voxel_of(phi, band[j], c);
    float *row = patches + (size_t)j * p;
    size_t q = 0;
    for (int dz = -r; dz <= r; dz++)
      for (int dy = -r; dy <= r; dy++)
        for (int dx = -r; dx <= r; dx++)
          row[q++] = phi->data[nw_volume_index(phi, clampi(c[0] + dx, phi->nx - 1),
                                               clampi(c[1] + dy, phi->ny - 1),
                                               clampi(c[2] + dz, phi->nz - 1))];
  }
}
