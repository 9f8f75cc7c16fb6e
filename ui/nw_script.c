/* nw_script.c — the script runner (see nw_script.h). Main thread only. */
#include "nw_script.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nw_error.h"
#include "nw_layer_save.h"
#include "nw_run_panel.h"
#include "nw_screenshot.h"
#include "nw_script_private.h"
#include "nw_timeline_export.h"

/* The main window as the X server shows it, GL views included; another window (a dialog,
 * no GL) drawn by GTK itself now, so that a window just opened is pictured whole even before
 * the X server has its first frame. */
static gboolean screenshot_window(GtkWindow *w, const char *path, GError **error)
{
  GdkWindow *gw = gtk_widget_get_window(GTK_WIDGET(w));
  g_autoptr(GdkPixbuf) pb = NULL;
  if (NW_IS_WINDOW(w)) {
    pb = gdk_pixbuf_get_from_window(gw, 0, 0, gdk_window_get_width(gw), gdk_window_get_height(gw));
  } else {
    const int width = gtk_widget_get_allocated_width(GTK_WIDGET(w)),
              height = gtk_widget_get_allocated_height(GTK_WIDGET(w));
    cairo_surface_t *cs = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height);
    cairo_t *cr = cairo_create(cs);
    gtk_widget_draw(GTK_WIDGET(w), cr);
    cairo_destroy(cr);
    pb = gdk_pixbuf_get_from_surface(cs, 0, 0, width, height);
    cairo_surface_destroy(cs);
  }
  if (pb == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "%s: the window could not be read back", path);
    return FALSE;
  }
  g_autoptr(GdkPixbuf) rgba = gdk_pixbuf_add_alpha(pb, FALSE, 0, 0, 0);
  int width = gdk_pixbuf_get_width(rgba), height = gdk_pixbuf_get_height(rgba);
  int stride = gdk_pixbuf_get_rowstride(rgba);
  g_autofree guint8 *px = g_malloc((size_t)width * height * 4);
  for (int y = 0; y < height; y++)
    memcpy(px + (size_t)y * width * 4, gdk_pixbuf_read_pixels(rgba) + (size_t)y * stride,
           (size_t)width * 4);
  return nw_png_save_rgba(path, px, width, height, error);
}

struct NwScript {
  GtkApplication *app;
  NwWindow *win; /* weak */
  char **lines;
  int pos, cell;
  int *status;
  gboolean load_failed; /* a file could not be opened: the run exits 1 (after its commands) */
  gint64 wait_start;
  gint64 resume_at; /* sleep: monotonic time to go on */
};

NwScript *nw_script_new(GtkApplication *app, NwWindow *win, char **lines, int cell)
{
  NwScript *s = g_new0(NwScript, 1);
  s->app = g_object_ref(app);
  s->win = win;
  g_object_add_weak_pointer(G_OBJECT(win), (gpointer *)&s->win);
  s->lines = g_strdupv(lines);
  s->cell = cell;
  return s;
}

static void script_free(NwScript *s)
{
  if (s->win != NULL)
    g_object_remove_weak_pointer(G_OBJECT(s->win), (gpointer *)&s->win);
  g_object_unref(s->app);
  g_strfreev(s->lines);
  g_free(s);
}

gboolean nw_script_bad(GError **error, const char *line, const char *why)
{
  g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "script line \"%s\": %s", line, why);
  return FALSE;
}

/* The layer named by the words t[from..] of the line (names may contain spaces). */
static NwLayer *named_layer(NwWindow *w, char **t, int from, const char *line, GError **error)
{
  g_autofree char *name = g_strjoinv(" ", t + from);
  NwLayer *l = nw_scene_find_layer(nw_window_get_scene(w), name);
  if (l == NULL)
    nw_script_bad(error, line, "no layer of that name");
  return l;
}

static gboolean parse_double(const char *s, double *out)
{
  char *end = NULL;
  *out = g_ascii_strtod(s, &end);
  return end != s && *end == '\0';
}

