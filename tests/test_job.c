/* test_job.c — the job runner (core/job.c) with a small fake method defined here: runs to
 * max_iterations, method-driven finish, pause/step/resume/cancel from the test thread, live and
 * non-live parameter changes, failures, frames, results, free while running.
 *
 * Real threads; no timing assertions. The test waits on conditions (a GCond signalled by the
 * callbacks, or the job's state) with a generous deadline that only guards against hangs. */
#include <string.h>

#include "job.h"
#include "nw_error.h"
#include "testutil.h"

#define DEADLINE_S 60 /* safety net only: a healthy run needs milliseconds */

/* ---- the fake method -------------------------------------------------------------------- */

static const NwParamSpec fake_specs[] = {
    {"gain", NW_PARAM_DOUBLE, 1.0, 0.0, 100.0, "", "Reported back by every step.", TRUE, NULL},
    {"sleep-us", NW_PARAM_INT, 0.0, 0.0, 100000.0, "us", "Sleep per step.", TRUE, NULL},
    {"fail-at", NW_PARAM_INT, 0.0, 0.0, 1000.0, "", "Step that fails (0: none).", FALSE, NULL},
    {"finish-at", NW_PARAM_INT, 0.0, 0.0, 1000.0, "", "Step that finishes (0: none).", FALSE, NULL},
};

static GThread *test_thread; /* the thread running main: ops must never run on it */
static gint fake_alive;      /* states created and not yet destroyed */

typedef struct {
  GThread *thread; /* the thread that created the state: every op must run there */
  double gain;
  int sleep_us, fail_at, finish_at;
  int steps;
} FakeState;

static void check_thread(const FakeState *s)
{
  g_assert_true(g_thread_self() == s->thread);
  g_assert_true(g_thread_self() != test_thread);
}

static void fake_read_params(FakeState *s, const NwParams *p)
{
  s->gain = nw_params_get(p, "gain");
  s->sleep_us = nw_params_get_int(p, "sleep-us");
  s->fail_at = nw_params_get_int(p, "fail-at");
  s->finish_at = nw_params_get_int(p, "finish-at");
}

static void *fake_create(const NwMethodInputs *in, const NwParams *p, GError **error)
{
  if (in->fixed == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "fake: no input image");
    return NULL;
  }
  FakeState *s = g_new0(FakeState, 1);
  s->thread = g_thread_self();
  check_thread(s);
  fake_read_params(s, p);
  g_atomic_int_inc(&fake_alive);
  return s;
}

static gboolean fake_step(void *state, NwIterationReport *report, GError **error)
{
  FakeState *s = state;
  check_thread(s);
  if (s->sleep_us > 0)
    g_usleep(s->sleep_us);
  if (s->steps + 1 == s->fail_at) {
    g_set_error(error, NW_ERROR, NW_ERROR_DEVICE, "fake: failed at iteration %d", s->fail_at);
    return FALSE;
  }
  s->steps++;
  report->iteration = s->steps;
  report->finished = s->steps == s->finish_at;
  nw_report_add(report, "gain", s->gain);
  nw_report_add(report, "steps", s->steps);
  return TRUE;
}

static gboolean fake_set_params(void *state, const NwParams *p, GError **error)
{
  check_thread(state);
  fake_read_params(state, p);
  return TRUE;
}

/* A 1-voxel volume holding the step count, so tests can tell which iteration it shows. */
static NwVolume *count_volume(const FakeState *s)
{
  NwVolume *v = nw_volume_new(1, 1, 1, 1, NULL);
  v->data[0] = (float)s->steps;
  return v;
}

static gboolean fake_publish_frame(void *state, NwFrame *frame, GError **error)
{
  check_thread(state);
  frame->image = count_volume(state);
  return TRUE;
}

static NwMethodResult *fake_result(void *state, GError **error)
{
  check_thread(state);
  NwMethodResult *r = nw_method_result_new();
  nw_method_result_add(r, "count", count_volume(state));
  return r;
}

