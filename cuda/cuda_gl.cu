/* cuda_gl.cu — CUDA–OpenGL interop helpers (see nw_cuda_gl.h): GL textures and buffers
 * registered with CUDA, filled device-to-device from a live front. CUDA back end; the
 * thread with the GL context current. Each such thread gets its own stream (created on first
 * use, kept for the thread's life), so the copies never wait behind a job's kernels on the
 * legacy default stream, only on the front's "ready" event. */
#include <GL/gl.h>
#include <cuda_gl_interop.h>
#include <cuda_runtime.h>
#include <stdio.h>

#include "cuda_check.h"
#include "live_reduce.cuh"
#include "live_reduce.h"
#include "nw_cuda.h"
#include "nw_cuda_gl.h"
#include "nw_error.h"
#include "nw_marching_cubes_cuda.h"

#ifndef GL_TEXTURE_3D
#define GL_TEXTURE_3D 0x806F
#endif

struct NwCudaGl {
  cudaGraphicsResource_t res;
  gboolean is_buffer;
  size_t bytes;      /* buffers */
  NwMcCuda *mc;      /* buffers: marching-cubes scratch, made on first use */
  float *small;      /* buffers: the image reduced for marching cubes, small_cap floats */
  size_t small_cap;
};

static thread_local cudaStream_t gl_stream;

static gboolean stream_for_thread(GError **error)
{
  if (gl_stream != NULL)
    return TRUE;
  return NW_CUDA_CHECK(nw_cuda_display_stream(&gl_stream), error);
}

extern "C" gboolean nw_cuda_gl_available(char *why, size_t why_len)
{
  char name[256];
  if (!nw_cuda_probe(name, sizeof name)) {
    if (why != NULL && why_len > 0)
      snprintf(why, why_len, "no CUDA device (%s)", name);
    return FALSE;
  }
  unsigned int count = 0;
  int devices[8];
  cudaError_t e = cudaGLGetDevices(&count, devices, 8, cudaGLDeviceListAll);
  if (e != cudaSuccess || count == 0) {
    cudaGetLastError(); /* reset the runtime's last-error state after the failed query */
    const char *renderer = (const char *)glGetString(GL_RENDERER);
    if (why != NULL && why_len > 0)
      snprintf(why, why_len, "the GL context is not on a CUDA device: %s",
               renderer != NULL ? renderer : "no GL context current");
    return FALSE;
  }
  /* jobs run on the current device (cuda_device.cu): frames cross only within one device */
  int job_device = 0;
  if (cudaGetDevice(&job_device) != cudaSuccess) {
    cudaGetLastError();
    if (why != NULL && why_len > 0)
      snprintf(why, why_len, "no current CUDA device");
    return FALSE;
  }
  for (unsigned int i = 0; i < count && i < 8; i++)
    if (devices[i] == job_device)
      return TRUE;
  if (why != NULL && why_len > 0)
    snprintf(why, why_len, "the GL context is on CUDA device %d, jobs run on device %d",
             devices[0], job_device);
  return FALSE;
}

static NwCudaGl *wrap(cudaGraphicsResource_t res, gboolean is_buffer, size_t bytes)
{
  NwCudaGl *r = g_new0(NwCudaGl, 1);
  r->res = res;
  r->is_buffer = is_buffer;
  r->bytes = bytes;
  return r;
}

extern "C" NwCudaGl *nw_cuda_gl_register_texture3d(unsigned int texture, GError **error)
{
  cudaGraphicsResource_t res = NULL;
  /* surface load/store: reduced fields are written by a kernel through a surface object */
  if (!NW_CUDA_CHECK(cudaGraphicsGLRegisterImage(&res, texture, GL_TEXTURE_3D,
                                                 cudaGraphicsRegisterFlagsWriteDiscard |
                                                     cudaGraphicsRegisterFlagsSurfaceLoadStore),
                     error)) {
    g_prefix_error(error, "GL texture %u: ", texture);
    return NULL;
  }
  return wrap(res, FALSE, 0);
}

extern "C" NwCudaGl *nw_cuda_gl_register_buffer(unsigned int buffer, size_t bytes, GError **error)
{
  cudaGraphicsResource_t res = NULL;
  if (!NW_CUDA_CHECK(cudaGraphicsGLRegisterBuffer(&res, buffer,
                                                  cudaGraphicsRegisterFlagsWriteDiscard),
                     error)) {
    g_prefix_error(error, "GL buffer %u: ", buffer);
    return NULL;
  }
  return wrap(res, TRUE, bytes);
}

