/* smooth_cuda.cu — the CUDA twin of the "smooth" method (core/cpu/smooth_method.h; CPU
 * reference core/cpu/smooth_cpu.c and core/smooth.c). CUDA back end. Every operation runs on
 * the job's worker thread, the one that called create: the state owns a stream and device
 * buffers that no other thread touches.
 *
 * Each iteration applies a separable Gaussian along x, then y, then z (sigma in mm converted
 * per axis with the voxel spacing; borders clamp), exactly as core/smooth.c specifies:
 * weights from nw_gauss_kernel on the host, one pass per axis (smooth_kernels.cu) that
 * equals the CPU's bit for bit on IEEE hosts. The weights travel as a kernel argument (in the
 * constant bank), not in a __constant__ symbol, so two jobs on one device cannot overwrite each
 * other's kernel.
 *
 * Layout (volume.h): data[((k * ny + j) * nx + i) * nc + c]; a "row" is the nx * nc floats
 * of one (j, k). Device buffers, each nx*ny*nz*nc floats: cur (the image), and two scratch
 * buffers that the passes ping-pong through; cur is kept until the iteration's figures
 * (which compare new with old) are reduced, then the pointers rotate. */
#include <cub/device/device_reduce.cuh>
#include <cuda_runtime.h>
#include <math.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "cuda_check.h"
#include "nw_cuda.h"
#include "nw_error.h"
#include "smooth.h"
#include "smooth_kernels.cuh"
#include "smooth_method.h"

/* ---- figures by one CUB reduction -------------------------------------------------------- */

/* Partial figures over a set of floats: sum and min/max of the new image, sum of squared
 * change. Sums in double like the CPU (volume.c, smooth_cpu.c). */
struct StatsAcc {
  double sum, sum_sq_change;
  float min, max;
};

struct StatsAt {
  const float *now, *before;
  __host__ __device__ StatsAcc operator()(long long e) const
  {
    float x = now[e];
    double d = (double)x - (double)before[e];
    return StatsAcc{(double)x, d * d, x, x};
  }
};

struct StatsCombine {
  __host__ __device__ StatsAcc operator()(const StatsAcc &a, const StatsAcc &b) const
  {
    return StatsAcc{a.sum + b.sum, a.sum_sq_change + b.sum_sq_change, a.min < b.min ? a.min : b.min,
                    a.max > b.max ? a.max : b.max};
  }
};

typedef thrust::transform_iterator<StatsAt, thrust::counting_iterator<long long>, StatsAcc>
    StatsIter;

static StatsIter stats_iter(const float *now, const float *before)
{
  return StatsIter(thrust::counting_iterator<long long>(0), StatsAt{now, before});
}

/* ---- state ------------------------------------------------------------------------------- */

typedef struct {
  int device;
  cudaStream_t stream;
  const NwVolume *like; /* the input, borrowed: grid and affine of frames and results */
  int nx, ny, nz, nc;
  size_t n_floats;
  float *cur, *scratch[2]; /* device, n_floats each */
  void *cub_temp;          /* CUB's scratch for the figures, sized once */
  size_t cub_temp_bytes;
  StatsAcc *d_stats, *h_stats; /* one result; h_stats is pinned */
  double sigma_mm;
  int iterations, done;
} CudaSmooth;

static void cuda_smooth_destroy(void *state)
{
  CudaSmooth *s = (CudaSmooth *)state;
  if (s == NULL)
    return;
  /* Teardown: errors here cannot be reported and must not stop the other frees. */
  cudaSetDevice(s->device);
  if (s->stream != NULL)
    cudaStreamSynchronize(s->stream);
  cudaFree(s->cur);
  cudaFree(s->scratch[0]);
  cudaFree(s->scratch[1]);
  cudaFree(s->cub_temp);
  cudaFree(s->d_stats);
  cudaFreeHost(s->h_stats);
  if (s->stream != NULL)
    cudaStreamDestroy(s->stream);
  cudaGetLastError();
  g_free(s);
}

/* The device memory the job needs must be free before anything is allocated, so a volume
 * too large for the GPU gets one clear message instead of a failed cudaMalloc. */
static gboolean check_free_memory(const CudaSmooth *s, GError **error)
{
  g_autofree char *what = g_strdup_printf("a %dx%dx%d volume with %d component(s)", s->nx, s->ny,
                                          s->nz, s->nc);
  return nw_cuda_check_fits(3 * s->n_floats * sizeof(float) + s->cub_temp_bytes + sizeof(StatsAcc),
                            what, "use --device cpu or a smaller image", error);
}

