/* test_fluid.c — the "fluid" CPU reference (fluid_method.h) through its kernels and the method
 * interface: the force's sKL part is the exact derivative of the discrete sKL energy (finite
 * differences, 3D and 2D) and the whole force a descent direction; a known smooth deformation
 * recovered (mean error < 0.5 voxel) with the Jacobian positive at every iteration; the
 * unbiasedness of issue 14 (A -> B and B -> A give mean log-Jacobians of opposite sign and
 * equal size within 5 %; an image to a noisy copy of itself |mean log J| < 0.01); masks, live
 * parameters, frames and input errors. 32^3 volumes. CPU, main thread. */
#include <math.h>
#include <string.h>

#include "field.h"
#include "fluid_kernels.h"
#include "fluid_method.h"
#include "nw_error.h"
#include "fluid_testutil.h"
#include "testutil.h"

#define N NW_FLUID_TEST_N

/* ---- the phantom ------------------------------------------------------------------------ */

static NwVolume *phantom(double size)
{
  NwVolume *v = nw_volume_new(N, N, N, 1, NULL);
  for (int k = 0; k < N; k++)
    for (int j = 0; j < N; j++)
      for (int i = 0; i < N; i++)
        v->data[nw_volume_index(v, i, j, k)] = (float)nw_fluid_test_phantom_at(i, j, k, size);
  return v;
}

static NwParams *params(const char *const *settings)
{
  return nw_test_params(nw_fluid_param_specs, NW_FLUID_N_PARAMS, settings);
}

/* What a run reported: the smallest min_jac of any iteration, the last report's figures. */
typedef struct {
  double min_jac_ever, first_energy, last_energy, mean_log_jac, regrids, folds_ever;
  int iterations;
} RunLog;

static NwMethodResult *run(const NwMethodInputs *in, const NwParams *p, RunLog *log)
{
  const NwMethodOps *ops = &nw_fluid_cpu_ops;
  g_autoptr(GError) err = NULL;
  void *st = ops->create(in, p, &err);
  g_assert_no_error(err);
  NwIterationReport r = {0};
  *log = (RunLog){.min_jac_ever = INFINITY};
  for (int it = 0; it < 3000 && !r.finished; it++) {
    g_assert_true(ops->step(st, &r, &err));
    g_assert_no_error(err);
    g_assert_cmpint(r.iteration, ==, it + 1);
    log->min_jac_ever = fmin(log->min_jac_ever, nw_test_figure(&r, "min_jac"));
    log->folds_ever = fmax(log->folds_ever, nw_test_figure(&r, "folds"));
    if (it == 0)
      log->first_energy = nw_test_figure(&r, "energy");
    log->last_energy = nw_test_figure(&r, "energy");
    log->mean_log_jac = nw_test_figure(&r, "mean_log_jac");
    log->regrids = nw_test_figure(&r, "regrids");
    log->iterations = r.iteration;
  }
  g_assert_true(r.finished);
  NwMethodResult *res = ops->result(st, &err);
  g_assert_no_error(err);
  ops->destroy(st);
  return res;
}

/* ---- the force is the energy's gradient ------------------------------------------------- */

/* The discrete sKL energy Σ (J - 1) log J of u (fluid_kernels.h), in double. */
static double skl_energy(const NwVolume *u, NwVolume *J, const NwVolume *zero)
{
  NwFluidSums s;
  nw_fluid_jacobian_cpu(J, NULL, u);
  nw_fluid_sums_cpu(&s, zero, zero, J, NULL);
  g_assert_cmpfloat(s.n_folds, ==, 0);
  return s.skl;
}

/* A random field of amplitude `amp` voxels on an nx x ny x nz grid (0 along z in 2D). */
static NwVolume *random_field(int nx, int ny, int nz, double amp, guint32 seed)
{
  NwVolume *u = nw_volume_new(nx, ny, nz, 3, NULL);
  GRand *rng = g_rand_new_with_seed(seed);
  for (size_t e = 0; e < nw_volume_n_floats(u); e++)
    u->data[e] = (nz == 1 && e % 3 == 2) ? 0.0f : (float)(amp * g_rand_double_range(rng, -1, 1));
  g_rand_free(rng);
  return u;
}

