/* nw_window_private.h — NwWindow's fields, shared by nw_window.c (layout, loading, bars)
 * and nw_window_actions.c (the win.* actions). Main thread only. */
#ifndef NW_WINDOW_PRIVATE_H
#define NW_WINDOW_PRIVATE_H

#include <string.h>

#include "nw_layer_list.h"
#include "nw_run_panel.h"
#include "nw_window.h"

struct _NwWindow {
  GtkApplicationWindow parent;
  /* template children */
  GtkInfoBar *info_bar;
  GtkLabel *info_label, *status_label, *compare_label;
  GtkGrid *view_grid;
  GtkScrolledWindow *sidebar;
  GtkHeaderBar *header;
  GtkMenuButton *menu_button, *view_button, *compare_button;
  GtkScale *blend_scale, *curtain_scale;
  GtkSpinButton *tile_spin;
  GtkSpinner *spinner;
  /* state */
  NwScene *scene;
  guint load_failures; /* files that could not be opened (a scripted run exits 1) */
  NwView *views[4];
  GtkWidget *frames[4];
  int maximized;    /* view kind, or -1 for the 2x2 grid */
  gboolean scene_flat;  /* the scene held 2D images only (nw_scene_is_flat) at its last change */
  gboolean layout_auto; /* the layout was chosen for a 2D scene, not by the user */
  int current_view; /* last clicked: what "screenshot" saves */
  int busy;         /* loads running */
  char *error_text;
  GCancellable *cancellable;
  GMenu *recent_menu;
  gulong recent_id;
  guint flicker_id;
  gboolean status_at_pointer; /* the status bar shows the point under the pointer */
  guint flicker_ms; /* flicker half-period; 0: only nw_window_flicker_step */
  NwRunPanel *run_panel; /* the sidebar's "Run" page */
  GtkStack *sidebar_stack; /* "Layers | Run" */
  GtkStackSwitcher *sidebar_switcher;
  NwLayerList *layer_list; /* the sidebar's "Layers" page */
};

void nw_window_install_actions(NwWindow *w);
/* The layout (and the maximize action's state): a view kind, or -1 for the grid. The
 * layout then counts as the user's (layout_auto FALSE). */
void nw_window_set_layout(NwWindow *w, int kind_or_grid);
void nw_window_sync_compare_bar(NwWindow *w);
/* Status bar for the point ras, or the crosshair when NULL. */
void nw_window_update_status(NwWindow *w, const double *ras_or_null);

#endif
