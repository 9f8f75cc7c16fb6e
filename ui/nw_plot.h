/* nw_plot.h — the live plot of a job's figures against iteration, drawn with cairo: one
 * panel per quantity (e.g. "energy", the metric, "min_jac"), each with its own y range
 * (autoscaled, with tick labels), the iteration on x, vertical marks where a new pyramid
 * level starts (each level of job 0 then has a y scale of its own, nw_plot.c), the value
 * before the registration as a dotted line, and one curve per job (job 0 solid, job 1 dashed, with
 * a legend naming them) so that two jobs side by side can be compared. min_jac panels draw a red
 * line at 0 (folds below it).
 *
 * Main thread only. Points are kept (a GArray per curve); thousands are cheap. */
#ifndef NW_PLOT_H
#define NW_PLOT_H

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define NW_TYPE_PLOT (nw_plot_get_type())
G_DECLARE_FINAL_TYPE(NwPlot, nw_plot, NW, PLOT, GtkDrawingArea)

/* quantities: NULL-terminated figure names, one panel each, top to bottom. */
GtkWidget *nw_plot_new(const char *const *quantities);
/* Forget every curve (a new run). */
void nw_plot_clear(NwPlot *p);
/* The legend's name for job (0 or 1), e.g. "CUDA" / "CPU" or "σ 1.0" / "σ 2.0". */
void nw_plot_set_job_name(NwPlot *p, int job, const char *name);
/* Add the point (iteration, value) to job's curve of quantity (ignored when the plot has
 * no such panel or value is not finite); queues a redraw. */
void nw_plot_add(NwPlot *p, int job, const char *quantity, int iteration, double value);
/* The quantity's value before the registration (e.g. NCC of the unregistered pair), drawn
 * across the last level; forgotten by nw_plot_clear. */
void nw_plot_set_before(NwPlot *p, const char *quantity, double value);
/* A new pyramid level starts at iteration (drawn as a vertical mark). */
void nw_plot_mark_level(NwPlot *p, int job, int iteration);
/* Number of points job's curve of quantity holds (for tests). */
guint nw_plot_n_points(NwPlot *p, int job, const char *quantity);
/* Draw the plot at width x height into a PNG (for tests and scripted screenshots). */
gboolean nw_plot_save_png(NwPlot *p, const char *path, int width, int height, GError **error);

G_END_DECLS

#endif