/* f = -λ d of nw_fluid_force_cpu (no L2 term: Tw = R) against central differences of
 * λ sKL at every voxel and component: equal to 1e-3 of the largest derivative. */
static void check_skl_gradient(int nx, int ny, int nz)
{
  const double lambda = 0.7, h = 1e-2;
  g_autoptr(NwVolume) u = random_field(nx, ny, nz, 0.12, 14);
  g_autoptr(NwVolume) zero = nw_volume_new(nx, ny, nz, 1, NULL);
  g_autoptr(NwVolume) g0 = nw_volume_new(nx, ny, nz, 3, NULL);
  g_autoptr(NwVolume) J = nw_volume_new(nx, ny, nz, 1, NULL);
  g_autoptr(NwVolume) P = nw_volume_new(nx, ny, nz, 9, NULL);
  g_autoptr(NwVolume) f = nw_volume_new(nx, ny, nz, 3, NULL);
  nw_fluid_jacobian_cpu(J, P, u);
  nw_fluid_force_cpu(f, zero, zero, g0, P, NULL, lambda);
  double max_err = 0.0, max_g = 0.0;
  for (size_t q = 0; q < nw_volume_n_floats(u); q++) {
    if (nz == 1 && q % 3 == 2)
      continue;
    const float u0 = u->data[q];
    u->data[q] = (float)(u0 + h);
    const double hp = (double)u->data[q] - u0, ep = skl_energy(u, J, zero);
    u->data[q] = (float)(u0 - h);
    const double hm = (double)u0 - u->data[q], em = skl_energy(u, J, zero);
    u->data[q] = u0;
    const double grad = lambda * (ep - em) / (hp + hm); /* ∂(λ sKL)/∂u_q */
    max_err = fmax(max_err, fabs(f->data[q] + grad));   /* f = -gradient */
    max_g = fmax(max_g, fabs(grad));
  }
  g_test_message("%dx%dx%d: max |f + dE/du| %.3g, max |dE/du| %.3g", nx, ny, nz, max_err, max_g);
  g_assert_cmpfloat(max_g, >, 0.05);
  g_assert_cmpfloat(max_err, <, 1e-3 * max_g);
}

static void test_skl_gradient_3d(void)
{
  check_skl_gradient(9, 8, 7);
}

static void test_skl_gradient_2d(void)
{
  check_skl_gradient(11, 10, 1);
}

/* The whole force (L2 and sKL) is a descent direction of the whole energy: a small step along
 * it lowers E, a step against it raises E. */
static void test_force_descends(void)
{
  const int n = 16;
  g_autoptr(NwVolume) R = nw_test_volume(n, n, n, 1, 3);
  g_autoptr(NwVolume) T = nw_test_volume(n, n, n, 1, 5);
  g_autoptr(NwVolume) u = random_field(n, n, n, 0.2, 9);
  g_autoptr(NwVolume) Tw = nw_volume_new(n, n, n, 1, NULL);
  g_autoptr(NwVolume) gTw = nw_volume_new(n, n, n, 3, NULL);
  g_autoptr(NwVolume) J = nw_volume_new(n, n, n, 1, NULL);
  g_autoptr(NwVolume) P = nw_volume_new(n, n, n, 9, NULL);
  g_autoptr(NwVolume) f = nw_volume_new(n, n, n, 3, NULL);
  g_autoptr(NwVolume) u2 = nw_volume_new(n, n, n, 3, NULL);
  const double lambda = 0.3;
  nw_fluid_deform_grad_cpu(Tw, gTw, T, u);
  nw_fluid_jacobian_cpu(J, P, u);
  nw_fluid_force_cpu(f, R, Tw, gTw, P, NULL, lambda);
  NwFluidSums s;
  nw_fluid_sums_cpu(&s, R, Tw, J, NULL);
  const double e0 = nw_fluid_energy(&s, lambda), eps = 0.02 / nw_field_max_norm(f);
  double e[2];
  for (int sgn = 0; sgn < 2; sgn++) {
    nw_field_axpy(u2, u, sgn == 0 ? eps : -eps, f);
    nw_fluid_deform_grad_cpu(Tw, gTw, T, u2);
    nw_fluid_jacobian_cpu(J, NULL, u2);
    nw_fluid_sums_cpu(&s, R, Tw, J, NULL);
    e[sgn] = nw_fluid_energy(&s, lambda);
  }
  g_test_message("E %.6g, along f %.6g, against %.6g", e0, e[0], e[1]);
  g_assert_cmpfloat(e[0], <, e0);
  g_assert_cmpfloat(e[1], >, e0);
}

