/* nw_layer_list.c — the layer list widget (see nw_layer_list.h). Main thread only. */
#include "nw_layer_list.h"

#include <math.h>

struct _NwLayerList {
  GtkBox parent;
  NwScene *scene;
  GtkListBox *list;
  gulong layers_id;
  guint rebuild_id;    /* idle source of a pending rebuild */
  gboolean rebuilding; /* widget signals during a rebuild are not user edits */
  gboolean syncing;    /* nor while a row takes its layer's new values */
};

G_DEFINE_TYPE(NwLayerList, nw_layer_list, GTK_TYPE_BOX)

#define LAYER_KEY "nw-layer"
#define ROW_KEY "nw-row"

/* The widgets of a row that show a setting of its layer (NULL when the kind has none). */
typedef struct {
  GtkToggleButton *visible;
  GtkRange *opacity;
  GtkComboBox *colormap, *field_show;
  GtkSpinButton *lo, *hi;
  GtkLabel *table; /* label maps: the files their names come from */
} Row;

static NwLayer *row_layer(GtkWidget *w)
{
  return g_object_get_data(G_OBJECT(w), LAYER_KEY);
}

static gboolean user_edit(NwLayerList *ll)
{
  return !ll->rebuilding && !ll->syncing;
}

/* Each handler changes one setting through the layer's setter; the layer announces it and
 * the scene passes it on (views redraw, this list syncs the row: on_layer_changed). */
static void on_visible(GtkToggleButton *b, NwLayerList *ll)
{
  if (user_edit(ll))
    nw_layer_set_visible(row_layer(GTK_WIDGET(b)), gtk_toggle_button_get_active(b));
}

static void on_opacity(GtkRange *r, NwLayerList *ll)
{
  if (user_edit(ll))
    nw_layer_set_opacity(row_layer(GTK_WIDGET(r)), (float)gtk_range_get_value(r));
}

static void on_colormap(GtkComboBox *c, NwLayerList *ll)
{
  NwColormap m;
  if (user_edit(ll) && nw_colormap_from_name(gtk_combo_box_get_active_id(c), &m))
    nw_layer_set_colormap(row_layer(GTK_WIDGET(c)), m);
}

static void on_field_show(GtkComboBox *c, NwLayerList *ll)
{
  NwFieldShow s;
  if (user_edit(ll) && nw_field_show_from_name(gtk_combo_box_get_active_id(c), &s))
    nw_layer_set_field_show(row_layer(GTK_WIDGET(c)), s); /* with its colours and range */
}

static void on_lo(GtkSpinButton *s, NwLayerList *ll)
{
  NwLayer *l = row_layer(GTK_WIDGET(s));
  if (user_edit(ll))
    nw_layer_set_range(l, (float)gtk_spin_button_get_value(s), nw_layer_get_style(l)->hi);
}

static void on_hi(GtkSpinButton *s, NwLayerList *ll)
{
  NwLayer *l = row_layer(GTK_WIDGET(s));
  if (user_edit(ll))
    nw_layer_set_range(l, nw_layer_get_style(l)->lo, (float)gtk_spin_button_get_value(s));
}

/* Up: drawn over the layer above it in the list; down: under the one below. */
static void on_raise(GtkButton *b, NwLayerList *ll)
{
  NwLayer *l = row_layer(GTK_WIDGET(b));
  nw_scene_move_layer(ll->scene, l, (guint)nw_scene_layer_index(ll->scene, l) + 1);
}

static void on_lower(GtkButton *b, NwLayerList *ll)
{
  NwLayer *l = row_layer(GTK_WIDGET(b));
  const int i = nw_scene_layer_index(ll->scene, l);
  if (i > 0)
    nw_scene_move_layer(ll->scene, l, (guint)i - 1);
}

static GtkWidget *tagged(GtkWidget *w, NwLayer *l)
{
  g_object_set_data(G_OBJECT(w), LAYER_KEY, l);
  gtk_widget_set_visible(w, TRUE);
  return w;
}

