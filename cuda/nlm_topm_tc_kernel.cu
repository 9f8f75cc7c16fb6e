/* nlm_topm_tc_kernel.cu — nlm-surface's all-pairs top-m on the tensor cores, exact and pruned:
 * the rows sorted by their scaled patch mean, each block of 64 query rows scans candidate
 * tiles outward from its own place in that order and stops where a lower bound of the distance
 * passes every row's running threshold; an FP16 tensor-core pass bounds every distance it
 * does compute and keeps, per query row, only the candidates that can be among its m nearest;
 * then those candidates' distances are computed with the exact kernel's FP32 arithmetic (bit
 * for bit the CPU's) and the top-m taken from them. The kept set, its order and its distances
 * therefore equal nlm_topm_kernel.cu's (and the CPU reference's) by construction; rows whose
 * candidate list overflows are recomputed by the exact kernel, block by block. The method's
 * default (NW_NLM_KERNEL=exact selects the exact kernel, nw_nlm_cuda.h). CUDA back end,
 * caller's stream; sm_80 or newer (mma.sync f16, cp.async): older devices get the exact kernel.
 *
 * Passes (one stream, no host synchronisation):
 *   key      per row (original order) bounds lo <= kappa <= hi of kappa = sum(a) / sqrt(P)
 *            (double sum, rounded outward to float); CUB sorts the rows by lo: perm[s] is the
 *            original row at sorted position s.
 *   prep     per sorted position s, from row perm[s] (rows past N zero): a^ (N_pad x K
 *            halves, the row rounded to FP16), n^ = ||a^||^2 (double sum, rounded to float),
 *            r = ||a|| (of the float row, rounded up), its hi; a flag when a value is outside
 *            FP16's safe range (|a| > 32768 or not finite): then every block takes the exact
 *            fallback. Per 64-row tile of the sorted order: the largest n^, r and hi and the
 *            least lo (its first row's); a CUB max-scan makes hi_below[t] = max of tiles 0..t.
 *   filter   blocks of 64 sorted query rows (4 warps x 16) visit candidate tiles, 64 sorted
 *            rows each, in the order own, above, below, above, ...; a direction ends at the
 *            first tile the pruning bound excludes (below). Each visited tile goes through
 *            mma.sync m16n8k16 (FP16 in, FP32 accumulate): s~ = a^.b^, X = fl(n^_b - 2 s~).
 *            A pair is a candidate when X <= T(row), a per-row limit from the row's running
 *            threshold (below); candidates (X, sorted index) go to the row's list in global
 *            memory (N x TC_CAP, by sorted position). A list TC_GROW longer than after its
 *            last tightening, or longer than TC_SOFT, or with m entries and no threshold yet,
 *            is tightened by its warp: threshold from the list, entries it no longer admits
 *            dropped; a list still longer than TC_SOFT after that marks its row dead and the
 *            row's original 64-row block for the exact fallback. The next tile is chosen, and its
 * load issued, right after the one barrier of each step, from the thresholds as they stand then.
 *   recheck  one warp per sorted row: each listed candidate's distance (original rows perm[.])
 *            with the exact kernel's FP32 arithmetic (8 lanes per candidate, one per storage
 *            group, folded in the CPU's pairwise order), then the m best by (distance,
 *            original index): the rank of each entry, written to the original row.
 *   fallback nlm_topm_kernel on the marked original blocks only (nw_nlm_topm_blocks_cuda).
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
 *   3. The exact FP32 sum of squares has only non-negative terms: d_f >= d (1 - g_f) - eps
 *      and d_f <= d (1 + g_f) + eps with g_f = (K / 8 + 8) 2^-23 (K / 8 sequential adds per
 *      lane, 3 fold levels, the subtract and the square: twice generous) and eps < 2^-100
 *      for subnormal (or flushed) products, which only the pruning test below needs.
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
 * Why skipping tiles keeps it exact. ||a - b|| >= |e.(a - b)| for any unit vector e
 * (Cauchy-Schwarz); e = (1, .., 1) / sqrt(P) gives ||a - b|| >= |kappa_a - kappa_b|. The
 * patch mean follows phi across the band, so on band patches it spreads the rows (a NumPy
 * model of this scan on bench_nlm's bands visits 31 / 23 / 20 / 19 % of the tiles at N =
 * 17.5k / 50k / 100k / 175k; the patch norm, which cannot tell phi from -phi, 84 / 70 %).
 * lo and hi enclose kappa (the double sum of P floats errs by < P 2^-53 sum |a|, the margin
 * is 2^-36 sum |a| / sqrt(P), and the float roundings are outward). For the next tile above,
 * g = rd(lo_tile - hi_block) with lo_tile its least lo and hi_block the query tile's largest
 * hi; if g > 0 then every pair has d >= g^2. Let R = the largest s = sqrt(tau / (1 - g_f))
 * (rounded up) over the block's live rows (not dead, row < N), INFINITY when one of them has
 * no threshold yet. If g > R + 2^-40 (the 2^-40 covers eps), then d_f >= g^2 (1 - g_f) - eps
 * > tau for every row: each such pair is strictly worse than the row's m-th best (tau bounds
 * the true m-th smallest d_f from above, as in the filter), so it is not in the top-m, ties
 * included (strict). Tiles further above have larger lo (sorted by lo), so larger g: the
 * direction ends. Below, g = rd(lo_own - hi_below[t]), hi_below a running maximum, so it too
 * only grows further down. Thresholds only fall as the scan goes on, so deciding with those
 * of the step before (as the pipeline does) only visits more. Dead rows are recomputed by the
 * exact kernel and do not count. Every pair of the true top-m of every live row is therefore
 * in a visited tile, and the argument above applies to the visited pairs unchanged.
 *
 * NW_NLM_TC_PRUNE=0 in the environment turns the pruning off (every block visits every tile,
 * in the same order; the output is the same): a diagnostic, not a setting.
 *
 * Memory beside the exact kernel's: N_pad x K halves, N x TC_CAP x 8 B of lists (358 MB at N
 * = 175k), some 30 B a row (keys, order, norms), CUB's scratch for the sort. */
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_fp16.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_check.h"
#include "nlm_kernels.cuh"

