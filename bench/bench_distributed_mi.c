/* bench_distributed_mi.c — the distributed MI metric (issue 16): metric evaluations per second
 * of a large 2D section (default 16384², generated block by block: no rank holds the whole
 * fixed image) with a circular mask, over a rotation sweep 0..180 degrees in 15 degree steps,
 * for each strategy and each number of blocks per rank that the memory cap forces (default 2
 * and 4). One process is one rank of the loopback transport (--ranks R simulates R ranks on
 * threads); under mpirun every rank is one MPI rank, on GPU local_rank % devices. An
 * evaluation is the local histogram plus its sum over the ranks (what the optimiser waits
 * for). With --device cuda the GPU's local histograms are first checked against the CPU's on
 * a small case (exit 1 when a count differs). Not a test. Main thread (MPI FUNNELED).
 *
 *   bench_distributed_mi [--size N] [--device cpu|cuda] [--per-rank 2,4]
 *                        [--cap-mode per-rank|fixed] [--nearby E] [--baseline FILE]
 *                        [--strategies replicated,distributed] [--repeat K] [--chunk V]
 *                        [--ranks R] [--json FILE]
 *
 * Cap modes (issue 17): "per-rank" sets the memory cap so that every rank count R gets k
 * blocks a rank (the cap shrinks as R grows: more GPUs bring no more memory); "fixed" sets the
 * cap of one GPU that forces the section into k blocks on one rank, the same for every R (a
 * strong-scaling experiment as on real GPUs: R GPUs hold R times the memory, so the plan needs
 * ceil(k / R)-ish blocks a rank and the replicated strategy's resident windows grow). After
 * each sweep angle's evaluation, E evaluations at transforms 0.01 degrees apart (an
 * optimiser's steps) are timed apart: they show what a resident window that is reused costs.
 * --baseline: the JSON of the one-rank run, for the parallel efficiency T1 / (R TR) per angle.
 *
 * Rows: ranks, strategy, layout, blocks per rank, the cap that forced them (MB), block MB,
 * setup s (reading the blocks and the device upload), ms per evaluation, evaluations per
 * second, fixed voxels per second (all ranks), remote requests per evaluation. */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "affine_resample.h"
#include "affine_transform.h"
#include "cli_mpi.h"
#include "dmi_metric.h"
#include "json_out.h"
#include "nw_error.h"
#ifdef NW_HAVE_CUDA
#include "nw_dmi_cuda.h"
#endif

#define BINS 32
#define N_ANGLES 13

/* The section: a disc of tissue with a texture and a few structures, cheap to make anywhere
 * (integer arithmetic); the moving image is the same section 1.5 voxels aside. */
typedef struct {
  int n;
  double shift;
  gboolean mask;
} Phantom;

static float phantom_value(const Phantom *p, int i, int j)
{
  if (p->mask) {
    const double dx = i - 0.5 * (p->n - 1), dy = j - 0.5 * (p->n - 1), r = 0.45 * p->n;
    return dx * dx + dy * dy <= r * r ? 1.0f : 0.0f;
  }
  const long x = i + (long)p->shift, y = j;
  const long c = p->n / 2, r2 = (x - c) * (x - c) + (y - c) * (y - c), R = (long)(0.42 * p->n);
  float v = r2 < R * R ? 100.0f : 10.0f;
  v += (float)(((x * 7 + y * 13) ^ (x >> 5) ^ (y >> 4)) & 31);
  if (((x >> 8) + (y >> 8)) % 3 == 0 && r2 < R * R)
    v += 40.0f;
  return v;
}

static gboolean phantom_read(gpointer data, const int lo[3], const int hi[3], float *out,
                             GError **error)
{
  const Phantom *p = data;
  const int w = hi[0] - lo[0];
#pragma omp parallel for schedule(static)
  for (int j = lo[1]; j < hi[1]; j++)
    for (int i = lo[0]; i < hi[0]; i++)
      out[(size_t)(j - lo[1]) * w + (i - lo[0])] = phantom_value(p, i, j);
  return TRUE;
}

