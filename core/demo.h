/* demo.h — the built-in demo case, deterministic for a given seed.
 *
 * With mricron-data installed: the Colin27 brain (ch2bet.nii.gz) at 1 mm and resampled to
 * 2 mm, its AAL labels (aal.nii.gz) on the same grids, and for each resolution a "moving"
 * copy warped by a known smooth diffeomorphism (sum of a few Gaussian-windowed sines,
 * max displacement a few mm, positive Jacobian everywhere), with a smooth multiplicative
 * intensity bias and mild Gaussian noise; the true displacement field (fixed -> moving, in
 * the project's NIfTI convention) and the labels warped nearest-neighbour. Without
 * mricron-data: a generated head phantom (ellipsoid shells, ventricles, label regions) with
 * the same outputs. Any thread. */
#ifndef NW_DEMO_H
#define NW_DEMO_H

#include <glib.h>

#include "volume.h"

G_BEGIN_DECLS

/* Where Debian's mricron-data puts the template images. */
#define NW_MRICRON_TEMPLATES "/usr/share/mricron/templates"

typedef struct {
  guint32 seed;          /* noise and deformation seed; same seed -> same bytes */
  double max_disp_mm;    /* peak displacement of the synthetic deformation (default 4) */
  double noise_sigma;    /* noise std as a fraction of the robust intensity max (0.02) */
  double bias_amplitude; /* multiplicative bias 1 +- amplitude across the head (0.1) */
  gboolean force_phantom;/* ignore mricron-data (tests) */
  const char *templates_dir; /* NULL: NW_MRICRON_TEMPLATES */
  /* The deformation: n_terms Gaussian-windowed plane waves (3) of wavelengths drawn in
   * wavelength[0..1] times the smallest extent of the grid (0.7..1.1). velocity: the sum is
   * a stationary velocity integrated by scaling and squaring (a diffeomorphism at any size,
   * inverted exactly as exp(-v)) instead of the displacement itself (FALSE, the default). */
  int n_terms;
  double wavelength[2];
  gboolean velocity;
  /* The moving image's intensities: contrast I' = p99 (I / p99)^gamma (1: none); bias
   * shape drawn from the seed (a random linear-plus-quadratic map) instead of the default
   * tilt and bowl; Rician noise (the magnitude of a complex signal with Gaussian noise in
   * both parts, as MR magnitude images have) instead of Gaussian. */
  double gamma;
  gboolean bias_drawn;
  gboolean rician;
} NwDemoOptions;

void nw_demo_options_init(NwDemoOptions *o);

/* A case of the "drawn" generator: every option above except seed, the phantom and the
 * templates drawn from o->seed, over the ranges an evaluation should cover (peak
 * displacement 2..8 mm, 2..8 terms of wavelengths 0.3..1.0 of the head, bias 0..0.3 of a
 * drawn shape, noise 0.5..5 %, Gaussian or Rician, contrast gamma 0.75..1.33), the
 * deformation as a velocity. Deterministic for a seed. */
void nw_demo_draw(NwDemoOptions *o);
/* The options as one line of name=value pairs (the README, the CLI's report). Free with
 * g_free. */
char *nw_demo_describe(const NwDemoOptions *o);

/* One resolution of the demo case, all volumes on one grid. */
typedef struct {
  NwVolume *fixed, *moving;          /* scalar images */
  NwVolume *fixed_labels, *moving_labels;
  NwVolume *true_field;              /* fixed voxel x -> moving position x + u(x), voxels */
  gboolean is_phantom;
} NwDemoCase;

void nw_demo_case_clear(NwDemoCase *c);

/* spacing_mm: 1 or 2 (the Colin27 grid is 1 mm; 2 mm is a resampling of it). */
gboolean nw_demo_make(const NwDemoOptions *o, double spacing_mm, NwDemoCase *out,
                      GError **error);

/* Write the default case into dir: for res in 1mm, 2mm:
 *   fixed_<res>.nii.gz, moving_<res>.nii.gz, fixed_labels_<res>.nii.gz,
 *   moving_labels_<res>.nii.gz, true_field_<res>.nii.gz (ITK convention), and README.txt
 * naming the source and seed. Creates dir if needed. */
gboolean nw_demo_write(const NwDemoOptions *o, const char *dir, GError **error);
/* The same for one resolution only (1 or 2 mm; 0: both). */
gboolean nw_demo_write_resolutions(const NwDemoOptions *o, const char *dir, int resolution_mm,
                                   GError **error);

/* The synthetic deformation itself, exposed for tests and the demons accuracy tests:
 * fills u (nc = 3, voxel units) with a smooth field of peak magnitude max_disp_vox (the
 * default terms: 3, wavelengths 0.7..1.1 of the smallest extent). */
void nw_demo_smooth_field(NwVolume *u, double max_disp_vox, guint32 seed);

G_END_DECLS

#endif
