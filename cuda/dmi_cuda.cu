/* dmi_cuda.cu — the CUDA twin of the distributed MI metric's local histogram (core/dmi_metric.c,
 * the reference): nw_dmi_metric_cuda_ops (nw_dmi_cuda.h). CUDA back end; the rank's thread,
 * which owns the streams and the device buffers.
 *
 * set_level uploads the rank's fixed blocks (and masks) and the moving image as the strategy
 * holds it: "distributed", each block's moving window (block + halo); "replicated", the
 * same device-resident slab per block, and the whole moving level registered in pinned,
 * mapped host memory (cudaHostRegister): a sample whose taps leave the slab reads the host
 * copy through the mapping (zero-copy). A rank's blocks stay resident together (the memory
 * cap sizes the blocks; blocks streamed through a device too small for a rank's share are
 * not done: set_level refuses).
 *
 * walk_kernel, per block and chunk (the CPU's chunks, voxel for voxel): transform, domain
 * test, trilinear/bilinear (or nearest, cubic) sample, integer joint histogram in shared
 * memory (atomics), flushed into the device histogram; in the distributed strategy a sample
 * another rank owns becomes a request (position, fixed bin), flagged, and the chunk's
 * requests are compacted with cub::DeviceSelect::Flagged, copied to pinned host memory and
 * grouped per owner rank on the host for the transport's exchange. The next chunk's walk runs
 * on the other stream meanwhile; the requests other ranks sent are uploaded and added by
 * serve_kernel. Positions, weights and bins in double without fused multiply-adds (this file
 * is compiled with -fmad=false), as sampler.c computes them: the histograms equal the CPU's
 * count for count (tests/test_cuda_dmi.c). */
#include <cuda_runtime.h>

#include <cub/cub.cuh>
#include <string.h>

#include "cuda_check.h"
#include "interp_weights.h"
#include "nw_cuda.h"
#include "nw_dmi_cuda.h"
#include "nw_error.h"
#include "dmi_window.h"
#ifdef NW_HAVE_NCCL
#include <nccl.h>
#include <unistd.h>
#endif

