/* gui_testutil.c — the application under X for tests (see gui_testutil.h). */
#include "gui_testutil.h"

#include <stdio.h>
#include <stdlib.h>

#include "io_nifti.h"
#include "testutil.h"

#if !defined(NW_GUI_BINARY) || !defined(NW_CLI_BINARY)
#error "NW_GUI_BINARY and NW_CLI_BINARY must name the neurowarp and neurowarp-cli executables"
#endif

gboolean nw_gui_test_init(int *argc, char ***argv)
{
  g_test_init(argc, argv, NULL);
  if (g_getenv("DISPLAY") != NULL && g_getenv("DISPLAY")[0] != '\0')
    return TRUE;
  printf("SKIP: no DISPLAY (run under xvfb-run)\n");
  return FALSE;
}

void nw_image_load(NwImage *im, const char *path)
{
  g_autoptr(GError) error = NULL;
  im->pb = gdk_pixbuf_new_from_file(path, &error);
  g_assert_no_error(error);
  im->w = gdk_pixbuf_get_width(im->pb);
  im->h = gdk_pixbuf_get_height(im->pb);
  im->stride = gdk_pixbuf_get_rowstride(im->pb);
  im->nch = gdk_pixbuf_get_n_channels(im->pb);
  im->px = gdk_pixbuf_read_pixels(im->pb);
}

void nw_image_clear(NwImage *im)
{
  g_clear_object(&im->pb);
  im->px = NULL;
}

const guint8 *nw_image_at(const NwImage *im, int x, int y)
{
  g_assert_true(x >= 0 && y >= 0 && x < im->w && y < im->h);
  return im->px + (size_t)y * im->stride + (size_t)x * im->nch;
}

void nw_image_assert_rgb(const NwImage *im, int x, int y, int r, int g, int b, int tol)
{
  const guint8 *p = nw_image_at(im, x, y);
  if (abs(p[0] - r) > tol || abs(p[1] - g) > tol || abs(p[2] - b) > tol)
    g_error("pixel (%d, %d) is (%d, %d, %d), expected (%d, %d, %d) +- %d", x, y, p[0], p[1], p[2],
            r, g, b, tol);
}

char **nw_gui_environ(void)
{
  char **env = g_get_environ();
  env = g_environ_setenv(env, "LIBGL_ALWAYS_SOFTWARE", "1", TRUE);
  env = g_environ_setenv(env, "GDK_BACKEND", "x11", TRUE);
  env = g_environ_setenv(env, "GDK_SCALE", "1", TRUE);
  /* recent files, caches and settings go to the test's folder, not the user's home */
  env = g_environ_setenv(env, "XDG_DATA_HOME", nw_test_tmpdir(), TRUE);
  env = g_environ_setenv(env, "XDG_CACHE_HOME", nw_test_tmpdir(), TRUE);
  env = g_environ_setenv(env, "XDG_CONFIG_HOME", nw_test_tmpdir(), TRUE);
  return env;
}

/* Run argv (NULL-terminated) with env; asserts the exit status; stdout and stderr. */
static void run_checked(GPtrArray *argv, char **env, int want_status, char **out, char **err)
{
  int status = 0;
  g_autoptr(GError) error = NULL;
  g_ptr_array_add(argv, NULL);
  g_assert_true(g_spawn_sync(NULL, (char **)argv->pdata, env, G_SPAWN_DEFAULT, NULL, NULL, out, err,
                             &status, &error));
  g_assert_no_error(error);
  g_autoptr(GError) wait_error = NULL;
  int code = 0;
  if (!g_spawn_check_wait_status(status, &wait_error))
    code = wait_error->domain == G_SPAWN_EXIT_ERROR ? wait_error->code : -1;
  if (code != want_status)
    g_error("%s: exit status %d (%s), wanted %d; stderr:\n%s",
            (const char *)g_ptr_array_index(argv, 0), code, wait_error ? wait_error->message : "ok",
            want_status, *err);
}

