/* demons_cuda.cu — "demons" on the GPU: the CUDA twin of core/cpu/demons_cpu.c, following
 * core/cpu/demons_method.h step by step. CUDA back end; every op runs on the job's worker
 * thread (the one that called create), which owns the stream and all device buffers.
 *
 * What stays on the host: the image pyramids (built once with the CPU's nw_downsample2, so
 * both back ends register the very same images), histogram matching, and carrying v to the
 * next level (nw_resize) — once per level, never inside the iteration loop. Inside an
 * iteration only two small readbacks cross to the host: max|v| (the number of squarings of
 * exp(v) depends on it) and the figures the report needs.
 *
 * Device buffers of the current level (n voxels): F, M, W (float); v, s, u, tmp (float4);
 * with lcc also lcc_f = (μF, σFF) and lcc_w = (μW, σWW, σFW) (float4). */
#include <cuda_runtime.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "cuda_check.h"
#include "demons_kernels.cuh"
#include "demons_method.h"
#include "field.h"
#include "field_cuda.cuh"
#include "gauss_cuda.cuh"
#include "histogram_match.h"
#include "nw_error.h"
#include "nw_live.h"
#include "pyramid.h"
#include "resample.h"
#include "smooth.h"


struct Scalars {   /* pinned host copy of what an iteration reads back */
  NwDemonsSums sums;
  float max_u, max_v;
};

struct DemonsCuda {
  NwParams *params;
  const NwVolume *fixed_full, *moving_full, *moving_labels; /* borrowed */
  NwVolume **pyr_fixed, **pyr_moving; /* host, [pr.n_levels], 0 = coarsest */
  NwDemonsProgress pr;                 /* level, iteration, stopping state and figures */

  cudaStream_t stream;
  NwGrid g;
  NwDemonsLevelConst lc;
  float *F, *M, *W;
  float4 *v, *s, *u, *tmp, *lcc_f, *lcc_w;
  NwDemonsSums *d_partials, *d_sums;
  float *d_max_u, *d_max_v;
  Scalars *h; /* pinned */
};

static double param(const DemonsCuda *st, const char *name)
{
  return nw_params_get(st->params, name);
}

static gboolean is_lcc(const DemonsCuda *st)
{
  return param(st, "similarity") == NW_DEMONS_SIM_LCC;
}

#define CHECK(call)                                                                            \
  do {                                                                                         \
    if (!NW_CUDA_CHECK((call), error))                                                         \
      return FALSE;                                                                            \
  } while (0)

/* G(sigma) * field, in place (pointers may swap). d_max: when not NULL, receives max |result|
 * (fused into the last pass). */
static gboolean smooth_field(DemonsCuda *st, float4 **field, float4 **scratch, double sigma,
                             float *d_max, GError **error)
{
  NwGaussKernel k[3];
  for (int a = 0; a < 3; a++)
    nw_gauss_kernel(&k[a], sigma); /* sigma <= 0: identity kernels, skipped passes */
  CHECK(nw_gauss3_float4(field, scratch, st->g, k, d_max, st->stream));
  return TRUE;
}

static void free_level(DemonsCuda *st)
{
  void *bufs[] = {st->F, st->M, st->W, st->v, st->s, st->u, st->tmp, st->lcc_f, st->lcc_w};
  for (size_t b = 0; b < G_N_ELEMENTS(bufs); b++)
    cudaFree(bufs[b]);
  st->F = st->M = st->W = NULL;
  st->v = st->s = st->u = st->tmp = st->lcc_f = st->lcc_w = NULL;
}

/* Bytes of device memory a level of n voxels needs. */
static size_t level_bytes(size_t n, gboolean lcc)
{
  return n * (3 * sizeof(float) + (4 + (lcc ? 2 : 0)) * sizeof(float4));
}

static gboolean check_memory(size_t n, gboolean lcc, const NwVolume *full, GError **error)
{
  size_t free_b = 0, total_b = 0;
  CHECK(cudaMemGetInfo(&free_b, &total_b));
  const size_t need = level_bytes(n, lcc) + (64u << 20); /* + reductions, CUB, slack */
  if (need > free_b) {
    g_set_error(error, NW_ERROR, NW_ERROR_NOMEM,
                "demons: a %d x %d x %d volume needs %.0f MiB of GPU memory but only %.0f MiB "
                "of %.0f MiB are free; use --device cpu or a smaller image",
                full->nx, full->ny, full->nz, need / 1048576.0, free_b / 1048576.0,
                total_b / 1048576.0);
    return FALSE;
  }
  return TRUE;
}

