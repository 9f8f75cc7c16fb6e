/* cuda_validate.c — see cuda_validate.h. */
#include "cuda_validate.h"

#include <math.h>
#include <stdio.h>

#define MAX_SHOWN 5

void nw_test_cuda_ok(cudaError_t status, const char *call, const char *file, int line)
{
  if (status != cudaSuccess)
    g_error("%s:%d: %s failed: %s (%s)", file, line, call, cudaGetErrorString(status),
            cudaGetErrorName(status));
}

cudaError_t nw_poison(void *d, size_t bytes)
{
  return cudaMemset(d, 0xFF, bytes);
}

/* TRUE when gpu matches cpu under tol (NaN only against NaN); *diff gets |gpu - cpu|, or
 * INFINITY when exactly one side is not finite. */
static gboolean matches(double gpu, double cpu, NwTolerance tol, double *diff)
{
  if (isnan(cpu) || isnan(gpu)) {
    *diff = isnan(cpu) && isnan(gpu) ? 0.0 : INFINITY;
    return isnan(cpu) && isnan(gpu);
  }
  if (!isfinite(cpu) || !isfinite(gpu)) {
    *diff = cpu == gpu ? 0.0 : INFINITY;
    return cpu == gpu;
  }
  *diff = fabs(gpu - cpu);
  return *diff <= tol.abs + tol.rel * fabs(cpu);
}

size_t nw_validate_floats(const char *name, const float *gpu, int gpu_stride, const float *cpu,
                          int cpu_stride, int nc, size_t n, NwTolerance tol)
{
  size_t bad = 0, worst_e = 0;
  int worst_c = 0;
  double worst = -1.0;
  for (size_t e = 0; e < n; e++)
    for (int c = 0; c < nc; c++) {
      const float g = gpu[e * (size_t)gpu_stride + c], r = cpu[e * (size_t)cpu_stride + c];
      double diff;
      if (!matches(g, r, tol, &diff)) {
        if (bad < MAX_SHOWN)
          fprintf(stderr, "  %s: MISMATCH at element %zu component %d: gpu %.9g cpu %.9g\n", name,
                  e, c, g, r);
        bad++;
      }
      if (diff > worst) {
        worst = diff;
        worst_e = e;
        worst_c = c;
      }
    }
  fprintf(stderr,
          "%s: %zu x %d floats, max |gpu - cpu| %.3g at %zu.%d, tolerance %.3g + %.3g |cpu|: "
          "%s (%zu mismatches)\n",
          name, n, nc, worst, worst_e, worst_c, tol.abs, tol.rel, bad == 0 ? "ok" : "FAILED", bad);
  fflush(stderr);
  return bad;
}

size_t nw_validate_result(const char *name, const float *d_out, int gpu_stride, const float *cpu,
                          int cpu_stride, int nc, size_t n, NwTolerance tol)
{
  if (n == 0)
    return 0;
  const size_t floats = (n - 1) * (size_t)gpu_stride + (size_t)nc;
  float *host = g_new(float, floats);
  NW_TEST_CUDA(cudaMemcpy(host, d_out, floats * sizeof(float), cudaMemcpyDeviceToHost));
  size_t bad = nw_validate_floats(name, host, gpu_stride, cpu, cpu_stride, nc, n, tol);
  g_free(host);
  return bad;
}

gboolean nw_validate_value(const char *name, double gpu, double cpu, NwTolerance tol)
{
  double diff;
  const gboolean ok = matches(gpu, cpu, tol, &diff);
  fprintf(stderr, "%s: gpu %.17g cpu %.17g, |diff| %.3g, tolerance %.3g + %.3g |cpu|: %s\n", name,
          gpu, cpu, diff, tol.abs, tol.rel, ok ? "ok" : "FAILED");
  fflush(stderr);
  return ok;
}

float *nw_test_device_floats(const float *h, size_t n)
{
  float *d = NULL;
  NW_TEST_CUDA(cudaMalloc((void **)&d, n * sizeof(float)));
  NW_TEST_CUDA(cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice));
  return d;
}

void *nw_test_device_field(const NwVolume *v)
{
  g_assert_cmpint(v->nc, ==, 3);
  const size_t n = nw_volume_n_voxels(v);
  float *h = g_new0(float, 4 * n);
  for (size_t e = 0; e < n; e++)
    for (int c = 0; c < 3; c++)
      h[4 * e + c] = v->data[3 * e + c];
  float *d = nw_test_device_floats(h, 4 * n);
  g_free(h);
  return d;
}

void *nw_test_device_poisoned(size_t bytes)
{
  void *d = NULL;
  NW_TEST_CUDA(cudaMalloc(&d, bytes));
  NW_TEST_CUDA(nw_poison(d, bytes));
  return d;
}

NwVolume *nw_test_random_volume(int nx, int ny, int nz, int nc, double lo, double hi,
                                double quantum, guint32 seed)
{
  NwVolume *v = nw_volume_new(nx, ny, nz, nc, NULL);
  g_assert_nonnull(v);
  GRand *r = g_rand_new_with_seed(seed);
  for (size_t q = 0; q < nw_volume_n_floats(v); q++) {
    double x = 0.0;
    while (x == 0.0) {
      x = g_rand_double_range(r, lo, hi);
      if (quantum > 0.0)
        x = quantum * round(x / quantum);
    }
    v->data[q] = (float)x;
  }
  g_rand_free(r);
  return v;
}