static GtkWidget *caption(const char *text, NwLayer *l)
{
  GtkWidget *c = tagged(gtk_label_new(text), l);
  gtk_label_set_xalign(GTK_LABEL(c), 1.0f);
  gtk_style_context_add_class(gtk_widget_get_style_context(c), "dim-label");
  return c;
}

static const char *kind_tag(NwLayer *l)
{
  static const char *const tags[] = {"image", "labels", "field", "surface"};
  return tags[nw_layer_get_kind(l)];
}

/* A range spin's bounds hold the data and the current range with a span to spare. */
static void set_range_spin(GtkSpinButton *s, NwLayer *l, float value)
{
  const NwLayerStyle *st = nw_layer_get_style(l);
  float data_min, data_max;
  nw_layer_get_data_range(l, &data_min, &data_max);
  double span = MAX(fabs((double)data_max - data_min), 1.0);
  double lo = MIN(data_min, st->lo) - span, hi = MAX(data_max, st->hi) + span;
  gtk_spin_button_set_range(s, lo, hi);
  gtk_spin_button_set_increments(s, span / 100.0, span / 10.0);
  gtk_spin_button_set_digits(s, span < 10 ? 3 : 1);
  gtk_spin_button_set_value(s, value);
}

static GtkSpinButton *range_spin(NwLayerList *ll, NwLayer *l, float value, GCallback cb)
{
  GtkWidget *s = gtk_spin_button_new_with_range(0.0, 1.0, 1.0);
  set_range_spin(GTK_SPIN_BUTTON(s), l, value);
  gtk_entry_set_width_chars(GTK_ENTRY(s), 7);
  g_signal_connect(s, "value-changed", cb, ll);
  return GTK_SPIN_BUTTON(tagged(s, l));
}

/* Where a label map's names come from: the files' names (full paths in the tooltip). */
static void show_table(GtkLabel *label, NwLayer *l)
{
  NwLabelTable *t = nw_layer_get_label_table(l);
  g_autoptr(GString) shown = g_string_new(NULL);
  g_auto(GStrv) files = g_strsplit(t != NULL ? nw_label_table_sources(t) : "", "; ", -1);
  for (int i = 0; files[i] != NULL && files[i][0] != '\0'; i++) {
    g_autofree char *base = g_path_get_basename(files[i]);
    g_string_append_printf(shown, "%s%s", i > 0 ? ", " : "", base);
  }
  gtk_label_set_text(label, shown->len > 0 ? shown->str : "numbers only");
  gtk_widget_set_tooltip_text(GTK_WIDGET(label), t != NULL
                                                     ? nw_label_table_sources(t)
                                                     : "Main menu → Load label names and colours…");
}

/* The row's widgets take the layer's values (a setting changed elsewhere: a script, a
 * window/level drag, a preset, or the field drawing that brings its own colours). */
static void sync_row(NwLayerList *ll, Row *row, NwLayer *l)
{
  const NwLayerStyle *st = nw_layer_get_style(l);
  ll->syncing = TRUE;
  gtk_toggle_button_set_active(row->visible, nw_layer_get_visible(l));
  gtk_range_set_value(row->opacity, st->opacity);
  if (row->colormap != NULL)
    gtk_combo_box_set_active_id(row->colormap, nw_colormap_name(st->colormap));
  if (row->field_show != NULL)
    gtk_combo_box_set_active_id(row->field_show, nw_field_show_name(nw_layer_get_field_show(l)));
  if (row->lo != NULL && gtk_spin_button_get_value(row->lo) != st->lo)
    set_range_spin(row->lo, l, st->lo);
  if (row->hi != NULL && gtk_spin_button_get_value(row->hi) != st->hi)
    set_range_spin(row->hi, l, st->hi);
  if (row->table != NULL)
    show_table(row->table, l);
  ll->syncing = FALSE;
}

