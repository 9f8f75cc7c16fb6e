/* test_cuda_demons_kernels.cu — every kernel of cuda/demons_kernels.cu against its CPU twin
 * in core/cpu/demons_cpu.c (demons_cpu.h), one at a time, through tests/cuda_validate.h: the
 * demons update (ssd with the three forces, lcc, and inside a masks' region), the masks'
 * region (fixed mask and warped moving mask), the LCC packs and post-processing of the fixed
 * and the warped image, and the per-iteration sums (ssd with W read or with the warp fused
 * in, lcc, and over a region) with the Jacobian minimum and fold count. Skips (77) without a
 * CUDA device. Test thread only.
 *
 * Inputs are random and non-zero (fixed seeds): intensities 10..110 that change from voxel to
 * voxel, with a flat box in the fixed image for LCC's "locally flat" rule. Each kernel gets
 * exactly the inputs its CPU twin gets (the level's mean is rounded to float on both sides, as
 * the kernels receive it), and its outputs are poisoned (NaN) first. Tolerances are stated
 * per kernel. */
#include <cuda_runtime.h>
#include <float.h>
#include <math.h>
#include <stdio.h>

#include "cuda_validate.h"
#include "cuda_validate_demons.cuh"
#include "demons_cpu.h"
#include "demons_kernels.cuh"
#include "field.h"
#include "resample.h"
#include "smooth.h"
#include "testutil.h"

typedef struct {
  int nx, ny, nz;
} Dims;

static const Dims grids[] = {{37, 29, 23}, {45, 31, 1}, {131, 5, 4}};

#define QUANTUM (1.0 / 256.0) /* displacements that keep x + s(x) exact (warp tests) */

static void check(size_t mismatches)
{
  g_assert_cmpuint(mismatches, ==, 0);
}

static size_t voxels(Dims d)
{
  return (size_t)d.nx * d.ny * d.nz;
}

/* Fixed image: random 10..110 with a flat box (value 42) at i < 6. */
static NwVolume *fixed_image(Dims d, guint32 seed)
{
  NwVolume *F = nw_test_random_volume(d.nx, d.ny, d.nz, 1, 10.0, 110.0, 0, seed);
  for (int k = 0; k < d.nz; k++)
    for (int j = 0; j < d.ny; j++)
      for (int i = 0; i < 6; i++)
        F->data[nw_volume_index(F, i, j, k)] = 42.0f;
  return F;
}

/* The level constants as demons_common.c makes them, with the mean rounded to float. */
static NwDemonsLevelConst level_const(const NwVolume *F)
{
  NwVolumeStats fs;
  nw_volume_stats(F, &fs);
  const double range = (double)fs.max - fs.min, scale2 = range > 0 ? range * range : 1.0;
  return NwDemonsLevelConst{(float)fs.mean, scale2, NW_DEMONS_LCC_EPS * scale2};
}

/* A device float4 buffer from an nc = 4 volume (as it is). */
static float4 *device_float4(const NwVolume *v)
{
  g_assert_cmpint(v->nc, ==, 4);
  return (float4 *)nw_test_device_floats(v->data, nw_volume_n_floats(v));
}

/* ---- update -------------------------------------------------------------------------------
 * The CPU works in double and rounds u once; the GPU in float. Updates are at most alpha
 * voxels; an emulation of the kernel's float arithmetic (with and without FMA) differed from
 * the CPU by <= 3.3e-7 voxel on such inputs. Tolerance 1e-5 voxel. */