static gboolean run_window(NwWindow *w, char **t, int n, const char *line, GError **error)
{
  double win, lev;
  if (n < 3 || !parse_double(t[1], &win) || !parse_double(t[2], &lev))
    return nw_script_bad(error, line, "expected: window WIDTH LEVEL [LAYER]");
  NwScene *scene = nw_window_get_scene(w);
  if (n > 3) {
    NwLayer *l = named_layer(w, t, 3, line, error);
    if (l == NULL)
      return FALSE;
    nw_layer_set_window_level(l, win, lev);
  } else {
    for (guint i = 0; i < nw_scene_n_layers(scene); i++) {
      NwLayer *l = nw_scene_get_layer(scene, i);
      if (nw_layer_get_kind(l) == NW_LAYER_IMAGE)
        nw_layer_set_window_level(l, win, lev);
    }
  }
  return TRUE;
}

/* Commands of the form "VERB VALUE LAYER NAME". */
static gboolean run_layer_setting(NwWindow *w, char **t, int n, const char *line, GError **error)
{
  if (n < 3)
    return nw_script_bad(error, line, "expected: VERB VALUE LAYER");
  NwLayer *l = named_layer(w, t, 2, line, error);
  if (l == NULL)
    return FALSE;
  double x;
  NwFieldShow show;
  NwColormap map;
  if (strcmp(t[0], "field") == 0) {
    if (nw_layer_get_kind(l) != NW_LAYER_FIELD || !nw_field_show_from_name(t[1], &show))
      return nw_script_bad(error, line, "not a field layer, or an unknown style");
    nw_layer_set_field_show(l, show); /* with the colours and range of that drawing */
  } else if (strcmp(t[0], "colormap") == 0) {
    if (!nw_colormap_from_name(t[1], &map))
      return nw_script_bad(error, line, "unknown colour map");
    nw_layer_set_colormap(l, map);
  } else if (strcmp(t[0], "opacity") == 0) {
    if (!parse_double(t[1], &x) || x < 0 || x > 1)
      return nw_script_bad(error, line, "opacity must be 0..1");
    nw_layer_set_opacity(l, (float)x);
  } else if (strcmp(t[0], "step") == 0) {
    if (!parse_double(t[1], &x) || x < 1)
      return nw_script_bad(error, line, "step must be >= 1 voxel");
    nw_layer_set_grid_step(l, (int)x);
  } else if (strcmp(t[0], "preset") == 0) {
    if (!nw_layer_apply_window_preset(l, t[1]))
      return nw_script_bad(error, line, "unknown preset");
  }
  return TRUE;
}

/* label-table PATH LAYER: names and colours for a label layer (nw_label_table.h) */
static gboolean run_label_table(NwWindow *w, char **t, int n, const char *line, GError **error)
{
  if (n < 3)
    return nw_script_bad(error, line, "expected: label-table PATH LAYER");
  NwLayer *l = named_layer(w, t, 2, line, error);
  if (l == NULL)
    return FALSE;
  if (nw_layer_get_kind(l) != NW_LAYER_LABELS)
    return nw_script_bad(error, line, "not a label layer");
  NwLabelTable *table = nw_label_table_new();
  if (!nw_label_table_load(table, t[1], error)) {
    nw_label_table_unref(table);
    return FALSE;
  }
  nw_layer_set_label_table(l, table);
  return TRUE;
}

/* save-layer [--overwrite] PATH LAYER */
static gboolean run_save_layer(NwWindow *w, char **t, int n, const char *line, GError **error)
{
  const int overwrite = n > 1 && strcmp(t[1], "--overwrite") == 0;
  if (n < 3 + overwrite)
    return nw_script_bad(error, line, "expected: save-layer [--overwrite] PATH LAYER");
  NwLayer *l = named_layer(w, t, 2 + overwrite, line, error);
  return l != NULL && nw_layer_save(l, t[1 + overwrite], overwrite, error);
}

