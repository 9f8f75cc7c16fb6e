/* nw_run.c — one job started from the window, shown live as layers of the scene (nw_run.h).
 * Main thread, except the job callbacks (on_* below), which run on the job's WORKER thread,
 * and the frame source's notify, which runs on the worker or the source's downloader thread:
 * those only hand data over and post messages to the main loop. Frames are pulled by the
 * views at the display's pace through the run's NwLiveSource (render/live_source.h): by
 * CUDA–GL interop when the method runs on CUDA and the views' GL context can take them,
 * else as host frames. Iso-surfaces of host frames and of the result are made on a worker
 * (GTask), never on the job's thread or the main thread. Save results: nw_run_save.c. */
#include "nw_run.h"

#include <gio/gio.h>
#include <math.h>
#include <string.h>

#include "field.h"
#include "io_mesh.h"
#include "level_set.h"
#include "live_source.h"
#include "marching_cubes.h"
#include "nw_error.h"
#include "nw_run_private.h"
#include "nw_timeline.h"
#include "result_io.h"

G_DEFINE_TYPE(NwRun, nw_run, G_TYPE_OBJECT)

enum { SIG_ITERATION, SIG_STATE_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void ms_add(MsWindow *w, double ms)
{
  w->ms[w->n % MS_WINDOW] = ms;
  w->n++;
}

static double ms_mean(const MsWindow *w)
{
  const int n = MIN(w->n, MS_WINDOW);
  double sum = 0.0;
  for (int i = 0; i < n; i++)
    sum += w->ms[i];
  return n > 0 ? sum / n : 0.0;
}

static void remove_layer(NwRun *r, NwLayer **l)
{
  if (*l == NULL)
    return;
  nw_layer_set_live(*l, NULL, r->iso);
  nw_scene_remove_layer(r->scene, *l);
  g_clear_object(l);
}

/* Point the run's layers (those that exist) at the frame source, or back to their host data
 * (NULL). */
static void set_live(NwRun *r, NwLiveSource *live)
{
  NwLayer *layers[3] = {r->warped, r->field, r->surface};
  for (int i = 0; i < 3; i++)
    if (layers[i] != NULL)
      nw_layer_set_live(layers[i], live, r->iso);
}

/* Ends and frees the job (main thread; waits for the worker), then the frame source: the
 * layers stop reading it first, and the source stops asking the job before the job goes. */
static void drop_job(NwRun *r)
{
  set_live(r, NULL);
  if (r->live != NULL)
    nw_live_source_set_job(r->live, NULL);
  if (r->job != NULL)
    r->frames_made = nw_job_get_live_frames(r->job);
  g_clear_pointer(&r->job, nw_job_free);
  g_clear_pointer(&r->regrid, nw_run_regrid_free); /* the job's hooks used it until here */
  if (r->live != NULL)
    nw_live_source_stats(r->live, &r->live_stats);
  g_clear_pointer(&r->live, nw_live_source_free);
}

static void nw_run_dispose(GObject *obj)
{
  NwRun *r = NW_RUN(obj);
  r->serial++;
  drop_job(r);
  if (r->scene != NULL) {
    remove_layer(r, &r->warped);
    remove_layer(r, &r->field);
    remove_layer(r, &r->surface);
    remove_layer(r, &r->input_surface);
  }
  g_clear_object(&r->scene);
  G_OBJECT_CLASS(nw_run_parent_class)->dispose(obj);
}

static void nw_run_finalize(GObject *obj)
{
  NwRun *r = NW_RUN(obj);
  for (int i = 0; i < 4; i++)
    g_clear_pointer(&r->inputs[i], nw_volume_free);
  g_clear_pointer(&r->result, nw_method_result_free);
  g_clear_pointer(&r->level_set, nw_run_level_set_free);
  g_clear_error(&r->error);
  nw_timeline_free(r->timeline);
  g_free(r->label);
  G_OBJECT_CLASS(nw_run_parent_class)->finalize(obj);
}

static void nw_run_class_init(NwRunClass *klass)
{
  GObjectClass *oc = G_OBJECT_CLASS(klass);
  oc->dispose = nw_run_dispose;
  oc->finalize = nw_run_finalize;
  signals[SIG_ITERATION] = g_signal_new("iteration", NW_TYPE_RUN, G_SIGNAL_RUN_LAST, 0, NULL,
                                        NULL, NULL, G_TYPE_NONE, 2, G_TYPE_POINTER, G_TYPE_DOUBLE);
  signals[SIG_STATE_CHANGED] = g_signal_new("state-changed", NW_TYPE_RUN, G_SIGNAL_RUN_LAST, 0,
                                            NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_INT);
}

static void nw_run_init(NwRun *r)
{
  r->state = NW_JOB_IDLE;
  r->shown = -1;
  r->live_view = TRUE;
  r->live_stats.shown = -1;
  r->timeline = nw_timeline_new(0);
  r->scrub = -1;
  r->surface_label = NW_RUN_LABEL_AUTO;
}

NwRun *nw_run_new(NwScene *scene, const char *label)
{
  NwRun *r = g_object_new(NW_TYPE_RUN, NULL);
  r->scene = g_object_ref(scene);
  r->label = g_strdup(label);
  return r;
}

/* ---- messages from the worker (main thread side) ---- */

typedef struct {
  NwRun *run; /* ref */
  guint serial;
  NwIterationReport report;
  double ms;
  gboolean shown; /* the display was pulling frames during the iteration */
  NwJobState state;
  GError *error;
} RunMsg;

static RunMsg *msg_new(NwRun *r)
{
  RunMsg *m = g_new0(RunMsg, 1);
  m->run = g_object_ref(r);
  m->serial = r->serial;
  return m;
}

static void msg_free(gpointer data)
{
  RunMsg *m = data;
  g_clear_error(&m->error);
  g_object_unref(m->run);
  g_free(m);
}

static void post(RunMsg *m, GSourceFunc fn)
{
  /* Always queued, never run on the calling thread: g_main_context_invoke would call fn
   * right here on the worker when no thread owns the main context (a program or a test
   * that iterates the main loop only now and then), and done_main joins the worker. */
  g_idle_add_full(G_PRIORITY_DEFAULT, fn, m, msg_free);
}

static gboolean iteration_main(gpointer data)
{
  RunMsg *m = data;
  NwRun *r = m->run;
  if (m->serial != r->serial)
    return G_SOURCE_REMOVE;
  r->last = m->report;
  r->have_report = TRUE;
  r->iteration = MAX(r->iteration, m->report.iteration);
  r->work_ms += m->ms;
  if (m->report.level >= 0 && m->report.level < NW_RUN_MAX_LEVELS)
    r->level_iterations[m->report.level]++;
  r->n_levels = MIN(m->report.n_levels, NW_RUN_MAX_LEVELS);
  ms_add(&r->ms_all, m->ms);
  ms_add(m->shown ? &r->ms_shown : &r->ms_alone, m->ms);
  g_signal_emit(r, signals[SIG_ITERATION], 0, &r->last, m->ms);
  return G_SOURCE_REMOVE;
}

static void on_iteration(NwJob *job, const NwIterationReport *report, double ms, gpointer data)
{
  (void)job;
  NwRun *r = data;
  RunMsg *m = msg_new(r);
  m->report = *report; /* figure names are static strings: a copy by value is whole */
  m->ms = ms;
  m->shown = r->live != NULL && nw_live_source_display_active(r->live);
  post(m, iteration_main);
}

/* The surface layer gets s (taken), made on its first surface; the views re-upload on the
 * generation bump. */
static void layer_take_surface(NwRun *r, NwSurface *s)
{
  if (r->surface == NULL) {
    g_autofree char *name = g_strdup_printf("surface · %s", r->label);
    r->surface = nw_layer_new_surface(name, s);
    nw_layer_set_live(r->surface, r->live, r->iso);
    nw_scene_add_layer(r->scene, r->surface);
    /* under the faint input surface: translucent meshes blend over what is drawn before */
    if (r->input_surface != NULL)
      nw_scene_move_layer(r->scene, r->surface,
                          (guint)nw_scene_layer_index(r->scene, r->input_surface));
    return;
  }
  nw_layer_take_surface(r->surface, s);
}

/* ---- iso-surfaces on a worker (GTask) ---- */

/* Whether the run makes an iso-surface of its image at all: not of a single slice (a 2D
 * pair), where marching cubes finds no cube (it needs two slices) and a surface would mean
 * nothing; the window shows such a scene in the axial view alone. */
gboolean nw_run_wants_surface(const NwVolume *image)
{
  return image != NULL && image->nz > 1;
}

typedef struct {
  NwVolume *image; /* owned copy */
  float iso;
  gboolean level_set; /* image is phi (negative inside): its zero level set, facing out */
  guint serial;
  gboolean final; /* of the result */
} SurfaceTask;

static void surface_task_free(gpointer data)
{
  SurfaceTask *t = data;
  nw_volume_free(t->image);
  g_free(t);
}

static void surface_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancel)
{
  SurfaceTask *t = data;
  GError *error = NULL;
  NwSurface *s = t->level_set ? nw_level_set_mesh(t->image, NULL, &error)
                              : nw_marching_cubes(t->image, t->iso, &error);
  if (s != NULL)
    g_task_return_pointer(task, s, (GDestroyNotify)nw_surface_free);
  else
    g_task_return_error(task, error);
}

