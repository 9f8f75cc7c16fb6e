/* nw_script_inspect.c — script commands that read back or drive what the window shows the
 * user, for tests and the user guide (see nw_script.h): the sidebar page and its switcher,
 * the menus as drawn (labels and accelerators), the layer list's rows, the views shown, the
 * windows on screen and their text; and keys pressed and actions activated as a user would.
 * They print what the widgets themselves hold, not what the code meant to put there.
 * Main thread only. */
#include <stdio.h>
#include <string.h>

#include "nw_script_private.h"
#include "nw_view_overlay.h"

/* sidebar [layers|run]: switch the page, or print "sidebar: page P · switch S". */
static gboolean run_sidebar(NwWindow *w, char **t, int n, const char *line, GError **error)
{
  if (n == 2) {
    if (strcmp(t[1], "layers") != 0 && strcmp(t[1], "run") != 0)
      return nw_script_bad(error, line, "expected: sidebar [layers|run]");
    nw_window_show_sidebar_page(w, t[1]);
    return TRUE;
  }
  const char *page = nw_window_get_sidebar_page(w), *sw = nw_window_get_sidebar_switch(w);
  printf("sidebar: page %s · switch %s\n", page != NULL ? page : "none", sw != NULL ? sw : "none");
  fflush(stdout);
  return TRUE;
}

/* The accel label inside a menu item (a GtkModelMenuItem may wrap it in a box). */
static GtkAccelLabel *find_accel_label(GtkWidget *w)
{
  if (GTK_IS_ACCEL_LABEL(w))
    return GTK_ACCEL_LABEL(w);
  if (!GTK_IS_CONTAINER(w))
    return NULL;
  g_autoptr(GList) children = gtk_container_get_children(GTK_CONTAINER(w));
  for (GList *c = children; c != NULL; c = c->next) {
    GtkAccelLabel *l = find_accel_label(c->data);
    if (l != NULL)
      return l;
  }
  return NULL;
}

/* One line per item, "menu: LABEL\tACCEL" as the user reads them (mnemonics resolved,
 * the accelerator as GTK labels it), submenus indented by two spaces. */
static void print_menu(GtkMenu *menu, int depth)
{
  g_autoptr(GList) items = gtk_container_get_children(GTK_CONTAINER(menu));
  for (GList *i = items; i != NULL; i = i->next) {
    GtkAccelLabel *l = find_accel_label(i->data);
    if (l == NULL || !gtk_widget_get_visible(i->data))
      continue;
    guint key = 0;
    GdkModifierType mods = 0;
    gtk_accel_label_get_accel(l, &key, &mods);
    g_autofree char *accel = key != 0 ? gtk_accelerator_get_label(key, mods) : g_strdup("");
    printf("menu: %*s%s\t%s\n", 2 * depth, "", gtk_label_get_text(GTK_LABEL(l)), accel);
    GtkWidget *sub = gtk_menu_item_get_submenu(i->data);
    if (GTK_IS_MENU(sub))
      print_menu(GTK_MENU(sub), depth + 1);
  }
}

static gboolean run_menu(NwWindow *w, char **t, const char *line, GError **error)
{
  GtkMenu *menu = nw_window_get_menu(w, t[1]);
  if (menu == NULL)
    return nw_script_bad(error, line, "expected: menu primary|compare|view");
  print_menu(menu, 0);
  fflush(stdout);
  return TRUE;
}

/* layers: "layers: TOP | ... | BOTTOM", the layer list's rows as shown. */
static gboolean run_layers(NwWindow *w)
{
  g_autoptr(GPtrArray) rows = nw_layer_list_get_rows(nw_window_get_layer_list(w));
  printf("layers:");
  for (guint i = 0; i < rows->len; i++)
    printf("%s %s", i > 0 ? " |" : "", nw_layer_get_name(rows->pdata[i]));
  printf("\n");
  fflush(stdout);
  return TRUE;
}

