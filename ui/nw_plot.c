/* nw_plot.c — the live plot of job figures against iteration, drawn with cairo (layout and
 * conventions in nw_plot.h). The same drawing serves the widget's "draw" handler and
 * nw_plot_save_png.
 *
 * Layout in pixels of a W x H drawing (fixed, so that tests can compute where a value is):
 * panels are stacked in [NW_PLOT_TOP, H - NW_PLOT_BOTTOM), each ph = (H - TOP - BOTTOM) / n
 * high; panel i's data rectangle spans x in [NW_PLOT_LEFT, W - NW_PLOT_RIGHT] and
 * y in [y0 + NW_PLOT_TITLE, y0 + ph - NW_PLOT_GAP] with y0 = TOP + i * ph. Within it a value
 * v maps to y = rect_bottom - PAD - (v - lo) / (hi - lo) * (rect_height - 2 PAD), where
 * [lo, hi] is the data range widened to whole multiples of a "nice" tick step (1, 2, 2.5 or
 * 5 times a power of ten, about 4 steps); iterations map the same way on x over the range of
 * all curves, labelled "iteration" below the ticks. min_jac panels always include 0 in their
 * range.
 *
 * Pyramid levels: the iterations of each level of job 0 (from one level mark to the next)
 * are a column of their own with its own y range and ticks, so that every level is seen on
 * a scale of its own (a coarse level's energy or NCC is not comparable with a fine one's:
 * the curve would jump at each level) and no line joins two levels; the levels are named
 * above the first panel. A quantity's value before the registration (nw_plot_set_before)
 * is a dotted line across the last column, the level at the images' own resolution.
 * Main thread only (GTK); no GPU. */
#include "nw_plot.h"

#include <math.h>
#include <string.h>

#include "atomic_file.h"
#include "nw_error.h"

#define NW_PLOT_TOP 4.0
#define NW_PLOT_BOTTOM 34.0
#define NW_PLOT_LEFT 56.0
#define NW_PLOT_RIGHT 10.0
#define NW_PLOT_TITLE 18.0
#define NW_PLOT_GAP 6.0
#define NW_PLOT_PAD 4.0
#define NW_PLOT_JOBS 2
#define NW_PLOT_MAX_COLUMNS 16

typedef struct {
  int iteration;
  double value;
} PlotPoint;

typedef struct {
  char *quantity;
  GArray *curve[NW_PLOT_JOBS]; /* PlotPoint */
  double before;               /* the value before the registration; NAN: none */
} PlotPanel;

struct _NwPlot {
  GtkDrawingArea parent_instance;
  PlotPanel *panels;
  int n_panels;
  GArray *levels[NW_PLOT_JOBS]; /* int iterations where a level starts */
  char *job_name[NW_PLOT_JOBS];
};

G_DEFINE_TYPE(NwPlot, nw_plot, GTK_TYPE_DRAWING_AREA)

/* One colour per panel; red is kept for the min_jac zero line. */
static const double panel_colours[][3] = {
    {0.12, 0.47, 0.71}, {0.17, 0.63, 0.17}, {0.58, 0.40, 0.74},
    {1.00, 0.50, 0.05}, {0.09, 0.75, 0.81}, {0.55, 0.34, 0.29},
};

typedef struct {
  double x0, x1, y0, y1; /* data rectangle, pixels */
  double lo, hi, step;   /* value range and tick step */
} Axis;

static void nw_plot_finalize(GObject *object)
{
  NwPlot *p = NW_PLOT(object);
  for (int i = 0; i < p->n_panels; i++) {
    g_free(p->panels[i].quantity);
    for (int j = 0; j < NW_PLOT_JOBS; j++)
      g_array_unref(p->panels[i].curve[j]);
  }
  g_free(p->panels);
  for (int j = 0; j < NW_PLOT_JOBS; j++) {
    g_array_unref(p->levels[j]);
    g_free(p->job_name[j]);
  }
  G_OBJECT_CLASS(nw_plot_parent_class)->finalize(object);
}

static void draw_plot(NwPlot *p, cairo_t *cr, double width, double height);

static gboolean nw_plot_draw(GtkWidget *widget, cairo_t *cr)
{
  draw_plot(NW_PLOT(widget), cr, gtk_widget_get_allocated_width(widget),
            gtk_widget_get_allocated_height(widget));
  return FALSE;
}

