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

extern const NwParamSpec nw_smooth_param_specs[];
extern const int nw_smooth_n_params;
extern const NwMethodOps nw_smooth_cpu_ops;
/* In cuda/smooth_cuda.cu when the build has CUDA. */
extern const NwMethodOps nw_smooth_cuda_ops;

G_END_DECLS

#endif
