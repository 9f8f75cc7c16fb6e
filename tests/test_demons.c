/* test_demons.c — the "demons" CPU reference through the method interface: recovery of a
 * known smooth diffeomorphism (mean error < 0.5 voxel inside the object, no folds) with both
 * velocity updates, energy decrease, LCC beating SSD under a multiplicative bias, histogram
 * matching, label warping with Dice, live parameters, frames and input errors. 32^3 volumes,
 * a few hundred iterations in all. CPU, main thread. */
#include <math.h>
#include <string.h>

#include "demons_method.h"
#include "field.h"
#include "nw_error.h"
#include "resample.h"
#include "testutil.h"

#define N 32

/* Smooth textured ellipsoid at continuous voxel position (x, y, z), 0 outside. */
static double ellipsoid_r(double x, double y, double z)
{
  const double c = (N - 1) / 2.0;
  x = (x - c) / 11.0;
  y = (y - c) / 10.0;
  z = (z - c) / 9.0;
  return sqrt(x * x + y * y + z * z);
}

static double phantom_at(double x, double y, double z)
{
  double body = 1.0 / (1.0 + exp((ellipsoid_r(x, y, z) - 1.0) * 10.0));
  double tex = 1.0 + 0.5 * sin(0.45 * x) * cos(0.35 * y) + 0.3 * sin(0.4 * z + 0.3 * x);
  return 100.0 * body * tex;
}

/* Where errors are measured: 2 voxels and more inside the object. */
static gboolean inside(int i, int j, int k)
{
  return ellipsoid_r(i, j, k) < 0.8;
}

/* Gaussian-windowed sines, peak about `peak` voxels, vanishing towards the borders. */
static NwVolume *smooth_velocity(double peak)
{
  return nw_test_smooth_velocity(N, peak, 4.0, 0.15, 0.12);
}

typedef struct {
  NwVolume *fixed, *moving;
  NwVolume *true_fwd; /* fixed voxel x <-> moving x + true_fwd(x), exactly */
} Case;

/* The truth is s = exp(v) for a smooth v (a diffeomorphism, whatever the accuracy of exp),
 * and both images are sampled from the analytic phantom: moving(x) = P(x),
 * fixed(x) = P(x + s(x)); so moving(x + s(x)) = fixed(x) without interpolation error. */
static void make_case(Case *c, double peak)
{
  g_autoptr(NwVolume) v = smooth_velocity(peak);
  c->true_fwd = nw_volume_new(N, N, N, 3, NULL);
  nw_field_exp(c->true_fwd, v, 1.0);
  c->fixed = nw_volume_new(N, N, N, 1, NULL);
  c->moving = nw_volume_new(N, N, N, 1, NULL);
  for (int k = 0; k < N; k++)
    for (int j = 0; j < N; j++)
      for (int i = 0; i < N; i++) {
        size_t e = nw_volume_index(c->fixed, i, j, k);
        const float *s = c->true_fwd->data + 3 * e;
        c->moving->data[e] = (float)phantom_at(i, j, k);
        c->fixed->data[e] = (float)phantom_at(i + s[0], j + s[1], k + s[2]);
      }
}

static void clear_case(Case *c)
{
  g_clear_pointer(&c->fixed, nw_volume_free);
  g_clear_pointer(&c->moving, nw_volume_free);
  g_clear_pointer(&c->true_fwd, nw_volume_free);
}

/* Mean |a - b| (Euclidean, voxels) over the inside of the object. */
static double mean_error_inside(const NwVolume *a, const NwVolume *b)
{
  double sum = 0;
  int n = 0;
  for (int k = 0; k < N; k++)
    for (int j = 0; j < N; j++)
      for (int i = 0; i < N; i++)
        if (inside(i, j, k)) {
          const float *p = a->data + 3 * nw_volume_index(a, i, j, k);
          const float *q = b->data + 3 * nw_volume_index(b, i, j, k);
          double dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
          sum += sqrt(dx * dx + dy * dy + dz * dz);
          n++;
        }
  return sum / n;
}

static NwParams *params(const char *const *settings)
{
  return nw_test_params(nw_demons_param_specs, nw_demons_n_params, settings);
}

typedef struct {
  double first_energy, last_energy; /* at the first and last reported iteration */
  double finest_first, finest_last; /* energies of the finest level */
  int iterations, n_levels;
  double last_folds;
} RunLog;