/* mesh LAYER: "mesh: LAYER: V vertices, T triangles, x X0..X1 y Y0..Y1 z Z0..Z1 mm". */
static gboolean run_mesh(NwWindow *w, char **t, int n, const char *line, GError **error)
{
  NwLayer *l = n >= 2 ? named_layer(w, t, 1, line, error) : NULL;
  if (n < 2)
    return nw_script_bad(error, line, "expected: mesh LAYER");
  const NwSurface *s = l != NULL ? nw_layer_get_surface(l) : NULL;
  if (l != NULL && s == NULL)
    return nw_script_bad(error, line, "not a surface layer");
  if (s == NULL)
    return FALSE;
  double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  for (int v = 0; v < s->n_vertices; v++)
    for (int a = 0; a < 3; a++) {
      const double x = s->vertices[3 * v + a];
      lo[a] = v == 0 ? x : MIN(lo[a], x);
      hi[a] = v == 0 ? x : MAX(hi[a], x);
    }
  printf("mesh: %s: %d vertices, %d triangles, x %.2f..%.2f y %.2f..%.2f z %.2f..%.2f mm\n",
         nw_layer_get_name(l), s->n_vertices, s->n_triangles, lo[0], hi[0], lo[1], hi[1], lo[2],
         hi[2]);
  fflush(stdout);
  return TRUE;
}

static gboolean run_compare_setting(NwWindow *w, char **t, int n, const char *line, GError **error)
{
  double x;
  if (n != 2 || !parse_double(t[1], &x))
    return nw_script_bad(error, line, "expected one number");
  NwScene *scene = nw_window_get_scene(w);
  NwCompareStyle c = *nw_scene_get_compare(scene);
  if (strcmp(t[0], "blend") == 0)
    c.blend = (float)CLAMP(x, 0.0, 1.0);
  else if (strcmp(t[0], "tile") == 0)
    c.tile_mm = (float)MAX(x, 0.5);
  else
    c.curtain = (float)CLAMP(x, 0.0, 1.0);
  nw_scene_set_compare(scene, &c);
  return TRUE;
}

static gboolean run_visibility(NwWindow *w, char **t, int n, const char *line, GError **error)
{
  if (n < 2)
    return nw_script_bad(error, line, "expected a layer name");
  NwLayer *l = named_layer(w, t, 1, line, error);
  if (l == NULL)
    return FALSE;
  NwScene *scene = nw_window_get_scene(w);
  const int index = nw_scene_layer_index(scene, l);
  if (strcmp(t[0], "active") == 0)
    nw_scene_set_active(scene, l);
  else if (strcmp(t[0], "raise") == 0)
    nw_scene_move_layer(scene, l, (guint)index + 1);
  else if (strcmp(t[0], "lower") == 0)
    nw_scene_move_layer(scene, l, (guint)MAX(index - 1, 0));
  else
    nw_layer_set_visible(l, strcmp(t[0], "show") == 0);
  return TRUE;
}

static gboolean run_screenshot(NwWindow *w, char **t, int n, int cell, const char *line,
                               GError **error)
{
  if (strcmp(t[0], "screenshot-window") == 0) {
    GtkWindow *win = n == 3 ? nw_script_find_window(t[2]) : GTK_WINDOW(w);
    if ((n != 2 && n != 3) || win == NULL)
      return nw_script_bad(error, line, "expected: screenshot-window PATH [WINDOW-TYPE]");
    return screenshot_window(win, t[1], error);
  }
  if (strcmp(t[0], "screenshot") == 0) {
    if (n != 2)
      return nw_script_bad(error, line, "expected: screenshot PATH");
    return nw_window_save_screenshot(w, t[1], cell, error);
  }
  NwViewKind k;
  if (n != 3 || !nw_view_kind_from_name(t[1], &k))
    return nw_script_bad(error, line, "expected: screenshot-view VIEW PATH");
  return nw_screenshot_view(nw_window_get_view(w, k), t[2], 2 * cell, 2 * cell, error);
}

/* ---- the run panel's commands (nw_run_panel.h) ---- */

static const char *const job_states[] = {"idle", "running", "paused", "finished", "cancelled",
                                         "failed"};

static gboolean is_window_preset(const char *name)
{
  static const char *const presets[] = {"auto", "full", "ct-brain", "ct-soft", "ct-bone", NULL};
  return g_strv_contains(presets, name);
}

