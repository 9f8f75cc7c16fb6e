/* nlm_neighbours_cpu.c — the fully non-local part of nlm-surface: all-pairs squared patch
 * distances over the band and the exact top-m selection per element (nlm_kernels.h). CPU
 * reference. The brute force is O(N^2 P) time: minutes for N in the tens of thousands, which
 * is why the GPU does it as a GEMM; the pruned scan (below, the one the method uses) visits
 * only the tiles that can hold a neighbour and keeps the same output. Any thread; OpenMP
 * over rows (brute force) or row blocks (pruned). */
#include <math.h>
#include <stdlib.h>

#include "nlm_kernels.h"

/* Rows of distances held at once: 64 x N floats (1.3 MB at N = 5000). */
#define BLOCK_ROWS 64

/* ||a - b||^2 over p values in LANES interleaved partial sums (value q goes to sum q % LANES),
 * added pairwise at the end: a fixed order, so the result does not depend on the compiler's
 * choices, and independent sums the compiler can put in one vector register. */
#define LANES 8
static float squared_distance(const float *a, const float *b, int p)
{
  float acc[LANES] = {0};
  int q = 0;
  for (; q + LANES <= p; q += LANES)
    for (int l = 0; l < LANES; l++) {
      float d = a[q + l] - b[q + l];
      acc[l] += d * d;
    }
  for (int l = 0; q < p; q++, l++) {
    float d = a[q] - b[q];
    acc[l] += d * d;
  }
  for (int width = LANES / 2; width > 0; width /= 2)
    for (int l = 0; l < width; l++)
      acc[l] += acc[l + width];
  return acc[0];
}

void nw_nlm_pair_distances_cpu(float *dist, const float *patches, int n, int p, int row0, int rows)
{
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; r++) {
    const float *a = patches + (size_t)(row0 + r) * p;
    float *out = dist + (size_t)r * n;
    for (int l = 0; l < n; l++)
      out[l] = squared_distance(a, patches + (size_t)l * p, p);
  }
}

/* (d, l) orders before (e, k): the smaller distance, on ties the smaller index. */
static gboolean before(float d, int l, float e, int k)
{
  return d < e || (d == e && l < k);
}

static void swap_entries(float *hd, int *hl, int a, int b)
{
  float td = hd[a];
  int tl = hl[a];
  hd[a] = hd[b], hl[a] = hl[b];
  hd[b] = td, hl[b] = tl;
}

/* A max-heap of the best m so far: the root is the worst kept, replaced by a better one. */
static void sift_down(float *hd, int *hl, int size, int at)
{
  for (;;) {
    int worst = at, c1 = 2 * at + 1, c2 = c1 + 1;
    if (c1 < size && before(hd[worst], hl[worst], hd[c1], hl[c1]))
      worst = c1;
    if (c2 < size && before(hd[worst], hl[worst], hd[c2], hl[c2]))
      worst = c2;
    if (worst == at)
      return;
    swap_entries(hd, hl, at, worst);
    at = worst;
  }
}

static void sift_up(float *hd, int *hl, int at)
{
  while (at > 0) {
    int parent = (at - 1) / 2;
    if (!before(hd[parent], hl[parent], hd[at], hl[at]))
      return;
    swap_entries(hd, hl, at, parent);
    at = parent;
  }
}

/* The m best of one row into nd/nbr (ascending), using them as the heap's storage. */
static void select_row(int *nbr, float *nd, const float *dist, int n, int self, int m)
{
  int size = 0;
  for (int l = 0; l < n; l++) {
    if (l == self)
      continue;
    if (size < m) {
      nd[size] = dist[l], nbr[size] = l;
      sift_up(nd, nbr, size++);
    } else if (before(dist[l], l, nd[0], nbr[0])) {
      nd[0] = dist[l], nbr[0] = l;
      sift_down(nd, nbr, m, 0);
    }
  }
  /* Heap sort in place: the worst goes to the end each time, leaving them ascending. */
  for (int end = size - 1; end > 0; end--) {
    swap_entries(nd, nbr, 0, end);
    sift_down(nd, nbr, end, 0);
  }
}

