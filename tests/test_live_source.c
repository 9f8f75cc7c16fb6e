/* test_live_source.c — the live frame source (render/live_source.h) with a CPU job and a
 * simulated display, no GPU and no GL: frames are made only when a display frame asks
 * (made <= display frames + 1, none while nobody draws), one per display frame even when
 * several views begin it, host frames reach the take callback with their iteration, and a
 * fast job's frame is waited for so that the frame drawn is at most an iteration old. */
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "live_rate.h"
#include "live_source.h"
#include "testutil.h"

/* ---- a CPU method whose step sleeps and whose frame is its iteration ---------------------- */

typedef struct {
  int iteration;
  int step_us, first_publish_us;
  gboolean published;
} Fake;

static const NwParamSpec fake_specs[] = {
    {"step-us", NW_PARAM_INT, 1000.0, 0.0, 1e6, "us", "Sleep per step.", FALSE, NULL},
    {"first-publish-us", NW_PARAM_INT, 0.0, 0.0, 1e6, "us",
     "Sleep in the first publish (a first download that allocates).", FALSE, NULL},
};

static void *fake_create(const NwMethodInputs *in, const NwParams *p, GError **error)
{
  Fake *f = g_new0(Fake, 1);
  f->step_us = (int)nw_params_get(p, "step-us");
  f->first_publish_us = (int)nw_params_get(p, "first-publish-us");
  return f;
}

static gboolean fake_step(void *state, NwIterationReport *report, GError **error)
{
  Fake *f = state;
  g_usleep(f->step_us);
  f->iteration++;
  return TRUE;
}

static gboolean fake_publish(void *state, NwFrame *frame, GError **error)
{
  Fake *f = state;
  if (!f->published)
    g_usleep(f->first_publish_us);
  f->published = TRUE;
  frame->image = nw_volume_new(4, 3, 2, 1, error);
  for (size_t i = 0; i < 24; i++)
    frame->image->data[i] = (float)f->iteration;
  return TRUE;
}

static void fake_destroy(void *state)
{
  g_free(state);
}

static const NwMethodOps fake_ops = {
    .name = "fake",
    .device = NW_DEVICE_CPU,
    .description = "a step that sleeps",
    .params = fake_specs,
    .n_params = G_N_ELEMENTS(fake_specs),
    .create = fake_create,
    .step = fake_step,
    .publish_frame = fake_publish,
    .destroy = fake_destroy,
};

/* ---- the display side ------------------------------------------------------------------- */

typedef struct {
  GMutex lock;
  int taken, last_iteration, last_value;
  gint notified;
  int slow_take_us; /* the next take sleeps this long (a display making its textures) */
  NwLiveSource *src; /* what taken frames go back to */
} Display;

static void on_notify(gpointer data)
{
  g_atomic_int_inc(&((Display *)data)->notified);
}

static void on_take(NwFrame *frame, gpointer data)
{
  Display *d = data;
  g_mutex_lock(&d->lock);
  d->taken++;
  d->last_iteration = frame->iteration;
  d->last_value = (int)frame->image->data[0];
  const int sleep_us = d->slow_take_us;
  d->slow_take_us = 0;
  g_mutex_unlock(&d->lock);
  g_usleep(sleep_us);
  nw_live_source_recycle_frame(d->src, frame); /* a CPU job's: freed (no front to keep it) */
}

typedef struct {
  NwJob *job;
  NwLiveSource *src;
  NwVolume *img;
  NwParams *params;
  Display display;
} Rig;

static void on_frame(NwJob *job, NwFrame *frame, gpointer data)
{
  nw_live_source_push(((Rig *)data)->src, frame);
}

static void rig_start_slow_first(Rig *r, int step_us, int first_publish_us, int max_iterations);

static void rig_start(Rig *r, int step_us, int max_iterations)
{
  rig_start_slow_first(r, step_us, 0, max_iterations);
}

static void rig_start_slow_first(Rig *r, int step_us, int first_publish_us, int max_iterations)
{
  memset(r, 0, sizeof *r);
  g_mutex_init(&r->display.lock);
  r->display.last_iteration = -1;
  r->img = nw_volume_new(4, 3, 2, 1, NULL);
  r->params = nw_params_new(fake_ops.params, fake_ops.n_params);
  g_assert_true(nw_params_set(r->params, "step-us", step_us, NULL));
  g_assert_true(nw_params_set(r->params, "first-publish-us", first_publish_us, NULL));
  r->src = nw_live_source_new(&fake_ops, TRUE, 0, on_notify, on_take, &r->display);
  r->display.src = r->src;
  /* a CPU job has no front: host frames, whatever the display could take */
  g_assert_cmpint(nw_live_source_path(r->src), ==, NW_LIVE_PATH_HOST);
  g_assert_null(nw_live_source_front(r->src));
  NwMethodInputs in = {.fixed = r->img};
  const NwJobCallbacks cb = {NULL, on_frame, NULL};
  r->job = nw_job_new(&fake_ops, &in, r->params, max_iterations, &cb, r);
  nw_job_set_live(r->job, nw_live_source_front(r->src));
  nw_live_source_set_job(r->src, r->job);
  nw_job_start(r->job, FALSE);
}

