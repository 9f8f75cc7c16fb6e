/* nw_cuda_gl.h — CUDA–OpenGL interop helpers: GL textures and buffers registered with CUDA
 * and filled device-to-device from a live front (nw_live.h), and marching cubes on the GPU
 * writing straight into a registered vertex buffer. Nothing here moves voxel or vertex data
 * through host memory.
 *
 * Thread: the one with the GL context current (the context must stay current across each
 * call). CUDA work is enqueued on one stream owned by this module per thread and waited for
 * before a call returns only where it says so. Implementation: cuda/cuda_gl.cu (library
 * nw_cuda_gl, built with CUDA and OpenGL); stubs in render/live_stub.c otherwise. */
#ifndef NW_CUDA_GL_H
#define NW_CUDA_GL_H

#include <glib.h>
#include <stddef.h>

#include "nw_live.h"

#ifdef __cplusplus
extern "C" {
#endif

/* TRUE when the current GL context runs on a CUDA device this process can use (so
 * registration can work): cudaGLGetDevices finds one. FALSE with a one-line reason
 * ("built without CUDA", "no CUDA device", "the GL context is not on a CUDA device: Mesa
 * llvmpipe", ...) otherwise: callers then fall back to host frames. */
gboolean nw_cuda_gl_available(char *why, size_t why_len);

typedef struct NwCudaGl NwCudaGl; /* a registered GL object */

/* A GL_TEXTURE_3D with internal format GL_R32F or GL_RGBA32F (write-discard). */
NwCudaGl *nw_cuda_gl_register_texture3d(unsigned int texture, GError **error);
/* A GL_ARRAY_BUFFER (write-discard), bytes long. */
NwCudaGl *nw_cuda_gl_register_buffer(unsigned int buffer, size_t bytes, GError **error);
void nw_cuda_gl_unregister(NwCudaGl *r);

/* Vertex layout written by the iso-surface: 6 floats per vertex (position RAS mm, unit
 * normal pointing outward, i.e. to lower values), 3 vertices per triangle, no index buffer. */
#define NW_CUDA_GL_VERTEX_FLOATS 6

/* What to fill from the front, any of them NULL. Textures must have the dims the frame
 * gives them and their format (checked: an error says the texture is stale;
 * render/gl_live.h re-makes them when the grid changes). image_tex: GL_R32F, the front's
 * grid; field_tex: GL_RGBA32F (xyz = u in voxels of the texture's grid), the front's grid
 * reduced by field_reduce (block means, core/live_reduce.h; 0 or 1: full size); mesh_buf: a
 * registered buffer receiving at most max_triangles triangles (bounded by its size too) of
 * the iso-surface at iso of the image reduced by mesh_reduce (order and conventions of
 * core/marching_cubes.h on that grid, as a triangle soup). Outputs: n_triangles written,
 * n_total the whole surface's count (more than written when the buffer is too small: grow
 * it). Reducing the field and the surface, which the views do not need at full resolution
 * while a job runs, keeps their copy and marching cubes small beside the job's own work. */
typedef struct {
  NwCudaGl *image_tex;
  NwCudaGl *field_tex;
  NwCudaGl *mesh_buf;
  int field_reduce, mesh_reduce;
  float iso;
  size_t max_triangles;
  size_t n_triangles, n_total; /* out */
} NwCudaGlTargets;

/* One consistent frame: a single begin_read/end_read around map, copy, unmap of every
 * target. Returns after the copies have finished on the GPU (GL may draw from them then).
 * *iteration: the frame's iteration (-1 and nothing copied when nothing was published). */
gboolean nw_cuda_gl_fill_from_front(NwLiveFront *f, NwCudaGlTargets *t, int *iteration,
                                    GError **error);

#ifdef __cplusplus
}
#endif

#endif
