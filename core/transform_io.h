/* transform_io.h — affine transform files other tools read and write:
 *
 *   ITK text (.txt, .tfm): "#Insight Transform File V1.0", one AffineTransform_double_3_3
 *     (2D: _2_2) with the matrix and translation as Parameters and the centre as
 *     FixedParameters, in ITK's LPS physical space. What antsApplyTransforms, ITK-SNAP,
 *     Slicer, SimpleITK and elastix's ITK reader take.
 *   ITK binary (.mat): the same two arrays as a MATLAB level-4 file (variables named
 *     "AffineTransform_double_3_3" and "fixed"), as ANTs writes them.
 *   FSL FLIRT (.mat, text, 4 rows of 4 numbers): the matrix from the moving image's FSL
 *     coordinates to the fixed image's (FLIRT's -in and -ref), FSL coordinates being voxel
 *     index times voxel size, with i reversed (nx - 1 - i) when the image's voxel-to-world
 *     determinant is positive. It needs both images to be read or written.
 *
 * In memory a transform is the 4x4 row-major map fixed world -> moving world in RAS mm
 * (affine_transform.h); conversions happen here. Readers take ITK's AffineTransform and
 * MatrixOffsetTransformBase (double or float, 2D or 3D), Euler2D/3D, Rigid2D, VersorRigid3D,
 * Similarity2D/3D and TranslationTransform, one transform per file. An ITK .mat and an FSL
 * .mat are told apart by content (binary or text). Writers write atomically into an output
 * set (atomic_file.h). Any thread. */
#ifndef NW_TRANSFORM_IO_H
#define NW_TRANSFORM_IO_H

#include <glib.h>

#include "atomic_file.h"
#include "volume.h"

G_BEGIN_DECLS

/* ITK text or binary by the name's ending (.mat: binary, else text). dim 2 writes a 2D
 * transform (the z row and column of m must be the identity's). centre_mm: ITK's centre
 * (the fixed image's), RAS mm. */
gboolean nw_transform_write_itk(NwOutputs *o, const char *path, const double m[16],
                                const double centre_mm[3], int dim, GError **error);
/* FLIRT's matrix for fixed (-ref) and moving (-in). */
gboolean nw_transform_write_fsl(NwOutputs *o, const char *path, const double m[16],
                                const NwVolume *fixed, const NwVolume *moving, GError **error);
/* The same matrix as text (4 lines), for the writer and tests. */
char *nw_transform_fsl_text(const double m[16], const NwVolume *fixed, const NwVolume *moving);

/* Any of the formats above into m (fixed world -> moving world, RAS). fixed and moving are
 * needed for an FSL matrix only (NULL otherwise: an FSL file is then an error that says so).
 * Errors name the file and the problem: unknown transform type, wrong parameter count,
 * several transforms, a truncated .mat. */
gboolean nw_transform_read(const char *path, const NwVolume *fixed, const NwVolume *moving,
                           double m[16], GError **error);

G_END_DECLS

#endif