namespace {

constexpr int kBlock = 256;
constexpr int kStreams = 2;
constexpr size_t kSharedHistMax = 48 * 1024;
/* Voxels a new resident window keeps beyond the needed box on each side (the budget
 * allowing): an optimiser's next transforms stay inside it and copy nothing. */
constexpr int kWindowMargin = 32;

/* A window of an image on the device (or mapped host memory): voxels [lo, lo + n), stored
 * toroidally from org (dmi_window.h: a resident window moves by its new strips only; org 0
 * everywhere else). */
struct Win {
  const float *d, *mask; /* mask NULL: none */
  int lo[3], n[3], org[3];
};

struct DevBlock {
  int lo[3], hi[3];
  const float *F, *FM; /* fixed block and mask (NULL) */
};

struct Args {
  double map[12];
  int full[3]; /* the moving level's size */
  int bins, shared_hist;
  double flo, fhi, mlo, mhi;
  unsigned long long *hist;
  /* replicated: the block's resident window, and the whole level through the host mapping */
  Win slab, host;
  /* distributed */
  const int *owner_x, *owner_y, *owner_z;
  int m[3], n_blocks, n_ranks, rank, first_block, n_local;
  const Win *local; /* this rank's moving windows, by local block */
};

/* ---- sampling: core/sampler.c's window sampler, line for line -------------------------- */

__device__ inline bool in_domain(double x, int n)
{
  return x >= -0.5 && x <= (double)n - 0.5;
}

__device__ inline int clampi(int i, int n)
{
  return i < 0 ? 0 : (i >= n ? n - 1 : i);
}

/* (i, j, k) inside w: one conditional subtraction per axis undoes the wrap */
__device__ inline int wrap(int g, int lo, int org, int n)
{
  const int s = g - lo + org;
  return s >= n ? s - n : s;
}

__device__ inline float at(const float *d, const Win &w, int i, int j, int k)
{
  return d[((size_t)wrap(k, w.lo[2], w.org[2], w.n[2]) * (size_t)w.n[1] +
            (size_t)wrap(j, w.lo[1], w.org[1], w.n[1])) *
               (size_t)w.n[0] +
           (size_t)wrap(i, w.lo[0], w.org[0], w.n[0])];
}

__device__ inline float sample_nearest(const float *d, const Win &w, const int *full, double x,
                                       double y, double z)
{
  return at(d, w, clampi((int)floor(x + 0.5), full[0]), clampi((int)floor(y + 0.5), full[1]),
            clampi((int)floor(z + 0.5), full[2]));
}

__device__ inline void linear_axis(double x, int n, int *i0, int *i1, double *u)
{
  const double f = floor(x);
  *u = x - f;
  *i0 = clampi((int)f, n);
  *i1 = clampi((int)f + 1, n);
}

__device__ inline float sample_linear(const float *d, const Win &w, const int *full, double x,
                                      double y, double z)
{
  int x0, x1, y0, y1, z0, z1;
  double u, v, t;
  linear_axis(x, full[0], &x0, &x1, &u);
  linear_axis(y, full[1], &y0, &y1, &v);
  linear_axis(z, full[2], &z0, &z1, &t);
  if (full[2] == 1)
    t = 0.0;
  const double c00 = at(d, w, x0, y0, z0) * (1 - u) + at(d, w, x1, y0, z0) * u;
  const double c10 = at(d, w, x0, y1, z0) * (1 - u) + at(d, w, x1, y1, z0) * u;
  const double c0 = c00 * (1 - v) + c10 * v;
  if (t == 0.0)
    return (float)c0;
  const double c01 = at(d, w, x0, y0, z1) * (1 - u) + at(d, w, x1, y0, z1) * u;
  const double c11 = at(d, w, x0, y1, z1) * (1 - u) + at(d, w, x1, y1, z1) * u;
  return (float)(c0 * (1 - t) + (c01 * (1 - v) + c11 * v) * t);
}

struct Taps {
  int idx[4];
  double w[4];
  int n;
};

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

__device__ inline float sample_cubic(const float *d, const Win &w, const int *full, double x,
                                     double y, double z)
{
  Taps tx, ty, tz;
  taps(x, full[0], &tx);
  taps(y, full[1], &ty);
  taps(z, full[2], &tz);
  double sum = 0.0;
  for (int c = 0; c < tz.n; c++)
    for (int b = 0; b < ty.n; b++) {
      double r = 0.0;
      for (int a = 0; a < tx.n; a++)
        r += tx.w[a] * (double)at(d, w, tx.idx[a], ty.idx[b], tz.idx[c]);
      sum += tz.w[c] * ty.w[b] * r;
    }
  return (float)sum;
}

template <int S>
__device__ inline float sample(const float *d, const Win &w, const int *full, double x, double y,
                               double z)
{
  if (S == NW_SAMPLER_NEAREST)
    return sample_nearest(d, w, full, x, y, z);
  if (S == NW_SAMPLER_LINEAR)
    return sample_linear(d, w, full, x, y, z);
  return sample_cubic(d, w, full, x, y, z);
}

/* Every tap of sampler S at p along an axis inside [lo, lo + n)? */
template <int S>
__device__ inline bool axis_inside(double p, int full, int lo, int n)
{
  int a, b;
  if (S == NW_SAMPLER_NEAREST) {
    a = b = clampi((int)floor(p + 0.5), full);
  } else {
    const int f = (int)floor(p);
    a = clampi(S == NW_SAMPLER_LINEAR ? f : f - 1, full);
    b = clampi(S == NW_SAMPLER_LINEAR ? f + 1 : f + 2, full);
  }
  return a >= lo && b < lo + n;
}

template <int S>
__device__ inline bool inside(const Win &w, const int *full, double x, double y, double z)
{
  return axis_inside<S>(x, full[0], w.lo[0], w.n[0]) && axis_inside<S>(y, full[1], w.lo[1], w.n[1]) &&
         axis_inside<S>(z, full[2], w.lo[2], w.n[2]);
}

__device__ inline int bin_of(double v, double lo, double hi, int bins)
{
  const int b = (int)floor((double)bins * (v - lo) / (hi - lo));
  return clampi(b, bins);
}

/* The sample at (x, y, z) of window w into hist with fixed bin fb, the moving mask passing. */
template <int S>
__device__ inline void add_sample(const Args &a, unsigned int *sh, const Win &w, double x,
                                  double y, double z, int fb)
{
  const float mv = sample<S>(w.d, w, a.full, x, y, z);
  if (w.mask != nullptr && !(sample_nearest(w.mask, w, a.full, x, y, z) >= 0.5f))
    return;
  const int b = fb * a.bins + bin_of((double)mv, a.mlo, a.mhi, a.bins);
  if (sh != nullptr)
    atomicAdd(&sh[b], 1u);
  else
    atomicAdd(&a.hist[b], 1ull);
}

__device__ inline int owner_block(const Args &a, double x, double y, double z)
{
  const int qx = a.owner_x[clampi((int)floor(x + 0.5), a.full[0])];
  const int qy = a.owner_y[clampi((int)floor(y + 0.5), a.full[1])];
  const int qz = a.owner_z[clampi((int)floor(z + 0.5), a.full[2])];
  return (qz * a.m[1] + qy) * a.m[0] + qx;
}

__device__ inline void hist_begin(const Args &a, unsigned int *sh)
{
  if (a.shared_hist) {
    for (int b = threadIdx.x; b < a.bins * a.bins; b += blockDim.x)
      sh[b] = 0;
    __syncthreads();
  }
}

__device__ inline void hist_end(const Args &a, unsigned int *sh)
{
  if (a.shared_hist) {
    __syncthreads();
    for (int b = threadIdx.x; b < a.bins * a.bins; b += blockDim.x)
      if (sh[b] != 0)
        atomicAdd(&a.hist[b], (unsigned long long)sh[b]);
  }
}

/* Voxels [e0, e1) of block b (x fastest within the block): own samples into the histogram,
 * the others (distributed: another rank owns them) flagged as requests rq[e - e0]. */
template <int S, bool DIST>
__global__ void __launch_bounds__(kBlock)
    walk_kernel(Args a, DevBlock b, long long e0, long long e1, NwDmiRequest *rq,
                unsigned char *flag)
{
  extern __shared__ unsigned int sh_hist[];
  unsigned int *sh = a.shared_hist ? sh_hist : nullptr;
  hist_begin(a, sh);
  const long long wx = b.hi[0] - b.lo[0], wy = b.hi[1] - b.lo[1];
  for (long long e = e0 + blockIdx.x * (long long)blockDim.x + threadIdx.x; e < e1;
       e += (long long)gridDim.x * blockDim.x) {
    if (DIST)
      flag[e - e0] = 0;
    if (b.FM != nullptr && !(b.FM[e] >= 0.5f))
      continue;
    const int i = b.lo[0] + (int)(e % wx);
    const double j = (double)(b.lo[1] + (int)((e / wx) % wy));
    const double k = (double)(b.lo[2] + (int)(e / (wx * wy)));
    const double x = a.map[0] * i + a.map[1] * j + a.map[2] * k + a.map[3];
    const double y = a.map[4] * i + a.map[5] * j + a.map[6] * k + a.map[7];
    const double z = a.map[8] * i + a.map[9] * j + a.map[10] * k + a.map[11];
    if (!in_domain(x, a.full[0]) || !in_domain(y, a.full[1]) || !in_domain(z, a.full[2]))
      continue;
    const int fb = bin_of((double)b.F[e], a.flo, a.fhi, a.bins);
    if (!DIST) {
      /* the resident window where it holds every tap (and the mask's voxel), else the host
       * copy: the counts do not depend on where the window is */
      const bool in_slab = inside<S>(a.slab, a.full, x, y, z) &&
                           (a.slab.mask == nullptr || inside<NW_SAMPLER_NEAREST>(a.slab, a.full, x, y, z));
      add_sample<S>(a, sh, in_slab ? a.slab : a.host, x, y, z, fb);
      continue;
    }
    const int ob = owner_block(a, x, y, z);
    const int orank = (int)((long long)ob * a.n_ranks / a.n_blocks);
    if (orank == a.rank) {
      add_sample<S>(a, sh, a.local[ob - a.first_block], x, y, z, fb);
    } else {
      rq[e - e0] = NwDmiRequest{x, y, z, fb, orank};
      flag[e - e0] = 1;
    }
  }
  hist_end(a, sh);
}

/* Requests other ranks sent, each sampled in the local block that owns it. */
template <int S>
__global__ void __launch_bounds__(kBlock) serve_kernel(Args a, const NwDmiRequest *rq, long long n)
{
  extern __shared__ unsigned int sh_hist[];
  unsigned int *sh = a.shared_hist ? sh_hist : nullptr;
  hist_begin(a, sh);
  for (long long q = blockIdx.x * (long long)blockDim.x + threadIdx.x; q < n;
       q += (long long)gridDim.x * blockDim.x) {
    const NwDmiRequest r = rq[q];
    const int ob = owner_block(a, r.x, r.y, r.z) - a.first_block;
    if (ob < 0 || ob >= a.n_local)
      continue; /* not ours: the CPU reference warns; the parity test would see it */
    add_sample<S>(a, sh, a.local[ob], r.x, r.y, r.z, r.fixed_bin);
  }
  hist_end(a, sh);
}

using WalkKernel = void (*)(Args, DevBlock, long long, long long, NwDmiRequest *, unsigned char *);
using ServeKernel = void (*)(Args, const NwDmiRequest *, long long);

WalkKernel walk_for(NwSampler s, bool dist)
{
  static const WalkKernel t[3][2] = {
      {walk_kernel<NW_SAMPLER_NEAREST, false>, walk_kernel<NW_SAMPLER_NEAREST, true>},
      {walk_kernel<NW_SAMPLER_LINEAR, false>, walk_kernel<NW_SAMPLER_LINEAR, true>},
      {walk_kernel<NW_SAMPLER_CUBIC, false>, walk_kernel<NW_SAMPLER_CUBIC, true>}};
  return t[s == NW_SAMPLER_NEAREST ? 0 : s == NW_SAMPLER_LINEAR ? 1 : 2][dist ? 1 : 0];
}

ServeKernel serve_for(NwSampler s)
{
  return s == NW_SAMPLER_NEAREST  ? serve_kernel<NW_SAMPLER_NEAREST>
         : s == NW_SAMPLER_LINEAR ? serve_kernel<NW_SAMPLER_LINEAR>
                                  : serve_kernel<NW_SAMPLER_CUBIC>;
}

/* ---- the metric ------------------------------------------------------------------------- */

struct Block {
  DevBlock dev;
  Win moving;      /* distributed: the block's window; replicated: the resident window */
  float *owned[4]; /* F, FM, moving, moving mask: device allocations */
  long long n_vox;
  /* replicated: what the resident window holds (dmi_window.h), its capacity in voxels, and
   * the event its copies end with (the walk on the other stream waits for it) */
  NwDmiWindow win;
  long long capacity;
  cudaEvent_t copied;
};

struct CudaDmi {
  NwDmiSpec spec;
  NwDmiTransport *t;
  const NwDmiLevel *level;
  cudaStream_t stream[kStreams];
  int n_streams;
  int sms;
  Args args;
  Block *blocks;
  int n_blocks;
  Win *d_local;      /* device copy of the local moving windows */
  int *d_owner;      /* owner tables x, y, z */
  unsigned long long *d_hist;
  unsigned long long *h_hist; /* pinned */
  void *host_registered[2];   /* replicated: the level's moving image and mask, mapped */
  size_t shared_bytes;
  int n_chunks;
  long long window_voxels; /* replicated: voxels copied into the windows, last evaluation */
  /* distributed: per stream, a chunk's flags, requests, their compaction and its count */
  long long chunk_cap;
  NwDmiRequest *d_rq[kStreams], *d_sel[kStreams], *h_sel[kStreams];
  unsigned char *d_flag[kStreams];
  int *d_count[kStreams], *h_count[kStreams];
  void *d_temp;
  size_t temp_bytes;
  NwDmiRequest *d_recv[kStreams]; /* per stream: a serve reads it while the other stream's */
  long long recv_cap[kStreams];
  /* packed per rank for the transport, two: one travels while the next is packed */
  GArray *send[kStreams];
  gint64 *counts[kStreams];
#ifdef NW_HAVE_NCCL
  ncclComm_t nccl;
  bool have_nccl;
#endif
};

void free_level(CudaDmi *c)
{
  for (int b = 0; b < c->n_blocks; b++) {
    for (int i = 0; i < 4; i++)
      cudaFree(c->blocks[b].owned[i]);
    if (c->blocks[b].copied != nullptr)
      cudaEventDestroy(c->blocks[b].copied);
  }
  g_free(c->blocks);
  c->blocks = nullptr;
  c->n_blocks = 0;
  cudaFree(c->d_local);
  cudaFree(c->d_owner);
  c->d_local = nullptr;
  c->d_owner = nullptr;
  for (int i = 0; i < 2; i++)
    if (c->host_registered[i] != nullptr) {
      cudaHostUnregister(c->host_registered[i]);
      c->host_registered[i] = nullptr;
    }
}

void free_chunks(CudaDmi *c)
{
  for (int s = 0; s < kStreams; s++) {
    cudaFree(c->d_rq[s]);
    cudaFree(c->d_sel[s]);
    cudaFree(c->d_flag[s]);
    cudaFree(c->d_count[s]);
    cudaFreeHost(c->h_sel[s]);
    cudaFreeHost(c->h_count[s]);
    c->d_rq[s] = c->d_sel[s] = c->h_sel[s] = nullptr;
    c->d_flag[s] = nullptr;
    c->d_count[s] = c->h_count[s] = nullptr;
  }
  cudaFree(c->d_temp);
  c->d_temp = nullptr;
  c->chunk_cap = 0;
}

void cuda_dmi_destroy(void *impl)
{
  CudaDmi *c = (CudaDmi *)impl;
  if (c == nullptr)
    return;
  for (int s = 0; s < c->n_streams; s++)
    cudaStreamSynchronize(c->stream[s]);
  free_level(c);
  free_chunks(c);
  for (int s = 0; s < kStreams; s++) {
    cudaFree(c->d_recv[s]);
    if (c->send[s] != nullptr)
      g_array_unref(c->send[s]);
    g_free(c->counts[s]);
  }
  cudaFree(c->d_hist);
  cudaFreeHost(c->h_hist);
  for (int s = 0; s < c->n_streams; s++)
    cudaStreamDestroy(c->stream[s]);
#ifdef NW_HAVE_NCCL
  if (c->have_nccl)
    ncclCommDestroy(c->nccl);
#endif
  g_free(c);
}

#ifdef NW_HAVE_NCCL
/* NCCL between the ranks when all are on one host, each with a GPU of its own (NCCL refuses
 * two ranks on one device); else the transport reduces. Collective. */
gboolean setup_nccl(CudaDmi *c, GError **error)
{
  struct {
    char host[64];
    int device;
  } me = {{0}, 0};
  gethostname(me.host, sizeof me.host - 1);
  cudaGetDevice(&me.device);
  void *all = nullptr;
  gsize len = 0;
  if (!c->t->allgather(c->t, &me, sizeof me, &all, &len, nullptr, error))
    return FALSE;
  bool ok = c->t->size > 1;
  const auto *v = (const decltype(me) *)all;
  for (int a = 0; ok && a < c->t->size; a++)
    for (int b = a + 1; ok && b < c->t->size; b++)
      ok = strcmp(v[a].host, v[0].host) == 0 && strcmp(v[b].host, v[0].host) == 0 &&
           v[a].device != v[b].device;
  g_free(all);
  if (!ok)
    return TRUE; /* every rank found the same */
  ncclUniqueId id;
  if (c->t->rank == 0)
    ncclGetUniqueId(&id);
  if (!c->t->allgather(c->t, &id, c->t->rank == 0 ? sizeof id : 0, &all, &len, nullptr, error))
    return FALSE;
  memcpy(&id, all, sizeof id);
  g_free(all);
  const ncclResult_t r = ncclCommInitRank(&c->nccl, c->t->size, id, c->t->rank);
  if (r != ncclSuccess) {
    g_set_error(error, NW_ERROR, NW_ERROR_DEVICE, "ncclCommInitRank failed: %s",
                ncclGetErrorString(r));
    return FALSE;
  }
  c->have_nccl = true;
  return TRUE;
}
#endif

void *cuda_dmi_create(const NwDmiSpec *spec, NwDmiTransport *t, GError **error)
{
  CudaDmi *c = g_new0(CudaDmi, 1);
  c->spec = *spec;
  if (c->spec.chunk_voxels < 1)
    c->spec.chunk_voxels = (gint64)1 << 20;
  c->t = t;
  for (int s = 0; s < kStreams; s++) {
    c->send[s] = g_array_new(FALSE, FALSE, sizeof(NwDmiRequest));
    c->counts[s] = g_new0(gint64, t->size);
  }
  const size_t hist_bytes = (size_t)spec->bins * spec->bins * sizeof(unsigned long long);
  c->shared_bytes = (size_t)spec->bins * spec->bins * sizeof(unsigned int);
  if (c->shared_bytes > kSharedHistMax)
    c->shared_bytes = 0;
  const int device = nw_cuda_rank_device();
  gboolean ok = NW_CUDA_CHECK(cudaSetDevice(device), error) &&
                NW_CUDA_CHECK(cudaDeviceGetAttribute(&c->sms, cudaDevAttrMultiProcessorCount,
                                                     device),
                              error);
  for (int s = 0; ok && s < kStreams; s++) {
    ok = NW_CUDA_CHECK(cudaStreamCreateWithFlags(&c->stream[s], cudaStreamNonBlocking), error);
    c->n_streams += ok ? 1 : 0;
  }
  ok = ok && NW_CUDA_CHECK(cudaMalloc(&c->d_hist, hist_bytes), error) &&
       NW_CUDA_CHECK(cudaMemset(c->d_hist, 0, hist_bytes), error) &&
       NW_CUDA_CHECK(cudaHostAlloc(&c->h_hist, hist_bytes, cudaHostAllocDefault), error);
#ifdef NW_HAVE_NCCL
  ok = ok && setup_nccl(c, error);
#endif
  if (!ok) {
    cuda_dmi_destroy(c);
    return nullptr;
  }
  return c;
}

gboolean upload(float **dst, const float *src, size_t n, GError **error)
{
  return NW_CUDA_CHECK(cudaMalloc(dst, MAX(n, (size_t)1) * sizeof(float)), error) &&
         (n == 0 || NW_CUDA_CHECK(cudaMemcpy(*dst, src, n * sizeof(float), cudaMemcpyHostToDevice),
                                  error));
}

/* Room for the replicated strategy's resident window of each block (dmi_window.h): what the
 * memory cap leaves a block beside its fixed voxels, at most the whole level; without a cap,
 * at most a share of the device's free memory (less a reserve for the histograms, CUB and
 * the runtime). Nothing is copied here: the first evaluation places the windows where its
 * transform needs them. */
gboolean alloc_windows(CudaDmi *c, const NwDmiLevel *l, GError **error)
{
  const bool mmask = l->moving_mask.data != nullptr;
  const long long whole = (long long)l->moving_n[0] * l->moving_n[1] * l->moving_n[2];
  size_t free_b = 0, total_b = 0;
  if (!NW_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b), error))
    return FALSE;
  const double reserve = 512e6;
  const long long share =
      (long long)MAX(1.0, ((double)free_b - reserve) / MAX(1, c->n_blocks) / (mmask ? 8.0 : 4.0));
  for (int b = 0; b < c->n_blocks; b++) {
    Block *db = &c->blocks[b];
    const gint64 budget =
        nw_dmi_window_budget(c->spec.cap_mb, db->n_vox, db->dev.FM != nullptr, mmask, c->spec.bins);
    db->capacity = MAX(1LL, MIN(MIN((long long)budget, whole), share));
    db->win = NwDmiWindow{};
    if (!NW_CUDA_CHECK(cudaMalloc(&db->owned[2], db->capacity * sizeof(float)), error) ||
        (mmask && !NW_CUDA_CHECK(cudaMalloc(&db->owned[3], db->capacity * sizeof(float)), error)) ||
        !NW_CUDA_CHECK(cudaEventCreateWithFlags(&db->copied, cudaEventDisableTiming), error))
      return FALSE;
  }
  return TRUE;
}

