/* nw_label_table.h — names and colours of the labels of a label map, from the files other
 * tools ship them in:
 *   - MRIcron (Debian's mricron-data): NAME.nii.txt, one "INDEX NAME [CODE]" per line, and
 *     NAME.nii.lut, 768 bytes: the red, green and blue of indices 0..255, one plane each;
 *   - FreeSurfer: FreeSurferColorLUT.txt, "INDEX NAME R G B A" per line, # comments;
 *   - ITK-SNAP label descriptions: "IDX R G B A VIS MSH "NAME"" per line (A 0..1; VIS 0
 *     hides the label).
 * The format is told from the content. A table may hold names without colours (a MRIcron
 * text file alone) and colours without names (a .lut alone); tables merge. Labels it does
 * not colour keep the label map's default colours. Reference-counted; any thread (the
 * loader finds and reads tables on its worker), unchanged once handed to a layer. */
#ifndef NW_LABEL_TABLE_H
#define NW_LABEL_TABLE_H

#include <glib.h>

G_BEGIN_DECLS

typedef struct NwLabelTable NwLabelTable;

NwLabelTable *nw_label_table_new(void);
NwLabelTable *nw_label_table_ref(NwLabelTable *t);
void nw_label_table_unref(NwLabelTable *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(NwLabelTable, nw_label_table_unref)

/* Read path into t (its entries replace t's of the same index). Errors name the file and
 * the line. */
gboolean nw_label_table_load(NwLabelTable *t, const char *path, GError **error);
/* The files read, "; "-separated, for the layer list and messages. */
const char *nw_label_table_sources(NwLabelTable *t);

/* The label's name, or NULL. */
const char *nw_label_table_name(NwLabelTable *t, int label);
/* The label's colour (RGBA, alpha 0 for a hidden label); FALSE when the table has none. */
gboolean nw_label_table_color(NwLabelTable *t, int label, guint8 rgba[4]);
/* Largest index the table names or colours (-1 when empty). */
int nw_label_table_max_index(NwLabelTable *t);

/* The table beside a label image: PATH's MRIcron files (aal.nii.gz -> aal.nii.txt and
 * aal.nii.lut, or aal.txt / aal.lut), an ITK-SNAP description (aal.label, aal.txt), or a
 * FreeSurferColorLUT.txt in its folder (or $FREESURFER_HOME's, for FreeSurfer names such as
 * aseg.mgz, aparc+aseg); NULL when there is none or none can be read. */
NwLabelTable *nw_label_table_find_for(const char *image_path);

G_END_DECLS

#endif
