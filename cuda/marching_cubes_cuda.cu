/* marching_cubes_cuda.cu — marching cubes on the GPU (see nw_marching_cubes_cuda.h), the twin
 * of core/marching_cubes.c: the same generated case table, cube order, triangle order,
 * vertex interpolation and gradient normals, written as a triangle soup. CUDA back end; any
 * thread, everything on the caller's stream.
 *
 * Three passes: count the triangles of every cube, an exclusive scan (CUB) of the counts for
 * each cube's first triangle, then emit. A vertex shared by several cubes is computed by
 * each of them (a soup has no sharing), with the CPU's formula, in double precision.
 * Where the gradient vanishes or is not finite (a NaN voxel nearby) the CPU takes the
 * area-weighted mean of the face normals of every triangle sharing the vertex; here the
 * vertex's grid edge names those triangles (they lie in the up to four cubes around the
 * edge), so the same sum is formed over them, in the CPU's order. */
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>
#include <math.h>
#include <string.h>

#include "cuda_check.h"
#include "marching_cubes.h"
#include "nw_error.h"
#include "nw_marching_cubes_cuda.h"

__constant__ signed char c_table[256 * NW_MC_TABLE_STRIDE];
__constant__ int c_edge_corner[12];
__constant__ int c_edge_axis[12];

struct McGeom {
  int nx, ny, nz;
  double a[12];     /* vox_to_ras rows 0..2 */
  double inv_t[9];  /* inverse-transpose of its 3x3 */
  gboolean flip;    /* mirroring affine: swap the last two corners of every triangle */
};

struct NwMcCuda {
  int device;
  gboolean table_ready;
  unsigned int *counts, *offsets;
  size_t cap_cubes;
  void *scan_tmp;
  size_t scan_bytes;
  unsigned int *h_total; /* pinned: [0] last offset, [1] last count */
};

extern "C" NwMcCuda *nw_mc_cuda_new(void)
{
  NwMcCuda *mc = g_new0(NwMcCuda, 1);
  cudaGetDevice(&mc->device);
  return mc;
}

extern "C" void nw_mc_cuda_free(NwMcCuda *mc)
{
  if (mc == NULL)
    return;
  cudaFree(mc->counts);
  cudaFree(mc->offsets);
  cudaFree(mc->scan_tmp);
  cudaFreeHost(mc->h_total);
  g_free(mc);
}

__device__ __forceinline__ bool inside_at(const float *f, size_t idx, float iso)
{
  return f[idx] >= iso; /* NaN compares false: outside */
}

__device__ __forceinline__ int cube_case(const float *f, int i, int j, int k, const McGeom &g,
                                         float iso)
{
  const size_t sx = 1, sy = (size_t)g.nx, sz = (size_t)g.nx * g.ny;
  const size_t at0 = (size_t)i + sy * j + sz * k;
  int ci = 0;
  for (int c = 0; c < 8; c++)
    ci |= (int)inside_at(f, at0 + (c & 1) * sx + (c >> 1 & 1) * sy + (c >> 2 & 1) * sz, iso) << c;
  return ci;
}

__device__ __forceinline__ void cube_of(size_t cube, const McGeom &g, int *i, int *j, int *k)
{
  const size_t cx = g.nx - 1, cy = g.ny - 1;
  *i = (int)(cube % cx);
  *j = (int)(cube / cx % cy);
  *k = (int)(cube / (cx * cy));
}

__global__ void count_kernel(const float *f, McGeom g, float iso, size_t n_cubes,
                             unsigned int *counts)
{
  for (size_t cube = blockIdx.x * (size_t)blockDim.x + threadIdx.x; cube < n_cubes;
       cube += (size_t)gridDim.x * blockDim.x) {
    int i, j, k;
    cube_of(cube, g, &i, &j, &k);
    const signed char *row = c_table + cube_case(f, i, j, k, g, iso) * NW_MC_TABLE_STRIDE;
    int m = 0;
    while (row[m] >= 0)
      m++;
    counts[cube] = (unsigned int)(m / 3);
  }
}

