/* bench_live.c — the live view while a demons job runs on the same GPU: how fast the views
 * draw, how far the frame shown lags behind the worker, and how many bytes of image and
 * field data pass through host memory for display, on the CUDA–GL interop path and on the
 * host-frame path. Not a test: a human summary on stderr, JSON with --json.
 *
 *   bench_live [--size N] [--seconds S] [--path interop|host|both] [--view-size P] [--json F]
 *
 * The pair: N^3 voxels of 1 mm, smooth blobs, and the same warped by a known smooth field of
 * ~4 voxels. The job: demons on CUDA, one level (the full-size grid the whole time: the hard
 * case), no stopping rule. First the job runs alone (3 s) for its own ms/iteration; then per
 * path the main thread draws as fast as it can into an offscreen 2x2 grid of P x P views
 * (axial, coronal, sagittal slices of the warped image and the deformation grid over the
 * axial one, as the application's views), glFinish per frame so each frame is really done.
 * Lag: the worker's completed iterations read just before the frame's data is taken, minus
 * the iteration the frame shows.
 *
 * GL: an EGL context on the GPU's own driver (EGL device platform: no X needed). Exits 77
 * without a CUDA device or when the GL context is not on a CUDA device. Main thread draws;
 * the job's worker thread drives CUDA. */
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "field_renderer.h"
#include "gl_live.h"
#include "job.h"
#include "method_table.h"
#include "nw_cuda.h"
#include "nw_cuda_gl.h"
#include "nw_gl.h"
#include "renderer.h"
#include "view_geometry.h"

/* ---- GL context ---------------------------------------------------------------------------- */

static gboolean egl_context(void)
{
  PFNEGLQUERYDEVICESEXTPROC query =
      (PFNEGLQUERYDEVICESEXTPROC)eglGetProcAddress("eglQueryDevicesEXT");
  PFNEGLGETPLATFORMDISPLAYEXTPROC get_display =
      (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
  EGLDeviceEXT devices[8];
  EGLint n = 0, major, minor;
  EGLDisplay d = EGL_NO_DISPLAY;
  if (query != NULL && get_display != NULL && query(8, devices, &n))
    for (int i = 0; i < n && d == EGL_NO_DISPLAY; i++) {
      d = get_display(EGL_PLATFORM_DEVICE_EXT, devices[i], NULL);
      if (d != EGL_NO_DISPLAY && !eglInitialize(d, &major, &minor))
        d = EGL_NO_DISPLAY;
    }
  if (d == EGL_NO_DISPLAY) {
    d = eglGetDisplay(EGL_DEFAULT_DISPLAY);
    if (d == EGL_NO_DISPLAY || !eglInitialize(d, &major, &minor))
      return FALSE;
  }
  const EGLint cfg_attr[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_SURFACE_TYPE, 0, EGL_NONE};
  EGLConfig cfg;
  if (!eglBindAPI(EGL_OPENGL_API) || !eglChooseConfig(d, cfg_attr, &cfg, 1, &n) || n < 1)
    return FALSE;
  const EGLint ctx_attr[] = {EGL_CONTEXT_MAJOR_VERSION,       3, EGL_CONTEXT_MINOR_VERSION, 3,
                             EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                             EGL_NONE};
  EGLContext ctx = eglCreateContext(d, cfg, EGL_NO_CONTEXT, ctx_attr);
  return ctx != EGL_NO_CONTEXT && eglMakeCurrent(d, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx);
}

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
        (*moving)->data[at] = blobs(i + 4.0 * sin(w * j), j + 3.0 * cos(w * k), k + 2.0 * sin(w * i), n);
      }
}

/* ---- job plumbing -------------------------------------------------------------------------- */

typedef struct {
  GMutex lock;
  NwFrame *newest;          /* host path: the newest frame not yet drawn */
  guint64 host_bytes_made;  /* image + field bytes of every host frame the worker made */
  guint64 frames_made, frames_dropped, device_frames;
} Frames;

static guint64 frame_bytes(const NwFrame *f)
{
  guint64 b = 0;
  if (f->image != NULL)
    b += nw_volume_n_floats(f->image) * sizeof(float);
  if (f->field != NULL)
    b += nw_volume_n_floats(f->field) * sizeof(float);
  return b;
}

