/* test_gui.c — the application itself under X (Xvfb + Mesa software GL): it is started as
 * a user would, driven by its command-line options and a script, and its screenshots are
 * checked pixel by pixel: the demo shows a brain in the three slice views and a lit surface
 * in the 3D view; comparison modes, the crosshair, window/level and opening a field change
 * the picture as expected; a corrupt file gives an error message and the application goes
 * on. Skips (77) without a DISPLAY. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo.h"
#include "gui_testutil.h"
#include "io_nifti.h"
#include "testutil.h"

static void test_demo_figure(void)
{
  g_autofree char *shot = nw_test_path("demo.png");
  const char *args[] = {"--shot-size", "200", "--screenshot", shot, NULL};
  g_autofree char *err = nw_gui_run(args, 0);
  NwImage im;
  nw_image_load(&im, shot);
  g_assert_cmpint(im.w, ==, 2 * NW_GUI_CELL + 2);
  for (int q = 0; q < 4; q++) {
    int ox = (q % 2) * (NW_GUI_CELL + 2), oy = (q / 2) * (NW_GUI_CELL + 2), bright = 0, surface = 0,
        cross = 0, contour = 0;
    for (int y = 0; y < NW_GUI_CELL; y++)
      for (int x = 0; x < NW_GUI_CELL; x++) {
        const guint8 *p = nw_image_at(&im, ox + x, oy + y);
        bright += MAX(p[0], MAX(p[1], p[2])) > 80;
        surface += p[0] > 120 && p[0] >= p[1] && p[0] > p[2] + 40 && !nw_gui_is_crosshair(p);
        cross += nw_gui_is_crosshair(p);
        contour += p[0] > 200 && p[1] > 150 && p[1] < 230 && p[2] < 170 && p[0] - p[2] > 60 &&
                   !nw_gui_is_crosshair(p);
      }
    if (q < 3) {
      /* the brain fills a good part of every slice view; the crosshair crosses it */
      g_assert_cmpint(bright, >, NW_GUI_CELL * NW_GUI_CELL / 5);
      g_assert_cmpint(cross, >, NW_GUI_CELL);
      /* the brain surface's outline where it cuts the slice */
      g_assert_cmpint(contour, >, 100);
    } else {
      /* lit skin-coloured surface in the 3D view */
      g_assert_cmpint(surface, >, NW_GUI_CELL * NW_GUI_CELL / 50);
    }
  }
}

