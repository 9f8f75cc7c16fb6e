/* test_ui_widgets.c — the parameter panel (values, validation, running state, "changed"),
 * the live plot (curve and zero-line pixels where the layout of nw_plot.c puts them) and the
 * layer list (rows follow their layers, edits go to them). Main thread; needs a display for
 * GTK (exits 77 without one); no GPU. Sessions and presets: test_scene_session.c. */
#include <gtk/gtk.h>
#include <math.h>
#include <string.h>

#include "method_table.h"
#include "nw_error.h"
#include "nw_layer_list.h"
#include "nw_param_panel.h"
#include "nw_plot.h"
#include "testutil.h"

/* ---- helpers ---- */

static NwParams *demons_defaults(void)
{
  g_autoptr(GError) error = NULL;
  const NwMethodOps *ops = nw_method_lookup("demons", NW_DEVICE_CPU, &error);
  g_assert_no_error(error);
  return nw_params_new(ops->params, ops->n_params);
}

static GtkWidget *find_named(GtkWidget *container, const char *name)
{
  g_autoptr(GList) children = gtk_container_get_children(GTK_CONTAINER(container));
  for (GList *l = children; l != NULL; l = l->next)
    if (g_strcmp0(gtk_widget_get_name(l->data), name) == 0)
      return l->data;
  return NULL;
}

static void count_changed(GtkWidget *w, int *count)
{
  (void)w;
  (*count)++;
}

/* ---- parameter panel ---- */

static void test_panel_defaults(void)
{
  g_autoptr(NwParams) defaults = demons_defaults();
  GtkWidget *panel = g_object_ref_sink(nw_param_panel_new(defaults));
  GtkWidget *sd = find_named(panel, "param-sigma-diff");
  GtkWidget *levels = find_named(panel, "param-levels");
  GtkWidget *sim = find_named(panel, "param-similarity");
  GtkWidget *hm = find_named(panel, "param-histogram-match");
  GtkWidget *tol = find_named(panel, "param-tolerance");
  g_assert_true(GTK_IS_SPIN_BUTTON(sd) && GTK_IS_SPIN_BUTTON(levels) && GTK_IS_SPIN_BUTTON(tol));
  g_assert_true(GTK_IS_COMBO_BOX(sim) && GTK_IS_SWITCH(hm));
  g_assert_cmpfloat(gtk_spin_button_get_value(GTK_SPIN_BUTTON(sd)), ==, 1.0);
  g_assert_cmpfloat(gtk_spin_button_get_value(GTK_SPIN_BUTTON(levels)), ==, 3.0);
  g_assert_cmpint(gtk_spin_button_get_digits(GTK_SPIN_BUTTON(levels)), ==, 0);
  g_assert_cmpstr(gtk_entry_get_text(GTK_ENTRY(tol)), ==, "0.0001");
  g_assert_cmpint(gtk_combo_box_get_active(GTK_COMBO_BOX(sim)), ==, 0);
  g_assert_false(gtk_switch_get_active(GTK_SWITCH(hm)));
  /* live rows carry the mark, others not; labels are the names in words */
  g_assert_nonnull(find_named(panel, "param-sigma-diff-live"));
  g_assert_null(find_named(panel, "param-levels-live"));
  GtkWidget *label =
      gtk_grid_get_child_at(GTK_GRID(panel), 0, nw_params_find(defaults, "sigma-fluid"));
  g_assert_cmpstr(gtk_label_get_text(GTK_LABEL(label)), ==, "Sigma fluid");
  g_assert_cmpstr(gtk_widget_get_tooltip_text(sd), ==,
                  defaults->specs[nw_params_find(defaults, "sigma-diff")].tooltip);
  g_autoptr(NwParams) shown = nw_param_panel_get_params(NW_PARAM_PANEL(panel));
  for (int i = 0; i < shown->n; i++)
    g_assert_cmpfloat(shown->values[i], ==, defaults->values[i]);
  g_object_unref(panel);
}

