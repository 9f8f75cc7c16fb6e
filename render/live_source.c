/* live_source.c — frames of a live job, pulled at the display's pace (see live_source.h).
 * Display thread for the public calls except push (worker) and the downloader's task (its own
 * thread). One mutex guards the shared state; begin_frame waits on the condition for a frame
 * asked for, never longer than its wait_us. */
#include "live_source.h"

#include <string.h>

#include "live_rate.h"
#include "live_reduce.h"
#include "nw_error.h"

#define ACTIVE_US (250 * 1000) /* "the display is pulling" when it asked this recently */
#define ARRIVALS 5             /* answer times the estimate looks at */

struct NwLiveSource {
  /* fixed at creation */
  guint64 id;
  NwLivePath path;
  NwLiveFront *front; /* CUDA jobs: the job publishes here, on both paths */
  size_t max_voxels;
  NwLiveNotify notify;
  NwLiveTake take;
  gpointer data;
  GThreadPool *downloader; /* host path with a front: one thread */

  GMutex lock;
  GCond cond;
  /* under lock */
  NwJob *job;
  gboolean enabled;
  gboolean outstanding; /* asked, not yet arrived */
  gboolean download_queued;
  gint64 want_time, last_want_time;
  double arrival_us;  /* typical answer time (arrival_estimate), 0 = not known yet */
  double recent_us[ARRIVALS]; /* the latest answer times, a ring */
  int n_recent, next_recent;
  guint64 answers; /* answers to asks so far */
  NwFrame *newest;    /* host frame not yet taken */
  int arrived_device; /* iteration of the newest device frame (-1: none) */
  guint64 counter;    /* display frame begun last */
  gboolean have_counter;
  NwLiveStats st;
  gint64 fps_t0;
  guint64 fps_taken0;
  gboolean warned;
  NwLiveRate rate; /* asks a second at most */
};

const char *nw_live_path_name(NwLivePath p)
{
  return p == NW_LIVE_PATH_INTEROP ? "CUDA–GL interop" : "host frames";
}

static void frame_free(NwFrame *f)
{
  if (f != NULL) {
    nw_frame_clear(f);
    g_free(f);
  }
}

static guint64 frame_bytes(const NwFrame *f)
{
  guint64 b = 0;
  if (f->image != NULL)
    b += nw_volume_n_floats(f->image) * sizeof(float);
  if (f->field != NULL)
    b += nw_volume_n_floats(f->field) * sizeof(float);
  return b;
}

/* Under lock: the typical answer time, the lower median of the latest ones. Not a mean: one
 * slow answer (the first download allocates its buffers; now and then the GPU's time slice
 * goes to another context) would hold a mean above the display's wait for several frames,
 * in which the display would stop waiting and draw stale frames. */
static double arrival_estimate(const NwLiveSource *s)
{
  double v[ARRIVALS];
  const int n = s->n_recent;
  memcpy(v, s->recent_us, (size_t)n * sizeof(double));
  for (int a = 1; a < n; a++) /* insertion sort of at most five */
    for (int b = a; b > 0 && v[b - 1] > v[b]; b--) {
      const double t = v[b];
      v[b] = v[b - 1];
      v[b - 1] = t;
    }
  return v[(n - 1) / 2];
}

/* Under lock: what was asked for has arrived. */
static void arrived_locked(NwLiveSource *s)
{
  s->st.arrived++;
  if (s->outstanding) {
    const double us = (double)(g_get_monotonic_time() - s->want_time);
    s->st.last_arrival_ms = us / 1000.0;
    /* the first answer of a job also made its buffers and loaded its kernels: it says
     * nothing about the answers after it */
    if (s->answers++ > 0) {
      s->recent_us[s->next_recent] = us;
      s->next_recent = (s->next_recent + 1) % ARRIVALS;
      s->n_recent = MIN(s->n_recent + 1, ARRIVALS);
      s->arrival_us = arrival_estimate(s);
    }
    s->outstanding = FALSE;
  }
  g_cond_broadcast(&s->cond);
}

/* Under lock: keep frame as the newest host frame. Returns the one it replaces, never taken,
 * for the caller to recycle once it has let go of the lock. */
static NwFrame *keep_host_frame(NwLiveSource *s, NwFrame *frame)
{
  s->st.host_bytes += frame_bytes(frame);
  NwFrame *replaced = s->newest;
  s->newest = frame;
  arrived_locked(s);
  return replaced;
}

