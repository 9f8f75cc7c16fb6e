/* nlm_neighbours_cpu.c — the fully non-local part of nlm-surface: all-pairs squared patch
 * distances over the band and the exact top-m selection per element (nlm_kernels.h). CPU
 * reference, O(N^2 P) time: minutes for N in the tens of thousands, which is why the GPU
 * does it as a GEMM; tests use a few thousand elements. Any thread; OpenMP over rows. */
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

gboolean nw_nlm_neighbours_cpu(int *nbr, float *nd, const float *patches, int n, int p, int m)
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
