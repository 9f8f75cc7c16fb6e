/* dmi_pyramid.c — see dmi_pyramid.h. */
#include "dmi_pyramid.h"

#include <string.h>

#include "resample.h"

static gboolean read_level(NwDmiPyramid *p, int l, const int lo[3], const int hi[3], float *out,
                           GError **error);

static gboolean level_read(gpointer data, const int lo[3], const int hi[3], float *out,
                           GError **error)
{
  NwDmiPyramidLevel *at = data;
  return read_level(at->p, at->level, lo, hi, out, error);
}

void nw_dmi_pyramid_init(NwDmiPyramid *p, const NwDmiSource *finest, int n_levels)
{
  g_return_if_fail(n_levels >= 1 && n_levels <= NW_DMI_MAX_LEVELS);
  memset(p, 0, sizeof *p);
  p->finest = *finest;
  p->n_levels = n_levels;
  memcpy(p->n[n_levels - 1], finest->n, sizeof p->n[0]);
  for (int l = n_levels - 2; l >= 0; l--)
    for (int a = 0; a < 3; a++) /* nw_downsample2's sizes */
      p->n[l][a] = p->n[l + 1][a] > 1 ? (p->n[l + 1][a] + 1) / 2 : 1;
  for (int l = 0; l < n_levels; l++) {
    p->at[l].p = p;
    p->at[l].level = l;
  }
}

NwDmiSource nw_dmi_pyramid_source(NwDmiPyramid *p, int l)
{
  NwDmiSource s = {{p->n[l][0], p->n[l][1], p->n[l][2]}, level_read, &p->at[l]};
  return s;
}

static gboolean read_level(NwDmiPyramid *p, int l, const int lo[3], const int hi[3], float *out,
                           GError **error)
{
  if (l == p->n_levels - 1)
    return p->finest.read(p->finest.data, lo, hi, out, error);
  /* the finer region: 4 voxels beyond the coarse samples' taps (2 lo .. 2 hi - 1), from an
   * even voxel; an axis of one voxel stays one voxel */
  const int *nf = p->n[l + 1];
  int flo[3], fhi[3];
  for (int a = 0; a < 3; a++) {
    if (nf[a] == 1) {
      flo[a] = 0;
      fhi[a] = 1;
      continue;
    }
    flo[a] = MAX(0, 2 * lo[a] - 4) & ~1;
    fhi[a] = MIN(nf[a], 2 * hi[a] + 4);
  }
  g_autoptr(NwVolume) fine =
      nw_volume_new(fhi[0] - flo[0], fhi[1] - flo[1], fhi[2] - flo[2], 1, error);
  if (fine == NULL || !read_level(p, l + 1, flo, fhi, fine->data, error))
    return FALSE;
  g_autoptr(NwVolume) half = nw_downsample2(fine, error);
  if (half == NULL)
    return FALSE;
  /* coarse voxel o of the region's half is the image's voxel flo / 2 + o */
  int hlo[3], hhi[3];
  for (int a = 0; a < 3; a++) {
    hlo[a] = lo[a] - flo[a] / 2;
    hhi[a] = hlo[a] + hi[a] - lo[a];
  }
  nw_volume_copy_region(half, hlo, hhi, out);
  return TRUE;
}
