/* affine_testutil.c — see affine_testutil.h. */
#include "affine_testutil.h"

#include <math.h>

#include "ras_affine.h"
#include "testutil.h"

NwParams *nw_test_affine_params(const char *const *settings)
{
  NwParams *p = nw_test_params(nw_affine_param_specs, NW_AFFINE_N_PARAMS, settings);
  /* NW_AFFINE_PRECISION=single|u16 runs a suite at the other precision (the accuracy tests
   * decide the default: docs/PERFORMANCE.md); a setting of the test's own wins */
  const char *prec = g_getenv("NW_AFFINE_PRECISION");
  gboolean own = FALSE;
  for (const char *const *s = settings; s != NULL && *s != NULL; s++)
    own |= g_str_has_prefix(*s, "precision=");
  if (prec != NULL && !own) {
    g_autofree char *kv = g_strconcat("precision=", prec, NULL);
    g_autoptr(GError) err = NULL;
    g_assert_true(nw_params_set_string(p, NULL, kv, &err));
    g_assert_no_error(err);
  }
  return p;
}

void nw_test_affine_run(const NwMethodInputs *in, const NwParams *p, NwTestAffineRun *out)
{
  nw_test_affine_run_ops(&nw_affine_cpu_ops, in, p, out);
}

void nw_test_affine_run_ops(const NwMethodOps *ops, const NwMethodInputs *in, const NwParams *p,
                            NwTestAffineRun *out)
{
  g_autoptr(GError) err = NULL;
  const gint64 t0 = g_get_monotonic_time();
  void *st = ops->create(in, p, &err);
  g_assert_no_error(err);
  g_assert_nonnull(st);
  NwIterationReport r = {0};
  int it = 0;
  while (!r.finished && it < 100000) {
    r = (NwIterationReport){.iteration = ++it};
    g_assert_true(ops->step(st, &r, &err));
    g_assert_no_error(err);
    if (g_getenv("NW_AFFINE_TRACE") != NULL) {
      g_printerr("it %d L%d", it, r.level);
      for (int f = 0; f < r.n_figures; f++)
        g_printerr(" %s=%.5g", r.figure_names[f], r.figures[f]);
      g_printerr("\n");
    }
  }
  g_assert_true(r.finished);
  out->t = *nw_affine_job_transform(st);
  g_autoptr(NwMethodResult) res = ops->result(st, &err);
  g_assert_no_error(err);
  int n = 0;
  const double *m = nw_method_result_get_values(res, "transform", &n);
  g_assert_cmpint(n, ==, 16);
  for (int e = 0; e < 16; e++)
    out->matrix[e] = m[e];
  const double *c = nw_method_result_get_values(res, "cost", &n);
  out->v = (NwAffineCostValue){c[0], c[1], c[2]};
  out->evaluations = nw_method_result_get_values(res, "evaluations", NULL)[0];
  out->iterations = it;
  g_assert_nonnull(nw_method_result_get(res, "warped"));
  ops->destroy(st);
  out->seconds = (double)(g_get_monotonic_time() - t0) / 1e6;
}

/* Pixel (column, row from the top) -> world of v: vox_to_ras after the row flip. */
static void pixel_to_world(const NwVolume *v, double m[16])
{
  double flip[16];
  nw_affine_identity(flip);
  flip[5] = -1.0;
  flip[7] = v->ny - 1.0;
  nw_affine_mul(v->vox_to_ras, flip, m);
}

void nw_test_itk_2d(const double matrix[16], const NwVolume *fixed, const NwVolume *moving,
                    double *angle_deg, double t[2])
{
  /* T_itk = (pixel -> world of moving)^-1 · T · (pixel -> world of fixed) */
  double pf[16], pm[16], pm_inv[16], m[16];
  pixel_to_world(fixed, pf);
  pixel_to_world(moving, pm);
  g_assert_true(nw_affine_inverse(pm, pm_inv));
  nw_affine_mul(matrix, pf, m);
  nw_affine_mul(pm_inv, m, m);
  *angle_deg = atan2(m[4], m[0]) * 180.0 / G_PI;
  const double c[3] = {fixed->nx / 2.0, fixed->ny / 2.0, 0.0};
  double tc[3];
  nw_affine_apply(m, c, tc);
  t[0] = tc[0] - c[0];
  t[1] = tc[1] - c[1];
}
