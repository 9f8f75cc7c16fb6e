/* test_gui_results.c — opening results as ITK-SNAP and Slicer users expect (issue 15, point
 * 3), on the running application under X: a run's summary JSON opens the run's files with
 * the fixed image and the warped result compared and the rest hidden; a Jacobian map opens
 * as a diverging overlay (transparent where nothing changes) with its colour bar; the end of
 * a run says what was achieved and which files were saved (point 7). Skips (77) without a
 * DISPLAY. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gui_testutil.h"
#include "io_nifti.h"
#include "testutil.h"

/* The demo pair registered by neurowarp-cli (3 iterations), then its summary opened. */
static void test_open_summary(void)
{
  g_autofree char *dir = nw_test_path("demo");
  const char *demo[] = {"demo-data", dir, NULL};
  g_free(nw_gui_run_cli(demo, 0, NULL));
  g_autofree char *fixed = g_build_filename(dir, "fixed_2mm.nii.gz", NULL);
  g_autofree char *moving = g_build_filename(dir, "moving_2mm.nii.gz", NULL);
  g_autofree char *fl = g_build_filename(dir, "fixed_labels_2mm.nii.gz", NULL);
  g_autofree char *ml = g_build_filename(dir, "moving_labels_2mm.nii.gz", NULL);
  g_autofree char *prefix = g_build_filename(dir, "r", NULL);
  const char *reg[] = {"demons", fixed,
                       moving,   "-o",
                       prefix,   "--levels",
                       "1",      "--iterations",
                       "3",      "--device",
                       "cpu",    "--fixed-labels",
                       fl,       "--moving-labels",
                       ml,       "--outputs",
                       "all",    NULL};
  g_free(nw_gui_run_cli(reg, 0, NULL));
  g_autofree char *text = g_strdup_printf("open %s_summary.json\nlayers\nstatus\nquit\n", prefix);
  g_autofree char *err = NULL;
  g_autofree char *out = nw_gui_run_script("summary.txt", text, 0, &err);
  /* every file of the run is a layer: inputs, warped image and labels, fields, Jacobian */
  const char *layers = strstr(out, "layers: ");
  g_assert_nonnull(layers);
  static const char *const names[] = {"fixed_2mm.nii.gz",  "moving_2mm.nii.gz", "r_warped.nii.gz",
                                      "r_forward.nii.gz",  "r_inverse.nii.gz",  "r_velocity.nii.gz",
                                      "r_jacobian.nii.gz", "r_labels.nii.gz"};
  for (gsize i = 0; i < G_N_ELEMENTS(names); i++) {
    g_autofree char *row = g_strdup_printf(" %s ", names[i]);
    g_autofree char *last = g_strdup_printf(" %s\n", names[i]);
    g_assert_true(strstr(layers, row) != NULL || strstr(layers, last) != NULL);
  }
  /* shown: fixed and warped only (the status bar lists the visible layers' values) */
  const char *status = strstr(out, "status: ");
  g_assert_nonnull(status);
  g_assert_nonnull(strstr(status, "fixed_2mm.nii.gz "));
  g_assert_nonnull(strstr(status, "r_warped.nii.gz "));
  g_assert_null(strstr(status, "moving_2mm"));
  g_assert_null(strstr(status, "r_jacobian"));
  g_assert_null(strstr(status, "r_forward"));
  g_assert_nonnull(strstr(status, "\ncompare: blend: fixed_2mm.nii.gz vs r_warped.nii.gz\n"));
  g_assert_null(strstr(err, "error"));
}

/* An image of 100 under a Jacobian map: 1 (no change) on the left half, 1.3 on the right. */
static void test_jacobian_overlay(void)
{
  nw_gui_write_constant("anatomy.nii.gz", 100.0f);
  g_autoptr(NwVolume) j = nw_volume_new(50, 50, 50, 1, NULL);
  nw_volume_set_spacing(j, 2, 2, 2);
  for (int k = 0; k < 50; k++)
    for (int y = 0; y < 50; y++)
      for (int x = 0; x < 50; x++)
        j->data[nw_volume_index(j, x, y, k)] = x < 25 ? 1.0f : 1.3f;
  g_autofree char *jpath = nw_test_path("run_jacobian.nii.gz");
  g_autofree char *anatomy = nw_test_path("anatomy.nii.gz"), *shot = nw_test_path("jac.png");
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_nifti_write(jpath, j, NW_DT_FLOAT32, FALSE, &error));
  g_autofree char *text = g_strdup_printf(
      "open %s\nopen %s\noverlay axial\nscreenshot-view axial %s\nquit\n", anatomy, jpath, shot);
  g_autofree char *err = NULL;
  g_autofree char *out = nw_gui_run_script("jac.txt", text, 0, &err);
  /* diverging about 1, the range holding 1.3 */
  g_assert_nonnull(strstr(out, "overlay: bar \"run_jacobian.nii.gz\" diverging 0.7 1.3 strip "));
  NwImage im;
  nw_image_load(&im, shot);
  /* world x < 49 mm: det J = 1, transparent: the anatomy's white */
  nw_image_assert_rgb(&im, 100, 100, 255, 255, 255, 2);
  /* det J = 1.3: the red end at 70 % over white */
  const guint8 *p = nw_image_at(&im, 300, 100);
  g_assert_cmpint(p[0], >, 180);
  g_assert_cmpint(p[1], <, 110);
  g_assert_cmpint(p[0] - p[2], >, 60);
  nw_image_clear(&im);
}

