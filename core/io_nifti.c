/* io_nifti.c — NIfTI-1/2 images and displacement fields (see io_nifti.h, docs/FIELDS.md).
 * Any thread; CPU only. nifti_clib keeps global state (debug level, error chatter), so every
 * call into it is made under nifti_lock.
 *
 * Reading is done in three steps so that a bad file can never crash us or make us allocate
 * absurd sizes: (1) the raw header bytes are read with zlib (gz or plain, transparently) and
 * checked here: header size, magic, dims, datatype; (2) nifti_clib parses the header into a
 * nifti_image (transforms, scaling, intent) without data; (3) the data are read with zlib in
 * chunks and converted to float, counting the bytes actually read (nifti_clib can read short
 * data silently). Writing builds the header with nifti_clib and writes header + data with
 * zlib to a temporary file that nw_write_atomically renames. */
#include "io_nifti.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <nifti2_io.h>
#include <string.h>
#include <zlib.h>

#include "atomic_file.h"
#include "nw_error.h"

static GMutex nifti_lock;

static void nifti_quiet_locked(void)
{
  nifti_set_debug_level(0);
}

static const struct {
  NwDatatype t;
  int code;
  const char *name;
} dtypes[] = {
    {NW_DT_UINT8, DT_UINT8, "uint8"},       {NW_DT_INT16, DT_INT16, "int16"},
    {NW_DT_UINT16, DT_UINT16, "uint16"},    {NW_DT_INT32, DT_INT32, "int32"},
    {NW_DT_FLOAT32, DT_FLOAT32, "float32"}, {NW_DT_FLOAT64, DT_FLOAT64, "float64"},
};

const char *nw_datatype_name(NwDatatype t)
{
  for (size_t i = 0; i < G_N_ELEMENTS(dtypes); i++)
    if (dtypes[i].t == t)
      return dtypes[i].name;
  return "unknown";
}

static int datatype_code(NwDatatype t)
{
  for (size_t i = 0; i < G_N_ELEMENTS(dtypes); i++)
    if (dtypes[i].t == t)
      return dtypes[i].code;
  return DT_UNKNOWN;
}

static gboolean datatype_supported(int code)
{
  for (size_t i = 0; i < G_N_ELEMENTS(dtypes); i++)
    if (dtypes[i].code == code)
      return TRUE;
  return FALSE;
}

/* "uint8" ... for ours, nifti_clib's short name ("COMPLEX64", "RGB24") for the others. */
static const char *datatype_label(int code)
{
  for (size_t i = 0; i < G_N_ELEMENTS(dtypes); i++)
    if (dtypes[i].code == code)
      return dtypes[i].name;
  g_mutex_lock(&nifti_lock);
  const char *name = nifti_datatype_string(code); /* a static string */
  g_mutex_unlock(&nifti_lock);
  return name;
}

/* ---- step 1: raw header checks ---------------------------------------------------------- */

typedef struct {
  int version;      /* 1 or 2 */
  gboolean swapped; /* file byte order differs from ours */
  gint64 dim[8];
  int datatype;
} RawHeader;

static guint32 get_u32(const guint8 *p, gboolean swap)
{
  guint32 v;
  memcpy(&v, p, 4);
  return swap ? GUINT32_SWAP_LE_BE(v) : v;
}
static gint16 get_i16(const guint8 *p, gboolean swap)
{
  guint16 v;
  memcpy(&v, p, 2);
  return (gint16)(swap ? GUINT16_SWAP_LE_BE(v) : v);
}
static gint64 get_i64(const guint8 *p, gboolean swap)
{
  guint64 v;
  memcpy(&v, p, 8);
  return (gint64)(swap ? GUINT64_SWAP_LE_BE(v) : v);
}

static gboolean check_path_readable(const char *path, GError **error)
{
  GStatBuf st;
  if (g_stat(path, &st) != 0) {
    int e = errno;
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "%s: cannot open: %s", path, g_strerror(e));
    return FALSE;
  }
  if (S_ISDIR(st.st_mode)) {
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "%s: cannot open: is a folder", path);
    return FALSE;
  }
  FILE *f = g_fopen(path, "rb");
  if (f == NULL) {
    int e = errno;
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "%s: cannot open: %s", path, g_strerror(e));
    return FALSE;
  }
  fclose(f);
  return TRUE;
}

