/* cli_deformable.c — the command of a dense deformable registration, `neurowarp-cli demons`
 * and `neurowarp-cli fluid` (cli_deformable.h), run as a job on the CPU or CUDA back end.
 * Writes, each atomically, what --outputs asks for (default: warped and forward, and labels
 * with --moving-labels): PREFIX_NAME.nii.gz for the command's outputs (fields in the ITK
 * convention by default, RAS with --field-convention ras; io_nifti.h), and always
 * PREFIX_summary.json (with the time split: read, device init, register, write): all checked
 * before the work and named together when all are written (atomic_file.h). CUDA is
 * initialised on a thread while the inputs are read (cli_common.h,
 * nw_cli_method_start_device). Pairs on different grids, or with --initial-transform, are
 * registered on the fixed grid after resampling the moving image there once (with the moving
 * mask); the written fields, warped image and labels then map to the ORIGINAL moving image
 * (field_affine.h, docs/FIELDS.md). --fixed-mask and --moving-mask are read and checked as
 * the affine command's (cli_inputs.h) and limit where the force acts and the figures are
 * taken. Without --json it ends by saying what was achieved (iterations, time, final
 * figures, Dice, files written) on stdout. Main thread, except the report hook, which runs on
 * the job's worker thread while the main thread waits. */
#include <stdio.h>
#include <string.h>

#include "atomic_file.h"
#include "cli_common.h"
#include "cli_deformable.h"
#include "cli_inputs.h"
#include "cli_outputs.h"
#include "field.h"
#include "io_nifti.h"
#include "json_out.h"
#include "nw_error.h"
#include "ras_affine.h"
#include "regrid.h"
#include "result_io.h"
#include "transform_io.h"

/* The index of output `name` in the command's outputs, -1 when it has none. */
static int out_index(const NwCliDeformable *c, const char *name)
{
  for (int i = 0; c->outputs[i] != NULL; i++)
    if (strcmp(c->outputs[i], name) == 0)
      return i;
  return -1;
}

static guint32 out_bit(const NwCliDeformable *c, const char *name)
{
  const int i = out_index(c, name);
  return i >= 0 ? 1u << i : 0u;
}

typedef struct {
  const char *fixed, *moving, *fixed_labels, *moving_labels, *fixed_mask, *moving_mask;
  const char *initial, *prefix;
  NwFieldConvention conv;
  const NwCliDeformable *cmd; /* the command: its name, method and outputs */
  guint32 outputs;            /* bit i: cmd->outputs[i] */
  gint64 t_start;  /* the command's start (g_get_monotonic_time), for the total time */
} DeformArgs;

/* The inputs as read (moving, moving labels and moving mask on the moving grid), and with
 * regrid the moving image, labels and mask resampled onto the fixed grid through the initial
 * transform (regrid.h), which the job then sees. Masks NULL when not given. */
typedef struct {
  NwVolume *fixed, *moving, *fixed_labels, *moving_labels, *fixed_mask, *moving_mask;
  NwRegrid g;                     /* g.t_ras: the identity unless --initial-transform */
  NwVolume *moving_mask_on_fixed; /* with regrid and a moving mask */
  gboolean regrid;
} DeformInputs;

static void inputs_clear(DeformInputs *in)
{
  nw_regrid_clear(&in->g);
  g_clear_pointer(&in->fixed, nw_volume_free);
  g_clear_pointer(&in->moving, nw_volume_free);
  g_clear_pointer(&in->fixed_labels, nw_volume_free);
  g_clear_pointer(&in->moving_labels, nw_volume_free);
  g_clear_pointer(&in->fixed_mask, nw_volume_free);
  g_clear_pointer(&in->moving_mask, nw_volume_free);
  g_clear_pointer(&in->moving_mask_on_fixed, nw_volume_free);
}

/* The moving image and labels the job registers: on the fixed grid. */
static const NwVolume *job_moving(const DeformInputs *in)
{
  return in->regrid ? in->g.moving_on_fixed : in->moving;
}

static const NwVolume *job_moving_labels(const DeformInputs *in)
{
  return in->regrid ? in->g.labels_on_fixed : in->moving_labels;
}