static void rig_stop(Rig *r)
{
  nw_live_source_set_job(r->src, NULL);
  nw_job_free(r->job);
  nw_live_source_free(r->src);
  nw_params_free(r->params);
  nw_volume_free(r->img);
  g_mutex_clear(&r->display.lock);
}

/* A job nobody draws makes no frames; a 100 Hz display whose four views each begin every
 * display frame gets at most one frame per display frame, and frames do flow. */
static void test_frames_only_when_asked(void)
{
  Rig r;
  rig_start(&r, 500, 0);
  nw_live_source_set_max_fps(r.src, 0); /* one frame per display frame at most, no cap */
  while (nw_job_get_iteration(r.job) < 100)
    g_usleep(1000);
  g_assert_cmpuint(nw_job_get_live_frames(r.job), ==, 0);

  const int display_frames = 40;
  for (int d = 0; d < display_frames; d++) {
    for (int view = 0; view < 4; view++)
      nw_live_source_begin_frame(r.src, (guint64)d, 0);
    g_usleep(10000);
  }
  NwLiveStats st;
  nw_live_source_stats(r.src, &st);
  const guint64 made = nw_job_get_live_frames(r.job);
  const int iterations = nw_job_get_iteration(r.job);
  g_test_message("%d iterations, %" G_GUINT64_FORMAT " frames made, %" G_GUINT64_FORMAT
                 " asked, %" G_GUINT64_FORMAT " taken, %" G_GUINT64_FORMAT " display frames",
                 iterations, made, st.wants, st.taken, st.display_frames);
  g_assert_cmpuint(st.display_frames, ==, display_frames);
  g_assert_cmpuint(st.wants, <=, st.display_frames + 1);
  g_assert_cmpuint(made, <=, st.display_frames + 1);
  g_assert_cmpuint(made, >=, display_frames / 2); /* and they do come */
  g_assert_cmpint(iterations, >, 3 * (int)made);  /* not one per iteration */
  g_assert_cmpuint(st.taken, <=, made);
  g_assert_cmpint(r.display.taken, ==, (int)st.taken);
  g_assert_cmpint(r.display.last_value, ==, r.display.last_iteration); /* the frame's own data */
  g_assert_cmpuint(st.host_bytes, ==, st.arrived * 24 * sizeof(float));
  g_assert_cmpint(g_atomic_int_get(&r.display.notified), >=, (int)st.arrived);

  /* a cap of 20 frames a second on a 100 Hz display: about every fifth display frame asks */
  nw_live_source_set_max_fps(r.src, 20);
  const guint64 wants_before_cap = st.wants;
  const gint64 cap_t0 = g_get_monotonic_time();
  for (int d = display_frames; d < display_frames + 30; d++) {
    nw_live_source_begin_frame(r.src, (guint64)d, 0);
    g_usleep(10000);
  }
  const double cap_s = (double)(g_get_monotonic_time() - cap_t0) / G_USEC_PER_SEC;
  nw_live_source_stats(r.src, &st);
  g_test_message("cap 20/s: %" G_GUINT64_FORMAT " asks in %.2f s", st.wants - wants_before_cap,
                 cap_s);
  g_assert_cmpuint(st.wants - wants_before_cap, <=, (guint64)(20 * cap_s) + 2);
  g_assert_cmpuint(st.wants - wants_before_cap, >=, 3);

  /* live view off: no more frames, the job runs on */
  nw_live_source_set_enabled(r.src, FALSE);
  g_usleep(20000); /* an answer to the last ask may still come */
  const guint64 before = nw_job_get_live_frames(r.job);
  for (int d = display_frames + 30; d < display_frames + 40; d++) {
    nw_live_source_begin_frame(r.src, (guint64)d, 0);
    g_usleep(5000);
  }
  g_assert_cmpuint(nw_job_get_live_frames(r.job), ==, before);
  g_assert_false(nw_live_source_display_active(r.src));
  rig_stop(&r);
}

static int cmp_int(gconstpointer a, gconstpointer b)
{
  return *(const int *)a - *(const int *)b;
}