static void frame_free(NwFrame *f)
{
  if (f != NULL) {
    nw_frame_clear(f);
    g_free(f);
  }
}

static void on_frame(NwJob *job, NwFrame *frame, gpointer data)
{
  Frames *fr = data;
  g_mutex_lock(&fr->lock);
  fr->frames_made++;
  if (frame->on_device) {
    fr->device_frames++;
    frame_free(frame);
  } else {
    fr->host_bytes_made += frame_bytes(frame);
    if (fr->newest != NULL)
      fr->frames_dropped++;
    frame_free(fr->newest);
    fr->newest = frame;
  }
  g_mutex_unlock(&fr->lock);
}

static NwJob *start_job(const NwMethodInputs *in, Frames *fr, NwLiveFront *front, gboolean live)
{
  g_autoptr(GError) error = NULL;
  const NwMethodOps *ops = nw_method_lookup("demons", NW_DEVICE_CUDA, &error);
  g_assert_no_error(error);
  g_autoptr(NwParams) p = nw_params_new(ops->params, ops->n_params);
  g_assert_true(nw_params_set(p, "levels", 1, NULL));
  g_assert_true(nw_params_set(p, "iterations", 100000, NULL));
  g_assert_true(nw_params_set(p, "tolerance", 0, NULL));
  static const NwJobCallbacks cb = {NULL, on_frame, NULL};
  NwJob *job = nw_job_new(ops, in, p, 0, &cb, fr);
  if (live)
    nw_job_set_live(job, front);
  nw_job_start(job, FALSE);
  return job;
}

/* Wait until the worker has done `n` iterations (the state is created, the first frame is
 * out). */
static void wait_iterations(NwJob *job, int n)
{
  while (nw_job_get_iteration(job) < n && nw_job_get_state(job) == NW_JOB_RUNNING)
    g_usleep(1000);
}

static void stop_job(NwJob *job)
{
  nw_job_cancel(job);
  nw_job_wait(job, NULL);
  nw_job_free(job);
}

/* ---- measurements -------------------------------------------------------------------------- */

typedef struct {
  const char *path;
  int frames;
  double seconds, fps, ms_p50, ms_p95, ms_max;
  int lag_max, lag_hist[4]; /* 0, 1, 2, more */
  guint64 host_bytes_made, host_bytes_uploaded, device_frames, host_frames, dropped;
  int worker_iterations;
  double worker_ms_per_iteration;
} PathResult;

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The application's 2x2: three slices of the warped image, the deformation grid on the
 * axial one. */
static void draw_views(NwRenderer *r, const NwGlVolume *img, const NwGlVolume *field, int p)
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
  glFinish();
}

