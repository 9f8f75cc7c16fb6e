/* demons_cuda.cu — "demons" on the GPU: the CUDA twin of core/cpu/demons_cpu.c, following
 * core/cpu/demons_method.h step by step. CUDA back end; every op runs on the job's worker
 * thread (the one that called create), which owns the stream and all device buffers.
 *
 * The job (levels, stopping rule, reports, live parameters) is demons_common.c's, shared with
 * the CPU; this file is its CUDA back end (NwDemonsBackend). What stays on the host: the image
 * pyramids (built once with the CPU's nw_downsample2, so both back ends register the very
 * same images), histogram matching, and carrying v to the next level (nw_resize) — once per
 * level, never inside the iteration loop. Inside an
 * iteration only two small readbacks cross to the host: max|v| (the number of squarings of
 * exp(v) depends on it) and the figures the report needs.
 *
 * Device buffers of the current level (n voxels): F, M, W (float); v, s, u, tmp (float4);
 * with lcc also lcc_f = (μF, σFF) and lcc_w = (μW, σWW, σFW) (float4); with masks the level's
 * fixed_mask and moving_mask as given (float, NULL when not) and region (float, 1 where the
 * update acts, renewed with s at every evaluation). */
#include <cuda_runtime.h>

#include "cuda_check.h"
#include "demons_kernels.cuh"
#include "demons_method.h"
#include "field.h"
#include "field_cuda.cuh"
#include "staging_cuda.cuh"
#include "gauss_cuda.cuh"
#include "nw_error.h"
#include "nw_live.h"
#include "smooth.h"

struct Scalars { /* pinned host copy of what an iteration reads back */
  NwDemonsSums sums;
  float max_u, max_v;
};

struct DemonsCuda {
  NwDemonsJob job; /* first: params, inputs, host pyramids, progress, level constants */

  cudaStream_t stream;
  NwGrid g;
  NwDemonsLevelConst lc;
  float *F, *M, *W, *fixed_mask, *moving_mask, *region;
  float4 *v, *s, *u, *tmp, *lcc_f, *lcc_w;
  NwDemonsSums *d_partials, *d_sums;
  float *d_max_u, *d_max_v;
  Scalars *h;   /* pinned */
  float *stage; /* the downloads' pinned pair (staging_cuda.cuh), made at the first large one */
};

/* The job's stage for downloads on the grid of like (a field's three floats a voxel at most). */
static float *stage_of(DemonsCuda *st, const NwVolume *like)
{
  return nw_stage_for(&st->stage, 3 * nw_volume_n_voxels(like));
}

static double param(const DemonsCuda *st, const char *name)
{
  return nw_demons_param(&st->job, name);
}

/* G(sigma) * field, in place (pointers may swap). d_max: when not NULL, receives max |result|
 * (fused into the last pass). */
static gboolean smooth_field(DemonsCuda *st, float4 **field, float4 **scratch, double sigma,
                             float *d_max, GError **error)
{
  NwGaussKernel k[3];
  for (int a = 0; a < 3; a++)
    nw_gauss_kernel(&k[a], sigma); /* sigma <= 0: identity kernels, skipped passes */
  return NW_CUDA_CHECK(nw_gauss3_float4(field, scratch, st->g, k, d_max, st->stream), error);
}

static void free_level(DemonsCuda *st)
{
  void *bufs[] = {st->F,   st->M,     st->W,     st->v,          st->s,           st->u,
                  st->tmp, st->lcc_f, st->lcc_w, st->fixed_mask, st->moving_mask, st->region};
  for (size_t b = 0; b < G_N_ELEMENTS(bufs); b++)
    cudaFree(bufs[b]);
  st->F = st->M = st->W = st->fixed_mask = st->moving_mask = st->region = NULL;
  st->v = st->s = st->u = st->tmp = st->lcc_f = st->lcc_w = NULL;
}

/* Bytes of device memory a level of n voxels needs; masks: how many masks were given. */
static size_t level_bytes(size_t n, gboolean lcc, int masks)
{
  return n *
         ((3 + (masks > 0 ? masks + 1 : 0)) * sizeof(float) + (4 + (lcc ? 2 : 0)) * sizeof(float4));
}