/* s = exp(v), W = M ∘ s, figures: demons_cpu.c evaluate(). Synchronises twice. have_max_v:
 * d_max_v already holds max|v| (fused into the smoothing of v). */
static gboolean evaluate(DemonsCuda *st, gboolean have_max_v, GError **error)
{
  const gboolean lcc = is_lcc(st);
  if (!have_max_v)
    CHECK(nw_max_norm_cuda(st->d_max_v, st->v, st->g, st->stream));
  CHECK(cudaMemcpyAsync(&st->h->max_v, st->d_max_v, sizeof(float), cudaMemcpyDeviceToHost,
                        st->stream));
  CHECK(cudaStreamSynchronize(st->stream));
  st->pr.squarings = nw_field_exp_squarings_for_norm(st->h->max_v);
  /* u is free here (the update has been folded into v): scratch for the squarings. */
  CHECK(nw_exp_cuda(st->s, st->u, st->v, 1.0f, st->pr.squarings, st->g, st->stream));
  if (lcc) { /* the local statistics need all of W before the figures */
    CHECK(nw_warp_cuda(st->W, st->M, st->s, false, st->g, st->stream));
    CHECK(nw_lcc_warped_pack(st->lcc_w, st->F, st->W, st->lc.shift, st->g, st->stream));
    if (!smooth_field(st, &st->lcc_w, &st->u, param(st, "lcc-sigma"), NULL, error))
      return FALSE;
    CHECK(nw_lcc_warped_post(st->lcc_w, st->lcc_f, st->W, st->lc, st->g, st->stream));
  }
  /* ssd: W = M ∘ s fused into the figures pass. */
  CHECK(nw_demons_sums_cuda(st->d_sums, st->d_partials, st->F, st->W, lcc ? NULL : st->M, st->s,
                            lcc ? st->lcc_f : NULL, lcc ? st->lcc_w : NULL, st->lc, st->g,
                            st->stream));
  CHECK(cudaMemcpyAsync(&st->h->sums, st->d_sums, sizeof(NwDemonsSums), cudaMemcpyDeviceToHost,
                        st->stream));
  CHECK(cudaMemcpyAsync(&st->h->max_u, st->d_max_u, sizeof(float), cudaMemcpyDeviceToHost,
                        st->stream));
  CHECK(cudaStreamSynchronize(st->stream));
  const NwDemonsSums *t = &st->h->sums;
  const double n = (double)st->g.n();
  const double cov = t->sfw - t->sf * t->sw / n, vf = t->sff - t->sf * t->sf / n,
               vw = t->sww - t->sw * t->sw / n;
  st->pr.mse = t->sd2 / n;
  st->pr.ncc = vf > 0 && vw > 0 ? cov / sqrt(vf * vw) : 0.0;
  st->pr.energy = lcc ? 1.0 - (t->n_lcc > 0 ? t->slcc / t->n_lcc : 0.0) : st->pr.mse;
  st->pr.min_jac = t->jac_min;
  st->pr.folds = (size_t)t->folds;
  return TRUE;
}

/* LCC statistics of F at this level (once per level and when lcc-sigma changes). */
static gboolean lcc_fixed_stats(DemonsCuda *st, GError **error)
{
  CHECK(nw_lcc_fixed_pack(st->lcc_f, st->F, st->lc.shift, st->g, st->stream));
  if (!smooth_field(st, &st->lcc_f, &st->u, param(st, "lcc-sigma"), NULL, error))
    return FALSE;
  CHECK(nw_lcc_fixed_post(st->lcc_f, st->F, st->lc, st->g, st->stream));
  return TRUE;
}