#define TC_ROWS 64 /* query rows per block and rows per tile: the fallback's unit too */
#define TC_COLS 64 /* candidate rows per step (one tile) */
#define TC_THREADS 128
#define TC_CAP 256                 /* list capacity per row */
#define TC_SOFT (TC_CAP - TC_COLS) /* a list longer than this after tightening: dead row */
#define TC_GROW 32 /* a list this much longer than after its last tightening is tightened */
#define TC_HALF_SAFE 32768.0f /* |values| beyond this go to the exact kernel */
#define TC_MAX_K 384          /* 3 tiles of 64 x (K + 8) halves: 150 KB of shared memory at 384 */
#define TC_PRUNE_EPS 0x1p-40  /* added to the pruning radius: covers eps (header, 3.) */
#define FULL_MASK 0xffffffffu

struct NwNlmTcWork {
  int cap_n, kp, m;             /* rows, padded width, neighbours */
  __half *h;                    /* n_pad x kp, sorted order */
  float *nh, *ra;               /* n_pad: ||a^||^2 (nearest), ||a|| (rounded up), sorted order */
  float *tile_nh, *tile_ra;     /* per tile: maxima */
  float *key_lo, *key_hi;       /* cap_n, original order: kappa's bounds */
  float *lo_sorted, *hi_sorted; /* n_pad: lo sorted ascending; hi of the same rows */
  int *iota, *perm;             /* cap_n: 0..n-1; n_pad: original row of each sorted position */
  float *tile_lo, *tile_hi, *hi_below; /* per tile: least lo, largest hi, largest hi of 0..t */
  void *cub_temp;
  size_t cub_bytes;
  float *lx;                   /* cap_n x TC_CAP: X of each listed candidate */
  int *li;                     /* cap_n x TC_CAP: its sorted position */
  int *count;                  /* cap_n: list lengths after the scan, by sorted position */
  int *block_flag;             /* per original 64-row block: 1 = the exact fallback computes it */
  int *status;                 /* [0]: a value outside FP16's safe range */
  unsigned long long *visited; /* tiles the filter blocks visited, summed */
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

/* ---- key, prep, tiles ------------------------------------------------------------------- */

/* One warp per original row: lo <= kappa <= hi, kappa = sum(a) / sqrt(p) (the padding slots
 * are zero); iota for the sort's values. */
__global__ void nlm_tc_key_kernel(NwNlmTcWork w, const float *__restrict__ pad, int n, int p)
{
  const int lane = threadIdx.x % 32;
  const int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  if (row >= n)
    return;
  double s = 0.0, abs_sum = 0.0;
  for (int q = lane; q < w.kp; q += 32) {
    const double v = pad[(size_t)row * w.kp + q];
    s += v, abs_sum += fabs(v);
  }
#pragma unroll
  for (int off = 16; off > 0; off /= 2) {
    s += __shfl_xor_sync(FULL_MASK, s, off);
    abs_sum += __shfl_xor_sync(FULL_MASK, abs_sum, off);
  }
  if (lane == 0) {
    const double root = sqrt((double)p), err = ldexp(abs_sum / root, -36);
    w.key_lo[row] = __double2float_rd(s / root - err);
    w.key_hi[row] = __double2float_ru(s / root + err);
    w.iota[row] = row;
  }
}

/* One warp per sorted position s < n_pad (row perm[s]; past n a zero row): a^, n^, r, hi. */
__global__ void nlm_tc_prep_kernel(NwNlmTcWork w, const float *__restrict__ pad, int n, int n_pad)
{
  const int lane = threadIdx.x % 32;
  const int s = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  if (s >= n_pad)
    return;
  const int k = w.kp, row = s < n ? w.perm[s] : -1;
  double sh = 0.0, sa = 0.0;
  bool bad = false;
  for (int q = lane; q < k; q += 32) {
    const float v = row >= 0 ? pad[(size_t)row * k + q] : 0.0f;
    bad |= !(fabsf(v) <= TC_HALF_SAFE); /* also NaN */
    const __half hv = __float2half_rn(v);
    w.h[(size_t)s * k + q] = hv;
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
    w.nh[s] = __double2float_rn(sh);
    w.ra[s] = __double2float_ru(sqrt(sa) * (1.0 + 1e-12));
    w.hi_sorted[s] = row >= 0 ? w.key_hi[row] : -INFINITY;
    if (s >= n)
      w.perm[s] = -1, w.lo_sorted[s] = INFINITY;
  }
}

/* One warp per tile of the sorted order: the largest n^, r, hi; the least lo (the first
 * row's: sorted by lo). */
__global__ void nlm_tc_tile_kernel(NwNlmTcWork w, int tiles)
{
  const int lane = threadIdx.x % 32;
  const int t = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  if (t >= tiles)
    return;
  const int a = t * TC_ROWS + lane, b = a + 32;
  float nh = fmaxf(w.nh[a], w.nh[b]), ra = fmaxf(w.ra[a], w.ra[b]);
  float hi = fmaxf(w.hi_sorted[a], w.hi_sorted[b]);
#pragma unroll
  for (int off = 16; off > 0; off /= 2) {
    nh = fmaxf(nh, __shfl_xor_sync(FULL_MASK, nh, off));
    ra = fmaxf(ra, __shfl_xor_sync(FULL_MASK, ra, off));
    hi = fmaxf(hi, __shfl_xor_sync(FULL_MASK, hi, off));
  }
  if (lane == 0)
    w.tile_nh[t] = nh, w.tile_ra[t] = ra, w.tile_hi[t] = hi,
    w.tile_lo[t] = w.lo_sorted[t * TC_ROWS];
}

/* ---- filter ---------------------------------------------------------------------------- */

/* Does the pruning bound exclude a tile at kappa gap lo - hi for a block whose largest root is
 * r (header)? g rounded down; false when it is not positive. */
__device__ __forceinline__ bool tc_beyond(float lo, float hi, double r)
{
  const double g = __dsub_rd((double)lo, (double)hi);
  return g > 0.0 && g > r + TC_PRUNE_EPS;
}

/* The next tile of the outward scan (block-uniform: every thread holds the same up, down,
 * go_up and r), or -1 when both directions have ended. Takes the preferred direction's next
 * tile unless the bound excludes it (then that direction ends), else the other's. */
__device__ __forceinline__ int tc_next_tile(const NwNlmTcWork &w, int own, int tiles, double r,
                                            int &up, int &down, bool &go_up)
{
  for (int k = 0; k < 2; k++) {
    if (go_up && up < tiles) {
      go_up = false;
      if (!tc_beyond(w.tile_lo[up], w.tile_hi[own], r))
        return up++;
      up = tiles;
    } else if (!go_up && down >= 0) {
      go_up = true;
      if (!tc_beyond(w.tile_lo[own], w.hi_below[down], r))
        return down--;
      down = -1;
    } else {
      go_up = !go_up;
    }
  }
  return -1;
}

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

/* Tighten row lq's list (query jq, a sorted position): tau = the m-th smallest U of the list, drop
 * what T(tau) no longer admits, keep the order. Warp-uniform; the list has at least m entries. */
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
      w.block_flag[w.perm[jq] / TC_ROWS] = 1; /* the row's 64-row block in the original order */
    }
  }
  __syncwarp();
}
#endif

