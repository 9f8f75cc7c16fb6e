/* live_front.cu — the front buffer of a live job (see nw_live.h). CUDA back end; the
 * writer is the job's worker thread, readers are drawing threads, each on its own stream.
 * A GMutex guards the bookkeeping; the order of copies is kept on the GPU with two events. */
#include <cuda_runtime.h>
#include <string.h>

#include "cuda_check.h"
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
};

#define CHECK(call)                                                                            \
  do {                                                                                         \
    if (!NW_CUDA_CHECK((call), error))                                                         \
      return FALSE;                                                                            \
  } while (0)

extern "C" NwLiveFront *nw_live_front_new(GError **error)
{
  int device = 0;
  if (!NW_CUDA_CHECK(cudaGetDevice(&device), error))
    return NULL;
  NwLiveFront *f = g_new0(NwLiveFront, 1);
  g_mutex_init(&f->lock);
  f->device = device;
  f->iteration = -1;
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
  cudaFree(f->image);
  cudaFree(f->field);
  if (f->ready != NULL)
    cudaEventDestroy(f->ready);
  if (f->consumed != NULL)
    cudaEventDestroy(f->consumed);
  g_mutex_clear(&f->lock);
  g_free(f);
}

/* Under lock: buffers for like's grid. When the grid changes the old buffers are freed
 * after the last read and last publish have finished on the GPU. */
static gboolean fit_grid(NwLiveFront *f, const NwVolume *like, gboolean with_field,
                         GError **error)
{
  const gboolean same = f->image != NULL && like->nx == f->nx && like->ny == f->ny &&
                        like->nz == f->nz &&
                        memcmp(like->vox_to_ras, f->vox_to_ras, sizeof f->vox_to_ras) == 0;
  const size_t n = (size_t)like->nx * like->ny * like->nz;
  if (!same) {
    CHECK(cudaEventSynchronize(f->consumed));
    CHECK(cudaEventSynchronize(f->ready));
    cudaFree(f->image);
    cudaFree(f->field);
    f->image = NULL;
    f->field = NULL;
    CHECK(cudaMalloc(&f->image, n * sizeof(float)));
    f->nx = like->nx;
    f->ny = like->ny;
    f->nz = like->nz;
    memcpy(f->vox_to_ras, like->vox_to_ras, sizeof f->vox_to_ras);
    f->grid_generation++;
    f->published = FALSE;
  }
  if (with_field && f->field == NULL)
    CHECK(cudaMalloc(&f->field, n * sizeof(float4)));
  return TRUE;
}

extern "C" gboolean nw_live_front_publish(NwLiveFront *f, const NwVolume *like,
                                          const float *d_image, const void *d_field,
                                          int iteration, void *stream, GError **error)
{
  g_return_val_if_fail(f != NULL && like != NULL && d_image != NULL, FALSE);
  cudaStream_t s = (cudaStream_t)stream;
  const size_t n = (size_t)like->nx * like->ny * like->nz;
  g_mutex_lock(&f->lock);
  gboolean ok = cudaSetDevice(f->device) == cudaSuccess && fit_grid(f, like, d_field != NULL, error);
  /* the copies must not overwrite what a reader is still copying out */
  ok = ok && NW_CUDA_CHECK(cudaStreamWaitEvent(s, f->consumed, 0), error) &&
       NW_CUDA_CHECK(cudaMemcpyAsync(f->image, d_image, n * sizeof(float),
                                     cudaMemcpyDeviceToDevice, s),
                     error) &&
       (d_field == NULL || NW_CUDA_CHECK(cudaMemcpyAsync(f->field, d_field, n * sizeof(float4),
                                                         cudaMemcpyDeviceToDevice, s),
                                         error)) &&
       NW_CUDA_CHECK(cudaEventRecord(f->ready, s), error);
  if (ok) {
    f->has_field = d_field != NULL;
    f->iteration = iteration;
    f->published = TRUE;
  }
  g_mutex_unlock(&f->lock);
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