/* A parameter change refused by a running job is reported (error bar, stderr) and the
 * script goes on: the job keeps its values, as in the panel. Other failures stop it. */
static gboolean run_param(NwRunPanel *p, NwWindow *w, char **t, int n, const char *line,
                          GError **error)
{
  if ((n != 3 && n != 4) || (n == 4 && strcmp(t[3], "2") != 0))
    return nw_script_bad(error, line, "expected: param NAME VALUE [2]");
  const int job = n == 4 ? 1 : 0;
  GError *err = NULL;
  if (nw_run_panel_set_param(p, job, t[1], t[2], &err))
    return TRUE;
  NwRun *r = nw_run_panel_get_run(p, job);
  if (r != NULL && nw_run_is_active(r)) {
    nw_window_show_error(w, err->message);
    g_error_free(err);
    return TRUE;
  }
  g_propagate_error(error, err);
  return FALSE;
}

static gboolean run_device(NwRunPanel *p, char **t, int n, const char *line, GError **error)
{
  NwDevice d;
  if (n < 2 || n > 3 || !nw_device_parse(t[1], &d, NULL))
    return nw_script_bad(error, line, "expected: device auto|cpu|cuda [2]");
  return nw_run_panel_set_device(p, n == 3 && strcmp(t[2], "2") == 0 ? 1 : 0, d, error);
}

static gboolean run_readouts(NwRunPanel *p)
{
  g_autofree char *text = nw_run_panel_readouts(p);
  printf("%s\n", text);
  fflush(stdout);
  return TRUE;
}

/* timeline K|live: the views show the kept frame of iteration K, or follow the jobs again;
 * export-frames DIR: the kept frames as numbered PNGs in the new folder DIR;
 * export-animation FILE: the same as an animated GIF (FILE must not exist). */
static gboolean run_timeline(NwWindow *w, char **t, int n, int cell, const char *line,
                             GError **error)
{
  if (strcmp(t[0], "export-animation") == 0) {
    if (n < 2)
      return nw_script_bad(error, line, "expected: export-animation FILE.gif");
    g_autofree char *path = g_strjoinv(" ", t + 1);
    if (g_file_test(path, G_FILE_TEST_EXISTS)) {
      g_set_error(error, NW_ERROR, NW_ERROR_EXISTS, "export %s: exists already", path);
      return FALSE;
    }
    guint frames = 0;
    if (!nw_timeline_export_gif(w, path, cell, &frames, error))
      return FALSE;
    printf("export-animation: %u frames\n", frames);
    fflush(stdout);
    return TRUE;
  }
  if (strcmp(t[0], "export-frames") == 0) {
    if (n < 2)
      return nw_script_bad(error, line, "expected: export-frames DIR");
    g_autofree char *dir = g_strjoinv(" ", t + 1);
    guint frames = 0;
    if (!nw_timeline_export_png(w, dir, cell, &frames, error))
      return FALSE;
    printf("export-frames: %u frames\n", frames);
    fflush(stdout);
    return TRUE;
  }
  char *end = NULL;
  const long k = n == 2 ? strtol(t[1], &end, 10) : -1;
  const gboolean live = n == 2 && strcmp(t[1], "live") == 0;
  if (!live && (n != 2 || end == t[1] || *end != '\0' || k < 0 || k > G_MAXINT))
    return nw_script_bad(error, line, "expected: timeline ITERATION|live");
  return nw_run_panel_scrub(nw_window_get_run_panel(w), live ? -1 : (int)k, error);
}

/* method, device, param, preset (of parameters), second-job, run, run-paused, pause, step,
 * stop, save-results, session-save, session-open, screenshot-plot, readouts. -1: not one of
 * them; else TRUE/FALSE as nw_script_run_line. */