/* Create, step to the end, return the result. */
static NwMethodResult *run(const NwMethodInputs *in, const NwParams *p, RunLog *log)
{
  const NwMethodOps *ops = &nw_demons_cpu_ops;
  g_autoptr(GError) err = NULL;
  void *st = ops->create(in, p, &err);
  g_assert_no_error(err);
  NwIterationReport r = {0};
  memset(log, 0, sizeof *log);
  log->finest_first = NAN;
  for (int it = 0; it < 2000 && !r.finished; it++) {
    g_assert_true(ops->step(st, &r, &err));
    g_assert_no_error(err);
    g_assert_cmpint(r.iteration, ==, it + 1);
    double e = nw_test_figure(&r, "energy");
    if (it == 0)
      log->first_energy = e;
    if (r.level == r.n_levels - 1 && isnan(log->finest_first))
      log->finest_first = e;
    log->last_energy = log->finest_last = e;
    log->iterations = r.iteration;
    log->n_levels = r.n_levels;
    log->last_folds = nw_test_figure(&r, "folds");
  }
  g_assert_true(r.finished);
  g_assert_cmpfloat(r.progress, ==, 1.0);
  NwMethodResult *res = ops->result(st, &err);
  g_assert_no_error(err);
  ops->destroy(st);
  return res;
}

static void check_recovery(const char *const *settings, double max_err)
{
  Case c = {0};
  make_case(&c, 2.5);
  const NwMethodInputs in = {.fixed = c.fixed, .moving = c.moving};
  g_autoptr(NwParams) p = params(settings);
  RunLog log;
  g_autoptr(NwMethodResult) res = run(&in, p, &log);
  const NwVolume *fwd = nw_method_result_get(res, "forward");
  const NwVolume *inv = nw_method_result_get(res, "inverse");
  g_autoptr(NwVolume) zero = nw_volume_new(N, N, N, 3, NULL);
  g_autoptr(NwVolume) loop = nw_volume_new(N, N, N, 3, NULL);
  nw_field_compose(loop, inv, c.true_fwd); /* (id + inverse) ∘ (id + truth) = id */
  double before = mean_error_inside(zero, c.true_fwd);
  double err_fwd = mean_error_inside(fwd, c.true_fwd);
  double err_inv = mean_error_inside(loop, zero);
  g_test_message("levels %d iterations %d energy %g -> %g, error fwd %.3f inv %.3f (start %.3f)",
                 log.n_levels, log.iterations, log.first_energy, log.last_energy, err_fwd, err_inv,
                 before);
  g_assert_cmpint(log.n_levels, ==, 3);
  g_assert_cmpfloat(err_fwd, <, max_err);
  g_assert_cmpfloat(err_inv, <, max_err);
  g_assert_cmpuint(nw_field_count_folds(fwd), ==, 0);
  g_assert_cmpfloat(log.last_folds, ==, 0);
  /* Energy decreases: overall and within the finest level. */
  g_assert_cmpfloat(log.last_energy, <, 0.2 * log.first_energy);
  g_assert_cmpfloat(log.finest_last, <=, log.finest_first);
  /* The warped result matches the fixed image much better than the moving one did. */
  const NwVolume *w = nw_method_result_get(res, "warped");
  double mse_w = 0, mse_m = 0;
  for (size_t e = 0; e < nw_volume_n_voxels(w); e++) {
    mse_w += pow(w->data[e] - c.fixed->data[e], 2);
    mse_m += pow(c.moving->data[e] - c.fixed->data[e], 2);
  }
  g_assert_cmpfloat(mse_w, <, 0.1 * mse_m);
  clear_case(&c);
}

static void test_recover_compose(void)
{
  const char *const s[] = {"iterations=30", NULL};
  check_recovery(s, 0.5);
}

static void test_recover_bch(void)
{
  const char *const s[] = {"composition=bch", "iterations=30", NULL};
  check_recovery(s, 0.5);
}

/* Three labels: left and right halves of the object's shell, and a core. */
static float label_at(double x, double y, double z)
{
  double r = ellipsoid_r(x, y, z);
  return r < 0.45 ? 7.0f : r < 1.0 ? (x < N / 2.0 ? 1.0f : 2.0f) : 0.0f;
}

