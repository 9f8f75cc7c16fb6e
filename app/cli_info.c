/* cli_info.c — `neurowarp-cli info FILE...`: header, geometry and intensity summary of NIfTI
 * volumes (NIfTI-1/2, including 4D and 5D vector fields) and 2D images, and size, extent and
 * per-vertex values of surfaces (GIFTI as neurowarp writes it, FreeSurfer, VTK, PLY, OBJ),
 * as text or one JSON object per file. Main thread; CPU only (no method, no job). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli_common.h"
#include "io_image.h"
#include "io_mesh.h"
#include "io_nifti.h"
#include "json_out.h"
#include "nw_error.h"

typedef struct {
  const char *path;
  char format[16]; /* "NIfTI-1", "NIfTI-2", "PNG", "PNM", "TIFF" */
  gboolean is_nifti;
  NwNiftiInfo hdr; /* NIfTI only */
  NwVolume *vol;   /* voxels as read (float) */
  NwVolumeStats stats;
  char orient[4];
} InfoRecord;

/* The names of the NIfTI-1 intent codes (nifti1.h), for humans. */
static const char *intent_label(int code)
{
  static const struct {
    int code;
    const char *name;
  } names[] = {{0, "none"},
               {2, "correlation"},
               {3, "t-test"},
               {4, "F-test"},
               {5, "z-score"},
               {6, "chi-squared"},
               {1001, "estimate"},
               {1002, "label"},
               {1003, "neuroname"},
               {1004, "general matrix"},
               {1005, "symmetric matrix"},
               {1006, "displacement vector"},
               {1007, "vector"},
               {1008, "point set"},
               {1009, "triangle"},
               {1010, "quaternion"},
               {1011, "dimensionless"},
               {2001, "time series"},
               {2002, "node index"},
               {2003, "RGB vector"},
               {2004, "RGBA vector"},
               {2005, "shape"}};
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++)
    if (names[i].code == code)
      return names[i].name;
  return "other";
}

static const char *xform_label(int code)
{
  static const char *const names[] = {"unknown", "scanner", "aligned", "talairach", "mni"};
  return code >= 0 && code <= 4 ? names[code] : "other";
}

/* The 2D formats io_image.c reads, by their magic bytes. */
static void image_format(const char *path, char format[16])
{
  unsigned char magic[4] = {0};
  FILE *f = fopen(path, "rb");
  size_t n = f != NULL ? fread(magic, 1, sizeof magic, f) : 0;
  if (f != NULL)
    fclose(f);
  if (n >= 4 && memcmp(magic, "\x89PNG", 4) == 0)
    g_strlcpy(format, "PNG", 16);
  else if (n >= 2 && magic[0] == 'P')
    g_strlcpy(format, "PNM", 16);
  else
    g_strlcpy(format, "TIFF", 16);
}

static gboolean load_record(InfoRecord *r, GError **error)
{
  if (!g_file_test(r->path, G_FILE_TEST_EXISTS)) {
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "%s: no such file", r->path);
    return FALSE;
  }
  if (nw_image_is_2d_file(r->path)) {
    image_format(r->path, r->format);
    r->vol = nw_volume_read_any(r->path, error);
  } else {
    r->is_nifti = TRUE;
    if (!nw_nifti_read_info(r->path, &r->hdr, error))
      return FALSE;
    g_snprintf(r->format, sizeof r->format, "NIfTI-%d", r->hdr.nifti_version);
    /* 5D files are displacement fields (ITK/ANTs layout); 4D are read as multi-component. */
    r->vol = r->hdr.ndim >= 5 ? nw_nifti_read_field(r->path, error)
                              : nw_nifti_read_multi(r->path, error);
  }
  if (r->vol == NULL)
    return FALSE;
  nw_volume_stats(r->vol, &r->stats);
  nw_volume_orientation_code(r->vol, r->orient);
  return TRUE;
}

