/* nw_run_panel_actions.c — the run panel's readouts, its win.* actions (run, pause, step,
 * stop, save-results, save-session, open-session), saving results and sessions
 * (nw_run_panel.h). Main thread only. */
#include <glib/gstdio.h>
#include <string.h>

#include "nw_error.h"
#include "nw_run_panel_private.h"
#include "nw_session.h"

/* ---- readouts and actions ---- */

static char *device_text(NwRunPanel *p, NwRun *r)
{
  const NwMethodOps *ops = r != NULL ? nw_run_get_ops(r) : NULL;
  if (ops != NULL && ops->device == NW_DEVICE_CUDA) {
    size_t free_b = 0, total_b = 0; /* the CUDA back end's probe, through the registry */
    if (nw_method_cuda_mem_info(&free_b, &total_b))
      return g_strdup_printf("%s · %.0f of %.0f MiB in use", p->cuda_name ? p->cuda_name : "CUDA",
                             (double)(total_b - free_b) / 1048576.0, (double)total_b / 1048576.0);
    return g_strdup(p->cuda_name != NULL ? p->cuda_name : "CUDA");
  }
  return g_strdup_printf("CPU · %u threads", g_get_num_processors());
}

/* "2.71" below 10 ms, "35.2" above: the digits that mean something. */
static void append_ms(GString *s, double ms)
{
  if (ms <= 0.0)
    g_string_append(s, "—");
  else
    g_string_append_printf(s, ms < 10.0 ? "%.2f" : "%.1f", ms);
}

/* "ms/iteration 2.74 (shown 2.77 · alone 2.69)": the job's pace, and what drawing costs it. */
static void append_job_ms(GString *s, NwRun *r)
{
  double shown = 0.0, alone = 0.0;
  nw_run_get_ms_split(r, &shown, &alone);
  append_ms(s, nw_run_get_ms_per_iteration(r));
  g_string_append(s, " ms/iteration (shown ");
  append_ms(s, shown);
  g_string_append(s, " · alone ");
  append_ms(s, alone);
  g_string_append(s, ")");
}

/* "CUDA–GL interop · 60 fps · shown 812 (lag 1)"; host frames name their reduction. */
static void append_frames(GString *s, NwRun *r)
{
  NwLiveStats st;
  nw_run_get_live_stats(r, &st);
  const char *fp = nw_run_get_frame_path(r);
  const int done = nw_run_get_iteration(r);
  g_string_append(s, fp != NULL ? fp : "—");
  if (fp != NULL && st.path == NW_LIVE_PATH_HOST && st.reduce > 1)
    g_string_append_printf(s, " (1/%d per axis)", st.reduce);
  if (!nw_run_get_live_view(r))
    g_string_append(s, " · live view off");
  /* lag: iterations the worker was ahead when the frame was taken for drawing */
  g_string_append_printf(s, " · %.0f fps · shown %d (lag %d)", st.fps, st.shown,
                         st.shown >= 0 ? st.lag : done);
}

void nw_run_panel_update_readouts(NwRunPanel *p)
{
  GString *it = g_string_new(NULL), *ms = g_string_new(NULL), *path = g_string_new(NULL);
  for (int j = 0; j < 2; j++) {
    NwRun *r = p->runs[j];
    if (r == NULL || (j == 1 && !nw_run_panel_second_on(p)))
      continue;
    const char *sep = j > 0 ? "\n" : "";
    const char *who = nw_run_panel_second_on(p) ? (j == 0 ? "1: " : "2: ") : "";
    g_string_append_printf(it, "%s%siteration %d (%s)", sep, who, nw_run_get_iteration(r),
                           nw_job_state_name(nw_run_get_state(r)));
    g_string_append_printf(ms, "%s%s", sep, who);
    append_job_ms(ms, r);
    g_string_append_printf(path, "%s%s", sep, who);
    append_frames(path, r);
  }
  g_autofree char *dev = device_text(p, p->runs[0]);
  gtk_label_set_text(p->readout_iteration, it->len ? it->str : "no job yet");
  gtk_label_set_text(p->readout_ms, ms->len ? ms->str : "—");
  gtk_label_set_text(p->readout_device, dev);
  gtk_label_set_text(p->readout_path, path->len ? path->str : "—");
  g_string_free(it, TRUE);
  g_string_free(ms, TRUE);
  g_string_free(path, TRUE);
}

