/* dmi_pyramid.h — the pyramid levels of an image too large to hold, block by block: the
 * region [lo, hi) of level l made from a region of level l + 1 a few voxels larger (down to
 * the finest level, which a tiled reader gives, io_tiles.h), by nw_downsample2 of that
 * region. Bit for bit nw_pyramid_new's level (tests/test_dmi.c): the Gaussian (radius 3
 * voxels) needs 3 voxels beyond what the coarse samples read, 4 are taken, and regions start
 * on even voxels so that the halved grid of a region is the halved grid of the image.
 * Any thread; the finest source's reads are the only I/O. */
#ifndef NW_DMI_PYRAMID_H
#define NW_DMI_PYRAMID_H

#include "dmi_metric.h"

G_BEGIN_DECLS

#define NW_DMI_MAX_LEVELS 8

typedef struct NwDmiPyramid NwDmiPyramid;
typedef struct {
  NwDmiPyramid *p;
  int level;
} NwDmiPyramidLevel; /* a level source's data */

struct NwDmiPyramid {
  NwDmiSource finest; /* the image itself */
  int n_levels;       /* 0 = coarsest, n_levels - 1 = finest */
  int n[NW_DMI_MAX_LEVELS][3];
  NwDmiPyramidLevel at[NW_DMI_MAX_LEVELS];
};

/* n_levels levels of the image finest reads (nw_pyramid_levels decides how many). */
void nw_dmi_pyramid_init(NwDmiPyramid *p, const NwDmiSource *finest, int n_levels);
/* The source of level l (borrows p). */
NwDmiSource nw_dmi_pyramid_source(NwDmiPyramid *p, int l);

G_END_DECLS

#endif
