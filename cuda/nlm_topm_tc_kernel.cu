/* nlm_topm_tc_kernel.cu — nlm-surface's all-pairs top-m on the tensor cores, exact: an FP16
 * tensor-core pass that bounds every patch distance and keeps, per query row, only the
 * candidates that can be among its m nearest; then those candidates' distances computed with
 * the exact kernel's FP32 arithmetic (bit for bit the CPU's) and the top-m taken from them.
 * The kept set, its order and its distances therefore equal nlm_topm_kernel.cu's (and the CPU
 * reference's) by construction; rows whose candidate list overflows are recomputed by the
 * exact kernel, block by block. The variant `NW_NLM_KERNEL=tc` selects (nw_nlm_cuda.h); the
 * exact kernel stays the default until the GPU has shown this one equal and faster. CUDA back
 * end, caller's stream; sm_80 or newer (mma.sync f16, cp.async): older devices get the exact
 * kernel.
 *
 * Passes (one stream, no host synchronisation):
 *   prep     every padded row a (N x K floats, K = Pp) rounded to FP16, a^ (N_pad x K halves,
 *            rows past N zero); n^ = ||a^||^2 (double sum, rounded to float), r = ||a|| (of
 *            the float row, rounded up), per 64-row tile the largest n^ and r; a flag when a
 *            value is outside FP16's safe range (|a| > 32768 or not finite): then every block
 *            takes the exact fallback.
 *   filter   blocks of 64 query rows (4 warps x 16; or 128 rows, 8 warps, in the wide
 *            configuration below, NW_NLM_TC_CONFIG) stream all rows 64 at a time through
 *            mma.sync m16n8k16 (FP16 in, FP32 accumulate): s~ = a^.b^, X = fl(n^_b - 2 s~).
 *            A pair is a candidate when X <= T(row), a per-row limit from the row's running
 *            threshold (below); candidates (X, index) go to the row's list in global memory
 *            (N x TC_CAP). When a list passes TC_CAP - 64, the row's warp tightens the
 *            threshold and drops what it no longer admits; a list still that long after it
 *            marks the row's block for the exact fallback.
 *   recheck  one warp per row: each listed candidate's distance with the exact kernel's FP32
 *            arithmetic (8 lanes per candidate, one per storage group, folded in the CPU's
 *            pairwise order), then the m best by (distance, index): the rank of each entry.
 *   fallback nlm_topm_kernel on the marked blocks only (nw_nlm_topm_blocks_cuda).
 *
 * Why the kept set is exact. Let d_f be the distance as the exact kernel computes it (FP32,
 * the CPU's bits), d = ||a - b||^2 the real number. For a pair, the filter knows X and the
 * norms, and bounds d_f on both sides:
 *   1. FP16 rounding of the inputs: |a^_q - a_q| <= u |a_q| + 2^-25 (u = 2^-11; the 2^-25 for
 *      FP16's subnormals), so ||a^ - a|| <= u ||a|| + 2^-25 sqrt(K) and, by the triangle
 *      inequality, | ||a - b|| - ||a^ - b^|| | <= eta = u (r_a + r_b) + 2^-24 sqrt(K).
 *   2. The tensor cores multiply FP16 values exactly (22-bit products in FP32) and accumulate
 *      in FP32; their rounding (truncating alignment, Fasi et al. 2021, "Numerical behavior
 *      of NVIDIA tensor cores") stays within a few units in the last place per mma, so
 *      |s~ - a^.b^| <= g_acc sum |a^_q b^_q| with g_acc = (K + 2) 2^-21, about 20 times
 *      the (3 K / 16) 2^-23 of K / 16 mma at 3 ulp each. With sum |a^ b^| <=
 *      ||a^|| ||b^|| <= (n^_a + n^_b) / 2, and the float n^ and the FMA that forms X each
 *      rounded once (2^-24 relative, all covered by 2^-21), Delta = ||a^ - b^||^2 =
 *      n^_a + n^_b - 2 a^.b^ satisfies |X + n^_a - Delta| <= c_e (n^_a + n^_b),
 *      c_e = g_acc + 2^-21.
 *   3. The exact FP32 sum of squares has only non-negative terms: |d_f - d| <= g_f d with
 *      g_f = (K / 8 + 8) 2^-23 (K / 8 sequential adds per lane, 3 fold levels, the subtract
 *      and the square: twice generous).
 * Hence the upper bound U = (sqrt(X + n^_a + c_e (n^_a + n^_b)) + eta)^2 (1 + g_f) >= d_f,
 * and d_f <= tau implies X <= T(tau) = (sqrt(tau / (1 - g_f)) + eta)^2 + c_e (n^_a + n^_b)
 * - n^_a. The running threshold tau of a row is the m-th smallest U among the pairs seen so
 * far (m real rows have d_f <= tau, so the row's m-th smallest d_f is <= tau, whatever comes
 * later): every pair of the true top-m passes X <= T(tau) at every moment, so it enters the
 * list and is never dropped. tau comes from the list itself: every pair with U <= tau_old
 * passed, so the list holds the m smallest U seen. T, U and tau are computed in double and
 * rounded outward (up for limits and U), and during the scan T uses the largest n^ and r of
 * the candidate tile (T grows with both), so the float comparisons only ever admit more.
 * The recheck then computes d_f itself and selects with the exact kernel's total order, so the
 * top-m of the (superset) list is the top-m of all rows. Ties are exact too: a pair tied with
 * the m-th has d_f <= tau and is in the list.
 *
 * On the benchmark's band patches (P = 125, m = 96) a NumPy model of this bound keeps about
 * m + 4 candidates per row after the scan. Memory beside the exact kernel's: N_pad x K
 * halves, N x TC_CAP x 8 B of lists (358 MB at N = 175k), a few floats per row. */