/* Dims must be positive up to dim[0], and the 3D grid at most NW_MAX_VOXELS voxels. */
static gboolean check_dims(const char *path, const gint64 dim[8], GError **error)
{
  if (dim[0] < 1 || dim[0] > 7) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "%s: invalid dimensions: dim[0] = %" G_GINT64_FORMAT " (must be 1..7)", path,
                dim[0]);
    return FALSE;
  }
  double total = 1.0, spatial = 1.0;
  for (int i = 1; i <= dim[0]; i++) {
    if (dim[i] < 1) {
      g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                  "%s: invalid dimensions: dim[%d] = %" G_GINT64_FORMAT " (must be positive)", path,
                  i, dim[i]);
      return FALSE;
    }
    total *= (double)dim[i];
    if (i <= 3)
      spatial *= (double)dim[i];
  }
  /* Total is bounded too: 4D/5D data are held as nc floats per voxel. */
  if (spatial > (double)NW_MAX_VOXELS || total > 8.0 * (double)NW_MAX_VOXELS) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "%s: absurd dimensions: %.0f voxels (%" G_GINT64_FORMAT " x %" G_GINT64_FORMAT
                " x %" G_GINT64_FORMAT "), more than the %zu we accept",
                path, total, dim[1], dim[0] >= 2 ? dim[2] : 1, dim[0] >= 3 ? dim[3] : 1,
                NW_MAX_VOXELS);
    return FALSE;
  }
  return TRUE;
}

static gboolean read_raw_header(const char *path, RawHeader *h, GError **error)
{
  if (!check_path_readable(path, error))
    return FALSE;
  gzFile gz = gzopen(path, "rb");
  if (gz == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "%s: cannot open: %s", path, g_strerror(errno));
    return FALSE;
  }
  guint8 b[540];
  memset(b, 0, sizeof b);
  int n = gzread(gz, b, sizeof b);
  gzclose(gz);
  if (n < 0) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: corrupt compressed data", path);
    return FALSE;
  }
  if (n < 4) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "%s: not a NIfTI file: only %d bytes (truncated header)", path, n);
    return FALSE;
  }
  guint32 sz = get_u32(b, FALSE);
  h->swapped = FALSE;
  if (sz != 348 && sz != 540) {
    h->swapped = TRUE;
    sz = get_u32(b, TRUE);
  }
  if (sz == 348 && memcmp(b + 344, "n+1", 4) != 0 && memcmp(b + 344, "ni1", 4) != 0 && n >= 348) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "%s: not a NIfTI file: bad magic (no \"n+1\" at byte 344; ANALYZE 7.5?)", path);
    return FALSE;
  }
  if (sz == 540 && memcmp(b + 4, "n+2", 4) != 0 && memcmp(b + 4, "ni2", 4) != 0) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "%s: not a NIfTI file: bad NIfTI-2 magic at byte 4", path);
    return FALSE;
  }
  if (sz != 348 && sz != 540) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "%s: not a NIfTI file: bad magic (header size field %u, expected 348 or 540)", path,
                get_u32(b, FALSE));
    return FALSE;
  }
  if ((guint32)n < sz) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: truncated header: %d of %u bytes", path, n,
                sz);
    return FALSE;
  }
  h->version = sz == 348 ? 1 : 2;
  for (int i = 0; i < 8; i++)
    h->dim[i] =
        h->version == 1 ? get_i16(b + 40 + 2 * i, h->swapped) : get_i64(b + 16 + 8 * i, h->swapped);
  h->datatype = h->version == 1 ? get_i16(b + 70, h->swapped) : get_i16(b + 12, h->swapped);
  return check_dims(path, h->dim, error);
}

/* ---- step 2: parse with nifti_clib --------------------------------------------------------- */

static nifti_image *read_nim(const char *path, RawHeader *h, GError **error)
{
  if (!read_raw_header(path, h, error))
    return NULL;
  g_mutex_lock(&nifti_lock);
  nifti_quiet_locked();
  nifti_image *nim = nifti_image_read(path, 0);
  g_mutex_unlock(&nifti_lock);
  if (nim == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "%s: not a valid NIfTI file: nifti_clib could not parse the header", path);
    return NULL;
  }
  return nim;
}

static void free_nim(nifti_image *nim)
{
  if (nim == NULL)
    return;
  g_mutex_lock(&nifti_lock);
  nifti_image_free(nim);
  g_mutex_unlock(&nifti_lock);
}

