/* bench_nlm.c — benchmark of nlm-surface's fused all-pairs patch distance + exact top-m on the
 * GPU (cuda/nlm_topm_kernel.cu), not a test: the kernel's time for bands of N = 17.5k, 50k,
 * 100k and 175k elements (P = 125, m = 96 by default), the achieved rate counted as 2 N^2 P
 * flops (the GEMM-equivalent count: the kernel itself spends 3 FP32 instructions per value pair,
 * subtract, multiply, add, to equal the CPU bit for bit), and the CPU reference's time on one
 * core and on all. JSON on stdout (or --json FILE); a short table on stderr. Main thread.
 *
 * Patches: the band |phi| <= 2 mm of a sphere's signed distance plus uniform noise of
 * +-0.4 mm, on a 1 mm grid whose sphere is just large enough, its first N band elements (in
 * band order, as the method sees them): real band patches, with their spread of distances.
 *
 * Validation: for every N, `--check-rows` sample rows (blocks of 32 consecutive rows spread
 * over the band, both ends included) get their exact top-m from the CPU reference
 * (nw_nlm_pair_distances_cpu + nw_nlm_select_top_m_cpu) and must equal the GPU's rows in
 * indices, order and distance bits; the benchmark exits 1 after writing its JSON when one
 * does not.
 * CPU time: the CPU reference on the first `--cpu-rows` rows, once with one OpenMP thread and
 * once with all (omp_get_max_threads at the start: OMP_NUM_THREADS, else every core), timed
 * and extrapolated linearly to all N rows (the reference is O(N) per row); the JSON says so
 * ("cpu_extrapolated_from_rows"), and the speed-ups over the GPU kernel.
 * --dump-patches DIR: each size's N x P float32 patches (nlm_N.f32, row-major, little-endian),
 * the sample rows' exact top-m (nlm_N_topm.i32, K x m int32; nlm_N_topm_d.f32, their
 * distances) and a header nlm_N.json naming them, written last (each file atomically), for
 * the PyTorch peer (bench/peer_nlm_torch.py) to time and judge on the same data.
 * --cpu-only: no GPU (CPU timing and the dump only): also runs where there is no device.
 * --kernel exact|tc|both (default both): the exact FP32 kernel, the tensor-core variant
 * (nlm_topm_tc_kernel.cu: rows sorted by patch mean and tiles pruned by a lower bound, FP16
 * filter with a rigorous bound, exact recheck), or both; with both, every row of the tc
 * output must equal the exact kernel's (indices, order, distance bits) and its sample rows
 * the CPU's, else the benchmark exits 1. The JSON's top-level cuda_ms_* are the exact
 * kernel's; the object "tc" holds its time, equality counts, mean candidates a row, the
 * fraction of tiles its filter visited and the blocks it left to the exact fallback.
 * --cpu-pruned: also the pruned CPU reference (the method's) on all N rows with all threads: its
 * time, the fraction of tiles it visited, its sample rows against the brute force's (exit 1 on
 * a difference).
 *
 *   bench_nlm [--sizes 17500,50000,100000,175000] [--m 96] [--patch 5] [--repeats 3]
 *             [--check-rows 64] [--cpu-rows 256] [--dump-patches DIR] [--cpu-only]
 *             [--cpu-pruned] [--kernel exact|tc|both] [--json FILE] */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "json_out.h"
#include "nlm_kernels.h"
#include "nw_cuda.h"
#include "nw_nlm_cuda.h"

/* Sample rows come in blocks of this many consecutive rows, so that the CPU reference computes
 * each block with all its threads (it parallelises over the rows of a block). */
#define SAMPLE_BLOCK 32

typedef struct {
  int m, patch, repeats, check_rows, cpu_rows, threads_all;
  const char *dump_dir;
  gboolean cpu_only, run_exact; /* --kernel */
  gboolean cpu_pruned;          /* --cpu-pruned */
  NwNlmKernel tc[1];            /* the tc kernel when --kernel asks for it */
  int n_tc;
} BenchOptions;

/* One band size: its patches and the CPU reference's exact top-m of the sample rows. */
typedef struct {
  int n, p, m;
  float *x;  /* N x P */
  int k;     /* sample rows */
  int *rows; /* k row indices, increasing */
  int *nbr;  /* k x m */
  float *nd; /* k x m */
} BenchCase;

