/* bench_live.c — the live view while a demons job runs on the same GPU, through the
 * application's own machinery (render/live_source.h: frames made only when a display frame
 * asks, a fast job's frame waited for up to 5 ms; render/gl_live.h: interop objects filled
 * once per frame): how fast new frames are drawn, how far the frame shown lags behind the
 * worker, how many bytes pass through host memory, and what drawing costs the job. Not a
 * test: a human summary on stderr, JSON with --json.
 *
 *   bench_live [--size N] [--seconds S] [--path interop|host|both] [--view-size P]
 *              [--refresh HZ] [--json F]
 *
 * The pair: N^3 voxels of 1 mm, smooth blobs, and the same warped by a known smooth field of
 * ~4 voxels. The job: demons on CUDA, one level (the full-size grid the whole time: the hard
 * case), no stopping rule. The job runs alone (3 s) for its own ms/iteration, before and
 * after the paths; then per path the main thread draws a 2x2 grid of P x P views (axial,
 * coronal, sagittal slices of the warped image, the deformation grid over the axial one, and
 * on the interop path the live iso-surface by GPU marching cubes in the fourth), glFinish per
 * display frame, either as fast as it can (--refresh 0) or paced like a display of HZ.
 * fps counts display frames that drew a new frame. Lag: the worker's completed iterations
 * read when the frame is ready to draw (host frames uploaded, interop objects filled), minus
 * the iteration that frame shows (and, reported beside it, the same read once the frame has
 * been drawn: after glFinish, the GPU's share for the display included). Paced displays tick at fixed times (a vertical blank every
 * 1/HZ s); a display frame whose work overruns a tick waits for the next one.
 *
 * Host frames go back to the source once uploaded (nw_live_source_recycle_frame), as the
 * application's layers give back the frame they replace: the downloads reuse their volumes.
 * What memory costs: minor page faults per take, of the whole process (getrusage
 * RUSAGE_SELF: every thread, the downloader's copies into fresh volumes and the driver's
 * included) and of the display thread alone (RUSAGE_THREAD), over the takes after the first
 * (which makes the textures and their upload rings); and per late frame (the `late` records)
 * the same two counts during that display frame and the CPU time the hypervisor stole from
 * the machine meanwhile (the steal column of /proc/stat's first line, summed over the CPUs,
 * in steps of a clock tick, usually 10 ms; -1 where there is none), and the involuntary
 * context switches of the process's threads and of the display thread (another thread was
 * given their core while they could run) and the CPU time the display thread ran (against
 * the frame's wall time: a thread that ran all along was slow, one that did not was held),
 * read before each display frame (~20 us, outside its timings) and after a late one.
 *
 * GL: an EGL context on the GPU's own driver (EGL device platform: no X needed). Exits 77
 * without a CUDA device or when the GL context is not on a CUDA device. Main thread draws;
 * the job's worker thread drives CUDA; host frames are downloaded by the source's thread. */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "field_renderer.h"
#include "gl_live.h"
#include "job.h"
#include "json_out.h"
#include "live_source.h"
#include "machine_counts.h"
#include "mesh_renderer.h"
#include "method_table.h"
#include "nw_cuda.h"
#include "nw_egl.h"
#include "nw_gl.h"
#include "renderer.h"
#include "view_geometry.h"

/* ---- the pair ------------------------------------------------------------------------------ */

static float blobs(double x, double y, double z, int n)
{
  double s = 0;
  for (int b = 0; b < 6; b++) {
    double cx = n * (0.3 + 0.08 * b), cy = n * (0.6 - 0.05 * b), cz = n * (0.4 + 0.03 * b);
    double r2 = (x - cx) * (x - cx) + (y - cy) * (y - cy) + (z - cz) * (z - cz);
    s += 100.0 * exp(-r2 / (2.0 * (0.06 * n + 2 * b) * (0.06 * n + 2 * b)));
  }
  return (float)s;
}

static void make_pair(int n, NwVolume **fixed, NwVolume **moving)
{
  *fixed = nw_volume_new(n, n, n, 1, NULL);
  *moving = nw_volume_new(n, n, n, 1, NULL);
  for (int k = 0; k < n; k++)
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) {
        const size_t at = nw_volume_index(*fixed, i, j, k);
        (*fixed)->data[at] = blobs(i, j, k, n);
        const double w = 2.0 * G_PI / n;
        (*moving)->data[at] =
            blobs(i + 4.0 * sin(w * j), j + 3.0 * cos(w * k), k + 2.0 * sin(w * i), n);
      }
}

/* The longest a display frame waits for the frame it asked for, as the application's views
 * (ui/nw_view.c LIVE_WAIT_US). */
#define WAIT_US 8000

