/* io_mesh_gifti_check.c — validates a GIFTI document with GLib's GMarkup before giftiio sees
 * it. Any thread (called under the giftiio lock of io_mesh_gifti.c, since the giftiio string
 * helpers used here share its global verbosity).
 *
 * Why: giftiio 1.0.9 (Debian 12) trusts the document's structure. Checked here with ASan,
 * it crashes (SEGV in libgiftiio's XML callbacks) on an element outside its parent: the
 * 7-byte file "<Data/>", a <CoordinateSystemTransformMatrix> directly under <GIFTI>, an <MD>
 * directly under <GIFTI>. It returns an image for Data that hold fewer values than
 * Dim0 x Dim1 declare, reads ExternalFileName from any folder, and loads an unreadable or
 * short external file as an array without data. Upstream (NIFTI-Imaging/gifti_clib) should
 * refuse these; until then nothing reaches it that the GIFTI 1.0 DTD does not allow:
 *
 *   GIFTI (MetaData?, LabelTable?, DataArray*)      NumberOfDataArrays = their count
 *   MetaData (MD*)   MD (Name, Value)   LabelTable (Label*)
 *   DataArray (MetaData?, CoordinateSystemTransformMatrix*, Data)
 *   CoordinateSystemTransformMatrix (DataSpace, TransformedSpace, MatrixData: 16 numbers)
 *
 * and every DataArray's attributes are checked (known Intent, DataType, Encoding, Endian,
 * ArrayIndexingOrder; Dimensionality 1..6 with positive Dim0..), and its data must hold
 * exactly Dim0 x ... values: ASCII numbers counted, base64 decoded, gzip inflated, external
 * files (in the GIFTI file's own folder only) long enough. Inside an element, nothing may
 * follow a CDATA section (not even a newline or another section): giftiio 1.0.9 drops its
 * text buffer when a section ends and then appends to NULL (found by fuzz_mesh_gifti). */
#define _XOPEN_SOURCE 700 /* realpath (not _GNU_SOURCE: dirent.h would take DT_UNKNOWN) */
#include <errno.h>
#include <gifti_io.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "input_file.h"
#include "io_mesh_gifti_check.h"
#include "nw_error.h"

enum { MAX_DEPTH = 8, MAX_DIMS = 6 };

typedef struct {
  const char *path, *folder; /* the GIFTI file and its real folder */
  const char *stack[MAX_DEPTH];
  int depth;
  int n_arrays, n_declared;
  /* the DataArray being read */
  int encoding, nbyper, n_data, n_meta, n_xform;
  gint64 nvals, ext_offset;
  char *ext_name;
  GString *text;  /* Data or MatrixData content */
  gboolean keep;  /* text is being collected */
  int parts;      /* children seen in an MD or a CoordinateSystemTransformMatrix */
  gboolean after_cdata; /* the element being read has had a CDATA section */
} Check;

static gboolean bad(GError **error, Check *k, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static gboolean bad(GError **error, Check *k, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  if (k->n_arrays > 0 && k->depth > 1)
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: not a valid GIFTI file: DataArray %d: %s",
                k->path, k->n_arrays - 1, msg);
  else
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: not a valid GIFTI file: %s", k->path, msg);
  return FALSE;
}

/* The parent each element must have (NULL: the root). */
static const struct {
  const char *name, *parent;
} allowed[] = {
    {"GIFTI", NULL},
    {"MetaData", "GIFTI"},
    {"MetaData", "DataArray"},
    {"MD", "MetaData"},
    {"Name", "MD"},
    {"Value", "MD"},
    {"LabelTable", "GIFTI"},
    {"Label", "LabelTable"},
    {"DataArray", "GIFTI"},
    {"CoordinateSystemTransformMatrix", "DataArray"},
    {"DataSpace", "CoordinateSystemTransformMatrix"},
    {"TransformedSpace", "CoordinateSystemTransformMatrix"},
    {"MatrixData", "CoordinateSystemTransformMatrix"},
    {"Data", "DataArray"},
};

