/* nlm_kernels.h — the kernels of level-set non-local means ("nlm-surface", nlm_surface_method.h),
 * CPU references. Each is one data-parallel pass that a CUDA kernel of the same name (_cuda)
 * is to reproduce, and the parity tests compare against these. Any thread; OpenMP over band
 * elements inside; results do not depend on the number of threads.
 *
 * Shapes (N band elements, P = n^3 patch values, m neighbours kept per element):
 *   band     N voxel indices (volume.h layout), increasing
 *   pos_mm   N x 3 world RAS mm of the band voxels' centres
 *   patches  N x P, row j = phi on the n x n x n patch around band voxel j, x fastest, then y,
 *            then z; voxels outside the grid repeat the nearest border voxel. The centre value
 *            phi_j is patches[j * P + P / 2].
 *   nbr, nd  N x m: for each element j, the m other elements l with the smallest squared patch
 *            distance ||patch_j - patch_l||^2 (mm^2), ascending by (distance, index l): the
 *            exact top-m, ties broken by the smaller index, so the choice is deterministic.
 *   w        N x m weights, wsum N row sums. */
#ifndef NW_NLM_KERNELS_H
#define NW_NLM_KERNELS_H

#include <glib.h>

#include "volume.h"

G_BEGIN_DECLS

/* Band voxels |phi| <= band_mm in increasing index order into band (room for every voxel of
 * phi); returns N. */
int nw_nlm_band_cpu(guint32 *band, const NwVolume *phi, float band_mm);
/* World positions of the band voxels' centres (N x 3, mm). */
void nw_nlm_positions_cpu(float *pos_mm, const NwVolume *phi, const guint32 *band, int n);
/* The N x P patch matrix (P = patch^3, patch odd). */
void nw_nlm_patches_cpu(float *patches, const NwVolume *phi, const guint32 *band, int n, int patch);

/* All-pairs squared patch distances of a block of rows: dist[r * n + l] =
 * ||patches[row0 + r] - patches[l]||^2 for r < rows, l < n, summed in float in 8 interleaved
 * partial sums (value q into sum q % 8) added pairwise: a fixed order.
 * The CUDA twin computes the same numbers as ||a||^2 + ||b||^2 - 2 a.b (a GEMM), which agrees
 * to rounding (relative 1e-5 of ||a||^2 + ||b||^2), not bit for bit. */
void nw_nlm_pair_distances_cpu(float *dist, const float *patches, int n, int p, int row0, int rows);
/* For each row r of a block, from its distances dist[r * n ..] (as above): the m smallest
 * (distance, l) pairs over l != row0 + r, ascending, into nbr / nd rows row0 + r. m <= n - 1. */
void nw_nlm_select_top_m_cpu(int *nbr, float *nd, const float *dist, int n, int row0, int rows,
                             int m);
/* Both over all N rows, a block of rows at a time (the block's distances are the only
 * N-sized scratch: O(block x N) memory, never N x N). FALSE when memory is short. The brute
 * force: the specification the pruned scan is tested against. */
gboolean nw_nlm_neighbours_brute_cpu(int *nbr, float *nd, const float *patches, int n, int p,
                                     int m);
/* The same output, bit for bit, by the pruned scan (nlm_neighbours_cpu.c: rows sorted by the
 * patch mean, blocks of NW_NLM_PRUNE_TILE rows scanning tiles of as many outward until a
 * rigorous lower bound of the distance passes every row's m-th best); the CUDA tc kernel
 * scans the same way. *visited_fraction (may be NULL): the (block, tile) pairs visited over
 * all of them. Non-finite values: the brute force. O(N P) memory besides the outputs. */
#define NW_NLM_PRUNE_TILE 64
gboolean nw_nlm_neighbours_pruned_cpu(int *nbr, float *nd, const float *patches, int n, int p,
                                      int m, double *visited_fraction);
/* The method's: nw_nlm_neighbours_pruned_cpu. */
gboolean nw_nlm_neighbours_cpu(int *nbr, float *nd, const float *patches, int n, int p, int m);

/* w[j, s] = exp(-|x_j - x_l|^2 / c1_mm2) * exp(-nd[j, s] / c2_mm2) for l = nbr[j, s]
 * (c1_mm2 <= 0: no spatial factor, fully non-local), wsum[j] = sum over s (in double, stored
 * as float). */
void nw_nlm_weights_cpu(float *w, float *wsum, const int *nbr, const float *nd, const float *pos_mm,
                        int n, int m, double c1_mm2, double c2_mm2);
/* The largest row sum, and the step dt = 1 / max(wsum) (0 when every sum is 0). */
float nw_nlm_step_size_cpu(const float *wsum, int n);
/* One explicit step of the non-local flow for every element j:
 *   out[j] = phi_j + dt * sum over s of w[j, s] * (phi_l - phi_j),  l = nbr[j, s],
 * with phi_j = centre[j] (the old values: every element moves at once). With dt = 1 / max
 * sum w, each element moves towards the weighted mean of its neighbours' centres by
 * dt * wsum[j] <= 1 of the way. */
void nw_nlm_update_cpu(float *out, const float *centre, const int *nbr, const float *w, int n,
                       int m, float dt);

G_END_DECLS

#endif
