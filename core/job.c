/* job.c — the job runner: one worker thread per job drives a method (CPU or CUDA, through
 * NwMethodOps) one iteration at a time. See job.h.
 *
 * Threads: the control functions run on any thread and only touch the mailbox below, under
 * job->lock. The worker thread is the only one that calls the method's ops (create included,
 * so a CUDA state lives and dies on one thread) and the callbacks. It reads the mailbox at
 * every iteration boundary and sleeps on job->cond while paused; control functions broadcast
 * on the same condition, and the worker broadcasts when the state or the iteration changes
 * (nw_job_wait sleeps on it too). Nothing polls.
 *
 * Fields are either fixed after nw_job_new (ops, inputs, max_iterations, callbacks), owned by
 * the worker while it runs (work_params, and the method state on its stack), or shared and
 * then only read or written under lock (everything marked "mailbox"). */
#include "job.h"

#include "nw_error.h"

struct NwJob {
  /* Fixed at creation. */
  const NwMethodOps *ops;
  NwMethodInputs inputs; /* the struct is copied; the volumes stay borrowed */
  NwJobHooks hooks;       /* set before start */
  gpointer hooks_data;
  int max_iterations;
  NwJobCallbacks callbacks;
  gpointer data;
  gboolean live;      /* live display: frames when the display wants one (set before start) */
  void *device_front; /* live frames go here when the method can (set before start) */

  /* The worker's own copy: what the method currently runs with. Worker only (after start). */
  NwParams *work_params;

  GThread *thread; /* set by nw_job_start, joined by nw_job_free */

  GMutex lock;
  GCond cond;
  /* Mailbox and status: under lock. */
  NwJobState state;
  gboolean started;
  gboolean pause_requested;
  int steps_requested; /* iterations to run while paused */
  gboolean cancel_requested;
  gboolean frame_requested;
  gboolean live_wanted;   /* the display wants the next live frame */
  int live_published;     /* iteration of the last live frame (-1: none yet) */
  guint64 live_frames;    /* live frames published */
  NwParams *accepted;     /* latest values accepted by nw_job_set_params */
  NwParams *pending;      /* not yet handed to the method, or NULL */
  int iteration;          /* completed iterations */
  gboolean ended;         /* the worker left its loop and on_done has returned */
  GError *error;          /* FAILED: the method's error */
  NwMethodResult *result; /* FINISHED or CANCELLED, until taken */
  GError *result_error;   /* why result is NULL when the method could not produce one */
  gboolean result_taken;
};

const char *nw_job_state_name(NwJobState s)
{
  switch (s) {
  case NW_JOB_IDLE:
    return "idle";
  case NW_JOB_RUNNING:
    return "running";
  case NW_JOB_PAUSED:
    return "paused";
  case NW_JOB_FINISHED:
    return "finished";
  case NW_JOB_CANCELLED:
    return "cancelled";
  case NW_JOB_FAILED:
    return "failed";
  }
  return "unknown";
}

NwJob *nw_job_new(const NwMethodOps *ops, const NwMethodInputs *inputs, const NwParams *params,
                  int max_iterations, const NwJobCallbacks *callbacks, gpointer data)
{
  g_return_val_if_fail(ops != NULL && inputs != NULL && params != NULL, NULL);
  g_return_val_if_fail(ops->create != NULL && ops->step != NULL && ops->destroy != NULL, NULL);
  NwJob *job = g_new0(NwJob, 1);
  job->ops = ops;
  job->inputs = *inputs;
  job->max_iterations = max_iterations;
  if (callbacks != NULL)
    job->callbacks = *callbacks;
  job->data = data;
  job->work_params = nw_params_copy(params);
  job->accepted = nw_params_copy(params);
  job->state = NW_JOB_IDLE;
  job->live_published = -1;
  g_mutex_init(&job->lock);
  g_cond_init(&job->cond);
  return job;
}

