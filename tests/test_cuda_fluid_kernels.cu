/* test_cuda_fluid_kernels.cu — every kernel of cuda/fluid_kernels.cu against its CPU twin in
 * core/cpu/fluid_kernels_cpu.c (fluid_kernels.h), one at a time, through tests/cuda_validate.h:
 * the deformed template and its gradient, the trial step fused with it, the map carried to a
 * finer grid (nw_resize), the plain deformation, the composition (both signs,
 * with and without u_prev), the masks' region, the zeroed border, J and P, the force in both
 * variants (against the CPU, and against each other bit for bit), the transport with its
 * maximum, and the energy sums. Skips (77) without a CUDA device. Test thread only.
 *
 * Grids: odd sizes that are not multiples of the reuse kernel's 32 x 8 tiles, with more z
 * slices than one of its chunks of 16 (several chunks, a partial last one), a 2D one (nz = 1)
 * and thin ones. Inputs random with fixed seeds: intensities 10..110, u of 0.25 voxel (J
 * between about 0.5 and 1.6) with, planted, voxels exactly on the grid (u = 0 and integer
 * components: the interpolant's kinks), voxels sent outside the volume (clamped), and a fold
 * (a jump of 3 voxels: J < 0 at its middle). Outputs are poisoned (NaN) first, so an element
 * a kernel never wrote fails. Tolerances are stated per kernel, with the reason. */
#include <cuda_runtime.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cuda_validate.h"
#include "field.h"
#include "fluid_kernels.cuh"
#include "fluid_kernels.h"
#include "resample.h"
#include "testutil.h"

typedef struct {
  int nx, ny, nz;
} Dims;

static const Dims grids[] = {{37, 29, 23}, {45, 31, 1}, {131, 5, 4}, {70, 19, 37}};

static void check(size_t mismatches)
{
  g_assert_cmpuint(mismatches, ==, 0);
}

static size_t voxels(Dims d)
{
  return (size_t)d.nx * d.ny * d.nz;
}

static NwGrid grid_of(Dims d)
{
  return NwGrid{d.nx, d.ny, d.nz};
}

/* u (paper's sign) of about 0.25 voxel and a fold; with `sampling` also the voxels on the
 * grid and far outside of the header comment (for the sampling kernels only: the others would
 * see derivatives of 30 voxels per voxel there, which would set the scale of every error). */
static NwVolume *test_u(Dims d, guint32 seed, gboolean sampling)
{
  NwVolume *u = nw_test_random_volume(d.nx, d.ny, d.nz, 3, -0.25, 0.25, 0, seed);
  const size_t n = voxels(d);
  for (size_t e = 0; e < n && sampling; e += 7) { /* on the grid: 0, or integers */
    float *p = u->data + 3 * e;
    p[0] = 0.0f;
    p[1] = e % 2 ? 1.0f : 0.0f;
    p[2] = e % 3 ? 0.0f : -1.0f;
  }
  for (size_t e = 3; e < n && sampling; e += 53) { /* far outside: clamped */
    float *p = u->data + 3 * e;
    p[0] = 60.0f;
    p[1] = -45.5f;
    p[2] = 7.25f;
  }
  if (d.nx > 8 && d.ny > 4) { /* a fold at (4, 2, 0) */
    u->data[3 * nw_volume_index(u, 5, 2, 0)] = 1.5f;
    u->data[3 * nw_volume_index(u, 3, 2, 0)] = -1.5f;
  }
  return u;
}

/* ---- deformed template -----------------------------------------------------------------
 * The kernel repeats the CPU's double arithmetic operation for operation (no contraction) and
 * rounds once: equal but for the last bit of log/rounding paths. Intensities up to 110 (ulp
 * 7.6e-6), gradients up to ~100 per voxel: tolerance 2e-5 + 1e-6 relative. */
