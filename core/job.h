/* job.h — runs one method on its own worker thread, with progress reports, pause, single
 * step, cancel and parameter changes applied between iterations.
 *
 * Threads: nw_job_* control functions may be called from any thread (the GTK main thread,
 * a test thread). Requests go into a small locked mailbox that the worker reads at every
 * iteration boundary. The callbacks run on the WORKER thread; a GUI forwards them to its
 * main loop (g_main_context_invoke) — the job knows nothing of GTK.
 *
 * Life cycle: new -> start -> (pause | resume | step | set_params | request_frame)* ->
 * [finished | cancel] -> wait -> free. nw_job_free cancels and waits if needed. */
#ifndef NW_JOB_H
#define NW_JOB_H

#include <glib.h>

#include "method.h"

G_BEGIN_DECLS

typedef struct NwJob NwJob;

typedef enum {
  NW_JOB_IDLE,      /* created, not started */
  NW_JOB_RUNNING,
  NW_JOB_PAUSED,
  NW_JOB_FINISHED,  /* the method finished or max_iterations was reached */
  NW_JOB_CANCELLED,
  NW_JOB_FAILED,
} NwJobState;

const char *nw_job_state_name(NwJobState s);

typedef struct {
  /* After every iteration (and its frame, when one was made), with the report and the
   * iteration's wall time in ms, the frame's publishing included. */
  void (*on_iteration)(NwJob *job, const NwIterationReport *report, double ms, gpointer data);
  /* When a frame was requested or wanted and published (after an iteration, before its
   * on_iteration; or while paused); the callee takes frame (heap-allocated: release with
   * nw_frame_clear and g_free). */
  void (*on_frame)(NwJob *job, NwFrame *frame, gpointer data);
  /* Once, when the worker leaves its loop: final state and error (NULL unless FAILED). */
  void (*on_done)(NwJob *job, NwJobState state, const GError *error, gpointer data);
} NwJobCallbacks;

/* max_iterations: the job stops after that many steps even if the method has not finished
 * (<= 0: no limit; the method's own stopping rule ends it). Inputs are borrowed and must
 * outlive the job; params are copied. */
NwJob *nw_job_new(const NwMethodOps *ops, const NwMethodInputs *inputs, const NwParams *params,
                  int max_iterations, const NwJobCallbacks *callbacks, gpointer data);
/* Start the worker thread. start_paused: create the method's state, then wait for
 * resume/step before the first iteration. */
void nw_job_start(NwJob *job, gboolean start_paused);
void nw_job_pause(NwJob *job);
void nw_job_resume(NwJob *job);
/* While paused: run exactly one iteration, then pause again (each call is one iteration).
 * While running: pause after one more iteration. */
void nw_job_step(NwJob *job);
/* Ends the job at the next iteration boundary (or wakes it from pause). */
void nw_job_cancel(NwJob *job);
/* Queue new parameters; applied before the next iteration. FALSE with an error naming the
 * parameter if a non-live parameter differs from the job's current values. */
gboolean nw_job_set_params(NwJob *job, const NwParams *params, GError **error);
/* Ask for one host frame (volumes in host memory): after the next iteration, or at once
 * while the job is paused (also before its first iteration). on_frame receives it. */
void nw_job_request_frame(NwJob *job);
/* Work around the method on the worker thread, set before nw_job_start: prepare runs before
 * the method's create and may point members of *in at volumes of its own (the moving image
 * resampled onto the fixed grid: seconds of work that must not block the caller; the job
 * cannot be cancelled meanwhile); finish runs on the result before it is handed over
 * (FINISHED or CANCELLED). Either returning FALSE fails the job with its error. data is
 * borrowed and must outlive the job. */
typedef struct {
  gboolean (*prepare)(NwMethodInputs *in, gpointer data, GError **error);
  gboolean (*finish)(NwMethodResult *result, gpointer data, GError **error);
} NwJobHooks;
void nw_job_set_hooks(NwJob *job, const NwJobHooks *hooks, gpointer data);
/* Live display, set before nw_job_start. Frames are made only when the display asks
 * (nw_job_want_live_frame), never per iteration for nobody: with device_front (an
 * NwLiveFront*, cuda/interop/nw_live.h) and a method that has publish_device_frame, the frame is
 * copied device-to-device into it and on_frame gets one with on_device set and no volumes;
 * otherwise a host frame. The front must outlive the job. */
void nw_job_set_live(NwJob *job, void *device_front);
/* The display wants the next live frame: published after the iteration now running (at once
 * while paused, unless the state shown is already published). Repeated calls before it is
 * published ask for one frame. Any thread. */
void nw_job_want_live_frame(NwJob *job);
/* Live frames published so far (device and host). */
guint64 nw_job_get_live_frames(NwJob *job);

/* Block until the worker has ended (and on_done has returned). Returns TRUE for FINISHED,
 * FALSE (error set) for FAILED or CANCELLED (code NW_ERROR_CANCELLED). */
gboolean nw_job_wait(NwJob *job, GError **error);
NwJobState nw_job_get_state(NwJob *job);
int nw_job_get_iteration(NwJob *job);
/* The method's result, once the worker has ended FINISHED or CANCELLED (partial results are
 * useful). The worker collects it just before destroy, so a CUDA state is only ever touched
 * by its own thread; this hands it over (once; later calls return NULL with an error). */
NwMethodResult *nw_job_take_result(NwJob *job, GError **error);
const NwMethodOps *nw_job_get_ops(NwJob *job);
/* Not from a callback (the worker cannot join itself). */
void nw_job_free(NwJob *job);

G_END_DECLS

#endif
