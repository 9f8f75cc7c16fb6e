/* test_gui_help.c — Help in the running application under X: F1 hands the user guide to the
 * desktop's viewer for Markdown (a test viewer registered through XDG_CONFIG_HOME's
 * mimeapps.list records what it was given), Ctrl+? opens the keyboard shortcuts window
 * listing the keys of the accelerator table, the menus name Help's keys, and About shows the
 * icon, version, licence and the credits of the demo's data. Skips (77) without a
 * DISPLAY. */
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gui_testutil.h"
#include "testutil.h"

/* A viewer for text/markdown that writes the URI it is asked to open to opened.txt. */
static char *register_viewer(void)
{
  const char *dir = nw_test_tmpdir();
  g_autofree char *opened = nw_test_path("opened.txt");
  g_autofree char *viewer = nw_test_path("viewer.sh");
  g_autofree char *sh = g_strdup_printf("#!/bin/sh\necho \"$1\" > %s.part && mv %s.part %s\n",
                                        opened, opened, opened);
  g_assert_true(g_file_set_contents(viewer, sh, -1, NULL));
  g_assert_cmpint(g_chmod(viewer, 0755), ==, 0);
  g_autofree char *apps = g_build_filename(dir, "applications", NULL);
  g_assert_cmpint(g_mkdir_with_parents(apps, 0755), ==, 0);
  g_autofree char *desktop = g_build_filename(apps, "nw-test-viewer.desktop", NULL);
  g_autofree char *entry =
      g_strdup_printf("[Desktop Entry]\nType=Application\nName=Test viewer\nExec=%s %%u\n"
                      "MimeType=text/markdown;\n",
                      viewer);
  g_assert_true(g_file_set_contents(desktop, entry, -1, NULL));
  g_autofree char *mimeapps = g_build_filename(dir, "mimeapps.list", NULL);
  g_assert_true(g_file_set_contents(
      mimeapps, "[Default Applications]\ntext/markdown=nw-test-viewer.desktop\n", -1, NULL));
  return g_steal_pointer(&opened);
}

static void test_help_keys(void)
{
  g_autofree char *opened = register_viewer();
  g_autofree char *script = nw_gui_write_script(
      "help.txt", "key F1\nkey <Primary>question\nwait-window GtkShortcutsWindow\nwindows\n"
                  "window-text GtkShortcutsWindow\nmenu primary\nquit\n");
  const char *args[] = {"--no-demo", "--script", script, NULL};
  g_autofree char *out = NULL;
  g_autofree char *err = nw_gui_run_out(args, 0, &out);
  /* F1: the viewer was given the guide */
  /* the viewer is a process of its own: give it time to start */
  g_autofree char *got = NULL;
  for (int i = 0; i < 200 && !g_file_get_contents(opened, &got, NULL, NULL); i++)
    g_usleep(50000);
  g_assert_nonnull(got);
  g_strchomp(got);
  /* GIO hands a local file to "%u" as its path */
  g_autofree char *path =
      g_str_has_prefix(got, "file://") ? g_filename_from_uri(got, NULL, NULL) : g_strdup(got);
  g_assert_nonnull(path);
  g_assert_true(g_str_has_suffix(path, "/docs/USER_GUIDE.md"));
  g_assert_true(g_file_test(path, G_FILE_TEST_IS_REGULAR));
  /* Ctrl+?: the shortcuts window, with the table's actions */
  g_assert_nonnull(strstr(out, "window: GtkShortcutsWindow"));
  g_assert_nonnull(strstr(out, "text: Save the session\n"));
  g_assert_nonnull(strstr(out, "text: Keyboard shortcuts\n"));
  g_assert_nonnull(strstr(out, "menu: User guide\tF1\n"));
  g_assert_nonnull(strstr(out, "menu: Keyboard shortcuts\tCtrl+?\n"));
}

/* Dark pixels of the icon's background (#17171d) in the About dialog's picture. */
static int icon_pixels(const char *png)
{
  NwImage im;
  nw_image_load(&im, png);
  int n = 0;
  for (int y = 0; y < im.h; y++)
    for (int x = 0; x < im.w; x++) {
      const guint8 *p = nw_image_at(&im, x, y);
      n += abs(p[0] - 0x17) <= 3 && abs(p[1] - 0x17) <= 3 && abs(p[2] - 0x1d) <= 3;
    }
  nw_image_clear(&im);
  return n;
}

static void test_about(void)
{
  g_autofree char *shot = nw_test_path("about.png");
  g_autofree char *text = g_strdup_printf(
      "action app.about\nwait-window GtkAboutDialog\nscreenshot-window %s GtkAboutDialog\n"
      "click GtkAboutDialog Credits\nwindow-text GtkAboutDialog\nclick GtkAboutDialog License\n"
      "window-text GtkAboutDialog\nquit\n",
      shot);
  g_autofree char *err = NULL;
  g_autofree char *out = nw_gui_run_script("about.txt", text, 0, &err);
  g_assert_nonnull(strstr(out, "icon: org.neurowarp.Neurowarp (found)\n"));
  g_autofree char *version = g_strdup_printf("text: %s\n", "0.1.0");
  g_assert_nonnull(strstr(out, version));
  g_assert_nonnull(strstr(out, "text: Data\n"));
  g_assert_nonnull(strstr(out, "text: Colin27 (“ch2” in Debian’s mricron-data"));
  g_assert_nonnull(strstr(out, "Holmes et al."));
  g_assert_nonnull(strstr(out, "text: AAL atlas"));
  g_assert_nonnull(strstr(out, "Tzourio-Mazoyer et al."));
  g_assert_nonnull(strstr(out, "text: neurowarp has no licence yet"));
  /* the icon is drawn, not GTK's "missing image": a 128-pixel icon's dark square */
  g_assert_cmpint(icon_pixels(shot), >, 5000);
}

int main(int argc, char **argv)
{
  if (!nw_gui_test_init(&argc, &argv))
    return NW_TEST_SKIP;
  g_test_add_func("/gui/help-keys", test_help_keys);
  g_test_add_func("/gui/about", test_about);
  return g_test_run();
}
