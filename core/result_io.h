/* result_io.h — writes a method's result (core/method.h) as the CLI and the GUI save it: one
 * NIfTI file per named volume, PREFIX_NAME.nii.gz, each atomically (atomic_file.h).
 * Any thread; CPU only. */
#ifndef NW_RESULT_IO_H
#define NW_RESULT_IO_H

#include <glib.h>

#include "io_nifti.h"
#include "method.h"

G_BEGIN_DECLS

/* Writes the volumes of res: first the names in required (NULL-terminated, may be NULL), in
 * that order, then every other volume of res in the result's order. Volumes with three
 * components are displacement fields (voxel units) written with nw_nifti_write_field in
 * convention conv; "labels" is written as int32, everything else as float32.
 * A required name missing from res fails before anything is written, with
 * "METHOD: the job returned no 'NAME'". written: the paths written are appended (owned
 * strings; the array needs g_free as its free function; may be NULL). */
gboolean nw_result_write(const NwMethodResult *res, const char *method, const char *prefix,
                         const char *const *required, NwFieldConvention conv, GPtrArray *written,
                         GError **error);

G_END_DECLS

#endif