gboolean map_host(CudaDmi *c, int i, const NwSampleWindow *w, const float **dev, GError **error)
{
  const size_t bytes = (size_t)w->n[0] * w->n[1] * w->n[2] * sizeof(float);
  void *p = (void *)w->data, *d = nullptr;
  if (!NW_CUDA_CHECK(cudaHostRegister(p, bytes, cudaHostRegisterMapped), error))
    return FALSE;
  c->host_registered[i] = p;
  if (!NW_CUDA_CHECK(cudaHostGetDevicePointer(&d, p, 0), error))
    return FALSE;
  *dev = (const float *)d;
  return TRUE;
}

gboolean ensure_chunks(CudaDmi *c, long long voxels, GError **error)
{
  if (voxels <= c->chunk_cap)
    return TRUE;
  free_chunks(c);
  gboolean ok = TRUE;
  for (int s = 0; ok && s < kStreams; s++)
    ok = NW_CUDA_CHECK(cudaMalloc(&c->d_rq[s], voxels * sizeof(NwDmiRequest)), error) &&
         NW_CUDA_CHECK(cudaMalloc(&c->d_sel[s], voxels * sizeof(NwDmiRequest)), error) &&
         NW_CUDA_CHECK(cudaMalloc(&c->d_flag[s], voxels), error) &&
         NW_CUDA_CHECK(cudaMalloc(&c->d_count[s], sizeof(int)), error) &&
         NW_CUDA_CHECK(cudaHostAlloc(&c->h_sel[s], voxels * sizeof(NwDmiRequest), 0), error) &&
         NW_CUDA_CHECK(cudaHostAlloc(&c->h_count[s], sizeof(int), 0), error);
  ok = ok && NW_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, c->temp_bytes, c->d_rq[0],
                                                      c->d_flag[0], c->d_sel[0], c->d_count[0],
                                                      (int)voxels),
                           error) &&
       NW_CUDA_CHECK(cudaMalloc(&c->d_temp, c->temp_bytes), error);
  c->chunk_cap = ok ? voxels : 0;
  return ok;
}

