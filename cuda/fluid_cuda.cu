/* fluid_cuda.cu — "fluid" on the GPU: the CUDA twin of core/cpu/fluid_cpu.c, following
 * core/cpu/fluid_method.h step by step over the kernels of fluid_kernels.cuh. CUDA back end;
 * every op runs on the job's worker thread (the one that called create), which owns the
 * stream and all device buffers.
 *
 * What stays on the host: the input checks, histogram matching and the ssd intensity scale
 * (once per job), lcc's image statistics (once per level). The image and mask pyramids are
 * built on the device from one upload of each input (nw_downsample2_cuda, the CPU's
 * nw_downsample2 bit for bit, so both back ends register the same images), the map is carried
 * to the next level on the device (nw_fluid_resize_field_cuda, nw_resize bit for bit), and the
 * results are formed in the level's buffers. Inside an iteration the host reads back once per
 * trial step: its energy sums (the accept / refuse decision), with max |r| after the first
 * (the step length δ / max|r| is formed on the device): a small copy into pinned memory.
 *
 * Device buffers, allocated once at create for the finest grid (n voxels) and used by every
 * level on its own grid: float R, T0, Tg (the energy's images: fixed, moving, moving since the
 * last regridding), W (a frame's or a result's image); two states (u, Tw, gTw; with masks
 * mask_d and region) as the CPU's FluidEval; float4 f and r (force, then velocity and
 * transport: the Gaussian swaps them), u_prev (the map at the last regridding) and u_tot (the
 * whole map for the figures, a frame's or the result's forward field, scratch); with a moving
 * mask mmask_g (it since the last regridding). The pyramids: fixed and moving images (the
 * moving one as registered: histogram-matched on request) and masks, every level. */
#include <cuda_runtime.h>
#include <math.h>

#include "cuda_check.h"
#include "deformable_common.h"
#include "demons_kernels.cuh"
#include "demons_method.h"
#include "field_cuda.cuh"
#include "staging_cuda.cuh"
#include "fluid_kernels.cuh"
#include "fluid_method.h"
#include "gauss_cuda.cuh"
#include "histogram_match.h"
#include "nw_error.h"
#include "nw_live.h"
#include "pyramid.h"
#include "pyramid_cuda.cuh"
#include "resample.h"
#include "smooth.h"

#define THREADS 256
#define MAX_LEVELS 8

struct Eval { /* fluid_cpu.c FluidEval on the device; sums and E on the host */
  float4 *u, *gTw;
  float *Tw, *mask_d, *region;
  NwFluidSums s;
  double max_u2, E;
};

struct Readback { /* what an iteration reads back, in one copy: device and pinned host */
  NwFluidSumsCuda sums;
  double max_r;
};

/* One image pyramid on the device, [n_levels], 0 = coarsest; NULL levels without it. */
struct DevPyramid {
  float *level[MAX_LEVELS];
};

struct FluidCuda {
  NwParams *params;
  const NwVolume *fixed_full, *moving_full, *moving_labels; /* borrowed */
  int n_levels;
  NwVolume *coarse[MAX_LEVELS]; /* the grids (size, affine) of the levels below the finest */
  DevPyramid F, M, fmask, mmask;
  double scale;
  int variant; /* NwFluidForceVariant */

  int level, iter_in_level, iteration, regrids;
  gboolean level_done, finished, have_prev;
  double delta, last_step, prev_energy;

  cudaStream_t stream;
  NwGrid g;
  float *R, *T0, *Tg, *W, *mmask_g;
  Eval cur, trial;
  float4 *f, *r, *u_prev, *u_tot;
  NwFluidSumsCuda *d_partials;
  Readback *d_back, *h_back;
  float *stage; /* the downloads' pinned pair (staging_cuda.cuh), made at the first large one */

  NwFluidFigures fig;
};

/* The job's stage for downloads on the grid of like (a field's three floats a voxel at most). */
static float *stage_of(FluidCuda *st, const NwVolume *like)
{
  return nw_stage_for(&st->stage, 3 * nw_volume_n_voxels(like));
}

static double param(const FluidCuda *st, const char *name)
{
  return nw_params_get(st->params, name);
}

