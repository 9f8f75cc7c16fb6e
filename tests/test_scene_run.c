/* test_scene_run.c — a run (scene/nw_run.h) on a scene, without a display, a GL context or a
 * GPU: a CPU demons job started through NwRun on a small pair, its host frames pulled through
 * the run's frame source once per simulated display frame (nw_view_render_begin_frame, what
 * the views call as a display frame begins; render/live_source.h), the run's layers taking
 * the frames as they are drawn and, when the job ends, the full-resolution result and its
 * iso-surface; the layers go with the run. Also: a paused start shows the coarse state at
 * once and steps one iteration at a time. Main thread, the job on its worker. */
#include <math.h>
#include <string.h>

#include "io_nifti.h"
#include "marching_cubes.h"
#include "method_table.h"
#include "nw_error.h"
#include "nw_run.h"
#include "nw_scene.h"
#include "nw_view_render.h"
#include "testutil.h"

#define N 24 /* voxels per axis, 2 mm */

/* A bright ball of radius 12 mm centred x_shift voxels right of the grid's middle, on a
 * dark background (an iso-surface between them). */
static NwVolume *ball(double x_shift)
{
  NwVolume *v = nw_volume_new(N, N, N, 1, NULL);
  nw_volume_set_spacing(v, 2, 2, 2);
  const double c = 0.5 * (N - 1);
  for (int k = 0; k < N; k++)
    for (int j = 0; j < N; j++)
      for (int i = 0; i < N; i++) {
        const double dx = i - c - x_shift, dy = j - c, dz = k - c;
        const double r = sqrt(dx * dx + dy * dy + dz * dz);
        v->data[nw_volume_index(v, i, j, k)] = (float)(100.0 / (1.0 + exp(2.0 * (r - 6.0))));
      }
  return v;
}

static double mse(const NwVolume *a, const NwVolume *b)
{
  double s = 0.0;
  for (size_t i = 0; i < nw_volume_n_voxels(a); i++)
    s += ((double)a->data[i] - b->data[i]) * ((double)a->data[i] - b->data[i]);
  return s / (double)nw_volume_n_voxels(a);
}

typedef struct {
  NwScene *scene;
  NwLayer *fixed, *moving;
  NwRun *run;
  int changed, layers_changed, iterations;
  NwJobState last_state;
} Rig;

static void count(gpointer instance, int *counter)
{
  (*counter)++;
}

static void on_iteration(NwRun *r, gpointer report, double ms, Rig *rig)
{
  rig->iterations++;
}

static void on_state(NwRun *r, int state, Rig *rig)
{
  rig->last_state = (NwJobState)state;
}

static void rig_init(Rig *rig)
{
  memset(rig, 0, sizeof *rig);
  nw_methods_register_builtin();
  rig->scene = nw_scene_new();
  rig->fixed = nw_layer_new_volume(NW_LAYER_IMAGE, "fixed", ball(0.0));
  rig->moving = nw_layer_new_volume(NW_LAYER_IMAGE, "moving", ball(1.5));
  nw_scene_add_layer(rig->scene, rig->fixed);
  nw_scene_add_layer(rig->scene, rig->moving);
  g_signal_connect(rig->scene, "changed", G_CALLBACK(count), &rig->changed);
  g_signal_connect(rig->scene, "layers-changed", G_CALLBACK(count), &rig->layers_changed);
  rig->run = nw_run_new(rig->scene, "1");
  g_signal_connect(rig->run, "iteration", G_CALLBACK(on_iteration), rig);
  g_signal_connect(rig->run, "state-changed", G_CALLBACK(on_state), rig);
}

/* The main loop's pending messages (the worker's reports, redraw requests, surfaces). */
static void drain(void)
{
  while (g_main_context_iteration(NULL, FALSE))
    ;
}

/* Dispose of the run now (its layers leave the scene, as when the window closes), then let
 * the messages and surface tasks that still hold it come back, so that nothing leaks. */
static void drop_run(Rig *rig)
{
  gpointer alive = rig->run;
  g_object_add_weak_pointer(G_OBJECT(rig->run), &alive);
  g_object_run_dispose(G_OBJECT(rig->run));
  g_clear_object(&rig->run);
  const gint64 until = g_get_monotonic_time() + 30 * G_USEC_PER_SEC;
  while (alive != NULL && g_get_monotonic_time() < until) {
    drain();
    g_usleep(1000);
  }
  g_assert_null(alive);
}

static void rig_clear(Rig *rig)
{
  if (rig->run != NULL)
    drop_run(rig);
  g_clear_object(&rig->fixed);
  g_clear_object(&rig->moving);
  g_clear_object(&rig->scene);
}

/* The ended job's iso-surface, made on a worker from the result, reaches the surface layer:
 * the same triangles as marching cubes of the warped layer at the fixed image's level. */
