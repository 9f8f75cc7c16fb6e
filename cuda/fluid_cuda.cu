/* fluid_cuda.cu — "fluid" on the GPU: the CUDA twin of core/cpu/fluid_cpu.c, following
 * core/cpu/fluid_method.h step by step over the kernels of fluid_kernels.cuh. CUDA back end;
 * every op runs on the job's worker thread (the one that called create), which owns the
 * stream and all device buffers.
 *
 * What stays on the host, as for demons: the image and mask pyramids (the CPU's, so both back
 * ends register the same images), histogram matching, the ssd intensity scaling, and
 * carrying the map to the next level (nw_resize) — once per level. Inside an iteration the
 * host reads back max |r| (the step length δ / max|r|) and, per trial step, the energy sums
 * (the accept / refuse decision): small synchronous copies into pinned memory.
 *
 * Device buffers of the current level (n voxels): float R, T0, Tg (the energy's images: fixed,
 * moving, moving since the last regridding), M (the level's moving image as loaded: frames),
 * W (a frame's warped image); two states (u, Tw, gTw; with masks mask_d and region) as the
 * CPU's FluidEval; float4 f and r (force, then velocity and transport: the Gaussian swaps
 * them), u_prev (the map at the last regridding) and u_tot (the whole map for the figures, a
 * frame's forward field, scratch); with masks fmask, mmask0 and mmask_g (the moving mask since
 * the last regridding). */
#include <cuda_runtime.h>
#include <math.h>

#include "cuda_check.h"
#include "deformable_common.h"
#include "demons_kernels.cuh"
#include "demons_method.h"
#include "field_cuda.cuh"
#include "fluid_kernels.cuh"
#include "fluid_method.h"
#include "gauss_cuda.cuh"
#include "nw_error.h"
#include "nw_live.h"
#include "resample.h"
#include "smooth.h"

#define THREADS 256

struct Eval { /* fluid_cpu.c FluidEval on the device; sums and E on the host */
  float4 *u, *gTw;
  float *Tw, *mask_d, *region;
  NwFluidSums s;
  double max_u2, E;
};

struct Host { /* pinned: what an iteration reads back */
  NwFluidSumsCuda sums;
  double max_r;
};

struct FluidCuda {
  NwParams *params;
  const NwVolume *fixed_full, *moving_full, *moving_labels; /* borrowed */
  NwPyramidSet pyr;
  double scale;
  int variant; /* NwFluidForceVariant */

  int level, iter_in_level, iteration, regrids;
  gboolean level_done, finished, have_prev;
  double delta, last_step, prev_energy;

  cudaStream_t stream;
  NwGrid g;
  float *R, *T0, *Tg, *M, *W, *fmask, *mmask0, *mmask_g;
  Eval cur, trial;
  float4 *f, *r, *u_prev, *u_tot;
  NwFluidSumsCuda *d_partials, *d_sums;
  double *d_max_r;
  Host *h;

  NwFluidFigures fig;
};

static double param(const FluidCuda *st, const char *name)
{
  return nw_params_get(st->params, name);
}

static gboolean has_masks(const FluidCuda *st)
{
  return st->pyr.fixed_mask != NULL || st->pyr.moving_mask != NULL;
}

/* nw_fluid_energy: E = l2 + λ skl, +inf with a fold. */
static double energy(const NwFluidSums *s, double lambda)
{
  return s->n_folds > 0 ? INFINITY : s->l2 + lambda * s->skl;
}

/* ---- small kernels of this file ------------------------------------------------------------ */

__global__ void x_of_kernel(float *__restrict__ out, const float4 *__restrict__ in, long long n)
{
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e < n)
    out[e] = in[e].x;
}

/* a = (float)(a k), k in double as the CPU's lcc_to_unit_range. */
__global__ void scale_kernel(float *__restrict__ a, double k, long long n)
{
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e < n)
    a[e] = (float)(a[e] * k);
}

/* ---- states -------------------------------------------------------------------------------- */