static GtkWidget *controls_row(NwLayerList *ll, NwLayer *l, Row *r)
{
  const NwLayerStyle *st = nw_layer_get_style(l);
  GtkWidget *grid = tagged(gtk_grid_new(), l);
  gtk_grid_set_column_spacing(GTK_GRID(grid), 4);
  gtk_grid_set_row_spacing(GTK_GRID(grid), 2);
  g_object_set(grid, "margin", 4, NULL);

  GtkWidget *vis = tagged(gtk_check_button_new(), l);
  gtk_widget_set_name(vis, "layer-visible");
  gtk_toggle_button_set_active(GTK_TOGGLE_BUTTON(vis), nw_layer_get_visible(l));
  gtk_widget_set_tooltip_text(vis, "Show or hide this layer");
  g_signal_connect(vis, "toggled", G_CALLBACK(on_visible), ll);
  gtk_widget_set_halign(vis, GTK_ALIGN_END);
  gtk_grid_attach(GTK_GRID(grid), vis, 0, 0, 1, 1);
  r->visible = GTK_TOGGLE_BUTTON(vis);
  g_autofree char *markup =
      g_markup_printf_escaped("<b>%s</b> <small>%s%s</small>", nw_layer_get_name(l), kind_tag(l),
                              l == nw_scene_get_compare_a(ll->scene)   ? " · compare A"
                              : l == nw_scene_get_compare_b(ll->scene) ? " · compare B"
                                                                       : "");
  GtkWidget *name = tagged(gtk_label_new(NULL), l);
  gtk_label_set_markup(GTK_LABEL(name), markup);
  gtk_label_set_xalign(GTK_LABEL(name), 0.0f);
  gtk_label_set_ellipsize(GTK_LABEL(name), PANGO_ELLIPSIZE_MIDDLE);
  gtk_widget_set_hexpand(name, TRUE);
  gtk_grid_attach(GTK_GRID(grid), name, 1, 0, 2, 1);
  GtkWidget *order = tagged(gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 0), l);
  gtk_style_context_add_class(gtk_widget_get_style_context(order), "linked");
  static const struct {
    const char *icon, *name, *tip;
    GCallback cb;
  } moves[] = {
      {"go-up-symbolic", "layer-raise", "Draw over the layer above", G_CALLBACK(on_raise)},
      {"go-down-symbolic", "layer-lower", "Draw under the layer below", G_CALLBACK(on_lower)}};
  for (int i = 0; i < 2; i++) {
    GtkWidget *b = tagged(gtk_button_new_from_icon_name(moves[i].icon, GTK_ICON_SIZE_MENU), l);
    gtk_widget_set_name(b, moves[i].name);
    gtk_widget_set_tooltip_text(b, moves[i].tip);
    gtk_button_set_relief(GTK_BUTTON(b), GTK_RELIEF_NONE);
    g_signal_connect(b, "clicked", moves[i].cb, ll);
    gtk_box_pack_start(GTK_BOX(order), b, FALSE, FALSE, 0);
  }
  gtk_grid_attach(GTK_GRID(grid), order, 3, 0, 1, 1);

  GtkWidget *op = tagged(gtk_scale_new_with_range(GTK_ORIENTATION_HORIZONTAL, 0, 1, 0.05), l);
  gtk_widget_set_name(op, "layer-opacity");
  gtk_scale_set_draw_value(GTK_SCALE(op), FALSE);
  gtk_range_set_value(GTK_RANGE(op), st->opacity);
  gtk_widget_set_tooltip_text(op, "Opacity");
  gtk_widget_set_hexpand(op, TRUE);
  g_signal_connect(op, "value-changed", G_CALLBACK(on_opacity), ll);
  gtk_grid_attach(GTK_GRID(grid), caption("opacity", l), 0, 1, 1, 1);
  gtk_grid_attach(GTK_GRID(grid), op, 1, 1, 3, 1);
  r->opacity = GTK_RANGE(op);

  int row = 2;
  const NwSurface *surf = nw_layer_get_surface(l);
  gboolean mapped = nw_layer_get_kind(l) != NW_LAYER_SURFACE || surf->scalars != NULL;
  if (mapped) {
    GtkWidget *cm = tagged(gtk_combo_box_text_new(), l);
    gtk_widget_set_name(cm, "layer-colormap");
    for (int m = 0; m < NW_COLORMAP_COUNT; m++)
      gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(cm), nw_colormap_name(m), nw_colormap_name(m));
    gtk_combo_box_set_active_id(GTK_COMBO_BOX(cm), nw_colormap_name(st->colormap));
    gtk_widget_set_tooltip_text(cm, "Colour map");
    g_signal_connect(cm, "changed", G_CALLBACK(on_colormap), ll);
    gtk_grid_attach(GTK_GRID(grid), caption("colours", l), 0, row, 1, 1);
    gtk_grid_attach(GTK_GRID(grid), cm, 1, row++, 3, 1);
    r->colormap = GTK_COMBO_BOX(cm);
  }
  if (nw_layer_get_kind(l) == NW_LAYER_FIELD) {
    GtkWidget *fs = tagged(gtk_combo_box_text_new(), l);
    gtk_widget_set_name(fs, "layer-field-show");
    for (int s = 0; s < NW_FIELD_SHOW_COUNT; s++)
      gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(fs), nw_field_show_name(s),
                                nw_field_show_name(s));
    gtk_combo_box_set_active_id(GTK_COMBO_BOX(fs), nw_field_show_name(nw_layer_get_field_show(l)));
    gtk_widget_set_tooltip_text(fs, "How the displacement field is drawn");
    g_signal_connect(fs, "changed", G_CALLBACK(on_field_show), ll);
    gtk_grid_attach(GTK_GRID(grid), caption("draw as", l), 0, row, 1, 1);
    gtk_grid_attach(GTK_GRID(grid), fs, 1, row++, 3, 1);
    r->field_show = GTK_COMBO_BOX(fs);
  }
  if (nw_layer_get_kind(l) == NW_LAYER_LABELS) {
    GtkWidget *names = tagged(gtk_label_new(NULL), l);
    gtk_widget_set_name(names, "layer-label-table");
    gtk_label_set_xalign(GTK_LABEL(names), 0.0f);
    gtk_label_set_ellipsize(GTK_LABEL(names), PANGO_ELLIPSIZE_MIDDLE);
    r->table = GTK_LABEL(names);
    show_table(r->table, l);
    gtk_grid_attach(GTK_GRID(grid), caption("names", l), 0, row, 1, 1);
    gtk_grid_attach(GTK_GRID(grid), names, 1, row++, 3, 1);
  }
  if (nw_layer_get_kind(l) != NW_LAYER_LABELS && mapped) {
    r->lo = range_spin(ll, l, st->lo, G_CALLBACK(on_lo));
    r->hi = range_spin(ll, l, st->hi, G_CALLBACK(on_hi));
    gtk_widget_set_name(GTK_WIDGET(r->lo), "layer-lo");
    gtk_widget_set_name(GTK_WIDGET(r->hi), "layer-hi");
    gtk_grid_attach(GTK_GRID(grid), caption("range", l), 0, row, 1, 1);
    gtk_grid_attach(GTK_GRID(grid), GTK_WIDGET(r->lo), 1, row, 1, 1);
    gtk_grid_attach(GTK_GRID(grid), GTK_WIDGET(r->hi), 2, row, 2, 1);
  }
  return grid;
}