static void test_results(void)
{
  Case c = {0};
  make_case(&c, 2.5);
  g_autoptr(NwVolume) labels = nw_volume_new(N, N, N, 1, NULL);
  g_autoptr(NwVolume) mlabels = nw_volume_new(N, N, N, 1, NULL);
  for (int k = 0; k < N; k++)
    for (int j = 0; j < N; j++)
      for (int i = 0; i < N; i++) {
        size_t e = nw_volume_index(labels, i, j, k);
        const float *s = c.true_fwd->data + 3 * e;
        labels->data[e] = label_at(i + s[0], j + s[1], k + s[2]);
        mlabels->data[e] = label_at(i, j, k);
      }
  const NwMethodInputs in = {
      .fixed = c.fixed, .moving = c.moving, .fixed_labels = labels, .moving_labels = mlabels};
  const char *const s[] = {"iterations=20", NULL};
  g_autoptr(NwParams) p = params(s);
  RunLog log;
  g_autoptr(NwMethodResult) res = run(&in, p, &log);
  const char *names[] = {"warped", "forward", "inverse", "velocity", "jacobian", "labels"};
  const int ncs[] = {1, 3, 3, 3, 1, 1};
  for (int i = 0; i < 6; i++) {
    const NwVolume *v = nw_method_result_get(res, names[i]);
    g_assert_nonnull(v);
    g_assert_cmpint(v->nc, ==, ncs[i]);
    g_assert_true(nw_volume_same_grid(v, c.fixed));
  }
  /* jacobian is det(I + ∇ forward); forward is exp(velocity). */
  g_autoptr(NwVolume) det = nw_volume_new(N, N, N, 1, NULL);
  nw_field_jacobian_det(det, nw_method_result_get(res, "forward"));
  g_assert_cmpfloat(nw_test_max_abs_diff(det, nw_method_result_get(res, "jacobian")), <, 1e-6);
  g_autoptr(NwVolume) fwd = nw_volume_new(N, N, N, 3, NULL);
  nw_field_exp(fwd, nw_method_result_get(res, "velocity"), 1.0);
  g_assert_cmpfloat(nw_test_max_abs_diff(fwd, nw_method_result_get(res, "forward")), <, 1e-6);
  double dice_before, dice_after;
  g_autoptr(GArray) d0 = nw_labels_dice(labels, mlabels, &dice_before);
  g_autoptr(GArray) d1 = nw_labels_dice(labels, nw_method_result_get(res, "labels"), &dice_after);
  g_test_message("mean Dice %.3f -> %.3f", dice_before, dice_after);
  g_assert_cmpuint(d1->len, ==, 3);
  g_assert_cmpfloat(dice_after, >, dice_before);
  g_assert_cmpfloat(dice_after, >, 0.9);
  clear_case(&c);
}

/* Moving with a smooth multiplicative bias 0.7..1.3 along i: LCC copes, SSD does not. */
static void test_lcc_beats_ssd_under_bias(void)
{
  Case c = {0};
  make_case(&c, 2.5);
  for (int k = 0; k < N; k++)
    for (int j = 0; j < N; j++)
      for (int i = 0; i < N; i++)
        c.moving->data[nw_volume_index(c.moving, i, j, k)] *= (float)(0.7 + 0.6 * i / (N - 1.0));
  const NwMethodInputs in = {.fixed = c.fixed, .moving = c.moving};
  const char *const ssd[] = {"similarity=ssd", "iterations=30", NULL};
  const char *const lcc[] = {"similarity=lcc", "iterations=30", NULL};
  g_autoptr(NwParams) ps = params(ssd);
  g_autoptr(NwParams) pl = params(lcc);
  RunLog ls, ll;
  g_autoptr(NwMethodResult) rs = run(&in, ps, &ls);
  g_autoptr(NwMethodResult) rl = run(&in, pl, &ll);
  double es = mean_error_inside(nw_method_result_get(rs, "forward"), c.true_fwd);
  double el = mean_error_inside(nw_method_result_get(rl, "forward"), c.true_fwd);
  g_test_message("bias: error ssd %.3f lcc %.3f; lcc energy %g -> %g", es, el, ll.first_energy,
                 ll.last_energy);
  g_assert_cmpfloat(el, <, es);
  g_assert_cmpfloat(el, <, 0.6);
  /* 1 - mean ρ over all voxels: compare within the finest level (coarser levels have less
   * background). */
  g_assert_cmpfloat(ll.finest_last, <, ll.finest_first);
  g_assert_cmpuint(nw_field_count_folds(nw_method_result_get(rl, "forward")), ==, 0);
  clear_case(&c);
}