static gboolean placed_right(const char *name, const char *parent)
{
  for (gsize i = 0; i < G_N_ELEMENTS(allowed); i++)
    if (strcmp(allowed[i].name, name) == 0 && g_strcmp0(allowed[i].parent, parent) == 0)
      return TRUE;
  return FALSE;
}

static const char *attr(const char **names, const char **values, const char *key)
{
  for (int i = 0; names[i] != NULL; i++)
    if (strcmp(names[i], key) == 0)
      return values[i];
  return NULL;
}

/* A whole decimal number in lo..hi, nothing else. */
static gboolean parse_int(const char *text, gint64 lo, gint64 hi, gint64 *out)
{
  if (text == NULL)
    return FALSE;
  g_autofree char *t = g_strstrip(g_strdup(text));
  char *end = NULL;
  errno = 0;
  gint64 v = g_ascii_strtoll(t, &end, 10);
  if (t[0] == '\0' || *end != '\0' || errno != 0 || v < lo || v > hi)
    return FALSE;
  *out = v;
  return TRUE;
}

static gboolean array_enums(Check *k, const char **n, const char **v, GError **error)
{
  const char *intent = attr(n, v, "Intent"), *type = attr(n, v, "DataType");
  const char *enc = attr(n, v, "Encoding"), *endian = attr(n, v, "Endian");
  const char *order = attr(n, v, "ArrayIndexingOrder");
  int code = intent != NULL ? gifti_intent_from_string(intent) : -1;
  if (intent == NULL || (!gifti_intent_is_valid(code) || (code == 0 && strcmp(intent, "NIFTI_INTENT_NONE") != 0)))
    return bad(error, k, "Intent \"%s\" is not a NIfTI intent", intent ? intent : "(missing)");
  int dt = type != NULL ? gifti_str2datatype(type) : 0, swapsize = 0;
  if (dt == 0 || gifti_datatype_sizes(dt, &k->nbyper, &swapsize) != 0 || k->nbyper <= 0)
    return bad(error, k, "DataType \"%s\" is not a NIfTI data type", type ? type : "(missing)");
  k->encoding = enc != NULL ? gifti_str2encoding(enc) : GIFTI_ENCODING_UNDEF;
  if (k->encoding <= GIFTI_ENCODING_UNDEF || k->encoding > GIFTI_ENCODING_MAX)
    return bad(error, k, "Encoding \"%s\" is not ASCII, Base64Binary, GZipBase64Binary or "
               "ExternalFileBinary", enc ? enc : "(missing)");
  int e = endian != NULL ? gifti_str2endian(endian) : GIFTI_ENDIAN_UNDEF;
  if (e <= GIFTI_ENDIAN_UNDEF || e > GIFTI_ENDIAN_MAX)
    return bad(error, k, "Endian \"%s\" is not BigEndian or LittleEndian",
               endian ? endian : "(missing)");
  int o = order != NULL ? gifti_str2ind_ord(order) : GIFTI_IND_ORD_UNDEF;
  if (o <= GIFTI_IND_ORD_UNDEF || o > GIFTI_IND_ORD_MAX)
    return bad(error, k, "ArrayIndexingOrder \"%s\" is not RowMajorOrder or ColumnMajorOrder",
               order ? order : "(missing)");
  return TRUE;
}

