/* io_nifti.c — reading NIfTI-1/2 images (see io_nifti.h, docs/FIELDS.md); writing is in
 * io_nifti_write.c, displacement fields in io_nifti_field.c. Any thread; CPU only.
 * nifti_clib keeps global state (debug level, error chatter), so every call into it is made
 * under nw_nifti_lock.
 *
 * Reading is done in three steps so that a bad file can never crash us, fool us or make us
 * allocate absurd sizes: (1) the raw header bytes are read with zlib (gz or plain,
 * transparently) and checked here: header size, magic, dims, datatype, vox_offset; (2)
 * nifti_clib parses the header into a nifti_image (transforms, scaling, intent) without data,
 * and the transform it gives is checked (finite, invertible); (3) the data are read with zlib
 * in chunks and converted to float, counting the bytes actually read (nifti_clib can read
 * short data silently), and a gzip stream must end with its intact trailer. */
#include "io_nifti.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <zlib.h>

#include "input_file.h"
#include "io_nifti_private.h"
#include "nw_error.h"

GMutex nw_nifti_lock;

void nw_nifti_quiet_locked(void)
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

int nw_nifti_datatype_code(NwDatatype t)
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
const char *nw_nifti_datatype_label(int code)
{
  for (size_t i = 0; i < G_N_ELEMENTS(dtypes); i++)
    if (dtypes[i].code == code)
      return dtypes[i].name;
  g_mutex_lock(&nw_nifti_lock);
  const char *name = nifti_datatype_string(code); /* a static string */
  g_mutex_unlock(&nw_nifti_lock);
  return name;
}

/* ---- step 1: raw header checks ---------------------------------------------------------- */

typedef struct {
  int version;      /* 1 or 2 */
  gboolean swapped; /* file byte order differs from ours */
  gboolean one_file; /* magic n+1 / n+2: header and data in one .nii */
  gint64 dim[8];
  int datatype;
  double vox_offset;
  double pixdim[4];  /* as stored: nifti_clib replaces 0 and NaN by 1 */
  int qform_code, sform_code;
  goffset file_size; /* of the file as stored (compressed for .gz) */
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

static float get_f32(const guint8 *p, gboolean swap)
{
  guint32 u = get_u32(p, swap);
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static double get_f64(const guint8 *p, gboolean swap)
{
  gint64 u = get_i64(p, swap);
  double d;
  memcpy(&d, &u, 8);
  return d;
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

/* Before nifti_clib sees the header: it prints a line of its own for a datatype it does not
 * know, and turns vox_offset into an integer (undefined for NaN or 1e30). The data must
 * start after a single file's header and, for an uncompressed file, inside the file. */
static gboolean check_datatype_and_offset(const char *path, const RawHeader *h, GError **error)
{
  g_mutex_lock(&nw_nifti_lock);
  /* nifti_datatype_is_valid takes DT_UNKNOWN (0) and DT_ALL (255), which the header
   * conversion then refuses with a line on stderr (found by fuzz_nifti) */
  const gboolean known = h->datatype != DT_UNKNOWN && h->datatype != DT_ALL &&
                         nifti_datatype_is_valid(h->datatype, 1);
  g_mutex_unlock(&nw_nifti_lock);
  if (!known) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: unknown datatype code %d", path,
                h->datatype);
    return FALSE;
  }
  const double v = h->vox_offset, header = h->version == 1 ? 348 : 540;
  const gboolean gz = g_str_has_suffix(path, ".gz");
  if (!isfinite(v) || v != floor(v) || v < 0 || (h->one_file && v > 0 && v < header) ||
      v > (double)G_MAXINT64 / 2 || (!gz && h->one_file && v > (double)h->file_size)) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "%s: invalid vox_offset %g: the data must start at a whole byte after the "
                "%g-byte header%s",
                path, v, header, gz || !h->one_file ? "" : " and inside the file");
    return FALSE;
  }
  return TRUE;
}

