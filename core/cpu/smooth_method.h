/* smooth_method.h — "smooth": iterated Gaussian smoothing of a volume. The small real method
 * that proves the pipe end to end (method interface, job runner, CLI, GUI, CPU and CUDA).
 *
 * Each iteration replaces the image by its Gaussian smoothing with sigma (mm, converted per
 * axis with the voxel spacing; borders clamp). Parameters (shared by both back ends):
 *   sigma       double, mm, default 1.0, range 0..50, live
 *   iterations  int, default 10, range 1..100000, not live (the job's max_iterations)
 * Figures per iteration: "rms_change" (RMS of the voxel change this iteration), "mean",
 * "min", "max" of the image. The job finishes after `iterations` steps.
 * Result: "smoothed" (the current image). */
#ifndef NW_SMOOTH_METHOD_H
#define NW_SMOOTH_METHOD_H

#include "method.h"

G_BEGIN_DECLS

/* The parameter table (smooth_common.c), shared by both back ends. */
#define NW_SMOOTH_N_PARAMS 2
extern const NwParamSpec nw_smooth_param_specs[NW_SMOOTH_N_PARAMS];
/* The figures the live plot shows (NwMethodOps.plot_figures; smooth_common.c): the RMS
 * change per iteration and the mean. */
extern const char *const nw_smooth_plot_figures[];
extern const int nw_smooth_n_params;

/* An input image is present and finite; the same message from both back ends. */
gboolean nw_smooth_check_input(const NwMethodInputs *in, GError **error);
/* The report of iteration `done` of `iterations` with its figures. */
void nw_smooth_fill_report(NwIterationReport *r, int done, int iterations, double rms_change,
                           double mean, double min, double max);
extern const NwMethodOps nw_smooth_cpu_ops;
/* In cuda/smooth_cuda.cu when the build has CUDA. */
extern const NwMethodOps nw_smooth_cuda_ops;

G_END_DECLS

#endif