static void fake_destroy(void *state)
{
  check_thread(state);
  g_free(state);
  g_atomic_int_add(&fake_alive, -1);
}

static const NwMethodOps fake_ops = {
    .name = "fake",
    .device = NW_DEVICE_CPU,
    .description = "test double",
    .params = fake_specs,
    .n_params = G_N_ELEMENTS(fake_specs),
    .create = fake_create,
    .step = fake_step,
    .set_params = fake_set_params,
    .publish_frame = fake_publish_frame,
    .result = fake_result,
    .destroy = fake_destroy,
};

/* ---- what the callbacks saw -------------------------------------------------------------- */

#define MAX_SEEN 4096

typedef struct {
  GMutex lock;
  GCond cond;
  int n_reports;
  int iteration[MAX_SEEN];
  double gain[MAX_SEEN];
  int n_frames;
  int frame_iteration[MAX_SEEN];
  float frame_value[MAX_SEEN];
  int n_done;
  NwJobState done_state;
  char *done_message;
} Seen;

static void on_iteration(NwJob *job, const NwIterationReport *r, double ms, gpointer data)
{
  Seen *seen = data;
  g_assert_cmpfloat(ms, >=, 0.0);
  g_assert_cmpint(r->n_figures, ==, 2);
  g_assert_cmpstr(r->figure_names[0], ==, "gain");
  g_mutex_lock(&seen->lock);
  if (seen->n_reports < MAX_SEEN) {
    seen->iteration[seen->n_reports] = r->iteration;
    seen->gain[seen->n_reports] = r->figures[0];
  }
  seen->n_reports++;
  g_cond_broadcast(&seen->cond);
  g_mutex_unlock(&seen->lock);
}

static void on_frame(NwJob *job, NwFrame *frame, gpointer data)
{
  Seen *seen = data;
  g_mutex_lock(&seen->lock);
  if (seen->n_frames < MAX_SEEN) {
    seen->frame_iteration[seen->n_frames] = frame->iteration;
    seen->frame_value[seen->n_frames] = frame->image->data[0];
  }
  seen->n_frames++;
  g_cond_broadcast(&seen->cond);
  g_mutex_unlock(&seen->lock);
  nw_frame_clear(frame); /* the callee owns the frame */
  g_free(frame);
}

static void on_done(NwJob *job, NwJobState state, const GError *error, gpointer data)
{
  Seen *seen = data;
  g_assert_true(g_thread_self() != test_thread);
  g_mutex_lock(&seen->lock);
  seen->n_done++;
  seen->done_state = state;
  g_free(seen->done_message);
  seen->done_message = error != NULL ? g_strdup(error->message) : NULL;
  g_cond_broadcast(&seen->cond);
  g_mutex_unlock(&seen->lock);
}

static const NwJobCallbacks callbacks = {on_iteration, on_frame, on_done};

static void seen_init(Seen *seen)
{
  memset(seen, 0, sizeof *seen);
  g_mutex_init(&seen->lock);
  g_cond_init(&seen->cond);
}

static void seen_clear(Seen *seen)
{
  g_free(seen->done_message);
  g_mutex_clear(&seen->lock);
  g_cond_clear(&seen->cond);
}

/* Block until at least n iteration reports (or n frames) arrived. */
static void wait_seen(Seen *seen, const int *counter, int n)
{
  gint64 end = g_get_monotonic_time() + DEADLINE_S * G_TIME_SPAN_SECOND;
  g_mutex_lock(&seen->lock);
  while (*counter < n)
    if (!g_cond_wait_until(&seen->cond, &seen->lock, end))
      g_error("timed out waiting for %d callbacks (have %d)", n, *counter);
  g_mutex_unlock(&seen->lock);
}

static int seen_get(Seen *seen, const int *counter)
{
  g_mutex_lock(&seen->lock);
  int n = *counter;
  g_mutex_unlock(&seen->lock);
  return n;
}