gboolean cuda_dmi_set_level(void *impl, const NwDmiLevel *l, const double r[4], GError **error)
{
  CudaDmi *c = (CudaDmi *)impl;
  for (int s = 0; s < c->n_streams; s++)
    cudaStreamSynchronize(c->stream[s]);
  free_level(c);
  c->level = l;
  const bool dist = l->strategy == NW_DMI_DISTRIBUTED;
  Args &a = c->args;
  a = Args{};
  a.bins = c->spec.bins;
  a.shared_hist = c->shared_bytes > 0;
  a.flo = r[0], a.fhi = r[1], a.mlo = r[2], a.mhi = r[3];
  a.hist = c->d_hist;
  for (int i = 0; i < 3; i++) {
    a.full[i] = l->moving_n[i];
    a.m[i] = l->layout.m[i];
  }
  a.n_blocks = nw_dmi_layout_blocks(&l->layout);
  a.n_ranks = l->n_ranks;
  a.rank = c->t->rank;
  a.first_block = l->first_block;
  a.n_local = l->n_blocks;
  c->n_chunks = 1; /* replicated: every block whole; distributed: agreed below */
  c->n_blocks = l->n_blocks;
  c->blocks = g_new0(Block, MAX(1, l->n_blocks));
  gboolean ok = TRUE;
  for (int b = 0; ok && b < l->n_blocks; b++) {
    const NwDmiBlock *hb = &l->blocks[b];
    Block *db = &c->blocks[b];
    long long n = 1;
    for (int i = 0; i < 3; i++) {
      db->dev.lo[i] = hb->lo[i];
      db->dev.hi[i] = hb->hi[i];
      n *= hb->hi[i] - hb->lo[i];
    }
    db->n_vox = n;
    ok = upload(&db->owned[0], hb->fixed, (size_t)n, error) &&
         (hb->fixed_mask == nullptr || upload(&db->owned[1], hb->fixed_mask, (size_t)n, error));
    db->dev.F = db->owned[0];
    db->dev.FM = db->owned[1];
    if (ok && dist) {
      const NwSampleWindow *w = &hb->moving, *m = &hb->moving_mask;
      const size_t wn = (size_t)w->n[0] * w->n[1] * w->n[2];
      ok = upload(&db->owned[2], w->data, wn, error) &&
           (m->data == nullptr || upload(&db->owned[3], m->data, wn, error));
      for (int i = 0; i < 3; i++) {
        db->moving.lo[i] = w->lo[i];
        db->moving.n[i] = w->n[i];
      }
      db->moving.d = db->owned[2];
      db->moving.mask = db->owned[3];
    }
  }
  if (ok && !dist) {
    ok = alloc_windows(c, l, error);
    a.host = Win{
        nullptr, nullptr, {0, 0, 0}, {l->moving_n[0], l->moving_n[1], l->moving_n[2]}, {0, 0, 0}};
    ok = map_host(c, 0, &l->moving, &a.host.d, error) &&
         (l->moving_mask.data == nullptr || map_host(c, 1, &l->moving_mask, &a.host.mask, error));
  }
  if (ok && dist) {
    g_autofree Win *local = g_new0(Win, MAX(1, l->n_blocks));
    for (int b = 0; b < l->n_blocks; b++)
      local[b] = c->blocks[b].moving;
    int *owner[3];
    nw_dmi_owner_tables(&l->layout, l->moving_n, owner);
    const size_t n_owner = (size_t)l->moving_n[0] + l->moving_n[1] + l->moving_n[2];
    ok = NW_CUDA_CHECK(cudaMalloc(&c->d_local, MAX(1, l->n_blocks) * sizeof(Win)), error) &&
         NW_CUDA_CHECK(cudaMemcpy(c->d_local, local, l->n_blocks * sizeof(Win),
                                  cudaMemcpyHostToDevice),
                       error) &&
         NW_CUDA_CHECK(cudaMalloc(&c->d_owner, n_owner * sizeof(int)), error) &&
         NW_CUDA_CHECK(cudaMemcpy(c->d_owner, owner[0], n_owner * sizeof(int),
                                  cudaMemcpyHostToDevice),
                       error);
    g_free(owner[0]);
    a.local = c->d_local;
    a.owner_x = c->d_owner;
    a.owner_y = c->d_owner + l->moving_n[0];
    a.owner_z = c->d_owner + l->moving_n[0] + l->moving_n[1];
    /* the ranks agree on the chunks as the CPU's do (dmi_metric.c) */
    double chunks = (double)MAX((gint64)1, (nw_dmi_level_fixed_voxels(l) + c->spec.chunk_voxels - 1) /
                                               c->spec.chunk_voxels);
    ok = c->t->allreduce_f64(c->t, &chunks, 1, NW_DMI_MAX, error);
    c->n_chunks = (int)chunks;
    /* the most voxels of one chunk over the blocks: each block's share rounded up */
    long long cap = 0;
    for (int b = 0; b < l->n_blocks; b++)
      cap += c->blocks[b].n_vox / c->n_chunks + 1;
    ok = ok && ensure_chunks(c, MAX(cap, 1LL), error);
  }
  return ok;
}

