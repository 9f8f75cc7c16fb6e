/* fluid_common.c — the parts of the "fluid" method (fluid_method.h) that a CUDA twin shares
 * with the CPU reference: the parameter table and the live plot's figures. Host code. */
#include "fluid_method.h"

static const char *const fluid_similarity_choices[] = {"ssd", "lcc", NULL};

const char *const nw_fluid_plot_figures[] = {"l2",      "skl",     "max_u",
                                             "min_jac", "max_jac", "mean_log_jac", NULL};

const NwParamSpec nw_fluid_param_specs[] = {
    {"levels", NW_PARAM_INT, 3, 1, 8, "",
     "Multi-resolution levels; each coarser level halves the size (more for large motion)", FALSE,
     NULL},
    {"iterations", NW_PARAM_INT, 100, 1, 100000, "", "Maximum iterations per level", FALSE, NULL},
    {"lambda", NW_PARAM_DOUBLE, 0.01, 0, 100, "",
     "Weight of the symmetric-KL Jacobian term (unbiased: log-volume changes cost the same both "
     "ways); larger keeps volumes closer to their size",
     TRUE, NULL},
    {"sigma", NW_PARAM_DOUBLE, 2.0, 0, 20, "voxel",
     "Gaussian smoothing of the force into the velocity (the fluid's viscosity)", TRUE, NULL},
    {"max-step", NW_PARAM_DOUBLE, 0.5, 0.01, 5, "voxel",
     "Largest displacement change per iteration; halved while a step would not lower the energy",
     TRUE, NULL},
    {"regrid-jacobian", NW_PARAM_DOUBLE, 0.5, 0, 1, "",
     "Regrid (resample the template, restart the displacement) when the smallest Jacobian "
     "determinant falls below this",
     TRUE, NULL},
    {"similarity", NW_PARAM_ENUM, NW_FLUID_SIM_SSD, 0, 1, "",
     "ssd for equal intensities, lcc (locally normalised images) for bias fields or contrast "
     "changes",
     FALSE, fluid_similarity_choices},
    {"lcc-sigma", NW_PARAM_DOUBLE, 2.0, 0.5, 20, "voxel",
     "Gaussian window of the local normalisation (lcc only)", FALSE, NULL},
    {"histogram-match", NW_PARAM_BOOL, 0, 0, 1, "",
     "Match the moving intensities to the fixed ones before registering", FALSE, NULL},
    {"tolerance", NW_PARAM_DOUBLE, 1e-5, 0, 1, "",
     "A level ends when the relative energy change per iteration falls below this", TRUE, NULL},
};
G_STATIC_ASSERT(G_N_ELEMENTS(nw_fluid_param_specs) == NW_FLUID_N_PARAMS);