/* ---- registration ----------------------------------------------------------------------- */

/* Mean |a - b| (voxels) over the voxels inside the object. */
static double mean_error_inside(const NwVolume *a, const NwVolume *b)
{
  double sum = 0;
  int n = 0;
  for (int k = 0; k < N; k++)
    for (int j = 0; j < N; j++)
      for (int i = 0; i < N; i++)
        if (nw_fluid_test_blob_r(i, j, k, 1.0) < 0.85) {
          const size_t e = nw_volume_index(a, i, j, k);
          double d2 = 0;
          for (int c = 0; c < 3; c++)
            d2 += pow(a->data[3 * e + c] - b->data[3 * e + c], 2);
          sum += sqrt(d2);
          n++;
        }
  return sum / n;
}

/* A smooth multiplicative bias across the box, 1 ± `amp` (1 where amp is 0). */
static double bias_at(int i, int j, int k, double amp)
{
  return 1.0 + amp * sin(G_PI * (i + 0.5 * j) / N) * cos(G_PI * k / (2.0 * N));
}

/* A known smooth diffeomorphism s = exp(v) (peak about 2 voxels): moving = P, fixed(x) =
 * P(x + s(x)) sampled from the analytic phantom, times a smooth bias 1 ± bias. The forward
 * field recovers s within 0.5 voxel on average inside the object; J > 0 at every iteration
 * and in the result. */
static void recover_known(const char *const *settings, double bias, RunLog *log, double *after)
{
  g_autoptr(NwVolume) v = nw_test_smooth_velocity(N, 2.0, 4.0, 0.15, 0.12);
  g_autoptr(NwVolume) truth = nw_volume_new(N, N, N, 3, NULL);
  nw_field_exp(truth, v, 1.0);
  g_autoptr(NwVolume) moving = phantom(1.0);
  g_autoptr(NwVolume) fixed = nw_volume_new(N, N, N, 1, NULL);
  for (int k = 0; k < N; k++)
    for (int j = 0; j < N; j++)
      for (int i = 0; i < N; i++) {
        const size_t e = nw_volume_index(fixed, i, j, k);
        const float *s = truth->data + 3 * e;
        fixed->data[e] = (float)(nw_fluid_test_phantom_at(i + s[0], j + s[1], k + s[2], 1.0) *
                                 bias_at(i, j, k, bias));
      }
  const NwMethodInputs in = {.fixed = fixed, .moving = moving};
  g_autoptr(NwParams) p = params(settings);
  g_autoptr(NwMethodResult) res = run(&in, p, log);
  const NwVolume *fwd = nw_method_result_get(res, "forward");
  g_autoptr(NwVolume) zero = nw_volume_new(N, N, N, 3, NULL);
  const double before = mean_error_inside(zero, truth);
  *after = mean_error_inside(fwd, truth);
  g_test_message("%d iterations, energy %.4g -> %.4g, error %.3f -> %.3f voxel, min J %.3f, "
                 "regrids %g",
                 log->iterations, log->first_energy, log->last_energy, before, *after,
                 log->min_jac_ever, log->regrids);
  g_assert_cmpfloat(before, >, 1.0);
  g_assert_cmpfloat(log->min_jac_ever, >, 0.0);
  g_assert_cmpfloat(log->folds_ever, ==, 0);
  /* The written Jacobian (of the forward field, field.h) is positive everywhere too. */
  NwJacobianStats js;
  nw_jacobian_stats(nw_method_result_get(res, "jacobian"), &js);
  g_assert_cmpfloat(js.min, >, 0.0);
  g_assert_cmpuint(nw_field_count_folds(fwd), ==, 0);
}

static void test_recover_known(void)
{
  RunLog log;
  double err;
  recover_known(NULL, 0.0, &log, &err);
  g_assert_cmpfloat(err, <, 0.5);
  g_assert_cmpfloat(log.last_energy, <, 0.2 * log.first_energy);
}

/* Regridding on every small dip of J (threshold 0.95): the template is resampled through the
 * map so far and the pieces composed; the map stays folding-free and still recovers the
 * deformation. */
