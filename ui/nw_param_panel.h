/* nw_param_panel.h — the parameter panel of a method, generated from its parameter table
 * (params.h): one row per parameter with its name, an editor that keeps the value in range
 * (spin button with the unit for numbers, switch for booleans, drop-down for choices), the
 * table's tooltip, and a "live" mark on parameters that may change while a job runs. While
 * a job runs (nw_param_panel_set_running) only live rows stay editable.
 *
 * Signal "changed" (no arguments): the user (or nw_param_panel_set_value) changed a value.
 * Main thread only. */
#ifndef NW_PARAM_PANEL_H
#define NW_PARAM_PANEL_H

#include <gtk/gtk.h>

#include "params.h"

G_BEGIN_DECLS

#define NW_TYPE_PARAM_PANEL (nw_param_panel_get_type())
G_DECLARE_FINAL_TYPE(NwParamPanel, nw_param_panel, NW, PARAM_PANEL, GtkGrid)

/* Editors for the table of params, showing its values (copied). */
GtkWidget *nw_param_panel_new(const NwParams *params);
/* The values now shown (a copy; free with nw_params_free). */
NwParams *nw_param_panel_get_params(NwParamPanel *p);
/* Show these values (same table); emits "changed" once. */
void nw_param_panel_set_params(NwParamPanel *p, const NwParams *params);
/* One value by name, from text as nw_params_set_string takes it; FALSE with the error
 * (unknown name, out of range) and nothing changed otherwise. */
gboolean nw_param_panel_set_value(NwParamPanel *p, const char *name, const char *text,
                                  GError **error);
/* TRUE: only live parameters are editable. */
void nw_param_panel_set_running(NwParamPanel *p, gboolean running);

G_END_DECLS

#endif
