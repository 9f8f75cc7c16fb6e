/* bench_fluid.cu — unbiased viscous-fluid benchmark (not a test; issue 14): per-iteration time
 * of the CUDA method at several grids with each force variant, the force kernel alone (GFLOP/s
 * with the flop count of nw_fluid_force_flops_per_voxel, bytes moved, both against the
 * device's FP32 and memory peaks: the roofline), a full 3-level registration of a synthetic
 * 240^3 pair to convergence, and the CPU reference's per-iteration time at one size with one
 * thread and with all (the two speed-ups). JSON on stdout (or --json FILE); a short table on
 * stderr.
 *
 * Before timing, the force variants are validated against the CPU twin (force of the CPU's
 * P, fluid_kernels.h) at --validate-size (default 96) and against each other bit for bit at
 * every timed size: the benchmark exits 1 when one differs (after writing its JSON).
 *
 *   bench_fluid [--sizes 128x128x128,192x128x192,240x240x240] [--iters 20]
 *               [--e2e-size 240] [--cpu-size 128] [--cpu-iters 3] [--validate-size 96]
 *               [--cpu-only [--cpu-e2e-size N]] [--json FILE]
 *
 * Per-iteration time = wall time of ops->step (each synchronises: every trial's energy comes
 * back to the host), after 3 warm-up iterations; an iteration evaluates 1 trial when its
 * first step is accepted, more when δ is halved (the JSON gives the mean δ taken).
 * Bytes moved by the force kernel = the fewest it must move: u, R, Tw, ∇Tw read once (16 + 4 +
 * 4 + 16 B), f written once (16 B): 56 B per voxel. Peaks: FP32 = SMs x 128 lanes x 2 x clock,
 * memory = 2 x memory clock x bus width (the attributes' nominal values).
 *
 * The full registration is reported per level (iterations, seconds, the first step's seconds
 * apart: it enters the level, carrying the map up; the energy at the level's first and last
 * iteration and the last relative change against the tolerance) with the phases the method
 * itself logs (g_debug lines "fluid cuda: ..." of cuda/fluid_cuda.cu: create's and result's
 * parts, each level's entry), caught by a log handler into the JSON's "phases".
 * --cpu-only runs no GPU part (no device needed): the CPU timings and, with --cpu-e2e-size,
 * the full registration on the CPU reference (at a size the CPU finishes). */
#include <cuda_runtime.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_validate.h"
#include "field.h"
#include "fluid_kernels.cuh"
#include "fluid_kernels.h"
#include "fluid_method.h"
#include "json_out.h"
#include "method.h"
#include "nw_cuda.h"

typedef struct {
  int nx, ny, nz;
} Dims;

static size_t voxels(Dims d)
{
  return (size_t)d.nx * d.ny * d.nz;
}

/* A textured ellipsoid with a darker core (test_fluid.c's phantom on any grid). */
static double phantom_at(Dims d, double x, double y, double z)
{
  const double cx = (d.nx - 1) / 2.0, cy = (d.ny - 1) / 2.0, cz = (d.nz - 1) / 2.0;
  const double ax = (x - cx) / (0.32 * d.nx), ay = (y - cy) / (0.29 * d.ny),
               az = (z - cz) / (0.26 * d.nz);
  const double r = sqrt(ax * ax + ay * ay + az * az);
  const double body = 1.0 / (1.0 + exp((r - 1.0) * 8.0));
  const double core = 0.4 / (1.0 + exp((r - 0.45) * 12.0));
  const double tex = 1.0 + 0.3 * sin(16.0 * ax + 6.0 * az) * cos(12.0 * ay);
  return 100.0 * body * tex - 40.0 * core + 10.0;
}