/* The job has no state-change callback, so this one check polls (1 ms naps). */
static void wait_state(NwJob *job, NwJobState want)
{
  gint64 end = g_get_monotonic_time() + DEADLINE_S * G_TIME_SPAN_SECOND;
  while (nw_job_get_state(job) != want) {
    if (g_get_monotonic_time() > end)
      g_error("timed out waiting for state %s (is %s)", nw_job_state_name(want),
              nw_job_state_name(nw_job_get_state(job)));
    g_usleep(1000);
  }
}

/* ---- fixtures ----------------------------------------------------------------------------- */

typedef struct {
  NwVolume *input;
  NwMethodInputs in;
  NwParams *params;
  Seen seen;
} Fixture;

static void fixture_setup(Fixture *f, gconstpointer unused)
{
  f->input = nw_volume_new(2, 2, 2, 1, NULL);
  f->in = (NwMethodInputs){.fixed = f->input};
  f->params = nw_params_new(fake_specs, G_N_ELEMENTS(fake_specs));
  seen_init(&f->seen);
}

static void fixture_teardown(Fixture *f, gconstpointer unused)
{
  g_assert_cmpint(g_atomic_int_get(&fake_alive), ==, 0); /* every state destroyed */
  nw_volume_free(f->input);
  nw_params_free(f->params);
  seen_clear(&f->seen);
}

static NwJob *new_job(Fixture *f, int max_iterations)
{
  return nw_job_new(&fake_ops, &f->in, f->params, max_iterations, &callbacks, &f->seen);
}

static float take_count(NwJob *job)
{
  GError *error = NULL;
  g_autoptr(NwMethodResult) r = nw_job_take_result(job, &error);
  g_assert_no_error(error);
  g_assert_nonnull(r);
  const NwVolume *v = nw_method_result_get(r, "count");
  g_assert_nonnull(v);
  return v->data[0];
}

static void expect_cancelled(NwJob *job, Fixture *f)
{
  GError *error = NULL;
  g_assert_false(nw_job_wait(job, &error));
  g_assert_error(error, NW_ERROR, NW_ERROR_CANCELLED);
  g_autofree char *msg =
      g_strdup_printf("fake: cancelled after %d iterations", nw_job_get_iteration(job));
  g_assert_cmpstr(error->message, ==, msg);
  g_clear_error(&error);
  g_assert_cmpint(nw_job_get_state(job), ==, NW_JOB_CANCELLED);
  g_assert_cmpint(f->seen.n_done, ==, 1); /* wait returns after on_done */
  g_assert_cmpint(f->seen.done_state, ==, NW_JOB_CANCELLED);
  g_assert_null(f->seen.done_message);
}

/* ---- the tests --------------------------------------------------------------------------- */

static void test_max_iterations(Fixture *f, gconstpointer unused)
{
  NwJob *job = new_job(f, 5);
  g_assert_cmpint(nw_job_get_state(job), ==, NW_JOB_IDLE);
  GError *error = NULL;
  g_assert_null(nw_job_take_result(job, &error));
  g_assert_cmpstr(error->message, ==, "fake: no result yet: the job is idle");
  g_clear_error(&error);

  nw_job_start(job, FALSE);
  g_assert_true(nw_job_wait(job, &error));
  g_assert_no_error(error);
  g_assert_cmpint(nw_job_get_state(job), ==, NW_JOB_FINISHED);
  g_assert_cmpint(nw_job_get_iteration(job), ==, 5);
  g_assert_cmpint(f->seen.n_reports, ==, 5);
  for (int i = 0; i < 5; i++)
    g_assert_cmpint(f->seen.iteration[i], ==, i + 1);
  g_assert_cmpint(f->seen.n_done, ==, 1);
  g_assert_cmpint(f->seen.done_state, ==, NW_JOB_FINISHED);
  g_assert_null(f->seen.done_message);
  g_assert_cmpint(f->seen.n_frames, ==, 0); /* none requested */

  g_assert_cmpfloat(take_count(job), ==, 5.0f);
  g_assert_null(nw_job_take_result(job, &error)); /* handed over once */
  g_assert_cmpstr(error->message, ==, "fake: the result was already taken");
  g_clear_error(&error);
  g_assert_true(nw_job_wait(job, NULL)); /* waiting again is harmless */
  nw_job_free(job);
}