gboolean nw_nifti_read_info(const char *path, NwNiftiInfo *info, GError **error)
{
  RawHeader h;
  nifti_image *nim = read_nim(path, &h, error);
  if (nim == NULL)
    return FALSE;
  memset(info, 0, sizeof *info);
  info->nifti_version = h.version;
  info->ndim = (int)h.dim[0];
  for (int i = 0; i < 8; i++) {
    info->dim[i] = h.dim[i];
    info->pixdim[i] = nim->pixdim[i];
  }
  info->datatype_code = nim->datatype;
  g_strlcpy(info->datatype_name, datatype_label(nim->datatype), sizeof info->datatype_name);
  info->scl_slope = nim->scl_slope;
  info->scl_inter = nim->scl_inter;
  info->intent_code = nim->intent_code;
  memcpy(info->intent_name, nim->intent_name, 16);
  info->intent_name[16] = '\0';
  info->sform_code = nim->sform_code;
  info->qform_code = nim->qform_code;
  memcpy(info->description, nim->descrip, 80);
  info->description[80] = '\0';
  free_nim(nim);
  return TRUE;
}

/* ---- step 3: data ------------------------------------------------------------------------- */

/* Affine: sform (code > 0), else qform (code > 0), else diag(pixdim). Row-major 4x4. */
static void nim_affine(const nifti_image *nim, double a[16])
{
  const nifti_dmat44 *m = nim->sform_code > 0   ? &nim->sto_xyz
                          : nim->qform_code > 0 ? &nim->qto_xyz
                                                : NULL;
  if (m != NULL) {
    for (int r = 0; r < 4; r++)
      for (int c = 0; c < 4; c++)
        a[r * 4 + c] = m->m[r][c];
    return;
  }
  double d[3] = {nim->dx, nim->dy, nim->dz};
  memset(a, 0, 16 * sizeof(double));
  for (int i = 0; i < 3; i++)
    a[i * 5] = d[i] > 0 && isfinite(d[i]) ? d[i] : 1.0;
  a[15] = 1.0;
}

/* One stored value of any supported type (nbyper bytes at p, native byte order). */
typedef union {
  guint8 u8;
  gint16 i16;
  guint16 u16;
  gint32 i32;
  float f32;
  double f64;
} Scalar;

static double raw_value(const guint8 *p, int code, size_t nbyper)
{
  Scalar v;
  memcpy(&v, p, nbyper);
  switch (code) {
  case DT_UINT8:
    return v.u8;
  case DT_INT16:
    return v.i16;
  case DT_UINT16:
    return v.u16;
  case DT_INT32:
    return v.i32;
  case DT_FLOAT32:
    return v.f32;
  default:
    return v.f64;
  }
}

/* Bytes of data available after the header, counted by decompressing without storing. */
static gint64 gz_data_bytes(const char *iname, gint64 offset, size_t need)
{
  gzFile gz = gzopen(iname, "rb");
  if (gz == NULL)
    return 0;
  g_autofree guint8 *buf = g_malloc(1 << 20);
  gint64 n = 0, want = offset + (gint64)need;
  int got;
  while (n < want && (got = gzread(gz, buf, (unsigned)MIN((gint64)(1 << 20), want - n))) > 0)
    n += got;
  gzclose(gz);
  return MAX(n - offset, (gint64)0);
}

/* Refuse truncated data before anything is allocated: the file size for plain files; for
 * large compressed ones a counting pass (small ones are checked while reading). */
static gboolean check_data_size(const char *path, const nifti_image *nim, size_t total,
                                GError **error)
{
  const char *iname = nim->iname ? nim->iname : path;
  if (nim->iname_offset < 0) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: invalid vox_offset %" G_GINT64_FORMAT, path,
                (gint64)nim->iname_offset);
    return FALSE;
  }
  gint64 have = (gint64)total;
  GStatBuf st;
  if (!g_str_has_suffix(iname, ".gz"))
    have = g_stat(iname, &st) == 0 ? MAX((gint64)st.st_size - nim->iname_offset, (gint64)0) : 0;
  else if (total > ((size_t)64 << 20))
    have = gz_data_bytes(iname, nim->iname_offset, total);
  if ((guint64)have < total) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "%s: truncated: %" G_GINT64_FORMAT " of %zu data bytes", path, have, total);
    return FALSE;
  }
  return TRUE;
}