void nw_job_set_hooks(NwJob *job, const NwJobHooks *hooks, gpointer data)
{
  g_return_if_fail(job != NULL && hooks != NULL && job->thread == NULL);
  job->hooks = *hooks;
  job->hooks_data = data;
}

/* ---- worker thread -------------------------------------------------------------------- */

/* What the worker takes out of the mailbox at one boundary. */
typedef struct {
  gboolean cancel;
  gboolean frame_only; /* paused: publish a requested frame, then wait again */
  gboolean live_frame; /* ... that frame is a live one (device when the method can) */
  NwParams *params;    /* owned, or NULL */
} Boundary;

/* Under lock: does the display want a frame of a state it has not been sent yet? */
static gboolean take_live_want(NwJob *job)
{
  if (!job->live || !job->live_wanted || job->live_published == job->iteration)
    return FALSE;
  job->live_wanted = FALSE;
  return TRUE;
}

/* At an iteration boundary, under lock: sleep while paused with nothing to do, then take
 * the requests. Publishes RUNNING/PAUSED so observers see where the worker really is. */
static Boundary wait_at_boundary(NwJob *job)
{
  Boundary b = {0};
  while (!job->cancel_requested && job->pause_requested && job->steps_requested == 0) {
    if (job->state != NW_JOB_PAUSED) {
      job->state = NW_JOB_PAUSED;
      g_cond_broadcast(&job->cond);
    }
    if (job->frame_requested) {
      job->frame_requested = FALSE;
      b.frame_only = TRUE;
      return b;
    }
    if (take_live_want(job)) {
      b.frame_only = b.live_frame = TRUE;
      return b;
    }
    g_cond_wait(&job->cond, &job->lock);
  }
  b.cancel = job->cancel_requested;
  if (b.cancel)
    return b;
  if (job->pause_requested)
    job->steps_requested--; /* this iteration is one single step */
  job->state = NW_JOB_RUNNING;
  b.params = g_steal_pointer(&job->pending);
  return b;
}

/* Publish a frame: a live one into the device front when the method can, else (and for
 * explicit requests) on the host. The callee of on_frame takes it. */
static gboolean deliver_frame(NwJob *job, void *state, int iteration, gboolean live,
                              GError **error)
{
  const gboolean device =
      live && job->device_front != NULL && job->ops->publish_device_frame != NULL;
  if (!device && job->ops->publish_frame == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED, "method '%s' cannot publish frames",
                job->ops->name);
    return FALSE;
  }
  NwFrame *frame = g_new0(NwFrame, 1);
  frame->on_device = device;
  if (device ? !job->ops->publish_device_frame(state, job->device_front, error)
             : !job->ops->publish_frame(state, frame, error)) {
    nw_frame_clear(frame);
    g_free(frame);
    g_prefix_error(error, "%s: frame after iteration %d: ", job->ops->name, iteration);
    return FALSE;
  }
  frame->iteration = iteration;
  if (live) {
    g_mutex_lock(&job->lock);
    job->live_published = iteration;
    job->live_frames++;
    g_mutex_unlock(&job->lock);
  }
  if (job->callbacks.on_frame != NULL) {
    job->callbacks.on_frame(job, frame, job->data);
  } else {
    nw_frame_clear(frame);
    g_free(frame);
  }
  return TRUE;
}

/* One iteration: apply new parameters, step, count, report, frame. Returns FALSE with error
 * on failure; *finished when the method or max_iterations ends the job. */