static void test_update_ssd(void)
{
  const NwTolerance tol = {1e-5, 0.0};
  const float alphas[] = {1.0f, 0.4f};
  for (gsize gi = 0; gi < G_N_ELEMENTS(grids); gi++) {
    const Dims d = grids[gi];
    const size_t n = voxels(d);
    g_autoptr(NwVolume) F = fixed_image(d, 1);
    g_autoptr(NwVolume) W = nw_test_random_volume(d.nx, d.ny, d.nz, 1, 10.0, 110.0, 0, 2);
    const NwDemonsLevelConst lc = level_const(F);
    float *dF = nw_test_device_floats(F->data, n), *dW = nw_test_device_floats(W->data, n);
    float4 *du = (float4 *)nw_test_device_poisoned(n * sizeof(float4));
    g_autoptr(NwVolume) cpu = nw_volume_new_like(F, 3, NULL);
    for (int force = NW_DEMONS_FORCE_SYMMETRIC; force <= NW_DEMONS_FORCE_MOVING; force++)
      for (gsize ai = 0; ai < G_N_ELEMENTS(alphas); ai++) {
        nw_demons_update_cpu(cpu, F, W, NULL, NULL, NULL, force, alphas[ai],
                             NW_DEMONS_DEN_MIN * lc.scale2);
        NW_TEST_CUDA(nw_poison(du, n * sizeof(float4)));
        NW_TEST_CUDA(nw_demons_update_cuda(du, dF, dW, NULL, NULL, NULL, force, alphas[ai], lc,
                                           NwGrid{d.nx, d.ny, d.nz}, 0));
        NW_TEST_CUDA(cudaDeviceSynchronize());
        g_autofree char *name = g_strdup_printf("update ssd %dx%dx%d force %d alpha %g", d.nx, d.ny,
                                                d.nz, force, alphas[ai]);
        check(nw_validate_result(name, (const float *)du, 4, cpu->data, 3, 3, n, tol));
      }
    NW_TEST_CUDA(cudaFree(dF));
    NW_TEST_CUDA(cudaFree(dW));
    NW_TEST_CUDA(cudaFree(du));
  }
}

/* lcc: the same step on the normalised images (component 0 of lcc_f and lcc_w), random here
 * (-2..2, as normalised images are, and positive statistics). */
static void test_update_lcc(void)
{
  const NwTolerance tol = {1e-5, 0.0};
  const Dims d = grids[0];
  const size_t n = voxels(d);
  g_autoptr(NwVolume) F = fixed_image(d, 3);
  g_autoptr(NwVolume) W = nw_test_random_volume(d.nx, d.ny, d.nz, 1, 10.0, 110.0, 0, 4);
  g_autoptr(NwVolume) lcc_f = nw_test_random_volume(d.nx, d.ny, d.nz, 3, 0.01, 2.0, 0, 5);
  g_autoptr(NwVolume) lcc_w = nw_test_random_volume(d.nx, d.ny, d.nz, 4, 0.01, 2.0, 0, 6);
  for (size_t e = 0; e < n; e++) { /* signed normalised images */
    lcc_f->data[3 * e] -= 1.0f;
    lcc_w->data[4 * e] -= 1.0f;
  }
  const NwDemonsLevelConst lc = level_const(F);
  float *dF = nw_test_device_floats(F->data, n), *dW = nw_test_device_floats(W->data, n);
  float4 *df = (float4 *)nw_test_device_field(lcc_f), *dw = device_float4(lcc_w);
  float4 *du = (float4 *)nw_test_device_poisoned(n * sizeof(float4));
  g_autoptr(NwVolume) cpu = nw_volume_new_like(F, 3, NULL);
  for (int force = NW_DEMONS_FORCE_SYMMETRIC; force <= NW_DEMONS_FORCE_MOVING; force++) {
    nw_demons_update_cpu(cpu, F, W, lcc_f, lcc_w, NULL, force, 1.0, NW_DEMONS_DEN_MIN);
    NW_TEST_CUDA(nw_poison(du, n * sizeof(float4)));
    NW_TEST_CUDA(nw_demons_update_cuda(du, dF, dW, df, dw, NULL, force, 1.0f, lc,
                                       NwGrid{d.nx, d.ny, d.nz}, 0));
    NW_TEST_CUDA(cudaDeviceSynchronize());
    g_autofree char *name = g_strdup_printf("update lcc force %d", force);
    check(nw_validate_result(name, (const float *)du, 4, cpu->data, 3, 3, n, tol));
  }
  void *bufs[] = {dF, dW, df, dw, du};
  for (gsize b = 0; b < G_N_ELEMENTS(bufs); b++)
    NW_TEST_CUDA(cudaFree(bufs[b]));
}

/* ---- masks --------------------------------------------------------------------------------
 * A random region of 0 and 1 (about half the voxels inside). */