/* Everything of ev that follows from ev->u (fluid_cpu.c evaluate): one synchronisation. */
static gboolean evaluate(FluidCuda *st, Eval *ev, GError **error)
{
  const NwGrid &g = st->g;
  if (!NW_CUDA_CHECK(nw_fluid_deform_grad_cuda(ev->Tw, ev->gTw, st->Tg, ev->u, g, st->stream),
                     error) ||
      (ev->mask_d != NULL &&
       !NW_CUDA_CHECK(nw_fluid_deform_cuda(ev->mask_d, st->mmask_g, ev->u, g, st->stream),
                      error)) ||
      (ev->region != NULL &&
       !NW_CUDA_CHECK(nw_fluid_region_cuda(ev->region, st->fmask, ev->mask_d, g, st->stream),
                      error)) ||
      !NW_CUDA_CHECK(nw_fluid_sums_cuda(st->d_sums, st->d_partials, st->R, ev->Tw, ev->u,
                                        ev->region, g, st->stream),
                     error) ||
      !NW_CUDA_CHECK(cudaMemcpyAsync(&st->h->sums, st->d_sums, sizeof(NwFluidSumsCuda),
                                     cudaMemcpyDeviceToHost, st->stream),
                     error) ||
      !NW_CUDA_CHECK(cudaStreamSynchronize(st->stream), error))
    return FALSE;
  ev->s = st->h->sums.s;
  ev->max_u2 = st->h->sums.max_u2;
  ev->E = energy(&ev->s, param(st, "lambda"));
  return TRUE;
}

/* The figures of the whole map u_tot (fluid_cpu.c set_figures). */
static gboolean set_figures(FluidCuda *st, GError **error)
{
  NwFluidSums s = st->cur.s;
  double max_u2 = st->cur.max_u2;
  if (st->have_prev) {
    if (!NW_CUDA_CHECK(
            nw_fluid_compose_cuda(st->u_tot, st->u_prev, st->cur.u, 1.0f, st->g, st->stream),
            error) ||
        !NW_CUDA_CHECK(nw_fluid_sums_cuda(st->d_sums, st->d_partials, st->R, st->cur.Tw, st->u_tot,
                                          st->cur.region, st->g, st->stream),
                       error) ||
        !NW_CUDA_CHECK(cudaMemcpyAsync(&st->h->sums, st->d_sums, sizeof(NwFluidSumsCuda),
                                       cudaMemcpyDeviceToHost, st->stream),
                       error) ||
        !NW_CUDA_CHECK(cudaStreamSynchronize(st->stream), error))
      return FALSE;
    s = st->h->sums.s;
    max_u2 = st->h->sums.max_u2;
  }
  nw_fluid_figures(&st->fig, &s, param(st, "lambda"), sqrt(max_u2));
  return TRUE;
}

/* out = sign · the whole map so far (u_prev ∘ cur.u, or cur.u); out is not cur.u or u_prev. */
static gboolean whole_map(FluidCuda *st, float4 *out, float sign, GError **error)
{
  return NW_CUDA_CHECK(nw_fluid_compose_cuda(out, st->have_prev ? st->u_prev : NULL, st->cur.u,
                                             sign, st->g, st->stream),
                       error);
}

/* Regridding (fluid_method.h step 5; fluid_cpu.c regrid). */
static gboolean regrid(FluidCuda *st, GError **error)
{
  if (!whole_map(st, st->u_tot, 1.0f, error))
    return FALSE;
  float4 *t = st->u_prev;
  st->u_prev = st->u_tot;
  st->u_tot = t;
  st->have_prev = TRUE;
  const size_t n = (size_t)st->g.n();
  if (!NW_CUDA_CHECK(nw_fluid_deform_cuda(st->Tg, st->T0, st->u_prev, st->g, st->stream), error) ||
      (st->mmask_g != NULL &&
       !NW_CUDA_CHECK(nw_fluid_deform_cuda(st->mmask_g, st->mmask0, st->u_prev, st->g, st->stream),
                      error)) ||
      !NW_CUDA_CHECK(cudaMemsetAsync(st->cur.u, 0, n * sizeof(float4), st->stream), error) ||
      !evaluate(st, &st->cur, error))
    return FALSE;
  st->regrids++;
  return TRUE;
}

/* ---- one iteration (fluid_cpu.c iterate) ---------------------------------------------------- */

