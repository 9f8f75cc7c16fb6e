/* texel_dma.cu — GL's upload memory filled by the copy engines (see nw_texel_dma.h). CUDA
 * back end; the display's thread. Pinned frame -> device scratch on one stream, scratch ->
 * GL's memory on the other, piece by piece, so the host-to-device copy of a piece overlaps the
 * device-to-host copy of the one before it (a 256³ job's field, 7.4 MB in and 9.8 MB out, in
 * four pieces). */
#include <cuda_runtime.h>

#include "cuda_check.h"
#include "field_cuda.cuh"
#include "nw_error.h"
#include "nw_texel_dma.h"

enum { kPieces = 4, kMinPieceVoxels = 1 << 16 };

struct NwTexelDma {
  int device;
  void *host; /* registered, `bytes` long */
  size_t bytes;
  cudaStream_t in, out;          /* host -> scratch, scratch -> host */
  cudaEvent_t piece_in[kPieces]; /* a piece is in scratch */
  float *scratch;                /* (3 -> 4) a copy's padded texels, then its source */
  size_t scratch_floats;
};

extern "C" void nw_texel_dma_free(NwTexelDma *d)
{
  if (d == NULL)
    return;
  cudaSetDevice(d->device);
  if (d->out != NULL)
    cudaStreamSynchronize(d->out);
  if (d->in != NULL)
    cudaStreamSynchronize(d->in);
  for (int p = 0; p < kPieces; p++)
    if (d->piece_in[p] != NULL)
      cudaEventDestroy(d->piece_in[p]);
  if (d->scratch != NULL) { /* stream-ordered: cudaFree would wait for the job's kernels too */
    cudaFreeAsync(d->scratch, d->out);
    cudaStreamSynchronize(d->out);
  }
  if (d->in != NULL)
    cudaStreamDestroy(d->in);
  if (d->out != NULL)
    cudaStreamDestroy(d->out);
  if (d->host != NULL)
    cudaHostUnregister(d->host);
  g_free(d);
}

extern "C" NwTexelDma *nw_texel_dma_new(void *host, size_t bytes, size_t max_copy_bytes,
                                        GError **error)
{
  g_return_val_if_fail(host != NULL && bytes > 0, NULL);
  NwTexelDma *d = g_new0(NwTexelDma, 1);
  /* scratch for the largest copy: its source (at most as large as its texels: 3 -> 4 only
   * grows) and its padded texels */
  d->scratch_floats = 2 * ((max_copy_bytes + sizeof(float) - 1) / sizeof(float));
  gboolean ok = NW_CUDA_CHECK(cudaGetDevice(&d->device), error);
  /* portable: the frames come from a job's thread and context, the copies run here */
  if (ok && NW_CUDA_CHECK(cudaHostRegister(host, bytes, cudaHostRegisterPortable), error)) {
    d->host = host;
    d->bytes = bytes;
  } else {
    ok = FALSE;
  }
  ok = ok && NW_CUDA_CHECK(nw_cuda_display_stream(&d->in), error) &&
       NW_CUDA_CHECK(nw_cuda_display_stream(&d->out), error) &&
       NW_CUDA_CHECK(cudaMallocAsync((void **)&d->scratch, d->scratch_floats * sizeof(float), d->out),
                     error) &&
       NW_CUDA_CHECK(cudaStreamSynchronize(d->out), error);
  for (int p = 0; ok && p < kPieces; p++)
    ok = NW_CUDA_CHECK(cudaEventCreateWithFlags(&d->piece_in[p], cudaEventDisableTiming), error);
  if (!ok) {
    cudaGetLastError(); /* the refusal is this call's answer, not the next call's error */
    nw_texel_dma_free(d);
    g_prefix_error(error, "GL's upload memory for the GPU's copies: ");
    return NULL;
  }
  return d;
}

/* The pieces' copies and padding queued on the two streams. */
static cudaError_t queue_pieces(NwTexelDma *d, float *dst, const float *src, size_t n, int src_nc,
                                int dst_nc)
{
  const int pieces = (int)MIN((size_t)kPieces, MAX((size_t)1, n / kMinPieceVoxels));
  const size_t per = (n + pieces - 1) / pieces;
  /* the padded texels first, where float4 stores are aligned (cudaMalloc's 256 bytes); a
   * field's source after them, at 4n floats (3n floats would misalign float4 for odd n) */
  float *padded = d->scratch, *staged = src_nc != dst_nc ? d->scratch + n * dst_nc : d->scratch;
  cudaError_t e = cudaSuccess;
  for (int p = 0; p < pieces && e == cudaSuccess; p++) {
    const size_t v0 = p * per, m = MIN(per, n - v0);
    e = cudaMemcpyAsync(staged + v0 * src_nc, src + v0 * src_nc, m * src_nc * sizeof(float),
                        cudaMemcpyHostToDevice, d->in);
    if (e == cudaSuccess)
      e = cudaEventRecord(d->piece_in[p], d->in);
    if (e == cudaSuccess)
      e = cudaStreamWaitEvent(d->out, d->piece_in[p], 0);
    const float *texels = staged;
    if (e == cudaSuccess && src_nc != dst_nc) {
      e = nw_field_expand_cuda((float4 *)padded + v0, staged + v0 * 3, m, d->out);
      texels = padded;
    }
    if (e == cudaSuccess)
      e = cudaMemcpyAsync(dst + v0 * dst_nc, texels + v0 * dst_nc, m * dst_nc * sizeof(float),
                          cudaMemcpyDeviceToHost, d->out);
  }
  return e;
}

extern "C" gboolean nw_texel_dma_copy(NwTexelDma *d, float *dst, const float *src, size_t n,
                                      int src_nc, int dst_nc, GError **error)
{
  g_return_val_if_fail(d != NULL && dst != NULL && src != NULL, FALSE);
  g_return_val_if_fail(src_nc == dst_nc || (src_nc == 3 && dst_nc == 4), FALSE);
  const char *at = (const char *)dst, *base = (const char *)d->host;
  g_return_val_if_fail(at >= base && at + n * dst_nc * sizeof(float) <= base + d->bytes, FALSE);
  if (n * (src_nc + (src_nc != dst_nc ? dst_nc : 0)) > d->scratch_floats) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "a copy of %zu voxels is larger than the scratch made for it", n);
    return FALSE;
  }
  if (!NW_CUDA_CHECK(cudaSetDevice(d->device), error))
    return FALSE;
  const gboolean queued = NW_CUDA_CHECK(queue_pieces(d, dst, src, n, src_nc, dst_nc), error);
  /* also after an error: nothing of this copy may still run when the caller falls back */
  const cudaError_t in_done = cudaStreamSynchronize(d->in);
  const cudaError_t out_done = cudaStreamSynchronize(d->out);
  return queued && NW_CUDA_CHECK(in_done, error) && NW_CUDA_CHECK(out_done, error);
}