/* Before anything is allocated: the full-resolution level must fit, or one clear message. */
static gboolean check_memory(const NwMethodInputs *in, const NwParams *p, GError **error)
{
  const gboolean lcc = (int)nw_params_get(p, "similarity") == NW_DEMONS_SIM_LCC;
  const int masks = (in->fixed_mask != NULL) + (in->moving_mask != NULL);
  return nw_field_job_fits("demons", in->fixed,
                           level_bytes(nw_volume_n_voxels(in->fixed), lcc, masks), error);
}

/* The figures of the sums just read back (demons_cpu.c evaluate()). */
static void set_figures(DemonsCuda *st, gboolean lcc)
{
  const NwDemonsSums *t = &st->h->sums;
  nw_demons_set_figures(&st->job.pr, &t->sim, lcc);
  st->job.pr.min_jac = t->jac_min;
  st->job.pr.folds = (size_t)t->folds;
}

/* s = exp(v), W = M ∘ s, figures: demons_cpu.c evaluate(). Synchronises twice. have_max_v:
 * d_max_v already holds max|v| (fused into the smoothing of v). */
static gboolean evaluate_state(DemonsCuda *st, gboolean have_max_v, GError **error)
{
  const gboolean lcc = nw_demons_is_lcc(&st->job);
  if ((!have_max_v &&
       !NW_CUDA_CHECK(nw_max_norm_cuda(st->d_max_v, st->v, st->g, st->stream), error)) ||
      !NW_CUDA_CHECK(cudaMemcpyAsync(&st->h->max_v, st->d_max_v, sizeof(float),
                                     cudaMemcpyDeviceToHost, st->stream),
                     error) ||
      !NW_CUDA_CHECK(cudaStreamSynchronize(st->stream), error))
    return FALSE;
  st->job.pr.squarings = nw_field_exp_squarings_for_norm(st->h->max_v);
  /* u is free here (the update has been folded into v): scratch for the squarings. */
  if (!NW_CUDA_CHECK(
          nw_exp_cuda(st->s, st->u, st->v, 1.0f, st->job.pr.squarings, st->g, st->stream), error))
    return FALSE;
  /* The masks' region for this s: the figures below and the next update use it. */
  if (st->region != NULL &&
      !NW_CUDA_CHECK(nw_demons_region_cuda(st->region, st->fixed_mask, st->moving_mask, st->s,
                                           st->g, st->stream),
                     error))
    return FALSE;
  if (lcc && /* the local statistics need all of W before the figures */
      (!NW_CUDA_CHECK(nw_warp_cuda(st->W, st->M, st->s, false, st->g, st->stream), error) ||
       !NW_CUDA_CHECK(nw_lcc_warped_pack(st->lcc_w, st->F, st->W, st->lc.shift, st->g, st->stream),
                      error) ||
       !smooth_field(st, &st->lcc_w, &st->u, param(st, "lcc-sigma"), NULL, error) ||
       !NW_CUDA_CHECK(nw_lcc_warped_post(st->lcc_w, st->lcc_f, st->W, st->lc, st->g, st->stream),
                      error)))
    return FALSE;
  /* ssd: W = M ∘ s fused into the figures pass. */
  if (!NW_CUDA_CHECK(nw_demons_sums_cuda(st->d_sums, st->d_partials, st->F, st->W,
                                         lcc ? NULL : st->M, st->s, lcc ? st->lcc_f : NULL,
                                         lcc ? st->lcc_w : NULL, st->region, st->lc, st->g,
                                         st->stream),
                     error) ||
      !NW_CUDA_CHECK(cudaMemcpyAsync(&st->h->sums, st->d_sums, sizeof(NwDemonsSums),
                                     cudaMemcpyDeviceToHost, st->stream),
                     error) ||
      !NW_CUDA_CHECK(cudaMemcpyAsync(&st->h->max_u, st->d_max_u, sizeof(float),
                                     cudaMemcpyDeviceToHost, st->stream),
                     error) ||
      !NW_CUDA_CHECK(cudaStreamSynchronize(st->stream), error))
    return FALSE;
  set_figures(st, lcc);
  return TRUE;
}

/* ---- the back end of the job (NwDemonsBackend) ------------------------------------------- */

static gboolean evaluate(NwDemonsJob *job, GError **error)
{
  return evaluate_state((DemonsCuda *)job, FALSE, error);
}