static void test_deform_grad(void)
{
  const NwTolerance tol = {2e-5, 1e-6};
  for (gsize gi = 0; gi < G_N_ELEMENTS(grids); gi++) {
    const Dims d = grids[gi];
    const size_t n = voxels(d);
    g_autoptr(NwVolume) T = nw_test_random_volume(d.nx, d.ny, d.nz, 1, 10.0, 110.0, 0, 11);
    g_autoptr(NwVolume) u = test_u(d, 12, TRUE);
    g_autoptr(NwVolume) Tw = nw_volume_new_like(T, 1, NULL);
    g_autoptr(NwVolume) gTw = nw_volume_new_like(T, 3, NULL);
    nw_fluid_deform_grad_cpu(Tw, gTw, T, u);
    float *dT = nw_test_device_floats(T->data, n);
    float4 *du = (float4 *)nw_test_device_field(u);
    float *dTw = (float *)nw_test_device_poisoned(n * sizeof(float));
    float4 *dg = (float4 *)nw_test_device_poisoned(n * sizeof(float4));
    NW_TEST_CUDA(nw_fluid_deform_grad_cuda(dTw, dg, dT, du, grid_of(d), 0));
    NW_TEST_CUDA(cudaDeviceSynchronize());
    g_autofree char *n1 = g_strdup_printf("deform_grad Tw %dx%dx%d", d.nx, d.ny, d.nz);
    g_autofree char *n2 = g_strdup_printf("deform_grad gTw %dx%dx%d", d.nx, d.ny, d.nz);
    check(nw_validate_result(n1, dTw, 1, Tw->data, 1, 1, n, tol));
    check(nw_validate_result(n2, (const float *)dg, 4, gTw->data, 3, 3, n, tol));
    void *bufs[] = {dT, du, dTw, dg};
    for (gsize b = 0; b < G_N_ELEMENTS(bufs); b++)
      NW_TEST_CUDA(cudaFree(bufs[b]));
  }
}

/* ---- the trial step with its deformed template ---------------------------------------------
 * u_out = u + (float)(delta / max|r|) r rounded as nw_field_axpy (float product, float sum, no
 * FMA): equal to the bit; with max|r| = 0 the step is 0 (u itself). Tw and gTw as deform_grad's
 * (the same device code on the same u_out). */
static void test_trial(void)
{
  const NwTolerance tol = {2e-5, 1e-6};
  for (gsize gi = 0; gi < G_N_ELEMENTS(grids); gi++) {
    const Dims d = grids[gi];
    const size_t n = voxels(d);
    const NwGrid g = grid_of(d);
    g_autoptr(NwVolume) T = nw_test_random_volume(d.nx, d.ny, d.nz, 1, 10.0, 110.0, 0, 15);
    g_autoptr(NwVolume) u = test_u(d, 16, FALSE);
    g_autoptr(NwVolume) r = nw_test_random_volume(d.nx, d.ny, d.nz, 3, -3.0, 3.0, 0, 17);
    float *dT = nw_test_device_floats(T->data, n);
    float4 *du = (float4 *)nw_test_device_field(u), *dr = (float4 *)nw_test_device_field(r);
    float4 *dout = (float4 *)nw_test_device_poisoned(n * sizeof(float4));
    float *dTw = (float *)nw_test_device_poisoned(n * sizeof(float));
    float4 *dg = (float4 *)nw_test_device_poisoned(n * sizeof(float4));
    double *dmax = (double *)nw_test_device_poisoned(sizeof(double));
    const double delta = 0.37, maxes[2] = {2.9, 0.0};
    for (int c = 0; c < 2; c++) {
      g_autoptr(NwVolume) want = nw_volume_new_like(u, 3, NULL);
      g_autoptr(NwVolume) Tw = nw_volume_new_like(T, 1, NULL);
      g_autoptr(NwVolume) gTw = nw_volume_new_like(T, 3, NULL);
      if (maxes[c] > 0.0)
        nw_field_axpy(want, u, delta / maxes[c], r);
      else
        memcpy(want->data, u->data, 3 * n * sizeof(float));
      nw_fluid_deform_grad_cpu(Tw, gTw, T, want);
      NW_TEST_CUDA(cudaMemcpy(dmax, &maxes[c], sizeof(double), cudaMemcpyHostToDevice));
      NW_TEST_CUDA(nw_fluid_trial_cuda(dout, dTw, dg, dT, du, dr, delta, dmax, g, 0));
      NW_TEST_CUDA(cudaDeviceSynchronize());
      g_autofree char *n1 =
          g_strdup_printf("trial u max|r| %g %dx%dx%d", maxes[c], d.nx, d.ny, d.nz);
      g_autofree char *n2 = g_strdup_printf("trial Tw %dx%dx%d", d.nx, d.ny, d.nz);
      g_autofree char *n3 = g_strdup_printf("trial gTw %dx%dx%d", d.nx, d.ny, d.nz);
      check(nw_validate_result(n1, (const float *)dout, 4, want->data, 3, 3, n,
                               NwTolerance{0.0, 0.0}));
      check(nw_validate_result(n2, dTw, 1, Tw->data, 1, 1, n, tol));
      check(nw_validate_result(n3, (const float *)dg, 4, gTw->data, 3, 3, n, tol));
    }
    void *bufs[] = {dT, du, dr, dout, dTw, dg, dmax};
    for (gsize b = 0; b < G_N_ELEMENTS(bufs); b++)
      NW_TEST_CUDA(cudaFree(bufs[b]));
  }
}