/* moving = phantom, fixed(x) = phantom(x + s(x)) with a smooth s of peak 4% of the grid. */
static void make_pair(Dims d, NwVolume **fixed, NwVolume **moving)
{
  NwVolume *f = nw_volume_new(d.nx, d.ny, d.nz, 1, NULL);
  NwVolume *m = nw_volume_new(d.nx, d.ny, d.nz, 1, NULL);
  const double amp = 0.04 * d.nx;
  for (int k = 0; k < d.nz; k++)
    for (int j = 0; j < d.ny; j++)
      for (int i = 0; i < d.nx; i++) {
        const double x = (double)i / d.nx, y = (double)j / d.ny, z = (double)k / d.nz;
        const double w = sin(G_PI * x) * sin(G_PI * y) * sin(G_PI * z); /* 0 on the border */
        const double sx = amp * w * cos(2.0 * y), sy = amp * w * sin(2.5 * z),
                     sz = 0.7 * amp * w * cos(1.5 * x);
        const size_t e = nw_volume_index(f, i, j, k);
        m->data[e] = (float)phantom_at(d, i, j, k);
        f->data[e] = (float)phantom_at(d, i + sx, j + sy, k + sz);
      }
  *fixed = f;
  *moving = m;
}

/* A figure of a report, NAN when absent. */
static double figure(const NwIterationReport *r, const char *name)
{
  for (int f = 0; f < r->n_figures; f++)
    if (g_strcmp0(r->figure_names[f], name) == 0)
      return r->figures[f];
  return NAN;
}

static NwParams *params_of(const char *const *overrides)
{
  NwParams *p = nw_params_new(nw_fluid_param_specs, NW_FLUID_N_PARAMS);
  for (int o = 0; overrides != NULL && overrides[o] != NULL; o++)
    g_assert_true(nw_params_set_string(p, NULL, overrides[o], NULL));
  return p;
}

static const char *variant_name(int v)
{
  return v == NW_FLUID_FORCE_REUSE ? "reuse" : "recompute";
}

/* ms per iteration of ops on one level (tolerance 0: no early end), after `warmups`
 * iterations; the mean δ taken goes to *mean_step. FALSE on an error. */
static gboolean time_iterations(const NwMethodOps *ops, Dims d, int warmups, int iters, double *ms,
                                double *mean_step)
{
  g_autoptr(NwVolume) fixed = NULL;
  g_autoptr(NwVolume) moving = NULL;
  make_pair(d, &fixed, &moving);
  const NwMethodInputs in = {.fixed = fixed, .moving = moving};
  const char *o[] = {"levels=1", "tolerance=0", "iterations=100000", NULL};
  g_autoptr(NwParams) p = params_of(o);
  g_autoptr(GError) error = NULL;
  void *st = ops->create(&in, p, &error);
  if (st == NULL) {
    fprintf(stderr, "bench_fluid: %s\n", error->message);
    return FALSE;
  }
  NwIterationReport r;
  memset(&r, 0, sizeof r);
  gboolean ok = TRUE;
  for (int w = 0; w < warmups && ok; w++)
    ok = ops->step(st, &r, &error);
  double steps = 0.0;
  const gint64 t0 = g_get_monotonic_time();
  for (int it = 0; it < iters && ok; it++) {
    ok = ops->step(st, &r, &error);
    steps += figure(&r, "step");
  }
  const gint64 t1 = g_get_monotonic_time();
  if (!ok)
    fprintf(stderr, "bench_fluid: %s\n", error->message);
  ops->destroy(st);
  *ms = (t1 - t0) / 1e3 / iters;
  *mean_step = steps / iters;
  return ok;
}

/* The force kernel alone on a smooth u of ~1 voxel: each variant validated (CPU at
 * validate, each other always), then timed over 20 launches with events. */