static void test_method_finishes(Fixture *f, gconstpointer unused)
{
  g_assert_true(nw_params_set(f->params, "finish-at", 3, NULL));
  NwJob *job = new_job(f, 100);
  nw_job_start(job, FALSE);
  g_assert_true(nw_job_wait(job, NULL));
  g_assert_cmpint(nw_job_get_iteration(job), ==, 3);
  g_assert_cmpint(f->seen.done_state, ==, NW_JOB_FINISHED);
  g_assert_cmpfloat(take_count(job), ==, 3.0f);
  nw_job_free(job);
}

static void test_pause_resume(Fixture *f, gconstpointer unused)
{
  g_assert_true(nw_params_set(f->params, "sleep-us", 200, NULL));
  NwJob *job = new_job(f, 0); /* no limit: only cancel ends it */
  nw_job_start(job, FALSE);
  wait_seen(&f->seen, &f->seen.n_reports, 2);
  nw_job_pause(job);
  wait_state(job, NW_JOB_PAUSED);
  int at_pause = nw_job_get_iteration(job);
  g_assert_cmpint(at_pause, >=, 2);
  /* Unpaused, 20 ms would be ~100 iterations of 200 us; paused it must be none. */
  g_usleep(20000);
  g_assert_cmpint(nw_job_get_iteration(job), ==, at_pause);
  g_assert_cmpint(seen_get(&f->seen, &f->seen.n_reports), ==, at_pause);
  g_assert_cmpint(nw_job_get_state(job), ==, NW_JOB_PAUSED);

  nw_job_resume(job);
  wait_seen(&f->seen, &f->seen.n_reports, at_pause + 3);
  g_assert_cmpint(nw_job_get_state(job), !=, NW_JOB_PAUSED);
  nw_job_cancel(job);
  expect_cancelled(job, f);
  nw_job_free(job);
}

static void test_step_while_paused(Fixture *f, gconstpointer unused)
{
  NwJob *job = new_job(f, 0);
  nw_job_start(job, TRUE);
  wait_state(job, NW_JOB_PAUSED); /* created, no iteration yet */
  g_assert_cmpint(nw_job_get_iteration(job), ==, 0);

  nw_job_step(job);
  wait_seen(&f->seen, &f->seen.n_reports, 1);
  wait_state(job, NW_JOB_PAUSED);
  g_usleep(10000); /* would be hundreds of free-running iterations */
  g_assert_cmpint(nw_job_get_iteration(job), ==, 1);

  nw_job_step(job); /* two clicks: two iterations */
  nw_job_step(job);
  wait_seen(&f->seen, &f->seen.n_reports, 3);
  wait_state(job, NW_JOB_PAUSED);
  g_usleep(10000);
  g_assert_cmpint(nw_job_get_iteration(job), ==, 3);
  g_assert_cmpint(seen_get(&f->seen, &f->seen.n_reports), ==, 3);

  nw_job_cancel(job); /* wakes the paused worker */
  expect_cancelled(job, f);
  g_assert_cmpint(nw_job_get_iteration(job), ==, 3);
  g_assert_cmpfloat(take_count(job), ==, 3.0f); /* partial result after cancel */
  nw_job_free(job);
}

