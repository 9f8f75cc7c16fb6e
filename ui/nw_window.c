/* nw_window.c — the main window (see nw_window.h): layout, loading, error and status bars,
 * drag and drop, recent files. The win.* actions are in nw_window_actions.c.
 * Main thread only. */
#include "nw_window.h"

#include <math.h>
#include <stdio.h>

#include "nw_layer_list.h"
#include "nw_layer_readout.h"
#include "nw_loader.h"
#include "nw_screenshot.h"
#include "nw_window_private.h"

G_DEFINE_TYPE(NwWindow, nw_window, GTK_TYPE_APPLICATION_WINDOW)

static const char *const layout_names[5] = {"axial", "coronal", "sagittal", "3d", "grid"};

/* ---- status bar ---- */

static void append_values(NwWindow *w, GString *s, const double ras[3])
{
  NwScene *scene = w->scene;
  gboolean have_voxel = FALSE;
  for (guint i = 0; i < nw_scene_n_layers(scene); i++) {
    NwLayer *l = nw_scene_get_layer(scene, i);
    const NwVolume *vol = nw_layer_get_volume(l);
    if (vol == NULL)
      continue;
    if (!have_voxel) {
      double ijk[3];
      nw_volume_world_to_voxel(vol, ras, ijk);
      /* the voxel whose centre is nearest (halves round up, not to even) */
      g_string_append_printf(s, "   voxel (%.0f, %.0f, %.0f)", floor(ijk[0] + 0.5),
                             floor(ijk[1] + 0.5), floor(ijk[2] + 0.5));
      have_voxel = TRUE;
    }
    nw_layer_append_readout(l, ras, s); /* the value as the layer is drawn */
  }
}

void nw_window_update_status(NwWindow *w, const double *ras_or_null)
{
  double ras[3];
  w->status_at_pointer = ras_or_null != NULL;
  if (ras_or_null != NULL)
    memcpy(ras, ras_or_null, sizeof ras);
  else
    nw_scene_get_crosshair(w->scene, ras);
  if (nw_scene_n_layers(w->scene) == 0) {
    gtk_label_set_text(w->status_label, w->busy > 0 ? "Loading…" : "No data: open a file");
    return;
  }
  g_autoptr(GString) s = g_string_new(NULL);
  g_string_append_printf(s, "%s  RAS (%.1f, %.1f, %.1f) mm",
                         ras_or_null != NULL ? "pointer" : "crosshair", ras[0], ras[1], ras[2]);
  append_values(w, s, ras);
  gtk_label_set_text(w->status_label, s->str);
}

static void on_crosshair_moved(NwScene *s, NwWindow *w)
{
  nw_window_update_status(w, NULL);
}

/* New voxels (a live run's frames, a layer shown or hidden): the values at the crosshair
 * change, so does the status bar, unless it follows the pointer (which refreshes it). */
static void on_scene_changed(NwScene *s, NwWindow *w)
{
  if (!w->status_at_pointer)
    nw_window_update_status(w, NULL);
}

static void on_pointer_moved(NwView *v, double x, double y, double z, NwWindow *w)
{
  const double ras[3] = {x, y, z};
  nw_window_update_status(w, ras);
}

static void on_pointer_left(NwView *v, NwWindow *w)
{
  nw_window_update_status(w, NULL);
}

/* A view without OpenGL 3.3 core cannot draw: say so once, in the error bar. */
static void on_view_realized(GtkWidget *widget, NwWindow *w)
{
  const GError *e = nw_view_get_gl_error(NW_VIEW(widget));
  if (e != NULL && w->error_text == NULL) {
    g_autofree char *msg =
        g_strdup_printf("The %s view cannot draw: %s",
                        nw_view_kind_name(nw_view_get_kind(NW_VIEW(widget))), e->message);
    nw_window_show_error(w, msg);
  }
}

static void on_view_activated(NwView *v, NwWindow *w)
{
  w->current_view = nw_view_get_kind(v);
}