/* fixed = 100, moving = 50 everywhere; both shown with window [0, 100]. */
static void test_compare_and_actions(void)
{
  nw_gui_write_constant("fixed.nii.gz", 100.0f);
  nw_gui_write_constant("moving.nii.gz", 50.0f);
  g_autofree char *fixed = nw_test_path("fixed.nii.gz");
  g_autofree char *moving = nw_test_path("moving.nii.gz");
  g_autofree char *dir = g_strdup(nw_test_tmpdir());
  g_autofree char *text =
      g_strdup_printf("open %s\nopen %s\nwindow 100 50\n"
                      "screenshot %s/blend.png\n"
                      "compare checker\ntile 10\nscreenshot %s/checker.png\n"
                      "compare difference\nscreenshot %s/difference.png\n"
                      "compare curtain\ncurtain 0.3\nscreenshot %s/curtain.png\n"
                      "flicker-period 0\ncompare flicker\nscreenshot %s/f0.png\nflicker-step\n"
                      "screenshot %s/f1.png\nflicker-step\nscreenshot %s/f2.png\n"
                      "flicker-period 40\nsleep 300\nflicker-period 0\nscreenshot %s/f3.png\n"
                      "compare none\nscreenshot %s/none.png\n"
                      "window 200 100\nscreenshot %s/window.png\n"
                      "crosshair 60 30 49\nscreenshot %s/crosshair.png\nstatus\n"
                      "zoom axial 2\nscreenshot %s/zoom.png\n"
                      "quit\n",
                      fixed, moving, dir, dir, dir, dir, dir, dir, dir, dir, dir, dir, dir, dir);
  g_autofree char *err = NULL;
  g_autofree char *out = nw_gui_run_script("compare.txt", text, 0, &err);
  NwImage im;
  g_autofree char *p = NULL;

  /* the status bar follows the crosshair: world and voxel position, both values */
  g_assert_nonnull(
      strstr(out, "status: crosshair  RAS (60.0, 30.0, 49.0) mm   voxel (30, 15, 25)"));
  g_assert_nonnull(strstr(out, "fixed.nii.gz 100   moving.nii.gz 50"));

  /* blend: A magenta, B green at half -> (255, 128, 255) */
  p = g_build_filename(dir, "blend.png", NULL);
  nw_image_load(&im, p);
  nw_image_assert_rgb(&im, 60, 60, 255, 128, 255, 2);
  g_object_unref(im.pb);

  /* checkerboard of 10 mm tiles: A (white) and B (mid grey) by tile parity */
  g_free(p);
  p = g_build_filename(dir, "checker.png", NULL);
  nw_image_load(&im, p);
  int n = 0, n_a = 0;
  for (int y = 30; y < NW_GUI_CELL - 30; y += 3)
    for (int x = 30; x < NW_GUI_CELL - 30; x += 3) {
      if (abs(x - NW_GUI_CELL / 2) < 3 || abs(y - NW_GUI_CELL / 2) < 3)
        continue; /* crosshair */
      double wx = NW_GUI_CENTRE + (x + 0.5 - 0.5 * NW_GUI_CELL) * NW_GUI_MMPP,
             wy = NW_GUI_CENTRE - (y + 0.5 - 0.5 * NW_GUI_CELL) * NW_GUI_MMPP;
      double fx = wx / 10 - floor(wx / 10), fy = wy / 10 - floor(wy / 10);
      if (fx < 0.1 || fx > 0.9 || fy < 0.1 || fy > 0.9)
        continue;
      int parity = ((int)floor(wx / 10) + (int)floor(wy / 10) + (int)floor(NW_GUI_CENTRE / 10)) & 1;
      int want = parity == 0 ? 255 : 128;
      nw_image_assert_rgb(&im, x, y, want, want, want, 2);
      n++;
      n_a += parity == 0;
    }
  g_assert_cmpint(n, >, 100);
  g_assert_cmpint(n_a, >, n / 4);
  g_assert_cmpint(n_a, <, 3 * n / 4);
  g_object_unref(im.pb);

  /* difference A - B = +50 = the default range (half of A's window): the red end */
  g_free(p);
  p = g_build_filename(dir, "difference.png", NULL);
  nw_image_load(&im, p);
  nw_image_assert_rgb(&im, 60, 60, 180, 10, 35, 3);
  g_object_unref(im.pb);

  /* curtain at 30 % of the width: A left of it, B right */
  g_free(p);
  p = g_build_filename(dir, "curtain.png", NULL);
  nw_image_load(&im, p);
  nw_image_assert_rgb(&im, (int)(0.3 * NW_GUI_CELL) - 5, 60, 255, 255, 255, 2);
  nw_image_assert_rgb(&im, (int)(0.3 * NW_GUI_CELL) + 5, 60, 128, 128, 128, 2);
  g_object_unref(im.pb);

  /* flicker with the timer stopped: A first, then each step switches; with the timer on
   * for a while the picture is still one of the two, never a mix */
  for (int i = 0; i < 4; i++) {
    g_autofree char *name = g_strdup_printf("f%d.png", i);
    g_free(p);
    p = g_build_filename(dir, name, NULL);
    nw_image_load(&im, p);
    const guint8 *c = nw_image_at(&im, 60, 60);
    if (i < 3) {
      const int want = i == 1 ? 128 : 255;
      nw_image_assert_rgb(&im, 60, 60, want, want, want, 2);
    } else {
      g_assert_true(c[0] == c[2] && (abs(c[0] - 255) <= 2 || abs(c[0] - 128) <= 2));
    }
    g_object_unref(im.pb);
  }

  /* layers only: moving (50) drawn over fixed */
  g_free(p);
  p = g_build_filename(dir, "none.png", NULL);
  nw_image_load(&im, p);
  nw_image_assert_rgb(&im, 60, 60, 128, 128, 128, 2);
  g_object_unref(im.pb);

  /* window 200, level 100: 50 maps to a quarter of the grey ramp */
  g_free(p);
  p = g_build_filename(dir, "window.png", NULL);
  nw_image_load(&im, p);
  nw_image_assert_rgb(&im, 60, 60, 64, 64, 64, 2);
  g_object_unref(im.pb);

  /* the crosshair lines move to x = 60 mm and y = 30 mm in the axial view */
  g_free(p);
  p = g_build_filename(dir, "crosshair.png", NULL);
  nw_image_load(&im, p);
  double px, py;
  nw_gui_axial_pixel(60, 30, &px, &py);
  int row = 40, col = 40; /* away from the other line */
  g_assert_true(nw_gui_is_crosshair(nw_image_at(&im, (int)floor(px), row)));
  g_assert_false(nw_gui_is_crosshair(nw_image_at(&im, NW_GUI_CELL / 2, row)));
  g_assert_true(nw_gui_is_crosshair(nw_image_at(&im, col, (int)floor(py))));
  g_assert_false(nw_gui_is_crosshair(nw_image_at(&im, col, NW_GUI_CELL / 2)));
  g_object_unref(im.pb);

  /* zoom 2 about the view centre (49, 49): the vertical line at x = 60 doubles its offset */
  g_free(p);
  p = g_build_filename(dir, "zoom.png", NULL);
  nw_image_load(&im, p);
  double zx = 0.5 * NW_GUI_CELL + 2.0 * (60 - NW_GUI_CENTRE) / NW_GUI_MMPP;
  g_assert_true(nw_gui_is_crosshair(nw_image_at(&im, (int)floor(zx), row)));
  g_assert_false(nw_gui_is_crosshair(nw_image_at(&im, (int)floor(px), row)));
  g_object_unref(im.pb);
}