static void surface_done(GObject *source, GAsyncResult *res, gpointer data)
{
  NwRun *r = NW_RUN(source);
  SurfaceTask *t = g_task_get_task_data(G_TASK(res));
  g_autoptr(GError) error = NULL;
  NwSurface *s = g_task_propagate_pointer(G_TASK(res), &error);
  r->surface_busy = FALSE;
  if (s == NULL) { /* keep the surface shown */
    g_debug("run %s: surface: %s", r->label, error->message);
    return;
  }
  if (t->serial != r->serial || r->warped == NULL || (r->surface_is_result && !t->final)) {
    nw_surface_free(s);
    return;
  }
  layer_take_surface(r, s);
  r->surface_is_result = t->final;
  nw_scene_changed(r->scene);
}

/* The iso-surface of image (copied) on a worker, unless one is being made (frames come
 * faster than surfaces: the next frame after it finishes gets one). final: the result's,
 * which always gets one. */
static void start_surface(NwRun *r, const NwVolume *image, gboolean final)
{
  if (!nw_run_wants_surface(image) || (r->surface_busy && !final))
    return;
  SurfaceTask *t = g_new0(SurfaceTask, 1);
  t->image = nw_volume_copy(image);
  t->iso = r->iso;
  t->level_set = r->level_set != NULL;
  t->serial = r->serial;
  t->final = final;
  r->surface_busy = TRUE;
  GTask *task = g_task_new(r, NULL, surface_done, NULL);
  g_task_set_task_data(task, t, surface_task_free);
  g_task_run_in_thread(task, surface_thread);
  g_object_unref(task);
}

