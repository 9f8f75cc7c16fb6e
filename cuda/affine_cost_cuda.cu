/* affine_cost_cuda.cu — the CUDA twin of the affine cost (core/affine_cost.h; CPU reference
 * core/cpu/affine_cost_cpu.c, sampling core/sampler.c) and the CUDA method "affine" (the
 * shared job of affine_method.h over this cost). CUDA back end; every call runs on the job's
 * worker thread, which owns the stream and the device buffers.
 *
 * set_level uploads the level's fixed and moving images and masks (once per pyramid level).
 * An evaluation is two launches and one copy, with no allocation:
 *   1. cost_kernel: one thread per fixed voxel (grid-stride) maps the voxel, tests the masks
 *      and the domain, samples the moving image, and adds to six double sums; with mi also
 *      to the joint histogram, kept per block in shared memory when it fits (bins <= 64) and
 *      then added into the global one. Each block writes its six sums to partials.
 *   2. finish_kernel (one block): the partials summed in a fixed order, the histogram turned
 *      into doubles, both written to one small buffer that is copied to pinned host memory.
 *
 * Parity with the CPU (1e-4 relative on the cost, issue 11): positions and interpolation
 * weights are computed in double as sampler.c does, the map without fused multiply-adds (so
 * the domain and nearest decisions are the CPU's, voxel for voxel), and the sample rounded
 * to float as the CPU's is. Histogram masses are fixed-point integers (2^-24 of a count):
 * integer atomics make the histogram exact for plain bins and the same on every run,
 * whatever order the blocks add in; the sums' order is fixed too, so an evaluation is
 * deterministic and the simplex takes the same path on every run. */
#include <cuda_runtime.h>

#include "affine_method.h"
#include "cuda_check.h"
#include "interp_weights.h"
#include "nw_affine_cost_cuda.h"
#include "nw_error.h"