static gboolean read_raw_header(const char *path, RawHeader *h, GError **error)
{
  if (!nw_input_file_check(path, &h->file_size, error))
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
  h->one_file = h->version == 1 ? b[345] == '+' : b[5] == '+';
  for (int i = 0; i < 4; i++)
    h->pixdim[i] = h->version == 1 ? get_f32(b + 76 + 4 * i, h->swapped)
                                   : get_f64(b + 104 + 8 * i, h->swapped);
  h->qform_code = h->version == 1 ? get_i16(b + 252, h->swapped) : (gint32)get_u32(b + 344, h->swapped);
  h->sform_code = h->version == 1 ? get_i16(b + 254, h->swapped) : (gint32)get_u32(b + 348, h->swapped);
  if (h->version == 1) {
    guint32 u = get_u32(b + 108, h->swapped);
    float f;
    memcpy(&f, &u, 4);
    h->vox_offset = f;
  } else {
    h->vox_offset = (double)get_i64(b + 168, h->swapped);
  }
  return check_dims(path, h->dim, error) && check_datatype_and_offset(path, h, error);
}

/* The voxel size along axis i when there is no transform: pixdim[i] for axes the image has
 * (check_affine made sure it is a size), 1 mm for axes beyond dim[0]. */
static double pixdim_or_unit(const nifti_image *nim, int i)
{
  return i <= nim->ndim ? nim->pixdim[i] : (nim->pixdim[i] > 0 && isfinite(nim->pixdim[i]) ? nim->pixdim[i] : 1.0);
}

/* Affine: sform (code > 0), else qform (code > 0), else diag(pixdim). Row-major 4x4. */
static const char *nim_affine(const nifti_image *nim, double a[16])
{
  const nifti_dmat44 *m = nim->sform_code > 0   ? &nim->sto_xyz
                          : nim->qform_code > 0 ? &nim->qto_xyz
                                                : NULL;
  memset(a, 0, 16 * sizeof(double));
  a[15] = 1.0;
  if (m == NULL) {
    for (int i = 0; i < 3; i++)
      a[i * 5] = pixdim_or_unit(nim, i + 1);
    return "pixdim";
  }
  for (int r = 0; r < 4; r++)
    for (int c = 0; c < 4; c++)
      a[r * 4 + c] = m->m[r][c];
  return nim->sform_code > 0 ? "sform" : "qform";
}

/* The voxel-to-world transform must be one: finite, invertible, and from pixdims that are
 * voxel sizes. NaN would pass every later comparison (a NaN grid "matches" any other). */
static gboolean check_affine(const char *path, const nifti_image *nim, const RawHeader *h,
                             GError **error)
{
  double a[16];
  const char *from = nim_affine(nim, a);
  if (strcmp(from, "pixdim") == 0)
    for (int i = 1; i <= MIN(3, (int)h->dim[0]); i++)
      if (!(h->pixdim[i] > 0) || !isfinite(h->pixdim[i])) {
        g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                    "%s: pixdim[%d] = %g is not a voxel size, and there is no sform or qform", path,
                    i, h->pixdim[i]);
        return FALSE;
      }
  for (int k = 0; k < 12; k++)
    if (!isfinite(a[k])) {
      g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                  "%s: the %s holds a non-finite value (%g at row %d, column %d)", path, from, a[k],
                  k / 4, k % 4);
      return FALSE;
    }
  const double det = a[0] * (a[5] * a[10] - a[6] * a[9]) - a[1] * (a[4] * a[10] - a[6] * a[8]) +
                     a[2] * (a[4] * a[9] - a[5] * a[8]);
  if (!(fabs(det) > 1e-12)) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "%s: the %s is singular (determinant %g): voxels have no place in the world", path,
                from, det);
    return FALSE;
  }
  return TRUE;
}

/* ---- step 2: parse with nifti_clib --------------------------------------------------------- */

static nifti_image *read_nim(const char *path, RawHeader *h, GError **error)
{
  if (!read_raw_header(path, h, error))
    return NULL;
  g_mutex_lock(&nw_nifti_lock);
  nw_nifti_quiet_locked();
  nifti_image *nim = nifti_image_read(path, 0);
  g_mutex_unlock(&nw_nifti_lock);
  if (nim == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "%s: not a valid NIfTI file: nifti_clib could not parse the header", path);
    return NULL;
  }
  if (!check_affine(path, nim, h, error)) {
    nw_nifti_free_nim(nim);
    return NULL;
  }
  return nim;
}