/* All voxels of the file into out (n3 voxels x nc components, interleaved: file element
 * e = vox + c * n3 goes to out[vox * nc + c]), with scl_slope/scl_inter applied. */
static gboolean read_data(const char *path, const nifti_image *nim, const RawHeader *h, size_t n3,
                          size_t nc, float *out, GError **error)
{
  const size_t nbyper = (size_t)nim->nbyper;
  const size_t total = n3 * nc * nbyper;
  const char *iname = nim->iname ? nim->iname : path;
  gzFile gz = gzopen(iname, "rb");
  if (gz == NULL || gzseek(gz, (z_off_t)nim->iname_offset, SEEK_SET) != nim->iname_offset) {
    if (gz)
      gzclose(gz);
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: truncated: no data after the header", path);
    return FALSE;
  }
  gzbuffer(gz, 1 << 18);
  const double slope = nim->scl_slope == 0.0 || !isfinite(nim->scl_slope) ? 1.0 : nim->scl_slope;
  const double inter = isfinite(nim->scl_inter) ? nim->scl_inter : 0.0;
  const size_t chunk_elems = (1u << 20) / nbyper;
  g_autofree guint8 *buf = g_malloc(chunk_elems * nbyper);
  size_t done = 0, n_elems = n3 * nc;
  gboolean swap = h->swapped && nbyper > 1;
  while (done < n_elems) {
    size_t want = MIN(chunk_elems, n_elems - done);
    int got = gzread(gz, buf, (unsigned)(want * nbyper));
    if (got < 0 || (size_t)got != want * nbyper) {
      int zerr = 0;
      const char *zmsg = gzerror(gz, &zerr);
      size_t have = done * nbyper + (got > 0 ? (size_t)got : 0);
      if (got < 0 || (zerr != Z_OK && zerr != Z_BUF_ERROR))
        g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: corrupt compressed data: %s", path,
                    zmsg);
      else
        g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: truncated: %zu of %zu data bytes", path,
                    have, total);
      gzclose(gz);
      return FALSE;
    }
    if (swap) {
      g_mutex_lock(&nifti_lock);
      nifti_swap_Nbytes((int64_t)want, (int)nbyper, buf);
      g_mutex_unlock(&nifti_lock);
    }
    for (size_t e = 0; e < want; e++) {
      size_t g = done + e;
      size_t vox = g % n3, c = g / n3;
      out[vox * nc + c] =
          (float)(raw_value(buf + e * nbyper, nim->datatype, nbyper) * slope + inter);
    }
    done += want;
  }
  gzclose(gz);
  return TRUE;
}

/* Reads dims 1..3 as the grid and all higher dims as components (refused unless allow_multi).
 * nim_out, when not NULL, receives the parsed header (free with free_nim). */
static NwVolume *read_volume(const char *path, gboolean allow_multi, nifti_image **nim_out,
                             GError **error)
{
  RawHeader h;
  nifti_image *nim = read_nim(path, &h, error);
  if (nim == NULL)
    return NULL;
  if (!datatype_supported(nim->datatype)) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "%s: unsupported datatype %s (code %d): neurowarp reads uint8, int16, uint16, "
                "int32, float32 and float64",
                path, datatype_label(nim->datatype), nim->datatype);
    free_nim(nim);
    return NULL;
  }
  gint64 d[8];
  for (int i = 0; i < 8; i++)
    d[i] = i <= h.dim[0] ? h.dim[i] : 1;
  gint64 nc = 1;
  for (int i = 4; i <= 7; i++)
    nc *= d[i];
  if (nc > 1 && !allow_multi) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "%s: is %dD with %" G_GINT64_FORMAT " volumes (dim[4] = %" G_GINT64_FORMAT
                "); a single 3D volume is needed",
                path, (int)h.dim[0], nc, d[4]);
    free_nim(nim);
    return NULL;
  }
  if (nc > G_MAXINT) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "%s: absurd dimensions: %" G_GINT64_FORMAT " components per voxel", path, nc);
    free_nim(nim);
    return NULL;
  }
  const size_t total = (size_t)(d[1] * d[2] * d[3] * nc) * (size_t)nim->nbyper;
  if (!check_data_size(path, nim, total, error)) {
    free_nim(nim);
    return NULL;
  }
  GError *local = NULL;
  NwVolume *v = nw_volume_new((int)d[1], (int)d[2], (int)d[3], (int)nc, &local);
  if (v == NULL) {
    g_propagate_prefixed_error(error, local, "%s: ", path);
    free_nim(nim);
    return NULL;
  }
  double a[16];
  nim_affine(nim, a);
  nw_volume_set_affine(v, a);
  if (!read_data(path, nim, &h, nw_volume_n_voxels(v), (size_t)nc, v->data, error)) {
    nw_volume_free(v);
    free_nim(nim);
    return NULL;
  }
  if (nim_out)
    *nim_out = nim;
  else
    free_nim(nim);
  return v;
}