/* ---- frames from the source ---- */

static gboolean redraw_main(gpointer data)
{
  RunMsg *m = data;
  g_atomic_int_set(&m->run->redraw_queued, 0);
  if (m->serial == m->run->serial)
    nw_scene_changed(m->run->scene);
  return G_SOURCE_REMOVE;
}

/* Source (worker or downloader thread): a frame arrived; one redraw message at a time. */
static void on_live_notify(gpointer data)
{
  NwRun *r = data;
  if (g_atomic_int_compare_and_exchange(&r->redraw_queued, 0, 1))
    post(msg_new(r), redraw_main);
}

/* Source (main thread, while a view begins a display frame): a host frame for the layers.
 * No "changed" here: the views are drawing it now. The volumes the layers let go of (the
 * previous frame's, drawn already: a texture update copies them before it returns) and those
 * of a frame not shown go back to the source, whose next download fills them: no allocation
 * per frame. */
static void on_live_take(NwFrame *f, gpointer data)
{
  NwRun *r = data;
  if (r->warped != NULL && f->image != NULL)
    nw_timeline_add(r->timeline, f->iteration, f->image, f->field);
  if (r->warped != NULL && f->image != NULL && r->scrub < 0) {
    start_surface(r, f->image, FALSE);
    nw_live_source_recycle(r->live, nw_layer_swap_volume(r->warped, g_steal_pointer(&f->image)));
    if (f->field != NULL && r->field != NULL)
      nw_live_source_recycle(r->live, nw_layer_swap_volume(r->field, g_steal_pointer(&f->field)));
    r->shown = MAX(r->shown, f->iteration);
  }
  nw_live_source_recycle_frame(r->live, f);
}