/* Plan p's bulk copies from the registered (pinned) host level into block db's window
 * buffers on stream s: a 2D copy per slice of each box (rows of the box are contiguous runs
 * of the host image). */
gboolean copy_window(CudaDmi *c, Block *db, const NwDmiWindowPlan *p, int s, GError **error)
{
  const NwDmiLevel *l = c->level;
  const size_t fx = (size_t)l->moving_n[0], fy = (size_t)l->moving_n[1];
  const size_t wx = (size_t)p->next.n[0], wy = (size_t)p->next.n[1];
  const float *src[2] = {l->moving.data, l->moving_mask.data};
  float *dst[2] = {db->owned[2], db->owned[3]};
  for (int q = 0; q < p->n_copies; q++) {
    const NwDmiCopy &cp = p->copies[q];
    for (int m = 0; m < 2; m++)
      for (int k = 0; src[m] != nullptr && k < cp.n[2]; k++) {
        const float *from =
            src[m] + ((size_t)(cp.src_lo[2] + k) * fy + (size_t)cp.src_lo[1]) * fx + cp.src_lo[0];
        float *to =
            dst[m] + ((size_t)(cp.dst_lo[2] + k) * wy + (size_t)cp.dst_lo[1]) * wx + cp.dst_lo[0];
        if (!NW_CUDA_CHECK(cudaMemcpy2DAsync(to, wx * sizeof(float), from, fx * sizeof(float),
                                             (size_t)cp.n[0] * sizeof(float), (size_t)cp.n[1],
                                             cudaMemcpyHostToDevice, c->stream[s]),
                           error))
          return FALSE;
      }
  }
  return TRUE;
}

