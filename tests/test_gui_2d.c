/* test_gui_2d.c — the application under X with 2D images (single slices: PNG, or NIfTI with
 * nz = 1). The window shows the axial view alone when every layer is a single slice, set
 * when such a scene opens and undone when a volume opens, unless the user chose a layout;
 * a 3D pair keeps the 2x2 grid. "affine" registers the ITK Software Guide's shifted slice
 * (Debian's insighttoolkit5-examples) and the saved results have the transform and the
 * warped slice but no iso-surface. Test process main thread; the application is a child. */
#include <math.h>
#include <string.h>

#include "gui_testutil.h"
#include "io_image.h"
#include "io_nifti.h"
#include "testutil.h"

#define ITK_DATA "/usr/share/doc/insighttoolkit5-examples/examples/Data/"

/* The lines of out that start with prefix, in order, joined by "\n". */
static char *lines_with(const char *out, const char *prefix)
{
  g_auto(GStrv) lines = g_strsplit(out, "\n", -1);
  g_autoptr(GString) s = g_string_new(NULL);
  for (int i = 0; lines[i] != NULL; i++)
    if (g_str_has_prefix(lines[i], prefix))
      g_string_append_printf(s, "%s%s", s->len > 0 ? "\n" : "", lines[i]);
  return g_string_free(g_steal_pointer(&s), FALSE);
}

/* The run summary's NCC before and after: "run-summary: NCC B → A". */
static void summary_ncc(const char *out, double *before, double *after)
{
  const char *line = strstr(out, "run-summary: NCC ");
  g_assert_nonnull(line);
  char *end = NULL;
  *before = g_ascii_strtod(line + strlen("run-summary: NCC "), &end);
  const char *arrow = strstr(end, "→ ");
  g_assert_nonnull(arrow);
  *after = g_ascii_strtod(arrow + strlen("→ "), &end);
  g_assert_true(end > arrow + strlen("→ "));
}

/* The matrix (row-major 2x2) and translation of an ITK "AffineTransform_double_2_2" file. */
static void read_itk_2d(const char *path, double a[4], double t[2])
{
  g_autofree char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  g_test_message("%s:\n%s", path, text);
  g_assert_nonnull(strstr(text, "Transform: AffineTransform_double_2_2\n"));
  const char *p = strstr(text, "\nParameters: ");
  g_assert_nonnull(p);
  p += strlen("\nParameters: ");
  double v[6];
  for (int i = 0; i < 6; i++) {
    char *end = NULL;
    v[i] = g_ascii_strtod(p, &end);
    g_assert_true(end != p);
    p = end;
  }
  memcpy(a, v, 4 * sizeof *a);
  memcpy(t, v + 4, 2 * sizeof *t);
}

static gboolean exists(const char *dir, const char *name)
{
  g_autofree char *path = g_build_filename(dir, name, NULL);
  return g_file_test(path, G_FILE_TEST_EXISTS);
}

/* ITK's ImageRegistration1 pair: BrainProtonDensitySliceShifted13x17y.png is the slice moved
 * by 13 pixels in x and 17 in y (ITK's guide finds the translation (13, 17) with unit
 * spacing). */
