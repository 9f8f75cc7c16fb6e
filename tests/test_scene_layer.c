/* test_scene_layer.c — the scene layer (scene/) without a display: layer defaults and ranges,
 * window presets, values under a point, the scene's compare pair and bounds, the setters and
 * who emits what, the field display rule, and what the loader makes of each kind of file
 * (image, label map, displacement field, mesh, junk). */
#include <math.h>
#include <string.h>

#include "io_mesh.h"
#include "io_nifti.h"
#include "nw_error.h"
#include "nw_label_table.h"
#include "nw_layer.h"
#include "nw_layer_readout.h"
#include "nw_loader.h"
#include "nw_scene.h"
#include "nw_view_overlay.h"
#include "testutil.h"

/* 20^3 voxels of 1 mm: background 0 in the outer shell, value 10 + i inside. */
static NwVolume *ramp(void)
{
  NwVolume *v = nw_volume_new(20, 20, 20, 1, NULL);
  for (int k = 0; k < 20; k++)
    for (int j = 0; j < 20; j++)
      for (int i = 0; i < 20; i++) {
        gboolean inside = i >= 2 && i < 18 && j >= 2 && j < 18 && k >= 2 && k < 18;
        v->data[nw_volume_index(v, i, j, k)] = inside ? 10.0f + i : 0.0f;
      }
  return v;
}

static void test_layer_ranges_and_presets(void)
{
  g_autoptr(NwLayer) l = nw_layer_new_volume(NW_LAYER_IMAGE, "ramp", ramp());
  const NwLayerStyle *st = nw_layer_get_style(l);
  float lo, hi;
  nw_layer_get_data_range(l, &lo, &hi);
  g_assert_cmpfloat(lo, ==, 0.0f);
  g_assert_cmpfloat(hi, ==, 27.0f);
  /* auto range: percentiles of the non-zero voxels, with the background kept black */
  nw_layer_get_auto_window(l, &lo, &hi);
  g_assert_cmpfloat(lo, ==, 0.0f);
  g_assert_cmpfloat(hi, ==, 27.0f);
  g_assert_cmpfloat(st->hi, ==, hi);
  g_assert_cmpint(st->colormap, ==, NW_COLORMAP_GREY);
  g_assert_true(nw_layer_apply_window_preset(l, "ct-brain"));
  g_assert_cmpfloat(st->lo, ==, 0.0f);
  g_assert_cmpfloat(st->hi, ==, 80.0f);
  g_assert_true(nw_layer_apply_window_preset(l, "full"));
  g_assert_cmpfloat(st->hi, ==, 27.0f);
  g_assert_false(nw_layer_apply_window_preset(l, "lung"));
  nw_layer_set_window_level(l, 10.0, 20.0);
  g_assert_cmpfloat(st->lo, ==, 15.0f);
  g_assert_cmpfloat(st->hi, ==, 25.0f);
  /* trilinear value at a voxel centre and between two */
  double v, ras[3] = {5.0, 5.0, 5.0};
  g_assert_true(nw_layer_value_at(l, ras, &v));
  g_assert_cmpfloat_with_epsilon(v, 15.0, 1e-5);
  ras[0] = 5.5;
  g_assert_true(nw_layer_value_at(l, ras, &v));
  g_assert_cmpfloat_with_epsilon(v, 15.5, 1e-5);
  ras[0] = 25.0;
  g_assert_false(nw_layer_value_at(l, ras, &v));
}

static void test_constant_and_field_layers(void)
{
  NwVolume *c = nw_volume_new(4, 4, 4, 1, NULL);
  for (size_t i = 0; i < nw_volume_n_voxels(c); i++)
    c->data[i] = 100.0f;
  g_autoptr(NwLayer) lc = nw_layer_new_volume(NW_LAYER_IMAGE, "c", c);
  g_assert_cmpfloat(nw_layer_get_style(lc)->lo, ==, 0.0f); /* shown white against zero */
  g_assert_cmpfloat(nw_layer_get_style(lc)->hi, ==, 100.0f);

  NwVolume *u = nw_volume_new(4, 4, 4, 3, NULL);
  nw_volume_set_spacing(u, 2, 2, 2);
  for (size_t i = 0; i < nw_volume_n_voxels(u); i++)
    u->data[i * 3] = 3.0f, u->data[i * 3 + 1] = 4.0f;
  g_autoptr(NwLayer) lf = nw_layer_new_volume(NW_LAYER_FIELD, "u", u);
  /* |u| in mm: (3, 4) voxels of 2 mm = 10 mm */
  float lo, hi;
  nw_layer_get_data_range(lf, &lo, &hi);
  g_assert_cmpfloat_with_epsilon(hi, 10.0, 1e-4);
  double v, ras[3] = {2, 2, 2};
  g_assert_true(nw_layer_value_at(lf, ras, &v));
  g_assert_cmpfloat_with_epsilon(v, 10.0, 1e-4);
  NwFieldShow s;
  g_assert_true(nw_field_show_from_name("log-jacobian", &s));
  g_assert_cmpint(s, ==, NW_FIELD_SHOW_LOG_JACOBIAN);
}