/* Downloader thread: the newest device frame as a reduced host frame. */
static void download_task(gpointer task, gpointer data)
{
  (void)task;
  NwLiveSource *s = data;
  g_mutex_lock(&s->lock);
  s->download_queued = FALSE;
  g_mutex_unlock(&s->lock);
  NwLiveView v;
  nw_live_front_begin_read(s->front, NULL, &v); /* a peek: the factor the publish used */
  nw_live_front_end_read(s->front, NULL);
  NwFrame *frame = g_new0(NwFrame, 1);
  g_autoptr(GError) error = NULL;
  /* the front holds the reduced frame already (set_reduce): copy it as it is */
  gboolean ok = nw_live_front_download(s->front, 1, frame, &error);
  NwFrame *replaced = NULL;
  g_mutex_lock(&s->lock);
  if (ok && frame->image != NULL) {
    s->st.reduce = v.reduce;
    replaced = keep_host_frame(s, g_steal_pointer(&frame));
  } else {
    if (!ok && !s->warned)
      g_warning("live view: %s", error->message);
    s->warned |= !ok;
    arrived_locked(s); /* nothing to show, but nothing on its way either */
  }
  g_mutex_unlock(&s->lock);
  frame_free(frame);
  nw_live_source_recycle_frame(s, replaced); /* before prepare: it may spare it the work */
  if (s->notify != NULL)
    s->notify(s->data);
  nw_live_front_prepare_download(s->front);
}

static double env_double(const char *name, double fallback)
{
  const char *env = g_getenv(name);
  return env != NULL ? g_ascii_strtod(env, NULL) : fallback;
}

static size_t host_max_voxels(size_t asked)
{
  const char *env = g_getenv("NW_LIVE_HOST_VOXELS");
  if (env != NULL) {
    guint64 v = g_ascii_strtoull(env, NULL, 10);
    if (v > 0)
      return (size_t)v;
  }
  return asked > 0 ? asked : NW_LIVE_HOST_MAX_VOXELS;
}

NwLiveSource *nw_live_source_new(const NwMethodOps *ops, gboolean interop, size_t max_voxels,
                                 NwLiveNotify notify, NwLiveTake take, gpointer data)
{
  static gint next_id = 0; /* atomic */
  NwLiveSource *s = g_new0(NwLiveSource, 1);
  s->id = (guint64)g_atomic_int_add(&next_id, 1) + 1;
  g_mutex_init(&s->lock);
  g_cond_init(&s->cond);
  s->notify = notify;
  s->take = take;
  s->data = data;
  s->enabled = TRUE;
  s->arrived_device = -1;
  s->st.shown = -1;
  s->st.reduce = 1;
  s->max_voxels = host_max_voxels(max_voxels);
  s->path = NW_LIVE_PATH_HOST;
  if (ops->device == NW_DEVICE_CUDA && ops->publish_device_frame != NULL) {
    g_autoptr(GError) error = NULL;
    s->front = nw_live_front_new(&error);
    if (s->front == NULL)
      g_debug("live view: host frames from the method: %s", error->message);
  }
  if (s->front != NULL && interop)
    s->path = NW_LIVE_PATH_INTEROP;
  else if (s->front != NULL) {
    /* host frames only: the job publishes a reduced frame, the downloader copies it */
    nw_live_front_set_reduce(s->front, s->max_voxels);
    s->downloader = g_thread_pool_new(download_task, s, 1, TRUE, NULL);
  }
  s->st.path = s->path;
  if (s->path == NW_LIVE_PATH_HOST)
    s->rate.fps = env_double("NW_LIVE_HOST_FPS", NW_LIVE_HOST_FPS);
  return s;
}

void nw_live_source_free(NwLiveSource *s)
{
  if (s == NULL)
    return;
  if (s->downloader != NULL)
    g_thread_pool_free(s->downloader, TRUE, TRUE); /* drop what is queued, wait for the rest */
  nw_live_front_free(s->front);
  frame_free(s->newest);
  g_cond_clear(&s->cond);
  g_mutex_clear(&s->lock);
  g_free(s);
}

NwLivePath nw_live_source_path(NwLiveSource *s)
{
  return s->path;
}

guint64 nw_live_source_id(NwLiveSource *s)
{
  return s->id;
}

NwLiveFront *nw_live_source_front(NwLiveSource *s)
{
  return s->front;
}