namespace {

constexpr int kBlock = 256;          /* threads per block; the reductions assume 8 full warps */
constexpr int kWarps = kBlock / 32;
constexpr int kSums = 6;             /* n, sf, sm, sff, smm, sfm (NwAffineSums) */
constexpr double kHistOne = 16777216.0; /* 2^24: one count in the fixed-point histogram */
constexpr size_t kSharedHistMax = 48 * 1024; /* the default dynamic shared-memory limit */

/* What the cost kernel reads, by value: the level's images, their sizes, the statistics of
 * affine_cost.h, the map and where the results go. Masks are NULL when absent. */
struct EvalArgs {
  double map[12]; /* fixed voxel -> moving voxel, 3x4 row-major */
  const float *F, *M, *fmask, *mmask;
  int fnx, fny, fnz, mnx, mny, mnz;
  unsigned int n; /* fixed voxels (<= NW_MAX_VOXELS < 2^31) */
  int sampler;    /* NwSampler */
  int mi, parzen, bins, shared_hist;
  double fixed_shift, moving_shift, fixed_lo, fixed_hi, moving_lo, moving_hi;
  double *partials;               /* gridDim.x x kSums */
  unsigned long long *hist;       /* bins², fixed-point, zeroed before the launch (mi) */
};

/* ---- sampling: sampler.c, line for line ------------------------------------------------- */

__device__ inline bool in_domain(double x, int n)
{
  return x >= -0.5 && x <= (double)n - 0.5;
}

__device__ inline int clampi(int i, int n)
{
  return i < 0 ? 0 : (i >= n ? n - 1 : i);
}

__device__ inline size_t vidx(int i, int j, int k, int nx, int ny)
{
  return ((size_t)k * (size_t)ny + (size_t)j) * (size_t)nx + (size_t)i;
}

__device__ inline float sample_nearest(const float *d, int nx, int ny, int nz, double x, double y,
                                       double z)
{
  const int i = clampi((int)floor(x + 0.5), nx), j = clampi((int)floor(y + 0.5), ny);
  const int k = clampi((int)floor(z + 0.5), nz);
  return d[vidx(i, j, k, nx, ny)];
}

__device__ inline void linear_axis(double x, int n, size_t *i0, size_t *i1, double *u)
{
  const double f = floor(x);
  *u = x - f;
  *i0 = (size_t)clampi((int)f, n);
  *i1 = (size_t)clampi((int)f + 1, n);
}

__device__ float sample_linear(const float *d, int nx, int ny, int nz, double x, double y, double z)
{
  size_t x0, x1, y0, y1, z0, z1;
  double u, w, t;
  linear_axis(x, nx, &x0, &x1, &u);
  linear_axis(y, ny, &y0, &y1, &w);
  linear_axis(z, nz, &z0, &z1, &t);
  if (nz == 1)
    t = 0.0; /* a flat axis: its one voxel */
  const size_t sy = (size_t)nx, sz = (size_t)nx * (size_t)ny;
  const double c00 = d[z0 * sz + y0 * sy + x0] * (1 - u) + d[z0 * sz + y0 * sy + x1] * u;
  const double c10 = d[z0 * sz + y1 * sy + x0] * (1 - u) + d[z0 * sz + y1 * sy + x1] * u;
  const double c0 = c00 * (1 - w) + c10 * w;
  if (t == 0.0)
    return (float)c0;
  const double c01 = d[z1 * sz + y0 * sy + x0] * (1 - u) + d[z1 * sz + y0 * sy + x1] * u;
  const double c11 = d[z1 * sz + y1 * sy + x0] * (1 - u) + d[z1 * sz + y1 * sy + x1] * u;
  return (float)(c0 * (1 - t) + (c01 * (1 - w) + c11 * w) * t);
}

struct Taps {
  int idx[4];
  double w[4];
  int n;
};

/* Four clamped neighbours with Keys weights, or the one voxel of a flat axis. */
__device__ inline void taps(double x, int n, Taps *t)
{
  if (n == 1) {
    t->n = 1;
    t->idx[0] = 0;
    t->w[0] = 1.0;
    return;
  }
  const double f = floor(x), u = x - f;
  t->n = 4;
  for (int q = 0; q < 4; q++) {
    t->idx[q] = clampi((int)f - 1 + q, n);
    t->w[q] = nw_keys_weight(u - (double)(q - 1));
  }
}

__device__ float sample_cubic(const float *d, int nx, int ny, int nz, double x, double y, double z)
{
  Taps tx, ty, tz;
  taps(x, nx, &tx);
  taps(y, ny, &ty);
  taps(z, nz, &tz);
  double sum = 0.0;
  for (int c = 0; c < tz.n; c++)
    for (int b = 0; b < ty.n; b++) {
      const float *row = d + vidx(0, ty.idx[b], tz.idx[c], nx, ny);
      double r = 0.0;
      for (int a = 0; a < tx.n; a++)
        r += tx.w[a] * (double)row[tx.idx[a]];
      sum += tz.w[c] * ty.w[b] * r;
    }
  return (float)sum;
}

/* nw_sampler_sample: false outside the domain (or at a NaN position). */
__device__ bool sample(const EvalArgs &a, double x, double y, double z, float *out)
{
  if (!in_domain(x, a.mnx) || !in_domain(y, a.mny) || !in_domain(z, a.mnz))
    return false;
  if (a.sampler == NW_SAMPLER_NEAREST)
    *out = sample_nearest(a.M, a.mnx, a.mny, a.mnz, x, y, z);
  else if (a.sampler == NW_SAMPLER_LINEAR)
    *out = sample_linear(a.M, a.mnx, a.mny, a.mnz, x, y, z);
  else
    *out = sample_cubic(a.M, a.mnx, a.mny, a.mnz, x, y, z);
  return true;
}

/* One row of the map, ((m0 i + m1 j) + m2 k) + m3 as the CPU's C evaluates it: the explicit
 * roundings keep nvcc from fusing into FMAs, so positions are the CPU's bit for bit. */
__device__ inline double map_row(const double *m, double i, double j, double k)
{
  return __dadd_rn(__dadd_rn(__dadd_rn(__dmul_rn(m[0], i), __dmul_rn(m[1], j)), __dmul_rn(m[2], k)),
                   m[3]);
}

/* ---- the MI histogram (affine_cost.c nw_affine_bin, nw_affine_parzen) ------------------- */

__device__ inline int bin_of(double v, double lo, double hi, int bins)
{
  const int b = (int)floor((double)bins * (v - lo) / (hi - lo));
  return clampi(b, bins);
}

/* Adds the pair (f, m) to hist (shared or global; bins², fixed bin major). */
__device__ void add_joint(const EvalArgs &a, unsigned long long *hist, double f, double m)
{
  const int bins = a.bins;
  const int bf = bin_of(f, a.fixed_lo, a.fixed_hi, bins);
  if (!a.parzen) {
    atomicAdd(&hist[bf * bins + bin_of(m, a.moving_lo, a.moving_hi, bins)],
              (unsigned long long)kHistOne);
    return;
  }
  double u = (double)(bins - 1) * (m - a.moving_lo) / (a.moving_hi - a.moving_lo);
  u = fmin(fmax(u, 0.0), (double)(bins - 1));
  const int fl = (int)floor(u);
  for (int q = 0; q < 4; q++) {
    const double w = nw_bspline3_weight(u - (double)(fl - 1 + q));
    /* the CPU adds zero weights too; adding nothing is the same sum */
    const unsigned long long fixed_point = __double2ull_rn(w * kHistOne);
    if (fixed_point != 0)
      atomicAdd(&hist[bf * bins + clampi(fl - 1 + q, bins)], fixed_point);
  }
}

/* ---- reductions ------------------------------------------------------------------------- */

__device__ inline double warp_sum(double v)
{
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}

/* Sums v[kSums] over the block (every thread calls it); threads q < kSums write sum q to
 * out[q]. The warps' sums are added in warp order: the same result on every run. */
__device__ void block_sums(const double v[kSums], double *out)
{
  __shared__ double red[kSums][kWarps];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int q = 0; q < kSums; q++) {
    const double s = warp_sum(v[q]);
    if (lane == 0)
      red[q][warp] = s;
  }
  __syncthreads();
  if (threadIdx.x < kSums) {
    double s = 0.0;
    for (int w = 0; w < kWarps; w++)
      s += red[threadIdx.x][w];
    out[threadIdx.x] = s;
  }
}