#include <cuda_fp16.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_check.h"
#include "nlm_kernels.cuh"

#define TC_ROWS                                                                                    \
  64               /* the first filter's query rows per block: the exact kernel's tile, the        \
                     fallback's unit, the unit of the tile maxima and block flags */
#define TC_PAD 128 /* a^, n^ and r are padded to this many rows: the widest filter's block */
/* The filter's configuration unless NW_NLM_TC_CONFIG says: 64 (the first filter below) or 128
 * (nlm_tc_filter_wide_kernel). */
#define NW_NLM_TC_DEFAULT_ROWS 64
#define TC_COLS 64 /* candidate rows per step */
#define TC_THREADS 128
#define TC_CAP 256                 /* list capacity per row */
#define TC_SOFT (TC_CAP - TC_COLS) /* a list longer than this is tightened after a step */
#define TC_HALF_SAFE 32768.0f      /* |values| beyond this go to the exact kernel */
#define TC_MAX_K 384 /* 3 tiles of 64 x (K + 8) halves: 150 KB of shared memory at 384 */
#define FULL_MASK 0xffffffffu

struct NwNlmTcWork {
  int cap_n, kp, m;         /* rows (before padding to TC_PAD), padded width, neighbours */
  int rows;                 /* the filter's configuration: query rows a block, 64 or 128 */
  __half *h;                /* n_pad x kp */
  float *nh, *ra;           /* n_pad: ||a^||^2 (nearest), ||a|| (rounded up) */
  float *tile_nh, *tile_ra; /* n_pad / 64 maxima */
  float *lx;                /* cap_n x TC_CAP: X of each listed candidate */
  int *li;                  /* cap_n x TC_CAP: its row */
  int *count;               /* cap_n: list lengths after the scan */
  int *block_flag;          /* n_pad / 64: 1 = the exact fallback computes this block */
  int *status;              /* [0]: a value outside FP16's safe range */
};

/* The bound's constants for padded width K (see the header). */
struct TcBound {
  double u1, eta0, ce, gf;
};

static TcBound tc_bound(int k)
{
  TcBound b;
  const double u = ldexp(1.0, -11);
  b.u1 = u * (1.0 + ldexp(1.0, -20)); /* u, rounded up a little for the double arithmetic */
  b.eta0 = ldexp(1.0, -24) * sqrt((double)k) * (1.0 + ldexp(1.0, -20));
  b.ce = (k + 2) * ldexp(1.0, -21) + ldexp(1.0, -21);
  b.gf = (k / 8 + 8) * ldexp(1.0, -23);
  return b;
}

/* T: the largest X a pair may have and still reach d_f <= tau, with s = sqrt(tau / (1 - g_f))
 * (INFINITY: everything passes) and the candidate's n^, r (or an upper bound of them). */
__device__ __forceinline__ float tc_limit(const TcBound &b, double s, float nq, float rq, float nc,
                                          float rc)
{
  if (isinf(s))
    return INFINITY;
  const double eta = b.u1 * ((double)rq + rc) + b.eta0;
  const double se = s + eta;
  double t = se * se + b.ce * ((double)nq + nc) - (double)nq * (1.0 - ldexp(1.0, -23));
  t += 1e-12 * (se * se + (double)nq + nc); /* the double arithmetic's own rounding, outward */
  return __double2float_ru(t);
}

/* U: an upper bound of d_f for a pair with this X. */
__device__ __forceinline__ float tc_upper(const TcBound &b, float x, float nq, float rq, float nc,
                                          float rc)
{
  const double eta = b.u1 * ((double)rq + rc) + b.eta0;
  const double delta =
      fmax((double)x + (double)nq * (1.0 + ldexp(1.0, -23)) + b.ce * ((double)nq + nc), 0.0);
  const double se = sqrt(delta) + eta;
  const double up = se * se * (1.0 + b.gf);
  return __double2float_ru(up * (1.0 + 1e-12));
}

/* s = sqrt(tau / (1 - g_f)), rounded up. */
__device__ __forceinline__ double tc_root(const TcBound &b, float tau)
{
  return sqrt((double)tau / (1.0 - b.gf)) * (1.0 + 1e-12);
}

/* ---- prep ------------------------------------------------------------------------------ */

__global__ void nlm_tc_prep_kernel(NwNlmTcWork w, const float *__restrict__ pad, int n, int n_pad)
{
  const int lane = threadIdx.x % 32;
  const int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  if (row >= n_pad)
    return;
  const int k = w.kp;
  double sh = 0.0, sa = 0.0;
  bool bad = false;
  for (int q = lane; q < k; q += 32) {
    const float v = row < n ? pad[(size_t)row * k + q] : 0.0f;
    bad |= !(fabsf(v) <= TC_HALF_SAFE); /* also NaN */
    const __half hv = __float2half_rn(v);
    w.h[(size_t)row * k + q] = hv;
    const double hf = __half2float(hv);
    sh += hf * hf;
    sa += (double)v * v;
  }
#pragma unroll
  for (int off = 16; off > 0; off /= 2) {
    sh += __shfl_xor_sync(FULL_MASK, sh, off);
    sa += __shfl_xor_sync(FULL_MASK, sa, off);
  }
  if (__any_sync(FULL_MASK, bad) && lane == 0)
    atomicOr(w.status, 1);
  if (lane == 0) {
    const float nh = __double2float_rn(sh);
    const float ra = __double2float_ru(sqrt(sa) * (1.0 + 1e-12));
    w.nh[row] = nh, w.ra[row] = ra;
    /* non-negative floats order as their bit patterns */
    atomicMax(reinterpret_cast<int *>(w.tile_nh) + row / TC_ROWS, __float_as_int(nh));
    atomicMax(reinterpret_cast<int *>(w.tile_ra) + row / TC_ROWS, __float_as_int(ra));
  }
}