NwVolume *nw_nifti_read(const char *path, GError **error)
{
  return read_volume(path, FALSE, NULL, error);
}

NwVolume *nw_nifti_read_multi(const char *path, GError **error)
{
  return read_volume(path, TRUE, NULL, error);
}

/* ---- writing ------------------------------------------------------------------------------ */

typedef struct {
  const NwVolume *v;
  int datatype; /* DT_* */
  gboolean nifti2;
  gint64 dim[8]; /* as written; components go to dim[4] (images) or dim[5] (fields) */
  int intent_code;
  const char *intent_name;
  const float *data; /* file order: element vox + c * n3 */
} WriteJob;

/* Integer types: rounded (half to even) and clamped to the type's range, NaN as 0. */
static void store_value(guint8 *p, int code, size_t nbyper, double x)
{
  Scalar v;
  const double r = isnan(x) ? 0.0 : nearbyint(x);
  switch (code) {
  case DT_UINT8:
    v.u8 = (guint8)CLAMP(r, 0, G_MAXUINT8);
    break;
  case DT_INT16:
    v.i16 = (gint16)CLAMP(r, G_MININT16, G_MAXINT16);
    break;
  case DT_UINT16:
    v.u16 = (guint16)CLAMP(r, 0, G_MAXUINT16);
    break;
  case DT_INT32:
    v.i32 = (gint32)CLAMP(r, G_MININT32, G_MAXINT32);
    break;
  case DT_FLOAT32:
    v.f32 = (float)x;
    break;
  default:
    v.f64 = x;
    break;
  }
  memcpy(p, &v, nbyper);
}

/* The header bytes (348+4 or 540+4, the 4 being an empty extension flag) for job. */
static gboolean make_header(const WriteJob *j, guint8 *hdr, size_t *hdr_len, GError **error)
{
  for (int i = 1; i <= j->dim[0] && !j->nifti2; i++)
    if (j->dim[i] > G_MAXINT16) {
      g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                  "cannot build a NIfTI-1 header: dim[%d] = %" G_GINT64_FORMAT
                  " is more than 32767; write NIfTI-2 instead",
                  i, j->dim[i]);
      return FALSE;
    }
  g_mutex_lock(&nifti_lock);
  nifti_quiet_locked();
  int64_t dims[8];
  for (int i = 0; i < 8; i++)
    dims[i] = j->dim[i];
  nifti_image *nim = nifti_make_new_nim(dims, j->datatype, 0);
  gboolean ok = nim != NULL;
  if (ok) {
    const double *a = j->v->vox_to_ras;
    nifti_dmat44 m;
    for (int r = 0; r < 4; r++)
      for (int c = 0; c < 4; c++)
        m.m[r][c] = a[r * 4 + c];
    nim->sto_xyz = m;
    nim->sform_code = NIFTI_XFORM_SCANNER_ANAT;
    nim->qto_xyz = m;
    nim->qform_code = NIFTI_XFORM_SCANNER_ANAT;
    /* The qform cannot hold shear: it is the nearest rotation; the sform is exact. */
    nifti_dmat44_to_quatern(m, &nim->quatern_b, &nim->quatern_c, &nim->quatern_d, &nim->qoffset_x,
                            &nim->qoffset_y, &nim->qoffset_z, &nim->dx, &nim->dy, &nim->dz,
                            &nim->qfac);
    nim->pixdim[0] = nim->qfac;
    nim->pixdim[1] = nim->dx = j->v->spacing_mm[0];
    nim->pixdim[2] = nim->dy = j->v->spacing_mm[1];
    nim->pixdim[3] = nim->dz = j->v->spacing_mm[2];
    nim->xyz_units = NIFTI_UNITS_MM;
    nim->scl_slope = 1.0;
    nim->scl_inter = 0.0;
    nim->intent_code = j->intent_code;
    if (j->intent_name)
      g_strlcpy(nim->intent_name, j->intent_name, sizeof nim->intent_name);
    g_strlcpy(nim->descrip, "neurowarp", sizeof nim->descrip);
    nim->nifti_type = j->nifti2 ? NIFTI_FTYPE_NIFTI2_1 : NIFTI_FTYPE_NIFTI1_1;
    nim->iname_offset = j->nifti2 ? 544 : 352;
    memset(hdr, 0, 544);
    if (j->nifti2) {
      nifti_2_header h2;
      ok = nifti_convert_nim2n2hdr(nim, &h2) == 0;
      memcpy(hdr, &h2, sizeof h2);
      /* nifti_clib leaves the spec's line-ending check bytes 8..11 of the magic zero. */
      memcpy(hdr + 4, "n+2\0\r\n\032\n", 8);
      *hdr_len = 544;
    } else {
      nifti_1_header h1;
      ok = nifti_convert_nim2n1hdr(nim, &h1) == 0;
      memcpy(hdr, &h1, sizeof h1);
      *hdr_len = 352;
    }
    nim->data = NULL;
    nifti_image_free(nim);
  }
  g_mutex_unlock(&nifti_lock);
  if (!ok)
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "cannot build a NIfTI-%d header for these dimensions", j->nifti2 ? 2 : 1);
  return ok;
}

