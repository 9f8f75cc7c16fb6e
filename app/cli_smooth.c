/* cli_smooth.c — `neurowarp-cli smooth IN -o OUT`: the "smooth" method (iterated Gaussian,
 * core/cpu/smooth_method.h) run as a job on the CPU or CUDA back end; the result is written
 * atomically as float32 NIfTI (or the input's datatype with --keep-type), after the output
 * was checked before the work (atomic_file.h). Main thread waits while the job's worker
 * thread computes. */
#include <glib/gstdio.h>
#include <string.h>

#include "atomic_file.h"
#include "cli_common.h"
#include "io_nifti.h"
#include "nw_error.h"

static const char smooth_description[] =
    "Each iteration replaces the image by its Gaussian smoothing with --sigma (mm, converted\n"
    "per axis with the voxel spacing; borders repeat the edge voxel). The output keeps the\n"
    "input's grid and affine. Volumes with NaN or Inf voxels are refused.\n\n"
    "Examples:\n"
    "  neurowarp-cli smooth t1.nii.gz -o t1_smooth.nii.gz --sigma 2 --iterations 5\n"
    "  neurowarp-cli smooth t1.nii.gz -o out.nii.gz --device cpu --json > log.jsonl\n"
    "  neurowarp-cli smooth t1.nii.gz -o out.nii.gz --params smooth.ini\n";

static gboolean datatype_from_code(int code, NwDatatype *out)
{
  static const struct {
    int code;
    NwDatatype type;
  } map[] = {{2, NW_DT_UINT8},    {4, NW_DT_INT16},    {8, NW_DT_INT32},
             {16, NW_DT_FLOAT32}, {64, NW_DT_FLOAT64}, {512, NW_DT_UINT16}};
  for (size_t i = 0; i < G_N_ELEMENTS(map); i++) {
    if (map[i].code == code) {
      *out = map[i].type;
      return TRUE;
    }
  }
  return FALSE;
}

/* Refuse early what would only fail after the computation: a name that is not NIfTI,
 * overwriting the input, and an output the set cannot take (missing or read-only folder, a
 * folder or device of that name, an existing file without --overwrite: atomic_file.h). */
static gboolean check_output(NwOutputs *o, const char *in, const char *out, GError **error)
{
  if (!g_str_has_suffix(out, ".nii") && !g_str_has_suffix(out, ".nii.gz")) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "%s: the output name must end in .nii or .nii.gz", out);
    return FALSE;
  }
  GStatBuf a, b;
  if (g_stat(in, &a) == 0 && g_stat(out, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "%s: the output is the input file; choose another name", out);
    return FALSE;
  }
  return nw_outputs_claim(o, out, error);
}

typedef struct {
  const char *in, *out;
  gboolean keep_type;
} SmoothArgs;

/* Read, check, run, write. Exit code. */
static int smooth_run(NwCliMethod *m, const SmoothArgs *a)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(NwOutputs) outputs = nw_outputs_new(nw_cli_method_overwrite(m));
  NwNiftiInfo hdr;
  if (!check_output(outputs, a->in, a->out, &error) || !nw_nifti_read_info(a->in, &hdr, &error))
    return nw_cli_fail(error);
  g_autoptr(NwVolume) vol = nw_nifti_read(a->in, &error);
  if (vol == NULL || !nw_volume_check_finite(vol, a->in, &error))
    return nw_cli_fail(error);
  NwDatatype type = NW_DT_FLOAT32;
  if (a->keep_type && !datatype_from_code(hdr.datatype_code, &type)) {
    g_set_error(&error, NW_ERROR, NW_ERROR_UNSUPPORTED,
                "%s: --keep-type: cannot write datatype %s (code %d)", a->in, hdr.datatype_name,
                hdr.datatype_code);
    return nw_cli_fail(error);
  }

  NwMethodInputs inputs = {.fixed = vol};
  int iterations = nw_params_get_int(nw_cli_method_params(m), "iterations");
  g_autoptr(NwMethodResult) result = nw_cli_method_run(m, &inputs, iterations, &error);
  if (result == NULL)
    return nw_cli_fail(error);
  const NwVolume *smoothed = nw_method_result_get(result, "smoothed");
  if (smoothed == NULL) {
    g_set_error(&error, NW_ERROR, NW_ERROR_INVALID, "smooth: the job returned no image");
    return nw_cli_fail(error);
  }
  if (!nw_nifti_write_to(outputs, a->out, smoothed, type, hdr.nifti_version == 2, &error) ||
      !nw_outputs_commit(outputs, &error))
    return nw_cli_fail(error);
  nw_cli_method_print_summary(m, NULL, nw_outputs_paths(outputs));
  return NW_CLI_EXIT_OK;
}

int nw_cli_smooth(int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(NwCliMethod) m = nw_cli_method_new("smooth", "smooth", &error);
  if (m == NULL)
    return nw_cli_fail(error);
  g_autofree char *out = NULL;
  gboolean keep_type = FALSE;
  GOptionEntry entries[] = {{"output", 'o', 0, G_OPTION_ARG_FILENAME, &out,
                             "Where to write the result (.nii, .nii.gz)", "OUT"},
                            {"keep-type", 0, 0, G_OPTION_ARG_NONE, &keep_type,
                             "Write the input's datatype (rounded, clamped) instead of float32",
                             NULL},
                            {NULL}};
  g_autoptr(GOptionContext) ctx = nw_cli_context_new(
      "IN -o OUT", "Iterated Gaussian smoothing of a volume.", smooth_description);
  g_option_context_add_main_entries(ctx, entries, NULL);
  nw_cli_method_add_options(m, ctx);
  int code = NW_CLI_EXIT_OK;
  if (!nw_cli_parse(ctx, "smooth", &argc, &argv, &code))
    return code;
  if (argc < 2)
    return nw_cli_usage("smooth", "missing input file IN");
  if (argc > 2)
    return nw_cli_usage("smooth", "more than one input file");
  if (out == NULL)
    return nw_cli_usage("smooth", "missing -o OUT");
  if (!nw_cli_method_prepare(m, &code, &error))
    return code == NW_CLI_EXIT_USAGE ? nw_cli_usage("smooth", error->message) : nw_cli_fail(error);
  SmoothArgs a = {.in = argv[1], .out = out, .keep_type = keep_type};
  return smooth_run(m, &a);
}
