/* nw_run_panel.c — the sidebar's "Run" page: pickers, parameters, run controls, readouts,
 * live plot, results and sessions (nw_run_panel.h). Main thread only; the jobs themselves
 * run on worker threads (nw_run.c) on the CPU or CUDA back end. Readouts, actions, results
 * and sessions are in nw_run_panel_actions.c. */
#include "nw_run_panel.h"
#include "nw_run_panel_private.h"

#include <string.h>

#include "nw_error.h"
#include "nw_run_summary.h"
#include "nw_session.h"


G_DEFINE_TYPE(NwRunPanel, nw_run_panel, GTK_TYPE_BOX)

enum { SIG_ERROR, SIG_OPEN_FILE, SIG_OPEN_DEMO, N_SIGNALS };
static guint signals[N_SIGNALS];

void nw_run_panel_error(NwRunPanel *p, const char *message)
{
  g_signal_emit(p, signals[SIG_ERROR], 0, message);
}

void nw_run_panel_request_open(NwRunPanel *p, const char *path)
{
  if (path != NULL)
    g_signal_emit(p, signals[SIG_OPEN_FILE], 0, path);
  else
    g_signal_emit(p, signals[SIG_OPEN_DEMO], 0);
}

gboolean nw_run_panel_second_on(NwRunPanel *p)
{
  return gtk_toggle_button_get_active(p->second_check);
}

static void nw_run_panel_dispose(GObject *obj)
{
  NwRunPanel *p = NW_RUN_PANEL(obj);
  /* Closing the window: cancel the jobs and wait for them before GL teardown. */
  for (int j = 0; j < 2; j++) {
    if (p->runs[j] != NULL) {
      g_signal_handlers_disconnect_by_data(p->runs[j], p);
      g_object_run_dispose(G_OBJECT(p->runs[j])); /* now, even while messages hold refs */
    }
    g_clear_object(&p->runs[j]);
    g_clear_object(&p->pair[j]);
  }
  if (p->scene != NULL)
    g_signal_handlers_disconnect_by_data(p->scene, p);
  g_clear_object(&p->scene);
  /* the window's map may hold the actions a while longer: they do nothing from now on */
  for (int a = 0; a < N_ACTIONS; a++) {
    if (p->actions[a] != NULL) {
      g_simple_action_set_enabled(p->actions[a], FALSE);
      g_signal_handlers_disconnect_by_data(p->actions[a], p);
    }
    g_clear_object(&p->actions[a]);
  }
  g_clear_pointer(&p->preset_paths, g_ptr_array_unref);
  G_OBJECT_CLASS(nw_run_panel_parent_class)->dispose(obj);
}

static void nw_run_panel_finalize(GObject *obj)
{
  NwRunPanel *p = NW_RUN_PANEL(obj);
  g_free(p->method);
  g_free(p->cuda_name);
  G_OBJECT_CLASS(nw_run_panel_parent_class)->finalize(obj);
}

