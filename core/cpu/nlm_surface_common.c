/* nlm_surface_common.c — the parts of "nlm-surface" shared by the CPU reference
 * (nlm_surface_cpu.c) and a CUDA twin: the parameter table, the settings derived from it,
 * the input check and the iteration report (nlm_surface_method.h). The job's worker thread. */
#include "nlm_surface_method.h"

#include <math.h>

#include "nw_error.h"

const char *const nw_nlm_plot_figures[] = {"rms_change", "band", NULL};

const NwParamSpec nw_nlm_param_specs[] = {
    {"iterations", NW_PARAM_INT, 4.0, 1.0, 10000.0, "",
     "How many non-local-means steps; the job ends after this many.", FALSE, NULL},
    {"patch", NW_PARAM_INT, 5.0, 3.0, 9.0, "voxel",
     "Patch width n (odd): phi is compared on n x n x n voxels around each band voxel.", FALSE,
     NULL},
    {"neighbours", NW_PARAM_INT, 96.0, 1.0, 1024.0, "",
     "How many most similar patches (m) each band voxel is averaged with.", FALSE, NULL},
    {"band", NW_PARAM_DOUBLE, 2.0, 0.1, 100.0, "mm",
     "Half-width of the narrow band |phi| <= band in which phi is denoised.", FALSE, NULL},
    {"reinit-every", NW_PARAM_INT, 5.0, 0.0, 10000.0, "",
     "Re-initialise phi to a distance and take the band again every k iterations (0: only "
     "at the start).",
     FALSE, NULL},
    {"c1", NW_PARAM_DOUBLE, 0.0, 0.0, 1e9, "mm^2",
     "Spatial scale of the weights, exp(-|x-y|^2/c1); 0 leaves distance out (fully "
     "non-local).",
     TRUE, NULL},
    {"c2", NW_PARAM_DOUBLE, 1.5, 1e-6, 1e6, "mm^2",
     "Patch similarity scale per patch value: weights are exp(-||phi[x]-phi[y]||^2/(c2*n^3)); "
     "larger averages more dissimilar patches.",
     TRUE, NULL},
};
G_STATIC_ASSERT(G_N_ELEMENTS(nw_nlm_param_specs) == NW_NLM_N_PARAMS);

gboolean nw_nlm_settings(const NwParams *p, NwNlmSettings *s, GError **error)
{
  s->iterations = nw_params_get_int(p, "iterations");
  s->patch = nw_params_get_int(p, "patch");
  s->neighbours = nw_params_get_int(p, "neighbours");
  s->reinit_every = nw_params_get_int(p, "reinit-every");
  s->band_mm = nw_params_get(p, "band");
  s->c1_mm2 = nw_params_get(p, "c1");
  s->c2_mm2 = nw_params_get(p, "c2") * s->patch * s->patch * s->patch;
  if (s->patch % 2 == 0) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "nlm-surface: patch %d is even: a patch is centred on its voxel (3, 5, 7 or 9)",
                s->patch);
    return FALSE;
  }
  return TRUE;
}

gboolean nw_nlm_check_input(const NwMethodInputs *in, GError **error)
{
  if (in->fixed == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "nlm-surface: no input level set");
    return FALSE;
  }
  if (in->fixed->nc != 1) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "nlm-surface: the level set must have one component, not %d", in->fixed->nc);
    return FALSE;
  }
  return nw_volume_check_finite(in->fixed, "nlm-surface input", error);
}

gboolean nw_nlm_check_band(int n, double band_mm, GError **error)
{
  if (n >= 2)
    return TRUE;
  g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
              "nlm-surface: the band |phi| <= %g mm holds %d voxel%s: widen --band (it should "
              "span a few voxels)",
              band_mm, n, n == 1 ? "" : "s");
  return FALSE;
}

void nw_nlm_fill_report(NwIterationReport *r, int done, int iterations, double rms_change,
                        double max_change, int band, double dt, double mean_wsum)
{
  nw_report_single_level(r, done, iterations);
  nw_report_add(r, "rms_change", rms_change);
  nw_report_add(r, "max_change", max_change);
  nw_report_add(r, "band", band);
  nw_report_add(r, "dt", dt);
  nw_report_add(r, "mean_wsum", mean_wsum);
}