char *nw_run_panel_readouts(NwRunPanel *p)
{
  if (p->runs[0] == NULL)
    return g_strdup("readouts: iteration 0 · ms 0.0 · path none · shown -1");
  GString *s = g_string_new("readouts:");
  for (int j = 0; j < 2; j++) {
    NwRun *r = p->runs[j];
    if (r == NULL || (j == 1 && !nw_run_panel_second_on(p)))
      continue;
    const char *fp = nw_run_get_frame_path(r);
    NwLiveStats st;
    nw_run_get_live_stats(r, &st);
    g_string_append_printf(s,
                           "%s iteration %d · ms %.1f · path %s · shown %d · frames %" G_GUINT64_FORMAT
                           " · display-frames %" G_GUINT64_FORMAT " · asked %" G_GUINT64_FORMAT
                           " · host-bytes %" G_GUINT64_FORMAT,
                           j == 0 ? "" : " | job 2", nw_run_get_iteration(r),
                           nw_run_get_ms_per_iteration(r), fp != NULL ? fp : "none",
                           nw_run_get_shown_iteration(r), nw_run_get_live_frames(r),
                           st.display_frames, st.wants, st.host_bytes);
  }
  return g_string_free(s, FALSE);
}

/* Live view on/off (F7): off, the views keep the last frame and the jobs run alone. */
static void act_live_view(GSimpleAction *a, GVariant *state, gpointer data)
{
  NwRunPanel *p = data;
  g_simple_action_set_state(a, state);
  for (int j = 0; j < 2; j++)
    if (p->runs[j] != NULL)
      nw_run_set_live_view(p->runs[j], g_variant_get_boolean(state));
  nw_run_panel_update_readouts(p);
}

static void enable(NwRunPanel *p, int action, gboolean on)
{
  g_simple_action_set_enabled(p->actions[action], on);
}

void nw_run_panel_sync_actions(NwRunPanel *p)
{
  gboolean active = FALSE, running = FALSE, ended = FALSE;
  for (int j = 0; j < 2; j++) {
    NwRun *r = p->runs[j];
    if (r == NULL)
      continue;
    active |= nw_run_is_active(r);
    running |= nw_run_is_active(r) && nw_run_get_state(r) == NW_JOB_RUNNING;
    NwJobState s = nw_run_get_state(r);
    ended |= j == 0 && (s == NW_JOB_FINISHED || s == NW_JOB_CANCELLED);
  }
  enable(p, ACT_RUN, p->method != NULL && (!active || !running));
  enable(p, ACT_PAUSE, running);
  enable(p, ACT_STEP, active);
  enable(p, ACT_STOP, active);
  enable(p, ACT_SAVE_RESULTS, ended && !active);
  for (int j = 0; j < 2; j++)
    if (p->params[j] != NULL)
      nw_param_panel_set_running(p->params[j], active);
  gtk_widget_set_sensitive(GTK_WIDGET(p->method_combo), !active);
  gtk_widget_set_sensitive(GTK_WIDGET(p->device_combo[0]), !active);
  gtk_widget_set_sensitive(GTK_WIDGET(p->device_combo[1]), !active);
  gtk_widget_set_sensitive(GTK_WIDGET(p->second_check), !active);
}

static void report(NwRunPanel *p, GError *error)
{
  if (error != NULL)
    nw_run_panel_error(p, error->message);
  g_clear_error(&error);
}

/* The window the panel is in, for dialogs (NULL while it is in none). */
static GtkWindow *parent_window(NwRunPanel *p)
{
  GtkWidget *top = gtk_widget_get_toplevel(GTK_WIDGET(p));
  return GTK_IS_WINDOW(top) ? GTK_WINDOW(top) : NULL;
}

