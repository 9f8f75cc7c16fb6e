/* test_cuda_smooth.c — parity of the CUDA "smooth" method (cuda/smooth_cuda.cu) with its CPU
 * reference (core/cpu/smooth_cpu.c), through the method interface and the job runner; and
 * the "no CUDA device" answer of the registry. Test thread plus the job's worker thread.
 *
 * Built twice (tests/cuda.cmake):
 *   test_cuda_smooth      the parity tests; exits 77 (skipped) when no CUDA device is usable.
 *   test_cuda_no_device   NW_TEST_NO_DEVICE_ONLY: only the registry test, which runs everywhere
 *                         (with a device present it installs a probe that reports none).
 *
 * Tolerance: the GPU sums the taps in the CPU's order with separately rounded multiply and
 * add, so images should agree bit for bit; we assert max |cpu - cuda| <= 1e-5 * max(1,
 * max |cpu|) (values are ~100, so about 1e-3 absolute, a few float ulps) and report the
 * actual difference. Figures: min/max to the same tolerance, mean and rms_change (double
 * sums in a different order) to 1e-9 relative plus the image tolerance. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "job.h"
#include "method.h"
#include "method_table.h"
#include "nw_error.h"
#include "smooth_method.h"
#include "testutil.h"
#ifdef NW_HAVE_CUDA
#include "nw_cuda.h"
#endif

#ifndef NW_TEST_NO_DEVICE_ONLY
/* max |v| over all floats, at least 1: the scale of the relative tolerance. */
static double scale_of(const NwVolume *v)
{
  double m = 1.0;
  for (size_t e = 0; e < nw_volume_n_floats(v); e++)
    m = fmax(m, fabs((double)v->data[e]));
  return m;
}

static NwParams *smooth_params(double sigma_mm, int iterations)
{
  NwParams *p = nw_params_new(nw_smooth_param_specs, nw_smooth_n_params);
  g_assert_true(nw_params_set(p, "sigma", sigma_mm, NULL));
  g_assert_true(nw_params_set(p, "iterations", iterations, NULL));
  return p;
}

static void assert_reports_agree(const NwIterationReport *a, const NwIterationReport *b, double tol)
{
  g_assert_cmpint(a->iteration, ==, b->iteration);
  g_assert_cmpint(a->finished, ==, b->finished);
  g_assert_cmpfloat_with_epsilon(a->progress, b->progress, 1e-12);
  g_assert_cmpint(a->n_figures, ==, 4);
  g_assert_cmpint(b->n_figures, ==, 4);
  for (int f = 0; f < a->n_figures; f++) {
    g_assert_cmpstr(a->figure_names[f], ==, b->figure_names[f]);
    double slack = tol + 1e-9 * fabs(a->figures[f]);
    if (fabs(a->figures[f] - b->figures[f]) > slack)
      g_error("iteration %d: figure %s: cpu %.9g, cuda %.9g", a->iteration, a->figure_names[f],
              a->figures[f], b->figures[f]);
  }
}

/* Run both back ends side by side for `iterations` steps (sigma changes to sigma2_mm after
 * the first step, a live change), comparing figures each step and frames and results. */
static void run_parity(const NwVolume *input, double sigma_mm, double sigma2_mm, int iterations)
{
  const NwMethodOps *ops[2] = {&nw_smooth_cpu_ops, &nw_smooth_cuda_ops};
  NwMethodInputs in = {.fixed = input};
  g_autoptr(NwParams) p = smooth_params(sigma_mm, iterations);
  void *state[2];
  for (int b = 0; b < 2; b++) {
    g_autoptr(GError) error = NULL;
    state[b] = ops[b]->create(&in, p, &error);
    g_assert_no_error(error);
  }
  const double tol = 1e-5 * scale_of(input);
  for (int it = 1; it <= iterations; it++) {
    NwIterationReport rep[2];
    memset(rep, 0, sizeof rep);
    for (int b = 0; b < 2; b++) {
      g_autoptr(GError) error = NULL;
      g_assert_true(ops[b]->step(state[b], &rep[b], &error));
      g_assert_no_error(error);
    }
    assert_reports_agree(&rep[0], &rep[1], tol);
    g_assert_cmpint(rep[1].finished, ==, it == iterations);
    if (it == 1 && sigma2_mm != sigma_mm) {
      g_assert_true(nw_params_set(p, "sigma", sigma2_mm, NULL));
      for (int b = 0; b < 2; b++)
        g_assert_true(ops[b]->set_params(state[b], p, NULL));
    }
  }
  NwFrame frame[2] = {{0}, {0}};
  for (int b = 0; b < 2; b++)
    g_assert_true(ops[b]->publish_frame(state[b], &frame[b], NULL));
  g_assert_cmpint(frame[1].iteration, ==, iterations);
  g_assert_null(frame[1].field);
  g_assert_true(nw_volume_same_grid(frame[1].image, input));
  g_assert_cmpint(frame[1].image->nc, ==, input->nc);
  double d = nw_test_max_abs_diff(frame[0].image, frame[1].image);
  g_test_message("%dx%dx%d nc=%d sigma %g/%g mm: max |cpu - cuda| = %g (tolerance %g)", input->nx,
                 input->ny, input->nz, input->nc, sigma_mm, sigma2_mm, d, tol);
  g_assert_cmpfloat(d, <=, tol);
  /* The image really changed (a no-op on both back ends would also "agree"). */
  if (sigma_mm > 0.0)
    g_assert_cmpfloat(nw_test_max_abs_diff(frame[1].image, input), >, 1e-3);
  NwMethodResult *res[2];
  for (int b = 0; b < 2; b++) {
    res[b] = ops[b]->result(state[b], NULL);
    g_assert_nonnull(res[b]);
  }
  const NwVolume *out = nw_method_result_get(res[1], "smoothed");
  g_assert_nonnull(out);
  g_assert_cmpfloat(nw_test_max_abs_diff(out, frame[1].image), ==, 0.0);
  g_assert_cmpfloat(nw_test_max_abs_diff(nw_method_result_get(res[0], "smoothed"), out), <=, tol);
  for (int b = 0; b < 2; b++) {
    nw_method_result_free(res[b]);
    nw_frame_clear(&frame[b]);
    ops[b]->destroy(state[b]);
  }
}

