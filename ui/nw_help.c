/* nw_help.c — the user guide and the About dialog (see nw_help.h). Main thread only. */
#include "nw_help.h"

#include "nw_error.h"

#ifndef NW_VERSION
#define NW_VERSION "unknown"
#endif

char *nw_help_guide_uri(void)
{
  const char *dir = NULL;
#ifdef NW_DOCS_INSTALL_DIR
  g_autofree char *installed = g_build_filename(NW_DOCS_INSTALL_DIR, "USER_GUIDE.md", NULL);
  if (g_file_test(installed, G_FILE_TEST_IS_REGULAR))
    dir = NW_DOCS_INSTALL_DIR;
#endif
#ifdef NW_DOCS_DIR
  if (dir == NULL)
    dir = NW_DOCS_DIR;
#endif
  g_autofree char *path = g_build_filename(dir != NULL ? dir : ".", "USER_GUIDE.md", NULL);
  return g_filename_to_uri(path, NULL, NULL);
}

gboolean nw_help_show_guide(GtkWindow *parent, GError **error)
{
  g_autofree char *uri = nw_help_guide_uri();
  g_autoptr(GError) e = NULL;
  if (uri != NULL && gtk_show_uri_on_window(parent, uri, GDK_CURRENT_TIME, &e))
    return TRUE;
  g_set_error(error, NW_ERROR, NW_ERROR_IO, "Could not open the user guide %s: %s",
              uri != NULL ? uri : "(no path)", e != NULL ? e->message : "no file name");
  return FALSE;
}

/* One dialog per window, made on first use and hidden (not destroyed) when closed. */
static GtkWidget *about_dialog_new(GtkWindow *parent)
{
  /* The data the demo case is made of, with the papers to cite when it is shown. */
  static const char *const data[] = {
      "Colin27 (“ch2” in Debian’s mricron-data, by Chris Rorden): Holmes et al., Enhancement "
      "of MR images using registration for signal averaging, J Comput Assist Tomogr "
      "22(2):324–333, 1998",
      "AAL atlas (aal.nii.gz and its label table in mricron-data): Tzourio-Mazoyer et al., "
      "Automated anatomical labeling of activations in SPM, NeuroImage 15(1):273–289, 2002",
      NULL};
  static const char *const colours[] = {
      "Turbo colour map: Anton Mikhailov, Google (Apache License 2.0)", NULL};
  GtkWidget *d = g_object_new(
      GTK_TYPE_ABOUT_DIALOG, "program-name", "neurowarp", "version", NW_VERSION, "logo-icon-name",
      "org.neurowarp.Neurowarp", "comments",
      "Watch GPU image registration happen: compare brain scans, deformation fields and "
      "surfaces.",
      "license-type", GTK_LICENSE_CUSTOM, "license",
      "neurowarp has no licence yet: its authors have not chosen one. Until they do, ask them "
      "before you copy, change or pass it on.\n\nThe demo data come from Debian’s "
      "mricron-data package (BSD-3-Clause, MRIcron by Chris Rorden); cite the papers under "
      "Credits when you show them.",
      "wrap-license", TRUE, "transient-for", parent, "destroy-with-parent", TRUE, NULL);
  gtk_about_dialog_add_credit_section(GTK_ABOUT_DIALOG(d), "Data", (const char **)data);
  gtk_about_dialog_add_credit_section(GTK_ABOUT_DIALOG(d), "Colour maps", (const char **)colours);
  g_signal_connect(d, "response", G_CALLBACK(gtk_widget_hide), NULL);
  g_signal_connect(d, "delete-event", G_CALLBACK(gtk_widget_hide_on_delete), NULL);
  return d;
}

static void forget_about(GtkWindow *parent)
{
  g_object_set_data(G_OBJECT(parent), "nw-about", NULL);
}

void nw_help_show_about(GtkWindow *parent)
{
  GtkWidget *d = parent != NULL ? g_object_get_data(G_OBJECT(parent), "nw-about") : NULL;
  if (d == NULL) {
    d = about_dialog_new(parent);
    if (parent != NULL) { /* it goes with its window (destroy-with-parent): forget it then */
      g_object_set_data(G_OBJECT(parent), "nw-about", d);
      g_signal_connect_swapped(d, "destroy", G_CALLBACK(forget_about), parent);
    }
  }
  gtk_window_present(GTK_WINDOW(d));
}
