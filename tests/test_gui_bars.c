/* test_gui_bars.c — reading values and sizes off the views (issue 15, point 1), on the
 * running application under X: the colour bar of the difference runs from the colour of
 * A − B = −range to that of +range with white in the middle; a field drawn as log-Jacobian
 * has a bar whose colour at the field's log det J is the colour the view shows, and the
 * status bar reads log det J (not |u|); the scale bar is as long as its millimetres.
 * Skips (77) without a DISPLAY. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gui_testutil.h"
#include "io_nifti.h"
#include "testutil.h"

/* Screenshots of one view are 2 cells square (screenshot-view); the test volumes' views
 * then show NW_GUI_MMPP / 2 mm per pixel. */
enum { VIEW = 2 * NW_GUI_CELL };

typedef struct {
  char title[64], map[16];
  double lo, hi;
  int x, y, w, h;
} Bar;

/* The first "overlay: bar" line after from; FALSE when there is none. */
static gboolean parse_bar(const char *from, Bar *b, const char **next)
{
  const char *l = strstr(from, "overlay: bar \"");
  if (l == NULL)
    return FALSE;
  l += strlen("overlay: bar \"");
  const char *q = strchr(l, '"');
  g_assert_nonnull(q);
  g_strlcpy(b->title, l, MIN(sizeof b->title, (size_t)(q - l + 1)));
  g_assert_cmpint(sscanf(q + 1, " %15s %lf %lf strip %d %d %d %d", b->map, &b->lo, &b->hi, &b->x,
                         &b->y, &b->w, &b->h),
                  ==, 7);
  if (next != NULL)
    *next = q;
  return TRUE;
}

static const guint8 *strip_px(const NwImage *im, const Bar *b, int column)
{
  return nw_image_at(im, b->x + column, b->y + b->h / 2);
}

static void assert_same(const guint8 *p, const guint8 *q, int tol, const char *what)
{
  if (abs(p[0] - q[0]) > tol || abs(p[1] - q[1]) > tol || abs(p[2] - q[2]) > tol)
    g_error("%s: (%d, %d, %d) vs (%d, %d, %d)", what, p[0], p[1], p[2], q[0], q[1], q[2]);
}

/* fixed = 100, moving = 50, window [0, 100]: the difference's range is half the window, so
 * A − B = +50 is the red end and B − A (swapped) the blue end. */
static void test_difference_bar(void)
{
  nw_gui_write_constant("fixed.nii.gz", 100.0f);
  nw_gui_write_constant("moving.nii.gz", 50.0f);
  g_autofree char *fixed = nw_test_path("fixed.nii.gz"), *moving = nw_test_path("moving.nii.gz");
  g_autofree char *plus = nw_test_path("plus.png"), *minus = nw_test_path("minus.png");
  g_autofree char *text =
      g_strdup_printf("open %s\nopen %s\nwindow 100 50\ncompare difference\noverlay axial\n"
                      "screenshot-view axial %s\naction win.swap-compare\nwindow 100 50\n"
                      "screenshot-view axial %s\nquit\n",
                      fixed, moving, plus, minus);
  g_autofree char *err = NULL;
  g_autofree char *out = nw_gui_run_script("diff.txt", text, 0, &err);
  Bar b;
  g_assert_true(parse_bar(out, &b, NULL));
  g_assert_cmpstr(b.title, ==, "A − B");
  g_assert_cmpstr(b.map, ==, "diverging");
  g_assert_cmpfloat(b.lo, ==, -50.0);
  g_assert_cmpfloat(b.hi, ==, 50.0);
  g_assert_cmpint(b.x + b.w, <=, VIEW);
  NwImage p, m;
  nw_image_load(&p, plus);
  nw_image_load(&m, minus);
  const guint8 *red = nw_image_at(&p, 60, 60), *blue = nw_image_at(&m, 60, 60);
  nw_image_assert_rgb(&p, 60, 60, 180, 10, 35, 3); /* the diverging map's red end */
  assert_same(strip_px(&p, &b, b.w - 1), red, 2, "bar's right end vs A − B = +50");
  assert_same(strip_px(&p, &b, 0), blue, 2, "bar's left end vs A − B = −50");
  g_assert_cmpint(blue[2], >, blue[0] + 60);
  const guint8 *mid = strip_px(&p, &b, (b.w - 1) / 2);
  g_assert_cmpint(MIN(mid[0], MIN(mid[1], mid[2])), >, 200); /* white: A = B */
  /* the dark outline frames the strip */
  g_assert_cmpint(nw_image_at(&p, b.x - 1, b.y + 2)[0], <, 40);
  nw_image_clear(&p);
  nw_image_clear(&m);
}

