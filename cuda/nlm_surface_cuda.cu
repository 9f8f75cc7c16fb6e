/* nlm_surface_cuda.cu — the CUDA twin of "nlm-surface" (core/cpu/nlm_surface_method.h; CPU
 * reference core/cpu/nlm_surface_cpu.c): same parameters, input check and report
 * (nlm_surface_common.c), the kernels of nlm_kernels.cuh in the CPU's order. CUDA back end;
 * every operation on the job's worker thread, which owns the stream and the buffers.
 *
 * What stays on the host: the re-initialisation to a signed distance (fast sweeping,
 * sdf_reinit.h) and taking the band (nw_nlm_band_cpu, nw_nlm_positions_cpu): every
 * `reinit-every` iterations phi comes down, is re-initialised, the band is taken and phi, the
 * band and its positions go back up. The sweep is O(grid) and the band's order (increasing
 * voxel index) is part of the top-m contract; beside the O(N^2 P) distances both are small.
 * Everything else lives on the device for the whole job: phi on the grid (the update writes the
 * band's new values into it), the padded patch matrix, neighbours, distances, weights. Band-sized
 * buffers are (re)allocated only when a band is taken that does not fit the ones there; an
 * iteration allocates nothing. Two small synchronous copies per iteration: the largest weight
 * sum (dt, needed before the update) and the change figures of the report.
 * The top-m kernel is the exact one unless NW_NLM_KERNEL=tc asks for the tensor-core variant
 * (nw_nlm_cuda.h: the same output by construction; its scratch is band-sized too). */
#include <cuda_runtime.h>
#include <math.h>
#include <string.h>

#include "cuda_check.h"
#include "nlm_kernels.cuh"
#include "nlm_kernels.h"
#include "nlm_surface_method.h"
#include "nw_error.h"
#include "sdf_reinit.h"

typedef struct {
  int device;
  cudaStream_t stream;
  NwVolume *phi;  /* host copy of phi: current after a download (host_fresh) */
  NwVolume *phi0; /* the input re-initialised (result "input_sdf") */
  gboolean host_fresh;
  NwNlmSettings set;
  int done;
  int n, p, pp, m;  /* band size, patch values, padded width, neighbours kept */
  int cap_n, cap_m; /* what the band-sized buffers were allocated for */
  guint32 *band;    /* host, room for every voxel */
  float *pos_mm;    /* host scratch, N x 3 */
  /* device */
  float *d_phi;                     /* the grid */
  unsigned *d_band;                 /* N */
  float *d_pos, *d_pad;             /* N x 3, N x Pp */
  float *d_centre, *d_out, *d_wsum; /* N */
  int *d_nbr;                       /* N x m */
  float *d_nd, *d_w;                /* N x m */
  void *d_temp;                     /* CUB scratch */
  NwNlmKernel kernel;               /* NW_NLM_KERNEL at create */
  NwNlmTcWork *tc;                  /* the tc kernel's scratch (kernel tc only) */
  size_t temp_bytes;
  NwNlmWsumStats *d_wstats, *h_wstats; /* h_: pinned */
  NwNlmChangeStats *d_cstats, *h_cstats;
} CudaNlm;

static void free_band_buffers(CudaNlm *s)
{
  void *bufs[] = {s->d_band, s->d_pos, s->d_pad, s->d_centre, s->d_out,
                  s->d_wsum, s->d_nbr, s->d_nd,  s->d_w,      s->d_temp};
  for (size_t b = 0; b < G_N_ELEMENTS(bufs); b++)
    cudaFree(bufs[b]);
  s->d_band = NULL, s->d_pos = s->d_pad = s->d_centre = s->d_out = s->d_wsum = NULL;
  s->d_nbr = NULL, s->d_nd = s->d_w = NULL, s->d_temp = NULL;
  g_clear_pointer(&s->tc, nw_nlm_tc_work_free);
  s->cap_n = s->cap_m = 0;
  g_clear_pointer(&s->pos_mm, g_free);
}