/* LCC statistics of F at this level (once per level and when lcc-sigma changes). */
static gboolean lcc_fixed(NwDemonsJob *job, GError **error)
{
  DemonsCuda *st = (DemonsCuda *)job;
  return NW_CUDA_CHECK(nw_lcc_fixed_pack(st->lcc_f, st->F, st->lc.shift, st->g, st->stream),
                       error) &&
         smooth_field(st, &st->lcc_f, &st->u, param(st, "lcc-sigma"), NULL, error) &&
         NW_CUDA_CHECK(nw_lcc_fixed_post(st->lcc_f, st->F, st->lc, st->g, st->stream), error);
}

/* One iteration: demons_cpu.c iterate(). */
static gboolean iterate(NwDemonsJob *job, GError **error)
{
  DemonsCuda *st = (DemonsCuda *)job;
  const gboolean lcc = nw_demons_is_lcc(job);
  if (!NW_CUDA_CHECK(nw_demons_update_cuda(st->u, st->F, st->W, lcc ? st->lcc_f : NULL,
                                           lcc ? st->lcc_w : NULL, st->region,
                                           (int)param(st, "force"), (float)param(st, "max-step"),
                                           st->lc, st->g, st->stream),
                     error) ||
      !smooth_field(st, &st->u, &st->tmp, param(st, "sigma-fluid"), st->d_max_u, error))
    return FALSE;
  if ((int)param(st, "composition") == NW_DEMONS_BCH) {
    if (!NW_CUDA_CHECK(nw_axpy_cuda(st->v, st->v, 1.0f, st->u, st->g, st->stream), error))
      return FALSE;
  } else {
    if (!NW_CUDA_CHECK(nw_compose_cuda(st->tmp, st->v, 1.0f, st->u, 1.0f, st->g, st->stream),
                       error))
      return FALSE;
    float4 *t = st->v;
    st->v = st->tmp;
    st->tmp = t;
  }
  if (!smooth_field(st, &st->v, &st->tmp, param(st, "sigma-diff"), st->d_max_v, error))
    return FALSE;
  job->pr.prev_energy = job->pr.energy;
  if (!evaluate_state(st, TRUE, error))
    return FALSE;
  job->pr.max_u = st->h->max_u;
  return TRUE;
}

static gboolean upload_image(float **d, const NwVolume *h, cudaStream_t stream, GError **error)
{
  const size_t bytes = nw_volume_n_voxels(h) * sizeof(float);
  return NW_CUDA_CHECK(cudaMalloc(d, bytes), error) &&
         NW_CUDA_CHECK(cudaMemcpyAsync(*d, h->data, bytes, cudaMemcpyHostToDevice, stream), error);
}

/* Host copy of a device field on grid like (nc = 3). staging: a free float4 buffer. */
static NwVolume *download_field(DemonsCuda *st, const float4 *d, float4 *staging,
                                const NwVolume *like, GError **error)
{
  g_autoptr(NwVolume) h = nw_volume_new_like(like, 3, error);
  if (h == NULL || !NW_CUDA_CHECK(nw_field_download(h->data, staging, d, st->g, stage_of(st, like), st->stream), error))
    return NULL;
  return (NwVolume *)g_steal_pointer(&h);
}

/* Carry v onto level l (zero at the first level), resized on the host as the CPU does, and
 * set up the level's buffers. */
static gboolean setup_level(NwDemonsJob *job, int l, GError **error)
{
  DemonsCuda *st = (DemonsCuda *)job;
  const NwVolume *Fh = job->pyr_fixed[l];
  g_autoptr(NwVolume) v_prev =
      st->v != NULL ? download_field(st, st->v, st->tmp, job->pyr_fixed[job->pr.level], error)
                    : NULL;
  if (st->v != NULL && v_prev == NULL)
    return FALSE;
  g_autoptr(NwVolume) v_next = nw_demons_carry_velocity(v_prev, Fh, error);
  if (v_next == NULL)
    return FALSE;
  free_level(st);
  st->g = NwGrid{Fh->nx, Fh->ny, Fh->nz};
  st->lc.shift = (float)job->shift;
  st->lc.scale2 = job->scale2;
  st->lc.eps = NW_DEMONS_LCC_EPS * job->scale2;
  const size_t n = nw_volume_n_voxels(Fh), f4 = n * sizeof(float4);
  const NwVolume *fixed_mask = nw_demons_level_mask(job->pyr_fixed_mask, l),
                 *moving_mask = nw_demons_level_mask(job->pyr_moving_mask, l);
  return upload_image(&st->F, Fh, st->stream, error) &&
         upload_image(&st->M, job->pyr_moving[l], st->stream, error) &&
         (fixed_mask == NULL || upload_image(&st->fixed_mask, fixed_mask, st->stream, error)) &&
         (moving_mask == NULL || upload_image(&st->moving_mask, moving_mask, st->stream, error)) &&
         (!nw_demons_has_masks(job) ||
          NW_CUDA_CHECK(cudaMalloc(&st->region, n * sizeof(float)), error)) &&
         NW_CUDA_CHECK(cudaMalloc(&st->W, n * sizeof(float)), error) &&
         NW_CUDA_CHECK(cudaMalloc(&st->v, f4), error) &&
         NW_CUDA_CHECK(cudaMalloc(&st->s, f4), error) &&
         NW_CUDA_CHECK(cudaMalloc(&st->u, f4), error) &&
         NW_CUDA_CHECK(cudaMalloc(&st->tmp, f4), error) &&
         (!nw_demons_is_lcc(job) || (NW_CUDA_CHECK(cudaMalloc(&st->lcc_f, f4), error) &&
                                     NW_CUDA_CHECK(cudaMalloc(&st->lcc_w, f4), error))) &&
         NW_CUDA_CHECK(nw_field_upload(st->v, st->tmp, v_next->data, st->g, st->stream), error);
}