static gboolean cuda_smooth_alloc(CudaSmooth *s, const NwVolume *input, GError **error)
{
  size_t bytes = s->n_floats * sizeof(float);
  if (!NW_CUDA_CHECK(cudaGetDevice(&s->device), error) ||
      !NW_CUDA_CHECK(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking), error))
    return FALSE;
  StatsIter it = stats_iter(NULL, NULL);
  StatsAcc init = {0.0, 0.0, INFINITY, -INFINITY};
  if (!NW_CUDA_CHECK(cub::DeviceReduce::Reduce(NULL, s->cub_temp_bytes, it, (StatsAcc *)NULL,
                                               (long long)s->n_floats, StatsCombine(), init,
                                               s->stream),
                     error))
    return FALSE;
  return check_free_memory(s, error) && NW_CUDA_CHECK(cudaMalloc(&s->cur, bytes), error) &&
         NW_CUDA_CHECK(cudaMalloc(&s->scratch[0], bytes), error) &&
         NW_CUDA_CHECK(cudaMalloc(&s->scratch[1], bytes), error) &&
         NW_CUDA_CHECK(cudaMalloc(&s->cub_temp, s->cub_temp_bytes), error) &&
         NW_CUDA_CHECK(cudaMalloc(&s->d_stats, sizeof(StatsAcc)), error) &&
         NW_CUDA_CHECK(cudaMallocHost(&s->h_stats, sizeof(StatsAcc)), error) &&
         NW_CUDA_CHECK(
             cudaMemcpyAsync(s->cur, input->data, bytes, cudaMemcpyHostToDevice, s->stream),
             error) &&
         NW_CUDA_CHECK(cudaStreamSynchronize(s->stream), error);
}

static void *cuda_smooth_create(const NwMethodInputs *in, const NwParams *p, GError **error)
{
  /* Same checks and messages as the CPU twin, so both refuse the same input alike. */
  if (!nw_smooth_check_input(in, error))
    return NULL;
  /* The x pass's tile holds every component; kernels index within a row with int. */
  if (in->fixed->nc > NW_SMOOTH_MAX_COMPONENTS ||
      (gint64)in->fixed->nx * in->fixed->nc > G_MAXINT32 / 2) {
    g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED,
                "smooth (CUDA): rows of %d voxels with %d components are not supported on "
                "the GPU (at most %d components and 2^30 floats per row; use --device cpu)",
                in->fixed->nx, in->fixed->nc, NW_SMOOTH_MAX_COMPONENTS);
    return NULL;
  }
  CudaSmooth *s = g_new0(CudaSmooth, 1);
  s->like = in->fixed;
  s->nx = in->fixed->nx;
  s->ny = in->fixed->ny;
  s->nz = in->fixed->nz;
  s->nc = in->fixed->nc;
  s->n_floats = nw_volume_n_floats(in->fixed);
  s->sigma_mm = nw_params_get(p, "sigma");
  s->iterations = nw_params_get_int(p, "iterations");
  if (!cuda_smooth_alloc(s, in->fixed, error)) {
    g_prefix_error(error, "smooth (CUDA): ");
    cuda_smooth_destroy(s);
    return NULL;
  }
  return s;
}

/* Passes x, y, z from cur; *out is where the smoothed image ends (cur when no pass ran). */
static gboolean smooth_passes(CudaSmooth *s, const double sigma_vox[3], float **out, GError **error)
{
  const int dims[3] = {s->nx, s->ny, s->nz};
  const float *src = s->cur;
  int next = 0;
  for (int axis = 0; axis < 3; axis++) {
    if (dims[axis] == 1 || sigma_vox[axis] == 0.0)
      continue;
    NwGaussKernel k;
    nw_gauss_kernel(&k, sigma_vox[axis]);
    if (k.radius == 0)
      continue;
    float *dst = s->scratch[next];
    if (!NW_CUDA_CHECK(
            nw_smooth_pass_cuda(dst, src, s->nx, s->ny, s->nz, s->nc, axis, &k, s->stream), error))
      return FALSE;
    src = dst;
    next ^= 1;
  }
  *out = (float *)src;
  return TRUE;
}

