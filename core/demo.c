/* demo.c — the built-in demo case (demo.h): Colin27 from mricron-data or a generated head
 * phantom, a copy deformed by a known smooth diffeomorphism with bias and noise, the true
 * field, and the labels carried along. Any thread; CPU only (OpenMP in the warps).
 *
 * Conventions: fields are in VOXEL units of their grid (volume.h). The true field u says
 * that fixed voxel x corresponds to moving position x + u(x) (the demons convention,
 * demons_method.h: warped = moving ∘ (id + u) ≈ fixed). So the moving image is the fixed one
 * pulled back through the inverse: moving(y) = fixed(y + w(y)) with id + w = (id + u)^-1.
 *
 * The phantom is a small head, 120 x 144 x 120 mm, centred at RAS (0, 0, 0): at 1 mm a
 * 120 x 144 x 120 grid, at 2 mm 60 x 72 x 60 (nw_downsample2), small enough for tests. */
#include "demo.h"
#include "demo_private.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "atomic_file.h"
#include "field.h"
#include "io_nifti.h"
#include "nw_error.h"
#include "resample.h"

void nw_demo_options_init(NwDemoOptions *o)
{
  *o = (NwDemoOptions){.seed = 1,
                       .max_disp_mm = 4.0,
                       .noise_sigma = 0.02,
                       .bias_amplitude = 0.1,
                       .force_phantom = FALSE,
                       .templates_dir = NULL,
                       .n_terms = 3,
                       .wavelength = {0.7, 1.1},
                       .velocity = FALSE,
                       .gamma = 1.0,
                       .bias_drawn = FALSE,
                       .rician = FALSE};
}

void nw_demo_draw(NwDemoOptions *o)
{
  /* its own stream: the deformation and the noise keep theirs */
  g_autoptr(GRand) r = g_rand_new_with_seed(o->seed * 2246822519u + 0x5bd1e995u);
  o->max_disp_mm = g_rand_double_range(r, 2.0, 8.0);
  o->n_terms = g_rand_int_range(r, 2, 9);
  o->wavelength[0] = g_rand_double_range(r, 0.3, 0.7);
  o->wavelength[1] = o->wavelength[0] + 0.3;
  o->velocity = TRUE;
  o->bias_amplitude = g_rand_double_range(r, 0.0, 0.3);
  o->bias_drawn = TRUE;
  o->noise_sigma = g_rand_double_range(r, 0.005, 0.05);
  o->rician = g_rand_boolean(r);
  o->gamma = exp(g_rand_double_range(r, log(0.75), log(1.0 / 0.75)));
}

char *nw_demo_describe(const NwDemoOptions *o)
{
  return g_strdup_printf("seed=%u max_disp_mm=%.3f terms=%d wavelength=%.3f..%.3f velocity=%s "
                         "bias=%.3f bias_shape=%s noise=%.4f noise_kind=%s gamma=%.3f",
                         o->seed, o->max_disp_mm, o->n_terms, o->wavelength[0], o->wavelength[1],
                         o->velocity ? "yes" : "no", o->bias_amplitude,
                         o->bias_drawn ? "drawn" : "tilt-bowl", o->noise_sigma,
                         o->rician ? "rician" : "gaussian", o->gamma);
}

void nw_demo_case_clear(NwDemoCase *c)
{
  g_clear_pointer(&c->fixed, nw_volume_free);
  g_clear_pointer(&c->moving, nw_volume_free);
  g_clear_pointer(&c->fixed_labels, nw_volume_free);
  g_clear_pointer(&c->moving_labels, nw_volume_free);
  g_clear_pointer(&c->true_field, nw_volume_free);
}

/* ---- the phantom ------------------------------------------------------------------------ */

typedef struct {
  double c[3], r[3]; /* centre and semi-axes, mm (RAS) */
} Ellipsoid;

static gboolean inside(const Ellipsoid *e, const double p[3])
{
  double s = 0.0;
  for (int a = 0; a < 3; a++) {
    double d = (p[a] - e->c[a]) / e->r[a];
    s += d * d;
  }
  return s <= 1.0;
}

/* Intensity (T1-like, 0..255) and label of the phantom at RAS point p (mm). Labels: 1-4 grey
 * matter (left/right x anterior/posterior), 5-6 white matter left/right, 7 ventricles,
 * 8-9 deep grey nuclei left/right; 0 elsewhere. */