static void test_regrid(void)
{
  const char *const set[] = {"regrid-jacobian=0.95", "iterations=40", NULL};
  RunLog log;
  double err;
  recover_known(set, 0.0, &log, &err);
  g_assert_cmpfloat(log.regrids, >=, 2);
  g_assert_cmpfloat(err, <, 0.5);
}

/* lcc: both locally normalised images are divided by the same number (fluid_method.h), so
 * an image registered to itself starts at l2 = 0 with no force and does not move; and the
 * known deformation is recovered as with ssd although the fixed image carries a ±30 % bias
 * (which ssd cannot tell from structure). Until this test, the CPU divided the fixed image
 * but not the template's copy that the energy reads until the first regridding: the L2 term
 * compared images of different scales, the CUDA twin (which divided both) parted from it. */
static void test_lcc(void)
{
  g_autoptr(NwVolume) a = phantom(1.0);
  const NwMethodInputs self = {.fixed = a, .moving = a};
  const char *const one[] = {"levels=1", "similarity=lcc", NULL};
  g_autoptr(NwParams) p = params(one);
  g_autoptr(GError) err = NULL;
  void *st = nw_fluid_cpu_ops.create(&self, p, &err);
  g_assert_no_error(err);
  NwIterationReport r;
  g_assert_true(nw_fluid_cpu_ops.step(st, &r, &err));
  g_assert_cmpfloat(nw_test_figure(&r, "l2"), ==, 0.0);
  g_assert_cmpfloat(nw_test_figure(&r, "max_u"), ==, 0.0);
  g_assert_true(r.finished); /* no step lowers E = 0 */
  nw_fluid_cpu_ops.destroy(st);

  const char *const set[] = {"similarity=lcc", NULL};
  RunLog log;
  double err_lcc, err_ssd;
  recover_known(set, 0.3, &log, &err_lcc);
  const double regrids = log.regrids;
  recover_known(NULL, 0.3, &log, &err_ssd);
  g_test_message("with a ±30 %% bias: error lcc %.3f voxel (%g regrids), ssd %.3f", err_lcc,
                 regrids, err_ssd);
  g_assert_cmpfloat(err_lcc, <, 0.5);
  g_assert_cmpfloat(err_lcc, <, err_ssd);
}

/* Registers fixed to moving; the mean log-Jacobian of the forward field over the voxels
 * where `size` gives the object of the fixed image (size 0: every voxel). */
static double mean_log_jac(const NwVolume *fixed, const NwVolume *moving, double size, RunLog *rl)
{
  const NwMethodInputs in = {.fixed = fixed, .moving = moving};
  g_autoptr(NwParams) p = params(NULL);
  g_autoptr(NwMethodResult) res = run(&in, p, rl);
  g_assert_cmpfloat(rl->min_jac_ever, >, 0.0);
  const NwVolume *jac = nw_method_result_get(res, "jacobian");
  double sum = 0.0;
  int n = 0;
  for (int k = 0; k < N; k++)
    for (int j = 0; j < N; j++)
      for (int i = 0; i < N; i++)
        if (size == 0.0 || nw_fluid_test_blob_r(i, j, k, size) < 1.0) {
          const float J = jac->data[nw_volume_index(jac, i, j, k)];
          g_assert_cmpfloat(J, >, 0.0f);
          sum += log(J);
          n++;
        }
  return sum / n;
}

/* A small and a large version of the object: registering A to B and B to A changes volume
 * by opposite amounts in the log domain (issue 14: within 5 %). The fixed voxel x maps to
 * x + s(x) in the moving image, so over the fixed object the mean log J is about
 * log(volume of the moving object / volume of the fixed one) = ±3 log(size ratio). Over the
 * whole box it cannot show: the border maps to itself, Σ J is the box's volume, and the mean
 * log J is a small negative number (Jensen) whichever way the pair goes. Measured here
 * over the whole fixed object (r < 1); in its interior alone (r < 0.75) B -> A compresses
 * more than A -> B expands (0.44 against 0.28 at the defaults): the L2 term is integrated
 * over the fixed image, which the sKL term does not make symmetric. */