/* ---- filter ---------------------------------------------------------------------------- */

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
__device__ __forceinline__ unsigned smem_addr(const void *p)
{
  return (unsigned)__cvta_generic_to_shared(p);
}

/* Tile `tile` of a^ (64 rows x K halves) into shared memory rows of stride sk halves, 16 bytes
 * per cp.async; one commit group. */
__device__ __forceinline__ void load_tile(__half *dst, const __half *__restrict__ h, int tile,
                                          int k, int sk, int tid)
{
  const int per_row = k / 8, chunks = TC_ROWS * per_row;
  for (int c = tid; c < chunks; c += TC_THREADS) {
    const int r = c / per_row, col = (c % per_row) * 8;
    const __half *src = h + ((size_t)tile * TC_ROWS + r) * k + col;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(dst + r * sk + col)),
                 "l"(src));
  }
  asm volatile("cp.async.commit_group;\n" ::);
}

__device__ __forceinline__ void ldmatrix_x4(unsigned r[4], const __half *p)
{
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}

__device__ __forceinline__ void mma_16816(float c[4], const unsigned a[4], unsigned b0, unsigned b1)
{
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
               "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* Tighten row lq's list (query jq): tau = the m-th smallest U of the list, drop what T(tau) no
 * longer admits, keep the order. Warp-uniform; the list has at least m entries. */
__device__ void tc_compact(const NwNlmTcWork &w, const TcBound &b, int m, int jq, int lq,
                           int *s_cnt, double *s_root, int *s_dead, int lane)
{
  const int c0 = s_cnt[lq];
  float *lx = w.lx + (size_t)jq * TC_CAP;
  int *li = w.li + (size_t)jq * TC_CAP;
  const float nq = w.nh[jq], rq = w.ra[jq];
  float x[TC_CAP / 32], nc[TC_CAP / 32], rc[TC_CAP / 32];
  int id[TC_CAP / 32];
  unsigned ub[TC_CAP / 32];
#pragma unroll
  for (int e = 0; e < TC_CAP / 32; e++) {
    const int at = e * 32 + lane;
    ub[e] = 0x7f800000u; /* +inf: not an entry */
    if (at < c0) {
      x[e] = lx[at], id[e] = li[at];
      nc[e] = w.nh[id[e]], rc[e] = w.ra[id[e]];
      ub[e] = __float_as_uint(tc_upper(b, x[e], nq, rq, nc[e], rc[e]));
    }
  }
  /* the m-th smallest U: the least bit pattern v with #{U <= v} >= m (U >= 0) */
  unsigned lo = 0, hi = 0x7f800000u;
  while (lo < hi) {
    const unsigned mid = lo + (hi - lo) / 2;
    int le = 0;
#pragma unroll
    for (int e = 0; e < TC_CAP / 32; e++)
      le += ub[e] <= mid;
    le = __reduce_add_sync(FULL_MASK, le);
    if (le >= m)
      hi = mid;
    else
      lo = mid + 1;
  }
  const double root = tc_root(b, __uint_as_float(lo));
  int kept = 0;
#pragma unroll
  for (int e = 0; e < TC_CAP / 32; e++) {
    const int at = e * 32 + lane;
    const bool keep = at < c0 && x[e] <= tc_limit(b, root, nq, rq, nc[e], rc[e]);
    const unsigned bal = __ballot_sync(FULL_MASK, keep);
    if (keep) {
      const int to = kept + __popc(bal & ((1u << lane) - 1u));
      lx[to] = x[e], li[to] = id[e];
    }
    kept += __popc(bal);
  }
  __syncwarp();
  if (lane == 0) {
    s_cnt[lq] = kept, s_root[lq] = root;
    if (kept > TC_SOFT) { /* the candidates themselves do not fit: the exact kernel's block */
      s_dead[lq] = 1;
      w.block_flag[jq / TC_ROWS] = 1; /* the 64-row block of the row, whatever the CTA's size */
    }
  }
  __syncwarp();
}
#endif

__global__ void __launch_bounds__(TC_THREADS)
    nlm_tc_filter_kernel(NwNlmTcWork w, TcBound b, int n, int m)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  extern __shared__ __align__(16) unsigned char tc_smem[];
  __shared__ int s_cnt[TC_ROWS], s_dead[TC_ROWS];
  __shared__ double s_root[TC_ROWS];
  __shared__ float s_cn[2][TC_COLS];
  const int k = w.kp, sk = k + 8; /* +8 halves: ldmatrix rows fall in different banks */
  __half *sq = reinterpret_cast<__half *>(tc_smem);
  __half *sc[2] = {sq + TC_ROWS * sk, sq + 2 * TC_ROWS * sk};
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int q0 = blockIdx.x * TC_ROWS;
  if (*w.status != 0) { /* a value FP16 cannot hold safely: the exact kernel does it all */
    if (tid == 0)
      w.block_flag[blockIdx.x] = 1;
    return;
  }
  if (tid < TC_ROWS)
    s_cnt[tid] = 0, s_dead[tid] = 0, s_root[tid] = INFINITY;
  const int n_tiles = (n + TC_COLS - 1) / TC_COLS;
  load_tile(sq, w.h, blockIdx.x, k, sk, tid);
  load_tile(sc[0], w.h, 0, k, sk, tid);
  if (tid < TC_COLS)
    s_cn[0][tid] = w.nh[tid];
  /* this thread's two query rows (C fragment rows lane / 4 and + 8 of the warp's 16) */
  const int lr[2] = {warp * 16 + lane / 4, warp * 16 + lane / 4 + 8};
  const int jq[2] = {q0 + lr[0], q0 + lr[1]};
  const float nq[2] = {w.nh[jq[0]], w.nh[jq[1]]}, rq[2] = {w.ra[jq[0]], w.ra[jq[1]]};
  for (int t = 0; t < n_tiles; t++) {
    const int cur = t & 1;
    if (t + 1 < n_tiles) {
      load_tile(sc[cur ^ 1], w.h, t + 1, k, sk, tid);
      if (tid < TC_COLS)
        s_cn[cur ^ 1][tid] = w.nh[(t + 1) * TC_COLS + tid];
      asm volatile("cp.async.wait_group 1;\n" ::);
    } else {
      asm volatile("cp.async.wait_group 0;\n" ::);
    }
    __syncthreads();
    float acc[8][4];
#pragma unroll
    for (int nt = 0; nt < 8; nt++)
      acc[nt][0] = acc[nt][1] = acc[nt][2] = acc[nt][3] = 0.0f;
    const __half *qa = sq + (warp * 16 + lane % 16) * sk + (lane / 16) * 8;
    const __half *cb = sc[cur] + ((lane % 8) + (lane / 16) * 8) * sk + ((lane / 8) % 2) * 8;
    for (int ks = 0; ks < k; ks += 16) {
      unsigned a[4];
      ldmatrix_x4(a, qa + ks);
#pragma unroll
      for (int np = 0; np < 4; np++) {
        unsigned bb[4];
        ldmatrix_x4(bb, cb + np * 16 * sk + ks);
        mma_16816(acc[2 * np], a, bb[0], bb[1]);
        mma_16816(acc[2 * np + 1], a, bb[2], bb[3]);
      }
    }
    /* the rows' limits for this tile, with the tile's largest candidate norms */
    float lim[2];
#pragma unroll
    for (int i = 0; i < 2; i++)
      lim[i] = s_dead[lr[i]] || jq[i] >= n
                   ? -INFINITY
                   : tc_limit(b, s_root[lr[i]], nq[i], rq[i], w.tile_nh[t], w.tile_ra[t]);
    /* the hot test is X <= limit alone; the row itself and the padding rows past n (in one
     * tile each) are left out on the rare path */
    unsigned pass = 0;
#pragma unroll
    for (int nt = 0; nt < 8; nt++)
#pragma unroll
      for (int v = 0; v < 4; v++) {
        const int col = nt * 8 + 2 * (lane % 4) + (v & 1);
        if (fmaf(-2.0f, acc[nt][v], s_cn[cur][col]) <= lim[v / 2])
          pass |= 1u << (nt * 4 + v);
      }
    if (__any_sync(FULL_MASK, pass != 0)) {
      while (pass != 0) {
        const int bit = __ffs(pass) - 1;
        pass &= pass - 1;
        const int nt = bit / 4, v = bit % 4, i = v / 2;
        const int col = nt * 8 + 2 * (lane % 4) + (v & 1), c = t * TC_COLS + col;
        if (c >= n || c == jq[i])
          continue;
        const int slot = atomicAdd(&s_cnt[lr[i]], 1); /* < TC_CAP: lists are tightened at SOFT */
        w.lx[(size_t)jq[i] * TC_CAP + slot] = fmaf(-2.0f, acc[nt][v], s_cn[cur][col]);
        w.li[(size_t)jq[i] * TC_CAP + slot] = c;
      }
      __syncwarp();
      const int mine = warp * 16 + lane % 16; /* each of the warp's rows, twice over */
      unsigned full = __ballot_sync(FULL_MASK, lane < 16 && s_cnt[mine] > TC_SOFT && !s_dead[mine]);
      while (full != 0) {
        const int r = warp * 16 + __ffs(full) - 1;
        full &= full - 1;
        tc_compact(w, b, m, q0 + r, r, s_cnt, s_root, s_dead, lane);
      }
    }
    __syncthreads(); /* everyone is done with sc[cur] before it is loaded again */
  }
  /* the last tightening, so the recheck reads short lists; then the lengths */
  for (int r = warp * 16; r < warp * 16 + 16; r++)
    if (q0 + r < n && !s_dead[r] && s_cnt[r] > m + 32)
      tc_compact(w, b, m, q0 + r, r, s_cnt, s_root, s_dead, lane);
  if (lane < 16 && q0 + warp * 16 + lane < n)
    w.count[q0 + warp * 16 + lane] = s_cnt[warp * 16 + lane];
#endif
}

