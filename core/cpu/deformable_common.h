/* deformable_common.h — what the dense deformable methods ("demons", "fluid") share whatever
 * their algorithm and back end: the checks of their inputs, the image and mask pyramids they
 * register (with the moving image histogram-matched first on request), a field carried from
 * one level to the next, the stopping rule of a level and the check of a live parameter
 * change. Host code, on the job's worker thread; core/cpu/demons_common.c and
 * core/cpu/fluid_common.c call it, and through them cuda/. */
#ifndef NW_DEFORMABLE_COMMON_H
#define NW_DEFORMABLE_COMMON_H

#include "method.h"

G_BEGIN_DECLS

/* Iterations a level runs at least before the relative energy change may end it. */
#define NW_DEFORMABLE_MIN_LEVEL_ITERATIONS 5

/* Fixed and moving present, scalar, on one grid, finite; label maps and masks on the fixed
 * grid, masks scalar, finite and not empty (some voxel >= 0.5). Messages begin with
 * "METHOD: ". */
gboolean nw_deformable_check_inputs(const NwMethodInputs *in, const char *method, GError **error);

/* The pyramids of a job, [n_levels] each, 0 = coarsest (pyramid.h); masks NULL without. */
typedef struct {
  NwVolume **fixed, **moving, **fixed_mask, **moving_mask;
  int n_levels;
} NwPyramidSet;
/* Up to `levels` levels of the inputs' fixed and moving images and masks (all on one grid:
 * the same number of levels), the moving image mapped onto the fixed intensities first when
 * histogram_match (histogram_match.h). On failure what was built stays in s for
 * nw_pyramid_set_clear. */
gboolean nw_pyramid_set_build(NwPyramidSet *s, const NwMethodInputs *in, int levels,
                              gboolean histogram_match, GError **error);
void nw_pyramid_set_clear(NwPyramidSet *s);

/* A voxel field (nc = 3) of the previous level carried onto F's grid (nw_resize, vectors
 * scaled with the grid) with F's affine, or zero when prev is NULL (the first level). */
NwVolume *nw_deformable_carry_field(const NwVolume *prev, const NwVolume *F, GError **error);

/* The stopping rule of a level after iter_in_level iterations of it: `iterations` done, or
 * the relative energy change |prev - e| / |prev| below tolerance after at least
 * NW_DEFORMABLE_MIN_LEVEL_ITERATIONS. */
gboolean nw_deformable_level_done(int iter_in_level, int iterations, double prev_energy,
                                  double energy, double tolerance);

/* TRUE when next differs from current only in live parameters, else an error
 * "METHOD: parameter 'NAME' cannot change while the job runs". */
gboolean nw_deformable_check_live_change(const NwParams *current, const NwParams *next,
                                         const char *method, GError **error);

G_END_DECLS

#endif