void nw_live_source_set_job(NwLiveSource *s, NwJob *job)
{
  g_mutex_lock(&s->lock);
  s->job = job;
  if (job == NULL) { /* nothing more will come: release a waiting display */
    s->outstanding = FALSE;
    g_cond_broadcast(&s->cond);
  }
  g_mutex_unlock(&s->lock);
}

void nw_live_source_recycle(NwLiveSource *s, NwVolume *v)
{
  if (s != NULL && s->front != NULL)
    nw_live_front_recycle(s->front, v);
  else
    nw_volume_free(v);
}

void nw_live_source_recycle_frame(NwLiveSource *s, NwFrame *frame)
{
  if (frame == NULL)
    return;
  nw_live_source_recycle(s, g_steal_pointer(&frame->image));
  nw_live_source_recycle(s, g_steal_pointer(&frame->field));
  frame_free(frame);
}

void nw_live_source_push(NwLiveSource *s, NwFrame *frame)
{
  gboolean queue = FALSE, arrived = TRUE;
  NwFrame *replaced = NULL;
  g_mutex_lock(&s->lock);
  if (frame->on_device && s->path == NW_LIVE_PATH_INTEROP) {
    s->arrived_device = MAX(s->arrived_device, frame->iteration);
    arrived_locked(s);
    frame_free(frame);
  } else if (frame->on_device) {
    queue = !s->download_queued; /* one download catches up with any number of publishes */
    s->download_queued = TRUE;
    arrived = FALSE; /* the download will tell */
    frame_free(frame);
  } else {
    replaced = keep_host_frame(s, frame);
  }
  g_mutex_unlock(&s->lock);
  nw_live_source_recycle_frame(s, replaced);
  if (queue)
    g_thread_pool_push(s->downloader, GINT_TO_POINTER(1), NULL);
  if (arrived && s->notify != NULL)
    s->notify(s->data);
}

/* Under lock: ask the job for a frame unless one is on its way. */
static void want_locked(NwLiveSource *s)
{
  if (s->job == NULL || s->outstanding)
    return;
  s->outstanding = TRUE;
  s->want_time = s->last_want_time = g_get_monotonic_time();
  s->st.wants++;
  nw_job_want_live_frame(s->job);
}

void nw_live_source_want(NwLiveSource *s)
{
  g_mutex_lock(&s->lock);
  want_locked(s);
  g_mutex_unlock(&s->lock);
}

/* Under lock: frames taken per second, over windows of about a second. */
static void update_fps(NwLiveSource *s, gint64 now)
{
  if (s->fps_t0 == 0) {
    s->fps_t0 = now;
    s->fps_taken0 = s->st.taken;
  } else if (now - s->fps_t0 >= G_USEC_PER_SEC) {
    s->st.fps = (double)(s->st.taken - s->fps_taken0) * G_USEC_PER_SEC / (double)(now - s->fps_t0);
    s->fps_t0 = now;
    s->fps_taken0 = s->st.taken;
  }
}

/* Under lock: a display frame that waits up to wait_us would wait for the frame it asks for:
 * the job is running and answers within that, as far as the source knows; while it does
 * not know yet (no answer after the first), it tries: wait_us once or twice at a job's
 * start costs a slow job nothing it would notice. */
static gboolean would_wait_locked(NwLiveSource *s, gint64 wait_us)
{
  return s->arrival_us <= wait_us && s->job != NULL &&
         nw_job_get_state(s->job) == NW_JOB_RUNNING;
}

/* Under lock: the frame waiting to be taken is more than an iteration behind the job (it
 * arrived after an earlier display frame stopped waiting for it). */
static gboolean pending_stale_locked(NwLiveSource *s)
{
  const int pending = s->newest != NULL
                          ? s->newest->iteration
                          : (s->arrived_device > s->st.shown ? s->arrived_device : -1);
  return pending >= 0 && nw_job_get_iteration(s->job) - pending > 1;
}

/* Under lock: up to deadline for the frame asked for. */
static void wait_locked(NwLiveSource *s, gint64 deadline)
{
  while (s->outstanding)
    if (!g_cond_wait_until(&s->cond, &s->lock, deadline))
      break;
}

/* Under lock: the newest frame for the display, if new: a host frame (into *host, for the
 * take callback) or the newest device frame. TRUE when new. */
static gboolean take_newest_locked(NwLiveSource *s, NwFrame **host)
{
  *host = g_steal_pointer(&s->newest);
  gboolean fresh = *host != NULL;
  if (*host != NULL)
    s->st.shown = (*host)->iteration;
  if (*host == NULL && s->arrived_device > s->st.shown) {
    s->st.shown = s->arrived_device;
    fresh = TRUE;
  }
  if (fresh) {
    s->st.taken++;
    s->st.lag = s->job != NULL ? MAX(nw_job_get_iteration(s->job) - s->st.shown, 0) : 0;
  }
  return fresh;
}