/* Steps 3-4: the largest step along r that lowers E; *moved FALSE when none does. */
static gboolean take_step(FluidCuda *st, double max_r, gboolean *moved, GError **error)
{
  *moved = FALSE;
  for (int h = 0; h <= NW_FLUID_MAX_HALVINGS && max_r > 0.0; h++, st->delta *= 0.5) {
    if (!NW_CUDA_CHECK(nw_axpy_cuda(st->trial.u, st->cur.u, (float)(st->delta / max_r), st->r,
                                    st->g, st->stream),
                       error) ||
        !evaluate(st, &st->trial, error))
      return FALSE;
    if (st->trial.E < st->cur.E) {
      const Eval t = st->cur;
      st->cur = st->trial;
      st->trial = t;
      st->last_step = st->delta;
      st->delta = fmin(st->delta * NW_FLUID_STEP_GROWTH, param(st, "max-step"));
      *moved = TRUE;
      return TRUE;
    }
  }
  st->delta = param(st, "max-step");
  return TRUE;
}

/* Steps 1-3 on the device: f, v = G_σ * f (f and r may swap), r = v - (v·∇)u and max|r|. */
static gboolean direction(FluidCuda *st, double *max_r, GError **error)
{
  const double sigma = param(st, "sigma");
  NwGaussKernel k[3];
  for (int a = 0; a < 3; a++)
    nw_gauss_kernel(&k[a], sigma); /* sigma 0: radius 0, no pass (the CPU skips smoothing) */
  if (!NW_CUDA_CHECK(nw_fluid_force_cuda(st->f, st->R, st->cur.Tw, st->cur.gTw, st->cur.u,
                                         st->cur.region, (float)param(st, "lambda"), st->variant,
                                         st->g, st->stream),
                     error) ||
      (sigma > 0.0 &&
       !NW_CUDA_CHECK(nw_gauss3_float4(&st->f, &st->r, st->g, k, NULL, st->stream), error)) ||
      !NW_CUDA_CHECK(
          nw_fluid_transport_cuda(st->r, st->d_max_r, st->cur.u, st->f, st->g, st->stream),
          error) ||
      !NW_CUDA_CHECK(cudaMemcpyAsync(&st->h->max_r, st->d_max_r, sizeof(double),
                                     cudaMemcpyDeviceToHost, st->stream),
                     error) ||
      !NW_CUDA_CHECK(cudaStreamSynchronize(st->stream), error))
    return FALSE;
  *max_r = st->h->max_r;
  return TRUE;
}

static gboolean iterate(FluidCuda *st, GError **error)
{
  double max_r = 0.0;
  gboolean moved = FALSE;
  if (!direction(st, &max_r, error))
    return FALSE;
  st->prev_energy = st->cur.E;
  if (!take_step(st, max_r, &moved, error))
    return FALSE;
  if (!moved)
    st->last_step = 0.0;
  st->iter_in_level++;
  st->iteration++;
  st->level_done = !moved || nw_deformable_level_done(
                                 st->iter_in_level, nw_params_get_int(st->params, "iterations"),
                                 st->prev_energy, st->cur.E, param(st, "tolerance"));
  st->finished = st->level_done && st->level == st->pyr.n_levels - 1;
  if (moved && st->cur.s.min_jac < param(st, "regrid-jacobian") && !regrid(st, error))
    return FALSE;
  return set_figures(st, error);
}

/* ---- levels -------------------------------------------------------------------------------- */

static void eval_free(Eval *ev)
{
  void *bufs[] = {ev->u, ev->gTw, ev->Tw, ev->mask_d, ev->region};
  for (size_t b = 0; b < G_N_ELEMENTS(bufs); b++)
    cudaFree(bufs[b]);
  *ev = Eval{};
}

static void free_level(FluidCuda *st)
{
  eval_free(&st->cur);
  eval_free(&st->trial);
  void *bufs[] = {st->R,      st->T0,      st->Tg, st->M, st->W,      st->fmask,
                  st->mmask0, st->mmask_g, st->f,  st->r, st->u_prev, st->u_tot};
  for (size_t b = 0; b < G_N_ELEMENTS(bufs); b++)
    cudaFree(bufs[b]);
  st->R = st->T0 = st->Tg = st->M = st->W = st->fmask = st->mmask0 = st->mmask_g = NULL;
  st->f = st->r = st->u_prev = st->u_tot = NULL;
  st->have_prev = FALSE;
}