static void cuda_nlm_destroy(void *state)
{
  CudaNlm *s = (CudaNlm *)state;
  if (s == NULL)
    return;
  /* Teardown: errors cannot be reported here and must not stop the other frees. */
  cudaSetDevice(s->device);
  if (s->stream != NULL)
    cudaStreamSynchronize(s->stream);
  free_band_buffers(s);
  cudaFree(s->d_phi);
  cudaFree(s->d_wstats);
  cudaFree(s->d_cstats);
  cudaFreeHost(s->h_wstats);
  cudaFreeHost(s->h_cstats);
  if (s->stream != NULL)
    cudaStreamDestroy(s->stream);
  cudaGetLastError();
  g_free(s->band);
  nw_volume_free(s->phi);
  nw_volume_free(s->phi0);
  g_free(s);
}

/* The band-sized buffers for N = s->n, m = s->m, after checking that they fit: one message
 * naming the sizes instead of a failed cudaMalloc. */
static gboolean alloc_band_buffers(CudaNlm *s, GError **error)
{
  const size_t n = (size_t)s->n, nm = n * (size_t)s->m;
  size_t temp = 0;
  if (!NW_CUDA_CHECK(nw_nlm_reduce_temp_bytes(&temp, s->n), error))
    return FALSE;
  const size_t need = n * (sizeof(unsigned) + (3 + (size_t)s->pp + 3) * sizeof(float)) +
                      nm * (sizeof(int) + 2 * sizeof(float)) + temp +
                      (s->kernel == NW_NLM_KERNEL_TC ? nw_nlm_tc_work_bytes(s->n, s->p, s->m) : 0);
  g_autofree char *what = g_strdup_printf("a band of %d voxels (%d neighbours, %d-value patches)",
                                          s->n, s->m, s->p);
  if (!nw_cuda_check_fits(need, what, "use --device cpu, a thinner --band or fewer --neighbours",
                          error))
    return FALSE;
  s->temp_bytes = temp;
  s->pos_mm = g_try_new(float, n * 3);
  if (s->pos_mm == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_NOMEM, "out of host memory for a band of %d voxels",
                s->n);
    return FALSE;
  }
  if (!NW_CUDA_CHECK(cudaMalloc(&s->d_band, n * sizeof(unsigned)), error) ||
      !NW_CUDA_CHECK(cudaMalloc(&s->d_pos, n * 3 * sizeof(float)), error) ||
      !NW_CUDA_CHECK(cudaMalloc(&s->d_pad, n * s->pp * sizeof(float)), error) ||
      !NW_CUDA_CHECK(cudaMalloc(&s->d_centre, n * sizeof(float)), error) ||
      !NW_CUDA_CHECK(cudaMalloc(&s->d_out, n * sizeof(float)), error) ||
      !NW_CUDA_CHECK(cudaMalloc(&s->d_wsum, n * sizeof(float)), error) ||
      !NW_CUDA_CHECK(cudaMalloc(&s->d_nbr, nm * sizeof(int)), error) ||
      !NW_CUDA_CHECK(cudaMalloc(&s->d_nd, nm * sizeof(float)), error) ||
      !NW_CUDA_CHECK(cudaMalloc(&s->d_w, nm * sizeof(float)), error) ||
      !NW_CUDA_CHECK(cudaMalloc(&s->d_temp, temp > 0 ? temp : 1), error) ||
      (s->kernel == NW_NLM_KERNEL_TC &&
       !NW_CUDA_CHECK(nw_nlm_tc_work_new(&s->tc, s->n, s->p, s->m), error)))
    return FALSE;
  s->cap_n = s->n, s->cap_m = s->m;
  return TRUE;
}

/* Take the band of the host phi (current), and put phi, the band and its positions on the
 * device. */
