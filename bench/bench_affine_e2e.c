/* bench_affine_e2e.c — the end-to-end half of bench_affine (issue 11's targets): the time
 * from a job's creation to its result, CUDA already initialised, of
 *   - a 2D similarity registration of 3072² images (a known similarity apart), and
 *   - a 3D rigid then affine registration at the 1 mm brain size (182 x 218 x 182),
 * each the method "affine" on CUDA as the CLI and the GUI run it (pyramid, starts, simplex
 * runs and restarts), with the evaluations it took and how far its transform is from the
 * truth: the largest distance between where the two send the corners of the fixed image.
 * The images are bench_affine's smooth test pattern, not anatomy. Main thread. */
#include "bench_affine_e2e.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "affine_init.h"
#include "affine_method.h"
#include "affine_resample.h"
#include "json_out.h"
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

/* Where a registration's time goes (seconds, summed over its jobs): the job's creation
 * (pyramids, starts, the first level on the device), its steps (the simplex runs, later
 * levels) and its result (the warped image and the transform). */
typedef struct {
  double create, steps, result;
} Phases;

static double since(gint64 *t)
{
  const gint64 now = g_get_monotonic_time();
  const double s = (double)(now - *t) / G_USEC_PER_SEC;
  *t = now;
  return s;
}

/* One job to its end: its world transform (fixed -> moving, 4x4) and evaluations. */
static gboolean run_job(const NwMethodInputs *in, const char *const *settings, double t[16],
                        double *evals, Phases *ph, GError **error)
{
  NwParams *p = params_of(settings, error);
  if (p == NULL)
    return FALSE;
  gint64 clock = g_get_monotonic_time();
  void *st = nw_affine_cuda_ops.create(in, p, error);
  ph->create += since(&clock);
  nw_params_free(p);
  if (st == NULL)
    return FALSE;
  NwIterationReport r = {0};
  gboolean ok = TRUE;
  for (int it = 1; ok && !r.finished; it++) {
    r = (NwIterationReport){.iteration = it};
    ok = nw_affine_cuda_ops.step(st, &r, error);
  }
  ph->steps += since(&clock);
  NwMethodResult *res = ok ? nw_affine_cuda_ops.result(st, error) : NULL;
  ph->result += since(&clock);
  int n = 0;
  const double *m = res != NULL ? nw_method_result_get_values(res, "transform", &n) : NULL;
  const double *e = res != NULL ? nw_method_result_get_values(res, "evaluations", NULL) : NULL;
  ok = m != NULL && n == 16 && e != NULL;
  if (ok) {
    memcpy(t, m, 16 * sizeof(double));
    *evals += e[0];
  }
  nw_method_result_free(res);
  nw_affine_cuda_ops.destroy(st);
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

static void add_result(JsonBuilder *b, const char *name, const char *what, double seconds,
                       const Phases *ph, double evals, double err_mm, const char *error)
{
  json_builder_begin_object(b);
  nw_json_member_string(b, "case", name);
  nw_json_member_string(b, "registration", what);
  if (error != NULL) {
    nw_json_member_string(b, "error", error);
  } else {
    nw_json_member_number(b, "seconds", seconds);
    nw_json_member_number(b, "create_seconds", ph->create);
    nw_json_member_number(b, "steps_seconds", ph->steps);
    nw_json_member_number(b, "result_seconds", ph->result);
    nw_json_member_number(b, "evaluations", evals);
    nw_json_member_number(b, "corner_error_mm", err_mm);
  }
  json_builder_end_object(b);
  fprintf(stderr,
          "end to end %-12s %-36s %s %8.1f ms (create %.1f, steps %.1f, result %.1f)  %5.0f "
          "evaluations  corners off %.3f mm\n",
          name, what, error != NULL ? error : "", seconds * 1e3, ph->create * 1e3, ph->steps * 1e3,
          ph->result * 1e3, evals, err_mm);
}

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

/* Both optimisers: the simplex (the default) and the gradient search, whose probes go to
 * the GPU as batches. */
static const char *const optimizers[] = {"simplex", "gradient"};

gboolean nw_bench_affine_end_to_end(JsonBuilder *b, NwBenchImageFn image, const char *precision)
{
  gboolean all_ok = TRUE;
  e2e_precision = precision;
  /* 2D: 3072², a similarity of 4 degrees, 3 % and (6, -4) mm apart */
  for (gsize o = 0; o < G_N_ELEMENTS(optimizers); o++) {
    g_autoptr(GError) error = NULL;
    g_autoptr(NwVolume) f = image(3072, 3072, 1, 0.0);
    const double p[] = {6.0, -4.0, 4.0 * G_PI / 180.0, 1.03}; /* tx, ty, angle, scale */
    double truth[16], found[16], evals = 0.0;
    Phases ph = {0};
    truth_matrix(f, 2, NW_XFORM_SIMILARITY, p, truth);
    g_autoptr(NwVolume) m = moving_for(f, truth, 2, &error);
    static const char *const s[] = {"transform=similarity", "metric=mse", "levels=4", NULL};
    char buf[32], what[80];
    const char *set[8];
    with_optimizer(s, optimizers[o], buf, sizeof buf, set);
    const NwMethodInputs in = {.fixed = f, .moving = m};
    const gint64 t0 = g_get_monotonic_time();
    const gboolean ok = m != NULL && run_job(&in, set, found, &evals, &ph, &error);
    const double sec = (double)(g_get_monotonic_time() - t0) / G_USEC_PER_SEC;
    g_snprintf(what, sizeof what, "similarity (mse, 4 levels, %s, %s)", optimizers[o], precision);
    add_result(b, "3072x3072", what, sec, &ph, evals, ok ? corner_error_mm(f, truth, found) : -1.0,
               ok ? NULL : error->message);
    all_ok &= ok;
  }
  /* 3D: 1 mm brain size, rigid then affine (the rigid result as the affine's start) */
  for (gsize o = 0; o < G_N_ELEMENTS(optimizers); o++) {
    g_autoptr(GError) error = NULL;
    g_autoptr(NwVolume) f = image(182, 218, 182, 0.0);
    /* tx, ty, tz, rx, ry, rz, sx, sy, sz, shears */
    const double p[] = {5.0, -3.0, 4.0, 0.06, -0.04, 0.08, 1.04, 0.97, 1.02, 0.0, 0.0, 0.0};
    double truth[16], rigid[16], found[16], evals = 0.0;
    Phases ph = {0};
    truth_matrix(f, 3, NW_XFORM_AFFINE, p, truth);
    g_autoptr(NwVolume) m = moving_for(f, truth, 3, &error);
    static const char *const sr[] = {"transform=rigid", "metric=ncc", NULL};
    static const char *const sa[] = {"transform=affine", "metric=ncc", NULL};
    char buf_r[32], buf_a[32], what[80];
    const char *set_r[8], *set_a[8];
    with_optimizer(sr, optimizers[o], buf_r, sizeof buf_r, set_r);
    with_optimizer(sa, optimizers[o], buf_a, sizeof buf_a, set_a);
    NwMethodInputs in = {.fixed = f, .moving = m};
    const gint64 t0 = g_get_monotonic_time();
    gboolean ok = m != NULL && run_job(&in, set_r, rigid, &evals, &ph, &error);
    in.initial_transform = rigid;
    ok = ok && run_job(&in, set_a, found, &evals, &ph, &error);
    const double sec = (double)(g_get_monotonic_time() - t0) / G_USEC_PER_SEC;
    g_snprintf(what, sizeof what, "rigid, then affine (ncc, %s, %s)", optimizers[o], precision);
    add_result(b, "182x218x182", what, sec, &ph, evals,
               ok ? corner_error_mm(f, truth, found) : -1.0, ok ? NULL : error->message);
    all_ok &= ok;
  }
  return all_ok;
}