static void run_path(const NwMethodInputs *in, NwRenderer *r, const char *path, double seconds,
                     int view, PathResult *res)
{
  const gboolean interop = strcmp(path, "interop") == 0;
  g_autoptr(GError) error = NULL;
  Frames fr = {0};
  g_mutex_init(&fr.lock);
  NwLiveFront *front = interop ? nw_live_front_new(&error) : NULL;
  g_assert_no_error(error);
  NwJob *job = start_job(in, &fr, front, TRUE);
  wait_iterations(job, 2);
  NwGlLive *live_img = nw_gl_live_new(NW_GL_LIVE_IMAGE, 0), *live_field = nw_gl_live_new(NW_GL_LIVE_FIELD, 0);
  NwGlVolume *img = NULL, *field = NULL; /* host path */
  GArray *ms = g_array_new(FALSE, FALSE, sizeof(double));
  memset(res, 0, sizeof *res);
  res->path = path;
  const int it0 = nw_job_get_iteration(job);
  const gint64 t0 = g_get_monotonic_time(), end = t0 + (gint64)(seconds * G_USEC_PER_SEC);
  while (g_get_monotonic_time() < end) {
    const gint64 f0 = g_get_monotonic_time();
    const int worker = nw_job_get_iteration(job);
    int shown = -1;
    const NwGlVolume *di = NULL, *df = NULL;
    if (interop) {
      if (!nw_gl_live_update(live_img, front, &error) || !nw_gl_live_update(live_field, front, &error))
        g_error("interop: %s", error->message);
      shown = MIN(nw_gl_live_iteration(live_img), nw_gl_live_iteration(live_field));
      di = nw_gl_live_image(live_img);
      df = nw_gl_live_field(live_field);
    } else {
      g_mutex_lock(&fr.lock);
      NwFrame *f = g_steal_pointer(&fr.newest);
      g_mutex_unlock(&fr.lock);
      if (f != NULL) {
        if (img == NULL) {
          img = nw_gl_volume_new(f->image, FALSE, &error);
          field = nw_gl_volume_new(f->field, FALSE, &error);
          g_assert_no_error(error);
        } else {
          nw_gl_volume_update(img, f->image);
          nw_gl_volume_update(field, f->field);
        }
        res->host_bytes_uploaded += frame_bytes(f);
        res->host_frames++;
        shown = f->iteration;
        frame_free(f);
      } else {
        shown = res->frames > 0 ? -2 : -1; /* nothing new: the last frame stays */
      }
      di = img;
      df = field;
    }
    if (di == NULL)
      continue;
    draw_views(r, di, df, view);
    const double fms = (double)(g_get_monotonic_time() - f0) / 1000.0;
    g_array_append_val(ms, fms);
    res->frames++;
    if (shown >= 0) {
      int lag = MAX(worker - shown, 0);
      res->lag_max = MAX(res->lag_max, lag);
      res->lag_hist[MIN(lag, 3)]++;
    }
  }
  res->seconds = (double)(g_get_monotonic_time() - t0) / G_USEC_PER_SEC;
  res->worker_iterations = nw_job_get_iteration(job) - it0;
  stop_job(job);
  res->fps = res->frames / res->seconds;
  res->worker_ms_per_iteration = 1000.0 * res->seconds / MAX(res->worker_iterations, 1);
  g_array_sort(ms, cmp_double);
  if (ms->len > 0) {
    res->ms_p50 = g_array_index(ms, double, ms->len / 2);
    res->ms_p95 = g_array_index(ms, double, (guint)(0.95 * (ms->len - 1)));
    res->ms_max = g_array_index(ms, double, ms->len - 1);
  }
  res->host_bytes_made = fr.host_bytes_made;
  res->device_frames = fr.device_frames;
  res->dropped = fr.frames_dropped;
  frame_free(fr.newest);
  g_array_free(ms, TRUE);
  nw_gl_live_free(live_img);
  nw_gl_live_free(live_field);
  nw_gl_volume_free(img);
  nw_gl_volume_free(field);
  nw_live_front_free(front);
  g_mutex_clear(&fr.lock);
}

static void json_path(GString *s, const PathResult *r)
{
  g_string_append_printf(
      s,
      "{\"path\": \"%s\", \"frames\": %d, \"seconds\": %.3f, \"fps\": %.1f, "
      "\"frame_ms\": {\"p50\": %.3f, \"p95\": %.3f, \"max\": %.3f}, "
      "\"lag_iterations\": {\"max\": %d, \"0\": %d, \"1\": %d, \"2\": %d, \"more\": %d}, "
      "\"host_bytes_for_display\": {\"made\": %" G_GUINT64_FORMAT ", \"uploaded\": %" G_GUINT64_FORMAT
      ", \"per_frame\": %.0f}, \"device_frames\": %" G_GUINT64_FORMAT ", \"host_frames_drawn\": %"
      G_GUINT64_FORMAT ", \"host_frames_dropped\": %" G_GUINT64_FORMAT
      ", \"worker_iterations\": %d, \"worker_ms_per_iteration\": %.3f}",
      r->path, r->frames, r->seconds, r->fps, r->ms_p50, r->ms_p95, r->ms_max, r->lag_max,
      r->lag_hist[0], r->lag_hist[1], r->lag_hist[2], r->lag_hist[3], r->host_bytes_made,
      r->host_bytes_uploaded, r->frames > 0 ? (double)r->host_bytes_made / r->frames : 0.0,
      r->device_frames, r->host_frames, r->dropped, r->worker_iterations,
      r->worker_ms_per_iteration);
}