/* Dimensionality, Dim0.., and their product (bounded: 2^31 bytes of data at most). */
static gboolean array_dims(Check *k, const char **n, const char **v, GError **error)
{
  gint64 nd = 0, d = 0;
  if (!parse_int(attr(n, v, "Dimensionality"), 1, MAX_DIMS, &nd))
    return bad(error, k, "Dimensionality \"%s\" is not 1..%d",
               attr(n, v, "Dimensionality") ? attr(n, v, "Dimensionality") : "(missing)", MAX_DIMS);
  k->nvals = 1;
  for (int i = 0; i < nd; i++) {
    char key[8];
    g_snprintf(key, sizeof key, "Dim%d", i);
    if (!parse_int(attr(n, v, key), 1, G_MAXINT32, &d))
      return bad(error, k, "%s \"%s\" is not a positive number", key,
                 attr(n, v, key) ? attr(n, v, key) : "(missing)");
    if ((double)k->nvals * (double)d * k->nbyper > (double)G_MAXINT32)
      return bad(error, k, "Dim0..Dim%d hold more than 2^31 bytes of data", i);
    k->nvals *= d;
  }
  return TRUE;
}

/* External data: a file of the GIFTI's own folder (as giftiio opens it: relative to the
 * working directory), holding offset + nvals * nbyper bytes. */
static gboolean array_external(Check *k, const char **n, const char **v, GError **error)
{
  const char *name = attr(n, v, "ExternalFileName"), *off = attr(n, v, "ExternalFileOffset");
  if (k->encoding != GIFTI_ENCODING_EXTBIN)
    return TRUE;
  if (name == NULL || name[0] == '\0')
    return bad(error, k, "ExternalFileBinary without ExternalFileName");
  k->ext_offset = 0;
  if (off != NULL && off[0] != '\0' && !parse_int(off, 0, G_MAXINT64 / 2, &k->ext_offset))
    return bad(error, k, "ExternalFileOffset \"%s\" is not a number >= 0", off);
  g_autofree char *real = realpath(name, NULL);
  g_autofree char *dir = real != NULL ? g_path_get_dirname(real) : NULL;
  if (real == NULL || strcmp(dir, k->folder) != 0)
    return bad(error, k, "external data file %s is %s", name,
               real == NULL ? "missing" : "outside the GIFTI file's folder");
  goffset size = 0;
  GError *local = NULL;
  if (!nw_input_file_check(real, &size, &local)) {
    gboolean ok = bad(error, k, "external data: %s", local->message);
    g_error_free(local);
    return ok;
  }
  gint64 need = k->nvals * k->nbyper;
  if (size < k->ext_offset || size - k->ext_offset < need)
    return bad(error, k,
               "external data file %s is short: %" G_GINT64_FORMAT " values of %d bytes from "
               "offset %" G_GINT64_FORMAT " need %" G_GINT64_FORMAT " bytes, it has %" G_GINT64_FORMAT,
               name, k->nvals, k->nbyper, k->ext_offset, k->ext_offset + need, (gint64)size);
  k->ext_name = g_strdup(name);
  return TRUE;
}

static gboolean start_array(Check *k, const char **n, const char **v, GError **error)
{
  k->n_arrays++;
  k->n_data = k->n_meta = k->n_xform = 0;
  g_clear_pointer(&k->ext_name, g_free);
  return array_enums(k, n, v, error) && array_dims(k, n, v, error) &&
         array_external(k, n, v, error);
}

