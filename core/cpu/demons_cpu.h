/* demons_cpu.h — the steps of the "demons" CPU reference (demons_cpu.c) one by one, so that
 * each CUDA kernel of cuda/demons_kernels.cu is checked against its CPU twin
 * (tests/test_cuda_demons_kernels.cu). The method itself is nw_demons_cpu_ops
 * (demons_method.h). Any thread; OpenMP inside.
 *
 * Images are nc = 1, fields nc = 3 in voxel units, all on one grid. lcc_f has nc = 3:
 * (F̂, μF, σF²); lcc_w has nc = 4: (Ŵ, μW, σW², σFW) — local means, variances and the
 * covariance in Gaussian windows, Î = (I - μI) / sqrt(σI² + eps) (demons_method.h). shift:
 * the level's mean of F, subtracted from every intensity before squaring; eps:
 * NW_DEMONS_LCC_EPS times the squared intensity range of F. */
#ifndef NW_DEMONS_CPU_H
#define NW_DEMONS_CPU_H

#include "demons_method.h"

G_BEGIN_DECLS

/* u = the demons update before smoothing (step 2): ssd from F and W, or, with lcc_f and
 * lcc_w not NULL, from their normalised images; 0 where region (nc = 1, may be NULL: no
 * masks) is 0. force: NwDemonsForce; alpha: max-step; den_min: NW_DEMONS_DEN_MIN times the
 * squared intensity scale (range of F² for ssd, 1 for lcc). */
void nw_demons_update_cpu(NwVolume *u, const NwVolume *F, const NwVolume *W, const NwVolume *lcc_f,
                          const NwVolume *lcc_w, const NwVolume *region, int force, double alpha,
                          double den_min);

/* The region where the masks let the demons work (demons_method.h), 1 inside, 0 outside:
 * fixed_mask >= 0.5 and (moving_mask ∘ s, trilinear as nw_warp) >= 0.5, a NULL mask counting
 * as inside everywhere. Masks nc = 1 and s nc = 3 on region's grid. */
void nw_demons_region_cpu(NwVolume *region, const NwVolume *fixed_mask, const NwVolume *moving_mask,
                          const NwVolume *s);

/* lcc_f = (F̂, μF, σF²) with windows of sigma voxels (lcc-sigma). */
gboolean nw_demons_lcc_fixed_cpu(NwVolume *lcc_f, const NwVolume *F, double shift, double eps,
                                 double sigma, GError **error);
/* lcc_w = (Ŵ, μW, σW², σFW) for W, with lcc_f of the same level. */
gboolean nw_demons_lcc_warped_cpu(NwVolume *lcc_w, const NwVolume *F, const NwVolume *W,
                                  const NwVolume *lcc_f, double shift, double eps, double sigma,
                                  GError **error);

/* The similarity sums of F and W over the voxels where region (may be NULL: all) is not 0;
 * with lcc_f and lcc_w (not NULL) also the sum and count of
 * ρ = σFW / sqrt((σF² + eps)(σW² + eps)) over those voxels with σF² > eps. */
void nw_demons_similarity_sums_cpu(NwDemonsSimSums *t, const NwVolume *F, const NwVolume *W,
                                   const NwVolume *lcc_f, const NwVolume *lcc_w,
                                   const NwVolume *region, double shift, double eps);

G_END_DECLS

#endif