static int run_job_command(NwWindow *w, char **t, int n, const char *line, GError **error)
{
  NwRunPanel *p = nw_window_get_run_panel(w);
  const char *cmd = t[0];
  if (strcmp(cmd, "method") == 0 && n == 2)
    return nw_run_panel_set_method(p, t[1], error);
  if (strcmp(cmd, "device") == 0)
    return run_device(p, t, n, line, error);
  if (strcmp(cmd, "param") == 0)
    return run_param(p, w, t, n, line, error);
  if (strcmp(cmd, "preset") == 0 && n >= 2 && !is_window_preset(t[1])) {
    g_autofree char *name = g_strjoinv(" ", t + 1);
    return nw_run_panel_apply_preset(p, name, error);
  }
  if (strcmp(cmd, "live-view") == 0) {
    if (n != 2 || (strcmp(t[1], "on") != 0 && strcmp(t[1], "off") != 0))
      return nw_script_bad(error, line, "expected: live-view on|off");
    g_action_group_change_action_state(G_ACTION_GROUP(w), "live-view",
                                       g_variant_new_boolean(strcmp(t[1], "on") == 0));
    return TRUE;
  }
  if (strcmp(cmd, "surface-label") == 0) {
    char *end = NULL;
    const long label = n == 2 ? strtol(t[1], &end, 10) : -1;
    const gboolean is_auto = n == 2 && strcmp(t[1], "auto") == 0;
    if (!is_auto && (n != 2 || end == t[1] || *end != '\0' || label < 0 || label > G_MAXINT))
      return nw_script_bad(error, line, "expected: surface-label N|auto");
    return nw_run_panel_set_surface_label(p, is_auto ? -1 : (int)label, error);
  }
  if (strcmp(cmd, "second-job") == 0) {
    if (n != 2 || (strcmp(t[1], "on") != 0 && strcmp(t[1], "off") != 0))
      return nw_script_bad(error, line, "expected: second-job on|off");
    nw_run_panel_set_second_job(p, strcmp(t[1], "on") == 0);
    return TRUE;
  }
  if ((strcmp(cmd, "run") == 0 || strcmp(cmd, "run-paused") == 0) && n == 1) {
    NwRun *r = nw_run_panel_get_run(p, 0);
    nw_window_show_sidebar_page(w, "run");
    if (strcmp(cmd, "run") == 0 && r != NULL && nw_run_is_active(r)) {
      nw_run_panel_resume(p);
      return TRUE;
    }
    return nw_run_panel_start(p, strcmp(cmd, "run-paused") == 0, error);
  }
  if (n == 1 && (strcmp(cmd, "pause") == 0 || strcmp(cmd, "step") == 0 || strcmp(cmd, "stop") == 0)) {
    if (cmd[1] == 'a')
      nw_run_panel_pause(p);
    else if (cmd[2] == 'e')
      nw_run_panel_step(p);
    else
      nw_run_panel_stop(p);
    return TRUE;
  }
  if (strcmp(cmd, "save-results") == 0 && n >= 2) {
    const gboolean overwrite = strcmp(t[1], "--overwrite") == 0;
    if (overwrite && n < 3)
      return nw_script_bad(error, line, "expected: save-results [--overwrite] PREFIX");
    g_autofree char *prefix = g_strjoinv(" ", t + 1 + overwrite);
    return nw_run_panel_save_results(p, prefix, overwrite, error);
  }
  if ((strcmp(cmd, "session-save") == 0 || strcmp(cmd, "session-open") == 0) && n >= 2) {
    g_autofree char *path = g_strjoinv(" ", t + 1);
    return cmd[8] == 's' ? nw_run_panel_save_session(p, path, error)
                         : nw_run_panel_open_session(p, path, error);
  }
  if (strcmp(cmd, "screenshot-plot") == 0 && n == 2)
    return nw_plot_save_png(nw_run_panel_get_plot(p), t[1], 640, 480, error);
  if (strcmp(cmd, "readouts") == 0 && n == 1)
    return run_readouts(p);
  if (strcmp(cmd, "run-summary") == 0 && n == 1) {
    const char *text = nw_run_panel_get_summary(p);
    g_auto(GStrv) lines = g_strsplit(text != NULL ? text : "none", "\n", -1);
    for (int i = 0; lines[i] != NULL; i++)
      printf("run-summary: %s\n", lines[i]);
    fflush(stdout);
    return TRUE;
  }
  if (g_str_has_prefix(cmd, "wait-") && n >= 2)
    return TRUE; /* the runner waits for these (script_wait) */
  return -1;
}

