/* test_io_nifti.c — NIfTI image round trips (every datatype x NIfTI-1/2 x .nii/.nii.gz),
 * sform/qform/scl handling, and displacement-field conventions (ITK LPS, RAS, NiftyReg, FSL)
 * against hand-computed numbers. Main thread, CPU. */
#include <glib/gstdio.h>
#include <math.h>
#include <nifti2_io.h>
#include <string.h>

#include "io_nifti.h"
#include "nw_error.h"
#include "testutil.h"

/* A known oblique affine: rotation about z by 30 degrees, spacing (2, 1.5, 3), origin. */
static void oblique_affine(double a[16])
{
  const double c = cos(G_PI / 6), s = sin(G_PI / 6);
  const double m[16] = {2 * c, -1.5 * s, 0, -10, 2 * s, 1.5 * c, 0, 20, 0, 0, 3, 5, 0, 0, 0, 1};
  memcpy(a, m, sizeof m);
}

static void test_roundtrip_datatypes(void)
{
  const NwDatatype types[] = {NW_DT_UINT8, NW_DT_INT16,   NW_DT_UINT16,
                              NW_DT_INT32, NW_DT_FLOAT32, NW_DT_FLOAT64};
  const char *exts[] = {".nii", ".nii.gz"};
  g_autoptr(NwVolume) v = nw_volume_new(5, 4, 3, 1, NULL);
  double a[16];
  oblique_affine(a);
  nw_volume_set_affine(v, a);
  for (size_t i = 0; i < nw_volume_n_voxels(v); i++)
    v->data[i] = (float)(i % 50) + 0.25f; /* integer types round to i % 50 */
  for (size_t t = 0; t < G_N_ELEMENTS(types); t++)
    for (int ver = 1; ver <= 2; ver++)
      for (int e = 0; e < 2; e++) {
        g_autofree char *name =
            g_strdup_printf("rt_%s_n%d%s", nw_datatype_name(types[t]), ver, exts[e]);
        g_autofree char *path = nw_test_path(name);
        GError *err = NULL;
        g_assert_true(nw_nifti_write(path, v, types[t], ver == 2, &err));
        g_assert_no_error(err);
        NwNiftiInfo info;
        gboolean info_ok = nw_nifti_read_info(path, &info, &err);
        g_assert_no_error(err);
        g_assert_true(info_ok);
        g_assert_cmpint(info.nifti_version, ==, ver);
        g_assert_cmpint(info.dim[1], ==, 5);
        g_assert_cmpint(info.dim[3], ==, 3);
        g_assert_cmpstr(info.datatype_name, ==, nw_datatype_name(types[t]));
        g_autoptr(NwVolume) r = nw_nifti_read(path, &err);
        g_assert_no_error(err);
        g_assert_cmpint(r->nx, ==, 5);
        g_assert_cmpint(r->ny, ==, 4);
        g_assert_cmpint(r->nz, ==, 3);
        gboolean is_float = types[t] == NW_DT_FLOAT32 || types[t] == NW_DT_FLOAT64;
        for (size_t i = 0; i < nw_volume_n_voxels(v); i++)
          g_assert_cmpfloat(r->data[i], ==, is_float ? v->data[i] : (float)(i % 50));
        for (int k = 0; k < 16; k++)
          g_assert_cmpfloat_with_epsilon(r->vox_to_ras[k], a[k], 1e-5);
      }
}

static void test_clamp_on_write(void)
{
  g_autoptr(NwVolume) v = nw_volume_new(4, 1, 1, 1, NULL);
  const float in[4] = {-7.6f, 300.2f, 2.5f, NAN};
  memcpy(v->data, in, sizeof in);
  g_autofree char *path = nw_test_path("clamp.nii");
  g_assert_true(nw_nifti_write(path, v, NW_DT_UINT8, FALSE, NULL));
  g_autoptr(NwVolume) r = nw_nifti_read(path, NULL);
  g_assert_cmpfloat(r->data[0], ==, 0.0f);
  g_assert_cmpfloat(r->data[1], ==, 255.0f);
  g_assert_cmpfloat(r->data[2], ==, 2.0f); /* round half to even */
  g_assert_cmpfloat(r->data[3], ==, 0.0f);
  g_assert_true(nw_nifti_write(path, v, NW_DT_INT16, FALSE, NULL));
  g_autoptr(NwVolume) s = nw_nifti_read(path, NULL);
  g_assert_cmpfloat(s->data[0], ==, -8.0f);
  g_assert_cmpfloat(s->data[1], ==, 300.0f);
}