/* The volume whose grid and affine level l has: the fixed image at the finest level. */
static const NwVolume *level_like(const FluidCuda *st, int l)
{
  return l == st->n_levels - 1 ? st->fixed_full : st->coarse[l];
}

static NwGrid grid_of(const NwVolume *v)
{
  return NwGrid{v->nx, v->ny, v->nz};
}

/* nw_fluid_energy: E = l2 + λ skl, +inf with a fold. */
static double energy(const NwFluidSums *s, double lambda)
{
  return s->n_folds > 0 ? INFINITY : s->l2 + lambda * s->skl;
}

static double ms_since(gint64 t0)
{
  return (g_get_monotonic_time() - t0) / 1e3;
}

/* ---- small kernels of this file ------------------------------------------------------------ */

__global__ void x_of_kernel(float *__restrict__ out, const float4 *__restrict__ in, long long n)
{
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e < n)
    out[e] = in[e].x;
}

/* out = (float)(in k), k in double as the CPU's loops (energy_image, lcc_to_unit_range);
 * out may be in. */
__global__ void scale_kernel(float *out, const float *in, double k, long long n)
{
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e < n)
    out[e] = (float)(in[e] * k);
}

static gboolean scale_into(FluidCuda *st, float *out, const float *in, double k, GError **error)
{
  scale_kernel<<<nw_blocks_for(st->g.n(), THREADS), THREADS, 0, st->stream>>>(out, in, k,
                                                                              st->g.n());
  return NW_CUDA_CHECK(nw_cuda_launched(st->stream), error);
}

/* ---- states -------------------------------------------------------------------------------- */

/* The rest of an evaluation once ev->Tw and ev->gTw are there (fluid_cpu.c evaluate): the
 * deformed moving mask and the region, the sums, read back with max |r| in one copy; one
 * synchronisation. */
static gboolean finish_eval(FluidCuda *st, Eval *ev, GError **error)
{
  const NwGrid &g = st->g;
  if ((ev->mask_d != NULL &&
       !NW_CUDA_CHECK(nw_fluid_deform_cuda(ev->mask_d, st->mmask_g, ev->u, g, st->stream),
                      error)) ||
      (ev->region != NULL &&
       !NW_CUDA_CHECK(
           nw_fluid_region_cuda(ev->region, st->fmask.level[st->level], ev->mask_d, g, st->stream),
           error)) ||
      !NW_CUDA_CHECK(nw_fluid_sums_cuda(&st->d_back->sums, st->d_partials, st->R, ev->Tw, ev->u,
                                        ev->region, g, st->stream),
                     error) ||
      !NW_CUDA_CHECK(cudaMemcpyAsync(st->h_back, st->d_back, sizeof(Readback),
                                     cudaMemcpyDeviceToHost, st->stream),
                     error) ||
      !NW_CUDA_CHECK(cudaStreamSynchronize(st->stream), error))
    return FALSE;
  ev->s = st->h_back->sums.s;
  ev->max_u2 = st->h_back->sums.max_u2;
  ev->E = energy(&ev->s, param(st, "lambda"));
  return TRUE;
}

/* Everything of ev that follows from ev->u (fluid_cpu.c evaluate). */
static gboolean evaluate(FluidCuda *st, Eval *ev, GError **error)
{
  return NW_CUDA_CHECK(nw_fluid_deform_grad_cuda(ev->Tw, ev->gTw, st->Tg, ev->u, st->g, st->stream),
                       error) &&
         finish_eval(st, ev, error);
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
        !NW_CUDA_CHECK(nw_fluid_sums_cuda(&st->d_back->sums, st->d_partials, st->R, st->cur.Tw,
                                          st->u_tot, st->cur.region, st->g, st->stream),
                       error) ||
        !NW_CUDA_CHECK(cudaMemcpyAsync(&st->h_back->sums, &st->d_back->sums,
                                       sizeof(NwFluidSumsCuda), cudaMemcpyDeviceToHost, st->stream),
                       error) ||
        !NW_CUDA_CHECK(cudaStreamSynchronize(st->stream), error))
      return FALSE;
    s = st->h_back->sums.s;
    max_u2 = st->h_back->sums.max_u2;
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
       !NW_CUDA_CHECK(nw_fluid_deform_cuda(st->mmask_g, st->mmask.level[st->level], st->u_prev,
                                           st->g, st->stream),
                      error)) ||
      !NW_CUDA_CHECK(cudaMemsetAsync(st->cur.u, 0, n * sizeof(float4), st->stream), error) ||
      !evaluate(st, &st->cur, error))
    return FALSE;
  st->regrids++;
  return TRUE;
}