static void nw_run_panel_class_init(NwRunPanelClass *klass)
{
  G_OBJECT_CLASS(klass)->dispose = nw_run_panel_dispose;
  G_OBJECT_CLASS(klass)->finalize = nw_run_panel_finalize;
  signals[SIG_ERROR] = g_signal_new("error", NW_TYPE_RUN_PANEL, G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                    NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
  signals[SIG_OPEN_FILE] = g_signal_new("open-file", NW_TYPE_RUN_PANEL, G_SIGNAL_RUN_LAST, 0, NULL,
                                        NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
  signals[SIG_OPEN_DEMO] = g_signal_new("open-demo", NW_TYPE_RUN_PANEL, G_SIGNAL_RUN_LAST, 0, NULL,
                                        NULL, NULL, G_TYPE_NONE, 0);
}

static void nw_run_panel_init(NwRunPanel *p)
{
  p->last_level[0] = p->last_level[1] = -1;
}

/* ---- widgets ---- */

static GtkWidget *section(GtkBox *box, const char *title)
{
  GtkWidget *l = gtk_label_new(NULL);
  g_autofree char *markup = g_markup_printf_escaped("<b>%s</b>", title);
  gtk_label_set_markup(GTK_LABEL(l), markup);
  gtk_label_set_xalign(GTK_LABEL(l), 0.0f);
  gtk_widget_set_margin_top(l, 6);
  gtk_box_pack_start(box, l, FALSE, FALSE, 0);
  return l;
}

static GtkLabel *readout(GtkBox *box, const char *name)
{
  GtkWidget *l = gtk_label_new("—");
  gtk_widget_set_name(l, name);
  gtk_label_set_xalign(GTK_LABEL(l), 0.0f);
  gtk_label_set_ellipsize(GTK_LABEL(l), PANGO_ELLIPSIZE_END);
  gtk_label_set_selectable(GTK_LABEL(l), TRUE);
  gtk_box_pack_start(box, l, FALSE, FALSE, 0);
  return GTK_LABEL(l);
}

static GtkComboBoxText *device_combo(NwRunPanel *p)
{
  GtkComboBoxText *c = GTK_COMBO_BOX_TEXT(gtk_combo_box_text_new());
  gtk_combo_box_text_append(c, "auto", "auto");
  gtk_combo_box_text_append(c, "cpu", "CPU");
  if (p->cuda_name != NULL) {
    gtk_combo_box_text_append(c, "cuda", "CUDA");
    gtk_widget_set_tooltip_text(GTK_WIDGET(c), p->cuda_name);
  } else {
    gtk_widget_set_tooltip_text(GTK_WIDGET(c), "CUDA: no CUDA device (or a build without CUDA)");
  }
  gtk_combo_box_set_active_id(GTK_COMBO_BOX(c), "auto");
  return c;
}

/* The plot's panels: the figures the method's table names (none when it names none). */
static void make_plot(NwRunPanel *p)
{
  if (p->plot != NULL)
    gtk_widget_destroy(GTK_WIDGET(p->plot));
  static const char *const none[] = {NULL};
  const NwMethodOps *ops = nw_method_lookup_table(p->method, NULL);
  p->plot =
      NW_PLOT(nw_plot_new(ops != NULL && ops->plot_figures != NULL ? ops->plot_figures : none));
  gtk_widget_set_size_request(GTK_WIDGET(p->plot), -1, 260);
  gtk_widget_show(GTK_WIDGET(p->plot));
  gtk_box_pack_start(p->plot_box, GTK_WIDGET(p->plot), TRUE, TRUE, 0);
}

static void on_params_changed(NwParamPanel *pp, gpointer data);

static NwParams *method_params(const char *method)
{
  const NwMethodOps *ops = nw_method_lookup_table(method, NULL);
  return ops != NULL ? nw_params_new(ops->params, ops->n_params) : NULL;
}

static void make_param_panels(NwRunPanel *p)
{
  g_autoptr(NwParams) params = method_params(p->method);
  for (int j = 0; j < 2; j++) {
    if (p->params[j] != NULL)
      gtk_widget_destroy(GTK_WIDGET(p->params[j]));
    p->params[j] = NULL;
    if (params == NULL)
      continue;
    p->params[j] = NW_PARAM_PANEL(nw_param_panel_new(params));
    g_signal_connect(p->params[j], "changed", G_CALLBACK(on_params_changed), p);
    gtk_widget_show_all(GTK_WIDGET(p->params[j]));
    gtk_box_pack_start(p->params_box[j], GTK_WIDGET(p->params[j]), FALSE, FALSE, 0);
  }
}

static void fill_presets(NwRunPanel *p)
{
  p->updating = TRUE;
  gtk_combo_box_text_remove_all(p->preset_combo);
  gtk_combo_box_text_append(p->preset_combo, "", "defaults");
  g_autoptr(GPtrArray) names = NULL;
  g_clear_pointer(&p->preset_paths, g_ptr_array_unref);
  nw_presets_list(p->method, &names, &p->preset_paths);
  for (guint i = 0; i < names->len; i++)
    gtk_combo_box_text_append(p->preset_combo, g_ptr_array_index(p->preset_paths, i),
                              g_ptr_array_index(names, i));
  gtk_combo_box_set_active(GTK_COMBO_BOX(p->preset_combo), 0);
  p->updating = FALSE;
}

/* ---- pickers and parameters ---- */

gboolean nw_run_panel_set_method(NwRunPanel *p, const char *name, GError **error)
{
  if (nw_method_lookup(name, NW_DEVICE_AUTO, error) == NULL)
    return FALSE;
  if (p->method != NULL && strcmp(p->method, name) == 0)
    return TRUE;
  p->updating = TRUE;
  /* the picker lists every registered method; one it lacks would run unseen */
  const gboolean listed = gtk_combo_box_set_active_id(GTK_COMBO_BOX(p->method_combo), name);
  p->updating = FALSE;
  if (!listed) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "method %s: not in the method picker", name);
    return FALSE;
  }
  g_free(p->method);
  p->method = g_strdup(name);
  make_param_panels(p);
  fill_presets(p);
  make_plot(p);
  nw_run_panel_sync_surface_label(p);
  return TRUE;
}

