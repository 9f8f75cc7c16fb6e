/* live_front.cu — the front buffer of a live job (see nw_live.h). CUDA back end; the
 * writer is the job's worker thread, readers are drawing threads, each on its own stream.
 * A GMutex guards the bookkeeping; the order of copies is kept on the GPU with two events. */
#include <cuda_runtime.h>
#include <string.h>

#include "cuda_check.h"
#include "live_reduce.h"
#include "live_reduce.cuh"
#include "live_spares.h"
#include "nw_error.h"
#include "nw_live.h"

struct NwLiveFront {
  GMutex lock;
  int device;
  cudaEvent_t ready;    /* recorded by the writer after its copies */
  cudaEvent_t consumed; /* recorded by the last reader after its copies */
  gboolean published, read_since_alloc;
  int iteration;
  int nx, ny, nz;
  double vox_to_ras[16];
  gboolean has_field;
  float *image;  /* nx*ny*nz */
  float4 *field; /* nx*ny*nz, or NULL until a frame with a field */
  guint64 grid_generation;
  /* Host downloads (nw_live_front_download), serialised by dl_lock: their own stream, and
   * a device staging buffer of dl_cap floats (reduced image, then the reduced field as 3
   * floats per voxel), grown when a frame needs more. */
  GMutex dl_lock;
  cudaStream_t dl_stream;
  float *d_small;
  size_t dl_cap;
  /* Fronts that only feed host frames keep a reduced frame (nw_live_front_set_reduce):
   * publish_max_voxels bounds its grid (0: full size), reduce is the factor of the last
   * publish. */
  size_t publish_max_voxels;
  int reduce;
  /* Host volumes for the next download (core/live_spares.h, its own lock): the ones the
   * taker gave back (nw_live_front_recycle), else made ahead of it. Their memory is pinned
   * (kPinnedVoxels), so the download's copy lands in the frame itself: no CPU copy from a
   * staging buffer (0.8 ms a 10 MB frame on the H100 host, 3-5 times that in its slow
   * moments: most of the host path's late frames, issue 8). */
  NwLiveSpares spares;
};

/* Pinned host memory for the frames' volumes. Portable: freed on whichever thread lets go
 * of the volume last (the display's, mostly). cudaFreeHost waits for the device: the spares
 * free only when the grid changes or a slot is full, not per frame. */
static void *pinned_alloc(size_t bytes)
{
  void *p = NULL;
  if (cudaHostAlloc(&p, bytes, cudaHostAllocPortable) != cudaSuccess) {
    cudaGetLastError(); /* not an error of the next call: the spares fall back to GLib's */
    return NULL;
  }
  return p;
}

static void pinned_free(void *memory)
{
  cudaFreeHost(memory);
}

static const NwVoxelAllocator kPinnedVoxels = {pinned_alloc, pinned_free, TRUE};

extern "C" const NwVoxelAllocator *nw_live_pinned_voxels(void)
{
  return &kPinnedVoxels;
}

extern "C" NwLiveFront *nw_live_front_new(GError **error)
{
  int device = 0;
  if (!NW_CUDA_CHECK(cudaGetDevice(&device), error))
    return NULL;
  NwLiveFront *f = g_new0(NwLiveFront, 1);
  g_mutex_init(&f->lock);
  f->device = device;
  f->iteration = -1;
  f->reduce = 1;
  g_mutex_init(&f->dl_lock);
  nw_live_spares_init(&f->spares, &kPinnedVoxels);
  if (!NW_CUDA_CHECK(cudaEventCreateWithFlags(&f->ready, cudaEventDisableTiming), error) ||
      !NW_CUDA_CHECK(cudaEventCreateWithFlags(&f->consumed, cudaEventDisableTiming), error)) {
    nw_live_front_free(f);
    return NULL;
  }
  return f;
}

extern "C" void nw_live_front_free(NwLiveFront *f)
{
  if (f == NULL)
    return;
  cudaSetDevice(f->device);
  if (f->consumed != NULL)
    cudaEventSynchronize(f->consumed);
  if (f->ready != NULL)
    cudaEventSynchronize(f->ready);
  if (f->dl_stream != NULL) {
    cudaStreamSynchronize(f->dl_stream);
    cudaStreamDestroy(f->dl_stream);
  }
  cudaFree(f->d_small);
  nw_live_spares_clear(&f->spares);
  cudaFree(f->image);
  cudaFree(f->field);
  if (f->ready != NULL)
    cudaEventDestroy(f->ready);
  if (f->consumed != NULL)
    cudaEventDestroy(f->consumed);
  g_mutex_clear(&f->dl_lock);
  g_mutex_clear(&f->lock);
  g_free(f);
}

/* Under lock: buffers for like's grid. When the grid changes the old buffers are freed
 * after the last read and last publish have finished on the GPU. */
