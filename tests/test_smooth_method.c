/* test_smooth_method.c — the CPU "smooth" method (core/cpu/smooth_cpu.c) driven through the
 * job runner on its worker thread: N iterations with sigma s equal N applications of
 * nw_smooth_gaussian_mm; the figures match the image; rms_change decreases; a live sigma
 * change applies at the next iteration; iterations cannot change live; bad input fails. */
#include <math.h>
#include <string.h>

#include "job.h"
#include "nw_error.h"
#include "smooth.h"
#include "smooth_method.h"
#include "testutil.h"

#define MAX_REPORTS 64

typedef struct {
  GMutex lock;
  GCond cond;
  int n;
  int iteration[MAX_REPORTS];
  gboolean finished[MAX_REPORTS];
  double rms[MAX_REPORTS], mean[MAX_REPORTS], min[MAX_REPORTS], max[MAX_REPORTS];
  NwFrame *frame; /* the last frame delivered */
} Seen;

static void on_iteration(NwJob *job, const NwIterationReport *r, double ms, gpointer data)
{
  Seen *s = data;
  g_assert_cmpint(r->n_figures, ==, 4);
  g_mutex_lock(&s->lock);
  g_assert_cmpint(s->n, <, MAX_REPORTS);
  s->iteration[s->n] = r->iteration;
  s->finished[s->n] = r->finished;
  s->rms[s->n] = nw_test_figure(r, "rms_change");
  s->mean[s->n] = nw_test_figure(r, "mean");
  s->min[s->n] = nw_test_figure(r, "min");
  s->max[s->n] = nw_test_figure(r, "max");
  s->n++;
  g_cond_broadcast(&s->cond);
  g_mutex_unlock(&s->lock);
}

static void on_frame(NwJob *job, NwFrame *frame, gpointer data)
{
  Seen *s = data;
  g_mutex_lock(&s->lock);
  if (s->frame != NULL) {
    nw_frame_clear(s->frame);
    g_free(s->frame);
  }
  s->frame = frame;
  g_cond_broadcast(&s->cond);
  g_mutex_unlock(&s->lock);
}

static const NwJobCallbacks callbacks = {on_iteration, on_frame, NULL};

static void seen_init(Seen *s)
{
  memset(s, 0, sizeof *s);
  g_mutex_init(&s->lock);
  g_cond_init(&s->cond);
}

static void seen_clear(Seen *s)
{
  if (s->frame != NULL) {
    nw_frame_clear(s->frame);
    g_free(s->frame);
  }
  g_mutex_clear(&s->lock);
  g_cond_clear(&s->cond);
}

static void wait_reports(Seen *s, int n)
{
  gint64 end = g_get_monotonic_time() + 60 * G_TIME_SPAN_SECOND; /* safety net only */
  g_mutex_lock(&s->lock);
  while (s->n < n)
    if (!g_cond_wait_until(&s->cond, &s->lock, end))
      g_error("timed out waiting for %d reports (have %d)", n, s->n);
  g_mutex_unlock(&s->lock);
}

static void wait_paused(NwJob *job)
{
  gint64 end = g_get_monotonic_time() + 60 * G_TIME_SPAN_SECOND;
  while (nw_job_get_state(job) != NW_JOB_PAUSED) {
    g_assert_cmpint(g_get_monotonic_time(), <, end);
    g_usleep(1000);
  }
}

/* Anisotropic voxels, so sigma in mm becomes a different sigma in voxels per axis. */
static NwVolume *input_volume(int nc)
{
  NwVolume *v = nw_test_volume(14, 11, 9, nc, 7);
  nw_volume_set_spacing(v, 1.0, 1.5, 2.0);
  return v;
}

static NwParams *smooth_params(double sigma, int iterations)
{
  NwParams *p = nw_params_new(nw_smooth_param_specs, nw_smooth_n_params);
  g_assert_true(nw_params_set(p, "sigma", sigma, NULL));
  g_assert_true(nw_params_set(p, "iterations", iterations, NULL));
  return p;
}

static void test_param_table(void)
{
  g_autoptr(NwParams) p = nw_params_new(nw_smooth_param_specs, nw_smooth_n_params);
  g_assert_cmpint(nw_smooth_n_params, ==, 2);
  g_assert_true(nw_smooth_cpu_ops.params == nw_smooth_param_specs);
  g_assert_cmpint(nw_smooth_cpu_ops.n_params, ==, nw_smooth_n_params);
  g_assert_cmpstr(nw_smooth_cpu_ops.name, ==, "smooth");
  g_assert_cmpint(nw_smooth_cpu_ops.device, ==, NW_DEVICE_CPU);
  g_assert_cmpfloat(nw_params_get(p, "sigma"), ==, 1.0);
  g_assert_cmpint(nw_params_get_int(p, "iterations"), ==, 10);
  g_assert_true(nw_smooth_param_specs[0].live);
  g_assert_false(nw_smooth_param_specs[1].live);
  GError *error = NULL;
  g_assert_false(nw_params_set(p, "sigma", 99, &error));
  g_assert_cmpstr(error->message, ==, "sigma: 99 is outside 0..50 mm");
  g_clear_error(&error);
  g_assert_false(nw_params_set(p, "iterations", 0, &error));
  g_assert_cmpstr(error->message, ==, "iterations: 0 is outside 1..100000");
  g_clear_error(&error);
}

