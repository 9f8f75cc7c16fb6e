/* bench_nlm.c — benchmark of nlm-surface's fused all-pairs patch distance + exact top-m on the
 * GPU (cuda/nlm_topm_kernel.cu), not a test: the kernel's time for bands of N = 17.5k, 50k,
 * 100k and 175k elements (P = 125, m = 96 by default), the achieved rate counted as 2 N^2 P
 * flops (the GEMM-equivalent count: the kernel itself spends 3 FP32 instructions per value pair,
 * subtract, multiply, add, to equal the CPU bit for bit), and the CPU reference's time.
 * JSON on stdout (or --json FILE); a short table on stderr. Main thread.
 *
 * Patches: the band |phi| <= 2 mm of a sphere's signed distance plus uniform noise of
 * +-0.4 mm, on a 1 mm grid whose sphere is just large enough, its first N band elements (in
 * band order, as the method sees them): real band patches, with their spread of distances.
 *
 * Validation: for every N, `--check-rows` rows spread over the band (both ends included) are
 * computed on the CPU (nw_nlm_pair_distances_cpu + nw_nlm_select_top_m_cpu on each row) and
 * must equal the GPU's rows in indices, order and distance bits; the benchmark exits 1 after
 * writing its JSON when one does not.
 * CPU time: the CPU reference on `--cpu-rows` rows of the smallest N, timed and extrapolated
 * linearly to all N rows (the reference is O(N) per row), with however many OpenMP threads
 * OMP_NUM_THREADS allows; the JSON says so ("cpu_extrapolated_from_rows").
 *
 *   bench_nlm [--sizes 17500,50000,100000,175000] [--m 96] [--patch 5] [--repeats 3]
 *             [--check-rows 32] [--cpu-rows 256] [--json FILE] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_out.h"
#include "nlm_kernels.h"
#include "nw_cuda.h"
#include "nw_nlm_cuda.h"

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

/* Row j on the CPU against the GPU's row: identical? */
static gboolean row_matches(NwNlmTopmBench *b, const float *x, int n, int p, int m, int j,
                            float *dist, int *cnbr, float *cnd, GError **error)
{
  int *nbr = g_new(int, m);
  float *nd = g_new(float, m);
  nw_nlm_pair_distances_cpu(dist, x, n, p, j, 1);
  nw_nlm_select_top_m_cpu(cnbr, cnd, dist, n, j, 1, m); /* into row j of cnbr / cnd (N x m) */
  gboolean ok = nw_nlm_topm_bench_download(b, nbr, nd, j, 1, error) &&
                memcmp(nbr, cnbr + (size_t)j * m, m * sizeof(int)) == 0 &&
                memcmp(nd, cnd + (size_t)j * m, m * sizeof(float)) == 0;
  g_free(nbr);
  g_free(nd);
  return ok;
}

static gboolean run_size(JsonBuilder *jb, int n, int patch, int m, int repeats, int check_rows,
                         int cpu_rows)
{
  const int p = patch * patch * patch;
  g_autofree float *x = band_patches(n, patch);
  g_autoptr(GError) error = NULL;
  json_builder_begin_object(jb);
  nw_json_member_number(jb, "n", n);
  nw_json_member_number(jb, "p", p);
  nw_json_member_number(jb, "m", m);
  NwNlmTopmBench *b = nw_nlm_topm_bench_new(x, n, p, m, &error);
  double best = INFINITY, sum = 0.0, ms = 0.0;
  gboolean ok = b != NULL && nw_nlm_topm_bench_run(b, &ms, &error); /* warm-up */
  for (int r = 0; ok && r < repeats; r++) {
    ok = nw_nlm_topm_bench_run(b, &ms, &error);
    best = fmin(best, ms);
    sum += ms;
  }
  int matched = 0, checked = 0;
  g_autofree float *dist = g_new(float, n), *cnd = g_new(float, (size_t)n *m);
  g_autofree int *cnbr = g_new(int, (size_t)n *m);
  for (int i = 0; ok && i < check_rows; i++) {
    const int j = check_rows > 1 ? (int)((gint64)i * (n - 1) / (check_rows - 1)) : 0;
    GError *e = NULL;
    matched += row_matches(b, x, n, p, m, j, dist, cnbr, cnd, &e);
    checked++;
    if (e != NULL) {
      g_propagate_error(&error, e);
      ok = FALSE;
    }
  }
  if (ok) {
    const double flops = 2.0 * (double)n * n * p;
    nw_json_member_number(jb, "cuda_ms_best", best);
    nw_json_member_number(jb, "cuda_ms_mean", sum / repeats);
    nw_json_member_number(jb, "tflops_best", flops / (best * 1e-3) / 1e12);
    nw_json_member_number(jb, "gemm_equivalent_flops", flops);
    nw_json_member_number(jb, "checked_rows", checked);
    nw_json_member_number(jb, "identical_rows", matched);
    fprintf(stderr,
            "N %7d  P %d  m %d   %9.2f ms (best of %d)  %6.2f TFLOP/s  rows identical "
            "to the CPU: %d/%d\n",
            n, p, m, best, repeats, flops / (best * 1e-3) / 1e12, matched, checked);
  }
  if (ok && cpu_rows > 0) {
    const int rows = MIN(cpu_rows, n);
    g_autofree float *d = g_new(float, (size_t)rows *n), *cd = g_new(float, (size_t)rows *m);
    g_autofree int *cn = g_new(int, (size_t)rows *m);
    gint64 t0 = g_get_monotonic_time();
    nw_nlm_pair_distances_cpu(d, x, n, p, 0, rows);
    nw_nlm_select_top_m_cpu(cn, cd, d, n, 0, rows, m); /* rows 0.. of cn / cd */
    const double s = (g_get_monotonic_time() - t0) / 1e6;
    nw_json_member_number(jb, "cpu_s_extrapolated", s * n / rows);
    nw_json_member_number(jb, "cpu_extrapolated_from_rows", rows);
    nw_json_member_number(jb, "speedup", s * n / rows / (best * 1e-3));
    fprintf(stderr,
            "  CPU reference: %.3f s for %d rows -> %.1f s for all %d (extrapolated), "
            "speed-up %.0fx\n",
            s, rows, s * n / rows, n, s * n / rows / (best * 1e-3));
  }
  if (!ok)
    nw_json_member_string(jb, "error", error != NULL ? error->message : "failed");
  else if (matched != checked)
    nw_json_member_string(jb, "error", "GPU rows differ from the CPU reference's");
  json_builder_end_object(jb);
  nw_nlm_topm_bench_free(b);
  return ok && matched == checked;
}

