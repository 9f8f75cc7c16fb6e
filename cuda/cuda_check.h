/* cuda_check.h — the one way cuda/ checks the CUDA runtime: NW_CUDA_CHECK turns a failed call
 * into a GError (NW_ERROR domain), nw_cuda_launched ends every kernel launch, and
 * nw_cuda_check_fits says whether a job's data fits the device. CUDA back end,
 * any thread; include from .cu files only.
 *
 *   kernel<<<grid, block, shmem, stream>>>(...);
 *   return nw_cuda_launched(stream);            // in a launcher that returns cudaError_t
 *
 *   if (!NW_CUDA_CHECK(cudaMalloc(&p, bytes), error) ||
 *       !NW_CUDA_CHECK(nw_warp_cuda(out, in, s, false, g, stream), error))
 *     return FALSE;
 *
 * Messages read "smooth_cuda.cu:123: cudaMalloc(&p, bytes) failed: out of memory
 * (cudaErrorMemoryAllocation)". Allocation failures get NW_ERROR_NOMEM, everything else
 * NW_ERROR_DEVICE.
 *
 * nw_cuda_launched always asks cudaGetLastError (bad configurations, missing kernel images);
 * with NW_CUDA_SYNC_CHECK defined (Debug builds of cuda/ define it, cuda/CMakeLists.txt) it
 * also synchronises the stream, so a fault inside a kernel is reported at its own launch
 * rather than at some later call. Every launch in cuda/ ends with it, so Debug builds
 * synchronise after every launch. */
#ifndef NW_CUDA_CHECK_H
#define NW_CUDA_CHECK_H

#include <cuda_runtime.h>
#include <glib.h>
#include <string.h>

#include "kept_blocks_cuda.cuh"
#include "nw_error.h"

static inline const char *nw_cuda_basename(const char *path)
{
  const char *slash = strrchr(path, '/');
  return slash != NULL ? slash + 1 : path;
}

static inline gboolean nw_cuda_check_impl(cudaError_t status, const char *call, const char *file,
                                          int line, GError **error)
{
  if (status == cudaSuccess)
    return TRUE;
  int code = status == cudaErrorMemoryAllocation ? NW_ERROR_NOMEM : NW_ERROR_DEVICE;
  g_set_error(error, NW_ERROR, code, "%s:%d: %s failed: %s (%s)", nw_cuda_basename(file), line,
              call, cudaGetErrorString(status), cudaGetErrorName(status));
  return FALSE;
}

/* Before a job allocates: TRUE when need bytes are free on the current device, once the
 * device blocks kept from earlier jobs (kept_blocks_cuda.cuh) are freed where they would be in
 * the way; else one message (NW_ERROR_NOMEM) "<what> needs <need> of GPU memory, but only
 * <free> of <total> are free; <advice>", what a GPU method says when its data does not fit. */
static inline gboolean nw_cuda_check_fits(size_t need, const char *what, const char *advice,
                                          GError **error)
{
  size_t free_b = 0, total_b = 0;
  if (!nw_cuda_check_impl(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo", __FILE__,
                          __LINE__, error))
    return FALSE;
  if (need <= free_b)
    return TRUE;
  nw_device_kept_release();
  if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess && need <= free_b)
    return TRUE;
  char *need_s = g_format_size(need), *free_s = g_format_size(free_b),
       *total_s = g_format_size(total_b);
  g_set_error(error, NW_ERROR, NW_ERROR_NOMEM,
              "%s needs %s of GPU memory, but only %s of %s are free; %s", what, need_s, free_s,
              total_s, advice);
  g_free(need_s);
  g_free(free_s);
  g_free(total_s);
  return FALSE;
}

/* The status of the kernel launch just made on stream (and, with NW_CUDA_SYNC_CHECK, of its
 * execution). Call right after every <<<...>>>. */
static inline cudaError_t nw_cuda_launched(cudaStream_t stream)
{
  cudaError_t status = cudaGetLastError();
#ifdef NW_CUDA_SYNC_CHECK
  if (status == cudaSuccess)
    status = cudaStreamSynchronize(stream);
#else
  (void)stream;
#endif
  return status;
}

/* A non-blocking stream for work a display waits on (live frames to GL or to host memory):
 * created at the device's greatest priority, so its few small kernels are scheduled ahead of
 * the blocks a running job keeps queued, and the frame is not late by a whole iteration. */
static inline cudaError_t nw_cuda_display_stream(cudaStream_t *stream)
{
  int least = 0, greatest = 0;
  cudaError_t status = cudaDeviceGetStreamPriorityRange(&least, &greatest);
  if (status != cudaSuccess)
    return status;
  return cudaStreamCreateWithPriority(stream, cudaStreamNonBlocking, greatest);
}

/* TRUE when call returned cudaSuccess; else sets error (file, line, call text, reason). */
#define NW_CUDA_CHECK(call, error) nw_cuda_check_impl((call), #call, __FILE__, __LINE__, (error))

#endif
