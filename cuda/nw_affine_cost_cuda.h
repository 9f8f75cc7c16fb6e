/* nw_affine_cost_cuda.h — the C face of the CUDA affine cost (affine_cost_cuda.cu): the
 * NwAffineCostBackend twin of core's nw_affine_cost_cpu, for the affine job, the parity tests
 * and the benchmark. Driven from one thread, like every cost back end (affine_cost.h). */
#ifndef NW_AFFINE_COST_CUDA_H
#define NW_AFFINE_COST_CUDA_H

#include "affine_cost.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const NwAffineCostBackend nw_affine_cost_cuda;

/* u16 levels set so far in this process whose moving taps are read through the codes'
 * texture (affine_texture_cuda.cuh; NW_AFFINE_TEXTURE=0 turns it off): for the tests and the
 * benchmark, which check that the path they compare or time is the one they name. */
guint nw_affine_cost_cuda_texture_levels(void);
/* The fixed voxels a thread of the cost kernel took at the last u16 level set in this process
 * (any cost): 1, or 2 or 4 where the rows variant took it (linear through the texture, mse or
 * ncc; NW_AFFINE_VOXELS_PER_THREAD=1 turns it off): for the tests and the benchmark, as above. */
guint nw_affine_cost_cuda_voxels_per_thread(void);

#ifdef __cplusplus
}
#endif

#endif