/* A field of uniform expansion u = a (x − c) voxels: det J = (1 + a)^3 everywhere inside. */
static void test_log_jacobian_bar_and_status(void)
{
  const double a = 0.1, logdet = 3.0 * log(1.0 + a);
  g_autoptr(NwVolume) u = nw_volume_new(50, 50, 50, 3, NULL);
  nw_volume_set_spacing(u, 2, 2, 2);
  for (int k = 0; k < 50; k++)
    for (int j = 0; j < 50; j++)
      for (int i = 0; i < 50; i++) {
        float *d = u->data + nw_volume_index(u, i, j, k) * 3;
        d[0] = (float)(a * (i - 24.5)), d[1] = (float)(a * (j - 24.5)),
        d[2] = (float)(a * (k - 24.5));
      }
  g_autofree char *field = nw_test_path("expand.nii.gz"), *shot = nw_test_path("logjac.png");
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_nifti_write_field(field, u, NW_FIELD_ITK, &error));
  g_autofree char *text = g_strdup_printf(
      "open %s\ncrosshair 50 50 50\nstatus\nfield log-jacobian expand.nii.gz\nstatus\n"
      "opacity 1 expand.nii.gz\noverlay axial\nscreenshot-view axial %s\nquit\n",
      field, shot);
  g_autofree char *err = NULL;
  g_autofree char *out = nw_gui_run_script("logjac.txt", text, 0, &err);
  /* drawn as a grid the status bar reads |u|; as log-Jacobian, log det J */
  const char *s1 = strstr(out, "status: ");
  g_assert_nonnull(s1);
  g_assert_nonnull(strstr(s1, "expand.nii.gz |u| "));
  const char *s2 = strstr(s1 + 1, "status: ");
  g_assert_nonnull(s2);
  g_autofree char *want = g_strdup_printf("expand.nii.gz log det J %.3f\n", logdet);
  g_assert_nonnull(strstr(s2, want));
  g_assert_null(strstr(strchr(s2, '\n') - strlen(want) + 1, "|u|"));
  /* the bar: symmetric range holding log det J (0.286 -> 0.3, nw_layer.h), and its colour
   * where log det J lies is the view's colour (the layer made opaque for the comparison) */
  Bar b;
  g_assert_true(parse_bar(out, &b, NULL));
  g_assert_cmpstr(b.title, ==, "expand.nii.gz: log det J");
  g_assert_cmpfloat(fabs(b.hi - 0.3), <, 1e-6);
  g_assert_cmpfloat(fabs(b.lo + 0.3), <, 1e-6);
  NwImage im;
  nw_image_load(&im, shot);
  const double t = (logdet - b.lo) / (b.hi - b.lo);
  const int column = (int)lround(t * (b.w - 1));
  assert_same(strip_px(&im, &b, column), nw_image_at(&im, 120, 120), 6,
              "bar at log det J vs the view");
  nw_image_clear(&im);
}

/* The scale bar: its millimetres over the view's mm per pixel, white, in a dark frame. */
static void test_scale_bar(void)
{
  nw_gui_write_constant("grey.nii.gz", 0.0f); /* black: the bar is the only white */
  g_autofree char *path = nw_test_path("grey.nii.gz"), *shot = nw_test_path("scale.png");
  g_autofree char *text =
      g_strdup_printf("open %s\noverlay axial\nscreenshot-view axial %s\nquit\n", path, shot);
  g_autofree char *err = NULL;
  g_autofree char *out = nw_gui_run_script("scale.txt", text, 0, &err);
  double mm = 0;
  int x, y, w, h;
  const char *l = strstr(out, "overlay: scale ");
  g_assert_nonnull(l);
  g_assert_cmpint(sscanf(l, "overlay: scale %lf mm bar %d %d %d %d", &mm, &x, &y, &w, &h), ==, 5);
  /* 0.26 mm per pixel: a quarter of 400 pixels is 26 mm, so the bar shows 20 mm */
  const double mmpp = NW_GUI_MMPP / 2;
  g_assert_cmpfloat(mm, ==, 20.0);
  NwImage im;
  nw_image_load(&im, shot);
  int run = 0;
  for (int i = x - 3; i < x + w + 3; i++) {
    const guint8 *p = nw_image_at(&im, i, y + h / 2);
    run += p[0] == 255 && p[1] == 255 && p[2] == 255;
  }
  g_test_message("scale bar: %d white pixels, layout %d, expected %.1f", run, w, 20.0 / mmpp);
  g_assert_cmpint(abs(run - (int)lround(20.0 / mmpp)), <=, 1);
  g_assert_cmpint(nw_image_at(&im, x - 1, y + h / 2)[0], <, 40);
  g_assert_cmpint(nw_image_at(&im, x + w, y + h / 2)[0], <, 40);
  nw_image_clear(&im);
}

int main(int argc, char **argv)
{
  if (!nw_gui_test_init(&argc, &argv))
    return NW_TEST_SKIP;
  g_test_add_func("/gui/difference-bar", test_difference_bar);
  g_test_add_func("/gui/log-jacobian-bar", test_log_jacobian_bar_and_status);
  g_test_add_func("/gui/scale-bar", test_scale_bar);
  return g_test_run();
}