/* A field of constant displacement (2, 0, 0) voxels: its grid is the regular grid moved by
 * 4 mm along x, and its log-Jacobian is 0 everywhere (the white middle of the map). */
static void test_open_field(void)
{
  g_autoptr(NwVolume) u = nw_volume_new(50, 50, 50, 3, NULL);
  nw_volume_set_spacing(u, 2, 2, 2);
  for (size_t i = 0; i < nw_volume_n_voxels(u); i++)
    u->data[i * 3] = 2.0f;
  g_autofree char *field = nw_test_path("field.nii.gz");
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_nifti_write_field(field, u, NW_FIELD_ITK, &error));
  g_assert_no_error(error);
  g_autofree char *grid_png = nw_test_path("grid.png");
  g_autofree char *jac_png = nw_test_path("jacobian.png");
  g_autofree char *text =
      g_strdup_printf("open %s\nscreenshot %s\nhide field.nii.gz\nshow field.nii.gz: log-Jacobian\n"
                      "screenshot %s\nquit\n",
                      field, grid_png, jac_png);
  g_autofree char *err = NULL;
  g_free(nw_gui_run_script("field.txt", text, 0, &err));
  NwImage im;
  nw_image_load(&im, grid_png);
  /* vertical grid lines at x = 8 m + 4 mm, horizontal ones at y = 8 m; row at y = 52 mm lies
   * between horizontal lines */
  double px, py, px_old, dummy;
  nw_gui_axial_pixel(44, 52, &px, &py);
  nw_gui_axial_pixel(40, 52, &px_old, &dummy);
  const guint8 *on = nw_image_at(&im, (int)floor(px), (int)floor(py));
  const guint8 *off = nw_image_at(&im, (int)floor(px_old), (int)floor(py));
  g_assert_cmpint(on[1], >, 150);
  g_assert_cmpint(on[2], >, 150);
  g_assert_cmpint(off[1], <, 60);
  g_object_unref(im.pb);
  nw_image_load(&im, jac_png);
  const guint8 *j = nw_image_at(&im, 60, 60);
  g_assert_cmpint(abs(j[0] - j[2]), <, 8); /* neutral: neither blue nor red */
  g_assert_cmpint(j[0], >, 150);
  g_object_unref(im.pb);
}