int main(int argc, char **argv)
{
  g_autofree char *sizes_text = g_strdup("17500,50000,100000,175000");
  g_autofree char *json_path = NULL;
  int m = 96, patch = 5, repeats = 3, check_rows = 32, cpu_rows = 256;
  GOptionEntry entries[] = {
      {"sizes", 0, 0, G_OPTION_ARG_STRING, &sizes_text, "Band sizes N (default 17500,...)", "N,N"},
      {"m", 0, 0, G_OPTION_ARG_INT, &m, "Neighbours kept (default 96)", "M"},
      {"patch", 0, 0, G_OPTION_ARG_INT, &patch, "Patch width, odd (default 5)", "W"},
      {"repeats", 0, 0, G_OPTION_ARG_INT, &repeats, "Timed runs per size (default 3)", "K"},
      {"check-rows", 0, 0, G_OPTION_ARG_INT, &check_rows, "Rows checked on the CPU (32)", "K"},
      {"cpu-rows", 0, 0, G_OPTION_ARG_INT, &cpu_rows, "CPU rows timed at the smallest N (256)",
       "K"},
      {"json", 0, 0, G_OPTION_ARG_FILENAME, &json_path, "Write the JSON here", "FILE"},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  g_autoptr(GOptionContext) ctx = g_option_context_new("- benchmark the nlm-surface top-m");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error) || repeats < 1 || m < 1 ||
      m > NW_NLM_CUDA_MAX_M || patch < 1 || patch % 2 == 0 || check_rows < 0) {
    fprintf(stderr, "bench_nlm: %s\n", error ? error->message : "bad --m/--patch/--repeats");
    return 2;
  }
  char device[256];
  if (!nw_cuda_probe(device, sizeof device)) {
    fprintf(stderr, "bench_nlm: no CUDA device (%s)\n", device);
    return 77;
  }
  g_auto(GStrv) sizes = g_strsplit(sizes_text, ",", -1);
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  nw_json_member_string(b, "bench", "nlm_topm");
  nw_json_member_string(b, "device", device);
  nw_json_member_string(b, "flops_counted", "2 N^2 P (the kernel does 3 FP32 ops per pair value)");
  json_builder_set_member_name(b, "cases");
  json_builder_begin_array(b);
  int status = 0, smallest = -1;
  for (int i = 0; sizes[i] != NULL; i++) {
    const int n = atoi(sizes[i]);
    if (n >= 2 && (smallest < 0 || n < smallest))
      smallest = n;
  }
  for (int i = 0; sizes[i] != NULL; i++) {
    const int n = atoi(sizes[i]);
    if (n < m + 1) {
      fprintf(stderr, "bench_nlm: size '%s' must exceed m = %d\n", sizes[i], m);
      return 2;
    }
    if (!run_size(b, n, patch, m, repeats, check_rows, n == smallest ? cpu_rows : 0))
      status = 1;
  }
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