static gboolean alloc_eval(Eval *ev, size_t n, gboolean moving_mask, gboolean masks, GError **error)
{
  return NW_CUDA_CHECK(cudaMalloc(&ev->u, n * sizeof(float4)), error) &&
         NW_CUDA_CHECK(cudaMalloc(&ev->gTw, n * sizeof(float4)), error) &&
         NW_CUDA_CHECK(cudaMalloc(&ev->Tw, n * sizeof(float)), error) &&
         (!moving_mask || NW_CUDA_CHECK(cudaMalloc(&ev->mask_d, n * sizeof(float)), error)) &&
         (!masks || NW_CUDA_CHECK(cudaMalloc(&ev->region, n * sizeof(float)), error));
}

/* Bytes of device memory a level of n voxels needs (the list above). */
static size_t level_bytes(size_t n, int masks)
{
  const int floats = 7 + (masks > 0 ? 5 : 0), float4s = 8;
  return n * (floats * sizeof(float) + float4s * sizeof(float4));
}

static gboolean check_memory(const NwMethodInputs *in, GError **error)
{
  const NwVolume *full = in->fixed;
  const int masks = (in->fixed_mask != NULL) + (in->moving_mask != NULL);
  size_t free_b = 0, total_b = 0;
  if (!NW_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b), error))
    return FALSE;
  const size_t need = level_bytes(nw_volume_n_voxels(full), masks) + (64u << 20); /* slack */
  if (need > free_b) {
    g_set_error(error, NW_ERROR, NW_ERROR_NOMEM,
                "fluid: a %d x %d x %d volume needs %.0f MiB of GPU memory but only %.0f MiB "
                "of %.0f MiB are free; use --device cpu or a smaller image",
                full->nx, full->ny, full->nz, need / 1048576.0, free_b / 1048576.0,
                total_b / 1048576.0);
    return FALSE;
  }
  return TRUE;
}

static gboolean upload(float **d, const float *h, size_t n, cudaStream_t stream, GError **error)
{
  return NW_CUDA_CHECK(cudaMalloc(d, n * sizeof(float)), error) &&
         NW_CUDA_CHECK(cudaMemcpyAsync(*d, h, n * sizeof(float), cudaMemcpyHostToDevice, stream),
                       error);
}

/* The level's image I as the energy sees it into a new device buffer *d (fluid_cpu.c
 * energy_image): ssd: I times scale (on the host); lcc: locally normalised on the device with
 * demons' LCC kernels (the twins of nw_demons_lcc_fixed_cpu), f and r as scratch. */
static gboolean energy_image(FluidCuda *st, float **d, const NwVolume *I, GError **error)
{
  const size_t n = nw_volume_n_voxels(I);
  if ((int)param(st, "similarity") != NW_FLUID_SIM_LCC) {
    g_autofree float *h = g_new(float, n);
    for (size_t e = 0; e < n; e++)
      h[e] = (float)(I->data[e] * st->scale);
    return upload(d, h, n, st->stream, error) &&
           NW_CUDA_CHECK(cudaStreamSynchronize(st->stream), error); /* h is freed next */
  }
  NwVolumeStats vs;
  nw_volume_stats(I, &vs);
  const double range = (double)vs.max - vs.min;
  NwDemonsLevelConst lc;
  lc.shift = (float)vs.mean;
  lc.scale2 = range > 0 ? range * range : 1.0;
  lc.eps = NW_DEMONS_LCC_EPS * lc.scale2;
  NwGaussKernel k[3];
  for (int a = 0; a < 3; a++)
    nw_gauss_kernel(&k[a], param(st, "lcc-sigma"));
  return upload(d, I->data, n, st->stream, error) &&
         NW_CUDA_CHECK(nw_lcc_fixed_pack(st->f, *d, lc.shift, st->g, st->stream), error) &&
         NW_CUDA_CHECK(nw_gauss3_float4(&st->f, &st->r, st->g, k, NULL, st->stream), error) &&
         NW_CUDA_CHECK(nw_lcc_fixed_post(st->f, *d, lc, st->g, st->stream), error) &&
         (x_of_kernel<<<nw_blocks_for(st->g.n(), THREADS), THREADS, 0, st->stream>>>(*d, st->f,
                                                                                     st->g.n()),
          NW_CUDA_CHECK(nw_cuda_launched(st->stream), error));
}