static const NwVolume *job_moving_mask(const DeformInputs *in)
{
  return in->regrid ? in->moving_mask_on_fixed : in->moving_mask;
}

/* Pairs that cannot be registered at all: a one-slice image against a volume. The size
 * message of nw_volume_check_same_grid ("... must be on one grid") says why. */
static gboolean check_dimensionality(const DeformArgs *a, const DeformInputs *in, GError **error)
{
  if ((in->fixed->nz == 1) == (in->moving->nz == 1))
    return TRUE;
  return nw_volume_check_same_grid(in->fixed, a->fixed, in->moving, a->moving, error);
}

/* Read every input and check the grids: fixed labels and mask on the fixed grid, moving
 * labels and mask on the moving one. */
static gboolean read_inputs(const DeformArgs *a, DeformInputs *in, GError **error)
{
  if ((in->fixed = nw_nifti_read(a->fixed, error)) == NULL ||
      (in->moving = nw_nifti_read(a->moving, error)) == NULL ||
      !check_dimensionality(a, in, error) || !nw_volume_check_finite(in->fixed, a->fixed, error) ||
      !nw_volume_check_finite(in->moving, a->moving, error))
    return FALSE;
  /* Labels too must be numbers: a NaN label would be counted as label 0. */
  if (a->fixed_labels != NULL &&
      ((in->fixed_labels = nw_nifti_read(a->fixed_labels, error)) == NULL ||
       !nw_volume_check_same_grid(in->fixed, a->fixed, in->fixed_labels, a->fixed_labels, error) ||
       !nw_volume_check_finite(in->fixed_labels, a->fixed_labels, error)))
    return FALSE;
  if (a->moving_labels != NULL &&
      ((in->moving_labels = nw_nifti_read(a->moving_labels, error)) == NULL ||
       !nw_volume_check_same_grid(in->moving, a->moving, in->moving_labels, a->moving_labels,
                                  error) ||
       !nw_volume_check_finite(in->moving_labels, a->moving_labels, error)))
    return FALSE;
  /* Masks as the affine command reads them (NIfTI or 2D image files, finite, on the grid). */
  if (a->fixed_mask != NULL &&
      (in->fixed_mask = nw_cli_read_mask(NW_CLI_FIXED_MASK, a->fixed_mask, in->fixed, a->fixed,
                                         FALSE, error)) == NULL)
    return FALSE;
  return a->moving_mask == NULL ||
         (in->moving_mask = nw_cli_read_mask(NW_CLI_MOVING_MASK, a->moving_mask, in->moving,
                                             a->moving, FALSE, error)) != NULL;
}

/* Moving image and mask (linear) and labels (nearest) onto the fixed grid through the
 * initial transform, once, when the grids differ or a transform was given; else nothing. */
static gboolean regrid_moving(const DeformArgs *a, DeformInputs *in, GError **error)
{
  double t[16];
  nw_affine_identity(t);
  nw_affine_identity(in->g.t_ras);
  if (a->initial != NULL && !nw_transform_read(a->initial, in->fixed, in->moving, t, error))
    return FALSE;
  in->regrid = a->initial != NULL || !nw_volume_same_grid(in->fixed, in->moving);
  if (!in->regrid)
    return TRUE;
  return nw_regrid_init(&in->g, in->fixed, in->moving, in->moving_labels, t, NULL, error) &&
         (in->moving_mask == NULL || (in->moving_mask_on_fixed = nw_regrid_mask(
                                          &in->g, in->fixed, in->moving_mask, error)) != NULL);
}

/* Every output is claimed before the work (atomic_file.h): folder, permissions, existing
 * files. The files of the outputs not asked for (PREFIX_inverse.nii.gz of an earlier run
 * with --outputs all, PREFIX_labels.nii.gz of one with labels) are stale: refused, or
 * removed with --overwrite, so the folder never mixes two runs. */