static void test_scene(void)
{
  g_autoptr(NwScene) s = nw_scene_new();
  double lo[3], hi[3], c[3];
  nw_scene_get_bounds(s, lo, hi);
  g_assert_cmpfloat(lo[0], ==, -100.0);
  NwVolume *v = ramp();
  nw_volume_set_spacing(v, 2, 1, 1);
  g_autoptr(NwLayer) a = nw_layer_new_volume(NW_LAYER_IMAGE, "a", v);
  g_autoptr(NwLayer) lab = nw_layer_new_volume(NW_LAYER_LABELS, "lab", ramp());
  g_autoptr(NwLayer) b = nw_layer_new_volume(NW_LAYER_IMAGE, "b", ramp());
  nw_scene_add_layer(s, a);
  nw_scene_add_layer(s, lab);
  nw_scene_add_layer(s, b);
  /* the first two images are compared, the first layer is active */
  g_assert_true(nw_scene_get_compare_a(s) == a);
  g_assert_true(nw_scene_get_compare_b(s) == b);
  g_assert_true(nw_scene_get_active(s) == a);
  g_assert_true(nw_scene_comparing(s));
  nw_layer_set_visible(b, FALSE);
  g_assert_false(nw_scene_comparing(s));
  g_assert_true(nw_scene_find_layer(s, "lab") == lab);
  /* the crosshair starts at the first volume's centre; bounds are the union */
  nw_scene_get_crosshair(s, c);
  g_assert_cmpfloat_with_epsilon(c[0], 19.0, 1e-9);
  g_assert_cmpfloat_with_epsilon(c[1], 9.5, 1e-9);
  nw_scene_get_bounds(s, lo, hi);
  g_assert_cmpfloat_with_epsilon(lo[0], -1.0, 1e-9);
  g_assert_cmpfloat_with_epsilon(hi[0], 39.0, 1e-9);
  g_assert_cmpfloat_with_epsilon(nw_scene_slice_step(s, 0), 2.0, 1e-9);
  nw_scene_remove_layer(s, a);
  g_assert_null(nw_scene_get_compare_a(s));
  g_assert_cmpuint(nw_scene_n_layers(s), ==, 2);
}

/* A scene is flat (2D) while it holds volumes and every one is a single slice: not empty,
 * not with a volume of several slices, not with a surface. */
static void test_scene_flat(void)
{
  g_autoptr(NwScene) s = nw_scene_new();
  g_assert_false(nw_scene_is_flat(s));
  g_autoptr(NwLayer) a = nw_layer_new_volume(NW_LAYER_IMAGE, "a", nw_volume_new(8, 6, 1, 1, NULL));
  g_autoptr(NwLayer) u = nw_layer_new_volume(NW_LAYER_FIELD, "u", nw_volume_new(8, 6, 1, 3, NULL));
  nw_scene_add_layer(s, a);
  nw_scene_add_layer(s, u);
  g_assert_true(nw_scene_is_flat(s));
  g_autoptr(NwLayer) vol = nw_layer_new_volume(NW_LAYER_IMAGE, "vol", ramp());
  nw_scene_add_layer(s, vol);
  g_assert_false(nw_scene_is_flat(s));
  nw_scene_remove_layer(s, vol);
  g_assert_true(nw_scene_is_flat(s));
  g_autoptr(NwLayer) mesh = nw_layer_new_surface("mesh", nw_surface_new(0, 0, NULL));
  nw_scene_add_layer(s, mesh);
  g_assert_false(nw_scene_is_flat(s));
}

typedef struct {
  int changed, layers_changed, layer_changed;
  NwLayer *last;
} Signals;

static void on_changed(NwScene *s, Signals *n)
{
  n->changed++;
}

