/* test_gui_surface.c — nlm-surface in the window (issue 13): a noisy sphere mask opened,
 * denoised on the CPU from the Run page, its zero level set meshed from the job's frames and
 * drawn in the 3D view beside the input's surface, the result saved as the CLI writes it; a
 * label volume's default label; a grey-level image refused with what to open instead. Runs
 * the application under X; skips (77) without a DISPLAY. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gui_testutil.h"
#include "io_mesh.h"
#include "io_nifti.h"
#include "testutil.h"

#define SPHERE_MM 20.0 /* radius, about the centre (49, 49, 49) of the 50^3 2-mm grid */

/* A 50^3 volume of 2 mm voxels (world = 2 * index, as nw_gui_write_constant) filled by fn. */
static void write_volume(const char *name, float (*fn)(double x, double y, double z, GRand *g))
{
  g_autoptr(NwVolume) v = nw_volume_new(50, 50, 50, 1, NULL);
  nw_volume_set_spacing(v, 2, 2, 2);
  g_autoptr(GRand) g = g_rand_new_with_seed(13);
  for (int k = 0; k < 50; k++)
    for (int j = 0; j < 50; j++)
      for (int i = 0; i < 50; i++)
        v->data[nw_volume_index(v, i, j, k)] = fn(2.0 * i, 2.0 * j, 2.0 * k, g);
  g_autofree char *path = nw_test_path(name);
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_nifti_write(path, v, NW_DT_FLOAT32, FALSE, &error));
}

static double radius(double x, double y, double z)
{
  return sqrt((x - 49.0) * (x - 49.0) + (y - 49.0) * (y - 49.0) + (z - 49.0) * (z - 49.0));
}

/* The sphere, with a third of the voxels within 3 mm of its surface flipped: a rough mask. */
static float noisy_sphere(double x, double y, double z, GRand *g)
{
  const double r = radius(x, y, z);
  const gboolean inside = r <= SPHERE_MM;
  const gboolean flip = fabs(r - SPHERE_MM) < 3.0 && g_rand_double(g) < 0.33;
  return inside != flip ? 1.0f : 0.0f;
}

/* A grey-level "MRI": a smooth brightness ramp and a brighter ball, never a whole number. */
static float grey(double x, double y, double z, GRand *g)
{
  return (float)(100.3 + 0.7 * x + 0.2 * y + (radius(x, y, z) < SPHERE_MM ? 80.0 : 0.0) +
                 g_rand_double(g));
}

/* Labels: the sphere is 5, a small box in a corner 3 (fewer voxels). */
static float labels(double x, double y, double z, GRand *g)
{
  if (radius(x, y, z) <= SPHERE_MM)
    return 5.0f;
  return x < 12 && y < 12 && z < 12 ? 3.0f : 0.0f;
}

/* "mesh: NAME: V vertices, T triangles, x A..B y C..D z E..F mm" of the layer; V. */
static int mesh_line(const char *out, const char *layer, double lo[3], double hi[3])
{
  g_autofree char *key = g_strdup_printf("mesh: %s: ", layer);
  const char *s = strstr(out, key);
  g_assert_nonnull(s);
  int v = 0, t = 0;
  g_assert_cmpint(sscanf(s + strlen(key),
                         "%d vertices, %d triangles, x %lf..%lf y %lf..%lf z "
                         "%lf..%lf mm",
                         &v, &t, &lo[0], &hi[0], &lo[1], &hi[1], &lo[2], &hi[2]),
                  ==, 8);
  g_assert_cmpint(t, >, 0);
  return v;
}

/* The live surface's peach (nw_layer.c: 0.95, 0.75, 0.55 under a head light): warm, and
 * neither the crosshair's yellow (no blue) nor a grey slice plane. */
static gboolean is_mesh_colour(const guint8 *p)
{
  return p[0] > 90 && p[0] > p[1] && p[1] > p[2] && p[2] > 0.35 * p[0] && p[0] - p[2] > 35;
}

