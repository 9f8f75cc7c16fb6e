/* test_cuda_field_kernels.cu — every kernel of cuda/field_cuda.cu against its CPU twin in
 * core/field.c and core/resample.c, one at a time, through tests/cuda_validate.h: compose
 * (nw_field_compose), axpy (nw_field_axpy), max |u| (nw_field_max_norm), exp by scaling and
 * squaring (nw_field_exp), warp trilinear and nearest (nw_warp), the Jacobian determinant
 * (nw_field_jacobian_det) and the float3 <-> float4 upload/download. Skips (77) without a CUDA
 * device. Test thread only.
 *
 * Inputs are random and non-zero (fixed seeds), on three grids: 37 x 29 x 23 (odd sizes),
 * 45 x 31 x 1 (2D: derivatives along z vanish) and 131 x 3 x 2 (rows longer than one
 * 128-thread block). Outputs are poisoned (NaN) before each kernel, so an element a kernel
 * does not write fails. Displacements that position samples are multiples of 1/256 voxel,
 * so x + u(x) is exact in float (GPU) and in double (CPU) and both interpolate with the same
 * weights; what remains is rounding in the interpolation, where nvcc may fuse a + f (b - a)
 * into one FMA (one rounding less per lerp): a few float ulps of the values. Tolerances below
 * are stated per kernel; an emulation of the GPU's float arithmetic (with and without FMA)
 * against the CPU twins on the same kind of inputs stayed under a tenth of each. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>

#include "cuda_validate.h"
#include "field.h"
#include "field_cuda.cuh"
#include "staging_cuda.cuh"
#include "resample.h"
#include "testutil.h"

typedef struct {
  int nx, ny, nz;
} Dims;

static const Dims grids[] = {{37, 29, 23}, {45, 31, 1}, {131, 3, 2}};

/* Displacements of up to `amp` voxels in steps of 1/256 (exact positions, see above). */
#define QUANTUM (1.0 / 256.0)

static NwGrid grid_of(Dims d)
{
  return NwGrid{d.nx, d.ny, d.nz};
}

static size_t voxels(Dims d)
{
  return (size_t)d.nx * d.ny * d.nz;
}

static void check(size_t mismatches)
{
  g_assert_cmpuint(mismatches, ==, 0);
}

/* s v, element by element (exact for the powers of two used here). */
static NwVolume *scaled(const NwVolume *v, float s)
{
  NwVolume *out = nw_volume_copy(v);
  for (size_t q = 0; q < nw_volume_n_floats(out); q++)
    out->data[q] = s * v->data[q];
  return out;
}

/* compose: out(x) = sb b(x) + sa a(x + sb b(x)). CPU twin nw_field_compose with sa = sb = 1,
 * and on pre-scaled copies for sa = sb = -1/4 (a power of two: scaling commutes with
 * rounding, as in exp's first squaring). Fields up to 2.5 voxels; tolerance 1e-5 voxel
 * (~40 ulp at 2.5; emulated differences <= 1e-6). Samples land up to 2.5 voxels outside the
 * grid, so the clamp is exercised. */