/* Replicated: every block's resident window for map (reused, shifted or fetched on the second
 * stream, dmi_window.h), each block's copies ending with its event, so that block b's walk on
 * the first stream starts as soon as its own window is in while later blocks' copies go on. */
gboolean place_windows(CudaDmi *c, const double map[12], GError **error)
{
  c->window_voxels = 0;
  for (int b = 0; b < c->n_blocks; b++) {
    Block *db = &c->blocks[b];
    int lo[3], hi[3];
    if (nw_dmi_needed_box(map, db->dev.lo, db->dev.hi, c->level->moving_n, c->spec.sampler, lo,
                          hi)) {
      NwDmiWindowPlan p;
      nw_dmi_window_plan(&db->win, lo, hi, c->level->moving_n, db->capacity, kWindowMargin, &p);
      if (p.action != NW_DMI_WINDOW_REUSE) {
        if (!copy_window(c, db, &p, 1, error))
          return FALSE;
        db->win = p.next;
        c->window_voxels += p.voxels;
      }
    }
    db->moving.d = db->owned[2];
    db->moving.mask = db->owned[3];
    for (int a = 0; a < 3; a++) {
      db->moving.lo[a] = db->win.lo[a];
      db->moving.n[a] = db->win.valid ? db->win.n[a] : 0; /* nothing resident: all host */
      db->moving.org[a] = db->win.org[a];
    }
    if (!NW_CUDA_CHECK(cudaEventRecord(db->copied, c->stream[1]), error))
      return FALSE;
  }
  return TRUE;
}