/* Step while running: the iteration in progress ends, one more runs, then the job pauses. */
static void test_step_while_running(Fixture *f, gconstpointer unused)
{
  g_assert_true(nw_params_set(f->params, "sleep-us", 200, NULL));
  NwJob *job = new_job(f, 0);
  nw_job_start(job, FALSE);
  wait_seen(&f->seen, &f->seen.n_reports, 2);
  int at_step = nw_job_get_iteration(job);
  nw_job_step(job);
  wait_seen(&f->seen, &f->seen.n_reports, at_step + 1);
  wait_state(job, NW_JOB_PAUSED);
  int paused_at = nw_job_get_iteration(job);
  /* No upper bound: the test thread may be preempted between reading and stepping. */
  g_assert_cmpint(paused_at, >=, at_step + 1);
  g_usleep(10000);
  g_assert_cmpint(nw_job_get_iteration(job), ==, paused_at);
  nw_job_cancel(job);
  expect_cancelled(job, f);
  nw_job_free(job);
}

static void test_cancel_running(Fixture *f, gconstpointer unused)
{
  g_assert_true(nw_params_set(f->params, "sleep-us", 100, NULL));
  NwJob *job = new_job(f, 0);
  nw_job_start(job, FALSE);
  wait_seen(&f->seen, &f->seen.n_reports, 3);
  nw_job_cancel(job);
  expect_cancelled(job, f);
  int n = nw_job_get_iteration(job);
  g_assert_cmpint(n, >=, 3);
  g_assert_cmpint(f->seen.n_reports, ==, n);
  g_assert_cmpfloat(take_count(job), ==, (float)n);
  nw_job_free(job);
}

static void test_cancel_before_first_iteration(Fixture *f, gconstpointer unused)
{
  NwJob *job = new_job(f, 10);
  nw_job_start(job, TRUE);
  nw_job_cancel(job);
  expect_cancelled(job, f);
  g_assert_cmpint(nw_job_get_iteration(job), ==, 0);
  g_assert_cmpint(f->seen.n_reports, ==, 0);
  g_assert_cmpfloat(take_count(job), ==, 0.0f);
  nw_job_free(job);
}

static void test_live_params(Fixture *f, gconstpointer unused)
{
  NwJob *job = new_job(f, 4);
  nw_job_start(job, TRUE);
  wait_state(job, NW_JOB_PAUSED);
  GError *error = NULL;

  g_autoptr(NwParams) p = nw_params_copy(f->params);
  g_assert_true(nw_params_set(p, "gain", 2.0, NULL));
  g_assert_true(nw_job_set_params(job, p, &error));
  g_assert_no_error(error);
  nw_job_step(job);
  wait_seen(&f->seen, &f->seen.n_reports, 1);
  g_assert_cmpfloat(f->seen.gain[0], ==, 2.0);

  /* Two changes before the next iteration: the latest wins. */
  g_assert_true(nw_params_set(p, "gain", 3.0, NULL));
  g_assert_true(nw_job_set_params(job, p, NULL));
  g_assert_true(nw_params_set(p, "gain", 5.0, NULL));
  g_assert_true(nw_job_set_params(job, p, NULL));
  wait_state(job, NW_JOB_PAUSED);
  nw_job_step(job);
  wait_seen(&f->seen, &f->seen.n_reports, 2);
  g_assert_cmpfloat(f->seen.gain[1], ==, 5.0);

  /* A non-live change is refused as a whole: the live gain in the same set is not applied. */
  g_autoptr(NwParams) q = nw_params_copy(p);
  g_assert_true(nw_params_set(q, "gain", 9.0, NULL));
  g_assert_true(nw_params_set(q, "fail-at", 7, NULL));
  g_assert_false(nw_job_set_params(job, q, &error));
  g_assert_error(error, NW_ERROR, NW_ERROR_INVALID);
  g_assert_cmpstr(error->message, ==,
                  "fake: fail-at cannot change while the job runs (0 -> 7); start a new job");
  g_clear_error(&error);

  /* Parameters of another method are refused too. */
  g_autoptr(NwParams) other = nw_params_new(fake_specs, 2);
  g_assert_false(nw_job_set_params(job, other, &error));
  g_assert_cmpstr(error->message, ==, "fake: the new parameters belong to another method");
  g_clear_error(&error);

  wait_state(job, NW_JOB_PAUSED);
  nw_job_resume(job);
  g_assert_true(nw_job_wait(job, &error));
  g_assert_no_error(error);
  g_assert_cmpint(f->seen.n_reports, ==, 4);
  g_assert_cmpfloat(f->seen.gain[2], ==, 5.0);
  g_assert_cmpfloat(f->seen.gain[3], ==, 5.0);
  nw_job_free(job);
}