/* ---- the map carried to a finer level ------------------------------------------------------
 * nw_resize(in, ..., TRUE) repeated operation for operation (positions in double, float lerps
 * without FMA, the ratio's product): equal to the bit, from each grid's pyramid level below
 * (nw_downsample2's sizes: (n + 1) / 2, an axis of one voxel stays) and from an odd size up. */
static void test_resize(void)
{
  for (gsize gi = 0; gi < G_N_ELEMENTS(grids); gi++) {
    const Dims fine = grids[gi];
    const Dims sizes[2] = {{fine.nx > 1 ? (fine.nx + 1) / 2 : 1,
                            fine.ny > 1 ? (fine.ny + 1) / 2 : 1,
                            fine.nz > 1 ? (fine.nz + 1) / 2 : 1},
                           {7, 5, fine.nz > 1 ? 3 : 1}};
    for (int c = 0; c < 2; c++) {
      const Dims d = sizes[c];
      g_autoptr(NwVolume) in = nw_test_random_volume(d.nx, d.ny, d.nz, 3, -2.0, 2.0, 0, 81 + c);
      g_autoptr(GError) err = NULL;
      g_autoptr(NwVolume) want = nw_resize(in, fine.nx, fine.ny, fine.nz, TRUE, &err);
      g_assert_no_error(err);
      float4 *din = (float4 *)nw_test_device_field(in);
      float4 *dout = (float4 *)nw_test_device_poisoned(voxels(fine) * sizeof(float4));
      NW_TEST_CUDA(nw_fluid_resize_field_cuda(dout, grid_of(fine), din, grid_of(d), 0));
      NW_TEST_CUDA(cudaDeviceSynchronize());
      g_autofree char *name = g_strdup_printf("resize %dx%dx%d -> %dx%dx%d", d.nx, d.ny, d.nz,
                                              fine.nx, fine.ny, fine.nz);
      check(nw_validate_result(name, (const float *)dout, 4, want->data, 3, 3, voxels(fine),
                               NwTolerance{0.0, 0.0}));
      NW_TEST_CUDA(cudaFree(din));
      NW_TEST_CUDA(cudaFree(dout));
    }
  }
}

/* ---- deform and compose -------------------------------------------------------------------
 * Positions i - u in float on both sides (C's int - float), the same clamp and split; the
 * GPU's lerps may be fused multiply-adds where the CPU rounds twice: a few ulps. Images up to
 * 110: 1e-4; fields (u_prev up to 2 voxels): 2e-6; + 1e-6 relative. */