/* ---- errors ---- */

void nw_window_show_error(NwWindow *w, const char *message)
{
  g_free(w->error_text);
  w->error_text = g_strdup(message);
  gtk_label_set_text(w->info_label, message);
  gtk_widget_set_visible(GTK_WIDGET(w->info_bar), TRUE);
  /* scripted runs and tests read it here */
  fprintf(stderr, "neurowarp: error: %s\n", message);
}

const char *nw_window_get_status_text(NwWindow *w)
{
  return gtk_label_get_text(w->status_label);
}

const char *nw_window_get_compare_text(NwWindow *w)
{
  return gtk_label_get_text(w->compare_label);
}

const char *nw_window_get_error_text(NwWindow *w)
{
  return w->error_text;
}

static void on_info_bar_response(GtkInfoBar *bar, int response, NwWindow *w)
{
  gtk_widget_set_visible(GTK_WIDGET(bar), FALSE);
}

/* ---- loading ---- */

static void set_busy(NwWindow *w, int delta)
{
  w->busy += delta;
  if (w->busy > 0)
    gtk_spinner_start(w->spinner);
  else
    gtk_spinner_stop(w->spinner);
}

typedef struct {
  NwWindow *win; /* weak: the window may close while a file loads */
  char *path;    /* NULL for the demo */
} LoadRequest;

static void add_recent(const char *path)
{
  g_autofree char *uri = g_filename_to_uri(path, NULL, NULL);
  if (uri != NULL)
    gtk_recent_manager_add_item(gtk_recent_manager_get_default(), uri);
}

static void on_loaded(GObject *src, GAsyncResult *res, gpointer data)
{
  LoadRequest *req = data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) layers = nw_load_finish(res, &error);
  NwWindow *w = req->win;
  if (w != NULL) {
    g_object_remove_weak_pointer(G_OBJECT(w), (gpointer *)&req->win);
    set_busy(w, -1);
    if (layers == NULL) {
      /* core messages already start with the file's name: do not say it twice */
      const char *what = req->path ? req->path : "the demo case";
      g_autofree char *msg = g_str_has_prefix(error->message, what)
                                 ? g_strdup_printf("Could not open %s", error->message)
                                 : g_strdup_printf("Could not open %s: %s", what, error->message);
      w->load_failures++;
      nw_window_show_error(w, msg);
    } else {
      for (guint i = 0; i < layers->len; i++)
        nw_scene_add_layer(w->scene, g_ptr_array_index(layers, i));
      if (req->path != NULL)
        add_recent(req->path);
      nw_window_update_status(w, NULL);
    }
  }
  g_free(req->path);
  g_free(req);
}

static LoadRequest *new_request(NwWindow *w, const char *path)
{
  LoadRequest *req = g_new0(LoadRequest, 1);
  req->win = w;
  g_object_add_weak_pointer(G_OBJECT(w), (gpointer *)&req->win);
  req->path = g_strdup(path);
  set_busy(w, +1);
  nw_window_update_status(w, NULL);
  return req;
}

guint nw_window_get_load_failures(NwWindow *w)
{
  return w->load_failures;
}

void nw_window_open_file(NwWindow *w, const char *path)
{
  nw_load_file_async(path, w->cancellable, on_loaded, new_request(w, path));
}

void nw_window_open_demo(NwWindow *w)
{
  nw_load_demo_async(2.0, w->cancellable, on_loaded, new_request(w, NULL));
}

gboolean nw_window_is_busy(NwWindow *w)
{
  return w->busy > 0;
}

/* ---- drag and drop, recent files ---- */

guint nw_window_drop(NwWindow *w, GtkSelectionData *data)
{
  g_auto(GStrv) uris = gtk_selection_data_get_uris(data);
  guint opened = 0;
  for (int i = 0; uris != NULL && uris[i] != NULL; i++) {
    g_autofree char *path = g_filename_from_uri(uris[i], NULL, NULL);
    if (path != NULL) {
      nw_window_open_file(w, path);
      opened++;
    } else {
      g_autofree char *msg =
          g_strdup_printf("Could not open %s: only files on this computer can be dropped", uris[i]);
      nw_window_show_error(w, msg);
    }
  }
  return opened;
}