static void test_step_fails(Fixture *f, gconstpointer unused)
{
  g_assert_true(nw_params_set(f->params, "fail-at", 3, NULL));
  NwJob *job = new_job(f, 10);
  nw_job_start(job, FALSE);
  GError *error = NULL;
  g_assert_false(nw_job_wait(job, &error));
  g_assert_error(error, NW_ERROR, NW_ERROR_DEVICE); /* the method's own error, kept */
  g_assert_cmpstr(error->message, ==, "fake: failed at iteration 3");
  g_clear_error(&error);
  g_assert_cmpint(nw_job_get_state(job), ==, NW_JOB_FAILED);
  g_assert_cmpint(nw_job_get_iteration(job), ==, 2);
  g_assert_cmpint(f->seen.done_state, ==, NW_JOB_FAILED);
  g_assert_cmpstr(f->seen.done_message, ==, "fake: failed at iteration 3");
  g_assert_null(nw_job_take_result(job, &error));
  g_assert_cmpstr(error->message, ==,
                  "fake: no result: the job failed (fake: failed at iteration 3)");
  g_clear_error(&error);
  nw_job_free(job);
}

static void test_create_fails(Fixture *f, gconstpointer unused)
{
  NwMethodInputs none = {0};
  NwJob *job = nw_job_new(&fake_ops, &none, f->params, 10, &callbacks, &f->seen);
  nw_job_start(job, FALSE);
  GError *error = NULL;
  g_assert_false(nw_job_wait(job, &error));
  g_assert_error(error, NW_ERROR, NW_ERROR_INVALID);
  g_assert_cmpstr(error->message, ==, "fake: no input image");
  g_clear_error(&error);
  g_assert_cmpint(f->seen.done_state, ==, NW_JOB_FAILED);
  g_assert_cmpint(f->seen.n_reports, ==, 0);
  nw_job_free(job);
}

static void test_frames(Fixture *f, gconstpointer unused)
{
  NwJob *job = new_job(f, 0);
  nw_job_start(job, TRUE);
  wait_state(job, NW_JOB_PAUSED);

  /* While paused a request is served at once: the state before the first iteration. */
  nw_job_request_frame(job);
  wait_seen(&f->seen, &f->seen.n_frames, 1);
  g_assert_cmpint(f->seen.frame_iteration[0], ==, 0);
  g_assert_cmpfloat(f->seen.frame_value[0], ==, 0.0f);
  g_assert_cmpint(nw_job_get_state(job), ==, NW_JOB_PAUSED);

  nw_job_step(job);
  wait_seen(&f->seen, &f->seen.n_reports, 1);
  wait_state(job, NW_JOB_PAUSED);
  nw_job_request_frame(job);
  wait_seen(&f->seen, &f->seen.n_frames, 2);
  g_assert_cmpint(f->seen.frame_iteration[1], ==, 1);
  g_assert_cmpfloat(f->seen.frame_value[1], ==, 1.0f);

  /* Without a request, an iteration publishes nothing. */
  nw_job_step(job);
  wait_seen(&f->seen, &f->seen.n_reports, 2);
  wait_state(job, NW_JOB_PAUSED);
  g_assert_cmpint(seen_get(&f->seen, &f->seen.n_frames), ==, 2);

  /* While running: one request, one frame, showing the iteration it is stamped with. */
  g_assert_true(nw_params_set(f->params, "sleep-us", 100, NULL));
  g_assert_true(nw_job_set_params(job, f->params, NULL));
  nw_job_resume(job);
  wait_seen(&f->seen, &f->seen.n_reports, 4);
  int before = nw_job_get_iteration(job);
  nw_job_request_frame(job);
  wait_seen(&f->seen, &f->seen.n_frames, 3);
  nw_job_cancel(job);
  expect_cancelled(job, f);
  g_assert_cmpint(f->seen.n_frames, ==, 3);
  g_assert_cmpint(f->seen.frame_iteration[2], >, before);
  g_assert_cmpfloat(f->seen.frame_value[2], ==, (float)f->seen.frame_iteration[2]);
  nw_job_free(job);
}