extern "C" void nw_cuda_gl_unregister(NwCudaGl *r)
{
  if (r == NULL)
    return;
  if (gl_stream != NULL)
    cudaStreamSynchronize(gl_stream);
  cudaGraphicsUnregisterResource(r->res);
  nw_mc_cuda_free(r->mc);
  cudaFree(r->small);
  g_free(r);
}

/* The reduction of the front's grid by r. */
static NwReduceGrid reduce_grid(const NwLiveView *v, int r, double affine[16])
{
  NwReduceGrid g;
  nw_live_reduce_grid(v->nx, v->ny, v->nz, v->vox_to_ras, MAX(r, 1), g.f, g.d, affine);
  g.nx = v->nx;
  g.ny = v->ny;
  return g;
}

/* The mapped 3D array of tex, after checking that it has dims d and elem bytes per texel. */
static gboolean mapped_array(NwCudaGl *tex, const int d[3], size_t elem, const char *what,
                             cudaArray_t *array, GError **error)
{
  if (!NW_CUDA_CHECK(cudaGraphicsSubResourceGetMappedArray(array, tex->res, 0, 0), error))
    return FALSE;
  cudaChannelFormatDesc desc;
  cudaExtent ext;
  unsigned int flags = 0;
  if (!NW_CUDA_CHECK(cudaArrayGetInfo(&desc, &ext, &flags, *array), error))
    return FALSE;
  const size_t texel = (size_t)(desc.x + desc.y + desc.z + desc.w) / 8;
  if (ext.width != (size_t)d[0] || ext.height != (size_t)d[1] || ext.depth != (size_t)d[2] ||
      texel != elem) {
    g_set_error(error, NW_ERROR, NW_ERROR_MISMATCH,
                "%s texture of %zux%zux%zu (%zu bytes per texel) is stale: the frame gives it "
                "%dx%dx%d voxels of %zu bytes",
                what, ext.width, ext.height, ext.depth, texel, d[0], d[1], d[2], elem);
    return FALSE;
  }
  return TRUE;
}

/* One thread per reduced voxel: the field's block mean into the texture's array. */
__global__ void reduce_field_kernel(cudaSurfaceObject_t out, const float4 *__restrict__ field,
                                    NwReduceGrid g)
{
  size_t at;
  int i, j, k;
  if (!nw_reduce_thread(g, &at, &i, &j, &k))
    return;
  const float3 u = nw_reduce_field_at(field, g, i, j, k);
  surf3Dwrite(make_float4(u.x, u.y, u.z, 0.0f), out, i * (int)sizeof(float4), j, k);
}

/* One thread per reduced voxel: the image's block mean, for marching cubes. */
__global__ void reduce_image_kernel(float *__restrict__ out, const float *__restrict__ image,
                                    NwReduceGrid g)
{
  size_t at;
  int i, j, k;
  if (!nw_reduce_thread(g, &at, &i, &j, &k))
    return;
  out[at] = nw_reduce_image_at(image, g, i, j, k);
}

static unsigned int blocks_for(const NwReduceGrid &g, int block)
{
  return (unsigned int)(((size_t)g.d[0] * g.d[1] * g.d[2] + block - 1) / block);
}

/* The field, reduced by r (r > 1), into the field texture through a surface object. */
static gboolean reduce_field_to_array(NwCudaGl *tex, const NwLiveView *v, int r, GError **error)
{
  double affine[16];
  const NwReduceGrid g = reduce_grid(v, r, affine);
  cudaArray_t array = NULL;
  if (!mapped_array(tex, g.d, sizeof(float4), "field", &array, error))
    return FALSE;
  cudaResourceDesc rd = {};
  rd.resType = cudaResourceTypeArray;
  rd.res.array.array = array;
  cudaSurfaceObject_t surf = 0;
  if (!NW_CUDA_CHECK(cudaCreateSurfaceObject(&surf, &rd), error))
    return FALSE;
  reduce_field_kernel<<<blocks_for(g, 256), 256, 0, gl_stream>>>(surf, (const float4 *)v->field, g);
  gboolean ok = NW_CUDA_CHECK(nw_cuda_launched(gl_stream), error);
  cudaDestroySurfaceObject(surf); /* destruction waits for the work that uses it */
  return ok;
}

/* Linear device memory (elem bytes per voxel) into the mapped 3D array of tex, after checking
 * that the array is the front's size and has elem bytes per texel. */
