/* test_transform_io.c — transform files through the project's own reader (the independent
 * readers are SimpleITK and nibabel in affine_cli_test.py): ITK text and .mat, 2D and 3D,
 * and FSL matrices round-trip to 1e-12; the ITK text is what ITK writes; readers' errors
 * name the file and the problem. CPU, main thread. */
#include <string.h>

#include "affine_transform.h"
#include "atomic_file.h"
#include "nw_error.h"
#include "transform_io.h"
#include "testutil.h"

static void some_transform(int dim, double m[16], double c[3])
{
  const double centre[3] = {12.0, -7.0, dim == 2 ? 0.0 : 20.0};
  NwTransform t;
  nw_transform_init(&t, dim, NW_XFORM_AFFINE, centre);
  const double p3[12] = {5, -6, 7, 0.2, -0.3, 0.4, 1.1, 0.9, 1.05, 0.05, -0.04, 0.03};
  const double p2[6] = {5, -6, 0.3, 1.1, 0.95, 0.04};
  nw_transform_set_params(&t, dim == 2 ? p2 : p3);
  nw_transform_matrix(&t, m);
  memcpy(c, centre, sizeof centre);
}

static void roundtrip(const char *name, int dim)
{
  double m[16], c[3], back[16];
  some_transform(dim, m, c);
  g_autofree char *path = nw_test_path(name);
  g_autoptr(GError) err = NULL;
  g_autoptr(NwOutputs) o = nw_outputs_new(TRUE);
  g_assert_true(nw_transform_write_itk(o, path, m, c, dim, &err));
  g_assert_true(nw_outputs_commit(o, &err));
  g_assert_true(nw_transform_read(path, NULL, NULL, back, &err));
  g_assert_no_error(err);
  for (int e = 0; e < 16; e++)
    g_assert_cmpfloat_with_epsilon(back[e], m[e], 1e-12);
}

static void test_itk_roundtrip(void)
{
  roundtrip("t3.txt", 3);
  roundtrip("t3.mat", 3);
  roundtrip("t2.tfm", 2);
  roundtrip("t2.mat", 2);
}

/* The text ITK writes for a pure translation by RAS (1, 2, 3) about RAS (4, 5, 6): LPS
 * negates x and y of both. */
static void test_itk_text(void)
{
  double m[16] = {1, 0, 0, 1, 0, 1, 0, 2, 0, 0, 1, 3, 0, 0, 0, 1};
  const double c[3] = {4, 5, 6};
  g_autofree char *path = nw_test_path("shift.txt");
  g_autoptr(GError) err = NULL;
  g_autoptr(NwOutputs) o = nw_outputs_new(TRUE);
  g_assert_true(nw_transform_write_itk(o, path, m, c, 3, &err));
  g_assert_true(nw_outputs_commit(o, &err));
  g_autofree char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  g_assert_cmpstr(text, ==,
                  "#Insight Transform File V1.0\n#Transform 0\n"
                  "Transform: AffineTransform_double_3_3\n"
                  "Parameters: 1 0 0 0 1 0 0 0 1 -1 -2 3\nFixedParameters: -4 -5 6\n");
}

/* FSL needs the grids: a LAS fixed and a RAS moving of other sizes, through the file. */
static void test_fsl_roundtrip(void)
{
  g_autoptr(NwVolume) f = nw_volume_new(30, 20, 10, 1, NULL);
  g_autoptr(NwVolume) mv = nw_volume_new(25, 25, 12, 1, NULL);
  const double af[16] = {-2, 0, 0, 30, 0, 2, 0, -20, 0, 0, 3, -10, 0, 0, 0, 1};
  const double am[16] = {1.5, 0, 0, -18, 0, 1.5, 0, -18, 0, 0, 2.5, -15, 0, 0, 0, 1};
  nw_volume_set_affine(f, af);
  nw_volume_set_affine(mv, am);
  double m[16], c[3], back[16];
  some_transform(3, m, c);
  g_autofree char *path = nw_test_path("fsl.mat");
  g_autoptr(GError) err = NULL;
  g_autoptr(NwOutputs) o = nw_outputs_new(TRUE);
  g_assert_true(nw_transform_write_fsl(o, path, m, f, mv, &err));
  g_assert_true(nw_outputs_commit(o, &err));
  g_assert_true(nw_transform_read(path, f, mv, back, &err));
  g_assert_no_error(err);
  for (int e = 0; e < 16; e++)
    g_assert_cmpfloat_with_epsilon(back[e], m[e], 1e-9);
  g_assert_false(nw_transform_read(path, NULL, NULL, back, &err));
  g_autofree char *want =
      g_strdup_printf("%s: an FSL matrix needs the fixed and the moving image", path);
  g_assert_cmpstr(err->message, ==, want);
}

static void expect_read_error(const char *name, const char *content, gssize len,
                              const char *message)
{
  g_autofree char *path = nw_test_path(name);
  g_assert_true(g_file_set_contents(path, content, len, NULL));
  double m[16];
  g_autoptr(GError) err = NULL;
  g_assert_false(nw_transform_read(path, NULL, NULL, m, &err));
  g_autofree char *want = g_strdup_printf("%s: %s", path, message);
  g_assert_cmpstr(err->message, ==, want);
}

static void test_read_errors(void)
{
  expect_read_error("two.txt",
                    "Transform: AffineTransform_double_3_3\nParameters: 1\n"
                    "Transform: AffineTransform_double_3_3\n",
                    -1, "the file holds several transforms: compose them into one first");
  expect_read_error("count.txt",
                    "Transform: AffineTransform_double_3_3\nParameters: 1 0 0 0 1 0 0 0 1\n"
                    "FixedParameters: 0 0 0\n",
                    -1,
                    "AffineTransform_double_3_3: expected 12 parameters and 3 fixed parameters, "
                    "found 9 and 3");
  expect_read_error("nan.txt", "Transform: AffineTransform_double_2_2\nParameters: 1 x 0\n", -1,
                    "Parameters: 'x' is not a number");
  expect_read_error("none.txt", "hello\n", -1,
                    "not an ITK transform file: no 'Transform:' and 'Parameters:' lines");
  expect_read_error("short.mat", "\0\0\0\0\x0c\0\0\0", 8, "truncated MATLAB file (8 bytes)");
  g_autofree char *missing = nw_test_path("missing.txt");
  double m[16];
  g_autoptr(GError) err = NULL;
  g_assert_false(nw_transform_read(missing, NULL, NULL, m, &err));
  g_assert_error(err, NW_ERROR, NW_ERROR_IO);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/transform-io/itk-roundtrip", test_itk_roundtrip);
  g_test_add_func("/transform-io/itk-text", test_itk_text);
  g_test_add_func("/transform-io/fsl-roundtrip", test_fsl_roundtrip);
  g_test_add_func("/transform-io/read-errors", test_read_errors);
  return g_test_run();
}