static void test_deform_compose(void)
{
  for (gsize gi = 0; gi < G_N_ELEMENTS(grids); gi++) {
    const Dims d = grids[gi];
    const size_t n = voxels(d);
    const NwGrid g = grid_of(d);
    g_autoptr(NwVolume) T = nw_test_random_volume(d.nx, d.ny, d.nz, 1, 10.0, 110.0, 0, 21);
    g_autoptr(NwVolume) u = test_u(d, 22, TRUE);
    g_autoptr(NwVolume) u_prev = nw_test_random_volume(d.nx, d.ny, d.nz, 3, -2.0, 2.0, 0, 23);
    g_autoptr(NwVolume) out = nw_volume_new_like(T, 1, NULL);
    g_autoptr(NwVolume) comp = nw_volume_new_like(T, 3, NULL);
    nw_fluid_deform_cpu(out, T, u);
    nw_fluid_compose_cpu(comp, u_prev, u);
    float *dT = nw_test_device_floats(T->data, n);
    float4 *du = (float4 *)nw_test_device_field(u), *dp = (float4 *)nw_test_device_field(u_prev);
    float *dout = (float *)nw_test_device_poisoned(n * sizeof(float));
    float4 *dc = (float4 *)nw_test_device_poisoned(n * sizeof(float4));
    NW_TEST_CUDA(nw_fluid_deform_cuda(dout, dT, du, g, 0));
    NW_TEST_CUDA(cudaDeviceSynchronize());
    g_autofree char *n1 = g_strdup_printf("deform %dx%dx%d", d.nx, d.ny, d.nz);
    check(nw_validate_result(n1, dout, 1, out->data, 1, 1, n, NwTolerance{1e-4, 1e-6}));
    const NwTolerance ft = {2e-6, 1e-6};
    for (int sign = 1; sign >= -1; sign -= 2) {
      g_autoptr(NwVolume) want = nw_volume_copy(comp);
      for (size_t q = 0; q < 3 * n; q++)
        want->data[q] *= (float)sign;
      NW_TEST_CUDA(nw_poison(dc, n * sizeof(float4)));
      NW_TEST_CUDA(nw_fluid_compose_cuda(dc, dp, du, (float)sign, g, 0));
      NW_TEST_CUDA(cudaDeviceSynchronize());
      g_autofree char *n2 = g_strdup_printf("compose sign %d %dx%dx%d", sign, d.nx, d.ny, d.nz);
      check(nw_validate_result(n2, (const float *)dc, 4, want->data, 3, 3, n, ft));
    }
    /* Without u_prev: -u exactly. */
    g_autoptr(NwVolume) neg = nw_volume_copy(u);
    for (size_t q = 0; q < 3 * n; q++)
      neg->data[q] = -neg->data[q];
    NW_TEST_CUDA(nw_poison(dc, n * sizeof(float4)));
    NW_TEST_CUDA(nw_fluid_compose_cuda(dc, NULL, du, -1.0f, g, 0));
    NW_TEST_CUDA(cudaDeviceSynchronize());
    check(nw_validate_result("compose without u_prev (-u)", (const float *)dc, 4, neg->data, 3, 3,
                             n, NwTolerance{0.0, 0.0}));
    void *bufs[] = {dT, du, dp, dout, dc};
    for (gsize b = 0; b < G_N_ELEMENTS(bufs); b++)
      NW_TEST_CUDA(cudaFree(bufs[b]));
  }
}

/* ---- region and border: exact ------------------------------------------------------------- */
static void test_region_border(void)
{
  const Dims d = grids[3];
  const size_t n = voxels(d);
  const NwGrid g = grid_of(d);
  g_autoptr(NwVolume) fm = nw_test_random_volume(d.nx, d.ny, d.nz, 1, 0.0, 1.0, 0, 31);
  g_autoptr(NwVolume) mm = nw_test_random_volume(d.nx, d.ny, d.nz, 1, 0.0, 1.0, 0, 32);
  fm->data[0] = 0.5f; /* the threshold itself is inside */
  float *dfm = nw_test_device_floats(fm->data, n), *dmm = nw_test_device_floats(mm->data, n);
  float *dr = (float *)nw_test_device_poisoned(n * sizeof(float));
  g_autoptr(NwVolume) region = nw_volume_new_like(fm, 1, NULL);
  const NwVolume *fms[] = {fm, NULL, fm}, *mms[] = {mm, mm, NULL};
  float *dfms[] = {dfm, NULL, dfm}, *dmms[] = {dmm, dmm, NULL};
  for (int c = 0; c < 3; c++) {
    nw_fluid_region_cpu(region, fms[c], mms[c]);
    NW_TEST_CUDA(nw_poison(dr, n * sizeof(float)));
    NW_TEST_CUDA(nw_fluid_region_cuda(dr, dfms[c], dmms[c], g, 0));
    NW_TEST_CUDA(cudaDeviceSynchronize());
    g_autofree char *name = g_strdup_printf("region case %d", c);
    check(nw_validate_result(name, dr, 1, region->data, 1, 1, n, NwTolerance{0.0, 0.0}));
  }
  for (gsize gi = 0; gi < G_N_ELEMENTS(grids); gi++) {
    const Dims dd = grids[gi];
    g_autoptr(NwVolume) u = test_u(dd, 33, TRUE);
    float4 *du = (float4 *)nw_test_device_field(u);
    nw_fluid_zero_border_cpu(u);
    NW_TEST_CUDA(nw_fluid_zero_border_cuda(du, grid_of(dd), 0));
    NW_TEST_CUDA(cudaDeviceSynchronize());
    g_autofree char *name = g_strdup_printf("zero_border %dx%dx%d", dd.nx, dd.ny, dd.nz);
    check(nw_validate_result(name, (const float *)du, 4, u->data, 3, 3, voxels(dd),
                             NwTolerance{0.0, 0.0}));
    NW_TEST_CUDA(cudaFree(du));
  }
  void *bufs[] = {dfm, dmm, dr};
  for (gsize b = 0; b < G_N_ELEMENTS(bufs); b++)
    NW_TEST_CUDA(cudaFree(bufs[b]));
}