static NwVolume *random_region(Dims d, guint32 seed)
{
  NwVolume *r = nw_test_random_volume(d.nx, d.ny, d.nz, 1, 0.0, 1.0, 0, seed);
  for (size_t e = 0; e < nw_volume_n_voxels(r); e++)
    r->data[e] = r->data[e] >= 0.5f ? 1.0f : 0.0f;
  return r;
}

/* ssd update inside a region: the same tolerance as without; outside it both are exactly 0
 * (checked apart: the tolerance alone would let 1e-5 through). */
static void test_update_masked(void)
{
  const NwTolerance tol = {1e-5, 0.0};
  for (gsize gi = 0; gi < G_N_ELEMENTS(grids); gi++) {
    const Dims d = grids[gi];
    const size_t n = voxels(d);
    g_autoptr(NwVolume) F = fixed_image(d, 60 + gi);
    g_autoptr(NwVolume) W = nw_test_random_volume(d.nx, d.ny, d.nz, 1, 10.0, 110.0, 0, 70 + gi);
    g_autoptr(NwVolume) region = random_region(d, 80 + gi);
    const NwDemonsLevelConst lc = level_const(F);
    float *dF = nw_test_device_floats(F->data, n), *dW = nw_test_device_floats(W->data, n);
    float *dr = nw_test_device_floats(region->data, n);
    float4 *du = (float4 *)nw_test_device_poisoned(n * sizeof(float4));
    g_autoptr(NwVolume) cpu = nw_volume_new_like(F, 3, NULL);
    nw_demons_update_cpu(cpu, F, W, NULL, NULL, region, NW_DEMONS_FORCE_SYMMETRIC, 1.0,
                         NW_DEMONS_DEN_MIN * lc.scale2);
    NW_TEST_CUDA(nw_demons_update_cuda(du, dF, dW, NULL, NULL, dr, NW_DEMONS_FORCE_SYMMETRIC, 1.0f,
                                       lc, NwGrid{d.nx, d.ny, d.nz}, 0));
    NW_TEST_CUDA(cudaDeviceSynchronize());
    g_autofree char *name = g_strdup_printf("update masked %dx%dx%d", d.nx, d.ny, d.nz);
    check(nw_validate_result(name, (const float *)du, 4, cpu->data, 3, 3, n, tol));
    g_autofree float4 *h = g_new(float4, n);
    NW_TEST_CUDA(cudaMemcpy(h, du, n * sizeof(float4), cudaMemcpyDeviceToHost));
    size_t outside = 0, nonzero = 0;
    for (size_t e = 0; e < n; e++)
      if (region->data[e] == 0.0f) {
        outside++;
        nonzero += h[e].x != 0.0f || h[e].y != 0.0f || h[e].z != 0.0f;
        for (int c = 0; c < 3; c++)
          g_assert_cmpfloat(cpu->data[3 * e + c], ==, 0.0f);
      }
    fprintf(stderr, "%s: %zu voxels outside, %zu with a GPU update\n", name, outside, nonzero);
    g_assert_cmpuint(outside, >, 0);
    g_assert_cmpuint(nonzero, ==, 0);
    void *bufs[] = {dF, dW, dr, du};
    for (gsize b = 0; b < G_N_ELEMENTS(bufs); b++)
      NW_TEST_CUDA(cudaFree(bufs[b]));
  }
}

/* The region of a fixed mask (random 0..1, thresholded at 0.5 on both sides) and a moving
 * mask (a box of 1, sampled at x + s(x) with s of multiples of QUANTUM so that both sides
 * sample the very same positions), each alone and both. The decisions must be equal, except
 * where the CPU's warped moving mask lies within 1e-6 of 0.5 (the warp's float tolerance at
 * values <= 1: test_cuda_field_kernels). */