static void on_layers_changed(NwScene *s, Signals *n)
{
  n->layers_changed++;
}

static void on_layer_changed(NwScene *s, NwLayer *l, Signals *n)
{
  n->layer_changed++;
  n->last = l;
}

/* One setter per setting: the layer announces a change (only a change), the scene passes it
 * on; new data are not announced; the scene's own setters emit; a removed layer is no longer
 * heard. */
static void test_setters_and_signals(void)
{
  g_autoptr(NwScene) s = nw_scene_new();
  g_autoptr(NwLayer) a = nw_layer_new_volume(NW_LAYER_IMAGE, "a", ramp());
  g_autoptr(NwLayer) b = nw_layer_new_volume(NW_LAYER_IMAGE, "b", ramp());
  nw_scene_add_layer(s, a);
  nw_scene_add_layer(s, b);
  Signals n = {0};
  g_signal_connect(s, "changed", G_CALLBACK(on_changed), &n);
  g_signal_connect(s, "layers-changed", G_CALLBACK(on_layers_changed), &n);
  g_signal_connect(s, "layer-changed", G_CALLBACK(on_layer_changed), &n);

  nw_layer_set_visible(b, FALSE);
  g_assert_cmpint(n.layer_changed, ==, 1);
  g_assert_true(n.last == b);
  g_assert_cmpint(n.changed, ==, 1);
  nw_layer_set_visible(b, FALSE); /* no change, no signal */
  nw_layer_set_opacity(a, nw_layer_get_style(a)->opacity);
  g_assert_cmpint(n.layer_changed, ==, 1);
  nw_layer_set_opacity(a, 0.5f);
  nw_layer_set_colormap(a, NW_COLORMAP_HOT);
  nw_layer_set_range(a, 1.0f, 2.0f);
  nw_layer_set_grid_step(a, 7);
  g_assert_cmpint(n.layer_changed, ==, 5);
  g_assert_true(n.last == a);
  const NwLayerStyle *st = nw_layer_get_style(a);
  g_assert_cmpfloat(st->opacity, ==, 0.5f);
  g_assert_cmpint(st->colormap, ==, NW_COLORMAP_HOT);
  g_assert_cmpfloat(st->lo, ==, 1.0f);
  g_assert_cmpfloat(st->hi, ==, 2.0f);
  g_assert_cmpint(nw_layer_get_grid_step(a), ==, 7);
  g_assert_true(nw_layer_apply_window_preset(a, "auto"));
  g_assert_cmpint(n.layer_changed, ==, 6);
  g_assert_cmpint(n.changed, ==, 6);
  g_assert_cmpint(n.layers_changed, ==, 0);

  /* new data: the generation moves, nothing is emitted (the owner asks for the redraw) */
  const guint gen = nw_layer_get_generation(a);
  nw_layer_take_volume(a, ramp());
  g_assert_cmpuint(nw_layer_get_generation(a), ==, gen + 1);
  g_assert_cmpint(n.changed, ==, 6);

  /* the scene's settings */
  nw_scene_set_compare_pair(s, b, a);
  g_assert_cmpint(n.layers_changed, ==, 1);
  nw_scene_set_compare_pair(s, b, a);
  g_assert_cmpint(n.layers_changed, ==, 1);
  nw_scene_set_compare_mode(s, NW_COMPARE_CURTAIN);
  g_assert_cmpint(n.layers_changed, ==, 2);
  NwCompareStyle c = *nw_scene_get_compare(s);
  c.curtain = 0.25f;
  const int changed = n.changed;
  nw_scene_set_compare(s, &c);
  g_assert_cmpfloat(nw_scene_get_compare(s)->curtain, ==, 0.25f);
  g_assert_cmpint(n.changed, ==, changed + 1);
  g_assert_cmpint(nw_scene_get_compare(s)->mode, ==, NW_COMPARE_CURTAIN);

  /* a removed layer is not heard any more */
  nw_scene_remove_layer(s, b);
  const int heard = n.layer_changed;
  nw_layer_set_visible(b, TRUE);
  g_assert_cmpint(n.layer_changed, ==, heard);
}

/* The one display rule of fields: magnitude in hot over 0..max |u|; the log-Jacobian in the
 * diverging map over a symmetric range that holds log det J, rounded up to 0.05. */
