/* test_result_io.c — core/result_io.h: a method result written as PREFIX_NAME.nii.gz, the
 * required names first, fields as displacement fields, labels as int32; a missing required
 * name fails before anything is written. CPU only. */
#include <string.h>

#include "io_nifti.h"
#include "nw_error.h"
#include "result_io.h"
#include "testutil.h"

/* 4x3x2 voxels of 2 mm; value(i) = i * scale (+ c for component c of fields). */
static NwVolume *ramp(int nc, float scale)
{
  NwVolume *v = nw_volume_new(4, 3, 2, nc, NULL);
  nw_volume_set_spacing(v, 2, 2, 2);
  for (size_t i = 0; i < nw_volume_n_floats(v); i++)
    v->data[i] = (float)(i / nc) * scale + (float)(i % nc);
  return v;
}

static NwMethodResult *result(gboolean with_field)
{
  NwMethodResult *r = nw_method_result_new();
  nw_method_result_add(r, "labels", ramp(1, 1.0f));
  nw_method_result_add(r, "warped", ramp(1, 0.5f));
  if (with_field)
    nw_method_result_add(r, "forward", ramp(3, 0.25f));
  return r;
}

static void test_write(void)
{
  g_autoptr(NwMethodResult) r = result(TRUE);
  g_autofree char *prefix = nw_test_path("res");
  g_autoptr(GPtrArray) written = g_ptr_array_new_with_free_func(g_free);
  static const char *const required[] = {"warped", "forward", NULL};
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_result_write(r, "demons", prefix, required, NW_FIELD_RAS, written, &error));
  g_assert_no_error(error);
  /* required first, in their order, then the rest in the result's order */
  g_assert_cmpuint(written->len, ==, 3);
  static const char *const order[] = {"warped", "forward", "labels"};
  for (guint i = 0; i < 3; i++) {
    g_autofree char *want = g_strdup_printf("%s_%s.nii.gz", prefix, order[i]);
    g_assert_cmpstr(g_ptr_array_index(written, i), ==, want);
  }
  g_autoptr(NwVolume) w = nw_nifti_read(g_ptr_array_index(written, 0), &error);
  g_assert_no_error(error);
  g_assert_cmpfloat(nw_test_max_abs_diff(w, nw_method_result_get(r, "warped")), <, 1e-6);
  g_autoptr(NwVolume) u = nw_nifti_read_field(g_ptr_array_index(written, 1), &error);
  g_assert_no_error(error);
  g_assert_cmpint(u->nc, ==, 3);
  g_assert_cmpfloat(nw_test_max_abs_diff(u, nw_method_result_get(r, "forward")), <, 1e-5);
  NwNiftiInfo info;
  g_assert_true(nw_nifti_read_info(g_ptr_array_index(written, 2), &info, &error));
  g_assert_cmpstr(info.datatype_name, ==, "int32");
}

static void test_missing(void)
{
  g_autoptr(NwMethodResult) r = result(FALSE);
  g_autofree char *prefix = nw_test_path("missing");
  static const char *const required[] = {"warped", "forward", NULL};
  g_autoptr(GError) error = NULL;
  g_assert_false(nw_result_write(r, "demons", prefix, required, NW_FIELD_ITK, NULL, &error));
  g_assert_error(error, NW_ERROR, NW_ERROR_INVALID);
  g_assert_cmpstr(error->message, ==, "demons: the job returned no 'forward'");
  g_autofree char *warped = g_strdup_printf("%s_warped.nii.gz", prefix);
  g_assert_false(g_file_test(warped, G_FILE_TEST_EXISTS)); /* nothing written */
}

static void test_bad_folder(void)
{
  g_autoptr(NwMethodResult) r = result(FALSE);
  g_autoptr(GError) error = NULL;
  g_assert_false(nw_result_write(r, "demons", "/nonexistent-nw/out", NULL, NW_FIELD_ITK, NULL,
                                 &error));
  g_assert_nonnull(error);
  g_assert_nonnull(strstr(error->message, "/nonexistent-nw/out_labels.nii.gz"));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/result-io/write", test_write);
  g_test_add_func("/result-io/missing", test_missing);
  g_test_add_func("/result-io/bad-folder", test_bad_folder);
  return g_test_run();
}