static void test_panel_set_value(void)
{
  g_autoptr(NwParams) defaults = demons_defaults();
  GtkWidget *panel = g_object_ref_sink(nw_param_panel_new(defaults));
  NwParamPanel *pp = NW_PARAM_PANEL(panel);
  int changed = 0;
  g_signal_connect(panel, "changed", G_CALLBACK(count_changed), &changed);
  g_autoptr(GError) error = NULL;

  g_assert_true(nw_param_panel_set_value(pp, "sigma-diff", "2.5", &error));
  g_assert_no_error(error);
  g_assert_cmpint(changed, ==, 1);
  GtkWidget *sd = find_named(panel, "param-sigma-diff");
  g_assert_cmpfloat(gtk_spin_button_get_value(GTK_SPIN_BUTTON(sd)), ==, 2.5);
  g_autoptr(NwParams) p1 = nw_param_panel_get_params(pp);
  g_assert_cmpfloat(nw_params_get(p1, "sigma-diff"), ==, 2.5);

  /* out of range: refused, message names the parameter, nothing changes */
  g_assert_false(nw_param_panel_set_value(pp, "sigma-diff", "50", &error));
  g_assert_nonnull(strstr(error->message, "sigma-diff: 50 is outside 0..20 voxel"));
  g_clear_error(&error);
  g_assert_false(nw_param_panel_set_value(pp, "no-such", "1", &error));
  g_assert_nonnull(strstr(error->message, "unknown parameter 'no-such'"));
  g_clear_error(&error);
  g_assert_cmpint(changed, ==, 1);
  g_assert_cmpfloat(gtk_spin_button_get_value(GTK_SPIN_BUTTON(sd)), ==, 2.5);

  /* every editor kind; small values keep their digits */
  g_assert_true(nw_param_panel_set_value(pp, "similarity", "lcc", &error));
  g_assert_true(nw_param_panel_set_value(pp, "histogram-match", "true", &error));
  g_assert_true(nw_param_panel_set_value(pp, "tolerance", "1e-6", &error));
  g_assert_no_error(error);
  g_assert_cmpint(changed, ==, 4);
  g_assert_cmpint(gtk_combo_box_get_active(GTK_COMBO_BOX(find_named(panel, "param-similarity"))),
                  ==, 1);
  g_assert_true(gtk_switch_get_active(GTK_SWITCH(find_named(panel, "param-histogram-match"))));
  g_assert_cmpstr(gtk_entry_get_text(GTK_ENTRY(find_named(panel, "param-tolerance"))), ==, "1e-06");
  g_autoptr(NwParams) p2 = nw_param_panel_get_params(pp);
  g_assert_cmpfloat(nw_params_get(p2, "tolerance"), ==, 1e-6);
  g_assert_cmpfloat(nw_params_get(p2, "similarity"), ==, 1);
  g_assert_cmpfloat(nw_params_get(p2, "histogram-match"), ==, 1);

  /* an edit in the widget (as the user makes it) */
  gtk_spin_button_set_value(GTK_SPIN_BUTTON(find_named(panel, "param-sigma-fluid")), 3.0);
  g_assert_cmpint(changed, ==, 5);
  g_autoptr(NwParams) p3 = nw_param_panel_get_params(pp);
  g_assert_cmpfloat(nw_params_get(p3, "sigma-fluid"), ==, 3.0);

  /* set_params: every value shown, one signal */
  nw_param_panel_set_params(pp, defaults);
  g_assert_cmpint(changed, ==, 6);
  g_assert_cmpfloat(gtk_spin_button_get_value(GTK_SPIN_BUTTON(sd)), ==, 1.0);
  g_assert_false(gtk_switch_get_active(GTK_SWITCH(find_named(panel, "param-histogram-match"))));
  g_object_unref(panel);
}