static void print_text(const InfoRecord *r)
{
  const NwVolume *v = r->vol;
  printf("%s\n", r->path);
  printf("  format       %s\n", r->format);
  if (r->is_nifti) {
    printf("  dims         %" G_GINT64_FORMAT, r->hdr.dim[1]);
    for (int d = 2; d <= r->hdr.ndim && d <= 7; d++)
      printf(" x %" G_GINT64_FORMAT, r->hdr.dim[d]);
    printf("\n");
  } else {
    printf("  dims         %d x %d x %d\n", v->nx, v->ny, v->nz);
  }
  printf("  spacing      %g x %g x %g mm\n", v->spacing_mm[0], v->spacing_mm[1], v->spacing_mm[2]);
  printf("  orientation  %s\n", r->orient);
  if (r->is_nifti) {
    printf("  datatype     %s (code %d)\n", r->hdr.datatype_name, r->hdr.datatype_code);
    if (r->hdr.scl_slope != 0.0 && (r->hdr.scl_slope != 1.0 || r->hdr.scl_inter != 0.0))
      printf("  scaling      slope %g, intercept %g\n", r->hdr.scl_slope, r->hdr.scl_inter);
  }
  printf("  intensity    min %g  max %g  mean %.6g  non-finite %zu%s\n", r->stats.min, r->stats.max,
         r->stats.mean, r->stats.n_nonfinite,
         r->is_nifti && r->hdr.ndim >= 5 ? "  (field components, voxel units)" : "");
  if (r->is_nifti) {
    printf("  intent       %d (%s)%s%s%s\n", r->hdr.intent_code, intent_label(r->hdr.intent_code),
           r->hdr.intent_name[0] ? " name '" : "", r->hdr.intent_name,
           r->hdr.intent_name[0] ? "'" : "");
    printf("  sform_code   %d (%s)\n", r->hdr.sform_code, xform_label(r->hdr.sform_code));
    printf("  qform_code   %d (%s)\n", r->hdr.qform_code, xform_label(r->hdr.qform_code));
  }
  for (int row = 0; row < 4; row++)
    printf("  %-12s %10.4f %10.4f %10.4f %10.4f\n", row == 0 ? "vox_to_ras" : "",
           v->vox_to_ras[row * 4], v->vox_to_ras[row * 4 + 1], v->vox_to_ras[row * 4 + 2],
           v->vox_to_ras[row * 4 + 3]);
  if (r->is_nifti && r->hdr.description[0] != '\0')
    printf("  description  %s\n", r->hdr.description);
}

static void json_numbers(JsonBuilder *b, const char *key, const double *v, int n)
{
  if (key != NULL)
    json_builder_set_member_name(b, key);
  json_builder_begin_array(b);
  for (int i = 0; i < n; i++)
    nw_json_add_number(b, v[i]);
  json_builder_end_array(b);
}

static void print_json(const InfoRecord *r)
{
  const NwVolume *v = r->vol;
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  nw_json_member_string(b, "path", r->path);
  nw_json_member_string(b, "format", r->format);
  double dims[7] = {v->nx, v->ny, v->nz};
  int ndim = 3;
  if (r->is_nifti) {
    ndim = MIN(r->hdr.ndim, 7);
    for (int d = 0; d < ndim; d++)
      dims[d] = (double)r->hdr.dim[d + 1];
  }
  json_numbers(b, "dims", dims, ndim);
  double spacing[3] = {v->spacing_mm[0], v->spacing_mm[1], v->spacing_mm[2]};
  json_numbers(b, "spacing_mm", spacing, 3);
  nw_json_member_string(b, "orientation", r->orient);
  json_builder_set_member_name(b, "datatype");
  if (r->is_nifti)
    nw_json_add_string(b, r->hdr.datatype_name);
  else
    json_builder_add_null_value(b); /* 2D images: io_image.h does not report the bit depth */
  nw_json_member_number(b, "min", r->stats.min);
  nw_json_member_number(b, "max", r->stats.max);
  nw_json_member_number(b, "mean", r->stats.mean);
  nw_json_member_number(b, "n_nonfinite", (double)r->stats.n_nonfinite);
  if (r->is_nifti) {
    nw_json_member_number(b, "nifti_version", r->hdr.nifti_version);
    nw_json_member_number(b, "datatype_code", r->hdr.datatype_code);
    nw_json_member_number(b, "scl_slope", r->hdr.scl_slope);
    nw_json_member_number(b, "scl_inter", r->hdr.scl_inter);
    nw_json_member_number(b, "intent_code", r->hdr.intent_code);
    nw_json_member_number(b, "sform_code", r->hdr.sform_code);
    nw_json_member_number(b, "qform_code", r->hdr.qform_code);
    nw_json_member_string(b, "intent", intent_label(r->hdr.intent_code));
    nw_json_member_string(b, "intent_name", r->hdr.intent_name);
    nw_json_member_string(b, "description", r->hdr.description);
  }
  json_builder_set_member_name(b, "vox_to_ras");
  json_builder_begin_array(b);
  for (int row = 0; row < 4; row++)
    json_numbers(b, NULL, &v->vox_to_ras[row * 4], 4);
  json_builder_end_array(b);
  json_builder_end_object(b);
  g_autofree char *text = nw_json_to_string(b, FALSE);
  printf("%s\n", text);
}

/* ---- surfaces ---- */

