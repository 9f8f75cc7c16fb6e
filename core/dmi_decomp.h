/* dmi_decomp.h — the block decomposition of the distributed mutual-information metric
 * (issue 16; dmi_metric.h): the fixed image cut into A x B (x C) blocks, each owned by one
 * rank, and the moving image cut by the same layout (strategy "distributed"). Plain data and
 * arithmetic, no MPI; any thread.
 *
 * Blocks: along axis a with n voxels and m blocks, block q holds voxels
 * [floor(n q / m), floor(n (q + 1) / m)) (empty when m > n, at coarse pyramid levels). The
 * block index is b = (qz * my + qy) * mx + qx; ranks own contiguous runs of blocks: block b
 * of B belongs to rank floor(b R / B), so with B = k R every rank has k blocks and a row
 * layout (1 x B) gives each rank adjacent slabs (contiguous reads).
 *
 * The layout for a number of blocks (nw_dmi_layout_choose): among the factorisations
 * mx · my · mz = B (mz = 1 in 2D) with at least NW_DMI_MIN_BLOCK voxels per block along every
 * cut axis, the one with the smallest cut area (sum over cut axes of (m - 1) · the area of a
 * cut), ties to cuts along z, then y (slabs of rows: contiguous in NIfTI and TIFF strips).
 *
 * The memory cap (nw_dmi_plan): a block's bytes on a device (block_bytes) must fit the cap
 * per rank; the plan takes k = 1, 2, ... blocks per rank until the largest block fits. */
#ifndef NW_DMI_DECOMP_H
#define NW_DMI_DECOMP_H

#include <glib.h>

G_BEGIN_DECLS

/* Fewest voxels per block along an axis that is cut (beside the halo of two voxels that
 * cubic interpolation reads beyond a block). */
#define NW_DMI_MIN_BLOCK 4
/* Voxels beyond a moving block that a rank keeps so that every sample whose nearest voxel
 * is in the block has all its taps (cubic: floor(p) - 1 .. floor(p) + 2). */
#define NW_DMI_HALO 2

typedef struct {
  int m[3]; /* blocks along x, y, z */
} NwDmiLayout;

static inline int nw_dmi_layout_blocks(const NwDmiLayout *l)
{
  return l->m[0] * l->m[1] * l->m[2];
}

/* "AxB" or "AxBxC" (positive integers; 2D images take "AxB" or "AxBx1"). Error:
 * "--blocks 'TEXT': expected AxB or AxBxC with positive whole numbers, e.g. 2x2". */
gboolean nw_dmi_layout_parse(const char *text, NwDmiLayout *out, GError **error);
/* "2x2" (2D) or "2x2x1" into buf (at least 48 bytes). */
const char *nw_dmi_layout_format(const NwDmiLayout *l, int dim, char *buf);
/* The layout of n_blocks blocks for an image of n[3] voxels (above); FALSE when no
 * factorisation leaves NW_DMI_MIN_BLOCK voxels per block along every cut axis. */
gboolean nw_dmi_layout_choose(const int n[3], int dim, int n_blocks, NwDmiLayout *out);
/* A forced layout's fit for the image: FALSE and an error naming the layout, the axis and
 * the image size when a cut axis gets fewer than NW_DMI_MIN_BLOCK voxels per block, when it
 * cuts z of a 2D image, or when it has fewer blocks than ranks. */
gboolean nw_dmi_layout_check(const NwDmiLayout *l, const int n[3], int dim, int n_ranks,
                             GError **error);

/* Block b's voxels [lo, hi) of an image of n[3] voxels. */
void nw_dmi_block_bounds(const NwDmiLayout *l, const int n[3], int b, int lo[3], int hi[3]);
/* The rank that owns block b of n_blocks among n_ranks. */
static inline int nw_dmi_block_rank(int b, int n_blocks, int n_ranks)
{
  return (int)((gint64)b * n_ranks / n_blocks);
}
/* The first block of rank r and how many it owns. */
void nw_dmi_rank_blocks(int r, int n_blocks, int n_ranks, int *first, int *count);

/* The blocks of a decomposition and what a rank's device holds of one. */
typedef struct {
  NwDmiLayout layout;
  int n_ranks;
  double block_mb; /* the largest block's bytes (nw_dmi_block_bytes) in MB (10^6 bytes) */
} NwDmiPlan;

/* What one block of the fixed image [lo, hi) takes on a device: the fixed block and its
 * mask, the moving image's block of the same layout with its halo, and its mask (4 bytes a
 * voxel each), and the integer joint histogram (bins² x 8 bytes). */
double nw_dmi_block_bytes(const NwDmiLayout *l, const int fixed_n[3], const int moving_n[3],
                          gboolean fixed_mask, gboolean moving_mask, int bins);

/* The decomposition for n_ranks ranks: forced (layout given: checked, and with a cap the
 * largest block must fit), else the layout chosen for k · n_ranks blocks with the smallest
 * k whose largest block fits cap_mb (cap_mb <= 0: no cap, k = 1). Errors (usage):
 *   "--memory-cap 0.005 MB is too small for the fixed image (256 x 256 x 1 voxels): the
 *    smallest blocks tried (608 blocks) take 0.0095 MB each"
 *   "--blocks 2x2: a block takes 0.143 MB, more than --memory-cap 0.1 MB"
 * and nw_dmi_layout_check's. */
gboolean nw_dmi_plan(const int fixed_n[3], const int moving_n[3], int dim, gboolean fixed_mask,
                     gboolean moving_mask, int bins, int n_ranks, const NwDmiLayout *forced,
                     double cap_mb, NwDmiPlan *out, GError **error);

/* Per axis, the block coordinate of every voxel of an image of n[3] voxels: owner[a][i] for
 * 0 <= i < n[a] (three arrays in one allocation; free with g_free(owner[0])). */
void nw_dmi_owner_tables(const NwDmiLayout *l, const int n[3], int *owner[3]);

G_END_DECLS

#endif