static void test_panel_running(void)
{
  g_autoptr(NwParams) defaults = demons_defaults();
  GtkWidget *panel = g_object_ref_sink(nw_param_panel_new(defaults));
  GtkWidget *sd = find_named(panel, "param-sigma-diff"),
            *levels = find_named(panel, "param-levels");
  GtkWidget *sim = find_named(panel, "param-similarity");
  nw_param_panel_set_running(NW_PARAM_PANEL(panel), TRUE);
  g_assert_true(gtk_widget_get_sensitive(sd));
  g_assert_false(gtk_widget_get_sensitive(levels));
  g_assert_false(gtk_widget_get_sensitive(sim));
  nw_param_panel_set_running(NW_PARAM_PANEL(panel), FALSE);
  g_assert_true(gtk_widget_get_sensitive(levels));
  g_object_unref(panel);
}

/* ---- plot ---- */

/* nw_plot.c's layout constants (its header comment) for a W x H drawing. */
#define PLOT_TOP 4.0
#define PLOT_BOTTOM 34.0
#define PLOT_LEFT 56.0
#define PLOT_RIGHT 10.0
#define PLOT_TITLE 18.0
#define PLOT_GAP 6.0
#define PLOT_PAD 4.0

static double expected_row(int height, int n_panels, int panel, double lo, double hi, double v)
{
  double ph = (height - PLOT_TOP - PLOT_BOTTOM) / n_panels;
  double y0 = PLOT_TOP + panel * ph + PLOT_TITLE, y1 = PLOT_TOP + panel * ph + ph - PLOT_GAP;
  return y1 - PLOT_PAD - (v - lo) / (hi - lo) * (y1 - y0 - 2 * PLOT_PAD);
}

static const guchar *pixel(GdkPixbuf *pb, int x, int y)
{
  return gdk_pixbuf_get_pixels(pb) + y * gdk_pixbuf_get_rowstride(pb) +
         x * gdk_pixbuf_get_n_channels(pb);
}

/* The panel-0 curve colour is blue (0.12, 0.47, 0.71): blue clearly above red. */
static gboolean bluish(const guchar *px)
{
  return px[2] > px[0] + 50;
}

static gboolean red(const guchar *px)
{
  return px[0] > 180 && px[1] < 80 && px[2] < 80;
}

static void test_plot_png(void)
{
  const char *const quantities[] = {"energy", "min_jac", NULL};
  GtkWidget *w = g_object_ref_sink(nw_plot_new(quantities));
  NwPlot *plot = NW_PLOT(w);
  nw_plot_set_job_name(plot, 0, "CUDA");
  nw_plot_set_job_name(plot, 1, "CPU");
  for (int it = 1; it <= 40; it++) {
    nw_plot_add(plot, 0, "energy", it, 8.0);
    nw_plot_add(plot, 1, "energy", it, 2.0);
    nw_plot_add(plot, 0, "min_jac", it, 1.0 - 0.5 * (it - 1) / 39.0);
  }
  nw_plot_add(plot, 0, "energy", 41, NAN);  /* ignored: not finite */
  nw_plot_add(plot, 0, "no-such", 41, 1.0); /* ignored: no panel */
  nw_plot_mark_level(plot, 0, 20);
  g_assert_cmpuint(nw_plot_n_points(plot, 0, "energy"), ==, 40);
  g_assert_cmpuint(nw_plot_n_points(plot, 1, "energy"), ==, 40);
  g_assert_cmpuint(nw_plot_n_points(plot, 1, "min_jac"), ==, 0);

  g_autofree char *path = nw_test_path("plot.png");
  g_autoptr(GError) error = NULL;
  const int W = 400, H = 300;
  g_assert_true(nw_plot_save_png(plot, path, W, H, &error));
  g_assert_no_error(error);
  g_autoptr(GdkPixbuf) pb = gdk_pixbuf_new_from_file(path, &error);
  g_assert_no_error(error);
  g_assert_cmpint(gdk_pixbuf_get_width(pb), ==, W);
  g_assert_cmpint(gdk_pixbuf_get_height(pb), ==, H);

  /* energy: data 2..8 gives ticks of 2 over [2, 8]; job 0 solid at 8, job 1 dashed at 2 */
  double row8 = expected_row(H, 2, 0, 2, 8, 8), row2 = expected_row(H, 2, 0, 2, 8, 2);
  int x = 150;
  int n_top = 0, n_other = 0;
  for (int y = 0; y < H / 2; y++) {
    if (!bluish(pixel(pb, x, y)))
      continue;
    if (fabs(y - row8) <= 2)
      n_top++;
    else if (fabs(y - row2) > 2)
      n_other++;
  }
  g_assert_cmpint(n_top, >=, 1);
  g_assert_cmpint(n_other, ==, 0);
  gboolean dashed_found = FALSE;
  for (int xx = x; xx < x + 12; xx++)
    for (int y = (int)row2 - 2; y <= (int)row2 + 2; y++)
      dashed_found = dashed_found || bluish(pixel(pb, xx, y));
  g_assert_true(dashed_found);

  /* min_jac: range [0, 1] (0 always in view); the zero line is red */
  double row0 = expected_row(H, 2, 1, 0, 1, 0);
  gboolean red_found = FALSE;
  for (int y = (int)row0 - 2; y <= (int)row0 + 2; y++)
    red_found = red_found || red(pixel(pb, 200, y));
  g_assert_true(red_found);
  for (int y = 0; y < H; y++)
    if (fabs(y - row0) > 2)
      g_assert_false(red(pixel(pb, 200, y)));

  /* clear forgets every curve */
  nw_plot_clear(plot);
  g_assert_cmpuint(nw_plot_n_points(plot, 0, "energy"), ==, 0);
  g_assert_false(nw_plot_save_png(plot, path, 0, 10, &error));
  g_assert_nonnull(strstr(error->message, "plot.png: size 0x10 is outside 1..16384"));
  g_object_unref(w);
}