/* ---- one iteration (fluid_cpu.c iterate) ---------------------------------------------------- */

/* Steps 1-3 on the device: f, v = G_σ * f (f and r may swap), r = v - (v·∇)u and max|r| into
 * d_back->max_r, read back with the first trial's sums. */
static gboolean direction(FluidCuda *st, GError **error)
{
  const double sigma = param(st, "sigma");
  NwGaussKernel k[3];
  for (int a = 0; a < 3; a++)
    nw_gauss_kernel(&k[a], sigma); /* sigma 0: radius 0, no pass (the CPU skips smoothing) */
  return NW_CUDA_CHECK(nw_fluid_force_cuda(st->f, st->R, st->cur.Tw, st->cur.gTw, st->cur.u,
                                           st->cur.region, (float)param(st, "lambda"), st->variant,
                                           st->g, st->stream),
                       error) &&
         (sigma <= 0.0 ||
          NW_CUDA_CHECK(nw_gauss3_float4(&st->f, &st->r, st->g, k, NULL, st->stream), error)) &&
         NW_CUDA_CHECK(nw_fluid_transport_cuda(st->r, &st->d_back->max_r, st->cur.u, st->f, st->g,
                                               st->stream),
                       error);
}

/* Steps 3-4 (fluid_cpu.c take_step): the largest step along r that lowers E; *moved FALSE
 * when none does. max|r| is known from the first trial's read-back on: when it is not
 * positive the CPU tries no step, and this trial (of u itself) is dropped. */
