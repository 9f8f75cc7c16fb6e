/* staging_cuda.cu — see staging_cuda.cuh. */
#include "staging_cuda.cuh"

#include <glib.h>
#include <stdlib.h>

#include "volume.h"

/* The events of a stage ("the GPU is done with chunk b"), in its pinned block after the two
 * chunks: made with the stage, not per copy (creating and destroying two events a copy costs
 * a few driver calls each time); and the device they belong to. */
typedef struct {
  cudaEvent_t done[2];
  int device;
} StageEvents;

static StageEvents *events_of(float *stage)
{
  return (StageEvents *)(stage + 2 * kNwStageChunk); /* 16 MiB in: aligned for pointers */
}

/* One freed stage kept per device for the next job: pinning 16 MiB took 8.6 ms on the H100
 * host (bench_affine, 2026-11-26), most of an affine job's set-up at 3072^2, and the jobs of
 * one process (the application's runs, a batch, the benchmarks) follow one another. Freed at
 * exit, before the CUDA runtime's own teardown (registered after it, so run before it), so
 * that nothing is left for compute-sanitizer's leak check. */
#define MAX_KEPT_DEVICES 16
static GMutex kept_lock;
static float *kept[MAX_KEPT_DEVICES];
static gboolean kept_hooked;

static void destroy_stage(float *stage)
{
  StageEvents *ev = events_of(stage);
  for (int b = 0; b < 2; b++)
    if (ev->done[b] != nullptr)
      cudaEventDestroy(ev->done[b]);
  cudaFreeHost(stage);
}

static void free_kept(void)
{
  g_mutex_lock(&kept_lock);
  int current = 0;
  const gboolean have = cudaGetDevice(&current) == cudaSuccess;
  for (int d = 0; d < MAX_KEPT_DEVICES; d++)
    if (kept[d] != nullptr && cudaSetDevice(d) == cudaSuccess) {
      destroy_stage(kept[d]);
      kept[d] = nullptr;
    }
  if (have)
    cudaSetDevice(current);
  g_mutex_unlock(&kept_lock);
}

/* The stage kept for the current device, if any (taken: no one else gets it). */
static float *take_kept(void)
{
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= MAX_KEPT_DEVICES)
    return nullptr;
  g_mutex_lock(&kept_lock);
  float *s = kept[device];
  kept[device] = nullptr;
  g_mutex_unlock(&kept_lock);
  return s;
}

cudaError_t nw_stage_alloc(float **stage)
{
  if ((*stage = take_kept()) != nullptr)
    return cudaSuccess;
  float *s = nullptr;
  cudaError_t e = cudaHostAlloc(
      (void **)&s, 2 * kNwStageChunk * sizeof(float) + sizeof(StageEvents), cudaHostAllocDefault);
  if (e != cudaSuccess)
    return e;
  StageEvents *ev = events_of(s);
  ev->done[0] = ev->done[1] = nullptr;
  e = cudaGetDevice(&ev->device);
  for (int b = 0; b < 2 && e == cudaSuccess; b++)
    e = cudaEventCreateWithFlags(&ev->done[b], cudaEventDisableTiming);
  if (e != cudaSuccess) {
    destroy_stage(s);
    s = nullptr;
  }
  *stage = s;
  return e;
}

void nw_stage_free(float *stage)
{
  if (stage == nullptr)
    return;
  const int device = events_of(stage)->device;
  g_mutex_lock(&kept_lock);
  const gboolean keep = device >= 0 && device < MAX_KEPT_DEVICES && kept[device] == nullptr;
  if (keep) {
    kept[device] = stage;
    if (!kept_hooked)
      kept_hooked = atexit(free_kept) == 0;
  }
  g_mutex_unlock(&kept_lock);
  if (!keep)
    destroy_stage(stage);
}

float *nw_stage_for(float **slot, size_t n)
{
  if (n <= kNwStageChunk)
    return nullptr; /* a copy that size goes straight */
  if (*slot == nullptr && nw_stage_alloc(slot) != cudaSuccess)
    *slot = nullptr;
  return *slot;
}