/* ---- job plumbing -------------------------------------------------------------------------- */

static void on_frame(NwJob *job, NwFrame *frame, gpointer data)
{
  NwLiveSource **src = data;
  if (*src != NULL)
    nw_live_source_push(*src, frame);
  else {
    nw_frame_clear(frame);
    g_free(frame);
  }
}

static NwJob *start_job(const NwMethodInputs *in, NwLiveSource **src)
{
  g_autoptr(GError) error = NULL;
  const NwMethodOps *ops = nw_method_lookup("demons", NW_DEVICE_CUDA, &error);
  g_assert_no_error(error);
  g_autoptr(NwParams) p = nw_params_new(ops->params, ops->n_params);
  g_assert_true(nw_params_set(p, "levels", 1, NULL));
  g_assert_true(nw_params_set(p, "iterations", 100000, NULL));
  g_assert_true(nw_params_set(p, "tolerance", 0, NULL));
  static const NwJobCallbacks cb = {NULL, on_frame, NULL};
  NwJob *job = nw_job_new(ops, in, p, 0, &cb, src);
  if (*src != NULL) {
    nw_job_set_live(job, nw_live_source_front(*src));
    nw_live_source_set_job(*src, job);
  }
  nw_job_start(job, FALSE);
  if (*src != NULL) /* the first frame before the first step, as the application's run asks */
    nw_live_source_want(*src);
  return job;
}

/* Wait until the worker has done `n` iterations (the state is created). */
static void wait_iterations(NwJob *job, int n)
{
  while (nw_job_get_iteration(job) < n && nw_job_get_state(job) == NW_JOB_RUNNING)
    g_usleep(1000);
}

static void stop_job(NwJob *job, NwLiveSource *src)
{
  if (src != NULL)
    nw_live_source_set_job(src, NULL);
  nw_job_cancel(job);
  nw_job_wait(job, NULL);
  nw_job_free(job);
}

/* The job with nobody drawing, for `seconds`: its ms/iteration. */
static double job_alone_ms(const NwMethodInputs *in, double seconds)
{
  NwLiveSource *none = NULL;
  NwJob *job = start_job(in, &none);
  wait_iterations(job, 3);
  const int i0 = nw_job_get_iteration(job);
  const gint64 t0 = g_get_monotonic_time();
  g_usleep((gulong)(seconds * G_USEC_PER_SEC));
  const double ms =
      (double)(g_get_monotonic_time() - t0) / 1000.0 / MAX(nw_job_get_iteration(job) - i0, 1);
  stop_job(job, NULL);
  return ms;
}

/* ---- measurements -------------------------------------------------------------------------- */

/* What the machine has done so far, read before a display frame and after a late one. */
typedef struct {
  long faults, display_faults; /* minor page faults: the process's, the display thread's */
  double steal_ms;             /* -1: not known */
  long preempted, display_preempted; /* involuntary switches: the process's, the display's */
  double display_cpu_ms;             /* CPU time the display thread ran */
} MachineCounts;

static MachineCounts machine_counts(void)
{
  return (MachineCounts){nw_bench_minor_faults(RUSAGE_SELF), nw_bench_minor_faults(RUSAGE_THREAD),
                         nw_bench_steal_ms(),                 nw_bench_preemptions(RUSAGE_SELF),
                         nw_bench_preemptions(RUSAGE_THREAD), nw_bench_thread_cpu_ms()};
}

/* What happened between two readings (steal -1 when either is not known). */
static MachineCounts machine_since(MachineCounts before)
{
  const MachineCounts now = machine_counts();
  return (MachineCounts){now.faults - before.faults, now.display_faults - before.display_faults,
                         now.steal_ms >= 0 && before.steal_ms >= 0 ? now.steal_ms - before.steal_ms
                                                                   : -1,
                         now.preempted - before.preempted,
                         now.display_preempted - before.display_preempted,
                         now.display_cpu_ms - before.display_cpu_ms};
}

typedef struct {
  double at_s, take_ms, arrival_ms;
  int lag;
  /* host frames: the takes of that display frame, their uploads' time, the lag as taken */
  int takes, lag_at_take;
  double upload_ms, copy_ms; /* copy_ms: of upload_ms, the copies into GL's unpack buffers */
  MachineCounts during;      /* page faults and steal during that display frame */
} LateFrame;

