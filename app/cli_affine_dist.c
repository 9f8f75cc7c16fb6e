/* cli_affine_dist.c — `neurowarp-cli affine --distributed` (issue 16): mutual information over
 * a block decomposition of the fixed image across the ranks of mpirun (core/dmi_cost.h),
 * each rank reading only its blocks (core/io_tiles.h). Every rank runs the same job on the
 * same reduced histograms, in lockstep; rank 0 writes the transforms and the summary
 * (atomically, all named together, as the single-process command does). A plain run (no
 * mpirun) is one rank, which still cuts the image into blocks under --memory-cap.
 * Main thread (MPI FUNNELED); without mpirun the one rank runs on a thread of the loopback
 * transport while the main thread waits. */
#include <string.h>

#include "affine_method.h"
#include "atomic_file.h"
#include "cli_affine_private.h"
#include "cli_mpi.h"
#include "dmi_cost.h"
#include "io_tiles.h"
#include "json_out.h"
#include "nw_error.h"
#include "result_io.h"
#include "transform_io.h"
#ifdef NW_HAVE_CUDA
#include "nw_dmi_cuda.h"
#endif

enum { IN_FIXED, IN_MOVING, IN_FIXED_MASK, IN_MOVING_MASK, N_IN };
static const char *const in_names[N_IN] = {"fixed image", "moving image", "fixed mask",
                                           "moving mask"};

/* The outputs, in the order they are written; the warped image of a single-process run with
 * the same prefix would not belong to this one (claimed stale). */
static const char *const dist_suffixes[] = {"_affine.txt", "_affine.mat", "_fsl.mat",
                                            "_summary.json"};

typedef struct {
  NwCliMethod *m;
  const AffineArgs *a;
  NwDmiStrategy strategy;
  const NwDmiLayout *forced; /* NULL: chosen */
  double cap_mb;
  int code; /* the exit status */
  /* for the summary */
  NwDmiPlan plan;
  gint64 requests;
  const char *how[N_IN];
  const char *device;
  int dim;
} Run;

/* A message this rank prints: usage errors (exit 2) on rank 0 only, and the rest by the
 * rank that failed (every rank of a collective failure agrees on the lowest). */
static int fail_usage(NwDmiTransport *t, const char *message)
{
  if (t->rank == 0)
    nw_cli_usage("affine", message);
  return NW_CLI_EXIT_USAGE;
}

/* After a step that may fail on some ranks: -1 when none failed; else the lowest rank whose
 * own step failed prints its message, and every rank returns 1. */
static int agree(NwDmiTransport *t, gboolean ok, GError **error)
{
  /* a rank told that another failed (nw_dmi_agree's error) has nothing of its own to say */
  const gboolean own = !ok && !g_error_matches(*error, NW_DMI_PEER_ERROR, 0);
  const int first = nw_dmi_agree(t, !own && ok, NULL);
  if (first < 0 && ok)
    return -1;
  if (first == t->rank && *error != NULL)
    nw_cli_fail(*error);
  g_clear_error(error);
  return NW_CLI_EXIT_FAILURE;
}

static gboolean open_inputs(const AffineArgs *a, NwTiledImage *img[N_IN], GError **error)
{
  const char *paths[N_IN] = {a->fixed, a->moving, a->fixed_mask, a->moving_mask};
  for (int i = 0; i < N_IN; i++) {
    if (paths[i] == NULL)
      continue;
    if ((img[i] = nw_tiled_open(paths[i], a->ignore_spacing, error)) == NULL)
      return FALSE;
    if (i >= IN_FIXED_MASK) {
      const NwVolume *g = nw_tiled_grid(img[i]), *of = nw_tiled_grid(img[i - 2]);
      if (!nw_volume_same_grid(g, of)) {
        g_set_error(error, NW_ERROR, NW_ERROR_MISMATCH,
                    "%s: the %s (%d x %d x %d) is not on the grid of the %s %s (%d x %d x %d)",
                    paths[i], in_names[i], g->nx, g->ny, g->nz, in_names[i - 2], paths[i - 2],
                    of->nx, of->ny, of->nz);
        return FALSE;
      }
    }
  }
  const NwVolume *f = nw_tiled_grid(img[IN_FIXED]), *m = nw_tiled_grid(img[IN_MOVING]);
  if ((f->nz == 1) != (m->nz == 1)) {
    g_set_error(error, NW_ERROR, NW_ERROR_MISMATCH,
                "affine: the fixed image is %s and the moving image %s: both must be 2D (one "
                "slice) or both 3D",
                f->nz == 1 ? "2D" : "3D", m->nz == 1 ? "2D" : "3D");
    return FALSE;
  }
  return TRUE;
}

static NwDmiSource source_of(NwTiledImage *img)
{
  NwDmiSource s = {{0, 0, 0}, NULL, NULL};
  if (img != NULL) {
    const NwVolume *g = nw_tiled_grid(img);
    s = (NwDmiSource){{g->nx, g->ny, g->nz}, nw_tiled_read_source, img};
  }
  return s;
}

