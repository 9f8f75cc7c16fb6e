/* histogram_match.h — intensity histogram matching (quantile mapping) of one image to
 * another, used by registration methods whose similarity assumes equal intensities (the
 * demons' SSD). Any thread; CPU only (a once-per-job preprocessing step). */
#ifndef NW_HISTOGRAM_MATCH_H
#define NW_HISTOGRAM_MATCH_H

#include <glib.h>

#include "volume.h"

G_BEGIN_DECLS

/* A copy of `image` (nc = 1) whose intensities are mapped monotonically so that its
 * distribution matches `reference`'s: n_quantiles + 1 quantiles of both (over finite voxels)
 * are paired and values in between are mapped piecewise linearly; ties (e.g. a constant
 * background) map to the mean of the paired reference quantiles. Non-finite voxels are
 * copied as they are. The grids need not agree. NULL and NW_ERROR_INVALID when an image has
 * no finite voxel or n_quantiles < 1. */
NwVolume *nw_histogram_match(const NwVolume *image, const NwVolume *reference, int n_quantiles,
                             GError **error);

G_END_DECLS

#endif