static void on_start(GMarkupParseContext *ctx, const char *name, const char **n, const char **v,
                     gpointer data, GError **error)
{
  Check *k = data;
  k->after_cdata = FALSE;
  const char *parent = k->depth > 0 ? k->stack[k->depth - 1] : NULL;
  if (k->depth == 0 && k->n_declared >= 0) {
    bad(error, k, "a second top-level element <%s>", name);
    return;
  }
  if (k->depth == MAX_DEPTH || !placed_right(name, parent)) {
    bad(error, k, "<%s> may not stand %s%s%s", name, parent ? "inside <" : "at the top",
        parent ? parent : "", parent ? ">" : " (the root must be <GIFTI>)");
    return;
  }
  k->stack[k->depth++] = g_intern_string(name);
  if (g_strcmp0(parent, "MD") == 0 || g_strcmp0(parent, "CoordinateSystemTransformMatrix") == 0)
    k->parts |= strcmp(name, "Name") == 0 || strcmp(name, "DataSpace") == 0        ? 1
                : strcmp(name, "Value") == 0 || strcmp(name, "TransformedSpace") == 0 ? 2
                                                                                    : 4;
  gint64 count = 0;
  if (strcmp(name, "GIFTI") == 0) {
    if (!parse_int(attr(n, v, "NumberOfDataArrays"), 0, 100000, &count))
      bad(error, k, "NumberOfDataArrays is missing or not a number");
    k->n_declared = (int)count;
  } else if (strcmp(name, "DataArray") == 0) {
    start_array(k, n, v, error);
  } else if (strcmp(name, "Data") == 0 || strcmp(name, "MatrixData") == 0) {
    g_string_truncate(k->text, 0);
    k->keep = TRUE;
  } else if (strcmp(name, "MetaData") == 0 && strcmp(parent, "DataArray") == 0) {
    k->n_meta++;
  } else if (strcmp(name, "CoordinateSystemTransformMatrix") == 0 || strcmp(name, "MD") == 0) {
    k->parts = 0;
  }
}

/* Text or a second section after an element's CDATA section. */
static void after_cdata(GMarkupParseContext *ctx, Check *k, GError **error)
{
  bad(error, k, "text follows the CDATA section in <%s>, which giftiio cannot read",
      g_markup_parse_context_get_element(ctx));
}

static void on_passthrough(GMarkupParseContext *ctx, const char *text, gsize len, gpointer data,
                           GError **error)
{
  Check *k = data;
  if (len < 9 || memcmp(text, "<![CDATA[", 9) != 0) /* comments, processing instructions */
    return;
  if (k->after_cdata)
    after_cdata(ctx, k, error);
  k->after_cdata = TRUE;
}

static void on_text(GMarkupParseContext *ctx, const char *text, gsize len, gpointer data,
                    GError **error)
{
  Check *k = data;
  if (k->after_cdata && len > 0) {
    after_cdata(ctx, k, error);
    return;
  }
  if (k->keep)
    g_string_append_len(k->text, text, (gssize)len);
}

/* The number of whitespace-separated numbers in text, or -1 when one is not a number. */
static gint64 count_numbers(const char *text)
{
  gint64 n = 0;
  const char *p = text;
  for (;;) {
    while (g_ascii_isspace(*p))
      p++;
    if (*p == '\0')
      return n;
    char *end = NULL;
    g_ascii_strtod(p, &end);
    if (end == p || (*end != '\0' && !g_ascii_isspace(*end)))
      return -1;
    n++;
    p = end;
  }
}

/* Base64 (whitespace allowed) decoded; NULL when other characters appear. */
static guint8 *decode_base64(const char *text, gsize *len)
{
  g_autofree char *clean = g_malloc(strlen(text) + 1);
  gsize n = 0;
  for (const char *p = text; *p != '\0'; p++) {
    if (g_ascii_isspace(*p))
      continue;
    if (!g_ascii_isalnum(*p) && *p != '+' && *p != '/' && *p != '=')
      return NULL;
    clean[n++] = *p;
  }
  clean[n] = '\0';
  if (n % 4 != 0 || (n > 0 && strchr(clean, '=') != NULL &&
                     strchr(clean, '=') < clean + n - 2))
    return NULL;
  return g_base64_decode(clean, len);
}

/* zlib data inflating to exactly `want` bytes. */
static gboolean inflates_to(const guint8 *z, gsize zlen, gint64 want)
{
  g_autofree guint8 *out = g_try_malloc((gsize)want + 1);
  if (out == NULL)
    return FALSE;
  uLongf got = (uLongf)want + 1;
  return uncompress(out, &got, z, (uLong)zlen) == Z_OK && (gint64)got == want;
}

