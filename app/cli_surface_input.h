/* cli_surface_input.h — the input of `neurowarp-cli denoise-surface`: a binary mask, a label
 * volume with a chosen label, a signed distance (NIfTI), or a closed triangle mesh (GIFTI,
 * FreeSurfer, VTK, PLY, OBJ) turned into a signed distance on a grid the user gives, as one
 * level-set function phi (mm, negative inside: core/sdf_reinit.h). Errors name the file and
 * the problem. Main thread. */
#ifndef NW_CLI_SURFACE_INPUT_H
#define NW_CLI_SURFACE_INPUT_H

#include <glib.h>

#include "volume.h"

G_BEGIN_DECLS

typedef enum {
  NW_SURFACE_INPUT_MASK,   /* two values, 0 outside */
  NW_SURFACE_INPUT_LABELS, /* --label N picks the inside */
  NW_SURFACE_INPUT_SDF,    /* negative inside, positive outside, in mm */
  NW_SURFACE_INPUT_MESH,   /* a closed mesh, by file name */
} NwSurfaceInputKind;

const char *nw_surface_input_kind_name(NwSurfaceInputKind k); /* "mask", "labels", ... */

typedef struct {
  const char *path;
  gboolean has_label;
  int label;
  /* Mesh inputs only: the grid is like's (a NIfTI image), else axis-aligned RAS with
   * spacing_mm voxels over the mesh's bounds grown by margin_mm. */
  const char *like;
  double spacing_mm, margin_mm;
} NwSurfaceInputArgs;

/* Is path a mesh file (by its name: .gii, .vtk, .ply, .obj, FreeSurfer names)? */
gboolean nw_surface_input_is_mesh(const char *path);

/* phi of the input and what kind it was. NIfTI inputs without --label are told apart by
 * their values: negative and positive values make a signed distance, at most two values
 * (0 and one other) a mask; anything else is refused with a hint at --label. Errors name the
 * file: missing or unreadable, not NIfTI / not a mesh, NaN or Inf voxels, an empty or full
 * mask, a label not in the volume, a mesh that is not closed or misses the grid. */
NwVolume *nw_surface_input_read(const NwSurfaceInputArgs *a, NwSurfaceInputKind *kind,
                                GError **error);

G_END_DECLS

#endif