static gboolean force_kernel(JsonBuilder *b, Dims d, gboolean against_cpu, double peak_gflops,
                             double peak_gbs)
{
  const size_t n = voxels(d);
  const NwGrid g = {d.nx, d.ny, d.nz};
  g_autoptr(NwVolume) R = nw_test_random_volume(d.nx, d.ny, d.nz, 1, 0.1, 1.1, 0, 1);
  g_autoptr(NwVolume) T = nw_test_random_volume(d.nx, d.ny, d.nz, 1, 0.1, 1.1, 0, 2);
  g_autoptr(NwVolume) u = nw_volume_new(d.nx, d.ny, d.nz, 3, NULL);
  for (int k = 0; k < d.nz; k++)
    for (int j = 0; j < d.ny; j++)
      for (int i = 0; i < d.nx; i++) {
        float *p = u->data + 3 * nw_volume_index(u, i, j, k);
        p[0] = (float)sin(0.2 * j + 0.1 * k);
        p[1] = (float)cos(0.15 * i - 0.1 * k);
        p[2] = (float)sin(0.1 * i + 0.2 * j);
      }
  g_autoptr(NwVolume) Tw = nw_volume_new_like(R, 1, NULL);
  g_autoptr(NwVolume) gTw = nw_volume_new_like(R, 3, NULL);
  nw_fluid_deform_grad_cpu(Tw, gTw, T, u);
  const double lambda = 0.1;
  float *dR = nw_test_device_floats(R->data, n), *dTw = nw_test_device_floats(Tw->data, n);
  float4 *dg = (float4 *)nw_test_device_field(gTw), *du = (float4 *)nw_test_device_field(u);
  float4 *df[2] = {(float4 *)nw_test_device_poisoned(n * sizeof(float4)),
                   (float4 *)nw_test_device_poisoned(n * sizeof(float4))};
  gboolean ok = TRUE;
  for (int v = 0; v < 2; v++) {
    NW_TEST_CUDA(nw_fluid_force_cuda(df[v], dR, dTw, dg, du, NULL, (float)lambda, v, g, 0));
    NW_TEST_CUDA(cudaDeviceSynchronize());
  }
  if (against_cpu) {
    g_autoptr(NwVolume) J = nw_volume_new_like(R, 1, NULL);
    g_autoptr(NwVolume) P = nw_volume_new_like(R, 9, NULL);
    g_autoptr(NwVolume) f = nw_volume_new_like(R, 3, NULL);
    nw_fluid_jacobian_cpu(J, P, u);
    nw_fluid_force_cpu(f, R, Tw, gTw, P, NULL, lambda);
    const double fm = nw_field_max_norm(f);
    for (int v = 0; v < 2; v++)
      ok = nw_validate_result(variant_name(v), (const float *)df[v], 4, f->data, 3, 3, n,
                              NwTolerance{1e-5 * fm, 1e-5}) == 0 &&
           ok;
  }
  /* The variants bit for bit (tests/test_cuda_fluid_kernels.cu has the positions of any). */
  float4 *h[2] = {g_new(float4, n), g_new(float4, n)};
  for (int v = 0; v < 2; v++)
    NW_TEST_CUDA(cudaMemcpy(h[v], df[v], n * sizeof(float4), cudaMemcpyDeviceToHost));
  const gboolean same = memcmp(h[0], h[1], n * sizeof(float4)) == 0;
  if (!same)
    fprintf(stderr, "bench_fluid: force variants differ at %dx%dx%d\n", d.nx, d.ny, d.nz);
  ok = ok && same;
  g_free(h[0]);
  g_free(h[1]);
  cudaEvent_t e0, e1;
  NW_TEST_CUDA(cudaEventCreate(&e0));
  NW_TEST_CUDA(cudaEventCreate(&e1));
  for (int v = 0; v < 2; v++) {
    const int reps = 20;
    NW_TEST_CUDA(nw_fluid_force_cuda(df[v], dR, dTw, dg, du, NULL, (float)lambda, v, g, 0));
    NW_TEST_CUDA(cudaEventRecord(e0, 0));
    for (int q = 0; q < reps; q++)
      NW_TEST_CUDA(nw_fluid_force_cuda(df[v], dR, dTw, dg, du, NULL, (float)lambda, v, g, 0));
    NW_TEST_CUDA(cudaEventRecord(e1, 0));
    NW_TEST_CUDA(cudaEventSynchronize(e1));
    float ms = 0.0f;
    NW_TEST_CUDA(cudaEventElapsedTime(&ms, e0, e1));
    const double t = ms / reps * 1e-3, flops = nw_fluid_force_flops_per_voxel(v) * n,
                 bytes = 56.0 * n;
    g_autofree char *grid = g_strdup_printf("%dx%dx%d", d.nx, d.ny, d.nz);
    json_builder_begin_object(b);
    nw_json_member_string(b, "grid", grid);
    nw_json_member_string(b, "variant", variant_name(v));
    nw_json_member_number(b, "ms", t * 1e3);
    nw_json_member_number(b, "flops_per_voxel", nw_fluid_force_flops_per_voxel(v));
    nw_json_member_number(b, "gflops", flops / t / 1e9);
    nw_json_member_number(b, "bytes_moved", bytes);
    nw_json_member_number(b, "gbs", bytes / t / 1e9);
    nw_json_member_number(b, "arithmetic_intensity", flops / bytes);
    nw_json_member_number(b, "fraction_of_fp32_peak", flops / t / 1e9 / peak_gflops);
    nw_json_member_number(b, "fraction_of_memory_peak", bytes / t / 1e9 / peak_gbs);
    json_builder_end_object(b);
    fprintf(
        stderr,
        "force %-9s %4dx%4dx%4d %8.3f ms %8.0f GFLOP/s (%4.1f%% of FP32) %6.0f GB/s (%4.1f%%)\n",
        variant_name(v), d.nx, d.ny, d.nz, t * 1e3, flops / t / 1e9,
        100 * flops / t / 1e9 / peak_gflops, bytes / t / 1e9, 100 * bytes / t / 1e9 / peak_gbs);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  void *bufs[] = {dR, dTw, dg, du, df[0], df[1]};
  for (gsize q = 0; q < G_N_ELEMENTS(bufs); q++)
    cudaFree(bufs[q]);
  return ok;
}

/* The method's own account of its phases (g_debug "fluid cuda: ..."), kept in order. */
static void catch_phase(const gchar *domain, GLogLevelFlags level, const gchar *message,
                        gpointer data)
{
  (void)domain;
  (void)level;
  if (g_str_has_prefix(message, "fluid cuda: "))
    g_ptr_array_add((GPtrArray *)data, g_strdup(message + strlen("fluid cuda: ")));
}

/* One level of a full run: its iterations, time, and energies. */
typedef struct {
  int iterations;
  double seconds, first_step_s, energy_first, energy_last, last_rel_change;
  GArray *energy; /* double, per iteration */
} LevelLog;

static void level_json(JsonBuilder *b, const LevelLog *lv, int l)
{
  json_builder_begin_object(b);
  nw_json_member_number(b, "level", l);
  nw_json_member_number(b, "iterations", lv->iterations);
  nw_json_member_number(b, "seconds", lv->seconds);
  nw_json_member_number(b, "first_step_s", lv->first_step_s);
  nw_json_member_number(b, "energy_first", lv->energy_first);
  nw_json_member_number(b, "energy_last", lv->energy_last);
  nw_json_member_number(b, "last_relative_change", lv->last_rel_change);
  json_builder_set_member_name(b, "energy");
  json_builder_begin_array(b);
  for (guint q = 0; q < lv->energy->len; q++)
    json_builder_add_double_value(b, g_array_index(lv->energy, double, q));
  json_builder_end_array(b);
  json_builder_end_object(b);
}

#define MAX_LEVELS 8

/* The whole registration (defaults: 3 levels, up to 100 iterations each, tolerance 1e-5) of
 * a synthetic pair to convergence with ops (and, on CUDA, the given force variant): create,
 * steps per level and result timed. */
static gboolean full_run(JsonBuilder *b, const NwMethodOps *ops, Dims d, int variant)
{
  g_autoptr(NwVolume) fixed = NULL;
  g_autoptr(NwVolume) moving = NULL;
  make_pair(d, &fixed, &moving);
  const NwMethodInputs in = {.fixed = fixed, .moving = moving};
  g_autoptr(NwParams) p = params_of(NULL);
  const gboolean cuda = ops->device == NW_DEVICE_CUDA;
  const char *label = cuda ? variant_name(variant) : "cpu";
  if (cuda)
    g_setenv("NW_FLUID_FORCE", variant_name(variant), TRUE);
  g_autoptr(GPtrArray) phases = g_ptr_array_new_with_free_func(g_free);
  const guint handler = g_log_set_handler(NULL, G_LOG_LEVEL_DEBUG, catch_phase, phases);
  g_autoptr(GError) error = NULL;
  LevelLog lv[MAX_LEVELS];
  memset(lv, 0, sizeof lv);
  for (int l = 0; l < MAX_LEVELS; l++)
    lv[l].energy = g_array_new(FALSE, FALSE, sizeof(double));
  const gint64 t0 = g_get_monotonic_time();
  void *st = ops->create(&in, p, &error);
  const gint64 t1 = g_get_monotonic_time();
  NwIterationReport r;
  memset(&r, 0, sizeof r);
  gboolean ok = st != NULL;
  double prev_e = NAN;
  while (ok && !r.finished && r.iteration < 10000) {
    const gint64 s0 = g_get_monotonic_time();
    ok = ops->step(st, &r, &error);
    const double dt = (g_get_monotonic_time() - s0) / 1e6;
    if (!ok || r.level < 0 || r.level >= MAX_LEVELS)
      break;
    LevelLog *L = &lv[r.level];
    const double e = figure(&r, "energy");
    if (L->iterations == 0) {
      L->first_step_s = dt;
      L->energy_first = e;
    } else {
      L->last_rel_change = fabs(prev_e - e) / fabs(prev_e);
    }
    L->iterations++;
    L->seconds += dt;
    L->energy_last = e;
    g_array_append_val(L->energy, e);
    prev_e = e;
  }
  const gint64 t2 = g_get_monotonic_time();
  NwMethodResult *res = ok ? ops->result(st, &error) : NULL;
  const gint64 t3 = g_get_monotonic_time();
  ok = ok && res != NULL;
  if (!ok)
    fprintf(stderr, "bench_fluid: full run: %s\n", error ? error->message : "failed");
  if (st != NULL)
    ops->destroy(st);
  if (res != NULL)
    nw_method_result_free(res);
  g_log_remove_handler(NULL, handler);
  g_autofree char *grid = g_strdup_printf("%dx%dx%d", d.nx, d.ny, d.nz);
  json_builder_begin_object(b);
  nw_json_member_string(b, "grid", grid);
  nw_json_member_string(b, "variant", label);
  nw_json_member_number(b, "create_s", (t1 - t0) / 1e6);
  nw_json_member_number(b, "iterate_s", (t2 - t1) / 1e6);
  nw_json_member_number(b, "result_s", (t3 - t2) / 1e6);
  nw_json_member_number(b, "total_s", (t3 - t0) / 1e6);
  nw_json_member_number(b, "iterations", r.iteration);
  nw_json_member_number(b, "final_energy", figure(&r, "energy"));
  nw_json_member_number(b, "min_jac", figure(&r, "min_jac"));
  nw_json_member_number(b, "regrids", figure(&r, "regrids"));
  nw_json_member_number(b, "tolerance", nw_params_get(p, "tolerance"));
  json_builder_set_member_name(b, "levels");
  json_builder_begin_array(b);
  for (int l = 0; l < MAX_LEVELS && lv[l].iterations > 0; l++)
    level_json(b, &lv[l], l);
  json_builder_end_array(b);
  json_builder_set_member_name(b, "phases");
  json_builder_begin_array(b);
  for (guint q = 0; q < phases->len; q++)
    json_builder_add_string_value(b, (const char *)g_ptr_array_index(phases, q));
  json_builder_end_array(b);
  json_builder_end_object(b);
  fprintf(stderr,
          "full %-9s %dx%dx%d: %d iterations, create %.3f s, iterate %.3f s, result %.3f s, "
          "total %.3f s\n",
          label, d.nx, d.ny, d.nz, r.iteration, (t1 - t0) / 1e6, (t2 - t1) / 1e6, (t3 - t2) / 1e6,
          (t3 - t0) / 1e6);
  for (int l = 0; l < MAX_LEVELS && lv[l].iterations > 0; l++)
    fprintf(stderr,
            "  level %d: %3d iterations %.3f s (first step %.3f s: entering), energy %.6g -> "
            "%.6g, last change %.2g (tolerance %g)\n",
            l, lv[l].iterations, lv[l].seconds, lv[l].first_step_s, lv[l].energy_first,
            lv[l].energy_last, lv[l].last_rel_change, nw_params_get(p, "tolerance"));
  for (guint q = 0; q < phases->len; q++)
    fprintf(stderr, "  %s\n", (const char *)g_ptr_array_index(phases, q));
  for (int l = 0; l < MAX_LEVELS; l++)
    g_array_unref(lv[l].energy);
  return ok;
}

/* The CPU reference's ms per iteration at one size with one thread and with `threads`
 * (OpenMP), and the speed-ups of the best CUDA time at that size (gpu_ms 0: none). */
static gboolean cpu_timing(JsonBuilder *b, Dims d, int iters, int threads, double gpu_ms)
{
  const int counts[2] = {1, threads};
  double ms[2] = {0, 0}, step = 0;
  gboolean ok = TRUE;
  for (int c = 0; c < 2; c++) {
    omp_set_num_threads(counts[c]);
    ok = time_iterations(&nw_fluid_cpu_ops, d, 1, iters, &ms[c], &step) && ok;
  }
  omp_set_num_threads(threads);
  json_builder_set_member_name(b, "cpu");
  g_autofree char *grid = g_strdup_printf("%dx%dx%d", d.nx, d.ny, d.nz);
  json_builder_begin_object(b);
  nw_json_member_string(b, "grid", grid);
  nw_json_member_number(b, "iterations_timed", iters);
  nw_json_member_number(b, "threads_all", threads);
  nw_json_member_number(b, "ms_per_iteration_1_thread", ms[0]);
  nw_json_member_number(b, "ms_per_iteration_all_threads", ms[1]);
  nw_json_member_number(b, "thread_speedup", ms[0] / ms[1]);
  nw_json_member_string(b, "omp_num_threads",
                        g_getenv("OMP_NUM_THREADS") ? g_getenv("OMP_NUM_THREADS") : "unset");
  if (gpu_ms > 0.0) {
    nw_json_member_number(b, "best_cuda_ms_per_iteration", gpu_ms);
    nw_json_member_number(b, "speedup_vs_1_thread", ms[0] / gpu_ms);
    nw_json_member_number(b, "speedup_vs_all_threads", ms[1] / gpu_ms);
  }
  json_builder_end_object(b);
  fprintf(stderr, "cpu %dx%dx%d: %.1f ms per iteration on 1 thread, %.1f ms on %d threads (%.1fx)",
          d.nx, d.ny, d.nz, ms[0], ms[1], threads, ms[0] / ms[1]);
  if (gpu_ms > 0.0)
    fprintf(stderr, "; CUDA %.3f ms: speed-up %.0fx over 1 thread, %.0fx over %d threads", gpu_ms,
            ms[0] / gpu_ms, ms[1] / gpu_ms, threads);
  fprintf(stderr, "\n");
  return ok;
}

static gboolean parse_dims(const char *s, Dims *d)
{
  return sscanf(s, "%dx%dx%d", &d->nx, &d->ny, &d->nz) == 3 && d->nx > 2 && d->ny > 2 && d->nz > 2;
}

/* The CPU parts (--cpu-only, or after the GPU's): timings and an optional full run. */
static int cpu_parts(JsonBuilder *b, int cpu_size, int cpu_iters, int cpu_e2e, int threads,
                     double gpu_ms)
{
  int status = 0;
  if (cpu_size > 2) {
    const Dims d = {cpu_size, cpu_size, cpu_size};
    if (!cpu_timing(b, d, cpu_iters, threads, gpu_ms))
      status = 1;
  }
  if (cpu_e2e > 2) {
    json_builder_set_member_name(b, "cpu_full_registration");
    json_builder_begin_array(b);
    const Dims d = {cpu_e2e, cpu_e2e, cpu_e2e};
    if (!full_run(b, &nw_fluid_cpu_ops, d, 0))
      status = 1;
    json_builder_end_array(b);
  }
  return status;
}

static int write_json(JsonBuilder *b, const char *json_path)
{
  g_autofree char *text = nw_json_to_string(b, TRUE);
  g_autoptr(GError) error = NULL;
  if (json_path != NULL) {
    if (!g_file_set_contents(json_path, text, -1, &error)) {
      fprintf(stderr, "bench_fluid: %s\n", error->message);
      return 2;
    }
  } else {
    printf("%s\n", text);
  }
  return 0;
}

int main(int argc, char **argv)
{
  g_autofree char *sizes_text = g_strdup("128x128x128,192x128x192,240x240x240");
  g_autofree char *json_path = NULL;
  int iters = 20, e2e = 240, cpu_size = 128, cpu_iters = 3, validate = 96, cpu_e2e = 0;
  gboolean cpu_only = FALSE;
  GOptionEntry entries[] = {
      {"sizes", 0, 0, G_OPTION_ARG_STRING, &sizes_text, "Grids NXxNYxNZ,...", "LIST"},
      {"iters", 0, 0, G_OPTION_ARG_INT, &iters, "Timed iterations per grid (20)", "K"},
      {"e2e-size", 0, 0, G_OPTION_ARG_INT, &e2e, "Cube edge of the full run (240; 0: none)", "N"},
      {"cpu-size", 0, 0, G_OPTION_ARG_INT, &cpu_size, "Cube edge of the CPU timing (128; 0: none)",
       "N"},
      {"cpu-iters", 0, 0, G_OPTION_ARG_INT, &cpu_iters, "CPU iterations timed (3)", "K"},
      {"validate-size", 0, 0, G_OPTION_ARG_INT, &validate, "Cube edge of the CPU check (96)", "N"},
      {"cpu-only", 0, 0, G_OPTION_ARG_NONE, &cpu_only, "No GPU part (no device needed)", NULL},
      {"cpu-e2e-size", 0, 0, G_OPTION_ARG_INT, &cpu_e2e,
       "Cube edge of a full run on the CPU (0: none)", "N"},
      {"json", 0, 0, G_OPTION_ARG_FILENAME, &json_path, "Write the JSON here", "FILE"},
      {NULL, 0, 0, G_OPTION_ARG_NONE, NULL, NULL, NULL}};
  g_autoptr(GOptionContext) ctx = g_option_context_new("- benchmark the fluid method");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error) || iters < 1 || cpu_iters < 1) {
    fprintf(stderr, "bench_fluid: %s\n", error ? error->message : "bad --iters/--cpu-iters");
    return 2;
  }
  /* "All threads": OpenMP's count at the start (OMP_NUM_THREADS when set, else the cores). */
  const int threads = omp_get_max_threads();
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  nw_json_member_string(b, "bench", "fluid");
  if (cpu_only) {
    nw_json_member_string(b, "device", "none (--cpu-only)");
    const int status = cpu_parts(b, cpu_size, cpu_iters, cpu_e2e, threads, 0.0);
    json_builder_end_object(b);
    const int w = write_json(b, json_path);
    return w != 0 ? w : status;
  }
  char device[256];
  if (!nw_cuda_probe(device, sizeof device)) {
    fprintf(stderr, "bench_fluid: no CUDA device (%s)\n", device);
    return 77;
  }
  int dev = 0, sms = 0, clock_khz = 0, mem_khz = 0, bus_bits = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev);
  cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, dev);
  cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev);
  const double peak_gflops = sms * 128.0 * 2.0 * clock_khz * 1e3 / 1e9;
  const double peak_gbs = 2.0 * mem_khz * 1e3 * bus_bits / 8.0 / 1e9;
  nw_json_member_string(b, "device", device);
  nw_json_member_number(b, "peak_fp32_gflops", peak_gflops);
  nw_json_member_number(b, "peak_memory_gbs", peak_gbs);
  nw_json_member_string(b, "flops_counted",
                        "nw_fluid_force_flops_per_voxel: counted from the kernels' code, FMA = 2, "
                        "log1pf and a division = 1 each");
  int status = 0;
  g_auto(GStrv) sizes = g_strsplit(sizes_text, ",", -1);

  json_builder_set_member_name(b, "force_kernel");
  json_builder_begin_array(b);
  Dims vd = {validate, validate, validate};
  if (validate > 2 && !force_kernel(b, vd, TRUE, peak_gflops, peak_gbs))
    status = 1;
  for (int s = 0; sizes[s] != NULL; s++) {
    Dims d;
    if (!parse_dims(sizes[s], &d)) {
      fprintf(stderr, "bench_fluid: bad grid '%s' (NXxNYxNZ)\n", sizes[s]);
      return 2;
    }
    if (!force_kernel(b, d, FALSE, peak_gflops, peak_gbs))
      status = 1;
  }
  json_builder_end_array(b);

  json_builder_set_member_name(b, "iteration");
  json_builder_begin_array(b);
  double gpu_ms_at_cpu_size = 0.0;
  for (int s = 0; sizes[s] != NULL; s++) {
    Dims d;
    parse_dims(sizes[s], &d);
    for (int v = 0; v < 2; v++) {
      g_setenv("NW_FLUID_FORCE", variant_name(v), TRUE);
      double ms = 0, step = 0;
      if (!time_iterations(&nw_fluid_cuda_ops, d, 3, iters, &ms, &step))
        status = 1;
      if (d.nx == cpu_size && d.ny == cpu_size && d.nz == cpu_size &&
          (gpu_ms_at_cpu_size == 0.0 || ms < gpu_ms_at_cpu_size))
        gpu_ms_at_cpu_size = ms;
      json_builder_begin_object(b);
      nw_json_member_string(b, "grid", sizes[s]);
      nw_json_member_string(b, "variant", variant_name(v));
      nw_json_member_number(b, "ms_per_iteration", ms);
      nw_json_member_number(b, "mean_step_voxel", step);
      json_builder_end_object(b);
      fprintf(stderr, "iteration %-9s %-12s %8.3f ms (mean step %.3f voxel)\n", variant_name(v),
              sizes[s], ms, step);
    }
  }
  json_builder_end_array(b);
  g_unsetenv("NW_FLUID_FORCE");

  if (e2e > 2) {
    json_builder_set_member_name(b, "full_registration");
    json_builder_begin_array(b);
    const Dims d = {e2e, e2e, e2e};
    for (int v = 0; v < 2; v++)
      if (!full_run(b, &nw_fluid_cuda_ops, d, v))
        status = 1;
    json_builder_end_array(b);
    g_unsetenv("NW_FLUID_FORCE");
  }
  if (cpu_parts(b, cpu_size, cpu_iters, cpu_e2e, threads, gpu_ms_at_cpu_size) != 0)
    status = 1;
  json_builder_end_object(b);
  const int w = write_json(b, json_path);
  return w != 0 ? w : status;
}
