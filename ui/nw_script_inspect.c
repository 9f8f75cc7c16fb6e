/* nw_script_inspect.c — script commands that read back or drive what the window shows the
 * user, for tests and the user guide (see nw_script.h): the sidebar page and its switcher,
 * the menus as drawn (labels and accelerators), the layer list's rows.
 * They print what the widgets themselves hold, not what the code meant to put there.
 * Main thread only. */
#include <stdio.h>
#include <string.h>

#include "nw_script_private.h"

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

int nw_script_inspect(NwWindow *w, char **t, int n, const char *line, GError **error)
{
  if (strcmp(t[0], "sidebar") == 0 && n <= 2)
    return run_sidebar(w, t, n, line, error);
  if (strcmp(t[0], "layers") == 0 && n == 1)
    return run_layers(w);
  if (strcmp(t[0], "menu") == 0 && n == 2)
    return run_menu(w, t, line, error);
  return -1;
}
