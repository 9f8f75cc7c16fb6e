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

#ifdef __cplusplus
}
#endif

#endif