/* A job whose frames come quickly is waited for: the frame taken is the state at most an
 * iteration before the worker's (lag <= 1), measured right after the display frame began. */
static void test_fast_job_waited_for(void)
{
  Rig r;
  rig_start(&r, 20000, 0);              /* 20 ms per iteration, waited for up to 200 ms */
  nw_live_source_set_max_fps(r.src, 0); /* a frame for every display frame (no cap) */
  /* until the first frame has arrived the source cannot know the job is fast */
  guint64 d = 0;
  NwLiveStats st = {0};
  while (st.taken == 0) {
    nw_live_source_begin_frame(r.src, d++, 200000);
    nw_live_source_stats(r.src, &st);
    g_usleep(5000);
  }
  int lags[12], n = 0;
  while (n < 12) {
    const gboolean fresh = nw_live_source_begin_frame(r.src, d++, 200000);
    const int worker = nw_job_get_iteration(r.job);
    nw_live_source_stats(r.src, &st);
    g_assert_true(fresh);
    lags[n++] = worker - st.shown;
    g_usleep(5000);
  }
  qsort(lags, n, sizeof lags[0], cmp_int);
  g_test_message("lag median %d, max %d", lags[n / 2], lags[n - 1]);
  g_assert_cmpint(lags[n / 2], <=, 1);
  g_assert_cmpint(lags[n - 1], <=, 3); /* a scheduling hiccup on a loaded machine at most */
  rig_stop(&r);
}

/* A frame that arrived after its display frame stopped waiting (here: a display frame that
 * does not wait at all) has gone stale by the next display frame; even when the cap on
 * frames a second would not ask then, the source asks for the current state and waits for
 * it, so what is drawn is at most an iteration old, not the ~20 the stale frame is. */
static void test_stale_frame_refreshed(void)
{
  Rig r;
  rig_start(&r, 2000, 0); /* 2 ms per iteration */
  guint64 d = 0;
  NwLiveStats st = {0};
  while (st.taken == 0) { /* learn that the job answers quickly */
    nw_live_source_begin_frame(r.src, d++, 200000);
    nw_live_source_stats(r.src, &st);
    g_usleep(5000);
  }
  /* 10 frames a second at most: the first display frame of each 100 ms round may ask, the
   * second (40 ms later) may not by the cap */
  nw_live_source_set_max_fps(r.src, 10.0);
  const guint64 wants0 = st.wants, retaken0 = st.retaken;
  int worst = 0;
  const int rounds = 5;
  for (int round = 0; round < rounds; round++) {
    nw_live_source_begin_frame(r.src, d++, 0); /* asks, never waits */
    g_usleep(40000);                           /* ~20 iterations later */
    nw_live_source_begin_frame(r.src, d++, 200000);
    const int worker = nw_job_get_iteration(r.job);
    nw_live_source_stats(r.src, &st);
    worst = MAX(worst, worker - st.shown);
    g_usleep(60000);
  }
  g_test_message("worst lag %d, %" G_GUINT64_FORMAT " asks (%" G_GUINT64_FORMAT
                 " for retakes) in %d display frames",
                 worst, st.wants - wants0, st.retaken - retaken0, 2 * rounds);
  g_assert_cmpint(worst, <=, 3);
  /* the cap's ask and the refresh's, each round; and a retake's where a take was slow enough
   * (a loaded machine: ASan on two cores) that the job moved on meanwhile, a separate rule
   * (/live-source/slow-take-retaken) */
  g_assert_cmpuint(st.wants - wants0 - (st.retaken - retaken0), ==, 2 * rounds);
  rig_stop(&r);
}

/* One slow answer (the first: buffers are allocated then) must not stop the display from
 * waiting for the frames after it: with a running mean of answer times the 60 ms first
 * answer kept the estimate above the 8 ms wait for ten display frames, which then drew
 * frames ~15 iterations old; the median of the latest answers forgets it at once. */
static void test_slow_first_answer(void)
{
  Rig r;
  rig_start_slow_first(&r, 2000, 60000, 0); /* 2 ms per iteration, first frame 60 ms */
  nw_live_source_set_max_fps(r.src, 0.0);    /* a frame for every display frame */
  guint64 d = 0;
  NwLiveStats st = {0};
  while (st.taken == 0) { /* the first frame, however long it takes */
    nw_live_source_begin_frame(r.src, d++, 8000);
    nw_live_source_stats(r.src, &st);
    g_usleep(16000);
  }
  int worst = 0, fresh = 0;
  for (int k = 0; k < 12; k++) { /* a 30 Hz display waiting up to 8 ms */
    if (nw_live_source_begin_frame(r.src, d++, 8000)) {
      const int worker = nw_job_get_iteration(r.job);
      nw_live_source_stats(r.src, &st);
      worst = MAX(worst, worker - st.shown);
      fresh++;
    }
    g_usleep(33000);
  }
  g_test_message("after a 60 ms first answer: %d new frames in 12, worst lag %d", fresh, worst);
  /* ~15 iterations pass between display frames: a frame not waited for is ~15 old (a loaded
   * test machine may delay a waited-for one by an iteration or two) */
  g_assert_cmpint(fresh, >=, 10);
  g_assert_cmpint(worst, <=, 4);
  rig_stop(&r);
}