static gboolean take_band(CudaNlm *s, GError **error)
{
  s->n = nw_nlm_band_cpu(s->band, s->phi, (float)s->set.band_mm);
  if (!nw_nlm_check_band(s->n, s->set.band_mm, error))
    return FALSE;
  s->p = s->set.patch * s->set.patch * s->set.patch;
  s->pp = nw_nlm_padded_width(s->p);
  s->m = MIN(s->set.neighbours, s->n - 1);
  if (s->m > NW_NLM_CUDA_MAX_M) {
    g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED,
                "%d neighbours: the GPU keeps at most %d per band voxel; use --device cpu or "
                "fewer --neighbours",
                s->m, NW_NLM_CUDA_MAX_M);
    return FALSE;
  }
  /* The padded patch width also grows with the patch, which is not live: pp is fixed. */
  if ((s->n > s->cap_n || s->m > s->cap_m || s->d_pad == NULL)) {
    free_band_buffers(s);
    if (!alloc_band_buffers(s, error))
      return FALSE;
  }
  nw_nlm_positions_cpu(s->pos_mm, s->phi, s->band, s->n);
  const size_t n = (size_t)s->n;
  return NW_CUDA_CHECK(cudaMemcpyAsync(s->d_phi, s->phi->data,
                                       nw_volume_n_voxels(s->phi) * sizeof(float),
                                       cudaMemcpyHostToDevice, s->stream),
                       error) &&
         NW_CUDA_CHECK(cudaMemcpyAsync(s->d_band, s->band, n * sizeof(unsigned),
                                       cudaMemcpyHostToDevice, s->stream),
                       error) &&
         NW_CUDA_CHECK(cudaMemcpyAsync(s->d_pos, s->pos_mm, n * 3 * sizeof(float),
                                       cudaMemcpyHostToDevice, s->stream),
                       error) &&
         /* the host arrays are reused at the next band: wait for the copies */
         NW_CUDA_CHECK(cudaStreamSynchronize(s->stream), error);
}

/* Bring the device phi into s->phi (no-op when it is already there). */
static gboolean download_phi(CudaNlm *s, GError **error)
{
  if (s->host_fresh)
    return TRUE;
  if (!NW_CUDA_CHECK(cudaSetDevice(s->device), error) ||
      !NW_CUDA_CHECK(cudaMemcpyAsync(s->phi->data, s->d_phi,
                                     nw_volume_n_voxels(s->phi) * sizeof(float),
                                     cudaMemcpyDeviceToHost, s->stream),
                     error) ||
      !NW_CUDA_CHECK(cudaStreamSynchronize(s->stream), error))
    return FALSE;
  s->host_fresh = TRUE;
  return TRUE;
}

static gboolean alloc_job(CudaNlm *s, GError **error)
{
  const size_t grid = nw_volume_n_voxels(s->phi) * sizeof(float);
  return NW_CUDA_CHECK(cudaGetDevice(&s->device), error) &&
         NW_CUDA_CHECK(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking), error) &&
         NW_CUDA_CHECK(cudaMalloc(&s->d_phi, grid), error) &&
         NW_CUDA_CHECK(cudaMalloc(&s->d_wstats, sizeof(NwNlmWsumStats)), error) &&
         NW_CUDA_CHECK(cudaMalloc(&s->d_cstats, sizeof(NwNlmChangeStats)), error) &&
         NW_CUDA_CHECK(cudaMallocHost(&s->h_wstats, sizeof(NwNlmWsumStats)), error) &&
         NW_CUDA_CHECK(cudaMallocHost(&s->h_cstats, sizeof(NwNlmChangeStats)), error);
}