static void wait_result_surface(Rig *rig)
{
  NwLayer *warped = nw_run_get_warped(rig->run);
  g_autoptr(GError) error = NULL;
  g_autoptr(NwSurface) want =
      nw_marching_cubes(nw_layer_get_volume(warped), nw_layer_surface_iso(rig->fixed), &error);
  g_assert_no_error(error);
  g_assert_cmpint(want->n_triangles, >, 0);
  const gint64 until = g_get_monotonic_time() + 30 * G_USEC_PER_SEC;
  NwLayer *surface = NULL;
  while (g_get_monotonic_time() < until) {
    drain();
    surface = nw_run_get_surface(rig->run);
    if (surface != NULL && nw_layer_get_surface(surface)->n_triangles == want->n_triangles &&
        memcmp(nw_layer_get_surface(surface)->vertices, want->vertices,
               sizeof(float) * 3 * want->n_vertices) == 0)
      break;
    g_usleep(2000);
  }
  g_assert_nonnull(surface);
  g_assert_cmpint(nw_layer_get_surface(surface)->n_triangles, ==, want->n_triangles);
}

static NwParams *demons_params(int iterations)
{
  const NwMethodOps *ops = nw_method_lookup("demons", NW_DEVICE_CPU, NULL);
  NwParams *p = nw_params_new(ops->params, ops->n_params);
  g_assert_true(nw_params_set(p, "levels", 1, NULL));
  g_assert_true(nw_params_set(p, "iterations", iterations, NULL));
  g_assert_true(nw_params_set(p, "tolerance", 0.0, NULL)); /* every iteration, no early stop */
  return p;
}

static void test_run_live_and_result(void)
{
  Rig rig;
  rig_init(&rig);
  const int iterations = 40;
  g_autoptr(NwParams) params = demons_params(iterations);
  const NwMethodOps *ops = nw_method_lookup("demons", NW_DEVICE_CPU, NULL);
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_run_start(rig.run, ops, params, FALSE, &error));
  g_assert_no_error(error);
  g_assert_cmpint(nw_run_get_state(rig.run), ==, NW_JOB_RUNNING);

  /* the run's layers are in the scene, the warped image compared with the fixed one and
   * fed by the run's frame source (host frames: no view found interop) */
  NwLayer *warped = nw_run_get_warped(rig.run), *field = nw_run_get_field(rig.run);
  g_assert_nonnull(warped);
  g_assert_nonnull(field);
  g_assert_cmpuint(nw_scene_n_layers(rig.scene), ==, 4);
  g_assert_true(nw_scene_get_compare_a(rig.scene) == rig.fixed);
  g_assert_true(nw_scene_get_compare_b(rig.scene) == warped);
  g_assert_cmpstr(nw_run_get_frame_path(rig.run), ==, "host frames");
  g_assert_nonnull(nw_layer_get_live(warped));
  g_assert_true(nw_layer_get_live(field) == nw_layer_get_live(warped));
  g_assert_cmpint(nw_layer_get_field_show(field), ==, NW_FIELD_SHOW_GRID);
  g_assert_cmpuint(nw_layer_get_generation(warped), ==, 0);
  g_assert_cmpfloat(nw_layer_get_style(warped)->hi, ==, nw_layer_get_style(rig.fixed)->hi);

  /* a display at about 500 Hz: one frame asked for per display frame, taken into the layers
   * as the next display frame begins */
  guint64 display_frames = 0;
  guint generation = 0, taken_while_running = 0;
  const gint64 give_up = g_get_monotonic_time() + 120 * G_USEC_PER_SEC;
  while (nw_run_is_active(rig.run) && g_get_monotonic_time() < give_up) {
    nw_view_render_begin_frame(rig.scene, display_frames, 0);
    nw_view_render_begin_frame(rig.scene, display_frames, 0); /* a second view: no new frame */
    display_frames++;
    if (nw_layer_get_generation(warped) != generation) {
      generation = nw_layer_get_generation(warped);
      taken_while_running++;
      /* a whole frame on the fixed grid (one level), of an iteration the job has done */
      const NwVolume *v = nw_layer_get_volume(warped);
      g_assert_cmpint(v->nx, ==, N);
      g_assert_cmpint(v->nz, ==, N);
      g_assert_cmpint(nw_run_get_shown_iteration(rig.run), >=, 0);
      g_assert_cmpint(nw_run_get_shown_iteration(rig.run), <=, nw_run_get_iteration(rig.run));
    }
    drain();
    g_usleep(2000);
  }
  g_assert_cmpint(rig.last_state, ==, NW_JOB_FINISHED);
  g_assert_cmpint(nw_run_get_state(rig.run), ==, NW_JOB_FINISHED);
  g_assert_cmpint(nw_run_get_iteration(rig.run), ==, iterations);
  g_assert_cmpint(rig.iterations, ==, iterations);
  g_assert_cmpuint(taken_while_running, >=, 1);
  g_assert_cmpint(rig.changed, >, 0); /* frames asked the views for redraws */

  NwLiveStats st;
  nw_run_get_live_stats(rig.run, &st);
  g_test_message("%" G_GUINT64_FORMAT " display frames, %" G_GUINT64_FORMAT
                 " asked, %" G_GUINT64_FORMAT " taken, %u seen by the layers",
                 st.display_frames, st.wants, st.taken, taken_while_running);
  g_assert_cmpuint(st.display_frames, ==, display_frames);
  g_assert_cmpuint(st.taken, >=, taken_while_running);
  g_assert_cmpuint(st.taken, <=, st.display_frames);
  g_assert_cmpuint(st.wants, <=, st.display_frames + 1);
  g_assert_cmpuint(st.host_bytes, >, 0);
  g_assert_null(nw_layer_get_live(warped)); /* the source went with the job */

  /* the layers hold the result: what the run saves, registered closer to the fixed ball */
  g_autofree char *prefix = nw_test_path("run");
  g_assert_true(nw_run_save_results(rig.run, prefix, NULL, &error));
  g_assert_no_error(error);
  g_autofree char *wpath = g_strdup_printf("%s_warped.nii.gz", prefix);
  g_autoptr(NwVolume) saved = nw_nifti_read(wpath, &error);
  g_assert_no_error(error);
  g_assert_cmpfloat(nw_test_max_abs_diff(saved, nw_layer_get_volume(warped)), ==, 0.0);
  const double before = mse(nw_layer_get_volume(rig.moving), nw_layer_get_volume(rig.fixed));
  const double after = mse(nw_layer_get_volume(warped), nw_layer_get_volume(rig.fixed));
  g_test_message("MSE to fixed: moving %.3f, warped %.3f", before, after);
  g_assert_cmpfloat(after, <, 0.5 * before);
  const NwVolume *u = nw_layer_get_volume(field); /* the forward field, voxels */
  g_assert_cmpint(u->nc, ==, 3);
  double max_u = 0.0;
  for (size_t i = 0; i < nw_volume_n_floats(u); i++)
    max_u = MAX(max_u, fabs(u->data[i]));
  g_assert_cmpfloat(max_u, >, 0.3); /* about the 1.5 voxel shift */

  wait_result_surface(&rig);
  g_assert_cmpuint(nw_scene_n_layers(rig.scene), ==, 5);

  /* the run's layers go with it; the pair it was given stays */
  const int layers_changed = rig.layers_changed;
  drop_run(&rig);
  g_assert_cmpuint(nw_scene_n_layers(rig.scene), ==, 2);
  g_assert_cmpint(rig.layers_changed, >, layers_changed);
  g_assert_true(nw_scene_get_compare_a(rig.scene) == rig.fixed);
  rig_clear(&rig);
}

