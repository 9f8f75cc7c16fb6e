/* nw_window.h — the main window: header bar with menus, the layer list, the four views
 * (axial, coronal, sagittal, 3D) in a 2x2 grid with one-click maximise, comparison
 * controls, an error bar and a status bar with the coordinates and values under the
 * pointer or crosshair. Files open on worker threads; errors go to the error bar (and to
 * stderr, for scripted runs). Commands are win.* actions (see nw_application.c for the
 * accelerators). Main thread only. */
#ifndef NW_WINDOW_H
#define NW_WINDOW_H

#include <gtk/gtk.h>

#include "nw_layer_list.h"
#include "nw_run_panel.h"
#include "nw_scene.h"
#include "nw_view.h"

G_BEGIN_DECLS

#define NW_TYPE_WINDOW (nw_window_get_type())
G_DECLARE_FINAL_TYPE(NwWindow, nw_window, NW, WINDOW, GtkApplicationWindow)

NwWindow *nw_window_new(GtkApplication *app);
NwScene *nw_window_get_scene(NwWindow *w);
NwView *nw_window_get_view(NwWindow *w, NwViewKind kind);

/* Start loading (worker thread); the layers appear when done. */
void nw_window_open_file(NwWindow *w, const char *path);
void nw_window_open_demo(NwWindow *w);
/* What a drop on the window does with the dropped data (text/uri-list): opens every local
 * file (a message in the error bar for other URIs); returns how many. */
guint nw_window_drop(NwWindow *w, GtkSelectionData *data);
/* How many files (or demo loads) could not be opened so far. */
guint nw_window_get_load_failures(NwWindow *w);
/* TRUE while any load runs. */
gboolean nw_window_is_busy(NwWindow *w);
/* TRUE when every view has its GL context and renderers. */
gboolean nw_window_views_ready(NwWindow *w);

/* Show message in the error bar (and on stderr). The last message, or NULL. */
void nw_window_show_error(NwWindow *w, const char *message);
const char *nw_window_get_error_text(NwWindow *w);

/* The comparison bar's text: "MODE: A vs B". */
const char *nw_window_get_compare_text(NwWindow *w);
/* The status bar's text (coordinates and values at the crosshair or pointer). */
const char *nw_window_get_status_text(NwWindow *w);

/* "grid" or the name of the maximised view. A scene of 2D images only (nw_scene_is_flat)
 * opens on "axial" by itself, unless the user had maximised a view; that automatic layout
 * goes back to the grid when a volume opens, unless the user changed it meanwhile. */
const char *nw_window_get_layout(NwWindow *w);
/* The layout shown is the user's from now on, also when it was the automatic one (the
 * script's "view" naming the layout already shown). */
void nw_window_keep_layout(NwWindow *w);
/* The current layout to PNG: the 2x2 figure (cell x cell per view) or the maximised view
 * (2 cell x 2 cell). */
gboolean nw_window_save_screenshot(NwWindow *w, const char *path, int cell, GError **error);

/* Flicker comparison: the time each image stays up (default 500 ms; 0 stops the timer, for
 * scripts that want a known phase), and one switch between A and B now. */
void nw_window_set_flicker_period(NwWindow *w, guint ms);
void nw_window_flicker_step(NwWindow *w);

/* The header bar's menu "primary", "compare" or "view" as shown (NULL for another name). */
GtkMenu *nw_window_get_menu(NwWindow *w, const char *name);

/* The sidebar's layer list. */
NwLayerList *nw_window_get_layer_list(NwWindow *w);
/* The sidebar's run panel. */
NwRunPanel *nw_window_get_run_panel(NwWindow *w);
/* Show the sidebar page "layers" or "run". */
void nw_window_show_sidebar_page(NwWindow *w, const char *name);
/* The page shown ("layers", "run"), and the title of the switcher's pressed button
 * ("Layers", "Run"; NULL when none is), which must agree. */
const char *nw_window_get_sidebar_page(NwWindow *w);
const char *nw_window_get_sidebar_switch(NwWindow *w);

G_END_DECLS

#endif