/* ---- filter, wide configuration ----------------------------------------------------------
 * The same filter with the tile width and the patch width compile-time constants: TC_WIDE_WARPS
 * warps of 16 query rows each (128 rows a block), every warp the whole 16 x 64 product of its
 * rows with each streamed tile, so a row's list, count and threshold still belong to one warp
 * and the admission, tightening and fallback above apply unchanged (the fallback's unit stays
 * the 64-row block: a dead row flags its own). The streamed tiles (a^, n^ and the tile's
 * maxima) go through a ring of TC_STAGES shared buffers by cp.async, tile t + 3 loading while
 * tile t is multiplied, with one barrier a tile; the hot test takes the minimum X of each row's
 * 16 values a thread holds and looks at single pairs only when one may pass. */
#define TC_STAGES 4
#define TC_WIDE_WARPS 8
#define TC_WIDE_ROWS (16 * TC_WIDE_WARPS)
#define TC_WIDE_K 128 /* the padded width this configuration is built for (patches up to 5^3) */

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
/* Streamed tile t into stage buffer dst (64 x SK halves), its n^ into cn (64 floats) and its
 * maxima into mx (2 floats); one commit group, empty past the last tile. */
template <int K, int THREADS>
__device__ __forceinline__ void load_stream_tile(__half *dst, float *cn, float *mx,
                                                 const NwNlmTcWork &w, int t, int n_tiles, int tid)
{
  constexpr int SK = K + 8, PER_ROW = K / 8, CHUNKS = TC_COLS * PER_ROW;
  static_assert(CHUNKS % THREADS == 0, "whole 16-byte chunks per thread");
  if (t < n_tiles) {
    const __half *src = w.h + (size_t)t * TC_COLS * K; /* the tile's rows are contiguous */
#pragma unroll
    for (int i = 0; i < CHUNKS / THREADS; i++) {
      const int c = tid + i * THREADS, r = c / PER_ROW, col = (c % PER_ROW) * 8;
      asm volatile(
          "cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(dst + r * SK + col)),
          "l"(src + c * 8));
    }
    if (tid < TC_COLS / 4)
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(cn + tid * 4)),
                   "l"(w.nh + (size_t)t * TC_COLS + tid * 4));
    else if (tid < TC_COLS / 4 + 2)
      asm volatile(
          "cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(smem_addr(mx + tid - TC_COLS / 4)),
          "l"((tid == TC_COLS / 4 ? w.tile_nh : w.tile_ra) + t));
  }
  asm volatile("cp.async.commit_group;\n" ::);
}
#endif

