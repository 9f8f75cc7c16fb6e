/* io_nifti_private.h — what the NIfTI reader (io_nifti.c), writer (io_nifti_write.c) and
 * field conventions (io_nifti_field.c) share. Core only, not installed. Any thread; every
 * nifti_clib call is made under nw_nifti_lock (the library keeps global state). */
#ifndef NW_IO_NIFTI_PRIVATE_H
#define NW_IO_NIFTI_PRIVATE_H

#include <glib.h>
#include <nifti2_io.h>

#include "atomic_file.h"
#include "io_nifti.h"

G_BEGIN_DECLS

extern GMutex nw_nifti_lock;
void nw_nifti_quiet_locked(void); /* debug level 0: the library prints nothing */

int nw_nifti_datatype_code(NwDatatype t); /* DT_* or DT_UNKNOWN */
/* "uint8" ... for ours, nifti_clib's short name ("COMPLEX64") for the others. */
const char *nw_nifti_datatype_label(int code);

/* One stored value of any supported type (nbyper bytes, native byte order). */
typedef union {
  guint8 u8;
  gint16 i16;
  guint16 u16;
  gint32 i32;
  float f32;
  double f64;
} Scalar;

/* Reads dims 1..3 as the grid and all higher dims as components (refused unless
 * allow_multi). nim_out, when not NULL, receives the parsed header (free with
 * nw_nifti_free_nim). */
NwVolume *nw_nifti_read_volume(const char *path, gboolean allow_multi, nifti_image **nim_out,
                               GError **error);
void nw_nifti_free_nim(nifti_image *nim);

typedef struct {
  const NwVolume *v;
  int datatype; /* DT_* */
  gboolean nifti2, gz;
  gint64 dim[8]; /* as written; components go to dim[4] (images) or dim[5] (fields) */
  int intent_code;
  const char *intent_name;
  const float *data; /* file order: element vox + c * n3 */
} WriteJob;

/* path must end in .nii or .nii.gz; the file is written into o (atomic_file.h). */
gboolean nw_nifti_write_job(NwOutputs *o, const char *path, WriteJob *j, GError **error);

G_END_DECLS

#endif
