/* nw_application.h — the neurowarp GtkApplication (id org.neurowarp.Neurowarp): command
 * line, app.* actions, the one accelerator table, and the demo case when started without
 * files. Every invocation opens its own window (non-unique), so scripted runs never hand
 * their work to a running instance. Main thread only.
 *
 * Options (see `neurowarp --help`): files to open; --no-demo; --screenshot FILE (render,
 * save, quit); --view, --compare-mode, --crosshair "X,Y,Z", --window W --level L, --tile,
 * --curtain, --blend, --show/--hide LAYER, --script FILE (nw_script.h), --shot-size N. */
#ifndef NW_APPLICATION_H
#define NW_APPLICATION_H

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define NW_TYPE_APPLICATION (nw_application_get_type())
G_DECLARE_FINAL_TYPE(NwApplication, nw_application, NW, APPLICATION, GtkApplication)

NwApplication *nw_application_new(void);
/* Non-zero when a scripted run failed (bad option, script error, failed screenshot). */
int nw_application_get_exit_status(NwApplication *app);

G_END_DECLS

#endif