template <int K, int WARPS, int STAGES, int MIN_BLOCKS>
__global__ void __launch_bounds__(WARPS * 32, MIN_BLOCKS)
    nlm_tc_filter_wide_kernel(NwNlmTcWork w, TcBound b, int n, int m)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  constexpr int QROWS = 16 * WARPS, THREADS = 32 * WARPS, SK = K + 8, PER_ROW = K / 8;
  extern __shared__ __align__(16) unsigned char tc_smem[];
  __shared__ int s_cnt[QROWS], s_dead[QROWS];
  __shared__ double s_root[QROWS];
  __shared__ __align__(16) float s_cn[STAGES][TC_COLS];
  __shared__ float s_mx[STAGES][2]; /* the tile's largest n^ and r */
  __half *sq = reinterpret_cast<__half *>(tc_smem);
  __half *sc = sq + QROWS * SK; /* stage s at sc + s * TC_COLS * SK */
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int q0 = blockIdx.x * QROWS;
  if (*w.status != 0) { /* a value FP16 cannot hold safely: the exact kernel does it all */
    if (tid < QROWS / TC_ROWS && q0 + tid * TC_ROWS < n)
      w.block_flag[q0 / TC_ROWS + tid] = 1;
    return;
  }
  if (tid < QROWS)
    s_cnt[tid] = 0, s_dead[tid] = 0, s_root[tid] = INFINITY;
  const int n_tiles = (n + TC_COLS - 1) / TC_COLS;
  /* the query rows (a^ is padded to TC_PAD rows, so all QROWS exist), in the first group */
#pragma unroll
  for (int i = 0; i < QROWS * PER_ROW / THREADS; i++) {
    const int c = tid + i * THREADS, r = c / PER_ROW, col = (c % PER_ROW) * 8;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(sq + r * SK + col)),
                 "l"(w.h + (size_t)q0 * K + c * 8));
  }
#pragma unroll
  for (int s = 0; s < STAGES - 1; s++)
    load_stream_tile<K, THREADS>(sc + s * TC_COLS * SK, s_cn[s], s_mx[s], w, s, n_tiles, tid);
  /* this thread's two query rows (C fragment rows lane / 4 and + 8 of the warp's 16) */
  const int lr[2] = {warp * 16 + lane / 4, warp * 16 + lane / 4 + 8};
  const int jq[2] = {q0 + lr[0], q0 + lr[1]};
  const float nq[2] = {w.nh[jq[0]], w.nh[jq[1]]}, rq[2] = {w.ra[jq[0]], w.ra[jq[1]]};
  const __half *qa = sq + (warp * 16 + lane % 16) * SK + (lane / 16) * 8;
  const int cb_off = ((lane % 8) + (lane / 16) * 8) * SK + ((lane / 8) % 2) * 8;
  for (int t = 0; t < n_tiles; t++) {
    const int st = t % STAGES;
    /* groups committed so far: STAGES - 1 + t; tile t's is complete when at most
     * STAGES - 2 are pending. The barrier also says every warp is done with tile t - 1,
     * whose buffer the next load overwrites. */
    asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2));
    __syncthreads();
    {
      const int tl = t + STAGES - 1, sl = tl % STAGES;
      load_stream_tile<K, THREADS>(sc + sl * TC_COLS * SK, s_cn[sl], s_mx[sl], w, tl, n_tiles, tid);
    }
    float acc[8][4];
