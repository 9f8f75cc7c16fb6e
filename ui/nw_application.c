/* nw_application.c — the application object (see nw_application.h). Main thread only. */
#include "nw_application.h"

#include <stdio.h>

#include "nw_help.h"
#include "nw_script.h"
#include "nw_window.h"

struct _NwApplication {
  GtkApplication parent;
  int exit_status;
};

G_DEFINE_TYPE(NwApplication, nw_application, GTK_TYPE_APPLICATION)

/* The one accelerator table. */
static const struct {
  const char *action;
  const char *accels[3];
} accels[] = {
    {"app.open", {"<Primary>o", NULL}},
    {"app.quit", {"<Primary>q", NULL}},
    {"app.help", {"F1", NULL}},
    /* GtkApplication's own default for the shortcuts window lists Ctrl+F1 first */
    {"win.show-help-overlay", {"<Primary>question", "<Primary>F1", NULL}},
    /* Ctrl+S saves the work, as in other programs; pictures have keys of their own */
    {"win.save-session", {"<Primary>s", NULL}},
    {"win.save-layer", {"<Primary><Shift>s", NULL}},
    {"win.screenshot", {"F12", NULL}},
    {"win.export-figure", {"<Shift>F12", NULL}},
    {"win.maximize::axial", {"1", "KP_1", NULL}},
    {"win.maximize::coronal", {"2", "KP_2", NULL}},
    {"win.maximize::sagittal", {"3", "KP_3", NULL}},
    {"win.maximize::3d", {"4", "KP_4", NULL}},
    {"win.maximize::grid", {"0", "KP_0", NULL}},
    {"win.fullscreen", {"F11", NULL}},
    {"win.reset-views", {"Home", NULL}},
    {"win.window-preset::auto", {"<Primary>l", NULL}},
    {"win.compare-mode::none", {"<Primary>0", NULL}},
    {"win.compare-mode::blend", {"<Primary>1", NULL}},
    {"win.compare-mode::checker", {"<Primary>2", NULL}},
    {"win.compare-mode::difference", {"<Primary>3", NULL}},
    {"win.compare-mode::flicker", {"<Primary>4", NULL}},
    {"win.compare-mode::curtain", {"<Primary>5", NULL}},
    {"win.run", {"F5", NULL}},
    {"win.pause", {"F6", NULL}},
    {"win.step", {"F10", NULL}},
    {"win.stop", {"<Shift>F5", NULL}},
    {"win.save-results", {"<Primary>r", NULL}},
    {"win.live-view", {"F7", NULL}},
    {"win.open-session", {"<Primary><Shift>o", NULL}},
};

static NwWindow *active_window(GtkApplication *app)
{
  GtkWindow *w = gtk_application_get_active_window(app);
  return w != NULL && NW_IS_WINDOW(w) ? NW_WINDOW(w) : NULL;
}

static void add_filter(GtkFileChooser *fc, const char *name, const char *const *patterns)
{
  GtkFileFilter *f = gtk_file_filter_new();
  gtk_file_filter_set_name(f, name);
  for (int i = 0; patterns[i] != NULL; i++)
    gtk_file_filter_add_pattern(f, patterns[i]);
  gtk_file_chooser_add_filter(fc, f);
}