static void nw_plot_class_init(NwPlotClass *klass)
{
  G_OBJECT_CLASS(klass)->finalize = nw_plot_finalize;
  GTK_WIDGET_CLASS(klass)->draw = nw_plot_draw;
}

static void nw_plot_init(NwPlot *p)
{
  for (int j = 0; j < NW_PLOT_JOBS; j++) {
    p->levels[j] = g_array_new(FALSE, FALSE, sizeof(int));
    p->job_name[j] = g_strdup_printf("job %d", j + 1);
  }
}

GtkWidget *nw_plot_new(const char *const *quantities)
{
  g_return_val_if_fail(quantities != NULL, NULL);
  NwPlot *p = g_object_new(NW_TYPE_PLOT, NULL);
  p->n_panels = (int)g_strv_length((char **)quantities);
  p->panels = g_new0(PlotPanel, MAX(p->n_panels, 1));
  for (int i = 0; i < p->n_panels; i++) {
    p->panels[i].quantity = g_strdup(quantities[i]);
    p->panels[i].before = NAN;
    for (int j = 0; j < NW_PLOT_JOBS; j++)
      p->panels[i].curve[j] = g_array_new(FALSE, FALSE, sizeof(PlotPoint));
  }
  gtk_widget_set_size_request(GTK_WIDGET(p), 240, 60 * MAX(p->n_panels, 1) + 30);
  return GTK_WIDGET(p);
}

void nw_plot_clear(NwPlot *p)
{
  g_return_if_fail(NW_IS_PLOT(p));
  for (int i = 0; i < p->n_panels; i++)
    for (int j = 0; j < NW_PLOT_JOBS; j++)
      g_array_set_size(p->panels[i].curve[j], 0);
  for (int j = 0; j < NW_PLOT_JOBS; j++)
    g_array_set_size(p->levels[j], 0);
  for (int i = 0; i < p->n_panels; i++)
    p->panels[i].before = NAN;
  gtk_widget_queue_draw(GTK_WIDGET(p));
}

void nw_plot_set_job_name(NwPlot *p, int job, const char *name)
{
  g_return_if_fail(NW_IS_PLOT(p) && job >= 0 && job < NW_PLOT_JOBS);
  g_free(p->job_name[job]);
  p->job_name[job] = g_strdup(name != NULL ? name : "");
  gtk_widget_queue_draw(GTK_WIDGET(p));
}

static PlotPanel *find_panel(NwPlot *p, const char *quantity)
{
  for (int i = 0; i < p->n_panels; i++)
    if (g_strcmp0(p->panels[i].quantity, quantity) == 0)
      return &p->panels[i];
  return NULL;
}

void nw_plot_add(NwPlot *p, int job, const char *quantity, int iteration, double value)
{
  g_return_if_fail(NW_IS_PLOT(p) && job >= 0 && job < NW_PLOT_JOBS);
  PlotPanel *panel = find_panel(p, quantity);
  if (panel == NULL || !isfinite(value))
    return;
  PlotPoint pt = {iteration, value};
  g_array_append_val(panel->curve[job], pt);
  gtk_widget_queue_draw(GTK_WIDGET(p));
}

void nw_plot_set_before(NwPlot *p, const char *quantity, double value)
{
  g_return_if_fail(NW_IS_PLOT(p));
  PlotPanel *panel = find_panel(p, quantity);
  if (panel != NULL)
    panel->before = value;
  gtk_widget_queue_draw(GTK_WIDGET(p));
}

void nw_plot_mark_level(NwPlot *p, int job, int iteration)
{
  g_return_if_fail(NW_IS_PLOT(p) && job >= 0 && job < NW_PLOT_JOBS);
  g_array_append_val(p->levels[job], iteration);
  gtk_widget_queue_draw(GTK_WIDGET(p));
}

guint nw_plot_n_points(NwPlot *p, int job, const char *quantity)
{
  g_return_val_if_fail(NW_IS_PLOT(p) && job >= 0 && job < NW_PLOT_JOBS, 0);
  PlotPanel *panel = find_panel(p, quantity);
  return panel != NULL ? panel->curve[job]->len : 0;
}

/* ---- drawing ---- */