static void json_distributed(JsonBuilder *b, gpointer data)
{
  const Run *r = data;
  char buf[48];
  json_builder_set_member_name(b, "distributed");
  json_builder_begin_object(b);
  nw_json_member_number(b, "ranks", r->plan.n_ranks);
  nw_json_member_string(b, "strategy", nw_dmi_strategy_name(r->strategy));
  nw_json_member_string(b, "layout", nw_dmi_layout_format(&r->plan.layout, r->dim, buf));
  nw_json_member_number(b, "blocks", nw_dmi_layout_blocks(&r->plan.layout));
  nw_json_member_number(b, "block_mb", r->plan.block_mb);
  nw_json_member_number(b, "memory_cap_mb", r->cap_mb);
  nw_json_member_number(b, "remote_requests", (double)r->requests);
  nw_json_member_string(b, "metric_device", r->device);
  nw_json_member_string(b, "fixed_read_by", r->how[IN_FIXED]);
  nw_json_member_string(b, "moving_read_by", r->how[IN_MOVING]);
  json_builder_end_object(b);
}

/* Rank 0: the transforms, then the summary, then all named together. */
static gboolean write_outputs(Run *r, NwOutputs *o, const NwCliRunLog *run, NwCliTimes *times,
                              const NwVolume *fixed, const NwVolume *moving,
                              const NwMethodResult *res, GError **error)
{
  const gint64 t0 = g_get_monotonic_time();
  g_autofree char *pj = g_strconcat(r->a->prefix, "_summary.json", NULL);
  if (!nw_result_write_transform(o, res, r->a->prefix, fixed, moving, error))
    return FALSE;
  times->write = nw_cli_seconds_since(t0);
  times->total = nw_cli_seconds_since(r->a->t_start);
  g_autoptr(GPtrArray) names = nw_cli_output_list(o, pj);
  g_autofree char *json =
      nw_cli_affine_summary(r->a, r->m, run, times, res, fixed->nz == 1 ? 2 : 3,
                            (const char *const *)names->pdata, json_distributed, r);
  return nw_outputs_write_buffer(o, pj, json, -1, error) && nw_outputs_commit(o, error);
}

/* The metric's device: CUDA when the method's pick is CUDA (one GPU per rank where there
 * are several: local rank modulo the devices, cuda/dmi_cuda.cu). */
static const NwDmiMetricOps *metric_ops(Run *r)
{
  r->device = "cpu";
#ifdef NW_HAVE_CUDA
  if (nw_cli_method_ops(r->m)->device == NW_DEVICE_CUDA) {
    r->device = "cuda";
    return &nw_dmi_metric_cuda_ops;
  }
#endif
  return NULL;
}

/* Run the job to its end in lockstep with the other ranks, keeping the level log. */
static gboolean run_job(NwAffineJob *j, NwCliRunLog *run, GError **error)
{
  memset(run, 0, sizeof *run);
  const gint64 t0 = g_get_monotonic_time();
  NwIterationReport rep = {0};
  for (int it = 1; !rep.finished; it++) {
    const gint64 ts = g_get_monotonic_time();
    rep = (NwIterationReport){.iteration = it};
    if (!nw_affine_job_step(j, &rep, error))
      return FALSE;
    nw_cli_level_log_hook(&rep, (g_get_monotonic_time() - ts) / 1e3, &run->log);
  }
  run->seconds = nw_cli_seconds_since(t0);
  return TRUE;
}

