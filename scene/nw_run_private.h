/* nw_run_private.h — NwRun's fields, shared by nw_run.c (jobs, frames, layers, timeline)
 * and nw_run_save.c (Save results). Main thread, as nw_run.h. */
#ifndef NW_RUN_PRIVATE_H
#define NW_RUN_PRIVATE_H

#include "nw_run.h"
#include "nw_run_inputs.h"
#include "nw_run_level_set.h"

#define MS_WINDOW 10 /* ms/iteration: mean of the last MS_WINDOW reports (of each kind) */

/* Mean of the last MS_WINDOW values added. */
typedef struct {
  double ms[MS_WINDOW];
  int n;
} MsWindow;

struct _NwRun {
  GObject parent;
  NwScene *scene;
  char *label;
  const NwMethodOps *ops;
  NwJob *job;
  guint serial;             /* bumped per start: messages of an older job are dropped */
  NwVolume *inputs[4];      /* fixed, moving, fixed and moving labels (copies: the job borrows
                               them) */
  NwRunRegrid *regrid;      /* the job's moving image onto the fixed grid (NULL: not needed) */
  NwRunLevelSet *level_set; /* a level-set method's input and measure (NULL: another
                               method); kept after the job for Save results */
  int surface_label;        /* the label a level set is made of (NW_RUN_LABEL_AUTO) */
  NwLiveSource *live;       /* the job's frames for the views, while it runs */
  NwLivePath path;
  gboolean started;                  /* a job was started (the frame path is known) */
  gboolean live_view;                /* the views pull frames (the user may turn it off) */
  gint redraw_queued;                /* atomic: a redraw message is on its way */
  float iso;                         /* iso level of the surface: nw_layer_surface_iso of fixed */
  NwLayer *warped, *field, *surface; /* in the scene while shown; owned refs */
  NwLayer *input_surface;            /* level-set methods: the input's surface, for comparison */
  NwJobState state;
  int iteration, shown;
  MsWindow ms_all, ms_shown, ms_alone; /* all; while the display pulled frames; while not */
  NwIterationReport last;
  gboolean have_report;
  double work_ms; /* the job's time: the sum of its iterations' (no pauses) */
  int level_iterations[NW_RUN_MAX_LEVELS]; /* iterations per level, as reported */
  int n_levels;
  double before_mse, before_ncc; /* of the pair as given (NAN: no moving image) */
  NwLiveStats live_stats;        /* of the last job, kept when its source is freed */
  guint64 frames_made;           /* live frames the last job published, kept when it is freed */
  gboolean surface_busy;         /* an iso-surface task is running */
  gboolean surface_is_result;    /* the surface layer holds the result's iso-surface */
  NwMethodResult *result;        /* of the ended job, for saving */
  GError *error;                 /* of a FAILED job */
  NwTimeline *timeline;          /* the frames the layers were given, with their iterations */
  int scrub;                     /* iteration of the timeline frame the layers show; -1: live */
};

/* Whether the run makes an iso-surface of its image at all (nw_run.c). */
gboolean nw_run_wants_surface(const NwVolume *image);

#endif
