/* test_gui_timeline.c — a run's timeline (issue 15, point 11) on the running application
 * under X: the demo's demons job stepped on the CPU keeps the frame of every iteration the
 * views showed; scrubbing back to iteration k shows exactly what the views showed live at k
 * (the run page says "shown k"), "live" follows the job again, and the export writes one
 * numbered PNG per kept frame, frames that differ, and the animated GIF one image per frame.
 * Skips (77) without a DISPLAY. */
#include <gif_lib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gui_testutil.h"
#include "testutil.h"

/* The warm colour of the iso-surface's contour (red well above blue), or next to it: the
 * surface is made from the newest frame and is not scrubbed, so its contour is left out. */
static gboolean near_contour(const NwImage *a, int x, int y)
{
  for (int dy = -1; dy <= 1; dy++)
    for (int dx = -1; dx <= 1; dx++) {
      const int u = CLAMP(x + dx, 0, NW_GUI_CELL - 1), v = CLAMP(y + dy, 0, NW_GUI_CELL - 1);
      const guint8 *p = nw_image_at(a, u, v);
      if (p[0] > p[2] + 40)
        return TRUE;
    }
  return FALSE;
}

static int changed_files(const char *a, const char *b, int tol)
{
  NwImage ia, ib;
  nw_image_load(&ia, a);
  nw_image_load(&ib, b);
  const int n = nw_gui_axial_changed(&ia, &ib, tol, near_contour);
  nw_image_clear(&ia);
  nw_image_clear(&ib);
  return n;
}

/* The "shown S" of the readouts line after the n-th "readouts:" of out. */
static int shown_of(const char *out, int n)
{
  const char *r = out;
  for (int i = 0; i < n; i++) {
    r = strstr(r, "readouts: ");
    g_assert_nonnull(r);
    r++;
  }
  const char *s = strstr(r, " · shown ");
  g_assert_nonnull(s);
  return atoi(s + strlen(" · shown "));
}

/* The animated GIF of the same frames, read back with giflib's decoder: one image per
 * exported PNG, of its size, looping, consecutive images different. */
static void check_animation(const char *out, const char *dir, int n)
{
  const char *ex = strstr(out, "export-animation: ");
  g_assert_nonnull(ex);
  g_assert_cmpint(atoi(ex + strlen("export-animation: ")), ==, n);
  g_autofree char *gif_path = g_strdup_printf("%s/run.gif", dir);
  g_autofree char *png = g_strdup_printf("%s/frames/frame-00000.png", dir);
  NwImage first;
  nw_image_load(&first, png);
  int code = 0;
  GifFileType *gif = DGifOpenFileName(gif_path, &code);
  g_assert_nonnull(gif);
  g_assert_cmpint(DGifSlurp(gif), ==, GIF_OK);
  g_assert_cmpint(gif->ImageCount, ==, n);
  g_assert_cmpint(gif->SWidth, ==, first.w);
  g_assert_cmpint(gif->SHeight, ==, first.h);
  gboolean loops = FALSE;
  for (int e = 0; e + 1 < gif->SavedImages[0].ExtensionBlockCount; e++) {
    const ExtensionBlock *b = &gif->SavedImages[0].ExtensionBlocks[e];
    if (b->Function == APPLICATION_EXT_FUNC_CODE && b->ByteCount == 11 &&
        memcmp(b->Bytes, "NETSCAPE2.0", 11) == 0)
      loops = TRUE;
  }
  g_assert_true(loops);
  const size_t px = (size_t)first.w * first.h;
  for (int i = 1; i < n; i++) {
    const SavedImage *a = &gif->SavedImages[i - 1], *b = &gif->SavedImages[i];
    int differ = 0;
    for (size_t e = 0; e < px; e++) {
      const GifColorType ca = a->ImageDesc.ColorMap->Colors[a->RasterBits[e]];
      const GifColorType cb = b->ImageDesc.ColorMap->Colors[b->RasterBits[e]];
      differ += abs(ca.Red - cb.Red) + abs(ca.Green - cb.Green) + abs(ca.Blue - cb.Blue) > 48;
    }
    g_assert_cmpint(differ, >, 100);
  }
  nw_image_clear(&first);
  DGifCloseFile(gif, &code);
}