static gboolean claim_outputs(NwOutputs *o, const DeformArgs *a, GError **error)
{
  g_autofree char *json = g_strdup_printf("%s_summary.json", a->prefix);
  return nw_cli_outputs_claim(o, a->prefix, a->cmd->outputs, a->outputs, error) &&
         nw_outputs_claim(o, json, error);
}

/* --outputs (NULL: the default) into a->outputs; usage errors. */
static gboolean parse_outputs(DeformArgs *a, const char *text, GError **error)
{
  const NwCliDeformable *c = a->cmd;
  const guint32 labels = out_bit(c, "labels");
  gboolean all = FALSE;
  a->outputs = out_bit(c, "warped") | out_bit(c, "forward");
  if (text != NULL && !nw_cli_outputs_parse(text, c->outputs, &a->outputs, &all, error))
    return FALSE;
  if ((a->outputs & labels) && a->moving_labels == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "--outputs labels needs --moving-labels");
    return FALSE;
  }
  if (all)
    a->outputs = (1u << g_strv_length((char **)c->outputs)) - 1;
  /* Labels are warped whenever there are labels to warp (Dice needs them), and written when
   * asked for, by default or by all. */
  if (a->moving_labels == NULL)
    a->outputs &= ~labels;
  else if (text == NULL)
    a->outputs |= labels;
  return TRUE;
}

/* The method makes every volume at its end whatever is asked (demons_method.h: exp(-v),
 * v and det J beside exp(v), downloaded from the GPU on CUDA; fluid_method.h likewise): a
 * small part of the job, left so rather than giving the method a list of outputs. What was not asked for is
 * dropped here, before composing with the initial transform (regrid.h: carrying the inverse
 * onto the moving grid costs most there) and before writing. The forward field stays for
 * that composition and the labels for Dice; those are only not written. */
static void drop_unasked(NwMethodResult *res, const DeformArgs *a)
{
  for (int i = 0; a->cmd->outputs[i] != NULL; i++) {
    const char *name = a->cmd->outputs[i];
    if (!(a->outputs & (1u << i)) && strcmp(name, "forward") != 0 && strcmp(name, "labels") != 0)
      nw_volume_free(nw_method_result_take(res, name));
  }
}

/* Dice per label of the warped moving labels against the fixed ones, its mean and the mean
 * before (moving labels unregistered); NULL without labels. */
static GArray *dice(const DeformInputs *in, const NwMethodResult *res, double *mean, double *before)
{
  const NwVolume *warped = nw_method_result_get(res, "labels");
  if (in->fixed_labels == NULL || warped == NULL)
    return NULL;
  g_autoptr(GArray) d0 = nw_labels_dice(in->fixed_labels, job_moving_labels(in), before);
  return nw_labels_dice(in->fixed_labels, warped, mean);
}

/* "labels":[{"label":..,"dice":..,"n_fixed":..,"n_warped":..},..],"mean_dice":..,
 * "mean_dice_before":.. (moving labels against fixed labels, unregistered). */
static void json_dice(JsonBuilder *b, const DeformInputs *in, const NwMethodResult *res)
{
  double mean = 0.0, before = 0.0;
  g_autoptr(GArray) d = dice(in, res, &mean, &before);
  if (d == NULL)
    return;
  json_builder_set_member_name(b, "labels");
  json_builder_begin_array(b);
  for (guint i = 0; i < d->len; i++) {
    const NwLabelDice *l = &g_array_index(d, NwLabelDice, i);
    json_builder_begin_object(b);
    nw_json_member_number(b, "label", l->label);
    nw_json_member_number(b, "dice", l->dice);
    nw_json_member_number(b, "n_fixed", (double)l->n_a);
    nw_json_member_number(b, "n_warped", (double)l->n_b);
    json_builder_end_object(b);
  }
  json_builder_end_array(b);
  nw_json_member_number(b, "mean_dice", mean);
  nw_json_member_number(b, "mean_dice_before", before);
}

