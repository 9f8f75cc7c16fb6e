/* affine_init.h — where affine registration starts: image centres, centres of mass and
 * principal axes (moments), and the start transforms tried at the coarsest level for large
 * misalignments. Host code shared by every back end. Any thread. */
#ifndef NW_AFFINE_INIT_H
#define NW_AFFINE_INIT_H

#include <glib.h>

#include "affine_transform.h"
#include "volume.h"

G_BEGIN_DECLS

typedef enum {
  NW_AFFINE_INIT_GEOMETRY, /* image centres onto each other */
  NW_AFFINE_INIT_MASS,     /* centres of mass onto each other */
  NW_AFFINE_INIT_MOMENTS,  /* centres of mass, and principal axes onto each other */
} NwAffineInit;

/* The world position (RAS mm) of the grid's middle, voxel ((n - 1) / 2 per axis). */
void nw_volume_centre_mm(const NwVolume *v, double centre_mm[3]);

/* Centre of mass (RAS mm) and the 3x3 covariance (mm², row-major) of the intensity above
 * the image's minimum (so a dark background weighs nothing), over the mask (>= 0.5) when
 * given. FALSE when no voxel has weight. */
gboolean nw_volume_moments(const NwVolume *v, const NwVolume *mask, double com_mm[3],
                           double cov[9]);

typedef struct {
  NwAffineInit init;
  int rotation_starts; /* n >= 2: add rotations by k·360°/n, k = 1..n-1, about each world axis
                        * (about z only in 2D) to every start; 0 or 1: none */
} NwAffineStartSpec;

/* The starts, the first one the plain initialisation: base (its kind, dim and centre, and
 * the scales and shears it carries) with rotation and translation set so that the chosen
 * centres (or moments) coincide. With moments, every sign choice of the principal axes that
 * is a rotation is a start (4 in 3D, 2 in 2D). Returns an array of NwTransform. */
GArray *nw_affine_starts(const NwVolume *fixed, const NwVolume *fixed_mask, const NwVolume *moving,
                         const NwVolume *moving_mask, const NwTransform *base,
                         const NwAffineStartSpec *spec);

G_END_DECLS

#endif