static void test_region(void)
{
  for (gsize gi = 0; gi < G_N_ELEMENTS(grids); gi++) {
    const Dims d = grids[gi];
    const size_t n = voxels(d);
    const NwGrid g = {d.nx, d.ny, d.nz};
    g_autoptr(NwVolume) fmask = nw_test_random_volume(d.nx, d.ny, d.nz, 1, 0.0, 1.0, 0, 90 + gi);
    g_autoptr(NwVolume) mmask = nw_volume_new(d.nx, d.ny, d.nz, 1, NULL);
    for (int k = 0; k < d.nz; k++)
      for (int j = 0; j < d.ny; j++)
        for (int i = 0; i < d.nx; i++)
          mmask->data[nw_volume_index(mmask, i, j, k)] =
              i >= d.nx / 4 && i < 3 * d.nx / 4 && j >= d.ny / 4 && j < 3 * d.ny / 4 ? 1.0f : 0.0f;
    g_autoptr(NwVolume) s = nw_test_random_volume(d.nx, d.ny, d.nz, 3, -1.7, 1.7, QUANTUM, 95 + gi);
    g_autoptr(NwVolume) warped = nw_volume_new_like(mmask, 1, NULL);
    nw_warp(warped, mmask, s, NW_INTERP_LINEAR);
    float *dfm = nw_test_device_floats(fmask->data, n),
          *dmm = nw_test_device_floats(mmask->data, n);
    float4 *ds = (float4 *)nw_test_device_field(s);
    float *dr = (float *)nw_test_device_poisoned(n * sizeof(float));
    g_autoptr(NwVolume) cpu = nw_volume_new_like(fmask, 1, NULL);
    g_autofree float *gpu = g_new(float, n);
    for (int which = 1; which <= 3; which++) { /* 1 fixed, 2 moving, 3 both */
      const gboolean use_f = which & 1, use_m = which & 2;
      nw_demons_region_cpu(cpu, use_f ? fmask : NULL, use_m ? mmask : NULL, s);
      NW_TEST_CUDA(nw_poison(dr, n * sizeof(float)));
      NW_TEST_CUDA(nw_demons_region_cuda(dr, use_f ? dfm : NULL, use_m ? dmm : NULL, ds, g, 0));
      NW_TEST_CUDA(cudaMemcpy(gpu, dr, n * sizeof(float), cudaMemcpyDeviceToHost));
      size_t inside = 0, differ = 0, near_half = 0;
      for (size_t e = 0; e < n; e++) {
        g_assert_true(gpu[e] == 0.0f || gpu[e] == 1.0f);
        inside += cpu->data[e] != 0.0f;
        const gboolean near = use_m && fabsf(warped->data[e] - 0.5f) <= 1e-6f;
        near_half += near;
        differ += gpu[e] != cpu->data[e] && !near;
      }
      fprintf(stderr, "region %dx%dx%d masks %d: %zu of %zu inside, %zu near 0.5, %zu differ: %s\n",
              d.nx, d.ny, d.nz, which, inside, n, near_half, differ, differ == 0 ? "ok" : "FAILED");
      g_assert_cmpuint(inside, >, 0);
      g_assert_cmpuint(inside, <, n);
      g_assert_cmpuint(differ, ==, 0);
    }
    void *bufs[] = {dfm, dmm, ds, dr};
    for (gsize b = 0; b < G_N_ELEMENTS(bufs); b++)
      NW_TEST_CUDA(cudaFree(bufs[b]));
  }
}

/* ---- LCC statistics -----------------------------------------------------------------------
 * nw_demons_lcc_*_cpu = pack, Gaussian (tested in test_cuda_gauss_kernels), post. Each kernel
 * is checked on its own: the pack against the CPU's pack (the same double arithmetic on the
 * same floats: equal, tolerance 0), then the post applied to the CPU's smoothed pack against
 * the CPU function's result. The post keeps the means (equal), recomputes the variances and
 * covariance in float (E[x²] - μ² and σFW - μF μW; nvcc may fuse: one rounding of values up
 * to 2500, ulp 2.4e-4: tolerance 1e-3) and the normalised image in double from them
 * (tolerance 1e-5 + 1e-5 |x|: the variances' rounding over sqrt(σ² + eps), eps = 1 here). */

static const NwTolerance tol_exact = {0.0, 0.0}, tol_var = {1e-3, 0.0}, tol_norm = {1e-5, 1e-5};

/* Validates the nc components of a device float4 buffer against a CPU volume, one tolerance
 * per component. */