/* Worker: every frame of the job goes to the source. */
static void on_frame(NwJob *job, NwFrame *frame, gpointer data)
{
  (void)job;
  nw_live_source_push(((NwRun *)data)->live, frame);
}

/* The image of a result that the run's image layer shows: a level-set method's is phi. */
static const NwVolume *result_image(NwRun *r)
{
  return nw_method_result_get(r->result, r->level_set != NULL ? "sdf" : "warped");
}

/* The full-resolution results replace the coarse live data (main thread); the surface of
 * the result is made on a worker. */
static void show_result(NwRun *r)
{
  const NwVolume *w = result_image(r);
  const NwVolume *u = nw_method_result_get(r->result, "forward");
  if (w != NULL && r->warped != NULL)
    nw_timeline_add(r->timeline, r->iteration, w, u);
  if (r->scrub >= 0) /* the user looks at an earlier frame: the result waits for "live" */
    return;
  if (w != NULL && r->warped != NULL)
    nw_layer_take_volume(r->warped, nw_volume_copy(w));
  if (u != NULL && r->field != NULL)
    nw_layer_take_volume(r->field, nw_volume_copy(u));
  if (w != NULL && r->warped != NULL)
    start_surface(r, w, TRUE);
}

static gboolean done_main(gpointer data)
{
  RunMsg *m = data;
  NwRun *r = m->run;
  /* r->job NULL: the run was disposed (the window closed) with the job going; the worker's
   * "done", posted while dispose joined it, carries dispose's serial and finds nothing left */
  if (m->serial != r->serial || r->job == NULL)
    return G_SOURCE_REMOVE;
  nw_job_wait(r->job, NULL); /* the worker has left its loop: this only joins it */
  r->iteration = MAX(r->iteration, nw_job_get_iteration(r->job));
  g_clear_pointer(&r->result, nw_method_result_free);
  if (m->state == NW_JOB_FINISHED || m->state == NW_JOB_CANCELLED)
    r->result = nw_job_take_result(r->job, NULL);
  const double *before = r->result != NULL ? nw_method_result_get_values(r->result, "before", NULL)
                                           : NULL;
  if (before != NULL) { /* measured on the fixed grid by the worker (nw_run_inputs.h) */
    r->before_mse = before[0];
    r->before_ncc = before[1];
  }
  r->shown = MAX(r->shown, r->live != NULL ? nw_run_get_shown_iteration(r) : -1);
  drop_job(r); /* clears layer->live, then frees the job, then the source */
  if (r->result != NULL)
    show_result(r);
  if (r->warped != NULL)
    r->shown = MAX(r->shown, r->iteration);
  r->state = m->state;
  g_clear_error(&r->error);
  if (m->error != NULL && m->state == NW_JOB_FAILED)
    r->error = g_error_copy(m->error);
  nw_scene_changed(r->scene);
  g_signal_emit(r, signals[SIG_STATE_CHANGED], 0, (int)r->state);
  return G_SOURCE_REMOVE;
}

static void on_done(NwJob *job, NwJobState state, const GError *error, gpointer data)
{
  (void)job;
  RunMsg *m = msg_new(data);
  m->state = state;
  m->error = error != NULL ? g_error_copy(error) : NULL;
  post(m, done_main);
}

/* The input's surface of a level-set run (main thread): faint and bluish over the live one,
 * so that what the denoising removed shows where the two part. */