static gboolean run_iteration(NwJob *job, void *state, NwParams *params, gboolean *finished,
                              GError **error)
{
  const NwMethodOps *ops = job->ops;
  if (params != NULL) {
    nw_params_free(job->work_params);
    job->work_params = params;
    if (ops->set_params != NULL && !ops->set_params(state, params, error)) {
      g_prefix_error(error, "%s: new parameters: ", ops->name);
      return FALSE;
    }
  }
  g_mutex_lock(&job->lock);
  int done = job->iteration;
  g_mutex_unlock(&job->lock);

  /* Defaults the method may overwrite: 1-based iteration, one level, progress of the limit. */
  NwIterationReport report = {.iteration = done + 1, .level = 0, .n_levels = 1};
  if (job->max_iterations > 0)
    report.progress = (double)(done + 1) / job->max_iterations;
  gint64 t0 = g_get_monotonic_time();
  if (!ops->step(state, &report, error))
    return FALSE;

  g_mutex_lock(&job->lock);
  int iteration = ++job->iteration;
  gboolean want_frame = job->frame_requested;
  job->frame_requested = FALSE;
  gboolean want_live = !want_frame && take_live_want(job);
  g_cond_broadcast(&job->cond);
  g_mutex_unlock(&job->lock);

  *finished = report.finished || (job->max_iterations > 0 && iteration >= job->max_iterations);
  /* an explicit request wants host volumes; a live frame takes what is cheapest (a wanted
   * live frame waits one more iteration behind a request) */
  if ((want_frame || want_live) && !deliver_frame(job, state, iteration, want_live, error))
    return FALSE;
  /* the iteration's time includes its frame: what showing it costs the job */
  double ms = (double)(g_get_monotonic_time() - t0) / 1000.0;
  if (job->callbacks.on_iteration != NULL)
    job->callbacks.on_iteration(job, &report, ms, job->data);
  return TRUE;
}

/* The loop between create and result; returns the final state. */
static NwJobState run_loop(NwJob *job, void *state, GError **error)
{
  for (;;) {
    g_mutex_lock(&job->lock);
    Boundary b = wait_at_boundary(job);
    g_mutex_unlock(&job->lock);
    if (b.cancel)
      return NW_JOB_CANCELLED;
    if (b.frame_only) {
      if (!deliver_frame(job, state, nw_job_get_iteration(job), b.live_frame, error))
        return NW_JOB_FAILED;
      continue;
    }
    gboolean finished = FALSE;
    if (!run_iteration(job, state, b.params, &finished, error))
      return NW_JOB_FAILED;
    if (finished)
      return NW_JOB_FINISHED;
  }
}

/* Collect the result before destroy (FINISHED or CANCELLED). A FINISHED job whose method
 * cannot produce its result has failed; a cancelled one keeps the reason for take_result. */
static NwJobState collect_result(NwJob *job, void *state, NwJobState final, GError **error)
{
  if (final == NW_JOB_FAILED || job->ops->result == NULL)
    return final;
  GError *why = NULL;
  NwMethodResult *r = job->ops->result(state, &why);
  if (r != NULL && job->hooks.finish != NULL && !job->hooks.finish(r, job->hooks_data, &why))
    g_clear_pointer(&r, nw_method_result_free);
  g_mutex_lock(&job->lock);
  job->result = r;
  job->result_error = why;
  g_mutex_unlock(&job->lock);
  if (r != NULL || final != NW_JOB_FINISHED)
    return final;
  g_propagate_prefixed_error(error, g_error_copy(why), "%s: result: ", job->ops->name);
  return NW_JOB_FAILED;
}

static gpointer worker(gpointer data)
{
  NwJob *job = data;
  GError *error = NULL;
  NwJobState final;
  void *state = NULL;
  if (job->ops->device == NW_DEVICE_CUDA) /* every CUDA call of the job runs on this thread */
    nw_method_cuda_bind_thread();
  if (job->hooks.prepare == NULL || job->hooks.prepare(&job->inputs, job->hooks_data, &error))
    state = job->ops->create(&job->inputs, job->work_params, &error);
  if (state == NULL) {
    final = NW_JOB_FAILED;
  } else {
    final = run_loop(job, state, &error);
    final = collect_result(job, state, final, &error);
    job->ops->destroy(state);
  }
  if (final == NW_JOB_FAILED && error == NULL) /* nw_job_wait promises a message */
    g_set_error(&error, NW_ERROR, NW_ERROR_INVALID, "%s: failed without saying why",
                job->ops->name);

  g_mutex_lock(&job->lock);
  job->state = final;
  job->error = error;
  g_cond_broadcast(&job->cond);
  g_mutex_unlock(&job->lock);

  /* error is only read from here on, and freed by nw_job_free after the join. */
  if (job->callbacks.on_done != NULL)
    job->callbacks.on_done(job, final, error, job->data);

  g_mutex_lock(&job->lock);
  job->ended = TRUE;
  g_cond_broadcast(&job->cond);
  g_mutex_unlock(&job->lock);
  return NULL;
}

