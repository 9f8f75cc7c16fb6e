/* nw_run_panel_timeline.c — the run page's timeline: a slider over the iterations a run
 * kept (scene/nw_timeline.h) that shows the frame of the chosen iteration in the views while
 * or after the job runs, and a "Live" button that follows the job again (nw_run_panel.h).
 * Main thread only. */
#include "nw_run_panel.h"
#include "nw_run_panel_private.h"

/* The runs shown (run 2 only with the second job on), each scrubbed to the same iteration so
 * that a side-by-side comparison stays at one point of both registrations. */
static int n_runs(NwRunPanel *p)
{
  return nw_run_panel_second_on(p) ? 2 : 1;
}

gboolean nw_run_panel_scrub(NwRunPanel *p, int k, GError **error)
{
  if (p->runs[0] == NULL) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "timeline: no run yet");
    return FALSE;
  }
  for (int j = 0; j < n_runs(p); j++)
    if (p->runs[j] != NULL && !nw_run_show_iteration(p->runs[j], k, error))
      return FALSE;
  nw_run_panel_update_timeline(p);
  nw_run_panel_update_readouts(p);
  return TRUE;
}

static void on_scale_changed(GtkRange *range, gpointer data)
{
  NwRunPanel *p = data;
  if (p->updating)
    return;
  g_autoptr(GError) error = NULL;
  if (!nw_run_panel_scrub(p, (int)gtk_range_get_value(range), &error))
    nw_run_panel_error(p, error->message);
}

static void on_live_clicked(GtkButton *b, gpointer data)
{
  (void)b;
  nw_run_panel_scrub(data, -1, NULL);
}

/* The slider spans run 1's kept iterations; it sits on the frame shown, or at the newest
 * while live. */
void nw_run_panel_update_timeline(NwRunPanel *p)
{
  NwRun *r = p->runs[0];
  const NwTimeline *t = r != NULL ? nw_run_get_timeline(r) : NULL;
  const guint n = t != NULL ? nw_timeline_n_frames(t) : 0;
  const int first = n > 0 ? nw_timeline_get(t, 0)->iteration : 0;
  const int last = n > 0 ? nw_timeline_get(t, n - 1)->iteration : 0;
  const int scrub = r != NULL ? nw_run_get_scrub(r) : -1;
  p->updating = TRUE;
  gtk_range_set_range(GTK_RANGE(p->timeline_scale), first, MAX(last, first + 1));
  gtk_range_set_value(GTK_RANGE(p->timeline_scale), scrub >= 0 ? scrub : last);
  p->updating = FALSE;
  gtk_widget_set_sensitive(GTK_WIDGET(p->timeline_scale), n > 1);
  gtk_widget_set_sensitive(GTK_WIDGET(p->timeline_live), scrub >= 0);
  g_autofree char *text =
      n == 0 ? g_strdup("no frames kept")
             : g_strdup_printf("%s · %u frames kept (%.1f MB)", scrub >= 0 ? "scrubbed" : "live",
                               n, nw_timeline_bytes(t) / 1e6);
  gtk_label_set_text(p->timeline_label, text);
}

void nw_run_panel_build_timeline(NwRunPanel *p, GtkBox *box)
{
  GtkWidget *row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 4);
  p->timeline_scale = GTK_SCALE(gtk_scale_new_with_range(GTK_ORIENTATION_HORIZONTAL, 0, 1, 1));
  gtk_widget_set_name(GTK_WIDGET(p->timeline_scale), "timeline");
  gtk_scale_set_digits(p->timeline_scale, 0);
  gtk_scale_set_value_pos(p->timeline_scale, GTK_POS_LEFT);
  gtk_widget_set_tooltip_text(GTK_WIDGET(p->timeline_scale),
                              "Show the kept frame of an earlier iteration in the views");
  p->timeline_live = GTK_BUTTON(gtk_button_new_with_label("Live"));
  gtk_widget_set_tooltip_text(GTK_WIDGET(p->timeline_live), "Follow the job again");
  gtk_box_pack_start(GTK_BOX(row), GTK_WIDGET(p->timeline_scale), TRUE, TRUE, 0);
  gtk_box_pack_start(GTK_BOX(row), GTK_WIDGET(p->timeline_live), FALSE, FALSE, 0);
  /* the window draws the views, so the export is its action */
  GtkWidget *export = gtk_button_new_with_label("Export…");
  gtk_actionable_set_action_name(GTK_ACTIONABLE(export), "win.export-frames");
  gtk_widget_set_tooltip_text(export, "The kept frames as numbered PNGs of the views");
  gtk_box_pack_start(GTK_BOX(row), export, FALSE, FALSE, 0);
  GtkWidget *anim = gtk_button_new_with_label("GIF…");
  gtk_actionable_set_action_name(GTK_ACTIONABLE(anim), "win.export-animation");
  gtk_widget_set_tooltip_text(anim, "The kept frames as an animated GIF of the views");
  gtk_box_pack_start(GTK_BOX(row), anim, FALSE, FALSE, 0);
  gtk_box_pack_start(box, row, FALSE, FALSE, 0);
  p->timeline_label = GTK_LABEL(gtk_label_new(NULL));
  gtk_widget_set_name(GTK_WIDGET(p->timeline_label), "timeline-readout");
  gtk_label_set_xalign(p->timeline_label, 0.0f);
  gtk_box_pack_start(box, GTK_WIDGET(p->timeline_label), FALSE, FALSE, 0);
  g_signal_connect(p->timeline_scale, "value-changed", G_CALLBACK(on_scale_changed), p);
  g_signal_connect(p->timeline_live, "clicked", G_CALLBACK(on_live_clicked), p);
  nw_run_panel_update_timeline(p);
}
