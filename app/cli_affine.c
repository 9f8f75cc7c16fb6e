/* cli_affine.c — `neurowarp-cli affine FIXED MOVING -o PREFIX`: rigid, similarity or affine
 * registration (core/cpu/affine_method.h) run as a job. Writes, each atomically and all
 * named together when all are written (atomic_file.h): PREFIX_warped.nii.gz (the moving
 * image on the fixed grid), PREFIX_affine.txt and PREFIX_affine.mat (ITK text and binary),
 * PREFIX_fsl.mat (FSL FLIRT, -in MOVING -ref FIXED) and PREFIX_summary.json (with the time
 * split: read, device init, register, write). Main thread, except the report hook (the job's
 * worker thread); a pair of a batch (cli_affine.h) runs on the batch's worker thread. */
#include <math.h>
#include <string.h>

#include "affine_method.h"
#include "atomic_file.h"
#include "cli_affine.h"
#include "cli_affine_private.h"
#include "cli_common.h"
#include "cli_inputs.h"
#include "io_nifti.h"
#include "json_out.h"
#include "nw_error.h"
#include "result_io.h"
#include "transform_io.h"

static const char affine_description[] =
    "Finds the transform T that maps each point of FIXED (world mm) to the corresponding\n"
    "point of MOVING, about the fixed image's centre, and writes the moving image resampled\n"
    "onto the fixed grid. Images with one slice (PNG, PGM, TIFF, 8/16-bit, or one-slice\n"
    "NIfTI) are registered in 2D. Masks (>= 0.5 inside) limit where the images are compared.\n"
    "The transform files: PREFIX_affine.txt and PREFIX_affine.mat for ITK, ANTs\n"
    "(antsApplyTransforms -t), ITK-SNAP, Slicer and SimpleITK; PREFIX_fsl.mat for FSL\n"
    "(flirt -in MOVING -ref FIXED -applyxfm -init PREFIX_fsl.mat). The summary reports the\n"
    "parameters in mm and degrees (rotations about x, then y, then z) and the 4x4 RAS matrix.\n\n"
    "Examples:\n"
    "  neurowarp-cli affine t1.nii.gz followup.nii.gz -o out/reg\n"
    "  neurowarp-cli affine t1.nii.gz t2.nii.gz -o reg --metric mi --transform affine\n"
    "  neurowarp-cli affine a.png b.png -o reg --rotation-starts 8 --ignore-spacing\n";

/* The outputs in the order they are written. */
static const char *const suffixes[] = {"_warped.nii.gz", "_affine.txt", "_affine.mat", "_fsl.mat",
                                       "_summary.json"};
enum { OUT_WARPED, OUT_ITK_TXT, OUT_ITK_MAT, OUT_FSL, OUT_JSON, N_OUT };

static char *out_path(const AffineArgs *a, int which)
{
  return g_strconcat(a->prefix, suffixes[which], NULL);
}

static gboolean claim_outputs(NwOutputs *o, const AffineArgs *a, GError **error)
{
  for (int i = 0; i < N_OUT; i++) {
    g_autofree char *p = out_path(a, i);
    if (!nw_outputs_claim(o, p, error))
      return FALSE;
  }
  return TRUE;
}

/* The volumes and transforms, then the summary (with times->write and ->total, which end
 * before it, as the deformable commands' do), then all named together. */
