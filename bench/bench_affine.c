/* bench_affine.c — affine cost benchmark (not a test): evaluations per second of the CUDA
 * cost (cuda/affine_cost_cuda.cu) at 512², 1024², 2048², 3072² and at the 1 mm brain size
 * (182 x 218 x 182, the MNI152 1 mm grid), linear and cubic, with the effective bandwidth
 * and the CPU reference's time per evaluation beside it (issue 11's table). JSON on stdout
 * (or --json FILE); a short table on stderr. Then whole registrations, end to end
 * (bench_affine_e2e.c; --no-end-to-end skips them), each --e2e-repeats times, reported as
 * the median and range of the runs.
 *
 * An evaluation is timed as the optimiser sees it: nw_affine_cost_eval_matrix, from the
 * host's map to the metric on the host (one launch, the wait for its ticket). Beside it, the
 * same evaluations 2n + 1 to a launch (nw_affine_cost_eval_batch), as a gradient step sends
 * its centre and probes: 9 in 2D (a similarity), 25 in 3D (an affine).
 * Effective bandwidth = the fewest bytes an evaluation must move (each fixed voxel read once
 * and one moving value per voxel: 8 bytes a voxel at precision single, 4 at u16) / its time.
 * Each case runs at every precision of --precision (affine_cost.h: u16 stores the level
 * images in 16 bits, positions in float; single is the float32 reference).
 *
 * At u16 the linear and cubic kernels gather the moving image's taps from a texture
 * (cuda/affine_texture_cuda.cuh; "moving_reads": "texture"); NW_AFFINE_TEXTURE=0 times the
 * plain loads instead ("loads"), which give the same samples. Through the texture, linear
 * with mse or ncc, each thread takes several voxels of a row (cuda/affine_cost_rows_cuda.cuh;
 * "voxels_per_thread": 4 in 2D, 2 in 3D); NW_AFFINE_VOXELS_PER_THREAD=1 times the one-voxel
 * kernel instead (1), =2 or =4 sets the number, with the same samples.
 *
 * Every case is first validated: the CUDA cost equals the CPU cost to 1e-4 relative on the
 * same transform; the benchmark exits 1 when one does not, after writing its JSON.
 *
 *   bench_affine [--sizes 512,1024,2048,3072] [--evals 200] [--cpu-evals 2] [--metric mse]
 *                [--precision u16,single,u16-filter] [--no-brain] [--no-end-to-end]
 *                [--e2e-repeats 5]
 *                [--json FILE]
 * CPU figures use however many OpenMP threads OMP_NUM_THREADS allows. Main thread. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "affine_cost.h"
#include "bench_affine_e2e.h"
#include "json_out.h"
#include "nw_affine_cost_cuda.h"
#include "nw_cuda.h"

#define PARITY_TOL 1e-4

static double now_us(void)
{
  return (double)g_get_monotonic_time();
}

/* A smooth image with structure at several scales (every interpolator has work to do);
 * shift_vox moves it along x, so fixed and moving differ as in a registration. */
static NwVolume *bench_image(int nx, int ny, int nz, double shift_vox)
{
  NwVolume *v = nw_volume_new(nx, ny, nz, 1, NULL);
  if (v == NULL)
    return NULL;
  const double cx = nx / 2.0 + shift_vox, cy = ny / 2.0, cz = nz / 2.0;
  const double r = 0.3 * MIN(nx, ny);
#pragma omp parallel for schedule(static)
  for (int k = 0; k < nz; k++)
    for (int j = 0; j < ny; j++)
      for (int i = 0; i < nx; i++) {
        const double x = (i - cx) / r, y = (j - cy) / r, z = nz > 1 ? (k - cz) / r : 0.0;
        const double d2 = x * x + 1.4 * y * y + 0.8 * z * z;
        v->data[nw_volume_index(v, i, j, k)] =
            (float)(100.0 * exp(-d2) * (1.0 + 0.3 * sin(9.0 * x) * cos(7.0 * y)) +
                    20.0 * (d2 < 0.5));
      }
  return v;
}

/* Evaluation e's transform: a rotation about z of a few hundredths of a radian and a
 * translation of a few mm, different each time (nothing can be reused between them). */
static void eval_matrix(int e, double m[16])
{
  const double a = 0.01 * (e % 7), c = cos(a), s = sin(a), t = 0.5 * (e % 5);
  const double r[16] = {c, -s, 0, t, s, c, 0, -t, 0, 0, 1, 0, 0, 0, 0, 1};
  memcpy(m, r, sizeof r);
}