static void open_action(GSimpleAction *a, GVariant *p, gpointer data)
{
  GtkApplication *app = data;
  NwWindow *w = active_window(app);
  GtkFileChooserNative *fc =
      gtk_file_chooser_native_new("Open volumes, fields or surfaces", w ? GTK_WINDOW(w) : NULL,
                                  GTK_FILE_CHOOSER_ACTION_OPEN, "_Open", "_Cancel");
  gtk_file_chooser_set_select_multiple(GTK_FILE_CHOOSER(fc), TRUE);
  static const char *const all[] = {"*.nii",  "*.nii.gz", "*.png",      "*.tif",  "*.tiff",
                                    "*.pgm",  "*.gii",    "*.vtk",      "*.ply",  "*.obj",
                                    "*.pial", "*.white",  "*.inflated", "*.surf", NULL};
  static const char *const vols[] = {"*.nii", "*.nii.gz", NULL};
  static const char *const meshes[] = {"*.gii",   "*.vtk",      "*.ply",  "*.obj", "*.pial",
                                       "*.white", "*.inflated", "*.surf", NULL};
  static const char *const any[] = {"*", NULL};
  add_filter(GTK_FILE_CHOOSER(fc), "Everything neurowarp reads", all);
  add_filter(GTK_FILE_CHOOSER(fc), "NIfTI volumes and fields", vols);
  add_filter(GTK_FILE_CHOOSER(fc), "Surfaces", meshes);
  add_filter(GTK_FILE_CHOOSER(fc), "All files", any);
  if (gtk_native_dialog_run(GTK_NATIVE_DIALOG(fc)) == GTK_RESPONSE_ACCEPT) {
    if (w == NULL) {
      w = nw_window_new(app);
      gtk_window_present(GTK_WINDOW(w));
    }
    GSList *files = gtk_file_chooser_get_filenames(GTK_FILE_CHOOSER(fc));
    for (GSList *f = files; f != NULL; f = f->next)
      nw_window_open_file(w, f->data);
    g_slist_free_full(files, g_free);
  }
  g_object_unref(fc);
}

static void quit_action(GSimpleAction *a, GVariant *p, gpointer data)
{
  GList *wins = gtk_application_get_windows(GTK_APPLICATION(data));
  while (wins != NULL) {
    gtk_widget_destroy(wins->data);
    wins = gtk_application_get_windows(GTK_APPLICATION(data));
  }
}

static void about_action(GSimpleAction *a, GVariant *p, gpointer data)
{
  nw_help_show_about(GTK_WINDOW(active_window(data)));
}

/* F1: the user guide; a failure (no viewer for Markdown) goes to the error bar. */
static void help_action(GSimpleAction *a, GVariant *p, gpointer data)
{
  NwWindow *w = active_window(data);
  g_autoptr(GError) error = NULL;
  if (!nw_help_show_guide(GTK_WINDOW(w), &error) && w != NULL)
    nw_window_show_error(w, error->message);
}

static void nw_application_startup(GApplication *gapp)
{
  G_APPLICATION_CLASS(nw_application_parent_class)->startup(gapp);
  g_set_application_name("neurowarp");
  /* the icon is in the application's resources (icons/), which GtkApplication adds to the
   * icon theme */
  gtk_window_set_default_icon_name("org.neurowarp.Neurowarp");
  const GActionEntry entries[] = {
      {"open", open_action, NULL, NULL, NULL, {0}},
      {"quit", quit_action, NULL, NULL, NULL, {0}},
      {"about", about_action, NULL, NULL, NULL, {0}},
      {"help", help_action, NULL, NULL, NULL, {0}},
  };
  g_action_map_add_action_entries(G_ACTION_MAP(gapp), entries, G_N_ELEMENTS(entries), gapp);
  for (size_t i = 0; i < G_N_ELEMENTS(accels); i++)
    gtk_application_set_accels_for_action(GTK_APPLICATION(gapp), accels[i].action,
                                          accels[i].accels);
}

static void nw_application_activate(GApplication *gapp)
{
  NwWindow *w = nw_window_new(GTK_APPLICATION(gapp));
  gtk_window_present(GTK_WINDOW(w));
  nw_window_open_demo(w);
}

/* Turn the single-purpose options into script lines, in a fixed order: open, show/hide,
 * comparison, crosshair, window/level, view, screenshot. */