/* Two pyramid levels whose energies differ tenfold: each level is drawn on a scale of its
 * own (the coarse curve fills its column instead of lying flat at the bottom), the value
 * before is a dotted line across the last level, the x axis is labelled. */
static void test_plot_levels(void)
{
  const char *const quantities[] = {"energy", NULL};
  GtkWidget *w = g_object_ref_sink(nw_plot_new(quantities));
  NwPlot *plot = NW_PLOT(w);
  for (int it = 1; it <= 20; it++)
    nw_plot_add(plot, 0, "energy", it, it <= 10 ? 11.0 - 0.1 * it : 110.0 - it);
  nw_plot_mark_level(plot, 0, 11);
  nw_plot_set_before(plot, "energy", 120.0);
  g_autofree char *path = nw_test_path("levels.png");
  g_autoptr(GError) error = NULL;
  const int W = 400, H = 200;
  g_assert_true(nw_plot_save_png(plot, path, W, H, &error));
  g_autoptr(GdkPixbuf) pb = gdk_pixbuf_new_from_file(path, &error);
  g_assert_no_error(error);
  /* iterations 1..20 over x in [LEFT, W - RIGHT]: level 2 starts at x(11) */
  const double x11 = PLOT_LEFT + (11.0 - 1.0) / 19.0 * (W - PLOT_RIGHT - PLOT_LEFT);
  const double y_top = expected_row(H, 1, 0, 0, 1, 1), y_bottom = expected_row(H, 1, 0, 0, 1, 0);
  int lo = H, hi = -1;
  for (int x = (int)PLOT_LEFT + 2; x < (int)x11 - 2; x++)
    for (int y = 0; y < H; y++)
      if (bluish(pixel(pb, x, y)))
        lo = MIN(lo, y), hi = MAX(hi, y);
  g_assert_cmpfloat(hi - lo, >, 0.5 * (y_bottom - y_top));
  /* before = 120: the top of the last column's range [90, 120] */
  const int y_before = (int)round(expected_row(H, 1, 0, 90, 120, 120));
  int dots = 0;
  for (int x = (int)x11 + 40; x < W - 60; x++)
    for (int y = y_before - 1; y <= y_before + 1; y++) {
      const guchar *p = pixel(pb, x, y);
      dots += p[0] < 140 && abs(p[0] - p[2]) < 10 && abs(p[0] - p[1]) < 10;
    }
  g_assert_cmpint(dots, >, 10);
  /* "iteration" below the tick labels, centred */
  int ink = 0;
  for (int y = H - 21; y < H - 10; y++) /* the baseline: 28 below the panel, 34 + 6 above H */
    for (int x = W / 2 - 40; x < W / 2 + 40; x++)
      ink += pixel(pb, x, y)[0] < 128;
  g_assert_cmpint(ink, >, 10);
  g_object_unref(w);
}

