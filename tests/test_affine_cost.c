/* test_affine_cost.c — the cost of affine registration and the job around it: the metrics
 * of the CPU cost on known pairs, the starts, the method's input errors and a masked 2D
 * registration through the method interface. CPU, main thread; well under a second. */
#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "affine_init.h"
#include "affine_testutil.h"
#include "nw_error.h"
#include "ras_affine.h"
#include "testutil.h"

/* The cost of a test image against itself and against a shifted copy, each metric. */
static void test_metrics(void)
{
  g_autoptr(NwVolume) f = nw_test_volume(24, 20, 16, 1, 7);
  const double c[3] = {0, 0, 0};
  NwTransform id, shift;
  nw_transform_init(&id, 3, NW_XFORM_RIGID, c);
  shift = id;
  shift.translation_mm[0] = 2.0;
  const NwAffineMetric metrics[3] = {NW_METRIC_MSE, NW_METRIC_NCC, NW_METRIC_MI};
  for (int i = 0; i < 3; i++) {
    NwAffineCostSpec spec = {metrics[i], NW_SAMPLER_LINEAR, 16, TRUE, NULL};
    g_autoptr(GError) err = NULL;
    NwAffineCost *cost = nw_affine_cost_new(&nw_affine_cost_cpu, &spec, &err);
    NwAffineLevel lv = {.dim = 3, .fixed = f, .moving = f};
    g_assert_true(nw_affine_cost_set_level(cost, &lv, &err));
    NwAffineCostValue a, b;
    g_assert_true(nw_affine_cost_eval(cost, &id, &a, &err));
    g_assert_true(nw_affine_cost_eval(cost, &shift, &b, &err));
    g_assert_no_error(err);
    g_assert_cmpfloat(a.overlap, ==, 1.0);
    /* 2 of 24 columns map beyond x = 23.5 */
    g_assert_cmpfloat_with_epsilon(b.overlap, 22.0 / 24.0, 1e-12);
    g_assert_cmpfloat(a.cost, <, b.cost);
    if (metrics[i] == NW_METRIC_MSE)
      g_assert_cmpfloat_with_epsilon(a.value, 0.0, 1e-9);
    if (metrics[i] == NW_METRIC_NCC)
      g_assert_cmpfloat_with_epsilon(a.value, 1.0, 1e-9);
    /* far away: too little overlap, the cost that pushes the simplex back */
    shift.translation_mm[0] = 22.0;
    g_assert_true(nw_affine_cost_eval(cost, &shift, &b, &err));
    g_assert_cmpfloat(b.cost, ==, NW_AFFINE_NO_OVERLAP_COST);
    shift.translation_mm[0] = 2.0;
    g_assert_cmpuint(nw_affine_cost_count(cost), ==, 3);
    nw_affine_cost_free(cost);
  }
}

/* The cost of t at precision prec (a fresh CPU cost on the pair). */
static NwAffineCostValue cost_at(const NwAffineCostSpec *spec, const NwVolume *f,
                                 const NwVolume *m, const NwVolume *fmask, int dim,
                                 const double t[16], NwAffinePrecision prec)
{
  g_autoptr(GError) err = NULL;
  NwAffineCost *cost = nw_affine_cost_new(&nw_affine_cost_cpu, spec, &err);
  const NwAffineLevel lv = {
      .dim = dim, .fixed = f, .moving = m, .fixed_mask = fmask, .precision = prec};
  NwAffineCostValue v;
  g_assert_true(nw_affine_cost_set_level(cost, &lv, &err));
  g_assert_true(nw_affine_cost_eval_matrix(cost, t, &v, &err));
  g_assert_no_error(err);
  nw_affine_cost_free(cost);
  return v;
}

/* 16-bit storage (affine_quant.h): 8- and 16-bit images are kept exactly (codes and values
 * round-trip), float images within half a code; the u16 cost (codes, float positions) is the
 * single one's to 1e-4 relative for every metric and sampler, 2D and 3D, with a mask. */