/* ---- the kernels ------------------------------------------------------------------------ */

__global__ void __launch_bounds__(kBlock) cost_kernel(EvalArgs a)
{
  extern __shared__ unsigned long long shared_hist[]; /* bins² when a.shared_hist */
  const int hist_len = a.mi ? a.bins * a.bins : 0;
  if (a.shared_hist) {
    for (int b = threadIdx.x; b < hist_len; b += blockDim.x)
      shared_hist[b] = 0;
    __syncthreads();
  }
  unsigned long long *hist = a.shared_hist ? shared_hist : a.hist;
  double s[kSums] = {0, 0, 0, 0, 0, 0};
  const unsigned int stride = gridDim.x * blockDim.x;
  /* e < 2^31 and stride < 2^31, so e + stride never wraps */
  for (unsigned int e = blockIdx.x * blockDim.x + threadIdx.x; e < a.n; e += stride) {
    if (a.fmask != nullptr && !(a.fmask[e] >= 0.5f))
      continue;
    const unsigned int row = e / (unsigned int)a.fnx;
    const double i = (double)(e - row * (unsigned int)a.fnx);
    const double j = (double)(row % (unsigned int)a.fny), k = (double)(row / (unsigned int)a.fny);
    const double x = map_row(a.map, i, j, k), y = map_row(a.map + 4, i, j, k),
                 z = map_row(a.map + 8, i, j, k);
    float mv;
    if (!sample(a, x, y, z, &mv))
      continue;
    /* the moving mask, nearest (same grid as M, so the domain test above holds for it) */
    if (a.mmask != nullptr && !(sample_nearest(a.mmask, a.mnx, a.mny, a.mnz, x, y, z) >= 0.5f))
      continue;
    const double f = (double)a.F[e], m = (double)mv;
    if (a.mi)
      add_joint(a, hist, f, m);
    const double fs = f - a.fixed_shift, ms = m - a.moving_shift;
    s[0] += 1.0;
    s[1] += fs;
    s[2] += ms;
    s[3] += fs * fs;
    s[4] += ms * ms;
    s[5] += fs * ms;
  }
  if (a.shared_hist) {
    __syncthreads(); /* every thread's additions are in before the block's are flushed */
    for (int b = threadIdx.x; b < hist_len; b += blockDim.x)
      if (shared_hist[b] != 0)
        atomicAdd(&a.hist[b], shared_hist[b]);
  }
  block_sums(s, a.partials + (size_t)blockIdx.x * kSums);
}

