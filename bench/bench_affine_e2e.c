/* bench_affine_e2e.c — the end-to-end half of bench_affine (issue 11's targets): the time
 * from a job's creation to its result, CUDA already initialised, of
 *   - a 2D similarity registration of 3072² images (a known similarity apart), and
 *   - a 3D rigid then affine registration at the 1 mm brain size (182 x 218 x 182),
 * each the method "affine" on CUDA as the CLI and the GUI run it (pyramid, starts, simplex
 * runs and restarts), with the evaluations it took and how far its transform is from the
 * truth: the largest distance between where the two send the corners of the fixed image.
 * Each registration runs `repeats` times (bench_affine --e2e-repeats, default 5; one run's
 * time varied by tens of ms on the GPU host), and each phase is reported as the median and
 * the range of the runs. All runs are timed: there is no warm-up run (bench_affine's cost
 * cases have initialised CUDA), so one-off costs of a first run show in the maximum. The
 * registration is deterministic, so every run must take the same evaluations to the same
 * corners: where one does not, the case says "deterministic": false rather than hiding it
 * in a median. The images are bench_affine's smooth test pattern, not anatomy. Main thread. */
#include "bench_affine_e2e.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "affine_init.h"
#include "affine_method.h"
#include "affine_resample.h"
#include "json_out.h"
#include "machine_counts.h"
#include "nw_error.h"
#include "ras_affine.h"

/* The precision of every registration of this run (nw_bench_affine_end_to_end's). */
static const char *e2e_precision = "u16";

/* Parameters from "key=value" strings, at e2e_precision. */
static NwParams *params_of(const char *const *settings, GError **error)
{
  NwParams *p = nw_params_new(nw_affine_param_specs, NW_AFFINE_N_PARAMS);
  g_autofree char *prec = g_strconcat("precision=", e2e_precision, NULL);
  if (!nw_params_set_string(p, NULL, prec, error)) {
    nw_params_free(p);
    return NULL;
  }
  for (; *settings != NULL; settings++)
    if (!nw_params_set_string(p, NULL, *settings, error)) {
      nw_params_free(p);
      return NULL;
    }
  return p;
}

/* What one run of a registration gives: where its time goes (seconds, summed over its
 * jobs): the jobs' creation (pyramids, starts, the first level on the device), their steps
 * (the simplex runs, later levels), their results (the warped image and the transform), the
 * freeing of the result and the job (the device's buffers), and
 * the whole; and its evaluations and how far its corners are off (mm). */
enum { RUN_TOTAL, RUN_CREATE, RUN_STEPS, RUN_RESULT, RUN_FREE, RUN_EVALS, RUN_CORNERS, RUN_COUNT };
typedef struct {
  double v[RUN_COUNT];
} Run;

/* The figures' JSON keys; each holds the median of the runs (the one run's value before
 * there were repeats, so older readers still work). */
static const char *const run_keys[RUN_COUNT] = {
    [RUN_TOTAL] = "seconds",           [RUN_CREATE] = "create_seconds",
    [RUN_STEPS] = "steps_seconds",     [RUN_RESULT] = "result_seconds",
    [RUN_FREE] = "free_seconds",       [RUN_EVALS] = "evaluations",
    [RUN_CORNERS] = "corner_error_mm",
};

static double since(gint64 *t)
{
  const gint64 now = g_get_monotonic_time();
  const double s = (double)(now - *t) / G_USEC_PER_SEC;
  *t = now;
  return s;
}

/* One job to its end: its world transform (fixed -> moving, 4x4); its phases and
 * evaluations added to run. */
