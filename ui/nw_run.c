/* nw_run.c — one job started from the window, shown live as layers of the scene (nw_run.h).
 * Main thread, except the job callbacks (on_* below), which run on the job's WORKER thread
 * and only copy data into messages for the main loop. CPU host frames, or CUDA frames by
 * interop (cuda/nw_live.h) when the method runs on CUDA and the views' GL context can take
 * them. */
#include "nw_run.h"

#include <math.h>
#include <string.h>

#include "io_mesh.h"
#include "marching_cubes.h"
#include "nw_cuda_gl.h"
#include "nw_error.h"
#include "nw_live.h"
#include "result_io.h"

#define MS_WINDOW 10        /* ms/iteration: mean of the last MS_WINDOW reports */
#define SURFACE_EVERY 5     /* host path: a CPU iso-surface at most every 5th frame */

struct _NwRun {
  GObject parent;
  NwScene *scene;
  char *label;
  const NwMethodOps *ops;
  NwJob *job;
  guint serial;         /* bumped per start: messages of an older job are dropped */
  NwVolume *inputs[3];  /* fixed, moving, fixed labels (copies: the job borrows them) */
  NwLiveFront *front;   /* device path only */
  gboolean interop_ok;  /* set by the caller (nw_run_set_interop) */
  const char *frame_path;
  float iso;            /* iso level of the surface: nw_layer_surface_iso of fixed */
  NwLayer *warped, *field, *surface; /* in the scene while shown; owned refs */
  NwJobState state;
  int iteration, shown;
  double ms[MS_WINDOW];
  int n_ms;
  NwIterationReport last;
  gboolean have_report;
  guint64 host_bytes;
  NwMethodResult *result; /* of the ended job, for saving */
  GError *error;          /* of a FAILED job */
  /* host frame slot, shared with the worker */
  GMutex lock;
  NwFrame *pending;
  NwSurface *pending_surface;
  gboolean idle_queued;
  int frames_seen;      /* worker side: frames since start (surface cadence) */
};

G_DEFINE_TYPE(NwRun, nw_run, G_TYPE_OBJECT)

enum { SIG_ITERATION, SIG_STATE_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void frame_free(NwFrame *f)
{
  if (f != NULL) {
    nw_frame_clear(f);
    g_free(f);
  }
}

static void remove_layer(NwRun *r, NwLayer **l)
{
  if (*l == NULL)
    return;
  (*l)->live = NULL;
  nw_scene_remove_layer(r->scene, *l);
  g_clear_pointer(l, nw_layer_unref);
}

/* Point the run's layers (those that exist) at front, or back to their host data (NULL). */
static void set_live(NwRun *r, NwLiveFront *front)
{
  NwLayer *layers[3] = {r->warped, r->field, r->surface};
  for (int i = 0; i < 3; i++)
    if (layers[i] != NULL) {
      layers[i]->live = front;
      layers[i]->live_iso = r->iso;
    }
}

/* Ends and frees the job (main thread; waits for the worker), then the front: the layers
 * stop reading it first. */
static void drop_job(NwRun *r)
{
  set_live(r, NULL);
  g_clear_pointer(&r->job, nw_job_free);
  g_clear_pointer(&r->front, nw_live_front_free);
  g_mutex_lock(&r->lock);
  g_clear_pointer(&r->pending, frame_free);
  g_clear_pointer(&r->pending_surface, nw_surface_free);
  g_mutex_unlock(&r->lock);
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
  }
  g_clear_object(&r->scene);
  G_OBJECT_CLASS(nw_run_parent_class)->dispose(obj);
}

static void nw_run_finalize(GObject *obj)
{
  NwRun *r = NW_RUN(obj);
  for (int i = 0; i < 3; i++)
    g_clear_pointer(&r->inputs[i], nw_volume_free);
  g_clear_pointer(&r->result, nw_method_result_free);
  g_clear_error(&r->error);
  g_free(r->label);
  g_mutex_clear(&r->lock);
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
  g_mutex_init(&r->lock);
  r->state = NW_JOB_IDLE;
  r->shown = -1;
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
  g_main_context_invoke_full(NULL, G_PRIORITY_DEFAULT, fn, m, msg_free);
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
  r->ms[r->n_ms % MS_WINDOW] = m->ms;
  r->n_ms++;
  g_signal_emit(r, signals[SIG_ITERATION], 0, &r->last, m->ms);
  return G_SOURCE_REMOVE;
}