/* Odd sizes on every axis, anisotropic spacing (sigma 1 mm is 1.1, 0.77 and 0.48 voxels). */
static void test_parity_odd_anisotropic(void)
{
  g_autoptr(NwVolume) v = nw_test_volume(67, 45, 33, 1, 7);
  nw_volume_set_spacing(v, 0.9, 1.3, 2.1);
  run_parity(v, 1.0, 1.0, 3);
  run_parity(v, 0.4, 2.5, 3); /* live sigma change after the first step */
}

/* Radius capped at NW_GAUSS_MAX_RADIUS = 32 along x, 29 along z: halos wider than the 32-float
 * tile width of the y/z passes and than the 33 slices themselves (clamping dominates). */
static void test_parity_wide_kernel(void)
{
  g_autoptr(NwVolume) v = nw_test_volume(67, 45, 33, 1, 11);
  nw_volume_set_spacing(v, 0.9, 1.3, 2.1);
  run_parity(v, 20.0, 20.0, 2);
}

/* Volumes smaller than the kernel, a 2D image (nz = 1: the z pass is skipped), and a
 * 3-component field (interleaved components along x). */
static void test_parity_small_2d_vector(void)
{
  g_autoptr(NwVolume) tiny = nw_test_volume(5, 4, 3, 1, 3);
  run_parity(tiny, 3.0, 3.0, 2);
  g_autoptr(NwVolume) flat = nw_test_volume(301, 37, 1, 1, 5);
  nw_volume_set_spacing(flat, 0.5, 0.7, 1.0);
  run_parity(flat, 1.5, 1.5, 2);
  g_autoptr(NwVolume) field = nw_test_volume(17, 13, 11, 3, 9);
  run_parity(field, 1.2, 1.2, 2);
}

/* sigma 0 is the identity: figures report no change. */
static void test_parity_identity(void)
{
  g_autoptr(NwVolume) v = nw_test_volume(19, 7, 5, 1, 2);
  run_parity(v, 0.0, 0.0, 1);
  NwMethodInputs in = {.fixed = v};
  g_autoptr(NwParams) p = smooth_params(0.0, 1);
  void *s = nw_smooth_cuda_ops.create(&in, p, NULL);
  NwIterationReport rep = {0};
  g_assert_true(nw_smooth_cuda_ops.step(s, &rep, NULL));
  g_assert_cmpstr(rep.figure_names[0], ==, "rms_change");
  g_assert_cmpfloat(rep.figures[0], ==, 0.0);
  nw_smooth_cuda_ops.destroy(s);
}

typedef struct {
  int n_iterations;
  double last_mean;
} JobLog;

static void on_iteration(NwJob *job, const NwIterationReport *r, double ms, gpointer data)
{
  JobLog *log = data;
  log->n_iterations++;
  log->last_mean = r->figures[1];
}

/* Run ops through the job runner (create/step/destroy on its worker thread). */
static NwVolume *run_job(const NwMethodOps *ops, const NwVolume *input, JobLog *log)
{
  NwMethodInputs in = {.fixed = input};
  g_autoptr(NwParams) p = smooth_params(1.5, 4);
  NwJobCallbacks cb = {.on_iteration = on_iteration};
  NwJob *job = nw_job_new(ops, &in, p, 4, &cb, log);
  nw_job_start(job, FALSE);
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_job_wait(job, &error));
  g_assert_no_error(error);
  g_assert_cmpint(nw_job_get_state(job), ==, NW_JOB_FINISHED);
  g_autoptr(NwMethodResult) r = nw_job_take_result(job, &error);
  g_assert_no_error(error);
  NwVolume *out = nw_volume_copy(nw_method_result_get(r, "smoothed"));
  nw_job_free(job);
  return out;
}

