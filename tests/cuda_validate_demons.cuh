/* cuda_validate_demons.cuh — cuda_validate.h for the demons figures: the sums of
 * nw_demons_sums_cuda (cuda/demons_kernels.cuh) against the CPU's (core/cpu/demons_cpu.h and
 * core/field.h), for tests/test_cuda_demons_kernels.cu and bench/bench_demons.cu. Host code. */
#ifndef NW_CUDA_VALIDATE_DEMONS_CUH
#define NW_CUDA_VALIDATE_DEMONS_CUH

#include "demons_kernels.cuh"
#include "volume.h"

/* TRUE when the GPU's sums of F, W (lcc_f, lcc_w NULL for ssd) and s, over the voxels where
 * region (NULL: all) is not 0, agree with the CPU's for the same inputs (the shift is the
 * kernel's float one):
 *   - the similarity sums: every term is computed in double from the same floats on both
 *     sides, only the order of the additions differs; any order stays within
 *     (n - 1) 2^-53 sum |terms| of the exact sum, so with sum |terms| <= n max|term| the
 *     tolerance of a sum is n² 2^-52 max|term| (twice the bound); the count of structured
 *     voxels (lcc) and the count of voxels in the region are exact;
 *   - the Jacobian minimum: the GPU's determinants are float (the Jacobian kernel's
 *     tolerance, 1e-5 + 1e-6 |det|);
 *   - the fold count may differ only at voxels whose determinant lies within that tolerance
 *     of 0.
 * Prints one line per figure (stderr); *cpu_folds gets the CPU's fold count when not NULL. */
gboolean nw_validate_demons_sums(const char *what, const NwDemonsSums *gpu, const NwVolume *F,
                                 const NwVolume *W, const NwVolume *lcc_f, const NwVolume *lcc_w,
                                 const NwVolume *region, const NwVolume *s,
                                 const NwDemonsLevelConst &lc, size_t *cpu_folds);

#endif