/* Paused: the first frame is asked for at once (the coarse state before any step); each
 * step makes one iteration, which the next display frame shows. */
static void test_run_paused_steps(void)
{
  Rig rig;
  rig_init(&rig);
  g_autoptr(NwParams) params = demons_params(50);
  const NwMethodOps *ops = nw_method_lookup("demons", NW_DEVICE_CPU, NULL);
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_run_start(rig.run, ops, params, TRUE, &error));
  g_assert_cmpint(nw_run_get_state(rig.run), ==, NW_JOB_PAUSED);
  NwLayer *warped = nw_run_get_warped(rig.run);
  guint64 frame = 0;
  for (int step = 1; step <= 3; step++) {
    nw_run_step(rig.run);
    const gint64 until = g_get_monotonic_time() + 30 * G_USEC_PER_SEC;
    while (nw_run_get_shown_iteration(rig.run) < step && g_get_monotonic_time() < until) {
      nw_view_render_begin_frame(rig.scene, frame++, 0);
      drain();
      g_usleep(2000);
    }
    g_assert_cmpint(nw_run_get_shown_iteration(rig.run), ==, step);
    g_assert_cmpint(nw_run_get_iteration(rig.run), ==, step);
    g_assert_cmpint(nw_run_get_state(rig.run), ==, NW_JOB_PAUSED);
    g_assert_cmpuint(nw_layer_get_generation(warped), >=, (guint)step);
  }
  /* stop: cancelled, and the layers show what the job had */
  nw_run_stop(rig.run);
  const gint64 until = g_get_monotonic_time() + 30 * G_USEC_PER_SEC;
  while (nw_run_is_active(rig.run) && g_get_monotonic_time() < until) {
    drain();
    g_usleep(2000);
  }
  g_assert_cmpint(nw_run_get_state(rig.run), ==, NW_JOB_CANCELLED);
  g_assert_cmpint(nw_run_get_iteration(rig.run), ==, 3);
  g_assert_null(nw_layer_get_live(warped));
  wait_result_surface(&rig); /* a cancelled job's result is shown too */
  rig_clear(&rig);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/scene-run/live-and-result", test_run_live_and_result);
  g_test_add_func("/scene-run/paused-steps", test_run_paused_steps);
  return g_test_run();
}