static void test_unbiased_pair(void)
{
  const double sa = 0.9, sb = 1.0;
  g_autoptr(NwVolume) a = phantom(sa);
  g_autoptr(NwVolume) b = phantom(sb);
  RunLog la, lb;
  const double ab = mean_log_jac(a, b, sa, &la), ba = mean_log_jac(b, a, sb, &lb);
  g_test_message("mean log J over the fixed object: A->B %.4f (%d it, min J %.3f), B->A %.4f "
                 "(%d it, min J %.3f); asymmetry %.2f %% (ideal ±%.4f)",
                 ab, la.iterations, la.min_jac_ever, ba, lb.iterations, lb.min_jac_ever,
                 100 * fabs(ab + ba) / fmax(fabs(ab), fabs(ba)), 3 * log(sb / sa));
  g_assert_cmpfloat(ab, >, 0.5 * 3 * log(sb / sa));
  g_assert_cmpfloat(ba, <, -0.5 * 3 * log(sb / sa));
  g_assert_cmpfloat(fabs(ab + ba), <=, 0.05 * fmax(fabs(ab), fabs(ba)));
}

/* An image registered to a copy of itself with Gaussian noise (5 % of its range): no
 * volume change on average, |mean log J| < 0.01. */
static void test_noisy_copy(void)
{
  g_autoptr(NwVolume) a = phantom(1.0);
  g_autoptr(NwVolume) noisy = nw_volume_copy(a);
  GRand *rng = g_rand_new_with_seed(7);
  for (size_t e = 0; e < nw_volume_n_voxels(a); e++) {
    const double u1 = g_rand_double_range(rng, 1e-12, 1), u2 = g_rand_double(rng);
    noisy->data[e] += (float)(0.05 * 140.0 * sqrt(-2 * log(u1)) * cos(2 * G_PI * u2));
  }
  g_rand_free(rng);
  RunLog log;
  const double m = mean_log_jac(noisy, a, 0.0, &log);
  g_test_message("mean log J %.5f after %d iterations (min J %.3f)", m, log.iterations,
                 log.min_jac_ever);
  g_assert_cmpfloat(fabs(m), <, 0.01);
}

/* Masks: with a fixed mask covering the left half (x < N/2), the L2 force acts only there,
 * so the right half moves only through the regulariser and the velocity's smoothing: less
 * than the left half, and less than without the mask. */
static void test_masks(void)
{
  g_autoptr(NwVolume) a = phantom(0.9);
  g_autoptr(NwVolume) b = phantom(1.0);
  g_autoptr(NwVolume) mask = nw_volume_new(N, N, N, 1, NULL);
  for (int k = 0; k < N; k++)
    for (int j = 0; j < N; j++)
      for (int i = 0; i < N / 2 - 2; i++)
        mask->data[nw_volume_index(mask, i, j, k)] = 1.0f;
  const char *const set[] = {"levels=1", "iterations=30", NULL};
  g_autoptr(NwParams) p = params(set);
  double side[2][2]; /* [masked?][left, right]: mean |s| */
  for (int m = 0; m < 2; m++) {
    const NwMethodInputs in = {.fixed = a, .moving = b, .fixed_mask = m ? mask : NULL};
    RunLog log;
    g_autoptr(NwMethodResult) res = run(&in, p, &log);
    const NwVolume *s = nw_method_result_get(res, "forward");
    double sum[2] = {0, 0};
    for (int k = 0; k < N; k++)
      for (int j = 0; j < N; j++)
        for (int i = 0; i < N; i++) {
          const float *d = s->data + 3 * nw_volume_index(s, i, j, k);
          sum[i >= N / 2] += sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        }
    side[m][0] = sum[0] / (N * N * N / 2);
    side[m][1] = sum[1] / (N * N * N / 2);
  }
  g_test_message("mean |s| left/right: no mask %.3f / %.3f, left mask %.3f / %.3f", side[0][0],
                 side[0][1], side[1][0], side[1][1]);
  g_assert_cmpfloat(side[1][1], <, 0.5 * side[1][0]);
  g_assert_cmpfloat(side[1][1], <, 0.5 * side[0][1]);
}

/* A live λ change is taken between iterations (a larger λ lowers the sKL term), a non-live
 * one refused; a frame is the level's warped image and the forward field. */
