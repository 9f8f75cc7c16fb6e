/* nw_layer_save.h — "Save layer as…": one layer's data to a file other tools read. Images
 * as float32 NIfTI, label maps as uint16 NIfTI, displacement fields in the ITK/ANTs NIfTI
 * convention (docs/FIELDS.md), surfaces in the format their name says (GIFTI .gii, VTK,
 * PLY, OBJ). Written atomically (atomic_file.h): never a partial file. Main thread (the
 * layer's data belong to it). */
#ifndef NW_LAYER_SAVE_H
#define NW_LAYER_SAVE_H

#include "nw_layer.h"

G_BEGIN_DECLS

/* An existing file at path is an NW_ERROR_EXISTS error unless overwrite (which the window
 * sets after asking). Errors name the path. */
gboolean nw_layer_save(NwLayer *l, const char *path, gboolean overwrite, GError **error);
/* A file name for the layer in the format it saves to ("fixed.nii.gz", "surface_1.gii"):
 * its name without characters file systems or shells dislike. g_free. */
char *nw_layer_save_suggest_name(NwLayer *l);

G_END_DECLS

#endif