static void bench_case_clear(BenchCase *c)
{
  g_free(c->x);
  g_free(c->rows);
  g_free(c->nbr);
  g_free(c->nd);
}

/* The first n band rows (patch^3 values each) of a noisy sphere whose band holds at least n. */
static float *band_patches(int n, int patch)
{
  /* The band of half-width 2 mm holds about 5 layers: 4 pi r^2 5 voxels. */
  double r = sqrt(n / (4.0 * G_PI * 5.0)) + 1.0;
  for (;;) {
    const int grid = (int)ceil(2.0 * r) + 12;
    g_autoptr(NwVolume) phi = nw_volume_new(grid, grid, grid, 1, NULL);
    GRand *g = g_rand_new_with_seed(42);
    const double c = (grid - 1) / 2.0 + 0.23;
    for (int k = 0; k < grid; k++)
      for (int j = 0; j < grid; j++)
        for (int i = 0; i < grid; i++)
          phi->data[nw_volume_index(phi, i, j, k)] =
              (float)(sqrt((i - c) * (i - c) + (j - c) * (j - c) + (k - c) * (k - c)) - r +
                      g_rand_double_range(g, -0.4, 0.4));
    g_rand_free(g);
    g_autofree guint32 *band = g_new(guint32, nw_volume_n_voxels(phi));
    const int have = nw_nlm_band_cpu(band, phi, 2.0f);
    if (have >= n) {
      float *x = g_new(float, (size_t)n *patch *patch *patch);
      nw_nlm_patches_cpu(x, phi, band, n, patch);
      return x;
    }
    r *= 1.1;
  }
}

/* c->rows: k rows in blocks of SAMPLE_BLOCK spread evenly from row 0 to row n - 1 (blocks
 * never overlap: k <= n), and their exact top-m from the CPU reference. */
static void exact_sample(BenchCase *c, int want)
{
  const int n = c->n, m = c->m, k = MIN(want, n);
  const int bl = MIN(SAMPLE_BLOCK, MAX(k, 1)), nb = (k + bl - 1) / bl;
  c->k = k > 0 ? nb * bl : 0;
  c->rows = g_new(int, MAX(c->k, 1));
  c->nbr = g_new(int, (size_t)MAX(c->k, 1) * m);
  c->nd = g_new(float, (size_t)MAX(c->k, 1) * m);
  if (k == 0)
    return;
  /* The reference selects into rows r0.. of an N x m array: one such array (what the method
   * itself holds), the sample gathered from it. */
  g_autofree float *dist = g_new(float, (size_t)bl *n), *all_nd = g_new(float, (size_t)n *m);
  g_autofree int *all_nbr = g_new(int, (size_t)n *m);
  for (int b = 0; b < nb; b++) {
    const int r0 = nb > 1 ? (int)((gint64)(n - bl) * b / (nb - 1)) : 0;
    nw_nlm_pair_distances_cpu(dist, c->x, n, c->p, r0, bl);
    nw_nlm_select_top_m_cpu(all_nbr, all_nd, dist, n, r0, bl, m);
    for (int r = 0; r < bl; r++) {
      const int s = b * bl + r;
      c->rows[s] = r0 + r;
      memcpy(c->nbr + (size_t)s * m, all_nbr + (size_t)(r0 + r) * m, m * sizeof(int));
      memcpy(c->nd + (size_t)s * m, all_nd + (size_t)(r0 + r) * m, m * sizeof(float));
    }
  }
}