/* Central difference along axis a at voxel p; one-sided at the border (as the CPU). */
__device__ double gradient_axis(const float *f, const McGeom &g, const int p[3], int a)
{
  const int n[3] = {g.nx, g.ny, g.nz};
  int lo[3] = {p[0], p[1], p[2]}, hi[3] = {p[0], p[1], p[2]};
  lo[a] = max(p[a] - 1, 0);
  hi[a] = min(p[a] + 1, n[a] - 1);
  if (hi[a] == lo[a])
    return 0.0;
  const double fl = f[(size_t)lo[0] + (size_t)g.nx * (lo[1] + (size_t)g.ny * lo[2])];
  const double fh = f[(size_t)hi[0] + (size_t)g.nx * (hi[1] + (size_t)g.ny * hi[2])];
  return (fh - fl) / (hi[a] - lo[a]);
}

/* The vertex on the grid edge from voxel p along axis a: position (RAS mm) and unit outward
 * normal (zero when the gradient vanishes). */
__device__ void edge_vertex(const float *f, const McGeom &g, float iso, const int p[3], int a,
                            float *out)
{
  int q[3] = {p[0], p[1], p[2]};
  q[a]++;
  const double f0 = f[(size_t)p[0] + (size_t)g.nx * (p[1] + (size_t)g.ny * p[2])];
  const double f1 = f[(size_t)q[0] + (size_t)g.nx * (q[1] + (size_t)g.ny * q[2])];
  double t = (iso - f0) / (f1 - f0);
  if (!isfinite(t))
    t = 0.5;
  t = fmin(fmax(t, 0.0), 1.0);
  double ijk[3] = {(double)p[0], (double)p[1], (double)p[2]};
  ijk[a] += t;
  for (int r = 0; r < 3; r++)
    out[r] = (float)(g.a[r * 4] * ijk[0] + g.a[r * 4 + 1] * ijk[1] + g.a[r * 4 + 2] * ijk[2] +
                     g.a[r * 4 + 3]);
  double gr[3], n[3], len = 0.0;
  for (int d = 0; d < 3; d++)
    gr[d] = (1.0 - t) * gradient_axis(f, g, p, d) + t * gradient_axis(f, g, q, d);
  for (int r = 0; r < 3; r++) {
    n[r] = -(g.inv_t[r * 3] * gr[0] + g.inv_t[r * 3 + 1] * gr[1] + g.inv_t[r * 3 + 2] * gr[2]);
    len += n[r] * n[r];
  }
  len = sqrt(len);
  for (int d = 0; d < 3; d++)
    out[3 + d] = isfinite(len) && len > 1e-30 ? (float)(n[d] / len) : 0.0f;
}

/* Vertex position (RAS mm, as the CPU stores it: float) on the grid edge from voxel p along
 * axis a. */
__device__ void edge_position(const float *f, const McGeom &g, float iso, const int p[3], int a,
                              float out[3])
{
  float v[6];
  edge_vertex(f, g, iso, p, a, v);
  out[0] = v[0];
  out[1] = v[1];
  out[2] = v[2];
}

/* The CPU's fallback normal (nw_surface_compute_normals over the shared-vertex mesh) for the
 * vertex on grid edge (p, a): the sum of the unnormalised face normals, in double, of every
 * triangle that uses this edge, in increasing cube index and table order, with the CPU's
 * winding (flipped for a mirroring affine); normalised, or zero when it vanishes. */
