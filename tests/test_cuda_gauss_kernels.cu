/* test_cuda_gauss_kernels.cu — the two Gaussian smoothing kernels of the CUDA back end
 * against their CPU twin nw_smooth_gaussian (core/smooth.c), through tests/cuda_validate.h:
 *   - nw_gauss3_float4 (cuda/gauss_cuda.cu: the x pass and the y/z pass of float4 fields, and
 *     the maximum norm fused into the last pass), used by demons;
 *   - nw_smooth_pass_cuda (cuda/smooth_kernels.cu: the x pass and the strided y/z pass of
 *     interleaved volumes with nc components), used by the smooth method.
 * Skips (77) without a CUDA device. Test thread only.
 *
 * Inputs are random and non-zero (fixed seeds); outputs are poisoned (NaN) first, so an
 * element a pass does not write fails. Grids have odd sizes, 2D slices (nz = 1: the z pass is
 * skipped) and radii up to the cap of 32 (halos wider than the tiles and than the axis). */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>

#include "cuda_validate.h"
#include "field.h"
#include "gauss_cuda.cuh"
#include "smooth.h"
#include "smooth_kernels.cuh"
#include "testutil.h"

static void check(size_t mismatches)
{
  g_assert_cmpuint(mismatches, ==, 0);
}

/* nw_gauss3_float4 on a field with one sigma per axis (0: that axis is not smoothed) against
 * nw_smooth_gaussian on the nc = 3 volume, and the fused max |result| against
 * nw_field_max_norm of the CPU result.
 *
 * Tolerance: both sum the taps in the same ascending order from 0, but nvcc may fuse each
 * multiply-add (one rounding less per tap), so a pass may differ by up to one float ulp of the
 * running sum per tap: at most (2r + 1) 2^-23 max|x| per pass, three passes (each a convex
 * combination, so errors do not grow). The test allows that bound (emulated differences were
 * 30x to 400x smaller). The maximum: 2e-6 relative (float norms against double ones) plus
 * twice the field's tolerance (a norm moves by at most sqrt(3) times its components). */
static void gauss3_case(int nx, int ny, int nz, const double sigma[3], guint32 seed,
                        gboolean with_max)
{
  const double amp = 3.0;
  g_autoptr(NwVolume) v = nw_test_random_volume(nx, ny, nz, 3, -amp, amp, 0, seed);
  g_autoptr(NwVolume) cpu = nw_volume_copy(v);
  g_assert_true(nw_smooth_gaussian(cpu, sigma, NULL));
  NwGaussKernel k[3];
  int r_max = 0;
  for (int a = 0; a < 3; a++) {
    nw_gauss_kernel(&k[a], sigma[a]);
    r_max = MAX(r_max, k[a].radius);
  }
  const NwTolerance tol = {3.0 * (2 * r_max + 1) * ldexp(1.0, -23) * amp, 0.0};
  const NwGrid g = {nx, ny, nz};
  float4 *data = (float4 *)nw_test_device_field(v);
  float4 *scratch = (float4 *)nw_test_device_poisoned(g.n() * sizeof(float4));
  float *dmax = with_max ? (float *)nw_test_device_poisoned(sizeof(float)) : NULL;
  NW_TEST_CUDA(nw_gauss3_float4(&data, &scratch, g, k, dmax, 0));
  NW_TEST_CUDA(cudaDeviceSynchronize());
  g_autofree char *name = g_strdup_printf("gauss3 %dx%dx%d sigma %g/%g/%g (r <= %d)", nx, ny, nz,
                                          sigma[0], sigma[1], sigma[2], r_max);
  check(nw_validate_result(name, (const float *)data, 4, cpu->data, 3, 3, (size_t)g.n(), tol));
  if (with_max) {
    float m = NAN;
    NW_TEST_CUDA(cudaMemcpy(&m, dmax, sizeof m, cudaMemcpyDeviceToHost));
    const NwTolerance tol_max = {2.0 * tol.abs, 2e-6}; /* |Δ norm| <= sqrt(3) |Δ component| */
    g_autofree char *mname = g_strdup_printf("%s: fused max |result|", name);
    g_assert_true(nw_validate_value(mname, m, nw_field_max_norm(cpu), tol_max));
    NW_TEST_CUDA(cudaFree(dmax));
  }
  NW_TEST_CUDA(cudaFree(data));
  NW_TEST_CUDA(cudaFree(scratch));
}