/* key ACCEL: a key press (as gtk_accelerator_parse reads ACCEL) delivered to the window as
 * from the keyboard: GTK's own handling (accelerators, focus widget) decides what it does.
 * The hardware keycode and Shift come from the keymap, as GTK matches accelerators by them. */
static gboolean run_key(NwWindow *w, const char *accel, const char *line, GError **error)
{
  guint keyval = 0;
  GdkModifierType mods = 0;
  gtk_accelerator_parse(accel, &keyval, &mods);
  GdkWindow *gw = gtk_widget_get_window(GTK_WIDGET(w));
  GdkDisplay *display = gtk_widget_get_display(GTK_WIDGET(w));
  g_autofree GdkKeymapKey *keys = NULL;
  gint n_keys = 0;
  if (keyval == 0 || gw == NULL ||
      !gdk_keymap_get_entries_for_keyval(gdk_keymap_get_for_display(display), keyval, &keys,
                                         &n_keys) ||
      n_keys == 0)
    return nw_script_bad(error, line, "expected: key ACCEL (a key this keyboard has)");
  GdkEvent *ev = gdk_event_new(GDK_KEY_PRESS);
  ev->key.window = g_object_ref(gw);
  ev->key.send_event = TRUE;
  ev->key.time = GDK_CURRENT_TIME;
  ev->key.keyval = keyval;
  ev->key.state = mods | (keys[0].level == 1 ? GDK_SHIFT_MASK : 0);
  ev->key.hardware_keycode = (guint16)keys[0].keycode;
  ev->key.group = (guint8)keys[0].group;
  gdk_event_set_device(ev, gdk_seat_get_keyboard(gdk_display_get_default_seat(display)));
  gtk_main_do_event(ev);
  gdk_event_free(ev);
  return TRUE;
}

/* pointer VIEW FX FY: the pointer moved over a view to the fractions FX, FY of its width and
 * height, as a motion event from the mouse (the status bar follows it). */
static gboolean run_pointer(NwWindow *w, char **t, const char *line, GError **error)
{
  NwViewKind k;
  double fx, fy;
  char *end1 = NULL, *end2 = NULL;
  if (!nw_view_kind_from_name(t[1], &k) || (fx = g_ascii_strtod(t[2], &end1), *end1 != '\0') ||
      (fy = g_ascii_strtod(t[3], &end2), *end2 != '\0'))
    return nw_script_bad(error, line, "expected: pointer VIEW FX FY (fractions of the view)");
  GtkWidget *v = GTK_WIDGET(nw_window_get_view(w, k));
  GdkWindow *gw = NULL; /* the view's input window (a GtkGLArea's own child window) */
  g_autoptr(GList) children =
      gtk_widget_get_mapped(v) ? gdk_window_get_children(gtk_widget_get_window(v)) : NULL;
  for (GList *c = children; c != NULL && gw == NULL; c = c->next) {
    gpointer owner = NULL;
    gdk_window_get_user_data(c->data, &owner);
    if (owner == v)
      gw = c->data;
  }
  if (gw == NULL)
    return nw_script_bad(error, line, "that view is not on screen");
  GdkDisplay *display = gtk_widget_get_display(v);
  /* Crossing events that earlier commands caused (a layout change under the X server's own
   * pointer) are handled first, so that none of them lands after this move and sends the
   * status bar back to the crosshair before the next command reads it. */
  gdk_display_sync(display);
  while (gtk_events_pending())
    gtk_main_iteration_do(FALSE);
  GdkEvent *ev = gdk_event_new(GDK_MOTION_NOTIFY);
  ev->motion.window = g_object_ref(gw);
  ev->motion.send_event = TRUE;
  ev->motion.time = GDK_CURRENT_TIME;
  ev->motion.x = fx * gtk_widget_get_allocated_width(v);
  ev->motion.y = fy * gtk_widget_get_allocated_height(v);
  gdk_event_set_device(ev, gdk_seat_get_pointer(gdk_display_get_default_seat(display)));
  gtk_main_do_event(ev);
  gdk_event_free(ev);
  return TRUE;
}