static void test_u16(void)
{
  /* an 8-bit image and a 16-bit one: every value comes back from its code exactly */
  const NwQuant q8 = nw_quant_make(3.0, 251.0, TRUE);
  for (int v = 3; v <= 251; v++)
    g_assert_cmpfloat(nw_quant_value(q8, nw_quant_code(q8, (float)v)), ==, (double)v);
  const NwQuant q16 = nw_quant_make(-1000.0, 64535.0, TRUE);
  for (int v = -1000; v <= 64535; v += 7)
    g_assert_cmpfloat(nw_quant_value(q16, nw_quant_code(q16, (float)v)), ==, (double)v);
  /* integers over more than 65536 values: scaled, within half a code */
  const NwQuant wide = nw_quant_make(0.0, 100000.0, TRUE);
  g_assert_cmpfloat(wide.step, >, 1.0);
  g_assert_cmpfloat(fabs(nw_quant_value(wide, nw_quant_code(wide, 77777.0f)) - 77777.0), <=,
                    0.5 * wide.step);
  /* a float image: within half a code, the extremes exact, a flat image all code 0 */
  g_autoptr(NwVolume) f = nw_test_volume(40, 36, 1, 1, 11);
  NwAffineStats st;
  nw_affine_stats_init(&st);
  nw_affine_stats_add(&st, f->data, NULL, nw_volume_n_voxels(f));
  const NwQuant qf = nw_quant_make(st.lo, st.hi, FALSE);
  g_autofree uint16_t *codes = nw_affine_quantise(f, qf);
  gboolean seen_lo = FALSE, seen_hi = FALSE;
  for (size_t e = 0; e < nw_volume_n_voxels(f); e++) {
    const double back = nw_quant_value(qf, codes[e]);
    g_assert_cmpfloat(fabs(back - f->data[e]), <=, 0.5 * qf.step * (1 + 1e-9));
    seen_lo |= codes[e] == 0;
    seen_hi |= codes[e] == 65535;
  }
  g_assert_true(seen_lo && seen_hi);
  const NwQuant flat = nw_quant_make(2.0, 2.0, TRUE);
  g_assert_cmpuint(nw_quant_code(flat, 2.0f), ==, 0);
  g_assert_cmpfloat(nw_quant_value(flat, 0.0f), ==, 2.0);

  /* the costs: u16 against single */
  static const NwSampler samplers[] = {NW_SAMPLER_NEAREST, NW_SAMPLER_LINEAR, NW_SAMPLER_CUBIC};
  static const NwAffineMetric metrics[] = {NW_METRIC_MSE, NW_METRIC_NCC, NW_METRIC_MI};
  g_autoptr(NwVolume) f3 = nw_test_volume(22, 19, 15, 1, 3);
  g_autoptr(NwVolume) m3 = nw_test_volume(21, 20, 16, 1, 3);
  g_autoptr(NwVolume) m2 = nw_test_volume(38, 40, 1, 1, 12);
  g_autoptr(NwVolume) mask2 = nw_volume_new_like(f, 1, NULL);
  for (size_t e = 0; e < nw_volume_n_voxels(mask2); e++)
    mask2->data[e] = (e % 40) > 5 ? 1.0f : 0.0f;
  const double a = 0.1, c = cos(a), s = sin(a);
  const double t[16] = {c, -s, 0.02, 0.7, s, c, 0.03, -1.3, 0.01, -0.02, 1.02, 0.4, 0, 0, 0, 1};
  const double t2[16] = {c, -s, 0, 0.7, s, c, 0, -1.3, 0, 0, 1, 0, 0, 0, 0, 1};
  for (gsize mi = 0; mi < G_N_ELEMENTS(metrics); mi++)
    for (gsize si = 0; si < G_N_ELEMENTS(samplers); si++) {
      const NwAffineCostSpec spec = {.metric = metrics[mi], .sampler = samplers[si], .bins = 32,
                                     .parzen = TRUE};
      for (int d = 2; d <= 3; d++) {
        const NwVolume *ff = d == 3 ? f3 : f, *mm = d == 3 ? m3 : m2;
        const NwVolume *fm = d == 3 ? NULL : mask2;
        const double *tt = d == 3 ? t : t2;
        const NwAffineCostValue one = cost_at(&spec, ff, mm, fm, d, tt, NW_AFFINE_PRECISION_SINGLE);
        const NwAffineCostValue two = cost_at(&spec, ff, mm, fm, d, tt, NW_AFFINE_PRECISION_U16);
        if (g_test_verbose())
          g_printerr("%dD %s %s: single %.10g u16 %.10g overlap %.6f / %.6f\n", d,
                     nw_affine_metric_name(metrics[mi]), nw_sampler_name(samplers[si]), one.cost,
                     two.cost, one.overlap, two.overlap);
        g_assert_cmpfloat(one.overlap, >, 0.5);
        g_assert_cmpfloat(fabs(one.overlap - two.overlap), <=, 1e-3);
        /* nearest: a position within rounding of a tie (float against double) picks the
         * other voxel; on this noise-like image a few such voxels move the mean */
        const double rel = samplers[si] == NW_SAMPLER_NEAREST ? 3e-3 : 1e-4;
        g_assert_cmpfloat(fabs(one.cost - two.cost), <=, rel * fabs(one.cost) + 1e-9);
      }
    }
  /* a translation by whole voxels, nearest: the codes of an 8-bit image give the single
   * cost exactly (the same voxels, the same values) */
  g_autoptr(NwVolume) b8 = nw_test_volume(32, 30, 1, 1, 4);
  for (size_t e = 0; e < nw_volume_n_voxels(b8); e++)
    b8->data[e] = floorf(b8->data[e] * 200.0f);
  const double shift[16] = {1, 0, 0, 3, 0, 1, 0, -2, 0, 0, 1, 0, 0, 0, 0, 1};
  const NwAffineCostSpec nn = {.metric = NW_METRIC_MSE, .sampler = NW_SAMPLER_NEAREST};
  const NwAffineCostValue e1 = cost_at(&nn, b8, b8, NULL, 2, shift, NW_AFFINE_PRECISION_SINGLE);
  const NwAffineCostValue e2 = cost_at(&nn, b8, b8, NULL, 2, shift, NW_AFFINE_PRECISION_U16);
  g_assert_cmpfloat(e1.overlap, ==, e2.overlap);
  g_assert_cmpfloat(fabs(e1.cost - e2.cost), <=, 1e-12 * e1.cost);
  g_assert_cmpfloat(e1.cost, >, 0.0);
}