/* ---- J and P -------------------------------------------------------------------------------
 * The same double operations without contraction, rounded once to float (log may differ in the
 * last bit of the double): J 1e-6 absolute (8 float ulps near 1), P 1e-6 + 1e-5 relative. */
static void test_jacobian(void)
{
  for (gsize gi = 0; gi < G_N_ELEMENTS(grids); gi++) {
    const Dims d = grids[gi];
    const size_t n = voxels(d);
    g_autoptr(NwVolume) u = test_u(d, 41, FALSE);
    g_autoptr(NwVolume) J = nw_volume_new_like(u, 1, NULL);
    g_autoptr(NwVolume) P = nw_volume_new_like(u, 9, NULL);
    nw_fluid_jacobian_cpu(J, P, u);
    float4 *du = (float4 *)nw_test_device_field(u);
    float *dJ = (float *)nw_test_device_poisoned(n * sizeof(float));
    float *dP = (float *)nw_test_device_poisoned(9 * n * sizeof(float));
    NW_TEST_CUDA(nw_fluid_jacobian_cuda(dJ, dP, du, grid_of(d), 0));
    NW_TEST_CUDA(cudaDeviceSynchronize());
    g_autofree char *n1 = g_strdup_printf("jacobian J %dx%dx%d", d.nx, d.ny, d.nz);
    g_autofree char *n2 = g_strdup_printf("jacobian P %dx%dx%d", d.nx, d.ny, d.nz);
    check(nw_validate_result(n1, dJ, 1, J->data, 1, 1, n, NwTolerance{1e-6, 0.0}));
    check(nw_validate_result(n2, dP, 9, P->data, 9, 9, n, NwTolerance{1e-6, 1e-5}));
    NwJacobianStats js;
    nw_jacobian_stats(J, &js);
    g_test_message("%dx%dx%d: J in [%.3f, %.3f]", d.nx, d.ny, d.nz, js.min, js.max);
    void *bufs[] = {du, dJ, dP};
    for (gsize b = 0; b < G_N_ELEMENTS(bufs); b++)
      NW_TEST_CUDA(cudaFree(bufs[b]));
  }
}

/* ---- the force -----------------------------------------------------------------------------
 * Against the CPU: the CPU builds P in double and stores it as float (6e-8 relative), the GPU
 * evaluates P in float (about 3e-7 relative: t = J - 1 without cancellation, log1pf, one
 * division, ~10 roundings) and the L2 term in float (res · ∇T rounded twice, 1.2e-7 relative).
 * The divergence is a difference of neighbouring P of the same size as P on these rough
 * fields, so |Δf| stays below ~1e-6 · max|f|. Tolerance 1e-5 · max|f_cpu| + 1e-5 |f_cpu|.
 * Between the variants: every operation of P and f is the same explicit intrinsic in both,
 * so the tolerance is 0 (a mismatch is a tiling or halo error: the first ones are printed with
 * their position in the reuse kernel's 32 x 8 x 16 tiles). */

