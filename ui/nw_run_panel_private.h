/* nw_run_panel_private.h — NwRunPanel's fields, shared by nw_run_panel.c (widgets, pickers,
 * starting runs) and nw_run_panel_actions.c (readouts, win.* actions, results, sessions).
 * Main thread only. */
#ifndef NW_RUN_PANEL_PRIVATE_H
#define NW_RUN_PANEL_PRIVATE_H

#include "nw_param_panel.h"
#include "nw_run_panel.h"

/* The panel's actions (nw_run_panel_make_actions), added to the window's map. */
enum {
  ACT_RUN,
  ACT_PAUSE,
  ACT_STEP,
  ACT_STOP,
  ACT_SAVE_RESULTS,
  ACT_SAVE_SESSION,
  ACT_OPEN_SESSION,
  ACT_LIVE_VIEW,
  N_ACTIONS
};

struct _NwRunPanel {
  GtkBox parent;
  NwScene *scene;
  GSimpleAction *actions[N_ACTIONS];
  GtkComboBoxText *method_combo, *preset_combo, *device_combo[2];
  GtkBox *params_box[2];
  NwParamPanel *params[2];
  GtkWidget *second_box;
  GtkToggleButton *second_check;
  GtkProgressBar *progress;
  GtkLabel *readout_iteration, *readout_ms, *readout_device, *readout_path;
  GtkScale *timeline_scale; /* nw_run_panel_timeline.c */
  GtkButton *timeline_live;
  GtkLabel *timeline_label;
  GtkLabel *summary; /* what the last run achieved (nw_run_summary.h), and what was saved */
  GtkBox *plot_box;
  NwPlot *plot;
  NwRun *runs[2];
  char *method;
  NwDevice device[2];
  NwLayer *pair[2]; /* the compared pair of the first start (refs): runs replace the pair */
  GPtrArray *preset_paths;
  int last_level[2];
  gboolean updating; /* programmatic widget changes: no feedback */
  char *cuda_name;   /* NULL without a CUDA device */
  GtkWidget *label_row;      /* level-set methods: which label (nw_run_panel_surface.c) */
  GtkEntry *label_entry;     /* a label, or empty for auto */
  int surface_label;         /* NW_RUN_LABEL_AUTO or a label */
};

gboolean nw_run_panel_second_on(NwRunPanel *p);
/* The pair of the first start again as the compared pair, when still in the scene. */
void nw_run_panel_restore_pair(NwRunPanel *p);
void nw_run_panel_sync_actions(NwRunPanel *p);
void nw_run_panel_update_readouts(NwRunPanel *p);
/* Makes the actions (p->actions), not yet in any map. */
void nw_run_panel_make_actions(NwRunPanel *p);
/* Emit "error" with message; "open-file" with path, or "open-demo" when path is NULL. */
void nw_run_panel_error(NwRunPanel *p, const char *message);
void nw_run_panel_request_open(NwRunPanel *p, const char *path);
/* The timeline's slider and readout under the run controls (nw_run_panel_timeline.c). */
void nw_run_panel_build_timeline(NwRunPanel *p, GtkBox *box);
void nw_run_panel_update_timeline(NwRunPanel *p);

/* The Label row of level-set methods (nw_run_panel_surface.c): built hidden, shown while
 * such a method is picked (sync, after each method change). */
void nw_run_panel_build_surface_label(NwRunPanel *p, GtkBox *box);
void nw_run_panel_sync_surface_label(NwRunPanel *p);
/* The picker's tooltip's addition for level-set methods. */
const char *nw_run_panel_level_set_tip(void);

#endif
