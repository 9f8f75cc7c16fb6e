/* smooth_common.c — the parts of the "smooth" method shared by the CPU reference
 * (smooth_cpu.c) and the CUDA twin (cuda/smooth_cuda.cu): the parameter table, the input
 * check and the iteration report (smooth_method.h). The job's worker thread. */
#include "smooth_method.h"

#include "nw_error.h"

const char *const nw_smooth_plot_figures[] = {"rms_change", "mean", NULL};

const NwParamSpec nw_smooth_param_specs[] = {
    {"sigma", NW_PARAM_DOUBLE, 1.0, 0.0, 50.0, "mm",
     "Width of the Gaussian applied at every iteration; larger smooths faster.", TRUE, NULL},
    {"iterations", NW_PARAM_INT, 10.0, 1.0, 100000.0, "",
     "How many times the image is smoothed; the job ends after this many.", FALSE, NULL},
};
G_STATIC_ASSERT(G_N_ELEMENTS(nw_smooth_param_specs) == NW_SMOOTH_N_PARAMS);
const int nw_smooth_n_params = NW_SMOOTH_N_PARAMS;

gboolean nw_smooth_check_input(const NwMethodInputs *in, GError **error)
{
  if (in->fixed == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "smooth: no input image");
    return FALSE;
  }
  return nw_volume_check_finite(in->fixed, "smooth input", error);
}

void nw_smooth_fill_report(NwIterationReport *r, int done, int iterations, double rms_change,
                           double mean, double min, double max)
{
  nw_report_single_level(r, done, iterations);
  nw_report_add(r, "rms_change", rms_change);
  nw_report_add(r, "mean", mean);
  nw_report_add(r, "min", min);
  nw_report_add(r, "max", max);
}