static void phantom_at(const double p[3], float *intensity, float *label)
{
  static const Ellipsoid scalp = {{0, 0, 0}, {58, 70, 58}}, skull = {{0, 0, 0}, {54, 66, 54}},
                         csf = {{0, 0, 0}, {50, 62, 50}}, grey = {{0, 0, 0}, {48, 60, 48}},
                         white = {{0, 0, 2}, {39, 50, 37}}, vent_l = {{-7, 2, 4}, {5, 16, 9}},
                         vent_r = {{7, 2, 4}, {5, 16, 9}}, nuc_l = {{-18, 4, -2}, {6, 9, 7}},
                         nuc_r = {{18, 4, -2}, {6, 9, 7}};
  gboolean left = p[0]<0.0, ant = p[1]> 0.0;
  *intensity = 0.0f;
  *label = 0.0f;
  if (!inside(&scalp, p))
    return;
  *intensity = 70.0f;
  if (!inside(&skull, p))
    return;
  *intensity = 15.0f;
  if (!inside(&csf, p))
    return;
  *intensity = 35.0f;
  if (!inside(&grey, p))
    return;
  if (inside(&vent_l, p) || inside(&vent_r, p)) {
    *intensity = 30.0f;
    *label = 7.0f;
  } else if (inside(&nuc_l, p) || inside(&nuc_r, p)) {
    *intensity = 125.0f;
    *label = left ? 8.0f : 9.0f;
  } else if (inside(&white, p)) {
    *intensity = 170.0f;
    *label = left ? 5.0f : 6.0f;
  } else {
    *intensity = 105.0f;
    *label = (float)(1 + (left ? 0 : 2) + (ant ? 0 : 1));
  }
}

/* Voxel -> RAS mm with the grid centred at the origin. */
static void centre_grid(NwVolume *v, double spacing)
{
  double a[16] = {spacing, 0,       0,       -0.5 * (v->nx - 1) * spacing,
                  0,       spacing, 0,       -0.5 * (v->ny - 1) * spacing,
                  0,       0,       spacing, -0.5 * (v->nz - 1) * spacing,
                  0,       0,       0,       1};
  nw_volume_set_affine(v, a);
}

static gboolean phantom_1mm(NwVolume **image, NwVolume **labels, GError **error)
{
  g_autoptr(NwVolume) img = nw_volume_new(120, 144, 120, 1, error);
  if (img == NULL)
    return FALSE;
  centre_grid(img, 1.0);
  g_autoptr(NwVolume) lab = nw_volume_new_like(img, 1, error);
  if (lab == NULL)
    return FALSE;
#pragma omp parallel for schedule(static)
  for (int k = 0; k < img->nz; k++) {
    for (int j = 0; j < img->ny; j++) {
      for (int i = 0; i < img->nx; i++) {
        double ijk[3] = {i, j, k}, p[3];
        nw_volume_voxel_to_world(img, ijk, p);
        size_t e = nw_volume_index(img, i, j, k);
        phantom_at(p, &img->data[e], &lab->data[e]);
      }
    }
  }
  *image = g_steal_pointer(&img);
  *labels = g_steal_pointer(&lab);
  return TRUE;
}

/* ---- Colin27 ---------------------------------------------------------------------------- */

static gboolean colin_1mm(const char *dir, NwVolume **image, NwVolume **labels, GError **error)
{
  g_autofree char *img_path = g_build_filename(dir, "ch2bet.nii.gz", NULL);
  g_autofree char *lab_path = g_build_filename(dir, "aal.nii.gz", NULL);
  g_autoptr(NwVolume) img = nw_nifti_read(img_path, error);
  if (img == NULL)
    return FALSE;
  g_autoptr(NwVolume) lab = nw_nifti_read(lab_path, error);
  if (lab == NULL || !nw_volume_check_same_grid(img, img_path, lab, lab_path, error))
    return FALSE;
  *image = g_steal_pointer(&img);
  *labels = g_steal_pointer(&lab);
  return TRUE;
}

static const char *templates_dir(const NwDemoOptions *o)
{
  return o->templates_dir != NULL ? o->templates_dir : NW_MRICRON_TEMPLATES;
}

static gboolean use_colin(const NwDemoOptions *o)
{
  g_autofree char *p = g_build_filename(templates_dir(o), "ch2bet.nii.gz", NULL);
  g_autofree char *q = g_build_filename(templates_dir(o), "aal.nii.gz", NULL);
  return !o->force_phantom && g_file_test(p, G_FILE_TEST_EXISTS) &&
         g_file_test(q, G_FILE_TEST_EXISTS);
}

/* Labels onto the 2 mm grid of coarse (nw_downsample2): the coarse voxel i sits at fine index
 * 2i + 0.5; nearest neighbour keeps the values integer and the label set intact. */