/* Write a file by hand with nifti_clib: int16 data i, given codes and scaling. */
static void write_by_hand(const char *path, int qcode, int scode, double slope, double inter)
{
  int64_t dims[8] = {3, 4, 3, 2, 1, 1, 1, 1};
  nifti_image *nim = nifti_make_new_nim(dims, DT_INT16, 1);
  gint16 *d = nim->data;
  for (int i = 0; i < 24; i++)
    d[i] = (gint16)(i - 5);
  nim->dx = nim->pixdim[1] = 2.0;
  nim->dy = nim->pixdim[2] = 3.0;
  nim->dz = nim->pixdim[3] = 4.0;
  nim->qform_code = qcode;
  nim->quatern_b = 0, nim->quatern_c = 0, nim->quatern_d = 1; /* 180 deg about z */
  nim->qoffset_x = 1, nim->qoffset_y = 2, nim->qoffset_z = 3;
  nim->qfac = 1;
  nim->sform_code = scode;
  memset(&nim->sto_xyz, 0, sizeof nim->sto_xyz);
  nim->sto_xyz.m[0][0] = 5, nim->sto_xyz.m[1][1] = 6, nim->sto_xyz.m[2][2] = 7;
  nim->sto_xyz.m[3][3] = 1;
  nim->scl_slope = slope;
  nim->scl_inter = inter;
  g_assert_cmpint(nifti_set_filenames(nim, path, 0, 1), ==, 0);
  nifti_image_write(nim);
  nifti_image_free(nim);
}

static void test_qform_sform_scl(void)
{
  g_autofree char *q = nw_test_path("qonly.nii");
  write_by_hand(q, 1, 0, 2.0, 10.0);
  g_autoptr(NwVolume) v = nw_nifti_read(q, NULL);
  g_assert_nonnull(v);
  /* qform rotation 180 deg about z: diag(-2, -3, 4), offset (1, 2, 3). */
  const double expect[16] = {-2, 0, 0, 1, 0, -3, 0, 2, 0, 0, 4, 3, 0, 0, 0, 1};
  for (int k = 0; k < 16; k++)
    g_assert_cmpfloat_with_epsilon(v->vox_to_ras[k], expect[k], 1e-6);
  for (int i = 0; i < 24; i++)
    g_assert_cmpfloat(v->data[i], ==, (float)((i - 5) * 2.0 + 10.0));
  g_autofree char *s = nw_test_path("sform.nii.gz");
  write_by_hand(s, 1, 2, 0.0, 0.0); /* slope 0 means 1 */
  g_autoptr(NwVolume) w = nw_nifti_read(s, NULL);
  g_assert_cmpfloat(w->vox_to_ras[0], ==, 5.0);
  g_assert_cmpfloat(w->vox_to_ras[5], ==, 6.0);
  g_assert_cmpfloat(w->vox_to_ras[10], ==, 7.0);
  g_assert_cmpfloat(w->data[23], ==, 18.0f);
  g_autofree char *n = nw_test_path("nocode.nii");
  write_by_hand(n, 0, 0, 1.0, 0.0);
  g_autoptr(NwVolume) x = nw_nifti_read(n, NULL);
  g_assert_cmpfloat(x->vox_to_ras[0], ==, 2.0);
  g_assert_cmpfloat(x->vox_to_ras[5], ==, 3.0);
  g_assert_cmpfloat(x->vox_to_ras[10], ==, 4.0);
  g_assert_cmpfloat(x->vox_to_ras[3], ==, 0.0);
}