typedef struct {
  int nx, ny, nz;
  NwSampler sampler;
  NwAffinePrecision precision;
} Case;

/* Microseconds per evaluation of n evaluations on cost (after 3 untimed ones); -1 on error. */
static double time_evals(NwAffineCost *cost, int n, GError **error)
{
  double m[16];
  NwAffineCostValue v;
  for (int e = 0; e < 3; e++) {
    eval_matrix(e, m);
    if (!nw_affine_cost_eval_matrix(cost, m, &v, error))
      return -1.0;
  }
  const double t0 = now_us();
  for (int e = 0; e < n; e++) {
    eval_matrix(e, m);
    if (!nw_affine_cost_eval_matrix(cost, m, &v, error))
      return -1.0;
  }
  return (now_us() - t0) / n;
}

/* Microseconds per evaluation when the evaluations go k at a time (nw_affine_cost_eval_batch:
 * one launch on CUDA), about n of them (after one untimed batch); -1 on error. k = 2n + 1 is
 * a gradient step's centre and probes (9 for a 2D similarity, 25 for a 3D affine). */
static double time_batches(NwAffineCost *cost, int n, int k, GError **error)
{
  double (*m)[16] = g_malloc_n((gsize)k, sizeof *m);
  NwAffineCostValue *v = g_new(NwAffineCostValue, k);
  const int batches = MAX(n / k, 1);
  double us = -1.0;
  for (int b = -1; b < batches; b++) { /* b = -1: untimed */
    if (b == 0)
      us = now_us();
    for (int q = 0; q < k; q++)
      eval_matrix(b * k + q + 3 * k, m[q]);
    if (!nw_affine_cost_eval_batch(cost, (const double(*)[16])m, k, v, error)) {
      us = -1.0;
      break;
    }
  }
  if (us >= 0.0)
    us = (now_us() - us) / ((double)batches * k);
  g_free(m);
  g_free(v);
  return us;
}

/* One case: validate, time CUDA (and the CPU when cpu_evals > 0), add its JSON object.
 * FALSE when it failed or CUDA and CPU disagree. */
