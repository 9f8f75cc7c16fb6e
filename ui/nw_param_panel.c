/* nw_param_panel.c — the parameter panel of a method: a GtkGrid with one row per entry of
 * the method's parameter table (params.h). Columns: label (the name in words), editor
 * (spin button / switch / drop-down, named "param-NAME"), unit, and a "●" on live rows.
 *
 * The panel keeps its own NwParams (the values shown); editors write into it after the
 * table's validation, so get_params never returns an out-of-range value.
 * Main thread only (GTK); no GPU. */
#include "nw_param_panel.h"

#include <math.h>
#include <string.h>

#include "nw_error.h"

struct _NwParamPanel {
  GtkGrid parent_instance;
  NwParams *params;    /* the values shown; owned */
  GtkWidget **editors; /* [params->n], owned by the grid */
  gboolean updating;   /* TRUE while the panel itself sets editors: no "changed" */
  gboolean running;
};

G_DEFINE_TYPE(NwParamPanel, nw_param_panel, GTK_TYPE_GRID)

enum { SIGNAL_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void nw_param_panel_finalize(GObject *object)
{
  NwParamPanel *p = NW_PARAM_PANEL(object);
  nw_params_free(p->params);
  g_free(p->editors);
  G_OBJECT_CLASS(nw_param_panel_parent_class)->finalize(object);
}

static void nw_param_panel_class_init(NwParamPanelClass *klass)
{
  G_OBJECT_CLASS(klass)->finalize = nw_param_panel_finalize;
  signals[SIGNAL_CHANGED] = g_signal_new("changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                         NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void nw_param_panel_init(NwParamPanel *p)
{
  gtk_grid_set_row_spacing(GTK_GRID(p), 4);
  gtk_grid_set_column_spacing(GTK_GRID(p), 6);
}

/* "sigma-fluid" -> "Sigma fluid". */
static char *name_in_words(const char *name)
{
  char *s = g_strdelimit(g_strdup(name), "-_", ' ');
  if (s[0] != '\0')
    s[0] = g_ascii_toupper(s[0]);
  return s;
}

/* Which row an editor belongs to (set as object data at creation). */
static int editor_index(GtkWidget *w)
{
  return GPOINTER_TO_INT(g_object_get_data(G_OBJECT(w), "nw-index"));
}

/* An editor reports a user edit: validate into the values, then tell listeners. */
static void editor_commit(NwParamPanel *p, int i, double value)
{
  if (p->updating)
    return;
  g_autoptr(GError) error = NULL;
  if (!nw_params_set(p->params, p->params->specs[i].name, value, &error)) {
    g_debug("parameter panel: %s", error->message); /* editors keep values in range */
    return;
  }
  g_signal_emit(p, signals[SIGNAL_CHANGED], 0);
}

static void on_spin_changed(GtkSpinButton *spin, NwParamPanel *p)
{
  editor_commit(p, editor_index(GTK_WIDGET(spin)), gtk_spin_button_get_value(spin));
}

static void on_switch_active(GObject *sw, GParamSpec *pspec, NwParamPanel *p)
{
  (void)pspec;
  gboolean on = gtk_switch_get_active(GTK_SWITCH(sw));
  editor_commit(p, editor_index(GTK_WIDGET(sw)), on ? 1.0 : 0.0);
}

static void on_combo_changed(GtkComboBox *combo, NwParamPanel *p)
{
  int active = gtk_combo_box_get_active(combo);
  if (active >= 0)
    editor_commit(p, editor_index(GTK_WIDGET(combo)), active);
}

/* Doubles show with %g so that 1e-06 and 1.75 both read naturally; 10 digits so that
 * reading the text back (on focus-out) does not round the value. */
static gboolean on_spin_output(GtkSpinButton *spin, gpointer unused)
{
  (void)unused;
  char text[G_ASCII_DTOSTR_BUF_SIZE];
  g_ascii_formatd(text, sizeof text, "%.10g", gtk_spin_button_get_value(spin));
  if (g_strcmp0(text, gtk_entry_get_text(GTK_ENTRY(spin))) != 0)
    gtk_entry_set_text(GTK_ENTRY(spin), text);
  return TRUE;
}

static gint on_spin_input(GtkSpinButton *spin, double *new_value, gpointer unused)
{
  (void)unused;
  const char *text = gtk_entry_get_text(GTK_ENTRY(spin));
  char *end = NULL;
  double v = g_ascii_strtod(text, &end);
  if (end == text || !isfinite(v))
    return GTK_INPUT_ERROR;
  *new_value = v;
  return TRUE;
}

static GtkWidget *make_spin(NwParamPanel *p, const NwParamSpec *s)
{
  double range = s->max - s->min;
  gboolean is_int = s->type == NW_PARAM_INT;
  /* ints step by 1; doubles by ~1% of the range, at most 0.1 */
  double step = is_int ? 1.0 : MIN(0.1, range / 100.0);
  GtkAdjustment *adj = gtk_adjustment_new(s->def, s->min, s->max, step, step * 10, 0);
  GtkWidget *spin = gtk_spin_button_new(adj, step, is_int ? 0 : 6);
  gtk_spin_button_set_numeric(GTK_SPIN_BUTTON(spin), FALSE);
  gtk_entry_set_width_chars(GTK_ENTRY(spin), 8);
  if (!is_int) {
    g_signal_connect(spin, "output", G_CALLBACK(on_spin_output), NULL);
    g_signal_connect(spin, "input", G_CALLBACK(on_spin_input), NULL);
  }
  g_signal_connect(spin, "value-changed", G_CALLBACK(on_spin_changed), p);
  return spin;
}

static GtkWidget *make_editor(NwParamPanel *p, const NwParamSpec *s)
{
  switch (s->type) {
  case NW_PARAM_BOOL: {
    GtkWidget *sw = gtk_switch_new();
    gtk_widget_set_halign(sw, GTK_ALIGN_START);
    g_signal_connect(sw, "notify::active", G_CALLBACK(on_switch_active), p);
    return sw;
  }
  case NW_PARAM_ENUM: {
    GtkWidget *combo = gtk_combo_box_text_new();
    for (int c = 0; s->choices != NULL && s->choices[c] != NULL; c++)
      gtk_combo_box_text_append_text(GTK_COMBO_BOX_TEXT(combo), s->choices[c]);
    g_signal_connect(combo, "changed", G_CALLBACK(on_combo_changed), p);
    return combo;
  }
  case NW_PARAM_INT:
  case NW_PARAM_DOUBLE:
  default:
    return make_spin(p, s);
  }
}

/* Show value in editor i without emitting "changed". */
static void editor_show(NwParamPanel *p, int i)
{
  GtkWidget *w = p->editors[i];
  double v = p->params->values[i];
  gboolean was = p->updating;
  p->updating = TRUE;
  if (GTK_IS_SWITCH(w))
    gtk_switch_set_active(GTK_SWITCH(w), v != 0.0);
  else if (GTK_IS_COMBO_BOX(w))
    gtk_combo_box_set_active(GTK_COMBO_BOX(w), (int)v);
  else
    gtk_spin_button_set_value(GTK_SPIN_BUTTON(w), v);
  p->updating = was;
}

static void add_row(NwParamPanel *p, int i)
{
  const NwParamSpec *s = &p->params->specs[i];
  g_autofree char *words = name_in_words(s->name);
  g_autofree char *id = g_strdup_printf("param-%s", s->name);

  GtkWidget *label = gtk_label_new(words);
  gtk_widget_set_halign(label, GTK_ALIGN_START);
  gtk_widget_set_tooltip_text(label, s->tooltip);
  gtk_grid_attach(GTK_GRID(p), label, 0, i, 1, 1);

  GtkWidget *editor = make_editor(p, s);
  gtk_widget_set_name(editor, id);
  gtk_widget_set_tooltip_text(editor, s->tooltip);
  gtk_widget_set_hexpand(editor, TRUE);
  g_object_set_data(G_OBJECT(editor), "nw-index", GINT_TO_POINTER(i));
  gtk_grid_attach(GTK_GRID(p), editor, 1, i, 1, 1);
  p->editors[i] = editor;

  GtkWidget *unit = gtk_label_new(s->unit != NULL ? s->unit : "");
  gtk_widget_set_halign(unit, GTK_ALIGN_START);
  gtk_grid_attach(GTK_GRID(p), unit, 2, i, 1, 1);

  if (s->live) {
    GtkWidget *mark = gtk_label_new("●");
    g_autofree char *mark_id = g_strdup_printf("param-%s-live", s->name);
    gtk_widget_set_name(mark, mark_id);
    gtk_widget_set_tooltip_text(mark, "may change while the job runs");
    gtk_grid_attach(GTK_GRID(p), mark, 3, i, 1, 1);
  }
  editor_show(p, i);
}

GtkWidget *nw_param_panel_new(const NwParams *params)
{
  g_return_val_if_fail(params != NULL, NULL);
  NwParamPanel *p = g_object_new(NW_TYPE_PARAM_PANEL, NULL);
  p->params = nw_params_copy(params);
  p->editors = g_new0(GtkWidget *, MAX(params->n, 1));
  for (int i = 0; i < params->n; i++)
    add_row(p, i);
  return GTK_WIDGET(p);
}

NwParams *nw_param_panel_get_params(NwParamPanel *p)
{
  g_return_val_if_fail(NW_IS_PARAM_PANEL(p), NULL);
  return nw_params_copy(p->params);
}

void nw_param_panel_set_params(NwParamPanel *p, const NwParams *params)
{
  g_return_if_fail(NW_IS_PARAM_PANEL(p) && params != NULL);
  g_return_if_fail(params->specs == p->params->specs && params->n == p->params->n);
  memcpy(p->params->values, params->values, (size_t)params->n * sizeof(double));
  for (int i = 0; i < params->n; i++)
    editor_show(p, i);
  g_signal_emit(p, signals[SIGNAL_CHANGED], 0);
}

gboolean nw_param_panel_set_value(NwParamPanel *p, const char *name, const char *text,
                                  GError **error)
{
  g_return_val_if_fail(NW_IS_PARAM_PANEL(p) && name != NULL && text != NULL, FALSE);
  /* validate on a copy: the table's message names the parameter, value and range */
  g_autoptr(NwParams) next = nw_params_copy(p->params);
  if (!nw_params_set_string(next, name, text, error))
    return FALSE;
  int i = nw_params_find(next, name);
  p->params->values[i] = next->values[i];
  editor_show(p, i);
  g_signal_emit(p, signals[SIGNAL_CHANGED], 0);
  return TRUE;
}

void nw_param_panel_set_running(NwParamPanel *p, gboolean running)
{
  g_return_if_fail(NW_IS_PARAM_PANEL(p));
  p->running = running;
  for (int i = 0; i < p->params->n; i++)
    gtk_widget_set_sensitive(p->editors[i], !running || p->params->specs[i].live);
}