__global__ void __launch_bounds__(TC_THREADS)
    nlm_tc_filter_kernel(NwNlmTcWork w, TcBound b, int n, int m, bool prune)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  extern __shared__ __align__(16) unsigned char tc_smem[];
  /* s_base: a row's list length after its last tightening */
  __shared__ int s_cnt[TC_ROWS], s_dead[TC_ROWS], s_base[TC_ROWS];
  __shared__ double s_root[TC_ROWS];
  /* each warp's largest root of its live rows, written in step i to [(i + 1) % 2] and read in
   * step i + 1 after its barrier: every warp reads the same values, so the next tile is
   * block-uniform */
  __shared__ double s_rmax[2][TC_THREADS / 32];
  __shared__ float s_cn[2][TC_COLS];
  const int k = w.kp, sk = k + 8; /* +8 halves: ldmatrix rows fall in different banks */
  __half *sq = reinterpret_cast<__half *>(tc_smem);
  __half *sc[2] = {sq + TC_ROWS * sk, sq + 2 * TC_ROWS * sk};
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int own = blockIdx.x, q0 = own * TC_ROWS;
  if (*w.status != 0) { /* a value FP16 cannot hold safely: the exact kernel does it all */
    if (tid == 0)
      w.block_flag[blockIdx.x] = 1; /* as many filter blocks as original blocks */
    return;
  }
  if (tid < TC_ROWS)
    s_cnt[tid] = 0, s_dead[tid] = 0, s_base[tid] = 0, s_root[tid] = INFINITY;
  if (tid < 2 * (TC_THREADS / 32))
    s_rmax[tid / (TC_THREADS / 32)][tid % (TC_THREADS / 32)] = INFINITY;
  const int tiles = (n + TC_COLS - 1) / TC_COLS;
  load_tile(sq, w.h, own, k, sk, tid);
  load_tile(sc[0], w.h, own, k, sk, tid); /* the first candidate tile is the block's own */
  if (tid < TC_COLS)
    s_cn[0][tid] = w.nh[q0 + tid];
  /* this thread's two query rows (C fragment rows lane / 4 and + 8 of the warp's 16) */
  const int lr[2] = {warp * 16 + lane / 4, warp * 16 + lane / 4 + 8};
  const int jq[2] = {q0 + lr[0], q0 + lr[1]};
  const float nq[2] = {w.nh[jq[0]], w.nh[jq[1]]}, rq[2] = {w.ra[jq[0]], w.ra[jq[1]]};
  const int mine = warp * 16 + lane % 16; /* each of the warp's rows, twice over */
  int up = own + 1, down = own - 1, t = own, buf = 0, step = 0;
  bool go_up = true;
  while (t >= 0) {
    /* tile t (issued last step) is here for every thread after the barrier, and every warp
     * is done with the other buffer, which the next load overwrites */
    asm volatile("cp.async.wait_group 0;\n" ::);
    __syncthreads();
    const double *rm = s_rmax[step % 2];
    const double r = prune ? fmax(fmax(rm[0], rm[1]), fmax(rm[2], rm[3])) : INFINITY;
    const int next = tc_next_tile(w, own, tiles, r, up, down, go_up);
    if (next >= 0) {
      load_tile(sc[buf ^ 1], w.h, next, k, sk, tid);
      if (tid < TC_COLS)
        s_cn[buf ^ 1][tid] = w.nh[next * TC_COLS + tid];
    }
    float acc[8][4];
#pragma unroll
    for (int nt = 0; nt < 8; nt++)
      acc[nt][0] = acc[nt][1] = acc[nt][2] = acc[nt][3] = 0.0f;
    const __half *qa = sq + (warp * 16 + lane % 16) * sk + (lane / 16) * 8;
    const __half *cb = sc[buf] + ((lane % 8) + (lane / 16) * 8) * sk + ((lane / 8) % 2) * 8;
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
    /* the hot test is X <= limit alone; the row itself and the padding rows past n (in the
     * last tile) are left out on the rare path */
    unsigned pass = 0;
#pragma unroll
    for (int nt = 0; nt < 8; nt++)
#pragma unroll
      for (int v = 0; v < 4; v++) {
        const int col = nt * 8 + 2 * (lane % 4) + (v & 1);
        if (fmaf(-2.0f, acc[nt][v], s_cn[buf][col]) <= lim[v / 2])
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
        const int slot = atomicAdd(&s_cnt[lr[i]], 1); /* < TC_CAP: lists are tightened */
        w.lx[(size_t)jq[i] * TC_CAP + slot] = fmaf(-2.0f, acc[nt][v], s_cn[buf][col]);
        w.li[(size_t)jq[i] * TC_CAP + slot] = c;
      }
      __syncwarp();
      /* lists that can give a first threshold (the pruning needs one for every row), lists
       * that grew by TC_GROW since their last tightening (so thresholds keep falling, at one
       * tightening per TC_GROW admitted candidates at most), and long ones */
      const int due = min(s_base[mine] + TC_GROW, TC_SOFT);
      unsigned full = __ballot_sync(
          FULL_MASK, lane < 16 && !s_dead[mine] &&
                         (s_cnt[mine] > due || (s_cnt[mine] >= m && isinf(s_root[mine]))));
      while (full != 0) {
        const int r = warp * 16 + __ffs(full) - 1;
        full &= full - 1;
        tc_compact(w, b, m, q0 + r, r, s_cnt, s_root, s_dead, lane);
        if (lane == 0)
          s_base[r] = s_cnt[r];
        __syncwarp();
      }
    }
    /* the warp's largest root over its live rows, for the next step's choice */
    double rmax = s_dead[mine] || q0 + mine >= n ? -INFINITY : s_root[mine];