/* 1, 2, 2.5 or 5 times a power of ten, at least raw. */
static double nice_step(double raw)
{
  double e = pow(10.0, floor(log10(raw)));
  static const double m[] = {1.0, 2.0, 2.5, 5.0, 10.0};
  for (guint k = 0; k < G_N_ELEMENTS(m); k++)
    if (m[k] * e >= raw * (1 - 1e-9))
      return m[k] * e;
  return 10.0 * e;
}

/* Widen [lo, hi] to whole tick steps, about 4 of them. */
static void nice_range(double dmin, double dmax, double *lo, double *hi, double *step)
{
  if (!(dmax > dmin)) { /* one value: a unit-ish band around it */
    double half = fabs(dmin) > 0 ? fabs(dmin) * 0.1 : 1.0;
    dmin -= half;
    dmax += half;
  }
  *step = nice_step((dmax - dmin) / 4.0);
  *lo = floor(dmin / *step + 1e-9) * *step;
  *hi = ceil(dmax / *step - 1e-9) * *step;
  if (!isfinite(*lo) || !isfinite(*hi) || !(*hi > *lo)) { /* extreme values: no nice ticks */
    *lo = dmin;
    *hi = dmax > dmin ? dmax : dmin + 1.0;
    *step = *hi - *lo;
  }
}

/* Tick count of a range (bounded: a huge value plus a small step must not loop). */
static int n_ticks(double lo, double hi, double step)
{
  double n = floor((hi - lo) / step + 1e-6);
  return isfinite(n) && n >= 0 ? (int)MIN(n, 20.0) : 0;
}

static double value_y(const Axis *a, double v)
{
  double h = a->y1 - a->y0 - 2 * NW_PLOT_PAD;
  return a->y1 - NW_PLOT_PAD - (v - a->lo) / (a->hi - a->lo) * h;
}

static double iter_x(const Axis *a, double it, double it_lo, double it_hi)
{
  return a->x0 + (it - it_lo) / (it_hi - it_lo) * (a->x1 - a->x0);
}

/* "min_jac" -> "min Jacobian" and the like. */
static char *quantity_title(const char *q)
{
  static const char *const map[][2] = {{"min_jac", "min Jacobian"},
                                       {"max_jac", "max Jacobian"},
                                       {"max_u", "max |u|"},
                                       {"mse", "MSE"},
                                       {"ncc", "NCC"},
                                       {"lcc", "LCC"},
                                       {"mi", "MI"},
                                       {"ssd", "SSD"}};
  for (guint k = 0; k < G_N_ELEMENTS(map); k++)
    if (strcmp(q, map[k][0]) == 0)
      return g_strdup(map[k][1]);
  return g_strdelimit(g_strdup(q), "_", ' ');
}

/* The y range of the points with iterations in [from, to), and of the value before when
 * with_before. */
static void panel_range(const PlotPanel *panel, double from, double to, gboolean with_before,
                        Axis *a)
{
  double dmin = INFINITY, dmax = -INFINITY;
  for (int j = 0; j < NW_PLOT_JOBS; j++)
    for (guint k = 0; k < panel->curve[j]->len; k++) {
      const PlotPoint *pt = &g_array_index(panel->curve[j], PlotPoint, k);
      if (pt->iteration < from || pt->iteration >= to)
        continue;
      dmin = MIN(dmin, pt->value);
      dmax = MAX(dmax, pt->value);
    }
  if (with_before && isfinite(panel->before)) {
    dmin = MIN(dmin, panel->before);
    dmax = MAX(dmax, panel->before);
  }
  if (strcmp(panel->quantity, "min_jac") == 0) { /* folds start at 0: keep it in view */
    dmin = MIN(dmin, 0.0);
    dmax = MAX(dmax, 0.0);
  }
  if (!isfinite(dmin)) {
    dmin = 0;
    dmax = 1;
  }
  nice_range(dmin, dmax, &a->lo, &a->hi, &a->step);
}

static void iteration_range(NwPlot *p, double *lo, double *hi)
{
  *lo = INFINITY;
  *hi = -INFINITY;
  for (int i = 0; i < p->n_panels; i++)
    for (int j = 0; j < NW_PLOT_JOBS; j++)
      for (guint k = 0; k < p->panels[i].curve[j]->len; k++) {
        int it = g_array_index(p->panels[i].curve[j], PlotPoint, k).iteration;
        *lo = MIN(*lo, it);
        *hi = MAX(*hi, it);
      }
  if (!isfinite(*lo)) {
    *lo = 0;
    *hi = 1;
  }
  if (!(*hi > *lo))
    *hi = *lo + 1;
}

