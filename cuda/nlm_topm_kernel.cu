/* nlm_topm_kernel.cu — the fused all-pairs patch distance + exact top-m of nlm-surface: the
 * CUDA twin of nw_nlm_neighbours_cpu (core/cpu/nlm_kernels.h). CUDA back end, caller's stream.
 *
 * Shape. One block of 256 threads owns 64 query rows for its whole life and streams every
 * row of the band past them as candidates, 64 at a time: a 64 x 64 tile of distances per
 * step, held in registers (each thread 4 queries x 4 candidates), never written to global
 * memory. The 8 warps each own 8 of the block's queries: warp w's lanes 0-15 compute its
 * queries 8w..8w+3, lanes 16-31 queries 8w+4..8w+7, lane % 16 picks 4 of the 64 candidates.
 * So after a tile every distance of a query sits in the registers of the one warp that keeps
 * that query's list, and selection needs no block-wide synchronisation and no staging.
 * The patch values come through shared memory one chunk of NW_NLM_KCHUNK (16) slots of all
 * 128 rows (64 queries, 64 candidates) at a time, transposed (k-major) so that a thread reads
 * its 4 query values and 4 candidate values with two 16-byte loads; the next chunk is fetched
 * into registers while the current one is used.
 *
 * Exactness. The distances are not ||a||^2 + ||b||^2 - 2 a.b: each is sum (a_q - b_q)^2 with
 * separately rounded subtract, multiply and add (__fsub_rn, __fmul_rn, __fadd_rn: nvcc may not
 * fuse them), each lane's terms in increasing q and the 8 lane sums folded pairwise exactly as
 * the CPU's squared_distance does (the padded layout, nlm_kernels.cuh, lines the lanes up).
 * The GPU distance is therefore the CPU's float bit for bit (the CPU reference must not be
 * built with FMA contraction: x86-64 without -march has no FMA; see the report), the ordering
 * is the same strict total order (distance, then index), and the top-m of a total order is
 * unique whatever order candidates arrive in: the kept set, its order and its distances equal
 * the CPU's, ties included. The price is 3 FP32 instructions per value pair instead of one
 * FMA: the GEMM form would be ~3x faster but would need a re-check and a fallback for the
 * near-ties where its rounding decides (not done: correctness first).
 *
 * Selection. Per query, an unsorted list of up to m (distance, index) pairs in shared memory
 * and its worst entry (value and slot) in shared memory, touched only by the owning warp.
 * After a tile, for each of its 8 queries the warp ballots the candidates that beat the worst
 * (all of them while the list is not full), takes them one by one (re-checked against the
 * worst, which only improves), writes the newcomer over the worst and finds the new worst by a
 * warp arg-max over the list (m / 32 entries a lane + 5 shuffles). Random data inserts about
 * m ln(N / m) times per query, negligible beside the N P distance work; a band ordered so that
 * every candidate is better than the last would insert N times and run a few times slower, but
 * still correct. At the end each warp sorts its lists by rank (each entry counts the entries
 * before it: keys are unique) and writes nbr / nd rows directly.
 *
 * Memory: the padded N x Pp matrix (N * 128 * 4 B at P = 125) and the N x m outputs; per
 * block 8.4 KB of chunk + 64 * m * 8 B of lists (48 KB at m = 96, 64 KB at 128): above the
 * default 48 KB, so the launcher raises the kernel's dynamic shared memory limit. */
#include <climits>
#include <math.h>

#include "cuda_check.h"
#include "nlm_kernels.cuh"

#define TOPM_THREADS 256
#define TOPM_TILE 64
/* Chunk row stride (floats): 128 rows + 4, so the transposing stores conflict at most 2-way and
 * every row start stays 16-byte aligned. */
#define TOPM_SROW (2 * TOPM_TILE + 4)
#define FULL_MASK 0xffffffffu

/* (d, l) orders before (e, k): the smaller distance, on ties the smaller index (the CPU's
 * `before`, nlm_neighbours_cpu.c). */