#pragma unroll
    for (int off = 8; off > 0; off /= 2)
      rmax = fmax(rmax, __shfl_xor_sync(FULL_MASK, rmax, off));
    if (lane == 0)
      s_rmax[(step + 1) % 2][warp] = rmax;
    t = next, buf ^= 1, step++;
  }
  /* the last tightening, so the recheck reads short lists; then the lengths */
  for (int r = warp * 16; r < warp * 16 + 16; r++)
    if (q0 + r < n && !s_dead[r] && s_cnt[r] > m + 32)
      tc_compact(w, b, m, q0 + r, r, s_cnt, s_root, s_dead, lane);
  if (lane < 16 && q0 + warp * 16 + lane < n)
    w.count[q0 + warp * 16 + lane] = s_cnt[warp * 16 + lane];
  if (tid == 0)
    atomicAdd(w.visited, (unsigned long long)step);
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
  const int sq = blockIdx.x * RECHECK_WARPS + warp; /* a sorted position */
  if (sq >= n)
    return;
  const int jq = w.perm[sq]; /* its original row: the output's row and the order's index */
  if (w.block_flag[jq / TC_ROWS] != 0) /* the fallback writes this row */
    return;
  const int c0 = w.count[sq], k = w.kp, g = lane % 8, sub = lane / 8, gw = k / 8;
  const float *a = pad + (size_t)jq * k + g * gw;
  for (int base = 0; base < c0; base += 4) {
    const int e = base + sub;
    const int l = e < c0 ? w.perm[w.li[(size_t)sq * TC_CAP + e]] : jq;
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

/* Rows of a^, n^, r and the sorted keys: n padded to whole tiles. */
static size_t tc_rows_padded(int n)
{
  return ((size_t)n + TC_ROWS - 1) / TC_ROWS * TC_ROWS;
}

/* The 64-row tiles (sorted order) and blocks (original order, the fallback's unit). */
static int tc_blocks(int n)
{
  return (n + TC_ROWS - 1) / TC_ROWS;
}

struct TcMax {
  __device__ float operator()(float a, float b) const
  {
    return fmaxf(a, b);
  }
};

/* CUB's scratch for the sort of n keys and the scan of its tiles: the larger of the two. */
static cudaError_t tc_cub_bytes(size_t *bytes, int n)
{
  size_t sort = 0, scan = 0;
  cudaError_t e =
      cub::DeviceRadixSort::SortPairs(nullptr, sort, (const float *)nullptr, (float *)nullptr,
                                      (const int *)nullptr, (int *)nullptr, n);
  if (e == cudaSuccess)
    e = cub::DeviceScan::InclusiveScan(nullptr, scan, (const float *)nullptr, (float *)nullptr,
                                       TcMax(), tc_blocks(n));
  *bytes = MAX(sort, scan);
  return e;
}

size_t nw_nlm_tc_work_bytes(int n, int p, int m)
{
  (void)m;
  const size_t np = tc_rows_padded(n), tiles = np / TC_ROWS, kp = nw_nlm_padded_width(p);
  size_t cub = 0;
  if (tc_cub_bytes(&cub, n) != cudaSuccess)
    cub = (size_t)n * 16; /* an estimate; the allocation will say */
  return np * kp * sizeof(__half) + np * 5 * sizeof(float) + tiles * (5 * sizeof(float) + 4) +
         (size_t)n * (2 * sizeof(float) + sizeof(int)) +
         (size_t)n * TC_CAP * (sizeof(float) + sizeof(int)) + (size_t)n * sizeof(int) + cub + 32;
}

cudaError_t nw_nlm_tc_work_new(NwNlmTcWork **out, int n, int p, int m)
{
  *out = NULL;
  NwNlmTcWork *w = new NwNlmTcWork();
  const size_t np = tc_rows_padded(n), tiles = np / TC_ROWS;
  w->cap_n = n, w->kp = nw_nlm_padded_width(p), w->m = m;
  cudaError_t e = tc_cub_bytes(&w->cub_bytes, n);
  struct {
    void **p;
    size_t bytes;
  } bufs[] = {
      {(void **)&w->h, np * w->kp * sizeof(__half)},
      {(void **)&w->nh, np * sizeof(float)},
      {(void **)&w->ra, np * sizeof(float)},
      {(void **)&w->tile_nh, tiles * sizeof(float)},
      {(void **)&w->tile_ra, tiles * sizeof(float)},
      {(void **)&w->key_lo, (size_t)n * sizeof(float)},
      {(void **)&w->key_hi, (size_t)n * sizeof(float)},
      {(void **)&w->lo_sorted, np * sizeof(float)},
      {(void **)&w->hi_sorted, np * sizeof(float)},
      {(void **)&w->iota, (size_t)n * sizeof(int)},
      {(void **)&w->perm, np * sizeof(int)},
      {(void **)&w->tile_lo, tiles * sizeof(float)},
      {(void **)&w->tile_hi, tiles * sizeof(float)},
      {(void **)&w->hi_below, tiles * sizeof(float)},
      {&w->cub_temp, MAX(w->cub_bytes, (size_t)16)},
      {(void **)&w->lx, (size_t)n * TC_CAP * sizeof(float)},
      {(void **)&w->li, (size_t)n * TC_CAP * sizeof(int)},
      {(void **)&w->count, (size_t)n * sizeof(int)},
      {(void **)&w->block_flag, tiles * sizeof(int)},
      {(void **)&w->status, 4 * sizeof(int)},
      {(void **)&w->visited, sizeof(unsigned long long)},
  };
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0] && e == cudaSuccess; i++)
    e = cudaMalloc(bufs[i].p, bufs[i].bytes);
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
  void *bufs[] = {w->h,          w->nh,        w->ra,        w->tile_nh, w->tile_ra, w->key_lo,
                  w->key_hi,     w->lo_sorted, w->hi_sorted, w->iota,    w->perm,    w->tile_lo,
                  w->tile_hi,    w->hi_below,  w->cub_temp,  w->lx,      w->li,      w->count,
                  w->block_flag, w->status,    w->visited};
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

