/* regrid.h — a registration on the fixed grid of a moving image that lies on another grid
 * (size, voxel size, orientation, origin) or is first moved by an affine: the moving image
 * (linear) and its labels (nearest) are resampled onto the fixed grid ONCE through T (fixed
 * world -> moving world, RAS mm; the identity maps scanner coordinates), the deformable
 * method runs there, and its results are then turned into maps to the ORIGINAL moving image
 * (field_affine.h, docs/FIELDS.md "Pairs on different grids"). What `neurowarp-cli demons`
 * does with --initial-transform or a pair on different grids, what the GUI's run does, and
 * the second stage of "affine-demons". CPU, OpenMP over voxels. Any thread (the job's worker
 * in the GUI: resampling a big volume takes seconds). */
#ifndef NW_REGRID_H
#define NW_REGRID_H

#include <glib.h>

#include "method.h"
#include "volume.h"

G_BEGIN_DECLS

typedef struct {
  double t_ras[16]; /* fixed world -> moving world */
  int dim;          /* 2 when both images have one slice, else 3 (affine_resample.h) */
  const NwVolume *moving, *moving_labels; /* the originals (moving grid); borrowed */
  NwVolume *moving_on_fixed, *labels_on_fixed; /* owned; labels NULL without labels */
} NwRegrid;

/* Resample moving (and moving_labels, on moving's grid, may be NULL) onto fixed's grid
 * through t_ras (NULL: identity). The originals are borrowed and must outlive g.
 * moving_on_fixed: moving already sampled there through t_ras, linearly (an affine stage's
 * result), taken by g; NULL: resampled here. On failure g is cleared. */
gboolean nw_regrid_init(NwRegrid *g, const NwVolume *fixed, const NwVolume *moving,
                        const NwVolume *moving_labels, const double *t_ras,
                        NwVolume *moving_on_fixed, GError **error);
void nw_regrid_clear(NwRegrid *g);

/* A mask on the moving grid (>= 0.5 inside) resampled onto fixed's grid through g->t_ras,
 * linearly (values in 0..1, 0 outside the moving image; inside stays >= 0.5), for a
 * deformable method that takes a moving mask on the fixed grid (demons_method.h). */
NwVolume *nw_regrid_mask(const NwRegrid *g, const NwVolume *fixed, const NwVolume *moving_mask,
                         GError **error);

/* A deformable result found between fixed and g->moving_on_fixed, made to map to the
 * original moving image: "warped" and "labels" sampled from the originals through T and the
 * forward field u, "inverse" on the moving grid, "forward" composed with T, "jacobian"
 * times det T. "velocity" stays the method's, on the fixed grid. Needs "forward" in res;
 * "warped", "inverse" and "jacobian" are composed when res has them (a caller that will not
 * save one takes it out first and saves the work), "labels" whenever g has moving labels. */
gboolean nw_regrid_compose_result(const NwRegrid *g, NwMethodResult *res, GError **error);

/* mse, ncc of fixed and moving, mean Dice of the label maps (NAN unless both are given and
 * on fixed's grid), all on one grid: out[3]. */
void nw_pair_figures(const NwVolume *fixed, const NwVolume *moving, const NwVolume *fixed_labels,
                     const NwVolume *moving_labels, double out[3]);

/* The figures of the pair as given, before any registration, on the fixed grid: moving and
 * labels sampled there through the identity (scanner coordinates) when the grids differ.
 * out: mse, ncc, mean Dice (NAN without both label maps). Added to results as "before". */
void nw_regrid_before(const NwVolume *fixed, const NwVolume *moving,
                      const NwVolume *fixed_labels, const NwVolume *moving_labels,
                      double out[3]);

G_END_DECLS

#endif