/* wait-layer NAME: the scene has a layer of that name (a run's surface, made on a worker);
 * wait-window TYPE: a window of that GTK type is on screen; wait-iteration N: run 1 (and the
 * second job, when there is one) has completed N iterations and the views show them;
 * wait-state S:
 * run 1 (and the second job, when there is one) is in state S. 1: met (or not a wait line), 0: not
 * yet, -1: a bad line. */
static int script_wait(NwWindow *w, const char *line, GError **error)
{
  g_autofree char *copy = g_strstrip(g_strdup(line));
  g_auto(GStrv) t = g_strsplit(copy, " ", -1);
  if (!g_str_has_prefix(copy, "wait-"))
    return 1;
  NwRun *r = nw_run_panel_get_run(nw_window_get_run_panel(w), 0);
  if (strcmp(t[0], "wait-iteration") == 0 && t[1] != NULL) {
    const int it = atoi(t[1]);
    if (it < 1)
      return nw_script_bad(error, line, "expected: wait-iteration N (N >= 1)") ? 1 : -1;
    NwRun *r2 = nw_run_panel_get_run(nw_window_get_run_panel(w), 1);
    return r != NULL && nw_run_get_iteration(r) >= it && nw_run_get_shown_iteration(r) >= it &&
           (r2 == NULL || (nw_run_get_iteration(r2) >= it && nw_run_get_shown_iteration(r2) >= it));
  }
  if (strcmp(t[0], "wait-layer") == 0 && t[1] != NULL) {
    g_autofree char *name = g_strjoinv(" ", t + 1);
    return nw_scene_find_layer(nw_window_get_scene(w), name) != NULL;
  }
  if (strcmp(t[0], "wait-window") == 0 && t[1] != NULL)
    return nw_script_find_window(t[1]) != NULL;
  if (strcmp(t[0], "wait-state") == 0 && t[1] != NULL) {
    NwRun *r2 = nw_run_panel_get_run(nw_window_get_run_panel(w), 1);
    for (guint i = 0; i < G_N_ELEMENTS(job_states); i++)
      if (strcmp(t[1], job_states[i]) == 0)
        return (r != NULL ? nw_run_get_state(r) : NW_JOB_IDLE) == (NwJobState)i &&
               (r2 == NULL || nw_run_get_state(r2) == (NwJobState)i);
    return nw_script_bad(error, line,
                         "expected: wait-state idle|running|paused|finished|cancelled|failed")
               ? 1
               : -1;
  }
  return nw_script_bad(error, line, "unknown wait command") ? 1 : -1;
}