static void *cuda_nlm_create(const NwMethodInputs *in, const NwParams *p, GError **error)
{
  if (!nw_nlm_check_input(in, error)) /* the CPU twin's checks and messages */
    return NULL;
  CudaNlm *s = g_new0(CudaNlm, 1);
  s->kernel = nw_nlm_kernel_from_env();
  gboolean ok = nw_nlm_settings(p, &s->set, error) &&
                (s->phi = nw_volume_try_copy(in->fixed, error)) != NULL &&
                nw_sdf_reinit(s->phi, "nlm-surface input", error) &&
                (s->phi0 = nw_volume_try_copy(s->phi, error)) != NULL;
  if (ok && (s->band = g_try_new(guint32, nw_volume_n_voxels(s->phi))) == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_NOMEM, "nlm-surface: out of memory for the band");
    ok = FALSE;
  }
  if (ok) {
    s->host_fresh = TRUE;
    if (!alloc_job(s, error) || !take_band(s, error)) {
      g_prefix_error(error, "nlm-surface (CUDA): ");
      ok = FALSE;
    }
  }
  if (!ok) {
    cuda_nlm_destroy(s);
    return NULL;
  }
  return s;
}

/* Patches, neighbours, weights, dt, update (phi on the device gets the band's new values). */
static gboolean iterate(CudaNlm *s, float *dt, double *wsum_total, NwNlmChangeStats *change,
                        GError **error)
{
  const int n = s->n, m = s->m;
  if (!NW_CUDA_CHECK(nw_nlm_patches_cuda(s->d_pad, s->d_centre, s->d_phi, s->phi->nx, s->phi->ny,
                                         s->phi->nz, s->d_band, n, s->set.patch, s->stream),
                     error) ||
      !NW_CUDA_CHECK(
          s->kernel == NW_NLM_KERNEL_TC
              ? nw_nlm_topm_tc_cuda(s->d_nbr, s->d_nd, s->d_pad, n, s->p, m, s->tc, s->stream)
              : nw_nlm_topm_cuda(s->d_nbr, s->d_nd, s->d_pad, n, s->p, m, s->stream),
          error) ||
      !NW_CUDA_CHECK(nw_nlm_weights_cuda(s->d_w, s->d_wsum, s->d_nbr, s->d_nd, s->d_pos, n, m,
                                         s->set.c1_mm2, s->set.c2_mm2, s->stream),
                     error) ||
      !NW_CUDA_CHECK(
          nw_nlm_wsum_stats_cuda(s->d_wstats, s->d_wsum, n, s->d_temp, s->temp_bytes, s->stream),
          error) ||
      !NW_CUDA_CHECK(cudaMemcpyAsync(s->h_wstats, s->d_wstats, sizeof(NwNlmWsumStats),
                                     cudaMemcpyDeviceToHost, s->stream),
                     error) ||
      !NW_CUDA_CHECK(cudaStreamSynchronize(s->stream), error))
    return FALSE;
  const float most = s->h_wstats->most;
  *dt = most > 0.0f ? 1.0f / most : 0.0f; /* nw_nlm_step_size_cpu */
  *wsum_total = s->h_wstats->sum;
  s->host_fresh = FALSE; /* the update writes phi on the device */
  if (!NW_CUDA_CHECK(nw_nlm_update_cuda(s->d_out, s->d_phi, s->d_band, s->d_centre, s->d_nbr,
                                        s->d_w, n, m, *dt, s->stream),
                     error) ||
      !NW_CUDA_CHECK(nw_nlm_change_stats_cuda(s->d_cstats, s->d_out, s->d_centre, n, s->d_temp,
                                              s->temp_bytes, s->stream),
                     error) ||
      !NW_CUDA_CHECK(cudaMemcpyAsync(s->h_cstats, s->d_cstats, sizeof(NwNlmChangeStats),
                                     cudaMemcpyDeviceToHost, s->stream),
                     error) ||
      !NW_CUDA_CHECK(cudaStreamSynchronize(s->stream), error))
    return FALSE;
  *change = *s->h_cstats;
  return TRUE;
}