typedef struct {
  const char *path;
  int display_frames, fresh_frames;
  double seconds, fps, ms_p50, ms_p95, ms_max;
  int lag_max, lag_hist[4]; /* 0, 1, 2, more */
  /* the same when the frame has been drawn (after the draw's glFinish): what a display would
   * show, the draw's own wait for the GPU included, on both paths */
  int drawn_lag_max, drawn_lag_hist[4];
  /* the new frames drawn more than an iteration late: when (s since the path began), how late,
   * and how long that display frame took to take its frame */
  int n_late;
  LateFrame late[32];
  guint64 host_bytes, frames_made, wants, retaken;
  int reduce;
  int worker_iterations;
  double worker_ms_per_iteration, arrival_ms;
  double upload_ms, copy_ms; /* host frames: mean per take, the upload and its copies */
  /* host frames: texture updates whose copy the GPU's copy engines made (the frames are in
   * pinned memory: render/gl_volume.c) and those the display thread made */
  guint64 gpu_copies, cpu_copies;
  /* host frames: minor page faults per take after the first, the process's and the display
   * thread's (NaN without such takes) */
  double faults_per_take, display_faults_per_take;
  double begin_ms, fill_ms, draw_ms; /* mean per display frame: taking the frame (waits
                                        included), interop fills, drawing with glFinish */
} PathResult;

/* What one measured run does per display frame. The full paths are "interop" and "host";
 * the others take it apart (--variants) to show what each piece costs the job. */
typedef struct {
  const char *name;
  gboolean frames;  /* the frame source asks the job for frames */
  gboolean interop; /* ... on the interop path (else host frames) */
  guint parts;      /* interop: which GL objects are filled (NW_GL_LIVE_*) */
  gboolean draw;    /* the views are drawn (else only the frames are taken) */
  gboolean upload;  /* host frames go into GL textures (else they stop in host memory, as
                       when the display's GL is not on the job's GPU) */
  double max_fps;   /* frames asked for a second at most (0: every display frame; -1: the
                       source's default, NW_LIVE_HOST_FPS on the host path) */
} Variant;

static const Variant variants[] = {
    {"interop", TRUE, TRUE, NW_GL_LIVE_IMAGE | NW_GL_LIVE_FIELD | NW_GL_LIVE_MESH, TRUE, TRUE, 0.0},
    {"host", TRUE, FALSE, 0, TRUE, TRUE, -1.0},
    {"publish-only", TRUE, TRUE, 0, FALSE, FALSE, 0.0},
    {"draw-only", FALSE, FALSE, 0, TRUE, TRUE, 0.0},
    {"interop-image", TRUE, TRUE, NW_GL_LIVE_IMAGE, TRUE, TRUE, 0.0},
    {"interop-image-field", TRUE, TRUE, NW_GL_LIVE_IMAGE | NW_GL_LIVE_FIELD, TRUE, TRUE, 0.0},
    {"host-no-draw", TRUE, FALSE, 0, FALSE, TRUE, -1.0},
    {"host-to-memory", TRUE, FALSE, 0, FALSE, FALSE, -1.0},
    {"host-every-frame", TRUE, FALSE, 0, TRUE, TRUE, 0.0},
    {"host-to-memory-every-frame", TRUE, FALSE, 0, FALSE, FALSE, 0.0},
    {"interop-30", TRUE, TRUE, NW_GL_LIVE_IMAGE | NW_GL_LIVE_FIELD | NW_GL_LIVE_MESH, TRUE, TRUE,
     30.0},
};

/* Host path: textures the source's take callback uploads into (display thread). */
typedef struct {
  NwGlVolume *img, *field;
  int shown;
  gboolean upload; /* FALSE: the frame stops in host memory */
  /* where a display frame's time went (reset by the loop each display frame): the takes,
   * their uploads' time, and the job's lag behind the frame as it was taken (before the
   * upload) */
  NwJob *job;
  int takes, lag_at_take;
  double upload_ms;
  /* over the run: the takes, their uploads' time, and its copies into GL's buffers */
  int all_takes;
  double all_upload_ms, all_copy_ms;
  MachineCounts after_first_take; /* the fault counts once the first take made the textures */
  NwLiveSource *src;              /* where uploaded frames go back */
} HostTextures;

/* Returns the copy's share of the update (NwGlVolume.copy_ms). */
static double upload(NwGlVolume **tex, const NwVolume *v)
{
  if (*tex != NULL && ((*tex)->nx != v->nx || (*tex)->ny != v->ny || (*tex)->nz != v->nz))
    g_clear_pointer(tex, nw_gl_volume_free);
  g_autoptr(GError) error = NULL;
  if (*tex == NULL) {
    if ((*tex = nw_gl_volume_new(v, FALSE, &error)) == NULL)
      g_error("host frame texture: %s", error->message);
    nw_gl_volume_prepare_updates(*tex, v); /* refilled every frame, as the application's */
  }
  nw_gl_volume_update(*tex, v);
  return (*tex)->copy_ms;
}