static void test_corrupt_file(void)
{
  nw_gui_write_constant("good.nii.gz", 100.0f);
  g_autofree char *good = nw_test_path("good.nii.gz");
  g_autofree char *bad = nw_test_path("corrupt.nii");
  /* a NIfTI-sized header of junk */
  char junk[400];
  memset(junk, 'x', sizeof junk);
  g_assert_true(g_file_set_contents(bad, junk, sizeof junk, NULL));
  g_autofree char *shot = nw_test_path("after-error.png");
  const char *args[] = {"--no-demo",   "--open", good,           "--open", bad,
                        "--shot-size", "200",    "--screenshot", shot,     NULL};
  g_autofree char *err = nw_gui_run(args, 1);
  /* the message names the file; the window went on and drew the good file, and the run
   * exits 1 because a file it was given could not be opened (issue 9, point 6) */
  g_assert_nonnull(strstr(err, "Could not open"));
  g_assert_nonnull(strstr(err, "corrupt.nii"));
  NwImage im;
  nw_image_load(&im, shot);
  nw_image_assert_rgb(&im, 60, 60, 255, 255, 255, 2);
  g_object_unref(im.pb);
}

/* A volume stored with the x axis flipped (i grows towards the patient's left, as in
 * radiological LAS files): a marker in the first 10 columns lies at world x 80..98 mm, on
 * the patient's right, and must show on the screen's right of the axial view. */
static void test_orientation(void)
{
  g_autoptr(NwVolume) v = nw_volume_new(50, 50, 50, 1, NULL);
  const double aff[16] = {-2, 0, 0, 98, 0, 2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1};
  nw_volume_set_affine(v, aff);
  for (int k = 0; k < 50; k++)
    for (int j = 0; j < 50; j++)
      for (int i = 0; i < 50; i++)
        v->data[nw_volume_index(v, i, j, k)] = i < 10 ? 100.0f : 20.0f;
  char code[4];
  nw_volume_orientation_code(v, code);
  g_assert_cmpstr(code, ==, "LAS");
  g_autofree char *path = nw_test_path("las.nii.gz");
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_nifti_write(path, v, NW_DT_FLOAT32, FALSE, &error));
  g_autofree char *shot = nw_test_path("las.png");
  const char *args[] = {"--no-demo", path, "--shot-size", "200", "--screenshot", shot, NULL};
  g_autofree char *err = nw_gui_run(args, 0);
  NwImage im;
  nw_image_load(&im, shot);
  double px, py;
  nw_gui_axial_pixel(90, 60, &px, &py);
  nw_image_assert_rgb(&im, (int)px, (int)py, 255, 255, 255, 2); /* right: the marker */
  nw_gui_axial_pixel(10, 60, &px, &py);
  nw_image_assert_rgb(&im, (int)px, (int)py, 0, 0, 0, 2);
  /* coronal view (top right quadrant) too: x to the right */
  nw_image_assert_rgb(
      &im, NW_GUI_CELL + 2 + (int)(0.5 * NW_GUI_CELL + (90 - NW_GUI_CENTRE) / NW_GUI_MMPP), 60, 255,
      255, 255, 2);
  g_object_unref(im.pb);
}

static void test_bad_script(void)
{
  g_autofree char *script = nw_gui_write_script("bad.txt", "compare wipe\n");
  const char *args[] = {"--no-demo", "--script", script, NULL};
  g_autofree char *err = nw_gui_run(args, 2);
  g_assert_nonnull(strstr(err, "compare wipe"));
  g_assert_nonnull(strstr(err, "unknown comparison mode"));
}

/* Mean squared difference of two volumes on one grid. */
static double mse(const NwVolume *a, const NwVolume *b)
{
  g_assert_cmpint(nw_volume_n_voxels(a), ==, nw_volume_n_voxels(b));
  double sum = 0.0;
  for (size_t i = 0; i < nw_volume_n_voxels(a); i++)
    sum += ((double)a->data[i] - b->data[i]) * ((double)a->data[i] - b->data[i]);
  return sum / (double)nw_volume_n_voxels(a);
}

