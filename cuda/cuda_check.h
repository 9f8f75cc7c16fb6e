/* cuda_check.h — turn CUDA runtime errors into GErrors (NW_ERROR domain). CUDA back end,
 * any thread; include from .cu files only.
 *
 *   if (!NW_CUDA_CHECK(cudaMalloc(&p, bytes), error)) goto fail;
 *   kernel<<<grid, block, shmem, stream>>>(...);
 *   if (!NW_CUDA_CHECK_LAUNCH("smooth_x", stream, error)) goto fail;
 *
 * Messages read "smooth_cuda.cu:123: cudaMalloc(&p, bytes) failed: out of memory
 * (cudaErrorMemoryAllocation)". Allocation failures get NW_ERROR_NOMEM, everything else
 * NW_ERROR_DEVICE. A launch check always asks cudaGetLastError (bad configurations, missing
 * kernel images); with NW_CUDA_SYNC_CHECK defined (Debug builds define it) it also
 * synchronises the stream, so a fault inside a kernel is reported at its own launch rather
 * than at some later call. */
#ifndef NW_CUDA_CHECK_H
#define NW_CUDA_CHECK_H

#include <cuda_runtime.h>
#include <glib.h>
#include <string.h>

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

static inline gboolean nw_cuda_check_launch_impl(const char *kernel, cudaStream_t stream,
                                                 const char *file, int line, GError **error)
{
  cudaError_t status = cudaGetLastError();
#ifdef NW_CUDA_SYNC_CHECK
  if (status == cudaSuccess)
    status = cudaStreamSynchronize(stream);
#else
  (void)stream;
#endif
  if (status == cudaSuccess)
    return TRUE;
  g_set_error(error, NW_ERROR, NW_ERROR_DEVICE, "%s:%d: kernel %s failed: %s (%s)",
              nw_cuda_basename(file), line, kernel, cudaGetErrorString(status),
              cudaGetErrorName(status));
  return FALSE;
}

/* TRUE when call returned cudaSuccess; else sets error (file, line, call text, reason). */
#define NW_CUDA_CHECK(call, error) nw_cuda_check_impl((call), #call, __FILE__, __LINE__, (error))
/* After every kernel launch; name is the kernel's name for the message. */
#define NW_CUDA_CHECK_LAUNCH(name, stream, error)                                                  \
  nw_cuda_check_launch_impl((name), (stream), __FILE__, __LINE__, (error))

#endif
