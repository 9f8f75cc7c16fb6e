/* nw_layer_readout.h — what the status bar says of a layer at a point: the value the layer
 * shows there, in the quantity it is drawn as (an image's intensity, a label, a field's |u|
 * in mm, or its log det J when it is drawn as the log-Jacobian). Main thread (the layer's
 * data belong to it). */
#ifndef NW_LAYER_READOUT_H
#define NW_LAYER_READOUT_H

#include "nw_layer.h"

G_BEGIN_DECLS

/* Appends "   NAME VALUE" for a visible layer with voxels at ras (RAS mm); nothing
 * otherwise. VALUE: "100" (images, "%.4g"), "37 Hippocampus_L" (labels, with the name from
 * the layer's label table when it has one), "|u| 2.89 mm" (fields drawn as
 * grid, arrows or magnitude), "log det J 0.123" or "det J -0.050 (folded)" (fields drawn as
 * the log-Jacobian, from central differences at the voxel under ras, as the views compute
 * it). */
void nw_layer_append_readout(NwLayer *l, const double ras[3], GString *out);

/* det(I + grad u) of a field (nc 3, voxel units) at voxel (i, j, k): central differences
 * one voxel apart, the border voxel standing in for its missing neighbour. */
double nw_field_det_at(const NwVolume *u, int i, int j, int k);

G_END_DECLS

#endif