static void on_drag_data(GtkWidget *widget, GdkDragContext *ctx, int x, int y,
                         GtkSelectionData *data, guint info, guint time, NwWindow *w)
{
  gtk_drag_finish(ctx, nw_window_drop(w, data) > 0, FALSE, time);
}

static void fill_recent_menu(GtkRecentManager *rm, NwWindow *w)
{
  g_menu_remove_all(w->recent_menu);
  GList *items = gtk_recent_manager_get_items(rm);
  int n = 0;
  for (GList *it = items; it != NULL && n < 10; it = it->next) {
    GtkRecentInfo *info = it->data;
    if (!gtk_recent_info_has_application(info, g_get_application_name()))
      continue;
    g_autofree char *path = g_filename_from_uri(gtk_recent_info_get_uri(info), NULL, NULL);
    if (path == NULL || !g_file_test(path, G_FILE_TEST_EXISTS))
      continue;
    /* menu labels read "_x" as a mnemonic: double the underscores of file names, so that
     * sform_zero.nii does not show as sformzero.nii */
    g_autofree char *base = g_path_get_basename(path);
    g_auto(GStrv) parts = g_strsplit(base, "_", -1);
    g_autofree char *label = g_strjoinv("__", parts);
    g_autoptr(GMenuItem) item = g_menu_item_new(label, NULL);
    g_menu_item_set_action_and_target_value(item, "win.open-file", g_variant_new_string(path));
    g_menu_append_item(w->recent_menu, item);
    n++;
  }
  g_list_free_full(items, (GDestroyNotify)gtk_recent_info_unref);
}

/* ---- layout ---- */

const char *nw_window_get_layout(NwWindow *w)
{
  return layout_names[w->maximized < 0 ? 4 : w->maximized];
}

void nw_window_set_layout(NwWindow *w, int kind_or_grid)
{
  w->maximized = kind_or_grid;
  w->layout_auto = FALSE;
  for (int i = 0; i < 4; i++)
    gtk_widget_set_visible(w->frames[i], kind_or_grid < 0 || kind_or_grid == i);
  if (kind_or_grid >= 0)
    w->current_view = kind_or_grid;
  /* the View menu's radio items follow the action's state, whoever changed the layout */
  GAction *a = g_action_map_lookup_action(G_ACTION_MAP(w), "maximize");
  if (a != NULL)
    g_simple_action_set_state(G_SIMPLE_ACTION(a), g_variant_new_string(nw_window_get_layout(w)));
}

void nw_window_keep_layout(NwWindow *w)
{
  w->layout_auto = FALSE;
}

/* A scene of 2D images opens on the axial view alone: the coronal and sagittal views would
 * show a one-voxel line and the 3D view a flat slab. Only a change between 2D and not acts,
 * so the user's later choice stands: the grid becomes the axial view when the scene turns
 * 2D (first opened), and the axial view chosen here goes back to the grid when it stops
 * being 2D (a volume or a surface opened, everything closed). A layout the user chose is
 * never changed. */
static void follow_flatness(NwWindow *w)
{
  const gboolean flat = nw_scene_is_flat(w->scene);
  if (flat == w->scene_flat)
    return;
  w->scene_flat = flat;
  if (flat && w->maximized < 0) {
    nw_window_set_layout(w, NW_VIEW_AXIAL);
    w->layout_auto = TRUE;
  } else if (!flat && w->layout_auto) {
    nw_window_set_layout(w, -1);
  }
}