static void test_field_display_rule(void)
{
  /* u = 0.1 (x - c) in voxels: det J = 1.1^3 everywhere, log det J = 0.286 -> +-0.30 */
  NwVolume *u = nw_volume_new(10, 10, 10, 3, NULL);
  for (int k = 0; k < 10; k++)
    for (int j = 0; j < 10; j++)
      for (int i = 0; i < 10; i++) {
        float *p = u->data + 3 * nw_volume_index(u, i, j, k);
        p[0] = 0.1f * (i - 4.5f), p[1] = 0.1f * (j - 4.5f), p[2] = 0.1f * (k - 4.5f);
      }
  g_autoptr(NwLayer) f = nw_layer_new_volume(NW_LAYER_FIELD, "u", u);
  float lo, hi;
  nw_layer_get_data_range(f, &lo, &hi);
  nw_layer_set_field_show(f, NW_FIELD_SHOW_MAGNITUDE);
  g_assert_cmpint(nw_layer_get_style(f)->colormap, ==, NW_COLORMAP_HOT);
  g_assert_cmpfloat(nw_layer_get_style(f)->lo, ==, 0.0f);
  g_assert_cmpfloat(nw_layer_get_style(f)->hi, ==, hi);
  nw_layer_set_field_show(f, NW_FIELD_SHOW_LOG_JACOBIAN);
  g_assert_cmpint(nw_layer_get_field_show(f), ==, NW_FIELD_SHOW_LOG_JACOBIAN);
  g_assert_cmpint(nw_layer_get_style(f)->colormap, ==, NW_COLORMAP_DIVERGING);
  g_assert_cmpfloat_with_epsilon(nw_layer_get_style(f)->lo, -0.30, 1e-6);
  g_assert_cmpfloat_with_epsilon(nw_layer_get_style(f)->hi, 0.30, 1e-6);
  /* grid and arrows keep the colours and range */
  nw_layer_set_field_show(f, NW_FIELD_SHOW_ARROWS);
  g_assert_cmpint(nw_layer_get_style(f)->colormap, ==, NW_COLORMAP_DIVERGING);
  /* a zero field: the magnitude range stays above zero */
  g_autoptr(NwLayer) z =
      nw_layer_new_volume(NW_LAYER_FIELD, "zero", nw_volume_new(4, 4, 4, 3, NULL));
  nw_layer_set_field_show(z, NW_FIELD_SHOW_MAGNITUDE);
  g_assert_cmpfloat(nw_layer_get_style(z)->hi, ==, 1e-3f);
  nw_layer_set_field_show(z, NW_FIELD_SHOW_LOG_JACOBIAN);
  g_assert_cmpfloat(nw_layer_get_style(z)->hi, ==, 0.05f);
}