/* A big-endian file (header and int16 data byte-swapped) reads as the native one. */
static void test_byte_swapped(void)
{
  g_autofree char *path = nw_test_path("swapped.nii");
  g_autoptr(NwVolume) v = nw_test_volume(6, 5, 4, 1, 3);
  for (size_t i = 0; i < nw_volume_n_voxels(v); i++)
    v->data[i] = (float)((int)(v->data[i] * 100.0f) % 3000);
  g_assert_true(nw_nifti_write(path, v, NW_DT_INT16, FALSE, NULL));
  gchar *buf;
  gsize len;
  g_assert_true(g_file_get_contents(path, &buf, &len, NULL));
  g_assert_cmpuint(len, ==, 352 + 6 * 5 * 4 * 2);
  swap_nifti_header(buf, 1);
  nifti_swap_2bytes(6 * 5 * 4, buf + 352);
  g_assert_true(g_file_set_contents(path, buf, (gssize)len, NULL));
  g_free(buf);
  g_autoptr(NwVolume) r = nw_nifti_read(path, NULL);
  g_assert_nonnull(r);
  g_assert_cmpfloat(nw_test_max_abs_diff(v, r), ==, 0.0);
  for (int k = 0; k < 16; k++)
    g_assert_cmpfloat_with_epsilon(r->vox_to_ras[k], v->vox_to_ras[k], 1e-6);
}

static NwVolume *known_field(void)
{
  NwVolume *f = nw_volume_new(4, 3, 2, 3, NULL);
  double a[16];
  oblique_affine(a);
  nw_volume_set_affine(f, a);
  for (size_t i = 0; i < nw_volume_n_voxels(f); i++)
    for (int c = 0; c < 3; c++)
      f->data[i * 3 + c] = (float)(0.1 * (double)i - 0.7 * c + 0.05);
  return f;
}

static void test_field_roundtrip(void)
{
  g_autoptr(NwVolume) f = known_field();
  for (int conv = 0; conv < 2; conv++) {
    g_autofree char *path = nw_test_path(conv == 0 ? "field_itk.nii.gz" : "field_ras.nii");
    GError *err = NULL;
    g_assert_true(nw_nifti_write_field(path, f, (NwFieldConvention)conv, &err));
    g_assert_no_error(err);
    NwNiftiInfo info;
    g_assert_true(nw_nifti_read_info(path, &info, NULL));
    g_assert_cmpint(info.ndim, ==, 5);
    g_assert_cmpint(info.dim[4], ==, 1);
    g_assert_cmpint(info.dim[5], ==, 3);
    g_assert_cmpint(info.intent_code, ==, conv == 0 ? 1007 : 1006);
    g_assert_cmpint(info.datatype_code, ==, DT_FLOAT32);
    g_autoptr(NwVolume) r = nw_nifti_read_field(path, &err);
    g_assert_no_error(err);
    g_assert_cmpint(r->nc, ==, 3);
    g_assert_cmpfloat(nw_test_max_abs_diff(f, r), <, 1e-5);
    /* A field is not a scalar image. */
    g_assert_null(nw_nifti_read(path, &err));
    g_assert_error(err, NW_ERROR, NW_ERROR_FORMAT);
    g_assert_nonnull(strstr(err->message, "3 volumes"));
    g_clear_error(&err);
  }
}

/* The stored LPS numbers at one voxel, computed by hand: u = (1, 0, 0) voxel at voxel 0
 * under the oblique affine gives RAS R*u = (2cos30, 2sin30, 0) = (1.7320508, 1, 0),
 * LPS = (-1.7320508, -1, 0); u = (0, 0, 1) gives RAS (0, 0, 3) = LPS (0, 0, 3). */
static void test_field_lps_numbers(void)
{
  g_autoptr(NwVolume) f = nw_volume_new(2, 1, 1, 3, NULL);
  double a[16];
  oblique_affine(a);
  nw_volume_set_affine(f, a);
  f->data[0] = 1.0f;
  f->data[5] = 1.0f;
  g_autofree char *path = nw_test_path("lps.nii");
  g_assert_true(nw_nifti_write_field(path, f, NW_FIELD_ITK, NULL));
  nifti_image *nim = nifti_image_read(path, 1);
  g_assert_nonnull(nim);
  const float *d = nim->data; /* planar: vox + c * 2 */
  g_assert_cmpfloat_with_epsilon(d[0], -1.7320508, 1e-6);
  g_assert_cmpfloat_with_epsilon(d[2], -1.0, 1e-6);
  g_assert_cmpfloat_with_epsilon(d[4], 0.0, 1e-6);
  g_assert_cmpfloat_with_epsilon(d[1], 0.0, 1e-6);
  g_assert_cmpfloat_with_epsilon(d[3], 0.0, 1e-6);
  g_assert_cmpfloat_with_epsilon(d[5], 3.0, 1e-6);
  nifti_image_free(nim);
}

