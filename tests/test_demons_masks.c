/* test_demons_masks.c — masks of the "demons" CPU reference (demons_method.h): the region
 * (fixed mask, moving mask warped by s), the update exactly zero outside it before smoothing,
 * through the method interface a half-volume fixed mask (first update zero on the other half;
 * without the diffusion smoothing v exactly zero beyond the fluid kernel's radius; a full run
 * moves less there and registers the same inside), figures over the region, masks covering
 * everything giving the unmasked run bit for bit, "affine-demons" handing its masks on to its
 * demons stage, and mask input errors. 32^3 volumes. CPU, main thread. */
#include <math.h>
#include <string.h>

#include "affine_demons_method.h"
#include "demons_cpu.h"
#include "field.h"
#include "nw_error.h"
#include "resample.h"
#include "testutil.h"

#define N 32

/* A smooth textured blob, 0 far outside. */
static double phantom_at(double x, double y, double z)
{
  const double c = (N - 1) / 2.0,
               r = sqrt(pow((x - c) / 11.0, 2) + pow((y - c) / 10.0, 2) + pow((z - c) / 9.0, 2));
  const double tex = 1.0 + 0.5 * sin(0.45 * x) * cos(0.35 * y) + 0.3 * sin(0.4 * z + 0.3 * x);
  return 100.0 * tex / (1.0 + exp((r - 1.0) * 10.0));
}

/* moving(x) = P(x), fixed(x) = P(x + s(x)) with s = exp(v) for a smooth v: the truth. */
static void make_pair(NwVolume **fixed, NwVolume **moving)
{
  g_autoptr(NwVolume) v = nw_test_smooth_velocity(N, 2.5, 4.0, 0.15, 0.12);
  g_autoptr(NwVolume) s = nw_volume_new(N, N, N, 3, NULL);
  nw_field_exp(s, v, 1.0);
  *fixed = nw_volume_new(N, N, N, 1, NULL);
  *moving = nw_volume_new(N, N, N, 1, NULL);
  for (int k = 0; k < N; k++)
    for (int j = 0; j < N; j++)
      for (int i = 0; i < N; i++) {
        const size_t e = nw_volume_index(*fixed, i, j, k);
        const float *d = s->data + 3 * e;
        (*moving)->data[e] = (float)phantom_at(i, j, k);
        (*fixed)->data[e] = (float)phantom_at(i + d[0], j + d[1], k + d[2]);
      }
}

/* 1 where i < i_end (0 elsewhere): a mask over the lower half in x for i_end = N/2. */
static NwVolume *half_mask(int i_end)
{
  NwVolume *m = nw_volume_new(N, N, N, 1, NULL);
  for (int k = 0; k < N; k++)
    for (int j = 0; j < N; j++)
      for (int i = 0; i < i_end; i++)
        m->data[nw_volume_index(m, i, j, k)] = 1.0f;
  return m;
}

static NwParams *params(const char *const *settings)
{
  return nw_test_params(nw_demons_param_specs, nw_demons_n_params, settings);
}

/* Create, run `steps` steps (or to the end when 0), return the result and the last report. */
static NwMethodResult *run(const NwMethodInputs *in, const NwParams *p, int steps,
                           NwIterationReport *last)
{
  g_autoptr(GError) err = NULL;
  void *st = nw_demons_cpu_ops.create(in, p, &err);
  g_assert_no_error(err);
  memset(last, 0, sizeof *last);
  for (int it = 0; (steps == 0 || it < steps) && !last->finished; it++)
    g_assert_true(nw_demons_cpu_ops.step(st, last, NULL));
  NwMethodResult *res = nw_demons_cpu_ops.result(st, &err);
  g_assert_no_error(err);
  nw_demons_cpu_ops.destroy(st);
  return res;
}

/* Mean |f| (voxels) of a field over the voxels with i in [i0, i1). */
static double mean_norm(const NwVolume *f, int i0, int i1)
{
  double sum = 0.0;
  size_t n = 0;
  for (int k = 0; k < N; k++)
    for (int j = 0; j < N; j++)
      for (int i = i0; i < i1; i++) {
        const float *p = f->data + 3 * nw_volume_index(f, i, j, k);
        sum += sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
        n++;
      }
  return sum / (double)n;
}

/* ---- the steps ---------------------------------------------------------------------------- */

/* Fixed mask alone: the region is the mask. Moving mask: warped by s, so with s = +2 voxels
 * along x the region is where the moving mask is inside 2 voxels further, i < N/2 - 2. */
