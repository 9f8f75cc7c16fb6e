/* io_nifti.h — NIfTI-1 and NIfTI-2 load and save (.nii, .nii.gz) through nifti_clib, and the
 * displacement-field conventions other tools read. Any thread (nifti_clib calls are made
 * under one lock: the library keeps global state).
 *
 * Images: uint8, int16, uint16, int32, float32 and float64 are read into float voxels with
 * scl_slope/scl_inter applied (slope 0 means 1). The affine comes from the sform when
 * sform_code > 0, else the qform when qform_code > 0, else diag(pixdim).
 *
 * Displacement fields (see docs/FIELDS.md):
 *   NW_FIELD_ITK   — default. dim[0]=5, dim[4]=1, dim[5]=3, intent 1007 (VECTOR), float32,
 *                    components in LPS millimetres: what antsApplyTransforms, ITK and
 *                    elastix's transformix (DeformationFieldTransform) read.
 *   NW_FIELD_RAS   — NIfTI-strict: same shape, intent 1006 (DISPVECT), RAS millimetres.
 * Loading also accepts NiftyReg's (intent_name "NREG_TRANS", intent_p1 1 = displacement,
 * RAS mm) and FSL's 4D displacement fields (dim[0]=4, dim[4]=3, millimetres in FSL's
 * scaled-voxel axes). A loaded field is returned in VOXEL units of its own grid (volume.h). */
#ifndef NW_IO_NIFTI_H
#define NW_IO_NIFTI_H

#include <glib.h>

#include "atomic_file.h"
#include "volume.h"

G_BEGIN_DECLS

typedef enum {
  NW_DT_UINT8,
  NW_DT_INT16,
  NW_DT_UINT16,
  NW_DT_INT32,
  NW_DT_FLOAT32,
  NW_DT_FLOAT64,
} NwDatatype;

const char *nw_datatype_name(NwDatatype t); /* "uint8", "int16", ... */

/* What `neurowarp-cli info` prints besides the voxels. */
typedef struct {
  int nifti_version;     /* 1 or 2 */
  int ndim;              /* dim[0] */
  gint64 dim[8];         /* dim[1..7] in dim[1..7]; dim[0] = ndim */
  double pixdim[8];
  int datatype_code;     /* NIfTI DT_* code as stored */
  char datatype_name[16];
  double scl_slope, scl_inter;
  int intent_code;
  char intent_name[17];
  int sform_code, qform_code;
  char description[81];
} NwNiftiInfo;

/* Header only (cheap). The error names the file and the problem: missing, unreadable,
 * not NIfTI (bad magic), truncated, absurd dimensions. */
gboolean nw_nifti_read_info(const char *path, NwNiftiInfo *info, GError **error);

/* A scalar 3D image (dim[0] <= 3, or trailing dims of 1). 4D with dim[4] > 1 is refused with
 * a message that says so. Truncated data and over-large sizes are errors, never crashes. */
NwVolume *nw_nifti_read(const char *path, GError **error);
/* Regions of one 3D volume without reading the rest (io_tiles.h): open checks the header
 * as nw_nifti_read does and gives the grid (*grid: a header, data NULL); read converts the
 * voxels [lo, hi) as nw_nifti_read converts them (scl_slope, scl_inter), reading only their
 * rows (a .nii.gz is decompressed up to the region's last row and the rest skipped). Errors
 * name the file ("PATH: truncated at row J of slice K"). One thread at a time per handle. */
typedef struct NwNiftiSlabs NwNiftiSlabs;
NwNiftiSlabs *nw_nifti_slabs_open(const char *path, NwVolume *grid, GError **error);
gboolean nw_nifti_slabs_read(NwNiftiSlabs *s, const int lo[3], const int hi[3], float *out,
                             GError **error);
void nw_nifti_slabs_close(NwNiftiSlabs *s);
/* As nw_nifti_read but also accepts 4D: returns a volume with nc = dim[4] (interleaved). */
NwVolume *nw_nifti_read_multi(const char *path, GError **error);

/* Write a scalar volume: datatype as asked (values are rounded and clamped for integer
 * types), sform and qform from vox_to_ras (codes 1 = scanner anat, as the input usually is).
 * Written through nw_write_atomically (atomic_file.h): never a partial file. The
 * version is chosen by the name: ".nii"/".nii.gz" write NIfTI-1 unless nifti2 is TRUE. */
gboolean nw_nifti_write(const char *path, const NwVolume *v, NwDatatype type, gboolean nifti2,
                        GError **error);
/* The same into an output set: named when the set is committed (atomic_file.h). */
gboolean nw_nifti_write_to(NwOutputs *o, const char *path, const NwVolume *v, NwDatatype type,
                           gboolean nifti2, GError **error);

typedef enum {
  NW_FIELD_ITK, /* intent 1007, LPS mm — default */
  NW_FIELD_RAS, /* intent 1006, RAS mm */
} NwFieldConvention;

/* field: nc = 3, voxel units (volume.h). */
gboolean nw_nifti_write_field(const char *path, const NwVolume *field, NwFieldConvention conv,
                              GError **error);
gboolean nw_nifti_write_field_to(NwOutputs *o, const char *path, const NwVolume *field,
                                 NwFieldConvention conv, GError **error);
/* Any of the four conventions above; returns nc = 3 in voxel units. */
NwVolume *nw_nifti_read_field(const char *path, GError **error);

G_END_DECLS

#endif