void nw_nlm_select_top_m_cpu(int *nbr, float *nd, const float *dist, int n, int row0, int rows,
                             int m)
{
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; r++)
    select_row(nbr + (size_t)(row0 + r) * m, nd + (size_t)(row0 + r) * m, dist + (size_t)r * n, n,
               row0 + r, m);
}

gboolean nw_nlm_neighbours_brute_cpu(int *nbr, float *nd, const float *patches, int n, int p, int m)
{
  g_autofree float *dist = g_try_new(float, (size_t)BLOCK_ROWS *n);
  if (dist == NULL)
    return FALSE;
  for (int row0 = 0; row0 < n; row0 += BLOCK_ROWS) {
    int rows = MIN(BLOCK_ROWS, n - row0);
    nw_nlm_pair_distances_cpu(dist, patches, n, p, row0, rows);
    nw_nlm_select_top_m_cpu(nbr, nd, dist, n, row0, rows, m);
  }
  return TRUE;
}

/* ---- the pruned scan ------------------------------------------------------------------------
 * Why it is exact. For any unit vector e, ||a - b|| >= |e.(a - b)| (Cauchy-Schwarz); with
 * e = (1, .., 1) / sqrt(P) that is |kappa_a - kappa_b|, kappa = sum(a) / sqrt(P), the scaled
 * patch mean (on band patches it follows phi across the band, so it spreads the rows out; the
 * patch norm, the other obvious 1-Lipschitz key, does not: phi and -phi have the same norm).
 * Rows are sorted by a lower bound lo of kappa (hi an upper bound; both enclose the double
 * sum's rounding), cut into tiles of NW_NLM_PRUNE_TILE sorted rows, and each block of that
 * many query rows scans candidate tiles outward from its own: its own tile, then alternately
 * the next one above and below. A tile above whose least lo exceeds the block's largest hi by
 * g > 0 has d = ||a - b||^2 >= g^2 for all its pairs, and d_f, the float distance
 * squared_distance returns, satisfies d_f >= d (1 - g_f) - eps (every term and every partial
 * sum is >= 0, so each of the at most ceil(P / 8) + 5 roundings shrinks it by at most a
 * factor 1 - 2^-24: g_f = (ceil(P / 8) + 8) 2^-23 is twice that; eps covers subnormal
 * results). So when L = g^2 (1 - g_f) - eps > tau for tau the largest current m-th best
 * distance of the block's rows (each row's m-th best so far is >= its final m-th best), every
 * pair of that tile is strictly worse than each row's m-th best: none is kept, ties included
 * (strict comparison). Tiles further up have larger lo (sorted) and larger g: the direction
 * stops. Below, the same with the block's least lo and a running maximum of hi over the tiles
 * (so that it, too, only falls as the scan goes down). What is visited is the brute force's
 * computation: the same squared_distance, the same total order (distance, then index), and the
 * top-m of a total order does not depend on the order candidates come in, so the output equals
 * nw_nlm_neighbours_brute_cpu's, bit for bit. */

/* A lower and an upper bound of kappa = sum(a) / sqrt(p): the double sum of p <= a few
 * hundred floats errs by at most p 2^-53 sum |a_q| (the root and the division a few ulp
 * more), far inside the 2^-36 relative margin. */
static void kappa_bounds(double *lo, double *hi, const float *a, int p)
{
  double s = 0.0, abs_sum = 0.0;
  for (int q = 0; q < p; q++)
    s += a[q], abs_sum += fabs(a[q]);
  const double root = sqrt((double)p), err = ldexp(abs_sum / root, -36);
  *lo = s / root - err, *hi = s / root + err;
}

typedef struct {
  double lo, hi;
  int row;
} KeyedRow;