__device__ __forceinline__ bool nlm_before(float d, int l, float e, int k)
{
  return d < e || (d == e && l < k);
}

/* Chunk f of the block's stream into registers: tile f / (8 S) of candidates, lane group
 * (f / S) % 8, sub-chunk f % S; thread t fetches float4 number t and t + 256 of the chunk's
 * 128 rows x 4 float4 (rows 0-63 the queries, 64-127 the candidates); rows past n read as 0. */
__device__ __forceinline__ void load_chunk(float4 pre[2], const float *__restrict__ rows, int n,
                                           int pp, int q0, long long f, int S, int tid)
{
  const int per_tile = 8 * S;
  const int tile = (int)(f / per_tile), rem = (int)(f % per_tile);
  const int k0 = (rem / S) * (pp / 8) + (rem % S) * NW_NLM_KCHUNK;
#pragma unroll
  for (int e = 0; e < 2; e++) {
    const int idx = tid + e * TOPM_THREADS, r = idx / 4, part = idx % 4;
    const int row = r < TOPM_TILE ? q0 + r : tile * TOPM_TILE + (r - TOPM_TILE);
    pre[e] = row < n ? __ldg(reinterpret_cast<const float4 *>(rows + (size_t)row * pp + k0) + part)
                     : make_float4(0.f, 0.f, 0.f, 0.f);
  }
}

__device__ __forceinline__ void store_chunk(float (*chunk)[TOPM_SROW], const float4 pre[2], int tid)
{
#pragma unroll
  for (int e = 0; e < 2; e++) {
    const int idx = tid + e * TOPM_THREADS, r = idx / 4, k = (idx % 4) * 4;
    chunk[k + 0][r] = pre[e].x;
    chunk[k + 1][r] = pre[e].y;
    chunk[k + 2][r] = pre[e].z;
    chunk[k + 3][r] = pre[e].w;
  }
}

/* The worst (largest by nlm_before) of a full list of m entries, its value and slot, the same
 * on every lane. */
__device__ __forceinline__ void warp_worst(const float *ld, const int *ll, int m, int lane,
                                           float &wd, int &wl, int &wp)
{
  float bd = -INFINITY;
  int bl = -1, bp = -1;
  for (int e = lane; e < m; e += 32)
    if (nlm_before(bd, bl, ld[e], ll[e]))
      bd = ld[e], bl = ll[e], bp = e;
#pragma unroll
  for (int off = 16; off > 0; off /= 2) {
    float od = __shfl_xor_sync(FULL_MASK, bd, off);
    int ol = __shfl_xor_sync(FULL_MASK, bl, off), op = __shfl_xor_sync(FULL_MASK, bp, off);
    if (nlm_before(bd, bl, od, ol))
      bd = od, bl = ol, bp = op;
  }
  wd = bd, wl = bl, wp = bp;
  __syncwarp(); /* every lane has read the list before lane 0 overwrites a slot */
}

/* Offer this tile's distances of query lq (its registers: row i of dist on the lanes of half
 * `half`) to its list. Warp-uniform. */
__device__ __forceinline__ void offer(const float dist[4], bool mine, int jq, int c_first, int n,
                                      int m, float *ld, int *ll, int *s_cnt, float *s_wd, int *s_wl,
                                      int *s_wp, int lq, int lane)
{
  int cnt = s_cnt[lq], wl = s_wl[lq], wp = s_wp[lq];
  float wd = s_wd[lq];
#pragma unroll
  for (int j = 0; j < 4; j++) {
    const int c = c_first + j;
    const float d = dist[j];
    const bool pass = mine && c < n && c != jq && (cnt < m || nlm_before(d, c, wd, wl));
    unsigned mask = __ballot_sync(FULL_MASK, pass);
    while (mask != 0) {
      const int src = __ffs(mask) - 1;
      mask &= mask - 1;
      const float ds = __shfl_sync(FULL_MASK, d, src);
      const int cs = __shfl_sync(FULL_MASK, c, src);
      if (cnt < m) {
        if (lane == 0)
          ld[cnt] = ds, ll[cnt] = cs;
        cnt++;
        if (cnt == m) {
          __syncwarp();
          warp_worst(ld, ll, m, lane, wd, wl, wp);
        }
      } else if (nlm_before(ds, cs, wd, wl)) {
        if (lane == 0)
          ld[wp] = ds, ll[wp] = cs;
        __syncwarp();
        warp_worst(ld, ll, m, lane, wd, wl, wp);
      }
    }
  }
  /* Every lane read this query's state at the top; ballots and shuffles synchronise the lanes
   * but do not order memory, so the write waits for a __syncwarp (compute-sanitizer's racecheck
   * reports the hazard without it). */
  __syncwarp();
  if (lane == 0)
    s_cnt[lq] = cnt, s_wd[lq] = wd, s_wl[lq] = wl, s_wp[lq] = wp;
  __syncwarp();
}