gboolean nw_run_panel_set_device(NwRunPanel *p, int job, NwDevice device, GError **error)
{
  g_return_val_if_fail(job == 0 || job == 1, FALSE);
  if (device == NW_DEVICE_CUDA && p->cuda_name == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_DEVICE,
                "device cuda: no CUDA device (or a build without CUDA)");
    return FALSE;
  }
  p->device[job] = device;
  p->updating = TRUE;
  gtk_combo_box_set_active_id(GTK_COMBO_BOX(p->device_combo[job]), nw_device_name(device));
  p->updating = FALSE;
  return TRUE;
}

/* Live parameters to the running jobs; a refused change is shown in the error bar. */
static gboolean push_params(NwRunPanel *p, int job, const NwParams *params, GError **error)
{
  if (p->runs[job] == NULL || !nw_run_is_active(p->runs[job]))
    return TRUE;
  return nw_run_set_params(p->runs[job], params, error);
}

static void on_params_changed(NwParamPanel *pp, gpointer data)
{
  NwRunPanel *p = data;
  if (p->updating)
    return;
  int job = pp == p->params[1] ? 1 : 0;
  g_autoptr(NwParams) params = nw_param_panel_get_params(pp);
  g_autoptr(GError) error = NULL;
  if (!push_params(p, job, params, &error))
    nw_run_panel_error(p, error->message);
}

gboolean nw_run_panel_set_param(NwRunPanel *p, int job, const char *name, const char *value,
                                GError **error)
{
  g_return_val_if_fail(job == 0 || job == 1, FALSE);
  if (p->params[job] == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "param %s: no method chosen", name);
    return FALSE;
  }
  /* Check against the running job first so that a refused value never shows. */
  g_autoptr(NwParams) params = nw_param_panel_get_params(p->params[job]);
  if (!nw_params_set_string(params, name, value, error) || !push_params(p, job, params, error))
    return FALSE;
  p->updating = TRUE;
  gboolean ok = nw_param_panel_set_value(p->params[job], name, value, error);
  p->updating = FALSE;
  return ok;
}

/* Neither a shipped preset nor a file: say which presets there are and where they were
 * looked for, rather than the file system's "No such file or directory". */
static gboolean no_such_preset(NwRunPanel *p, const char *name, GPtrArray *names, GError **error)
{
  g_autoptr(GString) shipped = g_string_new(NULL);
  for (guint i = 0; i < names->len; i++)
    g_string_append_printf(shipped, "%s\"%s\"", i > 0 ? ", " : "",
                           (const char *)g_ptr_array_index(names, i));
  const char *dir = nw_presets_dir();
  g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
              "preset \"%s\": no %s preset of that name in %s (%s-*.ini: %s), and no file of that "
              "name",
              name, p->method, dir != NULL ? dir : "(no presets folder in this build)", p->method,
              shipped->len > 0 ? shipped->str : "none");
  return FALSE;
}

gboolean nw_run_panel_apply_preset(NwRunPanel *p, const char *name_or_path, GError **error)
{
  const char *path = name_or_path;
  g_autoptr(GPtrArray) names = NULL, paths = NULL;
  nw_presets_list(p->method, &names, &paths);
  for (guint i = 0; i < names->len; i++) {
    const char *file = g_ptr_array_index(paths, i);
    g_autofree char *base = g_path_get_basename(file);
    if (strcmp(g_ptr_array_index(names, i), name_or_path) == 0 || strcmp(base, name_or_path) == 0)
      path = file;
  }
  if (p->params[0] == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "preset %s: no method chosen", name_or_path);
    return FALSE;
  }
  if (path == name_or_path && !g_file_test(path, G_FILE_TEST_EXISTS))
    return no_such_preset(p, name_or_path, names, error);
  g_autoptr(NwParams) params = nw_param_panel_get_params(p->params[0]);
  if (!nw_preset_apply(params, p->method, path, error))
    return FALSE;
  for (int j = 0; j < 2; j++) {
    p->updating = TRUE;
    nw_param_panel_set_params(p->params[j], params);
    p->updating = FALSE;
  }
  return TRUE;
}

