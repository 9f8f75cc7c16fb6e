/* nifti_fixture_writer.c — writes the files that tests/nifti_nibabel_check.py reads back with
 * nibabel (an independent reader): one image per datatype and NIfTI version, and a
 * displacement field in each convention, all on a known oblique grid. The folder comes from
 * NW_NIFTI_FIXTURE_DIR. Main thread, CPU. The formulas here and in the script must agree. */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "io_nifti.h"
#include "testutil.h"

/* Rotation about z by 30 degrees, spacing (2, 1.5, 3), origin (-10, 20, 5) mm RAS. */
static void oblique_affine(double a[16])
{
  const double c = cos(G_PI / 6), s = sin(G_PI / 6);
  const double m[16] = {2 * c, -1.5 * s, 0, -10, 2 * s, 1.5 * c, 0, 20, 0, 0, 3, 5, 0, 0, 0, 1};
  memcpy(a, m, sizeof m);
}

static void test_write_fixture(void)
{
  const char *dir = g_getenv("NW_NIFTI_FIXTURE_DIR");
  g_assert_nonnull(dir);
  g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
  double a[16];
  oblique_affine(a);
  /* Image 7x6x5, value (i + 2j + 3k) % 50 + 0.25 (integer types store it rounded). */
  g_autoptr(NwVolume) v = nw_volume_new(7, 6, 5, 1, NULL);
  nw_volume_set_affine(v, a);
  for (int k = 0; k < 5; k++)
    for (int j = 0; j < 6; j++)
      for (int i = 0; i < 7; i++)
        v->data[nw_volume_index(v, i, j, k)] = (float)((i + 2 * j + 3 * k) % 50) + 0.25f;
  for (int t = NW_DT_UINT8; t <= NW_DT_FLOAT64; t++)
    for (int ver = 1; ver <= 2; ver++) {
      g_autofree char *name =
          g_strdup_printf("img_%s_n%d.nii%s", nw_datatype_name(t), ver, ver == 1 ? ".gz" : "");
      g_autofree char *path = g_build_filename(dir, name, NULL);
      g_assert_true(nw_nifti_write(path, v, (NwDatatype)t, ver == 2, NULL));
    }
  /* Field 4x3x2 in voxel units: u = (0.1 i, -0.2 j, 0.3 k + 0.05). */
  g_autoptr(NwVolume) f = nw_volume_new(4, 3, 2, 3, NULL);
  nw_volume_set_affine(f, a);
  for (int k = 0; k < 2; k++)
    for (int j = 0; j < 3; j++)
      for (int i = 0; i < 4; i++) {
        float *p = f->data + nw_volume_index(f, i, j, k) * 3;
        p[0] = 0.1f * i, p[1] = -0.2f * j, p[2] = 0.3f * k + 0.05f;
      }
  g_autofree char *itk = g_build_filename(dir, "field_itk.nii.gz", NULL);
  g_autofree char *ras = g_build_filename(dir, "field_ras.nii", NULL);
  g_assert_true(nw_nifti_write_field(itk, f, NW_FIELD_ITK, NULL));
  g_assert_true(nw_nifti_write_field(ras, f, NW_FIELD_RAS, NULL));
  /* For transformix: a linear image i + 10 j + 100 k (12x10x8) and the constant field
   * u = (0.5, -1, 2) voxels on the same grid; warped(x) = moving(x + u) is known exactly. */
  g_autoptr(NwVolume) m = nw_volume_new(12, 10, 8, 1, NULL);
  g_autoptr(NwVolume) c = nw_volume_new(12, 10, 8, 3, NULL);
  nw_volume_set_affine(m, a);
  nw_volume_set_affine(c, a);
  for (int k = 0; k < 8; k++)
    for (int j = 0; j < 10; j++)
      for (int i = 0; i < 12; i++) {
        size_t n = nw_volume_index(m, i, j, k);
        m->data[n] = (float)(i + 10 * j + 100 * k);
        c->data[n * 3] = 0.5f, c->data[n * 3 + 1] = -1.0f, c->data[n * 3 + 2] = 2.0f;
      }
  g_autofree char *tm = g_build_filename(dir, "tx_moving.nii.gz", NULL);
  g_autofree char *tf = g_build_filename(dir, "tx_field.nii.gz", NULL);
  g_assert_true(nw_nifti_write(tm, m, NW_DT_FLOAT32, FALSE, NULL));
  g_assert_true(nw_nifti_write_field(tf, c, NW_FIELD_ITK, NULL));

  /* Larger than one gzip member (4 MiB of the file): 160 x 128 x 120 floats, 9.8 MB, three
   * members deflated in parallel; value (i + 7 j + 13 k) mod 1000 + k / 8. Read back here by
   * this project's reader, and by nibabel in nifti_nibabel_check.py. */
  g_autoptr(NwVolume) big = nw_volume_new(160, 128, 120, 1, NULL);
  nw_volume_set_affine(big, a);
  for (int k = 0; k < 120; k++)
    for (int j = 0; j < 128; j++)
      for (int i = 0; i < 160; i++)
        big->data[nw_volume_index(big, i, j, k)] = (float)((i + 7 * j + 13 * k) % 1000) + k / 8.0f;
  g_autofree char *tb = g_build_filename(dir, "big_members.nii.gz", NULL);
  g_assert_true(nw_nifti_write(tb, big, NW_DT_FLOAT32, FALSE, NULL));
  g_autoptr(GError) err = NULL;
  g_autoptr(NwVolume) back = nw_nifti_read(tb, &err);
  g_assert_no_error(err);
  g_assert_cmpint(back->nx * back->ny * back->nz, ==, 160 * 128 * 120);
  g_assert_cmpmem(back->data, nw_volume_n_voxels(back) * sizeof(float), big->data,
                  nw_volume_n_voxels(big) * sizeof(float));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/io_nifti/write_fixture", test_write_fixture);
  return g_test_run();
}