static void draw_text(cairo_t *cr, double x, double y, const char *text, double align)
{
  cairo_text_extents_t ext;
  cairo_text_extents(cr, text, &ext);
  cairo_move_to(cr, x - align * ext.x_advance, y);
  cairo_show_text(cr, text);
}

/* Grid lines and tick labels: left of the axis (first column), or inside it at its left
 * edge (the columns of later levels). */
static void draw_y_axis(cairo_t *cr, const Axis *a, gboolean inside)
{
  const double font = inside ? 9 : 10;
  cairo_set_font_size(cr, font);
  int n = n_ticks(a->lo, a->hi, a->step);
  /* A short panel (six quantities in the Run page's plot) has ticks closer than a line of
   * text: label every k-th so that labels never overlap; the grid keeps every line. */
  const double tick_px = (a->y1 - a->y0 - 2 * NW_PLOT_PAD) / MAX(n, 1);
  const int every = tick_px > 0 ? MAX(1, (int)ceil((font + 2) / tick_px)) : n + 1;
  for (int k = 0; k <= n; k++) {
    double v = a->lo + k * a->step;
    double y = round(value_y(a, v)) + 0.5;
    cairo_set_source_rgb(cr, 0.9, 0.9, 0.9);
    cairo_set_line_width(cr, 1);
    cairo_move_to(cr, a->x0, y);
    cairo_line_to(cr, a->x1, y);
    cairo_stroke(cr);
    char label[32];
    g_snprintf(label, sizeof label, "%g", fabs(v) < a->step * 1e-6 ? 0.0 : v);
    if (k % every != 0)
      continue;
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    if (inside)
      draw_text(cr, a->x0 + 3, y - 2, label, 0.0);
    else
      draw_text(cr, a->x0 - 4, y + 3, label, 1.0);
  }
}

static void draw_x_axis(cairo_t *cr, const Axis *a, double it_lo, double it_hi)
{
  double lo, hi, step;
  nice_range(it_lo, it_hi, &lo, &hi, &step);
  step = MAX(step, 1.0);
  cairo_set_font_size(cr, 10);
  cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
  cairo_set_line_width(cr, 1);
  double first = ceil(it_lo / step) * step;
  int n = n_ticks(first, it_hi, step);
  for (int k = 0; k <= n; k++) {
    double t = first + k * step;
    double x = round(iter_x(a, t, it_lo, it_hi)) + 0.5;
    cairo_move_to(cr, x, a->y1);
    cairo_line_to(cr, x, a->y1 + 4);
    cairo_stroke(cr);
    char label[32];
    g_snprintf(label, sizeof label, "%g", t);
    draw_text(cr, x, a->y1 + 15, label, 0.5);
  }
  draw_text(cr, 0.5 * (a->x0 + a->x1), a->y1 + 28, "iteration", 0.5);
}

static void draw_levels(NwPlot *p, cairo_t *cr, const Axis *a, double it_lo, double it_hi)
{
  cairo_set_source_rgb(cr, 0.7, 0.7, 0.7);
  cairo_set_line_width(cr, 1);
  for (int j = 0; j < NW_PLOT_JOBS; j++)
    for (guint k = 0; k < p->levels[j]->len; k++) {
      int it = g_array_index(p->levels[j], int, k);
      if (it < it_lo || it > it_hi)
        continue;
      double x = round(iter_x(a, it, it_lo, it_hi)) + 0.5;
      cairo_move_to(cr, x, a->y0);
      cairo_line_to(cr, x, a->y1);
      cairo_stroke(cr);
    }
}

/* The points of curve with iterations in [from, to): x on the panel's iteration scale
 * (xa), y on the column's (a). */
static void draw_curve(cairo_t *cr, const Axis *xa, const Axis *a, GArray *curve, int job,
                       const double *rgb, double it_lo, double it_hi, double from, double to)
{
  static const double dash[] = {6.0, 4.0};
  cairo_set_dash(cr, dash, job == 0 ? 0 : 2, 0);
  cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
  cairo_set_line_width(cr, 1.5);
  int n = 0;
  for (guint k = 0; k < curve->len; k++) {
    const PlotPoint *pt = &g_array_index(curve, PlotPoint, k);
    if (pt->iteration < from || pt->iteration >= to)
      continue;
    double x = iter_x(xa, pt->iteration, it_lo, it_hi), y = value_y(a, pt->value);
    if (n++ == 0)
      cairo_move_to(cr, x, y);
    else
      cairo_line_to(cr, x, y);
  }
  if (n == 1) /* a single point: a short tick so it shows */
    cairo_rel_line_to(cr, 2, 0);
  if (n > 0)
    cairo_stroke(cr);
  cairo_set_dash(cr, NULL, 0, 0);
}