/* lcc: both normalised images divided by the range of the fixed one (fluid_cpu.c
 * lcc_to_unit_range), the range from a host copy of R (once per level). */
static gboolean lcc_to_unit_range(FluidCuda *st, const NwVolume *like, GError **error)
{
  g_autoptr(NwVolume) hR = nw_volume_new_like(like, 1, error);
  if (hR == NULL ||
      !NW_CUDA_CHECK(cudaMemcpyAsync(hR->data, st->R, nw_volume_n_voxels(hR) * sizeof(float),
                                     cudaMemcpyDeviceToHost, st->stream),
                     error) ||
      !NW_CUDA_CHECK(cudaStreamSynchronize(st->stream), error))
    return FALSE;
  NwVolumeStats rs;
  nw_volume_stats(hR, &rs);
  const double k = rs.max > rs.min ? 1.0 / ((double)rs.max - rs.min) : 1.0;
  const unsigned blocks = nw_blocks_for(st->g.n(), THREADS);
  scale_kernel<<<blocks, THREADS, 0, st->stream>>>(st->R, k, st->g.n());
  scale_kernel<<<blocks, THREADS, 0, st->stream>>>(st->T0, k, st->g.n());
  return NW_CUDA_CHECK(nw_cuda_launched(st->stream), error);
}

/* Host copy of a device field (nc = 3) on grid like; f is the staging buffer. */
static NwVolume *download_field(FluidCuda *st, const float4 *d, const NwVolume *like,
                                GError **error)
{
  g_autoptr(NwVolume) h = nw_volume_new_like(like, 3, error);
  if (h == NULL || !NW_CUDA_CHECK(nw_field_download(h->data, st->f, d, st->g, st->stream), error))
    return NULL;
  return (NwVolume *)g_steal_pointer(&h);
}

static gboolean alloc_level(FluidCuda *st, int l, GError **error)
{
  const NwVolume *F = st->pyr.fixed[l];
  const size_t n = nw_volume_n_voxels(F), f4 = n * sizeof(float4);
  const gboolean mm = st->pyr.moving_mask != NULL, masks = has_masks(st);
  st->g = NwGrid{F->nx, F->ny, F->nz};
  return alloc_eval(&st->cur, n, mm, masks, error) && alloc_eval(&st->trial, n, mm, masks, error) &&
         NW_CUDA_CHECK(cudaMalloc(&st->f, f4), error) &&
         NW_CUDA_CHECK(cudaMalloc(&st->r, f4), error) &&
         NW_CUDA_CHECK(cudaMalloc(&st->u_prev, f4), error) &&
         NW_CUDA_CHECK(cudaMalloc(&st->u_tot, f4), error) &&
         NW_CUDA_CHECK(cudaMalloc(&st->Tg, n * sizeof(float)), error) &&
         NW_CUDA_CHECK(cudaMalloc(&st->W, n * sizeof(float)), error) &&
         upload(&st->M, st->pyr.moving[l]->data, n, st->stream, error) &&
         (st->pyr.fixed_mask == NULL ||
          upload(&st->fmask, st->pyr.fixed_mask[l]->data, n, st->stream, error)) &&
         (!mm || (upload(&st->mmask0, st->pyr.moving_mask[l]->data, n, st->stream, error) &&
                  NW_CUDA_CHECK(cudaMalloc(&st->mmask_g, n * sizeof(float)), error) &&
                  NW_CUDA_CHECK(cudaMemcpyAsync(st->mmask_g, st->mmask0, n * sizeof(float),
                                                cudaMemcpyDeviceToDevice, st->stream),
                                error)));
}