void nw_run_panel_set_second_job(NwRunPanel *p, gboolean on)
{
  gtk_toggle_button_set_active(p->second_check, on);
}

static void on_second_toggled(GtkToggleButton *b, gpointer data)
{
  NwRunPanel *p = data;
  if (gtk_toggle_button_get_active(b) && p->params[0] != NULL) {
    /* the second job starts from the first one's values: change what is to be compared */
    g_autoptr(NwParams) params = nw_param_panel_get_params(p->params[0]);
    p->updating = TRUE;
    nw_param_panel_set_params(p->params[1], params);
    p->updating = FALSE;
  }
  gtk_widget_set_visible(p->second_box, gtk_toggle_button_get_active(b));
  nw_run_panel_sync_actions(p);
}

static void on_method_changed(GtkComboBox *c, gpointer data)
{
  NwRunPanel *p = data;
  const char *id = gtk_combo_box_get_active_id(c);
  if (p->updating || id == NULL)
    return;
  g_autoptr(GError) error = NULL;
  if (!nw_run_panel_set_method(p, id, &error))
    nw_run_panel_error(p, error->message);
}

static void on_device_changed(GtkComboBox *c, gpointer data)
{
  NwRunPanel *p = data;
  const char *id = gtk_combo_box_get_active_id(c);
  NwDevice d;
  if (!p->updating && id != NULL && nw_device_parse(id, &d, NULL))
    p->device[GTK_COMBO_BOX_TEXT(c) == p->device_combo[1] ? 1 : 0] = d;
}

static void on_preset_changed(GtkComboBox *c, gpointer data)
{
  NwRunPanel *p = data;
  const char *id = gtk_combo_box_get_active_id(c);
  if (p->updating || id == NULL)
    return;
  g_autoptr(GError) error = NULL;
  if (*id == '\0') {
    g_autoptr(NwParams) params = method_params(p->method);
    for (int j = 0; j < 2 && params != NULL; j++)
      nw_param_panel_set_params(p->params[j], params);
  } else if (!nw_run_panel_apply_preset(p, id, &error)) {
    nw_run_panel_error(p, error->message);
  }
}

/* ---- runs ---- */

static int job_of(NwRunPanel *p, NwRun *r)
{
  return r == p->runs[1] ? 1 : 0;
}

static void on_run_iteration(NwRun *r, gpointer report_ptr, double ms, gpointer data)
{
  NwRunPanel *p = data;
  const NwIterationReport *rep = report_ptr;
  const int j = job_of(p, r);
  (void)ms;
  if (rep->level != p->last_level[j]) {
    if (p->last_level[j] >= 0)
      nw_plot_mark_level(p->plot, j, rep->iteration);
    p->last_level[j] = rep->level;
  }
  for (int f = 0; f < rep->n_figures; f++)
    nw_plot_add(p->plot, j, rep->figure_names[f], rep->iteration, rep->figures[f]);
  if (j == 0) {
    gtk_progress_bar_set_fraction(p->progress, CLAMP(rep->progress, 0.0, 1.0));
    g_autofree char *text = g_strdup_printf("level %d/%d · iteration %d", rep->level + 1,
                                            rep->n_levels, rep->iteration);
    gtk_progress_bar_set_text(p->progress, text);
  }
  nw_run_panel_update_readouts(p);
}

/* The end of run 1 in words below the readouts; hidden while a job runs. */
static void show_summary(NwRunPanel *p)
{
  g_autofree char *text = p->runs[0] != NULL ? nw_run_summary_text(p->runs[0]) : NULL;
  gtk_label_set_text(p->summary, text != NULL ? text : "");
  gtk_widget_set_visible(GTK_WIDGET(p->summary), text != NULL);
}