static gboolean run_case(JsonBuilder *b, const Case *c, NwAffineMetric metric, int evals,
                         int cpu_evals)
{
  const NwAffineCostSpec spec = {metric, c->sampler, 32, TRUE, NULL};
  g_autoptr(GError) error = NULL;
  g_autoptr(NwVolume) f = bench_image(c->nx, c->ny, c->nz, 0.0);
  g_autoptr(NwVolume) m = bench_image(c->nx, c->ny, c->nz, 1.7);
  NwAffineCost *cpu = NULL, *gpu = NULL;
  const guint texture_levels = nw_affine_cost_cuda_texture_levels();
  const NwAffineLevel lv = {
      .dim = c->nz > 1 ? 3 : 2, .fixed = f, .moving = m, .precision = c->precision};
  const double n = (double)c->nx * c->ny * c->nz;
  const double bytes = nw_affine_precision_codes(c->precision) ? 4.0 : 8.0; /* a voxel */
  json_builder_begin_object(b);
  nw_json_member_number(b, "dim", lv.dim);
  nw_json_member_number(b, "nx", c->nx);
  nw_json_member_number(b, "ny", c->ny);
  nw_json_member_number(b, "nz", c->nz);
  nw_json_member_string(b, "interp", nw_sampler_name(c->sampler));
  nw_json_member_string(b, "precision", nw_affine_precision_name(c->precision));
  nw_json_member_number(b, "bytes_per_voxel", bytes);
  nw_json_member_number(b, "voxels", n);
  gboolean ok = f != NULL && m != NULL &&
                (cpu = nw_affine_cost_new(&nw_affine_cost_cpu, &spec, &error)) != NULL &&
                (gpu = nw_affine_cost_new(&nw_affine_cost_cuda, &spec, &error)) != NULL &&
                nw_affine_cost_set_level(cpu, &lv, &error) &&
                nw_affine_cost_set_level(gpu, &lv, &error);
  /* validation: one transform, both back ends */
  NwAffineCostValue vc = {0}, vg = {0};
  double mat[16];
  eval_matrix(3, mat);
  ok = ok && nw_affine_cost_eval_matrix(cpu, mat, &vc, &error) &&
       nw_affine_cost_eval_matrix(gpu, mat, &vg, &error);
  const double rel = fabs(vc.cost - vg.cost) / fmax(fabs(vc.cost), 1e-12);
  /* how the kernel read the moving image (cuda/affine_texture_cuda.cuh) */
  const char *reads = !nw_affine_precision_codes(c->precision)                ? "floats"
                      : nw_affine_cost_cuda_texture_levels() > texture_levels ? "texture"
                                                                               : "loads";
  nw_json_member_string(b, "moving_reads", reads);
  /* fixed voxels a thread of the kernel timed (cuda/affine_cost_rows_cuda.cuh) */
  const guint per_thread =
      nw_affine_precision_codes(c->precision) && ok ? nw_affine_cost_cuda_voxels_per_thread() : 1;
  nw_json_member_number(b, "voxels_per_thread", per_thread);
  double us = -1.0, cpu_us = -1.0, batched_us = -1.0;
  const int batch = lv.dim == 3 ? 25 : 9;
  if (ok) {
    nw_json_member_number(b, "cost_cpu", vc.cost);
    nw_json_member_number(b, "cost_cuda", vg.cost);
    nw_json_member_number(b, "rel_diff", rel);
    us = time_evals(gpu, evals, &error);
    if (us > 0.0)
      batched_us = time_batches(gpu, evals, batch, &error);
    if (us > 0.0 && cpu_evals > 0)
      cpu_us = time_evals(cpu, cpu_evals, &error);
  }
  if (us > 0.0) {
    nw_json_member_number(b, "cuda_us_per_eval", us);
    nw_json_member_number(b, "cuda_evals_per_s", 1e6 / us);
    nw_json_member_number(b, "cuda_effective_gb_per_s", bytes * n / (us * 1e-6) / 1e9);
  }
  if (batched_us > 0.0) {
    nw_json_member_number(b, "batch", batch);
    nw_json_member_number(b, "cuda_us_per_eval_batched", batched_us);
  }
  if (cpu_us > 0.0) {
    nw_json_member_number(b, "cpu_ms_per_eval", cpu_us / 1e3);
    nw_json_member_number(b, "speedup", cpu_us / us);
  }
  const gboolean parity = ok && rel <= PARITY_TOL;
  if (error != NULL)
    nw_json_member_string(b, "error", error->message);
  else if (ok && !parity)
    nw_json_member_string(b, "error", "CUDA and CPU costs differ beyond 1e-4 relative");
  json_builder_end_object(b);
  fprintf(stderr,
          "%dx%dx%d %-7s %-6s %-7s x%u cuda %9.1f us/eval %8.1f GB/s (%d a launch: %.1f us/eval)"
          "   cpu %9.2f ms/eval   rel %.1e%s\n",
          c->nx, c->ny, c->nz, nw_sampler_name(c->sampler),
          nw_affine_precision_name(c->precision), reads, per_thread, us,
          bytes * n / (us * 1e-6) / 1e9, batch, batched_us,
          cpu_us / 1e3, rel, error ? "  ERROR" : (parity ? "" : "  MISMATCH"));
  if (error != NULL)
    fprintf(stderr, "bench_affine: %s\n", error->message);
  nw_affine_cost_free(cpu);
  nw_affine_cost_free(gpu);
  return parity && us > 0.0 && error == NULL;
}