gboolean nw_script_run_line(NwWindow *w, const char *line, int cell, GError **error)
{
  g_autofree char *copy = g_strstrip(g_strdup(line));
  g_auto(GStrv) t = g_strsplit_set(copy, " \t", -1);
  /* drop empty tokens from repeated blanks */
  int n = 0;
  for (int i = 0; t[i] != NULL; i++)
    if (t[i][0] != '\0')
      t[n++] = t[i];
    else
      g_free(t[i]);
  t[n] = NULL;
  if (n == 0 || t[0][0] == '#')
    return TRUE;
  const char *cmd = t[0];
  GActionGroup *ag = G_ACTION_GROUP(w);
  const int job = run_job_command(w, t, n, line, error);
  if (job >= 0)
    return job;
  if (strcmp(cmd, "timeline") == 0 || strcmp(cmd, "export-frames") == 0 ||
      strcmp(cmd, "export-animation") == 0)
    return run_timeline(w, t, n, cell, line, error);
  const int inspected = nw_script_inspect(w, t, n, cell, line, error);
  if (inspected >= 0)
    return inspected;
  if (strcmp(cmd, "open") == 0 && n >= 2) {
    g_autofree char *path = g_strjoinv(" ", t + 1);
    nw_window_open_file(w, path);
  } else if (strcmp(cmd, "demo") == 0) {
    nw_window_open_demo(w);
  } else if (strcmp(cmd, "compare") == 0 && n == 2) {
    NwCompareMode m;
    if (!nw_compare_mode_from_name(t[1], &m))
      return nw_script_bad(error, line, "unknown comparison mode");
    g_action_group_activate_action(ag, "compare-mode", g_variant_new_string(t[1]));
  } else if (strcmp(cmd, "view") == 0 && n == 2) {
    NwViewKind k;
    if (strcmp(t[1], "grid") != 0 && !nw_view_kind_from_name(t[1], &k))
      return nw_script_bad(error, line, "unknown view");
    if (strcmp(nw_window_get_layout(w), t[1]) != 0) /* maximize toggles */
      g_action_group_activate_action(ag, "maximize", g_variant_new_string(t[1]));
    else /* named: it stays when a volume opens, also if a 2D scene had chosen it */
      nw_window_keep_layout(w);
  } else if (strcmp(cmd, "crosshair") == 0) {
    double r[3];
    if (n != 4 || !parse_double(t[1], &r[0]) || !parse_double(t[2], &r[1]) ||
        !parse_double(t[3], &r[2]))
      return nw_script_bad(error, line, "expected: crosshair X Y Z");
    nw_scene_set_crosshair(nw_window_get_scene(w), r);
  } else if (strcmp(cmd, "window") == 0) {
    return run_window(w, t, n, line, error);
  } else if (strcmp(cmd, "preset") == 0 && n == 2) {
    g_action_group_activate_action(ag, "window-preset", g_variant_new_string(t[1]));
  } else if (strcmp(cmd, "field") == 0 || strcmp(cmd, "colormap") == 0 ||
             strcmp(cmd, "opacity") == 0 || strcmp(cmd, "step") == 0 ||
             strcmp(cmd, "preset") == 0) {
    return run_layer_setting(w, t, n, line, error);
  } else if (strcmp(cmd, "blend") == 0 || strcmp(cmd, "tile") == 0 || strcmp(cmd, "curtain") == 0) {
    return run_compare_setting(w, t, n, line, error);
  } else if (strcmp(cmd, "show") == 0 || strcmp(cmd, "hide") == 0 || strcmp(cmd, "active") == 0 ||
             strcmp(cmd, "raise") == 0 || strcmp(cmd, "lower") == 0) {
    return run_visibility(w, t, n, line, error);
  } else if (strcmp(cmd, "label-table") == 0) {
    return run_label_table(w, t, n, line, error);
  } else if (strcmp(cmd, "mesh") == 0) {
    return run_mesh(w, t, n, line, error);
  } else if (strcmp(cmd, "save-layer") == 0) {
    return run_save_layer(w, t, n, line, error);
  } else if (strcmp(cmd, "status") == 0) {
    printf("status: %s\n", nw_window_get_status_text(w));
    printf("compare: %s\n", nw_window_get_compare_text(w));
    fflush(stdout);
  } else if (strcmp(cmd, "zoom") == 0) {
    NwViewKind k;
    double f;
    if (n != 3 || !nw_view_kind_from_name(t[1], &k) || !parse_double(t[2], &f) || f <= 0)
      return nw_script_bad(error, line, "expected: zoom VIEW FACTOR");
    nw_view_set_zoom(nw_window_get_view(w, k), f);
  } else if (strcmp(cmd, "flicker-period") == 0) {
    double ms;
    if (n != 2 || !parse_double(t[1], &ms) || ms < 0 || ms > 60000)
      return nw_script_bad(error, line, "expected: flicker-period MS (0..60000)");
    nw_window_set_flicker_period(w, (guint)ms);
  } else if (strcmp(cmd, "radiological") == 0) {
    if (n != 2 || (strcmp(t[1], "on") != 0 && strcmp(t[1], "off") != 0))
      return nw_script_bad(error, line, "expected: radiological on|off");
    g_action_group_change_action_state(ag, "radiological",
                                       g_variant_new_boolean(strcmp(t[1], "on") == 0));
  } else if (strcmp(cmd, "camera") == 0) {
    double yaw, pitch;
    if (n != 3 || !parse_double(t[1], &yaw) || !parse_double(t[2], &pitch))
      return nw_script_bad(error, line, "expected: camera YAW PITCH (degrees)");
    nw_view_set_camera(nw_window_get_view(w, NW_VIEW_3D), yaw, pitch);
  } else if (strcmp(cmd, "flicker-step") == 0 && n == 1) {
    nw_window_flicker_step(w);
  } else if (strcmp(cmd, "sleep") == 0) {
    /* handled by the runner */
  } else if (g_str_has_prefix(cmd, "screenshot")) {
    return run_screenshot(w, t, n, cell, line, error);
  } else if (strcmp(cmd, "quit") == 0) {
    gtk_widget_destroy(GTK_WIDGET(w)); /* the runner has seen every load end (tick) */
  } else {
    return nw_script_bad(error, line, "unknown command or wrong number of arguments");
  }
  return TRUE;
}