typedef struct {
  int size, repeat, per_rank, ranks, nearby;
  gboolean fixed_cap;
  int blocks_per_rank; /* the plan's, under the cap */
  gint64 chunk;
  NwDmiStrategy strategy;
  const NwDmiMetricOps *ops;
  /* results (rank 0's) */
  NwDmiPlan plan;
  double cap_mb, setup_s, ms, requests, mass;
  /* per sweep angle (0, 15, ..., 180 degrees), mean over the repeats: where each strategy
   * wins is a matter of angle (the samples that leave a rank's block) */
  double ms_angle[N_ANGLES], requests_angle[N_ANGLES];
  double ms_angle_nearby[N_ANGLES]; /* an evaluation 0.01 degrees from the angle's */
  /* cuda, replicated: MB copied into the resident windows at the angle (rank 0's) and at
   * the nearby evaluations (0: reused) */
  double window_mb_angle[N_ANGLES], window_mb_nearby[N_ANGLES];
  gboolean ok;
  char error[256];
} Case;

static NwDmiSource source(Phantom *p)
{
  return (NwDmiSource){{p->n, p->n, 1}, phantom_read, p};
}

/* The sweep's voxel maps (fixed and moving on the same 1 mm grid), each angle + offset_deg. */
static void sweep_maps_at(int n, double offset_deg, double maps[N_ANGLES][12])
{
  NwVolume grid = {.nx = n, .ny = n, .nz = 1, .nc = 1};
  nw_volume_set_spacing(&grid, 1.0, 1.0, 1.0);
  const double c[3] = {0.5 * (n - 1), 0.5 * (n - 1), 0.0};
  for (int a = 0; a < N_ANGLES; a++) {
    NwTransform t;
    nw_transform_init(&t, 2, NW_XFORM_RIGID, c);
    t.rotation_rad[2] = (a * 15.0 + offset_deg) * G_PI / 180.0;
    double m[16];
    nw_transform_matrix(&t, m);
    nw_affine_voxel_map(&grid, &grid, m, 2, maps[a]);
  }
}

static void sweep_maps(int n, double maps[N_ANGLES][12])
{
  sweep_maps_at(n, 0.0, maps);
}

/* MB the CUDA twin copied into its resident windows in the last evaluation (0 on the CPU). */
static double window_mb(const Case *c, void *metric)
{
#ifdef NW_HAVE_CUDA
  if (c->ops == &nw_dmi_metric_cuda_ops)
    return nw_dmi_cuda_window_voxels(metric) * 4.0 / 1e6;
#else
  (void)c, (void)metric;
#endif
  return 0.0;
}

/* One case on this rank: plan (the cap that forces per_rank blocks a rank), blocks, metric,
 * a warm-up evaluation, the timed sweeps. Collective. */