#pragma unroll
    for (int nt = 0; nt < 8; nt++)
      acc[nt][0] = acc[nt][1] = acc[nt][2] = acc[nt][3] = 0.0f;
    const __half *cb = sc + st * TC_COLS * SK + cb_off;
#pragma unroll
    for (int ks = 0; ks < K; ks += 16) {
      unsigned a[4];
      ldmatrix_x4(a, qa + ks);
#pragma unroll
      for (int np = 0; np < 4; np++) {
        unsigned bb[4];
        ldmatrix_x4(bb, cb + np * 16 * SK + ks);
        mma_16816(acc[2 * np], a, bb[0], bb[1]);
        mma_16816(acc[2 * np + 1], a, bb[2], bb[3]);
      }
    }
    /* the rows' limits for this tile, with the tile's largest candidate norms */
    float lim[2];
#pragma unroll
    for (int i = 0; i < 2; i++)
      lim[i] = s_dead[lr[i]] || jq[i] >= n
                   ? -INFINITY
                   : tc_limit(b, s_root[lr[i]], nq[i], rq[i], s_mx[st][0], s_mx[st][1]);
    /* X = fl(n^_c - 2 s~) exactly as the first filter forms it; the least of each row's */
    float lo[2] = {INFINITY, INFINITY};
#pragma unroll
    for (int nt = 0; nt < 8; nt++) {
      const float2 cn = *reinterpret_cast<const float2 *>(&s_cn[st][nt * 8 + 2 * (lane % 4)]);
#pragma unroll
      for (int v = 0; v < 4; v++)
        lo[v / 2] = fminf(lo[v / 2], fmaf(-2.0f, acc[nt][v], v & 1 ? cn.y : cn.x));
    }
    /* the row itself and the padding rows past n (in one tile each) are left out below */
    if (__any_sync(FULL_MASK, lo[0] <= lim[0] || lo[1] <= lim[1])) {
#pragma unroll
      for (int nt = 0; nt < 8; nt++) {
        const float2 cn = *reinterpret_cast<const float2 *>(&s_cn[st][nt * 8 + 2 * (lane % 4)]);
#pragma unroll
        for (int v = 0; v < 4; v++) {
          const int i = v / 2, c = t * TC_COLS + nt * 8 + 2 * (lane % 4) + (v & 1);
          const float x = fmaf(-2.0f, acc[nt][v], v & 1 ? cn.y : cn.x);
          if (x <= lim[i] && c < n && c != jq[i]) {
            const int slot = atomicAdd(&s_cnt[lr[i]], 1); /* < TC_CAP: tightened at SOFT */
            w.lx[(size_t)jq[i] * TC_CAP + slot] = x;
            w.li[(size_t)jq[i] * TC_CAP + slot] = c;
          }
        }
      }
      __syncwarp();
      const int mine = warp * 16 + lane % 16; /* each of the warp's rows, twice over */
      unsigned full = __ballot_sync(FULL_MASK, lane < 16 && s_cnt[mine] > TC_SOFT && !s_dead[mine]);
      while (full != 0) {
        const int r = warp * 16 + __ffs(full) - 1;
        full &= full - 1;
        tc_compact(w, b, m, q0 + r, r, s_cnt, s_root, s_dead, lane);
      }
    }
  }
  asm volatile("cp.async.wait_group 0;\n" ::); /* no copy outlives the block */
  /* the last tightening, so the recheck reads short lists; then the lengths */
  for (int r = warp * 16; r < warp * 16 + 16; r++)
    if (q0 + r < n && !s_dead[r] && s_cnt[r] > m + 32)
      tc_compact(w, b, m, q0 + r, r, s_cnt, s_root, s_dead, lane);
  if (lane < 16 && q0 + warp * 16 + lane < n)
    w.count[q0 + warp * 16 + lane] = s_cnt[warp * 16 + lane];
#endif
}

/* ---- recheck ----------------------------------------------------------------------------- */

/* (d, l) before (e, k): the exact kernel's total order. */
__device__ __forceinline__ bool tc_before(float d, int l, float e, int k)
{
  return d < e || (d == e && l < k);
}