/* ---- control, any thread -------------------------------------------------------------- */

void nw_job_start(NwJob *job, gboolean start_paused)
{
  g_return_if_fail(job != NULL);
  g_mutex_lock(&job->lock);
  gboolean again = job->started;
  if (!again) {
    job->started = TRUE;
    job->state = NW_JOB_RUNNING;
    job->pause_requested = start_paused;
  }
  g_mutex_unlock(&job->lock);
  g_return_if_fail(!again);
  job->thread = g_thread_new("nw-job", worker, job);
}

void nw_job_pause(NwJob *job)
{
  g_return_if_fail(job != NULL);
  g_mutex_lock(&job->lock);
  job->pause_requested = TRUE;
  g_cond_broadcast(&job->cond);
  g_mutex_unlock(&job->lock);
}

void nw_job_resume(NwJob *job)
{
  g_return_if_fail(job != NULL);
  g_mutex_lock(&job->lock);
  job->pause_requested = FALSE;
  job->steps_requested = 0;
  g_cond_broadcast(&job->cond);
  g_mutex_unlock(&job->lock);
}

void nw_job_step(NwJob *job)
{
  g_return_if_fail(job != NULL);
  g_mutex_lock(&job->lock);
  /* While running this pauses after one more iteration; while paused each call is one. */
  job->pause_requested = TRUE;
  job->steps_requested++;
  g_cond_broadcast(&job->cond);
  g_mutex_unlock(&job->lock);
}

void nw_job_cancel(NwJob *job)
{
  g_return_if_fail(job != NULL);
  g_mutex_lock(&job->lock);
  job->cancel_requested = TRUE;
  g_cond_broadcast(&job->cond);
  g_mutex_unlock(&job->lock);
}

gboolean nw_job_set_params(NwJob *job, const NwParams *params, GError **error)
{
  g_return_val_if_fail(job != NULL && params != NULL, FALSE);
  if (params->specs != job->work_params->specs || params->n != job->work_params->n) {
    /* work_params->specs and n never change, so reading them here is race-free. */
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "%s: the new parameters belong to another method", job->ops->name);
    return FALSE;
  }
  g_mutex_lock(&job->lock);
  const char *changed = nw_params_first_non_live_change(job->accepted, params);
  if (changed != NULL) {
    int i = nw_params_find(params, changed);
    g_autofree char *was = nw_params_format(job->accepted, i);
    g_autofree char *now = nw_params_format(params, i);
    g_mutex_unlock(&job->lock);
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "%s: %s cannot change while the job runs (%s -> %s); start a new job",
                job->ops->name, changed, was, now);
    return FALSE;
  }
  nw_params_free(job->accepted);
  job->accepted = nw_params_copy(params);
  nw_params_free(job->pending); /* a newer set replaces one not yet applied */
  job->pending = nw_params_copy(params);
  g_cond_broadcast(&job->cond);
  g_mutex_unlock(&job->lock);
  return TRUE;
}

void nw_job_request_frame(NwJob *job)
{
  g_return_if_fail(job != NULL);
  g_mutex_lock(&job->lock);
  job->frame_requested = TRUE;
  g_cond_broadcast(&job->cond); /* a paused worker publishes at once */
  g_mutex_unlock(&job->lock);
}