/* The sorted list of query jq into nbr / nd row jq: entry e goes to its rank. */
__device__ __forceinline__ void write_sorted(int *nbr, float *nd, const float *ld, const int *ll,
                                             int m, int jq, int lane)
{
  for (int e = lane; e < m; e += 32) {
    const float d = ld[e];
    const int l = ll[e];
    int rank = 0;
    for (int f = 0; f < m; f++)
      rank += nlm_before(ld[f], ll[f], d, l);
    nbr[(size_t)jq * m + rank] = l;
    nd[(size_t)jq * m + rank] = d;
  }
}

__global__ void __launch_bounds__(TOPM_THREADS, 2)
    nlm_topm_kernel(int *__restrict__ nbr, float *__restrict__ nd, const float *__restrict__ rows,
                    int n, int pp, int m, const int *__restrict__ only_blocks)
{
  if (only_blocks != nullptr && only_blocks[blockIdx.x] == 0) /* the tc path's fallback */
    return;
  __shared__ __align__(16) float chunk[NW_NLM_KCHUNK][TOPM_SROW];
  __shared__ int s_cnt[TOPM_TILE], s_wl[TOPM_TILE], s_wp[TOPM_TILE];
  __shared__ float s_wd[TOPM_TILE];
  extern __shared__ float lists[]; /* 64 x m distances, then 64 x m indices */
  float *ld_all = lists;
  int *ll_all = reinterpret_cast<int *>(lists + (size_t)TOPM_TILE * m);

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int half = lane / 16, lc = lane % 16;
  const int q0 = blockIdx.x * TOPM_TILE;
  const int S = pp / 8 / NW_NLM_KCHUNK; /* chunks per lane group */
  const int n_tiles = (n + TOPM_TILE - 1) / TOPM_TILE;
  const long long total = (long long)n_tiles * 8 * S;
  if (tid < TOPM_TILE) /* visible to all after the first chunk's __syncthreads */
    s_cnt[tid] = 0, s_wd[tid] = INFINITY, s_wl[tid] = INT_MAX, s_wp[tid] = 0;

  float4 pre[2];
  load_chunk(pre, rows, n, pp, q0, 0, S, tid);
  long long f = 0;
  for (int tile = 0; tile < n_tiles; tile++) {
    /* h1, h2, h3: the pending sums of the CPU's pairwise fold of the 8 lane sums (lane order
     * 0 4 2 6 1 5 3 7, nlm_kernels.cuh); at the end h1 is the distance. */
    float h1[4][4], h2[4][4], h3[4][4];
#pragma unroll
    for (int g = 0; g < 8; g++) {
      float cur[4][4];
#pragma unroll
      for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
          cur[i][j] = 0.0f;
      for (int s = 0; s < S; s++) {
        __syncthreads(); /* everyone is done with the previous chunk */
        store_chunk(chunk, pre, tid);
        __syncthreads();
        if (++f < total)
          load_chunk(pre, rows, n, pp, q0, f, S, tid);
#pragma unroll
        for (int k = 0; k < NW_NLM_KCHUNK; k++) {
          const float4 a4 = *reinterpret_cast<const float4 *>(&chunk[k][warp * 8 + half * 4]);
          const float4 b4 = *reinterpret_cast<const float4 *>(&chunk[k][TOPM_TILE + lc * 4]);
          const float a[4] = {a4.x, a4.y, a4.z, a4.w}, b[4] = {b4.x, b4.y, b4.z, b4.w};
#pragma unroll
          for (int i = 0; i < 4; i++)
#pragma unroll
            for (int j = 0; j < 4; j++) {
              const float d = __fsub_rn(a[i], b[j]);
              cur[i][j] = __fadd_rn(cur[i][j], __fmul_rn(d, d));
            }
        }
      }
#pragma unroll
      for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) {
          switch (g) { /* g is a constant after unrolling: straight-line code */
          case 0:
            h1[i][j] = cur[i][j];
            break;
          case 1:
            h1[i][j] = __fadd_rn(h1[i][j], cur[i][j]);
            break; /* s0 + s4 */
          case 2:
            h2[i][j] = cur[i][j];
            break;
          case 3: /* (s0 + s4) + (s2 + s6) */
            h2[i][j] = __fadd_rn(h2[i][j], cur[i][j]);
            h1[i][j] = __fadd_rn(h1[i][j], h2[i][j]);
            break;
          case 4:
            h2[i][j] = cur[i][j];
            break;
          case 5:
            h2[i][j] = __fadd_rn(h2[i][j], cur[i][j]);
            break; /* s1 + s5 */
          case 6:
            h3[i][j] = cur[i][j];
            break;
          default: /* ((s0+s4)+(s2+s6)) + ((s1+s5)+(s3+s7)) */
            h3[i][j] = __fadd_rn(h3[i][j], cur[i][j]);
            h2[i][j] = __fadd_rn(h2[i][j], h3[i][j]);
            h1[i][j] = __fadd_rn(h1[i][j], h2[i][j]);
          }
        }
    }
    /* Selection: the warp's 8 queries, one at a time (qq / 4 picks the half that holds it). */
    const int c_first = tile * TOPM_TILE + lc * 4;
#pragma unroll
    for (int qq = 0; qq < 8; qq++) {
      const int lq = warp * 8 + qq, jq = q0 + lq;
      if (jq < n)
        offer(h1[qq % 4], half == qq / 4, jq, c_first, n, m, ld_all + (size_t)lq * m,
              ll_all + (size_t)lq * m, s_cnt, s_wd, s_wl, s_wp, lq, lane);
    }
  }
  for (int qq = 0; qq < 8; qq++) {
    const int lq = warp * 8 + qq, jq = q0 + lq;
    if (jq < n)
      write_sorted(nbr, nd, ld_all + (size_t)lq * m, ll_all + (size_t)lq * m, m, jq, lane);
  }
}

cudaError_t nw_nlm_topm_cuda(int *nbr, float *nd, const float *padded, int n, int p, int m,
                             cudaStream_t stream)
{
  return nw_nlm_topm_blocks_cuda(nbr, nd, padded, n, p, m, nullptr, stream);
}

cudaError_t nw_nlm_topm_blocks_cuda(int *nbr, float *nd, const float *padded, int n, int p, int m,
                                    const int *only_blocks, cudaStream_t stream)
{
  /* The lists fill only when every query has m other rows: m <= n - 1. */
  if (n < 2 || p < 1 || m < 1 || m > n - 1 || m > NW_NLM_CUDA_MAX_M)
    return cudaErrorInvalidValue;
  const int pp = nw_nlm_padded_width(p);
  const size_t dyn = (size_t)TOPM_TILE * m * (sizeof(float) + sizeof(int));
  cudaError_t status =
      cudaFuncSetAttribute(nlm_topm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dyn);
  if (status != cudaSuccess)
    return status;
  const int blocks = (n + TOPM_TILE - 1) / TOPM_TILE;
  nlm_topm_kernel<<<blocks, TOPM_THREADS, dyn, stream>>>(nbr, nd, padded, n, pp, m, only_blocks);
  return nw_cuda_launched(stream);
}