static void test_compose(void)
{
  const NwTolerance tol = {1e-5, 0.0};
  const float scales[] = {1.0f, -0.25f};
  for (gsize gi = 0; gi < G_N_ELEMENTS(grids); gi++)
    for (gsize si = 0; si < G_N_ELEMENTS(scales); si++) {
      const Dims d = grids[gi];
      const float sc = scales[si];
      g_autoptr(NwVolume) a = nw_test_random_volume(d.nx, d.ny, d.nz, 3, -2.0, 2.0, 0, 11);
      g_autoptr(NwVolume) b =
          nw_test_random_volume(d.nx, d.ny, d.nz, 3, -2.5, 2.5, QUANTUM / fabsf(sc), 12);
      g_autoptr(NwVolume) as = scaled(a, sc);
      g_autoptr(NwVolume) bs = scaled(b, sc);
      g_autoptr(NwVolume) cpu = nw_volume_new_like(a, 3, NULL);
      nw_field_compose(cpu, as, bs);
      float4 *da = (float4 *)nw_test_device_field(a), *db = (float4 *)nw_test_device_field(b);
      float4 *out = (float4 *)nw_test_device_poisoned(voxels(d) * sizeof(float4));
      NW_TEST_CUDA(nw_compose_cuda(out, da, sc, db, sc, grid_of(d), 0));
      NW_TEST_CUDA(cudaDeviceSynchronize());
      g_autofree char *name = g_strdup_printf("compose %dx%dx%d s=%g", d.nx, d.ny, d.nz, sc);
      check(nw_validate_result(name, (const float *)out, 4, cpu->data, 3, 3, voxels(d), tol));
      NW_TEST_CUDA(cudaFree(da));
      NW_TEST_CUDA(cudaFree(db));
      NW_TEST_CUDA(cudaFree(out));
    }
}

/* axpy: out = a + scale b, also in place (out = a, as the BCH velocity update runs it). CPU
 * twin nw_field_axpy (float multiply, then add); the GPU may fuse them: one rounding less.
 * Values up to ~3.5: tolerance 2e-6 (~8 ulp). */
static void test_axpy(void)
{
  const NwTolerance tol = {2e-6, 0.0};
  const Dims d = grids[0];
  const size_t n = voxels(d);
  g_autoptr(NwVolume) a = nw_test_random_volume(d.nx, d.ny, d.nz, 3, -2.0, 2.0, 0, 21);
  g_autoptr(NwVolume) b = nw_test_random_volume(d.nx, d.ny, d.nz, 3, -2.0, 2.0, 0, 22);
  g_autoptr(NwVolume) cpu = nw_volume_new_like(a, 3, NULL);
  nw_field_axpy(cpu, a, 0.7, b);
  float4 *da = (float4 *)nw_test_device_field(a), *db = (float4 *)nw_test_device_field(b);
  float4 *out = (float4 *)nw_test_device_poisoned(n * sizeof(float4));
  NW_TEST_CUDA(nw_axpy_cuda(out, da, 0.7f, db, grid_of(d), 0));
  NW_TEST_CUDA(cudaDeviceSynchronize());
  check(nw_validate_result("axpy", (const float *)out, 4, cpu->data, 3, 3, n, tol));
  NW_TEST_CUDA(nw_axpy_cuda(da, da, 0.7f, db, grid_of(d), 0)); /* in place */
  NW_TEST_CUDA(cudaDeviceSynchronize());
  check(nw_validate_result("axpy in place", (const float *)da, 4, cpu->data, 3, 3, n, tol));
  NW_TEST_CUDA(cudaFree(da));
  NW_TEST_CUDA(cudaFree(db));
  NW_TEST_CUDA(cudaFree(out));
}

/* max |u|: float norms on the GPU, double on the CPU; relative tolerance 2e-6 (a few float
 * ulps of the norm). The result location is poisoned first (the launcher must reset it). */
static void test_max_norm(void)
{
  const NwTolerance tol = {0.0, 2e-6};
  for (gsize gi = 0; gi < G_N_ELEMENTS(grids); gi++) {
    const Dims d = grids[gi];
    g_autoptr(NwVolume) u = nw_test_random_volume(d.nx, d.ny, d.nz, 3, -3.0, 3.0, 0, 31 + gi);
    float4 *du = (float4 *)nw_test_device_field(u);
    float *dmax = (float *)nw_test_device_poisoned(sizeof(float));
    NW_TEST_CUDA(nw_max_norm_cuda(dmax, du, grid_of(d), 0));
    float m = NAN;
    NW_TEST_CUDA(cudaMemcpy(&m, dmax, sizeof m, cudaMemcpyDeviceToHost));
    g_autofree char *name = g_strdup_printf("max_norm %dx%dx%d", d.nx, d.ny, d.nz);
    g_assert_true(nw_validate_value(name, m, nw_field_max_norm(u), tol));
    NW_TEST_CUDA(cudaFree(du));
    NW_TEST_CUDA(cudaFree(dmax));
  }
}

