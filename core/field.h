/* field.h — operations on displacement and velocity fields, the building blocks of the
 * diffeomorphic demons (CPU reference) that the CUDA twin's tests, the GUI (Jacobian maps)
 * and the CLI reuse.
 *
 * Every field is an NwVolume with nc = 3 in VOXEL units of its own grid (volume.h):
 * component c is the displacement along index axis c, and the transformation it stands for
 * maps voxel x to x + u(x). Sampling between voxels is trilinear; outside the grid a field
 * takes the value of the nearest border voxel (the clamp rule of resample.h).
 *
 * Any thread; the whole-volume functions use OpenMP inside. Outputs first, then inputs. */
#ifndef NW_FIELD_H
#define NW_FIELD_H

#include <glib.h>

#include "volume.h"

G_BEGIN_DECLS

/* Trilinear sample of all three components of u at continuous voxel position (x, y, z),
 * clamped to the grid: the same numbers as nw_sample_trilinear per component (NaN when a
 * coordinate is NaN). */
void nw_field_sample(const NwVolume *u, double x, double y, double z, float out[3]);

/* max over voxels of |u(x)| (Euclidean norm, voxels). */
double nw_field_max_norm(const NwVolume *u);

/* out = a ∘ b in the sense of transformations: (id + out) = (id + a) ∘ (id + b), i.e.
 *   out(x) = b(x) + a(x + b(x)).
 * All three on one grid; out must not be a or b (use a temporary). */
void nw_field_compose(NwVolume *out, const NwVolume *a, const NwVolume *b);

/* Number of squarings N that nw_field_exp uses for v: the smallest N >= 0 with
 * 2^-N max|v| <= 0.5 voxel (capped at 30). */
int nw_field_exp_squarings(const NwVolume *v);
/* The same rule from max|v| alone: the one place it is written, for every back end. */
int nw_field_exp_squarings_for_norm(double max_norm);

/* Group exponential of a stationary velocity field by scaling and squaring (Arsigny et al.
 * 2006): s = 2^-N v, then N times s <- s ∘ s. out and v on one grid; out may be v.
 * Returns N. sign = -1 gives exp(-v), the inverse transformation. */
int nw_field_exp(NwVolume *out, const NwVolume *v, double sign);
/* The same with a caller's scratch field (nc = 3, same grid, not out or v): no allocation,
 * for loops that must not abort on memory (nw_field_exp allocates one field). */
int nw_field_exp_scratch(NwVolume *out, const NwVolume *v, double sign, NwVolume *scratch);

/* det(I + ∇u) per voxel (out: nc = 1, same grid), ∇ by central differences in voxel units,
 * one-sided at the borders, zero along axes of size 1 (so 2D fields give the 2D determinant). */
void nw_field_jacobian_det(NwVolume *out, const NwVolume *u);

typedef struct {
  double min, max, mean; /* of det(I + ∇u) */
  size_t n_folds;        /* voxels with det <= 0: the transformation folds there */
} NwJacobianStats;
/* Statistics of a determinant map (nc = 1), e.g. from nw_field_jacobian_det. */
void nw_jacobian_stats(const NwVolume *det, NwJacobianStats *stats);
/* Folded voxels of u (det(I + ∇u) <= 0), without keeping the map. */
size_t nw_field_count_folds(const NwVolume *u);

/* out = a + scale * b, element-wise (any nc, same shape); out may be a or b. */
void nw_field_axpy(NwVolume *out, const NwVolume *a, double scale, const NwVolume *b);

/* Per-label overlap of two label maps on one grid (values rounded to integers; 0 is
 * background and is skipped). */
typedef struct {
  int label;
  size_t n_a, n_b, n_both; /* voxel counts */
  double dice;             /* 2 n_both / (n_a + n_b) */
} NwLabelDice;
/* Array of NwLabelDice for every label > 0 present in a or b, ascending; *mean_dice gets
 * the unweighted mean over those labels (0 when there are none). Free with g_array_unref. */
GArray *nw_labels_dice(const NwVolume *a, const NwVolume *b, double *mean_dice);

/* Mean squared difference and normalised cross-correlation of two scalar volumes on one
 * grid, over their finite voxels (the figures of the images before a registration). */
void nw_image_similarity(const NwVolume *a, const NwVolume *b, double *mse, double *ncc);

G_END_DECLS

#endif