void nw_nifti_free_nim(nifti_image *nim)
{
  if (nim == NULL)
    return;
  g_mutex_lock(&nw_nifti_lock);
  nifti_image_free(nim);
  g_mutex_unlock(&nw_nifti_lock);
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
  g_strlcpy(info->datatype_name, nw_nifti_datatype_label(nim->datatype), sizeof info->datatype_name);
  info->scl_slope = nim->scl_slope;
  info->scl_inter = nim->scl_inter;
  info->intent_code = nim->intent_code;
  memcpy(info->intent_name, nim->intent_name, 16);
  info->intent_name[16] = '\0';
  info->sform_code = nim->sform_code;
  info->qform_code = nim->qform_code;
  memcpy(info->description, nim->descrip, 80);
  info->description[80] = '\0';
  nw_nifti_free_nim(nim);
  return TRUE;
}

/* ---- step 3: data ------------------------------------------------------------------------- */

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
  if (strcmp(iname, path) != 0 && !nw_input_file_check(iname, NULL, error))
    return FALSE; /* the .img of a .hdr/.img pair */
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

/* After the data: a gzip stream must end with its 8-byte trailer (length and CRC), else the
 * file was cut and the last data bytes cannot be trusted. More bytes are fine (padding). */
static gboolean check_stream_end(gzFile gz, const char *path, GError **error)
{
  guint8 extra;
  const int got = gzread(gz, &extra, 1);
  int zerr = Z_OK;
  const char *zmsg = gzerror(gz, &zerr);
  if (got >= 0 && zerr == Z_OK)
    return TRUE;
  if (zerr == Z_BUF_ERROR)
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "%s: truncated: the gzip stream ends without its 8-byte trailer", path);
  else
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: corrupt compressed data: %s", path, zmsg);
  return FALSE;
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
      g_mutex_lock(&nw_nifti_lock);
      nifti_swap_Nbytes((int64_t)want, (int)nbyper, buf);
      g_mutex_unlock(&nw_nifti_lock);
    }
    for (size_t e = 0; e < want; e++) {
      size_t g = done + e;
      size_t vox = g % n3, c = g / n3;
      out[vox * nc + c] =
          (float)(raw_value(buf + e * nbyper, nim->datatype, nbyper) * slope + inter);
    }
    done += want;
  }
  gboolean ok = check_stream_end(gz, path, error);
  gzclose(gz);
  return ok;
}

/* Reads dims 1..3 as the grid and all higher dims as components (refused unless allow_multi).
 * nim_out, when not NULL, receives the parsed header (free with free_nim). */
NwVolume *nw_nifti_read_volume(const char *path, gboolean allow_multi, nifti_image **nim_out,
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
                path, nw_nifti_datatype_label(nim->datatype), nim->datatype);
    nw_nifti_free_nim(nim);
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
    nw_nifti_free_nim(nim);
    return NULL;
  }
  if (nc > G_MAXINT) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "%s: absurd dimensions: %" G_GINT64_FORMAT " components per voxel", path, nc);
    nw_nifti_free_nim(nim);
    return NULL;
  }
  const size_t total = (size_t)(d[1] * d[2] * d[3] * nc) * (size_t)nim->nbyper;
  if (!check_data_size(path, nim, total, error)) {
    nw_nifti_free_nim(nim);
    return NULL;
  }
  GError *local = NULL;
  NwVolume *v = nw_volume_new((int)d[1], (int)d[2], (int)d[3], (int)nc, &local);
  if (v == NULL) {
    g_propagate_prefixed_error(error, local, "%s: ", path);
    nw_nifti_free_nim(nim);
    return NULL;
  }
  double a[16];
  nim_affine(nim, a);
  nw_volume_set_affine(v, a);
  if (!read_data(path, nim, &h, nw_volume_n_voxels(v), (size_t)nc, v->data, error)) {
    nw_volume_free(v);
    nw_nifti_free_nim(nim);
    return NULL;
  }
  if (nim_out)
    *nim_out = nim;
  else
    nw_nifti_free_nim(nim);
  return v;
}

/* ---- regions (io_tiles.h: the distributed metric's blocks) ------------------------------- */

struct NwNiftiSlabs {
  char *path, *iname;
  gint64 offset;
  int datatype, nbyper, n[3];
  gboolean swap;
  double slope, inter;
};