static void test_loader_kinds(void)
{
  g_autoptr(GError) error = NULL;
  /* a label map: whole numbers and a telling name */
  g_autoptr(NwVolume) labels = nw_volume_new(8, 8, 8, 1, NULL);
  for (size_t i = 0; i < nw_volume_n_voxels(labels); i++)
    labels->data[i] = (float)(i % 5);
  g_autofree char *lpath = nw_test_path("aseg_labels.nii.gz");
  g_assert_true(nw_nifti_write(lpath, labels, NW_DT_INT16, FALSE, &error));
  g_autoptr(GPtrArray) l1 = nw_load_file(lpath, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(l1->len, ==, 1);
  NwLayer *ll = g_ptr_array_index(l1, 0);
  g_assert_cmpint(nw_layer_get_kind(ll), ==, NW_LAYER_LABELS);
  g_assert_cmpint(nw_layer_get_style(ll)->colormap, ==, NW_COLORMAP_LABEL);
  g_assert_cmpstr(nw_layer_get_name(ll), ==, "aseg_labels.nii.gz");
  g_assert_cmpstr(nw_layer_get_path(ll), ==, lpath);

  /* the same numbers under a plain name are an image */
  g_autofree char *ipath = nw_test_path("t1.nii.gz");
  g_assert_true(nw_nifti_write(ipath, labels, NW_DT_INT16, FALSE, &error));
  g_autoptr(GPtrArray) l2 = nw_load_file(ipath, &error);
  g_assert_cmpint(nw_layer_get_kind(g_ptr_array_index(l2, 0)), ==, NW_LAYER_IMAGE);

  /* a displacement field: grid layer plus a hidden log-Jacobian layer */
  g_autoptr(NwVolume) u = nw_volume_new(8, 8, 8, 3, NULL);
  for (size_t i = 0; i < nw_volume_n_voxels(u); i++)
    u->data[i * 3 + 2] = 0.5f;
  g_autofree char *fpath = nw_test_path("warp.nii.gz");
  g_assert_true(nw_nifti_write_field(fpath, u, NW_FIELD_ITK, &error));
  g_autoptr(GPtrArray) l3 = nw_load_file(fpath, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(l3->len, ==, 2);
  NwLayer *grid = g_ptr_array_index(l3, 0), *jac = g_ptr_array_index(l3, 1);
  g_assert_cmpint(nw_layer_get_kind(grid), ==, NW_LAYER_FIELD);
  g_assert_cmpint(nw_layer_get_field_show(grid), ==, NW_FIELD_SHOW_GRID);
  g_assert_cmpint(nw_layer_get_field_show(jac), ==, NW_FIELD_SHOW_LOG_JACOBIAN);
  g_assert_false(nw_layer_get_visible(jac));
  float lo, hi;
  nw_layer_get_data_range(grid, &lo, &hi);
  g_assert_cmpfloat_with_epsilon(hi, 0.5, 1e-4);
  g_assert_cmpstr(nw_layer_get_name(jac), ==, "warp.nii.gz: log-Jacobian");
  /* a translation: log det J = 0 everywhere, shown on the smallest symmetric range */
  g_assert_cmpint(nw_layer_get_style(jac)->colormap, ==, NW_COLORMAP_DIVERGING);
  g_assert_cmpfloat(nw_layer_get_style(jac)->lo, ==, -0.05f);
  g_assert_cmpfloat(nw_layer_get_style(jac)->hi, ==, 0.05f);
  g_assert_cmpfloat(nw_layer_get_style(jac)->opacity, ==, 0.75f);

  /* a mesh */
  g_autoptr(NwSurface) s = nw_surface_new(3, 1, NULL);
  const float v[9] = {0, 0, 0, 10, 0, 0, 0, 10, 0};
  memcpy(s->vertices, v, sizeof v);
  s->triangles[0] = 0, s->triangles[1] = 1, s->triangles[2] = 2;
  g_autofree char *mpath = nw_test_path("tri.obj");
  g_assert_true(nw_mesh_write(mpath, s, NW_MESH_AUTO, &error));
  g_assert_no_error(error);
  g_autoptr(GPtrArray) l4 = nw_load_file(mpath, &error);
  g_assert_no_error(error);
  NwLayer *ml = g_ptr_array_index(l4, 0);
  g_assert_cmpint(nw_layer_get_kind(ml), ==, NW_LAYER_SURFACE);
  g_assert_nonnull(nw_layer_get_surface(ml)->normals);

  /* junk and missing files: errors naming the file, no layers */
  g_autofree char *junk = nw_test_path("junk.nii");
  g_assert_true(g_file_set_contents(junk, "not an image at all", -1, NULL));
  g_autoptr(GPtrArray) l5 = nw_load_file(junk, &error);
  g_assert_null(l5);
  g_assert_nonnull(error);
  g_assert_nonnull(strstr(error->message, "junk.nii"));
  g_clear_error(&error);
  g_autoptr(GPtrArray) l6 = nw_load_file("/nonexistent/x.nii.gz", &error);
  g_assert_null(l6);
  g_assert_error(error, NW_ERROR, NW_ERROR_IO);
  g_assert_nonnull(strstr(error->message, "/nonexistent/x.nii.gz: no such file"));
}

/* The status bar's value is the quantity drawn: |u| for a grid, log det J for the
 * log-Jacobian; det J of a uniform expansion a is (1 + a)^3 inside, and half a step at the
 * border (one-sided there, as the shader's clamped texture reads). */
static void test_readout_as_drawn(void)
{
  g_autoptr(NwVolume) u = nw_volume_new(8, 8, 8, 3, NULL);
  for (int k = 0; k < 8; k++)
    for (int j = 0; j < 8; j++)
      for (int i = 0; i < 8; i++) {
        float *d = u->data + nw_volume_index(u, i, j, k) * 3;
        d[0] = 0.1f * (i - 3.5f), d[1] = 0.1f * (j - 3.5f), d[2] = 0.1f * (k - 3.5f);
      }
  g_assert_cmpfloat(fabs(nw_field_det_at(u, 3, 4, 5) - 1.331), <, 1e-5);
  g_assert_cmpfloat(fabs(nw_field_det_at(u, 0, 4, 5) - 1.05 * 1.1 * 1.1), <, 1e-5);
  NwLayer *l = nw_layer_new_volume(NW_LAYER_FIELD, "u", nw_volume_copy(u));
  const double ras[3] = {3, 4, 5};
  g_autoptr(GString) s = g_string_new(NULL);
  nw_layer_append_readout(l, ras, s);
  g_assert_true(g_str_has_prefix(s->str, "   u |u| "));
  g_string_truncate(s, 0);
  nw_layer_set_field_show(l, NW_FIELD_SHOW_LOG_JACOBIAN);
  nw_layer_append_readout(l, ras, s);
  g_assert_cmpstr(s->str, ==, "   u log det J 0.286");
  g_string_truncate(s, 0);
  nw_layer_set_visible(l, FALSE);
  nw_layer_append_readout(l, ras, s);
  g_assert_cmpstr(s->str, ==, "");
  g_object_unref(l);
}

/* Scale bars: the longest 1, 2, 5 x 10^k mm within the pixels given. */
static void test_scale_bar_length(void)
{
  g_assert_cmpfloat(nw_scale_bar_mm(0.26, 100), ==, 20.0);
  g_assert_cmpfloat(nw_scale_bar_mm(0.57, 100), ==, 50.0);
  g_assert_cmpfloat(nw_scale_bar_mm(1.0, 100), ==, 100.0);
  g_assert_cmpfloat(nw_scale_bar_mm(0.01, 100), ==, 1.0);
  g_assert_cmpfloat(nw_scale_bar_mm(0.0, 100), ==, 0.0);
}

/* Label tables: the three text formats side by side, and a bad line named. */
static void test_label_table_formats(void)
{
  g_autofree char *path = nw_test_path("labels.txt");
  g_assert_true(g_file_set_contents(path,
                                    "# comment\n"
                                    "3 Caudate_L 7001\n"                       /* MRIcron */
                                    "4\tThalamus 0 128 255 0\n"                /* FreeSurfer */
                                    "  5  10 20 30  0.5  1 1  \"Two words\"\n" /* ITK-SNAP */
                                    "  6  10 20 30  1.0  0 1  \"Hidden\"\n",
                                    -1, NULL));
  g_autoptr(NwLabelTable) t = nw_label_table_new();
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_label_table_load(t, path, &error));
  g_assert_cmpstr(nw_label_table_name(t, 3), ==, "Caudate_L");
  g_assert_cmpstr(nw_label_table_name(t, 4), ==, "Thalamus");
  g_assert_cmpstr(nw_label_table_name(t, 5), ==, "Two words");
  g_assert_null(nw_label_table_name(t, 7));
  guint8 c[4];
  g_assert_false(nw_label_table_color(t, 3, c));
  g_assert_true(nw_label_table_color(t, 4, c));
  g_assert_cmpint(c[2], ==, 255);
  g_assert_cmpint(c[3], ==, 255);
  g_assert_true(nw_label_table_color(t, 5, c));
  g_assert_cmpint(c[3], ==, 128);
  g_assert_true(nw_label_table_color(t, 6, c));
  g_assert_cmpint(c[3], ==, 0);
  g_assert_cmpint(nw_label_table_max_index(t), ==, 6);
  g_autofree char *bad = nw_test_path("bad.txt");
  g_assert_true(g_file_set_contents(bad, "1 One\nnot a label\n", -1, NULL));
  g_assert_false(nw_label_table_load(t, bad, &error));
  g_assert_nonnull(strstr(error->message, "bad.txt: line 2 is not a label"));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/scene-layer/ranges-presets", test_layer_ranges_and_presets);
  g_test_add_func("/scene-layer/constant-and-field", test_constant_and_field_layers);
  g_test_add_func("/scene-layer/scene", test_scene);
  g_test_add_func("/scene-layer/scene-flat", test_scene_flat);
  g_test_add_func("/scene-layer/setters-and-signals", test_setters_and_signals);
  g_test_add_func("/scene-layer/field-display-rule", test_field_display_rule);
  g_test_add_func("/scene-layer/loader-kinds", test_loader_kinds);
  g_test_add_func("/scene-layer/readout-as-drawn", test_readout_as_drawn);
  g_test_add_func("/scene-layer/scale-bar-length", test_scale_bar_length);
  g_test_add_func("/scene-layer/label-table-formats", test_label_table_formats);
  return g_test_run();
}