static gboolean input_surface_main(gpointer data)
{
  RunMsg *m = data;
  NwRun *r = m->run;
  NwSurface *s = m->serial == r->serial && r->level_set != NULL
                     ? nw_run_level_set_take_input_mesh(r->level_set)
                     : NULL;
  if (s == NULL)
    return G_SOURCE_REMOVE;
  remove_layer(r, &r->input_surface);
  g_autofree char *name = g_strdup_printf("input surface · %s", r->label);
  static const float blue[3] = {0.45f, 0.65f, 1.0f};
  r->input_surface = nw_layer_new_surface(name, s);
  nw_layer_set_color(r->input_surface, blue);
  nw_layer_set_opacity(r->input_surface, 0.3f);
  nw_scene_add_layer(r->scene, r->input_surface); /* on top: drawn last, over the live one */
  return G_SOURCE_REMOVE;
}

/* Worker (the level set's prepare hook): the input's mesh is made. */
static void on_input_surface(gpointer data)
{
  post(msg_new(data), input_surface_main);
}

/* ---- control (main thread) ---- */

/* A level-set method's layers: "level set · L", phi itself (the input volume until the first
 * frame; hidden: the surfaces say what it means), whose zero level set becomes "surface · L"
 * (made from each frame as a registration's iso-surface is, at phi = 0); the input's own
 * surface "input surface · L" follows when the worker has made it (input_surface_main). */
static void make_level_set_layers(NwRun *r)
{
  g_autofree char *name = g_strdup_printf("level set · %s", r->label);
  r->warped = nw_layer_new_volume(NW_LAYER_IMAGE, name, nw_volume_copy(r->inputs[0]));
  nw_layer_set_colormap(r->warped, NW_COLORMAP_DIVERGING);
  nw_layer_set_range(r->warped, -5.0f, 5.0f); /* mm about the surface */
  nw_layer_set_visible(r->warped, FALSE);
  r->iso = 0.0f;
  set_live(r, r->live);
  nw_scene_add_layer(r->scene, r->warped);
  /* phi is no image to compare the input with (the scene pairs the first two images) */
  if (nw_scene_get_compare_b(r->scene) == r->warped)
    nw_scene_set_compare_pair(r->scene, nw_scene_get_compare_a(r->scene), NULL);
}

/* "warped · L" (moving until the first frame, styled like fixed so that comparisons are
 * like with like) and "deformation · L" (zero field on the fixed grid, drawn as a grid). */
static gboolean make_layers(NwRun *r, NwLayer *fixed, GError **error)
{
  remove_layer(r, &r->warped);
  remove_layer(r, &r->field);
  remove_layer(r, &r->surface);
  remove_layer(r, &r->input_surface);
  if (r->level_set != NULL) {
    make_level_set_layers(r);
    return TRUE;
  }
  NwVolume *u = nw_volume_new_like(r->inputs[0], 3, error);
  if (u == NULL)
    return FALSE;
  g_autofree char *wname = g_strdup_printf("warped · %s", r->label);
  g_autofree char *fname = g_strdup_printf("deformation · %s", r->label);
  r->warped = nw_layer_new_volume(NW_LAYER_IMAGE, wname, nw_volume_copy(r->inputs[1]));
  nw_layer_set_style(r->warped, nw_layer_get_style(fixed));
  float lo, hi;
  nw_layer_get_auto_window(fixed, &lo, &hi);
  nw_layer_set_auto_window(r->warped, lo, hi);
  r->field = nw_layer_new_volume(NW_LAYER_FIELD, fname, u);
  nw_layer_set_field_show(r->field, NW_FIELD_SHOW_GRID);
  r->iso = nw_layer_surface_iso(fixed);
  /* the 3D view draws the live mesh of this layer (made on the GPU every other frame) */
  if (r->path == NW_LIVE_PATH_INTEROP && nw_run_wants_surface(r->inputs[0])) {
    g_autofree char *sname = g_strdup_printf("surface · %s", r->label);
    NwSurface *empty = nw_surface_new(0, 0, error);
    if (empty == NULL)
      return FALSE;
    r->surface = nw_layer_new_surface(sname, empty);
  }
  set_live(r, r->live);
  nw_scene_add_layer(r->scene, r->warped);
  nw_scene_add_layer(r->scene, r->field);
  if (r->surface != NULL)
    nw_scene_add_layer(r->scene, r->surface);
  nw_scene_set_compare_pair(r->scene, fixed, r->warped);
  return TRUE;
}