int grid_for(const CudaDmi *c, long long n)
{
  const long long want = (n + kBlock - 1) / kBlock;
  return (int)MAX(1LL, MIN(want, (long long)c->sms * 8));
}

/* Chunk ch of every local block on stream s; distributed: the flagged requests compacted
 * after each block into d_sel (appended), their count into h_count (pinned). */
gboolean launch_walk(CudaDmi *c, const double map[12], int ch, int s, GError **error)
{
  const bool dist = c->level->strategy == NW_DMI_DISTRIBUTED;
  Args a = c->args;
  memcpy(a.map, map, sizeof a.map);
  const WalkKernel k = walk_for(c->spec.sampler, dist);
  long long appended = 0;
  for (int b = 0; b < c->n_blocks; b++) {
    const Block &db = c->blocks[b];
    const long long e0 = db.n_vox * ch / c->n_chunks, e1 = db.n_vox * (ch + 1) / c->n_chunks;
    if (e1 <= e0)
      continue;
    if (!dist) {
      a.slab = db.moving;
      if (!NW_CUDA_CHECK(cudaStreamWaitEvent(c->stream[s], db.copied, 0), error))
        return FALSE;
    }
    k<<<grid_for(c, e1 - e0), kBlock, c->shared_bytes, c->stream[s]>>>(
        a, db.dev, e0, e1, dist ? c->d_rq[s] + appended : nullptr,
        dist ? c->d_flag[s] + appended : nullptr);
    if (!NW_CUDA_CHECK(nw_cuda_launched(c->stream[s]), error))
      return FALSE;
    appended += e1 - e0;
  }
  if (!dist)
    return TRUE;
  /* (a chunk without voxels here: no flags were written, so nothing to select) */
  return (appended > 0
              ? NW_CUDA_CHECK(cub::DeviceSelect::Flagged(c->d_temp, c->temp_bytes, c->d_rq[s],
                                                         c->d_flag[s], c->d_sel[s], c->d_count[s],
                                                         (int)appended, c->stream[s]),
                              error)
              : NW_CUDA_CHECK(cudaMemsetAsync(c->d_count[s], 0, sizeof(int), c->stream[s]),
                              error)) &&
         NW_CUDA_CHECK(cudaMemcpyAsync(c->h_count[s], c->d_count[s], sizeof(int),
                                       cudaMemcpyDeviceToHost, c->stream[s]),
                       error);
}

/* The chunk's compacted requests to the host, then grouped per owner rank (its rank rode in
 * the record's pad, zeroed here: the records the CPU's would send). */
gboolean pack(CudaDmi *c, int s, gint64 *sent, GError **error)
{
  if (!NW_CUDA_CHECK(cudaStreamSynchronize(c->stream[s]), error))
    return FALSE;
  const int n = *c->h_count[s];
  if (n > 0 &&
      (!NW_CUDA_CHECK(cudaMemcpyAsync(c->h_sel[s], c->d_sel[s], (size_t)n * sizeof(NwDmiRequest),
                                      cudaMemcpyDeviceToHost, c->stream[s]),
                      error) ||
       !NW_CUDA_CHECK(cudaStreamSynchronize(c->stream[s]), error)))
    return FALSE;
  const int R = c->t->size;
  gint64 *counts = c->counts[s];
  memset(counts, 0, R * sizeof(gint64));
  for (int q = 0; q < n; q++)
    counts[c->h_sel[s][q].pad]++;
  g_array_set_size(c->send[s], (guint)n);
  g_autofree gint64 *at = g_new0(gint64, R);
  for (int r = 1; r < R; r++)
    at[r] = at[r - 1] + counts[r - 1];
  NwDmiRequest *out = (NwDmiRequest *)c->send[s]->data;
  for (int q = 0; q < n; q++) {
    NwDmiRequest rq = c->h_sel[s][q];
    const int r = rq.pad;
    rq.pad = 0;
    out[at[r]++] = rq;
  }
  *sent += n;
  return TRUE;
}