/* The uri-list of a drop, offered on a selection of the script's own. */
static void offer_uris(GtkClipboard *c, GtkSelectionData *sd, guint info, gpointer uris)
{
  gtk_selection_data_set_uris(sd, uris);
}

static void forget_uris(GtkClipboard *c, gpointer uris)
{
  g_strfreev(uris);
}

/* drop PATH [| PATH...]: the files (or URIs) dropped on the window. The URIs travel as a
 * drag's do: set as text/uri-list on an X selection and read back as GtkSelectionData
 * (gtk_selection_data_set_uris / get_uris: escaping, UTF-8 names), then the window's drop
 * handler opens them. */
static gboolean run_drop(NwWindow *w, char **t, int n, const char *line, GError **error)
{
  g_autofree char *rest = g_strjoinv(" ", t + 1);
  g_auto(GStrv) items = g_strsplit(rest, " | ", -1);
  GStrv uris = g_new0(char *, g_strv_length(items) + 1);
  for (int i = 0; items[i] != NULL; i++) {
    g_autofree char *abs = g_canonicalize_filename(items[i], NULL);
    uris[i] =
        strstr(items[i], "://") != NULL ? g_strdup(items[i]) : g_filename_to_uri(abs, NULL, NULL);
  }
  GtkClipboard *c =
      gtk_widget_get_clipboard(GTK_WIDGET(w), gdk_atom_intern_static_string("NW_SCRIPT_DROP"));
  GtkTargetList *list = gtk_target_list_new(NULL, 0);
  gtk_target_list_add_uri_targets(list, 0);
  gint n_targets = 0;
  GtkTargetEntry *targets = gtk_target_table_new_from_list(list, &n_targets);
  const gboolean set =
      gtk_clipboard_set_with_data(c, targets, (guint)n_targets, offer_uris, forget_uris, uris);
  if (!set)
    g_strfreev(uris);
  gtk_target_table_free(targets, n_targets);
  gtk_target_list_unref(list);
  GtkSelectionData *sd =
      set ? gtk_clipboard_wait_for_contents(c, gdk_atom_intern_static_string("text/uri-list"))
          : NULL;
  if (sd == NULL)
    return nw_script_bad(error, line, "the dropped files could not be put on a selection");
  nw_window_drop(w, sd);
  gtk_selection_data_free(sd);
  gtk_clipboard_clear(c);
  return TRUE;
}

/* action NAME [STRING]: activate app.NAME / win.NAME (with a string target), as a menu item
 * does. */
static gboolean run_action(NwWindow *w, char **t, int n, const char *line, GError **error)
{
  GApplication *app = G_APPLICATION(gtk_window_get_application(GTK_WINDOW(w)));
  const char *dot = strchr(t[1], '.');
  GActionGroup *group = g_str_has_prefix(t[1], "app.")   ? G_ACTION_GROUP(app)
                        : g_str_has_prefix(t[1], "win.") ? G_ACTION_GROUP(w)
                                                         : NULL;
  if (group == NULL || !g_action_group_has_action(group, dot + 1))
    return nw_script_bad(error, line, "expected: action app.NAME|win.NAME [STRING]");
  g_action_group_activate_action(group, dot + 1, n == 3 ? g_variant_new_string(t[2]) : NULL);
  return TRUE;
}

/* windows: "window: TYPE "TITLE"" for every toplevel window on screen. */
static gboolean run_windows(void)
{
  g_autoptr(GList) all = gtk_window_list_toplevels();
  for (GList *l = all; l != NULL; l = l->next) {
    GtkWindow *win = l->data;
    if (gtk_widget_get_mapped(GTK_WIDGET(win)) &&
        gtk_window_get_window_type(win) == GTK_WINDOW_TOPLEVEL)
      printf("window: %s \"%s\"\n", G_OBJECT_TYPE_NAME(win),
             gtk_window_get_title(win) != NULL ? gtk_window_get_title(win) : "");
  }
  fflush(stdout);
  return TRUE;
}

