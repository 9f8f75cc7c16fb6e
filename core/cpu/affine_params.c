/* affine_params.c — the parameter table and plot figures of "affine" (affine_method.h),
 * shared by every back end. */
#include "affine_method.h"

const char *const nw_affine_transform_choices[] = {"rigid", "similarity", "affine", NULL};
const char *const nw_affine_metric_choices[] = {"ncc", "mse", "mi", NULL};
static const char *const interp_choices[] = {"linear", "nearest", "cubic", NULL};
const char *const nw_affine_init_choices[] = {"mass", "geometry", "moments", NULL};
static const char *const optimizer_choices[] = {"simplex", "gradient", NULL};
static const char *const precision_choices[] = {"u16", "single", "u16-filter", NULL};

const NwParamSpec nw_affine_param_specs[NW_AFFINE_N_PARAMS] = {
    NW_AFFINE_ROW_TRANSFORM("transform", 0),
    NW_AFFINE_ROW_METRIC("metric"),
    {"bins", NW_PARAM_INT, 32, 4, 256, "", "Histogram bins per image for mutual information", FALSE,
     NULL},
    {"parzen", NW_PARAM_BOOL, 1, 0, 1, "",
     "Mutual information: spread each moving intensity over 4 bins with a cubic B-spline "
     "(smoother cost) instead of counting it in one",
     FALSE, NULL},
    {"interp", NW_PARAM_ENUM, 0, 0, 2, "",
     "Interpolation of the moving image: linear, nearest or cubic (Keys, a = -0.5)", FALSE,
     interp_choices},
    NW_AFFINE_ROW_LEVELS("levels"),
    NW_AFFINE_ROW_ITERATIONS("iterations"),
    {"step", NW_PARAM_DOUBLE, 2.0, 0.05, 50.0, "voxel",
     "Initial simplex size in voxels of each level (rotations and scales as the motion they "
     "give at the image's edge)",
     FALSE, NULL},
    {"tolerance", NW_PARAM_DOUBLE, 0.01, 1e-6, 10.0, "voxel",
     "A level ends when the simplex is smaller than this, in voxels of the level", FALSE, NULL},
    NW_AFFINE_ROW_INIT("init"),
    {"rotation-starts", NW_PARAM_INT, 1, 1, 36, "",
     "Starts per full turn about each axis at the coarsest level (e.g. 4: every 90 degrees), "
     "for images that may be turned far",
     FALSE, NULL},
    {"restarts", NW_PARAM_INT, 2, 0, 10, "",
     "At each finer level, fresh simplices from the point reached while the last one lowered "
     "the cost (a simplex can stall along a shallow valley)",
     FALSE, NULL},
    {"optimizer", NW_PARAM_ENUM, 0, 0, 1, "",
     "Search of each level: simplex (Nelder-Mead, no gradient) or gradient (BFGS on central "
     "differences of the cost, two evaluations per parameter for each gradient)",
     FALSE, optimizer_choices},
    {"precision", NW_PARAM_ENUM, 0, 0, 2, "",
     "Storage of the images the cost samples: u16 (16 bits a voxel, normalised to each "
     "pyramid level's range: exact for 8- and 16-bit images at full resolution, within "
     "1/131070 of the range otherwise; positions in single precision; half the memory "
     "traffic), single (32-bit floats, positions in double: the reference; --distributed "
     "always evaluates at single) or u16-filter (u16, and on CUDA the linear blend made by "
     "the GPU's texture unit, whose weights have 8 fractional bits: faster, costs within "
     "~1e-5 of u16's; the CPU computes u16's)",
     FALSE, precision_choices},
};

const char *const nw_affine_plot_figures[] = {"cost", "simplex", NULL};
