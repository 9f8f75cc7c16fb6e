/* test_gui_labels.c — label names and colours (issue 15, point 4), on the running
 * application under X: a label map opens with the table beside it (MRIcron .txt + .lut, a
 * FreeSurferColorLUT.txt in its folder), is drawn in the table's colours, and the status bar
 * names the label under the pointer; an ITK-SNAP label description loaded later recolours,
 * renames and hides labels; with mricron-data, the AAL atlas reads its own names. Skips (77)
 * without a DISPLAY. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gui_testutil.h"
#include "io_nifti.h"
#include "testutil.h"

/* Labels 1 (world x < 49 mm) and 2 (x > 49 mm), 50^3 voxels of 2 mm. */
static char *write_two_labels(const char *name)
{
  g_autoptr(NwVolume) v = nw_volume_new(50, 50, 50, 1, NULL);
  nw_volume_set_spacing(v, 2, 2, 2);
  for (int k = 0; k < 50; k++)
    for (int j = 0; j < 50; j++)
      for (int i = 0; i < 50; i++)
        v->data[nw_volume_index(v, i, j, k)] = i < 25 ? 1.0f : 2.0f;
  char *path = nw_test_path(name);
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_nifti_write(path, v, NW_DT_UINT8, FALSE, &error));
  return path;
}

static void write_file(const char *name, const void *data, gssize len)
{
  g_autofree char *path = nw_test_path(name);
  g_assert_true(g_file_set_contents(path, data, len, NULL));
}

/* The status lines after pointer moves to the left and right halves of the axial view. */
static char *hover_script(const char *open_line, const char *more, const char *shot)
{
  /* The pause before the first move: the X server's own crossing events for the newly shown
   * window may still be on their way, and a late leave-notify puts the status bar back on the
   * crosshair between a synthetic move and the status line (seen twice on a loaded CI run). */
  return g_strdup_printf("%s\nopacity 1 %s\nsleep 500\npointer axial 0.3 0.5\nstatus\n"
                         "pointer axial 0.7 0.5\nstatus\nscreenshot-view axial %s\n%s\nquit\n",
                         open_line, "%LAYER%", shot, more);
}

static char *run_hover(const char *layer, const char *path, const char *more, const char *shot)
{
  g_autofree char *open = g_strdup_printf("open %s", path);
  g_autofree char *raw = hover_script(open, more, shot);
  g_auto(GStrv) parts = g_strsplit(raw, "%LAYER%", -1);
  g_autofree char *text = g_strjoinv(layer, parts);
  g_autofree char *script = nw_gui_write_script("hover.txt", text);
  const char *args[] = {"--no-demo", "--shot-size", "200", "--script", script, NULL};
  char *out = NULL;
  g_autofree char *err = nw_gui_run_out(args, 0, &out);
  return out;
}

/* MRIcron's pair beside the image: names from atlas.nii.txt, colours from atlas.nii.lut. */
static void test_mricron_table(void)
{
  g_autofree char *path = write_two_labels("atlas.nii.gz");
  write_file("atlas.nii.txt", "1 Precentral_L 2001\n2 Precentral_R 2002\n", -1);
  guint8 lut[768] = {0};
  lut[1] = 250, lut[256 + 1] = 10, lut[512 + 1] = 10; /* 1: red */
  lut[2] = 10, lut[256 + 2] = 10, lut[512 + 2] = 250; /* 2: blue */
  write_file("atlas.nii.lut", lut, sizeof lut);
  g_autofree char *shot = nw_test_path("mricron.png");
  g_autofree char *out = run_hover("atlas.nii.gz", path, "", shot);
  const char *left = strstr(out, "status: pointer ");
  g_assert_nonnull(left);
  g_assert_nonnull(strstr(left, "atlas.nii.gz 1 Precentral_L\n"));
  const char *right = strstr(left + 1, "status: pointer ");
  g_assert_nonnull(right);
  g_assert_nonnull(strstr(right, "atlas.nii.gz 2 Precentral_R\n"));
  NwImage im;
  nw_image_load(&im, shot);
  nw_image_assert_rgb(&im, 100, 120, 250, 10, 10, 2);
  nw_image_assert_rgb(&im, 300, 120, 10, 10, 250, 2);
  nw_image_clear(&im);
}

/* FreeSurferColorLUT.txt in the folder; then an ITK-SNAP description: label 1 renamed and
 * green, label 2 hidden (VIS 0). */
