/* nw_script_private.h — what the script runner's files share: nw_script.c (the runner, the
 * view and layer commands, the run panel's commands) and nw_script_inspect.c (commands that
 * report or drive the window's own widgets: sidebar, menus, dialogs, keys). Main thread. */
#ifndef NW_SCRIPT_PRIVATE_H
#define NW_SCRIPT_PRIVATE_H

#include "nw_window.h"

/* Sets "script line \"LINE\": WHY" and returns FALSE. */
gboolean nw_script_bad(GError **error, const char *line, const char *why);

/* The first toplevel window on screen whose type is named type_name ("GtkAboutDialog"), or
 * NULL. */
GtkWindow *nw_script_find_window(const char *type_name);

/* The inspecting commands (t: the line's n words; cell: pixels per view in screenshots).
 * -1: not one of them; else TRUE/FALSE as nw_script_run_line. */
int nw_script_inspect(NwWindow *w, char **t, int n, int cell, const char *line, GError **error);

#endif