static void rebuild(NwScene *scene, NwLayerList *ll)
{
  ll->rebuilding = TRUE;
  GList *children = gtk_container_get_children(GTK_CONTAINER(ll->list));
  for (GList *c = children; c != NULL; c = c->next)
    gtk_widget_destroy(c->data);
  g_list_free(children);
  NwLayer *active = nw_scene_get_active(scene);
  /* the top row is the layer drawn on top, as in other viewers */
  for (guint k = nw_scene_n_layers(scene); k-- > 0;) {
    NwLayer *l = nw_scene_get_layer(scene, k);
    /* the row keeps its layer alive: the scene may drop it before the next rebuild */
    GtkWidget *row = gtk_list_box_row_new();
    g_object_set_data_full(G_OBJECT(row), LAYER_KEY, g_object_ref(l), g_object_unref);
    gtk_widget_set_visible(row, TRUE);
    Row *r = g_new0(Row, 1);
    g_object_set_data_full(G_OBJECT(row), ROW_KEY, r, g_free);
    gtk_container_add(GTK_CONTAINER(row), controls_row(ll, l, r));
    gtk_list_box_insert(ll->list, row, -1);
    if (l == active)
      gtk_list_box_select_row(ll->list, GTK_LIST_BOX_ROW(row));
  }
  ll->rebuilding = FALSE;
}