static const NwDemonsBackend cuda_backend = {
    .setup_level = setup_level,
    .lcc_fixed = lcc_fixed,
    .evaluate = evaluate,
    .iterate = iterate,
};

/* ---- the method interface ---------------------------------------------------------------- */

static void demons_destroy(void *state)
{
  DemonsCuda *st = (DemonsCuda *)state;
  if (st == NULL)
    return;
  if (st->stream != NULL)
    cudaStreamSynchronize(st->stream);
  free_level(st);
  cudaFree(st->d_partials);
  cudaFree(st->d_sums);
  cudaFree(st->d_max_u);
  cudaFree(st->d_max_v);
  cudaFreeHost(st->h);
  nw_stage_free(st->stage);
  if (st->stream != NULL)
    cudaStreamDestroy(st->stream);
  nw_demons_job_clear(&st->job);
  g_free(st);
}

static gboolean alloc_job_buffers(DemonsCuda *st, GError **error)
{
  return NW_CUDA_CHECK(cudaStreamCreateWithFlags(&st->stream, cudaStreamNonBlocking), error) &&
         NW_CUDA_CHECK(cudaMalloc(&st->d_partials, NW_DEMONS_FIG_BLOCKS * sizeof(NwDemonsSums)),
                       error) &&
         NW_CUDA_CHECK(cudaMalloc(&st->d_sums, sizeof(NwDemonsSums)), error) &&
         NW_CUDA_CHECK(cudaMalloc(&st->d_max_u, sizeof(float)), error) &&
         NW_CUDA_CHECK(cudaMalloc(&st->d_max_v, sizeof(float)), error) &&
         NW_CUDA_CHECK(cudaMallocHost(&st->h, sizeof(Scalars)), error) &&
         NW_CUDA_CHECK(cudaMemsetAsync(st->d_max_u, 0, sizeof(float), st->stream), error);
}

static void *demons_create(const NwMethodInputs *in, const NwParams *p, GError **error)
{
  if (!nw_demons_check_inputs(in, error) || !check_memory(in, p, error))
    return NULL;
  DemonsCuda *st = g_new0(DemonsCuda, 1);
  if (!alloc_job_buffers(st, error) ||
      !nw_demons_job_start(&st->job, &cuda_backend, in, p, error)) {
    demons_destroy(st);
    return NULL;
  }
  return st;
}

static gboolean demons_step(void *state, NwIterationReport *report, GError **error)
{
  return nw_demons_job_step((NwDemonsJob *)state, &cuda_backend, report, error);
}

static gboolean demons_set_params(void *state, const NwParams *p, GError **error)
{
  return nw_demons_job_set_params((NwDemonsJob *)state, &cuda_backend, p, error);
}

static gboolean demons_publish_frame(void *state, NwFrame *frame, GError **error)
{
  DemonsCuda *st = (DemonsCuda *)state;
  const NwVolume *like = st->job.pyr_fixed[st->job.pr.level];
  frame->iteration = st->job.pr.iteration;
  frame->image = nw_image_download_new(st->W, like, stage_of(st, like), st->stream, error);
  frame->field = frame->image ? download_field(st, st->s, st->tmp, like, error) : NULL;
  return frame->field != NULL;
}

