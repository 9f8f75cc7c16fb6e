/* test_gui_orientation.c — orientation conventions of the running application under X
 * (issue 15, point 5): the radiological switch mirrors the axial and coronal views left to
 * right, pixel for pixel, and swaps their L/R letters, the sagittal view unchanged; the 3D
 * view's orientation marker turns with the camera: from behind R points right, from the
 * front left, S up in both. Skips (77) without a DISPLAY. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gui_testutil.h"
#include "io_nifti.h"
#include "testutil.h"

enum { VIEW = 2 * NW_GUI_CELL };

/* A volume stored LAS with a marker on the patient's right (world x 80..98 mm) in its upper
 * half (y > 60 mm), so no mirror or flip of it looks the same. */
static char *write_marker_volume(void)
{
  g_autoptr(NwVolume) v = nw_volume_new(50, 50, 50, 1, NULL);
  const double aff[16] = {-2, 0, 0, 98, 0, 2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1};
  nw_volume_set_affine(v, aff);
  for (int k = 0; k < 50; k++)
    for (int j = 0; j < 50; j++)
      for (int i = 0; i < 50; i++)
        v->data[nw_volume_index(v, i, j, k)] = i < 10 && j > 30 ? 100.0f : 20.0f + j;
  char *path = nw_test_path("las.nii.gz");
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_nifti_write(path, v, NW_DT_FLOAT32, FALSE, &error));
  return path;
}

static gboolean is_crosshair_col(int x)
{
  return abs(x - VIEW / 2) <= 3;
}

/* Neurological then radiological: every image pixel of the axial and coronal views is its
 * mirror's, the sagittal view is the same picture. */
static void test_radiological(void)
{
  g_autofree char *path = write_marker_volume();
  g_autofree char *dir = g_strdup(nw_test_tmpdir());
  g_autofree char *text =
      g_strdup_printf("open %s\noverlay axial\nscreenshot-view axial %s/n-ax.png\n"
                      "screenshot-view coronal %s/n-co.png\nscreenshot-view sagittal %s/n-sa.png\n"
                      "radiological on\noverlay axial\noverlay coronal\noverlay sagittal\n"
                      "screenshot-view axial %s/r-ax.png\nscreenshot-view coronal %s/r-co.png\n"
                      "screenshot-view sagittal %s/r-sa.png\nquit\n",
                      path, dir, dir, dir, dir, dir, dir);
  g_autofree char *err = NULL;
  g_autofree char *out = nw_gui_run_script("rad.txt", text, 0, &err);
  const char *n = strstr(out, "overlay: letters L R A P\n");
  g_assert_nonnull(n);
  const char *r = strstr(n, "overlay: letters R L A P\n");
  g_assert_nonnull(r);
  g_assert_nonnull(strstr(r, "overlay: letters R L S I\n"));
  g_assert_nonnull(strstr(r, "overlay: letters P A S I\n"));
  static const char *const views[] = {"ax", "co", "sa"};
  for (int v = 0; v < 3; v++) {
    g_autofree char *np = g_strdup_printf("%s/n-%s.png", dir, views[v]);
    g_autofree char *rp = g_strdup_printf("%s/r-%s.png", dir, views[v]);
    NwImage a, b;
    nw_image_load(&a, np);
    nw_image_load(&b, rp);
    int checked = 0, bright = 0;
    /* inside the picture, away from the letters, the crosshair and the bars */
    for (int y = 40; y < VIEW - 60; y += 2)
      for (int x = 40; x < VIEW - 40; x++) {
        const int mx = v < 2 ? VIEW - 1 - x : x;
        if (is_crosshair_col(x) || abs(y - VIEW / 2) <= 3)
          continue;
        const guint8 *p = nw_image_at(&b, x, y), *q = nw_image_at(&a, mx, y);
        if (abs(p[0] - q[0]) > 1 || abs(p[1] - q[1]) > 1 || abs(p[2] - q[2]) > 1)
          g_error("%s view: radiological (%d, %d) = (%d, %d, %d) but neurological (%d, %d) = "
                  "(%d, %d, %d)",
                  views[v], x, y, p[0], p[1], p[2], mx, y, q[0], q[1], q[2]);
        checked++;
        bright += p[0] == 255;
      }
    g_assert_cmpint(checked, >, 10000);
    if (v == 0) /* the marker (white) is in the compared region: not a blank picture */
      g_assert_cmpint(bright, >, 500);
    nw_image_clear(&a);
    nw_image_clear(&b);
  }
  /* the marker on the patient's right: screen right in neurological, left in radiological */
  NwImage a, b;
  g_autofree char *np = g_strdup_printf("%s/n-ax.png", dir);
  g_autofree char *rp = g_strdup_printf("%s/r-ax.png", dir);
  nw_image_load(&a, np);
  nw_image_load(&b, rp);
  const int y = (int)(0.5 * VIEW - (80 - NW_GUI_CENTRE) / (NW_GUI_MMPP / 2));
  const int x_right = (int)(0.5 * VIEW + (90 - NW_GUI_CENTRE) / (NW_GUI_MMPP / 2));
  nw_image_assert_rgb(&a, x_right, y, 255, 255, 255, 2);
  nw_image_assert_rgb(&b, VIEW - 1 - x_right, y, 255, 255, 255, 2);
  g_assert_cmpint(nw_image_at(&b, x_right, y)[0], <, 200);
  nw_image_clear(&a);
  nw_image_clear(&b);
}