int main(int argc, char **argv)
{
  int size = 256, view = 512;
  double seconds = 10;
  g_autofree char *path = g_strdup("both"), *json = NULL;
  GOptionEntry entries[] = {
      {"size", 0, 0, G_OPTION_ARG_INT, &size, "Edge of the cubic pair in voxels (256)", "N"},
      {"seconds", 0, 0, G_OPTION_ARG_DOUBLE, &seconds, "Drawing time per path (10)", "S"},
      {"path", 0, 0, G_OPTION_ARG_STRING, &path, "interop, host or both (both)", "PATH"},
      {"view-size", 0, 0, G_OPTION_ARG_INT, &view, "Pixels per view edge (512)", "P"},
      {"json", 0, 0, G_OPTION_ARG_FILENAME, &json, "Write the figures as JSON here", "FILE"},
      {NULL}};
  g_autoptr(GOptionContext) ctx = g_option_context_new("- live view while demons runs");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error) || size < 16 || view < 16 ||
      seconds <= 0) {
    fprintf(stderr, "bench_live: %s\n", error ? error->message : "bad size, view or seconds");
    return 2;
  }
  nw_methods_register_builtin();
  char gpu[256];
  if (!nw_cuda_probe(gpu, sizeof gpu)) {
    fprintf(stderr, "bench_live: no CUDA device (%s)\n", gpu);
    return 77;
  }
  if (!egl_context() || !nw_gl_init(&error)) {
    fprintf(stderr, "bench_live: no OpenGL 3.3 context through EGL%s%s\n", error ? ": " : "",
            error ? error->message : "");
    return 77;
  }
  char why[256];
  const gboolean can_interop = nw_cuda_gl_available(why, sizeof why);
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

  /* the job alone: no live frames, no drawing */
  Frames none = {0};
  g_mutex_init(&none.lock);
  NwJob *job = start_job(&in, &none, NULL, FALSE);
  wait_iterations(job, 3);
  int i0 = nw_job_get_iteration(job);
  gint64 t0 = g_get_monotonic_time();
  g_usleep(3 * G_USEC_PER_SEC);
  double alone_ms = (double)(g_get_monotonic_time() - t0) / 1000.0 /
                    MAX(nw_job_get_iteration(job) - i0, 1);
  stop_job(job);
  fprintf(stderr, "job alone: %.3f ms/iteration at %d^3\n", alone_ms, size);

  GString *s = g_string_new(NULL);
  g_string_append_printf(s,
                         "{\"bench\": \"live\", \"gpu\": \"%s\", \"gl_renderer\": \"%s\", "
                         "\"size\": %d, \"view_px\": %d, \"views\": 3, "
                         "\"job_alone_ms_per_iteration\": %.3f, \"paths\": [",
                         gpu, renderer, size, view, alone_ms);
  const char *paths[2] = {"interop", "host"};
  int written = 0;
  for (int i = 0; i < 2; i++) {
    if (strcmp(path, "both") != 0 && strcmp(path, paths[i]) != 0)
      continue;
    if (i == 0 && !can_interop) {
      fprintf(stderr, "interop: skipped (%s)\n", why);
      continue;
    }
    PathResult res;
    run_path(&in, r, paths[i], seconds, view, &res);
    fprintf(stderr,
            "%-8s %6.1f fps (frame p50 %.2f ms, p95 %.2f, max %.2f)  lag max %d (0:%d 1:%d "
            "2:%d >2:%d)  host bytes for display %" G_GUINT64_FORMAT
            "  worker %.3f ms/iteration\n",
            res.path, res.fps, res.ms_p50, res.ms_p95, res.ms_max, res.lag_max, res.lag_hist[0],
            res.lag_hist[1], res.lag_hist[2], res.lag_hist[3], res.host_bytes_made,
            res.worker_ms_per_iteration);
    if (written++)
      g_string_append(s, ", ");
    json_path(s, &res);
  }
  g_string_append(s, "]}\n");
  if (json != NULL && !g_file_set_contents(json, s->str, -1, &error)) {
    fprintf(stderr, "bench_live: %s\n", error->message);
    return 1;
  }
  printf("%s", s->str);
  g_string_free(s, TRUE);
  nw_renderer_free(r);
  nw_gl_target_clear(&target);
  nw_volume_free(fixed);
  nw_volume_free(moving);
  return 0;
}