/* Positions of mismatches between the variants, with where they sit in the reuse tiling. */
static size_t compare_variants(const float4 *d_a, const float4 *d_b, Dims d, const char *what)
{
  const size_t n = voxels(d);
  float4 *a = g_new(float4, n), *b = g_new(float4, n);
  NW_TEST_CUDA(cudaMemcpy(a, d_a, n * sizeof(float4), cudaMemcpyDeviceToHost));
  NW_TEST_CUDA(cudaMemcpy(b, d_b, n * sizeof(float4), cudaMemcpyDeviceToHost));
  size_t bad = 0;
  for (size_t e = 0; e < n; e++) {
    const float pa[3] = {a[e].x, a[e].y, a[e].z}, pb[3] = {b[e].x, b[e].y, b[e].z};
    for (int c = 0; c < 3; c++)
      if (memcmp(&pa[c], &pb[c], sizeof(float)) != 0) {
        const int i = (int)(e % d.nx), j = (int)(e / d.nx % d.ny), k = (int)(e / d.nx / d.ny);
        if (bad < 8)
          fprintf(stderr,
                  "  %s: voxel (%d, %d, %d) component %d: recompute %.9g reuse %.9g (tile "
                  "offset i%%32 = %d, j%%8 = %d, k%%16 = %d)\n",
                  what, i, j, k, c, pa[c], pb[c], i % 32, j % 8, k % 16);
        bad++;
      }
  }
  fprintf(stderr, "%s: %zu of %zu floats differ between the variants\n", what, bad, 3 * n);
  g_free(a);
  g_free(b);
  return bad;
}

static void force_case(Dims d, double lambda, gboolean with_region, gboolean l2_zero)
{
  const size_t n = voxels(d);
  const NwGrid g = grid_of(d);
  g_autoptr(NwVolume) T = nw_test_random_volume(d.nx, d.ny, d.nz, 1, 0.1, 1.1, 0, 51);
  g_autoptr(NwVolume) R = nw_test_random_volume(d.nx, d.ny, d.nz, 1, 0.1, 1.1, 0, 52);
  g_autoptr(NwVolume) u = test_u(d, 53, FALSE);
  g_autoptr(NwVolume) region = nw_test_random_volume(d.nx, d.ny, d.nz, 1, 0.0, 1.0, 0, 54);
  for (size_t e = 0; e < n; e++)
    region->data[e] = region->data[e] >= 0.5f ? 1.0f : 0.0f;
  g_autoptr(NwVolume) Tw = nw_volume_new_like(T, 1, NULL);
  g_autoptr(NwVolume) gTw = nw_volume_new_like(T, 3, NULL);
  g_autoptr(NwVolume) J = nw_volume_new_like(T, 1, NULL);
  g_autoptr(NwVolume) P = nw_volume_new_like(T, 9, NULL);
  g_autoptr(NwVolume) f = nw_volume_new_like(T, 3, NULL);
  nw_fluid_deform_grad_cpu(Tw, gTw, T, u);
  if (l2_zero) /* the regulariser alone */
    memcpy(R->data, Tw->data, n * sizeof(float));
  nw_fluid_jacobian_cpu(J, P, u);
  nw_fluid_force_cpu(f, R, Tw, gTw, P, with_region ? region : NULL, lambda);
  const double fmax_cpu = nw_field_max_norm(f);
  float *dR = nw_test_device_floats(R->data, n), *dTw = nw_test_device_floats(Tw->data, n);
  float *dreg = nw_test_device_floats(region->data, n);
  float4 *dg = (float4 *)nw_test_device_field(gTw), *du = (float4 *)nw_test_device_field(u);
  float4 *df[2];
  const char *names[2] = {"recompute", "reuse"};
  for (int v = 0; v < 2; v++) {
    df[v] = (float4 *)nw_test_device_poisoned(n * sizeof(float4));
    NW_TEST_CUDA(nw_fluid_force_cuda(df[v], dR, dTw, dg, du, with_region ? dreg : NULL,
                                     (float)lambda, v, g, 0));
    NW_TEST_CUDA(cudaDeviceSynchronize());
    g_autofree char *name = g_strdup_printf(
        "force %s %dx%dx%d lambda %g%s%s (max |f| %.3g)", names[v], d.nx, d.ny, d.nz, lambda,
        with_region ? " region" : "", l2_zero ? " sKL only" : "", fmax_cpu);
    check(nw_validate_result(name, (const float *)df[v], 4, f->data, 3, 3, n,
                             NwTolerance{1e-5 * fmax_cpu, 1e-5}));
  }
  g_autofree char *what =
      g_strdup_printf("force variants %dx%dx%d lambda %g", d.nx, d.ny, d.nz, lambda);
  check(compare_variants(df[0], df[1], d, what));
  void *bufs[] = {dR, dTw, dreg, dg, du, df[0], df[1]};
  for (gsize b = 0; b < G_N_ELEMENTS(bufs); b++)
    NW_TEST_CUDA(cudaFree(bufs[b]));
}