/* A field of shape dims (5D or 4D) written by hand, planar float values from fill. */
static void write_field_by_hand(const char *path, const int64_t dims[8], const double a[16],
                                const char *iname, double p1, int intent,
                                void (*fill)(float *, int, int, int, const double *))
{
  nifti_image *nim = nifti_make_new_nim(dims, DT_FLOAT32, 1);
  nifti_dmat44 m;
  for (int r = 0; r < 4; r++)
    for (int c = 0; c < 4; c++)
      m.m[r][c] = a[r * 4 + c];
  nim->sto_xyz = m;
  nim->sform_code = 1;
  nim->qform_code = 0;
  nim->pixdim[1] = nim->dx = sqrt(a[0] * a[0] + a[4] * a[4] + a[8] * a[8]);
  nim->pixdim[2] = nim->dy = sqrt(a[1] * a[1] + a[5] * a[5] + a[9] * a[9]);
  nim->pixdim[3] = nim->dz = sqrt(a[2] * a[2] + a[6] * a[6] + a[10] * a[10]);
  nim->intent_code = intent;
  nim->intent_p1 = p1;
  if (iname)
    g_strlcpy(nim->intent_name, iname, sizeof nim->intent_name);
  int n3 = (int)(dims[1] * dims[2] * dims[3]);
  fill(nim->data, (int)dims[1], (int)dims[2], n3, a);
  g_assert_cmpint(nifti_set_filenames(nim, path, 0, 1), ==, 0);
  nifti_image_write(nim);
  nifti_image_free(nim);
}

/* RAS displacement (1, -2, 0.5) mm everywhere. */
static void fill_ras_disp(float *d, int nx, int ny, int n3, const double *a)
{
  (void)nx, (void)ny, (void)a;
  for (int i = 0; i < n3; i++)
    d[i] = 1.0f, d[i + n3] = -2.0f, d[i + 2 * n3] = 0.5f;
}

/* Absolute RAS positions A*(i,j,k) + (1, -2, 0.5). */
static void fill_ras_pos(float *d, int nx, int ny, int n3, const double *a)
{
  for (int n = 0; n < n3; n++) {
    int i = n % nx, j = (n / nx) % ny, k = n / (nx * ny);
    const double add[3] = {1, -2, 0.5};
    for (int c = 0; c < 3; c++)
      d[n + c * n3] =
          (float)(a[c * 4] * i + a[c * 4 + 1] * j + a[c * 4 + 2] * k + a[c * 4 + 3] + add[c]);
  }
}

static void check_const_field(const NwVolume *f, const double u[3])
{
  for (size_t i = 0; i < nw_volume_n_voxels(f); i++)
    for (int c = 0; c < 3; c++)
      g_assert_cmpfloat_with_epsilon(f->data[i * 3 + c], u[c], 1e-5);
}

static void test_field_niftyreg(void)
{
  /* Axis-aligned, spacing (2, 1, 0.5), x flipped: voxel u = R^-1 (1, -2, 0.5). */
  const double a[16] = {-2, 0, 0, 30, 0, 1, 0, -4, 0, 0, 0.5, 2, 0, 0, 0, 1};
  const double u[3] = {-0.5, -2.0, 1.0};
  const int64_t dims[8] = {5, 3, 2, 2, 1, 3, 1, 1};
  g_autofree char *disp = nw_test_path("nreg_disp.nii.gz");
  write_field_by_hand(disp, dims, a, "NREG_TRANS", 1.0, NIFTI_INTENT_VECTOR, fill_ras_disp);
  g_autoptr(NwVolume) f = nw_nifti_read_field(disp, NULL);
  g_assert_nonnull(f);
  check_const_field(f, u);
  g_autofree char *def = nw_test_path("nreg_def.nii");
  write_field_by_hand(def, dims, a, "NREG_TRANS", 0.0, NIFTI_INTENT_VECTOR, fill_ras_pos);
  g_autoptr(NwVolume) g = nw_nifti_read_field(def, NULL);
  g_assert_nonnull(g);
  check_const_field(g, u);
  g_autofree char *spl = nw_test_path("nreg_spline.nii");
  write_field_by_hand(spl, dims, a, "NREG_TRANS", 2.0, NIFTI_INTENT_VECTOR, fill_ras_disp);
  GError *err = NULL;
  g_assert_null(nw_nifti_read_field(spl, &err));
  g_assert_error(err, NW_ERROR, NW_ERROR_FORMAT);
  g_assert_nonnull(strstr(err->message, "NREG_TRANS intent_p1 = 2"));
  g_error_free(err);
}