/* Run (F5): start, or resume paused jobs. */
static void act_run(GSimpleAction *a, GVariant *v, gpointer data)
{
  NwRunPanel *p = data;
  GError *error = NULL;
  gboolean paused = FALSE;
  for (int j = 0; j < 2; j++)
    paused |= p->runs[j] != NULL && nw_run_is_active(p->runs[j]);
  if (paused)
    nw_run_panel_resume(p);
  else
    nw_run_panel_start(p, FALSE, &error);
  report(p, error);
}

static void act_pause(GSimpleAction *a, GVariant *v, gpointer data)
{
  nw_run_panel_pause(data);
}

static void act_step(GSimpleAction *a, GVariant *v, gpointer data)
{
  nw_run_panel_step(data);
}

static void act_stop(GSimpleAction *a, GVariant *v, gpointer data)
{
  nw_run_panel_stop(data);
}

typedef gboolean (*PathFn)(NwRunPanel *p, const char *path, GError **error);

/* A file chooser, then fn on the chosen path. */
static void choose_path(NwRunPanel *p, const char *title, GtkFileChooserAction mode,
                        const char *suggest, PathFn fn)
{
  GtkFileChooserNative *fc = gtk_file_chooser_native_new(title, parent_window(p), mode, NULL, NULL);
  if (suggest != NULL)
    gtk_file_chooser_set_current_name(GTK_FILE_CHOOSER(fc), suggest);
  if (gtk_native_dialog_run(GTK_NATIVE_DIALOG(fc)) == GTK_RESPONSE_ACCEPT) {
    g_autofree char *path = gtk_file_chooser_get_filename(GTK_FILE_CHOOSER(fc));
    GError *error = NULL;
    fn(p, path, &error);
    report(p, error);
  }
  g_object_unref(fc);
}

/* Asks before replacing the files of an earlier save (the file chooser only knows the
 * prefix, not the PREFIX_* files). */
static gboolean save_results_asking(NwRunPanel *p, const char *prefix, GError **error)
{
  g_autoptr(GPtrArray) existing = nw_run_panel_existing_results(p, prefix);
  if (existing->len > 0) {
    g_autofree char *first = g_path_get_basename(g_ptr_array_index(existing, 0));
    GtkWidget *d =
        gtk_message_dialog_new(parent_window(p), GTK_DIALOG_MODAL, GTK_MESSAGE_QUESTION,
                               GTK_BUTTONS_NONE, "Replace %u files of an earlier save (%s%s)?",
                               existing->len, first, existing->len > 1 ? ", …" : "");
    gtk_dialog_add_buttons(GTK_DIALOG(d), "_Cancel", GTK_RESPONSE_CANCEL, "_Replace",
                           GTK_RESPONSE_ACCEPT, NULL);
    const int answer = gtk_dialog_run(GTK_DIALOG(d));
    gtk_widget_destroy(d);
    if (answer != GTK_RESPONSE_ACCEPT)
      return TRUE; /* the user kept the old files: not an error */
  }
  return nw_run_panel_save_results(p, prefix, TRUE, error);
}

static void act_save_results(GSimpleAction *a, GVariant *v, gpointer data)
{
  choose_path(data, "Save results (prefix)", GTK_FILE_CHOOSER_ACTION_SAVE, "run",
              save_results_asking);
}

static void act_save_session(GSimpleAction *a, GVariant *v, gpointer data)
{
  choose_path(data, "Save session", GTK_FILE_CHOOSER_ACTION_SAVE, "session.ini",
              nw_run_panel_save_session);
}

static void act_open_session(GSimpleAction *a, GVariant *v, gpointer data)
{
  choose_path(data, "Open session", GTK_FILE_CHOOSER_ACTION_OPEN, NULL,
              nw_run_panel_open_session);
}

/* ---- results and sessions ---- */

/* What a save under prefix may write, for one run's prefix: every result name a method has
 * today (demons, smooth, affine, nlm-surface's sdf), the transform files of an affine result
 * (nw_result_write_transform) and the surface. */
