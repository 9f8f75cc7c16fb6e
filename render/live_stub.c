/* live_stub.c — the live-front, CUDA–GL interop and texel-copy API (cuda/interop/nw_live.h,
 * nw_cuda_gl.h, nw_texel_dma.h) in a build without CUDA: every call fails cleanly, so the
 * application takes the host-frame path and fills textures with the CPU. Any thread. */
#include <stdio.h>

#include "nw_cuda_gl.h"
#include "nw_error.h"
#include "nw_texel_dma.h"

static const char no_cuda[] = "built without CUDA";

const NwVoxelAllocator *nw_live_pinned_voxels(void)
{
  return NULL;
}

NwLiveFront *nw_live_front_new(GError **error)
{
  g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED, "live front: %s", no_cuda);
  return NULL;
}

void nw_live_front_free(NwLiveFront *f)
{
  g_return_if_fail(f == NULL);
}

gboolean nw_live_front_publish(NwLiveFront *f, const NwVolume *like, const float *d_image,
                               const void *d_field, int iteration, void *stream, GError **error)
{
  g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED, "live front: %s", no_cuda);
  return FALSE;
}

void nw_live_front_begin_read(NwLiveFront *f, void *stream, NwLiveView *view)
{
  *view = (NwLiveView){.iteration = -1};
}

void nw_live_front_end_read(NwLiveFront *f, void *stream)
{
}

int nw_live_front_iteration(NwLiveFront *f)
{
  return -1;
}

void nw_live_front_set_reduce(NwLiveFront *f, size_t max_voxels)
{
}

void nw_live_front_prepare_download(NwLiveFront *f)
{
}

void nw_live_front_recycle(NwLiveFront *f, NwVolume *v)
{
  nw_volume_free(v); /* no front to keep it for */
}

gboolean nw_live_front_download(NwLiveFront *f, int reduce, NwFrame *out, GError **error)
{
  g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED, "live front: %s", no_cuda);
  return FALSE;
}

gboolean nw_cuda_gl_available(char *why, size_t why_len)
{
  if (why != NULL && why_len > 0)
    snprintf(why, why_len, "%s", no_cuda);
  return FALSE;
}

NwCudaGl *nw_cuda_gl_register_texture3d(unsigned int texture, GError **error)
{
  g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED, "CUDA-GL interop: %s", no_cuda);
  return NULL;
}

NwCudaGl *nw_cuda_gl_register_buffer(unsigned int buffer, size_t bytes, GError **error)
{
  g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED, "CUDA-GL interop: %s", no_cuda);
  return NULL;
}

void nw_cuda_gl_unregister(NwCudaGl *r)
{
  g_return_if_fail(r == NULL);
}

gboolean nw_cuda_gl_fill_from_front(NwLiveFront *f, NwCudaGlTargets *t, int *iteration,
                                    GError **error)
{
  g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED, "CUDA-GL interop: %s", no_cuda);
  return FALSE;
}

NwTexelDma *nw_texel_dma_new(void *host, size_t bytes, size_t max_copy_bytes, GError **error)
{
  g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED, "GL's upload memory for the GPU's copies: %s",
              no_cuda);
  return NULL;
}

void nw_texel_dma_free(NwTexelDma *d)
{
  g_return_if_fail(d == NULL);
}

gboolean nw_texel_dma_copy(NwTexelDma *d, float *dst, const float *src, size_t n, int src_nc,
                           int dst_nc, GError **error)
{
  g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED, "GL's upload memory for the GPU's copies: %s",
              no_cuda);
  return FALSE;
}
