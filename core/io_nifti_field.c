/* io_nifti_field.c — displacement fields in NIfTI files (io_nifti.h, docs/FIELDS.md):
 * written in the ITK/ANTs (LPS mm, intent vector) or NIfTI (RAS mm, intent displacement)
 * convention, read in those and in NiftyReg's and FSL's, and returned in voxel units of
 * their grid. Any thread; CPU only. */
#include <math.h>
#include <string.h>

#include "io_nifti_private.h"
#include "mat3.h"
#include "nw_error.h"

static void mat3_apply(const double m[9], const double x[3], double y[3])
{
  for (int i = 0; i < 3; i++)
    y[i] = m[i * 3] * x[0] + m[i * 3 + 1] * x[1] + m[i * 3 + 2] * x[2];
}

gboolean nw_nifti_write_field_to(NwOutputs *o, const char *path, const NwVolume *field,
                                 NwFieldConvention conv, GError **error)
{
  g_return_val_if_fail(field != NULL && field->data != NULL, FALSE);
  if (field->nc != 3) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "%s: a displacement field needs 3 components per voxel, not %d", path, field->nc);
    return FALSE;
  }
  size_t n3 = nw_volume_n_voxels(field);
  g_autofree float *planar = g_try_malloc(n3 * 3 * sizeof(float));
  if (planar == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_NOMEM, "%s: out of memory", path);
    return FALSE;
  }
  double r[9];
  nw_mat3_from_affine(field->vox_to_ras, r); /* mm = R u, u in voxels */
  /* ITK/ANTs: LPS mm = diag(-1,-1,1) R u. NIfTI DISPVECT: RAS mm = R u. */
  const double flip = conv == NW_FIELD_ITK ? -1.0 : 1.0;
  for (size_t i = 0; i < n3; i++) {
    double u[3] = {field->data[i * 3], field->data[i * 3 + 1], field->data[i * 3 + 2]}, mm[3];
    mat3_apply(r, u, mm);
    planar[i] = (float)(flip * mm[0]);
    planar[i + n3] = (float)(flip * mm[1]);
    planar[i + 2 * n3] = (float)mm[2];
  }
  WriteJob j = {.v = field,
                .datatype = DT_FLOAT32,
                .nifti2 = FALSE,
                .data = planar,
                .intent_code = conv == NW_FIELD_ITK ? NIFTI_INTENT_VECTOR : NIFTI_INTENT_DISPVECT};
  gint64 d[8] = {5, field->nx, field->ny, field->nz, 1, 3, 1, 1};
  memcpy(j.dim, d, sizeof d);
  return nw_nifti_write_job(o, path, &j, error);
}

gboolean nw_nifti_write_field(const char *path, const NwVolume *field, NwFieldConvention conv,
                              GError **error)
{
  g_autoptr(NwOutputs) o = nw_outputs_new(TRUE);
  return nw_nifti_write_field_to(o, path, field, conv, error) && nw_outputs_commit(o, error);
}

static const char *intent_label(int code)
{
  g_mutex_lock(&nw_nifti_lock);
  const char *name = nifti_intent_string(code); /* a static string */
  g_mutex_unlock(&nw_nifti_lock);
  return name;
}

typedef enum { KIND_LPS, KIND_RAS, KIND_RAS_POSITION, KIND_FSL } FieldKind;

static gboolean field_kind(const char *path, const nifti_image *nim, int ndim, int nc,
                           FieldKind *kind, GError **error)
{
  if (nc != 3) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "%s: not a displacement field: %d components per voxel (need 3)", path, nc);
    return FALSE;
  }
  if (strncmp(nim->intent_name, "NREG_TRANS", 10) == 0) {
    /* NiftyReg: intent_p1 DEF_FIELD (0) = absolute RAS positions, DISP_FIELD (1) = RAS mm. */
    if (nim->intent_p1 == 1.0) {
      *kind = KIND_RAS;
      return TRUE;
    }
    if (nim->intent_p1 == 0.0) {
      *kind = KIND_RAS_POSITION;
      return TRUE;
    }
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "%s: unsupported NiftyReg transformation (NREG_TRANS intent_p1 = %g): only "
                "deformation (0) and displacement (1) fields are read",
                path, nim->intent_p1);
    return FALSE;
  }
  if (ndim == 4) {
    *kind = KIND_FSL;
    return TRUE;
  }
  if (nim->intent_code == NIFTI_INTENT_DISPVECT) {
    *kind = KIND_RAS;
    return TRUE;
  }
  if (nim->intent_code == NIFTI_INTENT_VECTOR) {
    *kind = KIND_LPS;
    return TRUE;
  }
  g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
              "%s: not a displacement field: 5D with intent %d (%s); expected 1007 (vector, "
              "ITK/ANTs) or 1006 (displacement vector)",
              path, nim->intent_code, intent_label(nim->intent_code));
  return FALSE;
}

/* FSL: displacements in mm along FSL's scaled-voxel axes (index * pixdim), whose x axis runs
 * against i when the sform/qform determinant is positive (neurological storage). */
static void fsl_to_voxel(const nifti_image *nim, const NwVolume *f, double s[3])
{
  double r[9];
  nw_mat3_from_affine(f->vox_to_ras, r);
  const double det = nw_mat3_det(r);
  gboolean has_xform = nim->sform_code > 0 || nim->qform_code > 0;
  double px[3] = {fabs(nim->dx), fabs(nim->dy), fabs(nim->dz)};
  for (int i = 0; i < 3; i++)
    s[i] = px[i] > 0 ? 1.0 / px[i] : 1.0;
  if (has_xform && det > 0)
    s[0] = -s[0];
}

NwVolume *nw_nifti_read_field(const char *path, GError **error)
{
  nifti_image *nim = NULL;
  NwVolume *f = nw_nifti_read_volume(path, TRUE, &nim, error);
  if (f == NULL)
    return NULL;
  FieldKind kind;
  if (!field_kind(path, nim, (int)nim->ndim, f->nc, &kind, error)) {
    nw_nifti_free_nim(nim);
    nw_volume_free(f);
    return NULL;
  }
  double r[9], rinv[9], fsl[3] = {1, 1, 1};
  nw_mat3_from_affine(f->vox_to_ras, r);
  if (fabs(nw_mat3_inverse(r, rinv)) < 1e-12) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "%s: singular affine: cannot convert the "
                "field to voxel units",
                path);
    nw_nifti_free_nim(nim);
    nw_volume_free(f);
    return NULL;
  }
  if (kind == KIND_FSL)
    fsl_to_voxel(nim, f, fsl);
  nw_nifti_free_nim(nim);
  for (int k = 0; k < f->nz; k++)
    for (int j = 0; j < f->ny; j++)
      for (int i = 0; i < f->nx; i++) {
        float *p = f->data + nw_volume_index(f, i, j, k) * 3;
        double mm[3] = {p[0], p[1], p[2]}, u[3];
        if (kind == KIND_FSL) {
          for (int c = 0; c < 3; c++)
            p[c] = (float)(mm[c] * fsl[c]);
          continue;
        }
        if (kind == KIND_LPS)
          mm[0] = -mm[0], mm[1] = -mm[1];
        if (kind == KIND_RAS_POSITION) {
          double ijk[3] = {i, j, k}, pos[3];
          nw_volume_voxel_to_world(f, ijk, pos);
          for (int c = 0; c < 3; c++)
            mm[c] -= pos[c];
        }
        mat3_apply(rinv, mm, u);
        for (int c = 0; c < 3; c++)
          p[c] = (float)u[c];
      }
  return f;
}