/* exp(±v) by scaling and squaring, with the CPU's number of squarings: a smooth velocity (the
 * kind demons produces) plus random noise of 0.05 voxel, peaks 0.3 (no squaring: out = ±v
 * exactly), 3 and 6 voxels (3 and 4 squarings). Positions are not exact after the first
 * squaring, so float (GPU) and double (CPU) positions differ by up to half an ulp of the
 * coordinate; emulated differences <= 1e-6 at |s| ~ 7. Tolerance 1e-5 + 2e-6 |s| voxel. */
static void test_exp(void)
{
  const NwTolerance tol = {1e-5, 2e-6};
  const double peaks[] = {0.3, 3.0, 6.0};
  const int n = 32;
  const NwGrid g = {n, n, n};
  for (gsize pi = 0; pi < G_N_ELEMENTS(peaks); pi++)
    for (int sign = -1; sign <= 1; sign += 2) {
      g_autoptr(NwVolume) v = nw_test_smooth_velocity(n, peaks[pi], 4.0, 0.15, 0.12);
      g_autoptr(NwVolume) noise = nw_test_random_volume(n, n, n, 3, -0.05, 0.05, 0, 41);
      nw_field_axpy(v, v, 1.0, noise);
      g_autoptr(NwVolume) cpu = nw_volume_new_like(v, 3, NULL);
      const int squarings = nw_field_exp(cpu, v, sign);
      g_assert_cmpint(squarings, ==, nw_field_exp_squarings(v));
      float4 *dv = (float4 *)nw_test_device_field(v);
      float4 *out = (float4 *)nw_test_device_poisoned(g.n() * sizeof(float4));
      float4 *scratch = (float4 *)nw_test_device_poisoned(g.n() * sizeof(float4));
      NW_TEST_CUDA(nw_exp_cuda(out, scratch, dv, (float)sign, squarings, g, 0));
      NW_TEST_CUDA(cudaDeviceSynchronize());
      g_autofree char *name = g_strdup_printf("exp(%sv) peak %g, %d squarings", sign < 0 ? "-" : "",
                                              peaks[pi], squarings);
      check(nw_validate_result(name, (const float *)out, 4, cpu->data, 3, 3, (size_t)g.n(), tol));
      NW_TEST_CUDA(cudaFree(dv));
      NW_TEST_CUDA(cudaFree(out));
      NW_TEST_CUDA(cudaFree(scratch));
    }
}

/* warp: out(x) = in(x + s(x)). Trilinear: intensities 10..110 that jump from voxel to voxel,
 * displacements up to 3 voxels (outside the grid too); only the lerps' rounding differs, up to
 * ~1 ulp of 110 (7.6e-6) per lerp: tolerance 1e-4. Nearest: integer labels 1..20 and the
 * same exact positions (halves among them: both round them up): equal, tolerance 0. */