/* The demo's demons registration on the CPU, driven like a user would: start paused, two
 * single steps with a live parameter change between them, run, pause, stop, save. */
static void test_run_demons(void)
{
  g_autofree char *dir = nw_test_path("run");
  g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
  g_autofree char *text = g_strdup_printf(
      "demo\nmethod demons\ndevice cpu\nparam levels 1\nparam iterations 50\nrun-paused\n"
      "wait-state paused\nstep\nwait-iteration 1\nreadouts\nscreenshot %s/s1.png\n"
      "param sigma-diff 2.0\nstep\nwait-iteration 2\nrun\nparam levels 2\nwait-iteration 6\n"
      "pause\nwait-state paused\nreadouts\nscreenshot %s/s2.png\nscreenshot-plot %s/plot.png\n"
      "stop\nwait-state cancelled\nsave-results %s/out\nsession-save %s/s.ini\nquit\n",
      dir, dir, dir, dir, dir);
  g_autofree char *err = NULL;
  g_autofree char *out = nw_gui_run_script("run.txt", text, 0, &err);
  /* readouts: iteration 1 after the first step, >= 6 after running; host frames (no GPU) */
  const char *r1 = strstr(out, "readouts: iteration 1 ·");
  g_assert_nonnull(r1);
  const char *r2 = strstr(r1 + 1, "readouts: iteration ");
  g_assert_nonnull(r2);
  g_assert_cmpint(atoi(r2 + strlen("readouts: iteration ")), >=, 6);
  g_assert_nonnull(strstr(r1, "path host frames"));
  /* frames are made only when the views ask: at most one per display frame (+ the first,
   * asked for at the paused start) */
  const char *fr = strstr(r2, " · frames "), *df = strstr(r2, " · display-frames ");
  g_assert_nonnull(fr);
  g_assert_nonnull(df);
  const long made = atol(fr + strlen(" · frames ")),
             drawn = atol(df + strlen(" · display-frames "));
  g_test_message("frames made %ld, display frames %ld", made, drawn);
  g_assert_cmpint(made, >=, 2);
  g_assert_cmpint(made, <=, drawn + 1);
  /* a non-live change while running is refused with the job's message; the script went on */
  g_assert_nonnull(strstr(err, "levels cannot change while the job runs"));
  /* the warped image changed between the screenshots */
  g_autofree char *s1 = g_strdup_printf("%s/s1.png", dir), *s2 = g_strdup_printf("%s/s2.png", dir);
  NwImage a, b;
  nw_image_load(&a, s1);
  nw_image_load(&b, s2);
  g_assert_cmpint(nw_gui_axial_changed(&a, &b, 24, NULL), >, 200);
  g_object_unref(a.pb);
  g_object_unref(b.pb);
  /* the saved warped image is closer to fixed than moving is */
  NwDemoOptions opt;
  nw_demo_options_init(&opt);
  NwDemoCase c = {0};
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_demo_make(&opt, 2.0, &c, &error));
  g_autofree char *wpath = g_strdup_printf("%s/out_warped.nii.gz", dir);
  g_autoptr(NwVolume) warped = nw_nifti_read(wpath, &error);
  g_assert_no_error(error);
  g_assert_cmpint(warped->nx, ==, c.fixed->nx);
  g_assert_cmpint(warped->nz, ==, c.fixed->nz);
  g_assert_cmpfloat(mse(warped, c.fixed), <, 0.95 * mse(c.moving, c.fixed));
  static const char *const files[] = {"forward", "inverse", "velocity", "jacobian"};
  for (gsize i = 0; i < G_N_ELEMENTS(files); i++) {
    g_autofree char *path = g_strdup_printf("%s/out_%s.nii.gz", dir, files[i]);
    g_autoptr(NwVolume) v = i < 3 ? nw_nifti_read_field(path, &error) : nw_nifti_read(path, &error);
    g_assert_no_error(error);
    g_assert_cmpint(v->nx, ==, c.fixed->nx);
    g_assert_cmpint(v->ny, ==, c.fixed->ny);
    g_assert_cmpint(v->nc, ==, i < 3 ? 3 : 1);
  }
  g_autofree char *gii = g_strdup_printf("%s/out_surface.gii", dir);
  g_assert_true(g_file_test(gii, G_FILE_TEST_IS_REGULAR));
  nw_demo_case_clear(&c);
  /* the session keeps the live change */
  g_autofree char *ini = g_strdup_printf("%s/s.ini", dir), *session = NULL;
  g_assert_true(g_file_get_contents(ini, &session, NULL, NULL));
  g_assert_nonnull(strstr(session, "method=demons"));
  g_assert_nonnull(strstr(session, "sigma-diff=2"));
  /* the energy panel (top third of the plot) has the job's blue curve */
  g_autofree char *plot = g_strdup_printf("%s/plot.png", dir);
  NwImage pl;
  nw_image_load(&pl, plot);
  int blue = 0;
  for (int y = 0; y < pl.h / 3; y++)
    for (int x = 0; x < pl.w; x++) {
      const guint8 *p = nw_image_at(&pl, x, y);
      blue += p[2] > p[0] + 60;
    }
  g_assert_cmpint(blue, >, 30);
  g_object_unref(pl.pb);
}

