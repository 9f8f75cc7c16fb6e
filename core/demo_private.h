/* demo_private.h — the pieces of the demo case (demo.h) kept in their own files: the
 * deformation (demo_deform.c) and the moving image's appearance (demo_appearance.c). */
#ifndef NW_DEMO_PRIVATE_H
#define NW_DEMO_PRIVATE_H

#include <glib.h>

#include "demo.h"
#include "volume.h"

G_BEGIN_DECLS

/* u (nc 3, voxels) = n_terms Gaussian-windowed plane waves drawn from seed, of wavelengths in
 * wavelength[0..1] times the grid's smallest extent, scaled to a peak of max_disp_vox. */
void nw_demo_wave_field(NwVolume *u, double max_disp_vox, guint32 seed, int n_terms,
                        const double wavelength[2]);
/* w with id + w = (id + u)^-1, by fixed-point iteration (fields of small gradient). */
NwVolume *nw_demo_invert_field(const NwVolume *u, GError **error);
/* The moving image's contrast, bias and noise as o asks (in place). */
void nw_demo_bias_and_noise(NwVolume *v, const NwDemoOptions *o);

G_END_DECLS

#endif