/* Moving intensities remapped non-linearly: histogram matching restores SSD's assumption. */
static void test_histogram_match(void)
{
  Case c = {0};
  make_case(&c, 2.5);
  g_autoptr(NwVolume) orig = nw_volume_copy(c.moving);
  for (size_t e = 0; e < nw_volume_n_voxels(c.moving); e++)
    c.moving->data[e] = 20.0f + 0.02f * c.moving->data[e] * c.moving->data[e];
  const NwMethodInputs in = {.fixed = c.fixed, .moving = c.moving};
  const char *const hm[] = {"histogram-match=true", "iterations=30", NULL};
  g_autoptr(NwParams) p = params(hm);
  RunLog log;
  g_autoptr(NwMethodResult) res = run(&in, p, &log);
  double err = mean_error_inside(nw_method_result_get(res, "forward"), c.true_fwd);
  g_test_message("histogram-matched error %.3f", err);
  g_assert_cmpfloat(err, <, 0.6);
  /* "warped" keeps the moving image's own intensities (not the matched ones). */
  NwVolumeStats st;
  nw_volume_stats(nw_method_result_get(res, "warped"), &st);
  g_assert_cmpfloat(st.min, >=, 19.9);
  clear_case(&c);
}

/* 2D (nz = 1): a textured disc translated by t = (1, -0.5) voxels is recovered, and the
 * fields stay in-plane. */
static void test_2d_translation(void)
{
  const int n = 48;
  const double t[2] = {1.0, -0.5};
  g_autoptr(NwVolume) f = nw_volume_new(n, n, 1, 1, NULL);
  g_autoptr(NwVolume) m = nw_volume_new(n, n, 1, 1, NULL);
  for (int pass = 0; pass < 2; pass++)
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) {
        double x = i + (pass == 0 ? t[0] : 0.0), y = j + (pass == 0 ? t[1] : 0.0);
        double r = hypot(x - 23.5, y - 23.5) / 15.0;
        double val = 100.0 / (1.0 + exp((r - 1.0) * 10.0)) *
                     (1.0 + 0.5 * sin(0.5 * x) * cos(0.4 * y) + 0.3 * sin(0.45 * y + 0.3 * x));
        (pass == 0 ? f : m)->data[nw_volume_index(f, i, j, 0)] = (float)val;
      }
  const NwMethodInputs in = {.fixed = f, .moving = m};
  const char *const s[] = {"iterations=30", NULL};
  g_autoptr(NwParams) p = params(s);
  RunLog log;
  g_autoptr(NwMethodResult) res = run(&in, p, &log);
  g_assert_cmpint(log.n_levels, ==, 3); /* 48 -> 24 -> 12 in-plane, nz stays 1 */
  const NwVolume *fwd = nw_method_result_get(res, "forward");
  double err = 0.0, zmax = 0.0;
  int cnt = 0;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++)
      if (hypot(i - 23.5, j - 23.5) < 10.0) {
        const float *u = fwd->data + 3 * nw_volume_index(fwd, i, j, 0);
        err += hypot(u[0] - t[0], u[1] - t[1]);
        zmax = fmax(zmax, fabs(u[2]));
        cnt++;
      }
  g_test_message("2D translation: mean error %.3f voxel", err / cnt);
  g_assert_cmpfloat(err / cnt, <, 0.2);
  g_assert_cmpfloat(zmax, ==, 0.0);
}

static void test_params_table(void)
{
  g_autoptr(NwParams) p = params(NULL);
  g_assert_cmpint(nw_demons_n_params, ==, 11);
  g_assert_cmpint(nw_params_get_int(p, "levels"), ==, 3);
  g_assert_cmpint(nw_params_get_int(p, "force"), ==, NW_DEMONS_FORCE_SYMMETRIC);
  g_assert_cmpint(nw_params_get_int(p, "similarity"), ==, NW_DEMONS_SIM_SSD);
  g_assert_cmpint(nw_params_get_int(p, "composition"), ==, NW_DEMONS_COMPOSE);
  const char *live[] = {"sigma-fluid", "sigma-diff", "max-step", "lcc-sigma", "tolerance"};
  for (int i = 0; i < nw_demons_n_params; i++) {
    gboolean want = FALSE;
    for (gsize l = 0; l < G_N_ELEMENTS(live); l++)
      want |= strcmp(nw_demons_param_specs[i].name, live[l]) == 0;
    g_assert_cmpint(nw_demons_param_specs[i].live, ==, want);
  }
  g_autoptr(GError) err = NULL;
  g_assert_true(nw_params_set_string(p, "force", "moving", &err));
  g_assert_cmpint(nw_params_get_int(p, "force"), ==, NW_DEMONS_FORCE_MOVING);
  g_assert_false(nw_params_set_string(p, "max-step", "0", &err));
  g_assert_nonnull(strstr(err->message, "max-step"));
}