static void on_maximize_clicked(GtkButton *b, NwWindow *w)
{
  int k = GPOINTER_TO_INT(g_object_get_data(G_OBJECT(b), "nw-view"));
  const char *target = w->maximized == k ? "grid" : layout_names[k];
  g_action_group_activate_action(G_ACTION_GROUP(w), "maximize", g_variant_new_string(target));
}

static GtkWidget *view_frame(NwWindow *w, NwView *view, int k)
{
  GtkWidget *overlay = gtk_overlay_new();
  gtk_container_add(GTK_CONTAINER(overlay), GTK_WIDGET(view));
  GtkWidget *b = gtk_button_new_from_icon_name("view-fullscreen-symbolic", GTK_ICON_SIZE_MENU);
  gtk_button_set_relief(GTK_BUTTON(b), GTK_RELIEF_NONE);
  gtk_widget_set_halign(b, GTK_ALIGN_END);
  gtk_widget_set_valign(b, GTK_ALIGN_START);
  gtk_widget_set_tooltip_text(b, "Maximise this view, or back to all four (keys 1-4)");
  g_object_set_data(G_OBJECT(b), "nw-view", GINT_TO_POINTER(k));
  g_signal_connect(b, "clicked", G_CALLBACK(on_maximize_clicked), w);
  gtk_overlay_add_overlay(GTK_OVERLAY(overlay), b);
  gtk_widget_show_all(overlay);
  return overlay;
}

gboolean nw_window_views_ready(NwWindow *w)
{
  for (int i = 0; i < 4; i++)
    if (!nw_view_is_ready(w->views[i]) && nw_view_get_gl_error(w->views[i]) == NULL)
      return FALSE;
  return TRUE;
}

NwView *nw_window_get_view(NwWindow *w, NwViewKind kind)
{
  return w->views[kind];
}

gboolean nw_window_save_screenshot(NwWindow *w, const char *path, int cell, GError **error)
{
  if (w->maximized >= 0)
    return nw_screenshot_view(w->views[w->maximized], path, 2 * cell, 2 * cell, error);
  return nw_screenshot_figure((NwView *const *)w->views, path, cell, error);
}

/* ---- compare bar ---- */

static void on_compare_controls(GtkWidget *widget, NwWindow *w)
{
  NwCompareStyle c = *nw_scene_get_compare(w->scene);
  c.blend = (float)gtk_range_get_value(GTK_RANGE(w->blend_scale));
  c.curtain = (float)gtk_range_get_value(GTK_RANGE(w->curtain_scale));
  c.tile_mm = (float)gtk_spin_button_get_value(w->tile_spin);
  nw_scene_set_compare(w->scene, &c);
}

void nw_window_sync_compare_bar(NwWindow *w)
{
  const NwCompareStyle c = *nw_scene_get_compare(w->scene);
  gtk_range_set_value(GTK_RANGE(w->blend_scale), c.blend);
  gtk_range_set_value(GTK_RANGE(w->curtain_scale), c.curtain);
  gtk_spin_button_set_value(w->tile_spin, c.tile_mm);
  NwLayer *a = nw_scene_get_compare_a(w->scene), *b = nw_scene_get_compare_b(w->scene);
  g_autofree char *text =
      g_strdup_printf("%s: %s vs %s", nw_compare_mode_name(c.mode), a ? nw_layer_get_name(a) : "—",
                      b ? nw_layer_get_name(b) : "—");
  gtk_label_set_text(w->compare_label, text);
}

static void on_layers_changed(NwScene *s, NwWindow *w)
{
  follow_flatness(w);
  nw_window_sync_compare_bar(w);
  /* the subtitle names the images loaded */
  g_autoptr(GString) sub = g_string_new(NULL);
  for (guint i = 0; i < nw_scene_n_layers(s); i++) {
    NwLayer *l = nw_scene_get_layer(s, i);
    if (nw_layer_get_kind(l) == NW_LAYER_IMAGE)
      g_string_append_printf(sub, "%s%s", sub->len ? " · " : "", nw_layer_get_name(l));
  }
  gtk_header_bar_set_subtitle(w->header, sub->len ? sub->str : NULL);
}