gboolean serve(CudaDmi *c, const NwDmiRequest *rq, gint64 n, int s, GError **error)
{
  if (n == 0)
    return TRUE;
  if (n > c->recv_cap[s]) {
    /* the stream's last serve may still read the old buffer: it is freed once that is done */
    if (!NW_CUDA_CHECK(cudaStreamSynchronize(c->stream[s]), error))
      return FALSE;
    cudaFree(c->d_recv[s]);
    c->d_recv[s] = nullptr;
    c->recv_cap[s] = 0;
    if (!NW_CUDA_CHECK(cudaMalloc(&c->d_recv[s], n * sizeof(NwDmiRequest)), error))
      return FALSE;
    c->recv_cap[s] = n;
  }
  /* rq is pageable and the transport may reuse it: copied before returning */
  if (!NW_CUDA_CHECK(cudaMemcpyAsync(c->d_recv[s], rq, n * sizeof(NwDmiRequest),
                                     cudaMemcpyHostToDevice, c->stream[s]),
                     error) ||
      !NW_CUDA_CHECK(cudaStreamSynchronize(c->stream[s]), error))
    return FALSE;
  serve_for(c->spec.sampler)<<<grid_for(c, n), kBlock, c->shared_bytes, c->stream[s]>>>(
      c->args, c->d_recv[s], n);
  return NW_CUDA_CHECK(nw_cuda_launched(c->stream[s]), error);
}

/* The device histogram to hist (int64 counts) and zeroed for the next evaluation. */
gboolean fetch_hist(CudaDmi *c, gint64 *hist, GError **error)
{
  const size_t bytes = (size_t)c->spec.bins * c->spec.bins * sizeof(unsigned long long);
  for (int s = 1; s < c->n_streams; s++)
    if (!NW_CUDA_CHECK(cudaStreamSynchronize(c->stream[s]), error))
      return FALSE;
  if (!NW_CUDA_CHECK(cudaMemcpyAsync(c->h_hist, c->d_hist, bytes, cudaMemcpyDeviceToHost,
                                     c->stream[0]),
                     error) ||
      !NW_CUDA_CHECK(cudaMemsetAsync(c->d_hist, 0, bytes, c->stream[0]), error) ||
      !NW_CUDA_CHECK(cudaStreamSynchronize(c->stream[0]), error))
    return FALSE;
  memcpy(hist, c->h_hist, bytes); /* counts < 2^63 */
  return TRUE;
}

gboolean cuda_dmi_local(void *impl, const double map[12], gint64 *hist, gint64 *requests,
                        GError **error)
{
  CudaDmi *c = (CudaDmi *)impl;
  *requests = 0;
  if (c->level->strategy != NW_DMI_DISTRIBUTED) {
    /* the windows moved on the second stream, blocks in turn on the first: each launch is
     * the whole block, after its window's copies */
    return place_windows(c, map, error) && launch_walk(c, map, 0, 0, error) &&
           fetch_hist(c, hist, error);
  }
  /* the CPU's exchange order (dmi_metric.c): pack c, wait c - 1, serve it, start c; chunk
   * c + 1's walk is launched before the wait, so the GPU computes while requests travel */
  NwDmiExchange *inflight = nullptr;
  if (!launch_walk(c, map, 0, 0, error))
    return FALSE;
  for (int ch = 0; ch < c->n_chunks; ch++) {
    const int s = ch % kStreams;
    if (!pack(c, s, requests, error))
      return FALSE;
    if (ch + 1 < c->n_chunks && !launch_walk(c, map, ch + 1, (ch + 1) % kStreams, error))
      return FALSE;
    if (inflight != nullptr) {
      const NwDmiRequest *rq;
      gint64 n;
      if (!c->t->exchange_wait(c->t, inflight, &rq, &n, error) || !serve(c, rq, n, s, error))
        return FALSE;
    }
    if (!c->t->exchange_start(c->t, (const NwDmiRequest *)c->send[s]->data, c->counts[s],
                              &inflight, error))
      return FALSE;
  }
  const NwDmiRequest *rq;
  gint64 n;
  return c->t->exchange_wait(c->t, inflight, &rq, &n, error) && serve(c, rq, n, 0, error) &&
         fetch_hist(c, hist, error);
}

#ifdef NW_HAVE_NCCL
gboolean cuda_dmi_reduce(void *impl, gint64 *hist, int n, GError **error)
{
  CudaDmi *c = (CudaDmi *)impl;
  if (!c->have_nccl)
    return c->t->allreduce_i64(c->t, hist, n, error);
  const size_t bytes = (size_t)n * sizeof(gint64);
  /* the local histogram was fetched (and the device one zeroed): up again, summed, down */
  ncclResult_t r = ncclSuccess;
  gboolean ok = NW_CUDA_CHECK(cudaMemcpyAsync(c->d_hist, hist, bytes, cudaMemcpyHostToDevice,
                                              c->stream[0]),
                              error) &&
                (r = ncclAllReduce(c->d_hist, c->d_hist, n, ncclUint64, ncclSum, c->nccl,
                                   c->stream[0])) == ncclSuccess &&
                NW_CUDA_CHECK(cudaMemcpyAsync(c->h_hist, c->d_hist, bytes, cudaMemcpyDeviceToHost,
                                              c->stream[0]),
                              error) &&
                NW_CUDA_CHECK(cudaMemsetAsync(c->d_hist, 0, bytes, c->stream[0]), error) &&
                NW_CUDA_CHECK(cudaStreamSynchronize(c->stream[0]), error);
  if (r != ncclSuccess)
    g_set_error(error, NW_ERROR, NW_ERROR_DEVICE, "ncclAllReduce failed: %s",
                ncclGetErrorString(r));
  if (ok)
    memcpy(hist, c->h_hist, bytes);
  return ok;
}
#endif

} // namespace

extern "C" gint64 nw_dmi_cuda_window_voxels(const void *impl)
{
  return ((const CudaDmi *)impl)->window_voxels;
}

extern "C" const NwDmiMetricOps nw_dmi_metric_cuda_ops = {
    .name = "cuda",
    .create = cuda_dmi_create,
    .set_level = cuda_dmi_set_level,
    .local = cuda_dmi_local,
#ifdef NW_HAVE_NCCL
    .reduce = cuda_dmi_reduce,
#else
    .reduce = nullptr,
#endif
    .destroy = cuda_dmi_destroy,
};