static NwVolume *labels_to_coarse(const NwVolume *fine, const NwVolume *coarse, GError **error)
{
  NwVolume *out = nw_volume_new_like(coarse, 1, error);
  if (out == NULL)
    return NULL;
#pragma omp parallel for schedule(static)
  for (int k = 0; k < out->nz; k++)
    for (int j = 0; j < out->ny; j++)
      for (int i = 0; i < out->nx; i++)
        out->data[nw_volume_index(out, i, j, k)] =
            nw_sample_nearest(fine, 0, 2.0 * i + 0.5, 2.0 * j + 0.5, 2.0 * k + 0.5);
  return out;
}

/* The fixed image and labels at spacing_mm (1 or 2). */
static gboolean make_source(const NwDemoOptions *o, double spacing_mm, NwDemoCase *c,
                            GError **error)
{
  NwVolume *img = NULL, *lab = NULL;
  c->is_phantom = !use_colin(o);
  if (!(c->is_phantom ? phantom_1mm(&img, &lab, error)
                      : colin_1mm(templates_dir(o), &img, &lab, error)))
    return FALSE;
  if (spacing_mm == 1.0) {
    c->fixed = img;
    c->fixed_labels = lab;
    return TRUE;
  }
  c->fixed = nw_downsample2(img, error);
  if (c->fixed != NULL)
    c->fixed_labels = labels_to_coarse(lab, c->fixed, error);
  nw_volume_free(img);
  nw_volume_free(lab);
  return c->fixed_labels != NULL;
}

/* ---- the case --------------------------------------------------------------------------- */

gboolean nw_demo_make(const NwDemoOptions *o, double spacing_mm, NwDemoCase *out, GError **error)
{
  memset(out, 0, sizeof *out);
  if (spacing_mm != 1.0 && spacing_mm != 2.0) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "demo: spacing %g mm: must be 1 or 2",
                spacing_mm);
    return FALSE;
  }
  NwVolume *inverse = NULL;
  if (!make_source(o, spacing_mm, out, error))
    goto fail;
  out->true_field = nw_volume_new_like(out->fixed, 3, error);
  if (out->true_field == NULL)
    goto fail;
  /* The field lives in voxels of this grid; its peak in mm is max_disp_mm (of the velocity,
   * when it is one: its exponential's peak is close to it). */
  if (!o->velocity) {
    nw_demo_wave_field(out->true_field, o->max_disp_mm / out->fixed->spacing_mm[0], o->seed,
                       o->n_terms, o->wavelength);
    inverse = nw_demo_invert_field(out->true_field, error);
  } else if ((inverse = nw_volume_new_like(out->fixed, 3, error)) != NULL) {
    g_autoptr(NwVolume) v = nw_volume_new_like(out->fixed, 3, error);
    if (v == NULL)
      goto fail;
    nw_demo_wave_field(v, o->max_disp_mm / out->fixed->spacing_mm[0], o->seed, o->n_terms,
                       o->wavelength);
    nw_field_exp(out->true_field, v, 1.0);
    nw_field_exp(inverse, v, -1.0);
  }
  if (inverse == NULL)
    goto fail;
  out->moving = nw_volume_new_like(out->fixed, 1, error);
  out->moving_labels = out->moving != NULL ? nw_volume_new_like(out->fixed, 1, error) : NULL;
  if (out->moving_labels == NULL)
    goto fail;
  nw_warp(out->moving, out->fixed, inverse, NW_INTERP_LINEAR);
  nw_warp(out->moving_labels, out->fixed_labels, inverse, NW_INTERP_NEAREST);
  nw_volume_free(inverse);
  nw_demo_bias_and_noise(out->moving, o);
  return TRUE;
fail:
  nw_volume_free(inverse);
  nw_demo_case_clear(out);
  g_prefix_error(error, "demo: ");
  return FALSE;
}

/* The smallest type that holds v exactly: uint8 or int16 for integer images (labels, the
 * uint8 Colin27), else float32. */
static NwDatatype storage_type(const NwVolume *v)
{
  NwVolumeStats st;
  nw_volume_stats(v, &st);
  size_t n = nw_volume_n_floats(v);
  for (size_t e = 0; e < n; e++)
    if (v->data[e] != floorf(v->data[e]))
      return NW_DT_FLOAT32;
  if (st.n_nonfinite == 0 && st.min >= 0.0f && st.max <= 255.0f)
    return NW_DT_UINT8;
  if (st.n_nonfinite == 0 && st.min >= -32768.0f && st.max <= 32767.0f)
    return NW_DT_INT16;
  return NW_DT_FLOAT32;
}

