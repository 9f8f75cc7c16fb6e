/* staging_cuda.cuh — large host <-> device copies of floats through a pair of pinned chunks
 * (CUDA back end; the caller's thread and stream). A plain cudaMemcpy from or into pageable
 * memory runs on one thread through the driver's small staging buffer, and every fresh page
 * faults in on that thread (37 MB: ~22 ms on the H100 host, 2026-11-26). Here the GPU copies
 * one pinned chunk while the cores (nw_copy_floats, 256 KiB pieces) fill or empty the other.
 * Copies of at most one chunk go straight. */
#ifndef NW_STAGING_CUDA_CUH
#define NW_STAGING_CUDA_CUH

#include <cuda_runtime.h>
#include <stddef.h>

/* Floats a chunk; a stage holds two (16 MiB of pinned memory). */
constexpr size_t kNwStageChunk = (size_t)1 << 21;

/* A stage for the calls below, on the current device: a pinned block of 2 x kNwStageChunk
 * floats (one an earlier job gave back, nw_pinned_take) with the two events its copies wait
 * on, made here (in the same block, after the chunks). Free it with nw_stage_free, not
 * cudaFreeHost (the events). *stage NULL on failure. */
cudaError_t nw_stage_alloc(float **stage);
/* Destroys the stage's events and gives its block back (nw_pinned_give: kept for the next job
 * on the device, or freed). NULL does nothing. */
void nw_stage_free(float *stage);
/* The stage for a copy of n floats from a job's slot: NULL when n needs none, else *slot, made
 * by nw_stage_alloc at the first such copy (the job frees it with nw_stage_free); NULL if that
 * fails (the copy then tries one of its own and reports the error). */
float *nw_stage_for(float **slot, size_t n);

/* n floats from host h to device d; returns once they are on the device (h may be reused).
 * stage: nw_stage_alloc's (a job's, kept for its copies: allocating 16 MiB of pinned memory costs
 * milliseconds), or NULL for one allocated for the call. */
cudaError_t nw_upload_floats(float *d, const float *h, size_t n, float *stage, cudaStream_t stream);

/* n floats from device d into host h (pageable, fresh or not); returns once they are there. */
cudaError_t nw_download_floats(float *h, const float *d, size_t n, float *stage,
                               cudaStream_t stream);

#endif