void nw_job_want_live_frame(NwJob *job)
{
  g_return_if_fail(job != NULL);
  g_mutex_lock(&job->lock);
  job->live_wanted = TRUE;
  g_cond_broadcast(&job->cond); /* a paused worker publishes at once */
  g_mutex_unlock(&job->lock);
}

guint64 nw_job_get_live_frames(NwJob *job)
{
  g_return_val_if_fail(job != NULL, 0);
  g_mutex_lock(&job->lock);
  guint64 n = job->live_frames;
  g_mutex_unlock(&job->lock);
  return n;
}

void nw_job_set_live(NwJob *job, void *device_front)
{
  g_return_if_fail(job != NULL);
  g_mutex_lock(&job->lock);
  gboolean started = job->started;
  if (!started) {
    job->live = TRUE;
    job->device_front = device_front;
  }
  g_mutex_unlock(&job->lock);
  g_return_if_fail(!started);
}

gboolean nw_job_wait(NwJob *job, GError **error)
{
  g_return_val_if_fail(job != NULL, FALSE);
  g_mutex_lock(&job->lock);
  if (!job->started) {
    g_mutex_unlock(&job->lock);
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "%s: the job was never started", job->ops->name);
    return FALSE;
  }
  while (!job->ended)
    g_cond_wait(&job->cond, &job->lock);
  NwJobState s = job->state;
  int iteration = job->iteration;
  if (s == NW_JOB_FAILED)
    g_propagate_error(error, g_error_copy(job->error));
  g_mutex_unlock(&job->lock);
  if (s == NW_JOB_CANCELLED)
    g_set_error(error, NW_ERROR, NW_ERROR_CANCELLED, "%s: cancelled after %d iterations",
                job->ops->name, iteration);
  return s == NW_JOB_FINISHED;
}

NwJobState nw_job_get_state(NwJob *job)
{
  g_return_val_if_fail(job != NULL, NW_JOB_IDLE);
  g_mutex_lock(&job->lock);
  NwJobState s = job->state;
  g_mutex_unlock(&job->lock);
  return s;
}

int nw_job_get_iteration(NwJob *job)
{
  g_return_val_if_fail(job != NULL, 0);
  g_mutex_lock(&job->lock);
  int i = job->iteration;
  g_mutex_unlock(&job->lock);
  return i;
}

NwMethodResult *nw_job_take_result(NwJob *job, GError **error)
{
  g_return_val_if_fail(job != NULL, NULL);
  const char *name = job->ops->name;
  g_mutex_lock(&job->lock);
  NwMethodResult *r = NULL;
  if (!job->ended) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "%s: no result yet: the job is %s", name,
                nw_job_state_name(job->state));
  } else if (job->state == NW_JOB_FAILED) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "%s: no result: the job failed (%s)", name,
                job->error->message);
  } else if (job->result_taken) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "%s: the result was already taken", name);
  } else if (job->result == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED, "%s: no result: %s", name,
                job->result_error != NULL ? job->result_error->message
                                          : "the method has no result operation");
  } else {
    r = g_steal_pointer(&job->result);
    job->result_taken = TRUE;
  }
  g_mutex_unlock(&job->lock);
  return r;
}

const NwMethodOps *nw_job_get_ops(NwJob *job)
{
  g_return_val_if_fail(job != NULL, NULL);
  return job->ops;
}

void nw_job_free(NwJob *job)
{
  if (job == NULL)
    return;
  g_return_if_fail(job->thread == NULL || g_thread_self() != job->thread);
  if (job->thread != NULL) {
    nw_job_cancel(job);
    g_thread_join(job->thread); /* also the happens-before for everything freed below */
  }
  nw_params_free(job->work_params);
  nw_params_free(job->accepted);
  nw_params_free(job->pending);
  g_clear_error(&job->error);
  g_clear_error(&job->result_error);
  nw_method_result_free(job->result);
  g_mutex_clear(&job->lock);
  g_cond_clear(&job->cond);
  g_free(job);
}