/* Plain keys (the 0-4 accelerators) go to a focused text field first, so typing a range
 * value does not maximise a view. */
static gboolean nw_window_key_press(GtkWidget *widget, GdkEventKey *ev)
{
  GtkWidget *focus = gtk_window_get_focus(GTK_WINDOW(widget));
  if (GTK_IS_EDITABLE(focus) && !(ev->state & (GDK_CONTROL_MASK | GDK_MOD1_MASK)) &&
      gtk_window_propagate_key_event(GTK_WINDOW(widget), ev))
    return TRUE;
  return GTK_WIDGET_CLASS(nw_window_parent_class)->key_press_event(widget, ev);
}

/* ---- life cycle ---- */

static void nw_window_dispose(GObject *obj)
{
  NwWindow *w = NW_WINDOW(obj);
  if (w->cancellable != NULL)
    g_cancellable_cancel(w->cancellable);
  g_clear_object(&w->cancellable);
  if (w->flicker_id != 0)
    g_source_remove(w->flicker_id), w->flicker_id = 0;
  if (w->recent_id != 0) {
    g_signal_handler_disconnect(gtk_recent_manager_get_default(), w->recent_id);
    w->recent_id = 0;
  }
  if (w->scene != NULL)
    g_signal_handlers_disconnect_by_data(w->scene, w);
  g_clear_object(&w->scene);
  g_clear_object(&w->recent_menu);
  G_OBJECT_CLASS(nw_window_parent_class)->dispose(obj);
}

static void nw_window_finalize(GObject *obj)
{
  g_free(NW_WINDOW(obj)->error_text);
  G_OBJECT_CLASS(nw_window_parent_class)->finalize(obj);
}

static void nw_window_class_init(NwWindowClass *klass)
{
  GtkWidgetClass *wc = GTK_WIDGET_CLASS(klass);
  G_OBJECT_CLASS(klass)->dispose = nw_window_dispose;
  G_OBJECT_CLASS(klass)->finalize = nw_window_finalize;
  wc->key_press_event = nw_window_key_press;
  gtk_widget_class_set_template_from_resource(wc, "/org/neurowarp/Neurowarp/ui/window.ui");
  gtk_widget_class_bind_template_child(wc, NwWindow, info_bar);
  gtk_widget_class_bind_template_child(wc, NwWindow, status_label);
  gtk_widget_class_bind_template_child(wc, NwWindow, view_grid);
  gtk_widget_class_bind_template_child(wc, NwWindow, sidebar);
  gtk_widget_class_bind_template_child(wc, NwWindow, header);
  gtk_widget_class_bind_template_child(wc, NwWindow, menu_button);
  gtk_widget_class_bind_template_child(wc, NwWindow, view_button);
  gtk_widget_class_bind_template_child(wc, NwWindow, compare_button);
  gtk_widget_class_bind_template_child(wc, NwWindow, compare_label);
  gtk_widget_class_bind_template_child(wc, NwWindow, blend_scale);
  gtk_widget_class_bind_template_child(wc, NwWindow, curtain_scale);
  gtk_widget_class_bind_template_child(wc, NwWindow, tile_spin);
  gtk_widget_class_bind_template_child_full(wc, "busy_spinner", FALSE,
                                            G_STRUCT_OFFSET(NwWindow, spinner));
  gtk_widget_class_bind_template_callback(wc, on_info_bar_response);
}

