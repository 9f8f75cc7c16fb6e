/* volume.c — NwVolume allocation, geometry and statistics. Any thread. */
#define _DEFAULT_SOURCE /* madvise's MADV_HUGEPAGE (Linux) */
#include "volume.h"

#include <math.h>
#include <stdint.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "beside.h"
#include "copy_beside.h"
#include "nw_error.h"

/* The voxel count of a volume of these sizes, 0 (and an error) when they are not valid. */
static size_t checked_voxels(int nx, int ny, int nz, int nc, GError **error)
{
  if (nx <= 0 || ny <= 0 || nz <= 0 || nc <= 0) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "invalid volume size %d x %d x %d x %d", nx,
                ny, nz, nc);
    return 0;
  }
  size_t n = (size_t)nx * (size_t)ny * (size_t)nz;
  if (n > NW_MAX_VOXELS || n * (size_t)nc > NW_MAX_VOXELS * 3u) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "volume size %d x %d x %d (%zu voxels) exceeds the limit of %zu voxels", nx, ny,
                nz, n, NW_MAX_VOXELS);
    return 0;
  }
  return n;
}

static void set_no_memory(size_t n, int nc, GError **error)
{
  g_set_error(error, NW_ERROR, NW_ERROR_NOMEM, "out of memory for %zu voxels (%.1f MiB)", n,
              (double)(n * (size_t)nc * sizeof(float)) / 1048576.0);
}

/* The header of a volume around data (owned, from allocator). */
static NwVolume *wrap(float *data, const NwVoxelAllocator *allocator, int nx, int ny, int nz,
                      int nc)
{
  NwVolume *v = g_new0(NwVolume, 1);
  v->nx = nx;
  v->ny = ny;
  v->nz = nz;
  v->nc = nc;
  v->data = data;
  v->allocator = allocator;
  nw_volume_set_spacing(v, 1.0, 1.0, 1.0);
  return v;
}

/* Large voxel arrays in transparent huge pages where the kernel gives them only when asked
 * (THP "madvise", Ubuntu's default): 512 times fewer page faults when the array is first
 * written, and far fewer pages to unmap when it is freed (a 3072² float image freed in 3.9 ms
 * with 4 KiB pages, in 1.3 ms with huge pages: bench_affine on the H100 host, with glibc's
 * malloc asked for them). The advice covers the 2 MiB-aligned part of the block (calloc's
 * large blocks are fresh mappings, still untouched); where it is refused nothing changes. */