__device__ void shared_face_normal(const float *f, const McGeom &g, float iso, const int p[3],
                                   int a, float out[3])
{
  const int b = a == 0 ? 1 : 0, c = a == 2 ? 1 : 2; /* the other two axes, b < c */
  const int n[3] = {g.nx, g.ny, g.nz};
  double acc[3] = {0.0, 0.0, 0.0};
  /* cubes with base p - db e_b - dc e_c; increasing cube index = dc first (higher axis), then
   * db, both from 1 (lower base) to 0 */
  for (int dc = 1; dc >= 0; dc--)
    for (int db = 1; db >= 0; db--) {
      int base[3] = {p[0], p[1], p[2]};
      base[b] -= db;
      base[c] -= dc;
      if (base[0] < 0 || base[1] < 0 || base[2] < 0 || base[0] + 1 >= n[0] ||
          base[1] + 1 >= n[1] || base[2] + 1 >= n[2])
        continue;
      /* the cube edge that is this grid edge: along a, from the corner with bits db, dc */
      const int corner = (db << b) | (dc << c);
      const signed char *row =
          c_table + cube_case(f, base[0], base[1], base[2], g, iso) * NW_MC_TABLE_STRIDE;
      for (int t = 0; row[t * 3] >= 0; t++) {
        bool uses = false;
        for (int m = 0; m < 3; m++) {
          const int e = row[t * 3 + m];
          uses |= c_edge_axis[e] == a && c_edge_corner[e] == corner;
        }
        if (!uses)
          continue;
        float v[3][3];
        for (int m = 0; m < 3; m++) {
          const int e = row[t * 3 + m], ce = c_edge_corner[e];
          const int q[3] = {base[0] + (ce & 1), base[1] + (ce >> 1 & 1), base[2] + (ce >> 2 & 1)};
          edge_position(f, g, iso, q, c_edge_axis[e], v[m]);
        }
        const int o1 = g.flip ? 2 : 1, o2 = g.flip ? 1 : 2;
        double u[3], w[3];
        for (int d = 0; d < 3; d++) {
          u[d] = (double)v[o1][d] - v[0][d];
          w[d] = (double)v[o2][d] - v[0][d];
        }
        acc[0] += u[1] * w[2] - u[2] * w[1];
        acc[1] += u[2] * w[0] - u[0] * w[2];
        acc[2] += u[0] * w[1] - u[1] * w[0];
      }
    }
  const double len = sqrt(acc[0] * acc[0] + acc[1] * acc[1] + acc[2] * acc[2]);
  for (int d = 0; d < 3; d++)
    out[d] = len > 0.0 ? (float)(acc[d] / len) : 0.0f;
}

__global__ void emit_kernel(const float *f, McGeom g, float iso, size_t n_cubes,
                            const unsigned int *counts, const unsigned int *offsets,
                            float *out, size_t max_triangles)
{
  for (size_t cube = blockIdx.x * (size_t)blockDim.x + threadIdx.x; cube < n_cubes;
       cube += (size_t)gridDim.x * blockDim.x) {
    const unsigned int nt = counts[cube];
    if (nt == 0 || offsets[cube] >= max_triangles)
      continue;
    int i, j, k;
    cube_of(cube, g, &i, &j, &k);
    const signed char *row = c_table + cube_case(f, i, j, k, g, iso) * NW_MC_TABLE_STRIDE;
    for (unsigned int t = 0; t < nt; t++) {
      const size_t tri = (size_t)offsets[cube] + t;
      if (tri >= max_triangles)
        break;
      float v[3][6];
      int grid_edge[3][4]; /* p and axis of each vertex, for the fallback normal */
      for (int m = 0; m < 3; m++) {
        const int e = row[t * 3 + m], c = c_edge_corner[e];
        const int p[3] = {i + (c & 1), j + (c >> 1 & 1), k + (c >> 2 & 1)};
        edge_vertex(f, g, iso, p, c_edge_axis[e], v[m]);
        grid_edge[m][0] = p[0];
        grid_edge[m][1] = p[1];
        grid_edge[m][2] = p[2];
        grid_edge[m][3] = c_edge_axis[e];
      }
      /* the CPU flips the winding of every triangle for a mirroring affine */
      const int o1 = g.flip ? 2 : 1, o2 = g.flip ? 1 : 2;
      float *dst = out + tri * 18;
      const int order[3] = {0, o1, o2};
      for (int m = 0; m < 3; m++) {
        const float *src = v[order[m]];
        float nrm[3] = {src[3], src[4], src[5]};
        if (nrm[0] == 0.0f && nrm[1] == 0.0f && nrm[2] == 0.0f)
          shared_face_normal(f, g, iso, grid_edge[order[m]], grid_edge[order[m]][3], nrm);
        for (int d = 0; d < 3; d++) {
          dst[m * 6 + d] = src[d];
          dst[m * 6 + 3 + d] = nrm[d];
        }
      }
    }
  }
}

static gboolean upload_table(NwMcCuda *mc, GError **error)
{
  if (mc->table_ready)
    return TRUE;
  int corner[12], axis[12];
  for (int e = 0; e < 12; e++)
    nw_mc_edge(e, &corner[e], &axis[e]);
  if (!NW_CUDA_CHECK(cudaMemcpyToSymbol(c_table, nw_mc_triangle_table(), sizeof c_table), error))
    return FALSE;
  if (!NW_CUDA_CHECK(cudaMemcpyToSymbol(c_edge_corner, corner, sizeof corner), error))

    return FALSE;
  if (!NW_CUDA_CHECK(cudaMemcpyToSymbol(c_edge_axis, axis, sizeof axis), error))

    return FALSE;
  if (!NW_CUDA_CHECK(cudaMallocHost(&mc->h_total, 2 * sizeof(unsigned int)), error))

    return FALSE;
  mc->table_ready = TRUE;
  return TRUE;
}

