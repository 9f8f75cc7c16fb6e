/* nlm_kernels.cuh — the kernels of "nlm-surface" on the GPU: the CUDA twins of
 * core/cpu/nlm_kernels.h (patches, the fused all-pairs distance + exact top-m, weights, step
 * size, update). CUDA back end, caller's stream; every launcher returns nw_cuda_launched's
 * status. Used by the method (nlm_surface_cuda.cu) and the host-array wrappers of
 * nw_nlm_cuda.h (tests, benchmark).
 *
 * The padded patch layout. On the device the N x P patch matrix is stored N x Pp, Pp =
 * nw_nlm_padded_width(P) = 8 * G with G = ceil(P / 8) rounded up to a multiple of
 * NW_NLM_KCHUNK: the CPU sums value q of a patch distance into partial sum q % 8 (its "lane"),
 * and the row is stored lane by lane, lanes in the order 0 4 2 6 1 5 3 7 (the order in which
 * the CPU's pairwise fold combines them: ((s0+s4)+(s2+s6))+((s1+s5)+(s3+s7))), each lane's
 * values q = lane, lane+8, ... in increasing q, the rest of its G slots zero. A kernel that
 * walks the row in storage order and folds at lane boundaries therefore adds exactly the CPU's
 * terms in exactly the CPU's order; the zero slots add 0 - 0 = +0 to a sum >= +0, which leaves
 * it unchanged bit for bit. That is what makes the GPU distances equal the CPU's bit for bit
 * (nlm_topm_kernel.cu). */
#ifndef NW_NLM_KERNELS_CUH
#define NW_NLM_KERNELS_CUH

#include <cuda_runtime.h>

#include "nw_nlm_cuda.h"

/* patches (N x Pp, padded layout) of phi (nx*ny*nz floats, volume.h layout) around the band
 * voxels band[0..n), patch width `patch` (odd): values as nw_nlm_patches_cpu (clamped at the
 * borders); centre[j] = phi[band[j]] (the patch centre, phi_j). */
cudaError_t nw_nlm_patches_cuda(float *patches, float *centre, const float *phi, int nx, int ny,
                                int nz, const unsigned *band, int n, int patch,
                                cudaStream_t stream);

/* Padded rows of a host-layout N x P matrix already on the device (the tests' and the
 * benchmark's way in): padded = pad(rows). */
cudaError_t nw_nlm_pad_patches_cuda(float *padded, const float *rows, int n, int p,
                                    cudaStream_t stream);

/* The fused kernel (nlm_topm_kernel.cu): for every row j < n of the padded matrix, its m
 * nearest other rows by squared patch distance, ascending by (distance, index), into
 * nbr[j * m ..], nd[j * m ..]: equal to nw_nlm_neighbours_cpu's output. 1 <= m <= min(n - 1,
 * NW_NLM_CUDA_MAX_M); p the unpadded width. No N-sized scratch besides the outputs. */
cudaError_t nw_nlm_topm_cuda(int *nbr, float *nd, const float *padded, int n, int p, int m,
                             cudaStream_t stream);

/* The same on the blocks b of 64 rows (rows 64 b .. 64 b + 63) with only_blocks[b] != 0
 * (NULL: every block); the other rows of nbr / nd are left as they are. */
cudaError_t nw_nlm_topm_blocks_cuda(int *nbr, float *nd, const float *padded, int n, int p, int m,
                                    const int *only_blocks, cudaStream_t stream);

/* The tensor-core variant (nlm_topm_tc_kernel.cu): the same output as nw_nlm_topm_cuda, by a
 * scan of the rows sorted by patch mean that skips the tiles a rigorous lower bound excludes,
 * an FP16 filter with a rigorous error bound, an exact FP32 recheck of the candidates and the
 * exact kernel for row blocks whose candidates overflow. Its device scratch (NwNlmTcWork) is
 * made for up to n rows of width p and reused; nw_nlm_tc_work_bytes says how much it takes. On
 * devices older than sm_80 and for patches wider than 7^3 it runs the exact kernel. */
struct NwNlmTcWork;
size_t nw_nlm_tc_work_bytes(int n, int p, int m);
cudaError_t nw_nlm_tc_work_new(NwNlmTcWork **w, int n, int p, int m);
void nw_nlm_tc_work_free(NwNlmTcWork *w);
cudaError_t nw_nlm_topm_tc_cuda(int *nbr, float *nd, const float *padded, int n, int p, int m,
                                NwNlmTcWork *w, cudaStream_t stream);
/* After a run (synchronous): the mean list length of the rows the recheck did, the blocks the
 * exact kernel did, whether a value was out of FP16's safe range, and the fraction of (block,
 * tile) pairs the filter visited (1 when everything fell back). */
cudaError_t nw_nlm_tc_stats(const NwNlmTcWork *w, int n, double *mean_candidates,
                            int *fallback_blocks, int *out_of_range, double *visited_fraction,
                            cudaStream_t stream);

/* w, wsum as nw_nlm_weights_cpu (double arithmetic in the CPU's order; exp from CUDA's
 * libdevice, within an ulp of glibc's). */
cudaError_t nw_nlm_weights_cuda(float *w, float *wsum, const int *nbr, const float *nd,
                                const float *pos_mm, int n, int m, double c1_mm2, double c2_mm2,
                                cudaStream_t stream);

/* out[j] = centre[j] + dt * sum_s w (centre[l] - centre[j]) as nw_nlm_update_cpu; when phi is
 * not NULL also phi[band[j]] = out[j] (the band's new values into the grid). */
cudaError_t nw_nlm_update_cuda(float *out, float *phi, const unsigned *band, const float *centre,
                               const int *nbr, const float *w, int n, int m, float dt,
                               cudaStream_t stream);

/* Sums the method reports, reduced by CUB (nlm_kernels.cu). */
struct NwNlmWsumStats {
  double sum; /* sum of wsum over the band */
  float most; /* max wsum: dt = 1 / most */
};
struct NwNlmChangeStats {
  double sum_sq; /* sum of (out - centre)^2 */
  double most;   /* max |out - centre| */
};
/* CUB scratch large enough for both reductions over n elements. */
cudaError_t nw_nlm_reduce_temp_bytes(size_t *bytes, int n);
cudaError_t nw_nlm_wsum_stats_cuda(NwNlmWsumStats *out, const float *wsum, int n, void *temp,
                                   size_t temp_bytes, cudaStream_t stream);
cudaError_t nw_nlm_change_stats_cuda(NwNlmChangeStats *out, const float *after, const float *before,
                                     int n, void *temp, size_t temp_bytes, cudaStream_t stream);

#endif
