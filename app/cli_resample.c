/* cli_resample.c — `neurowarp-cli resample IN --like REF [--transform T] -o OUT`: IN moved
 * by an affine transform onto REF's grid, written atomically as float32 NIfTI. T maps REF's
 * world to IN's (the fixed -> moving direction of a registration with REF fixed and IN
 * moving: its PREFIX_affine.txt, .mat or PREFIX_fsl.mat); without T the identity, so IN is
 * only regridded. Main thread. */
#include <math.h>
#include <string.h>

#include "affine_resample.h"
#include "atomic_file.h"
#include "cli_common.h"
#include "cli_inputs.h"
#include "io_nifti.h"
#include "nw_error.h"
#include "ras_affine.h"
#include "transform_io.h"

static const char resample_description[] =
    "Samples IN at T(x) for every voxel x of REF (world mm) and writes the result on REF's\n"
    "grid. T is an ITK transform file (.txt, .tfm, .mat: what antsRegistration, ITK-SNAP,\n"
    "Slicer or neurowarp-cli affine wrote) or an FSL FLIRT matrix (REF as -ref, IN as -in).\n"
    "Points of REF that T sends outside IN get --background. Two one-slice images are\n"
    "resampled in 2D (whatever their slices' world z).\n\n"
    "Examples:\n"
    "  neurowarp-cli resample moving.nii.gz --like fixed.nii.gz --transform reg_affine.txt \\\n"
    "      -o moving_on_fixed.nii.gz\n"
    "  neurowarp-cli resample t1_1mm.nii.gz --like t1_2mm.nii.gz -o t1_on_2mm.nii.gz\n";

typedef struct {
  const char *in, *like, *transform, *out, *interp;
  double background;
  gboolean overwrite, ignore_spacing;
} ResampleArgs;

static int resample_run(const ResampleArgs *a)
{
  g_autoptr(GError) error = NULL;
  NwSampler sampler = NW_SAMPLER_LINEAR;
  if (a->interp != NULL && !nw_sampler_parse(a->interp, &sampler, &error))
    return nw_cli_usage("resample", error->message);
  if (!g_str_has_suffix(a->out, ".nii") && !g_str_has_suffix(a->out, ".nii.gz")) {
    g_autofree char *msg =
        g_strdup_printf("%s: the output name must end in .nii or .nii.gz", a->out);
    return nw_cli_usage("resample", msg);
  }
  g_autoptr(NwOutputs) outputs = nw_outputs_new(a->overwrite);
  if (!nw_outputs_claim(outputs, a->out, &error))
    return nw_cli_fail(error);
  g_autoptr(NwVolume) in = nw_cli_read_image(a->in, a->ignore_spacing, &error);
  g_autoptr(NwVolume) ref =
      in != NULL ? nw_cli_read_image(a->like, a->ignore_spacing, &error) : NULL;
  if (ref == NULL)
    return nw_cli_fail(error);
  double t[16];
  nw_affine_identity(t);
  if (a->transform != NULL && !nw_transform_read(a->transform, ref, in, t, &error))
    return nw_cli_fail(error);
  const int dim = in->nz == 1 && ref->nz == 1 ? 2 : 3;
  g_autoptr(NwVolume) out =
      nw_affine_resample(in, ref, t, dim, sampler, (float)a->background, &error);
  if (out == NULL || !nw_nifti_write_to(outputs, a->out, out, NW_DT_FLOAT32, FALSE, &error) ||
      !nw_outputs_commit(outputs, &error))
    return nw_cli_fail(error);
  return NW_CLI_EXIT_OK;
}

int nw_cli_resample(int argc, char **argv)
{
  g_autofree char *like = NULL, *transform = NULL, *out = NULL, *interp = NULL;
  double background = 0.0;
  gboolean overwrite = FALSE, ignore_spacing = FALSE;
  GOptionEntry entries[] = {
      {"like", 0, 0, G_OPTION_ARG_FILENAME, &like, "The grid of the result (an image)", "REF"},
      {"transform", 't', 0, G_OPTION_ARG_FILENAME, &transform,
       "REF world -> IN world: ITK .txt/.tfm/.mat or FSL .mat (default: identity)", "T"},
      {"output", 'o', 0, G_OPTION_ARG_FILENAME, &out, "Where to write (.nii, .nii.gz)", "OUT"},
      {"interp", 0, 0, G_OPTION_ARG_STRING, &interp,
       "nearest (labels), linear (default) or cubic (Keys, a = -0.5)", "nearest|linear|cubic"},
      {"background", 0, 0, G_OPTION_ARG_DOUBLE, &background,
       "Value where T leads outside IN [default 0]", "V"},
      {"overwrite", 0, 0, G_OPTION_ARG_NONE, &overwrite, "Replace an existing OUT", NULL},
      {"ignore-spacing", 0, 0, G_OPTION_ARG_NONE, &ignore_spacing,
       "Take the pixels of 2D image files as 1 mm whatever their resolution tags say", NULL},
      {NULL}};
  g_autoptr(GOptionContext) ctx = nw_cli_context_new(
      "IN --like REF -o OUT", "Resample IN onto REF's grid through an affine transform.",
      resample_description);
  g_option_context_add_main_entries(ctx, entries, NULL);
  int code = NW_CLI_EXIT_OK;
  if (!nw_cli_parse(ctx, "resample", &argc, &argv, &code))
    return code;
  if (argc < 2)
    return nw_cli_usage("resample", "missing input image IN");
  if (argc > 2)
    return nw_cli_usage("resample", "more than one input image");
  if (like == NULL)
    return nw_cli_usage("resample", "missing --like REF");
  if (out == NULL)
    return nw_cli_usage("resample", "missing -o OUT");
  if (!isfinite(background))
    return nw_cli_usage("resample", "--background must be a finite number");
  ResampleArgs a = {argv[1], like, transform, out, interp, background, overwrite, ignore_spacing};
  return resample_run(&a);
}