static void on_iteration(NwJob *job, const NwIterationReport *report, double ms, gpointer data)
{
  (void)job;
  RunMsg *m = msg_new(data);
  m->report = *report; /* figure names are static strings: a copy by value is whole */
  m->ms = ms;
  post(m, iteration_main);
}

/* Replace a layer's volume with v (taken); the views re-upload on the generation bump. */
static void layer_take_volume(NwLayer *l, NwVolume *v)
{
  nw_volume_free(l->volume);
  l->volume = v;
  l->generation++;
}

static void layer_take_surface(NwRun *r, NwSurface *s)
{
  if (r->surface == NULL) {
    g_autofree char *name = g_strdup_printf("surface · %s", r->label);
    r->surface = nw_layer_new_surface(name, s);
    r->surface->live = r->front;
    r->surface->live_iso = r->iso;
    nw_scene_add_layer(r->scene, r->surface);
    return;
  }
  nw_surface_free(r->surface->surface);
  r->surface->surface = s;
  if (s->normals == NULL)
    nw_surface_compute_normals(s);
  r->surface->generation++;
}

static gboolean frame_main(gpointer data)
{
  RunMsg *m = data;
  NwRun *r = m->run;
  g_mutex_lock(&r->lock);
  NwFrame *f = g_steal_pointer(&r->pending);
  NwSurface *s = g_steal_pointer(&r->pending_surface);
  r->idle_queued = FALSE;
  g_mutex_unlock(&r->lock);
  if (m->serial != r->serial || r->warped == NULL) {
    frame_free(f);
    g_clear_pointer(&s, nw_surface_free);
    return G_SOURCE_REMOVE;
  }
  if (f != NULL && f->image != NULL) {
    r->host_bytes += nw_volume_n_floats(f->image) * sizeof(float);
    layer_take_volume(r->warped, g_steal_pointer(&f->image));
    if (f->field != NULL) {
      r->host_bytes += nw_volume_n_floats(f->field) * sizeof(float);
      layer_take_volume(r->field, g_steal_pointer(&f->field));
    }
  }
  if (s != NULL)
    layer_take_surface(r, s);
  if (f != NULL && !f->on_device) /* interop frames count when a view draws them */
    r->shown = MAX(r->shown, f->iteration);
  frame_free(f);
  nw_scene_changed(r->scene);
  return G_SOURCE_REMOVE;
}

/* Worker: keeps only the newest host frame and schedules one idle to move it in. */
static void on_frame(NwJob *job, NwFrame *frame, gpointer data)
{
  (void)job;
  NwRun *r = data;
  NwSurface *s = NULL;
  if (!frame->on_device && frame->image != NULL && r->frames_seen++ % SURFACE_EVERY == 0)
    s = nw_marching_cubes(frame->image, r->iso, NULL); /* failures: keep the old surface */
  g_mutex_lock(&r->lock);
  g_clear_pointer(&r->pending, frame_free);
  r->pending = frame;
  if (s != NULL) {
    g_clear_pointer(&r->pending_surface, nw_surface_free);
    r->pending_surface = s;
  }
  gboolean queue = !r->idle_queued;
  r->idle_queued = TRUE;
  g_mutex_unlock(&r->lock);
  if (queue)
    post(msg_new(r), frame_main);
}

/* The full-resolution results replace the coarse live data (main thread). */
static void show_result(NwRun *r)
{
  const NwVolume *w = nw_method_result_get(r->result, "warped");
  const NwVolume *u = nw_method_result_get(r->result, "forward");
  if (w != NULL && r->warped != NULL)
    layer_take_volume(r->warped, nw_volume_copy(w));
  if (u != NULL && r->field != NULL)
    layer_take_volume(r->field, nw_volume_copy(u));
  if (w != NULL && r->warped != NULL) {
    NwSurface *s = nw_marching_cubes(w, r->iso, NULL);
    if (s != NULL)
      layer_take_surface(r, s);
  }
}