static void setup_menus(NwWindow *w)
{
  g_autoptr(GtkBuilder) b = gtk_builder_new_from_resource("/org/neurowarp/Neurowarp/ui/menus.ui");
  /* Classic menus, not popovers: GTK 3's popover menus do not show accelerators. */
  gtk_menu_button_set_use_popover(w->menu_button, FALSE);
  gtk_menu_button_set_use_popover(w->compare_button, FALSE);
  gtk_menu_button_set_use_popover(w->view_button, FALSE);
  gtk_menu_button_set_menu_model(w->menu_button,
                                 G_MENU_MODEL(gtk_builder_get_object(b, "primary_menu")));
  gtk_menu_button_set_menu_model(w->compare_button,
                                 G_MENU_MODEL(gtk_builder_get_object(b, "compare_menu")));
  gtk_menu_button_set_menu_model(w->view_button,
                                 G_MENU_MODEL(gtk_builder_get_object(b, "view_menu")));
  w->recent_menu = g_object_ref(G_MENU(gtk_builder_get_object(b, "recent_menu")));
  GtkRecentManager *rm = gtk_recent_manager_get_default();
  w->recent_id = g_signal_connect(rm, "changed", G_CALLBACK(fill_recent_menu), w);
  fill_recent_menu(rm, w);
}

/* The run panel's requests: its errors go to the error bar; a session it opens may name
 * files or the demo case. */
static void on_panel_error(NwRunPanel *p, const char *message, NwWindow *w)
{
  nw_window_show_error(w, message);
}

static void on_panel_open_file(NwRunPanel *p, const char *path, NwWindow *w)
{
  nw_window_open_file(w, path);
}

static void on_panel_open_demo(NwRunPanel *p, NwWindow *w)
{
  nw_window_open_demo(w);
}

/* The sidebar: a stack "Layers | Run" under a switcher, inside the scrolled sidebar (the run
 * page is taller than the window at 1280x880). The run panel's actions become the window's
 * win.run, win.pause, win.step, win.stop, win.save-results, win.save-session,
 * win.open-session and win.live-view. */
static void build_sidebar(NwWindow *w)
{
  GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2);
  w->sidebar_stack = GTK_STACK(gtk_stack_new());
  GtkWidget *sw = gtk_stack_switcher_new();
  w->sidebar_switcher = GTK_STACK_SWITCHER(sw);
  gtk_stack_switcher_set_stack(GTK_STACK_SWITCHER(sw), w->sidebar_stack);
  gtk_widget_set_halign(sw, GTK_ALIGN_CENTER);
  gtk_widget_set_margin_top(sw, 4);
  gtk_box_pack_start(GTK_BOX(box), sw, FALSE, FALSE, 0);
  gtk_box_pack_start(GTK_BOX(box), GTK_WIDGET(w->sidebar_stack), TRUE, TRUE, 0);
  w->layer_list = nw_layer_list_new(w->scene);
  GtkWidget *list = GTK_WIDGET(w->layer_list);
  gtk_stack_add_titled(w->sidebar_stack, list, "layers", "Layers");
  w->run_panel = nw_run_panel_new(w->scene);
  nw_run_panel_add_actions(w->run_panel, G_ACTION_MAP(w));
  g_signal_connect(w->run_panel, "error", G_CALLBACK(on_panel_error), w);
  g_signal_connect(w->run_panel, "open-file", G_CALLBACK(on_panel_open_file), w);
  g_signal_connect(w->run_panel, "open-demo", G_CALLBACK(on_panel_open_demo), w);
  gtk_stack_add_titled(w->sidebar_stack, GTK_WIDGET(w->run_panel), "run", "Run");
  gtk_widget_show_all(box);
  /* A stack shows its first *visible* child: the run panel was shown before the list was,
   * so without this the window opened on Run while the switcher pressed "Layers". */
  gtk_stack_set_visible_child_name(w->sidebar_stack, "layers");
  gtk_container_add(GTK_CONTAINER(w->sidebar), box);
}