static void on_run_state(NwRun *r, int state, gpointer data)
{
  NwRunPanel *p = data;
  if (r == p->runs[0])
    show_summary(p);
  if (state == NW_JOB_FAILED && nw_run_get_error(r) != NULL) {
    g_autofree char *msg = g_strdup_printf("run %s failed: %s", nw_run_get_label(r),
                                           nw_run_get_error(r)->message);
    nw_run_panel_error(p, msg);
  }
  nw_run_panel_sync_actions(p);
  nw_run_panel_update_readouts(p);
}

static NwRun *ensure_run(NwRunPanel *p, int j)
{
  if (p->runs[j] == NULL) {
    p->runs[j] = nw_run_new(p->scene, j == 0 ? "1" : "2");
    g_signal_connect(p->runs[j], "iteration", G_CALLBACK(on_run_iteration), p);
    g_signal_connect(p->runs[j], "state-changed", G_CALLBACK(on_run_state), p);
    g_autoptr(GVariant) on = g_action_get_state(G_ACTION(p->actions[ACT_LIVE_VIEW]));
    nw_run_set_live_view(p->runs[j], g_variant_get_boolean(on));
  }
  return p->runs[j];
}

/* The pair to register: the one of the first start while it is still in the scene (later
 * starts find warped layers in the compared pair), else the scene's current pair. */
void nw_run_panel_restore_pair(NwRunPanel *p)
{
  gboolean present[2] = {FALSE, FALSE};
  for (guint i = 0; i < nw_scene_n_layers(p->scene); i++)
    for (int k = 0; k < 2; k++)
      present[k] |= p->pair[k] != NULL && nw_scene_get_layer(p->scene, i) == p->pair[k];
  if (present[0] && present[1]) {
    nw_scene_set_compare_pair(p->scene, p->pair[0], p->pair[1]);
    return;
  }
  for (int k = 0; k < 2; k++) {
    g_clear_object(&p->pair[k]);
    NwLayer *l = k == 0 ? nw_scene_get_compare_a(p->scene) : nw_scene_get_compare_b(p->scene);
    p->pair[k] = l != NULL ? g_object_ref(l) : NULL;
  }
}

static gboolean start_job(NwRunPanel *p, int j, gboolean paused, GError **error)
{
  const NwMethodOps *ops = nw_method_lookup(p->method, p->device[j], error);
  if (ops == NULL)
    return FALSE;
  g_autoptr(NwParams) params = nw_param_panel_get_params(p->params[j]);
  NwRun *r = ensure_run(p, j);
  nw_run_set_surface_label(r, p->surface_label);
  nw_run_panel_restore_pair(p);
  if (!nw_run_start(r, ops, params, paused, error))
    return FALSE;
  return TRUE;
}

/* The legend: the devices when they differ, else the parameter sets. */
static void name_jobs(NwRunPanel *p, int n_jobs)
{
  const NwMethodOps *ops[2] = {nw_run_get_ops(p->runs[0]),
                               n_jobs > 1 ? nw_run_get_ops(p->runs[1]) : NULL};
  for (int j = 0; j < n_jobs; j++) {
    g_autofree char *name = NULL;
    if (n_jobs == 2 && ops[0]->device == ops[1]->device)
      name = g_strdup_printf("params %d", j + 1);
    else
      name = g_strdup(ops[j]->device == NW_DEVICE_CUDA ? "CUDA" : "CPU");
    nw_plot_set_job_name(p->plot, j, name);
  }
}