/* The text a user reads in w: shown labels, text views (About's licence), named icons and
 * whether the icon theme has them. */
static void print_text(GtkWidget *w, gpointer unused)
{
  if (GTK_IS_LABEL(w) && gtk_widget_get_visible(w) && *gtk_label_get_text(GTK_LABEL(w)) != '\0')
    printf("text: %s\n", gtk_label_get_text(GTK_LABEL(w)));
  if (GTK_IS_TEXT_VIEW(w)) {
    GtkTextBuffer *b = gtk_text_view_get_buffer(GTK_TEXT_VIEW(w));
    GtkTextIter start, end;
    gtk_text_buffer_get_bounds(b, &start, &end);
    g_autofree char *text = gtk_text_buffer_get_text(b, &start, &end, FALSE);
    if (*text != '\0')
      printf("text: %s\n", text);
  }
  const char *icon = NULL;
  if (GTK_IS_IMAGE(w) && gtk_image_get_storage_type(GTK_IMAGE(w)) == GTK_IMAGE_ICON_NAME)
    gtk_image_get_icon_name(GTK_IMAGE(w), &icon, NULL);
  if (icon != NULL && gtk_widget_get_visible(w))
    printf("icon: %s (%s)\n", icon,
           gtk_icon_theme_has_icon(gtk_icon_theme_get_default(), icon) ? "found" : "missing");
  if (GTK_IS_CONTAINER(w))
    gtk_container_forall(GTK_CONTAINER(w), print_text, unused);
}

GtkWindow *nw_script_find_window(const char *type_name)
{
  g_autoptr(GList) all = gtk_window_list_toplevels();
  for (GList *l = all; l != NULL; l = l->next)
    if (g_strcmp0(G_OBJECT_TYPE_NAME(l->data), type_name) == 0 && gtk_widget_get_mapped(l->data))
      return l->data;
  return NULL;
}

/* The button of w whose label reads text (a mnemonic's underscore left out), or NULL. */
static GtkButton *find_button(GtkWidget *w, const char *text)
{
  const char *label = GTK_IS_BUTTON(w) ? gtk_button_get_label(GTK_BUTTON(w)) : NULL;
  if (label != NULL) {
    g_auto(GStrv) parts = g_strsplit(label, "_", -1);
    g_autofree char *shown =
        gtk_button_get_use_underline(GTK_BUTTON(w)) ? g_strjoinv("", parts) : g_strdup(label);
    if (strcmp(shown, text) == 0)
      return GTK_BUTTON(w);
  }
  GtkButton *found = NULL;
  if (GTK_IS_CONTAINER(w)) {
    g_autoptr(GList) children = gtk_container_get_children(GTK_CONTAINER(w));
    for (GList *c = children; c != NULL && found == NULL; c = c->next)
      found = find_button(c->data, text);
  }
  return found;
}

/* click TYPE LABEL: press the button labelled LABEL in the window of type TYPE. */
static gboolean run_click(char **t, int n, const char *line, GError **error)
{
  GtkWindow *win = nw_script_find_window(t[1]);
  g_autofree char *label = g_strjoinv(" ", t + 2);
  GtkButton *b = win != NULL ? find_button(GTK_WIDGET(win), label) : NULL;
  if (b == NULL)
    return nw_script_bad(error, line, "no such window, or no button of that label in it");
  gtk_button_clicked(b);
  return TRUE;
}

/* window-text TYPE: what a user reads in the window of that type (print_text). */
static gboolean run_window_text(const char *type, const char *line, GError **error)
{
  GtkWindow *win = nw_script_find_window(type);
  if (win == NULL)
    return nw_script_bad(error, line, "no window of that type on screen");
  print_text(GTK_WIDGET(win), NULL);
  fflush(stdout);
  return TRUE;
}

/* overlay VIEW: the colour bars and scale bar of a slice view as screenshot-view draws it
 * (2 cell pixels square): "overlay: bar "TITLE" MAP LO..HI strip X Y W H" per bar, then
 * "overlay: scale MM mm bar X Y W H". */