/* Teaching mode: two CPU jobs with different sigma-diff side by side, stepped together, each
 * with its own readouts, both results in the scene. */
static void test_run_two_jobs(void)
{
  g_autofree char *dir = nw_test_path("two");
  g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
  g_autofree char *text = g_strdup_printf(
      "demo\nmethod demons\ndevice cpu\nparam levels 1\nparam iterations 20\n"
      "second-job on\ndevice cpu 2\nparam sigma-diff 3.0 2\nrun-paused\nwait-state paused\n"
      "step\nwait-iteration 1\nwait-state paused\nstep\nwait-iteration 2\nwait-state paused\n"
      "readouts\nstatus\nsession-save %s/two.ini\nstop\nwait-state cancelled\nquit\n",
      dir);
  g_autofree char *err = NULL;
  g_autofree char *out = nw_gui_run_script("two.txt", text, 0, &err);
  /* both jobs did exactly two iterations (Step steps both), on host frames, with timings */
  const char *r = strstr(out, "readouts: iteration 2 · ms ");
  g_assert_nonnull(r);
  const char *r2 = strstr(r, " | job 2 iteration 2 · ms ");
  g_assert_nonnull(r2);
  g_assert_cmpfloat(g_ascii_strtod(r + strlen("readouts: iteration 2 · ms "), NULL), >, 0.0);
  g_assert_cmpfloat(g_ascii_strtod(r2 + strlen(" | job 2 iteration 2 · ms "), NULL), >, 0.0);
  g_assert_nonnull(strstr(r2, "path host frames · shown 2"));
  /* both results are layers with values under the crosshair */
  const char *st = strstr(out, "status: ");
  g_assert_nonnull(st);
  g_assert_nonnull(strstr(st, "warped · 1 "));
  g_assert_nonnull(strstr(st, "warped · 2 "));
  /* the session keeps the second job and its own parameters */
  g_autofree char *ini = g_strdup_printf("%s/two.ini", dir), *session = NULL;
  g_assert_true(g_file_get_contents(ini, &session, NULL, NULL));
  g_assert_nonnull(strstr(session, "second-job=true"));
  const char *group2 = strstr(session, "[demons@2]");
  g_assert_nonnull(group2);
  g_assert_nonnull(strstr(group2, "sigma-diff=3"));
}

int main(int argc, char **argv)
{
  if (!nw_gui_test_init(&argc, &argv))
    return NW_TEST_SKIP;
  g_test_add_func("/gui/demo-figure", test_demo_figure);
  g_test_add_func("/gui/compare-and-actions", test_compare_and_actions);
  g_test_add_func("/gui/open-field", test_open_field);
  g_test_add_func("/gui/corrupt-file", test_corrupt_file);
  g_test_add_func("/gui/orientation", test_orientation);
  g_test_add_func("/gui/bad-script", test_bad_script);
  g_test_add_func("/gui/run-demons", test_run_demons);
  g_test_add_func("/gui/run-two-jobs", test_run_two_jobs);
  return g_test_run();
}