static gboolean run_case(NwDmiTransport *t, Case *c, GError **error)
{
  const int n3[3] = {c->size, c->size, 1};
  NwDmiLayout want;
  /* fixed: the cap of one GPU holding k blocks, whatever R */
  const int forced = c->per_rank * (c->fixed_cap ? 1 : t->size);
  if (!nw_dmi_layout_choose(n3, 2, forced, &want)) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "no layout of %d blocks", forced);
    return FALSE;
  }
  c->cap_mb = nw_dmi_block_bytes(&want, n3, n3, TRUE, FALSE, BINS) / 1e6;
  if (!nw_dmi_plan(n3, n3, 2, TRUE, FALSE, BINS, t->size, NULL, c->cap_mb, &c->plan, error))
    return FALSE;
  c->blocks_per_rank = MAX(1, nw_dmi_layout_blocks(&c->plan.layout) / t->size);
  Phantom pf = {c->size, 0.0, FALSE}, pm = {c->size, 1.5, FALSE}, pk = {c->size, 0.0, TRUE};
  NwDmiSource f = source(&pf), m = source(&pm), k = source(&pk), none = {{0, 0, 0}, NULL, NULL};
  const gint64 t0 = g_get_monotonic_time();
  NwDmiLevel *lv =
      nw_dmi_level_new(c->strategy, &c->plan.layout, t->rank, t->size, &f, &k, &m, &none, error);
  if (lv == NULL)
    return FALSE;
  const NwDmiSpec spec = {NW_SAMPLER_LINEAR, BINS, c->chunk, c->cap_mb};
  void *metric = c->ops->create(&spec, t, error);
  /* the phantom's range, known to every rank */
  const double ranges[4] = {10.0, 172.0, 10.0, 172.0};
  gboolean ok = metric != NULL && c->ops->set_level(metric, lv, ranges, error);
  c->setup_s = (g_get_monotonic_time() - t0) / 1e6;
  double maps[N_ANGLES][12], near[N_ANGLES][12];
  sweep_maps(c->size, maps);
  gint64 hist[BINS * BINS], requests = 0, sent = 0, us_near[N_ANGLES] = {0};
  /* warm-up: the first evaluation's allocations and the caches, and the first sum on the
   * path the timed ones take (NCCL's first all-reduce connects the ranks: on 2 and 4 H100s
   * it made the sweep's first angle 150-290 ms when the warm-up summed through MPI) */
  ok = ok && nw_dmi_ops_histogram(c->ops, metric, t, maps[1], BINS, hist, &sent, error);
  gint64 sent_angle[N_ANGLES] = {0}, us_angle[N_ANGLES] = {0};
  for (int r = 0; ok && r < c->repeat; r++)
    for (int a = 0; ok && a < N_ANGLES; a++) {
      /* an evaluation ends with the collective sum: every rank has waited for the slowest */
      const gint64 ta = g_get_monotonic_time();
      ok = nw_dmi_ops_histogram(c->ops, metric, t, maps[a], BINS, hist, &sent, error);
      us_angle[a] += g_get_monotonic_time() - ta;
      c->window_mb_angle[a] += window_mb(c, metric) / c->repeat;
      sent_angle[a] += sent;
      requests += sent;
      for (int e = 0; ok && e < c->nearby; e++) {
        sweep_maps_at(c->size, 0.01 * (e + 1), near);
        const gint64 tn = g_get_monotonic_time();
        ok = nw_dmi_ops_histogram(c->ops, metric, t, near[a], BINS, hist, &sent, error);
        us_near[a] += g_get_monotonic_time() - tn;
        c->window_mb_nearby[a] += window_mb(c, metric) / c->repeat / c->nearby;
      }
    }
  const double evals = (double)c->repeat * N_ANGLES;
  gint64 us_sweep = 0; /* the sweep's evaluations only, as before the nearby ones existed */
  for (int a = 0; a < N_ANGLES; a++)
    us_sweep += us_angle[a];
  c->ms = us_sweep / 1e3 / evals;
  ok = ok && t->allreduce_i64(t, sent_angle, N_ANGLES, error);
  for (int a = 0; a < N_ANGLES; a++) {
    c->ms_angle[a] = us_angle[a] / 1e3 / c->repeat;
    c->requests_angle[a] = (double)sent_angle[a] / c->repeat;
    c->ms_angle_nearby[a] = c->nearby > 0 ? us_near[a] / 1e3 / c->repeat / c->nearby : 0.0;
  }
  c->mass = 0.0;
  for (int b = 0; b < BINS * BINS; b++)
    c->mass += (double)hist[b];
  ok = ok && t->allreduce_i64(t, &requests, 1, error);
  c->requests = (double)requests / evals;
  if (metric != NULL)
    c->ops->destroy(metric);
  nw_dmi_level_free(lv);
  return ok;
}

#ifdef NW_HAVE_CUDA
/* The GPU's local histograms against the CPU's on a small case, both strategies: FALSE when a
 * count differs. Collective. */
