/* io_nifti_write.c — writing NIfTI-1/2 volumes (see io_nifti.h): the header built with
 * nifti_clib, header and data converted and (.nii.gz) deflated on the cores with zlib, and
 * written into an output set's temporary (atomic_file.h), so a failure never leaves a
 * partial file. Any thread; CPU only. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "io_nifti_private.h"
#include "nw_error.h"

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
  g_mutex_lock(&nw_nifti_lock);
  nw_nifti_quiet_locked();
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
  g_mutex_unlock(&nw_nifti_lock);
  if (!ok)
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "cannot build a NIfTI-%d header for these dimensions", j->nifti2 ? 2 : 1);
  return ok;
}

/* The file in chunks: chunk 0 the header and the first `per` values, each later chunk the
 * next `per` values, in the header's datatype. A .nii.gz has one gzip member per chunk,
 * deflated on every core (strategy_for) and written in order: a file of several
 * members is one gzip file (RFC 1952, 2.2) to zlib's gzread (nifti_clib, ITK, FSL, this
 * project's reader), Python's gzip (nibabel) and gunzip. One thread deflating the ~290 MB of
 * a 1 mm demons run's outputs took 15 of the command's 21 s on an H100 host (issue 12). Each
 * chunk is converted where it is deflated, so no copy of the whole file is made. */
/* 1 MiB: a 2 mm volume (3.6 MB, its field 11 MB) still spreads over the cores; a member's
 * own cost (18 header bytes, a fresh dictionary) is nothing at that size. */
#define CHUNK_BYTES ((size_t)1 << 20)

typedef struct {
  guint8 hdr[544];
  size_t hdr_len, nbyper, n, per;
  gint64 n_chunks;
} Chunks;

static gboolean plan_chunks(const WriteJob *j, Chunks *c, GError **error)
{
  if (!make_header(j, c->hdr, &c->hdr_len, error))
    return FALSE;
  c->nbyper = j->datatype == DT_UINT8                               ? 1
              : j->datatype == DT_INT16 || j->datatype == DT_UINT16 ? 2
              : j->datatype == DT_FLOAT64                           ? 8
                                                                    : 4;
  c->n = 1;
  for (int i = 1; i <= j->dim[0]; i++)
    c->n *= (size_t)j->dim[i];
  c->per = CHUNK_BYTES / c->nbyper;
  c->n_chunks = MAX(1, (gint64)((c->n + c->per - 1) / c->per));
  return TRUE;
}

/* Chunk m's bytes into buf (room for the header and `per` values); their count. */
static size_t chunk_bytes(const WriteJob *j, const Chunks *c, gint64 m, guint8 *buf)
{
  size_t len = 0;
  if (m == 0) {
    memcpy(buf, c->hdr, c->hdr_len);
    len = c->hdr_len;
  }
  const size_t e0 = (size_t)m * c->per, e1 = MIN(c->n, e0 + c->per);
  for (size_t e = e0; e < e1; e++, len += c->nbyper)
    store_value(buf + len, j->datatype, c->nbyper, j->data[e]);
  return len;
}

typedef struct {
  guint8 *out;
  size_t len;
} Member;

/* Floating-point voxels hold almost no repeated strings for LZ77 to find; what deflate
 * gains on them is the Huffman coding of their skewed bytes (exponents, signs). Z_RLE codes
 * those as well as level 6 does, or better, at three times its speed (a 1 mm demons field:
 * 0.926 of its size either way; 110 against 34 MB/s on one core), and keeps runs of
 * zeros. Integer images (labels, 8-bit scans) do have strings to match: level 6, whose
 * tables stay several times smaller there. */
static int strategy_for(int datatype)
{
  return datatype == DT_FLOAT32 || datatype == DT_FLOAT64 ? Z_RLE : Z_DEFAULT_STRATEGY;
}