static void take_host(NwFrame *f, gpointer data)
{
  HostTextures *h = data;
  const gint64 t0 = g_get_monotonic_time();
  h->takes++;
  if (h->job != NULL)
    h->lag_at_take = nw_job_get_iteration(h->job) - f->iteration;
  if (h->upload) {
    h->all_copy_ms += upload(&h->img, f->image);
    if (f->field != NULL)
      h->all_copy_ms += upload(&h->field, f->field);
  }
  h->shown = f->iteration;
  nw_live_source_recycle_frame(h->src, f); /* uploaded: the next download refills it */
  const double ms = (double)(g_get_monotonic_time() - t0) / 1000.0;
  h->upload_ms += ms;
  h->all_upload_ms += ms;
  if (h->all_takes++ == 0)
    h->after_first_take = machine_counts();
}

/* Minor page faults per take after the first, the process's and the display thread's (NaN
 * without such takes). */
static void note_faults_per_take(const HostTextures *h, PathResult *res)
{
  const MachineCounts since = machine_since(h->after_first_take);
  const double takes = h->all_takes > 1 ? h->all_takes - 1 : NAN;
  res->faults_per_take = (double)since.faults / takes;
  res->display_faults_per_take = (double)since.display_faults / takes;
}

/* The application's 2x2: three slices of the warped image, the deformation grid on the
 * axial one, the live surface (when there is one) in the fourth. */