/* The CPU back end's sums and MI histogram at level lv and map with the current number of
 * threads (joint: bins², 32 bins). */
static void cpu_sums(const NwAffineCostSpec *spec, const NwAffineLevel *lv, const double map[12],
                     NwAffineSums *out, double *joint)
{
  g_autoptr(GError) err = NULL;
  void *impl = nw_affine_cost_cpu.create(spec, &err);
  g_assert_true(nw_affine_cost_cpu.set_level(impl, lv, &err));
  out->joint = joint;
  g_assert_true(nw_affine_cost_cpu.evaluate(impl, map, out, &err));
  g_assert_no_error(err);
  nw_affine_cost_cpu.destroy(impl);
}

/* One evaluation gives the same bits with one thread and with several: the six sums and the
 * Parzen histogram, both precisions, with masks (issue 11: with an OpenMP reduction the sums'
 * last bits followed the threads, and the 3D gradient run stopped elsewhere on a 16-thread
 * host). The level is large enough for a team of threads (64 x 60 x 40: 38 chunks). */
static void test_threads_same_bits(void)
{
#ifndef _OPENMP
  g_test_skip("built without OpenMP: evaluations always run on one thread");
#else
  g_autoptr(NwVolume) f = nw_test_volume(64, 60, 40, 1, 21);
  g_autoptr(NwVolume) m = nw_test_volume(60, 62, 42, 1, 22);
  g_autoptr(NwVolume) fmask = nw_volume_new_like(f, 1, NULL);
  g_autoptr(NwVolume) mmask = nw_volume_new_like(m, 1, NULL);
  for (size_t e = 0; e < nw_volume_n_voxels(fmask); e++)
    fmask->data[e] = e % 7 != 3 ? 1.0f : 0.0f;
  for (size_t e = 0; e < nw_volume_n_voxels(mmask); e++)
    mmask->data[e] = (e / 60) % 9 != 4 ? 1.0f : 0.0f;
  /* a small rotation about z and a shift, in voxels */
  const double map[12] = {0.995,  -0.0998, 0.01,  1.3,  /* x */
                          0.0998, 0.995,   -0.02, -0.7, /* y */
                          0.005,  0.02,    1.01,  0.4}; /* z */
  const NwAffineCostSpec spec = {NW_METRIC_MI, NW_SAMPLER_LINEAR, 32, TRUE, NULL};
  const int saved = omp_get_max_threads();
  const NwAffinePrecision precisions[2] = {NW_AFFINE_PRECISION_SINGLE, NW_AFFINE_PRECISION_U16};
  for (int p = 0; p < 2; p++) {
    const NwAffineLevel lv = {.dim = 3,
                              .fixed = f,
                              .moving = m,
                              .fixed_mask = fmask,
                              .moving_mask = mmask,
                              .fixed_shift = 110.0,
                              .moving_shift = 105.0,
                              .fixed_lo = 30.0,
                              .fixed_hi = 200.0,
                              .moving_lo = 30.0,
                              .moving_hi = 200.0,
                              .n_fixed = (double)nw_volume_n_voxels(f),
                              .fixed_quant = nw_quant_make(30.0, 200.0, FALSE),
                              .moving_quant = nw_quant_make(30.0, 200.0, FALSE),
                              .precision = precisions[p]};
    double joint_1[32 * 32], joint_t[32 * 32];
    NwAffineSums one, many;
    omp_set_num_threads(1);
    cpu_sums(&spec, &lv, map, &one, joint_1);
    g_assert_cmpfloat(one.n, >, 0.5 * lv.n_fixed);
    for (int threads = 2; threads <= 7; threads += 5) {
      omp_set_num_threads(threads);
      cpu_sums(&spec, &lv, map, &many, joint_t);
      g_assert_cmpmem(&one, 6 * sizeof(double), &many, 6 * sizeof(double));
      g_assert_cmpmem(joint_1, sizeof joint_1, joint_t, sizeof joint_t);
    }
  }
  omp_set_num_threads(saved);
#endif
}