static void check_components(const char *what, const float4 *d, const NwVolume *cpu, int nc,
                             const NwTolerance *tols, const char *const *names)
{
  for (int c = 0; c < nc; c++) {
    g_autofree char *name = g_strdup_printf("%s: %s", what, names[c]);
    check(nw_validate_result(name, (const float *)d + c, 4, cpu->data + c, cpu->nc, 1,
                             nw_volume_n_voxels(cpu), tols[c]));
  }
}

static void test_lcc_fixed(void)
{
  const double sigma = 2.0;
  for (gsize gi = 0; gi < G_N_ELEMENTS(grids); gi++) {
    const Dims d = grids[gi];
    const size_t n = voxels(d);
    const NwGrid g = {d.nx, d.ny, d.nz};
    g_autoptr(NwVolume) F = fixed_image(d, 10 + gi);
    const NwDemonsLevelConst lc = level_const(F);
    g_autoptr(NwVolume) cpu = nw_volume_new_like(F, 3, NULL);
    g_assert_true(nw_demons_lcc_fixed_cpu(cpu, F, lc.shift, lc.eps, sigma, NULL));
    /* The CPU's pack, (0, f, f²) with f = F - shift in double. */
    g_autoptr(NwVolume) pack = nw_volume_new_like(F, 3, NULL);
    for (size_t e = 0; e < n; e++) {
      const double f = F->data[e] - (double)lc.shift;
      pack->data[3 * e] = 0.0f;
      pack->data[3 * e + 1] = (float)f;
      pack->data[3 * e + 2] = (float)(f * f);
    }
    float *dF = nw_test_device_floats(F->data, n);
    float4 *dp = (float4 *)nw_test_device_poisoned(n * sizeof(float4));
    NW_TEST_CUDA(nw_lcc_fixed_pack(dp, dF, lc.shift, g, 0));
    NW_TEST_CUDA(cudaDeviceSynchronize());
    const char *pack_names[] = {"0", "f", "f²"}, *names[] = {"F^", "muF", "varF"};
    const NwTolerance pack_tols[] = {tol_exact, tol_exact, tol_exact};
    const NwTolerance post_tols[] = {tol_norm, tol_exact, tol_var};
    g_autofree char *what = g_strdup_printf("lcc fixed pack %dx%dx%d", d.nx, d.ny, d.nz);
    check_components(what, dp, pack, 3, pack_tols, pack_names);
    const double s3[3] = {sigma, sigma, sigma};
    g_assert_true(nw_smooth_gaussian(pack, s3, NULL));
    float4 *ds = (float4 *)nw_test_device_field(pack);
    NW_TEST_CUDA(nw_lcc_fixed_post(ds, dF, lc, g, 0));
    NW_TEST_CUDA(cudaDeviceSynchronize());
    g_autofree char *what2 = g_strdup_printf("lcc fixed post %dx%dx%d", d.nx, d.ny, d.nz);
    check_components(what2, ds, cpu, 3, post_tols, names);
    NW_TEST_CUDA(cudaFree(dF));
    NW_TEST_CUDA(cudaFree(dp));
    NW_TEST_CUDA(cudaFree(ds));
  }
}