static gboolean run_job(const NwMethodInputs *in, const char *const *settings, double t[16],
                        Run *run, GError **error)
{
  NwParams *p = params_of(settings, error);
  if (p == NULL)
    return FALSE;
  gint64 clock = g_get_monotonic_time();
  void *st = nw_affine_cuda_ops.create(in, p, error);
  run->v[RUN_CREATE] += since(&clock);
  nw_params_free(p);
  if (st == NULL)
    return FALSE;
  NwIterationReport r = {0};
  gboolean ok = TRUE;
  for (int it = 1; ok && !r.finished; it++) {
    r = (NwIterationReport){.iteration = it};
    ok = nw_affine_cuda_ops.step(st, &r, error);
  }
  run->v[RUN_STEPS] += since(&clock);
  NwMethodResult *res = ok ? nw_affine_cuda_ops.result(st, error) : NULL;
  run->v[RUN_RESULT] += since(&clock);
  int n = 0;
  const double *m = res != NULL ? nw_method_result_get_values(res, "transform", &n) : NULL;
  const double *e = res != NULL ? nw_method_result_get_values(res, "evaluations", NULL) : NULL;
  ok = m != NULL && n == 16 && e != NULL;
  if (ok) {
    memcpy(t, m, 16 * sizeof(double));
    run->v[RUN_EVALS] += e[0];
  }
  since(&clock);
  nw_method_result_free(res);
  nw_affine_cuda_ops.destroy(st);
  run->v[RUN_FREE] += since(&clock);
  return ok;
}

/* Largest distance (mm) between where a and b send the corners of v's box. */
static double corner_error_mm(const NwVolume *v, const double a[16], const double b[16])
{
  double worst = 0.0;
  for (int c = 0; c < 8; c++) {
    const double ijk[3] = {(c & 1) ? v->nx - 1 : 0, (c & 2) ? v->ny - 1 : 0,
                           (c & 4) ? v->nz - 1 : 0};
    double x[3], d2 = 0.0;
    for (int r = 0; r < 3; r++)
      x[r] = v->vox_to_ras[4 * r] * ijk[0] + v->vox_to_ras[4 * r + 1] * ijk[1] +
             v->vox_to_ras[4 * r + 2] * ijk[2] + v->vox_to_ras[4 * r + 3];
    for (int r = 0; r < 3; r++) {
      const double pa = a[4 * r] * x[0] + a[4 * r + 1] * x[1] + a[4 * r + 2] * x[2] + a[4 * r + 3];
      const double pb = b[4 * r] * x[0] + b[4 * r + 1] * x[1] + b[4 * r + 2] * x[2] + b[4 * r + 3];
      d2 += (pa - pb) * (pa - pb);
    }
    worst = fmax(worst, sqrt(d2));
  }
  return worst;
}

/* truth: a transform of `kind` about the image's centre with the given parameters. */
static void truth_matrix(const NwVolume *f, int dim, NwTransformKind kind, const double *params,
                         double m[16])
{
  double c[3];
  nw_volume_centre_mm(f, c);
  NwTransform t;
  nw_transform_init(&t, dim, kind, c);
  nw_transform_set_params(&t, params);
  nw_transform_matrix(&t, m);
}

/* The moving image that `truth` registers onto f: m(truth(x)) = f(x), i.e. f resampled
 * through truth's inverse. */
static NwVolume *moving_for(const NwVolume *f, const double truth[16], int dim, GError **error)
{
  double inv[16];
  if (!nw_affine_inverse(truth, inv)) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "singular test transform");
    return NULL;
  }
  return nw_affine_resample(f, f, inv, dim, NW_SAMPLER_CUBIC, 0.0f, error);
}

/* A registration: its images and truth, made once for all its runs, and the settings of
 * its one or two jobs (the second starts from the first's result). */
typedef struct {
  const char *name; /* the grid */
  char what[80];    /* what is registered, and how */
  const NwVolume *f, *m;
  double truth[16];
  const char *const *jobs[2]; /* jobs[1] NULL: one job */
} E2eCase;

/* settings plus "optimizer=NAME", NULL-terminated, into out (room for 8). */
static const char *const *with_optimizer(const char *const *settings, const char *opt, char *buf,
                                         gsize buf_len, const char *out[8])
{
  int n = 0;
  for (; settings[n] != NULL && n < 6; n++)
    out[n] = settings[n];
  g_snprintf(buf, buf_len, "optimizer=%s", opt);
  out[n++] = buf;
  out[n] = NULL;
  return out;
}

