/* staging_cuda.cu — see staging_cuda.cuh. */
#include "staging_cuda.cuh"

#include "kept_blocks_cuda.cuh"
#include "volume.h"

/* The events of a stage ("the GPU is done with chunk b"), in its pinned block after the two
 * chunks: made with the stage, not per copy (creating and destroying two events a copy costs
 * a few driver calls each time). */
typedef struct {
  cudaEvent_t done[2];
} StageEvents;

/* A stage's pinned block: the two chunks, then the events. */
constexpr size_t kStageBytes = 2 * kNwStageChunk * sizeof(float) + sizeof(StageEvents);

static StageEvents *events_of(float *stage)
{
  return (StageEvents *)(stage + 2 * kNwStageChunk); /* 16 MiB in: aligned for pointers */
}

/* The block comes from the pinned blocks kept from one job to the next (kept_blocks_cuda.cuh):
 * pinning 16 MiB took 8.6 ms on the H100 host (bench_affine, 2026-11-26), most of an affine
 * job's set-up at 3072^2, and the jobs of one process follow one another. */
cudaError_t nw_stage_alloc(float **stage)
{
  float *s = nullptr;
  cudaError_t e = nw_pinned_take((void **)&s, kStageBytes, cudaHostAllocDefault);
  if (e != cudaSuccess) {
    *stage = nullptr;
    return e;
  }
  StageEvents *ev = events_of(s);
  ev->done[0] = ev->done[1] = nullptr;
  for (int b = 0; b < 2 && e == cudaSuccess; b++)
    e = cudaEventCreateWithFlags(&ev->done[b], cudaEventDisableTiming);
  if (e != cudaSuccess) {
    nw_stage_free(s);
    s = nullptr;
  }
  *stage = s;
  return e;
}

void nw_stage_free(float *stage)
{
  if (stage == nullptr)
    return;
  StageEvents *ev = events_of(stage);
  for (int b = 0; b < 2; b++)
    if (ev->done[b] != nullptr)
      cudaEventDestroy(ev->done[b]);
  nw_pinned_give(stage, kStageBytes, cudaHostAllocDefault);
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
