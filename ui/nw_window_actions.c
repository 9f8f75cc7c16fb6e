/* nw_window_actions.c — the window's win.* actions: opening, screenshots, comparison mode,
 * layout, window/level presets. Accelerators live in one table in nw_application.c.
 * Main thread only. */
#include "nw_layer_save.h"
#include "nw_screenshot.h"
#include "nw_timeline_export.h"
#include "nw_window_private.h"

static void open_demo(GSimpleAction *a, GVariant *p, gpointer data)
{
  nw_window_open_demo(NW_WINDOW(data));
}

static void open_file(GSimpleAction *a, GVariant *p, gpointer data)
{
  nw_window_open_file(NW_WINDOW(data), g_variant_get_string(p, NULL));
}

/* Ask for a file name to save to; NULL when cancelled. */
static char *ask_path(NwWindow *w, const char *title, const char *suggested)
{
  GtkFileChooserNative *fc = gtk_file_chooser_native_new(
      title, GTK_WINDOW(w), GTK_FILE_CHOOSER_ACTION_SAVE, "_Save", "_Cancel");
  gtk_file_chooser_set_do_overwrite_confirmation(GTK_FILE_CHOOSER(fc), TRUE);
  gtk_file_chooser_set_current_name(GTK_FILE_CHOOSER(fc), suggested);
  char *path = NULL;
  if (gtk_native_dialog_run(GTK_NATIVE_DIALOG(fc)) == GTK_RESPONSE_ACCEPT)
    path = gtk_file_chooser_get_filename(GTK_FILE_CHOOSER(fc));
  g_object_unref(fc);
  return path;
}

static void report(NwWindow *w, GError *error, const char *path)
{
  if (error != NULL) {
    g_autofree char *msg = g_strdup_printf("Could not save %s: %s", path, error->message);
    nw_window_show_error(w, msg);
  }
}

static void screenshot(GSimpleAction *a, GVariant *p, gpointer data)
{
  NwWindow *w = NW_WINDOW(data);
  NwView *v = w->views[w->current_view];
  g_autofree char *name = g_strdup_printf("neurowarp-%s.png", nw_view_kind_name(w->current_view));
  g_autofree char *path = ask_path(w, "Save a screenshot of the view", name);
  if (path == NULL)
    return;
  int scale = gtk_widget_get_scale_factor(GTK_WIDGET(v));
  g_autoptr(GError) error = NULL;
  nw_screenshot_view(v, path, gtk_widget_get_allocated_width(GTK_WIDGET(v)) * scale,
                     gtk_widget_get_allocated_height(GTK_WIDGET(v)) * scale, &error);
  report(w, error, path);
}

static void export_figure(GSimpleAction *a, GVariant *p, gpointer data)
{
  NwWindow *w = NW_WINDOW(data);
  g_autofree char *path = ask_path(w, "Export the 2×2 figure", "neurowarp-figure.png");
  if (path == NULL)
    return;
  g_autoptr(GError) error = NULL;
  nw_screenshot_figure((NwView *const *)w->views, path, 600, &error);
  report(w, error, path);
}

/* The run's kept frames as numbered PNGs of the 2x2 figure, as export-figure draws it, into
 * a new folder of the chooser's name (nw_timeline_export.h). */
static void export_frames(GSimpleAction *a, GVariant *p, gpointer data)
{
  NwWindow *w = NW_WINDOW(data);
  g_autofree char *path = ask_path(w, "Export the run's frames into a new folder",
                                   "neurowarp-frames");
  if (path == NULL)
    return;
  g_autoptr(GError) error = NULL;
  nw_timeline_export_png(w, path, 600, NULL, &error);
  report(w, error, path);
}

/* The run's kept frames as one animated GIF of the 2x2 figure (nw_timeline_export.h). */
static void export_animation(GSimpleAction *a, GVariant *p, gpointer data)
{
  NwWindow *w = NW_WINDOW(data);
  g_autofree char *path = ask_path(w, "Export the run as an animated GIF", "neurowarp-run.gif");
  if (path == NULL)
    return;
  g_autoptr(GError) error = NULL;
  nw_timeline_export_gif(w, path, 400, NULL, &error);
  report(w, error, path);
}

/* Save layer as… (Ctrl+Shift+S): the selected layer to a file of the chooser's name; the
 * chooser asks before replacing a file. */