static gboolean check_cuda(NwDmiTransport *t, GError **error)
{
  const int n = 1024, n3[3] = {n, n, 1};
  NwDmiLayout l;
  nw_dmi_layout_choose(n3, 2, 2 * t->size, &l);
  Phantom pf = {n, 0.0, FALSE}, pm = {n, 1.5, FALSE}, pk = {n, 0.0, TRUE};
  NwDmiSource f = source(&pf), m = source(&pm), k = source(&pk), none = {{0, 0, 0}, NULL, NULL};
  double maps[N_ANGLES][12];
  sweep_maps(n, maps);
  const double ranges[4] = {10.0, 172.0, 10.0, 172.0};
  /* the cap of this layout's blocks: the resident windows are partial and move (cuda) */
  const NwDmiSpec spec = {NW_SAMPLER_LINEAR, BINS, 50000,
                          nw_dmi_block_bytes(&l, n3, n3, TRUE, FALSE, BINS) / 1e6};
  gboolean same = TRUE;
  for (int s = 0; s < 2; s++) {
    NwDmiLevel *lv = nw_dmi_level_new(s ? NW_DMI_DISTRIBUTED : NW_DMI_REPLICATED, &l, t->rank,
                                      t->size, &f, &k, &m, &none, error);
    if (lv == NULL)
      return FALSE;
    /* several angles in turn: the GPU's windows are fetched, shifted and reused */
    static const int angles[5] = {1, 3, 4, 12, 3};
    gint64 h[2][5][BINS * BINS], sent;
    const NwDmiMetricOps *ops[2] = {&nw_dmi_metric_cpu_ops, &nw_dmi_metric_cuda_ops};
    for (int d = 0; d < 2; d++) {
      void *metric = ops[d]->create(&spec, t, error);
      gboolean ok = metric != NULL && ops[d]->set_level(metric, lv, ranges, error);
      for (int q = 0; ok && q < 5; q++)
        ok = ops[d]->local(metric, maps[angles[q]], h[d][q], &sent, error);
      if (metric != NULL)
        ops[d]->destroy(metric);
      if (!ok) {
        nw_dmi_level_free(lv);
        return FALSE;
      }
    }
    same = same && memcmp(h[0], h[1], sizeof h[0]) == 0;
    nw_dmi_level_free(lv);
  }
  gint64 bad = same ? 0 : 1;
  return t->allreduce_i64(t, &bad, 1, error) && bad == 0;
}
#endif

/* From the one-rank run's JSON (--baseline), the case of this strategy, cap mode and k: its
 * per-angle ms (sweep and nearby) and ms per evaluation. FALSE when absent. */
static gboolean baseline_case(const char *file, const char *strategy, const char *mode, int k,
                              double ms[N_ANGLES], double near[N_ANGLES], double *mean)
{
  g_autoptr(JsonParser) p = json_parser_new();
  if (file == NULL || !json_parser_load_from_file(p, file, NULL))
    return FALSE;
  JsonObject *root = json_node_get_object(json_parser_get_root(p));
  JsonArray *cases = root != NULL && json_object_has_member(root, "cases")
                         ? json_object_get_array_member(root, "cases")
                         : NULL;
  for (guint i = 0; cases != NULL && i < json_array_get_length(cases); i++) {
    JsonObject *c = json_array_get_object_element(cases, i);
    /* runs before cap modes existed were per-rank */
    const char *cm = json_object_get_string_member_with_default(c, "cap_mode", "per-rank");
    const int ck = (int)json_object_get_double_member_with_default(
        c, "k_forced", json_object_get_double_member_with_default(c, "blocks_per_rank", 0));
    if (!g_str_equal(json_object_get_string_member_with_default(c, "strategy", ""), strategy) ||
        !g_str_equal(cm, mode) || ck != k || !json_object_has_member(c, "ms_per_angle"))
      continue;
    JsonArray *a = json_object_get_array_member(c, "ms_per_angle");
    JsonArray *n = json_object_has_member(c, "ms_per_angle_nearby")
                       ? json_object_get_array_member(c, "ms_per_angle_nearby")
                       : NULL;
    for (guint q = 0; q < N_ANGLES; q++) {
      ms[q] = q < json_array_get_length(a) ? json_array_get_double_element(a, q) : 0.0;
      near[q] =
          n != NULL && q < json_array_get_length(n) ? json_array_get_double_element(n, q) : 0.0;
    }
    *mean = json_object_get_double_member_with_default(c, "ms_per_evaluation", 0.0);
    return TRUE;
  }
  return FALSE;
}