/* N iterations through the job = N calls of nw_smooth_gaussian_mm on a copy. */
static void check_iterated(int nc, double sigma, int n)
{
  g_autoptr(NwVolume) input = input_volume(nc);
  g_autoptr(NwParams) p = smooth_params(sigma, n);
  NwMethodInputs in = {.fixed = input};
  Seen seen;
  seen_init(&seen);
  NwJob *job = nw_job_new(&nw_smooth_cpu_ops, &in, p, 0, &callbacks, &seen);
  nw_job_start(job, FALSE);
  GError *error = NULL;
  g_assert_true(nw_job_wait(job, &error)); /* the method's own stopping rule ends it */
  g_assert_no_error(error);
  g_assert_cmpint(nw_job_get_iteration(job), ==, n);
  g_autoptr(NwMethodResult) r = nw_job_take_result(job, &error);
  g_assert_no_error(error);
  nw_job_free(job);

  g_autoptr(NwVolume) want = nw_volume_copy(input);
  g_assert_cmpint(seen.n, ==, n);
  for (int it = 0; it < n; it++) {
    /* The figures of iteration it describe the image after it + 1 smoothings. */
    g_autoptr(NwVolume) before = nw_volume_copy(want);
    g_assert_true(nw_smooth_gaussian_mm(want, sigma, NULL));
    NwVolumeStats st;
    nw_volume_stats(want, &st);
    double sum = 0.0;
    for (size_t e = 0; e < nw_volume_n_floats(want); e++)
      sum += pow((double)want->data[e] - before->data[e], 2);
    double rms = sqrt(sum / (double)nw_volume_n_floats(want));
    g_assert_cmpint(seen.iteration[it], ==, it + 1);
    g_assert_cmpint(seen.finished[it], ==, it == n - 1);
    g_assert_cmpfloat_with_epsilon(seen.rms[it], rms, 1e-9 + 1e-6 * rms);
    g_assert_cmpfloat_with_epsilon(seen.mean[it], st.mean, 1e-9 * fabs(st.mean) + 1e-9);
    g_assert_cmpfloat(seen.min[it], ==, st.min);
    g_assert_cmpfloat(seen.max[it], ==, st.max);
    g_assert_cmpfloat(seen.rms[it], >, 0.0);
    if (it > 0) /* smoothing a smoother image changes it less */
      g_assert_cmpfloat(seen.rms[it], <, seen.rms[it - 1]);
  }
  const NwVolume *got = nw_method_result_get(r, "smoothed");
  g_assert_nonnull(got);
  g_assert_cmpint(got->nc, ==, nc);
  g_assert_cmpfloat(got->spacing_mm[2], ==, 2.0f); /* the input's grid */
  g_assert_cmpfloat(nw_test_max_abs_diff(got, want), <=, 1e-6);
  /* The input itself is left untouched. */
  g_autoptr(NwVolume) fresh = input_volume(nc);
  g_assert_cmpfloat(nw_test_max_abs_diff(input, fresh), ==, 0.0);
  seen_clear(&seen);
}

static void test_iterated_scalar(void)
{
  check_iterated(1, 1.2, 5);
}

static void test_iterated_vector(void)
{
  check_iterated(3, 2.5, 3);
}

/* Paused, one step at a time: sigma 0 is the identity (rms_change exactly 0), a frame shows
 * the current image, and iterations cannot change while the job runs. */