static gboolean reduce_figures(CudaSmooth *s, const float *now, StatsAcc *acc, GError **error)
{
  StatsAcc init = {0.0, 0.0, INFINITY, -INFINITY};
  size_t bytes = s->cub_temp_bytes;
  if (!NW_CUDA_CHECK(cub::DeviceReduce::Reduce(s->cub_temp, bytes, stats_iter(now, s->cur),
                                               s->d_stats, (long long)s->n_floats, StatsCombine(),
                                               init, s->stream),
                     error) ||
      !NW_CUDA_CHECK(nw_cuda_launched(s->stream), error) ||
      !NW_CUDA_CHECK(cudaMemcpyAsync(s->h_stats, s->d_stats, sizeof(StatsAcc),
                                     cudaMemcpyDeviceToHost, s->stream),
                     error) ||
      !NW_CUDA_CHECK(cudaStreamSynchronize(s->stream), error))
    return FALSE;
  *acc = *s->h_stats;
  return TRUE;
}

static gboolean cuda_smooth_step(void *state, NwIterationReport *report, GError **error)
{
  CudaSmooth *s = (CudaSmooth *)state;
  double sigma_vox[3];
  float *now = NULL;
  StatsAcc acc;
  if (!nw_smooth_sigma_voxels(s->like, s->sigma_mm, sigma_vox, error)) {
    g_prefix_error(error, "smooth: iteration %d: ", s->done + 1);
    return FALSE;
  }
  if (!NW_CUDA_CHECK(cudaSetDevice(s->device), error) ||
      !smooth_passes(s, sigma_vox, &now, error) || !reduce_figures(s, now, &acc, error)) {
    g_prefix_error(error, "smooth (CUDA): iteration %d: ", s->done + 1);
    return FALSE;
  }
  if (now != s->cur) { /* rotate: the smoothed buffer becomes the image */
    float *old = s->cur;
    int slot = now == s->scratch[0] ? 0 : 1;
    s->cur = now;
    s->scratch[slot] = old;
  }
  s->done++;
  nw_smooth_fill_report(report, s->done, s->iterations,
                        sqrt(acc.sum_sq_change / (double)s->n_floats),
                        acc.sum / (double)s->n_floats, acc.min, acc.max);
  return TRUE;
}

/* Only sigma is live; the runner refuses a change of iterations before it gets here. */
static gboolean cuda_smooth_set_params(void *state, const NwParams *p, GError **error)
{
  CudaSmooth *s = (CudaSmooth *)state;
  s->sigma_mm = nw_params_get(p, "sigma");
  return TRUE;
}

/* A host copy of the current image on the input's grid. */
static NwVolume *download_image(CudaSmooth *s, GError **error)
{
  g_autoptr(NwVolume) v = nw_volume_new_like(s->like, s->nc, error);
  if (v == NULL)
    return NULL;
  if (!NW_CUDA_CHECK(cudaSetDevice(s->device), error) ||
      !NW_CUDA_CHECK(cudaMemcpyAsync(v->data, s->cur, s->n_floats * sizeof(float),
                                     cudaMemcpyDeviceToHost, s->stream),
                     error) ||
      !NW_CUDA_CHECK(cudaStreamSynchronize(s->stream), error))
    return NULL;
  return (NwVolume *)g_steal_pointer(&v);
}

static gboolean cuda_smooth_publish_frame(void *state, NwFrame *frame, GError **error)
{
  CudaSmooth *s = (CudaSmooth *)state;
  frame->iteration = s->done;
  frame->field = NULL;
  frame->image = download_image(s, error);
  if (frame->image == NULL)
    g_prefix_error(error, "smooth (CUDA): frame: ");
  return frame->image != NULL;
}

static NwMethodResult *cuda_smooth_result(void *state, GError **error)
{
  CudaSmooth *s = (CudaSmooth *)state;
  NwVolume *image = download_image(s, error);
  if (image == NULL) {
    g_prefix_error(error, "smooth (CUDA): result: ");
    return NULL;
  }
  NwMethodResult *r = nw_method_result_new();
  nw_method_result_add(r, "smoothed", image);
  return r;
}

/* C++20 designated initialisers: the slots of NwMethodOps by name, in their order. */
extern "C" const NwMethodOps nw_smooth_cuda_ops = {
    .name = "smooth",
    .device = NW_DEVICE_CUDA,
    .description =
        "Iterated Gaussian smoothing of one image on the GPU (the reference pipeline test)",
    .params = nw_smooth_param_specs, /* shared with the CPU twin */
    .n_params = NW_SMOOTH_N_PARAMS,
    .needs_moving = FALSE,
    .plot_figures = nw_smooth_plot_figures,
    .create = cuda_smooth_create,
    .step = cuda_smooth_step,
    .set_params = cuda_smooth_set_params,
    .publish_frame = cuda_smooth_publish_frame,
    .publish_device_frame = NULL, /* live smoothing shows host frames */
    .result = cuda_smooth_result,
    .destroy = cuda_smooth_destroy,
};