static char *summary_json(const DeformArgs *a, NwCliMethod *m, const NwCliRunLog *run,
                          const NwCliTimes *times, const DeformInputs *in,
                          const NwMethodResult *res, const char *const *outputs)
{
  g_autoptr(JsonBuilder) b = json_builder_new();
  nw_cli_summary_begin(b, m, a->fixed, a->moving);
  /* "initial_transform": the file or null; "moving_resampled": whether MOVING went onto the
   * fixed grid first (the fields then include initial_matrix_ras). */
  json_builder_set_member_name(b, "initial_transform");
  if (a->initial != NULL)
    json_builder_add_string_value(b, a->initial);
  else
    json_builder_add_null_value(b);
  json_builder_set_member_name(b, "moving_resampled");
  json_builder_add_boolean_value(b, in->regrid);
  json_builder_set_member_name(b, "initial_matrix_ras");
  nw_json_add_matrix4(b, in->g.t_ras);
  json_dice(b, in, res);
  return nw_cli_summary_end(b, run, times, outputs);
}

/* The result volumes asked for, then the summary (which lists every output, itself
 * included), into the set, then all named together. times->write and ->total end when the
 * volumes are written: the summary holds them, so its own few bytes and the naming (renames,
 * no data) come after. */
static gboolean write_outputs(NwOutputs *o, const DeformArgs *a, NwCliMethod *m,
                              const NwCliRunLog *run, NwCliTimes *times, const DeformInputs *in,
                              const NwMethodResult *res, GError **error)
{
  const gint64 t0 = g_get_monotonic_time();
  g_autofree const char **asked = nw_cli_outputs_names(a->cmd->outputs, a->outputs);
  if (!nw_result_write_names(o, res, a->cmd->method, a->prefix, asked, a->conv, error))
    return FALSE;
  times->write = nw_cli_seconds_since(t0);
  times->total = nw_cli_seconds_since(a->t_start);
  g_autofree char *json_path = g_strdup_printf("%s_summary.json", a->prefix);
  g_autoptr(GPtrArray) names = nw_cli_output_list(o, json_path);
  g_autofree char *json =
      summary_json(a, m, run, times, in, res, (const char *const *)names->pdata);
  return nw_outputs_write_buffer(o, json_path, json, -1, error) && nw_outputs_commit(o, error);
}

/* What was achieved, for people (--json has it all in the summary object):
 *   demons: 30 iterations (levels 10 + 10 + 10) in 4.1 s on the CPU
 *   final: energy 7.419 · NCC 0.9976 · smallest det J 0.3746 · no folds
 *   Dice 0.851 (before 0.712), mean over 95 labels
 *   time: read 0.4 s · device 0.2 s · register 0.8 s · write 1.1 s · total 2.6 s
 *   wrote 4 files: PREFIX_warped.nii.gz, ... */
static void print_report(const DeformArgs *a, NwCliMethod *m, const NwCliRunLog *run,
                         const NwCliTimes *t,
                         const DeformInputs *in, const NwMethodResult *res,
                         const char *const *outputs)
{
  const NwCliDeformable *c = a->cmd;
  printf("%s: %d iteration%s", c->command, run->log.last.iteration,
         run->log.last.iteration == 1 ? "" : "s");
  for (int l = 0; l < run->log.n_levels && run->log.n_levels > 1; l++)
    printf("%s%d", l == 0 ? " (levels " : " + ", run->log.level_iterations[l]);
  printf("%s in %.1f s on the %s\n", run->log.n_levels > 1 ? ")" : "", run->seconds,
         nw_cli_method_ops(m)->device == NW_DEVICE_CUDA ? "GPU" : "CPU");
  printf("final:");
  for (int i = 0; c->shown[i].name != NULL; i++)
    for (int f = 0; f < run->log.last.n_figures; f++)
      if (strcmp(run->log.last.figure_names[f], c->shown[i].name) == 0)
        printf("%s %s %.4g", i > 0 ? " ·" : "", c->shown[i].label, run->log.last.figures[f]);
  for (int f = 0; f < run->log.last.n_figures; f++)
    if (strcmp(run->log.last.figure_names[f], "folds") == 0 && run->log.last.figures[f] == 0)
      printf(" · no folds");
    else if (strcmp(run->log.last.figure_names[f], "folds") == 0)
      printf(" · %.0f folded voxels", run->log.last.figures[f]);
  printf("\n");
  double mean = 0.0, before = 0.0;
  g_autoptr(GArray) d = dice(in, res, &mean, &before);
  if (d != NULL)
    printf("Dice %.3f (before %.3f), mean over %u labels\n", mean, before, d->len);
  printf("time: read %.1f s · device %.1f s · register %.1f s · write %.1f s · total %.1f s\n",
         t->read, t->device_init, t->reg, t->write, t->total);
  nw_cli_print_written(outputs);
}