static void test_force(void)
{
  for (gsize gi = 0; gi < G_N_ELEMENTS(grids); gi++) {
    force_case(grids[gi], 0.05, FALSE, FALSE);
    force_case(grids[gi], 1.0, TRUE, FALSE);
    force_case(grids[gi], 1.0, FALSE, TRUE);
  }
}

/* ---- transport -----------------------------------------------------------------------------
 * The CPU's double operations, uncontracted, in its order: equal to the bit on an x86-64 CPU
 * build without FMA (max |r|, which sets the step length, to 1e-12; r to 1e-7 + 1e-6
 * relative for safety's sake). */
static void test_transport(void)
{
  for (gsize gi = 0; gi < G_N_ELEMENTS(grids); gi++) {
    const Dims d = grids[gi];
    const size_t n = voxels(d);
    g_autoptr(NwVolume) u = test_u(d, 61, FALSE);
    g_autoptr(NwVolume) v = nw_test_random_volume(d.nx, d.ny, d.nz, 3, -3.0, 3.0, 0, 62);
    g_autoptr(NwVolume) r = nw_volume_new_like(u, 3, NULL);
    const double max_cpu = nw_fluid_transport_cpu(r, u, v);
    float4 *du = (float4 *)nw_test_device_field(u), *dv = (float4 *)nw_test_device_field(v);
    float4 *dr = (float4 *)nw_test_device_poisoned(n * sizeof(float4));
    double *dmax = (double *)nw_test_device_poisoned(sizeof(double)), max_gpu = -1.0;
    NW_TEST_CUDA(nw_fluid_transport_cuda(dr, dmax, du, dv, grid_of(d), 0));
    NW_TEST_CUDA(cudaMemcpy(&max_gpu, dmax, sizeof(double), cudaMemcpyDeviceToHost));
    g_autofree char *name = g_strdup_printf("transport %dx%dx%d", d.nx, d.ny, d.nz);
    check(
        nw_validate_result(name, (const float *)dr, 4, r->data, 3, 3, n, NwTolerance{1e-7, 1e-6}));
    /* 1e-12 rather than 0: a CPU build with FMA contraction (-march=native) may differ in the
     * last bits of the double; the kernel itself does not contract. */
    g_assert_true(nw_validate_value("transport max |r|", max_gpu, max_cpu, NwTolerance{0, 1e-12}));
    void *bufs[] = {du, dv, dr, dmax};
    for (gsize b = 0; b < G_N_ELEMENTS(bufs); b++)
      NW_TEST_CUDA(cudaFree(bufs[b]));
  }
}

/* ---- sums ----------------------------------------------------------------------------------
 * Per voxel the CPU's double terms (J rounded to float as the CPU stores it); only the order
 * of the sums differs (a block tree against OpenMP's chunks): 1e-12 relative of the sum of
 * magnitudes; counts exact; the extrema are the same float J values (2 float ulps allowed, for
 * a CPU build that contracts to FMA: its double J may round to the neighbouring float). */
