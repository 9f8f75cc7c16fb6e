/* nw_run_panel.h — the "Run" page of the window's sidebar: method, device and preset
 * pickers, the parameter panel, Run / Pause / Step / Stop (actions run F5, pause F6,
 * step F10, stop Shift+F5), a progress bar, readouts (iteration, ms/iteration, device,
 * frame path and the lag of the shown iteration), what the last run achieved once it has
 * ended (nw_run_summary.h) and the files saved, the live plot of the figures the method
 * names (NwMethodOps.plot_figures), Save results (save-results), session Save / Open
 * (save-session, open-session) and a "Second job" switch that runs a second job side by
 * side with its own device and parameters (runs "1" and "2"; the views then compare their
 * warped images with a curtain).
 *
 * The panel works on the scene it is given and owns the runs (nw_run.h). It knows no
 * window: its actions go into the action map the window gives it (as win.*), and what only
 * the window can do it asks for with signals. Every function that may fail reports through
 * GError; the script commands (nw_script.c) call the same functions as the buttons. Main
 * thread only.
 *
 * Signals:
 *   "error"     (const char *message) a button's or a run's failure, for the error bar
 *   "open-file" (const char *path)    a session opened on an empty scene names its images
 *   "open-demo"                       ... or the demo case */
#ifndef NW_RUN_PANEL_H
#define NW_RUN_PANEL_H

#include <gtk/gtk.h>

#include "nw_plot.h"
#include "nw_run.h"
#include "nw_scene.h"

G_BEGIN_DECLS

#define NW_TYPE_RUN_PANEL (nw_run_panel_get_type())
G_DECLARE_FINAL_TYPE(NwRunPanel, nw_run_panel, NW, RUN_PANEL, GtkBox)

/* A panel that runs jobs on scene's compared pair and shows their layers there. */
NwRunPanel *nw_run_panel_new(NwScene *scene);
/* Adds the panel's actions to map (the window's: win.run, win.pause, win.step, win.stop,
 * win.save-results, win.save-session, win.open-session, win.live-view). */
void nw_run_panel_add_actions(NwRunPanel *p, GActionMap *map);

gboolean nw_run_panel_set_method(NwRunPanel *p, const char *name, GError **error);
/* job: 0 or 1 (the second job). "cuda" without a device is an error naming the reason. */
gboolean nw_run_panel_set_device(NwRunPanel *p, int job, NwDevice device, GError **error);
/* One parameter of job 0 or 1, from text; while that job runs, a live value goes to it and
 * a non-live change fails with the job's message (the panel keeps the old value). Turning
 * the second job on copies job 0's values into job 1's panel. */
gboolean nw_run_panel_set_param(NwRunPanel *p, int job, const char *name, const char *value,
                                GError **error);
/* A shipped preset by display name or file name, or a path to a preset file. */
gboolean nw_run_panel_apply_preset(NwRunPanel *p, const char *name_or_path, GError **error);
void nw_run_panel_set_second_job(NwRunPanel *p, gboolean on);
/* Methods whose input is a level set ("nlm-surface"): the label of a label volume that is
 * the surface, or < 0 for auto (scene/nw_run_level_set.h); used by the next start. */
gboolean nw_run_panel_set_surface_label(NwRunPanel *p, int label, GError **error);

/* Start the job(s) on the scene's compared pair (the pair of the first start while runs
 * replace it). */
gboolean nw_run_panel_start(NwRunPanel *p, gboolean paused, GError **error);
void nw_run_panel_pause(NwRunPanel *p);
void nw_run_panel_resume(NwRunPanel *p);
void nw_run_panel_step(NwRunPanel *p);
void nw_run_panel_stop(NwRunPanel *p);

/* Run 0 or 1 (NULL when none). */
NwRun *nw_run_panel_get_run(NwRunPanel *p, int job);
NwPlot *nw_run_panel_get_plot(NwRunPanel *p);
/* What the page says of the ended run (nw_run_summary.h) and of the files saved since, as
 * shown; NULL while it shows nothing (no run has ended). */
const char *nw_run_panel_get_summary(NwRunPanel *p);
/* The views show the kept frame of iteration k (the newest at or before k) of run 1 (and
 * run 2 with the second job on), while or after they run; k < 0: follow the jobs again.
 * The timeline slider of the page does the same. */
gboolean nw_run_panel_scrub(NwRunPanel *p, int k, GError **error);
/* "readouts: iteration I · ms M · path P · shown S" for run 1 (g_free). */
char *nw_run_panel_readouts(NwRunPanel *p);

/* PREFIX_* of run 1 (and PREFIX2_* ... with the second job: PREFIX_2_*), all or nothing.
 * Files a save may write that exist already (PREFIX_warped.nii.gz, ..., PREFIX_surface.gii)
 * are an NW_ERROR_EXISTS error naming the first unless overwrite; with overwrite they are
 * replaced, and those this save does not write are removed (no mix of two saves). */
gboolean nw_run_panel_save_results(NwRunPanel *p, const char *prefix, gboolean overwrite,
                                   GError **error);
/* The files of an earlier save under prefix that a save would replace or remove (owned
 * paths; g_ptr_array_unref). */
GPtrArray *nw_run_panel_existing_results(NwRunPanel *p, const char *prefix);
gboolean nw_run_panel_save_session(NwRunPanel *p, const char *path, GError **error);
gboolean nw_run_panel_open_session(NwRunPanel *p, const char *path, GError **error);

G_END_DECLS

#endif
