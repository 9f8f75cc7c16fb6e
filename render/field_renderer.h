/* field_renderer.h — a displacement field on a 2D view, drawn on the GPU from the field
 * texture (NwGlVolume with nc = 3, voxel units of its own grid; volume.h):
 *  - a warped grid: the lines of a regular grid in the view plane, every k voxels of the
 *    field, each vertex moved by u in the vertex shader;
 *  - arrows every k voxels (the in-plane part of u);
 *  - heat maps: |u| in mm, or log det(I + grad u) with folded voxels (det <= 0) hatched.
 * Thread: the one with the GL context current. */
#ifndef NW_FIELD_RENDERER_H
#define NW_FIELD_RENDERER_H

#include "renderer.h"
#include "view_geometry.h"

G_BEGIN_DECLS

typedef enum { NW_FIELD_HEAT_MAGNITUDE, NW_FIELD_HEAT_LOG_JACOBIAN } NwFieldHeat;

/* Colour for folded voxels in log-Jacobian maps (hatched with black). */
extern const float nw_fold_color[4];

void nw_render_field_heat(NwRenderer *r, const double mvp[16], const float quad[12],
                          const NwGlVolume *field, NwFieldHeat kind, const NwLayerStyle *style);

/* The warped grid with a line every k_vox voxels of the field (k_vox >= 1), scale
 * multiplies u (1 = true size). */
void nw_render_field_grid(NwRenderer *r, const NwSliceGeometry *g, const NwGlVolume *field,
                          int k_vox, float scale, const float rgba[4]);

/* Arrows from every k_vox-th voxel centre of the slice; arrows shorter than min_mm are
 * not drawn. */
void nw_render_field_arrows(NwRenderer *r, const NwSliceGeometry *g, const NwGlVolume *field,
                            int k_vox, float scale, float min_mm, const float rgba[4]);

/* The world step (mm) between grid lines along world axis `axis` for k_vox voxels: the
 * spacing of the field's voxel axis that points most along it. Exposed for tests. */
double nw_field_grid_step_mm(const NwGlVolume *field, int axis, int k_vox);

G_END_DECLS

#endif
