/* cli_demo_data.c — `neurowarp-cli demo-data DIR`: writes the demo case of core/demo.h
 * (Colin27 from mricron-data, or the phantom) at 1 and 2 mm with its true field. Main
 * thread; CPU only. */
#include <stdio.h>

#include "cli_common.h"
#include "demo.h"

static const char demo_description[] =
    "Writes into DIR, for RES in 1mm and 2mm: fixed_RES.nii.gz, moving_RES.nii.gz (fixed\n"
    "deformed by a known smooth diffeomorphism, with a smooth intensity bias and noise),\n"
    "fixed_labels_RES.nii.gz, moving_labels_RES.nii.gz, true_field_RES.nii.gz (the true\n"
    "displacement, ITK/ANTs convention: 5D, LPS mm) and README.txt. The source is Colin27\n"
    "from mricron-data (" NW_MRICRON_TEMPLATES ") when installed, else a generated head\n"
    "phantom. The same seed gives the same bytes.\n\n"
    "--draw makes a case of the second generator, for evaluations over many cases: its\n"
    "deformation (a velocity field integrated to a diffeomorphism, 2-8 mm, of 2-8 waves\n"
    "of 0.3-1.0 head widths), bias (0-30 %, drawn shape), noise (0.5-5 %, Gaussian or\n"
    "Rician) and contrast change (gamma 0.75-1.33) are all drawn from --seed; README.txt\n"
    "and the line printed name them.\n\n"
    "Examples:\n"
    "  neurowarp-cli demo-data ~/neurowarp-demo\n"
    "  neurowarp-cli demo-data /tmp/phantom --phantom --seed 7\n"
    "  neurowarp-cli demo-data /tmp/case17 --draw --seed 17 --resolution 2\n";

int nw_cli_demo_data(int argc, char **argv)
{
  NwDemoOptions o;
  nw_demo_options_init(&o);
  gint64 seed = o.seed;
  gboolean phantom = FALSE, draw = FALSE;
  double max_disp = o.max_disp_mm;
  gint resolution = 0;
  GOptionEntry entries[] = {{"seed", 0, 0, G_OPTION_ARG_INT64, &seed,
                             "Seed of the deformation and the noise [default 1]", "N"},
                            {"phantom", 0, 0, G_OPTION_ARG_NONE, &phantom,
                             "Use the generated head phantom even when mricron-data is installed",
                             NULL},
                            {"max-disp", 0, 0, G_OPTION_ARG_DOUBLE, &max_disp,
                             "Peak displacement of the deformation [mm, 0..20, default 4]", "MM"},
                            {"draw", 0, 0, G_OPTION_ARG_NONE, &draw,
                             "Draw every property of the case from --seed (the second "
                             "generator; --max-disp is drawn too)",
                             NULL},
                            {"resolution", 0, 0, G_OPTION_ARG_INT, &resolution,
                             "Write only this resolution: 1 or 2 mm [default: both]", "MM"},
                            {NULL}};
  g_autoptr(GOptionContext) ctx =
      nw_cli_context_new("DIR", "Write the demo registration case.", demo_description);
  g_option_context_add_main_entries(ctx, entries, NULL);
  int code = NW_CLI_EXIT_OK;
  if (!nw_cli_parse(ctx, "demo-data", &argc, &argv, &code))
    return code;
  if (argc != 2)
    return nw_cli_usage("demo-data", argc < 2 ? "missing DIR" : "more than one DIR");
  if (seed < 0 || seed > G_MAXUINT32)
    return nw_cli_usage("demo-data", "--seed: must be 0..4294967295");
  if (!(max_disp >= 0.0 && max_disp <= 20.0))
    return nw_cli_usage("demo-data", "--max-disp: must be 0..20 mm");
  if (resolution != 0 && resolution != 1 && resolution != 2)
    return nw_cli_usage("demo-data", "--resolution: must be 1 or 2");
  o.seed = (guint32)seed;
  o.force_phantom = phantom;
  o.max_disp_mm = max_disp;
  if (draw)
    nw_demo_draw(&o);
  g_autoptr(GError) error = NULL;
  if (!nw_demo_write_resolutions(&o, argv[1], resolution, &error))
    return nw_cli_fail(error);
  g_autofree char *line = nw_demo_describe(&o);
  printf("%s: demo case written (%s)\n", argv[1], line);
  return NW_CLI_EXIT_OK;
}
