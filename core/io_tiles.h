/* io_tiles.h — an image read region by region, for the distributed metric (dmi_metric.h:
 * each rank reads its blocks, no rank the whole image): uncompressed NIfTI by rows at their
 * offsets, .nii.gz by one forward pass up to the region's last row (zlib cannot seek: the
 * rows before are decompressed and skipped, not kept), .hdr/.img pairs (raw voxels with a
 * header) like .nii, and TIFF/BigTIFF through libtiff by the strips or tiles that hold the
 * region. Other 2D files (PNG, PGM) are small by nature: read whole once, then cut.
 * Values and grids are those nw_cli_read_image gives (2D files: rows flipped so that voxel
 * row 0 is the bottom row; ignore_spacing as there), and a region with a NaN or Inf voxel is
 * refused, naming the file. One thread at a time per image. */
#ifndef NW_IO_TILES_H
#define NW_IO_TILES_H

#include <glib.h>

#include "volume.h"

G_BEGIN_DECLS

typedef struct NwTiledImage NwTiledImage;

NwTiledImage *nw_tiled_open(const char *path, gboolean ignore_spacing, GError **error);
void nw_tiled_close(NwTiledImage *t);
/* The grid (a header: data NULL). */
const NwVolume *nw_tiled_grid(const NwTiledImage *t);
/* How regions are read: "nifti rows", "nifti.gz rows", "tiff strips", "tiff tiles", "whole". */
const char *nw_tiled_how(const NwTiledImage *t);
/* The voxels [lo, hi) into out, x fastest. */
gboolean nw_tiled_read(NwTiledImage *t, const int lo[3], const int hi[3], float *out,
                       GError **error);
/* As nw_tiled_read, with NwDmiSource's signature (data: the NwTiledImage). */
gboolean nw_tiled_read_source(gpointer t, const int lo[3], const int hi[3], float *out,
                              GError **error);

G_END_DECLS

#endif