/* One block: out[0..5] = the partials of n_blocks blocks summed, out[6..] = hist as counts. */
__global__ void __launch_bounds__(kBlock)
    finish_kernel(double *out, const double *partials, int n_blocks,
                  const unsigned long long *hist, int hist_len)
{
  double s[kSums];
  for (int q = 0; q < kSums; q++) {
    s[q] = 0.0;
    for (int b = threadIdx.x; b < n_blocks; b += blockDim.x)
      s[q] += partials[(size_t)b * kSums + q];
  }
  block_sums(s, out);
  for (int b = threadIdx.x; b < hist_len; b += blockDim.x)
    out[kSums + b] = (double)hist[b] / kHistOne;
}

/* ---- the back end ----------------------------------------------------------------------- */

struct CudaCost {
  NwAffineCostSpec spec;
  NwAffineLevel level;
  cudaStream_t stream;
  bool have_stream;
  int max_blocks;       /* resident blocks of cost_kernel on the whole device */
  size_t shared_bytes;  /* cost_kernel's dynamic shared memory (0: global histogram) */
  int hist_len;         /* bins² for mi, else 0 */
  float *F, *M, *fmask, *mmask; /* the current level */
  double *partials;     /* max_blocks x kSums */
  unsigned long long *hist;
  double *d_out, *h_out; /* kSums + hist_len: device, and its pinned host copy */
};

void free_level(CudaCost *c)
{
  cudaFree(c->F);
  cudaFree(c->M);
  cudaFree(c->fmask);
  cudaFree(c->mmask);
  c->F = c->M = c->fmask = c->mmask = nullptr;
}

void cuda_destroy(void *impl)
{
  CudaCost *c = (CudaCost *)impl;
  if (c == nullptr)
    return;
  if (c->have_stream)
    cudaStreamSynchronize(c->stream); /* nothing may still use what is freed below */
  free_level(c);
  cudaFree(c->partials);
  cudaFree(c->hist);
  cudaFree(c->d_out);
  cudaFreeHost(c->h_out);
  if (c->have_stream)
    cudaStreamDestroy(c->stream);
  g_free(c);
}

void *cuda_create(const NwAffineCostSpec *spec, GError **error)
{
  CudaCost *c = g_new0(CudaCost, 1);
  c->spec = *spec;
  const bool mi = spec->metric == NW_METRIC_MI;
  c->hist_len = mi ? spec->bins * spec->bins : 0;
  const size_t hist_bytes = (size_t)c->hist_len * sizeof(unsigned long long);
  c->shared_bytes = mi && hist_bytes <= kSharedHistMax ? hist_bytes : 0;
  int device = 0, sms = 0, per_sm = 0;
  const size_t out_bytes = (kSums + (size_t)c->hist_len) * sizeof(double);
  gboolean ok = NW_CUDA_CHECK(cudaGetDevice(&device), error) &&
                NW_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
                              error) &&
                NW_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                                  &per_sm, cost_kernel, kBlock, c->shared_bytes),
                              error) &&
                NW_CUDA_CHECK(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking), error);
  c->have_stream = ok;
  c->max_blocks = MAX(1, sms * per_sm);
  ok = ok &&
       NW_CUDA_CHECK(cudaMalloc(&c->partials, (size_t)c->max_blocks * kSums * sizeof(double)),
                     error) &&
       NW_CUDA_CHECK(cudaMalloc(&c->d_out, out_bytes), error) &&
       NW_CUDA_CHECK(cudaMallocHost(&c->h_out, out_bytes), error) &&
       (!mi || NW_CUDA_CHECK(cudaMalloc(&c->hist, hist_bytes), error));
  if (!ok) {
    cuda_destroy(c);
    return nullptr;
  }
  return c;
}