static gboolean write_nifti_file(const char *tmp_path, gpointer data, GError **error)
{
  const WriteJob *j = data;
  gboolean gz = g_str_has_suffix(tmp_path, ".gz");
  gzFile f = gzopen(tmp_path, gz ? "wb6" : "wbT");
  if (f == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "cannot create: %s", g_strerror(errno));
    return FALSE;
  }
  guint8 hdr[544];
  size_t hdr_len;
  if (!make_header(j, hdr, &hdr_len, error)) {
    gzclose(f); /* nw_write_atomically removes the temporary file */
    return FALSE;
  }
  gboolean ok = gzwrite(f, hdr, (unsigned)hdr_len) == (int)hdr_len;
  const int nbyper = j->datatype == DT_UINT8                               ? 1
                     : j->datatype == DT_INT16 || j->datatype == DT_UINT16 ? 2
                     : j->datatype == DT_FLOAT64                           ? 8
                                                                           : 4;
  size_t n = 1;
  for (int i = 1; i <= j->dim[0]; i++)
    n *= (size_t)j->dim[i];
  const size_t chunk = 1u << 16;
  g_autofree guint8 *buf = g_malloc(chunk * (size_t)nbyper);
  for (size_t done = 0; ok && done < n; done += chunk) {
    size_t m = MIN(chunk, n - done);
    for (size_t e = 0; e < m; e++)
      store_value(buf + e * (size_t)nbyper, j->datatype, (size_t)nbyper, j->data[done + e]);
    unsigned bytes = (unsigned)(m * (size_t)nbyper);
    ok = gzwrite(f, buf, bytes) == (int)bytes;
  }
  int e = errno;
  ok = (gzclose(f) == Z_OK) && ok;
  if (!ok)
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "write failed: %s", e ? g_strerror(e) : "disk full?");
  return ok;
}

static gboolean check_output_folder(const char *path, GError **error)
{
  g_autofree char *dir = g_path_get_dirname(path);
  if (!g_file_test(dir, G_FILE_TEST_IS_DIR)) {
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "%s: cannot write: folder %s does not exist", path,
                dir);
    return FALSE;
  }
  if (g_access(dir, W_OK) != 0) {
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "%s: cannot write: folder %s is not writable", path,
                dir);
    return FALSE;
  }
  return TRUE;
}

static gboolean write_job(const char *path, WriteJob *j, GError **error)
{
  if (!check_output_folder(path, error))
    return FALSE;
  if (!g_str_has_suffix(path, ".nii") && !g_str_has_suffix(path, ".nii.gz")) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "%s: cannot write: the name must end in .nii or .nii.gz", path);
    return FALSE;
  }
  return nw_write_atomically(path, write_nifti_file, j, error);
}