/* Check the outputs, read, check, run, write, each timed. CUDA initialises on its thread
 * meanwhile from the start to the device pick after reading. The closing report on stdout
 * unless --json or in a batch. */
static gboolean deform_pair(NwCliMethod *m, const DeformArgs *a, GError **error)
{
  g_autoptr(NwOutputs) outputs = nw_outputs_new(nw_cli_method_overwrite(m));
  DeformInputs in = {0};
  NwCliTimes times = {0};
  nw_cli_method_start_device(m);
  if (!claim_outputs(outputs, a, error))
    return FALSE;
  gint64 t0 = g_get_monotonic_time();
  gboolean ok = read_inputs(a, &in, error) && regrid_moving(a, &in, error);
  times.read = nw_cli_seconds_since(t0);
  if (!ok || !nw_cli_method_pick_device(m, &times.device_init, error)) {
    inputs_clear(&in);
    return FALSE;
  }
  NwMethodInputs inputs = {.fixed = in.fixed,
                           .moving = job_moving(&in),
                           .fixed_labels = in.fixed_labels,
                           .moving_labels = job_moving_labels(&in),
                           .fixed_mask = in.fixed_mask,
                           .moving_mask = job_moving_mask(&in)};
  /* An upper bound for the progress line: levels may be capped and levels may end early. */
  const NwParams *p = nw_cli_method_params(m);
  const int max_iterations = nw_params_get_int(p, "levels") * nw_params_get_int(p, "iterations");
  NwCliRunLog run;
  t0 = g_get_monotonic_time();
  g_autoptr(NwMethodResult) res =
      nw_cli_method_run_logged(m, &inputs, max_iterations, &run, error);
  if (res != NULL)
    drop_unasked(res, a);
  ok = res != NULL && (!in.regrid || nw_regrid_compose_result(&in.g, res, error));
  times.reg = nw_cli_seconds_since(t0); /* with the composition: the fields are the job's result */
  ok = ok && write_outputs(outputs, a, m, &run, &times, &in, res, error);
  if (ok && !nw_cli_method_json(m) && !nw_cli_method_in_batch(m))
    print_report(a, m, &run, &times, &in, res, nw_outputs_paths(outputs));
  inputs_clear(&in);
  if (ok)
    nw_cli_method_print_summary(m, &times, nw_outputs_paths(outputs));
  return ok;
}

gboolean nw_cli_deformable_run_pair(const NwCliDeformable *c, NwCliMethod *m,
                                    const NwCliPair *pair, GError **error)
{
  DeformArgs a = {.fixed = pair->fixed,
                  .moving = pair->moving,
                  .fixed_labels = pair->fixed_labels,
                  .moving_labels = pair->moving_labels,
                  .fixed_mask = pair->fixed_mask,
                  .moving_mask = pair->moving_mask,
                  .initial = pair->initial,
                  .prefix = pair->prefix,
                  .conv = NW_FIELD_ITK,
                  .cmd = c,
                  .t_start = g_get_monotonic_time()};
  return parse_outputs(&a, NULL, error) && deform_pair(m, &a, error);
}

