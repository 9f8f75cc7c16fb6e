/* kept_blocks_cuda.cuh — pinned host blocks and device blocks kept from one job to the next
 * (CUDA back end; any thread).
 *
 * Why pinned blocks: on the H100 host a mapped 1 KB cudaHostAlloc costs 0.65-0.83 ms when the
 * last pinned block before it was freed (the driver pins and maps a page afresh), against
 * microseconds while another is alive (bench/results/h100-2026-11-26j/alloc_probe.txt). An
 * affine job makes two such mapped blocks (its evaluation's output and its batch's) and a
 * plain one (its batch's maps), and frees them at its end, and the jobs of one process (the
 * application's runs, a batch, the benchmarks) follow one another. The staging pair of
 * large copies (staging_cuda.cuh, 16 MiB: 8.6 ms to pin) is kept the same way.
 *
 * Why device blocks: there, cudaMalloc and cudaFree cost 50-100 µs each whatever the size
 * (64 KiB to 38 MB; bench/results/h100-2026-11-27d/probe_register_call1.txt), and a 3072²
 * affine job makes and frees about 15 buffers: its pyramids, the level's codes, the warped
 * image, the partial sums. A stream-ordered pool (cudaMallocAsync) would keep them too, but
 * its first allocation in a process took 13 ms there: a one-job command would pay it.
 *
 * Sizes go up to whole 4 KiB pages, so that a block given back fits the next request of its
 * size. Each device keeps at most 64 MiB of pinned blocks and NW_CUDA_KEPT_MB MiB of device
 * blocks (default 256; 0 keeps none); a block given back that would go beyond makes room by
 * freeing the blocks given back longest ago. Kept device blocks count as used memory: a job
 * whose data would not fit frees them first (nw_cuda_check_fits). */
#ifndef NW_KEPT_BLOCKS_CUDA_CUH
#define NW_KEPT_BLOCKS_CUDA_CUH

#include <cuda_runtime.h>
#include <stddef.h>

/* A pinned block of at least bytes, cudaHostAlloc's flags, on the current device: one given
 * back there before with the same size class and flags, else a new one. *p NULL on failure. */
cudaError_t nw_pinned_take(void **p, size_t bytes, unsigned int flags);
/* Gives nw_pinned_take's block back (bytes and flags as asked; NULL does nothing): kept for
 * the next on its device (freed at exit, before the CUDA runtime's own teardown), or freed
 * where the device keeps enough already. */
void nw_pinned_give(void *p, size_t bytes, unsigned int flags);

/* cudaMalloc's counterpart: at least bytes of memory on the current device, a kept block of
 * the size class when there is one. *p NULL on failure. */
cudaError_t nw_device_take(void **p, size_t bytes);
/* cudaFree's counterpart for nw_device_take's blocks (NULL does nothing). Unlike cudaFree it
 * does not wait for the device: the caller makes sure that no work in flight still uses p
 * (its stream synchronised), since the next nw_device_take may hand it out at once. */
void nw_device_give(void *p);
/* Frees every device block kept for the current device (a job needs the memory). */
void nw_device_kept_release(void);

#endif