/* The columns: the first iteration of each of job 0's levels that falls in (it_lo, it_hi],
 * after it_lo itself; returns how many columns (starts[0..n-1]), starts[n] = past the end. */
static int level_columns(NwPlot *p, double it_lo, double it_hi, double starts[])
{
  int n = 0;
  starts[n++] = it_lo;
  for (guint k = 0; k < p->levels[0]->len && n < NW_PLOT_MAX_COLUMNS; k++) {
    const int it = g_array_index(p->levels[0], int, k);
    if (it > starts[n - 1] && it <= it_hi)
      starts[n++] = it;
  }
  starts[n] = it_hi + 1;
  return n;
}

/* The value before the registration: a dotted line across the last column. */
static void draw_before(cairo_t *cr, const Axis *a, double before)
{
  static const double dots[] = {2.0, 3.0};
  const double y = round(value_y(a, before)) + 0.5;
  cairo_set_source_rgb(cr, 0.35, 0.35, 0.35);
  cairo_set_line_width(cr, 1);
  cairo_set_dash(cr, dots, 2, 0);
  cairo_move_to(cr, a->x0, y);
  cairo_line_to(cr, a->x1, y);
  cairo_stroke(cr);
  cairo_set_dash(cr, NULL, 0, 0);
  cairo_set_font_size(cr, 9);
  draw_text(cr, a->x1 - 3, y - 3, "before", 1.0);
}

/* Job names with line samples, right-aligned on the title row of panel 0. */
static void draw_legend(NwPlot *p, cairo_t *cr, double x1, double y_text, const double *rgb)
{
  static const double dash[] = {6.0, 4.0};
  cairo_set_font_size(cr, 10);
  double x = x1;
  for (int j = NW_PLOT_JOBS - 1; j >= 0; j--) {
    cairo_text_extents_t ext;
    cairo_text_extents(cr, p->job_name[j], &ext);
    x -= ext.x_advance;
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    cairo_move_to(cr, x, y_text);
    cairo_show_text(cr, p->job_name[j]);
    x -= 24;
    cairo_set_dash(cr, dash, j == 0 ? 0 : 2, 0);
    cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
    cairo_set_line_width(cr, 1.5);
    cairo_move_to(cr, x, y_text - 3.5);
    cairo_line_to(cr, x + 20, y_text - 3.5);
    cairo_stroke(cr);
    cairo_set_dash(cr, NULL, 0, 0);
    x -= 10;
  }
}

static gboolean two_jobs_have_data(NwPlot *p)
{
  gboolean has[NW_PLOT_JOBS] = {FALSE, FALSE};
  for (int i = 0; i < p->n_panels; i++)
    for (int j = 0; j < NW_PLOT_JOBS; j++)
      has[j] = has[j] || p->panels[i].curve[j]->len > 0;
  return has[0] && has[1];
}