/* A script that could not open one of its files fails (exit 1), even when everything else,
 * a screenshot included, was done: a batch run must not take a picture without its data for
 * a success. */
static void finish(NwScript *s, int status)
{
  *s->status = status == 0 && s->load_failed ? 1 : status;
  if (status != 0)
    g_application_quit(G_APPLICATION(s->app));
  script_free(s);
}

static gboolean tick(gpointer data)
{
  NwScript *s = data;
  if (s->win == NULL) { /* closed (quit) */
    finish(s, *s->status);
    return G_SOURCE_REMOVE;
  }
  gboolean ready = gtk_widget_get_mapped(GTK_WIDGET(s->win)) && nw_window_views_ready(s->win) &&
                   !nw_window_is_busy(s->win);
  if (!ready) {
    if (g_get_monotonic_time() - s->wait_start > 180 * G_USEC_PER_SEC) {
      fprintf(stderr, "neurowarp: script: gave up waiting for the views or a load\n");
      finish(s, 3);
      return G_SOURCE_REMOVE;
    }
    return G_SOURCE_CONTINUE;
  }
  if (!s->load_failed && nw_window_get_load_failures(s->win) > 0) {
    /* The exit status now, not only when the script ends: "quit" closes the window, and the
     * application may leave its main loop before the next tick could set it. */
    s->load_failed = TRUE;
    if (*s->status == 0)
      *s->status = 1;
  }
  if (g_get_monotonic_time() < s->resume_at)
    return G_SOURCE_CONTINUE;
  if (s->lines[s->pos] == NULL) {
    finish(s, 0);
    return G_SOURCE_REMOVE;
  }
  const char *line = s->lines[s->pos];
  g_autoptr(GError) error = NULL;
  const int met = script_wait(s->win, line, &error);
  if (met == 0) { /* like a load: not ready yet */
    if (g_get_monotonic_time() - s->wait_start > 180 * G_USEC_PER_SEC) {
      fprintf(stderr, "neurowarp: script: gave up waiting: %s\n", line);
      finish(s, 3);
      return G_SOURCE_REMOVE;
    }
    return G_SOURCE_CONTINUE;
  }
  s->pos++;
  if (met < 0) {
    fprintf(stderr, "neurowarp: %s\n", error->message);
    finish(s, 2);
    return G_SOURCE_REMOVE;
  }
  if (g_str_has_prefix(g_strchug((char *)line), "sleep")) {
    s->resume_at = g_get_monotonic_time() + 1000 * g_ascii_strtoll(line + 5, NULL, 10);
    return G_SOURCE_CONTINUE;
  }
  if (!nw_script_run_line(s->win, line, s->cell, &error)) {
    fprintf(stderr, "neurowarp: %s\n", error->message);
    finish(s, 2);
    return G_SOURCE_REMOVE;
  }
  s->wait_start = g_get_monotonic_time();
  return G_SOURCE_CONTINUE;
}

void nw_script_start(NwScript *s, int *status)
{
  s->status = status;
  s->wait_start = g_get_monotonic_time();
  g_timeout_add(30, tick, s);
}