static void test_live_params_frames(void)
{
  g_autoptr(NwVolume) a = phantom(0.9);
  g_autoptr(NwVolume) b = phantom(1.0);
  const NwMethodInputs in = {.fixed = a, .moving = b};
  const char *const set[] = {"levels=1", "lambda=0.001", NULL};
  g_autoptr(NwParams) p = params(set);
  const NwMethodOps *ops = &nw_fluid_cpu_ops;
  g_autoptr(GError) err = NULL;
  void *st = ops->create(&in, p, &err);
  g_assert_no_error(err);
  NwIterationReport r;
  for (int i = 0; i < 10; i++)
    g_assert_true(ops->step(st, &r, &err));
  const double skl_before = nw_test_figure(&r, "skl");
  g_assert_cmpfloat(skl_before, >, 0.0);
  g_assert_true(nw_params_set(p, "lambda", 1.0, NULL));
  g_assert_true(ops->set_params(st, p, &err));
  g_assert_no_error(err);
  for (int i = 0; i < 10; i++)
    g_assert_true(ops->step(st, &r, &err));
  g_test_message("skl %.5f at lambda 0.001, %.5f after 10 iterations at 1", skl_before,
                 nw_test_figure(&r, "skl"));
  g_assert_cmpfloat(nw_test_figure(&r, "skl"), <, 0.5 * skl_before);
  g_autoptr(NwParams) q = nw_params_copy(p);
  g_assert_true(nw_params_set(q, "levels", 2, NULL));
  g_assert_false(ops->set_params(st, q, &err));
  g_assert_error(err, NW_ERROR, NW_ERROR_INVALID);
  g_assert_cmpstr(err->message, ==, "fluid: parameter 'levels' cannot change while the job runs");
  NwFrame fr = {0};
  g_clear_error(&err);
  g_assert_true(ops->publish_frame(st, &fr, &err));
  g_assert_cmpint(fr.iteration, ==, r.iteration);
  g_assert_cmpint(r.iteration, >, 10);
  g_assert_cmpint(fr.image->nc, ==, 1);
  g_assert_cmpint(fr.field->nc, ==, 3);
  g_assert_cmpfloat(nw_field_max_norm(fr.field), >, 0.3);
  nw_frame_clear(&fr);
  ops->destroy(st);
}

static void test_input_errors(void)
{
  g_autoptr(NwVolume) a = phantom(1.0);
  g_autoptr(NwVolume) small = nw_volume_new(8, 8, 8, 1, NULL);
  g_autoptr(NwVolume) empty = nw_volume_new(N, N, N, 1, NULL);
  g_autoptr(NwParams) p = params(NULL);
  g_autoptr(GError) err = NULL;
  const NwMethodInputs one = {.fixed = a};
  g_assert_null(nw_fluid_cpu_ops.create(&one, p, &err));
  g_assert_cmpstr(err->message, ==, "fluid: needs a fixed and a moving image");
  g_clear_error(&err);
  const NwMethodInputs grids = {.fixed = a, .moving = small};
  g_assert_null(nw_fluid_cpu_ops.create(&grids, p, &err));
  g_assert_nonnull(strstr(err->message, "must be on one grid"));
  g_clear_error(&err);
  const NwMethodInputs masked = {.fixed = a, .moving = a, .fixed_mask = empty};
  g_assert_null(nw_fluid_cpu_ops.create(&masked, p, &err));
  g_assert_cmpstr(err->message, ==,
                  "fluid: the fixed mask is empty (no voxel >= 0.5): nothing to register");
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/fluid/skl-gradient-3d", test_skl_gradient_3d);
  g_test_add_func("/fluid/skl-gradient-2d", test_skl_gradient_2d);
  g_test_add_func("/fluid/force-descends", test_force_descends);
  g_test_add_func("/fluid/recover-known", test_recover_known);
  g_test_add_func("/fluid/regrid", test_regrid);
  g_test_add_func("/fluid/lcc", test_lcc);
  g_test_add_func("/fluid/masks", test_masks);
  g_test_add_func("/fluid/live-params-frames", test_live_params_frames);
  g_test_add_func("/fluid/input-errors", test_input_errors);
  g_test_add_func("/fluid/unbiased-pair", test_unbiased_pair);
  g_test_add_func("/fluid/noisy-copy", test_noisy_copy);
  return g_test_run();
}