static void test_live_sigma(void)
{
  g_autoptr(NwVolume) input = input_volume(1);
  g_autoptr(NwParams) p = smooth_params(1.0, 3);
  NwMethodInputs in = {.fixed = input};
  Seen seen;
  seen_init(&seen);
  NwJob *job = nw_job_new(&nw_smooth_cpu_ops, &in, p, 0, &callbacks, &seen);
  nw_job_start(job, TRUE);
  wait_paused(job);
  nw_job_step(job);
  wait_reports(&seen, 1);
  g_assert_cmpfloat(seen.rms[0], >, 0.0);

  GError *error = NULL;
  g_assert_true(nw_params_set(p, "sigma", 0.0, NULL));
  g_assert_true(nw_job_set_params(job, p, &error));
  g_assert_no_error(error);
  wait_paused(job);
  nw_job_step(job);
  wait_reports(&seen, 2);
  g_assert_cmpfloat(seen.rms[1], ==, 0.0);
  g_assert_cmpfloat(seen.mean[1], ==, seen.mean[0]);
  wait_paused(job);
  nw_job_request_frame(job); /* paused: served at once, showing iteration 2 */

  g_autoptr(NwVolume) once = nw_volume_copy(input);
  g_assert_true(nw_smooth_gaussian_mm(once, 1.0, NULL));
  gint64 end = g_get_monotonic_time() + 60 * G_TIME_SPAN_SECOND; /* safety net only */
  g_mutex_lock(&seen.lock);
  while (seen.frame == NULL)
    if (!g_cond_wait_until(&seen.cond, &seen.lock, end))
      g_error("timed out waiting for the frame");
  g_assert_nonnull(seen.frame);
  g_assert_cmpint(seen.frame->iteration, ==, 2);
  g_assert_cmpfloat(nw_test_max_abs_diff(seen.frame->image, once), <=, 1e-6);
  g_mutex_unlock(&seen.lock);

  g_assert_true(nw_params_set(p, "iterations", 20, NULL));
  g_assert_false(nw_job_set_params(job, p, &error));
  g_assert_error(error, NW_ERROR, NW_ERROR_INVALID);
  g_assert_cmpstr(error->message, ==,
                  "smooth: iterations cannot change while the job runs (3 -> 20); start a new "
                  "job");
  g_clear_error(&error);

  nw_job_resume(job);
  g_assert_true(nw_job_wait(job, &error));
  g_assert_cmpint(nw_job_get_iteration(job), ==, 3); /* the original iterations */
  nw_job_free(job);
  seen_clear(&seen);
}

static void test_constant_stays(void)
{
  g_autoptr(NwVolume) input = nw_volume_new(6, 5, 4, 1, NULL);
  for (size_t e = 0; e < nw_volume_n_floats(input); e++)
    input->data[e] = 7.25f;
  g_autoptr(NwParams) p = smooth_params(3.0, 2);
  NwMethodInputs in = {.fixed = input};
  Seen seen;
  seen_init(&seen);
  NwJob *job = nw_job_new(&nw_smooth_cpu_ops, &in, p, 0, &callbacks, &seen);
  nw_job_start(job, FALSE);
  g_assert_true(nw_job_wait(job, NULL));
  nw_job_free(job);
  g_assert_cmpint(seen.n, ==, 2);
  for (int it = 0; it < 2; it++) { /* normalised weights, replicated borders: exact enough */
    g_assert_cmpfloat_with_epsilon(seen.rms[it], 0.0, 1e-5);
    g_assert_cmpfloat_with_epsilon(seen.mean[it], 7.25, 1e-5);
    g_assert_cmpfloat_with_epsilon(seen.min[it], 7.25, 1e-5);
    g_assert_cmpfloat_with_epsilon(seen.max[it], 7.25, 1e-5);
  }
  seen_clear(&seen);
}

static void test_bad_input(void)
{
  g_autoptr(NwVolume) input = input_volume(1);
  input->data[5] = NAN;
  input->data[9] = INFINITY;
  g_autoptr(NwParams) p = smooth_params(1.0, 2);
  NwMethodInputs in = {.fixed = input};
  NwJob *job = nw_job_new(&nw_smooth_cpu_ops, &in, p, 0, NULL, NULL);
  nw_job_start(job, FALSE);
  GError *error = NULL;
  g_assert_false(nw_job_wait(job, &error));
  g_assert_error(error, NW_ERROR, NW_ERROR_INVALID);
  g_assert_cmpstr(error->message, ==,
                  "smooth input: 2 of 1386 voxels are NaN or Inf; mask or fill them before "
                  "registering");
  g_clear_error(&error);
  g_assert_cmpint(nw_job_get_state(job), ==, NW_JOB_FAILED);
  nw_job_free(job);

  NwMethodInputs none = {0};
  job = nw_job_new(&nw_smooth_cpu_ops, &none, p, 0, NULL, NULL);
  nw_job_start(job, FALSE);
  g_assert_false(nw_job_wait(job, &error));
  g_assert_cmpstr(error->message, ==, "smooth: no input image");
  g_clear_error(&error);
  nw_job_free(job);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/smooth-method/param-table", test_param_table);
  g_test_add_func("/smooth-method/iterated-scalar", test_iterated_scalar);
  g_test_add_func("/smooth-method/iterated-vector", test_iterated_vector);
  g_test_add_func("/smooth-method/live-sigma", test_live_sigma);
  g_test_add_func("/smooth-method/constant-stays", test_constant_stays);
  g_test_add_func("/smooth-method/bad-input", test_bad_input);
  return g_test_run();
}