static gboolean fit_grid(NwLiveFront *f, const int d[3], const double vox_to_ras[16],
                         gboolean with_field, GError **error)
{
  const gboolean same = f->image != NULL && d[0] == f->nx && d[1] == f->ny && d[2] == f->nz &&
                        memcmp(vox_to_ras, f->vox_to_ras, sizeof f->vox_to_ras) == 0;
  const size_t n = (size_t)d[0] * d[1] * d[2];
  if (!same) {
    if (!NW_CUDA_CHECK(cudaEventSynchronize(f->consumed), error))
      return FALSE;
    if (!NW_CUDA_CHECK(cudaEventSynchronize(f->ready), error))
      return FALSE;
    cudaFree(f->image);
    cudaFree(f->field);
    f->image = NULL;
    f->field = NULL;
    if (!NW_CUDA_CHECK(cudaMalloc(&f->image, n * sizeof(float)), error))
      return FALSE;
    f->nx = d[0];
    f->ny = d[1];
    f->nz = d[2];
    memcpy(f->vox_to_ras, vox_to_ras, sizeof f->vox_to_ras);
    f->grid_generation++;
    f->published = FALSE;
  }
  if (with_field && f->field == NULL)
    if (!NW_CUDA_CHECK(cudaMalloc(&f->field, n * sizeof(float4)), error))
      return FALSE;
  return TRUE;
}

/* One thread per reduced voxel: the writer's frame reduced into the front (image, and the
 * field as float4 with w 0), on the writer's stream (live_reduce.cuh). */
__global__ void publish_reduced_kernel(float *__restrict__ image_out, float4 *__restrict__ field_out,
                                       const float *__restrict__ image,
                                       const float4 *__restrict__ field, NwReduceGrid g)
{
  size_t at;
  int i, j, k;
  if (!nw_reduce_thread(g, &at, &i, &j, &k))
    return;
  image_out[at] = nw_reduce_image_at(image, g, i, j, k);
  if (field != NULL) {
    const float3 u = nw_reduce_field_at(field, g, i, j, k);
    field_out[at] = make_float4(u.x, u.y, u.z, 0.0f);
  }
}

extern "C" void nw_live_front_set_reduce(NwLiveFront *f, size_t max_voxels)
{
  g_mutex_lock(&f->lock);
  f->publish_max_voxels = max_voxels;
  g_mutex_unlock(&f->lock);
}

/* Under lock, after fit_grid: the copies (or the reduction) into the front on stream s. */
static gboolean copy_in(NwLiveFront *f, const NwVolume *like, const float *d_image,
                        const float4 *d_field, const NwReduceGrid &g, cudaStream_t s,
                        GError **error)
{
  const size_t n = (size_t)like->nx * like->ny * like->nz;
  if (f->reduce > 1) {
    const size_t m = (size_t)g.d[0] * g.d[1] * g.d[2];
    publish_reduced_kernel<<<(unsigned int)((m + 255) / 256), 256, 0, s>>>(f->image, f->field,
                                                                           d_image, d_field, g);
    return NW_CUDA_CHECK(nw_cuda_launched(s), error);
  }
  return NW_CUDA_CHECK(
             cudaMemcpyAsync(f->image, d_image, n * sizeof(float), cudaMemcpyDeviceToDevice, s),
             error) &&
         (d_field == NULL || NW_CUDA_CHECK(cudaMemcpyAsync(f->field, d_field, n * sizeof(float4),
                                                           cudaMemcpyDeviceToDevice, s),
                                           error));
}

static void reserve_download(NwLiveFront *f, const int d[3]);

extern "C" gboolean nw_live_front_publish(NwLiveFront *f, const NwVolume *like,
                                          const float *d_image, const void *d_field,
                                          int iteration, void *stream, GError **error)
{
  g_return_val_if_fail(f != NULL && like != NULL && d_image != NULL, FALSE);
  cudaStream_t s = (cudaStream_t)stream;
  g_mutex_lock(&f->lock);
  /* the front's grid: the frame's, or its reduction for a front of host frames */
  const int r = f->publish_max_voxels > 0
                    ? nw_live_reduce_choose(like->nx, like->ny, like->nz, f->publish_max_voxels)
                    : 1;
  NwReduceGrid g;
  double affine[16];
  nw_live_reduce_grid(like->nx, like->ny, like->nz, like->vox_to_ras, r, g.f, g.d, affine);
  g.nx = like->nx;
  g.ny = like->ny;
  f->reduce = r;
  const guint64 generation = f->grid_generation;
  gboolean ok = cudaSetDevice(f->device) == cudaSuccess &&
                fit_grid(f, g.d, affine, d_field != NULL, error);
  /* the copies must not overwrite what a reader is still copying out */
  ok = ok && NW_CUDA_CHECK(cudaStreamWaitEvent(s, f->consumed, 0), error) &&
       copy_in(f, like, d_image, (const float4 *)d_field, g, s, error) &&
       NW_CUDA_CHECK(cudaEventRecord(f->ready, s), error);
  if (ok) {
    f->has_field = d_field != NULL;
    f->iteration = iteration;
    f->published = TRUE;
  }
  /* a new grid of a front of host frames only (set_reduce) */
  const gboolean reserve = ok && f->grid_generation != generation && f->publish_max_voxels > 0;
  g_mutex_unlock(&f->lock);
  if (reserve)
    reserve_download(f, g.d);
  if (!ok)
    g_prefix_error(error, "live frame of iteration %d: ", iteration);
  return ok;
}