static int omp_threads(void)
{
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

/* Seconds the CPU reference takes for rows [0, rows) on `threads` OpenMP threads. */
static double cpu_seconds(const BenchCase *c, int rows, int threads)
{
#ifdef _OPENMP
  const int before = omp_get_max_threads();
  omp_set_num_threads(threads);
#else
  (void)threads;
#endif
  g_autofree float *d = g_new0(float, (size_t)rows * c->n),
                   *nd = g_new0(float, (size_t)rows * c->m);
  g_autofree int *nbr = g_new0(int, (size_t)rows * c->m);
  const gint64 t0 = g_get_monotonic_time();
  nw_nlm_pair_distances_cpu(d, c->x, c->n, c->p, 0, rows);
  nw_nlm_select_top_m_cpu(nbr, nd, d, c->n, 0, rows, c->m); /* rows 0.. of nbr / nd */
  const double s = (g_get_monotonic_time() - t0) / 1e6;
#ifdef _OPENMP
  omp_set_num_threads(before);
#endif
  return s;
}

/* One file of the dump, atomically (g_file_set_contents writes a temporary and renames). */
static gboolean dump_file(const char *dir, const char *name, const void *data, size_t bytes,
                          GError **error)
{
  g_autofree char *path = g_build_filename(dir, name, NULL);
  return g_file_set_contents(path, data, (gssize)bytes, error);
}

/* The case's patches, sample rows and their exact top-m for bench/peer_nlm_torch.py; the
 * header last, so that a header means its files are complete. */
static gboolean dump_case(const char *dir, const BenchCase *c, int patch, GError **error)
{
  if (g_mkdir_with_parents(dir, 0755) != 0) {
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "%s: %s", dir,
                g_strerror(errno));
    return FALSE;
  }
  g_autofree char *fx = g_strdup_printf("nlm_%d.f32", c->n);
  g_autofree char *fi = g_strdup_printf("nlm_%d_topm.i32", c->n);
  g_autofree char *fd = g_strdup_printf("nlm_%d_topm_d.f32", c->n);
  g_autofree char *fh = g_strdup_printf("nlm_%d.json", c->n);
  if (!dump_file(dir, fx, c->x, (size_t)c->n * c->p * sizeof(float), error) ||
      !dump_file(dir, fi, c->nbr, (size_t)c->k * c->m * sizeof(int), error) ||
      !dump_file(dir, fd, c->nd, (size_t)c->k * c->m * sizeof(float), error))
    return FALSE;
  g_autoptr(JsonBuilder) jb = json_builder_new();
  json_builder_begin_object(jb);
  nw_json_member_number(jb, "n", c->n);
  nw_json_member_number(jb, "p", c->p);
  nw_json_member_number(jb, "m", c->m);
  nw_json_member_number(jb, "patch", patch);
  nw_json_member_string(jb, "patches", fx);
  nw_json_member_string(jb, "layout", "N x P float32, row-major, little-endian");
  nw_json_member_string(jb, "topm", fi);
  nw_json_member_string(jb, "topm_distances", fd);
  nw_json_member_string(jb, "topm_meaning",
                        "exact top-m of the sample rows by the CPU reference: K x m int32 "
                        "indices ascending by (distance, index), self excluded");
  json_builder_set_member_name(jb, "sample_rows");
  json_builder_begin_array(jb);
  for (int s = 0; s < c->k; s++)
    json_builder_add_int_value(jb, c->rows[s]);
  json_builder_end_array(jb);
  json_builder_end_object(jb);
  g_autofree char *text = nw_json_to_string(jb, TRUE);
  return dump_file(dir, fh, text, strlen(text), error);
}

/* The sample rows of the GPU's last run against the CPU's: rows identical in indices, order
 * and distance bits. */
static int gpu_rows_matching(NwNlmTopmBench *b, const BenchCase *c, GError **error)
{
  g_autofree int *nbr = g_new(int, c->m);
  g_autofree float *nd = g_new(float, c->m);
  int matched = 0;
  for (int s = 0; s < c->k; s++) {
    if (!nw_nlm_topm_bench_download(b, nbr, nd, c->rows[s], 1, error))
      return -1;
    matched += memcmp(nbr, c->nbr + (size_t)s * c->m, c->m * sizeof(int)) == 0 &&
               memcmp(nd, c->nd + (size_t)s * c->m, c->m * sizeof(float)) == 0;
  }
  return matched;
}

/* Warm-up, then o->repeats timed runs of one kernel: best and mean ms. */
static gboolean time_kernel(NwNlmTopmBench *b, NwNlmKernel k, int repeats, double *best,
                            double *mean, GError **error)
{
  double ms = 0.0, sum = 0.0;
  *best = INFINITY;
  if (!nw_nlm_topm_bench_run(b, k, &ms, error))
    return FALSE;
  for (int r = 0; r < repeats; r++) {
    if (!nw_nlm_topm_bench_run(b, k, &ms, error))
      return FALSE;
    *best = fmin(*best, ms);
    sum += ms;
  }
  *mean = sum / repeats;
  return TRUE;
}