/* Taking a frame can be slow (the display makes textures for a new grid) while a fast job
 * moves on: the source then asks for another frame and hands that one over before the
 * display frame draws, so what is drawn is not the ~20 iterations old frame. */
static void test_slow_take_retaken(void)
{
  Rig r;
  rig_start(&r, 2000, 0); /* 2 ms per iteration */
  nw_live_source_set_max_fps(r.src, 0.0);
  guint64 d = 0;
  NwLiveStats st = {0};
  while (st.taken < 3) { /* learn that the job answers quickly */
    nw_live_source_begin_frame(r.src, d++, 8000);
    nw_live_source_stats(r.src, &st);
    g_usleep(16000);
  }
  g_assert_cmpuint(st.retaken, ==, 0);
  int worst = 0;
  for (int round = 0; round < 3; round++) {
    g_mutex_lock(&r.display.lock);
    r.display.slow_take_us = 40000;
    g_mutex_unlock(&r.display.lock);
    g_assert_true(nw_live_source_begin_frame(r.src, d++, 8000));
    const int worker = nw_job_get_iteration(r.job);
    g_mutex_lock(&r.display.lock);
    worst = MAX(worst, worker - r.display.last_iteration);
    g_mutex_unlock(&r.display.lock);
    g_usleep(16000);
  }
  nw_live_source_stats(r.src, &st);
  g_test_message("after 40 ms takes: worst lag %d, %" G_GUINT64_FORMAT " retaken", worst,
                 st.retaken);
  g_assert_cmpuint(st.retaken, ==, 3);
  g_assert_cmpint(worst, <=, 4); /* ~20 without the retake */
  rig_stop(&r);
}

/* A display's chances at times t0 + k * period + jitter; how many the rate lets through. */
static int allowed_over(NwLiveRate *r, double period_us, int chances, gint64 jitter_us)
{
  int n = 0;
  for (int k = 0; k < chances; k++) {
    /* alternate early and late by up to jitter_us, as vertical blanks arrive in practice */
    const gint64 jitter = (k % 2 == 0 ? -1 : 1) * ((k * 7919) % (jitter_us + 1));
    n += nw_live_rate_allow(r, 1000000 + (gint64)(k * period_us) + jitter);
  }
  return n;
}

static void test_rate_cap(void)
{
  /* 60 Hz display, cap 30: every other tick, even with ticks 200 us early or late */
  NwLiveRate r = {.fps = 30};
  g_assert_cmpint(allowed_over(&r, 1e6 / 60, 600, 200), ==, 300);
  /* 144 Hz display, cap 30: 30 a second on average (10 s of chances) */
  r = (NwLiveRate){.fps = 30};
  g_assert_cmpint(abs(allowed_over(&r, 1e6 / 144, 1440, 200) - 300), <=, 1);
  /* a display slower than the cap gets every chance */
  r = (NwLiveRate){.fps = 30};
  g_assert_cmpint(allowed_over(&r, 1e6 / 24, 240, 200), ==, 240);
  /* no cap */
  r = (NwLiveRate){.fps = 0};
  g_assert_cmpint(allowed_over(&r, 1e6 / 60, 600, 200), ==, 600);
  /* a pause banks one event, not a burst */
  r = (NwLiveRate){.fps = 30};
  g_assert_true(nw_live_rate_allow(&r, 1000000));
  g_assert_true(nw_live_rate_allow(&r, 1000000 + 10 * G_USEC_PER_SEC));
  g_assert_false(nw_live_rate_allow(&r, 1000000 + 10 * G_USEC_PER_SEC + 1000));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/live-source/frames-only-when-asked", test_frames_only_when_asked);
  g_test_add_func("/live-source/fast-job-waited-for", test_fast_job_waited_for);
  g_test_add_func("/live-source/rate-cap", test_rate_cap);
  g_test_add_func("/live-source/stale-frame-refreshed", test_stale_frame_refreshed);
  g_test_add_func("/live-source/slow-first-answer", test_slow_first_answer);
  g_test_add_func("/live-source/slow-take-retaken", test_slow_take_retaken);
  return g_test_run();
}