/* One iteration: demons_cpu.c iterate(). */
static gboolean iterate(DemonsCuda *st, GError **error)
{
  const gboolean lcc = is_lcc(st);
  CHECK(nw_demons_update_cuda(st->u, st->F, st->W, lcc ? st->lcc_f : NULL,
                              lcc ? st->lcc_w : NULL, (int)param(st, "force"),
                              (float)param(st, "max-step"), st->lc, st->g, st->stream));
  if (!smooth_field(st, &st->u, &st->tmp, param(st, "sigma-fluid"), st->d_max_u, error))
    return FALSE;
  if (param(st, "composition") == NW_DEMONS_BCH) {
    CHECK(nw_axpy_cuda(st->v, st->v, 1.0f, st->u, st->g, st->stream));
  } else {
    CHECK(nw_compose_cuda(st->tmp, st->v, 1.0f, st->u, 1.0f, st->g, st->stream));
    float4 *t = st->v;
    st->v = st->tmp;
    st->tmp = t;
  }
  if (!smooth_field(st, &st->v, &st->tmp, param(st, "sigma-diff"), st->d_max_v, error))
    return FALSE;
  st->pr.prev_energy = st->pr.energy;
  if (!evaluate(st, TRUE, error))
    return FALSE;
  st->pr.max_u = st->h->max_u;
  return TRUE;
}

static gboolean upload_image(float **d, const NwVolume *h, cudaStream_t stream, GError **error)
{
  const size_t bytes = nw_volume_n_voxels(h) * sizeof(float);
  CHECK(cudaMalloc(d, bytes));
  CHECK(cudaMemcpyAsync(*d, h->data, bytes, cudaMemcpyHostToDevice, stream));
  return TRUE;
}

/* Host copy of a device field on grid like (nc = 3). tmp_staging: a free float4 buffer. */
static NwVolume *download_field(DemonsCuda *st, const float4 *d, float4 *staging,
                                const NwVolume *like, GError **error)
{
  g_autoptr(NwVolume) h = nw_volume_new_like(like, 3, error);
  if (h == NULL || !NW_CUDA_CHECK(nw_field_download(h->data, staging, d, st->g, st->stream),
                                  error))
    return NULL;
  return (NwVolume *)g_steal_pointer(&h);
}

static NwVolume *download_image(DemonsCuda *st, const float *d, const NwVolume *like,
                                GError **error)
{
  g_autoptr(NwVolume) h = nw_volume_new_like(like, 1, error);
  if (h == NULL ||
      !NW_CUDA_CHECK(cudaMemcpyAsync(h->data, d, nw_volume_n_voxels(h) * sizeof(float),
                                     cudaMemcpyDeviceToHost, st->stream),
                     error) ||
      !NW_CUDA_CHECK(cudaStreamSynchronize(st->stream), error))
    return NULL;
  return (NwVolume *)g_steal_pointer(&h);
}

/* Carry v onto level l (zero at the first level) and set up its buffers: enter_level(). */
static gboolean enter_level(DemonsCuda *st, int l, GError **error)
{
  const NwVolume *Fh = st->pyr_fixed[l];
  g_autoptr(NwVolume) v_next = NULL;
  if (st->v != NULL) { /* v of the previous level, resized on the host as the CPU does */
    g_autoptr(NwVolume) v_prev =
        download_field(st, st->v, st->tmp, st->pyr_fixed[st->pr.level], error);
    if (v_prev == NULL ||
        (v_next = nw_resize(v_prev, Fh->nx, Fh->ny, Fh->nz, TRUE, error)) == NULL)
      return FALSE;
  }
  free_level(st);
  st->pr.level = l;
  st->g = NwGrid{Fh->nx, Fh->ny, Fh->nz};
  const gboolean lcc = is_lcc(st);
  const size_t n = nw_volume_n_voxels(Fh), f4 = n * sizeof(float4);
  if (!upload_image(&st->F, Fh, st->stream, error) ||
      !upload_image(&st->M, st->pyr_moving[l], st->stream, error))
    return FALSE;
  CHECK(cudaMalloc(&st->W, n * sizeof(float)));
  CHECK(cudaMalloc(&st->v, f4));
  CHECK(cudaMalloc(&st->s, f4));
  CHECK(cudaMalloc(&st->u, f4));
  CHECK(cudaMalloc(&st->tmp, f4));
  if (lcc) {
    CHECK(cudaMalloc(&st->lcc_f, f4));
    CHECK(cudaMalloc(&st->lcc_w, f4));
  }
  if (v_next != NULL)
    CHECK(nw_field_upload(st->v, st->tmp, v_next->data, st->g, st->stream));
  else
    CHECK(cudaMemsetAsync(st->v, 0, f4, st->stream));
  NwVolumeStats fs;
  nw_volume_stats(Fh, &fs);
  st->lc.shift = (float)fs.mean;
  const double range = (double)fs.max - fs.min;
  st->lc.scale2 = range > 0 ? range * range : 1.0;
  st->lc.eps = NW_DEMONS_LCC_EPS * st->lc.scale2;
  if (lcc && !lcc_fixed_stats(st, error))
    return FALSE;
  st->pr.iter_in_level = 0;
  st->pr.level_done = FALSE;
  st->pr.max_u = 0.0;
  if (!evaluate(st, FALSE, error))
    return FALSE;
  st->pr.prev_energy = st->pr.energy;
  return TRUE;
}

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
  if (st->stream != NULL)
    cudaStreamDestroy(st->stream);
  nw_pyramid_free(st->pyr_fixed, st->pr.n_levels);
  nw_pyramid_free(st->pyr_moving, st->pr.n_levels);
  nw_params_free(st->params);
  g_free(st);
}