/* The demo's registration, two levels: the Run page's summary of it, then of the save. */
static void test_run_summary(void)
{
  g_autofree char *dir = nw_test_path("saved");
  g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
  g_autofree char *text = g_strdup_printf(
      "demo\nmethod demons\ndevice cpu\nparam levels 2\nparam iterations 3\nrun-summary\nrun\n"
      "wait-state finished\nrun-summary\nsave-results %s/out\nrun-summary\n"
      "screenshot-plot %s/plot.png\nquit\n",
      dir, dir);
  g_autofree char *err = NULL;
  g_autofree char *out = nw_gui_run_script("summary-run.txt", text, 0, &err);
  /* nothing before a run has ended */
  g_assert_nonnull(strstr(out, "run-summary: none\n"));
  /* how it ended, iterations per level, time, device */
  const char *s = strstr(out, "run-summary: Finished: ");
  g_assert_nonnull(s);
  int n = 0, l1 = 0, l2 = 0;
  double seconds = -1;
  g_assert_cmpint(
      sscanf(s, "run-summary: Finished: %d iterations (levels %d + %d) in %lf s on the CPU", &n,
             &l1, &l2, &seconds),
      ==, 4);
  g_assert_cmpint(n, ==, l1 + l2);
  g_assert_cmpint(l1, >=, 1);
  g_assert_cmpfloat(seconds, >, 0.0);
  /* the metric improved from its value before the registration */
  double ncc0 = 0, ncc1 = 0;
  const char *ncc = strstr(s, "run-summary: NCC ");
  g_assert_nonnull(ncc);
  g_assert_cmpint(sscanf(ncc, "run-summary: NCC %lf → %lf", &ncc0, &ncc1), ==, 2);
  g_assert_cmpfloat(ncc1, >, ncc0);
  g_assert_nonnull(strstr(ncc, " · smallest det J "));
  /* Dice of the demo's labels (the moving labels warped with the image) */
  double d1 = 0, d0 = 0;
  unsigned labels = 0;
  const char *dice = strstr(s, "run-summary: Dice ");
  g_assert_nonnull(dice);
  g_assert_cmpint(
      sscanf(dice, "run-summary: Dice %lf (before %lf), mean over %u labels", &d1, &d0, &labels),
      ==, 3);
  g_assert_cmpfloat(d1, >, d0);
  g_assert_cmpuint(labels, >, 1);
  /* after saving: the files, all of which exist */
  g_autofree char *saved = g_strdup_printf("run-summary: Saved 7 files in %s: out_warped.nii.gz, "
                                           "out_forward.nii.gz, out_inverse.nii.gz, "
                                           "out_velocity.nii.gz, out_jacobian.nii.gz, "
                                           "out_labels.nii.gz, out_surface.gii\n",
                                           dir);
  g_assert_nonnull(strstr(out, saved));
  g_autofree char *labels_file = g_build_filename(dir, "out_labels.nii.gz", NULL);
  g_assert_true(g_file_test(labels_file, G_FILE_TEST_IS_REGULAR));
  /* the plot's NCC panel (the second of three) has the dotted line of the NCC before, in
   * its own grey (nw_plot.c: 0.35) */
  g_autofree char *plot = g_build_filename(dir, "plot.png", NULL);
  NwImage im;
  nw_image_load(&im, plot);
  int before = 0;
  for (int y = im.h / 3; y < 2 * im.h / 3; y++)
    for (int x = im.w / 2; x < im.w; x++) {
      const guint8 *p = nw_image_at(&im, x, y);
      before += abs(p[0] - 89) <= 6 && p[0] == p[1] && p[1] == p[2];
    }
  g_assert_cmpint(before, >, 20);
  nw_image_clear(&im);
}

int main(int argc, char **argv)
{
  if (!nw_gui_test_init(&argc, &argv))
    return NW_TEST_SKIP;
  g_test_add_func("/gui/open-summary", test_open_summary);
  g_test_add_func("/gui/jacobian-overlay", test_jacobian_overlay);
  g_test_add_func("/gui/run-summary", test_run_summary);
  return g_test_run();
}