int nw_cli_deformable(const NwCliDeformable *c, int argc, char **argv)
{
  const gint64 t_start = g_get_monotonic_time();
  g_autoptr(GError) error = NULL;
  g_autoptr(NwCliMethod) m = nw_cli_method_new(c->command, c->method, &error);
  if (m == NULL)
    return nw_cli_fail(error);
  g_autofree char *prefix = NULL, *fixed_labels = NULL, *moving_labels = NULL, *conv = NULL;
  g_autofree char *initial = NULL, *outputs = NULL, *fixed_mask = NULL, *moving_mask = NULL;
  g_autofree char *names = g_strjoinv(", ", (char **)c->outputs);
  g_autofree char *outputs_help = g_strdup_printf(
      "Outputs to write, comma-separated: %s, or all [default warped,forward, and labels with "
      "--moving-labels]",
      names);
  GOptionEntry entries[] = {
      {"output", 'o', 0, G_OPTION_ARG_FILENAME, &prefix,
       "Prefix of the outputs: PREFIX_warped.nii.gz, PREFIX_forward.nii.gz, ...", "PREFIX"},
      {"outputs", 0, 0, G_OPTION_ARG_STRING, &outputs,
       outputs_help,
       "LIST"},
      {"fixed-labels", 0, 0, G_OPTION_ARG_FILENAME, &fixed_labels,
       "Label map on the fixed grid, for Dice against the warped moving labels", "F"},
      {"moving-labels", 0, 0, G_OPTION_ARG_FILENAME, &moving_labels,
       "Label map on the moving grid, warped nearest-neighbour", "M"},
      {"fixed-mask", 0, 0, G_OPTION_ARG_FILENAME, &fixed_mask,
       "Mask on the fixed grid (>= 0.5 inside): the force acts, and the similarity figures are "
       "taken, only inside",
       "F"},
      {"moving-mask", 0, 0, G_OPTION_ARG_FILENAME, &moving_mask,
       "Mask on the moving grid (>= 0.5 inside): the force acts only where it, warped by the "
       "current field, is inside",
       "M"},
      {"initial-transform", 0, 0, G_OPTION_ARG_FILENAME, &initial,
       "Fixed world -> moving world (ITK .txt/.tfm/.mat or FSL .mat), applied before the "
       "registration and composed into the written fields",
       "T"},
      {"field-convention", 0, 0, G_OPTION_ARG_STRING, &conv,
       "Saved fields: itk (LPS mm, intent vector; default) or ras (RAS mm, intent dispvect)",
       "itk|ras"},
      {NULL}};
  g_autoptr(GOptionContext) ctx = nw_cli_context_new(
      "FIXED MOVING -o PREFIX", c->summary, c->description);
  g_option_context_add_main_entries(ctx, entries, NULL);
  nw_cli_method_add_options(m, ctx);
  int code = NW_CLI_EXIT_OK;
  if (!nw_cli_parse(ctx, c->command, &argc, &argv, &code))
    return code;
  if (argc < 3)
    return nw_cli_usage(c->command, "expected FIXED and MOVING images");
  if (argc > 3)
    return nw_cli_usage(c->command, "more than two input images");
  if (prefix == NULL)
    return nw_cli_usage(c->command, "missing -o PREFIX");
  DeformArgs a = {.fixed = argv[1],
                  .moving = argv[2],
                  .fixed_labels = fixed_labels,
                  .moving_labels = moving_labels,
                  .fixed_mask = fixed_mask,
                  .moving_mask = moving_mask,
                  .initial = initial,
                  .prefix = prefix,
                  .conv = NW_FIELD_ITK,
                  .cmd = c,
                  .t_start = t_start};
  if (conv != NULL && g_ascii_strcasecmp(conv, "ras") == 0)
    a.conv = NW_FIELD_RAS;
  else if (conv != NULL && g_ascii_strcasecmp(conv, "itk") != 0)
    return nw_cli_usage(c->command, "--field-convention: expected itk or ras");
  if (fixed_labels != NULL && moving_labels == NULL)
    return nw_cli_usage(c->command, "--fixed-labels needs --moving-labels");
  if (!parse_outputs(&a, outputs, &error))
    return nw_cli_usage(c->command, error->message);
  /* The device is picked after reading (deform_run), while CUDA initialises meanwhile. */
  if (!nw_cli_method_prepare_options(m, &code, &error))
    return code == NW_CLI_EXIT_USAGE ? nw_cli_usage(c->command, error->message) : nw_cli_fail(error);
  return deform_pair(m, &a, &error) ? NW_CLI_EXIT_OK : nw_cli_fail(error);
}