static gboolean deflate_member(const guint8 *in, size_t len, int strategy, Member *m)
{
  z_stream z = {0};
  if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, strategy) != Z_OK)
    return FALSE;
  const size_t bound = deflateBound(&z, (uLong)len);
  m->out = g_try_malloc(bound);
  z.next_in = (Bytef *)in;
  z.avail_in = (uInt)len;
  z.next_out = m->out;
  z.avail_out = (uInt)bound;
  const gboolean ok = m->out != NULL && deflate(&z, Z_FINISH) == Z_STREAM_END;
  m->len = bound - z.avail_out;
  deflateEnd(&z);
  return ok;
}

/* Every chunk converted and deflated into its member, on the cores. */
static Member *deflate_chunks(const WriteJob *j, const Chunks *c, GError **error)
{
  Member *members = g_new0(Member, c->n_chunks);
  gboolean ok = TRUE;
#pragma omp parallel for schedule(dynamic, 1) reduction(&& : ok) if (c->n_chunks > 1)
  for (gint64 m = 0; m < c->n_chunks; m++) {
    guint8 *raw = g_try_malloc(c->hdr_len + c->per * c->nbyper);
    ok = raw != NULL &&
         deflate_member(raw, chunk_bytes(j, c, m, raw), strategy_for(j->datatype), &members[m]) &&
         ok;
    g_free(raw);
  }
  if (ok)
    return members;
  for (gint64 m = 0; m < c->n_chunks; m++)
    g_free(members[m].out);
  g_free(members);
  g_set_error(error, NW_ERROR, NW_ERROR_NOMEM, "out of memory while compressing");
  return NULL;
}

static gboolean write_all(FILE *f, const guint8 *p, size_t len)
{
  return len == 0 || fwrite(p, 1, len, f) == len;
}

static gboolean write_nifti_file(const char *tmp_path, gpointer data, GError **error)
{
  const WriteJob *j = data;
  Chunks c;
  if (!plan_chunks(j, &c, error))
    return FALSE;
  g_autofree Member *members = j->gz ? deflate_chunks(j, &c, error) : NULL;
  if (j->gz && members == NULL)
    return FALSE;
  FILE *f = fopen(tmp_path, "wb");
  gboolean ok = f != NULL;
  if (!ok)
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "cannot create: %s", g_strerror(errno));
  g_autofree guint8 *raw = ok && !j->gz ? g_malloc(c.hdr_len + c.per * c.nbyper) : NULL;
  for (gint64 m = 0; ok && m < c.n_chunks; m++)
    ok = j->gz ? write_all(f, members[m].out, members[m].len)
               : write_all(f, raw, chunk_bytes(j, &c, m, raw));
  for (gint64 m = 0; members != NULL && m < c.n_chunks; m++)
    g_free(members[m].out);
  if (f == NULL)
    return FALSE;
  int e = ok ? 0 : errno;
  if (fflush(f) != 0 && ok) {
    ok = FALSE;
    e = errno;
  }
  if (fclose(f) != 0 && ok) {
    ok = FALSE;
    e = errno;
  }
  if (!ok)
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "write failed: %s", e ? g_strerror(e) : "disk full?");
  return ok;
}

gboolean nw_nifti_write_job(NwOutputs *o, const char *path, WriteJob *j, GError **error)
{
  if (!g_str_has_suffix(path, ".nii") && !g_str_has_suffix(path, ".nii.gz")) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "%s: cannot write: the name must end in .nii or .nii.gz", path);
    return FALSE;
  }
  j->gz = g_str_has_suffix(path, ".gz");
  return nw_outputs_write(o, path, write_nifti_file, j, error);
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

gboolean nw_nifti_write_to(NwOutputs *o, const char *path, const NwVolume *v, NwDatatype type,
                           gboolean nifti2, GError **error)
{
  g_return_val_if_fail(v != NULL && v->data != NULL, FALSE);
  WriteJob j = {.v = v, .datatype = nw_nifti_datatype_code(type), .nifti2 = nifti2};
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
  return nw_nifti_write_job(o, path, &j, error);
}

gboolean nw_nifti_write(const char *path, const NwVolume *v, NwDatatype type, gboolean nifti2,
                        GError **error)
{
  g_autoptr(NwOutputs) o = nw_outputs_new(TRUE);
  return nw_nifti_write_to(o, path, v, type, nifti2, error) && nw_outputs_commit(o, error);
}