/* The exact kernel: timed, the sample rows checked against the CPU; its whole output into
 * nbr / nd (N x m) for the tc kernel's check. */
static gboolean gpu_exact(JsonBuilder *jb, NwNlmTopmBench *b, const BenchCase *c,
                          const BenchOptions *o, double *best, int *nbr, float *nd, GError **error)
{
  double mean = 0.0;
  if (!time_kernel(b, NW_NLM_KERNEL_EXACT, o->repeats, best, &mean, error))
    return FALSE;
  const int matched = gpu_rows_matching(b, c, error);
  if (matched < 0 || !nw_nlm_topm_bench_download(b, nbr, nd, 0, c->n, error))
    return FALSE;
  const double flops = 2.0 * (double)c->n * c->n * c->p;
  nw_json_member_number(jb, "cuda_ms_best", *best);
  nw_json_member_number(jb, "cuda_ms_mean", mean);
  nw_json_member_number(jb, "tflops_best", flops / (*best * 1e-3) / 1e12);
  nw_json_member_number(jb, "gemm_equivalent_flops", flops);
  nw_json_member_number(jb, "checked_rows", c->k);
  nw_json_member_number(jb, "identical_rows", matched);
  fprintf(stderr,
          "N %7d  P %d  m %d   %9.2f ms (best of %d)  %6.2f TFLOP/s  rows identical to the CPU: "
          "%d/%d\n",
          c->n, c->p, c->m, *best, o->repeats, flops / (*best * 1e-3) / 1e12, matched, c->k);
  if (matched != c->k) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
                "GPU rows differ from the CPU reference's (%d of %d identical)", matched, c->k);
    return FALSE;
  }
  return TRUE;
}

/* Rows of (nbr, nd) and (tnbr, tnd), N x m, identical in indices, order and distance bits. */
static int identical_rows(const int *nbr, const float *nd, const int *tnbr, const float *tnd, int n,
                          int m)
{
  int same = 0;
  for (int j = 0; j < n; j++)
    same += memcmp(nbr + (size_t)j * m, tnbr + (size_t)j * m, m * sizeof(int)) == 0 &&
            memcmp(nd + (size_t)j * m, tnd + (size_t)j * m, m * sizeof(float)) == 0;
  return same;
}

/* The tc kernel k: timed, the sample rows checked against the CPU, and (after the exact
 * kernel, exact_ms > 0) every row against the exact kernel's output nbr / nd. An object named
 * after k ("tc") in jb. */