NwNiftiSlabs *nw_nifti_slabs_open(const char *path, NwVolume *grid, GError **error)
{
  RawHeader h;
  nifti_image *nim = read_nim(path, &h, error);
  if (nim == NULL)
    return NULL;
  gint64 d[8];
  for (int i = 0; i < 8; i++)
    d[i] = i <= h.dim[0] ? h.dim[i] : 1;
  const char *why = !datatype_supported(nim->datatype)          ? "its datatype is not read"
                    : d[4] * d[5] * d[6] * d[7] > 1              ? "it holds several volumes"
                    : d[1] > G_MAXINT || d[2] > G_MAXINT || d[3] > G_MAXINT ? "it is too large"
                                                                 : NULL;
  NwNiftiSlabs *s = NULL;
  if (why != NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: cannot be read by blocks: %s", path, why);
  } else if (g_str_has_suffix(nim->iname ? nim->iname : path, ".gz") ||
             check_data_size(path, nim, (size_t)(d[1] * d[2] * d[3]) * (size_t)nim->nbyper,
                             error)) {
    /* (a compressed file's size is not counted here: that would decompress all of it on
     * every rank; a short one fails where a block's rows are missing) */
    s = g_new0(NwNiftiSlabs, 1);
    *s = (NwNiftiSlabs){.path = g_strdup(path),
                        .iname = g_strdup(nim->iname ? nim->iname : path),
                        .offset = nim->iname_offset,
                        .datatype = nim->datatype,
                        .nbyper = nim->nbyper,
                        .n = {(int)d[1], (int)d[2], (int)d[3]},
                        .swap = h.swapped && nim->nbyper > 1,
                        .slope = nim->scl_slope == 0.0 || !isfinite(nim->scl_slope) ? 1.0
                                                                                   : nim->scl_slope,
                        .inter = isfinite(nim->scl_inter) ? nim->scl_inter : 0.0};
    double a[16];
    nim_affine(nim, a);
    *grid = (NwVolume){.nx = s->n[0], .ny = s->n[1], .nz = s->n[2], .nc = 1, .data = NULL};
    nw_volume_set_affine(grid, a);
  }
  nw_nifti_free_nim(nim);
  return s;
}

gboolean nw_nifti_slabs_read(NwNiftiSlabs *s, const int lo[3], const int hi[3], float *out,
                             GError **error)
{
  /* row by row, in file order: a compressed stream only seeks forward cheaply (zlib
   * decompresses what it skips), so a slab of rows costs one pass up to its end */
  gzFile gz = gzopen(s->iname, "rb");
  if (gz == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "%s: cannot open", s->path);
    return FALSE;
  }
  gzbuffer(gz, 1 << 18);
  const size_t w = (size_t)(hi[0] - lo[0]), nb = (size_t)s->nbyper;
  g_autofree guint8 *buf = g_malloc(w * nb);
  gboolean ok = TRUE;
  for (int k = lo[2]; ok && k < hi[2]; k++)
    for (int j = lo[1]; ok && j < hi[1]; j++) {
      const gint64 at =
          s->offset + (((gint64)k * s->n[1] + j) * s->n[0] + lo[0]) * (gint64)nb;
      ok = gzseek(gz, (z_off_t)at, SEEK_SET) == at && gzread(gz, buf, (unsigned)(w * nb)) ==
                                                          (int)(w * nb);
      if (!ok) {
        int zerr = Z_OK;
        const char *zmsg = gzerror(gz, &zerr);
        g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: %s at row %d of slice %d", s->path,
                    zerr != Z_OK && zerr != Z_BUF_ERROR ? zmsg : "truncated", j, k);
        break;
      }
      if (s->swap) {
        g_mutex_lock(&nw_nifti_lock);
        nifti_swap_Nbytes((int64_t)w, (int)nb, buf);
        g_mutex_unlock(&nw_nifti_lock);
      }
      /* as read_data converts */
      for (size_t e = 0; e < w; e++)
        *out++ = (float)(raw_value(buf + e * nb, s->datatype, nb) * s->slope + s->inter);
    }
  gzclose(gz);
  return ok;
}

void nw_nifti_slabs_close(NwNiftiSlabs *s)
{
  if (s == NULL)
    return;
  g_free(s->path);
  g_free(s->iname);
  g_free(s);
}

NwVolume *nw_nifti_read(const char *path, GError **error)
{
  return nw_nifti_read_volume(path, FALSE, NULL, error);
}

NwVolume *nw_nifti_read_multi(const char *path, GError **error)
{
  return nw_nifti_read_volume(path, TRUE, NULL, error);
}