static gboolean alloc_job_buffers(DemonsCuda *st, GError **error)
{
  CHECK(cudaStreamCreateWithFlags(&st->stream, cudaStreamNonBlocking));
  CHECK(cudaMalloc(&st->d_partials, NW_DEMONS_FIG_BLOCKS * sizeof(NwDemonsSums)));
  CHECK(cudaMalloc(&st->d_sums, sizeof(NwDemonsSums)));
  CHECK(cudaMalloc(&st->d_max_u, sizeof(float)));
  CHECK(cudaMalloc(&st->d_max_v, sizeof(float)));
  CHECK(cudaMallocHost(&st->h, sizeof(Scalars)));
  CHECK(cudaMemsetAsync(st->d_max_u, 0, sizeof(float), st->stream));
  return TRUE;
}

static void *demons_create(const NwMethodInputs *in, const NwParams *p, GError **error)
{
  if (!nw_demons_check_inputs(in, error))
    return NULL;
  DemonsCuda *st = g_new0(DemonsCuda, 1);
  st->params = nw_params_copy(p);
  st->fixed_full = in->fixed;
  st->moving_full = in->moving;
  st->moving_labels = in->moving_labels;
  if (!check_memory(nw_volume_n_voxels(in->fixed), is_lcc(st), in->fixed, error) ||
      !alloc_job_buffers(st, error) ||
      !nw_demons_pyramids(in, p, &st->pyr_fixed, &st->pyr_moving, &st->pr.n_levels, error) ||
      !enter_level(st, 0, error)) {
    demons_destroy(st);
    return NULL;
  }
  return st;
}

static gboolean demons_step(void *state, NwIterationReport *report, GError **error)
{
  DemonsCuda *st = (DemonsCuda *)state;
  if (!st->pr.finished) {
    if (st->pr.level_done && !enter_level(st, st->pr.level + 1, error))
      return FALSE;
    if (!iterate(st, error))
      return FALSE;
    nw_demons_progress_advance(&st->pr, st->params);
  }
  nw_demons_fill_report(&st->pr, st->params, report);
  return TRUE;
}

static gboolean demons_set_params(void *state, const NwParams *p, GError **error)
{
  DemonsCuda *st = (DemonsCuda *)state;
  if (!nw_demons_check_live_change(st->params, p, error))
    return FALSE;
  const gboolean new_window = nw_params_get(p, "lcc-sigma") != param(st, "lcc-sigma");
  nw_params_free(st->params);
  st->params = nw_params_copy(p);
  if (new_window && is_lcc(st)) { /* new LCC window: local statistics and energy with it */
    if (!lcc_fixed_stats(st, error) || !evaluate(st, FALSE, error))
      return FALSE;
    st->pr.prev_energy = st->pr.energy;
  }
  return TRUE;
}

static gboolean demons_publish_frame(void *state, NwFrame *frame, GError **error)
{
  DemonsCuda *st = (DemonsCuda *)state;
  const NwVolume *like = st->pyr_fixed[st->pr.level];
  frame->iteration = st->pr.iteration;
  frame->image = download_image(st, st->W, like, error);
  frame->field = frame->image ? download_field(st, st->s, st->tmp, like, error) : NULL;
  return frame->field != NULL;
}