extern "C" void nw_live_front_begin_read(NwLiveFront *f, void *stream, NwLiveView *view)
{
  g_mutex_lock(&f->lock);
  memset(view, 0, sizeof *view);
  view->iteration = -1;
  if (!f->published)
    return;
  cudaSetDevice(f->device);
  /* An error here surfaces at the reader's next checked call on the same stream. */
  if (stream != NULL)
    cudaStreamWaitEvent((cudaStream_t)stream, f->ready, 0);
  view->iteration = f->iteration;
  view->nx = f->nx;
  view->ny = f->ny;
  view->nz = f->nz;
  memcpy(view->vox_to_ras, f->vox_to_ras, sizeof view->vox_to_ras);
  view->image = f->image;
  view->field = f->has_field ? f->field : NULL;
  view->grid_generation = f->grid_generation;
  view->reduce = f->reduce;
}

extern "C" void nw_live_front_end_read(NwLiveFront *f, void *stream)
{
  if (f->published && stream != NULL)
    cudaEventRecord(f->consumed, (cudaStream_t)stream);
  g_mutex_unlock(&f->lock);
}

extern "C" int nw_live_front_iteration(NwLiveFront *f)
{
  g_mutex_lock(&f->lock);
  int it = f->published ? f->iteration : -1;
  g_mutex_unlock(&f->lock);
  return it;
}

/* ---- host downloads ------------------------------------------------------------------------ */

/* One thread per reduced voxel: the image into out[0 .. n), the field (xyz of float4 in
 * reduced voxels) into out[n + 3 * voxel + c] (live_reduce.cuh). */
__global__ void reduce_frame_kernel(float *__restrict__ out, const float *__restrict__ image,
                                    const float4 *__restrict__ field, NwReduceGrid g)
{
  const size_t n = (size_t)g.d[0] * g.d[1] * g.d[2];
  size_t at;
  int i, j, k;
  if (!nw_reduce_thread(g, &at, &i, &j, &k))
    return;
  out[at] = nw_reduce_image_at(image, g, i, j, k);
  if (field != NULL) {
    const float3 u = nw_reduce_field_at(field, g, i, j, k);
    out[n + 3 * at + 0] = u.x;
    out[n + 3 * at + 1] = u.y;
    out[n + 3 * at + 2] = u.z;
  }
}

/* Under dl_lock: the download stream and room for `floats` device staging floats. */
static gboolean fit_download(NwLiveFront *f, size_t floats, GError **error)
{
  if (f->dl_stream == NULL)
    if (!NW_CUDA_CHECK(nw_cuda_display_stream(&f->dl_stream), error))
      return FALSE;
  if (floats <= f->dl_cap)
    return TRUE;
  if (!NW_CUDA_CHECK(cudaStreamSynchronize(f->dl_stream), error))
    return FALSE;
  cudaFree(f->d_small);
  f->d_small = NULL;
  f->dl_cap = 0;
  if (!NW_CUDA_CHECK(cudaMalloc(&f->d_small, floats * sizeof(float)), error))
    return FALSE;
  f->dl_cap = floats;
  return TRUE;
}

/* A front of host frames has a new grid d: the downloader's stream, staging and (pinned)
 * host volumes for it now, on the writer's thread, and its kernel loaded (CUDA loads a module at
 * its first launch), so that the first frame a display asks for does not wait for them
 * (pinning ~10 MB takes milliseconds) while the job runs on: the job pays it once per grid
 * instead. Skipped when a download holds them (it grows them). */
static void reserve_download(NwLiveFront *f, const int d[3])
{
  if (!g_mutex_trylock(&f->dl_lock))
    return;
  GError *error = NULL;
  cudaFuncAttributes loaded;
  if (fit_download(f, 4 * (size_t)d[0] * d[1] * d[2], &error) &&
      NW_CUDA_CHECK(cudaFuncGetAttributes(&loaded, reduce_frame_kernel), &error)) {
    nw_live_spares_set_grid(&f->spares, d);
    nw_live_spares_prepare(&f->spares);
  } else {
    g_debug("live view: %s", error->message); /* the download will try again and say */
    g_clear_error(&error);
  }
  g_mutex_unlock(&f->dl_lock);
}

