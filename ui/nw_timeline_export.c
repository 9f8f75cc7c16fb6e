/* nw_timeline_export.c — a run's timeline as numbered PNGs in a new folder (see
 * nw_timeline_export.h). Main thread. */
#include "nw_timeline_export.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>

#include "nw_anim_gif.h"
#include "nw_error.h"
#include "nw_run_panel.h"

/* The kept iterations now, oldest first: drawing a frame may take a new live frame into the
 * timeline, which may drop old ones, so its frames are not walked while drawing. */
static GArray *kept_iterations(NwRun *r)
{
  const NwTimeline *t = nw_run_get_timeline(r);
  GArray *its = g_array_new(FALSE, FALSE, sizeof(int));
  for (guint i = 0; i < nw_timeline_n_frames(t); i++)
    g_array_append_val(its, nw_timeline_get(t, i)->iteration);
  return its;
}

/* The half-made folder and what is in it go (a failed export leaves nothing). */
static void remove_folder(const char *dir)
{
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  for (const char *name; d != NULL && (name = g_dir_read_name(d)) != NULL;) {
    g_autofree char *path = g_build_filename(dir, name, NULL);
    g_unlink(path);
  }
  g_rmdir(dir);
}

/* Every frame of its into tmp, then iterations.txt. */
static gboolean write_frames(NwWindow *w, NwRunPanel *p, const GArray *its, const char *tmp,
                             int cell, GError **error)
{
  GString *index = g_string_new(NULL);
  gboolean ok = TRUE;
  for (guint i = 0; i < its->len && ok; i++) {
    const int it = g_array_index(its, int, i);
    g_autofree char *name = g_strdup_printf("frame-%05u.png", i);
    g_autofree char *path = g_build_filename(tmp, name, NULL);
    ok = nw_run_panel_scrub(p, it, error) && nw_window_save_screenshot(w, path, cell, error);
    g_string_append_printf(index, "%u %d\n", i, it);
  }
  g_autofree char *list = g_build_filename(tmp, "iterations.txt", NULL);
  /* g_file_set_contents writes a temporary file and renames it */
  ok = ok && g_file_set_contents(list, index->str, (gssize)index->len, error);
  g_string_free(index, TRUE);
  return ok;
}

/* FALSE, with the message export gives, when run 1 keeps no frame. */
static gboolean have_frames(NwWindow *w, const char *what, GError **error)
{
  NwRun *r = nw_run_panel_get_run(nw_window_get_run_panel(w), 0);
  if (r != NULL && nw_timeline_n_frames(nw_run_get_timeline(r)) > 0)
    return TRUE;
  g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "export %s: no run frames kept", what);
  return FALSE;
}

gboolean nw_timeline_export_png(NwWindow *w, const char *dir, int cell, guint *n_frames,
                                GError **error)
{
  if (!have_frames(w, dir, error))
    return FALSE;
  NwRunPanel *p = nw_window_get_run_panel(w);
  NwRun *r = nw_run_panel_get_run(p, 0);
  if (g_file_test(dir, G_FILE_TEST_EXISTS)) {
    g_set_error(error, NW_ERROR, NW_ERROR_EXISTS, "export %s: exists already", dir);
    return FALSE;
  }
  g_autofree char *tmp = g_strdup_printf("%s.partial-XXXXXX", dir);
  if (g_mkdtemp_full(tmp, 0755) == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "export %s: %s", dir, g_strerror(errno));
    return FALSE;
  }
  g_autoptr(GArray) its = kept_iterations(r);
  const int was = nw_run_get_scrub(r);
  gboolean ok = write_frames(w, p, its, tmp, cell, error);
  nw_run_panel_scrub(p, was, NULL); /* what the user looked at before */
  if (ok && g_rename(tmp, dir) != 0) {
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "export %s: %s", dir, g_strerror(errno));
    ok = FALSE;
  }
  if (!ok)
    remove_folder(tmp);
  else if (n_frames != NULL)
    *n_frames = its->len;
  return ok;
}

gboolean nw_timeline_export_gif(NwWindow *w, const char *path, int cell, guint *n_frames,
                                GError **error)
{
  if (!have_frames(w, path, error))
    return FALSE;
  /* the PNG sequence in a private folder, read back as the animation's frames */
  g_autofree char *tmp = g_dir_make_tmp("neurowarp-anim-XXXXXX", error);
  if (tmp == NULL)
    return FALSE;
  g_autofree char *dir = g_build_filename(tmp, "frames", NULL);
  guint n = 0;
  gboolean ok = nw_timeline_export_png(w, dir, cell, &n, error);
  g_autoptr(GPtrArray) frames = g_ptr_array_new_with_free_func(g_object_unref);
  for (guint i = 0; ok && i < n; i++) {
    g_autofree char *name = g_strdup_printf("frame-%05u.png", i);
    g_autofree char *png = g_build_filename(dir, name, NULL);
    GdkPixbuf *pb = gdk_pixbuf_new_from_file(png, error);
    ok = pb != NULL;
    if (ok)
      g_ptr_array_add(frames, pb);
  }
  ok = ok && nw_anim_gif_write(path, frames, NW_TIMELINE_GIF_DELAY_CS, error);
  remove_folder(dir);
  g_rmdir(tmp);
  if (ok && n_frames != NULL)
    *n_frames = n;
  return ok;
}