static gboolean write_outputs(NwOutputs *o, const AffineArgs *a, NwCliMethod *m,
                              const NwCliRunLog *run, NwCliTimes *times,
                              const NwMethodInputs *in, const NwMethodResult *res, GError **error)
{
  const gint64 t0 = g_get_monotonic_time();
  const NwVolume *warped = nw_method_result_get(res, "warped");
  if (warped == NULL || nw_method_result_get_values(res, "transform", NULL) == NULL ||
      nw_method_result_get_values(res, "centre", NULL) == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "affine: the job returned no transform");
    return FALSE;
  }
  const int dim = in->fixed->nz == 1 ? 2 : 3;
  g_autofree char *pw = out_path(a, OUT_WARPED), *pj = out_path(a, OUT_JSON);
  if (!nw_nifti_write_to(o, pw, warped, NW_DT_FLOAT32, FALSE, error) ||
      !nw_result_write_transform(o, res, a->prefix, in->fixed, in->moving, error))
    return FALSE;
  times->write = nw_cli_seconds_since(t0);
  times->total = nw_cli_seconds_since(a->t_start);
  g_autoptr(GPtrArray) names = nw_cli_output_list(o, pj);
  g_autofree char *json =
      nw_cli_affine_summary(a, m, run, times, res, dim, (const char *const *)names->pdata, NULL, NULL);
  return nw_outputs_write_buffer(o, pj, json, -1, error) && nw_outputs_commit(o, error);
}

/* Check the outputs, read, run, write, each timed; CUDA initialises on its thread while the
 * inputs are read (as the deformable commands do). */
static gboolean affine_pair(NwCliMethod *m, const AffineArgs *a, GError **error)
{
  g_autoptr(NwOutputs) outputs = nw_outputs_new(nw_cli_method_overwrite(m));
  NwCliInputs in = {0};
  NwCliTimes times = {0};
  const char *paths[NW_CLI_N_INPUTS] = {a->fixed, a->moving, a->fixed_mask, a->moving_mask};
  double initial[16];
  nw_cli_method_start_device(m);
  if (!claim_outputs(outputs, a, error))
    return FALSE;
  gint64 t0 = g_get_monotonic_time();
  gboolean ok = nw_cli_inputs_read(&in, paths, a->ignore_spacing, error) &&
                (a->initial == NULL || nw_transform_read(a->initial, in.v[NW_CLI_FIXED],
                                                         in.v[NW_CLI_MOVING], initial, error));
  times.read = nw_cli_seconds_since(t0);
  if (!ok || !nw_cli_method_pick_device(m, &times.device_init, error)) {
    nw_cli_inputs_clear(&in);
    return FALSE;
  }
  NwMethodInputs inputs = {.fixed = in.v[NW_CLI_FIXED],
                           .moving = in.v[NW_CLI_MOVING],
                           .fixed_mask = in.v[NW_CLI_FIXED_MASK],
                           .moving_mask = in.v[NW_CLI_MOVING_MASK],
                           .initial_transform = a->initial != NULL ? initial : NULL};
  NwCliRunLog run;
  t0 = g_get_monotonic_time();
  g_autoptr(NwMethodResult) res = nw_cli_method_run_logged(m, &inputs, 0, &run, error);
  times.reg = nw_cli_seconds_since(t0);
  ok = res != NULL && write_outputs(outputs, a, m, &run, &times, &inputs, res, error);
  nw_cli_inputs_clear(&in);
  if (ok)
    nw_cli_method_print_summary(m, &times, nw_outputs_paths(outputs));
  return ok;
}

gboolean nw_cli_affine_run_pair(NwCliMethod *m, const NwCliPair *pair, GError **error)
{
  AffineArgs a = {.fixed = pair->fixed,
                  .moving = pair->moving,
                  .fixed_mask = pair->fixed_mask,
                  .moving_mask = pair->moving_mask,
                  .initial = pair->initial,
                  .prefix = pair->prefix,
                  .t_start = g_get_monotonic_time()};
  return affine_pair(m, &a, error);
}