/* Enter level l (fluid_cpu.c enter_level). */
static gboolean enter_level(FluidCuda *st, int l, GError **error)
{
  g_autoptr(NwVolume) prev = NULL;
  if (st->cur.u != NULL &&
      (!whole_map(st, st->u_tot, 1.0f, error) ||
       (prev = download_field(st, st->u_tot, st->pyr.fixed[st->level], error)) == NULL))
    return FALSE;
  const NwVolume *F = st->pyr.fixed[l];
  g_autoptr(NwVolume) carried = nw_deformable_carry_field(prev, F, error);
  if (carried == NULL)
    return FALSE;
  free_level(st);
  st->level = l;
  const size_t n = nw_volume_n_voxels(F);
  if (!alloc_level(st, l, error) || !energy_image(st, &st->R, F, error) ||
      !energy_image(st, &st->T0, st->pyr.moving[l], error) ||
      ((int)param(st, "similarity") == NW_FLUID_SIM_LCC && !lcc_to_unit_range(st, F, error)) ||
      !NW_CUDA_CHECK(
          cudaMemcpyAsync(st->Tg, st->T0, n * sizeof(float), cudaMemcpyDeviceToDevice, st->stream),
          error) ||
      !NW_CUDA_CHECK(nw_field_upload(st->cur.u, st->f, carried->data, st->g, st->stream), error) ||
      !NW_CUDA_CHECK(nw_fluid_zero_border_cuda(st->cur.u, st->g, st->stream), error) ||
      !evaluate(st, &st->cur, error))
    return FALSE;
  if (st->cur.s.min_jac < param(st, "regrid-jacobian") && !regrid(st, error))
    return FALSE;
  st->delta = param(st, "max-step");
  st->iter_in_level = 0;
  st->level_done = FALSE;
  st->prev_energy = st->cur.E;
  return set_figures(st, error);
}

/* ---- the method interface ------------------------------------------------------------------ */

static void fluid_destroy(void *state)
{
  FluidCuda *st = (FluidCuda *)state;
  if (st == NULL)
    return;
  if (st->stream != NULL)
    cudaStreamSynchronize(st->stream);
  free_level(st);
  cudaFree(st->d_partials);
  cudaFree(st->d_sums);
  cudaFree(st->d_max_r);
  cudaFreeHost(st->h);
  if (st->stream != NULL)
    cudaStreamDestroy(st->stream);
  nw_pyramid_set_clear(&st->pyr);
  g_clear_pointer(&st->params, nw_params_free);
  g_free(st);
}

static gboolean alloc_job_buffers(FluidCuda *st, GError **error)
{
  return NW_CUDA_CHECK(cudaStreamCreateWithFlags(&st->stream, cudaStreamNonBlocking), error) &&
         NW_CUDA_CHECK(cudaMalloc(&st->d_partials, NW_FLUID_SUM_BLOCKS * sizeof(NwFluidSumsCuda)),
                       error) &&
         NW_CUDA_CHECK(cudaMalloc(&st->d_sums, sizeof(NwFluidSumsCuda)), error) &&
         NW_CUDA_CHECK(cudaMalloc(&st->d_max_r, sizeof(double)), error) &&
         NW_CUDA_CHECK(cudaMallocHost(&st->h, sizeof(Host)), error);
}

static void *fluid_create(const NwMethodInputs *in, const NwParams *p, GError **error)
{
  if (!nw_deformable_check_inputs(in, "fluid", error) || !check_memory(in, error))
    return NULL;
  FluidCuda *st = g_new0(FluidCuda, 1);
  st->params = nw_params_copy(p);
  st->fixed_full = in->fixed;
  st->moving_full = in->moving;
  st->moving_labels = in->moving_labels;
  st->variant = nw_fluid_force_variant_default();
  st->scale = nw_fluid_intensity_scale(in->fixed);
  if (!alloc_job_buffers(st, error) ||
      !nw_pyramid_set_build(&st->pyr, in, nw_params_get_int(p, "levels"),
                            nw_params_get(p, "histogram-match") != 0.0, error) ||
      !enter_level(st, 0, error)) {
    fluid_destroy(st);
    return NULL;
  }
  return st;
}

static void fill_report(const FluidCuda *st, NwIterationReport *r)
{
  nw_fluid_fill_report(r, st->params, st->iteration, st->level, st->iter_in_level,
                       st->pyr.n_levels, st->finished, &st->fig, st->last_step, st->regrids);
}