static gboolean take_step(FluidCuda *st, gboolean *moved, GError **error)
{
  *moved = FALSE;
  for (int h = 0; h <= NW_FLUID_MAX_HALVINGS; h++, st->delta *= 0.5) {
    if (!NW_CUDA_CHECK(nw_fluid_trial_cuda(st->trial.u, st->trial.Tw, st->trial.gTw, st->Tg,
                                           st->cur.u, st->r, st->delta, &st->d_back->max_r, st->g,
                                           st->stream),
                       error) ||
        !finish_eval(st, &st->trial, error))
      return FALSE;
    if (!(st->h_back->max_r > 0.0))
      break;
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

static gboolean iterate(FluidCuda *st, GError **error)
{
  gboolean moved = FALSE;
  st->prev_energy = st->cur.E;
  if (!direction(st, error) || !take_step(st, &moved, error))
    return FALSE;
  if (!moved)
    st->last_step = 0.0;
  st->iter_in_level++;
  st->iteration++;
  st->level_done = !moved || nw_deformable_level_done(
                                 st->iter_in_level, nw_params_get_int(st->params, "iterations"),
                                 st->prev_energy, st->cur.E, param(st, "tolerance"));
  st->finished = st->level_done && st->level == st->n_levels - 1;
  if (moved && st->cur.s.min_jac < param(st, "regrid-jacobian") && !regrid(st, error))
    return FALSE;
  return set_figures(st, error);
}

/* ---- buffers and pyramids (once per job) ---------------------------------------------------- */

static void eval_free(Eval *ev)
{
  void *bufs[] = {ev->u, ev->gTw, ev->Tw, ev->mask_d, ev->region};
  for (size_t b = 0; b < G_N_ELEMENTS(bufs); b++)
    cudaFree(bufs[b]);
  *ev = Eval{};
}

static void pyramid_free(DevPyramid *p)
{
  for (int l = 0; l < MAX_LEVELS; l++)
    cudaFree(p->level[l]);
  *p = DevPyramid{};
}

static gboolean alloc_eval(Eval *ev, size_t n, gboolean moving_mask, gboolean masks, GError **error)
{
  return NW_CUDA_CHECK(cudaMalloc(&ev->u, n * sizeof(float4)), error) &&
         NW_CUDA_CHECK(cudaMalloc(&ev->gTw, n * sizeof(float4)), error) &&
         NW_CUDA_CHECK(cudaMalloc(&ev->Tw, n * sizeof(float)), error) &&
         (!moving_mask || NW_CUDA_CHECK(cudaMalloc(&ev->mask_d, n * sizeof(float)), error)) &&
         (!masks || NW_CUDA_CHECK(cudaMalloc(&ev->region, n * sizeof(float)), error));
}

/* Voxels of a pyramid of `levels` levels of v (its finest level v's size). */
static size_t pyramid_voxels(const NwVolume *v, int levels)
{
  const int n_levels = nw_pyramid_levels(v, levels);
  size_t sum = 0;
  int d[3] = {v->nx, v->ny, v->nz};
  for (int l = 0; l < n_levels; l++) {
    sum += (size_t)d[0] * d[1] * d[2];
    for (int a = 0; a < 3; a++)
      d[a] = d[a] > 1 ? (d[a] + 1) / 2 : 1;
  }
  return sum;
}

/* Bytes of device memory a job needs: the buffers above for the finest grid of n voxels
 * (float: R, T0, Tg, W and two Tw, with masks two regions, with a moving mask two mask_d and
 * mmask_g; float4: two u, two gTw, f, r, u_prev, u_tot) and the pyramids. */
static size_t job_bytes(const NwMethodInputs *in, int levels)
{
  const size_t n = nw_volume_n_voxels(in->fixed);
  const int images = 2 + (in->fixed_mask != NULL) + (in->moving_mask != NULL);
  const gboolean masks = in->fixed_mask != NULL || in->moving_mask != NULL;
  const int floats = 6 + (masks ? 2 : 0) + (in->moving_mask != NULL ? 3 : 0), float4s = 8;
  return n * (floats * sizeof(float) + float4s * sizeof(float4)) +
         images * pyramid_voxels(in->fixed, levels) * sizeof(float);
}

static gboolean alloc_buffers(FluidCuda *st, const NwMethodInputs *in, GError **error)
{
  const size_t n = nw_volume_n_voxels(in->fixed), f4 = n * sizeof(float4);
  const gboolean mm = in->moving_mask != NULL, masks = mm || in->fixed_mask != NULL;
  return NW_CUDA_CHECK(cudaStreamCreateWithFlags(&st->stream, cudaStreamNonBlocking), error) &&
         NW_CUDA_CHECK(cudaMalloc(&st->d_partials, NW_FLUID_SUM_BLOCKS * sizeof(NwFluidSumsCuda)),
                       error) &&
         NW_CUDA_CHECK(cudaMalloc(&st->d_back, sizeof(Readback)), error) &&
         NW_CUDA_CHECK(cudaMallocHost(&st->h_back, sizeof(Readback)), error) &&
         alloc_eval(&st->cur, n, mm, masks, error) && alloc_eval(&st->trial, n, mm, masks, error) &&
         NW_CUDA_CHECK(cudaMalloc(&st->f, f4), error) &&
         NW_CUDA_CHECK(cudaMalloc(&st->r, f4), error) &&
         NW_CUDA_CHECK(cudaMalloc(&st->u_prev, f4), error) &&
         NW_CUDA_CHECK(cudaMalloc(&st->u_tot, f4), error) &&
         NW_CUDA_CHECK(cudaMalloc(&st->R, n * sizeof(float)), error) &&
         NW_CUDA_CHECK(cudaMalloc(&st->T0, n * sizeof(float)), error) &&
         NW_CUDA_CHECK(cudaMalloc(&st->Tg, n * sizeof(float)), error) &&
         NW_CUDA_CHECK(cudaMalloc(&st->W, n * sizeof(float)), error) &&
         (!mm || NW_CUDA_CHECK(cudaMalloc(&st->mmask_g, n * sizeof(float)), error));
}

/* The pyramid of the host image v on the device: v uploaded as the finest level, each coarser
 * one nw_downsample2_cuda of the next finer (R and T0 as its scratch, not yet in use). */
static gboolean build_pyramid(FluidCuda *st, DevPyramid *p, const NwVolume *v, GError **error)
{
  const int last = st->n_levels - 1;
  const size_t n = nw_volume_n_voxels(v);
  if (!NW_CUDA_CHECK(cudaMalloc(&p->level[last], n * sizeof(float)), error) ||
      !NW_CUDA_CHECK(cudaMemcpyAsync(p->level[last], v->data, n * sizeof(float),
                                     cudaMemcpyHostToDevice, st->stream),
                     error))
    return FALSE;
  float *const scratch[2] = {st->R, st->T0};
  for (int l = last - 1; l >= 0; l--) {
    const NwVolume *fine = level_like(st, l + 1);
    if (!NW_CUDA_CHECK(cudaMalloc(&p->level[l], nw_volume_n_voxels(st->coarse[l]) * sizeof(float)),
                       error) ||
        !NW_CUDA_CHECK(nw_downsample2_cuda(p->level[l], p->level[l + 1], fine->nx, fine->ny,
                                           fine->nz, scratch, st->stream),
                       error))
      return FALSE;
  }
  return TRUE;
}

/* The levels' grids (nw_pyramid_new's count and nw_downsample2's sizes and affines), then
 * the device pyramids of the inputs, the moving image histogram-matched first on request. */
static gboolean build_pyramids(FluidCuda *st, const NwMethodInputs *in, GError **error)
{
  st->n_levels = nw_pyramid_levels(in->fixed, nw_params_get_int(st->params, "levels"));
  for (int l = st->n_levels - 2; l >= 0; l--)
    if ((st->coarse[l] = nw_downsample2_new(level_like(st, l + 1), error)) == NULL)
      return FALSE;
  g_autoptr(NwVolume) matched = NULL;
  if (nw_params_get(st->params, "histogram-match") != 0.0 &&
      (matched = nw_histogram_match(in->moving, in->fixed, 1024, error)) == NULL)
    return FALSE;
  return build_pyramid(st, &st->F, in->fixed, error) &&
         build_pyramid(st, &st->M, matched != NULL ? matched : in->moving, error) &&
         (in->fixed_mask == NULL || build_pyramid(st, &st->fmask, in->fixed_mask, error)) &&
         (in->moving_mask == NULL || build_pyramid(st, &st->mmask, in->moving_mask, error)) &&
         /* the uploads read pageable memory the caller owns, matched is freed next */
         NW_CUDA_CHECK(cudaStreamSynchronize(st->stream), error);
}

/* ---- levels -------------------------------------------------------------------------------- */

/* Statistics of the device image d on the current level's grid, through a host copy. */
static gboolean device_stats(FluidCuda *st, const float *d, NwVolumeStats *vs, GError **error)
{
  g_autoptr(NwVolume) h = nw_image_download_new(d, level_like(st, st->level),
                                                      stage_of(st, level_like(st, st->level)), st->stream, error);
  if (h == NULL)
    return FALSE;
  nw_volume_stats(h, vs);
  return TRUE;
}

/* The level's image I (device) as the energy sees it into out (fluid_cpu.c energy_image):
 * ssd: I times scale; lcc: locally normalised with demons' LCC kernels (the twins of
 * nw_demons_lcc_fixed_cpu) and the float shift the CPU takes, f and r as scratch. */
static gboolean energy_image(FluidCuda *st, float *out, const float *I, GError **error)
{
  if ((int)param(st, "similarity") != NW_FLUID_SIM_LCC)
    return scale_into(st, out, I, st->scale, error);
  NwVolumeStats vs;
  if (!device_stats(st, I, &vs, error))
    return FALSE;
  const double range = (double)vs.max - vs.min;
  NwDemonsLevelConst lc;
  lc.shift = (float)vs.mean;
  lc.scale2 = range > 0 ? range * range : 1.0;
  lc.eps = NW_DEMONS_LCC_EPS * lc.scale2;
  NwGaussKernel k[3];
  for (int a = 0; a < 3; a++)
    nw_gauss_kernel(&k[a], param(st, "lcc-sigma"));
  return NW_CUDA_CHECK(nw_lcc_fixed_pack(st->f, I, lc.shift, st->g, st->stream), error) &&
         NW_CUDA_CHECK(nw_gauss3_float4(&st->f, &st->r, st->g, k, NULL, st->stream), error) &&
         NW_CUDA_CHECK(nw_lcc_fixed_post(st->f, I, lc, st->g, st->stream), error) &&
         (x_of_kernel<<<nw_blocks_for(st->g.n(), THREADS), THREADS, 0, st->stream>>>(out, st->f,
                                                                                     st->g.n()),
          NW_CUDA_CHECK(nw_cuda_launched(st->stream), error));
}

/* lcc: both normalised images divided by the range of the fixed one (fluid_cpu.c
 * lcc_to_unit_range), the range from a host copy of R (once per level). */
static gboolean lcc_to_unit_range(FluidCuda *st, GError **error)
{
  NwVolumeStats rs;
  if (!device_stats(st, st->R, &rs, error))
    return FALSE;
  const double k = rs.max > rs.min ? 1.0 / ((double)rs.max - rs.min) : 1.0;
  return scale_into(st, st->R, st->R, k, error) && scale_into(st, st->T0, st->T0, k, error);
}

/* The energy's images of level l: R, T0 and Tg = T0 after the division (fluid_cpu.c
 * enter_level), the moving mask since the last regridding = the level's. */
static gboolean level_images(FluidCuda *st, int l, GError **error)
{
  const size_t n = (size_t)st->g.n();
  return energy_image(st, st->R, st->F.level[l], error) &&
         energy_image(st, st->T0, st->M.level[l], error) &&
         ((int)param(st, "similarity") != NW_FLUID_SIM_LCC || lcc_to_unit_range(st, error)) &&
         NW_CUDA_CHECK(cudaMemcpyAsync(st->Tg, st->T0, n * sizeof(float), cudaMemcpyDeviceToDevice,
                                       st->stream),
                       error) &&
         (st->mmask_g == NULL ||
          NW_CUDA_CHECK(cudaMemcpyAsync(st->mmask_g, st->mmask.level[l], n * sizeof(float),
                                        cudaMemcpyDeviceToDevice, st->stream),
                        error));
}

/* The map carried onto level l's grid into cur.u (nw_deformable_carry_field, then zero on
 * the border): the whole map of the level before resampled on the device, or 0. */
static gboolean carry_map(FluidCuda *st, int l, GError **error)
{
  const NwGrid g = grid_of(level_like(st, l));
  if (l == 0)
    return NW_CUDA_CHECK(cudaMemsetAsync(st->cur.u, 0, (size_t)g.n() * sizeof(float4), st->stream),
                         error);
  return whole_map(st, st->u_tot, 1.0f, error) &&
         NW_CUDA_CHECK(nw_fluid_resize_field_cuda(st->cur.u, g, st->u_tot, st->g, st->stream),
                       error) &&
         NW_CUDA_CHECK(nw_fluid_zero_border_cuda(st->cur.u, g, st->stream), error);
}

/* Enter level l (fluid_cpu.c enter_level). */
static gboolean enter_level(FluidCuda *st, int l, GError **error)
{
  const gint64 t0 = g_get_monotonic_time();
  if (!carry_map(st, l, error) || !NW_CUDA_CHECK(cudaStreamSynchronize(st->stream), error))
    return FALSE;
  const double carry_ms = ms_since(t0);
  st->level = l;
  st->g = grid_of(level_like(st, l));
  st->have_prev = FALSE;
  const gint64 t1 = g_get_monotonic_time();
  if (!level_images(st, l, error) || !NW_CUDA_CHECK(cudaStreamSynchronize(st->stream), error))
    return FALSE;
  const double images_ms = ms_since(t1);
  const gint64 t2 = g_get_monotonic_time();
  if (!evaluate(st, &st->cur, error))
    return FALSE;
  if (st->cur.s.min_jac < param(st, "regrid-jacobian") && !regrid(st, error))
    return FALSE;
  st->delta = param(st, "max-step");
  st->iter_in_level = 0;
  st->level_done = FALSE;
  st->prev_energy = st->cur.E;
  if (!set_figures(st, error))
    return FALSE;
  g_debug("fluid cuda: level %d (%d x %d x %d) entered in %.2f ms: map carried %.2f ms, energy "
          "images %.2f ms, first evaluation %.2f ms",
          l, st->g.nx, st->g.ny, st->g.nz, ms_since(t0), carry_ms, images_ms, ms_since(t2));
  return TRUE;
}

/* ---- the method interface ------------------------------------------------------------------ */

static void fluid_destroy(void *state)
{
  FluidCuda *st = (FluidCuda *)state;
  if (st == NULL)
    return;
  if (st->stream != NULL)
    cudaStreamSynchronize(st->stream);
  eval_free(&st->cur);
  eval_free(&st->trial);
  void *bufs[] = {st->R, st->T0,     st->Tg,    st->W,          st->mmask_g, st->f,
                  st->r, st->u_prev, st->u_tot, st->d_partials, st->d_back};
  for (size_t b = 0; b < G_N_ELEMENTS(bufs); b++)
    cudaFree(bufs[b]);
  DevPyramid *pyrs[] = {&st->F, &st->M, &st->fmask, &st->mmask};
  for (size_t p = 0; p < G_N_ELEMENTS(pyrs); p++)
    pyramid_free(pyrs[p]);
  cudaFreeHost(st->h_back);
  nw_stage_free(st->stage);
  if (st->stream != NULL)
    cudaStreamDestroy(st->stream);
  for (int l = 0; l < MAX_LEVELS; l++)
    g_clear_pointer(&st->coarse[l], nw_volume_free);
  g_clear_pointer(&st->params, nw_params_free);
  g_free(st);
}

static void *fluid_create(const NwMethodInputs *in, const NwParams *p, GError **error)
{
  const gint64 t0 = g_get_monotonic_time();
  const int levels = nw_params_get_int(p, "levels");
  if (!nw_deformable_check_inputs(in, "fluid", error) ||
      !nw_field_job_fits("fluid", in->fixed, job_bytes(in, levels), error))
    return NULL;
  const double checks_ms = ms_since(t0);
  FluidCuda *st = g_new0(FluidCuda, 1);
  st->params = nw_params_copy(p);
  st->fixed_full = in->fixed;
  st->moving_full = in->moving;
  st->moving_labels = in->moving_labels;
  st->variant = nw_fluid_force_variant_default();
  const gint64 t1 = g_get_monotonic_time();
  st->scale = nw_fluid_intensity_scale(in->fixed);
  const double scale_ms = ms_since(t1);
  const gint64 t2 = g_get_monotonic_time();
  gboolean ok = alloc_buffers(st, in, error);
  const double alloc_ms = ms_since(t2);
  const gint64 t3 = g_get_monotonic_time();
  ok = ok && build_pyramids(st, in, error);
  const double pyr_ms = ms_since(t3);
  if (!ok || !enter_level(st, 0, error)) {
    fluid_destroy(st);
    return NULL;
  }
  g_debug("fluid cuda: create %.2f ms: input checks %.2f ms, intensity scale %.2f ms, buffers "
          "%.2f ms, uploads and pyramids %.2f ms (%d levels)",
          ms_since(t0), checks_ms, scale_ms, alloc_ms, pyr_ms, st->n_levels);
  return st;
}

static void fill_report(const FluidCuda *st, NwIterationReport *r)
{
  nw_fluid_fill_report(r, st->params, st->iteration, st->level, st->iter_in_level, st->n_levels,
                       st->finished, &st->fig, st->last_step, st->regrids);
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
         NW_CUDA_CHECK(
             nw_warp_cuda(st->W, st->M.level[st->level], st->u_tot, false, st->g, st->stream),
             error);
}

static gboolean fluid_publish_frame(void *state, NwFrame *frame, GError **error)
{
  FluidCuda *st = (FluidCuda *)state;
  const NwVolume *like = level_like(st, st->level);
  frame->iteration = st->iteration;
  return frame_on_device(st, error) &&
         (frame->image = nw_image_download_new(st->W, like, stage_of(st, like), st->stream, error)) != NULL &&
         (frame->field = nw_field_download_new(st->u_tot, st->f, like, stage_of(st, like), st->stream, error)) != NULL;
}

/* Live display: W and s of the current level, device-to-device into the front on the job's
 * stream (the front's copies run before anything later on it overwrites u_tot or W). */
static gboolean fluid_publish_device_frame(void *state, void *front, GError **error)
{
  FluidCuda *st = (FluidCuda *)state;
  return frame_on_device(st, error) &&
         nw_live_front_publish((NwLiveFront *)front, level_like(st, st->level), st->W, st->u_tot,
                               st->iteration, st->stream, error);
}

/* The forward field s = -u_tot at full resolution (fluid_cpu.c fluid_result): at the last
 * level in u_tot, else carried up from u_tot into f; *staging gets a full-size buffer that s
 * is not, for its download. */
static float4 *full_forward(FluidCuda *st, void **staging, GError **error)
{
  if (!whole_map(st, st->u_tot, -1.0f, error))
    return NULL;
  if (st->level == st->n_levels - 1) {
    *staging = st->f;
    return st->u_tot;
  }
  *staging = st->r;
  return NW_CUDA_CHECK(nw_fluid_resize_field_cuda(st->f, grid_of(st->fixed_full), st->u_tot, st->g,
                                                  st->stream),
                       error)
             ? st->f
             : NULL;
}

/* An image warped through s at full resolution into W and downloaded: the moving image as
 * loaded (trilinear) or the labels (nearest). A host input goes up through trial.Tw, a
 * full-size buffer that holds nothing between iterations. */
static NwVolume *warp_full(FluidCuda *st, const float4 *s, const NwVolume *host, const float *dev,
                           gboolean nearest, GError **error)
{
  const NwVolume *full = st->fixed_full;
  const NwGrid gf = grid_of(full);
  if (dev == NULL && !NW_CUDA_CHECK(cudaMemcpyAsync(st->trial.Tw, host->data,
                                                    nw_volume_n_voxels(full) * sizeof(float),
                                                    cudaMemcpyHostToDevice, st->stream),
                                    error))
    return NULL;
  return NW_CUDA_CHECK(
             nw_warp_cuda(st->W, dev != NULL ? dev : st->trial.Tw, s, nearest, gf, st->stream),
             error)
             ? nw_image_download_new(st->W, full, stage_of(st, full), st->stream, error)
             : NULL;
}

/* The results in the job's own buffers (they hold nothing an iteration needs: u_tot, f or r,
 * W and trial.Tw are scratch between iterations), so that a result allocates no device
 * memory and the job may go on afterwards. */
static NwMethodResult *fluid_result(void *state, GError **error)
{
  FluidCuda *st = (FluidCuda *)state;
  const NwVolume *full = st->fixed_full;
  const gint64 t0 = g_get_monotonic_time();
  void *staging = NULL;
  const float4 *s = full_forward(st, &staging, error);
  NwVolume *fwd = s != NULL ? nw_field_download_new(s, staging, full, stage_of(st, full), st->stream, error) : NULL;
  const double fwd_ms = ms_since(t0);
  /* The original moving intensities, also when they were histogram-matched for the run:
   * the finest level of M is the moving image itself unless it was matched. */
  const gboolean matched = nw_params_get(st->params, "histogram-match") != 0.0;
  const gint64 t1 = g_get_monotonic_time();
  NwVolume *warped = fwd != NULL
                         ? warp_full(st, s, st->moving_full,
                                     matched ? NULL : st->M.level[st->n_levels - 1], FALSE, error)
                         : NULL;
  const double warp_ms = ms_since(t1);
  const gint64 t2 = g_get_monotonic_time();
  NwVolume *jac =
      warped != NULL && NW_CUDA_CHECK(nw_jacobian_cuda(st->W, s, grid_of(full), st->stream), error)
          ? nw_image_download_new(st->W, full, stage_of(st, full), st->stream, error)
          : NULL;
  const double jac_ms = ms_since(t2);
  const gint64 t3 = g_get_monotonic_time();
  NwVolume *labels = jac != NULL && st->moving_labels != NULL
                         ? warp_full(st, s, st->moving_labels, NULL, TRUE, error)
                         : NULL;
  if (jac == NULL || (st->moving_labels != NULL && labels == NULL)) {
    NwVolume **all[] = {&fwd, &warped, &jac, &labels};
    for (size_t q = 0; q < G_N_ELEMENTS(all); q++)
      g_clear_pointer(all[q], nw_volume_free);
    return NULL;
  }
  g_debug("fluid cuda: result %.2f ms: forward field %.2f ms (%s), warped %.2f ms, jacobian "
          "%.2f ms, labels %.2f ms",
          ms_since(t0), fwd_ms, st->level == st->n_levels - 1 ? "last level" : "carried up",
          warp_ms, jac_ms, ms_since(t3));
  nw_volume_set_affine(fwd, full->vox_to_ras);
  g_autoptr(NwMethodResult) r = nw_method_result_new();
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
