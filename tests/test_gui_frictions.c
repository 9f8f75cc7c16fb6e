/* test_gui_frictions.c — issue 15's small frictions, checked on the running application
 * under X: the sidebar starts on the Layers page with its switcher agreeing; Recent files
 * shows file names with their underscores; the menus show their accelerators, Ctrl+S saving
 * the session and F12 / Shift+F12 taking the pictures; a preset name that is neither
 * shipped nor a file gets a message naming it, the folder searched and the presets there.
 * `neurowarp --version` answers; the usage reads "[OPTION…]" in a UTF-8 locale; layers move
 * up and down the drawing order, the list's top row being the layer drawn on top; "Save layer
 * as" writes what was opened so that it reads back the same, and never replaces a file
 * unasked; files dropped on the window open, whatever their names, and a dropped web
 * address gets a message.
 * Skips (77) without a DISPLAY. */
#include <stdio.h>
#include <string.h>

#include "gui_testutil.h"
#include "io_nifti.h"
#include "testutil.h"

/* The window as it comes up on the demo case: the Layers page is shown and its button is
 * the pressed one; switching to Run moves both. */
static void test_start_page(void)
{
  g_autofree char *script =
      nw_gui_write_script("start.txt", "sidebar\nsidebar run\nsidebar\nquit\n");
  const char *args[] = {"--script", script, NULL};
  g_autofree char *out = NULL;
  g_autofree char *err = nw_gui_run_out(args, 0, &out);
  const char *first = strstr(out, "sidebar: ");
  g_assert_nonnull(first);
  g_assert_true(g_str_has_prefix(first, "sidebar: page layers · switch Layers\n"));
  g_assert_nonnull(strstr(first + 1, "sidebar: page run · switch Run\n"));
}

/* The primary menu as drawn, after opening sform_zero.nii.gz: the recent file keeps its
 * underscore (a menu label reads "_z" as a mnemonic), and the items show their keys. */
static void test_menus(void)
{
  nw_gui_write_constant("sform_zero.nii.gz", 100.0f);
  g_autofree char *path = nw_test_path("sform_zero.nii.gz");
  /* the recent manager writes its list and announces it a moment after the load */
  g_autofree char *text = g_strdup_printf("open %s\nsleep 2000\nmenu primary\nquit\n", path);
  g_autofree char *err = NULL;
  g_autofree char *out = nw_gui_run_script("menus.txt", text, 0, &err);
  g_assert_nonnull(strstr(out, "menu: Recent files\t\nmenu:   sform_zero.nii.gz\t\n"));
  g_assert_nonnull(strstr(out, "menu: Open…\tCtrl+O\n"));
  g_assert_nonnull(strstr(out, "menu: Save session…\tCtrl+S\n"));
  g_assert_nonnull(strstr(out, "menu: Save results…\tCtrl+R\n"));
  g_assert_nonnull(strstr(out, "menu: Save layer as…\tShift+Ctrl+S\n"));
  g_assert_nonnull(strstr(out, "menu: Screenshot of the view…\tF12\n"));
  g_assert_nonnull(strstr(out, "menu: Export the 2×2 figure…\tShift+F12\n"));
  g_assert_nonnull(strstr(out, "menu: Export the run's frames…\t\n"));
  g_assert_nonnull(strstr(out, "menu: Quit\tCtrl+Q\n"));
}

static void test_preset_message(void)
{
  g_autofree char *script = nw_gui_write_script("preset.txt", "method demons\npreset brian\n");
  const char *args[] = {"--no-demo", "--script", script, NULL};
  g_autofree char *err = nw_gui_run(args, 2);
  g_assert_nonnull(strstr(err, "neurowarp: preset \"brian\": no demons preset of that name in /"));
  g_assert_nonnull(
      strstr(err, "/presets (demons-*.ini: \"brain MRI\"), and no file of that name\n"));
}

static void test_version_and_usage(void)
{
  const char *version[] = {"--version", NULL};
  g_autofree char *out = NULL;
  g_autofree char *err = nw_gui_run_out(version, 0, &out);
  g_assert_true(g_regex_match_simple("^neurowarp \\d+\\.\\d+\\.\\d+\n$", out, 0, 0));
  const char *help[] = {"--help", NULL};
  const char *utf8[] = {"LC_ALL", "C.UTF-8", NULL};
  g_autofree char *usage = NULL;
  g_autofree char *err2 = nw_gui_run_env(help, utf8, 0, &usage);
  g_assert_nonnull(strstr(usage, "neurowarp [OPTION…] [FILE…]"));
  g_assert_nonnull(strstr(usage, "--version"));
  g_assert_null(strstr(usage, "?]"));
}

