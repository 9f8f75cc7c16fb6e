/* test_cuda_fluid.c — the CUDA "fluid" against its CPU reference through the method interface
 * (issue 14): the same inputs (test_fluid.c's known smooth deformation of its phantom, 32^3),
 * parameters and number of iterations; the forward fields must agree within 0.05 voxel (max
 * abs) after 20 iterations, every iteration must take the same step (δ: the same accept /
 * refuse decisions), and the energy figures agree closely — on one level, on three, with
 * masks, with regridding, with lcc. The two force variants give the same bits through the
 * whole method. Frames and a live λ change as the CPU's. Skips (77) without a CUDA device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "field.h"
#include "fluid_method.h"
#include "method.h"
#include "fluid_testutil.h"
#include "testutil.h"

#define N NW_FLUID_TEST_N

/* ---- test_fluid.c's pair ------------------------------------------------------------------ */

/* moving = the phantom, fixed(x) = phantom(x + s(x)) for s = exp(v) of peak about 2 voxels. */
static void make_pair(NwVolume **fixed, NwVolume **moving)
{
  g_autoptr(NwVolume) v = nw_test_smooth_velocity(N, 2.0, 4.0, 0.15, 0.12);
  g_autoptr(NwVolume) truth = nw_volume_new(N, N, N, 3, NULL);
  nw_field_exp(truth, v, 1.0);
  NwVolume *m = nw_volume_new(N, N, N, 1, NULL), *f = nw_volume_new(N, N, N, 1, NULL);
  for (int k = 0; k < N; k++)
    for (int j = 0; j < N; j++)
      for (int i = 0; i < N; i++) {
        const size_t e = nw_volume_index(f, i, j, k);
        const float *s = truth->data + 3 * e;
        m->data[e] = (float)nw_fluid_test_phantom_at(i, j, k, 1.0);
        f->data[e] = (float)nw_fluid_test_phantom_at(i + s[0], j + s[1], k + s[2], 1.0);
      }
  *fixed = f;
  *moving = m;
}

/* Masks: MASK_FIXED the half i < N/2 (its edge through the object), MASK_MOVING the box of
 * the middle three quarters (its deformed edge moves with the map). */
enum { MASK_FIXED = 1, MASK_MOVING = 2 };

static NwVolume *make_mask(int which)
{
  NwVolume *m = nw_volume_new(N, N, N, 1, NULL);
  for (int k = 0; k < N; k++)
    for (int j = 0; j < N; j++)
      for (int i = 0; i < N; i++) {
        const int p[3] = {i, j, k};
        gboolean in = which == MASK_FIXED ? i < N / 2 : TRUE;
        for (int a = 0; a < 3 && which == MASK_MOVING; a++)
          in = in && p[a] >= N / 8 && p[a] < N - N / 8;
        m->data[nw_volume_index(m, i, j, k)] = in ? 1.0f : 0.0f;
      }
  return m;
}

/* ---- runs ---------------------------------------------------------------------------------- */

#define MAX_STEPS 64

typedef struct {
  NwMethodResult *result;
  NwIterationReport last;
  double step[MAX_STEPS], energy[MAX_STEPS]; /* per iteration */
  NwFrame frame;
} Run;

static Run run(const NwMethodOps *ops, const NwMethodInputs *in, const NwParams *p, int steps)
{
  g_assert_cmpint(steps, <=, MAX_STEPS);
  GError *error = NULL;
  void *st = ops->create(in, p, &error);
  g_assert_no_error(error);
  Run r;
  memset(&r, 0, sizeof r);
  for (int s = 0; s < steps; s++) {
    g_assert_true(ops->step(st, &r.last, &error));
    g_assert_no_error(error);
    r.step[s] = nw_test_figure(&r.last, "step");
    r.energy[s] = nw_test_figure(&r.last, "energy");
  }
  g_assert_true(ops->publish_frame(st, &r.frame, &error));
  g_assert_no_error(error);
  r.result = ops->result(st, &error);
  g_assert_no_error(error);
  ops->destroy(st);
  return r;
}

static void run_clear(Run *r)
{
  nw_method_result_free(r->result);
  g_clear_pointer(&r->frame.image, nw_volume_free);
  g_clear_pointer(&r->frame.field, nw_volume_free);
}

static NwParams *params_of(const char *const *overrides)
{
  NwParams *p = nw_params_new(nw_fluid_param_specs, NW_FLUID_N_PARAMS);
  for (int o = 0; overrides[o] != NULL; o++)
    g_assert_true(nw_params_set_string(p, NULL, overrides[o], NULL));
  return p;
}

/* Both runs' step and energy at every iteration, for the log of a run that parts. */
static void print_iterations(const Run *a, const Run *b, int steps)
{
  printf("  iteration  step cpu / cuda          energy cpu / cuda\n");
  for (int s = 0; s < steps; s++)
    printf("  %9d  %.9g / %.9g  %.12g / %.12g\n", s + 1, a->step[s], b->step[s], a->energy[s],
           b->energy[s]);
}

