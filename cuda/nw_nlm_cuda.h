/* nw_nlm_cuda.h — the C face of nlm-surface's CUDA kernels for the parity tests and the
 * benchmark: each kernel of core/cpu/nlm_kernels.h on host arrays (upload, run, download), and
 * a handle that keeps a patch matrix on the device to time the fused distance + top-m kernel
 * alone. CUDA back end; any thread, the current device, each call on its own stream and
 * synchronous. The method itself (nlm_surface_cuda.cu) keeps everything on the device and
 * does not go through these. */
#ifndef NW_NLM_CUDA_H
#define NW_NLM_CUDA_H

#include <glib.h>

#include "volume.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most neighbours per element the CUDA top-m keeps (each block holds 64 lists of m
 * (distance, index) pairs in shared memory: 64 KB at 128). The method refuses more. */
#define NW_NLM_CUDA_MAX_M 128
/* The padded layout's unit (nlm_kernels.cuh): each of the 8 lanes of a row has a multiple of
 * this many slots, and the kernel reads one such chunk of every row of a tile at a time. */
#define NW_NLM_KCHUNK 16

/* Floats per padded device row for P values: 8 * roundup(ceil(P / 8), NW_NLM_KCHUNK); 128 for
 * P = 125. */
static inline int nw_nlm_padded_width(int p)
{
  int g = (p + 7) / 8;
  return 8 * ((g + NW_NLM_KCHUNK - 1) / NW_NLM_KCHUNK * NW_NLM_KCHUNK);
}

/* Which fused top-m kernel: the exact FP32 one (nlm_topm_kernel.cu, the reference and the
 * fallback), or the pruned tensor-core filter with an exact FP32 recheck of its candidates
 * (nlm_topm_tc_kernel.cu, the method's default): the same output by construction (kept set,
 * order and distance bits). */
typedef enum {
  NW_NLM_KERNEL_EXACT,
  NW_NLM_KERNEL_TC,
} NwNlmKernel;

static inline gboolean nw_nlm_kernel_is_tc(NwNlmKernel k)
{
  return k != NW_NLM_KERNEL_EXACT;
}

/* The kernel the environment asks for: NW_NLM_KERNEL=exact the exact one, else (unset, "tc",
 * anything else) the tensor-core one. The method reads it when a job is created. */
NwNlmKernel nw_nlm_kernel_from_env(void);
const char *nw_nlm_kernel_name(NwNlmKernel k); /* "exact", "tc" */

/* What the tc kernel's last run did: the mean candidate-list length of the rows it rechecked,
 * the 64-row blocks it left to the exact kernel (lists that overflowed, or every block when a
 * value was beyond FP16's safe range), of how many, and the fraction of (query block,
 * candidate tile) pairs its filter visited (the rest the pruning bound excluded). */
typedef struct {
  double mean_candidates, visited_fraction;
  int fallback_blocks, blocks;
  gboolean out_of_range;
} NwNlmTcStats;

/* nw_nlm_neighbours_cpu on the GPU (upload, pad, fused top-m, download). m <= n - 1 and
 * m <= NW_NLM_CUDA_MAX_M. */
gboolean nw_nlm_neighbours_cuda_host(int *nbr, float *nd, const float *patches, int n, int p, int m,
                                     GError **error);
/* The same with either kernel; stats (may be NULL) filled for the tc kernel. */
gboolean nw_nlm_neighbours_kernel_cuda_host(int *nbr, float *nd, const float *patches, int n, int p,
                                            int m, NwNlmKernel kernel, NwNlmTcStats *stats,
                                            GError **error);
/* nw_nlm_patches_cpu on the GPU, returned in the CPU's unpadded N x P layout (the device's
 * padded rows un-permuted on the host), and the centres. */
gboolean nw_nlm_patches_cuda_host(float *patches, float *centre, const NwVolume *phi,
                                  const guint32 *band, int n, int patch, GError **error);
gboolean nw_nlm_weights_cuda_host(float *w, float *wsum, const int *nbr, const float *nd,
                                  const float *pos_mm, int n, int m, double c1_mm2, double c2_mm2,
                                  GError **error);
/* The largest row sum and dt = 1 / it (0 when all are 0), by the device reduction. */
gboolean nw_nlm_step_size_cuda_host(float *dt, double *wsum_total, const float *wsum, int n,
                                    GError **error);
gboolean nw_nlm_update_cuda_host(float *out, const float *centre, const int *nbr, const float *w,
                                 int n, int m, float dt, GError **error);

/* A patch matrix kept on the device for timing the fused kernel. */
typedef struct NwNlmTopmBench NwNlmTopmBench;
NwNlmTopmBench *nw_nlm_topm_bench_new(const float *patches, int n, int p, int m, GError **error);
/* One run of the fused kernel (the tc kernel's scratch is made on its first run, outside the
 * timing); *ms its time between CUDA events. */
gboolean nw_nlm_topm_bench_run(NwNlmTopmBench *b, NwNlmKernel kernel, double *ms, GError **error);
/* The tc kernel's figures of its last run. */
gboolean nw_nlm_topm_bench_tc_stats(NwNlmTopmBench *b, NwNlmTcStats *stats, GError **error);
/* Rows [row0, row0 + rows) of the last run's output (rows x m each). */
gboolean nw_nlm_topm_bench_download(NwNlmTopmBench *b, int *nbr, float *nd, int row0, int rows,
                                    GError **error);
void nw_nlm_topm_bench_free(NwNlmTopmBench *b);

#ifdef __cplusplus
}
#endif

#endif