static gboolean start_jobs(NwRunPanel *p, gboolean paused, GError **error)
{
  if (p->method == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "run: no method chosen");
    return FALSE;
  }
  for (int j = 0; j < 2; j++)
    if (p->runs[j] != NULL && nw_run_is_active(p->runs[j])) {
      g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "run: job %d is still going (stop it first)",
                  j + 1);
      return FALSE;
    }
  nw_plot_clear(p->plot);
  p->last_level[0] = p->last_level[1] = -1;
  if (!nw_run_panel_second_on(p) && p->runs[1] != NULL) {
    g_signal_handlers_disconnect_by_data(p->runs[1], p);
    g_clear_object(&p->runs[1]); /* removes its layers */
  }
  const int n_jobs = nw_run_panel_second_on(p) ? 2 : 1;
  for (int j = 0; j < n_jobs; j++)
    if (!start_job(p, j, paused, error)) {
      nw_run_panel_stop(p);
      return FALSE;
    }
  name_jobs(p, n_jobs);
  /* where the figures started: the pair as given (the last level works at its resolution) */
  double mse, ncc;
  nw_run_get_before(p->runs[0], &mse, &ncc);
  nw_plot_set_before(p->plot, "ncc", ncc);
  nw_plot_set_before(p->plot, "mse", mse);
  if (n_jobs == 2 && !nw_run_get_ops(p->runs[0])->level_set_input) {
    /* Teaching mode: the two results literally side by side in every view (two denoised
     * surfaces are side by side in the 3D view already). */
    nw_scene_set_compare_pair(p->scene, nw_run_get_warped(p->runs[0]),
                              nw_run_get_warped(p->runs[1]));
    nw_scene_set_compare_mode(p->scene, NW_COMPARE_CURTAIN);
  }
  nw_run_panel_sync_actions(p);
  nw_run_panel_update_readouts(p);
  return TRUE;
}

/* A start that failed says why where the run's summary goes, too: the error bar may be
 * gone by the time the user looks at the Run page (e.g. a volume that is no level set). */
gboolean nw_run_panel_start(NwRunPanel *p, gboolean paused, GError **error)
{
  GError *err = NULL;
  if (start_jobs(p, paused, &err)) {
    show_summary(p);
    return TRUE;
  }
  g_autofree char *text = g_strdup_printf("Not started: %s", err->message);
  gtk_label_set_text(p->summary, text);
  gtk_widget_set_visible(GTK_WIDGET(p->summary), TRUE);
  g_propagate_error(error, err);
  return FALSE;
}

/* Each control goes to both jobs; an NwRun ignores it when its job is not running or paused. */
void nw_run_panel_pause(NwRunPanel *p)
{
  for (int j = 0; j < 2; j++)
    if (p->runs[j] != NULL)
      nw_run_pause(p->runs[j]);
  nw_run_panel_sync_actions(p);
}

void nw_run_panel_resume(NwRunPanel *p)
{
  for (int j = 0; j < 2; j++)
    if (p->runs[j] != NULL)
      nw_run_resume(p->runs[j]);
  nw_run_panel_sync_actions(p);
}

void nw_run_panel_step(NwRunPanel *p)
{
  for (int j = 0; j < 2; j++)
    if (p->runs[j] != NULL)
      nw_run_step(p->runs[j]);
  nw_run_panel_sync_actions(p);
}

void nw_run_panel_stop(NwRunPanel *p)
{
  for (int j = 0; j < 2; j++)
    if (p->runs[j] != NULL)
      nw_run_stop(p->runs[j]);
}

NwRun *nw_run_panel_get_run(NwRunPanel *p, int job)
{
  g_return_val_if_fail(job == 0 || job == 1, NULL);
  return p->runs[job];
}

const char *nw_run_panel_get_summary(NwRunPanel *p)
{
  return gtk_widget_get_visible(GTK_WIDGET(p->summary)) ? gtk_label_get_text(p->summary) : NULL;
}

NwPlot *nw_run_panel_get_plot(NwRunPanel *p)
{
  return p->plot;
}

/* ---- construction ---- */

static GtkWidget *labelled(GtkBox *box, const char *text, GtkWidget *w)
{
  GtkWidget *row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
  GtkWidget *l = gtk_label_new(text);
  gtk_widget_set_size_request(l, 60, -1);
  gtk_label_set_xalign(GTK_LABEL(l), 0.0f);
  gtk_box_pack_start(GTK_BOX(row), l, FALSE, FALSE, 0);
  gtk_box_pack_start(GTK_BOX(row), w, TRUE, TRUE, 0);
  gtk_box_pack_start(box, row, FALSE, FALSE, 0);
  return row;
}

static GtkWidget *button(const char *label, const char *action, const char *tip)
{
  GtkWidget *b = gtk_button_new_with_label(label);
  gtk_actionable_set_action_name(GTK_ACTIONABLE(b), action);
  gtk_widget_set_tooltip_text(b, tip);
  return b;
}