static void advise_huge_pages(void *data, size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const uintptr_t huge = (uintptr_t)2 << 20;
  if (bytes < 4 * huge)
    return;
  const uintptr_t begin = ((uintptr_t)data + huge - 1) & ~(huge - 1);
  const uintptr_t end = ((uintptr_t)data + bytes) & ~(huge - 1);
  if (end > begin)
    (void)madvise((void *)begin, end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

NwVolume *nw_volume_new(int nx, int ny, int nz, int nc, GError **error)
{
  const size_t n = checked_voxels(nx, ny, nz, nc, error);
  if (n == 0)
    return NULL;
  float *data = g_try_malloc0_n(n * (size_t)nc, sizeof(float));
  if (data == NULL) {
    set_no_memory(n, nc, error);
    return NULL;
  }
  advise_huge_pages(data, n * (size_t)nc * sizeof(float));
  return wrap(data, NULL, nx, ny, nz, nc);
}

NwVolume *nw_volume_new_from(const NwVoxelAllocator *allocator, int nx, int ny, int nz, int nc,
                             GError **error)
{
  g_return_val_if_fail(allocator != NULL, NULL);
  const size_t n = checked_voxels(nx, ny, nz, nc, error);
  if (n == 0)
    return NULL;
  float *data = allocator->alloc(n * (size_t)nc * sizeof(float));
  if (data == NULL) {
    set_no_memory(n, nc, error);
    return NULL;
  }
  return wrap(data, allocator, nx, ny, nz, nc);
}

NwVolume *nw_volume_new_like(const NwVolume *like, int nc, GError **error)
{
  NwVolume *v = nw_volume_new(like->nx, like->ny, like->nz, nc, error);
  if (v != NULL)
    nw_volume_set_affine(v, like->vox_to_ras);
  return v;
}

/* One thread's memcpy reaches a fraction of the memory bandwidth, and the new pages of a
 * fresh destination are first touched (faulted in) in parallel: copy_beside.h's pieces, with
 * a staging chunk's helpers. */
void nw_copy_floats(float *dst, const float *src, size_t n)
{
  nw_copy_voxels_helped(dst, 1, src, 1, n, nw_beside_copy_helpers());
}

void nw_volume_copy_header(NwVolume *dst, const NwVolume *like)
{
  dst->nx = like->nx;
  dst->ny = like->ny;
  dst->nz = like->nz;
  dst->nc = like->nc;
  memcpy(dst->spacing_mm, like->spacing_mm, sizeof dst->spacing_mm);
  memcpy(dst->vox_to_ras, like->vox_to_ras, sizeof dst->vox_to_ras);
}

NwVolume *nw_volume_copy(const NwVolume *v)
{
  NwVolume *c = g_new0(NwVolume, 1);
  nw_volume_copy_header(c, v);
  const size_t n = nw_volume_n_floats(v);
  c->data = g_new(float, n);
  advise_huge_pages(c->data, n * sizeof(float));
  nw_copy_floats(c->data, v->data, n);
  return c;
}

NwVolume *nw_volume_try_copy(const NwVolume *v, GError **error)
{
  NwVolume *c = nw_volume_new_like(v, v->nc, error);
  if (c != NULL)
    nw_copy_floats(c->data, v->data, nw_volume_n_floats(v));
  return c;
}

void nw_volume_free(NwVolume *v)
{
  if (v == NULL)
    return;
  if (v->allocator != NULL)
    v->allocator->free(v->data);
  else
    g_free(v->data);
  g_free(v);
}

void nw_volume_set_affine(NwVolume *v, const double vox_to_ras[16])
{
  memcpy(v->vox_to_ras, vox_to_ras, sizeof v->vox_to_ras);
  for (int c = 0; c < 3; c++) {
    double s2 = 0.0;
    for (int r = 0; r < 3; r++)
      s2 += vox_to_ras[r * 4 + c] * vox_to_ras[r * 4 + c];
    v->spacing_mm[c] = (float)sqrt(s2);
  }
}

void nw_volume_set_spacing(NwVolume *v, double sx, double sy, double sz)
{
  double a[16] = {sx, 0, 0, 0, 0, sy, 0, 0, 0, 0, sz, 0, 0, 0, 0, 1};
  nw_volume_set_affine(v, a);
}

void nw_volume_voxel_to_world(const NwVolume *v, const double ijk[3], double ras_mm[3])
{
  const double *a = v->vox_to_ras;
  for (int r = 0; r < 3; r++)
    ras_mm[r] = a[r * 4 + 0] * ijk[0] + a[r * 4 + 1] * ijk[1] + a[r * 4 + 2] * ijk[2] + a[r * 4 + 3];
}

/* Solve A x = b for the 3x3 linear part by Cramer's rule (the affine is well conditioned:
 * a voxel grid). */
void nw_volume_world_to_voxel(const NwVolume *v, const double ras_mm[3], double ijk[3])
{
  const double *a = v->vox_to_ras;
  double m[3][3], b[3];
  for (int r = 0; r < 3; r++) {
    for (int c = 0; c < 3; c++)
      m[r][c] = a[r * 4 + c];
    b[r] = ras_mm[r] - a[r * 4 + 3];
  }
  double det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
               m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
               m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
  if (det == 0.0) {
    ijk[0] = ijk[1] = ijk[2] = NAN;
    return;
  }
  for (int c = 0; c < 3; c++) {
    double t[3][3];
    memcpy(t, m, sizeof t);
    for (int r = 0; r < 3; r++)
      t[r][c] = b[r];
    ijk[c] = (t[0][0] * (t[1][1] * t[2][2] - t[1][2] * t[2][1]) -
              t[0][1] * (t[1][0] * t[2][2] - t[1][2] * t[2][0]) +
              t[0][2] * (t[1][0] * t[2][1] - t[1][1] * t[2][0])) /
             det;
  }
}

void nw_volume_orientation_code(const NwVolume *v, char code[4])
{
  static const char pos[3] = {'R', 'A', 'S'}, neg[3] = {'L', 'P', 'I'};
  gboolean axis_done[3] = {FALSE, FALSE, FALSE}, world_used[3] = {FALSE, FALSE, FALSE};
  /* Greedy by the largest absolute direction cosine, so that each world axis is named once
   * even for oblique affines. */
  for (int round = 0; round < 3; round++) {
    double best = -1.0;
    int best_c = 0, best_r = 0;
    for (int c = 0; c < 3; c++) {
      if (axis_done[c])
        continue;
      double norm = v->spacing_mm[c] > 0.0f ? v->spacing_mm[c] : 1.0;
      for (int r = 0; r < 3; r++) {
        double cosine = fabs(v->vox_to_ras[r * 4 + c]) / norm;
        if (!world_used[r] && cosine > best) {
          best = cosine;
          best_c = c;
          best_r = r;
        }
      }
    }
    axis_done[best_c] = TRUE;
    world_used[best_r] = TRUE;
    code[best_c] = v->vox_to_ras[best_r * 4 + best_c] >= 0.0 ? pos[best_r] : neg[best_r];
  }
  code[3] = '\0';
}

gboolean nw_volume_same_grid(const NwVolume *a, const NwVolume *b)
{
  if (a->nx != b->nx || a->ny != b->ny || a->nz != b->nz)
    return FALSE;
  for (int e = 0; e < 16; e++)
    if (fabs(a->vox_to_ras[e] - b->vox_to_ras[e]) > 1e-4)
      return FALSE;
  return TRUE;
}

gboolean nw_volume_check_same_grid(const NwVolume *a, const char *name_a, const NwVolume *b,
                                   const char *name_b, GError **error)
{
  if (a->nx != b->nx || a->ny != b->ny || a->nz != b->nz) {
    g_set_error(error, NW_ERROR, NW_ERROR_MISMATCH,
                "%s is %d x %d x %d but %s is %d x %d x %d: the images must be on one grid",
                name_a, a->nx, a->ny, a->nz, name_b, b->nx, b->ny, b->nz);
    return FALSE;
  }
  if (!nw_volume_same_grid(a, b)) {
    g_set_error(error, NW_ERROR, NW_ERROR_MISMATCH,
                "%s and %s have the same size but different voxel-to-world affines: resample "
                "one onto the other's grid first",
                name_a, name_b);
    return FALSE;
  }
  return TRUE;
}

void nw_volume_stats(const NwVolume *v, NwVolumeStats *stats)
{
  size_t n = nw_volume_n_floats(v), bad = 0, good = 0;
  float lo = INFINITY, hi = -INFINITY;
  double sum = 0.0;
  for (size_t e = 0; e < n; e++) {
    float x = v->data[e];
    if (!isfinite(x)) {
      bad++;
      continue;
    }
    lo = x < lo ? x : lo;
    hi = x > hi ? x : hi;
    sum += x;
    good++;
  }
  stats->min = good ? lo : 0.0f;
  stats->max = good ? hi : 0.0f;
  stats->mean = good ? sum / (double)good : 0.0;
  stats->n_nonfinite = bad;
}

/* A scan in pieces of 64 Ki floats (256 KiB), shared with helper threads that are not
 * waited for (beside.h): one thread reaches a fraction of the memory bandwidth. */
#define PIECE_FLOATS ((size_t)1 << 16)

typedef struct {
  const float *v;
  size_t n;
  gsize bad; /* atomic (g_atomic_pointer_add): a count, exact in any order */
} FiniteScan;

/* NaN and Inf have every exponent bit set. Blocks of 16 with a fixed trip count, which the
 * compiler turns into vector compares at -O2 (a float at a time took 2.2 ms for two 3072²
 * inputs on 8 of the H100 host's cores). */
static size_t count_non_finite(const float *v, size_t n)
{
  size_t bad = 0, e = 0;
  for (; e + 16 <= n; e += 16) {
    uint32_t b[16];
    memcpy(b, v + e, sizeof b);
    unsigned int k = 0;
    for (int l = 0; l < 16; l++)
      k += (b[l] & 0x7f800000u) == 0x7f800000u;
    bad += k;
  }
  for (; e < n; e++)
    bad += !isfinite(v[e]);
  return bad;
}

static void scan_piece(gpointer data, guint p)
{
  FiniteScan *s = data;
  const size_t e0 = (size_t)p * PIECE_FLOATS;
  const gsize bad = count_non_finite(s->v + e0, MIN(PIECE_FLOATS, s->n - e0));
  if (bad > 0)
    g_atomic_pointer_add(&s->bad, (gssize)bad);
}

gboolean nw_volume_check_finite(const NwVolume *v, const char *name, GError **error)
{
  /* over the cores: it runs on every registration's inputs */
  FiniteScan s = {v->data, nw_volume_n_floats(v), 0};
  nw_beside_run((guint)((s.n + PIECE_FLOATS - 1) / PIECE_FLOATS), nw_beside_scan_helpers(),
                scan_piece, &s);
  const size_t bad = (size_t)g_atomic_pointer_get(&s.bad);
  if (bad == 0)
    return TRUE;
  g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
              "%s: %zu of %zu voxels are NaN or Inf; mask or fill them before registering",
              name, bad, s.n);
  return FALSE;
}

void nw_volume_copy_region(const NwVolume *v, const int lo[3], const int hi[3], float *out)
{
  const size_t w = (size_t)(hi[0] - lo[0]);
  for (int k = lo[2]; k < hi[2]; k++)
    for (int j = lo[1]; j < hi[1]; j++, out += w)
      memcpy(out, v->data + nw_volume_index(v, lo[0], j, k), w * sizeof(float));
}