static void test_scrub_and_export(void)
{
  g_autofree char *dir = nw_test_path("timeline");
  g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
  g_autofree char *text = g_strdup_printf(
      "demo\nmethod demons\ndevice cpu\nparam levels 1\nparam iterations 50\nrun-paused\n"
      "wait-state paused\nstep\nwait-iteration 1\nscreenshot %s/live1.png\n"
      "step\nwait-iteration 2\nstep\nwait-iteration 3\nstep\nwait-iteration 4\n"
      "screenshot %s/live4.png\n"
      "timeline 1\nreadouts\nscreenshot %s/t1.png\ntimeline 4\nreadouts\n"
      "screenshot %s/t4.png\ntimeline live\nreadouts\n"
      "export-frames %s/frames\nexport-animation %s/run.gif\nquit\n",
      dir, dir, dir, dir, dir, dir);
  g_autofree char *err = NULL;
  g_autofree char *out = nw_gui_run_script("timeline.txt", text, 0, &err);
  g_assert_cmpint(shown_of(out, 1), ==, 1);
  g_assert_cmpint(shown_of(out, 2), ==, 4);
  g_assert_cmpint(shown_of(out, 3), >=, 4); /* live again */
  g_autofree char *live1 = g_strdup_printf("%s/live1.png", dir);
  g_autofree char *live4 = g_strdup_printf("%s/live4.png", dir);
  g_autofree char *t1 = g_strdup_printf("%s/t1.png", dir);
  g_autofree char *t4 = g_strdup_printf("%s/t4.png", dir);
  /* the frames of iterations 1 and 4 differ, and scrubbing shows each as it was live */
  g_assert_cmpint(changed_files(live1, live4, 24), >, 200);
  g_assert_cmpint(changed_files(t1, live1, 2), ==, 0);
  g_assert_cmpint(changed_files(t4, live4, 2), ==, 0);
  g_assert_cmpint(changed_files(t1, t4, 24), >, 200);
  /* the export: one PNG per kept frame (iterations 1 to 4, one per step, and iteration 0
   * when the views drew the paused start's first frame before the first step's arrived),
   * listed with their iterations; consecutive frames differ */
  const char *ex = strstr(out, "export-frames: ");
  g_assert_nonnull(ex);
  const int n = atoi(ex + strlen("export-frames: "));
  g_assert_true(n == 4 || n == 5);
  const int first_it = 5 - n;
  g_autofree char *list = g_strdup_printf("%s/frames/iterations.txt", dir);
  g_autofree char *index = NULL;
  g_assert_true(g_file_get_contents(list, &index, NULL, NULL));
  GString *want = g_string_new(NULL);
  for (int i = 0; i < n; i++)
    g_string_append_printf(want, "%d %d\n", i, first_it + i);
  g_assert_cmpstr(index, ==, want->str);
  g_string_free(want, TRUE);
  for (int i = 0; i < n; i++) {
    g_autofree char *f = g_strdup_printf("%s/frames/frame-%05d.png", dir, i);
    g_assert_true(g_file_test(f, G_FILE_TEST_IS_REGULAR));
    if (i > 0) {
      g_autofree char *prev = g_strdup_printf("%s/frames/frame-%05d.png", dir, i - 1);
      g_assert_cmpint(changed_files(prev, f, 24), >, 0);
    }
    if (first_it + i == 1) /* the exported frame of iteration 1 is what the views showed */
      g_assert_cmpint(changed_files(f, live1, 2), ==, 0);
  }
  g_autofree char *extra = g_strdup_printf("%s/frames/frame-%05d.png", dir, n);
  g_assert_false(g_file_test(extra, G_FILE_TEST_EXISTS));
  check_animation(out, dir, n);
}

int main(int argc, char **argv)
{
  if (!nw_gui_test_init(&argc, &argv))
    return NW_TEST_SKIP;
  g_test_add_func("/gui/scrub-and-export", test_scrub_and_export);
  return g_test_run();
}