/* The frame source: interop when the method runs on CUDA and the views' GL context can
 * take its frames (the scene knows, from the axial view), else host frames. */
static void make_source(NwRun *r, const NwMethodOps *ops)
{
  const char *why = NULL;
  const gboolean interop = nw_scene_get_interop(r->scene, &why);
  r->live = nw_live_source_new(ops, interop, 0, on_live_notify, on_live_take, r);
  r->path = nw_live_source_path(r->live);
  nw_live_source_set_enabled(r->live, r->live_view);
  if (ops->device == NW_DEVICE_CUDA && r->path == NW_LIVE_PATH_HOST)
    g_debug("run %s: host frames: %s", r->label, why);
}

static void reset_counters(NwRun *r)
{
  r->iteration = 0;
  r->shown = -1;
  memset(&r->ms_all, 0, sizeof r->ms_all);
  memset(&r->ms_shown, 0, sizeof r->ms_shown);
  memset(&r->ms_alone, 0, sizeof r->ms_alone);
  memset(&r->live_stats, 0, sizeof r->live_stats);
  r->live_stats.shown = -1;
  r->have_report = FALSE;
  r->surface_is_result = FALSE;
  r->work_ms = 0.0;
  memset(r->level_iterations, 0, sizeof r->level_iterations);
  r->n_levels = 0;
  nw_timeline_clear(r->timeline);
  r->scrub = -1;
  g_clear_pointer(&r->result, nw_method_result_free);
  g_clear_error(&r->error);
}

gboolean nw_run_start(NwRun *r, const NwMethodOps *ops, const NwParams *params,
                      gboolean paused, GError **error)
{
  g_return_val_if_fail(NW_IS_RUN(r) && ops != NULL && params != NULL, FALSE);
  if (nw_run_is_active(r)) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "run %s: a job is still going (stop it first)",
                r->label);
    return FALSE;
  }
  NwLayer *fixed = NULL;
  NwRunLevelSet *ls = NULL;
  if (ops->level_set_input) {
    if ((ls = nw_run_level_set_new(r->scene, r->label, r->surface_label, r->inputs, &fixed,
                                   error)) == NULL)
      return FALSE;
  } else if (!nw_run_inputs_take(r->scene, r->label, r->inputs, &fixed, error)) {
    return FALSE;
  }
  r->serial++;
  drop_job(r);
  nw_run_level_set_free(r->level_set);
  r->level_set = ls;
  reset_counters(r);
  r->frames_made = 0;
  make_source(r, ops);
  if (!make_layers(r, fixed, error)) {
    g_clear_pointer(&r->live, nw_live_source_free);
    return FALSE;
  }
  /* on different grids the figures before come with the result, from the worker */
  r->before_mse = r->before_ncc = NAN;
  if (ops->needs_moving && nw_volume_same_grid(r->inputs[0], r->inputs[1]))
    nw_image_similarity(r->inputs[0], r->inputs[1], &r->before_mse, &r->before_ncc);
  NwMethodInputs in = {.fixed = r->inputs[0],
                       .moving = r->inputs[1],
                       .fixed_labels = r->inputs[2],
                       .moving_labels = r->inputs[3]};
  const NwJobCallbacks cb = {on_iteration, on_frame, on_done};
  r->ops = ops;
  r->started = TRUE;
  r->job = nw_job_new(ops, &in, params, 0, &cb, r);
  if (r->level_set != NULL)
    nw_run_level_set_attach(r->level_set, r->job, on_input_surface, r);
  else if ((r->regrid = nw_run_regrid_new(ops, r->inputs)) != NULL)
    nw_run_regrid_attach(r->regrid, r->job);
  nw_job_set_live(r->job, nw_live_source_front(r->live));
  nw_live_source_set_job(r->live, r->job);
  nw_job_start(r->job, paused);
  if (paused)
    nw_live_source_want(r->live); /* the coarse grid at once, before the first step */
  r->state = paused ? NW_JOB_PAUSED : NW_JOB_RUNNING;
  g_signal_emit(r, signals[SIG_STATE_CHANGED], 0, (int)r->state);
  return TRUE;
}