static void options_to_script(GVariantDict *o, GPtrArray *lines)
{
  const char *s = NULL;
  const char **names = NULL;
  double x, y;
  if (g_variant_dict_lookup(o, "show", "^as", &names)) {
    for (int i = 0; names[i] != NULL; i++)
      g_ptr_array_add(lines, g_strdup_printf("show %s", names[i]));
    g_free(names);
  }
  if (g_variant_dict_lookup(o, "hide", "^as", &names)) {
    for (int i = 0; names[i] != NULL; i++)
      g_ptr_array_add(lines, g_strdup_printf("hide %s", names[i]));
    g_free(names);
  }
  if (g_variant_dict_lookup(o, "compare-mode", "&s", &s))
    g_ptr_array_add(lines, g_strdup_printf("compare %s", s));
  const char *num_opts[] = {"tile", "curtain", "blend"};
  for (int i = 0; i < 3; i++)
    if (g_variant_dict_lookup(o, num_opts[i], "d", &x))
      g_ptr_array_add(lines, g_strdup_printf("%s %.9g", num_opts[i], x));
  if (g_variant_dict_lookup(o, "crosshair", "&s", &s)) {
    g_auto(GStrv) p = g_strsplit(s, ",", -1);
    g_autofree char *joined = g_strjoinv(" ", p);
    g_ptr_array_add(lines, g_strdup_printf("crosshair %s", joined));
  }
  if (g_variant_dict_lookup(o, "window", "d", &x) && g_variant_dict_lookup(o, "level", "d", &y))
    g_ptr_array_add(lines, g_strdup_printf("window %.9g %.9g", x, y));
  if (g_variant_dict_lookup(o, "view", "&s", &s))
    g_ptr_array_add(lines, g_strdup_printf("view %s", s));
  gboolean radiological = FALSE;
  if (g_variant_dict_lookup(o, "radiological", "b", &radiological) && radiological)
    g_ptr_array_add(lines, g_strdup("radiological on"));
}

static gboolean read_script(const char *path, GPtrArray *lines, GError **error)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents(path, &text, NULL, error))
    return FALSE;
  g_auto(GStrv) l = g_strsplit(text, "\n", -1);
  for (int i = 0; l[i] != NULL; i++)
    g_ptr_array_add(lines, g_strdup(l[i]));
  return TRUE;
}

static char *arg_path(GApplicationCommandLine *cl, const char *arg)
{
  g_autoptr(GFile) f = g_application_command_line_create_file_for_arg(cl, arg);
  return g_file_get_path(f);
}

static int nw_application_command_line(GApplication *gapp, GApplicationCommandLine *cl)
{
  NwApplication *app = NW_APPLICATION(gapp);
  GVariantDict *o = g_application_command_line_get_options_dict(cl);
  g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func(g_free);
  const char **files = NULL;
  gboolean no_demo = FALSE;
  g_variant_dict_lookup(o, "no-demo", "b", &no_demo);
  const char *keys[] = {"open", G_OPTION_REMAINING};
  for (int k = 0; k < 2; k++)
    if (g_variant_dict_lookup(o, keys[k], "^a&ay", &files)) {
      for (int i = 0; files[i] != NULL; i++)
        g_ptr_array_add(paths, arg_path(cl, files[i]));
      g_free(files);
    }
  /* loads run one after the other (the script waits), so layers keep a fixed order */
  if (paths->len == 0 && !no_demo)
    g_ptr_array_add(lines, g_strdup("demo"));
  for (guint i = 0; i < paths->len; i++)
    g_ptr_array_add(lines, g_strdup_printf("open %s", (char *)g_ptr_array_index(paths, i)));
  options_to_script(o, lines);
  const char *script = NULL;
  if (g_variant_dict_lookup(o, "script", "^&ay", &script)) {
    g_autofree char *path = arg_path(cl, script);
    g_autoptr(GError) error = NULL;
    if (!read_script(path, lines, &error)) {
      g_application_command_line_printerr(cl, "neurowarp: %s\n", error->message);
      app->exit_status = 2;
      return 2;
    }
  }
  const char *shot = NULL;
  if (g_variant_dict_lookup(o, "screenshot", "^&ay", &shot)) {
    g_autofree char *path = arg_path(cl, shot);
    g_ptr_array_add(lines, g_strdup_printf("screenshot %s", path));
    g_ptr_array_add(lines, g_strdup("quit"));
  }
  int cell = 400;
  g_variant_dict_lookup(o, "shot-size", "i", &cell);
  cell = CLAMP(cell, 64, 4096);
  g_ptr_array_add(lines, NULL);

  NwWindow *w = nw_window_new(GTK_APPLICATION(app));
  gtk_window_present(GTK_WINDOW(w));
  NwScript *s = nw_script_new(GTK_APPLICATION(app), w, (char **)lines->pdata, cell);
  nw_script_start(s, &app->exit_status);
  return 0;
}