static void draw_panel(NwPlot *p, cairo_t *cr, int i, const Axis *a, double it_lo, double it_hi)
{
  PlotPanel *panel = &p->panels[i];
  const double *rgb = panel_colours[i % G_N_ELEMENTS(panel_colours)];
  g_autofree char *title = quantity_title(panel->quantity);
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  cairo_set_font_size(cr, 11);
  draw_text(cr, a->x0, a->y0 - 5, title, 0.0);
  if (i == 0 && two_jobs_have_data(p))
    draw_legend(p, cr, a->x1, a->y0 - 5, rgb);

  double starts[NW_PLOT_MAX_COLUMNS + 1];
  const int n_cols = level_columns(p, it_lo, it_hi, starts);
  for (int c = 0; c < n_cols; c++) {
    Axis col = *a;
    col.x0 = c == 0 ? a->x0 : round(iter_x(a, starts[c], it_lo, it_hi)) + 0.5;
    col.x1 = c == n_cols - 1 ? a->x1 : round(iter_x(a, starts[c + 1], it_lo, it_hi)) + 0.5;
    panel_range(panel, starts[c], starts[c + 1], c == n_cols - 1, &col);
    draw_y_axis(cr, &col, c > 0);
    if (i == 0 && n_cols > 1) { /* the levels named above the first panel */
      char name[32];
      g_snprintf(name, sizeof name, "level %d", c + 1);
      cairo_set_source_rgb(cr, 0.45, 0.45, 0.45);
      cairo_set_font_size(cr, 9);
      draw_text(cr, c == 0 ? col.x1 - 3 : col.x0 + 3, a->y0 - 5, name, c == 0 ? 1.0 : 0.0);
    }
    if (strcmp(panel->quantity, "min_jac") == 0) { /* below 0 the map folds */
      double y = round(value_y(&col, 0.0)) + 0.5;
      cairo_set_source_rgb(cr, 0.85, 0.1, 0.1);
      cairo_set_line_width(cr, 1);
      cairo_move_to(cr, col.x0, y);
      cairo_line_to(cr, col.x1, y);
      cairo_stroke(cr);
    }
    if (c == n_cols - 1 && isfinite(panel->before))
      draw_before(cr, &col, panel->before);
    cairo_save(cr);
    cairo_rectangle(cr, col.x0, a->y0, col.x1 - col.x0, a->y1 - a->y0);
    cairo_clip(cr);
    for (int j = 0; j < NW_PLOT_JOBS; j++)
      draw_curve(cr, a, &col, panel->curve[j], j, rgb, it_lo, it_hi, starts[c], starts[c + 1]);
    cairo_restore(cr);
  }
  draw_levels(p, cr, a, it_lo, it_hi);
  cairo_set_source_rgb(cr, 0.5, 0.5, 0.5);
  cairo_set_line_width(cr, 1);
  cairo_rectangle(cr, round(a->x0) + 0.5, round(a->y0) + 0.5, round(a->x1 - a->x0),
                  round(a->y1 - a->y0));
  cairo_stroke(cr);
}

static void draw_plot(NwPlot *p, cairo_t *cr, double width, double height)
{
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  if (p->n_panels == 0 || width < NW_PLOT_LEFT + NW_PLOT_RIGHT + 10)
    return;
  double ph = (height - NW_PLOT_TOP - NW_PLOT_BOTTOM) / p->n_panels;
  if (ph < NW_PLOT_TITLE + NW_PLOT_GAP + 2 * NW_PLOT_PAD + 2)
    return;
  double it_lo, it_hi;
  iteration_range(p, &it_lo, &it_hi);
  for (int i = 0; i < p->n_panels; i++) {
    double y0 = NW_PLOT_TOP + i * ph;
    Axis a = {
        NW_PLOT_LEFT, width - NW_PLOT_RIGHT, y0 + NW_PLOT_TITLE, y0 + ph - NW_PLOT_GAP, 0, 1, 1};
    draw_panel(p, cr, i, &a, it_lo, it_hi);
    if (i == p->n_panels - 1)
      draw_x_axis(cr, &a, it_lo, it_hi);
  }
}

typedef struct {
  NwPlot *plot;
  int width, height;
} PngJob;

static gboolean write_png(const char *tmp_path, gpointer data, GError **error)
{
  PngJob *job = data;
  cairo_surface_t *surface =
      cairo_image_surface_create(CAIRO_FORMAT_RGB24, job->width, job->height);
  cairo_t *cr = cairo_create(surface);
  draw_plot(job->plot, cr, job->width, job->height);
  cairo_destroy(cr);
  cairo_status_t st = cairo_surface_write_to_png(surface, tmp_path);
  cairo_surface_destroy(surface);
  if (st != CAIRO_STATUS_SUCCESS) {
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "cannot write PNG: %s", cairo_status_to_string(st));
    return FALSE;
  }
  return TRUE;
}

gboolean nw_plot_save_png(NwPlot *p, const char *path, int width, int height, GError **error)
{
  g_return_val_if_fail(NW_IS_PLOT(p) && path != NULL, FALSE);
  if (width < 1 || height < 1 || width > 16384 || height > 16384) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "%s: size %dx%d is outside 1..16384", path,
                width, height);
    return FALSE;
  }
  PngJob job = {p, width, height};
  return nw_write_atomically(path, write_png, &job, error);
}