/* NW_NLM_TC_PRUNE=0 in the environment: every block visits every tile (the same order, the
 * same output; for telling a pruning fault from another one). */
static bool tc_prune()
{
  const char *v = getenv("NW_NLM_TC_PRUNE");
  return v == NULL || strcmp(v, "0") != 0;
}

/* The key, the sort, prep and the tiles' bounds (header: passes key, prep). */
static cudaError_t tc_sort_and_prep(NwNlmTcWork *w, const float *padded, int n, int p,
                                    cudaStream_t stream)
{
  const int np = (int)tc_rows_padded(n), tiles = np / TC_ROWS;
  const NwNlmTcWork wv = *w;
  cudaError_t e;
  nlm_tc_key_kernel<<<(n + 7) / 8, 256, 0, stream>>>(wv, padded, n, p);
  if ((e = nw_cuda_launched(stream)) != cudaSuccess)
    return e;
  size_t bytes = w->cub_bytes;
  if ((e = cub::DeviceRadixSort::SortPairs(w->cub_temp, bytes, w->key_lo, w->lo_sorted, w->iota,
                                           w->perm, n, 0, 32, stream)) != cudaSuccess)
    return e;
  nlm_tc_prep_kernel<<<(np + 7) / 8, 256, 0, stream>>>(wv, padded, n, np);
  if ((e = nw_cuda_launched(stream)) != cudaSuccess)
    return e;
  nlm_tc_tile_kernel<<<(tiles + 7) / 8, 256, 0, stream>>>(wv, tiles);
  if ((e = nw_cuda_launched(stream)) != cudaSuccess)
    return e;
  bytes = w->cub_bytes;
  return cub::DeviceScan::InclusiveScan(w->cub_temp, bytes, w->tile_hi, w->hi_below, TcMax(), tiles,
                                        stream);
}