/* A blob moved by (3, -2, 1) mm: mass puts the centres of mass together; rotation starts
 * add n - 1 turns per axis. */
static void test_starts(void)
{
  g_autoptr(NwVolume) f = nw_volume_new(20, 20, 20, 1, NULL);
  g_autoptr(NwVolume) m = nw_volume_new(20, 20, 20, 1, NULL);
  for (int k = 0; k < 20; k++)
    for (int j = 0; j < 20; j++)
      for (int i = 0; i < 20; i++) {
        const double r2 = (i - 8) * (i - 8) + (j - 10) * (j - 10) + (k - 9) * (k - 9);
        const double s2 = (i - 11) * (i - 11) + (j - 8) * (j - 8) + (k - 10) * (k - 10);
        f->data[nw_volume_index(f, i, j, k)] = (float)exp(-r2 / 8.0);
        m->data[nw_volume_index(m, i, j, k)] = (float)exp(-s2 / 8.0);
      }
  double c[3];
  nw_volume_centre_mm(f, c);
  g_assert_cmpfloat(c[0], ==, 9.5);
  NwTransform base;
  nw_transform_init(&base, 3, NW_XFORM_RIGID, c);
  NwAffineStartSpec spec = {NW_AFFINE_INIT_MASS, 4};
  g_autoptr(GArray) s = nw_affine_starts(f, NULL, m, NULL, &base, &spec);
  g_assert_cmpuint(s->len, ==, 1 + 3 * 3);
  const NwTransform *t0 = &g_array_index(s, NwTransform, 0);
  /* (the grid cuts the Gaussians' tails a little unevenly) */
  g_assert_cmpfloat_with_epsilon(t0->translation_mm[0], 3.0, 1e-3);
  g_assert_cmpfloat_with_epsilon(t0->translation_mm[1], -2.0, 1e-3);
  g_assert_cmpfloat_with_epsilon(t0->translation_mm[2], 1.0, 1e-3);
  /* every start still sends the fixed centre of mass onto the moving one */
  for (guint i = 0; i < s->len; i++) {
    double mm[16], p[3];
    nw_transform_matrix(&g_array_index(s, NwTransform, i), mm);
    const double com[3] = {8, 10, 9};
    nw_affine_apply(mm, com, p);
    g_assert_cmpfloat_with_epsilon(p[0], 11.0, 1e-2);
    g_assert_cmpfloat_with_epsilon(p[1], 8.0, 1e-2);
  }
}