static gboolean fluid_step(void *state, NwIterationReport *report, GError **error)
{
  FluidCuda *st = (FluidCuda *)state;
  if (!st->finished) {
    if (st->level_done && !enter_level(st, st->level + 1, error))
      return FALSE;
    if (!iterate(st, error))
      return FALSE;
  }
  fill_report(st, report);
  return TRUE;
}

static gboolean fluid_set_params(void *state, const NwParams *p, GError **error)
{
  FluidCuda *st = (FluidCuda *)state;
  if (!nw_deformable_check_live_change(st->params, p, "fluid", error))
    return FALSE;
  nw_params_free(st->params);
  st->params = nw_params_copy(p);
  st->cur.E = energy(&st->cur.s, param(st, "lambda"));
  st->prev_energy = st->cur.E;
  st->delta = fmin(st->delta, param(st, "max-step"));
  return set_figures(st, error);
}

/* A frame's state on the device: u_tot = s = -u_tot (the forward field), W = M ∘ s. */
static gboolean frame_on_device(FluidCuda *st, GError **error)
{
  return whole_map(st, st->u_tot, -1.0f, error) &&
         NW_CUDA_CHECK(nw_warp_cuda(st->W, st->M, st->u_tot, false, st->g, st->stream), error);
}

static gboolean fluid_publish_frame(void *state, NwFrame *frame, GError **error)
{
  FluidCuda *st = (FluidCuda *)state;
  const NwVolume *like = st->pyr.fixed[st->level];
  frame->iteration = st->iteration;
  if (!frame_on_device(st, error))
    return FALSE;
  frame->image = nw_volume_new_like(like, 1, error);
  if (frame->image == NULL ||
      !NW_CUDA_CHECK(cudaMemcpyAsync(frame->image->data, st->W,
                                     nw_volume_n_voxels(like) * sizeof(float),
                                     cudaMemcpyDeviceToHost, st->stream),
                     error))
    return FALSE;
  frame->field = download_field(st, st->u_tot, like, error); /* synchronises */
  return frame->field != NULL;
}

/* Live display: W and s of the current level, device-to-device into the front on the job's
 * stream (the front's copies run before anything later on it overwrites u_tot or W). */
static gboolean fluid_publish_device_frame(void *state, void *front, GError **error)
{
  FluidCuda *st = (FluidCuda *)state;
  return frame_on_device(st, error) &&
         nw_live_front_publish((NwLiveFront *)front, st->pyr.fixed[st->level], st->W, st->u_tot,
                               st->iteration, st->stream, error);
}

/* Full-resolution device buffers of a result, freed together. */
struct ResultBufs {
  float4 *s;
  float *img, *moving, *labels;
};

static void result_bufs_free(ResultBufs *b)
{
  cudaFree(b->s);
  cudaFree(b->img);
  cudaFree(b->moving);
  cudaFree(b->labels);
}

/* Host copy of n device floats into a new image like `like`. */
static NwVolume *download_image(FluidCuda *st, const float *d, const NwVolume *like, GError **error)
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

/* The forward field s = -u_tot at full resolution into b->s: directly at the last level,
 * else through the host (nw_resize, as fluid_cpu.c fluid_result). */
static gboolean full_forward(FluidCuda *st, ResultBufs *b, const NwGrid &gf, GError **error)
{
  const NwVolume *full = st->fixed_full;
  if (st->level == st->pyr.n_levels - 1)
    return whole_map(st, b->s, -1.0f, error);
  g_autoptr(NwVolume) s = NULL;
  g_autoptr(NwVolume) s_full = NULL;
  if (!whole_map(st, st->u_tot, -1.0f, error) ||
      (s = download_field(st, st->u_tot, st->pyr.fixed[st->level], error)) == NULL ||
      (s_full = nw_resize(s, full->nx, full->ny, full->nz, TRUE, error)) == NULL)
    return FALSE;
  /* A staging buffer of 12 n bytes for the upload: none of the level's is full-sized. */
  void *staging = NULL;
  const gboolean ok =
      NW_CUDA_CHECK(cudaMalloc(&staging, (size_t)gf.n() * 3 * sizeof(float)), error) &&
      NW_CUDA_CHECK(nw_field_upload(b->s, staging, s_full->data, gf, st->stream), error) &&
      NW_CUDA_CHECK(cudaStreamSynchronize(st->stream), error);
  cudaFree(staging);
  return ok;
}