/* Live display: W and s = exp(v) of the current level, device-to-device into the front. */
static gboolean demons_publish_device_frame(void *state, void *front, GError **error)
{
  DemonsCuda *st = (DemonsCuda *)state;
  return nw_live_front_publish((NwLiveFront *)front, st->pyr_fixed[st->pr.level], st->W, st->s,
                               st->pr.iteration, st->stream, error);
}

/* Add a downloaded image/field to r, or fail. */
static gboolean add_result(NwMethodResult *r, const char *name, NwVolume *v)
{
  if (v == NULL)
    return FALSE;
  nw_method_result_add(r, name, v);
  return TRUE;
}

/* Results at full resolution, computed on the GPU: demons_cpu.c demons_result(). A job that
 * ended before the last level first carries v up to it. */
static NwMethodResult *demons_result(void *state, GError **error)
{
  DemonsCuda *st = (DemonsCuda *)state;
  const int last = st->pr.n_levels - 1;
  if (st->pr.level != last && !enter_level(st, last, error))
    return NULL;
  const NwVolume *full = st->fixed_full;
  g_autoptr(NwMethodResult) r = nw_method_result_new();
  /* s = exp(v) is current (evaluate ran after the last update). u and tmp are free now. */
  if (!add_result(r, "velocity", download_field(st, st->v, st->tmp, full, error)) ||
      !add_result(r, "forward", download_field(st, st->s, st->tmp, full, error)) ||
      !NW_CUDA_CHECK(nw_exp_cuda(st->u, st->tmp, st->v, -1.0f,
                                 nw_field_exp_squarings_for_norm(st->h->max_v), st->g, st->stream),
                     error) ||
      !add_result(r, "inverse", download_field(st, st->u, st->tmp, full, error)))
    return NULL;
  /* Scratch image buffer for the warps and the Jacobian: the first quarter of u. */
  float *img = (float *)st->u;
  const size_t bytes = nw_volume_n_voxels(full) * sizeof(float);
  const float *moving = st->M;
  if (nw_params_get(st->params, "histogram-match") != 0.0) {
    /* The original moving intensities, not the matched ones used for the run. */
    if (!NW_CUDA_CHECK(cudaMemcpyAsync(st->W, st->moving_full->data, bytes,
                                       cudaMemcpyHostToDevice, st->stream),
                       error))
      return NULL;
    moving = st->W;
  }
  if (!NW_CUDA_CHECK(nw_warp_cuda(img, moving, st->s, false, st->g, st->stream), error) ||
      !add_result(r, "warped", download_image(st, img, full, error)) ||
      !NW_CUDA_CHECK(nw_jacobian_cuda(img, st->s, st->g, st->stream), error) ||
      !add_result(r, "jacobian", download_image(st, img, full, error)))
    return NULL;
  if (st->moving_labels != NULL) {
    float *labels = img + nw_volume_n_voxels(full); /* the second quarter of u */
    if (!NW_CUDA_CHECK(cudaMemcpyAsync(labels, st->moving_labels->data, bytes,
                                       cudaMemcpyHostToDevice, st->stream),
                       error) ||
        !NW_CUDA_CHECK(nw_warp_cuda(img, labels, st->s, true, st->g, st->stream), error) ||
        !add_result(r, "labels", download_image(st, img, full, error)))
      return NULL;
  }
  /* W no longer holds M ∘ s after a histogram-matched result: keep the state consistent. */
  if (moving != st->M &&
      !NW_CUDA_CHECK(nw_warp_cuda(st->W, st->M, st->s, false, st->g, st->stream), error))
    return NULL;
  return (NwMethodResult *)g_steal_pointer(&r);
}

extern "C" const NwMethodOps nw_demons_cuda_ops = {
    "demons",
    NW_DEVICE_CUDA,
    "Diffeomorphic log-demons (SSD or local correlation), multi-resolution, on the GPU",
    nw_demons_param_specs,
    nw_demons_n_params, /* shared table: dynamic initialisation, before main */
    TRUE,
    demons_create,
    demons_step,
    demons_set_params,
    demons_publish_frame,
    demons_publish_device_frame,
    demons_result,
    demons_destroy,
};