/* T1 / (R TR) per angle into the builder (0 where either is missing). */
static void add_efficiency(JsonBuilder *jb, const char *name, const double *t1, const double *tr,
                           int ranks)
{
  double e[N_ANGLES];
  for (int a = 0; a < N_ANGLES; a++)
    e[a] = t1[a] > 0 && tr[a] > 0 ? t1[a] / (ranks * tr[a]) : 0.0;
  json_builder_set_member_name(jb, name);
  nw_json_add_numbers(jb, e, N_ANGLES);
}

typedef struct {
  int size, repeat, ranks, nearby;
  gboolean fixed_cap;
  gint64 chunk;
  const char *device, *json, *baseline;
  char **per_rank, **strategies;
  int code;
} Bench;

static gboolean bench_rank(NwDmiTransport *t, gpointer data)
{
  Bench *b = data;
  const NwDmiMetricOps *ops = &nw_dmi_metric_cpu_ops;
  GError *error = NULL;
#ifdef NW_HAVE_CUDA
  if (g_str_equal(b->device, "cuda")) {
    ops = &nw_dmi_metric_cuda_ops;
    const gboolean ok = check_cuda(t, &error);
    if (t->rank == 0)
      printf("check: CUDA local histograms %s the CPU's (1024², both strategies)\n",
             ok ? "equal" : "DIFFER from");
    if (!ok) {
      if (error != NULL && t->rank == 0)
        fprintf(stderr, "bench_distributed_mi: %s\n", error->message);
      b->code = 1;
      return FALSE;
    }
  }
#endif
  g_autoptr(JsonBuilder) jb = json_builder_new();
  json_builder_begin_object(jb);
  nw_json_member_string(jb, "benchmark", "bench_distributed_mi");
  nw_json_member_string(jb, "device", b->device);
  nw_json_member_number(jb, "size", b->size);
  nw_json_member_number(jb, "ranks", t->size);
  nw_json_member_string(jb, "transport", t->name);
  nw_json_member_number(jb, "bins", BINS);
  nw_json_member_number(jb, "angles", N_ANGLES);
  nw_json_member_string(jb, "cap_mode", b->fixed_cap ? "fixed" : "per-rank");
  nw_json_member_number(jb, "nearby_evaluations", b->nearby);
  json_builder_set_member_name(jb, "cases");
  json_builder_begin_array(jb);
  if (t->rank == 0)
    printf("%-5s %-11s %-7s %-5s %-9s %-9s %-8s %-10s %-9s %-10s %-12s\n", "ranks", "strategy",
           "layout", "k", "cap_MB", "block_MB", "setup_s", "ms/eval", "evals/s", "Gvox/s",
           "requests");
  for (int s = 0; b->strategies[s] != NULL; s++)
    for (int k = 0; b->per_rank[k] != NULL; k++) {
      Case c = {.size = b->size,
                .repeat = b->repeat,
                .per_rank = atoi(b->per_rank[k]),
                .nearby = b->nearby,
                .fixed_cap = b->fixed_cap,
                .chunk = b->chunk,
                .ops = ops};
      if (!nw_dmi_strategy_parse(b->strategies[s], &c.strategy, &error) || c.per_rank < 1 ||
          !run_case(t, &c, &error)) {
        if (t->rank == 0)
          fprintf(stderr, "bench_distributed_mi: %s\n",
                  error != NULL ? error->message : "bad --per-rank");
        g_clear_error(&error);
        b->code = 1;
        continue;
      }
      char lay[48];
      nw_dmi_layout_format(&c.plan.layout, 2, lay);
      const double gvox = (double)b->size * b->size / (c.ms / 1e3) / 1e9;
      if (t->rank == 0)
        printf("%-5d %-11s %-7s %-5d %-9.4g %-9.3g %-8.2f %-10.3f %-9.1f %-10.3f %-12.0f\n",
               t->size, b->strategies[s], lay, c.blocks_per_rank, c.cap_mb, c.plan.block_mb,
               c.setup_s, c.ms, 1e3 / c.ms, gvox, c.requests);
      if (t->rank == 0) {
        printf("      ms per angle (0, 15, ..., 180 degrees):");
        for (int a = 0; a < N_ANGLES; a++)
          printf(" %.2f", c.ms_angle[a]);
        printf("\n      ms per angle, 0.01 degrees on (nearby):");
        for (int a = 0; a < N_ANGLES; a++)
          printf(" %.2f", c.ms_angle_nearby[a]);
        printf("\n");
        if (ops != &nw_dmi_metric_cpu_ops && c.strategy == NW_DMI_REPLICATED) {
          printf("      MB into rank 0's windows per angle (nearby):");
          for (int a = 0; a < N_ANGLES; a++)
            printf(" %.0f (%.0f)", c.window_mb_angle[a], c.window_mb_nearby[a]);
          printf("\n");
        }
      }
      json_builder_begin_object(jb);
      nw_json_member_string(jb, "strategy", b->strategies[s]);
      nw_json_member_string(jb, "layout", lay);
      nw_json_member_string(jb, "cap_mode", b->fixed_cap ? "fixed" : "per-rank");
      nw_json_member_number(jb, "k_forced", c.per_rank); /* the k the cap was set for */
      nw_json_member_number(jb, "blocks_per_rank", c.blocks_per_rank); /* the plan's */
      nw_json_member_number(jb, "memory_cap_mb", c.cap_mb);
      nw_json_member_number(jb, "block_mb", c.plan.block_mb);
      nw_json_member_number(jb, "setup_s", c.setup_s);
      nw_json_member_number(jb, "ms_per_evaluation", c.ms);
      nw_json_member_number(jb, "evaluations_per_s", 1e3 / c.ms);
      nw_json_member_number(jb, "fixed_gvoxels_per_s", gvox);
      nw_json_member_number(jb, "remote_requests_per_evaluation", c.requests);
      nw_json_member_number(jb, "histogram_mass", c.mass);
      json_builder_set_member_name(jb, "ms_per_angle");
      nw_json_add_numbers(jb, c.ms_angle, N_ANGLES);
      json_builder_set_member_name(jb, "ms_per_angle_nearby");
      nw_json_add_numbers(jb, c.ms_angle_nearby, N_ANGLES);
      json_builder_set_member_name(jb, "window_mb_per_angle");
      nw_json_add_numbers(jb, c.window_mb_angle, N_ANGLES);
      json_builder_set_member_name(jb, "window_mb_per_angle_nearby");
      nw_json_add_numbers(jb, c.window_mb_nearby, N_ANGLES);
      double per_s[N_ANGLES];
      for (int a = 0; a < N_ANGLES; a++)
        per_s[a] = c.ms_angle[a] > 0 ? 1e3 / c.ms_angle[a] : 0.0;
      json_builder_set_member_name(jb, "evaluations_per_s_per_angle");
      nw_json_add_numbers(jb, per_s, N_ANGLES);
      double t1[N_ANGLES], t1n[N_ANGLES], t1m = 0.0;
      if (baseline_case(b->baseline, b->strategies[s], b->fixed_cap ? "fixed" : "per-rank",
                        c.per_rank, t1, t1n, &t1m)) {
        nw_json_member_number(jb, "parallel_efficiency", t1m / (t->size * c.ms));
        add_efficiency(jb, "parallel_efficiency_per_angle", t1, c.ms_angle, t->size);
        add_efficiency(jb, "parallel_efficiency_per_angle_nearby", t1n, c.ms_angle_nearby, t->size);
        if (t->rank == 0) {
          printf("      parallel efficiency per angle:");
          for (int a = 0; a < N_ANGLES; a++)
            printf(" %.2f", t1[a] / (t->size * c.ms_angle[a]));
          printf("\n");
        }
      }
      json_builder_set_member_name(jb, "requests_per_angle");
      nw_json_add_numbers(jb, c.requests_angle, N_ANGLES);
      json_builder_end_object(jb);
    }
  json_builder_end_array(jb);
  json_builder_end_object(jb);
  if (t->rank == 0 && b->json != NULL) {
    g_autofree char *text = nw_json_to_string(jb, TRUE);
    GError *we = NULL;
    if (!g_file_set_contents(b->json, text, -1, &we)) {
      fprintf(stderr, "bench_distributed_mi: %s\n", we->message);
      g_error_free(we);
      b->code = 1;
    }
  }
  return b->code == 0;
}