/* Open the mask, pick nlm-surface, run 3 iterations on the CPU, look at the 3D view, save. */
static void test_denoise(void)
{
  write_volume("sphere_mask.nii.gz", noisy_sphere);
  g_autofree char *mask = nw_test_path("sphere_mask.nii.gz");
  g_autofree char *dir = nw_test_path("surface-out");
  g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
  g_autofree char *shot = g_build_filename(dir, "3d.png", NULL);
  g_autofree char *text = g_strdup_printf(
      "open %s\nmethod nlm-surface\ndevice cpu\nparam iterations 3\nparam neighbours 16\n"
      "run\nwait-iteration 1\nwait-layer surface · 1\nmesh surface · 1\nwait-state finished\n"
      "wait-layer input surface · 1\nrun-summary\nreadouts\nmesh surface · 1\n"
      "mesh input surface · 1\nlayers\nscreenshot-view axial %s/axial.png\nscreenshot %s/all.png\n"
      "view 3d\ncamera 0 0\nscreenshot-view 3d %s\nsave-results %s/out\nrun-summary\nquit\n",
      mask, dir, dir, shot, dir);
  g_autofree char *err = NULL;
  g_autofree char *out = nw_gui_run_script("denoise.txt", text, 0, &err);
  g_test_message("%s", out);
  /* ended, on the CPU, and said what it took the volume for */
  g_assert_nonnull(strstr(out, "run-summary: Finished: 3 iterations in "));
  g_assert_nonnull(strstr(out, " on the CPU\n"));
  const char *surf = strstr(out, "run-summary: Surface of sphere_mask.nii.gz as a mask: ");
  g_assert_nonnull(surf);
  int n_vertices = 0;
  double mean = 0, mean_abs = 0, largest = 0;
  g_assert_cmpint(sscanf(surf,
                         "run-summary: Surface of sphere_mask.nii.gz as a mask: %d vertices, "
                         "displacement from the input mean %lf mm (|d| %lf mm), largest %lf mm",
                         &n_vertices, &mean, &mean_abs, &largest),
                  ==, 4);
  /* the surface moved: the noise is removed, by about its size (a voxel is 2 mm) */
  g_assert_cmpfloat(mean_abs, >, 0.05);
  g_assert_cmpfloat(largest, <, 6.0);
  /* live frames were published and shown: the mesh came from them while the job ran */
  int shown = -1;
  unsigned frames = 0;
  const char *ro = strstr(out, "readouts: iteration 3 · ");
  g_assert_nonnull(ro);
  g_assert_cmpint(sscanf(strstr(ro, "shown "), "shown %d · frames %u", &shown, &frames), ==, 2);
  g_assert_cmpint(shown, ==, 3);
  g_assert_cmpuint(frames, >=, 1);
  /* the live mesh lies on the sphere (radius 20 mm about 49 mm), and the final one too; it
   * differs from the noisy input's, which stays in the scene for comparison */
  double lo[3], hi[3];
  const char *first = strstr(out, "mesh: surface · 1: ");
  mesh_line(first, "surface · 1", lo, hi);
  const char *last = strstr(first + 1, "mesh: surface · 1: ");
  g_assert_nonnull(last);
  const int v_final = mesh_line(last, "surface · 1", lo, hi);
  for (int a = 0; a < 3; a++) {
    g_assert_cmpfloat(fabs(lo[a] - (49.0 - SPHERE_MM)), <, 3.0);
    g_assert_cmpfloat(fabs(hi[a] - (49.0 + SPHERE_MM)), <, 3.0);
  }
  const int v_input = mesh_line(out, "input surface · 1", lo, hi);
  g_assert_cmpint(v_final, !=, v_input);
  g_assert_cmpint(v_final, ==, n_vertices); /* the summary's mesh is the shown one */
  /* the 3D view, 400 px, from posterior: the box's 100 mm fill ~270 px, so the sphere's
   * outline has a radius of ~54 px about the centre; its colour well inside that (the octant
   * facing the eye is cut open: the slice planes show there), none beyond 70 px */
  NwImage im;
  nw_image_load(&im, shot);
  int in_sphere = 0, outside = 0, n_in = 0;
  const double c = im.w / 2.0, r_px = 40.0;
  for (int y = 0; y < im.h; y++)
    for (int x = 0; x < im.w; x++) {
      const double d = hypot(x - c, y - im.h / 2.0);
      const gboolean mesh = is_mesh_colour(nw_image_at(&im, x, y));
      if (d < r_px)
        n_in++, in_sphere += mesh;
      else if (d > 70.0)
        outside += mesh;
    }
  g_test_message("3d: %d of %d mesh pixels in the sphere, %d far out", in_sphere, n_in, outside);
  g_assert_cmpint(in_sphere, >, n_in / 3);
  g_assert_cmpint(outside, ==, 0);
  nw_image_clear(&im);
  /* its contour in the axial view (400 px, 0.26 mm a pixel): a ring at ~77 px, the sphere's
   * 20 mm, over the mask's noisy edge; none in the middle or far out */
  g_autofree char *axial = g_build_filename(dir, "axial.png", NULL);
  nw_image_load(&im, axial);
  int ring = 0, off_ring = 0;
  for (int y = 0; y < im.h; y++)
    for (int x = 0; x < im.w; x++) {
      const double d = hypot(x - im.w / 2.0, y - im.h / 2.0);
      const gboolean line = is_mesh_colour(nw_image_at(&im, x, y));
      ring += line && d > 65 && d < 90;
      off_ring += line && (d < 50 || (d > 110 && d < 180));
    }
  g_test_message("axial: %d contour pixels on the ring, %d off it", ring, off_ring);
  g_assert_cmpint(ring, >, 150);
  g_assert_cmpint(off_ring, <, 5);
  nw_image_clear(&im);
  /* saved as neurowarp-cli denoise-surface writes them, and read back */
  g_autofree char *saved =
      g_strdup_printf("run-summary: Saved 2 files in %s: out_sdf.nii.gz, out_surface.gii\n", dir);
  g_assert_nonnull(strstr(out, saved));
  g_autofree char *sdf_path = g_build_filename(dir, "out_sdf.nii.gz", NULL);
  g_autofree char *mesh_path = g_build_filename(dir, "out_surface.gii", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(NwVolume) sdf = nw_nifti_read(sdf_path, &error);
  g_assert_no_error(error);
  g_assert_cmpfloat(sdf->data[nw_volume_index(sdf, 24, 24, 24)], <, -SPHERE_MM + 4.0);
  g_assert_cmpfloat(sdf->data[nw_volume_index(sdf, 0, 0, 0)], >, 20.0);
  g_autoptr(NwSurface) s = nw_mesh_read(mesh_path, &error);
  g_assert_no_error(error);
  g_assert_cmpint(s->n_vertices, ==, n_vertices);
  g_assert_nonnull(s->scalars); /* each vertex's displacement from the input, as the CLI's */
  g_assert_null(strstr(err, "CRITICAL"));
}

/* A label volume (its name says so): auto takes the label with the most voxels; a label
 * that is not there is refused with the labels that are. */
static void test_labels(void)
{
  write_volume("sphere_labels.nii.gz", labels);
  g_autofree char *path = nw_test_path("sphere_labels.nii.gz");
  g_autofree char *text = g_strdup_printf(
      "open %s\nmethod nlm-surface\ndevice cpu\nparam iterations 1\nparam neighbours 8\n"
      "param patch 3\nrun\nwait-state finished\nrun-summary\nsurface-label 9\naction win.run\n"
      "run-summary\nquit\n",
      path);
  g_autofree char *out = nw_gui_run_script("labels.txt", text, 0, NULL);
  g_test_message("%s", out);
  g_assert_nonnull(
      strstr(out, "run-summary: Surface of sphere_labels.nii.gz, label 5 (the largest): "));
  g_assert_nonnull(strstr(out, "run-summary: Not started: run 1: sphere_labels.nii.gz: label 9 "
                               "is not in the volume (labels there: "));
}

/* A grey-level image cannot be a level set: the Run page says so and what to open. */
static void test_grey_refused(void)
{
  write_volume("t1.nii.gz", grey);
  g_autofree char *path = nw_test_path("t1.nii.gz");
  g_autofree char *text = g_strdup_printf(
      "open %s\nmethod nlm-surface\naction win.run\nrun-summary\nlayers\nquit\n", path);
  g_autofree char *err = NULL;
  g_autofree char *out = nw_gui_run_script("grey.txt", text, 0, &err);
  g_test_message("%s", out);
  g_assert_nonnull(strstr(out, "run-summary: Not started: run 1: t1.nii.gz: neither a mask (0 "
                               "and one other value) nor a signed distance"));
  g_assert_nonnull(strstr(out, "a grey-level image such as an MRI is none of these: open a "
                               "binary mask, a label volume or a signed distance"));
  g_assert_null(strstr(out, "surface · 1"));       /* nothing started */
  g_assert_nonnull(strstr(err, "neither a mask")); /* the error bar's message, on stderr */
}

int main(int argc, char **argv)
{
  if (!nw_gui_test_init(&argc, &argv))
    return NW_TEST_SKIP;
  g_test_add_func("/gui/denoise", test_denoise);
  g_test_add_func("/gui/labels", test_labels);
  g_test_add_func("/gui/grey-refused", test_grey_refused);
  return g_test_run();
}