static void build_controls(NwRunPanel *p, GtkBox *box)
{
  GtkWidget *row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 2);
  gtk_style_context_add_class(gtk_widget_get_style_context(row), "linked");
  gtk_box_pack_start(GTK_BOX(row), button("Run", "win.run", "Start or resume (F5)"), TRUE, TRUE, 0);
  gtk_box_pack_start(GTK_BOX(row), button("Pause", "win.pause", "Pause (F6)"), TRUE, TRUE, 0);
  gtk_box_pack_start(GTK_BOX(row), button("Step", "win.step", "One iteration (F10)"), TRUE, TRUE, 0);
  gtk_box_pack_start(GTK_BOX(row), button("Stop", "win.stop", "Stop (Shift+F5)"), TRUE, TRUE, 0);
  gtk_box_pack_start(box, row, FALSE, FALSE, 0);
  p->progress = GTK_PROGRESS_BAR(gtk_progress_bar_new());
  gtk_progress_bar_set_show_text(p->progress, TRUE);
  gtk_progress_bar_set_text(p->progress, "no job yet");
  gtk_box_pack_start(box, GTK_WIDGET(p->progress), FALSE, FALSE, 0);
  p->readout_iteration = readout(box, "readout-iteration");
  p->readout_ms = readout(box, "readout-ms");
  p->readout_device = readout(box, "readout-device");
  p->readout_path = readout(box, "readout-path");
  nw_run_panel_build_timeline(p, box);
  p->summary = GTK_LABEL(gtk_label_new(NULL));
  gtk_widget_set_name(GTK_WIDGET(p->summary), "run-summary");
  gtk_label_set_xalign(p->summary, 0.0f);
  gtk_label_set_line_wrap(p->summary, TRUE);
  gtk_label_set_selectable(p->summary, TRUE);
  gtk_box_pack_start(box, GTK_WIDGET(p->summary), FALSE, FALSE, 0);
  GtkWidget *live = gtk_check_button_new_with_label("Live view");
  gtk_actionable_set_action_name(GTK_ACTIONABLE(live), "win.live-view");
  gtk_widget_set_tooltip_text(live, "Draw the job's state every display frame (F7); off, the "
                                    "views keep the last frame and the job runs alone");
  gtk_box_pack_start(box, live, FALSE, FALSE, 0);
  p->plot_box = GTK_BOX(gtk_box_new(GTK_ORIENTATION_VERTICAL, 0));
  gtk_box_pack_start(box, GTK_WIDGET(p->plot_box), FALSE, FALSE, 0);
  row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 2);
  gtk_box_pack_start(GTK_BOX(row), button("Save results…", "win.save-results",
                                          "Warped image, fields, Jacobian, surface (Ctrl+R)"),
                     TRUE, TRUE, 0);
  gtk_box_pack_start(
      GTK_BOX(row),
      button("Save session…", "win.save-session", "Method, devices and parameters (Ctrl+S)"), TRUE,
      TRUE, 0);
  gtk_box_pack_start(GTK_BOX(row), button("Open session…", "win.open-session",
                                          "Take up a saved session (Ctrl+Shift+O)"),
                     TRUE, TRUE, 0);
  gtk_box_pack_start(box, row, FALSE, FALSE, 0);
}

static void build_pickers(NwRunPanel *p, GtkBox *box)
{
  p->method_combo = GTK_COMBO_BOX_TEXT(gtk_combo_box_text_new());
  g_autoptr(GPtrArray) names = nw_method_names();
  for (guint i = 0; i < names->len; i++) {
    const char *n = g_ptr_array_index(names, i);
    gtk_combo_box_text_append(p->method_combo, n, n);
  }
  labelled(box, "Method", GTK_WIDGET(p->method_combo));
  nw_run_panel_build_surface_label(p, box);
  p->device_combo[0] = device_combo(p);
  labelled(box, "Device", GTK_WIDGET(p->device_combo[0]));
  p->preset_combo = GTK_COMBO_BOX_TEXT(gtk_combo_box_text_new());
  labelled(box, "Preset", GTK_WIDGET(p->preset_combo));
}