static gboolean run_overlay(NwWindow *w, const char *view, int cell, const char *line,
                            GError **error)
{
  NwViewKind k;
  if (!nw_view_kind_from_name(view, &k) || k == NW_VIEW_3D)
    return nw_script_bad(error, line, "expected: overlay axial|coronal|sagittal");
  NwSliceGeometry g = nw_view_get_slice_geometry(nw_window_get_view(w, k), 2 * cell, 2 * cell);
  NwOverlayLayout lay;
  nw_view_overlay_layout(nw_window_get_scene(w), &g, &lay);
  const char *letters[4];
  nw_slice_geometry_letters(&g, letters);
  printf("overlay: letters %s %s %s %s\n", letters[0], letters[1], letters[2], letters[3]);
  for (int i = 0; i < lay.n_bars; i++) {
    const NwColorBar *b = &lay.bars[i];
    printf("overlay: bar \"%s\" %s %g %g strip %d %d %d %d\n", b->title,
           nw_colormap_name(b->colormap), b->lo, b->hi, b->strip.x, b->strip.y, b->strip.width,
           b->strip.height);
  }
  printf("overlay: scale %g mm bar %d %d %d %d\n", lay.scale_mm, lay.scale.x, lay.scale.y,
         lay.scale.width, lay.scale.height);
  fflush(stdout);
  return TRUE;
}

/* "layout: NAME" from the views' frames as shown: "grid" when all four are, else the names
 * of those shown; "(window says L)" after it when nw_window_get_layout disagrees. */
static gboolean run_layout(NwWindow *w)
{
  g_autoptr(GString) shown = g_string_new(NULL);
  int n_shown = 0;
  for (int k = NW_VIEW_AXIAL; k <= NW_VIEW_3D; k++) {
    GtkWidget *frame = gtk_widget_get_parent(GTK_WIDGET(nw_window_get_view(w, (NwViewKind)k)));
    if (gtk_widget_get_visible(frame)) {
      g_string_append_printf(shown, "%s%s", n_shown > 0 ? " " : "", nw_view_kind_name(k));
      n_shown++;
    }
  }
  const char *name = n_shown == 4 ? "grid" : shown->str;
  const char *said = nw_window_get_layout(w);
  if (strcmp(name, said) == 0)
    printf("layout: %s\n", name);
  else
    printf("layout: %s (window says %s)\n", name, said);
  fflush(stdout);
  return TRUE;
}

int nw_script_inspect(NwWindow *w, char **t, int n, int cell, const char *line, GError **error)
{
  if (strcmp(t[0], "overlay") == 0 && n == 2)
    return run_overlay(w, t[1], cell, line, error);
  if (strcmp(t[0], "sidebar") == 0 && n <= 2)
    return run_sidebar(w, t, n, line, error);
  if (strcmp(t[0], "drop") == 0 && n >= 2)
    return run_drop(w, t, n, line, error);
  if (strcmp(t[0], "pointer") == 0 && n == 4)
    return run_pointer(w, t, line, error);
  if (strcmp(t[0], "key") == 0 && n == 2)
    return run_key(w, t[1], line, error);
  if (strcmp(t[0], "action") == 0 && (n == 2 || n == 3))
    return run_action(w, t, n, line, error);
  if (strcmp(t[0], "windows") == 0 && n == 1)
    return run_windows();
  if (strcmp(t[0], "click") == 0 && n >= 3)
    return run_click(t, n, line, error);
  if (strcmp(t[0], "window-text") == 0 && n == 2)
    return run_window_text(t[1], line, error);
  if (strcmp(t[0], "layers") == 0 && n == 1)
    return run_layers(w);
  if (strcmp(t[0], "layout") == 0 && n == 1)
    return run_layout(w);
  if (strcmp(t[0], "menu") == 0 && n == 2)
    return run_menu(w, t, line, error);
  return -1;
}
