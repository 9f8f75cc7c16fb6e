/* demons_kernels.cuh — the demons-specific kernels: the update field, the LCC local
 * statistics, and the per-iteration figures. The CUDA twins of nw_demons_update_cpu,
 * nw_demons_lcc_fixed_cpu / nw_demons_lcc_warped_cpu and nw_demons_similarity_sums_cpu with
 * the Jacobian statistics (core/cpu/demons_cpu.h); see core/cpu/demons_method.h for the
 * algorithm. CUDA back end, caller's stream; every launcher returns nw_cuda_launched's status.
 * Each kernel's parity test: tests/test_cuda_demons_kernels.cu. */
#ifndef NW_DEMONS_KERNELS_CUH
#define NW_DEMONS_KERNELS_CUH

#include <cuda_runtime.h>

#include "demons_method.h"
#include "field_device.cuh"

/* Sums over the voxels of one level, reduced deterministically (fixed order): the similarity
 * sums (demons_method.h: intensities shifted by the level's mean, the LCC sum and count), the
 * Jacobian minimum and the fold count of s. */
struct NwDemonsSums {
  NwDemonsSimSums sim;
  double jac_min;
  unsigned long long folds;
};

struct NwDemonsLevelConst {
  float shift;   /* mean of F at this level, subtracted before squaring */
  double scale2; /* squared intensity range of F: variance and denominator thresholds */
  double eps;    /* lcc: NW_DEMONS_LCC_EPS * scale2, added to local variances */
};

/* u = demons update (before smoothing): ssd on F and W, or (lcc_f, lcc_w not NULL) on the
 * locally normalised images F̂ = lcc_f.x and Ŵ = lcc_w.x; 0 where region (NULL: no masks) is
 * 0. force: NwDemonsForce. */
cudaError_t nw_demons_update_cuda(float4 *u, const float *F, const float *W, const float4 *lcc_f,
                                  const float4 *lcc_w, const float *region, int force, float alpha,
                                  NwDemonsLevelConst lc, const NwGrid &g, cudaStream_t stream);

/* region = 1 where fixed_mask >= 0.5 and (moving_mask ∘ s, trilinear as nw_warp_cuda) >= 0.5,
 * else 0; a NULL mask counts as inside everywhere (nw_demons_region_cpu). */
cudaError_t nw_demons_region_cuda(float *region, const float *fixed_mask, const float *moving_mask,
                                  const float4 *s, const NwGrid &g, cudaStream_t stream);

/* LCC by local normalisation (demons_cpu.c): Gaussian-window mean μ and variance σ² of each
 * image, Î = (I - μI) / sqrt(σI² + eps).
 * Fixed, once per level: pack (0, f', f'², 0) with f' = F - shift, smooth, then post gives
 * lcc_f = (F̂, μF, σF², 0). */
cudaError_t nw_lcc_fixed_pack(float4 *pack, const float *F, float shift, const NwGrid &g,
                              cudaStream_t stream);
cudaError_t nw_lcc_fixed_post(float4 *lcc_f, const float *F, NwDemonsLevelConst lc, const NwGrid &g,
                              cudaStream_t stream);
/* Warped, every iteration: pack (0, w', w'², f'w'), smooth, then post gives
 * lcc_w = (Ŵ, μW, σW², σFW). */
cudaError_t nw_lcc_warped_pack(float4 *pack, const float *F, const float *W, float shift,
                               const NwGrid &g, cudaStream_t stream);
cudaError_t nw_lcc_warped_post(float4 *lcc_w, const float4 *lcc_f, const float *W,
                               NwDemonsLevelConst lc, const NwGrid &g, cudaStream_t stream);

/* Figures of the current W and s into *d_sums (device memory; d_partials holds
 * up to NW_DEMONS_FIG_BLOCKS partial sums). lcc_f/lcc_w NULL for ssd. The similarity sums are
 * over the voxels where region (NULL: all) is not 0, the Jacobian figures over all. When M is
 * not NULL the warp
 * is fused in: W = M ∘ s is computed, stored and summed in the same pass (ssd: the figures
 * need nothing else of W); with M NULL, W is read. Each warp of the grid walks whole rows
 * (j, k) of the volume, so no voxel index is ever divided. */
#define NW_DEMONS_FIG_BLOCKS 1024
cudaError_t nw_demons_sums_cuda(NwDemonsSums *d_sums, NwDemonsSums *d_partials, const float *F,
                                float *W, const float *M, const float4 *s, const float4 *lcc_f,
                                const float4 *lcc_w, const float *region, NwDemonsLevelConst lc,
                                const NwGrid &g, cudaStream_t stream);

#endif