static void add_candidates(GPtrArray *out, const char *prefix)
{
  static const char *const names[] = {"warped", "forward",  "inverse", "velocity", "jacobian",
                                      "labels", "smoothed", "sdf",     NULL};
  static const char *const others[] = {"_affine.txt", "_affine.mat", "_fsl.mat", "_surface.gii",
                                       NULL};
  for (int i = 0; names[i] != NULL; i++)
    g_ptr_array_add(out, g_strdup_printf("%s_%s.nii.gz", prefix, names[i]));
  for (int i = 0; others[i] != NULL; i++)
    g_ptr_array_add(out, g_strconcat(prefix, others[i], NULL));
}

GPtrArray *nw_run_panel_existing_results(NwRunPanel *p, const char *prefix)
{
  g_autoptr(GPtrArray) all = g_ptr_array_new_with_free_func(g_free);
  g_autofree char *prefix2 = g_strdup_printf("%s_2", prefix);
  add_candidates(all, prefix);
  add_candidates(all, prefix2);
  GPtrArray *existing = g_ptr_array_new_with_free_func(g_free);
  for (guint i = 0; i < all->len; i++)
    if (g_file_test(g_ptr_array_index(all, i), G_FILE_TEST_EXISTS | G_FILE_TEST_IS_SYMLINK))
      g_ptr_array_add(existing, g_strdup(g_ptr_array_index(all, i)));
  return existing;
}

static gboolean written_now(GPtrArray *written, const char *path)
{
  for (guint i = 0; i < written->len; i++)
    if (strcmp(g_ptr_array_index(written, i), path) == 0)
      return TRUE;
  return FALSE;
}

/* "Saved 7 files in DIR: a, b, ..." under the run's summary. */
static void note_saved(NwRunPanel *p, GPtrArray *written)
{
  if (written->len == 0 || !gtk_widget_get_visible(GTK_WIDGET(p->summary)))
    return;
  g_autofree char *dir = g_path_get_dirname(g_ptr_array_index(written, 0));
  g_autoptr(GString) s = g_string_new(gtk_label_get_text(p->summary));
  g_string_append_printf(s, "\nSaved %u files in %s:", written->len, dir);
  for (guint i = 0; i < written->len; i++) {
    g_autofree char *base = g_path_get_basename(g_ptr_array_index(written, i));
    g_string_append_printf(s, "%s %s", i > 0 ? "," : "", base);
  }
  gtk_label_set_text(p->summary, s->str);
}

gboolean nw_run_panel_save_results(NwRunPanel *p, const char *prefix, gboolean overwrite,
                                   GError **error)
{
  if (p->runs[0] == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "save results %s: nothing has run yet", prefix);
    return FALSE;
  }
  g_autoptr(GPtrArray) existing = nw_run_panel_existing_results(p, prefix);
  if (existing->len > 0 && !overwrite) {
    g_set_error(error, NW_ERROR, NW_ERROR_EXISTS, "save results %s: %s exists already", prefix,
                (char *)g_ptr_array_index(existing, 0));
    return FALSE;
  }
  /* Each run's files are named together (nw_run_save_results); should the second run fail,
   * the first one's are taken back, so that a failed save leaves nothing. */
  g_autoptr(GPtrArray) written = g_ptr_array_new_with_free_func(g_free);
  g_autofree char *prefix2 = g_strdup_printf("%s_2", prefix);
  gboolean ok = nw_run_save_results(p->runs[0], prefix, written, error) &&
                (p->runs[1] == NULL || nw_run_save_results(p->runs[1], prefix2, written, error));
  for (guint i = 0; !ok && i < written->len; i++)
    g_unlink(g_ptr_array_index(written, i));
  for (guint i = 0; ok && i < existing->len; i++) /* stale files of the earlier save */
    if (!written_now(written, g_ptr_array_index(existing, i)))
      g_unlink(g_ptr_array_index(existing, i));
  if (ok)
    note_saved(p, written);
  return ok;
}

