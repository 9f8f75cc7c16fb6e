/* nw_run_panel_surface.c — the Run page's control for methods whose input is a level set
 * (NwMethodOps.level_set_input: "nlm-surface"): the "Label" row, which says which label of a
 * label volume the surface is made of ("auto": a label layer's label with the most voxels,
 * else the volume is a mask or a signed distance by its values; scene/nw_run_level_set.h),
 * shown only while such a method is picked. Main thread only. */
#include <stdlib.h>
#include <string.h>

#include "nw_error.h"
#include "nw_run_level_set.h"
#include "nw_run_panel_private.h"

/* The label typed, or NW_RUN_LABEL_AUTO for an empty box ("auto" is its placeholder) or
 * "auto"; FALSE for anything else. */
static gboolean parse_label(const char *text, int *label)
{
  g_autofree char *t = g_strstrip(g_strdup(text));
  char *end = NULL;
  const long v = strtol(t, &end, 10);
  if (*t == '\0' || strcmp(t, "auto") == 0)
    *label = NW_RUN_LABEL_AUTO;
  else if (end != t && *end == '\0' && v >= 0 && v <= 65535)
    *label = (int)v;
  else
    return FALSE;
  return TRUE;
}

/* What the box says is what the next start uses; text that is no label is marked, and auto
 * is used meanwhile. */
static void on_label_changed(GtkEntry *e, gpointer data)
{
  NwRunPanel *p = data;
  const gboolean ok = parse_label(gtk_entry_get_text(e), &p->surface_label);
  if (!ok)
    p->surface_label = NW_RUN_LABEL_AUTO;
  gtk_entry_set_icon_from_icon_name(e, GTK_ENTRY_ICON_SECONDARY,
                                    ok ? NULL : "dialog-warning-symbolic");
  gtk_entry_set_icon_tooltip_text(e, GTK_ENTRY_ICON_SECONDARY,
                                  ok ? NULL : "Not a label (0 to 65535): auto is used");
}

void nw_run_panel_build_surface_label(NwRunPanel *p, GtkBox *box)
{
  p->label_row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
  GtkWidget *l = gtk_label_new("Label");
  gtk_widget_set_size_request(l, 60, -1);
  gtk_label_set_xalign(GTK_LABEL(l), 0.0f);
  p->label_entry = GTK_ENTRY(gtk_entry_new());
  gtk_widget_set_name(GTK_WIDGET(p->label_entry), "surface-label");
  gtk_entry_set_placeholder_text(p->label_entry, "auto");
  gtk_entry_set_input_purpose(p->label_entry, GTK_INPUT_PURPOSE_DIGITS);
  p->surface_label = NW_RUN_LABEL_AUTO;
  gtk_widget_set_tooltip_text(
      GTK_WIDGET(p->label_entry),
      "Which label of a label volume is the surface (the inside). Empty (auto): a label "
      "layer's label with the most voxels; any other image is read as a binary mask (0 "
      "outside) or a signed distance (mm, negative inside) by its values");
  g_signal_connect(p->label_entry, "changed", G_CALLBACK(on_label_changed), p);
  gtk_box_pack_start(GTK_BOX(p->label_row), l, FALSE, FALSE, 0);
  gtk_box_pack_start(GTK_BOX(p->label_row), GTK_WIDGET(p->label_entry), TRUE, TRUE, 0);
  gtk_box_pack_start(box, p->label_row, FALSE, FALSE, 0);
  gtk_widget_set_no_show_all(p->label_row, TRUE); /* shown for level-set methods only */
  gtk_widget_show(l);
  gtk_widget_show(GTK_WIDGET(p->label_entry));
}

void nw_run_panel_sync_surface_label(NwRunPanel *p)
{
  const NwMethodOps *ops = p->method != NULL ? nw_method_lookup_table(p->method, NULL) : NULL;
  gtk_widget_set_visible(p->label_row, ops != NULL && ops->level_set_input);
}

gboolean nw_run_panel_set_surface_label(NwRunPanel *p, int label, GError **error)
{
  if (label > 65535) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "label %d: labels go up to 65535", label);
    return FALSE;
  }
  g_autofree char *text = label < 0 ? g_strdup("") : g_strdup_printf("%d", label);
  gtk_entry_set_text(p->label_entry, text); /* "changed" sets p->surface_label */
  return TRUE;
}

/* What the picker's tooltip adds for a level-set method: what it takes from the window. */
const char *nw_run_panel_level_set_tip(void)
{
  return "Its input is a surface: the fixed image (the first opened, or a label layer "
         "selected in the Layers page) as a binary mask, a signed distance (mm, negative "
         "inside) or a label volume (Label picks the label). A grey-level image is refused.";
}