/* Interleaved (vox * nc + c) -> planar (vox + c * n3), the NIfTI order. */
static float *to_planar(const NwVolume *v)
{
  size_t n3 = nw_volume_n_voxels(v), nc = (size_t)v->nc;
  if (nc == 1)
    return g_memdup2(v->data, n3 * sizeof(float));
  float *p = g_try_malloc(n3 * nc * sizeof(float));
  if (p == NULL)
    return NULL;
  for (size_t i = 0; i < n3; i++)
    for (size_t c = 0; c < nc; c++)
      p[i + c * n3] = v->data[i * nc + c];
  return p;
}

gboolean nw_nifti_write(const char *path, const NwVolume *v, NwDatatype type, gboolean nifti2,
                        GError **error)
{
  g_return_val_if_fail(v != NULL && v->data != NULL, FALSE);
  WriteJob j = {.v = v, .datatype = datatype_code(type), .nifti2 = nifti2};
  if (j.datatype == DT_UNKNOWN) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "%s: unsupported output datatype %d", path,
                (int)type);
    return FALSE;
  }
  gint64 d[8] = {v->nc > 1 ? 4 : 3, v->nx, v->ny, v->nz, v->nc, 1, 1, 1};
  memcpy(j.dim, d, sizeof d);
  g_autofree float *planar = to_planar(v);
  if (planar == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_NOMEM, "%s: out of memory", path);
    return FALSE;
  }
  j.data = planar;
  return write_job(path, &j, error);
}

/* ---- displacement fields ----------------------------------------------------------------- */

/* R: the 3x3 linear part of vox_to_ras (row-major). mm = R * u for u in voxel units. */
static void linear_part(const NwVolume *v, double r[9])
{
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 3; k++)
      r[i * 3 + k] = v->vox_to_ras[i * 4 + k];
}

static void mat3_apply(const double m[9], const double x[3], double y[3])
{
  for (int i = 0; i < 3; i++)
    y[i] = m[i * 3] * x[0] + m[i * 3 + 1] * x[1] + m[i * 3 + 2] * x[2];
}

static gboolean mat3_inverse(const double m[9], double inv[9])
{
  double det = m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) +
               m[2] * (m[3] * m[7] - m[4] * m[6]);
  if (fabs(det) < 1e-12)
    return FALSE;
  inv[0] = (m[4] * m[8] - m[5] * m[7]) / det;
  inv[1] = (m[2] * m[7] - m[1] * m[8]) / det;
  inv[2] = (m[1] * m[5] - m[2] * m[4]) / det;
  inv[3] = (m[5] * m[6] - m[3] * m[8]) / det;
  inv[4] = (m[0] * m[8] - m[2] * m[6]) / det;
  inv[5] = (m[2] * m[3] - m[0] * m[5]) / det;
  inv[6] = (m[3] * m[7] - m[4] * m[6]) / det;
  inv[7] = (m[1] * m[6] - m[0] * m[7]) / det;
  inv[8] = (m[0] * m[4] - m[1] * m[3]) / det;
  return TRUE;
}

gboolean nw_nifti_write_field(const char *path, const NwVolume *field, NwFieldConvention conv,
                              GError **error)
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
  linear_part(field, r);
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
  return write_job(path, &j, error);
}

static const char *intent_label(int code)
{
  g_mutex_lock(&nifti_lock);
  const char *name = nifti_intent_string(code); /* a static string */
  g_mutex_unlock(&nifti_lock);
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
  linear_part(f, r);
  double det = r[0] * (r[4] * r[8] - r[5] * r[7]) - r[1] * (r[3] * r[8] - r[5] * r[6]) +
               r[2] * (r[3] * r[7] - r[4] * r[6]);
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
  NwVolume *f = read_volume(path, TRUE, &nim, error);
  if (f == NULL)
    return NULL;
  FieldKind kind;
  if (!field_kind(path, nim, (int)nim->ndim, f->nc, &kind, error)) {
    free_nim(nim);
    nw_volume_free(f);
    return NULL;
  }
  double r[9], rinv[9], fsl[3] = {1, 1, 1};
  linear_part(f, r);
  if (!mat3_inverse(r, rinv)) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "%s: singular affine: cannot convert the "
                "field to voxel units",
                path);
    free_nim(nim);
    nw_volume_free(f);
    return NULL;
  }
  if (kind == KIND_FSL)
    fsl_to_voxel(nim, f, fsl);
  free_nim(nim);
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