static void test_region(void)
{
  g_autoptr(NwVolume) fmask = half_mask(N / 2);
  g_autoptr(NwVolume) mmask = half_mask(N / 2);
  g_autoptr(NwVolume) s = nw_volume_new(N, N, N, 3, NULL);
  g_autoptr(NwVolume) region = nw_volume_new(N, N, N, 1, NULL);
  nw_demons_region_cpu(region, fmask, NULL, s);
  g_assert_cmpfloat(nw_test_max_abs_diff(region, fmask), ==, 0.0);
  for (size_t e = 0; e < nw_volume_n_voxels(s); e++)
    s->data[3 * e] = 2.0f;
  nw_demons_region_cpu(region, NULL, mmask, s);
  g_autoptr(NwVolume) shifted = half_mask(N / 2 - 2);
  g_assert_cmpfloat(nw_test_max_abs_diff(region, shifted), ==, 0.0);
  /* both: the intersection, here the shifted moving mask again */
  nw_demons_region_cpu(region, fmask, mmask, s);
  g_assert_cmpfloat(nw_test_max_abs_diff(region, shifted), ==, 0.0);
}

/* The update before smoothing: exactly 0 outside the region, the unmasked update inside. */
static void test_update_zero_outside(void)
{
  g_autoptr(NwVolume) F = NULL;
  g_autoptr(NwVolume) W = NULL;
  make_pair(&F, &W);
  g_autoptr(NwVolume) region = half_mask(N / 2);
  g_autoptr(NwVolume) u = nw_volume_new(N, N, N, 3, NULL);
  g_autoptr(NwVolume) u_all = nw_volume_new(N, N, N, 3, NULL);
  nw_demons_update_cpu(u, F, W, NULL, NULL, region, NW_DEMONS_FORCE_SYMMETRIC, 1.0, 1e-9);
  nw_demons_update_cpu(u_all, F, W, NULL, NULL, NULL, NW_DEMONS_FORCE_SYMMETRIC, 1.0, 1e-9);
  size_t nonzero_in = 0;
  for (size_t e = 0; e < nw_volume_n_voxels(F); e++)
    for (int c = 0; c < 3; c++)
      if (region->data[e] == 0.0f)
        g_assert_cmpfloat(u->data[3 * e + c], ==, 0.0f);
      else {
        g_assert_cmpfloat(u->data[3 * e + c], ==, u_all->data[3 * e + c]);
        nonzero_in += u->data[3 * e + c] != 0.0f;
      }
  g_assert_cmpuint(nonzero_in, >, 1000);
}

/* ---- through the method interface --------------------------------------------------------- */

/* One iteration without smoothing (sigma-fluid 0, sigma-diff 0) from v = 0: v = the update,
 * exactly 0 on the half outside the fixed mask, and with a moving mask over the same half
 * (s = identity at the first update) the same. */
static void test_first_update_zero_outside(void)
{
  g_autoptr(NwVolume) fixed = NULL;
  g_autoptr(NwVolume) moving = NULL;
  make_pair(&fixed, &moving);
  g_autoptr(NwVolume) mask = half_mask(N / 2);
  const char *const s[] = {"levels=1", "iterations=1", "sigma-fluid=0", "sigma-diff=0", NULL};
  g_autoptr(NwParams) p = params(s);
  for (int which = 0; which < 2; which++) {
    const NwMethodInputs in = {.fixed = fixed,
                               .moving = moving,
                               .fixed_mask = which == 0 ? mask : NULL,
                               .moving_mask = which == 1 ? mask : NULL};
    NwIterationReport r;
    g_autoptr(NwMethodResult) res = run(&in, p, 0, &r);
    const NwVolume *v = nw_method_result_get(res, "velocity");
    g_assert_cmpfloat(mean_norm(v, N / 2, N), ==, 0.0);
    g_assert_cmpfloat(mean_norm(v, 0, N / 2), >, 0.01);
  }
}

/* What the smoothing spreads: with sigma-diff 0 (one level, 20 iterations, sigma-fluid 1, so
 * a Gaussian of radius 3 voxels, smooth.h) v only gathers smoothed updates, v <- u + v ∘ u, and
 * is exactly 0 from 3 voxels beyond the mask's edge on, where the unmasked run's is not. */