/* What the method refuses, and how it says so. */
static void test_input_errors(void)
{
  g_autoptr(NwVolume) v3 = nw_test_volume(20, 20, 20, 1, 1);
  g_autoptr(NwVolume) v2 = nw_test_volume(20, 20, 1, 1, 2);
  g_autoptr(NwVolume) mask = nw_test_volume(10, 20, 20, 1, 3);
  g_autoptr(NwParams) p = nw_test_affine_params(NULL);
  g_autoptr(GError) err = NULL;
  NwMethodInputs in = {.fixed = v2, .moving = v3};
  g_assert_null(nw_affine_cpu_ops.create(&in, p, &err));
  g_assert_error(err, NW_ERROR, NW_ERROR_MISMATCH);
  g_assert_cmpstr(err->message, ==,
                  "affine: the fixed image is 2D and the moving image 3D: both must be 2D (one "
                  "slice) or both 3D");
  g_clear_error(&err);
  in = (NwMethodInputs){.fixed = v3, .moving = v3, .moving_mask = mask};
  g_assert_null(nw_affine_cpu_ops.create(&in, p, &err));
  g_assert_cmpstr(err->message, ==, "affine: the moving mask is not on the moving image's grid");
  g_clear_error(&err);
  /* a voxel that is not finite: checked beside the pyramids, reported as the error */
  g_autoptr(NwVolume) ok3 = nw_test_volume(20, 20, 20, 1, 4);
  v3->data[5] = NAN;
  in = (NwMethodInputs){.fixed = v3, .moving = v3};
  g_assert_null(nw_affine_cpu_ops.create(&in, p, &err));
  g_assert_error(err, NW_ERROR, NW_ERROR_INVALID);
  g_assert_cmpstr(err->message, ==,
                  "fixed image: 1 of 8000 voxels are NaN or Inf; mask or fill them before "
                  "registering");
  g_clear_error(&err);
  in = (NwMethodInputs){.fixed = ok3, .moving = v3};
  g_assert_null(nw_affine_cpu_ops.create(&in, p, &err));
  g_assert_cmpstr(err->message, ==,
                  "moving image: 1 of 8000 voxels are NaN or Inf; mask or fill them before "
                  "registering");
}