static void nw_window_init(NwWindow *w)
{
  w->flicker_ms = 500;
  gtk_widget_init_template(GTK_WIDGET(w));
  w->info_label = GTK_LABEL(gtk_label_new(NULL));
  gtk_label_set_line_wrap(w->info_label, TRUE);
  gtk_label_set_selectable(w->info_label, TRUE);
  gtk_label_set_xalign(w->info_label, 0.0f);
  gtk_widget_show(GTK_WIDGET(w->info_label));
  gtk_container_add(GTK_CONTAINER(gtk_info_bar_get_content_area(w->info_bar)),
                    GTK_WIDGET(w->info_label));
  w->scene = nw_scene_new();
  w->cancellable = g_cancellable_new();
  w->maximized = -1;
  g_signal_connect(w->scene, "crosshair-moved", G_CALLBACK(on_crosshair_moved), w);
  g_signal_connect(w->scene, "changed", G_CALLBACK(on_scene_changed), w);
  g_signal_connect(w->scene, "layers-changed", G_CALLBACK(on_layers_changed), w);
  build_sidebar(w);
  for (int k = 0; k < 4; k++) {
    w->views[k] = nw_view_new((NwViewKind)k, w->scene);
    g_signal_connect(w->views[k], "pointer-moved", G_CALLBACK(on_pointer_moved), w);
    g_signal_connect(w->views[k], "pointer-left", G_CALLBACK(on_pointer_left), w);
    g_signal_connect(w->views[k], "activated", G_CALLBACK(on_view_activated), w);
    g_signal_connect_after(w->views[k], "realize", G_CALLBACK(on_view_realized), w);
    w->frames[k] = view_frame(w, w->views[k], k);
    gtk_grid_attach(w->view_grid, w->frames[k], k % 2, k / 2, 1, 1);
  }
  g_signal_connect(w->blend_scale, "value-changed", G_CALLBACK(on_compare_controls), w);
  g_signal_connect(w->curtain_scale, "value-changed", G_CALLBACK(on_compare_controls), w);
  g_signal_connect(w->tile_spin, "value-changed", G_CALLBACK(on_compare_controls), w);
  gtk_drag_dest_set(GTK_WIDGET(w), GTK_DEST_DEFAULT_ALL, NULL, 0, GDK_ACTION_COPY);
  gtk_drag_dest_add_uri_targets(GTK_WIDGET(w));
  g_signal_connect(w, "drag-data-received", G_CALLBACK(on_drag_data), w);
  setup_menus(w);
  nw_window_install_actions(w);
  nw_window_sync_compare_bar(w);
  nw_window_update_status(w, NULL);
}

NwWindow *nw_window_new(GtkApplication *app)
{
  return g_object_new(NW_TYPE_WINDOW, "application", app, NULL);
}

NwScene *nw_window_get_scene(NwWindow *w)
{
  return w->scene;
}

NwRunPanel *nw_window_get_run_panel(NwWindow *w)
{
  return w->run_panel;
}

void nw_window_show_sidebar_page(NwWindow *w, const char *name)
{
  gtk_stack_set_visible_child_name(w->sidebar_stack, name);
}

GtkMenu *nw_window_get_menu(NwWindow *w, const char *name)
{
  GtkMenuButton *b = g_strcmp0(name, "primary") == 0   ? w->menu_button
                     : g_strcmp0(name, "compare") == 0 ? w->compare_button
                     : g_strcmp0(name, "view") == 0    ? w->view_button
                                                       : NULL;
  return b != NULL ? gtk_menu_button_get_popup(b) : NULL;
}

NwLayerList *nw_window_get_layer_list(NwWindow *w)
{
  return w->layer_list;
}

const char *nw_window_get_sidebar_page(NwWindow *w)
{
  return gtk_stack_get_visible_child_name(w->sidebar_stack);
}

const char *nw_window_get_sidebar_switch(NwWindow *w)
{
  g_autoptr(GList) buttons = gtk_container_get_children(GTK_CONTAINER(w->sidebar_switcher));
  for (GList *b = buttons; b != NULL; b = b->next) {
    GtkWidget *label = gtk_bin_get_child(GTK_BIN(b->data));
    if (gtk_toggle_button_get_active(b->data) && GTK_IS_LABEL(label))
      return gtk_label_get_text(GTK_LABEL(label));
  }
  return NULL;
}