static void test_smoothing_spreads_only_its_radius(void)
{
  g_autoptr(NwVolume) fixed = NULL;
  g_autoptr(NwVolume) moving = NULL;
  make_pair(&fixed, &moving);
  g_autoptr(NwVolume) mask = half_mask(N / 2);
  const char *const s[] = {"levels=1", "iterations=20", "sigma-diff=0", "tolerance=0", NULL};
  g_autoptr(NwParams) p = params(s);
  const NwMethodInputs in_all = {.fixed = fixed, .moving = moving};
  const NwMethodInputs in_mask = {.fixed = fixed, .moving = moving, .fixed_mask = mask};
  NwIterationReport r;
  g_autoptr(NwMethodResult) all = run(&in_all, p, 0, &r);
  g_autoptr(NwMethodResult) masked = run(&in_mask, p, 0, &r);
  const NwVolume *v_all = nw_method_result_get(all, "velocity");
  const NwVolume *v_mask = nw_method_result_get(masked, "velocity");
  g_assert_cmpfloat(mean_norm(v_mask, N / 2 + 3, N), ==, 0.0);
  g_assert_cmpfloat(mean_norm(v_mask, N / 2 + 2, N / 2 + 3), >, 0.0);
  g_assert_cmpfloat(mean_norm(v_all, N / 2 + 3, N), >, 0.1);
}

/* A full run (3 levels, default smoothing) with the fixed mask over the lower half. The
 * smoothing of v at every iteration carries the field across the mask's edge (and on the
 * coarse levels far across), so beyond it the field is only smaller than the unmasked run's;
 * well inside the mask (i < N/2 - 4) the two agree closely. The figures are over the mask:
 * mse is the mean (F - W)² over it. */
static void test_full_run_half_mask(void)
{
  g_autoptr(NwVolume) fixed = NULL;
  g_autoptr(NwVolume) moving = NULL;
  make_pair(&fixed, &moving);
  g_autoptr(NwVolume) mask = half_mask(N / 2);
  const char *const s[] = {"iterations=30", NULL};
  g_autoptr(NwParams) p = params(s);
  const NwMethodInputs in_all = {.fixed = fixed, .moving = moving};
  const NwMethodInputs in_mask = {.fixed = fixed, .moving = moving, .fixed_mask = mask};
  NwIterationReport r_all, r_mask;
  g_autoptr(NwMethodResult) all = run(&in_all, p, 0, &r_all);
  g_autoptr(NwMethodResult) masked = run(&in_mask, p, 0, &r_mask);
  const NwVolume *u_all = nw_method_result_get(all, "forward");
  const NwVolume *u_mask = nw_method_result_get(masked, "forward");
  const double far_all = mean_norm(u_all, N / 2 + 6, N), far_mask = mean_norm(u_mask, N / 2 + 6, N);
  g_autoptr(NwVolume) diff = nw_volume_copy(u_mask);
  nw_field_axpy(diff, u_mask, -1.0, u_all);
  const double near_diff = mean_norm(diff, 0, N / 2 - 4), near_all = mean_norm(u_all, 0, N / 2 - 4);
  g_test_message("mean |u| beyond the mask: %.4f masked, %.4f unmasked; inside: |diff| %.4f of "
                 "|u| %.4f",
                 far_mask, far_all, near_diff, near_all);
  g_assert_cmpfloat(far_mask, <, 0.95 * far_all);
  g_assert_cmpfloat(near_diff, <, 0.2 * near_all);
  g_assert_cmpfloat(nw_test_figure(&r_mask, "folds"), ==, 0);
  /* mse over the mask, from the result's warped image (levels end at full resolution) */
  const NwVolume *w = nw_method_result_get(masked, "warped");
  double sd2 = 0.0;
  size_t n = 0;
  for (size_t e = 0; e < nw_volume_n_voxels(w); e++)
    if (mask->data[e] >= 0.5f) {
      sd2 += pow((double)fixed->data[e] - w->data[e], 2);
      n++;
    }
  g_assert_cmpfloat(fabs(nw_test_figure(&r_mask, "mse") - sd2 / n), <=, 1e-6 * sd2 / n + 1e-9);
}

/* Masks inside everywhere: the very same run as without masks, bit for bit. */
static void test_full_masks_change_nothing(void)
{
  g_autoptr(NwVolume) fixed = NULL;
  g_autoptr(NwVolume) moving = NULL;
  make_pair(&fixed, &moving);
  g_autoptr(NwVolume) ones = half_mask(N);
  const char *const s[] = {"levels=2", "iterations=8", "similarity=lcc", NULL};
  g_autoptr(NwParams) p = params(s);
  const NwMethodInputs in_all = {.fixed = fixed, .moving = moving};
  const NwMethodInputs in_mask = {
      .fixed = fixed, .moving = moving, .fixed_mask = ones, .moving_mask = ones};
  NwIterationReport r_all, r_mask;
  g_autoptr(NwMethodResult) all = run(&in_all, p, 0, &r_all);
  g_autoptr(NwMethodResult) masked = run(&in_mask, p, 0, &r_mask);
  g_assert_cmpfloat(nw_test_max_abs_diff(nw_method_result_get(all, "forward"),
                                         nw_method_result_get(masked, "forward")),
                    ==, 0.0);
  g_assert_cmpfloat(nw_test_figure(&r_all, "energy"), ==, nw_test_figure(&r_mask, "energy"));
  g_assert_cmpfloat(nw_test_figure(&r_all, "ncc"), ==, nw_test_figure(&r_mask, "ncc"));
}