static gboolean done_main(gpointer data)
{
  RunMsg *m = data;
  NwRun *r = m->run;
  if (m->serial != r->serial)
    return G_SOURCE_REMOVE;
  nw_job_wait(r->job, NULL); /* the worker has left its loop: this only joins it */
  r->iteration = MAX(r->iteration, nw_job_get_iteration(r->job));
  g_clear_pointer(&r->result, nw_method_result_free);
  if (m->state == NW_JOB_FINISHED || m->state == NW_JOB_CANCELLED)
    r->result = nw_job_take_result(r->job, NULL);
  frame_main(data); /* a last host frame still waiting */
  drop_job(r);      /* clears layer->live, then frees the job, then the front */
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

/* ---- control (main thread) ---- */

/* The inputs from the scene's compared pair, copied (the job borrows them while the layers
 * may change), and the first label layer on the fixed grid. */
static gboolean take_inputs(NwRun *r, NwLayer **fixed_out, GError **error)
{
  NwLayer *a = nw_scene_get_compare_a(r->scene), *b = nw_scene_get_compare_b(r->scene);
  if (a == NULL || b == NULL || a->volume == NULL || b->volume == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "run %s: no pair of images to register (open a fixed and a moving image, or "
                "the demo)", r->label);
    return FALSE;
  }
  if (!nw_volume_check_same_grid(a->volume, a->name, b->volume, b->name, error))
    return FALSE;
  for (int i = 0; i < 3; i++)
    g_clear_pointer(&r->inputs[i], nw_volume_free);
  r->inputs[0] = nw_volume_copy(a->volume);
  r->inputs[1] = nw_volume_copy(b->volume);
  for (guint i = 0; i < nw_scene_n_layers(r->scene); i++) {
    NwLayer *l = nw_scene_get_layer(r->scene, i);
    if (l->kind == NW_LAYER_LABELS && l->volume != NULL && nw_volume_same_grid(a->volume, l->volume)) {
      r->inputs[2] = nw_volume_copy(l->volume);
      break;
    }
  }
  *fixed_out = a;
  return TRUE;
}

/* "warped · L" (moving until the first frame, styled like fixed so that comparisons are
 * like with like) and "deformation · L" (zero field on the fixed grid, drawn as a grid). */
static gboolean make_layers(NwRun *r, NwLayer *fixed, GError **error)
{
  remove_layer(r, &r->warped);
  remove_layer(r, &r->field);
  remove_layer(r, &r->surface);
  NwVolume *u = nw_volume_new_like(r->inputs[0], 3, error);
  if (u == NULL)
    return FALSE;
  g_autofree char *wname = g_strdup_printf("warped · %s", r->label);
  g_autofree char *fname = g_strdup_printf("deformation · %s", r->label);
  r->warped = nw_layer_new_volume(NW_LAYER_IMAGE, wname, nw_volume_copy(r->inputs[1]));
  r->warped->style = fixed->style;
  r->warped->robust_lo = fixed->robust_lo;
  r->warped->robust_hi = fixed->robust_hi;
  r->field = nw_layer_new_volume(NW_LAYER_FIELD, fname, u);
  r->field->field_show = NW_FIELD_SHOW_GRID;
  r->iso = nw_layer_surface_iso(fixed);
  set_live(r, r->front);
  nw_scene_add_layer(r->scene, r->warped);
  nw_scene_add_layer(r->scene, r->field);
  nw_scene_set_compare_pair(r->scene, fixed, r->warped);
  return TRUE;
}

/* Device path when the method runs on CUDA and the views can take interop frames. */
static void choose_path(NwRun *r, const NwMethodOps *ops)
{
  r->frame_path = "host frames";
  if (ops->device != NW_DEVICE_CUDA || !r->interop_ok)
    return;
  g_autoptr(GError) err = NULL;
  r->front = nw_live_front_new(&err);
  if (r->front != NULL)
    r->frame_path = "CUDA–GL interop";
  else
    g_debug("run %s: host frames: %s", r->label, err->message);
}