/* One run of c with the optimizer. */
static gboolean run_once(const E2eCase *c, const char *optimizer, Run *run, GError **error)
{
  *run = (Run){{0}};
  NwMethodInputs in = {.fixed = c->f, .moving = c->m};
  double t[2][16];
  int n = 0;
  gboolean ok = TRUE;
  const gint64 t0 = g_get_monotonic_time();
  for (; ok && n < 2 && c->jobs[n] != NULL; n++) {
    char buf[32];
    const char *set[8];
    const char *const *settings = with_optimizer(c->jobs[n], optimizer, buf, sizeof buf, set);
    ok = run_job(&in, settings, t[n], run, error);
    in.initial_transform = t[n];
  }
  run->v[RUN_TOTAL] = (double)(g_get_monotonic_time() - t0) / G_USEC_PER_SEC;
  run->v[RUN_CORNERS] = ok ? corner_error_mm(c->f, c->truth, t[n - 1]) : -1.0;
  return ok;
}

/* The median and the range of a figure over the runs. */
typedef struct {
  double median, min, max;
} Spread;

/* Figure q of n >= 1 runs as "key": median, "key_min", "key_max" and "key_runs" (each run's,
 * in run order) members of b's object. */
static Spread add_spread(JsonBuilder *b, const Run *runs, int n, int q)
{
  double *v = g_new(double, n), *sorted = g_new(double, n);
  for (int r = 0; r < n; r++)
    v[r] = sorted[r] = runs[r].v[q];
  qsort(sorted, n, sizeof *sorted, nw_bench_cmp_double);
  const Spread s = {n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]), sorted[0],
                    sorted[n - 1]};
  g_autofree char *k_min = g_strconcat(run_keys[q], "_min", NULL);
  g_autofree char *k_max = g_strconcat(run_keys[q], "_max", NULL);
  g_autofree char *k_runs = g_strconcat(run_keys[q], "_runs", NULL);
  nw_json_member_number(b, run_keys[q], s.median);
  nw_json_member_number(b, k_min, s.min);
  nw_json_member_number(b, k_max, s.max);
  json_builder_set_member_name(b, k_runs);
  nw_json_add_numbers(b, v, n);
  g_free(v);
  g_free(sorted);
  return s;
}

/* "median [min-max]" of a time, in ms. */
static const char *ms_text(const Spread *s, char *buf, gsize len)
{
  g_snprintf(buf, len, "%.1f [%.1f-%.1f]", s->median * 1e3, s->min * 1e3, s->max * 1e3);
  return buf;
}

/* c's n runs as a JSON object and a line on stderr; error: the run after them failed. */
static void add_result(JsonBuilder *b, const E2eCase *c, const Run *runs, int n, const char *error)
{
  json_builder_begin_object(b);
  nw_json_member_string(b, "case", c->name);
  nw_json_member_string(b, "registration", c->what);
  fprintf(stderr, "end to end %-12s %-36s", c->name, c->what);
  if (error != NULL) {
    nw_json_member_string(b, "error", error);
    json_builder_end_object(b);
    fprintf(stderr, " %s\n", error);
    return;
  }
  nw_json_member_number(b, "repeats", n);
  Spread s[RUN_COUNT];
  for (int q = 0; q < RUN_COUNT; q++)
    s[q] = add_spread(b, runs, n, q);
  /* the same registration every time: a run that differs is a finding, not noise */
  const gboolean same =
      s[RUN_EVALS].min == s[RUN_EVALS].max && s[RUN_CORNERS].min == s[RUN_CORNERS].max;
  json_builder_set_member_name(b, "deterministic");
  json_builder_add_boolean_value(b, same);
  json_builder_end_object(b);
  char t[5][48];
  fprintf(stderr,
          " total %s ms (create %s, steps %s, result %s, free %s)  %5.0f evaluations  corners "
          "off %.3f mm  (%d runs)",
          ms_text(&s[RUN_TOTAL], t[0], sizeof t[0]), ms_text(&s[RUN_CREATE], t[1], sizeof t[1]),
          ms_text(&s[RUN_STEPS], t[2], sizeof t[2]), ms_text(&s[RUN_RESULT], t[3], sizeof t[3]),
          ms_text(&s[RUN_FREE], t[4], sizeof t[4]), s[RUN_EVALS].median, s[RUN_CORNERS].median, n);
  if (!same)
    fprintf(stderr, "  NOT DETERMINISTIC: evaluations %.0f-%.0f, corners off %.6f-%.6f mm",
            s[RUN_EVALS].min, s[RUN_EVALS].max, s[RUN_CORNERS].min, s[RUN_CORNERS].max);
  fprintf(stderr, "\n");
}