/* Finite per-vertex values' range; FALSE without values. */
static gboolean scalar_range(const NwSurface *s, double *lo, double *hi)
{
  *lo = G_MAXDOUBLE, *hi = -G_MAXDOUBLE;
  for (int i = 0; s->scalars != NULL && i < s->n_vertices; i++)
    if (isfinite(s->scalars[i]))
      *lo = MIN(*lo, s->scalars[i]), *hi = MAX(*hi, s->scalars[i]);
  return *lo <= *hi;
}

static gboolean info_mesh(const char *path, gboolean json, GError **error)
{
  g_autoptr(NwSurface) s = nw_mesh_read(path, error);
  if (s == NULL)
    return FALSE;
  const char *format = nw_mesh_format_name(nw_mesh_format_from_name(path));
  float lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  if (s->n_vertices > 0)
    nw_surface_bounds(s, lo, hi);
  double smin, smax;
  const gboolean has_scalars = scalar_range(s, &smin, &smax);
  if (!json) {
    printf("%s\n  format       %s surface\n  vertices     %d\n  triangles    %d\n", path, format,
           s->n_vertices, s->n_triangles);
    printf("  extent       x %.2f .. %.2f  y %.2f .. %.2f  z %.2f .. %.2f mm (RAS)\n", lo[0], hi[0],
           lo[1], hi[1], lo[2], hi[2]);
    if (has_scalars)
      printf("  scalars      min %g  max %g (one per vertex)\n", smin, smax);
    else
      printf("  scalars      none\n");
    return TRUE;
  }
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  nw_json_member_string(b, "path", path);
  nw_json_member_string(b, "format", format);
  nw_json_member_string(b, "kind", "surface");
  nw_json_member_number(b, "n_vertices", s->n_vertices);
  nw_json_member_number(b, "n_triangles", s->n_triangles);
  const double dlo[3] = {lo[0], lo[1], lo[2]}, dhi[3] = {hi[0], hi[1], hi[2]};
  json_numbers(b, "extent_min_mm", dlo, 3);
  json_numbers(b, "extent_max_mm", dhi, 3);
  json_builder_set_member_name(b, "scalars");
  if (has_scalars) {
    const double range[2] = {smin, smax};
    json_numbers(b, NULL, range, 2);
  } else {
    json_builder_add_null_value(b);
  }
  json_builder_end_object(b);
  g_autofree char *text = nw_json_to_string(b, FALSE);
  printf("%s\n", text);
  return TRUE;
}

static const char info_description[] =
    "For each file: format and version, dimensions, voxel spacing (mm), orientation code\n"
    "(the world direction of each voxel axis, e.g. RAS or LPI), datatype, intensity range\n"
    "(min, max and mean of finite voxels, count of NaN/Inf), intent, sform/qform codes and\n"
    "the voxel-to-RAS affine (sform, else qform, else pixdim). For surfaces (.gii, .vtk,\n"
    ".ply, .obj, FreeSurfer lh.pial & co.): format, vertices, triangles, extent in RAS mm\n"
    "and the range of per-vertex values.\n\n"
    "Examples:\n"
    "  neurowarp-cli info /usr/share/mricron/templates/ch2bet.nii.gz\n"
    "  neurowarp-cli info --json fixed.nii.gz moving.nii.gz slice.png\n"
    "  neurowarp-cli info run_surface.gii\n";

int nw_cli_info(int argc, char **argv)
{
  gboolean json = FALSE;
  GOptionEntry entries[] = {
      {"json", 0, 0, G_OPTION_ARG_NONE, &json, "One JSON object per file on stdout", NULL}, {NULL}};
  g_autoptr(GOptionContext) ctx = nw_cli_context_new(
      "FILE...", "Describe NIfTI volumes, 2D images and surfaces.", info_description);
  g_option_context_add_main_entries(ctx, entries, NULL);
  int code = NW_CLI_EXIT_OK;
  if (!nw_cli_parse(ctx, "info", &argc, &argv, &code))
    return code;
  if (argc < 2)
    return nw_cli_usage("info", "missing FILE");

  for (int i = 1; i < argc; i++) {
    InfoRecord r = {.path = argv[i]};
    g_autoptr(GError) error = NULL;
    if (nw_mesh_format_from_name(argv[i]) != NW_MESH_AUTO) {
      if (info_mesh(argv[i], json, &error))
        fflush(stdout);
      else
        code = nw_cli_fail(error);
    } else if (load_record(&r, &error)) {
      if (json)
        print_json(&r);
      else
        print_text(&r);
      fflush(stdout);
    } else {
      code = nw_cli_fail(error);
    }
    nw_volume_free(r.vol);
  }
  return code;
}