/* Parameters below the run controls, so that the plot stays in sight at 1280x880. */
static void build_params(NwRunPanel *p, GtkBox *box)
{
  p->params_box[0] = GTK_BOX(gtk_box_new(GTK_ORIENTATION_VERTICAL, 0));
  gtk_box_pack_start(box, GTK_WIDGET(p->params_box[0]), FALSE, FALSE, 0);
  p->second_check = GTK_TOGGLE_BUTTON(gtk_check_button_new_with_label("Second job"));
  gtk_widget_set_tooltip_text(GTK_WIDGET(p->second_check),
                              "Run a second job side by side (its own device and parameters)");
  gtk_box_pack_start(box, GTK_WIDGET(p->second_check), FALSE, FALSE, 0);
  p->second_box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2);
  p->device_combo[1] = device_combo(p);
  labelled(GTK_BOX(p->second_box), "Device 2", GTK_WIDGET(p->device_combo[1]));
  p->params_box[1] = GTK_BOX(gtk_box_new(GTK_ORIENTATION_VERTICAL, 0));
  gtk_box_pack_start(GTK_BOX(p->second_box), GTK_WIDGET(p->params_box[1]), FALSE, FALSE, 0);
  gtk_box_pack_start(box, p->second_box, FALSE, FALSE, 0);
}

/* Method tooltips: the registered description of the chosen method. */
static void on_method_tooltip(GtkComboBox *c, gpointer data)
{
  const char *id = gtk_combo_box_get_active_id(c);
  const NwMethodOps *ops = id != NULL ? nw_method_lookup(id, NW_DEVICE_AUTO, NULL) : NULL;
  g_autofree char *tip = NULL;
  if (ops != NULL && ops->level_set_input) /* what it takes of the window, and how */
    tip = g_strdup_printf("%s. %s", ops->description, nw_run_panel_level_set_tip());
  else if (ops != NULL)
    tip = g_strdup(ops->description);
  gtk_widget_set_tooltip_text(GTK_WIDGET(c), tip);
}

NwRunPanel *nw_run_panel_new(NwScene *scene)
{
  NwRunPanel *p = g_object_new(NW_TYPE_RUN_PANEL, "orientation", GTK_ORIENTATION_VERTICAL,
                               "spacing", 4, "margin", 6, NULL);
  p->scene = g_object_ref(scene);
  char name[256] = ""; /* the device, as the CUDA back end told the registry */
  if (nw_method_cuda_available(name, sizeof name))
    p->cuda_name = g_strdup(name[0] ? name : "CUDA");
  nw_run_panel_make_actions(p);
  GtkBox *box = GTK_BOX(p);
  section(box, "Method");
  build_pickers(p, box);
  section(box, "Run");
  build_controls(p, box);
  section(box, "Parameters");
  build_params(p, box);
  g_signal_connect(p->method_combo, "changed", G_CALLBACK(on_method_changed), p);
  g_signal_connect(p->method_combo, "changed", G_CALLBACK(on_method_tooltip), p);
  for (int j = 0; j < 2; j++)
    g_signal_connect(p->device_combo[j], "changed", G_CALLBACK(on_device_changed), p);
  g_signal_connect(p->preset_combo, "changed", G_CALLBACK(on_preset_changed), p);
  g_signal_connect(p->second_check, "toggled", G_CALLBACK(on_second_toggled), p);
  /* frames arrive as scene changes: the shown iteration follows them */
  g_signal_connect_swapped(p->scene, "changed", G_CALLBACK(nw_run_panel_update_readouts), p);
  /* ... and so does the timeline, which grows as the layers take frames */
  g_signal_connect_swapped(p->scene, "changed", G_CALLBACK(nw_run_panel_update_timeline), p);
  gtk_widget_show_all(GTK_WIDGET(p));
  gtk_widget_hide(p->second_box);
  gtk_widget_hide(GTK_WIDGET(p->summary));
  gtk_widget_set_no_show_all(GTK_WIDGET(p->summary), TRUE);
  gtk_widget_set_no_show_all(p->second_box, TRUE); /* the window's show_all leaves it hidden */
  g_autoptr(GPtrArray) names = nw_method_names();
  if (names->len > 0) {
    /* demons when it is there: the registration the panel is mostly for */
    const char *first = g_ptr_array_index(names, 0);
    for (guint i = 0; i < names->len; i++)
      if (strcmp(g_ptr_array_index(names, i), "demons") == 0)
        first = "demons";
    nw_run_panel_set_method(p, first, NULL);
    on_method_tooltip(GTK_COMBO_BOX(p->method_combo), p);
  }
  nw_run_panel_sync_actions(p);
  nw_run_panel_update_readouts(p);
  return p;
}