/* Rebuild on idle: the signal may come from one of the row's own widgets, which the rebuild
 * destroys. */
static gboolean rebuild_idle(gpointer data)
{
  NwLayerList *ll = data;
  ll->rebuild_id = 0;
  rebuild(ll->scene, ll);
  return G_SOURCE_REMOVE;
}

static void on_layers_changed(NwScene *scene, NwLayerList *ll)
{
  if (ll->rebuild_id == 0)
    ll->rebuild_id = g_idle_add(rebuild_idle, ll);
}

static void on_layer_changed(NwScene *scene, NwLayer *layer, NwLayerList *ll)
{
  GList *children = gtk_container_get_children(GTK_CONTAINER(ll->list));
  for (GList *c = children; c != NULL; c = c->next)
    if (row_layer(c->data) == layer)
      sync_row(ll, g_object_get_data(G_OBJECT(c->data), ROW_KEY), layer);
  g_list_free(children);
}

static void on_row_selected(GtkListBox *box, GtkListBoxRow *row, NwLayerList *ll)
{
  if (ll->rebuilding || row == NULL)
    return;
  /* setting the active layer emits layers-changed, which would rebuild under our feet */
  g_signal_handler_block(ll->scene, ll->layers_id);
  nw_scene_set_active(ll->scene, row_layer(GTK_WIDGET(row)));
  g_signal_handler_unblock(ll->scene, ll->layers_id);
}

static void nw_layer_list_dispose(GObject *obj)
{
  NwLayerList *ll = NW_LAYER_LIST(obj);
  if (ll->rebuild_id != 0) {
    g_source_remove(ll->rebuild_id);
    ll->rebuild_id = 0;
  }
  if (ll->scene != NULL) {
    g_signal_handlers_disconnect_by_data(ll->scene, ll);
    g_clear_object(&ll->scene);
  }
  G_OBJECT_CLASS(nw_layer_list_parent_class)->dispose(obj);
}

static void nw_layer_list_class_init(NwLayerListClass *klass)
{
  G_OBJECT_CLASS(klass)->dispose = nw_layer_list_dispose;
}

static void nw_layer_list_init(NwLayerList *ll)
{
  gtk_orientable_set_orientation(GTK_ORIENTABLE(ll), GTK_ORIENTATION_VERTICAL);
  ll->list = GTK_LIST_BOX(gtk_list_box_new());
  gtk_list_box_set_selection_mode(ll->list, GTK_SELECTION_BROWSE);
  g_signal_connect(ll->list, "row-selected", G_CALLBACK(on_row_selected), ll);
  gtk_widget_set_visible(GTK_WIDGET(ll->list), TRUE);
  gtk_box_pack_start(GTK_BOX(ll), GTK_WIDGET(ll->list), TRUE, TRUE, 0);
}

NwLayerList *nw_layer_list_new(NwScene *scene)
{
  NwLayerList *ll = g_object_new(NW_TYPE_LAYER_LIST, NULL);
  ll->scene = g_object_ref(scene);
  ll->layers_id = g_signal_connect(scene, "layers-changed", G_CALLBACK(on_layers_changed), ll);
  g_signal_connect(scene, "layer-changed", G_CALLBACK(on_layer_changed), ll);
  rebuild(scene, ll);
  return ll;
}

GPtrArray *nw_layer_list_get_rows(NwLayerList *ll)
{
  if (ll->rebuild_id != 0) { /* the rows the next idle would show */
    g_source_remove(ll->rebuild_id);
    rebuild_idle(ll);
  }
  GPtrArray *rows = g_ptr_array_new();
  g_autoptr(GList) children = gtk_container_get_children(GTK_CONTAINER(ll->list));
  for (GList *c = children; c != NULL; c = c->next)
    g_ptr_array_add(rows, row_layer(c->data));
  return rows;
}