/* A stand-in for a CUDA method's device publish: records the front it was given. */
static void *device_front_seen;
static int device_frames;

static gboolean fake_publish_device_frame(void *state, void *front, GError **error)
{
  check_thread(state);
  device_front_seen = front;
  g_atomic_int_inc(&device_frames);
  return TRUE;
}

static void on_frame_device(NwJob *job, NwFrame *frame, gpointer data)
{
  Seen *seen = data;
  g_mutex_lock(&seen->lock);
  if (seen->n_frames < MAX_SEEN) {
    seen->frame_iteration[seen->n_frames] = frame->iteration;
    /* device frames carry no volumes; -1 marks them */
    seen->frame_value[seen->n_frames] = frame->on_device ? -1.0f : frame->image->data[0];
    g_assert_true(frame->on_device == (frame->image == NULL));
  }
  seen->n_frames++;
  g_cond_broadcast(&seen->cond);
  g_mutex_unlock(&seen->lock);
  nw_frame_clear(frame);
  g_free(frame);
}

/* Live jobs publish only what the display wants: nothing while nobody asks; one frame per
 * want (into the device front when the method can, else on the host), at once while paused
 * unless that state was already sent; an explicit request still gets host volumes. */
static void test_live_frames(Fixture *f, gconstpointer unused)
{
  static const NwJobCallbacks cb = {on_iteration, on_frame_device, on_done};
  for (int device = 0; device < 2; device++) {
    NwMethodOps ops = fake_ops;
    int front = 42;
    if (device)
      ops.publish_device_frame = fake_publish_device_frame;
    memset(&f->seen.n_reports, 0, sizeof f->seen - G_STRUCT_OFFSET(Seen, n_reports));
    device_frames = 0;
    NwJob *job = nw_job_new(&ops, &f->in, f->params, 10, &cb, &f->seen);
    nw_job_set_live(job, &front);
    nw_job_start(job, TRUE);
    wait_state(job, NW_JOB_PAUSED);
    for (int i = 0; i < 3; i++) /* nobody asks: no frames */
      nw_job_step(job);
    wait_seen(&f->seen, &f->seen.n_reports, 3);
    wait_state(job, NW_JOB_PAUSED);
    g_assert_cmpint(seen_get(&f->seen, &f->seen.n_frames), ==, 0);
    nw_job_want_live_frame(job); /* paused: the state of iteration 3 at once */
    wait_seen(&f->seen, &f->seen.n_frames, 1);
    nw_job_want_live_frame(job); /* already sent: waits for the next iteration */
    g_usleep(20000);
    g_assert_cmpint(seen_get(&f->seen, &f->seen.n_frames), ==, 1);
    nw_job_step(job); /* iteration 4 answers it */
    wait_seen(&f->seen, &f->seen.n_frames, 2);
    wait_state(job, NW_JOB_PAUSED);
    nw_job_request_frame(job); /* paused: a host frame now */
    wait_seen(&f->seen, &f->seen.n_frames, 3);
    nw_job_resume(job); /* to the limit of 10 with nobody asking */
    g_assert_true(nw_job_wait(job, NULL));
    g_assert_cmpint(f->seen.n_reports, ==, 10);
    g_assert_cmpint(f->seen.n_frames, ==, 3);
    const int want_it[3] = {3, 4, 4};
    for (int i = 0; i < 3; i++) {
      g_assert_cmpint(f->seen.frame_iteration[i], ==, want_it[i]);
      const gboolean host = !device || i == 2;
      g_assert_cmpfloat(f->seen.frame_value[i], ==, host ? (float)want_it[i] : -1.0f);
    }
    g_assert_cmpuint(nw_job_get_live_frames(job), ==, 2);
    g_assert_cmpint(device_frames, ==, device ? 2 : 0);
    g_assert_true(!device || device_front_seen == &front);
    nw_job_free(job);
  }
}