/* Live display: W and s = exp(v) of the current level, device-to-device into the front. */
static gboolean demons_publish_device_frame(void *state, void *front, GError **error)
{
  DemonsCuda *st = (DemonsCuda *)state;
  return nw_live_front_publish((NwLiveFront *)front, st->job.pyr_fixed[st->job.pr.level], st->W,
                               st->s, st->job.pr.iteration, st->stream, error);
}

/* Results at full resolution, computed on the GPU: demons_cpu.c demons_result(). A job that
 * ended before the last level first carries v up to it. */
static NwMethodResult *demons_result(void *state, GError **error)
{
  DemonsCuda *st = (DemonsCuda *)state;
  const int last = st->job.pr.n_levels - 1;
  if (st->job.pr.level != last && !nw_demons_job_enter_level(&st->job, &cuda_backend, last, error))
    return NULL;
  const NwVolume *full = st->job.fixed_full;
  NwDemonsOutputs o = {};
  /* s = exp(v) is current (evaluate ran after the last update). u and tmp are free now. */
  if ((o.velocity = download_field(st, st->v, st->tmp, full, error)) == NULL ||
      (o.forward = download_field(st, st->s, st->tmp, full, error)) == NULL ||
      !NW_CUDA_CHECK(nw_exp_cuda(st->u, st->tmp, st->v, -1.0f,
                                 nw_field_exp_squarings_for_norm(st->h->max_v), st->g, st->stream),
                     error) ||
      (o.inverse = download_field(st, st->u, st->tmp, full, error)) == NULL) {
    nw_demons_outputs_clear(&o);
    return NULL;
  }
  /* Scratch image buffer for the warps and the Jacobian: the first quarter of u. */
  float *img = (float *)st->u;
  const size_t bytes = nw_volume_n_voxels(full) * sizeof(float);
  const float *moving = st->M;
  gboolean ok = TRUE;
  if (nw_params_get(st->job.params, "histogram-match") != 0.0) {
    /* The original moving intensities, not the matched ones used for the run. */
    ok = NW_CUDA_CHECK(cudaMemcpyAsync(st->W, st->job.moving_full->data, bytes,
                                       cudaMemcpyHostToDevice, st->stream),
                       error);
    moving = st->W;
  }
  ok = ok && NW_CUDA_CHECK(nw_warp_cuda(img, moving, st->s, false, st->g, st->stream), error) &&
       (o.warped = nw_image_download_new(img, full, stage_of(st, full), st->stream, error)) != NULL &&
       NW_CUDA_CHECK(nw_jacobian_cuda(img, st->s, st->g, st->stream), error) &&
       (o.jacobian = nw_image_download_new(img, full, stage_of(st, full), st->stream, error)) != NULL;
  if (ok && st->job.moving_labels != NULL) {
    float *labels = img + nw_volume_n_voxels(full); /* the second quarter of u */
    ok = NW_CUDA_CHECK(cudaMemcpyAsync(labels, st->job.moving_labels->data, bytes,
                                       cudaMemcpyHostToDevice, st->stream),
                       error) &&
         NW_CUDA_CHECK(nw_warp_cuda(img, labels, st->s, true, st->g, st->stream), error) &&
         (o.labels = nw_image_download_new(img, full, stage_of(st, full), st->stream, error)) != NULL;
  }
  /* W no longer holds M ∘ s after a histogram-matched result: keep the state consistent. */
  ok = ok && (moving == st->M ||
              NW_CUDA_CHECK(nw_warp_cuda(st->W, st->M, st->s, false, st->g, st->stream), error));
  if (!ok) {
    nw_demons_outputs_clear(&o);
    return NULL;
  }
  return nw_demons_result_take(&o);
}

/* C++20 designated initialisers: the slots of NwMethodOps by name, in their order. */
extern "C" const NwMethodOps nw_demons_cuda_ops = {
    .name = "demons",
    .device = NW_DEVICE_CUDA,
    .description =
        "Diffeomorphic log-demons (SSD or local correlation), multi-resolution, on the GPU",
    .params = nw_demons_param_specs,
    .n_params = NW_DEMONS_N_PARAMS,
    .needs_moving = TRUE,
    .plot_figures = nw_demons_plot_figures,
    .create = demons_create,
    .step = demons_step,
    .set_params = demons_set_params,
    .publish_frame = demons_publish_frame,
    .publish_device_frame = demons_publish_device_frame,
    .result = demons_result,
    .destroy = demons_destroy,
};