/* FSL: 4D, dim[4] = 3; components (1, -2, 0.5) mm along FSL's scaled-voxel axes. */
static void test_field_fsl(void)
{
  const int64_t dims[8] = {4, 3, 2, 2, 3, 1, 1, 1};
  /* Positive determinant (neurological): FSL's x runs against i, so u_i = -1/2. */
  const double pos[16] = {2, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 1};
  g_autofree char *p = nw_test_path("fsl_pos.nii.gz");
  write_field_by_hand(p, dims, pos, NULL, 0, 0, fill_ras_disp);
  g_autoptr(NwVolume) f = nw_nifti_read_field(p, NULL);
  g_assert_nonnull(f);
  check_const_field(f, (const double[3]){-0.5, -2.0, 1.0});
  /* Negative determinant (radiological): no flip, u_i = +1/2. */
  const double neg[16] = {-2, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 1};
  g_autofree char *n = nw_test_path("fsl_neg.nii");
  write_field_by_hand(n, dims, neg, NULL, 0, 0, fill_ras_disp);
  g_autoptr(NwVolume) g = nw_nifti_read_field(n, NULL);
  g_assert_nonnull(g);
  check_const_field(g, (const double[3]){0.5, -2.0, 1.0});
}

/* Colin27 from mricron-data, when installed: uint8, 181x217x181, 1 mm, RAS. */
static void test_ch2bet(void)
{
  const char *path = "/usr/share/mricron/templates/ch2bet.nii.gz";
  if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
    g_test_skip("mricron-data not installed");
    return;
  }
  NwNiftiInfo info;
  g_assert_true(nw_nifti_read_info(path, &info, NULL));
  g_assert_cmpstr(info.datatype_name, ==, "uint8");
  g_autoptr(NwVolume) v = nw_nifti_read(path, NULL);
  g_assert_nonnull(v);
  g_assert_cmpint(v->nx, ==, 181);
  g_assert_cmpint(v->ny, ==, 217);
  g_assert_cmpint(v->nz, ==, 181);
  g_assert_cmpfloat_with_epsilon(v->spacing_mm[0], 1.0, 1e-5);
  char code[4];
  nw_volume_orientation_code(v, code);
  g_assert_cmpstr(code, ==, "RAS");
  NwVolumeStats st;
  nw_volume_stats(v, &st);
  g_assert_cmpfloat(st.min, >=, 0.0f);
  g_assert_cmpfloat(st.max, <=, 255.0f);
  g_assert_cmpfloat(st.max, >, 0.0f);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  nifti_set_debug_level(0);
  g_test_add_func("/io_nifti/roundtrip_datatypes", test_roundtrip_datatypes);
  g_test_add_func("/io_nifti/clamp_on_write", test_clamp_on_write);
  g_test_add_func("/io_nifti/qform_sform_scl", test_qform_sform_scl);
  g_test_add_func("/io_nifti/byte_swapped", test_byte_swapped);
  g_test_add_func("/io_nifti/field_roundtrip", test_field_roundtrip);
  g_test_add_func("/io_nifti/field_lps_numbers", test_field_lps_numbers);
  g_test_add_func("/io_nifti/field_niftyreg", test_field_niftyreg);
  g_test_add_func("/io_nifti/field_fsl", test_field_fsl);
  g_test_add_func("/io_nifti/ch2bet", test_ch2bet);
  return g_test_run();
}
