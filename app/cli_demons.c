/* cli_demons.c — `neurowarp-cli demons FIXED MOVING -o PREFIX`: diffeomorphic log-demons
 * (core/cpu/demons_method.h) as a deformable registration command (cli_deformable.h), which
 * writes PREFIX_warped.nii.gz, PREFIX_forward.nii.gz (exp(v)), PREFIX_inverse.nii.gz
 * (exp(-v)), PREFIX_velocity.nii.gz, PREFIX_jacobian.nii.gz and PREFIX_labels.nii.gz as
 * --outputs asks, and PREFIX_summary.json. Main thread. */
#include "cli_common.h"
#include "cli_deformable.h"

static const char demons_description[] =
    "Registers MOVING onto FIXED with the diffeomorphic log-demons: the forward field maps\n"
    "each fixed voxel to its position in the moving image, x -> x + u(x); the inverse field\n"
    "maps back. Fields are written in millimetres (ITK/ANTs LPS convention by default).\n"
    "MOVING may be on another grid (size, voxel size, orientation): it is resampled onto the\n"
    "fixed grid once, through --initial-transform T if given (fixed world -> moving world:\n"
    "ITK .txt/.tfm/.mat or FSL .mat, e.g. PREFIX_affine.txt of `neurowarp-cli affine`),\n"
    "and the forward field, warped image and labels then map to the original MOVING: T is\n"
    "composed into the field (no separate transform to apply); the inverse field then lies\n"
    "on the moving grid. With labels, the moving labels are warped nearest-neighbour and\n"
    "Dice per label against the fixed labels goes into the summary. Masks (>= 0.5 inside;\n"
    "the fixed mask on the fixed grid, the moving mask on the moving grid) limit where the\n"
    "demons force acts: only where the fixed mask and the moving mask warped by the current\n"
    "field are inside; elsewhere the update is zero before its smoothing, and the energy, MSE\n"
    "and NCC are over that region. A level ends after --iterations or when the relative\n"
    "energy change falls below --tolerance.\n"
    "--outputs picks the files (PREFIX_NAME.nii.gz): warped, forward, inverse, velocity,\n"
    "jacobian, labels, or all; default warped,forward (and labels with --moving-labels).\n"
    "PREFIX_summary.json is always written, with the time spent reading, initialising CUDA,\n"
    "registering and writing; with --overwrite, outputs of an earlier run with this prefix\n"
    "that this run does not write are removed.\n\n"
    "Examples:\n"
    "  neurowarp-cli demons fixed.nii.gz moving.nii.gz -o out/sub01\n"
    "  neurowarp-cli demons f.nii.gz m.nii.gz -o run --similarity lcc --sigma-diff 1.5\n"
    "  neurowarp-cli demons f.nii.gz m.nii.gz -o run --initial-transform reg_affine.txt\n"
    "  neurowarp-cli demons f.nii.gz m.nii.gz -o run --outputs warped,forward,inverse\n"
    "  neurowarp-cli demons f.nii.gz m.nii.gz -o run --fixed-mask head_mask.nii.gz\n"
    "  neurowarp-cli demons f.nii.gz m.nii.gz -o run --fixed-labels fl.nii.gz \\\n"
    "      --moving-labels ml.nii.gz --json > log.jsonl\n";

static const char *const demons_outputs[] = {"warped",   "forward", "inverse", "velocity",
                                             "jacobian", "labels",  NULL};

static const NwCliShownFigure demons_shown[] = {
    {"energy", "energy"}, {"ncc", "NCC"}, {"min_jac", "smallest det J"}, {NULL, NULL}};

const NwCliDeformable nw_cli_demons_command = {
    .command = "demons",
    .method = "demons",
    .summary = "Diffeomorphic log-demons registration of MOVING onto FIXED.",
    .description = demons_description,
    .outputs = demons_outputs,
    .shown = demons_shown,
};

int nw_cli_demons(int argc, char **argv)
{
  return nw_cli_deformable(&nw_cli_demons_command, argc, argv);
}