/* The pinned pair and its two events, for one copy. */
typedef struct {
  float *stage;
  bool owned; /* made for this copy */
  cudaEvent_t done[2];
} Stage;

static cudaError_t stage_open(Stage *s, float *stage)
{
  *s = {stage, false, {nullptr, nullptr}};
  cudaError_t e = cudaSuccess;
  if (s->stage == nullptr) {
    e = nw_stage_alloc(&s->stage);
    s->owned = e == cudaSuccess;
  }
  if (e == cudaSuccess) {
    s->done[0] = events_of(s->stage)->done[0];
    s->done[1] = events_of(s->stage)->done[1];
  }
  return e;
}

static void stage_close(Stage *s, cudaStream_t stream, cudaError_t e)
{
  if (e != cudaSuccess)
    cudaStreamSynchronize(stream); /* nothing may still use the stage */
  if (s->owned)
    nw_stage_free(s->stage);
}

cudaError_t nw_upload_floats(float *d, const float *h, size_t n, float *stage, cudaStream_t stream)
{
  if (n <= kNwStageChunk) {
    cudaError_t e = cudaMemcpyAsync(d, h, n * sizeof(float), cudaMemcpyHostToDevice, stream);
    return e != cudaSuccess ? e : cudaStreamSynchronize(stream);
  }
  Stage s;
  cudaError_t e = stage_open(&s, stage);
  const size_t n_chunks = (n + kNwStageChunk - 1) / kNwStageChunk;
  /* chunk c through half c % 2, once the GPU has sent chunk c - 2 from it: the cores fill one
   * half while the GPU copies the other */
  for (size_t c = 0; c < n_chunks && e == cudaSuccess; c++) {
    const size_t len = MIN(kNwStageChunk, n - c * kNwStageChunk);
    float *half = s.stage + (c % 2) * kNwStageChunk;
    if (c >= 2)
      e = cudaEventSynchronize(s.done[c % 2]);
    if (e != cudaSuccess)
      break;
    nw_copy_floats(half, h + c * kNwStageChunk, len);
    e = cudaMemcpyAsync(d + c * kNwStageChunk, half, len * sizeof(float), cudaMemcpyHostToDevice,
                        stream);
    if (e == cudaSuccess)
      e = cudaEventRecord(s.done[c % 2], stream);
  }
  if (e == cudaSuccess)
    e = cudaStreamSynchronize(stream);
  stage_close(&s, stream, e);
  return e;
}

cudaError_t nw_download_floats(float *h, const float *d, size_t n, float *stage,
                               cudaStream_t stream)
{
  if (n <= kNwStageChunk) {
    cudaError_t e = cudaMemcpyAsync(h, d, n * sizeof(float), cudaMemcpyDeviceToHost, stream);
    return e != cudaSuccess ? e : cudaStreamSynchronize(stream);
  }
  Stage s;
  cudaError_t e = stage_open(&s, stage);
  const size_t n_chunks = (n + kNwStageChunk - 1) / kNwStageChunk;
  /* chunk c into half c % 2; the half is free again once the host copied chunk c - 2 */
  for (size_t c = 0; c < n_chunks + 1 && e == cudaSuccess; c++) {
    if (c < n_chunks) {
      const size_t len = MIN(kNwStageChunk, n - c * kNwStageChunk);
      e = cudaMemcpyAsync(s.stage + (c % 2) * kNwStageChunk, d + c * kNwStageChunk,
                          len * sizeof(float), cudaMemcpyDeviceToHost, stream);
      if (e == cudaSuccess)
        e = cudaEventRecord(s.done[c % 2], stream);
    }
    if (c > 0 && e == cudaSuccess) {
      const size_t p = c - 1;
      e = cudaEventSynchronize(s.done[p % 2]);
      if (e == cudaSuccess)
        nw_copy_floats(h + p * kNwStageChunk, s.stage + (p % 2) * kNwStageChunk,
                       MIN(kNwStageChunk, n - p * kNwStageChunk));
    }
  }
  stage_close(&s, stream, e);
  return e;
}