static void test_warp(void)
{
  const NwTolerance tol_linear = {1e-4, 0.0}, tol_nearest = {0.0, 0.0};
  for (gsize gi = 0; gi < G_N_ELEMENTS(grids); gi++) {
    const Dims d = grids[gi];
    const size_t n = voxels(d);
    g_autoptr(NwVolume) img = nw_test_random_volume(d.nx, d.ny, d.nz, 1, 10.0, 110.0, 0, 51);
    g_autoptr(NwVolume) labels = nw_test_random_volume(d.nx, d.ny, d.nz, 1, 0.5, 20.49, 1.0, 52);
    g_autoptr(NwVolume) s = nw_test_random_volume(d.nx, d.ny, d.nz, 3, -3.0, 3.0, QUANTUM, 53);
    for (size_t q = 0; q < nw_volume_n_floats(s); q += 7)
      s->data[q] = (float)(round(s->data[q]) + 0.5); /* some halves for the nearest rule */
    g_autoptr(NwVolume) cpu_lin = nw_volume_new_like(img, 1, NULL);
    g_autoptr(NwVolume) cpu_near = nw_volume_new_like(img, 1, NULL);
    nw_warp(cpu_lin, img, s, NW_INTERP_LINEAR);
    nw_warp(cpu_near, labels, s, NW_INTERP_NEAREST);
    float *din = nw_test_device_floats(img->data, n),
          *dlab = nw_test_device_floats(labels->data, n);
    float4 *ds = (float4 *)nw_test_device_field(s);
    float *out = (float *)nw_test_device_poisoned(n * sizeof(float));
    NW_TEST_CUDA(nw_warp_cuda(out, din, ds, false, grid_of(d), 0));
    NW_TEST_CUDA(cudaDeviceSynchronize());
    g_autofree char *n1 = g_strdup_printf("warp linear %dx%dx%d", d.nx, d.ny, d.nz);
    check(nw_validate_result(n1, out, 1, cpu_lin->data, 1, 1, n, tol_linear));
    NW_TEST_CUDA(nw_poison(out, n * sizeof(float)));
    NW_TEST_CUDA(nw_warp_cuda(out, dlab, ds, true, grid_of(d), 0));
    NW_TEST_CUDA(cudaDeviceSynchronize());
    g_autofree char *n2 = g_strdup_printf("warp nearest %dx%dx%d", d.nx, d.ny, d.nz);
    check(nw_validate_result(n2, out, 1, cpu_near->data, 1, 1, n, tol_nearest));
    NW_TEST_CUDA(cudaFree(din));
    NW_TEST_CUDA(cudaFree(dlab));
    NW_TEST_CUDA(cudaFree(ds));
    NW_TEST_CUDA(cudaFree(out));
  }
}

/* det(I + ∇u): the CPU works in double and rounds once, the GPU in float (with FMA). Random
 * fields of up to 0.6 voxel that change from voxel to voxel: determinants up to ~4.4 and
 * of both signs; emulated differences <= 5e-7. Tolerance 1e-5 + 1e-6 |det|. */
static void test_jacobian(void)
{
  const NwTolerance tol = {1e-5, 1e-6};
  for (gsize gi = 0; gi < G_N_ELEMENTS(grids); gi++) {
    const Dims d = grids[gi];
    const size_t n = voxels(d);
    g_autoptr(NwVolume) u = nw_test_random_volume(d.nx, d.ny, d.nz, 3, -0.6, 0.6, 0, 61);
    g_autoptr(NwVolume) cpu = nw_volume_new_like(u, 1, NULL);
    nw_field_jacobian_det(cpu, u);
    float4 *du = (float4 *)nw_test_device_field(u);
    float *out = (float *)nw_test_device_poisoned(n * sizeof(float));
    NW_TEST_CUDA(nw_jacobian_cuda(out, du, grid_of(d), 0));
    NW_TEST_CUDA(cudaDeviceSynchronize());
    g_autofree char *name = g_strdup_printf("jacobian %dx%dx%d", d.nx, d.ny, d.nz);
    check(nw_validate_result(name, out, 1, cpu->data, 1, 1, n, tol));
    NW_TEST_CUDA(cudaFree(du));
    NW_TEST_CUDA(cudaFree(out));
  }
}

/* Host float3 -> device float4 -> host float3 through the staging buffer: copies only, so
 * exactly equal (tolerance 0). stage: a job's pinned pair, or NULL (one for the call). */