static void set_state(NwRun *r, NwJobState s)
{
  if (r->state != s) {
    r->state = s;
    g_signal_emit(r, signals[SIG_STATE_CHANGED], 0, (int)s);
  }
}

void nw_run_pause(NwRun *r)
{
  if (nw_run_is_active(r)) {
    nw_job_pause(r->job);
    set_state(r, NW_JOB_PAUSED);
  }
}

void nw_run_resume(NwRun *r)
{
  if (nw_run_is_active(r)) {
    nw_job_resume(r->job);
    set_state(r, NW_JOB_RUNNING);
  }
}

/* One iteration, then paused (job.h): the state shown is "paused" throughout. */
void nw_run_step(NwRun *r)
{
  if (nw_run_is_active(r)) {
    nw_job_step(r->job);
    set_state(r, NW_JOB_PAUSED);
  }
}

/* The state becomes "cancelled" when the worker has left (the done message). */
void nw_run_stop(NwRun *r)
{
  if (nw_run_is_active(r))
    nw_job_cancel(r->job);
}

gboolean nw_run_set_params(NwRun *r, const NwParams *params, GError **error)
{
  if (!nw_run_is_active(r))
    return TRUE; /* nothing runs: the next start takes them */
  return nw_job_set_params(r->job, params, error);
}

NwJobState nw_run_get_state(NwRun *r)
{
  return r->state;
}

gboolean nw_run_is_active(NwRun *r)
{
  return r->job != NULL && (r->state == NW_JOB_RUNNING || r->state == NW_JOB_PAUSED);
}

int nw_run_get_iteration(NwRun *r)
{
  return r->job != NULL ? MAX(r->iteration, nw_job_get_iteration(r->job)) : r->iteration;
}

/* Host frames: the newest frame moved into the layers (the views draw it in the display
 * frame that took it). Interop: the newest iteration a view drew from the front. */
int nw_run_get_shown_iteration(NwRun *r)
{
  if (r->scrub >= 0)
    return r->scrub;
  int shown = r->shown;
  if (r->live != NULL && r->path == NW_LIVE_PATH_INTEROP) {
    if (r->warped != NULL)
      shown = MAX(shown, nw_layer_get_live_shown(r->warped));
    if (r->field != NULL)
      shown = MAX(shown, nw_layer_get_live_shown(r->field));
  }
  return shown;
}

double nw_run_get_ms_per_iteration(NwRun *r)
{
  return ms_mean(&r->ms_all);
}

void nw_run_get_ms_split(NwRun *r, double *shown_ms, double *alone_ms)
{
  *shown_ms = ms_mean(&r->ms_shown);
  *alone_ms = ms_mean(&r->ms_alone);
}

const NwIterationReport *nw_run_get_last_report(NwRun *r)
{
  return r->have_report ? &r->last : NULL;
}

const char *nw_run_get_frame_path(NwRun *r)
{
  return r->started ? nw_live_path_name(r->path) : NULL;
}

void nw_run_get_live_stats(NwRun *r, NwLiveStats *out)
{
  if (r->live != NULL)
    nw_live_source_stats(r->live, out);
  else
    *out = r->live_stats;
  const int shown = nw_run_get_shown_iteration(r);
  if (r->live == NULL) /* the job has ended: its result is shown */
    out->lag = MAX(nw_run_get_iteration(r) - shown, 0);
  else if (shown > out->shown) /* an interop frame drawn after the source's take */
    out->lag = MAX(out->lag - (shown - out->shown), 0);
  out->shown = shown;
}

guint64 nw_run_get_live_frames(NwRun *r)
{
  return r->job != NULL ? nw_job_get_live_frames(r->job) : r->frames_made;
}

guint64 nw_run_get_host_frame_bytes(NwRun *r)
{
  NwLiveStats st;
  nw_run_get_live_stats(r, &st);
  return st.host_bytes;
}

void nw_run_set_live_view(NwRun *r, gboolean on)
{
  r->live_view = on;
  if (r->live != NULL)
    nw_live_source_set_enabled(r->live, on);
  nw_scene_changed(r->scene); /* on again: a redraw asks for the next frame */
}