static void reset_counters(NwRun *r)
{
  r->iteration = 0;
  r->shown = -1;
  r->n_ms = 0;
  r->have_report = FALSE;
  r->host_bytes = 0;
  r->frames_seen = 0;
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
  if (!take_inputs(r, &fixed, error))
    return FALSE;
  r->serial++;
  drop_job(r);
  reset_counters(r);
  choose_path(r, ops);
  if (!make_layers(r, fixed, error)) {
    g_clear_pointer(&r->front, nw_live_front_free);
    return FALSE;
  }
  NwMethodInputs in = {.fixed = r->inputs[0], .moving = r->inputs[1], .fixed_labels = r->inputs[2]};
  const NwJobCallbacks cb = {on_iteration, on_frame, on_done};
  r->ops = ops;
  r->job = nw_job_new(ops, &in, params, 0, &cb, r);
  nw_job_set_live(r->job, r->front);
  nw_job_start(r->job, paused);
  if (paused)
    nw_job_request_frame(r->job); /* the coarse grid at once, before the first step */
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

/* Host frames: the newest frame moved into the layers (the views redraw on the next frame
 * clock tick). Interop: the newest iteration a view drew from the front. */
int nw_run_get_shown_iteration(NwRun *r)
{
  int shown = r->shown;
  if (r->front != NULL) {
    if (r->warped != NULL)
      shown = MAX(shown, r->warped->live_shown);
    if (r->field != NULL)
      shown = MAX(shown, r->field->live_shown);
  }
  return shown;
}

double nw_run_get_ms_per_iteration(NwRun *r)
{
  const int n = MIN(r->n_ms, MS_WINDOW);
  double sum = 0.0;
  for (int i = 0; i < n; i++)
    sum += r->ms[i];
  return n > 0 ? sum / n : 0.0;
}

const NwIterationReport *nw_run_get_last_report(NwRun *r)
{
  return r->have_report ? &r->last : NULL;
}

const char *nw_run_get_frame_path(NwRun *r)
{
  return r->frame_path;
}

guint64 nw_run_get_host_frame_bytes(NwRun *r)
{
  return r->host_bytes;
}

const char *nw_run_get_label(NwRun *r)
{
  return r->label;
}

const NwMethodOps *nw_run_get_ops(NwRun *r)
{
  return r->ops;
}

void nw_run_set_interop(NwRun *r, gboolean ok)
{
  r->interop_ok = ok;
}

const GError *nw_run_get_error(NwRun *r)
{
  return r->error;
}

gboolean nw_run_save_results(NwRun *r, const char *prefix, GPtrArray *written, GError **error)
{
  if (r->result == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "save results %s: run %s has no results (it has not ended, or it failed)",
                prefix, r->label);
    return FALSE;
  }
  /* One output set for the run (atomic_file.h): the volumes and the surface are named
   * together or not at all. Replacing existing files was agreed by the caller (the run
   * panel asks first). */
  g_autoptr(NwOutputs) out = nw_outputs_new(TRUE);
  static const char *const required[] = {"warped", NULL};
  const char *method = r->ops != NULL ? r->ops->name : "method";
  if (!nw_result_write(out, r->result, method, prefix, required, NW_FIELD_ITK, error))
    return FALSE;
  /* the surface layer already holds the result's iso-surface (show_result); made again only
   * when that could not be made then */
  g_autoptr(NwSurface) made = NULL;
  const NwSurface *s = r->surface != NULL ? r->surface->surface : NULL;
  if (s == NULL &&
      (s = made = nw_marching_cubes(nw_method_result_get(r->result, "warped"), r->iso, error)) ==
          NULL)
    return FALSE;
  g_autofree char *path = g_strdup_printf("%s_surface.gii", prefix);
  if (!nw_mesh_write_to(out, path, s, NW_MESH_AUTO, error) || !nw_outputs_commit(out, error))
    return FALSE;
  for (const char *const *p = nw_outputs_paths(out); written != NULL && *p != NULL; p++)
    g_ptr_array_add(written, g_strdup(*p));
  return TRUE;
}