static void save_layer(GSimpleAction *a, GVariant *p, gpointer data)
{
  NwWindow *w = NW_WINDOW(data);
  NwLayer *l = nw_scene_get_active(w->scene);
  if (l == NULL) {
    nw_window_show_error(w, "Save layer as: select a layer in the layer list first");
    return;
  }
  g_autofree char *title = g_strdup_printf("Save the layer %s", nw_layer_get_name(l));
  g_autofree char *name = nw_layer_save_suggest_name(l);
  g_autofree char *path = ask_path(w, title, name);
  if (path == NULL)
    return;
  g_autoptr(GError) error = NULL;
  nw_layer_save(l, path, TRUE, &error);
  report(w, error, path);
}

/* Load label names… : a label table for the selected label map (nw_label_table.h). */
static void label_table(GSimpleAction *a, GVariant *p, gpointer data)
{
  NwWindow *w = NW_WINDOW(data);
  NwLayer *l = nw_scene_get_active(w->scene);
  if (l == NULL || nw_layer_get_kind(l) != NW_LAYER_LABELS) {
    nw_window_show_error(w, "Load label names: select a label map in the layer list first");
    return;
  }
  g_autofree char *title = g_strdup_printf("Label names and colours for %s", nw_layer_get_name(l));
  GtkFileChooserNative *fc = gtk_file_chooser_native_new(
      title, GTK_WINDOW(w), GTK_FILE_CHOOSER_ACTION_OPEN, "_Open", "_Cancel");
  GtkFileFilter *f = gtk_file_filter_new();
  gtk_file_filter_set_name(f, "Label tables (MRIcron .txt/.lut, FreeSurferColorLUT.txt, ITK-SNAP)");
  static const char *const patterns[] = {"*.txt", "*.lut", "*.label", "*.ctbl", NULL};
  for (int i = 0; patterns[i] != NULL; i++)
    gtk_file_filter_add_pattern(f, patterns[i]);
  gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(fc), f);
  if (gtk_native_dialog_run(GTK_NATIVE_DIALOG(fc)) == GTK_RESPONSE_ACCEPT) {
    g_autofree char *path = gtk_file_chooser_get_filename(GTK_FILE_CHOOSER(fc));
    NwLabelTable *t = nw_label_table_new();
    g_autoptr(GError) error = NULL;
    if (nw_label_table_load(t, path, &error)) {
      nw_layer_set_label_table(l, t);
    } else {
      nw_label_table_unref(t);
      g_autofree char *msg = g_strdup_printf("Could not load label names: %s", error->message);
      nw_window_show_error(w, msg);
    }
  }
  g_object_unref(fc);
}

static void remove_layer(GSimpleAction *a, GVariant *p, gpointer data)
{
  NwWindow *w = NW_WINDOW(data);
  NwLayer *l = nw_scene_get_active(w->scene);
  if (l != NULL)
    nw_scene_remove_layer(w->scene, l);
}

void nw_window_flicker_step(NwWindow *w)
{
  NwCompareStyle c = *nw_scene_get_compare(w->scene);
  c.show_b = !c.show_b;
  nw_scene_set_compare(w->scene, &c);
}

static gboolean flicker_tick(gpointer data)
{
  nw_window_flicker_step(NW_WINDOW(data));
  return G_SOURCE_CONTINUE;
}

/* (Re)start the flicker timer when flicker is the mode and the period is not 0. */
static void restart_flicker(NwWindow *w)
{
  if (w->flicker_id != 0)
    g_source_remove(w->flicker_id), w->flicker_id = 0;
  if (nw_scene_get_compare(w->scene)->mode == NW_COMPARE_FLICKER && w->flicker_ms > 0)
    w->flicker_id = g_timeout_add(w->flicker_ms, flicker_tick, w);
}

void nw_window_set_flicker_period(NwWindow *w, guint ms)
{
  w->flicker_ms = ms;
  restart_flicker(w);
}

static void compare_mode(GSimpleAction *a, GVariant *p, gpointer data)
{
  NwWindow *w = NW_WINDOW(data);
  NwCompareMode m;
  if (!nw_compare_mode_from_name(g_variant_get_string(p, NULL), &m))
    return;
  g_simple_action_set_state(a, p);
  nw_scene_set_compare_mode(w->scene, m);
  restart_flicker(w);
  nw_window_sync_compare_bar(w);
}