static void test_free_while_running(Fixture *f, gconstpointer unused)
{
  g_assert_true(nw_params_set(f->params, "sleep-us", 100, NULL));
  NwJob *job = new_job(f, 0);
  nw_job_start(job, FALSE);
  wait_seen(&f->seen, &f->seen.n_reports, 2);
  nw_job_free(job); /* cancels and joins: the state is destroyed on return */
  g_assert_cmpint(g_atomic_int_get(&fake_alive), ==, 0);
  g_assert_cmpint(f->seen.n_done, ==, 1);
  g_assert_cmpint(f->seen.done_state, ==, NW_JOB_CANCELLED);
}

static void test_free_while_paused_and_unstarted(Fixture *f, gconstpointer unused)
{
  NwJob *job = new_job(f, 0);
  nw_job_start(job, TRUE);
  wait_state(job, NW_JOB_PAUSED);
  nw_job_free(job);
  g_assert_cmpint(f->seen.done_state, ==, NW_JOB_CANCELLED);

  NwJob *idle = new_job(f, 0); /* never started: nothing to join, no callbacks */
  GError *error = NULL;
  g_assert_false(nw_job_wait(idle, &error));
  g_assert_cmpstr(error->message, ==, "fake: the job was never started");
  g_clear_error(&error);
  nw_job_free(idle);
  g_assert_cmpint(f->seen.n_done, ==, 1);
}

static void test_state_names(void)
{
  g_assert_cmpstr(nw_job_state_name(NW_JOB_IDLE), ==, "idle");
  g_assert_cmpstr(nw_job_state_name(NW_JOB_RUNNING), ==, "running");
  g_assert_cmpstr(nw_job_state_name(NW_JOB_PAUSED), ==, "paused");
  g_assert_cmpstr(nw_job_state_name(NW_JOB_FINISHED), ==, "finished");
  g_assert_cmpstr(nw_job_state_name(NW_JOB_CANCELLED), ==, "cancelled");
  g_assert_cmpstr(nw_job_state_name(NW_JOB_FAILED), ==, "failed");
}

#define ADD(path, fn) g_test_add(path, Fixture, NULL, fixture_setup, fn, fixture_teardown)

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  test_thread = g_thread_self();
  g_test_add_func("/job/state-names", test_state_names);
  ADD("/job/max-iterations", test_max_iterations);
  ADD("/job/method-finishes", test_method_finishes);
  ADD("/job/pause-resume", test_pause_resume);
  ADD("/job/step-while-paused", test_step_while_paused);
  ADD("/job/step-while-running", test_step_while_running);
  ADD("/job/cancel-running", test_cancel_running);
  ADD("/job/cancel-before-first-iteration", test_cancel_before_first_iteration);
  ADD("/job/live-params", test_live_params);
  ADD("/job/step-fails", test_step_fails);
  ADD("/job/create-fails", test_create_fails);
  ADD("/job/frames", test_frames);
  ADD("/job/live-frames", test_live_frames);
  ADD("/job/free-while-running", test_free_while_running);
  ADD("/job/free-while-paused-and-unstarted", test_free_while_paused_and_unstarted);
  return g_test_run();
}