int nw_cli_affine(int argc, char **argv)
{
  const gint64 t_start = g_get_monotonic_time();
  g_autoptr(GError) error = NULL;
  g_autoptr(NwCliMethod) m = nw_cli_method_new("affine", "affine", &error);
  if (m == NULL)
    return nw_cli_fail(error);
  g_autofree char *prefix = NULL, *fixed_mask = NULL, *moving_mask = NULL, *initial = NULL;
  gboolean ignore_spacing = FALSE;
  NwCliDistOptions dist = {0};
  GOptionEntry entries[] = {
      {"output", 'o', 0, G_OPTION_ARG_FILENAME, &prefix,
       "Prefix of the outputs: PREFIX_warped.nii.gz, PREFIX_affine.txt, PREFIX_affine.mat, "
       "PREFIX_fsl.mat, PREFIX_summary.json",
       "PREFIX"},
      {"fixed-mask", 0, 0, G_OPTION_ARG_FILENAME, &fixed_mask,
       "Compare only where this image on the fixed grid is >= 0.5", "F"},
      {"moving-mask", 0, 0, G_OPTION_ARG_FILENAME, &moving_mask,
       "Compare only where this image on the moving grid is >= 0.5", "M"},
      {"initial-transform", 0, 0, G_OPTION_ARG_FILENAME, &initial,
       "Start from this transform (ITK .txt/.mat or FSL .mat) instead of --init", "T"},
      {"ignore-spacing", 0, 0, G_OPTION_ARG_NONE, &ignore_spacing,
       "Take the pixels of 2D image files (PNG, PGM, TIFF) as 1 mm whatever their resolution "
       "tags say",
       NULL},
      {"distributed", 0, 0, G_OPTION_ARG_NONE, &dist.on,
       "Mutual information over blocks of the fixed image on every rank of mpirun (--metric "
       "mi; no rank reads a whole image; writes the transforms and the summary, not the "
       "warped image)",
       NULL},
      {"strategy", 0, 0, G_OPTION_ARG_STRING, &dist.strategy,
       "--distributed: the moving samples of other blocks from a whole moving image on every "
       "rank (replicated, the default) or asked of the rank that holds them (distributed)",
       "S"},
      {"blocks", 0, 0, G_OPTION_ARG_STRING, &dist.blocks,
       "--distributed: the fixed image's blocks along x, y (and z), e.g. 2x2 (default: chosen "
       "from the ranks and --memory-cap)",
       "AxB[xC]"},
      {"memory-cap", 0, 0, G_OPTION_ARG_DOUBLE, &dist.cap_mb,
       "--distributed: most MB (10^6 bytes) of a block on a rank's device; more blocks than "
       "ranks when needed, each rank taking its blocks in turn",
       "MB"},
      {NULL}};
  g_autoptr(GOptionContext) ctx = nw_cli_context_new(
      "FIXED MOVING -o PREFIX", "Rigid, similarity or affine registration of MOVING onto FIXED.",
      affine_description);
  g_option_context_add_main_entries(ctx, entries, NULL);
  nw_cli_method_add_options(m, ctx);
  int code = NW_CLI_EXIT_OK;
  if (!nw_cli_parse(ctx, "affine", &argc, &argv, &code))
    return code;
  if (argc < 3)
    return nw_cli_usage("affine", "expected FIXED and MOVING images");
  if (argc > 3)
    return nw_cli_usage("affine", "more than two input images");
  if (prefix == NULL)
    return nw_cli_usage("affine", "missing -o PREFIX");
  /* The device is picked after reading (affine_pair), while CUDA initialises meanwhile. */
  if (!nw_cli_method_prepare_options(m, &code, &error))
    return code == NW_CLI_EXIT_USAGE ? nw_cli_usage("affine", error->message) : nw_cli_fail(error);
  AffineArgs a = {.fixed = argv[1],
                  .moving = argv[2],
                  .fixed_mask = fixed_mask,
                  .moving_mask = moving_mask,
                  .initial = initial,
                  .prefix = prefix,
                  .ignore_spacing = ignore_spacing,
                  .t_start = t_start};
  if (dist.on || dist.strategy != NULL || dist.blocks != NULL || dist.cap_mb != 0.0) {
    const int rc = nw_cli_affine_distributed(m, &a, &dist, &argc, &argv);
    g_free(dist.strategy);
    g_free(dist.blocks);
    return rc;
  }
  return affine_pair(m, &a, &error) ? NW_CLI_EXIT_OK : nw_cli_fail(error);
}