/* Every iteration took the same step on both (the accept / refuse decisions agree) and
 * reached the same energy to 1e-3 of its size; when not, both runs' iterations are printed
 * first (a step that parts alone points at two trial energies within rounding of the
 * current one; energies that drift apart with equal steps, at the images or the force). */
static void check_steps(const Run *a, const Run *b, int steps)
{
  for (int s = 0; s < steps; s++)
    if (a->step[s] != b->step[s] ||
        !(fabs(a->energy[s] - b->energy[s]) <= 1e-3 * fabs(a->energy[s]) + 1e-9)) {
      printf("  iteration %d parts:\n", s + 1);
      print_iterations(a, b, steps);
      g_assert_cmpfloat(a->step[s], ==, b->step[s]);
      g_assert_cmpfloat(fabs(a->energy[s] - b->energy[s]), <=, 1e-3 * fabs(a->energy[s]) + 1e-9);
    }
}

/* CPU against CUDA with the given overrides and masks (MASK_* bits). */
static void compare(const char *const *overrides, int steps, int masks)
{
  g_autoptr(NwVolume) fixed = NULL;
  g_autoptr(NwVolume) moving = NULL;
  make_pair(&fixed, &moving);
  g_autoptr(NwVolume) fixed_mask = masks & MASK_FIXED ? make_mask(MASK_FIXED) : NULL;
  g_autoptr(NwVolume) moving_mask = masks & MASK_MOVING ? make_mask(MASK_MOVING) : NULL;
  const NwMethodInputs in = {
      .fixed = fixed, .moving = moving, .fixed_mask = fixed_mask, .moving_mask = moving_mask};
  g_autoptr(NwParams) p = params_of(overrides);
  Run a = run(&nw_fluid_cpu_ops, &in, p, steps), b = run(&nw_fluid_cuda_ops, &in, p, steps);
  check_steps(&a, &b, steps);
  const double df = nw_test_max_abs_diff(nw_method_result_get(a.result, "forward"),
                                         nw_method_result_get(b.result, "forward"));
  const double dw = nw_test_max_abs_diff(nw_method_result_get(a.result, "warped"),
                                         nw_method_result_get(b.result, "warped"));
  const double dj = nw_test_max_abs_diff(nw_method_result_get(a.result, "jacobian"),
                                         nw_method_result_get(b.result, "jacobian"));
  const double ff = nw_test_max_abs_diff(a.frame.field, b.frame.field);
  const double fi = nw_test_max_abs_diff(a.frame.image, b.frame.image);
  printf("  forward max |cpu - cuda| = %.3g voxel (frame %.3g), warped %.3g, jacobian %.3g, "
         "frame image %.3g (intensities 10..150)\n",
         df, ff, dw, dj, fi);
  g_assert_cmpfloat(df, <, 0.05);
  g_assert_cmpfloat(ff, <, 0.05);
  /* 0.05 voxel across edges of ~20 intensity units per voxel: up to ~1; J (central
   * differences) moves by at most about 3 df where the fields differ by df. */
  g_assert_cmpfloat(dw, <, 2.0);
  g_assert_cmpfloat(fi, <, 2.0);
  g_assert_cmpfloat(dj, <=, 4.0 * df + 1e-5);
  /* The figures: sums in double of the same float terms (but for the fields' drift). */
  const char *figs[] = {"energy", "l2", "skl", "max_u", "min_jac", "max_jac", "mean_log_jac"};
  for (gsize q = 0; q < G_N_ELEMENTS(figs); q++) {
    const double x = nw_test_figure(&a.last, figs[q]), y = nw_test_figure(&b.last, figs[q]);
    printf("  %-12s cpu %.9g cuda %.9g\n", figs[q], x, y);
    g_assert_cmpfloat(fabs(x - y), <=, 1e-3 * fabs(x) + 1e-5);
  }
  const char *exact[] = {"folds", "regrids", "step"};
  for (gsize q = 0; q < G_N_ELEMENTS(exact); q++)
    g_assert_cmpfloat(nw_test_figure(&a.last, exact[q]), ==, nw_test_figure(&b.last, exact[q]));
  g_assert_cmpint(a.last.level, ==, b.last.level);
  g_assert_cmpint(a.last.iteration, ==, b.last.iteration);
  g_assert_cmpint(a.last.finished, ==, b.last.finished);
  run_clear(&a);
  run_clear(&b);
}

static void test_single_level(void)
{
  const char *o[] = {"levels=1", "tolerance=0", NULL};
  compare(o, 20, 0);
}

static void test_multilevel(void)
{
  const char *o[] = {"levels=3", "iterations=7", "tolerance=0", NULL};
  compare(o, 21, 0);
}