/* By lo, then by row: a total order, so the sort is the same on every run. */
static int by_lo(const void *pa, const void *pb)
{
  const KeyedRow *a = pa, *b = pb;
  if (a->lo != b->lo)
    return a->lo < b->lo ? -1 : 1;
  return (a->row > b->row) - (a->row < b->row);
}

/* The sorted rows and their tiles' bounds: tile_lo[t] the least lo of tile t (its first row),
 * hi_below[t] the largest hi of tiles 0..t, hi_own[t] that of tile t alone. */
typedef struct {
  int n, p, m, tiles;
  const float *patches;
  KeyedRow *rows; /* n, sorted */
  double *tile_lo, *hi_below, *hi_own;
  double gf, eps; /* d_f >= d (1 - gf) - eps */
} PruneIndex;

static gboolean prune_index_init(PruneIndex *x, const float *patches, int n, int p, int m)
{
  *x = (PruneIndex){.n = n, .p = p, .m = m, .patches = patches};
  x->tiles = (n + NW_NLM_PRUNE_TILE - 1) / NW_NLM_PRUNE_TILE;
  x->rows = g_try_new(KeyedRow, n);
  x->tile_lo = g_try_new(double, x->tiles);
  x->hi_below = g_try_new(double, x->tiles);
  x->hi_own = g_try_new(double, x->tiles);
  if (x->rows == NULL || x->tile_lo == NULL || x->hi_below == NULL || x->hi_own == NULL)
    return FALSE;
  for (int j = 0; j < n; j++) {
    kappa_bounds(&x->rows[j].lo, &x->rows[j].hi, patches + (size_t)j * p, p);
    x->rows[j].row = j;
  }
  qsort(x->rows, n, sizeof *x->rows, by_lo);
  for (int t = 0; t < x->tiles; t++) {
    const int r0 = t * NW_NLM_PRUNE_TILE, r1 = MIN(n, r0 + NW_NLM_PRUNE_TILE);
    x->tile_lo[t] = x->rows[r0].lo;
    x->hi_own[t] = x->rows[r0].hi;
    for (int r = r0 + 1; r < r1; r++)
      x->hi_own[t] = MAX(x->hi_own[t], x->rows[r].hi);
    x->hi_below[t] = t > 0 ? MAX(x->hi_below[t - 1], x->hi_own[t]) : x->hi_own[t];
  }
  x->gf = ((p + 7) / 8 + 8) * ldexp(1.0, -23);
  x->eps = p * ldexp(1.0, -120);
  return TRUE;
}

static void prune_index_clear(PruneIndex *x)
{
  g_free(x->rows);
  g_free(x->tile_lo);
  g_free(x->hi_below);
  g_free(x->hi_own);
}

/* Can no pair at kappa distance >= g (g > 0 known, else FALSE) beat a row's m-th best tau?
 * In double, L rounded down a little further; strict, so a tie with tau is never skipped. */
static gboolean prune_beyond(const PruneIndex *x, double g, float tau)
{
  if (!(g > 0.0))
    return FALSE;
  const double lower = g * g * (1.0 - x->gf) * (1.0 - 0x1p-40) - x->eps;
  return lower > (double)tau;
}

/* Offer (d, l) to a max-heap of at most m entries: kept when there is room or it beats the
 * worst (the root). */
static void heap_offer(float *hd, int *hl, int *size, int m, float d, int l)
{
  if (*size < m) {
    hd[*size] = d, hl[*size] = l;
    sift_up(hd, hl, (*size)++);
  } else if (before(d, l, hd[0], hl[0])) {
    hd[0] = d, hl[0] = l;
    sift_down(hd, hl, m, 0);
  }
}

/* Every pair of the block's query rows (sorted positions q0..q1) with tile t's rows into the
 * rows' heaps (nbr / nd rows of the original indices). */