#define RECHECK_WARPS 4
__global__ void __launch_bounds__(RECHECK_WARPS * 32)
    nlm_tc_recheck_kernel(int *__restrict__ nbr, float *__restrict__ nd,
                          const float *__restrict__ pad, NwNlmTcWork w, int n, int m)
{
  __shared__ float s_d[RECHECK_WARPS][TC_CAP];
  __shared__ int s_i[RECHECK_WARPS][TC_CAP];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int jq = blockIdx.x * RECHECK_WARPS + warp;
  if (jq >= n || w.block_flag[jq / TC_ROWS] != 0) /* the fallback writes this row */
    return;
  const int c0 = w.count[jq], k = w.kp, g = lane % 8, sub = lane / 8, gw = k / 8;
  const float *a = pad + (size_t)jq * k + g * gw;
  for (int base = 0; base < c0; base += 4) {
    const int e = base + sub;
    const int l = e < c0 ? w.li[(size_t)jq * TC_CAP + e] : jq;
    const float *c = pad + (size_t)l * k + g * gw;
    /* storage group g of the padded layout, in storage order from 0 (nlm_kernels.cuh) */
    float acc = 0.0f;
    for (int s = 0; s < gw; s += 4) {
      const float4 a4 = __ldg(reinterpret_cast<const float4 *>(a + s));
      const float4 c4 = __ldg(reinterpret_cast<const float4 *>(c + s));
      float d = __fsub_rn(a4.x, c4.x);
      acc = __fadd_rn(acc, __fmul_rn(d, d));
      d = __fsub_rn(a4.y, c4.y);
      acc = __fadd_rn(acc, __fmul_rn(d, d));
      d = __fsub_rn(a4.z, c4.z);
      acc = __fadd_rn(acc, __fmul_rn(d, d));
      d = __fsub_rn(a4.w, c4.w);
      acc = __fadd_rn(acc, __fmul_rn(d, d));
    }
    /* ((g0 + g1) + (g2 + g3)) + ((g4 + g5) + (g6 + g7)): the exact kernel's h1 (IEEE addition
     * commutes, so both partners of a shuffle hold the same sum) */
    acc = __fadd_rn(acc, __shfl_xor_sync(FULL_MASK, acc, 1));
    acc = __fadd_rn(acc, __shfl_xor_sync(FULL_MASK, acc, 2));
    acc = __fadd_rn(acc, __shfl_xor_sync(FULL_MASK, acc, 4));
    if (g == 0 && e < c0)
      s_d[warp][e] = acc, s_i[warp][e] = l;
  }
  __syncwarp();
  for (int e = lane; e < c0; e += 32) {
    const float d = s_d[warp][e];
    const int l = s_i[warp][e];
    int rank = 0;
    for (int f = 0; f < c0; f++)
      rank += tc_before(s_d[warp][f], s_i[warp][f], d, l);
    if (rank < m)
      nbr[(size_t)jq * m + rank] = l, nd[(size_t)jq * m + rank] = d;
  }
}

/* ---- host ------------------------------------------------------------------------------------ */

/* Rows of a^, n^ and r: n padded to the widest block; the tile maxima and block flags are per
 * 64 rows of that. */
static size_t tc_rows_padded(int n)
{
  return ((size_t)n + TC_PAD - 1) / TC_PAD * TC_PAD;
}

/* The 64-row blocks that hold rows: the fallback's and the statistics' unit. */
static int tc_blocks(int n)
{
  return (n + TC_ROWS - 1) / TC_ROWS;
}

/* The configuration the environment asks for (NW_NLM_TC_CONFIG=64 or 128), else
 * NW_NLM_TC_DEFAULT_ROWS. */
int nw_nlm_tc_rows_default(void)
{
  const char *v = getenv("NW_NLM_TC_CONFIG");
  if (v != NULL && strcmp(v, "64") == 0)
    return 64;
  if (v != NULL && strcmp(v, "128") == 0)
    return TC_WIDE_ROWS;
  return NW_NLM_TC_DEFAULT_ROWS;
}

cudaError_t nw_nlm_tc_work_set_rows(NwNlmTcWork *w, int rows)
{
  if (rows == 0)
    rows = nw_nlm_tc_rows_default();
  if (rows != TC_ROWS && rows != TC_WIDE_ROWS)
    return cudaErrorInvalidValue;
  w->rows = rows;
  return cudaSuccess;
}

size_t nw_nlm_tc_work_bytes(int n, int p, int m)
{
  (void)m;
  const size_t np = tc_rows_padded(n), tiles = np / TC_ROWS, kp = nw_nlm_padded_width(p);
  return np * kp * sizeof(__half) + np * 2 * sizeof(float) + tiles * (2 * sizeof(float) + 4) +
         (size_t)n * TC_CAP * (sizeof(float) + sizeof(int)) + (size_t)n * sizeof(int) + 16;
}

cudaError_t nw_nlm_tc_work_new(NwNlmTcWork **out, int n, int p, int m)
{
  *out = NULL;
  NwNlmTcWork *w = new NwNlmTcWork();
  const size_t np = tc_rows_padded(n), tiles = np / TC_ROWS;
  w->cap_n = n, w->kp = nw_nlm_padded_width(p), w->m = m, w->rows = nw_nlm_tc_rows_default();
  cudaError_t e = cudaMalloc(&w->h, np * w->kp * sizeof(__half));
  if (e == cudaSuccess)
    e = cudaMalloc(&w->nh, np * sizeof(float));
  if (e == cudaSuccess)
    e = cudaMalloc(&w->ra, np * sizeof(float));
  if (e == cudaSuccess)
    e = cudaMalloc(&w->tile_nh, tiles * sizeof(float));
  if (e == cudaSuccess)
    e = cudaMalloc(&w->tile_ra, tiles * sizeof(float));
  if (e == cudaSuccess)
    e = cudaMalloc(&w->lx, (size_t)n * TC_CAP * sizeof(float));
  if (e == cudaSuccess)
    e = cudaMalloc(&w->li, (size_t)n * TC_CAP * sizeof(int));
  if (e == cudaSuccess)
    e = cudaMalloc(&w->count, (size_t)n * sizeof(int));
  if (e == cudaSuccess)
    e = cudaMalloc(&w->block_flag, tiles * sizeof(int));
  if (e == cudaSuccess)
    e = cudaMalloc(&w->status, 4 * sizeof(int));
  if (e != cudaSuccess) {
    nw_nlm_tc_work_free(w);
    cudaGetLastError();
    return e;
  }
  *out = w;
  return cudaSuccess;
}

void nw_nlm_tc_work_free(NwNlmTcWork *w)
{
  if (w == NULL)
    return;
  void *bufs[] = {w->h,  w->nh, w->ra,    w->tile_nh,    w->tile_ra,
                  w->lx, w->li, w->count, w->block_flag, w->status};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
    cudaFree(bufs[i]);
  delete w;
}