static void test_live_params_and_frame(void)
{
  Case c = {0};
  make_case(&c, 1.0);
  const NwMethodInputs in = {.fixed = c.fixed, .moving = c.moving};
  const char *const s[] = {"similarity=lcc", NULL};
  g_autoptr(NwParams) p = params(s);
  g_autoptr(GError) err = NULL;
  const NwMethodOps *ops = &nw_demons_cpu_ops;
  void *st = ops->create(&in, p, &err);
  g_assert_no_error(err);
  NwIterationReport r = {0};
  g_assert_true(ops->step(st, &r, &err));
  g_assert_cmpint(r.level, ==, 0);
  g_assert_cmpint(r.n_levels, ==, 3);
  g_assert_cmpint(r.n_figures, ==, 7);
  g_assert_cmpstr(r.figure_names[0], ==, "energy");
  g_assert_cmpfloat(nw_test_figure(&r, "max_u"), <=, 1.0 + 1e-6); /* α = max-step = 1 */
  g_assert_cmpfloat(nw_test_figure(&r, "max_u"), >, 0.0);
  /* A live change (α and the LCC window) is accepted and obeyed. */
  g_autoptr(NwParams) q = nw_params_copy(p);
  g_assert_true(nw_params_set(q, "max-step", 0.1, &err));
  g_assert_true(nw_params_set(q, "lcc-sigma", 2.0, &err));
  g_assert_true(ops->set_params(st, q, &err));
  g_assert_no_error(err);
  g_assert_true(ops->step(st, &r, &err));
  g_assert_cmpfloat(nw_test_figure(&r, "max_u"), <=, 0.1 + 1e-6);
  /* A non-live change is refused with its name. */
  g_assert_true(nw_params_set(q, "levels", 2, &err));
  g_assert_false(ops->set_params(st, q, &err));
  g_assert_error(err, NW_ERROR, NW_ERROR_INVALID);
  g_assert_nonnull(strstr(err->message, "'levels'"));
  g_clear_error(&err);
  /* The frame: the warped image and exp(v) at the current (coarsest, 8^3) level. */
  NwFrame f = {0};
  g_assert_true(ops->publish_frame(st, &f, &err));
  g_assert_cmpint(f.iteration, ==, 2);
  g_assert_cmpint(f.image->nx, ==, 8);
  g_assert_cmpint(f.image->nc, ==, 1);
  g_assert_cmpint(f.field->nc, ==, 3);
  g_assert_cmpfloat(nw_field_max_norm(f.field), >, 0.0);
  nw_frame_clear(&f);
  /* Results are available mid-run, at full resolution. */
  g_autoptr(NwMethodResult) res = ops->result(st, &err);
  g_assert_no_error(err);
  g_assert_cmpint(nw_method_result_get(res, "forward")->nx, ==, N);
  ops->destroy(st);
  clear_case(&c);
}

static void test_input_errors(void)
{
  g_autoptr(NwVolume) f = nw_volume_new(16, 16, 16, 1, NULL);
  g_autoptr(NwVolume) m = nw_volume_new(16, 16, 15, 1, NULL);
  g_autoptr(NwParams) p = params(NULL);
  g_autoptr(GError) err = NULL;
  NwMethodInputs in = {.fixed = f, .moving = m};
  g_assert_null(nw_demons_cpu_ops.create(&in, p, &err));
  g_assert_error(err, NW_ERROR, NW_ERROR_MISMATCH);
  g_assert_nonnull(strstr(err->message, "fixed"));
  g_assert_nonnull(strstr(err->message, "moving"));
  g_clear_error(&err);
  g_autoptr(NwVolume) m2 = nw_volume_new(16, 16, 16, 1, NULL);
  m2->data[100] = NAN;
  in.moving = m2;
  g_assert_null(nw_demons_cpu_ops.create(&in, p, &err));
  g_assert_error(err, NW_ERROR, NW_ERROR_INVALID);
  g_assert_nonnull(strstr(err->message, "moving"));
  g_clear_error(&err);
  g_autoptr(NwVolume) vec = nw_volume_new(16, 16, 16, 3, NULL);
  in.moving = vec;
  g_assert_null(nw_demons_cpu_ops.create(&in, p, &err));
  g_assert_nonnull(strstr(err->message, "scalar"));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/demons/params-table", test_params_table);
  g_test_add_func("/demons/input-errors", test_input_errors);
  g_test_add_func("/demons/recover-compose", test_recover_compose);
  g_test_add_func("/demons/recover-bch", test_recover_bch);
  g_test_add_func("/demons/results-labels-dice", test_results);
  g_test_add_func("/demons/lcc-beats-ssd-under-bias", test_lcc_beats_ssd_under_bias);
  g_test_add_func("/demons/histogram-match", test_histogram_match);
  g_test_add_func("/demons/live-params-and-frame", test_live_params_and_frame);
  g_test_add_func("/demons/2d-translation", test_2d_translation);
  return g_test_run();
}
