/* cli.c — neurowarp-cli: the headless front end. Dispatches to one subcommand per file
 * (cli_info.c, cli_smooth.c, cli_demo_data.c, cli_demons.c, cli_fluid.c, cli_affine.c,
 * cli_resample.c, cli_denoise_surface.c, cli_batch.c; demons and fluid over cli_deformable.c); the shared option frame, JSON output and job running live in
 * cli_common.c. Main thread; the back end (CPU/CUDA) is picked per method.
 *
 * Exit codes: 0 success, 1 runtime failure, 2 usage error, 130 cancelled (cli_common.h). */
#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "cli_common.h"
#include "method_table.h"

#ifndef NW_VERSION
#define NW_VERSION "unknown"
#endif

typedef struct {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} Subcommand;

static const Subcommand subcommands[] = {
    {"info", nw_cli_info, "Describe NIfTI volumes and 2D images (header, geometry, intensities)"},
    {"smooth", nw_cli_smooth, "Iterated Gaussian smoothing of a volume (CPU or CUDA)"},
    {"demons", nw_cli_demons, "Diffeomorphic log-demons registration (SSD or LCC, CPU or CUDA)"},
    {"fluid", nw_cli_fluid, "Unbiased viscous-fluid registration (symmetric-KL Jacobian term, CPU)"},
    {"affine", nw_cli_affine,
     "Rigid, similarity or affine registration, 2D or 3D (MSE, NCC or mutual information)"},
    {"resample", nw_cli_resample, "Resample an image onto another's grid through a transform"},
    {"denoise-surface", nw_cli_denoise_surface,
     "Level-set non-local-means denoising of a surface (mask, labels, SDF or mesh)"},
    {"batch", nw_cli_batch,
     "Register every pair of a CSV list (any method or chain), resuming an earlier run"},
    {"demo-data", nw_cli_demo_data,
     "Write the demo case: Colin27 (or a phantom), a warped copy and the true field"},
};

static void print_help(FILE *out)
{
  fprintf(out,
          "Usage: %s [--version] [--help] SUBCOMMAND [OPTION...] ARGS...\n\n"
          "Image registration and smoothing on the GPU (CUDA) or the CPU, without a window.\n\n"
          "Subcommands:\n",
          NW_CLI_PROG);
  for (size_t i = 0; i < G_N_ELEMENTS(subcommands); i++)
    fprintf(out, "  %-15s %s\n", subcommands[i].name, subcommands[i].summary);
  fprintf(out,
          "\n'%s SUBCOMMAND --help' describes a subcommand and its options.\n"
          "Exit status: 0 success, 1 failure (bad file, device error), 2 usage error,\n"
          "130 cancelled (Ctrl-C).\n",
          NW_CLI_PROG);
}

int main(int argc, char **argv)
{
  /* The user's character set, so that GOption's usage reads "[OPTION…]" and not "[OPTION?]";
   * numbers stay in the C locale: scripts read the output. */
  setlocale(LC_ALL, "");
  setlocale(LC_NUMERIC, "C");
  nw_methods_register_builtin();
  if (argc < 2)
    return nw_cli_usage(NULL, "missing subcommand");
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
    print_help(stdout);
    return NW_CLI_EXIT_OK;
  }
  if (strcmp(cmd, "--version") == 0) {
    printf("%s %s\n", NW_CLI_PROG, NW_VERSION);
    return NW_CLI_EXIT_OK;
  }
  for (size_t i = 0; i < G_N_ELEMENTS(subcommands); i++) {
    if (strcmp(cmd, subcommands[i].name) == 0) {
      /* GOptionContext names the program in its usage line. */
      g_autofree char *prg = g_strdup_printf("%s %s", NW_CLI_PROG, cmd);
      g_set_prgname(prg);
      return nw_cli_exit(subcommands[i].run(argc - 1, argv + 1));
    }
  }
  g_autofree char *msg = cmd[0] == '-' ? g_strdup_printf("unknown option '%s'", cmd)
                                       : g_strdup_printf("unknown subcommand '%s'", cmd);
  return nw_cli_usage(NULL, msg);
}