static void test_lcc_warped(void)
{
  const double sigma = 1.5;
  for (gsize gi = 0; gi < G_N_ELEMENTS(grids); gi++) {
    const Dims d = grids[gi];
    const size_t n = voxels(d);
    const NwGrid g = {d.nx, d.ny, d.nz};
    g_autoptr(NwVolume) F = fixed_image(d, 20 + gi);
    g_autoptr(NwVolume) W = nw_test_random_volume(d.nx, d.ny, d.nz, 1, 10.0, 110.0, 0, 30 + gi);
    const NwDemonsLevelConst lc = level_const(F);
    g_autoptr(NwVolume) lcc_f = nw_volume_new_like(F, 3, NULL);
    g_autoptr(NwVolume) cpu = nw_volume_new_like(F, 4, NULL);
    g_assert_true(nw_demons_lcc_fixed_cpu(lcc_f, F, lc.shift, lc.eps, sigma, NULL));
    g_assert_true(nw_demons_lcc_warped_cpu(cpu, F, W, lcc_f, lc.shift, lc.eps, sigma, NULL));
    /* The CPU's pack, (0, w, w², f w) with w = W - shift, f = F - shift in double. */
    g_autoptr(NwVolume) pack = nw_volume_new_like(F, 4, NULL);
    for (size_t e = 0; e < n; e++) {
      const double w = W->data[e] - (double)lc.shift, f = F->data[e] - (double)lc.shift;
      float *p = pack->data + 4 * e;
      p[0] = 0.0f;
      p[1] = (float)w;
      p[2] = (float)(w * w);
      p[3] = (float)(f * w);
    }
    float *dF = nw_test_device_floats(F->data, n), *dW = nw_test_device_floats(W->data, n);
    float4 *dp = (float4 *)nw_test_device_poisoned(n * sizeof(float4));
    NW_TEST_CUDA(nw_lcc_warped_pack(dp, dF, dW, lc.shift, g, 0));
    NW_TEST_CUDA(cudaDeviceSynchronize());
    const char *pack_names[] = {"0", "w", "w²", "f w"};
    const char *names[] = {"W^", "muW", "varW", "covFW"};
    const NwTolerance pack_tols[] = {tol_exact, tol_exact, tol_exact, tol_exact};
    const NwTolerance post_tols[] = {tol_norm, tol_exact, tol_var, tol_var};
    g_autofree char *what = g_strdup_printf("lcc warped pack %dx%dx%d", d.nx, d.ny, d.nz);
    check_components(what, dp, pack, 4, pack_tols, pack_names);
    const double s3[3] = {sigma, sigma, sigma};
    g_assert_true(nw_smooth_gaussian(pack, s3, NULL));
    float4 *ds = device_float4(pack), *df = (float4 *)nw_test_device_field(lcc_f);
    NW_TEST_CUDA(nw_lcc_warped_post(ds, df, dW, lc, g, 0));
    NW_TEST_CUDA(cudaDeviceSynchronize());
    g_autofree char *what2 = g_strdup_printf("lcc warped post %dx%dx%d", d.nx, d.ny, d.nz);
    check_components(what2, ds, cpu, 4, post_tols, names);
    void *bufs[] = {dF, dW, dp, ds, df};
    for (gsize b = 0; b < G_N_ELEMENTS(bufs); b++)
      NW_TEST_CUDA(cudaFree(bufs[b]));
  }
}

/* ---- sums ---------------------------------------------------------------------------------
 * Against the CPU's sums of the same inputs: nw_validate_demons_sums states the tolerances
 * (summation order, float determinants, folds near det = 0). */

/* The sums of one configuration: ssd with W read (fused = FALSE), ssd with W = M ∘ s computed
 * in the pass (fused: that W is checked against nw_warp, and the sums against the CPU sums of
 * the W it wrote), or lcc (lcc statistics from the CPU, uploaded); masked: over a random
 * region (the Jacobian figures still over every voxel). */