int main(int argc, char **argv)
{
  g_autofree char *sizes_text = g_strdup("512,1024,2048,3072");
  g_autofree char *metric_text = g_strdup("mse");
  g_autofree char *precision_text = g_strdup("u16,single");
  g_autofree char *json_path = NULL;
  int evals = 200, cpu_evals = 2, e2e_repeats = 5;
  gboolean no_brain = FALSE, no_e2e = FALSE;
  GOptionEntry entries[] = {
      {"sizes", 0, 0, G_OPTION_ARG_STRING, &sizes_text, "2D edges (default 512,...,3072)", "N,N"},
      {"evals", 0, 0, G_OPTION_ARG_INT, &evals, "Timed CUDA evaluations (default 200)", "K"},
      {"cpu-evals", 0, 0, G_OPTION_ARG_INT, &cpu_evals, "Timed CPU evaluations (default 2)", "K"},
      {"metric", 0, 0, G_OPTION_ARG_STRING, &metric_text, "mse, ncc or mi (default mse)", "M"},
      {"precision", 0, 0, G_OPTION_ARG_STRING, &precision_text,
       "Storage of the level images, each case at each (default u16,single)", "P,P"},
      {"no-brain", 0, 0, G_OPTION_ARG_NONE, &no_brain, "Skip the 1 mm brain-size 3D cases", NULL},
      {"no-end-to-end", 0, 0, G_OPTION_ARG_NONE, &no_e2e, "Skip the whole registrations", NULL},
      {"e2e-repeats", 0, 0, G_OPTION_ARG_INT, &e2e_repeats,
       "Runs of each whole registration, reported as median and range (default 5)", "N"},
      {"json", 0, 0, G_OPTION_ARG_FILENAME, &json_path, "Write the JSON here", "FILE"},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  g_autoptr(GOptionContext) ctx = g_option_context_new("- benchmark the affine cost");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error) || evals < 1 || cpu_evals < 0 ||
      e2e_repeats < 1) {
    fprintf(stderr, "bench_affine: %s\n",
            error ? error->message : "bad --evals/--cpu-evals/--e2e-repeats");
    return 2;
  }
  NwAffineMetric metric = NW_METRIC_MSE;
  if (strcmp(metric_text, "ncc") == 0)
    metric = NW_METRIC_NCC;
  else if (strcmp(metric_text, "mi") == 0)
    metric = NW_METRIC_MI;
  else if (strcmp(metric_text, "mse") != 0) {
    fprintf(stderr, "bench_affine: unknown metric '%s': expected mse, ncc or mi\n", metric_text);
    return 2;
  }
  char device[256];
  if (!nw_cuda_probe(device, sizeof device)) {
    fprintf(stderr, "bench_affine: no CUDA device (%s)\n", device);
    return 77;
  }
  NwAffinePrecision precisions[3];
  int n_prec = 0;
  g_auto(GStrv) prec_names = g_strsplit(precision_text, ",", -1);
  for (int i = 0; prec_names[i] != NULL && n_prec < 3; i++) {
    if (nw_affine_precision_from_name(prec_names[i], &precisions[n_prec]))
      n_prec++;
    else {
      fprintf(stderr,
              "bench_affine: unknown precision '%s': expected u16, u16-filter or single\n",
              prec_names[i]);
      return 2;
    }
  }
  GArray *cases = g_array_new(FALSE, FALSE, sizeof(Case));
  g_auto(GStrv) sizes = g_strsplit(sizes_text, ",", -1);
  const NwSampler samplers[2] = {NW_SAMPLER_LINEAR, NW_SAMPLER_CUBIC};
  for (int i = 0; sizes[i] != NULL; i++)
    for (int s = 0; s < 2; s++)
      for (int q = 0; q < n_prec; q++) {
        const int e = atoi(sizes[i]);
        if (e < 8) {
          fprintf(stderr, "bench_affine: bad size '%s'\n", sizes[i]);
          return 2;
        }
        const Case c = {e, e, 1, samplers[s], precisions[q]};
        g_array_append_val(cases, c);
      }
  for (int s = 0; s < 2 && !no_brain; s++)
    for (int q = 0; q < n_prec; q++) {
      const Case c = {182, 218, 182, samplers[s], precisions[q]};
      g_array_append_val(cases, c);
    }
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  nw_json_member_string(b, "bench", "affine");
  nw_json_member_string(b, "device", device);
  nw_json_member_string(b, "metric", metric_text);
  nw_json_member_number(b, "evals", evals);
  nw_json_member_number(b, "cpu_evals", cpu_evals);
  json_builder_set_member_name(b, "cases");
  json_builder_begin_array(b);
  int status = 0;
  for (guint i = 0; i < cases->len; i++)
    if (!run_case(b, &g_array_index(cases, Case, i), metric, evals, cpu_evals))
      status = 1;
  json_builder_end_array(b);
  json_builder_set_member_name(b, "end_to_end");
  json_builder_begin_array(b);
  for (int q = 0; q < n_prec && !no_e2e; q++)
    if (!nw_bench_affine_end_to_end(b, bench_image, nw_affine_precision_name(precisions[q]),
                                    e2e_repeats))
      status = 1;
  json_builder_end_array(b);
  json_builder_end_object(b);
  g_array_unref(cases);
  g_autofree char *text = nw_json_to_string(b, TRUE);
  if (json_path != NULL) {
    if (!g_file_set_contents(json_path, text, -1, &error)) {
      fprintf(stderr, "bench_affine: %s\n", error->message);
      return 2;
    }
  } else {
    printf("%s\n", text);
  }
  return status;
}