/* Centroid of the pixels of the marker's axis colours in the bottom-left quarter. */
static void axis_centroids(const char *png, double red[2], double blue[2])
{
  NwImage im;
  nw_image_load(&im, png);
  double sr[3] = {0, 0, 0}, sb[3] = {0, 0, 0};
  for (int y = im.h / 2; y < im.h; y++)
    for (int x = 0; x < im.w / 2; x++) {
      const guint8 *p = nw_image_at(&im, x, y);
      if (p[0] > 200 && p[1] < 110 && p[2] < 110)
        sr[0] += x, sr[1] += y, sr[2]++;
      if (p[2] > 200 && p[1] < 180 && p[0] < 120) /* not the letters' light blue */
        sb[0] += x, sb[1] += y, sb[2]++;
    }
  g_assert_cmpfloat(sr[2], >, 20);
  g_assert_cmpfloat(sb[2], >, 20);
  red[0] = sr[0] / sr[2], red[1] = sr[1] / sr[2];
  blue[0] = sb[0] / sb[2], blue[1] = sb[1] / sb[2];
  nw_image_clear(&im);
}

static void test_orientation_marker(void)
{
  nw_gui_write_constant("grey.nii.gz", 50.0f);
  g_autofree char *path = nw_test_path("grey.nii.gz");
  g_autofree char *back = nw_test_path("back.png"), *front = nw_test_path("front.png");
  g_autofree char *text = g_strdup_printf("open %s\ncamera 0 0\nscreenshot-view 3d %s\n"
                                          "camera 180 0\nscreenshot-view 3d %s\nquit\n",
                                          path, back, front);
  g_autofree char *err = NULL;
  g_free(nw_gui_run_script("marker.txt", text, 0, &err));
  double red[2], blue[2];
  /* from behind (posterior): R to the right of the vertical S axis, S above R */
  axis_centroids(back, red, blue);
  g_assert_cmpfloat(red[0], >, blue[0] + 5);
  g_assert_cmpfloat(blue[1], <, red[1] - 5);
  /* from the front: R to the left */
  axis_centroids(front, red, blue);
  g_assert_cmpfloat(red[0], <, blue[0] - 5);
  g_assert_cmpfloat(blue[1], <, red[1] - 5);
}

int main(int argc, char **argv)
{
  if (!nw_gui_test_init(&argc, &argv))
    return NW_TEST_SKIP;
  g_test_add_func("/gui/radiological", test_radiological);
  g_test_add_func("/gui/orientation-marker", test_orientation_marker);
  return g_test_run();
}