static gboolean fit(NwMcCuda *mc, size_t n_cubes, GError **error)
{
  if (n_cubes <= mc->cap_cubes)
    return TRUE;
  cudaFree(mc->counts);
  cudaFree(mc->offsets);
  cudaFree(mc->scan_tmp);
  mc->counts = mc->offsets = NULL;
  mc->scan_tmp = NULL;
  mc->cap_cubes = 0;
  if (!NW_CUDA_CHECK(cudaMalloc(&mc->counts, n_cubes * sizeof(unsigned int)), error))
    return FALSE;
  if (!NW_CUDA_CHECK(cudaMalloc(&mc->offsets, n_cubes * sizeof(unsigned int)), error))

    return FALSE;
  mc->scan_bytes = 0;
  if (!NW_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(NULL, mc->scan_bytes, mc->counts, mc->offsets,
                                      (int)n_cubes), error))
    return FALSE;
  if (!NW_CUDA_CHECK(cudaMalloc(&mc->scan_tmp, mc->scan_bytes), error))

    return FALSE;
  mc->cap_cubes = n_cubes;
  return TRUE;
}

static void geometry(McGeom *g, int nx, int ny, int nz, const double m[16])
{
  g->nx = nx;
  g->ny = ny;
  g->nz = nz;
  memcpy(g->a, m, 12 * sizeof(double));
  g->flip = nw_mc_normal_matrix(m, g->inv_t) < 0; /* the CPU's normals and winding */
}

extern "C" gboolean nw_mc_cuda_run(NwMcCuda *mc, const float *d_image, int nx, int ny, int nz,
                                   const double vox_to_ras[16], float iso, float *d_out,
                                   size_t max_triangles, size_t *n_total, size_t *n_written,
                                   void *stream, GError **error)
{
  *n_total = *n_written = 0;
  if (!isfinite(iso)) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "iso-value %g is not finite", iso);
    return FALSE;
  }
  if (nx < 2 || ny < 2 || nz < 2)
    return TRUE; /* no cubes */
  const size_t n_cubes = (size_t)(nx - 1) * (ny - 1) * (nz - 1);
  if (n_cubes > (size_t)G_MAXINT32 / 8) {
    g_set_error(error, NW_ERROR, NW_ERROR_NOMEM, "iso-surface of %dx%dx%d voxels: too large",
                nx, ny, nz);
    return FALSE;
  }
  cudaStream_t s = (cudaStream_t)stream;
  if (!upload_table(mc, error) || !fit(mc, n_cubes, error))
    return FALSE;
  McGeom g;
  geometry(&g, nx, ny, nz, vox_to_ras);
  const int block = 256;
  const unsigned int grid = (unsigned int)MIN((n_cubes + block - 1) / block, (size_t)65535 * 4);
  count_kernel<<<grid, block, 0, s>>>(d_image, g, iso, n_cubes, mc->counts);
  if (!NW_CUDA_CHECK(nw_cuda_launched(s), error))
    return FALSE;
  if (!NW_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(mc->scan_tmp, mc->scan_bytes, mc->counts, mc->offsets,
                                      (int)n_cubes, s), error))
    return FALSE;
  if (!NW_CUDA_CHECK(cudaMemcpyAsync(&mc->h_total[0], mc->offsets + n_cubes - 1, sizeof(unsigned int),
                        cudaMemcpyDeviceToHost, s), error))

    return FALSE;
  if (!NW_CUDA_CHECK(cudaMemcpyAsync(&mc->h_total[1], mc->counts + n_cubes - 1, sizeof(unsigned int),
                        cudaMemcpyDeviceToHost, s), error))

    return FALSE;
  if (!NW_CUDA_CHECK(cudaStreamSynchronize(s), error))

    return FALSE;
  *n_total = (size_t)mc->h_total[0] + mc->h_total[1];
  *n_written = MIN(*n_total, max_triangles);
  if (*n_written == 0)
    return TRUE;
  emit_kernel<<<grid, block, 0, s>>>(d_image, g, iso, n_cubes, mc->counts, mc->offsets, d_out,
                                      max_triangles);
  return NW_CUDA_CHECK(nw_cuda_launched(s), error);
}