/* A 2D pair through the whole method with a fixed mask: the masked voxels decide. */
static void test_2d_mask(void)
{
  g_autoptr(NwVolume) f = nw_volume_new(64, 64, 1, 1, NULL);
  g_autoptr(NwVolume) m = nw_volume_new(64, 64, 1, 1, NULL);
  g_autoptr(NwVolume) mask = nw_volume_new(64, 64, 1, 1, NULL);
  for (int j = 0; j < 64; j++)
    for (int i = 0; i < 64; i++) {
      const double x = i - 30.0, y = j - 33.0, xs = i - 32.5, ys = j - 31.0;
      const size_t e = nw_volume_index(f, i, j, 0);
      f->data[e] = (float)(exp(-(x * x + 2 * y * y) / 80.0) + 0.5 * exp(-(x * x) / 20.0));
      m->data[e] = (float)(exp(-(xs * xs + 2 * ys * ys) / 80.0) + 0.5 * exp(-(xs * xs) / 20.0));
      mask->data[e] = (x * x + y * y < 400.0) ? 1.0f : 0.0f;
    }
  static const char *const s[] = {"metric=mse", "levels=2", NULL};
  g_autoptr(NwParams) p = nw_test_affine_params(s);
  NwMethodInputs in = {.fixed = f, .moving = m, .fixed_mask = mask};
  NwTestAffineRun run;
  nw_test_affine_run(&in, p, &run);
  g_assert_cmpfloat_with_epsilon(run.t.translation_mm[0], 2.5, 0.02);
  g_assert_cmpfloat_with_epsilon(run.t.translation_mm[1], -2.0, 0.02);
  g_assert_cmpfloat_with_epsilon(run.t.rotation_rad[2], 0.0, 0.002);
  g_assert_cmpfloat(run.t.translation_mm[2], ==, 0.0);
  /* a moving mask over the moving blob only: the same answer from the voxels it keeps */
  g_autoptr(NwVolume) mmask = nw_volume_new(64, 64, 1, 1, NULL);
  for (int j = 0; j < 64; j++)
    for (int i = 0; i < 64; i++)
      mmask->data[nw_volume_index(mmask, i, j, 0)] =
          (i - 32.5) * (i - 32.5) + (j - 31.0) * (j - 31.0) < 300.0 ? 1.0f : 0.0f;
  in.moving_mask = mmask;
  nw_test_affine_run(&in, p, &run);
  g_assert_cmpfloat_with_epsilon(run.t.translation_mm[0], 2.5, 0.02);
  g_assert_cmpfloat_with_epsilon(run.t.translation_mm[1], -2.0, 0.02);
  g_assert_cmpfloat(run.v.overlap, <, 0.8); /* the moving mask left fixed voxels out */
}

/* Every choice of the "precision" parameter is a precision's name, both ways; other names
 * are refused. */
static void test_precision_names(void)
{
  const NwParamSpec *spec = NULL;
  for (int i = 0; i < NW_AFFINE_N_PARAMS; i++)
    if (g_str_equal(nw_affine_param_specs[i].name, "precision"))
      spec = &nw_affine_param_specs[i];
  g_assert_nonnull(spec);
  int n = 0;
  for (const char *const *c = spec->choices; *c != NULL; c++, n++) {
    NwAffinePrecision p;
    g_assert_true(nw_affine_precision_from_name(*c, &p));
    g_assert_cmpstr(nw_affine_precision_name(p), ==, *c);
  }
  g_assert_cmpint(n, ==, 3);
  NwAffinePrecision p = NW_AFFINE_PRECISION_U16;
  g_assert_false(nw_affine_precision_from_name("half", &p));
  g_assert_false(nw_affine_precision_from_name(NULL, &p));
  g_assert_cmpint(p, ==, NW_AFFINE_PRECISION_U16); /* untouched */
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/affine/metrics", test_metrics);
  g_test_add_func("/affine/precision-names", test_precision_names);
  g_test_add_func("/affine/u16", test_u16);
  g_test_add_func("/affine/threads-same-bits", test_threads_same_bits);
  g_test_add_func("/affine/starts", test_starts);
  g_test_add_func("/affine/input-errors", test_input_errors);
  g_test_add_func("/affine/2d-mask", test_2d_mask);
  return g_test_run();
}