/* Device copy of v (scalar) into *dst, allocated here; NULL v leaves *dst NULL. */
gboolean upload(CudaCost *c, float **dst, const NwVolume *v, GError **error)
{
  if (v == nullptr)
    return TRUE;
  const size_t bytes = nw_volume_n_voxels(v) * sizeof(float);
  return NW_CUDA_CHECK(cudaMalloc(dst, bytes), error) &&
         NW_CUDA_CHECK(cudaMemcpyAsync(*dst, v->data, bytes, cudaMemcpyHostToDevice, c->stream),
                       error);
}

gboolean same_dims(const NwVolume *a, const NwVolume *b)
{
  return a->nx == b->nx && a->ny == b->ny && a->nz == b->nz;
}

/* Refuses what the kernel does not handle instead of computing something else. */
gboolean check_level(const NwAffineLevel *l, GError **error)
{
  const NwVolume *v[4] = {l->fixed, l->moving, l->fixed_mask, l->moving_mask};
  for (int i = 0; i < 4; i++)
    if (v[i] != nullptr && v[i]->nc != 1) {
      g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                  "affine (cuda): images and masks must be scalar (one has %d components)",
                  v[i]->nc);
      return FALSE;
    }
  if ((l->fixed_mask != nullptr && !same_dims(l->fixed_mask, l->fixed)) ||
      (l->moving_mask != nullptr && !same_dims(l->moving_mask, l->moving))) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "affine (cuda): a mask is not on its image's grid");
    return FALSE;
  }
  return TRUE;
}

gboolean cuda_set_level(void *impl, const NwAffineLevel *level, GError **error)
{
  CudaCost *c = (CudaCost *)impl;
  if (!check_level(level, error))
    return FALSE;
  /* the previous level's copies may still be in flight on the stream */
  if (!NW_CUDA_CHECK(cudaStreamSynchronize(c->stream), error))
    return FALSE;
  free_level(c);
  c->level = *level;
  const size_t bytes = (nw_volume_n_voxels(level->fixed) * (level->fixed_mask ? 2 : 1) +
                        nw_volume_n_voxels(level->moving) * (level->moving_mask ? 2 : 1)) *
                       sizeof(float);
  size_t free_b = 0, total_b = 0;
  if (!NW_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b), error))
    return FALSE;
  if (bytes > free_b) {
    g_set_error(error, NW_ERROR, NW_ERROR_NOMEM,
                "affine: the images need %.0f MiB of GPU memory but only %.0f MiB of %.0f MiB "
                "are free; use --device cpu or smaller images",
                bytes / 1048576.0, free_b / 1048576.0, total_b / 1048576.0);
    return FALSE;
  }
  /* the host volumes are only borrowed: wait until the copies are done */
  return upload(c, &c->F, level->fixed, error) && upload(c, &c->M, level->moving, error) &&
         upload(c, &c->fmask, level->fixed_mask, error) &&
         upload(c, &c->mmask, level->moving_mask, error) &&
         NW_CUDA_CHECK(cudaStreamSynchronize(c->stream), error);
}

