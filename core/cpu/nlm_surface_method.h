/* nlm_surface_method.h — "nlm-surface": level-set non-local-means surface denoising after
 * Dong et al. 2008, fully non-local over the narrow band as Lee et al. 2010 run it on GPUs.
 *
 * The input (NwMethodInputs.fixed) is a level-set function phi on a grid: world mm, negative
 * inside, its zero level set the noisy surface (sdf_reinit.h, mesh_sdf.h make one from a
 * mask, labels or a mesh). The method first re-initialises it to a signed distance
 * (|grad phi| = 1, fast sweeping) and takes the narrow band |phi| <= band. Each iteration:
 *   1. patches: phi[x], the patch x n x n x n voxels around every band element (nlm_kernels.h);
 *   2. for every element j, its m other elements l with the most similar patches (smallest
 *      ||phi[x_j] - phi[x_l]||^2), exact and deterministic (ties by band index);
 *   3. weights w_jl = exp(-|x_j - x_l|^2 / c1) exp(-||phi[x_j] - phi[x_l]||^2 / c2);
 *   4. phi_j <- phi_j + dt sum_l w_jl (phi_l - phi_j), dt = 1 / max_j sum_l w_jl: every element
 *      moves towards the weighted mean of its most similar patches' centres, the best
 *      supported one all the way.
 * Every `reinit-every` iterations phi is re-initialised and the band taken again. The CPU
 * twin's kernels are nlm_kernels.h; a CUDA twin implements the same kernels behind this same
 * table (parameters, input check, report: nlm_surface_common.c).
 *
 * Parameters (shared by both back ends; voxels where said, else mm):
 *   iterations    int, default 4, not live (the job's max_iterations): the flow is a nonlocal
 *                 diffusion, so a clean curved surface drifts too (a sphere of 8 mm shrinks by
 *                 ~0.04 mm an iteration); a few steps remove the noise (tests/test_nlm_accuracy.c)
 *   patch         int, voxels, odd, default 5 (P = 125 values per patch)
 *   neighbours    int, default 96: m, patches kept per element (issue 13's default; on small
 *                 bands, a few thousand voxels, 16 keeps edges sharper: an edge has only a
 *                 dozen voxels per level, and 96 makes it average with faces)
 *   band          double, mm, default 2: the half-width delta of the band |phi| <= delta
 *   reinit-every  int, default 5: re-initialise and re-extract the band every k iterations
 *                 (0: only at the start)
 *   c1            double, mm^2, default 0: spatial scale; 0 drops the spatial factor (fully
 *                 non-local), live
 *   c2            double, mm^2 per patch value, default 1.5: the patch-distance scale is
 *                 c2 * P (so one value serves every patch size), live
 * Figures per iteration: "rms_change" and "max_change" (mm, over the band), "band" (N),
 * "dt", "mean_wsum" (mean row sum of the weights).
 * Result: "sdf" (phi re-initialised to a signed distance) and "input_sdf" (the re-initialised
 * input, from which the CLI measures per-vertex displacement). */
#ifndef NW_NLM_SURFACE_METHOD_H
#define NW_NLM_SURFACE_METHOD_H

#include "method.h"

G_BEGIN_DECLS

#define NW_NLM_N_PARAMS 7
extern const NwParamSpec nw_nlm_param_specs[NW_NLM_N_PARAMS];
extern const char *const nw_nlm_plot_figures[];

/* The values of a parameter set, checked (patch odd, c2 > 0). */
typedef struct {
  int iterations, patch, neighbours, reinit_every;
  double band_mm, c1_mm2, c2_mm2; /* c2_mm2: the whole patch distance's scale, c2 * P */
} NwNlmSettings;
gboolean nw_nlm_settings(const NwParams *p, NwNlmSettings *s, GError **error);

/* One scalar finite input with a zero crossing; the same message from both back ends. */
gboolean nw_nlm_check_input(const NwMethodInputs *in, GError **error);
/* The band must hold at least two elements. */
gboolean nw_nlm_check_band(int n, double band_mm, GError **error);
void nw_nlm_fill_report(NwIterationReport *r, int done, int iterations, double rms_change,
                        double max_change, int band, double dt, double mean_wsum);

extern const NwMethodOps nw_nlm_surface_cpu_ops;
/* The CUDA twin (cuda/nlm_surface_cuda.cu): at most NW_NLM_CUDA_MAX_M (128) neighbours. */
extern const NwMethodOps nw_nlm_surface_cuda_ops;

G_END_DECLS

#endif