/* c run `repeats` times with the optimizer, reported; FALSE when a run failed. */
static gboolean repeat_case(JsonBuilder *b, const E2eCase *c, const char *optimizer, int repeats)
{
  g_autoptr(GError) error = NULL;
  Run *runs = g_new(Run, repeats);
  int n = 0;
  while (n < repeats && run_once(c, optimizer, &runs[n], &error))
    n++;
  const gboolean ok = n == repeats;
  add_result(b, c, runs, n, ok ? NULL : (error != NULL ? error->message : "no result"));
  g_free(runs);
  return ok;
}

/* Both optimisers: the simplex (the default) and the gradient search, whose probes go to
 * the GPU as batches. */
static const char *const optimizers[] = {"simplex", "gradient"};

/* c with each optimiser, `repeats` runs each, as "registration, optimiser, precision)";
 * c->m NULL: making it failed with error. */
static gboolean each_optimizer(JsonBuilder *b, E2eCase *c, const char *registration,
                               const char *precision, int repeats, const GError *error)
{
  gboolean all_ok = TRUE;
  for (gsize o = 0; o < G_N_ELEMENTS(optimizers); o++) {
    g_snprintf(c->what, sizeof c->what, "%s, %s, %s)", registration, optimizers[o], precision);
    if (c->m == NULL)
      add_result(b, c, NULL, 0, error->message);
    all_ok &= c->m != NULL && repeat_case(b, c, optimizers[o], repeats);
  }
  return all_ok;
}

/* 2D: 3072², a similarity of 4 degrees, 3 % and (6, -4) mm apart. */
static gboolean case_2d(JsonBuilder *b, NwBenchImageFn image, const char *precision, int repeats)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(NwVolume) f = image(3072, 3072, 1, 0.0);
  const double p[] = {6.0, -4.0, 4.0 * G_PI / 180.0, 1.03}; /* tx, ty, angle, scale */
  static const char *const s[] = {"transform=similarity", "metric=mse", "levels=4", NULL};
  E2eCase c = {.name = "3072x3072", .f = f, .jobs = {s, NULL}};
  truth_matrix(f, 2, NW_XFORM_SIMILARITY, p, c.truth);
  g_autoptr(NwVolume) m = moving_for(f, c.truth, 2, &error);
  c.m = m;
  return each_optimizer(b, &c, "similarity (mse, 4 levels", precision, repeats, error);
}

/* 3D: 1 mm brain size, rigid then affine (the rigid result as the affine's start). */
static gboolean case_3d(JsonBuilder *b, NwBenchImageFn image, const char *precision, int repeats)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(NwVolume) f = image(182, 218, 182, 0.0);
  /* tx, ty, tz, rx, ry, rz, sx, sy, sz, shears */
  const double p[] = {5.0, -3.0, 4.0, 0.06, -0.04, 0.08, 1.04, 0.97, 1.02, 0.0, 0.0, 0.0};
  static const char *const sr[] = {"transform=rigid", "metric=ncc", NULL};
  static const char *const sa[] = {"transform=affine", "metric=ncc", NULL};
  E2eCase c = {.name = "182x218x182", .f = f, .jobs = {sr, sa}};
  truth_matrix(f, 3, NW_XFORM_AFFINE, p, c.truth);
  g_autoptr(NwVolume) m = moving_for(f, c.truth, 3, &error);
  c.m = m;
  return each_optimizer(b, &c, "rigid, then affine (ncc", precision, repeats, error);
}

gboolean nw_bench_affine_end_to_end(JsonBuilder *b, NwBenchImageFn image, const char *precision,
                                    int repeats)
{
  g_return_val_if_fail(repeats >= 1, FALSE);
  e2e_precision = precision;
  const gboolean ok_2d = case_2d(b, image, precision, repeats);
  const gboolean ok_3d = case_3d(b, image, precision, repeats);
  return ok_2d && ok_3d;
}