static void test_freesurfer_then_itksnap(void)
{
  g_autofree char *dir = nw_test_path("fs");
  g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
  g_autofree char *path = write_two_labels("fs/aseg.nii.gz");
  write_file("fs/FreeSurferColorLUT.txt",
             "#No. Label Name:                R   G   B   A\n\n"
             "0   Unknown                     0   0   0   0\n"
             "1   Left-Cerebral-Exterior      70  130 180 0\n"
             "2   Left-Cerebral-White-Matter  245 245 245 0\n",
             -1);
  write_file("snap.label",
             "################################################\n"
             "# ITK-SnAP Label Description File\n"
             "    0     0    0    0        0  0  0    \"Clear Label\"\n"
             "    1     0  255    0        1  1  1    \"Green one\"\n"
             "    2   255  255    0        1  0  1    \"Hidden two\"\n",
             -1);
  g_autofree char *snap = nw_test_path("snap.label"), *after = nw_test_path("snap.png");
  g_autofree char *shot = nw_test_path("fs.png");
  g_autofree char *more = g_strdup_printf(
      "label-table %s aseg.nii.gz\npointer axial 0.3 0.5\nstatus\nscreenshot-view axial %s", snap,
      after);
  g_autofree char *out = run_hover("aseg.nii.gz", path, more, shot);
  /* once seen to fail on a loaded CI machine: what the script printed, to know why */
  if (strstr(out, "aseg.nii.gz 1 Left-Cerebral-Exterior\n") == NULL)
    g_test_message("the script printed:\n%s", out);
  g_assert_nonnull(strstr(out, "aseg.nii.gz 1 Left-Cerebral-Exterior\n"));
  g_assert_nonnull(strstr(out, "aseg.nii.gz 2 Left-Cerebral-White-Matter\n"));
  g_assert_nonnull(strstr(out, "aseg.nii.gz 1 Green one\n"));
  NwImage im;
  nw_image_load(&im, shot);
  nw_image_assert_rgb(&im, 100, 120, 70, 130, 180, 2);
  nw_image_assert_rgb(&im, 300, 120, 245, 245, 245, 2);
  nw_image_clear(&im);
  nw_image_load(&im, after);
  nw_image_assert_rgb(&im, 100, 120, 0, 255, 0, 2);
  /* hidden: the view's background shows through */
  const guint8 *p = nw_image_at(&im, 300, 120);
  g_assert_cmpint(MAX(p[0], MAX(p[1], p[2])), <, 40);
  nw_image_clear(&im);
}

/* Debian's mricron-data: aal.nii.gz with its own table; the voxel's label read from the file
 * and its name in the status bar. */
static void test_aal(void)
{
  const char *aal = "/usr/share/mricron/templates/aal.nii.gz";
  if (!g_file_test(aal, G_FILE_TEST_IS_REGULAR)) {
    g_test_skip("mricron-data is not installed");
    return;
  }
  g_autoptr(GError) error = NULL;
  g_autoptr(NwVolume) v = nw_nifti_read(aal, &error);
  g_assert_no_error(error);
  /* a voxel of label 37 (Hippocampus_L in AAL) */
  double ras[3] = {0, 0, 0};
  gboolean found = FALSE;
  for (int k = 0; k < v->nz && !found; k++)
    for (int j = 0; j < v->ny && !found; j++)
      for (int i = 0; i < v->nx && !found; i++)
        if (v->data[nw_volume_index(v, i, j, k)] == 37.0f &&
            v->data[nw_volume_index(v, i + 1, j, k)] == 37.0f &&
            v->data[nw_volume_index(v, i - 1, j, k)] == 37.0f) {
          const double ijk[3] = {i, j, k};
          nw_volume_voxel_to_world(v, ijk, ras);
          found = TRUE;
        }
  g_assert_true(found);
  g_autofree char *text =
      g_strdup_printf("open %s\ncrosshair %g %g %g\nstatus\nquit\n", aal, ras[0], ras[1], ras[2]);
  g_autofree char *err = NULL;
  g_autofree char *out = nw_gui_run_script("aal.txt", text, 0, &err);
  g_assert_nonnull(strstr(out, "aal.nii.gz 37 Hippocampus_L\n"));
}

int main(int argc, char **argv)
{
  if (!nw_gui_test_init(&argc, &argv))
    return NW_TEST_SKIP;
  g_test_add_func("/gui/mricron-table", test_mricron_table);
  g_test_add_func("/gui/freesurfer-itksnap", test_freesurfer_then_itksnap);
  g_test_add_func("/gui/aal", test_aal);
  return g_test_run();
}