/* Degenerate data draws without hanging or failing: one point, a constant, huge values
 * whose tick step is below their precision, and no data at all. */
static void test_plot_degenerate(void)
{
  const char *const quantities[] = {"energy", "mse", "max_u", NULL};
  GtkWidget *w = g_object_ref_sink(nw_plot_new(quantities));
  NwPlot *plot = NW_PLOT(w);
  nw_plot_add(plot, 0, "energy", 5, 3.0);
  nw_plot_add(plot, 1, "mse", 5, 1e17);
  nw_plot_add(plot, 1, "mse", 6, 1e17 + 16);
  nw_plot_add(plot, 1, "mse", 7, INFINITY); /* ignored */
  g_assert_cmpuint(nw_plot_n_points(plot, 1, "mse"), ==, 2);
  g_autofree char *path = nw_test_path("degenerate.png");
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_plot_save_png(plot, path, 320, 240, &error));
  g_assert_no_error(error);
  g_assert_true(nw_plot_save_png(plot, path, 20, 10, &error)); /* too small to draw: blank */
  g_assert_no_error(error);
  g_autoptr(GdkPixbuf) pb = gdk_pixbuf_new_from_file(path, &error);
  g_assert_no_error(error);
  g_assert_cmpint(gdk_pixbuf_get_width(pb), ==, 20);
  g_object_unref(w);
}

/* ---- layer list ---- */

static void count_redraws(NwScene *scene, int *n)
{
  (*n)++;
}

/* The first widget named name below w whose layer (set by the list on each row's widgets)
 * is l. */
static GtkWidget *find_layer_widget(GtkWidget *w, NwLayer *l, const char *name)
{
  if (g_strcmp0(gtk_widget_get_name(w), name) == 0 &&
      g_object_get_data(G_OBJECT(w), "nw-layer") == l)
    return w;
  if (!GTK_IS_CONTAINER(w))
    return NULL;
  g_autoptr(GList) children = gtk_container_get_children(GTK_CONTAINER(w));
  for (GList *c = children; c != NULL; c = c->next) {
    GtkWidget *found = find_layer_widget(c->data, l, name);
    if (found != NULL)
      return found;
  }
  return NULL;
}

/* A row shows its layer's settings when they change elsewhere (a script, a drag, the field
 * drawing that brings its colours), and an edit in the row goes to the layer. */
