/* nw_help.h — Help: the user guide (F1) opened in the desktop's viewer for Markdown, and the
 * About dialog (icon, version, licence, the data the demo uses and their credits). The
 * keyboard shortcuts window is resources/gtk/help-overlay.ui, which GtkApplication loads.
 * Main thread only. */
#ifndef NW_HELP_H
#define NW_HELP_H

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* file:// URI of docs/USER_GUIDE.md: the installed copy when there is one, else the source
 * tree's (g_free). */
char *nw_help_guide_uri(void);
/* Open the guide with the desktop's default application; FALSE with a message naming the
 * guide's URI when none could. */
gboolean nw_help_show_guide(GtkWindow *parent, GError **error);
/* The About dialog, transient for parent. */
void nw_help_show_about(GtkWindow *parent);

G_END_DECLS

#endif