gboolean cuda_evaluate(void *impl, const double map[12], NwAffineSums *sums, GError **error)
{
  CudaCost *c = (CudaCost *)impl;
  const NwAffineLevel *l = &c->level;
  if (c->F == nullptr || c->M == nullptr) { /* no level, or its upload failed */
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "affine (cuda): no images for this level");
    return FALSE;
  }
  EvalArgs a = {};
  for (int q = 0; q < 12; q++)
    a.map[q] = map[q];
  a.F = c->F;
  a.M = c->M;
  a.fmask = c->fmask;
  a.mmask = c->mmask;
  a.fnx = l->fixed->nx, a.fny = l->fixed->ny, a.fnz = l->fixed->nz;
  a.mnx = l->moving->nx, a.mny = l->moving->ny, a.mnz = l->moving->nz;
  a.n = (unsigned int)nw_volume_n_voxels(l->fixed);
  a.sampler = (int)c->spec.sampler;
  a.mi = c->hist_len > 0;
  a.parzen = c->spec.parzen ? 1 : 0;
  a.bins = c->spec.bins;
  a.shared_hist = c->shared_bytes > 0;
  a.fixed_shift = l->fixed_shift, a.moving_shift = l->moving_shift;
  a.fixed_lo = l->fixed_lo, a.fixed_hi = l->fixed_hi;
  a.moving_lo = l->moving_lo, a.moving_hi = l->moving_hi;
  a.partials = c->partials;
  a.hist = c->hist;
  const int blocks = (int)MIN((size_t)c->max_blocks, (a.n + kBlock - 1) / kBlock);
  const size_t hist_bytes = (size_t)c->hist_len * sizeof(unsigned long long);
  const size_t out_bytes = (kSums + (size_t)c->hist_len) * sizeof(double);
  if (c->hist_len > 0 &&
      !NW_CUDA_CHECK(cudaMemsetAsync(c->hist, 0, hist_bytes, c->stream), error))
    return FALSE;
  cost_kernel<<<blocks, kBlock, c->shared_bytes, c->stream>>>(a);
  if (!NW_CUDA_CHECK(nw_cuda_launched(c->stream), error))
    return FALSE;
  finish_kernel<<<1, kBlock, 0, c->stream>>>(c->d_out, c->partials, blocks, c->hist, c->hist_len);
  if (!NW_CUDA_CHECK(nw_cuda_launched(c->stream), error) ||
      !NW_CUDA_CHECK(cudaMemcpyAsync(c->h_out, c->d_out, out_bytes, cudaMemcpyDeviceToHost,
                                     c->stream),
                     error) ||
      !NW_CUDA_CHECK(cudaStreamSynchronize(c->stream), error))
    return FALSE;
  const double *o = c->h_out;
  sums->n = o[0];
  sums->sf = o[1];
  sums->sm = o[2];
  sums->sff = o[3];
  sums->smm = o[4];
  sums->sfm = o[5];
  if (c->hist_len > 0)
    memcpy(sums->joint, o + kSums, (size_t)c->hist_len * sizeof(double));
  return TRUE;
}

/* The method "affine" on CUDA: the shared job over this cost. */
void *affine_create(const NwMethodInputs *in, const NwParams *p, GError **error)
{
  return nw_affine_job_new(&nw_affine_cost_cuda, in, p, error);
}

} // namespace

extern "C" const NwAffineCostBackend nw_affine_cost_cuda = {
    .name = "cuda",
    .create = cuda_create,
    .set_level = cuda_set_level,
    .evaluate = cuda_evaluate,
    .destroy = cuda_destroy,
};

/* C++20 designated initialisers: the slots of NwMethodOps by name, in their order. */
extern "C" const NwMethodOps nw_affine_cuda_ops = {
    .name = "affine",
    .device = NW_DEVICE_CUDA,
    .description = "Rigid, similarity or affine registration (2D or 3D; MSE, NCC or mutual "
                   "information; Nelder-Mead on an image pyramid), costs on the GPU",
    NW_AFFINE_OPS_INPUTS,
    .create = affine_create,
    NW_AFFINE_OPS_JOB,
};
