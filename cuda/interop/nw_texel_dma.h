/* nw_texel_dma.h — a texture's upload memory filled by the GPU's copy engines instead of a
 * CPU copy: the live view's host frames (issue 8).
 *
 * A host frame of a CUDA job lies in pinned memory (cuda/live_front.cu). Filling a texture
 * from it took a CPU copy into GL's upload buffer on the display thread: 0.7-0.85 ms for a
 * 256³ job's frame on the H100 host, but 4-5 ms whenever that machine slowed all its CPUs at
 * once (up to ~100 ms at a time, several times a second), and a frame caught in that came
 * two iterations late. Copy engines do not slow with the CPUs. GL's upload buffer (client
 * storage, mapped for good: render/gl_volume.c) is registered with CUDA here, and a copy runs
 * pinned frame -> device scratch -> GL's buffer, in pieces on two streams so that the two
 * directions overlap; on the way a field's xyz is padded to the texture's RGBA. No kernel of
 * the job's is waited for: the streams are the display's (high priority, non-blocking).
 *
 * Thread: the one that owns the buffer (the display's); calls block until the copy is done.
 * Implementation: cuda/texel_dma.cu (library nw_cuda_gl); render/live_stub.c without CUDA,
 * where nw_texel_dma_new says "built without CUDA". */
#ifndef NW_TEXEL_DMA_H
#define NW_TEXEL_DMA_H

#include <glib.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct NwTexelDma NwTexelDma;

/* host: `bytes` of host memory (GL's mapped upload buffer), registered with CUDA for the
 * object's life; max_copy_bytes: the largest copy to come (scratch for one copy's source and
 * destination is made now, not inside a frame). NULL and an error when CUDA cannot (no device,
 * memory the driver refuses to register). */
NwTexelDma *nw_texel_dma_new(void *host, size_t bytes, size_t max_copy_bytes, GError **error);
/* Waits for its copies, unregisters the memory (before the caller frees it). NULL is fine. */
void nw_texel_dma_free(NwTexelDma *d);

/* n voxels of src_nc floats at src (pinned host memory: cudaHostAlloc or registered) into
 * dst (inside the registered memory) as dst_nc floats a voxel: the same (1 -> 1, 4 -> 4), or
 * 3 -> 4 with w = 0. Returns once dst holds them. FALSE and an error on a CUDA failure; the
 * caller then copies with the CPU. */
gboolean nw_texel_dma_copy(NwTexelDma *d, float *dst, const float *src, size_t n, int src_nc,
                           int dst_nc, GError **error);

#ifdef __cplusplus
}
#endif

#endif