static void draw_views(NwRenderer *r, const NwGlVolume *img, const NwGlVolume *field,
                       const NwGlMesh *mesh, int p)
{
  glClearColor(0.06f, 0.06f, 0.08f, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
  NwVolume shape = {.nx = img->nx, .ny = img->ny, .nz = img->nz, .nc = 1};
  memcpy(shape.vox_to_ras, img->vox_to_ras, sizeof shape.vox_to_ras);
  double lo[3], hi[3];
  nw_volume_world_bounds(&shape, lo, hi);
  const NwLayerStyle style = {.colormap = NW_COLORMAP_GREY, .lo = 0, .hi = 120, .opacity = 1};
  const float grid_rgba[4] = {0.2f, 0.9f, 0.3f, 0.8f};
  for (int v = 0; v < 3; v++) {
    NwSliceGeometry g = {.plane = (NwPlane)v, .width = p, .height = p};
    for (int a = 0; a < 3; a++)
      g.center_ras[a] = 0.5 * (lo[a] + hi[a]);
    nw_slice_geometry_fit(&g, lo, hi);
    glViewport((v % 2) * p, (v / 2) * p, p, p);
    double mvp[16];
    float quad[12];
    nw_slice_geometry_mvp(&g, mvp);
    nw_slice_geometry_quad(&g, quad);
    nw_render_slice_layer(r, mvp, quad, img, &style);
    if (v == 0 && field != NULL)
      nw_render_field_grid(r, &g, field, 8, 1.0f, grid_rgba);
  }
  if (mesh != NULL && mesh->n_triangles > 0) {
    glViewport(p, p, p, p);
    NwOrbitCamera cam = {.yaw_deg = -120, .pitch_deg = 20, .width = p, .height = p};
    nw_orbit_camera_fit(&cam, lo, hi);
    double view[16], mvp[16];
    nw_orbit_camera_matrices(&cam, view, mvp);
    NwMeshStyle st = {.color = {0.9f, 0.8f, 0.7f, 1.0f}, .opacity = 1.0f};
    glEnable(GL_DEPTH_TEST);
    nw_render_mesh(r, mesh, view, mvp, &st);
    glDisable(GL_DEPTH_TEST);
  }
  glFinish();
}

/* Textures of the pair for draw-only: the fixed image and a zero field, uploaded once. */
static void static_textures(const NwMethodInputs *in, HostTextures *h)
{
  upload(&h->img, in->fixed);
  g_autoptr(NwVolume) zero = nw_volume_new_like(in->fixed, 3, NULL);
  upload(&h->field, zero);
  h->shown = 0;
}

/* How long the latest answer took from asking (-1 without a source). */
static double late_arrival_ms(NwLiveSource *src)
{
  if (src == NULL)
    return -1;
  NwLiveStats st;
  nw_live_source_stats(src, &st);
  return st.last_arrival_ms;
}

static double ms_since(gint64 t)
{
  return (double)(g_get_monotonic_time() - t) / 1000.0;
}

static void run_variant(const NwMethodInputs *in, NwRenderer *r, const Variant *var, double seconds,
                        int view, double refresh_hz, PathResult *res)
{
  g_autoptr(GError) error = NULL;
  const NwMethodOps *ops = nw_method_lookup("demons", NW_DEVICE_CUDA, &error);
  HostTextures host = {.shown = -1, .upload = var->upload};
  NwLiveSource *src =
      var->frames ? nw_live_source_new(ops, var->interop, 0, NULL, take_host, &host) : NULL;
  if (src != NULL && (nw_live_source_path(src) == NW_LIVE_PATH_INTEROP) != var->interop)
    g_error("%s: the source took the other path", var->name);
  host.src = src;
  if (src != NULL && var->max_fps >= 0)
    nw_live_source_set_max_fps(src, var->max_fps);
  if (src == NULL)
    static_textures(in, &host);
  NwJob *job = start_job(in, &src);
  host.job = job;
  wait_iterations(job, 2);
  /* the job's interop objects, one fill per frame for all parts, as the views share them */
  NwGlLive *live = nw_gl_live_new(var->parts, 60.0f);
  GArray *ms = g_array_new(FALSE, FALSE, sizeof(double));
  memset(res, 0, sizeof *res);
  res->path = var->name;
  const gint64 period = refresh_hz > 0 ? (gint64)(G_USEC_PER_SEC / refresh_hz) : 0;
  const int it0 = nw_job_get_iteration(job);
  const gint64 t0 = g_get_monotonic_time(), end = t0 + (gint64)(seconds * G_USEC_PER_SEC);
  gint64 tick = t0;                       /* the display's next vertical blank when paced */
  gint64 first_fresh = 0, last_fresh = 0; /* display frames that began the first, last new one */
  int last_shown = -1;
  double begin_ms = 0, fill_ms = 0, draw_ms = 0;
  for (guint64 counter = 1; g_get_monotonic_time() < end; counter++) {
    const MachineCounts before = machine_counts(); /* before f0: not in the frame's timings */
    const gint64 f0 = g_get_monotonic_time();
    host.takes = 0;
    host.upload_ms = 0.0;
    const double copy_before = host.all_copy_ms;
    if (src != NULL)
      nw_live_source_begin_frame(src, counter, WAIT_US);
    begin_ms += ms_since(f0);
    const gint64 f1 = g_get_monotonic_time();
    int shown = host.shown;
    const NwGlVolume *di = host.img, *df = host.field;
    const NwGlMesh *dm = NULL;
    if (src != NULL && var->interop) {
      NwLiveStats st;
      nw_live_source_stats(src, &st);
      shown = st.shown;
      if (var->parts != 0) {
        if (!nw_gl_live_update(live, nw_live_source_front(src), nw_live_source_fresh_coming(src),
                               &error))
          g_error("interop: %s", error->message);
        if (nw_gl_live_awaits_frame(live))
          nw_live_source_want(src);
        shown = nw_gl_live_iteration(live);
      }
      di = nw_gl_live_image(live);
      df = nw_gl_live_field(live);
      dm = nw_gl_live_mesh(live);
    }
    fill_ms += ms_since(f1);
    /* the lag is counted when the frame is ready to draw: after the host path's upload (in
     * the take callback) and after the interop fill */
    const int worker = nw_job_get_iteration(job);
    if (di == NULL && var->draw) /* nothing to show yet: not a display frame */
      continue;
    const gint64 f2 = g_get_monotonic_time();
    if (var->draw)
      draw_views(r, di, df, dm, view);
    draw_ms += ms_since(f2);
    const int worker_drawn = nw_job_get_iteration(job);
    const double fms = ms_since(f0);
    g_array_append_val(ms, fms);
    res->display_frames++;
    if (shown > last_shown) { /* a new frame drawn (or taken) */
      res->fresh_frames++;
      if (first_fresh == 0)
        first_fresh = f0;
      last_fresh = f0;
      const int lag = MAX(worker - shown, 0);
      res->lag_max = MAX(res->lag_max, lag);
      res->lag_hist[MIN(lag, 3)]++;
      const int drawn_lag = MAX(worker_drawn - shown, 0);
      res->drawn_lag_max = MAX(res->drawn_lag_max, drawn_lag);
      res->drawn_lag_hist[MIN(drawn_lag, 3)]++;
      if (lag > 1 && res->n_late < (int)G_N_ELEMENTS(res->late))
        res->late[res->n_late++] = (LateFrame){(double)(f0 - t0) / G_USEC_PER_SEC,
                                               (double)(f1 - f0) / 1000.0,
                                               late_arrival_ms(src),
                                               lag,
                                               host.takes,
                                               host.lag_at_take,
                                               host.upload_ms,
                                               host.all_copy_ms - copy_before,
                                               machine_since(before)};
      last_shown = shown;
    }
    if (period > 0) { /* a display of refresh_hz: the next frame at its next tick; ticks
                         come at fixed times, late work skips to the following one */
      const gint64 now = g_get_monotonic_time();
      do
        tick += period;
      while (tick <= now);
      g_usleep((gulong)(tick - now));
    }
  }
  res->seconds = (double)(g_get_monotonic_time() - t0) / G_USEC_PER_SEC;
  note_faults_per_take(&host, res);
  res->worker_iterations = nw_job_get_iteration(job) - it0;
  res->frames_made = nw_job_get_live_frames(job);
  stop_job(job, src);
  if (src != NULL) {
    NwLiveStats st;
    nw_live_source_stats(src, &st);
    res->host_bytes = st.host_bytes;
    res->wants = st.wants;
    res->retaken = st.retaken;
    res->reduce = st.reduce;
    res->arrival_ms = st.arrival_ms;
  }
  const int n = MAX(res->display_frames, 1);
  res->begin_ms = begin_ms / n;
  res->fill_ms = fill_ms / n;
  res->draw_ms = draw_ms / n;
  res->upload_ms = host.all_upload_ms / MAX(host.all_takes, 1);
  res->copy_ms = host.all_copy_ms / MAX(host.all_takes, 1);
  /* new frames a second: the intervals between the first and the last new frame over their
   * span (the time before the first frame, while the job starts, is not the display's) */
  res->fps = src == NULL             ? res->display_frames / res->seconds
             : res->fresh_frames > 1 ? (res->fresh_frames - 1) * (double)G_USEC_PER_SEC /
                                           (double)(last_fresh - first_fresh)
                                     : 0.0;
  res->worker_ms_per_iteration = 1000.0 * res->seconds / MAX(res->worker_iterations, 1);
  g_array_sort(ms, nw_bench_cmp_double);
  if (ms->len > 0) {
    res->ms_p50 = g_array_index(ms, double, ms->len / 2);
    res->ms_p95 = g_array_index(ms, double, (guint)(0.95 * (ms->len - 1)));
    res->ms_max = g_array_index(ms, double, ms->len - 1);
  }
  g_array_free(ms, TRUE);
  nw_gl_live_free(live);
  for (int t = 0; t < 2; t++) {
    const NwGlVolume *tex = t == 0 ? host.img : host.field;
    res->gpu_copies += tex != NULL ? tex->dma_updates : 0;
    res->cpu_copies += tex != NULL ? tex->cpu_updates : 0;
  }
  nw_gl_volume_free(host.img);
  nw_gl_volume_free(host.field);
  nw_live_source_free(src);
}

static void json_path(JsonBuilder *b, const PathResult *r, double alone_ms)
{
  json_builder_begin_object(b);
  nw_json_member_string(b, "path", r->path);
  nw_json_member_number(b, "seconds", r->seconds);
  nw_json_member_number(b, "display_frames", r->display_frames);
  nw_json_member_number(b, "new_frames", r->fresh_frames);
  nw_json_member_number(b, "fps", r->fps);
  json_builder_set_member_name(b, "frame_ms");
  json_builder_begin_object(b);
  nw_json_member_number(b, "p50", r->ms_p50);
  nw_json_member_number(b, "p95", r->ms_p95);
  nw_json_member_number(b, "max", r->ms_max);
  json_builder_end_object(b);
  json_builder_set_member_name(b, "display_frame_ms");
  json_builder_begin_object(b);
  nw_json_member_number(b, "take", r->begin_ms);
  nw_json_member_number(b, "fill", r->fill_ms);
  nw_json_member_number(b, "draw", r->draw_ms);
  json_builder_end_object(b);
  json_builder_set_member_name(b, "host_take_ms");
  json_builder_begin_object(b);
  nw_json_member_number(b, "upload", r->upload_ms);
  nw_json_member_number(b, "copy", r->copy_ms);
  json_builder_end_object(b);
  json_builder_set_member_name(b, "texture_copies");
  json_builder_begin_object(b);
  nw_json_member_number(b, "gpu", (double)r->gpu_copies);
  nw_json_member_number(b, "cpu", (double)r->cpu_copies);
  json_builder_end_object(b);
  json_builder_set_member_name(b, "minor_faults_per_take");
  json_builder_begin_object(b);
  nw_json_member_number(b, "process", r->faults_per_take);
  nw_json_member_number(b, "display_thread", r->display_faults_per_take);
  json_builder_end_object(b);
  json_builder_set_member_name(b, "lag_iterations");
  json_builder_begin_object(b);
  nw_json_member_number(b, "max", r->lag_max);
  static const char *const bins[4] = {"0", "1", "2", "more"};
  for (int i = 0; i < 4; i++)
    nw_json_member_number(b, bins[i], r->lag_hist[i]);
  json_builder_set_member_name(b, "late");
  json_builder_begin_array(b);
  for (int i = 0; i < r->n_late; i++) {
    json_builder_begin_object(b);
    nw_json_member_number(b, "at_s", r->late[i].at_s);
    nw_json_member_number(b, "lag", r->late[i].lag);
    nw_json_member_number(b, "take_ms", r->late[i].take_ms);
    nw_json_member_number(b, "last_arrival_ms", r->late[i].arrival_ms);
    nw_json_member_number(b, "takes", r->late[i].takes);
    nw_json_member_number(b, "lag_at_take", r->late[i].lag_at_take);
    nw_json_member_number(b, "upload_ms", r->late[i].upload_ms);
    nw_json_member_number(b, "copy_ms", r->late[i].copy_ms);
    nw_json_member_number(b, "minor_faults", (double)r->late[i].during.faults);
    nw_json_member_number(b, "minor_faults_display_thread",
                          (double)r->late[i].during.display_faults);
    nw_json_member_number(b, "steal_ms", r->late[i].during.steal_ms);
    nw_json_member_number(b, "preemptions", (double)r->late[i].during.preempted);
    nw_json_member_number(b, "preemptions_display_thread",
                          (double)r->late[i].during.display_preempted);
    nw_json_member_number(b, "display_thread_cpu_ms", r->late[i].during.display_cpu_ms);
    json_builder_end_object(b);
  }
  json_builder_end_array(b);
  json_builder_end_object(b);
  json_builder_set_member_name(b, "lag_iterations_when_drawn");
  json_builder_begin_object(b);
  nw_json_member_number(b, "max", r->drawn_lag_max);
  for (int i = 0; i < 4; i++)
    nw_json_member_number(b, bins[i], r->drawn_lag_hist[i]);
  json_builder_end_object(b);
  nw_json_member_number(b, "frames_made", (double)r->frames_made);
  nw_json_member_number(b, "frames_asked", (double)r->wants);
  nw_json_member_number(b, "frames_retaken", (double)r->retaken);
  nw_json_member_number(b, "host_bytes_for_display", (double)r->host_bytes);
  nw_json_member_number(b, "host_frame_reduce", r->reduce);
  nw_json_member_number(b, "ask_to_frame_ms", r->arrival_ms);
  nw_json_member_number(b, "worker_iterations", r->worker_iterations);
  nw_json_member_number(b, "worker_ms_per_iteration", r->worker_ms_per_iteration);
  nw_json_member_number(b, "job_slowdown", r->worker_ms_per_iteration / alone_ms);
  json_builder_end_object(b);
}

int main(int argc, char **argv)
{
  int size = 256, view = 512;
  double seconds = 10, refresh = 0;
  gboolean all_variants = FALSE;
  g_autofree char *path = g_strdup("both"), *json = NULL;
  GOptionEntry entries[] = {
      {"size", 0, 0, G_OPTION_ARG_INT, &size, "Edge of the cubic pair in voxels (256)", "N"},
      {"seconds", 0, 0, G_OPTION_ARG_DOUBLE, &seconds, "Drawing time per path (10)", "S"},
      {"path", 0, 0, G_OPTION_ARG_STRING, &path, "interop, host or both (both)", "PATH"},
      {"view-size", 0, 0, G_OPTION_ARG_INT, &view, "Pixels per view edge (512)", "P"},
      {"refresh", 0, 0, G_OPTION_ARG_DOUBLE, &refresh,
       "Pace display frames like a display of HZ (0: as fast as possible)", "HZ"},
      {"variants", 0, 0, G_OPTION_ARG_NONE, &all_variants,
       "Also the variants that take the paths apart (publish-only, draw-only, ...)", NULL},
      {"json", 0, 0, G_OPTION_ARG_FILENAME, &json, "Write the figures as JSON here", "FILE"},
      {NULL}};
  g_autoptr(GOptionContext) ctx = g_option_context_new("- live view while demons runs");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error) || size < 16 || view < 16 ||
      seconds <= 0 || refresh < 0) {
    fprintf(stderr, "bench_live: %s\n",
            error ? error->message : "bad size, view, seconds or refresh");
    return 2;
  }
  nw_methods_register_builtin();
  char gpu[256];
  if (!nw_cuda_probe(gpu, sizeof gpu)) {
    fprintf(stderr, "bench_live: no CUDA device (%s)\n", gpu);
    return 77;
  }
  char no_gl[256];
  if (!nw_egl_make_current(TRUE, no_gl, sizeof no_gl)) {
    fprintf(stderr, "bench_live: %s\n", no_gl);
    return 77;
  }
  if (!nw_gl_init(&error)) {
    fprintf(stderr, "bench_live: %s\n", error->message);
    return 77;
  }
  char why[256];
  const gboolean can_interop = nw_gl_live_available(why, sizeof why);
  const char *renderer = (const char *)glGetString(GL_RENDERER);
  fprintf(stderr, "bench_live: %s, GL renderer %s, interop %s\n", gpu, renderer,
          can_interop ? "yes" : why);
  NwGlTarget target;
  NwRenderer *r = NULL;
  if (!nw_gl_target_init(&target, 2 * view, 2 * view, &error) ||
      (r = nw_renderer_new(&error)) == NULL) {
    fprintf(stderr, "bench_live: %s\n", error->message);
    return 1;
  }
  NwVolume *fixed, *moving;
  make_pair(size, &fixed, &moving);
  NwMethodInputs in = {.fixed = fixed, .moving = moving};

  /* the job alone (no live frames, no drawing), before the paths and after them */
  const double alone_before = job_alone_ms(&in, 3.0);
  fprintf(stderr, "job alone: %.3f ms/iteration at %d^3\n", alone_before, size);
  PathResult res[G_N_ELEMENTS(variants)];
  int n_paths = 0;
  for (guint i = 0; i < G_N_ELEMENTS(variants); i++) {
    const Variant *v = &variants[i];
    const gboolean full = i < 2;
    if (full && strcmp(path, "both") != 0 && strcmp(path, v->name) != 0)
      continue;
    if (!full && !all_variants)
      continue;
    if (v->frames && v->interop && !can_interop) {
      fprintf(stderr, "%s: skipped (%s)\n", v->name, why);
      continue;
    }
    run_variant(&in, r, v, seconds, view, refresh, &res[n_paths++]);
  }
  const double alone_after = job_alone_ms(&in, 3.0);
  const double alone_ms = 0.5 * (alone_before + alone_after);
  fprintf(stderr, "job alone again: %.3f ms/iteration (reference: the mean, %.3f)\n", alone_after,
          alone_ms);

  g_autoptr(JsonBuilder) jb = json_builder_new();
  json_builder_begin_object(jb);
  nw_json_member_string(jb, "bench", "live");
  nw_json_member_string(jb, "gpu", gpu);
  nw_json_member_string(jb, "gl_renderer", renderer);
  nw_json_member_number(jb, "size", size);
  nw_json_member_number(jb, "view_px", view);
  nw_json_member_number(jb, "refresh_hz", refresh);
  json_builder_set_member_name(jb, "job_alone_ms_per_iteration");
  json_builder_begin_object(jb);
  nw_json_member_number(jb, "before", alone_before);
  nw_json_member_number(jb, "after", alone_after);
  json_builder_end_object(jb);
  json_builder_set_member_name(jb, "paths");
  json_builder_begin_array(jb);
  for (int i = 0; i < n_paths; i++) {
    const PathResult *p = &res[i];
    fprintf(stderr,
            "%-26s %6.1f fps (%d display frames, frame p50 %.2f ms, p95 %.2f; take %.2f fill %.2f "
            "draw %.2f)  lag max %d (0:%d 1:%d 2:%d >2:%d; drawn: max %d, >1: %d)  frames made "
            "%" G_GUINT64_FORMAT
            "  host bytes %" G_GUINT64_FORMAT " (1/%d per axis, %.2f ms to arrive)  job %.3f "
            "ms/iteration = %.3fx alone; a take's upload %.2f ms (copy %.2f; texture copies by "
            "the GPU %" G_GUINT64_FORMAT ", the CPU %" G_GUINT64_FORMAT "), minor faults %.0f "
            "(display thread %.0f)\n",
            p->path, p->fps, p->display_frames, p->ms_p50, p->ms_p95, p->begin_ms, p->fill_ms,
            p->draw_ms, p->lag_max, p->lag_hist[0], p->lag_hist[1], p->lag_hist[2], p->lag_hist[3],
            p->drawn_lag_max, p->drawn_lag_hist[2] + p->drawn_lag_hist[3],
            p->frames_made, p->host_bytes, p->reduce, p->arrival_ms, p->worker_ms_per_iteration,
            p->worker_ms_per_iteration / alone_ms, p->upload_ms, p->copy_ms, p->gpu_copies,
            p->cpu_copies, p->faults_per_take,
            p->display_faults_per_take);
    json_path(jb, p, alone_ms);
  }
  json_builder_end_array(jb);
  json_builder_end_object(jb);
  g_autofree char *text = nw_json_to_string(jb, TRUE);
  if (json != NULL && !g_file_set_contents(json, text, -1, &error)) {
    fprintf(stderr, "bench_live: %s\n", error->message);
    return 1;
  }
  printf("%s\n", text);
  nw_renderer_free(r);
  nw_gl_target_clear(&target);
  nw_volume_free(fixed);
  nw_volume_free(moving);
  return 0;
}