cudaError_t nw_nlm_topm_tc_cuda(int *nbr, float *nd, const float *padded, int n, int p, int m,
                                NwNlmTcWork *w, cudaStream_t stream)
{
  if (n < 2 || p < 1 || m < 1 || m > n - 1 || m > NW_NLM_CUDA_MAX_M || w == NULL || n > w->cap_n ||
      nw_nlm_padded_width(p) != w->kp)
    return cudaErrorInvalidValue;
  const int tiles = tc_blocks(n);
  cudaError_t e;
  if ((e = cudaMemsetAsync(w->status, 0, 4 * sizeof(int), stream)) != cudaSuccess ||
      (e = cudaMemsetAsync(w->visited, 0, sizeof(unsigned long long), stream)) != cudaSuccess)
    return e;
  /* older devices, and patches wider than 7^3 (the tiles would not fit shared memory): every
   * block by the exact kernel (block_flag says so to nw_nlm_tc_stats) */
  if (!tc_supported() || w->kp > TC_MAX_K) {
    if ((e = cudaMemsetAsync(w->block_flag, 1, tiles * sizeof(int), stream)) != cudaSuccess)
      return e;
    return nw_nlm_topm_cuda(nbr, nd, padded, n, p, m, stream);
  }
  if ((e = cudaMemsetAsync(w->block_flag, 0, tiles * sizeof(int), stream)) != cudaSuccess ||
      (e = tc_sort_and_prep(w, padded, n, p, stream)) != cudaSuccess)
    return e;
  const TcBound b = tc_bound(w->kp);
  const size_t dyn = (size_t)3 * TC_ROWS * (w->kp + 8) * sizeof(__half);
  if ((e = cudaFuncSetAttribute(nlm_tc_filter_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)dyn)) != cudaSuccess)
    return e;
  nlm_tc_filter_kernel<<<tiles, TC_THREADS, dyn, stream>>>(*w, b, n, m, tc_prune());
  if ((e = nw_cuda_launched(stream)) != cudaSuccess)
    return e;
  nlm_tc_recheck_kernel<<<(n + RECHECK_WARPS - 1) / RECHECK_WARPS, RECHECK_WARPS * 32, 0, stream>>>(
      nbr, nd, padded, *w, n, m);
  if ((e = nw_cuda_launched(stream)) != cudaSuccess)
    return e;
  return nw_nlm_topm_blocks_cuda(nbr, nd, padded, n, p, m, w->block_flag, stream);
}