static void test_masks(void)
{
  const char *o[] = {"levels=1", "tolerance=0", NULL};
  compare(o, 20, MASK_FIXED | MASK_MOVING);
}

/* Regridding at every small dip of J (test_fluid.c's test_regrid): the composition of the
 * pieces, the resampled template and the figures of the whole map. */
static void test_regrid(void)
{
  const char *o[] = {"levels=2", "iterations=10", "tolerance=0", "regrid-jacobian=0.95", NULL};
  compare(o, 20, MASK_MOVING);
}

/* lcc: the locally normalised images of each level (demons' LCC kernels, then both divided
 * by the range of the fixed one) on one level and on two (each level normalises its own). */
static void test_lcc(void)
{
  const char *one[] = {"levels=1", "tolerance=0", "similarity=lcc", "lcc-sigma=2", NULL};
  compare(one, 20, 0);
  const char *two[] = {"levels=2", "iterations=10", "tolerance=0", "similarity=lcc", NULL};
  compare(two, 20, MASK_MOVING);
}

/* The reuse and recompute force kernels through the whole method: the same bits. */
static void test_variants(void)
{
  g_autoptr(NwVolume) fixed = NULL;
  g_autoptr(NwVolume) moving = NULL;
  make_pair(&fixed, &moving);
  const NwMethodInputs in = {.fixed = fixed, .moving = moving};
  const char *o[] = {"levels=2", "iterations=10", "tolerance=0", NULL};
  g_autoptr(NwParams) p = params_of(o);
  g_setenv("NW_FLUID_FORCE", "recompute", TRUE);
  Run a = run(&nw_fluid_cuda_ops, &in, p, 20);
  g_setenv("NW_FLUID_FORCE", "reuse", TRUE);
  Run b = run(&nw_fluid_cuda_ops, &in, p, 20);
  g_unsetenv("NW_FLUID_FORCE");
  check_steps(&a, &b, 20);
  const double d = nw_test_max_abs_diff(nw_method_result_get(a.result, "forward"),
                                        nw_method_result_get(b.result, "forward"));
  printf("  forward max |recompute - reuse| = %.3g voxel\n", d);
  g_assert_cmpfloat(d, ==, 0.0);
  g_assert_cmpfloat(nw_test_figure(&a.last, "energy"), ==, nw_test_figure(&b.last, "energy"));
  run_clear(&a);
  run_clear(&b);
}

/* A live λ change on both back ends between iterations: the same figures after it. */
static void test_live_lambda(void)
{
  g_autoptr(NwVolume) fixed = NULL;
  g_autoptr(NwVolume) moving = NULL;
  make_pair(&fixed, &moving);
  const NwMethodInputs in = {.fixed = fixed, .moving = moving};
  const char *o[] = {"levels=1", "tolerance=0", NULL};
  g_autoptr(NwParams) p = params_of(o);
  g_autoptr(NwParams) p2 = params_of(o);
  g_assert_true(nw_params_set_string(p2, NULL, "lambda=0.5", NULL));
  const NwMethodOps *ops[2] = {&nw_fluid_cpu_ops, &nw_fluid_cuda_ops};
  NwIterationReport rep[2];
  for (int b = 0; b < 2; b++) {
    GError *error = NULL;
    void *st = ops[b]->create(&in, p, &error);
    g_assert_no_error(error);
    for (int s = 0; s < 5; s++)
      g_assert_true(ops[b]->step(st, &rep[b], &error));
    g_assert_true(ops[b]->set_params(st, p2, &error));
    for (int s = 0; s < 5; s++)
      g_assert_true(ops[b]->step(st, &rep[b], &error));
    g_assert_no_error(error);
    ops[b]->destroy(st);
  }
  const char *figs[] = {"energy", "skl", "step"};
  for (gsize q = 0; q < G_N_ELEMENTS(figs); q++) {
    const double x = nw_test_figure(&rep[0], figs[q]), y = nw_test_figure(&rep[1], figs[q]);
    printf("  after lambda=0.5: %-8s cpu %.9g cuda %.9g\n", figs[q], x, y);
    g_assert_cmpfloat(fabs(x - y), <=, 1e-3 * fabs(x) + 1e-6);
  }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  if (!nw_test_have_cuda())
    return NW_TEST_SKIP;
  g_test_add_func("/cuda/fluid/single-level", test_single_level);
  g_test_add_func("/cuda/fluid/multilevel", test_multilevel);
  g_test_add_func("/cuda/fluid/masks", test_masks);
  g_test_add_func("/cuda/fluid/regrid", test_regrid);
  g_test_add_func("/cuda/fluid/lcc", test_lcc);
  g_test_add_func("/cuda/fluid/variants", test_variants);
  g_test_add_func("/cuda/fluid/live-lambda", test_live_lambda);
  return g_test_run();
}