static int rank_main(NwDmiTransport *t, Run *r)
{
  const AffineArgs *a = r->a;
  NwTiledImage *img[N_IN] = {NULL};
  NwCliTimes times = {0};
  GError *error = NULL;
  g_autoptr(NwOutputs) outputs = nw_outputs_new(nw_cli_method_overwrite(r->m));
  NwMethodResult *res = NULL; /* (no g_autoptr below: the gotos jump over declarations) */
  int code = -1;
  const gint64 t_read = g_get_monotonic_time();
  /* every rank opens the files (headers; the voxels come block by block) */
  gboolean ok = open_inputs(a, img, &error);
  if ((code = agree(t, ok, &error)) >= 0)
    goto out;
  const NwVolume *fg = nw_tiled_grid(img[IN_FIXED]), *mg = nw_tiled_grid(img[IN_MOVING]);
  const int dim = r->dim = fg->nz == 1 ? 2 : 3;
  const int fn[3] = {fg->nx, fg->ny, fg->nz}, mn[3] = {mg->nx, mg->ny, mg->nz};
  const int bins = nw_params_get_int(nw_cli_method_params(r->m), "bins");
  if (!nw_dmi_plan(fn, mn, dim, img[IN_FIXED_MASK] != NULL, img[IN_MOVING_MASK] != NULL, bins,
                   t->size, r->forced, r->cap_mb, &r->plan, &error)) {
    code = fail_usage(t, error->message);
    goto out;
  }
  for (int i = 0; i < N_IN; i++)
    r->how[i] = img[i] != NULL ? nw_tiled_how(img[i]) : NULL;
  double initial[16];
  ok = a->initial == NULL || nw_transform_read(a->initial, fg, mg, initial, &error);
  /* rank 0 claims the outputs now: an existing one stops every rank before the work */
  for (gsize i = 0; ok && t->rank == 0 && i < G_N_ELEMENTS(dist_suffixes); i++) {
    g_autofree char *p = g_strconcat(a->prefix, dist_suffixes[i], NULL);
    ok = nw_outputs_claim(outputs, p, &error);
  }
  if (ok && t->rank == 0) {
    g_autofree char *stale = g_strconcat(a->prefix, "_warped.nii.gz", NULL);
    ok = nw_outputs_claim_stale(outputs, stale, &error);
  }
  ok = ok && nw_cli_method_pick_device(r->m, &times.device_init, &error);
  if ((code = agree(t, ok, &error)) >= 0)
    goto out;
  NwDmiCounters counters = {0};
  NwDmiInputs in = {.t = t,
                    .strategy = r->strategy,
                    .layout = r->plan.layout,
                    .cap_mb = r->cap_mb,
                    .dim = dim,
                    .fixed_grid = fg,
                    .moving_grid = mg,
                    .fixed = source_of(img[IN_FIXED]),
                    .fixed_mask = source_of(img[IN_FIXED_MASK]),
                    .moving = source_of(img[IN_MOVING]),
                    .moving_mask = source_of(img[IN_MOVING_MASK]),
                    .ops = metric_ops(r),
                    .counters = &counters};
  NwAffineJob *j = nw_dmi_job_new(&in, nw_cli_method_params(r->m),
                                  a->initial != NULL ? initial : NULL, &error);
  times.read = nw_cli_seconds_since(t_read) - times.device_init;
  if ((code = agree(t, j != NULL, &error)) >= 0) {
    nw_affine_job_free(j);
    goto out;
  }
  NwCliRunLog run;
  const gint64 t_reg = g_get_monotonic_time();
  ok = run_job(j, &run, &error);
  res = ok ? nw_affine_job_result(j, &error) : NULL;
  times.reg = nw_cli_seconds_since(t_reg);
  nw_affine_job_free(j);
  if ((code = agree(t, res != NULL, &error)) >= 0)
    goto out;
  gint64 sent = counters.requests;
  ok = t->allreduce_i64(t, &sent, 1, &error);
  r->requests = sent;
  ok = ok && (t->rank != 0 || write_outputs(r, outputs, &run, &times, fg, mg, res, &error));
  if ((code = agree(t, ok, &error)) >= 0)
    goto out;
  if (t->rank == 0)
    nw_cli_method_print_summary(r->m, &times, nw_outputs_paths(outputs));
  code = NW_CLI_EXIT_OK;
out:
  nw_method_result_free(res);
  for (int i = 0; i < N_IN; i++)
    nw_tiled_close(img[i]);
  return code;
}

static gboolean rank_fn(NwDmiTransport *t, gpointer data)
{
  Run *r = data;
  r->code = rank_main(t, r);
  return r->code == NW_CLI_EXIT_OK;
}

int nw_cli_affine_distributed(NwCliMethod *m, const AffineArgs *a, const NwCliDistOptions *o,
                              int *argc, char ***argv)
{
  if (!o->on)
    return nw_cli_usage("affine", "--strategy, --blocks and --memory-cap go with --distributed");
  if (!nw_cli_mpi_built())
    return nw_cli_usage("affine", "--distributed needs MPI: this neurowarp-cli was built "
                                  "without it (install Open MPI and configure with NW_MPI=ON)");
  int rank = 0, size = 1;
  nw_cli_mpi_init(argc, argv, &rank, &size);
  Run r = {.m = m, .a = a, .cap_mb = o->cap_mb, .code = NW_CLI_EXIT_OK};
  NwDmiLayout forced;
  g_autoptr(GError) error = NULL;
  const char *metric = NULL;
  {
    const NwParams *p = nw_cli_method_params(m);
    const int i = nw_params_find(p, "metric");
    metric = p->specs[i].choices[(int)p->values[i]];
  }
  const char *usage = NULL;
  g_autofree char *why = NULL;
  if (!g_str_equal(metric, "mi"))
    usage = why = g_strdup_printf("--distributed evaluates mutual information: add --metric mi "
                                  "(the metric is %s)",
                                  metric);
  else if (!nw_dmi_strategy_parse(o->strategy != NULL ? o->strategy : "replicated", &r.strategy,
                                  &error))
    usage = error->message;
  else if (o->blocks != NULL && !nw_dmi_layout_parse(o->blocks, &forced, &error))
    usage = error->message;
  else if (o->cap_mb < 0.0)
    usage = why = g_strdup_printf("--memory-cap %g MB: expected a size above 0", o->cap_mb);
  if (usage != NULL) {
    if (rank == 0)
      nw_cli_usage("affine", usage);
    nw_cli_mpi_finish();
    return NW_CLI_EXIT_USAGE;
  }
  r.forced = o->blocks != NULL ? &forced : NULL;
  nw_cli_mpi_run(1, rank_fn, &r);
  nw_cli_mpi_finish();
  return r.code;
}