static GPtrArray *command(const char *program, const char *const *args)
{
  GPtrArray *argv = g_ptr_array_new();
  g_ptr_array_add(argv, (char *)program);
  for (int i = 0; args[i] != NULL; i++)
    g_ptr_array_add(argv, (char *)args[i]);
  return argv;
}

char *nw_gui_run_env(const char *const *args, const char *const *env_extra, int want_status,
                     char **out_text)
{
  g_autoptr(GPtrArray) argv = command(NW_GUI_BINARY, args);
  g_auto(GStrv) env = nw_gui_environ();
  for (int i = 0; env_extra != NULL && env_extra[i] != NULL; i += 2)
    env = g_environ_setenv(env, env_extra[i], env_extra[i + 1], TRUE);
  char *out = NULL, *err = NULL;
  run_checked(argv, env, want_status, &out, &err);
  if (out_text != NULL)
    *out_text = out;
  else
    g_free(out);
  return err;
}

char *nw_gui_run_out(const char *const *args, int want_status, char **out_text)
{
  return nw_gui_run_env(args, NULL, want_status, out_text);
}

char *nw_gui_run_cli(const char *const *args, int want_status, char **err_text)
{
  g_autoptr(GPtrArray) argv = command(NW_CLI_BINARY, args);
  char *out = NULL, *err = NULL;
  run_checked(argv, NULL, want_status, &out, &err);
  if (err_text != NULL)
    *err_text = err;
  else
    g_free(err);
  return out;
}

char *nw_gui_run(const char *const *args, int want_status)
{
  return nw_gui_run_out(args, want_status, NULL);
}

char *nw_gui_run_script(const char *name, const char *text, int want_status, char **err_text)
{
  g_autofree char *script = nw_gui_write_script(name, text);
  const char *args[] = {"--no-demo", "--shot-size", NW_GUI_SHOT, "--script", script, NULL};
  char *out = NULL;
  char *err = nw_gui_run_out(args, want_status, &out);
  if (err_text != NULL)
    *err_text = err;
  else
    g_free(err);
  return out;
}

void nw_gui_write_constant(const char *name, float value)
{
  g_autoptr(NwVolume) v = nw_volume_new(50, 50, 50, 1, NULL);
  nw_volume_set_spacing(v, 2, 2, 2);
  for (size_t i = 0; i < nw_volume_n_voxels(v); i++)
    v->data[i] = value;
  g_autofree char *path = nw_test_path(name);
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_nifti_write(path, v, NW_DT_FLOAT32, FALSE, &error));
  g_assert_no_error(error);
}

char *nw_gui_write_script(const char *name, const char *text)
{
  char *path = nw_test_path(name);
  g_assert_true(g_file_set_contents(path, text, -1, NULL));
  return path;
}

void nw_gui_axial_pixel(double x, double y, double *px, double *py)
{
  *px = 0.5 * NW_GUI_CELL + (x - NW_GUI_CENTRE) / NW_GUI_MMPP;
  *py = 0.5 * NW_GUI_CELL - (y - NW_GUI_CENTRE) / NW_GUI_MMPP;
}

gboolean nw_gui_is_crosshair(const guint8 *p)
{
  return p[0] > 200 && p[1] > 150 && p[2] < 90;
}

int nw_gui_axial_changed(const NwImage *a, const NwImage *b, int tol,
                         gboolean (*skip)(const NwImage *im, int x, int y))
{
  int n = 0;
  for (int y = 0; y < NW_GUI_CELL; y++)
    for (int x = 0; x < NW_GUI_CELL; x++) {
      if (skip != NULL && (skip(a, x, y) || skip(b, x, y)))
        continue;
      const guint8 *p = nw_image_at(a, x, y), *q = nw_image_at(b, x, y);
      n += abs(p[0] - q[0]) > tol || abs(p[1] - q[1]) > tol || abs(p[2] - q[2]) > tol;
    }
  return n;
}