static NwMethodResult *fluid_result(void *state, GError **error)
{
  FluidCuda *st = (FluidCuda *)state;
  const NwVolume *full = st->fixed_full;
  const NwGrid gf{full->nx, full->ny, full->nz};
  const size_t n = nw_volume_n_voxels(full);
  ResultBufs b = {};
  g_autoptr(NwMethodResult) r = nw_method_result_new();
  NwVolume *fwd = NULL, *warped = NULL, *jac = NULL, *labels = NULL;
  gboolean ok = NW_CUDA_CHECK(cudaMalloc(&b.s, n * sizeof(float4)), error) &&
                NW_CUDA_CHECK(cudaMalloc(&b.img, n * sizeof(float)), error) &&
                upload(&b.moving, st->moving_full->data, n, st->stream, error) &&
                (st->moving_labels == NULL ||
                 upload(&b.labels, st->moving_labels->data, n, st->stream, error)) &&
                full_forward(st, &b, gf, error);
  /* The forward field's host copy: staged through the state's f when it is full-sized (the
   * last level), else through a temporary buffer. */
  if (ok) {
    fwd = nw_volume_new_like(full, 3, error);
    void *staging = st->level == st->pyr.n_levels - 1 ? (void *)st->f : NULL;
    ok = fwd != NULL &&
         (staging != NULL || NW_CUDA_CHECK(cudaMalloc(&staging, n * 3 * sizeof(float)), error)) &&
         NW_CUDA_CHECK(nw_field_download(fwd->data, staging, b.s, gf, st->stream), error);
    if (staging != NULL && staging != (void *)st->f)
      cudaFree(staging);
  }
  /* The original moving intensities, also when they were histogram-matched for the run. */
  ok = ok && NW_CUDA_CHECK(nw_warp_cuda(b.img, b.moving, b.s, false, gf, st->stream), error) &&
       (warped = download_image(st, b.img, full, error)) != NULL &&
       NW_CUDA_CHECK(nw_jacobian_cuda(b.img, b.s, gf, st->stream), error) &&
       (jac = download_image(st, b.img, full, error)) != NULL &&
       (st->moving_labels == NULL ||
        (NW_CUDA_CHECK(nw_warp_cuda(b.img, b.labels, b.s, true, gf, st->stream), error) &&
         (labels = download_image(st, b.img, full, error)) != NULL));
  result_bufs_free(&b);
  if (!ok) {
    g_clear_pointer(&fwd, nw_volume_free);
    g_clear_pointer(&warped, nw_volume_free);
    g_clear_pointer(&jac, nw_volume_free);
    g_clear_pointer(&labels, nw_volume_free);
    return NULL;
  }
  nw_volume_set_affine(fwd, full->vox_to_ras);
  nw_method_result_add(r, "forward", fwd);
  nw_method_result_add(r, "warped", warped);
  nw_method_result_add(r, "jacobian", jac);
  if (labels != NULL)
    nw_method_result_add(r, "labels", labels);
  return (NwMethodResult *)g_steal_pointer(&r);
}

/* C++20 designated initialisers: the slots of NwMethodOps by name, in their order. */
extern "C" const NwMethodOps nw_fluid_cuda_ops = {
    .name = "fluid",
    .device = NW_DEVICE_CUDA,
    .description = "Unbiased viscous-fluid registration (symmetric-KL Jacobian term), "
                   "multi-resolution, on the GPU",
    .params = nw_fluid_param_specs,
    .n_params = NW_FLUID_N_PARAMS,
    .needs_moving = TRUE,
    .plot_figures = nw_fluid_plot_figures,
    .create = fluid_create,
    .step = fluid_step,
    .set_params = fluid_set_params,
    .publish_frame = fluid_publish_frame,
    .publish_device_frame = fluid_publish_device_frame,
    .result = fluid_result,
    .destroy = fluid_destroy,
};