static void blend_colormaps(GSimpleAction *a, GVariant *p, gpointer data)
{
  NwWindow *w = NW_WINDOW(data);
  gboolean on = !g_variant_get_boolean(g_action_get_state(G_ACTION(a)));
  g_simple_action_set_state(a, g_variant_new_boolean(on));
  NwCompareStyle c = *nw_scene_get_compare(w->scene);
  c.magenta_green = !on;
  nw_scene_set_compare(w->scene, &c);
}

static void swap_compare(GSimpleAction *a, GVariant *p, gpointer data)
{
  NwWindow *w = NW_WINDOW(data);
  nw_scene_set_compare_pair(w->scene, nw_scene_get_compare_b(w->scene),
                            nw_scene_get_compare_a(w->scene));
}

static void maximize(GSimpleAction *a, GVariant *p, gpointer data)
{
  NwWindow *w = NW_WINDOW(data);
  const char *name = g_variant_get_string(p, NULL);
  NwViewKind k;
  int target = -1;
  if (nw_view_kind_from_name(name, &k))
    target = w->maximized == (int)k ? -1 : (int)k; /* the same key again: back to the grid */
  else if (g_strcmp0(name, "grid") != 0)
    return;
  nw_window_set_layout(w, target); /* sets the action's state */
}

static void reset_views(GSimpleAction *a, GVariant *p, gpointer data)
{
  NwWindow *w = NW_WINDOW(data);
  for (int i = 0; i < 4; i++)
    nw_view_reset(w->views[i]);
}

static void fullscreen(GSimpleAction *a, GVariant *p, gpointer data)
{
  NwWindow *w = NW_WINDOW(data);
  gboolean on = !g_variant_get_boolean(g_action_get_state(G_ACTION(a)));
  g_simple_action_set_state(a, g_variant_new_boolean(on));
  if (on)
    gtk_window_fullscreen(GTK_WINDOW(w));
  else
    gtk_window_unfullscreen(GTK_WINDOW(w));
}

/* View → Radiological convention: the patient's right on the screen's left in the axial
 * and coronal views. */
static void radiological(GSimpleAction *a, GVariant *state, gpointer data)
{
  g_simple_action_set_state(a, state);
  nw_scene_set_radiological(NW_WINDOW(data)->scene, g_variant_get_boolean(state));
}

static void window_preset(GSimpleAction *a, GVariant *p, gpointer data)
{
  NwWindow *w = NW_WINDOW(data);
  NwLayer *l = nw_scene_get_active(w->scene);
  if (l != NULL && nw_layer_get_kind(l) != NW_LAYER_SURFACE)
    nw_layer_apply_window_preset(l, g_variant_get_string(p, NULL));
}

void nw_window_install_actions(NwWindow *w)
{
  const GActionEntry entries[] = {
      {"open-demo", open_demo, NULL, NULL, NULL, {0}},
      {"open-file", open_file, "s", NULL, NULL, {0}},
      {"screenshot", screenshot, NULL, NULL, NULL, {0}},
      {"export-figure", export_figure, NULL, NULL, NULL, {0}},
      {"export-frames", export_frames, NULL, NULL, NULL, {0}},
      {"export-animation", export_animation, NULL, NULL, NULL, {0}},
      {"remove-layer", remove_layer, NULL, NULL, NULL, {0}},
      {"save-layer", save_layer, NULL, NULL, NULL, {0}},
      {"label-table", label_table, NULL, NULL, NULL, {0}},
      {"compare-mode", compare_mode, "s", "'blend'", NULL, {0}},
      {"blend-colormaps", blend_colormaps, NULL, "false", NULL, {0}},
      {"swap-compare", swap_compare, NULL, NULL, NULL, {0}},
      {"maximize", maximize, "s", "'grid'", NULL, {0}},
      {"reset-views", reset_views, NULL, NULL, NULL, {0}},
      {"fullscreen", fullscreen, NULL, "false", NULL, {0}},
      {"radiological", NULL, NULL, "false", radiological, {0}},
      {"window-preset", window_preset, "s", NULL, NULL, {0}},
  };
  g_action_map_add_action_entries(G_ACTION_MAP(w), entries, G_N_ELEMENTS(entries), w);
}