/* "affine-demons" hands its masks on to the demons stage (affine_demons_method.h): after an
 * affine stage and one demons update without smoothing, v is exactly 0 outside the fixed mask;
 * a moving mask alone comes through the affine transform found (a small one here: the pair
 * differs by a smooth deformation), so v is 0 from a few voxels beyond its edge on. */
static void test_affine_demons_passes_masks(void)
{
  g_autoptr(NwVolume) fixed = NULL;
  g_autoptr(NwVolume) moving = NULL;
  make_pair(&fixed, &moving);
  g_autoptr(NwVolume) mask = half_mask(N / 2);
  const NwMethodOps *ops = &nw_affine_demons_cpu_ops;
  const char *const s[] = {"affine-levels=1", "affine-iterations=60", "affine-transform=rigid",
                           "levels=1",        "iterations=1",         "sigma-fluid=0",
                           "sigma-diff=0",    NULL};
  g_autoptr(NwParams) p = nw_test_params(ops->params, ops->n_params, s);
  for (int which = 0; which < 2; which++) {
    const NwMethodInputs in = {.fixed = fixed,
                               .moving = moving,
                               .fixed_mask = which == 0 ? mask : NULL,
                               .moving_mask = which == 1 ? mask : NULL};
    g_autoptr(GError) err = NULL;
    void *st = ops->create(&in, p, &err);
    g_assert_no_error(err);
    NwIterationReport r = {0};
    while (!r.finished) {
      memset(&r, 0, sizeof r); /* a fresh report per step, as the job gives one */
      g_assert_true(ops->step(st, &r, NULL));
    }
    g_autoptr(NwMethodResult) res = ops->result(st, &err);
    g_assert_no_error(err);
    ops->destroy(st);
    const NwVolume *v = nw_method_result_get(res, "velocity");
    g_assert_cmpfloat(mean_norm(v, which == 0 ? N / 2 : N / 2 + 3, N), ==, 0.0);
    g_assert_cmpfloat(mean_norm(v, 0, N / 2 - 3), >, 0.01);
  }
}

static void test_mask_errors(void)
{
  g_autoptr(NwVolume) f = nw_volume_new(16, 16, 16, 1, NULL);
  g_autoptr(NwVolume) m = nw_volume_new(16, 16, 16, 1, NULL);
  g_autoptr(NwVolume) small = nw_volume_new(16, 16, 15, 1, NULL);
  g_autoptr(NwVolume) empty = nw_volume_new(16, 16, 16, 1, NULL);
  g_autoptr(NwParams) p = params(NULL);
  g_autoptr(GError) err = NULL;
  NwMethodInputs in = {.fixed = f, .moving = m, .fixed_mask = small};
  g_assert_null(nw_demons_cpu_ops.create(&in, p, &err));
  g_assert_error(err, NW_ERROR, NW_ERROR_MISMATCH);
  g_assert_nonnull(strstr(err->message, "fixed mask"));
  g_clear_error(&err);
  in = (NwMethodInputs){.fixed = f, .moving = m, .moving_mask = empty};
  g_assert_null(nw_demons_cpu_ops.create(&in, p, &err));
  g_assert_error(err, NW_ERROR, NW_ERROR_INVALID);
  g_assert_nonnull(strstr(err->message, "moving mask is empty"));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/demons-masks/region", test_region);
  g_test_add_func("/demons-masks/update-zero-outside", test_update_zero_outside);
  g_test_add_func("/demons-masks/first-update-zero-outside", test_first_update_zero_outside);
  g_test_add_func("/demons-masks/smoothing-spreads-only-its-radius",
                  test_smoothing_spreads_only_its_radius);
  g_test_add_func("/demons-masks/full-run-half-mask", test_full_run_half_mask);
  g_test_add_func("/demons-masks/full-masks-change-nothing", test_full_masks_change_nothing);
  g_test_add_func("/demons-masks/affine-demons-passes-masks", test_affine_demons_passes_masks);
  g_test_add_func("/demons-masks/errors", test_mask_errors);
  return g_test_run();
}