static void hand_over(NwLiveSource *s, NwFrame *host)
{
  if (host == NULL)
    return;
  if (s->take != NULL)
    s->take(host, s->data);
  else
    frame_free(host);
}

gboolean nw_live_source_begin_frame(NwLiveSource *s, guint64 frame_counter, gint64 wait_us)
{
  g_mutex_lock(&s->lock);
  if (s->have_counter && s->counter == frame_counter) {
    g_mutex_unlock(&s->lock);
    return FALSE;
  }
  s->have_counter = TRUE;
  s->counter = frame_counter;
  s->st.display_frames++;
  /* Ask when the cap allows; and, whatever the cap, when the frame waiting to be taken has
   * gone stale and this display frame will wait for a new one: drawing the stale one would
   * show a state several iterations old (it is drawn if the new one is late). */
  if (s->enabled && !s->outstanding && s->job != NULL &&
      (nw_live_rate_allow(&s->rate, g_get_monotonic_time()) ||
       (would_wait_locked(s, wait_us) && pending_stale_locked(s))))
    want_locked(s);
  /* A fast job answers within wait_us: wait for it, so the frame drawn is the newest. A
   * paused job answers only after a step: never wait for it. */
  if (s->outstanding && would_wait_locked(s, wait_us))
    wait_locked(s, g_get_monotonic_time() + wait_us);
  NwFrame *host = NULL;
  const gboolean fresh = take_newest_locked(s, &host);
  update_fps(s, g_get_monotonic_time());
  g_mutex_unlock(&s->lock);
  if (!fresh)
    return FALSE;
  hand_over(s, g_steal_pointer(&host));
  /* Taking it may have been slow, and a fast job moved on meanwhile: the frame would be
   * drawn stale. Ask for another and take it instead, once per display frame. Host frames:
   * the display made textures for a new grid (the first frame, a new level). Both paths: the
   * machine held this thread after the frame had come (on an H100 host an interop frame
   * was taken 6-8 ms after it arrived, and drawn three iterations old). */
  g_mutex_lock(&s->lock);
  if (s->enabled && !s->outstanding && s->job != NULL && would_wait_locked(s, wait_us) &&
      nw_job_get_iteration(s->job) - s->st.shown > 1) {
    s->st.retaken++;
    want_locked(s);
    wait_locked(s, g_get_monotonic_time() + wait_us);
    take_newest_locked(s, &host);
  }
  g_mutex_unlock(&s->lock);
  hand_over(s, host);
  return fresh;
}

gboolean nw_live_source_fresh_coming(NwLiveSource *s)
{
  g_mutex_lock(&s->lock);
  const gboolean coming =
      s->enabled && s->job != NULL && nw_job_get_state(s->job) == NW_JOB_RUNNING;
  g_mutex_unlock(&s->lock);
  return coming;
}

void nw_live_source_set_max_fps(NwLiveSource *s, double fps)
{
  g_mutex_lock(&s->lock);
  s->rate = (NwLiveRate){.fps = fps};
  g_mutex_unlock(&s->lock);
}

void nw_live_source_set_enabled(NwLiveSource *s, gboolean enabled)
{
  g_mutex_lock(&s->lock);
  s->enabled = enabled;
  g_mutex_unlock(&s->lock);
}

gboolean nw_live_source_get_enabled(NwLiveSource *s)
{
  g_mutex_lock(&s->lock);
  gboolean on = s->enabled;
  g_mutex_unlock(&s->lock);
  return on;
}

gboolean nw_live_source_display_active(NwLiveSource *s)
{
  g_mutex_lock(&s->lock);
  /* a slow job is asked once per frame it makes: allow twice its answer time too */
  gboolean active = s->enabled && s->last_want_time != 0 &&
                    g_get_monotonic_time() - s->last_want_time < ACTIVE_US + 2.0 * s->arrival_us;
  g_mutex_unlock(&s->lock);
  return active;
}

void nw_live_source_stats(NwLiveSource *s, NwLiveStats *out)
{
  g_mutex_lock(&s->lock);
  *out = s->st;
  out->arrival_ms = s->arrival_us / 1000.0;
  g_mutex_unlock(&s->lock);
}
