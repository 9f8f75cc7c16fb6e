/* dmi_testutil.c — see dmi_testutil.h. */
#include "dmi_testutil.h"

#include <glib.h>

#include "affine_cost.h"
#include "affine_resample.h"
#include "affine_transform.h"

NwVolume *nw_dmi_test_disc_mask(const NwVolume *like, double r)
{
  NwVolume *m = nw_volume_new_like(like, 1, NULL);
  for (int k = 0; k < m->nz; k++)
    for (int j = 0; j < m->ny; j++)
      for (int i = 0; i < m->nx; i++) {
        const double dx = i - 0.5 * (m->nx - 1), dy = j - 0.5 * (m->ny - 1);
        m->data[nw_volume_index(m, i, j, k)] = dx * dx + dy * dy <= r * r ? 1.0f : 0.0f;
      }
  return m;
}

void nw_dmi_test_sweep_matrix(const NwVolume *fixed, int dim, int a, double m[16])
{
  double centre[3];
  const double mid[3] = {0.5 * (fixed->nx - 1), 0.5 * (fixed->ny - 1), 0.5 * (fixed->nz - 1)};
  nw_volume_voxel_to_world(fixed, mid, centre);
  NwTransform t;
  nw_transform_init(&t, dim, NW_XFORM_RIGID, centre);
  t.rotation_rad[2] = a * 15.0 * G_PI / 180.0;
  if (dim == 3)
    t.rotation_rad[0] = 0.5 * t.rotation_rad[2];
  t.translation_mm[0] = 1.3;
  t.translation_mm[1] = -0.7;
  nw_transform_matrix(&t, m);
}

void nw_dmi_test_sweep_maps(const NwVolume *fixed, const NwVolume *moving, int dim,
                            double maps[NW_DMI_TEST_ANGLES][12])
{
  for (int a = 0; a < NW_DMI_TEST_ANGLES; a++) {
    double m[16];
    nw_dmi_test_sweep_matrix(fixed, dim, a, m);
    g_assert_true(nw_affine_voxel_map(fixed, moving, m, dim, maps[a]));
  }
}

void nw_dmi_test_ranges(const NwVolume *fixed, const NwVolume *fmask, const NwVolume *moving,
                        const NwVolume *mmask, double ranges[4])
{
  NwAffineStats f, m;
  nw_affine_stats_init(&f);
  nw_affine_stats_init(&m);
  nw_affine_stats_add(&f, fixed->data, fmask ? fmask->data : NULL, nw_volume_n_voxels(fixed));
  nw_affine_stats_add(&m, moving->data, mmask ? mmask->data : NULL, nw_volume_n_voxels(moving));
  ranges[0] = f.lo, ranges[1] = f.hi, ranges[2] = m.lo, ranges[3] = m.hi;
}