static gboolean gpu_tc(JsonBuilder *jb, NwNlmTopmBench *b, NwNlmKernel k, const BenchCase *c,
                       const BenchOptions *o, double exact_ms, const int *nbr, const float *nd,
                       GError **error)
{
  double best = 0.0, mean = 0.0;
  NwNlmTcStats st = {0};
  const char *name = nw_nlm_kernel_name(k);
  if (!time_kernel(b, k, o->repeats, &best, &mean, error) ||
      !nw_nlm_topm_bench_tc_stats(b, &st, error))
    return FALSE;
  const int matched = gpu_rows_matching(b, c, error);
  if (matched < 0)
    return FALSE;
  int same = -1;
  if (exact_ms > 0.0) {
    g_autofree int *tnbr = g_new(int, (size_t)c->n * c->m);
    g_autofree float *tnd = g_new(float, (size_t)c->n * c->m);
    if (!nw_nlm_topm_bench_download(b, tnbr, tnd, 0, c->n, error))
      return FALSE;
    same = identical_rows(nbr, nd, tnbr, tnd, c->n, c->m);
  }
  const double flops = 2.0 * (double)c->n * c->n * c->p;
  json_builder_set_member_name(jb, name);
  json_builder_begin_object(jb);
  nw_json_member_number(jb, "cuda_ms_best", best);
  nw_json_member_number(jb, "cuda_ms_mean", mean);
  nw_json_member_number(jb, "tflops_equivalent_best", flops / (best * 1e-3) / 1e12);
  nw_json_member_number(jb, "identical_rows_to_cpu", matched);
  nw_json_member_number(jb, "checked_rows", c->k);
  if (same >= 0) {
    nw_json_member_number(jb, "identical_rows_to_exact_kernel", same);
    nw_json_member_number(jb, "rows_compared_to_exact_kernel", c->n);
    nw_json_member_number(jb, "speedup_over_exact_kernel", exact_ms / best);
  }
  nw_json_member_number(jb, "mean_candidates_per_row", st.mean_candidates);
  nw_json_member_number(jb, "visited_tile_fraction", st.visited_fraction);
  nw_json_member_number(jb, "fallback_blocks", st.fallback_blocks);
  nw_json_member_number(jb, "blocks", st.blocks);
  json_builder_set_member_name(jb, "out_of_fp16_range");
  json_builder_add_boolean_value(jb, st.out_of_range);
  json_builder_end_object(jb);
  fprintf(stderr,
          "  %-6s %9.2f ms (best of %d)  %6.2f TFLOP/s equivalent  rows identical to the CPU: "
          "%d/%d, to the exact kernel: %d/%d  (%.1f %% of the tiles visited, %.1f candidates a "
          "row, %d of %d blocks by the exact fallback)\n",
          name, best, o->repeats, flops / (best * 1e-3) / 1e12, matched, c->k, same, c->n,
          100.0 * st.visited_fraction, st.mean_candidates, st.fallback_blocks, st.blocks);
  if (matched != c->k || (same >= 0 && same != c->n)) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
                "the %s kernel's rows differ (%d of %d sample rows identical to the CPU, %d of %d "
                "rows to the exact kernel)",
                name, matched, c->k, same, c->n);
    return FALSE;
  }
  return TRUE;
}

/* The GPU kernels o->kernels asks for. *best_ms: the exact kernel's best time (else the tc's),
 * for the CPU speed-ups. FALSE on a CUDA error or a row that differs. */
static gboolean gpu_case(JsonBuilder *jb, const BenchCase *c, const BenchOptions *o,
                         double *best_ms, GError **error)
{
  NwNlmTopmBench *b = nw_nlm_topm_bench_new(c->x, c->n, c->p, c->m, error);
  if (b == NULL)
    return FALSE;
  g_autofree int *nbr = g_new(int, (size_t)c->n * c->m);
  g_autofree float *nd = g_new(float, (size_t)c->n * c->m);
  double exact_ms = 0.0;
  gboolean ok = !o->run_exact || gpu_exact(jb, b, c, o, &exact_ms, nbr, nd, error);
  for (int i = 0; ok && i < o->n_tc; i++)
    ok = gpu_tc(jb, b, o->tc[i], c, o, exact_ms, nbr, nd, error);
  nw_nlm_topm_bench_free(b);
  *best_ms = exact_ms;
  return ok;
}

/* The CPU reference on one thread and on all, extrapolated to all rows, and the speed-ups over
 * the GPU's best time (when there is one). */
static void cpu_case(JsonBuilder *jb, const BenchCase *c, const BenchOptions *o, double gpu_ms)
{
  const int rows = MIN(o->cpu_rows, c->n);
  const double s1 = cpu_seconds(c, rows, 1) * c->n / rows;
  const double sa = cpu_seconds(c, rows, o->threads_all) * c->n / rows;
  nw_json_member_number(jb, "cpu_extrapolated_from_rows", rows);
  nw_json_member_number(jb, "cpu_threads_all", o->threads_all);
  nw_json_member_number(jb, "cpu_s_1thread_extrapolated", s1);
  nw_json_member_number(jb, "cpu_s_extrapolated", sa);
  nw_json_member_number(jb, "cpu_parallel_speedup", s1 / sa);
  fprintf(stderr,
          "  CPU reference (%d rows, extrapolated to %d): %.2f s on 1 thread, %.2f s on %d "
          "(x%.2f)",
          rows, c->n, s1, sa, o->threads_all, s1 / sa);
  if (gpu_ms > 0.0) {
    nw_json_member_number(jb, "speedup_vs_1thread", s1 / (gpu_ms * 1e-3));
    nw_json_member_number(jb, "speedup", sa / (gpu_ms * 1e-3));
    fprintf(stderr, "; GPU speed-up %.0fx over 1 thread, %.0fx over %d", s1 / (gpu_ms * 1e-3),
            sa / (gpu_ms * 1e-3), o->threads_all);
  }
  fprintf(stderr, "\n");
}