gboolean nw_run_panel_save_session(NwRunPanel *p, const char *path, GError **error)
{
  if (p->method == NULL || p->params[0] == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "save session %s: no method chosen", path);
    return FALSE;
  }
  nw_run_panel_restore_pair(p);
  NwSession s = {0};
  s.method = g_strdup(p->method);
  s.device = p->device[0];
  s.fixed_path = p->pair[0] != NULL ? g_strdup(nw_layer_get_path(p->pair[0])) : NULL;
  s.moving_path = p->pair[1] != NULL ? g_strdup(nw_layer_get_path(p->pair[1])) : NULL;
  s.demo = p->pair[0] != NULL && nw_layer_get_path(p->pair[0]) == NULL;
  s.params = nw_param_panel_get_params(p->params[0]);
  s.second_job = nw_run_panel_second_on(p);
  s.device2 = p->device[1];
  s.params2 = s.second_job ? nw_param_panel_get_params(p->params[1]) : NULL;
  gboolean ok = nw_session_save(&s, path, error);
  nw_session_clear(&s);
  return ok;
}

static gboolean scene_has_images(NwScene *scene)
{
  for (guint i = 0; i < nw_scene_n_layers(scene); i++)
    if (nw_layer_get_kind(nw_scene_get_layer(scene, i)) == NW_LAYER_IMAGE)
      return TRUE;
  return FALSE;
}

/* The method, devices and parameters; the images too when none are open yet (the window
 * opens them: "open-demo", "open-file"). */
gboolean nw_run_panel_open_session(NwRunPanel *p, const char *path, GError **error)
{
  NwSession s = {0};
  if (!nw_session_load(&s, path, error))
    return FALSE;
  gboolean ok = nw_run_panel_set_method(p, s.method, error) &&
                nw_run_panel_set_device(p, 0, s.device, error) &&
                nw_run_panel_set_device(p, 1, s.device2, error);
  if (ok) {
    nw_param_panel_set_params(p->params[0], s.params);
    if (s.params2 != NULL)
      nw_param_panel_set_params(p->params[1], s.params2);
    nw_run_panel_set_second_job(p, s.second_job);
    if (!scene_has_images(p->scene)) {
      if (s.demo)
        nw_run_panel_request_open(p, NULL);
      if (s.fixed_path != NULL)
        nw_run_panel_request_open(p, s.fixed_path);
      if (s.moving_path != NULL)
        nw_run_panel_request_open(p, s.moving_path);
    }
  }
  nw_session_clear(&s);
  return ok;
}

void nw_run_panel_make_actions(NwRunPanel *p)
{
  static const struct {
    const char *name;
    GCallback activate;
  } plain[] = {
      [ACT_RUN] = {"run", G_CALLBACK(act_run)},
      [ACT_PAUSE] = {"pause", G_CALLBACK(act_pause)},
      [ACT_STEP] = {"step", G_CALLBACK(act_step)},
      [ACT_STOP] = {"stop", G_CALLBACK(act_stop)},
      [ACT_SAVE_RESULTS] = {"save-results", G_CALLBACK(act_save_results)},
      [ACT_SAVE_SESSION] = {"save-session", G_CALLBACK(act_save_session)},
      [ACT_OPEN_SESSION] = {"open-session", G_CALLBACK(act_open_session)},
  };
  for (int a = 0; a < ACT_LIVE_VIEW; a++) {
    p->actions[a] = g_simple_action_new(plain[a].name, NULL);
    g_signal_connect(p->actions[a], "activate", plain[a].activate, p);
  }
  p->actions[ACT_LIVE_VIEW] =
      g_simple_action_new_stateful("live-view", NULL, g_variant_new_boolean(TRUE));
  g_signal_connect(p->actions[ACT_LIVE_VIEW], "change-state", G_CALLBACK(act_live_view), p);
}

void nw_run_panel_add_actions(NwRunPanel *p, GActionMap *map)
{
  for (int a = 0; a < N_ACTIONS; a++)
    g_action_map_add_action(map, G_ACTION(p->actions[a]));
}
