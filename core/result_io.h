/* result_io.h — writes a method's result (core/method.h) as the CLI and the GUI save it: one
 * NIfTI file per named volume, PREFIX_NAME.nii.gz, into an output set (atomic_file.h) that
 * the caller commits: all files of a run appear together or none does. Any thread; CPU
 * only. */
#ifndef NW_RESULT_IO_H
#define NW_RESULT_IO_H

#include <glib.h>

#include "atomic_file.h"
#include "io_nifti.h"
#include "method.h"

G_BEGIN_DECLS

/* Writes the volumes of res: first the names in required (NULL-terminated, may be NULL), in
 * that order, then every other volume of res in the result's order. Volumes with three
 * components are displacement fields (voxel units) written with nw_nifti_write_field in
 * convention conv; "labels" is written as int32, everything else as float32.
 * A required name missing from res fails before anything is written, with
 * "METHOD: the job returned no 'NAME'". The files are written into out; nothing is named
 * before nw_outputs_commit (nw_outputs_paths lists them then). */
gboolean nw_result_write(NwOutputs *out, const NwMethodResult *res, const char *method,
                         const char *prefix, const char *const *required, NwFieldConvention conv,
                         GError **error);
/* Writes exactly the volumes of res under names (NULL-terminated), in that order, and no
 * other: the outputs a user asked for. A name missing from res fails as above. */
gboolean nw_result_write_names(NwOutputs *out, const NwMethodResult *res, const char *method,
                               const char *prefix, const char *const *names, NwFieldConvention conv,
                               GError **error);
/* When res has an affine "transform" and "centre" (affine_method.h): PREFIX_affine.txt and
 * PREFIX_affine.mat (ITK text and binary) and PREFIX_fsl.mat (FSL FLIRT, -in moving -ref
 * fixed), what `neurowarp-cli affine` writes; TRUE without writing when it has none. fixed
 * and moving: the pair as given (their grids; 2D when fixed has one slice). */
gboolean nw_result_write_transform(NwOutputs *out, const NwMethodResult *res, const char *prefix,
                                   const NwVolume *fixed, const NwVolume *moving, GError **error);

/* PREFIX_NAME.nii.gz for each name (NULL-terminated) claimed in out before the work
 * (nw_outputs_claim), so that an unwritable or existing output is refused before anything
 * is computed. */
gboolean nw_result_claim(NwOutputs *out, const char *prefix, const char *const *names,
                         GError **error);

G_END_DECLS

#endif