/* Can the tensor-core path run on the current device (mma.sync f16, cp.async: sm_80+)? */
static bool tc_supported()
{
  int dev = 0, major = 0;
  return cudaGetDevice(&dev) == cudaSuccess &&
         cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess &&
         major >= 8;
}

/* The filter in w's configuration: the wide one where it is built for the patch width, else
 * the first. */
static cudaError_t tc_filter(const NwNlmTcWork &w, const TcBound &b, int n, int m,
                             cudaStream_t stream)
{
  cudaError_t e;
  if (w.rows == TC_WIDE_ROWS && w.kp == TC_WIDE_K) {
    auto kern = nlm_tc_filter_wide_kernel<TC_WIDE_K, TC_WIDE_WARPS, TC_STAGES, 2>;
    const size_t dyn = (size_t)(TC_WIDE_ROWS + TC_STAGES * TC_COLS) * (TC_WIDE_K + 8) *
                       sizeof(__half); /* 102 KB: two blocks an SM */
    if ((e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dyn)) !=
        cudaSuccess)
      return e;
    kern<<<(n + TC_WIDE_ROWS - 1) / TC_WIDE_ROWS, TC_WIDE_WARPS * 32, dyn, stream>>>(w, b, n, m);
    return nw_cuda_launched(stream);
  }
  const size_t dyn = (size_t)3 * TC_ROWS * (w.kp + 8) * sizeof(__half);
  if ((e = cudaFuncSetAttribute(nlm_tc_filter_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)dyn)) != cudaSuccess)
    return e;
  nlm_tc_filter_kernel<<<tc_blocks(n), TC_THREADS, dyn, stream>>>(w, b, n, m);
  return nw_cuda_launched(stream);
}

cudaError_t nw_nlm_topm_tc_cuda(int *nbr, float *nd, const float *padded, int n, int p, int m,
                                NwNlmTcWork *w, cudaStream_t stream)
{
  if (n < 2 || p < 1 || m < 1 || m > n - 1 || m > NW_NLM_CUDA_MAX_M || w == NULL || n > w->cap_n ||
      nw_nlm_padded_width(p) != w->kp)
    return cudaErrorInvalidValue;
  const int np = (int)tc_rows_padded(n), tiles = np / TC_ROWS;
  cudaError_t e;
  if ((e = cudaMemsetAsync(w->status, 0, 4 * sizeof(int), stream)) != cudaSuccess)
    return e;
  /* older devices, and patches wider than 7^3 (the tiles would not fit shared memory): every
   * block by the exact kernel (block_flag says so to nw_nlm_tc_stats) */
  if (!tc_supported() || w->kp > TC_MAX_K) {
    if ((e = cudaMemsetAsync(w->block_flag, 1, tiles * sizeof(int), stream)) != cudaSuccess)
      return e;
    return nw_nlm_topm_cuda(nbr, nd, padded, n, p, m, stream);
  }
  const TcBound b = tc_bound(w->kp);
  NwNlmTcWork wv = *w;
  if ((e = cudaMemsetAsync(w->tile_nh, 0, tiles * sizeof(float), stream)) != cudaSuccess ||
      (e = cudaMemsetAsync(w->tile_ra, 0, tiles * sizeof(float), stream)) != cudaSuccess ||
      (e = cudaMemsetAsync(w->block_flag, 0, tiles * sizeof(int), stream)) != cudaSuccess)
    return e;
  nlm_tc_prep_kernel<<<(np + 7) / 8, 256, 0, stream>>>(wv, padded, n, np);
  if ((e = nw_cuda_launched(stream)) != cudaSuccess)
    return e;
  if ((e = tc_filter(wv, b, n, m, stream)) != cudaSuccess)
    return e;
  nlm_tc_recheck_kernel<<<(n + RECHECK_WARPS - 1) / RECHECK_WARPS, RECHECK_WARPS * 32, 0, stream>>>(
      nbr, nd, padded, wv, n, m);
  if ((e = nw_cuda_launched(stream)) != cudaSuccess)
    return e;
  return nw_nlm_topm_blocks_cuda(nbr, nd, padded, n, p, m, w->block_flag, stream);
}

cudaError_t nw_nlm_tc_stats(const NwNlmTcWork *w, int n, double *mean_candidates,
                            int *fallback_blocks, int *out_of_range, cudaStream_t stream)
{
  const int tiles = tc_blocks(n);
  int *count = new int[n], *flag = new int[tiles], status = 0;
  cudaError_t e = cudaMemcpyAsync(count, w->count, n * sizeof(int), cudaMemcpyDeviceToHost, stream);
  if (e == cudaSuccess)
    e = cudaMemcpyAsync(flag, w->block_flag, tiles * sizeof(int), cudaMemcpyDeviceToHost, stream);
  if (e == cudaSuccess)
    e = cudaMemcpyAsync(&status, w->status, sizeof(int), cudaMemcpyDeviceToHost, stream);
  if (e == cudaSuccess)
    e = cudaStreamSynchronize(stream);
  if (e == cudaSuccess) {
    double sum = 0.0;
    int rows = 0, fb = 0;
    for (int t = 0; t < tiles; t++) {
      fb += flag[t] != 0;
      for (int j = t * TC_ROWS; j < MIN(n, (t + 1) * TC_ROWS) && !flag[t]; j++)
        sum += count[j], rows++;
    }
    *mean_candidates = rows > 0 ? sum / rows : 0.0;
    *fallback_blocks = fb;
    *out_of_range = status;
  }
  delete[] count;
  delete[] flag;
  return e;
}