cudaError_t nw_nlm_tc_stats(const NwNlmTcWork *w, int n, double *mean_candidates,
                            int *fallback_blocks, int *out_of_range, double *visited_fraction,
                            cudaStream_t stream)
{
  const int tiles = tc_blocks(n);
  int *count = new int[n], *perm = new int[n], *flag = new int[tiles], status = 0;
  unsigned long long visited = 0;
  cudaError_t e = cudaMemcpyAsync(count, w->count, n * sizeof(int), cudaMemcpyDeviceToHost, stream);
  if (e == cudaSuccess)
    e = cudaMemcpyAsync(perm, w->perm, n * sizeof(int), cudaMemcpyDeviceToHost, stream);
  if (e == cudaSuccess)
    e = cudaMemcpyAsync(flag, w->block_flag, tiles * sizeof(int), cudaMemcpyDeviceToHost, stream);
  if (e == cudaSuccess)
    e = cudaMemcpyAsync(&status, w->status, sizeof(int), cudaMemcpyDeviceToHost, stream);
  if (e == cudaSuccess)
    e = cudaMemcpyAsync(&visited, w->visited, sizeof visited, cudaMemcpyDeviceToHost, stream);
  if (e == cudaSuccess)
    e = cudaStreamSynchronize(stream);
  if (e == cudaSuccess) {
    double sum = 0.0;
    int rows = 0, fb = 0;
    for (int t = 0; t < tiles; t++)
      fb += flag[t] != 0;
    /* count is by sorted position; the rows the recheck did are those of unflagged blocks
     * (when every block fell back, perm may be stale: nothing is counted) */
    for (int s = 0; s < n && fb < tiles; s++)
      if (perm[s] >= 0 && perm[s] < n && !flag[perm[s] / TC_ROWS])
        sum += count[s], rows++;
    *mean_candidates = rows > 0 ? sum / rows : 0.0;
    *fallback_blocks = fb;
    *out_of_range = status;
    *visited_fraction = fb < tiles ? (double)visited / ((double)tiles * tiles) : 1.0;
  }
  delete[] count;
  delete[] perm;
  delete[] flag;
  return e;
}