static gboolean check_data(Check *k, GError **error)
{
  gint64 bytes = k->nvals * k->nbyper, n = 0;
  gsize len = 0;
  switch (k->encoding) {
  case GIFTI_ENCODING_ASCII:
    if ((n = count_numbers(k->text->str)) != k->nvals)
      return bad(error, k, "ASCII data hold %s%" G_GINT64_FORMAT " values, Dim0.. give %"
                 G_GINT64_FORMAT, n < 0 ? "a non-number; " : "", MAX(n, 0), k->nvals);
    return TRUE;
  case GIFTI_ENCODING_EXTBIN:
    return TRUE; /* checked with the attributes */
  default: {
    g_autofree guint8 *raw = decode_base64(k->text->str, &len);
    if (raw == NULL || len == 0)
      return bad(error, k, "Data is empty or not base64");
    if (k->encoding == GIFTI_ENCODING_B64BIN && (gint64)len != bytes)
      return bad(error, k, "Data hold %zu bytes, Dim0.. give %" G_GINT64_FORMAT, len, bytes);
    if (k->encoding == GIFTI_ENCODING_B64GZ && !inflates_to(raw, len, bytes))
      return bad(error, k, "compressed Data do not inflate to the %" G_GINT64_FORMAT
                 " bytes Dim0.. give", bytes);
    return TRUE;
  }
  }
}

static void on_end(GMarkupParseContext *ctx, const char *name, gpointer data, GError **error)
{
  Check *k = data;
  k->depth--;
  k->after_cdata = FALSE;
  if (strcmp(name, "Data") == 0) {
    k->keep = FALSE;
    k->n_data++;
    if (k->n_data > 1)
      bad(error, k, "more than one Data element");
    else
      check_data(k, error);
  } else if (strcmp(name, "MatrixData") == 0) {
    k->keep = FALSE;
    if (count_numbers(k->text->str) != 16)
      bad(error, k, "MatrixData does not hold 16 numbers");
  } else if ((strcmp(name, "MD") == 0 || strcmp(name, "CoordinateSystemTransformMatrix") == 0) &&
             k->parts != (strcmp(name, "MD") == 0 ? 3 : 7)) {
    bad(error, k, "<%s> lacks one of its parts", name);
  } else if (strcmp(name, "DataArray") == 0 && (k->n_data != 1 || k->n_meta > 1)) {
    bad(error, k, "a DataArray needs one Data element (and at most one MetaData)");
  } else if (strcmp(name, "GIFTI") == 0 && k->n_arrays != k->n_declared) {
    bad(error, k, "NumberOfDataArrays is %d but %d DataArray elements follow", k->n_declared,
        k->n_arrays);
  }
}

gboolean nw_gifti_check(const char *path, const char *text, gsize len, GError **error)
{
  g_autofree char *real = realpath(path, NULL);
  g_autofree char *folder = real != NULL ? g_path_get_dirname(real) : g_strdup(".");
  Check k = {.path = path, .folder = folder, .n_declared = -1, .text = g_string_new(NULL)};
  static const GMarkupParser parser = {on_start, on_end, on_text, on_passthrough, NULL};
  GMarkupParseContext *ctx = g_markup_parse_context_new(&parser, 0, &k, NULL);
  GError *local = NULL;
  gboolean ok = g_markup_parse_context_parse(ctx, text, (gssize)len, &local) &&
                g_markup_parse_context_end_parse(ctx, &local);
  g_markup_parse_context_free(ctx);
  g_string_free(k.text, TRUE);
  g_free(k.ext_name);
  if (ok && k.n_declared < 0)
    ok = bad(&local, &k, "no <GIFTI> element");
  if (!ok) {
    /* our own messages already name the file; GMarkup's do not */
    if (local->domain == NW_ERROR)
      g_propagate_error(error, local);
    else {
      g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: not a readable GIFTI file: %s", path,
                  local->message);
      g_error_free(local);
    }
  }
  return ok;
}