static void visit_tile(const PruneIndex *x, int *nbr, float *nd, int *size, int q0, int q1, int t)
{
  const int c0 = t * NW_NLM_PRUNE_TILE, c1 = MIN(x->n, c0 + NW_NLM_PRUNE_TILE), m = x->m;
  for (int q = q0; q < q1; q++) {
    const int j = x->rows[q].row;
    const float *a = x->patches + (size_t)j * x->p;
    for (int c = c0; c < c1; c++) {
      const int l = x->rows[c].row;
      if (l != j)
        heap_offer(nd + (size_t)j * m, nbr + (size_t)j * m, &size[q - q0], m,
                   squared_distance(a, x->patches + (size_t)l * x->p, x->p), l);
    }
  }
}

/* The largest m-th best of the block's rows so far; +inf while a row has fewer than m. */
static float block_threshold(const PruneIndex *x, const float *nd, const int *size, int q0, int q1)
{
  float tau = 0.0f;
  for (int q = q0; q < q1; q++) {
    if (size[q - q0] < x->m)
      return INFINITY;
    tau = MAX(tau, nd[(size_t)x->rows[q].row * x->m]); /* the heap's root */
  }
  return tau;
}

/* Block b of sorted rows: the outward scan; returns the tiles it visited. */
static int prune_block(const PruneIndex *x, int *nbr, float *nd, int b)
{
  const int q0 = b * NW_NLM_PRUNE_TILE, q1 = MIN(x->n, q0 + NW_NLM_PRUNE_TILE);
  int size[NW_NLM_PRUNE_TILE] = {0};
  visit_tile(x, nbr, nd, size, q0, q1, b);
  int visited = 1, up = b + 1, down = b - 1;
  while (up < x->tiles || down >= 0) {
    if (up < x->tiles) {
      const float tau = block_threshold(x, nd, size, q0, q1);
      if (prune_beyond(x, x->tile_lo[up] - x->hi_own[b], tau))
        up = x->tiles; /* and every tile above it */
      else
        visit_tile(x, nbr, nd, size, q0, q1, up++), visited++;
    }
    if (down >= 0) {
      const float tau = block_threshold(x, nd, size, q0, q1);
      if (prune_beyond(x, x->tile_lo[b] - x->hi_below[down], tau))
        down = -1;
      else
        visit_tile(x, nbr, nd, size, q0, q1, down--), visited++;
    }
  }
  /* heap sort in place: ascending rows */
  for (int q = q0; q < q1; q++) {
    const int j = x->rows[q].row;
    for (int end = size[q - q0] - 1; end > 0; end--) {
      swap_entries(nd + (size_t)j * x->m, nbr + (size_t)j * x->m, 0, end);
      sift_down(nd + (size_t)j * x->m, nbr + (size_t)j * x->m, end, 0);
    }
  }
  return visited;
}

/* Non-finite values make kappa meaningless (and the sort ill-defined): the brute force then. */
static gboolean all_finite(const float *patches, size_t count)
{
  for (size_t e = 0; e < count; e++)
    if (!isfinite(patches[e]))
      return FALSE;
  return TRUE;
}

gboolean nw_nlm_neighbours_pruned_cpu(int *nbr, float *nd, const float *patches, int n, int p,
                                      int m, double *visited_fraction)
{
  if (visited_fraction != NULL)
    *visited_fraction = 1.0;
  if (!all_finite(patches, (size_t)n * p))
    return nw_nlm_neighbours_brute_cpu(nbr, nd, patches, n, p, m);
  PruneIndex x;
  if (!prune_index_init(&x, patches, n, p, m)) {
    prune_index_clear(&x);
    return FALSE;
  }
  gint64 visited = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : visited)
  for (int b = 0; b < x.tiles; b++)
    visited += prune_block(&x, nbr, nd, b);
  if (visited_fraction != NULL)
    *visited_fraction = (double)visited / ((double)x.tiles * x.tiles);
  prune_index_clear(&x);
  return TRUE;
}

gboolean nw_nlm_neighbours_cpu(int *nbr, float *nd, const float *patches, int n, int p, int m)
{
  return nw_nlm_neighbours_pruned_cpu(nbr, nd, patches, n, p, m, NULL);
}