int main(int argc, char **argv)
{
  int size = 16384, repeat = 1, ranks = 1, chunk = 1 << 22, nearby = 1;
  g_autofree char *device = NULL, *json = NULL, *per_rank = NULL, *strategies = NULL,
                  *cap_mode = NULL, *baseline = NULL;
  GOptionEntry entries[] = {
      {"size", 0, 0, G_OPTION_ARG_INT, &size, "Section edge in pixels (default 16384)", "N"},
      {"device", 0, 0, G_OPTION_ARG_STRING, &device, "cpu or cuda (default cpu)", "D"},
      {"per-rank", 0, 0, G_OPTION_ARG_STRING, &per_rank,
       "Blocks a rank that the memory cap forces, comma-separated (default 2,4)", "LIST"},
      {"strategies", 0, 0, G_OPTION_ARG_STRING, &strategies,
       "Comma-separated (default replicated,distributed)", "LIST"},
      {"repeat", 0, 0, G_OPTION_ARG_INT, &repeat, "Sweeps timed per case (default 1)", "K"},
      {"chunk", 0, 0, G_OPTION_ARG_INT, &chunk, "Fixed voxels per exchange chunk", "V"},
      {"ranks", 0, 0, G_OPTION_ARG_INT, &ranks,
       "Simulated ranks (threads of the loopback transport) when not under mpirun", "R"},
      {"json", 0, 0, G_OPTION_ARG_FILENAME, &json, "Write the results as JSON here", "FILE"},
      {"cap-mode", 0, 0, G_OPTION_ARG_STRING, &cap_mode,
       "per-rank (k blocks a rank for every R, the default) or fixed (one GPU's cap for k "
       "blocks, the same for every R)",
       "MODE"},
      {"nearby", 0, 0, G_OPTION_ARG_INT, &nearby,
       "Evaluations 0.01 degrees apart after each sweep angle, timed apart (default 1)", "E"},
      {"baseline", 0, 0, G_OPTION_ARG_FILENAME, &baseline,
       "The one-rank run's JSON: parallel efficiency per angle", "FILE"},
      {NULL}};
  g_autoptr(GOptionContext) ctx = g_option_context_new("- distributed MI evaluations per second");
  g_option_context_add_main_entries(ctx, entries, NULL);
  GError *error = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
    fprintf(stderr, "bench_distributed_mi: %s\n", error->message);
    return 2;
  }
  if (cap_mode != NULL && !g_str_equal(cap_mode, "per-rank") && !g_str_equal(cap_mode, "fixed")) {
    fprintf(stderr, "bench_distributed_mi: --cap-mode %s: expected per-rank or fixed\n", cap_mode);
    return 2;
  }
  Bench b = {.size = size,
             .repeat = MAX(repeat, 1),
             .ranks = MAX(ranks, 1),
             .chunk = chunk,
             .nearby = MAX(nearby, 0),
             .baseline = baseline,
             .fixed_cap = cap_mode != NULL && g_str_equal(cap_mode, "fixed"),
             .device = device != NULL ? device : "cpu",
             .json = json,
             .per_rank = g_strsplit(per_rank != NULL ? per_rank : "2,4", ",", -1),
             .strategies =
                 g_strsplit(strategies != NULL ? strategies : "replicated,distributed", ",", -1)};
  if (!g_str_equal(b.device, "cpu") && !g_str_equal(b.device, "cuda")) {
    fprintf(stderr, "bench_distributed_mi: --device %s: expected cpu or cuda\n", b.device);
    return 2;
  }
#ifndef NW_HAVE_CUDA
  if (g_str_equal(b.device, "cuda")) {
    fprintf(stderr, "bench_distributed_mi: built without CUDA\n");
    return 2;
  }
#endif
  int rank = 0, n_ranks = 1;
  nw_cli_mpi_init(&argc, &argv, &rank, &n_ranks);
  nw_cli_mpi_run(b.ranks, bench_rank, &b);
  nw_cli_mpi_finish();
  g_strfreev(b.per_rank);
  g_strfreev(b.strategies);
  return b.code;
}