static gboolean copy_to_array(NwCudaGl *tex, const void *src, size_t elem, const NwLiveView *v,
                              const char *what, GError **error)
{
  const int d[3] = {v->nx, v->ny, v->nz};
  cudaArray_t array = NULL;
  if (!mapped_array(tex, d, elem, what, &array, error))
    return FALSE;
  cudaMemcpy3DParms p = {};
  p.srcPtr = make_cudaPitchedPtr(const_cast<void *>(src), (size_t)v->nx * elem, (size_t)v->nx,
                                 (size_t)v->ny);
  p.dstArray = array;
  p.extent = make_cudaExtent((size_t)v->nx, (size_t)v->ny, (size_t)v->nz);
  p.kind = cudaMemcpyDeviceToDevice;
  return NW_CUDA_CHECK(cudaMemcpy3DAsync(&p, gl_stream), error);
}

static gboolean fill_mesh(NwCudaGlTargets *t, const NwLiveView *v, GError **error)
{
  NwCudaGl *buf = t->mesh_buf;
  float *dst = NULL;
  size_t bytes = 0;
  if (!NW_CUDA_CHECK(cudaGraphicsResourceGetMappedPointer((void **)&dst, &bytes, buf->res), error))
    return FALSE;
  const size_t tri_bytes = 3 * NW_CUDA_GL_VERTEX_FLOATS * sizeof(float);
  const size_t room = MIN(t->max_triangles, bytes / tri_bytes);
  if (buf->mc == NULL)
    buf->mc = nw_mc_cuda_new();
  if (t->mesh_reduce <= 1)
    return nw_mc_cuda_run(buf->mc, v->image, v->nx, v->ny, v->nz, v->vox_to_ras, t->iso, dst,
                          room, &t->n_total, &t->n_triangles, gl_stream, error);
  double affine[16];
  const NwReduceGrid g = reduce_grid(v, t->mesh_reduce, affine);
  const size_t n = (size_t)g.d[0] * g.d[1] * g.d[2];
  if (n > buf->small_cap) {
    cudaFree(buf->small);
    buf->small = NULL;
    buf->small_cap = 0;
    if (!NW_CUDA_CHECK(cudaMalloc(&buf->small, n * sizeof(float)), error))
      return FALSE;
    buf->small_cap = n;
  }
  reduce_image_kernel<<<blocks_for(g, 256), 256, 0, gl_stream>>>(buf->small, v->image, g);
  return NW_CUDA_CHECK(nw_cuda_launched(gl_stream), error) &&
         nw_mc_cuda_run(buf->mc, buf->small, g.d[0], g.d[1], g.d[2], affine, t->iso, dst, room,
                        &t->n_total, &t->n_triangles, gl_stream, error);
}

/* Map, copy, unmap inside one read of the front. */
static gboolean fill_locked(NwCudaGlTargets *t, const NwLiveView *v, GError **error)
{
  cudaGraphicsResource_t res[3];
  int n = 0;
  if (t->image_tex != NULL)
    res[n++] = t->image_tex->res;
  if (t->field_tex != NULL && v->field != NULL)
    res[n++] = t->field_tex->res;
  if (t->mesh_buf != NULL)
    res[n++] = t->mesh_buf->res;
  if (n == 0)
    return TRUE;
  if (!NW_CUDA_CHECK(cudaGraphicsMapResources(n, res, gl_stream), error))
    return FALSE;
  gboolean ok =
      (t->image_tex == NULL ||
       copy_to_array(t->image_tex, v->image, sizeof(float), v, "image", error)) &&
      (t->field_tex == NULL || v->field == NULL ||
       (t->field_reduce > 1 ? reduce_field_to_array(t->field_tex, v, t->field_reduce, error)
                            : copy_to_array(t->field_tex, v->field, sizeof(float4), v, "field",
                                            error))) &&
      (t->mesh_buf == NULL || fill_mesh(t, v, error));
  /* unmap even after a failure; keep the first error */
  cudaError_t e = cudaGraphicsUnmapResources(n, res, gl_stream);
  return ok && NW_CUDA_CHECK(e, error);
}

extern "C" gboolean nw_cuda_gl_fill_from_front(NwLiveFront *f, NwCudaGlTargets *t, int *iteration,
                                               GError **error)
{
  t->n_triangles = t->n_total = 0;
  *iteration = -1;
  if (!stream_for_thread(error))
    return FALSE;
  NwLiveView v;
  nw_live_front_begin_read(f, gl_stream, &v);
  gboolean ok = v.iteration < 0 || fill_locked(t, &v, error);
  nw_live_front_end_read(f, gl_stream);
  /* GL draws from the textures right after: the copies must be done */
  ok = ok && NW_CUDA_CHECK(cudaStreamSynchronize(gl_stream), error);
  if (ok)
    *iteration = v.iteration;
  else
    g_prefix_error(error, "live frame %d to GL: ", v.iteration);
  return ok;
}