/* fixed = 100 under moving = 50, no comparison: the top layer is what the view shows. */
static void test_layer_order(void)
{
  nw_gui_write_constant("fixed.nii.gz", 100.0f);
  nw_gui_write_constant("moving.nii.gz", 50.0f);
  g_autofree char *fixed = nw_test_path("fixed.nii.gz"), *moving = nw_test_path("moving.nii.gz");
  g_autofree char *dir = g_strdup(nw_test_tmpdir());
  g_autofree char *text = g_strdup_printf(
      "open %s\nopen %s\ncompare none\nwindow 100 50\nlayers\nscreenshot-view axial %s/o1.png\n"
      "lower moving.nii.gz\nlayers\nscreenshot-view axial %s/o2.png\n"
      "raise moving.nii.gz\nlayers\nquit\n",
      fixed, moving, dir, dir);
  g_autofree char *script = nw_gui_write_script("order.txt", text);
  const char *args[] = {"--no-demo", "--shot-size", "100", "--script", script, NULL};
  g_autofree char *out = NULL;
  g_autofree char *err = nw_gui_run_out(args, 0, &out);
  const char *l1 = strstr(out, "layers: moving.nii.gz | fixed.nii.gz\n");
  g_assert_nonnull(l1);
  const char *l2 = strstr(l1, "layers: fixed.nii.gz | moving.nii.gz\n");
  g_assert_nonnull(l2);
  g_assert_nonnull(strstr(l2, "layers: moving.nii.gz | fixed.nii.gz\n"));
  NwImage im;
  g_autofree char *o1 = g_strdup_printf("%s/o1.png", dir), *o2 = g_strdup_printf("%s/o2.png", dir);
  nw_image_load(&im, o1);
  nw_image_assert_rgb(&im, 40, 40, 128, 128, 128, 2); /* moving on top */
  nw_image_clear(&im);
  nw_image_load(&im, o2);
  nw_image_assert_rgb(&im, 40, 40, 255, 255, 255, 2); /* fixed on top */
  nw_image_clear(&im);
}

/* An image and a field of constant displacement (2, 0, 0) voxels saved and read back. */
static void test_save_layer(void)
{
  nw_gui_write_constant("image.nii.gz", 100.0f);
  g_autoptr(NwVolume) u = nw_volume_new(50, 50, 50, 3, NULL);
  nw_volume_set_spacing(u, 2, 2, 2);
  for (size_t i = 0; i < nw_volume_n_voxels(u); i++)
    u->data[i * 3] = 2.0f;
  g_autofree char *field = nw_test_path("u.nii.gz"), *image = nw_test_path("image.nii.gz");
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_nifti_write_field(field, u, NW_FIELD_ITK, &error));
  g_autofree char *img_out = nw_test_path("saved_image.nii.gz");
  g_autofree char *u_out = nw_test_path("saved_u.nii.gz");
  g_autofree char *text = g_strdup_printf("open %s\nopen %s\nsave-layer %s image.nii.gz\n"
                                          "save-layer %s u.nii.gz\nsave-layer %s image.nii.gz\n",
                                          image, field, img_out, u_out, img_out);
  g_autofree char *script = nw_gui_write_script("save.txt", text);
  const char *args[] = {"--no-demo", "--script", script, NULL};
  /* the third save finds the file of the first: refused, the script stops (2) */
  g_autofree char *err = nw_gui_run(args, 2);
  g_assert_nonnull(strstr(err, "saved_image.nii.gz: exists already"));
  g_autoptr(NwVolume) im = nw_nifti_read(img_out, &error);
  g_assert_no_error(error);
  g_assert_cmpint(im->nx, ==, 50);
  g_assert_cmpfloat(im->data[nw_volume_index(im, 10, 20, 30)], ==, 100.0f);
  g_autoptr(NwVolume) v = nw_nifti_read_field(u_out, &error);
  g_assert_no_error(error);
  g_assert_cmpint(v->nc, ==, 3);
  g_assert_cmpfloat(nw_test_max_abs_diff(u, v), <, 1e-5);
}

/* Two files dropped at once, one with a space and an accent in its name (escaped in the
 * uri-list), and a web address. */
static void test_drop(void)
{
  nw_gui_write_constant("my scan é.nii.gz", 100.0f);
  nw_gui_write_constant("b_2.nii.gz", 50.0f);
  g_autofree char *a = nw_test_path("my scan é.nii.gz"), *b = nw_test_path("b_2.nii.gz");
  g_autofree char *text = g_strdup_printf(
      "drop %s | %s | https://example.org/scan.nii.gz\nlayers\nstatus\nquit\n", a, b);
  g_autofree char *err = NULL;
  g_autofree char *out = nw_gui_run_script("drop.txt", text, 0, &err);
  /* both opened (loads run side by side: either order) */
  g_assert_true(strstr(out, "layers: b_2.nii.gz | my scan é.nii.gz\n") != NULL ||
                strstr(out, "layers: my scan é.nii.gz | b_2.nii.gz\n") != NULL);
  g_assert_nonnull(strstr(out, "my scan é.nii.gz 100"));
  g_assert_nonnull(strstr(out, "b_2.nii.gz 50"));
  g_assert_nonnull(strstr(err, "neurowarp: error: Could not open https://example.org/scan.nii.gz: "
                               "only files on this computer can be dropped\n"));
}

int main(int argc, char **argv)
{
  if (!nw_gui_test_init(&argc, &argv))
    return NW_TEST_SKIP;
  g_test_add_func("/gui/start-page", test_start_page);
  g_test_add_func("/gui/menus", test_menus);
  g_test_add_func("/gui/preset-message", test_preset_message);
  g_test_add_func("/gui/version-and-usage", test_version_and_usage);
  g_test_add_func("/gui/layer-order", test_layer_order);
  g_test_add_func("/gui/save-layer", test_save_layer);
  g_test_add_func("/gui/drop", test_drop);
  return g_test_run();
}
