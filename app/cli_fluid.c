/* cli_fluid.c — `neurowarp-cli fluid FIXED MOVING -o PREFIX`: unbiased viscous-fluid
 * registration (core/cpu/fluid_method.h, issue 14) as a deformable registration command
 * (cli_deformable.h, shared with demons), which writes PREFIX_warped.nii.gz,
 * PREFIX_forward.nii.gz, PREFIX_jacobian.nii.gz and PREFIX_labels.nii.gz as --outputs asks,
 * and PREFIX_summary.json. Main thread. */
#include "cli_common.h"
#include "cli_deformable.h"

static const char fluid_description[] =
    "Registers MOVING onto FIXED with the unbiased viscous fluid (Yanovsky et al. 2007): the\n"
    "force of the intensity difference and of a symmetric-KL penalty on the Jacobian\n"
    "determinant (--lambda: log-volume changes cost the same both ways), smoothed into a\n"
    "velocity (--sigma) and transported into the displacement, at most --max-step voxels per\n"
    "iteration, with regridding when the Jacobian falls below --regrid-jacobian. The\n"
    "forward field maps each fixed voxel to its position in the moving image, x -> x + u(x),\n"
    "in millimetres (ITK/ANTs LPS convention by default); the Jacobian map is its\n"
    "determinant. MOVING may be on another grid, or moved first by --initial-transform T\n"
    "(fixed world -> moving world: ITK .txt/.tfm/.mat or FSL .mat): it is resampled onto the\n"
    "fixed grid once, and T is composed into the written field. --similarity lcc registers\n"
    "locally normalised images (smooth bias fields do not mislead the force);\n"
    "--histogram-match maps the moving intensities onto the fixed ones first. Masks (>= 0.5\n"
    "inside) limit where the intensity force acts. With labels, the moving labels are warped\n"
    "nearest-neighbour and Dice per label goes into the summary. A level ends after\n"
    "--iterations, when the relative energy change falls below --tolerance, or when no step\n"
    "lowers the energy.\n"
    "--outputs picks the files (PREFIX_NAME.nii.gz): warped, forward, jacobian, labels, or\n"
    "all; default warped,forward (and labels with --moving-labels). PREFIX_summary.json is\n"
    "always written, with the time spent reading, initialising CUDA, registering and\n"
    "writing.\n\n"
    "Examples:\n"
    "  neurowarp-cli fluid fixed.nii.gz moving.nii.gz -o out/sub01\n"
    "  neurowarp-cli fluid f.nii.gz m.nii.gz -o run --lambda 0.02 --outputs all\n"
    "  neurowarp-cli fluid f.nii.gz m.nii.gz -o run --similarity lcc --initial-transform a.txt\n";

static const char *const fluid_outputs[] = {"warped", "forward", "jacobian", "labels", NULL};

static const NwCliShownFigure fluid_shown[] = {{"l2", "L2"},
                                               {"skl", "sKL"},
                                               {"min_jac", "smallest det J"},
                                               {"max_jac", "largest det J"},
                                               {"mean_log_jac", "mean log det J"},
                                               {NULL, NULL}};

const NwCliDeformable nw_cli_fluid_command = {
    .command = "fluid",
    .method = "fluid",
    .summary = "Unbiased viscous-fluid registration of MOVING onto FIXED.",
    .description = fluid_description,
    .outputs = fluid_outputs,
    .shown = fluid_shown,
};

int nw_cli_fluid(int argc, char **argv)
{
  return nw_cli_deformable(&nw_cli_fluid_command, argc, argv);
}