gboolean nw_run_get_live_view(NwRun *r)
{
  return r->live_view;
}

const char *nw_run_get_label(NwRun *r)
{
  return r->label;
}

const NwMethodOps *nw_run_get_ops(NwRun *r)
{
  return r->ops;
}

NwLayer *nw_run_get_warped(NwRun *r)
{
  return r->warped;
}

NwLayer *nw_run_get_field(NwRun *r)
{
  return r->field;
}

NwLayer *nw_run_get_surface(NwRun *r)
{
  return r->surface;
}

NwLayer *nw_run_get_input_surface(NwRun *r)
{
  return r->input_surface;
}

void nw_run_set_surface_label(NwRun *r, int label)
{
  r->surface_label = label < 0 ? NW_RUN_LABEL_AUTO : label;
}

int nw_run_get_surface_label(NwRun *r)
{
  return r->surface_label;
}

const NwRunLevelSet *nw_run_get_level_set(NwRun *r)
{
  return r->level_set;
}

double nw_run_get_work_seconds(NwRun *r)
{
  return r->work_ms / 1000.0;
}

int nw_run_get_level_iterations(NwRun *r, int counts[NW_RUN_MAX_LEVELS])
{
  memcpy(counts, r->level_iterations, sizeof r->level_iterations);
  return r->n_levels;
}

const NwVolume *nw_run_get_input(NwRun *r, NwRunInput which)
{
  return r->inputs[which];
}

void nw_run_get_before(NwRun *r, double *mse, double *ncc)
{
  *mse = r->before_mse;
  *ncc = r->before_ncc;
}

const NwMethodResult *nw_run_get_result(NwRun *r)
{
  return r->result;
}

const GError *nw_run_get_error(NwRun *r)
{
  return r->error;
}

/* ---- the timeline ---- */

const NwTimeline *nw_run_get_timeline(NwRun *r)
{
  return r->timeline;
}

int nw_run_get_scrub(NwRun *r)
{
  return r->scrub;
}

/* Copies of a kept frame into the run's layers (the timeline keeps its own). */
static void show_frame(NwRun *r, const NwTimelineFrame *f)
{
  nw_layer_take_volume(r->warped, nw_volume_copy(f->image));
  if (f->field != NULL && r->field != NULL)
    nw_layer_take_volume(r->field, nw_volume_copy(f->field));
}

/* Back to what the job shows: its live frames (interop layers read the source again; host
 * layers get the next frame taken), or after its end the result, else the newest frame. */
static void show_live(NwRun *r)
{
  r->scrub = -1;
  if (r->live != NULL) {
    set_live(r, r->live);
    nw_live_source_want(r->live);
  } else if (r->result != NULL) {
    show_result(r);
  } else if (nw_timeline_n_frames(r->timeline) > 0) {
    show_frame(r, nw_timeline_get(r->timeline, nw_timeline_n_frames(r->timeline) - 1));
  }
  nw_scene_changed(r->scene);
}

gboolean nw_run_show_iteration(NwRun *r, int k, GError **error)
{
  g_return_val_if_fail(NW_IS_RUN(r), FALSE);
  if (k < 0 || r->warped == NULL) {
    if (r->warped != NULL)
      show_live(r);
    return TRUE;
  }
  const NwTimelineFrame *f = nw_timeline_find(r->timeline, k);
  if (f == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "run %s: no kept frame at or before iteration %d (%u kept%s)", r->label, k,
                nw_timeline_n_frames(r->timeline),
                r->path == NW_LIVE_PATH_INTEROP ? "; interop frames stay on the GPU" : "");
    return FALSE;
  }
  /* interop layers would draw the job's newest frame from the GPU: they show host data now;
   * host layers keep their source, so that the timeline keeps growing while the user looks
   * back (on_live_take then leaves the layers alone) */
  if (r->path == NW_LIVE_PATH_INTEROP)
    set_live(r, NULL);
  r->scrub = f->iteration;
  show_frame(r, f);
  nw_scene_changed(r->scene);
  return TRUE;
}