static void test_pair_2d(void)
{
  const char *fixed = ITK_DATA "BrainProtonDensitySliceBorder20.png";
  const char *moving = ITK_DATA "BrainProtonDensitySliceShifted13x17y.png";
  if (!g_file_test(fixed, G_FILE_TEST_EXISTS) || !g_file_test(moving, G_FILE_TEST_EXISTS)) {
    g_test_skip("insighttoolkit5-examples is not installed (scripts/install-deps.sh installs "
                "it): no ITK example images");
    return;
  }
  const char *dir = nw_test_tmpdir();
  g_autofree char *text = g_strdup_printf(
      "open %s\nopen %s\nlayout\nmethod affine\ndevice cpu\nparam transform rigid\nrun\n"
      "wait-state finished\nrun-summary\nlayout\nlayers\nscreenshot-window %s/2d-window.png\n"
      "save-results %s/r\nquit\n",
      fixed, moving, dir, dir);
  g_autofree char *out = nw_gui_run_script("pair-2d.txt", text, 0, NULL);
  g_test_message("%s", out);

  /* the axial view alone, once both slices are open, and still after the run added its
   * warped image and field (and no surface layer) */
  g_autofree char *layouts = lines_with(out, "layout: ");
  g_assert_cmpstr(layouts, ==, "layout: axial\nlayout: axial");
  g_autofree char *layers = lines_with(out, "layers: ");
  g_assert_nonnull(strstr(layers, "warped · 1"));
  g_assert_null(strstr(layers, "surface"));

  /* registered: the slices disagreed before, and agree after */
  double before, after;
  summary_ncc(out, &before, &after);
  g_assert_cmpfloat(before, <, 0.9);
  g_assert_cmpfloat(after, >=, 0.99);

  /* the transform and the warped slice, but no iso-surface of a single slice */
  g_assert_true(exists(dir, "r_affine.txt"));
  g_assert_true(exists(dir, "r_warped.nii.gz"));
  g_assert_false(exists(dir, "r_surface.gii"));
  g_autofree char *warped_path = g_build_filename(dir, "r_warped.nii.gz", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(NwVolume) warped = nw_nifti_read(warped_path, &error);
  g_assert_no_error(error);
  g_assert_cmpint(warped->nz, ==, 1);

  /* The translation, in pixels of the fixed slice: the PNGs carry a 72 dpi resolution chunk,
   * so neurowarp reads 0.3527 mm pixels where ITK's guide uses 1 mm. The file is ITK's,
   * fixed -> moving in LPS mm: ITK's (+13, +17) px with rows downwards becomes (+13, -17) px
   * in RAS (rows are flipped on load, +y is up), and (-13, +17) px in LPS. */
  g_autoptr(NwVolume) f = nw_image_read(fixed, &error);
  g_assert_no_error(error);
  double a[4], t[2];
  g_autofree char *txt = g_build_filename(dir, "r_affine.txt", NULL);
  read_itk_2d(txt, a, t);
  const double tx_px = t[0] / f->spacing_mm[0], ty_px = t[1] / f->spacing_mm[1];
  g_test_message("translation (%.4f, %.4f) mm = (%.4f, %.4f) px of %.6f x %.6f mm", t[0], t[1],
                 tx_px, ty_px, f->spacing_mm[0], f->spacing_mm[1]);
  g_assert_cmpfloat_with_epsilon(fabs(tx_px), 13.0, 0.1);
  g_assert_cmpfloat_with_epsilon(fabs(ty_px), 17.0, 0.1);
  g_assert_cmpfloat(tx_px, <, 0.0);
  g_assert_cmpfloat(ty_px, >, 0.0);
  /* rigid, and no rotation to find */
  g_assert_cmpfloat_with_epsilon(a[0], 1.0, 1e-3);
  g_assert_cmpfloat_with_epsilon(a[1], 0.0, 1e-3);
  g_assert_cmpfloat_with_epsilon(a[2], 0.0, 1e-3);
  g_assert_cmpfloat_with_epsilon(a[3], 1.0, 1e-3);
}

/* A 2D NIfTI (nz = 1) of 1 mm pixels in the test's folder; returns its path. */
static char *write_flat(const char *name, guint32 seed)
{
  g_autoptr(NwVolume) v = nw_test_volume(40, 30, 1, 1, seed);
  g_autofree char *path = nw_test_path(name);
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_nifti_write(path, v, NW_DT_FLOAT32, FALSE, &error));
  g_assert_no_error(error);
  return g_steal_pointer(&path);
}

/* Run the script and return its "layout: " lines joined by "\n". */
static char *layouts_of(const char *name, const char *text)
{
  g_autofree char *out = nw_gui_run_script(name, text, 0, NULL);
  g_test_message("%s:\n%s", name, out);
  return lines_with(out, "layout: ");
}

/* When the layout follows the scene, and when it stays the user's. */
static void test_layout_2d(void)
{
  g_autofree char *a = write_flat("flat_a.nii.gz", 1);
  g_autofree char *b = write_flat("flat_b.nii.gz", 2);
  nw_gui_write_constant("vol_a.nii.gz", 10.0f);
  nw_gui_write_constant("vol_b.nii.gz", 20.0f);
  g_autofree char *va = nw_test_path("vol_a.nii.gz");
  g_autofree char *vb = nw_test_path("vol_b.nii.gz");

  /* automatic: the grid while empty, the axial view for 2D slices, the grid again when a
   * volume joins them */
  g_autofree char *s1 = g_strdup_printf("layout\nopen %s\nlayout\nopen %s\nlayout\nopen %s\n"
                                        "layout\nquit\n",
                                        a, b, va);
  g_autofree char *l1 = layouts_of("auto.txt", s1);
  g_assert_cmpstr(l1, ==, "layout: grid\nlayout: axial\nlayout: axial\nlayout: grid");

  /* the user's choice stays: the grid for 2D slices, then a maximised view when a volume
   * opens */
  g_autofree char *s2 = g_strdup_printf("open %s\nlayout\nview grid\nopen %s\nlayout\n"
                                        "view sagittal\nopen %s\nlayout\nquit\n",
                                        a, b, va);
  g_autofree char *l2 = layouts_of("chosen.txt", s2);
  g_assert_cmpstr(l2, ==, "layout: axial\nlayout: grid\nlayout: sagittal");

  /* the automatic axial view named by the script ("view axial", as --view does) is the
   * user's too */
  g_autofree char *s3 = g_strdup_printf("open %s\nview axial\nopen %s\nlayout\nquit\n", a, va);
  g_autofree char *l3 = layouts_of("named.txt", s3);
  g_assert_cmpstr(l3, ==, "layout: axial");

  /* a 3D pair keeps the 2x2 grid */
  g_autofree char *s4 = g_strdup_printf("open %s\nopen %s\nlayout\nquit\n", va, vb);
  g_autofree char *l4 = layouts_of("pair-3d.txt", s4);
  g_assert_cmpstr(l4, ==, "layout: grid");
}

int main(int argc, char **argv)
{
  if (!nw_gui_test_init(&argc, &argv))
    return NW_TEST_SKIP;
  g_test_add_func("/gui/pair-2d", test_pair_2d);
  g_test_add_func("/gui/layout-2d", test_layout_2d);
  return g_test_run();
}