/* The pruned CPU reference (nw_nlm_neighbours_pruned_cpu, the method's) on all N rows with all
 * threads: its time, the fraction of (block, tile) pairs it visited, and its sample rows
 * against the brute force's (indices and distance bits). FALSE when one differs. */
static gboolean cpu_pruned_case(JsonBuilder *jb, const BenchCase *c, GError **error)
{
  g_autofree int *nbr = g_new(int, (size_t)c->n * c->m);
  g_autofree float *nd = g_new(float, (size_t)c->n * c->m);
  double visited = 0.0;
  const gint64 t0 = g_get_monotonic_time();
  if (!nw_nlm_neighbours_pruned_cpu(nbr, nd, c->x, c->n, c->p, c->m, &visited)) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOMEM, "pruned CPU reference: out of memory");
    return FALSE;
  }
  const double sec = (g_get_monotonic_time() - t0) / 1e6;
  int same = 0;
  for (int s = 0; s < c->k; s++)
    same +=
        memcmp(nbr + (size_t)c->rows[s] * c->m, c->nbr + (size_t)s * c->m, c->m * sizeof(int)) ==
            0 &&
        memcmp(nd + (size_t)c->rows[s] * c->m, c->nd + (size_t)s * c->m, c->m * sizeof(float)) == 0;
  nw_json_member_number(jb, "cpu_pruned_s", sec);
  nw_json_member_number(jb, "cpu_pruned_visited_tile_fraction", visited);
  nw_json_member_number(jb, "cpu_pruned_identical_sample_rows", same);
  fprintf(stderr,
          "  CPU reference, pruned, all %d rows: %.2f s on %d threads, %.1f %% of the tiles "
          "visited, sample rows identical to the brute force: %d/%d\n",
          c->n, sec, omp_threads(), 100.0 * visited, same, c->k);
  if (same != c->k) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
                "the pruned CPU reference's rows differ from the brute force's (%d of %d "
                "identical)",
                same, c->k);
    return FALSE;
  }
  return TRUE;
}

static gboolean run_size(JsonBuilder *jb, int n, const BenchOptions *o)
{
  BenchCase c = {.n = n, .p = o->patch * o->patch * o->patch, .m = o->m};
  c.x = band_patches(n, o->patch);
  exact_sample(&c, o->check_rows);
  g_autoptr(GError) error = NULL;
  json_builder_begin_object(jb);
  nw_json_member_number(jb, "n", n);
  nw_json_member_number(jb, "p", c.p);
  nw_json_member_number(jb, "m", c.m);
  gboolean ok = o->dump_dir == NULL || dump_case(o->dump_dir, &c, o->patch, &error);
  double gpu_ms = 0.0;
  if (ok && !o->cpu_only)
    ok = gpu_case(jb, &c, o, &gpu_ms, &error);
  if (ok && o->cpu_rows > 0)
    cpu_case(jb, &c, o, gpu_ms);
  if (ok && o->cpu_pruned)
    ok = cpu_pruned_case(jb, &c, &error);
  if (!ok) {
    nw_json_member_string(jb, "error", error != NULL ? error->message : "failed");
    fprintf(stderr, "N %7d: %s\n", n, error != NULL ? error->message : "failed");
  }
  json_builder_end_object(jb);
  bench_case_clear(&c);
  return ok;
}