/* --version: answered in the calling process, without a window or a display. */
static int nw_application_handle_local_options(GApplication *gapp, GVariantDict *options)
{
  if (g_variant_dict_contains(options, "version")) {
    printf("neurowarp %s\n", NW_VERSION);
    return 0;
  }
  return -1;
}

static void nw_application_class_init(NwApplicationClass *klass)
{
  GApplicationClass *ac = G_APPLICATION_CLASS(klass);
  ac->handle_local_options = nw_application_handle_local_options;
  ac->startup = nw_application_startup;
  ac->activate = nw_application_activate;
  ac->command_line = nw_application_command_line;
}

static const GOptionEntry options[] = {
    {"version", 0, 0, G_OPTION_ARG_NONE, NULL, "Print the version and quit", NULL},
    {"open", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, NULL, "Open a file (repeatable)", "FILE"},
    {"no-demo", 0, 0, G_OPTION_ARG_NONE, NULL, "Start empty instead of on the demo case", NULL},
    {"screenshot", 0, 0, G_OPTION_ARG_FILENAME, NULL,
     "Render the current layout to a PNG file, then quit", "FILE"},
    {"shot-size", 0, 0, G_OPTION_ARG_INT, NULL, "Pixels per view in screenshots (400)", "N"},
    {"view", 0, 0, G_OPTION_ARG_STRING, NULL, "Layout: grid, axial, coronal, sagittal or 3d",
     "NAME"},
    {"compare-mode", 0, 0, G_OPTION_ARG_STRING, NULL,
     "none, blend, checker, difference, flicker or curtain", "MODE"},
    {"tile", 0, 0, G_OPTION_ARG_DOUBLE, NULL, "Checkerboard tile size in mm", "MM"},
    {"curtain", 0, 0, G_OPTION_ARG_DOUBLE, NULL, "Curtain position, 0..1 of the view width", "F"},
    {"blend", 0, 0, G_OPTION_ARG_DOUBLE, NULL, "Blend weight of the second image, 0..1", "W"},
    {"crosshair", 0, 0, G_OPTION_ARG_STRING, NULL, "Crosshair at world RAS mm", "X,Y,Z"},
    {"radiological", 0, 0, G_OPTION_ARG_NONE, NULL,
     "Radiological convention: the patient's right on the screen's left", NULL},
    {"window", 0, 0, G_OPTION_ARG_DOUBLE, NULL, "Window width of the image layers (with --level)",
     "W"},
    {"level", 0, 0, G_OPTION_ARG_DOUBLE, NULL, "Window centre of the image layers", "L"},
    {"show", 0, 0, G_OPTION_ARG_STRING_ARRAY, NULL, "Show the layer of this name", "LAYER"},
    {"hide", 0, 0, G_OPTION_ARG_STRING_ARRAY, NULL, "Hide the layer of this name", "LAYER"},
    {"script", 0, 0, G_OPTION_ARG_FILENAME, NULL, "Run the commands in FILE (see the user guide)",
     "FILE"},
    {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, NULL, NULL, "[FILE…]"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};

static void nw_application_init(NwApplication *app)
{
  g_application_add_main_option_entries(G_APPLICATION(app), options);
  g_application_set_option_context_summary(
      G_APPLICATION(app), "Compare brain scans, deformation fields and surfaces. Without files "
                          "the demo case opens.");
}

NwApplication *nw_application_new(void)
{
  return g_object_new(NW_TYPE_APPLICATION, "application-id", "org.neurowarp.Neurowarp", "flags",
                      G_APPLICATION_HANDLES_COMMAND_LINE | G_APPLICATION_NON_UNIQUE, NULL);
}

int nw_application_get_exit_status(NwApplication *app)
{
  return app->exit_status;
}