static void sums_case(Dims d, gboolean fused, gboolean lcc, gboolean masked, guint32 seed)
{
  const size_t n = voxels(d);
  const NwGrid g = {d.nx, d.ny, d.nz};
  g_autoptr(NwVolume) F = fixed_image(d, seed);
  g_autoptr(NwVolume) M = nw_test_random_volume(d.nx, d.ny, d.nz, 1, 10.0, 110.0, 0, seed + 1);
  /* Random displacements of up to 0.6 voxel: determinants of both signs (folds). */
  g_autoptr(NwVolume) s = nw_test_random_volume(d.nx, d.ny, d.nz, 3, -0.6, 0.6, QUANTUM, seed + 2);
  g_autoptr(NwVolume) W = nw_volume_new_like(F, 1, NULL);
  nw_warp(W, M, s, NW_INTERP_LINEAR);
  const NwDemonsLevelConst lc = level_const(F);
  g_autoptr(NwVolume) lcc_f = NULL;
  g_autoptr(NwVolume) lcc_w = NULL;
  if (lcc) {
    lcc_f = nw_volume_new_like(F, 3, NULL);
    lcc_w = nw_volume_new_like(F, 4, NULL);
    g_assert_true(nw_demons_lcc_fixed_cpu(lcc_f, F, lc.shift, lc.eps, 2.0, NULL));
    g_assert_true(nw_demons_lcc_warped_cpu(lcc_w, F, W, lcc_f, lc.shift, lc.eps, 2.0, NULL));
  }
  float *dF = nw_test_device_floats(F->data, n), *dM = nw_test_device_floats(M->data, n);
  float *dW = fused ? (float *)nw_test_device_poisoned(n * sizeof(float))
                    : nw_test_device_floats(W->data, n);
  float4 *ds = (float4 *)nw_test_device_field(s);
  float4 *df = lcc ? (float4 *)nw_test_device_field(lcc_f) : NULL;
  float4 *dw = lcc ? device_float4(lcc_w) : NULL;
  g_autoptr(NwVolume) region = masked ? random_region(d, seed + 3) : NULL;
  float *dr = masked ? nw_test_device_floats(region->data, n) : NULL;
  NwDemonsSums *partials =
      (NwDemonsSums *)nw_test_device_poisoned(NW_DEMONS_FIG_BLOCKS * sizeof(NwDemonsSums));
  NwDemonsSums *dsums = (NwDemonsSums *)nw_test_device_poisoned(sizeof(NwDemonsSums));
  NW_TEST_CUDA(
      nw_demons_sums_cuda(dsums, partials, dF, dW, fused ? dM : NULL, ds, df, dw, dr, lc, g, 0));
  NwDemonsSums gpu;
  NW_TEST_CUDA(cudaMemcpy(&gpu, dsums, sizeof gpu, cudaMemcpyDeviceToHost));
  g_autofree char *what = g_strdup_printf("sums %s%s %dx%dx%d",
                                          lcc     ? "lcc"
                                          : fused ? "ssd fused warp"
                                                  : "ssd",
                                          masked ? " masked" : "", d.nx, d.ny, d.nz);
  if (fused) {
    /* W written by the pass: the warp's tolerance (test_cuda_field_kernels: 1e-4 at 110). */
    g_autofree char *wname = g_strdup_printf("%s: W = M o s", what);
    check(nw_validate_result(wname, dW, 1, W->data, 1, 1, n, NwTolerance{1e-4, 0.0}));
    NW_TEST_CUDA(cudaMemcpy(W->data, dW, n * sizeof(float), cudaMemcpyDeviceToHost));
  }
  size_t folds = 0;
  g_assert_true(nw_validate_demons_sums(what, &gpu, F, W, lcc_f, lcc_w, region, s, lc, &folds));
  g_assert_cmpuint(folds, >, 0); /* the case must exercise the fold count */
  if (masked) /* the region leaves some voxels out of the similarity, none of the Jacobian */
    g_assert_cmpfloat(gpu.sim.n, <, (double)n);
  else
    g_assert_cmpfloat(gpu.sim.n, ==, (double)n);
  void *bufs[] = {dF, dM, dW, ds, df, dw, dr, partials, dsums};
  for (gsize b = 0; b < G_N_ELEMENTS(bufs); b++)
    NW_TEST_CUDA(cudaFree(bufs[b]));
}

static void test_sums(void)
{
  guint32 seed = 50, masked_seed = 500;
  for (gsize gi = 0; gi < G_N_ELEMENTS(grids); gi++) {
    sums_case(grids[gi], FALSE, FALSE, FALSE, seed += 3);
    sums_case(grids[gi], TRUE, FALSE, FALSE, seed += 3);
    sums_case(grids[gi], FALSE, TRUE, FALSE, seed += 3);
    sums_case(grids[gi], TRUE, FALSE, TRUE, masked_seed += 4);
    sums_case(grids[gi], FALSE, TRUE, TRUE, masked_seed += 4);
  }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  if (!nw_test_have_cuda())
    return NW_TEST_SKIP;
  g_test_add_func("/cuda/demons-kernels/update-ssd", test_update_ssd);
  g_test_add_func("/cuda/demons-kernels/update-lcc", test_update_lcc);
  g_test_add_func("/cuda/demons-kernels/update-masked", test_update_masked);
  g_test_add_func("/cuda/demons-kernels/region", test_region);
  g_test_add_func("/cuda/demons-kernels/lcc-fixed", test_lcc_fixed);
  g_test_add_func("/cuda/demons-kernels/lcc-warped", test_lcc_warped);
  g_test_add_func("/cuda/demons-kernels/sums", test_sums);
  return g_test_run();
}