int main(int argc, char **argv)
{
  g_autofree char *sizes_text = g_strdup("17500,50000,100000,175000");
  g_autofree char *json_path = NULL, *dump_dir = NULL, *kernel = g_strdup("both");
  BenchOptions o = {.m = 96, .patch = 5, .repeats = 3, .check_rows = 64, .cpu_rows = 256};
  GOptionEntry entries[] = {
      {"sizes", 0, 0, G_OPTION_ARG_STRING, &sizes_text, "Band sizes N (default 17500,...)", "N,N"},
      {"m", 0, 0, G_OPTION_ARG_INT, &o.m, "Neighbours kept (default 96)", "M"},
      {"patch", 0, 0, G_OPTION_ARG_INT, &o.patch, "Patch width, odd (default 5)", "W"},
      {"repeats", 0, 0, G_OPTION_ARG_INT, &o.repeats, "Timed runs per size (default 3)", "K"},
      {"check-rows", 0, 0, G_OPTION_ARG_INT, &o.check_rows,
       "Sample rows checked against the CPU (64)", "K"},
      {"cpu-rows", 0, 0, G_OPTION_ARG_INT, &o.cpu_rows,
       "CPU rows timed per size, 1 thread and all (256; 0: none)", "K"},
      {"dump-patches", 0, 0, G_OPTION_ARG_FILENAME, &dump_dir,
       "Write each size's patches and sample top-m here (for peer_nlm_torch.py)", "DIR"},
      {"cpu-only", 0, 0, G_OPTION_ARG_NONE, &o.cpu_only, "No GPU: CPU timing and the dump", NULL},
      {"cpu-pruned", 0, 0, G_OPTION_ARG_NONE, &o.cpu_pruned,
       "Also run the pruned CPU reference on all rows (time, tiles visited, sample rows checked)",
       NULL},
      {"kernel", 0, 0, G_OPTION_ARG_STRING, &kernel,
       "GPU top-m kernel: exact, tc (pruned tensor-core filter + exact recheck) or both "
       "(default)",
       "K"},
      {"json", 0, 0, G_OPTION_ARG_FILENAME, &json_path, "Write the JSON here", "FILE"},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  g_autoptr(GOptionContext) ctx = g_option_context_new("- benchmark the nlm-surface top-m");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error) || o.repeats < 1 || o.m < 1 ||
      o.m > NW_NLM_CUDA_MAX_M || o.patch < 1 || o.patch % 2 == 0 || o.check_rows < 0 ||
      o.cpu_rows < 0) {
    fprintf(stderr, "bench_nlm: %s\n",
            error ? error->message : "bad --m/--patch/--repeats/--check-rows/--cpu-rows");
    return 2;
  }
  o.dump_dir = dump_dir;
  o.run_exact = strcmp(kernel, "exact") == 0 || strcmp(kernel, "both") == 0;
  if (strcmp(kernel, "both") == 0 || strcmp(kernel, "tc") == 0)
    o.tc[o.n_tc++] = NW_NLM_KERNEL_TC;
  if (!o.run_exact && o.n_tc == 0) {
    fprintf(stderr, "bench_nlm: --kernel: '%s' is not exact, tc or both\n", kernel);
    return 2;
  }
#ifdef _OPENMP
  o.threads_all = omp_get_max_threads();
#else
  o.threads_all = 1;
#endif
  char device[256] = "none (--cpu-only)";
  if (!o.cpu_only && !nw_cuda_probe(device, sizeof device)) {
    fprintf(stderr, "bench_nlm: no CUDA device (%s)\n", device);
    return 77;
  }
  g_auto(GStrv) sizes = g_strsplit(sizes_text, ",", -1);
  for (int i = 0; sizes[i] != NULL; i++)
    if (atoi(sizes[i]) < o.m + 1) {
      fprintf(stderr, "bench_nlm: size '%s' must exceed m = %d\n", sizes[i], o.m);
      return 2;
    }
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  nw_json_member_string(b, "bench", "nlm_topm");
  nw_json_member_string(b, "device", device);
  nw_json_member_string(b, "flops_counted", "2 N^2 P (the kernel does 3 FP32 ops per pair value)");
  json_builder_set_member_name(b, "cases");
  json_builder_begin_array(b);
  int status = 0;
  for (int i = 0; sizes[i] != NULL; i++)
    if (!run_size(b, atoi(sizes[i]), &o))
      status = 1;
  json_builder_end_array(b);
  json_builder_end_object(b);
  g_autofree char *text = nw_json_to_string(b, TRUE);
  if (json_path != NULL) {
    if (!g_file_set_contents(json_path, text, -1, &error)) {
      fprintf(stderr, "bench_nlm: %s\n", error->message);
      return 2;
    }
  } else {
    printf("%s\n", text);
  }
  return status;
}