static void test_sums(void)
{
  for (gsize gi = 0; gi < G_N_ELEMENTS(grids); gi++) {
    const Dims d = grids[gi];
    const size_t n = voxels(d);
    g_autoptr(NwVolume) R = nw_test_random_volume(d.nx, d.ny, d.nz, 1, 0.1, 1.1, 0, 71);
    g_autoptr(NwVolume) Tw = nw_test_random_volume(d.nx, d.ny, d.nz, 1, 0.1, 1.1, 0, 72);
    g_autoptr(NwVolume) u = test_u(d, 73, FALSE);
    g_autoptr(NwVolume) region = nw_test_random_volume(d.nx, d.ny, d.nz, 1, 0.0, 1.0, 0, 74);
    for (size_t e = 0; e < n; e++)
      region->data[e] = region->data[e] >= 0.5f ? 1.0f : 0.0f;
    g_autoptr(NwVolume) J = nw_volume_new_like(R, 1, NULL);
    nw_fluid_jacobian_cpu(J, NULL, u);
    const double max_u = nw_field_max_norm(u);
    float *dR = nw_test_device_floats(R->data, n), *dTw = nw_test_device_floats(Tw->data, n);
    float *dreg = nw_test_device_floats(region->data, n);
    float4 *du = (float4 *)nw_test_device_field(u);
    NwFluidSumsCuda *dparts =
        (NwFluidSumsCuda *)nw_test_device_poisoned(NW_FLUID_SUM_BLOCKS * sizeof(NwFluidSumsCuda));
    NwFluidSumsCuda *dsums = (NwFluidSumsCuda *)nw_test_device_poisoned(sizeof(NwFluidSumsCuda));
    for (int with_region = 0; with_region < 2; with_region++) {
      NwFluidSums c;
      nw_fluid_sums_cpu(&c, R, Tw, J, with_region ? region : NULL);
      NwFluidSumsCuda gs;
      NW_TEST_CUDA(
          nw_fluid_sums_cuda(dsums, dparts, dR, dTw, du, with_region ? dreg : NULL, grid_of(d), 0));
      NW_TEST_CUDA(cudaMemcpy(&gs, dsums, sizeof gs, cudaMemcpyDeviceToHost));
      printf("sums %dx%dx%d%s: folds %g, J in [%.4f, %.4f]\n", d.nx, d.ny, d.nz,
             with_region ? " region" : "", c.n_folds, c.min_jac, c.max_jac);
      const double rel = 1e-12;
      g_assert_true(nw_validate_value("l2", gs.s.l2, c.l2, NwTolerance{rel * c.l2, 0}));
      g_assert_true(nw_validate_value("n_region", gs.s.n_region, c.n_region, NwTolerance{0, 0}));
      /* Σ |(J - 1) log J| <= Σ (J - 1)² / J-ish; bound by n times the largest term */
      g_assert_true(nw_validate_value("skl", gs.s.skl, c.skl, NwTolerance{rel * n, 1e-10}));
      g_assert_true(
          nw_validate_value("sum_log", gs.s.sum_log, c.sum_log, NwTolerance{rel * n, 1e-10}));
      g_assert_true(nw_validate_value("n_folds", gs.s.n_folds, c.n_folds, NwTolerance{0, 0}));
      const NwTolerance ulps = {0, 2.4e-7};
      g_assert_true(nw_validate_value("min_jac", gs.s.min_jac, c.min_jac, ulps));
      g_assert_true(nw_validate_value("max_jac", gs.s.max_jac, c.max_jac, ulps));
      g_assert_true(nw_validate_value("n", gs.s.n, c.n, NwTolerance{0, 0}));
      g_assert_true(nw_validate_value("max_u", sqrt(gs.max_u2), max_u, NwTolerance{0, 1e-15}));
    }
    void *bufs[] = {dR, dTw, dreg, du, dparts, dsums};
    for (gsize b = 0; b < G_N_ELEMENTS(bufs); b++)
      NW_TEST_CUDA(cudaFree(bufs[b]));
  }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  if (!nw_test_have_cuda())
    return NW_TEST_SKIP;
  g_test_add_func("/cuda/fluid-kernels/deform-grad", test_deform_grad);
  g_test_add_func("/cuda/fluid-kernels/trial", test_trial);
  g_test_add_func("/cuda/fluid-kernels/resize", test_resize);
  g_test_add_func("/cuda/fluid-kernels/deform-compose", test_deform_compose);
  g_test_add_func("/cuda/fluid-kernels/region-border", test_region_border);
  g_test_add_func("/cuda/fluid-kernels/jacobian", test_jacobian);
  g_test_add_func("/cuda/fluid-kernels/force", test_force);
  g_test_add_func("/cuda/fluid-kernels/transport", test_transport);
  g_test_add_func("/cuda/fluid-kernels/sums", test_sums);
  return g_test_run();
}