static gboolean cuda_nlm_step(void *state, NwIterationReport *report, GError **error)
{
  CudaNlm *s = (CudaNlm *)state;
  if (!NW_CUDA_CHECK(cudaSetDevice(s->device), error)) {
    g_prefix_error(error, "nlm-surface (CUDA): iteration %d: ", s->done + 1);
    return FALSE;
  }
  /* Re-initialisation on the host, when due (the CPU twin's condition). */
  if (s->done > 0 && s->set.reinit_every > 0 && s->done % s->set.reinit_every == 0) {
    if (!download_phi(s, error) || !nw_sdf_reinit(s->phi, "nlm-surface level set", error) ||
        !take_band(s, error)) {
      g_prefix_error(error, "nlm-surface (CUDA): iteration %d: ", s->done + 1);
      return FALSE;
    }
  }
  float dt = 0.0f;
  double wsum_total = 0.0;
  NwNlmChangeStats change = {0.0, 0.0};
  if (!iterate(s, &dt, &wsum_total, &change, error)) {
    g_prefix_error(error, "nlm-surface (CUDA): iteration %d: ", s->done + 1);
    return FALSE;
  }
  s->done++;
  nw_nlm_fill_report(report, s->done, s->set.iterations, sqrt(change.sum_sq / s->n), change.most,
                     s->n, dt, wsum_total / s->n);
  return TRUE;
}

/* c1 and c2 are live; the runner refuses other changes before this is called. */
static gboolean cuda_nlm_set_params(void *state, const NwParams *p, GError **error)
{
  CudaNlm *s = (CudaNlm *)state;
  return nw_nlm_settings(p, &s->set, error);
}

static gboolean cuda_nlm_publish_frame(void *state, NwFrame *frame, GError **error)
{
  CudaNlm *s = (CudaNlm *)state;
  frame->iteration = s->done;
  frame->field = NULL;
  frame->image = download_phi(s, error) ? nw_volume_try_copy(s->phi, error) : NULL;
  if (frame->image == NULL)
    g_prefix_error(error, "nlm-surface (CUDA): frame: ");
  return frame->image != NULL;
}

/* As the CPU twin: phi re-initialised everywhere (a copy; the job could go on). */
static NwMethodResult *cuda_nlm_result(void *state, GError **error)
{
  CudaNlm *s = (CudaNlm *)state;
  g_autoptr(NwVolume) sdf = download_phi(s, error) ? nw_volume_try_copy(s->phi, error) : NULL;
  g_autoptr(NwVolume) input = sdf != NULL ? nw_volume_try_copy(s->phi0, error) : NULL;
  if (input == NULL || !nw_sdf_reinit(sdf, "nlm-surface result", error)) {
    g_prefix_error(error, "nlm-surface (CUDA): result: ");
    return NULL;
  }
  NwMethodResult *r = nw_method_result_new();
  nw_method_result_add(r, "sdf", (NwVolume *)g_steal_pointer(&sdf));
  nw_method_result_add(r, "input_sdf", (NwVolume *)g_steal_pointer(&input));
  return r;
}

/* C++20 designated initialisers: the slots of NwMethodOps by name, in their order. */
extern "C" const NwMethodOps nw_nlm_surface_cuda_ops = {
    .name = "nlm-surface",
    .device = NW_DEVICE_CUDA,
    .description = "Level-set non-local-means denoising of a surface (signed distance in mm)",
    .params = nw_nlm_param_specs, /* shared with the CPU twin */
    .n_params = NW_NLM_N_PARAMS,
    .needs_moving = FALSE,
    .plot_figures = nw_nlm_plot_figures,
    .any_grid = FALSE,
    .level_set_input = TRUE,
    .create = cuda_nlm_create,
    .step = cuda_nlm_step,
    .set_params = cuda_nlm_set_params,
    .publish_frame = cuda_nlm_publish_frame,
    .publish_device_frame = NULL, /* host frames, like the CPU twin */
    .result = cuda_nlm_result,
    .destroy = cuda_nlm_destroy,
};