static void test_layer_list_follows(void)
{
  g_autoptr(NwScene) scene = nw_scene_new();
  NwVolume *v = nw_volume_new(8, 8, 8, 1, NULL);
  for (size_t i = 0; i < nw_volume_n_voxels(v); i++)
    v->data[i] = (float)(i % 50);
  g_autoptr(NwLayer) image = nw_layer_new_volume(NW_LAYER_IMAGE, "image", v);
  NwVolume *u = nw_volume_new(8, 8, 8, 3, NULL);
  for (size_t i = 0; i < nw_volume_n_voxels(u); i++)
    u->data[3 * i] = 0.5f;
  g_autoptr(NwLayer) field = nw_layer_new_volume(NW_LAYER_FIELD, "field", u);
  nw_scene_add_layer(scene, image);
  nw_scene_add_layer(scene, field);
  GtkWidget *list = g_object_ref_sink(GTK_WIDGET(nw_layer_list_new(scene)));

  GtkWidget *vis = find_layer_widget(list, image, "layer-visible");
  GtkWidget *lo = find_layer_widget(list, image, "layer-lo");
  GtkWidget *hi = find_layer_widget(list, image, "layer-hi");
  GtkWidget *opacity = find_layer_widget(list, image, "layer-opacity");
  GtkWidget *show = find_layer_widget(list, field, "layer-field-show");
  GtkWidget *colours = find_layer_widget(list, field, "layer-colormap");
  g_assert_true(GTK_IS_TOGGLE_BUTTON(vis) && GTK_IS_SPIN_BUTTON(lo) && GTK_IS_SPIN_BUTTON(hi));
  g_assert_true(GTK_IS_RANGE(opacity) && GTK_IS_COMBO_BOX(show) && GTK_IS_COMBO_BOX(colours));

  /* settings changed elsewhere */
  nw_layer_set_visible(image, FALSE);
  g_assert_false(gtk_toggle_button_get_active(GTK_TOGGLE_BUTTON(vis)));
  nw_layer_set_window_level(image, 20.0, 30.0);
  g_assert_cmpfloat(gtk_spin_button_get_value(GTK_SPIN_BUTTON(lo)), ==, 20.0);
  g_assert_cmpfloat(gtk_spin_button_get_value(GTK_SPIN_BUTTON(hi)), ==, 40.0);
  nw_layer_set_field_show(field, NW_FIELD_SHOW_LOG_JACOBIAN);
  g_assert_cmpstr(gtk_combo_box_get_active_id(GTK_COMBO_BOX(show)), ==, "log-jacobian");
  g_assert_cmpstr(gtk_combo_box_get_active_id(GTK_COMBO_BOX(colours)), ==, "diverging");
  GtkWidget *flo = find_layer_widget(list, field, "layer-lo");
  g_assert_cmpfloat(gtk_spin_button_get_value(GTK_SPIN_BUTTON(flo)), ==,
                    nw_layer_get_style(field)->lo);

  /* edits in the row */
  int changed = 0;
  g_signal_connect(scene, "changed", G_CALLBACK(count_redraws), &changed);
  gtk_toggle_button_set_active(GTK_TOGGLE_BUTTON(vis), TRUE);
  g_assert_true(nw_layer_get_visible(image));
  gtk_range_set_value(GTK_RANGE(opacity), 0.25);
  g_assert_cmpfloat(nw_layer_get_style(image)->opacity, ==, 0.25f);
  gtk_spin_button_set_value(GTK_SPIN_BUTTON(hi), 45.0);
  g_assert_cmpfloat(nw_layer_get_style(image)->hi, ==, 45.0f);
  g_assert_cmpfloat(nw_layer_get_style(image)->lo, ==, 20.0f);
  gtk_combo_box_set_active_id(GTK_COMBO_BOX(show), "magnitude");
  g_assert_cmpint(nw_layer_get_field_show(field), ==, NW_FIELD_SHOW_MAGNITUDE);
  g_assert_cmpstr(gtk_combo_box_get_active_id(GTK_COMBO_BOX(colours)), ==, "hot");
  g_assert_cmpint(changed, ==, 4); /* one redraw per edit */
  g_object_unref(list);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  if (!gtk_init_check(&argc, &argv)) {
    g_print("SKIP: no display\n");
    return NW_TEST_SKIP;
  }
  nw_methods_register_builtin();
  g_test_add_func("/widgets/panel/defaults", test_panel_defaults);
  g_test_add_func("/widgets/panel/set-value", test_panel_set_value);
  g_test_add_func("/widgets/panel/running", test_panel_running);
  g_test_add_func("/widgets/plot/png", test_plot_png);
  g_test_add_func("/widgets/plot/degenerate", test_plot_degenerate);
  g_test_add_func("/widgets/plot/levels", test_plot_levels);
  g_test_add_func("/widgets/layer-list/follows", test_layer_list_follows);
  return g_test_run();
}