static void upload_download(const Dims d, float *stage)
{
  const NwTolerance exact = {0.0, 0.0};
  const size_t n = voxels(d);
  g_autoptr(NwVolume) h = nw_test_random_volume(d.nx, d.ny, d.nz, 3, -5.0, 5.0, 0, 71);
  float4 *field = (float4 *)nw_test_device_poisoned(n * sizeof(float4));
  void *staging = nw_test_device_poisoned(n * 3 * sizeof(float));
  NW_TEST_CUDA(nw_field_upload(field, staging, h->data, grid_of(d), 0));
  NW_TEST_CUDA(cudaDeviceSynchronize());
  check(nw_validate_result("field upload", (const float *)field, 4, h->data, 3, 3, n, exact));
  g_autoptr(NwVolume) back = nw_volume_new_like(h, 3, NULL);
  for (size_t q = 0; q < nw_volume_n_floats(back); q++)
    back->data[q] = NAN;
  NW_TEST_CUDA(nw_poison(staging, n * 3 * sizeof(float)));
  NW_TEST_CUDA(nw_field_download(back->data, staging, field, grid_of(d), stage, 0));
  check(nw_validate_floats("field download", back->data, 3, h->data, 3, 3, n, exact));
  NW_TEST_CUDA(cudaFree(field));
  NW_TEST_CUDA(cudaFree(staging));
}

static void test_upload_download(void)
{
  upload_download(grids[2], NULL);
  /* 4.6 Mi floats: more than two 2 Mi-float chunks of the pinned stage (staging_cuda.cuh), the
   * last chunk partial; through a stage of the call's own, then a job's kept stage twice */
  upload_download(Dims{130, 121, 97}, NULL);
  float *slot = NULL;
  float *stage = nw_stage_for(&slot, (size_t)130 * 121 * 97 * 3);
  g_assert_nonnull(stage);
  g_assert_true(stage == slot);
  g_assert_null(nw_stage_for(&slot, 1000)); /* a small copy needs none */
  upload_download(Dims{130, 121, 97}, stage);
  upload_download(Dims{130, 121, 97}, nw_stage_for(&slot, (size_t)130 * 121 * 97 * 3));
  nw_stage_free(slot);
  /* a stage given back is the next job's on this device (no second pinning), and copies
   * through it as well; two at once: the second is a new one */
  float *again = NULL, *second = NULL;
  NW_TEST_CUDA(nw_stage_alloc(&again));
  g_assert_true(again == slot);
  NW_TEST_CUDA(nw_stage_alloc(&second));
  g_assert_nonnull(second);
  g_assert_true(second != again);
  upload_download(Dims{130, 121, 97}, again);
  upload_download(Dims{130, 121, 97}, second);
  nw_stage_free(second);
  nw_stage_free(again); /* the kept one is already second: this one is freed */
}

/* An image of 4.3 Mi voxels down through the pinned chunks (three, the last partial) into a
 * new host volume: copies only, so exactly equal. */
static void test_image_download(void)
{
  const NwTolerance exact = {0.0, 0.0};
  g_autoptr(NwVolume) h = nw_test_random_volume(170, 161, 157, 1, -5.0, 5.0, 0, 72);
  const size_t n = nw_volume_n_voxels(h);
  float *d = (float *)nw_test_device_poisoned(n * sizeof(float));
  NW_TEST_CUDA(cudaMemcpy(d, h->data, n * sizeof(float), cudaMemcpyHostToDevice));
  GError *error = NULL;
  g_autoptr(NwVolume) back = nw_image_download_new(d, h, NULL, 0, &error);
  g_assert_no_error(error);
  check(nw_validate_floats("image download", back->data, 1, h->data, 1, 1, n, exact));
  NW_TEST_CUDA(cudaFree(d));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  if (!nw_test_have_cuda())
    return NW_TEST_SKIP;
  g_test_add_func("/cuda/field-kernels/compose", test_compose);
  g_test_add_func("/cuda/field-kernels/axpy", test_axpy);
  g_test_add_func("/cuda/field-kernels/max-norm", test_max_norm);
  g_test_add_func("/cuda/field-kernels/exp", test_exp);
  g_test_add_func("/cuda/field-kernels/warp", test_warp);
  g_test_add_func("/cuda/field-kernels/jacobian", test_jacobian);
  g_test_add_func("/cuda/field-kernels/upload-download", test_upload_download);
  g_test_add_func("/cuda/field-kernels/image-download", test_image_download);
  return g_test_run();
}