static void test_gauss3(void)
{
  const double small[3] = {1.0, 0.7, 1.6}, wide[3] = {12.0, 12.0, 12.0};
  const double only_y[3] = {0.0, 2.0, 0.0}, none[3] = {0.0, 0.0, 0.0};
  gauss3_case(37, 29, 23, small, 1, TRUE);
  gauss3_case(37, 29, 23, small, 2, FALSE);
  gauss3_case(45, 31, 1, small, 3, TRUE); /* 2D: no z pass; the max comes from the y pass */
  gauss3_case(70, 33, 35, wide, 4, TRUE); /* r = 32: the large-shared-memory y/z path */
  gauss3_case(37, 29, 23, only_y, 5, TRUE);
  gauss3_case(37, 29, 23, none, 6, TRUE); /* nothing to smooth: the max of the input */
}

/* One pass of nw_smooth_pass_cuda along `axis` against nw_smooth_gaussian with sigma on that
 * axis only. Both sum the taps in ascending order with separately rounded multiply and add
 * (__fmul_rn/__fadd_rn on the GPU, ISO C without contraction on the CPU) from the same
 * weights: the results are equal bit for bit, tolerance 0. */
static void pass_case(int nx, int ny, int nz, int nc, int axis, double sigma, guint32 seed)
{
  g_autoptr(NwVolume) v = nw_test_random_volume(nx, ny, nz, nc, -100.0, 100.0, 0, seed);
  g_autoptr(NwVolume) cpu = nw_volume_copy(v);
  double s[3] = {0.0, 0.0, 0.0};
  s[axis] = sigma;
  g_assert_true(nw_smooth_gaussian(cpu, s, NULL));
  NwGaussKernel k;
  nw_gauss_kernel(&k, sigma);
  g_assert_cmpint(k.radius, >=, 1);
  const size_t n = nw_volume_n_floats(v);
  float *src = nw_test_device_floats(v->data, n);
  float *dst = (float *)nw_test_device_poisoned(n * sizeof(float));
  NW_TEST_CUDA(nw_smooth_pass_cuda(dst, src, nx, ny, nz, nc, axis, &k, 0));
  NW_TEST_CUDA(cudaDeviceSynchronize());
  g_autofree char *name = g_strdup_printf("smooth pass %c %dx%dx%d nc=%d sigma %g (r = %d)",
                                          "xyz"[axis], nx, ny, nz, nc, sigma, k.radius);
  const NwTolerance exact = {0.0, 0.0};
  check(nw_validate_result(name, dst, 1, cpu->data, 1, 1, n, exact));
  NW_TEST_CUDA(cudaFree(src));
  NW_TEST_CUDA(cudaFree(dst));
}

static void test_smooth_passes(void)
{
  const int ncs[] = {1, 3, 5};
  guint32 seed = 100;
  for (gsize c = 0; c < G_N_ELEMENTS(ncs); c++)
    for (int axis = 0; axis < 3; axis++) {
      pass_case(37, 29, 23, ncs[c], axis, 1.3, seed++);
      pass_case(37, 29, 23, ncs[c], axis, 15.0, seed++); /* r = 32 > every axis here */
    }
  pass_case(301, 7, 3, 1, 0, 2.0, seed++); /* rows longer than a block's segment */
  pass_case(45, 31, 1, 3, 1, 2.5, seed++); /* 2D */
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  if (!nw_test_have_cuda())
    return NW_TEST_SKIP;
  g_test_add_func("/cuda/gauss-kernels/gauss3-float4", test_gauss3);
  g_test_add_func("/cuda/gauss-kernels/smooth-passes", test_smooth_passes);
  return g_test_run();
}