static gboolean write_case(const NwDemoCase *c, const char *dir, const char *res, GError **error)
{
  const struct {
    const char *stem;
    const NwVolume *v;
  } images[] = {{"fixed", c->fixed},
                {"moving", c->moving},
                {"fixed_labels", c->fixed_labels},
                {"moving_labels", c->moving_labels}};
  for (size_t i = 0; i < G_N_ELEMENTS(images); i++) {
    g_autofree char *name = g_strdup_printf("%s_%s.nii.gz", images[i].stem, res);
    g_autofree char *path = g_build_filename(dir, name, NULL);
    if (!nw_nifti_write(path, images[i].v, storage_type(images[i].v), FALSE, error))
      return FALSE;
  }
  g_autofree char *name = g_strdup_printf("true_field_%s.nii.gz", res);
  g_autofree char *path = g_build_filename(dir, name, NULL);
  return nw_nifti_write_field(path, c->true_field, NW_FIELD_ITK, error);
}

static char *readme_text(const NwDemoOptions *o, gboolean phantom)
{
  GString *s = g_string_new("neurowarp demo case\n===================\n\n");
  if (phantom)
    g_string_append(s, "Source: a generated head phantom (ellipsoids: scalp, skull, CSF, grey and\n"
                       "white matter, ventricles, deep grey nuclei), 120 x 144 x 120 mm centred\n"
                       "at RAS (0, 0, 0). Labels: 1-4 grey matter (L/R x anterior/posterior),\n"
                       "5-6 white matter L/R, 7 ventricles, 8-9 deep grey nuclei L/R.\n");
  else
    g_string_append_printf(s,
                           "Source: Colin27 (ch2bet.nii.gz) and its AAL labels (aal.nii.gz)\n"
                           "from mricron-data, %s.\n",
                           templates_dir(o));
  g_string_append_printf(
      s,
      "Seed: %u. Peak displacement: %g mm. Noise: %g of the 99th-percentile intensity.\n"
      "Bias: multiplicative, 1 +- %g across the head.\n",
      o->seed, o->max_disp_mm, o->noise_sigma, o->bias_amplitude);
  g_autofree char *line = nw_demo_describe(o);
  g_string_append_printf(s, "Generator options: %s\n\n", line);
  g_string_append(
      s,
      "Files, for RES in 1mm and 2mm (2mm: the 1mm image halved with Gaussian pre-smoothing,\n"
      "labels by nearest neighbour):\n"
      "  fixed_RES.nii.gz          the reference image\n"
      "  moving_RES.nii.gz         fixed deformed by the true field, with bias and noise\n"
      "  fixed_labels_RES.nii.gz   labels of fixed\n"
      "  moving_labels_RES.nii.gz  the labels deformed the same way (nearest neighbour)\n"
      "  true_field_RES.nii.gz     the true displacement u: fixed point x corresponds to\n"
      "                            moving point x + u(x), so moving warped by u is fixed.\n"
      "                            ITK/ANTs convention: 5D (X,Y,Z,1,3), intent vector, LPS mm.\n");
  return g_string_free(s, FALSE);
}

gboolean nw_demo_write(const NwDemoOptions *o, const char *dir, GError **error)
{
  return nw_demo_write_resolutions(o, dir, 0, error);
}

gboolean nw_demo_write_resolutions(const NwDemoOptions *o, const char *dir, int resolution_mm,
                                   GError **error)
{
  if (g_mkdir_with_parents(dir, 0755) != 0) {
    int err = errno;
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "%s: cannot create folder: %s", dir, g_strerror(err));
    return FALSE;
  }
  gboolean phantom = !use_colin(o);
  const struct {
    double spacing;
    const char *res;
  } levels[] = {{1.0, "1mm"}, {2.0, "2mm"}};
  for (size_t l = 0; l < G_N_ELEMENTS(levels); l++) {
    if (resolution_mm != 0 && levels[l].spacing != resolution_mm)
      continue;
    NwDemoCase c;
    if (!nw_demo_make(o, levels[l].spacing, &c, error))
      return FALSE;
    gboolean ok = write_case(&c, dir, levels[l].res, error);
    nw_demo_case_clear(&c);
    if (!ok)
      return FALSE;
  }
  g_autofree char *readme = readme_text(o, phantom);
  g_autofree char *path = g_build_filename(dir, "README.txt", NULL);
  return nw_write_file_atomically(path, readme, -1, error);
}
