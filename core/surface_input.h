/* surface_input.h — the input of the "nlm-surface" method made a level set: a binary mask, a
 * label volume with a chosen label, a signed distance, or a closed triangle mesh (GIFTI,
 * FreeSurfer, VTK, PLY, OBJ) turned into a signed distance on a grid the user gives, as one
 * level-set function phi (mm, negative inside: sdf_reinit.h). `neurowarp-cli denoise-surface`
 * reads files with it; the window (scene/nw_run_level_set.h) converts a volume it shows.
 * Errors name the file (or layer) and the problem. CPU; any thread. */
#ifndef NW_SURFACE_INPUT_H
#define NW_SURFACE_INPUT_H

#include <glib.h>

#include "volume.h"

G_BEGIN_DECLS

typedef enum {
  NW_SURFACE_INPUT_MASK,   /* two values, 0 outside */
  NW_SURFACE_INPUT_LABELS, /* a label picks the inside */
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

/* What a volume v already in memory is, without converting it (one pass over the voxels,
 * cheap enough for the main thread): with has_label a label volume whose label must be
 * present; otherwise a signed distance or a mask by its values, as nw_surface_input_read
 * tells them apart. label_hint completes the refusal's hint at how to choose a label
 * ("with --label N" in the CLI). Errors name `name`. */
gboolean nw_surface_input_classify(const NwVolume *v, const char *name, gboolean has_label,
                                   int label, const char *label_hint, NwSurfaceInputKind *kind,
                                   GError **error);
/* phi of v of that kind (nw_surface_input_classify): a signed distance is copied, a mask or
 * label becomes the signed distance of its inside (nw_sdf_from_mask: fast sweeping, seconds
 * for a whole head at 1 mm, so a worker's job). */
NwVolume *nw_surface_input_convert(const NwVolume *v, const char *name, NwSurfaceInputKind kind,
                                   int label, GError **error);

/* The default label of a label volume: the non-zero label with the most voxels (the largest
 * structure), ties to the smaller label. FALSE when no voxel holds a non-zero whole number. */
gboolean nw_surface_input_largest_label(const NwVolume *v, int *label);

G_END_DECLS

#endif