/* Under dl_lock, after nw_live_spares_set_grid: a volume of the reduced grid with `nc`
 * floats per voxel (a spare one when there is), its copy from src (device memory) queued on
 * the download stream. Every float and the affine are overwritten, so a recycled volume
 * needs no clearing. */
static NwVolume *host_volume(NwLiveFront *f, const double affine[16], int nc, const float *src,
                             GError **error)
{
  NwVolume *v = nw_live_spares_take(&f->spares, nc, error);
  if (v == NULL)
    return NULL;
  nw_volume_set_affine(v, affine);
  if (!NW_CUDA_CHECK(cudaMemcpyAsync(v->data, src, nw_volume_n_floats(v) * sizeof(float),
                                     cudaMemcpyDeviceToHost, f->dl_stream),
                     error)) {
    nw_live_spares_give(&f->spares, v);
    return NULL;
  }
  return v;
}

/* Under dl_lock: reduce on the GPU inside one read of the front (so the writer waits only
 * for the kernel), then copy into the frame's (pinned) volumes and wait for those copies. When the staging is
 * too small for the frame (a first download, a finer level) the read is given up, the
 * buffers grown, and the read made again. */
static gboolean download_locked(NwLiveFront *f, int reduce, NwFrame *out, GError **error)
{
  if (!fit_download(f, 0, error))
    return FALSE;
  for (int attempt = 0; attempt < 4; attempt++) {
    NwLiveView v;
    nw_live_front_begin_read(f, f->dl_stream, &v);
    if (v.iteration < 0) {
      nw_live_front_end_read(f, f->dl_stream);
      return TRUE;
    }
    NwReduceGrid g;
    double affine[16];
    nw_live_reduce_grid(v.nx, v.ny, v.nz, v.vox_to_ras, MAX(reduce, 1), g.f, g.d, affine);
    g.nx = v.nx;
    g.ny = v.ny;
    const size_t n = (size_t)g.d[0] * g.d[1] * g.d[2], floats = v.field != NULL ? 4 * n : n;
    if (floats > f->dl_cap) {
      nw_live_front_end_read(f, f->dl_stream);
      if (!fit_download(f, 4 * n, error))
        return FALSE;
      continue;
    }
    const int block = 256;
    reduce_frame_kernel<<<(unsigned int)((n + block - 1) / block), block, 0, f->dl_stream>>>(
        f->d_small, v.image, (const float4 *)v.field, g);
    gboolean ok = NW_CUDA_CHECK(nw_cuda_launched(f->dl_stream), error);
    nw_live_front_end_read(f, f->dl_stream); /* the writer may publish after the kernel */
    if (!ok)
      return FALSE;
    out->iteration = v.iteration;
    nw_live_spares_set_grid(&f->spares, g.d);
    /* on an error the caller clears out after the stream's copies are waited for below */
    ok = (out->image = host_volume(f, affine, 1, f->d_small, error)) != NULL &&
         (v.field == NULL || (out->field = host_volume(f, affine, 3, f->d_small + n, error)) != NULL);
    /* the frame's copies done (also after an error: its volumes are freed after this) */
    const cudaError_t synced = cudaStreamSynchronize(f->dl_stream);
    return ok && NW_CUDA_CHECK(synced, error);
  }
  g_set_error(error, NW_ERROR, NW_ERROR_DEVICE, "the front kept changing size");
  return FALSE;
}

extern "C" gboolean nw_live_front_download(NwLiveFront *f, int reduce, NwFrame *out,
                                           GError **error)
{
  g_return_val_if_fail(f != NULL && out != NULL, FALSE);
  memset(out, 0, sizeof *out);
  out->iteration = -1;
  g_mutex_lock(&f->dl_lock);
  gboolean ok = cudaSetDevice(f->device) == cudaSuccess && download_locked(f, reduce, out, error);
  g_mutex_unlock(&f->dl_lock);
  if (!ok) {
    nw_frame_clear(out);
    out->iteration = -1;
    g_prefix_error(error, "live frame to host memory: ");
  }
  return ok;
}

/* Not under dl_lock: the spares guard themselves. The worker's reserve for a new grid may
 * prepare at the same time: of two volumes made for one slot one is kept, the other freed. */
extern "C" void nw_live_front_prepare_download(NwLiveFront *f)
{
  nw_live_spares_prepare(&f->spares);
}

extern "C" void nw_live_front_recycle(NwLiveFront *f, NwVolume *v)
{
  nw_live_spares_give(&f->spares, v);
}
