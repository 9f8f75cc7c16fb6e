/* pinned_kept_cuda.cuh — small pinned host blocks kept from one job to the next (CUDA back
 * end; any thread). Why: on the H100 host a mapped 1 KB cudaHostAlloc costs 0.65-0.83 ms when
 * the last pinned block before it was freed (the driver pins and maps a page afresh), against
 * microseconds while another is alive (bench/results/h100-2026-11-26j/alloc_probe.txt). An
 * affine job makes two such mapped blocks (its evaluation's output and its batch's) and a
 * plain one (its batch's maps), and frees them at its end, and the jobs of one process (the
 * application's runs, a batch, the benchmarks) follow one another. The staging pair of
 * large copies (staging_cuda.cuh, 16 MiB: 8.6 ms to pin) is kept the same way. Sizes go up to
 * whole 4 KiB pages, so that a block given back fits the next request of its size; at most
 * 64 MiB are kept a device. */
#ifndef NW_PINNED_KEPT_CUDA_CUH
#define NW_PINNED_KEPT_CUDA_CUH

#include <cuda_runtime.h>
#include <stddef.h>

/* A pinned block of at least bytes, cudaHostAlloc's flags, on the current device: one given
 * back there before with the same size class and flags, else a new one. *p NULL on failure. */
cudaError_t nw_pinned_take(void **p, size_t bytes, unsigned int flags);
/* Gives nw_pinned_take's block back (bytes and flags as asked; NULL does nothing): kept for
 * the next on its device (freed at exit, before the CUDA runtime's own teardown), or freed
 * where the device keeps enough already. */
void nw_pinned_give(void *p, size_t bytes, unsigned int flags);

#endif