static void test_parity_job_runner(void)
{
  g_autoptr(NwVolume) v = nw_test_volume(40, 31, 23, 1, 13);
  nw_volume_set_spacing(v, 1.0, 1.0, 1.5);
  JobLog log_cpu = {0}, log_cuda = {0};
  g_autoptr(NwVolume) cpu = run_job(&nw_smooth_cpu_ops, v, &log_cpu);
  g_autoptr(NwVolume) cuda = run_job(&nw_smooth_cuda_ops, v, &log_cuda);
  g_assert_cmpint(log_cpu.n_iterations, ==, 4);
  g_assert_cmpint(log_cuda.n_iterations, ==, 4);
  g_assert_cmpfloat_with_epsilon(log_cpu.last_mean, log_cuda.last_mean,
                                 1e-9 * fabs(log_cpu.last_mean));
  g_assert_cmpfloat(nw_test_max_abs_diff(cpu, cuda), <=, 1e-5 * scale_of(v));
}

/* A NaN voxel is refused by both back ends at create, with the same code and message. */
static void test_nan_refused_alike(void)
{
  g_autoptr(NwVolume) v = nw_test_volume(9, 8, 7, 1, 1);
  v->data[nw_volume_index(v, 4, 3, 2)] = NAN;
  NwMethodInputs in = {.fixed = v};
  g_autoptr(NwParams) p = smooth_params(1.0, 2);
  g_autoptr(GError) e_cpu = NULL;
  g_autoptr(GError) e_cuda = NULL;
  g_assert_null(nw_smooth_cpu_ops.create(&in, p, &e_cpu));
  g_assert_null(nw_smooth_cuda_ops.create(&in, p, &e_cuda));
  g_assert_error(e_cpu, NW_ERROR, NW_ERROR_INVALID);
  g_assert_error(e_cuda, NW_ERROR, NW_ERROR_INVALID);
  g_assert_cmpstr(e_cuda->message, ==, e_cpu->message);
  g_assert_nonnull(strstr(e_cuda->message, "1 of 504 voxels are NaN or Inf"));
}

#endif /* !NW_TEST_NO_DEVICE_ONLY */

static gboolean probe_none(char *name, size_t name_len)
{
  g_strlcpy(name, "no CUDA device (test probe)", name_len);
  return FALSE;
}

/* --device cuda with no device: an NW_ERROR_DEVICE that says so; auto falls back to the CPU.
 * In a build without CUDA the registry says there is no CUDA implementation instead. */
static void test_no_device_error(void)
{
  nw_methods_register_builtin();
  g_autoptr(GError) error = NULL;
#ifdef NW_HAVE_CUDA
  char why[256];
  gboolean real = nw_cuda_probe(why, sizeof why);
  static const NwCudaProbe none = {.available = probe_none};
  if (real) /* a device is here: pretend there is none */
    nw_method_set_cuda_probe(&none);
  else
    g_assert_cmpint(nw_cuda_device_count(), ==, 0);
  g_assert_null(nw_method_lookup("smooth", NW_DEVICE_CUDA, &error));
  g_assert_error(error, NW_ERROR, NW_ERROR_DEVICE);
  g_assert_nonnull(strstr(error->message, "--device cuda: no CUDA device ("));
  g_assert_true(nw_method_lookup("smooth", NW_DEVICE_AUTO, NULL) == &nw_smooth_cpu_ops);
  nw_cuda_register_methods(); /* the real probe again (registering twice is harmless) */
#else
  (void)probe_none;
  g_assert_null(nw_method_lookup("smooth", NW_DEVICE_CUDA, &error));
  g_assert_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED);
  g_assert_nonnull(strstr(error->message, "has no CUDA implementation in this build"));
#endif
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
#ifdef NW_TEST_NO_DEVICE_ONLY
  g_test_add_func("/cuda/smooth/no-device-error", test_no_device_error);
  return g_test_run();
#else
  if (!nw_test_have_cuda())
    return NW_TEST_SKIP;
  g_test_add_func("/cuda/smooth/parity-odd-anisotropic", test_parity_odd_anisotropic);
  g_test_add_func("/cuda/smooth/parity-wide-kernel", test_parity_wide_kernel);
  g_test_add_func("/cuda/smooth/parity-small-2d-vector", test_parity_small_2d_vector);
  g_test_add_func("/cuda/smooth/parity-identity", test_parity_identity);
  g_test_add_func("/cuda/smooth/parity-job-runner", test_parity_job_runner);
  g_test_add_func("/cuda/smooth/nan-refused-alike", test_nan_refused_alike);
  g_test_add_func("/cuda/smooth/no-device-error", test_no_device_error);
  return g_test_run();
#endif
}
